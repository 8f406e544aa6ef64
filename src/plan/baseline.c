/*
 * baseline.c - the uniform split a plan is compared with: Megatron-LM's
 * default of equal layer counts, the remainder on the last stages, and
 * with the transformer shorthand the blocks divided and the embedding
 * and head joined to the first and last stages.
 *
 * Only what the output prints is kept: the stage table, the costs and
 * the estimate.  Its schedule is the same order of actions under other
 * costs, so it is simulated on best's lists (the simulator reads op,
 * stage and microbatch, not bytes) and keeps no lists or send times of
 * its own; when the split search simulated it as a seed, that estimate
 * is taken.  With ZeRO's parameter gathers at the schedule's start,
 * whose bytes are the split's, it gets collectives of its own placed on
 * the shape's lists, simulated and dropped.
 */
#include "plan/ctx.h"

/* Megatron-LM's default: equal layer counts, the remainder on the last
 * stages; with the transformer shorthand the blocks are divided and the
 * embedding and head join the first and last stages. */
void ppcc_plan_uniform_split(const ppcc_plan_ctx *x, int *uni)
{
	int edge = x->cfg->model.edge_layers && x->S >= 2 && x->n - 2 >= x->S;
	int blocks = x->n - 2 * edge;
	int base = blocks / x->S, extra = blocks % x->S, at = 0;
	for (int s = 0; s < x->S; s++) {
		uni[s] = at;
		at += base + (s >= x->S - extra ? 1 : 0) +
		      (edge && (s == 0 || s == x->S - 1) ? 1 : 0);
	}
}

/* The uniform split, for comparison: only what the output prints.  Its
 * schedule is the same order of actions under other costs, so it is
 * simulated on best's lists (the simulator reads op, stage and microbatch,
 * not bytes), already validated; it keeps no lists or times of its own.
 * When the split search already simulated it (a seed, on the same lists
 * and the same costs, ppcc_plan_split_costs_fn), its estimate is taken from there
 * (known non-NULL) rather than simulated again. */
int ppcc_plan_variant_uniform(ppcc_plan_ctx *x, ppcc_plan_variant *out,
			      const int *first, const ppcc_schedule *best,
			      const ppcc_estimate *known)
{
	int err;
	if ((err = ppcc_plan_variant_fill(x, out, first)) < 0)
		return err;
	if (known)
		out->estimate = *known;
	else if ((err = ppcc_simulate_keep(&out->estimate, x->a, best, out->costs,
					   0)) < 0)
		return err;
	out->schedule = *best;
	out->schedule.stages = out->stages;
	out->schedule.ranks = NULL;
	out->schedule.fingerprint = 0;
	return 0;
}

/* The uniform split when the schedule opens with ZeRO's parameter
 * gathers: their bytes, which the step now waits for, are the split's,
 * so it gets collectives of its own, placed on shape's lists (best's
 * before placement), and is simulated on those; the lists are not
 * kept. */
int ppcc_plan_variant_uniform_placed(ppcc_plan_ctx *x,
				     ppcc_plan_variant *out, const int *first,
				     const ppcc_schedule *shape)
{
	int err;
	if ((err = ppcc_plan_variant_fill(x, out, first)) < 0)
		return err;
	out->schedule = *shape;
	out->schedule.stages = out->stages;
	if ((err = ppcc_plan_place_reductions(x, out)) < 0 ||
	    (err = ppcc_simulate_keep(&out->estimate, x->a, &out->schedule,
				      out->costs, 0)) < 0)
		return err;
	out->schedule.ranks = NULL;
	out->schedule.fingerprint = 0;
	return 0;
}
