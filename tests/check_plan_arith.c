/*
 * plan.c's arithmetic against values worked by hand (the cost model of
 * plan.c's opening comment): a device group's speed times tensor
 * parallelism, the link a boundary takes by devices_per_node, memory
 * divided by t, and the notes of an infeasible plan.
 *
 * The model: four identical layers of 1e12 forward and 2e12 backward
 * FLOPs, 1e9 parameters of 16 bytes (Adam with 16-bit gradients,
 * grad_bytes 2), 1e8 activation bytes and 1e9 stash bytes, on devices of
 * 100 TFLOP/s at efficiency 0.5 (5e13 FLOP/s) with nothing reserved, with
 * links of 100 GB/s and 10 us within a node and 10 GB/s and 20 us
 * between nodes, one pipeline replica (data_parallel 1).  One layer per
 * stage, so:
 *   t = 1: F 1e12 / 5e13 = 20 ms, B 40 ms; t = 2: 10 ms and 20 ms;
 *   intra-node transfer: 10 us + 1e8 / 1e11 s = 1.010 ms;
 *   inter-node transfer: 20 us + 1e8 / 1e10 s = 10.020 ms at t = 1; each
 *   of the t devices sends 1/t: 5.020 ms at t = 2, 2.520 ms at t = 4;
 *   static bytes per device 1.6e10 / t, stash per microbatch 1e9 / t.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppcc.h"
#include "testutil.h"

Suite *suite_plan_arith(void);

static const char model_fmt[] =
	"model:\n"
	"  name: arith\n"
	"  layers:\n"
	"    - {name: l, repeat: 4, fwd_flops: 1.0e12, bwd_flops: 2.0e12, "
	"params: 1.0e9, activation_bytes: 1.0e8, stash_bytes: 1.0e9}\n"
	"cluster:\n"
	"  devices: 8\n"
	"  devices_per_node: %d\n"
	"  reserved_gib: 0\n"
	"  device: {name: x, tflops: 100, efficiency: 0.5, memory_gib: %g}\n"
	"  links:\n"
	"    intra_node: {bandwidth_gb_s: 100, latency_us: 10}\n"
	"    inter_node: {bandwidth_gb_s: 10, latency_us: 20}\n"
	"pipeline:\n"
	"  stages: %d\n"
	"  microbatches: 8\n"
	"  tensor_parallel: %d\n"
	"  data_parallel: 1\n"
	"  grad_bytes: 2\n";

typedef struct arith {
	ppcc_arena *a;
	ppcc_config cfg;
	ppcc_plan plan;
	tu_diag diag;
	int err;
} arith;

static void plan_of(arith *x, int per_node, double memory_gib, int stages,
		    int t)
{
	char text[2048];
	snprintf(text, sizeof text, model_fmt, per_node, memory_gib, stages, t);
	x->a = ppcc_arena_new();
	x->err = tu_plan_text(&x->plan, x->a, &x->cfg, text, &x->diag);
}

#define NEAR(got, want) \
	ck_assert_msg(fabs((got) - (want)) <= 1e-9 * fabs(want) + 1e-12, \
		      "%s = %.12g, want %.12g", #got, (double)(got), (double)(want))

static void expect_stage(const ppcc_stage_cost *c, double f, double b,
			 double send_f, double send_b, double stat, double stash)
{
	NEAR(c->fwd_ms, f);
	NEAR(c->bwd_ms, b);
	NEAR(c->send_f_ms, send_f);
	NEAR(c->send_b_ms, send_b);
	NEAR(c->static_bytes, stat);
	NEAR(c->stash_bytes, stash);
}

/* devices_per_node 2, t 1: ranks 0,1 on node 0 and 2,3 on node 1, so the
 * middle boundary crosses nodes and the others do not. */
START_TEST(links_follow_devices_per_node)
{
	arith x;
	plan_of(&x, 2, 80, 4, 1);
	ck_assert_msg(x.err == 0, "%s", x.diag.text);
	const ppcc_stage_cost *c = x.plan.best.costs;
	expect_stage(&c[0], 20, 40, 1.010, 0, 1.6e10, 1e9);
	expect_stage(&c[1], 20, 40, 10.020, 1.010, 1.6e10, 1e9);
	expect_stage(&c[2], 20, 40, 1.010, 10.020, 1.6e10, 1e9);
	expect_stage(&c[3], 20, 40, 0, 1.010, 1.6e10, 1e9);
	for (int s = 0; s < 4; s++) {
		ck_assert_int_eq(x.plan.best.stages[s].first_layer, s);
		ck_assert_int_eq(x.plan.best.stages[s].last_layer, s);
		ck_assert(x.plan.best.stages[s].send_bytes == (s < 3 ? 100000000u : 0u));
	}
	/* 80 GiB each */
	for (int r = 0; r < 4; r++)
		NEAR(x.plan.memory_cap_bytes[r], 80.0 * 1073741824.0);
	ppcc_arena_free(x.a);

	/* devices_per_node 4: all four ranks on node 0, every link intra */
	plan_of(&x, 4, 80, 4, 1);
	ck_assert_msg(x.err == 0, "%s", x.diag.text);
	c = x.plan.best.costs;
	NEAR(c[1].send_f_ms, 1.010);
	NEAR(c[2].send_b_ms, 1.010);
	ppcc_arena_free(x.a);

	/* devices_per_node 1: every rank on its own node, every link inter */
	plan_of(&x, 1, 80, 4, 1);
	ck_assert_msg(x.err == 0, "%s", x.diag.text);
	c = x.plan.best.costs;
	NEAR(c[0].send_f_ms, 10.020);
	NEAR(c[3].send_b_ms, 10.020);
	ppcc_arena_free(x.a);
}
END_TEST

/* t 2 on 8 devices: rank r on devices 2r, 2r+1, its speed doubled (10 ms
 * and 20 ms), its memory per device halved; with two devices per node
 * each rank is a node, so every boundary is inter-node. */
START_TEST(tensor_parallelism_scales_speed_and_divides_memory)
{
	arith x;
	plan_of(&x, 2, 80, 4, 2);
	ck_assert_msg(x.err == 0, "%s", x.diag.text);
	const ppcc_stage_cost *c = x.plan.best.costs;
	expect_stage(&c[0], 10, 20, 5.020, 0, 8e9, 5e8);
	expect_stage(&c[1], 10, 20, 5.020, 5.020, 8e9, 5e8);
	expect_stage(&c[3], 10, 20, 0, 5.020, 8e9, 5e8);
	for (int r = 0; r < 4; r++)
		NEAR(x.plan.memory_cap_bytes[r], 80.0 * 1073741824.0);
	/* 1F1B, equal stages: (m + p - 1) (F + B) plus the transfers on
	 * the critical path; the bubble's closed form (p-1)/(m+p-1) = 3/11 */
	NEAR(x.plan.best.estimate.bubble_analytic, 3.0 / 11.0);
	ck_assert(x.plan.best.estimate.step_ms >= 11 * 30.0);
	ppcc_arena_free(x.a);

	/* t 4 with four devices per node: rank r on devices 4r..4r+3, so
	 * ranks 0 and 1 are nodes 0 and 1; 5 ms and 10 ms */
	plan_of(&x, 4, 80, 2, 4);
	ck_assert_msg(x.err == 0, "%s", x.diag.text);
	c = x.plan.best.costs;
	/* two stages of two layers: 2 x 1e12 / 2e14 = 10 ms, B 20 ms; the
	 * boundary after layer 1 is inter-node */
	expect_stage(&c[0], 10, 20, 2.520, 0, 2 * 1.6e10 / 4, 2 * 1e9 / 4);
	expect_stage(&c[1], 10, 20, 0, 2.520, 2 * 1.6e10 / 4, 2 * 1e9 / 4);
	ppcc_arena_free(x.a);
}
END_TEST

/* 20 GiB devices hold one layer (1.6e10 static + stash) but not two:
 * with two stages the plan is infeasible and the notes say by how much
 * and that four stages fit. */
START_TEST(infeasible_plan_notes_the_fewest_stages_and_memory)
{
	arith x;
	plan_of(&x, 8, 20, 2, 1);
	ck_assert_int_eq(x.err, PPCC_EINFEASIBLE);
	/* two layers a stage: 3.2e10 static; stage 0 of 1F1B holds
	 * min(p, m) = 2 microbatches, stage 1 one:
	 *   stage 0: 3.2e10 + 2 * 2e9 = 3.6e10 B = 33.53 GiB (13.53 over)
	 *   stage 1: 3.2e10 + 1 * 2e9 = 3.4e10 B = 31.66 GiB */
	ck_assert_msg(strstr(x.diag.text, "it would fit with 33.53 GiB per device"),
		      "%s", x.diag.text);
	ck_assert_msg(strstr(x.diag.text, "it would fit with 4 stages"), "%s",
		      x.diag.text);
	ppcc_arena_free(x.a);
}
END_TEST

Suite *suite_plan_arith(void)
{
	return tu_suite("plan_arith", "plan_arith", 0, (const TTest *const[]){
		links_follow_devices_per_node,
		tensor_parallelism_scales_speed_and_divides_memory,
		infeasible_plan_notes_the_fewest_stages_and_memory,
		NULL});
}
