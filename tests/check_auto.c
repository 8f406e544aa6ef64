/* check_auto: the auto kind (src/sched/auto.c and plan.c's plan_auto):
 * the heuristic's order by hand, valid for every shape, and never slower
 * in simulation than a handcrafted kind that fits the same memory. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppcc.h"
#include "testutil.h"

Suite *suite_auto(void);

#define AUTO_MAX_P 8

static void quiet(ppcc_severity sev, const ppcc_loc *loc, const char *msg,
		  void *user)
{
	(void)sev, (void)loc, (void)msg, (void)user;
}

static void stages_fill(ppcc_stage_info *st, int p)
{
	memset(st, 0, sizeof *st * (size_t)p);
	for (int s = 0; s < p; s++) {
		st[s] = (ppcc_stage_info){.stage = s, .rank = s, .first_layer = s,
					  .last_layer = s};
		st[s].recv_bytes = s > 0 ? 64 : 0;
		st[s].send_bytes = s < p - 1 ? 64 : 0;
	}
}

static void compute_order(char *buf, size_t n, const ppcc_rank_schedule *rs)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < rs->n_actions; i++) {
		const ppcc_action *a = &rs->actions[i];
		if (!ppcc_op_is_compute(a->op))
			continue;
		int k = snprintf(buf + len, n - len, "%s%s%d", len ? " " : "",
				 ppcc_op_name(a->op), a->mb);
		ck_assert_int_lt(k, (int)(n - len));
		len += (size_t)k;
	}
}

/* The heuristic at unit time (F = I = W = 1, free p2p), cap p = 2, W only
 * in a gap as long as a W or at the cap, p = 2, m = 3, traced by hand:
 *   t  rank 0          rank 1
 *   0  F0              (waits for F0)
 *   1  F1              F0
 *   2  (cap: waits)    I0
 *   3  I0              F1
 *   4  W0 (at the cap) I1
 *   5  I1              W0 (at the cap)
 *   6  F2              W1 (F2 arrives at 7: a gap of 1 = W)
 *   7  W1 (I2 at 8)    F2
 *   8  (waits)         I2
 *   9  I2              W2
 *  10  W2
 */
START_TEST(auto_order_p2_m3_by_hand)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_stage_info st[2];
	ppcc_schedule s;
	char buf[512];
	stages_fill(st, 2);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_AUTO, 2, 1, 3, 0, st), 0);
	compute_order(buf, sizeof buf, &s.ranks[0]);
	ck_assert_str_eq(buf, "F0 F1 I0 W0 I1 F2 W1 I2 W2");
	compute_order(buf, sizeof buf, &s.ranks[1]);
	ck_assert_str_eq(buf, "F0 I0 F1 I1 W0 W1 F2 I2 W2");
	ppcc_arena_free(a);
}
END_TEST

START_TEST(auto_order_is_valid_for_every_shape)
{
	for (int p = 1; p <= 6; p++)
		for (int m = 1; m <= 13; m++) {
			ppcc_arena *a = ppcc_arena_new();
			ppcc_stage_info st[AUTO_MAX_P];
			ppcc_schedule s;
			ppcc_diag d = {.fn = quiet};
			stages_fill(st, p);
			ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_AUTO,
							     p, 1, m, 0, st), 0);
			ck_assert_msg(ppcc_schedule_validate(&s, &d, NULL, 0) == 0,
				      "p %d m %d", p, m);
			ppcc_arena_free(a);
		}
}
END_TEST

static uint64_t rng(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static double uniform(uint64_t *x, double lo, double hi)
{
	return lo + (hi - lo) * (double)(rng(x) >> 11) / 9007199254740992.0;
}

/* Random stages (costs, p2p, stash, static bytes) and per-rank caps from
 * "no room" to "room for 2p microbatches": auto's choice fits whenever
 * any handcrafted kind fits, is never slower than one that fits, and is
 * a valid schedule. */
START_TEST(auto_never_slower_than_a_kind_that_fits_random)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int heuristic_won = 0, limited = 0;
	for (int t = 0; t < 300; t++) {
		int p = 1 + (int)(rng(&x) % 6), m = 1 + (int)(rng(&x) % 16);
		ppcc_stage_info st[AUTO_MAX_P];
		ppcc_stage_cost c[AUTO_MAX_P];
		double cap[AUTO_MAX_P];
		stages_fill(st, p);
		memset(c, 0, sizeof c);
		for (int s = 0; s < p; s++) {
			c[s].fwd_ms = uniform(&x, 0.5, 2);
			c[s].bwd_input_ms = uniform(&x, 0.5, 2.5);
			c[s].bwd_weight_ms = uniform(&x, 0.1, 2);
			c[s].bwd_ms = c[s].bwd_input_ms + c[s].bwd_weight_ms;
			c[s].send_f_ms = s < p - 1 ? uniform(&x, 0, 0.3) : 0;
			c[s].send_b_ms = s > 0 ? uniform(&x, 0, 0.3) : 0;
			c[s].stash_bytes = uniform(&x, 1, 4);
			c[s].static_bytes = uniform(&x, 0, 8);
			cap[s] = c[s].static_bytes +
				 c[s].stash_bytes * uniform(&x, 0.5, 2.0 * p);
		}
		ppcc_arena *a = ppcc_arena_new();
		ppcc_schedule s;
		ppcc_auto_report rep;
		int err = ppcc_sched_auto(&s, &rep, a, p, m, st, c, cap);
		ck_assert_msg(err == 0 || err == PPCC_EINFEASIBLE, "status %d", err);
		ppcc_estimate est;
		ck_assert_int_eq(ppcc_simulate(&est, a, &s, c), 0);
		ppcc_diag d = {.fn = quiet};
		ck_assert_int_eq(ppcc_schedule_validate_seal(&s, &d, NULL, 0), 0);
		int any_fits = 0;
		for (int k = 0; k < PPCC_SCHED_COUNT; k++) {
			const ppcc_sched_kind_info *ki = ppcc_sched_kind(k);
			if (k == PPCC_SCHED_AUTO || ki->min_chunks > 1)
				continue;
			ppcc_schedule h;
			if (ppcc_schedule_build(&h, a, k, p, 1, m, 0, st) != 0)
				continue;
			ppcc_estimate he;
			ck_assert_int_eq(ppcc_simulate(&he, a, &h, c), 0);
			int fits = 1;
			for (int r = 0; r < p; r++)
				fits &= he.peak_memory_bytes[r] <= cap[r];
			if (!fits) {
				limited++;
				continue;
			}
			any_fits = 1;
			ck_assert_msg(err == 0 && est.step_ms <= he.step_ms,
				      "trial %d p %d m %d: auto %.6f ms, %s %.6f ms",
				      t, p, m, est.step_ms, ki->name, he.step_ms);
		}
		if (any_fits) {
			for (int r = 0; r < p; r++)
				ck_assert_double_le(est.peak_memory_bytes[r], cap[r]);
			heuristic_won += rep.candidates[rep.chosen].kind == PPCC_SCHED_AUTO;
		}
		ck_assert_double_eq(est.step_ms, rep.candidates[rep.chosen].step_ms);
		ppcc_arena_free(a);
	}
	/* the cases are not all one-sided: some kinds do not fit, and the
	 * heuristic's order wins some */
	ck_assert_int_gt(limited, 0);
	ck_assert_int_gt(heuristic_won, 0);
}
END_TEST

/* Every example, planned with auto, against each handcrafted kind of one
 * chunk planned as `ppcc plan -s KIND` would: never slower than one that
 * plans (fits). */
START_TEST(auto_never_slower_than_a_kind_that_fits_examples)
{
	static const char *const examples[] = {
		"examples/tiny.yaml", "examples/gpt3-175b.yaml",
		"examples/llama2-70b.yaml", "examples/llama3-70b.yaml",
		"examples/llama3-8b.yaml", "examples/hetero.yaml"};
	for (size_t e = 0; e < sizeof examples / sizeof examples[0]; e++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", tu_src(), examples[e]);
		double step[PPCC_SCHED_COUNT];
		int planned[PPCC_SCHED_COUNT] = {0};
		for (int k = 0; k < PPCC_SCHED_COUNT; k++) {
			const ppcc_sched_kind_info *ki = ppcc_sched_kind(k);
			if (ki->min_chunks > 1)
				continue;
			ppcc_arena *a = ppcc_arena_new();
			ppcc_config cfg;
			ppcc_diag d = {.fn = quiet};
			ck_assert_int_eq(ppcc_config_load(&cfg, a, path, NULL, &d), 0);
			cfg.pipeline.kind = k;
			cfg.pipeline.kind_loc = (ppcc_loc){"<test>", 0, 0};
			cfg.pipeline.chunks = 1;
			cfg.pipeline.chunks_loc = (ppcc_loc){0};
			ppcc_config_fill_defaults(&cfg);
			ppcc_plan plan;
			if (ppcc_config_check(&cfg, &d) == 0 &&
			    ppcc_plan_build(&plan, a, &cfg, &d) == 0) {
				planned[k] = 1;
				step[k] = plan.best.estimate.step_ms;
				ck_assert_int_eq(plan.best.schedule.kind == PPCC_SCHED_AUTO,
						 k == PPCC_SCHED_AUTO &&
						 plan.auto_plan->chosen_kind == PPCC_SCHED_AUTO);
			}
			ppcc_arena_free(a);
		}
		ck_assert_msg(planned[PPCC_SCHED_AUTO], "%s: auto did not plan", examples[e]);
		for (int k = 0; k < PPCC_SCHED_COUNT; k++)
			if (planned[k] && k != PPCC_SCHED_AUTO)
				ck_assert_msg(step[PPCC_SCHED_AUTO] <= step[k],
					      "%s: auto %.3f ms, %s %.3f ms", examples[e],
					      step[PPCC_SCHED_AUTO],
					      ppcc_schedule_kind_name(k), step[k]);
	}
}
END_TEST

/* tiny under --memory-limit 3.75 (1.75 GiB a device after the 2 GiB
 * reserve): zb-h2 (1.93 GiB) does not fit, zb-h1 (158.050 ms) does, and
 * the heuristic's order with 1.75 GiB beats it; a limit that is not a
 * number is a usage error. */
START_TEST(auto_under_a_memory_limit_from_the_command_line)
{
	char ex[4096];
	snprintf(ex, sizeof ex, "%s/examples/tiny.yaml", tu_src());
	tu_run r;
	char *argv[] = {(char *)tu_ppcc(), "plan", ex, "-s", "auto",
			"--memory-limit", "3.75", NULL};
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, argv), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "ppcc 0.1.0: tiny, auto, 4 stages"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "    zb-h2                                does not fit\n"),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "    zb-h1                                   158.050\n"),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "written: the heuristic's order"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "      1.75\n"), "%s", r.out);
	tu_run_free(&r);
	char *bad[] = {(char *)tu_ppcc(), "plan", ex, "--memory-limit", "lots", NULL};
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, bad), 0);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "--memory-limit: expected GiB per device"), "%s", r.err);
	tu_run_free(&r);
}
END_TEST

/* ppcc search considers auto only when fixed, and then plans it as ppcc
 * plan -s auto does: tiny with p 4 (m 8, d 1) ranks one auto row whose
 * iteration is the plan's 161.820 ms (zb-h2 written), and the search
 * without --fix never ranks auto. */
START_TEST(auto_in_search_only_when_fixed)
{
	char ex[4096];
	snprintf(ex, sizeof ex, "%s/examples/tiny.yaml", tu_src());
	tu_run r;
	char *argv[] = {(char *)tu_ppcc(), "search", ex, "--fix", "schedule=auto",
			"--fix", "stages=4", "--top", "1", NULL};
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, argv), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "\n   1   1    4    1   1  1   1     8  none          0  auto  "
			     "                 161.8 "), "%s", r.out);
	ck_assert_msg(strstr(r.out, "  iteration time (ms)              161.820\n"), "%s", r.out);
	tu_run_free(&r);
	char *all[] = {(char *)tu_ppcc(), "search", ex, "--top", "1000", NULL};
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, all), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "  1f1b  "), "%s", r.out);
	ck_assert_msg(!strstr(r.out, "  auto  "), "%s", r.out);
	tu_run_free(&r);
}
END_TEST

Suite *suite_auto(void)
{
	Suite *s = suite_create("auto");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, auto_order_p2_m3_by_hand);
	tcase_add_test(tc, auto_order_is_valid_for_every_shape);
	tcase_add_test(tc, auto_never_slower_than_a_kind_that_fits_random);
	tcase_add_test(tc, auto_never_slower_than_a_kind_that_fits_examples);
	tcase_add_test(tc, auto_under_a_memory_limit_from_the_command_line);
	tcase_add_test(tc, auto_in_search_only_when_fixed);
	suite_add_tcase(s, tc);
	return s;
}
