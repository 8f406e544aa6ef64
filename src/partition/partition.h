/*
 * partition.h - the partition problem in integers, the exact split, the
 * split search of least simulated step and the memory bound.
 * Part of the internal interface; src/ppcc.h includes every such header.
 */
#ifndef PPCC_PARTITION_PARTITION_H
#define PPCC_PARTITION_PARTITION_H

#include "sim/sim.h"
#include "sched/kind.h"

/* The partition problem in integers (picoseconds, bytes), so that the
 * optimum is exact.  Stage s holding layers i..j (0-based, inclusive)
 * costs
 *
 *   time(s,i,j) = work[s][j+1] - work[s][i]
 *               + (s > 0       ? comm_in[s][i]  : 0)
 *               + (s < S - 1   ? comm_out[s][j] : 0)
 *
 * and fits when
 *
 *   static_prefix[j+1] - static_prefix[i]
 *     + stash_count[s] * (stash_prefix[j+1] - stash_prefix[i]) <= mem_cap[s].
 *
 * work[s] is a prefix sum (n_layers + 1 entries) of forward + backward time
 * on stage s's device; comm_in[s][i] is the p2p time stage s pays for its
 * input boundary (between layers i-1 and i), comm_out[s][j] for its output
 * boundary (between j and j+1).  Stages may share arrays. */
typedef struct ppcc_part_problem {
	int n_layers;
	int n_stages;
	const int64_t *const *work;
	const int64_t *const *comm_in;
	const int64_t *const *comm_out;
	const int64_t *static_prefix;
	const int64_t *stash_prefix;
	const int64_t *stash_count;
	const int64_t *mem_cap; /* INT64_MAX: no limit */
} ppcc_part_problem;

/* Writes first[s], the first layer of each stage (first[0] == 0), for a
 * split with the least bottleneck max_s time(s, ...), and that bottleneck.
 * Ties are broken deterministically (see partition.c).  Returns
 * PPCC_EINFEASIBLE when no split fits the memory caps. */
int ppcc_partition_solve(int *out_first, int64_t *out_bottleneck,
			 const ppcc_part_problem *pb);

/* When ppcc_partition_solve is infeasible: the split that minimises the
 * largest memory overflow, the stage with that overflow, and the bytes by
 * which it is over its cap. */
int ppcc_partition_min_overflow(int *out_first, int *out_stage,
				int64_t *out_overflow,
				const ppcc_part_problem *pb);

/* A lower bound, within hi / 2^20 of the least, on max over stages r of
 * P_r + m time(r, ...) over the splits that fit (P_r: the work of stages
 * before r plus their input p2p; see partition.c), searched in [lo, hi];
 * hi must be the value of a split that fits.  With one chunk per rank it
 * bounds the simulated step of GPipe and 1F1B from below (split.c).
 * out_first: a split within the final upper end of the search. */
int ppcc_partition_path_bound(int64_t *out, int *out_first,
			      const ppcc_part_problem *pb, int64_t m, int64_t lo,
			      int64_t hi);

/* ---- the step objective (split.c) ----------------------------------- */

struct ppcc_stage_cost;
struct ppcc_estimate;

/* Stage costs of a split (first[s], the first layer of each stage) in the
 * simulator's terms; returns 0 or a negative status. */
typedef int (*ppcc_split_cost_fn)(void *user, const int *first,
				  struct ppcc_stage_cost *out);
/* The cost of stage s alone holding layers i..j (as ppcc_split_cost_fn
 * writes it: a stage's costs depend on s, i and j alone; its receive is
 * layer i - 1's activation and its links are its rank's). */
typedef int (*ppcc_stage_cost_fn)(void *user, int s, int i, int j,
				  struct ppcc_stage_cost *out);

/* The budget of simulations when ppcc_step_problem.max_sims is 0: as many
 * as fit in PPCC_STEP_ACTIONS simulated actions, at least
 * PPCC_STEP_MIN_SIMS. */
#define PPCC_STEP_ACTIONS (1L << 19)
/* The least schedule, in actions, whose simulations may run ahead on a
 * second thread (ppcc_step_problem.threads): a thread's start and a
 * second set of the simulator's buffers are then small beside it.
 * ppcc_step_ahead_from(probe) is the value used (tests lower it). */
#define PPCC_STEP_AHEAD_ACTIONS (1L << 22)
static inline long ppcc_step_ahead_from(const ppcc_probe *probe)
{
	return probe && probe->step_ahead_actions > 0
	       ? probe->step_ahead_actions : PPCC_STEP_AHEAD_ACTIONS;
}
#define PPCC_STEP_MIN_SIMS 4
/* The memory model's budget (split.c): evaluations of a split without
 * simulating it, each O(S + the ranks' count vectors), so many steps. */
#define PPCC_STEP_MODEL_WORK (1L << 21)
#define PPCC_STEP_MAX_SEEDS 8

typedef struct ppcc_step_problem {
	int n_layers;
	const ppcc_schedule *shape;  /* the schedule's order (split-independent) */
	ppcc_split_cost_fn costs;
	ppcc_stage_cost_fn stage_cost;
	void *user;
	const double *rank_cap;      /* per rank, bytes per device; NULL: none */
	const int *const *seeds;     /* splits to start from (at least one) */
	int n_seeds;
	long max_sims;               /* 0: the default budget */
	double lower_bound_ms;       /* a bound on every split's step, reported */
	/* Optional: a split whose estimate the caller wants (the uniform
	 * one, which the plan prints beside its own).  The first time the
	 * search simulates it, the estimate is copied to *kept, its per-rank
	 * arrays in kept_arena, and *kept_have set to 1; a split the search
	 * never simulates leaves *kept_have 0. */
	const int *keep;
	struct ppcc_estimate *kept;
	ppcc_arena *kept_arena;
	int *kept_have;
	/* When best is not NULL: the estimate of the split the search
	 * returns, with its send times (as PPCC_SIM_SEND_TIMES keeps them),
	 * copied from the search's own simulation of it into kept_arena,
	 * and *best_have 1; 0 when it has none (the caller simulates).
	 * best_no_times: the same without the send times (send_ms NULL),
	 * for a caller that replays no action's times: 16 bytes a stage
	 * and microbatch neither copied nor held. */
	struct ppcc_estimate *best;
	int *best_have;
	int best_no_times;
	/* 1: every split simulated each time it is looked at, every stage's
	 * costs and every rank's modelled memory computed afresh for each
	 * split, none kept from the split before (tests; the search's splits
	 * and counts are the same either way) */
	int forget;
	/* > 1: on a schedule of PPCC_STEP_AHEAD_ACTIONS actions or more,
	 * the simulation the search expects to run next runs on a second
	 * thread beside the one it runs (split.c, step_ahead); the
	 * answer, the counts and the estimates kept are the same.  sp->costs
	 * is still called from the caller's thread alone. */
	int threads;
	/* NULL, or the tests' (util.h): its step_ahead_actions in place of
	 * PPCC_STEP_AHEAD_ACTIONS; counts the searches that read the
	 * shape's second half of ranks on a second thread (step_shape) */
	ppcc_probe *probe;
} ppcc_step_problem;

typedef struct ppcc_step_result {
	int exact;          /* every split was simulated */
	long splits;        /* how many there are, -1: more than the budget */
	long simulations;   /* simulations the search ran, remembered ones too */
	long remembered;    /* of those, of a split simulated before in the
			     * same search: its key taken from then */
	long budget;
	long models;        /* memory-model evaluations, repairing's included */
	long model_budget;  /* balancing's budget of them (repairing's alike) */
	double step_ms;     /* of the split returned */
	double peak_bytes;  /* its largest per-rank peak */
	double lower_bound_ms;
	int path_bound;     /* the schedule met the path bound's conditions */
} ppcc_step_result;

/* Buffers kept between searches (sized on first use, grown as needed). */
typedef struct ppcc_step_ctx ppcc_step_ctx;
int ppcc_step_ctx_new(ppcc_step_ctx **out, int n_layers, int n_stages,
		      int n_ranks);
void ppcc_step_ctx_free(ppcc_step_ctx *x);

/* Writes the split that comes first in split.c's order (least simulated
 * step among those whose simulated peak fits every rank's cap; ties: least
 * peak memory, then most balanced ranks, then latest starts), exact when
 * res->exact, else the best the bounded descent from the seeds found.
 * *ctx may be NULL (it is then created; free it with ppcc_step_ctx_free).
 * PPCC_EINFEASIBLE when no split seen fits; out_first then holds the one
 * with the least overflow. */
int ppcc_partition_step(int *out_first, ppcc_step_result *res,
			ppcc_step_ctx **ctx, const ppcc_step_problem *sp);

/* The lower bound on the simulated step of one split (see split.c), or
 * NAN on failure.  For tests and reports. */
double ppcc_step_split_bound(ppcc_step_ctx **ctx, const ppcc_step_problem *sp,
			     const int *first);
/* Each rank's peak memory by the memory model (split.c) for one split,
 * into out_peaks (n_ranks entries): equal to the simulated peak but for
 * the order of the additions when no I frees part of a stash.  For
 * tests. */
int ppcc_step_split_peaks(double *out_peaks, ppcc_step_ctx **ctx,
			  const ppcc_step_problem *sp, const int *first);

/* ---- the memory bound (src/partition/membound.c) ------------------------------ */

/* What the proof that no split fits reads: the schedule's order (its
 * stage table and actions, split-independent) and, per layer and per
 * device, its static bytes, the stash a microbatch holds of it from F on
 * and what W keeps of that after I (wstash_bytes; may be NULL when the
 * schedule has no I).  rank_cap: bytes per device of each rank, NULL for
 * 0 (ppcc_mem_bound then bounds the largest peak itself). */
typedef struct ppcc_mem_problem {
	int n_layers;
	const ppcc_schedule *shape;
	const double *static_bytes, *stash_bytes, *wstash_bytes;
	const double *rank_cap;
} ppcc_mem_problem;

/* The count vectors and sums of one problem, in a (which owns them;
 * the arrays mp points to must outlive it).  PPCC_EINPUT when the
 * argument does not apply (a negative size, a malformed shape). */
typedef struct ppcc_mem_state ppcc_mem_state;
int ppcc_mem_prepare(ppcc_mem_state **out, ppcc_arena *a,
		     const ppcc_mem_problem *mp);
/* 1 when every split of the layers has a rank whose simulated peak
 * exceeds its cap + over (bytes per device), 0 when not shown. */
int ppcc_mem_unfit(ppcc_mem_state *m, double over);
/* The most over ppcc_mem_unfit proves (bisected): every split has a
 * rank whose simulated peak is more than that above its cap.
 * -INFINITY when none is proved, NAN when out of memory. */
double ppcc_mem_bound(ppcc_mem_state *m);

#endif
