/*
 * iteration.h - one training iteration from a simulated schedule.
 * Part of the internal interface; src/ppcc.h includes every such header.
 */
#ifndef PPCC_SIM_ITERATION_H
#define PPCC_SIM_ITERATION_H

#include "plan/plan.h"

/* pipeline.dp_bucket_mb's range */
#define PPCC_DP_BUCKET_MB_MIN 1.0
#define PPCC_DP_BUCKET_MB_MAX 1000000.0

/* The bytes of one gradient bucket of pl: dp_bucket_mb x 10^6 when
 * given, else Megatron-LM's default, max(40,000,000, 1,000,000 x n)
 * parameters of grad_bytes each, n = d x cp the ranks that reduce. */
double ppcc_dp_bucket_bytes(const ppcc_pipeline *pl);

/* Where one iteration's time goes, on the busiest rank (the least idle;
 * the first of equals), in milliseconds: compute + recompute + tp_comm +
 * cp_comm + zero3_comm + p2p + bubble = the schedule's step (zero3_comm:
 * what its computes waited for their ZeRO-3 gathers, the exposed part);
 * + dp_exposed + optimizer = iteration_ms. */
typedef struct ppcc_iteration {
	double iteration_ms;
	double step_ms;
	int rank;                /* the rank of the breakdown */
	double compute_ms, recompute_ms, tp_comm_ms, cp_comm_ms, zero3_comm_ms;
	/* the experts' token all-to-alls the step waits for: all of them
	 * less ep_hidden_ms, what overlapped pairs hid (ppcc_pair_ms) */
	double ep_comm_ms, ep_hidden_ms;
	double p2p_ms, bubble_ms;
	double dp_comm_ms;       /* every gradient bucket, hidden or not */
	/* of dp_comm_ms (on the rank with the most), the part that ran
	 * before the pipeline's step ended: hidden behind the compute */
	double dp_hidden_ms;
	long dp_reductions;      /* REDUCE_GRAD or REDUCE_SCATTER_GRAD
				    actions of the schedule */
	long dp_gathers;         /* its ALL_GATHER_PARAM (or, ZeRO-3,
				    UNSHARD_PARAM) actions */
	double dp_gather_ms;     /* the longest rank's time of them on its
				    channel (the prologue's from time 0) */
	/* the longest any rank's computes waited for their own stages'
	 * gathers (the estimate's dp_gather_wait_ms): the exposed part */
	double dp_gather_exposed_ms;
	double dp_exposed_ms;    /* what lengthens the iteration */
	double optimizer_ms;
	int data_parallel, global_batch_size;
	double tokens_per_s;     /* 0 for a model given as layers */
	double model_flops;      /* per iteration, all devices, no recompute */
	double hardware_flops;   /* the same, counting recompute */
	double model_tflops_per_device, hardware_tflops_per_device;
	double mfu;              /* model FLOP/s over the devices' peak */
	/* per rank, per device, bytes at the peak: */
	double *weight_bytes, *grad_bytes, *optimizer_bytes;
	double *activation_bytes, *logits_bytes, *reserved_bytes;
	double *dp_end_ms;       /* per rank: last gradient bucket reduced */
} ppcc_iteration;

/* The iteration of variant v under cfg: its schedule simulated keeping
 * action or send times (ppcc_rank_times replays them).  Costs O(actions)
 * time and arrays of O(ranks + stages) in the arena, no allocation
 * otherwise: a search may call it for each candidate. */
int ppcc_iteration_estimate(ppcc_iteration *out, ppcc_arena *a,
			    const ppcc_config *cfg,
			    const ppcc_plan_variant *v);

/* ppcc's split of cfg alone (first[s] for each of the p x v stages) and
 * how it was found, without scheduling the plan: what ppcc_plan_build
 * puts in best (or own, with an explicit partition).  The same errors. */
int ppcc_plan_choose_split(int *out_first, ppcc_step_result *out_res,
			   ppcc_arena *a, const ppcc_config *cfg, ppcc_diag *d);

/* One given split of cfg (first[s] for each of the p x v stages),
 * scheduled and simulated as ppcc_plan_build does its own; *out_fits is 1
 * when every rank's simulated peak is within its device's memory.
 * PPCC_EINPUT for a split that is not one (no diagnostic). */
int ppcc_plan_split(ppcc_plan_variant *out, int *out_fits, ppcc_arena *a,
		    const ppcc_config *cfg, const int *first, ppcc_diag *d);

#endif
