/*
 * kind.h - the table of schedule kinds, the auto kind, the exact search,
 * building action lists and placing reductions.
 * Part of the internal interface; src/ppcc.h includes every such header.
 */
#ifndef PPCC_SCHED_KIND_H
#define PPCC_SCHED_KIND_H

#include "sim/sim.h"

/* The settings a kind's constraints are about, for the caller to locate
 * a complaint. */
typedef enum ppcc_sched_setting {
	PPCC_SET_KIND,
	PPCC_SET_STAGES,
	PPCC_SET_CHUNKS,
	PPCC_SET_MICROBATCHES,
	PPCC_SET_GROUP_SIZE
} ppcc_sched_setting;

typedef void (*ppcc_sched_complain_fn)(int setting, const char *msg,
				       void *user);

/* Reports, through complain, each constraint of the kind that (p, v, m,
 * group_size; 0 meaning p) breaks, with the message to show; returns the
 * number reported.  An unknown kind is one complaint about PPCC_SET_KIND. */
int ppcc_sched_check(int kind, int ranks, int chunks, int microbatches,
		     int group_size, ppcc_sched_complain_fn complain,
		     void *user);

/* The kind's closed-form bubble with equal stages and free
 * communication, as time: the largest idle time of any rank between its
 * first and its last action, for forward f and backward b (for a kind
 * that splits the backward, b is the input gradient I and w the weight
 * gradient W; otherwise b is the whole backward and w is ignored).  NAN
 * for an unknown kind or where no closed form is known. */
double ppcc_sched_bubble_ms(int kind, int ranks, int chunks,
			    int microbatches, double f, double b, double w);

/* The actions other than SEND/RECV (computes, OVERLAP_F_B markers) that
 * the kind's schedule of (p, v, m, group_size; 0: p) holds on all ranks
 * together; 0 for an unknown kind or a count below 1.  Exact for shapes
 * ppcc_sched_check accepts. */
int64_t ppcc_sched_local_actions(int kind, int ranks, int chunks,
				 int microbatches, int group_size);

/* Sets rank and chunk of each of the ranks * chunks entries of stages
 * (and stage to its index) from the kind's placement. */
void ppcc_sched_place(ppcc_stage_info *stages, int kind, int ranks,
		      int chunks);

/* ---- the auto kind (src/sched/auto.c) -------------------------------- */

struct ppcc_stage_cost;
struct ppcc_schedule;

#define PPCC_AUTO_MAX 24

/* One schedule ppcc_sched_auto simulated. */
typedef struct ppcc_auto_candidate {
	int kind;          /* a handcrafted kind, or PPCC_SCHED_AUTO for the
			    * heuristic's order */
	int cap;           /* the heuristic's: microbatches between F and W
			    * per rank at most (fewer where memory holds
			    * fewer); 0 for a handcrafted kind */
	int fill;          /* the heuristic's: a W in any gap (1), or only in
			    * gaps as long as the W and at the cap (0) */
	double step_ms;    /* simulated */
	double peak_bytes; /* the largest per-rank peak */
	double over_bytes; /* the most a rank's peak exceeds its cap */
	int fits;          /* every rank's peak within its cap */
	int exact;         /* the exact search's order (src/sched/exact.c) */
} ppcc_auto_candidate;

/* ---- the exact search (src/sched/exact.c) ---------------------------------- */

/* The most microbatches the exact search takes, and its default reach:
 * auto runs it when p x m is at most PPCC_EXACT_DEFAULT_PM. */
#define PPCC_EXACT_MAX_M 64
#define PPCC_EXACT_DEFAULT_PM 64

typedef enum ppcc_exact_status {
	PPCC_EXACT_NOT_RUN = 0,    /* p x m above the reach, or nothing fits */
	PPCC_EXACT_OPTIMAL,        /* proven optimal */
	PPCC_EXACT_TIME_LIMIT,     /* stopped by the time limit */
	PPCC_EXACT_NODE_LIMIT,     /* stopped after the node budget */
	PPCC_EXACT_STOPPED         /* GLPK stopped otherwise */
} ppcc_exact_status;

typedef struct ppcc_exact_options {
	int max_pm;          /* run when p x m <= this (0: never) */
	double time_limit_s; /* glp_iocp.tm_lim */
	long node_limit;     /* branch-and-bound nodes; 0: no budget */
} ppcc_exact_options;

/* auto's: p x m <= PPCC_EXACT_DEFAULT_PM, 10 s, 500 nodes. */
extern const ppcc_exact_options ppcc_exact_defaults;

typedef struct ppcc_exact_report {
	ppcc_exact_status status;
	double warm_model_ms;  /* the warm start's step in the model */
	double model_ms;       /* the incumbent's step in the model */
	double bound_ms;       /* the proven lower bound (= model_ms when
				* optimal) */
	double solve_s;        /* wall time; not printed by ppcc plan (it
				* varies from run to run) */
	int nodes, binaries, rows;
	int warm_taken;        /* GLPK accepted the warm start */
	int relaxed;           /* the LP relaxation was solved; else bound_ms
				* is the per-rank work bound alone */
} ppcc_exact_report;

/* The least-step order of one chunk per rank (stage r on rank r) that
 * keeps F, I and W each in microbatch order, under costs and rank_cap
 * (NULL: no limit), warm-started from warm (a schedule of that shape that
 * fits), as a MILP solved by GLPK (src/sched/exact.c).  *out_order: per rank
 * its 3m compute actions, in a: the incumbent's, which is the warm
 * start's order when the search found nothing better or stopped before
 * it had an incumbent.  PPCC_EINPUT when warm is not of that shape. */
int ppcc_sched_exact(ppcc_action ***out_order, ppcc_exact_report *rep,
		     ppcc_arena *a, int ranks, int microbatches,
		     const struct ppcc_stage_cost *costs, const double *rank_cap,
		     const struct ppcc_schedule *warm,
		     const ppcc_exact_options *opt);

typedef struct ppcc_auto_report {
	int n;
	int chosen;        /* index into candidates */
	ppcc_auto_candidate candidates[PPCC_AUTO_MAX];
	/* the exact search: what it was given and what it found */
	ppcc_exact_options exact_opt;
	ppcc_exact_report exact;
	double heuristic_ms; /* the best of the heuristic's orders that fit;
			      * INFINITY when none does */
	double before_ms;    /* the best before the exact search (whose
			      * warm start is the best of those with I
			      * and W) */
} ppcc_auto_report;

/* The fastest schedule of one chunk per rank for these stages (ranks
 * entries, placed) and costs whose simulated peak fits rank_cap (bytes
 * per rank; NULL: no limit): among every handcrafted kind of the table
 * that takes the shape and the zero-bubble heuristic's order under
 * several caps (sched/choose.c).  Writes the winner to *out (in a) and what was
 * tried to *rep.  PPCC_EINFEASIBLE when none fits: *out is then the one
 * that overflows least.  *out is not sealed (fingerprint 0):
 * ppcc_schedule_validate_seal checks and seals it. */
int ppcc_sched_auto(struct ppcc_schedule *out, ppcc_auto_report *rep,
		    ppcc_arena *a, int ranks, int microbatches,
		    const ppcc_stage_info *stages,
		    const struct ppcc_stage_cost *costs,
		    const double *rank_cap);
/* The same with the exact search's options (NULL: ppcc_exact_defaults). */
int ppcc_sched_auto_opts(struct ppcc_schedule *out, ppcc_auto_report *rep,
			 ppcc_arena *a, int ranks, int microbatches,
			 const ppcc_stage_info *stages,
			 const struct ppcc_stage_cost *costs,
			 const double *rank_cap, const ppcc_exact_options *ex);

/* Builds the action lists of a kind for the stages given (n_stages = p *
 * v, placed by ppcc_sched_place).  The arrays live in the arena. */
int ppcc_schedule_build(ppcc_schedule *out, ppcc_arena *a, int kind,
			int ranks, int chunks, int microbatches,
			int group_size, const ppcc_stage_info *stages);
/* The same with the fingerprint left 0, for a schedule that is changed
 * and then sealed (ppcc_schedule_validate_seal). */
int ppcc_schedule_build_unsealed(ppcc_schedule *out, ppcc_arena *a, int kind,
				 int ranks, int chunks, int microbatches,
				 int group_size, const ppcc_stage_info *stages);
/* The same on two threads when threads > 1 and the lists hold
 * PPCC_BUILD_TOUCH_BYTES or more (probe->build_touch_bytes when set:
 * tests lower it): their fresh memory first written (lower.c,
 * lower_touch), then half the ranks lowered on each thread; the
 * schedule is the same.  probe (NULL: none) counts the builds lowered
 * on two threads (lower_halves). */
#define PPCC_BUILD_TOUCH_BYTES ((size_t)64 << 20)
/* The rank that halves lists of n[0..p) actions (p > 1) by actions, not
 * ranks (the first p/2 ranks of a kind can hold more than the rest):
 * ranks [0, mid) and [mid, p), neither empty; the work a build or a
 * search shares between two threads. */
int ppcc_sched_middle_rank(const int64_t *n, int p);
int ppcc_schedule_build_unsealed_on(ppcc_schedule *out, ppcc_arena *a,
				    int kind, int ranks, int chunks,
				    int microbatches, int group_size,
				    const ppcc_stage_info *stages, int threads,
				    ppcc_probe *probe);

/* The data-parallel reductions in the schedule (sched/reduce.c): after
 * the last B or W of each stage, that stage's grad_bytes[stage] (bytes
 * of gradients on one device) in REDUCE_GRAD actions of bucket_bytes
 * each, the last one holding the rest (at least one, of 0 bytes for a
 * stage without gradients), in bucket order.  The rank lists are new
 * ones in the arena; the fingerprint is left 0 for the caller's seal.
 * PPCC_EINPUT for a schedule that holds reductions already or a stage
 * without a backward, or counts that do not fit; PPCC_ENOMEM. */
int ppcc_schedule_place_reductions(ppcc_schedule *s, ppcc_arena *a,
				   const double *grad_bytes,
				   double bucket_bytes);
/* ppcc_schedule_place_reductions under ZeRO stage `zero` (0-3): with
 * zero >= 1 each reduction is a REDUCE_SCATTER_GRAD instead, and with
 * zero 1 or 2 every bucket k of stage s also has an ALL_GATHER_PARAM(s,
 * k) of llround(its gradient bytes x param_per_grad) bytes at the start
 * of the rank's list, before every other action: the rank's stages in
 * the order of their first F, buckets in order.  Version 4 when it
 * places either op.  With zero 3, each F, B and I has a group of
 * UNSHARD_PARAM(s, k), one per bucket of those bytes, listed right after
 * the rank's compute two before it (the first two at the start; after
 * the pair where that compute is an overlapped pair's F), and every B
 * and W is followed by its stage's reduce-scatters: version 5.  The
 * same errors. */
int ppcc_schedule_place_collectives(ppcc_schedule *s, ppcc_arena *a,
				    const double *grad_bytes,
				    double bucket_bytes, int zero,
				    double param_per_grad);
/* The number of REDUCE_GRAD actions that would place (saturating). */
int64_t ppcc_schedule_reduction_count(const ppcc_schedule *s,
				      const double *grad_bytes,
				      double bucket_bytes);

/* Closed-form bubble fraction for equal stages and free communication, or
 * NAN when none is known for the schedule. */
double ppcc_bubble_closed_form(int kind, int ranks, int chunks,
			       int microbatches);

#endif
