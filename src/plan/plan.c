/*
 * plan.c - from a checked configuration to a scheduled, simulated plan:
 * the driver and the entry points of plan.h.
 *
 * The driver (ppcc_plan_drive) sets up the cost tables and the shape
 * (tables.c), takes the proxy's split (partition.c: the least
 * bottleneck within each stage's share of its rank's memory), proves the
 * step bounds (bounds.c), and searches the split of least simulated step
 * (split.c) from four seeds: the proxy's split, the uniform one
 * (baseline.c), the least path bound's for GPipe and 1F1B, and an
 * explicit partition when one is given, which is then planned as given
 * with ppcc's split beside it.  The winner becomes the plan's schedule
 * (variant.c); the uniform split is the comparison.  When nothing fits,
 * nofit.c reports it.  The entry points are modes of the one driver:
 * ppcc_plan_build (the whole plan; auto.c for the auto kind),
 * ppcc_plan_choose_split (the split alone), ppcc_plan_build_lean and
 * _pruned (the search's: no baseline, no validation, a threshold on the
 * bounds, shapes from a cache).  A plan under the same configuration is
 * the same bytes whichever mode built it.
 *
 * Derivation: doc/design/plan.md (every term of the cost model).
 */
#include <string.h>

#include "plan/ctx.h"

static ppcc_loc where_partition(const ppcc_config *cfg)
{
	if (cfg->pipeline.partition_loc.file)
		return cfg->pipeline.partition_loc;
	return cfg->pipeline.loc.file ? cfg->pipeline.loc
				      : (ppcc_loc){cfg->path, 0, 0};
}

/* What the driver's steps hand on, one build's. */
typedef struct drive {
	ppcc_plan_ctx *x;
	const ppcc_config *cfg;
	ppcc_diag *d;
	int search;                /* as ppcc_plan_drive's */
	const ppcc_plan_lean *lean;
	ppcc_schedule shape;
	int *first, *uni;          /* the proxy's split, the uniform one */
	int *given;                /* the explicit partition's, or NULL */
	int *path_split, path_ok;  /* the least path bound's, when run */
	double path_ms;
	int64_t bottleneck;        /* the proxy's, when it fits */
	int proxy;                 /* 0, or PPCC_EINFEASIBLE: none fits */
	ppcc_plan_step_bounds lb;
	int *chosen;               /* the split search's */
	ppcc_step_result res;
	ppcc_estimate uni_est, best_est; /* as the split search simulated */
	int uni_have, best_have;
} drive;

/* The proxy, the exact least bottleneck within each stage's share of
 * its rank's memory (the whole rank with one chunk, where that is the
 * simulated peak exactly; 1/v of it with v chunks, sufficient), and the
 * step bound.  Nonzero: what the build returns (1: lean's threshold
 * passed); *out_done when it returns 0 here. */
static int drive_proxy(drive *dv, int *out_done)
{
	ppcc_plan_ctx *x = dv->x;
	const ppcc_plan_lean *lean = dv->lean;
	int err;
	*out_done = 0;
	dv->proxy = ppcc_partition_solve(dv->first, &dv->bottleneck, &x->pb);
	if (dv->proxy < 0 && dv->proxy != PPCC_EINFEASIBLE)
		return dv->proxy;
	if (dv->proxy == PPCC_EINFEASIBLE && x->v == 1) {
		if (!dv->search)
			return PPCC_EINFEASIBLE;
		return ppcc_plan_report_no_fit(x, dv->cfg, dv->d);
	}
	if (dv->proxy == PPCC_EINFEASIBLE && lean &&
	    (err = ppcc_plan_lean_no_fit(x)) != 0)
		return err;
	if (!dv->search && dv->proxy == 0) {
		*out_done = 1;
		return 0;
	}
	if ((err = ppcc_plan_step_lower_bound(
		     x, dv->proxy == 0 ? dv->bottleneck : -1, &dv->lb)) < 0)
		return err;
	if (lean && lean->bound_ms) {
		double it;
		if ((err = ppcc_plan_iteration_lower_bound(x, &dv->shape,
							   dv->lb.step_ms,
							   &it)) < 0)
			return err;
		*lean->bound_ms = it;
		if (lean->stage_bounds_ms)
			lean->stage_bounds_ms[1] = it;
		if (it > lean->above_ms)
			return 1;
	}
	if (dv->proxy == PPCC_EINFEASIBLE) {
		int stage;
		int64_t over;
		if ((err = ppcc_partition_min_overflow(dv->first, &stage, &over,
						       &x->pb)) < 0)
			return err;
	}
	return 0;
}

/* The other seeds of the split search: an explicit partition, planned
 * as given and also a seed of ppcc's own search, which therefore never
 * does worse; with one chunk, the least path bound and the split that
 * reaches it. */
static int drive_seeds(drive *dv)
{
	ppcc_plan_ctx *x = dv->x;
	const ppcc_pipeline *pl = &dv->cfg->pipeline;
	dv->given = NULL;
	if (pl->partition) {
		if (pl->n_partition != x->S || !ALLOC(dv->given, x->S))
			return pl->n_partition != x->S ? PPCC_EINTERNAL : PPCC_ENOMEM;
		for (int s = 0, at = 0; s < x->S; at += pl->partition[s++])
			dv->given[s] = at;
	}
	dv->path_ms = 0;
	dv->path_ok = 0;
	if (!ALLOC(dv->path_split, x->S))
		return PPCC_ENOMEM;
	if (x->v == 1 && x->p > 1 && dv->proxy == 0 &&
	    (x->kind == PPCC_SCHED_1F1B || x->kind == PPCC_SCHED_GPIPE))
		return ppcc_plan_path_lower_bound(x, dv->first, dv->bottleneck,
						  &dv->path_ms, dv->path_split,
						  &dv->path_ok);
	return 0;
}

/* The split of least simulated step (split.c) from the seeds, into
 * dv->chosen and dv->res, keeping the uniform split's simulation and,
 * for the plan that is written, the winner's. */
static int drive_search(drive *dv, ppcc_arena *a, int *out_first)
{
	ppcc_plan_ctx *x = dv->x;
	const ppcc_config *cfg = dv->cfg;
	const int *seeds[4] = {dv->first, dv->uni,
			       dv->path_ok ? dv->path_split : NULL, dv->given};
	dv->uni_have = dv->best_have = 0;
	ppcc_step_problem sp = {
		.n_layers = x->n,
		.shape = &dv->shape,
		.costs = ppcc_plan_split_costs_fn,
		.stage_cost = ppcc_plan_stage_costs_fn,
		.user = x,
		.rank_cap = x->rank_cap,
		.seeds = seeds,
		.n_seeds = 4,
		.max_sims = cfg->pipeline.max_simulations,
		.threads = cfg->pipeline.threads,
		.probe = cfg->probe,
		.lower_bound_ms = dv->lb.step_ms,
		.keep = dv->uni,
		.kept = &dv->uni_est,
		.kept_arena = a,
		.kept_have = &dv->uni_have,
		/* the winner's simulation, for the plan that is written */
		.best = dv->search && !out_first && !dv->given ? &dv->best_est
							       : NULL,
		.best_have = &dv->best_have,
		.best_no_times = cfg->pipeline.no_times,
	};
	ppcc_step_ctx *sc = NULL;
	if (!ALLOC(dv->chosen, x->S))
		return PPCC_ENOMEM;
	int err = ppcc_partition_step(dv->chosen, &dv->res, &sc, &sp);
	ppcc_step_ctx_free(sc);
	if (err == PPCC_EINFEASIBLE && dv->search)
		return ppcc_plan_report_no_fit_simulated(x, cfg, dv->d,
							 dv->chosen, &dv->res,
							 &dv->shape);
	return err;
}

/* The given partition does not fit: a warning at it naming the rank
 * that overflows most. */
static void warn_given(const drive *dv, const ppcc_plan *out)
{
	const ppcc_plan_ctx *x = dv->x;
	const double *peak = out->best.estimate.peak_memory_bytes;
	int worst = 0;
	for (int r = 1; r < x->p; r++)
		if (peak[r] - x->rank_cap[r] > peak[worst] - x->rank_cap[worst])
			worst = r;
	ppcc_loc at = where_partition(dv->cfg);
	ppcc_warning(dv->d, &at, "the given partition does not fit: rank %d "
		     "peaks at %.2f GiB of %.2f GiB per device", worst,
		     gib(peak[worst]), gib(x->rank_cap[worst]));
}

/* The plan: one schedule, the one it writes (the given split's when
 * there is one, ppcc's otherwise); the other variants are simulated on
 * its lists.  Without lean, the uniform baseline and the caps too. */
static int drive_write(drive *dv, ppcc_plan *out)
{
	ppcc_plan_ctx *x = dv->x;
	const ppcc_config *cfg = dv->cfg;
	int err;
	out->config = cfg;
	out->model_name = cfg->model.name;
	out->n_layers = x->n;
	out->layers = cfg->model.layers;
	ppcc_plan_variant *own = dv->given ? &out->own : &out->best;
	if (dv->given) {
		if ((err = ppcc_plan_variant_best(x, &out->best, dv->given,
						  &dv->shape, NULL)) < 0 ||
		    (err = ppcc_plan_variant_uniform(x, own, dv->chosen,
						     &out->best.schedule,
						     NULL)) < 0)
			return err;
	} else if ((err = ppcc_plan_variant_best(
			    x, own, dv->chosen, &dv->shape,
			    dv->best_have ? &dv->best_est : NULL)) < 0) {
		return err;
	}
	/* the search simulated the same actions in the same order, less
	 * the ZeRO prologue's gathers, which can only delay them */
	int gathers = 0;
	for (int r = 0; r < own->schedule.n_ranks; r++)
		gathers |= own->estimate.dp_gather_ms[r] > 0;
	if (gathers ? !(own->estimate.step_ms >= dv->res.step_ms)
		    : own->estimate.step_ms != dv->res.step_ms)
		return PPCC_EINTERNAL;
	if (dv->given) {
		out->has_own = 1;
		out->given_fits = ppcc_plan_variant_fits(x, &out->best);
		if (!out->given_fits)
			warn_given(dv, out);
	}
	out->search = dv->res;
	if (dv->path_ok && dv->res.path_bound &&
	    dv->path_ms > out->search.lower_bound_ms)
		out->search.lower_bound_ms = dv->path_ms;
	out->least_bottleneck_ps = dv->proxy == 0 ? dv->bottleneck
						  : dv->lb.bottleneck_ps;
	if (dv->lean)
		return 0;

	if ((err = gathers
		   ? ppcc_plan_variant_uniform_placed(x, &out->uniform, dv->uni,
						      &dv->shape)
		   : ppcc_plan_variant_uniform(x, &out->uniform, dv->uni,
					       &out->best.schedule,
					       dv->uni_have ? &dv->uni_est
							    : NULL)) < 0)
		return err;
	out->uniform_fits = ppcc_plan_variant_fits(x, &out->uniform);
	out->has_uniform = 1;
	if (!ALLOC(out->memory_cap_bytes, x->p))
		return PPCC_ENOMEM;
	for (int r = 0; r < x->p; r++)
		out->memory_cap_bytes[r] = x->rank_cap[r];
	return 0;
}

/* A kind whose stages form several pipelines (DualPipe: two, the
 * second holding a copy of the first's layers) is refused: the
 * partition cuts the layers into one chain of p x v stages, each layer
 * in one stage, and cannot give two stages the same layers
 * (doc/design/dualpipe.md). */
static int plan_pipes(const ppcc_config *cfg, ppcc_diag *d)
{
	const ppcc_pipeline *pl = &cfg->pipeline;
	if (ppcc_sched_pipes(pl->kind) == 1)
		return 0;
	ppcc_loc loc = pl->kind_loc.file ? pl->kind_loc
		       : pl->loc.file ? pl->loc : (ppcc_loc){cfg->path, 0, 0};
	ppcc_error(d, &loc, "ppcc cannot plan the %s schedule yet: its "
		   "second pipeline holds a copy of every stage's layers, and "
		   "the partition gives each layer to one stage; its order is "
		   "built and checked (ppcc_schedule_build), or plan dualpipe-v, "
		   "its one-copy form", ppcc_schedule_kind_name(pl->kind));
	return PPCC_EINPUT;
}

int ppcc_plan_drive(ppcc_plan *out, ppcc_arena *a, const ppcc_config *cfg,
		    ppcc_diag *d, int search, int *out_first,
		    ppcc_step_result *out_res, const ppcc_plan_lean *lean)
{
	ppcc_plan_ctx ctx, *x = &ctx;
	drive dv = {.x = x, .cfg = cfg, .d = d, .search = search,
		    .lean = lean};
	int err, done;

	memset(out, 0, sizeof *out);
	if ((err = plan_pipes(cfg, d)) < 0)
		return err;
	if ((err = ppcc_plan_setup(x, &dv.shape, a, cfg, d,
				   lean ? lean->shapes : NULL, lean)) != 0)
		return err;
	x->lean = lean != NULL;
	x->no_changes = search == 2;
	if (lean && lean->memory_unfit && x->v > 1) {
		err = ppcc_plan_lean_memory_bound(x, &dv.shape);
		if (err == PPCC_EINFEASIBLE)
			*lean->memory_unfit = 1;
		if (err)
			return err;
	}
	if (!ALLOC(dv.first, x->S) || !ALLOC(dv.uni, x->S))
		return PPCC_ENOMEM;
	ppcc_plan_uniform_split(x, dv.uni);
	if ((err = drive_proxy(&dv, &done)) != 0 || done ||
	    (err = drive_seeds(&dv)) < 0 ||
	    (err = drive_search(&dv, a, out_first)) < 0 || !search)
		return err;
	if (out_first) {
		memcpy(out_first, dv.chosen, (size_t)x->S * sizeof(int));
		*out_res = dv.res;
		if (dv.path_ok && dv.res.path_bound &&
		    dv.path_ms > out_res->lower_bound_ms)
			out_res->lower_bound_ms = dv.path_ms;
		return 0;
	}
	return drive_write(&dv, out);
}

int ppcc_plan_build(ppcc_plan *out, ppcc_arena *a, const ppcc_config *cfg,
		    ppcc_diag *d)
{
	return ppcc_plan_build_for(out, a, cfg, d, NULL, NULL);
}

int ppcc_plan_build_for(ppcc_plan *out, ppcc_arena *a, const ppcc_config *cfg,
			ppcc_diag *d, ppcc_admits_fn admits, void *admits_ctx)
{
	int errors = d->errors;
	int err = cfg->pipeline.kind == PPCC_SCHED_AUTO
		? ppcc_plan_auto_build(out, a, cfg, d, admits, admits_ctx)
		: ppcc_plan_drive(out, a, cfg, d, 1, NULL, NULL, NULL);
	if ((err == PPCC_EINPUT || err == PPCC_EINTERNAL) && d->errors == errors) {
		ppcc_error(d, &cfg->model.loc, "internal error: the plan of this "
			   "model failed (status %d)", err);
		err = PPCC_EINTERNAL;
	}
	return err;
}

int ppcc_plan_choose_split(int *out_first, ppcc_step_result *out_res,
			   ppcc_arena *a, const ppcc_config *cfg, ppcc_diag *d)
{
	ppcc_plan unused;
	if (!out_first || !out_res)
		return PPCC_EINPUT;
	return ppcc_plan_drive(&unused, a, cfg, d, 1, out_first, out_res, NULL);
}

int ppcc_plan_build_lean(ppcc_plan *out, ppcc_arena *a, const ppcc_config *cfg,
			 ppcc_diag *d, double above_ms, double *out_bound_ms,
			 ppcc_plan_shapes *shapes)
{
	return ppcc_plan_build_pruned(out, a, cfg, d, above_ms, out_bound_ms,
				      NULL, shapes, NULL);
}

int ppcc_plan_build_pruned(ppcc_plan *out, ppcc_arena *a,
			   const ppcc_config *cfg, ppcc_diag *d,
			   double above_ms, double *out_bound_ms,
			   double *out_stage_bounds_ms,
			   ppcc_plan_shapes *shapes, int *out_memory_unfit)
{
	ppcc_plan_lean lo = {above_ms, out_bound_ms, out_stage_bounds_ms, shapes,
			out_memory_unfit};
	if (out_memory_unfit)
		*out_memory_unfit = 0;
	if (out_stage_bounds_ms)
		out_stage_bounds_ms[0] = out_stage_bounds_ms[1] = NAN;
	/* auto plans several kinds in full; it has no bound of its own */
	if (cfg->pipeline.kind == PPCC_SCHED_AUTO)
		return ppcc_plan_auto_build(out, a, cfg, d, NULL, NULL);
	return ppcc_plan_drive(out, a, cfg, d, 1, NULL, NULL, &lo);
}
