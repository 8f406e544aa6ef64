/* match_order.c: the order-safety finding of ppcc check, and the
 * runtime's refusal of a schedule that is not order-safe in grouped mode
 * (the stand-in for NCCL, which pairs sends and receives by posting
 * order). */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppcc.h"
#include "ppcc/runtime.h"
#include "sched/sched.h"
#include "rt_pipe.h"
#include "testutil.h"

Suite *suite_order(void);

static int build(ppcc_schedule *out, ppcc_arena *a, const rt_pipe *p,
		 int kind, int ranks, int v, int m)
{
	ppcc_stage_info st[64];
	ck_assert_int_eq(p->S, ranks * v);
	rt_pipe_stage_table(p, st);
	return ppcc_schedule_build(out, a, kind, ranks, v, m, 0, st);
}

/* GPipe on 2 ranks, 2 microbatches, with rank 1's (RECV_F, F) pairs of
 * microbatches 0 and 1 swapped: valid under matching by name, but rank 0
 * sends mb 0 first and rank 1 receives mb 1 first.  acts must hold the
 * copy of rank 1's actions. */
static void swapped_gpipe(ppcc_schedule *s, ppcc_rank_schedule *ranks,
			  ppcc_action *acts, ppcc_arena *a, rt_pipe *pp)
{
	ck_assert_int_eq(build(s, a, pp, PPCC_SCHED_GPIPE, 2, 1, 2), 0);
	const ppcc_rank_schedule *r1 = &s->ranks[1];
	ck_assert_int_eq(r1->n_actions, 8);
	memcpy(acts, r1->actions, 8 * sizeof *acts);
	ck_assert_int_eq(acts[0].op, PPCC_OP_RECV_F);
	ck_assert_int_eq(acts[0].mb, 0);
	ck_assert_int_eq(acts[2].op, PPCC_OP_RECV_F);
	ck_assert_int_eq(acts[2].mb, 1);
	ppcc_action t0 = acts[0], t1 = acts[1];
	acts[0] = acts[2];
	acts[1] = acts[3];
	acts[2] = t0;
	acts[3] = t1;
	ranks[0] = s->ranks[0];
	ranks[1] = *r1;
	ranks[1].actions = acts;
	s->ranks = ranks;
	s->fingerprint = ppcc_schedule_fingerprint(s);
}

START_TEST(swapped_gpipe_passes_validation_but_is_not_order_safe)
{
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(2, 2, 2, 0);
	ppcc_schedule s;
	ppcc_rank_schedule ranks[2];
	ppcc_action acts[8];
	tu_diag td;
	swapped_gpipe(&s, ranks, acts, a, pp);
	tu_diag_init(&td);
	ck_assert_int_eq(ppcc_schedule_validate(&s, &td.d, NULL, 0), 0);
	ck_assert_int_eq(ppcc_schedule_order_check(&s, &td.d, NULL, 0), 1);
	ck_assert_str_eq(td.text,
		"0:0: warning: rank 0, action 1 (SEND_F stage 0 mb 0): the 1st message "
		"rank 0 sends to rank 1 is the 2nd that rank 1 receives (action 2): "
		"not runnable on order-matching transports (nccl, grouped)\n");
	rt_pipe_free(pp);
	ppcc_arena_free(a);
}
END_TEST

/* Every schedule ppcc builds keeps each pair's order (p = 2 also mixes
 * activations and gradients in one pair's sequence). */
START_TEST(generated_schedules_are_order_safe)
{
	int checked = 0;
	for (int kind = 0; kind < PPCC_SCHED_COUNT; kind++)
		for (int p = 1; p <= 6; p++)
			for (int m = 1; m <= 12; m++) {
				int v = ppcc_sched_kind_chunks(kind, p);
				ppcc_arena *a = ppcc_arena_new();
				rt_pipe *pp = rt_pipe_new(p * v, m, p, 0);
				ppcc_schedule s;
				tu_diag td;
				tu_diag_init(&td);
				if (build(&s, a, pp, kind, p, v, m) == 0) {
					ck_assert_int_eq(ppcc_schedule_validate(&s, &td.d, NULL, 0), 0);
					ck_assert_msg(ppcc_schedule_order_check(&s, &td.d, NULL, 0) == 0,
						      "kind %d p=%d m=%d: %s", kind, p, m, td.text);
					checked++;
				}
				rt_pipe_free(pp);
				ppcc_arena_free(a);
			}
	/* gpipe and 1f1b for every (p, m); interleaved where m fits */
	ck_assert_int_ge(checked, 2 * 6 * 12 + 6);
}
END_TEST

/* The kinds whose receives lower.c leaves in place (kinds.c) do receive
 * from each peer in its sending order, for every chunk count their check
 * admits up to 4, the group sizes 0 and p for the interleaved kind (p = 2,
 * v = 2, m = 5 with groups of 3 does not: lower.c reorders it), and every
 * (p, m) up to 6 x 13; the others are GPipe, 1F1B and interleaved only. */
START_TEST(kinds_left_unreordered_receive_in_sending_order)
{
	int checked = 0;
	for (int kind = 0; kind < PPCC_SCHED_COUNT; kind++) {
		int in_order = kind == PPCC_SCHED_GPIPE || kind == PPCC_SCHED_1F1B ||
			       kind == PPCC_SCHED_INTERLEAVED;
		ck_assert_int_eq(ppcc_sched_receives_in_order(kind, 4, 0), in_order);
		if (!in_order)
			continue;
		ck_assert_int_eq(ppcc_sched_receives_in_order(kind, 4, 4), 1);
		ck_assert_int_eq(ppcc_sched_receives_in_order(kind, 2, 3),
				 kind != PPCC_SCHED_INTERLEAVED);
		const ppcc_sched_kind_info *k = ppcc_sched_kind(kind);
		for (int p = 1; p <= 6; p++)
			for (int v = k->min_chunks; v <= k->max_chunks && v <= 4; v++)
				for (int g = 0; g <= (k->uses_group ? p : 0);
				     g += g == 0 && p > 0 ? p : 1)
					for (int m = 1; m <= 13; m++) {
						ppcc_stage_info st[64];
						memset(st, 0, sizeof st);
						for (int i = 0; i < p * v; i++) {
							st[i].recv_bytes = i > 0 ? 8 : 0;
							st[i].send_bytes = i < p * v - 1 ? 8 : 0;
						}
						ppcc_arena *a = ppcc_arena_new();
						ppcc_schedule s;
						tu_diag td;
						tu_diag_init(&td);
						if (ppcc_schedule_build(&s, a, kind, p, v, m, g, st) == 0) {
							ck_assert_int_eq(ppcc_schedule_validate(&s, &td.d, NULL, 0), 0);
							ck_assert_msg(ppcc_schedule_order_check(&s, &td.d, NULL, 0) == 0,
								      "kind %d p=%d v=%d g=%d m=%d: %s",
								      kind, p, v, g, m, td.text);
							checked++;
						}
						ppcc_arena_free(a);
					}
	}
	/* gpipe and 1f1b for every (p, m), and many interleaved shapes */
	ck_assert_int_ge(checked, 2 * 6 * 13 + 150);
}
END_TEST

/* One finding per rank pair, bounded by max_findings with a note: on 3
 * ranks of GPipe, renaming rank 1's first two RECV_F (mb 0 <-> 1), and
 * rank 2's, puts two pairs out of order. */
START_TEST(one_finding_per_pair_and_the_bound_is_noted)
{
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(3, 4, 3, 8);
	ppcc_schedule s;
	ppcc_rank_schedule ranks[3];
	ppcc_action acts[3][64];
	tu_diag td;
	ck_assert_int_eq(build(&s, a, pp, PPCC_SCHED_GPIPE, 3, 1, 4), 0);
	for (int r = 0; r < 3; r++) {
		ranks[r] = s.ranks[r];
		ck_assert_int_le(ranks[r].n_actions, 64);
		memcpy(acts[r], s.ranks[r].actions,
		       (size_t)ranks[r].n_actions * sizeof **acts);
		ranks[r].actions = acts[r];
	}
	/* GPipe's forward phase on ranks 1 and 2: RECV_F, F, SEND_F (rank
	 * 1) per mb; swap the RECV_F of mb 0 and mb 1 (equal sizes: width 8) */
	for (int r = 1; r <= 2; r++) {
		int i0 = -1, i1 = -1;
		for (int i = 0; i < ranks[r].n_actions; i++) {
			if (acts[r][i].op != PPCC_OP_RECV_F)
				continue;
			if (acts[r][i].mb == 0)
				i0 = i;
			else if (acts[r][i].mb == 1)
				i1 = i;
		}
		ck_assert(i0 >= 0 && i1 >= 0);
		acts[r][i0].mb = 1;
		acts[r][i1].mb = 0;
	}
	s.ranks = ranks;
	s.fingerprint = ppcc_schedule_fingerprint(&s);
	tu_diag_init(&td);
	/* renaming the receives makes F run before its input: invalid; the
	 * order check alone still sees two pairs */
	ck_assert_int_eq(ppcc_schedule_order_check(&s, &td.d, NULL, 0), 2);
	ck_assert_ptr_nonnull(strstr(td.text, "rank 0, action 1 (SEND_F stage 0 mb 0)"));
	ck_assert_ptr_nonnull(strstr(td.text, "rank 1, action"));
	tu_diag_init(&td);
	ck_assert_int_eq(ppcc_schedule_order_check(&s, &td.d, NULL, 1), 2);
	ck_assert_ptr_nonnull(strstr(td.text,
		"0:0: note: 1 further rank pairs out of order not reported\n"));
	ck_assert_ptr_null(strstr(td.text, "rank 1, action"));
	rt_pipe_free(pp);
	ppcc_arena_free(a);
}
END_TEST

START_TEST(ppcc_check_names_the_finding_and_still_accepts_the_schedule)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/order/gpipe-p2-swapped.json", tu_src());
	char *argv[] = {(char *)tu_ppcc(), "check", path, NULL};
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 30, argv), 0);
	ck_assert_int_eq(r.status, 0);
	char want[8192];
	snprintf(want, sizeof want,
		 "%s: valid gpipe schedule: 2 ranks, 2 stages, 2 microbatches, "
		 "16 actions; not runnable on order-matching transports (nccl, "
		 "grouped)\n", path);
	ck_assert_str_eq(r.out, want);
	snprintf(want, sizeof want,
		 "ppcc: %s: warning: rank 0, action 1 (SEND_F stage 0 mb 0): the "
		 "1st message rank 0 sends to rank 1 is the 2nd that rank 1 "
		 "receives (action 2): not runnable on order-matching transports "
		 "(nccl, grouped)\n", path);
	ck_assert_str_eq(r.err, want);
	tu_run_free(&r);
}
END_TEST

/* ppcc_message_key names a message the same at both ends: on every
 * kind's schedule each SEND's key is its RECV's, no two SENDs share one,
 * and the key decodes back to the SEND's stage, its receiver's stage and
 * the microbatch; actions that carry no message, or point outside the
 * schedule, have none. */
START_TEST(message_key_is_the_same_at_both_ends)
{
	for (int kind = 0; kind < PPCC_SCHED_COUNT; kind++) {
		int p = 4, m = 8, v = ppcc_sched_kind_chunks(kind, p);
		ppcc_arena *a = ppcc_arena_new();
		rt_pipe *pp = rt_pipe_new(p * v, m, p, 0);
		ppcc_schedule s;
		ck_assert_int_eq(build(&s, a, pp, kind, p, v, m), 0);
		int S = s.n_stages;
		size_t n_keys = 2 * (size_t)S * (size_t)m;
		int *sends = calloc(n_keys, sizeof *sends);
		int *recvs = calloc(n_keys, sizeof *recvs);
		ck_assert(sends && recvs);
		for (int r = 0; r < p; r++)
			for (int i = 0; i < s.ranks[r].n_actions; i++) {
				const ppcc_action *x = &s.ranks[r].actions[i];
				int64_t key = ppcc_message_key(x, S, m);
				if (!ppcc_op_is_comm(x->op)) {
					ck_assert(key == -1);
					continue;
				}
				ck_assert(key >= 0 && key < (int64_t)n_keys);
				ppcc_message msg = ppcc_message_of_key(key, m);
				int send = ppcc_op_traits_of(x->op)->send;
				ck_assert_int_eq((send ? msg.src_stage : msg.dst_stage), x->stage);
				ck_assert_int_eq(msg.mb, x->mb);
				ck_assert_int_eq(msg.fwd, x->op == PPCC_OP_SEND_F ||
							  x->op == PPCC_OP_RECV_F);
				ck_assert_int_eq(s.stages[send ? msg.dst_stage : msg.src_stage].rank,
						 x->peer);
				(send ? sends : recvs)[key]++;
			}
		for (size_t k = 0; k < n_keys; k++) {
			ck_assert_int_le(sends[k], 1);
			ck_assert_int_eq(sends[k], recvs[k]);
		}
		free(sends);
		free(recvs);
		rt_pipe_free(pp);
		ppcc_arena_free(a);
	}
	const ppcc_action out_of_range[] = {
		{PPCC_OP_SEND_F, 3, 0, 0, 8}, {PPCC_OP_RECV_F, 0, 0, 0, 8},
		{PPCC_OP_SEND_B, 0, 0, 0, 8}, {PPCC_OP_RECV_B, 3, 0, 0, 8},
		{PPCC_OP_SEND_F, 0, 2, 0, 8}, {PPCC_OP_RECV_B, 1, -1, 0, 8},
		{PPCC_OP_F, 1, 0, -1, 0}, {PPCC_OP_REDUCE_GRAD, 1, 0, -1, 8},
		{PPCC_OP_COUNT, 1, 0, 0, 8},
	};
	for (size_t i = 0; i < sizeof out_of_range / sizeof *out_of_range; i++)
		ck_assert_msg(ppcc_message_key(&out_of_range[i], 4, 2) == -1,
			      "case %zu", i);
	/* SEND_B of stage 2 mb 1 is RECV_B of stage 1 mb 1: 2 * (2 * 2 + 1) + 1 */
	const ppcc_action sb = {PPCC_OP_SEND_B, 2, 1, 0, 8}, rb = {PPCC_OP_RECV_B, 1, 1, 0, 8};
	ck_assert(ppcc_message_key(&sb, 4, 2) == 11 && ppcc_message_key(&rb, 4, 2) == 11);
}
END_TEST

/* The schedule of the issue: the tiny example's 1F1B with ranks 1 and 2
 * swapped.  Order matching once took a rank's peers to be r + 1 and
 * r - 1 mod p and so paired rank 2's sends to rank 1 with the counter of
 * rank 2's successor, finding the pair out of order. */
START_TEST(tiny_1f1b_with_ranks_1_and_2_swapped_is_order_safe)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_config cfg;
	ppcc_plan plan;
	ppcc_schedule s;
	tu_diag td;
	tu_diag_init(&td);
	ck_assert_msg(tu_plan_file(&plan, a, &cfg, "examples/tiny.yaml", &td) == 0,
		      "%s", td.text);
	const ppcc_schedule *orig = &plan.best.schedule;
	ck_assert_int_eq(orig->kind, PPCC_SCHED_1F1B);
	ck_assert_int_eq(orig->n_ranks, 4);
	static const int perm[4] = {0, 2, 1, 3};
	ck_assert_int_eq(rt_pipe_relabel(&s, a, orig, perm), 0);
	ck_assert_int_eq(s.stages[1].rank, 2);
	ck_assert_int_eq(s.ranks[2].actions[0].op, PPCC_OP_RECV_F);
	ck_assert_int_eq(s.ranks[2].actions[0].peer, 0);
	ck_assert_int_eq(ppcc_schedule_validate(&s, &td.d, NULL, 0), 0);
	ck_assert_msg(ppcc_schedule_order_check(&s, &td.d, NULL, 0) == 0, "%s",
		      td.text);
	ck_assert_int_eq((int)td.len, 0);
	ppcc_arena_free(a);
}
END_TEST

/* Every kind on a few shapes, its ranks relabelled by seeded random
 * permutations: still valid, and still order-safe (the placement, not
 * the ranks' numbers, names who talks to whom). */
START_TEST(relabelled_schedules_of_every_kind_are_valid_and_order_safe)
{
	static const struct { int p, m; } shapes[] = {
		{3, 6}, {4, 8}, {5, 10}, {6, 13}, {6, 12}, /* the last for
							     * DualPipe's even m */
	};
	for (int kind = 0; kind < PPCC_SCHED_COUNT; kind++) {
		const ppcc_sched_kind_info *k = ppcc_sched_kind(kind);
		int checked = 0;
		for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
			for (int v = k->min_chunks; v <= k->max_chunks && v <= 3; v++) {
				int p = shapes[i].p, m = shapes[i].m;
				ppcc_arena *a = ppcc_arena_new();
				rt_pipe *pp = rt_pipe_new(p * v, m, p, 0);
				ppcc_schedule s, r;
				if (build(&s, a, pp, kind, p, v, m) == 0) {
					for (uint64_t seed = 1; seed <= 3; seed++) {
						int perm[8];
						tu_diag td;
						tu_diag_init(&td);
						rt_pipe_permutation(perm, p, 100 * (uint64_t)kind + seed);
						ck_assert_int_eq(rt_pipe_relabel(&r, a, &s, perm), 0);
						ck_assert_msg(ppcc_schedule_validate(&r, &td.d, NULL, 0) == 0,
							      "%s p=%d v=%d m=%d seed %d: %s",
							      k->name, p, v, m, (int)seed, td.text);
						ck_assert_msg(ppcc_schedule_order_check(&r, &td.d, NULL, 0) == 0,
							      "%s p=%d v=%d m=%d seed %d: %s",
							      k->name, p, v, m, (int)seed, td.text);
					}
					checked++;
				}
				rt_pipe_free(pp);
				ppcc_arena_free(a);
			}
		ck_assert_msg(checked >= 2, "%s: %d shapes built", k->name, checked);
	}
}
END_TEST

/* ppcc check of `ppcc plan examples/tiny.yaml -s KIND -f json` with the
 * ranks relabelled, for every kind: valid, nothing on stderr, no word of
 * order-matching transports. */
START_TEST(ppcc_check_accepts_relabelled_plans_of_every_kind)
{
	char *dir = tu_mkdtemp();
	char tiny[4096], plan_json[4096], relabelled[4096];
	snprintf(tiny, sizeof tiny, "%s/examples/tiny.yaml", tu_src());
	snprintf(plan_json, sizeof plan_json, "%s/plan.json", dir);
	snprintf(relabelled, sizeof relabelled, "%s/relabelled.json", dir);
	for (int kind = 0; kind < PPCC_SCHED_COUNT; kind++) {
		const char *name = ppcc_schedule_kind_name(kind);
		char *plan_argv[] = {(char *)tu_ppcc(), "plan", tiny, "-s", (char *)name,
				     "-f", "json", "-o", plan_json, NULL};
		tu_run r;
		ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, plan_argv), 0);
		if (ppcc_sched_pipes(kind) > 1) {
			/* DualPipe: the planner refuses it by name (plan.c) */
			ck_assert_msg(r.status == 1 && strstr(r.err, "cannot plan the "
							       "dualpipe schedule"),
				      "%s: plan: %s", name, r.err);
			tu_run_free(&r);
			continue;
		}
		if (kind == PPCC_SCHED_COMBINED_1F1B) {
			/* a dense model: refused by name (config_check.c);
			 * its schedules are relabelled in check_runtime.c */
			ck_assert_msg(r.status == 1 && strstr(r.err, "has no "
							       "experts"),
				      "%s: plan: %s", name, r.err);
			tu_run_free(&r);
			continue;
		}
		ck_assert_msg(r.status == 0, "%s: plan: %s", name, r.err);
		tu_run_free(&r);

		ppcc_arena *a = ppcc_arena_new();
		ppcc_plan plan;
		ppcc_schedule s;
		tu_diag td;
		tu_diag_init(&td);
		ck_assert_msg(ppcc_read_json(&plan, a, plan_json, &td.d) == 0, "%s: %s",
			      name, td.text);
		int perm[8], p = plan.best.schedule.n_ranks;
		ck_assert_int_le(p, 8);
		rt_pipe_permutation(perm, p, 7 + (uint64_t)kind);
		ck_assert_int_eq(rt_pipe_relabel(&s, a, &plan.best.schedule, perm), 0);
		plan.best.schedule = s;
		plan.best.stages = (ppcc_stage_info *)s.stages;
		/* the per-rank figures and times the emitter writes, for the
		 * new ranks */
		ck_assert_int_eq(ppcc_simulate(&plan.best.estimate, a, &s,
					       plan.best.costs), 0);
		char *json = tu_emit(&plan, PPCC_FMT_JSON, NULL);
		ck_assert_int_eq(tu_write_file(relabelled, json), 0);
		free(json);
		ppcc_arena_free(a);

		char *check_argv[] = {(char *)tu_ppcc(), "check", relabelled, NULL};
		ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, check_argv), 0);
		ck_assert_msg(r.status == 0 && r.err_len == 0, "%s: exit %d: %s", name,
			      r.status, r.err);
		ck_assert_msg(strstr(r.out, "valid ") && !strstr(r.out, "not runnable"),
			      "%s: %s", name, r.out);
		tu_run_free(&r);
	}
	tu_rmtree_free(dir);
}
END_TEST

/* Grouped, every rank refuses at init, before any data moves (no
 * callback runs); eager, matching by name runs it right. */
START_TEST(runtime_refuses_the_swapped_schedule_in_grouped_mode_only)
{
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(2, 2, 2, 0);
	ppcc_schedule s;
	ppcc_rank_schedule ranks[2];
	ppcc_action acts[8];
	ppcc_rt_stage_fns fns[2];
	ppcc_rt_stats st[2] = {PPCC_RT_STATS_INIT};
	char why[512];
	swapped_gpipe(&s, ranks, acts, a, pp);
	rt_pipe_fns(pp, fns);

	rt_lines log;
	rt_lines_init(&log, 0, 0);
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.timeout_s = 5;
	o.grouped = 1;
	o.diag = rt_lines_add;
	o.diag_user = &log;
	rt_pipe_reset(pp);
	ck_assert_int_eq(ppcc_rt_run_local(st, &s, fns, &o), PPCC_RT_EINPUT);
	for (int r = 0; r < 2; r++) {
		ck_assert_int_eq(st[r].status, PPCC_RT_EINPUT);
		ck_assert_int_eq(log.lines[r], 2);
	}
	ck_assert_ptr_nonnull(strstr(log.text,
		"ppcc-rt: rank 1: schedule: warning: rank 0, action 1 (SEND_F "
		"stage 0 mb 0): the 1st message rank 0 sends to rank 1 is the 2nd "
		"that rank 1 receives (action 2): not runnable on order-matching "
		"transports (nccl, grouped)\n"));
	ck_assert_ptr_nonnull(strstr(log.text,
		"ppcc-rt: rank 0: schedule: 1 rank pair sends in another order "
		"than it is received; refusing it in grouped mode, where messages "
		"match by posting order\n"));
	for (int k = 0; k < 2 * 2; k++)
		ck_assert_int_eq(pp->fwd[k], 0);

	o.grouped = 0;
	log.len = 0;
	log.text[0] = '\0';
	rt_pipe_reset(pp);
	ck_assert_int_eq(ppcc_rt_run_local(st, &s, fns, &o), 0);
	ck_assert_msg(rt_pipe_check(pp, &s, -1, why, sizeof why) == 0, "%s", why);
	ck_assert_int_eq((int)log.len, 0);
	pthread_mutex_destroy(&log.mu);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
}
END_TEST

Suite *suite_order(void)
{
	return tu_suite("order", "order", 120, (const TTest *const[]){
		swapped_gpipe_passes_validation_but_is_not_order_safe,
		generated_schedules_are_order_safe,
		kinds_left_unreordered_receive_in_sending_order,
		one_finding_per_pair_and_the_bound_is_noted,
		ppcc_check_names_the_finding_and_still_accepts_the_schedule,
		runtime_refuses_the_swapped_schedule_in_grouped_mode_only,
		message_key_is_the_same_at_both_ends,
		tiny_1f1b_with_ranks_1_and_2_swapped_is_order_safe,
		relabelled_schedules_of_every_kind_are_valid_and_order_safe,
		ppcc_check_accepts_relabelled_plans_of_every_kind,
		NULL});
}
