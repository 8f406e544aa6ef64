/* Tests of the schedule kinds (src/sched/): the action lists of GPipe, 1F1B
 * and interleaved, and the lowering (lower.c). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppcc.h"
#include "testutil.h"

#define MAX_STAGES 64

Suite *suite_schedule(void);

/* Stage s receives 1000+s bytes and sends 1000+s+1 (what s+1 receives). */
static void stages_fill(ppcc_stage_info *st, int n_stages)
{
	memset(st, 0, sizeof *st * (size_t)n_stages);
	for (int s = 0; s < n_stages; s++) {
		st[s].recv_bytes = s > 0 ? 1000 + (uint64_t)s : 0;
		st[s].send_bytes = s < n_stages - 1 ? 1000 + (uint64_t)s + 1 : 0;
	}
}

static int build(ppcc_schedule *out, ppcc_arena *a, int kind, int p, int v,
		 int m, int group)
{
	ppcc_stage_info st[MAX_STAGES];
	stages_fill(st, p * v);
	return ppcc_schedule_build(out, a, kind, p, v, m, group, st);
}

/* "F0:1 SEND_F0:1 ..." for a rank; compute_only drops SEND/RECV (and
 * keeps the OVERLAP_F_B markers). */
static void render(char *buf, size_t n, const ppcc_rank_schedule *rs,
		   int compute_only)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < rs->n_actions; i++) {
		const ppcc_action *a = &rs->actions[i];
		if (compute_only && ppcc_op_is_comm(a->op))
			continue;
		int k = snprintf(buf + len, n - len, "%s%s%d:%d",
				 len ? " " : "", ppcc_op_name(a->op), a->stage,
				 a->mb);
		ck_assert_int_lt(k, (int)(n - len));
		len += (size_t)k;
	}
}

/* Appends "SETTING: message\n" to the buffer user (512 bytes). */
static void append_complaint(int setting, const char *msg, void *user)
{
	char *buf = user;
	size_t n = strlen(buf);
	snprintf(buf + n, 512 - n, "%d: %s\n", setting, msg);
}

static void no_diag(ppcc_severity sev, const ppcc_loc *loc, const char *msg,
		    void *user)
{
	(void)sev;
	(void)loc;
	(void)user;
	fprintf(stderr, "unexpected diagnostic: %s\n", msg);
}

START_TEST(onef1b_p4_m8_rank0_and_rank3_exact)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	char buf[4096];
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_1F1B, 4, 1, 8, 0), 0);
	/* rank 0: 3 warm-up forwards, 5 pairs, 3 cool-down backwards */
	render(buf, sizeof buf, &s.ranks[0], 0);
	ck_assert_str_eq(buf,
		"F0:0 SEND_F0:0 F0:1 SEND_F0:1 F0:2 SEND_F0:2 "
		"F0:3 SEND_F0:3 RECV_B0:0 B0:0 "
		"F0:4 SEND_F0:4 RECV_B0:1 B0:1 "
		"F0:5 SEND_F0:5 RECV_B0:2 B0:2 "
		"F0:6 SEND_F0:6 RECV_B0:3 B0:3 "
		"F0:7 SEND_F0:7 RECV_B0:4 B0:4 "
		"RECV_B0:5 B0:5 RECV_B0:6 B0:6 RECV_B0:7 B0:7");
	/* rank 3, the last stage: no warm-up */
	render(buf, sizeof buf, &s.ranks[3], 0);
	ck_assert_str_eq(buf,
		"RECV_F3:0 F3:0 B3:0 SEND_B3:0 RECV_F3:1 F3:1 B3:1 SEND_B3:1 "
		"RECV_F3:2 F3:2 B3:2 SEND_B3:2 RECV_F3:3 F3:3 B3:3 SEND_B3:3 "
		"RECV_F3:4 F3:4 B3:4 SEND_B3:4 RECV_F3:5 F3:5 B3:5 SEND_B3:5 "
		"RECV_F3:6 F3:6 B3:6 SEND_B3:6 RECV_F3:7 F3:7 B3:7 SEND_B3:7");
	/* rank 1: 2 warm-up forwards */
	render(buf, sizeof buf, &s.ranks[1], 1);
	ck_assert_str_eq(buf,
		"F1:0 F1:1 F1:2 B1:0 F1:3 B1:1 F1:4 B1:2 F1:5 B1:3 F1:6 B1:4 "
		"F1:7 B1:5 B1:6 B1:7");
	ppcc_arena_free(a);
}
END_TEST

START_TEST(gpipe_p2_m3_exact)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	char buf[2048];
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_GPIPE, 2, 1, 3, 0), 0);
	render(buf, sizeof buf, &s.ranks[0], 0);
	ck_assert_str_eq(buf,
		"F0:0 SEND_F0:0 F0:1 SEND_F0:1 F0:2 SEND_F0:2 "
		"RECV_B0:0 B0:0 RECV_B0:1 B0:1 RECV_B0:2 B0:2");
	render(buf, sizeof buf, &s.ranks[1], 0);
	ck_assert_str_eq(buf,
		"RECV_F1:0 F1:0 RECV_F1:1 F1:1 RECV_F1:2 F1:2 "
		"B1:0 SEND_B1:0 B1:1 SEND_B1:1 B1:2 SEND_B1:2");
	ppcc_arena_free(a);
}
END_TEST

/*
 * Megatron-LM's interleaved order, p = 2, v = 2, m = 4, G = p = 2.
 * Table (mb, chunk): (0,0) (1,0) (0,1) (1,1) | (2,0) (3,0) (2,1) (3,1).
 * Forward k runs table[k]; backward k runs table[k] with chunk 1 - c.
 * Rank r's chunk c is stage 2c + r.
 * Warm-up: rank 0 (2-0-1)*2 + (2-1)*2 = 4, rank 1 (2-1-1)*2 + 2 = 2.
 * Rank 0 forwards: 0:0 0:1 2:0 2:1 0:2 0:3 2:2 2:3 (stage:mb)
 *        backwards: 2:0 2:1 0:0 0:1 2:2 2:3 0:2 0:3
 * Rank 1 forwards: 1:0 1:1 3:0 3:1 1:2 1:3 3:2 3:3
 *        backwards: 3:0 3:1 1:0 1:1 3:2 3:3 1:2 1:3
 */
START_TEST(interleaved_p2_v2_m4_matches_megatron_order)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	char buf[4096];
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_INTERLEAVED, 2, 2, 4, 0), 0);
	render(buf, sizeof buf, &s.ranks[0], 1);
	ck_assert_str_eq(buf,
		"F0:0 F0:1 F2:0 F2:1 "                       /* warm-up 4 */
		"F0:2 B2:0 F0:3 B2:1 F2:2 B0:0 F2:3 B0:1 "   /* steady */
		"B2:2 B2:3 B0:2 B0:3");                      /* cool-down */
	render(buf, sizeof buf, &s.ranks[1], 1);
	ck_assert_str_eq(buf,
		"F1:0 F1:1 "
		"F3:0 B3:0 F3:1 B3:1 F1:2 B1:0 F1:3 B1:1 F3:2 B3:2 F3:3 B3:3 "
		"B1:2 B1:3");
	/* the communication around the first steps of rank 0 */
	render(buf, sizeof buf, &s.ranks[0], 0);
	const char *head =
		"F0:0 SEND_F0:0 F0:1 SEND_F0:1 RECV_F2:0 F2:0 SEND_F2:0 "
		"RECV_F2:1 F2:1 SEND_F2:1 F0:2 SEND_F0:2 RECV_B2:0 B2:0 "
		"SEND_B2:0 ";
	ck_assert_msg(strncmp(buf, head, strlen(head)) == 0, "%s", buf);
	ppcc_arena_free(a);
}
END_TEST

/* Forwards before the first backward on each rank, hand-computed from
 * Megatron-LM's warm-up (p-r-1 for 1F1B; (p-r-1)*2 + (v-1)*G for
 * interleaved), plus the first backward's own forward, capped at m*v.
 * Literals, so that the generator cannot agree with a copy of its own
 * formula; then a sweep of what holds for every size. */
static long forwards_first(const ppcc_rank_schedule *rs)
{
	long fwd = 0;
	for (int i = 0; i < rs->n_actions && rs->actions[i].op != PPCC_OP_B; i++)
		fwd += rs->actions[i].op == PPCC_OP_F;
	return fwd;
}

START_TEST(warmup_counts_follow_megatron)
{
	static const struct {
		int p, v, m, g;
		long want[4];
	} table[] = {
		{4, 1, 8, 0, {4, 3, 2, 1}},  /* 1F1B: 3+1, 2+1, 1+1, 0+1 */
		{4, 1, 2, 0, {2, 2, 2, 1}},  /* capped at m = 2 */
		{2, 1, 5, 0, {2, 1}},
		{2, 2, 4, 2, {5, 3}},        /* 2+2+1, 0+2+1 */
		{4, 2, 8, 4, {11, 9, 7, 5}}, /* 6+4+1, 4+4+1, 2+4+1, 0+4+1 */
		{4, 3, 4, 4, {12, 12, 11, 9}}, /* 6+8+1 and 4+8+1 capped at 12 */
		{2, 2, 6, 3, {6, 4}},        /* G 3: 2+3+1, 0+3+1 */
	};
	for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
		int p = table[k].p, v = table[k].v;
		ppcc_arena *a = ppcc_arena_new();
		ppcc_schedule s;
		ck_assert_int_eq(build(&s, a, v == 1 ? PPCC_SCHED_1F1B
						   : PPCC_SCHED_INTERLEAVED,
				       p, v, table[k].m, table[k].g), 0);
		for (int r = 0; r < p; r++)
			ck_assert_msg(forwards_first(&s.ranks[r]) == table[k].want[r],
				      "p%d v%d m%d G%d rank %d: %ld forwards first, "
				      "want %ld", p, v, table[k].m, table[k].g, r,
				      forwards_first(&s.ranks[r]), table[k].want[r]);
		ppcc_arena_free(a);
	}
	/* every size: rank 0 starts the most forwards, each later rank no
	 * more; a 1F1B rank one fewer than the rank before it until the cap;
	 * the last 1F1B rank exactly one */
	for (int p = 1; p <= 8; p++)
		for (int v = 1; v <= 4; v++)
			for (int m = 1; m <= 24; m++)
				for (int g = p; g <= (v == 1 ? p : m); g++) {
					ppcc_arena *a = ppcc_arena_new();
					ppcc_schedule s;
					if (build(&s, a, v == 1 ? PPCC_SCHED_1F1B
							       : PPCC_SCHED_INTERLEAVED,
						  p, v, m, v == 1 ? 0 : g) != 0) {
						ppcc_arena_free(a);
						continue;
					}
					for (int r = 0; r < p; r++) {
						long f = forwards_first(&s.ranks[r]);
						ck_assert(f >= 1 && f <= (long)m * v);
						if (r > 0)
							ck_assert(f <= forwards_first(&s.ranks[r - 1]));
						if (v == 1 && r > 0 &&
						    forwards_first(&s.ranks[r - 1]) < m)
							ck_assert(f == forwards_first(&s.ranks[r - 1]) - 1);
					}
					if (v == 1)
						ck_assert(forwards_first(&s.ranks[p - 1]) == 1);
					ppcc_arena_free(a);
				}
}
END_TEST

/* ZB-H1 (ZB-1P with one chunk), p = 3, m = 4, traced by hand from the
 * rule: rank r warms up with p-1-r forwards, then F and I in turn, each
 * I followed from its r-th on by the W of the oldest I without one; the
 * last W come at the end.  The same order as PyTorch's
 * ScheduleInterleavedZeroBubble with one stage per rank. */
START_TEST(zb_h1_p3_m4_hand_traced)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	char buf[1024];
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_ZB_H1, 3, 1, 4, 0), 0);
	static const char *const want[3] = {
		"F0:0 F0:1 F0:2 I0:0 W0:0 F0:3 I0:1 W0:1 I0:2 W0:2 I0:3 W0:3",
		"F1:0 F1:1 I1:0 F1:2 I1:1 W1:0 F1:3 I1:2 W1:1 I1:3 W1:2 W1:3",
		"F2:0 I2:0 F2:1 I2:1 F2:2 I2:2 W2:0 F2:3 I2:3 W2:1 W2:2 W2:3",
	};
	for (int r = 0; r < 3; r++) {
		render(buf, sizeof buf, &s.ranks[r], 1);
		ck_assert_str_eq(buf, want[r]);
	}
	/* I carries the gradient send; W sends nothing */
	render(buf, sizeof buf, &s.ranks[1], 0);
	ck_assert_str_eq(buf, "RECV_F1:0 F1:0 SEND_F1:0 RECV_F1:1 F1:1 SEND_F1:1 "
			 "RECV_B1:0 I1:0 SEND_B1:0 RECV_F1:2 F1:2 SEND_F1:2 "
			 "RECV_B1:1 I1:1 SEND_B1:1 W1:0 RECV_F1:3 F1:3 SEND_F1:3 "
			 "RECV_B1:2 I1:2 SEND_B1:2 W1:1 RECV_B1:3 I1:3 SEND_B1:3 "
			 "W1:2 W1:3");
	ppcc_arena_free(a);
}
END_TEST

/* ZB-H2, p = 2, m = 4, traced by hand at unit time (F = I = W = 1):
 * t0 r0 F0; t1 r0 F1, r1 F0; t2 r0 F2, r1 I0; t3 r0 I0, r1 F1; t4 r0 W0
 * (3 = 2p-1 in flight stops F3), r1 I1; t5 r0 I1, r1 F2; t6 r0 F3, r1
 * I2; t7 r0 I2, r1 W0 (3 in flight); t8 r0 W1, r1 F3; t9 r0 W2, r1 I3;
 * t10 r0 I3, r1 W1; then the last W. */
START_TEST(zb_h2_p2_m4_hand_traced)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	char buf[1024];
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_ZB_H2, 2, 1, 4, 0), 0);
	render(buf, sizeof buf, &s.ranks[0], 1);
	ck_assert_str_eq(buf, "F0:0 F0:1 F0:2 I0:0 W0:0 I0:1 F0:3 I0:2 W0:1 W0:2 I0:3 W0:3");
	render(buf, sizeof buf, &s.ranks[1], 1);
	ck_assert_str_eq(buf, "F1:0 I1:0 F1:1 I1:1 F1:2 I1:2 W1:0 F1:3 I1:3 W1:1 W1:2 W1:3");
	ppcc_arena_free(a);
}
END_TEST

/* ZB-V, p = 2, m = 4, traced by hand from PyTorch's
 * ScheduleZBVZeroBubble (n = max(2p-1, m) = 4): rank 0 holds stages 0
 * and 3, rank 1 stages 1 and 2, and the turn of the V (1 -> 2) stays on
 * rank 1 without a message. */
START_TEST(zb_v_p2_m4_hand_traced)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	char buf[2048];
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_ZB_V, 2, 2, 4, 0), 0);
	static const int rank[4] = {0, 1, 1, 0}, chunk[4] = {0, 0, 1, 1};
	for (int st = 0; st < 4; st++) {
		ck_assert_int_eq(s.stages[st].rank, rank[st]);
		ck_assert_int_eq(s.stages[st].chunk, chunk[st]);
	}
	render(buf, sizeof buf, &s.ranks[0], 1);
	ck_assert_str_eq(buf, "F0:0 F0:1 F0:2 F3:0 I3:0 W3:0 F3:1 I3:1 W3:1 F0:3 "
			 "I0:0 W0:0 F3:2 I3:2 W3:2 I0:1 W0:1 F3:3 I3:3 W3:3 "
			 "I0:2 W0:2 I0:3 W0:3");
	render(buf, sizeof buf, &s.ranks[1], 1);
	ck_assert_str_eq(buf, "F1:0 F2:0 F1:1 F2:1 I2:0 W2:0 F1:2 I1:0 W1:0 F2:2 "
			 "I2:1 W2:1 F1:3 I1:1 W1:1 F2:3 I2:2 W2:2 I1:2 I2:3 "
			 "I1:3 W1:2 W2:3 W1:3");
	render(buf, sizeof buf, &s.ranks[1], 0);
	ck_assert_ptr_null(strstr(buf, "SEND_F1:"));
	ck_assert_ptr_null(strstr(buf, "RECV_F2:"));
	ck_assert_ptr_null(strstr(buf, "SEND_B2:"));
	ck_assert_ptr_null(strstr(buf, "RECV_B1:"));
	ck_assert_ptr_nonnull(strstr(buf, "RECV_F1:0 F1:0 F2:0 SEND_F2:0"));
	ppcc_arena_free(a);
}
END_TEST

/* Interleaved zero bubble, p = 2, v = 2, m = 4, traced by hand from
 * PyTorch's ScheduleInterleavedZeroBubble: R = max(1, m / p) = 2 rounds
 * of M = 2; rank r runs (v-1) M + p-1-r warm-up forwards, forward k on
 * chunk (k / M) mod v, backward j on chunk v-1 - (j / M) mod v, and a W
 * after each I from its r-th on. */
START_TEST(zb_interleaved_p2_v2_m4_hand_traced)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	char buf[2048];
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_ZB_INTERLEAVED, 2, 2, 4, 0), 0);
	render(buf, sizeof buf, &s.ranks[0], 1);
	ck_assert_str_eq(buf, "F0:0 F0:1 F2:0 F2:1 I2:0 W2:0 F0:2 I2:1 W2:1 F0:3 "
			 "I0:0 W0:0 F2:2 I0:1 W0:1 F2:3 I2:2 W2:2 I2:3 W2:3 "
			 "I0:2 W0:2 I0:3 W0:3");
	render(buf, sizeof buf, &s.ranks[1], 1);
	ck_assert_str_eq(buf, "F1:0 F1:1 F3:0 I3:0 F3:1 I3:1 W3:0 F1:2 I1:0 W3:1 "
			 "F1:3 I1:1 W1:0 F3:2 I3:2 W1:1 F3:3 I3:3 W3:2 I1:2 "
			 "W3:3 I1:3 W1:2 W1:3");
	ppcc_arena_free(a);
}
END_TEST

/* DualPipeV, p = 2, m = 4, traced by hand from the eight steps of
 * dualpipev.py (sched/dualpipe_v.c lists them).  Rank 0 (stages 0 and 3):
 * 2 F0; 1 x F0 F1; 1 x I1 W F1; 1 round of (F0;B1) (F1;B0); 1 x B1
 * (F1;B0); then B1 and, switching to I between the two on even rank 0,
 * I0; 1 x W I0; 1 W.  Rank 1 (stages 1 and 2, the last rank): 2 x F0
 * F1; 2 rounds of step 4, the first (F0;B1) unpaired; then B1 B0 and,
 * switching before chunk 1 on odd rank 1, I1 I0; 2 W.  Each pair is the
 * marker, its F and its B; the receives of both come before the marker
 * and the sends after the B. */
START_TEST(dualpipe_v_p2_m4_hand_traced)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	char buf[4096];
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_DUALPIPE_V, 2, 2, 4, 0), 0);
	static const int rank[4] = {0, 1, 1, 0}, chunk[4] = {0, 0, 1, 1};
	for (int st = 0; st < 4; st++) {
		ck_assert_int_eq(s.stages[st].rank, rank[st]);
		ck_assert_int_eq(s.stages[st].chunk, chunk[st]);
	}
	ck_assert_int_eq(s.version, 2);
	render(buf, sizeof buf, &s.ranks[0], 1);
	ck_assert_str_eq(buf, "F0:0 F0:1 F0:2 F3:0 I3:0 W3:0 F3:1 "
			 "OVERLAP_F_B0:3 F0:3 B3:1 OVERLAP_F_B3:2 F3:2 B0:0 "
			 "B3:2 OVERLAP_F_B3:3 F3:3 B0:1 B3:3 I0:2 W0:2 I0:3 "
			 "W0:3");
	render(buf, sizeof buf, &s.ranks[1], 1);
	ck_assert_str_eq(buf, "F1:0 F2:0 F1:1 F2:1 F1:2 B2:0 "
			 "OVERLAP_F_B2:2 F2:2 B1:0 OVERLAP_F_B1:3 F1:3 B2:1 "
			 "OVERLAP_F_B2:3 F2:3 B1:1 B2:2 B1:2 I2:3 I1:3 W2:3 "
			 "W1:3");
	render(buf, sizeof buf, &s.ranks[0], 0);
	ck_assert_ptr_nonnull(strstr(buf, "RECV_F3:2 RECV_B0:0 OVERLAP_F_B3:2 "
				     "F3:2 B0:0 B3:2 SEND_B3:2"));
	ck_assert_ptr_nonnull(strstr(buf, "OVERLAP_F_B0:3 F0:3 B3:1 SEND_F0:3 "
				     "SEND_B3:1"));
	render(buf, sizeof buf, &s.ranks[1], 0);
	ck_assert_ptr_nonnull(strstr(buf, "RECV_F1:3 RECV_B2:1 OVERLAP_F_B1:3 "
				     "F1:3 B2:1 OVERLAP_F_B2:3 F2:3 B1:1 "
				     "SEND_F2:3 SEND_B1:1"));
	ppcc_arena_free(a);
}
END_TEST

/* Megatron-LM's combined 1F1B (doc/design/combined-1f1b.md): the
 * interleaved order of interleaved_p2_v2_m4_matches_megatron_order with
 * one more warm-up forward on each rank (schedules.py:964-970: 5 and 3
 * here), each steady forward and backward an overlapped pair, some of
 * them of one stage and two microbatches (F3:1 with B3:0); on one stage
 * combined_1f1b.py:36-65's F1, (F k+1, B k), B m. */
START_TEST(combined_1f1b_orders_by_hand)
{
	ppcc_diag d = {no_diag, NULL, 0, 0};
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	char buf[4096];
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_COMBINED_1F1B, 2, 2, 4, 0), 0);
	ck_assert_int_eq(s.version, 2);
	render(buf, sizeof buf, &s.ranks[0], 1);
	ck_assert_str_eq(buf,
		"F0:0 F0:1 F2:0 F2:1 F0:2 "
		"OVERLAP_F_B0:3 F0:3 B2:0 OVERLAP_F_B2:2 F2:2 B2:1 "
		"OVERLAP_F_B2:3 F2:3 B0:0 "
		"B0:1 B2:2 B2:3 B0:2 B0:3");
	render(buf, sizeof buf, &s.ranks[1], 1);
	ck_assert_str_eq(buf,
		"F1:0 F1:1 F3:0 "
		"OVERLAP_F_B3:1 F3:1 B3:0 OVERLAP_F_B1:2 F1:2 B3:1 "
		"OVERLAP_F_B1:3 F1:3 B1:0 OVERLAP_F_B3:2 F3:2 B1:1 "
		"OVERLAP_F_B3:3 F3:3 B3:2 "
		"B3:3 B1:2 B1:3");
	/* a pair's receives before its marker, its sends after it */
	render(buf, sizeof buf, &s.ranks[1], 0);
	ck_assert_msg(strstr(buf, "RECV_F3:1 OVERLAP_F_B3:1 F3:1 B3:0 "
			     "SEND_B3:0"), "%s", buf);
	ck_assert_int_eq(ppcc_schedule_validate(&s, &d, NULL, 10), 0);
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_COMBINED_1F1B, 1, 1, 3, 0), 0);
	render(buf, sizeof buf, &s.ranks[0], 1);
	ck_assert_str_eq(buf, "F0:0 OVERLAP_F_B0:1 F0:1 B0:0 "
			 "OVERLAP_F_B0:2 F0:2 B0:1 B0:2");
	ck_assert_int_eq(ppcc_schedule_validate(&s, &d, NULL, 10), 0);
	/* one chunk with a pipeline, several without: refused */
	char why[512] = "";
	ck_assert_int_gt(ppcc_sched_check(PPCC_SCHED_COMBINED_1F1B, 2, 1, 4, 0,
					  append_complaint, why), 0);
	ck_assert_msg(strstr(why, "needs chunks >= 2"), "%s", why);
	why[0] = '\0';
	ck_assert_int_gt(ppcc_sched_check(PPCC_SCHED_COMBINED_1F1B, 1, 2, 4, 0,
					  append_complaint, why), 0);
	ck_assert_msg(strstr(why, "runs one chunk"), "%s", why);
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_COMBINED_1F1B, 2, 1, 4, 0),
			 PPCC_EINPUT);
	ppcc_arena_free(a);
}
END_TEST

/* Fewer than 2p microbatches or other than 2 chunks: refused by the
 * kind's checks with their text, and by the build. */
START_TEST(dualpipe_v_constraints)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	char text[512] = "";
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_DUALPIPE_V, 4, 2, 7, 0),
			 PPCC_EINPUT);
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_DUALPIPE_V, 4, 3, 8, 0),
			 PPCC_EINPUT);
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_DUALPIPE_V, 4, 2, 8, 0), 0);
	ck_assert_int_eq(ppcc_sched_check(PPCC_SCHED_DUALPIPE_V, 4, 1, 7, 0,
					  append_complaint, text), 2);
	ck_assert_str_eq(text, "2: the dualpipe-v schedule needs exactly 2 "
			 "chunks per rank; chunks is 1\n"
			 "3: the dualpipe-v schedule needs at least 2 x 4 = 8 "
			 "microbatches for 4 ranks (its warm-up fills both "
			 "stages of every rank); microbatches is 7\n");
	ppcc_arena_free(a);
}
END_TEST

/* DualPipe against its reference, deepseek-ai/DualPipe 3da1bbe
 * (dualpipe/dualpipe.py): DualPipe.step() run by hand for p = 4 ranks and
 * m = 8 microbatches (the smallest m it takes for p = 4: step() asserts
 * num_ranks % 2 == 0 at line 332 and num_chunks % 2 == 0, num_chunks >=
 * num_ranks * 2 at line 333), its compute and communication calls
 * recorded with torch stubbed.  Each rank's order, in ppcc's stages:
 * rank r holds stage r of the forward direction and stage 2p-1-r of the
 * reverse one (phase ^= is_in_second_half, lines 68 and 91); the
 * microbatches of each direction count from 0 (current_f_chunk_id per
 * phase, line 69); an I is a backward with enable_zb (line 97), its W
 * popped first in first out (line 222); an overlapped pair is
 * _forward_backward_chunk (line 205), except the middle ranks' first
 * step-4 round, not overlapped (lines 385-391).  Played with F = I = W
 * = 1 and B = 2 (a pair's F then its B, free communication), the same
 * trace ends at 26 (40 for p = 6, m = 12; 54 for p = 8, m = 16). */
START_TEST(dualpipe_p4_m8_reference_trace)
{
	static const char *const want[4] = {
		"F0:0 F0:1 F0:2 F7:0 I7:0 W7:0 F7:1 OVERLAP_F_B0:3 F0:3 B7:1 "
		"OVERLAP_F_B7:2 F7:2 B0:0 B7:2 OVERLAP_F_B7:3 F7:3 B0:1 B7:3 "
		"I0:2 W0:2 I0:3 W0:3",
		"F1:0 F6:0 F1:1 F6:1 F1:2 B6:0 OVERLAP_F_B6:2 F6:2 B1:0 "
		"OVERLAP_F_B1:3 F1:3 B6:1 OVERLAP_F_B6:3 F6:3 B1:1 B6:2 B1:2 "
		"I6:3 I1:3 W6:3 W1:3",
		"F5:0 F2:0 F5:1 F2:1 F5:2 B2:0 OVERLAP_F_B2:2 F2:2 B5:0 "
		"OVERLAP_F_B5:3 F5:3 B2:1 OVERLAP_F_B2:3 F2:3 B5:1 B2:2 B5:2 "
		"I2:3 I5:3 W2:3 W5:3",
		"F4:0 F4:1 F4:2 F3:0 I3:0 W3:0 F3:1 OVERLAP_F_B4:3 F4:3 B3:1 "
		"OVERLAP_F_B3:2 F3:2 B4:0 B3:2 OVERLAP_F_B3:3 F3:3 B4:1 B3:3 "
		"I4:2 W4:2 I4:3 W4:3",
	};
	static const int shapes[3][3] = {{4, 8, 26}, {6, 12, 40}, {8, 16, 54}};
	ppcc_diag d = {no_diag, NULL, 0, 0};
	char buf[4096];
	for (int k = 0; k < 3; k++) {
		int p = shapes[k][0], m = shapes[k][1];
		ppcc_arena *a = ppcc_arena_new();
		ppcc_schedule s;
		ck_assert_int_eq(build(&s, a, PPCC_SCHED_DUALPIPE, p, 2, m, 0), 0);
		ck_assert_int_eq(ppcc_schedule_validate(&s, &d, NULL, 10), 0);
		/* two pipelines of m/2 microbatches each, on the V placement */
		ck_assert_int_eq(s.n_microbatches, m / 2);
		ck_assert_int_eq(s.version, 2);
		for (int st = 0; st < 2 * p; st++) {
			ck_assert_int_eq(s.stages[st].rank,
					 st < p ? st : 2 * p - 1 - st);
			ck_assert_int_eq(s.stages[st].chunk, st >= p);
		}
		for (int r = 0; k == 0 && r < p; r++) {
			render(buf, sizeof buf, &s.ranks[r], 1);
			ck_assert_str_eq(buf, want[r]);
		}
		if (k == 0) {
			/* no message crosses between the directions: stage 3
			 * (the forward direction's last) sends nothing on, and
			 * stage 4 (the reverse one's first) receives no input */
			render(buf, sizeof buf, &s.ranks[3], 0);
			ck_assert_ptr_null(strstr(buf, "SEND_F3:"));
			ck_assert_ptr_null(strstr(buf, "RECV_F4:"));
			ck_assert_ptr_nonnull(strstr(buf, "F4:0 SEND_F4:0"));
			render(buf, sizeof buf, &s.ranks[0], 0);
			ck_assert_ptr_null(strstr(buf, "SEND_F7:"));
			ck_assert_ptr_null(strstr(buf, "RECV_F0:"));
		}
		ppcc_stage_cost c[16];
		for (int st = 0; st < 2 * p; st++)
			c[st] = (ppcc_stage_cost){.fwd_ms = 1, .bwd_ms = 2,
						  .bwd_input_ms = 1,
						  .bwd_weight_ms = 1};
		ppcc_estimate e;
		ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
		ck_assert_msg(e.step_ms == shapes[k][2], "p %d m %d: %g", p, m,
			      e.step_ms);
		ck_assert(isnan(ppcc_sched_bubble_ms(PPCC_SCHED_DUALPIPE, p, 2,
						     m, 1, 1, 1)));
		ppcc_arena_free(a);
	}
	ck_assert_int_eq(d.errors, 0);
}
END_TEST

/* DualPipe's constraints, dualpipe.py's step() (3da1bbe, lines 332-333):
 * an even p, an even m of at least 2p, and 2 chunks; refused with their
 * text and by the build. */
START_TEST(dualpipe_constraints)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	char text[1024] = "";
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_DUALPIPE, 4, 2, 9, 0),
			 PPCC_EINPUT);
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_DUALPIPE, 4, 2, 6, 0),
			 PPCC_EINPUT);
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_DUALPIPE, 3, 2, 8, 0),
			 PPCC_EINPUT);
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_DUALPIPE, 4, 1, 8, 0),
			 PPCC_EINPUT);
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_DUALPIPE, 4, 2, 10, 0), 0);
	ck_assert_int_eq(ppcc_sched_check(PPCC_SCHED_DUALPIPE, 3, 1, 5, 0,
					  append_complaint, text), 3);
	ck_assert_str_eq(text, "2: the dualpipe schedule needs exactly 2 "
			 "chunks per rank; chunks is 1\n"
			 "1: the dualpipe schedule needs an even number of "
			 "ranks (half of them start each direction); stages "
			 "is 3\n"
			 "3: the dualpipe schedule needs an even number of "
			 "microbatches, at least 2 x 3 = 6 for 3 ranks (half "
			 "enter from each end); microbatches is 5\n");
	ppcc_arena_free(a);
}
END_TEST

/* Every schedule the generator accepts over the sweep passes the
 * validator; and it accepts exactly the documented parameter set. */
START_TEST(every_generated_schedule_validates)
{
	ppcc_diag d = {no_diag, NULL, 0, 0};
	int built = 0;
	for (int kind = 0; kind < PPCC_SCHED_COUNT; kind++)
		for (int p = 1; p <= 8; p++)
			for (int v = 1; v <= 4; v++)
				for (int m = 1; m <= 24; m++)
					for (int g = 0; g <= m + 1;
					     g = kind == PPCC_SCHED_INTERLEAVED ||
						 kind == PPCC_SCHED_COMBINED_1F1B ||
						 g > 0 ? g + 1 : m + 1) {
						int G = g == 0 ? p : g;
						int rounds = m / p > 1 ? m / p : 1;
						int ok;
						switch (kind) {
						case PPCC_SCHED_INTERLEAVED:
							ok = v >= 2 && G >= p && G <= m &&
							     (m % G == 0 || m % G >= p);
							break;
						case PPCC_SCHED_ZB_INTERLEAVED:
							ok = v >= 2 && m % rounds == 0;
							break;
						case PPCC_SCHED_ZB_V:
							ok = v == 2;
							break;
						case PPCC_SCHED_DUALPIPE_V:
							ok = v == 2 && m >= 2 * p;
							break;
						case PPCC_SCHED_DUALPIPE:
							ok = v == 2 && p % 2 == 0 &&
							     m % 2 == 0 && m >= 2 * p;
							break;
						case PPCC_SCHED_COMBINED_1F1B:
							ok = p == 1 ? v == 1
							     : v >= 2 && G >= p && G <= m &&
							       (m % G == 0 || m % G >= p);
							break;
						default:
							ok = v == 1; /* G ignored */
						}
						ppcc_arena *a = ppcc_arena_new();
						ppcc_schedule s;
						int err = build(&s, a, kind, p, v, m, g);
						ck_assert_msg(err == (ok ? 0 : PPCC_EINPUT),
							      "kind %d p%d v%d m%d g%d: %d",
							      kind, p, v, m, g, err);
						if (err == 0) {
							ck_assert_int_eq(ppcc_schedule_validate(&s, &d, NULL, 10), 0);
							built++;
						}
						ppcc_arena_free(a);
					}
	ck_assert_int_eq(d.errors, 0);
	ck_assert_int_gt(built, 3000);
}
END_TEST

/* Per rank: m*v forwards and m*v backwards (or m*v I and m*v W for the
 * zero-bubble kinds); across ranks 4*m sends and receives for each
 * stage boundary between two ranks (S-1 of them when looped and p > 1,
 * S-2 on the V, none when p == 1); peers are the ranks of the
 * neighbouring stages and bytes those of the boundary. */
START_TEST(action_counts_peers_and_bytes)
{
	/* (DualPipeV and DualPipe mix B with I and W, and they and
	 * combined-1f1b add their pairs' markers: their counts are
	 * check_budget's action_count_is_what_the_schedule_holds and the hand
	 * traces dualpipe_v_p2_m4_hand_traced, dualpipe_p4_m8_reference_trace
	 * and combined_1f1b_orders_by_hand) */
	for (int kind = 0; kind < PPCC_SCHED_COUNT; kind++)
		for (int p = 1; p <= 6 && !ppcc_sched_kind(kind)->pairs; p++)
			for (int m = p; m <= 12; m++) {
				int v = kind == PPCC_SCHED_INTERLEAVED ||
						kind == PPCC_SCHED_ZB_INTERLEAVED ? 3
					: kind == PPCC_SCHED_ZB_V ? 2 : 1;
				int split = kind >= PPCC_SCHED_ZB_H1;
				int rounds = m / p > 1 ? m / p : 1;
				if (kind == PPCC_SCHED_ZB_INTERLEAVED && m % rounds)
					continue;
				int S = p * v;
				int crossing = p == 1 ? 0
					: kind == PPCC_SCHED_ZB_V ? S - 2 : S - 1;
				ppcc_arena *a = ppcc_arena_new();
				ppcc_schedule s;
				ck_assert_int_eq(build(&s, a, kind, p, v, m, m),
						 0);
				for (int st = 0; st < S; st++) {
					int want = kind == PPCC_SCHED_ZB_V && st >= p
						? 2 * p - 1 - st : st % p;
					ck_assert_int_eq(s.stages[st].rank, want);
				}
				ck_assert_int_eq(s.n_stages, S);
				ck_assert(s.fingerprint ==
					  ppcc_schedule_fingerprint(&s));
				long comm = 0;
				for (int r = 0; r < p; r++) {
					long count[PPCC_OP_COUNT] = {0};
					const ppcc_rank_schedule *rs = &s.ranks[r];
					for (int i = 0; i < rs->n_actions; i++) {
						const ppcc_action *x = &rs->actions[i];
						count[x->op]++;
						ck_assert_int_eq(s.stages[x->stage].rank, r);
						if (x->op < PPCC_OP_SEND_F) {
							ck_assert_int_eq(x->peer, -1);
							ck_assert(x->bytes == 0);
							continue;
						}
						int other = x->op == PPCC_OP_SEND_F ||
								    x->op == PPCC_OP_RECV_B
							    ? x->stage + 1 : x->stage - 1;
						ck_assert_int_eq(x->peer, s.stages[other].rank);
						int boundary = other > x->stage ? other
									       : x->stage;
						ck_assert(x->bytes == 1000 + (uint64_t)boundary);
					}
					ck_assert_int_eq(count[PPCC_OP_F], m * v);
					ck_assert_int_eq(count[PPCC_OP_B], split ? 0 : m * v);
					ck_assert_int_eq(count[PPCC_OP_I], split ? m * v : 0);
					ck_assert_int_eq(count[PPCC_OP_W], split ? m * v : 0);
					comm += count[PPCC_OP_SEND_F] + count[PPCC_OP_RECV_F] +
						count[PPCC_OP_SEND_B] + count[PPCC_OP_RECV_B];
				}
				ck_assert_int_eq(comm, 4L * m * crossing);
				ppcc_arena_free(a);
			}
}
END_TEST

/* 1F1B keeps at most min(p - r, m) microbatches in flight on rank r, and
 * reaches that bound; GPipe holds all m. */
START_TEST(onef1b_in_flight_bounded_by_p_minus_r)
{
	for (int p = 1; p <= 8; p++)
		for (int m = 1; m <= 24; m++) {
			for (int kind = PPCC_SCHED_GPIPE; kind <= PPCC_SCHED_1F1B; kind++) {
				ppcc_arena *a = ppcc_arena_new();
				ppcc_schedule s;
				ck_assert_int_eq(build(&s, a, kind, p, 1, m, 0), 0);
				for (int r = 0; r < p; r++) {
					int now = 0, peak = 0;
					const ppcc_rank_schedule *rs = &s.ranks[r];
					for (int i = 0; i < rs->n_actions; i++) {
						if (rs->actions[i].op == PPCC_OP_F && ++now > peak)
							peak = now;
						if (rs->actions[i].op == PPCC_OP_B)
							now--;
					}
					int want = kind == PPCC_SCHED_GPIPE ? m
						   : p - r < m ? p - r : m;
					ck_assert_msg(peak == want,
						      "kind %d p%d m%d rank %d: %d in flight",
						      kind, p, m, r, peak);
				}
				ppcc_arena_free(a);
			}
		}
}
END_TEST

/* Microbatches held between F and W: ZB-H1 at most p on every rank (the
 * paper's p M_B), reached on every rank once m >= p; ZB-H2 at most 2p-1
 * ((2p-1) M_B), reached on rank 0 once m >= 2p-1; ZB-V at most 2p stage
 * activations of half a rank's layers each (p M_B). */
START_TEST(zero_bubble_in_flight_bounds)
{
	for (int p = 1; p <= 8; p++)
		for (int m = 1; m <= 24; m++)
			for (int kind = PPCC_SCHED_ZB_H1; kind <= PPCC_SCHED_ZB_V; kind++) {
				int v = kind == PPCC_SCHED_ZB_V ? 2 : 1;
				ppcc_arena *a = ppcc_arena_new();
				ppcc_schedule s;
				ck_assert_int_eq(build(&s, a, kind, p, v, m, 0), 0);
				int bound = kind == PPCC_SCHED_ZB_H1 ? p
					: kind == PPCC_SCHED_ZB_H2 ? 2 * p - 1 : 2 * p;
				for (int r = 0; r < p; r++) {
					int now = 0, peak = 0;
					const ppcc_rank_schedule *rs = &s.ranks[r];
					for (int i = 0; i < rs->n_actions; i++) {
						if (rs->actions[i].op == PPCC_OP_F && ++now > peak)
							peak = now;
						if (rs->actions[i].op == PPCC_OP_W)
							now--;
					}
					ck_assert_msg(peak <= bound, "%s p%d m%d rank %d: %d in flight",
						      ppcc_schedule_kind_name(kind), p, m, r, peak);
					if ((kind == PPCC_SCHED_ZB_H1 && m >= p) ||
					    (kind == PPCC_SCHED_ZB_H2 && r == 0 && m >= 2 * p - 1))
						ck_assert_msg(peak == bound, "%s p%d m%d rank %d: %d in flight",
							      ppcc_schedule_kind_name(kind), p, m, r, peak);
				}
				ppcc_arena_free(a);
			}
}
END_TEST

START_TEST(build_rejects_what_it_does_not_make)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	ppcc_stage_info st[MAX_STAGES];
	stages_fill(st, MAX_STAGES);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_1F1B, 0, 1, 4, 0, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_1F1B, 4, 1, 0, 0, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_1F1B, 4, 2, 4, 0, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_GPIPE, 4, 0, 4, 0, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_COUNT, 4, 1, 4, 0, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, -1, 4, 1, 4, 0, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_1F1B, 4, 1, 4, 0, NULL), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_1F1B, 4, 1, 4, -2, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_1F1B, 4, 1, 4, 3, st), 0);
	/* interleaved: v >= 2, p <= G <= m, m % G zero or at least p */
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_INTERLEAVED, 4, 1, 8, 0, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_INTERLEAVED, 4, 2, 8, 3, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_INTERLEAVED, 4, 2, 8, 9, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_INTERLEAVED, 4, 2, 3, 0, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_INTERLEAVED, 4, 2, 10, 0, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_INTERLEAVED, 4, 2, 8, -1, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_INTERLEAVED, 4, 2, 8, 5, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_INTERLEAVED, 4, 2, 12, 0, st), 0);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_INTERLEAVED, 4, 2, 14, 5, st), 0);
	/* zero bubble: ZB-H1/H2 one chunk, ZB-V two, zb-interleaved m a
	 * multiple of max(1, m / p) rounds */
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_ZB_H1, 4, 2, 8, 0, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_ZB_H2, 4, 2, 8, 0, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_ZB_V, 4, 1, 8, 0, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_ZB_V, 4, 3, 8, 0, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_ZB_V, 4, 2, 3, 0, st), 0);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_ZB_INTERLEAVED, 4, 1, 8, 0, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_ZB_INTERLEAVED, 4, 2, 9, 0, st), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_ZB_INTERLEAVED, 4, 2, 10, 0, st), 0);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_ZB_INTERLEAVED, 4, 2, 3, 0, st), 0);
	/* a rank's list longer than INT32_MAX actions */
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_1F1B, 4, 1, 400000000, 0, st), PPCC_EINPUT);
	ppcc_arena_free(a);
}
END_TEST

/* The copied stage table takes stage, rank and chunk from the index and
 * keeps the caller's layers and bytes; the caller's array is not kept. */
START_TEST(build_copies_stage_table)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	ppcc_stage_info st[6];
	stages_fill(st, 6);
	for (int i = 0; i < 6; i++) {
		st[i].stage = st[i].rank = st[i].chunk = 99;
		st[i].first_layer = 10 * i;
		st[i].last_layer = 10 * i + 9;
	}
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_INTERLEAVED, 3, 2, 6, 0, st), 0);
	ck_assert_ptr_ne(s.stages, st);
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(s.stages[i].stage, i);
		ck_assert_int_eq(s.stages[i].rank, i % 3);
		ck_assert_int_eq(s.stages[i].chunk, i / 3);
		ck_assert_int_eq(s.stages[i].first_layer, 10 * i);
		ck_assert_int_eq(s.stages[i].last_layer, 10 * i + 9);
		ck_assert(s.stages[i].recv_bytes == st[i].recv_bytes);
		ck_assert(s.stages[i].send_bytes == st[i].send_bytes);
	}
	ck_assert_int_eq(s.version, 1); /* no pairs: the first format */
	ck_assert_int_eq(s.kind, PPCC_SCHED_INTERLEAVED);
	ck_assert_int_eq(s.n_ranks, 3);
	ck_assert_int_eq(s.n_chunks, 2);
	ck_assert_int_eq(s.n_microbatches, 6);
	ppcc_arena_free(a);
}
END_TEST

/* One rank: no communication, and chunks chain on the rank itself. */
START_TEST(single_rank_has_no_communication)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	char buf[1024];
	ck_assert_int_eq(build(&s, a, PPCC_SCHED_INTERLEAVED, 1, 2, 2, 0), 0);
	/* table (0,0) (0,1) (1,0) (1,1); warm-up (2-1)*1 = 1 */
	render(buf, sizeof buf, &s.ranks[0], 0);
	ck_assert_str_eq(buf, "F0:0 F1:0 B1:0 F0:1 B0:0 F1:1 B1:1 B0:1");
	ppcc_arena_free(a);
}
END_TEST

/* Build, validate and simulate with the nth allocation failing, for
 * every n until a run needs no failure: each call returns 0 or
 * PPCC_ENOMEM, and every block is freed. */
START_TEST(allocation_failures_return_enomem_and_free_all)
{
	int enomem_seen = 0, clean_run = 0;
	long live = ppcc_alloc_live();
	for (int n = 1; n <= 200 && !clean_run; n++) {
		ppcc_alloc_fail_at(n);
		int err = PPCC_ENOMEM;
		ppcc_arena *a = ppcc_arena_new();
		if (a) {
			ppcc_schedule s;
			ppcc_stage_cost c[6] = {{0}};
			err = build(&s, a, PPCC_SCHED_INTERLEAVED, 3, 2, 6, 0);
			if (err == 0) {
				ppcc_diag d = {NULL, NULL, 0, 0};
				err = ppcc_schedule_validate(&s, &d, NULL, 0);
			}
			if (err == 0) {
				ppcc_estimate e;
				err = ppcc_simulate(&e, a, &s, c);
			}
			ppcc_arena_free(a);
		}
		ppcc_alloc_fail_at(0);
		ck_assert_msg(err == 0 || err == PPCC_ENOMEM,
			      "failing allocation %d: status %d", n, err);
		ck_assert_int_eq(ppcc_alloc_live(), live);
		enomem_seen += err == PPCC_ENOMEM;
		clean_run = err == 0;
	}
	ck_assert(clean_run);
	ck_assert_int_gt(enomem_seen, 5);
}
END_TEST

/* The rank that halves lists by their actions, as a table. */
START_TEST(ranks_halved_by_their_actions)
{
	static const struct { int p; int64_t n[4]; int mid; } rows[] = {
		{2, {5, 5}, 1}, {4, {1, 1, 1, 1}, 2}, {3, {10, 1, 1}, 1},
		{3, {1, 1, 10}, 2}, {4, {3, 3, 1, 1}, 1}, {2, {0, 7}, 1},
		{3, {0, 0, 0}, 2},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		ck_assert_int_eq(ppcc_sched_middle_rank(rows[i].n, rows[i].p), rows[i].mid);
}
END_TEST

/* With a second thread, the ranks are lowered half on each (lower.c,
 * lower_part): every kind's lists, stage table and version are those one
 * thread writes, byte for byte, the threshold lowered so that every
 * schedule takes that path. */
START_TEST(lowering_on_two_threads_writes_the_same_lists)
{
	ppcc_probe probe = {.build_touch_bytes = 1};
	int compared = 0, paired = 0, halved = 0;
	for (int kind = 0; kind < PPCC_SCHED_COUNT; kind++)
		for (int p = 1; p <= 8; p++)
			for (int v = 1; v <= 3; v++)
				for (int m = 1; m <= 20; m += 1 + m / 4) {
					ppcc_stage_info st[MAX_STAGES];
					stages_fill(st, p * v);
					ppcc_arena *a = ppcc_arena_new(), *b = ppcc_arena_new();
					ppcc_schedule one, two;
					int e1 = ppcc_schedule_build_unsealed_on(&one, a, kind, p, v, m, 0, st, 1, &probe);
					int e2 = ppcc_schedule_build_unsealed_on(&two, b, kind, p, v, m, 0, st, 2, &probe);
					ck_assert_int_eq(e1, e2);
					if (e1 == 0) {
						ck_assert_int_eq(one.version, two.version);
						ck_assert_int_eq(one.n_stages, two.n_stages);
						ck_assert(memcmp(one.stages, two.stages,
								 (size_t)one.n_stages * sizeof *one.stages) == 0);
						for (int r = 0; r < p; r++) {
							const ppcc_rank_schedule *x = &one.ranks[r], *y = &two.ranks[r];
							ck_assert_int_eq(x->rank, y->rank);
							ck_assert_int_eq(x->n_actions, y->n_actions);
							ck_assert_msg(memcmp(x->actions, y->actions,
									     (size_t)x->n_actions * sizeof *x->actions) == 0,
								      "kind %d p%d v%d m%d rank %d", kind, p, v, m, r);
						}
						compared++;
						halved += p > 1;
						paired += one.version == 2;
					}
					ppcc_arena_free(a);
					ppcc_arena_free(b);
				}
	/* every build of more than one rank on two threads took them */
	ck_assert_int_eq(probe.lower_halves, halved);
	ck_assert_int_gt(compared, 500);
	ck_assert_int_gt(paired, 20); /* DualPipeV's pairs among them */
}
END_TEST

Suite *suite_schedule(void)
{
	Suite *s = tu_suite("schedule", "schedule", 120, (const TTest *const[]){
		onef1b_p4_m8_rank0_and_rank3_exact,
		gpipe_p2_m3_exact,
		zb_h1_p3_m4_hand_traced,
		zb_h2_p2_m4_hand_traced,
		zb_v_p2_m4_hand_traced,
		zb_interleaved_p2_v2_m4_hand_traced,
		dualpipe_v_p2_m4_hand_traced,
		combined_1f1b_orders_by_hand,
		dualpipe_v_constraints,
		dualpipe_p4_m8_reference_trace,
		dualpipe_constraints,
		zero_bubble_in_flight_bounds,
		interleaved_p2_v2_m4_matches_megatron_order,
		warmup_counts_follow_megatron,
		every_generated_schedule_validates,
		action_counts_peers_and_bytes,
		onef1b_in_flight_bounded_by_p_minus_r,
		build_rejects_what_it_does_not_make,
		build_copies_stage_table,
		single_rank_has_no_communication,
		allocation_failures_return_enomem_and_free_all,
		NULL});
	tu_tcase(s, "threads", 120, (const TTest *const[]){
		lowering_on_two_threads_writes_the_same_lists,
		ranks_halved_by_their_actions,
		NULL});
	return s;
}
