/*
 * bound.c - a lower bound on the simulated step of every split of the
 * layers into stages, for ppcc search's pruning: from FLOPs alone
 * (search.c, for every candidate before any is planned) and from the
 * plan's cost tables (plan/bounds.c, before a
 * candidate's split search).
 *
 * Contract: the value returned is at most the simulated step of every
 * split the kind's stage table allows (it is the lo of a bisection, a
 * value no split reaches, or a bound proven otherwise).  It rests on four
 * inequalities from the simulator's rules (each rank's lead before its
 * first action, its work, the gradient's way back to stage 0, and from
 * the last layer), each bounded over every split by two relaxations: the
 * contiguous greedy split, and an allocation count over any placement.
 * The bound is a function of the problem's numbers alone, so
 * ppcc_bound_step_memo keeps it by them.
 * Limits: a bound, not the optimum; it counts no p2p in (c) and (d).
 *
 * Derivation: doc/design/bound.md (the inequalities (a) to (d) and the
 * proof that each relaxation bounds every split).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ppcc.h"

#define BOUND_STEPS 48
#define BOUND_RANKS 512
/* The most work one bound does, in layer visits (a greedy check visits
 * n + p, a check by counts (n + p) (log2 n + 1)): the bisections stop
 * where the next check would pass it, at a bound still proven (their lo),
 * only weaker.  A model of 4096 layers needs 2.3 million visits
 * (check_search); a search over 2^20 layers on 256 devices spent 92% of
 * its 34 s in the uncapped bisections (perf), 2.0 s in all with a cap of
 * 2^27; a search over 16,382 transformer layers on 8 devices, 49 s, 98%
 * of it in the 402 planned candidates' bounds at that cap. */
#define BOUND_MAX_VISITS ((int64_t)1 << 24)

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

/* The layer visits of one check of a split within x. */
static int64_t check_visits(int64_t n, int64_t p, int contiguous)
{
	int64_t lg = 1;
	while (lg < 62 && ((int64_t)1 << lg) < n)
		lg++;
	return contiguous ? n + p : (n + p) * (lg + 1);
}

/* The least x within which a split exists, from below: lo (a proven
 * bound) raised by bisection to hi (a value reached). */
static double bisect(const ppcc_bound_problem *b, const double *lead,
		     const double *e, double e_least, double lo, double hi,
		     double *room, int64_t *visits)
{
	int64_t check = check_visits(b->n_layers, b->n_ranks, b->contiguous);
	for (int k = 0; k < BOUND_STEPS && hi - lo > 1e-12 * hi; k++) {
		if (*visits < check)
			break;
		*visits -= check;
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

int64_t ppcc_bound_step_max_visits(int n_layers, int n_ranks)
{
	/* three bisections of BOUND_STEPS checks each, at most */
	int64_t most = 3 * BOUND_STEPS * check_visits(n_layers, n_ranks, 0);
	return most < BOUND_MAX_VISITS ? most : BOUND_MAX_VISITS;
}

double ppcc_bound_step(const ppcc_bound_problem *b)
{
	return ppcc_bound_step_within(b, BOUND_MAX_VISITS, NULL);
}

double ppcc_bound_step_within(const ppcc_bound_problem *b, int64_t max_visits,
			      int64_t *out_visits)
{
	int n = b->n_layers, p = b->n_ranks;
	double m = b->microbatches;
	if (out_visits)
		*out_visits = 0;
	if (n < 1 || p < 1 || m < 1)
		return 0;
	double room_here[BOUND_RANKS], *room = room_here;
	int64_t visits = max_visits;
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
		double x = bisect(b, lead, e, el, start, hi, room, &visits);
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
			double x = bisect(&r, lead, NULL, 0, start, hi, room,
					  &visits);
			best = x > best ? x : best;
		}
	}
	if (room != room_here)
		free(room);
	if (out_visits)
		*out_visits = max_visits - visits;
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
