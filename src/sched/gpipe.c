/*
 * gpipe.c - GPipe's compute order: every forward, microbatch 0..m-1,
 * then every backward in the same order.
 */
#include "sched/sched.h"

int ppcc_sched_order_gpipe(sched_list *out, const sched_shape *sh)
{
	for (int r = 0; r < sh->p; r++) {
		int s = sh->stage_of[r * sh->v];
		for (int mb = 0; mb < sh->m; mb++)
			sched_put(&out[r], PPCC_OP_F, s, mb);
		for (int mb = 0; mb < sh->m; mb++)
			sched_put(&out[r], PPCC_OP_B, s, mb);
	}
	return 0;
}
