/*
 * Tests of the runtime (src/runtime/): a numeric pipeline whose results
 * are known (rt_pipe.h) run over every schedule kind and rank count, the
 * failure paths (fingerprint mismatch, a failing callback, a stuck one,
 * a corrupted message, allocation failures), the transports that need a
 * GPU or mpirun, and the public header and man page example.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ppcc.h"
#include "ppcc/runtime.h"
#include "rt_pipe.h"
#include "testutil.h"

Suite *suite_runtime(void);

/* The lines of one rank ("ppcc-rt: rank R: ..."), joined. */
static const char *rank_line(const rt_lines *d, int rank, char *buf, size_t n)
{
	char prefix[32];
	snprintf(prefix, sizeof prefix, "ppcc-rt: rank %d: ", rank);
	buf[0] = '\0';
	const char *p = d->text;
	size_t used = 0;
	while ((p = strstr(p, prefix)) != NULL) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (used + l + 2 < n) {
			memcpy(buf + used, p, l);
			used += l;
			buf[used++] = '|';
			buf[used] = '\0';
		}
		p += l;
	}
	return buf;
}

static int build_sched(ppcc_schedule *out, ppcc_arena *a, rt_pipe *p,
		       int kind, int ranks, int m)
{
	int v = ppcc_sched_kind_chunks(kind, ranks);
	ppcc_stage_info st[64];
	ck_assert_int_eq(p->S, ranks * v);
	rt_pipe_stage_table(p, st);
	int err = ppcc_schedule_build(out, a, kind, ranks, v, m, 0, st);
	if (err == 0)
		rt_pipe_place(p, out);
	return err;
}

static int count_recvs(const ppcc_schedule *s, uint64_t *bytes)
{
	int n = 0;
	*bytes = 0;
	for (int r = 0; r < s->n_ranks; r++)
		for (int i = 0; i < s->ranks[r].n_actions; i++) {
			const ppcc_action *a = &s->ranks[r].actions[i];
			if (a->op == PPCC_OP_RECV_F || a->op == PPCC_OP_RECV_B) {
				n++;
				*bytes += a->bytes;
			}
		}
	return n;
}

/* One step of every rank in threads; checks results, messages and the
 * statistics' totals. */
static void run_and_check(const ppcc_schedule *s, rt_pipe *p,
			  const ppcc_rt_options *base, const char *what)
{
	ppcc_rt_stage_fns fns[64];
	ppcc_rt_stats stats[8] = {PPCC_RT_STATS_INIT};
	ppcc_rt_options o = *base;
	rt_lines dl;
	char why[512];
	rt_lines_init(&dl, 0, 0);
	o.diag = rt_lines_add;
	o.diag_user = &dl;
	o.on_message = rt_pipe_on_message;
	o.message_user = p;
	rt_pipe_fns(p, fns);
	rt_pipe_reset(p);
	memset(p->sent, 0, 2 * (size_t)p->S * (size_t)p->m * sizeof *p->sent);
	memset(p->recvd, 0, 2 * (size_t)p->S * (size_t)p->m * sizeof *p->recvd);

	int err = ppcc_rt_run_local(stats, s, fns, &o);
	ck_assert_msg(err == 0, "%s: %s; %s", what, ppcc_rt_status_str(err), dl.text);
	ck_assert_msg(rt_pipe_check(p, s, -1, why, sizeof why) == 0, "%s: %s", what, why);
	ck_assert_msg(rt_pipe_check_messages(p, s, -1, 1, why, sizeof why) == 0,
		      "%s: %s", what, why);

	uint64_t want_bytes, got_bytes = 0, sent_bytes = 0;
	uint64_t want_msgs = (uint64_t)count_recvs(s, &want_bytes), got_msgs = 0;
	double loss = 0, ref = 0;
	for (int r = 0; r < s->n_ranks; r++) {
		ck_assert_int_eq(stats[r].status, 0);
		ck_assert_int_eq(stats[r].rank, r);
		got_msgs += stats[r].messages_received;
		got_bytes += stats[r].bytes_received;
		sent_bytes += stats[r].bytes_sent;
		loss += stats[r].loss_sum;
		ck_assert(stats[r].busy_s >= 0 && stats[r].wait_s >= 0);
		ck_assert(stats[r].busy_s + stats[r].wait_s <= stats[r].step_s + 1e-3);
		if (r == s->stages[s->n_stages - 1].rank)
			ck_assert_int_eq(stats[r].loss_count, s->n_microbatches);
	}
	for (int mb = 0; mb < p->m; mb++)
		ref += p->ref_loss[mb];
	ck_assert_msg(got_msgs == want_msgs, "%s: %llu messages, schedule has %llu",
		      what, (unsigned long long)got_msgs,
		      (unsigned long long)want_msgs);
	ck_assert(got_bytes == want_bytes && sent_bytes == want_bytes);
	ck_assert_msg(fabs(loss - ref) <= 1e-12 * fabs(ref), "%s: loss %.17g vs %.17g",
		      what, loss, ref);
	ck_assert_msg(dl.len == 0, "%s: unexpected diagnostics: %s", what, dl.text);
}

/* DualPipe, which the runtime does not run: its second pipeline holds a
 * copy of every stage's parameters (stage j on rank j, stage p+j on rank
 * p-1-j), whose gradients must be summed across those ranks before the
 * step to equal serial training, and the runtime reduces a stage's
 * gradients over its data-parallel replicas only.  Refused by name
 * before any callback runs. */
START_TEST(dualpipe_is_refused_by_name)
{
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(4, 4, 2, 0);
	ppcc_schedule s;
	ck_assert_int_eq(build_sched(&s, a, pp, PPCC_SCHED_DUALPIPE, 2, 4), 0);
	ppcc_rt_stage_fns fns[64];
	rt_pipe_fns(pp, fns);
	rt_lines dl;
	rt_lines_init(&dl, 0, 0);
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.diag = rt_lines_add;
	o.diag_user = &dl;
	o.timeout_s = 20;
	ppcc_rt_stats st[2] = {PPCC_RT_STATS_INIT, PPCC_RT_STATS_INIT};
	ck_assert_int_eq(ppcc_rt_run_local(st, &s, fns, &o), PPCC_RT_EINPUT);
	ck_assert_msg(strstr(dl.text, "the runtime cannot run the dualpipe "
				      "schedule"), "%s", dl.text);
	ck_assert_int_eq(pp->log_len[0] + pp->log_len[1], 0);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
}
END_TEST

/* ppcc_rt_stats is versioned, as the options are: a version the runtime
 * does not know is refused before anything runs and leaves the caller's
 * entries as they were; a zeroed entry (version 0) is read as 1, keeps
 * its 0 and gets every figure. */
START_TEST(stats_of_an_unknown_version_are_refused_untouched)
{
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(2, 4, 2, 0);
	ppcc_schedule s;
	ck_assert_int_eq(build_sched(&s, a, pp, PPCC_SCHED_1F1B, 2, 4), 0);
	ppcc_rt_stage_fns fns[64];
	rt_pipe_fns(pp, fns);
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.timeout_s = 20;
	ppcc_rt_stats st[2], copy[2];
	memset(st, 0xab, sizeof st);
	st[0].version = PPCC_RT_STATS_VERSION + 1;
	memcpy(copy, st, sizeof st);
	ck_assert_int_eq(ppcc_rt_run_local(st, &s, fns, &o), PPCC_RT_EINPUT);
	ck_assert(memcmp(st, copy, sizeof st) == 0);
	memset(st, 0, sizeof st);
	rt_pipe_reset(pp);
	ck_assert_int_eq(ppcc_rt_run_local(st, &s, fns, &o), 0);
	for (int r = 0; r < 2; r++) {
		ck_assert_int_eq(st[r].version, 0);
		ck_assert_int_eq(st[r].rank, r);
		ck_assert_int_eq(st[r].status, 0);
		ck_assert(st[r].messages_received > 0 && st[r].step_s > 0);
	}
	rt_pipe_free(pp);
	ppcc_arena_free(a);
}
END_TEST

START_TEST(numeric_pipeline_matches_serial_for_every_kind_and_rank_count)
{
	static const int ranks[] = {1, 2, 4};
	/* eager with receives posted 0, 1 and 3 computes ahead; grouped (the
	 * rendezvous discipline of nccl) */
	static const struct { int recv_ahead, grouped; } modes[] = {
		{1, 0}, {0, 0}, {3, 0}, {0, 1},
	};
	for (int kind = 0; kind < PPCC_SCHED_COUNT; kind = RT_PIPE_NEXT(kind))
		for (size_t ri = 0; ri < sizeof ranks / sizeof *ranks; ri++)
			for (size_t mi = 0; mi < sizeof modes / sizeof *modes; mi++) {
				int p = ranks[ri], m = 8;
				int v = ppcc_sched_kind_chunks(kind, p);
				ppcc_arena *a = ppcc_arena_new();
				rt_pipe *pp = rt_pipe_new(p * v, m, p, 0);
				ppcc_schedule s;
				ck_assert_int_eq(build_sched(&s, a, pp, kind, p, m), 0);
				ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
				o.debug = 1;
				o.timeout_s = 20;
				o.recv_ahead = modes[mi].recv_ahead;
				o.grouped = modes[mi].grouped;
				char what[96];
				snprintf(what, sizeof what, "%s p=%d recv_ahead=%d grouped=%d",
					 ppcc_schedule_kind_name(kind), p,
					 modes[mi].recv_ahead, modes[mi].grouped);
				run_and_check(&s, pp, &o, what);
				rt_pipe_free(pp);
				ppcc_arena_free(a);
			}
}
END_TEST

/* Every kind with its ranks relabelled (the placement permuted by a
 * seeded permutation, each rank's list moved with it), over threads,
 * eager and grouped (ppcc_rt_init's order check and the group plan
 * included): the results equal serial training bit for bit. */
START_TEST(relabelled_schedules_of_every_kind_match_serial)
{
	static const struct { int p, m; } shapes[] = {{3, 6}, {4, 8}, {5, 10}};
	for (int kind = 0; kind < PPCC_SCHED_COUNT; kind = RT_PIPE_NEXT(kind)) {
		int ran = 0;
		for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
			int p = shapes[i].p, m = shapes[i].m;
			int v = ppcc_sched_kind_chunks(kind, p);
			ppcc_arena *a = ppcc_arena_new();
			rt_pipe *pp = rt_pipe_new(p * v, m, p, 0);
			ppcc_schedule built, s;
			int perm[8];
			if (build_sched(&built, a, pp, kind, p, m) == 0) {
				rt_pipe_permutation(perm, p, 1 + (uint64_t)kind);
				ck_assert_int_eq(rt_pipe_relabel(&s, a, &built, perm), 0);
				rt_pipe_place(pp, &s);
				for (int grouped = 0; grouped <= 1; grouped++) {
					ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
					o.debug = 1;
					o.timeout_s = 20;
					o.grouped = grouped;
					char what[96];
					snprintf(what, sizeof what, "%s p=%d m=%d relabelled "
						 "grouped=%d", ppcc_schedule_kind_name(kind), p,
						 m, grouped);
					run_and_check(&s, pp, &o, what);
				}
				ran++;
			}
			rt_pipe_free(pp);
			ppcc_arena_free(a);
		}
		ck_assert_msg(ran >= 1, "%s: no shape built",
			      ppcc_schedule_kind_name(kind));
	}
}
END_TEST

/* Interleaved schedules deadlock when each run of consecutive SEND/RECV
 * actions is one rendezvous group; the planned grouping must run them,
 * here with more ranks and chunks than above. */
START_TEST(grouped_interleaved_schedules_run_without_deadlock)
{
	static const struct { int p, v, m; } cases[] = {
		{2, 2, 4}, {3, 3, 6}, {4, 4, 8}, {8, 2, 16}, {5, 3, 10},
	};
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		int p = cases[c].p, v = cases[c].v, m = cases[c].m;
		ppcc_arena *a = ppcc_arena_new();
		rt_pipe *pp = rt_pipe_new(p * v, m, p, 0);
		ppcc_stage_info st[64];
		ppcc_schedule s;
		rt_pipe_stage_table(pp, st);
		ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_INTERLEAVED, p, v,
						     m, 0, st), 0);
		ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
		o.grouped = 1;
		o.debug = 1;
		o.timeout_s = 5;
		char what[64];
		snprintf(what, sizeof what, "interleaved p=%d v=%d m=%d grouped", p, v, m);
		run_and_check(&s, pp, &o, what);
		rt_pipe_free(pp);
		ppcc_arena_free(a);
	}
}
END_TEST

START_TEST(split_backward_runs_input_then_weight_gradients)
{
	for (int p = 1; p <= 4; p *= 2) {
		ppcc_arena *a = ppcc_arena_new();
		rt_pipe *pp = rt_pipe_new(p, 6, p, 0);
		ppcc_schedule s, split;
		ck_assert_int_eq(build_sched(&s, a, pp, PPCC_SCHED_1F1B, p, 6), 0);
		ck_assert_int_eq(rt_pipe_split_backward(&split, a, &s), 0);
		ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
		o.debug = 1;
		o.timeout_s = 20;
		run_and_check(&split, pp, &o, "1f1b with I/W");
		o.grouped = 1;
		run_and_check(&split, pp, &o, "1f1b with I/W, grouped");
		rt_pipe_free(pp);
		ppcc_arena_free(a);
	}
}
END_TEST

/* Rank 1 of p = 4, m = 8 holds every microbatch's input under GPipe and
 * at most p - 1 = 3 under 1F1B, plus what is in flight: outputs and
 * gradients whose receiver has not posted yet, and a gradient received. */
START_TEST(buffers_in_flight_follow_the_schedule)
{
	int peak[2], pool[2];
	for (int k = 0; k < 2; k++) {
		int kind = k ? PPCC_SCHED_1F1B : PPCC_SCHED_GPIPE;
		ppcc_arena *a = ppcc_arena_new();
		rt_pipe *pp = rt_pipe_new(4, 8, 4, 6);
		ppcc_schedule s;
		ppcc_rt_stage_fns fns[4];
		ppcc_rt_stats st[4] = {PPCC_RT_STATS_INIT};
		ck_assert_int_eq(build_sched(&s, a, pp, kind, 4, 8), 0);
		rt_pipe_fns(pp, fns);
		ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
		o.recv_ahead = 0;
		ck_assert_int_eq(ppcc_rt_run_local(st, &s, fns, &o), 0);
		peak[k] = st[1].peak_buffers;
		pool[k] = st[1].pool_buffers;
		/* one size everywhere: the pool is the peak */
		ck_assert_int_eq(pool[k], peak[k]);
		rt_pipe_free(pp);
		ppcc_arena_free(a);
	}
	ck_assert_msg(peak[0] >= 8, "gpipe rank 1 peak %d", peak[0]);
	ck_assert_msg(peak[1] <= 3 + 4 && peak[1] < peak[0],
		      "1f1b rank 1 peak %d (gpipe %d)", peak[1], peak[0]);
}
END_TEST

/* ---- the world API in user threads ---------------------------------------- */

typedef struct rank_thread {
	pthread_t th;
	int rank;
	const ppcc_schedule *s;
	const ppcc_rt_stage_fns *fns;
	ppcc_rt_options o;
	int steps;
	double delay_s; /* before the first step */
	atomic_int *start_after; /* NULL, or the first step waits for it */
	int init_status, step_status;
	ppcc_rt_stats stats;
	int max_peak; /* over the steps */
} rank_thread;

static void *rank_main(void *arg)
{
	rank_thread *t = arg;
	ppcc_rt *rt = NULL;
	t->init_status = ppcc_rt_init(&rt, t->s, t->rank, &t->o);
	if (t->init_status == 0) {
		if (t->delay_s > 0) {
			struct timespec ts = {0, (long)(t->delay_s * 1e9)};
			nanosleep(&ts, NULL);
		}
		/* an event, not a time: at most 60 s, the test's own bound */
		for (int ms = 0; t->start_after && !atomic_load(t->start_after) &&
				 ms < 60000; ms++) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
		for (int k = 0; k < t->steps && t->step_status == 0; k++) {
			t->step_status = ppcc_rt_step(&t->stats, rt, t->fns);
			if (t->stats.peak_buffers > t->max_peak)
				t->max_peak = t->stats.peak_buffers;
		}
	}
	ppcc_rt_free(rt);
	return NULL;
}

static void run_threads(rank_thread *t, int n)
{
	for (int r = 0; r < n; r++)
		ck_assert_int_eq(pthread_create(&t[r].th, NULL, rank_main, &t[r]), 0);
	for (int r = 0; r < n; r++)
		pthread_join(t[r].th, NULL);
}

START_TEST(repeated_steps_recycle_buffers_and_deliver_each_message_once)
{
	for (int kind = 0; kind < PPCC_SCHED_COUNT; kind = RT_PIPE_NEXT(kind)) {
		int p = 2, v = ppcc_sched_kind_chunks(kind, p), m = 4;
		ppcc_arena *a = ppcc_arena_new();
		rt_pipe *pp = rt_pipe_new(p * v, m, p, 6);
		ppcc_schedule s;
		ppcc_rt_stage_fns fns[8];
		ppcc_rt_local_world *w;
		rt_lines dl;
		char why[512];
		rt_lines_init(&dl, 0, 0);
		ck_assert_int_eq(build_sched(&s, a, pp, kind, p, m), 0);
		rt_pipe_fns(pp, fns);
		ck_assert_int_eq(ppcc_rt_local_world_new(&w, p), 0);
		rank_thread t[2];
		memset(t, 0, sizeof t);
		for (int r = 0; r < p; r++) {
			ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
			o.world = w;
			o.debug = 1;
			o.timeout_s = 20;
			o.on_message = rt_pipe_on_message;
			o.message_user = pp;
			o.diag = rt_lines_add;
			o.diag_user = &dl;
			t[r] = (rank_thread){.rank = r, .s = &s, .fns = fns, .o = o,
					     .steps = 3};
		}
		run_threads(t, p);
		for (int r = 0; r < p; r++) {
			ck_assert_msg(t[r].init_status == 0 && t[r].step_status == 0,
				      "%s", dl.text);
			/* one size everywhere: the pool holds no more buffers
			 * than were ever in use at once */
			ck_assert_int_le(t[r].stats.pool_buffers, t[r].max_peak);
		}
		ck_assert_int_eq(rt_pipe_check_messages(pp, &s, -1, 3, why, sizeof why), 0);
		ppcc_rt_local_world_free(w);
		rt_pipe_free(pp);
		ppcc_arena_free(a);
	}
}
END_TEST

START_TEST(mismatched_fingerprints_refused_before_any_data_moves)
{
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(2, 4, 2, 0), *pq = rt_pipe_new(2, 5, 2, 0);
	ppcc_schedule s0, s1;
	ppcc_rt_stage_fns fns[2];
	ppcc_rt_local_world *w;
	rt_lines dl;
	char buf[2048];
	rt_lines_init(&dl, 0, 0);
	ck_assert_int_eq(build_sched(&s0, a, pp, PPCC_SCHED_1F1B, 2, 4), 0);
	ck_assert_int_eq(build_sched(&s1, a, pq, PPCC_SCHED_1F1B, 2, 5), 0);
	rt_pipe_fns(pp, fns);
	ck_assert_int_eq(ppcc_rt_local_world_new(&w, 2), 0);
	rank_thread t[2];
	memset(t, 0, sizeof t);
	for (int r = 0; r < 2; r++) {
		ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
		o.world = w;
		o.timeout_s = 10;
		o.diag = rt_lines_add;
		o.diag_user = &dl;
		t[r] = (rank_thread){.rank = r, .s = r ? &s1 : &s0, .fns = fns,
				     .o = o, .steps = 1};
	}
	/* refused at once: a rank that waited would time out instead */
	run_threads(t, 2);
	for (int r = 0; r < 2; r++) {
		ck_assert_int_eq(t[r].init_status, PPCC_RT_EMISMATCH);
		ck_assert_ptr_nonnull(strstr(rank_line(&dl, r, buf, sizeof buf),
					     "fingerprint"));
	}
	ck_assert_int_eq(pp->log_len[0] + pp->log_len[1], 0); /* nothing ran */
	ppcc_rt_local_world_free(w);
	rt_pipe_free(pp);
	rt_pipe_free(pq);
	ppcc_arena_free(a);
}
END_TEST

START_TEST(failing_callback_stops_every_rank_at_once)
{
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(4, 8, 4, 0);
	ppcc_schedule s;
	ppcc_rt_stage_fns fns[4];
	ppcc_rt_stats st[4] = {PPCC_RT_STATS_INIT};
	rt_lines dl;
	char buf[4096];
	rt_lines_init(&dl, 0, 0);
	ck_assert_int_eq(build_sched(&s, a, pp, PPCC_SCHED_1F1B, 4, 8), 0);
	rt_pipe_fns(pp, fns);
	pp->fault_op = PPCC_OP_B;
	pp->fault_stage = 2;
	pp->fault_mb = 3;
	pp->fault_ret = -7;
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.timeout_s = 30; /* the others are told (EPEER), not timed out */
	o.diag = rt_lines_add;
	o.diag_user = &dl;
	int err = ppcc_rt_run_local(st, &s, fns, &o);
	ck_assert_int_eq(err, PPCC_RT_ECALLBACK);
	for (int r = 0; r < 4; r++) {
		ck_assert_int_eq(st[r].status, r == 2 ? PPCC_RT_ECALLBACK : PPCC_RT_EPEER);
		ck_assert_int_eq(dl.lines[r], 1);
	}
	rank_line(&dl, 2, buf, sizeof buf);
	ck_assert_msg(strstr(buf, "backward returned -7") && strstr(buf, "B stage 2 mb 3"),
		      "%s", buf);
	ck_assert_int_eq(st[2].failed_op, PPCC_OP_B);
	ck_assert_int_eq(st[2].failed_stage, 2);
	ck_assert_int_eq(st[2].failed_mb, 3);
	rank_line(&dl, 0, buf, sizeof buf);
	ck_assert_msg(strstr(buf, "rank 2 failed (callback failed)"), "%s", buf);
	ck_assert_msg(strstr(buf, "last: #"), "no flight record: %s", buf);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
}
END_TEST

/* Stage 1's forward is stuck past the timeout, until every other rank
 * has stopped.  With two ranks, rank 0 gives up waiting for rank 1 and
 * names it; with four, every rank stops with one line, and the stuck one
 * says what stopped it and how long its callback ran. */
START_TEST(stuck_callback_times_out_with_a_diagnostic_on_every_rank)
{
	for (int p = 2; p <= 4; p += 2) {
		ppcc_arena *a = ppcc_arena_new();
		rt_pipe *pp = rt_pipe_new(p, 4, p, 0);
		ppcc_schedule s;
		ppcc_rt_stage_fns fns[4];
		ppcc_rt_stats st[4] = {PPCC_RT_STATS_INIT};
		rt_lines dl;
		char buf[4096];
		rt_lines_init(&dl, 0, 0);
		ck_assert_int_eq(build_sched(&s, a, pp, PPCC_SCHED_1F1B, p, 4), 0);
		rt_pipe_fns(pp, fns);
		pp->fault_op = PPCC_OP_F;
		pp->fault_stage = 1;
		pp->fault_mb = 1;
		/* stuck until every other rank has stopped: a rank that
		 * waited for the callback instead of timing out would not,
		 * on a loaded machine too */
		pp->fault_wait = rt_lines_wait_others;
		pp->fault_wait_user = &dl;
		dl.ranks = p;
		dl.stuck = 1;
		ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
		o.timeout_s = 0.5;
		o.diag = rt_lines_add;
		o.diag_user = &dl;
		int err = ppcc_rt_run_local(st, &s, fns, &o);
		ck_assert_int_eq(err, PPCC_RT_ETIMEOUT);
		/* every rank stops, once: not a second timeout per rank */
		for (int r = 0; r < p; r++) {
			ck_assert_msg(st[r].status != 0, "rank %d returned 0", r);
			ck_assert_int_eq(dl.lines[r], 1);
		}
		/* the stuck rank names its action and how long it ran: told
		 * that a peer timed out, or, when that news and the return
		 * come together, past its own timeout */
		rank_line(&dl, 1, buf, sizeof buf);
		ck_assert_msg(strstr(buf, "F stage 1 mb 1") &&
			      (strstr(buf, "failed (timeout); forward ran ") ||
			       strstr(buf, "timeout: forward ran ")), "%s", buf);
		if (p == 2) {
			ck_assert_int_eq(st[0].status, PPCC_RT_ETIMEOUT);
			ck_assert_int_eq(st[0].failed_op, PPCC_OP_RECV_B);
			ck_assert_int_eq(st[0].failed_peer, 1);
			/* its own timeout (the callback returned only
			 * after rank 0 had stopped) */
			ck_assert_msg(st[0].failed_waited_s >= 0.45, "waited %.3f s",
				      st[0].failed_waited_s);
			rank_line(&dl, 0, buf, sizeof buf);
			ck_assert_msg(strstr(buf, "RECV_B stage 0 mb 1 peer 1: timeout: "
					      "the receive did not complete within 0.500 s"),
				      "%s", buf);
		}
		rt_pipe_free(pp);
		ppcc_arena_free(a);
	}
}
END_TEST

START_TEST(timeout_comes_from_the_environment_when_no_option)
{
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(2, 2, 2, 0);
	ppcc_schedule s;
	ppcc_rt_stage_fns fns[2];
	ppcc_rt_stats st[2] = {PPCC_RT_STATS_INIT};
	rt_lines dl;
	rt_lines_init(&dl, 0, 0);
	ck_assert_int_eq(build_sched(&s, a, pp, PPCC_SCHED_GPIPE, 2, 2), 0);
	rt_pipe_fns(pp, fns);
	pp->fault_op = PPCC_OP_F;
	pp->fault_stage = 0;
	pp->fault_mb = 0;
	pp->fault_wait = rt_lines_wait_others; /* until rank 1 has stopped */
	pp->fault_wait_user = &dl;
	dl.ranks = 2;
	dl.stuck = 0;
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.diag = rt_lines_add;
	o.diag_user = &dl;
	setenv("PPCC_TIMEOUT", "0.5", 1);
	int err = ppcc_rt_run_local(st, &s, fns, &o);
	unsetenv("PPCC_TIMEOUT");
	ck_assert_int_eq(err, PPCC_RT_ETIMEOUT);
	ck_assert_int_eq(st[1].status, PPCC_RT_ETIMEOUT);
	/* the environment's 0.5 s (with the 300 s default, rank 1 would
	 * still be waiting when the callback gives up after 60 s, and
	 * receive) */
	ck_assert_msg(st[1].failed_waited_s >= 0.45, "waited %.3f s",
		      st[1].failed_waited_s);
	ck_assert_ptr_nonnull(strstr(dl.text, "within 0.500 s"));
	rt_pipe_free(pp);
	ppcc_arena_free(a);
}
END_TEST

/* Stage 0's forward of mb 1 scribbles on mb 0's output, which rank 1
 * (waiting before its step until the scribble is done) has not received
 * yet; debug mode catches it at the receiver. */
START_TEST(debug_checksum_catches_a_corrupted_message)
{
	for (int debug = 0; debug <= 1; debug++) {
		ppcc_arena *a = ppcc_arena_new();
		rt_pipe *pp = rt_pipe_new(2, 2, 2, 0);
		ppcc_schedule s;
		ppcc_rt_stage_fns fns[2];
		ppcc_rt_local_world *w;
		rt_lines dl;
		char buf[2048], why[512];
		rt_lines_init(&dl, 0, 0);
		ck_assert_int_eq(build_sched(&s, a, pp, PPCC_SCHED_GPIPE, 2, 2), 0);
		rt_pipe_fns(pp, fns);
		fns[0].forward = rt_pipe_scribbling_forward;
		ck_assert_int_eq(ppcc_rt_local_world_new(&w, 2), 0);
		rank_thread t[2];
		memset(t, 0, sizeof t);
		for (int r = 0; r < 2; r++) {
			ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
			o.world = w;
			o.debug = debug;
			o.timeout_s = 10;
			o.diag = rt_lines_add;
			o.diag_user = &dl;
			t[r] = (rank_thread){.rank = r, .s = &s, .fns = fns, .o = o,
					     .steps = 1,
					     .start_after = r ? &pp->scribbled : NULL};
		}
		run_threads(t, 2);
		if (!debug) {
			/* unnoticed by the runtime, wrong in the results */
			ck_assert_int_eq(t[1].step_status, 0);
			ck_assert_int_ne(rt_pipe_check(pp, &s, -1, why, sizeof why), 0);
		} else {
			ck_assert_int_eq(t[1].step_status, PPCC_RT_ECHECKSUM);
			ck_assert_int_eq(t[0].step_status, PPCC_RT_EPEER);
			rank_line(&dl, 1, buf, sizeof buf);
			ck_assert_msg(strstr(buf, "RECV_F stage 1 mb 0 peer 0") &&
				      strstr(buf, "checksum"), "%s", buf);
		}
		ppcc_rt_local_world_free(w);
		rt_pipe_free(pp);
		ppcc_arena_free(a);
	}
}
END_TEST

START_TEST(invalid_schedules_callbacks_and_options_are_rejected)
{
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(2, 2, 2, 0);
	ppcc_schedule s, bad;
	ppcc_rt_stage_fns fns[2];
	ppcc_rt_stats st[2] = {PPCC_RT_STATS_INIT};
	rt_lines dl;
	rt_lines_init(&dl, 0, 0);
	ck_assert_int_eq(build_sched(&s, a, pp, PPCC_SCHED_GPIPE, 2, 2), 0);
	rt_pipe_fns(pp, fns);
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.diag = rt_lines_add;
	o.diag_user = &dl;
	o.timeout_s = 5;

	/* rank 1 receives before... a swapped pair: B before its RECV_B */
	bad = s;
	ppcc_rank_schedule *rs = ppcc_arena_alloc(a, 2, sizeof *rs);
	memcpy(rs, s.ranks, 2 * sizeof *rs);
	ppcc_action *acts = ppcc_arena_alloc(a, (size_t)rs[0].n_actions, sizeof *acts);
	memcpy(acts, rs[0].actions, (size_t)rs[0].n_actions * sizeof *acts);
	for (int i = 0; i + 1 < rs[0].n_actions; i++)
		if (acts[i].op == PPCC_OP_RECV_B) {
			ppcc_action x = acts[i];
			acts[i] = acts[i + 1];
			acts[i + 1] = x;
			break;
		}
	rs[0].actions = acts;
	bad.ranks = rs;
	bad.fingerprint = ppcc_schedule_fingerprint(&bad);
	ck_assert_int_eq(ppcc_rt_run_local(st, &bad, fns, &o), PPCC_RT_EINPUT);
	ck_assert_ptr_nonnull(strstr(dl.text, "schedule: error:"));
	ck_assert_int_eq(pp->log_len[0] + pp->log_len[1], 0);

	/* a stale fingerprint field */
	dl.len = 0;
	dl.text[0] = '\0';
	bad = s;
	bad.fingerprint ^= 1;
	ck_assert_int_eq(ppcc_rt_run_local(st, &bad, fns, &o), PPCC_RT_EINPUT);
	ck_assert_ptr_nonnull(strstr(dl.text, "fingerprint"));

	/* a stage without its backward callback */
	dl.len = 0;
	fns[1].backward = NULL;
	ck_assert_int_eq(ppcc_rt_run_local(st, &s, fns, &o), PPCC_RT_EINPUT);
	ck_assert_ptr_nonnull(strstr(dl.text, "stage 1 has no backward callback"));
	ck_assert_int_eq(st[0].status, PPCC_RT_EPEER);
	rt_pipe_fns(pp, fns);

	/* callbacks of a version this runtime does not know; version 0 (a
	 * zeroed or six-field array) is version 1 */
	dl.len = 0;
	for (int k = 0; k < 2; k++)
		fns[k].version = PPCC_RT_STAGE_FNS_VERSION + 1;
	ck_assert_int_eq(ppcc_rt_run_local(st, &s, fns, &o), PPCC_RT_EINPUT);
	ck_assert_ptr_nonnull(strstr(dl.text, "stage callbacks of version 2"));
	for (int k = 0; k < 2; k++)
		fns[k].version = 0;
	ck_assert_int_eq(ppcc_rt_run_local(st, &s, fns, &o), 0);
	rt_pipe_fns(pp, fns);

	/* options from another version; an unknown transport; no world */
	ppcc_rt *rt = NULL;
	ppcc_rt_options ov = o;
	ov.version = 99;
	ck_assert_int_eq(ppcc_rt_init(&rt, &s, 0, &ov), PPCC_RT_EINPUT);
	ov = o;
	ov.transport = 7;
	ck_assert_int_eq(ppcc_rt_init(&rt, &s, 0, &ov), PPCC_RT_EINPUT);
	ck_assert_int_eq(ppcc_rt_init(&rt, &s, 0, &o), PPCC_RT_EINPUT);
	ck_assert_ptr_nonnull(strstr(dl.text, "needs a world"));
	ck_assert_ptr_null(rt);
	ck_assert_int_eq(ppcc_rt_step(NULL, NULL, fns), PPCC_RT_EINPUT);
	ppcc_rt_free(NULL);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
}
END_TEST

START_TEST(one_rank_schedule_needs_no_world)
{
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(2, 3, 1, 0);
	ppcc_schedule s;
	ppcc_rt_stage_fns fns[2];
	ppcc_rt_stats st = PPCC_RT_STATS_INIT;
	ppcc_rt *rt;
	char why[512];
	ck_assert_int_eq(build_sched(&s, a, pp, PPCC_SCHED_INTERLEAVED, 1, 3), 0);
	rt_pipe_fns(pp, fns);
	ck_assert_int_eq(ppcc_rt_init(&rt, &s, 0, NULL), 0);
	ck_assert_int_eq(ppcc_rt_rank(rt), 0);
	ck_assert_ptr_null(ppcc_rt_cuda_stream(rt));
	ck_assert_int_eq(ppcc_rt_step(&st, rt, fns), 0);
	ck_assert_int_eq(rt_pipe_check(pp, &s, -1, why, sizeof why), 0);
	/* stage 0 hands its output to stage 1 on the same rank: no messages,
	 * one buffer per microbatch boundary in flight at most */
	ck_assert(st.messages_sent == 0 && st.messages_received == 0);
	ppcc_rt_free(rt);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
}
END_TEST

START_TEST(nccl_init_fails_cleanly_without_a_gpu)
{
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(1, 1, 1, 0);
	ppcc_schedule s;
	ppcc_rt *rt = NULL;
	rt_lines dl;
	unsigned char id[PPCC_RT_NCCL_ID_BYTES];
	rt_lines_init(&dl, 0, 0);
	memset(id, 0, sizeof id);
	ck_assert_int_eq(build_sched(&s, a, pp, PPCC_SCHED_GPIPE, 1, 1), 0);
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.transport = PPCC_RT_NCCL;
	o.nccl_id = id;
	o.timeout_s = 5;
	o.diag = rt_lines_add;
	o.diag_user = &dl;
	int err = ppcc_rt_init(&rt, &s, 0, &o);
	if (!ppcc_rt_transport_available(PPCC_RT_NCCL)) {
		ck_assert_int_eq(err, PPCC_RT_EUNAVAILABLE);
		ck_assert_ptr_nonnull(strstr(dl.text, "not built into"));
	} else if (err == 0) {
		/* a machine with a GPU: tests/gpu/run.sh covers it */
		ppcc_rt_free(rt);
	} else {
		ck_assert_int_eq(err, PPCC_RT_ETRANSPORT);
		ck_assert_ptr_null(rt);
		ck_assert_msg(strstr(dl.text, "cudaGetDeviceCount failed: cuda"),
			      "%s", dl.text);
	}
	rt_pipe_free(pp);
	ppcc_arena_free(a);
}
END_TEST

/* A runtime built without MPI answers PPCC_RT_EUNAVAILABLE, saying why;
 * one with MPI reports it available (the MPI runs below exercise it). */
START_TEST(mpi_transport_answers_unavailable_when_left_out)
{
	if (ppcc_rt_transport_available(PPCC_RT_MPI)) {
		ck_assert(PPCC_HAVE_MPI);
		return;
	}
	ck_assert(!PPCC_HAVE_MPI);
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(1, 1, 1, 0);
	ppcc_schedule s;
	ppcc_rt *rt = NULL;
	rt_lines dl;
	rt_lines_init(&dl, 0, 0);
	ck_assert_int_eq(build_sched(&s, a, pp, PPCC_SCHED_GPIPE, 1, 1), 0);
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.transport = PPCC_RT_MPI;
	o.diag = rt_lines_add;
	o.diag_user = &dl;
	ck_assert_int_eq(ppcc_rt_init(&rt, &s, 0, &o), PPCC_RT_EUNAVAILABLE);
	ck_assert_ptr_null(rt);
	ck_assert_msg(strstr(dl.text, "not built into") != NULL, "%s", dl.text);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
}
END_TEST

/* Every allocation failure ends in a clean status, no crash or leak
 * (each try is a child process, with PPCC_FAIL_ALLOC=N). */
START_TEST(every_allocation_failure_returns_a_clean_status)
{
	tu_rt_alloc_failures("every_allocation_failure_returns_a_clean_status",
			     400, 0, NULL, "");
}
END_TEST

/* ---- a schedule from `ppcc plan -f json` ------------------------------------ */

/* Callbacks that fill each output with a pattern of (stage, mb) and check
 * that every input carries its producer's pattern. */
static int pattern_bad;

static void pattern_fill(void *buf, size_t n, int stage, int mb)
{
	unsigned char v = (unsigned char)(stage * 16 + mb + 1);
	memset(buf, v, n);
}

static void pattern_check(const void *buf, size_t n, int stage, int mb)
{
	const unsigned char *b = buf;
	unsigned char v = (unsigned char)(stage * 16 + mb + 1);
	if (n && (b[0] != v || b[n / 2] != v || b[n - 1] != v))
		__atomic_add_fetch(&pattern_bad, 1, __ATOMIC_SEQ_CST);
}

static int pattern_forward(int stage, int mb, const void *input,
			   size_t input_bytes, void *output,
			   size_t output_bytes, void *user)
{
	(void)user;
	if (input)
		pattern_check(input, input_bytes, stage - 1, mb);
	if (output)
		pattern_fill(output, output_bytes, stage, mb);
	return 0;
}

static int pattern_backward(int stage, int mb, const void *grad_output,
			    size_t grad_output_bytes, void *grad_input,
			    size_t grad_input_bytes, void *user)
{
	(void)user;
	if (grad_output)
		pattern_check(grad_output, grad_output_bytes, 100 + stage + 1, mb);
	if (grad_input)
		pattern_fill(grad_input, grad_input_bytes, 100 + stage, mb);
	return 0;
}

static const char *ppcc_binary(char *buf, size_t n)
{
	if (getenv("PPCC"))
		return getenv("PPCC");
	tu_build_path(buf, n, "ppcc");
	return buf;
}

START_TEST(json_schedule_from_ppcc_plan_runs_and_bad_files_are_reported)
{
	char *dir = tu_mkdtemp(), json[PATH_MAX], model[PATH_MAX], bin[PATH_MAX];
	ck_assert_ptr_nonnull(dir);
	snprintf(json, sizeof json, "%s/tiny.json", dir);
	snprintf(model, sizeof model, "%s/examples/tiny.yaml", tu_src());
	char *argv[] = {(char *)ppcc_binary(bin, sizeof bin), "plan", "-f", "json",
			"-o", json, model, NULL};
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, argv), 0);
	ck_assert_msg(r.status == 0, "ppcc plan: exit %d %s", r.status, r.err);
	tu_run_free(&r);

	rt_lines dl;
	rt_lines_init(&dl, 0, 0);
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.diag = rt_lines_add;
	o.diag_user = &dl;
	o.timeout_s = 20;
	o.debug = 1;
	ppcc_schedule *s = NULL;
	int err = ppcc_rt_schedule_load(&s, json, &o);
	ck_assert_msg(err == 0, "%s: %s", ppcc_rt_status_str(err), dl.text);
	ck_assert_int_eq(s->n_ranks, 4);
	ck_assert_int_eq(s->n_microbatches, 8);
	ck_assert(s->fingerprint == ppcc_schedule_fingerprint(s));
	ppcc_rt_stage_fns fns[4];
	for (int k = 0; k < 4; k++)
		fns[k] = (ppcc_rt_stage_fns){pattern_forward, pattern_backward,
					     NULL, NULL, NULL, NULL,
					     PPCC_RT_STAGE_FNS_VERSION};
	ppcc_rt_stats st[4] = {PPCC_RT_STATS_INIT};
	pattern_bad = 0;
	ck_assert_int_eq(ppcc_rt_run_local(st, s, fns, &o), 0);
	ck_assert_int_eq(pattern_bad, 0);
	uint64_t bytes, got = 0;
	int msgs = count_recvs(s, &bytes);
	for (int k = 0; k < 4; k++)
		got += st[k].messages_received;
	ck_assert_int_eq((int)got, msgs);
	ppcc_rt_schedule_free(s);

	/* a file cut short: reported with its position */
	size_t len;
	char *text = tu_read_file(json, &len);
	ck_assert_ptr_nonnull(text);
	text[len / 2] = '\0';
	ck_assert_int_eq(tu_write_file(json, text), 0);
	free(text);
	s = NULL;
	ck_assert_int_eq(ppcc_rt_schedule_load(&s, json, &o), PPCC_RT_EINPUT);
	ck_assert_ptr_null(s);
	char want[PATH_MAX + 16];
	snprintf(want, sizeof want, "ppcc-rt: %s:", json);
	ck_assert_msg(strstr(dl.text, want) && strstr(dl.text, ": error: "), "%s", dl.text);
	ck_assert_int_eq(dl.other, 1); /* rank -1: not a rank's line */

	strcat(json, ".missing");
	ck_assert_int_eq(ppcc_rt_schedule_load(&s, json, &o), PPCC_RT_EIO);
	tu_rmtree_free(dir);
}
END_TEST

/* ---- all-to-all (ppcc_rt_alltoallv) ----------------------------------------- */

/* The all-to-all tests' exchange: rank a sends rank b C(a, b) = (a + 2b)
 * % 4 doubles (zero for some pairs, a rank's own among them), element e
 * being 1000a + 100b + e.  Each rank lays its group out in a permuted
 * order (member j is rank group[j]), its in and out regions apart by a
 * gap of one element and out's in reverse member order, so that a count,
 * a displacement or a member index taken for another shows. */
#define A2A_GAP (-7.0)
static size_t a2a_count(int a, int b)
{
	return (size_t)((a + 2 * b) % 4);
}

/* Fills the arguments of rank `me` over group[0..n); out filled with
 * A2A_GAP; returns the elements out spans. */
static size_t a2a_layout(int me, const int *group, int n, double *in,
			 size_t *in_counts, size_t *in_displs, double *out,
			 size_t *out_counts, size_t *out_displs)
{
	size_t at = 0;
	for (int j = 0; j < n; j++) {
		in_counts[j] = a2a_count(me, group[j]);
		in_displs[j] = at;
		for (size_t e = 0; e < in_counts[j]; e++)
			in[at + e] = 1000.0 * me + 100.0 * group[j] + (double)e;
		at += in_counts[j] + 1;
	}
	at = 0;
	for (int j = n - 1; j >= 0; j--) {
		out_counts[j] = a2a_count(group[j], me);
		out_displs[j] = at;
		at += out_counts[j] + 1;
	}
	for (size_t k = 0; k < at; k++)
		out[k] = A2A_GAP;
	return at;
}

/* 0, or the first element of out that differs from the hand-computed
 * expectation (what member j sent, A2A_GAP between) in why. */
static int a2a_verify(int me, const int *group, int n, const double *out,
		      const size_t *out_counts, const size_t *out_displs,
		      size_t span, char *why, size_t why_n)
{
	for (size_t k = 0; k < span; k++) {
		double want = A2A_GAP;
		for (int j = 0; j < n; j++)
			if (k >= out_displs[j] && k < out_displs[j] + out_counts[j])
				want = 1000.0 * group[j] + 100.0 * me +
				       (double)(k - out_displs[j]);
		if (out[k] != want) {
			snprintf(why, why_n, "rank %d: out[%zu] = %g, want %g", me,
				 k, out[k], want);
			return -1;
		}
	}
	return 0;
}

typedef struct a2a_thread {
	pthread_t th;
	int rank, n, grouped;
	const ppcc_schedule *s;
	rt_pipe *pp;
	ppcc_rt_local_world *w;
	rt_lines *lines;
	pthread_barrier_t *barrier;
	int status[4]; /* init, step, alltoallv, step */
	char why[256];
} a2a_thread;

/* One rank: a step, two all-to-alls (one per group order), a step. */
static void *a2a_main(void *arg)
{
	a2a_thread *t = arg;
	ppcc_rt *rt = NULL;
	ppcc_rt_stage_fns fns[8];
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	double in[64], out[64];
	size_t ic[4], id[4], oc[4], od[4];
	static const int orders[2][4] = {{2, 0, 3, 1}, {0, 1, 2, 3}};
	o.world = t->w;
	o.grouped = t->grouped;
	o.timeout_s = 10;
	o.diag = rt_lines_add;
	o.diag_user = t->lines;
	rt_pipe_fns(t->pp, fns);
	if ((t->status[0] = ppcc_rt_init(&rt, t->s, t->rank, &o)) == 0)
		t->status[1] = ppcc_rt_step(NULL, rt, fns);
	else
		t->status[1] = t->status[0];
	for (int k = 0; k < 2 && t->status[1] == 0 && t->status[2] == 0; k++) {
		int group[4], n = 0;
		for (int j = 0; j < 4; j++)
			if (orders[k][j] < t->n)
				group[n++] = orders[k][j];
		size_t span = a2a_layout(t->rank, group, n, in, ic, id, out, oc, od);
		t->status[2] = ppcc_rt_alltoallv(out, oc, od, rt, in, ic, id,
						 sizeof(double), group, n);
		if (t->status[2] == 0 &&
		    a2a_verify(t->rank, group, n, out, oc, od, span, t->why,
			       sizeof t->why) < 0)
			t->status[2] = PPCC_RT_EINTERNAL;
	}
	/* the next step on a pipeline reset once every rank is done with
	 * the last (a failed rank still comes to the barrier) */
	pthread_barrier_wait(t->barrier);
	if (t->rank == 0)
		rt_pipe_reset(t->pp);
	pthread_barrier_wait(t->barrier);
	if (t->status[2] == 0)
		t->status[3] = ppcc_rt_step(NULL, rt, fns);
	ppcc_rt_free(rt);
	return NULL;
}

/* Over threads (the local transport), eager and grouped, 3 and 4 ranks:
 * every rank gets, element by element, what each member sent it, with
 * zero counts to and from some members and itself; the steps around it
 * still match serial training. */
START_TEST(alltoallv_over_threads_delivers_uneven_counts_element_by_element)
{
	for (int n = 3; n <= 4; n++)
		for (int grouped = 0; grouped <= 1; grouped++) {
			ppcc_arena *a = ppcc_arena_new();
			rt_pipe *pp = rt_pipe_new(n, 4, n, 0);
			ppcc_schedule s;
			ppcc_rt_local_world *w;
			rt_lines dl;
			a2a_thread t[4];
			char why[512];
			rt_lines_init(&dl, 0, 0);
			ck_assert_int_eq(build_sched(&s, a, pp, PPCC_SCHED_1F1B, n, 4), 0);
			ck_assert_int_eq(ppcc_rt_local_world_new(&w, n), 0);
			pthread_barrier_t barrier;
			ck_assert_int_eq(pthread_barrier_init(&barrier, NULL,
							      (unsigned)n), 0);
			rt_pipe_reset(pp);
			for (int r = 0; r < n; r++) {
				memset(&t[r], 0, sizeof t[r]);
				t[r] = (a2a_thread){.rank = r, .n = n, .grouped = grouped,
						    .s = &s, .pp = pp, .w = w,
						    .lines = &dl, .barrier = &barrier};
				ck_assert_int_eq(pthread_create(&t[r].th, NULL, a2a_main,
								&t[r]), 0);
			}
			for (int r = 0; r < n; r++)
				pthread_join(t[r].th, NULL);
			for (int r = 0; r < n; r++)
				for (int k = 0; k < 4; k++)
					ck_assert_msg(t[r].status[k] == 0, "%d ranks%s: rank "
						      "%d call %d: %s %s; %s", n,
						      grouped ? " grouped" : "", r, k,
						      ppcc_rt_status_str(t[r].status[k]),
						      t[r].why, dl.text);
			ck_assert_msg(rt_pipe_check(pp, &s, -1, why, sizeof why) == 0,
				      "%s", why);
			ck_assert_int_eq(dl.total, 0);
			pthread_barrier_destroy(&barrier);
			ppcc_rt_local_world_free(w);
			rt_pipe_free(pp);
			ppcc_arena_free(a);
		}
}
END_TEST

/* One rank of a two-rank world calling ppcc_rt_alltoallv with group
 * and out displacements od, one double to and from each member. */
typedef struct a2a_bad_thread {
	pthread_t th;
	int rank;
	const ppcc_schedule *s;
	ppcc_rt_local_world *w;
	rt_lines *lines;
	const int *group;
	const size_t *od;
	int status;
} a2a_bad_thread;

static void *a2a_bad_main(void *arg)
{
	a2a_bad_thread *t = arg;
	ppcc_rt *rt = NULL;
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	double in[4] = {1, 2, 3, 4}, out[4];
	size_t ones[2] = {1, 1}, id[2] = {0, 1}, oc[2] = {2, 2};
	o.world = t->w;
	o.timeout_s = 10;
	o.diag = rt_lines_add;
	o.diag_user = t->lines;
	if ((t->status = ppcc_rt_init(&rt, t->s, t->rank, &o)) == 0)
		t->status = ppcc_rt_alltoallv(out, t->group[0] == t->group[1] ? ones : oc,
					      t->od, rt, in, ones, id, sizeof(double),
					      t->group, 2);
	ppcc_rt_free(rt);
	return NULL;
}

/* A one-rank runtime's all-to-all with a group of one: itself. */
static int a2a_alone(const int *group, int n, size_t elem, double *in,
		     double *out, const size_t *ic, const size_t *id,
		     const size_t *oc, const size_t *od, rt_lines *dl)
{
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(1, 1, 1, 0);
	ppcc_schedule s;
	ppcc_rt *rt;
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.diag = rt_lines_add;
	o.diag_user = dl;
	ck_assert_int_eq(build_sched(&s, a, pp, PPCC_SCHED_1F1B, 1, 1), 0);
	ck_assert_int_eq(ppcc_rt_init(&rt, &s, 0, &o), 0);
	int err = ppcc_rt_alltoallv(out, oc, od, rt, in, ic, id, elem, group, n);
	/* a failed call leaves the rank failed */
	if (err < 0)
		ck_assert_int_eq(ppcc_rt_alltoallv(out, oc, od, rt, in, ic, id, elem,
						   group, n), PPCC_RT_EPEER);
	ppcc_rt_free(rt);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
	return err;
}

/* Every bad argument is refused (PPCC_RT_EINPUT) before anything moves,
 * with one line saying which; a good call of a rank to itself copies. */
START_TEST(alltoallv_rejects_bad_arguments_with_a_clear_line)
{
	double buf[16] = {1, 2, 3, 4, 5, 6, 7, 8};
	double out[16] = {0};
	size_t one[1] = {2}, zero[1] = {0}, four[1] = {4}, huge[1] = {SIZE_MAX / 4};
	int self[1] = {0}, two[2] = {0, 0}, other[1] = {1}, neg[1] = {-1};
	size_t c2[2] = {1, 1}, d2[2] = {0, 1};
	rt_lines dl;
	struct {
		int n;
		const int *group;
		size_t elem;
		double *in, *out;
		const size_t *ic, *id, *oc, *od;
		const char *says;
	} bad[] = {
		{1, other, 8, buf, out, one, zero, one, zero,
		 "group[0] is rank 1, outside the world's 1 ranks"},
		{1, neg, 8, buf, out, one, zero, one, zero,
		 "group[0] is rank -1, outside the world's 1 ranks"},
		{0, self, 8, buf, out, one, zero, one, zero, "no group (group given, n_group 0)"},
		{1, NULL, 8, buf, out, one, zero, one, zero, "no group (group NULL, n_group 1)"},
		{2, two, 8, buf, out, c2, d2, c2, d2,
		 "a group of 2 members in a world of 1 ranks"},
		{1, self, 0, buf, out, one, zero, one, zero, "elem_bytes is 0"},
		{1, self, 8, buf, out, NULL, zero, one, zero, "in_counts is NULL"},
		{1, self, 8, buf, out, one, zero, one, NULL, "out_displs is NULL"},
		{1, self, 8, NULL, out, one, zero, one, zero,
		 "in is NULL with elements to send"},
		{1, self, 8, buf, NULL, one, zero, one, zero,
		 "out is NULL with elements to receive"},
		{1, self, 8, buf, out, huge, zero, one, zero, "overflow the address space"},
		{1, self, 8, buf, buf + 1, one, zero, one, zero,
		 "the region of in for member 0 overlaps the region of out for member 0"},
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		rt_lines_init(&dl, 0, 0);
		int err = a2a_alone(bad[k].group, bad[k].n, bad[k].elem, bad[k].in,
				    bad[k].out, bad[k].ic, bad[k].id, bad[k].oc,
				    bad[k].od, &dl);
		ck_assert_msg(err == PPCC_RT_EINPUT, "case %zu: %s", k,
			      ppcc_rt_status_str(err));
		ck_assert_msg(strstr(dl.text, "ppcc-rt: rank 0: alltoallv #0 between "
				     "steps: bad input: ") &&
			      strstr(dl.text, bad[k].says) && dl.total == 1,
			      "case %zu: want '%s' in\n%s", k, bad[k].says, dl.text);
	}
	/* a member twice, and out regions that overlap, in a world of two */
	static const struct {
		int group[2];
		size_t od[2];
		const char *says;
	} pair[] = {
		{{0, 0}, {0, 2}, "rank 0 is in the group twice"},
		{{0, 1}, {0, 1}, "the regions of out for members 0 and 1 overlap"},
	};
	for (size_t k = 0; k < 2; k++) {
		ppcc_arena *a = ppcc_arena_new();
		rt_pipe *pp = rt_pipe_new(2, 2, 2, 0);
		ppcc_schedule s;
		ppcc_rt_local_world *w;
		a2a_bad_thread t[2];
		ck_assert_int_eq(build_sched(&s, a, pp, PPCC_SCHED_1F1B, 2, 2), 0);
		ck_assert_int_eq(ppcc_rt_local_world_new(&w, 2), 0);
		rt_lines_init(&dl, 0, 0);
		for (int r = 0; r < 2; r++) {
			t[r] = (a2a_bad_thread){.rank = r, .s = &s, .w = w, .lines = &dl,
						.group = pair[k].group, .od = pair[k].od};
			ck_assert_int_eq(pthread_create(&t[r].th, NULL, a2a_bad_main,
							&t[r]), 0);
		}
		for (int r = 0; r < 2; r++)
			pthread_join(t[r].th, NULL);
		/* rank 0's own line; rank 1 refuses it too, or stops */
		ck_assert_int_eq(t[0].status, PPCC_RT_EINPUT);
		ck_assert(t[1].status == PPCC_RT_EINPUT || t[1].status == PPCC_RT_EPEER);
		ck_assert_msg(strstr(dl.text, "ppcc-rt: rank 0: alltoallv #0 between "
				     "steps: bad input: ") &&
			      strstr(dl.text, pair[k].says), "want '%s' in\n%s",
			      pair[k].says, dl.text);
		ppcc_rt_local_world_free(w);
		rt_pipe_free(pp);
		ppcc_arena_free(a);
	}

	/* the good call: two elements to itself, in four bytes units */
	rt_lines_init(&dl, 0, 0);
	size_t disp[1] = {4}; /* 16 bytes: out[2] */
	ck_assert_int_eq(a2a_alone(self, 1, 4, buf, out, four, zero, four, disp, &dl), 0);
	ck_assert(out[0] == 0 && out[1] == 0 && out[2] == 1 && out[3] == 2 && out[4] == 0);
	ck_assert_int_eq(dl.total, 0);
}
END_TEST

/* Rank 0's forward of stage 0 mb 0 calls an all-to-all with rank 1,
 * which never comes: rank 1 waits for that forward's activation. */
typedef struct a2a_fwd {
	ppcc_rt_forward_fn inner;
	ppcc_rt_backward_fn backward;
	ppcc_rt_loss_fn loss;
	void *inner_user;
	ppcc_rt *rt;
	int status;
} a2a_fwd;

/* The other callbacks, forwarded with the pipeline's own user pointer. */
static int a2a_backward(int stage, int mb, const void *grad_output,
			 size_t grad_output_bytes, void *grad_input,
			 size_t grad_input_bytes, void *user)
{
	const a2a_fwd *f = user;
	return f->backward(stage, mb, grad_output, grad_output_bytes, grad_input,
			   grad_input_bytes, f->inner_user);
}

static int a2a_loss(double *out_loss, int stage, int mb, void *user)
{
	const a2a_fwd *f = user;
	return f->loss(out_loss, stage, mb, f->inner_user);
}

static int a2a_forward(int stage, int mb, const void *input, size_t input_bytes,
		       void *output, size_t output_bytes, void *user)
{
	a2a_fwd *f = user;
	if (stage == 0 && mb == 0) {
		int group[2] = {0, 1};
		double in[2] = {1, 2}, out[2];
		size_t one[2] = {1, 1}, at[2] = {0, 1};
		f->status = ppcc_rt_alltoallv(out, one, at, f->rt, in, one, at,
					      sizeof(double), group, 2);
		/* the failure is the all-to-all's, whatever this returns */
	}
	return f->inner(stage, mb, input, input_bytes, output, output_bytes,
			f->inner_user);
}

typedef struct a2a_stuck_thread {
	pthread_t th;
	int rank, grouped, status;
	const ppcc_schedule *s;
	const ppcc_rt_stage_fns *fns;
	ppcc_rt_local_world *w;
	rt_lines *lines;
	a2a_fwd *fwd;
} a2a_stuck_thread;

static void *a2a_stuck_main(void *arg)
{
	a2a_stuck_thread *t = arg;
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	ppcc_rt *rt = NULL;
	o.world = t->w;
	o.grouped = t->grouped;
	/* rank 1's own wait (for the activation) outlasts rank 0's */
	o.timeout_s = t->rank == 0 ? 0.5 : 5;
	o.diag = rt_lines_add;
	o.diag_user = t->lines;
	if ((t->status = ppcc_rt_init(&rt, t->s, t->rank, &o)) == 0) {
		if (t->rank == 0)
			t->fwd->rt = rt;
		t->status = ppcc_rt_step(NULL, rt, t->fns);
	}
	ppcc_rt_free(rt);
	return NULL;
}

/* A member that never arrives: rank 0's all-to-all, called from its
 * forward, times out naming the action, the member and the bytes; its
 * step fails with that timeout (one line: the callback's return is not
 * reported again), rank 1 stops (EPEER; grouped, where the local
 * transport matches by posting order, rank 0's all-to-all message is
 * never taken for the activation rank 1 waits for); the flight record
 * holds the all-to-all's messages and failure as RECV_ALLTOALLV /
 * SEND_ALLTOALLV with the peer, and ppcc diagnose follows them. */
START_TEST(alltoallv_member_that_never_arrives_times_out_with_flight_record)
{
	for (int grouped = 0; grouped <= 1; grouped++) {
		char *dir = tu_mkdtemp();
		ppcc_arena *a = ppcc_arena_new();
		rt_pipe *pp = rt_pipe_new(2, 2, 2, 0);
		ppcc_schedule s;
		ppcc_rt_stage_fns fns[2];
		ppcc_rt_local_world *w;
		rt_lines dl;
		a2a_fwd fwd = {0};
		a2a_stuck_thread t[2];
		ck_assert_int_eq(build_sched(&s, a, pp, PPCC_SCHED_1F1B, 2, 2), 0);
		rt_pipe_fns(pp, fns);
		fwd.inner = fns[0].forward;
		fwd.backward = fns[0].backward;
		fwd.loss = fns[0].loss;
		fwd.inner_user = fns[0].user;
		fns[0] = (ppcc_rt_stage_fns){a2a_forward, a2a_backward, NULL, NULL,
					     a2a_loss, &fwd,
					     PPCC_RT_STAGE_FNS_VERSION};
		ck_assert_int_eq(ppcc_rt_local_world_new(&w, 2), 0);
		rt_lines_init(&dl, 0, 0);
		setenv("PPCC_FLIGHT_DIR", dir, 1);
		for (int r = 0; r < 2; r++) {
			t[r] = (a2a_stuck_thread){.rank = r, .grouped = grouped,
						  .s = &s, .fns = fns, .w = w,
						  .lines = &dl, .fwd = &fwd};
			ck_assert_int_eq(pthread_create(&t[r].th, NULL, a2a_stuck_main,
							&t[r]), 0);
		}
		for (int r = 0; r < 2; r++)
			pthread_join(t[r].th, NULL);
		unsetenv("PPCC_FLIGHT_DIR");
		int idx = -1;
		for (int i = 0; i < s.ranks[0].n_actions && idx < 0; i++)
			if (s.ranks[0].actions[i].op == PPCC_OP_F &&
			    s.ranks[0].actions[i].mb == 0)
				idx = i;
		char want[256], buf[4096];
		ck_assert_int_eq(fwd.status, PPCC_RT_ETIMEOUT);
		ck_assert_msg(t[0].status == PPCC_RT_ETIMEOUT &&
			      t[1].status == PPCC_RT_EPEER, "grouped %d: %s, %s\n%s",
			      grouped, ppcc_rt_status_str(t[0].status),
			      ppcc_rt_status_str(t[1].status), dl.text);
		snprintf(want, sizeof want, "ppcc-rt: rank 0: alltoallv #0 in action "
			 "%d F stage 0 mb 0: timeout: the receive from rank 1 (8 "
			 "bytes) did not complete within 0.500 s; waited ", idx);
		rank_line(&dl, 0, buf, sizeof buf);
		ck_assert_msg(strncmp(buf, want, strlen(want)) == 0 &&
			      strchr(buf, '|') == buf + strlen(buf) - 1,
			      "want one line '%s...', got\n%s", want, buf);

		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/rank-00000.flight", dir);
		char *rec = tu_read_file(path, NULL);
		ck_assert_msg(rec, "no %s", path);
		snprintf(want, sizeof want, "\nfailed %d RECV_ALLTOALLV 0 0 1 ", idx);
		ck_assert_msg(strstr(rec, want), "want '%s' in\n%s", want + 1, rec);
		snprintf(want, sizeof want, "\nmessage %d SEND_ALLTOALLV 0 0 1 ", idx);
		ck_assert_msg(strstr(rec, want), "want '%s' in\n%s", want + 1, rec);
		snprintf(want, sizeof want, "\nmessage %d RECV_ALLTOALLV 0 0 1 ", idx);
		ck_assert_msg(strstr(rec, want), "want '%s' in\n%s", want + 1, rec);
		free(rec);

		char ppcc[PATH_MAX];
		tu_build_path(ppcc, sizeof ppcc, "ppcc");
		char *argv[] = {ppcc, "diagnose", dir, NULL};
		tu_run r;
		ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, argv), 0);
		ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
		ck_assert_msg(strstr(r.out, "rank 0, the first to fail, timed out after ") &&
			      strstr(r.out, " in RECV_ALLTOALLV of stage 0 mb 0 from rank 1"),
			      "%s", r.out);
		tu_run_free(&r);
		ppcc_rt_local_world_free(w);
		rt_pipe_free(pp);
		ppcc_arena_free(a);
		tu_rmtree_free(dir);
	}
}
END_TEST

/* ---- programs: the header alone, the man page example, mpirun -------------- */

START_TEST(public_header_compiles_alone_as_c11_and_cxx)
{
	tu_header_compiles_alone("public_header_compiles_alone_as_c11_and_cxx",
		"#include <ppcc/runtime.h>\n"
		"int main(void)\n{\n"
		"\tppcc_rt_options o = PPCC_RT_OPTIONS_INIT;\n"
		"\tppcc_rt_stage_fns f = {0, 0, 0, 0, 0, 0, PPCC_RT_STAGE_FNS_VERSION};\n"
		"\t(void)f;\n"
		"\treturn o.version == PPCC_RT_OPTIONS_VERSION ? 0 : 1;\n}\n");
}
END_TEST

START_TEST(man_page_example_runs)
{
	char prog[PATH_MAX];
	tu_build_path(prog, sizeof prog, "tests/rt_man_example");
	ck_assert_msg(access(prog, X_OK) == 0, "%s not built (make its rule)", prog);
	char *argv[] = {prog, NULL};
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, argv), 0);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.out, "loss") != NULL, "%s", r.out);
	tu_run_free(&r);
}
END_TEST

/* mpirun -np NP of tests/rt_mpi_prog MODE; returns 0 and fills r, or -1
 * when mpirun or the program is missing.  A run still going after 60 s
 * (240 s in a sanitizer's build) is killed, status 124: the MPI tests'
 * only bound of time, a generous one (the program's own timeouts are
 * 1 to 2 s). */
static int mpirun_np(tu_run *r, const char *np, const char *mode, int recovery)
{
	char prog[PATH_MAX];
	tu_build_path(prog, sizeof prog, "tests/rt_mpi_prog");
	if (access(prog, X_OK) != 0) {
		if (tu_mpi_left_out("mpirun"))
			return -1;
		tu_skip("mpirun", "%s not built (no MPI: package libopenmpi-dev)",
			prog);
		return -1;
	}
	char *argv[] = {"mpirun", "-np", (char *)np, "--oversubscribe", "--allow-run-as-root",
			"--mca", "btl", "self,vader", prog, (char *)mode, NULL, NULL};
	if (recovery) {
		/* keep the job when a process dies: the runtime must end it */
		memmove(&argv[5], &argv[4], 6 * sizeof *argv);
		argv[4] = "--enable-recovery";
	}
	char *env[] = {"ASAN_OPTIONS=detect_leaks=0", "OMPI_MCA_btl_vader_single_copy_mechanism=none",
		       NULL};
	if (tu_run_argv(r, NULL, NULL, env, 60, argv) < 0)
		return -1;
	if (r->status == 127) {
		tu_skip("mpirun", "mpirun not found (package openmpi-bin)");
		tu_run_free(r);
		return -1;
	}
	return 0;
}

static int mpirun(tu_run *r, const char *mode, int recovery)
{
	return mpirun_np(r, "2", mode, recovery);
}

START_TEST(mpi_two_ranks_run_every_kind_eager_and_grouped)
{
	tu_run r;
	if (mpirun(&r, "ok", 0) < 0)
		return;
	ck_assert_msg(r.status == 0, "exit %d\n%s\n%s", r.status, r.out, r.err);
	for (int rank = 0; rank < 2; rank++)
		for (int kind = 0; kind < PPCC_SCHED_COUNT; kind = RT_PIPE_NEXT(kind))
			for (int grouped = 0; grouped <= 1; grouped++) {
				char want[64];
				snprintf(want, sizeof want, "rank %d %s %sok", rank,
					 ppcc_schedule_kind_name(kind),
					 grouped ? "grouped " : "");
				ck_assert_msg(strstr(r.out, want), "no '%s' in\n%s", want,
					      r.out);
			}
	tu_run_free(&r);
}
END_TEST

/* rt_mpi_prog relabel on 4 processes: every kind on a permuted
 * placement, eager and grouped, matches serial training. */
START_TEST(mpi_four_ranks_run_every_kind_relabelled)
{
	tu_run r;
	if (mpirun_np(&r, "4", "relabel", 0) < 0)
		return;
	ck_assert_msg(r.status == 0, "exit %d\n%s\n%s", r.status, r.out, r.err);
	for (int rank = 0; rank < 4; rank++)
		for (int kind = 0; kind < PPCC_SCHED_COUNT; kind = RT_PIPE_NEXT(kind))
			for (int grouped = 0; grouped <= 1; grouped++) {
				char want[80];
				snprintf(want, sizeof want, "rank %d %s relabelled %sok",
					 rank, ppcc_schedule_kind_name(kind),
					 grouped ? "grouped " : "");
				ck_assert_msg(strstr(r.out, want), "no '%s' in\n%s", want,
					      r.out);
			}
	tu_run_free(&r);
}
END_TEST

START_TEST(mpi_killed_rank_ends_the_job_within_the_timeout)
{
	tu_run r;
	if (mpirun(&r, "kill", 0) < 0)
		return;
	/* the survivor must not hang: OpenMPI kills the job when a process
	 * dies, else the runtime's 2 s timeout stops it */
	ck_assert_msg(r.status != 0 && r.status != 124, "exit %d\n%s\n%s", r.status,
		      r.out, r.err);
	tu_run_free(&r);
}
END_TEST

START_TEST(mpi_dead_peer_times_out_when_mpirun_keeps_the_job)
{
	tu_run r;
	if (mpirun(&r, "kill", 1) < 0)
		return;
	/* (mpirun --enable-recovery exits 0 whatever its processes do) */
	ck_assert_msg(r.status != 124, "mpirun hung\n%s\n%s", r.out, r.err);
	ck_assert_msg(strstr(r.out, "rank 0 step: timeout"), "%s", r.out);
	ck_assert_msg(strstr(r.err, "ppcc-rt: rank 0: action") &&
		      strstr(r.err, "peer 1: timeout"), "%s", r.err);
	tu_run_free(&r);
}
END_TEST

START_TEST(mpi_mismatched_schedules_refused_on_both_ranks)
{
	tu_run r;
	if (mpirun(&r, "mismatch", 0) < 0)
		return;
	ck_assert_msg(r.status == 3, "exit %d\n%s\n%s", r.status, r.out, r.err);
	ck_assert_msg(strstr(r.err, "rank 0: schedule fingerprint") &&
		      strstr(r.err, "rank 1: schedule fingerprint"), "%s", r.err);
	ck_assert_msg(strstr(r.out, "rank 0 mismatch refused") &&
		      strstr(r.out, "rank 1 mismatch refused"), "%s", r.out);
	tu_run_free(&r);
}
END_TEST

/* The all-to-all over mpirun (rt_mpi_prog a2a, a2a-grid): 3 processes
 * between steps, eager and grouped, each checking every element it got
 * against what each member sent (counts (a + 2b) % 4, zeros among them);
 * 4 processes as 2 pipeline ranks x 2 replicas, every forward's
 * callback exchanging with its replica (world ranks as the group). */
START_TEST(mpi_alltoallv_delivers_uneven_counts_between_steps_and_in_callbacks)
{
	tu_run r;
	if (mpirun_np(&r, "3", "a2a", 0) < 0)
		return;
	ck_assert_msg(r.status == 0, "exit %d\n%s\n%s", r.status, r.out, r.err);
	for (int rank = 0; rank < 3; rank++) {
		char want[32];
		snprintf(want, sizeof want, "rank %d a2a ok", rank);
		ck_assert_msg(strstr(r.out, want), "no '%s' in\n%s", want, r.out);
	}
	tu_run_free(&r);
	if (mpirun_np(&r, "4", "a2a-grid", 0) < 0)
		return;
	ck_assert_msg(r.status == 0, "exit %d\n%s\n%s", r.status, r.out, r.err);
	for (int w = 0; w < 4; w++) {
		char want[32];
		snprintf(want, sizeof want, "world %d a2a-grid ok", w);
		ck_assert_msg(strstr(r.out, want), "no '%s' in\n%s", want, r.out);
	}
	tu_run_free(&r);
}
END_TEST

/* rt_mpi_prog a2a-stuck: rank 1 never calls the all-to-all; rank 0 times
 * out within its 1 s, naming the member it waited for. */
START_TEST(mpi_alltoallv_member_that_never_arrives_times_out)
{
	tu_run r;
	if (mpirun(&r, "a2a-stuck", 0) < 0)
		return;
	ck_assert_msg(r.status != 0 && r.status != 124, "exit %d\n%s\n%s", r.status,
		      r.out, r.err);
	ck_assert_msg(strstr(r.out, "rank 0 alltoallv: timeout"), "%s", r.out);
	ck_assert_msg(strstr(r.err, "ppcc-rt: rank 0: alltoallv #0 between steps: "
			     "timeout: the receive from rank 1 (8 bytes) did not "
			     "complete within 1.000 s"), "%s", r.err);
	tu_run_free(&r);
}
END_TEST

/* Data parallelism over mpi (rt_mpi_prog dp*): 4 processes, 2 pipeline
 * ranks x 2 replicas.  Bucket values (replica + 1) * (k + 1) + 100 *
 * stage + 10 * bucket sum over the replicas to 3 * (k + 1) + 200 * stage
 * + 20 * bucket on every replica: the 5-value bucket cut into chunks of
 * 3 and 2, the 1-value bucket into 1 and 0. */
START_TEST(mpi_grid_reduces_every_bucket_over_the_replicas)
{
	tu_run r;
	if (mpirun_np(&r, "4", "dp", 0) < 0)
		return;
	ck_assert_msg(r.status == 0, "exit %d\n%s\n%s", r.status, r.out, r.err);
	static const char *want[] = {
		"world 0 replica 0 stage 0 bucket 0: 3 6 9 12 15\n",
		"world 0 replica 0 stage 0 bucket 1: 23\n",
		"world 1 replica 1 stage 0 bucket 0: 3 6 9 12 15\n",
		"world 1 replica 1 stage 0 bucket 1: 23\n",
		"world 2 replica 0 stage 1 bucket 0: 203 206 209 212 215\n",
		"world 2 replica 0 stage 1 bucket 1: 223\n",
		"world 3 replica 1 stage 1 bucket 0: 203 206 209 212 215\n",
		"world 3 replica 1 stage 1 bucket 1: 223\n",
		"world 0 dp ok", "world 1 dp ok", "world 2 dp ok", "world 3 dp ok"};
	for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
		ck_assert_msg(strstr(r.out, want[k]), "no '%s' in\n%s", want[k], r.out);
	tu_run_free(&r);
}
END_TEST

/* Four buckets of each stage in flight at once (all posted at the
 * stage's last backward) and the reductions' tags reused by every
 * collective (rt_mpi_prog dp-window, a window of 1): a collective waits
 * for the one whose tags it takes to complete before it posts, so no
 * chunk or sum meets another bucket's receive.  The sums by the rule of
 * mpi_grid_reduces_every_bucket_over_the_replicas, after two steps (8
 * collectives per rank on the same three tags). */
START_TEST(mpi_grid_reused_tags_never_meet_a_live_collective)
{
	tu_run r;
	if (mpirun_np(&r, "4", "dp-window", 0) < 0)
		return;
	ck_assert_msg(r.status == 0, "exit %d\n%s\n%s", r.status, r.out, r.err);
	static const char *want[] = {
		"world 0 replica 0 stage 0 bucket 0: 3 6 9 12 15\n",
		"world 0 replica 0 stage 0 bucket 1: 23\n",
		"world 0 replica 0 stage 0 bucket 2: 43 46 49 52\n",
		"world 0 replica 0 stage 0 bucket 3: 63 66\n",
		"world 1 replica 1 stage 0 bucket 0: 3 6 9 12 15\n",
		"world 1 replica 1 stage 0 bucket 1: 23\n",
		"world 1 replica 1 stage 0 bucket 2: 43 46 49 52\n",
		"world 1 replica 1 stage 0 bucket 3: 63 66\n",
		"world 2 replica 0 stage 1 bucket 0: 203 206 209 212 215\n",
		"world 2 replica 0 stage 1 bucket 1: 223\n",
		"world 2 replica 0 stage 1 bucket 2: 243 246 249 252\n",
		"world 2 replica 0 stage 1 bucket 3: 263 266\n",
		"world 3 replica 1 stage 1 bucket 0: 203 206 209 212 215\n",
		"world 3 replica 1 stage 1 bucket 1: 223\n",
		"world 3 replica 1 stage 1 bucket 2: 243 246 249 252\n",
		"world 3 replica 1 stage 1 bucket 3: 263 266\n",
		"world 0 dp ok", "world 1 dp ok", "world 2 dp ok", "world 3 dp ok"};
	for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
		ck_assert_msg(strstr(r.out, want[k]), "no '%s' in\n%s\n%s", want[k],
			      r.out, r.err);
	tu_run_free(&r);
}
END_TEST

/* p = 1, d = 2, a window of 1: replica 1 sleeps 3 s in its first
 * forward; replica 0 posts bucket 0 (#0) at its last backward, and
 * bucket 1 (#1), which takes #0's tags, waits for #0 until the 1 s
 * timeout, one line naming both collectives and the replica. */
START_TEST(mpi_grid_wait_for_reused_tags_times_out_naming_both)
{
	tu_run r;
	if (mpirun_np(&r, "2", "dp-window-stuck", 0) < 0)
		return;
	ck_assert_msg(strstr(r.out, "world 0 step: timeout"), "%s\n%s", r.out, r.err);
	const char *l = strstr(r.err, "ppcc-rt: rank 0: action 7 B stage 0 mb 3 "
			       "peer -1: timeout: replica 0: REDUCE_GRAD stage 0 "
			       "bucket 1 #1 needs the tags of #0 (stage 0 bucket "
			       "0), which waits for replica 1 (world rank 1); "
			       "waited 1.0");
	ck_assert_msg(l, "%s", r.err);
	ck_assert_msg(r.status != 124, "mpirun hung\n%s\n%s", r.out, r.err);
	tu_run_free(&r);
}
END_TEST

/* Replica 1's first forward fails: every rank of the grid stops, the
 * others naming it, long before the 5 s timeout.  A rank still in
 * ppcc_rt_init when the failure reaches it stops there ("rank W init"),
 * one already in its step stops in the step. */
START_TEST(mpi_grid_failing_replica_stops_every_rank)
{
	tu_run r;
	if (mpirun_np(&r, "4", "dp-fail", 0) < 0)
		return;
	ck_assert_msg(strstr(r.out, "world 1 step: callback failed"), "%s\n%s",
		      r.out, r.err);
	static const int others[] = {0, 2, 3};
	for (int k = 0; k < 3; k++) {
		char line[64], at_init[64];
		snprintf(line, sizeof line, "world %d step: another rank failed",
			 others[k]);
		snprintf(at_init, sizeof at_init, "rank %d init: another rank failed",
			 others[k]);
		ck_assert_msg(strstr(r.out, line) || strstr(r.out, at_init),
			      "neither '%s' nor '%s' in\n%s\n%s", line, at_init,
			      r.out, r.err);
	}
	ck_assert_msg(strstr(r.err, "stopped because rank 0 replica 1 (world rank 1) "
			     "failed (callback failed)"), "%s", r.err);
	/* each reports at once, then sleeps 2 s before MPI_Abort */
	ck_assert_msg(r.status != 124, "mpirun hung\n%s\n%s", r.out, r.err);
	tu_run_free(&r);
}
END_TEST

/* p = 1, d = 2: replica 1 sleeps 3 s in its first forward; replica 0's
 * reduction waits the 1 s timeout and names the collective and the rank
 * it waited for, in one line. */
START_TEST(mpi_grid_stuck_replica_times_out_naming_the_collective)
{
	tu_run r;
	if (mpirun_np(&r, "2", "dp-stuck", 0) < 0)
		return;
	ck_assert_msg(strstr(r.out, "world 0 step: timeout"), "%s\n%s", r.out, r.err);
	const char *l = strstr(r.err, "ppcc-rt: rank 0: replica 0: REDUCE_GRAD "
			       "stage 0 bucket 0 #0: timeout: waited 1.0");
	ck_assert_msg(l, "%s", r.err);
	ck_assert_msg(strstr(l, "s for replica 1 (world rank 1)\n"), "%s", r.err);
	ck_assert_msg(r.status != 124, "mpirun hung\n%s\n%s", r.out, r.err);
	tu_run_free(&r);
}
END_TEST

/* Replica 1 registers 4 values where replica 0 has 5: the replicas of
 * pipeline rank 1 refuse the collective before any value moves (the
 * first to see the other's descriptor reports it; its abort may reach
 * the other first), and every rank stops. */
START_TEST(mpi_grid_replicas_entering_different_collectives_are_refused)
{
	tu_run r;
	if (mpirun_np(&r, "4", "dp-mismatch", 0) < 0)
		return;
	int on0 = strstr(r.err, "replica 0: REDUCE_GRAD #0 is stage 1 bucket 0 "
			 "(5 values) here but #0 stage 1 bucket 0 (4 values) "
			 "on replica 1 (world rank 3)") != NULL;
	int on1 = strstr(r.err, "replica 1: REDUCE_GRAD #0 is stage 1 bucket 0 "
			 "(4 values) here but #0 stage 1 bucket 0 (5 values) "
			 "on replica 0 (world rank 2)") != NULL;
	ck_assert_msg(on0 || on1, "%s", r.err);
	ck_assert_msg(!on0 || strstr(r.out, "world 2 step: schedules differ"), "%s", r.out);
	ck_assert_msg(!on1 || strstr(r.out, "world 3 step: schedules differ"), "%s", r.out);
	for (int w = 0; w < 4; w++) {
		char line[32];
		snprintf(line, sizeof line, "world %d step: ", w);
		ck_assert_msg(strstr(r.out, line), "no '%s' in\n%s", line, r.out);
	}
	ck_assert_msg(r.status != 124, "mpirun hung\n%s\n%s", r.out, r.err);
	tu_run_free(&r);
}
END_TEST

/* ---- the example trainer ---------------------------------------------------- */

/* The largest relative difference between the numbers of two outputs
 * of the same shape (HUGE_VAL when the shapes differ). */
static double max_rel_diff(const char *a, const char *b)
{
	double worst = 0;
	char *ea, *eb;
	while (*a && *b) {
		double x = strtod(a, &ea), y = strtod(b, &eb);
		if (ea == a || eb == b) {
			if (*a != *b)
				return HUGE_VAL;
			a++;
			b++;
			continue;
		}
		double d = fabs(x - y) / (fabs(y) > 0 ? fabs(y) : 1);
		if (d > worst)
			worst = d;
		a = ea;
		b = eb;
	}
	return *a || *b ? HUGE_VAL : worst;
}

/* Runs argv; when it is mpirun and mpirun is missing, or the trainer has
 * no MPI, returns 1 (skip). */
static int run_ok(char *const argv[], const char *what)
{
	tu_run r;
	char *env[] = {"ASAN_OPTIONS=detect_leaks=0",
		       "OMPI_MCA_btl_vader_single_copy_mechanism=none", NULL};
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, env, 60, argv), 0);
	int skip = r.status == 127 || (r.status == 2 && strstr(r.err, "built without MPI"));
	ck_assert_msg(skip || r.status == 0, "%s: exit %d\n%s%s", what, r.status,
		      r.out, r.err);
	tu_run_free(&r);
	return skip;
}

static void expect_same(const char *ref, const char *prefix, const char *what)
{
	char *got = tu_sorted_lines(prefix, 0);
	ck_assert_msg(strstr(got, "loss 3 ") && strstr(got, "param 7 "),
		      "%s: incomplete output\n%s", what, got);
	/* the same microbatches accumulated in the same order: bit for bit */
	ck_assert_msg(strcmp(got, ref) == 0, "%s: differs from serial training "
		      "(largest relative difference %g)", what, max_rel_diff(got, ref));
	free(got);
}

START_TEST(trainer_matches_serial_training_on_every_schedule_and_transport)
{
	char trainer[PATH_MAX], bin[PATH_MAX], model[PATH_MAX], out[PATH_MAX];
	char json[PATH_MAX], what[128], np[8];
	tu_build_path(trainer, sizeof trainer, "trainer");
	ck_assert_msg(access(trainer, X_OK) == 0, "%s not built (make trainer)", trainer);
	char *dir = tu_mkdtemp();
	ck_assert_ptr_nonnull(dir);
	snprintf(model, sizeof model, "%s/examples/trainer/mlp.yaml", tu_src());

	snprintf(out, sizeof out, "%s/serial", dir);
	char *serial[] = {trainer, "--serial", "--steps", "4", "--output", out, NULL};
	run_ok(serial, "serial");
	char *ref = tu_sorted_lines(out, 0);

	/* the schedule compiled in from mlp.yaml (1F1B, 2 ranks) */
	snprintf(out, sizeof out, "%s/header-local", dir);
	char *hl[] = {trainer, "--steps", "4", "--debug", "--output", out, NULL};
	run_ok(hl, "compiled-in schedule, local");
	expect_same(ref, out, "compiled-in schedule, local");
	snprintf(out, sizeof out, "%s/header-mpi", dir);
	char *hm[] = {"mpirun", "-np", "2", "--oversubscribe", "--allow-run-as-root",
		      "--mca", "btl", "self,vader", trainer, "--transport", "mpi",
		      "--steps", "4", "--debug", "--output", out, NULL};
	int mpi = !run_ok(hm, "compiled-in schedule, mpi");
	if (mpi)
		expect_same(ref, out, "compiled-in schedule, mpi");
	else if (!tu_mpi_left_out("trainer_matches_serial_training_on_every_schedule_and_transport"))
		tu_skip("trainer_matches_serial_training_on_every_schedule_and_transport",
			"no mpirun or no MPI in the trainer; its MPI runs not run");

	for (int kind = 0; kind < PPCC_SCHED_COUNT; kind = RT_PIPE_NEXT(kind))
		for (int p = 1; p <= 4; p *= 2) {
			/* ppcc plans combined-1f1b for a mixture of experts
			 * only; the runtime runs its orders in
			 * numeric_pipeline_matches_serial_for_every_kind_and_
			 * rank_count and over mpirun (rt_mpi_prog.c) */
			if (kind == PPCC_SCHED_COMBINED_1F1B)
				continue;
			const char *kname = ppcc_schedule_kind_name(kind);
			snprintf(json, sizeof json, "%s/%s-%d.json", dir, kname, p);
			snprintf(np, sizeof np, "%d", p);
			char *plan[] = {(char *)ppcc_binary(bin, sizeof bin), "plan", "-f",
					"json", "-s", (char *)kname, "-p", np, "-m", "8",
					"-o", json, model, NULL, NULL, NULL};
			if (kind == PPCC_SCHED_INTERLEAVED) {
				memmove(&plan[4], &plan[2], 11 * sizeof *plan);
				plan[2] = "-v";
				plan[3] = "2";
			}
			run_ok(plan, "ppcc plan");

			snprintf(what, sizeof what, "%s p=%d local", kname, p);
			snprintf(out, sizeof out, "%s/%s-%d-local", dir, kname, p);
			char *lo[] = {trainer, "--schedule", json, "--steps", "4",
				      "--debug", "--output", out, NULL};
			run_ok(lo, what);
			expect_same(ref, out, what);
			if (!mpi)
				continue;
			snprintf(what, sizeof what, "%s p=%d mpi", kname, p);
			snprintf(out, sizeof out, "%s/%s-%d-mpi", dir, kname, p);
			char *mo[] = {"mpirun", "-np", np, "--oversubscribe",
				      "--allow-run-as-root", "--mca", "btl", "self,vader",
				      trainer, "--transport", "mpi", "--schedule", json,
				      "--steps", "4", "--debug", "--output", out, NULL};
			run_ok(mo, what);
			expect_same(ref, out, what);
		}
	free(ref);
	tu_rmtree_free(dir);
}
END_TEST

/* Data parallelism: D replicas of a p-rank pipeline, each on its own
 * shard of the global batch, with the gradients reduced in the schedule,
 * train as one process does on the whole batch: bit for bit, since the
 * serial reference (--serial --data-parallel D) accumulates each shard on
 * its own and adds the shards' gradients in replica order, as both
 * transports' reductions do (the local group's thread; mpi's
 * reduce-scatter and all-gather of point-to-point messages).  Over local
 * threads and over mpirun with p x D processes. */
START_TEST(data_parallel_training_matches_serial_training_on_the_global_batch)
{
	static const int grid[][2] = {{1, 2}, {2, 1}, {2, 2}, {4, 2}, {2, 4}};
	char trainer[PATH_MAX], bin[PATH_MAX], model[PATH_MAX], out[PATH_MAX];
	char ref_path[PATH_MAX], json[PATH_MAX], what[128], np[8], nd[8], nw[8];
	char nm[16];
	tu_build_path(trainer, sizeof trainer, "trainer");
	ck_assert_msg(access(trainer, X_OK) == 0, "%s not built (make trainer)", trainer);
	char *dir = tu_mkdtemp();
	ck_assert_ptr_nonnull(dir);
	snprintf(model, sizeof model, "%s/examples/trainer/mlp.yaml", tu_src());
	int mpi = -1, runs = 0;
	for (int kind = 0; kind < PPCC_SCHED_COUNT; kind = RT_PIPE_NEXT(kind))
		for (size_t g = 0; g < sizeof grid / sizeof grid[0]; g++) {
			if (kind == PPCC_SCHED_COMBINED_1F1B)
				continue; /* as above */
			int p = grid[g][0], d = grid[g][1];
			const char *kname = ppcc_schedule_kind_name(kind);
			snprintf(json, sizeof json, "%s/%s-%d.json", dir, kname, p);
			snprintf(np, sizeof np, "%d", p);
			snprintf(nd, sizeof nd, "%d", d);
			snprintf(nw, sizeof nw, "%d", p * d);
			/* 4 microbatches; dualpipe-v needs 2p */
			snprintf(nm, sizeof nm, "%d",
				 kind == PPCC_SCHED_DUALPIPE_V && 2 * p > 4 ? 2 * p : 4);
			char *plan[] = {(char *)ppcc_binary(bin, sizeof bin), "plan", "-f",
					"json", "-s", (char *)kname, "-p", np, "-m", nm,
					"-o", json, model, NULL, NULL, NULL};
			if (kind == PPCC_SCHED_INTERLEAVED) {
				memmove(&plan[4], &plan[2], 11 * sizeof *plan);
				plan[2] = "-v";
				plan[3] = "2";
			}
			run_ok(plan, "ppcc plan");
			snprintf(what, sizeof what, "%s p=%d d=%d", kname, p, d);
			/* mlp.yaml's 4 devices: the plan is data parallel (its
			 * REDUCE_GRAD actions drive the reductions) for p 1 and
			 * 2, not for p 4 (the runtime places them itself) */
			char *text = tu_read_file(json, NULL);
			ck_assert_ptr_nonnull(text);
			ck_assert_msg((strstr(text, "\"REDUCE_GRAD\"") != NULL) == (p < 4),
				      "%s: REDUCE_GRAD in the plan: %d", what,
				      strstr(text, "\"REDUCE_GRAD\"") != NULL);
			free(text);
			snprintf(ref_path, sizeof ref_path, "%s/%s-%d-%d-serial", dir, kname, p, d);
			char *se[] = {trainer, "--serial", "--data-parallel", nd,
				      "--schedule", json, "--steps", "3", "--output",
				      ref_path, NULL};
			run_ok(se, what);
			char *ref = tu_sorted_lines(ref_path, 0);
			ck_assert_msg(strstr(ref, "loss 2 ") && strstr(ref, "param 7 "),
				      "%s: incomplete serial output\n%s", what, ref);
			snprintf(out, sizeof out, "%s/%s-%d-%d-dp", dir, kname, p, d);
			char *dp[] = {trainer, "--data-parallel", nd, "--schedule", json,
				      "--steps", "3", "--debug", "--output", out, NULL};
			run_ok(dp, what);
			char *got = tu_sorted_lines(out, 0);
			ck_assert_msg(strcmp(got, ref) == 0, "%s local: differs from "
				      "serial training (largest relative difference %g)\n%s",
				      what, max_rel_diff(got, ref), got);
			free(got);
			if (mpi != 0) {
				snprintf(out, sizeof out, "%s/%s-%d-%d-mpi", dir, kname, p, d);
				char *mo[] = {"mpirun", "-np", nw, "--oversubscribe",
					      "--allow-run-as-root", "--mca", "btl",
					      "self,vader", trainer, "--transport", "mpi",
					      "--data-parallel", nd, "--schedule", json,
					      "--steps", "3", "--debug", "--timeout", "30",
					      "--output", out, NULL};
				mpi = !run_ok(mo, what);
				if (mpi) {
					got = tu_sorted_lines(out, 0);
					ck_assert_msg(strcmp(got, ref) == 0, "%s mpi: differs "
						      "from serial training (largest relative "
						      "difference %g)\n%s", what,
						      max_rel_diff(got, ref), got);
					free(got);
					runs++;
				}
			}
			free(ref);
		}
	if (!mpi && !tu_mpi_left_out("data_parallel_training_matches_serial_training_on_the_global_batch"))
		tu_skip("data_parallel_training_matches_serial_training_on_the_global_batch",
			"no mpirun or no MPI in the trainer; its MPI runs not run");
	fprintf(stderr, "runtime: data parallel, %d kinds x %zu grids: local and "
		"%d mpi runs equal to serial bit for bit\n", RT_PIPE_KINDS - 1,
		sizeof grid / sizeof grid[0], runs);
	tu_rmtree_free(dir);
}
END_TEST

/* ZeRO: a plan of mlp.yaml on p x d devices with pipeline.zero set
 * reduce-scatters each bucket (each replica keeps the sum of the shard
 * it owns, count / d values, the last replica the rest) and, under ZeRO
 * 1 and 2, opens each rank's list with the buckets' parameter gathers;
 * the trainer updates only its shards (ppcc_rt_dp_shard) and relies on
 * the next step's gathers, gathering once more after the last step.
 * Under ZeRO 3 the plan gathers for every compute (UNSHARD_PARAM,
 * format 5) and reduce-scatters after every backward: the runtime
 * gathers each group into the registered parameters before its compute
 * and adds each round's shard to the replica's sum, and the serial
 * reference adds the replicas' gradients microbatch by microbatch in
 * the same order (mlp.rounds; the order of ZeRO 1 and 2 gives other
 * bits).  Losses at every step and
 * the final weights are those of serial training on the global batch,
 * bit for bit: the shards' sums are added in replica order as the
 * all-reduce's are, and a gather copies bits.  A gather left out would
 * leave each replica's other shards a step old, and the losses from
 * step 1 on would differ.  Over local threads and over mpirun with
 * p x d processes (up to 8). */
START_TEST(zero_training_matches_serial_training_on_the_global_batch)
{
	static const struct {
		int p, d, zero;
		const char *kind;
	} runs[] = {
		{1, 2, 1, "gpipe"}, {1, 2, 1, "1f1b"}, {1, 2, 1, "interleaved"},
		{1, 2, 1, "zb-v"}, {2, 2, 1, "gpipe"}, {2, 2, 1, "1f1b"},
		{2, 2, 1, "interleaved"}, {2, 2, 1, "zb-v"}, {4, 2, 1, "gpipe"},
		{4, 2, 1, "1f1b"}, {4, 2, 1, "interleaved"}, {4, 2, 1, "zb-v"},
		{2, 4, 1, "gpipe"}, {2, 4, 1, "1f1b"}, {2, 4, 1, "interleaved"},
		{2, 4, 1, "zb-v"}, {2, 2, 2, "zb-h1"},
		{1, 2, 3, "gpipe"}, {1, 2, 3, "1f1b"}, {1, 2, 3, "interleaved"},
		{1, 2, 3, "zb-v"}, {1, 2, 3, "zb-h1"}, {2, 2, 3, "gpipe"},
		{2, 2, 3, "1f1b"}, {2, 2, 3, "interleaved"}, {2, 2, 3, "zb-v"},
		{2, 2, 3, "zb-h1"}, {4, 2, 3, "gpipe"}, {4, 2, 3, "1f1b"},
		{4, 2, 3, "interleaved"}, {4, 2, 3, "zb-v"}, {4, 2, 3, "zb-h1"},
		{2, 4, 3, "gpipe"}, {2, 4, 3, "1f1b"}, {2, 4, 3, "interleaved"},
		{2, 4, 3, "zb-v"}, {2, 4, 3, "zb-h1"},
	};
	char trainer[PATH_MAX], bin[PATH_MAX], yaml[PATH_MAX], out[PATH_MAX];
	char ref_path[PATH_MAX], json[PATH_MAX], what[128], np[8], nd[8], nw[8];
	tu_build_path(trainer, sizeof trainer, "trainer");
	ck_assert_msg(access(trainer, X_OK) == 0, "%s not built (make trainer)", trainer);
	char *dir = tu_mkdtemp();
	ck_assert_ptr_nonnull(dir);
	char *model = tu_read_src("examples/trainer/mlp.yaml");
	char *devices = strstr(model, "  devices: 4\n");
	ck_assert_ptr_nonnull(devices);
	int mpi = -1, n_mpi = 0;
	for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
		int p = runs[k].p, d = runs[k].d;
		snprintf(what, sizeof what, "%s p=%d d=%d zero %d", runs[k].kind, p, d,
			 runs[k].zero);
		/* mlp.yaml on p x d devices, with the ZeRO stage */
		snprintf(yaml, sizeof yaml, "%s/mlp-%zu.yaml", dir, k);
		FILE *f = fopen(yaml, "w");
		ck_assert_ptr_nonnull(f);
		fprintf(f, "%.*s  devices: %d\n%s  zero: %d\n",
			(int)(devices - model), model, p * d,
			devices + strlen("  devices: 4\n"), runs[k].zero);
		ck_assert_int_eq(fclose(f), 0);
		snprintf(json, sizeof json, "%s/plan-%zu.json", dir, k);
		snprintf(np, sizeof np, "%d", p);
		snprintf(nd, sizeof nd, "%d", d);
		snprintf(nw, sizeof nw, "%d", p * d);
		char *plan[] = {(char *)ppcc_binary(bin, sizeof bin), "plan", "-f",
				"json", "-s", (char *)runs[k].kind, "-p", np, "-m", "4",
				"-o", json, yaml, NULL, NULL, NULL};
		if (strcmp(runs[k].kind, "interleaved") == 0) {
			memmove(&plan[4], &plan[2], 11 * sizeof *plan);
			plan[2] = "-v";
			plan[3] = "2";
		}
		run_ok(plan, what);
		char *text = tu_read_file(json, NULL);
		ck_assert_ptr_nonnull(text);
		int z3 = runs[k].zero == 3;
		ck_assert_msg(strstr(text, "\"REDUCE_SCATTER_GRAD\"") &&
			      !strstr(text, "\"REDUCE_GRAD\"") &&
			      (strstr(text, "\"ALL_GATHER_PARAM\"") != NULL) == !z3 &&
			      (strstr(text, "\"UNSHARD_PARAM\"") != NULL) == z3 &&
			      strstr(text, z3 ? "\"version\": 5" : "\"version\": 4"),
			      "%s: the plan's collectives", what);
		free(text);
		snprintf(ref_path, sizeof ref_path, "%s/serial-%zu", dir, k);
		char *se[] = {trainer, "--serial", "--data-parallel", nd, "--schedule",
			      json, "--steps", "3", "--output", ref_path, NULL};
		run_ok(se, what);
		char *ref = tu_sorted_lines(ref_path, 0);
		ck_assert_msg(strstr(ref, "loss 2 ") && strstr(ref, "param 7 "),
			      "%s: incomplete serial output\n%s", what, ref);
		snprintf(out, sizeof out, "%s/zero-%zu", dir, k);
		char *dp[] = {trainer, "--data-parallel", nd, "--schedule", json,
			      "--steps", "3", "--debug", "--output", out, NULL};
		run_ok(dp, what);
		char *got = tu_sorted_lines(out, 0);
		ck_assert_msg(strcmp(got, ref) == 0, "%s local: differs from serial "
			      "training (largest relative difference %g)\n%s", what,
			      max_rel_diff(got, ref), got);
		free(got);
		if (mpi != 0) {
			snprintf(out, sizeof out, "%s/zero-%zu-mpi", dir, k);
			char *mo[] = {"mpirun", "-np", nw, "--oversubscribe",
				      "--allow-run-as-root", "--mca", "btl", "self,vader",
				      trainer, "--transport", "mpi", "--data-parallel", nd,
				      "--schedule", json, "--steps", "3", "--debug",
				      "--timeout", "30", "--output", out, NULL};
			mpi = !run_ok(mo, what);
			if (mpi) {
				got = tu_sorted_lines(out, 0);
				ck_assert_msg(strcmp(got, ref) == 0, "%s mpi: differs from "
					      "serial training (largest relative "
					      "difference %g)\n%s", what,
					      max_rel_diff(got, ref), got);
				free(got);
				n_mpi++;
			}
		}
		free(ref);
	}
	if (!mpi && !tu_mpi_left_out("zero_training_matches_serial_training_on_the_global_batch"))
		tu_skip("zero_training_matches_serial_training_on_the_global_batch",
			"no mpirun or no MPI in the trainer; its MPI runs not run");
	fprintf(stderr, "runtime: ZeRO, %zu plans: local and %d mpi runs equal to "
		"serial bit for bit\n", sizeof runs / sizeof runs[0], n_mpi);
	free(model);
	tu_rmtree_free(dir);
}
END_TEST

/* A schedule whose stages do not match the model is refused by the
 * trainer before it trains. */
START_TEST(trainer_refuses_a_schedule_for_another_model)
{
	char trainer[PATH_MAX], bin[PATH_MAX], model[PATH_MAX], json[PATH_MAX];
	tu_build_path(trainer, sizeof trainer, "trainer");
	ck_assert_msg(access(trainer, X_OK) == 0, "%s not built", trainer);
	char *dir = tu_mkdtemp();
	snprintf(model, sizeof model, "%s/examples/tiny.yaml", tu_src());
	snprintf(json, sizeof json, "%s/tiny.json", dir);
	char *plan[] = {(char *)ppcc_binary(bin, sizeof bin), "plan", "-f", "json",
			"-o", json, model, NULL};
	run_ok(plan, "ppcc plan");
	char *argv[] = {trainer, "--schedule", json, NULL};
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, argv), 0);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "trainer: stage 0 holds layers 0-2") ||
		      strstr(r.err, "trainer: stage 0 moves"), "%s", r.err);
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

/* Counts the "trainer: moe: replica R rank K sent N of M token rows"
 * lines of err with M > 0 (n_lines), and those with N > 0 (n_remote). */
static void moe_rows(const char *err, int *n_lines, int *n_remote)
{
	*n_lines = *n_remote = 0;
	for (const char *at = err; (at = strstr(at, "trainer: moe: replica ")); at++) {
		unsigned long long n = 0, all = 0;
		const char *sent = strstr(at, " sent ");
		if (sent && sscanf(sent, " sent %llu of %llu", &n, &all) == 2 && all > 0) {
			(*n_lines)++;
			*n_remote += n > 0;
		}
	}
}

/* Runs argv (a trainer that must succeed) and returns its standard
 * error (the caller's to free), or NULL when it is mpirun and MPI is
 * out. */
static char *run_err(char *const argv[], const char *what)
{
	tu_run r;
	char *env[] = {"ASAN_OPTIONS=detect_leaks=0",
		       "OMPI_MCA_btl_vader_single_copy_mechanism=none", NULL};
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, env, 120, argv), 0);
	int skip = r.status == 127 || (r.status == 2 && strstr(r.err, "built without MPI"));
	ck_assert_msg(skip || r.status == 0, "%s: exit %d\n%s%s", what, r.status,
		      r.out, r.err);
	char *err = skip ? NULL : strdup(r.err);
	ck_assert_msg(skip || err, "out of memory");
	tu_run_free(&r);
	return err;
}

/* A mixture of experts (--experts 4 --top-k 2) in place of hidden layer
 * 4, its experts spread over expert groups of EP data-parallel replicas
 * and its tokens moved by ppcc_rt_alltoallv: over local threads (a
 * world of the D replicas of the layer's rank) and over mpirun, it
 * trains as the serial reference does on the whole batch, bit for bit,
 * since the reference adds each expert's gradient in the owner's order
 * (microbatch, then replica, then token; the groups' sums in group
 * order, moe.h).  It must not be the dense model in disguise: the
 * serial losses differ from the dense model's, the reference with
 * EP = 1 (another order) differs in its bits, and with EP = 2 every
 * replica sent token rows to the other member. */
START_TEST(moe_training_matches_serial_training_with_experts_across_replicas)
{
	static const struct {
		const char *kind;
		int p, d, ep;
	} runs[] = {
		{"1f1b", 1, 2, 2}, {"1f1b", 2, 2, 2}, {"zb-h1", 1, 2, 2},
		{"zb-h1", 2, 2, 2}, {"gpipe", 2, 2, 2}, {"interleaved", 2, 2, 2},
		{"1f1b", 2, 4, 2}, {"1f1b", 2, 2, 1},
	};
	char trainer[PATH_MAX], bin[PATH_MAX], model[PATH_MAX], out[PATH_MAX];
	char ref_path[PATH_MAX], json[PATH_MAX], what[128], np[8], nd[8], nw[8];
	char nep[8];
	tu_build_path(trainer, sizeof trainer, "trainer");
	ck_assert_msg(access(trainer, X_OK) == 0, "%s not built (make trainer)", trainer);
	char *dir = tu_mkdtemp();
	ck_assert_ptr_nonnull(dir);
	snprintf(model, sizeof model, "%s/examples/trainer/mlp.yaml", tu_src());
	int mpi = -1, n_mpi = 0;
	for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
		int p = runs[k].p, d = runs[k].d, ep = runs[k].ep, lines, remote;
		snprintf(what, sizeof what, "%s p=%d d=%d ep=%d", runs[k].kind, p, d, ep);
		snprintf(json, sizeof json, "%s/plan-%zu.json", dir, k);
		snprintf(np, sizeof np, "%d", p);
		snprintf(nd, sizeof nd, "%d", d);
		snprintf(nw, sizeof nw, "%d", p * d);
		snprintf(nep, sizeof nep, "%d", ep);
		char *plan[] = {(char *)ppcc_binary(bin, sizeof bin), "plan", "-f",
				"json", "-s", (char *)runs[k].kind, "-p", np, "-m", "4",
				"-o", json, model, NULL, NULL, NULL};
		if (strcmp(runs[k].kind, "interleaved") == 0) {
			memmove(&plan[4], &plan[2], 11 * sizeof *plan);
			plan[2] = "-v";
			plan[3] = "2";
		}
		run_ok(plan, what);
		snprintf(ref_path, sizeof ref_path, "%s/serial-%zu", dir, k);
		char *se[] = {trainer, "--serial", "--data-parallel", nd, "--schedule",
			      json, "--steps", "3", "--experts", "4", "--top-k", "2",
			      "--expert-parallel", nep, "--output", ref_path, NULL};
		run_ok(se, what);
		char *ref = tu_sorted_lines(ref_path, 0);
		ck_assert_msg(strstr(ref, "loss 2 ") && strstr(ref, "param 7 "),
			      "%s: incomplete serial output\n%s", what, ref);
		if (k == 0) {
			/* not the dense model, and the experts' order shows */
			snprintf(out, sizeof out, "%s/dense", dir);
			char *de[] = {trainer, "--serial", "--data-parallel", nd,
				      "--schedule", json, "--steps", "3", "--output",
				      out, NULL};
			run_ok(de, "dense serial");
			char *dense = tu_sorted_lines(out, 0);
			char *l0 = strstr(ref, "loss 0 "), *d0 = strstr(dense, "loss 0 ");
			ck_assert_msg(l0 && d0 && strncmp(l0, d0, strcspn(l0, "\n")) != 0,
				      "the MoE model's first loss is the dense model's");
			free(dense);
			snprintf(out, sizeof out, "%s/ep1", dir);
			char *e1[] = {trainer, "--serial", "--data-parallel", nd,
				      "--schedule", json, "--steps", "3", "--experts",
				      "4", "--top-k", "2", "--output", out, NULL};
			run_ok(e1, "serial ep 1");
			char *ep1 = tu_sorted_lines(out, 0);
			ck_assert_msg(strcmp(ep1, ref) != 0, "the serial reference "
				      "adds the experts' gradients in the same order "
				      "for EP 1 and 2: the test cannot tell the orders "
				      "apart");
			free(ep1);
		}
		snprintf(out, sizeof out, "%s/local-%zu", dir, k);
		char *lo[] = {trainer, "--data-parallel", nd, "--schedule", json,
			      "--steps", "3", "--debug", "--timeout", "30", "--experts",
			      "4", "--top-k", "2", "--expert-parallel", nep, "--output",
			      out, NULL};
		char *err = run_err(lo, what);
		moe_rows(err, &lines, &remote);
		ck_assert_msg(lines == d && remote == (ep > 1 ? d : 0),
			      "%s: %d replicas reported token rows, %d sent some to "
			      "another\n%s", what, lines, remote, err);
		free(err);
		char *got = tu_sorted_lines(out, 0);
		ck_assert_msg(strcmp(got, ref) == 0, "%s local: differs from serial "
			      "training (largest relative difference %g)", what,
			      max_rel_diff(got, ref));
		free(got);
		/* mpirun: p x d processes, the expert groups of world ranks */
		if (mpi != 0 && (k == 1 || k == 6)) {
			snprintf(out, sizeof out, "%s/mpi-%zu", dir, k);
			char *mo[] = {"mpirun", "-np", nw, "--oversubscribe",
				      "--allow-run-as-root", "--mca", "btl", "self,vader",
				      trainer, "--transport", "mpi", "--data-parallel", nd,
				      "--schedule", json, "--steps", "3", "--debug",
				      "--timeout", "30", "--experts", "4", "--top-k", "2",
				      "--expert-parallel", nep, "--output", out, NULL};
			err = run_err(mo, what);
			mpi = err != NULL;
			if (mpi) {
				moe_rows(err, &lines, &remote);
				ck_assert_msg(lines == d && remote == d, "%s mpi: %d "
					      "processes reported token rows, %d sent "
					      "some to another\n%s", what, lines, remote, err);
				free(err);
				got = tu_sorted_lines(out, 0);
				ck_assert_msg(strcmp(got, ref) == 0, "%s mpi: differs "
					      "from serial training (largest relative "
					      "difference %g)", what, max_rel_diff(got, ref));
				free(got);
				n_mpi++;
			}
		}
		free(ref);
	}
	if (!mpi && !tu_mpi_left_out("moe_training_matches_serial_training_with_experts_across_replicas"))
		tu_skip("moe_training_matches_serial_training_with_experts_across_replicas",
			"no mpirun or no MPI in the trainer; its MPI runs not run");
	fprintf(stderr, "runtime: mixture of experts, %zu local runs and %d mpi "
		"runs equal to serial bit for bit\n", sizeof runs / sizeof runs[0],
		n_mpi);
	tu_rmtree_free(dir);
}
END_TEST

/* What the MoE trainer cannot run it refuses by name, exit status 2,
 * before any output: the nccl transport, an expert-parallel degree that
 * does not divide the replicas, and a ZeRO schedule (whose shards would
 * cut the experts, which are not replicated). */
START_TEST(moe_trainer_refuses_what_it_cannot_run)
{
	char trainer[PATH_MAX], bin[PATH_MAX], yaml[PATH_MAX], json[PATH_MAX];
	tu_build_path(trainer, sizeof trainer, "trainer");
	ck_assert_msg(access(trainer, X_OK) == 0, "%s not built", trainer);
	char *dir = tu_mkdtemp();
	ck_assert_ptr_nonnull(dir);
	char *model = tu_read_src("examples/trainer/mlp.yaml");
	ck_assert_ptr_nonnull(model);
	snprintf(yaml, sizeof yaml, "%s/zero.yaml", dir);
	FILE *f = fopen(yaml, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s  zero: 1\n", model);
	ck_assert_int_eq(fclose(f), 0);
	free(model);
	snprintf(json, sizeof json, "%s/zero.json", dir);
	char *plan[] = {(char *)ppcc_binary(bin, sizeof bin), "plan", "-f", "json",
			"-p", "2", "-m", "4", "-o", json, yaml, NULL};
	run_ok(plan, "ppcc plan, zero 1");
	static const char *const why[] = {"nccl transport", "must divide",
					  "ZeRO schedule"};
	char *nccl[] = {trainer, "--transport", "nccl", "--experts", "4", NULL};
	char *ep[] = {trainer, "--data-parallel", "2", "--experts", "4",
		      "--expert-parallel", "4", NULL};
	char *zero[] = {trainer, "--data-parallel", "2", "--schedule", json,
			"--experts", "4", "--expert-parallel", "2", NULL};
	char *const *argvs[] = {nccl, ep, zero};
	for (int k = 0; k < 3; k++) {
		tu_run r;
		ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, argvs[k]), 0);
		ck_assert_msg(r.status == 2 && strstr(r.err, "trainer: --experts: ") &&
			      strstr(r.err, why[k]) && r.out_len == 0,
			      "%s: exit %d\n%s", why[k], r.status, r.err);
		tu_run_free(&r);
	}
	tu_rmtree_free(dir);
}
END_TEST

Suite *suite_runtime(void)
{
	return tu_suite("runtime", "runtime", 600, (const TTest *const[]){
		stats_of_an_unknown_version_are_refused_untouched,
		dualpipe_is_refused_by_name,
		numeric_pipeline_matches_serial_for_every_kind_and_rank_count,
		grouped_interleaved_schedules_run_without_deadlock,
		relabelled_schedules_of_every_kind_match_serial,
		split_backward_runs_input_then_weight_gradients,
		buffers_in_flight_follow_the_schedule,
		repeated_steps_recycle_buffers_and_deliver_each_message_once,
		mismatched_fingerprints_refused_before_any_data_moves,
		failing_callback_stops_every_rank_at_once,
		stuck_callback_times_out_with_a_diagnostic_on_every_rank,
		timeout_comes_from_the_environment_when_no_option,
		debug_checksum_catches_a_corrupted_message,
		invalid_schedules_callbacks_and_options_are_rejected,
		one_rank_schedule_needs_no_world,
		nccl_init_fails_cleanly_without_a_gpu,
		mpi_transport_answers_unavailable_when_left_out,
		every_allocation_failure_returns_a_clean_status,
		json_schedule_from_ppcc_plan_runs_and_bad_files_are_reported,
		public_header_compiles_alone_as_c11_and_cxx,
		man_page_example_runs,
		mpi_two_ranks_run_every_kind_eager_and_grouped,
		mpi_four_ranks_run_every_kind_relabelled,
		mpi_killed_rank_ends_the_job_within_the_timeout,
		mpi_dead_peer_times_out_when_mpirun_keeps_the_job,
		mpi_grid_reduces_every_bucket_over_the_replicas,
		mpi_grid_reused_tags_never_meet_a_live_collective,
		mpi_grid_wait_for_reused_tags_times_out_naming_both,
		mpi_grid_failing_replica_stops_every_rank,
		mpi_grid_stuck_replica_times_out_naming_the_collective,
		mpi_grid_replicas_entering_different_collectives_are_refused,
		trainer_matches_serial_training_on_every_schedule_and_transport,
		trainer_refuses_a_schedule_for_another_model,
		data_parallel_training_matches_serial_training_on_the_global_batch,
		zero_training_matches_serial_training_on_the_global_batch,
		mpi_mismatched_schedules_refused_on_both_ranks,
		alltoallv_over_threads_delivers_uneven_counts_element_by_element,
		alltoallv_rejects_bad_arguments_with_a_clear_line,
		alltoallv_member_that_never_arrives_times_out_with_flight_record,
		mpi_alltoallv_delivers_uneven_counts_between_steps_and_in_callbacks,
		mpi_alltoallv_member_that_never_arrives_times_out,
		moe_training_matches_serial_training_with_experts_across_replicas,
		moe_trainer_refuses_what_it_cannot_run,
		NULL});
}
