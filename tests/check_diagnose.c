/*
 * Tests of the flight records (src/runtime/flight.c) and `ppcc diagnose`
 * (src/diagnose/diagnose.c): for each fault the runtime's tests inject (a failing
 * callback, a stuck one, a killed MPI rank, mismatched schedules, locally
 * and over MPI), a rank whose action list skips a microbatch, and a job
 * still hanging when SIGUSR1 asks for the records, every rank's record is
 * written and diagnose names the injected cause and rank exactly; bad and
 * partial records are reported with FILE:LINE:COL.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ppcc.h"
#include "ppcc/runtime.h"
#include "runtime/rt.h"
#include "flight_synth.h"
#include "rt_pipe.h"
#include "testutil.h"

Suite *suite_diagnose(void);

static void quiet(int rank, const char *line, void *user)
{
	(void)rank;
	(void)line;
	(void)user;
}

/* `ppcc diagnose DIR [extra...]`; r filled. */
static void diagnose(tu_run *r, const char *dir, const char *a1, const char *a2,
		     const char *a3)
{
	char ppcc[PATH_MAX];
	tu_build_path(ppcc, sizeof ppcc, "ppcc");
	char *argv[] = {ppcc, "diagnose", (char *)dir, (char *)a1, (char *)a2,
			(char *)a3, NULL};
	ck_assert_int_eq(tu_run_argv(r, NULL, NULL, NULL, 60, argv), 0);
}

static int n_records(const char *dir)
{
	int n = 0;
	for (int r = 0; r < 8; r++) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/rank-%05d.flight", dir, r);
		n += tu_exists(path);
	}
	return n;
}

static void build_sched(ppcc_schedule *out, ppcc_arena *a, const rt_pipe *p,
			int ranks, int m)
{
	ppcc_stage_info st[64];
	rt_pipe_stage_table(p, st);
	ck_assert_int_eq(ppcc_schedule_build(out, a, PPCC_SCHED_1F1B, ranks, 1, m, 0, st), 0);
}

/* One local step of s with PPCC_FLIGHT_DIR=dir; its diagnostics to
 * lines (NULL: nowhere). */
static int run_recorded_to(const char *dir, const ppcc_schedule *s,
			   rt_pipe *pp, double timeout_s, rt_lines *lines)
{
	ppcc_rt_stage_fns fns[8];
	ppcc_rt_stats st[8] = {PPCC_RT_STATS_INIT};
	rt_pipe_fns(pp, fns);
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.timeout_s = timeout_s;
	o.diag = lines ? rt_lines_add : quiet;
	o.diag_user = lines;
	setenv("PPCC_FLIGHT_DIR", dir, 1);
	int err = ppcc_rt_run_local(st, s, fns, &o);
	unsetenv("PPCC_FLIGHT_DIR");
	return err;
}

static int run_recorded(const char *dir, const ppcc_schedule *s, rt_pipe *pp,
			double timeout_s)
{
	return run_recorded_to(dir, s, pp, timeout_s, NULL);
}

/* The number after `prefix` in text, or -1 when prefix is not there. */
static double figure_after(const char *text, const char *prefix)
{
	const char *at = strstr(text, prefix);
	return at ? atof(at + strlen(prefix)) : -1;
}

/* The record's file name holds the whole rank: five digits at least, more
 * past 99999 (rank 100000 wrote rank-00000.flight, rank 0's, and a job of
 * 100,000 ranks lost a record), cut only by the buffer. */
START_TEST(flight_record_names_hold_every_digit_of_the_rank)
{
	static const struct { int rank; const char *name; } cases[] = {
		{0, "d/rank-00000.flight"},
		{7, "d/rank-00007.flight"},
		{99999, "d/rank-99999.flight"},
		{100000, "d/rank-100000.flight"},
		{1048575, "d/rank-1048575.flight"},
		{2147483647, "d/rank-2147483647.flight"},
	};
	char buf[64];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ppcc_rt_flight_path(buf, sizeof buf, "d", cases[i].rank, "");
		ck_assert_str_eq(buf, cases[i].name);
	}
	ppcc_rt_flight_path(buf, sizeof buf, "d", 100000, ".tmp");
	ck_assert_str_eq(buf, "d/rank-100000.flight.tmp");
	ppcc_rt_flight_path(buf, 12, "d", 100000, "");
	ck_assert_str_eq(buf, "d/rank-1000");
}
END_TEST

START_TEST(no_record_without_the_variable_and_a_clean_run_writes_none)
{
	char *dir = tu_mkdtemp();
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(2, 4, 2, 0);
	ppcc_schedule s;
	build_sched(&s, a, pp, 2, 4);
	ck_assert_int_eq(run_recorded(dir, &s, pp, 5), 0);
	ck_assert_int_eq(n_records(dir), 0);
	/* a failure without the variable writes nothing either */
	pp->fault_op = PPCC_OP_F;
	pp->fault_stage = 0;
	pp->fault_mb = 1;
	pp->fault_ret = 3;
	ppcc_rt_stage_fns fns[2];
	rt_pipe_fns(pp, fns);
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.diag = quiet;
	ck_assert_int_eq(ppcc_rt_run_local(NULL, &s, fns, &o), PPCC_RT_ECALLBACK);
	ck_assert_int_eq(n_records(dir), 0);
	tu_run r;
	diagnose(&r, dir, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "error: no flight records"), "%s", r.err);
	tu_run_free(&r);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(failing_callback_is_named_as_the_first_failure)
{
	char *dir = tu_mkdtemp();
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(4, 8, 4, 0);
	ppcc_schedule s;
	build_sched(&s, a, pp, 4, 8);
	pp->fault_op = PPCC_OP_B;
	pp->fault_stage = 2;
	pp->fault_mb = 3;
	pp->fault_ret = -7;
	ck_assert_int_eq(run_recorded(dir, &s, pp, 2), PPCC_RT_ECALLBACK);
	ck_assert_int_eq(n_records(dir), 4);
	int idx = -1;
	for (int i = 0; i < s.ranks[2].n_actions; i++)
		if (s.ranks[2].actions[i].op == PPCC_OP_B && s.ranks[2].actions[i].mb == 3)
			idx = i;
	char want[256];
	snprintf(want, sizeof want, "cause: rank 2 failed first (callback failed) at "
		 "action %d B stage 2 mb 3, step 0: backward returned -7\n", idx);
	tu_run r;
	diagnose(&r, dir, NULL, NULL, NULL);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.out, want), "want '%s' in\n%s", want, r.out);
	ck_assert_msg(strstr(r.out, "  ranks 0, 1 and 3 stopped because rank 2 failed\n"),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, ": 4 of 4 ranks wrote flight records\n"), "%s", r.out);
	tu_run_free(&r);

	/* the same as JSON */
	diagnose(&r, dir, "-f", "json", NULL);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	json_error_t je;
	json_t *j = json_loads(r.out, 0, &je);
	ck_assert_msg(j, "not JSON: %s\n%s", je.text, r.out);
	json_t *cause = json_object_get(j, "cause");
	ck_assert_str_eq(json_string_value(json_object_get(cause, "kind")), "failure");
	ck_assert_int_eq(json_integer_value(json_object_get(cause, "rank")), 2);
	ck_assert_int_eq(json_array_size(json_object_get(j, "records")), 4);
	ck_assert_int_eq(json_array_size(json_object_get(j, "missing")), 0);
	/* each blocked rank's wait, as long as the run lasted at most */
	json_t *waits = json_object_get(j, "waits");
	for (size_t k = 0; k < json_array_size(waits); k++) {
		double w = json_real_value(json_object_get(json_array_get(waits, k), "seconds"));
		ck_assert_msg(w >= 0 && w < 2.5, "wait %zu: %g s", k, w);
	}
	json_decref(j);
	tu_run_free(&r);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
	tu_rmtree_free(dir);
}
END_TEST

/* rt_pipe.fault_wait of the stuck rank: returns once every other rank
 * has reported and its flight record is in dir (renamed into place
 * whole), so that the records tell who failed first; 60 s at most. */
typedef struct stuck_wait {
	rt_lines lines;
	const char *dir;
} stuck_wait;

static void wait_others_recorded(void *user)
{
	stuck_wait *w = user;
	rt_lines_wait_others(&w->lines);
	for (int r = 0, ms = 0; r < w->lines.ranks && ms < 60000; ) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/rank-%05d.flight", w->dir, r);
		if (r == w->lines.stuck || tu_exists(path)) {
			r++;
			continue;
		}
		nanosleep(&(struct timespec){0, 1000000L}, NULL);
		ms++;
	}
}

/* Stage 1's forward is stuck past a 0.5 s timeout until every other
 * rank has stopped and written its record (not for a time): the ranks that wait on it time out,
 * and the wait-for graph leads to rank 1.  The figures printed are
 * checked only where load cannot move them: a timeout never fires
 * early. */
START_TEST(stuck_callback_is_found_through_the_wait_for_graph)
{
	for (int p = 2; p <= 4; p += 2) {
		char *dir = tu_mkdtemp();
		ppcc_arena *a = ppcc_arena_new();
		rt_pipe *pp = rt_pipe_new(p, 4, p, 0);
		ppcc_schedule s;
		build_sched(&s, a, pp, p, 4);
		pp->fault_op = PPCC_OP_F;
		pp->fault_stage = 1;
		pp->fault_mb = 1;
		stuck_wait w = {.dir = dir};
		rt_lines_init(&w.lines, p, 1);
		pp->fault_wait = wait_others_recorded;
		pp->fault_wait_user = &w;
		ck_assert_int_eq(run_recorded_to(dir, &s, pp, 0.5, &w.lines),
				 PPCC_RT_ETIMEOUT);
		ck_assert_int_eq(n_records(dir), p);
		tu_run r;
		diagnose(&r, dir, NULL, NULL, NULL);
		ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
		const char *want = "cause: rank 1 holds everyone up: it has been inside "
				   "forward of stage 1 mb 1 for ";
		ck_assert_msg(figure_after(r.out, want) > 0, "p=%d: want '%s' in\n%s",
			      p, want, r.out);
		ck_assert_msg(strstr(r.out, "(step 0, timeout 0.500 s); rank "), "%s", r.out);
		if (p == 2)
			ck_assert_msg(figure_after(r.out, "; rank 0, the first to fail, "
						   "timed out after ") >= 0.5 &&
				      strstr(r.out, " in RECV_B of stage 0 mb 1 from rank 1\n") &&
				      figure_after(r.out, "  rank 0 waits RECV_B stage 0 mb 1 "
						   "from rank 1 (") >= 0.5, "%s", r.out);
		tu_run_free(&r);
		rt_pipe_free(pp);
		ppcc_arena_free(a);
		tu_rmtree_free(dir);
	}
}
END_TEST

typedef struct rank_arg {
	pthread_t th;
	int rank;
	const ppcc_schedule *s;
	const ppcc_rt_stage_fns *fns;
	ppcc_rt_local_world *w;
	double timeout_s;
	int debug;
	atomic_int *start_after; /* NULL, or the step waits for it */
	int init_status, step_status;
} rank_arg;

static void *rank_main(void *p)
{
	rank_arg *t = p;
	ppcc_rt *rt = NULL;
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.world = t->w;
	o.timeout_s = t->timeout_s;
	o.debug = t->debug;
	o.diag = quiet;
	t->init_status = ppcc_rt_init(&rt, t->s, t->rank, &o);
	if (t->init_status == 0) {
		/* an event, not a time: at most 60 s, the test's own bound */
		for (int ms = 0; t->start_after && !atomic_load(t->start_after) &&
				 ms < 60000; ms++)
			nanosleep(&(struct timespec){0, 1000000L}, NULL);
		t->step_status = ppcc_rt_step(NULL, rt, t->fns);
	}
	ppcc_rt_free(rt);
	return NULL;
}

/* Every rank in a thread, rank r holding s[r]; t[r].debug and
 * t[r].start_after as the caller set them. */
static void run_ranks(const char *dir, const ppcc_schedule *const *s, int p,
		      const ppcc_rt_stage_fns *fns, rank_arg *t, double timeout_s)
{
	ppcc_rt_local_world *w;
	ck_assert_int_eq(ppcc_rt_local_world_new(&w, p), 0);
	setenv("PPCC_FLIGHT_DIR", dir, 1);
	for (int r = 0; r < p; r++) {
		t[r] = (rank_arg){.rank = r, .s = s[r], .fns = fns, .w = w,
				  .timeout_s = timeout_s, .debug = t[r].debug,
				  .start_after = t[r].start_after};
		ck_assert_int_eq(pthread_create(&t[r].th, NULL, rank_main, &t[r]), 0);
	}
	for (int r = 0; r < p; r++)
		pthread_join(t[r].th, NULL);
	unsetenv("PPCC_FLIGHT_DIR");
	ppcc_rt_local_world_free(w);
}

START_TEST(mismatched_schedules_are_named_with_both_fingerprints)
{
	char *dir = tu_mkdtemp();
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(2, 4, 2, 0), *pq = rt_pipe_new(2, 5, 2, 0);
	ppcc_schedule s0, s1;
	build_sched(&s0, a, pp, 2, 4);
	build_sched(&s1, a, pq, 2, 5);
	ppcc_rt_stage_fns fns[2];
	rt_pipe_fns(pp, fns);
	const ppcc_schedule *ss[2] = {&s0, &s1};
	rank_arg t[2] = {{0}};
	run_ranks(dir, ss, 2, fns, t, 5);
	ck_assert_int_eq(t[0].init_status, PPCC_RT_EMISMATCH);
	ck_assert_int_eq(t[1].init_status, PPCC_RT_EMISMATCH);
	ck_assert_int_eq(n_records(dir), 2);
	char want[512];
	snprintf(want, sizeof want, "cause: rank 1's action list covers microbatches "
		 "0-4; rank 0 covers 0-3\n  the ranks hold different schedules: rank 1 "
		 "has %016llx (1f1b, 2 ranks, 2 stages, 5 microbatches), rank 0 %016llx "
		 "(1f1b, 2 ranks, 2 stages, 4 microbatches)\n",
		 (unsigned long long)ppcc_schedule_fingerprint(&s1),
		 (unsigned long long)ppcc_schedule_fingerprint(&s0));
	tu_run r;
	diagnose(&r, dir, NULL, NULL, NULL);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.out, want), "want\n%s\nin\n%s", want, r.out);
	tu_run_free(&r);
	rt_pipe_free(pp);
	rt_pipe_free(pq);
	ppcc_arena_free(a);
	tu_rmtree_free(dir);
}
END_TEST

/* Rank 1 holds a copy of the schedule whose own list lacks microbatch 3. */
START_TEST(rank_that_skips_a_microbatch_is_named_with_what_it_skips)
{
	char *dir = tu_mkdtemp();
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(4, 8, 4, 0);
	ppcc_schedule s, skip;
	build_sched(&s, a, pp, 4, 8);
	ppcc_rank_schedule ranks[4];
	memcpy(ranks, s.ranks, sizeof ranks);
	ppcc_action acts[256];
	int n = 0;
	for (int i = 0; i < s.ranks[1].n_actions; i++)
		if (s.ranks[1].actions[i].mb != 3)
			acts[n++] = s.ranks[1].actions[i];
	ranks[1].actions = acts;
	ranks[1].n_actions = n;
	skip = s;
	skip.ranks = ranks;
	skip.fingerprint = ppcc_schedule_fingerprint(&skip);
	ppcc_rt_stage_fns fns[4];
	rt_pipe_fns(pp, fns);
	const ppcc_schedule *ss[4] = {&s, &skip, &s, &s};
	rank_arg t[4] = {{0}};
	run_ranks(dir, ss, 4, fns, t, 5);
	ck_assert_int_eq(t[1].init_status, PPCC_RT_EINPUT);
	ck_assert_int_eq(t[0].init_status, PPCC_RT_EPEER);
	ck_assert_int_eq(n_records(dir), 4);
	tu_run r;
	diagnose(&r, dir, NULL, NULL, NULL);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	const char *want = "cause: rank 1's action list skips microbatch 3 (it covers "
			   "0-2,4-7; ranks 0, 2 and 3 cover 0-7)\n";
	ck_assert_msg(strstr(r.out, want), "want '%s' in\n%s", want, r.out);
	ck_assert_msg(strstr(r.out, "  the ranks hold different schedules: rank 1 has "),
		      "%s", r.out);
	tu_run_free(&r);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
	tu_rmtree_free(dir);
}
END_TEST

/* rt_pipe's forward, naming sample 1000 + mb first. */
static int forward_with_sample(int stage, int mb, const void *in, size_t in_n,
			       void *out, size_t out_n, void *user)
{
	ck_assert_int_eq(ppcc_rt_flight_sample(mb, 1000 + (uint64_t)mb), 0);
	return rt_pipe_forward(stage, mb, in, in_n, out, out_n, user);
}

/* Stage 0's forward of mb 1 scribbles on mb 0's output, which rank 1
 * (waiting before its step until the scribble is done) has not received
 * yet; in debug mode rank 1 fails its check, and diagnose names it and
 * the message. */
START_TEST(corrupted_message_is_named_at_its_receiver)
{
	char *dir = tu_mkdtemp();
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(2, 2, 2, 0);
	ppcc_schedule s;
	ppcc_stage_info st[4];
	rt_pipe_stage_table(pp, st);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_GPIPE, 2, 1, 2, 0, st), 0);
	ppcc_rt_stage_fns fns[2];
	rt_pipe_fns(pp, fns);
	fns[0].forward = rt_pipe_scribbling_forward;
	const ppcc_schedule *ss[2] = {&s, &s};
	rank_arg t[2] = {{.debug = 1}, {.debug = 1, .start_after = &pp->scribbled}};
	run_ranks(dir, ss, 2, fns, t, 10);
	ck_assert_int_eq(t[1].step_status, PPCC_RT_ECHECKSUM);
	ck_assert_int_eq(n_records(dir), 2);
	int idx = -1;
	for (int i = 0; i < s.ranks[1].n_actions && idx < 0; i++)
		if (s.ranks[1].actions[i].op == PPCC_OP_RECV_F)
			idx = i;
	char want[256];
	snprintf(want, sizeof want, "cause: rank 1 failed first (message check failed) at "
		 "action %d RECV_F stage 1 mb 0, step 0: ", idx);
	tu_run r;
	diagnose(&r, dir, NULL, NULL, NULL);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.out, want) && strstr(r.out, "checksum") &&
		      strstr(r.out, "  rank 0 stopped because rank 1 failed\n"),
		      "want '%s' in\n%s", want, r.out);
	tu_run_free(&r);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
	tu_rmtree_free(dir);
}
END_TEST

typedef struct local_job {
	const ppcc_schedule *s;
	rt_pipe *pp;
	int status;
} local_job;

static void *job_main(void *p)
{
	local_job *j = p;
	ppcc_rt_stage_fns fns[4];
	rt_pipe_fns(j->pp, fns);
	for (int k = 0; k < j->s->n_stages; k++)
		fns[k].forward = forward_with_sample;
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.timeout_s = 30;
	o.diag = quiet;
	j->status = ppcc_rt_run_local(NULL, j->s, fns, &o);
	return NULL;
}

/* A callback held until the test lets it go: entered once it runs, at
 * t_enter (CLOCK_MONOTONIC, the runtime's clock). */
typedef struct hold_gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int entered, released;
	double t_enter;
} hold_gate;

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* rt_pipe.fault_wait: held until released (60 s at most). */
static void gate_hold(void *user)
{
	hold_gate *g = user;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	pthread_mutex_lock(&g->mu);
	g->t_enter = mono_s();
	g->entered = 1;
	pthread_cond_broadcast(&g->cv);
	while (!g->released && pthread_cond_timedwait(&g->cv, &g->mu, &until) == 0)
		;
	pthread_mutex_unlock(&g->mu);
}

/* A job hanging (stage 1's forward of mb 1 held, well inside the
 * timeout, until the test lets it go): once it is inside, SIGUSR1 makes
 * every rank write its record, and diagnose, run while the job still
 * hangs, names rank 1 and for how long it has been inside that forward:
 * at least from its entry to the signal (an order of events, which no
 * load changes), and rank 0 waiting for it. */
START_TEST(sigusr1_records_a_live_hang_and_diagnose_names_the_holder)
{
	char *dir = tu_mkdtemp();
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(2, 4, 2, 0);
	ppcc_schedule s;
	build_sched(&s, a, pp, 2, 4);
	pp->fault_op = PPCC_OP_F;
	pp->fault_stage = 1;
	pp->fault_mb = 1;
	hold_gate g = {.entered = 0};
	pthread_mutex_init(&g.mu, NULL);
	pthread_cond_init(&g.cv, NULL);
	pp->fault_wait = gate_hold;
	pp->fault_wait_user = &g;
	local_job j = {&s, pp, -99};
	pthread_t th;
	setenv("PPCC_FLIGHT_DIR", dir, 1);
	ck_assert_int_eq(pthread_create(&th, NULL, job_main, &j), 0);
	pthread_mutex_lock(&g.mu);
	while (!g.entered)
		pthread_cond_wait(&g.cv, &g.mu);
	double t_enter = g.t_enter;
	pthread_mutex_unlock(&g.mu);
	double t_signal = mono_s();
	ck_assert_int_eq(kill(getpid(), SIGUSR1), 0);
	/* the records are written by the ranks' threads: wait for both
	 * (up to 60 s, only a bound on a failure) */
	for (int k = 0; k < 6000 && n_records(dir) < 2; k++)
		nanosleep(&(struct timespec){0, 10000000L}, NULL);
	ck_assert_int_eq(n_records(dir), 2);
	/* rank 0 settles into its wait for B once its send of mb 1 has
	 * completed, which the held forward does not hold up but a loaded
	 * machine may delay: until the records show it there, signal again
	 * (each signal rewrites both records before kill returns; the 600
	 * rounds are only a bound on a failure) */
	tu_run r;
	for (int k = 0;; k++) {
		diagnose(&r, dir, NULL, NULL, NULL);
		if (strstr(r.out, "; rank 0 waits RECV_B stage 0 mb ") || k == 600)
			break;
		tu_run_free(&r);
		nanosleep(&(struct timespec){0, 100000000L}, NULL);
		t_signal = mono_s();
		ck_assert_int_eq(kill(getpid(), SIGUSR1), 0);
	}
	pthread_mutex_lock(&g.mu);
	g.released = 1;
	pthread_cond_broadcast(&g.cv);
	pthread_mutex_unlock(&g.mu);
	pthread_join(th, NULL);
	unsetenv("PPCC_FLIGHT_DIR");
	ck_assert_int_eq(j.status, 0); /* it was slow, not broken */
	ck_assert_int_eq(ppcc_rt_flight_sample(0, 1), PPCC_RT_EINPUT); /* no callback */
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	const char *want = "cause: rank 1 holds everyone up: it has been inside forward "
			   "of stage 1 mb 1 (sample 1001) for ";
	const char *at = strstr(r.out, want);
	ck_assert_msg(at, "want '%s' in\n%s", want, r.out);
	double secs = atof(at + strlen(want));
	/* printed to the millisecond */
	ck_assert_msg(secs >= t_signal - t_enter - 0.0005, "%.3f s, signalled "
		      "%.3f s after it entered\n%s", secs, t_signal - t_enter, r.out);
	ck_assert_msg(strstr(r.out, "; rank 0 waits RECV_B stage 0 mb ") &&
		      strstr(r.out, " from rank 1\n"), "%s", r.out);
	tu_run_free(&r);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
	tu_rmtree_free(dir);
}
END_TEST

/* mpirun -np 2 tests/rt_mpi_prog MODE with PPCC_FLIGHT_DIR; 0, or -1
 * when MPI is missing. */
static int mpirun(const char *mode, const char *dir, int recovery)
{
	char prog[PATH_MAX], env_dir[PATH_MAX + 32];
	tu_build_path(prog, sizeof prog, "tests/rt_mpi_prog");
	if (access(prog, X_OK) != 0) {
		if (tu_mpi_left_out("diagnose mpirun"))
			return -1;
		tu_skip("diagnose mpirun", "%s not built (no MPI: package "
			"libopenmpi-dev)", prog);
		return -1;
	}
	snprintf(env_dir, sizeof env_dir, "PPCC_FLIGHT_DIR=%s", dir);
	char *argv[] = {"mpirun", "-np", "2", "--oversubscribe", "--allow-run-as-root",
			"--mca", "btl", "self,vader", prog, (char *)mode, NULL, NULL};
	if (recovery) {
		memmove(&argv[5], &argv[4], 6 * sizeof *argv);
		argv[4] = "--enable-recovery";
	}
	char *env[] = {"ASAN_OPTIONS=detect_leaks=0",
		       "OMPI_MCA_btl_vader_single_copy_mechanism=none", env_dir, NULL};
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, env, 60, argv), 0);
	int missing = r.status == 127;
	tu_run_free(&r);
	if (missing)
		fprintf(stderr, "diagnose: mpirun not found; MPI test skipped\n");
	return missing ? -1 : 0;
}

START_TEST(killed_mpi_rank_is_named_as_dead)
{
	char *dir = tu_mkdtemp();
	if (mpirun("kill", dir, 1) == 0) {
		ck_assert_int_eq(n_records(dir), 1);
		tu_run r;
		diagnose(&r, dir, NULL, NULL, NULL);
		ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
		ck_assert_msg(strstr(r.out, ": 1 of 2 ranks wrote flight records\n"
				     "cause: rank 1 wrote no flight record (likely dead); "
				     "rank 0, the first to fail, timed out after 2.0") &&
			      strstr(r.out, " from rank 1\n"), "%s", r.out);
		tu_run_free(&r);
	}
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(mpi_mismatched_schedules_are_named)
{
	char *dir = tu_mkdtemp();
	if (mpirun("mismatch", dir, 0) == 0) {
		ck_assert_int_eq(n_records(dir), 2);
		tu_run r;
		diagnose(&r, dir, NULL, NULL, NULL);
		ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
		ck_assert_msg(strstr(r.out, "cause: rank 1's action list covers microbatches "
				     "0-8; rank 0 covers 0-7\n") &&
			      strstr(r.out, "  the ranks hold different schedules: rank 1 "
				     "has "), "%s", r.out);
		tu_run_free(&r);
	}
	tu_rmtree_free(dir);
}
END_TEST

typedef struct dump_arg {
	ppcc_rt_local_world *w;
	const ppcc_schedule *s;
	int rank, err;
} dump_arg;

static void *dump_main(void *p)
{
	dump_arg *d = p;
	ppcc_rt *rt = NULL;
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.world = d->w;
	o.diag = quiet;
	o.timeout_s = 10;
	d->err = ppcc_rt_init(&rt, d->s, d->rank, &o);
	if (d->err == 0)
		d->err = ppcc_rt_dump(rt);
	ppcc_rt_free(rt);
	return NULL;
}

/* Records written on demand by ppcc_rt_dump, checked against the
 * schedule file the job should have run. */
START_TEST(dump_on_demand_and_schedule_file_comparison)
{
	char *dir = tu_mkdtemp(), ppcc[PATH_MAX], model[PATH_MAX];
	char j8[PATH_MAX], j4[PATH_MAX];
	tu_build_path(ppcc, sizeof ppcc, "ppcc");
	snprintf(model, sizeof model, "%s/examples/tiny.yaml", tu_src());
	snprintf(j8, sizeof j8, "%s/m8.json", dir);
	snprintf(j4, sizeof j4, "%s/m4.json", dir);
	char *p8[] = {ppcc, "plan", "-f", "json", "-m", "8", "-o", j8, model, NULL};
	char *p4[] = {ppcc, "plan", "-f", "json", "-m", "4", "-o", j4, model, NULL};
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, p8), 0);
	ck_assert_int_eq(r.status, 0);
	tu_run_free(&r);
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, p4), 0);
	ck_assert_int_eq(r.status, 0);
	tu_run_free(&r);
	ppcc_schedule *s;
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.diag = quiet;
	ck_assert_int_eq(ppcc_rt_schedule_load(&s, j8, &o), 0);
	ck_assert_int_eq(s->n_ranks, 4);
	ck_assert_int_eq(ppcc_rt_dump(NULL), PPCC_RT_EINPUT);
	/* each rank joins, dumps, leaves */
	ppcc_rt_local_world *w;
	ck_assert_int_eq(ppcc_rt_local_world_new(&w, 4), 0);
	setenv("PPCC_FLIGHT_DIR", dir, 1);
	pthread_t th[4];
	dump_arg da[4];
	for (int k = 0; k < 4; k++) {
		da[k] = (dump_arg){w, s, k, -99};
		ck_assert_int_eq(pthread_create(&th[k], NULL, dump_main, &da[k]), 0);
	}
	for (int k = 0; k < 4; k++) {
		pthread_join(th[k], NULL);
		ck_assert_int_eq(da[k].err, 0);
	}
	unsetenv("PPCC_FLIGHT_DIR");
	ppcc_rt_local_world_free(w);
	ck_assert_int_eq(n_records(dir), 4);

	diagnose(&r, dir, "--schedule", j8, NULL);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.out, "cause: no rank failed and none is waiting on "
			     "another\n"), "%s", r.out);
	tu_run_free(&r);
	diagnose(&r, dir, "--schedule", j4, NULL);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	char want[PATH_MAX + 256];
	snprintf(want, sizeof want, "cause: ranks 0, 1, 2 and 3 hold schedule %016llx "
		 "(1f1b, 4 ranks, 4 stages, 8 microbatches), not %s's ",
		 (unsigned long long)ppcc_schedule_fingerprint(s), j4);
	ck_assert_msg(strstr(r.out, want), "want '%s' in\n%s", want, r.out);
	ck_assert_msg(strstr(r.out, " (1f1b, 4 ranks, 4 stages, 4 microbatches)\n"), "%s",
		      r.out);
	tu_run_free(&r);
	ppcc_rt_schedule_free(s);
	tu_rmtree_free(dir);
}
END_TEST

/* A record cut short, a bad number, an unknown key, two records of one
 * rank: each reported at its line and column, exit 1, no diagnosis. */
START_TEST(bad_and_partial_records_are_located_errors)
{
	char *dir = tu_mkdtemp();
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(2, 4, 2, 0);
	ppcc_schedule s;
	build_sched(&s, a, pp, 2, 4);
	pp->fault_op = PPCC_OP_F;
	pp->fault_stage = 1;
	pp->fault_mb = 0;
	pp->fault_ret = 1;
	ck_assert_int_eq(run_recorded(dir, &s, pp, 2), PPCC_RT_ECALLBACK);
	char path[PATH_MAX + 32], other[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/rank-00001.flight", dir);
	size_t n;
	char *orig = tu_read_file(path, &n);
	ck_assert_ptr_nonnull(orig);

	struct {
		const char *from, *to, *expect;
	} cases[] = {
		{"\nwritten ", "\nwritten 12x.5 ",
		 "rank-00001.flight:9:9: error: expected seconds for the time written, "
		 "got '12x.5"},
		/* a time must be finite: strtod takes these */
		{"\nwritten ", "\nwritten 1e400 ",
		 "rank-00001.flight:9:9: error: expected seconds for the time written, "
		 "got '1e400"},
		{"\nwritten ", "\nwritten nan ",
		 "rank-00001.flight:9:9: error: expected seconds for the time written, "
		 "got 'nan"},
		{"\ntimeout ", "\ntimeout inf ",
		 "error: expected seconds for the timeout, got 'inf"},
		{"\nstep ", "\nsteps ", "rank-00001.flight:10:1: error: unknown key 'steps'"},
		{"ppcc-flight 1", "ppcc-flight 2",
		 "rank-00001.flight:1:13: error: flight record format 2; this ppcc reads 1"},
	};
	tu_run r;
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		char *at = strstr(orig, cases[k].from);
		ck_assert_ptr_nonnull(at);
		size_t pre = (size_t)(at - orig), fl = strlen(cases[k].from);
		char *t = malloc(n + 64);
		memcpy(t, orig, pre);
		strcpy(t + pre, cases[k].to);
		strcat(t, at + fl);
		ck_assert_int_eq(tu_write_file(path, t), 0);
		free(t);
		diagnose(&r, dir, NULL, NULL, NULL);
		ck_assert_msg(r.status == 1 && strstr(r.err, cases[k].expect) && !r.out[0],
			      "case %zu: exit %d\n%s\n%s", k, r.status, r.err, r.out);
		tu_run_free(&r);
	}
	/* cut in the middle of a line */
	orig[n / 2] = '\0';
	ck_assert_int_eq(tu_write_file(path, orig), 0);
	diagnose(&r, dir, NULL, NULL, NULL);
	ck_assert_msg(r.status == 1 && strstr(r.err, "error: truncated: the last line "
					      "has no newline"), "%s", r.err);
	tu_run_free(&r);
	/* cut at a line's end: the missing keys or 'end' */
	char *nl = strrchr(orig, '\n');
	nl[1] = '\0';
	ck_assert_int_eq(tu_write_file(path, orig), 0);
	diagnose(&r, dir, NULL, NULL, NULL);
	ck_assert_msg(r.status == 1 && strstr(r.err, "rank-00001.flight:") &&
		      strstr(r.err, ":1: error: truncated: no "), "%s", r.err);
	tu_run_free(&r);
	/* a second record of rank 0 */
	snprintf(path, sizeof path, "%s/rank-00000.flight", dir);
	snprintf(other, sizeof other, "%s/rank-00007.flight", dir);
	char *r0 = tu_read_file(path, NULL);
	ck_assert_int_eq(tu_write_file(other, r0), 0);
	ck_assert_int_eq(tu_write_file(path + 0, r0), 0);
	snprintf(path, sizeof path, "%s/rank-00001.flight", dir);
	unlink(path);
	diagnose(&r, dir, NULL, NULL, NULL);
	ck_assert_msg(r.status == 1 && strstr(r.err, "rank-00007.flight:2:1: error: a "
					      "second record of rank 0"), "%s", r.err);
	tu_run_free(&r);
	diagnose(&r, dir, "-f", "yaml", NULL);
	ck_assert_int_eq(r.status, 2);
	tu_run_free(&r);
	free(r0);
	free(orig);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
	tu_rmtree_free(dir);
}
END_TEST

/* A record is a file anyone may have written, and DIR is user text:
 * what diagnose prints of them shows a terminal escape as \x1b and a
 * direction override as <U+202E>, on stdout and in its errors. */
START_TEST(diagnosis_shows_escapes_and_bidi_controls_visibly)
{
	char *top = tu_mkdtemp(), dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/run\xe2\x80\xae" "gol.txt", top);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(2, 4, 2, 0);
	ppcc_schedule s;
	build_sched(&s, a, pp, 2, 4);
	pp->fault_op = PPCC_OP_F;
	pp->fault_stage = 1;
	pp->fault_mb = 0;
	pp->fault_ret = 1;
	ck_assert_int_eq(run_recorded(dir, &s, pp, 2), PPCC_RT_ECALLBACK);
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/rank-00001.flight", dir);
	size_t n;
	char *orig = tu_read_file(path, &n);
	ck_assert_ptr_nonnull(orig);
	char *at = strstr(orig, "\ncause ");
	ck_assert_ptr_nonnull(at);
	/* in the reason diagnose shows (up to "; waited") */
	char *waited = strstr(at, "; waited");
	ck_assert_ptr_nonnull(waited);
	size_t pre = (size_t)(waited - orig);
	char *t = malloc(n + 64);
	memcpy(t, orig, pre);
	strcpy(t + pre, " \x1b[2J\xe2\x80\xae" "evil");
	strcat(t, orig + pre);
	ck_assert_int_eq(tu_write_file(path, t), 0);
	tu_run r;
	diagnose(&r, dir, NULL, NULL, NULL);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(!strchr(r.out, '\x1b') && !strstr(r.out, "\xe2\x80\xae"),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "/run<U+202E>gol.txt: 2 of 2 ranks") &&
		      strstr(r.out, "\\x1b[2J<U+202E>evil"), "%s", r.out);
	tu_run_free(&r);
	/* JSON: escaped, lossless */
	diagnose(&r, dir, "-f", "json", NULL);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(!strchr(r.out, '\x1b') && !strstr(r.out, "\xe2\x80\xae") &&
		      strstr(r.out, "/run\\u202Egol.txt\",") &&
		      strstr(r.out, "\\u001B[2J\\u202Eevil"), "%s", r.out);
	json_error_t je;
	json_t *v = json_loads(r.out, 0, &je);
	ck_assert_msg(v != NULL, "%s", je.text);
	ck_assert_str_eq(json_string_value(json_object_get(v, "directory")), dir);
	json_decref(v);
	tu_run_free(&r);
	/* an error naming the path */
	strcpy(t + pre, "\njunk\n");
	ck_assert_int_eq(tu_write_file(path, t), 0);
	diagnose(&r, dir, NULL, NULL, NULL);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(!strstr(r.err, "\xe2\x80\xae") &&
		      strstr(r.err, "run<U+202E>gol.txt/rank-00001.flight:"), "%s", r.err);
	tu_run_free(&r);
	free(t);
	free(orig);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
	tu_rmtree_free(top);
}
END_TEST

/* A job of 16,384 ranks (four times the 4,096 diagnose once refused)
 * caught hanging: diagnose names the rank inside a forward at the end of
 * a chain of 9,000 waits, and the cycle when every rank waits on the
 * next.  What it answers is checked, not how fast. */
START_TEST(job_of_16384_ranks_is_diagnosed)
{
	enum { RANKS = 16384, HOLDER = 9000 };
	for (int shape = SYNTH_HOLDER; shape <= SYNTH_CYCLE; shape++) {
		char *dir = tu_mkdtemp();
		ck_assert_int_eq(synth_job(dir, RANKS, shape, HOLDER), 0);
		tu_run r;
		diagnose(&r, dir, "-f", "json", NULL);
		ck_assert_msg(r.status == 0, "exit %d: %.2000s", r.status, r.err);
		json_error_t jerr;
		json_t *o = json_loads(r.out, 0, &jerr);
		ck_assert_msg(o, "%s", jerr.text);
		json_t *cause = json_object_get(o, "cause");
		const char *kind = json_string_value(json_object_get(cause, "kind"));
		const char *text = json_string_value(json_object_get(cause, "text"));
		int rank = (int)json_integer_value(json_object_get(cause, "rank"));
		ck_assert_int_eq(json_integer_value(json_object_get(o, "ranks")), RANKS);
		ck_assert_int_eq(json_array_size(json_object_get(o, "records")), RANKS);
		ck_assert_int_eq(json_array_size(json_object_get(o, "missing")), 0);
		json_t *recs = json_object_get(o, "records");
		ck_assert_int_eq(json_integer_value(json_object_get(
			json_array_get(recs, RANKS - 1), "rank")), RANKS - 1);
		if (shape == SYNTH_HOLDER) {
			ck_assert_int_eq(json_array_size(json_object_get(o, "waits")),
					 RANKS - 1);
			ck_assert_str_eq(kind, "hang");
			ck_assert_int_eq(rank, HOLDER);
			ck_assert_str_eq(text, "rank 9000 holds everyone up: it has been "
					 "inside forward of stage 9000 mb 3 for 5.000 s "
					 "(step 0, timeout 600.000 s); rank 0 waits RECV_B "
					 "stage 0 mb 2 from rank 1");
		} else {
			ck_assert_int_eq(json_array_size(json_object_get(o, "waits")), RANKS);
			ck_assert_str_eq(kind, "deadlock");
			ck_assert_int_eq(rank, 1);
			ck_assert_msg(strncmp(text, "the ranks wait for each other in a "
					      "cycle: 1 -> 2 -> 3 -> 4 -> ", 62) == 0,
				      "%s", text);
			ck_assert_msg(strstr(text, "; rank 0 waits RECV_B stage 0 mb 2 "
					     "from rank 1"), "%s", text);
		}
		json_decref(o);
		tu_run_free(&r);
		tu_rmtree_free(dir);
	}
}
END_TEST

/* Every rank and peer a record names must be one of the job's ranks (a
 * peer -1, none, only for a compute): a record that names another is
 * refused at the line and column of the number, with the job's size. */
START_TEST(records_naming_a_rank_outside_the_job_are_refused)
{
	char *dir = tu_mkdtemp();
	char t0[32];
	snprintf(t0, sizeof t0, "%lld.000000", SYNTH_T0);
	struct {
		int rank;
		long long ranks;
		const char *current, *extra, *expect;
	} cases[] = {
		{2, 4, "7 RECV_F 2 1 2147483647 ", NULL,
		 "rank-00002.flight:13:22: error: peer 2147483647 outside the job's 4 ranks\n"},
		{1, 4, "9 RECV_B 1 2 2 ", "message 9 SEND_F 1 0 4 1.000000 -\n",
		 "rank-00001.flight:24:22: error: peer 4 outside the job's 4 ranks\n"},
		{3, 4, "6 RECV_F 3 3 -1 ", NULL,
		 "rank-00003.flight:13:22: error: peer -1 outside the job's 4 ranks\n"},
		{0, 4, "9 RECV_B 0 2 1 ", "action 5 B 0 0 -7 1.000000 2.000000\n",
		 "rank-00000.flight:24:16: error: peer -7 outside the job's 4 ranks\n"},
		{0, 2000000, "9 RECV_B 0 2 1 ", NULL,
		 "rank-00000.flight:3:7: error: a job of 2000000 ranks; ppcc diagnoses "
		 "jobs of 1 to 1048576 ranks\n"},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		ck_assert_int_eq(synth_job(dir, 4, SYNTH_HOLDER, 2), 0);
		char current[128];
		snprintf(current, sizeof current, "%s%s", cases[k].current, t0);
		ck_assert_int_eq(synth_record(dir, cases[k].rank, cases[k].ranks,
					      current, cases[k].extra), 0);
		tu_run r;
		diagnose(&r, dir, NULL, NULL, NULL);
		const char *at = strstr(r.err, "rank-0000");
		ck_assert_msg(r.status == 1 && !r.out[0] && at &&
			      strcmp(at, cases[k].expect) == 0,
			      "case %zu: exit %d\n%s\n%s", k, r.status, r.err, r.out);
		tu_run_free(&r);
	}
	/* the job itself is fine */
	ck_assert_int_eq(synth_job(dir, 4, SYNTH_HOLDER, 2), 0);
	tu_run r;
	diagnose(&r, dir, NULL, NULL, NULL);
	ck_assert_msg(r.status == 0 && strstr(r.out, "cause: rank 2 holds everyone up: "),
		      "exit %d\n%s\n%s", r.status, r.err, r.out);
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

/* The EXAMPLES of ppcc(1) and doc/runtime.md show `ppcc diagnose
 * examples/hang` (records of a real run): every line ppcc prints is
 * there, in order. */
START_TEST(man_page_example_matches_what_ppcc_prints)
{
	char rel[PATH_MAX], ppcc[PATH_MAX], dir[PATH_MAX], man[PATH_MAX];
	tu_build_path(rel, sizeof rel, "ppcc");
	ck_assert_ptr_nonnull(realpath(rel, ppcc)); /* run from another directory */
	snprintf(dir, sizeof dir, "%s", tu_src());
	snprintf(man, sizeof man, "%s/man/ppcc.1", tu_src());
	char *argv[] = {ppcc, "diagnose", "examples/hang", NULL};
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, dir, NULL, NULL, 60, argv), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	char *page = tu_read_file(man, NULL);
	ck_assert_ptr_nonnull(page);
	/* the page's text: "\\-" is "-" */
	char *q = page;
	for (char *p = page; *p; p++) {
		if (p[0] == '\\' && p[1] == '-')
			p++;
		*q++ = *p;
	}
	*q = '\0';
	const char *cmd = "$ ppcc diagnose examples/hang\n";
	const char *at = strstr(page, cmd);
	ck_assert_msg(at, "no example in ppcc(1)");
	at += strlen(cmd);
	ck_assert_msg(strncmp(at, r.out, strlen(r.out)) == 0,
		      "ppcc(1) shows\n%.600s\nppcc prints\n%s", at, r.out);
	ck_assert_msg(strstr(r.out, "cause: rank 2 holds everyone up: it has been inside "
			     "forward of stage 2 mb 3"), "%s", r.out);
	free(page);
	/* and doc/runtime.md shows the same */
	snprintf(man, sizeof man, "%s/doc/runtime.md", tu_src());
	page = tu_read_file(man, NULL);
	ck_assert_ptr_nonnull(page);
	at = strstr(page, cmd);
	ck_assert_msg(at && strncmp(at + strlen(cmd), r.out,
				    strlen(r.out)) == 0, "doc/runtime.md's example differs");
	free(page);
	tu_run_free(&r);
}
END_TEST

Suite *suite_diagnose(void)
{
	return tu_suite("diagnose", "diagnose", 120, (const TTest *const[]){
		flight_record_names_hold_every_digit_of_the_rank,
		no_record_without_the_variable_and_a_clean_run_writes_none,
		failing_callback_is_named_as_the_first_failure,
		stuck_callback_is_found_through_the_wait_for_graph,
		mismatched_schedules_are_named_with_both_fingerprints,
		corrupted_message_is_named_at_its_receiver,
		rank_that_skips_a_microbatch_is_named_with_what_it_skips,
		sigusr1_records_a_live_hang_and_diagnose_names_the_holder,
		killed_mpi_rank_is_named_as_dead,
		mpi_mismatched_schedules_are_named,
		dump_on_demand_and_schedule_file_comparison,
		bad_and_partial_records_are_located_errors,
		diagnosis_shows_escapes_and_bidi_controls_visibly,
		man_page_example_matches_what_ppcc_prints,
		job_of_16384_ranks_is_diagnosed,
		records_naming_a_rank_outside_the_job_are_refused,
		NULL});
}
