/*
 * check_emit.c - the C header, torch CSV, Chrome trace and HTML timeline
 * emitters.
 *
 * Each emitted form is read back by an independent reader and compared
 * with the schedule it came from: generated headers are compiled as C11
 * and C++17 (with $CC and $CXX) into a program that walks every rank's
 * actions, and its output must equal the actions of the same plan written
 * as JSON; CSV is parsed by a grammar written here (checked first against
 * PyTorch's own sample); Chrome traces, and the data an HTML timeline
 * embeds, are parsed with jansson.  Plans
 * come from a small generator below and from the example models.
 */
#include <check.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ppcc.h"
#include "testutil.h"

typedef int (*emit_fn)(FILE *, const ppcc_plan *, const ppcc_emit_options *,
		       ppcc_diag *);

/* ---- helpers: text, diagnostics, processes --------------------------- */

typedef struct diag_text {
	char buf[8192];
	size_t len;
} diag_text;

static void collect(ppcc_severity sev, const ppcc_loc *loc, const char *msg,
		    void *user)
{
	diag_text *t = user;
	(void)loc;
	int n = snprintf(t->buf + t->len, sizeof t->buf - t->len, "%s: %s\n",
			 sev == PPCC_SEV_ERROR ? "error" : "note", msg);
	if (n > 0 && t->len + (size_t)n < sizeof t->buf)
		t->len += (size_t)n;
}

/* Runs fn into memory; the text is the caller's to free(). */
static char *emit_text(emit_fn fn, const ppcc_plan *p,
		       const ppcc_emit_options *o, int *status, diag_text *dt)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	ppcc_diag d = {.fn = collect, .user = dt};
	*status = fn(f, p, o, &d);
	fclose(f);
	return text;
}

static char *emit_ok(emit_fn fn, const ppcc_plan *p, const ppcc_emit_options *o)
{
	diag_text dt = {{0}, 0};
	int status;
	char *text = emit_text(fn, p, o, &status, &dt);
	ck_assert_msg(status == 0, "emitter failed (%d): %s", status, dt.buf);
	return text;
}

static char *tmp_dir;

static void make_tmp_dir(void)
{
	tmp_dir = tu_mkdtemp();
	ck_assert_ptr_nonnull(tmp_dir);
}

static void remove_tmp_dir(void)
{
	tu_rmtree_free(tmp_dir);
	tmp_dir = NULL;
}

static char *tmp_path(const char *name)
{
	static char path[8][512];
	static int next;
	char *p = path[next++ % 8];
	snprintf(p, sizeof path[0], "%s/%s", tmp_dir, name);
	return p;
}

static void write_file(const char *path, const char *text)
{
	ck_assert_msg(tu_write_file(path, text) == 0, "cannot write %s", path);
}

/* Runs argv; fails the test unless it exits 0.  Returns its stdout. */
static char *run_ok(char *const argv[], const char *what)
{
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 240, argv), 0);
	if (r.status != 0)
		ck_abort_msg("%s: %s exited %d:\n%.3000s%.3000s", what, argv[0],
			     r.status, r.out, r.err);
	free(r.err);
	return r.out;
}

/* A compiler command: $CC (or $CXX) split at spaces, then the extra
 * arguments; returns the number of words. */
static int compiler_argv(char **argv, char *store, size_t store_len, int cxx)
{
	const char *env = getenv(cxx ? "CXX" : "CC");
	if (!env || !*env)
		env = cxx ? "g++" : "cc";
	/* `make` passes CC=cc; its C++ sibling is g++ unless CXX says. */
	snprintf(store, store_len, "%s", env);
	int n = 0;
	for (char *tok = strtok(store, " "); tok; tok = strtok(NULL, " "))
		argv[n++] = tok;
	return n;
}

/* Compiles the listed sources into exe (or only checks syntax when exe is
 * NULL); fails the test with the compiler's messages on error. */
static void compile(int cxx, const char *const *args, const char *exe)
{
	char store[512], *argv[64];
	int n = compiler_argv(argv, store, sizeof store, cxx);
	char std[16], werror[] = "-Werror", wall[] = "-Wall",
		     wextra[] = "-Wextra", pedantic[] = "-pedantic",
		     oflag[] = "-o", fsyntax[] = "-fsyntax-only";
	strcpy(std, cxx ? "-std=c++17" : "-std=c11");
	argv[n++] = std;
	argv[n++] = wall;
	argv[n++] = wextra;
	argv[n++] = werror;
	argv[n++] = pedantic;
	for (; *args; args++)
		argv[n++] = (char *)*args;
	if (exe) {
		argv[n++] = oflag;
		argv[n++] = (char *)exe;
	} else {
		argv[n++] = fsyntax;
	}
	argv[n] = NULL;
	free(run_ok(argv, "compiling"));
}

/* ---- plans ------------------------------------------------------------ */

/* Plans live in an arena, or (a == NULL) in calloc'd blocks released by
 * free_loose(), so that a test can build one without counting as a ppcc
 * allocation. */
static void *loose[256];
static int n_loose;

static void *plan_alloc(ppcc_arena *a, size_t n, size_t size)
{
	if (a)
		return ppcc_arena_alloc(a, n, size);
	ck_assert_int_lt(n_loose, 256);
	return loose[n_loose++] = calloc(n ? n : 1, size);
}

static void free_loose(void)
{
	while (n_loose > 0)
		free(loose[--n_loose]);
}

/* A GPipe-ordered schedule over p ranks, v chunks and m microbatches with
 * its p2p actions, backward split into I and W when split is set, and
 * made-up but distinct simulated times.  Stage s holds an equal share of
 * the layers. */
static void hand_plan(ppcc_plan *out, ppcc_arena *a, int p, int v, int m,
		      int split, const char *model, const char *const *names,
		      int n_layers)
{
	int S = p * v;
	memset(out, 0, sizeof *out);
	ppcc_stage_info *st = plan_alloc(a, (size_t)S, sizeof *st);
	ppcc_stage_cost *costs = plan_alloc(a, (size_t)S, sizeof *costs);
	ppcc_layer *layers = plan_alloc(a, (size_t)n_layers, sizeof *layers);
	ck_assert(st && costs && layers && n_layers >= S);
	for (int i = 0; i < n_layers; i++)
		layers[i].name = names[i];
	for (int s = 0; s < S; s++) {
		st[s].stage = s;
		st[s].rank = s % p;
		st[s].chunk = s / p;
		st[s].first_layer = s * n_layers / S;
		st[s].last_layer = (s + 1) * n_layers / S - 1;
		st[s].recv_bytes = s > 0 ? (UINT64_C(1) << 33) + (uint64_t)s : 0;
		st[s].send_bytes = s < S - 1 ? (UINT64_C(1) << 33) + (uint64_t)s + 1 : 0;
		costs[s].fwd_ms = 1.0;
		costs[s].bwd_ms = 2.0;
		costs[s].bwd_input_ms = 1.0;
		costs[s].bwd_weight_ms = 1.0;
		costs[s].send_f_ms = costs[s].send_b_ms = 0.1;
		costs[s].static_bytes = 1e9;
		costs[s].stash_bytes = 1e8;
	}
	ppcc_rank_schedule *ranks = plan_alloc(a, (size_t)p, sizeof *ranks);
	ppcc_estimate *e = &out->best.estimate;
	e->start_ms = plan_alloc(a, (size_t)p, sizeof *e->start_ms);
	e->end_ms = plan_alloc(a, (size_t)p, sizeof *e->end_ms);
	e->busy_ms = plan_alloc(a, (size_t)p, sizeof(double));
	e->idle_ms = plan_alloc(a, (size_t)p, sizeof(double));
	e->peak_memory_bytes = plan_alloc(a, (size_t)p, sizeof(double));
	ck_assert(ranks && e->start_ms && e->end_ms && e->busy_ms);
	for (int r = 0; r < p; r++) {
		int cap = v * m * 8, n = 0;
		ppcc_action *acts = plan_alloc(a, (size_t)cap, sizeof *acts);
		ck_assert_ptr_nonnull(acts);
#define ADD(o, s_, mb_, peer_, bytes_) \
	(acts[n++] = (ppcc_action){(o), (s_), (mb_), (peer_), (bytes_)})
		for (int c = 0; c < v; c++) {
			int s = c * p + r;
			for (int mb = 0; mb < m; mb++) {
				if (s > 0)
					ADD(PPCC_OP_RECV_F, s, mb, (s - 1) % p, st[s].recv_bytes);
				ADD(PPCC_OP_F, s, mb, -1, 0);
				if (s < S - 1)
					ADD(PPCC_OP_SEND_F, s, mb, (s + 1) % p, st[s].send_bytes);
			}
		}
		for (int c = v - 1; c >= 0; c--) {
			int s = c * p + r;
			for (int mb = 0; mb < m; mb++) {
				if (s < S - 1)
					ADD(PPCC_OP_RECV_B, s, mb, (s + 1) % p, st[s].send_bytes);
				ADD(split ? PPCC_OP_I : PPCC_OP_B, s, mb, -1, 0);
				if (s > 0)
					ADD(PPCC_OP_SEND_B, s, mb, (s - 1) % p, st[s].recv_bytes);
				if (split)
					ADD(PPCC_OP_W, s, mb, -1, 0);
			}
		}
#undef ADD
		ranks[r] = (ppcc_rank_schedule){r, n, acts};
		e->start_ms[r] = plan_alloc(a, (size_t)n, sizeof(double));
		e->end_ms[r] = plan_alloc(a, (size_t)n, sizeof(double));
		ck_assert(e->start_ms[r] && e->end_ms[r]);
		for (int i = 0; i < n; i++) {
			e->start_ms[r][i] = 0.37 * r + 1.125 * i + 0.001;
			e->end_ms[r][i] = e->start_ms[r][i] +
					  (acts[i].op < PPCC_OP_SEND_F ? 1.0 / 3 : 0.05);
			if (e->end_ms[r][i] > e->step_ms)
				e->step_ms = e->end_ms[r][i];
		}
		e->busy_ms[r] = 10.5 + r;
		e->idle_ms[r] = 2.25;
		e->peak_memory_bytes[r] = 3.5e9 + r;
	}
	e->bubble_fraction = 0.25;
	e->bubble_analytic = NAN;
	ppcc_schedule *sc = &out->best.schedule;
	*sc = (ppcc_schedule){PPCC_SCHEDULE_VERSION,
			      v > 1 ? PPCC_SCHED_INTERLEAVED : PPCC_SCHED_GPIPE,
			      p, v, S, m, st, ranks, 0};
	sc->fingerprint = ppcc_schedule_fingerprint(sc);
	out->best.stages = st;
	out->best.costs = costs;
	out->model_name = model;
	out->n_layers = n_layers;
	out->layers = layers;
}

static const char *const plain_names[] = {
	"embed", "block.0", "block.1", "block.2", "block.3", "block.4",
	"block.5", "block.6", "block.7", "head",
};

static int example_plan(ppcc_plan *out, ppcc_arena *a, const char *file,
			int kind, int chunks)
{
	char path[512];
	ppcc_config *cfg = ppcc_arena_alloc(a, 1, sizeof *cfg);
	diag_text dt = {{0}, 0};
	ppcc_diag d = {.fn = collect, .user = &dt};
	snprintf(path, sizeof path, "%s/examples/%s", tu_src(), file);
	ck_assert_ptr_nonnull(cfg);
	int err = ppcc_config_load(cfg, a, path, NULL, &d);
	ck_assert_msg(err == 0, "%s: %s", path, dt.buf);
	if (kind >= 0) {
		cfg->pipeline.kind = kind;
		cfg->pipeline.chunks = chunks;
	}
	if ((err = ppcc_config_check(cfg, &d)) == 0)
		err = ppcc_plan_build(out, a, cfg, &d);
	ck_assert_msg(err == 0, "%s: %s", path, dt.buf);
	return err;
}

/* The example plans every emitter is run on. */
typedef struct example {
	const char *file;
	int kind, chunks; /* kind -1: as the file says */
} example;

static const example examples[] = {
	{"tiny.yaml", -1, 0},
	{"tiny.yaml", PPCC_SCHED_GPIPE, 1},
	{"tiny.yaml", PPCC_SCHED_INTERLEAVED, 2},
	{"gpt3-175b.yaml", -1, 0},
	{"llama2-70b.yaml", -1, 0},
	{"hetero.yaml", -1, 0},
	{"tiny.yaml", PPCC_SCHED_DUALPIPE_V, 2},
};
#define N_EXAMPLES ((int)(sizeof examples / sizeof examples[0]))

/* ---- action lines: the form every reader here reduces a schedule to -- */

typedef struct lines {
	char *text;
	size_t len, cap;
} lines;

static void lines_add(lines *l, int r, int i, const char *op, long long stage,
		      long long mb, long long peer, unsigned long long bytes)
{
	char buf[160];
	int n = snprintf(buf, sizeof buf, "%d %d %s %lld %lld %lld %llu\n", r, i,
			 op, stage, mb, peer, bytes);
	if (l->len + (size_t)n + 1 > l->cap) {
		l->cap = l->cap ? 2 * l->cap + (size_t)n : 4096;
		l->text = realloc(l->text, l->cap);
		ck_assert_ptr_nonnull(l->text);
	}
	memcpy(l->text + l->len, buf, (size_t)n + 1);
	l->len += (size_t)n;
}

static char *schedule_lines(const ppcc_schedule *s)
{
	lines l = {0};
	for (int r = 0; r < s->n_ranks; r++)
		for (int i = 0; i < s->ranks[r].n_actions; i++) {
			const ppcc_action *a = &s->ranks[r].actions[i];
			lines_add(&l, r, i, ppcc_op_name(a->op), a->stage, a->mb,
				  a->peer, (unsigned long long)a->bytes);
		}
	return l.text ? l.text : strdup("");
}

/* The actions of a plan as ppcc_emit_json writes them, read with jansson:
 * ranks[r].actions[i] = {op, stage, mb, [peer, bytes]}. */
static char *json_lines(const ppcc_plan *p)
{
	ppcc_emit_options o = {.format = PPCC_FMT_JSON};
	char *text = emit_ok(ppcc_emit_json, p, &o);
	json_error_t jerr;
	json_t *root = json_loads(text, 0, &jerr);
	ck_assert_msg(root != NULL, "JSON %d:%d: %s", jerr.line, jerr.column,
		      jerr.text);
	free(text);
	json_t *ranks = json_object_get(root, "ranks");
	ck_assert(json_is_array(ranks));
	lines l = {0};
	for (size_t r = 0; r < json_array_size(ranks); r++) {
		json_t *acts = json_object_get(json_array_get(ranks, r), "actions");
		ck_assert(json_is_array(acts));
		for (size_t i = 0; i < json_array_size(acts); i++) {
			json_t *a = json_array_get(acts, i);
			json_t *op = json_object_get(a, "op");
			json_t *peer = json_object_get(a, "peer");
			json_t *bytes = json_object_get(a, "bytes");
			ck_assert(json_is_string(op));
			lines_add(&l, (int)r, (int)i, json_string_value(op),
				  json_integer_value(json_object_get(a, "stage")),
				  json_integer_value(json_object_get(a, "mb")),
				  peer ? json_integer_value(peer) : -1,
				  bytes ? (unsigned long long)json_integer_value(bytes) : 0);
		}
	}
	json_decref(root);
	return l.text ? l.text : strdup("");
}

/* ---- the header walker ----------------------------------------------- */

/* A program that includes the generated header and prints what it holds:
 * the fingerprint (and, with RECOMPUTE, ppcc_schedule_fingerprint of the
 * header's own schedule), the names as hex, the stages, then one line
 * per action in the format of lines_add.  `extra` runs at the end. */
static const char walker_template[] =
	"#include <inttypes.h>\n"
	"#include <stdio.h>\n"
	"#include \"gen.h\"\n"
	"#define CAT2(a, b) a##_##b\n"
	"#define CAT(a, b) CAT2(a, b)\n"
	"#define PX(n) CAT(PREFIX, n)\n"
	"#ifdef STANDALONE\n"
	"typedef PX(schedule_ir) sched_t;\n"
	"#else\n"
	"typedef ppcc_schedule sched_t;\n"
	"#endif\n"
	"#ifdef RECOMPUTE\n"
	"uint64_t ppcc_schedule_fingerprint(const ppcc_schedule *s);\n"
	"#endif\n"
	"static const char *const op_names[] = {\"F\", \"B\", \"I\", \"W\",\n"
	"\t\"SEND_F\", \"RECV_F\", \"SEND_B\", \"RECV_B\", \"OVERLAP_F_B\"};\n"
	"static void hex(const char *s)\n"
	"{\n"
	"\tfor (; *s; s++)\n"
	"\t\tprintf(\"%%02x\", (unsigned)(unsigned char)*s);\n"
	"\tprintf(\"\\n\");\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"\tconst sched_t *s = &PX(schedule);\n"
	"\tprintf(\"fingerprint %%016\" PRIx64 \"\\n\", s->fingerprint);\n"
	"#ifdef RECOMPUTE\n"
	"\tprintf(\"recomputed %%016\" PRIx64 \"\\n\", ppcc_schedule_fingerprint(s));\n"
	"#endif\n"
	"\tprintf(\"model \");\n"
	"\thex(PX(model_name));\n"
	"#ifdef HAS_NAMES\n"
	"\tfor (int i = 0; i < CAT(UPREFIX, N_LAYERS); i++) {\n"
	"\t\tprintf(\"layer %%d \", i);\n"
	"\t\thex(PX(layer_names)[i]);\n"
	"\t}\n"
	"\tfor (int i = 0; i < s->n_stages; i++)\n"
	"\t\tif (PX(stage_layer_names)[i] !=\n"
	"\t\t    PX(layer_names) + s->stages[i].first_layer)\n"
	"\t\t\tprintf(\"stage %%d names wrong\\n\", i);\n"
	"#endif\n"
	"\tprintf(\"kind %%d ranks %%d chunks %%d stages %%d mb %%d\\n\", (int)s->kind,\n"
	"\t       (int)s->n_ranks, (int)s->n_chunks, (int)s->n_stages,\n"
	"\t       (int)s->n_microbatches);\n"
	"\tfor (int i = 0; i < s->n_stages; i++)\n"
	"\t\tprintf(\"stage %%d %%d %%d %%d %%d %%\" PRIu64 \" %%\" PRIu64 \"\\n\",\n"
	"\t\t       (int)s->stages[i].stage, (int)s->stages[i].rank,\n"
	"\t\t       (int)s->stages[i].chunk, (int)s->stages[i].first_layer,\n"
	"\t\t       (int)s->stages[i].last_layer, s->stages[i].recv_bytes,\n"
	"\t\t       s->stages[i].send_bytes);\n"
	"%s\n"
	"\treturn 0;\n"
	"}\n";

/* The action loop, kept apart so the template above stays readable. */
static const char walker_actions[] =
	"\tfor (int r = 0; r < s->n_ranks; r++)\n"
	"\t\tfor (int i = 0; i < s->ranks[r].n_actions; i++) {\n"
	"\t\t\tprintf(\"%d %d %s %d %d %d %\" PRIu64 \"\\n\", r, i,\n"
	"\t\t\t       op_names[s->ranks[r].actions[i].op],\n"
	"\t\t\t       (int)s->ranks[r].actions[i].stage,\n"
	"\t\t\t       (int)s->ranks[r].actions[i].mb,\n"
	"\t\t\t       (int)s->ranks[r].actions[i].peer,\n"
	"\t\t\t       s->ranks[r].actions[i].bytes);\n"
	"\t\t}\n";

/* What the walker prints, up to the action lines (which follow). */
typedef struct walk {
	char *out;          /* the whole output; free() */
	const char *actions; /* into out: the first action line */
} walk;

typedef struct walk_opts {
	const char *prefix; /* NULL: the default */
	int standalone;
	int cxx;
	int recompute; /* link src/util/diag.c and recompute the fingerprint */
	const char *extra; /* code appended to main */
} walk_opts;

static void upper_of(char *dst, const char *src)
{
	for (; *src; src++)
		*dst++ = (char)(*src >= 'a' && *src <= 'z' ? *src - 32 : *src);
	*dst = 0;
}

/* Emits the header of p, compiles the walker against it and runs it. */
static walk walk_header(const ppcc_plan *p, const walk_opts *wo)
{
	ppcc_emit_options o = {.format = PPCC_FMT_HEADER,
			       .standalone = wo->standalone,
			       .prefix = wo->prefix};
	const char *prefix = wo->prefix ? wo->prefix : "ppcc_plan";
	char *header = emit_ok(ppcc_emit_header, p, &o);
	write_file(tmp_path("gen.h"), header);
	free(header);

	size_t cap = sizeof walker_template + sizeof walker_actions +
		     (wo->extra ? strlen(wo->extra) : 0) + 64;
	char *body = malloc(cap), *src = malloc(cap + 64);
	ck_assert(body && src);
	snprintf(body, cap, "%s%s", walker_actions, wo->extra ? wo->extra : "");
	snprintf(src, cap + 64, walker_template, body);
	free(body);
	const char *src_name = wo->cxx ? "walk.cc" : "walk.c";
	write_file(tmp_path(src_name), src);
	free(src);

	char def_prefix[128], def_uprefix[128], up[80], inc[600], srcinc[600],
		diag_c[600];
	upper_of(up, prefix);
	snprintf(def_prefix, sizeof def_prefix, "-DPREFIX=%s", prefix);
	snprintf(def_uprefix, sizeof def_uprefix, "-DUPREFIX=%s", up);
	snprintf(inc, sizeof inc, "-I%s/include", tu_src());
	snprintf(srcinc, sizeof srcinc, "-I%s/src", tu_src());
	snprintf(diag_c, sizeof diag_c, "%s/src/util/diag.c", tu_src());
	const char *args[16];
	int n = 0;
	args[n++] = def_prefix;
	args[n++] = def_uprefix;
	if (wo->standalone)
		args[n++] = "-DSTANDALONE";
	else
		args[n++] = inc;
	if (p->layers && p->n_layers > 0)
		args[n++] = "-DHAS_NAMES";
	args[n++] = tmp_path(src_name);
	if (wo->recompute) {
		args[n++] = "-DRECOMPUTE";
		args[n++] = srcinc;
		args[n++] = inc;
		args[n++] = "-D_POSIX_C_SOURCE=200809L";
		args[n++] = diag_c;
		args[n++] = "-lm";
	}
	args[n] = NULL;
	char exe[300];
	snprintf(exe, sizeof exe, "%s", tmp_path("walk"));
	compile(wo->cxx, args, exe);
	char *argv[] = {exe, NULL};
	walk w;
	w.out = run_ok(argv, "the walker");
	/* action lines start after the last "stage " line */
	const char *k = strstr(w.out, "\nkind ");
	ck_assert_ptr_nonnull(k);
	const char *line = strchr(k + 1, '\n') + 1;
	while (strncmp(line, "stage ", 6) == 0)
		line = strchr(line, '\n') + 1;
	w.actions = line;
	return w;
}

/* Only the action lines of a walk whose extra code printed nothing. */
static void assert_actions_equal(const walk *w, const char *expected,
				 const char *what)
{
	if (strcmp(w->actions, expected) != 0) {
		size_t i = 0;
		while (w->actions[i] && w->actions[i] == expected[i])
			i++;
		size_t from = i > 60 ? i - 60 : 0;
		ck_abort_msg("%s: the header's actions differ at byte %zu:\n"
			     "header: %.200s\nexpect: %.200s",
			     what, i, w->actions + from, expected + from);
	}
}

/* Whether [from, to) holds needle. */
static int contains(const char *from, const char *to, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *c = from; c + n <= to; c++)
		if (memcmp(c, needle, n) == 0)
			return 1;
	return 0;
}

static void hex_line(char *dst, const char *s)
{
	for (; *s; s++, dst += 2)
		sprintf(dst, "%02x", (unsigned)(unsigned char)*s);
	*dst = 0;
}

/* ---- header tests ---------------------------------------------------- */

START_TEST(header_compiles_as_c11_and_cxx17)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan plans[3];
	hand_plan(&plans[0], a, 4, 1, 6, 0, "tiny", plain_names, 10);
	hand_plan(&plans[1], a, 2, 2, 3, 0, "v2", plain_names, 10);
	hand_plan(&plans[2], a, 3, 1, 2, 1, "split", plain_names, 10);
	make_tmp_dir();
	for (int i = 0; i < 3; i++)
		for (int standalone = 0; standalone < 2; standalone++) {
			ppcc_emit_options o = {.format = PPCC_FMT_HEADER,
					       .standalone = standalone};
			char *h = emit_ok(ppcc_emit_header, &plans[i], &o);
			write_file(tmp_path("gen.h"), h);
			free(h);
			write_file(tmp_path("use.c"), "#include \"gen.h\"\n");
			write_file(tmp_path("use.cc"), "#include \"gen.h\"\n");
			char inc[600];
			snprintf(inc, sizeof inc, "-I%s/include", tu_src());
			/* standalone: without ppcc's include directory */
			const char *c_args[] = {tmp_path("use.c"), inc, NULL};
			const char *cc_args[] = {tmp_path("use.cc"), inc, NULL};
			if (standalone)
				c_args[1] = cc_args[1] = NULL;
			compile(0, c_args, NULL);
			compile(1, cc_args, NULL);
		}
	remove_tmp_dir();
	ppcc_arena_free(a);
}
END_TEST

START_TEST(header_walk_matches_json_actions)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	hand_plan(&p, a, 3, 2, 4, 0, "walk", plain_names, 10);
	make_tmp_dir();
	char *expected = json_lines(&p);
	char *direct = schedule_lines(&p.best.schedule);
	ck_assert_str_eq(expected, direct); /* the JSON reader itself */
	for (int cxx = 0; cxx < 2; cxx++) {
		walk_opts wo = {.cxx = cxx};
		walk w = walk_header(&p, &wo);
		assert_actions_equal(&w, expected, cxx ? "C++" : "C");
		free(w.out);
	}
	free(expected);
	free(direct);
	remove_tmp_dir();
	ppcc_arena_free(a);
}
END_TEST

START_TEST(header_standalone_walks_same_actions_without_ppcc_headers)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	hand_plan(&p, a, 2, 1, 5, 1, "standalone", plain_names, 10);
	make_tmp_dir();
	char *expected = json_lines(&p);
	walk_opts wo = {.standalone = 1, .prefix = "trainer_plan"};
	walk w = walk_header(&p, &wo);
	assert_actions_equal(&w, expected, "standalone");
	char fp[64];
	snprintf(fp, sizeof fp, "fingerprint %016" PRIx64 "\n",
		 p.best.schedule.fingerprint);
	ck_assert_msg(strncmp(w.out, fp, strlen(fp)) == 0, "%.40s", w.out);
	free(w.out);
	free(expected);
	remove_tmp_dir();
	ppcc_arena_free(a);
}
END_TEST

START_TEST(header_fingerprint_equals_fingerprint_of_its_schedule)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	hand_plan(&p, a, 4, 2, 3, 0, "fp", plain_names, 10);
	make_tmp_dir();
	walk_opts wo = {.recompute = 1};
	walk w = walk_header(&p, &wo);
	char want[128];
	uint64_t fp = ppcc_schedule_fingerprint(&p.best.schedule);
	snprintf(want, sizeof want, "fingerprint %016" PRIx64 "\nrecomputed %016" PRIx64 "\n",
		 fp, fp);
	ck_assert_msg(strncmp(w.out, want, strlen(want)) == 0, "got %.80s want %s",
		      w.out, want);
	free(w.out);
	remove_tmp_dir();
	ppcc_arena_free(a);
}
END_TEST

/* Names that break naive escaping or naive identifiers. */
static char long_name[20 * 1024 + 1];

static const char *hostile_names[] = {
	"\"quoted\"", "back\\slash", "trailing\\", "new\nline", "end */ here",
	"tri?\?/graph", "?\?=?\?(?\?)?\?<?\?>?\?'?\?!?\?-", "node", "<: :> <% %> %: %:%:",
	"int", "asm", "9lives", NULL /* long_name */, "na\xc3\xafve \xe2\x82\xac",
	"a-b", "a b", "a_b", "_Bool", "__x", "class", "and", "", "tab\there",
	"bell\a\x01\x1f\x7f\xff", "int_", "\\x41\\101", "Digraph%:", "x/*y*/z",
	"0", "alignas", "co_await", "ctl\x01" "cafe\x02" "7",
};
#define N_HOSTILE ((int)(sizeof hostile_names / sizeof hostile_names[0]))

static void fill_long_name(void)
{
	for (size_t i = 0; i < sizeof long_name - 1; i++)
		long_name[i] = "ab\"\\?\n\xe2\x82\xac*/"[i % 11];
	long_name[sizeof long_name - 1] = 0;
	for (int i = 0; i < N_HOSTILE; i++)
		if (!hostile_names[i])
			hostile_names[i] = long_name;
}

START_TEST(header_hostile_names_compile_and_survive_exactly)
{
	fill_long_name();
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	const char *model = "m\"o\\d?\?/el */\n\xe2\x82\xac";
	hand_plan(&p, a, 4, 1, 2, 0, model, hostile_names, N_HOSTILE);
	make_tmp_dir();

	ppcc_emit_options o = {.format = PPCC_FMT_HEADER};
	char *h = emit_ok(ppcc_emit_header, &p, &o);
	for (const unsigned char *c = (const unsigned char *)h; *c; c++)
		ck_assert_msg(*c == '\n' || *c == '\t' || (*c >= 0x20 && *c < 0x7f),
			      "non-ASCII or control byte 0x%02x in the header", *c);
	ck_assert_msg(strstr(h, "?\?") == NULL, "a trigraph-like ?? in the header");
	/* user text never reaches a comment: no comment holds a name's marker */
	for (const char *c = strstr(h, "/*"); c; c = strstr(c + 2, "/*")) {
		const char *end = strstr(c + 2, "*/");
		ck_assert_ptr_nonnull(end);
		ck_assert_msg(!contains(c, end, "lives") && !contains(c, end, "quoted"),
			      "a name inside a comment: %.80s", c);
	}
	free(h);

	/* the sanitized layer identifiers, as documented in emit/header.c */
	static const char extra[] =
		"\tprintf(\"ids %d %d %d %d %d %d %d %d %d %d %d %d %d\\n\",\n"
		"\t       PPCC_PLAN_LAYER_quoted, PPCC_PLAN_LAYER_int_,\n"
		"\t       PPCC_PLAN_LAYER_asm_, PPCC_PLAN_LAYER_n9lives,\n"
		"\t       PPCC_PLAN_LAYER_a_b, PPCC_PLAN_LAYER_a_b_2,\n"
		"\t       PPCC_PLAN_LAYER_a_b_3, PPCC_PLAN_LAYER_Bool,\n"
		"\t       PPCC_PLAN_LAYER_class_, PPCC_PLAN_LAYER_layer,\n"
		"\t       PPCC_PLAN_LAYER_int_2, PPCC_PLAN_LAYER_n0,\n"
		"\t       PPCC_PLAN_LAYER_node);\n";
	static const char want_ids[] = "ids 0 9 10 11 14 15 16 17 19 6 24 28 7\n";
	for (int cxx = 0; cxx < 2; cxx++) {
		walk_opts wo = {.cxx = cxx, .extra = extra};
		walk w = walk_header(&p, &wo);
		char *hexbuf = malloc(2 * sizeof long_name + 64);
		ck_assert_ptr_nonnull(hexbuf);
		strcpy(hexbuf, "model ");
		hex_line(hexbuf + 6, model);
		strcat(hexbuf, "\n");
		ck_assert_msg(strstr(w.out, hexbuf) != NULL, "model name changed");
		for (int i = 0; i < N_HOSTILE; i++) {
			int n = sprintf(hexbuf, "layer %d ", i);
			hex_line(hexbuf + n, hostile_names[i]);
			strcat(hexbuf, "\n");
			ck_assert_msg(strstr(w.out, hexbuf) != NULL,
				      "layer %d name changed (%s)", i,
				      cxx ? "C++" : "C");
		}
		ck_assert_msg(strstr(w.out, "names wrong") == NULL, "%s", w.out);
		ck_assert_msg(strstr(w.out, want_ids) != NULL, "identifiers: %s",
			      strstr(w.out, "ids") ? strstr(w.out, "ids") : "none");
		char *expected = schedule_lines(&p.best.schedule);
		/* the extra line follows the actions */
		char *ids = strstr(w.out, "ids ");
		*ids = 0;
		assert_actions_equal(&w, expected, "hostile");
		free(expected);
		free(hexbuf);
		free(w.out);
	}
	/* and standalone, under another prefix */
	walk_opts wo = {.standalone = 1, .prefix = "Hostile9"};
	walk w = walk_header(&p, &wo);
	char *expected = schedule_lines(&p.best.schedule);
	assert_actions_equal(&w, expected, "hostile standalone");
	free(expected);
	free(w.out);
	remove_tmp_dir();
	ppcc_arena_free(a);
}
END_TEST

START_TEST(header_standalone_types_have_the_layout_of_schedule_h)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	hand_plan(&p, a, 2, 1, 2, 0, "layout", plain_names, 10);
	make_tmp_dir();
	ppcc_emit_options o = {.format = PPCC_FMT_HEADER, .standalone = 1,
			       .prefix = "own"};
	char *h = emit_ok(ppcc_emit_header, &p, &o);
	write_file(tmp_path("own.h"), h);
	free(h);
	o.standalone = 0;
	o.prefix = "ir";
	h = emit_ok(ppcc_emit_header, &p, &o);
	write_file(tmp_path("ir.h"), h);
	free(h);
	/* Both headers in one unit (no clashing names), and the standalone
	 * types field for field the same as <ppcc/schedule.h>'s. */
	static const char both[] =
		"#include <stddef.h>\n"
		"#include \"own.h\"\n"
		"#include \"ir.h\"\n"
		"#define SAME(T, U, f) (offsetof(T, f) == offsetof(U, f) && "
		"sizeof(((T *)0)->f) == sizeof(((U *)0)->f))\n"
		"_Static_assert(sizeof(own_action) == sizeof(ppcc_action) &&\n"
		"\tSAME(own_action, ppcc_action, op) && SAME(own_action, ppcc_action, stage) &&\n"
		"\tSAME(own_action, ppcc_action, mb) && SAME(own_action, ppcc_action, peer) &&\n"
		"\tSAME(own_action, ppcc_action, bytes), \"action\");\n"
		"_Static_assert(sizeof(own_rank_schedule) == sizeof(ppcc_rank_schedule) &&\n"
		"\tSAME(own_rank_schedule, ppcc_rank_schedule, rank) &&\n"
		"\tSAME(own_rank_schedule, ppcc_rank_schedule, n_actions) &&\n"
		"\tSAME(own_rank_schedule, ppcc_rank_schedule, actions), \"rank\");\n"
		"_Static_assert(sizeof(own_stage_info) == sizeof(ppcc_stage_info) &&\n"
		"\tSAME(own_stage_info, ppcc_stage_info, first_layer) &&\n"
		"\tSAME(own_stage_info, ppcc_stage_info, last_layer) &&\n"
		"\tSAME(own_stage_info, ppcc_stage_info, recv_bytes) &&\n"
		"\tSAME(own_stage_info, ppcc_stage_info, send_bytes), \"stage\");\n"
		"_Static_assert(sizeof(own_schedule_ir) == sizeof(ppcc_schedule) &&\n"
		"\tSAME(own_schedule_ir, ppcc_schedule, n_microbatches) &&\n"
		"\tSAME(own_schedule_ir, ppcc_schedule, stages) &&\n"
		"\tSAME(own_schedule_ir, ppcc_schedule, ranks) &&\n"
		"\tSAME(own_schedule_ir, ppcc_schedule, fingerprint), \"schedule\");\n"
		"_Static_assert((int)OWN_OP_SEND_B == (int)PPCC_OP_SEND_B && (int)OWN_OP_W == (int)PPCC_OP_W &&\n"
		"\tOWN_OP_COUNT == PPCC_OP_COUNT &&\n"
		"\t(int)OWN_SCHED_INTERLEAVED == (int)PPCC_SCHED_INTERLEAVED &&\n"
		"\t(int)OWN_SCHED_COUNT == (int)PPCC_SCHED_COUNT && OWN_FINGERPRINT == IR_FINGERPRINT,\n"
		"\t\"constants\");\n";
	write_file(tmp_path("both.c"), both);
	char inc[600];
	snprintf(inc, sizeof inc, "-I%s/include", tu_src());
	const char *args[] = {inc, tmp_path("both.c"), NULL};
	compile(0, args, NULL);
	remove_tmp_dir();
	ppcc_arena_free(a);
}
END_TEST

START_TEST(header_rejects_prefixes_that_are_not_safe_identifiers)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	hand_plan(&p, a, 2, 1, 2, 0, "prefix", plain_names, 10);
	static const char *const bad[] = {
		"", "1abc", "a-b", "_x", "x_", "a__b", "a b", "caf\xc3\xa9",
		"ppcc", "Ppcc", "ppcc_rank", "ppcc_schedule",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ppcc_emit_options o = {.format = PPCC_FMT_HEADER, .prefix = bad[i]};
		diag_text dt = {{0}, 0};
		int status;
		char *text = emit_text(ppcc_emit_header, &p, &o, &status, &dt);
		ck_assert_msg(status == PPCC_EINPUT, "prefix '%s' accepted", bad[i]);
		ck_assert_msg(strstr(dt.buf, "error: ") && strstr(dt.buf, "prefix"),
			      "no diagnostic for '%s': %s", bad[i], dt.buf);
		ck_assert_msg(text[0] == 0, "output written for a bad prefix");
		free(text);
	}
	static const char *const good[] = {"P", "my_plan", "plan2", "ppcc_plan",
					   "ppcc_op"};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		ppcc_emit_options o = {.format = PPCC_FMT_HEADER, .prefix = good[i]};
		free(emit_ok(ppcc_emit_header, &p, &o));
	}
	ppcc_arena_free(a);
}
END_TEST

/* ---- torch CSV: a reader for the format -------------------------------- */

enum { TORCH_UNSHARD = 100, TORCH_RESHARD, TORCH_REDUCE_GRAD };

typedef struct csv_action {
	int stage, op, mb; /* mb -1: none */
} csv_action;

typedef struct csv_cell {
	int n;       /* 0: an empty cell (idle); 1; 2 for OVERLAP_F_B */
	csv_action sub[2];
} csv_cell;

typedef struct csv_row {
	csv_cell *cells;
	int n;
} csv_row;

typedef struct csv_doc {
	csv_row rows[64];
	int n_rows;
} csv_doc;

/* action := digits name digits? ; returns 0 or -1 */
static int parse_action(const char *s, size_t n, csv_action *out)
{
	static const struct {
		const char *name;
		int op;
	} names[] = {
		{"SEND_F", PPCC_OP_SEND_F}, {"RECV_F", PPCC_OP_RECV_F},
		{"SEND_B", PPCC_OP_SEND_B}, {"RECV_B", PPCC_OP_RECV_B},
		{"UNSHARD", TORCH_UNSHARD}, {"RESHARD", TORCH_RESHARD},
		{"REDUCE_GRAD", TORCH_REDUCE_GRAD},
		{"F", PPCC_OP_F}, {"B", PPCC_OP_B}, {"I", PPCC_OP_I}, {"W", PPCC_OP_W},
	};
	size_t i = 0;
	int stage = 0;
	if (n == 0 || s[0] < '0' || s[0] > '9')
		return -1;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		stage = stage * 10 + (s[i] - '0');
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
		size_t len = strlen(names[k].name);
		if (n - i < len || memcmp(s + i, names[k].name, len) != 0)
			continue;
		size_t j = i + len;
		int mb = -1;
		if (j < n)
			mb = 0;
		for (; j < n; j++) {
			if (s[j] < '0' || s[j] > '9')
				return -1;
			mb = mb * 10 + (s[j] - '0');
		}
		int needs_mb = names[k].op < TORCH_UNSHARD;
		if (needs_mb != (mb >= 0))
			return -1;
		*out = (csv_action){stage, names[k].op, mb};
		return 0;
	}
	return -1;
}

/* cell := "" | action | "(" action ";" action ")OVERLAP_F_B" */
static int parse_cell(const char *s, size_t n, csv_cell *out)
{
	static const char overlap[] = ")OVERLAP_F_B";
	size_t ol = sizeof overlap - 1;
	out->n = 0;
	if (n == 0)
		return 0;
	if (s[0] == '(') {
		if (n < ol + 2 || memcmp(s + n - ol, overlap, ol) != 0)
			return -1;
		const char *semi = memchr(s, ';', n);
		if (!semi)
			return -1;
		size_t a_len = (size_t)(semi - s) - 1;
		size_t b_len = n - ol - (size_t)(semi - s) - 1;
		if (parse_action(s + 1, a_len, &out->sub[0]) < 0 ||
		    parse_action(semi + 1, b_len, &out->sub[1]) < 0)
			return -1;
		out->n = 2;
		return 0;
	}
	if (parse_action(s, n, &out->sub[0]) < 0)
		return -1;
	out->n = 1;
	return 0;
}

/* The whole document: one row per line ("\n", a final newline). */
static void parse_csv(csv_doc *doc, const char *text)
{
	memset(doc, 0, sizeof *doc);
	const char *line = text;
	while (*line) {
		const char *end = strchr(line, '\n');
		ck_assert_msg(end != NULL, "a line without its newline");
		ck_assert_int_lt(doc->n_rows, 64);
		csv_row *row = &doc->rows[doc->n_rows++];
		int cap = 16;
		row->cells = malloc((size_t)cap * sizeof *row->cells);
		const char *cell = line;
		if (end == line) { /* an empty line is a rank with no cells */
			line = end + 1;
			continue;
		}
		for (;;) {
			const char *comma = memchr(cell, ',', (size_t)(end - cell));
			const char *cell_end = comma ? comma : end;
			if (row->n == cap) {
				cap *= 2;
				row->cells = realloc(row->cells, (size_t)cap * sizeof *row->cells);
			}
			ck_assert_msg(parse_cell(cell, (size_t)(cell_end - cell),
						 &row->cells[row->n]) == 0,
				      "bad cell '%.*s' in row %d",
				      (int)(cell_end - cell), cell, doc->n_rows - 1);
			row->n++;
			if (!comma)
				break;
			cell = comma + 1;
		}
		line = end + 1;
	}
}

static void free_csv(csv_doc *doc)
{
	for (int r = 0; r < doc->n_rows; r++)
		free(doc->rows[r].cells);
}

/* PyTorch's test artifact dualpipev_4rank_10mb.csv
 * (test/distributed/pipelining/artifacts/ in pytorch/pytorch), verbatim:
 * the schedule DualPipeV writes for 4 ranks and 10 microbatches. */
static const char dualpipev_sample[] =
	"0F0,0F1,0F2,0F3,0F4,0F5,0F6,7F0,7I0,7W0,7F1,7I1,7W1,7F2,7I2,7W2,"
	"7F3,(0F7;7B3)OVERLAP_F_B,(7F4;0B0)OVERLAP_F_B,"
	"(0F8;7B4)OVERLAP_F_B,(7F5;0B1)OVERLAP_F_B,(0F9;7B5)OVERLAP_F_B,"
	"(7F6;0B2)OVERLAP_F_B,7B6,(7F7;0B3)OVERLAP_F_B,7B7,"
	"(7F8;0B4)OVERLAP_F_B,7B8,(7F9;0B5)OVERLAP_F_B,7B9,0I6,0W6,0I7,0W7,"
	"0I8,0W8,0I9,0W9\n"
	"1F0,1F1,1F2,1F3,1F4,6F0,1F5,6F1,6I0,6W0,6F2,6I1,6W1,6F3,"
	"(1F6;6B2)OVERLAP_F_B,(6F4;1B0)OVERLAP_F_B,(1F7;6B3)OVERLAP_F_B,"
	"(6F5;1B1)OVERLAP_F_B,(1F8;6B4)OVERLAP_F_B,(6F6;1B2)OVERLAP_F_B,"
	"(1F9;6B5)OVERLAP_F_B,(6F7;1B3)OVERLAP_F_B,6B6,"
	"(6F8;1B4)OVERLAP_F_B,6B7,(6F9;1B5)OVERLAP_F_B,6B8,1B6,6I9,1I7,6W9,"
	"1I8,1W7,1I9,1W8,1W9\n"
	"2F0,2F1,2F2,5F0,2F3,5F1,2F4,5F2,5I0,5W0,5F3,(2F5;5B1)OVERLAP_F_B,"
	"(5F4;2B0)OVERLAP_F_B,(2F6;5B2)OVERLAP_F_B,(5F5;2B1)OVERLAP_F_B,"
	"(2F7;5B3)OVERLAP_F_B,(5F6;2B2)OVERLAP_F_B,(2F8;5B4)OVERLAP_F_B,"
	"(5F7;2B3)OVERLAP_F_B,(2F9;5B5)OVERLAP_F_B,(5F8;2B4)OVERLAP_F_B,"
	"5B6,(5F9;2B5)OVERLAP_F_B,5B7,2B6,5B8,2I7,5I9,2I8,2W7,2I9,5W9,2W8,"
	"2W9\n"
	"3F0,4F0,3F1,4F1,3F2,4F2,3F3,4F3,3F4,4B0,(4F4;3B0)OVERLAP_F_B,"
	"(3F5;4B1)OVERLAP_F_B,(4F5;3B1)OVERLAP_F_B,(3F6;4B2)OVERLAP_F_B,"
	"(4F6;3B2)OVERLAP_F_B,(3F7;4B3)OVERLAP_F_B,(4F7;3B3)OVERLAP_F_B,"
	"(3F8;4B4)OVERLAP_F_B,(4F8;3B4)OVERLAP_F_B,(3F9;4B5)OVERLAP_F_B,"
	"(4F9;3B5)OVERLAP_F_B,4B6,3B6,4B7,3B7,4I8,3I8,4I9,3I9,4W8,3W8,4W9,"
	"3W9\n";

START_TEST(csv_reader_counts_pytorch_dualpipev_sample)
{
	csv_doc doc;
	parse_csv(&doc, dualpipev_sample);
	/* Counted by hand from the file: DualPipeV, 4 ranks, 2 stages each
	 * (rank r holds stages r and 7 - r), 10 microbatches. */
	static const int cells[4] = {38, 36, 34, 33};
	static const int overlaps[4] = {9, 10, 11, 11};
	static const int full_b[4] = {13, 14, 15, 16};
	static const int split_i[4] = {7, 6, 5, 4};
	ck_assert_int_eq(doc.n_rows, 4);
	for (int r = 0; r < 4; r++) {
		int count[PPCC_OP_COUNT] = {0}, n_overlap = 0;
		for (int c = 0; c < doc.rows[r].n; c++) {
			const csv_cell *cell = &doc.rows[r].cells[c];
			ck_assert_int_ge(cell->n, 1); /* the sample has no idle cell */
			n_overlap += cell->n == 2;
			for (int k = 0; k < cell->n; k++) {
				const csv_action *a = &cell->sub[k];
				ck_assert(a->op >= 0 && a->op < PPCC_OP_COUNT);
				ck_assert_msg(a->stage == r || a->stage == 7 - r,
					      "rank %d runs stage %d", r, a->stage);
				ck_assert(a->mb >= 0 && a->mb < 10);
				count[a->op]++;
			}
		}
		ck_assert_int_eq(doc.rows[r].n, cells[r]);
		ck_assert_int_eq(n_overlap, overlaps[r]);
		ck_assert_int_eq(count[PPCC_OP_F], 20);
		ck_assert_int_eq(count[PPCC_OP_B], full_b[r]);
		ck_assert_int_eq(count[PPCC_OP_I], split_i[r]);
		ck_assert_int_eq(count[PPCC_OP_W], split_i[r]);
		ck_assert_int_eq(count[PPCC_OP_SEND_F] + count[PPCC_OP_RECV_B], 0);
	}
	/* and the reader refuses what is not the grammar */
	csv_cell cell;
	ck_assert_int_eq(parse_cell("F0", 2, &cell), -1);
	ck_assert_int_eq(parse_cell("0X1", 3, &cell), -1);
	ck_assert_int_eq(parse_cell("0F", 2, &cell), -1);
	ck_assert_int_eq(parse_cell("(0F1;1B2)", 9, &cell), -1);
	ck_assert_int_eq(parse_cell("1UNSHARD", 8, &cell), 0);
	free_csv(&doc);
}
END_TEST

/* ppcc's DualPipeV for the sample's shape (4 ranks, 2 stages each, 10
 * microbatches), compute only, against the sample cell by cell: the same
 * cells in the same order on every rank.  ppcc's lock-step grid adds
 * empty cells (idle steps: rank r starts r steps late, and waits where a
 * producer on another rank sits in the same step), which the sample,
 * written without a grid, does not have; they are skipped here. */
START_TEST(csv_dualpipe_v_matches_pytorch_sample_cell_by_cell)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	memset(&p, 0, sizeof p);
	ppcc_stage_info st[8];
	memset(st, 0, sizeof st);
	for (int s = 0; s < 8; s++) {
		st[s].recv_bytes = s > 0 ? 64 : 0;
		st[s].send_bytes = s < 7 ? 64 : 0;
	}
	ck_assert_int_eq(ppcc_schedule_build(&p.best.schedule, a,
					     PPCC_SCHED_DUALPIPE_V, 4, 2, 10, 0, st),
			 0);
	ppcc_emit_options o = {.format = PPCC_FMT_TORCH_CSV};
	char *text = emit_ok(ppcc_emit_torch_csv, &p, &o);
	csv_doc got, want;
	parse_csv(&got, text);
	parse_csv(&want, dualpipev_sample);
	ck_assert_int_eq(got.n_rows, 4);
	ck_assert_int_eq(want.n_rows, 4);
	int idle = 0;
	for (int r = 0; r < 4; r++) {
		int c = 0;
		for (int k = 0; k < got.rows[r].n; k++) {
			const csv_cell *g = &got.rows[r].cells[k];
			if (g->n == 0) {
				idle++;
				continue;
			}
			ck_assert_msg(c < want.rows[r].n, "rank %d: extra cells", r);
			const csv_cell *w = &want.rows[r].cells[c++];
			ck_assert_msg(g->n == w->n, "rank %d cell %d: %d actions, "
				      "the sample %d", r, c - 1, g->n, w->n);
			for (int j = 0; j < g->n; j++)
				ck_assert_msg(g->sub[j].op == w->sub[j].op &&
						      g->sub[j].stage == w->sub[j].stage &&
						      g->sub[j].mb == w->sub[j].mb,
					      "rank %d cell %d differs from the sample",
					      r, c - 1);
		}
		ck_assert_int_eq(c, want.rows[r].n);
	}
	/* ranks 1, 2, 3 start 1, 2, 3 steps late and wait 1, 2, 2 steps
	 * more in their steady state (counted on ppcc's grid) */
	ck_assert_int_eq(idle, 1 + 2 + 3 + 1 + 2 + 2);
	/* the first row is the sample's, byte for byte */
	ck_assert_int_eq(strncmp(text, dualpipev_sample,
				 (size_t)(strchr(dualpipev_sample, '\n') -
					  dualpipev_sample + 1)),
			 0);
	free(text);
	free_csv(&got);
	free_csv(&want);
	ppcc_arena_free(a);

	/* The copy above is the file in the project's shared reference
	 * (shared/reference/torch-csv/ beside the checkout or its parent),
	 * where there is one: compare them byte for byte. */
	const char *src = getenv("PPCC_SRC");
	static const char *const rel[] = {
		"/../shared/reference/torch-csv/dualpipev_4rank_10mb.csv",
		"/../../shared/reference/torch-csv/dualpipev_4rank_10mb.csv",
	};
	int compared = 0;
	for (size_t k = 0; src && k < sizeof rel / sizeof rel[0] && !compared; k++) {
		char path[4096];
		snprintf(path, sizeof path, "%s%s", src, rel[k]);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		static char file[4096];
		size_t n = fread(file, 1, sizeof file - 1, f);
		fclose(f);
		file[n] = '\0';
		ck_assert_str_eq(file, dualpipev_sample);
		compared = 1;
	}
	if (!compared)
		fprintf(stderr, "csv_dualpipe_v_matches_pytorch_sample_cell_by_cell: "
			"no shared/reference/torch-csv/ beside the source tree; "
			"compared with the copy in tests/check_emit.c only\n");
}
END_TEST

/* The CSV's cells of each rank are the schedule's actions (compute only:
 * the F/B/I/W ones; with comms, those and the sends and receives, less
 * PyTorch's per-stage REDUCE_GRAD, UNSHARD and RESHARD cells, which stand
 * for the collectives and are checked in check_torch_csv.c), in order;
 * compute only, the grid is a valid lock step (a consumer at a later
 * column than its producer); with comms, no cell is empty. */
/* An action the CSV does not list one for one: compute only, every
 * communication; with comms, the collectives. */
static int skipped(int op, int with_comms)
{
	return with_comms ? ppcc_op_is_collective(op) || ppcc_op_is_reduction(op)
			  : ppcc_op_is_comm(op);
}

static void check_csv_round_trip(const ppcc_plan *p, int with_comms)
{
	const ppcc_schedule *s = &p->best.schedule;
	ppcc_emit_options o = {.format = PPCC_FMT_TORCH_CSV,
			       .with_comms = with_comms};
	char *text = emit_ok(ppcc_emit_torch_csv, p, &o);
	csv_doc doc;
	parse_csv(&doc, text);
	free(text);
	ck_assert_int_eq(doc.n_rows, s->n_ranks);
	int S = s->n_stages, m = s->n_microbatches;
	int *col_f = malloc(sizeof(int) * (size_t)(S * m));
	int *col_b = malloc(sizeof(int) * (size_t)(S * m));
	for (int k = 0; k < S * m; k++)
		col_f[k] = col_b[k] = -1;
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		const csv_row *row = &doc.rows[r];
		int i = 0;
		for (int c = 0; c < row->n; c++) {
			const csv_cell *cell = &row->cells[c];
			ck_assert_msg(cell->n != 0 || !with_comms,
				      "an empty cell in a with-comms row");
			if (cell->n == 0 ||
			    (cell->n == 1 && cell->sub[0].op >= TORCH_UNSHARD))
				continue;
			while (i < rs->n_actions &&
			       skipped(rs->actions[i].op, with_comms))
				i++;
			ck_assert_msg(i < rs->n_actions, "rank %d: extra cells", r);
			/* a pair's cell is its marker's F and B */
			if (cell->n == 2) {
				ck_assert_int_eq(rs->actions[i].op, PPCC_OP_OVERLAP_F_B);
				i++;
			} else {
				ck_assert_int_eq(cell->n, 1);
			}
			for (int k = 0; k < cell->n; k++) {
				ck_assert_msg(i < rs->n_actions, "rank %d: extra cells", r);
				const ppcc_action *a = &rs->actions[i++];
				const csv_action *got = &cell->sub[k];
				ck_assert_msg(got->op == a->op && got->stage == a->stage &&
						      got->mb == a->mb,
					      "rank %d cell %d: %d/%d/%d, want %s s%d mb%d", r,
					      c, got->op, got->stage, got->mb,
					      ppcc_op_name(a->op), a->stage, a->mb);
				if (a->op == PPCC_OP_F)
					col_f[a->stage * m + a->mb] = c;
				if (a->op == PPCC_OP_B || a->op == PPCC_OP_I)
					col_b[a->stage * m + a->mb] = c;
			}
		}
		while (i < rs->n_actions && skipped(rs->actions[i].op, with_comms))
			i++;
		ck_assert_msg(i == rs->n_actions, "rank %d: %d of %d actions", r, i,
			      rs->n_actions);
		if (row->n > 0)
			ck_assert_msg(row->cells[row->n - 1].n > 0,
				      "rank %d: trailing idle cell", r);
	}
	if (!with_comms)
		for (int st = 0; st < S; st++)
			for (int mb = 0; mb < m; mb++) {
				int k = st * m + mb;
				ck_assert(col_f[k] >= 0 && col_b[k] >= 0);
				if (st + 1 < S)
					ck_assert_msg(col_f[k] < col_f[k + m],
						      "F s%d mb%d not before F s%d",
						      st, mb, st + 1);
				if (st > 0)
					ck_assert_msg(col_b[k] < col_b[k - m],
						      "B s%d mb%d not before B s%d",
						      st, mb, st - 1);
			}
	free(col_f);
	free(col_b);
	free_csv(&doc);
}

START_TEST(csv_compute_only_lists_compute_actions_in_lock_step)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	hand_plan(&p, a, 4, 1, 6, 0, "c", plain_names, 10);
	check_csv_round_trip(&p, 0);
	hand_plan(&p, a, 2, 3, 4, 1, "c", plain_names, 10);
	check_csv_round_trip(&p, 0);
	/* GPipe on 2 ranks, 2 microbatches: the exact grid */
	hand_plan(&p, a, 2, 1, 2, 0, "c", plain_names, 10);
	ppcc_emit_options o = {.format = PPCC_FMT_TORCH_CSV};
	char *text = emit_ok(ppcc_emit_torch_csv, &p, &o);
	ck_assert_str_eq(text, "0F0,0F1,,,0B0,0B1\n"
			       ",1F0,1F1,1B0,1B1\n");
	free(text);
	ppcc_arena_free(a);
}
END_TEST

START_TEST(csv_with_comms_lists_every_action_in_order)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	hand_plan(&p, a, 3, 2, 3, 0, "c", plain_names, 10);
	check_csv_round_trip(&p, 1);
	hand_plan(&p, a, 2, 1, 2, 1, "c", plain_names, 10);
	ppcc_emit_options o = {.format = PPCC_FMT_TORCH_CSV, .with_comms = 1};
	char *text = emit_ok(ppcc_emit_torch_csv, &p, &o);
	ck_assert_str_eq(text,
			 "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0I0,0W0,0RECV_B1,0I1,0W1,"
			 "0REDUCE_GRAD\n"
			 "1RECV_F0,1F0,1RECV_F1,1F1,1I0,1SEND_B0,1W0,1I1,1SEND_B1,1W1,"
			 "1REDUCE_GRAD\n");
	free(text);
	ppcc_arena_free(a);
}
END_TEST

START_TEST(csv_reports_a_compute_order_that_cannot_run)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	hand_plan(&p, a, 2, 1, 2, 0, "c", plain_names, 10);
	/* Rank 1 runs F(1,1) before F(1,0), rank 0 runs B(0,0) before
	 * F(0,1): B(0,0) waits for B(1,0), which comes after F(1,1) on rank
	 * 1, which waits for F(0,1), which comes after B(0,0) on rank 0. */
	ppcc_action *r1 = (ppcc_action *)p.best.schedule.ranks[1].actions;
	ppcc_action t = r1[1]; /* F(1,0) */
	r1[1] = r1[3], r1[3] = t; /* now F(1,1) before F(1,0) */
	ppcc_action *r0 = (ppcc_action *)p.best.schedule.ranks[0].actions;
	/* rank 0: F0 SEND0 F1 SEND1 RECV_B0 B0 RECV_B1 B1 -> B0 before F1 */
	ppcc_action b0 = r0[5];
	memmove(r0 + 3, r0 + 2, 3 * sizeof *r0);
	r0[2] = b0;
	ppcc_emit_options o = {.format = PPCC_FMT_TORCH_CSV};
	diag_text dt = {{0}, 0};
	int status;
	char *text = emit_text(ppcc_emit_torch_csv, &p, &o, &status, &dt);
	ck_assert_int_eq(status, PPCC_EINPUT);
	ck_assert_msg(strstr(dt.buf, "error: ") && strstr(dt.buf, "cycle"), "%s",
		      dt.buf);
	free(text);
	ppcc_arena_free(a);
}
END_TEST

/* ---- Chrome trace ------------------------------------------------------ */

static json_t *load_trace(const ppcc_plan *p)
{
	ppcc_emit_options o = {.format = PPCC_FMT_CHROME};
	char *text = emit_ok(ppcc_emit_chrome, p, &o);
	json_error_t jerr;
	json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	ck_assert_msg(root != NULL, "trace %d:%d: %s", jerr.line, jerr.column,
		      jerr.text);
	free(text);
	return root;
}

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b));
}

/* One X event per action, in rank and list order, carrying its times. */
static void check_trace(const ppcc_plan *p)
{
	const ppcc_schedule *s = &p->best.schedule;
	const ppcc_estimate *e = &p->best.estimate;
	json_t *root = load_trace(p);
	json_t *events = json_object_get(root, "traceEvents");
	ck_assert(json_is_array(events));
	ck_assert_str_eq(json_string_value(json_object_get(root, "displayTimeUnit")),
			 "ms");
	int r = 0, i = 0, n_names = 0, timed = -1;
	int pair = -1;              /* a pair's marker, its event still due */
	double pair_t0 = 0, last_t1 = 0; /* its F's start, the last end */
	ppcc_rank_times tt; /* the times, as the plan keeps them */
	for (size_t k = 0; k < json_array_size(events); k++) {
		json_t *ev = json_array_get(events, k);
		const char *ph = json_string_value(json_object_get(ev, "ph"));
		ck_assert_ptr_nonnull(ph);
		if (strcmp(ph, "M") == 0) {
			const char *name = json_string_value(json_object_get(ev, "name"));
			if (strcmp(name, "process_name") == 0) {
				char want[32];
				json_int_t pid = json_integer_value(json_object_get(ev, "pid"));
				snprintf(want, sizeof want, "rank %lld", (long long)pid);
				ck_assert_str_eq(json_string_value(json_object_get(
							 json_object_get(ev, "args"), "name")),
						 want);
				ck_assert_int_eq(pid, n_names);
				n_names++;
			}
			continue;
		}
		ck_assert_str_eq(ph, "X");
		while (pair < 0 && r < s->n_ranks && i >= s->ranks[r].n_actions)
			r++, i = 0;
		ck_assert_msg(r < s->n_ranks, "more X events than actions");
		/* a pair's event follows its B's, spanning its F and B */
		int at = i, is_pair = pair >= 0 && i == pair + 3;
		if (is_pair)
			at = pair;
		else if (s->ranks[r].actions[i].op == PPCC_OP_OVERLAP_F_B)
			pair = i, at = ++i;
		const ppcc_action *a = &s->ranks[r].actions[at];
		char name[64];
		snprintf(name, sizeof name, "%s s%d mb%d", ppcc_op_name(a->op),
			 a->stage, a->mb);
		int comm = ppcc_op_is_comm(a->op);
		json_t *args = json_object_get(ev, "args");
		ck_assert_str_eq(json_string_value(json_object_get(ev, "name")), name);
		ck_assert_str_eq(json_string_value(json_object_get(ev, "cat")),
				 comm ? "comm" : "compute");
		ck_assert_int_eq(json_integer_value(json_object_get(ev, "pid")), r);
		ck_assert_int_eq(json_integer_value(json_object_get(ev, "tid")), comm);
		double ts = json_number_value(json_object_get(ev, "ts"));
		double dur = json_number_value(json_object_get(ev, "dur"));
		double t0, t1;
		if (timed != r) {
			ck_assert_int_eq(ppcc_rank_times_begin(&tt, s, p->best.costs, e, r), 0);
			timed = r;
		}
		if (is_pair) {
			t0 = pair_t0;
			t1 = last_t1;
			pair = -1;
		} else {
			ck_assert_int_eq(ppcc_rank_times_at(&tt, at, &t0, &t1), 0);
			if (pair >= 0 && at == pair + 1)
				pair_t0 = t0;
			last_t1 = t1;
		}
		ck_assert_msg(near(ts, t0 * 1000), "ts %.17g vs %.17g", ts, t0 * 1000);
		ck_assert_msg(near(ts + dur, t1 * 1000), "end %.17g vs %.17g",
			      ts + dur, t1 * 1000);
		ck_assert_int_eq(json_integer_value(json_object_get(args, "stage")), a->stage);
		ck_assert_int_eq(json_integer_value(json_object_get(args, "mb")), a->mb);
		ck_assert_int_eq(json_integer_value(json_object_get(args, "peer")), a->peer);
		ck_assert_int_eq(json_integer_value(json_object_get(args, "chunk")),
				 s->stages[a->stage].chunk);
		ck_assert_uint_eq((uint64_t)json_integer_value(json_object_get(args, "bytes")),
				  a->bytes);
		if (!is_pair)
			i++;
	}
	while (pair < 0 && r < s->n_ranks && i >= s->ranks[r].n_actions)
		r++, i = 0;
	ck_assert_msg(r == s->n_ranks && pair < 0, "fewer X events than actions");
	ck_assert_int_eq(n_names, s->n_ranks);
	json_decref(root);
}

START_TEST(chrome_has_one_event_per_action_at_its_simulated_time)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	hand_plan(&p, a, 3, 2, 4, 0, "trace", plain_names, 10);
	check_trace(&p);
	hand_plan(&p, a, 2, 1, 3, 1, "trace", plain_names, 10);
	check_trace(&p);
	ppcc_arena_free(a);
}
END_TEST

/* Under ZeRO 2 every backward of a stage reduce-scatters its buckets;
 * the schedule holds the last backward's, the iteration model adds the
 * others.  The trace's "dp reduce" thread holds them all: on the busiest
 * rank their durations add up to the text report's "ms per rank at
 * most", and there are m times the schedule's reduce-scatters.  (Before,
 * the trace held the schedule's alone.) */
START_TEST(chrome_dp_lane_totals_the_text_report)
{
	static const char yaml[] =
		"model:\n"
		"  transformer: {preset: llama3-8b, micro_batch_size: 1}\n"
		"cluster:\n"
		"  devices: 16\n"
		"  device: {preset: h100}\n"
		"pipeline: {stages: 4, data_parallel: 4, microbatches: 8, zero: 2}\n";
	ppcc_arena *a = ppcc_arena_new();
	ppcc_config cfg;
	ppcc_plan p;
	tu_diag diag;
	ck_assert_msg(tu_plan_text(&p, a, &cfg, yaml, &diag) == 0, "%s", diag.text);
	char *text = tu_emit(&p, PPCC_FMT_TEXT, NULL);
	const char *at = strstr(text, " ms per rank at most");
	ck_assert_ptr_nonnull(at);
	while (at > text && at[-1] != ' ')
		at--;
	double want = strtod(at, NULL);
	free(text);
	json_t *root = load_trace(&p);
	json_t *events = json_object_get(root, "traceEvents");
	const ppcc_schedule *s = &p.best.schedule;
	double per_rank[64] = {0};
	long reductions = 0, held = 0;
	ck_assert_int_le(s->n_ranks, 64);
	for (size_t k = 0; k < json_array_size(events); k++) {
		json_t *ev = json_array_get(events, k);
		const char *name = json_string_value(json_object_get(ev, "name"));
		if (strcmp(json_string_value(json_object_get(ev, "ph")), "X") != 0 ||
		    strncmp(name, "REDUCE_SCATTER_GRAD ", 20) != 0)
			continue;
		ck_assert_str_eq(json_string_value(json_object_get(ev, "cat")),
				 "collective");
		ck_assert_int_eq(json_integer_value(json_object_get(ev, "tid")), 2);
		json_int_t pid = json_integer_value(json_object_get(ev, "pid"));
		per_rank[pid] += json_number_value(json_object_get(ev, "dur")) / 1000;
		reductions++;
	}
	for (int r = 0; r < s->n_ranks; r++)
		for (int i = 0; i < s->ranks[r].n_actions; i++)
			held += s->ranks[r].actions[i].op == PPCC_OP_REDUCE_SCATTER_GRAD;
	double most = 0;
	for (int r = 0; r < s->n_ranks; r++)
		most = fmax(most, per_rank[r]);
	ck_assert_int_gt(held, 0);
	ck_assert_int_eq(reductions, (long)s->n_microbatches * held);
	ck_assert_msg(fabs(most - want) <= 0.0005 + 1e-9 * want,
		      "trace %.6f ms, text %.3f ms", most, want);
	json_decref(root);
	ppcc_arena_free(a);
}
END_TEST

START_TEST(chrome_simulates_a_plan_that_has_no_times)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	hand_plan(&p, a, 3, 1, 4, 0, "read back", plain_names, 10);
	ppcc_estimate sim;
	ck_assert_int_eq(ppcc_simulate(&sim, a, &p.best.schedule, p.best.costs), 0);
	p.best.estimate = sim;
	check_trace(&p);
	ppcc_emit_options o = {.format = PPCC_FMT_CHROME};
	char *with = emit_ok(ppcc_emit_chrome, &p, &o);
	p.best.estimate.start_ms = NULL;
	p.best.estimate.end_ms = NULL;
	char *without = emit_ok(ppcc_emit_chrome, &p, &o);
	ck_assert_str_eq(without, with);
	free(without);
	free(with);
	ppcc_arena_free(a);
}
END_TEST

START_TEST(chrome_model_name_survives_exactly)
{
	fill_long_name();
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	static const char *const models[] = {
		"q\"uo\\te\n\t\x01\x1f\x7f",
		"na\xc3\xafve \xe2\x82\xac \xf0\x9f\x98\x80 </script>",
		long_name,
		"",
	};
	for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
		hand_plan(&p, a, 2, 1, 2, 0, models[k], plain_names, 10);
		json_t *root = load_trace(&p);
		const char *got = json_string_value(
			json_object_get(json_object_get(root, "otherData"), "model"));
		ck_assert_ptr_nonnull(got);
		ck_assert_msg(strcmp(got, models[k]) == 0, "model %zu changed", k);
		json_decref(root);
	}
	ppcc_arena_free(a);
}
END_TEST

START_TEST(chrome_replaces_bytes_that_are_not_utf8)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	hand_plan(&p, a, 2, 1, 2, 0, "a\xff" "b\xc3" "c\xed\xa0\x80" "d\xc3\xa9",
		  plain_names, 10);
	json_t *root = load_trace(&p);
	const char *got = json_string_value(
		json_object_get(json_object_get(root, "otherData"), "model"));
	ck_assert_str_eq(got, "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd"
			      "\xef\xbf\xbd" "d\xc3\xa9");
	json_decref(root);
	ppcc_arena_free(a);
}
END_TEST

START_TEST(chrome_refuses_times_that_are_not_finite)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	hand_plan(&p, a, 2, 1, 2, 0, "nan", plain_names, 10);
	static const double bad[] = {NAN, INFINITY, -1.0};
	for (int k = 0; k < 3; k++) {
		double keep = p.best.estimate.end_ms[1][2];
		p.best.estimate.end_ms[1][2] = bad[k];
		ppcc_emit_options o = {.format = PPCC_FMT_CHROME};
		diag_text dt = {{0}, 0};
		int status;
		char *text = emit_text(ppcc_emit_chrome, &p, &o, &status, &dt);
		ck_assert_int_eq(status, PPCC_EINTERNAL);
		ck_assert_msg(strstr(dt.buf, "rank 1 action 2"), "%s", dt.buf);
		free(text);
		p.best.estimate.end_ms[1][2] = keep;
	}
	ppcc_arena_free(a);
}
END_TEST

/* ---- HTML timeline ------------------------------------------------------ */

#define HTML_DATA_OPEN "<script type=\"application/json\" id=\"ppcc-plan\">\n"

/* The data the page embeds, parsed with jansson. */
static json_t *html_data(const char *page)
{
	const char *at = strstr(page, HTML_DATA_OPEN);
	ck_assert_ptr_nonnull(at);
	at += strlen(HTML_DATA_OPEN);
	const char *end = strstr(at, "</script>");
	ck_assert_ptr_nonnull(end);
	json_error_t jerr;
	json_t *root = json_loadb(at, (size_t)(end - at), JSON_REJECT_DUPLICATES,
				  &jerr);
	ck_assert_msg(root != NULL, "page data %d:%d: %s", jerr.line,
		      jerr.column, jerr.text);
	return root;
}

/* No address of any kind: what a browser could fetch is named by a URL
 * (scheme://, or //host relative to the page's scheme), a src or href
 * attribute, CSS's url() or @import; and the script element closes only
 * where the emitter closes it (the data's and the code's). */
static void assert_self_contained(const char *page)
{
	static const char *const banned[] = {
		"http://", "https://", "//", "src=", "href=", "url(",
		"@import", "data:", "<link", "<img", "<iframe", "<object",
	};
	size_t n = strlen(page);
	char *lower = malloc(n + 1);
	ck_assert_ptr_nonnull(lower);
	for (size_t i = 0; i <= n; i++)
		lower[i] = page[i] >= 'A' && page[i] <= 'Z' ? page[i] - 'A' + 'a'
							    : page[i];
	for (size_t k = 0; k < sizeof banned / sizeof *banned; k++)
		ck_assert_msg(!strstr(lower, banned[k]), "the page holds '%s'",
			      banned[k]);
	int closes = 0;
	for (const char *at = lower; (at = strstr(at, "</script")); at++)
		closes++;
	ck_assert_int_eq(closes, 2);
	free(lower);
}

/* The page embeds every action of p, in rank and list order, with its
 * stage, microbatch, chunk, peer, bytes and simulated times; the same
 * bytes a second time. */
static void check_html(const ppcc_plan *p)
{
	const ppcc_schedule *s = &p->best.schedule;
	ppcc_emit_options o = {.format = PPCC_FMT_HTML};
	char *page = emit_ok(ppcc_emit_html, p, &o);
	char *again = emit_ok(ppcc_emit_html, p, &o);
	ck_assert_str_eq(page, again);
	free(again);
	assert_self_contained(page);
	json_t *root = html_data(page);
	json_t *rows = json_object_get(root, "rows"),
	       *ops = json_object_get(root, "ops");
	ck_assert_int_eq(json_array_size(ops), PPCC_OP_COUNT);
	for (int op = 0; op < PPCC_OP_COUNT; op++)
		ck_assert_str_eq(json_string_value(json_array_get(ops, op)),
				 ppcc_op_name(op));
	ck_assert_int_eq(json_array_size(rows), s->n_ranks);
	ck_assert_int_eq(json_integer_value(json_object_get(root, "microbatches")),
			 s->n_microbatches);
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		json_t *row = json_array_get(rows, (size_t)r);
		ppcc_rank_times tt;
		ck_assert_int_eq(json_array_size(row), 8 * (size_t)rs->n_actions);
		ck_assert_int_eq(ppcc_rank_times_begin(&tt, s, p->best.costs,
						       &p->best.estimate, r), 0);
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			json_int_t want[5] = {a->op, a->stage, a->mb,
					      s->stages[a->stage].chunk, a->peer};
			for (int k = 0; k < 5; k++)
				ck_assert_msg(json_integer_value(json_array_get(
						      row, 8 * (size_t)i + k)) == want[k],
					      "rank %d action %d field %d", r, i, k);
			double t0, t1;
			ck_assert_int_eq(ppcc_rank_times_at(&tt, i, &t0, &t1), 0);
			double g0 = json_number_value(json_array_get(row, 8 * (size_t)i + 5));
			double g1 = json_number_value(json_array_get(row, 8 * (size_t)i + 6));
			ck_assert_msg(near(g0, t0) && near(g1, t1),
				      "rank %d action %d: %.17g..%.17g, not %.17g..%.17g",
				      r, i, g0, g1, t0, t1);
			ck_assert_uint_eq((uint64_t)json_integer_value(json_array_get(
						  row, 8 * (size_t)i + 7)), a->bytes);
		}
	}
	/* the lanes: every collective the text report counts, as
	 * ppcc_lanes_build lists them, on the same clock */
	ppcc_lanes l;
	ck_assert_int_eq(ppcc_lanes_build(&l, p->config, s, p->best.costs,
					  &p->best.estimate), 0);
	json_t *lanes = json_object_get(root, "lanes");
	ck_assert_int_eq(json_array_size(lanes), s->n_ranks);
	for (int r = 0; r < s->n_ranks; r++) {
		json_t *lane = json_array_get(lanes, (size_t)r);
		ck_assert_int_eq(json_array_size(lane),
				 8 * (size_t)(l.first[r + 1] - l.first[r]));
		for (long k = l.first[r]; k < l.first[r + 1]; k++) {
			const ppcc_lane_op *lo = &l.ops[k];
			size_t at = 8 * (size_t)(k - l.first[r]);
			json_int_t want[5] = {lo->op, lo->stage, lo->bucket, lo->mb,
					      lo->action};
			for (int f = 0; f < 5; f++)
				ck_assert_msg(json_integer_value(json_array_get(
						      lane, at + f)) == want[f],
					      "rank %d lane op %ld field %d", r, k, f);
			ck_assert(near(json_number_value(json_array_get(lane, at + 5)),
				       lo->start_ms));
			ck_assert(near(json_number_value(json_array_get(lane, at + 6)),
				       lo->end_ms));
			ck_assert_uint_eq((uint64_t)json_integer_value(
						  json_array_get(lane, at + 7)), lo->bytes);
		}
	}
	ppcc_lanes_free(&l);
	json_decref(root);
	free(page);
}

START_TEST(html_embeds_every_action_at_its_simulated_time)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	hand_plan(&p, a, 3, 2, 4, 0, "timeline", plain_names, 10);
	check_html(&p);
	hand_plan(&p, a, 2, 1, 3, 1, "timeline", plain_names, 10);
	check_html(&p);
	/* read back without times: simulated, the same page as with them */
	ppcc_estimate sim;
	ck_assert_int_eq(ppcc_simulate(&sim, a, &p.best.schedule, p.best.costs), 0);
	p.best.estimate = sim;
	ppcc_emit_options o = {.format = PPCC_FMT_HTML};
	char *with = emit_ok(ppcc_emit_html, &p, &o);
	p.best.estimate.start_ms = NULL;
	p.best.estimate.end_ms = NULL;
	char *without = emit_ok(ppcc_emit_html, &p, &o);
	ck_assert_str_eq(without, with);
	free(without);
	free(with);
	for (int k = 0; k < N_EXAMPLES; k++) {
		example_plan(&p, a, examples[k].file, examples[k].kind,
			     examples[k].chunks);
		check_html(&p);
	}
	ppcc_arena_free(a);
}
END_TEST

START_TEST(html_names_survive_and_spell_no_address)
{
	fill_long_name();
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	static const char *const models[] = {
		"http://example.invalid/m.js",
		"</script><script src=\"https://x.invalid/a.js\"></script>",
		"a//b <!-- & 'q' \"\\ \n\t\x01\x7f",
		"na\xc3\xafve \xe2\x82\xac \xf0\x9f\x98\x80 \xe2\x80\xae",
		long_name,
		"",
	};
	for (size_t k = 0; k < sizeof models / sizeof *models; k++) {
		hand_plan(&p, a, 2, 1, 2, 0, models[k], plain_names, 10);
		ppcc_emit_options o = {.format = PPCC_FMT_HTML};
		char *page = emit_ok(ppcc_emit_html, &p, &o);
		assert_self_contained(page);
		for (const char *c = page; *c; c++)
			ck_assert_msg((unsigned char)*c < 0x80, "model %zu: a byte "
				      "past ASCII in the page", k);
		json_t *root = html_data(page);
		const char *got = json_string_value(json_object_get(root, "model"));
		ck_assert_ptr_nonnull(got);
		ck_assert_msg(strcmp(got, models[k]) == 0, "model %zu changed", k);
		json_decref(root);
		free(page);
	}
	/* a byte that is not UTF-8 is U+FFFD */
	hand_plan(&p, a, 2, 1, 2, 0, "a\xff" "b\xed\xa0\x80", plain_names, 10);
	ppcc_emit_options o = {.format = PPCC_FMT_HTML};
	char *page = emit_ok(ppcc_emit_html, &p, &o);
	json_t *root = html_data(page);
	ck_assert_str_eq(json_string_value(json_object_get(root, "model")),
			 "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	json_decref(root);
	free(page);
	ppcc_arena_free(a);
}
END_TEST

START_TEST(html_refuses_times_that_are_not_finite)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan p;
	hand_plan(&p, a, 2, 1, 2, 0, "nan", plain_names, 10);
	static const double bad[] = {NAN, INFINITY, -1.0};
	for (int k = 0; k < 3; k++) {
		double keep = p.best.estimate.end_ms[1][2];
		p.best.estimate.end_ms[1][2] = bad[k];
		ppcc_emit_options o = {.format = PPCC_FMT_HTML};
		diag_text dt = {{0}, 0};
		int status;
		char *text = emit_text(ppcc_emit_html, &p, &o, &status, &dt);
		ck_assert_int_eq(status, PPCC_EINTERNAL);
		ck_assert_msg(strstr(dt.buf, "rank 1 action 2"), "%s", dt.buf);
		free(text);
		p.best.estimate.end_ms[1][2] = keep;
	}
	ppcc_arena_free(a);
}
END_TEST

/* The page in a browser: tests/html/check.sh loads ppcc plan's page of
 * llama3-70b as DualPipeV under ZeRO 2 (every kind of box: the four
 * computes, sends, receives, overlapped pairs, ZeRO's gathers and
 * reduce-scatters, and the reduce-scatters the schedule does not hold)
 * in headless Chromium with the network shut: the number of actions its
 * script drew must be the plan's, counted here from ppcc plan -f json,
 * and the collectives beside them the page's own lanes.  The screenshot
 * stays in the build tree (html/timeline.png).  Chromium missing: a
 * skip (make deps installs it). */
START_TEST(html_page_draws_every_action_in_chromium)
{
	make_tmp_dir();
	char *page = tmp_path("timeline.html"), model[512], shot[512],
	     script[512], count[32], extra[32];
	char *text = tu_read_src("examples/llama3-70b.yaml");
	char *zero = strstr(text, "  zero: 1\n");
	ck_assert_ptr_nonnull(zero);
	zero[8] = '2';
	tu_write_in(model, sizeof model, tmp_dir, "llama3-70b.yaml", text);
	free(text);
	tu_run r;
	TU_PPCC(&r, "plan", model, "-s", "dualpipe-v", "-f", "html", "-o", page);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	TU_PPCC(&r, "plan", model, "-s", "dualpipe-v", "-f", "json");
	ck_assert_msg(r.status == 0, "%s", r.err);
	json_error_t jerr;
	json_t *plan = json_loads(r.out, 0, &jerr);
	ck_assert_ptr_nonnull(plan);
	tu_run_free(&r);
	size_t actions = 0, pairs = 0, added = 0;
	json_t *ranks = json_object_get(plan, "ranks");
	for (size_t k = 0; k < json_array_size(ranks); k++) {
		json_t *list = json_object_get(json_array_get(ranks, k), "actions");
		actions += json_array_size(list);
		for (size_t i = 0; i < json_array_size(list); i++)
			pairs += strcmp(json_string_value(json_object_get(
				json_array_get(list, i), "op")), "OVERLAP_F_B") == 0;
	}
	json_decref(plan);
	ck_assert_uint_gt(pairs, 0);
	char *html = tu_read_file(page, NULL);
	ck_assert_ptr_nonnull(html);
	json_t *data = html_data(html), *lanes = json_object_get(data, "lanes");
	for (size_t k = 0; k < json_array_size(lanes); k++) {
		json_t *l = json_array_get(lanes, k);
		for (size_t i = 4; i < json_array_size(l); i += 8)
			added += json_integer_value(json_array_get(l, i)) < 0;
	}
	json_decref(data);
	free(html);
	ck_assert_uint_gt(added, 0);
	snprintf(count, sizeof count, "%zu", actions);
	snprintf(extra, sizeof extra, "%zu", added);
	tu_build_path(shot, sizeof shot, "html");
	mkdir(shot, 0777);
	tu_build_path(shot, sizeof shot, "html/timeline.png");
	snprintf(script, sizeof script, "%s/tests/html/check.sh", tu_src());
	char *argv[] = {"sh", script, page, count, shot, extra, NULL};
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 150, argv), 0);
	if (r.status == 77) {
		tu_skip("html_page_draws_every_action_in_chromium", "%s",
			"no chromium (make deps installs it)");
	} else {
		ck_assert_msg(r.status == 0, "check.sh exited %d:\n%s%s",
			      r.status, r.out, r.err);
		fputs(r.out, stderr);
	}
	tu_run_free(&r);
	remove_tmp_dir();
}
END_TEST

/* ---- allocation failures ------------------------------------------------ */

/* In a child: fail the nth ppcc allocation and every later one, run each
 * emitter; exits 0 when all succeeded, 3 when one reported running out of
 * memory as it should, 2 on any other outcome.  In a SANITIZE=1 build a
 * leak on the failure path makes LeakSanitizer exit 1 instead. */
static int emit_with_failing_allocation(int nth)
{
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		static const char *const names[] = {"a", "a", "b\xff", "int"};
		ppcc_plan p;
		hand_plan(&p, NULL, 2, 1, 2, 0, "m\xff", names, 4);
		char value[32];
		snprintf(value, sizeof value, "%d", nth);
		setenv("PPCC_FAIL_ALLOC", value, 1);
		static const emit_fn fns[] = {ppcc_emit_header, ppcc_emit_torch_csv,
					      ppcc_emit_chrome, ppcc_emit_html};
		int code = 0;
		for (int k = 0; k < 4 && code != 2; k++) {
			FILE *f = fopen("/dev/null", "w");
			diag_text dt = {{0}, 0};
			ppcc_diag d = {.fn = collect, .user = &dt};
			ppcc_emit_options o = {0};
			int status = fns[k](f, &p, &o, &d);
			fclose(f);
			if (status == PPCC_ENOMEM && strstr(dt.buf, "out of memory"))
				code = 3;
			else if (status != 0)
				code = 2;
		}
		free_loose();
		exit(code);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st), "allocation %d: killed by signal %d", nth,
		      WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return WEXITSTATUS(st);
}

START_TEST(emitters_fail_cleanly_when_allocation_fails)
{
	/* every allocation up to the 64th, then a sample of the rest */
	int nth = 1, code;
	while ((code = emit_with_failing_allocation(nth)) == 3)
		nth += nth < 64 ? 1 : nth / 8;
	/* PPCC_FAIL_ALLOC is read at a process's first allocation: when this
	 * process allocated before (CK_FORK=no), the children cannot arm it. */
	if (nth == 1 && code == 0)
		return;
	ck_assert_msg(code == 0, "allocation %d: exit %d", nth, code);
	ck_assert_int_gt(nth, 4); /* each of the four allocates */
}
END_TEST

/* ---- the example plans through every emitter ------------------------- */

START_TEST(examples_emit_headers_that_walk_like_their_json)
{
	ppcc_arena *a = ppcc_arena_new();
	make_tmp_dir();
	for (int k = 0; k < N_EXAMPLES; k++) {
		ppcc_plan p;
		example_plan(&p, a, examples[k].file, examples[k].kind,
			     examples[k].chunks);
		char *expected = json_lines(&p);
		walk_opts wo = {.recompute = k == 0, .cxx = k == 1};
		walk w = walk_header(&p, &wo);
		assert_actions_equal(&w, expected, examples[k].file);
		char fp[64];
		snprintf(fp, sizeof fp, "fingerprint %016" PRIx64 "\n",
			 ppcc_schedule_fingerprint(&p.best.schedule));
		ck_assert_msg(strncmp(w.out, fp, strlen(fp)) == 0, "%s: %.40s",
			      examples[k].file, w.out);
		if (k == 0) {
			const char *rec = strstr(w.out, "recomputed ");
			ck_assert_ptr_nonnull(rec);
			ck_assert(strncmp(rec + 11, fp + 12, 16) == 0);
		}
		free(w.out);
		walk_opts so = {.standalone = 1, .prefix = "plan", .cxx = k == 2};
		w = walk_header(&p, &so);
		assert_actions_equal(&w, expected, examples[k].file);
		free(w.out);
		free(expected);
	}
	remove_tmp_dir();
	ppcc_arena_free(a);
}
END_TEST

START_TEST(examples_round_trip_through_csv_and_chrome)
{
	ppcc_arena *a = ppcc_arena_new();
	for (int k = 0; k < N_EXAMPLES; k++) {
		ppcc_plan p;
		example_plan(&p, a, examples[k].file, examples[k].kind,
			     examples[k].chunks);
		check_csv_round_trip(&p, 0);
		check_csv_round_trip(&p, 1);
		check_trace(&p);
		json_t *root = load_trace(&p);
		ck_assert_str_eq(json_string_value(json_object_get(
					 json_object_get(root, "otherData"), "model")),
				 p.model_name);
		json_decref(root);
	}
	ppcc_arena_free(a);
}
END_TEST

Suite *suite_emit(void)
{
	Suite *s = tu_suite("emit", "header", 300, (const TTest *const[]){
		header_compiles_as_c11_and_cxx17,
		header_walk_matches_json_actions,
		header_standalone_walks_same_actions_without_ppcc_headers,
		header_fingerprint_equals_fingerprint_of_its_schedule,
		header_hostile_names_compile_and_survive_exactly,
		header_standalone_types_have_the_layout_of_schedule_h,
		header_rejects_prefixes_that_are_not_safe_identifiers,
		NULL});
	tu_tcase(s, "torch_csv", 0, (const TTest *const[]){
		csv_reader_counts_pytorch_dualpipev_sample,
		csv_dualpipe_v_matches_pytorch_sample_cell_by_cell,
		csv_compute_only_lists_compute_actions_in_lock_step,
		csv_with_comms_lists_every_action_in_order,
		csv_reports_a_compute_order_that_cannot_run,
		NULL});
	tu_tcase(s, "chrome", 0, (const TTest *const[]){
		chrome_has_one_event_per_action_at_its_simulated_time,
		chrome_dp_lane_totals_the_text_report,
		chrome_simulates_a_plan_that_has_no_times,
		chrome_model_name_survives_exactly,
		chrome_replaces_bytes_that_are_not_utf8,
		chrome_refuses_times_that_are_not_finite,
		emitters_fail_cleanly_when_allocation_fails,
		NULL});
	tu_tcase(s, "html", 300, (const TTest *const[]){
		html_embeds_every_action_at_its_simulated_time,
		html_names_survive_and_spell_no_address,
		html_refuses_times_that_are_not_finite,
		html_page_draws_every_action_in_chromium,
		NULL});
	tu_tcase(s, "examples", 600, (const TTest *const[]){
		examples_emit_headers_that_walk_like_their_json,
		examples_round_trip_through_csv_and_chrome,
		NULL});
	return s;
}
