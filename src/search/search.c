/*
 * search.c - the configuration to train with: every (t, p, d, cp, v, b,
 * m, recompute, ZeRO, schedule kind) that fills the cluster, ranked by
 * the training iteration ppcc_plan_build estimates for it (the same
 * figures `ppcc plan` prints for that configuration).
 *
 * Contract: each dimension is narrowed by --fix; pruning never drops a
 * configuration of the top K (every bound used is a proven lower bound on
 * the iteration, and the memory bounds drop only configurations no split
 * fits); configurations are ranked by iteration, then tokens/s, then
 * the enumeration order (t, cp, p, d, v, b, recompute, ZeRO, kind),
 * except that those within options.tie_band of the fastest tie with it
 * and rank first, by the most headroom; the threshold pruning compares
 * with is the K-th best or the fastest x (1 + tie_band), the more, so
 * no pruned configuration could have tied.  The ranking is
 * deterministic, and the same on any number of threads
 * (options.threads, --jobs).  Compared configurations (--compare) are
 * ranked exactly among the candidates.  Every family (one value of t, p,
 * cp, v, kind, recompute or ZeRO) keeps its best configuration or its
 * least bound; when nothing fits, the search is rerun with one thing
 * changed at a time to say what would.
 * Limits: the space is the one described in the note below (t divides
 * devices_per_node, cp <= 8, v <= 4, b in 1, 2, 4, 8); layers are
 * expanded once per (b, recompute) and every candidate is planned in one
 * arena, reset between candidates.
 *
 * Derivation: doc/design/search.md (the space, the four bounds and why
 * pruning is safe, threads, compared configurations, families).
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ppcc.h"

static const ppcc_loc search_loc = {"<search>", 0, 0};

/* The units of work (ppcc_budget) a configuration counts for being
 * enumerated: about what its bounds cost beside a simulated action,
 * SEARCH_CONFIG_WORK, or, for many layers, SEARCH_BOUND_WORK a layer or
 * rank, the more: the FLOPs bound bisects over every layer (bound.c),
 * so its cost grows with them (16 a layer: 2,048 at 128 layers and
 * ranks; every example's search and Llama 3 405B's on 16,384 devices
 * still fit the default budget and answer as before). */
#define SEARCH_CONFIG_WORK 2048
#define SEARCH_BOUND_WORK 16
/* and a partition cell of a configuration planned: what planning costs
 * per cell beside a simulated action (a plan of 2^28 cells, 4.6 s) */
#define SEARCH_CELL_WORK 8
/* and a layer of a configuration planned (its costs, bounds and stage
 * tables: a plan of 2^20 layers on 1 to 32 stages, 1.2 to 5 s) */
#define SEARCH_LAYER_WORK 256
/* and an action of a configuration planned, its schedule built, lowered,
 * checked and estimated once beside the split search's simulations: 90
 * to 160 ns an action where a unit of enumeration is about 1.3 ns
 * (searches of Llama 3 8B at global batches of 8,192 to 2^20 sequences,
 * Llama 3 405B on 16,384 devices), counted at 32, the least that keeps
 * such a search within the default budget's time, so that the examples
 * and Llama 3 405B's search keep their room */
#define SEARCH_ACTION_WORK 32
/* and a layer visit of its bound's bisections (bound.c): a unit, as the
 * enumeration's bounds count theirs (SEARCH_BOUND_WORK), and one more
 * for every SEARCH_VISIT_LAYERS layers, the prefix arrays leaving the
 * caches (a visit took 2 to 3 ns over 4,094 transformer layers on 8
 * devices, 6 ns over 16,382) */
#define SEARCH_VISIT_LAYERS 2048
/* the partition cells of one configuration's plan (ppcc_budget) */
#define SEARCH_PLAN_CELLS (PPCC_MAX_WORK_DEFAULT / 4)

/* The enumeration's bound (flops_bound) stops its bisections at this
 * many layer visits over n + 1 layers: a model of up to hundreds of
 * layers reaches its bound as without a cap (the largest, 3 bisections of
 * 48 checks of (n + p)(log2 n + 1) visits, is 334,000 for 130 layers on
 * 128 ranks, under 510,000), while one of thousands, whose bounds took
 * 0.6 ms each (24,000 configurations of 4,094 transformer layers on 64
 * devices: 15 s), stops at a weaker bound, still proven. */
#define SEARCH_ENUM_VISITS ((int64_t)1 << 26)

/* The schedules' shapes kept across candidates (ppcc_plan_shapes): at
 * most this many bytes of actions before the cache starts over. */
#define SEARCH_SHAPE_BYTES ((size_t)64 << 20)

#define SET_TP_SIZES 8

typedef struct layer_set {
	int b, recompute;
	ppcc_layer *layers;
	int n;
	ppcc_transformer *tf;
	double flops;      /* sum of fwd + bwd FLOPs per microbatch */
	double params;     /* layers without their own bytes per parameter */
	double expert_params; /* the routed experts' part of params */
	double tp_whole;      /* the part every tensor-parallel device keeps */
	/* one microbatch's stash of all the layers, and its part kept whole
	 * on each tensor-parallel device */
	double stash, stash_replicated;
	double own_static; /* params x bytes_per_param of those with */
	/* prefixes of FLOPs for bound.c (n + 1 each): the forward, the
	 * forward and backward in layer order, and the k least layers' */
	double *fwd_prefix, *work_prefix, *least_prefix;
	/* and from the last layer: all forwards plus the input gradients
	 * (B, or its part without W), the backwards, the k least of those */
	double *back_full_prefix, *back_split_prefix, *back_prefix;
	double *back_least_prefix;
	/* the memory-bound kernels' bytes, forward and backward, and their
	 * part kept whole on each tensor-parallel device; the
	 * tensor-parallel all-reduces, forward and backward, by message
	 * size (n_tp of them; -1: too many sizes to count) */
	double kbytes, kwhole;
	/* precision fp8: the FP8 products' parameters, and the routed
	 * experts' and the whole-kept part of them (cost/memory.c) */
	double fp8_params, fp8_experts, fp8_whole;
	int n_tp;
	double tp_bytes[SET_TP_SIZES], tp_count[SET_TP_SIZES];
} layer_set;

typedef struct cand {
	ppcc_search_entry e;
	int set;     /* layer_set index */
	long order;  /* enumeration order */
	int64_t sims; /* the actions its split search may simulate */
} cand;

/* The families, one table per dimension indexed by value. */
typedef struct families {
	ppcc_search_family *by[PPCC_DIM_COUNT];
	int size[PPCC_DIM_COUNT];
} families;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int divides(long a, long b)
{
	return a > 0 && b % a == 0;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return a < b ? -1 : a > b;
}

static int cmp_lb(const void *pa, const void *pb)
{
	const cand *a = pa, *b = pb;
	if (a->e.lower_bound_ms != b->e.lower_bound_ms)
		return a->e.lower_bound_ms < b->e.lower_bound_ms ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* The same settings (the figures aside). */
static int same_settings(const ppcc_search_entry *a, const ppcc_search_entry *b)
{
	return a->t == b->t && a->p == b->p && a->d == b->d && a->cp == b->cp &&
	       a->v == b->v && a->b == b->b && a->m == b->m &&
	       a->recompute == b->recompute && a->zero == b->zero &&
	       a->kind == b->kind && a->ep == b->ep && a->etp == b->etp;
}

static int cmp_rank(const ppcc_search_entry *a, long oa,
		    const ppcc_search_entry *b, long ob)
{
	if (a->iteration_ms != b->iteration_ms)
		return a->iteration_ms < b->iteration_ms ? -1 : 1;
	if (a->tokens_per_s != b->tokens_per_s)
		return a->tokens_per_s > b->tokens_per_s ? -1 : 1;
	return oa < ob ? -1 : oa > ob;
}

/* The diagnostics of a candidate are not shown; of an infeasible one,
 * the memory per device plan/nofit.c says it would fit with is kept. */
typedef struct capture {
	double need_gib; /* 0: none said */
} capture;

static void quiet(ppcc_severity sev, const ppcc_loc *loc, const char *msg,
		  void *user)
{
	(void)sev, (void)loc;
	capture *c = user;
	double g;
	if (c && sscanf(msg, "it would fit with %lf GiB per device", &g) == 1)
		c->need_gib = g;
	else if (c && sscanf(msg, "it would need at least %lf GiB per device",
			     &g) == 1)
		c->need_gib = -g;
}

static void set_pipeline(ppcc_pipeline *pl, const ppcc_search_entry *e)
{
	pl->kind = e->kind;
	pl->stages = e->p;
	pl->microbatches = e->m;
	pl->chunks = e->v;
	pl->group_size = 0;
	pl->tensor_parallel = e->t;
	pl->data_parallel = e->d;
	pl->context_parallel = e->cp;
	pl->global_batch_size = e->m * e->b * e->d;
	pl->zero = e->zero;
	/* a mixture of experts' layout (etp > 0), else the defaults */
	pl->expert_parallel = e->ep > 0 ? e->ep : 1;
	pl->expert_tensor_parallel = e->etp;
	pl->expert_parallel_loc = pl->expert_tensor_parallel_loc =
		e->etp > 0 ? search_loc : (ppcc_loc){0};
	pl->kind_loc = pl->stages_loc = pl->microbatches_loc = pl->chunks_loc =
		pl->tensor_parallel_loc = pl->data_parallel_loc =
		pl->context_parallel_loc = pl->global_batch_size_loc =
		pl->zero_loc = search_loc;
	pl->group_size_loc = (ppcc_loc){0};
}

int ppcc_search_config(ppcc_config *out, ppcc_arena *a,
		       const ppcc_config *base, const ppcc_search_entry *e)
{
	*out = *base;
	set_pipeline(&out->pipeline, e);
	if (base->model.transformer) {
		ppcc_transformer *tf = ppcc_arena_alloc(a, 1, sizeof *tf);
		if (!tf)
			return PPCC_ENOMEM;
		*tf = *base->model.transformer;
		tf->micro_batch_size = e->b;
		tf->recompute = e->recompute;
		out->model.transformer = tf;
		out->model.micro_batch_size = e->b;
		int err = ppcc_transformer_expand(&out->model.layers,
						  &out->model.n_layers, a, tf,
						  base->model.transformer_loc);
		if (err)
			return err;
	}
	return 0;
}

/* The FLOPs that take as long at the 16-bit rate as flops of which fp8
 * run k = fp8_gain times faster: flops - fp8 (1 - 1/k). */
static double at_bf16(double flops, double fp8, double k)
{
	return fp8 > 0 && k > 1 ? flops - fp8 * (1 - 1 / k) : flops;
}

/* The largest FP8 gain of cfg's devices (1 without FP8): the bounds
 * take each FP8 product at the fastest device's FP8 rate. */
static double fp8_speedup_max(const ppcc_config *cfg)
{
	double k = 1;
	if (!cfg->model.transformer || !cfg->model.transformer->fp8)
		return 1;
	for (int g = 0; g < cfg->cluster.n_groups; g++)
		if (cfg->cluster.groups[g].fp8_gain > k)
			k = cfg->cluster.groups[g].fp8_gain;
	return k;
}

/* The most times as fast as a device's matrix products any of cfg's
 * device groups runs attention's kernels (cost/compute.c), at least 1:
 * the bounds count attention's FLOPs at that speed-up. */
static double attn_speedup_max(const ppcc_config *cfg)
{
	double k = 1;
	for (int g = 0; g < cfg->cluster.n_groups; g++) {
		const ppcc_device_group *dg = &cfg->cluster.groups[g];
		double rf, rb, r = ppcc_cost_speed(dg, 1);
		/* every measured length: any rate between is below one */
		for (int i = 0; i < PPCC_ATTN_LENS && r > 0; i++) {
			if (!ppcc_cost_attention_rates(&rf, &rb, cfg, dg,
						       ppcc_attn_lens[i]))
				continue;
			if (rf / r > k)
				k = rf / r;
			if (rb / r > k)
				k = rb / r;
		}
	}
	return k;
}

/* The FLOPs that take as long at the matrix rate as flops of which the
 * attention's attn run ka times faster at most. */
static double at_matrix(double flops, double attn, double ka)
{
	return ka > 1 && attn > 0 ? flops - attn * (1 - 1 / ka) : flops;
}

/* A set's sums and prefixes (the arrays allocated, zero), its FP8
 * products counted at k times the rate (at_bf16), its attention at ka
 * times (at_matrix). */
static void set_sums(layer_set *s, double k, double ka)
{
	for (int i = 0; i < s->n; i++) {
		const ppcc_layer *l = &s->layers[i];
		double ab = 2 * l->attn_flops + l->attn_recompute_flops;
		double fwd = at_matrix(at_bf16(l->fwd_flops, l->fp8_fwd_flops,
					       k), l->attn_flops, ka);
		double bwd = at_matrix(at_bf16(l->bwd_flops, l->fp8_bwd_flops,
					       k), ab, ka);
		s->flops += fwd + bwd;
		s->fwd_prefix[i + 1] = s->fwd_prefix[i] + fwd;
		s->work_prefix[i + 1] = s->work_prefix[i] + fwd + bwd;
		s->least_prefix[i + 1] = fwd + bwd;
		s->kbytes += l->kernel_fwd_bytes + l->kernel_bwd_bytes;
		if (l->fp8_params > 0) {
			s->fp8_params += l->fp8_params;
			s->fp8_experts += l->expert_params;
			s->fp8_whole += l->tp_replicated_params;
		}
		s->kwhole += l->kernel_fwd_replicated_bytes +
			     l->kernel_bwd_replicated_bytes;
		double ars = l->tp_fwd_allreduces + l->tp_bwd_allreduces;
		if (ars > 0 && l->tp_message_bytes > 0 && s->n_tp >= 0) {
			int j = 0;
			while (j < s->n_tp && s->tp_bytes[j] != l->tp_message_bytes)
				j++;
			if (j == SET_TP_SIZES) {
				s->n_tp = -1;
			} else {
				if (j == s->n_tp) {
					s->tp_bytes[j] = l->tp_message_bytes;
					s->n_tp++;
				}
				s->tp_count[j] += ars;
			}
		}
		s->stash += l->stash_bytes;
		s->stash_replicated += l->stash_replicated_bytes;
		/* shared_params: held once where a rank holds the first
		 * layer too, which a bound may assume of every layout */
		double own = l->params - l->shared_params;
		if (l->bytes_per_param > 0) {
			s->own_static += own * l->bytes_per_param;
		} else {
			s->params += own;
			s->expert_params += l->expert_params;
			s->tp_whole += l->tp_replicated_params;
		}
	}
	qsort(s->least_prefix + 1, (size_t)s->n, sizeof(double), cmp_double);
	for (int i = 1; i <= s->n; i++)
		s->least_prefix[i] += s->least_prefix[i - 1];
	int n = s->n;
	s->back_full_prefix[0] = s->back_split_prefix[0] = s->fwd_prefix[n];
	for (int i = 1; i <= n; i++) {
		const ppcc_layer *l = &s->layers[n - i];
		double bwd = at_matrix(at_bf16(l->bwd_flops, l->fp8_bwd_flops,
					       k), 2 * l->attn_flops +
				       l->attn_recompute_flops, ka);
		double in = bwd - at_bf16(l->bwd_weight_flops, l->fp8_fwd_flops, k);
		s->back_full_prefix[i] = s->back_full_prefix[i - 1] + bwd;
		s->back_split_prefix[i] = s->back_split_prefix[i - 1] +
					  (in > 0 ? in : 0);
		s->back_prefix[i] = s->back_prefix[i - 1] + bwd;
		s->back_least_prefix[i] = bwd;
	}
	qsort(s->back_least_prefix + 1, (size_t)n, sizeof(double), cmp_double);
	for (int i = 1; i <= n; i++)
		s->back_least_prefix[i] += s->back_least_prefix[i - 1];
}

/* A set's arrays, n + 1 each, in sums (7 (n + 1) doubles, zero). */
static void set_arrays(layer_set *s, double *sums)
{
	size_t k = (size_t)s->n + 1;
	s->fwd_prefix = sums;
	s->work_prefix = sums + k;
	s->least_prefix = sums + 2 * k;
	s->back_full_prefix = sums + 3 * k;
	s->back_split_prefix = sums + 4 * k;
	s->back_prefix = sums + 5 * k;
	s->back_least_prefix = sums + 6 * k;
}

static int set_init(layer_set *s, ppcc_arena *a, const ppcc_config *cfg,
		    int b, int recompute)
{
	s->b = b;
	s->recompute = recompute;
	if (cfg->model.transformer) {
		s->tf = ppcc_arena_alloc(a, 1, sizeof *s->tf);
		if (!s->tf)
			return PPCC_ENOMEM;
		*s->tf = *cfg->model.transformer;
		s->tf->micro_batch_size = b;
		s->tf->recompute = recompute;
		int err = ppcc_transformer_expand(&s->layers, &s->n, a, s->tf,
						  cfg->model.transformer_loc);
		if (err)
			return err;
	} else {
		s->layers = cfg->model.layers;
		s->n = cfg->model.n_layers;
	}
	double *sums = ppcc_arena_alloc(a, 7 * ((size_t)s->n + 1), sizeof *sums);
	if (!sums)
		return PPCC_ENOMEM;
	set_arrays(s, sums);
	set_sums(s, fp8_speedup_max(cfg), attn_speedup_max(cfg));
	return 0;
}

/* bound.c's bound from FLOPs (each layer's F, B, its part without W,
 * and F + B on any rank at least its FLOPs at t cp R, R the fastest
 * group's rate: plan/tables.c only adds non-negative terms; no p2p), in FLOPs.
 * It depends on the layers, p, v, m and the kind's placement and
 * backward alone, so the search keeps each (memo_bound).  place: room
 * for p v stages; first, count, last: for p ranks. */
static double flops_bound(const layer_set *set, int kind, int p, int v, int m,
			  ppcc_stage_info *place, int *first, int *count,
			  int *last)
{
	const ppcc_sched_kind_info *ki = ppcc_sched_kind(kind);
	int S = p * v, n = set->n;
	if (!ki || S > n)
		return 0;
	ppcc_sched_place(place, kind, p, v);
	int contiguous = S == p;
	for (int r = 0; r < p; r++)
		first[r] = -1, count[r] = 0;
	for (int s = 0; s < S; s++) {
		int r = place[s].rank;
		if (r < 0 || r >= p)
			return 0;
		contiguous &= r == s;
		if (first[r] < 0)
			first[r] = s;
		last[r] = S - 1 - s;
		count[r]++;
	}
	for (int r = 0; r < p; r++)
		if (first[r] < 0)
			return 0;
	/* the auto kind plans kinds of either backward */
	int split = ki->split_backward || kind == PPCC_SCHED_AUTO;
	ppcc_bound_problem bp = {
		.n_layers = n, .n_ranks = p, .microbatches = m,
		.lead_f_prefix = set->fwd_prefix,
		.lead_fb_prefix = split ? NULL : set->work_prefix,
		.work_prefix = set->work_prefix,
		.least_prefix = set->least_prefix,
		.first_stage = first, .stage_count = count,
		.contiguous = contiguous,
		.back_lead_prefix = split ? set->back_split_prefix
					  : set->back_full_prefix,
		.back_work_prefix = set->back_prefix,
		.back_least_prefix = set->back_least_prefix,
		.back_first_stage = last};
	return ppcc_bound_step_within(&bp, SEARCH_ENUM_VISITS / (n + 1), NULL);
}

/* The FLOPs bounds kept: open addressing on (layer set, the kind's
 * placement and backward, p, v, m). */
typedef struct memo_slot {
	int set, how, p, v, m, used;
	double flops;
} memo_slot;

typedef struct bound_memo {
	memo_slot *slot;
	size_t size; /* a power of two, more than the candidates */
} bound_memo;

static double memo_bound(bound_memo *mo, int si, const layer_set *set,
			 const ppcc_search_entry *e, ppcc_stage_info *place,
			 int *first, int *count, int *last)
{
	const ppcc_sched_kind_info *ki = ppcc_sched_kind(e->kind);
	if (!ki)
		return 0;
	/* kinds of one placement and one backward share the bound */
	int how = e->kind == PPCC_SCHED_AUTO ? -1
		  : ki->placement * 3 + ki->split_backward;
	uint64_t h = (uint64_t)(si + 1) * 0x9e3779b97f4a7c15u;
	h = (h ^ (uint64_t)(how + 2)) * 0xff51afd7ed558ccdu;
	h = (h ^ (uint64_t)e->p) * 0xc4ceb9fe1a85ec53u;
	h = (h ^ (uint64_t)e->v) * 0xff51afd7ed558ccdu;
	h = (h ^ (uint64_t)e->m) * 0xc4ceb9fe1a85ec53u;
	size_t i = (size_t)(h >> 17) & (mo->size - 1);
	for (;; i = (i + 1) & (mo->size - 1)) {
		memo_slot *sl = &mo->slot[i];
		if (!sl->used) {
			*sl = (memo_slot){si, how, e->p, e->v, e->m, 1,
					  flops_bound(set, e->kind, e->p, e->v,
						      e->m, place, first, count,
						      last)};
			return sl->flops;
		}
		if (sl->set == si && sl->how == how && sl->p == e->p &&
		    sl->v == e->v && sl->m == e->m)
			return sl->flops;
	}
}

/* The bound a candidate is ordered by: the FLOPs bound at t cp R,
 * raised to the iteration by ppcc_plan_iteration_bound.  Rounding:
 * plan/tables.c rounds each layer's F, F + B and W to the picosecond, so a
 * rank's compute of m microbatches, the lead and the tail are each
 * within a picosecond a layer and microbatch of these. */
static double candidate_bound(const ppcc_config *base, const layer_set *set,
			      const ppcc_search_entry *e, double R,
			      double flops)
{
	int n = set->n;
	double speed = (double)e->t * e->cp * R;
	double step = flops / speed * 1e3 - ((double)e->m + 3) * n * 1e-9;
	ppcc_config cfg = *base;
	set_pipeline(&cfg.pipeline, e);
	cfg.model.layers = set->layers;
	cfg.model.n_layers = n;
	/* Every F and B also runs its layers' memory-bound kernels at a
	 * device's memory bandwidth (at most the fastest's) and its
	 * tensor-parallel collectives, of which pipeline.overlap.tp_comm
	 * hides at most 1 - comm_sm_share (cost/compute.c): the busiest
	 * rank is busy at least 1/p of all the stages' m of them. */
	double bw = 0;
	for (int g = 0; g < cfg.cluster.n_groups; g++)
		if (cfg.cluster.groups[g].memory_bandwidth > bw)
			bw = cfg.cluster.groups[g].memory_bandwidth;
	double side = 0;
	if (bw > 0)
		side += (set->kbytes + (e->t - 1) * set->kwhole) /
			((double)e->t * e->cp) / bw;
	if (e->t > 1 && set->n_tp > 0) {
		int sp = set->tf ? set->tf->sequence_parallel : 1;
		double tp = 0;
		for (int k = 0; k < set->n_tp; k++)
			tp += set->tp_count[k] * ppcc_comm_tp_seconds(
				&cfg.cluster, e->t, e->cp, set->tp_bytes[k], sp);
		side += (cfg.pipeline.overlap.tp_comm
			 ? ppcc_overlap_comm_sm_share(&cfg.pipeline) : 1) * tp;
	}
	if (side > 0 && !(set->tf && set->tf->moe.experts > 0)) {
		double avg = e->m * (set->flops / speed + side) / e->p * 1e3 -
			     ((double)e->m + 3) * n * 1e-9;
		if (avg > step)
			step = avg;
	}
	if (set->tf && set->tf->moe.experts > 0) {
		/* A mixture of experts' all-to-alls and its busiest rank's
		 * extra routed FLOPs lengthen each F and B it is in
		 * (cost/compute.c); the busiest rank is busy at least 1/p of
		 * all the stages' m F and B, these included, less what
		 * overlapped pairs may hide of the all-to-alls
		 * (ppcc_op_least_ms). */
		cfg.model.transformer = set->tf;
		double shown = 1 - ppcc_cost_ep_hidden_share(&cfg, e->kind);
		double k8 = fp8_speedup_max(&cfg);
		double extra = 0;
		for (int i = 0; i < n; i++) {
			const ppcc_layer *l = &set->layers[i];
			if (!(l->a2a_bytes > 0))
				continue;
			double f, b, xb;
			ppcc_cost_expert_comm(&f, &b, &cfg, l);
			double xf = ppcc_cost_expert_extra_flops(&xb, &cfg, l);
			double x8 = l->fp8_fwd_flops > 0 ? xf + xb : 0;
			extra += shown * (f + b) +
				 at_bf16(xf + xb, x8, k8) /
				 speed;
		}
		double avg = e->m * (set->flops / speed + extra + side) / e->p * 1e3 -
			     ((double)e->m + 3) * n * 1e-9;
		if (avg > step)
			step = avg;
	}
	return ppcc_plan_iteration_bound(&cfg, step > 0 ? step : 0);
}

/* One candidate planned as ppcc plan would plan it, in arena a (reset
 * here); *need_gib: what an infeasible one would need per device.  1,
 * nothing planned, when the plan's proven bound on its step exceeds
 * above_ms; the bound raises c's lower_bound_ms.  With memory, the plan's
 * memory bound applies before the split search (membound.c): 2, no split
 * searched, when it proves none fits. */
static int evaluate(cand *c, ppcc_arena *a, ppcc_plan_shapes *shapes,
		    const ppcc_config *base, const layer_set *set,
		    const ppcc_budget *budget, double above_ms, int memory,
		    double *need_gib, double *stage_bounds)
{
	ppcc_arena_reset(a);
	ppcc_config cfg = *base;
	set_pipeline(&cfg.pipeline, &c->e);
	cfg.model.layers = set->layers;
	cfg.model.n_layers = set->n;
	if (set->tf) {
		cfg.model.transformer = set->tf;
		cfg.model.micro_batch_size = set->b;
	}
	capture cap = {0};
	ppcc_diag d = {.fn = quiet, .user = &cap};
	ppcc_plan plan;
	int err = ppcc_config_check(&cfg, &d);
	if (err == 0)
		err = ppcc_plan_budget_check_work(&cfg, PPCC_FMT_TEXT, budget,
						  &d);
	if (err == 0)
	{
		double bound = 0;
		int unfit = 0;
		err = ppcc_plan_build_pruned(&plan, a, &cfg, &d, above_ms, &bound,
					     stage_bounds, shapes,
					     memory ? &unfit : NULL);
		if (bound > c->e.lower_bound_ms)
			c->e.lower_bound_ms = bound;
		if (err == 1)
			return 1;
		if (unfit) {
			*need_gib = cap.need_gib;
			return 2;
		}
	}
	if (err == 0 && !plan.best.iteration)
		err = PPCC_EINTERNAL;
	*need_gib = cap.need_gib;
	if (err == 0) {
		const ppcc_iteration *it = plan.best.iteration;
		c->e.iteration_ms = it->iteration_ms;
		c->e.tokens_per_s = it->tokens_per_s;
		c->e.mfu = it->mfu;
		c->e.bubble = plan.best.estimate.bubble_fraction;
		double peak = 0;
		for (int r = 0; r < plan.best.schedule.n_ranks; r++)
			if (plan.best.estimate.peak_memory_bytes[r] > peak)
				peak = plan.best.estimate.peak_memory_bytes[r];
		c->e.peak_bytes = peak;
		/* against the caps the plan was given, which the search's
		 * headroom lowered (its callers add it back) */
		double free_bytes = INFINITY;
		for (int r = 0; r < plan.best.schedule.n_ranks; r++) {
			double cap_r = plan.memory_cap_bytes
				       ? plan.memory_cap_bytes[r]
				       : ppcc_memory_device_cap(&cfg.cluster,
								&cfg.cluster.groups[0]);
			double x = cap_r - plan.best.estimate.peak_memory_bytes[r];
			if (x < free_bytes)
				free_bytes = x;
		}
		c->e.headroom_bytes = isinf(free_bytes) ? 0 : free_bytes;
	}
	return err;
}

static double fastest_rate(const ppcc_cluster *cl)
{
	double R = 0;
	for (int g = 0; g < cl->n_groups; g++) {
		double r = cl->groups[g].tflops * 1e12 * cl->groups[g].efficiency;
		if (r > R)
			R = r;
	}
	return R;
}

double ppcc_search_bound_ms(const ppcc_config *cfg)
{
	const ppcc_pipeline *pl = &cfg->pipeline;
	int n = cfg->model.n_layers, p = pl->stages;
	int v = pl->chunks > 0 ? pl->chunks : 1;
	if (n < 1 || p < 1 || p * v > n)
		return 0;
	layer_set s = {.layers = cfg->model.layers, .n = n};
	double *sums = calloc(7 * ((size_t)n + 1), sizeof *sums);
	ppcc_stage_info *place = calloc((size_t)p * v, sizeof *place);
	int *ranks = calloc(3 * (size_t)p, sizeof *ranks);
	double lb = 0;
	if (sums && place && ranks) {
		set_arrays(&s, sums);
		set_sums(&s, fp8_speedup_max(cfg), attn_speedup_max(cfg));
		ppcc_search_entry e = {
			.t = pl->tensor_parallel, .p = p, .v = v,
			.d = pl->data_parallel > 0 ? pl->data_parallel : 1,
			.cp = pl->context_parallel > 0 ? pl->context_parallel : 1,
			.m = pl->microbatches, .zero = pl->zero, .kind = pl->kind,
			.b = cfg->model.micro_batch_size > 0
			     ? cfg->model.micro_batch_size : 1};
		double f = flops_bound(&s, e.kind, p, v, e.m, place, ranks,
				       ranks + p, ranks + 2 * p);
		lb = candidate_bound(cfg, &s, &e, fastest_rate(&cfg->cluster), f);
	}
	free(sums);
	free(place);
	free(ranks);
	return lb;
}

/* A compared configuration completed as ppcc plan completes a file's
 * pipeline settings (ppcc_config_fill_defaults, then ppcc_config_check
 * and the plan's budget check, their errors at the entry's keys), and
 * held to the search's question: the devices t p d cp fill (at most,
 * with allow_idle) and the global batch m b d gives.  Its layers in
 * *set.  PPCC_EINPUT after reporting. */
static int compare_prepare(ppcc_search_compared *out, layer_set *set,
			   ppcc_arena *a, const ppcc_config *cfg,
			   const ppcc_compare_entry *ce,
			   const ppcc_search_options *o, long B, ppcc_diag *d)
{
	const ppcc_transformer *tf = cfg->model.transformer;
	int errors = d->errors;
	memset(out, 0, sizeof *out);
	out->from = ce;
	ppcc_loc at = ce->pipeline.loc;
	if (!tf && ce->micro_batch_size &&
	    ce->micro_batch_size != cfg->model.micro_batch_size)
		ppcc_error(d, &ce->micro_batch_size_loc, "micro_batch_size: a "
			   "model given as layers keeps its micro-batch size %d",
			   cfg->model.micro_batch_size);
	if (!tf && ce->recompute > 0)
		ppcc_error(d, &ce->recompute_loc, "recompute: a model given as "
			   "layers has no recompute to choose (none)");
	int b = ce->micro_batch_size ? ce->micro_batch_size
		: tf ? tf->micro_batch_size : 1;
	int rec = ce->recompute >= 0 ? ce->recompute : tf ? tf->recompute : 0;
	/* the modules are the model file's: an entry may restate them */
	unsigned mine = tf && tf->recompute_modules ? tf->recompute_modules
			: PPCC_RC_CORE_ATTN;
	if (ce->recompute_modules && (rec != PPCC_RECOMPUTE_SELECTIVE ||
				      ce->recompute_modules != mine)) {
		char got[96], want[96];
		ppcc_recompute_modules_text(got, sizeof got,
					    ce->recompute_modules, ", ");
		ppcc_recompute_modules_text(want, sizeof want, mine, ", ");
		if (rec != PPCC_RECOMPUTE_SELECTIVE)
			ppcc_error(d, &ce->recompute_modules_loc,
				   "recompute_modules: %s, but the entry's "
				   "recompute is not selective",
				   got);
		else
			ppcc_error(d, &ce->recompute_modules_loc,
				   "recompute_modules: %s, but the search plans "
				   "the model's (%s); set "
				   "transformer.recompute_modules in the model "
				   "to compare these", got, want);
	}
	if (d->errors != errors)
		return PPCC_EINPUT;
	int err = set_init(set, a, cfg, b, rec);
	if (err)
		return err;
	ppcc_config c = *cfg;
	c.model.layers = set->layers;
	c.model.n_layers = set->n;
	if (set->tf) {
		c.model.transformer = set->tf;
		c.model.micro_batch_size = b;
	}
	ppcc_pipeline *pl = &c.pipeline;
	*pl = ce->pipeline;
	pl->grad_bytes = cfg->pipeline.grad_bytes;
	pl->dp_bucket_mb = cfg->pipeline.dp_bucket_mb;
	pl->dp_bucket_mb_loc = cfg->pipeline.dp_bucket_mb_loc;
	pl->max_simulations = cfg->pipeline.max_simulations;
	if (!pl->global_batch_size_loc.file && !pl->microbatches_loc.file)
		pl->global_batch_size = (int)B;
	ppcc_config_fill_defaults(&c);
	if ((err = ppcc_config_check(&c, d)) < 0 ||
	    (err = ppcc_plan_budget_check_work(&c, PPCC_FMT_TEXT, &o->budget,
					       d)) < 0) {
		ppcc_note(d, &ce->loc, "in this compared configuration");
		return err == PPCC_ENOMEM ? err : PPCC_EINPUT;
	}
	if (ppcc_sched_pipes(pl->kind) > 1) {
		ppcc_loc l = pl->kind_loc.file ? pl->kind_loc : at;
		ppcc_error(d, &l, "ppcc cannot plan the %s schedule yet: its "
			   "second pipeline holds a copy of every stage's "
			   "layers, and the partition gives each layer to one "
			   "stage; compare dualpipe-v, its one-copy form",
			   ppcc_schedule_kind_name(pl->kind));
		return PPCC_EINPUT;
	}
	ppcc_search_entry *e = &out->e;
	*e = (ppcc_search_entry){
		.t = pl->tensor_parallel, .p = pl->stages,
		.d = pl->data_parallel, .cp = pl->context_parallel,
		.v = pl->chunks, .b = b, .m = pl->microbatches,
		.recompute = rec, .zero = pl->zero, .kind = pl->kind,
		.ep = pl->expert_parallel,
		.etp = tf && tf->moe.experts > 0 ? ppcc_pipeline_etp(pl) : 0};
	long used = (long)e->t * e->p * e->d * e->cp;
	if (o->allow_idle ? used > cfg->cluster.devices
	    : used != cfg->cluster.devices) {
		ppcc_loc l = pl->data_parallel_loc.file ? pl->data_parallel_loc : at;
		ppcc_error(d, &l, "t %d x p %d x d %d x cp %d = %ld devices, but "
			   "the search's configurations use %s the %d devices%s",
			   e->t, e->p, e->d, e->cp, used,
			   o->allow_idle ? "at most" : "all", cfg->cluster.devices,
			   o->allow_idle ? "" : " (--allow-idle: fewer)");
	}
	long batch = (long)e->m * e->b * e->d;
	if (batch != B) {
		ppcc_loc l = pl->global_batch_size_loc.file
			     ? pl->global_batch_size_loc
			     : pl->microbatches_loc.file ? pl->microbatches_loc : at;
		ppcc_error(d, &l, "m %d x b %d x d %d = %ld sequences, but the "
			   "search's global batch is %ld", e->m, e->b, e->d,
			   batch, B);
	}
	return d->errors != errors ? PPCC_EINPUT : 0;
}

/* The global batch: the option, else pipeline.global_batch_size, else
 * the batch the file's pipeline settings give (m x b x d as ppcc plan
 * completes them); 0 when there is none. */
static long global_batch(const ppcc_config *cfg, const ppcc_search_options *o,
			 int *given)
{
	*given = 1;
	if (o->global_batch > 0)
		return o->global_batch;
	if (cfg->pipeline.global_batch_size > 0)
		return cfg->pipeline.global_batch_size;
	*given = 0;
	if (!cfg->pipeline.microbatches_loc.file)
		return 0;
	ppcc_config c = *cfg;
	ppcc_diag d = {.fn = quiet};
	if (ppcc_config_check(&c, &d) < 0)
		return 0;
	long b = c.model.micro_batch_size > 0 ? c.model.micro_batch_size : 1;
	return (long)c.pipeline.microbatches * b *
	       (c.pipeline.data_parallel > 0 ? c.pipeline.data_parallel : 1);
}

static int entry_value(const ppcc_search_entry *e, int dim)
{
	switch (dim) {
	case PPCC_DIM_T: return e->t;
	case PPCC_DIM_P: return e->p;
	case PPCC_DIM_CP: return e->cp;
	case PPCC_DIM_V: return e->v;
	case PPCC_DIM_KIND: return e->kind;
	case PPCC_DIM_RECOMPUTE: return e->recompute;
	case PPCC_DIM_EP: return e->ep;
	case PPCC_DIM_ETP: return e->etp;
	default: return e->zero;
	}
}

/* What happened to c, for each of its families. */
enum { F_ENUM, F_MEMORY, F_BOUND, F_INVALID, F_INFEASIBLE, F_FITS };

static void family_note(families *f, const cand *c, int what)
{
	for (int dim = 0; dim < PPCC_DIM_COUNT; dim++) {
		int v = entry_value(&c->e, dim);
		if (v < 0 || v >= f->size[dim])
			continue;
		ppcc_search_family *x = &f->by[dim][v];
		switch (what) {
		case F_ENUM:
			if (!x->enumerated++) {
				x->dim = dim;
				x->value = v;
				x->bound_ms = INFINITY;
			}
			break;
		case F_MEMORY: x->pruned_memory++; break;
		case F_BOUND:
			x->pruned_bound++;
			if (c->e.lower_bound_ms < x->bound_ms)
				x->bound_ms = c->e.lower_bound_ms;
			break;
		case F_INVALID: x->invalid++; break;
		case F_INFEASIBLE: x->infeasible++; break;
		case F_FITS:
			if (!x->has_best || c->e.iteration_ms < x->best.iteration_ms) {
				x->has_best = 1;
				x->best = c->e;
			}
			break;
		}
	}
}

/* The search again with one thing changed, for what would fit: 1 when
 * something fits (recorded as a hint, what in words), else 0.  The batch
 * is o's when set, else the one searched. */
static int hint(ppcc_search_result *out, const ppcc_config *cfg,
		const ppcc_search_options *o, int kind, const char *what)
{
	if (out->n_hints >= (int)(sizeof out->hints / sizeof out->hints[0]))
		return 0;
	ppcc_arena *a = ppcc_arena_new();
	if (!a)
		return 0;
	ppcc_search_options h = *o;
	h.top = 1;
	h.no_hints = 1;
	h.compare = NULL;
	h.n_compare = 0;
	if (h.global_batch <= 0)
		h.global_batch = out->global_batch;
	h.work_spent = out->work;
	ppcc_search_result r;
	ppcc_diag d = {.fn = quiet};
	int err = ppcc_search(&r, a, cfg, &h, &d);
	if (r.work > out->work)
		out->work = r.work;
	int fits = err == 0 && r.n_top > 0;
	if (fits) {
		ppcc_search_hint *x = &out->hints[out->n_hints++];
		snprintf(x->what, sizeof x->what, "%s", what);
		x->kind = kind;
		x->best = r.top[0];
	}
	ppcc_arena_free(a);
	return fits;
}

/* recompute (dim 0) or ZeRO (1), which --fix pinned at from, raised one
 * step at a time to the most: the least change that fits is kept, the
 * cheapest (less recomputed, fewer ZeRO collectives). */
static void hint_ladder(ppcc_search_result *out, const ppcc_config *cfg,
			const ppcc_search_options *o, int dim, int from)
{
	static const char *const names[2][4] = {
		{"no recompute", "selective recompute", "full recompute"},
		{"ZeRO-0", "ZeRO-1", "ZeRO-2", "ZeRO-3"}};
	int to = dim == 0 ? PPCC_RECOMPUTE_FULL : 3;
	char what[96];
	ppcc_search_options h = *o;
	for (int v = from + 1; v <= to; v++) {
		*(dim == 0 ? &h.fix.recompute : &h.fix.zero) = v;
		snprintf(what, sizeof what, "with %s", names[dim][v]);
		if (hint(out, cfg, &h, PPCC_HINT_SETTING, what))
			return;
	}
}

/* A larger device: every group names one preset; the catalogue's
 * devices with more memory, and at least the least any configuration
 * was proved to need, are tried in increasing memory and the first that
 * fits is kept (the cheapest step up).  The swapped device brings its
 * peak, efficiency, memory and bandwidth; the node size and links when
 * the cluster's are the old preset's own (as --devices COUNTxPRESET
 * gives them), else the cluster's stay. */
static void hint_device(ppcc_search_result *out, ppcc_arena *a,
			const ppcc_config *cfg, const ppcc_search_options *o)
{
	const ppcc_cluster *cl = &cfg->cluster;
	const ppcc_device_preset *old = cl->n_groups > 0 ? cl->groups[0].preset
							 : NULL;
	if (!old || o->memory_limit_bytes > 0)
		return;
	const ppcc_device_preset *by[PPCC_MAX_DEVICE_PRESETS];
	int n = ppcc_device_presets_by_memory(by), tried = 0;
	double need = out->least_need_bytes;
	out->no_larger_device = isfinite(need) && need > 0 &&
				by[n - 1]->memory_gib * 1073741824.0 < need;
	for (int i = 0; i < n && tried < 4; i++) {
		const ppcc_device_preset *p = by[i];
		if (p->memory_gib <= old->memory_gib ||
		    (isfinite(need) && need > 0 &&
		     p->memory_gib * 1073741824.0 < need))
			continue;
		ppcc_config c = *cfg;
		if (ppcc_cluster_swap_device(&c.cluster, a, cl, p) < 0)
			return;
		char what[96];
		snprintf(what, sizeof what, "on %d %s (%.4g GiB) in place of "
			 "the %s", cl->devices, p->name, p->memory_gib, old->name);
		tried++;
		if (hint(out, &c, o, PPCC_HINT_DEVICE, what))
			return;
	}
}

/* The largest global batch that fits on these devices, of the batch
 * halved again and again (which keeps the divisors d and b run over):
 * searched from the largest down, the first that fits kept; none
 * searched when the weights, optimizer state and one microbatch's
 * activations, which no batch shrinks, already need more than the
 * devices hold (no_smaller_batch). */
static void hint_batch(ppcc_search_result *out, const ppcc_config *cfg,
		       const ppcc_search_options *o)
{
	double need = out->least_need_bytes;
	if (out->considered > 0 && need > out->memory_bytes) {
		out->no_smaller_batch = 1;
		return;
	}
	ppcc_search_options h = *o;
	char what[96];
	for (long b = out->global_batch / 2; b >= 1; b /= 2) {
		h.global_batch = b;
		snprintf(what, sizeof what, "with a global batch of %ld "
			 "sequences (the largest of %ld/2^k that does)", b,
			 out->global_batch);
		if (hint(out, cfg, &h, PPCC_HINT_BATCH, what))
			return;
	}
}

static void hints(ppcc_search_result *out, ppcc_arena *a,
		  const ppcc_config *cfg, const ppcc_search_options *o)
{
	char what[96];
	ppcc_search_options h = *o;
	/* the smallest device count: every group scaled, the nodes kept */
	const ppcc_cluster *cl = &cfg->cluster;
	for (int k = 2; k <= 8; k *= 2) {
		if ((long)cl->devices * k > (1L << 30))
			break;
		ppcc_device_group *g = ppcc_arena_alloc(a, (size_t)cl->n_groups,
							sizeof *g);
		if (!g)
			return;
		ppcc_config c = *cfg;
		for (int i = 0; i < cl->n_groups; i++) {
			g[i] = cl->groups[i];
			g[i].count *= k;
		}
		c.cluster.groups = g;
		c.cluster.devices = cl->devices * k;
		snprintf(what, sizeof what, "on %d devices", c.cluster.devices);
		if (hint(out, &c, o, PPCC_HINT_DEVICES, what))
			break;
	}
	hint_batch(out, cfg, o);
	/* the settings --fix pinned: what the search did not run over */
	if (cfg->model.transformer && o->fix.recompute >= 0)
		hint_ladder(out, cfg, o, 0, o->fix.recompute);
	if (o->fix.zero >= 0)
		hint_ladder(out, cfg, o, 1, o->fix.zero);
	if (o->fix.micro_batch_size > 1) {
		h.fix.micro_batch_size = 1;
		hint(out, cfg, &h, PPCC_HINT_SETTING,
		     "with micro-batch size 1");
		h = *o;
	}
	if (o->fix.tensor_parallel > 0 || o->fix.stages > 0 ||
	    o->fix.data_parallel > 0 || o->fix.chunks > 0 || o->fix.kind >= 0 ||
	    o->fix.context_parallel > 0) {
		h.fix.tensor_parallel = h.fix.stages = h.fix.data_parallel = 0;
		h.fix.chunks = h.fix.context_parallel = 0;
		h.fix.kind = -1;
		hint(out, cfg, &h, PPCC_HINT_SETTING,
		     "with t, p, d, cp, v and the schedule free");
		h = *o;
	}
	if (!o->allow_idle) {
		h.allow_idle = 1;
		hint(out, cfg, &h, PPCC_HINT_SETTING,
		     "leaving devices idle (--allow-idle)");
		h = *o;
	}
	hint_device(out, a, cfg, o);
}

void ppcc_search_entry_describe(char *buf, size_t size,
				const ppcc_search_entry *e)
{
	static const char *const rec[] = {"none", "selective", "full"};
	char experts[48] = "";
	if (e->etp > 0)
		snprintf(experts, sizeof experts, ", ep %d x etp %d", e->ep,
			 e->etp);
	snprintf(buf, size, "t %d x p %d x d %d x cp %d%s, %s with v %d, b %d "
		 "(m %d), recompute %s, ZeRO-%d", e->t, e->p, e->d, e->cp,
		 experts, ppcc_schedule_kind_name(e->kind), e->v, e->b, e->m,
		 rec[e->recompute < 0 || e->recompute > 2 ? 0 : e->recompute],
		 e->zero);
}

static double gib(double b)
{
	return b / (1024.0 * 1024.0 * 1024.0);
}

/* Why combined-1f1b, Megatron-LM's all-to-all overlap, cannot run with
 * ep, recompute, p and v (each -1: any) into buf (NULL: not said); 0
 * when it may: experts spread, no full recomputation, the overlap on,
 * one chunk on one stage and two or more with a pipeline
 * (config_check.c, ppcc_sched_check). */
static int combined_refused(char *buf, size_t size, const ppcc_config *cfg,
			    int ep, int recompute, int p, int v)
{
	const ppcc_transformer *tf = cfg->model.transformer;
	char why[160];
	if (!tf || tf->moe.experts == 0)
		snprintf(why, sizeof why, "combined-1f1b overlaps the experts' "
			 "all-to-alls, and this model has no experts");
	else if (ep == 1 || tf->moe.experts < 2)
		snprintf(why, sizeof why, "combined-1f1b overlaps the experts' "
			 "all-to-alls, which need expert_parallel of 2 or "
			 "more");
	else if (recompute == PPCC_RECOMPUTE_FULL)
		snprintf(why, sizeof why, "Megatron-LM refuses full "
			 "recomputation with combined-1f1b");
	else if (!ppcc_overlap_moe_a2a(&cfg->pipeline))
		snprintf(why, sizeof why, "combined-1f1b is the overlap of the "
			 "experts' all-to-alls, and overlap.moe_a2a is false%s",
			 cfg->pipeline.overlap.moe_a2a_loc.file ? ""
			 : " (torchtitan's default: it does not run it)");
	else if (p == 1 && v > 1)
		snprintf(why, sizeof why, "combined-1f1b runs one chunk on one "
			 "stage, not --fix chunks=%d", v);
	else if (p > 1 && v == 1)
		snprintf(why, sizeof why, "combined-1f1b runs at least 2 chunks "
			 "a rank with a pipeline, not --fix chunks=1");
	else
		return 0;
	if (buf)
		snprintf(buf, size, "%s", why);
	return 1;
}

/* The most devices a stage has under the --fix settings: t x cp x d
 * of the devices over the fewest stages (idle devices aside). */
static long stage_devices(const ppcc_config *cfg, const ppcc_search_fix *fx)
{
	long n = cfg->cluster.devices;
	return fx->stages > 0 ? n / fx->stages : n;
}

/* Why the settings --fix holds leave no candidate whatever the layout
 * (the rules enumerate_settings and expert_pairs apply), into buf; 0
 * when they may leave one. */
static int fixed_refused(char *buf, size_t size, const ppcc_config *cfg,
			 const ppcc_search_options *o)
{
	const ppcc_search_fix *fx = &o->fix;
	const ppcc_transformer *tf = cfg->model.transformer;
	const ppcc_sched_kind_info *ki = fx->kind >= 0
		? ppcc_sched_kind(fx->kind) : NULL;
	int combined = fx->kind == PPCC_SCHED_COMBINED_1F1B;
	if (fx->chunks > 4)
		snprintf(buf, size, "the search tries 1 to 4 chunks a rank, not "
			 "--fix chunks=%d; plan it with ppcc plan -v %d",
			 fx->chunks, fx->chunks);
	else if (tf && tf->moe.experts > 0 && fx->expert_parallel > 0 &&
		 tf->moe.experts % fx->expert_parallel != 0)
		snprintf(buf, size, "--fix expert_parallel=%d does not divide "
			 "the %d experts", fx->expert_parallel, tf->moe.experts);
	else if (tf && tf->moe.experts > 0 && fx->expert_tensor_parallel > 0 &&
		 tf->moe.ffn_hidden % fx->expert_tensor_parallel != 0)
		snprintf(buf, size, "--fix expert_tensor_parallel=%d does not "
			 "divide the experts' FFN width %d",
			 fx->expert_tensor_parallel, tf->moe.ffn_hidden);
	else if (fx->expert_parallel > 0 && (long)fx->expert_parallel *
		 (fx->expert_tensor_parallel > 0 ? fx->expert_tensor_parallel
		  : 1) > stage_devices(cfg, fx)) {
		int etp = fx->expert_tensor_parallel;
		char e[48] = "", st[96];
		if (etp > 1)
			snprintf(e, sizeof e, " x expert_tensor_parallel=%d",
				 etp);
		if (fx->stages > 0)
			snprintf(st, sizeof st, "%d stages of the %d devices "
				 "have %ld each", fx->stages,
				 cfg->cluster.devices, stage_devices(cfg, fx));
		else
			snprintf(st, sizeof st, "there are %d devices",
				 cfg->cluster.devices);
		snprintf(buf, size, "--fix expert_parallel=%d%s spreads the "
			 "experts over %ld devices of a stage, and %s",
			 fx->expert_parallel, e, (long)fx->expert_parallel *
			 (etp > 0 ? etp : 1), st);
	} else if (!ki)
		return 0;
	else if (ppcc_sched_pipes(fx->kind) > 1)
		snprintf(buf, size, "ppcc cannot plan the %s schedule yet (its "
			 "second pipeline holds a copy of every stage's layers); "
			 "search dualpipe-v, its one-copy form", ki->name);
	else if (fx->chunks > 0 && (fx->chunks < ki->min_chunks ||
				    fx->chunks > ki->max_chunks)) {
		char n[48];
		if (ki->max_chunks == ki->min_chunks)
			snprintf(n, sizeof n, "%d chunk%s", ki->min_chunks,
				 ki->min_chunks == 1 ? "" : "s");
		else if (ki->max_chunks > 64)
			snprintf(n, sizeof n, "at least %d chunks",
				 ki->min_chunks);
		else
			snprintf(n, sizeof n, "%d to %d chunks", ki->min_chunks,
				 ki->max_chunks);
		snprintf(buf, size, "%s runs %s a rank, not --fix chunks=%d",
			 ki->name, n, fx->chunks);
	} else if (fx->stages == 1 && ki->min_chunks > 1 && !combined)
		snprintf(buf, size, "one stage runs one chunk, and %s runs at "
			 "least %d a rank", ki->name, ki->min_chunks);
	else if (combined)
		return combined_refused(buf, size, cfg, fx->expert_parallel
					? fx->expert_parallel : -1,
					fx->recompute, fx->stages
					? fx->stages : -1, fx->chunks
					? fx->chunks : -1);
	else
		return 0;
	return 1;
}

/* Nothing fits: the error, what came closest, and what would fit. */
static void report_none(const ppcc_search_result *r, const ppcc_config *cfg,
			const ppcc_search_options *o, ppcc_diag *d)
{
	ppcc_loc loc = cfg->model.loc.file ? cfg->model.loc
		       : (ppcc_loc){cfg->path, 0, 0};
	ppcc_loc cl = cfg->cluster.loc.file ? cfg->cluster.loc : loc;
	char what[256];
	const ppcc_search_fix *fx = &o->fix;
	int fixed = fx->tensor_parallel > 0 || fx->stages > 0 ||
		    fx->data_parallel > 0 || fx->context_parallel > 0 ||
		    fx->chunks > 0 || fx->micro_batch_size > 0 ||
		    fx->recompute >= 0 || fx->zero >= 0 || fx->kind >= 0 ||
		    fx->expert_parallel > 0 || fx->expert_tensor_parallel > 0;
	if (r->considered == 0 && fixed_refused(what, sizeof what, cfg, o)) {
		ppcc_error(d, &loc, "no configuration fills the %d devices "
			   "with the settings --fix holds: %s",
			   cfg->cluster.devices, what);
	} else if (r->considered == 0) {
		ppcc_error(d, &loc, "no configuration fills the %d devices with "
			   "a global batch of %ld sequences (t x p x d x cp "
			   "must be the devices, d must divide the batch%s)",
			   cfg->cluster.devices, r->global_batch, fixed
			   ? ", and the layout must meet the settings --fix "
			     "holds"
			   : "");
	} else {
		ppcc_error(d, &loc, "no configuration of the %ld considered "
			   "fits the cluster", r->considered);
	}
	if (r->has_closest) {
		ppcc_search_entry_describe(what, sizeof what, &r->closest);
		ppcc_note(d, &cl, "closest: %s, which would fit with %s%.2f GiB "
			  "per device (the devices have %.2f GiB)", what,
			  r->closest_exact ? "" : "at least ",
			  gib(r->closest_need_bytes), gib(r->memory_bytes));
	}
	/* the devices, the batch, then the changes, as hints tried them */
	int more_devices = 0;
	for (int kind = PPCC_HINT_DEVICES; kind <= PPCC_HINT_DEVICE; kind++) {
		for (int i = 0; i < r->n_hints; i++) {
			const ppcc_search_entry *e = &r->hints[i].best;
			if (r->hints[i].kind != kind)
				continue;
			more_devices |= kind == PPCC_HINT_DEVICES;
			ppcc_search_entry_describe(what, sizeof what, e);
			ppcc_note(d, &cl, "it would fit %s: %s; %.1f ms an "
				  "iteration, %.0f tokens/s, peak %.2f GiB per "
				  "device", r->hints[i].what, what,
				  e->iteration_ms, e->tokens_per_s,
				  gib(e->peak_bytes));
		}
		if (kind == PPCC_HINT_DEVICES && r->considered > 0 &&
		    !more_devices)
			ppcc_note(d, &cl, "none fits on up to %d devices either",
				  8 * cfg->cluster.devices);
		if (kind == PPCC_HINT_DEVICE && r->no_larger_device)
			ppcc_note(d, &cl, "no device of the catalogue has the "
				  "%.2f GiB per device that every configuration "
				  "needs", gib(r->least_need_bytes));
		if (kind == PPCC_HINT_BATCH && r->no_smaller_batch)
			ppcc_note(d, &cl, "no smaller global batch fits either: "
				  "the weights, optimizer state and one "
				  "microbatch's activations alone need at least "
				  "%.2f GiB per device",
				  gib(r->least_need_bytes));
	}
}

/* The candidates are evaluated in increasing bound by helper threads
 * while the loop in ppcc_search commits them in that order, each against
 * the threshold the serial loop would give it (the K-th best iteration
 * after the commits before it).  A helper evaluates a candidate under
 * the threshold of the commits before it started, which is at least the
 * one at its commit (the K-th best only falls, and no candidate is
 * committed before those ahead of it).  evaluate's answer depends on the
 * threshold only through the two bounds ppcc_plan_build_pruned compares
 * with it, which it reports (stage_bounds): under the commit's lower
 * threshold A the same evaluation prunes at the first of them above A,
 * with that bound, and is otherwise the helper's (eval_derive).  So
 * every candidate is committed with what the serial loop would have
 * computed for it, without evaluating it again, and the search's
 * answer, counts and families are those of one thread, whatever the
 * number.  While the candidate it commits is still being evaluated, the
 * committing thread evaluates the next one nobody has taken, as a
 * helper would.  The shapes and arenas are each thread's own; the layer
 * sets, the base configuration and the candidates ahead of the commit
 * are only read. */
typedef struct eval_slot {
	cand c;          /* as evaluated */
	int err;
	double need_gib;
	double above;    /* the threshold it was evaluated under */
	double bounds[2]; /* the bounds compared with it (NAN: not reached) */
	int state;       /* 0 not taken, 1 taken, 2 done */
} eval_slot;

typedef struct eval_pool {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	eval_slot *slot;
	const cand *cs;
	size_t live, next, committed, ahead;
	int stop;
	double above;    /* the threshold after the last commit */
	const ppcc_config *base;
	const layer_set *sets;
	const ppcc_budget *budget; /* each plan's */
	int memory;
} eval_pool;

typedef struct eval_worker {
	eval_pool *pool;
	ppcc_arena *work;
	ppcc_plan_shapes *shapes;
	pthread_t thread;
} eval_worker;

static void eval_run(eval_slot *s, const eval_pool *pl, size_t i, double above,
		     ppcc_arena *work, ppcc_plan_shapes *shapes)
{
	s->c = pl->cs[i];
	s->above = above;
	s->need_gib = 0;
	s->bounds[0] = s->bounds[1] = NAN;
	s->err = evaluate(&s->c, work, shapes, pl->base, &pl->sets[s->c.set],
			  pl->budget, above, pl->memory, &s->need_gib,
			  s->bounds);
}

/* Takes the next candidate nobody has taken (pl->mu held, released while
 * it is evaluated): 0 when there is none within pl->ahead of the commit. */
static int eval_take(eval_pool *pl, ppcc_arena *work, ppcc_plan_shapes *shapes)
{
	if (pl->stop || pl->next >= pl->live ||
	    pl->next >= pl->committed + pl->ahead)
		return 0;
	size_t i = pl->next++;
	eval_slot *s = &pl->slot[i];
	double above = pl->above;
	s->state = 1;
	/* a bound above the threshold: the loop stops at it */
	if (pl->cs[i].e.lower_bound_ms > above) {
		s->above = NAN;
	} else {
		pthread_mutex_unlock(&pl->mu);
		eval_run(s, pl, i, above, work, shapes);
		pthread_mutex_lock(&pl->mu);
	}
	s->state = 2;
	pthread_cond_broadcast(&pl->done);
	return 1;
}

static void *eval_thread(void *arg)
{
	eval_worker *w = arg;
	eval_pool *pl = w->pool;
	pthread_mutex_lock(&pl->mu);
	while (!pl->stop)
		if (!eval_take(pl, w->work, w->shapes))
			pthread_cond_wait(&pl->work, &pl->mu);
	pthread_mutex_unlock(&pl->mu);
	return NULL;
}

/* *out: s's evaluation (made under s->above) as it is under above, which
 * is at most s->above. */
static void eval_derive(eval_slot *out, const eval_slot *s,
			const eval_pool *pl, size_t i, double above)
{
	*out = *s;
	if (!(s->above > above))
		return;
	double bound = s->bounds[0] > above ? s->bounds[0]
		       : s->bounds[1] > above ? s->bounds[1] : NAN;
	if (isnan(bound))
		return;
	out->c = pl->cs[i];
	if (bound > out->c.e.lower_bound_ms)
		out->c.e.lower_bound_ms = bound;
	out->err = 1;
	out->need_gib = 0;
	out->above = above;
}

/* Candidate i evaluated under above, into *out: from a helper's
 * evaluation when one took it, else made here with work and shapes. */
static void eval_commit(eval_pool *pl, size_t i, double above,
			ppcc_arena *work, ppcc_plan_shapes *shapes,
			eval_slot *out)
{
	if (!pl->slot) {
		eval_run(out, pl, i, above, work, shapes);
		return;
	}
	eval_slot *s = &pl->slot[i];
	pthread_mutex_lock(&pl->mu);
	pl->committed = i;
	pl->above = above;
	pthread_cond_broadcast(&pl->work);
	while (s->state != 2) {
		if (s->state == 0) {
			/* nobody has taken it: it is the next (pl->next == i) */
			s->state = 1;
			pl->next++;
			pthread_mutex_unlock(&pl->mu);
			eval_run(out, pl, i, above, work, shapes);
			return;
		}
		if (!eval_take(pl, work, shapes))
			pthread_cond_wait(&pl->done, &pl->mu);
	}
	pthread_mutex_unlock(&pl->mu);
	eval_derive(out, s, pl, i, above);
}

/* The helper threads: n of them (0 when threads cannot be had, and the
 * loop then evaluates every candidate itself). */
static int eval_start(eval_pool *pl, eval_worker *ws, int n)
{
	int started = 0;
	if (n <= 0)
		return 0;
	if (pthread_mutex_init(&pl->mu, NULL) != 0)
		return 0;
	if (pthread_cond_init(&pl->work, NULL) != 0) {
		pthread_mutex_destroy(&pl->mu);
		return 0;
	}
	if (pthread_cond_init(&pl->done, NULL) != 0) {
		pthread_cond_destroy(&pl->work);
		pthread_mutex_destroy(&pl->mu);
		return 0;
	}
	for (int k = 0; k < n; k++) {
		ws[k].pool = pl;
		ws[k].work = ppcc_arena_new();
		ws[k].shapes = ppcc_plan_shapes_new(SEARCH_SHAPE_BYTES);
		if (!ws[k].work || !ws[k].shapes ||
		    pthread_create(&ws[k].thread, NULL, eval_thread, &ws[k]) != 0) {
			ppcc_arena_free(ws[k].work);
			ppcc_plan_shapes_free(ws[k].shapes);
			break;
		}
		started++;
	}
	return started;
}

static void eval_stop(eval_pool *pl, eval_worker *ws, int n)
{
	if (!pl->slot)
		return;
	pthread_mutex_lock(&pl->mu);
	pl->stop = 1;
	pthread_cond_broadcast(&pl->work);
	pthread_mutex_unlock(&pl->mu);
	for (int k = 0; k < n; k++) {
		pthread_join(ws[k].thread, NULL);
		ppcc_arena_free(ws[k].work);
		ppcc_plan_shapes_free(ws[k].shapes);
	}
	pthread_cond_destroy(&pl->done);
	pthread_cond_destroy(&pl->work);
	pthread_mutex_destroy(&pl->mu);
	free(pl->slot);
	pl->slot = NULL;
}

/* The helpers a search starts: options.threads - 1, or one less than
 * the processors online, at most SEARCH_THREADS - 1. */
#define SEARCH_THREADS 16

static int search_helpers(const ppcc_search_options *o, size_t live)
{
	long n = o->threads;
	if (n <= 0) {
		n = sysconf(_SC_NPROCESSORS_ONLN);
		if (n < 1)
			n = 1;
	}
	if (n > SEARCH_THREADS)
		n = SEARCH_THREADS;
	if ((size_t)n > live)
		n = (long)live;
	return n > 1 ? (int)n - 1 : 0;
}

/* The work a candidate may cost (ppcc_budget).  Counted as it is
 * enumerated: SEARCH_CONFIG_WORK units or SEARCH_BOUND_WORK a layer and
 * rank, the more (its bounds, its share of the
 * sort, the families) and, unless its plan's budget refuses it at once,
 * its partition cells (n x p x v), returned; *sims: the actions its
 * split search may simulate (PPCC_STEP_ACTIONS, or PPCC_STEP_MIN_SIMS
 * simulations of a larger schedule), SEARCH_CELL_WORK units a cell,
 * SEARCH_LAYER_WORK a layer, SEARCH_ACTION_WORK an action of its
 * schedule and a layer visit of its bound (SEARCH_VISIT_LAYERS), counted
 * when it is planned. */
static int64_t cand_work(int64_t *sims, const ppcc_search_entry *e, int n,
			 const ppcc_budget *b)
{
	ppcc_pipeline pl = {.kind = e->kind, .stages = e->p, .chunks = e->v,
			    .microbatches = e->m};
	int64_t actions = ppcc_plan_action_count(&pl);
	int64_t max_actions = b->max_actions > 0 ? b->max_actions
			      : PPCC_MAX_ACTIONS_DEFAULT;
	int64_t max_cells = b->max_work > 0 ? b->max_work : PPCC_MAX_WORK_DEFAULT;
	int64_t cells = (int64_t)n * e->p * e->v;
	int64_t config = SEARCH_BOUND_WORK * ((int64_t)n + e->p);
	if (config < SEARCH_CONFIG_WORK)
		config = SEARCH_CONFIG_WORK;
	*sims = 0;
	if (actions > max_actions || cells > max_cells)
		return config;
	*sims = PPCC_STEP_MIN_SIMS * actions;
	if (*sims < PPCC_STEP_ACTIONS)
		*sims = PPCC_STEP_ACTIONS;
	*sims += SEARCH_CELL_WORK * cells + SEARCH_LAYER_WORK * (int64_t)n +
		 SEARCH_ACTION_WORK * actions +
		 ppcc_bound_step_max_visits(n, e->p) *
		 (SEARCH_VISIT_LAYERS + n) / SEARCH_VISIT_LAYERS;
	return config + cells;
}

/* The search over its budget, refused before anything is planned: at
 * the layers when partition cells are most of the work, else at the
 * cluster, whose devices make the configurations. */
static void report_over(const ppcc_config *cfg, long considered, int more,
			int64_t work, int64_t cells, int64_t max_work,
			ppcc_diag *d)
{
	ppcc_loc file = {cfg->path, 0, 0};
	const ppcc_loc *loc;
	char why[160];
	if (cells > work - cells) {
		loc = cfg->model.n_layers > 0 && cfg->model.layers[0].loc.file
		      ? &cfg->model.layers[0].loc
		      : cfg->model.loc.file ? &cfg->model.loc : &file;
		snprintf(why, sizeof why, "most of it for the %d layers "
			 "(partition cells, bounds' passes over them); use fewer "
			 "layers or fix the stages or chunks lower",
			 cfg->model.n_layers);
	} else {
		loc = cfg->cluster.loc.file ? &cfg->cluster.loc : &file;
		snprintf(why, sizeof why, "most of it split searches, for the "
			 "%d devices; fix some of them with --fix KEY=VALUE",
			 cfg->cluster.devices);
	}
	ppcc_error(d, loc, "the search's %s%ld configurations need %s%lld "
		   "units of work (partition cells and simulated actions), over "
		   "the budget of %lld: %s, or raise it with --max-work N or "
		   "lift it with --exhaustive", more ? "first " : "", considered,
		   more ? "more than " : "", (long long)work,
		   (long long)max_work, why);
}

/* One search as its phases share it (ppcc_search): what was asked, the
 * work counted so far, the layer sets, the compared configurations, the
 * candidates and what became of them.  cs, unfit, top, work and shapes
 * are run_free's to free; the rest lives in the caller's arena. */
typedef struct search_run {
	const ppcc_config *cfg;
	const ppcc_search_options *o;
	ppcc_search_result *out;
	ppcc_arena *a;
	ppcc_diag *d;
	double t0;
	long B;                  /* the global batch */
	int K;                   /* the configurations kept */
	double R;                /* the fastest group's FLOP/s */
	double cap;              /* a device's bytes less the reserve */
	ppcc_budget plan_budget; /* each configuration's plan */
	int64_t max_work;        /* the whole search's */
	/* the work counted; within: that before the candidate that went
	 * over; cells_total: the part of it that grows with the layers */
	int64_t counted, within, cells_total;
	layer_set *sets;         /* nsets, one per (b, recompute) */
	int nsets, n_layers;
	int cp_list[4], ncp;
	/* the compared configurations; cmp_order: the enumeration order of
	 * the candidate each is, LONG_MAX for one outside the space (ties
	 * rank it after) */
	ppcc_search_compared *cmp;
	layer_set *cmp_sets;
	long *cmp_order;
	int nc;
	families fam;
	/* the n candidates enumerated (ncap allocated); after the static
	 * bounds, the first live of them, in increasing bound */
	cand *cs;
	size_t n, ncap, live;
	long order;
	double *unfit;           /* the bounds of those no partition fits */
	size_t n_unfit;
	double closest_static, closest_sim, least_unsimulated;
	ppcc_config base;        /* cfg, its devices' memory limited */
	cand *top;               /* the ntop best, of K + 1 */
	int ntop;
	/* with a tie band: every candidate that fits, nfits (fitscap
	 * allocated), from which the ties are drawn */
	cand *fits;
	size_t nfits, fitscap;
	ppcc_arena *work;        /* each plan's, reset between them */
	ppcc_plan_shapes *shapes;
} search_run;

/* The threshold a candidate is planned against: the K-th best so far
 * (none with --exhaustive, or before K fit), at least the slowest
 * compared configuration. */
static double threshold(const search_run *r, double cmp_slowest)
{
	double above = !r->o->exhaustive && r->ntop == r->K
		       ? r->top[r->K - 1].e.iteration_ms : INFINITY;
	/* and every one that might tie with the fastest so far */
	double tie = r->ntop > 0 ? r->top[0].e.iteration_ms *
				   (1 + r->o->tie_band) : INFINITY;
	if (above < tie)
		above = tie;
	return above < cmp_slowest ? cmp_slowest : above;
}

/* o->progress told where the search stands: from the next candidate
 * to plan, at, under above (planning: since began; began < 0: still
 * bounding, nothing planned). */
static void progress(const search_run *r, size_t at, double above,
		     double began, int done)
{
	const ppcc_search_options *o = r->o;
	if (!o->progress)
		return;
	const ppcc_search_result *out = r->out;
	double now = now_s();
	ppcc_search_progress p = {
		.considered = (long)r->n, .simulated = out->simulated,
		.pruned = out->pruned_memory + out->pruned_bound,
		.refused = out->invalid, .seconds = now - r->t0,
		.left_s = NAN, .done = done};
	if (began >= 0 && !done) {
		/* the candidates from at on are in increasing bound */
		size_t lo = at, hi = r->live;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (r->cs[mid].e.lower_bound_ms > above)
				hi = mid;
			else
				lo = mid + 1;
		}
		p.left = (long)(lo - at);
		if (at > 0)
			p.left_s = (now - began) / (double)at * (double)p.left;
		/* --time-limit stops it sooner */
		double limit = o->time_limit_s - p.seconds;
		if (o->time_limit_s > 0 && !(p.left_s < limit))
			p.left_s = limit > 0 ? limit : 0;
	}
	o->progress(&p, o->progress_user);
}

static void run_free(search_run *r)
{
	free(r->cs);
	free(r->unfit);
	free(r->top);
	free(r->fits);
	ppcc_arena_free(r->work);
	ppcc_plan_shapes_free(r->shapes);
	r->cs = NULL;
	r->unfit = NULL;
	r->top = NULL;
	r->fits = NULL;
	r->work = NULL;
	r->shapes = NULL;
}

/* The global batch, and a pinned dimension alone larger than the
 * cluster: said at the --fix, not as a search that found nothing. */
static int search_begin(search_run *r)
{
	const ppcc_config *cfg = r->cfg;
	const ppcc_search_options *o = r->o;
	int given;
	r->B = global_batch(cfg, o, &given);
	if (r->B <= 0) {
		ppcc_loc loc = cfg->pipeline.loc.file ? cfg->pipeline.loc
			       : (ppcc_loc){cfg->path, 0, 0};
		ppcc_error(r->d, &loc, "the search needs the global batch: give "
			   "pipeline.global_batch_size or --global-batch");
		return PPCC_EINPUT;
	}
	r->out->global_batch = r->B;
	r->out->global_batch_given = given;
	ppcc_loc cli = {"<command line>", 0, 0};
	const ppcc_transformer *tf = cfg->model.transformer;
	if (ppcc_config_check_recompute_modules(cfg, r->d) < 0)
		return PPCC_EINPUT;
	if (cfg->pipeline.data_parallel_shard_loc.file) {
		ppcc_error(r->d, &cfg->pipeline.data_parallel_shard_loc,
			   "the search shards ZeRO over every data-parallel "
			   "rank of a layout, and does not search HSDP's shard "
			   "groups; leave data_parallel_shard out, and plan "
			   "the winner with it");
		return PPCC_EINPUT;
	}
	/* a model given as layers keeps its micro-batch size and has no
	 * recompute to choose (ppcc(1)) */
	if (!tf && o->fix.micro_batch_size > 0 &&
	    o->fix.micro_batch_size != cfg->model.micro_batch_size) {
		ppcc_error(r->d, &cli, "--fix micro_batch_size=%d: a model "
			   "given as layers keeps its micro-batch size %d",
			   o->fix.micro_batch_size, cfg->model.micro_batch_size);
		return PPCC_EINPUT;
	}
	if (!tf && o->fix.recompute > 0) {
		ppcc_error(r->d, &cli, "--fix recompute=%s: a model given as "
			   "layers has no recompute to choose (none)",
			   o->fix.recompute == PPCC_RECOMPUTE_FULL ? "full"
			   : "selective");
		return PPCC_EINPUT;
	}
	if ((o->fix.expert_parallel > 1 || o->fix.expert_tensor_parallel > 1) &&
	    (!tf || tf->moe.experts == 0)) {
		ppcc_error(r->d, &cli, "--fix expert_%sparallel: expert "
			   "parallelism needs a mixture-of-experts model "
			   "(transformer.moe); this model has none",
			   o->fix.expert_parallel > 1 ? "" : "tensor_");
		return PPCC_EINPUT;
	}
	const struct {
		const char *key;
		int value;
	} pinned[] = {{"tensor_parallel", o->fix.tensor_parallel},
		      {"stages", o->fix.stages},
		      {"data_parallel", o->fix.data_parallel},
		      {"context_parallel", o->fix.context_parallel}};
	long devices_pinned = 1;
	for (size_t k = 0; k < sizeof pinned / sizeof pinned[0]; k++)
		if (pinned[k].value > 0)
			devices_pinned *= pinned[k].value;
	if (devices_pinned <= cfg->cluster.devices)
		return 0;
	char what[160] = "";
	for (size_t k = 0; k < sizeof pinned / sizeof pinned[0]; k++)
		if (pinned[k].value > 0)
			snprintf(what + strlen(what), sizeof what - strlen(what),
				 "%s%s %d", *what ? " x " : "", pinned[k].key,
				 pinned[k].value);
	ppcc_error(r->d, &cli, "--fix: %s exceeds the %d devices (t x p x d "
		   "x cp must be at most the devices); fix fewer",
		   what, cfg->cluster.devices);
	return PPCC_EINPUT;
}

/* Each plan's budget and the whole search's, K, the fastest rate and
 * the memory a device has. */
/* The search's work budget when none is given. */
static int64_t default_work(const ppcc_config *cfg)
{
	const ppcc_transformer *tf = cfg->model.transformer;
	return tf && tf->moe.experts > 0 ? PPCC_SEARCH_WORK_MOE_DEFAULT
					 : PPCC_SEARCH_WORK_DEFAULT;
}

static void search_limits(search_run *r)
{
	const ppcc_search_options *o = r->o;
	const ppcc_cluster *cl = &r->cfg->cluster;
	/* each plan's cells: a quarter of a plan's own default (a search
	 * may plan many), unless the budget is raised or lifted */
	r->plan_budget = (ppcc_budget){o->budget.max_actions,
				       SEARCH_PLAN_CELLS};
	if (o->exhaustive && o->budget.max_work <= 0)
		r->plan_budget.max_work = INT64_MAX;
	else if (o->budget.max_work > SEARCH_PLAN_CELLS)
		r->plan_budget.max_work = o->budget.max_work;
	r->max_work = o->budget.max_work > 0 ? o->budget.max_work
		      : o->exhaustive ? INT64_MAX : default_work(r->cfg);
	r->K = o->top > 0 ? o->top : 10;
	double R = 0, cap = 0;
	for (int g = 0; g < cl->n_groups; g++) {
		double rate = cl->groups[g].tflops * 1e12 *
			      cl->groups[g].efficiency;
		if (rate > R)
			R = rate;
		if (cl->groups[g].memory_bytes > cap)
			cap = cl->groups[g].memory_bytes;
	}
	if (o->memory_limit_bytes > 0)
		cap = o->memory_limit_bytes;
	r->out->memory_bytes = cap;
	r->R = R;
	r->cap = cap - cl->reserved_bytes - o->headroom_bytes;
}

/* The layer sets, one per (b, recompute), expanded before anything is
 * enumerated: each of their layers counts as one planned would. */
static int search_sets(search_run *r)
{
	const ppcc_config *cfg = r->cfg;
	const ppcc_search_options *o = r->o;
	const ppcc_transformer *tf = cfg->model.transformer;
	static const int bs[] = {1, 2, 4, 8};
	int nb = 0, b_list[4], nr = 0, r_list[3];
	for (int i = 0; i < 4; i++)
		if ((o->fix.micro_batch_size <= 0 && (tf || bs[i] == 1)) ||
		    o->fix.micro_batch_size == bs[i])
			b_list[nb++] = bs[i];
	if (o->fix.micro_batch_size > 0 && nb == 0)
		b_list[nb++] = o->fix.micro_batch_size;
	if (!tf) {
		b_list[0] = 1;
		nb = 1;
	}
	for (int rc = 0; rc < 3; rc++)
		if (tf ? (o->fix.recompute < 0 || o->fix.recompute == rc)
		       : rc == 0)
			r_list[nr++] = rc;
	r->nsets = nb * nr;
	int64_t set_layers = (int64_t)r->nsets * (tf ? tf->layers + 2
						  : cfg->model.n_layers);
	if (set_layers * SEARCH_LAYER_WORK > r->max_work - o->work_spent) {
		const ppcc_loc *loc = tf && cfg->model.transformer_loc.file
				      ? &cfg->model.transformer_loc
				      : &cfg->model.loc;
		r->out->work = o->work_spent;
		ppcc_error(r->d, loc, "the search's %d settings of micro-batch "
			   "size and recompute expand %lld layers, %lld units of "
			   "work, over the budget of %lld; fix micro_batch_size "
			   "and recompute with --fix KEY=VALUE, use fewer layers, "
			   "or raise it with --max-work N", r->nsets,
			   (long long)set_layers,
			   (long long)(set_layers * SEARCH_LAYER_WORK),
			   (long long)r->max_work);
		return PPCC_EINPUT;
	}
	r->counted = o->work_spent + set_layers * SEARCH_LAYER_WORK;
	r->sets = ppcc_arena_alloc(r->a, (size_t)r->nsets, sizeof *r->sets);
	if (!r->sets)
		return PPCC_ENOMEM;
	for (int i = 0; i < nb; i++)
		for (int rc = 0; rc < nr; rc++) {
			int err = set_init(&r->sets[i * nr + rc], r->a, cfg,
					   b_list[i], r_list[rc]);
			if (err)
				return err;
		}
	r->n_layers = r->sets[0].n;
	return 0;
}

/* The compared configurations, every one checked before anything is
 * searched. */
static int search_compared(search_run *r)
{
	int nc = r->o->n_compare > 0 ? r->o->n_compare : 0;
	size_t size = (size_t)(nc ? nc : 1);
	r->nc = nc;
	r->cmp = ppcc_arena_alloc(r->a, size, sizeof *r->cmp);
	r->cmp_sets = ppcc_arena_alloc(r->a, size, sizeof *r->cmp_sets);
	r->cmp_order = ppcc_arena_alloc(r->a, size, sizeof *r->cmp_order);
	if (!r->cmp || !r->cmp_sets || !r->cmp_order)
		return PPCC_ENOMEM;
	int bad = 0;
	for (int j = 0; j < nc; j++) {
		int err = compare_prepare(&r->cmp[j], &r->cmp_sets[j], r->a,
					  r->cfg, &r->o->compare[j], r->o, r->B,
					  r->d);
		if (err == PPCC_ENOMEM)
			return err;
		bad |= err != 0;
		r->cmp_order[j] = LONG_MAX;
	}
	return bad ? PPCC_EINPUT : 0;
}

/* The context-parallel sizes, and a family table for every value each
 * dimension may take. */
static int search_families(search_run *r)
{
	const ppcc_config *cfg = r->cfg;
	const ppcc_transformer *tf = cfg->model.transformer;
	if (r->o->fix.context_parallel > 0)
		r->cp_list[r->ncp++] = r->o->fix.context_parallel;
	else if (!tf)
		r->cp_list[r->ncp++] = cfg->pipeline.context_parallel > 0
				       ? cfg->pipeline.context_parallel : 1;
	else
		for (int c = 1; c <= 8; c *= 2)
			if (tf->seq_len % c == 0)
				r->cp_list[r->ncp++] = c;
	int fsize[PPCC_DIM_COUNT] = {
		[PPCC_DIM_T] = cfg->cluster.devices_per_node + 1,
		[PPCC_DIM_P] = r->n_layers + 1,
		[PPCC_DIM_CP] = 9,
		[PPCC_DIM_V] = 5,
		[PPCC_DIM_KIND] = PPCC_SCHED_COUNT,
		[PPCC_DIM_RECOMPUTE] = 3,
		[PPCC_DIM_ZERO] = 4,
		[PPCC_DIM_EP] = tf ? tf->moe.experts + 1 : 0,
		[PPCC_DIM_ETP] = tf && tf->moe.experts > 0
				 ? cfg->cluster.devices_per_node + 1 : 0};
	for (int dim = 0; dim < PPCC_DIM_COUNT; dim++) {
		r->fam.size[dim] = fsize[dim];
		if (fsize[dim] == 0)
			continue;
		r->fam.by[dim] = ppcc_arena_alloc(r->a, (size_t)fsize[dim],
						  sizeof *r->fam.by[dim]);
		if (!r->fam.by[dim])
			return PPCC_ENOMEM;
	}
	return 0;
}

/* Candidate e of layer set si, counted against the whole budget (1 when
 * it goes over), kept with its compute bound and enumeration order. */
static int enumerate_add(search_run *r, const ppcc_search_entry *e, int si)
{
	const ppcc_search_options *o = r->o;
	const layer_set *s = &r->sets[si];
	if (o->admits && !o->admits(e, o->admits_ctx))
		return 0;
	if (r->n == r->ncap) {
		cand *g = realloc(r->cs, 2 * r->ncap * sizeof *r->cs);
		if (!g)
			return PPCC_ENOMEM;
		r->cs = g;
		r->ncap *= 2;
	}
	int64_t sims, w = cand_work(&sims, e, s->n, &r->plan_budget);
	r->within = r->counted;
	r->counted += w;
	/* what grows with the layers */
	r->cells_total += w - SEARCH_CONFIG_WORK;
	if (r->counted > r->max_work)
		return 1;
	cand *c = &r->cs[r->n++];
	memset(c, 0, sizeof *c);
	c->e = *e;
	c->set = si;
	c->order = r->order++;
	c->sims = sims;
	double lb = (double)e->m * s->flops /
		    ((double)e->p * e->t * e->cp * r->R) * 1e3 -
		    (double)e->m * s->n * 1e-9;
	c->e.lower_bound_ms = lb > 0 ? lb : 0;
	family_note(&r->fam, c, F_ENUM);
	for (int j = 0; j < r->nc; j++)
		if (same_settings(&r->cmp[j].e, e)) {
			r->cmp[j].in_space = 1;
			r->cmp_order[j] = c->order;
		}
	return 0;
}

/* A mixture of experts' (ep, etp) on a stage of t x cp x d devices: ep
 * each divisor of the experts, etp each divisor of t (or the one fixed,
 * up to a node) that divides their width, ep x etp dividing the stage's
 * devices; a dense model's one pair, (1, 0).  Returns how many, in out
 * (room for SEARCH_MAX_EXPERT_PAIRS). */
#define SEARCH_MAX_EXPERT_PAIRS 1024
static int expert_pairs(const search_run *r, int t, long width,
			int (*out)[2])
{
	const ppcc_transformer *tf = r->cfg->model.transformer;
	const ppcc_search_fix *fx = &r->o->fix;
	if (!tf || tf->moe.experts == 0) {
		out[0][0] = 1;
		out[0][1] = 0;
		return 1;
	}
	int n = 0, node = r->cfg->cluster.devices_per_node;
	for (int ep = 1; ep <= tf->moe.experts && ep <= width; ep++) {
		if (!divides(ep, tf->moe.experts) ||
		    (fx->expert_parallel > 0 && ep != fx->expert_parallel))
			continue;
		for (int etp = 1; etp <= node && (long)ep * etp <= width; etp++) {
			if (!divides(etp, tf->moe.ffn_hidden) ||
			    !divides((long)ep * etp, width) ||
			    (fx->expert_tensor_parallel > 0
			     ? etp != fx->expert_tensor_parallel
			     : !divides(etp, t)) ||
			    n == SEARCH_MAX_EXPERT_PAIRS)
				continue;
			out[n][0] = ep;
			out[n][1] = etp;
			n++;
		}
	}
	return n;
}

/* Whether the search tries an opt-in kind at e unasked: a kind of
 * overlapped pairs (combined-1f1b) when the trainer the search answers
 * for runs it but not DualPipeV, whose pairs it would tie with
 * (doc/design/combined-1f1b.md); never auto. */
static int opt_in_tried(const ppcc_search_options *o,
			const ppcc_search_entry *e)
{
	if (!ppcc_sched_kind(e->kind)->pairs || !o->admits ||
	    !o->admits(e, o->admits_ctx))
		return 0;
	ppcc_search_entry dv = *e;
	dv.kind = PPCC_SCHED_DUALPIPE_V;
	dv.v = 2;
	return !o->admits(&dv, o->admits_ctx);
}

/* The candidates of one (t, cp, p, d): every v, layer set (b and
 * recompute), ZeRO stage, expert layout and schedule kind, in that
 * order. */
static int enumerate_settings(search_run *r, int t, int cp, int p, int dd)
{
	const ppcc_search_options *o = r->o;
	int pairs[SEARCH_MAX_EXPERT_PAIRS][2];
	int npairs = expert_pairs(r, t, (long)t * cp * dd, pairs);
	for (int v = 1; v <= 4 && (long)p * v <= r->n_layers; v++) {
		if ((o->fix.chunks > 0 && v != o->fix.chunks) || (v > 1 && p == 1))
			continue;
		for (int si = 0; si < r->nsets; si++) {
			const layer_set *s = &r->sets[si];
			if (r->B % ((long)s->b * dd))
				continue;
			long m = r->B / ((long)s->b * dd);
			if (m > PPCC_MAX_COUNT)
				continue;
			for (int z = 0; z <= 3; z++) {
				if (o->fix.zero >= 0 ? z != o->fix.zero
				    : (z > 0 && (long)dd * cp == 1))
					continue;
				for (int x = 0; x < npairs; x++) {
				int ep = pairs[x][0], etp = pairs[x][1];
				/* ZeRO-3 of experts sharded otherwise than
				 * over t: not modelled (config_check.c) */
				if (z == 3 && etp > 0 && (long)ep * etp != t)
					continue;
				for (int k = 0; k < PPCC_SCHED_COUNT; k++) {
					const ppcc_sched_kind_info *ki = ppcc_sched_kind(k);
					if ((o->fix.kind >= 0 && k != o->fix.kind) ||
					    v < ki->min_chunks || v > ki->max_chunks ||
					    ppcc_sched_pipes(k) > 1)
						continue; /* the planner refuses
							     DualPipe (plan.c) */
					if (k == PPCC_SCHED_COMBINED_1F1B &&
					    combined_refused(NULL, 0, r->cfg, ep,
							     s->recompute, p, v))
						continue;
					ppcc_search_entry e = {
						.t = t, .p = p, .d = dd, .cp = cp,
						.v = v, .b = s->b, .m = (int)m,
						.ep = ep, .etp = etp,
						.recompute = s->recompute,
						.zero = z, .kind = k};
					if (ki->opt_in && o->fix.kind != k &&
					    !opt_in_tried(o, &e))
						continue;
					int err = enumerate_add(r, &e, si);
					if (err)
						return err;
				}
				}
			}
		}
	}
	return 0;
}

/* The stages p and data-parallel sizes d of one (t, cp); every d counts
 * a unit of work, whether or not it has candidates. */
static int enumerate_stages(search_run *r, int t, int cp)
{
	const ppcc_search_options *o = r->o;
	int rest = r->cfg->cluster.devices / (t * cp);
	for (int p = 1; p <= rest && p <= r->n_layers; p++) {
		if ((!o->allow_idle && !divides(p, rest)) ||
		    (o->fix.stages > 0 && p != o->fix.stages))
			continue;
		int d_hi = rest / p, d_lo = o->allow_idle ? 1 : d_hi;
		for (int dd = d_hi; dd >= d_lo; dd--) {
			if (++r->counted > r->max_work) {
				r->within = r->counted - 1;
				return 1;
			}
			if ((o->fix.data_parallel > 0 && dd != o->fix.data_parallel) ||
			    r->B % dd)
				continue;
			int err = enumerate_settings(r, t, cp, p, dd);
			if (err)
				return err;
		}
	}
	return 0;
}

/* t divides the node (and the devices, unless they may idle) and, for
 * the transformer shorthand, the heads, kv_heads and FFN; a model given
 * as layers keeps its t. */
static int tensor_fits(const search_run *r, int t)
{
	const ppcc_config *cfg = r->cfg;
	const ppcc_search_options *o = r->o;
	const ppcc_transformer *tf = cfg->model.transformer;
	if (!divides(t, cfg->cluster.devices_per_node) ||
	    (!o->allow_idle && !divides(t, cfg->cluster.devices)))
		return 0;
	if (o->fix.tensor_parallel > 0)
		return t == o->fix.tensor_parallel;
	if (!tf)
		return t == cfg->pipeline.tensor_parallel;
	return divides(t, tf->heads) &&
	       divides(t, tf->kv_heads ? tf->kv_heads : tf->heads) &&
	       divides(t, tf->ffn_hidden ? tf->ffn_hidden : 4L * tf->hidden);
}

/* Every candidate, in the order (t, cp, p, d, v, b, recompute, ZeRO,
 * kind): 1 when the whole budget ran out first. */
static int enumerate(search_run *r)
{
	const ppcc_cluster *cl = &r->cfg->cluster;
	int devices = cl->devices;
	r->ncap = 1024;
	r->cs = malloc(r->ncap * sizeof *r->cs);
	if (!r->cs)
		return PPCC_ENOMEM;
	for (int t = 1; t <= cl->devices_per_node && t <= devices; t++) {
		if (!tensor_fits(r, t))
			continue;
		for (int ci = 0; ci < r->ncp; ci++) {
			int cp = r->cp_list[ci];
			if ((long)t * cp > devices ||
			    (!r->o->allow_idle && !divides((long)t * cp, devices)))
				continue;
			int err = enumerate_stages(r, t, cp);
			if (err)
				return err;
		}
	}
	return 0;
}

/* The enumeration's count: refused when over the whole budget (over),
 * noted when the budget was raised or lifted. */
static int enumerated(search_run *r, int over)
{
	const ppcc_search_options *o = r->o;
	r->out->considered = (long)r->n;
	r->out->work = r->counted;
	if (over) {
		r->out->work = r->within;
		report_over(r->cfg, (long)r->n + 1, 1,
			    r->counted - o->work_spent, r->cells_total,
			    r->max_work, r->d);
		return PPCC_EINPUT;
	}
	if (!o->no_hints && (o->budget.max_work > default_work(r->cfg) ||
			     (o->exhaustive && o->budget.max_work <= 0)))
		ppcc_note(r->d, NULL, "%s the search's work budget of %lld "
			  "units; its %ld configurations count %lld",
			  o->budget.max_work > 0 ? "--max-work raises"
			  : "--exhaustive lifts",
			  (long long)default_work(r->cfg), (long)r->n,
			  (long long)r->counted);
	return 0;
}

/* The memory bound: 1 when c's layers' static bytes and one
 * microbatch's stash fit no partition on its p devices (noted as
 * pruned, with the closest). */
static int static_unfit(search_run *r, const cand *c)
{
	const layer_set *s = &r->sets[c->set];
	double bpp = ppcc_memory_zero_bytes_per_param(NULL, c->e.zero,
						      r->cfg->pipeline.grad_bytes,
						      c->e.d * c->e.cp,
						      r->cfg->pipeline.trainer,
						      c->e.p,
						      ppcc_pipeline_moment_bytes(
							      &r->cfg->pipeline));
	/* a mixture of experts' routed experts: 1/(ep x etp) of them on a
	 * device, ZeRO over the edp ranks that share them (cost/memory.c) */
	double dense = s->params - s->expert_params - s->tp_whole, experts = 0;
	double share = 1.0 / c->e.t;
	if (s->expert_params > 0) {
		ppcc_pipeline pl = r->cfg->pipeline;
		set_pipeline(&pl, &c->e);
		ppcc_memory_experts ex;
		ppcc_memory_experts_of(&ex, &pl, c->e.p);
		experts = s->expert_params * ex.bytes_per_param * ex.share;
		share = ex.share;
	}
	/* precision fp8: Transformer Engine's FP8 copies of those
	 * products' weights (ppcc_memory_fp8_copy_bytes, per device) */
	if (s->fp8_params > 0)
		experts += PPCC_FP8_COPY_BYTES *
			   ((s->fp8_params - s->fp8_experts - s->fp8_whole) /
				    c->e.t + s->fp8_whole +
			    s->fp8_experts * share);
	/* Every rank holds, at its first backward of microbatch 0's last
	 * chunk on it, that microbatch's stash of all its layers (each
	 * chunk's forward came first and none of its backwards has run):
	 * so the ranks' peaks sum to at least the layers' static bytes and
	 * one microbatch's stash.  Less a byte a layer for each:
	 * plan/tables.c rounds each layer to bytes. */
	double stash = (s->stash + (c->e.t - 1) * s->stash_replicated) /
		       ((double)c->e.t * c->e.cp);
	double stat = ppcc_memory_reserve_factor(r->cfg->pipeline.trainer) *
		      ((dense * bpp + s->own_static) / c->e.t +
		       s->tp_whole * bpp + experts + stash) - 2.0 * s->n;
	/* at least those bytes' average on the fullest device */
	double need = stat / c->e.p + r->cfg->cluster.reserved_bytes +
		      r->o->headroom_bytes;
	if (need < r->out->least_need_bytes)
		r->out->least_need_bytes = need;
	if (r->o->exhaustive || !(stat > (double)c->e.p * r->cap))
		return 0;
	r->out->pruned_memory++;
	family_note(&r->fam, c, F_MEMORY);
	if (need < r->closest_static) {
		r->closest_static = need;
		r->out->closest = c->e;
	}
	r->unfit[r->n_unfit++] = c->e.lower_bound_ms;
	return 1;
}

/* The bounds before planning: the candidates the static-memory bound
 * leaves, their compute bound raised by the FLOPs bound, kept in cs in
 * increasing bound (live of them). */
static int bound_static(search_run *r)
{
	size_t n = r->n, n_layers = (size_t)r->n_layers;
	r->unfit = malloc((n ? n : 1) * sizeof *r->unfit);
	if (!r->unfit)
		return PPCC_ENOMEM;
	r->closest_static = INFINITY;
	r->out->least_need_bytes = INFINITY;
	ppcc_stage_info *place = ppcc_arena_alloc(r->a, n_layers + 1,
						  sizeof *place);
	int *ranks = ppcc_arena_alloc(r->a, 3 * (n_layers + 1), sizeof(int));
	bound_memo memo = {NULL, 64};
	while (memo.size < 2 * n)
		memo.size *= 2;
	memo.slot = calloc(memo.size, sizeof *memo.slot);
	if (!place || !ranks || !memo.slot) {
		free(memo.slot);
		return PPCC_ENOMEM;
	}
	size_t live = 0;
	for (size_t i = 0; i < n; i++) {
		cand *c = &r->cs[i];
		if (i % 1024 == 0)
			progress(r, 0, 0, -1, 0);
		if (static_unfit(r, c))
			continue;
		const layer_set *s = &r->sets[c->set];
		double f = memo_bound(&memo, c->set, s, &c->e, place, ranks,
				      ranks + n_layers + 1,
				      ranks + 2 * (n_layers + 1));
		double lb = candidate_bound(r->cfg, s, &c->e, r->R, f);
		if (lb > c->e.lower_bound_ms)
			c->e.lower_bound_ms = lb;
		r->cs[live++] = *c;
	}
	free(memo.slot);
	qsort(r->cs, live, sizeof *r->cs, cmp_lb);
	r->live = live;
	return 0;
}

/* The configuration each candidate is planned from (cfg, with
 * --memory-limit its devices' memory), the top kept, and the planning
 * arena and shapes. */
static int plan_prepare(search_run *r)
{
	const ppcc_cluster *cl = &r->cfg->cluster;
	r->base = *r->cfg;
	if (r->o->memory_limit_bytes > 0) {
		ppcc_device_group *groups = ppcc_arena_alloc(r->a,
			(size_t)cl->n_groups, sizeof *groups);
		if (!groups)
			return PPCC_ENOMEM;
		for (int g = 0; g < cl->n_groups; g++) {
			groups[g] = cl->groups[g];
			groups[g].memory_bytes = r->o->memory_limit_bytes;
		}
		r->base.cluster.groups = groups;
	}
	/* a configuration fits when it leaves the headroom free beyond the
	 * reserve: planned within the memory less both */
	r->base.cluster.headroom_bytes += r->o->headroom_bytes;
	r->top = malloc((size_t)(r->K + 1) * sizeof *r->top);
	r->work = ppcc_arena_new();
	r->shapes = ppcc_plan_shapes_new(SEARCH_SHAPE_BYTES);
	if (!r->top || !r->work || !r->shapes)
		return PPCC_ENOMEM;
	return 0;
}

/* The compared configurations, planned as the candidates are: their
 * figures when they fit, else the memory they would need. */
static int plan_compared(search_run *r)
{
	for (int j = 0; j < r->nc; j++) {
		ppcc_search_compared *x = &r->cmp[j];
		const layer_set *s = &r->cmp_sets[j];
		cand c = {.e = x->e, .order = r->cmp_order[j]};
		double lb = (double)c.e.m * s->flops /
			    ((double)c.e.p * c.e.t * c.e.cp * r->R) * 1e3 -
			    (double)c.e.m * s->n * 1e-9;
		c.e.lower_bound_ms = lb > 0 ? lb : 0;
		double need_gib = 0;
		int err = evaluate(&c, r->work, r->shapes, &r->base, s,
				   &r->plan_budget, INFINITY, 0, &need_gib, NULL);
		x->e = c.e;
		x->e.headroom_bytes += r->o->headroom_bytes;
		if (err == PPCC_EINFEASIBLE) {
			x->need_bytes = fabs(need_gib) * 1024.0 * 1024.0 * 1024.0;
			x->need_exact = need_gib > 0;
			continue;
		}
		if (err == 0) {
			x->fits = 1;
			continue;
		}
		if (err != PPCC_ENOMEM) {
			/* compare_prepare ran the same checks */
			ppcc_error(r->d, &r->o->compare[j].loc, "internal error "
				   "planning the compared configuration");
			err = PPCC_EINTERNAL;
		}
		return err;
	}
	return 0;
}

/* c fits no partition (proved: by the plan's memory bound, without a
 * split search) and would need need_gib per device (< 0: at least
 * that; 0: not known): the closest yet when it needs the least, or as
 * little and is exact where the closest is not. */
static void closest_note(search_run *r, const cand *c, double need_gib,
			 int proved)
{
	ppcc_search_result *out = r->out;
	double need = fabs(need_gib) * 1024.0 * 1024.0 * 1024.0;
	int exact = !proved && need_gib > 0;
	if (need_gib == 0 || !(need < r->closest_sim ||
	    (need == r->closest_sim && exact && !out->closest_exact)))
		return;
	r->closest_sim = need;
	out->closest = c->e;
	out->closest_need_bytes = need;
	out->has_closest = 1;
	out->closest_exact = exact;
}

/* c fits: it ranks over the compared configurations it beats, and into
 * the sorted top when among the K best. */
static void top_insert(search_run *r, const cand *c)
{
	for (int j = 0; j < r->nc; j++)
		if (r->cmp[j].fits && cmp_rank(&c->e, c->order, &r->cmp[j].e,
					       r->cmp_order[j]) < 0)
			r->cmp[j].rank++;
	cand *top = r->top;
	int at = r->ntop, K = r->K;
	while (at > 0 && cmp_rank(&c->e, c->order, &top[at - 1].e,
				  top[at - 1].order) < 0)
		at--;
	if (at < K) {
		int last = r->ntop < K ? r->ntop : K - 1;
		memmove(&top[at + 1], &top[at],
			(size_t)(last - at) * sizeof *top);
		top[at] = *c;
		if (r->ntop < K)
			r->ntop++;
	}
}

/* What became of candidate c, planned with answer err (evaluate's):
 * counted, in its families and the closest; an error that ends the
 * search returned. */
static int note_evaluated(search_run *r, const cand *c, int err,
			  double need_gib)
{
	ppcc_search_result *out = r->out;
	switch (err) {
	case 2: /* no split fits, proved without searching one */
		out->pruned_memory++;
		out->memory_proved++;
		family_note(&r->fam, c, F_MEMORY);
		r->unfit[r->n_unfit++] = c->e.lower_bound_ms;
		closest_note(r, c, need_gib, 1);
		return 0;
	case 1: /* the plan's step bound is above the K-th best */
		out->pruned_bound++;
		family_note(&r->fam, c, F_BOUND);
		if (c->e.lower_bound_ms < r->least_unsimulated)
			r->least_unsimulated = c->e.lower_bound_ms;
		return 0;
	case PPCC_ENOMEM:
		return err;
	case PPCC_EINTERNAL:
		ppcc_error(r->d, NULL, "internal error planning t %d p %d v %d",
			   c->e.t, c->e.p, c->e.v);
		return err;
	case PPCC_EINPUT:
		out->invalid++;
		family_note(&r->fam, c, F_INVALID);
		return 0;
	}
	out->simulated++;
	if (err == PPCC_EINFEASIBLE) {
		out->infeasible++;
		family_note(&r->fam, c, F_INFEASIBLE);
		r->unfit[r->n_unfit++] = c->e.lower_bound_ms;
		closest_note(r, c, need_gib, 0);
		return 0;
	}
	family_note(&r->fam, c, F_FITS);
	cand fit = *c;
	fit.e.headroom_bytes += r->o->headroom_bytes;
	top_insert(r, &fit);
	if (r->o->tie_band > 0) {
		if (r->nfits == r->fitscap) {
			size_t cap = r->fitscap ? 2 * r->fitscap : 64;
			cand *grown = realloc(r->fits, cap * sizeof *grown);
			if (!grown)
				return PPCC_ENOMEM;
			r->fits = grown;
			r->fitscap = cap;
		}
		r->fits[r->nfits++] = fit;
	}
	return 0;
}

/* The search over its budget while planning, refused at the cluster:
 * stopped at the stop-th of the live configurations, needed counted. */
static void report_needed(const search_run *r, size_t stop, int64_t needed)
{
	const ppcc_config *cfg = r->cfg;
	ppcc_loc at = cfg->cluster.loc.file ? cfg->cluster.loc
		      : (ppcc_loc){cfg->path, 0, 0};
	ppcc_error(r->d, &at, "the search stopped at its %zu-th of %zu "
		   "configurations to plan: their split searches count "
		   "%lld units of work with the enumeration, over the "
		   "budget of %lld; fix some of them with --fix KEY=VALUE, "
		   "raise it with --max-work N, lift it with --exhaustive, "
		   "or bound its time with --time-limit S", stop, r->live,
		   (long long)needed, (long long)r->max_work);
}

/* e ties with the fastest (the first of the top): its iteration is
 * less than the tie band above the fastest's. */
static int ties_fastest(const search_run *r, const ppcc_search_entry *e)
{
	return r->o->tie_band > 0 &&
	       e->iteration_ms < r->top[0].e.iteration_ms * (1 + r->o->tie_band);
}

/* Ties: the most headroom first, then as cmp_rank. */
static int cmp_tie(const void *pa, const void *pb)
{
	const cand *a = pa, *b = pb;
	if (a->e.headroom_bytes != b->e.headroom_bytes)
		return a->e.headroom_bytes > b->e.headroom_bytes ? -1 : 1;
	return cmp_rank(&a->e, a->order, &b->e, b->order);
}

/* Plans the live candidates in increasing bound, each against the K-th
 * best so far (and the slowest compared configuration, for their
 * ranks), until a bound is above it; *stop: the first not committed.
 * Each planned candidate's split search is counted in commit order, so
 * a refusal falls at the same candidate on any number of threads. */
static int simulate(search_run *r, size_t *stop)
{
	const ppcc_search_options *o = r->o;
	double cmp_slowest = 0;
	for (int j = 0; j < r->nc; j++)
		if (r->cmp[j].fits && r->cmp[j].e.iteration_ms > cmp_slowest)
			cmp_slowest = r->cmp[j].e.iteration_ms;
	int64_t needed = 0; /* over the budget: the work counted with it */
	size_t i, live = r->live;
	eval_pool pool = {.cs = r->cs, .live = live, .base = &r->base,
			  .sets = r->sets, .budget = &r->plan_budget,
			  .memory = !o->exhaustive, .above = INFINITY};
	eval_worker helpers[SEARCH_THREADS];
	int n_helpers = search_helpers(o, live);
	if (n_helpers > 0 &&
	    !(pool.slot = calloc(live, sizeof *pool.slot)))
		n_helpers = 0;
	pool.ahead = 2 * (size_t)n_helpers + 1;
	if (pool.slot && (n_helpers = eval_start(&pool, helpers, n_helpers)) == 0) {
		free(pool.slot);
		pool.slot = NULL;
	}
	int err = 0;
	double began = now_s();
	for (i = 0; i < live; i++) {
		cand *c = &r->cs[i];
		double above = threshold(r, cmp_slowest);
		if (c->e.lower_bound_ms > above)
			break;
		if (o->time_limit_s > 0 && now_s() - r->t0 > o->time_limit_s) {
			r->out->stopped_early = 1;
			r->out->not_simulated = (long)(live - i);
			break;
		}
		eval_slot done;
		eval_commit(&pool, i, above, r->work, r->shapes, &done);
		*c = done.c;
		/* the split search it ran, at most, counted in commit order */
		if (done.err == 0 || done.err == PPCC_EINFEASIBLE) {
			if (r->counted > r->max_work - c->sims &&
			    !(o->time_limit_s > 0)) {
				needed = r->counted + c->sims - o->work_spent;
				i++;
				break;
			}
			r->counted += c->sims;
		}
		if ((err = note_evaluated(r, c, done.err, done.need_gib)) < 0)
			break;
		progress(r, i + 1, threshold(r, cmp_slowest), began, 0);
	}
	eval_stop(&pool, helpers, n_helpers);
	if (err < 0)
		return err;
	ppcc_arena_free(r->work);
	ppcc_plan_shapes_free(r->shapes);
	r->work = NULL;
	r->shapes = NULL;
	r->out->work = r->counted;
	*stop = i;
	if (needed) {
		report_needed(r, i, needed);
		return PPCC_EINPUT;
	}
	return 0;
}

/* The candidates not planned, from stop on (in increasing bound): pruned
 * by bound unless the time limit stopped the search; the compared
 * configurations' ranks, exact unless one not simulated has a bound at
 * or under its iteration (and so might be faster too). */
static void rank_rest(search_run *r, size_t stop)
{
	ppcc_search_result *out = r->out;
	if (!out->stopped_early)
		out->pruned_bound += (long)(r->live - stop);
	if (stop < r->live && r->cs[stop].e.lower_bound_ms < r->least_unsimulated)
		r->least_unsimulated = r->cs[stop].e.lower_bound_ms;
	for (int j = 0; j < r->nc; j++) {
		r->cmp[j].rank++;
		r->cmp[j].rank_exact = r->cmp[j].fits &&
				       !(r->least_unsimulated <= r->cmp[j].e.iteration_ms);
	}
	/* one that ties with the fastest ranks among the ties, by headroom
	 * (every tie was simulated); the others rank after all the ties,
	 * which are all faster, as counted */
	for (int j = 0; j < r->nc && r->ntop > 0; j++) {
		if (!r->cmp[j].fits || !ties_fastest(r, &r->cmp[j].e))
			continue;
		cand x = {.e = r->cmp[j].e, .order = r->cmp_order[j]};
		r->cmp[j].rank = 1;
		for (size_t i = 0; i < r->nfits; i++)
			r->cmp[j].rank += ties_fastest(r, &r->fits[i].e) &&
					  cmp_tie(&r->fits[i], &x) < 0;
	}
	out->compared = r->cmp;
	out->n_compared = r->nc;
	for (size_t i = stop; i < r->live; i++)
		family_note(&r->fam, &r->cs[i], F_BOUND);
	if (!out->has_closest && !isinf(r->closest_static)) {
		out->has_closest = 1;
		out->closest_need_bytes = r->closest_static;
	}
}

/* The ties with the fastest, in r->fits (every configuration within the
 * band was simulated: simulate's threshold), sorted into top, at most
 * ntop of them: how many written; out->ties counts them all. */
static int rank_ties(search_run *r, ppcc_search_entry *top)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nfits; i++)
		if (ties_fastest(r, &r->fits[i].e))
			r->fits[n++] = r->fits[i];
	r->out->ties = (long)n;
	if (n > 1)
		qsort(r->fits, n, sizeof *r->fits, cmp_tie);
	int k = 0;
	for (size_t i = 0; i < n && k < r->ntop; i++)
		top[k++] = r->fits[i].e;
	return k;
}

/* The result: the top, how many unfit had bounds under the best, and
 * the families, by dimension and value. */
static int assemble(search_run *r)
{
	ppcc_search_result *out = r->out;
	int ntop = r->ntop;
	out->top = ppcc_arena_alloc(r->a, (size_t)(ntop ? ntop : 1),
				    sizeof *out->top);
	if (!out->top)
		return PPCC_ENOMEM;
	int at = ntop ? rank_ties(r, out->top) : 0;
	for (int j = 0; j < ntop && at < ntop; j++)
		if (!ties_fastest(r, &r->top[j].e))
			out->top[at++] = r->top[j].e;
	out->n_top = ntop;
	if (ntop)
		out->fastest = r->top[0].e;
	for (size_t j = 0; ntop && j < r->n_unfit; j++)
		out->faster_unfit += r->unfit[j] < out->fastest.iteration_ms;
	const families *fam = &r->fam;
	int nf = 0;
	for (int dim = 0; dim < PPCC_DIM_COUNT; dim++)
		for (int v = 0; v < fam->size[dim]; v++)
			nf += fam->by[dim][v].enumerated > 0;
	out->families = ppcc_arena_alloc(r->a, (size_t)(nf ? nf : 1),
					 sizeof *out->families);
	if (!out->families)
		return PPCC_ENOMEM;
	for (int dim = 0; dim < PPCC_DIM_COUNT; dim++)
		for (int v = 0; v < fam->size[dim]; v++)
			if (fam->by[dim][v].enumerated > 0)
				out->families[out->n_families++] = fam->by[dim][v];
	return 0;
}

/* The phases in order: each returns 0 to go on, else the search's
 * answer, its errors reported. */
static int search_phases(search_run *r)
{
	int err;
	if ((err = search_begin(r)) != 0)
		return err;
	search_limits(r);
	if ((err = search_sets(r)) != 0 || (err = search_compared(r)) != 0 ||
	    (err = search_families(r)) != 0)
		return err;
	if ((err = enumerate(r)) < 0 || (err = enumerated(r, err)) != 0)
		return err;
	size_t stop;
	if ((err = bound_static(r)) != 0 || (err = plan_prepare(r)) != 0 ||
	    (err = plan_compared(r)) != 0 || (err = simulate(r, &stop)) != 0)
		return err;
	rank_rest(r, stop);
	return assemble(r);
}

int ppcc_search(ppcc_search_result *out, ppcc_arena *a,
		const ppcc_config *cfg, const ppcc_search_options *o,
		ppcc_diag *d)
{
	search_run r = {.cfg = cfg, .o = o, .out = out, .a = a, .d = d,
			.t0 = now_s(), .closest_sim = INFINITY,
			.least_unsimulated = INFINITY};
	memset(out, 0, sizeof *out);
	int err = search_phases(&r);
	progress(&r, 0, 0, -1, 1);
	run_free(&r);
	if (err)
		return err;
	if (r.ntop == 0 && out->stopped_early) {
		ppcc_error(d, NULL, "--time-limit: stopped after %g s with none "
			   "of the %ld configurations simulated so far fitting; "
			   "give it longer", o->time_limit_s, out->simulated);
		return PPCC_EINFEASIBLE;
	}
	if (r.ntop == 0) {
		if (!o->no_hints)
			hints(out, a, cfg, o);
		out->seconds = now_s() - r.t0;
		report_none(out, cfg, o, d);
		return PPCC_EINFEASIBLE;
	}
	out->seconds = now_s() - r.t0;
	return 0;
}
