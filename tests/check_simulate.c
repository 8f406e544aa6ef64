/* Tests of simulate.c: step time, bubble and peak memory against the
 * closed forms and against timelines worked out by hand. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ppcc.h"
#include "testutil.h"

Suite *suite_simulate(void);

#define MAX_STAGES 64

static int build(ppcc_schedule *out, ppcc_arena *a, int kind, int p, int v,
		 int m, int group)
{
	ppcc_stage_info st[MAX_STAGES];
	memset(st, 0, sizeof st);
	return ppcc_schedule_build(out, a, kind, p, v, m, group, st);
}

static void costs_equal(ppcc_stage_cost *c, int n, double f, double b)
{
	for (int s = 0; s < n; s++)
		c[s] = (ppcc_stage_cost){.fwd_ms = f, .bwd_ms = b};
}

static double total_idle(const ppcc_estimate *e, int p)
{
	double idle = 0;
	for (int r = 0; r < p; r++)
		idle += e->idle_ms[r];
	return idle;
}

/* With equal stages and free communication, idle / (p * step) equals
 * (p-1)/(m+p-1): checked as idle * (m+p-1) == (p-1) * p * step on
 * integer-valued doubles (no tolerance), and the step is (m+p-1)(f+b). */
START_TEST(gpipe_and_1f1b_bubble_is_closed_form_exactly)
{
	for (int kind = PPCC_SCHED_GPIPE; kind <= PPCC_SCHED_1F1B; kind++)
		for (int p = 1; p <= 12; p++)
			for (int m = 1; m <= 32; m++) {
				ppcc_arena *a = ppcc_arena_new();
				ppcc_schedule s;
				ppcc_stage_cost c[MAX_STAGES];
				ppcc_estimate e;
				ck_assert_int_eq(build(&s, a, kind, p, 1, m, 0), 0);
				costs_equal(c, p, 1, 2);
				ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
				ck_assert_msg(e.step_ms == 3.0 * (m + p - 1),
					      "kind %d p%d m%d step %g", kind, p, m, e.step_ms);
				ck_assert(total_idle(&e, p) * (m + p - 1) ==
					  (double)(p - 1) * (p * e.step_ms));
				for (int r = 0; r < p; r++)
					ck_assert(e.busy_ms[r] == 3.0 * m);
				ck_assert(e.bubble_analytic ==
					  ppcc_bubble_closed_form(kind, p, 1, m));
				ppcc_arena_free(a);
			}
}
END_TEST

/* The same with random equal costs that are exact in binary (k/8). */
START_TEST(random_equal_costs_keep_the_closed_form)
{
	unsigned seed = 7;
	for (int iter = 0; iter < 300; iter++) {
		int kind = iter % 2;
		int p = 1 + (int)(rand_r(&seed) % 16);
		int m = 1 + (int)(rand_r(&seed) % 40);
		double f = (1 + rand_r(&seed) % 64) / 8.0;
		double b = (1 + rand_r(&seed) % 64) / 8.0;
		ppcc_arena *a = ppcc_arena_new();
		ppcc_schedule s;
		ppcc_stage_cost c[MAX_STAGES];
		ppcc_estimate e;
		ck_assert_int_eq(build(&s, a, kind, p, 1, m, 0), 0);
		costs_equal(c, p, f, b);
		ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
		ck_assert_msg(e.step_ms == (f + b) * (m + p - 1),
			      "kind %d p%d m%d f%g b%g: step %g", kind, p, m, f, b, e.step_ms);
		ck_assert(total_idle(&e, p) * (m + p - 1) ==
			  (double)(p - 1) * (p * e.step_ms));
		ppcc_arena_free(a);
	}
}
END_TEST

/* Megatron's interleaved order reaches (p-1)/(v*m+p-1) exactly for every
 * group size it accepts, including a last group shorter than G. */
START_TEST(interleaved_bubble_is_closed_form_for_every_valid_group)
{
	int cases = 0, ragged = 0;
	for (int p = 1; p <= 8; p++)
		for (int v = 2; v <= 4; v++)
			for (int m = p; m <= 24; m++)
				for (int g = p; g <= m; g++) {
					if (m % g != 0 && m % g < p)
						continue;
					ppcc_arena *a = ppcc_arena_new();
					ppcc_schedule s;
					ppcc_stage_cost c[MAX_STAGES];
					ppcc_estimate e;
					ck_assert_int_eq(build(&s, a, PPCC_SCHED_INTERLEAVED, p, v, m, g), 0);
					costs_equal(c, p * v, 1, 2);
					ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
					ck_assert_msg(e.step_ms == 3.0 * (v * m + p - 1),
						      "p%d v%d m%d G%d: step %g", p, v, m, g, e.step_ms);
					ck_assert(total_idle(&e, p) * (v * m + p - 1) ==
						  (double)(p - 1) * (p * e.step_ms));
					ck_assert(e.bubble_analytic ==
						  ppcc_bubble_closed_form(PPCC_SCHED_INTERLEAVED, p, v, m));
					cases++;
					ragged += m % g != 0;
					ppcc_arena_free(a);
				}
	ck_assert_int_eq(cases, 3294);
	ck_assert_int_eq(ragged, 2259); /* m % G != 0 */
}
END_TEST

/* The closed form itself, against values worked by hand: GPipe and 1F1B
 * (p-1)/(m+p-1), interleaved (p-1)/(v*m+p-1); none for other kinds. */
START_TEST(closed_form_bubble_matches_hand_values)
{
	static const struct {
		int kind, p, v, m;
		double want;
	} table[] = {
		{PPCC_SCHED_GPIPE, 4, 1, 8, 0.272727272727},       /* 3/11: tiny */
		{PPCC_SCHED_1F1B, 4, 1, 8, 0.272727272727},
		{PPCC_SCHED_1F1B, 8, 1, 32, 0.179487179487},       /* 7/39 */
		{PPCC_SCHED_1F1B, 8, 1, 16, 0.304347826087},       /* 7/23 */
		{PPCC_SCHED_INTERLEAVED, 8, 2, 32, 0.098591549296}, /* 7/71 */
		{PPCC_SCHED_INTERLEAVED, 4, 4, 8, 0.085714285714},  /* 3/35 */
		{PPCC_SCHED_GPIPE, 1, 1, 8, 0.0},
		{PPCC_SCHED_1F1B, 2, 1, 1, 0.5},                   /* 1/2 */
	};
	for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
		double got = ppcc_bubble_closed_form(table[k].kind, table[k].p,
						     table[k].v, table[k].m);
		ck_assert_msg(fabs(got - table[k].want) < 1e-11,
			      "kind %d p%d v%d m%d: %.12f, want %.12f",
			      table[k].kind, table[k].p, table[k].v, table[k].m,
			      got, table[k].want);
	}
	ck_assert(isnan(ppcc_bubble_closed_form(PPCC_SCHED_COUNT, 4, 1, 8)));
	ck_assert(isnan(ppcc_bubble_closed_form(-1, 4, 1, 8)));
}
END_TEST

/* Peak memory: static bytes of the rank's stages plus the stash of the
 * microbatches in flight: min(p - r, m) for 1F1B, m for GPipe. */
START_TEST(peak_memory_counts_microbatches_in_flight)
{
	for (int kind = PPCC_SCHED_GPIPE; kind <= PPCC_SCHED_1F1B; kind++)
		for (int p = 1; p <= 8; p++)
			for (int m = 1; m <= 16; m++) {
				ppcc_arena *a = ppcc_arena_new();
				ppcc_schedule s;
				ppcc_stage_cost c[MAX_STAGES];
				ppcc_estimate e;
				ck_assert_int_eq(build(&s, a, kind, p, 1, m, 0), 0);
				costs_equal(c, p, 1, 2);
				for (int st = 0; st < p; st++) {
					c[st].static_bytes = 1e9 * (st + 1);
					c[st].stash_bytes = 3e6 * (st + 1);
				}
				ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
				for (int r = 0; r < p; r++) {
					int n = kind == PPCC_SCHED_GPIPE ? m
						: p - r < m ? p - r : m;
					ck_assert_msg(e.peak_memory_bytes[r] ==
						      c[r].static_bytes + n * c[r].stash_bytes,
						      "kind %d p%d m%d rank %d: %g", kind, p, m, r,
						      e.peak_memory_bytes[r]);
				}
				ppcc_arena_free(a);
			}
}
END_TEST

/* Interleaved ranks hold the static bytes of all their chunks. */
START_TEST(peak_memory_sums_static_bytes_of_chunks)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	ppcc_stage_cost c[8];
	ppcc_estimate e;
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_INTERLEAVED, 4, 2, 4, 0), 0);
	costs_equal(c, 8, 1, 2);
	for (int st = 0; st < 8; st++)
		c[st].static_bytes = 1 << st;
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
	for (int r = 0; r < 4; r++)
		ck_assert(e.peak_memory_bytes[r] == (1 << r) + (1 << (r + 4)));
	ppcc_arena_free(a);
}
END_TEST

/*
 * 1F1B, p = 2, m = 2; F = 1, B = 2, SEND_F 0.5, SEND_B 0.25 (ms).  A
 * transfer occupies the sender from its clock and the receiver from the
 * later of its clock and the send's start:
 *   rank 0: F0:0 [0,1]  SEND_F0:0 [1,1.5]  F0:1 [1.5,2.5]  SEND_F0:1 [2.5,3]
 *           RECV_B0:0 [3,4.75]  B0:0 [4.75,6.75]  RECV_B0:1 [6.75,8.5]
 *           B0:1 [8.5,10.5]
 *   rank 1: RECV_F1:0 [0,1.5]  F1:0 [1.5,2.5]  B1:0 [2.5,4.5]
 *           SEND_B1:0 [4.5,4.75]  RECV_F1:1 [4.75,5.25]  F1:1 [5.25,6.25]
 *           B1:1 [6.25,8.25]  SEND_B1:1 [8.25,8.5]
 * step 10.5; busy 6 and p2p 1.5 on each rank; bubble 6 / 21.
 */
START_TEST(communication_latency_hand_computed_two_ranks)
{
	static const double want0[][2] = {
		{0, 1}, {1, 1.5}, {1.5, 2.5}, {2.5, 3},
		{3, 4.75}, {4.75, 6.75}, {6.75, 8.5}, {8.5, 10.5},
	};
	static const double want1[][2] = {
		{0, 1.5}, {1.5, 2.5}, {2.5, 4.5}, {4.5, 4.75},
		{4.75, 5.25}, {5.25, 6.25}, {6.25, 8.25}, {8.25, 8.5},
	};
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	ppcc_stage_cost c[2];
	ppcc_estimate e;
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_1F1B, 2, 1, 2, 0), 0);
	costs_equal(c, 2, 1, 2);
	c[0].send_f_ms = 0.5;
	c[1].send_b_ms = 0.25;
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
	ck_assert_int_eq(s.ranks[0].n_actions, 8);
	ck_assert_int_eq(s.ranks[1].n_actions, 8);
	for (int i = 0; i < 8; i++) {
		ck_assert_msg(e.start_ms[0][i] == want0[i][0] && e.end_ms[0][i] == want0[i][1],
			      "rank 0 action %d: [%g, %g]", i, e.start_ms[0][i], e.end_ms[0][i]);
		ck_assert_msg(e.start_ms[1][i] == want1[i][0] && e.end_ms[1][i] == want1[i][1],
			      "rank 1 action %d: [%g, %g]", i, e.start_ms[1][i], e.end_ms[1][i]);
	}
	ck_assert(e.step_ms == 10.5);
	ck_assert(e.busy_ms[0] == 6 && e.busy_ms[1] == 6);
	ck_assert(e.comm_ms[0] == 1.5 && e.comm_ms[1] == 1.5);
	ck_assert(e.idle_ms[0] == 3 && e.idle_ms[1] == 3);
	ck_assert(e.bubble_fraction == 6.0 / 21.0);
	ppcc_arena_free(a);
}
END_TEST

/* Split backward: the stash is released when W ends, not when I ends. */
START_TEST(split_backward_releases_stash_at_w)
{
	ppcc_action acts[] = {
		{PPCC_OP_F, 0, 0, -1, 0}, {PPCC_OP_I, 0, 0, -1, 0},
		{PPCC_OP_F, 0, 1, -1, 0}, {PPCC_OP_W, 0, 0, -1, 0},
		{PPCC_OP_I, 0, 1, -1, 0}, {PPCC_OP_W, 0, 1, -1, 0},
	};
	ppcc_stage_info st[1] = {{0, 0, 0, 0, 0, 0, 0}};
	ppcc_rank_schedule ranks[1] = {{0, 6, acts}};
	ppcc_schedule s = {PPCC_SCHEDULE_VERSION, PPCC_SCHED_1F1B, 1, 1, 1, 2, st, ranks, 0};
	s.fingerprint = ppcc_schedule_fingerprint(&s);
	ppcc_diag d = {NULL, NULL, 0, 0};
	ck_assert_int_eq(ppcc_schedule_validate(&s, &d, NULL, 0), 0);
	ppcc_stage_cost c = {.fwd_ms = 1, .bwd_ms = 99, .bwd_input_ms = 1.5,
			     .bwd_weight_ms = 0.5, .static_bytes = 100,
			     .stash_bytes = 10};
	ppcc_arena *a = ppcc_arena_new();
	ppcc_estimate e;
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, &c), 0);
	ck_assert(e.peak_memory_bytes[0] == 120);
	ck_assert(e.step_ms == 6);
	ck_assert(e.busy_ms[0] == 6);
	ck_assert(e.end_ms[0][3] == 4);
	ppcc_arena_free(a);
}
END_TEST

/* Largest idle time of any rank between its first and last compute
 * action: the per-rank bubble the zero-bubble paper counts. */
static double span_bubble(const ppcc_schedule *s, const ppcc_estimate *e)
{
	double worst = 0;
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		int i0 = 0, i1 = rs->n_actions - 1;
		while (!ppcc_op_is_compute(rs->actions[i0].op))
			i0++;
		while (!ppcc_op_is_compute(rs->actions[i1].op))
			i1--;
		double idle = e->end_ms[r][i1] - e->start_ms[r][i0] - e->busy_ms[r];
		if (idle > worst)
			worst = idle;
	}
	return worst;
}

static void costs_split(ppcc_stage_cost *c, int n, double f, double i,
			double w)
{
	for (int s = 0; s < n; s++)
		c[s] = (ppcc_stage_cost){.fwd_ms = f, .bwd_ms = i + w,
					 .bwd_input_ms = i, .bwd_weight_ms = w,
					 .stash_bytes = 1};
}

/* With equal stages and free communication, exactly (dyadic costs, no
 * tolerance): 1F1B idles (p-1)(F+I+W) of its span, ZB-H1 (p-1)(F+I-W),
 * ZB-H2 (p-1)(F+I-2W) (Qi et al., ICLR 2024, section 3), for m >= 2p;
 * and the table's closed forms say the same. */
START_TEST(zero_bubble_closed_forms_exactly)
{
	static const double fiw[][3] = {
		{1, 1, 1}, {2, 1, 1}, {1, 2, 1}, {2, 2, 1}, {3, 2, 1},
		{1.5, 1.5, 1}, {1, 1, 0.5},
	};
	for (int p = 2; p <= 6; p++)
		for (int m = 2 * p; m <= 4 * p; m += p)
			for (size_t k = 0; k < sizeof fiw / sizeof *fiw; k++) {
				double f = fiw[k][0], i = fiw[k][1], w = fiw[k][2];
				static const int kinds[] = {PPCC_SCHED_1F1B, PPCC_SCHED_ZB_H1,
							    PPCC_SCHED_ZB_H2};
				double want[] = {(p - 1) * (f + i + w), (p - 1) * (f + i - w),
						 (p - 1) * (f + i - 2 * w)};
				for (int j = 0; j < 3; j++) {
					ppcc_arena *a = ppcc_arena_new();
					ppcc_schedule s;
					ppcc_stage_cost c[MAX_STAGES];
					ppcc_estimate e;
					ck_assert_int_eq(build(&s, a, kinds[j], p, 1, m, 0), 0);
					costs_split(c, p, f, i, w);
					ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
					double got = span_bubble(&s, &e);
					ck_assert_msg(got == want[j], "%s p%d m%d F%g I%g W%g: "
						      "bubble %g, want %g",
						      ppcc_schedule_kind_name(kinds[j]), p, m,
						      f, i, w, got, want[j]);
					double closed = j == 0
						? ppcc_sched_bubble_ms(kinds[j], p, 1, m, f, i + w, 0)
						: ppcc_sched_bubble_ms(kinds[j], p, 1, m, f, i, w);
					ck_assert(closed == want[j]);
					ppcc_arena_free(a);
				}
			}
}
END_TEST

/* F = I = W and m >= 2p: ZB-H2 and ZB-V leave no rank idle between its
 * first and last action, and ZB-H2's step is then 3m + p - 1 (each rank
 * starts one F after the one before). */
START_TEST(zb_h2_and_zb_v_have_no_bubble_when_f_i_w_are_equal)
{
	for (int p = 1; p <= 8; p++)
		for (int m = 2 * p; m <= 4 * p; m++)
			for (int kind = PPCC_SCHED_ZB_H2; kind <= PPCC_SCHED_ZB_V; kind++) {
				int v = kind == PPCC_SCHED_ZB_V ? 2 : 1;
				ppcc_arena *a = ppcc_arena_new();
				ppcc_schedule s;
				ppcc_stage_cost c[MAX_STAGES];
				ppcc_estimate e;
				ck_assert_int_eq(build(&s, a, kind, p, v, m, 0), 0);
				costs_split(c, p * v, 1, 1, 1);
				ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
				ck_assert_msg(span_bubble(&s, &e) == 0, "%s p%d m%d: %g",
					      ppcc_schedule_kind_name(kind), p, m,
					      span_bubble(&s, &e));
				if (kind == PPCC_SCHED_ZB_H2)
					ck_assert(e.step_ms == 3.0 * m + p - 1);
				ppcc_arena_free(a);
			}
}
END_TEST

/* Peak activation memory with the whole activation held until W (the
 * paper's M_W = M_B, its Table 2): ZB-H1 p M_B on every rank, ZB-H2
 * (2p-1) M_B on rank 0, ZB-V p M_B (two stages of half a rank's layers,
 * M_B / 2 each), for m >= 2p. */
START_TEST(zero_bubble_peak_memory_matches_the_paper)
{
	for (int p = 1; p <= 8; p++)
		for (int m = 2 * p; m <= 3 * p; m++)
			for (int kind = PPCC_SCHED_ZB_H1; kind <= PPCC_SCHED_ZB_V; kind++) {
				int v = kind == PPCC_SCHED_ZB_V ? 2 : 1;
				double mb = 1024; /* M_B */
				ppcc_arena *a = ppcc_arena_new();
				ppcc_schedule s;
				ppcc_stage_cost c[MAX_STAGES];
				ppcc_estimate e;
				ck_assert_int_eq(build(&s, a, kind, p, v, m, 0), 0);
				costs_split(c, p * v, 1, 1, 1);
				for (int st = 0; st < p * v; st++)
					c[st].stash_bytes = mb / v;
				ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
				double peak = 0;
				for (int r = 0; r < p; r++)
					if (e.peak_memory_bytes[r] > peak)
						peak = e.peak_memory_bytes[r];
				double want = kind == PPCC_SCHED_ZB_H2 ? (2 * p - 1) * mb : p * mb;
				ck_assert_msg(peak == want, "%s p%d m%d: peak %g, want %g",
					      ppcc_schedule_kind_name(kind), p, m, peak, want);
				if (kind == PPCC_SCHED_ZB_H1)
					for (int r = 0; r < p; r++)
						ck_assert(e.peak_memory_bytes[r] == p * mb);
				if (kind == PPCC_SCHED_ZB_H2)
					ck_assert(e.peak_memory_bytes[0] == want);
				ppcc_arena_free(a);
			}
}
END_TEST

/* The most stage activations a rank holds between an F and its W (a
 * ZB-V rank counts those of both its stages), over the ranks. */
static int in_flight_peak(const ppcc_schedule *s)
{
	int peak = 0;
	for (int r = 0; r < s->n_ranks; r++) {
		int now = 0;
		const ppcc_rank_schedule *rs = &s->ranks[r];
		for (int i = 0; i < rs->n_actions; i++) {
			if (rs->actions[i].op == PPCC_OP_F && ++now > peak)
				peak = now;
			if (rs->actions[i].op == PPCC_OP_W)
				now--;
		}
	}
	return peak;
}

/* The kind's schedule of (p, m), validated, simulated with free
 * communication and every stage's F, I, W as given: its step, and its
 * in-flight peak in *peak. */
static double zb_step(int kind, int p, int m, double f, double i, double w,
		      int *peak)
{
	int v = kind == PPCC_SCHED_ZB_V ? 2 : 1;
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	ppcc_stage_cost c[MAX_STAGES];
	ppcc_estimate e;
	ppcc_diag d = {NULL, NULL, 0, 0};
	ck_assert_int_eq(build(&s, a, kind, p, v, m, 0), 0);
	ck_assert_int_eq(ppcc_schedule_validate(&s, &d, NULL, 0), 0);
	costs_split(c, p * v, f, i, w);
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
	*peak = in_flight_peak(&s);
	double step = e.step_ms;
	ppcc_arena_free(a);
	return step;
}

/*
 * ppcc's zero-bubble kinds against the heuristics of the zero-bubble
 * authors, sail-sg/zero-bubble 3fd87fd13cf0462e145a07d187ad35c2efefa81a,
 * megatron/core/pipeline_parallel/zerobubble/scheduler/:
 *   - ZB-V: zbv.py, PipelineGraph.try_v_schedule (31-252), as
 *     create_schedule (282-298) runs it: fill_b and fill_f each True and
 *     False (285-286), the least max_bubble kept (291); memory max_mem =
 *     f_mem * n_stage * 2 (23), 2p stage activations a rank;
 *   - ZB-1p and ZB-2p: zb.py, Graph.manual_order (92) as
 *     initial_solution (321-334) runs it over its eight variants, with
 *     max_mem p and 2p activations a rank (the pending backwards of
 *     runtime.py:1589, zero_bubble_max_pending_backward * f_mem).
 * Their figures below come from running those generators unchanged
 * (pure Python) with cost_comm 0 and mem_f 1, mem_b 0, mem_w -1 (the
 * whole activation held until W, as ppcc's in-flight count has it): the
 * step is the latest end time of their schedule, the peak the most
 * activations between an F and its W on any of their ranks (every rank
 * of theirs reaches it).  Costs F, B (= I), W for a rank's share of the
 * layers; a ZB-V stage holds half of it, so theirs and ppcc's ZB-V run
 * with F/2, B/2, W/2 a stage.  ppcc's step is no longer, at no more
 * activations: the same count, except zb-h2 (the paper's 2p-1) where
 * their ZB-2p holds 2p.
 */
START_TEST(zero_bubble_kinds_no_worse_than_the_authors_heuristics)
{
	static const struct {
		int kind, p, m, set; /* set 0: F=B=W=1; 1: F=1, B=1.2, W=0.8 */
		double their_step;
		int their_peak;
	} row[] = {
		{PPCC_SCHED_ZB_V, 4, 4, 0, 13.5, 8}, {PPCC_SCHED_ZB_V, 4, 4, 1, 14.0, 8},
		{PPCC_SCHED_ZB_V, 4, 8, 0, 25.5, 8}, {PPCC_SCHED_ZB_V, 4, 8, 1, 25.8, 8},
		{PPCC_SCHED_ZB_V, 4, 16, 0, 49.5, 8}, {PPCC_SCHED_ZB_V, 4, 16, 1, 49.8, 8},
		{PPCC_SCHED_ZB_V, 8, 8, 0, 27.5, 16}, {PPCC_SCHED_ZB_V, 8, 8, 1, 28.8, 16},
		{PPCC_SCHED_ZB_V, 8, 16, 0, 51.5, 16}, {PPCC_SCHED_ZB_V, 8, 16, 1, 52.2, 16},
		{PPCC_SCHED_ZB_V, 8, 32, 0, 99.5, 16}, {PPCC_SCHED_ZB_V, 8, 32, 1, 100.2, 16},
		{PPCC_SCHED_ZB_V, 16, 16, 0, 55.5, 32}, {PPCC_SCHED_ZB_V, 16, 16, 1, 58.0, 32},
		{PPCC_SCHED_ZB_V, 16, 32, 0, 103.5, 32}, {PPCC_SCHED_ZB_V, 16, 32, 1, 105.0, 32},
		{PPCC_SCHED_ZB_V, 16, 64, 0, 199.5, 32}, {PPCC_SCHED_ZB_V, 16, 64, 1, 201.0, 32},
		/* ZB-1p */
		{PPCC_SCHED_ZB_H1, 4, 4, 0, 15.0, 4}, {PPCC_SCHED_ZB_H1, 4, 4, 1, 16.2, 4},
		{PPCC_SCHED_ZB_H1, 4, 8, 0, 27.0, 4}, {PPCC_SCHED_ZB_H1, 4, 8, 1, 28.2, 4},
		{PPCC_SCHED_ZB_H1, 4, 16, 0, 51.0, 4}, {PPCC_SCHED_ZB_H1, 4, 16, 1, 52.2, 4},
		{PPCC_SCHED_ZB_H1, 8, 8, 0, 31.0, 8}, {PPCC_SCHED_ZB_H1, 8, 8, 1, 33.8, 8},
		{PPCC_SCHED_ZB_H1, 8, 16, 0, 55.0, 8}, {PPCC_SCHED_ZB_H1, 8, 16, 1, 57.8, 8},
		{PPCC_SCHED_ZB_H1, 8, 32, 0, 103.0, 8}, {PPCC_SCHED_ZB_H1, 8, 32, 1, 105.8, 8},
		{PPCC_SCHED_ZB_H1, 16, 16, 0, 63.0, 16}, {PPCC_SCHED_ZB_H1, 16, 16, 1, 69.0, 16},
		{PPCC_SCHED_ZB_H1, 16, 32, 0, 111.0, 16}, {PPCC_SCHED_ZB_H1, 16, 32, 1, 117.0, 16},
		{PPCC_SCHED_ZB_H1, 16, 64, 0, 207.0, 16}, {PPCC_SCHED_ZB_H1, 16, 64, 1, 213.0, 16},
		/* ZB-2p */
		{PPCC_SCHED_ZB_H2, 4, 4, 0, 15.0, 4}, {PPCC_SCHED_ZB_H2, 4, 4, 1, 16.2, 4},
		{PPCC_SCHED_ZB_H2, 4, 8, 0, 27.0, 8}, {PPCC_SCHED_ZB_H2, 4, 8, 1, 27.0, 8},
		{PPCC_SCHED_ZB_H2, 4, 16, 0, 51.0, 8}, {PPCC_SCHED_ZB_H2, 4, 16, 1, 51.0, 8},
		{PPCC_SCHED_ZB_H2, 8, 8, 0, 31.0, 8}, {PPCC_SCHED_ZB_H2, 8, 8, 1, 33.8, 8},
		{PPCC_SCHED_ZB_H2, 8, 16, 0, 55.0, 16}, {PPCC_SCHED_ZB_H2, 8, 16, 1, 55.0, 16},
		{PPCC_SCHED_ZB_H2, 8, 32, 0, 103.0, 16}, {PPCC_SCHED_ZB_H2, 8, 32, 1, 103.0, 16},
		{PPCC_SCHED_ZB_H2, 16, 16, 0, 63.0, 16}, {PPCC_SCHED_ZB_H2, 16, 16, 1, 69.0, 16},
		{PPCC_SCHED_ZB_H2, 16, 32, 0, 111.0, 32}, {PPCC_SCHED_ZB_H2, 16, 32, 1, 111.0, 32},
		{PPCC_SCHED_ZB_H2, 16, 64, 0, 207.0, 32}, {PPCC_SCHED_ZB_H2, 16, 64, 1, 207.0, 32},
	};
	static const double fbw[2][3] = {{1, 1, 1}, {1, 1.2, 0.8}};
	for (size_t k = 0; k < sizeof row / sizeof *row; k++) {
		int kind = row[k].kind, p = row[k].p, m = row[k].m;
		double h = kind == PPCC_SCHED_ZB_V ? 0.5 : 1;
		const double *c = fbw[row[k].set];
		int peak;
		double step = zb_step(kind, p, m, c[0] * h, c[1] * h, c[2] * h, &peak);
		ck_assert_msg(step <= row[k].their_step + 1e-9,
			      "%s p%d m%d F%g B%g W%g: step %.4f, theirs %.4f",
			      ppcc_schedule_kind_name(kind), p, m, c[0], c[1],
			      c[2], step, row[k].their_step);
		int want = kind == PPCC_SCHED_ZB_H2 && m >= 2 * p
			? row[k].their_peak - 1 : row[k].their_peak;
		ck_assert_msg(peak == want, "%s p%d m%d: %d in flight, want %d",
			      ppcc_schedule_kind_name(kind), p, m, peak, want);
	}
}
END_TEST

/* The case of issue #28: p = 8, m = 8, where their ZB-V takes 27.5 (F
 * = B = W = 1) and 28.8 (F = 1, B = 1.2, W = 0.8; the table above).
 * ppcc's takes 27.5 and 28.2, the least there is (the next test). */
START_TEST(zb_v_p8_m8_exactly)
{
	int peak;
	ck_assert(zb_step(PPCC_SCHED_ZB_V, 8, 8, 0.5, 0.5, 0.5, &peak) == 27.5);
	ck_assert_int_eq(peak, 16);
	double step = zb_step(PPCC_SCHED_ZB_V, 8, 8, 0.5, 0.6, 0.4, &peak);
	ck_assert_msg(fabs(step - 28.2) < 1e-9, "step %.6f", step);
	ck_assert_int_eq(peak, 16);
}
END_TEST

/* ZB-V with m = p reaches the lower bound of doc/design/zb-v.md: rank
 * p-1 starts no earlier than (p-1)F and works 2m(F+I+W); its first I
 * (stage p, microbatch 0) waits for the forward through all 2p stages
 * and the input gradients of the p-1 after it, and precedes every I and
 * W of the rank. */
START_TEST(zb_v_with_m_equal_p_reaches_the_lower_bound)
{
	static const double fiw[][3] = {
		{0.5, 0.5, 0.5}, {0.5, 0.6, 0.4}, {1, 1, 1}, {1, 2, 1},
	};
	for (int p = 1; p <= 16; p++)
		for (size_t k = 0; k < sizeof fiw / sizeof *fiw; k++) {
			double f = fiw[k][0], i = fiw[k][1], w = fiw[k][2];
			int m = p, peak;
			double a = (p - 1) * f + 2 * m * (f + i + w);
			double b = 2 * p * f + (p - 1) * i + 2 * m * (i + w);
			double bound = a > b ? a : b;
			double step = zb_step(PPCC_SCHED_ZB_V, p, m, f, i, w, &peak);
			ck_assert_msg(fabs(step - bound) < 1e-9,
				      "p%d F%g I%g W%g: step %.4f, bound %.4f",
				      p, f, i, w, step, bound);
			ck_assert_int_eq(peak, 2 * m);
		}
}
END_TEST

/* DualPipeV, p = 2, m = 4, equal stages (F 1, B 2 = I 1 + W 1), free
 * communication, one unit of stash per stage and microbatch, all of it
 * freed by I: the timeline worked by hand from the order of
 * check_schedule.c's dualpipe_v_p2_m4_hand_traced, a pair taking F + B
 * (its F at once followed by its B, its sends at the end of the B).
 *   rank 0: F0:0-2 [0,3) F3:0 [3,4) I3:0 W3:0 F3:1 [6,7) (F0:3;B3:1)
 *           [7,10) (F3:2;B0:0) [11,14) B3:2 [14,16) (F3:3;B0:1) [17,20)
 *           B3:3 [20,22) I0:2 W0:2 [22,24) I0:3 W0:3 [24,26)
 *   rank 1: F1:0 F2:0 [1,3) F1:1 F2:1 [3,5) F1:2 [5,6) B2:0 [6,8)
 *           (F2:2;B1:0) [8,11) (F1:3;B2:1) [11,14) (F2:3;B1:1) [14,17)
 *           B2:2 B1:2 [17,21) I2:3 I1:3 W2:3 W1:3 [22,26)
 * Step 26; each rank computes 24 (rank 0: 8 F, 5 B, 3 I, 3 W; rank 1:
 * 8 F, 6 B, 2 I, 2 W), so 2 idle a rank and a bubble of 4/52.  The stash
 * peaks at 5 = 2p + 1 stages' worth on both ranks (DualPipe's PP + 1),
 * as it does for every p and m swept after. */
START_TEST(dualpipe_v_equal_stages_hand_computed)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	ppcc_stage_cost c[4];
	ppcc_estimate e;
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_DUALPIPE_V, 2, 2, 4, 0), 0);
	for (int st = 0; st < 4; st++)
		c[st] = (ppcc_stage_cost){.fwd_ms = 1, .bwd_ms = 2,
					  .bwd_input_ms = 1, .bwd_weight_ms = 1,
					  .stash_bytes = 1, .stash_input_bytes = 1};
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
	ck_assert(e.step_ms == 26.0);
	for (int r = 0; r < 2; r++) {
		ck_assert(e.busy_ms[r] == 24.0);
		ck_assert(e.idle_ms[r] == 2.0);
		ck_assert(e.peak_memory_bytes[r] == 5.0);
	}
	ck_assert(e.bubble_fraction == 4.0 / 52.0);
	ck_assert(isnan(e.bubble_analytic));
	/* the pair (F3:2; B0:0) of rank 0: marker, F, B back to back */
	const ppcc_rank_schedule *r0 = &s.ranks[0];
	int k = -1;
	for (int i = 0; i < r0->n_actions; i++)
		if (r0->actions[i].op == PPCC_OP_OVERLAP_F_B &&
		    r0->actions[i].stage == 3 && r0->actions[i].mb == 2)
			k = i;
	ck_assert_int_ge(k, 0);
	ck_assert(e.start_ms[0][k] == 11.0 && e.end_ms[0][k] == 11.0);
	ck_assert(e.start_ms[0][k + 1] == 11.0 && e.end_ms[0][k + 1] == 12.0);
	ck_assert(e.start_ms[0][k + 2] == 12.0 && e.end_ms[0][k + 2] == 14.0);
	ppcc_arena_free(a);

	/* and the activation peak of DualPipe's table, PP + 1 = 2p + 1
	 * stages' worth, on every rank, for every p <= 8 and 2p <= m <= 3p */
	for (int p = 1; p <= 8; p++)
		for (int m = 2 * p; m <= 3 * p; m++) {
			ppcc_stage_cost cs[16];
			a = ppcc_arena_new();
			ck_assert_int_eq(build(&s, a, PPCC_SCHED_DUALPIPE_V, p, 2, m, 0), 0);
			for (int st = 0; st < 2 * p; st++)
				cs[st] = c[0];
			ck_assert_int_eq(ppcc_simulate(&e, a, &s, cs), 0);
			for (int r = 0; r < p; r++)
				ck_assert_msg(e.peak_memory_bytes[r] == 2.0 * p + 1,
					      "p %d m %d rank %d: peak %g", p, m, r,
					      e.peak_memory_bytes[r]);
			ppcc_arena_free(a);
		}
}
END_TEST

/* An overlapped pair hides its all-to-alls (ppcc_pair_ms, doc/design/
 * overlap.md).  By hand: F 1 ms of which 0.5 all-to-all, B 2 ms of which
 * 1, communication taking s = 1/4 of the SMs (hidden share 3/4): A =
 * 1.5, C = 1.5, the pair lasts max(C + s A, A) = 1.875 where it lasted
 * 3; a communication-bound pair (F 1 with 0.8, B 1 with 0.8): A = 1.6,
 * C = 0.4, max(0.8, 1.6) = 1.6; s = 1 (hidden share 0) is F + B.  In
 * the DualPipeV of p 2, m 4 traced above, each pair's F then lasts
 * 0.625 and its B 1.25, and each rank's busy time falls by 1.125 a
 * pair. */
START_TEST(overlapped_pair_hides_the_all_to_all_by_hand)
{
	ppcc_stage_cost f = {.fwd_ms = 1, .ep_fwd_ms = 0.5,
			     .ep_hidden_share = 0.75};
	ppcc_stage_cost b = {.bwd_ms = 2, .ep_bwd_ms = 1};
	ck_assert(ppcc_pair_ms(&f, &b) == 1.875);
	ck_assert(ppcc_op_least_ms(&f, PPCC_OP_F) == 0.625);
	f = (ppcc_stage_cost){.fwd_ms = 1, .ep_fwd_ms = 0.8,
			      .ep_hidden_share = 0.75};
	b = (ppcc_stage_cost){.bwd_ms = 1, .ep_bwd_ms = 0.8};
	ck_assert(ppcc_pair_ms(&f, &b) == 1.6);
	f.ep_hidden_share = 0;
	ck_assert(ppcc_pair_ms(&f, &b) == 2.0);

	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	ppcc_stage_cost c[4];
	ppcc_estimate e;
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_DUALPIPE_V, 2, 2, 4, 0), 0);
	for (int st = 0; st < 4; st++)
		c[st] = (ppcc_stage_cost){.fwd_ms = 1, .bwd_ms = 2,
					  .bwd_input_ms = 1, .bwd_weight_ms = 1,
					  .ep_fwd_ms = 0.5, .ep_bwd_ms = 1,
					  .ep_hidden_share = 0.75,
					  .stash_bytes = 1, .stash_input_bytes = 1};
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
	ck_assert(e.step_ms < 26.0);
	for (int r = 0; r < 2; r++) {
		const ppcc_rank_schedule *rs = &s.ranks[r];
		int pairs = 0;
		for (int i = 0; i < rs->n_actions; i++) {
			if (rs->actions[i].op != PPCC_OP_OVERLAP_F_B)
				continue;
			pairs++;
			ck_assert(e.end_ms[r][i + 1] - e.start_ms[r][i + 1] ==
				  0.625);
			ck_assert(e.end_ms[r][i + 2] - e.start_ms[r][i + 2] ==
				  1.25);
			ck_assert(e.start_ms[r][i + 2] == e.end_ms[r][i + 1]);
		}
		ck_assert_int_gt(pairs, 0);
		ck_assert(e.busy_ms[r] == 24.0 - pairs * 1.125);
	}
	ppcc_arena_free(a);
}
END_TEST

/* A split backward frees stash_input_bytes when I ends and the rest
 * (M_W) when W ends: F0 I0 F1 W0 I1 W1 with a 10-byte stash of which I
 * alone needs 6 peaks at 100 + 14 (after F1 starts: 4 of mb 0, 10 of
 * mb 1), not at the 120 of holding everything until W. */
START_TEST(split_backward_frees_input_part_at_i)
{
	ppcc_action acts[] = {
		{PPCC_OP_F, 0, 0, -1, 0}, {PPCC_OP_I, 0, 0, -1, 0},
		{PPCC_OP_F, 0, 1, -1, 0}, {PPCC_OP_W, 0, 0, -1, 0},
		{PPCC_OP_I, 0, 1, -1, 0}, {PPCC_OP_W, 0, 1, -1, 0},
	};
	ppcc_stage_info st[1] = {{0, 0, 0, 0, 0, 0, 0}};
	ppcc_rank_schedule ranks[1] = {{0, 6, acts}};
	ppcc_schedule s = {PPCC_SCHEDULE_VERSION, PPCC_SCHED_ZB_H1, 1, 1, 1, 2, st, ranks, 0};
	s.fingerprint = ppcc_schedule_fingerprint(&s);
	ppcc_stage_cost c = {.fwd_ms = 1, .bwd_ms = 99, .bwd_input_ms = 1.5,
			     .bwd_weight_ms = 0.5, .static_bytes = 100,
			     .stash_bytes = 10, .stash_input_bytes = 6};
	ppcc_arena *a = ppcc_arena_new();
	ppcc_estimate e;
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, &c), 0);
	ck_assert(e.peak_memory_bytes[0] == 114);
	ppcc_arena_free(a);
}
END_TEST

/* Given a schedule that cannot finish or that indexes out of range, the
 * simulator says so instead of hanging or reading wild memory. */
START_TEST(simulate_rejects_deadlock_and_bad_fields)
{
	ppcc_action r0[] = {
		{PPCC_OP_F, 0, 0, -1, 0},
		{PPCC_OP_RECV_B, 0, 0, 1, 4},
		{PPCC_OP_SEND_F, 0, 0, 1, 4},
		{PPCC_OP_B, 0, 0, -1, 0},
	};
	ppcc_action r1[] = {
		{PPCC_OP_RECV_F, 1, 0, 0, 4},
		{PPCC_OP_F, 1, 0, -1, 0},
		{PPCC_OP_B, 1, 0, -1, 0},
		{PPCC_OP_SEND_B, 1, 0, 0, 4},
	};
	ppcc_stage_info st[2] = {{0, 0, 0, 0, 0, 0, 4}, {1, 1, 0, 1, 1, 4, 0}};
	ppcc_rank_schedule ranks[2] = {{0, 4, r0}, {1, 4, r1}};
	ppcc_schedule s = {PPCC_SCHEDULE_VERSION, PPCC_SCHED_1F1B, 2, 1, 2, 1, st, ranks, 0};
	ppcc_stage_cost c[2];
	costs_equal(c, 2, 1, 2);
	ppcc_arena *a = ppcc_arena_new();
	ppcc_estimate e;
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), PPCC_EINPUT);
	/* in order it runs */
	r0[1] = (ppcc_action){PPCC_OP_SEND_F, 0, 0, 1, 4};
	r0[2] = (ppcc_action){PPCC_OP_RECV_B, 0, 0, 1, 4};
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
	ck_assert(e.step_ms == 6);
	r1[1].stage = 2;
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), PPCC_EINPUT);
	r1[1].stage = 1;
	r1[1].mb = 1;
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), PPCC_EINPUT);
	r1[1].mb = 0;
	r1[1].op = PPCC_OP_COUNT;
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), PPCC_EINPUT);
	r1[1].op = PPCC_OP_F;
	r0[0] = (ppcc_action){PPCC_OP_RECV_F, 0, 0, 1, 4}; /* from stage -1 */
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), PPCC_EINPUT);
	ppcc_arena_free(a);
}
END_TEST

/* Each action's interval: compute and sends last their cost, a receive
 * at least its transfer, and the rank's actions follow one another. */
START_TEST(intervals_are_consistent)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	ppcc_stage_cost c[12];
	ppcc_estimate e;
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_INTERLEAVED, 4, 3, 8, 0), 0);
	for (int st = 0; st < 12; st++)
		c[st] = (ppcc_stage_cost){.fwd_ms = 1 + st % 3, .bwd_ms = 2 + st % 2,
					  .send_f_ms = 0.25, .send_b_ms = 0.125};
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
	double latest = 0;
	for (int r = 0; r < 4; r++) {
		double clock = 0, busy = 0, comm = 0;
		for (int i = 0; i < s.ranks[r].n_actions; i++) {
			const ppcc_action *x = &s.ranks[r].actions[i];
			double st = e.start_ms[r][i], en = e.end_ms[r][i];
			ck_assert(st == clock);
			if (en > latest)
				latest = en;
			switch (x->op) {
			case PPCC_OP_F: ck_assert(en - st == c[x->stage].fwd_ms); busy += en - st; clock = en; break;
			case PPCC_OP_B: ck_assert(en - st == c[x->stage].bwd_ms); busy += en - st; clock = en; break;
			case PPCC_OP_SEND_F: ck_assert(en - st == 0.25); comm += 0.25; clock = en; break;
			case PPCC_OP_SEND_B: ck_assert(en - st == 0.125); comm += 0.125; clock = en; break;
			case PPCC_OP_RECV_F: ck_assert(en - st >= 0.25); comm += 0.25; clock = en; break;
			case PPCC_OP_RECV_B: ck_assert(en - st >= 0.125); comm += 0.125; clock = en; break;
			default: ck_abort_msg("unexpected op %d", x->op);
			}
		}
		ck_assert(e.busy_ms[r] == busy);
		ck_assert(e.comm_ms[r] == comm);
		ck_assert(e.idle_ms[r] == e.step_ms - busy - comm);
	}
	ck_assert(e.step_ms == latest);
	ppcc_arena_free(a);
}
END_TEST

/* The simulation with its buffers kept between calls (the split search's
 * ppcc_simulate_work) gives what a fresh one gives, field for field: over
 * schedules that grow and shrink (the buffers are reused, not cleared,
 * where a flag says a time is not yet valid), keeping the send times or
 * not, and after a call that failed half-way (a deadlock). */
START_TEST(simulation_with_kept_buffers_is_the_fresh_one)
{
	static const struct { int kind, p, v, m, keep; } cases[] = {
		{PPCC_SCHED_1F1B, 4, 1, 8, 0},
		{PPCC_SCHED_INTERLEAVED, 4, 2, 8, 0},
		{PPCC_SCHED_GPIPE, 2, 1, 3, PPCC_SIM_SEND_TIMES},
		{-1, 0, 0, 0, 0}, /* the deadlock of the test above */
		{PPCC_SCHED_ZB_H1, 8, 1, 16, 0},
		{PPCC_SCHED_1F1B, 3, 1, 5, 0},
		{PPCC_SCHED_ZB_V, 4, 2, 8, PPCC_SIM_SEND_TIMES},
		{PPCC_SCHED_INTERLEAVED, 2, 2, 4, 0},
	};
	ppcc_arena *a = ppcc_arena_new();
	ppcc_sim_work *work = NULL;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ppcc_schedule s;
		ppcc_stage_cost c[MAX_STAGES];
		int S = cases[i].p * cases[i].v;
		ppcc_estimate fresh, kept;
		if (cases[i].kind < 0) {
			ppcc_action r0[] = {
				{PPCC_OP_F, 0, 0, -1, 0}, {PPCC_OP_RECV_B, 0, 0, 1, 4},
				{PPCC_OP_SEND_F, 0, 0, 1, 4}, {PPCC_OP_B, 0, 0, -1, 0}};
			ppcc_action r1[] = {
				{PPCC_OP_RECV_F, 1, 0, 0, 4}, {PPCC_OP_F, 1, 0, -1, 0},
				{PPCC_OP_B, 1, 0, -1, 0}, {PPCC_OP_SEND_B, 1, 0, 0, 4}};
			ppcc_stage_info st[2] = {{0, 0, 0, 0, 0, 0, 4},
						 {1, 1, 0, 1, 1, 4, 0}};
			ppcc_rank_schedule ranks[2] = {{0, 4, r0}, {1, 4, r1}};
			ppcc_schedule d = {PPCC_SCHEDULE_VERSION, PPCC_SCHED_1F1B, 2, 1,
					   2, 1, st, ranks, 0};
			costs_equal(c, 2, 1, 2);
			ck_assert_int_eq(ppcc_simulate_work(&kept, a, &d, c, 0, &work),
					 PPCC_EINPUT);
			ck_assert_ptr_nonnull(work);
			continue;
		}
		ck_assert_int_eq(build(&s, a, cases[i].kind, cases[i].p, cases[i].v,
				       cases[i].m, 0), 0);
		for (int st = 0; st < S; st++)
			c[st] = (ppcc_stage_cost){
				.fwd_ms = 1 + st % 3, .bwd_ms = 2 + st % 2,
				.bwd_input_ms = 1 + st % 2, .bwd_weight_ms = 1,
				.send_f_ms = 0.25 * (1 + st % 4),
				.send_b_ms = 0.5 * (1 + st % 3),
				.stash_bytes = 100 + 10 * st, .stash_input_bytes = 40,
				.static_bytes = 1000 + st};
		int keep = cases[i].keep;
		ck_assert_int_eq(ppcc_simulate_keep(&fresh, a, &s, c, keep), 0);
		ck_assert_int_eq(ppcc_simulate_work(&kept, a, &s, c, keep, &work), 0);
		ck_assert(fresh.step_ms > 0 && kept.step_ms == fresh.step_ms);
		ck_assert(kept.bubble_fraction == fresh.bubble_fraction);
		for (int r = 0; r < cases[i].p; r++) {
			ck_assert(kept.busy_ms[r] == fresh.busy_ms[r]);
			ck_assert(kept.idle_ms[r] == fresh.idle_ms[r]);
			ck_assert(kept.comm_ms[r] == fresh.comm_ms[r]);
			ck_assert(kept.peak_memory_bytes[r] == fresh.peak_memory_bytes[r]);
		}
		ck_assert_int_eq(kept.send_ms != NULL, keep != 0);
		if (keep)
			ck_assert(memcmp(kept.send_ms, fresh.send_ms,
					 (size_t)S * cases[i].m * 2 * sizeof(double)) == 0);
	}
	ppcc_sim_work_free(work);
	ppcc_arena_free(a);
}
END_TEST

Suite *suite_simulate(void)
{
	return tu_suite("simulate", "simulate", 120, (const TTest *const[]){
		gpipe_and_1f1b_bubble_is_closed_form_exactly,
		random_equal_costs_keep_the_closed_form,
		interleaved_bubble_is_closed_form_for_every_valid_group,
		closed_form_bubble_matches_hand_values,
		peak_memory_counts_microbatches_in_flight,
		peak_memory_sums_static_bytes_of_chunks,
		communication_latency_hand_computed_two_ranks,
		split_backward_releases_stash_at_w,
		split_backward_frees_input_part_at_i,
		dualpipe_v_equal_stages_hand_computed,
		overlapped_pair_hides_the_all_to_all_by_hand,
		zero_bubble_closed_forms_exactly,
		zb_h2_and_zb_v_have_no_bubble_when_f_i_w_are_equal,
		zero_bubble_peak_memory_matches_the_paper,
		zero_bubble_kinds_no_worse_than_the_authors_heuristics,
		zb_v_p8_m8_exactly,
		zb_v_with_m_equal_p_reaches_the_lower_bound,
		simulate_rejects_deadlock_and_bad_fields,
		intervals_are_consistent,
		simulation_with_kept_buffers_is_the_fresh_one,
		NULL});
}
