/*
 * membound.c - a proof that no split of the layers into stages fits the
 * devices' memory, from the schedule's order alone, for ppcc search's
 * pruning (plan/nofit.c calls it before a candidate's split search with v > 1
 * chunks, where the proxy's per-chunk shares say nothing about the
 * simulated peak).
 *
 * Contract: ppcc_mem_unfit says no split fits with every cap raised by
 * over only when that is proven; ppcc_mem_bound bisects over for the
 * largest it proves, so every split has a rank whose simulated peak is
 * more than that above its cap.  Capacities are widened by a part in
 * 10^9 and a byte a layer: the simulator adds the same bytes in another
 * order.
 * Cost: one pass over the actions for the count vectors, a sort of the
 * layers per distinct kappa, then O(p K log n) a test for K vectors a
 * rank.
 *
 * Derivation: doc/design/membound.md (the count vectors, the
 * rearrangement inequality, the per-rank layer limit q_r).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ppcc.h"

/* One count vector of a rank, as the bound uses it. */
typedef struct mem_vec {
	int kappa;
	double excess; /* E(k), bytes */
} mem_vec;

struct ppcc_mem_state {
	int n, p, v, kappa_max, count_max;
	const double *st, *h;
	const double *rank_cap;
	mem_vec *vec;   /* per rank r: vec[off[r] .. off[r + 1]) */
	int *off;
	double **least; /* per kappa (NULL until needed): C_kappa, n + 1 */
	double *h_up;   /* the v least h, ascending */
	ppcc_arena *a;
};

static int cmp_double_up(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return a < b ? -1 : a > b;
}

static int cmp_vec(const void *pa, const void *pb)
{
	const mem_vec *a = pa, *b = pb;
	if (a->kappa != b->kappa)
		return a->kappa > b->kappa ? -1 : 1;
	return a->excess > b->excess ? -1 : a->excess < b->excess;
}

/* C_kappa: prefix sums of the layers' st + kappa h, ascending. */
static const double *mem_least(ppcc_mem_state *m, int kappa)
{
	if (m->least[kappa])
		return m->least[kappa];
	double *c = ppcc_arena_alloc(m->a, (size_t)m->n + 1, sizeof *c);
	if (!c)
		return NULL;
	for (int l = 0; l < m->n; l++)
		c[l + 1] = m->st[l] + kappa * m->h[l];
	qsort(c + 1, (size_t)m->n, sizeof *c, cmp_double_up);
	c[0] = 0;
	for (int l = 1; l <= m->n; l++)
		c[l] += c[l - 1];
	m->least[kappa] = c;
	return c;
}

/* E(k) of one count vector (v entries). */
static double mem_excess(const ppcc_mem_state *m, const int *cnt, int *tmp)
{
	int v = m->v, kappa = cnt[0];
	for (int c = 1; c < v; c++)
		kappa = cnt[c] < kappa ? cnt[c] : kappa;
	for (int c = 0; c < v; c++) {
		/* insertion, descending */
		int e = cnt[c] - kappa, i = c;
		while (i > 0 && tmp[i - 1] < e) {
			tmp[i] = tmp[i - 1];
			i--;
		}
		tmp[i] = e;
	}
	double sum = 0;
	for (int c = 0; c < v; c++)
		sum += tmp[c] * m->h_up[c];
	return sum;
}

int ppcc_mem_prepare(ppcc_mem_state **out, ppcc_arena *a,
		     const ppcc_mem_problem *mp)
{
	*out = NULL;
	const ppcc_schedule *s = mp->shape;
	int n = mp->n_layers, p = s ? s->n_ranks : 0, S = s ? s->n_stages : 0;
	if (!s || p < 1 || S < p || S % p || n < S || !mp->static_bytes ||
	    !mp->stash_bytes)
		return PPCC_EINPUT;
	int v = S / p, split = 0;
	for (int r = 0; r < p && !split; r++)
		for (int i = 0; i < s->ranks[r].n_actions && !split; i++)
			split = s->ranks[r].actions[i].op == PPCC_OP_I;
	ppcc_mem_state *m = ppcc_arena_alloc(a, 1, sizeof *m);
	double *h = ppcc_arena_alloc(a, (size_t)n, sizeof *h);
	double *h_up = ppcc_arena_alloc(a, (size_t)n, sizeof *h_up);
	int *chunk = ppcc_arena_alloc(a, (size_t)S, sizeof *chunk);
	int *cnt = ppcc_arena_alloc(a, 2 * (size_t)v, sizeof *cnt);
	int *off = ppcc_arena_alloc(a, (size_t)p + 1, sizeof *off);
	long nf = 0;
	for (int r = 0; r < p; r++)
		nf += s->ranks[r].n_actions;
	mem_vec *vec = ppcc_arena_alloc(a, (size_t)(nf > 0 ? nf : 1), sizeof *vec);
	if (!m || !h || !h_up || !chunk || !cnt || !off || !vec)
		return PPCC_ENOMEM;
	for (int l = 0; l < n; l++) {
		double hl = mp->stash_bytes[l];
		if (split && mp->wstash_bytes && mp->wstash_bytes[l] < hl)
			hl = mp->wstash_bytes[l];
		if (!(hl >= 0) || !(mp->static_bytes[l] >= 0))
			return PPCC_EINPUT; /* the argument needs h, st >= 0 */
		h[l] = h_up[l] = hl;
	}
	qsort(h_up, (size_t)n, sizeof *h_up, cmp_double_up);
	for (int st = 0; st < S; st++) {
		int c = s->stages ? s->stages[st].chunk : st / p;
		if (c < 0 || c >= v)
			return PPCC_EINPUT;
		chunk[st] = c;
	}
	*m = (ppcc_mem_state){.n = n, .p = p, .v = v, .st = mp->static_bytes,
			      .h = h, .rank_cap = mp->rank_cap, .vec = vec,
			      .off = off, .h_up = h_up, .a = a};
	int kept = 0, kappa_max = 0, count_max = 0;
	for (int r = 0; r < p; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		int from = kept;
		off[r] = kept;
		memset(cnt, 0, (size_t)v * sizeof *cnt);
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *ac = &rs->actions[i];
			if (ac->stage < 0 || ac->stage >= S)
				return PPCC_EINPUT;
			int c = chunk[ac->stage];
			if (ac->op == PPCC_OP_B || ac->op == PPCC_OP_W) {
				cnt[c]--;
				continue;
			}
			if (ac->op != PPCC_OP_F)
				continue;
			cnt[c]++;
			count_max = cnt[c] > count_max ? cnt[c] : count_max;
			int kappa = cnt[0];
			for (int k = 1; k < v; k++)
				kappa = cnt[k] < kappa ? cnt[k] : kappa;
			if (kappa < 0)
				return PPCC_EINPUT;
			vec[kept++] = (mem_vec){kappa, mem_excess(m, cnt, cnt + v)};
			kappa_max = kappa > kappa_max ? kappa : kappa_max;
		}
		/* keep those no other has both a larger kappa and E */
		qsort(vec + from, (size_t)(kept - from), sizeof *vec, cmp_vec);
		int out_k = from;
		double most = -1;
		for (int k = from; k < kept; k++)
			if (vec[k].excess > most) {
				most = vec[k].excess;
				vec[out_k++] = vec[k];
			}
		kept = out_k;
	}
	off[p] = kept;
	m->kappa_max = kappa_max;
	m->count_max = count_max;
	if (!(m->least = ppcc_arena_alloc(a, (size_t)kappa_max + 1,
					  sizeof *m->least)))
		return PPCC_ENOMEM;
	*out = m;
	return 0;
}

int ppcc_mem_unfit(ppcc_mem_state *m, double over)
{
	long held = 0;
	int n = m->n;
	for (int r = 0; r < m->p; r++) {
		double cap = (m->rank_cap ? m->rank_cap[r] : 0) + over;
		int q = n;
		for (int k = m->off[r]; k < m->off[r + 1] && q >= m->v; k++) {
			const double *c = mem_least(m, m->vec[k].kappa);
			if (!c)
				return PPCC_ENOMEM;
			double room = cap - m->vec[k].excess;
			room += 1e-9 * fabs(room) + n + 1;
			/* the most j with c[j] <= room (c ascends) */
			int lo = 0, hi = q;
			if (!(c[0] <= room)) {
				q = -1;
				break;
			}
			while (lo < hi) {
				int mid = (lo + hi + 1) / 2;
				if (c[mid] <= room)
					lo = mid;
				else
					hi = mid - 1;
			}
			q = lo;
		}
		if (q < m->v)
			return 1;
		held += q;
	}
	return held < n;
}

double ppcc_mem_bound(ppcc_mem_state *m)
{
	/* hi: at least the bound of any rank holding every layer (each
	 * count at most count_max), so no rank is refused there */
	double all = 0, cap_least = INFINITY, cap_most = 0;
	for (int l = 0; l < m->n; l++)
		all += m->st[l] + (double)m->count_max * m->h[l];
	for (int r = 0; r < m->p; r++) {
		double cap = m->rank_cap ? m->rank_cap[r] : 0;
		cap_least = cap < cap_least ? cap : cap_least;
		cap_most = cap > cap_most ? cap : cap_most;
	}
	/* lo: every room below zero, widened as ppcc_mem_unfit widens it */
	double lo = -cap_most * (1 + 1e-8) - 2.0 * m->n - 4;
	double hi = all - cap_least + 1;
	int err = ppcc_mem_unfit(m, lo);
	if (err < 0)
		return NAN;
	if (!err)
		return -INFINITY;
	for (int k = 0; k < 100 && hi - lo > 1e-9 * (fabs(hi) + fabs(lo)) + 1;
	     k++) {
		double mid = lo + (hi - lo) / 2;
		err = ppcc_mem_unfit(m, mid);
		if (err < 0)
			return NAN;
		if (err)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}
