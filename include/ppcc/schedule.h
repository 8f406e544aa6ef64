/*
 * ppcc/schedule.h - the compiled pipeline schedule, as the runtime and the
 * headers that `ppcc plan -f header` generates see it.
 *
 * A schedule is, per pipeline rank, an ordered list of actions: compute
 * (F, B, or the split backward I then W), point-to-point communication
 * (SEND_F, RECV_F, SEND_B, RECV_B), OVERLAP_F_B (DualPipeV's pair) and the
 * data-parallel collectives.  Stages are global virtual stage indices
 * (p*v); stages[s].rank is the one source of placement, stages[s].chunk
 * the stage's position among its rank's v stages.  Stage s sends to
 * stage s+1, except in DualPipe, whose stages [0, p) and [p, 2p) are two
 * pipelines (no message from stage p-1 to stage p), each running
 * n_microbatches of its own (doc/design/dualpipe.md).
 * What a runtime must give the actions (`ppcc check` verifies them with a
 * dry run; ppcc(5) and doc/design/schedule-ir.md state each in full): a
 * rank runs its actions in list order; a SEND never waits for its peer;
 * a RECV completes when its message has arrived; matching is by (kind,
 * stage, microbatch), never by arrival order; a collective never waits
 * itself, and a compute waits for its stage's gathers listed before it
 * (the k-th UNSHARD_PARAM group serving the rank's k-th F, B or I).  The
 * shard rule: a bucket of n values is cut into d shards of n / d values,
 * replica i owning shard i and the last replica also the n % d left.
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
	PPCC_SCHED_DUALPIPE_V = 8,     /* DualPipeV: V placement, F&B pairs */
	PPCC_SCHED_DUALPIPE = 9,       /* DualPipe: two pipelines, one per
					* direction, on the V placement */
	PPCC_SCHED_COMBINED_1F1B = 10  /* Megatron-LM's 1F1B (interleaved
					* with p > 1) whose steady F and B
					* run as F&B pairs */
} ppcc_schedule_kind;

#define PPCC_SCHED_COUNT 11

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
