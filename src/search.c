/*
 * search.c - the configuration to train with: every (t, p, d, v, b, m,
 * recompute, ZeRO, schedule kind) that fills the cluster, ranked by the
 * training iteration ppcc_plan_build estimates for it (the same figures
 * `ppcc plan` prints for that configuration).
 *
 * The space.  t: the divisors of devices_per_node that divide the
 * devices, heads, kv_heads and ffn_hidden (a model given as layers keeps
 * its t); cp: the configuration's (not enumerated); p: the divisors of
 * devices / (t cp) up to the layers; d = devices / (t p cp); v 1..4 with
 * p v <= layers for every kind in the schedule table (ppcc_config_check
 * refuses the combinations a kind does not take); b in 1, 2, 4, 8
 * dividing B / d, m = B / (b d); recompute none, selective, full (the
 * transformer shorthand only); ZeRO 0..3 when d cp > 1, else 0.  Each is
 * narrowed by --fix.  Layers are expanded once per (b, recompute), the
 * only settings their costs depend on; every other setting reuses them.
 *
 * Pruning cannot drop a configuration of the top K.  For each candidate
 * two bounds come from the expanded layers alone:
 *
 *   - compute: every stage's time per microbatch is at least its layers'
 *     (fwd_flops + bwd_flops) / (t cp R), R the fastest device group's
 *     tflops x efficiency (plan.c adds only non-negative terms: the
 *     collectives, kernels at memory bandwidth, p2p), so the p ranks'
 *     busy time sums to at least m F / (t cp R), F the FLOPs of all
 *     layers; the step is at least the busiest rank's busy time, at least
 *     the average, and the iteration at least the step:
 *       iteration_ms >= LB = m F / (p t cp R) - m n 1e-9
 *     (the last term allows for plan.c rounding each layer's time to the
 *     picosecond);
 *   - memory: the stages' static bytes per device (params x bytes per
 *     parameter / t) sum to those of all layers, and each stage must fit
 *     its cap (at most the largest device's memory less the reserve, its
 *     rank's share with v chunks), so a candidate whose layers' static
 *     bytes exceed p x that cap fits no partition.
 *
 * Candidates are simulated in increasing LB; once K have been simulated
 * and fit, a candidate whose LB exceeds the K-th best iteration is not
 * simulated, nor is any after it (their LBs are larger still): its exact
 * iteration is at least its LB, above K configurations already found.
 * The memory bound drops only configurations no partition fits.
 * Ties are ranked by iteration, then tokens/s, then the enumeration order
 * (t, p, v, b, recompute, ZeRO, kind), so the ranking is deterministic.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ppcc.h"

static const ppcc_loc search_loc = {"<search>", 0, 0};

typedef struct layer_set {
	int b, recompute;
	ppcc_layer *layers;
	int n;
	ppcc_transformer *tf;
	double flops;      /* sum of fwd + bwd FLOPs per microbatch */
	double params;     /* layers without their own bytes per parameter */
	double own_static; /* params x bytes_per_param of those with */
} layer_set;

typedef struct cand {
	ppcc_search_entry e;
	int set;     /* layer_set index */
	long order;  /* enumeration order */
} cand;

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

static int cmp_lb(const void *pa, const void *pb)
{
	const cand *a = pa, *b = pb;
	if (a->e.lower_bound_ms != b->e.lower_bound_ms)
		return a->e.lower_bound_ms < b->e.lower_bound_ms ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
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

static void quiet(ppcc_severity sev, const ppcc_loc *loc, const char *msg,
		  void *user)
{
	(void)sev, (void)loc, (void)msg, (void)user;
}

int ppcc_search_config(ppcc_config *out, ppcc_arena *a,
		       const ppcc_config *base, const ppcc_search_entry *e)
{
	*out = *base;
	ppcc_pipeline *pl = &out->pipeline;
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
	pl->kind_loc = pl->stages_loc = pl->microbatches_loc = pl->chunks_loc =
		pl->tensor_parallel_loc = pl->data_parallel_loc =
		pl->context_parallel_loc = pl->global_batch_size_loc =
		pl->zero_loc = search_loc;
	pl->group_size_loc = (ppcc_loc){0};
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
	for (int i = 0; i < s->n; i++) {
		const ppcc_layer *l = &s->layers[i];
		s->flops += l->fwd_flops + l->bwd_flops;
		if (l->bytes_per_param > 0)
			s->own_static += l->params * l->bytes_per_param;
		else
			s->params += l->params;
	}
	return 0;
}

/* One candidate planned as ppcc plan would plan it. */
static int evaluate(cand *c, const ppcc_config *base, const layer_set *set)
{
	ppcc_arena *a = ppcc_arena_new();
	if (!a)
		return PPCC_ENOMEM;
	ppcc_config cfg = *base;
	ppcc_pipeline *pl = &cfg.pipeline;
	const ppcc_search_entry *e = &c->e;
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
	pl->kind_loc = pl->stages_loc = pl->microbatches_loc = pl->chunks_loc =
		pl->tensor_parallel_loc = pl->data_parallel_loc =
		pl->context_parallel_loc = pl->global_batch_size_loc =
		pl->zero_loc = search_loc;
	pl->group_size_loc = (ppcc_loc){0};
	cfg.model.layers = set->layers;
	cfg.model.n_layers = set->n;
	if (set->tf) {
		cfg.model.transformer = set->tf;
		cfg.model.micro_batch_size = set->b;
	}
	ppcc_diag d = {.fn = quiet};
	ppcc_plan plan;
	int err = ppcc_config_check(&cfg, &d);
	if (err == 0)
		err = ppcc_plan_budget_check(&cfg, PPCC_FMT_TEXT, 0, &d);
	if (err == 0)
		err = ppcc_plan_build(&plan, a, &cfg, &d);
	if (err == 0 && !plan.best.iteration)
		err = PPCC_EINTERNAL;
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
	}
	ppcc_arena_free(a);
	return err;
}

int ppcc_search(ppcc_search_result *out, ppcc_arena *a,
		const ppcc_config *cfg, const ppcc_search_options *o,
		ppcc_diag *d)
{
	double t0 = now_s();
	memset(out, 0, sizeof *out);
	const ppcc_cluster *cl = &cfg->cluster;
	const ppcc_transformer *tf = cfg->model.transformer;
	long B = o->global_batch > 0 ? o->global_batch
				     : cfg->pipeline.global_batch_size;
	ppcc_loc cmd = {"<command line>", 0, 0};
	if (B <= 0) {
		ppcc_loc loc = cfg->pipeline.loc.file ? cfg->pipeline.loc
			       : (ppcc_loc){cfg->path, 0, 0};
		ppcc_error(d, &loc, "the search needs the global batch: give "
			   "pipeline.global_batch_size or --global-batch");
		return PPCC_EINPUT;
	}
	int K = o->top > 0 ? o->top : 10;
	int devices = cl->devices;
	int cp = o->fix.context_parallel > 0 ? o->fix.context_parallel
	       : cfg->pipeline.context_parallel > 0 ? cfg->pipeline.context_parallel : 1;
	double R = 0, cap = 0;
	for (int g = 0; g < cl->n_groups; g++) {
		double r = cl->groups[g].tflops * 1e12 * cl->groups[g].efficiency;
		if (r > R)
			R = r;
		if (cl->groups[g].memory_bytes > cap)
			cap = cl->groups[g].memory_bytes;
	}
	cap -= cl->reserved_bytes;

	/* the layer sets, one per (b, recompute) */
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
	for (int r = 0; r < 3; r++)
		if (tf ? (o->fix.recompute < 0 || o->fix.recompute == r)
		       : r == 0)
			r_list[nr++] = r;
	int nsets = nb * nr;
	layer_set *sets = ppcc_arena_alloc(a, (size_t)nsets, sizeof *sets);
	if (!sets)
		return PPCC_ENOMEM;
	for (int i = 0; i < nb; i++)
		for (int r = 0; r < nr; r++) {
			int err = set_init(&sets[i * nr + r], a, cfg, b_list[i],
					   r_list[r]);
			if (err)
				return err;
		}
	int n_layers = sets[0].n;

	/* enumerate */
	size_t ncap = 1024, n = 0;
	cand *cs = malloc(ncap * sizeof *cs);
	if (!cs)
		return PPCC_ENOMEM;
	long order = 0;
	for (int t = 1; t <= cl->devices_per_node && t <= devices; t++) {
		if (!divides(t, cl->devices_per_node) || !divides(t, devices))
			continue;
		if (o->fix.tensor_parallel > 0 ? t != o->fix.tensor_parallel
		    : tf ? (!divides(t, tf->heads) ||
			    !divides(t, tf->kv_heads ? tf->kv_heads : tf->heads) ||
			    !divides(t, tf->ffn_hidden ? tf->ffn_hidden : 4L * tf->hidden))
			 : t != cfg->pipeline.tensor_parallel)
			continue;
		if (!divides((long)t * cp, devices))
			continue;
		int rest = devices / (t * cp);
		for (int p = 1; p <= rest && p <= n_layers; p++) {
			if (!divides(p, rest) ||
			    (o->fix.stages > 0 && p != o->fix.stages))
				continue;
			int dd = rest / p;
			if (o->fix.data_parallel > 0 && dd != o->fix.data_parallel)
				continue;
			for (int v = 1; v <= 4 && (long)p * v <= n_layers; v++) {
				if (o->fix.chunks > 0 && v != o->fix.chunks)
					continue;
				if (v > 1 && p == 1)
					continue;
				for (int si = 0; si < nsets; si++) {
					const layer_set *s = &sets[si];
					if (B % ((long)s->b * dd))
						continue;
					long m = B / ((long)s->b * dd);
					if (m > PPCC_MAX_COUNT)
						continue;
					for (int z = 0; z <= 3; z++) {
						if (o->fix.zero >= 0 ? z != o->fix.zero
						    : (z > 0 && (long)dd * cp == 1))
							continue;
						for (int k = 0; k < PPCC_SCHED_COUNT; k++) {
							if (o->fix.kind >= 0 && k != o->fix.kind)
								continue;
							if (n == ncap) {
								cand *g = realloc(cs, 2 * ncap * sizeof *cs);
								if (!g) {
									free(cs);
									return PPCC_ENOMEM;
								}
								cs = g;
								ncap *= 2;
							}
							cand *c = &cs[n++];
							memset(c, 0, sizeof *c);
							c->e = (ppcc_search_entry){
								.t = t, .p = p, .d = dd, .cp = cp,
								.v = v, .b = s->b, .m = (int)m,
								.recompute = s->recompute,
								.zero = z, .kind = k};
							c->set = si;
							c->order = order++;
							double lb = (double)m * s->flops /
								    ((double)p * t * cp * R) * 1e3 -
								    (double)m * s->n * 1e-9;
							c->e.lower_bound_ms = lb > 0 ? lb : 0;
						}
					}
				}
			}
		}
	}
	out->considered = (long)n;
	(void)cmd;

	/* the static-memory bound */
	size_t live = 0;
	for (size_t i = 0; i < n; i++) {
		cand *c = &cs[i];
		const layer_set *s = &sets[c->set];
		double bpp = ppcc_zero_bytes_per_param(NULL, c->e.zero,
						       cfg->pipeline.grad_bytes,
						       c->e.d * c->e.cp);
		/* less a byte a layer: plan.c rounds each layer to bytes */
		double stat = (s->params * bpp + s->own_static) / c->e.t - s->n;
		double limit = o->memory_limit_bytes > 0
			       ? o->memory_limit_bytes - cl->reserved_bytes : cap;
		if (!o->exhaustive && stat > (double)c->e.p * limit) {
			out->pruned_memory++;
			continue;
		}
		cs[live++] = *c;
	}
	qsort(cs, live, sizeof *cs, cmp_lb);

	ppcc_config base = *cfg;
	ppcc_device_group *groups = NULL;
	if (o->memory_limit_bytes > 0) {
		groups = ppcc_arena_alloc(a, (size_t)cl->n_groups, sizeof *groups);
		if (!groups) {
			free(cs);
			return PPCC_ENOMEM;
		}
		for (int g = 0; g < cl->n_groups; g++) {
			groups[g] = cl->groups[g];
			groups[g].memory_bytes = o->memory_limit_bytes;
		}
		base.cluster.groups = groups;
	}

	/* simulate in increasing bound; keep the K best */
	cand *top = malloc((size_t)(K + 1) * sizeof *top);
	if (!top) {
		free(cs);
		return PPCC_ENOMEM;
	}
	int ntop = 0;
	for (size_t i = 0; i < live; i++) {
		cand *c = &cs[i];
		if (!o->exhaustive && ntop == K &&
		    c->e.lower_bound_ms > top[K - 1].e.iteration_ms) {
			out->pruned_bound += (long)(live - i);
			break;
		}
		int err = evaluate(c, &base, &sets[c->set]);
		if (err == PPCC_ENOMEM || err == PPCC_EINTERNAL) {
			free(cs);
			free(top);
			if (err == PPCC_EINTERNAL)
				ppcc_error(d, NULL, "internal error planning t %d "
					   "p %d v %d", c->e.t, c->e.p, c->e.v);
			return err;
		}
		if (err == PPCC_EINPUT) {
			out->invalid++;
			continue;
		}
		out->simulated++;
		if (err == PPCC_EINFEASIBLE) {
			out->infeasible++;
			continue;
		}
		/* insert into the sorted top */
		int at = ntop;
		while (at > 0 && cmp_rank(&c->e, c->order, &top[at - 1].e,
					  top[at - 1].order) < 0)
			at--;
		if (at < K) {
			int last = ntop < K ? ntop : K - 1;
			memmove(&top[at + 1], &top[at],
				(size_t)(last - at) * sizeof *top);
			top[at] = *c;
			if (ntop < K)
				ntop++;
		}
	}
	free(cs);
	out->top = ppcc_arena_alloc(a, (size_t)(ntop ? ntop : 1),
				    sizeof *out->top);
	if (!out->top) {
		free(top);
		return PPCC_ENOMEM;
	}
	for (int i = 0; i < ntop; i++)
		out->top[i] = top[i].e;
	out->n_top = ntop;
	out->global_batch = B;
	free(top);
	out->seconds = now_s() - t0;
	if (ntop == 0) {
		ppcc_loc loc = cfg->model.loc.file ? cfg->model.loc
			       : (ppcc_loc){cfg->path, 0, 0};
		ppcc_error(d, &loc, "no configuration of the %ld considered "
			   "fits the cluster", out->considered);
		return PPCC_EINFEASIBLE;
	}
	return 0;
}
