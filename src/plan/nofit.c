/*
 * nofit.c - what a plan says when no split fits device memory, and the
 * memory bounds that prove it before a split is searched.
 *
 * With one chunk the partitioner's exact proxy decides: the stage of
 * least overflow is named at its first layer's line with its need, its
 * cap and the microbatches it holds in flight, then what would fit: the
 * least memory per device, the fewest stages (the configuration
 * re-planned at more stages, as the command line would, within a budget
 * of 2^26 stage-microbatch pairs), and the least change of recompute,
 * ZeRO stage, schedule (1F1B) and device (the catalogue's, by memory)
 * that fits, each planned for its figures (note_changes: about fifteen
 * plans at most, each within the default budget).  With v chunks the
 * split search's split of least overflow is simulated and its worst
 * rank named.  For
 * the search (lean), two cheaper proofs come first: no split fits even
 * with each stage given its whole rank, or membound.c's count-vector
 * bound (ppcc_plan_memory_bound gives it to tests and reports); each
 * notes the least memory per device it proves needed.  Every figure is
 * per device, in GiB, with the cluster's reserve added back.
 *
 * Derivation: doc/design/membound.md (the bound), doc/design/plan.md
 * (memory per device).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "plan/ctx.h"

/* No split fits: say which stage is over and by how much, then what would
 * fit: the fewest stages, or the least memory per device. */
static int report_infeasible(ppcc_plan_ctx *x, double *out_least)
{
	int *first, stage;
	int64_t over;
	int err;
	if (!ALLOC(first, x->S))
		return PPCC_ENOMEM;
	if ((err = ppcc_partition_min_overflow(first, &stage, &over, &x->pb)) < 0)
		return err;
	int i = first[stage];
	int j = stage + 1 < x->S ? first[stage + 1] - 1 : x->n - 1;
	int r = x->place[stage].rank;
	const ppcc_layer *L = x->cfg->model.layers;
	/* with ZeRO-3's gather buffers, which the partitioner's proxy
	 * leaves to the simulated peak */
	double z3 = ppcc_plan_zero3_bytes(x, i, j);
	double need = ppcc_plan_stage_mem(x, stage, i, j) / x->shard + z3;
	double cap = (double)x->mem_cap[stage] / x->shard;
	char share[96] = "";
	if (x->v > 1)
		snprintf(share, sizeof share, " (its chunk's share: 1/%d of %.2f GiB)",
			 x->v, gib(cap * x->v));
	ppcc_error(x->d, &L[i].loc,
		   "the model does not fit in device memory: at best, stage %d "
		   "(rank %d, layers %d-%d, %s to %s) needs %.2f GiB per device "
		   "but has %.2f GiB%s, %.2f GiB over",
		   stage, r, i, j, L[i].name, L[j].name, gib(need), gib(cap),
		   share, gib((double)over / x->shard + z3));
	long long k = (long long)x->stash_count[stage];
	ppcc_note(x->d, &L[i].loc,
		  "it holds %lld microbatch%s of activations in flight under %s",
		  k, k == 1 ? "" : "es", ppcc_schedule_kind_name(x->kind));

	/* The least memory per device: every cap raised by the overflow. */
	double least = 0;
	for (int s = 0; s < x->S; s++) {
		double c = (double)x->mem_cap[s] * x->v / x->shard;
		if (c > least)
			least = c;
	}
	double buffers = 0;
	for (int s = 0; s < x->S; s++) {
		double b = ppcc_plan_zero3_bytes(
			x, first[s], s + 1 < x->S ? first[s + 1] - 1 : x->n - 1);
		buffers = b > buffers ? b : buffers;
	}
	least += (double)over * x->v / x->shard + buffers +
		 x->cfg->cluster.reserved_bytes + x->cfg->cluster.headroom_bytes;
	ppcc_note(x->d, &x->cfg->cluster.loc,
		  "it would fit with %.2f GiB per device", gib(least));
	*out_least = least;
	return PPCC_EINFEASIBLE;
}

/* The most stages the devices allow with the layout given. */
static int max_stages(const ppcc_config *cfg)
{
	const ppcc_pipeline *pl = &cfg->pipeline;
	return cfg->cluster.devices /
	       (pl->tensor_parallel * pl->context_parallel *
		(pl->data_parallel_loc.file ? pl->data_parallel : 1));
}

/* The fewest stages, more than configured, at which the model fits, as
 * the command line would plan it (defaults that depend on the stage count,
 * such as the microbatches, follow it; every check of the configuration
 * applies); PPCC_EINFEASIBLE if none.  The trials are bounded: they stop
 * when one layer alone overflows every device even with a single
 * microbatch in flight, and after a budget of scheduled actions. */
static int fewest_stages(const ppcc_config *cfg, ppcc_config *out)
{
	static const ppcc_loc suggested = {"<suggestion>", 0, 0};
	ppcc_diag quiet = {0};
	const ppcc_model *md = &cfg->model;
	double cap = 0;
	for (int g = 0; g < cfg->cluster.n_groups; g++)
		if (cfg->cluster.groups[g].memory_bytes > cap)
			cap = cfg->cluster.groups[g].memory_bytes;
	cap *= cfg->cluster.devices; /* the most any split could give a layer */
	double least_bpp = ppcc_memory_zero_bytes_per_param(
		NULL, cfg->pipeline.zero, cfg->pipeline.grad_bytes,
		cfg->cluster.devices, cfg->pipeline.trainer, 1,
		ppcc_pipeline_moment_bytes(&cfg->pipeline));
	for (int i = 0; i < md->n_layers; i++) {
		const ppcc_layer *l = &md->layers[i];
		double bpp = l->bytes_per_param > 0 ? l->bytes_per_param : least_bpp;
		if (l->params * bpp + l->stash_bytes > cap)
			return PPCC_EINFEASIBLE;
	}
	int64_t budget = (int64_t)1 << 26; /* stage-microbatch pairs tried */
	int max_p = max_stages(cfg);
	for (int p = cfg->pipeline.stages + 1; p <= max_p && budget > 0; p++) {
		ppcc_config trial = *cfg;
		trial.pipeline.stages = p;
		trial.pipeline.stages_loc = suggested;
		trial.pipeline.partition = NULL; /* it lists the old stages */
		trial.pipeline.n_partition = 0;
		ppcc_config_fill_defaults(&trial);
		if (p * trial.pipeline.chunks > md->n_layers)
			break;
		if (ppcc_config_check(&trial, &quiet) < 0)
			continue;
		budget -= (int64_t)p * trial.pipeline.chunks *
			  trial.pipeline.microbatches;
		ppcc_arena *ta = ppcc_arena_new();
		if (!ta)
			return PPCC_ENOMEM;
		ppcc_plan tp;
		int err = ppcc_plan_drive(&tp, ta, &trial, &quiet, 0, NULL, NULL, NULL);
		ppcc_arena_free(ta);
		if (err == 0) {
			*out = trial;
			return p;
		}
		if (err != PPCC_EINFEASIBLE)
			return err;
	}
	return PPCC_EINFEASIBLE;
}

/* cfg planned as the command line would plan it (checked, within the
 * default budget), quietly: 0 and its iteration and the simulated peak
 * of its fullest device when it fits; PPCC_EINFEASIBLE when it does not,
 * another status when it cannot be planned. */
static int replan(const ppcc_config *cfg, double *out_ms, double *out_peak)
{
	ppcc_diag quiet = {0};
	ppcc_config c = *cfg;
	if (ppcc_config_check(&c, &quiet) < 0 ||
	    ppcc_plan_budget_check_work(&c, 0, NULL, &quiet) < 0)
		return PPCC_EINPUT;
	ppcc_arena *a = ppcc_arena_new();
	if (!a)
		return PPCC_ENOMEM;
	ppcc_plan p;
	int err = ppcc_plan_build_pruned(&p, a, &c, &quiet, INFINITY, NULL,
					 NULL, NULL, NULL);
	if (err == 0 && !p.best.iteration)
		err = PPCC_EINTERNAL;
	if (err == 0) {
		*out_ms = p.best.iteration->iteration_ms;
		*out_peak = 0;
		for (int r = 0; r < p.best.schedule.n_ranks; r++)
			if (p.best.estimate.peak_memory_bytes[r] > *out_peak)
				*out_peak = p.best.estimate.peak_memory_bytes[r];
	}
	ppcc_arena_free(a);
	return err;
}

/* The note that cfg, changed as what says, fits with its figures, when it
 * does: 1; 0 when it does not; a negative status when memory ran out. */
static int note_change(const ppcc_config *cfg, ppcc_diag *d,
		       const ppcc_loc *loc, const char *what)
{
	double ms, peak;
	int err = replan(cfg, &ms, &peak);
	if (err == PPCC_ENOMEM)
		return err;
	if (err != 0)
		return 0;
	ppcc_note(d, loc, "it would fit %s: %.1f ms an iteration, peak %.2f "
		  "GiB per device", what, ms, gib(peak));
	return 1;
}

/* The model's layers re-expanded with recompute rc into c (the arena's). */
static int with_recompute(ppcc_config *c, ppcc_arena *a, int rc)
{
	ppcc_transformer *tf = ppcc_arena_alloc(a, 1, sizeof *tf);
	if (!tf)
		return PPCC_ENOMEM;
	*tf = *c->model.transformer;
	tf->recompute = rc;
	c->model.transformer = tf;
	return ppcc_transformer_expand(&c->model.layers, &c->model.n_layers, a,
				       tf, c->model.transformer_loc);
}

/* The fewest stages that would fit, then the least of each change that
 * does, each planned (cheapest first within its kind: less recomputed,
 * the lower ZeRO stage, the device of least memory): recompute, ZeRO
 * when the stage has data-parallel replicas to shard over, 1F1B (the
 * one-chunk schedule that holds the fewest microbatches), and a device
 * of the catalogue with more memory, at least least_bytes (0: no bound)
 * when every device names one preset.  Then PPCC_EINFEASIBLE. */
static int note_changes(ppcc_plan_ctx *x, const ppcc_config *cfg,
			ppcc_diag *d, double least_bytes)
{
	static const ppcc_loc suggested = {"<suggestion>", 0, 0};
	static const char *const rec[] = {"no recompute", "selective recompute",
					  "full recompute"};
	const ppcc_loc *at = &cfg->cluster.loc;
	ppcc_config c;
	char what[128];
	int p = fewest_stages(cfg, &c), err = 0, found = p > 0;
	if (p < 0 && p != PPCC_EINFEASIBLE)
		return p;
	if (p > 0) {
		if (c.pipeline.microbatches != cfg->pipeline.microbatches)
			snprintf(what, sizeof what, "with %d stages (and %d "
				 "microbatches)", p, c.pipeline.microbatches);
		else
			snprintf(what, sizeof what, "with %d stages", p);
		if ((err = note_change(&c, d, &cfg->pipeline.stages_loc,
				       what)) < 0)
			return err;
		if (err == 0)
			ppcc_note(d, &cfg->pipeline.stages_loc,
				  "it would fit %s", what);
	}
	ppcc_arena *a = ppcc_arena_new();
	if (!a)
		return PPCC_ENOMEM;
	const ppcc_transformer *tf = cfg->model.transformer;
	err = 0;
	for (int rc = tf ? tf->recompute + 1 : 3;
	     err == 0 && rc <= PPCC_RECOMPUTE_FULL; rc++) {
		c = *cfg;
		if ((err = with_recompute(&c, a, rc)) < 0)
			goto out;
		snprintf(what, sizeof what, "with %s", rec[rc]);
		err = note_change(&c, d, &cfg->model.transformer_loc, what);
	}
	if (err < 0)
		goto out;
	found += err;
	err = 0;
	for (int z = cfg->pipeline.zero + 1;
	     err == 0 && x->dp * x->cp > 1 && z <= 3; z++) {
		c = *cfg;
		c.pipeline.zero = z;
		c.pipeline.zero_loc = suggested;
		snprintf(what, sizeof what, "with ZeRO-%d", z);
		err = note_change(&c, d, cfg->pipeline.zero_loc.file
			       ? &cfg->pipeline.zero_loc : at, what);
	}
	if (err < 0)
		goto out;
	found += err;
	err = 0;
	if (cfg->pipeline.kind != PPCC_SCHED_1F1B) {
		c = *cfg;
		c.pipeline.kind = PPCC_SCHED_1F1B;
		c.pipeline.chunks = 1;
		c.pipeline.kind_loc = c.pipeline.chunks_loc = suggested;
		snprintf(what, sizeof what, "under 1f1b%s",
			 cfg->pipeline.chunks > 1 ? " with one chunk" : "");
		err = note_change(&c, d, cfg->pipeline.kind_loc.file
			       ? &cfg->pipeline.kind_loc : at, what);
	}
	if (err < 0)
		goto out;
	found += err;
	err = 0;
	const ppcc_device_preset *old = cfg->cluster.n_groups > 0
					? cfg->cluster.groups[0].preset : NULL;
	const ppcc_device_preset *by[PPCC_MAX_DEVICE_PRESETS];
	int n = old ? ppcc_device_presets_by_memory(by) : 0;
	for (int i = 0; err == 0 && i < n; i++) {
		double mem = by[i]->memory_gib * 1073741824.0;
		if (by[i]->memory_gib <= old->memory_gib || mem < least_bytes)
			continue;
		c = *cfg;
		if (ppcc_cluster_swap_device(&c.cluster, a, &cfg->cluster,
					     by[i]) < 0)
			break;
		snprintf(what, sizeof what, "on %s (%.4g GiB) in place of the "
			 "%s", by[i]->name, by[i]->memory_gib, old->name);
		err = note_change(&c, d, at, what);
	}
	if (err < 0)
		goto out;
	found += err;
	err = 0;
	if (!found) {
		char tried[160];
		snprintf(tried, sizeof tried, "%s%s%s%s%s",
			 max_stages(cfg) > cfg->pipeline.stages
			 ? ", more stages" : "",
			 tf && tf->recompute < PPCC_RECOMPUTE_FULL
			 ? ", more recompute" : "",
			 x->dp * x->cp > 1 && cfg->pipeline.zero < 3
			 ? ", a higher ZeRO stage" : "",
			 cfg->pipeline.kind != PPCC_SCHED_1F1B ? ", 1f1b" : "",
			 old ? ", a larger device of the catalogue" : "");
		if (tried[0])
			ppcc_note(d, at, "none of these alone makes it fit: "
				  "%s", tried + 2);
	}
out:
	ppcc_arena_free(a);
	return err < 0 ? err : PPCC_EINFEASIBLE;
}

/* No split fits: the diagnostics of report_infeasible, then the fewest
 * stages and the other changes that would fit. */
int ppcc_plan_report_no_fit(ppcc_plan_ctx *x, const ppcc_config *cfg,
			    ppcc_diag *d)
{
	double least = 0;
	int err;
	if ((err = report_infeasible(x, &least)) != PPCC_EINFEASIBLE ||
	    x->lean || x->no_changes)
		return err;
	return note_changes(x, cfg, d, least);
}

/* With v chunks, when the search found no split that fits: its split of
 * least overflow, simulated, rank by rank. */
int ppcc_plan_report_no_fit_simulated(ppcc_plan_ctx *x,
				      const ppcc_config *cfg, ppcc_diag *d,
				      const int *split,
				      const ppcc_step_result *res,
				      const ppcc_schedule *shape)
{
	ppcc_plan_variant v;
	int err;
	if ((err = ppcc_plan_variant_uniform(x, &v, split, shape, NULL)) < 0)
		return err;
	int worst = 0;
	double most = 0;
	for (int r = 0; r < x->p; r++) {
		double pk = v.estimate.peak_memory_bytes[r];
		if (pk - x->rank_cap[r] > v.estimate.peak_memory_bytes[worst] - x->rank_cap[worst])
			worst = r;
		most = pk > most ? pk : most;
	}
	const ppcc_layer *L = cfg->model.layers;
	int i = split[worst];
	double pk = v.estimate.peak_memory_bytes[worst];
	ppcc_error(d, &L[i].loc,
		   "the model does not fit in device memory: of the splits "
		   "searched (%ld simulations%s), the one that overflows least "
		   "peaks at %.2f GiB on rank %d (its %d chunks with the "
		   "activations in flight) of %.2f GiB per device, %.2f GiB over",
		   res->simulations, res->exact ? ", every split" : "", gib(pk),
		   worst, x->v, gib(x->rank_cap[worst]), gib(pk - x->rank_cap[worst]));
	ppcc_note(d, &cfg->cluster.loc,
		  "it would fit with %.2f GiB per device",
		  gib(most + cfg->cluster.reserved_bytes +
		      cfg->cluster.headroom_bytes));
	if (x->lean || x->no_changes)
		return PPCC_EINFEASIBLE;
	return note_changes(x, cfg, d, 0);
}

/* With v chunks and no split within the stages' shares of their ranks:
 * each stage alone, at its most activations in flight, is part of its
 * rank's simulated peak, so when no split fits even with each stage
 * given its whole rank, none fits (PPCC_EINFEASIBLE, with a note of the
 * least memory per device that relaxed problem needs).  0 otherwise. */
int ppcc_plan_lean_no_fit(ppcc_plan_ctx *x)
{
	int64_t *full, bottleneck, over;
	int *first, stage;
	if (!ALLOC(full, x->S) || !ALLOC(first, x->S))
		return PPCC_ENOMEM;
	for (int s = 0; s < x->S; s++)
		full[s] = to_bytes(x->rank_mem[x->place[s].rank]);
	ppcc_part_problem pb = x->pb;
	pb.mem_cap = full;
	int err = ppcc_partition_solve(first, &bottleneck, &pb);
	if (err != PPCC_EINFEASIBLE)
		return err < 0 ? err : 0;
	if ((err = ppcc_partition_min_overflow(first, &stage, &over, &pb)) < 0)
		return err;
	double most = 0;
	for (int s = 0; s < x->S; s++)
		if ((double)full[s] > most)
			most = (double)full[s];
	ppcc_note(x->d, &x->cfg->cluster.loc,
		  "it would need at least %.2f GiB per device",
		  gib((most + (double)over) / x->shard +
		      x->cfg->cluster.reserved_bytes +
		      x->cfg->cluster.headroom_bytes));
	return PPCC_EINFEASIBLE;
}

/* With v chunks: membound.c's proof that no split fits, from the layers'
 * bytes per device (as stage_costs gives them a stage) and the shape's
 * count vectors.  PPCC_EINFEASIBLE, with a note of the least memory per
 * device it proves a split needs, when it holds; 0 otherwise. */
static int memory_state(ppcc_plan_ctx *x, const ppcc_schedule *shape,
			ppcc_mem_state **out)
{
	double *st, *stash, *wstash;
	int n = x->n;
	if (!ALLOC(st, n) || !ALLOC(stash, n) || !ALLOC(wstash, n))
		return PPCC_ENOMEM;
	for (int l = 0; l < n; l++) {
		st[l] = (double)(x->static_prefix[l + 1] - x->static_prefix[l]) /
			x->shard;
		stash[l] = (double)(x->stash_prefix[l + 1] - x->stash_prefix[l]) /
			   x->shard;
		wstash[l] = (double)(x->wstash_prefix[l + 1] -
				     x->wstash_prefix[l]) / x->shard;
	}
	ppcc_mem_problem mp = {.n_layers = n, .shape = shape,
			       .static_bytes = st, .stash_bytes = stash,
			       .wstash_bytes = wstash, .rank_cap = x->rank_cap};
	return ppcc_mem_prepare(out, x->a, &mp);
}

int ppcc_plan_lean_memory_bound(ppcc_plan_ctx *x, const ppcc_schedule *shape)
{
	ppcc_mem_state *m;
	int err = memory_state(x, shape, &m);
	if (err == PPCC_EINPUT)
		return 0; /* the argument does not apply */
	if (err < 0)
		return err;
	if ((err = ppcc_mem_unfit(m, 0)) <= 0)
		return err;
	double over = ppcc_mem_bound(m), most = 0;
	if (isnan(over))
		return PPCC_ENOMEM;
	for (int r = 0; r < x->p; r++)
		most = x->rank_cap[r] > most ? x->rank_cap[r] : most;
	ppcc_note(x->d, &x->cfg->cluster.loc,
		  "it would need at least %.2f GiB per device",
		  gib(most + (over > 0 ? over : 0) +
		      x->cfg->cluster.reserved_bytes +
		      x->cfg->cluster.headroom_bytes));
	return PPCC_EINFEASIBLE;
}

int ppcc_plan_memory_bound(double *out, double *out_caps, ppcc_arena *a,
			   const ppcc_config *cfg)
{
	ppcc_plan_ctx ctx, *x = &ctx;
	ppcc_schedule shape;
	ppcc_diag quiet = {0};
	ppcc_mem_state *m;
	int err;
	*out = -INFINITY;
	if ((err = ppcc_plan_setup(x, &shape, a, cfg, &quiet, NULL, NULL)) < 0 ||
	    (err = memory_state(x, &shape, &m)) < 0)
		return err;
	if (out_caps)
		memcpy(out_caps, x->rank_cap, (size_t)x->p * sizeof *out_caps);
	*out = ppcc_mem_bound(m);
	return isnan(*out) ? PPCC_ENOMEM : 0;
}
