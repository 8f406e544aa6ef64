/*
 * bench_runtime.c - what the runtime costs, and how well the plan
 * predicts a run.
 *
 * 1. Overhead per action on the local transport.  The same callbacks
 *    (each touches one byte) run in a plain loop in a valid serial order
 *    and under the runtime, for many steps after one warm-up: with one
 *    rank (the runtime's own bookkeeping: slots, pool, flight record) and
 *    with four ranks in threads (plus matching, copying and waking the
 *    peers), eager, grouped and in debug mode.
 *
 * 2. Predicted against measured.  A model from examples/ is planned with
 *    free communication (links of infinite bandwidth, no latency) and
 *    small messages, then run on the local transport with callbacks that
 *    sleep each stage's planned forward and backward time, scaled so a
 *    step lasts a few hundred milliseconds.  Reported: the measured step
 *    over the simulated one, and each rank's bubble (idle share of the
 *    step) predicted and measured.  Sleeps overshoot by tens of
 *    microseconds, which the scale keeps to a few percent.
 *
 * 3. Predicted against measured, p x d.  Interleaved over p ranks,
 *    v = 2, m = 8,
 *    every stage forward 5 ms and backward 10 ms, d replicas whose
 *    stage reductions each take 30 ms (the local group's test delay);
 *    the prediction is the simulated step with each stage's reduction
 *    launched after its last backward on the rank's channel
 *    (ppcc_dp_reduce_timeline).  Reported: predicted and measured step,
 *    the pipeline alone, the pipeline followed by the rank's reductions
 *    in sequence, and per rank the time in collectives (each from its
 *    start to its sum) and the longest wait for them after the last
 *    action.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ppcc.h"
#include "ppcc/runtime.h"
#include "runtime/rt.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A copy of s whose every message carries `bytes` (stage table and
 * actions), with its fingerprint redone. */
static int with_bytes(ppcc_schedule *out, ppcc_arena *a, const ppcc_schedule *s,
		      uint64_t bytes)
{
	ppcc_stage_info *st = ppcc_arena_alloc(a, (size_t)s->n_stages, sizeof *st);
	ppcc_rank_schedule *rs = ppcc_arena_alloc(a, (size_t)s->n_ranks, sizeof *rs);
	if (!st || !rs)
		return PPCC_ENOMEM;
	for (int i = 0; i < s->n_stages; i++) {
		st[i] = s->stages[i];
		st[i].recv_bytes = i > 0 ? bytes : 0;
		st[i].send_bytes = i < s->n_stages - 1 ? bytes : 0;
	}
	for (int r = 0; r < s->n_ranks; r++) {
		ppcc_action *acts = ppcc_arena_alloc(a, (size_t)s->ranks[r].n_actions,
						     sizeof *acts);
		if (!acts)
			return PPCC_ENOMEM;
		for (int i = 0; i < s->ranks[r].n_actions; i++) {
			acts[i] = s->ranks[r].actions[i];
			if (acts[i].op >= PPCC_OP_SEND_F)
				acts[i].bytes = bytes;
		}
		rs[r] = s->ranks[r];
		rs[r].actions = acts;
	}
	*out = *s;
	out->stages = st;
	out->ranks = rs;
	out->fingerprint = ppcc_schedule_fingerprint(out);
	return 0;
}

/* ---- 1. overhead ------------------------------------------------------------- */

static volatile unsigned char sink;

static int touch_forward(int stage, int mb, const void *input, size_t in_n,
			 void *output, size_t out_n, void *user)
{
	(void)user;
	(void)in_n;
	if (output && out_n)
		((unsigned char *)output)[0] = (unsigned char)(stage + mb);
	if (input)
		sink = ((const unsigned char *)input)[0];
	return 0;
}

static int touch_backward(int stage, int mb, const void *grad_output,
			  size_t go_n, void *grad_input, size_t gi_n, void *user)
{
	(void)user;
	(void)go_n;
	if (grad_input && gi_n)
		((unsigned char *)grad_input)[0] = (unsigned char)(stage - mb);
	if (grad_output)
		sink = ((const unsigned char *)grad_output)[0];
	return 0;
}

typedef struct bench_rank {
	pthread_t th;
	const ppcc_schedule *s;
	const ppcc_rt_stage_fns *fns;
	ppcc_rt_options o;
	int rank, steps, status;
	double t; /* seconds for the timed steps */
} bench_rank;

static void *bench_rank_main(void *arg)
{
	bench_rank *b = arg;
	ppcc_rt *rt = NULL;
	if ((b->status = ppcc_rt_init(&rt, b->s, b->rank, &b->o)) == 0 &&
	    (b->status = ppcc_rt_step(NULL, rt, b->fns)) == 0) {
		double t0 = now_s();
		for (int k = 0; k < b->steps && b->status == 0; k++)
			b->status = ppcc_rt_step(NULL, rt, b->fns);
		b->t = now_s() - t0;
	}
	ppcc_rt_free(rt);
	return NULL;
}

/* Seconds per step of the runtime (the slowest rank). */
static double runtime_step_s(const ppcc_schedule *s, const ppcc_rt_stage_fns *fns,
			     int steps, int grouped, int debug)
{
	ppcc_rt_local_world *w;
	bench_rank b[16];
	double worst = 0;
	if (ppcc_rt_local_world_new(&w, s->n_ranks) != 0)
		return NAN;
	for (int r = 0; r < s->n_ranks; r++) {
		ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
		o.world = w;
		o.grouped = grouped;
		o.debug = debug;
		b[r] = (bench_rank){.s = s, .fns = fns, .o = o, .rank = r, .steps = steps};
		pthread_create(&b[r].th, NULL, bench_rank_main, &b[r]);
	}
	for (int r = 0; r < s->n_ranks; r++) {
		pthread_join(b[r].th, NULL);
		if (b[r].status != 0)
			worst = NAN;
		else if (b[r].t > worst)
			worst = b[r].t;
	}
	ppcc_rt_local_world_free(w);
	return worst / steps;
}

/* Seconds per step of a plain loop making the same calls in a valid
 * serial order (every forward of a microbatch, then every backward). */
static double loop_step_s(const ppcc_schedule *s, int steps)
{
	/* called through pointers, as the runtime calls them */
	ppcc_rt_forward_fn volatile fwd = touch_forward;
	ppcc_rt_backward_fn volatile bwd = touch_backward;
	size_t n = 64;
	unsigned char *act = calloc((size_t)s->n_stages + 1, n);
	double t0 = now_s();
	for (int k = 0; k < steps; k++)
		for (int mb = 0; mb < s->n_microbatches; mb++) {
			for (int st = 0; st < s->n_stages; st++)
				fwd(st, mb, st ? act + n * (size_t)st : NULL, n,
					      st < s->n_stages - 1 ? act + n * (size_t)(st + 1) : NULL,
					      n, NULL);
			for (int st = s->n_stages - 1; st >= 0; st--)
				bwd(st, mb, st < s->n_stages - 1 ? act : NULL, n,
					       st ? act + n : NULL, n, NULL);
		}
	double t = (now_s() - t0) / steps;
	free(act);
	return t;
}

static int bench_overhead(void)
{
	static const struct { int kind, p, v, m; } cases[] = {
		{PPCC_SCHED_INTERLEAVED, 1, 4, 64},
		{PPCC_SCHED_1F1B, 4, 1, 64},
		{PPCC_SCHED_INTERLEAVED, 4, 2, 64},
	};
	ppcc_rt_stage_fns fns[64];
	for (int i = 0; i < 64; i++)
		fns[i] = (ppcc_rt_stage_fns){touch_forward, touch_backward, NULL, NULL,
					     NULL, NULL, PPCC_RT_STAGE_FNS_VERSION};
	printf("runtime overhead, local transport (64-byte messages, 200 steps)\n");
	printf("  %-22s %8s %12s %12s %12s %12s\n", "schedule", "actions",
	       "loop us", "eager us", "grouped us", "debug us");
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		ppcc_arena *a = ppcc_arena_new();
		ppcc_stage_info st[64];
		ppcc_schedule s0, s;
		int S = cases[c].p * cases[c].v;
		memset(st, 0, sizeof st);
		for (int k = 0; k < S; k++) {
			st[k].recv_bytes = k ? 64 : 0;
			st[k].send_bytes = k < S - 1 ? 64 : 0;
		}
		if (ppcc_schedule_build(&s0, a, cases[c].kind, cases[c].p, cases[c].v,
					cases[c].m, 0, st) != 0 ||
		    with_bytes(&s, a, &s0, 64) != 0) {
			fprintf(stderr, "bench_runtime: cannot build case %zu\n", c);
			return 1;
		}
		int max_actions = 0;
		for (int r = 0; r < s.n_ranks; r++)
			if (s.ranks[r].n_actions > max_actions)
				max_actions = s.ranks[r].n_actions;
		int steps = 200;
		double loop = loop_step_s(&s, steps);
		double eager = runtime_step_s(&s, fns, steps, 0, 0);
		double grouped = runtime_step_s(&s, fns, steps, 1, 0);
		double debug = runtime_step_s(&s, fns, steps, 0, 1);
		char name[64];
		snprintf(name, sizeof name, "%s p=%d v=%d m=%d",
			 ppcc_schedule_kind_name(cases[c].kind), cases[c].p,
			 cases[c].v, cases[c].m);
		printf("  %-22s %8d %12.1f %12.1f %12.1f %12.1f\n", name, max_actions,
		       loop * 1e6, eager * 1e6, grouped * 1e6, debug * 1e6);
		printf("  %-22s %8s %12s %9.0f ns/action (eager, slowest rank's list)\n",
		       "", "", "", (eager - loop / s.n_ranks) / max_actions * 1e9);
		ppcc_arena_free(a);
	}
	return 0;
}

/* ---- 2. predicted against measured ------------------------------------------------ */

typedef struct sleepy {
	const ppcc_stage_cost *costs;
	double scale; /* real seconds per planned millisecond */
} sleepy;

static void sleep_s(double s)
{
	struct timespec ts;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

static int sleepy_forward(int stage, int mb, const void *input, size_t in_n,
			  void *output, size_t out_n, void *user)
{
	const sleepy *z = user;
	(void)mb; (void)input; (void)in_n; (void)output; (void)out_n;
	sleep_s(z->costs[stage].fwd_ms * z->scale);
	return 0;
}

static int sleepy_backward(int stage, int mb, const void *go, size_t go_n,
			   void *gi, size_t gi_n, void *user)
{
	const sleepy *z = user;
	(void)mb; (void)go; (void)go_n; (void)gi; (void)gi_n;
	sleep_s(z->costs[stage].bwd_ms * z->scale);
	return 0;
}

typedef struct predict_rank {
	pthread_t th;
	const ppcc_schedule *s;
	const ppcc_rt_stage_fns *fns;
	ppcc_rt_options o;
	int rank, steps, status;
	double step_s, busy_s; /* means over the timed steps */
} predict_rank;

static void *predict_main(void *arg)
{
	predict_rank *b = arg;
	ppcc_rt *rt = NULL;
	ppcc_rt_stats st = PPCC_RT_STATS_INIT;
	if ((b->status = ppcc_rt_init(&rt, b->s, b->rank, &b->o)) == 0 &&
	    (b->status = ppcc_rt_step(&st, rt, b->fns)) == 0)
		for (int k = 0; k < b->steps && b->status == 0; k++) {
			b->status = ppcc_rt_step(&st, rt, b->fns);
			b->step_s += st.step_s / b->steps;
			b->busy_s += st.busy_s / b->steps;
		}
	ppcc_rt_free(rt);
	return NULL;
}

static int bench_predict(const char *model, int kind, int chunks, double target_ms)
{
	char path[4096];
	const char *src = getenv("PPCC_SRC");
	snprintf(path, sizeof path, "%s/examples/%s", src ? src : ".", model);
	ppcc_arena *a = ppcc_arena_new();
	ppcc_diag d = {NULL, NULL, 0, 0};
	ppcc_config cfg;
	ppcc_plan plan;
	ppcc_schedule s;
	int err;
	if ((err = ppcc_config_load(&cfg, a, path, NULL, &d)) != 0) {
		fprintf(stderr, "bench_runtime: cannot load %s\n", path);
		ppcc_arena_free(a);
		return 1;
	}
	if (kind >= 0) {
		cfg.pipeline.kind = kind;
		cfg.pipeline.chunks = chunks;
	}
	/* free communication: the local transport's copies are not modelled */
	cfg.cluster.intra_node.bandwidth = cfg.cluster.inter_node.bandwidth = 1e30;
	cfg.cluster.intra_node.latency = cfg.cluster.inter_node.latency = 0;
	if ((err = ppcc_config_check(&cfg, &d)) != 0 ||
	    (err = ppcc_plan_build(&plan, a, &cfg, &d)) != 0 ||
	    (err = with_bytes(&s, a, &plan.best.schedule, 256)) != 0) {
		fprintf(stderr, "bench_runtime: cannot plan %s (%d)\n", path, err);
		ppcc_arena_free(a);
		return 1;
	}
	const ppcc_estimate *e = &plan.best.estimate;
	sleepy z = {plan.best.costs, target_ms / e->step_ms * 1e-3};
	ppcc_rt_stage_fns fns[256];
	for (int k = 0; k < s.n_stages && k < 256; k++)
		fns[k] = (ppcc_rt_stage_fns){sleepy_forward, sleepy_backward, NULL,
					     NULL, NULL, &z, PPCC_RT_STAGE_FNS_VERSION};
	ppcc_rt_local_world *w;
	predict_rank b[64];
	if (s.n_ranks > 64 || ppcc_rt_local_world_new(&w, s.n_ranks) != 0) {
		ppcc_arena_free(a);
		return 1;
	}
	for (int r = 0; r < s.n_ranks; r++) {
		ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
		o.world = w;
		b[r] = (predict_rank){.s = &s, .fns = fns, .o = o, .rank = r, .steps = 3};
		pthread_create(&b[r].th, NULL, predict_main, &b[r]);
	}
	double step = 0;
	for (int r = 0; r < s.n_ranks; r++) {
		pthread_join(b[r].th, NULL);
		if (b[r].status != 0)
			err = 1;
		if (b[r].step_s > step)
			step = b[r].step_s;
	}
	ppcc_rt_local_world_free(w);
	double predicted = e->step_ms * z.scale;
	printf("  %-12s %-11s p=%d v=%d m=%-3d  predicted %7.1f ms  measured %7.1f ms"
	       "  ratio %.3f\n", model, ppcc_schedule_kind_name(s.kind), s.n_ranks,
	       s.n_chunks, s.n_microbatches, predicted * 1e3, step * 1e3,
	       step / predicted);
	printf("  %-12s bubble per rank, predicted/measured:", "");
	for (int r = 0; r < s.n_ranks; r++) {
		double bp = e->idle_ms[r] / e->step_ms;
		double bm = 1 - b[r].busy_s / step;
		printf(" %.3f/%.3f", bp, bm);
	}
	printf("\n");
	ppcc_arena_free(a);
	return err;
}

/* ---- 3. predicted against measured, p x d -------------------------------------- */

typedef struct grid_rank {
	pthread_t th;
	const ppcc_schedule *s;
	const ppcc_rt_stage_fns *fns;
	ppcc_rt_options o;
	double grad[16][4];
	int rank, steps, status;
	double step_s, reduce_s, wait_s; /* means over the timed steps */
} grid_rank;

static void *grid_main(void *arg)
{
	grid_rank *b = arg;
	ppcc_rt *rt = NULL;
	ppcc_rt_stats st = PPCC_RT_STATS_INIT;
	if ((b->status = ppcc_rt_init(&rt, b->s, b->rank, &b->o)) != 0)
		return NULL;
	for (int k = 0; k < b->s->n_stages && b->status == 0; k++)
		if (b->s->stages[k].rank == b->rank)
			b->status = ppcc_rt_grad_register(rt, k, 0, b->grad[k % 16], 4);
	for (int k = 0; k <= b->steps && b->status == 0; k++) {
		double red, wait;
		b->status = ppcc_rt_step(&st, rt, b->fns);
		if (k == 0 || b->status != 0) /* warm-up */
			continue;
		ppcc_rt_dp_stats(rt, &red, &wait);
		b->step_s += st.step_s / b->steps;
		b->reduce_s += red / b->steps;
		b->wait_s += wait / b->steps;
	}
	ppcc_rt_free(rt);
	return NULL;
}

/* One run of d replicas of s, each reduction lasting at least delay_s:
 * the longest mean step, time in collectives and wait after the last
 * action over the ranks.  0 or 1. */
static int grid_run(const ppcc_schedule *s, const ppcc_rt_stage_fns *fns, int d,
		    double delay_s, double *step, double *red, double *wait)
{
	int p = s->n_ranks, err = 0;
	ppcc_rt_local_world *w[8] = {NULL};
	ppcc_rt_dp_group *g[8] = {NULL};
	grid_rank *b = calloc((size_t)(p * d), sizeof *b);
	if (!b || p > 8 || d > 8) {
		free(b);
		return 1;
	}
	for (int r = 0; r < d; r++)
		err |= ppcc_rt_local_world_new(&w[r], p);
	for (int k = 0; k < p; k++) {
		err |= ppcc_rt_dp_group_new(&g[k], d);
		if (g[k])
			ppcc_rt_dp_group_set_delay(g[k], delay_s);
	}
	int started = 0;
	for (int i = 0; i < p * d && !err; i++, started++) {
		ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
		o.world = w[i / p];
		o.dp_group = g[i % p];
		o.replica = i / p;
		b[i] = (grid_rank){.s = s, .fns = fns, .o = o, .rank = i % p, .steps = 3};
		pthread_create(&b[i].th, NULL, grid_main, &b[i]);
	}
	*step = *red = *wait = 0;
	for (int i = 0; i < started; i++) {
		pthread_join(b[i].th, NULL);
		if (b[i].status != 0)
			err = 1;
		*step = b[i].step_s > *step ? b[i].step_s : *step;
		*red = b[i].reduce_s > *red ? b[i].reduce_s : *red;
		*wait = b[i].wait_s > *wait ? b[i].wait_s : *wait;
	}
	for (int k = 0; k < p; k++)
		ppcc_rt_dp_group_free(g[k]);
	for (int r = 0; r < d; r++)
		ppcc_rt_local_world_free(w[r]);
	free(b);
	return err;
}

static int bench_grid(int p, int d)
{
	const int m = 8, v = 2, S = p * v;
	const double f_ms = 5, b_ms = 10, r_ms = 30;
	ppcc_arena *a = ppcc_arena_new();
	ppcc_stage_info st[16];
	ppcc_stage_cost costs[16], scaled[16];
	ppcc_schedule s;
	ppcc_estimate e, es;
	double reduce_ms[16], measured_ms[16], predicted, calibrated;
	for (int k = 0; k < S; k++) {
		st[k] = (ppcc_stage_info){k, k % p, k / p, k, k, k > 0 ? 64 : 0,
					  k < S - 1 ? 64 : 0};
		costs[k] = (ppcc_stage_cost){.fwd_ms = f_ms, .bwd_ms = b_ms};
		reduce_ms[k] = r_ms;
	}
	if (S > 16 || ppcc_schedule_build(&s, a, PPCC_SCHED_INTERLEAVED, p, v, m, 0, st) != 0 ||
	    ppcc_simulate(&e, a, &s, costs) != 0 ||
	    ppcc_dp_reduce_timeline(NULL, &predicted, &s, costs, &e, reduce_ms) != 0) {
		ppcc_arena_free(a);
		return 1;
	}
	sleepy z = {costs, 1e-3};
	ppcc_rt_stage_fns fns[16];
	for (int k = 0; k < S; k++)
		fns[k] = (ppcc_rt_stage_fns){sleepy_forward, sleepy_backward, NULL,
					     NULL, NULL, &z, PPCC_RT_STAGE_FNS_VERSION};
	double pipe, step, red, wait, x, y;
	int err = grid_run(&s, fns, d, 0, &pipe, &x, &y) |
		  grid_run(&s, fns, d, r_ms * 1e-3, &step, &red, &wait);
	/* the prediction again for what this machine gave: compute as
	 * stretched as the pipeline's measured step, reductions as long
	 * as measured */
	for (int k = 0; k < S && !err; k++) {
		scaled[k] = costs[k];
		scaled[k].fwd_ms *= pipe * 1e3 / e.step_ms;
		scaled[k].bwd_ms *= pipe * 1e3 / e.step_ms;
		measured_ms[k] = red * 1e3 / v;
	}
	if (!err && (ppcc_simulate(&es, a, &s, scaled) != 0 ||
		     ppcc_dp_reduce_timeline(NULL, &calibrated, &s, scaled, &es,
					     measured_ms) != 0))
		err = 1;
	if (!err)
		printf("  %dx%d  %8.1f %8.1f %8.1f  %8.1f %8.1f %5.3f  %8.1f %5.3f  %8.1f %8.1f\n",
		       p, d, e.step_ms, e.step_ms + v * r_ms, predicted, pipe * 1e3,
		       step * 1e3, step * 1e3 / predicted, calibrated,
		       step * 1e3 / calibrated, red * 1e3, wait * 1e3);
	ppcc_arena_free(a);
	return err;
}

/* bench_runtime [grid]: every part, or the p x d part alone. */
int main(int argc, char **argv)
{
	int only_grid = argc > 1 && strcmp(argv[1], "grid") == 0;
	int err = only_grid ? 0 : bench_overhead();
	if (only_grid)
		goto grid;
	printf("\npredicted vs measured step, local transport, callbacks sleep the "
	       "planned times\n");
	err |= bench_predict("tiny.yaml", PPCC_SCHED_GPIPE, 1, 200);
	err |= bench_predict("tiny.yaml", PPCC_SCHED_1F1B, 1, 200);
	err |= bench_predict("tiny.yaml", PPCC_SCHED_INTERLEAVED, 2, 200);
	err |= bench_predict("hetero.yaml", -1, 1, 300);
	err |= bench_predict("llama2-70b.yaml", -1, 2, 400);
grid:
	printf("\npredicted vs measured step, p x d, local transport: interleaved "
	       "v=2 m=8, F 5 ms, B 10 ms per stage, 30 ms per stage's gradient "
	       "reduction\n(ms; 'seq': the pipeline then the rank's reductions; "
	       "'for measured parts': the prediction with compute stretched as "
	       "the measured pipeline was and reductions as long as measured; "
	       "'coll': a rank's time in collectives, 'wait': after its last "
	       "action, the most of any rank)\n"
	       "        simulated                   measured                  "
	       "for measured parts  measured\n"
	       "  pxd   pipeline      seq  predict  pipeline     step ratio   "
	       "predict ratio      coll     wait\n");
	static const int grid[][2] = {{1, 2}, {2, 1}, {2, 2}, {4, 2}, {2, 4}};
	for (size_t k = 0; k < sizeof grid / sizeof grid[0]; k++)
		err |= bench_grid(grid[k][0], grid[k][1]);
	return err ? 1 : 0;
}
