/*
 * zb_1p.c - the zero-bubble order ZB-1P (Qi et al., Zero Bubble Pipeline
 * Parallelism, ICLR 2024): ZB-H1 with one chunk per rank, and the
 * interleaved zero-bubble schedule with v >= 2 chunks on a looped
 * placement, in the order of PyTorch's ScheduleInterleavedZeroBubble.
 *
 * Microbatches go in rounds: R = max(1, m / p) rounds of M = m / R
 * (the interleaved kind needs m to be a multiple of R).  Rank r, with
 * w = min((v-1) M + p-1-r, m v) warm-up forwards, runs m v + w steps:
 *   step k < w          forward k;
 *   w <= k < m v        forward k, then input gradient I of backward
 *                       k - w;
 *   k >= m v            input gradient I of backward k - w;
 * and after each I from step w + r on, the weight gradient W of the
 * oldest I still without one; the remaining W come last.  Forward k runs
 * chunk (k / M) mod v, backward j chunk v-1 - (j / M) mod v; each chunk's
 * microbatches go 0, 1, ... in turn.  So rank r delays its W by r
 * microbatches: the last rank fills the tail with W, and every rank
 * holds at most p microbatches between F and W (v = 1).
 */
#include <stdio.h>

#include "sched/sched.h"

static int zb1p_rounds(int p, int m)
{
	return m / p > 1 ? m / p : 1;
}

int ppcc_sched_check_zb_1p(const sched_shape *sh,
			   ppcc_sched_complain_fn complain, void *user)
{
	int rounds = zb1p_rounds(sh->p, sh->m);
	if (sh->m % rounds == 0)
		return 0;
	char msg[256];
	snprintf(msg, sizeof msg,
		 "%d microbatches do not split into %d rounds of equal size; "
		 "the %s schedule needs microbatches to be a multiple of "
		 "max(1, microbatches / stages) = %d", sh->m, rounds,
		 ppcc_schedule_kind_name(sh->kind), rounds);
	complain(PPCC_SET_MICROBATCHES, msg, user);
	return 1;
}

int ppcc_sched_order_zb_1p(sched_list *out, const sched_shape *sh)
{
	int p = sh->p, v = sh->v, m = sh->m;
	int64_t per = (int64_t)m * v;
	int64_t mpr = m / zb1p_rounds(p, m);
	int32_t *fifo = ppcc_malloc((size_t)per * 2 * sizeof *fifo);
	int32_t *count = ppcc_malloc((size_t)v * 2 * sizeof *count);
	if (!fifo || !count) {
		ppcc_free(fifo);
		ppcc_free(count);
		return PPCC_ENOMEM;
	}
	for (int r = 0; r < p; r++) {
		const int32_t *st = &sh->stage_of[r * v];
		sched_list *o = &out[r];
		int32_t *fcount = count, *bcount = count + v;
		for (int c = 0; c < v; c++)
			fcount[c] = bcount[c] = 0;
		int64_t warmup = (int64_t)(v - 1) * mpr + (p - 1 - r);
		if (warmup > per)
			warmup = per;
		int64_t n_i = 0, n_w = 0;
		for (int64_t k = 0; k < per + warmup; k++) {
			if (k < per) {
				int c = (int)((k / mpr) % v);
				sched_put(o, PPCC_OP_F, st[c], fcount[c]++);
			}
			if (k < warmup)
				continue;
			int c = v - 1 - (int)(((k - warmup) / mpr) % v);
			fifo[2 * n_i] = st[c];
			fifo[2 * n_i + 1] = bcount[c];
			n_i++;
			sched_put(o, PPCC_OP_I, st[c], bcount[c]++);
			if (k - warmup >= r) {
				sched_put(o, PPCC_OP_W, fifo[2 * n_w],
					  fifo[2 * n_w + 1]);
				n_w++;
			}
		}
		for (; n_w < n_i; n_w++)
			sched_put(o, PPCC_OP_W, fifo[2 * n_w],
				  fifo[2 * n_w + 1]);
	}
	ppcc_free(fifo);
	ppcc_free(count);
	return 0;
}
