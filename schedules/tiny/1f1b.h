/*
 * Pipeline schedule compiled by ppcc 0.1.0 (`ppcc plan -f header`).
 * Generated: regenerate it rather than edit it.
 *
 * tiny_1f1b_stages[]          per virtual stage: rank, chunk, layers
 * tiny_1f1b_rank<N>_actions[] the ordered actions of rank N
 * tiny_1f1b_ranks[]           per rank: its action count and array
 * tiny_1f1b_schedule          all of the above, with its fingerprint
 * tiny_1f1b_model_name, tiny_1f1b_layer_names[]
 *
 * Names from the model file appear only in string literals.
 */
#ifndef TINY_1F1B_H
#define TINY_1F1B_H

#include <stddef.h>
#include <stdint.h>
#include <ppcc/schedule.h>

#if PPCC_SCHEDULE_VERSION < 1
#error "needs version 1 or later of <ppcc/schedule.h>"
#endif

#define TINY_1F1B_N_RANKS 4
#define TINY_1F1B_N_CHUNKS 1
#define TINY_1F1B_N_STAGES 4
#define TINY_1F1B_N_MICROBATCHES 8
#define TINY_1F1B_N_LAYERS 10
#define TINY_1F1B_MAX_ACTIONS 48 /* the longest rank */
#define TINY_1F1B_KIND PPCC_SCHED_1F1B
#define TINY_1F1B_FINGERPRINT UINT64_C(0x667b8a8ac795d0e7)

/* The simulated step (milliseconds) and idle share. */
#define TINY_1F1B_STEP_MS 176.79500000000002
#define TINY_1F1B_BUBBLE_FRACTION 0.33120280550920567
#define TINY_1F1B_BUBBLE_ANALYTIC 0.2727272727272727

static const char tiny_1f1b_model_name[] =
	"tiny";

static const char *const tiny_1f1b_layer_names[TINY_1F1B_N_LAYERS] = {
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
 * tiny_1f1b_stage_layer_names[s][0 .. last_layer - first_layer]. */
static const char *const *const tiny_1f1b_stage_layer_names[TINY_1F1B_N_STAGES] = {
	tiny_1f1b_layer_names + 0,
	tiny_1f1b_layer_names + 4,
	tiny_1f1b_layer_names + 6,
	tiny_1f1b_layer_names + 8
};

/* Layer indices, named after the layers (sanitized). */
enum {
	TINY_1F1B_LAYER_embed = 0,
	TINY_1F1B_LAYER_block = 1,
	TINY_1F1B_LAYER_block_2 = 2,
	TINY_1F1B_LAYER_block_3 = 3,
	TINY_1F1B_LAYER_block_4 = 4,
	TINY_1F1B_LAYER_block_5 = 5,
	TINY_1F1B_LAYER_block_6 = 6,
	TINY_1F1B_LAYER_block_7 = 7,
	TINY_1F1B_LAYER_block_8 = 8,
	TINY_1F1B_LAYER_head = 9
};

/* {stage, rank, chunk, first_layer, last_layer, recv_bytes, send_bytes} */
static const ppcc_stage_info tiny_1f1b_stages[TINY_1F1B_N_STAGES] = {
	{0, 0, 0, 0, 3, 0, UINT64_C(4000000)},
	{1, 1, 0, 4, 5, UINT64_C(4000000), UINT64_C(4000000)},
	{2, 2, 0, 6, 7, UINT64_C(4000000), UINT64_C(4000000)},
	{3, 3, 0, 8, 9, UINT64_C(4000000), 0}
};

/* rank 0: 32 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_1f1b_rank0_actions[32] = {
	{PPCC_OP_F, 0, 0, -1, 0},
	{PPCC_OP_SEND_F, 0, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 1, -1, 0},
	{PPCC_OP_SEND_F, 0, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 2, -1, 0},
	{PPCC_OP_SEND_F, 0, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 3, -1, 0},
	{PPCC_OP_SEND_F, 0, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 0, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 0, -1, 0},
	{PPCC_OP_F, 0, 4, -1, 0},
	{PPCC_OP_SEND_F, 0, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 0, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 1, -1, 0},
	{PPCC_OP_F, 0, 5, -1, 0},
	{PPCC_OP_SEND_F, 0, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 0, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 2, -1, 0},
	{PPCC_OP_F, 0, 6, -1, 0},
	{PPCC_OP_SEND_F, 0, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 0, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 3, -1, 0},
	{PPCC_OP_F, 0, 7, -1, 0},
	{PPCC_OP_SEND_F, 0, 7, 1, UINT64_C(4000000)},
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
static const ppcc_action tiny_1f1b_rank1_actions[48] = {
	{PPCC_OP_RECV_F, 1, 0, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 0, -1, 0},
	{PPCC_OP_SEND_F, 1, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 1, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 1, -1, 0},
	{PPCC_OP_SEND_F, 1, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 2, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 2, -1, 0},
	{PPCC_OP_SEND_F, 1, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 0, -1, 0},
	{PPCC_OP_SEND_B, 1, 0, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 3, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 3, -1, 0},
	{PPCC_OP_SEND_F, 1, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 1, -1, 0},
	{PPCC_OP_SEND_B, 1, 1, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 4, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 4, -1, 0},
	{PPCC_OP_SEND_F, 1, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 2, -1, 0},
	{PPCC_OP_SEND_B, 1, 2, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 5, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 5, -1, 0},
	{PPCC_OP_SEND_F, 1, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 3, -1, 0},
	{PPCC_OP_SEND_B, 1, 3, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 6, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 6, -1, 0},
	{PPCC_OP_SEND_F, 1, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 4, -1, 0},
	{PPCC_OP_SEND_B, 1, 4, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 7, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 7, -1, 0},
	{PPCC_OP_SEND_F, 1, 7, 2, UINT64_C(4000000)},
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
static const ppcc_action tiny_1f1b_rank2_actions[48] = {
	{PPCC_OP_RECV_F, 2, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 0, -1, 0},
	{PPCC_OP_SEND_F, 2, 0, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 1, -1, 0},
	{PPCC_OP_SEND_F, 2, 1, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 0, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 0, -1, 0},
	{PPCC_OP_SEND_B, 2, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 2, -1, 0},
	{PPCC_OP_SEND_F, 2, 2, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 1, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 1, -1, 0},
	{PPCC_OP_SEND_B, 2, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 3, -1, 0},
	{PPCC_OP_SEND_F, 2, 3, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 2, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 2, -1, 0},
	{PPCC_OP_SEND_B, 2, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 4, -1, 0},
	{PPCC_OP_SEND_F, 2, 4, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 3, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 3, -1, 0},
	{PPCC_OP_SEND_B, 2, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 5, -1, 0},
	{PPCC_OP_SEND_F, 2, 5, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 4, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 4, -1, 0},
	{PPCC_OP_SEND_B, 2, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 6, -1, 0},
	{PPCC_OP_SEND_F, 2, 6, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 5, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 5, -1, 0},
	{PPCC_OP_SEND_B, 2, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 7, -1, 0},
	{PPCC_OP_SEND_F, 2, 7, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 6, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 6, -1, 0},
	{PPCC_OP_SEND_B, 2, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 7, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 7, -1, 0},
	{PPCC_OP_SEND_B, 2, 7, 1, UINT64_C(4000000)}
};

/* rank 3: 32 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_1f1b_rank3_actions[32] = {
	{PPCC_OP_RECV_F, 3, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 0, -1, 0},
	{PPCC_OP_B, 3, 0, -1, 0},
	{PPCC_OP_SEND_B, 3, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 1, -1, 0},
	{PPCC_OP_B, 3, 1, -1, 0},
	{PPCC_OP_SEND_B, 3, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 2, -1, 0},
	{PPCC_OP_B, 3, 2, -1, 0},
	{PPCC_OP_SEND_B, 3, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 3, -1, 0},
	{PPCC_OP_B, 3, 3, -1, 0},
	{PPCC_OP_SEND_B, 3, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 4, -1, 0},
	{PPCC_OP_B, 3, 4, -1, 0},
	{PPCC_OP_SEND_B, 3, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 5, -1, 0},
	{PPCC_OP_B, 3, 5, -1, 0},
	{PPCC_OP_SEND_B, 3, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 6, -1, 0},
	{PPCC_OP_B, 3, 6, -1, 0},
	{PPCC_OP_SEND_B, 3, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 7, -1, 0},
	{PPCC_OP_B, 3, 7, -1, 0},
	{PPCC_OP_SEND_B, 3, 7, 2, UINT64_C(4000000)}
};

static const ppcc_rank_schedule tiny_1f1b_ranks[TINY_1F1B_N_RANKS] = {
	{0, 32, tiny_1f1b_rank0_actions},
	{1, 48, tiny_1f1b_rank1_actions},
	{2, 48, tiny_1f1b_rank2_actions},
	{3, 32, tiny_1f1b_rank3_actions}
};

static const ppcc_schedule tiny_1f1b_schedule = {
	1, /* version */
	PPCC_SCHED_1F1B,
	TINY_1F1B_N_RANKS,
	TINY_1F1B_N_CHUNKS,
	TINY_1F1B_N_STAGES,
	TINY_1F1B_N_MICROBATCHES,
	tiny_1f1b_stages,
	tiny_1f1b_ranks,
	TINY_1F1B_FINGERPRINT
};

/* simulated busy time per rank (milliseconds) */
static const double tiny_1f1b_busy_ms[TINY_1F1B_N_RANKS] = {
	156.0,
	96.0,
	96.0,
	112.0
};

/* simulated idle time per rank (milliseconds) */
static const double tiny_1f1b_idle_ms[TINY_1F1B_N_RANKS] = {
	18.635000000000016,
	76.47500000000002,
	76.47500000000002,
	62.63500000000002
};

/* simulated peak memory per device of each rank */
static const double tiny_1f1b_peak_memory_bytes[TINY_1F1B_N_RANKS] = {
	2356000000.0,
	900000000.0,
	840000000.0,
	1350000000.0
};

#endif /* TINY_1F1B_H */
