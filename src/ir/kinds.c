/*
 * kinds.c - what every reader of a schedule knows of its kind: the name,
 * the placement, the chunk rules and whether the backward is split, one
 * row per kind.  How a kind's order is made is sched/kinds.c's table,
 * indexed by the same ppcc_schedule_kind; the runtime links this one
 * alone.
 */
#include <stdio.h>
#include <string.h>

#include "ppcc.h"

static const ppcc_sched_kind_info kind_rows[PPCC_SCHED_COUNT] = {
	[PPCC_SCHED_GPIPE] = {PPCC_SCHED_GPIPE, "gpipe", "GPIPE",
	   "Huang et al., GPipe (NeurIPS 2019)", PPCC_PLACE_LOOPED,
	   1, 1, 1, 0, 0, 0, 0, 0},
	[PPCC_SCHED_1F1B] = {PPCC_SCHED_1F1B, "1f1b", "1F1B",
	   "PipeDream-Flush; Megatron-LM's non-interleaved schedule",
	   PPCC_PLACE_LOOPED, 1, 1, 1, 0, 0, 0, 0, 0},
	[PPCC_SCHED_INTERLEAVED] = {PPCC_SCHED_INTERLEAVED, "interleaved", "INTERLEAVED",
	   "Megatron-LM's interleaved 1F1B (Narayanan et al., SC 2021)",
	   PPCC_PLACE_LOOPED, 2, PPCC_MAX_COUNT, 2, 0, 1, 0, 0, 0},
	[PPCC_SCHED_ZB_H1] = {PPCC_SCHED_ZB_H1, "zb-h1", "ZB_H1",
	   "Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024), "
	   "ZB-H1", PPCC_PLACE_LOOPED, 1, 1, 1, 1, 0, 0, 0, 0},
	[PPCC_SCHED_ZB_H2] = {PPCC_SCHED_ZB_H2, "zb-h2", "ZB_H2",
	   "Qi et al., Zero Bubble Pipeline Parallelism (ICLR 2024), "
	   "ZB-H2", PPCC_PLACE_LOOPED, 1, 1, 1, 1, 0, 0, 0, 0},
	[PPCC_SCHED_ZB_V] = {PPCC_SCHED_ZB_V, "zb-v", "ZB_V",
	   "Qi et al. section 6; PyTorch's ScheduleZBVZeroBubble",
	   PPCC_PLACE_V, 2, 2, 2, 1, 0, 0, 0, 0},
	[PPCC_SCHED_ZB_INTERLEAVED] = {PPCC_SCHED_ZB_INTERLEAVED, "zb-interleaved", "ZB_INTERLEAVED",
	   "ZB-1P on a looped placement; PyTorch's "
	   "ScheduleInterleavedZeroBubble", PPCC_PLACE_LOOPED,
	   2, PPCC_MAX_COUNT, 2, 1, 0, 0, 0, 0},
	[PPCC_SCHED_AUTO] = {PPCC_SCHED_AUTO, "auto", "AUTO",
	   "the fastest in simulation that fits the memory limit: the "
	   "handcrafted kinds and Qi et al.'s heuristic (section 3.2)",
	   PPCC_PLACE_LOOPED, 1, PPCC_MAX_COUNT, 1, 1, 0, 0, 0, 1},
	[PPCC_SCHED_DUALPIPE_V] = {PPCC_SCHED_DUALPIPE_V, "dualpipe-v", "DUALPIPE_V",
	   "DeepSeek's DualPipeV (deepseek-ai/DualPipe); PyTorch's "
	   "ScheduleDualPipeV", PPCC_PLACE_V, 2, 2, 2, 2, 0, 0, 1, 0},
	[PPCC_SCHED_DUALPIPE] = {PPCC_SCHED_DUALPIPE, "dualpipe", "DUALPIPE",
	   "DeepSeek-V3's DualPipe (deepseek-ai/DualPipe): two directions, "
	   "two copies of the parameters", PPCC_PLACE_V, 2, 2, 2, 2, 0, 2, 1, 0},
	[PPCC_SCHED_COMBINED_1F1B] = {PPCC_SCHED_COMBINED_1F1B,
	   "combined-1f1b", "COMBINED_1F1B",
	   "Megatron-LM's --overlap-moe-expert-parallel-comm "
	   "(pipeline_parallel/combined_1f1b.py)", PPCC_PLACE_LOOPED,
	   1, PPCC_MAX_COUNT, 2, 0, 1, 0, 1, 1},
};

const ppcc_sched_kind_info *ppcc_sched_kind(int kind)
{
	return kind >= 0 && kind < PPCC_SCHED_COUNT ? &kind_rows[kind] : NULL;
}

int ppcc_sched_kind_chunks(int kind, int ranks)
{
	const ppcc_sched_kind_info *k = ppcc_sched_kind(kind);
	if (!k)
		return 1;
	return ranks == 1 && k->min_chunks == 1 ? 1 : k->default_chunks;
}

int ppcc_sched_pipes(int kind)
{
	const ppcc_sched_kind_info *k = ppcc_sched_kind(kind);
	return k && k->pipes > 1 ? k->pipes : 1;
}

const char *ppcc_schedule_kind_name(int kind)
{
	const ppcc_sched_kind_info *k = ppcc_sched_kind(kind);
	return k ? k->name : "?";
}

int ppcc_schedule_kind_parse(const char *name)
{
	for (int k = 0; k < PPCC_SCHED_COUNT; k++)
		if (strcmp(name, kind_rows[k].name) == 0)
			return k;
	return -1;
}

void ppcc_sched_kind_list(char *buf, size_t n, const char *last_sep)
{
	size_t len = 0;
	if (n == 0)
		return;
	buf[0] = '\0';
	for (int k = 0; k < PPCC_SCHED_COUNT && len < n; k++) {
		const char *sep = k == 0 ? "" : k + 1 == PPCC_SCHED_COUNT
			? last_sep : ", ";
		int w = snprintf(buf + len, n - len, "%s%s", sep,
				 kind_rows[k].name);
		if (w < 0)
			break;
		len += (size_t)w;
	}
}
