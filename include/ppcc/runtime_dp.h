/*
 * ppcc/runtime_dp.h - data parallelism and ZeRO in the runtime: d
 * replicas of each pipeline rank, their gradient buckets reduced in
 * replica order, ZeRO's shards and parameter gathers.
 *
 * ppcc/runtime.h includes this header at its end, so a trainer needs
 * only that one; it also compiles alone (it includes ppcc/runtime.h for
 * ppcc_rt, ppcc_rt_dp_group and the statuses).  A group is for the
 * local transport (options.dp_group); over mpi and nccl the replicas
 * are the world's grid (options.data_parallel).  Each replica registers
 * the same buckets in the same order; a collective waits within the
 * runtime's timeout and fails every replica when one fails.  What blocks
 * and the bits each transport sums to: ppcc_runtime(3), "Data
 * parallelism" and "ZeRO", and doc/design/runtime-reduce.md.
 *
 * This header compiles alone as C11 and as C++.
 */
#ifndef PPCC_RUNTIME_DP_H
#define PPCC_RUNTIME_DP_H

#include <stddef.h>

#include "ppcc/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- data parallelism ------------------------------------------------------
 *
 * A trainer that runs d replicas of the pipeline (each on its own shard
 * of the global batch) joins the d runtimes of each pipeline rank in one
 * group and registers, per stage it owns, its gradient buffers as
 * numbered buckets.  In every step, as the rank's last backward (B or W)
 * of a stage returns, the runtime launches the reduction of that stage's
 * buckets in bucket order, without blocking: each becomes the sum over
 * the replicas, in replica order (((g0 + g1) + g2) + ..., the same bits
 * on every run), computed by the group's own thread while the replicas
 * compute on.  ppcc_rt_step returns once every reduction of the step is
 * done (each wait bounded by the timeout), so the trainer's optimizer
 * step sees the summed gradients.  Every replica must register the same
 * buckets: a replica whose k-th reduction is another (stage, bucket,
 * size) fails with PPCC_RT_EMISMATCH; a replica that fails stops the
 * others' reductions (PPCC_RT_EPEER), and a wait that times out names
 * the reduction (stage, bucket, sequence number) and the replicas that
 * had not posted it.
 *
 * Over mpi (options.data_parallel = d, version 3) there is no group:
 * world rank w is pipeline rank w / d of replica w % d, and each
 * reduction is a reduce-scatter and all-gather of point-to-point
 * messages adding the replicas in the same replica order (the same bits
 * as the local group), advanced whenever the rank is in the runtime.
 * Over nccl the same grid; the buckets are device memory, and each
 * reduction is an in-place ncclAllReduce on a stream of its own, after
 * the compute stream's work so far (NCCL's fixed order: the same bits
 * on every run of one configuration, for d = 2 the local group's). */

/* A group of n_replicas members; *out is the caller's to free after
 * every member runtime is freed. */
PPCC_API int ppcc_rt_dp_group_new(ppcc_rt_dp_group **out, int n_replicas);
PPCC_API void ppcc_rt_dp_group_free(ppcc_rt_dp_group *g);

/* Registers count doubles at grad (device memory over nccl) as bucket
 * `bucket` of `stage` (one of this rank's stages; each (stage, bucket)
 * once), on a runtime made with options.dp_group or
 * options.data_parallel.  grad must stay valid while the runtime
 * lives. */
PPCC_API int ppcc_rt_grad_register(ppcc_rt *rt, int stage, int bucket,
				   double *grad, size_t count);

/* ---- ZeRO: the optimizer state sharded over the replicas ----------------
 *
 * A schedule of a plan with ZeRO >= 1 (schedule version 4) reduces each
 * bucket with REDUCE_SCATTER_GRAD: when ppcc_rt_step returns, each
 * replica holds the sum over the replicas only of the shard of each
 * bucket it owns (the rest of its gradient buffer is left as its own
 * backward made it), and its optimizer updates only that shard of the
 * parameters.  The bucket of count values is cut into d contiguous
 * shards of count / d values (integer division), replica i owning shard
 * i and the last replica also the count % d left (ppcc_rt_dp_shard says
 * which).  Under ZeRO 1 and 2 the schedule opens each rank's list with
 * an ALL_GATHER_PARAM per bucket: the runtime gathers the registered
 * parameters (ppcc_rt_param_register) of every bucket, each replica's
 * shard to every replica, and each stage's first compute waits for that
 * stage's gathers (and the collectives posted before them), not for the
 * later stages', so every forward sees the parameters the replicas'
 * optimizers updated after the previous step.  The sums are added in
 * replica order, as the all-reduce's, and a gather copies bits: the
 * same bits as REDUCE_GRAD and an update of every value.  Over nccl a
 * reduce-scatter is an in-place ncclReduceScatter of the d x (count /
 * d) values and an ncclReduce of the rest to the last replica, a
 * gather an in-place ncclAllGather and an ncclBroadcast of the rest
 * from the last replica, on the reduction stream.
 *
 * Under ZeRO 3 (schedule version 5) there is no prologue: each
 * UNSHARD_PARAM launches its bucket's gather (of the registered
 * parameters, as ALL_GATHER_PARAM's) when its action comes, without
 * waiting for it to complete (a post may still wait, within the
 * timeout, for a message tag it reuses over mpi, or over nccl in the
 * first step for the replicas' descriptors to compare), and each F, B or
 * I waits for its own group (and the
 * collectives posted before it) before its callback runs.  Every
 * backward is followed by a reduce-scatter of the gradient it added (a
 * round): the runtime takes that gradient from the registered buffer,
 * zeroing it for the next backward, sums it over the replicas in
 * replica order and adds this replica's shard of the sum to its own,
 * rounds in the order of the stage's backwards; when ppcc_rt_step
 * returns the owned shard holds that sum and the rest of the buffer
 * zeros.  Over local and mpi both run on copies the runtime owns, so
 * no compute's parameters or gradients are written while it runs;
 * over nccl in place, the compute stream waiting for each round.
 *
 * Versioned like ppcc_rt_options: the caller sets version to the
 * PPCC_RT_SHARD_VERSION it was compiled with, and the runtime writes
 * only the fields that version has. */
#define PPCC_RT_SHARD_VERSION 1

typedef struct ppcc_rt_shard {
	int version;     /* PPCC_RT_SHARD_VERSION, set by the caller */
	int replica;     /* this runtime's replica, 0..replicas-1 */
	int replicas;    /* d */
	/* 1: the schedule reduce-scatters (ZeRO >= 1): only [offset,
	 * offset + count) of the bucket is reduced here, and the trainer
	 * updates only that; 0: it all-reduces, the shard is the whole
	 * bucket (offset 0, count the bucket's) */
	int sharded;
	size_t offset;   /* the shard's first value in the bucket */
	size_t count;    /* its values */
	size_t bucket_count; /* the bucket's values */
} ppcc_rt_shard;

/* The shard this replica owns of bucket `bucket` of `stage` (registered
 * with ppcc_rt_grad_register).  PPCC_RT_EINPUT without data parallelism,
 * for a bucket not registered, or a version out of [1,
 * PPCC_RT_SHARD_VERSION]. */
PPCC_API int ppcc_rt_dp_shard(ppcc_rt_shard *out, const ppcc_rt *rt,
			      int stage, int bucket);

/* Registers count doubles at param (device memory over nccl) as the
 * parameters of bucket `bucket` of `stage`, whose gradients were
 * registered with ppcc_rt_grad_register with the same count: what the
 * schedule's ALL_GATHER_PARAM and UNSHARD_PARAM actions gather.  param must stay valid
 * while the runtime lives.  PPCC_RT_EINPUT otherwise. */
PPCC_API int ppcc_rt_param_register(ppcc_rt *rt, int stage, int bucket,
				    double *param, size_t count);

/* Between steps: gathers every registered parameter bucket now, each
 * replica's shard to every replica, and waits for it (bounded by the
 * timeout), so that every replica holds all the parameters: after the
 * last optimizer step of a ZeRO run (for a checkpoint, an evaluation,
 * the final weights), when the next step's prologue is not coming.
 * Collective: every replica calls it.  0 at once when no parameters
 * are registered; PPCC_RT_EINPUT without data parallelism; after a
 * failure, the failure's status (free the runtime). */
PPCC_API int ppcc_rt_dp_gather_params(ppcc_rt *rt);

/* The last step's collectives (reductions, and gathers of ZeRO 1, 2
 * and 3): *out_reduce_s the seconds they took, added
 * up (local: each from when the group's thread began it to its sum; mpi and
 * nccl: each from its post to when the rank saw it complete), *out_wait_s the
 * seconds the step waited for them, before the computes that wait for
 * gathers and after its last action: what compute
 * did not hide (it includes waiting for a slower replica to post).
 * PPCC_RT_EINPUT without data parallelism. */
PPCC_API int ppcc_rt_dp_stats(const ppcc_rt *rt, double *out_reduce_s,
			      double *out_wait_s);

#ifdef __cplusplus
}
#endif

#endif
