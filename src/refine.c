/*
 * refine.c - the split that minimises the simulated step, not a proxy.
 *
 * What users pay for is the step (iteration) time of the schedule they
 * run, which ppcc_simulate computes; what partition.c minimises exactly is
 * a proxy, the largest per-microbatch stage time.  The two disagree: with
 * interleaving a rank's time is the sum of its chunks, and among the many
 * splits that tie on the bottleneck some fill the pipeline much later than
 * others.  This file searches the splits with the simulator as the
 * objective and every rank's simulated peak memory as the constraint.
 *
 * The order.  Splits are compared by, in turn:
 *   1. fitting: every rank's simulated peak memory within its cap (a split
 *      that does not fit is compared by its largest overflow, so that the
 *      search can walk towards one that fits);
 *   2. the simulated step, in whole nanoseconds;
 *   3. the least peak memory of the busiest rank (the largest per-rank
 *      peak), in whole bytes;
 *   4. the most balanced ranks: the least spread (largest minus smallest)
 *      of the ranks' busy plus p2p time, in whole nanoseconds;
 *   5. the latest starts, from the last stage backwards (the tie-break of
 *      partition.c), so that the answer is unique.
 * Quantising the keys to integers keeps the order a total order, so the
 * search below cannot cycle.
 *
 * Lower bounds.  The simulator runs each rank's actions in order, each
 * starting no earlier than the previous one ended, and a receive no
 * earlier than its send started; so the step is the longest path of a
 * max-plus system, and two bounds hold for every split:
 *   - load: a rank's actions run one after another from time 0, so
 *     step >= the largest sum of one rank's action durations (counted
 *     per op and stage from the schedule, so it holds for any kind);
 *   - path (p > 1, when every rank r > 0 opens with RECV_F(r, 0) and
 *     closes with SEND_B(r, m-1) of its first chunk, stage r, and every
 *     backward is whole: checked on the schedule; true of GPipe, 1F1B
 *     and interleaved): microbatch 0 must pass forward through stages
 *     0..r-1 before rank r can start, and microbatch m-1's gradient must
 *     go back through them after rank r's last send, so
 *       step >= sum_{t<r} F_t + sum_{t<r-1} cf_t        (fill)
 *             + load_r - cb_r                            (rank r)
 *             + sum_{1<=t<=r} cb_t + sum_{t<r} B_t       (drain)
 *     with cf_t, cb_t the p2p times of SEND_F and SEND_B of stage t.
 *     For equal stages and free p2p this is the closed form
 *     (m + p - 1)(F + B): the bound is tight where the bubble formula is.
 * Over all splits, the step is at least m x the exact least bottleneck of
 * partition.c (one chunk: a rank's load is m times its stage time, and
 * the caps there are the simulated ones), and with v chunks at least
 * m x max(least bottleneck without caps, least total stage time / p);
 * with one chunk, GPipe and 1F1B, at least the least path bound over all
 * fitting splits, which partition.c solves exactly
 * (ppcc_partition_path_bound).  The caller passes the best of these in
 * lower_bound_ms; it is printed as the gap.  The first two include no fill
 * or drain, so the gap they leave includes the bubble that no split
 * removes: they say how far from optimal the answer can be at most, not
 * how far it is.
 *
 * The search.
 *   - When the number of splits C(n-1, S-1) is within the budget of
 *     simulations, every split is simulated: the answer is exact.
 *   - Otherwise every seed the caller gives is simulated (ppcc's
 *     least-bottleneck split, or the least-overflow one when nothing fits
 *     its per-chunk shares; the uniform split; the split of the least path
 *     bound; an explicit partition).  Then, best seed first, each is
 *     improved on the bound alone (steepest descent over the moves of one
 *     boundary by one layer, at most 4S rounds, no simulation: a move is
 *     O(p) with the stage costs updated in place), that split simulated
 *     and kept when better, and from there a simulated descent: each round
 *     looks at every move of one boundary by one layer, skips a move whose
 *     bound already exceeds the round's best step, simulates the rest, and
 *     moves to the best if it is better in the order.  It stops at a local
 *     optimum or when the budget is spent.  The result is never worse than
 *     any seed (in particular the uniform split), and is reported with the
 *     simulations it took.
 * Cost: one simulation is linear in the actions, O(S m); a round of a
 * descent is 2(S - 1) bound evaluations of O(p) and, simulated, at most
 * as many simulations; the budget bounds the simulations in all
 * (ppcc_step_problem.max_sims, by default PPCC_STEP_ACTIONS simulated
 * actions), the bound-only descents take O(S^2 p) each.
 *
 * Reuse.  A ppcc_step_ctx keeps every buffer the search needs, including
 * an arena reset after each simulation: a planner that calls the search
 * many times allocates nothing per call once the context is big enough.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ppcc.h"

struct ppcc_step_ctx {
	int n, S, p;                /* capacity the buffers were sized for */
	ppcc_arena *arena;          /* one simulation's arrays, reset after */
	ppcc_stage_cost *costs;     /* S: the split the bound looks at */
	ppcc_stage_cost *sim_costs; /* S: the split simulated */
	int *cur, *cand, *best, *trial, *seed; /* S + 1 each */
	double *rank_sum;           /* p: a rank's actions' durations */
	double *stage_total;        /* S: a stage's actions' durations */
	int32_t *op_count;          /* S * PPCC_OP_COUNT: actions per op */
	int *stage_rank;            /* S */
};

typedef struct step_key {
	int fits;
	int64_t over;    /* bytes over the worst rank's cap (when not fits) */
	int64_t step_ns;
	int64_t peak;    /* bytes, the largest per-rank peak */
	int64_t spread_ns;
	double step_ms;  /* unquantised, for reporting */
	double peak_bytes;
} step_key;

typedef struct step_run {
	ppcc_step_ctx *x;
	const ppcc_step_problem *sp;
	const ppcc_schedule *shape;
	int n, S, p, m;
	long sims, budget;
	int path_bound; /* the path bound's preconditions hold */
} step_run;

void ppcc_step_ctx_free(ppcc_step_ctx *x)
{
	if (!x)
		return;
	ppcc_arena_free(x->arena);
	ppcc_free(x->costs);
	ppcc_free(x->sim_costs);
	ppcc_free(x->cur);
	ppcc_free(x->rank_sum);
	ppcc_free(x->stage_total);
	ppcc_free(x->op_count);
	ppcc_free(x->stage_rank);
	ppcc_free(x);
}

/* Sizes the context for n layers, S stages and p ranks (grows only). */
static int step_ctx_reserve(ppcc_step_ctx **px, int n, int S, int p)
{
	ppcc_step_ctx *x = *px;
	if (x && x->n >= n && x->S >= S && x->p >= p)
		return 0;
	if (x) {
		n = n > x->n ? n : x->n;
		S = S > x->S ? S : x->S;
		p = p > x->p ? p : x->p;
	}
	ppcc_step_ctx *y = ppcc_calloc(1, sizeof *y);
	if (!y)
		return PPCC_ENOMEM;
	y->n = n;
	y->S = S;
	y->p = p;
	y->arena = ppcc_arena_new();
	y->costs = ppcc_calloc((size_t)S, sizeof *y->costs);
	y->sim_costs = ppcc_calloc((size_t)S, sizeof *y->sim_costs);
	y->cur = ppcc_calloc(5 * ((size_t)S + 1), sizeof(int));
	y->rank_sum = ppcc_calloc((size_t)p, sizeof(double));
	y->stage_total = ppcc_calloc((size_t)S, sizeof(double));
	y->op_count = ppcc_calloc((size_t)S * PPCC_OP_COUNT, sizeof(int32_t));
	y->stage_rank = ppcc_calloc((size_t)S, sizeof(int));
	if (!y->arena || !y->costs || !y->sim_costs || !y->cur || !y->rank_sum || !y->stage_total ||
	    !y->op_count || !y->stage_rank) {
		ppcc_step_ctx_free(y);
		return PPCC_ENOMEM;
	}
	y->cand = y->cur + (S + 1);
	y->best = y->cand + (S + 1);
	y->trial = y->best + (S + 1);
	y->seed = y->trial + (S + 1);
	ppcc_step_ctx_free(x);
	*px = y;
	return 0;
}

int ppcc_step_ctx_new(ppcc_step_ctx **out, int n, int S, int p)
{
	*out = NULL;
	if (n < 1 || S < 1 || p < 1)
		return PPCC_EINPUT;
	return step_ctx_reserve(out, n, S, p);
}

static double step_op_ms(const ppcc_stage_cost *c, int op, int stage)
{
	switch (op) {
	case PPCC_OP_F: return c[stage].fwd_ms;
	case PPCC_OP_B: return c[stage].bwd_ms;
	case PPCC_OP_I: return c[stage].bwd_input_ms;
	case PPCC_OP_W: return c[stage].bwd_weight_ms;
	case PPCC_OP_SEND_F: return c[stage].send_f_ms;
	case PPCC_OP_SEND_B: return c[stage].send_b_ms;
	case PPCC_OP_RECV_F: return stage > 0 ? c[stage - 1].send_f_ms : 0;
	case PPCC_OP_RECV_B: return c[stage + 1].send_b_ms;
	default: return 0;
	}
}

/* Counts each rank's actions per (stage, op) and checks the path bound's
 * preconditions on the schedule. */
static int step_shape(step_run *w)
{
	const ppcc_schedule *s = w->shape;
	ppcc_step_ctx *x = w->x;
	memset(x->op_count, 0, (size_t)w->S * PPCC_OP_COUNT * sizeof(int32_t));
	for (int st = 0; st < w->S; st++)
		x->stage_rank[st] = st % w->p;
	for (int r = 0; r < w->p; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			if (a->stage < 0 || a->stage >= w->S || a->op < 0 ||
			    a->op >= PPCC_OP_COUNT || a->stage % w->p != r ||
			    (a->op == PPCC_OP_RECV_F && a->stage == 0) ||
			    (a->op == PPCC_OP_RECV_B && a->stage == w->S - 1))
				return PPCC_EINPUT;
			x->op_count[a->stage * PPCC_OP_COUNT + a->op]++;
		}
	}
	w->path_bound = w->p > 1;
	for (int r = 1; r < w->p && w->path_bound; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		const ppcc_action *a = rs->actions, *z = a + rs->n_actions - 1;
		if (rs->n_actions < 2 ||
		    a->op != PPCC_OP_RECV_F || a->stage != r || a->mb != 0 ||
		    z->op != PPCC_OP_SEND_B || z->stage != r || z->mb != w->m - 1)
			w->path_bound = 0;
	}
	/* and the backward must be whole (B, not I + W) on stages before */
	for (int st = 0; st < w->S && w->path_bound; st++)
		if (x->op_count[st * PPCC_OP_COUNT + PPCC_OP_B] != w->m)
			w->path_bound = 0;
	return 0;
}

/* The durations of stage st's actions under x->costs. */
static double step_stage_total(const step_run *w, int st)
{
	const int32_t *cnt = &w->x->op_count[st * PPCC_OP_COUNT];
	double t = 0;
	for (int op = 0; op < PPCC_OP_COUNT; op++)
		if (cnt[op])
			t += cnt[op] * step_op_ms(w->x->costs, op, st);
	return t;
}

/* The larger of the load and path bounds, from x->costs, x->stage_total
 * and x->rank_sum (kept up to date by the callers).  O(p). */
static double step_bound_now(const step_run *w)
{
	const ppcc_step_ctx *x = w->x;
	const ppcc_stage_cost *c = x->costs;
	const double *sum = x->rank_sum;
	double bound = 0;
	for (int r = 0; r < w->p; r++)
		bound = sum[r] > bound ? sum[r] : bound;
	if (w->path_bound) {
		double fill = 0, fill_comm = 0, drain = 0;
		for (int r = 1; r < w->p; r++) {
			/* fill: F_0..F_{r-1}, cf_0..cf_{r-2}; drain: B_0..B_{r-1},
			 * cb_1..cb_r */
			fill += c[r - 1].fwd_ms;
			if (r >= 2)
				fill_comm += c[r - 2].send_f_ms;
			drain += c[r - 1].bwd_ms + c[r].send_b_ms;
			double b = fill + fill_comm + sum[r] - c[r].send_b_ms + drain;
			bound = b > bound ? b : bound;
		}
	}
	/* below the exact value by more than the rounding of the sums */
	return bound * (1 - 1e-12);
}

/* The bound for the costs in x->costs, recomputing the sums.  O(S). */
static double step_bound(const step_run *w)
{
	ppcc_step_ctx *x = w->x;
	for (int r = 0; r < w->p; r++)
		x->rank_sum[r] = 0;
	for (int st = 0; st < w->S; st++) {
		x->stage_total[st] = step_stage_total(w, st);
		x->rank_sum[x->stage_rank[st]] += x->stage_total[st];
	}
	return step_bound_now(w);
}

/* Stage st of the split in x->costs now holds layers i..j: its cost (and
 * the p2p time its neighbours receive from it), totals and rank sums. */
static int step_restage(step_run *w, int st, int i, int j)
{
	ppcc_step_ctx *x = w->x;
	int err = w->sp->stage_cost(w->sp->user, st, i, j, &x->costs[st]);
	if (err < 0)
		return err;
	for (int k = st - 1; k <= st + 1; k++) {
		if (k < 0 || k >= w->S)
			continue;
		double t = step_stage_total(w, k);
		x->rank_sum[x->stage_rank[k]] += t - x->stage_total[k];
		x->stage_total[k] = t;
	}
	return 0;
}

/* The bound of first with boundary b moved to at, from the state of
 * first (x->costs and sums), which it leaves as it found it.  O(p). */
static int step_bound_moved(const step_run *cw, const int *first, int b,
			    int at, double *out)
{
	step_run *w = (step_run *)cw;
	ppcc_step_ctx *x = w->x;
	int S = w->S, lo = b - 1, hi = b;
	int end = b + 1 < S ? first[b + 1] - 1 : w->n - 1;
	ppcc_stage_cost keep[2] = {x->costs[lo], x->costs[hi]};
	double tot[4], sums[4];
	int ranks[4], n_saved = 0;
	for (int k = lo - 1; k <= hi + 1; k++)
		if (k >= 0 && k < S) {
			tot[n_saved] = x->stage_total[k];
			ranks[n_saved] = x->stage_rank[k];
			sums[n_saved++] = x->rank_sum[x->stage_rank[k]];
		}
	int err;
	if ((err = step_restage(w, lo, first[lo], at - 1)) < 0 ||
	    (err = step_restage(w, hi, at, end)) < 0)
		return err;
	*out = step_bound_now(w);
	x->costs[lo] = keep[0];
	x->costs[hi] = keep[1];
	for (int k = lo - 1, i = 0; k <= hi + 1; k++)
		if (k >= 0 && k < S)
			x->stage_total[k] = tot[i++];
	for (int i = n_saved - 1; i >= 0; i--)
		x->rank_sum[ranks[i]] = sums[i];
	return 0;
}

static int64_t step_quantise(double v)
{
	if (!(v < 9e18))
		return INT64_MAX;
	if (!(v > -9e18))
		return INT64_MIN;
	return (int64_t)llround(v);
}

/* Simulates the split first with its costs in costs; fills *k. */
static int step_sim(step_run *w, const ppcc_stage_cost *costs, step_key *k)
{
	ppcc_step_ctx *x = w->x;
	const ppcc_step_problem *sp = w->sp;
	ppcc_estimate est;
	int err;
	w->sims++;
	err = ppcc_simulate_keep(&est, x->arena, w->shape, costs, 0);
	if (err < 0) {
		ppcc_arena_reset(x->arena);
		return err == PPCC_EINPUT ? PPCC_EINTERNAL : err;
	}
	double over = -INFINITY, peak = 0, lo = INFINITY, hi = 0;
	for (int r = 0; r < w->p; r++) {
		double pk = est.peak_memory_bytes[r];
		double cap = sp->rank_cap ? sp->rank_cap[r] : INFINITY;
		if (pk - cap > over)
			over = pk - cap;
		if (pk > peak)
			peak = pk;
		double occ = est.busy_ms[r] + est.comm_ms[r];
		lo = occ < lo ? occ : lo;
		hi = occ > hi ? occ : hi;
	}
	k->fits = !(over > 0);
	k->over = k->fits ? 0 : step_quantise(ceil(over));
	k->step_ms = est.step_ms;
	k->step_ns = step_quantise(est.step_ms * 1e6);
	k->peak_bytes = peak;
	k->peak = step_quantise(peak);
	k->spread_ns = step_quantise((hi - lo) * 1e6);
	ppcc_arena_reset(x->arena);
	return 0;
}

/* Simulates the split first (its costs go to x->costs). */
static int step_eval(step_run *w, const int *first, step_key *k)
{
	int err = w->sp->costs(w->sp->user, first, w->x->costs);
	return err < 0 ? err : step_sim(w, w->x->costs, k);
}

/* The same, leaving x->costs (the current split's) alone. */
static int step_eval_keep(step_run *w, const int *first, step_key *k)
{
	int err = w->sp->costs(w->sp->user, first, w->x->sim_costs);
	return err < 0 ? err : step_sim(w, w->x->sim_costs, k);
}

/* < 0 when (a, fa) comes first in the documented order, > 0 after. */
static int step_cmp(const step_key *a, const int *fa, const step_key *b,
		    const int *fb, int S)
{
	if (a->fits != b->fits)
		return a->fits ? -1 : 1;
	if (!a->fits && a->over != b->over)
		return a->over < b->over ? -1 : 1;
	if (a->step_ns != b->step_ns)
		return a->step_ns < b->step_ns ? -1 : 1;
	if (a->peak != b->peak)
		return a->peak < b->peak ? -1 : 1;
	if (a->spread_ns != b->spread_ns)
		return a->spread_ns < b->spread_ns ? -1 : 1;
	for (int s = S - 1; s > 0; s--)
		if (fa[s] != fb[s])
			return fa[s] > fb[s] ? -1 : 1;
	return 0;
}

/* C(n-1, S-1), or limit + 1 when it exceeds limit. */
static long step_count_splits(int n, int S, long limit)
{
	long long c = 1;
	int k = S - 1, top = n - 1;
	if (k > top - k)
		k = top - k;
	for (int i = 1; i <= k; i++) {
		c = c * (top - k + i) / i; /* exact: a binomial at each step */
		if (c > limit)
			return limit + 1;
	}
	return (long)c;
}

static int step_valid(const int *first, int n, int S)
{
	if (first[0] != 0)
		return 0;
	for (int s = 1; s < S; s++)
		if (first[s] <= first[s - 1] || first[s] >= n)
			return 0;
	return 1;
}

/* Keeps (first, k) in best when it comes first. */
static void step_offer(step_run *w, step_key *best, int *have,
		       const int *first, const step_key *k)
{
	if (!*have || step_cmp(k, first, best, w->x->best, w->S) < 0) {
		*best = *k;
		memcpy(w->x->best, first, (size_t)w->S * sizeof(int));
		*have = 1;
	}
}

static int step_enumerate(step_run *w, step_key *best, int *have)
{
	int S = w->S, n = w->n, err;
	int *f = w->x->trial;
	for (int s = 0; s < S; s++)
		f[s] = s;
	for (;;) {
		step_key k;
		if ((err = step_eval(w, f, &k)) < 0)
			return err;
		step_offer(w, best, have, f, &k);
		/* next combination of first[1..S-1] in lexicographic order */
		int s = S - 1;
		while (s >= 1 && f[s] == n - S + s)
			s--;
		if (s < 1)
			return 0;
		f[s]++;
		for (int t = s + 1; t < S; t++)
			f[t] = f[t - 1] + 1;
	}
}

/* Descends from start (simulated as *start_key), offering what it finds. */
static int step_descend(step_run *w, const int *start, const step_key *start_key,
			step_key *best, int *have)
{
	int S = w->S, n = w->n, err;
	ppcc_step_ctx *x = w->x;
	int *cur = x->cur, *cand = x->cand;
	memcpy(cur, start, (size_t)S * sizeof(int));
	step_key ck = *start_key;
	while (w->sims < w->budget) {
		int moved = 0;
		if ((err = w->sp->costs(w->sp->user, cur, x->costs)) < 0)
			return err;
		step_bound(w);
		step_key rk = ck;
		int *round_best = x->trial;
		memcpy(round_best, cur, (size_t)S * sizeof(int));
		for (int b = 1; b < S && w->sims < w->budget; b++) {
			for (int d = -1; d <= 1 && w->sims < w->budget; d += 2) {
				int at = cur[b] + d;
				int lo = cur[b - 1], hi = b + 1 < S ? cur[b + 1] : n;
				if (at <= lo || at >= hi)
					continue;
				memcpy(cand, cur, (size_t)S * sizeof(int));
				cand[b] = at;
				if (rk.fits) {
					double bound;
					if ((err = step_bound_moved(w, cur, b, at, &bound)) < 0)
						return err;
					if (bound > rk.step_ms + 1e-6)
						continue;
				}
				step_key k;
				if ((err = step_eval_keep(w, cand, &k)) < 0)
					return err;
				if (step_cmp(&k, cand, &rk, round_best, S) < 0) {
					rk = k;
					memcpy(round_best, cand, (size_t)S * sizeof(int));
					moved = 1;
				}
			}
		}
		if (!moved)
			break;
		memcpy(cur, round_best, (size_t)S * sizeof(int));
		ck = rk;
		step_offer(w, best, have, cur, &ck);
	}
	return 0;
}

/* Descends on the bound alone (no simulation): from first, each round
 * moves to the neighbour (one boundary, one layer) with the least bound,
 * while that is below the current one; at most max_rounds rounds.
 * Leaves the split in first. */
static int step_bound_descend(step_run *w, int *first, int max_rounds)
{
	int S = w->S, n = w->n, err;
	ppcc_step_ctx *x = w->x;
	int *cand = x->cand;
	(void)cand;
	if ((err = w->sp->costs(w->sp->user, first, x->costs)) < 0)
		return err;
	double cur = step_bound(w);
	for (int round = 0; round < max_rounds; round++) {
		int best_b = -1, best_at = 0;
		double best = cur;
		for (int b = 1; b < S; b++) {
			int lo = first[b - 1], hi = b + 1 < S ? first[b + 1] : n;
			for (int d = -1; d <= 1; d += 2) {
				int at = first[b] + d;
				if (at <= lo || at >= hi)
					continue;
				double v;
				if ((err = step_bound_moved(w, first, b, at, &v)) < 0)
					return err;
				if (v < best) {
					best = v;
					best_b = b;
					best_at = at;
				}
			}
		}
		if (best_b < 0)
			break;
		int end = best_b + 1 < S ? first[best_b + 1] - 1 : n - 1;
		if ((err = step_restage(w, best_b - 1, first[best_b - 1], best_at - 1)) < 0 ||
		    (err = step_restage(w, best_b, best_at, end)) < 0)
			return err;
		first[best_b] = best_at;
		cur = step_bound_now(w);
	}
	return 0;
}

int ppcc_partition_step(int *out_first, ppcc_step_result *res,
			ppcc_step_ctx **ctx, const ppcc_step_problem *sp)
{
	int err;
	if (!out_first || !res || !ctx || !sp || !sp->shape || !sp->costs ||
	    !sp->stage_cost)
		return PPCC_EINPUT;
	const ppcc_schedule *shape = sp->shape;
	int n = sp->n_layers, S = shape->n_stages, p = shape->n_ranks;
	if (n < S || S < 1 || p < 1 || S % p != 0 || shape->n_microbatches < 1)
		return PPCC_EINPUT;
	if ((err = step_ctx_reserve(ctx, n, S, p)) < 0)
		return err;
	step_run w = {0};
	w.x = *ctx;
	w.sp = sp;
	w.shape = shape;
	w.n = n;
	w.S = S;
	w.p = p;
	w.m = shape->n_microbatches;
	/* the budget: max_sims, else as many simulations as fit in
	 * PPCC_STEP_ACTIONS simulated actions, at least PPCC_STEP_MIN_SIMS */
	long actions = 0;
	for (int r = 0; r < p; r++)
		actions += shape->ranks[r].n_actions;
	w.budget = sp->max_sims > 0 ? sp->max_sims
		 : (long)(PPCC_STEP_ACTIONS / (actions > 0 ? actions : 1));
	if (sp->max_sims <= 0 && w.budget < PPCC_STEP_MIN_SIMS)
		w.budget = PPCC_STEP_MIN_SIMS;
	if ((err = step_shape(&w)) < 0)
		return err;

	memset(res, 0, sizeof *res);
	step_key best = {0};
	int have = 0;
	long splits = step_count_splits(n, S, w.budget);
	if (splits <= w.budget) {
		if ((err = step_enumerate(&w, &best, &have)) < 0)
			return err;
		res->exact = 1;
	} else {
		/* every seed simulated; then, best seed first, the best of each
		 * improved on the bound alone and simulated, and a descent
		 * from it while the budget lasts */
		step_key keys[PPCC_STEP_MAX_SEEDS];
		int order[PPCC_STEP_MAX_SEEDS], n_order = 0;
		if (sp->n_seeds > PPCC_STEP_MAX_SEEDS)
			return PPCC_EINPUT;
		for (int i = 0; i < sp->n_seeds; i++) {
			if (!sp->seeds[i])
				continue; /* a seed the caller did not have */
			if (!step_valid(sp->seeds[i], n, S))
				return PPCC_EINPUT;
			int dup = 0;
			for (int k = 0; k < n_order; k++)
				dup |= memcmp(sp->seeds[order[k]], sp->seeds[i],
					      (size_t)S * sizeof(int)) == 0;
			if (dup)
				continue;
			if ((err = step_eval(&w, sp->seeds[i], &keys[i])) < 0)
				return err;
			step_offer(&w, &best, &have, sp->seeds[i], &keys[i]);
			/* insert by the documented order */
			int at = n_order++;
			while (at > 0 && step_cmp(&keys[i], sp->seeds[i], &keys[order[at - 1]],
						  sp->seeds[order[at - 1]], S) < 0) {
				order[at] = order[at - 1];
				at--;
			}
			order[at] = i;
		}
		if (!have)
			return PPCC_EINPUT;
		int *f = w.x->seed;
		for (int k = 0; k < n_order && w.sims < w.budget; k++) {
			step_key fk = keys[order[k]];
			memcpy(f, sp->seeds[order[k]], (size_t)S * sizeof(int));
			if (fk.fits) {
				if ((err = step_bound_descend(&w, f, 4 * S)) < 0)
					return err;
				if (memcmp(f, sp->seeds[order[k]], (size_t)S * sizeof(int)) != 0) {
					step_key k2;
					if ((err = step_eval(&w, f, &k2)) < 0)
						return err;
					step_offer(&w, &best, &have, f, &k2);
					if (step_cmp(&k2, f, &fk, sp->seeds[order[k]], S) < 0)
						fk = k2;
					else
						memcpy(f, sp->seeds[order[k]], (size_t)S * sizeof(int));
				}
			}
			if ((err = step_descend(&w, f, &fk, &best, &have)) < 0)
				return err;
		}
	}
	res->simulations = w.sims;
	res->path_bound = w.path_bound;
	res->budget = w.budget;
	res->splits = splits <= w.budget ? splits : -1;
	res->step_ms = best.step_ms;
	res->peak_bytes = best.peak_bytes;
	res->lower_bound_ms = sp->lower_bound_ms;
	memcpy(out_first, w.x->best, (size_t)S * sizeof(int));
	return best.fits ? 0 : PPCC_EINFEASIBLE;
}

double ppcc_step_split_bound(ppcc_step_ctx **ctx, const ppcc_step_problem *sp,
			     const int *first)
{
	step_run w = {0};
	const ppcc_schedule *shape = sp->shape;
	if (step_ctx_reserve(ctx, sp->n_layers, shape->n_stages, shape->n_ranks) < 0)
		return NAN;
	w.x = *ctx;
	w.sp = sp;
	w.shape = shape;
	w.n = sp->n_layers;
	w.S = shape->n_stages;
	w.p = shape->n_ranks;
	w.m = shape->n_microbatches;
	if (step_shape(&w) < 0 || sp->costs(sp->user, first, w.x->costs) < 0)
		return NAN;
	return step_bound(&w);
}
