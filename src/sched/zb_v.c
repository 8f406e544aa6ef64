/*
 * zb_v.c - ZB-V (Qi et al., ICLR 2024, section 6), in the order of
 * PyTorch's ScheduleZBVZeroBubble.  Two chunks per rank on the V
 * placement: rank r holds stage r (chunk 0) and stage 2p-1-r (chunk 1),
 * so the first and the last stage share rank 0 and the turn of the V
 * (stages p-1 and p) needs no communication.
 *
 * With n = max(2p-1, m) microbatches (those >= m are then dropped), rank
 * r runs, counting chunk 0's and chunk 1's forwards, I and W separately:
 *   2(p-r)-1 forwards of chunk 0;
 *   r times: forward of chunk 1, forward of chunk 0;
 *   p-r times: forward, I and W of chunk 1;
 *   while a forward is left: forward of chunk 0 (while any is left), I
 *     and W of chunk 0, forward, I and W of chunk 1;
 *   r times: I of chunk 0, I of chunk 1;
 *   p-r times: I of chunk 0, then the oldest W of chunk 0 not yet run;
 *   the remaining W of chunk 1, then those of chunk 0.
 * With F = I = W this has no bubble once m >= 2p, and each rank holds
 * the activations of at most p microbatches' worth of both chunks.
 */
#include "sched/sched.h"

typedef struct zbv_rank {
	sched_list *out;
	int m;
	int stage[2];
	int f[2], b[2], w[2];
} zbv_rank;

static void zbv_put(zbv_rank *z, int op, int c, int mb)
{
	if (mb < z->m)
		sched_put(z->out, op, z->stage[c], mb);
}

static void zbv_f(zbv_rank *z, int c)
{
	zbv_put(z, PPCC_OP_F, c, z->f[c]++);
}

static void zbv_iw(zbv_rank *z, int c)
{
	zbv_put(z, PPCC_OP_I, c, z->b[c]);
	zbv_put(z, PPCC_OP_W, c, z->b[c]);
	z->b[c]++;
	z->w[c] = z->b[c];
}

int ppcc_sched_order_zb_v(sched_list *out, const sched_shape *sh)
{
	int p = sh->p;
	int n_micro = sh->m > 2 * p - 1 ? sh->m : 2 * p - 1;
	for (int r = 0; r < p; r++) {
		zbv_rank z = {
			.out = &out[r], .m = sh->m,
			.stage = {sh->stage_of[2 * r], sh->stage_of[2 * r + 1]},
		};
		for (int k = 0; k < 2 * (p - r) - 1; k++)
			zbv_f(&z, 0);
		for (int k = 0; k < r; k++) {
			zbv_f(&z, 1);
			zbv_f(&z, 0);
		}
		for (int k = 0; k < p - r; k++) {
			zbv_f(&z, 1);
			zbv_iw(&z, 1);
		}
		while (z.f[1] < z.f[0] || z.f[0] < n_micro) {
			if (z.f[0] < n_micro)
				zbv_f(&z, 0);
			zbv_iw(&z, 0);
			zbv_f(&z, 1);
			zbv_iw(&z, 1);
		}
		for (int k = 0; k < r; k++) {
			zbv_put(&z, PPCC_OP_I, 0, z.b[0]++);
			zbv_put(&z, PPCC_OP_I, 1, z.b[1]++);
		}
		for (int k = 0; k < p - r; k++) {
			zbv_put(&z, PPCC_OP_I, 0, z.b[0]++);
			zbv_put(&z, PPCC_OP_W, 0, z.w[0]++);
		}
		while (z.w[1] < z.b[1])
			zbv_put(&z, PPCC_OP_W, 1, z.w[1]++);
		while (z.w[0] < z.b[0])
			zbv_put(&z, PPCC_OP_W, 0, z.w[0]++);
		if (z.f[0] != n_micro || z.f[1] != n_micro ||
		    z.b[0] != n_micro || z.b[1] != n_micro)
			return PPCC_EINTERNAL;
	}
	return 0;
}
