/*
 * Pipeline schedule compiled by ppcc 0.1.0 (`ppcc plan -f header`).
 * Generated: regenerate it rather than edit it.
 *
 * tiny_interleaved_stages[]          per virtual stage: rank, chunk, layers
 * tiny_interleaved_rank<N>_actions[] the ordered actions of rank N
 * tiny_interleaved_ranks[]           per rank: its action count and array
 * tiny_interleaved_schedule          all of the above, with its fingerprint
 * tiny_interleaved_model_name, tiny_interleaved_layer_names[]
 *
 * Names from the model file appear only in string literals.
 */
#ifndef TINY_INTERLEAVED_H
#define TINY_INTERLEAVED_H

#include <stddef.h>
#include <stdint.h>
#include <ppcc/schedule.h>

#if PPCC_SCHEDULE_VERSION < 1
#error "needs version 1 or later of <ppcc/schedule.h>"
#endif

#define TINY_INTERLEAVED_N_RANKS 4
#define TINY_INTERLEAVED_N_CHUNKS 2
#define TINY_INTERLEAVED_N_STAGES 8
#define TINY_INTERLEAVED_N_MICROBATCHES 8
#define TINY_INTERLEAVED_N_LAYERS 10
#define TINY_INTERLEAVED_MAX_ACTIONS 96 /* the longest rank */
#define TINY_INTERLEAVED_KIND PPCC_SCHED_INTERLEAVED
#define TINY_INTERLEAVED_FINGERPRINT UINT64_C(0xc1f01cbe404b1b48)

/* The simulated step (milliseconds) and idle share. */
#define TINY_INTERLEAVED_STEP_MS 159.06000000000003
#define TINY_INTERLEAVED_BUBBLE_FRACTION 0.22947315478435834
#define TINY_INTERLEAVED_BUBBLE_ANALYTIC 0.15789473684210525

static const char tiny_interleaved_model_name[] =
	"tiny";

static const char *const tiny_interleaved_layer_names[TINY_INTERLEAVED_N_LAYERS] = {
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
 * tiny_interleaved_stage_layer_names[s][0 .. last_layer - first_layer]. */
static const char *const *const tiny_interleaved_stage_layer_names[TINY_INTERLEAVED_N_STAGES] = {
	tiny_interleaved_layer_names + 0,
	tiny_interleaved_layer_names + 1,
	tiny_interleaved_layer_names + 2,
	tiny_interleaved_layer_names + 3,
	tiny_interleaved_layer_names + 4,
	tiny_interleaved_layer_names + 6,
	tiny_interleaved_layer_names + 8,
	tiny_interleaved_layer_names + 9
};

/* Layer indices, named after the layers (sanitized). */
enum {
	TINY_INTERLEAVED_LAYER_embed = 0,
	TINY_INTERLEAVED_LAYER_block = 1,
	TINY_INTERLEAVED_LAYER_block_2 = 2,
	TINY_INTERLEAVED_LAYER_block_3 = 3,
	TINY_INTERLEAVED_LAYER_block_4 = 4,
	TINY_INTERLEAVED_LAYER_block_5 = 5,
	TINY_INTERLEAVED_LAYER_block_6 = 6,
	TINY_INTERLEAVED_LAYER_block_7 = 7,
	TINY_INTERLEAVED_LAYER_block_8 = 8,
	TINY_INTERLEAVED_LAYER_head = 9
};

/* {stage, rank, chunk, first_layer, last_layer, recv_bytes, send_bytes} */
static const ppcc_stage_info tiny_interleaved_stages[TINY_INTERLEAVED_N_STAGES] = {
	{0, 0, 0, 0, 0, 0, UINT64_C(4000000)},
	{1, 1, 0, 1, 1, UINT64_C(4000000), UINT64_C(4000000)},
	{2, 2, 0, 2, 2, UINT64_C(4000000), UINT64_C(4000000)},
	{3, 3, 0, 3, 3, UINT64_C(4000000), UINT64_C(4000000)},
	{4, 0, 1, 4, 5, UINT64_C(4000000), UINT64_C(4000000)},
	{5, 1, 1, 6, 7, UINT64_C(4000000), UINT64_C(4000000)},
	{6, 2, 1, 8, 8, UINT64_C(4000000), UINT64_C(4000000)},
	{7, 3, 1, 9, 9, UINT64_C(4000000), 0}
};

/* rank 0: 80 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_interleaved_rank0_actions[80] = {
	{PPCC_OP_F, 0, 0, -1, 0},
	{PPCC_OP_SEND_F, 0, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 1, -1, 0},
	{PPCC_OP_SEND_F, 0, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 2, -1, 0},
	{PPCC_OP_SEND_F, 0, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 3, -1, 0},
	{PPCC_OP_SEND_F, 0, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 4, 0, 3, UINT64_C(4000000)},
	{PPCC_OP_F, 4, 0, -1, 0},
	{PPCC_OP_SEND_F, 4, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 4, 1, 3, UINT64_C(4000000)},
	{PPCC_OP_F, 4, 1, -1, 0},
	{PPCC_OP_SEND_F, 4, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 4, 2, 3, UINT64_C(4000000)},
	{PPCC_OP_F, 4, 2, -1, 0},
	{PPCC_OP_SEND_F, 4, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 4, 3, 3, UINT64_C(4000000)},
	{PPCC_OP_F, 4, 3, -1, 0},
	{PPCC_OP_SEND_F, 4, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 4, -1, 0},
	{PPCC_OP_SEND_F, 0, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 5, -1, 0},
	{PPCC_OP_SEND_F, 0, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 6, -1, 0},
	{PPCC_OP_SEND_F, 0, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 4, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 4, 0, -1, 0},
	{PPCC_OP_SEND_B, 4, 0, 3, UINT64_C(4000000)},
	{PPCC_OP_F, 0, 7, -1, 0},
	{PPCC_OP_SEND_F, 0, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 4, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 4, 1, -1, 0},
	{PPCC_OP_SEND_B, 4, 1, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 4, 4, 3, UINT64_C(4000000)},
	{PPCC_OP_F, 4, 4, -1, 0},
	{PPCC_OP_SEND_F, 4, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 4, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 4, 2, -1, 0},
	{PPCC_OP_SEND_B, 4, 2, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 4, 5, 3, UINT64_C(4000000)},
	{PPCC_OP_F, 4, 5, -1, 0},
	{PPCC_OP_SEND_F, 4, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 4, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 4, 3, -1, 0},
	{PPCC_OP_SEND_B, 4, 3, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 4, 6, 3, UINT64_C(4000000)},
	{PPCC_OP_F, 4, 6, -1, 0},
	{PPCC_OP_SEND_F, 4, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 0, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 0, -1, 0},
	{PPCC_OP_RECV_F, 4, 7, 3, UINT64_C(4000000)},
	{PPCC_OP_F, 4, 7, -1, 0},
	{PPCC_OP_SEND_F, 4, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 0, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 1, -1, 0},
	{PPCC_OP_RECV_B, 0, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 2, -1, 0},
	{PPCC_OP_RECV_B, 0, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 3, -1, 0},
	{PPCC_OP_RECV_B, 4, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 4, 4, -1, 0},
	{PPCC_OP_SEND_B, 4, 4, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 4, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 4, 5, -1, 0},
	{PPCC_OP_SEND_B, 4, 5, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 4, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 4, 6, -1, 0},
	{PPCC_OP_SEND_B, 4, 6, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 4, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 4, 7, -1, 0},
	{PPCC_OP_SEND_B, 4, 7, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 0, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 4, -1, 0},
	{PPCC_OP_RECV_B, 0, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 5, -1, 0},
	{PPCC_OP_RECV_B, 0, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 6, -1, 0},
	{PPCC_OP_RECV_B, 0, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_B, 0, 7, -1, 0}
};

/* rank 1: 96 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_interleaved_rank1_actions[96] = {
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
	{PPCC_OP_RECV_F, 5, 0, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 5, 0, -1, 0},
	{PPCC_OP_SEND_F, 5, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 5, 1, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 5, 1, -1, 0},
	{PPCC_OP_SEND_F, 5, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 5, 2, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 5, 2, -1, 0},
	{PPCC_OP_SEND_F, 5, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 5, 3, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 5, 3, -1, 0},
	{PPCC_OP_SEND_F, 5, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 4, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 4, -1, 0},
	{PPCC_OP_SEND_F, 1, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 5, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 5, 0, -1, 0},
	{PPCC_OP_SEND_B, 5, 0, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 5, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 5, -1, 0},
	{PPCC_OP_SEND_F, 1, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 5, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 5, 1, -1, 0},
	{PPCC_OP_SEND_B, 5, 1, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 6, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 6, -1, 0},
	{PPCC_OP_SEND_F, 1, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 5, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 5, 2, -1, 0},
	{PPCC_OP_SEND_B, 5, 2, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 1, 7, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 1, 7, -1, 0},
	{PPCC_OP_SEND_F, 1, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 5, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 5, 3, -1, 0},
	{PPCC_OP_SEND_B, 5, 3, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 5, 4, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 5, 4, -1, 0},
	{PPCC_OP_SEND_F, 5, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 0, -1, 0},
	{PPCC_OP_SEND_B, 1, 0, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 5, 5, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 5, 5, -1, 0},
	{PPCC_OP_SEND_F, 5, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 1, -1, 0},
	{PPCC_OP_SEND_B, 1, 1, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 5, 6, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 5, 6, -1, 0},
	{PPCC_OP_SEND_F, 5, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 2, -1, 0},
	{PPCC_OP_SEND_B, 1, 2, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 5, 7, 0, UINT64_C(4000000)},
	{PPCC_OP_F, 5, 7, -1, 0},
	{PPCC_OP_SEND_F, 5, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 1, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 1, 3, -1, 0},
	{PPCC_OP_SEND_B, 1, 3, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 5, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 5, 4, -1, 0},
	{PPCC_OP_SEND_B, 5, 4, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 5, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 5, 5, -1, 0},
	{PPCC_OP_SEND_B, 5, 5, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 5, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 5, 6, -1, 0},
	{PPCC_OP_SEND_B, 5, 6, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 5, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_B, 5, 7, -1, 0},
	{PPCC_OP_SEND_B, 5, 7, 0, UINT64_C(4000000)},
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

/* rank 2: 96 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_interleaved_rank2_actions[96] = {
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
	{PPCC_OP_RECV_F, 6, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 6, 0, -1, 0},
	{PPCC_OP_SEND_F, 6, 0, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 6, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 6, 1, -1, 0},
	{PPCC_OP_SEND_F, 6, 1, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 6, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 6, 2, -1, 0},
	{PPCC_OP_SEND_F, 6, 2, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 6, 0, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 6, 0, -1, 0},
	{PPCC_OP_SEND_B, 6, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 6, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 6, 3, -1, 0},
	{PPCC_OP_SEND_F, 6, 3, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 6, 1, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 6, 1, -1, 0},
	{PPCC_OP_SEND_B, 6, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 4, -1, 0},
	{PPCC_OP_SEND_F, 2, 4, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 6, 2, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 6, 2, -1, 0},
	{PPCC_OP_SEND_B, 6, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 5, -1, 0},
	{PPCC_OP_SEND_F, 2, 5, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 6, 3, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 6, 3, -1, 0},
	{PPCC_OP_SEND_B, 6, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 6, -1, 0},
	{PPCC_OP_SEND_F, 2, 6, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 0, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 0, -1, 0},
	{PPCC_OP_SEND_B, 2, 0, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 2, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 2, 7, -1, 0},
	{PPCC_OP_SEND_F, 2, 7, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 1, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 1, -1, 0},
	{PPCC_OP_SEND_B, 2, 1, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 6, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 6, 4, -1, 0},
	{PPCC_OP_SEND_F, 6, 4, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 2, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 2, -1, 0},
	{PPCC_OP_SEND_B, 2, 2, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 6, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 6, 5, -1, 0},
	{PPCC_OP_SEND_F, 6, 5, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 2, 3, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 2, 3, -1, 0},
	{PPCC_OP_SEND_B, 2, 3, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 6, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 6, 6, -1, 0},
	{PPCC_OP_SEND_F, 6, 6, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 6, 4, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 6, 4, -1, 0},
	{PPCC_OP_SEND_B, 6, 4, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 6, 7, 1, UINT64_C(4000000)},
	{PPCC_OP_F, 6, 7, -1, 0},
	{PPCC_OP_SEND_F, 6, 7, 3, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 6, 5, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 6, 5, -1, 0},
	{PPCC_OP_SEND_B, 6, 5, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 6, 6, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 6, 6, -1, 0},
	{PPCC_OP_SEND_B, 6, 6, 1, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 6, 7, 3, UINT64_C(4000000)},
	{PPCC_OP_B, 6, 7, -1, 0},
	{PPCC_OP_SEND_B, 6, 7, 1, UINT64_C(4000000)},
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

/* rank 3: 80 actions {op, stage, mb, peer, bytes} */
static const ppcc_action tiny_interleaved_rank3_actions[80] = {
	{PPCC_OP_RECV_F, 3, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 0, -1, 0},
	{PPCC_OP_SEND_F, 3, 0, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 1, -1, 0},
	{PPCC_OP_SEND_F, 3, 1, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 2, -1, 0},
	{PPCC_OP_SEND_F, 3, 2, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 3, -1, 0},
	{PPCC_OP_SEND_F, 3, 3, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 7, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 7, 0, -1, 0},
	{PPCC_OP_B, 7, 0, -1, 0},
	{PPCC_OP_SEND_B, 7, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 7, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 7, 1, -1, 0},
	{PPCC_OP_B, 7, 1, -1, 0},
	{PPCC_OP_SEND_B, 7, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 7, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 7, 2, -1, 0},
	{PPCC_OP_B, 7, 2, -1, 0},
	{PPCC_OP_SEND_B, 7, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 7, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 7, 3, -1, 0},
	{PPCC_OP_B, 7, 3, -1, 0},
	{PPCC_OP_SEND_B, 7, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 4, -1, 0},
	{PPCC_OP_SEND_F, 3, 4, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 3, 0, 0, UINT64_C(4000000)},
	{PPCC_OP_B, 3, 0, -1, 0},
	{PPCC_OP_SEND_B, 3, 0, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 5, -1, 0},
	{PPCC_OP_SEND_F, 3, 5, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 3, 1, 0, UINT64_C(4000000)},
	{PPCC_OP_B, 3, 1, -1, 0},
	{PPCC_OP_SEND_B, 3, 1, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 6, -1, 0},
	{PPCC_OP_SEND_F, 3, 6, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 3, 2, 0, UINT64_C(4000000)},
	{PPCC_OP_B, 3, 2, -1, 0},
	{PPCC_OP_SEND_B, 3, 2, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 3, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 3, 7, -1, 0},
	{PPCC_OP_SEND_F, 3, 7, 0, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 3, 3, 0, UINT64_C(4000000)},
	{PPCC_OP_B, 3, 3, -1, 0},
	{PPCC_OP_SEND_B, 3, 3, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 7, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 7, 4, -1, 0},
	{PPCC_OP_B, 7, 4, -1, 0},
	{PPCC_OP_SEND_B, 7, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 7, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 7, 5, -1, 0},
	{PPCC_OP_B, 7, 5, -1, 0},
	{PPCC_OP_SEND_B, 7, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 7, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 7, 6, -1, 0},
	{PPCC_OP_B, 7, 6, -1, 0},
	{PPCC_OP_SEND_B, 7, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_F, 7, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_F, 7, 7, -1, 0},
	{PPCC_OP_B, 7, 7, -1, 0},
	{PPCC_OP_SEND_B, 7, 7, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 3, 4, 0, UINT64_C(4000000)},
	{PPCC_OP_B, 3, 4, -1, 0},
	{PPCC_OP_SEND_B, 3, 4, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 3, 5, 0, UINT64_C(4000000)},
	{PPCC_OP_B, 3, 5, -1, 0},
	{PPCC_OP_SEND_B, 3, 5, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 3, 6, 0, UINT64_C(4000000)},
	{PPCC_OP_B, 3, 6, -1, 0},
	{PPCC_OP_SEND_B, 3, 6, 2, UINT64_C(4000000)},
	{PPCC_OP_RECV_B, 3, 7, 0, UINT64_C(4000000)},
	{PPCC_OP_B, 3, 7, -1, 0},
	{PPCC_OP_SEND_B, 3, 7, 2, UINT64_C(4000000)}
};

static const ppcc_rank_schedule tiny_interleaved_ranks[TINY_INTERLEAVED_N_RANKS] = {
	{0, 80, tiny_interleaved_rank0_actions},
	{1, 96, tiny_interleaved_rank1_actions},
	{2, 96, tiny_interleaved_rank2_actions},
	{3, 80, tiny_interleaved_rank3_actions}
};

static const ppcc_schedule tiny_interleaved_schedule = {
	1, /* version */
	PPCC_SCHED_INTERLEAVED,
	TINY_INTERLEAVED_N_RANKS,
	TINY_INTERLEAVED_N_CHUNKS,
	TINY_INTERLEAVED_N_STAGES,
	TINY_INTERLEAVED_N_MICROBATCHES,
	tiny_interleaved_stages,
	tiny_interleaved_ranks,
	TINY_INTERLEAVED_FINGERPRINT
};

/* simulated busy time per rank (milliseconds) */
static const double tiny_interleaved_busy_ms[TINY_INTERLEAVED_N_RANKS] = {
	108.0,
	144.0,
	96.0,
	112.0
};

/* simulated idle time per rank (milliseconds) */
static const double tiny_interleaved_idle_ms[TINY_INTERLEAVED_N_RANKS] = {
	44.58000000000004,
	6.420000000000041,
	54.420000000000044,
	40.58000000000004
};

/* simulated peak memory per device of each rank */
static const double tiny_interleaved_peak_memory_bytes[TINY_INTERLEAVED_N_RANKS] = {
	1888000000.0,
	1470000000.0,
	930000000.0,
	1440000000.0
};

#endif /* TINY_INTERLEAVED_H */
