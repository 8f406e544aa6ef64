/*
 * Pipeline schedule compiled by ppcc 0.1.0 (`ppcc plan -f header`).
 * Generated: regenerate it rather than edit it.
 *
 * tiny_gpipe_stages[]          per virtual stage: rank, chunk, layers
 * tiny_gpipe_rank<N>_actions[] the ordered actions of rank N
 * tiny_gpipe_ranks[]           per rank: its action count and array
 * tiny_gpipe_schedule          all of the above, with its fingerprint
 * tiny_gpipe_model_name, tiny_gpipe_layer_names[]
 *
 * Names from the model file appear only in string literals.
 */
#ifndef TINY_GPIPE_H
#define TINY_GPIPE_H

#include <stddef.h>
#include <stdint.h>
#include <ppcc/schedule.h>

#if PPCC_SCHEDULE_VERSION < 1
#error "needs version 1 or later of <ppcc/schedule.h>"
#endif

#define TINY_GPIPE_N_RANKS 4
#define TINY_GPIPE_N_CHUNKS 1
#define TINY_GPIPE_N_STAGES 4
#define TINY_GPIPE_N_MICROBATCHES 8
#define TINY_GPIPE_N_LAYERS 10
#define TINY_GPIPE_MAX_ACTIONS 48 /* the longest rank */
#define TINY_GPIPE_KIND PPCC_SCHED_GPIPE
#define TINY_GPIPE_FINGERPRINT UINT64_C(0xde6ea6c0313d1f09)

/* The simulated step (milliseconds) and idle share. */
#define TINY_GPIPE_STEP_MS 188.08999999999997
#define TINY_GPIPE_BUBBLE_FRACTION 0.3713647721835291
#define TINY_GPIPE_BUBBLE_ANALYTIC 0.2727272727272727

static const char tiny_gpipe_model_name[] =
	"tiny";

static const char *const tiny_gpipe_layer_names[TINY_GPIPE_N_LAYERS] = {
	"embed",
	"block",
	"block",
	"block",
	"block",
	"block",
	"block",
	"block",
	"block",
	"head"
};

/* Stage s holds the layers
 * tiny_gpipe_stage_layer_names[s][0 .. last_layer - first_layer]. */
static const char *const *const tiny_gpipe_stage_layer_names[TINY_GPIPE_N_STAGES] = {
	tiny_gpipe_layer_names + 0,
	tiny_gpipe_layer_names + 2,
	tiny_gpipe_layer_names + 5,
	tiny_gpipe_layer_names + 8
};

/* Layer indices, named after the layers (sanitized). */
enum {
	TINY_GPIPE_LAYER_embed = 0,
	TINY_GPIPE_LAYER_block = 1,
	TINY_GPIPE_LAYER_block_2 = 2,
	TINY_GPIPE_LAYER_block_3 = 3,
	TINY_GPIPE_LAYER_block_4 = 4,
	TINY_GPIPE_LAYER_block_5 = 5,
	TINY_GPIPE_LAYER_block_6 = 6,
	TINY_GPIPE_LAYER_block_7 = 7,
	TINY_GPIPE_LAYER_block_8 = 8,
	TINY_GPIPE_LAYER_head = 9
};

/* {stage, rank, chunk, first_layer, last_layer, recv_bytes, send_bytes} */
static const ppcc_stage_info tiny_gpipe_stages[TINY_GPIPE_N_STAGES] = {
	{0, 0, 0, 0, 1, 0, UINT64_C(4000000)},
	{1, 1, 0, 2, 4, UINT64_C(4000000), UINT64_C(4000000)},
	{2, 2, 0, 5, 7, UINT64_C(4000000), UINT64_C(4000000)},
	{3, 3, 0, 8, 9, UINT64_C(4000000), 0}
};

/* rank 0: 32 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_gpipe_rank0_actions[32] = {
	{PPCC_OP_F, 0, 0, -1, 0},
	{PPCC_OP_SEND_F, 0, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 1, -1, 0},
	{PPCC_OP_SEND_F, 0, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 2, -1, 0},
	{PPCC_OP_SEND_F, 0, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 3, -1, 0},
	{PPCC_OP_SEND_F, 0, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 4, -1, 0},
	{PPCC_OP_SEND_F, 0, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 5, -1, 0},
	{PPCC_OP_SEND_F, 0, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 6, -1, 0},
	{PPCC_OP_SEND_F, 0, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 7, -1, 0},
	{PPCC_OP_SEND_F, 0, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 0, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 0, -1, 0},
	{PPCC_OP_RECV_B, 0, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 1, -1, 0},
	{PPCC_OP_RECV_B, 0, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 2, -1, 0},
	{PPCC_OP_RECV_B, 0, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 3, -1, 0},
	{PPCC_OP_RECV_B, 0, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 4, -1, 0},
	{PPCC_OP_RECV_B, 0, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 5, -1, 0},
	{PPCC_OP_RECV_B, 0, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 6, -1, 0},
	{PPCC_OP_RECV_B, 0, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 7, -1, 0}
};

/* rank 1: 48 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_gpipe_rank1_actions[48] = {
	{PPCC_OP_RECV_F, 1, 0, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 0, -1, 0},
	{PPCC_OP_SEND_F, 1, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 1, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 1, -1, 0},
	{PPCC_OP_SEND_F, 1, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 2, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 2, -1, 0},
	{PPCC_OP_SEND_F, 1, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 3, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 3, -1, 0},
	{PPCC_OP_SEND_F, 1, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 4, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 4, -1, 0},
	{PPCC_OP_SEND_F, 1, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 5, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 5, -1, 0},
	{PPCC_OP_SEND_F, 1, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 6, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 6, -1, 0},
	{PPCC_OP_SEND_F, 1, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 7, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 7, -1, 0},
	{PPCC_OP_SEND_F, 1, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 0, -1, 0},
	{PPCC_OP_SEND_B, 1, 0, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 1, -1, 0},
	{PPCC_OP_SEND_B, 1, 1, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 2, -1, 0},
	{PPCC_OP_SEND_B, 1, 2, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 3, -1, 0},
	{PPCC_OP_SEND_B, 1, 3, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 4, -1, 0},
	{PPCC_OP_SEND_B, 1, 4, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 5, -1, 0},
	{PPCC_OP_SEND_B, 1, 5, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 6, -1, 0},
	{PPCC_OP_SEND_B, 1, 6, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 7, -1, 0},
	{PPCC_OP_SEND_B, 1, 7, 0, UINT64_C(4000000)}
};

/* rank 2: 48 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_gpipe_rank2_actions[48] = {
	{PPCC_OP_RECV_F, 2, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 0, -1, 0},
	{PPCC_OP_SEND_F, 2, 0, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 1, -1, 0},
	{PPCC_OP_SEND_F, 2, 1, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 2, -1, 0},
	{PPCC_OP_SEND_F, 2, 2, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 3, -1, 0},
	{PPCC_OP_SEND_F, 2, 3, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 4, -1, 0},
	{PPCC_OP_SEND_F, 2, 4, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 5, -1, 0},
	{PPCC_OP_SEND_F, 2, 5, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 6, -1, 0},
	{PPCC_OP_SEND_F, 2, 6, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 7, -1, 0},
	{PPCC_OP_SEND_F, 2, 7, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 0, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 0, -1, 0},
	{PPCC_OP_SEND_B, 2, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 1, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 1, -1, 0},
	{PPCC_OP_SEND_B, 2, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 2, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 2, -1, 0},
	{PPCC_OP_SEND_B, 2, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 3, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 3, -1, 0},
	{PPCC_OP_SEND_B, 2, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 4, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 4, -1, 0},
	{PPCC_OP_SEND_B, 2, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 5, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 5, -1, 0},
	{PPCC_OP_SEND_B, 2, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 6, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 6, -1, 0},
	{PPCC_OP_SEND_B, 2, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 7, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 7, -1, 0},
	{PPCC_OP_SEND_B, 2, 7, 1, UINT64_C(4000000)}
};

/* rank 3: 32 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_gpipe_rank3_actions[32] = {
	{PPCC_OP_RECV_F, 3, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 0, -1, 0},
	{PPCC_OP_RECV_F, 3, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 1, -1, 0},
	{PPCC_OP_RECV_F, 3, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 2, -1, 0},
	{PPCC_OP_RECV_F, 3, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 3, -1, 0},
	{PPCC_OP_RECV_F, 3, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 4, -1, 0},
	{PPCC_OP_RECV_F, 3, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 5, -1, 0},
	{PPCC_OP_RECV_F, 3, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 6, -1, 0},
	{PPCC_OP_RECV_F, 3, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 7, -1, 0},
	{PPCC_OP_B, 3, 0, -1, 0},
	{PPCC_OP_SEND_B, 3, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 3, 1, -1, 0},
	{PPCC_OP_SEND_B, 3, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 3, 2, -1, 0},
	{PPCC_OP_SEND_B, 3, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 3, 3, -1, 0},
	{PPCC_OP_SEND_B, 3, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 3, 4, -1, 0},
	{PPCC_OP_SEND_B, 3, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 3, 5, -1, 0},
	{PPCC_OP_SEND_B, 3, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 3, 6, -1, 0},
	{PPCC_OP_SEND_B, 3, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 3, 7, -1, 0},
	{PPCC_OP_SEND_B, 3, 7, 2, UINT64_C(4000000)}
};

static const ppcc_rank_schedule tiny_gpipe_ranks[TINY_GPIPE_N_RANKS] = {
	{0, 32, tiny_gpipe_rank0_actions},
	{1, 48, tiny_gpipe_rank1_actions},
	{2, 48, tiny_gpipe_rank2_actions},
	{3, 32, tiny_gpipe_rank3_actions}
};

static const ppcc_schedule tiny_gpipe_schedule = {
	1, /* version */
	PPCC_SCHED_GPIPE,
	TINY_GPIPE_N_RANKS,
	TINY_GPIPE_N_CHUNKS,
	TINY_GPIPE_N_STAGES,
	TINY_GPIPE_N_MICROBATCHES,
	tiny_gpipe_stages,
	tiny_gpipe_ranks,
	TINY_GPIPE_FINGERPRINT
};

/* simulated busy time per rank (milliseconds) */
static const double tiny_gpipe_busy_ms[TINY_GPIPE_N_RANKS] = {
	60.0,
	144.0,
	144.0,
	112.0
};

/* simulated idle time per rank (milliseconds) */
static const double tiny_gpipe_idle_ms[TINY_GPIPE_N_RANKS] = {
	125.92999999999998,
	39.76999999999998,
	39.76999999999998,
	73.92999999999998
};

/* simulated peak memory per device of each rank */
static const double tiny_gpipe_peak_memory_bytes[TINY_GPIPE_N_RANKS] = {
	1532000000.0,
	1800000000.0,
	1800000000.0,
	1980000000.0
};

#endif /* TINY_GPIPE_H */
