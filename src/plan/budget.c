/*
 * budget.c - what a plan will cost, known before it is built.
 *
 * A model file of a few hundred bytes can ask for millions of stages times
 * microbatches; the schedule, its simulation and its output all grow with
 * the number of actions.  The count follows from the pipeline's settings
 * alone:
 *
 *   actions = m * (c * S + 4 * X),  S = p * v,  c = 2 or 3,
 *             X = S - 1 looped, S - 2 on the V, 0 when p == 1,
 *
 * plus a data-parallel plan's collectives, bounded over every partition
 * (exact when the gradients fit one bucket a stage).  Building costs
 * about 30 bytes of memory per action; the output's size per action is
 * its format's row's (emit/formats.c; ppcc(1), RESOURCE LIMITS).  Over
 * the budget the plan is refused with an error at the setting that makes
 * it large.
 *
 * Derivation: doc/design/budget.md (the action count, the bound on the
 * collectives over every partition, the bytes per action).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "ppcc.h"

static int64_t kind_action_count(const ppcc_pipeline *pl)
{
	int64_t p = pl->stages, v = pl->chunks > 0 ? pl->chunks : 1;
	int64_t m = pl->microbatches, S = p * v;
	const ppcc_sched_kind_info *k = ppcc_sched_kind(pl->kind);
	int v_shape = k && k->placement == PPCC_PLACE_V && v == 2;
	if (p < 1 || m < 1)
		return 0;
	/* p, v and m are ints: S < 2^62, so 7 S may not fit; past 2^59
	 * stages the count saturates, as the product with m does */
	if (S > ((int64_t)1 << 59))
		return INT64_MAX;
	/* with pipelines (DualPipe), each has its own boundaries and runs
	 * m / pipes microbatches; the V's turn is then no boundary */
	int64_t pipes = ppcc_sched_pipes(pl->kind);
	int64_t crossing = p == 1 ? 0 : pipes > 1 ? S - pipes : S - 1 - v_shape;
	int64_t per_mb = 4 * crossing;
	m /= pipes;
	if (per_mb > INT64_MAX / m)
		return INT64_MAX;
	int64_t local = ppcc_sched_local_actions(pl->kind, (int)p, (int)v,
						 pl->microbatches,
						 pl->group_size);
	if (local > INT64_MAX - per_mb * m)
		return INT64_MAX;
	return per_mb * m + local;
}

/* The auto kind builds each kind's schedule in turn, as auto.c chooses
 * their chunks, and its orders' one-chunk schedules: its count is their
 * sum, of which it holds at most three plans at once. */
static int64_t auto_action_count(const ppcc_pipeline *pl, int *out_kinds)
{
	int given = pl->chunks_loc.file ? pl->chunks : 0;
	int64_t sum = 0;
	*out_kinds = 0;
	for (int k = 0; k < PPCC_SCHED_COUNT; k++) {
		const ppcc_sched_kind_info *ki = ppcc_sched_kind(k);
		if ((ki->max_chunks > 1 && given == 1) || ppcc_sched_pipes(k) > 1)
			continue;
		ppcc_pipeline q = *pl;
		q.kind = k;
		if (k == PPCC_SCHED_AUTO)
			q.chunks = 1;
		else if (ki->max_chunks == 1 || !given)
			q.chunks = ki->default_chunks;
		int64_t n = kind_action_count(&q);
		if (n > INT64_MAX - sum)
			return INT64_MAX;
		sum += n;
		++*out_kinds;
	}
	return sum;
}

int64_t ppcc_plan_action_count(const ppcc_pipeline *pl)
{
	int kinds;
	return pl->kind == PPCC_SCHED_AUTO ? auto_action_count(pl, &kinds)
					   : kind_action_count(pl);
}

/* ceil(G / B): the gradient buckets of every layer on one device. */
static double grad_buckets(const ppcc_config *cfg)
{
	const ppcc_pipeline *pl = &cfg->pipeline;
	int64_t S = (int64_t)pl->stages * (pl->chunks > 0 ? pl->chunks : 1);
	double G = 0, B = ppcc_dp_bucket_bytes(pl);
	int whole = 1;
	for (int k = 0; k < cfg->model.n_layers; k++) {
		double g = ppcc_memory_device_params(&cfg->model.layers[k], pl) *
			   pl->grad_bytes;
		if (!(g >= 0))
			g = 0;
		whole &= g == floor(g);
		G += g;
	}
	if (!whole)
		G += 0.5 * (double)S;
	B = B >= 1 ? floor(B + 0.5) : 1;
	return ceil(G / B);
}

int64_t ppcc_plan_reduction_bound(const ppcc_config *cfg)
{
	const ppcc_pipeline *pl = &cfg->pipeline;
	int64_t dp = pl->data_parallel > 0 ? pl->data_parallel : 1;
	int64_t cp = pl->context_parallel > 0 ? pl->context_parallel : 1;
	int64_t S = (int64_t)pl->stages * (pl->chunks > 0 ? pl->chunks : 1);
	if (dp * cp <= 1 || S < 1)
		return 0;
	double buckets = grad_buckets(cfg);
	if (!(buckets < 0x1p62))
		return INT64_MAX;
	int64_t n = (int64_t)buckets + S - 1;
	n = n > S ? n : S;
	/* ZeRO 1 and 2: an ALL_GATHER_PARAM per bucket as well; ZeRO 3:
	 * per microbatch a round of reductions and two of gathers */
	if (pl->zero == 3) {
		int64_t m = pl->microbatches > 0 ? pl->microbatches : 1;
		return n > INT64_MAX / 3 / m ? INT64_MAX : 3 * m * n;
	}
	return pl->zero == 1 || pl->zero == 2 ? 2 * n : n;
}

int64_t ppcc_plan_action_bound(const ppcc_config *cfg)
{
	/* the auto kind: each schedule it builds has its reductions */
	int kinds = 1;
	int64_t n = cfg->pipeline.kind == PPCC_SCHED_AUTO
		    ? auto_action_count(&cfg->pipeline, &kinds)
		    : kind_action_count(&cfg->pipeline);
	int64_t r = ppcc_plan_reduction_bound(cfg);
	r = r > INT64_MAX / kinds ? INT64_MAX : r * kinds;
	return r > INT64_MAX - n ? INT64_MAX : n + r;
}

int64_t ppcc_plan_cell_count(const ppcc_config *cfg)
{
	const ppcc_pipeline *pl = &cfg->pipeline;
	int64_t n = cfg->model.n_layers > 0 ? cfg->model.n_layers : 0;
	int64_t S = (int64_t)(pl->stages > 0 ? pl->stages : 1) *
		    (pl->chunks > 0 ? pl->chunks : 1);
	return n > 0 && S > INT64_MAX / n ? INT64_MAX : n * S;
}

/* The cells over b's budget: an error at stages, or at chunks when they
 * are the larger factor, with what would bring them under. */
static int cells_check(const ppcc_config *cfg, int64_t max_work, ppcc_diag *d)
{
	const ppcc_pipeline *pl = &cfg->pipeline;
	int64_t cells = ppcc_plan_cell_count(cfg);
	if (max_work <= 0)
		max_work = PPCC_MAX_WORK_DEFAULT;
	if (cells <= max_work)
		return 0;
	int v = pl->chunks > 0 ? pl->chunks : 1;
	int by_chunks = v > pl->stages && pl->chunks_loc.file;
	const ppcc_loc *loc = by_chunks ? &pl->chunks_loc : &pl->stages_loc;
	if (!loc->file)
		loc = pl->loc.file ? &pl->loc : &cfg->model.loc;
	char what[96];
	if (by_chunks)
		snprintf(what, sizeof what, "chunks: %d stages x %d chunks",
			 pl->stages, v);
	else if (v > 1)
		snprintf(what, sizeof what, "stages: %d x %d chunks", pl->stages,
			 v);
	else
		snprintf(what, sizeof what, "stages: %d", pl->stages);
	/* about 1.1 bytes a cell: 1.13 GB at 2^30 (2^18 layers x 4096) */
	double bytes = 1.1 * (double)cells;
	ppcc_error(d, loc, "%s x %d layers need %lld partition cells (about "
		   "%.1f %s of tables), over the budget of %lld; use fewer %s "
		   "or raise it with --max-work N", what, cfg->model.n_layers,
		   (long long)cells, bytes / (bytes >= 1e9 ? 1e9 : 1e6),
		   bytes >= 1e9 ? "GB" : "MB", (long long)max_work,
		   by_chunks ? "chunks" : "stages");
	return PPCC_EINPUT;
}

int ppcc_plan_budget_check(const ppcc_config *cfg, int format,
			   int64_t max_actions, ppcc_diag *d)
{
	ppcc_budget b = {.max_actions = max_actions};
	return ppcc_plan_budget_check_work(cfg, format, &b, d);
}

int ppcc_plan_budget_check_work(const ppcc_config *cfg, int format,
				const ppcc_budget *b, ppcc_diag *d)
{
	const ppcc_pipeline *pl = &cfg->pipeline;
	int64_t reductions = ppcc_plan_reduction_bound(cfg);
	int64_t n = ppcc_plan_action_bound(cfg);
	int64_t max_actions = b ? b->max_actions : 0;
	if (max_actions <= 0)
		max_actions = PPCC_MAX_ACTIONS_DEFAULT;
	/* gradients of 2^62 buckets or more are beyond what ppcc can plan
	 * (over INT64_MAX / 4 bytes): the layer's range check says so, at
	 * its line (plan/tables.c), not a budget it would never meet */
	int64_t actions = ppcc_plan_action_count(pl);
	if (n <= max_actions || (reductions == INT64_MAX &&
				 !(grad_buckets(cfg) < 0x1p62) &&
				 actions <= max_actions))
		return cells_check(cfg, b ? b->max_work : 0, d);
	/* every schedule's reductions (the auto kind builds several) */
	if (reductions > 0 && n < INT64_MAX)
		reductions = n - actions;
	/* blame the larger of the two factors, where it was set */
	int64_t S = (int64_t)pl->stages * (pl->chunks > 0 ? pl->chunks : 1);
	const ppcc_loc *loc = pl->microbatches >= S ? &pl->microbatches_loc
						    : &pl->stages_loc;
	if (!loc->file)
		loc = pl->microbatches >= S ? &pl->stages_loc
					    : &pl->microbatches_loc;
	if (!loc->file)
		loc = pl->loc.file ? &pl->loc : &cfg->model.loc;
	/* mostly reductions: blame the bucket size when it was set */
	if (reductions > n - reductions && pl->dp_bucket_mb_loc.file)
		loc = &pl->dp_bucket_mb_loc;
	double memory = 30.0 * (double)n;
	const ppcc_format_info *fi = ppcc_format_of(format);
	double out = fi ? fi->bytes_per_action * (double)n : 0;
	const char *unit = memory >= 1e9 ? "GB" : "MB";
	double scale = memory >= 1e9 ? 1e9 : 1e6;
	char size[96];
	if (out > 0)
		snprintf(size, sizeof size, "about %.1f %s of memory and %.1f %s "
			 "of %s output", memory / scale, unit,
			 out / (out >= 1e9 ? 1e9 : 1e6), out >= 1e9 ? "GB" : "MB",
			 fi->title);
	else
		snprintf(size, sizeof size, "about %.1f %s of memory",
			 memory / scale, unit);
	char of_them[96] = "";
	if (reductions > 0)
		snprintf(of_them, sizeof of_them, ", up to %lld of them %s",
			 (long long)reductions,
			 pl->zero >= 1 && pl->zero <= 3
			 ? "gradient reductions and parameter gathers"
			 : "gradient reductions");
	int all = pl->kind == PPCC_SCHED_AUTO;
	int buckets = reductions > n - reductions;
	ppcc_error(d, loc, "%d stages x %d microbatches would make %s of "
		   "%s%lld actions%s (%s%s), over the budget of %lld actions; "
		   "raise it with --max-actions N%s", (int)S, pl->microbatches,
		   all ? "schedules" : "a schedule",
		   reductions > 0 ? "up to " : "", (long long)n,
		   all ? " in all, one a kind the auto kind tries" : "", size,
		   of_them, (long long)max_actions,
		   buckets ? ", or make the gradient buckets larger "
			     "(pipeline.dp_bucket_mb)" : "");
	return PPCC_EINPUT;
}
