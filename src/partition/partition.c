/*
 * partition.c - the exact min-bottleneck split of the layers into stages.
 *
 * Stage s takes a contiguous, non-empty run of layers i..j; stage 0 starts
 * at layer 0 and stage S-1 ends at layer n-1.  Its time and memory are the
 * ones ppcc.h defines, and the goal is the least bottleneck B* = min over
 * splits of max_s time(s,...), found by bisection on the integer B with
 * an O(S n) feasibility probe (a sliding window and deque), cut by a
 * relaxation and by the envelope of earlier probes.
 * Contract: the optimum is exact; among the splits that reach B* the one
 * returned starts each stage as late as possible, from the last stage
 * backwards, so it is unique.  Times and bytes are computed exactly in
 * 128 bits: no int64 input overflows them; a stage time above INT64_MAX
 * counts as INT64_MAX and a limit of INT64_MAX means none.  The same
 * machinery gives the least largest memory overflow, and, at the end of
 * this file, the least path bound of GPipe and 1F1B, exact too.
 * Limits: worst case O(S n log(hi - lo)) time and S n + O(n + S) bytes,
 * freed before returning.  This is a proxy: split.c minimises the
 * simulated step, with this split as a seed and B* as a bound.
 *
 * Derivation: doc/design/partition.md (the program, the probe, the
 * search, the tie-break, the arithmetic, the memory question).
 */
#include <stdint.h>
#include <string.h>

#include "ppcc.h"

__extension__ typedef __int128 part_wide;

/* Larger than any time difference of int64 values (< 2^66). */
#define PART_NO_TIME ((part_wide)1 << 100)

/* What a probe allows: stage time <= time (INT64_MAX: any), and memory
 * within mem_cap[s] + slack on every stage with a cap (INT64_MAX: any). */
typedef struct part_limit {
	int64_t time;
	int64_t slack;
} part_limit;

typedef struct part_ctx {
	const ppcc_part_problem *pb;
	int n, S;
	part_wide *dq_g;       /* deque of candidate starts: g_s(i), */
	int *dq_layer;         /* and i */
	int *row_first;        /* first and last j with reach[s][j], -1: none */
	int *row_last;
	int *min_end;          /* earliest end of each stage (the relaxation) */
	int *env_first;        /* where each stage can end in a complete split */
	int *env_last;         /* within the least limit probed successfully */
	int *first;            /* a split rebuilt from the table */
	unsigned char *reach;  /* S rows of n */
	unsigned char *seen;   /* S: part_stage_seen */
	int64_t *least_comm;   /* S: least comm_in + comm_out of each stage */
} part_ctx;

static part_wide part_g(const ppcc_part_problem *pb, int s, int i)
{
	part_wide g = pb->work[s][i];
	if (s > 0)
		g -= pb->comm_in[s][i];
	return g;
}

static part_wide part_h(const ppcc_part_problem *pb, int s, int j)
{
	part_wide h = pb->work[s][j + 1];
	if (s < pb->n_stages - 1)
		h += pb->comm_out[s][j];
	return h;
}

/* Exact; below 2^127 since every factor is below 2^64. */
static part_wide part_memory(const ppcc_part_problem *pb, int s, int i,
			     int j)
{
	part_wide st = (part_wide)pb->static_prefix[j + 1] - pb->static_prefix[i];
	part_wide sh = (part_wide)pb->stash_prefix[j + 1] - pb->stash_prefix[i];
	return st + (part_wide)pb->stash_count[s] * sh;
}

static int64_t part_clamp(part_wide v)
{
	if (v > INT64_MAX)
		return INT64_MAX;
	if (v < INT64_MIN)
		return INT64_MIN;
	return (int64_t)v;
}

static int64_t part_time(const ppcc_part_problem *pb, int s, int i, int j)
{
	return part_clamp(part_h(pb, s, j) - part_g(pb, s, i));
}

/* The stage's memory minus its cap; INT64_MIN for a stage without cap. */
static int64_t part_overflow(const ppcc_part_problem *pb, int s, int i, int j)
{
	if (pb->mem_cap[s] == INT64_MAX)
		return INT64_MIN;
	return part_clamp(part_memory(pb, s, i, j) - pb->mem_cap[s]);
}

static int part_fits(const ppcc_part_problem *pb, int s, int i, int j,
		     int64_t slack)
{
	int64_t cap = pb->mem_cap[s];
	if (cap == INT64_MAX || slack == INT64_MAX)
		return 1;
	return part_memory(pb, s, i, j) <= (part_wide)cap + slack;
}

static int part_time_ok(const ppcc_part_problem *pb, int s, int i, int j,
			int64_t limit)
{
	return limit == INT64_MAX || part_h(pb, s, j) - part_g(pb, s, i) <= limit;
}

/* 1 when values[from..to] are nondecreasing (branch-free, so it vectorises). */
static int part_nondecreasing(const int64_t *values, int from, int to)
{
	int down = 0;
	for (int i = from; i < to; i++)
		down |= values[i + 1] < values[i];
	return !down;
}

static int64_t part_least(const int64_t *values, int from, int to)
{
	int64_t least = INT64_MAX;
	for (int i = from; i <= to; i++)
		least = values[i] < least ? values[i] : least;
	return least;
}

/* 1 when an earlier stage than s has the same work array. */
static int part_work_seen(const ppcc_part_problem *pb, int s)
{
	for (int t = s - 1; t >= 0; t--)
		if (pb->work[t] == pb->work[s])
			return 1;
	return 0;
}

/* The shape of the problem: PPCC_EINPUT when it is not one. */
static int part_check_shape(const ppcc_part_problem *pb)
{
	if (!pb || pb->n_stages < 1 || pb->n_layers < pb->n_stages ||
	    !pb->work || !pb->static_prefix || !pb->stash_prefix ||
	    !pb->stash_count || !pb->mem_cap ||
	    (pb->n_stages > 1 && (!pb->comm_in || !pb->comm_out)))
		return PPCC_EINPUT;
	for (int s = 0; s < pb->n_stages; s++)
		if (!pb->work[s] || (s > 0 && !pb->comm_in[s]) ||
		    (s < pb->n_stages - 1 && !pb->comm_out[s]))
			return PPCC_EINPUT;
	return 0;
}

static int part_ctx_init(part_ctx *c, const ppcc_part_problem *pb)
{
	size_t n = (size_t)pb->n_layers, S = (size_t)pb->n_stages;
	memset(c, 0, sizeof *c);
	c->pb = pb;
	c->n = pb->n_layers;
	c->S = pb->n_stages;
	if (S > (SIZE_MAX / 4) / n)
		return PPCC_ENOMEM;
	size_t wide_bytes = n * sizeof(part_wide) + S * sizeof(int64_t);
	size_t int_bytes = (n + 6 * S) * sizeof(int);
	size_t table_bytes = S * n + S;
	if (table_bytes > SIZE_MAX - wide_bytes - int_bytes)
		return PPCC_ENOMEM;
	/* part_wide first: malloc's alignment suits it, ints and bytes follow */
	unsigned char *p = ppcc_malloc(wide_bytes + int_bytes + table_bytes);
	if (!p)
		return PPCC_ENOMEM;
	c->dq_g = (part_wide *)(void *)p;
	c->least_comm = (int64_t *)(void *)(c->dq_g + n);
	c->dq_layer = (int *)(void *)(p + wide_bytes);
	c->row_first = c->dq_layer + n;
	c->row_last = c->row_first + S;
	c->min_end = c->row_last + S;
	c->env_first = c->min_end + S;
	c->env_last = c->env_first + S;
	c->first = c->env_last + S;
	c->reach = p + wide_bytes + int_bytes;
	c->seen = c->reach + S * n;
	return 0;
}

static void part_ctx_free(part_ctx *c)
{
	ppcc_free(c->dq_g);
}

/* A lower bound on time(s,i,j) that only grows with the run: the work
 * plus the least boundary costs stage s can pay. */
static part_wide part_relaxed_time(const part_ctx *c, int s, int i, int j)
{
	return (part_wide)c->pb->work[s][j + 1] - c->pb->work[s][i] + c->least_comm[s];
}

/* The relaxation of the probe: boundary costs are dropped, and a stage of
 * one layer is always allowed.  Then a stage allowed on a run of layers is
 * allowed on every sub-run of it. */
static int part_relaxed_ok(const part_ctx *c, int s, int i, int j,
			   part_limit lim)
{
	if (i == j)
		return 1;
	return (lim.time == INT64_MAX ||
		part_relaxed_time(c, s, i, j) <= lim.time) &&
	       part_fits(c->pb, s, i, j, lim.slack);
}

/* Decides the relaxation.  Because allowed runs are closed under sub-runs,
 * the earliest layer at which stages s..S-1 can start, given that stage s+1
 * starts as early as it can, is the earliest overall: filling the stages
 * from the last one backwards, each starting as early as it can, reaches
 * the earliest start of every suffix of stages.  That greedy split goes to
 * first; min_end[s], where it ends stage s, is a lower bound on where
 * stage s ends in any split within lim.  Returns 1 when stage 0 can take
 * the rest.  O(S log n): each stage's earliest start is found by galloping
 * down from its end, the condition being monotone in the start. */
static int part_relaxed(int *first, int *min_end, const part_ctx *c,
			part_limit lim)
{
	int j = c->n - 1;
	min_end[c->S - 1] = j;
	for (int s = c->S - 1; s > 0; s--) {
		/* gallop down from j, then bisect: O(log) per stage */
		int i = j, step = 1;
		while (i - step >= s && part_relaxed_ok(c, s, i - step, j, lim)) {
			i -= step;
			step *= 2;
		}
		for (; step > 1; ) {
			step /= 2;
			if (i - step >= s && part_relaxed_ok(c, s, i - step, j, lim))
				i -= step;
		}
		first[s] = i;
		j = min_end[s - 1] = i - 1;
	}
	first[0] = 0;
	return part_relaxed_ok(c, 0, 0, j, lim);
}

static void part_mark(part_ctx *c, unsigned char *row, int s, int j, int on)
{
	row[j] = (unsigned char)on;
	if (on) {
		if (c->row_first[s] < 0)
			c->row_first[s] = j;
		c->row_last[s] = j;
	}
}

/* The smallest i in [from, j] with stage s fitting on i..j, or j + 1. */
static int part_window_start(const part_ctx *c, int s, int from, int j,
			     part_limit lim)
{
	int lo = from, hi = j + 1;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (part_fits(c->pb, s, mid, j, lim.slack))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Fills the reach table under lim; returns 1 when stages 0..S-1 can hold
 * layers 0..n-1.  Row s is written from max(row_first[s-1] + 1,
 * min_end[s], env_first[s]) on, as far as a later j could still be reached
 * and at most to env_last[s].  Entries outside that band, which lie on no
 * complete split, count as unreachable; between row_first[s] and
 * row_last[s] the row is exact, elsewhere unspecified. */
static int part_probe(part_ctx *c, part_limit lim)
{
	const ppcc_part_problem *pb = c->pb;
	int n = c->n, S = c->S;
	part_wide B = lim.time == INT64_MAX ? PART_NO_TIME : (part_wide)lim.time;
	if (!part_relaxed(c->first, c->min_end, c, lim))
		return 0;
	for (int s = 0; s < S; s++) {
		unsigned char *row = c->reach + (size_t)s * (size_t)n;
		const int64_t *w = pb->work[s];
		int jmin = c->min_end[s] > c->env_first[s] ? c->min_end[s] : c->env_first[s];
		int jmax = c->env_last[s];
		int capped = pb->mem_cap[s] != INT64_MAX && lim.slack != INT64_MAX;
		part_wide cap = capped ? (part_wide)pb->mem_cap[s] + lim.slack : 0;
		c->row_first[s] = c->row_last[s] = -1;
		if (s == 0) {
			part_wide g = part_g(pb, 0, 0);
			for (int j = jmin; j <= jmax; j++) {
				if (capped && part_memory(pb, 0, 0, j) > cap)
					break;
				if ((part_wide)w[j + 1] - w[0] > B)
					break;
				part_mark(c, row, 0, j, part_h(pb, 0, j) - g <= B);
			}
		} else {
			const unsigned char *prev = row - n;
			int a = c->row_first[s - 1], b = c->row_last[s - 1];
			int j0 = a + 1 > jmin ? a + 1 : jmin;
			int lo = part_window_start(c, s, a + 1, j0, lim);
			int head = 0, tail = 0, next = lo;
			for (int j = j0; j <= jmax; j++) {
				while (capped && lo <= j && part_memory(pb, s, lo, j) > cap)
					lo++;
				/* no start at or after lo is reachable any more */
				if (lo > b + 1)
					break;
				/* every start left is too slow for this j and later */
				if ((part_wide)w[j + 1] - w[b + 1] > B)
					break;
				if (next < lo)
					next = lo;
				for (; next <= j && next <= b + 1; next++) {
					if (!prev[next - 1])
						continue;
					part_wide g = part_g(pb, s, next);
					while (tail > head && c->dq_g[tail - 1] <= g)
						tail--;
					c->dq_g[tail] = g;
					c->dq_layer[tail++] = next;
				}
				while (head < tail && c->dq_layer[head] < lo)
					head++;
				part_mark(c, row, s, j, head < tail &&
					  c->dq_g[head] >= part_h(pb, s, j) - B);
			}
		}
		if (c->row_first[s] < 0)
			return 0;
	}
	return c->row_last[S - 1] == n - 1;
}

/* After a successful probe under lim, keeps in the table only the ends
 * that lie on a complete split, and narrows env to them: a smaller limit
 * has fewer such ends, so later probes need not look outside env.  Row s
 * keeps j when stage s+1 can run from j+1 to a kept end k of row s+1:
 * memory bounds k above by a pointer that only moves down as j does, and
 * the time condition h_{s+1}(k) <= g_{s+1}(j+1) + B needs the least h over
 * that window, kept by a deque.  O(the rows' extents). */
static int part_envelope(part_ctx *c, part_limit lim)
{
	const ppcc_part_problem *pb = c->pb;
	int n = c->n, S = c->S;
	part_wide B = lim.time == INT64_MAX ? PART_NO_TIME : (part_wide)lim.time;
	c->env_first[S - 1] = c->env_last[S - 1] = n - 1;
	c->row_first[S - 1] = c->row_last[S - 1] = n - 1;
	for (int s = S - 2; s >= 0; s--) {
		int t = s + 1;
		unsigned char *row = c->reach + (size_t)s * (size_t)n;
		const unsigned char *next = row + n;
		int kf = c->env_first[t], kl = c->env_last[t];
		int top = c->row_last[s] < kl - 1 ? c->row_last[s] : kl - 1;
		int head = 0, tail = 0, k = kl, add = kl;
		int first = -1, last = -1;
		for (int j = top; j >= c->row_first[s]; j--) {
			/* k: the last end stage t fits up to when starting at j + 1 */
			while (k >= j + 1 && !part_fits(pb, t, j + 1, k, lim.slack))
				k--;
			for (; add >= j + 1 && add >= kf; add--) {
				if (!next[add])
					continue;
				part_wide h = part_h(pb, t, add);
				while (tail > head && c->dq_g[tail - 1] >= h)
					tail--;
				c->dq_g[tail] = h;
				c->dq_layer[tail++] = add;
			}
			while (head < tail && c->dq_layer[head] > k)
				head++;
			int keep = row[j] && head < tail &&
				   c->dq_g[head] <= part_g(pb, t, j + 1) + B;
			row[j] = (unsigned char)keep;
			if (keep) {
				if (last < 0)
					last = j;
				first = j;
			}
		}
		if (first < 0)
			return PPCC_EINTERNAL;
		c->env_first[s] = c->row_first[s] = first;
		c->env_last[s] = c->row_last[s] = last;
	}
	return 0;
}

/* Reads the documented split off the table of a successful probe under
 * lim: each stage, from the last backwards, starts as late as it can. */
static int part_rebuild(int *first, const part_ctx *c, part_limit lim)
{
	const ppcc_part_problem *pb = c->pb;
	int S = c->S;
	int j = c->n - 1;
	for (int s = S - 1; s > 0; s--) {
		const unsigned char *prev = c->reach + (size_t)(s - 1) * (size_t)c->n;
		int a = c->row_first[s - 1], b = c->row_last[s - 1];
		int i;
		for (i = j; i >= s; i--) {
			/* memory only grows as the stage starts earlier */
			if (!part_fits(pb, s, i, j, lim.slack))
				return PPCC_EINTERNAL;
			if (i - 1 >= a && i - 1 <= b && prev[i - 1] &&
			    part_time_ok(pb, s, i, j, lim.time))
				break;
		}
		if (i < s)
			return PPCC_EINTERNAL;
		first[s] = i;
		j = i - 1;
	}
	first[0] = 0;
	if (!part_fits(pb, 0, 0, j, lim.slack) ||
	    !part_time_ok(pb, 0, 0, j, lim.time))
		return PPCC_EINTERNAL;
	return 0;
}

/* The objective of a split: its bottleneck time, or its largest overflow
 * and (through stage, when not NULL) the lowest stage with it.  Relaxed:
 * the relaxation's, work for time and stages of one layer left out. */
static int64_t part_measure(const part_ctx *c, const int *first,
			    int over_memory, int relaxed, int *stage)
{
	const ppcc_part_problem *pb = c->pb;
	int64_t worst = over_memory ? INT64_MIN : 0;
	int worst_stage = -1;
	for (int s = 0; s < c->S; s++) {
		int i = first[s], j = s + 1 < c->S ? first[s + 1] - 1 : c->n - 1;
		if (relaxed && i == j)
			continue;
		int64_t v = over_memory ? part_overflow(pb, s, i, j)
			  : relaxed ? part_clamp(part_relaxed_time(c, s, i, j))
			  : part_time(pb, s, i, j);
		if (worst_stage < 0 || v > worst) {
			worst = v;
			worst_stage = s;
		}
	}
	if (stage)
		*stage = worst_stage;
	return worst;
}

/* 1 when an earlier stage than s has the same work (for time) or the same
 * stash count and cap (for memory), so adds nothing to part_layer_bound. */
static int part_stage_seen(const ppcc_part_problem *pb, int s, int over_memory)
{
	if (!over_memory)
		return part_work_seen(pb, s);
	for (int t = s - 1; t >= 0; t--)
		if (pb->stash_count[t] == pb->stash_count[s] &&
		    pb->mem_cap[t] == pb->mem_cap[s])
			return 1;
	return 0;
}

/* A lower bound from single layers: the stage holding layer i costs at
 * least its work on that stage's device and overflows at least as much as
 * layer i alone would there. */
static int64_t part_layer_bound(const part_ctx *c, int over_memory)
{
	const ppcc_part_problem *pb = c->pb;
	int64_t bound = over_memory ? INT64_MIN : 0;
	for (int i = 0; i < c->n; i++) {
		int64_t least = INT64_MAX;
		for (int s = 0; s < c->S; s++) {
			if (c->seen[s])
				continue;
			int64_t v = over_memory ? part_overflow(pb, s, i, i)
				  : part_clamp((part_wide)pb->work[s][i + 1] - pb->work[s][i]);
			if (v < least)
				least = v;
		}
		if (least > bound)
			bound = least;
	}
	return bound;
}

static part_limit part_limit_at(int over_memory, int64_t x)
{
	part_limit lim = {over_memory ? INT64_MAX : x, over_memory ? x : 0};
	return lim;
}

static int64_t part_midpoint(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(((uint64_t)hi - (uint64_t)lo) / 2);
}

static int part_fits_all(const part_ctx *c, const int *first)
{
	for (int s = 0; s < c->S; s++) {
		int j = s + 1 < c->S ? first[s + 1] - 1 : c->n - 1;
		if (!part_fits(c->pb, s, first[s], j, 0))
			return 0;
	}
	return 1;
}

/* The preconditions the search relies on (prefixes nondecreasing, boundary
 * costs and stash counts >= 0), PPCC_EINPUT when one fails; on the way,
 * least_comm[s], the least comm_in[s][i] + comm_out[s][j] stage s can pay.
 * Only the boundary costs the solver reads are checked: comm_in[s][i] and
 * comm_out[s][i] for i in [s, n-S+s]. */
static int part_check_values(part_ctx *c)
{
	const ppcc_part_problem *pb = c->pb;
	int n = c->n, S = c->S;
	if (!part_nondecreasing(pb->static_prefix, 0, n) ||
	    !part_nondecreasing(pb->stash_prefix, 0, n))
		return PPCC_EINPUT;
	for (int s = 0; s < S; s++) {
		int64_t in = s > 0 ? part_least(pb->comm_in[s], s, n - S + s) : 0;
		int64_t out = s < S - 1 ? part_least(pb->comm_out[s], s, n - S + s) : 0;
		if (in < 0 || out < 0 || pb->stash_count[s] < 0 ||
		    (!part_work_seen(pb, s) && !part_nondecreasing(pb->work[s], 0, n)))
			return PPCC_EINPUT;
		c->least_comm[s] = part_clamp((part_wide)in + out);
	}
	return 0;
}

/* The search of the opening comment.  On success c->first holds the
 * documented split and *out_best its objective. */
static int part_search(int64_t *out_best, part_ctx *c, int over_memory)
{
	int err;
	for (int s = 0; s < c->S; s++) {
		c->env_first[s] = s;
		c->env_last[s] = c->n - c->S + s;
	}
	if (!part_relaxed(c->first, c->min_end, c, part_limit_at(over_memory, INT64_MAX)))
		return PPCC_EINFEASIBLE;

	/* lower bound: the relaxation's optimum, or the single-layer bound */
	int64_t lo = over_memory ? INT64_MIN : 0;
	int64_t hi = part_measure(c, c->first, over_memory, 1, NULL);
	while (lo < hi) {
		int64_t mid = part_midpoint(lo, hi);
		if (part_relaxed(c->first, c->min_end, c, part_limit_at(over_memory, mid)))
			hi = part_measure(c, c->first, over_memory, 1, NULL);
		else
			lo = mid + 1;
	}
	for (int s = 0; s < c->S; s++)
		c->seen[s] = (unsigned char)part_stage_seen(c->pb, s, over_memory);
	int64_t layer_bound = part_layer_bound(c, over_memory);
	if (layer_bound > lo)
		lo = layer_bound;

	/* upper bound: the relaxation's split at lo when it fits memory, else
	 * the split of a probe without limit on the objective */
	int table_valid = 0;
	int64_t table_at = 0;
	if (!part_relaxed(c->first, c->min_end, c, part_limit_at(over_memory, lo)))
		return PPCC_EINTERNAL;
	if (over_memory || part_fits_all(c, c->first)) {
		hi = part_measure(c, c->first, over_memory, 0, NULL);
	} else {
		if (!part_probe(c, part_limit_at(over_memory, INT64_MAX)))
			return PPCC_EINFEASIBLE;
		if ((err = part_envelope(c, part_limit_at(over_memory, INT64_MAX))) < 0 ||
		    (err = part_rebuild(c->first, c, part_limit_at(over_memory, INT64_MAX))) < 0)
			return err;
		hi = part_measure(c, c->first, over_memory, 0, NULL);
		table_valid = 1;
		table_at = INT64_MAX;
	}
	if (hi < lo)
		return PPCC_EINTERNAL;

	while (lo < hi) {
		int64_t mid = part_midpoint(lo, hi);
		if (part_probe(c, part_limit_at(over_memory, mid))) {
			if ((err = part_envelope(c, part_limit_at(over_memory, mid))) < 0 ||
			    (err = part_rebuild(c->first, c, part_limit_at(over_memory, mid))) < 0)
				return err;
			hi = part_measure(c, c->first, over_memory, 0, NULL);
			if (hi > mid)
				return PPCC_EINTERNAL;
			table_valid = 1;
			table_at = mid;
		} else {
			lo = mid + 1;
			table_valid = 0;
		}
	}
	if (!table_valid || table_at != hi) {
		if (!part_probe(c, part_limit_at(over_memory, hi)))
			return PPCC_EINTERNAL;
	}
	if ((err = part_rebuild(c->first, c, part_limit_at(over_memory, hi))) < 0)
		return err;
	*out_best = hi;
	return 0;
}

int ppcc_partition_solve(int *out_first, int64_t *out_bottleneck,
			 const ppcc_part_problem *pb)
{
	part_ctx c;
	int64_t best;
	int err;
	if (!out_first || !out_bottleneck || part_check_shape(pb) < 0)
		return PPCC_EINPUT;
	if ((err = part_ctx_init(&c, pb)) < 0)
		return err;
	if ((err = part_check_values(&c)) < 0 ||
	    (err = part_search(&best, &c, 0)) < 0)
		goto out;
	memcpy(out_first, c.first, (size_t)c.S * sizeof(int));
	*out_bottleneck = best;
out:
	part_ctx_free(&c);
	return err;
}

int ppcc_partition_min_overflow(int *out_first, int *out_stage,
				int64_t *out_overflow,
				const ppcc_part_problem *pb)
{
	part_ctx c;
	int64_t best;
	int err;
	if (!out_first || !out_stage || !out_overflow || part_check_shape(pb) < 0)
		return PPCC_EINPUT;
	if ((err = part_ctx_init(&c, pb)) < 0)
		return err;
	if ((err = part_check_values(&c)) < 0 ||
	    (err = part_search(&best, &c, 1)) < 0)
		goto out;
	memcpy(out_first, c.first, (size_t)c.S * sizeof(int));
	part_measure(&c, c.first, 1, 0, out_stage);
	*out_overflow = best;
out:
	part_ctx_free(&c);
	return err;
}

/*
 * The least path bound (split.c) over every split that fits, for one
 * chunk per rank.  With m microbatches, stage r of the split pays at least
 *
 *   P_r + m time(r, i_r, j_r),   P_0 = 0,
 *   P_{r+1} = P_r + work[r][j_r+1] - work[r][i_r] + (r > 0 ? comm_in[r][i_r] : 0)
 *
 * (P_r: microbatch 0's forwards and microbatch m-1's backwards through
 * stages 0..r-1 with the p2p time between them), and the step is at least
 * the largest of these.  Whether some split keeps every term within X is
 * decided exactly by a dynamic program over (stage, last layer) that
 * keeps, for each end, the least P reachable: a smaller P only loosens
 * the constraints of the stages that follow, so the least one is the only
 * one worth keeping.  Each stage's inner loop stops where the work alone
 * or memory rules the start out (both only grow as the start moves
 * back), so a probe is O(S n L) for stages of at most L layers; the
 * bisection between lo and hi stops once they are within hi / 2^20, and
 * *out is lo, a bound below the least.  Work and memory are 128-bit, as in
 * the search above.  The split that keeps every term within the final hi
 * goes to out_first: a seed for the simulated search, since the bound is
 * close to the step.  Returns PPCC_EINFEASIBLE when even hi fails (hi
 * must be the value of a split that fits), PPCC_ENOMEM, or 0.
 */
static int part_path_probe(const ppcc_part_problem *pb, int64_t m, part_wide X,
			   part_wide *prev, part_wide *cur, int *from)
{
	int n = pb->n_layers, S = pb->n_stages;
	const part_wide none = PART_NO_TIME * 4;
	for (int r = 0; r < S; r++) {
		const int64_t *w = pb->work[r];
		for (int j = 0; j < n; j++)
			cur[j] = none;
		for (int j = r; j <= n - S + r; j++) {
			part_wide best = none;
			for (int i = j; i >= (r == 0 ? 0 : r); i--) {
				if (r == 0 && i > 0)
					continue;
				part_wide work = (part_wide)w[j + 1] - w[i];
				if ((part_wide)m * work > X ||
				    !part_fits(pb, r, i, j, 0))
					break;
				part_wide before = r == 0 ? 0 : prev[i - 1];
				if (before >= none)
					continue;
				if (before + (part_wide)m * (part_h(pb, r, j) - part_g(pb, r, i)) > X)
					continue;
				part_wide after = before + work +
					(r > 0 ? (part_wide)pb->comm_in[r][i] : 0);
				if (after < best) {
					best = after;
					if (from)
						from[(size_t)r * (size_t)n + (size_t)j] = i;
				}
			}
			cur[j] = best;
		}
		part_wide *t = prev;
		prev = cur;
		cur = t;
	}
	return prev[n - 1] < none;
}

int ppcc_partition_path_bound(int64_t *out, int *out_first,
			      const ppcc_part_problem *pb, int64_t m, int64_t lo,
			      int64_t hi)
{
	if (!out || !out_first || part_check_shape(pb) < 0 || m < 1 || lo > hi)
		return PPCC_EINPUT;
	size_t n = (size_t)pb->n_layers, S = (size_t)pb->n_stages;
	if (S > SIZE_MAX / sizeof(int) / n)
		return PPCC_ENOMEM;
	part_wide *a = ppcc_malloc(2 * n * sizeof *a);
	int *from = ppcc_malloc(S * n * sizeof *from);
	int err = 0;
	if (!a || !from) {
		err = PPCC_ENOMEM;
		goto out;
	}
	if (!part_path_probe(pb, m, hi, a, a + n, NULL)) {
		err = PPCC_EINFEASIBLE;
		goto out;
	}
	while (hi - lo > hi / (1 << 20) && hi - lo > 1) {
		int64_t mid = part_midpoint(lo, hi);
		if (part_path_probe(pb, m, mid, a, a + n, NULL))
			hi = mid;
		else
			lo = mid + 1;
	}
	/* the split at hi, read back from the last stage */
	if (!part_path_probe(pb, m, hi, a, a + n, from)) {
		err = PPCC_EINTERNAL;
		goto out;
	}
	for (int r = (int)S - 1, j = (int)n - 1; r >= 0; r--) {
		int i = from[(size_t)r * n + (size_t)j];
		out_first[r] = i;
		j = i - 1;
	}
	*out = lo;
out:
	ppcc_free(a);
	ppcc_free(from);
	return err;
}
