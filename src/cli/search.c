/*
 * search.c - the `ppcc search` command: argv to options, the
 * library's ppcc_search (src/search/search.c), then the ranking, why the winner
 * wins, and its plan; or the ranking as JSON; or the winner in a
 * trainer's settings (emit/trainers.c).  With --compare, the file's
 * configurations (load.c reads them) judged beside the search's own, each
 * with its rank among them.
 *
 *   ppcc search FILE [--cluster FILE] [--global-batch N|NK|NM] [--top K]
 *   ppcc search --model NAME --devices COUNTxPRESET [--global-batch ...] ...
 *               [-f text|json|megatron|megatron-bridge|torchtitan|torchtitan-toml|
 *                   deepspeed] [-o FILE]
 *               [--fix KEY=VALUE ...] [--memory-limit GIB]
 *               [--headroom GIB|PCT%] [--allow-idle]
 *               [--exhaustive] [--compare FILE] [--jobs N]
 *               [--max-actions N] [--max-work N] [--time-limit S]
 *
 * --model and --devices build the input from the catalogues' presets
 * (presets.c) in place of FILE; a global batch with K or M counts tokens.
 * Configurations tie when their iterations differ by less than the
 * devices' tie band (ppcc_device_tie_band); the text prints times to the
 * digits that band supports (JSON: every digit).  --headroom is the
 * memory a configuration must leave free beyond the reserve.  On a
 * terminal's standard error, a progress line from the search's callback
 * (show_progress), erased before anything else is written there.
 * The output is composed in memory and written only when complete.  Exit
 * codes as ppcc(1): 0, 1 bad input or nothing fits, 2 usage, 3 cannot
 * write, 4 internal.
 */
#define _GNU_SOURCE /* realpath */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/json_write.h"
#include "ppcc.h"
#include "cli/cli.h"

static int sr_usage(const char *msg, const char *arg)
{
	fputs("ppcc: ", stderr);
	fprintf(stderr, msg, arg);
	fputs("\nTry 'ppcc --help' for more information.\n", stderr);
	return 2;
}

static int sr_count(const char *s, long *out)
{
	long long v;
	if (ppcc_cli_count(s, 1, 1L << 30, &v) < 0)
		return -1;
	*out = (long)v;
	return 0;
}

static const char *const recompute_names[] = {"none", "selective", "full"};

/* One --fix KEY=VALUE into *fx: 0; -1 when it is not one; -2 when the
 * dimension is already fixed to another value, *was then that one as
 * KEY=VALUE.  The same value twice is taken. */
static int parse_fix(ppcc_search_fix *fx, const char *arg, char *was,
		     size_t was_size)
{
	const char *eq = strchr(arg, '=');
	if (!eq)
		return -1;
	size_t k = (size_t)(eq - arg);
	const char *val = eq + 1;
	long n = 0;
	int *slot, unset = 0, v;
#define KEY(name) (k == strlen(name) && strncmp(arg, name, k) == 0)
	if (KEY("schedule")) {
		if ((v = ppcc_schedule_kind_parse(val)) < 0)
			return -1;
		slot = &fx->kind, unset = -1;
	} else if (KEY("recompute")) {
		for (v = 0; v < 3 && strcmp(val, recompute_names[v]) != 0; v++)
			;
		if (v == 3)
			return -1;
		slot = &fx->recompute, unset = -1;
	} else if (KEY("zero")) {
		if (strlen(val) != 1 || val[0] < '0' || val[0] > '3')
			return -1;
		v = val[0] - '0';
		slot = &fx->zero, unset = -1;
	} else {
		if (sr_count(val, &n) < 0)
			return -1;
		v = (int)n;
		if (KEY("tensor_parallel"))
			slot = &fx->tensor_parallel;
		else if (KEY("stages"))
			slot = &fx->stages;
		else if (KEY("data_parallel"))
			slot = &fx->data_parallel;
		else if (KEY("context_parallel"))
			slot = &fx->context_parallel;
		else if (KEY("chunks"))
			slot = &fx->chunks;
		else if (KEY("micro_batch_size"))
			slot = &fx->micro_batch_size;
		else if (KEY("expert_parallel"))
			slot = &fx->expert_parallel;
		else if (KEY("expert_tensor_parallel"))
			slot = &fx->expert_tensor_parallel;
		else
			return -1;
	}
	if (*slot != unset && *slot != v) {
		if (KEY("schedule"))
			snprintf(was, was_size, "schedule=%s",
				 ppcc_schedule_kind_name(*slot));
		else if (KEY("recompute"))
			snprintf(was, was_size, "recompute=%s",
				 recompute_names[*slot]);
		else
			snprintf(was, was_size, "%.*s=%d", (int)k, arg, *slot);
		return -2;
	}
#undef KEY
	*slot = v;
	return 0;
}

static double gib(double b)
{
	return b / (1024.0 * 1024.0 * 1024.0);
}

/* x to the digits a relative uncertainty of band supports: its last
 * digit at most a tenth of band x (3 or 4 significant figures for a
 * band of a few percent), in width columns; one decimal when band is
 * 0 (ppcc search always has one), none for 0. */
static void put_sig(FILE *f, int width, double x, double band)
{
	int dec = x == 0 ? 0 : 1;
	if (band > 0 && x > 0 && isfinite(x)) {
		int k = (int)floor(log10(band * x / 10));
		if (k > 0) {
			double unit = pow(10, k);
			x = round(x / unit) * unit;
		}
		dec = k < 0 ? -k : 0;
	}
	fprintf(f, "%*.*f", width, dec, x);
}

/* What differs between the winner and another entry, as "p 8, v 2". */
static void differences(char *buf, size_t size, const ppcc_search_entry *w,
			const ppcc_search_entry *e)
{
	size_t at = 0;
	buf[0] = '\0';
#define DIFF(cond, ...)                                                     \
	if (cond && at < size) {                                            \
		at += (size_t)snprintf(buf + at, size - at, "%s", at ? ", " : ""); \
		if (at < size)                                              \
			at += (size_t)snprintf(buf + at, size - at, __VA_ARGS__); \
	}
	DIFF(e->t != w->t, "t %d", e->t)
	DIFF(e->p != w->p, "p %d", e->p)
	DIFF(e->d != w->d, "d %d", e->d)
	DIFF(e->cp != w->cp, "cp %d", e->cp)
	DIFF(e->ep != w->ep, "ep %d", e->ep)
	DIFF(e->etp != w->etp, "etp %d", e->etp)
	DIFF(e->v != w->v, "v %d", e->v)
	DIFF(e->b != w->b, "b %d", e->b)
	DIFF(e->recompute != w->recompute, "recompute %s",
	     recompute_names[e->recompute])
	DIFF(e->zero != w->zero, "ZeRO-%d", e->zero)
	DIFF(e->kind != w->kind, "%s", ppcc_schedule_kind_name(e->kind))
#undef DIFF
	if (!at)
		snprintf(buf, size, "the same settings");
}

static void family_label(char *buf, size_t size, int dim, int value)
{
	switch (dim) {
	case PPCC_DIM_T: snprintf(buf, size, "t %d", value); break;
	case PPCC_DIM_P: snprintf(buf, size, "p %d", value); break;
	case PPCC_DIM_CP: snprintf(buf, size, "cp %d", value); break;
	case PPCC_DIM_V: snprintf(buf, size, "v %d", value); break;
	case PPCC_DIM_KIND:
		snprintf(buf, size, "%s", ppcc_schedule_kind_name(value));
		break;
	case PPCC_DIM_RECOMPUTE:
		snprintf(buf, size, "recompute %s", recompute_names[value]);
		break;
	case PPCC_DIM_EP: snprintf(buf, size, "ep %d", value); break;
	case PPCC_DIM_ETP: snprintf(buf, size, "etp %d", value); break;
	default: snprintf(buf, size, "ZeRO-%d", value); break;
	}
}

static int entry_value(const ppcc_search_entry *e, int dim)
{
	switch (dim) {
	case PPCC_DIM_T: return e->t;
	case PPCC_DIM_P: return e->p;
	case PPCC_DIM_CP: return e->cp;
	case PPCC_DIM_V: return e->v;
	case PPCC_DIM_KIND: return e->kind;
	case PPCC_DIM_RECOMPUTE: return e->recompute;
	case PPCC_DIM_EP: return e->ep;
	case PPCC_DIM_ETP: return e->etp;
	default: return e->zero;
	}
}

/* The same settings (the figures aside). */
static int same_entry(const ppcc_search_entry *a, const ppcc_search_entry *b)
{
	return a->t == b->t && a->p == b->p && a->d == b->d && a->cp == b->cp &&
	       a->v == b->v && a->b == b->b && a->m == b->m &&
	       a->recompute == b->recompute && a->zero == b->zero &&
	       a->kind == b->kind && a->ep == b->ep && a->etp == b->etp;
}

/* The winner's binding constraints, the ties and the headroom, and what
 * the best of each other family loses against the fastest. */
static void emit_why(FILE *f, const ppcc_config *cfg,
		     const ppcc_search_options *so, const char *headroom_why,
		     const ppcc_search_result *r)
{
	const ppcc_cluster *cl = &cfg->cluster;
	const ppcc_search_entry *w = &r->top[0];
	char what[256];
	ppcc_search_entry_describe(what, sizeof what, w);
	const ppcc_search_entry *fast = &r->fastest;
	double tb = so->tie_band;
	fprintf(f, "why: %s: ", what);
	put_sig(f, 0, w->iteration_ms, tb);
	fprintf(f, " ms an iteration, %.1f%% bubble\n", 100 * w->bubble);
	char band[256];
	ppcc_time_band(band, sizeof band, cl,
		       cfg->model.transformer && cfg->model.transformer->fp8);
	fprintf(f, "  uncertainty: %s\n", band);
	char from[256];
	ppcc_device_tie_band(from, sizeof from, cl);
	fprintf(f, "  ties: %ld configuration%s within %.1f%% of the fastest "
		"(", r->ties, r->ties == 1 ? "" : "s", 100 * tb);
	put_sig(f, 0, fast->iteration_ms, tb);
	fprintf(f, " ms) tie with it and rank first, the most headroom "
		"first; the band is the median over pairs of runs of the "
		"difference of their errors (predicted / measured - 1), %s; "
		"the percentages and settings below are against the fastest\n",
		from);
	fprintf(f, "  headroom: the winner leaves %.2f GiB free beyond the "
		"reserve at its peak", gib(w->headroom_bytes));
	if (!same_entry(w, fast))
		fprintf(f, ", the fastest %.2f GiB", gib(fast->headroom_bytes));
	fprintf(f, "; a configuration fits when it leaves %.2f GiB (%s)\n",
		gib(so->headroom_bytes), headroom_why);
	fprintf(f, "  memory: the fullest device peaks at %.2f of %.2f GiB "
		"(%.2f reserved); %ld configuration%s with a bound under the "
		"fastest's iteration do%s not fit\n", gib(w->peak_bytes),
		gib(r->memory_bytes), gib(cl->reserved_bytes), r->faster_unfit,
		r->faster_unfit == 1 ? "" : "s",
		r->faster_unfit == 1 ? "es" : "");
	fprintf(f, "  tensor parallel: t %d of the %d devices of a node%s\n",
		w->t, cl->devices_per_node,
		w->t == cl->devices_per_node ? " (the most the search takes)" : "");
	fprintf(f, "  global batch: %ld sequences = m %d x b %d x d %d; %d "
		"microbatch%s for %d pipeline rank%s\n", r->global_batch,
		w->m, w->b, w->d, w->m, w->m == 1 ? "" : "es", w->p,
		w->p == 1 ? "" : "s");
	for (int i = 0; i < r->n_families; i++) {
		const ppcc_search_family *x = &r->families[i];
		if (x->value == entry_value(fast, x->dim))
			continue;
		char label[64];
		family_label(label, sizeof label, x->dim, x->value);
		if (x->has_best && x->bound_ms < x->best.iteration_ms) {
			/* some of it not simulated might be faster than its
			 * best simulated */
			char diff[256];
			differences(diff, sizeof diff, fast, &x->best);
			fprintf(f, "  %s: %.1f%% to %.1f%% slower (the best simulated: "
				"%s; the rest by their bound)\n", label,
				100 * (x->bound_ms / fast->iteration_ms - 1),
				100 * (x->best.iteration_ms / fast->iteration_ms - 1),
				diff);
		} else if (x->has_best) {
			char diff[256];
			differences(diff, sizeof diff, fast, &x->best);
			fprintf(f, "  %s: at best %.1f%% slower (%s)\n", label,
				100 * (x->best.iteration_ms / fast->iteration_ms - 1),
				diff);
		} else if (!isinf(x->bound_ms)) {
			fprintf(f, "  %s: at least %.1f%% slower (its bound; "
				"none simulated)\n", label,
				100 * (x->bound_ms / fast->iteration_ms - 1));
		} else if (x->pruned_memory + x->infeasible > 0) {
			fprintf(f, "  %s: none of %ld fits (%ld over by a memory "
				"bound, %ld simulated over)\n", label,
				x->enumerated, x->pruned_memory, x->infeasible);
		} else {
			fprintf(f, "  %s: all %ld refused by the configuration "
				"checks\n", label, x->enumerated);
		}
	}
}

/* A mixture of experts' rows add ep and etp after cp. */
static void table_row(FILE *f, const char *rank, const ppcc_search_entry *e,
		      int fits, const ppcc_search_result *r, double band)
{
	fprintf(f, "%4s %3d %4d %4d %3d ", rank, e->t, e->p, e->d, e->cp);
	if (e->etp > 0)
		fprintf(f, "%3d %3d ", e->ep, e->etp);
	fprintf(f, "%2d %3d %5d  %-9s  %4d  %-14s  ", e->v, e->b, e->m,
		recompute_names[e->recompute], e->zero,
		ppcc_schedule_kind_name(e->kind));
	if (fits) {
		const ppcc_search_entry *fast = &r->fastest;
		put_sig(f, 12, e->iteration_ms, band);
		fputs("  ", f);
		put_sig(f, 8, e->tokens_per_s, band);
		fprintf(f, "  %5.1f%%  %8.2f  %8.2f  %5.1f%%  %s\n", 100 * e->mfu,
			gib(e->peak_bytes), gib(e->headroom_bytes),
			100 * e->bubble, same_entry(e, fast) ? "fastest"
			: e->iteration_ms < fast->iteration_ms * (1 + band)
			? "yes" : "-");
	} else
		fputs("does not fit\n", f);
}

static void table_head(FILE *f, const ppcc_config *cfg)
{
	const ppcc_transformer *tf = cfg->model.transformer;
	fprintf(f, "rank   t    p    d  cp %s v   b     m  recompute  zero  "
		"schedule        iteration_ms  tokens/s     MFU  peak_GiB  "
		"free_GiB  bubble  tie\n", tf && tf->moe.experts > 0 ? " ep etp " : "");
}

/* The compared configurations beside the winner: each one's rank among
 * the search's configurations and figures, then a line each of what it
 * is and what it loses. */
static void emit_compared(FILE *f, const ppcc_config *cfg, double band,
			  const ppcc_search_result *r)
{
	const ppcc_search_entry *w = &r->top[0];
	fputs("compared: the winner, then each configuration of the file "
	      "with its rank among the search's\n", f);
	table_head(f, cfg);
	table_row(f, "1", w, 1, r, band);
	for (int i = 0; i < r->n_compared; i++) {
		const ppcc_search_compared *c = &r->compared[i];
		char rank[32];
		if (!c->fits)
			snprintf(rank, sizeof rank, "-");
		else if (c->rank_exact)
			snprintf(rank, sizeof rank, "%ld", c->rank);
		else
			snprintf(rank, sizeof rank, ">%ld", c->rank - 1);
		table_row(f, rank, &c->e, c->fits, r, band);
	}
	for (int i = 0; i < r->n_compared; i++) {
		const ppcc_search_compared *c = &r->compared[i];
		const ppcc_loc *l = &c->from->loc;
		char diff[256];
		fputs("  ", f);
		if (c->from->name) {
			ppcc_fput_visible(f, c->from->name);
			fputc(' ', f);
		}
		fputc('(', f);
		ppcc_fput_visible(f, l->file);
		fprintf(f, ":%d:%d): ", l->line, l->col);
		differences(diff, sizeof diff, w, &c->e);
		if (!c->fits && c->need_bytes > 0)
			fprintf(f, "does not fit: it would need %s%.2f GiB per "
				"device (%s)", c->need_exact ? "" : "at least ",
				gib(c->need_bytes), diff);
		else if (!c->fits)
			fprintf(f, "does not fit (%s)", diff);
		else if (c->rank_exact && c->rank == 1 &&
			 c->e.iteration_ms == w->iteration_ms)
			fprintf(f, "rank 1, %s as the winner", diff);
		else
			fprintf(f, "rank %s%ld, %.1f%% slower than the fastest (%s)",
				c->rank_exact ? "" : "over ",
				c->rank_exact ? c->rank : c->rank - 1,
				100 * (c->e.iteration_ms / r->fastest.iteration_ms - 1),
				diff);
		fputs(c->in_space ? "\n" : "; not in the search's space\n", f);
	}
	fputc('\n', f);
}

/* winner: the winner's plan, whose model the summary describes */
static int emit_text(FILE *f, const ppcc_config *cfg,
		      const ppcc_search_options *so, const char *headroom_why,
		      const ppcc_search_result *r, const ppcc_plan *winner)
{
	const ppcc_cluster *cl = &cfg->cluster;
	fputs("search: ", f);
	ppcc_fput_visible(f, cfg->model.name ? cfg->model.name : "model");
	fprintf(f, " on %d devices (%d a node), global batch %ld sequences%s\n",
		cl->devices, cl->devices_per_node, r->global_batch,
		r->global_batch_given ? "" : " (the file's m x b x d)");
	ppcc_emit_presets(f, cl);
	fprintf(f, "  %ld configurations considered: %ld pruned by a "
		"memory bound, %ld by a bound on the iteration, %ld refused by the "
		"configuration checks, %ld simulated (%ld do not fit)\n",
		r->considered, r->pruned_memory, r->pruned_bound, r->invalid,
		r->simulated, r->infeasible);
	fprintf(f, "  searched in %.2f s\n", r->seconds);
	if (ppcc_emit_model_summary(f, winner, 1) < 0)
		return PPCC_ENOMEM;
	fputc('\n', f);
	table_head(f, cfg);
	for (int i = 0; i < r->n_top; i++) {
		char rank[16];
		snprintf(rank, sizeof rank, "%d", i + 1);
		table_row(f, rank, &r->top[i], 1, r, so->tie_band);
	}
	fputc('\n', f);
	if (r->n_compared > 0)
		emit_compared(f, cfg, so->tie_band, r);
	emit_why(f, cfg, so, headroom_why, r);
	fputc('\n', f);
	return 0;
}

static void json_settings(FILE *f, const ppcc_config *cfg,
			  const ppcc_search_entry *e, const char *indent,
			  int fits);

static void json_entry(FILE *f, const ppcc_config *cfg,
		       const ppcc_search_entry *e, const char *indent)
{
	fputc('{', f);
	json_settings(f, cfg, e, indent, 1);
	fputc('}', f);
}

/* An entry's keys, without its braces; the figures when it fits. */
static void json_settings(FILE *f, const ppcc_config *cfg,
			  const ppcc_search_entry *e, const char *indent,
			  int fits)
{
	fprintf(f, "\"pipeline\": {\"schedule\": \"%s\", \"stages\": %d, "
		"\"microbatches\": %d, \"chunks\": %d, "
		"\"tensor_parallel\": %d, \"data_parallel\": %d, "
		"\"context_parallel\": %d, \"global_batch_size\": %ld, "
		"\"zero\": %d", ppcc_schedule_kind_name(e->kind),
		e->p, e->m, e->v, e->t, e->d, e->cp,
		(long)e->m * e->b * e->d, e->zero);
	if (e->etp > 0)
		fprintf(f, ", \"expert_parallel\": %d, "
			"\"expert_tensor_parallel\": %d", e->ep, e->etp);
	fputs("},\n", f);
	const ppcc_transformer *tf = cfg->model.transformer;
	if (tf) {
		fprintf(f, "%s \"transformer\": {\"micro_batch_size\": %d, "
			"\"recompute\": \"%s\"", indent, e->b,
			recompute_names[e->recompute]);
		/* the modules the file gives, which selective rows run */
		char m[96];
		if (e->recompute == PPCC_RECOMPUTE_SELECTIVE &&
		    tf->recompute_modules)
			fprintf(f, ", \"recompute_modules\": [\"%s\"]",
				ppcc_recompute_modules_text(
					m, sizeof m, tf->recompute_modules,
					"\", \""));
		fputs("},\n", f);
	}
	fprintf(f, "%s \"micro_batch_size\": %d, \"recompute\": \"%s\", "
		"\"fits\": %s", indent, e->b, recompute_names[e->recompute],
		fits ? "true" : "false");
	if (fits)
		fprintf(f, ",\n%s \"iteration_ms\": %.17g, \"tokens_per_s\": %.17g, "
			"\"mfu\": %.17g, \"peak_memory_bytes\": %.17g, "
			"\"bubble_fraction\": %.17g, \"lower_bound_ms\": %.17g, "
			"\"headroom_bytes\": %.17g",
			indent, e->iteration_ms, e->tokens_per_s, e->mfu,
			e->peak_bytes, e->bubble, e->lower_bound_ms,
			e->headroom_bytes);
}

/* A JSON string as every JSON of ppcc writes it (ASCII, escaped). */
static void json_string(FILE *f, const char *s)
{
	ppcc_jw w;
	ppcc_jw_init(&w, f);
	ppcc_jw_string(&w, s);
	ppcc_jw_flush(&w);
}

static const char *const dim_names[] = {
	"tensor_parallel", "stages", "context_parallel", "chunks", "schedule",
	"recompute", "zero", "expert_parallel", "expert_tensor_parallel"};

/* An input file as "KEY_file": its absolute path ("-": standard input),
 * "KEY_fingerprint": FNV-1a 64 of the bytes the search read. */
static void json_input(FILE *f, const char *key, const char *path,
		       uint64_t fingerprint)
{
	char abs[PATH_MAX];
	if (strcmp(path, "<stdin>") == 0)
		path = "-";
	else if (realpath(path, abs))
		path = abs;
	fprintf(f, "  \"%s_file\": ", key);
	json_string(f, path);
	fprintf(f, ",\n  \"%s_fingerprint\": \"%016" PRIx64 "\",\n", key,
		fingerprint);
}

/* text: the YAML --model and --devices built (NULL for a file), which
 * the JSON holds as "model_text" since no file does; trainer: --trainer's
 * (ppcc_trainer), or -1. */
static void emit_json(FILE *f, const ppcc_config *cfg, const char *text,
		      int trainer, const ppcc_search_options *so,
		      const ppcc_search_result *r)
{
	fprintf(f, "{\n  \"format\": \"ppcc-search\",\n  \"version\": 2,\n");
	/* what ppcc plan --from-search plans an entry from */
	json_input(f, "model", cfg->path, cfg->fingerprint);
	if (text) {
		fputs("  \"model_text\": ", f);
		json_string(f, text);
		fputs(",\n", f);
	}
	if (trainer >= 0)
		fprintf(f, "  \"trainer\": \"%s\",\n", ppcc_trainer_name(trainer));
	if (cfg->cluster_path)
		json_input(f, "cluster", cfg->cluster_path,
			   cfg->cluster_fingerprint);
	if (so->memory_limit_bytes > 0)
		fprintf(f, "  \"memory_limit_bytes\": %.17g,\n",
			so->memory_limit_bytes);
	fprintf(f, "  \"devices\": %d,\n  \"global_batch_size\": %ld,\n",
		cfg->cluster.devices, r->global_batch);
	fprintf(f, "  \"considered\": %ld,\n  \"pruned\": %ld,\n"
		"  \"pruned_memory\": %ld,\n  \"pruned_bound\": %ld,\n"
		"  \"invalid\": %ld,\n  \"simulated\": %ld,\n"
		"  \"infeasible\": %ld,\n  \"faster_unfit\": %ld,\n"
		"  \"seconds\": %.6f,\n",
		r->considered, r->pruned_memory + r->pruned_bound,
		r->pruned_memory, r->pruned_bound, r->invalid, r->simulated,
		r->infeasible, r->faster_unfit, r->seconds);
	/* the top's order: the ties with the fastest first, by headroom */
	fprintf(f, "  \"tie_band\": %.17g,\n  \"ties\": %ld,\n"
		"  \"headroom_bytes\": %.17g,\n", so->tie_band, r->ties,
		so->headroom_bytes);
	fputs("  \"top\": [\n", f);
	for (int i = 0; i < r->n_top; i++) {
		fputs("    ", f);
		json_entry(f, cfg, &r->top[i], "    ");
		fputs(i + 1 < r->n_top ? ",\n" : "\n", f);
	}
	fputs("  ],\n", f);
	if (r->n_compared > 0) {
		fputs("  \"compared\": [\n", f);
		for (int i = 0; i < r->n_compared; i++) {
			const ppcc_search_compared *c = &r->compared[i];
			fputs("    {", f);
			if (c->from->name) {
				fputs("\"name\": ", f);
				json_string(f, c->from->name);
				fputs(", ", f);
			}
			fprintf(f, "\"line\": %d, \"column\": %d, ",
				c->from->loc.line, c->from->loc.col);
			if (c->fits)
				fprintf(f, "\"rank\": %ld, \"rank_exact\": %s, ",
					c->rank, c->rank_exact ? "true" : "false");
			fprintf(f, "\"in_space\": %s,\n     ",
				c->in_space ? "true" : "false");
			json_settings(f, cfg, &c->e, "    ", c->fits);
			if (!c->fits && c->need_bytes > 0)
				fprintf(f, ",\n     \"need_memory_bytes\": %.17g, "
					"\"need_exact\": %s", c->need_bytes,
					c->need_exact ? "true" : "false");
			fputs(i + 1 < r->n_compared ? "},\n" : "}\n", f);
		}
		fputs("  ],\n", f);
	}
	fputs("  \"families\": [\n", f);
	for (int i = 0; i < r->n_families; i++) {
		const ppcc_search_family *x = &r->families[i];
		fprintf(f, "    {\"key\": \"%s\", \"value\": ", dim_names[x->dim]);
		if (x->dim == PPCC_DIM_KIND)
			fprintf(f, "\"%s\"", ppcc_schedule_kind_name(x->value));
		else if (x->dim == PPCC_DIM_RECOMPUTE)
			fprintf(f, "\"%s\"", recompute_names[x->value]);
		else
			fprintf(f, "%d", x->value);
		fprintf(f, ", \"considered\": %ld, \"pruned_memory\": %ld, "
			"\"pruned_bound\": %ld, \"invalid\": %ld, "
			"\"infeasible\": %ld", x->enumerated, x->pruned_memory,
			x->pruned_bound, x->invalid, x->infeasible);
		if (!isinf(x->bound_ms))
			fprintf(f, ", \"bound_ms\": %.17g", x->bound_ms);
		if (x->has_best) {
			fputs(",\n     \"best\": ", f);
			json_entry(f, cfg, &x->best, "     ");
		}
		fputs(i + 1 < r->n_families ? "},\n" : "}\n", f);
	}
	fputs("  ]\n}\n", f);
}

/* The tie band from the devices' calibration, and the headroom in
 * bytes: given in GiB, or pct percent of the memory a device has for
 * training (the smallest's, --memory-limit's), by default
 * PPCC_SEARCH_HEADROOM_PCT; why: where it comes from, in words. */
static void search_ranking(ppcc_search_options *so, char *why, size_t size,
			   const ppcc_config *cfg, int given, int pct,
			   double headroom)
{
	const ppcc_cluster *cl = &cfg->cluster;
	so->tie_band = ppcc_device_tie_band(NULL, 0, cl);
	if (given && !pct) {
		so->headroom_bytes = headroom * 1024.0 * 1024.0 * 1024.0;
		snprintf(why, size, "--headroom");
		return;
	}
	double least = INFINITY;
	for (int g = 0; g < cl->n_groups; g++) {
		double m = so->memory_limit_bytes > 0 ? so->memory_limit_bytes
			   : cl->groups[g].memory_bytes;
		if (m < least)
			least = m;
	}
	double train = least - cl->reserved_bytes;
	if (!given)
		headroom = PPCC_SEARCH_HEADROOM_PCT;
	so->headroom_bytes = train > 0 ? headroom / 100 * train : 0;
	snprintf(why, size, "%g%% of %.2f GiB for training, %s", headroom,
		 gib(train > 0 ? train : 0),
		 given ? "--headroom" : "the default: the memory model's "
		 "largest error on measured peaks");
}

/* The progress line on a terminal's standard error: shown from a second
 * into a search, redrawn in place (\r) at most four times a second,
 * erased when the search ends, so that nothing of it stays before the
 * result.  user: the line's state, the caller's (no globals). */
typedef struct progress_line {
	double shown_at; /* the search's seconds when last drawn */
	int width;       /* the columns drawn; 0: nothing shown */
} progress_line;

static void show_progress(const ppcc_search_progress *p, void *user)
{
	progress_line *l = user;
	if (p->done) {
		if (l->width > 0)
			fprintf(stderr, "\r%*s\r", l->width, "");
		fflush(stderr);
		*l = (progress_line){0};
		return;
	}
	if (p->seconds < 1.0 || (l->width > 0 && p->seconds - l->shown_at < 0.25))
		return;
	l->shown_at = p->seconds;
	char line[200], left[64];
	if (isnan(p->left_s))
		snprintf(left, sizeof left, "bounding");
	else
		snprintf(left, sizeof left, "%ld to plan, about %.0f s left",
			 p->left, ceil(p->left_s));
	int n = snprintf(line, sizeof line, "ppcc: search: %ld "
			 "configurations: %ld simulated, %ld pruned, %ld "
			 "refused; %s", p->considered, p->simulated,
			 p->pruned, p->refused, left);
	if (n < 0)
		return;
	if (n >= (int)sizeof line)
		n = (int)sizeof line - 1;
	fprintf(stderr, "\r%s%*s", line, l->width > n ? l->width - n : 0, "");
	fflush(stderr);
	if (n > l->width)
		l->width = n;
}

/* A diagnostic during the search: the progress line erased first, so
 * that the message starts its own line (user: the progress_line). */
static void search_diag(ppcc_severity sev, const ppcc_loc *loc,
			const char *msg, void *user)
{
	progress_line *l = user;
	if (l->width > 0) {
		fprintf(stderr, "\r%*s\r", l->width, "");
		l->width = 0;
	}
	ppcc_cli_print_diag(sev, loc, msg, NULL);
}

static int load_compare(ppcc_search_options *so, ppcc_arena *a,
			const char *path, ppcc_diag *d)
{
	ppcc_compare_entry *e;
	int err = ppcc_compare_load(&e, &so->n_compare, a, path, d);
	so->compare = e;
	return err;
}

int ppcc_cli_search(int argc, char **argv)
{
	enum { O_CLUSTER = 256, O_GB, O_TOP, O_FIX, O_MEM, O_EXH, O_IDLE,
	       O_COMPARE, O_JOBS, O_MAX_ACTIONS, O_MAX_WORK, O_TIME_LIMIT,
	       O_MODEL, O_DEVICES, O_TRAINER, O_HEADROOM, O_PRECISION };
	static const struct option longopts[] = {
		{"cluster", required_argument, NULL, O_CLUSTER},
		{"global-batch", required_argument, NULL, O_GB},
		{"top", required_argument, NULL, O_TOP},
		{"fix", required_argument, NULL, O_FIX},
		{"memory-limit", required_argument, NULL, O_MEM},
		{"exhaustive", no_argument, NULL, O_EXH},
		{"allow-idle", no_argument, NULL, O_IDLE},
		{"compare", required_argument, NULL, O_COMPARE},
		{"jobs", required_argument, NULL, O_JOBS},
		{"max-actions", required_argument, NULL, O_MAX_ACTIONS},
		{"max-work", required_argument, NULL, O_MAX_WORK},
		{"time-limit", required_argument, NULL, O_TIME_LIMIT},
		{"model", required_argument, NULL, O_MODEL},
		{"devices", required_argument, NULL, O_DEVICES},
		{"trainer", required_argument, NULL, O_TRAINER},
		{"precision", required_argument, NULL, O_PRECISION},
		{"headroom", required_argument, NULL, O_HEADROOM},
		{"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	ppcc_search_options so = {.fix = {.recompute = -1, .zero = -1,
					  .kind = -1}};
	const char *cluster = NULL, *output = NULL, *compare = NULL;
	const char *model = NULL, *devices = NULL, *precision = NULL;
	int trainer = -1, headroom_given = 0, headroom_pct = 0;
	double headroom = 0;
	char headroom_why[160];
	ppcc_cli_batch batch = {0};
	const ppcc_format_info *fi = ppcc_format_of(PPCC_FMT_TEXT);
	char names[256], unknown[320];
	int c;
	long n;
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":f:o:h", longopts, NULL)) != -1) {
		const char *opt = argv[optind - 1];
		switch (c) {
		case O_CLUSTER: cluster = optarg; break;
		case O_GB:
			if (ppcc_cli_batch_parse(&batch, optarg) < 0)
				return sr_usage("--global-batch: '%s' is not a count "
						"of sequences, or of tokens with K or "
						"M (4M: 2^22)", optarg);
			break;
		case O_MODEL: model = optarg; break;
		case O_DEVICES: devices = optarg; break;
		case O_PRECISION: precision = optarg; break;
		case O_TRAINER:
			if ((trainer = ppcc_trainer_named(optarg)) < 0)
				return sr_usage("--trainer: expected megatron, "
						"torchtitan or deepspeed, got '%s'",
						optarg);
			break;
		case O_TOP:
			if (sr_count(optarg, &n) < 0 || n > 1000)
				return sr_usage("--top: '%s' is not a count of 1 to 1000",
						optarg);
			so.top = (int)n;
			break;
		case O_FIX: {
			char was[64], msg[160];
			int fixed = parse_fix(&so.fix, optarg, was, sizeof was);
			if (fixed == -2) {
				/* was is a key and a name or number: no '%' */
				snprintf(msg, sizeof msg, "--fix: '%s' and '%%s' "
					 "fix the same dimension; give one", was);
				return sr_usage(msg, optarg);
			}
			if (fixed < 0)
				return sr_usage("--fix: '%s' is not KEY=VALUE with a "
						"pipeline key (schedule, stages, chunks, "
						"tensor_parallel, data_parallel, "
						"context_parallel, zero, expert_parallel, "
						"expert_tensor_parallel) or "
						"micro_batch_size, recompute", optarg);
			break;
		}
		case O_MEM: {
			double g;
			if (ppcc_cli_real(optarg, 0, 1048576, &g) < 0 || !(g > 0))
				return sr_usage("--memory-limit: expected GiB per "
						"device (a number > 0, at most "
						"1048576: 1 PiB), got '%s'", optarg);
			so.memory_limit_bytes = g * 1024.0 * 1024.0 * 1024.0;
			break;
		}
		case O_HEADROOM: {
			size_t k = strlen(optarg);
			char num[64];
			headroom_pct = k > 0 && optarg[k - 1] == '%';
			if (k - (size_t)headroom_pct >= sizeof num ||
			    (snprintf(num, sizeof num, "%.*s",
				      (int)(k - (size_t)headroom_pct), optarg),
			     ppcc_cli_real(num, 0, headroom_pct ? 99 : 1e6,
					   &headroom) < 0))
				return sr_usage("--headroom: '%s' is not GiB or a "
						"percent under 100 (2, 1.5%%)", optarg);
			headroom_given = 1;
			break;
		}
		case O_EXH: so.exhaustive = 1; break;
		case O_IDLE: so.allow_idle = 1; break;
		case O_COMPARE: compare = optarg; break;
		case O_JOBS:
			if (sr_count(optarg, &n) < 0 || n > 64)
				return sr_usage("--jobs: '%s' is not a count of 1 to 64",
						optarg);
			so.threads = (int)n;
			break;
		case O_MAX_ACTIONS:
		case O_MAX_WORK: {
			long long v;
			if (ppcc_cli_count(optarg, 1, LLONG_MAX, &v) < 0)
				return sr_usage(c == O_MAX_ACTIONS
						? "--max-actions: expected a positive "
						  "integer, got '%s'"
						: "--max-work: expected a positive "
						  "integer, got '%s'", optarg);
			if (c == O_MAX_ACTIONS)
				so.budget.max_actions = v;
			else
				so.budget.max_work = v;
			break;
		}
		case O_TIME_LIMIT: {
			double sec;
			if (ppcc_cli_real(optarg, 0, 1e6, &sec) < 0 || !(sec > 0))
				return sr_usage("--time-limit: '%s' is not seconds",
						optarg);
			so.time_limit_s = sec;
			break;
		}
		case 'o': output = optarg; break;
		case 'f':
			if (!(fi = ppcc_format_named(optarg)) || !fi->search) {
				ppcc_format_list(names, sizeof names,
						 PPCC_FORMATS_SEARCH, ", ", " or ");
				/* the names hold no '%' */
				snprintf(unknown, sizeof unknown, "search: unknown "
					 "format '%%s' (%s)", names);
				return sr_usage(unknown, optarg);
			}
			break;
		case 'h':
			ppcc_format_list(names, sizeof names, PPCC_FORMATS_SEARCH,
					 "|", NULL);
			printf("usage: ppcc search FILE [--cluster FILE] [--global-batch "
			     "N|NK|NM] [--top K]\n"
			     "       ppcc search --model NAME --devices COUNTxPRESET "
			     "[--global-batch N|NK|NM] ...\n"
			     "                   [-f|--format %s] "
			     "[-o|--output FILE]\n"
			     "                   [--fix KEY=VALUE ...] [--memory-limit GIB] "
			     "[--headroom GIB|PCT%%]\n"
			     "                   [--allow-idle] [--exhaustive] "
			     "[--compare FILE] [--jobs N]\n"
			     "                   [--max-actions N] [--max-work N] "
			     "[--time-limit S]\n"
			     "                   [--trainer "
			     "megatron|torchtitan|deepspeed]\n"
			     "       ppcc search --model NAME --devices "
			     "COUNTxPRESET [--precision bf16|fp8] [options as above]\n"
			     "       ppcc search -h|--help\n", names);
			return 0;
		case ':': return sr_usage("option '%s' needs a value", opt);
		default: return sr_usage("unknown option '%s'", opt);
		}
	}
	if (compare && fi->admits)
		return sr_usage("%s", "--compare: the trainers' formats print the "
				"winner alone; use -f text or -f json");
	so.admits = fi->admits;
	int presets = model || devices;
	char yaml[512];
	if (presets && optind < argc)
		return sr_usage("--model and --devices build the input; FILE '%s' "
				"gives it too: name the presets in the file instead "
				"(transformer: {preset: NAME}, cluster.device: "
				"NAME; ppcc(5))", argv[optind]);
	if (presets && cluster)
		return sr_usage("--cluster '%s' and --devices both give the "
				"cluster; give one", cluster);
	if ((presets || precision) &&
	    (c = ppcc_cli_preset_yaml(yaml, sizeof yaml, model, devices,
				      precision)) != 0)
		return c;
	if (!presets && optind >= argc)
		return sr_usage("%s", "search: missing FILE (or --model NAME "
				"--devices COUNTxPRESET)");
	if (optind + 1 < argc)
		return sr_usage("unexpected argument '%s'", argv[optind + 1]);
	if (output && ((!presets && ppcc_cli_same_file(output, argv[optind])) ||
		       (cluster && ppcc_cli_same_file(output, cluster)) ||
		       (compare && ppcc_cli_same_file(output, compare))))
		return sr_usage("the output '%s' is an input file", output);
	progress_line line = {0};
	ppcc_diag d = {.fn = search_diag, .user = &line};
	ppcc_arena *a = ppcc_arena_new();
	if (!a) {
		fputs("ppcc: error: out of memory\n", stderr);
		return 4;
	}
	ppcc_config cfg;
	ppcc_search_result r;
	char *buf = NULL, batch_line[160] = "";
	size_t len = 0;
	int rc = 0, err;
	if ((err = presets ? ppcc_config_load_text(&cfg, a, PPCC_COMMAND_LINE,
						   yaml, strlen(yaml), &d)
		     : ppcc_config_load(&cfg, a, argv[optind], cluster, &d)) < 0) {
		rc = err == PPCC_EINPUT ? 1 : 4;
		if (err == PPCC_ENOMEM)
			fputs("ppcc: error: out of memory\n", stderr);
		goto out;
	}
	if ((trainer >= 0 &&
	     (err = ppcc_config_set_trainer(&cfg, a, trainer,
					    (ppcc_loc){PPCC_COMMAND_LINE, 0, 0}))
	     < 0) ||
	    (err = ppcc_config_use_trainer(&cfg, a, fi, &d)) < 0) {
		rc = err == PPCC_EINPUT ? 1 : 4;
		goto out;
	}
	if (batch.text &&
	    (rc = ppcc_cli_batch_sequences(&so.global_batch, batch_line,
					   sizeof batch_line, &batch,
					   cfg.model.seq_len)) != 0)
		goto out;
	/* the batch used, first: on the text's first line, else a note */
	if (batch_line[0] && fi->format != PPCC_FMT_TEXT)
		fprintf(stderr, "ppcc: note: %s", batch_line);
	search_ranking(&so, headroom_why, sizeof headroom_why, &cfg,
		       headroom_given, headroom_pct, headroom);
	so.admits_ctx = &cfg; /* a trainer's rules read the model */
	/* what the trainer refuses of the model alone, before searching */
	if (fi->model_refuses && fi->model_refuses(&cfg, &d) < 0) {
		rc = 1;
		goto out;
	}
	/* the file's modules, which a fixed none or full leaves unused */
	const ppcc_transformer *tf = cfg.model.transformer;
	if (so.fix.recompute >= 0 &&
	    so.fix.recompute != PPCC_RECOMPUTE_SELECTIVE && tf &&
	    tf->recompute_modules_loc.file) {
		char w[96];
		ppcc_note(&d, &tf->recompute_modules_loc, "--fix recompute=%s leaves "
			  "transformer.recompute_modules (%s) unused: it names "
			  "what selective recomputation recomputes", recompute_names[so.fix.recompute],
			  ppcc_recompute_modules_text(w, sizeof w,
						      tf->recompute_modules,
						      ", "));
	}
	/* a progress line only where a person watches */
	if (isatty(STDERR_FILENO)) {
		so.progress = show_progress;
		so.progress_user = &line;
	}
	if ((so.memory_limit_bytes > 0 &&
	     (err = ppcc_config_check_memory_limit(&cfg.cluster,
						   so.memory_limit_bytes,
						   &d)) < 0) ||
	    (compare && (err = load_compare(&so, a, compare, &d)) < 0) ||
	    (err = ppcc_search(&r, a, &cfg, &so, &d)) < 0) {
		rc = err == PPCC_EINPUT || err == PPCC_EINFEASIBLE ? 1 : 4;
		if (err == PPCC_ENOMEM)
			fputs("ppcc: error: out of memory\n", stderr);
		goto out;
	}
	if (r.stopped_early)
		fprintf(stderr, "ppcc: note: --time-limit: stopped after %.0f s "
			"with %ld configurations not simulated; the ranking is "
			"the best found so far\n", so.time_limit_s,
			r.not_simulated);
	FILE *mem = open_memstream(&buf, &len);
	if (!mem) {
		rc = 4;
		goto out;
	}
	locale_t saved = ppcc_locale_enter();
	ppcc_config wc; /* the plan points to it until the report below */
	ppcc_plan plan;
	int planned = 0;
	if (fi->format == PPCC_FMT_JSON) {
		emit_json(mem, &cfg, presets ? yaml : NULL, trainer, &so, &r);
	} else {
		/* the winner planned as ppcc plan plans it, after the ranking
		 * (text) or alone in the trainer's settings, on the devices
		 * the search planned it on (--memory-limit) */
		ppcc_emit_options eo = {.format = fi->format,
					.model_summary_shown = 1};
		err = so.memory_limit_bytes > 0
		      ? ppcc_config_limit_memory(&cfg, a, so.memory_limit_bytes)
		      : 0;
		/* with the headroom kept free, as the search planned it */
		ppcc_config kept = cfg;
		kept.cluster.headroom_bytes += so.headroom_bytes;
		if (err < 0 ||
		    (err = ppcc_search_config(&wc, a, &kept, &r.top[0])) < 0 ||
		    (err = ppcc_config_check(&wc, &d)) < 0 ||
		    (err = ppcc_plan_build(&plan, a, &wc, &d)) < 0) {
			rc = 4;
		} else {
			err = 0;
			if (fi->format == PPCC_FMT_TEXT) {
				fputs(batch_line, mem);
				err = emit_text(mem, &cfg, &so, headroom_why, &r,
						&plan);
			}
			if (err == PPCC_ENOMEM)
				fputs("ppcc: error: out of memory\n", stderr);
			rc = err < 0 || (err = fi->emit(mem, &plan, &eo, &d)) < 0
			     ? 4 : 0;
		}
		planned = rc == 0;
		/* a trainer's refusal is the input's */
		if (rc && fi->admits)
			rc = err == PPCC_EINPUT || err == PPCC_EINFEASIBLE ? 1 : 4;
	}
	ppcc_locale_leave(saved);
	if (fclose(mem) != 0)
		rc = 4;
	if (rc)
		goto out;
	rc = ppcc_cli_write_output(output, buf, len);
	if (rc == 0 && planned)
		ppcc_cli_report_export(fi, &plan);
out:
	free(buf);
	ppcc_arena_free(a);
	return rc;
}
