/*
 * zb_v.c - ZB-V (Qi et al., ICLR 2024, section 6): two chunks per rank on
 * the V placement, rank r holding stage r (chunk 0) and 2p-1-r (chunk 1),
 * so that the turn of the V (stages p-1 and p) needs no message.
 *
 * m <= p: a list schedule played out with F = I = 1 and W = 1 - eps
 * (exact integers): each rank, when free, runs the first ready of its
 * oldest I, its next F and its oldest W (chunk 1 first in each), and
 * waits otherwise.  With m = p its step is the least there is for F = I
 * = W, and for I > W as well where checked (doc/design/zb-v.md).
 * O(p m log(p m)).
 *
 * m > p: PyTorch's ScheduleZBVZeroBubble.  With n = max(2p-1, m)
 * microbatches (those >= m dropped) rank r runs 2(p-r)-1 F of chunk 0;
 * r times F of chunk 1, F of chunk 0; p-r times F, I, W of chunk 1;
 * while a forward is left, F of chunk 0 (while any), I and W of chunk 0,
 * F, I and W of chunk 1; r times I of chunk 0, I of chunk 1; p-r times I
 * of chunk 0 and its oldest W; the remaining W of chunk 1, then chunk
 * 0's.  No bubble with F = I = W once m >= 2p.
 *
 * Either way a rank holds at most 2p stage activations (p microbatches'
 * worth of both chunks), and each stage runs F, I and W in microbatch
 * order.
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

static int zbv_handcrafted(sched_list *out, const sched_shape *sh)
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

/* ---- the play, m <= p ---------------------------------------------------- */

typedef struct zbv_wake {
	int64_t t;
	int32_t r;
} zbv_wake;

static int zbv_before(zbv_wake a, zbv_wake b)
{
	return a.t < b.t || (a.t == b.t && a.r < b.r);
}

static void zbv_push(zbv_wake *h, size_t *n, zbv_wake w)
{
	size_t i = (*n)++;
	while (i > 0 && zbv_before(w, h[(i - 1) / 2])) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = w;
}

static zbv_wake zbv_pop(zbv_wake *h, size_t *n)
{
	zbv_wake top = h[0], last = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && zbv_before(h[c + 1], h[c]))
			c++;
		if (!zbv_before(h[c], last))
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n > 0)
		h[i] = last;
	return top;
}

/* Position q of the V (0 .. 2p-1, in pipeline order) runs on rank
 * q < p ? q : 2p-1-q, as its chunk q < p ? 0 : 1. */
static int zbv_rank_of(int p, int q)
{
	return q < p ? q : 2 * p - 1 - q;
}

static int zbv_play(sched_list *out, const sched_shape *sh)
{
	int p = sh->p, m = sh->m, err = 0;
	int S = 2 * p;
	/* one unit is N ticks, a W N - 1: N above the number of W there are,
	 * so no sum of eps reaches a unit (the play's order is that of an
	 * infinitesimal eps) */
	int64_t N = 2 * (int64_t)p * m + 1;
	int64_t total = 3 * (int64_t)S * m;
	if ((double)total * (double)N * 2 >= 0x1p62)
		return zbv_handcrafted(out, sh);
	size_t keys = (size_t)S * (size_t)m;
	size_t cap = 2 * (size_t)total + (size_t)p + 1;
	int64_t *done_f = ppcc_malloc(keys * sizeof *done_f);
	int64_t *done_i = ppcc_malloc(keys * sizeof *done_i);
	int32_t *cnt = ppcc_calloc((size_t)S * 3, sizeof *cnt);
	int64_t *free_at = ppcc_calloc((size_t)p, sizeof *free_at);
	zbv_wake *heap = ppcc_malloc(cap * sizeof *heap);
	if (!done_f || !done_i || !cnt || !free_at || !heap) {
		err = PPCC_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < keys; k++)
		done_f[k] = done_i[k] = -1;
	size_t n_heap = 0;
	for (int r = 0; r < p; r++)
		zbv_push(heap, &n_heap, (zbv_wake){0, r});
	int64_t placed = 0;
	while (placed < total) {
		if (n_heap == 0) {
			err = PPCC_EINTERNAL;
			goto out;
		}
		zbv_wake w = zbv_pop(heap, &n_heap);
		int r = w.r;
		int64_t t = w.t;
		if (free_at[r] > t)
			continue;
		/* chunk 1 (position 2p-1-r) before chunk 0 (position r) */
		int pos[2] = {S - 1 - r, r};
		int op = -1, q = -1;
		for (int k = 0; k < 2 && op < 0; k++) {
			int32_t *c = &cnt[3 * pos[k]];
			if (c[1] < c[0]) {
				int64_t dep = pos[k] == S - 1
					? done_f[(size_t)pos[k] * m + c[1]]
					: done_i[(size_t)(pos[k] + 1) * m + c[1]];
				if (dep >= 0 && dep <= t)
					op = PPCC_OP_I, q = pos[k];
			}
		}
		for (int k = 0; k < 2 && op < 0; k++) {
			int32_t *c = &cnt[3 * pos[k]];
			if (c[0] < m) {
				int64_t dep = pos[k] == 0
					? 0 : done_f[(size_t)(pos[k] - 1) * m + c[0]];
				if (dep >= 0 && dep <= t)
					op = PPCC_OP_F, q = pos[k];
			}
		}
		for (int k = 0; k < 2 && op < 0; k++)
			if (cnt[3 * pos[k] + 2] < cnt[3 * pos[k] + 1])
				op = PPCC_OP_W, q = pos[k];
		if (op < 0)
			continue; /* a neighbour's completion wakes it */
		int32_t *c = &cnt[3 * q];
		int chunk = q < p ? 0 : 1;
		int stage = sh->stage_of[2 * r + chunk];
		int64_t end = t + (op == PPCC_OP_W ? N - 1 : N);
		int next = -1; /* the rank that may wait for this */
		if (op == PPCC_OP_F) {
			done_f[(size_t)q * m + c[0]] = end;
			sched_put(&out[r], op, stage, c[0]++);
			next = q + 1 < S ? zbv_rank_of(p, q + 1) : r;
		} else if (op == PPCC_OP_I) {
			done_i[(size_t)q * m + c[1]] = end;
			sched_put(&out[r], op, stage, c[1]++);
			next = q > 0 ? zbv_rank_of(p, q - 1) : r;
		} else {
			sched_put(&out[r], op, stage, c[2]++);
		}
		placed++;
		free_at[r] = end;
		zbv_push(heap, &n_heap, (zbv_wake){end, r});
		if (next >= 0 && next != r)
			zbv_push(heap, &n_heap, (zbv_wake){end, next});
	}
out:
	ppcc_free(done_f);
	ppcc_free(done_i);
	ppcc_free(cnt);
	ppcc_free(free_at);
	ppcc_free(heap);
	return err;
}

int ppcc_sched_order_zb_v(sched_list *out, const sched_shape *sh)
{
	return sh->m <= sh->p ? zbv_play(out, sh) : zbv_handcrafted(out, sh);
}
