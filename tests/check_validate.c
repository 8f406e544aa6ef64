/* Tests of validate.c: each kind of broken schedule is rejected with a
 * message that says where and what, and correct schedules pass. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppcc.h"
#include "testutil.h"


Suite *suite_validate(void);

/* ---- collecting diagnostics ---- */

typedef struct collected {
	char text[65536];
	size_t len;
	int notes;
	const ppcc_loc *last_loc;
	int last_line;
	const char *last_file;
} collected;

static void collect(ppcc_severity sev, const ppcc_loc *loc, const char *msg,
		    void *user)
{
	collected *c = user;
	if (sev == PPCC_SEV_NOTE)
		c->notes++;
	c->last_loc = loc;
	c->last_file = loc ? loc->file : NULL;
	c->last_line = loc ? loc->line : -1;
	int n = snprintf(c->text + c->len, sizeof c->text - c->len, "%s\n",
			 msg);
	if (n > 0 && (size_t)n < sizeof c->text - c->len)
		c->len += (size_t)n;
}

typedef struct run {
	collected col;
	ppcc_diag d;
	int status;
} run;

static run *validate(const ppcc_schedule *s, int max_errors)
{
	run *r = calloc(1, sizeof *r);
	r->d.fn = collect;
	r->d.user = &r->col;
	r->status = ppcc_schedule_validate(s, &r->d, "sched.json", max_errors);
	return r;
}

#define ck_assert_reports(r, want)                                            \
	ck_assert_msg(strstr((r)->col.text, (want)) != NULL,                  \
		      "missing \"%s\" in:\n%s", (want), (r)->col.text)

/* ---- a mutable copy of a generated schedule ---- */

typedef struct mut {
	ppcc_arena *a;
	ppcc_schedule s;
	ppcc_stage_info *stages;
	ppcc_rank_schedule *ranks;
	ppcc_action **acts; /* each with room for 2*n + 8 actions */
} mut;

static void mut_make(mut *m, int kind, int p, int v, int n_mb)
{
	ppcc_stage_info st[64];
	memset(st, 0, sizeof st);
	for (int s = 0; s < p * v; s++) {
		st[s].recv_bytes = s > 0 ? 1000 + (uint64_t)s : 0;
		st[s].send_bytes = s < p * v - 1 ? 1000 + (uint64_t)s + 1 : 0;
	}
	m->a = ppcc_arena_new();
	ck_assert_int_eq(ppcc_schedule_build(&m->s, m->a, kind, p, v, n_mb, 0, st), 0);
	m->stages = ppcc_arena_alloc(m->a, (size_t)(p * v), sizeof *m->stages);
	memcpy(m->stages, m->s.stages, sizeof *m->stages * (size_t)(p * v));
	m->ranks = ppcc_arena_alloc(m->a, (size_t)p, sizeof *m->ranks);
	m->acts = ppcc_arena_alloc(m->a, (size_t)p, sizeof *m->acts);
	for (int r = 0; r < p; r++) {
		int n = m->s.ranks[r].n_actions;
		m->acts[r] = ppcc_arena_alloc(m->a, (size_t)(2 * n + 8), sizeof(ppcc_action));
		memcpy(m->acts[r], m->s.ranks[r].actions, sizeof(ppcc_action) * (size_t)n);
		m->ranks[r] = m->s.ranks[r];
		m->ranks[r].actions = m->acts[r];
	}
	m->s.stages = m->stages;
	m->s.ranks = m->ranks;
}

/* The same with the data-parallel reductions placed: each stage s has
 * 2500 - 1500 * (s % 2) gradient bytes in buckets of 1000 (stage 0:
 * 1000, 1000 and 500 bytes; stage 1: 1000). */
static void mut_make_dp(mut *m, int kind, int p, int v, int n_mb)
{
	mut_make(m, kind, p, v, n_mb);
	double g[64];
	for (int s = 0; s < p * v; s++)
		g[s] = s % 2 ? 1000 : 2500;
	ck_assert_int_eq(ppcc_schedule_place_reductions(&m->s, m->a, g, 1000), 0);
	for (int r = 0; r < p; r++) {
		int n = m->s.ranks[r].n_actions;
		m->acts[r] = ppcc_arena_alloc(m->a, (size_t)(2 * n + 8), sizeof(ppcc_action));
		memcpy(m->acts[r], m->s.ranks[r].actions, sizeof(ppcc_action) * (size_t)n);
		m->ranks[r] = m->s.ranks[r];
		m->ranks[r].actions = m->acts[r];
	}
	m->s.ranks = m->ranks;
	m->s.fingerprint = ppcc_schedule_fingerprint(&m->s);
}

/* mut_make_dp under ZeRO stage `zero`: gradients as there, parameters
 * half their bytes (16-bit weights, 4-byte gradients). */
static void mut_make_zero(mut *m, int kind, int p, int v, int n_mb, int zero)
{
	mut_make(m, kind, p, v, n_mb);
	double g[64];
	for (int s = 0; s < p * v; s++)
		g[s] = s % 2 ? 1000 : 2500;
	ck_assert_int_eq(ppcc_schedule_place_collectives(&m->s, m->a, g, 1000,
							 zero, 0.5), 0);
	for (int r = 0; r < p; r++) {
		int n = m->s.ranks[r].n_actions;
		m->acts[r] = ppcc_arena_alloc(m->a, (size_t)(2 * n + 8), sizeof(ppcc_action));
		memcpy(m->acts[r], m->s.ranks[r].actions, sizeof(ppcc_action) * (size_t)n);
		m->ranks[r] = m->s.ranks[r];
		m->ranks[r].actions = m->acts[r];
	}
	m->s.ranks = m->ranks;
	m->s.fingerprint = ppcc_schedule_fingerprint(&m->s);
}

static void mut_seal(mut *m)
{
	m->s.fingerprint = ppcc_schedule_fingerprint(&m->s);
}

static int mut_find(const mut *m, int r, int op, int stage, int mb)
{
	for (int i = 0; i < m->ranks[r].n_actions; i++) {
		const ppcc_action *a = &m->acts[r][i];
		if (a->op == op && a->stage == stage && a->mb == mb)
			return i;
	}
	ck_abort_msg("no %s %d:%d on rank %d", ppcc_op_name(op), stage, mb, r);
	return -1;
}

static void mut_delete(mut *m, int r, int i)
{
	int n = m->ranks[r].n_actions;
	memmove(&m->acts[r][i], &m->acts[r][i + 1], sizeof(ppcc_action) * (size_t)(n - i - 1));
	m->ranks[r].n_actions--;
}

static void mut_insert(mut *m, int r, int i, ppcc_action a)
{
	int n = m->ranks[r].n_actions;
	memmove(&m->acts[r][i + 1], &m->acts[r][i], sizeof(ppcc_action) * (size_t)(n - i));
	m->acts[r][i] = a;
	m->ranks[r].n_actions++;
}

static void mut_swap(mut *m, int r, int i, int j)
{
	ppcc_action t = m->acts[r][i];
	m->acts[r][i] = m->acts[r][j];
	m->acts[r][j] = t;
}

static void mut_free(mut *m)
{
	ppcc_arena_free(m->a);
}

static char want[512];
#define WANT(...) (snprintf(want, sizeof want, __VA_ARGS__), want)

/* ---- tests ---- */

START_TEST(unmutated_schedules_pass_silently)
{
	static const int cases[][4] = {
		{PPCC_SCHED_GPIPE, 3, 1, 5}, {PPCC_SCHED_1F1B, 4, 1, 8},
		{PPCC_SCHED_1F1B, 1, 1, 3},  {PPCC_SCHED_INTERLEAVED, 4, 3, 8},
		{PPCC_SCHED_INTERLEAVED, 1, 2, 3},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		mut m;
		mut_make(&m, cases[k][0], cases[k][1], cases[k][2], cases[k][3]);
		run *r = validate(&m.s, 0);
		ck_assert_msg(r->status == 0, "%s", r->col.text);
		ck_assert_int_eq(r->d.errors + r->d.warnings, 0);
		ck_assert_int_eq(r->col.len, 0);
		free(r);
		mut_free(&m);
	}
}
END_TEST

START_TEST(dropped_receive_names_the_orphan_send)
{
	mut m;
	mut_make(&m, PPCC_SCHED_1F1B, 4, 1, 8);
	mut_delete(&m, 2, mut_find(&m, 2, PPCC_OP_RECV_F, 2, 3));
	mut_seal(&m);
	run *r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 1, action %d (SEND_F stage 1 mb 3): no matching RECV_F on rank 2",
				  mut_find(&m, 1, PPCC_OP_SEND_F, 1, 3)));
	ck_assert_int_eq(r->d.errors, 1);
	free(r);
	mut_free(&m);
}
END_TEST

START_TEST(dropped_send_names_the_waiting_receive)
{
	mut m;
	mut_make(&m, PPCC_SCHED_1F1B, 4, 1, 8);
	mut_delete(&m, 1, mut_find(&m, 1, PPCC_OP_SEND_F, 1, 3));
	mut_seal(&m);
	run *r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 2, action %d (RECV_F stage 2 mb 3): no matching SEND_F from rank 1",
				  mut_find(&m, 2, PPCC_OP_RECV_F, 2, 3)));
	ck_assert_int_eq(r->d.errors, 1);
	free(r);
	mut_free(&m);
}
END_TEST

/* A cross-rank dependency with neither SEND nor RECV. */
START_TEST(missing_transfer_names_the_compute_that_needs_it)
{
	mut m;
	mut_make(&m, PPCC_SCHED_1F1B, 4, 1, 8);
	mut_delete(&m, 1, mut_find(&m, 1, PPCC_OP_SEND_F, 1, 3));
	mut_delete(&m, 2, mut_find(&m, 2, PPCC_OP_RECV_F, 2, 3));
	mut_delete(&m, 3, mut_find(&m, 3, PPCC_OP_SEND_B, 3, 6));
	mut_delete(&m, 2, mut_find(&m, 2, PPCC_OP_RECV_B, 2, 6));
	mut_seal(&m);
	run *r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 2, action %d (F stage 2 mb 3): its input from stage 1 on rank 1 is never received (no RECV_F, no SEND_F)",
				  mut_find(&m, 2, PPCC_OP_F, 2, 3)));
	ck_assert_reports(r, WANT("rank 2, action %d (B stage 2 mb 6): its output gradient from stage 3 on rank 3 is never received (no RECV_B, no SEND_B)",
				  mut_find(&m, 2, PPCC_OP_B, 2, 6)));
	ck_assert_int_eq(r->d.errors, 2);
	free(r);
	mut_free(&m);
}
END_TEST

/* Each order rule of a rank's list whose breach phase 2 must notice for
 * phase 4 to run: a receive after the compute that needs it (forward and
 * backward) and SEND_B before its backward, each the only change to a
 * valid 1F1B schedule, each reported once at the action that comes too
 * early. */
START_TEST(receives_and_sends_after_their_compute_are_misordered)
{
	static const struct {
		int op, other; /* swapped with the action after or before */
		const char *want;
	} cases[] = {
		{PPCC_OP_RECV_F, PPCC_OP_F,
		 "rank 1, action %d (F stage 1 mb 3): its input is received later (RECV_F at action %d)"},
		{PPCC_OP_RECV_B, PPCC_OP_B,
		 "rank 1, action %d (B stage 1 mb 3): its output gradient is received later (RECV_B at action %d)"},
		{PPCC_OP_SEND_B, PPCC_OP_B,
		 "rank 1, action %d (SEND_B stage 1 mb 3): sends before its backward has run (action %d)"},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		mut m;
		mut_make(&m, PPCC_SCHED_1F1B, 4, 1, 8);
		int i = mut_find(&m, 1, cases[k].op, 1, 3);
		int j = mut_find(&m, 1, cases[k].other, 1, 3);
		ck_assert_int_eq(j - i, cases[k].op == PPCC_OP_SEND_B ? -1 : 1);
		mut_swap(&m, 1, i, j);
		mut_seal(&m);
		run *r = validate(&m.s, 0);
		ck_assert_int_eq(r->status, PPCC_EINPUT);
		ck_assert_reports(r, WANT(cases[k].want, i < j ? i : j, i < j ? j : i));
		ck_assert_int_eq(r->d.errors, 1);
		free(r);
		mut_free(&m);
	}
}
END_TEST

START_TEST(swapped_sends_are_misordered)
{
	mut m;
	mut_make(&m, PPCC_SCHED_1F1B, 4, 1, 8);
	/* rank 0: F0:0 SEND_F0:0 F0:1 SEND_F0:1 -> the second send first */
	mut_swap(&m, 0, 1, 3);
	mut_seal(&m);
	run *r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "rank 0, action 1 (SEND_F stage 0 mb 1): sends before its forward has run (F at action 2)");
	ck_assert_int_eq(r->d.errors, 1);
	free(r);
	mut_free(&m);
}
END_TEST

/* p = 2, m = 2, rank 0: F0:0 SEND_F0:0 F0:1 SEND_F0:1 RECV_B0:0 B0:0 ...
 * Swapping the first send with the first receive keeps every local order
 * but rank 0 now waits for a gradient that needs its activation. */
START_TEST(swapped_send_and_receive_deadlock_in_dry_run)
{
	mut m;
	mut_make(&m, PPCC_SCHED_1F1B, 2, 1, 2);
	mut_swap(&m, 0, 1, 4);
	mut_seal(&m);
	run *r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_str_eq(r->col.text,
		"dry run: deadlock; rank 0 waits at action 1 (RECV_B stage 0 mb 0), "
		"rank 1 waits at action 0 (RECV_F stage 1 mb 0)\n");
	free(r);
	mut_free(&m);
}
END_TEST

/* A send may move later, as long as nothing waits on it in between. */
START_TEST(delayed_send_without_cycle_passes)
{
	mut m;
	mut_make(&m, PPCC_SCHED_1F1B, 2, 1, 2);
	/* rank 1: RECV_F1:0 F1:0 B1:0 SEND_B1:0 RECV_F1:1 ... */
	mut_swap(&m, 1, 3, 4);
	mut_seal(&m);
	run *r = validate(&m.s, 0);
	ck_assert_msg(r->status == 0, "%s", r->col.text);
	free(r);
	mut_free(&m);
}
END_TEST

START_TEST(duplicated_microbatch_is_counted)
{
	mut m;
	mut_make(&m, PPCC_SCHED_1F1B, 4, 1, 8);
	int first = mut_find(&m, 1, PPCC_OP_F, 1, 4);
	int dup = mut_find(&m, 1, PPCC_OP_F, 1, 5);
	m.acts[1][dup].mb = 4;
	mut_seal(&m);
	run *r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("stage 1 microbatch 4: 2 forwards (rank 1, actions %d and %d)", first, dup));
	ck_assert_reports(r, "stage 1 microbatch 5: no forward (rank 1)");
	free(r);
	mut_free(&m);
}
END_TEST

START_TEST(wrong_peer_is_named)
{
	mut m;
	mut_make(&m, PPCC_SCHED_1F1B, 4, 1, 8);
	int i = mut_find(&m, 1, PPCC_OP_SEND_F, 1, 2);
	m.acts[1][i].peer = 3;
	int j = mut_find(&m, 2, PPCC_OP_RECV_B, 2, 5);
	m.acts[2][j].peer = 2;
	mut_seal(&m);
	run *r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 1, action %d (SEND_F stage 1 mb 2): peer 3, but stage 2 runs on rank 2", i));
	ck_assert_reports(r, WANT("rank 2, action %d (RECV_B stage 2 mb 5): peer is the rank itself; stage 3 runs on rank 3", j));
	ck_assert_int_eq(r->d.errors, 2);
	free(r);
	mut_free(&m);
}
END_TEST

START_TEST(wrong_bytes_are_named)
{
	mut m;
	mut_make(&m, PPCC_SCHED_1F1B, 4, 1, 8);
	int i = mut_find(&m, 2, PPCC_OP_RECV_F, 2, 2);
	m.acts[2][i].bytes++;
	mut_seal(&m);
	run *r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 2, action %d (RECV_F stage 2 mb 2): 1003 bytes, but the matching SEND_F (rank 1, action %d) sends 1002",
				  i, mut_find(&m, 1, PPCC_OP_SEND_F, 1, 2)));
	ck_assert_int_eq(r->d.errors, 1);
	free(r);
	mut_free(&m);
}
END_TEST

START_TEST(backward_before_forward_is_named)
{
	mut m;
	mut_make(&m, PPCC_SCHED_1F1B, 4, 1, 8);
	/* rank 3: RECV_F3:0 F3:0 B3:0 SEND_B3:0 -> B before F */
	mut_swap(&m, 3, 1, 2);
	mut_seal(&m);
	run *r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_str_eq(r->col.text, "rank 3, action 1 (B stage 3 mb 0): its forward has not run on this rank (F at action 2)\n");
	free(r);
	mut_free(&m);
}
END_TEST

START_TEST(fingerprint_mismatch_is_an_error)
{
	mut m;
	mut_make(&m, PPCC_SCHED_1F1B, 4, 1, 8);
	mut_seal(&m);
	m.s.fingerprint ^= 1;
	run *r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_int_eq(r->d.errors, 1);
	ck_assert_reports(r, "fingerprint mismatch");
	free(r);
	mut_free(&m);
	/* the same contents with the fingerprint left stale after a change */
	mut_make(&m, PPCC_SCHED_1F1B, 4, 1, 8);
	m.stages[2].first_layer = 7;
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "fingerprint mismatch");
	free(r);
	mut_free(&m);
}
END_TEST

/* A schedule built unsealed has the lists ppcc_schedule_build makes and
 * no fingerprint; ppcc_schedule_validate_seal gives it exactly the
 * fingerprint of what it checked, which ppcc_schedule_validate then
 * accepts. */
START_TEST(seal_sets_the_fingerprint_of_what_it_checked)
{
	static const int cases[][4] = {
		{PPCC_SCHED_GPIPE, 3, 1, 5}, {PPCC_SCHED_1F1B, 4, 1, 8},
		{PPCC_SCHED_1F1B, 1, 1, 3},  {PPCC_SCHED_INTERLEAVED, 4, 3, 8},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		mut m;
		mut_make(&m, cases[k][0], cases[k][1], cases[k][2], cases[k][3]);
		uint64_t want_fp = m.s.fingerprint;
		ppcc_schedule u;
		ck_assert_int_eq(ppcc_schedule_build_unsealed(&u, m.a, cases[k][0],
							      cases[k][1], cases[k][2],
							      cases[k][3], 0, m.stages), 0);
		ck_assert(u.fingerprint == 0);
		for (int r = 0; r < u.n_ranks; r++) {
			ck_assert_int_eq(u.ranks[r].n_actions, m.s.ranks[r].n_actions);
			ck_assert(memcmp(u.ranks[r].actions, m.s.ranks[r].actions,
					 sizeof(ppcc_action) *
						 (size_t)u.ranks[r].n_actions) == 0);
		}
		ppcc_diag quiet = {0};
		ck_assert_int_eq(ppcc_schedule_validate_seal(&u, &quiet, NULL, 0), 0);
		ck_assert(u.fingerprint == want_fp);
		ck_assert(u.fingerprint == ppcc_schedule_fingerprint(&u));
		run *r = validate(&u, 0);
		ck_assert_msg(r->status == 0, "%s", r->col.text);
		free(r);
		/* a change the fields allow still changes the seal */
		m.s.fingerprint = 0;
		m.stages[0].first_layer = 3;
		ck_assert_int_eq(ppcc_schedule_validate_seal(&m.s, &quiet, NULL, 0), 0);
		ck_assert(m.s.fingerprint != want_fp);
		ck_assert(m.s.fingerprint == ppcc_schedule_fingerprint(&m.s));
		mut_free(&m);
	}
}
END_TEST

/* A broken schedule is refused by the seal with the diagnostics of
 * ppcc_schedule_validate (less the fingerprint's) and stays unsealed. */
START_TEST(seal_refuses_a_broken_schedule_and_leaves_it_unsealed)
{
	mut m;
	mut_make(&m, PPCC_SCHED_1F1B, 4, 1, 8);
	mut_delete(&m, 2, mut_find(&m, 2, PPCC_OP_RECV_F, 2, 3));
	mut_seal(&m);
	run *plain = validate(&m.s, 0);
	ck_assert_int_eq(plain->status, PPCC_EINPUT);
	m.s.fingerprint = 0;
	run *r = calloc(1, sizeof *r);
	r->d.fn = collect;
	r->d.user = &r->col;
	r->status = ppcc_schedule_validate_seal(&m.s, &r->d, "sched.json", 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert(m.s.fingerprint == 0);
	ck_assert_str_eq(r->col.text, plain->col.text);
	ck_assert_reports(r, "rank 1, action");
	free(r);
	free(plain);
	mut_free(&m);
}
END_TEST

/* The run that ppcc_schedule_validate_seal_run makes in place of the dry
 * run: the simulation, counted. */
typedef struct sim_run_ctx {
	ppcc_arena *a;
	const ppcc_stage_cost *costs;
	ppcc_estimate est;
	int calls;
} sim_run_ctx;

static int simulate_run(const ppcc_schedule *s, void *user)
{
	sim_run_ctx *x = user;
	x->calls++;
	return ppcc_simulate_keep(&x->est, x->a, s, x->costs, PPCC_SIM_SEND_TIMES);
}

/* With the simulation as its run: a valid schedule is simulated once and
 * sealed as ppcc_schedule_validate_seal seals it, with the simulator's
 * own estimate; a deadlock (rank 0's first send swapped after its first
 * receive) fails the simulation and is reported by the dry run word for
 * word as without the run; a schedule whose fields are wrong is never
 * run. */
START_TEST(seal_run_simulates_in_place_of_the_dry_run)
{
	ppcc_stage_cost costs[4];
	memset(costs, 0, sizeof costs);
	for (int s = 0; s < 4; s++) {
		costs[s].fwd_ms = 1 + s;
		costs[s].bwd_ms = 2;
		costs[s].send_f_ms = costs[s].send_b_ms = 0.25;
		costs[s].stash_bytes = 100;
	}
	mut m;
	mut_make(&m, PPCC_SCHED_1F1B, 4, 1, 8);
	uint64_t want_fp = m.s.fingerprint;
	ppcc_estimate plain;
	ck_assert_int_eq(ppcc_simulate_keep(&plain, m.a, &m.s, costs,
					    PPCC_SIM_SEND_TIMES), 0);
	m.s.fingerprint = 0;
	sim_run_ctx x = {.a = m.a, .costs = costs};
	ppcc_diag quiet = {0};
	ck_assert_int_eq(ppcc_schedule_validate_seal_run(&m.s, &quiet, NULL, 0,
							 simulate_run, &x), 0);
	ck_assert_int_eq(x.calls, 1);
	ck_assert(m.s.fingerprint == want_fp);
	ck_assert(x.est.step_ms == plain.step_ms);
	ck_assert(x.est.peak_memory_bytes[0] == plain.peak_memory_bytes[0]);
	ck_assert(x.est.send_ms != NULL);
	mut_free(&m);

	mut_make(&m, PPCC_SCHED_1F1B, 2, 1, 2);
	mut_swap(&m, 0, 1, 4);
	mut_seal(&m);
	run *dry = validate(&m.s, 0);
	m.s.fingerprint = 0;
	run *r = calloc(1, sizeof *r);
	r->d.fn = collect;
	r->d.user = &r->col;
	x = (sim_run_ctx){.a = m.a, .costs = costs};
	r->status = ppcc_schedule_validate_seal_run(&m.s, &r->d, "sched.json", 0,
						    simulate_run, &x);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_int_eq(x.calls, 1);
	ck_assert(m.s.fingerprint == 0);
	ck_assert_str_eq(r->col.text,
		"dry run: deadlock; rank 0 waits at action 1 (RECV_B stage 0 mb 0), "
		"rank 1 waits at action 0 (RECV_F stage 1 mb 0)\n");
	ck_assert_str_eq(r->col.text, dry->col.text);
	free(r);
	free(dry);
	mut_free(&m);

	mut_make(&m, PPCC_SCHED_1F1B, 4, 1, 8);
	mut_delete(&m, 2, mut_find(&m, 2, PPCC_OP_RECV_F, 2, 3));
	m.s.fingerprint = 0;
	x = (sim_run_ctx){.a = m.a, .costs = costs};
	ck_assert_int_eq(ppcc_schedule_validate_seal_run(&m.s, &quiet, NULL, 0,
							 simulate_run, &x),
			 PPCC_EINPUT);
	ck_assert_int_eq(x.calls, 0);
	ck_assert(m.s.fingerprint == 0);
	mut_free(&m);
}
END_TEST

/* ppcc_schedule_validate_hashed compares the schedule's fingerprint with
 * the hash it is given, and names that hash when they differ. */
START_TEST(hashed_compares_with_the_hash_given)
{
	mut m;
	mut_make(&m, PPCC_SCHED_INTERLEAVED, 2, 2, 4);
	uint64_t h = ppcc_schedule_fingerprint(&m.s);
	ck_assert(h == m.s.fingerprint);
	run *r = calloc(1, sizeof *r);
	r->d.fn = collect;
	r->d.user = &r->col;
	ck_assert_int_eq(ppcc_schedule_validate_hashed(&m.s, h, &r->d, NULL, 0), 0);
	ck_assert_int_eq(r->d.errors, 0);
	ck_assert_int_eq(ppcc_schedule_validate_hashed(&m.s, h ^ 0x10, &r->d, NULL, 0),
			 PPCC_EINPUT);
	ck_assert_int_eq(r->d.errors, 1);
	char line[160];
	snprintf(line, sizeof line, "its contents hash to %016llx",
		 (unsigned long long)(h ^ 0x10));
	ck_assert_reports(r, line);
	free(r);
	mut_free(&m);
}
END_TEST

START_TEST(out_of_range_fields_are_named)
{
	mut m;
	mut_make(&m, PPCC_SCHED_1F1B, 4, 1, 8);
	m.acts[0][0].stage = 99;
	m.acts[1][3].mb = -1;
	m.acts[2][5].op = INT32_MIN;
	m.acts[3][1].stage = 2; /* a stage of another rank */
	m.acts[0][2].peer = 5;   /* F0:1: compute has peer -1 */
	m.acts[0][4].bytes = 8;  /* F0:2: compute has 0 bytes */
	mut_seal(&m);
	run *r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "rank 0, action 0 (F stage 99 mb 0): stage out of range [0, 4)");
	ck_assert_reports(r, WANT("rank 1, action 3 (%s stage 1 mb -1): microbatch out of range [0, 8)",
				  ppcc_op_name(m.s.ranks[1].actions[3].op)));
	ck_assert_reports(r, "rank 2, action 5: unknown op -2147483648");
	ck_assert_reports(r, "rank 3, action 1 (F stage 2 mb 0): stage 2 runs on rank 2");
	ck_assert_reports(r, "rank 0, action 2 (F stage 0 mb 1): peer 5 on a compute action (must be -1)");
	ck_assert_reports(r, "rank 0, action 4 (F stage 0 mb 2): 8 bytes on a compute action (must be 0)");
	free(r);
	mut_free(&m);
}
END_TEST

START_TEST(hostile_headers_are_rejected_without_reading_further)
{
	mut m;
	run *r;
	mut_make(&m, PPCC_SCHED_1F1B, 2, 1, 2);

	ppcc_schedule s = m.s;
	s.n_ranks = 0;
	s.n_stages = 0;
	r = validate(&s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "n_ranks is 0; it must be positive");
	free(r);

	s = m.s;
	s.n_stages = 3;
	r = validate(&s, 0);
	ck_assert_reports(r, "n_stages is 3, not n_ranks * n_chunks = 2");
	free(r);

	s = m.s;
	s.n_chunks = INT32_MAX;
	s.n_microbatches = INT32_MIN;
	r = validate(&s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "n_microbatches is -2147483648; it must be positive");
	free(r);

	/* asks for more than its actions can hold: nothing is allocated */
	s = m.s;
	s.n_microbatches = INT32_MAX;
	r = validate(&s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "16 actions cannot hold a forward and a backward of each of 2 stages x 2147483647 microbatches");
	free(r);

	/* every rank empty */
	m.ranks[0].n_actions = 0;
	m.ranks[1].n_actions = 0;
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "0 actions cannot hold");
	free(r);

	m.ranks[1].n_actions = -4;
	m.ranks[0].rank = 7;
	m.stages[1].rank = 0;
	m.s.version = 9;
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "schedule version 9, expected 1");
	ck_assert_reports(r, "rank 0 holds more than its 1 stages (stage 1 is one too many)");
	ck_assert_reports(r, "stage 1: chunk 0, but it is stage 1 of rank 0 in stage order");
	ck_assert_reports(r, "rank 1 holds 0 stages, not 1");
	ck_assert_reports(r, "rank table entry 0 says rank 7");
	ck_assert_reports(r, "rank 1: n_actions is -4");
	free(r);
	mut_free(&m);
}
END_TEST

START_TEST(max_errors_bounds_the_report)
{
	mut m;
	mut_make(&m, PPCC_SCHED_1F1B, 3, 1, 4);
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < m.ranks[r].n_actions; i++)
			m.acts[r][i].op = 42;
	mut_seal(&m);
	run *r = validate(&m.s, 3);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_int_eq(r->d.errors, 3);
	ck_assert_int_eq(r->col.notes, 1);
	ck_assert_reports(r, "further errors not reported");
	free(r);
	r = validate(&m.s, 0);
	int n = 0;
	for (int k = 0; k < 3; k++)
		n += m.ranks[k].n_actions;
	/* every action, then every (stage, mb) without forward or backward */
	ck_assert_int_eq(r->d.errors, n + 2 * 3 * 4);
	ck_assert_int_eq(r->col.notes, 0);
	free(r);
	mut_free(&m);
}
END_TEST

START_TEST(location_names_the_file_without_a_line)
{
	mut m;
	mut_make(&m, PPCC_SCHED_GPIPE, 2, 1, 2);
	m.s.fingerprint ^= 1;
	run *r = validate(&m.s, 0);
	ck_assert_ptr_nonnull(r->col.last_loc);
	ck_assert_str_eq(r->col.last_file, "sched.json");
	ck_assert_int_eq(r->col.last_line, 0);
	free(r);
	collected col = {0};
	ppcc_diag d = {collect, &col, 0, 0};
	ck_assert_int_eq(ppcc_schedule_validate(&m.s, &d, NULL, 0), PPCC_EINPUT);
	ck_assert_ptr_null(col.last_loc);
	mut_free(&m);
}
END_TEST

/* Split backward: B replaced by I then W is valid; W before I and I
 * without W are not. */
START_TEST(split_backward_rules)
{
	mut m;
	mut_make(&m, PPCC_SCHED_1F1B, 3, 1, 4);
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < m.ranks[r].n_actions; i++)
			if (m.acts[r][i].op == PPCC_OP_B) {
				m.acts[r][i].op = PPCC_OP_I;
				ppcc_action w = m.acts[r][i];
				w.op = PPCC_OP_W;
				/* W after the SEND_B that follows I, if any */
				int at = i + 1;
				if (at < m.ranks[r].n_actions &&
				    m.acts[r][at].op == PPCC_OP_SEND_B)
					at++;
				mut_insert(&m, r, at, w);
			}
	mut_seal(&m);
	run *r = validate(&m.s, 0);
	ck_assert_msg(r->status == 0, "%s", r->col.text);
	free(r);

	int i = mut_find(&m, 1, PPCC_OP_I, 1, 2);
	int w = mut_find(&m, 1, PPCC_OP_W, 1, 2);
	mut_swap(&m, 1, i, w);
	int w0 = mut_find(&m, 2, PPCC_OP_W, 2, 3);
	mut_delete(&m, 2, w0);
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 1, action %d (W stage 1 mb 2): its I has not run (I at action %d)", i, w));
	ck_assert_reports(r, WANT("stage 2 microbatch 3: I (rank 2, action %d) without W",
				  mut_find(&m, 2, PPCC_OP_I, 2, 3)));
	free(r);
	mut_free(&m);
}
END_TEST

/* DualPipeV as generated passes; its pairs' mutations are each named:
 * the pair's backward moved to a stage of another rank (the halves on two
 * ranks), a forward of stage 7 put on rank 1 (the stage on two ranks), a
 * W dropped, a marker whose forward is gone, and a pair in a schedule
 * that says version 1.  p = 4, m = 8: rank 0 holds stages 0 and 7, rank
 * 1 stages 1 and 6; rank 0's first pair is (F0:7; B7:3), its first I
 * is I7:0 and F7:1 runs alone. */
START_TEST(dualpipe_v_pairs_and_their_mutations)
{
	mut m;
	mut_make(&m, PPCC_SCHED_DUALPIPE_V, 4, 2, 8);
	ck_assert_int_eq(m.s.version, 2);
	run *r = validate(&m.s, 0);
	ck_assert_msg(r->status == 0, "%s", r->col.text);
	free(r);

	int pair = mut_find(&m, 0, PPCC_OP_OVERLAP_F_B, 0, 7);
	ck_assert_int_eq(m.acts[0][pair + 1].op, PPCC_OP_F);
	ck_assert_int_eq(m.acts[0][pair + 2].op, PPCC_OP_B);
	ck_assert_int_eq(m.acts[0][pair + 2].stage, 7);
	ck_assert_int_eq(m.acts[0][pair + 2].mb, 3);

	/* the halves on two ranks: the backward made one of stage 6 */
	m.acts[0][pair + 2].stage = 6;
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 0, action %d (OVERLAP_F_B stage 0 mb 7): "
				  "the pair's backward (action %d, stage 6) runs "
				  "on rank 1: both halves of a pair run on one rank",
				  pair, pair + 2));
	ck_assert_reports(r, WANT("rank 0, action %d (B stage 6 mb 3): stage 6 "
				  "runs on rank 1", pair + 2));
	free(r);
	m.acts[0][pair + 2].stage = 7;

	/* the marker's forward gone */
	ppcc_action f = m.acts[0][pair + 1];
	mut_delete(&m, 0, pair + 1);
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 0, action %d (OVERLAP_F_B stage 0 mb 7): "
				  "the next action is B stage 7 mb 3, not the "
				  "pair's forward F stage 0 mb 7", pair));
	ck_assert_reports(r, "stage 0 microbatch 7: no forward (rank 0)");
	free(r);
	mut_insert(&m, 0, pair + 1, f);

	/* version 1 cannot hold pairs */
	m.s.version = 1;
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 0, action %d (OVERLAP_F_B stage 0 mb 7): "
				  "overlapped pairs need schedule version 2; this "
				  "one is version 1", pair));
	free(r);
	m.s.version = 2;

	/* a W dropped */
	int w = mut_find(&m, 0, PPCC_OP_W, 7, 0);
	int i = mut_find(&m, 0, PPCC_OP_I, 7, 0);
	mut_delete(&m, 0, w);
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("stage 7 microbatch 0: I (rank 0, action %d) "
				  "without W", i));
	free(r);
	mut_free(&m);

	/* the stage on two ranks: a forward of stage 7 (rank 0's) on rank 1 */
	mut_make(&m, PPCC_SCHED_DUALPIPE_V, 4, 2, 8);
	int f7 = mut_find(&m, 0, PPCC_OP_F, 7, 1);
	ppcc_action moved = m.acts[0][f7];
	mut_delete(&m, 0, f7);
	mut_insert(&m, 1, 0, moved);
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "rank 1, action 0 (F stage 7 mb 1): stage 7 runs "
			  "on rank 0");
	free(r);
	mut_free(&m);
}
END_TEST

/* The zero-bubble kinds as generated pass (ZB-V on its V placement, where
 * stages p-1 and p share a rank and exchange nothing); the mutations
 * particular to them are each named: W before its I, a W dropped, an I
 * whose gradient send is dropped, a stage whose actions run on a rank the
 * stage table does not give it. */
START_TEST(zero_bubble_schedules_and_their_mutations)
{
	static const int kinds[] = {PPCC_SCHED_ZB_H1, PPCC_SCHED_ZB_H2,
				    PPCC_SCHED_ZB_V, PPCC_SCHED_ZB_INTERLEAVED};
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		mut mk;
		mut_make(&mk, kinds[k], 3, kinds[k] >= PPCC_SCHED_ZB_V ? 2 : 1, 6);
		run *rk = validate(&mk.s, 0);
		ck_assert_msg(rk->status == 0, "%s: %s",
			      ppcc_schedule_kind_name(kinds[k]), rk->col.text);
		free(rk);
		mut_free(&mk);
	}

	/* ZB-V, p = 3: rank 0 holds stages 0 and 5, rank 1 1 and 4, rank 2
	 * 2 and 3. */
	mut m;
	run *r;
	mut_make(&m, PPCC_SCHED_ZB_V, 3, 2, 6);
	ck_assert_int_eq(m.stages[3].rank, 2);
	ck_assert_int_eq(m.stages[3].chunk, 1);
	ck_assert_int_eq(m.stages[5].rank, 0);
	int i = mut_find(&m, 1, PPCC_OP_I, 4, 2);
	int w = mut_find(&m, 1, PPCC_OP_W, 4, 2);
	mut_swap(&m, 1, i, w);
	int w3 = mut_find(&m, 2, PPCC_OP_W, 3, 5);
	mut_delete(&m, 2, w3);
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 1, action %d (W stage 4 mb 2): its I has not run (I at action %d)", i, w));
	ck_assert_reports(r, WANT("stage 3 microbatch 5: I (rank 2, action %d) without W",
				  mut_find(&m, 2, PPCC_OP_I, 3, 5)));
	free(r);
	mut_free(&m);

	/* the gradient that I(4, 1) sends to stage 3 on rank 2, dropped */
	mut_make(&m, PPCC_SCHED_ZB_V, 3, 2, 6);
	int s = mut_find(&m, 1, PPCC_OP_SEND_B, 4, 1);
	mut_delete(&m, 1, s);
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 2, action %d (RECV_B stage 3 mb 1): no matching SEND_B from rank 1",
				  mut_find(&m, 2, PPCC_OP_RECV_B, 3, 1)));
	free(r);
	mut_free(&m);

	/* stage 1 (rank 1 in the table) with its forward of mb 0 on rank 0 */
	mut_make(&m, PPCC_SCHED_ZB_H1, 3, 1, 6);
	int f = mut_find(&m, 1, PPCC_OP_F, 1, 0);
	ppcc_action moved = m.acts[1][f];
	mut_delete(&m, 1, f);
	mut_insert(&m, 0, 0, moved);
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "rank 0, action 0 (F stage 1 mb 0): stage 1 runs on rank 1");
	ck_assert_reports(r, "stage 1 microbatch 0: no forward (rank 1)");
	free(r);
	/* and a table that gives two ranks' worth of stages to one */
	m.stages[1].rank = 0;
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "rank 0 holds more than its 1 stages (stage 1 is one too many)");
	ck_assert_reports(r, "rank 1 holds 0 stages, not 1");
	free(r);
	mut_free(&m);
}
END_TEST

/* With one rank, stages of two chunks meet on the same rank: a send
 * between them is an error, and chunk order is checked without one. */
START_TEST(single_rank_checks_local_chain)
{
	mut m;
	mut_make(&m, PPCC_SCHED_INTERLEAVED, 1, 2, 2);
	/* F0:0 F1:0 B1:0 F0:1 B0:0 F1:1 B1:1 B0:1 */
	ppcc_action send = {PPCC_OP_SEND_F, 0, 0, 0, 16};
	mut_insert(&m, 0, 1, send);
	mut_seal(&m);
	run *r = validate(&m.s, 0);
	ck_assert_reports(r, "rank 0, action 1 (SEND_F stage 0 mb 0): stages 0 and 1 both run on rank 0; there is nothing to communicate");
	ck_assert_int_eq(r->d.errors, 1);
	free(r);
	mut_delete(&m, 0, 1);
	mut_swap(&m, 0, 0, 1); /* F1:0 before F0:0 */
	mut_swap(&m, 0, 6, 7); /* B0:1 before B1:1 */
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_reports(r, "rank 0, action 0 (F stage 1 mb 0): the forward of stage 0 comes later (action 1)");
	ck_assert_reports(r, "rank 0, action 6 (B stage 0 mb 1): the backward of stage 1 comes later (action 7)");
	ck_assert_int_eq(r->d.errors, 2);
	free(r);
	mut_free(&m);
}
END_TEST

/* Random damage to random fields, with any int32 value: the validator
 * must not crash (the suite runs under ASan with SANITIZE=1), and when
 * it accepts, the simulator must finish the schedule. */
START_TEST(fuzzed_schedules_never_crash_and_accepted_ones_simulate)
{
	static const int32_t values[] = {
		0, 1, 2, 3, -1, -2, 7, 100, INT32_MAX, INT32_MIN, INT32_MAX - 1,
	};
	unsigned seed = 12345;
	int accepted = 0;
	for (int iter = 0; iter < 3000; iter++) {
		mut m;
		int kind = iter % PPCC_SCHED_COUNT;
		/* DualPipe needs an even p and m >= 2p */
		int p = kind == PPCC_SCHED_DUALPIPE ? 4 : 3;
		mut_make(&m, kind, p, ppcc_sched_kind_chunks(kind, p),
			 kind == PPCC_SCHED_DUALPIPE ? 8
			 : kind == PPCC_SCHED_DUALPIPE_V ? 6 : 3);
		int n_mut = 1 + (int)(rand_r(&seed) % 3);
		for (int k = 0; k < n_mut; k++) {
			int r = (int)(rand_r(&seed) % (unsigned)p);
			int n = m.ranks[r].n_actions;
			if (n == 0)
				continue;
			int i = (int)(rand_r(&seed) % (unsigned)n);
			int32_t val = rand_r(&seed) % 2
				? values[rand_r(&seed) % (sizeof values / sizeof values[0])]
				: (int32_t)rand_r(&seed) % 12 - 2;
			switch (rand_r(&seed) % 9) {
			case 0: m.acts[r][i].op = val; break;
			case 1: m.acts[r][i].stage = val; break;
			case 2: m.acts[r][i].mb = val; break;
			case 3: m.acts[r][i].peer = val; break;
			case 4: m.acts[r][i].bytes = (uint64_t)(int64_t)val; break;
			case 5: mut_delete(&m, r, i); break;
			case 6: mut_swap(&m, r, i, (int)(rand_r(&seed) % (unsigned)n)); break;
			case 7: mut_insert(&m, r, i, m.acts[r][(int)(rand_r(&seed) % (unsigned)n)]); break;
			case 8: m.stages[rand_r(&seed) % (unsigned)m.s.n_stages].rank = val; break;
			}
		}
		if (rand_r(&seed) % 5)
			mut_seal(&m);
		collected *col = calloc(1, sizeof *col);
		ppcc_diag d = {collect, col, 0, 0};
		int st = ppcc_schedule_validate(&m.s, &d, NULL, (int)(rand_r(&seed) % 4));
		ck_assert(st == 0 || st == PPCC_EINPUT);
		ck_assert_int_eq(st == 0, d.errors == 0);
		if (st == 0) {
			ppcc_stage_cost costs[8];
			for (int s = 0; s < 8; s++)
				costs[s] = (ppcc_stage_cost){.fwd_ms = 1, .bwd_ms = 2};
			ppcc_estimate e;
			ck_assert_int_eq(ppcc_simulate(&e, m.a, &m.s, costs), 0);
			accepted++;
		}
		free(col);
		mut_free(&m);
	}
	/* some damage is harmless (a field set to the value it had, a swap
	 * of an action with itself), most is not */
	ck_assert_int_gt(accepted, 0);
	ck_assert_int_lt(accepted, 300);
}
END_TEST


/* Most schedules are decided by a quick pass on a table of bits
 * (validate.c, val_quick), the rest on the table of positions: on random
 * damage as above (none in a fifth of them, so that the quick pass
 * accepts those), every entry point, with the quick pass and with the
 * positions alone, gives the same status, the same diagnostics, word for
 * word, and seals with the same fingerprint. */
static int validate_as(const ppcc_schedule *s, int how, int max_errors,
		       int force, ppcc_probe *probe, collected *col,
		       uint64_t *out_hash)
{
	ppcc_diag d = {collect, col, 0, 0};
	ppcc_schedule c = *s;
	int st;
	probe->validate_positions = force;
	if (how == 0)
		st = ppcc_schedule_validate_probed(&c, PPCC_VALIDATE_CHECK, 0, &d,
						   "x.json", max_errors, probe);
	else if (how == 1)
		st = ppcc_schedule_validate_probed(&c, PPCC_VALIDATE_SEAL, 0, &d,
						   "x.json", max_errors, probe);
	else
		st = ppcc_schedule_validate_probed(&c, PPCC_VALIDATE_HASHED,
						   ppcc_schedule_fingerprint(&c),
						   &d, "x.json", max_errors, probe);
	*out_hash = c.fingerprint;
	return st;
}

START_TEST(quick_pass_reports_as_the_positions_do)
{
	static const int32_t values[] = {0, 1, 2, 3, -1, 7, 100, INT32_MAX};
	unsigned seed = 777;
	int accepted = 0, refused = 0;
	long quick_decided = 0;
	ppcc_probe probe = {0};
	for (int iter = 0; iter < 4000; iter++) {
		mut m;
		int kind = iter % PPCC_SCHED_COUNT;
		int p = 2 + (int)(rand_r(&seed) % 3);
		if (kind == PPCC_SCHED_DUALPIPE)
			p += p % 2; /* even */
		int mb = kind == PPCC_SCHED_DUALPIPE_V ||
				 kind == PPCC_SCHED_DUALPIPE ? 2 * p
			: p + (int)(rand_r(&seed) % 4);
		if (kind == PPCC_SCHED_INTERLEAVED ||
		    kind == PPCC_SCHED_ZB_INTERLEAVED ||
		    kind == PPCC_SCHED_COMBINED_1F1B)
			mb = 2 * p;
		if (iter % 7 == 3)
			mut_make_dp(&m, kind, p, ppcc_sched_kind_chunks(kind, p), mb);
		else
			mut_make(&m, kind, p, ppcc_sched_kind_chunks(kind, p), mb);
		int n_mut = iter % 5 == 0 ? 0 : 1 + (int)(rand_r(&seed) % 2);
		for (int k = 0; k < n_mut; k++) {
			int r = (int)(rand_r(&seed) % (unsigned)p);
			int n = m.ranks[r].n_actions;
			if (n == 0)
				continue;
			int i = (int)(rand_r(&seed) % (unsigned)n);
			int32_t val = rand_r(&seed) % 2
				? values[rand_r(&seed) % (sizeof values / sizeof values[0])]
				: (int32_t)rand_r(&seed) % 12 - 2;
			switch (rand_r(&seed) % 8) {
			case 0: m.acts[r][i].op = val; break;
			case 1: m.acts[r][i].stage = val; break;
			case 2: m.acts[r][i].mb = val; break;
			case 3: m.acts[r][i].peer = val; break;
			case 4: m.acts[r][i].bytes = (uint64_t)(int64_t)val; break;
			case 5: mut_delete(&m, r, i); break;
			case 6: mut_swap(&m, r, i, (int)(rand_r(&seed) % (unsigned)n)); break;
			case 7: mut_insert(&m, r, i, m.acts[r][(int)(rand_r(&seed) % (unsigned)n)]); break;
			}
		}
		if (rand_r(&seed) % 4)
			mut_seal(&m);
		int max_errors = (int)(rand_r(&seed) % 4);
		for (int how = 0; how < 3; how++) {
			collected *quick = calloc(1, sizeof *quick);
			collected *full = calloc(1, sizeof *full);
			uint64_t hq, hf;
			long before = probe.validate_quick_accepts;
			int sq = validate_as(&m.s, how, max_errors, 0, &probe,
					     quick, &hq);
			long decided = probe.validate_quick_accepts - before;
			int sf = validate_as(&m.s, how, max_errors, 1, &probe,
					     full, &hf);
			ck_assert_int_eq(probe.validate_quick_accepts, before + decided);
			quick_decided += decided;
			ck_assert_int_eq(sq, sf);
			ck_assert_str_eq(quick->text, full->text);
			ck_assert_int_eq(quick->notes, full->notes);
			ck_assert(hq == hf);
			if (how == 1)
				sq == 0 ? accepted++ : refused++;
			free(quick);
			free(full);
		}
		mut_free(&m);
	}
	/* both ways out are taken often: schedules the validator accepts and
	 * refuses, and schedules whose phases 2 and 3 the quick pass decided
	 * (none when it is forced off) */
	ck_assert_int_gt(accepted, 800);
	ck_assert_int_gt(refused, 1500);
	ck_assert_int_gt(quick_decided, 1500);
}
END_TEST

/* Data parallelism: the compiler's reductions pass, each right after its
 * stage's last B (or W), buckets in order; every replica of a rank runs
 * the rank's list, so a list whose collectives are out of order, missing,
 * doubled or early would have replicas entering different collectives
 * (or reducing unfinished gradients), and is refused, naming it. */
START_TEST(reductions_the_replicas_would_enter_apart_are_refused)
{
	static const int kinds[][3] = {
		{PPCC_SCHED_GPIPE, 2, 1}, {PPCC_SCHED_1F1B, 2, 1},
		{PPCC_SCHED_INTERLEAVED, 2, 2}, {PPCC_SCHED_ZB_H1, 2, 1},
		{PPCC_SCHED_ZB_V, 2, 2},
	};
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		mut m;
		mut_make_dp(&m, kinds[k][0], kinds[k][1], kinds[k][2], 4);
		run *r = validate(&m.s, 0);
		ck_assert_msg(r->status == 0, "%s", r->col.text);
		free(r);
		/* placed right after the last B or W of the stage, buckets in
		 * order, with their bytes */
		int back = ppcc_sched_kind(kinds[k][0])->split_backward
				   ? PPCC_OP_W : PPCC_OP_B;
		int i0 = mut_find(&m, 0, PPCC_OP_REDUCE_GRAD, 0, 0);
		ck_assert_int_eq(m.acts[0][i0 - 1].op, back);
		ck_assert_int_eq(m.acts[0][i0 - 1].stage, 0);
		for (int b = 0; b < 3; b++) {
			const ppcc_action *x = &m.acts[0][i0 + b];
			ck_assert_int_eq(x->op, PPCC_OP_REDUCE_GRAD);
			ck_assert_int_eq(x->mb, b);
			ck_assert_int_eq(x->peer, -1);
			ck_assert_uint_eq(x->bytes, b < 2 ? 1000 : 500);
		}
		for (int mb = 0; mb < 4; mb++)
			ck_assert_int_lt(mut_find(&m, 0, back, 0, mb), i0);
		mut_free(&m);
	}

	mut m;
	/* swapped: bucket 1 before bucket 0 */
	mut_make_dp(&m, PPCC_SCHED_1F1B, 2, 1, 4);
	int i0 = mut_find(&m, 0, PPCC_OP_REDUCE_GRAD, 0, 0);
	mut_swap(&m, 0, i0, i0 + 1);
	mut_seal(&m);
	run *r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 0, action %d (REDUCE_GRAD stage 0 bucket 1): "
				  "comes before REDUCE_GRAD stage 0 bucket 0 (missing "
				  "or later in the list): the stage's buckets are "
				  "reduced in order 0, 1, ..., the order every "
				  "replica enters them", i0));
	free(r);
	mut_free(&m);

	/* missing: bucket 1 of stage 0 dropped */
	mut_make_dp(&m, PPCC_SCHED_1F1B, 2, 1, 4);
	i0 = mut_find(&m, 0, PPCC_OP_REDUCE_GRAD, 0, 1);
	mut_delete(&m, 0, i0);
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 0, action %d (REDUCE_GRAD stage 0 bucket 2): "
				  "comes before REDUCE_GRAD stage 0 bucket 1", i0));
	free(r);
	mut_free(&m);

	/* missing: the only reduction of stage 1 dropped */
	mut_make_dp(&m, PPCC_SCHED_1F1B, 2, 1, 4);
	mut_delete(&m, 1, mut_find(&m, 1, PPCC_OP_REDUCE_GRAD, 1, 0));
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "stage 1 (rank 1): no REDUCE_GRAD, but stage 0 "
			  "reduces its gradients: every stage of a data-parallel "
			  "plan reduces its own");
	free(r);
	mut_free(&m);

	/* doubled: bucket 0 again after bucket 2 */
	mut_make_dp(&m, PPCC_SCHED_GPIPE, 2, 1, 4);
	i0 = mut_find(&m, 0, PPCC_OP_REDUCE_GRAD, 0, 0);
	mut_insert(&m, 0, i0 + 3, m.acts[0][i0]);
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 0, action %d (REDUCE_GRAD stage 0 bucket 0): "
				  "comes after REDUCE_GRAD stage 0 bucket 2: each "
				  "bucket is reduced once", i0 + 3));
	free(r);
	mut_free(&m);

	/* early: stage 1's reduction before its last backward */
	mut_make_dp(&m, PPCC_SCHED_GPIPE, 2, 1, 4);
	int red = mut_find(&m, 1, PPCC_OP_REDUCE_GRAD, 1, 0);
	int b3 = mut_find(&m, 1, PPCC_OP_B, 1, 3);
	ppcc_action x = m.acts[1][red];
	mut_delete(&m, 1, red);
	mut_insert(&m, 1, b3, x);
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 1, action %d (REDUCE_GRAD stage 1 bucket 0): "
				  "reduces the gradients before the stage's last "
				  "backward (action %d) has completed them", b3, b3 + 1));
	free(r);
	mut_free(&m);

	/* fields: a peer, another rank's stage, a version-1 schedule */
	mut_make_dp(&m, PPCC_SCHED_1F1B, 2, 1, 4);
	i0 = mut_find(&m, 0, PPCC_OP_REDUCE_GRAD, 0, 0);
	m.acts[0][i0].peer = 1;
	m.acts[0][i0 + 1].stage = 1;
	m.s.version = 1;
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 0, action %d (REDUCE_GRAD stage 0 bucket 0): "
				  "peer 1 on a collective (must be -1", i0));
	ck_assert_reports(r, WANT("rank 0, action %d (REDUCE_GRAD stage 1 bucket 1): "
				  "stage 1 runs on rank 1", i0 + 1));
	ck_assert_reports(r, "REDUCE_GRAD needs schedule version 3 (this one says 1)");
	free(r);
	mut_free(&m);
}
END_TEST

/* ZeRO: the reduce-scatters where the all-reduces were, and under ZeRO 1
 * and 2 the parameter gathers opening each rank's list, the rank's
 * stages in the order of their first forward; a gather after the
 * rank's first other action (a parameter used before it is gathered),
 * one missing, a reduction of the other kind, gathers without
 * reduce-scatters and a version-3 schedule are refused, naming them. */
START_TEST(zero_collectives_are_placed_and_their_mistakes_refused)
{
	static const int kinds[][3] = {
		{PPCC_SCHED_GPIPE, 2, 1}, {PPCC_SCHED_1F1B, 2, 1},
		{PPCC_SCHED_INTERLEAVED, 2, 2}, {PPCC_SCHED_ZB_H1, 2, 1},
		{PPCC_SCHED_ZB_V, 2, 2},
	};
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		int p = kinds[k][1], v = kinds[k][2];
		mut m;
		mut_make_zero(&m, kinds[k][0], p, v, 4, 1);
		ck_assert_int_eq(m.s.version, 4);
		run *r = validate(&m.s, 0);
		ck_assert_msg(r->status == 0, "%s", r->col.text);
		free(r);
		for (int rk = 0; rk < p; rk++) {
			/* the rank's stages by first forward: looped, chunk
			 * order (rank + p c); the V, rank then 2p - 1 - rank */
			int i = 0;
			for (int c = 0; c < v; c++) {
				int st = kinds[k][0] == PPCC_SCHED_ZB_V
					? (c == 0 ? rk : 2 * p - 1 - rk)
					: rk + p * c;
				int nb = st % 2 ? 1 : 3;
				for (int b = 0; b < nb; b++, i++) {
					const ppcc_action *x = &m.acts[rk][i];
					ck_assert_int_eq(x->op, PPCC_OP_ALL_GATHER_PARAM);
					ck_assert_int_eq(x->stage, st);
					ck_assert_int_eq(x->mb, b);
					ck_assert_int_eq(x->peer, -1);
					/* half of 1000, 1000, 500 (or of 1000) */
					ck_assert_uint_eq(x->bytes, nb == 3 && b == 2 ? 250 : 500);
				}
				int i0 = mut_find(&m, rk, PPCC_OP_REDUCE_SCATTER_GRAD, st, 0);
				ck_assert_int_eq(m.acts[rk][i0 + nb - 1].op,
						 PPCC_OP_REDUCE_SCATTER_GRAD);
			}
			ck_assert(m.acts[rk][i].op != PPCC_OP_ALL_GATHER_PARAM);
			for (int j = 0; j < m.ranks[rk].n_actions; j++)
				ck_assert(m.acts[rk][j].op != PPCC_OP_REDUCE_GRAD);
		}
		mut_free(&m);
	}

	/* a gather after the rank's first forward: used before gathered */
	mut m;
	run *r;
	mut_make_zero(&m, PPCC_SCHED_1F1B, 2, 1, 4, 1);
	ppcc_action g = m.acts[1][0]; /* stage 1 bucket 0, its only one */
	ck_assert_int_eq(g.op, PPCC_OP_ALL_GATHER_PARAM);
	mut_delete(&m, 1, 0);
	int f0 = mut_find(&m, 1, PPCC_OP_F, 1, 0);
	mut_insert(&m, 1, f0 + 1, g);
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 1, action %d (ALL_GATHER_PARAM stage 1 "
				  "bucket 0): comes after action 0: a rank's "
				  "gathers open its list, so that every parameter "
				  "is gathered before its first use", f0 + 1));
	free(r);
	mut_free(&m);

	/* the last gather of stage 0 dropped */
	mut_make_zero(&m, PPCC_SCHED_1F1B, 2, 1, 4, 1);
	mut_delete(&m, 0, mut_find(&m, 0, PPCC_OP_ALL_GATHER_PARAM, 0, 2));
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "stage 0 (rank 0): 2 ALL_GATHER_PARAM for 3 "
			  "reduce-scattered buckets: each bucket is gathered once");
	free(r);
	mut_free(&m);

	/* two gathers swapped */
	mut_make_zero(&m, PPCC_SCHED_1F1B, 2, 1, 4, 1);
	mut_swap(&m, 0, 0, 1);
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "rank 0, action 0 (ALL_GATHER_PARAM stage 0 bucket 1): "
			  "expected ALL_GATHER_PARAM stage 0 bucket 0: each "
			  "bucket is gathered once, in order 0, 1, ...");
	free(r);
	mut_free(&m);

	/* one bucket all-reduced among reduce-scatters */
	mut_make_zero(&m, PPCC_SCHED_1F1B, 2, 1, 4, 1);
	int i0 = mut_find(&m, 0, PPCC_OP_REDUCE_SCATTER_GRAD, 0, 1);
	m.acts[0][i0].op = PPCC_OP_REDUCE_GRAD;
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 0, action %d (REDUCE_GRAD stage 0 bucket 1): "
				  "the schedule reduces with REDUCE_SCATTER_GRAD "
				  "elsewhere: each bucket is reduced once, all of "
				  "them one way", i0));
	free(r);
	mut_free(&m);

	/* gathers after all-reduces: nothing sharded to gather */
	mut_make_dp(&m, PPCC_SCHED_1F1B, 2, 1, 4);
	m.s.version = 4;
	for (int rk = 0; rk < 2; rk++)
		mut_insert(&m, rk, 0, (ppcc_action){PPCC_OP_ALL_GATHER_PARAM, rk,
						     0, -1, 8});
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "stage 0: ALL_GATHER_PARAM without REDUCE_SCATTER_GRAD: "
			  "only a reduce-scatter leaves the replicas shards to gather");
	free(r);
	mut_free(&m);

	/* version 3 does not have them */
	mut_make_zero(&m, PPCC_SCHED_GPIPE, 2, 1, 4, 2);
	m.s.version = 3;
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "rank 0, action 0 (ALL_GATHER_PARAM stage 0 bucket 0): "
			  "ALL_GATHER_PARAM needs schedule version 4 (this one says 3)");
	ck_assert_reports(r, "REDUCE_SCATTER_GRAD needs schedule version 4 (this "
			  "one says 3)");
	free(r);
	mut_free(&m);
}
END_TEST

/* ZeRO-3 on 1F1B, p = 2, m = 4 (stage 0: 3 buckets, stage 1: 1): each
 * rank opens with the groups of its first two computes, each compute
 * has its own group of its stage's buckets, and every backward its
 * reduce-scatters; a group missing, a third one waiting, buckets out of
 * order, a reduce-scatter round missing, version 4 and ALL_GATHER_PARAM
 * beside UNSHARD_PARAM are refused, naming them. */
START_TEST(zero3_gathers_are_placed_and_their_mistakes_refused)
{
	mut m;
	mut_make_zero(&m, PPCC_SCHED_1F1B, 2, 1, 4, 3);
	ck_assert_int_eq(m.s.version, 5);
	run *r = validate(&m.s, 0);
	ck_assert_msg(r->status == 0, "%s", r->col.text);
	free(r);
	/* rank 0: G0 G0 F0 G0 SEND_F F1 ...; 3 buckets of 500, 500, 250 */
	for (int i = 0; i < 6; i++) {
		const ppcc_action *x = &m.acts[0][i];
		ck_assert_int_eq(x->op, PPCC_OP_UNSHARD_PARAM);
		ck_assert_int_eq(x->stage, 0);
		ck_assert_int_eq(x->mb, i % 3);
		ck_assert_uint_eq(x->bytes, i % 3 == 2 ? 250 : 500);
	}
	ck_assert_int_eq(m.acts[0][6].op, PPCC_OP_F);
	ck_assert_int_eq(m.acts[0][7].op, PPCC_OP_UNSHARD_PARAM);
	/* every backward of stage 1 reduces: 4 rounds of its one bucket */
	int rounds = 0;
	for (int i = 0; i < m.ranks[1].n_actions; i++)
		rounds += m.acts[1][i].op == PPCC_OP_REDUCE_SCATTER_GRAD;
	ck_assert_int_eq(rounds, 4);
	mut_free(&m);

	/* the group listed after F(0, 0) dropped: the computes after it
	 * take the next ones, and the last finds none */
	mut_make_zero(&m, PPCC_SCHED_1F1B, 2, 1, 4, 3);
	for (int k = 0; k < 3; k++)
		mut_delete(&m, 0, 7);
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, WANT("rank 0, action %d (B stage 0 mb 3): has no "
				  "UNSHARD_PARAM group of its stage before it "
				  "(none waits): under ZeRO-3 each F, B and I waits "
				  "for the group listed for it, in order",
				  mut_find(&m, 0, PPCC_OP_B, 0, 3)));
	free(r);
	mut_free(&m);

	/* a third group at the start: three buffers */
	mut_make_zero(&m, PPCC_SCHED_1F1B, 2, 1, 4, 3);
	mut_insert(&m, 1, 0, m.acts[1][0]);
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "rank 1, action 2 (UNSHARD_PARAM stage 1 bucket 0): "
			  "opens a third group while two wait for their "
			  "computes: a rank holds two gathered buffers at most");
	free(r);
	mut_free(&m);

	/* two buckets of a group swapped */
	mut_make_zero(&m, PPCC_SCHED_1F1B, 2, 1, 4, 3);
	mut_swap(&m, 0, 0, 1);
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "rank 0, action 0 (UNSHARD_PARAM stage 0 bucket 1): "
			  "expected bucket 0 first: a group gathers its stage's "
			  "buckets 0, 1, ... one after another");
	free(r);
	mut_free(&m);

	/* stage 1's reduce-scatter after its first backward dropped */
	mut_make_zero(&m, PPCC_SCHED_1F1B, 2, 1, 4, 3);
	mut_delete(&m, 1, mut_find(&m, 1, PPCC_OP_REDUCE_SCATTER_GRAD, 1, 0));
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "stage 1 (rank 1): 3 rounds of REDUCE_SCATTER_GRAD "
			  "for 4 backwards: under ZeRO-3 each backward reduces "
			  "its own");
	free(r);
	mut_free(&m);

	/* version 4 does not have them; nor do ZeRO 1 and 2's gathers mix */
	mut_make_zero(&m, PPCC_SCHED_1F1B, 2, 1, 4, 3);
	m.s.version = 4;
	for (int rk = 0; rk < 2; rk++)
		mut_insert(&m, rk, 0, (ppcc_action){PPCC_OP_ALL_GATHER_PARAM, rk,
						     0, -1, 8});
	mut_seal(&m);
	r = validate(&m.s, 0);
	ck_assert_int_eq(r->status, PPCC_EINPUT);
	ck_assert_reports(r, "rank 0, action 1 (UNSHARD_PARAM stage 0 bucket 0): "
			  "UNSHARD_PARAM needs schedule version 5 (this one "
			  "says 4)");
	ck_assert_reports(r, "stage 0: UNSHARD_PARAM and ALL_GATHER_PARAM in one "
			  "schedule: ZeRO-3 gathers for every compute, ZeRO 1 "
			  "and 2 once a step");
	free(r);
	mut_free(&m);
}
END_TEST

Suite *suite_validate(void)
{
	return tu_suite("validate", "validate", 120, (const TTest *const[]){
		unmutated_schedules_pass_silently,
		quick_pass_reports_as_the_positions_do,
		dropped_receive_names_the_orphan_send,
		dropped_send_names_the_waiting_receive,
		missing_transfer_names_the_compute_that_needs_it,
		swapped_sends_are_misordered,
		receives_and_sends_after_their_compute_are_misordered,
		swapped_send_and_receive_deadlock_in_dry_run,
		delayed_send_without_cycle_passes,
		duplicated_microbatch_is_counted,
		wrong_peer_is_named,
		wrong_bytes_are_named,
		backward_before_forward_is_named,
		fingerprint_mismatch_is_an_error,
		seal_sets_the_fingerprint_of_what_it_checked,
		seal_refuses_a_broken_schedule_and_leaves_it_unsealed,
		seal_run_simulates_in_place_of_the_dry_run,
		hashed_compares_with_the_hash_given,
		out_of_range_fields_are_named,
		hostile_headers_are_rejected_without_reading_further,
		max_errors_bounds_the_report,
		location_names_the_file_without_a_line,
		split_backward_rules,
		zero_bubble_schedules_and_their_mutations,
		dualpipe_v_pairs_and_their_mutations,
		single_rank_checks_local_chain,
		fuzzed_schedules_never_crash_and_accepted_ones_simulate,
		reductions_the_replicas_would_enter_apart_are_refused,
		zero_collectives_are_placed_and_their_mistakes_refused,
		zero3_gathers_are_placed_and_their_mistakes_refused,
		NULL});
}
