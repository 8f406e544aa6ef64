/*
 * onef1b.c - 1F1B (PipeDream-Flush, Megatron-LM's non-interleaved
 * schedule): rank r runs w = min(p-r-1, m) warm-up forwards, then m-w
 * pairs "forward, backward", then the w remaining backwards; at most
 * min(p-r, m) microbatches are in flight on rank r.
 */
#include "sched/sched.h"

int ppcc_sched_order_1f1b(sched_list *out, const sched_shape *sh)
{
	for (int r = 0; r < sh->p; r++) {
		int s = sh->stage_of[r * sh->v], m = sh->m;
		int warmup = sh->p - r - 1 < m ? sh->p - r - 1 : m;
		int f = 0, b = 0;
		while (f < warmup)
			sched_put(&out[r], PPCC_OP_F, s, f++);
		while (f < m) {
			sched_put(&out[r], PPCC_OP_F, s, f++);
			sched_put(&out[r], PPCC_OP_B, s, b++);
		}
		while (b < m)
			sched_put(&out[r], PPCC_OP_B, s, b++);
	}
	return 0;
}
