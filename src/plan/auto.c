/*
 * auto.c - the auto kind: every handcrafted kind planned on the same
 * ranks and microbatches, the fastest that fits kept, then the orders of
 * ppcc_sched_auto tried on the split of the fastest one-chunk plan.
 *
 * Each kind is planned as `ppcc plan -s KIND` would plan it (its own
 * split, its own checks, quietly); a kind of one chunk ignores the chunks
 * given, a kind of several takes the chunks given (none when the count
 * given is 1) or its own default.  A caller that takes only some
 * configurations (a trainer's, ppcc_admits_fn) gets only those; one
 * that takes no kind with these settings gets the plan of any caller, so
 * that its own refusal (the trainer's emitter) says why.  An
 * order of ppcc_sched_auto replaces the plan only when, with its
 * collectives placed, validated and simulated, it is faster than every
 * kind's own plan, so the plan is never slower in simulation than any
 * handcrafted kind that fits.  When none fits the diagnostics are
 * 1F1B's.  The result records what was tried (ppcc_plan_auto).
 *
 * Derivation: doc/design/auto.md (the heuristic's play).
 */
#include <string.h>

#include "plan/ctx.h"

static void plan_quiet(ppcc_severity sev, const ppcc_loc *loc, const char *msg,
		       void *user)
{
	(void)sev, (void)loc, (void)msg, (void)user;
}

static int plan_peaks_fit(const ppcc_plan *pl, const ppcc_estimate *e, int p)
{
	for (int r = 0; r < p; r++)
		if (e->peak_memory_bytes[r] > pl->memory_cap_bytes[r])
			return 0;
	return 1;
}

/* Whether the caller takes kind k with c's settings (admits NULL: every
 * kind). */
static int auto_admits(const ppcc_config *c, int k, ppcc_admits_fn admits,
		       void *ctx)
{
	if (!admits)
		return 1;
	const ppcc_pipeline *pl = &c->pipeline;
	const ppcc_transformer *tr = c->model.transformer;
	ppcc_search_entry e = {
		.t = pl->tensor_parallel, .p = pl->stages, .d = pl->data_parallel,
		.cp = pl->context_parallel,
		.v = k == PPCC_SCHED_AUTO ? 1 : pl->chunks,
		.b = c->model.micro_batch_size, .m = pl->microbatches,
		.recompute = tr ? tr->recompute : PPCC_RECOMPUTE_NONE,
		.zero = pl->zero, .kind = k, .ep = pl->expert_parallel,
		.etp = ppcc_pipeline_etp(pl)};
	return admits(&e, ctx);
}

/* One auto build's record and what it keeps between its steps. */
typedef struct auto_run {
	ppcc_arena *a;
	const ppcc_config *cfg;
	ppcc_plan_auto *rep;
	ppcc_plan one;           /* the fastest one-chunk plan that fits */
	int one_kind;            /* its kind, -1: none */
	ppcc_config *best_cfg;   /* the configuration of the plan written */
	int refused;             /* kinds the caller's admits refused */
} auto_run;

/* Kind k's configuration as auto plans it, in *out (NULL: auto does not
 * plan it).  A kind of one chunk ignores the chunks given; a kind of
 * several chunks takes the chunks given (none when the count given,
 * `given`, is 1) or, with none given, its own default; the ranks and
 * microbatches are auto's, not the defaults of another chunk count. */
static int auto_kind_config(ppcc_config **out, auto_run *ar, int k, int given)
{
	static const char pinned[] = "<auto>";
	const ppcc_sched_kind_info *ki = ppcc_sched_kind(k);
	*out = NULL;
	/* a kind of several pipelines (DualPipe) the planner refuses
	 * (plan.c, plan_pipes) */
	if (k == PPCC_SCHED_AUTO || (ki->max_chunks > 1 && given == 1) ||
	    ppcc_sched_pipes(k) > 1)
		return 0;
	ppcc_config *ck = ppcc_arena_alloc(ar->a, 1, sizeof *ck);
	if (!ck)
		return PPCC_ENOMEM;
	*ck = *ar->cfg;
	ck->pipeline.kind = k;
	if (ki->max_chunks == 1 || !given) {
		ck->pipeline.chunks = ki->default_chunks;
		ck->pipeline.chunks_loc = (ppcc_loc){0};
	}
	if (!ck->pipeline.stages_loc.file && !ck->pipeline.partition)
		ck->pipeline.stages_loc = (ppcc_loc){pinned, 0, 0};
	if (!ck->pipeline.microbatches_loc.file)
		ck->pipeline.microbatches_loc = (ppcc_loc){pinned, 0, 0};
	*out = ck;
	return 0;
}

/* Each handcrafted kind planned as `ppcc plan -s KIND` would plan it (its
 * own split, quietly) on the same ranks and microbatches: the fastest
 * that fits into out, the fastest of one chunk into ar->one.  Each kind
 * is planned in an arena of its own, freed unless its plan is kept, so
 * that auto holds at most three plans at once, not one a kind. */
static int auto_kinds(auto_run *ar, ppcc_plan *out, ppcc_admits_fn admits,
		      void *admits_ctx)
{
	const ppcc_config *cfg = ar->cfg;
	ppcc_plan_auto *rep = ar->rep;
	ppcc_arena *main_a = ar->a, *best_a = NULL, *one_a = NULL;
	int err = 0, p = cfg->pipeline.stages, m = cfg->pipeline.microbatches;
	int given = cfg->pipeline.chunks_loc.file ? cfg->pipeline.chunks : 0;
	for (int k = 0; k < PPCC_SCHED_COUNT && err == 0; k++) {
		const ppcc_sched_kind_info *ki = ppcc_sched_kind(k);
		ppcc_config *ck;
		ppcc_arena *ka = ppcc_arena_new();
		if (!ka) {
			err = PPCC_ENOMEM;
			break;
		}
		ar->a = ka;
		err = auto_kind_config(&ck, ar, k, given);
		ppcc_diag q = {.fn = plan_quiet};
		if (err < 0 || !ck || ppcc_config_check(ck, &q) != 0 ||
		    ck->pipeline.stages != p || ck->pipeline.microbatches != m) {
			ppcc_arena_free(ka);
			continue;
		}
		if (!auto_admits(ck, k, admits, admits_ctx)) {
			ar->refused++;
			ppcc_arena_free(ka);
			continue;
		}
		ppcc_plan pk;
		/* quiet: what would fit is not planned (2) */
		err = ppcc_plan_drive(&pk, ka, ck, &q, 2, NULL, NULL, NULL);
		ppcc_auto_kind_result *kr = &rep->kinds[rep->n_kinds++];
		kr->kind = k;
		kr->chunks = ck->pipeline.chunks;
		kr->fits = 0;
		if (err == PPCC_EINPUT)
			/* refused quietly (a time out of range): not listed;
			 * with no kind planned, 1F1B's plan says why */
			rep->n_kinds--;
		if (err == PPCC_EINPUT || err == PPCC_EINFEASIBLE)
			err = 0;
		else if (err == 0) {
			kr->step_ms = pk.best.estimate.step_ms;
			kr->fits = !pk.has_own || pk.given_fits;
		}
		if (err < 0 || !kr->fits) {
			ppcc_arena_free(ka);
			continue;
		}
		int kept = 0;
		if (rep->chosen_kind < 0 || kr->step_ms < out->best.estimate.step_ms) {
			if (best_a != one_a)
				ppcc_arena_free(best_a);
			*out = pk;
			ar->best_cfg = ck;
			rep->chosen_kind = k;
			best_a = ka;
			kept = 1;
		}
		if (ki->max_chunks == 1 &&
		    (ar->one_kind < 0 || kr->step_ms < ar->one.best.estimate.step_ms)) {
			if (one_a != best_a)
				ppcc_arena_free(one_a);
			ar->one = pk;
			ar->one_kind = k;
			one_a = ka;
			kept = 1;
		}
		if (!kept)
			ppcc_arena_free(ka);
	}
	ar->a = main_a;
	/* the plans kept live as long as the caller's arena */
	ppcc_arena_adopt(main_a, best_a);
	if (one_a != best_a)
		ppcc_arena_adopt(main_a, one_a);
	return err;
}

/* The order won (candidate won of ar->rep's orders, sched) made the
 * plan: the one-chunk plan's variants simulated on its lists, its
 * iteration estimated under the order's kind. */
static int auto_take_order(auto_run *ar, ppcc_plan *out,
			   const ppcc_auto_candidate *won,
			   const ppcc_schedule *sched, const ppcc_estimate *est)
{
	ppcc_arena *a = ar->a;
	ppcc_plan_variant *bv = &ar->one.best;
	int err, p = ar->cfg->pipeline.stages;
	bv->schedule = *sched;
	bv->estimate = *est;
	if (!plan_peaks_fit(&ar->one, &bv->estimate, p))
		return PPCC_EINTERNAL;
	ppcc_config *best_cfg = ppcc_arena_alloc(a, 1, sizeof *best_cfg);
	if (!best_cfg)
		return PPCC_ENOMEM;
	*best_cfg = *ar->cfg;
	best_cfg->pipeline.kind = won->kind;
	best_cfg->pipeline.chunks = 1;
	ar->best_cfg = best_cfg;
	if (!(bv->iteration = ppcc_arena_alloc(a, 1, sizeof *bv->iteration)))
		return PPCC_ENOMEM;
	if ((err = ppcc_iteration_estimate(bv->iteration, a, best_cfg, bv)) < 0)
		return err;
	ppcc_plan_variant *others[2] = {&ar->one.uniform,
					ar->one.has_own ? &ar->one.own : NULL};
	for (int i = 0; i < 2; i++) {
		ppcc_plan_variant *o = others[i];
		if (!o)
			continue;
		if ((err = ppcc_simulate_keep(&o->estimate, a, &bv->schedule,
					      o->costs, 0)) < 0)
			return err;
		o->schedule = bv->schedule;
		o->schedule.stages = o->stages;
		o->schedule.ranks = NULL;
		o->schedule.fingerprint = 0;
	}
	ar->one.uniform_fits = plan_peaks_fit(&ar->one, &ar->one.uniform.estimate, p);
	*out = ar->one;
	ar->rep->chosen_kind = won->kind;
	return 0;
}

/* ppcc_sched_auto's choice on the split of the fastest one-chunk plan
 * (every one-chunk kind and the zero-bubble heuristic's orders under the
 * same memory caps, then the exact search), taken when faster than
 * every kind's own plan.  The orders were simulated alone; with data
 * parallelism the written one gets its collectives, as every kind's
 * plan has, and is kept only when still faster with them (the ZeRO
 * prologue's gathers can only delay it). */
static int auto_orders(auto_run *ar, ppcc_plan *out, ppcc_diag *d)
{
	const ppcc_config *cfg = ar->cfg;
	ppcc_arena *a = ar->a;
	ppcc_plan_auto *rep = ar->rep;
	int err, p = cfg->pipeline.stages, m = cfg->pipeline.microbatches;
	rep->split_kind = ar->one_kind;
	ppcc_plan_variant *bv = &ar->one.best;
	ppcc_schedule sched;
	err = ppcc_sched_auto(&sched, &rep->orders, a, p, m, bv->stages,
			      bv->costs, ar->one.memory_cap_bytes);
	if (err < 0 && err != PPCC_EINFEASIBLE)
		return err;
	const ppcc_auto_candidate *won = &rep->orders.candidates[rep->orders.chosen];
	int dp = (cfg->pipeline.data_parallel > 0 ? cfg->pipeline.data_parallel : 1) *
		 (cfg->pipeline.context_parallel > 0 ? cfg->pipeline.context_parallel : 1);
	ppcc_estimate est = {0};
	if (!(err == 0 && won->kind != ar->one_kind &&
	      won->step_ms < out->best.estimate.step_ms))
		return 0;
	if ((dp > 1 && (err = ppcc_plan_place_collectives(&sched, a, cfg, bv->costs)) < 0) ||
	    (err = ppcc_schedule_validate_seal(&sched, d, cfg->path, 20)) < 0)
		return err == PPCC_EINPUT ? PPCC_EINTERNAL : err;
	if ((err = ppcc_simulate_keep(&est, a, &sched, bv->costs,
				      PPCC_SIM_SEND_TIMES)) < 0)
		return err;
	if (!(est.step_ms >= won->step_ms) ||
	    (est.step_ms != won->step_ms && sched.version < 4))
		return PPCC_EINTERNAL;
	if (est.step_ms < out->best.estimate.step_ms)
		return auto_take_order(ar, out, won, &sched, &est);
	return 0;
}

/* The auto kind: the handcrafted kinds' own plans (auto_kinds), then
 * ppcc_sched_auto's orders (auto_orders), so the plan is never slower in
 * simulation than any handcrafted kind that fits.  None fits: the
 * diagnostics of 1F1B's plan. */
int ppcc_plan_auto_build(ppcc_plan *out, ppcc_arena *a,
			 const ppcc_config *cfg, ppcc_diag *d,
			 ppcc_admits_fn admits, void *admits_ctx)
{
	auto_run ar = {.a = a, .cfg = cfg, .one_kind = -1};
	int err;
	if (!(ar.rep = ppcc_arena_alloc(a, 1, sizeof *ar.rep)))
		return PPCC_ENOMEM;
	memset(out, 0, sizeof *out);
	ar.rep->chosen_kind = -1;
	if ((err = auto_kinds(&ar, out, admits, admits_ctx)) < 0)
		return err;
	if (ar.rep->chosen_kind < 0 && ar.refused > 0 && ar.rep->n_kinds == 0) {
		admits = NULL;
		if ((err = auto_kinds(&ar, out, NULL, NULL)) < 0)
			return err;
	}
	if (ar.rep->chosen_kind < 0) {
		ppcc_config *ck = ppcc_arena_alloc(a, 1, sizeof *ck);
		if (!ck)
			return PPCC_ENOMEM;
		*ck = *cfg;
		ck->pipeline.kind = PPCC_SCHED_1F1B;
		ck->pipeline.chunks = 1;
		ck->pipeline.chunks_loc = (ppcc_loc){0};
		err = ppcc_plan_drive(out, a, ck, d, 1, NULL, NULL, NULL);
		return err < 0 ? err : PPCC_EINTERNAL;
	}
	/* the orders, unless they are not the caller's */
	if (ar.one_kind < 0 ||
	    !auto_admits(cfg, PPCC_SCHED_AUTO, admits, admits_ctx))
		ar.rep->split_kind = ar.rep->orders.chosen = -1;
	else if ((err = auto_orders(&ar, out, d)) < 0)
		return err;
	out->config = ar.best_cfg;
	out->auto_plan = ar.rep;
	return 0;
}
