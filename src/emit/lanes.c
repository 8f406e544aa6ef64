/*
 * emit/lanes.c - every data-parallel and ZeRO collective that the text
 * report counts, per pipeline rank, with its start and end on the
 * timeline's clock (the simulated step, from 0): what the pictures draw
 * in a lane per rank (DOT/SVG/PNG, the Chrome trace, HTML).
 *
 * A ZeRO-2 schedule holds only the last backward's REDUCE_SCATTER_GRAD
 * of each stage; the iteration model (sim/iteration.c) adds one of each
 * of those buckets after every earlier backward, which also moves the
 * schedule's own ones later on the rank's channel.  So under ZeRO 2 the
 * times are ppcc_iteration_estimate's walk: the ALL_GATHER_PARAM prologue
 * at the simulator's times, then each reduction posted on the channel
 * (ppcc_dp_channel_post) when it is ready (ppcc_dp_grad_ready), each
 * added one as its backward produces it.  Under ZeRO 0, 1 and 3 that walk is the
 * simulator's, whose times are taken as they are.  A ZeRO 1 or 2 schedule
 * without ALL_GATHER_PARAM (an older format) gets the iteration's one
 * all-gather after the optimizer step (action -1).
 * Contract: for a plan ppcc_plan_build made, the largest reduce_ms is the
 * iteration's dp_comm_ms, each gather_ms the estimate's dp_gather_ms, and
 * each rank's latest end (or its last action's) the iteration's dp_end_ms
 * (check_dot tests it).  Limits: without a configuration (a plan read
 * back from JSON) the ZeRO stage is unknown: the schedule's own only.
 *
 * Derivation: doc/design/iteration.md (each ZeRO stage's collectives).
 */
#include <string.h>

#include "ppcc.h"

static int lanes_push(ppcc_lanes *l, size_t *cap, const ppcc_lane_op *op)
{
	if ((size_t)l->n_ops == *cap) {
		size_t n = *cap ? 2 * *cap : 64;
		if (n > SIZE_MAX / sizeof *l->ops)
			return PPCC_ENOMEM;
		ppcc_lane_op *ops = ppcc_realloc(l->ops, n * sizeof *ops);
		if (!ops)
			return PPCC_ENOMEM;
		l->ops = ops;
		*cap = n;
	}
	l->ops[l->n_ops++] = *op;
	return 0;
}

void ppcc_lanes_free(ppcc_lanes *l)
{
	if (!l)
		return;
	ppcc_free(l->ops);
	ppcc_free(l->first);
	ppcc_free(l->reduce_ms);
	ppcc_free(l->gather_ms);
	memset(l, 0, sizeof *l);
}

/* One rank's collectives, appended to l; *out_end the later of its last
 * action's and its channel's end. */
static int lanes_rank(ppcc_lanes *l, size_t *cap, double *out_end,
		      const ppcc_config *cfg, const ppcc_schedule *s,
		      const ppcc_stage_cost *costs, const ppcc_estimate *e,
		      int r, int32_t *first_red, int32_t *n_red, int *done)
{
	const ppcc_rank_schedule *rs = &s->ranks[r];
	int S = s->n_stages, m = s->n_microbatches;
	int zero = cfg ? cfg->pipeline.zero : 0;
	double free_ms = e->dp_gather_ms ? e->dp_gather_ms[r] : 0;
	double clock = 0, last = 0;
	int32_t any_coll = 0, unshards = 0;
	int err;

	for (int st = 0; st < S; st++) {
		n_red[st] = 0;
		done[st] = 0;
	}
	for (int32_t i = s->version >= 3 ? rs->n_actions - 1 : -1; i >= 0; i--) {
		const ppcc_action *x = &rs->actions[i];
		any_coll += ppcc_op_is_collective(x->op);
		unshards += x->op == PPCC_OP_UNSHARD_PARAM;
		if (ppcc_op_is_reduction(x->op) && x->stage >= 0 && x->stage < S) {
			first_red[x->stage] = i;
			n_red[x->stage]++;
		}
	}
	/* ZeRO 2 adds reduce-scatters the schedule does not hold, which
	 * move its own ones later on the channel: those are re-timed */
	int early = zero >= 2 && !unshards;
	*out_end = e->dp_end_ms ? e->dp_end_ms[r] : 0;
	if (!any_coll || rs->n_actions < 1)
		return 0;
	ppcc_rank_times t;
	if ((err = ppcc_rank_times_begin(&t, s, costs, e, r)) < 0)
		return err;
	ppcc_dp_ready rdy = {.stage = -1};
	for (int32_t i = 0; i < rs->n_actions; i++) {
		const ppcc_action *x = &rs->actions[i];
		double t0, t1;
		if ((err = ppcc_rank_times_at(&t, i, &t0, &t1)) < 0)
			return err;
		if (x->stage < 0 || x->stage >= S ||
		    (!costs && ppcc_op_is_collective(x->op)))
			return PPCC_EINTERNAL;
		const ppcc_stage_cost *c = costs ? &costs[x->stage] : NULL;
		ppcc_lane_op op = {
			.rank = r, .op = x->op, .stage = x->stage,
			.bucket = x->mb, .mb = -1, .action = i,
			.bytes = x->bytes, .start_ms = t0, .end_ms = t1
		};
		if (x->op == PPCC_OP_ALL_GATHER_PARAM) {
			/* the prologue: the simulator's times, from 0 */
			l->gather_ms[r] += t1 - t0;
		} else if (x->op == PPCC_OP_UNSHARD_PARAM) {
			/* ZeRO 3: the schedule holds every collective, and
			 * the simulator's times are the iteration's */
			l->gather_ms[r] += ppcc_dp_gather_ms(c, x->bytes);
		} else if (ppcc_op_is_collective(x->op)) {
			double ms = ppcc_dp_reduce_ms(c, x->bytes);
			if (early) {
				op.start_ms = ppcc_dp_channel_post(
					&free_ms, ppcc_dp_ready_at(&rdy, c,
						rs->actions, i, rs->n_actions,
						clock), ms);
				op.end_ms = free_ms;
			}
			l->reduce_ms[r] += ms;
		} else {
			clock = t1;
			if (t1 > last)
				last = t1;
			if (x->op <= PPCC_OP_W)
				ppcc_dp_ready_compute(&rdy, x->stage, t0, t1);
			if ((x->op == PPCC_OP_B || x->op == PPCC_OP_W) &&
			    ++done[x->stage] < m && early) {
				/* ZeRO 2: this backward reduce-scatters the
				 * stage's buckets too */
				const ppcc_action *run =
					&rs->actions[first_red[x->stage]];
				ppcc_dp_ready early_rdy;
				ppcc_dp_ready_compute(&early_rdy, x->stage, t0, t1);
				for (int32_t k = 0; k < n_red[x->stage]; k++) {
					const ppcc_action *red =
						&rs->actions[first_red[x->stage] + k];
					double ms = ppcc_dp_reduce_ms(c, red->bytes);
					ppcc_lane_op added = {
						.rank = r, .op = red->op,
						.stage = red->stage,
						.bucket = red->mb, .mb = x->mb,
						.action = -1, .bytes = red->bytes,
					};
					added.start_ms = ppcc_dp_channel_post(
						&free_ms, ppcc_dp_ready_at(
							&early_rdy, c, run, k,
							n_red[x->stage], t1), ms);
					added.end_ms = free_ms;
					l->reduce_ms[r] += ms;
					if ((err = lanes_push(l, cap, &added)) < 0)
						return err;
				}
			}
			continue;
		}
		if ((err = lanes_push(l, cap, &op)) < 0)
			return err;
	}
	if (early)
		*out_end = free_ms > last ? free_ms : last;
	return 0;
}

int ppcc_lanes_build(ppcc_lanes *out, const ppcc_config *cfg,
		     const ppcc_schedule *s, const ppcc_stage_cost *costs,
		     const ppcc_estimate *e)
{
	memset(out, 0, sizeof *out);
	if (!s || !e || s->n_ranks < 1 || s->n_stages < 1)
		return PPCC_EINTERNAL;
	int p = s->n_ranks, S = s->n_stages, err = 0;
	size_t cap = 0;
	int32_t *first_red = ppcc_calloc((size_t)S, sizeof *first_red);
	int32_t *n_red = ppcc_calloc((size_t)S, sizeof *n_red);
	int *done = ppcc_calloc((size_t)S, sizeof *done);
	double *end = ppcc_calloc((size_t)p, sizeof *end);
	out->n_ranks = p;
	out->first = ppcc_calloc((size_t)p + 1, sizeof *out->first);
	out->reduce_ms = ppcc_calloc((size_t)p, sizeof *out->reduce_ms);
	out->gather_ms = ppcc_calloc((size_t)p, sizeof *out->gather_ms);
	if (!first_red || !n_red || !done || !end || !out->first ||
	    !out->reduce_ms || !out->gather_ms) {
		err = PPCC_ENOMEM;
		goto out;
	}
	double sync = e->step_ms;
	for (int r = 0; r < p; r++) {
		out->first[r] = out->n_ops;
		if ((err = lanes_rank(out, &cap, &end[r], cfg, s, costs, e, r,
				      first_red, n_red, done)) < 0)
			goto out;
		if (end[r] > sync)
			sync = end[r];
	}
	out->first[p] = out->n_ops;

	/* ZeRO 1 or 2 without the ALL_GATHER_PARAM prologue: the iteration
	 * charges each rank one all-gather after its optimizer step */
	int zero = cfg ? cfg->pipeline.zero : 0;
	if (cfg && costs && (zero == 1 || zero == 2)) {
		const ppcc_pipeline *pl = &cfg->pipeline;
		int cp = pl->context_parallel > 0 ? pl->context_parallel : 1;
		int d = pl->data_parallel > 0 ? pl->data_parallel : 1;
		int ns = ppcc_pipeline_zero_ranks(pl);
		int64_t block = (int64_t)pl->tensor_parallel * cp * d /
				ppcc_pipeline_zero_replicas(pl);
		for (int r = 0; r < p; r++) {
			if (out->gather_ms[r] > 0 ||
			    (e->dp_gather_ms && e->dp_gather_ms[r] > 0))
				continue;
			double params = 0;
			int stage = -1;
			for (int st = 0; st < S; st++)
				if (s->stages[st].rank == r) {
					params += costs[st].params;
					stage = stage < 0 ? st : stage;
				}
			if (stage < 0)
				continue;
			ppcc_cost_place at;
			ppcc_topo_place(&at, cfg, r);
			double opt = ppcc_memory_step_ms(
				cfg, params, at.device_group->memory_bandwidth);
			double ms = 1e3 * ppcc_allgather_seconds(
				&cfg->cluster, ns, block,
				ppcc_memory_param16_bytes(params));
			ppcc_lane_op op = {
				.rank = r, .op = PPCC_OP_ALL_GATHER_PARAM,
				.stage = stage, .bucket = 0, .mb = -1,
				.action = -1,
				.bytes = (uint64_t)ppcc_memory_param16_bytes(params),
				.start_ms = sync + opt, .end_ms = sync + opt + ms
			};
			out->gather_ms[r] += ms;
			/* keep rank order: shift the later ranks' ops */
			if ((err = lanes_push(out, &cap, &op)) < 0)
				goto out;
			long at_i = out->first[r + 1];
			memmove(&out->ops[at_i + 1], &out->ops[at_i],
				(size_t)(out->n_ops - 1 - at_i) * sizeof *out->ops);
			out->ops[at_i] = op;
			for (int k = r + 1; k <= p; k++)
				out->first[k]++;
		}
	}
	for (long k = 0; k < out->n_ops; k++)
		if (out->ops[k].end_ms > out->end_ms)
			out->end_ms = out->ops[k].end_ms;
out:
	ppcc_free(first_red);
	ppcc_free(n_red);
	ppcc_free(done);
	ppcc_free(end);
	if (err < 0)
		ppcc_lanes_free(out);
	return err;
}

int ppcc_lanes_of(ppcc_lanes *out, const ppcc_plan *p)
{
	return ppcc_lanes_build(out, p->config, &p->best.schedule,
				p->best.costs, &p->best.estimate);
}

int ppcc_window_step_span(double *out_start, double *out_end,
			  const ppcc_schedule *s, const ppcc_stage_cost *costs,
			  const ppcc_estimate *e, int mb, ppcc_diag *d)
{
	if (mb < 0 || mb >= s->n_microbatches) {
		ppcc_error(d, NULL, "--window step %d: the plan's microbatches "
			   "are 0 to %d", mb, s->n_microbatches - 1);
		return PPCC_EINPUT;
	}
	double lo = 0, hi = 0;
	int seen = 0, err;
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		ppcc_rank_times t;
		if (rs->n_actions < 1)
			continue;
		if ((err = ppcc_rank_times_begin(&t, s, costs, e, r)) < 0)
			return err;
		for (int32_t i = 0; i < rs->n_actions; i++) {
			const ppcc_action *x = &rs->actions[i];
			double t0, t1;
			if ((err = ppcc_rank_times_at(&t, i, &t0, &t1)) < 0)
				return err;
			if (x->mb != mb || ppcc_op_is_collective(x->op))
				continue;
			if (x->op != PPCC_OP_F && x->op != PPCC_OP_B &&
			    x->op != PPCC_OP_I && x->op != PPCC_OP_W)
				continue;
			lo = seen && lo < t0 ? lo : t0;
			hi = seen && hi > t1 ? hi : t1;
			seen = 1;
		}
	}
	if (!seen) {
		ppcc_error(d, NULL, "--window step %d: the schedule runs no "
			   "forward or backward of microbatch %d", mb, mb);
		return PPCC_EINPUT;
	}
	*out_start = lo;
	*out_end = hi;
	return 0;
}
