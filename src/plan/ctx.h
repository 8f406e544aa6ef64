/*
 * ctx.h - what the files of src/plan/ share while one plan is built:
 * the plan's cost tables (ppcc_plan_ctx), the search's thresholds
 * (ppcc_plan_lean), the rounding to picoseconds and bytes, and the
 * functions each file gives the others.  Private to src/plan/: nothing
 * outside it includes this header.
 *
 * A ppcc_plan_ctx lives on the stack of one build (plan.c's driver,
 * ppcc_plan_split, ppcc_plan_memory_bound); its arrays are in the plan's
 * arena, and every function below that takes one reads the tables that
 * ppcc_plan_setup filled and writes only what it says.  The files:
 * tables.c the cost tables and a stage's costs; shape.c the search's
 * shape cache; bounds.c the lower bounds; variant.c ppcc's split
 * scheduled and simulated; baseline.c the uniform split; nofit.c the
 * reports when nothing fits; auto.c the auto kind; plan.c the driver
 * and the entry points of plan.h.
 */
#ifndef PPCC_PLAN_CTX_H
#define PPCC_PLAN_CTX_H

#include <math.h>
#include <stdint.h>

#include "ppcc.h"

#define PS_PER_S 1e12

typedef struct ppcc_plan_ctx {
	const ppcc_config *cfg;
	ppcc_arena *a;
	ppcc_diag *d;
	int n, p, v, S, t, m, kind, group;
	int cp, dp, shard;       /* shard = t * cp devices per rank */
	double zero_bpp;         /* static bytes per parameter under ZeRO */
	ppcc_cost_layer_comm lc; /* per layer: communication inside F, B */
	/* Under ZeRO-3 with its gathers (NULL otherwise): z3_max[k][i],
	 * the most 16-bit parameter bytes of one layer among layers i ..
	 * i + 2^k - 1 (a sparse table: a stage's largest layer in O(1)),
	 * for k < z3_levels */
	int64_t **z3_max;
	int z3_levels;
	double *rank_speed;      /* FLOP/s per rank */
	double *rank_mem;        /* layer bytes a rank may hold: memory * t */
	double *rank_cap;        /* bytes per device of each rank */
	int *rank_group;
	/* per device group: prefix sums of compute picoseconds */
	int64_t **work_fb, **work_f;
	int64_t **work_w;   /* per group, prefix of W times (ps) */
	/* a mixture of experts' all-to-alls in F and in B, prefix sums in
	 * ps (NULL without), the share a pair can hide of them, and that
	 * share of each layer's, rounded, in ps: work_f and work_fb hold
	 * each layer's F and F + B less it (ppcc_op_least_ms) */
	int64_t *ep_prefix[2], *hid_prefix[2];
	double ep_hidden_share;
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
	/* 1 when the last stage's rank holds the first stage too: the last
	 * layer's shared_params are not held again (memory_tables) */
	int shares_first;
	ppcc_part_problem pb;
	int lean;                /* ppcc_plan_build_lean */
	int no_changes;          /* no split fits: no changes tried (the
				  * auto kind's quiet plans of each kind) */
	/* the shape's lists are this plan's own (not a cache's, which other
	 * plans change), so their sends and receives carry the bytes of the
	 * shape's stage table (schedule_set_stages) */
	int own_lists;
	/* bound.c's bound of every split's step (ppcc_plan_pipe_bound_ps), once
	 * computed; bound_memo: the search's, NULL outside it */
	double pipe_ps;
	int pipe_have;
	ppcc_bound_memo *bound_memo;
} ppcc_plan_ctx;

/* ppcc_plan_build_lean's threshold and the bound it reports. */
typedef struct ppcc_plan_lean {
	double above_ms;
	double *bound_ms;
	double *stage_bounds_ms; /* NULL, or the two bounds as proven */
	ppcc_plan_shapes *shapes;
	int *memory_unfit; /* NULL: no memory bound (membound.c) */
} ppcc_plan_lean;

/* Sums of these over all layers must stay within int64: each value is
 * kept below 2^61 / (layers + 1) by the range check in tables.c, so no sum
 * can overflow (the partitioner multiplies stash sums by counts in 128
 * bits). */
static inline int64_t to_ps(double seconds)
{
	double ps = seconds * PS_PER_S;
	return ps >= 9e18 ? INT64_MAX / 4 : (int64_t)llround(ps);
}

static inline int64_t to_bytes(double b)
{
	return b >= 9e18 ? INT64_MAX / 4 : (int64_t)llround(b);
}

#define ALLOC(ptr, count) \
	(((ptr) = ppcc_arena_alloc(x->a, (size_t)(count), sizeof *(ptr))) != NULL)

static inline double gib(double bytes)
{
	return bytes / (1024.0 * 1024.0 * 1024.0);
}

/* The bound on every split's simulated step that the output compares
 * with (split.c): m x the least bottleneck, and with v chunks m x the
 * larger of the least bottleneck without memory caps and the least total
 * of the stage times over p.  One picosecond a stage is taken off for
 * the rounding of p2p times to picoseconds. */
typedef struct ppcc_plan_step_bounds {
	double step_ms;
	int64_t bottleneck_ps;
} ppcc_plan_step_bounds;

/* tables.c */

/* The cost tables and the schedule's shape (its order, which does not
 * depend on the split) with the in-flight counts read off it; from
 * shapes when not NULL.  1 when lean's bound from the tables alone
 * exceeds its threshold (nothing more is built). */
int ppcc_plan_setup(ppcc_plan_ctx *x, ppcc_schedule *shape, ppcc_arena *a,
		    const ppcc_config *cfg, ppcc_diag *d,
		    ppcc_plan_shapes *shapes, const ppcc_plan_lean *lean);
/* x->stash_count from schedule s, in x->a. */
int ppcc_plan_count_in_flight(ppcc_plan_ctx *x, const ppcc_schedule *s);
/* Stage s holding layers i..j: its partitioner's time (ps) and memory
 * (bytes of its rank's t x cp devices, with its stash count). */
int64_t ppcc_plan_stage_time(const ppcc_plan_ctx *x, int s, int i, int j);
double ppcc_plan_stage_mem(const ppcc_plan_ctx *x, int s, int i, int j);
/* Bytes on one device of ZeRO-3's gather buffers for a stage of layers
 * i..j (ppcc_stage_cost.zero3_param_bytes; 0 without them).  O(1). */
double ppcc_plan_zero3_bytes(const ppcc_plan_ctx *x, int i, int j);
/* The simulator's costs of a split (first[s] for each stage), with the
 * parts iteration.c reports when parts is 1, and its stage table when
 * stages is not NULL; and the split search's callbacks (user: x). */
void ppcc_plan_split_costs(const ppcc_plan_ctx *x, const int *first,
			   ppcc_stage_cost *costs, ppcc_stage_info *stages,
			   int parts);
int ppcc_plan_split_costs_fn(void *user, const int *first,
			     ppcc_stage_cost *out);
int ppcc_plan_stage_costs_fn(void *user, int s, int i, int j,
			     ppcc_stage_cost *out);

/* shape.c: shape (its lists shared) and x->stash_count from the cache,
 * built there when it has none; the cache's bound memo. */
int ppcc_plan_shape_get(ppcc_schedule *shape, ppcc_plan_shapes *c,
			ppcc_plan_ctx *x);
ppcc_bound_memo *ppcc_plan_shapes_bounds(ppcc_plan_shapes *c);

/* bounds.c */
int ppcc_plan_step_lower_bound(ppcc_plan_ctx *x, int64_t bottleneck,
			       ppcc_plan_step_bounds *out);
int ppcc_plan_pipe_bound_ps(ppcc_plan_ctx *x, double *out_ps);
int ppcc_plan_iteration_lower_bound(ppcc_plan_ctx *x,
				    const ppcc_schedule *shape,
				    double step_ms, double *out_ms);
int ppcc_plan_path_lower_bound(ppcc_plan_ctx *x, const int *split,
			       int64_t bottleneck, double *out_ms,
			       int *out_split, int *out_ok);

/* variant.c */
int ppcc_plan_variant_fill(ppcc_plan_ctx *x, ppcc_plan_variant *out,
			   const int *first);
int ppcc_plan_place_collectives(ppcc_schedule *s, ppcc_arena *a,
				const ppcc_config *cfg,
				const ppcc_stage_cost *costs);
int ppcc_plan_place_reductions(ppcc_plan_ctx *x, ppcc_plan_variant *v);
int ppcc_plan_variant_best(ppcc_plan_ctx *x, ppcc_plan_variant *out,
			   const int *first, ppcc_schedule *shape,
			   const ppcc_estimate *known);
int ppcc_plan_variant_fits(const ppcc_plan_ctx *x,
			   const ppcc_plan_variant *v);

/* baseline.c */
void ppcc_plan_uniform_split(const ppcc_plan_ctx *x, int *uni);
int ppcc_plan_variant_uniform(ppcc_plan_ctx *x, ppcc_plan_variant *out,
			      const int *first, const ppcc_schedule *best,
			      const ppcc_estimate *known);
int ppcc_plan_variant_uniform_placed(ppcc_plan_ctx *x,
				     ppcc_plan_variant *out, const int *first,
				     const ppcc_schedule *shape);

/* nofit.c: each PPCC_EINFEASIBLE after its diagnostics (or 0 when the
 * argument does not apply, for the lean ones) */
int ppcc_plan_report_no_fit(ppcc_plan_ctx *x, const ppcc_config *cfg,
			    ppcc_diag *d);
int ppcc_plan_report_no_fit_simulated(ppcc_plan_ctx *x,
				      const ppcc_config *cfg, ppcc_diag *d,
				      const int *split,
				      const ppcc_step_result *res,
				      const ppcc_schedule *shape);
int ppcc_plan_lean_no_fit(ppcc_plan_ctx *x);
int ppcc_plan_lean_memory_bound(ppcc_plan_ctx *x, const ppcc_schedule *shape);

/* plan.c: the driver.  search 0: only whether a split fits (0 or
 * PPCC_EINFEASIBLE, no diagnostics of its own); 2: as 1, but when no
 * split fits, the changes that would fit are not planned; out_first: the split
 * and how it was found, nothing scheduled; lean: the search's build. */
int ppcc_plan_drive(ppcc_plan *out, ppcc_arena *a, const ppcc_config *cfg,
		    ppcc_diag *d, int search, int *out_first,
		    ppcc_step_result *out_res, const ppcc_plan_lean *lean);

/* auto.c */
int ppcc_plan_auto_build(ppcc_plan *out, ppcc_arena *a,
			 const ppcc_config *cfg, ppcc_diag *d,
			 ppcc_admits_fn admits, void *admits_ctx);

#endif
