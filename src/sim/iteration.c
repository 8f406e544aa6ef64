/*
 * iteration.c - one training iteration from a simulated schedule: the
 * data-parallel gradient reduction on a communication timeline per rank,
 * the optimizer step, throughput, MFU and the memory split.
 *
 * The pipeline's step (simulate.c) already holds the compute, the
 * collectives inside each F and B, the p2p transfers and the ZeRO-3
 * gathers.  What the d * cp ranks that share the weights add:
 * iteration = the schedule's step + exposed gradient reduction (the
 * latest rank's end less the step) + the slowest rank's optimizer step
 * (and a parameter all-gather, for a ZeRO 1 or 2 schedule without
 * ALL_GATHER_PARAM).  The reductions follow the channel rule of the
 * simulator and the runtime (ppcc_dp_channel_post), so that for ZeRO 0
 * and 1, and with a ZeRO-3 schedule, this is the simulator's dp_end_ms to
 * the bit.  Collectives are NCCL's tuner's (cost/comm.c).  Model
 * FLOPs count forward and backward without recomputation (MFU); hardware
 * FLOPs count the recomputation too.
 *
 * Derivation: doc/design/iteration.md (each term under each ZeRO stage,
 * the optimizer's bytes, the gathers, MFU).
 */
#include <math.h>
#include <string.h>

#include "ppcc.h"

double ppcc_dp_bucket_bytes(const ppcc_pipeline *pl)
{
	if (pl->dp_bucket_mb > 0)
		return pl->dp_bucket_mb * 1e6;
	int cp = pl->context_parallel > 0 ? pl->context_parallel : 1;
	int d = pl->data_parallel > 0 ? pl->data_parallel : 1;
	double params = 1e6 * d * cp;
	if (params < 40e6)
		params = 40e6;
	return params * pl->grad_bytes;
}

/* Under ZeRO 2 and 3, an earlier backward of a stage, from t0 to t1,
 * reduce-scatters the stage's buckets: those of its REDUCE_GRAD
 * actions, n_red of them at red, each ready as the placed ones are
 * (ppcc_dp_grad_ready).  Returns the time spent. */
static double reduce_early(double *free_ms, double t0, double t1,
			   const ppcc_stage_cost *c, const ppcc_action *red,
			   int32_t n_red)
{
	double spent = 0;
	ppcc_dp_ready rdy;
	ppcc_dp_ready_compute(&rdy, red[0].stage, t0, t1);
	for (int32_t k = 0; k < n_red; k++) {
		double ms = ppcc_dp_reduce_ms(c, red[k].bytes);
		ppcc_dp_channel_post(free_ms, ppcc_dp_ready_at(&rdy, c, red, k,
							       n_red, t1), ms);
		spent += ms;
	}
	return spent;
}

int ppcc_iteration_estimate(ppcc_iteration *out, ppcc_arena *a,
			    const ppcc_config *cfg,
			    const ppcc_plan_variant *v)
{
	const ppcc_schedule *s = &v->schedule;
	const ppcc_estimate *e = &v->estimate;
	const ppcc_pipeline *pl = &cfg->pipeline;
	const ppcc_cluster *cl = &cfg->cluster;
	int p = s->n_ranks, S = s->n_stages, m = s->n_microbatches;
	int t = pl->tensor_parallel;
	int cp = pl->context_parallel > 0 ? pl->context_parallel : 1;
	int d = pl->data_parallel > 0 ? pl->data_parallel : 1;
	int zero = pl->zero;
	int64_t block = (int64_t)t * cp * d; /* devices of one pipeline rank */
	/* ZeRO's shard: all d x cp ranks, or under HSDP a group */
	int ns = ppcc_pipeline_zero_ranks(pl);
	int64_t sblock = block / ppcc_pipeline_zero_replicas(pl);

	memset(out, 0, sizeof *out);
	if (p < 1 || S < p || m < 1 || t < 1)
		return PPCC_EINTERNAL;
#define IT_ALLOC(ptr) \
	(((ptr) = ppcc_arena_alloc(a, (size_t)p, sizeof(double))) != NULL)
	if (!IT_ALLOC(out->weight_bytes) || !IT_ALLOC(out->grad_bytes) ||
	    !IT_ALLOC(out->optimizer_bytes) || !IT_ALLOC(out->activation_bytes) ||
	    !IT_ALLOC(out->logits_bytes) || !IT_ALLOC(out->reserved_bytes) ||
	    !IT_ALLOC(out->dp_end_ms))
		return PPCC_ENOMEM;
#undef IT_ALLOC
	int *in_flight = ppcc_arena_alloc(a, (size_t)S, sizeof *in_flight);
	int *done = ppcc_arena_alloc(a, (size_t)S, sizeof *done);
	int32_t *first_red = ppcc_arena_alloc(a, (size_t)S, sizeof *first_red);
	int32_t *n_red = ppcc_arena_alloc(a, (size_t)S, sizeof *n_red);
	if (!in_flight || !done || !first_red || !n_red)
		return PPCC_ENOMEM;

	double sync = e->step_ms, post = 0, post_opt = 0, post_gather = 0;
	double dp_total = 0;
	for (int r = 0; r < p; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		ppcc_cost_place at;
		ppcc_topo_place(&at, cfg, r);
		const ppcc_device_group *dg = at.device_group;
		double free_ms = e->dp_gather_ms ? e->dp_gather_ms[r] : 0;
		double last = 0, spent = 0, clock = 0;
		ppcc_dp_ready red = {.stage = -1};
		int gathers = 0;
		double params = 0, stash = 0, peak = -1, logits_at_peak = 0;
		double logits_now = 0;

		for (int st = 0; st < S; st++) {
			if (s->stages[st].rank != r)
				continue;
			const ppcc_stage_cost *c = &v->costs[st];
			params += c->params;
			out->weight_bytes[r] += c->weight_bytes;
			out->grad_bytes[r] += c->grad_bytes;
			out->optimizer_bytes[r] += c->optimizer_bytes;
			in_flight[st] = 0;
			done[st] = 0;
			n_red[st] = 0;
		}
		/* (versions 1 and 2 hold no collectives: the validator's
		 * rule) */
		int32_t any_coll = 0, unshards = 0;
		for (int32_t i = s->version >= 3 ? rs->n_actions - 1 : -1;
		     i >= 0; i--) {
			const ppcc_action *x = &rs->actions[i];
			if (ppcc_op_is_collective(x->op))
				any_coll++;
			unshards += x->op == PPCC_OP_UNSHARD_PARAM;
			if (ppcc_op_is_reduction(x->op)) {
				first_red[x->stage] = i;
				n_red[x->stage]++;
			}
		}
		/* ZeRO-3's gathers are not a prologue: the channel is free
		 * from 0, and each takes it where the rank reaches it */
		if (unshards)
			free_ms = 0;
		/* The stash along the rank's order, as the simulator counts
		 * it, to split its peak into activations and logits; the
		 * actions' times replayed from the simulation where the rank
		 * has collectives.  A rank without any needs only its last
		 * action's end, which is the simulator's dp_end_ms (its
		 * channel never used): its times are not replayed. */
		ppcc_rank_times times;
		int err;
		if (!any_coll)
			last = e->dp_end_ms[r];
		else if (rs->n_actions > 0 &&
			 (err = ppcc_rank_times_begin(&times, s, v->costs, e, r)) < 0)
			return err;
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *x = &rs->actions[i];
			const ppcc_stage_cost *c = &v->costs[x->stage];
			double t0 = 0, t1 = last;
			if (any_coll &&
			    (err = ppcc_rank_times_at(&times, i, &t0, &t1)) < 0)
				return err;
			if (x->op == PPCC_OP_ALL_GATHER_PARAM) {
				gathers = 1; /* the prologue: in the step */
				out->dp_gathers++;
				continue;
			}
			if (x->op == PPCC_OP_UNSHARD_PARAM) {
				/* in the step; on the channel */
				gathers = 1;
				out->dp_gathers++;
				ppcc_dp_channel_post(&free_ms, clock,
						     ppcc_dp_gather_ms(c, x->bytes));
				continue;
			}
			if (ppcc_op_is_collective(x->op)) {
				double ms = ppcc_dp_reduce_ms(c, x->bytes);
				out->dp_reductions++;
				ppcc_dp_channel_post(&free_ms, ppcc_dp_ready_at(
					&red, c, rs->actions, i, rs->n_actions,
					clock), ms);
				spent += ms;
				continue;
			}
			clock = t1;
			if (x->op <= PPCC_OP_W)
				ppcc_dp_ready_compute(&red, x->stage, t0, t1);
			if (t1 > last)
				last = t1;
			if (x->op == PPCC_OP_F) {
				in_flight[x->stage]++;
				stash += c->stash_bytes;
				logits_now += c->logits_bytes;
				if (stash > peak) {
					peak = stash;
					logits_at_peak = logits_now;
				}
			} else if (x->op == PPCC_OP_I) {
				/* the input gradient frees the logits; W keeps
				 * their gradient, an activation */
				stash -= c->stash_input_bytes;
				logits_now -= c->logits_bytes;
				if (stash > peak) {
					peak = stash;
					logits_at_peak = logits_now;
				}
			} else if (x->op == PPCC_OP_B || x->op == PPCC_OP_W) {
				in_flight[x->stage]--;
				stash -= x->op == PPCC_OP_W
					 ? c->stash_bytes - c->stash_input_bytes
					 : c->stash_bytes;
				if (x->op == PPCC_OP_B)
					logits_now -= c->logits_bytes;
				done[x->stage]++;
				if (zero >= 2 && !unshards && done[x->stage] < m &&
				    n_red[x->stage] > 0)
					spent += reduce_early(
						&free_ms, t0, t1, c,
						&rs->actions[first_red[x->stage]],
						n_red[x->stage]);
			}
		}
		if (peak < 0)
			peak = 0;
		out->logits_bytes[r] = logits_at_peak;
		out->activation_bytes[r] = peak - logits_at_peak;
		out->reserved_bytes[r] = cl->reserved_bytes;
		double end = free_ms > last ? free_ms : last;
		out->dp_end_ms[r] = end;
		if (end > sync)
			sync = end;
		if (spent > dp_total) {
			dp_total = spent;
			double tail = end - e->step_ms;
			double hidden = spent - (tail > 0 ? tail : 0);
			out->dp_hidden_ms = hidden > 0 ? hidden : 0;
		}

		double opt = ppcc_memory_step_ms(cfg, params,
						 dg->memory_bandwidth);
		double gather = gathers ? 0 : zero == 1 || zero == 2
			? 1e3 * ppcc_allgather_seconds(
				cl, ns, sblock,
				ppcc_memory_param16_bytes(params))
			: 0;
		if (gathers && e->dp_gather_ms &&
		    e->dp_gather_ms[r] > out->dp_gather_ms)
			out->dp_gather_ms = e->dp_gather_ms[r];
		if (gathers && e->dp_gather_wait_ms &&
		    e->dp_gather_wait_ms[r] > out->dp_gather_exposed_ms)
			out->dp_gather_exposed_ms = e->dp_gather_wait_ms[r];
		if (opt + gather > post) {
			post = opt + gather;
			post_opt = opt;
			post_gather = gather;
		}
	}

	/* a ZeRO-3 rank's gather buffers are weights too (the peak's) */
	ppcc_sim_add_gather_buffers(out->weight_bytes, s, v->costs);

	/* The busiest rank's step, part by part. */
	int busiest = 0;
	for (int r = 1; r < p; r++)
		if (e->idle_ms[r] < e->idle_ms[busiest])
			busiest = r;
	double rc = 0, tp = 0, cpc = 0, epc = 0;
	for (int st = 0; st < S; st++) {
		if (s->stages[st].rank != busiest)
			continue;
		const ppcc_stage_cost *c = &v->costs[st];
		rc += m * c->recompute_ms;
		tp += m * (c->tp_fwd_ms + c->tp_bwd_ms);
		cpc += m * (c->cp_fwd_ms + c->cp_bwd_ms);
		epc += m * (c->ep_fwd_ms + c->ep_bwd_ms);
	}
	/* what its overlapped pairs hid of the all-to-alls: each pair's F
	 * and B less the pair (ppcc_pair_ms) */
	double hidden = 0;
	const ppcc_rank_schedule *brs = &s->ranks[busiest];
	for (int32_t i = 0; i + 2 < brs->n_actions; i++) {
		const ppcc_action *x = &brs->actions[i];
		if (!ppcc_pair_at(brs->actions, i, brs->n_actions, S))
			continue;
		const ppcc_stage_cost *cf = &v->costs[x[1].stage];
		const ppcc_stage_cost *cb = &v->costs[x[2].stage];
		hidden += cf->fwd_ms + cb->bwd_ms - ppcc_pair_ms(cf, cb);
	}
	out->rank = busiest;
	out->step_ms = e->step_ms;
	out->ep_hidden_ms = hidden;
	out->recompute_ms = rc;
	out->tp_comm_ms = tp;
	out->cp_comm_ms = cpc;
	out->ep_comm_ms = epc - hidden;
	out->compute_ms = e->busy_ms[busiest] - rc - tp - cpc - (epc - hidden);
	out->p2p_ms = e->comm_ms ? e->comm_ms[busiest] : 0;
	/* its wait for its own parameter gathers is data-parallel
	 * communication (ZeRO-3's own part of the step), not bubble */
	double gwait = e->dp_gather_wait_ms ? e->dp_gather_wait_ms[busiest] : 0;
	int z3 = zero == 3 && out->dp_gathers > 0; /* UNSHARD_PARAM */
	out->zero3_comm_ms = z3 ? gwait : 0;
	out->bubble_ms = e->step_ms - e->busy_ms[busiest] - out->p2p_ms - gwait;
	if (out->bubble_ms < 0)
		out->bubble_ms = 0;
	out->dp_comm_ms = dp_total;
	out->dp_exposed_ms = sync - e->step_ms + (z3 ? 0 : gwait) + post_gather;
	out->optimizer_ms = post_opt;
	out->iteration_ms = sync + post;

	/* Throughput. */
	double b = cfg->model.micro_batch_size > 0 ? cfg->model.micro_batch_size : 1;
	out->data_parallel = d;
	out->global_batch_size = (int)((double)m * b * d);
	double mf = 0, hf = 0;
	for (int st = 0; st < S; st++) {
		mf += v->costs[st].model_flops;
		hf += v->costs[st].hardware_flops;
	}
	/* each of the d replicas runs m microbatches; cp ranks split one */
	out->model_flops = mf * m * d;
	out->hardware_flops = hf * m * d;
	double sec = out->iteration_ms / 1e3;
	double peak_flops = 0, devices = (double)block * p;
	for (int r = 0; r < p; r++) {
		ppcc_cost_place at;
		ppcc_topo_place(&at, cfg, r);
		peak_flops += (double)block * at.device_group->tflops * 1e12;
	}
	if (sec > 0) {
		out->model_tflops_per_device = out->model_flops / sec / devices / 1e12;
		out->hardware_tflops_per_device = out->hardware_flops / sec / devices / 1e12;
		out->mfu = out->model_flops / sec / peak_flops;
		if (cfg->model.seq_len > 0)
			out->tokens_per_s = (double)out->global_batch_size *
					    cfg->model.seq_len / sec;
	}
	return 0;
}
