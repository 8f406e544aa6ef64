/* Helpers shared by the Check suites, so that each suite keeps only what
 * is its own: building a suite from lists of tests, temporary
 * directories and files, running the ppcc binary and other commands,
 * reading files of the source and build trees, collecting diagnostics,
 * a deterministic random sequence, and checks several suites make of a
 * plan, a schedule, an installed header or the runtime under failing
 * allocations.  Every helper that checks does so with Check's asserts,
 * so it runs only inside a test. */
#ifndef PPCC_TESTUTIL_H
#define PPCC_TESTUTIL_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "ppcc.h"

/* Adds to s the test case name with the tests of the NULL-terminated
 * list, in order, and Check timeout timeout_s (0: Check's default, which
 * CK_DEFAULT_TIMEOUT sets); returns it for fixtures and loop tests. */
TCase *tu_tcase(Suite *s, const char *name, double timeout_s,
		const TTest *const tests[]);
/* A new suite of that first test case, as tu_tcase adds it. */
Suite *tu_suite(const char *name, const char *tcase, double timeout_s,
		const TTest *const tests[]);

/* Output of a child process. */
typedef struct tu_run {
	int status;   /* exit code, or 128 + signal */
	char *out;    /* stdout, NUL-terminated; free with free() */
	char *err;    /* stderr */
	size_t out_len, err_len;
} tu_run;

/* 1 in a sanitizer's build (PPCC_SAN set, as make check sets it). */
int tu_sanitized(void);

/* Runs argv (argv[0] is searched in PATH) in directory dir (NULL: the
 * current one) with stdin from in_path (NULL: /dev/null) and extra
 * environment assignments env (NULL-terminated, may be NULL).  Kills it
 * after timeout_s seconds (four times as many in a sanitizer's build,
 * PPCC_SAN set). */
int tu_run_argv(tu_run *out, const char *dir, const char *in_path,
		char *const env[], int timeout_s, char *const argv[]);
void tu_run_free(tu_run *r);

/* The ppcc binary ($PPCC) and the source tree ($PPCC_SRC, else "."). */
const char *tu_ppcc(void);
const char *tu_src(void);

/* Runs the ppcc binary with args (NULL-terminated, at most 62) as
 * tu_run_argv runs a command, which must start; TU_PPCC runs it with the
 * arguments given from the current directory, for 60 s at most. */
void tu_ppcc_run(tu_run *out, const char *dir, char *const env[],
		 int timeout_s, const char *const args[]);
#define TU_PPCC(r, ...) tu_ppcc_run((r), NULL, NULL, 60, \
				    (const char *const[]){__VA_ARGS__, NULL})

/* rel in the build tree: $PPCC_BUILD, else the directory of the running
 * test binary, else "build". */
void tu_build_path(char *out, size_t n, const char *rel);

/* `ppcc plan examples/EXAMPLE -f json -o DIR/plan.json`, which must
 * exit 0; the file's path in out (n bytes). */
void tu_plan_json(char *out, size_t n, const char *dir, const char *example);

/* A fresh temporary directory (removed by tu_rmtree; tu_rmtree_free
 * also frees the name tu_mkdtemp returned). */
char *tu_mkdtemp(void);
void tu_rmtree(const char *dir);
void tu_rmtree_free(char *dir);

/* Whole file into a malloc'd NUL-terminated buffer; NULL if unreadable. */
char *tu_read_file(const char *path, size_t *len);
/* The file rel of the source tree (tu_src), which must be readable, as
 * tu_read_file returns it. */
char *tu_read_src(const char *rel);
int tu_write_file(const char *path, const char *text);
/* Rewrites the file path with its first `from` (which must be there)
 * replaced by `to`. */
void tu_replace_in_file(const char *path, const char *from, const char *to);
/* Writes text to the file name in dir, which must succeed, and puts its
 * path in path (n bytes). */
void tu_write_in(char *path, size_t n, const char *dir, const char *name,
		 const char *text);
int tu_exists(const char *path);

/* The lines of the files prefix and prefix.N (N < 16: a run's ranks),
 * sorted by strcmp and each ended by '\n', without empty lines and
 * without the lines "loss STEP ..." of the steps before `from`; malloc'd. */
char *tu_sorted_lines(const char *prefix, int from);

/* A diagnostics sink that appends "LINE:COL: severity: MSG\n" to a buffer. */
typedef struct tu_diag {
	ppcc_diag d;
	char text[1 << 16];
	size_t len;
} tu_diag;
void tu_diag_init(tu_diag *t);

/* A check that cannot run on this machine (a tool or locale missing)
 * says so on stderr, naming the test and what is missing, and the caller
 * returns.  Under CI=true (.ci/run), which installs everything the suites
 * need, a skip fails the test instead (ck_abort_msg does not return). */
void tu_skip(const char *test, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int tu_skip_is_failure(void);

/* 1 when this build leaves MPI out on purpose (make HAVE_MPI=0 sets
 * PPCC_MPI_LEFT_OUT=1) and the runtime indeed has no MPI transport: the
 * MPI runs are then not part of the build under test, so the caller says
 * so on stderr (naming test) and returns without a skip.  0 otherwise. */
int tu_mpi_left_out(const char *test);

/* An installed header's use, source (a C file that includes it), must
 * compile with $CC (else cc) as C11 and with c++ as C++11, each with
 * -pedantic -Werror -Wall -Wextra against the source tree's include/;
 * without c++, test (the caller's name) skips the C++ half. */
void tu_header_compiles_alone(const char *test, const char *source);

/* The numeric pipeline of rt_pipe.h (2 stages on 2 ranks, 3 microbatches
 * of 1F1B, debug trailers, a 10 s timeout; grouped if asked) run with its
 * nth allocation failing (PPCC_FAIL_ALLOC=n) for n = 1, 2, ... below
 * max_n until a run succeeds, which must come after the 10th: each try
 * is a child process whose run must end in success or a clean
 * PPCC_RT_ENOMEM, and which fails, saying `fails`, when line_fails (may
 * be NULL) returns nonzero for a line of its diagnostics.  The variable
 * is read at a process's first allocation, so this needs Check's fork
 * mode: under CK_FORK=no, test (the caller's name) is skipped. */
void tu_rt_alloc_failures(const char *test, int max_n, int grouped,
			  int (*line_fails)(const char *line),
			  const char *fails);

/* splitmix64: the next number of the sequence *state seeds; one uniform
 * in [lo, hi) and one in the integers [lo, hi] drawn from it. */
uint64_t tu_rng_next(uint64_t *state);
double tu_rng_uniform(uint64_t *state, double lo, double hi);
int tu_rng_int(uint64_t *state, int lo, int hi);

/* s is the schedule ppcc_schedule_build makes for its kind and shape
 * with group_size and stages: the same fingerprint, stage table and
 * action lists (what names the case in a failure). */
void tu_assert_rebuilt_schedule(const ppcc_schedule *s, ppcc_arena *a,
				int group_size, const ppcc_stage_info *stages,
				const char *what);

/* Writes yaml to a temporary file, loads it, checks it and, when both
 * pass, builds its plan; the first failing status, else 0.  diag, which
 * it initialises, holds the diagnostics. */
int tu_plan_text(ppcc_plan *out, ppcc_arena *a, ppcc_config *cfg,
		 const char *yaml, tu_diag *diag);

/* Loads path (relative to the source tree) and builds its plan. */
int tu_plan_file(ppcc_plan *out, ppcc_arena *a, ppcc_config *cfg,
		 const char *path, tu_diag *diag);

/* Gives a built plan the per-action times it does not keep (its emitters
 * replay them): start_ms and end_ms of a full simulation of its schedule,
 * whose figures are the plan's, for tests that compare against them. */
void tu_plan_action_times(ppcc_plan *p, ppcc_arena *a);

/* The plan as the emitter of format (its row's, emit/formats.c) writes
 * it, NUL-terminated (free with free()), its length in *len (may
 * be NULL); the emitter must succeed. */
char *tu_emit(const ppcc_plan *p, int format, size_t *len);

#endif
