/*
 * variant.c - ppcc's split made a plan variant: its stage table and
 * costs, the schedule's lists given the split's bytes, the data-parallel
 * collectives placed, validated, sealed and simulated, and the
 * iteration estimated.
 *
 * The schedule's order does not depend on the split, so the shape built
 * once (tables.c) becomes the plan's schedule: schedule_set_stages
 * writes the chosen stages' send and receive bytes into its lists, which
 * gives the schedule ppcc_schedule_build would make for them (check_plan
 * compares the two).  The simulation stands in for the validator's dry
 * run; when the split search already simulated the same lists under the
 * same costs, that estimate is taken, and the iteration then runs on a
 * second thread beside the validator.  A plan holds per action the
 * action (24 bytes) and per stage and microbatch the simulated send
 * times (16 bytes).  ppcc_plan_split plans one given split this way.
 *
 * Derivation: doc/design/plan.md (the plan, one schedule).
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "plan/ctx.h"

/* Fills a variant's stages, costs and bottleneck from a split (first[s]
 * for each stage). */
int ppcc_plan_variant_fill(ppcc_plan_ctx *x, ppcc_plan_variant *out,
			   const int *first)
{
	if (!ALLOC(out->stages, x->S) || !ALLOC(out->costs, x->S))
		return PPCC_ENOMEM;
	ppcc_plan_split_costs(x, first, out->costs, out->stages, 1);
	out->bottleneck_ps = 0;
	for (int s = 0; s < x->S; s++) {
		int i = first[s], j = s + 1 < x->S ? first[s + 1] - 1 : x->n - 1;
		int64_t tm = ppcc_plan_stage_time(x, s, i, j);
		if (tm > out->bottleneck_ps)
			out->bottleneck_ps = tm;
	}
	return 0;
}

/* The chosen stages into the schedule that was built for the in-flight
 * counts, before there were stages: its stage table and the bytes of
 * every send and receive (RECV_F and SEND_B of stage s carry stages[s].
 * recv_bytes, SEND_F and RECV_B its send_bytes, as ppcc_schedule_build
 * writes them); the fingerprint is set when the result is validated
 * (ppcc_schedule_validate_seal, ppcc_plan_variant_best).  The order of the actions does not
 * depend on the split, so this is the schedule ppcc_schedule_build would
 * make for these stages (check_plan compares the two), and the plan holds
 * one schedule, not two.  The action lists are this arena's, built by
 * ppcc_plan_drive, hence writable. */
static int schedule_set_stages(ppcc_plan_ctx *x, ppcc_schedule *s,
			       const ppcc_stage_info *stages)
{
	ppcc_stage_info *st;
	if (!ALLOC(st, x->S))
		return PPCC_ENOMEM;
	memcpy(st, stages, (size_t)x->S * sizeof *st);
	/* the plan's own lists carry their stage table's bytes: with every
	 * stage's the same as before, no action changes */
	int same = x->own_lists;
	for (int k = 0; k < x->S && same; k++)
		same = s->stages[k].recv_bytes == st[k].recv_bytes &&
		       s->stages[k].send_bytes == st[k].send_bytes;
	s->stages = st;
	for (int r = 0; r < s->n_ranks && !same; r++) {
		ppcc_action *act = (ppcc_action *)(uintptr_t)s->ranks[r].actions;
		for (int32_t i = 0; i < s->ranks[r].n_actions; i++) {
			int op = act[i].op;
			if (op == PPCC_OP_RECV_F || op == PPCC_OP_SEND_B)
				act[i].bytes = st[act[i].stage].recv_bytes;
			else if (op == PPCC_OP_SEND_F || op == PPCC_OP_RECV_B)
				act[i].bytes = st[act[i].stage].send_bytes;
		}
	}
	s->fingerprint = 0;
	return 0;
}

/* The data-parallel gradient reduction of v's split into its schedule:
 * each stage's gradients (params per device x grad_bytes) in buckets of
 * ppcc_dp_bucket_bytes (sched/reduce.c places them), reduce-scattered
 * under ZeRO >= 1, and under ZeRO 1 and 2 each bucket's 16-bit
 * parameters (2 bytes for each grad_bytes) all-gathered in the next
 * step's prologue. */
int ppcc_plan_place_collectives(ppcc_schedule *s, ppcc_arena *a,
				const ppcc_config *cfg,
				const ppcc_stage_cost *costs)
{
	double *g = ppcc_arena_alloc(a, (size_t)s->n_stages, sizeof *g);
	if (!g)
		return PPCC_ENOMEM;
	for (int st = 0; st < s->n_stages; st++)
		g[st] = costs[st].params * cfg->pipeline.grad_bytes;
	double G = cfg->pipeline.grad_bytes;
	int err = ppcc_schedule_place_collectives(
		s, a, g, ppcc_dp_bucket_bytes(&cfg->pipeline),
		cfg->pipeline.zero, ppcc_memory_gather_per_grad_byte(G));
	return err == PPCC_EINPUT ? PPCC_EINTERNAL : err;
}

int ppcc_plan_place_reductions(ppcc_plan_ctx *x, ppcc_plan_variant *v)
{
	return ppcc_plan_place_collectives(&v->schedule, x->a, x->cfg, v->costs);
}

/* The simulation of ppcc_plan_variant_best, as the validator's run of all ranks. */
typedef struct variant_sim {
	ppcc_arena *a;
	ppcc_plan_variant *v;
	const ppcc_estimate *known; /* the split search's simulation of it */
} variant_sim;

/* The dry run when the estimate is already in place (ppcc_plan_variant_best's
 * iteration beside the validator). */
static int variant_run_none(const ppcc_schedule *s, void *user)
{
	(void)s;
	(void)user;
	return 0;
}

/* The iteration of one variant, on a second thread. */
typedef struct iteration_job {
	ppcc_iteration *out;
	ppcc_arena *a;
	const ppcc_config *cfg;
	const ppcc_plan_variant *v;
	int err;
} iteration_job;

static void *iteration_main(void *arg)
{
	iteration_job *j = arg;
	j->err = ppcc_iteration_estimate(j->out, j->a, j->cfg, j->v);
	return NULL;
}

static int variant_run(const ppcc_schedule *s, void *user)
{
	variant_sim *vs = user;
	if (vs->known) {
		vs->v->estimate = *vs->known;
		return 0;
	}
	return ppcc_simulate_keep(&vs->v->estimate, vs->a, s, vs->v->costs,
				  PPCC_SIM_SEND_TIMES);
}

/* ppcc's split: the schedule, validated and sealed with its fingerprint,
 * and simulated keeping the send times (for the emitters' per-action
 * times), not 16 bytes per action, the simulation standing in for the
 * validator's dry run.  When the split search simulated the same lists
 * under the same costs (known non-NULL, only without data-parallel
 * reductions, which are placed here), that simulation is taken instead
 * of a second one: it finished, so it stands in for the dry run as well;
 * it holds the send times unless the plan is built for an output that
 * prints none (ppcc_pipeline.no_times). */
int ppcc_plan_variant_best(ppcc_plan_ctx *x, ppcc_plan_variant *out,
			   const int *first, ppcc_schedule *shape,
			   const ppcc_estimate *known)
{
	int err;
	if ((err = ppcc_plan_variant_fill(x, out, first)) < 0 ||
	    (err = schedule_set_stages(x, shape, out->stages)) < 0)
		return err;
	out->schedule = *shape;
	if (x->dp * x->cp > 1 && (err = ppcc_plan_place_reductions(x, out)) < 0)
		return err;
	/* validated and simulated in one (the simulation is the dry run) */
	if (x->dp * x->cp > 1)
		known = NULL;
	if (!ALLOC(out->iteration, 1))
		return PPCC_ENOMEM;
	/* With the estimate known and a second thread, the iteration (which
	 * reads the lists, the costs and the estimate, and takes its arrays
	 * from the arena) runs beside the validator (which reads the lists,
	 * allocates outside the arena and writes only the fingerprint). */
	int64_t actions = 0;
	for (int r = 0; r < out->schedule.n_ranks; r++)
		actions += out->schedule.ranks[r].n_actions;
	iteration_job job = {out->iteration, x->a, x->cfg, out, 0};
	pthread_t beside;
	int on_two = 0;
	if (known && !x->lean && x->cfg->pipeline.threads > 1 &&
	    actions >= ppcc_step_ahead_from(x->cfg->probe)) {
		out->estimate = *known;
		on_two = pthread_create(&beside, NULL, iteration_main, &job) == 0;
	}
	if (x->lean)
		err = variant_run(&out->schedule, &(variant_sim){x->a, out, known});
	else if ((err = ppcc_schedule_validate_seal_run(
			  &out->schedule, x->d, x->cfg->path, 20,
			  on_two ? variant_run_none : variant_run,
			  &(variant_sim){x->a, out, known})) == PPCC_EINPUT)
		err = PPCC_EINTERNAL;
	if (on_two) {
		pthread_join(beside, NULL);
		if (err >= 0)
			err = job.err;
	}
	if (err < 0)
		return err;
	if (x->dp * x->cp <= 1)
		shape->fingerprint = out->schedule.fingerprint;
	return on_two ? 0 : ppcc_iteration_estimate(out->iteration, x->a,
						    x->cfg, out);
}

/* Every rank's simulated peak within its device's memory. */
int ppcc_plan_variant_fits(const ppcc_plan_ctx *x,
			   const ppcc_plan_variant *v)
{
	for (int r = 0; r < x->p; r++)
		if (v->estimate.peak_memory_bytes[r] > x->rank_cap[r])
			return 0;
	return 1;
}

int ppcc_plan_split(ppcc_plan_variant *out, int *out_fits, ppcc_arena *a,
		    const ppcc_config *cfg, const int *first, ppcc_diag *d)
{
	ppcc_plan_ctx ctx, *x = &ctx;
	ppcc_schedule shape;
	int err;
	memset(out, 0, sizeof *out);
	if ((err = ppcc_plan_setup(x, &shape, a, cfg, d, NULL, NULL)) < 0)
		return err;
	if (first[0] != 0)
		return PPCC_EINPUT;
	for (int s = 1; s < x->S; s++)
		if (first[s] <= first[s - 1] || first[s] >= x->n)
			return PPCC_EINPUT;
	if ((err = ppcc_plan_variant_best(x, out, first, &shape, NULL)) < 0)
		return err;
	*out_fits = ppcc_plan_variant_fits(x, out);
	return 0;
}
