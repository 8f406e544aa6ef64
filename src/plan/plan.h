/*
 * plan.h - a plan (variants, auto's tries), ppcc_plan_build and the
 * configuration search's lean builds, the iteration bound and the budget.
 * Part of the internal interface; src/ppcc.h includes every such header.
 */
#ifndef PPCC_PLAN_PLAN_H
#define PPCC_PLAN_PLAN_H

#include "partition/partition.h"

/* One partition, scheduled and simulated. */
typedef struct ppcc_plan_variant {
	ppcc_stage_info *stages;  /* n_stages */
	ppcc_stage_cost *costs;   /* n_stages */
	int64_t bottleneck_ps;
	ppcc_schedule schedule;
	ppcc_estimate estimate;
	/* ppcc's split only: NULL for the uniform one and when read back
	 * from JSON */
	struct ppcc_iteration *iteration;
} ppcc_plan_variant;

typedef struct ppcc_plan {
	const ppcc_config *config;  /* NULL for a plan read back from JSON */
	const char *model_name;
	int n_layers;
	const ppcc_layer *layers;   /* NULL when read back from JSON */
	ppcc_plan_variant best;     /* ppcc's partition */
	ppcc_plan_variant uniform;  /* equal layer counts, for comparison */
	int has_uniform;            /* 0 for a plan read back from JSON */
	int uniform_fits;           /* the uniform split fits device memory */
	double *memory_cap_bytes;   /* per rank; NULL when read back */
	ppcc_step_result search;    /* how ppcc's split was found (0 when read back) */
	/* With an explicit partition, best is the partition given and own is
	 * ppcc's split, for comparison. */
	ppcc_plan_variant own;
	int has_own;
	int given_fits;
	int64_t least_bottleneck_ps; /* partition.c's optimum, for comparison */
	/* The auto kind: what was tried (NULL for any other kind). */
	const struct ppcc_plan_auto *auto_plan;
} ppcc_plan;

/* What the auto kind tried: each handcrafted kind's own plan, then the
 * orders ppcc_sched_auto simulated on the split of the fastest one-chunk
 * plan. */
typedef struct ppcc_auto_kind_result {
	int kind;
	int chunks;        /* per rank */
	int fits;          /* planned, and its split fits */
	double step_ms;    /* simulated, when it fits */
} ppcc_auto_kind_result;

typedef struct ppcc_plan_auto {
	int n_kinds;
	ppcc_auto_kind_result kinds[PPCC_SCHED_COUNT];
	int chosen_kind;   /* the kind of the schedule written */
	int split_kind;    /* the one-chunk kind whose split the orders
			      were tried on; -1: none fits */
	ppcc_auto_report orders;
} ppcc_plan_auto;

int ppcc_plan_build(ppcc_plan *out, ppcc_arena *a, const ppcc_config *cfg,
		    ppcc_diag *d);

/* Which configurations a caller takes (a trainer's, ppcc_trainer_admits):
 * 1 to take e. */
struct ppcc_search_entry;
typedef int (*ppcc_admits_fn)(const struct ppcc_search_entry *e, void *ctx);

/* ppcc_plan_build, where the auto kind writes only what admits takes (NULL:
 * anything): each kind asked with its settings, the heuristic's and the
 * exact search's orders as kind auto with one chunk.  Other kinds are
 * planned as ppcc_plan_build plans them. */
int ppcc_plan_build_for(ppcc_plan *out, ppcc_arena *a, const ppcc_config *cfg,
			ppcc_diag *d, ppcc_admits_fn admits, void *admits_ctx);

/* What a configuration search needs of ppcc_plan_build: the same split,
 * schedule, estimate and iteration in best (the same figures), without
 * the uniform baseline (has_uniform 0), the schedule's validation and
 * fingerprint (0), or,
 * when nothing fits, the trials of more stages (the memory per device it
 * would fit with is still noted).  With out_bound_ms, the proven lower
 * bound on every split's step that the split search starts from is
 * written there once known, and when it exceeds above_ms nothing is
 * built and the return is 1.  The auto kind is planned in full, as
 * ppcc_plan_build plans it, without a bound.  With shapes (may be NULL),
 * the schedule's shape is taken from there, or built there and kept, and
 * out's schedule shares its action lists (valid until the next plan with
 * the same shapes).  ppcc_plan_shapes_new: a cache whose actions are
 * emptied when they pass max_bytes (NULL when out of memory); the
 * caller's, to free with ppcc_plan_shapes_free. */
typedef struct ppcc_plan_shapes ppcc_plan_shapes;
ppcc_plan_shapes *ppcc_plan_shapes_new(size_t max_bytes);
void ppcc_plan_shapes_free(ppcc_plan_shapes *shapes);
int ppcc_plan_build_lean(ppcc_plan *out, ppcc_arena *a, const ppcc_config *cfg,
			 ppcc_diag *d, double above_ms, double *out_bound_ms,
			 ppcc_plan_shapes *shapes);
/* membound.c's bound for cfg's schedule (kind, p, v, m), from the cost
 * tables plan/tables.c builds: every split has a rank whose simulated peak
 * exceeds its cap by more than *out bytes per device (-INFINITY: nothing
 * proved); the caps to out_caps (p entries) when not NULL.  For tests
 * and reports. */
int ppcc_plan_memory_bound(double *out, double *out_caps, ppcc_arena *a,
			   const ppcc_config *cfg);
/* The same, and with out_memory_unfit (may be NULL: not asked) the
 * memory bound of membound.c before the split search of v > 1 chunks:
 * when it proves that no split fits, nothing is searched, *out_memory_unfit
 * is 1 and the return PPCC_EINFEASIBLE (with a note of the least memory
 * per device proved needed).  With out_stage_bounds_ms (2 entries, may be
 * NULL), the two bounds compared with above_ms, each written as it is
 * proven (NAN: not reached): [0] bound.c's from the cost tables, before
 * any shape (p > 1), [1] the step bound the split search starts from.
 * above_ms is read nowhere else, so the plan under a lower threshold A
 * is this one unless [0] > A (then 1 with *out_bound_ms [0]) or else
 * [1] > A (1 with [1]): the search commits a plan made under another
 * threshold by these alone. */
int ppcc_plan_build_pruned(ppcc_plan *out, ppcc_arena *a,
			   const ppcc_config *cfg, ppcc_diag *d,
			   double above_ms, double *out_bound_ms,
			   double *out_stage_bounds_ms,
			   ppcc_plan_shapes *shapes, int *out_memory_unfit);

/* What a configuration's iteration is at least when its step is at
 * least step_ms (bounds.c): the gradient reductions and the optimizer
 * step added as iteration.c adds them, from cfg's pipeline settings and
 * layers alone. */
double ppcc_plan_iteration_bound(const ppcc_config *cfg, double step_ms);

/* Resource budget (budget.c).  The number of compute and point-to-point
 * actions the schedule of pl will hold, exact for its kind (saturating
 * at INT64_MAX); and the check
 * to run before ppcc_plan_build: PPCC_EINPUT, with an error at the
 * setting that makes the plan large naming its size in actions, memory
 * and output bytes of `format` (a ppcc_format), when it holds more than
 * max_actions (<= 0: PPCC_MAX_ACTIONS_DEFAULT). */
#define PPCC_MAX_ACTIONS_DEFAULT 4000000
int64_t ppcc_plan_action_count(const ppcc_pipeline *pl);
/* A data-parallel plan's REDUCE_GRAD actions, at most (any partition;
 * 0 without data parallelism), and the schedule's actions with them: what
 * ppcc_plan_budget_check compares with max_actions (see budget.c). */
int64_t ppcc_plan_reduction_bound(const ppcc_config *cfg);
int64_t ppcc_plan_action_bound(const ppcc_config *cfg);
int ppcc_plan_budget_check(const ppcc_config *cfg, int format,
			   int64_t max_actions, ppcc_diag *d);

/* The work budget (budget.c), counted in units, not time, so that a
 * refusal is the same on any machine.  A unit is a partition cell (one
 * layer on one virtual stage: the partitioner's tables hold a byte for
 * each, the path bound an int) or a simulated action.  A plan's work is
 * its cells; a search's, the sum over the configurations it enumerates
 * of one unit each, their cells and the simulated actions their split
 * searches may run (search.c, cand_work).  max_work <= 0: the default,
 * PPCC_MAX_WORK_DEFAULT for a plan, PPCC_SEARCH_WORK_DEFAULT for a
 * search; max_actions <= 0: PPCC_MAX_ACTIONS_DEFAULT. */
#define PPCC_MAX_WORK_DEFAULT ((int64_t)1 << 28)
#define PPCC_SEARCH_WORK_DEFAULT ((int64_t)1 << 32)
/* a mixture of experts' search, whose expert layouts (ep, etp) multiply
 * the configurations: four times the dense default */
#define PPCC_SEARCH_WORK_MOE_DEFAULT ((int64_t)1 << 34)
typedef struct ppcc_budget {
	int64_t max_actions;
	int64_t max_work;
} ppcc_budget;
/* n_layers x stages x chunks, saturating at INT64_MAX. */
int64_t ppcc_plan_cell_count(const ppcc_config *cfg);
/* ppcc_plan_budget_check with the cells too: PPCC_EINPUT, with an error
 * at the key that drives them (stages, or chunks when they are more),
 * when the cells exceed b->max_work.  b NULL: the defaults. */
int ppcc_plan_budget_check_work(const ppcc_config *cfg, int format,
				const ppcc_budget *b, ppcc_diag *d);

#endif
