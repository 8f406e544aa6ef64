/*
 * bounds.c - lower bounds on the step and the iteration of every split
 * of a plan, from its cost tables alone.
 *
 * Four, each proven for every split that fits: the step bound the
 * output compares with (m x the least bottleneck, and with v chunks the
 * least total over p); bound.c's, from per-layer minima over the device
 * groups and per-rank least p2p (the search prunes a configuration on it
 * before any shape or partition is built, and it is kept across the
 * search's configurations); the last rank's bubble with one chunk; and
 * for GPipe and 1F1B with one chunk the least path bound
 * (ppcc_partition_path_bound), when its dynamic program is cheap enough.
 * ppcc_plan_iteration_bound adds to a step bound the gradient reductions
 * and the optimizer step as iteration.c adds them, from the settings and
 * layers alone.  Each allows for the tables' rounding to picoseconds (a
 * picosecond a microbatch and a stage) and the double sums (a relative
 * 1e-9).
 *
 * Derivation: doc/design/bound.md and doc/design/search.md (the bounds
 * that make pruning safe), doc/design/plan.md (the path bound).
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "plan/ctx.h"

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return a < b ? -1 : a > b;
}

int ppcc_plan_step_lower_bound(ppcc_plan_ctx *x, int64_t bottleneck,
			       ppcc_plan_step_bounds *out)
{
	int64_t b = bottleneck;
	double total = 0;
	if (x->v > 1 || b < 0) {
		int64_t *nocap;
		int *first;
		if (!ALLOC(nocap, x->S) || !ALLOC(first, x->S))
			return PPCC_ENOMEM;
		for (int s = 0; s < x->S; s++)
			nocap[s] = INT64_MAX;
		ppcc_part_problem free_pb = x->pb;
		free_pb.mem_cap = nocap;
		int err = ppcc_partition_solve(first, &b, &free_pb);
		if (err < 0)
			return err;
		/* least total: each layer on its cheapest device, each stage
		 * paying its least boundary costs */
		const ppcc_part_problem *pb = &x->pb;
		for (int i = 0; i < x->n; i++) {
			int64_t least = INT64_MAX;
			for (int s = 0; s < x->S; s++) {
				int64_t w = pb->work[s][i + 1] - pb->work[s][i];
				least = w < least ? w : least;
			}
			total += (double)least;
		}
		for (int s = 0; s < x->S; s++) {
			int64_t in = INT64_MAX, out_c = INT64_MAX;
			for (int i = s; i <= x->n - x->S + s; i++) {
				if (s > 0 && pb->comm_in[s][i] < in)
					in = pb->comm_in[s][i];
				if (s < x->S - 1 && pb->comm_out[s][i] < out_c)
					out_c = pb->comm_out[s][i];
			}
			total += (double)(s > 0 ? in : 0) + (double)(s < x->S - 1 ? out_c : 0);
		}
		total = total / x->p - x->S;
	}
	double per_mb = (double)(b - x->S);
	if (total > per_mb)
		per_mb = total;
	out->bottleneck_ps = b;
	out->step_ms = per_mb > 0 ? x->m * per_mb / 1e9 : 0;
	return 0;
}

/* The bound of bound.c from the cost tables, in picoseconds: per layer
 * the least over the device groups of its F, of its F + B (the lead
 * under (c), at most the work: the F and B of the group of least F + B
 * are at least the least F and the least B), and of its F + B as work;
 * per rank the least p2p of its stages' boundaries with other ranks,
 * each direction's send and receive at least the table's value less a
 * picosecond for the two (the simulator does not round them). */
/* bp's layer terms: per layer the least over the device groups of its
 * F, F + B and B (and I under a split backward), as prefix sums forward
 * and, for the backward's lead, from the last layer; the least F + B and
 * B sorted, as prefix sums of the smallest. */
static int pipe_layers(ppcc_plan_ctx *x, ppcc_bound_problem *bp)
{
	const ppcc_sched_kind_info *ki = ppcc_sched_kind(x->kind);
	int n = x->n, G = x->cfg->cluster.n_groups;
	int tail = ki && !ki->split_backward && x->kind != PPCC_SCHED_AUTO;
	int split = ki && ki->split_backward;
	double *lf, *lfb, *work, *least, *blead, *bwork, *bleast, *bx;
	if (!ALLOC(lf, n + 1) || !ALLOC(lfb, n + 1) || !ALLOC(work, n + 1) ||
	    !ALLOC(least, n + 1) || !ALLOC(blead, n + 1) ||
	    !ALLOC(bwork, n + 1) || !ALLOC(bleast, n + 1) || !ALLOC(bx, n))
		return PPCC_ENOMEM;
	double *sorted = least + 1, *bsorted = bleast + 1;
	for (int i = 0; i < n; i++) {
		int64_t f = INT64_MAX, b = INT64_MAX, fb = INT64_MAX, in = INT64_MAX;
		for (int g = 0; g < G; g++) {
			int64_t gf = x->work_f[g][i + 1] - x->work_f[g][i];
			int64_t gfb = x->work_fb[g][i + 1] - x->work_fb[g][i];
			int64_t gi = gfb - gf -
				     (split ? x->work_w[g][i + 1] - x->work_w[g][i] : 0);
			f = gf < f ? gf : f;
			b = gfb - gf < b ? gfb - gf : b;
			fb = gfb < fb ? gfb : fb;
			in = gi < in ? gi : in;
		}
		lf[i + 1] = lf[i] + (double)f;
		lfb[i + 1] = lfb[i] + (double)(f + b);
		work[i + 1] = work[i] + (double)fb;
		sorted[i] = (double)fb;
		bsorted[i] = (double)b;
		bx[i] = (double)in;
	}
	qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
	qsort(bsorted, (size_t)n, sizeof *bsorted, cmp_double);
	least[0] = bleast[0] = 0;
	blead[0] = lf[n];
	for (int i = 1; i <= n; i++) {
		least[i] += least[i - 1];
		bleast[i] += bleast[i - 1];
		/* from the last layer: its input gradient and whole backward
		 * (the least B over the groups, at least the least I) */
		blead[i] = blead[i - 1] + bx[n - i];
		bwork[i] = bwork[i - 1] + (lfb[n - i + 1] - lfb[n - i]) -
			   (lf[n - i + 1] - lf[n - i]);
	}
	bp->lead_f_prefix = lf;
	bp->lead_fb_prefix = tail ? lfb : NULL;
	bp->work_prefix = work;
	bp->least_prefix = least;
	bp->back_lead_prefix = blead;
	bp->back_work_prefix = bwork;
	bp->back_least_prefix = bleast;
	return 0;
}

/* bp's rank terms: each rank's first stage, stage count and stages
 * after its last, and the least p2p of its stages' boundaries with
 * other ranks, less a picosecond each. */
static int pipe_ranks(ppcc_plan_ctx *x, ppcc_bound_problem *bp)
{
	int n = x->n, p = x->p;
	double *extra;
	int *first, *count, *last;
	if (!ALLOC(extra, p) || !ALLOC(first, p) || !ALLOC(count, p) ||
	    !ALLOC(last, p))
		return PPCC_ENOMEM;
	int64_t minc[2] = {INT64_MAX, INT64_MAX};
	for (int k = 0; k < 2; k++)
		for (int j = 0; j + 1 < n; j++)
			minc[k] = x->comm[k][j] < minc[k] ? x->comm[k][j] : minc[k];
	for (int r = 0; r < p; r++)
		first[r] = -1;
	int contiguous = x->S == p;
	for (int s = 0; s < x->S; s++) {
		int r = x->place[s].rank;
		if (r < 0 || r >= p)
			return PPCC_EINTERNAL;
		contiguous &= r == s;
		if (first[r] < 0)
			first[r] = s;
		last[r] = x->S - 1 - s;
		count[r]++;
		int in = s > 0 ? x->stage_link[s - 1] : -1, out = x->stage_link[s];
		if (in >= 0 && minc[in] != INT64_MAX)
			extra[r] += (double)(minc[in] - 1);
		if (out >= 0 && minc[out] != INT64_MAX)
			extra[r] += (double)(minc[out] - 1);
	}
	for (int r = 0; r < p; r++)
		if (first[r] < 0)
			return PPCC_EINTERNAL;
	bp->extra = extra;
	bp->first_stage = first;
	bp->stage_count = count;
	bp->contiguous = contiguous;
	bp->back_first_stage = last;
	return 0;
}

int ppcc_plan_pipe_bound_ps(ppcc_plan_ctx *x, double *out_ps)
{
	if (x->pipe_have) {
		*out_ps = x->pipe_ps;
		return 0;
	}
	ppcc_bound_problem bp = {
		.n_layers = x->n, .n_ranks = x->p, .microbatches = x->m};
	int err;
	if ((err = pipe_layers(x, &bp)) < 0 || (err = pipe_ranks(x, &bp)) < 0)
		return err;
	/* the same problem, the same bound: kept across the search's
	 * candidates (bound.c) */
	*out_ps = x->pipe_ps = ppcc_bound_step_memo(x->bound_memo, &bp);
	x->pipe_have = 1;
	return 0;
}

/* A bound on the iteration of every split, for ppcc search's pruning
 * (only ppcc_plan_build_lean uses it; ppcc plan prints the step bound
 * above as its gap).  The iteration is sync + post (iteration.c): sync
 * the latest of the step and every rank's end of its gradient
 * reductions, post the largest of the ranks' optimizer steps.  The
 * step is at least the larger of step_ms
 * (ppcc_plan_step_lower_bound), bound.c's (ppcc_plan_pipe_bound_ps: every rank waits for the
 * forward through the stages before its first, then runs its layers' m
 * microbatches and their p2p, and without a split backward its last
 * gradient runs back through the stages before it) and, with one chunk:
 *
 *   - the bubble of the last rank (S = p, stage s on rank s): rank p-1's
 *     first action is RECV_F(p-1, j) for some j (its F needs the input,
 *     its B, I or W their F), which starts no earlier than the matching
 *     SEND_F, after F(p-2, j) ended, which started after its own input
 *     arrived: no earlier than F_0 + ... + F_{p-2}.  Its actions then run
 *     one after another: m x its stage time (compute and both p2p
 *     directions, the partitioner's stage time).  When its last action
 *     is SEND_B(p-1, j') (checked on the schedule), the gradient of j'
 *     must still pass back through stages p-2..0, each receive starting
 *     no earlier than its send and each B (or I, which sends it, under a
 *     split backward) after its receive:
 *       step >= sum_{s<p-1} (F_s + Bx_s) + m T_{p-1}
 *     with Bx_s = B_s or I_s (0 when the last action is not SEND_B).  A
 *     layer's F_s + Bx_s is at least its least over the device groups,
 *     so with the last stage from layer i on, over every split:
 *       step >= min_{p-1 <= i < n} lead(i) + m T_{p-1}(i..n-1).
 *
 * Rounding: the tables' picoseconds (a picosecond a microbatch and a
 * stage, as the path bound allows).  ppcc_plan_iteration_bound adds the
 * rest. */
int ppcc_plan_iteration_lower_bound(ppcc_plan_ctx *x,
				    const ppcc_schedule *shape,
				    double step_ms, double *out_ms)
{
	const ppcc_part_problem *pb = &x->pb;
	const ppcc_sched_kind_info *ki = ppcc_sched_kind(x->kind);
	int n = x->n, S = x->S, p = x->p;
	if (x->v == 1 && p > 1 && S == p && x->place[S - 1].rank == p - 1 &&
	    shape->n_ranks == p) {
		const ppcc_rank_schedule *rs = &shape->ranks[p - 1];
		int tail = rs->n_actions > 0 &&
			   rs->actions[rs->n_actions - 1].op == PPCC_OP_SEND_B &&
			   rs->actions[rs->n_actions - 1].stage == S - 1;
		int split = ki && ki->split_backward;
		double lead = 0, least = INFINITY;
		for (int i = 0; i < n; i++) {
			if (i >= p - 1) {
				int64_t last = pb->work[S - 1][n] - pb->work[S - 1][i] +
					       pb->comm_in[S - 1][i];
				double v = lead + (double)x->m * (double)last;
				if (v < least)
					least = v;
			}
			/* the least F + Bx of layer i on the first p - 1 ranks */
			int64_t best = INT64_MAX;
			for (int r = 0; r < p - 1; r++) {
				int g = x->rank_group[r];
				int64_t f = x->work_f[g][i + 1] - x->work_f[g][i];
				int64_t bx = x->work_fb[g][i + 1] - x->work_fb[g][i] - f;
				if (split)
					bx -= x->work_w[g][i + 1] - x->work_w[g][i];
				int64_t w = f + (tail ? bx : 0);
				best = w < best ? w : best;
			}
			lead += (double)best;
		}
		double bubble = (least - 2.0 * x->m - S - 2) / 1e9;
		if (bubble > step_ms)
			step_ms = bubble;
	}
	if (p > 1) {
		double ps;
		int err = ppcc_plan_pipe_bound_ps(x, &ps);
		if (err < 0)
			return err;
		double pipe = (ps - (double)x->m - S - 2) / 1e9;
		if (pipe > step_ms)
			step_ms = pipe;
	}
	*out_ms = ppcc_plan_iteration_bound(x->cfg, step_ms);
	return 0;
}

/* The rest of the iteration's bound, from the step's:
 *
 *   - the reductions: a rank's channel runs its REDUCE_GRADs one after
 *     another from time 0 or later, so sync >= the largest sum of one
 *     rank's reduction times >= their sum over the p ranks / p; each
 *     stage's buckets hold its gradient bytes (G x params / t a layer,
 *     rounded to a byte a stage) and each costs its latency plus its
 *     bytes at the per-byte rate, at least one bucket a bucket_bytes, and
 *     under ZeRO 2 and 3 each of the m backwards reduces them; latency
 *     and rate are ppcc_comm_dp_rates', which depend on the
 *     configuration alone (one algorithm, chosen at the bucket size,
 *     prices every bucket), so every stage has these and both are >= 0;
 *   - post: the largest rank's optimizer step is at least their
 *     average, and their sum over the ranks follows from the parameters
 *     per device (split-independent) at the fastest memory.  The ZeRO
 *     parameter gathers are not counted: they run in the step, where
 *     under ZeRO 1 and 2 the later stages' hide behind the first
 *     forwards, and under ZeRO 3 each hides behind the compute before
 *     the one it serves (the step bound counts only the computes and
 *     p2p, which the gathers can only delay).
 * So iteration >= max(step bound, reductions / p) + post / p, less a
 * relative 1e-9 for the sums in double. */
double ppcc_plan_iteration_bound(const ppcc_config *cfg, double step_ms)
{
	const ppcc_cluster *cl = &cfg->cluster;
	const ppcc_pipeline *pl = &cfg->pipeline;
	int n = cfg->model.n_layers, p = pl->stages, t = pl->tensor_parallel;
	int S = p * (pl->chunks > 0 ? pl->chunks : 1);
	int dp = pl->data_parallel > 0 ? pl->data_parallel : 1;
	int cp = pl->context_parallel > 0 ? pl->context_parallel : 1;
	int nn = dp * cp, zero = pl->zero;
	if (p < 1 || t < 1)
		return 0;
	double G = pl->grad_bytes, params = 0;
	for (int i = 0; i < n; i++) {
		/* a rank holding the first and last layers keeps the last's
		 * shared_params once: counted out, as a bound may */
		ppcc_layer l = cfg->model.layers[i];
		l.params -= l.shared_params;
		params += ppcc_memory_device_params(&l, pl);
	}
	double sync = step_ms, post = 0;
	if (nn > 1) {
		ppcc_stage_cost rates = {0};
		ppcc_comm_dp_rates(&rates, cfg);
		double bytes = G * params - S;
		if (bytes > 0) {
			double red = rates.dp_reduce_ms * bytes /
				     (ppcc_dp_bucket_bytes(pl) + 1) +
				     rates.dp_reduce_ms_per_byte * bytes;
			if (zero >= 2)
				red *= pl->microbatches;
			if (red / p > sync)
				sync = red / p;
		}
	}
	double bw = 0;
	for (int g = 0; g < cl->n_groups; g++)
		if (cl->groups[g].memory_bandwidth > bw)
			bw = cl->groups[g].memory_bandwidth;
	if (bw > 0)
		post += ppcc_memory_step_ms(cfg, params, bw);
	double b = (sync + post / p) * (1 - 1e-9);
	return b > 0 ? b : 0;
}

/* With one chunk, the least path bound over the splits that fit
 * (ppcc_partition_path_bound) when its dynamic program is cheap enough:
 * at most PATH_BOUND_WORK inner steps over its bisection; *out_ok says
 * whether it ran, out_split gets the split it ends on.  The simulator's p2p times are not
 * rounded to picoseconds as the tables are: each stage's input term and
 * each microbatch of a stage's time are allowed a picosecond either way. */
#define PATH_BOUND_WORK ((int64_t)1 << 24)

int ppcc_plan_path_lower_bound(ppcc_plan_ctx *x, const int *split,
			       int64_t bottleneck, double *out_ms,
			       int *out_split, int *out_ok)
{
	const ppcc_part_problem *pb = &x->pb;
	int64_t longest = 0, value = 0, before = 0;
	for (int s = 0; s < x->S; s++) {
		int i = split[s], j = s + 1 < x->S ? split[s + 1] - 1 : x->n - 1;
		if (j - i + 1 > longest)
			longest = j - i + 1;
		int64_t t = ppcc_plan_stage_time(x, s, i, j);
		if (before + x->m * t > value)
			value = before + x->m * t;
		before += pb->work[s][j + 1] - pb->work[s][i] +
			  (s > 0 ? pb->comm_in[s][i] : 0);
	}
	*out_ok = 0;
	if ((int64_t)x->S * x->n * 2 * longest * 21 > PATH_BOUND_WORK)
		return 0;
	int64_t lo = x->m * bottleneck, least;
	if (lo > value)
		lo = value;
	int err = ppcc_partition_path_bound(&least, out_split, pb, x->m, lo, value);
	if (err < 0)
		return err == PPCC_EINFEASIBLE ? PPCC_EINTERNAL : err;
	*out_ms = (double)(least - 2 * (int64_t)x->m - x->S - 1) / 1e9;
	*out_ok = 1;
	return 0;
}
