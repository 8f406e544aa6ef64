/*
 * targets.c - what the fuzzers do with one input, and the contracts they
 * hold every phase to.
 *
 * The loader and the JSON reader take a path, so the input goes into a
 * memfd and is named "/proc/self/fd/N".  Every output is written into
 * memory (open_memstream) and then checked: a schedule ppcc built must
 * validate, its JSON must read back to the same schedule and names, the
 * Chrome trace must be JSON, the DOT must parse, the CSV must follow its
 * grammar and the header must hold nothing a compiler could take for
 * anything but what it is.  A status must be one the phase documents,
 * and an input error must come with a diagnostic.  Any broken contract
 * aborts, which libFuzzer records as a crash and the Check replay as a
 * failure.
 *
 * jansson allocates through ppcc_malloc here, so that the count of live
 * blocks proves both ppcc and its JSON values free everything; libyaml
 * and Graphviz allocate with plain malloc, which only LeakSanitizer and
 * valgrind see.
 */
#define _GNU_SOURCE
#include "targets.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <graphviz/cgraph.h>
#include <jansson.h>

#include "ppcc.h"
#include "runtime/rt.h"

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: contract broken: %s\n", __FILE__, \
			__LINE__, #cond); \
		abort(); \
	} \
} while (0)

/* Every diagnostic must be readable to its end, wherever it points. */
static void touch_diag(ppcc_severity sev, const ppcc_loc *loc,
		       const char *msg, void *user)
{
	volatile size_t n = 0;
	(void)user;
	CHECK(sev == PPCC_SEV_ERROR || sev == PPCC_SEV_WARNING ||
	      sev == PPCC_SEV_NOTE);
	CHECK(msg != NULL);
	n += strlen(msg);
	if (loc) {
		CHECK(loc->line >= 0 && loc->col >= 0);
		if (loc->file)
			n += strlen(loc->file);
	}
	if (getenv("PPCC_FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz diag: %d:%d: %s\n", loc ? loc->line : 0,
			loc ? loc->col : 0, msg);
	(void)n;
}

static void use_ppcc_allocator(void)
{
	static int done;
	if (!done) {
		json_set_alloc_funcs(ppcc_malloc, ppcc_free);
		done = 1;
	}
}

static double fuzz_clock(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The input as a file: a memfd and its /proc name.  -1 when the system
 * has no memfd (then the input is skipped). */
static int input_file(char *path, size_t cap, const uint8_t *data, size_t size)
{
	int fd = memfd_create("ppcc-fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t off = 0;
	while (off < size) {
		ssize_t k = write(fd, data + off, size - off);
		if (k <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)k;
	}
	snprintf(path, cap, "/proc/self/fd/%d", fd);
	return fd;
}

/* What every target opens with and closes on: the library's allocator
 * hooked and its live allocations counted, the input as a file, an
 * arena; fuzz_end frees them and checks that nothing the input made is
 * left allocated. */
typedef struct fuzz_run {
	long live;
	int fd;
	char path[64];
	ppcc_arena *a;
} fuzz_run;

static int fuzz_begin(fuzz_run *f, const uint8_t *data, size_t size)
{
	use_ppcc_allocator();
	f->live = ppcc_alloc_live();
	f->fd = input_file(f->path, sizeof f->path, data, size);
	if (f->fd < 0)
		return -1;
	f->a = ppcc_arena_new();
	CHECK(f->a != NULL);
	return 0;
}

static void fuzz_end(fuzz_run *f)
{
	ppcc_arena_free(f->a);
	close(f->fd);
	CHECK(ppcc_alloc_live() == f->live);
}

/* A status a phase may return on any input, and the diagnostic that must
 * come with an input error. */
static void check_status(int err, const ppcc_diag *d, int errors_before)
{
	CHECK(err == 0 || err == PPCC_ENOMEM || err == PPCC_EINPUT ||
	      err == PPCC_EINFEASIBLE || err == PPCC_EIO);
	if (err == PPCC_EINPUT || err == PPCC_EINFEASIBLE)
		CHECK(d->errors > errors_before);
	if (err == 0)
		CHECK(d->errors == errors_before);
}

/* One action at text[*i]: digits (its stage, into *stage), an op, and
 * digits unless the op is REDUCE_GRAD, UNSHARD or RESHARD (which have no
 * microbatch); the op's index in ops, or -1. */
enum { CSV_REDUCE_GRAD = 0, CSV_F = 5, CSV_B = 6, CSV_UNSHARD = 9,
       CSV_RESHARD = 10, CSV_STAGE_MAX = 1 << 20 };
static int csv_action(const char *text, size_t len, size_t *i, long *stage)
{
	static const char *const ops[] = {"REDUCE_GRAD", "SEND_F", "RECV_F",
					  "SEND_B", "RECV_B", "F", "B", "I",
					  "W", "UNSHARD", "RESHARD"};
	size_t at = *i;
	long st = 0;
	if (at >= len || !isdigit((unsigned char)text[at]))
		return -1;
	while (at < len && isdigit((unsigned char)text[at])) {
		if (st < CSV_STAGE_MAX)
			st = st * 10 + (text[at] - '0');
		at++;
	}
	int k;
	for (k = 0; k < (int)(sizeof ops / sizeof ops[0]); k++) {
		size_t n = strlen(ops[k]);
		if (len - at >= n && memcmp(text + at, ops[k], n) == 0) {
			at += n;
			break;
		}
	}
	if (k == (int)(sizeof ops / sizeof ops[0]))
		return -1;
	if (k > 0 && k < 9) {
		if (at >= len || !isdigit((unsigned char)text[at]))
			return -1;
		while (at < len && isdigit((unsigned char)text[at]))
			at++;
	}
	*i = at;
	*stage = st;
	return k;
}

/* What a with-comms line says of its stages (doc/design/torch-csv.md):
 * UNSHARD and RESHARD alternate on a stage, starting with UNSHARD and
 * ending resharded; in a line that gathers at all (ZeRO-3), a stage
 * computes only while unsharded; every stage the line computes has
 * exactly one REDUCE_GRAD, and nothing of it computes after that. */
enum { CSV_GATHERED = 1, CSV_REDUCED = 2, CSV_COMPUTES = 4 };
typedef struct csv_line {
	unsigned char *state; /* per stage, CSV_* bits */
	long cap;
	int gathers;          /* the line holds an UNSHARD */
} csv_line;

static int csv_line_take(csv_line *l, int op, long stage)
{
	if (stage >= CSV_STAGE_MAX)
		return 0;
	if (stage >= l->cap) {
		long cap = l->cap ? l->cap : 16;
		while (cap <= stage)
			cap *= 2;
		unsigned char *s = realloc(l->state, (size_t)cap);
		CHECK(s != NULL);
		memset(s + l->cap, 0, (size_t)(cap - l->cap));
		l->state = s;
		l->cap = cap;
	}
	unsigned char *s = &l->state[stage];
	if (op == CSV_UNSHARD) {
		if (*s & CSV_GATHERED)
			return 0;
		*s |= CSV_GATHERED;
	} else if (op == CSV_RESHARD) {
		if (!(*s & CSV_GATHERED))
			return 0;
		*s &= (unsigned char)~CSV_GATHERED;
	} else if (op == CSV_REDUCE_GRAD) {
		if (*s & CSV_REDUCED)
			return 0;
		*s |= CSV_REDUCED;
	} else if (op >= CSV_F) { /* F, B, I, W */
		if ((*s & CSV_REDUCED) || (l->gathers && !(*s & CSV_GATHERED)))
			return 0;
		*s |= CSV_COMPUTES;
	}
	return 1;
}

static int csv_line_end(csv_line *l)
{
	for (long st = 0; st < l->cap; st++) {
		unsigned char s = l->state[st];
		if ((s & CSV_GATHERED) || ((s & CSV_COMPUTES) && !(s & CSV_REDUCED)))
			return 0;
		l->state[st] = 0;
	}
	return 1;
}

/* Whether the line from text[i] holds an UNSHARD cell. */
static int csv_line_gathers(const char *text, size_t len, size_t i)
{
	const char *end = memchr(text + i, '\n', len - i);
	size_t n = end ? (size_t)(end - (text + i)) : len - i;
	return memmem(text + i, n, "UNSHARD", 7) != NULL;
}

static int csv_ok(const char *text, size_t len, int n_ranks, int with_comms,
		  csv_line *l)
{
	static const char overlap[] = ")OVERLAP_F_B";
	int lines = 0;
	size_t i = 0;
	long st;
	while (i < len) {
		int cells = 0;
		l->gathers = with_comms && csv_line_gathers(text, len, i);
		for (;;) {
			/* one cell: empty, an action, or an overlapped pair
			 * (aF..;bB..)OVERLAP_F_B */
			if (i < len && text[i] == '(') {
				i++;
				if (csv_action(text, len, &i, &st) != CSV_F ||
				    (with_comms && !csv_line_take(l, CSV_F, st)) ||
				    i >= len || text[i] != ';')
					return 0;
				i++;
				if (csv_action(text, len, &i, &st) != CSV_B ||
				    (with_comms && !csv_line_take(l, CSV_B, st)) ||
				    len - i < sizeof overlap - 1 ||
				    memcmp(text + i, overlap, sizeof overlap - 1) != 0)
					return 0;
				i += sizeof overlap - 1;
				cells++;
			} else if (i < len && isdigit((unsigned char)text[i])) {
				int op = csv_action(text, len, &i, &st);
				if (op < 0 || (with_comms && !csv_line_take(l, op, st)))
					return 0;
				cells++;
			} else if (with_comms) {
				return 0;
			}
			if (i < len && text[i] == ',') {
				i++;
				continue;
			}
			break;
		}
		if (i >= len || text[i] != '\n' || cells == 0 ||
		    (with_comms && !csv_line_end(l)))
			return 0;
		i++;
		lines++;
	}
	return lines == n_ranks;
}

int ppcc_fuzz_csv_ok(const char *text, size_t len, int n_ranks, int with_comms)
{
	csv_line l = {0};
	int ok = csv_ok(text, len, n_ranks, with_comms, &l);
	free(l.state);
	return ok;
}

int ppcc_fuzz_header_ok(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		if (!(c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)))
			return 0;
		if (c == '\\' && i + 1 < len && text[i + 1] == '\n')
			return 0;
		if (c == '?' && i + 2 < len && text[i + 1] == '?' &&
		    strchr("=/'()!<>-", text[i + 2]))
			return 0;
	}
	return 1;
}

/* A memory stream's text, or NULL when the system is out of memory. */
typedef struct membuf {
	char *text;
	size_t len;
	FILE *f;
} membuf;

static int membuf_open(membuf *m)
{
	m->text = NULL;
	m->len = 0;
	m->f = open_memstream(&m->text, &m->len);
	return m->f ? 0 : -1;
}

static void membuf_close(membuf *m)
{
	if (m->f)
		fclose(m->f);
	m->f = NULL;
}

static void membuf_free(membuf *m)
{
	membuf_close(m);
	free(m->text);
	m->text = NULL;
}

static int same_name(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* The JSON the plan wrote must read back to the same schedule. */
static void check_json_round_trip(const membuf *json, const ppcc_plan *plan)
{
	char path[64];
	int fd = input_file(path, sizeof path, (const uint8_t *)json->text,
			    json->len);
	if (fd < 0)
		return;
	ppcc_diag d = {.fn = touch_diag};
	ppcc_arena *a = ppcc_arena_new();
	CHECK(a != NULL);
	ppcc_plan back;
	int err = ppcc_read_json(&back, a, path, &d);
	CHECK(err == 0);
	CHECK(ppcc_schedule_validate(&back.best.schedule, &d, path, 10) == 0);
	CHECK(back.best.schedule.fingerprint == plan->best.schedule.fingerprint);
	CHECK(ppcc_schedule_fingerprint(&back.best.schedule) ==
	      plan->best.schedule.fingerprint);
	CHECK(same_name(back.model_name, plan->model_name));
	if (plan->layers) {
		CHECK(back.n_layers == plan->n_layers);
		for (int i = 0; i < plan->n_layers; i++)
			CHECK(same_name(back.layers[i].name, plan->layers[i].name));
	}
	ppcc_arena_free(a);
	close(fd);
}

static void check_json_text(const membuf *m)
{
	json_error_t je;
	json_t *root = json_loadb(m->text, m->len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		fprintf(stderr, "not JSON: %d:%d: %s\n", je.line, je.column, je.text);
	CHECK(root != NULL);
	json_decref(root);
}

static void check_dot_text(const membuf *m)
{
	Agraph_t *g = agmemread(m->text);
	CHECK(g != NULL);
	agclose(g);
}

/* Runs one emitter into memory; returns its status. */
static int emit_to(membuf *m, const ppcc_plan *plan, const ppcc_emit_options *o,
		   ppcc_diag *d)
{
	if (membuf_open(m) < 0)
		return PPCC_ENOMEM;
	int err;
	switch (o->format) {
	case PPCC_FMT_TEXT: err = ppcc_emit_text(m->f, plan, o); break;
	case PPCC_FMT_JSON: err = ppcc_emit_json(m->f, plan, o, d); break;
	case PPCC_FMT_DOT: err = ppcc_emit_dot(m->f, plan, o, d); break;
	case PPCC_FMT_HEADER: err = ppcc_emit_header(m->f, plan, o, d); break;
	case PPCC_FMT_TORCH_CSV: err = ppcc_emit_torch_csv(m->f, plan, o, d); break;
	case PPCC_FMT_CHROME: err = ppcc_emit_chrome(m->f, plan, o, d); break;
	default: err = PPCC_EINTERNAL; break;
	}
	membuf_close(m);
	if (!m->text)
		return PPCC_ENOMEM;
	return err;
}

static void emit_all(const ppcc_plan *plan, ppcc_diag *d)
{
	static const ppcc_emit_options variants[] = {
		{.format = PPCC_FMT_TEXT},
		{.format = PPCC_FMT_JSON},
		{.format = PPCC_FMT_DOT},
		{.format = PPCC_FMT_DOT, .view_deps = 1},
		{.format = PPCC_FMT_HEADER},
		{.format = PPCC_FMT_HEADER, .standalone = 1},
		{.format = PPCC_FMT_TORCH_CSV},
		{.format = PPCC_FMT_TORCH_CSV, .with_comms = 1},
		{.format = PPCC_FMT_CHROME},
	};
	for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++) {
		const ppcc_emit_options *o = &variants[k];
		membuf m;
		int before = d->errors;
		double t0 = fuzz_clock();
		int err = emit_to(&m, plan, o, d);
		double t1 = fuzz_clock();
		if (err == PPCC_ENOMEM) {
			membuf_free(&m);
			continue;
		}
		if (err != 0)
			fprintf(stderr, "emitter %d (variant %zu) failed: %s\n",
				o->format, k, ppcc_status_str(err));
		CHECK(err == 0);
		CHECK(d->errors == before);
		switch (o->format) {
		case PPCC_FMT_JSON:
			check_json_text(&m);
			check_json_round_trip(&m, plan);
			break;
		case PPCC_FMT_CHROME:
			check_json_text(&m);
			break;
		case PPCC_FMT_DOT:
			check_dot_text(&m);
			break;
		case PPCC_FMT_HEADER:
			CHECK(ppcc_fuzz_header_ok(m.text, m.len));
			break;
		case PPCC_FMT_TORCH_CSV:
			CHECK(ppcc_fuzz_csv_ok(m.text, m.len,
					       plan->best.schedule.n_ranks,
					       o->with_comms));
			break;
		}
		if (getenv("PPCC_FUZZ_VERBOSE"))
			fprintf(stderr, "fuzz: emitter variant %zu: %.1f ms, "
				"checks %.1f ms\n", k, (t1 - t0) * 1e3,
				(fuzz_clock() - t1) * 1e3);
		membuf_free(&m);
	}
}

/* ppcc's budget at the harness's size: an input over it must be refused
 * with a diagnostic, one below goes on to be planned. */
static int plan_budget(const ppcc_config *cfg, ppcc_diag *d)
{
	long long max_actions = PPCC_FUZZ_MAX_ACTIONS;
	const char *e = getenv("PPCC_FUZZ_MAX_ACTIONS");
	if (e && atoll(e) > 0)
		max_actions = atoll(e);
	int errors = d->errors;
	int err = ppcc_plan_budget_check(cfg, PPCC_FMT_JSON, max_actions, d);
	check_status(err, d, errors);
	CHECK(err == 0 || err == PPCC_EINPUT);
	CHECK((err == 0) == (ppcc_plan_action_bound(cfg) <= max_actions));
	return err;
}

static void check_plan(const ppcc_plan *plan, const ppcc_config *cfg,
		       ppcc_diag *d)
{
	const ppcc_schedule *s = &plan->best.schedule;
	CHECK(s->n_ranks == cfg->pipeline.stages);
	CHECK(s->n_microbatches == cfg->pipeline.microbatches);
	CHECK(ppcc_schedule_validate(s, d, "plan", 10) == 0);
	CHECK(ppcc_schedule_fingerprint(s) == s->fingerprint);
	if (plan->has_uniform) {
		/* the uniform split is simulated on best's lists: it keeps
		 * its stages and figures, and splits the layers in order */
		const ppcc_plan_variant *u = &plan->uniform;
		CHECK(u->schedule.ranks == NULL);
		CHECK(u->schedule.n_stages == s->n_stages);
		CHECK(u->stages[0].first_layer == 0);
		for (int k = 1; k < s->n_stages; k++)
			CHECK(u->stages[k].first_layer ==
			      u->stages[k - 1].last_layer + 1);
		CHECK(u->stages[s->n_stages - 1].last_layer ==
		      cfg->model.n_layers - 1);
		CHECK(isfinite(u->estimate.step_ms) && u->estimate.step_ms >= 0);
	}
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_estimate *e = &plan->best.estimate;
		CHECK(isfinite(e->busy_ms[r]) && e->busy_ms[r] >= 0);
		CHECK(isfinite(e->idle_ms[r]) && e->idle_ms[r] >= 0);
	}
	CHECK(isfinite(plan->best.estimate.step_ms));
}

int ppcc_fuzz_plan(const uint8_t *data, size_t size)
{
	fuzz_run f;
	if (fuzz_begin(&f, data, size) < 0)
		return 0;
	ppcc_arena *a = f.a;
	const char *path = f.path;
	ppcc_diag d = {.fn = touch_diag};
	ppcc_config cfg;
	ppcc_plan plan;
	int err = ppcc_config_load(&cfg, a, path, NULL, &d);
	check_status(err, &d, 0);
	if (err < 0)
		goto out;
	err = ppcc_config_check(&cfg, &d);
	check_status(err, &d, 0);
	if (err < 0 || cfg.model.n_layers > PPCC_FUZZ_MAX_LAYERS ||
	    plan_budget(&cfg, &d) < 0)
		goto out;
	double t0 = fuzz_clock();
	err = ppcc_plan_build(&plan, a, &cfg, &d);
	if (getenv("PPCC_FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz: plan %.1f ms\n", (fuzz_clock() - t0) * 1e3);
	check_status(err, &d, 0);
	if (err < 0)
		goto out;
	check_plan(&plan, &cfg, &d);
	emit_all(&plan, &d);
out:
	fuzz_end(&f);
	return 0;
}

int ppcc_fuzz_json(const uint8_t *data, size_t size)
{
	fuzz_run f;
	if (fuzz_begin(&f, data, size) < 0)
		return 0;
	ppcc_arena *a = f.a;
	const char *path = f.path;
	ppcc_diag d = {.fn = touch_diag};
	ppcc_plan plan;
	int err = ppcc_read_json(&plan, a, path, &d);
	check_status(err, &d, 0);
	if (err < 0)
		goto out;
	int before = d.errors;
	err = ppcc_schedule_validate(&plan.best.schedule, &d, path, 50);
	check_status(err, &d, before);
	if (err < 0)
		goto out;
	/* A valid schedule can be simulated and drawn. */
	ppcc_estimate est;
	err = ppcc_simulate(&est, a, &plan.best.schedule, plan.best.costs);
	CHECK(err == 0 || err == PPCC_ENOMEM);
	static const ppcc_emit_options drawn[] = {
		{.format = PPCC_FMT_CHROME},
		{.format = PPCC_FMT_DOT},
		{.format = PPCC_FMT_DOT, .view_deps = 1},
	};
	for (size_t k = 0; k < sizeof drawn / sizeof drawn[0]; k++) {
		membuf m;
		before = d.errors;
		err = emit_to(&m, &plan, &drawn[k], &d);
		/* Costs read back may be absurd (1e300 ms): an emitter may
		 * refuse them, but only with a diagnostic. */
		CHECK(err == 0 || err == PPCC_ENOMEM || d.errors > before);
		if (err == 0 && drawn[k].format == PPCC_FMT_CHROME)
			check_json_text(&m);
		if (err == 0 && drawn[k].format == PPCC_FMT_DOT)
			check_dot_text(&m);
		membuf_free(&m);
	}
out:
	fuzz_end(&f);
	return 0;
}

/* ---- checkpoint files ---------------------------------------------------- */

typedef struct ckpt_lines {
	int lines;
} ckpt_lines;

/* Every line a checkpoint read reports is one "ppcc-ckpt: FILE...:
 * error: ..." line. */
static void ckpt_diag(int rank, const char *line, void *user)
{
	ckpt_lines *l = user;
	CHECK(rank == 0 && line != NULL);
	CHECK(strncmp(line, "ppcc-ckpt: ", 11) == 0);
	CHECK(strstr(line, ": error: ") != NULL);
	CHECK(strchr(line, '\n') == NULL);
	if (getenv("PPCC_FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz diag: %s\n", line);
	l->lines++;
}

/* CRC-32 as zlib and the checkpoint trailer compute it, bit by bit. */
static uint32_t ckpt_crc32(const char *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++) {
		c ^= (unsigned char)p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
	}
	return ~c;
}

int ppcc_fuzz_checkpoint(const uint8_t *data, size_t size)
{
	if (size < 1 || size > PPCC_FUZZ_CKPT_MAX_INPUT)
		return 0;
	unsigned mode = data[0];
	int shard = mode & 1, seal = mode & 2;
	int32_t n_layers = (int32_t)((mode >> 2) & 7) + 1;
	int32_t layer = (int32_t)((mode >> 5) & 7) % n_layers;
	size_t n = size - 1;
	/* exactly the bytes given, no NUL: ASan sees a read past them */
	char *p = malloc(n + (seal ? 15 : 0) + 1);
	CHECK(p != NULL);
	memcpy(p, data + 1, n);
	if (seal) {
		char t[16];
		snprintf(t, sizeof t, "crc32 %08x\n", (unsigned)ckpt_crc32(p, n));
		memcpy(p + n, t, 15);
		n += 15;
	}
	long live = ppcc_alloc_live();
	ckpt_lines lines = {0};
	ppcc_ckpt_counts counts = {0, 0, 0};
	ppcc_ckpt_model m = {PPCC_CKPT_VERSION, "fuzz", n_layers, 0, ckpt_diag,
			     &lines, 0.0, &counts};
	int err = shard ? ppcc_ckpt_parse_shard(&m, "fuzz.shard", p, n, 3, layer)
			: ppcc_ckpt_parse_manifest(&m, "MANIFEST", p, n, 3);
	CHECK(err == 0 || err == PPCC_RT_ECHECKSUM || err == PPCC_RT_EMISMATCH ||
	      err == PPCC_RT_ENOMEM);
	CHECK(err == 0 ? lines.lines == 0 : lines.lines == 1);
	CHECK(counts.files_opened == 0 && counts.bytes_read == 0);
	CHECK(counts.bytes_allocated <= PPCC_FUZZ_CKPT_ALLOC_PER_BYTE * (uint64_t)n);
	CHECK(ppcc_alloc_live() == live);
	free(p);
	return 0;
}

int ppcc_fuzz_search(const uint8_t *data, size_t size)
{
	if (size > PPCC_FUZZ_SEARCH_BYTES)
		return 0;
	fuzz_run f;
	if (fuzz_begin(&f, data, size) < 0)
		return 0;
	ppcc_arena *a = f.a;
	const char *path = f.path;
	ppcc_diag d = {.fn = touch_diag};
	ppcc_config cfg;
	int err = ppcc_config_load(&cfg, a, path, NULL, &d);
	check_status(err, &d, 0);
	if (err < 0)
		goto out;
	ppcc_search_options so = {
		.fix = {.recompute = -1, .zero = -1, .kind = -1},
		.top = 3, .threads = 1,
		.budget = {.max_actions = PPCC_FUZZ_MAX_ACTIONS,
			   .max_work = PPCC_FUZZ_SEARCH_WORK}};
	ppcc_search_result r;
	int errors = d.errors;
	err = ppcc_search(&r, a, &cfg, &so, &d);
	check_status(err, &d, errors);
	/* the work it counted is within what it was given, whatever the
	 * answer, and a refusal said so */
	CHECK(r.work >= 0 && r.work <= PPCC_FUZZ_SEARCH_WORK);
	if (err == 0) {
		CHECK(r.n_top >= 1 && r.n_top <= 3);
		CHECK(r.considered >= r.n_top);
		for (int i = 0; i < r.n_top; i++)
			CHECK(isfinite(r.top[i].iteration_ms) &&
			      r.top[i].iteration_ms > 0);
	}
out:
	fuzz_end(&f);
	return 0;
}
