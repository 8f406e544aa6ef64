/*
 * tables.c - the cost tables of one plan, from a checked configuration,
 * and what a stage of a split costs under them.
 *
 * The cost model, in the partitioner's integers (t tensor, cp context, d
 * data parallel; one replica of the pipeline is planned): each rank's
 * speed is its device group's; a layer's time is its FLOPs over that
 * speed plus its blocking tensor-parallel and ring-attention collectives
 * and its memory-bound kernels (cost/compute.c), rounded to whole
 * picoseconds so that stage times are exact integer sums; each stage
 * boundary costs latency + bytes / (t * cp * bandwidth) each way
 * (Megatron-LM's blocking p2p); memory per device is the static bytes
 * plus the stash times the most microbatches the schedule keeps in
 * flight on the stage (cost/memory.c's terms, rounded to bytes).  The
 * tables are prefix sums over the layers, per device group for the
 * times, so a stage's cost is O(1); a value past what int64 sums can
 * hold is an error at its layer's line.  ZeRO-3's gathers are the
 * schedule's UNSHARD_PARAM actions, timed by the simulator, not inside
 * F and B.  ppcc_plan_setup also builds the schedule's shape (its
 * order, which does not depend on the split) or takes it from the
 * search's cache.  Limits: an overlapped p2p transfer
 * (--overlap-p2p-comm) is not modelled.
 *
 * Derivation: doc/design/plan.md (every term of the cost model).
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "plan/ctx.h"

/* A layer whose time or size is beyond what the integer model can sum
 * gets an error at its line rather than a silently clamped plan. */
static int check_range(ppcc_plan_ctx *x, const ppcc_layer *l, const char *what,
		       double value, const char *unit)
{
	double limit = (double)(INT64_MAX / 4) / (double)(x->n + 1);
	if (value < limit)
		return 0;
	ppcc_error(x->d, &l->loc, "layer '%s': %s of %.3g %s is out of the range "
		   "ppcc can plan", l->name, what, value, unit);
	return PPCC_EINPUT;
}

/* Per layer: bytes per parameter and the communication inside compute. */
static int layer_comm_init(ppcc_plan_ctx *x)
{
	const ppcc_config *c = x->cfg;
	const ppcc_layer *L = c->model.layers;
	const ppcc_transformer *tf = c->model.transformer;
	int sp = tf ? tf->sequence_parallel : 1;
	int full = tf && tf->recompute == PPCC_RECOMPUTE_FULL;
	int n = x->n;
	if (!ALLOC(x->lc.tp_f, n) ||
	    !ALLOC(x->lc.tp_b, n) || !ALLOC(x->lc.cp_f, n) ||
	    !ALLOC(x->lc.cp_b, n))
		return PPCC_ENOMEM;
	/* ZeRO-3's gathers are the schedule's UNSHARD_PARAM actions
	 * (sched/reduce.c), timed on the rank's channel by the simulator,
	 * not inside F and B; what they hold is a layer's parameters at a
	 * time (cost/memory.c), unless torchtitan keeps a pipeline stage's
	 * gathered (in its static bytes, ppcc_memory_zero_bytes_per_param) */
	if (c->pipeline.zero == 3 && x->dp * x->cp > 1 &&
	    !ppcc_memory_zero3_resident(c->pipeline.trainer, x->p)) {
		int levels = 1;
		while ((1 << levels) <= n)
			levels++;
		if (!ALLOC(x->z3_max, levels))
			return PPCC_ENOMEM;
		x->z3_levels = levels;
		for (int k = 0; k < levels; k++) {
			int len = n - (1 << k) + 1;
			if (!ALLOC(x->z3_max[k], len))
				return PPCC_ENOMEM;
			for (int i = 0; i < len; i++) {
				if (k > 0) {
					int64_t lo = x->z3_max[k - 1][i];
					int64_t hi = x->z3_max[k - 1][i + (1 << (k - 1))];
					x->z3_max[k][i] = lo > hi ? lo : hi;
				} else if (L[i].params > 0) {
					x->z3_max[0][i] = to_bytes(
						ppcc_memory_param16_bytes(L[i].params));
				}
			}
		}
	}
	x->zero_bpp = ppcc_memory_zero_bytes_per_param(
		NULL, c->pipeline.zero, c->pipeline.grad_bytes,
		ppcc_pipeline_zero_ranks(&c->pipeline),
		c->pipeline.trainer, x->p,
		ppcc_pipeline_moment_bytes(&c->pipeline));
	if (tf && tf->moe.experts > 0) {
		if (!ALLOC(x->lc.ep_f, n) || !ALLOC(x->lc.ep_b, n))
			return PPCC_ENOMEM;
		if (!ALLOC(x->ep_prefix[0], n + 1) ||
		    !ALLOC(x->ep_prefix[1], n + 1) ||
		    !ALLOC(x->hid_prefix[0], n + 1) ||
		    !ALLOC(x->hid_prefix[1], n + 1))
			return PPCC_ENOMEM;
		x->ep_hidden_share = ppcc_cost_ep_hidden_share(c, x->kind);
		for (int i = 0; i < n; i++) {
			ppcc_cost_expert_comm(&x->lc.ep_f[i], &x->lc.ep_b[i], c,
					      &L[i]);
			int err;
			if ((err = check_range(x, &L[i], "expert all-to-all time",
					       x->lc.ep_f[i] * PS_PER_S,
					       "picoseconds")) ||
			    (err = check_range(x, &L[i], "expert all-to-all time",
					       x->lc.ep_b[i] * PS_PER_S,
					       "picoseconds")))
				return err;
			x->ep_prefix[0][i + 1] = x->ep_prefix[0][i] +
						 to_ps(x->lc.ep_f[i]);
			x->ep_prefix[1][i + 1] = x->ep_prefix[1][i] +
						 to_ps(x->lc.ep_b[i]);
			x->hid_prefix[0][i + 1] = x->hid_prefix[0][i] + to_ps(
				x->ep_hidden_share * x->lc.ep_f[i]);
			x->hid_prefix[1][i + 1] = x->hid_prefix[1][i] + to_ps(
				x->ep_hidden_share * x->lc.ep_b[i]);
		}
	}
	for (int i = 0; i < n; i++) {
		double op = ppcc_comm_tp_seconds(&c->cluster, x->t, x->cp,
						 L[i].tp_message_bytes, sp);
		x->lc.tp_f[i] = L[i].tp_fwd_allreduces * op;
		x->lc.tp_b[i] = L[i].tp_bwd_allreduces * op;
		if (x->cp > 1 && L[i].cp_kv_bytes > 0) {
			double step = ppcc_comm_cp_step_seconds(
				&c->cluster, x->t, x->cp, L[i].cp_kv_bytes);
			x->lc.cp_f[i] = (x->cp - 1) * step;
			x->lc.cp_b[i] = (full ? 3 : 2) * x->lc.cp_f[i];
		}
	}
	return 0;
}

/* Per rank: its device group, speed, memory per device and layer bytes
 * it may hold. */
static int rank_tables(ppcc_plan_ctx *x)
{
	const ppcc_config *c = x->cfg;
	if (!ALLOC(x->rank_speed, x->p) || !ALLOC(x->rank_mem, x->p) ||
	    !ALLOC(x->rank_cap, x->p) || !ALLOC(x->rank_group, x->p))
		return PPCC_ENOMEM;
	for (int r = 0; r < x->p; r++) {
		ppcc_cost_place at;
		ppcc_topo_place(&at, c, r);
		const ppcc_device_group *dg = at.device_group;
		x->rank_group[r] = at.group;
		x->rank_speed[r] = ppcc_cost_speed(dg, x->shard);
		x->rank_cap[r] = ppcc_memory_device_cap(&c->cluster, dg);
		x->rank_mem[r] = x->rank_cap[r] * x->shard;
	}
	return 0;
}

/* Per device group: prefix sums of each layer's F, F + B and W in
 * picoseconds. */
static int work_tables(ppcc_plan_ctx *x)
{
	const ppcc_config *c = x->cfg;
	const ppcc_layer *L = c->model.layers;
	int n = x->n;
	if (!ALLOC(x->work_fb, c->cluster.n_groups) ||
	    !ALLOC(x->work_f, c->cluster.n_groups) ||
	    !ALLOC(x->work_w, c->cluster.n_groups))
		return PPCC_ENOMEM;
	for (int g = 0; g < c->cluster.n_groups; g++) {
		const ppcc_device_group *dg = &c->cluster.groups[g];
		double speed = ppcc_cost_speed(dg, x->shard);
		if (!ALLOC(x->work_fb[g], n + 1) || !ALLOC(x->work_f[g], n + 1) ||
		    !ALLOC(x->work_w[g], n + 1))
			return PPCC_ENOMEM;
		for (int i = 0; i < n; i++) {
			double fs, bs;
			ppcc_cost_layer_seconds(&fs, &bs, c, &x->lc, i, dg);
			if (check_range(x, &L[i], "compute time", (fs + bs) * PS_PER_S,
					"picoseconds") < 0)
				return PPCC_EINPUT;
			int64_t f = to_ps(fs);
			int64_t b = to_ps(bs);
			/* the tables hold the least F and B (ppcc_op_least_ms),
			 * which bound every split; stage_costs adds back what a
			 * pair may hide */
			if (x->hid_prefix[0]) {
				int64_t hf = x->hid_prefix[0][i + 1] -
					     x->hid_prefix[0][i];
				int64_t hb = x->hid_prefix[1][i + 1] -
					     x->hid_prefix[1][i];
				f = f > hf ? f - hf : 0;
				b = b > hb ? b - hb : 0;
			}
			/* W is the weight gradient's FLOPs alone: the backward's
			 * collectives and memory-bound kernels go with I */
			int64_t w = to_ps(ppcc_cost_flops_seconds(
				dg, speed, L[i].bwd_weight_flops,
				L[i].fp8_fwd_flops));
			if (w > b)
				w = b;
			x->work_f[g][i + 1] = x->work_f[g][i] + f;
			x->work_fb[g][i + 1] = x->work_fb[g][i] + f + b;
			x->work_w[g][i + 1] = x->work_w[g][i] + w;
		}
	}
	return 0;
}

/* Per link kind: each boundary's p2p, both directions, in picoseconds. */
static int comm_tables(ppcc_plan_ctx *x)
{
	const ppcc_config *c = x->cfg;
	const ppcc_layer *L = c->model.layers;
	int n = x->n;
	for (int k = 0; k < 2; k++) {
		if (!ALLOC(x->comm[k], n) || !ALLOC(x->comm_shift[k], n))
			return PPCC_ENOMEM;
		for (int j = 0; j < n; j++)
			x->comm[k][j] = 2 * to_ps(ppcc_comm_p2p_seconds(
				ppcc_topo_link(&c->cluster, k), x->shard,
				L[j].activation_bytes));
		for (int i = 1; i < n; i++)
			x->comm_shift[k][i] = x->comm[k][i - 1];
	}
	return 0;
}

/* Prefix sums of each layer's memory terms (cost/memory.c), in bytes of
 * a rank's t x cp devices. */
static int memory_tables(ppcc_plan_ctx *x)
{
	const ppcc_layer *L = x->cfg->model.layers;
	int n = x->n;
	if (!ALLOC(x->static_prefix, n + 1) || !ALLOC(x->stash_prefix, n + 1) ||
	    !ALLOC(x->wstash_prefix, n + 1) || !ALLOC(x->hold_prefix, n + 1))
		return PPCC_ENOMEM;
	const ppcc_sched_kind_info *ki = ppcc_sched_kind(x->kind);
	int split = ki && ki->split_backward;
	ppcc_memory_experts ex;
	ppcc_memory_experts_of(&ex, &x->cfg->pipeline, x->p);
	/* the last stage's rank also holds the first stage (one stage, a V
	 * placement): the head's copy of the embedding is the embedding */
	x->shares_first = x->S >= 1 && n > 1 &&
			  x->place[x->S - 1].rank == x->place[0].rank;
	for (int i = 0; i < n; i++) {
		ppcc_memory_layer mt;
		ppcc_layer li = L[i];
		if (i == n - 1 && x->shares_first)
			li.params -= li.shared_params;
		ppcc_memory_layer_terms(&mt, &li, x->t, x->cp, x->zero_bpp,
					&ex, split, ppcc_memory_reserve_factor(
						x->cfg->pipeline.trainer));
		double stash = mt.stash_bytes;
		if (check_range(x, &L[i], "weight and optimizer memory",
				mt.static_bytes, "bytes") < 0 ||
		    check_range(x, &L[i], "activation stash", stash,
				"bytes") < 0 ||
		    check_range(x, &L[i], "p2p time",
				1e12 * ppcc_comm_link_seconds(
					&x->cfg->cluster.inter_node,
					L[i].activation_bytes) +
				1e12 * ppcc_comm_link_seconds(
					&x->cfg->cluster.intra_node,
					L[i].activation_bytes),
				"picoseconds") < 0)
			return PPCC_EINPUT;
		/* Weights are split by t only: the cp ranks of a rank hold
		 * the same ones, so they count cp times in the rank's sum,
		 * which is divided by t * cp. */
		x->static_prefix[i + 1] = x->static_prefix[i] +
			to_bytes(mt.static_bytes);
		x->stash_prefix[i + 1] = x->stash_prefix[i] + to_bytes(stash);
		/* W's part divides like the split part of the stash */
		double wst = mt.stash_weight_bytes;
		if (check_range(x, &L[i], "weight-gradient stash", wst,
				"bytes") < 0)
			return PPCC_EINPUT;
		x->wstash_prefix[i + 1] = x->wstash_prefix[i] + to_bytes(wst);
		x->hold_prefix[i + 1] = x->hold_prefix[i] +
			to_bytes(mt.hold_bytes);
	}
	return 0;
}

/* Per stage: the link to the next stage's rank (-1: none, or the same
 * rank). */
static int link_table(ppcc_plan_ctx *x)
{
	if (!ALLOC(x->stage_link, x->S))
		return PPCC_ENOMEM;
	for (int s = 0; s < x->S; s++) {
		int r0 = x->place[s].rank;
		int r1 = s + 1 < x->S ? x->place[s + 1].rank : r0;
		ppcc_cost_place a, b;
		if (s == x->S - 1 || r0 == r1) {
			x->stage_link[s] = -1;
		} else {
			ppcc_topo_place(&a, x->cfg, r0);
			ppcc_topo_place(&b, x->cfg, r1);
			x->stage_link[s] = ppcc_topo_p2p_kind(&a, &b);
		}
	}
	return 0;
}

/* Every table of x, in this order (a range error names the first layer
 * it finds, compute before memory). */
static int ctx_init(ppcc_plan_ctx *x)
{
	int err;
	if (!ALLOC(x->place, x->S))
		return PPCC_ENOMEM;
	ppcc_sched_place(x->place, x->kind, x->p, x->v);
	if ((err = layer_comm_init(x)) < 0 || (err = rank_tables(x)) < 0 ||
	    (err = work_tables(x)) < 0 || (err = comm_tables(x)) < 0 ||
	    (err = memory_tables(x)) < 0 || (err = link_table(x)) < 0)
		return err;
	return 0;
}

/* The most microbatches each stage holds at once under the schedule: F
 * adds one, B (or W) removes one. */
int ppcc_plan_count_in_flight(ppcc_plan_ctx *x, const ppcc_schedule *s)
{
	int64_t *cur;
	if (!ALLOC(cur, x->S) || !ALLOC(x->stash_count, x->S))
		return PPCC_ENOMEM;
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *act = &rs->actions[i];
			if (act->op == PPCC_OP_F) {
				if (++cur[act->stage] > x->stash_count[act->stage])
					x->stash_count[act->stage] = cur[act->stage];
			} else if (act->op == PPCC_OP_B || act->op == PPCC_OP_W) {
				cur[act->stage]--;
			}
		}
	}
	return 0;
}

static int problem_init(ppcc_plan_ctx *x)
{
	const int64_t **work, **cin, **cout;
	int64_t *zero; /* p2p of a boundary with no link (same rank, or none) */
	if (!ALLOC(work, x->S) || !ALLOC(cin, x->S) || !ALLOC(cout, x->S) ||
	    !ALLOC(x->mem_cap, x->S) || !ALLOC(zero, x->n))
		return PPCC_ENOMEM;
	for (int s = 0; s < x->S; s++) {
		int r = x->place[s].rank;
		int in = s > 0 ? x->stage_link[s - 1] : -1;
		int out = x->stage_link[s];
		work[s] = x->work_fb[x->rank_group[r]];
		cin[s] = in >= 0 ? x->comm_shift[in] : zero;
		cout[s] = out >= 0 ? x->comm[out] : zero;
		x->mem_cap[s] = to_bytes(x->rank_mem[r] / x->v);
	}
	x->pb = (ppcc_part_problem){
		.n_layers = x->n,
		.n_stages = x->S,
		.work = work,
		.comm_in = cin,
		.comm_out = cout,
		.static_prefix = x->static_prefix,
		.stash_prefix = x->hold_prefix,
		.stash_count = x->stash_count,
		.mem_cap = x->mem_cap,
	};
	return 0;
}

int64_t ppcc_plan_stage_time(const ppcc_plan_ctx *x, int s, int i, int j)
{
	const ppcc_part_problem *pb = &x->pb;
	int64_t t = pb->work[s][j + 1] - pb->work[s][i];
	if (s > 0)
		t += pb->comm_in[s][i];
	if (s < x->S - 1)
		t += pb->comm_out[s][j];
	return t;
}

double ppcc_plan_zero3_bytes(const ppcc_plan_ctx *x, int i, int j)
{
	if (!x->z3_max)
		return 0;
	int k = 0;
	while ((2 << k) <= j - i + 1)
		k++;
	int64_t lo = x->z3_max[k][i], hi = x->z3_max[k][j + 1 - (1 << k)];
	return ppcc_memory_zero3_buffer_bytes(
		(double)(lo > hi ? lo : hi), x->t,
		ppcc_memory_reserve_factor(x->cfg->pipeline.trainer));
}

double ppcc_plan_stage_mem(const ppcc_plan_ctx *x, int s, int i, int j)
{
	double st = (double)(x->static_prefix[j + 1] - x->static_prefix[i]);
	double sh = (double)(x->hold_prefix[j + 1] - x->hold_prefix[i]);
	return st + (double)x->stash_count[s] * sh;
}

/* The simulator's costs of stage s holding layers i..j (they depend on
 * nothing else), with parts the ones iteration.c reports too, and, when
 * st is not NULL, its stage table entry.  Without parts it is O(1): the
 * split search (split.c) only simulates. */
static void stage_costs(const ppcc_plan_ctx *x, int s, int i, int j,
			ppcc_stage_cost *c, ppcc_stage_info *st, int parts)
{
	const ppcc_layer *L = x->cfg->model.layers;
	int r = x->place[s].rank, g = x->rank_group[r];
	uint64_t recv = s > 0 ? (uint64_t)to_bytes(L[i - 1].activation_bytes) : 0;
	uint64_t send = s < x->S - 1 ? (uint64_t)to_bytes(L[j].activation_bytes) : 0;
	if (st) {
		*st = x->place[s];
		st->first_layer = i;
		st->last_layer = j;
		st->recv_bytes = recv;
		st->send_bytes = send;
	}
	memset(c, 0, sizeof *c);
	int64_t f = x->work_f[g][j + 1] - x->work_f[g][i];
	int64_t fb = x->work_fb[g][j + 1] - x->work_fb[g][i];
	if (x->hid_prefix[0]) {
		int64_t hf = x->hid_prefix[0][j + 1] - x->hid_prefix[0][i];
		f += hf;
		fb += hf + x->hid_prefix[1][j + 1] - x->hid_prefix[1][i];
	}
	c->fwd_ms = (double)f / 1e9;
	c->bwd_ms = (double)(fb - f) / 1e9;
	c->bwd_weight_ms = (double)(x->work_w[g][j + 1] - x->work_w[g][i]) / 1e9;
	c->bwd_input_ms = c->bwd_ms - c->bwd_weight_ms;
	if (x->stage_link[s] >= 0)
		c->send_f_ms = 1e3 * ppcc_comm_p2p_seconds(
			ppcc_topo_link(&x->cfg->cluster, x->stage_link[s]),
			x->shard, (double)send);
	if (s > 0 && x->stage_link[s - 1] >= 0)
		c->send_b_ms = 1e3 * ppcc_comm_p2p_seconds(
			ppcc_topo_link(&x->cfg->cluster, x->stage_link[s - 1]),
			x->shard, (double)recv);
	c->static_bytes = (double)(x->static_prefix[j + 1] - x->static_prefix[i]) / x->shard;
	c->stash_bytes = (double)(x->stash_prefix[j + 1] - x->stash_prefix[i]) / x->shard;
	c->stash_input_bytes = c->stash_bytes -
		(double)(x->wstash_prefix[j + 1] - x->wstash_prefix[i]) / x->shard;
	c->zero3_param_bytes = ppcc_plan_zero3_bytes(x, i, j);
	if (x->ep_prefix[0]) {
		c->ep_fwd_ms = (double)(x->ep_prefix[0][j + 1] -
					x->ep_prefix[0][i]) / 1e9;
		c->ep_bwd_ms = (double)(x->ep_prefix[1][j + 1] -
					x->ep_prefix[1][i]) / 1e9;
		c->ep_hidden_share = x->ep_hidden_share;
	}
	if (parts)
		ppcc_cost_stage_parts(c, x->cfg, &x->lc, i, j, g,
				      j == x->n - 1 && x->shares_first);
}

/* The same for a whole split (first[s] for each stage). */
void ppcc_plan_split_costs(const ppcc_plan_ctx *x, const int *first,
			   ppcc_stage_cost *costs, ppcc_stage_info *stages,
			   int parts)
{
	for (int s = 0; s < x->S; s++) {
		int i = first[s], j = s + 1 < x->S ? first[s + 1] - 1 : x->n - 1;
		stage_costs(x, s, i, j, &costs[s], stages ? &stages[s] : NULL, parts);
	}
}

int ppcc_plan_split_costs_fn(void *user, const int *first,
			     ppcc_stage_cost *out)
{
	ppcc_plan_split_costs(user, first, out, NULL, 0);
	return 0;
}

int ppcc_plan_stage_costs_fn(void *user, int s, int i, int j,
			     ppcc_stage_cost *out)
{
	stage_costs(user, s, i, j, out, NULL, 0);
	return 0;
}

/* The cost tables and the schedule's shape (its order, which does not
 * depend on the split), with the in-flight counts read off it; from
 * shapes when it holds them (its actions are then shared: whoever sets
 * their byte counts, schedule_set_stages, sets every send's and
 * receive's, and nothing before reads them). */
int ppcc_plan_setup(ppcc_plan_ctx *x, ppcc_schedule *shape, ppcc_arena *a,
		    const ppcc_config *cfg, ppcc_diag *d,
		    ppcc_plan_shapes *shapes, const ppcc_plan_lean *lean)
{
	int err;
	memset(x, 0, sizeof *x);
	x->cfg = cfg;
	x->a = a;
	x->d = d;
	x->n = cfg->model.n_layers;
	x->p = cfg->pipeline.stages;
	x->v = cfg->pipeline.chunks;
	x->S = x->p * x->v;
	x->t = cfg->pipeline.tensor_parallel;
	x->cp = cfg->pipeline.context_parallel > 0 ? cfg->pipeline.context_parallel : 1;
	x->dp = cfg->pipeline.data_parallel > 0 ? cfg->pipeline.data_parallel : 1;
	x->shard = x->t * x->cp;
	x->m = cfg->pipeline.microbatches;
	x->kind = cfg->pipeline.kind;
	x->group = cfg->pipeline.group_size;
	if (x->S > x->n || x->p < 1 || x->v < 1 || x->t < 1 || x->m < 1)
		return PPCC_EINTERNAL; /* ppcc_config_check rejects these */

	x->bound_memo = lean && lean->shapes
		? ppcc_plan_shapes_bounds(lean->shapes) : NULL;
	if ((err = ctx_init(x)) < 0)
		return err;
	/* the search's pruning: bound.c's bound needs the cost tables
	 * alone, so a candidate it prunes builds no shape and solves no
	 * partition */
	if (lean && lean->bound_ms && x->p > 1) {
		double ps;
		if ((err = ppcc_plan_pipe_bound_ps(x, &ps)) < 0)
			return err;
		double it = ppcc_plan_iteration_bound(
			cfg, (ps - (double)x->m - x->S - 2) / 1e9);
		*lean->bound_ms = it;
		if (lean->stage_bounds_ms)
			lean->stage_bounds_ms[0] = it;
		if (it > lean->above_ms)
			return 1;
	}

	if (shapes) {
		if ((err = ppcc_plan_shape_get(shape, shapes, x)) < 0)
			return err;
		return problem_init(x);
	}
	ppcc_stage_info *blank;
	if (!ALLOC(blank, x->S))
		return PPCC_ENOMEM;
	/* When layers 0..n-2 send tensors of one size, every split's
	 * boundaries carry it: the lists are built with it, and
	 * schedule_set_stages has no send or receive to change. */
	const ppcc_layer *L = cfg->model.layers;
	int even = 1;
	for (int i = 1; i + 1 < x->n && even; i++)
		even = to_bytes(L[i].activation_bytes) == to_bytes(L[0].activation_bytes);
	uint64_t tensor = even && x->n > 1 ? (uint64_t)to_bytes(L[0].activation_bytes) : 0;
	for (int s = 0; s < x->S; s++) {
		blank[s] = x->place[s];
		blank[s].recv_bytes = s > 0 ? tensor : 0;
		blank[s].send_bytes = s + 1 < x->S ? tensor : 0;
	}
	if ((err = ppcc_schedule_build_unsealed_on(shape, a, x->kind, x->p, x->v,
						   x->m, x->group, blank,
						   cfg->pipeline.threads,
						   cfg->probe)) < 0)
		return err;
	x->own_lists = 1;
	if ((err = ppcc_plan_count_in_flight(x, shape)) < 0 || (err = problem_init(x)) < 0)
		return err;
	return 0;
}
