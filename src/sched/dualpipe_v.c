/*
 * dualpipe_v.c - DualPipeV (deepseek-ai/DualPipe, dualpipev.py; the
 * "cut-in-half" DualPipe of Sea AI Lab), in the order of PyTorch's
 * ScheduleDualPipeV.  Two chunks per rank on the V placement: rank r
 * holds stage r (chunk 0, the way down) and stage 2p-1-r (chunk 1, the
 * way back up).  Its steady state runs a forward of one chunk overlapped
 * with a full backward of the other, written as an OVERLAP_F_B pair: the
 * marker, then the F, then the B, adjacent in the rank's order.
 *
 * For m >= 2p microbatches, rank r runs, in eight steps (F0 and B0 are
 * chunk 0's, F1 and B1 chunk 1's; I is an input-gradient backward whose
 * W goes on a first-in first-out queue, W runs the oldest queued):
 *   1. 2(p-r-1) times F0;
 *   2. r+1 times F0, F1;
 *   3. p-r-1 times I1, W, F1;
 *   4. m-2p+r+1 times the pairs (F0;B1) and (F1;B0), except that the
 *      last rank runs its first (F0;B1) as F0 then B1, not overlapped;
 *   5. p-r-1 times B1, (F1;B0);
 *   6. r+1 times a backward of chunk 1, then one of chunk 0: full B until
 *      the ((r+1)/2)-th time, I from then on, switching before the
 *      chunk-1 one on an odd rank and between the two on an even one;
 *   7. p-r-1 times W, I0;
 *   8. r+1 times W.
 * Every F and every B or I of both chunks runs m times on each rank, and
 * the queue is empty at the end.  ppcc_sched_count_dualpipe_v gives the
 * resulting numbers of actions in closed form.  DualPipe (dualpipe.c)
 * runs the same eight steps on each rank (ppcc_sched_dualpipe_rank).
 */
#include "sched/sched.h"

typedef struct dpv_rank {
	sched_list *out;
	int stage[2];
	int f[2], b[2];   /* next microbatch of F and of B/I, per chunk */
	int32_t *wq;      /* queued W as chunk * m + mb, first in first out */
	int wq_head, wq_tail, m;
} dpv_rank;

static void dpv_f(dpv_rank *z, int c)
{
	sched_put(z->out, PPCC_OP_F, z->stage[c], z->f[c]++);
}

static void dpv_b(dpv_rank *z, int c, int zb)
{
	int mb = z->b[c]++;
	if (!zb) {
		sched_put(z->out, PPCC_OP_B, z->stage[c], mb);
		return;
	}
	sched_put(z->out, PPCC_OP_I, z->stage[c], mb);
	z->wq[z->wq_tail++] = c * z->m + mb;
}

static void dpv_w(dpv_rank *z)
{
	if (z->wq_head == z->wq_tail)
		return; /* caught as a miscount by lower.c */
	int32_t x = z->wq[z->wq_head++];
	sched_put(z->out, PPCC_OP_W, z->stage[x / z->m], x % z->m);
}

/* The pair (F of chunk cf; B of chunk 1-cf). */
static void dpv_pair(dpv_rank *z, int cf)
{
	sched_put(z->out, PPCC_OP_OVERLAP_F_B, z->stage[cf], z->f[cf]);
	dpv_f(z, cf);
	dpv_b(z, 1 - cf, 0);
}

int ppcc_sched_dualpipe_rank(sched_list *out, const int32_t stage[2],
			     int p, int r, int m, int32_t *wq)
{
	dpv_rank z = {
		.out = out, .wq = wq, .m = m, .stage = {stage[0], stage[1]},
	};
	for (int k = 0; k < 2 * (p - r - 1); k++)
		dpv_f(&z, 0);
	for (int k = 0; k < r + 1; k++) {
		dpv_f(&z, 0);
		dpv_f(&z, 1);
	}
	for (int k = 0; k < p - r - 1; k++) {
		dpv_b(&z, 1, 1);
		dpv_w(&z);
		dpv_f(&z, 1);
	}
	for (int k = 0; k < m - 2 * p + r + 1; k++) {
		if (k == 0 && r == p - 1) {
			dpv_f(&z, 0);
			dpv_b(&z, 1, 0);
		} else {
			dpv_pair(&z, 0);
		}
		dpv_pair(&z, 1);
	}
	for (int k = 0; k < p - r - 1; k++) {
		dpv_b(&z, 1, 0);
		dpv_pair(&z, 1);
	}
	int zb = 0, half = (r + 1) / 2;
	for (int k = 0; k < r + 1; k++) {
		if (k == half && r % 2 == 1)
			zb = 1;
		dpv_b(&z, 1, zb);
		if (k == half && r % 2 == 0)
			zb = 1;
		dpv_b(&z, 0, zb);
	}
	for (int k = 0; k < p - r - 1; k++) {
		dpv_w(&z);
		dpv_b(&z, 0, 1);
	}
	for (int k = 0; k < r + 1; k++)
		dpv_w(&z);
	if (z.f[0] != m || z.f[1] != m || z.b[0] != m || z.b[1] != m ||
	    z.wq_head != z.wq_tail)
		return PPCC_EINTERNAL;
	return 0;
}

int ppcc_sched_order_dualpipe_v(sched_list *out, const sched_shape *sh)
{
	int p = sh->p, m = sh->m;
	int32_t *wq = ppcc_malloc(2 * (size_t)m * sizeof *wq);
	if (!wq)
		return PPCC_ENOMEM;
	int err = 0;
	for (int r = 0; r < p && !err; r++)
		err = ppcc_sched_dualpipe_rank(&out[r], &sh->stage_of[2 * r],
					       p, r, m, wq);
	ppcc_free(wq);
	return err;
}

int ppcc_sched_check_dualpipe_v(const sched_shape *sh,
				ppcc_sched_complain_fn complain, void *user)
{
	char msg[200];
	if ((int64_t)sh->m >= 2 * (int64_t)sh->p)
		return 0;
	snprintf(msg, sizeof msg, "the dualpipe-v schedule needs at least "
		 "2 x %d = %lld microbatches for %d ranks (its warm-up "
		 "fills both stages of every rank); microbatches is %d",
		 sh->p, 2 * (long long)sh->p, sh->p, sh->m);
	complain(PPCC_SET_MICROBATCHES, msg, user);
	return 1;
}

/* Per rank r: 2m forwards, 2m backwards (B or I), one W per I, one
 * marker per pair.  I: p-r-1 in step 3 and again in step 7, and in step
 * 6 two for each of its last r+1-(r+1)/2 rounds, one fewer on an even
 * rank.  Pairs: two per round of step 4 (one fewer on the last rank) and
 * one per round of step 5.  Summed over the ranks, with
 * sum_{k=1..p} ceil(k/2) = floor((p+1)^2/4):
 *   I      p(p-1) + 2 floor((p+1)^2/4) - ceil(p/2)
 *   pairs  2pm - 3p^2 + p - 1 + p(p-1)/2
 * The caller keeps 8pm within int64_t. */
int64_t ppcc_sched_count_dualpipe_v(const sched_shape *sh)
{
	int64_t p = sh->p, m = sh->m;
	int64_t n_i = p * (p - 1) + 2 * ((p + 1) * (p + 1) / 4) - (p + 1) / 2;
	int64_t pairs = 2 * p * m - 3 * p * p + p - 1 + p * (p - 1) / 2;
	return 4 * p * m + n_i + pairs;
}
