/* ppcc against hostile input and a hostile environment: every cut of
 * every example, every failed allocation, names built to break each
 * output format, YAML built to exhaust the parser, full disks, read-only
 * directories and a kill in the middle of a write; and the replay of the
 * inputs the fuzzers once crashed on (tests/fuzz/regressions/).
 *
 * Two test cases: "inproc" calls the library (fast enough for valgrind:
 * `make valgrind` runs it with PPCC_HARDEN_LIGHT=1, which samples the
 * byte cuts and allocation counts), "cli" runs the ppcc binary. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <graphviz/cgraph.h>
#include <jansson.h>

#include "testutil.h"

/* The fuzz targets themselves, so that the replay runs exactly what the
 * fuzzers ran. */
#include "fuzz/targets.c"

static int light(void)
{
	const char *e = getenv("PPCC_HARDEN_LIGHT");
	return e && *e && strcmp(e, "0") != 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* With PPCC_HARDEN_VERBOSE set, what a test covered and how long it took. */
static void say_figure(const char *test, double since, const char *fmt, ...)
	PPCC_PRINTF(3, 4);
static void say_figure(const char *test, double since, const char *fmt, ...)
{
	if (!getenv("PPCC_HARDEN_VERBOSE"))
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", test);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (%.1f s)\n", now_s() - since);
	va_end(ap);
}

/* ---- files and directories ------------------------------------------- */

typedef struct name_list {
	char **names;
	int n;
} name_list;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir (no dot files), sorted; an absent dir is empty. */
static name_list list_dir(const char *dir, const char *suffix)
{
	name_list l = {NULL, 0};
	DIR *d = opendir(dir);
	if (!d)
		return l;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		size_t n = strlen(e->d_name), k = suffix ? strlen(suffix) : 0;
		if (suffix && (n < k || strcmp(e->d_name + n - k, suffix) != 0))
			continue;
		l.names = realloc(l.names, sizeof *l.names * (size_t)(l.n + 1));
		l.names[l.n++] = strdup(e->d_name);
	}
	closedir(d);
	if (l.n)
		qsort(l.names, (size_t)l.n, sizeof *l.names, cmp_str);
	return l;
}

static void free_list(name_list *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	l->names = NULL;
	l->n = 0;
}

/* Every entry of dir, dot files included, as "a b c" (for messages). */
static int count_entries(const char *dir, char *what, size_t cap)
{
	DIR *d = opendir(dir);
	int n = 0;
	size_t used = 0;
	if (what && cap)
		what[0] = '\0';
	if (!d)
		return -1;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		n++;
		if (what && used < cap) {
			int k = snprintf(what + used, cap - used, "%s ", e->d_name);
			if (k > 0)
				used += (size_t)k;
		}
	}
	closedir(d);
	return n;
}

static char *src_path(const char *rel)
{
	char *p;
	if (asprintf(&p, "%s/%s", tu_src(), rel) < 0)
		abort();
	return p;
}

static char *join(const char *dir, const char *name)
{
	char *p;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		abort();
	return p;
}

static int write_bytes(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	int ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static name_list examples(void)
{
	char *dir = src_path("examples");
	name_list l = list_dir(dir, ".yaml");
	free(dir);
	ck_assert_msg(l.n >= 1, "no examples/*.yaml under %s", tu_src());
	return l;
}

static char *example_text(const char *name, size_t *len)
{
	char rel[512];
	snprintf(rel, sizeof rel, "examples/%s", name);
	char *path = src_path(rel);
	char *text = tu_read_file(path, len);
	ck_assert_msg(text != NULL, "cannot read %s", path);
	free(path);
	return text;
}

/* ---- what an abort was doing ------------------------------------------ */

static char abort_context[4096];

static void on_abort(int sig)
{
	static const char head[] = "harden: aborted while running ";
	ssize_t k = write(2, head, sizeof head - 1);
	k = write(2, abort_context, strlen(abort_context));
	k = write(2, "\n", 1);
	(void)k;
	signal(sig, SIG_DFL);
	raise(sig);
}

static void watch_aborts(void)
{
	signal(SIGABRT, on_abort);
}

/* ---- fuzz regressions --------------------------------------------------- */

static int replay_dir(const char *rel, int (*target)(const uint8_t *, size_t))
{
	char *dir = src_path(rel);
	name_list l = list_dir(dir, NULL);
	for (int i = 0; i < l.n; i++) {
		char *path = join(dir, l.names[i]);
		size_t len;
		char *data = tu_read_file(path, &len);
		ck_assert_msg(data != NULL, "cannot read %s", path);
		snprintf(abort_context, sizeof abort_context, "%s", path);
		target((const uint8_t *)data, len);
		free(data);
		free(path);
	}
	int n = l.n;
	free_list(&l);
	free(dir);
	return n;
}

/* Every input a fuzzer once failed on, and every seed, passes the
 * contracts of tests/fuzz/targets.c (in this build: plain, or ASan +
 * UBSan with SANITIZE=1). */
START_TEST(harden_fuzz_regressions_and_seeds_replay_cleanly)
{
	watch_aborts();
	double t0 = now_s();
	int n = replay_dir("tests/fuzz/regressions/plan", ppcc_fuzz_plan);
	n += replay_dir("tests/fuzz/regressions/json", ppcc_fuzz_json);
	n += replay_dir("tests/fuzz/regressions/checkpoint", ppcc_fuzz_checkpoint);
	n += replay_dir("tests/fuzz/regressions/search", ppcc_fuzz_search);
	int seeds = replay_dir("tests/fuzz/seeds/plan", ppcc_fuzz_plan);
	seeds += replay_dir("tests/fuzz/seeds/json", ppcc_fuzz_json);
	seeds += replay_dir("tests/fuzz/seeds/search", ppcc_fuzz_search);
	int ckpt = replay_dir("tests/fuzz/seeds/checkpoint", ppcc_fuzz_checkpoint);
	ck_assert_msg(seeds >= 4, "only %d seeds under tests/fuzz/seeds", seeds);
	ck_assert_msg(ckpt >= 4, "only %d seeds under tests/fuzz/seeds/checkpoint", ckpt);
	seeds += ckpt;
	say_figure("replay", t0, "%d regressions, %d seeds", n, seeds);
}
END_TEST

/* The CSV and header checks the fuzzer relies on accept what they must
 * and reject what they must, so that a pass means something. */
START_TEST(harden_fuzz_output_checks_tell_good_from_bad)
{
	ck_assert(ppcc_fuzz_csv_ok("0F0,0B0,0REDUCE_GRAD\n", 21, 1, 1));
	ck_assert(ppcc_fuzz_csv_ok(",1F0,12RECV_B345\n0F0\n", 21, 2, 0));
	ck_assert(!ppcc_fuzz_csv_ok(",1F0\n", 5, 1, 1));
	ck_assert(!ppcc_fuzz_csv_ok("0F0\n", 4, 2, 0));
	ck_assert(!ppcc_fuzz_csv_ok("0F0", 3, 1, 0));
	ck_assert(!ppcc_fuzz_csv_ok("0X0\n", 4, 1, 0));
	ck_assert(!ppcc_fuzz_csv_ok("F0\n", 3, 1, 0));
	ck_assert(!ppcc_fuzz_csv_ok("0F\n", 3, 1, 0));
	ck_assert(ppcc_fuzz_csv_ok("0F0,(0F1;1B0)OVERLAP_F_B\n", 25, 1, 0));
	/* with communication, the per-stage cells' rules */
	static const char *const comms_ok[] = {
		"0F0,(0F1;1B0)OVERLAP_F_B,1REDUCE_GRAD,0REDUCE_GRAD\n",
		"0UNSHARD,0F0,0B0,0REDUCE_GRAD,0RESHARD\n",
		"0UNSHARD,0F0,0RESHARD,0UNSHARD,0B0,0REDUCE_GRAD,0RESHARD\n"};
	static const char *const comms_bad[] = {
		"0F0,0B0\n",                                  /* no REDUCE_GRAD */
		"0F0,0REDUCE_GRAD,0B0,0REDUCE_GRAD\n",        /* two, B after */
		"0UNSHARD,0F0,0B0,0REDUCE_GRAD\n",            /* left gathered */
		"0UNSHARD,0F0,0RESHARD,0B0,0REDUCE_GRAD\n",   /* B resharded */
		"0UNSHARD,0UNSHARD,0F0,0B0,0REDUCE_GRAD,0RESHARD\n",
		"0RESHARD,0F0,0B0,0REDUCE_GRAD\n"};
	for (size_t i = 0; i < sizeof comms_ok / sizeof comms_ok[0]; i++)
		ck_assert_msg(ppcc_fuzz_csv_ok(comms_ok[i], strlen(comms_ok[i]), 1, 1),
			      "%s", comms_ok[i]);
	for (size_t i = 0; i < sizeof comms_bad / sizeof comms_bad[0]; i++)
		ck_assert_msg(!ppcc_fuzz_csv_ok(comms_bad[i], strlen(comms_bad[i]),
						1, 1), "%s", comms_bad[i]);
	ck_assert(!ppcc_fuzz_csv_ok("(0B1;1F0)OVERLAP_F_B\n", 21, 1, 1));
	ck_assert(!ppcc_fuzz_csv_ok("(0F1;1B0)OVERLAP\n", 17, 1, 1));
	ck_assert(!ppcc_fuzz_csv_ok("(0F1,1B0)OVERLAP_F_B\n", 21, 1, 1));
	ck_assert(!ppcc_fuzz_csv_ok("\n", 1, 1, 0));
	ck_assert(ppcc_fuzz_header_ok("\"a\\\"b\\?\\?/\"\n\t", 13));
	ck_assert(!ppcc_fuzz_header_ok("\"?\?/\"", 5));
	ck_assert(!ppcc_fuzz_header_ok("x \\\ny", 5));
	ck_assert(!ppcc_fuzz_header_ok("\"\xc3\xa9\"", 4));
	ck_assert(!ppcc_fuzz_header_ok("a\rb", 3));
}
END_TEST

/* ---- truncation ----------------------------------------------------------- */

/* Every example cut at every byte goes through load, check, plan and
 * every emitter without a crash, a sanitizer report, a broken contract or
 * a leaked block. */
START_TEST(harden_truncated_examples_run_cleanly_in_process)
{
	watch_aborts();
	setenv("PPCC_FUZZ_MAX_ACTIONS", "4096", 1); /* every example's plan */
	double t0 = now_s();
	name_list ex = examples();
	int stride = light() ? 17 : 1;
	long cuts = 0;
	for (int i = 0; i < ex.n; i++) {
		size_t len;
		char *text = example_text(ex.names[i], &len);
		for (size_t cut = 0; cut <= len; cut += (size_t)stride) {
			snprintf(abort_context, sizeof abort_context,
				 "examples/%s cut at byte %zu", ex.names[i], cut);
			ppcc_fuzz_plan((const uint8_t *)text, cut);
			cuts++;
		}
		/* the whole file, whatever the stride */
		ppcc_fuzz_plan((const uint8_t *)text, len);
		free(text);
	}
	ck_assert_int_gt(cuts, 100 / stride);
	say_figure("truncation", t0, "%ld cuts of %d examples", cuts, ex.n);
	free_list(&ex);
}
END_TEST

/* ---- allocation failure --------------------------------------------------- */

typedef struct alloc_sweep {
	long runs;      /* failing runs checked */
	long total;     /* allocations of one complete run */
} alloc_sweep;

/* The N to try for a run of `total` allocations: every one when there
 * are at most `budget`, else the first budget/2 and then evenly spaced
 * ones to the last. */
static long next_n(long n, long total, long budget)
{
	if (total <= budget || n < budget / 2)
		return n + 1;
	long step = (total - budget / 2) / (budget / 2);
	return n + (step > 1 ? step : 1);
}

/* Exhaustive up to 6000 allocations (every example's front end, tiny's
 * emitters); the big examples' JSON and Chrome emitters, with tens of
 * thousands of jansson values, are sampled at 1500 points (the same
 * per-value code fails at each).  PPCC_HARDEN_LIGHT: 40 points. */
static long budget_for(long total)
{
	if (light())
		return 40;
	return total <= 6000 ? 6000 : 1500;
}

/* load -> check -> plan with the Nth allocation failing: the status is
 * PPCC_ENOMEM and every block is freed. */
static int front_end(const char *path, long fail_n, long *allocs)
{
	ppcc_diag d = {.fn = NULL};
	ppcc_config cfg;
	ppcc_plan plan;
	int err;
	ppcc_alloc_fail_at(fail_n);
	ppcc_arena *a = ppcc_arena_new();
	if (!a) {
		err = PPCC_ENOMEM;
		goto out;
	}
	if ((err = ppcc_config_load(&cfg, a, path, NULL, &d)) == 0 &&
	    (err = ppcc_config_check(&cfg, &d)) == 0)
		err = ppcc_plan_build(&plan, a, &cfg, &d);
out:
	ppcc_arena_free(a);
	*allocs = ppcc_alloc_count();
	ppcc_alloc_fail_at(0);
	return err;
}

static alloc_sweep sweep_front_end(const char *path)
{
	alloc_sweep sw = {0, 0};
	long live = ppcc_alloc_live();
	long huge = 1L << 40;
	ck_assert_int_eq(front_end(path, huge, &sw.total), 0);
	ck_assert_int_eq(ppcc_alloc_live(), live);
	for (long n = 1; n <= sw.total; n = next_n(n, sw.total, budget_for(sw.total))) {
		long allocs;
		snprintf(abort_context, sizeof abort_context,
			 "%s: load/check/plan with allocation %ld failing", path, n);
		int err = front_end(path, n, &allocs);
		ck_assert_msg(err == PPCC_ENOMEM,
			      "%s: allocation %ld of %ld failed: status %s, "
			      "expected out of memory", path, n, sw.total,
			      ppcc_status_str(err));
		ck_assert_msg(ppcc_alloc_live() == live,
			      "%s: allocation %ld failing leaks %ld blocks",
			      path, n, ppcc_alloc_live() - live);
		sw.runs++;
	}
	return sw;
}

static const ppcc_emit_options every_emitter[] = {
	{.format = PPCC_FMT_TEXT},
	{.format = PPCC_FMT_JSON},
	{.format = PPCC_FMT_DOT},
	{.format = PPCC_FMT_DOT, .view_deps = 1},
	{.format = PPCC_FMT_SVG},
	{.format = PPCC_FMT_PNG},
	{.format = PPCC_FMT_HEADER},
	{.format = PPCC_FMT_HEADER, .standalone = 1},
	{.format = PPCC_FMT_TORCH_CSV},
	{.format = PPCC_FMT_TORCH_CSV, .with_comms = 1},
	{.format = PPCC_FMT_CHROME},
};
#define N_EMITTERS ((int)(sizeof every_emitter / sizeof every_emitter[0]))

static int emit_failing(const ppcc_plan *plan, const ppcc_emit_options *o,
			long fail_n, long *allocs)
{
	ppcc_diag d = {.fn = NULL};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ppcc_alloc_fail_at(fail_n);
	int err;
	switch (o->format) {
	case PPCC_FMT_TEXT: err = ppcc_emit_text(f, plan, o); break;
	case PPCC_FMT_JSON: err = ppcc_emit_json(f, plan, o, &d); break;
	case PPCC_FMT_HEADER: err = ppcc_emit_header(f, plan, o, &d); break;
	case PPCC_FMT_TORCH_CSV: err = ppcc_emit_torch_csv(f, plan, o, &d); break;
	case PPCC_FMT_CHROME: err = ppcc_emit_chrome(f, plan, o, &d); break;
	default: err = ppcc_emit_dot(f, plan, o, &d); break;
	}
	*allocs = ppcc_alloc_count();
	ppcc_alloc_fail_at(0);
	fclose(f);
	free(buf);
	return err;
}

/* For each example: load, check and plan with the 1st, 2nd, ... Nth
 * allocation failing (and every later one), until a run needs fewer than
 * N; then each emitter the same way on a plan built normally.  Every
 * failing run returns PPCC_ENOMEM and leaves no block allocated.  Runs
 * of more than a few thousand allocations are sampled (see next_n). */
START_TEST(harden_every_failed_allocation_is_enomem_without_leak)
{
	watch_aborts();
	json_set_alloc_funcs(ppcc_malloc, ppcc_free);
	name_list ex = examples();
	for (int i = 0; i < ex.n; i++) {
		double t0 = now_s();
		if (light() && strcmp(ex.names[i], "tiny.yaml") != 0)
			continue;
		char rel[512];
		snprintf(rel, sizeof rel, "examples/%s", ex.names[i]);
		char *path = src_path(rel);
		alloc_sweep fe = sweep_front_end(path);
		ck_assert_int_gt(fe.total, 0);
		say_figure("allocation failure", t0, "%s: load/check/plan: %ld of "
			   "%ld allocations failed", ex.names[i], fe.runs, fe.total);

		tu_diag diag;
		tu_diag_init(&diag);
		ppcc_arena *a = ppcc_arena_new();
		ppcc_config cfg;
		ppcc_plan plan;
		ck_assert_int_eq(tu_plan_file(&plan, a, &cfg, rel, &diag), 0);
		long live = ppcc_alloc_live();
		for (int k = 0; k < N_EMITTERS; k++) {
			const ppcc_emit_options *o = &every_emitter[k];
			long total, tried = 0;
			double t1 = now_s();
			ck_assert_int_eq(emit_failing(&plan, o, 1L << 40, &total), 0);
			ck_assert_int_eq(ppcc_alloc_live(), live);
			for (long n = 1; n <= total; n = next_n(n, total, budget_for(total))) {
				tried++;
				long allocs;
				snprintf(abort_context, sizeof abort_context,
					 "%s: emitter %d (format %d) with allocation %ld failing",
					 path, k, o->format, n);
				int err = emit_failing(&plan, o, n, &allocs);
				ck_assert_msg(err == PPCC_ENOMEM,
					      "%s: emitter %d (format %d): allocation "
					      "%ld of %ld failed: status %s", path, k,
					      o->format, n, total, ppcc_status_str(err));
				ck_assert_msg(ppcc_alloc_live() == live,
					      "%s: emitter %d: allocation %ld failing "
					      "leaks %ld blocks", path, k, n,
					      ppcc_alloc_live() - live);
			}
			say_figure("allocation failure", t1, "%s: emitter %d: %ld of "
				   "%ld allocations failed", ex.names[i], k, tried, total);
		}
		ppcc_arena_free(a);
		free(path);
	}
	free_list(&ex);
}
END_TEST

/* ppcc check's path (read_json, validate) with the Nth allocation
 * failing. */
static int read_failing(const char *json, long fail_n, long *allocs)
{
	ppcc_diag d = {.fn = NULL};
	ppcc_plan back;
	int err = PPCC_ENOMEM;
	ppcc_alloc_fail_at(fail_n);
	ppcc_arena *b = ppcc_arena_new();
	if (b && (err = ppcc_read_json(&back, b, json, &d)) == 0)
		err = ppcc_schedule_validate(&back.best.schedule, &d, json, 50);
	ppcc_arena_free(b);
	*allocs = ppcc_alloc_count();
	ppcc_alloc_fail_at(0);
	return err;
}

/* The JSON reader of ppcc check under the same sweep. */
START_TEST(harden_json_reader_failed_allocation_is_enomem_without_leak)
{
	watch_aborts();
	json_set_alloc_funcs(ppcc_malloc, ppcc_free);
	tu_diag diag;
	tu_diag_init(&diag);
	ppcc_arena *a = ppcc_arena_new();
	ppcc_config cfg;
	ppcc_plan plan;
	ck_assert_int_eq(tu_plan_file(&plan, a, &cfg, "examples/tiny.yaml", &diag), 0);
	char *dir = tu_mkdtemp();
	char *json = join(dir, "tiny.json");
	FILE *f = fopen(json, "wb");
	ppcc_emit_options o = {.format = PPCC_FMT_JSON};
	ck_assert_int_eq(ppcc_emit_json(f, &plan, &o, &diag.d), 0);
	fclose(f);
	ppcc_arena_free(a);

	long live = ppcc_alloc_live(), total = 0;
	ck_assert_int_eq(read_failing(json, 1L << 40, &total), 0);
	ck_assert_int_gt(total, 0);
	for (long n = 1; n <= total; n = next_n(n, total, budget_for(total))) {
		long allocs;
		snprintf(abort_context, sizeof abort_context,
			 "read_json with allocation %ld failing", n);
		int err = read_failing(json, n, &allocs);
		ck_assert_msg(ppcc_alloc_live() == live,
			      "read_json with allocation %ld failing leaks %ld blocks",
			      n, ppcc_alloc_live() - live);
		ck_assert_msg(err == PPCC_ENOMEM,
			      "read_json: allocation %ld of %ld failed: status %s",
			      n, total, ppcc_status_str(err));
	}
	tu_rmtree(dir);
	free(json);
	free(dir);
}
END_TEST

/* ppcc plan --from-search's reader (search/read.c) with the Nth
 * allocation failing: entry 3 of a search's JSON. */
static int search_read_failing(const char *json, long fail_n, long *allocs)
{
	ppcc_diag d = {.fn = NULL};
	ppcc_search_pick pick;
	int err = PPCC_ENOMEM;
	ppcc_alloc_fail_at(fail_n);
	ppcc_arena *b = ppcc_arena_new();
	if (b)
		err = ppcc_search_read(&pick, b, json, 3, &d);
	ppcc_arena_free(b);
	*allocs = ppcc_alloc_count();
	ppcc_alloc_fail_at(0);
	return err;
}

START_TEST(harden_search_reader_failed_allocation_is_enomem_without_leak)
{
	watch_aborts();
	char *dir = tu_mkdtemp();
	char *json = join(dir, "search.json");
	char *model = src_path("examples/tiny.yaml");
	tu_run r;
	const char *args[] = {"search", model, "--top", "3", "-f", "json", "-o",
			      json, NULL};
	tu_ppcc_run(&r, NULL, NULL, 60, args);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	long live = ppcc_alloc_live(), total = 0;
	ck_assert_int_eq(search_read_failing(json, 1L << 40, &total), 0);
	ck_assert_int_gt(total, 0);
	for (long n = 1; n <= total; n = next_n(n, total, budget_for(total))) {
		long allocs;
		snprintf(abort_context, sizeof abort_context,
			 "ppcc_search_read with allocation %ld failing", n);
		int err = search_read_failing(json, n, &allocs);
		ck_assert_msg(ppcc_alloc_live() == live,
			      "ppcc_search_read with allocation %ld failing leaks "
			      "%ld blocks", n, ppcc_alloc_live() - live);
		ck_assert_msg(err == PPCC_ENOMEM,
			      "ppcc_search_read: allocation %ld of %ld failed: "
			      "status %s", n, total, ppcc_status_str(err));
	}
	tu_rmtree(dir);
	free(model);
	free(json);
	free(dir);
}
END_TEST

/* Bytes the C heap has handed out and not taken back (glibc's count; a
 * constant under the sanitizers' and valgrind's allocators, which find
 * leaks themselves). */
static long heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();
	return (long)mi.uordblks + (long)mi.hblkhd;
}

typedef enum phase {
	PHASE_LOAD = -3,   /* load and check */
	PHASE_PLAN = -2,
	PHASE_READ = -1    /* read_json and validate */
} phase;

static void run_phase(int k, const ppcc_plan *plan, const char *yaml,
		      const char *json)
{
	ppcc_diag d = {.fn = NULL};
	ppcc_arena *a = ppcc_arena_new();
	ppcc_config cfg;
	ppcc_plan p2;
	ck_assert_ptr_nonnull(a);
	if (k == PHASE_LOAD || k == PHASE_PLAN) {
		ck_assert_int_eq(ppcc_config_load(&cfg, a, yaml, NULL, &d), 0);
		ck_assert_int_eq(ppcc_config_check(&cfg, &d), 0);
		if (k == PHASE_PLAN)
			ck_assert_int_eq(ppcc_plan_build(&p2, a, &cfg, &d), 0);
	} else if (k == PHASE_READ) {
		ck_assert_int_eq(ppcc_read_json(&p2, a, json, &d), 0);
		ck_assert_int_eq(ppcc_schedule_validate(&p2.best.schedule, &d, json, 50), 0);
	} else {
		long allocs;
		ck_assert_int_eq(emit_failing(plan, &every_emitter[k], 0, &allocs), 0);
	}
	ppcc_arena_free(a);
}

/* Each phase run again and again leaves the C heap where it was: no
 * block allocated with plain malloc (libyaml, jansson, Graphviz, stdio)
 * is lost per run.  ppcc_alloc_live() cannot see those.  (SVG and PNG are
 * left to make valgrind, which tells Graphviz's own losses apart.) */
START_TEST(harden_repeated_runs_do_not_grow_the_heap)
{
	watch_aborts();
	tu_diag diag;
	tu_diag_init(&diag);
	ppcc_arena *a = ppcc_arena_new();
	ppcc_config cfg;
	ppcc_plan plan;
	ck_assert_int_eq(tu_plan_file(&plan, a, &cfg, "examples/tiny.yaml", &diag), 0);
	char *yaml = src_path("examples/tiny.yaml");
	char *dir = tu_mkdtemp();
	char *json = join(dir, "tiny.json");
	FILE *f = fopen(json, "wb");
	ppcc_emit_options o = {.format = PPCC_FMT_JSON};
	ck_assert_int_eq(ppcc_emit_json(f, &plan, &o, &diag.d), 0);
	fclose(f);
	int runs = light() ? 3 : 40;
	char report[4096] = "";
	size_t used = 0;
	for (int k = PHASE_LOAD; k < N_EMITTERS; k++) {
		/* Graphviz 2.42's layout loses a block per SVG or PNG (neato's
		 * scan_graph_mode, see tests/fuzz/valgrind.supp) */
		if (k >= 0 && (every_emitter[k].format == PPCC_FMT_SVG ||
			       every_emitter[k].format == PPCC_FMT_PNG))
			continue;
		/* caches (glibc's tcache, fonts) fill during the first runs:
		 * measure the second batch */
		for (int i = 0; i < 3 + runs; i++)
			run_phase(k, &plan, yaml, json);
		/* Graphviz's own tables can keep growing for a few hundred
		 * runs of the DOT emitter (tiny.yaml: 17 bytes a run until
		 * the 300th, then none; valgrind finds nothing lost): a
		 * batch that does not grow shows they are full, where a
		 * block lost per run grows every batch */
		long grown = 0;
		for (int batch = 0; batch < 12; batch++) {
			long before = heap_in_use();
			for (int i = 0; i < runs; i++)
				run_phase(k, &plan, yaml, json);
			grown = heap_in_use() - before;
			if (grown < 32L * runs)
				break;
		}
		/* a block lost per run costs at least glibc's smallest chunk,
		 * 32 bytes, per run */
		if (grown >= 32L * runs && used < sizeof report) {
			int n = snprintf(report + used, sizeof report - used,
					 "%s%s %d: %ld bytes in %d runs", used ? "; " : "",
					 k < 0 ? "phase" : "emitter", k, grown, runs);
			used += n > 0 ? (size_t)n : 0;
		}
	}
	ck_assert_msg(used == 0, "the heap grows with each run (phase -3 load, "
		      "-2 plan, -1 read_json; emitters as in every_emitter[]): %s",
		      report);
	ppcc_arena_free(a);
	tu_rmtree(dir);
	free(json);
	free(dir);
	free(yaml);
}
END_TEST

/* ---- the command line ------------------------------------------------------ */

/* Every example cut at a sample of bytes, through the binary: exit 0 or
 * 1, never a signal; a failed run leaves no file in the directory. */
START_TEST(harden_truncated_examples_cli_leave_no_file)
{
	name_list ex = examples();
	char *dir = tu_mkdtemp();
	char *in = join(dir, "cut.yaml");
	char *out = join(dir, "plan.json");
	int runs = 0;
	for (int i = 0; i < ex.n; i++) {
		size_t len;
		char *text = example_text(ex.names[i], &len);
		for (size_t cut = 0; cut <= len; cut += cut < len - 3 ? 29 : 1) {
			ck_assert_int_eq(write_bytes(in, text, cut), 0);
			unlink(out);
			tu_run r;
			const char *args[] = {"plan", in, "-f", "json", "-o", out, NULL};
			tu_ppcc_run(&r, NULL, NULL, 60, args);
			ck_assert_msg(r.status == 0 || r.status == 1,
				      "%s cut at %zu: exit %d: %s", ex.names[i], cut,
				      r.status, r.err);
			char what[1024];
			int n = count_entries(dir, what, sizeof what);
			if (r.status == 1) {
				ck_assert_msg(n == 1, "%s cut at %zu: exit 1 left: %s",
					      ex.names[i], cut, what);
				ck_assert_msg(strncmp(r.err, "ppcc: ", 6) == 0,
					      "%s cut at %zu: %s", ex.names[i], cut, r.err);
			} else {
				ck_assert_msg(n == 2 && tu_exists(out),
					      "%s cut at %zu: exit 0 left: %s",
					      ex.names[i], cut, what);
			}
			tu_run_free(&r);
			runs++;
		}
		free(text);
	}
	ck_assert_int_gt(runs, 20);
	tu_rmtree(dir);
	free(in);
	free(out);
	free(dir);
	free_list(&ex);
}
END_TEST

/* PPCC_FAIL_ALLOC=N for a sample of N: exit 4 with "out of memory",
 * nothing written, until N passes the run's allocation count (exit 0). */
START_TEST(harden_cli_failed_allocation_exits_four)
{
	static const char *const cases[][2] = {
		{"tiny.yaml", "json"}, {"tiny.yaml", "svg"},
		{"tiny.yaml", "header"}, {"tiny.yaml", "chrome"},
		{"gpt3-175b.yaml", "json"}, {"llama2-70b.yaml", "torch-csv"},
	};
	char *dir = tu_mkdtemp();
	char *out = join(dir, "out");
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char rel[256];
		snprintf(rel, sizeof rel, "examples/%s", cases[c][0]);
		char *in = src_path(rel);
		if (!tu_exists(in)) {
			free(in);
			continue;
		}
		int done = 0, failures = 0;
		for (long n = 1; n < 100000000 && !done;
		     n = n < 24 ? n + 1 : n + n / 2) {
			char env_n[64];
			snprintf(env_n, sizeof env_n, "PPCC_FAIL_ALLOC=%ld", n);
			char *env[] = {env_n, NULL};
			const char *args[] = {"plan", in, "-f", cases[c][1], "-o", out, NULL};
			tu_run r;
			tu_ppcc_run(&r, NULL, env, 120, args);
			if (r.status == 0) {
				done = 1;
			} else {
				ck_assert_msg(r.status == 4,
					      "%s -f %s, allocation %ld failing: exit %d: %s",
					      cases[c][0], cases[c][1], n, r.status, r.err);
				ck_assert_msg(strstr(r.err, "ppcc: error: out of memory\n"),
					      "%s -f %s, allocation %ld failing: %s",
					      cases[c][0], cases[c][1], n, r.err);
				ck_assert_msg(!tu_exists(out),
					      "%s -f %s, allocation %ld failing left output",
					      cases[c][0], cases[c][1], n);
				ck_assert_int_eq(count_entries(dir, NULL, 0), 0);
				failures++;
			}
			tu_run_free(&r);
			unlink(out);
		}
		ck_assert_msg(done && failures > 0, "%s -f %s: done %d after %d failures",
			      cases[c][0], cases[c][1], done, failures);
		free(in);
	}
	tu_rmtree(dir);
	free(out);
	free(dir);
}
END_TEST

/* ---- hostile names ---------------------------------------------------------- */

/* Names built to break a format: quoting in JSON, DOT and C; comment and
 * trigraph sequences; keywords of DOT, C and C++; identifiers that
 * collide once sanitized (also with the suffix de-duplication adds);
 * format directives; HTML; non-ASCII; and (index LONG_NAME) 20 kB. */
static const char *const hostile[] = {
	"quote\"inside",
	"back\\slash",
	"trailing\\",
	"new\nline",
	"comment */ end /* start // line",
	"?\?/ ?\?= ?\?( ?\?< trigraphs?\?",
	"node",
	"Digraph",
	"int",
	"asm",
	"9leading digit",
	"attn-out",
	"attn.out",
	"attn_out_2",
	"attn out",
	"\xce\xbc-layer \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82",
	"\xc3\x9c\xc3\x96",
	"%s%n%x%%",
	"<b>html</b> & &amp; ]; x -> y [",
	"__LINE__",
	"_Bool",
	"graph { a -- b }",
	NULL, /* LONG_NAME, filled in at run time */
};
#define N_HOSTILE ((int)(sizeof hostile / sizeof hostile[0]))
#define LONG_NAME (N_HOSTILE - 1)

static const char *hostile_name(int i)
{
	static char *long_name;
	if (i != LONG_NAME)
		return hostile[i];
	if (!long_name) {
		static const char unit[] = "Aa\"\\?\?/\xc3\xa9 */";
		size_t k = strlen(unit), n = 20480 / k;
		long_name = malloc(n * k + 1);
		for (size_t j = 0; j < n; j++)
			memcpy(long_name + j * k, unit, k);
		long_name[n * k] = '\0';
	}
	return long_name;
}

/* s as a YAML double-quoted scalar. */
static void yaml_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p < 0x20)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* A model named model_name whose layers carry every hostile name (or
 * l0, l1, ... when plain), four stages of one node. */
static void write_named_model(const char *path, const char *model_name,
			      int plain)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	fputs("model:\n  name: ", f);
	yaml_quoted(f, model_name);
	fputs("\n  layers:\n", f);
	for (int i = 0; i < N_HOSTILE; i++) {
		char plain_name[16];
		snprintf(plain_name, sizeof plain_name, "l%d", i);
		fputs("    - name: ", f);
		yaml_quoted(f, plain ? plain_name : hostile_name(i));
		fprintf(f, "\n      fwd_ms: %d.5\n      params: 1.0e6\n"
			"      activation_bytes: 1.0e5\n      stash_bytes: 2.0e5\n",
			1 + i % 3);
	}
	fputs("cluster:\n  devices: 4\n  devices_per_node: 4\n"
	      "  device: {name: ", f);
	yaml_quoted(f, plain ? "gpu" : model_name);
	fputs(", tflops: 100, efficiency: 0.5, memory_gib: 24}\n"
	      "  links:\n    intra_node: {bandwidth_gb_s: 32, latency_us: 10}\n"
	      "pipeline:\n  stages: 4\n  microbatches: 6\n  schedule: 1f1b\n", f);
	ck_assert_int_eq(fclose(f), 0);
}

/* ppcc plan in -f fmt (extra arguments after) into out; exit 0. */
static void plan_to(const char *in, const char *fmt, const char *out,
		    const char *extra1, const char *extra2)
{
	const char *args[] = {"plan", in, "-f", fmt, "-o", out, extra1, extra2, NULL};
	tu_run r;
	tu_ppcc_run(&r, NULL, NULL, 120, args);
	ck_assert_msg(r.status == 0, "plan %s -f %s: exit %d: %s", in, fmt,
		      r.status, r.err);
	/* a trainer's file: the one line naming what it holds, alone */
	char note[64];
	snprintf(note, sizeof note, "ppcc: note: wrote %s for ", fmt);
	if (ppcc_format_named(fmt)->reports)
		ck_assert_msg(strncmp(r.err, note, strlen(note)) == 0 &&
			      strchr(r.err, '\n') == r.err + r.err_len - 1,
			      "plan %s -f %s: stderr: %s", in, fmt, r.err);
	else
		ck_assert_msg(r.err_len == 0, "plan %s -f %s: stderr: %s", in,
			      fmt, r.err);
	tu_run_free(&r);
}

static json_t *load_json(const char *path)
{
	json_error_t je;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	ck_assert_msg(root != NULL, "%s:%d:%d: %s", path, je.line, je.column,
		      je.text);
	return root;
}

/* The label a name gets in DOT, as agread returns it: backslashes
 * doubled, '&' as an entity, a newline as the \n escape. */
static char *dot_expected_label(const char *s)
{
	char *out = malloc(strlen(s) * 5 + 1), *o = out;
	for (; *s; s++) {
		if (*s == '\\') {
			*o++ = '\\';
			*o++ = '\\';
		} else if (*s == '&') {
			memcpy(o, "&amp;", 5);
			o += 5;
		} else if (*s == '\n') {
			*o++ = '\\';
			*o++ = 'n';
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

typedef struct dot_shape {
	int nodes, edges;
	char *label;
} dot_shape;

static dot_shape dot_read(const char *path)
{
	dot_shape sh = {0, 0, NULL};
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	Agraph_t *g = agread(f, NULL);
	fclose(f);
	ck_assert_msg(g != NULL, "agread cannot parse %s", path);
	sh.nodes = agnnodes(g);
	sh.edges = agnedges(g);
	char *label = agget(g, "label");
	sh.label = strdup(label ? label : "");
	agclose(g);
	return sh;
}

/* The Graphviz command renders the file without complaint. */
static void graphviz_renders(const char *path, const char *layout_flag)
{
	char *argv[] = {"dot", "-Tsvg", "-o", "/dev/null", (char *)layout_flag,
			(char *)path, NULL};
	if (!layout_flag) {
		argv[4] = (char *)path;
		argv[5] = NULL;
	} else {
		argv[0] = "neato";
	}
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 120, argv), 0);
	if (r.status == 127) { /* Graphviz's commands are not installed */
		tu_run_free(&r);
		return;
	}
	ck_assert_msg(r.status == 0, "%s %s: exit %d: %s", argv[0], path,
		      r.status, r.err);
	ck_assert_msg(!strstr(r.err, "rror") && !strstr(r.err, "syntax"),
		      "%s %s: %s", argv[0], path, r.err);
	tu_run_free(&r);
}

/* Compiles a program that prints the header's names under cc (C11 or
 * C++17, all warnings as errors, pedantic) and returns what it prints. */
static char *header_names_via(const char *dir, const char *header,
			      const char *compiler, int standalone)
{
	char *prog_c = join(dir, "names.c");
	char *exe = join(dir, compiler[1] == '+' ? "names_cxx" : "names_c");
	FILE *f = fopen(prog_c, "wb");
	fprintf(f,
		"#include <stdio.h>\n#include <string.h>\n#include \"%s\"\n"
		"static void put(const char *s)\n{\n"
		"\tprintf(\"%%lu:\", (unsigned long)strlen(s));\n"
		"\tfwrite(s, 1, strlen(s), stdout);\n\tputchar('\\n');\n}\n"
		"int main(void)\n{\n\tput(hx_model_name);\n"
		"\tfor (size_t i = 0; i < sizeof hx_layer_names / "
		"sizeof hx_layer_names[0]; i++)\n\t\tput(hx_layer_names[i]);\n"
		"\treturn HX_LAYER_attn_out == 11 ? 0 : 3;\n}\n", header);
	fclose(f);
	char *inc = NULL;
	if (asprintf(&inc, "-I%s/include", tu_src()) < 0)
		abort();
	char *cxx[] = {(char *)compiler, "-x", "c++", "-std=c++17", "-Wall",
		       "-Wextra", "-Werror", "-pedantic", inc, "-o", exe, prog_c,
		       NULL};
	char *c11[] = {(char *)compiler, "-std=c11", "-Wall", "-Wextra", "-Werror",
		       "-pedantic", inc, "-o", exe, prog_c, NULL};
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, dir, NULL, NULL, 300,
				     compiler[1] == '+' ? cxx : c11), 0);
	ck_assert_msg(r.status == 0, "%s (standalone %d) rejects the header: %s",
		      compiler, standalone, r.err);
	tu_run_free(&r);
	char *argv[] = {exe, NULL};
	ck_assert_int_eq(tu_run_argv(&r, dir, NULL, NULL, 60, argv), 0);
	ck_assert_msg(r.status == 0, "%s: names program exit %d", compiler,
		      r.status);
	char *out = r.out;
	free(r.err);
	free(inc);
	free(exe);
	free(prog_c);
	return out;
}

static char *expected_names(const char *model_name)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fprintf(f, "%zu:%s\n", strlen(model_name), model_name);
	for (int i = 0; i < N_HOSTILE; i++)
		fprintf(f, "%zu:%s\n", strlen(hostile_name(i)), hostile_name(i));
	fclose(f);
	return buf;
}

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Each hostile name as the model's (and device's) name, every hostile
 * name as a layer name, through every format: the JSON holds the exact
 * names and the same schedule as plainly named layers give; the DOT
 * parses (agread) into the same graph as the plain one, shows the name
 * and renders with dot and neato; the header compiles under gcc and g++
 * (-Wall -Wextra -Werror -pedantic) and its strings are the exact names;
 * the CSV is the same bytes as the plain one; the Chrome trace parses,
 * has as many events as the plain one and the exact model name. */
START_TEST(harden_hostile_names_survive_every_format)
{
	char *dir = tu_mkdtemp();
	char *plain = join(dir, "plain.yaml");
	char *in = join(dir, "named.yaml");
	char *out = join(dir, "out");
	char *p_json = join(dir, "plain.json"), *p_dot = join(dir, "plain.dot");
	char *p_deps = join(dir, "plain-deps.dot");
	char *p_csv = join(dir, "plain.csv"), *p_csvc = join(dir, "plain-comms.csv");
	char *p_trace = join(dir, "plain.trace.json");
	write_named_model(plain, "plain", 1);
	plan_to(plain, "json", p_json, NULL, NULL);
	plan_to(plain, "dot", p_dot, NULL, NULL);
	plan_to(plain, "dot", p_deps, "--view", "deps");
	plan_to(plain, "torch-csv", p_csv, NULL, NULL);
	plan_to(plain, "torch-csv", p_csvc, "--with-comms", NULL);
	plan_to(plain, "chrome", p_trace, NULL, NULL);
	json_t *pj = load_json(p_json), *pt = load_json(p_trace);
	const char *plain_fp = json_string_value(json_object_get(pj, "fingerprint"));
	ck_assert_ptr_nonnull(plain_fp);
	size_t plain_events = json_array_size(json_object_get(pt, "traceEvents"));
	ck_assert_int_gt(plain_events, 0);
	dot_shape p_tl = dot_read(p_dot), p_dp = dot_read(p_deps);
	char *plain_csv = tu_read_file(p_csv, NULL);
	char *plain_csvc = tu_read_file(p_csvc, NULL);

	for (int k = 0; k < N_HOSTILE; k++) {
		const char *name = hostile_name(k);
		write_named_model(in, name, 0);

		/* JSON: exact names, same schedule */
		plan_to(in, "json", out, NULL, NULL);
		json_t *j = load_json(out);
		ck_assert_msg(json_is_string(json_object_get(j, "model")) &&
			      strcmp(json_string_value(json_object_get(j, "model")),
				     name) == 0, "model name %d changed in JSON", k);
		json_t *layers = json_object_get(j, "layers");
		ck_assert_int_eq(json_array_size(layers), N_HOSTILE);
		for (int i = 0; i < N_HOSTILE; i++)
			ck_assert_msg(strcmp(json_string_value(json_array_get(layers, (size_t)i)),
					     hostile_name(i)) == 0,
				      "layer name %d changed in JSON", i);
		ck_assert_str_eq(json_string_value(json_object_get(j, "fingerprint")),
				 plain_fp);
		json_decref(j);
		{
			const char *args[] = {"check", out, NULL};
			tu_run r;
			tu_ppcc_run(&r, NULL, NULL, 60, args);
			ck_assert_msg(r.status == 0, "check of named JSON: %s", r.err);
			tu_run_free(&r);
		}

		/* DOT: parses into the plain graph's shape, shows the name */
		plan_to(in, "dot", out, NULL, NULL);
		dot_shape tl = dot_read(out);
		ck_assert_int_eq(tl.nodes, p_tl.nodes);
		ck_assert_int_eq(tl.edges, p_tl.edges);
		if (strlen(name) < 100 && !strchr(name, '<')) {
			char *want = dot_expected_label(name);
			ck_assert_msg(strstr(tl.label, want),
				      "DOT label '%s' lacks name %d '%s'", tl.label,
				      k, want);
			free(want);
		}
		free(tl.label);
		graphviz_renders(out, "-n");
		plan_to(in, "dot", out, "--view", "deps");
		dot_shape dp = dot_read(out);
		ck_assert_int_eq(dp.nodes, p_dp.nodes);
		ck_assert_int_eq(dp.edges, p_dp.edges);
		free(dp.label);
		graphviz_renders(out, NULL);
		plan_to(in, "svg", out, NULL, NULL);
		plan_to(in, "png", out, NULL, NULL);
		plan_to(in, "text", out, NULL, NULL);

		/* header: compiles as C11 and C++17, exact strings */
		char *header = join(dir, "plan.h");
		plan_to(in, "header", header, "--prefix", "hx");
		if (k % 2) {
			const char *args[] = {"plan", in, "-f", "header", "-o", header,
					      "--prefix", "hx", "--standalone", NULL};
			tu_run r;
			tu_ppcc_run(&r, NULL, NULL, 60, args);
			ck_assert_msg(r.status == 0, "standalone header: %s", r.err);
			tu_run_free(&r);
		}
		size_t hlen;
		char *htext = tu_read_file(header, &hlen);
		ck_assert_msg(ppcc_fuzz_header_ok(htext, hlen),
			      "header for name %d holds a byte outside printable "
			      "ASCII, a trigraph or a line splice", k);
		free(htext);
		char *want = expected_names(name);
		char *got = header_names_via(dir, "plan.h", "gcc", k % 2);
		ck_assert_msg(strcmp(got, want) == 0, "gcc: header names differ (name %d)", k);
		free(got);
		got = header_names_via(dir, "plan.h", "g++", k % 2);
		ck_assert_msg(strcmp(got, want) == 0, "g++: header names differ (name %d)", k);
		free(got);
		free(want);
		free(header);

		/* CSV: well-formed, and names change nothing */
		plan_to(in, "torch-csv", out, NULL, NULL);
		size_t clen;
		char *csv = tu_read_file(out, &clen);
		ck_assert(ppcc_fuzz_csv_ok(csv, clen, 4, 0));
		ck_assert_str_eq(csv, plain_csv);
		free(csv);
		plan_to(in, "torch-csv", out, "--with-comms", NULL);
		csv = tu_read_file(out, &clen);
		ck_assert(ppcc_fuzz_csv_ok(csv, clen, 4, 1));
		ck_assert_str_eq(csv, plain_csvc);
		ck_assert_int_eq(count_lines(csv), 4);
		free(csv);

		/* Chrome trace: parses, same events, exact model name */
		plan_to(in, "chrome", out, NULL, NULL);
		json_t *t = load_json(out);
		ck_assert_int_eq(json_array_size(json_object_get(t, "traceEvents")),
				 plain_events);
		json_t *od = json_object_get(t, "otherData");
		ck_assert_msg(json_is_string(json_object_get(od, "model")) &&
			      strcmp(json_string_value(json_object_get(od, "model")),
				     name) == 0, "model name %d changed in the trace", k);
		json_decref(t);
	}
	json_decref(pj);
	json_decref(pt);
	free(p_tl.label);
	free(p_dp.label);
	free(plain_csv);
	free(plain_csvc);
	tu_rmtree(dir);
	free(plain); free(in); free(out); free(p_json); free(p_dot);
	free(p_deps); free(p_csv); free(p_csvc); free(p_trace);
	free(dir);
}
END_TEST

/* ---- hostile YAML ------------------------------------------------------------- */

/* A run of ppcc without captured output: exit status, peak memory and
 * time; stderr goes to err_path. */
typedef struct measured {
	int status;       /* exit code, or 128 + signal */
	long maxrss_kb;
	double seconds;
} measured;

static measured run_measured(const char *err_path, int timeout_s,
			     const char *const args[])
{
	measured m = {0, 0, 0};
	double t0 = now_s();
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int null = open("/dev/null", O_RDWR);
		if (fd < 0 || null < 0)
			_exit(126);
		dup2(null, 0);
		dup2(null, 1);
		dup2(fd, 2);
		alarm((unsigned)timeout_s);
		char *argv[20] = {(char *)tu_ppcc()};
		for (int i = 0; args[i] && i < 18; i++)
			argv[i + 1] = (char *)args[i];
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	struct rusage ru;
	ck_assert_int_eq(wait4(pid, &st, 0, &ru), pid);
	m.seconds = now_s() - t0;
	m.maxrss_kb = ru.ru_maxrss;
	m.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return m;
}

/* ppcc plan file fails with exit 1 within the timeout, with little
 * memory, saying "ppcc: " ... "error: " in a few lines, and says the
 * same the second time.  Returns the message (malloc'd). */
static char *fails_cleanly(const char *dir, const char *file, const char *what,
			   long max_rss_kb)
{
	char *err_path = join(dir, "stderr");
	const char *args[] = {"plan", file, "-f", "json", "-o", "/dev/null", NULL};
	measured m = run_measured(err_path, 60, args);
	char *msg = tu_read_file(err_path, NULL);
	ck_assert_msg(m.status == 1, "%s: exit %d (%.2f s): %s", what, m.status,
		      m.seconds, msg);
	ck_assert_msg(strncmp(msg, "ppcc: ", 6) == 0 && strstr(msg, "error: "),
		      "%s: unclear message: %s", what, msg);
	ck_assert_msg(count_lines(msg) <= 20, "%s: %d lines of errors", what,
		      count_lines(msg));
	ck_assert_msg(m.maxrss_kb <= max_rss_kb, "%s: peak memory %ld kB", what,
		      m.maxrss_kb);
	measured again = run_measured(err_path, 60, args);
	char *msg2 = tu_read_file(err_path, NULL);
	ck_assert_int_eq(again.status, 1);
	ck_assert_msg(strcmp(msg, msg2) == 0, "%s: a second run says\n%s\nnot\n%s",
		      what, msg2, msg);
	free(msg2);
	free(err_path);
	return msg;
}

static char *repeat_text(const char *head, const char *unit, long n,
			 const char *tail)
{
	size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
	char *s = malloc(hl + ul * (size_t)n + tl + 1);
	memcpy(s, head, hl);
	for (long i = 0; i < n; i++)
		memcpy(s + hl + (size_t)i * ul, unit, ul);
	memcpy(s + hl + (size_t)n * ul, tail, tl + 1);
	return s;
}

/* The peak memory a rejected file may cost: the binary itself, plus the
 * sanitizers' shadow in a SANITIZE=1 build. */
#define SMALL_RSS_KB (256L * 1024)

/* 100,000-deep nesting (flow sequences, flow mappings, block
 * sequences), a billion-laughs file and a 100 MB file each fail at once
 * with exit 1, a short clear message and little memory; the nesting
 * message says "nest" or "deep", the alias one "alias" or "anchor", the
 * big file's "size", "large" or "big". */
START_TEST(harden_parser_attacks_fail_fast_and_small)
{
	char *dir = tu_mkdtemp();
	char *file = join(dir, "attack.yaml");
	struct {
		const char *what, *head, *unit, *tail;
		const char *word1, *word2;
	} nests[] = {
		{"flow sequences", "model: ", "[", "\n", "nest", "deep"},
		{"flow mappings", "model: ", "{a: ", "\n", "nest", "deep"},
		{"block sequences", "", "- ", "x\n", "nest", "deep"},
		{"mixed", "model:\n  layers: ", "[{a: ", "\n", "nest", "deep"},
	};
	for (size_t i = 0; i < sizeof nests / sizeof nests[0]; i++) {
		char *text = repeat_text(nests[i].head, nests[i].unit, 100000,
					 nests[i].tail);
		ck_assert_int_eq(tu_write_file(file, text), 0);
		free(text);
		char *msg = fails_cleanly(dir, file, nests[i].what, SMALL_RSS_KB);
		ck_assert_msg(strstr(msg, nests[i].word1) || strstr(msg, nests[i].word2),
			      "%s: %s", nests[i].what, msg);
		free(msg);
	}

	/* a billion laughs: nine levels of nine aliases */
	FILE *f = fopen(file, "wb");
	fputs("lol0: &l0 [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", "
	      "\"lol\", \"lol\", \"lol\"]\n", f);
	for (int lv = 1; lv <= 9; lv++) {
		fprintf(f, "lol%d: &l%d [", lv, lv);
		for (int k = 0; k < 9; k++)
			fprintf(f, "*l%d%s", lv - 1, k < 8 ? ", " : "]\n");
	}
	fputs("model:\n  name: *l9\n", f);
	fclose(f);
	char *msg = fails_cleanly(dir, file, "billion laughs", SMALL_RSS_KB);
	ck_assert_msg(strstr(msg, "alias") || strstr(msg, "anchor"), "%s", msg);
	free(msg);

	/* an alias where a layer list is expected */
	tu_write_file(file, "model:\n  name: &n x\n  layers: [*n]\n");
	msg = fails_cleanly(dir, file, "alias in layers", SMALL_RSS_KB);
	ck_assert_msg(strstr(msg, "alias") || strstr(msg, "anchor"), "%s", msg);
	free(msg);

	/* 100 MB, sparse: refused before it is read */
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "model:\n  name: big\n", 19), 19);
	ck_assert_int_eq(ftruncate(fd, 100L << 20), 0);
	close(fd);
	msg = fails_cleanly(dir, file, "100 MB file", SMALL_RSS_KB);
	ck_assert_msg(strstr(msg, "size") || strstr(msg, "large") ||
		      strstr(msg, "big"), "%s", msg);
	free(msg);

	/* one 8 MB scalar: refused, not copied around */
	char *huge = repeat_text("model:\n  name: ", "abcdefgh", 1L << 20, "\n");
	ck_assert_int_eq(tu_write_file(file, huge), 0);
	free(huge);
	msg = fails_cleanly(dir, file, "8 MB scalar", SMALL_RSS_KB);
	free(msg);
	tu_rmtree(dir);
	free(file);
	free(dir);
}
END_TEST

/* tiny.yaml with `at` replaced by `with` (first occurrence). */
static void write_variant(const char *path, const char *text, size_t len,
			  const char *at, const char *with, size_t with_len)
{
	const char *p = strstr(text, at);
	ck_assert_msg(p != NULL, "no '%s' in the example", at);
	FILE *f = fopen(path, "wb");
	fwrite(text, 1, (size_t)(p - text), f);
	fwrite(with, 1, with_len, f);
	size_t rest = (size_t)(p - text) + strlen(at);
	fwrite(text + rest, 1, len - rest, f);
	fclose(f);
}

/* The first error's line and column in "ppcc: FILE:L:C: error: ...". */
static int error_position(const char *msg, const char *file, int *line,
			  int *col)
{
	char head[4200];
	snprintf(head, sizeof head, "ppcc: %s:", file);
	const char *p = strstr(msg, head);
	if (!p)
		return -1;
	return sscanf(p + strlen(head), "%d:%d: error:", line, col) == 2 ? 0 : -1;
}

/* NUL bytes, invalid UTF-8, a tab in the indentation, a duplicate key:
 * exit 1 with the position of the offence; a BOM and CRLF line ends are
 * either accepted with the very same plan or refused with a position;
 * either way the same every time. */
START_TEST(harden_awkward_bytes_get_the_same_clear_answer)
{
	size_t len;
	char *text = example_text("tiny.yaml", &len);
	char *dir = tu_mkdtemp();
	char *file = join(dir, "awkward.yaml");
	char *want_json = join(dir, "want.json");
	char *got_json = join(dir, "got.json");
	char *ex = src_path("examples/tiny.yaml");
	plan_to(ex, "json", want_json, NULL, NULL);
	char *want = tu_read_file(want_json, NULL);
	/* the line of "  name: tiny" */
	int name_line = 1;
	for (const char *p = text; p < strstr(text, "  name: tiny"); p++)
		name_line += *p == '\n';

	struct {
		const char *what, *at, *with;
		size_t with_len;
		int line; /* 0: anywhere */
	} bad[] = {
		{"NUL byte", "  name: tiny", "  name: ti\0ny", 13, 0},
		{"NUL in a comment", "# A small", "# A\0small", 9, 0},
		{"invalid UTF-8", "  name: tiny", "  name: ti\xff\xfeny", 14, 0},
		{"overlong UTF-8", "  name: tiny", "  name: ti\xc0\xafny", 14, 0},
		{"tab indentation", "  name: tiny", "\tname: tiny", 11, name_line},
		{"duplicate key", "  name: tiny", "  name: tiny\n  name: tiny2", 26,
		 name_line + 1},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		write_variant(file, text, len, bad[i].at, bad[i].with, bad[i].with_len);
		char *msg = fails_cleanly(dir, file, bad[i].what, SMALL_RSS_KB);
		int line, col;
		ck_assert_msg(error_position(msg, file, &line, &col) == 0 ||
			      strstr(msg, "ppcc: ") != NULL, "%s: %s", bad[i].what, msg);
		if (bad[i].line) {
			ck_assert_msg(error_position(msg, file, &line, &col) == 0 &&
				      line == bad[i].line, "%s: want line %d: %s",
				      bad[i].what, bad[i].line, msg);
		}
		if (strcmp(bad[i].what, "duplicate key") == 0) {
			/* its own line cites both places */
			const char *d = strstr(msg, "duplicate");
			ck_assert_msg(d != NULL, "duplicate key: %s", msg);
			const char *bol = d;
			while (bol > msg && bol[-1] != '\n')
				bol--;
			int dline, dcol;
			ck_assert_msg(error_position(bol, file, &dline, &dcol) == 0 &&
				      dline == name_line + 1, "duplicate key: %s", msg);
			char first[32];
			snprintf(first, sizeof first, "%d", name_line);
			const char *p = d, *eol = strchr(d, '\n');
			int cited = 0;
			while ((p = strstr(p, first)) && (!eol || p < eol)) {
				cited |= !isdigit((unsigned char)p[-1]) &&
					 !isdigit((unsigned char)p[strlen(first)]);
				p++;
			}
			ck_assert_msg(cited, "duplicate key: the first line %d is not "
				      "cited: %s", name_line, msg);
		}
		free(msg);
	}

	/* a BOM, CRLF line ends */
	char *crlf = malloc(len * 2 + 4), *o = crlf;
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\n')
			*o++ = '\r';
		*o++ = text[i];
	}
	struct {
		const char *what;
		const char *data;
		size_t n;
	} odd[] = {
		{"BOM", NULL, 0},
		{"CRLF", crlf, (size_t)(o - crlf)},
	};
	char *bom = malloc(len + 3);
	memcpy(bom, "\xef\xbb\xbf", 3);
	memcpy(bom + 3, text, len);
	odd[0].data = bom;
	odd[0].n = len + 3;
	for (size_t i = 0; i < 2; i++) {
		ck_assert_int_eq(write_bytes(file, odd[i].data, odd[i].n), 0);
		char *answers[2];
		int status[2];
		for (int k = 0; k < 2; k++) {
			unlink(got_json);
			const char *args[] = {"plan", file, "-f", "json", "-o", got_json, NULL};
			tu_run r;
			tu_ppcc_run(&r, NULL, NULL, 60, args);
			status[k] = r.status;
			answers[k] = r.err;
			if (r.status == 0) {
				char *got = tu_read_file(got_json, NULL);
				ck_assert_msg(strcmp(got, want) == 0,
					      "%s: accepted with a different plan", odd[i].what);
				free(got);
			} else {
				int line, col;
				ck_assert_msg(r.status == 1 &&
					      error_position(r.err, file, &line, &col) == 0,
					      "%s: exit %d: %s", odd[i].what, r.status, r.err);
			}
			free(r.out);
		}
		ck_assert_int_eq(status[0], status[1]);
		ck_assert_str_eq(answers[0], answers[1]);
		free(answers[0]);
		free(answers[1]);
	}
	free(bom);
	free(crlf);
	free(want);
	free(text);
	free(ex);
	tu_rmtree(dir);
	free(file);
	free(want_json);
	free(got_json);
	free(dir);
}
END_TEST

/* A model whose line numbers the strict-number cases refer to. */
static const char number_base[] =
	"model:\n"                          /*  1 */
	"  name: n\n"                       /*  2 */
	"  layers:\n"                       /*  3 */
	"    - name: a\n"                   /*  4 */
	"      fwd_ms: 1.0\n"               /*  5 */
	"      params: 1.0e6\n"             /*  6 */
	"      repeat: 4\n"                 /*  7 */
	"cluster:\n"                        /*  8 */
	"  devices: 2\n"                    /*  9 */
	"  devices_per_node: 2\n"           /* 10 */
	"  device: {name: g, tflops: 100, efficiency: 0.5, memory_gib: 24}\n"
	"pipeline:\n"                       /* 12 */
	"  stages: 2\n"                     /* 13 */
	"  microbatches: 4\n"               /* 14 */
	"  schedule: 1f1b\n";               /* 15 */

/* .nan, .inf, 1e400, -1, 0 where a positive number is needed, integer
 * overflow, yes/on, a fraction where an integer is needed: each exit 1,
 * the first error at the key's line (key or value column) and naming the
 * key. */
START_TEST(harden_strict_numbers_name_key_and_position)
{
	static const struct {
		const char *key, *old, *value;
	} cases[] = {
		{"microbatches", "microbatches: 4", ".nan"},
		{"microbatches", "microbatches: 4", ".inf"},
		{"microbatches", "microbatches: 4", "1e400"},
		{"microbatches", "microbatches: 4", "-1"},
		{"microbatches", "microbatches: 4", "0"},
		{"microbatches", "microbatches: 4", "99999999999999999999"},
		{"microbatches", "microbatches: 4", "4294967297"},
		{"microbatches", "microbatches: 4", "yes"},
		{"microbatches", "microbatches: 4", "on"},
		{"microbatches", "microbatches: 4", "2.5"},
		{"microbatches", "microbatches: 4", "0x10"},
		{"stages", "stages: 2", "-.inf"},
		{"stages", "stages: 2", "0"},
		{"fwd_ms", "fwd_ms: 1.0", ".nan"},
		{"fwd_ms", "fwd_ms: 1.0", ".inf"},
		{"fwd_ms", "fwd_ms: 1.0", "1e400"},
		{"fwd_ms", "fwd_ms: 1.0", "-1"},
		{"fwd_ms", "fwd_ms: 1.0", "on"},
		{"params", "params: 1.0e6", "-1e6"},
		{"repeat", "repeat: 4", "0"},
		{"repeat", "repeat: 4", "-4"},
		{"repeat", "repeat: 4", "18446744073709551617"},
		{"tflops", "tflops: 100", "0"},
		{"tflops", "tflops: 100", ".nan"},
		{"efficiency", "efficiency: 0.5", "1.5"},
		{"efficiency", "efficiency: 0.5", "0"},
		{"memory_gib", "memory_gib: 24", "-24"},
		{"devices", "devices: 2", "no"},
	};
	char *dir = tu_mkdtemp();
	char *file = join(dir, "numbers.yaml");
	/* the base is accepted */
	ck_assert_int_eq(tu_write_file(file, number_base), 0);
	{
		const char *args[] = {"plan", file, "-o", "/dev/null", NULL};
		tu_run r;
		tu_ppcc_run(&r, NULL, NULL, 60, args);
		ck_assert_msg(r.status == 0, "base model: %s", r.err);
		tu_run_free(&r);
	}
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		/* where the key is in the base: line, key and value columns */
		const char *at = strstr(number_base, cases[i].old);
		ck_assert_ptr_nonnull(at);
		int want_line = 1;
		const char *bol = number_base;
		for (const char *p = number_base; p < at; p++)
			if (*p == '\n') {
				want_line++;
				bol = p + 1;
			}
		int key_col = (int)(at - bol) + 1;
		int value_col = key_col + (int)strlen(cases[i].key) + 2;
		char with[128];
		snprintf(with, sizeof with, "%s: %s", cases[i].key, cases[i].value);
		write_variant(file, number_base, strlen(number_base), cases[i].old,
			      with, strlen(with));
		const char *args[] = {"plan", file, "-o", "/dev/null", NULL};
		tu_run r;
		tu_ppcc_run(&r, NULL, NULL, 60, args);
		ck_assert_msg(r.status == 1, "%s: %s: exit %d: %s", cases[i].key,
			      cases[i].value, r.status, r.err);
		int line = 0, col = 0;
		ck_assert_msg(error_position(r.err, file, &line, &col) == 0,
			      "%s: %s: no position: %s", cases[i].key, cases[i].value,
			      r.err);
		ck_assert_msg(line == want_line &&
			      (col == key_col || col == value_col),
			      "%s: %s: at %d:%d, want %d:%d or %d:%d: %s",
			      cases[i].key, cases[i].value, line, col, want_line,
			      key_col, want_line, value_col, r.err);
		char *first_nl = strchr(r.err, '\n');
		if (first_nl)
			*first_nl = '\0';
		ck_assert_msg(strstr(r.err, cases[i].key), "%s: %s: key not named: %s",
			      cases[i].key, cases[i].value, r.err);
		tu_run_free(&r);
	}
	tu_rmtree(dir);
	free(file);
	free(dir);
}
END_TEST

/* Control characters in a name (newline, ESC, BEL: all legal in a YAML
 * double-quoted scalar) never reach stderr raw: a name can neither forge
 * a diagnostic line nor send the terminal an escape sequence, whichever
 * phase quotes it (the loader, the memory check, the range checks). */
START_TEST(harden_names_in_diagnostics_cannot_forge_lines_or_escapes)
{
	static const char *const models[] = {
		/* the memory check quotes the stage's first and last layer */
		"model:\n  name: \"m\\e[31m\"\n  layers:\n"
		"    - {name: \"a\\e[2J\\nppcc: forged\", fwd_ms: 1, params: 1.0e12}\n"
		"    - {name: \"b\\e]0;title\\a\", fwd_ms: 1, params: 1.0e12}\n"
		"cluster:\n  devices: 2\n"
		"  device: {name: \"g\\e[5m\", tflops: 1, efficiency: 1, memory_gib: 1}\n"
		"pipeline:\n  stages: 2\n  microbatches: 2\n",
		/* the range check quotes the layer */
		"model:\n  name: m\n  layers:\n"
		"    - {name: \"a\\e[2J\\nppcc: forged\", fwd_flops: 1.0e40, params: 1}\n"
		"    - {name: b, fwd_ms: 1, params: 1}\n"
		"cluster:\n  devices: 2\n"
		"  device: {name: g, tflops: 1, efficiency: 1, memory_gib: 1}\n"
		"pipeline:\n  stages: 2\n  microbatches: 2\n",
		/* the loader quotes a key */
		"model:\n  \"bad\\e[2J\\nppcc: forged\": 1\n  name: x\n",
	};
	char *dir = tu_mkdtemp();
	char *file = join(dir, "names.yaml");
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
		ck_assert_int_eq(tu_write_file(file, models[i]), 0);
		const char *args[] = {"plan", file, "-o", "/dev/null", NULL};
		tu_run r;
		tu_ppcc_run(&r, NULL, NULL, 60, args);
		ck_assert_msg(r.status == 1, "model %zu: exit %d: %s", i, r.status,
			      r.err);
		for (size_t k = 0; k < r.err_len; k++) {
			unsigned char c = (unsigned char)r.err[k];
			ck_assert_msg(c == '\n' || (c >= 0x20 && c != 0x7f),
				      "model %zu: byte 0x%02x in stderr at %zu: %s",
				      i, c, k, r.err);
			if (k == 0 || r.err[k - 1] == '\n')
				ck_assert_msg(strncmp(r.err + k, "ppcc: ", 6) == 0,
					      "model %zu: a line that is not a "
					      "diagnostic: %s", i, r.err + k);
		}
		tu_run_free(&r);
	}
	tu_rmtree(dir);
	free(file);
	free(dir);
}
END_TEST

/* ---- faults in the environment ----------------------------------------------- */

/* A full device, as -o and as stdout, and a directory as -o: exit 3 with
 * "cannot write", in every format of the table (a trainer's of llama3-70b
 * on one stage at ZeRO 2, a model given as `transformer:` and settings
 * that every trainer runs). */
START_TEST(harden_full_device_and_directory_exit_three)
{
	char *tiny = src_path("examples/tiny.yaml");
	char *dir = tu_mkdtemp(), *models = tu_mkdtemp();
	char llama[4096];
	char *text = tu_read_src("examples/llama3-70b.yaml");
	char *z = strstr(text, "  zero: 1\n"), *p = strstr(text, "  stages: 4\n");
	ck_assert(z && p);
	z[8] = '2';
	p[10] = '1';
	tu_write_in(llama, sizeof llama, models, "llama.yaml", text);
	free(text);
	for (int k = 0; k < ppcc_n_formats; k++) {
		const char *name = ppcc_formats[k].name;
		char *ex = ppcc_formats[k].admits ? llama : tiny;
		const char *targets[] = {"/dev/full", dir};
		for (int t = 0; t < 2; t++) {
			const char *args[] = {"plan", ex, "-f", name, "-o",
					      targets[t], NULL};
			tu_run r;
			tu_ppcc_run(&r, NULL, NULL, 60, args);
			ck_assert_msg(r.status == 3, "-f %s -o %s: exit %d: %s",
				      name, targets[t], r.status, r.err);
			/* at the output's path, whatever the format */
			char want[1200];
			snprintf(want, sizeof want, "ppcc: %s: error: cannot write",
				 targets[t]);
			ck_assert_msg(strstr(r.err, want),
				      "-f %s -o %s: %s", name, targets[t], r.err);
			tu_run_free(&r);
		}
		char *cmd;
		if (asprintf(&cmd, "exec '%s' plan '%s' -f %s >/dev/full", tu_ppcc(),
			     ex, name) < 0)
			abort();
		char *argv[] = {"sh", "-c", cmd, NULL};
		tu_run r;
		ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, argv), 0);
		ck_assert_msg(r.status == 3, "-f %s >/dev/full: exit %d: %s",
			      name, r.status, r.err);
		ck_assert_msg(strstr(r.err, "ppcc: <stdout>: error: cannot write"),
			      "-f %s: %s", name, r.err);
		tu_run_free(&r);
		free(cmd);
	}
	ck_assert_int_eq(count_entries(dir, NULL, 0), 0);
	tu_rmtree_free(dir);
	tu_rmtree_free(models);
	free(tiny);
}
END_TEST

/* In a child: makes dir read-only in a private mount namespace (as root,
 * or as a user through a user namespace).  0, or -1 where the system
 * allows neither. */
static int read_only_view(const char *dir)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (unshare(CLONE_NEWNS) < 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			return -1;
		char map[64];
		int fd = open("/proc/self/setgroups", O_WRONLY);
		if (fd >= 0) {
			if (write(fd, "deny", 4) < 0) {}
			close(fd);
		}
		snprintf(map, sizeof map, "0 %d 1", (int)uid);
		if ((fd = open("/proc/self/uid_map", O_WRONLY)) < 0 ||
		    write(fd, map, strlen(map)) < 0)
			return -1;
		close(fd);
		snprintf(map, sizeof map, "0 %d 1", (int)gid);
		if ((fd = open("/proc/self/gid_map", O_WRONLY)) < 0 ||
		    write(fd, map, strlen(map)) < 0)
			return -1;
		close(fd);
	}
	/* nothing done here may reach the parent's mounts */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(dir, dir, NULL, MS_BIND, NULL) < 0 ||
	    mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
		return -1;
	return 0;
}

/* ppcc plan ... -o out run where dir is a read-only bind mount; the exit
 * code, or 200 when no read-only view can be made. */
static int plan_in_read_only_dir(const char *dir, const char *ex,
				 const char *out, const char *err_path)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			_exit(126);
		dup2(fd, 2);
		if (read_only_view(dir) < 0)
			_exit(200);
		char *argv[] = {(char *)tu_ppcc(), "plan", (char *)ex, "-f", "json",
				"-o", (char *)out, NULL};
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Writing into a read-only directory: exit 3 with "cannot write", the
 * existing file as it was, no new file. */
START_TEST(harden_read_only_directory_exits_three)
{
	char *ex = src_path("examples/tiny.yaml");
	char *dir = tu_mkdtemp(), *errdir = tu_mkdtemp();
	char *kept = join(dir, "plan.json"), *fresh = join(dir, "new.json");
	char *err_path = join(errdir, "stderr");
	ck_assert_int_eq(tu_write_file(kept, "precious\n"), 0);
	const char *outs[] = {kept, fresh};
	for (int i = 0; i < 2; i++) {
		int rc = plan_in_read_only_dir(dir, ex, outs[i], err_path);
		if (rc == 200) {
			tu_skip("harden_read_only_directory_exits_three",
				"no mount namespace for a read-only view");
			break;
		}
		char *msg = tu_read_file(err_path, NULL);
		ck_assert_msg(rc == 3, "-o %s in a read-only directory: exit %d: %s",
			      outs[i], rc, msg);
		ck_assert_msg(strstr(msg, "error: cannot write"), "%s", msg);
		free(msg);
	}
	char *still = tu_read_file(kept, NULL);
	ck_assert_str_eq(still, "precious\n");
	free(still);
	ck_assert(!tu_exists(fresh));
	ck_assert_int_eq(count_entries(dir, NULL, 0), 1);
	tu_rmtree(dir);
	tu_rmtree(errdir);
	free(kept); free(fresh); free(err_path); free(dir); free(errdir);
	free(ex);
}
END_TEST

/* Runs ppcc with args, stdio on /dev/null; max_bytes > 0: it may write
 * no file beyond that size (RLIMIT_FSIZE), and the write that would is
 * ended by SIGXFSZ, which ppcc does not catch: a kill at an exact point
 * of its output, however loaded the machine.  Returns its wait status. */
static int run_ppcc_upto(const char *const args[], size_t max_bytes)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		struct rlimit none = {0, 0};
		setrlimit(RLIMIT_CORE, &none);
		if (max_bytes > 0) {
			struct rlimit fsize = {max_bytes, max_bytes};
			if (setrlimit(RLIMIT_FSIZE, &fsize) != 0)
				_exit(126);
		}
		char *argv[24] = {(char *)tu_ppcc()};
		for (int i = 0; args[i] && i < 22; i++)
			argv[i + 1] = (char *)args[i];
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return st;
}

/* A large plan (tiny.yaml with 4096 microbatches, megabytes of JSON)
 * written over an existing file, killed (SIGXFSZ, as uncatchable for
 * ppcc as SIGKILL) once it has written 1 to 9 tenths of its output: the
 * file is byte for byte the old one and the directory holds nothing
 * else.  The points are bytes, not times. */
START_TEST(harden_killed_mid_write_keeps_previous_file)
{
	char *ex = src_path("examples/tiny.yaml");
	char *dir = tu_mkdtemp();
	char *target = join(dir, "plan.json");
	char *full_path = join(dir, "full.json");
	const char *full_args[] = {"plan", ex, "-s", "1f1b", "-p", "4", "-t", "1",
				   "-m", "4096", "-f", "json", "-o", full_path,
				   NULL};
	int st = run_ppcc_upto(full_args, 0);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "the large plan fails (status %d)", st);
	size_t full_len;
	char *full = tu_read_file(full_path, &full_len);
	ck_assert_int_gt(full_len, 1 << 20);
	unlink(full_path);

	static const char previous[] = "{\"previous\": \"plan\"}\n";
	for (int k = 1; k <= 9; k++) {
		ck_assert_int_eq(tu_write_file(target, previous), 0);
		const char *args[] = {"plan", ex, "-s", "1f1b", "-p", "4", "-t", "1",
				      "-m", "4096", "-f", "json", "-o", target,
				      NULL};
		st = run_ppcc_upto(args, full_len * (size_t)k / 10);
		ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGXFSZ,
			      "at %d0%%: not killed (status %d)", k, st);
		size_t len;
		char *now = tu_read_file(target, &len);
		ck_assert_msg(len == strlen(previous) &&
			      memcmp(now, previous, len) == 0,
			      "killed at %d0%%: the target is not the old file "
			      "(%zu bytes)", k, len);
		free(now);
		char what[1024];
		ck_assert_msg(count_entries(dir, what, sizeof what) == 1,
			      "killed at %d0%%: the directory holds %s", k, what);
	}
	free(full);
	tu_rmtree(dir);
	free(target);
	free(full_path);
	free(dir);
	free(ex);
}
END_TEST

Suite *suite_harden(void)
{
	Suite *s = tu_suite("harden", "inproc", 1800, (const TTest *const[]){
		harden_fuzz_output_checks_tell_good_from_bad,
		harden_fuzz_regressions_and_seeds_replay_cleanly,
		harden_truncated_examples_run_cleanly_in_process,
		harden_every_failed_allocation_is_enomem_without_leak,
		harden_json_reader_failed_allocation_is_enomem_without_leak,
		harden_search_reader_failed_allocation_is_enomem_without_leak,
		harden_repeated_runs_do_not_grow_the_heap,
		NULL});
	tu_tcase(s, "cli", 900, (const TTest *const[]){
		harden_truncated_examples_cli_leave_no_file,
		harden_cli_failed_allocation_exits_four,
		harden_hostile_names_survive_every_format,
		harden_parser_attacks_fail_fast_and_small,
		harden_awkward_bytes_get_the_same_clear_answer,
		harden_strict_numbers_name_key_and_position,
		harden_names_in_diagnostics_cannot_forge_lines_or_escapes,
		harden_full_device_and_directory_exit_three,
		harden_read_only_directory_exits_three,
		harden_killed_mid_write_keeps_previous_file,
		NULL});
	return s;
}
