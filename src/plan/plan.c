/*
 * plan.c - from a checked configuration to a scheduled, simulated plan.
 *
 * The cost model, in the partitioner's integers (t tensor, cp context, d
 * data parallel; one replica of the pipeline is planned): each rank's
 * speed is its device group's; a layer's time is its FLOPs over that
 * speed plus its blocking tensor-parallel, ring-attention and ZeRO-3
 * collectives and its memory-bound kernels, rounded to whole picoseconds
 * so that stage times are exact integer sums; each stage boundary costs
 * latency + bytes / (t * cp * bandwidth) each way (Megatron-LM's
 * blocking p2p); memory per device is the static bytes plus the stash
 * times the most microbatches the schedule keeps in flight on the stage.
 * The split is the least simulated step (split.c), searched from the
 * proxy's split (partition.c), the uniform one, the least path bound's
 * for GPipe and 1F1B, and an explicit partition when one is given.
 * Limits: an overlapped p2p transfer (--overlap-p2p-comm) is not
 * modelled.  The schedule's order does not depend on the split, so it is
 * generated once; a plan holds per action the action (24 bytes) and per
 * stage and microbatch the simulated send times (16 bytes).
 *
 * Derivation: doc/design/plan.md (every term of the cost model).
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ppcc.h"

#define PS_PER_S 1e12

typedef struct plan_ctx {
	const ppcc_config *cfg;
	ppcc_arena *a;
	ppcc_diag *d;
	int n, p, v, S, t, m, kind, group;
	int cp, dp, shard;       /* shard = t * cp devices per rank */
	double *bpp;             /* per layer: static bytes per parameter */
	ppcc_cost_layer_comm lc; /* per layer: communication inside F, B */
	/* prefix of the layers' 16-bit parameters (2 bytes each), which a
	 * ZeRO-3 stage gathers for each compute; NULL otherwise */
	int64_t *z3_prefix;
	double *rank_speed;      /* FLOP/s per rank */
	double *rank_mem;        /* layer bytes a rank may hold: memory * t */
	double *rank_cap;        /* bytes per device of each rank */
	int *rank_group;
	/* per device group: prefix sums of compute picoseconds */
	int64_t **work_fb, **work_f;
	int64_t **work_w;   /* per group, prefix of W times (ps) */
	int64_t *comm[2];        /* [intra, inter][j]: both directions, after j */
	int64_t *comm_shift[2];  /* [..][i] = comm[..][i - 1] */
	int64_t *static_prefix, *stash_prefix;
	/* per device, prefix of what W holds from I on (as stash_prefix);
	 * and what a microbatch in flight may hold at most, the larger of
	 * the two under a split backward (the partitioner's bound) */
	int64_t *wstash_prefix, *hold_prefix;
	int64_t *stash_count;    /* per stage */
	int64_t *mem_cap;        /* per stage */
	int *stage_link;         /* link s -> s + 1: 0 intra, 1 inter, -1 none */
	ppcc_stage_info *place;  /* per stage: rank and chunk, the kind's placement */
	ppcc_part_problem pb;
	int lean;                /* ppcc_plan_build_lean */
	/* the shape's lists are this plan's own (not a cache's, which other
	 * plans change), so their sends and receives carry the bytes of the
	 * shape's stage table (schedule_set_stages) */
	int own_lists;
	/* bound.c's bound of every split's step (pipe_bound_ps), once
	 * computed; bound_memo: the search's, NULL outside it */
	double pipe_ps;
	int pipe_have;
	ppcc_bound_memo *bound_memo;
} plan_ctx;

/* ppcc_plan_build_lean's threshold and the bound it reports. */
typedef struct lean_opts {
	double above_ms;
	double *bound_ms;
	double *stage_bounds_ms; /* NULL, or the two bounds as proven */
	ppcc_plan_shapes *shapes;
	int *memory_unfit; /* NULL: no memory bound (membound.c) */
} lean_opts;

/* Sums of these over all layers must stay within int64: each value is
 * kept below 2^61 / (layers + 1) by the range check in ctx_init, so no sum
 * can overflow (the partitioner multiplies stash sums by counts in 128
 * bits). */
static int64_t to_ps(double seconds)
{
	double ps = seconds * PS_PER_S;
	return ps >= 9e18 ? INT64_MAX / 4 : (int64_t)llround(ps);
}

static int64_t to_bytes(double b)
{
	return b >= 9e18 ? INT64_MAX / 4 : (int64_t)llround(b);
}

/* A layer whose time or size is beyond what the integer model can sum
 * gets an error at its line rather than a silently clamped plan. */
static int check_range(plan_ctx *x, const ppcc_layer *l, const char *what,
		       double value, const char *unit)
{
	double limit = (double)(INT64_MAX / 4) / (double)(x->n + 1);
	if (value < limit)
		return 0;
	ppcc_error(x->d, &l->loc, "layer '%s': %s of %.3g %s is out of the range "
		   "ppcc can plan", l->name, what, value, unit);
	return PPCC_EINPUT;
}

#define ALLOC(ptr, count) \
	(((ptr) = ppcc_arena_alloc(x->a, (size_t)(count), sizeof *(ptr))) != NULL)

/* Per layer: bytes per parameter and the communication inside compute. */
static int layer_comm_init(plan_ctx *x)
{
	const ppcc_config *c = x->cfg;
	const ppcc_layer *L = c->model.layers;
	const ppcc_transformer *tf = c->model.transformer;
	int sp = tf ? tf->sequence_parallel : 1;
	int full = tf && tf->recompute == PPCC_RECOMPUTE_FULL;
	int n = x->n;
	if (!ALLOC(x->bpp, n) || !ALLOC(x->lc.tp_f, n) ||
	    !ALLOC(x->lc.tp_b, n) || !ALLOC(x->lc.cp_f, n) ||
	    !ALLOC(x->lc.cp_b, n))
		return PPCC_ENOMEM;
	/* ZeRO-3's gathers are the schedule's UNSHARD_PARAM actions
	 * (sched/reduce.c), timed on the rank's channel by the simulator,
	 * not inside F and B */
	if (c->pipeline.zero == 3 && x->dp * x->cp > 1) {
		if (!ALLOC(x->z3_prefix, n + 1))
			return PPCC_ENOMEM;
		for (int i = 0; i < n; i++)
			x->z3_prefix[i + 1] = x->z3_prefix[i] +
				(L[i].params > 0 ? to_bytes(2.0 * L[i].params) : 0);
	}
	double zero_bpp = ppcc_zero_bytes_per_param(NULL, c->pipeline.zero,
						    c->pipeline.grad_bytes,
						    x->dp * x->cp);
	for (int i = 0; i < n; i++) {
		x->bpp[i] = L[i].bytes_per_param > 0 ? L[i].bytes_per_param
						     : zero_bpp;
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


static int ctx_init(plan_ctx *x)
{
	const ppcc_config *c = x->cfg;
	const ppcc_layer *L = c->model.layers;
	int n = x->n;

	if (!ALLOC(x->place, x->S))
		return PPCC_ENOMEM;
	ppcc_sched_place(x->place, x->kind, x->p, x->v);
	int err;
	if ((err = layer_comm_init(x)) < 0)
		return err;
	if (!ALLOC(x->rank_speed, x->p) || !ALLOC(x->rank_mem, x->p) || !ALLOC(x->rank_cap, x->p) ||
	    !ALLOC(x->rank_group, x->p) ||
	    !ALLOC(x->work_fb, c->cluster.n_groups) ||
	    !ALLOC(x->work_f, c->cluster.n_groups) ||
	    !ALLOC(x->work_w, c->cluster.n_groups))
		return PPCC_ENOMEM;
	for (int r = 0; r < x->p; r++) {
		ppcc_cost_place at;
		ppcc_topo_place(&at, c, r);
		const ppcc_device_group *dg = at.device_group;
		x->rank_group[r] = at.group;
		x->rank_speed[r] = ppcc_cost_speed(dg, x->shard);
		x->rank_mem[r] = (dg->memory_bytes - c->cluster.reserved_bytes) *
				 x->shard;
		x->rank_cap[r] = dg->memory_bytes - c->cluster.reserved_bytes;
	}
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
			/* W is the weight gradient's FLOPs alone: the backward's
			 * collectives and memory-bound kernels go with I */
			int64_t w = to_ps(L[i].bwd_weight_flops / speed);
			if (w > b)
				w = b;
			x->work_f[g][i + 1] = x->work_f[g][i] + f;
			x->work_fb[g][i + 1] = x->work_fb[g][i] + f + b;
			x->work_w[g][i + 1] = x->work_w[g][i] + w;
		}
	}
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
	if (!ALLOC(x->static_prefix, n + 1) || !ALLOC(x->stash_prefix, n + 1) ||
	    !ALLOC(x->wstash_prefix, n + 1) || !ALLOC(x->hold_prefix, n + 1))
		return PPCC_ENOMEM;
	const ppcc_sched_kind_info *ki = ppcc_sched_kind(x->kind);
	int split = ki && ki->split_backward;
	for (int i = 0; i < n; i++) {
		double stash = L[i].stash_bytes +
			       (x->t - 1) * L[i].stash_replicated_bytes;
		if (check_range(x, &L[i], "weight and optimizer memory",
				L[i].params * x->bpp[i] * x->cp, "bytes") < 0 ||
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
			to_bytes(L[i].params * x->bpp[i] * x->cp);
		x->stash_prefix[i + 1] = x->stash_prefix[i] + to_bytes(stash);
		/* W's part divides like the split part of the stash */
		double wst = L[i].stash_weight_bytes;
		if (check_range(x, &L[i], "weight-gradient stash", wst,
				"bytes") < 0)
			return PPCC_EINPUT;
		x->wstash_prefix[i + 1] = x->wstash_prefix[i] + to_bytes(wst);
		x->hold_prefix[i + 1] = x->hold_prefix[i] +
			to_bytes(split && wst > stash ? wst : stash);
	}
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

/* The most microbatches each stage holds at once under the schedule: F
 * adds one, B (or W) removes one. */
static int count_in_flight(plan_ctx *x, const ppcc_schedule *s)
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

static int problem_init(plan_ctx *x)
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

static int64_t stage_time(const plan_ctx *x, int s, int i, int j)
{
	const ppcc_part_problem *pb = &x->pb;
	int64_t t = pb->work[s][j + 1] - pb->work[s][i];
	if (s > 0)
		t += pb->comm_in[s][i];
	if (s < x->S - 1)
		t += pb->comm_out[s][j];
	return t;
}

static double stage_mem(const plan_ctx *x, int s, int i, int j)
{
	double st = (double)(x->static_prefix[j + 1] - x->static_prefix[i]);
	double sh = (double)(x->hold_prefix[j + 1] - x->hold_prefix[i]);
	return st + (double)x->stash_count[s] * sh;
}

/* The simulator's costs of stage s holding layers i..j (they depend on
 * nothing else), with parts the ones iteration.c reports too, and, when
 * st is not NULL, its stage table entry.  Without parts it is O(1): the
 * split search (split.c) only simulates. */
static void stage_costs(const plan_ctx *x, int s, int i, int j,
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
	if (x->z3_prefix)
		c->zero3_param_bytes =
			(double)(x->z3_prefix[j + 1] - x->z3_prefix[i]) / x->t;
	if (parts)
		ppcc_cost_stage_parts(c, x->cfg, &x->lc, i, j, g);
}

/* The same for a whole split (first[s] for each stage). */
static void split_costs(const plan_ctx *x, const int *first,
			ppcc_stage_cost *costs, ppcc_stage_info *stages, int parts)
{
	for (int s = 0; s < x->S; s++) {
		int i = first[s], j = s + 1 < x->S ? first[s + 1] - 1 : x->n - 1;
		stage_costs(x, s, i, j, &costs[s], stages ? &stages[s] : NULL, parts);
	}
}

static int split_costs_fn(void *user, const int *first, ppcc_stage_cost *out)
{
	split_costs(user, first, out, NULL, 0);
	return 0;
}

static int stage_costs_fn(void *user, int s, int i, int j, ppcc_stage_cost *out)
{
	stage_costs(user, s, i, j, out, NULL, 0);
	return 0;
}

/* Fills a variant's stages, costs and bottleneck from a split (first[s]
 * for each stage). */
static int variant_fill(plan_ctx *x, ppcc_plan_variant *out, const int *first)
{
	if (!ALLOC(out->stages, x->S) || !ALLOC(out->costs, x->S))
		return PPCC_ENOMEM;
	split_costs(x, first, out->costs, out->stages, 1);
	out->bottleneck_ps = 0;
	for (int s = 0; s < x->S; s++) {
		int i = first[s], j = s + 1 < x->S ? first[s + 1] - 1 : x->n - 1;
		int64_t tm = stage_time(x, s, i, j);
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
 * (ppcc_schedule_validate_seal, variant_best).  The order of the actions does not
 * depend on the split, so this is the schedule ppcc_schedule_build would
 * make for these stages (check_plan compares the two), and the plan holds
 * one schedule, not two.  The action lists are this arena's, built by
 * plan_build, hence writable. */
static int schedule_set_stages(plan_ctx *x, ppcc_schedule *s,
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
static int place_collectives(ppcc_schedule *s, ppcc_arena *a,
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
		cfg->pipeline.zero, G > 0 ? 2.0 / G : 0);
	return err == PPCC_EINPUT ? PPCC_EINTERNAL : err;
}

static int place_reductions(plan_ctx *x, ppcc_plan_variant *v)
{
	return place_collectives(&v->schedule, x->a, x->cfg, v->costs);
}

/* The simulation of variant_best, as the validator's run of all ranks. */
typedef struct variant_sim {
	ppcc_arena *a;
	ppcc_plan_variant *v;
	const ppcc_estimate *known; /* the split search's simulation of it */
} variant_sim;

/* The dry run when the estimate is already in place (variant_best's
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
static int variant_best(plan_ctx *x, ppcc_plan_variant *out, const int *first,
			ppcc_schedule *shape, const ppcc_estimate *known)
{
	int err;
	if ((err = variant_fill(x, out, first)) < 0 ||
	    (err = schedule_set_stages(x, shape, out->stages)) < 0)
		return err;
	out->schedule = *shape;
	if (x->dp * x->cp > 1 && (err = place_reductions(x, out)) < 0)
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

/* The uniform split, for comparison: only what the output prints.  Its
 * schedule is the same order of actions under other costs, so it is
 * simulated on best's lists (the simulator reads op, stage and microbatch,
 * not bytes), already validated; it keeps no lists or times of its own.
 * When the split search already simulated it (a seed, on the same lists
 * and the same costs, split_costs_fn), its estimate is taken from there
 * (known non-NULL) rather than simulated again. */
static int variant_uniform(plan_ctx *x, ppcc_plan_variant *out, const int *first,
			   const ppcc_schedule *best, const ppcc_estimate *known)
{
	int err;
	if ((err = variant_fill(x, out, first)) < 0)
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
static int variant_uniform_placed(plan_ctx *x, ppcc_plan_variant *out,
				  const int *first, const ppcc_schedule *shape)
{
	int err;
	if ((err = variant_fill(x, out, first)) < 0)
		return err;
	out->schedule = *shape;
	out->schedule.stages = out->stages;
	if ((err = place_reductions(x, out)) < 0 ||
	    (err = ppcc_simulate_keep(&out->estimate, x->a, &out->schedule,
				      out->costs, 0)) < 0)
		return err;
	out->schedule.ranks = NULL;
	out->schedule.fingerprint = 0;
	return 0;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return a < b ? -1 : a > b;
}

static double gib(double bytes)
{
	return bytes / (1024.0 * 1024.0 * 1024.0);
}

/* No split fits: say which stage is over and by how much, then what would
 * fit: the fewest stages, or the least memory per device. */
static int report_infeasible(plan_ctx *x)
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
	double need = stage_mem(x, stage, i, j) / x->shard;
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
		   share, gib((double)over / x->shard));
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
	least += (double)over * x->v / x->shard + x->cfg->cluster.reserved_bytes;
	ppcc_note(x->d, &x->cfg->cluster.loc,
		  "it would fit with %.2f GiB per device", gib(least));
	return PPCC_EINFEASIBLE;
}

static int fewest_stages(const ppcc_config *cfg, int *out_microbatches);

/* Megatron-LM's default: equal layer counts, the remainder on the last
 * stages; with the transformer shorthand the blocks are divided and the
 * embedding and head join the first and last stages. */
static void uniform_split(const plan_ctx *x, int *uni)
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

/* Every rank's simulated peak within its device's memory. */
static int variant_fits(const plan_ctx *x, const ppcc_plan_variant *v)
{
	for (int r = 0; r < x->p; r++)
		if (v->estimate.peak_memory_bytes[r] > x->rank_cap[r])
			return 0;
	return 1;
}

/* The bound on every split's simulated step that the output compares
 * with (split.c): m x the least bottleneck, and with v chunks m x the
 * larger of the least bottleneck without memory caps and the least total
 * of the stage times over p.  One picosecond a stage is taken off for
 * the rounding of p2p times to picoseconds. */
typedef struct step_bounds_t {
	double step_ms;
	int64_t bottleneck_ps;
} step_bounds_t;

static int step_lower_bound(plan_ctx *x, int64_t bottleneck, step_bounds_t *out)
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
static int pipe_bound_ps(plan_ctx *x, double *out_ps)
{
	if (x->pipe_have) {
		*out_ps = x->pipe_ps;
		return 0;
	}
	const ppcc_sched_kind_info *ki = ppcc_sched_kind(x->kind);
	int n = x->n, p = x->p, G = x->cfg->cluster.n_groups;
	int tail = ki && !ki->split_backward && x->kind != PPCC_SCHED_AUTO;
	int split = ki && ki->split_backward;
	double *lf, *lfb, *work, *least, *extra, *blead, *bwork, *bleast, *bx;
	int *first, *count, *last;
	if (!ALLOC(lf, n + 1) || !ALLOC(lfb, n + 1) || !ALLOC(work, n + 1) ||
	    !ALLOC(least, n + 1) || !ALLOC(extra, p) || !ALLOC(first, p) ||
	    !ALLOC(count, p) || !ALLOC(last, p) || !ALLOC(blead, n + 1) ||
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
	ppcc_bound_problem bp = {
		.n_layers = n, .n_ranks = p, .microbatches = x->m,
		.lead_f_prefix = lf, .lead_fb_prefix = tail ? lfb : NULL,
		.work_prefix = work, .least_prefix = least, .extra = extra,
		.first_stage = first, .stage_count = count,
		.contiguous = contiguous,
		.back_lead_prefix = blead, .back_work_prefix = bwork,
		.back_least_prefix = bleast, .back_first_stage = last};
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
 * (step_lower_bound), bound.c's (pipe_bound_ps: every rank waits for the
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
static int iteration_lower_bound(plan_ctx *x, const ppcc_schedule *shape,
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
		int err = pipe_bound_ps(x, &ps);
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
 *     under ZeRO 2 and 3 each of the m backwards reduces them;
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
	for (int i = 0; i < n; i++)
		params += cfg->model.layers[i].params / t;
	double sync = step_ms, post = 0;
	if (nn > 1) {
		const ppcc_link *l = ppcc_topo_span_link(cl, (int64_t)t * cp * dp);
		double f = (zero == 0 ? 2.0 : 1.0) * (nn - 1) / nn;
		double bytes = G * params - S;
		if (bytes > 0) {
			double red = 1e3 * l->latency * bytes /
				     (ppcc_dp_bucket_bytes(pl) + 1) +
				     1e3 * f / l->bandwidth * bytes;
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
		post += 1e3 * (zero >= 1 && nn > 1 ? params / nn : params) *
			(26.0 + G) / bw;
	double b = (sync + post / p) * (1 - 1e-9);
	return b > 0 ? b : 0;
}

static ppcc_loc where_partition(const ppcc_config *cfg)
{
	if (cfg->pipeline.partition_loc.file)
		return cfg->pipeline.partition_loc;
	return cfg->pipeline.loc.file ? cfg->pipeline.loc
				      : (ppcc_loc){cfg->path, 0, 0};
}

/* With one chunk, the least path bound over the splits that fit
 * (ppcc_partition_path_bound) when its dynamic program is cheap enough:
 * at most PATH_BOUND_WORK inner steps over its bisection; *out_ok says
 * whether it ran, out_split gets the split it ends on.  The simulator's p2p times are not
 * rounded to picoseconds as the tables are: each stage's input term and
 * each microbatch of a stage's time are allowed a picosecond either way. */
#define PATH_BOUND_WORK ((int64_t)1 << 24)

static int path_lower_bound(plan_ctx *x, const int *split, int64_t bottleneck,
			    double *out_ms, int *out_split, int *out_ok)
{
	const ppcc_part_problem *pb = &x->pb;
	int64_t longest = 0, value = 0, before = 0;
	for (int s = 0; s < x->S; s++) {
		int i = split[s], j = s + 1 < x->S ? split[s + 1] - 1 : x->n - 1;
		if (j - i + 1 > longest)
			longest = j - i + 1;
		int64_t t = stage_time(x, s, i, j);
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

/* No split fits: the diagnostics of report_infeasible, then the fewest
 * stages that would fit. */
static int report_no_fit(plan_ctx *x, const ppcc_config *cfg, ppcc_diag *d)
{
	int err;
	if ((err = report_infeasible(x)) != PPCC_EINFEASIBLE || x->lean)
		return err;
	int m = 0, p = fewest_stages(cfg, &m);
	if (p < 0 && p != PPCC_EINFEASIBLE)
		return p;
	if (p > 0 && m != cfg->pipeline.microbatches)
		ppcc_note(d, &cfg->pipeline.stages_loc,
			  "it would fit with %d stages (and %d microbatches)", p, m);
	else if (p > 0)
		ppcc_note(d, &cfg->pipeline.stages_loc,
			  "it would fit with %d stages", p);
	return PPCC_EINFEASIBLE;
}

/* Shapes kept across plans (ppcc_plan_shapes_new): a shape is the
 * order of the actions and the in-flight counts read off it, which
 * depend on (kind, p, v, m, group) alone, not on the layers, t, cp, d or
 * the costs, so a search that plans thousands of candidates builds each
 * shape once.  Entries live in the cache's own arena, chained in
 * SHAPE_BUCKETS lists; when their actions pass the byte budget the whole
 * cache is emptied (a later plan builds its shape again: the same
 * bytes). */
#define SHAPE_BUCKETS 1024

typedef struct shape_entry {
	struct shape_entry *next;
	int kind, p, v, m, group;
	ppcc_schedule shape;
	int64_t *stash_count;
} shape_entry;

struct ppcc_plan_shapes {
	ppcc_arena *a;
	size_t bytes, max_bytes;
	shape_entry *bucket[SHAPE_BUCKETS];
	ppcc_bound_memo *bounds; /* pipe_bound_ps's, across the plans */
};

/* The bytes of bound problems a ppcc_plan_shapes keeps. */
#define PLAN_BOUND_BYTES ((size_t)32 << 20)

ppcc_plan_shapes *ppcc_plan_shapes_new(size_t max_bytes)
{
	ppcc_plan_shapes *c = ppcc_calloc(1, sizeof *c);
	if (!c)
		return NULL;
	if (!(c->a = ppcc_arena_new()) ||
	    !(c->bounds = ppcc_bound_memo_new(PLAN_BOUND_BYTES))) {
		ppcc_plan_shapes_free(c);
		return NULL;
	}
	c->max_bytes = max_bytes;
	return c;
}

void ppcc_plan_shapes_free(ppcc_plan_shapes *c)
{
	if (!c)
		return;
	ppcc_arena_free(c->a);
	ppcc_bound_memo_free(c->bounds);
	ppcc_free(c);
}

static unsigned shape_hash(int kind, int p, int v, int m, int group)
{
	uint64_t h = (uint64_t)kind * 0x9e3779b97f4a7c15u;
	h = (h ^ (uint64_t)p) * 0xff51afd7ed558ccdu;
	h = (h ^ (uint64_t)v) * 0xc4ceb9fe1a85ec53u;
	h = (h ^ (uint64_t)m) * 0xff51afd7ed558ccdu;
	h = (h ^ (uint64_t)group) * 0xc4ceb9fe1a85ec53u;
	return (unsigned)(h >> 40) % SHAPE_BUCKETS;
}

static shape_entry *shape_find(ppcc_plan_shapes *c, const plan_ctx *x)
{
	unsigned h = shape_hash(x->kind, x->p, x->v, x->m, x->group);
	for (shape_entry *e = c->bucket[h]; e; e = e->next)
		if (e->kind == x->kind && e->p == x->p && e->v == x->v &&
		    e->m == x->m && e->group == x->group)
			return e;
	return NULL;
}

/* The shape of x built in the cache's arena (the cache emptied first
 * when full), or NULL on a failed allocation. */
static int shape_add(ppcc_plan_shapes *c, plan_ctx *x, shape_entry **out)
{
	ppcc_stage_info *blank;
	shape_entry *e;
	int err;
	if (c->bytes > c->max_bytes) {
		ppcc_arena_reset(c->a);
		memset(c->bucket, 0, sizeof c->bucket);
		c->bytes = 0;
	}
	if (!(e = ppcc_arena_alloc(c->a, 1, sizeof *e)) ||
	    !(blank = ppcc_arena_alloc(c->a, (size_t)x->S, sizeof *blank)))
		return PPCC_ENOMEM;
	for (int s = 0; s < x->S; s++)
		blank[s] = x->place[s];
	if ((err = ppcc_schedule_build_unsealed(&e->shape, c->a, x->kind, x->p,
						x->v, x->m, x->group, blank)) < 0)
		return err;
	ppcc_arena *mine = x->a;
	x->a = c->a;
	err = count_in_flight(x, &e->shape);
	x->a = mine;
	if (err < 0)
		return err;
	e->stash_count = x->stash_count;
	e->kind = x->kind;
	e->p = x->p;
	e->v = x->v;
	e->m = x->m;
	e->group = x->group;
	for (int r = 0; r < x->p; r++)
		c->bytes += (size_t)e->shape.ranks[r].n_actions * sizeof(ppcc_action);
	unsigned h = shape_hash(x->kind, x->p, x->v, x->m, x->group);
	e->next = c->bucket[h];
	c->bucket[h] = e;
	*out = e;
	return 0;
}

/* The cost tables and the schedule's shape (its order, which does not
 * depend on the split), with the in-flight counts read off it; from
 * shapes when it holds them (its actions are then shared: whoever sets
 * their byte counts, schedule_set_stages, sets every send's and
 * receive's, and nothing before reads them). */
static int plan_setup(plan_ctx *x, ppcc_schedule *shape, ppcc_arena *a,
		      const ppcc_config *cfg, ppcc_diag *d,
		      ppcc_plan_shapes *shapes, const lean_opts *lean)
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

	x->bound_memo = lean && lean->shapes ? lean->shapes->bounds : NULL;
	if ((err = ctx_init(x)) < 0)
		return err;
	/* the search's pruning: bound.c's bound needs the cost tables
	 * alone, so a candidate it prunes builds no shape and solves no
	 * partition */
	if (lean && lean->bound_ms && x->p > 1) {
		double ps;
		if ((err = pipe_bound_ps(x, &ps)) < 0)
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
		shape_entry *e = shape_find(shapes, x);
		if (!e && (err = shape_add(shapes, x, &e)) < 0)
			return err;
		*shape = e->shape;
		x->stash_count = e->stash_count;
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
	if ((err = count_in_flight(x, shape)) < 0 || (err = problem_init(x)) < 0)
		return err;
	return 0;
}

int ppcc_plan_split(ppcc_plan_variant *out, int *out_fits, ppcc_arena *a,
		    const ppcc_config *cfg, const int *first, ppcc_diag *d)
{
	plan_ctx ctx, *x = &ctx;
	ppcc_schedule shape;
	int err;
	memset(out, 0, sizeof *out);
	if ((err = plan_setup(x, &shape, a, cfg, d, NULL, NULL)) < 0)
		return err;
	if (first[0] != 0)
		return PPCC_EINPUT;
	for (int s = 1; s < x->S; s++)
		if (first[s] <= first[s - 1] || first[s] >= x->n)
			return PPCC_EINPUT;
	if ((err = variant_best(x, out, first, &shape, NULL)) < 0)
		return err;
	*out_fits = variant_fits(x, out);
	return 0;
}

/* With v chunks, when the search found no split that fits: its split of
 * least overflow, simulated, rank by rank. */
static int report_no_fit_simulated(plan_ctx *x, const ppcc_config *cfg,
				   ppcc_diag *d, const int *split,
				   const ppcc_step_result *res,
				   const ppcc_schedule *shape)
{
	ppcc_plan_variant v;
	int err;
	if ((err = variant_uniform(x, &v, split, shape, NULL)) < 0)
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
		  "it would fit with %.2f GiB per device", gib(most));
	if (x->lean)
		return PPCC_EINFEASIBLE;
	int m = 0, p = fewest_stages(cfg, &m);
	if (p < 0 && p != PPCC_EINFEASIBLE)
		return p;
	if (p > 0 && m != cfg->pipeline.microbatches)
		ppcc_note(d, &cfg->pipeline.stages_loc,
			  "it would fit with %d stages (and %d microbatches)", p, m);
	else if (p > 0)
		ppcc_note(d, &cfg->pipeline.stages_loc,
			  "it would fit with %d stages", p);
	return PPCC_EINFEASIBLE;
}

/* With v chunks and no split within the stages' shares of their ranks:
 * each stage alone, at its most activations in flight, is part of its
 * rank's simulated peak, so when no split fits even with each stage
 * given its whole rank, none fits (PPCC_EINFEASIBLE, with a note of the
 * least memory per device that relaxed problem needs).  0 otherwise. */
static int lean_no_fit(plan_ctx *x)
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
		      x->cfg->cluster.reserved_bytes));
	return PPCC_EINFEASIBLE;
}

/* With v chunks: membound.c's proof that no split fits, from the layers'
 * bytes per device (as stage_costs gives them a stage) and the shape's
 * count vectors.  PPCC_EINFEASIBLE, with a note of the least memory per
 * device it proves a split needs, when it holds; 0 otherwise. */
static int memory_state(plan_ctx *x, const ppcc_schedule *shape,
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

static int lean_memory_bound(plan_ctx *x, const ppcc_schedule *shape)
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
		      x->cfg->cluster.reserved_bytes));
	return PPCC_EINFEASIBLE;
}

int ppcc_plan_memory_bound(double *out, double *out_caps, ppcc_arena *a,
			   const ppcc_config *cfg)
{
	plan_ctx ctx, *x = &ctx;
	ppcc_schedule shape;
	ppcc_diag quiet = {0};
	ppcc_mem_state *m;
	int err;
	*out = -INFINITY;
	if ((err = plan_setup(x, &shape, a, cfg, &quiet, NULL, NULL)) < 0 ||
	    (err = memory_state(x, &shape, &m)) < 0)
		return err;
	if (out_caps)
		memcpy(out_caps, x->rank_cap, (size_t)x->p * sizeof *out_caps);
	*out = ppcc_mem_bound(m);
	return isnan(*out) ? PPCC_ENOMEM : 0;
}

static int plan_build(ppcc_plan *out, ppcc_arena *a, const ppcc_config *cfg,
		      ppcc_diag *d, int search, int *out_first,
		      ppcc_step_result *out_res, const lean_opts *lean)
{
	plan_ctx ctx, *x = &ctx;
	int err;
	ppcc_schedule shape;
	int *first, *uni;

	memset(out, 0, sizeof *out);
	if ((err = plan_setup(x, &shape, a, cfg, d, lean ? lean->shapes : NULL,
			      lean)) != 0)
		return err;
	x->lean = lean != NULL;
	if (lean && lean->memory_unfit && x->v > 1) {
		if ((err = lean_memory_bound(x, &shape)) == PPCC_EINFEASIBLE)
			*lean->memory_unfit = 1;
		if (err)
			return err;
	}

	if (!ALLOC(first, x->S) || !ALLOC(uni, x->S))
		return PPCC_ENOMEM;
	uniform_split(x, uni);

	/* The proxy: the exact least bottleneck within each stage's share of
	 * its rank's memory (the whole rank with one chunk, where that is
	 * the simulated peak exactly; 1/v of it with v chunks, sufficient). */
	int64_t bottleneck;
	int proxy = ppcc_partition_solve(first, &bottleneck, &x->pb);
	if (proxy < 0 && proxy != PPCC_EINFEASIBLE)
		return proxy;
	if (proxy == PPCC_EINFEASIBLE && x->v == 1) {
		if (!search)
			return PPCC_EINFEASIBLE;
		return report_no_fit(x, cfg, d);
	}
	if (proxy == PPCC_EINFEASIBLE && lean &&
	    (err = lean_no_fit(x)) != 0)
		return err;
	if (!search && proxy == 0)
		return 0;

	step_bounds_t lb;
	if ((err = step_lower_bound(x, proxy == 0 ? bottleneck : -1, &lb)) < 0)
		return err;
	if (lean && lean->bound_ms) {
		double it;
		if ((err = iteration_lower_bound(x, &shape, lb.step_ms, &it)) < 0)
			return err;
		*lean->bound_ms = it;
		if (lean->stage_bounds_ms)
			lean->stage_bounds_ms[1] = it;
		if (it > lean->above_ms)
			return 1;
	}
	if (proxy == PPCC_EINFEASIBLE) {
		int stage;
		int64_t over;
		if ((err = ppcc_partition_min_overflow(first, &stage, &over, &x->pb)) < 0)
			return err;
	}
	/* An explicit partition is planned as given, and is also a seed of
	 * ppcc's own search, which therefore never does worse. */
	int *given = NULL;
	const ppcc_pipeline *pl = &cfg->pipeline;
	if (pl->partition) {
		if (pl->n_partition != x->S || !ALLOC(given, x->S))
			return pl->n_partition != x->S ? PPCC_EINTERNAL : PPCC_ENOMEM;
		for (int s = 0, at = 0; s < x->S; at += pl->partition[s++])
			given[s] = at;
	}
	/* One chunk: the least path bound and the split that reaches it. */
	double path_ms = 0;
	int path_ok = 0, *path_split;
	if (!ALLOC(path_split, x->S))
		return PPCC_ENOMEM;
	if (x->v == 1 && x->p > 1 && proxy == 0 &&
	    (x->kind == PPCC_SCHED_1F1B || x->kind == PPCC_SCHED_GPIPE) &&
	    (err = path_lower_bound(x, first, bottleneck, &path_ms, path_split,
				    &path_ok)) < 0)
		return err;
	const int *seeds[4] = {first, uni, path_ok ? path_split : NULL, given};
	ppcc_estimate uni_est, best_est;
	int uni_have = 0, best_have = 0;
	ppcc_step_problem sp = {
		.n_layers = x->n,
		.shape = &shape,
		.costs = split_costs_fn,
		.stage_cost = stage_costs_fn,
		.user = x,
		.rank_cap = x->rank_cap,
		.seeds = seeds,
		.n_seeds = 4,
		.max_sims = cfg->pipeline.max_simulations,
		.threads = cfg->pipeline.threads,
		.probe = cfg->probe,
		.lower_bound_ms = lb.step_ms,
		.keep = uni,
		.kept = &uni_est,
		.kept_arena = a,
		.kept_have = &uni_have,
		/* the winner's simulation, for the plan that is written */
		.best = search && !out_first && !given ? &best_est : NULL,
		.best_have = &best_have,
		.best_no_times = cfg->pipeline.no_times,
	};
	ppcc_step_ctx *sc = NULL;
	ppcc_step_result res;
	int *chosen;
	if (!ALLOC(chosen, x->S))
		return PPCC_ENOMEM;
	err = ppcc_partition_step(chosen, &res, &sc, &sp);
	ppcc_step_ctx_free(sc);
	if (err == PPCC_EINFEASIBLE) {
		if (!search)
			return PPCC_EINFEASIBLE;
		return report_no_fit_simulated(x, cfg, d, chosen, &res, &shape);
	}
	if (err < 0)
		return err;
	if (!search)
		return 0;
	if (out_first) {
		memcpy(out_first, chosen, (size_t)x->S * sizeof(int));
		*out_res = res;
		if (path_ok && res.path_bound && path_ms > out_res->lower_bound_ms)
			out_res->lower_bound_ms = path_ms;
		return 0;
	}

	out->config = cfg;
	out->model_name = cfg->model.name;
	out->n_layers = x->n;
	out->layers = cfg->model.layers;
	/* The plan holds one schedule, the one it writes: the given split's
	 * when there is one, ppcc's otherwise; the other variants are
	 * simulated on its lists. */
	ppcc_plan_variant *own = given ? &out->own : &out->best;
	if (given) {
		if ((err = variant_best(x, &out->best, given, &shape, NULL)) < 0 ||
		    (err = variant_uniform(x, own, chosen, &out->best.schedule, NULL)) < 0)
			return err;
	} else if ((err = variant_best(x, own, chosen, &shape,
				       best_have ? &best_est : NULL)) < 0) {
		return err;
	}
	/* the search simulated the same actions in the same order, less
	 * the ZeRO prologue's gathers, which can only delay them */
	int gathers = 0;
	for (int r = 0; r < own->schedule.n_ranks; r++)
		gathers |= own->estimate.dp_gather_ms[r] > 0;
	if (gathers ? !(own->estimate.step_ms >= res.step_ms)
		    : own->estimate.step_ms != res.step_ms)
		return PPCC_EINTERNAL;
	if (given) {
		out->has_own = 1;
		out->given_fits = variant_fits(x, &out->best);
		if (!out->given_fits) {
			int worst = 0;
			for (int r = 1; r < x->p; r++)
				if (out->best.estimate.peak_memory_bytes[r] - x->rank_cap[r] >
				    out->best.estimate.peak_memory_bytes[worst] - x->rank_cap[worst])
					worst = r;
			ppcc_loc at = where_partition(cfg);
			ppcc_warning(d, &at, "the given partition does not fit: rank %d "
				     "peaks at %.2f GiB of %.2f GiB per device", worst,
				     gib(out->best.estimate.peak_memory_bytes[worst]),
				     gib(x->rank_cap[worst]));
		}
	}
	out->search = res;
	if (path_ok && res.path_bound && path_ms > out->search.lower_bound_ms)
		out->search.lower_bound_ms = path_ms;
	out->least_bottleneck_ps = proxy == 0 ? bottleneck : lb.bottleneck_ps;
	if (lean)
		return 0;

	if ((err = gathers
		   ? variant_uniform_placed(x, &out->uniform, uni, &shape)
		   : variant_uniform(x, &out->uniform, uni, &out->best.schedule,
				     uni_have ? &uni_est : NULL)) < 0)
		return err;
	out->uniform_fits = variant_fits(x, &out->uniform);
	out->has_uniform = 1;
	if (!ALLOC(out->memory_cap_bytes, x->p))
		return PPCC_ENOMEM;
	for (int r = 0; r < x->p; r++)
		out->memory_cap_bytes[r] = x->rank_cap[r];
	return 0;
}

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
		.zero = pl->zero, .kind = k};
	return admits(&e, ctx);
}

/* The auto kind: each handcrafted kind planned as `ppcc plan -s KIND`
 * would plan it (its own split) on the same ranks and microbatches, the
 * fastest that fits kept.  A kind of one chunk ignores the chunks given;
 * a kind of several chunks takes the chunks given (none when the count
 * given is 1) or, with none given, its own default.  Then, on the split
 * of the fastest one-chunk plan that fits, ppcc_sched_auto's choice
 * (every one-chunk kind and the zero-bubble heuristic's orders under the
 * same memory caps, then the exact search) replaces the plan when it is
 * faster than every kind's own plan.  So the plan is never slower in
 * simulation than any handcrafted kind that fits. */
static int plan_auto(ppcc_plan *out, ppcc_arena *a, const ppcc_config *cfg,
		     ppcc_diag *d, ppcc_admits_fn admits, void *admits_ctx)
{
	static const char pinned[] = "<auto>";
	ppcc_plan_auto *rep = ppcc_arena_alloc(a, 1, sizeof *rep);
	ppcc_plan one = {0};
	ppcc_config *best_cfg = NULL;
	int err, p = cfg->pipeline.stages, m = cfg->pipeline.microbatches;
	int one_kind = -1;
	if (!rep)
		return PPCC_ENOMEM;
	memset(out, 0, sizeof *out);
	rep->chosen_kind = -1;
	int given = cfg->pipeline.chunks_loc.file ? cfg->pipeline.chunks : 0;
	for (int k = 0; k < PPCC_SCHED_COUNT; k++) {
		const ppcc_sched_kind_info *ki = ppcc_sched_kind(k);
		if (k == PPCC_SCHED_AUTO || (ki->max_chunks > 1 && given == 1))
			continue;
		ppcc_config *ck = ppcc_arena_alloc(a, 1, sizeof *ck);
		if (!ck)
			return PPCC_ENOMEM;
		*ck = *cfg;
		ck->pipeline.kind = k;
		if (ki->max_chunks == 1 || !given) {
			ck->pipeline.chunks = ki->default_chunks;
			ck->pipeline.chunks_loc = (ppcc_loc){0};
		}
		/* the ranks and microbatches auto was given, not the defaults
		 * of another chunk count */
		if (!ck->pipeline.stages_loc.file && !ck->pipeline.partition)
			ck->pipeline.stages_loc = (ppcc_loc){pinned, 0, 0};
		if (!ck->pipeline.microbatches_loc.file)
			ck->pipeline.microbatches_loc = (ppcc_loc){pinned, 0, 0};
		ppcc_diag q = {.fn = plan_quiet};
		if (ppcc_config_check(ck, &q) != 0 || ck->pipeline.stages != p ||
		    ck->pipeline.microbatches != m ||
		    !auto_admits(ck, k, admits, admits_ctx))
			continue;
		ppcc_plan pk;
		err = plan_build(&pk, a, ck, &q, 1, NULL, NULL, NULL);
		ppcc_auto_kind_result *kr = &rep->kinds[rep->n_kinds++];
		kr->kind = k;
		kr->chunks = ck->pipeline.chunks;
		kr->fits = 0;
		if (err == PPCC_EINFEASIBLE)
			continue;
		if (err < 0)
			return err;
		kr->step_ms = pk.best.estimate.step_ms;
		kr->fits = !pk.has_own || pk.given_fits;
		if (!kr->fits)
			continue;
		if (rep->chosen_kind < 0 || kr->step_ms < out->best.estimate.step_ms) {
			*out = pk;
			best_cfg = ck;
			rep->chosen_kind = k;
		}
		if (ki->max_chunks == 1 &&
		    (one_kind < 0 || kr->step_ms < one.best.estimate.step_ms)) {
			one = pk;
			one_kind = k;
		}
	}
	if (rep->chosen_kind < 0) {
		/* none fits: the diagnostics of 1F1B's plan */
		ppcc_config *ck = ppcc_arena_alloc(a, 1, sizeof *ck);
		if (!ck)
			return PPCC_ENOMEM;
		*ck = *cfg;
		ck->pipeline.kind = PPCC_SCHED_1F1B;
		ck->pipeline.chunks = 1;
		ck->pipeline.chunks_loc = (ppcc_loc){0};
		err = plan_build(out, a, ck, d, 1, NULL, NULL, NULL);
		return err < 0 ? err : PPCC_EINTERNAL;
	}
	/* the heuristic (and every one-chunk kind) on the split of the
	 * fastest one-chunk plan, unless its orders are not the caller's */
	if (one_kind < 0 || !auto_admits(cfg, PPCC_SCHED_AUTO, admits, admits_ctx)) {
		rep->split_kind = rep->orders.chosen = -1;
		goto done;
	}
	rep->split_kind = one_kind;
	ppcc_plan_variant *bv = &one.best;
	ppcc_schedule sched;
	err = ppcc_sched_auto(&sched, &rep->orders, a, p, m, bv->stages,
			      bv->costs, one.memory_cap_bytes);
	if (err < 0 && err != PPCC_EINFEASIBLE)
		return err;
	const ppcc_auto_candidate *won = &rep->orders.candidates[rep->orders.chosen];
	/* the orders were simulated alone; with data parallelism the
	 * written one gets its collectives, as every kind's plan has, and
	 * is kept only when still faster with them (the ZeRO prologue's
	 * gathers can only delay it) */
	int dp = (cfg->pipeline.data_parallel > 0 ? cfg->pipeline.data_parallel : 1) *
		 (cfg->pipeline.context_parallel > 0 ? cfg->pipeline.context_parallel : 1);
	ppcc_estimate est = {0};
	int tried = err == 0 && won->kind != one_kind &&
		    won->step_ms < out->best.estimate.step_ms;
	if (tried) {
		if ((dp > 1 && (err = place_collectives(&sched, a, cfg, bv->costs)) < 0) ||
		    (err = ppcc_schedule_validate_seal(&sched, d, cfg->path, 20)) < 0)
			return err == PPCC_EINPUT ? PPCC_EINTERNAL : err;
		if ((err = ppcc_simulate_keep(&est, a, &sched, bv->costs,
					      PPCC_SIM_SEND_TIMES)) < 0)
			return err;
		if (!(est.step_ms >= won->step_ms) ||
		    (est.step_ms != won->step_ms && sched.version < 4))
			return PPCC_EINTERNAL;
	}
	if (tried && est.step_ms < out->best.estimate.step_ms) {
		bv->schedule = sched;
		bv->estimate = est;
		if (!plan_peaks_fit(&one, &bv->estimate, p))
			return PPCC_EINTERNAL;
		best_cfg = ppcc_arena_alloc(a, 1, sizeof *best_cfg);
		if (!best_cfg)
			return PPCC_ENOMEM;
		*best_cfg = *cfg;
		best_cfg->pipeline.kind = won->kind;
		best_cfg->pipeline.chunks = 1;
		if (!(bv->iteration = ppcc_arena_alloc(a, 1, sizeof *bv->iteration)))
			return PPCC_ENOMEM;
		if ((err = ppcc_iteration_estimate(bv->iteration, a, best_cfg, bv)) < 0)
			return err;
		ppcc_plan_variant *others[2] = {&one.uniform, one.has_own ? &one.own : NULL};
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
		one.uniform_fits = plan_peaks_fit(&one, &one.uniform.estimate, p);
		*out = one;
		rep->chosen_kind = won->kind;
	}
done:
	out->config = best_cfg;
	out->auto_plan = rep;
	return 0;
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
		? plan_auto(out, a, cfg, d, admits, admits_ctx)
		: plan_build(out, a, cfg, d, 1, NULL, NULL, NULL);
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
	return plan_build(&unused, a, cfg, d, 1, out_first, out_res, NULL);
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
	lean_opts lo = {above_ms, out_bound_ms, out_stage_bounds_ms, shapes,
			out_memory_unfit};
	if (out_memory_unfit)
		*out_memory_unfit = 0;
	if (out_stage_bounds_ms)
		out_stage_bounds_ms[0] = out_stage_bounds_ms[1] = NAN;
	/* auto plans several kinds in full; it has no bound of its own */
	if (cfg->pipeline.kind == PPCC_SCHED_AUTO)
		return plan_auto(out, a, cfg, d, NULL, NULL);
	return plan_build(out, a, cfg, d, 1, NULL, NULL, &lo);
}

/* The fewest stages, more than configured, at which the model fits, as
 * the command line would plan it (defaults that depend on the stage count,
 * such as the microbatches, follow it; every check of the configuration
 * applies); PPCC_EINFEASIBLE if none.  The trials are bounded: they stop
 * when one layer alone overflows every device even with a single
 * microbatch in flight, and after a budget of scheduled actions. */
static int fewest_stages(const ppcc_config *cfg, int *out_microbatches)
{
	static const ppcc_loc suggested = {"<suggestion>", 0, 0};
	ppcc_diag quiet = {0};
	const ppcc_model *md = &cfg->model;
	double cap = 0;
	for (int g = 0; g < cfg->cluster.n_groups; g++)
		if (cfg->cluster.groups[g].memory_bytes > cap)
			cap = cfg->cluster.groups[g].memory_bytes;
	cap *= cfg->cluster.devices; /* the most any split could give a layer */
	double least_bpp = ppcc_zero_bytes_per_param(NULL, cfg->pipeline.zero,
						     cfg->pipeline.grad_bytes,
						     cfg->cluster.devices);
	for (int i = 0; i < md->n_layers; i++) {
		const ppcc_layer *l = &md->layers[i];
		double bpp = l->bytes_per_param > 0 ? l->bytes_per_param : least_bpp;
		if (l->params * bpp + l->stash_bytes > cap)
			return PPCC_EINFEASIBLE;
	}
	int64_t budget = (int64_t)1 << 26; /* stage-microbatch pairs tried */
	int max_p = cfg->cluster.devices /
		    (cfg->pipeline.tensor_parallel * cfg->pipeline.context_parallel *
		     (cfg->pipeline.data_parallel_loc.file ? cfg->pipeline.data_parallel : 1));
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
		int err = plan_build(&tp, ta, &trial, &quiet, 0, NULL, NULL, NULL);
		ppcc_arena_free(ta);
		if (err == 0) {
			*out_microbatches = trial.pipeline.microbatches;
			return p;
		}
		if (err != PPCC_EINFEASIBLE)
			return err;
	}
	return PPCC_EINFEASIBLE;
}
