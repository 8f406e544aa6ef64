/*
 * Pipeline schedule compiled by ppcc 0.1.0 (`ppcc plan -f header`).
 * Generated: regenerate it rather than edit it.
 *
 * tiny_dualpipe_v_stages[]          per virtual stage: rank, chunk, layers
 * tiny_dualpipe_v_rank<N>_actions[] the ordered actions of rank N
 * tiny_dualpipe_v_ranks[]           per rank: its action count and array
 * tiny_dualpipe_v_schedule          all of the above, with its fingerprint
 * tiny_dualpipe_v_model_name, tiny_dualpipe_v_layer_names[]
 *
 * Names from the model file appear only in string literals.
 */
#ifndef TINY_DUALPIPE_V_H
#define TINY_DUALPIPE_V_H

#include <stddef.h>
#include <stdint.h>
#include <ppcc/schedule.h>

#if PPCC_SCHEDULE_VERSION < 2
#error "needs version 2 or later of <ppcc/schedule.h>"
#endif

#define TINY_DUALPIPE_V_N_RANKS 4
#define TINY_DUALPIPE_V_N_CHUNKS 2
#define TINY_DUALPIPE_V_N_STAGES 8
#define TINY_DUALPIPE_V_N_MICROBATCHES 8
#define TINY_DUALPIPE_V_N_LAYERS 10
#define TINY_DUALPIPE_V_MAX_ACTIONS 108 /* the longest rank */
#define TINY_DUALPIPE_V_KIND PPCC_SCHED_DUALPIPE_V
#define TINY_DUALPIPE_V_FINGERPRINT UINT64_C(0x444b93ce41255cb4)

/* The simulated step (milliseconds) and idle share. */
#define TINY_DUALPIPE_V_STEP_MS 155.09000000000003
#define TINY_DUALPIPE_V_BUBBLE_FRACTION 0.21671287639435188

static const char tiny_dualpipe_v_model_name[] =
	"tiny";

static const char *const tiny_dualpipe_v_layer_names[TINY_DUALPIPE_V_N_LAYERS] = {
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
 * tiny_dualpipe_v_stage_layer_names[s][0 .. last_layer - first_layer]. */
static const char *const *const tiny_dualpipe_v_stage_layer_names[TINY_DUALPIPE_V_N_STAGES] = {
	tiny_dualpipe_v_layer_names + 0,
	tiny_dualpipe_v_layer_names + 2,
	tiny_dualpipe_v_layer_names + 3,
	tiny_dualpipe_v_layer_names + 4,
	tiny_dualpipe_v_layer_names + 6,
	tiny_dualpipe_v_layer_names + 7,
	tiny_dualpipe_v_layer_names + 8,
	tiny_dualpipe_v_layer_names + 9
};

/* Layer indices, named after the layers (sanitized). */
enum {
	TINY_DUALPIPE_V_LAYER_embed = 0,
	TINY_DUALPIPE_V_LAYER_block = 1,
	TINY_DUALPIPE_V_LAYER_block_2 = 2,
	TINY_DUALPIPE_V_LAYER_block_3 = 3,
	TINY_DUALPIPE_V_LAYER_block_4 = 4,
	TINY_DUALPIPE_V_LAYER_block_5 = 5,
	TINY_DUALPIPE_V_LAYER_block_6 = 6,
	TINY_DUALPIPE_V_LAYER_block_7 = 7,
	TINY_DUALPIPE_V_LAYER_block_8 = 8,
	TINY_DUALPIPE_V_LAYER_head = 9
};

/* {stage, rank, chunk, first_layer, last_layer, recv_bytes, send_bytes} */
static const ppcc_stage_info tiny_dualpipe_v_stages[TINY_DUALPIPE_V_N_STAGES] = {
	{0, 0, 0, 0, 1, 0, UINT64_C(4000000)},
	{1, 1, 0, 2, 2, UINT64_C(4000000), UINT64_C(4000000)},
	{2, 2, 0, 3, 3, UINT64_C(4000000), UINT64_C(4000000)},
	{3, 3, 0, 4, 5, UINT64_C(4000000), UINT64_C(4000000)},
	{4, 3, 1, 6, 6, UINT64_C(4000000), UINT64_C(4000000)},
	{5, 2, 1, 7, 7, UINT64_C(4000000), UINT64_C(4000000)},
	{6, 1, 1, 8, 8, UINT64_C(4000000), UINT64_C(4000000)},
	{7, 0, 1, 9, 9, UINT64_C(4000000), 0}
};

/* rank 0: 76 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_dualpipe_v_rank0_actions[76] = {
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
	{PPCC_OP_RECV_F, 7, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 7, 0, -1, 0},
	{PPCC_OP_I, 7, 0, -1, 0},
	{PPCC_OP_SEND_B, 7, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_W, 7, 0, -1, 0},
	{PPCC_OP_RECV_F, 7, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 7, 1, -1, 0},
	{PPCC_OP_I, 7, 1, -1, 0},
	{PPCC_OP_SEND_B, 7, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_W, 7, 1, -1, 0},
	{PPCC_OP_RECV_F, 7, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 7, 2, -1, 0},
	{PPCC_OP_I, 7, 2, -1, 0},
	{PPCC_OP_SEND_B, 7, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_W, 7, 2, -1, 0},
	{PPCC_OP_RECV_F, 7, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 7, 3, -1, 0},
	{PPCC_OP_OVERLAP_F_B, 0, 7, -1, 0},
	{PPCC_OP_F, 0, 7, -1, 0},
	{PPCC_OP_B, 7, 3, -1, 0},
	{PPCC_OP_SEND_F, 0, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 7, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 7, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 0, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 7, 4, -1, 0},
	{PPCC_OP_F, 7, 4, -1, 0},
	{PPCC_OP_B, 0, 0, -1, 0},
	{PPCC_OP_B, 7, 4, -1, 0},
	{PPCC_OP_SEND_B, 7, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 7, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 0, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 7, 5, -1, 0},
	{PPCC_OP_F, 7, 5, -1, 0},
	{PPCC_OP_B, 0, 1, -1, 0},
	{PPCC_OP_B, 7, 5, -1, 0},
	{PPCC_OP_SEND_B, 7, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 7, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 0, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 7, 6, -1, 0},
	{PPCC_OP_F, 7, 6, -1, 0},
	{PPCC_OP_B, 0, 2, -1, 0},
	{PPCC_OP_B, 7, 6, -1, 0},
	{PPCC_OP_SEND_B, 7, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 7, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 0, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 7, 7, -1, 0},
	{PPCC_OP_F, 7, 7, -1, 0},
	{PPCC_OP_B, 0, 3, -1, 0},
	{PPCC_OP_B, 7, 7, -1, 0},
	{PPCC_OP_SEND_B, 7, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 0, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_I, 0, 4, -1, 0},
	{PPCC_OP_W, 0, 4, -1, 0},
	{PPCC_OP_RECV_B, 0, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_I, 0, 5, -1, 0},
	{PPCC_OP_W, 0, 5, -1, 0},
	{PPCC_OP_RECV_B, 0, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_I, 0, 6, -1, 0},
	{PPCC_OP_W, 0, 6, -1, 0},
	{PPCC_OP_RECV_B, 0, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_I, 0, 7, -1, 0},
	{PPCC_OP_W, 0, 7, -1, 0}
};

/* rank 1: 108 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_dualpipe_v_rank1_actions[108] = {
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
	{PPCC_OP_RECV_F, 6, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 6, 0, -1, 0},
	{PPCC_OP_SEND_F, 6, 0, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 5, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 5, -1, 0},
	{PPCC_OP_SEND_F, 1, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 6, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 6, 1, -1, 0},
	{PPCC_OP_SEND_F, 6, 1, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 6, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 6, 0, 0, UINT64_C(4000000)},
	{PPCC_OP_I, 6, 0, -1, 0},
	{PPCC_OP_SEND_B, 6, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_W, 6, 0, -1, 0},
	{PPCC_OP_RECV_F, 6, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 6, 2, -1, 0},
	{PPCC_OP_SEND_F, 6, 2, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 6, 1, 0, UINT64_C(4000000)},
	{PPCC_OP_I, 6, 1, -1, 0},
	{PPCC_OP_SEND_B, 6, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_W, 6, 1, -1, 0},
	{PPCC_OP_RECV_F, 6, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 6, 3, -1, 0},
	{PPCC_OP_SEND_F, 6, 3, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 6, 2, 0, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 1, 6, -1, 0},
	{PPCC_OP_F, 1, 6, -1, 0},
	{PPCC_OP_B, 6, 2, -1, 0},
	{PPCC_OP_SEND_F, 1, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 6, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 6, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 6, 4, -1, 0},
	{PPCC_OP_F, 6, 4, -1, 0},
	{PPCC_OP_B, 1, 0, -1, 0},
	{PPCC_OP_SEND_F, 6, 4, 0, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 1, 0, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 7, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 6, 3, 0, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 1, 7, -1, 0},
	{PPCC_OP_F, 1, 7, -1, 0},
	{PPCC_OP_B, 6, 3, -1, 0},
	{PPCC_OP_SEND_F, 1, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 6, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 6, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 6, 5, -1, 0},
	{PPCC_OP_F, 6, 5, -1, 0},
	{PPCC_OP_B, 1, 1, -1, 0},
	{PPCC_OP_SEND_F, 6, 5, 0, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 1, 1, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 6, 4, 0, UINT64_C(4000000)},
	{PPCC_OP_B, 6, 4, -1, 0},
	{PPCC_OP_SEND_B, 6, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 6, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 6, 6, -1, 0},
	{PPCC_OP_F, 6, 6, -1, 0},
	{PPCC_OP_B, 1, 2, -1, 0},
	{PPCC_OP_SEND_F, 6, 6, 0, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 1, 2, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 6, 5, 0, UINT64_C(4000000)},
	{PPCC_OP_B, 6, 5, -1, 0},
	{PPCC_OP_SEND_B, 6, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 6, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 6, 7, -1, 0},
	{PPCC_OP_F, 6, 7, -1, 0},
	{PPCC_OP_B, 1, 3, -1, 0},
	{PPCC_OP_SEND_F, 6, 7, 0, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 1, 3, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 6, 6, 0, UINT64_C(4000000)},
	{PPCC_OP_B, 6, 6, -1, 0},
	{PPCC_OP_SEND_B, 6, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 4, -1, 0},
	{PPCC_OP_SEND_B, 1, 4, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 6, 7, 0, UINT64_C(4000000)},
	{PPCC_OP_I, 6, 7, -1, 0},
	{PPCC_OP_SEND_B, 6, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_I, 1, 5, -1, 0},
	{PPCC_OP_SEND_B, 1, 5, 0, UINT64_C(4000000)},
	{PPCC_OP_W, 6, 7, -1, 0},
	{PPCC_OP_RECV_B, 1, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_I, 1, 6, -1, 0},
	{PPCC_OP_SEND_B, 1, 6, 0, UINT64_C(4000000)},
	{PPCC_OP_W, 1, 5, -1, 0},
	{PPCC_OP_RECV_B, 1, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_I, 1, 7, -1, 0},
	{PPCC_OP_SEND_B, 1, 7, 0, UINT64_C(4000000)},
	{PPCC_OP_W, 1, 6, -1, 0},
	{PPCC_OP_W, 1, 7, -1, 0}
};

/* rank 2: 108 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_dualpipe_v_rank2_actions[108] = {
	{PPCC_OP_RECV_F, 2, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 0, -1, 0},
	{PPCC_OP_SEND_F, 2, 0, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 1, -1, 0},
	{PPCC_OP_SEND_F, 2, 1, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 2, -1, 0},
	{PPCC_OP_SEND_F, 2, 2, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 5, 0, 3, UINT64_C(4000000)},
	{PPCC_OP_F, 5, 0, -1, 0},
	{PPCC_OP_SEND_F, 5, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 3, -1, 0},
	{PPCC_OP_SEND_F, 2, 3, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 5, 1, 3, UINT64_C(4000000)},
	{PPCC_OP_F, 5, 1, -1, 0},
	{PPCC_OP_SEND_F, 5, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 4, -1, 0},
	{PPCC_OP_SEND_F, 2, 4, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 5, 2, 3, UINT64_C(4000000)},
	{PPCC_OP_F, 5, 2, -1, 0},
	{PPCC_OP_SEND_F, 5, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 5, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_I, 5, 0, -1, 0},
	{PPCC_OP_SEND_B, 5, 0, 3, UINT64_C(4000000)},
	{PPCC_OP_W, 5, 0, -1, 0},
	{PPCC_OP_RECV_F, 5, 3, 3, UINT64_C(4000000)},
	{PPCC_OP_F, 5, 3, -1, 0},
	{PPCC_OP_SEND_F, 5, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 5, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 2, 5, -1, 0},
	{PPCC_OP_F, 2, 5, -1, 0},
	{PPCC_OP_B, 5, 1, -1, 0},
	{PPCC_OP_SEND_F, 2, 5, 3, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 5, 1, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 5, 4, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 0, 3, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 5, 4, -1, 0},
	{PPCC_OP_F, 5, 4, -1, 0},
	{PPCC_OP_B, 2, 0, -1, 0},
	{PPCC_OP_SEND_F, 5, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 2, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 5, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 2, 6, -1, 0},
	{PPCC_OP_F, 2, 6, -1, 0},
	{PPCC_OP_B, 5, 2, -1, 0},
	{PPCC_OP_SEND_F, 2, 6, 3, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 5, 2, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 5, 5, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 1, 3, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 5, 5, -1, 0},
	{PPCC_OP_F, 5, 5, -1, 0},
	{PPCC_OP_B, 2, 1, -1, 0},
	{PPCC_OP_SEND_F, 5, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 2, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 5, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 2, 7, -1, 0},
	{PPCC_OP_F, 2, 7, -1, 0},
	{PPCC_OP_B, 5, 3, -1, 0},
	{PPCC_OP_SEND_F, 2, 7, 3, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 5, 3, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 5, 6, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 2, 3, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 5, 6, -1, 0},
	{PPCC_OP_F, 5, 6, -1, 0},
	{PPCC_OP_B, 2, 2, -1, 0},
	{PPCC_OP_SEND_F, 5, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 2, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 5, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 5, 4, -1, 0},
	{PPCC_OP_SEND_B, 5, 4, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 5, 7, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 3, 3, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 5, 7, -1, 0},
	{PPCC_OP_F, 5, 7, -1, 0},
	{PPCC_OP_B, 2, 3, -1, 0},
	{PPCC_OP_SEND_F, 5, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 2, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 5, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 5, 5, -1, 0},
	{PPCC_OP_SEND_B, 5, 5, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 4, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 4, -1, 0},
	{PPCC_OP_SEND_B, 2, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 5, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 5, 6, -1, 0},
	{PPCC_OP_SEND_B, 5, 6, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 5, 3, UINT64_C(4000000)},
	{PPCC_OP_I, 2, 5, -1, 0},
	{PPCC_OP_SEND_B, 2, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 5, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_I, 5, 7, -1, 0},
	{PPCC_OP_SEND_B, 5, 7, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 6, 3, UINT64_C(4000000)},
	{PPCC_OP_I, 2, 6, -1, 0},
	{PPCC_OP_SEND_B, 2, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_W, 2, 5, -1, 0},
	{PPCC_OP_RECV_B, 2, 7, 3, UINT64_C(4000000)},
	{PPCC_OP_I, 2, 7, -1, 0},
	{PPCC_OP_SEND_B, 2, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_W, 5, 7, -1, 0},
	{PPCC_OP_W, 2, 6, -1, 0},
	{PPCC_OP_W, 2, 7, -1, 0}
};

/* rank 3: 75 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_dualpipe_v_rank3_actions[75] = {
	{PPCC_OP_RECV_F, 3, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 0, -1, 0},
	{PPCC_OP_F, 4, 0, -1, 0},
	{PPCC_OP_SEND_F, 4, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 1, -1, 0},
	{PPCC_OP_F, 4, 1, -1, 0},
	{PPCC_OP_SEND_F, 4, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 2, -1, 0},
	{PPCC_OP_F, 4, 2, -1, 0},
	{PPCC_OP_SEND_F, 4, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 3, -1, 0},
	{PPCC_OP_F, 4, 3, -1, 0},
	{PPCC_OP_SEND_F, 4, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 4, -1, 0},
	{PPCC_OP_RECV_B, 4, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 4, 0, -1, 0},
	{PPCC_OP_OVERLAP_F_B, 4, 4, -1, 0},
	{PPCC_OP_F, 4, 4, -1, 0},
	{PPCC_OP_B, 3, 0, -1, 0},
	{PPCC_OP_SEND_F, 4, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 3, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 4, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 3, 5, -1, 0},
	{PPCC_OP_F, 3, 5, -1, 0},
	{PPCC_OP_B, 4, 1, -1, 0},
	{PPCC_OP_OVERLAP_F_B, 4, 5, -1, 0},
	{PPCC_OP_F, 4, 5, -1, 0},
	{PPCC_OP_B, 3, 1, -1, 0},
	{PPCC_OP_SEND_F, 4, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 3, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 4, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 3, 6, -1, 0},
	{PPCC_OP_F, 3, 6, -1, 0},
	{PPCC_OP_B, 4, 2, -1, 0},
	{PPCC_OP_OVERLAP_F_B, 4, 6, -1, 0},
	{PPCC_OP_F, 4, 6, -1, 0},
	{PPCC_OP_B, 3, 2, -1, 0},
	{PPCC_OP_SEND_F, 4, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 3, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 4, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_OVERLAP_F_B, 3, 7, -1, 0},
	{PPCC_OP_F, 3, 7, -1, 0},
	{PPCC_OP_B, 4, 3, -1, 0},
	{PPCC_OP_OVERLAP_F_B, 4, 7, -1, 0},
	{PPCC_OP_F, 4, 7, -1, 0},
	{PPCC_OP_B, 3, 3, -1, 0},
	{PPCC_OP_SEND_F, 4, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_SEND_B, 3, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 4, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 4, 4, -1, 0},
	{PPCC_OP_B, 3, 4, -1, 0},
	{PPCC_OP_SEND_B, 3, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 4, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 4, 5, -1, 0},
	{PPCC_OP_B, 3, 5, -1, 0},
	{PPCC_OP_SEND_B, 3, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 4, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_I, 4, 6, -1, 0},
	{PPCC_OP_I, 3, 6, -1, 0},
	{PPCC_OP_SEND_B, 3, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 4, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_I, 4, 7, -1, 0},
	{PPCC_OP_I, 3, 7, -1, 0},
	{PPCC_OP_SEND_B, 3, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_W, 4, 6, -1, 0},
	{PPCC_OP_W, 3, 6, -1, 0},
	{PPCC_OP_W, 4, 7, -1, 0},
	{PPCC_OP_W, 3, 7, -1, 0}
};

static const ppcc_rank_schedule tiny_dualpipe_v_ranks[TINY_DUALPIPE_V_N_RANKS] = {
	{0, 76, tiny_dualpipe_v_rank0_actions},
	{1, 108, tiny_dualpipe_v_rank1_actions},
	{2, 108, tiny_dualpipe_v_rank2_actions},
	{3, 75, tiny_dualpipe_v_rank3_actions}
};

static const ppcc_schedule tiny_dualpipe_v_schedule = {
	2, /* version */
	PPCC_SCHED_DUALPIPE_V,
	TINY_DUALPIPE_V_N_RANKS,
	TINY_DUALPIPE_V_N_CHUNKS,
	TINY_DUALPIPE_V_N_STAGES,
	TINY_DUALPIPE_V_N_MICROBATCHES,
	tiny_dualpipe_v_stages,
	tiny_dualpipe_v_ranks,
	TINY_DUALPIPE_V_FINGERPRINT
};

/* simulated busy time per rank (milliseconds) */
static const double tiny_dualpipe_v_busy_ms[TINY_DUALPIPE_V_N_RANKS] = {
	124.0,
	96.0,
	96.0,
	144.0
};

/* simulated idle time per rank (milliseconds) */
static const double tiny_dualpipe_v_idle_ms[TINY_DUALPIPE_V_N_RANKS] = {
	26.770000000000035,
	50.450000000000045,
	50.450000000000045,
	6.770000000000035
};

/* simulated peak memory per device of each rank */
static const double tiny_dualpipe_v_peak_memory_bytes[TINY_DUALPIPE_V_N_RANKS] = {
	2492000000.0,
	990000000.0,
	990000000.0,
	1500000000.0
};

#endif /* TINY_DUALPIPE_V_H */
