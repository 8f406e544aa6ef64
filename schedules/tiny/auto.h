/*
 * Pipeline schedule compiled by ppcc 0.1.0 (`ppcc plan -f header`).
 * Generated: regenerate it rather than edit it.
 *
 * tiny_auto_stages[]          per virtual stage: rank, chunk, layers
 * tiny_auto_rank<N>_actions[] the ordered actions of rank N
 * tiny_auto_ranks[]           per rank: its action count and array
 * tiny_auto_schedule          all of the above, with its fingerprint
 * tiny_auto_model_name, tiny_auto_layer_names[]
 *
 * Names from the model file appear only in string literals.
 */
#ifndef TINY_AUTO_H
#define TINY_AUTO_H

#include <stddef.h>
#include <stdint.h>
#include <ppcc/schedule.h>

#if PPCC_SCHEDULE_VERSION < 1
#error "needs version 1 or later of <ppcc/schedule.h>"
#endif

#define TINY_AUTO_N_RANKS 4
#define TINY_AUTO_N_CHUNKS 1
#define TINY_AUTO_N_STAGES 4
#define TINY_AUTO_N_MICROBATCHES 8
#define TINY_AUTO_N_LAYERS 10
#define TINY_AUTO_MAX_ACTIONS 56 /* the longest rank */
#define TINY_AUTO_KIND PPCC_SCHED_ZB_H2
#define TINY_AUTO_FINGERPRINT UINT64_C(0x4df891ae2c3529ae)

/* The simulated step (milliseconds) and idle share. */
#define TINY_AUTO_STEP_MS 152.82000000000005
#define TINY_AUTO_BUBBLE_FRACTION 0.22627928281638557

static const char tiny_auto_model_name[] =
	"tiny";

static const char *const tiny_auto_layer_names[TINY_AUTO_N_LAYERS] = {
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
 * tiny_auto_stage_layer_names[s][0 .. last_layer - first_layer]. */
static const char *const *const tiny_auto_stage_layer_names[TINY_AUTO_N_STAGES] = {
	tiny_auto_layer_names + 0,
	tiny_auto_layer_names + 3,
	tiny_auto_layer_names + 6,
	tiny_auto_layer_names + 8
};

/* Layer indices, named after the layers (sanitized). */
enum {
	TINY_AUTO_LAYER_embed = 0,
	TINY_AUTO_LAYER_block = 1,
	TINY_AUTO_LAYER_block_2 = 2,
	TINY_AUTO_LAYER_block_3 = 3,
	TINY_AUTO_LAYER_block_4 = 4,
	TINY_AUTO_LAYER_block_5 = 5,
	TINY_AUTO_LAYER_block_6 = 6,
	TINY_AUTO_LAYER_block_7 = 7,
	TINY_AUTO_LAYER_block_8 = 8,
	TINY_AUTO_LAYER_head = 9
};

/* {stage, rank, chunk, first_layer, last_layer, recv_bytes, send_bytes} */
static const ppcc_stage_info tiny_auto_stages[TINY_AUTO_N_STAGES] = {
	{0, 0, 0, 0, 2, 0, UINT64_C(4000000)},
	{1, 1, 0, 3, 5, UINT64_C(4000000), UINT64_C(4000000)},
	{2, 2, 0, 6, 7, UINT64_C(4000000), UINT64_C(4000000)},
	{3, 3, 0, 8, 9, UINT64_C(4000000), 0}
};

/* rank 0: 40 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_auto_rank0_actions[40] = {
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
	{PPCC_OP_RECV_B, 0, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_I, 0, 0, -1, 0},
	{PPCC_OP_W, 0, 0, -1, 0},
	{PPCC_OP_RECV_B, 0, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_I, 0, 1, -1, 0},
	{PPCC_OP_F, 0, 7, -1, 0},
	{PPCC_OP_SEND_F, 0, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 0, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_I, 0, 2, -1, 0},
	{PPCC_OP_W, 0, 1, -1, 0},
	{PPCC_OP_RECV_B, 0, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_I, 0, 3, -1, 0},
	{PPCC_OP_W, 0, 2, -1, 0},
	{PPCC_OP_RECV_B, 0, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_I, 0, 4, -1, 0},
	{PPCC_OP_W, 0, 3, -1, 0},
	{PPCC_OP_RECV_B, 0, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_I, 0, 5, -1, 0},
	{PPCC_OP_W, 0, 4, -1, 0},
	{PPCC_OP_RECV_B, 0, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_I, 0, 6, -1, 0},
	{PPCC_OP_W, 0, 5, -1, 0},
	{PPCC_OP_W, 0, 6, -1, 0},
	{PPCC_OP_RECV_B, 0, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_I, 0, 7, -1, 0},
	{PPCC_OP_W, 0, 7, -1, 0}
};

/* rank 1: 56 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_auto_rank1_actions[56] = {
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
	{PPCC_OP_RECV_B, 1, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_I, 1, 0, -1, 0},
	{PPCC_OP_SEND_B, 1, 0, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 5, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 5, -1, 0},
	{PPCC_OP_SEND_F, 1, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_I, 1, 1, -1, 0},
	{PPCC_OP_SEND_B, 1, 1, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 6, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 6, -1, 0},
	{PPCC_OP_SEND_F, 1, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_I, 1, 2, -1, 0},
	{PPCC_OP_SEND_B, 1, 2, 0, UINT64_C(4000000)},
	{PPCC_OP_W, 1, 0, -1, 0},
	{PPCC_OP_RECV_B, 1, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_I, 1, 3, -1, 0},
	{PPCC_OP_SEND_B, 1, 3, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 7, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 7, -1, 0},
	{PPCC_OP_SEND_F, 1, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_I, 1, 4, -1, 0},
	{PPCC_OP_SEND_B, 1, 4, 0, UINT64_C(4000000)},
	{PPCC_OP_W, 1, 1, -1, 0},
	{PPCC_OP_RECV_B, 1, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_I, 1, 5, -1, 0},
	{PPCC_OP_SEND_B, 1, 5, 0, UINT64_C(4000000)},
	{PPCC_OP_W, 1, 2, -1, 0},
	{PPCC_OP_RECV_B, 1, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_I, 1, 6, -1, 0},
	{PPCC_OP_SEND_B, 1, 6, 0, UINT64_C(4000000)},
	{PPCC_OP_W, 1, 3, -1, 0},
	{PPCC_OP_W, 1, 4, -1, 0},
	{PPCC_OP_RECV_B, 1, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_I, 1, 7, -1, 0},
	{PPCC_OP_SEND_B, 1, 7, 0, UINT64_C(4000000)},
	{PPCC_OP_W, 1, 5, -1, 0},
	{PPCC_OP_W, 1, 6, -1, 0},
	{PPCC_OP_W, 1, 7, -1, 0}
};

/* rank 2: 56 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_auto_rank2_actions[56] = {
	{PPCC_OP_RECV_F, 2, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 0, -1, 0},
	{PPCC_OP_SEND_F, 2, 0, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 1, -1, 0},
	{PPCC_OP_SEND_F, 2, 1, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 2, -1, 0},
	{PPCC_OP_SEND_F, 2, 2, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 0, 3, UINT64_C(4000000)},
	{PPCC_OP_I, 2, 0, -1, 0},
	{PPCC_OP_SEND_B, 2, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 3, -1, 0},
	{PPCC_OP_SEND_F, 2, 3, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 1, 3, UINT64_C(4000000)},
	{PPCC_OP_I, 2, 1, -1, 0},
	{PPCC_OP_SEND_B, 2, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 4, -1, 0},
	{PPCC_OP_SEND_F, 2, 4, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 2, 3, UINT64_C(4000000)},
	{PPCC_OP_I, 2, 2, -1, 0},
	{PPCC_OP_SEND_B, 2, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 5, -1, 0},
	{PPCC_OP_SEND_F, 2, 5, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 3, 3, UINT64_C(4000000)},
	{PPCC_OP_I, 2, 3, -1, 0},
	{PPCC_OP_SEND_B, 2, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 6, -1, 0},
	{PPCC_OP_SEND_F, 2, 6, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 4, 3, UINT64_C(4000000)},
	{PPCC_OP_I, 2, 4, -1, 0},
	{PPCC_OP_SEND_B, 2, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_W, 2, 0, -1, 0},
	{PPCC_OP_RECV_B, 2, 5, 3, UINT64_C(4000000)},
	{PPCC_OP_I, 2, 5, -1, 0},
	{PPCC_OP_SEND_B, 2, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 7, -1, 0},
	{PPCC_OP_SEND_F, 2, 7, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 6, 3, UINT64_C(4000000)},
	{PPCC_OP_I, 2, 6, -1, 0},
	{PPCC_OP_SEND_B, 2, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_W, 2, 1, -1, 0},
	{PPCC_OP_W, 2, 2, -1, 0},
	{PPCC_OP_RECV_B, 2, 7, 3, UINT64_C(4000000)},
	{PPCC_OP_I, 2, 7, -1, 0},
	{PPCC_OP_SEND_B, 2, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_W, 2, 3, -1, 0},
	{PPCC_OP_W, 2, 4, -1, 0},
	{PPCC_OP_W, 2, 5, -1, 0},
	{PPCC_OP_W, 2, 6, -1, 0},
	{PPCC_OP_W, 2, 7, -1, 0}
};

/* rank 3: 40 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_auto_rank3_actions[40] = {
	{PPCC_OP_RECV_F, 3, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 0, -1, 0},
	{PPCC_OP_I, 3, 0, -1, 0},
	{PPCC_OP_SEND_B, 3, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 1, -1, 0},
	{PPCC_OP_I, 3, 1, -1, 0},
	{PPCC_OP_SEND_B, 3, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 2, -1, 0},
	{PPCC_OP_I, 3, 2, -1, 0},
	{PPCC_OP_SEND_B, 3, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 3, -1, 0},
	{PPCC_OP_I, 3, 3, -1, 0},
	{PPCC_OP_SEND_B, 3, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 4, -1, 0},
	{PPCC_OP_I, 3, 4, -1, 0},
	{PPCC_OP_SEND_B, 3, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 5, -1, 0},
	{PPCC_OP_I, 3, 5, -1, 0},
	{PPCC_OP_SEND_B, 3, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 6, -1, 0},
	{PPCC_OP_I, 3, 6, -1, 0},
	{PPCC_OP_SEND_B, 3, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_W, 3, 0, -1, 0},
	{PPCC_OP_RECV_F, 3, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 7, -1, 0},
	{PPCC_OP_I, 3, 7, -1, 0},
	{PPCC_OP_SEND_B, 3, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_W, 3, 1, -1, 0},
	{PPCC_OP_W, 3, 2, -1, 0},
	{PPCC_OP_W, 3, 3, -1, 0},
	{PPCC_OP_W, 3, 4, -1, 0},
	{PPCC_OP_W, 3, 5, -1, 0},
	{PPCC_OP_W, 3, 6, -1, 0},
	{PPCC_OP_W, 3, 7, -1, 0}
};

static const ppcc_rank_schedule tiny_auto_ranks[TINY_AUTO_N_RANKS] = {
	{0, 40, tiny_auto_rank0_actions},
	{1, 56, tiny_auto_rank1_actions},
	{2, 56, tiny_auto_rank2_actions},
	{3, 40, tiny_auto_rank3_actions}
};

static const ppcc_schedule tiny_auto_schedule = {
	1, /* version */
	PPCC_SCHED_ZB_H2,
	TINY_AUTO_N_RANKS,
	TINY_AUTO_N_CHUNKS,
	TINY_AUTO_N_STAGES,
	TINY_AUTO_N_MICROBATCHES,
	tiny_auto_stages,
	tiny_auto_ranks,
	TINY_AUTO_FINGERPRINT
};

/* simulated busy time per rank (milliseconds) */
static const double tiny_auto_busy_ms[TINY_AUTO_N_RANKS] = {
	108.0,
	144.0,
	96.0,
	112.0
};

/* simulated idle time per rank (milliseconds) */
static const double tiny_auto_idle_ms[TINY_AUTO_N_RANKS] = {
	42.66000000000005,
	4.500000000000053,
	52.50000000000006,
	38.66000000000005
};

/* simulated peak memory per device of each rank */
static const double tiny_auto_peak_memory_bytes[TINY_AUTO_N_RANKS] = {
	2068000000.0,
	1710000000.0,
	1140000000.0,
	1890000000.0
};

#endif /* TINY_AUTO_H */
