/*
 * main.c - the ppcc command line: argv to options, options to library
 * calls, diagnostics to stderr, output to a file that appears whole or not
 * at all.
 *
 * Output goes to a temporary file beside the target, which is renamed over
 * it only after every byte was written and flushed: a failed run, a full
 * disk or a signal leaves any previous file untouched.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ppcc.h"
#include "cli/cli.h"

typedef struct cli_options {
	const char *command;
	const char *input;
	const char *cluster;
	const char *output;
	ppcc_emit_options emit;
	int kind, stages, microbatches, chunks, group_size, tensor_parallel;
	int expert_parallel;
	int group_size_set;
	int quiet;
	long long max_actions; /* 0: PPCC_MAX_ACTIONS_DEFAULT */
	long long max_work;    /* 0: PPCC_MAX_WORK_DEFAULT */
	const char *partition; /* --partition, as given */
	double memory_limit;   /* --memory-limit, bytes per device; 0: none */
	int jobs;              /* --jobs; 0: one per processor online */
	int trainer;           /* 1 + --trainer's ppcc_trainer; 0: none */
	const char *precision; /* --precision's, or NULL */
	int refresh_fingerprint;
	const char *from_search; /* --from-search FILE.json */
	int rank;                /* --rank N; 0: not given */
	const char *model;       /* --model NAME; NULL: not given */
	const char *devices;     /* --devices COUNTxPRESET */
	const char *model_text;  /* the YAML they make; input names it */
	size_t model_text_len;
} cli_options;

/* The formats' names after "FMT:  ", in lines of at most 60 columns. */
static void usage_formats(FILE *f)
{
	int col = fprintf(f, "FMT: ");
	for (int i = 0; i < ppcc_n_formats; i++) {
		int w = (int)strlen(ppcc_formats[i].name) + 2;
		if (col + w > 60)
			col = fprintf(f, "\n     ");
		col += fprintf(f, " %s%s", ppcc_formats[i].name,
			       i + 1 < ppcc_n_formats ? "," : "\n");
	}
}

static void usage(FILE *f)
{
	char kinds[256], search_formats[256];
	ppcc_sched_kind_list(kinds, sizeof kinds, ", ");
	ppcc_format_list(search_formats, sizeof search_formats,
			 PPCC_FORMATS_SEARCH, "|", NULL);
	fputs("usage: ppcc plan FILE [--cluster FILE] [-s|--schedule KIND] [-p|--stages N]\n"
	      "                 [-m|--microbatches N] [-v|--chunks N] [-g|--group-size N]\n"
	      "                 [-t|--tensor-parallel N] [-e|--expert-parallel N]\n"
	      "                 [-f|--format FMT] [-o|--output FILE]\n"
	      "                 [--view timeline|deps] [--with-comms] [--standalone]\n"
	      "                 [--prefix NAME] [--max-actions N] [--max-work N]\n"
	      "                 [--partition N,N,...] [--memory-limit GIB] [--jobs N]\n"
	      "                 [--trainer megatron|torchtitan|deepspeed]\n"
	      "                 [--window START:END|step N|all]\n"
	      "       ppcc plan --model NAME --devices COUNTxPRESET [--precision bf16|fp8]\n"
	      "                 [options as above]\n"
	      "       ppcc plan --from-search FILE.json [--rank N] [-f FMT] [-o FILE]\n"
	      "                 [--max-actions N] [--max-work N] [--jobs N] [--window ...]\n"
	      "       ppcc check [--refresh-fingerprint] [-q|--quiet] FILE.json\n"
	      "       ppcc diagnose DIR [-s|--schedule FILE.json] [-f text|json] [-o FILE]\n"
	      "       ppcc search FILE [--cluster FILE] [--global-batch N|NK|NM] [--top K]\n", f);
	fprintf(f, "                   [-f|--format %s] [-o|--output FILE]\n",
		search_formats);
	fputs("                   [--fix KEY=VALUE ...] [--memory-limit GIB] [--allow-idle]\n"
	      "                   [--exhaustive] [--max-actions N] [--max-work N]\n"
	      "                   [--time-limit S] [--compare FILE] [--jobs N]\n"
	      "                   [--trainer megatron|torchtitan|deepspeed] [--headroom GIB|PCT%]\n"
	      "       ppcc search --model NAME --devices COUNTxPRESET [--precision bf16|fp8]\n"
	      "                   [options as above]\n"
	      "       ppcc devices [-f|--format text|json] [-h|--help]\n"
	      "       ppcc models [-f|--format text|json] [-h|--help]\n"
	      "       ppcc -h|--help | -V|--version\n"
	      "\n", f);
	fprintf(f, "KIND: %s\n", kinds);
	usage_formats(f);
	fputs("FILE and -o accept - for stdin and stdout.  --model and --devices\n"
	      "(64xh100) name presets (ppcc models, ppcc devices) in place of FILE;\n"
	      "a global batch with K or M counts tokens (4M = 2^22).\n"
	      "See ppcc(1) and ppcc(5).\n", f);
}

/* Standard output flushed, or its failure reported (a closed pipe: "Broken
 * pipe", not a silent exit). */
static int stdout_done(void)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return EXIT_OK;
	ppcc_cli_cannot_write("-", errno ? errno : EIO);
	return EXIT_OUTPUT;
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("ppcc: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'ppcc --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

static int parse_count(const char *s, int *out)
{
	long long v;
	if (ppcc_cli_count(s, 1, INT_MAX, &v) < 0)
		return -1;
	*out = (int)v;
	return 0;
}

static int exit_code(int status)
{
	switch (status) {
	case PPCC_OK: return EXIT_OK;
	case PPCC_EINPUT:
	case PPCC_EINFEASIBLE: return EXIT_INPUT;
	case PPCC_EIO: return EXIT_OUTPUT;
	default: return EXIT_INTERNAL;
	}
}

static int report_status(int err, ppcc_diag *d)
{
	if (err == PPCC_ENOMEM)
		ppcc_error(d, NULL, "out of memory");
	else if (err == PPCC_EINTERNAL && d->errors == 0)
		ppcc_error(d, NULL, "internal error");
	return exit_code(err);
}

/* An emitter's "cannot write ..." names no file: the output's path is
 * its place; its other messages pass as they are. */
typedef struct at_output {
	ppcc_diag *d;
	const char *path;
} at_output;

static void output_diag(ppcc_severity sev, const ppcc_loc *loc,
			const char *msg, void *user)
{
	const at_output *o = user;
	ppcc_loc here = {strcmp(o->path, "-") == 0 ? "<stdout>" : o->path, 0, 0};
	if (sev == PPCC_SEV_ERROR && !(loc && loc->file) &&
	    strncmp(msg, "cannot write", 12) == 0)
		loc = &here;
	o->d->fn(sev, loc, msg, o->d->user);
}

static int write_plan(const cli_options *o, const ppcc_plan *plan, ppcc_diag *d)
{
	const char *path = o->output ? o->output : "-";
	const ppcc_config *c = plan->config;
	/* --from-search names its model and cluster files in the JSON */
	if (o->from_search && c &&
	    ((c->path && ppcc_cli_same_file(path, c->path)) ||
	     (c->cluster_path && ppcc_cli_same_file(path, c->cluster_path))))
		return usage_error("the output '%s' is an input file", path);
	ppcc_cli_output out;
	if (ppcc_cli_output_open(&out, path) < 0) {
		ppcc_cli_cannot_write(path, errno);
		return EXIT_OUTPUT;
	}
	at_output ao = {d, path};
	ppcc_diag ed = {.fn = output_diag, .user = &ao};
	int err = ppcc_format_of(o->emit.format)->emit(out.f, plan, &o->emit, &ed);
	d->errors += ed.errors;
	d->warnings += ed.warnings;
	int write_errno = err == PPCC_EIO ? errno : 0;
	errno = 0;
	if ((ppcc_cli_output_close(&out, err == 0) < 0 && err == 0) || err == PPCC_EIO) {
		if (err != PPCC_EIO || ed.errors == 0)
			ppcc_cli_cannot_write(path, write_errno ? write_errno
					   : errno ? errno : EIO);
		return EXIT_OUTPUT;
	}
	if (err)
		return report_status(err, d);
	ppcc_cli_report_export(ppcc_format_of(o->emit.format), plan);
	return EXIT_OK;
}

static int cmd_plan(const cli_options *o)
{
	ppcc_diag d = {.fn = ppcc_cli_print_diag};
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan_request r = {
		.model = o->input, .cluster = o->cluster,
		.model_text = o->model_text,
		.model_text_len = o->model_text_len,
		.format = o->emit.format, .kind = o->kind, .stages = o->stages,
		.microbatches = o->microbatches, .chunks = o->chunks,
		.tensor_parallel = o->tensor_parallel,
		.expert_parallel = o->expert_parallel,
		.group_size = o->group_size, .group_size_set = o->group_size_set,
		.partition = o->partition, .memory_limit = o->memory_limit,
		.threads = o->jobs, .budget = {o->max_actions, o->max_work},
		.from_search = o->from_search, .rank = o->rank,
		.trainer = o->trainer,
	};
	ppcc_plan plan;
	int rc, err;

	if (!a) {
		fputs("ppcc: error: out of memory\n", stderr);
		return EXIT_INTERNAL;
	}
	if ((err = ppcc_compile_plan(&plan, a, &r, &d)) < 0)
		rc = report_status(err, &d);
	else
		rc = write_plan(o, &plan, &d);
	ppcc_arena_free(a);
	return rc;
}

/* Rewrites the one "fingerprint": "<16 hex digits>" of the JSON text at
 * path with fp, through a temporary file renamed over it.  The value keeps
 * its length, so nothing else of the file moves. */
static int rewrite_fingerprint(const char *path, uint64_t fp, ppcc_diag *d)
{
	ppcc_loc loc = {path, 0, 0};
	FILE *in = fopen(path, "rb");
	char *text = NULL;
	size_t len = 0, cap = 0;
	if (!in) {
		ppcc_error(d, &loc, "cannot read: %s", strerror(errno));
		return EXIT_INPUT;
	}
	for (;;) {
		if (len + 65536 > cap) {
			char *t = ppcc_realloc(text, cap = 2 * cap + 65536);
			if (!t) {
				ppcc_free(text);
				fclose(in);
				ppcc_error(d, NULL, "out of memory");
				return EXIT_INTERNAL;
			}
			text = t;
		}
		size_t k = fread(text + len, 1, cap - len - 1, in);
		len += k;
		if (k == 0)
			break;
	}
	int read_error = ferror(in);
	fclose(in);
	text[len] = '\0';
	static const char key[] = "\"fingerprint\"";
	char *at = NULL, *value = NULL;
	int found = 0;
	for (char *c = text; (c = strstr(c, key)) != NULL; c += sizeof key - 1) {
		found++;
		at = c;
	}
	if (found == 1) {
		char *c = at + sizeof key - 1;
		c += strspn(c, " \t\r\n");
		if (*c == ':') {
			c++;
			c += strspn(c, " \t\r\n");
			if (*c == '"' && strspn(c + 1, "0123456789abcdef") == 16 &&
			    c[17] == '"')
				value = c + 1;
		}
	}
	if (read_error || !value) {
		ppcc_free(text);
		ppcc_error(d, &loc, "not refreshed: the file does not hold exactly "
			   "one \"fingerprint\": \"<16 hexadecimal digits>\"; "
			   "remove the field instead");
		return EXIT_INPUT;
	}
	char hex[17];
	snprintf(hex, sizeof hex, "%016" PRIx64, fp);
	memcpy(value, hex, 16);
	ppcc_cli_output out;
	if (ppcc_cli_output_open(&out, path) < 0) {
		ppcc_free(text);
		ppcc_cli_cannot_write(path, errno);
		return EXIT_OUTPUT;
	}
	int ok = fwrite(text, 1, len, out.f) == len;
	ppcc_free(text);
	if (ppcc_cli_output_close(&out, ok) < 0 || !ok) {
		ppcc_cli_cannot_write(path, errno ? errno : EIO);
		return EXIT_OUTPUT;
	}
	return EXIT_OK;
}

static int cmd_check(const cli_options *o)
{
	ppcc_diag d = {.fn = ppcc_cli_print_diag};
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan plan;
	int rc, err;

	if (!a) {
		fputs("ppcc: error: out of memory\n", stderr);
		return EXIT_INTERNAL;
	}
	const char *name = strcmp(o->input, "-") == 0 ? "<stdin>" : o->input;
	if (o->refresh_fingerprint && strcmp(o->input, "-") == 0) {
		ppcc_arena_free(a);
		return usage_error("%s", "--refresh-fingerprint needs a file, not -");
	}
	if ((err = ppcc_read_json(&plan, a, o->input, &d)) < 0) {
		rc = report_status(err, &d);
		goto out;
	}
	const ppcc_schedule *s = &plan.best.schedule;
	uint64_t hash = ppcc_schedule_fingerprint(s);
	int stale = hash != s->fingerprint;
	int errors = d.errors;
	/* refreshing: every check but the fingerprint's */
	ppcc_schedule probe = *s;
	if (o->refresh_fingerprint)
		probe.fingerprint = hash;
	err = ppcc_schedule_validate_hashed(&probe, hash, &d, name, 50);
	int others = d.errors - errors - (stale && !o->refresh_fingerprint);
	if (o->refresh_fingerprint && err != PPCC_ENOMEM) {
		ppcc_loc loc = {name, 0, 0};
		if (others > 0) {
			ppcc_error(&d, &loc, "fingerprint not refreshed: the schedule "
				   "has %d other problem%s; fix %s first", others,
				   others == 1 ? "" : "s", others == 1 ? "it" : "them");
			rc = EXIT_INPUT;
			goto out;
		}
		if (stale && (rc = rewrite_fingerprint(o->input, hash, &d)) != EXIT_OK)
			goto out;
		if (!o->quiet) {
			ppcc_fput_visible(stdout, name);
			printf(": fingerprint %s %016" PRIx64 "\n",
			       stale ? "refreshed to" : "already up to date:", hash);
		}
		rc = stdout_done();
		goto out;
	}
	if (stale && err != PPCC_ENOMEM) {
		ppcc_loc loc = {name, 0, 0};
		ppcc_note(&d, &loc, "if the schedule was edited on purpose, %s"
			  "run 'ppcc check --refresh-fingerprint %s' to write its "
			  "fingerprint, or remove the \"fingerprint\" field",
			  others > 0 ? "fix the problems above, then " : "", name);
	}
	if (err >= 0)
		err = ppcc_schedule_order_check(s, &d, name, 50);
	if (err < 0) {
		rc = report_status(err, &d);
		goto out;
	}
	int unordered = err; /* rank pairs out of order, warned about */
	if (!o->quiet) {
		long long n = 0;
		for (int r = 0; r < s->n_ranks; r++)
			n += s->ranks[r].n_actions;
		ppcc_fput_visible(stdout, name);
		printf(": valid %s schedule: %d ranks, %d stages, %d microbatches, "
		       "%lld actions%s\n", ppcc_schedule_kind_name(s->kind),
		       s->n_ranks, s->n_stages, s->n_microbatches, n,
		       unordered ? "; not runnable on order-matching transports "
				   "(nccl, grouped)" : "");
	}
	rc = stdout_done();
out:
	ppcc_arena_free(a);
	return rc;
}

enum { OPT_CLUSTER = 256, OPT_VIEW, OPT_WITH_COMMS, OPT_STANDALONE, OPT_PREFIX,
       OPT_MAX_ACTIONS, OPT_MAX_WORK, OPT_PARTITION, OPT_REFRESH_FINGERPRINT,
       OPT_MEMORY_LIMIT, OPT_JOBS, OPT_FROM_SEARCH, OPT_RANK, OPT_MODEL,
       OPT_DEVICES, OPT_TRAINER, OPT_WINDOW, OPT_PRECISION };

static const struct option longopts[] = {
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{"cluster", required_argument, NULL, OPT_CLUSTER},
	{"schedule", required_argument, NULL, 's'},
	{"stages", required_argument, NULL, 'p'},
	{"microbatches", required_argument, NULL, 'm'},
	{"chunks", required_argument, NULL, 'v'},
	{"group-size", required_argument, NULL, 'g'},
	{"tensor-parallel", required_argument, NULL, 't'},
	{"expert-parallel", required_argument, NULL, 'e'},
	{"format", required_argument, NULL, 'f'},
	{"output", required_argument, NULL, 'o'},
	{"quiet", no_argument, NULL, 'q'},
	{"view", required_argument, NULL, OPT_VIEW},
	{"with-comms", no_argument, NULL, OPT_WITH_COMMS},
	{"standalone", no_argument, NULL, OPT_STANDALONE},
	{"prefix", required_argument, NULL, OPT_PREFIX},
	{"max-actions", required_argument, NULL, OPT_MAX_ACTIONS},
	{"max-work", required_argument, NULL, OPT_MAX_WORK},
	{"partition", required_argument, NULL, OPT_PARTITION},
	{"memory-limit", required_argument, NULL, OPT_MEMORY_LIMIT},
	{"jobs", required_argument, NULL, OPT_JOBS},
	{"refresh-fingerprint", no_argument, NULL, OPT_REFRESH_FINGERPRINT},
	{"from-search", required_argument, NULL, OPT_FROM_SEARCH},
	{"rank", required_argument, NULL, OPT_RANK},
	{"model", required_argument, NULL, OPT_MODEL},
	{"devices", required_argument, NULL, OPT_DEVICES},
	{"trainer", required_argument, NULL, OPT_TRAINER},
	{"precision", required_argument, NULL, OPT_PRECISION},
	{"window", required_argument, NULL, OPT_WINDOW},
	{NULL, 0, NULL, 0},
};

/* The long name of option c, for messages ("--stages" for -p too). */
static const char *long_name(int c)
{
	for (const struct option *lo = longopts; lo->name; lo++)
		if (lo->val == c)
			return lo->name;
	return "?";
}

static int count_error(int c, const char *arg, long long max)
{
	char fmt[128];
	/* a count too large for its option says so; the names hold no '%' */
	size_t n = strlen(arg);
	if (n > 0 && strspn(arg, "0123456789") == n && arg[0] != '0')
		snprintf(fmt, sizeof fmt, "--%s: '%%s' is more than %lld",
			 long_name(c), max);
	else
		snprintf(fmt, sizeof fmt, "--%s: expected a positive integer, "
			 "got '%%s'", long_name(c));
	return usage_error(fmt, arg);
}

/* A diagnostic kept for a usage error, in user's KEPT_MAX bytes. */
#define KEPT_MAX 512
static void keep_message(ppcc_severity sev, const ppcc_loc *loc,
			 const char *msg, void *user)
{
	(void)sev, (void)loc;
	snprintf(user, KEPT_MAX, "%s", msg);
}

/* --window all, START:END (ms, START < END) or step N (one argument,
 * or "step" and N as two: main joins them); -1 to go on, or the exit
 * code of a usage error. */
static int window_option(ppcc_window *w, const char *arg)
{
	const char *colon = strchr(arg, ':');
	char start[64];
	long long n;
	if (strcmp(arg, "all") == 0) {
		w->kind = PPCC_WINDOW_ALL;
		return -1;
	}
	if (strncmp(arg, "step ", 5) == 0) {
		if (ppcc_cli_count(arg + 5, 0, INT_MAX, &n) < 0)
			return usage_error("--window step N: expected a "
					   "microbatch (0, 1, ...), got '%s'",
					   arg);
		w->kind = PPCC_WINDOW_STEP;
		w->step = (int)n;
		return -1;
	}
	size_t len = colon ? (size_t)(colon - arg) : 0;
	if (!colon || len == 0 || len >= sizeof start)
		return usage_error("--window: expected START:END in ms, step "
				   "N or all, got '%s'", arg);
	memcpy(start, arg, len);
	start[len] = '\0';
	if (ppcc_cli_real(start, 0, 1e12, &w->start_ms) < 0 ||
	    ppcc_cli_real(colon + 1, 0, 1e12, &w->end_ms) < 0)
		return usage_error("--window: START and END are times in ms "
				   "(numbers from 0), got '%s'", arg);
	if (!(w->end_ms > w->start_ms))
		return usage_error("--window: END must be after START, got "
				   "'%s'", arg);
	w->kind = PPCC_WINDOW_SPAN;
	return -1;
}

/* Applies option c (opt: as given, for messages); returns -1 to go on,
 * or the exit code. */
static int apply_option(cli_options *o, int c, const char *arg,
			const char *opt)
{
	int *count = NULL;
	switch (c) {
	case 'h':
		usage(stdout);
		return EXIT_OK;
	case 'V':
		puts("ppcc " PPCC_VERSION_STRING);
		return EXIT_OK;
	case OPT_CLUSTER: o->cluster = arg; break;
	case 's':
		if ((o->kind = ppcc_schedule_kind_parse(arg)) < 0) {
			char kinds[256], fmt[300];
			ppcc_sched_kind_list(kinds, sizeof kinds, " or ");
			/* the names hold no '%' */
			snprintf(fmt, sizeof fmt, "unknown schedule '%%s' (%s)", kinds);
			return usage_error(fmt, arg);
		}
		break;
	case 'p': count = &o->stages; break;
	case 'm': count = &o->microbatches; break;
	case 'v': count = &o->chunks; break;
	case 'g':
		/* 0 asks for the default group, the stages */
		if (strcmp(arg, "0") == 0) {
			o->group_size = 0;
			o->group_size_set = 1;
			return -1;
		}
		count = &o->group_size;
		o->group_size_set = 1;
		break;
	case 't': count = &o->tensor_parallel; break;
	case 'e': count = &o->expert_parallel; break;
	case 'f': {
		const ppcc_format_info *fi = ppcc_format_named(arg);
		if (!fi) {
			char names[256], fmt[300];
			ppcc_format_list(names, sizeof names, PPCC_FORMATS_ALL,
					 ", ", " or ");
			/* the names hold no '%' */
			snprintf(fmt, sizeof fmt, "unknown format '%%s' (%s)", names);
			return usage_error(fmt, arg);
		}
		o->emit.format = fi->format;
		break;
	}
	case 'o': o->output = arg; break;
	case 'q': o->quiet = 1; break;
	case OPT_VIEW:
		if (strcmp(arg, "deps") == 0)
			o->emit.view_deps = 1;
		else if (strcmp(arg, "timeline") != 0)
			return usage_error("unknown view '%s' (timeline or deps)", arg);
		break;
	case OPT_WITH_COMMS: o->emit.with_comms = 1; break;
	case OPT_STANDALONE: o->emit.standalone = 1; break;
	case OPT_PREFIX: {
		char why[KEPT_MAX] = "";
		ppcc_diag keep = {.fn = keep_message, .user = why};
		if (ppcc_emit_header_prefix_check(arg, &keep) < 0)
			return usage_error("--prefix: %s", why);
		o->emit.prefix = arg;
		break;
	}
	case OPT_MAX_ACTIONS: {
		long long v;
		if (ppcc_cli_count(arg, 1, LLONG_MAX, &v) < 0)
			return count_error(c, arg, LLONG_MAX);
		o->max_actions = v;
		break;
	}
	case OPT_MAX_WORK: {
		long long v;
		if (ppcc_cli_count(arg, 1, LLONG_MAX, &v) < 0)
			return count_error(c, arg, LLONG_MAX);
		o->max_work = v;
		break;
	}
	case OPT_PARTITION: o->partition = arg; break;
	case OPT_MEMORY_LIMIT: {
		double g;
		if (ppcc_cli_real(arg, 0, 1048576, &g) < 0 || !(g > 0))
			return usage_error("--memory-limit: expected GiB per device "
					   "(a number > 0, at most 1048576: 1 PiB), "
					   "got '%s'", arg);
		o->memory_limit = g * 1024.0 * 1024.0 * 1024.0;
		break;
	}
	case OPT_JOBS: {
		long long v;
		if (ppcc_cli_count(arg, 1, 64, &v) < 0)
			return usage_error("--jobs: '%s' is not a count of 1 to 64", arg);
		o->jobs = (int)v;
		break;
	}
	case OPT_REFRESH_FINGERPRINT: o->refresh_fingerprint = 1; break;
	case OPT_WINDOW: return window_option(&o->emit.window, arg);
	case OPT_FROM_SEARCH:
		if (!arg[0])
			return usage_error("%s", "--from-search: empty path");
		o->from_search = arg;
		break;
	case OPT_RANK: count = &o->rank; break;
	case OPT_MODEL: o->model = arg; break;
	case OPT_DEVICES: o->devices = arg; break;
	case OPT_PRECISION: o->precision = arg; break;
	case OPT_TRAINER: {
		int t = ppcc_trainer_named(arg);
		if (t < 0)
			return usage_error("--trainer: expected megatron, "
					   "torchtitan or deepspeed, got '%s'",
					   arg);
		o->trainer = t + 1;
		break;
	}
	case ':':
		return usage_error("option '%s' needs a value", opt);
	default:
		return usage_error("unknown option '%s'", opt);
	}
	if (count && parse_count(arg, count) < 0)
		return count_error(c, arg, INT_MAX);
	return -1;
}

/* ppcc plan --from-search: the search's entry is planned as the search
 * planned it, so what would change it (an input file, a setting of the
 * pipeline or the devices) is a usage error naming both; what chooses
 * the output or bounds the work is taken.  Then the plan, or the exit
 * code of an error. */
static int cmd_plan_from_search(cli_options *o, int n_files, char **files)
{
	char msg[200];
	const char *opt = NULL;
	if (strcmp(o->command, "plan") != 0)
		return usage_error("%s: --from-search and --rank are ppcc plan's "
				   "options", o->command);
	if (!o->from_search)
		return usage_error("%s", "--rank needs --from-search FILE.json");
	if (n_files > 0) {
		fputs("ppcc: --from-search '", stderr);
		ppcc_fput_visible(stderr, o->from_search);
		fputs("' and FILE '", stderr);
		ppcc_fput_visible(stderr, files[0]);
		fputs("' both name what to plan; give one\n"
		      "Try 'ppcc --help' for more information.\n", stderr);
		return EXIT_USAGE;
	}
	if (o->cluster)
		opt = "--cluster";
	else if (o->kind >= 0)
		opt = "--schedule";
	else if (o->stages)
		opt = "--stages";
	else if (o->microbatches)
		opt = "--microbatches";
	else if (o->chunks)
		opt = "--chunks";
	else if (o->group_size_set)
		opt = "--group-size";
	else if (o->tensor_parallel)
		opt = "--tensor-parallel";
	else if (o->expert_parallel)
		opt = "--expert-parallel";
	else if (o->partition)
		opt = "--partition";
	else if (o->memory_limit > 0)
		opt = "--memory-limit";
	else if (o->trainer)
		opt = "--trainer";
	if (opt) {
		snprintf(msg, sizeof msg, "--from-search and %s contradict: %s; "
			 "plan it as searched, or plan the model file with %%s",
			 opt, strcmp(opt, "--cluster") == 0
			 ? "the search's JSON names the files it read"
			 : strcmp(opt, "--memory-limit") == 0
			 ? "the search's JSON holds the memory it searched with"
			 : strcmp(opt, "--trainer") == 0
			 ? "the search's model file names its trainer"
			 : "the search's entry sets the pipeline");
		return usage_error(msg, opt);
	}
	if (o->output && o->output[0] == '\0')
		return usage_error("%s", "empty output path");
	if (o->output && ppcc_cli_same_file(o->output, o->from_search))
		return usage_error("the output '%s' is an input file", o->output);
	return cmd_plan(o);
}

/* "--window step N" as two arguments: takes N from argv and applies
 * "step N"; -2 when done, -1 for any other option (or N given in the
 * same argument), or the exit code of a usage error. */
static int window_step(cli_options *o, int c, int argc, char **argv)
{
	if (c != OPT_WINDOW || strcmp(optarg, "step") != 0)
		return -1;
	if (optind >= argc)
		return usage_error("%s", "--window step: expected a microbatch "
				   "N after it");
	char joined[64];
	snprintf(joined, sizeof joined, "step %s", argv[optind++]);
	int rc = window_option(&o->emit.window, joined);
	return rc >= 0 ? rc : -2;
}

int main(int argc, char **argv)
{
	cli_options o = {.kind = -1, .emit = {.format = PPCC_FMT_TEXT}};
	int c, rc;

	/* A reader that goes away (ppcc plan ... | head) makes the next write
	 * fail with EPIPE, reported as any failed write (exit 3), instead of
	 * a silent death by SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);

	/* jansson's allocator is process-wide, so the program, not the
	 * library, routes it through ppcc_malloc (and PPCC_FAIL_ALLOC). */
	json_set_alloc_funcs(ppcc_malloc, ppcc_free);
	if (argc > 1 && strcmp(argv[1], "diagnose") == 0)
		return ppcc_cli_diagnose(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "search") == 0)
		return ppcc_cli_search(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "devices") == 0)
		return ppcc_cli_devices(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "models") == 0)
		return ppcc_cli_models(argc - 1, argv + 1);

	/* Options may come before the command and among its arguments. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:hVs:p:m:v:g:t:e:f:o:q", longopts,
				NULL)) != -1) {
		if ((rc = window_step(&o, c, argc, argv)) == -2)
			continue;
		if (rc >= 0 ||
		    (rc = apply_option(&o, c, optarg, argv[optind - 1])) >= 0)
			return rc;
	}
	if (optind >= argc)
		return usage_error("%s", "missing command (plan, check, search, "
				   "diagnose, devices or models)");
	o.command = argv[optind];
	if (strcmp(o.command, "plan") != 0 && strcmp(o.command, "check") != 0)
		return usage_error("unknown command '%s' (plan, check, search, "
				   "diagnose, devices or models)", o.command);
	char **args = argv + optind;
	int nargs = argc - optind;
	optind = 0; /* 0: glibc re-reads the option string (no "+" now) */
	while ((c = getopt_long(nargs, args, ":hVs:p:m:v:g:t:e:f:o:q", longopts,
				NULL)) != -1) {
		if ((rc = window_step(&o, c, nargs, args)) == -2)
			continue;
		if (rc >= 0 ||
		    (rc = apply_option(&o, c, optarg, args[optind - 1])) >= 0)
			return rc;
	}
	if (o.emit.window.kind != PPCC_WINDOW_DEFAULT &&
	    (o.emit.view_deps || ppcc_format_of(o.emit.format)->emit !=
				 ppcc_emit_dot))
		return usage_error("%s", "--window applies to the timeline: "
				   "-f dot, svg or png without --view deps");
	if ((o.from_search || o.rank) && (o.model || o.devices ||
					  o.precision))
		return usage_error("%s", "--from-search and --model, --devices "
				   "or --precision both name what to plan; "
				   "give one");
	if (o.precision && !o.model)
		return ppcc_cli_preset_yaml(NULL, 0, NULL, o.devices,
					    o.precision);
	if (o.from_search || o.rank)
		return cmd_plan_from_search(&o, nargs - optind, args + optind);
	static char yaml[512]; /* read-only once built */
	if (o.model || o.devices) {
		if (strcmp(o.command, "plan") != 0)
			return usage_error("%s: --model and --devices are ppcc "
					   "plan's and ppcc search's options",
					   o.command);
		if (optind < nargs)
			return usage_error("--model and --devices build the "
					   "input; FILE '%s' gives it too: name "
					   "the presets in the file instead "
					   "(transformer: {preset: NAME}, "
					   "cluster.device: NAME; ppcc(5))",
					   args[optind]);
		if (o.cluster)
			return usage_error("--cluster '%s' and --devices both "
					   "give the cluster; give one", o.cluster);
		if ((rc = ppcc_cli_preset_yaml(yaml, sizeof yaml, o.model,
					       o.devices, o.precision)) != 0)
			return rc;
		o.input = PPCC_COMMAND_LINE;
		o.model_text = yaml;
		o.model_text_len = strlen(yaml);
	} else if (optind >= nargs) {
		return usage_error("%s: missing FILE", o.command);
	} else {
		o.input = args[optind++];
	}
	if (optind < nargs)
		return usage_error("unexpected argument '%s'", args[optind]);
	if (o.output && o.output[0] == '\0')
		return usage_error("%s", "empty output path");
	if (o.output && !o.model_text && (ppcc_cli_same_file(o.output, o.input) ||
			 (o.cluster && ppcc_cli_same_file(o.output, o.cluster))))
		return usage_error("the output '%s' is an input file", o.output);
	if (strcmp(o.command, "check") == 0)
		return cmd_check(&o);
	return cmd_plan(&o);
}
