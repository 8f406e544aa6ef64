/*
 * ppcc/schedule.h - the compiled pipeline schedule, as the runtime and the
 * headers that `ppcc plan -f header` generates see it.
 *
 * A schedule is, per pipeline rank, an ordered list of actions: compute
 * (F, B, or the split backward I then W), point-to-point communication
 * (SEND_F, RECV_F, SEND_B, RECV_B), OVERLAP_F_B, which marks the two
 * compute actions right after it as one overlapped pair (DualPipeV),
 * and, when the pipeline has data-parallel replicas, the collectives
 * REDUCE_GRAD, or under ZeRO REDUCE_SCATTER_GRAD and ALL_GATHER_PARAM
 * (ZeRO 1 and 2) or UNSHARD_PARAM (ZeRO-3).
 * Stages are global virtual stage
 * indices: with v chunks per rank there are p*v stages, and the stage
 * table says where each runs: stages[s].rank is the one source of
 * placement (looped, stage s on rank s % p, for GPipe, 1F1B and the
 * interleaved kinds; the V of ZB-V and DualPipeV, rank r holding stages r
 * and 2p-1-r; or any other), and stages[s].chunk is the stage's position
 * among its rank's stages in increasing stage order.  Every rank holds v
 * stages.  Stage s and stage s+1 on the same rank pass their tensors
 * without communication.
 *
 * Semantics a runtime must give the actions (and that `ppcc check`
 * verifies with a dry run):
 *   - a rank runs its actions in list order;
 *   - SEND_* never waits for the peer: it hands the tensor to the transport
 *     and the rank goes on (the runtime may post it in a group with the
 *     receives around it, as ncclGroupStart/End or MPI_Isend do);
 *   - RECV_* completes when the matching message has arrived; the runtime
 *     may post it earlier than its place in the list;
 *   - I(s, mb) computes the input gradient, which SEND_B carries to stage
 *     s-1, and keeps what W(s, mb) needs; W sends nothing;
 *   - OVERLAP_F_B(s, mb) is followed at once by F(s, mb) and then by a B
 *     (or I) of another stage of the same rank: the pair's halves, which
 *     the rank may run concurrently (DualPipe overlaps one's compute with
 *     the other's communication) or, as libppcc_rt does, F then B.  The
 *     receives of both halves come before the marker and their sends
 *     after the pair; the marker itself computes and sends nothing
 *     (peer -1, bytes 0).  Format version 2; version 1 has no pairs;
 *   - SEND_F of stage s, microbatch mb matches RECV_F of stage s+1, mb;
 *     SEND_B of stage s, mb matches RECV_B of stage s-1, mb; matching is by
 *     (kind, stage, microbatch), never by arrival order;
 *   - REDUCE_GRAD(s, k) (version 3) sums bucket k of stage s's weight
 *     gradients over the stage's data-parallel group (the d replicas of
 *     the rank, each running this same list): its `mb` field holds the
 *     bucket k, `bytes` the bucket's gradient bytes on one device, peer
 *     is -1.  It never waits: it launches the reduction, which runs on
 *     the rank's communication channel while the rank computes on, and
 *     the step ends once every reduction launched has completed.  The
 *     compiler places one per (stage, bucket), buckets of a stage in
 *     increasing order, right after the action that completes the
 *     stage's gradients (its last B, or W of a split backward); every
 *     replica of a rank enters the same collectives in the same order
 *     because they run the same list.
 *   - REDUCE_SCATTER_GRAD(s, k) (version 4) replaces REDUCE_GRAD in a
 *     plan with ZeRO >= 1 (the optimizer state sharded over the
 *     replicas): placed as REDUCE_GRAD is, it leaves on each replica
 *     only the reduced shard of bucket k that replica owns.  A bucket
 *     of n values is cut into d contiguous shards of n / d values
 *     (integer division), replica i owning shard i and the last replica
 *     also the n % d values left; `bytes` is the bucket's gradient
 *     bytes on one device.  The trainer's optimizer then updates only
 *     its own shard of the parameters, after the step;
 *   - ALL_GATHER_PARAM(s, k) (version 4, ZeRO 1 and 2) gathers bucket k
 *     of stage s's parameters: every replica's shard (the one its
 *     optimizer updated after the previous step) to every replica, so
 *     they all hold the whole bucket again.  The compiler places one
 *     per bucket of each REDUCE_SCATTER_GRAD, at the start of the
 *     rank's list, before anything else (the step's prologue): the
 *     rank's stages in the order of their first forward, buckets in
 *     increasing order; `bytes` is the bucket's parameter bytes on one
 *     device (16-bit weights), peer -1.  It never waits, but a stage's
 *     first compute (F, B, I or W) waits for that stage's gathers and
 *     the collectives listed before them (so every parameter is
 *     gathered before its first use, and the later stages' gathers
 *     overlap the first stage's forwards);
 *   - UNSHARD_PARAM(s, k) (version 5, ZeRO-3: the parameters too are
 *     sharded over the replicas) gathers bucket k of stage s's 16-bit
 *     parameters (the shards every replica holds) for one compute of
 *     stage s, into a buffer the rank frees (reshards) when that
 *     compute ends; `mb` is the bucket, `bytes` the bucket's parameter
 *     bytes on one device, peer -1.  Each F, B and I of the stage
 *     (not W, which needs no weights) has its group: the stage's
 *     buckets 0, 1, ... in order, one after another in the list.  The
 *     groups of a rank are listed in the order of the computes they
 *     serve: the k-th group serves the rank's k-th F, B or I, which
 *     waits for that group's gathers (and so, the channel running in
 *     list order, for every collective listed before them) and for
 *     nothing else.  It never waits itself: it runs on the rank's
 *     communication channel.  The compiler lists the groups of the
 *     rank's first two computes at the start of its list and the
 *     group of each later compute right after the compute two before
 *     it (prefetching one: a gather runs while the previous compute
 *     does), or, where that compute is the F of an overlapped pair,
 *     right after the pair; so a rank holds at most two groups'
 *     buffers at once (the one its compute uses and the one
 *     prefetched), which the validator checks: a group may start only
 *     while at most one is waiting for its compute.  Under ZeRO-3
 *     every backward (each B, or W of a split backward) is followed by
 *     the stage's REDUCE_SCATTER_GRAD actions (the full gradients are
 *     not kept from one microbatch to the next): each leaves on each
 *     replica the reduced shard of the gradients that backward added,
 *     which the replica adds to its own; the gathers come before the
 *     reduce-scatters where both follow one compute.  There is no
 *     ALL_GATHER_PARAM: the next step's first gathers read the shards
 *     the optimizers updated.
 *
 * Everything here is plain data with fixed-width fields, so a generated
 * header can hold it as `static const` arrays.  This header compiles alone
 * as C11 and as C++.
 */
#ifndef PPCC_SCHEDULE_H
#define PPCC_SCHEDULE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The newest format this header describes.  A schedule carries the
 * oldest version that holds it: 1, 2 once it has an overlapped pair
 * (OVERLAP_F_B), 3 once it has a REDUCE_GRAD, 4 once it has a
 * REDUCE_SCATTER_GRAD or an ALL_GATHER_PARAM, 5 once it has an
 * UNSHARD_PARAM (ZeRO-3); the versions share every type and layout, so
 * a reader of version 5 reads them all. */
#define PPCC_SCHEDULE_VERSION 5

/* Marks the functions the installed libraries export; every other symbol
 * of libppcc and libppcc_rt is built hidden (-fvisibility=hidden). */
#ifndef PPCC_API
#if defined(__GNUC__) || defined(__clang__)
#define PPCC_API __attribute__((visibility("default")))
#else
#define PPCC_API
#endif
#endif

typedef enum ppcc_op {
	PPCC_OP_F = 0,      /* forward of (stage, mb) */
	PPCC_OP_B = 1,      /* full backward: input and weight gradients */
	PPCC_OP_I = 2,      /* backward, input gradient only */
	PPCC_OP_W = 3,      /* backward, weight gradient only (after I) */
	PPCC_OP_SEND_F = 4, /* send stage's activation to stage + 1 */
	PPCC_OP_RECV_F = 5, /* receive stage's input from stage - 1 */
	PPCC_OP_SEND_B = 6, /* send stage's input gradient to stage - 1 */
	PPCC_OP_RECV_B = 7, /* receive stage's output gradient from stage + 1 */
	PPCC_OP_OVERLAP_F_B = 8, /* the next F(stage, mb) and B: one pair */
	PPCC_OP_REDUCE_GRAD = 9, /* reduce stage's gradient bucket mb (version 3) */
	PPCC_OP_REDUCE_SCATTER_GRAD = 10, /* reduce-scatter bucket mb (version 4) */
	PPCC_OP_ALL_GATHER_PARAM = 11, /* all-gather parameter bucket mb (version 4) */
	PPCC_OP_UNSHARD_PARAM = 12 /* gather bucket mb for one compute (version 5) */
} ppcc_op;

#define PPCC_OP_COUNT 13

typedef enum ppcc_schedule_kind {
	PPCC_SCHED_GPIPE = 0,
	PPCC_SCHED_1F1B = 1,
	PPCC_SCHED_INTERLEAVED = 2,
	PPCC_SCHED_ZB_H1 = 3,          /* zero bubble, handcrafted, p * M_B */
	PPCC_SCHED_ZB_H2 = 4,          /* zero bubble, handcrafted, (2p-1) * M_B */
	PPCC_SCHED_ZB_V = 5,           /* zero bubble, V placement */
	PPCC_SCHED_ZB_INTERLEAVED = 6, /* ZB-1P on a looped placement */
	PPCC_SCHED_AUTO = 7,           /* the zero-bubble heuristic's order */
	PPCC_SCHED_DUALPIPE_V = 8      /* DualPipeV: V placement, F&B pairs */
} ppcc_schedule_kind;

#define PPCC_SCHED_COUNT 9

/* One action.  peer is -1 and bytes 0 for compute; peer is -1 for the
 * collectives (REDUCE_GRAD, REDUCE_SCATTER_GRAD, ALL_GATHER_PARAM,
 * UNSHARD_PARAM), whose mb is the bucket. */
typedef struct ppcc_action {
	int32_t op;    /* ppcc_op */
	int32_t stage; /* global virtual stage */
	int32_t mb;    /* microbatch */
	int32_t peer;  /* rank at the other end of a SEND or RECV */
	uint64_t bytes;
} ppcc_action;

typedef struct ppcc_rank_schedule {
	int32_t rank;
	int32_t n_actions;
	const ppcc_action *actions;
} ppcc_rank_schedule;

/* A (virtual) stage: which layers it holds and on which rank it runs.
 * Layers are 0-based and inclusive, counted after repeats are expanded. */
typedef struct ppcc_stage_info {
	int32_t stage;
	int32_t rank;
	int32_t chunk;
	int32_t first_layer;
	int32_t last_layer;
	uint64_t recv_bytes; /* activation received per microbatch (0 on stage 0) */
	uint64_t send_bytes; /* activation sent per microbatch (0 on the last stage) */
} ppcc_stage_info;

typedef struct ppcc_schedule {
	int32_t version;       /* 1 to 5 (PPCC_SCHEDULE_VERSION, above) */
	int32_t kind;          /* ppcc_schedule_kind */
	int32_t n_ranks;       /* p */
	int32_t n_chunks;      /* v */
	int32_t n_stages;      /* p * v */
	int32_t n_microbatches;/* m */
	const ppcc_stage_info *stages; /* n_stages entries, by stage */
	const ppcc_rank_schedule *ranks; /* n_ranks entries, by rank */
	uint64_t fingerprint;  /* ppcc_schedule_fingerprint() of the above */
} ppcc_schedule;

#ifdef __cplusplus
}
#endif

#endif
