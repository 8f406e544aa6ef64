/*
 * bound.c - a lower bound on the simulated step of every split of the
 * layers into stages, for ppcc search's pruning: from FLOPs alone
 * (search.c, for every candidate before any is planned) and from the
 * plan's cost tables (plan.c, iteration_lower_bound, before a
 * candidate's split search).
 *
 * The argument, from the simulator's rules (simulate.c: each rank runs
 * its actions one after another from time 0; a receive starts no earlier
 * than its send, which comes after the compute that made its message;
 * the step is the latest end of any action).  Take rank r, s_r its
 * lowest stage (from the kind's stage table), W_r the compute of its
 * layers per microbatch (F + B, or F + I + W), e_r its p2p per
 * microbatch (both directions at each of its stages' boundaries with
 * another rank).
 *
 *   (a) Every action of r starts no earlier than lead_r = the forward of
 *       one microbatch through every layer before stage s_r: a compute of
 *       r needs an F of r first (B, I and W need their F), an F of stage
 *       s >= s_r needs the F of the same microbatch on stage s - 1, ...,
 *       0 (its input, received or handed over on the rank, is made by
 *       that F), one after another; and a receive of r waits for a
 *       message made by such an F or by a backward after one.  The
 *       stages before s_r hold at least s_r layers (one each at least),
 *       and the first layers in order, so lead_r >= F_prefix(s_r).
 *   (b) From then on r runs m (W_r + e_r) of actions one after another:
 *         step >= F_prefix(s_r) + m (W_r + e_r).
 *   (c) When the kind does not split the backward (the table's
 *       split_backward 0), r's last compute is a B (each F of r has its
 *       B on r, after it) of some stage s >= s_r; that gradient then
 *       passes through the B of stages s - 1, ..., 0 one after another,
 *       at least the backward of the first s_r layers.  Its compute
 *       before that B is all of it, so, counting no p2p:
 *         step >= FB_prefix(s_r) + m W_r.
 *   (d) And from the other end: Every backward action of r (B, or I and W) of a stage s comes
 *       after the input gradient of its microbatch has come back to s,
 *       made by the B (or I) of s + 1, ..., S - 1 one after another, the
 *       first of which needs the forward of that microbatch through every
 *       stage; over r's stages this is least for its highest, h_r, after
 *       which lie at least the model's last S - 1 - h_r layers.  These
 *       backwards run one after another, m of each of r's layers:
 *         step >= F_all + Bx_suffix(S - 1 - h_r) + m Bwd_r,
 *       the form of (b) over the layers taken from the last (lead F_all
 *       plus the input gradient's prefix, at most the backward a layer),
 *       bounded over every split as below.
 *
 * A split fixes W_r; two relaxations bound the least over every split of
 * max_r of (b), of (c) or of (d) (lead the prefix of F, of F + B, or
 * from the last layer; e_r 0 for (c) and (d)):
 *
 *   - contiguous, when rank r holds stage r alone: stage r starts at
 *     layer i_r, lead_r = P(i_r) (P the prefix of the per-layer lead,
 *     at most the layer's W, m >= 1) and W_r the layers i_r..i_{r+1}-1.
 *     For a candidate value X the greedy split giving each stage in turn
 *     as many layers as P(i_r) + m (W(i_r .. i_{r+1}) + e) <= X allows
 *     (e the least e_r) ends past the last layer if and only if some
 *     split (empty stages allowed) stays within X: by induction its
 *     boundaries are at or after any such split's, since moving a
 *     stage's start later by layers of lead L and work W' changes
 *     P + m W by L - m W' <= 0.  So the least X (bisected) is a bound;
 *   - allocation, for any placement: rank r holds some n_r >= its stage
 *     count of layers, and its W_r is at least their sum.  For a value
 *     X rank r has room_r = (X - F_prefix(s_r)) / m - e_r for them; of
 *     the t costliest layers it holds some a_r, whose sum is at least
 *     that of the a_r cheapest of those t, so a_r <= q_r(t), the most of
 *     them whose cheapest sum fits room_r; all t are held somewhere, so
 *     a split within X needs sum_r q_r(t) >= t for every t (checked for
 *     t = k p + 1, where some rank must hold k + 1 of them, the classic
 *     bound of scheduling on identical machines, and t = n, with
 *     q_r(n) >= the stage count).
 *
 * Bisection keeps lo a value no split reaches (or a bound proven
 * otherwise), so lo is returned: the least step is above it.
 *
 * The bound is a function of the problem's numbers alone, so
 * ppcc_bound_step_memo keeps it by them (ppcc search asks it of every
 * candidate's cost tables, and candidates that differ only in what the
 * tables do not carry, the ZeRO stage below 3 or the kind of one
 * placement and backward, ask it of the same problem).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ppcc.h"

#define BOUND_STEPS 48
#define BOUND_RANKS 512

/* The greedy split within x: 1 when it covers every layer. */
static int contiguous_within(const ppcc_bound_problem *b, const double *lead,
			     double e, double x)
{
	int n = b->n_layers, i = 0;
	const double *W = b->work_prefix;
	for (int r = 0; r < b->n_ranks && i < n; r++) {
		double room = (x - lead[i]) / b->microbatches - e;
		if (room < 0)
			return 0;
		double limit = W[i] + room;
		while (i < n && W[i + 1] <= limit)
			i++;
	}
	return i >= n;
}

/* The most of the t costliest layers that fit in room: the least j
 * of them are the j cheapest, least[n - t + j] - least[n - t]. */
static int most_of_top(const double *least, int n, int t, double room)
{
	int lo = 0, hi = t;
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;
		if (least[n - t + mid] - least[n - t] <= room)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Whether the layers can be dealt to the ranks within x, as far as
 * counts tell: for each t checked (t = k p + 1, and n), rank r holds at
 * most q_r(t) of the t costliest layers (the most of them whose least
 * sum fits its room), and they must all be held: sum q_r(t) >= t; with
 * t = n, every rank at least one layer a stage. */
static int allocation_within(const ppcc_bound_problem *b, const double *lead,
			     const double *e, double x, double *room)
{
	int n = b->n_layers, p = b->n_ranks;
	const double *least = b->least_prefix;
	for (int r = 0; r < p; r++) {
		room[r] = (x - lead[b->first_stage[r]]) / b->microbatches -
			  (e ? e[r] : 0);
		if (room[r] < 0)
			return 0;
	}
	for (int t = p + 1;; t += p) {
		if (t > n)
			t = n;
		long held = 0;
		for (int r = 0; r < p && (held < t || t == n); r++) {
			int q = most_of_top(least, n, t, room[r]);
			if (t == n && q < b->stage_count[r])
				return 0;
			held += q;
		}
		if (held < t)
			return 0;
		if (t == n)
			return 1;
	}
}

/* The least x within which a split exists, from below: lo (a proven
 * bound) raised by bisection to hi (a value reached). */
static double bisect(const ppcc_bound_problem *b, const double *lead,
		     const double *e, double e_least, double lo, double hi,
		     double *room)
{
	for (int k = 0; k < BOUND_STEPS && hi - lo > 1e-12 * hi; k++) {
		double mid = lo + (hi - lo) / 2;
		int ok = b->contiguous ? contiguous_within(b, lead, e_least, mid)
				       : allocation_within(b, lead, e, mid, room);
		if (ok)
			hi = mid;
		else
			lo = mid;
	}
	return lo;
}

double ppcc_bound_step(const ppcc_bound_problem *b)
{
	int n = b->n_layers, p = b->n_ranks;
	double m = b->microbatches;
	if (n < 1 || p < 1 || m < 1)
		return 0;
	double room_here[BOUND_RANKS], *room = room_here;
	if (p > BOUND_RANKS && !(room = malloc((size_t)p * sizeof *room)))
		return m * b->work_prefix[n] / p;
	double e_sum = 0, e_least = INFINITY, e_most = 0;
	for (int r = 0; r < p; r++) {
		double e = b->extra ? b->extra[r] : 0;
		e_sum += e;
		e_least = e < e_least ? e : e_least;
		e_most = e > e_most ? e : e_most;
	}
	/* the busiest rank is at least the average */
	double lo = m * (b->work_prefix[n] + e_sum) / p, best = lo;
	for (int pass = 0; pass < 2; pass++) {
		/* pass 0: (b), the forward's lead and the p2p; pass 1: (c) */
		const double *lead = pass ? b->lead_fb_prefix : b->lead_f_prefix;
		const double *e = pass ? NULL : b->extra;
		double el = pass ? 0 : e_least;
		if (!lead)
			continue;
		double hi = b->contiguous
			? lead[n] + m * (b->work_prefix[n] + el)
			: lead[n] + m * (b->least_prefix[n] + (pass ? 0 : e_most));
		double start = pass ? m * b->work_prefix[n] / p : lo;
		if (hi <= start)
			continue;
		double x = bisect(b, lead, e, el, start, hi, room);
		best = x > best ? x : best;
	}
	if (b->back_lead_prefix && b->back_work_prefix && b->back_least_prefix &&
	    b->back_first_stage) {
		/* (d), as (b) over the layers from the last */
		ppcc_bound_problem r = *b;
		r.lead_f_prefix = b->back_lead_prefix;
		r.lead_fb_prefix = NULL;
		r.work_prefix = b->back_work_prefix;
		r.least_prefix = b->back_least_prefix;
		r.extra = NULL;
		r.first_stage = b->back_first_stage;
		const double *lead = r.lead_f_prefix;
		double start = m * r.work_prefix[n] / p;
		double hi = lead[n] + m * (r.contiguous ? r.work_prefix[n]
						      : r.least_prefix[n]);
		if (hi > start) {
			double x = bisect(&r, lead, NULL, 0, start, hi, room);
			best = x > best ? x : best;
		}
	}
	if (room != room_here)
		free(room);
	return best;
}

/* ppcc_bound_step remembered by its problem (ppcc_bound_memo): the
 * bound is a function of the problem's numbers alone, so one whose
 * every array and count is, bit for bit, that of one computed before
 * has its bound.  The key is the problem laid out as bytes (the counts,
 * which arrays are given, then each array); an entry keeps its key and
 * its bound, in an arena started over when it passes max_bytes. */
typedef struct memo_entry {
	struct memo_entry *next;
	uint64_t hash;
	size_t size;
	unsigned char *key;
	double bound;
} memo_entry;

#define MEMO_SLOTS 4096

struct ppcc_bound_memo {
	ppcc_arena *a;
	size_t bytes, max_bytes;
	memo_entry *slot[MEMO_SLOTS];
	unsigned char *key;
	size_t key_cap;
	long hits, misses;
};

ppcc_bound_memo *ppcc_bound_memo_new(size_t max_bytes)
{
	ppcc_bound_memo *m = ppcc_calloc(1, sizeof *m);
	if (!m)
		return NULL;
	if (!(m->a = ppcc_arena_new())) {
		ppcc_free(m);
		return NULL;
	}
	m->max_bytes = max_bytes;
	return m;
}

void ppcc_bound_memo_free(ppcc_bound_memo *m)
{
	if (!m)
		return;
	ppcc_arena_free(m->a);
	ppcc_free(m->key);
	ppcc_free(m);
}

void ppcc_bound_memo_counts(const ppcc_bound_memo *m, long *hits, long *misses)
{
	*hits = m ? m->hits : 0;
	*misses = m ? m->misses : 0;
}

static unsigned char *memo_put(unsigned char *at, const void *v, size_t n)
{
	if (v && n)
		memcpy(at, v, n);
	return at + n;
}

double ppcc_bound_step_memo(ppcc_bound_memo *m, const ppcc_bound_problem *b)
{
	if (!m || b->n_layers < 1 || b->n_ranks < 1)
		return ppcc_bound_step(b);
	size_t n1 = ((size_t)b->n_layers + 1) * sizeof(double);
	size_t pd = (size_t)b->n_ranks * sizeof(double);
	size_t pi = (size_t)b->n_ranks * sizeof(int);
	const double *arr[7] = {b->lead_f_prefix, b->lead_fb_prefix, b->work_prefix,
				b->least_prefix, b->back_lead_prefix,
				b->back_work_prefix, b->back_least_prefix};
	const int *ints[3] = {b->first_stage, b->stage_count, b->back_first_stage};
	int head[5 + 7 + 4] = {b->n_layers, b->n_ranks, b->microbatches,
			       b->contiguous, b->extra != NULL};
	for (int k = 0; k < 7; k++)
		head[5 + k] = arr[k] != NULL;
	for (int k = 0; k < 3; k++)
		head[12 + k] = ints[k] != NULL;
	size_t size = sizeof head + 7 * n1 + pd + 3 * pi;
	if (size > m->key_cap) {
		unsigned char *k = ppcc_realloc(m->key, size);
		if (!k)
			return ppcc_bound_step(b);
		m->key = k;
		m->key_cap = size;
	}
	unsigned char *at = memo_put(m->key, head, sizeof head);
	for (int k = 0; k < 7; k++)
		at = memo_put(at, arr[k], arr[k] ? n1 : 0);
	at = memo_put(at, b->extra, b->extra ? pd : 0);
	for (int k = 0; k < 3; k++)
		at = memo_put(at, ints[k], ints[k] ? pi : 0);
	size = (size_t)(at - m->key);
	uint64_t h = 0xcbf29ce484222325u;
	for (size_t i = 0; i < size; i++)
		h = (h ^ m->key[i]) * 0x100000001b3u;
	memo_entry **sl = &m->slot[h % MEMO_SLOTS];
	for (memo_entry *e = *sl; e; e = e->next)
		if (e->hash == h && e->size == size &&
		    memcmp(e->key, m->key, size) == 0) {
			m->hits++;
			return e->bound;
		}
	m->misses++;
	double bound = ppcc_bound_step(b);
	size_t need = sizeof(memo_entry) + size + 32;
	if (m->bytes + need > m->max_bytes) {
		ppcc_arena_reset(m->a);
		memset(m->slot, 0, sizeof m->slot);
		m->bytes = 0;
		sl = &m->slot[h % MEMO_SLOTS];
	}
	memo_entry *e = ppcc_arena_alloc(m->a, 1, sizeof *e);
	unsigned char *key = ppcc_arena_alloc(m->a, size, 1);
	if (e && key) {
		memcpy(key, m->key, size);
		*e = (memo_entry){*sl, h, size, key, bound};
		*sl = e;
		m->bytes += need;
	}
	return bound;
}
