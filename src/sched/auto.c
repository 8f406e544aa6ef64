/*
 * auto.c - the auto kind: the fastest schedule that fits a memory limit.
 *
 * The order follows the heuristic of Qi et al., Zero Bubble Pipeline
 * Parallelism (ICLR 2024, section 3.2), played out under the stage
 * costs it is given (one chunk per rank): warm-up forwards up to a cap
 * of microbatches between F and W, then one F and one I in turn, a W
 * where the rank would otherwise idle.  The play is a list schedule, so
 * the order is a valid execution under any costs.  Work: O(p) per
 * decision, so O(p^2 m) for the whole order.
 *
 * This is the order the table's row makes (at unit time, cap p, without
 * fill); choose.c plays it under a plan's costs and caps and chooses
 * by simulation.  With given orders in the parameters the row
 * copies them instead (the exact search's, src/sched/exact.c), so that they
 * are lowered like any kind's.
 *
 * The rules of the play: doc/design/auto.md.
 */
#include <math.h>
#include <string.h>

#include "sched/sched.h"

typedef struct auto_rank {
	double t;          /* clock: when the rank is next free */
	int32_t nf, ni, nw;
	int stalled;       /* waits on a neighbour's decision; cleared when a
			    * neighbour acts */
	double next;       /* when stalled: when its next F or I can start, as
			    * far as decided (INFINITY: not yet) */
} auto_rank;

/* The clock by which rank q is picked: INFINITY when it is done or waits
 * on a neighbour. */
static void auto_key(double *key, const auto_rank *rk, int q, int m)
{
	key[q] = rk[q].nw < m && !rk[q].stalled ? rk[q].t : INFINITY;
}

static double cost_of(const sched_auto_params *ap, int s, int op)
{
	if (!ap || !ap->costs)
		return op == PPCC_OP_SEND_F || op == PPCC_OP_SEND_B ? 0 : 1;
	return ppcc_op_ms(&ap->costs[s], op);
}

int ppcc_sched_order_auto(sched_list *out, const sched_shape *sh)
{
	const sched_auto_params *ap = sh->arg;
	int p = sh->p, m = sh->m, S = sh->S, err = 0;
	if (S != p)
		return PPCC_EINPUT; /* one chunk: a plan of more is a handcrafted kind's */
	if (ap && ap->given) {
		for (int r = 0; r < p; r++)
			for (int i = 0; i < 3 * m; i++)
				sched_put(&out[r], ap->given[r][i].op,
					  ap->given[r][i].stage, ap->given[r][i].mb);
		return 0;
	}
	const ppcc_stage_info *st = sh->stages;
	size_t keys = (size_t)S * (size_t)m;
	/* when the input of F / I of (stage, mb) is there; INFINITY not yet */
	double *in_f = ppcc_malloc(keys * sizeof *in_f);
	double *in_i = ppcc_malloc(keys * sizeof *in_i);
	auto_rank *rk = ppcc_calloc((size_t)p, sizeof *rk);
	double *key = ppcc_calloc((size_t)p, sizeof *key);
	if (!in_f || !in_i || !rk || !key) {
		err = PPCC_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < keys; k++)
		in_f[k] = in_i[k] = INFINITY;
	for (int mb = 0; mb < m; mb++)
		in_f[mb] = 0;
	int finished = 0, force_w = 0;
	/* each decision is an action or a wait, a wait is followed by an
	 * action of a neighbour or a move of the clocks: bounded */
	int64_t guard = 64 * (int64_t)p * m * 3 + 64;
	while (finished < p) {
		if (--guard < 0) {
			err = PPCC_EINTERNAL;
			goto out;
		}
		int r = 0;
		for (int q = 1; q < p; q++)
			if (key[q] < key[r])
				r = q;
		if (!(key[r] < INFINITY))
			r = -1;
		if (r < 0) {
			/* every rank waits: time moves to the first that can go */
			double T = INFINITY;
			for (int q = 0; q < p; q++)
				if (rk[q].nw < m && rk[q].next < T)
					T = rk[q].next;
			for (int q = 0; q < p; q++) {
				if (isfinite(T) && rk[q].t < T)
					rk[q].t = T;
				rk[q].stalled = 0;
				auto_key(key, rk, q, m);
			}
			if (isfinite(T))
				continue;
			/* nothing known ahead: the earliest rank with a W runs it */
			for (int q = 0; q < p; q++)
				if (rk[q].nw < rk[q].ni && (r < 0 || rk[q].t < rk[r].t))
					r = q;
			if (r < 0) {
				err = PPCC_EINTERNAL;
				goto out;
			}
			force_w = 1;
		}
		auto_rank *k = &rk[r];
		if (force_w) {
			force_w = 0;
			int s = sh->stage_of[r];
			k->t += cost_of(ap, s, PPCC_OP_W);
			sched_put(&out[r], PPCC_OP_W, s, k->nw++);
			if (k->nw == m)
				finished++;
			auto_key(key, rk, r, m);
			continue;
		}
		int s = sh->stage_of[r];
		int32_t cap = ap && ap->cap ? ap->cap[r] : p;
		int has_next = s < S - 1, has_prev = s > 0;
		int cross_next = has_next && st[s + 1].rank != r;
		int cross_prev = has_prev && st[s - 1].rank != r;
		double t = k->t;
		int act = -1;
		if (k->ni < k->nf && in_i[(size_t)s * m + k->ni] <= t) {
			act = PPCC_OP_I;
		} else if (k->nf < m && k->nf - k->nw < cap &&
			   in_f[(size_t)s * m + k->nf] <= t) {
			act = PPCC_OP_F;
		} else {
			/* when the next F or I can start: known (a neighbour
			 * decided it), else at least the producer's clock and
			 * compute from now */
			double known = INFINITY, next = INFINITY;
			if (k->ni < k->nf) {
				double x = in_i[(size_t)s * m + k->ni];
				known = x;
				if (!isfinite(x) && has_next)
					x = rk[st[s + 1].rank].t +
					    cost_of(ap, s + 1, PPCC_OP_I) +
					    (cross_next ? cost_of(ap, s + 1, PPCC_OP_SEND_B) : 0);
				next = x;
			}
			int capped = k->nf < m && k->nf - k->nw >= cap;
			if (k->nf < m && !capped) {
				double x = in_f[(size_t)s * m + k->nf];
				if (x < known)
					known = x;
				if (!isfinite(x) && has_prev)
					x = rk[st[s - 1].rank].t +
					    cost_of(ap, s - 1, PPCC_OP_F) +
					    (cross_prev ? cost_of(ap, s - 1, PPCC_OP_SEND_F) : 0);
				if (x < next)
					next = x;
			}
			if (k->nw < k->ni &&
			    ((ap && ap->fill) || capped ||
			     next - t >= cost_of(ap, s, PPCC_OP_W))) {
				act = PPCC_OP_W;
			} else if (next > t && isfinite(next)) {
				k->t = next; /* idle until then, at least */
				auto_key(key, rk, r, m);
				continue;
			} else {
				k->stalled = 1;
				k->next = known;
				auto_key(key, rk, r, m);
				continue;
			}
		}
		switch (act) {
		case PPCC_OP_I: {
			double end = t + cost_of(ap, s, PPCC_OP_I);
			double c = cross_prev ? cost_of(ap, s, PPCC_OP_SEND_B) : 0;
			if (has_prev)
				in_i[(size_t)(s - 1) * m + k->ni] = end + c;
			k->t = end + c;
			sched_put(&out[r], PPCC_OP_I, s, k->ni++);
			break;
		}
		case PPCC_OP_F: {
			double end = t + cost_of(ap, s, PPCC_OP_F);
			double c = cross_next ? cost_of(ap, s, PPCC_OP_SEND_F) : 0;
			if (has_next)
				in_f[(size_t)(s + 1) * m + k->nf] = end + c;
			else
				in_i[(size_t)s * m + k->nf] = end;
			k->t = end + c;
			sched_put(&out[r], PPCC_OP_F, s, k->nf++);
			break;
		}
		default:
			k->t = t + cost_of(ap, s, PPCC_OP_W);
			sched_put(&out[r], PPCC_OP_W, s, k->nw++);
			if (k->nw == m)
				finished++;
			break;
		}
		k->stalled = 0;
		auto_key(key, rk, r, m);
		if (has_prev) {
			rk[st[s - 1].rank].stalled = 0;
			auto_key(key, rk, st[s - 1].rank, m);
		}
		if (has_next) {
			rk[st[s + 1].rank].stalled = 0;
			auto_key(key, rk, st[s + 1].rank, m);
		}
	}
out:
	ppcc_free(in_f);
	ppcc_free(in_i);
	ppcc_free(rk);
	ppcc_free(key);
	return err;
}
