/*
 * bound.h - the lower bound on the simulated step of every split.
 * Part of the internal interface; src/ppcc.h includes every such header.
 */
#ifndef PPCC_PARTITION_BOUND_H
#define PPCC_PARTITION_BOUND_H

#include "plan/plan.h"

/* A lower bound on the simulated step of every split (bound.c, where
 * it is proven), in the units of the per-layer figures given:
 * lead_f_prefix[k], the forward of the first k layers; lead_fb_prefix
 * (NULL when the kind splits the backward) the same with the backward,
 * each layer's lead at most its work; work_prefix, the compute per
 * microbatch of the first k layers; least_prefix[k], the sum of the k
 * least of those; extra (NULL: none), each rank's p2p per microbatch;
 * first_stage and stage_count per rank, from the kind's stage table;
 * contiguous when rank r holds stage r alone.  Every figure a least one
 * (over device groups, over boundaries): the bound holds for any larger
 * ones. */
typedef struct ppcc_bound_problem {
	int n_layers, n_ranks, microbatches;
	const double *lead_f_prefix, *lead_fb_prefix; /* n_layers + 1 */
	const double *work_prefix, *least_prefix;     /* n_layers + 1 */
	const double *extra;                          /* n_ranks */
	const int *first_stage, *stage_count;         /* n_ranks */
	int contiguous;
	/* the backward's bound (d) of bound.c, NULL when not asked, over
	 * the layers from the last: back_lead_prefix[k], the forward of
	 * every layer plus the input gradient (B, or I under a split
	 * backward) of the last k, each layer's at most its backward;
	 * back_work_prefix, the whole backward of the last k;
	 * back_least_prefix, of the k least; back_first_stage[r], S - 1 -
	 * rank r's highest stage */
	const double *back_lead_prefix, *back_work_prefix, *back_least_prefix;
	const int *back_first_stage;
} ppcc_bound_problem;
double ppcc_bound_step(const ppcc_bound_problem *b);
/* The same bound from at most max_visits layer visits (ppcc_bound_step:
 * 2^24): the bisections stop where the next check would pass them, at a
 * bound still proven, only weaker; *out_visits (may be NULL): the visits
 * made. */
double ppcc_bound_step_within(const ppcc_bound_problem *b, int64_t max_visits,
			      int64_t *out_visits);
/* The most layer visits ppcc_bound_step makes on n_layers and n_ranks
 * (what ppcc search counts for a candidate's bound). */
int64_t ppcc_bound_step_max_visits(int n_layers, int n_ranks);
/* ppcc_bound_step remembered (bound.c): the same bound for a problem
 * whose counts and arrays are, bit for bit, those of one computed
 * before.  ppcc_bound_memo_new: at most max_bytes of problems kept (NULL
 * when out of memory), the caller's to free with ppcc_bound_memo_free;
 * m NULL computes every bound. */
typedef struct ppcc_bound_memo ppcc_bound_memo;
ppcc_bound_memo *ppcc_bound_memo_new(size_t max_bytes);
void ppcc_bound_memo_free(ppcc_bound_memo *m);
double ppcc_bound_step_memo(ppcc_bound_memo *m, const ppcc_bound_problem *b);
/* Bounds answered and computed so far. */
void ppcc_bound_memo_counts(const ppcc_bound_memo *m, long *hits,
			    long *misses);

#endif
