/*
 * Tests of the resource budget (src/plan/budget.c, --max-actions) and of the
 * dependency view's size limit: the count is exact for every kind and
 * size it is compared on, and the small hostile files are refused
 * at once, at their line, without building anything or writing output.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "ppcc.h"
#include "testutil.h"

Suite *suite_budget(void);

/* The largest peak memory (kB) of the children this test has waited
 * for so far (each test runs in a process of its own). */
static long children_peak_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	return ru.ru_maxrss;
}

/* A model of `layers` identical layers on `devices` devices. */
static char *hostile(const char *dir, const char *name, int layers,
		     int devices, const char *pipeline)
{
	char *path = malloc(512), text[1024];
	snprintf(path, 512, "%s/%s", dir, name);
	snprintf(text, sizeof text,
		 "model:\n"
		 "  name: h\n"
		 "  layers:\n"
		 "    - {name: l, repeat: %d, fwd_ms: 1, params: 1, "
		 "activation_bytes: 1, stash_bytes: 1}\n"
		 "cluster:\n"
		 "  devices: %d\n"
		 "  device: {name: d, tflops: 100, efficiency: 1, memory_gib: 80}\n"
		 "pipeline:\n%s", layers, devices, pipeline);
	ck_assert_int_eq(tu_write_file(path, text), 0);
	return path;
}

static void run_ppcc(tu_run *r, const char *const args[])
{
	tu_ppcc_run(r, NULL, NULL, 120, args);
}

/* Hand counts: F and B per (stage, microbatch), and with more than one
 * rank a SEND and a RECV each way at every stage boundary. */
START_TEST(action_count_matches_hand_counts)
{
	ppcc_pipeline pl = {.kind = PPCC_SCHED_1F1B, .stages = 4,
			    .microbatches = 8, .chunks = 1};
	/* examples/tiny.yaml: 8 x (2*4 + 4*3) = 160, as ppcc check counts */
	ck_assert_int_eq(ppcc_plan_action_count(&pl), 160);
	/* examples/llama2-70b.yaml's interleaved plan: p 8, v 2, m 32:
	 * 32 x (2*16 + 4*15) = 2944 */
	pl = (ppcc_pipeline){.kind = PPCC_SCHED_INTERLEAVED, .stages = 8,
			     .microbatches = 32, .chunks = 2};
	ck_assert_int_eq(ppcc_plan_action_count(&pl), 2944);
	/* one rank: no transfers, 2 x 8 */
	pl = (ppcc_pipeline){.kind = PPCC_SCHED_GPIPE, .stages = 1,
			     .microbatches = 8, .chunks = 1};
	ck_assert_int_eq(ppcc_plan_action_count(&pl), 16);
	/* the 200-byte file: 4096 x (2*4096 + 4*4095) */
	pl = (ppcc_pipeline){.kind = PPCC_SCHED_1F1B, .stages = 4096,
			     .microbatches = 4096, .chunks = 1};
	ck_assert_int_eq(ppcc_plan_action_count(&pl), 100646912);
	/* saturates instead of overflowing */
	pl = (ppcc_pipeline){.kind = PPCC_SCHED_INTERLEAVED,
			     .stages = 2147483647, .microbatches = 2147483647,
			     .chunks = 2147483647};
	ck_assert(ppcc_plan_action_count(&pl) == INT64_MAX);
}
END_TEST

/* A data-parallel plan's REDUCE_GRAD actions, by hand: 4 layers of 3e6
 * parameters, 2-byte gradients (G = 24e6 bytes), buckets of 4 MB, p 2
 * of 1F1B, m 8 (32 compute and 32 point-to-point actions).  The most
 * any split makes is max(S, ceil(G / B) + S - 1) = 6 + 1 = 7: layers 1|3
 * are 2 + 5 buckets (2|2 would be 3 + 3).  Tensor parallelism 3 makes G
 * 8e6: 2 + 1 = 3 (1|3: 1 + 2).  Layers of part of a byte: the placement
 * rounds each stage's bytes, so G is taken half a byte a stage larger:
 * one stage of 3 layers of 1.5 bytes in 1-byte buckets (dp_bucket_mb
 * 1e-6, below the valid settings, but the bound does not ask) is
 * ceil((4.5 + 0.5) / 1) = 5 buckets, which the placement makes (llround
 * of 4.5 is 5).  d = 1: none. */
START_TEST(reduction_bound_matches_hand_counts)
{
	ppcc_layer layers[4];
	memset(layers, 0, sizeof layers);
	for (int k = 0; k < 4; k++)
		layers[k].params = 3e6;
	ppcc_config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.model.layers = layers;
	cfg.model.n_layers = 4;
	cfg.pipeline = (ppcc_pipeline){.kind = PPCC_SCHED_1F1B, .stages = 2,
				       .microbatches = 8, .chunks = 1,
				       .tensor_parallel = 1, .data_parallel = 2,
				       .grad_bytes = 2, .dp_bucket_mb = 4};
	ck_assert_int_eq(ppcc_plan_action_count(&cfg.pipeline), 64);
	ck_assert_int_eq(ppcc_plan_reduction_bound(&cfg), 7);
	ck_assert_int_eq(ppcc_plan_action_bound(&cfg), 71);
	/* ZeRO 3: per microbatch a round of reduce-scatters and two groups
	 * of gathers, 3 x 8 x 7 */
	cfg.pipeline.zero = 3;
	ck_assert_int_eq(ppcc_plan_reduction_bound(&cfg), 168);
	cfg.pipeline.zero = 0;
	cfg.pipeline.tensor_parallel = 3;
	ck_assert_int_eq(ppcc_plan_reduction_bound(&cfg), 3);
	cfg.pipeline.tensor_parallel = 1;
	/* context parallelism alone reduces too */
	cfg.pipeline.data_parallel = 1;
	cfg.pipeline.context_parallel = 2;
	ck_assert_int_eq(ppcc_plan_reduction_bound(&cfg), 7);
	cfg.pipeline.context_parallel = 1;
	ck_assert_int_eq(ppcc_plan_reduction_bound(&cfg), 0);
	ck_assert_int_eq(ppcc_plan_action_bound(&cfg), 64);
	/* one stage, three layers of 1.5 gradient bytes, 1-byte buckets */
	for (int k = 0; k < 3; k++)
		layers[k].params = 1.5;
	cfg.model.n_layers = 3;
	cfg.pipeline.stages = 1;
	cfg.pipeline.data_parallel = 2;
	cfg.pipeline.grad_bytes = 1;
	cfg.pipeline.dp_bucket_mb = 1e-6;
	ck_assert_int_eq(ppcc_plan_reduction_bound(&cfg), 5);
}
END_TEST

/* The bound holds for what the compiler places, whatever the split: a
 * 2-stage data-parallel plan of 4 layers, the budget refusing it by the
 * bound (its reductions named) and accepting it at the bound. */
START_TEST(reduction_bound_holds_for_the_plan_and_limits_it)
{
	char *dir = tu_mkdtemp();
	char *path = hostile(dir, "dp.yaml", 4, 4,
			     "  stages: 2\n  microbatches: 8\n  data_parallel: 2\n"
			     "  grad_bytes: 2\n  dp_bucket_mb: 4\n");
	/* params 1 a layer: the bucket holds everything, one a stage */
	ppcc_arena *a = ppcc_arena_new();
	tu_diag diag;
	tu_diag_init(&diag);
	ppcc_config cfg;
	ppcc_plan plan;
	ck_assert_int_eq(ppcc_config_load(&cfg, a, path, NULL, &diag.d), 0);
	ppcc_config_fill_defaults(&cfg);
	ck_assert_msg(ppcc_config_check(&cfg, &diag.d) == 0, "%s", diag.text);
	ck_assert_int_eq(ppcc_plan_reduction_bound(&cfg), 2);
	ck_assert_int_eq(ppcc_plan_action_bound(&cfg), 66);
	ck_assert_int_eq(ppcc_plan_budget_check(&cfg, PPCC_FMT_JSON, 66, &diag.d), 0);
	ck_assert_int_eq(ppcc_plan_budget_check(&cfg, PPCC_FMT_JSON, 65, &diag.d),
			 PPCC_EINPUT);
	ck_assert_msg(strstr(diag.text, "would make a schedule of up to 66 actions "
			     "(about 0.0 MB of memory and 0.0 MB of JSON output, up "
			     "to 2 of them gradient reductions), over the budget of "
			     "65 actions"), "%s", diag.text);
	ck_assert_int_eq(ppcc_plan_build(&plan, a, &cfg, &diag.d), 0);
	long long n = 0, reductions = 0;
	for (int r = 0; r < plan.best.schedule.n_ranks; r++)
		for (int i = 0; i < plan.best.schedule.ranks[r].n_actions; i++) {
			n++;
			reductions += plan.best.schedule.ranks[r].actions[i].op ==
				      PPCC_OP_REDUCE_GRAD;
		}
	ck_assert_int_eq(reductions, 2);
	ck_assert_int_eq(n, 66);
	/* ZeRO 3: each stage's 8 backwards reduce-scatter its one bucket
	 * and its 16 computes gather it, 48 collectives: the bound */
	cfg.pipeline.zero = 3;
	ck_assert_int_eq(ppcc_plan_reduction_bound(&cfg), 48);
	ck_assert_int_eq(ppcc_plan_build(&plan, a, &cfg, &diag.d), 0);
	long long coll = 0;
	n = 0;
	for (int r = 0; r < plan.best.schedule.n_ranks; r++)
		for (int i = 0; i < plan.best.schedule.ranks[r].n_actions; i++) {
			n++;
			coll += ppcc_op_is_collective(
				plan.best.schedule.ranks[r].actions[i].op);
		}
	ck_assert_int_eq(coll, 48);
	ck_assert_int_eq(n, 64 + 48);
	ppcc_arena_free(a);
	tu_rmtree_free(dir);
	free(path);
}
END_TEST

/* The count is the one ppcc_schedule_build produces, for every kind over
 * a sweep of sizes. */
START_TEST(action_count_is_what_the_schedule_holds)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_stage_info st[64];
	memset(st, 0, sizeof st);
	long compared = 0;
	/* the auto kind's count is every kind's (the next test) */
	for (int kind = 0; kind < PPCC_SCHED_COUNT; kind++)
		for (int p = 1; p <= 4; p++)
			for (int m = 1; m <= 12 && kind != PPCC_SCHED_AUTO; m++) {
				int v = ppcc_sched_kind_chunks(kind, p);
				ppcc_schedule s;
				if (ppcc_schedule_build(&s, a, kind, p, v, m, 0, st) < 0)
					continue; /* interleaved needs m >= p */
				long long n = 0;
				for (int r = 0; r < s.n_ranks; r++)
					n += s.ranks[r].n_actions;
				ppcc_pipeline pl = {.kind = kind, .stages = p,
						    .microbatches = m, .chunks = v};
				ck_assert_msg(ppcc_plan_action_count(&pl) == n,
					      "kind %d p %d m %d: %lld built", kind,
					      p, m, n);
				compared++;
			}
	ck_assert_int_gt(compared, 100);
	ppcc_arena_free(a);
}
END_TEST

/* The auto kind builds every kind's schedule in turn, each with the
 * chunks it takes (auto.c), and its orders' one-chunk schedules: its
 * count is at least what those schedules hold, equal when every kind
 * builds at these settings. */
START_TEST(auto_counts_every_kind_it_builds)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_stage_info st[64];
	memset(st, 0, sizeof st);
	long equal = 0;
	for (int p = 1; p <= 4; p++)
		for (int m = 1; m <= 12; m++) {
			long long built = 0;
			int all = 1;
			for (int kind = 0; kind < PPCC_SCHED_COUNT; kind++) {
				const ppcc_sched_kind_info *ki = ppcc_sched_kind(kind);
				if (ppcc_sched_pipes(kind) > 1)
					continue;
				int v = kind == PPCC_SCHED_AUTO ? 1 : ki->default_chunks;
				ppcc_schedule s;
				if (ppcc_schedule_build(&s, a, kind, p, v, m, 0, st) < 0) {
					all = 0;
					continue;
				}
				for (int r = 0; r < s.n_ranks; r++)
					built += s.ranks[r].n_actions;
			}
			ppcc_pipeline pl = {.kind = PPCC_SCHED_AUTO, .stages = p,
					    .microbatches = m, .chunks = 1};
			long long n = ppcc_plan_action_count(&pl);
			ck_assert_msg(n >= built && (!all || n == built),
				      "p %d m %d: %lld counted, %lld built", p, m,
				      n, built);
			equal += all;
		}
	ck_assert_int_ge(equal, 10);
	ppcc_arena_free(a);
}
END_TEST

/* -s auto at 2 stages and 25,000 microbatches: every kind's plan kept
 * peaked at 165 MB (at 300,000, 2.0 GB), three kept at 79 MB; one 1F1B
 * plan at 16 MB.  Over the sum of its kinds' actions it is refused. */
START_TEST(auto_holds_three_plans_and_counts_them_all)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/examples/tiny.yaml", tu_src());
	tu_run r;
	run_ppcc(&r, (const char *[]){"plan", path, "-p", "2", "-m", "25000",
				      "-s", "auto", NULL});
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	long peak = children_peak_kb();
	if (!tu_sanitized())
		ck_assert_msg(peak < 120 * 1024L, "peak memory %ld kB", peak);
	tu_run_free(&r);
	run_ppcc(&r, (const char *[]){"plan", path, "-p", "2", "-m", "40000",
				      "-s", "auto", NULL});
	ck_assert_msg(r.status == 1 && strstr(r.err, "2 stages x 40000 "
		      "microbatches would make schedules of up to 6160067 "
		      "actions in all, one a kind the auto kind tries"),
		      "exit %d: %s", r.status, r.err);
	tu_run_free(&r);
}
END_TEST

/* The reproductions, each of which ran for seconds to minutes
 * and took about 10 GB: refused at once, with the size and the option. */
START_TEST(small_hostile_files_are_refused_at_their_line)
{
	char *dir = tu_mkdtemp();
	char *big = hostile(dir, "big.yaml", 4096, 4096,
			    "  stages: 4096\n  microbatches: 4096\n");
	char *deep = hostile(dir, "deep.yaml", 64, 16,
			     "  stages: 16\n  microbatches: 1048576\n");
	char *wide = hostile(dir, "wide.yaml", 64, 4,
			     "  stages: 4\n  microbatches: 1048576\n");
	char out[600];
	snprintf(out, sizeof out, "%s/out.h", dir);
	struct {
		char *path;
		const char *fmt, *where, *size;
	} cases[] = {
		{big, "text", ":10:3: error: 4096 stages x 4096 microbatches",
		 "100646912 actions (about 3.0 GB of memory)"},
		{deep, "json", ":10:3: error: 16 stages x 1048576 microbatches",
		 "96468992 actions (about 2.9 GB of memory and 9.0 GB of JSON "
		 "output)"},
		{wide, "header", ":10:3: error: 4 stages x 1048576 microbatches",
		 "20971520 actions (about 629.1 MB of memory and 859.8 MB of "
		 "header output)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tu_run r;
		run_ppcc(&r, (const char *[]){"plan", cases[i].path, "-f",
					(char *)cases[i].fmt, "-o", out, NULL});
		ck_assert_msg(r.status == 1, "exit %d: %s", r.status, r.err);
		ck_assert_msg(strstr(r.err, cases[i].where) &&
			      strstr(r.err, cases[i].size) &&
			      strstr(r.err, "over the budget of 4000000 actions; "
				     "raise it with --max-actions N"),
			      "%s", r.err);
		/* the refusal comes before any schedule is built: the
		 * plans themselves took 629 MB to 10 GB (a sanitizer's
		 * build needs some more for its own tables) */
		long peak = children_peak_kb();
		ck_assert_msg(peak < (tu_sanitized() ? 400 : 100) * 1024L,
			      "peak memory %ld kB", peak);
		ck_assert(!tu_exists(out));
		tu_run_free(&r);
	}
	free(big);
	free(deep);
	free(wide);
	tu_rmtree_free(dir);
}
END_TEST

/* Gradient reductions past what ppcc can plan are the layer's range
 * error, at its line, not a budget --max-actions could meet; those
 * within it that make most of the actions name the bucket size too. */
START_TEST(reductions_beyond_the_range_are_the_layers_error)
{
	char *dir = tu_mkdtemp(), path[600];
	const char *text[] = {
		"model:\n  name: m\n  layers:\n"
		"    - {name: a, fwd_ms: 1, params: 1e30, repeat: 4}\n"
		"cluster: {devices: 16, device: h200}\n"
		"pipeline: {stages: 2}\n",
		"model:\n  name: m\n  layers:\n"
		"    - {name: a, fwd_ms: 1, params: 1e15, repeat: 4}\n"
		"cluster: {devices: 16, device: {preset: h200, memory_gib: "
		"1048576}}\n"
		"pipeline: {stages: 2}\n"};
	const char *want[] = {
		"4:7: error: layer 'a': weight and optimizer memory of 1.8e+31 "
		"bytes is out of the range ppcc can plan",
		"6:12: error: 2 stages x 8 microbatches would make a schedule "
		"of up to 100000065 actions (about 3.0 GB of memory, up to "
		"100000001 of them gradient reductions), over the budget of "
		"4000000 actions; raise it with --max-actions N, or make the "
		"gradient buckets larger (pipeline.dp_bucket_mb)"};
	for (int i = 0; i < 2; i++) {
		tu_write_in(path, sizeof path, dir, "r.yaml", text[i]);
		tu_run r;
		run_ppcc(&r, (const char *[]){"plan", path, NULL});
		ck_assert_msg(r.status == 1 && strstr(r.err, want[i]) &&
			      (i == 1 || !strstr(r.err, "--max-actions")),
			      "exit %d: %s", r.status, r.err);
		tu_run_free(&r);
	}
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(max_actions_raises_and_lowers_the_budget)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/examples/tiny.yaml", tu_src());
	tu_run r;
	/* tiny's plan has 160 actions: 159 refuses it, 160 takes it */
	run_ppcc(&r, (const char *[]){"plan", path, "--max-actions", "159", NULL});
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "tiny.yaml:32:3: error: 4 stages x 8 "
			     "microbatches would make a schedule of 160 actions") &&
		      strstr(r.err, "over the budget of 159 actions"), "%s", r.err);
	tu_run_free(&r);
	run_ppcc(&r, (const char *[]){"plan", path, "--max-actions", "160", NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	/* a command-line override is blamed as such */
	run_ppcc(&r, (const char *[]){"plan", path, "-m", "9", "--max-actions", "160",
				NULL});
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "ppcc: <command line>: error: 4 stages x 9 "
			     "microbatches would make a schedule of 180 actions"),
		      "%s", r.err);
	tu_run_free(&r);
	/* and a budget above the default lets a large plan through */
	run_ppcc(&r, (const char *[]){"plan", path, "-m", "200001", "-f", "text",
				"-o", "/dev/null", NULL});
	ck_assert_int_eq(r.status, 1);
	tu_run_free(&r);
	run_ppcc(&r, (const char *[]){"plan", path, "-m", "200001", "-f", "text",
				"-o", "/dev/null", "--max-actions", "4000020",
				NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	const char *bad[] = {"0", "-1", "abc", "12x", ""};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		run_ppcc(&r, (const char *[]){"plan", path, "--max-actions",
					(char *)bad[i], NULL});
		ck_assert_msg(r.status == 2 && strstr(r.err, "positive integer"),
			      "'%s': %d %s", bad[i], r.status, r.err);
		tu_run_free(&r);
	}
}
END_TEST

/* --view deps wrote nodes x ranks cluster lookups through agwrite:
 * 45.9 s at 16,000 stages.  As DOT it is now written in linear work
 * (check_dot's deps_dot_work_is_linear_in_the_stages counts it): at
 * 4,096 stages, a layer each (the most layers a file holds), it is
 * complete (a cluster per rank, a node per compute action, one transfer
 * edge per stage boundary each way).  Laid out (SVG) it is refused at
 * the stages setting. */
static void deps_dot_complete(const char *dir, int stages)
{
	char name[64], pipeline[128], out[600];
	snprintf(name, sizeof name, "wide%d.yaml", stages);
	snprintf(pipeline, sizeof pipeline,
		 "  stages: %d\n  microbatches: 1\n  schedule: gpipe\n", stages);
	char *wide = hostile(dir, name, stages, stages, pipeline);
	snprintf(out, sizeof out, "%s/deps%d.dot", dir, stages);
	tu_run r;
	run_ppcc(&r, (const char *[]){"plan", wide, "-f", "dot", "--view", "deps", "-o",
				out, NULL});
	ck_assert_msg(r.status == 0, "%d stages: exit %d: %s", stages, r.status,
		      r.err);
	tu_run_free(&r);
	size_t len;
	char *text = tu_read_file(out, &len);
	ck_assert_ptr_nonnull(text);
	long clusters = 0, nodes = 0, edges = 0;
	for (char *p = text; (p = strstr(p, "\n\tsubgraph cluster_rank")); p++)
		clusters++;
	for (char *p = text; (p = strstr(p, "\n\t\tr")); p++)
		nodes += p[4] >= '0' && p[4] <= '9'; /* not rankdir= */
	for (char *p = text; (p = strstr(p, " -> ")); p++)
		edges++;
	/* F and B per stage; F to F and B to B across each boundary, and
	 * F then B on each rank */
	ck_assert_int_eq(clusters, stages);
	ck_assert_int_eq(nodes, 2L * stages);
	ck_assert_int_eq(edges, 2L * (stages - 1) + stages);
	ck_assert_ptr_nonnull(strstr(text, "\n\t\tr3999a"));
	free(text);
	free(wide);
}

START_TEST(dependency_view_of_thousands_of_stages_is_complete_as_dot)
{
	char *dir = tu_mkdtemp();
	deps_dot_complete(dir, 4096);
	/* laid out, it is refused at the stages setting */
	char *wide = hostile(dir, "wide.yaml", 4000, 4000,
			     "  stages: 4000\n  microbatches: 1\n"
			     "  schedule: gpipe\n");
	char out[600];
	snprintf(out, sizeof out, "%s/deps.svg", dir);
	tu_run r;
	run_ppcc(&r, (const char *[]){"plan", wide, "-f", "svg", "--view", "deps", "-o",
				out, NULL});
	ck_assert_msg(r.status == 1, "exit %d: %s", r.status, r.err);
	ck_assert_msg(strstr(r.err, "wide.yaml:9:3: error: the dependency graph "
			     "of 4000 ranks would draw 8000 nodes in 4000 "
			     "clusters") && strstr(r.err, "(-f dot)") &&
		      strstr(r.err, "--view timeline"), "%s", r.err);
	ck_assert(!tu_exists(out));
	tu_run_free(&r);
	free(wide);
	/* and so at 64 ranks: 1,920 nodes in 64 clusters, which dot took
	 * 14-49 s to lay out, over the 32,768 node-cluster pairs */
	wide = hostile(dir, "w64.yaml", 128, 64,
		       "  stages: 64\n  microbatches: 16\n");
	run_ppcc(&r, (const char *[]){"plan", wide, "-f", "svg", "--view", "deps", "-o",
				out, NULL});
	ck_assert_msg(r.status == 1 && strstr(r.err, "the dependency graph of "
		      "64 ranks would draw 1920 nodes in 64 clusters, more "
		      "than 32768"), "exit %d: %s", r.status, r.err);
	ck_assert(!tu_exists(out));
	tu_run_free(&r);
	free(wide);
	tu_rmtree_free(dir);
}
END_TEST

/* A plan of over 4M actions, where the split search runs simulations
 * ahead on a second thread: --jobs 2 writes the bytes --jobs 1 writes. */
START_TEST(plan_on_two_threads_writes_what_one_writes)
{
	char *dir = tu_mkdtemp();
	char *path = hostile(dir, "big.yaml", 100, 64,
			     "  stages: 64\n  microbatches: 11100\n"
			     "  schedule: 1f1b\n");
	char out[2][600];
	for (int j = 0; j < 2; j++) {
		snprintf(out[j], sizeof out[j], "%s/out%d.txt", dir, j + 1);
		tu_run r;
		run_ppcc(&r, (const char *[]){"plan", path, "--jobs", j ? "2" : "1",
					"--max-actions", "100000000", "-o",
					out[j], NULL});
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
	}
	size_t n1, n2;
	char *a = tu_read_file(out[0], &n1), *b = tu_read_file(out[1], &n2);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert(strstr(a, "by 4 simulations; not proven optimal"));
	ck_assert_uint_eq(n1, n2);
	ck_assert(memcmp(a, b, n1) == 0);
	free(a);
	free(b);
	free(path);
	tu_rmtree_free(dir);
}
END_TEST

/* The partitioner's tables hold a byte per layer and virtual stage (the
 * path bound an int): 2^20 layers on 4096 stages asked for 4.3e9 cells
 * (4.5 GB, 29 s), on 2 stages of 1024 chunks for 2.1e9 (2.4 GB, 18 s).
 * A file now holds at most 4,096 layers, so no more than 2^24 cells
 * (a virtual stage holds a layer at least), under the default; below
 * it, both are refused at the key that makes them, with what brings
 * them under; --max-work moves the budget both ways and says so when
 * raised. */
START_TEST(partition_cells_are_refused_at_stages_and_chunks)
{
	char *dir = tu_mkdtemp();
	const char *head =
		"model:\n"
		"  name: m\n"
		"  layers:\n"
		"    - {name: a, fwd_flops: 1e9, params: 1e6, activation_bytes: "
		"1e6, stash_bytes: 1e6, repeat: 4096}\n"
		"cluster:\n";
	char text[1024], a1[600], a2[600], out[600];
	snprintf(a1, sizeof a1, "%s/a1.yaml", dir);
	snprintf(a2, sizeof a2, "%s/a2.yaml", dir);
	snprintf(out, sizeof out, "%s/out.json", dir);
	snprintf(text, sizeof text, "%s  devices: 4096\n"
		 "  device: {name: a100, tflops: 312, efficiency: 0.5, "
		 "memory_gib: 80}\n"
		 "pipeline: {stages: 4096, microbatches: 1, schedule: gpipe}\n",
		 head);
	ck_assert_int_eq(tu_write_file(a1, text), 0);
	snprintf(text, sizeof text, "%s  devices: 2\n"
		 "  device: {name: a100, tflops: 312, efficiency: 0.5, "
		 "memory_gib: 80}\n"
		 "pipeline: {stages: 2, microbatches: 2, chunks: 1024, "
		 "schedule: interleaved}\n", head);
	ck_assert_int_eq(tu_write_file(a2, text), 0);
	tu_run r;
	run_ppcc(&r, (const char *[]){"plan", a1, "-f", "json", "-o", out,
				      "--max-work", "1000000", NULL});
	ck_assert_msg(r.status == 1 && strstr(r.err, "a1.yaml:8:12: error: "
		      "stages: 4096 x 4096 layers need 16777216 partition "
		      "cells") && strstr(r.err, "over the budget of 1000000; "
		      "use fewer stages or raise it with --max-work N"),
		      "exit %d: %s", r.status, r.err);
	ck_assert(!tu_exists(out));
	tu_run_free(&r);
	run_ppcc(&r, (const char *[]){"plan", a2, "--max-work", "1000000", NULL});
	ck_assert_msg(r.status == 1 && strstr(r.err, "a2.yaml:8:40: error: "
		      "chunks: 2 stages x 1024 chunks x 4096 layers need "
		      "8388608 partition cells") && strstr(r.err, "use fewer "
		      "chunks or raise it with --max-work N"),
		      "exit %d: %s", r.status, r.err);
	tu_run_free(&r);
	/* tiny: 4 stages x 10 layers; 39 refuses it, 40 takes it */
	char tiny[1024];
	snprintf(tiny, sizeof tiny, "%s/examples/tiny.yaml", tu_src());
	run_ppcc(&r, (const char *[]){"plan", tiny, "--max-work", "39", NULL});
	ck_assert_msg(r.status == 1 && strstr(r.err, "tiny.yaml:31:3: error: "
		      "stages: 4 x 10 layers need 40 partition cells") &&
		      strstr(r.err, "over the budget of 39;"), "%s", r.err);
	tu_run_free(&r);
	run_ppcc(&r, (const char *[]){"plan", tiny, "--max-work", "40", NULL});
	ck_assert_msg(r.status == 0 && !*r.err, "%s", r.err);
	tu_run_free(&r);
	run_ppcc(&r, (const char *[]){"plan", tiny, "--max-work", "1000000000000",
				NULL});
	ck_assert_msg(r.status == 0 && strstr(r.err, "ppcc: note: --max-work "
		      "raises the work budget to 1000000000000 units from the "
		      "default 268435456"), "%s", r.err);
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

/* ppcc_search on text with default options but for o (NULL: none): its
 * status, *r and the diagnostics in *diag. */
static int search_text(ppcc_search_result *r, tu_diag *diag, ppcc_arena *a,
		       const char *dir, const char *text,
		       const ppcc_search_options *o)
{
	char path[600];
	tu_write_in(path, sizeof path, dir, "s.yaml", text);
	ppcc_config cfg;
	tu_diag_init(diag);
	ck_assert_int_eq(ppcc_config_load(&cfg, a, path, NULL, &diag->d), 0);
	ppcc_search_options so = {.fix = {.recompute = -1, .zero = -1,
					  .kind = -1}, .threads = 2};
	if (o)
		so = *o;
	return ppcc_search(r, a, &cfg, &so, &diag->d);
}

/* The search's reproducers: a 300-byte transformer of 2^20 (hidden,
 * heads, FFN, devices, batch) searched for 155 s and 6.8 GB; 2^20
 * layers on 256 devices, 37 s and 2.1 GB; Llama 3 8B on 2^20 devices
 * took 14 s to say no configuration fills them.  Each now counts no
 * more than its budget of work (units, not seconds), and is refused
 * before its work passes it. */
START_TEST(search_work_stays_within_its_budget)
{
	char *dir = tu_mkdtemp();
	ppcc_arena *a = ppcc_arena_new();
	ppcc_search_result r;
	tu_diag diag;
	/* at the budget these reproducers were measured against, 2^31 (the
	 * default's half: the default makes room for the ties a CLI search
	 * simulates) */
	ppcc_search_options half = {.fix = {.recompute = -1, .zero = -1,
					    .kind = -1}, .threads = 2,
				    .budget = {.max_work = (int64_t)1 << 31}};
	int err = search_text(&r, &diag, a, dir,
		"model:\n"
		"  name: huge\n"
		"  transformer:\n"
		"    layers: 32\n"
		"    hidden: 1048576\n"
		"    heads: 1048576\n"
		"    ffn_hidden: 1048576\n"
		"    vocab: 32000\n"
		"    seq_len: 2048\n"
		"cluster:\n"
		"  devices: 1048576\n"
		"  devices_per_node: 8\n"
		"  device: {name: h100, tflops: 989, efficiency: 0.4, "
		"memory_gib: 80}\n"
		"pipeline:\n"
		"  global_batch_size: 1048576\n", &half);
	ck_assert_msg(err == PPCC_EINPUT && strstr(diag.text, "10:1: error: "
		      "the search stopped at its") && strstr(diag.text,
		      "over the budget of 2147483648; fix some of them with "
		      "--fix KEY=VALUE"), "%d %s", err, diag.text);
	ck_assert_msg(r.work > 0 && r.work <= half.budget.max_work,
		      "%lld", (long long)r.work);
	ppcc_arena_reset(a);
	/* 4,096 layers (2^20 before the file's limit) on 256 devices, under
	 * a budget of 10^6 units: the expansion of its layers alone is over
	 * it, refused before any configuration is enumerated */
	ppcc_search_options so = {.fix = {.recompute = -1, .zero = -1,
					  .kind = -1}, .threads = 2,
				  .budget = {.max_work = 1000000}};
	err = search_text(&r, &diag, a, dir,
		"model:\n"
		"  name: m\n"
		"  layers:\n"
		"    - {name: a, fwd_flops: 1e9, params: 1e6, activation_bytes: "
		"1e6, stash_bytes: 1e6, repeat: 4096}\n"
		"cluster:\n"
		"  devices: 256\n"
		"  device: {name: a100, tflops: 312, efficiency: 0.5, "
		"memory_gib: 80}\n"
		"pipeline: {global_batch_size: 1}\n", &so);
	ck_assert_msg(err == PPCC_EINPUT && strstr(diag.text, "1:1: error: the "
		      "search's 1 settings of micro-batch size and recompute "
		      "expand 4096 layers, 1048576 units of work, over the "
		      "budget of 1000000"), "%d %s", err, diag.text);
	ck_assert_int_eq(r.considered, 0);
	ck_assert_int_eq(r.simulated, 0);
	ck_assert_msg(r.work <= 1000000, "%lld", (long long)r.work);
	ppcc_arena_reset(a);
	/* Llama 3 8B on 2^20 devices: nothing fills them, and the hints'
	 * searches (leaving devices idle: 954,720 configurations) share
	 * the budget */
	char *text = tu_read_src("examples/llama3-8b.yaml");
	char *at = strstr(text, "devices: 16\n");
	ck_assert_ptr_nonnull(at);
	size_t len = strlen(text);
	char *big = malloc(len + 16);
	snprintf(big, len + 16, "%.*sdevices: 1048576\n%s", (int)(at - text),
		 text, at + strlen("devices: 16\n"));
	err = search_text(&r, &diag, a, dir, big, NULL);
	ck_assert_msg(err == PPCC_EINFEASIBLE && strstr(diag.text, "error: no "
		      "configuration fills the 1048576 devices"), "%d %s", err,
		      diag.text);
	ck_assert_msg(r.work <= PPCC_SEARCH_WORK_DEFAULT, "%lld",
		      (long long)r.work);
	free(big);
	free(text);
	ppcc_arena_free(a);
	tu_rmtree_free(dir);
}
END_TEST

/* The search's errors say "raise it with --max-actions N": search takes
 * it, and --max-work, --time-limit; --exhaustive and a raised budget
 * say they lift the default. */
START_TEST(search_takes_the_budget_flags)
{
	char tiny[1024];
	snprintf(tiny, sizeof tiny, "%s/examples/tiny.yaml", tu_src());
	tu_run r;
	run_ppcc(&r, (const char *[]){"search", tiny, "--global-batch", "8",
				"--max-actions", "100000", "--top", "1", NULL});
	ck_assert_msg(r.status == 0 && !*r.err, "exit %d: %s", r.status, r.err);
	tu_run_free(&r);
	run_ppcc(&r, (const char *[]){"search", tiny, "--global-batch", "8",
				"--max-work", "4096", NULL});
	ck_assert_msg(r.status == 1 && strstr(r.err, "error: the search's first "
		      "1 configurations need more than 4619 units") &&
		      strstr(r.err, "over the budget of 4096"), "exit %d: %s",
		      r.status, r.err);
	tu_run_free(&r);
	run_ppcc(&r, (const char *[]){"search", tiny, "--global-batch", "8",
				"--exhaustive", "--top", "1", NULL});
	ck_assert_msg(r.status == 0 && strstr(r.err, "ppcc: note: --exhaustive "
		      "lifts the search's work budget of 4294967296 units; its "
		      "72 configurations count"), "exit %d: %s", r.status, r.err);
	tu_run_free(&r);
	run_ppcc(&r, (const char *[]){"search", tiny, "--global-batch", "8",
				"--max-work", "5000000000", "--top", "1", NULL});
	ck_assert_msg(r.status == 0 && strstr(r.err, "ppcc: note: --max-work "
		      "raises the search's work budget"), "exit %d: %s",
		      r.status, r.err);
	tu_run_free(&r);
	/* a limit that is always reached before the first simulation */
	run_ppcc(&r, (const char *[]){"search", tiny, "--global-batch", "8",
				"--time-limit", "1e-9", NULL});
	ck_assert_msg(r.status == 1 && strstr(r.err, "--time-limit: stopped "
		      "after 1e-09 s"), "exit %d: %s", r.status, r.err);
	tu_run_free(&r);
	run_ppcc(&r, (const char *[]){"search", tiny, "--global-batch", "8",
				"--fix", "stages=1048576", NULL});
	ck_assert_msg(r.status == 1 && strstr(r.err, "ppcc: <command line>: "
		      "error: --fix: stages 1048576 exceeds the 4 devices"),
		      "exit %d: %s", r.status, r.err);
	tu_run_free(&r);
	const char *bad[] = {"--max-actions", "--max-work"};
	for (size_t i = 0; i < 2; i++) {
		run_ppcc(&r, (const char *[]){"search", tiny, (char *)bad[i], "0", NULL});
		ck_assert_msg(r.status == 2 && strstr(r.err, "positive integer"),
			      "%s", r.err);
		tu_run_free(&r);
	}
}
END_TEST

Suite *suite_budget(void)
{
	return tu_suite("budget", "budget", 300, (const TTest *const[]){
		action_count_matches_hand_counts,
		reduction_bound_matches_hand_counts,
		reduction_bound_holds_for_the_plan_and_limits_it,
		action_count_is_what_the_schedule_holds,
		auto_counts_every_kind_it_builds,
		auto_holds_three_plans_and_counts_them_all,
		small_hostile_files_are_refused_at_their_line,
		max_actions_raises_and_lowers_the_budget,
		reductions_beyond_the_range_are_the_layers_error,
		dependency_view_of_thousands_of_stages_is_complete_as_dot,
		plan_on_two_threads_writes_what_one_writes,
		partition_cells_are_refused_at_stages_and_chunks,
		search_work_stays_within_its_budget,
		search_takes_the_budget_flags,
		NULL});
}
