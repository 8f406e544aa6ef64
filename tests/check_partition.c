/*
 * check_partition.c - the partitioner against exhaustive enumeration and
 * against the plain O(S n^2) dynamic program, on random instances from a
 * fixed-seed generator (a failure prints the instance's seed and contents),
 * plus the documented tie-break, edge cases and input checks.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppcc.h"
#include "testutil.h"

__extension__ typedef __int128 wide;

/* ---- random instances ---------------------------------------------------- */

static int64_t rng_below(uint64_t *state, int64_t bound)
{
	return bound <= 0 ? 0 : (int64_t)(tu_rng_next(state) % (uint64_t)bound);
}

static int64_t to_i64(wide v)
{
	ck_assert(v >= INT64_MIN && v <= INT64_MAX);
	return (int64_t)v;
}

typedef struct instance {
	uint64_t seed;
	int n, S;
	int n_rows;
	int64_t *rows[8];        /* distinct work arrays, shared by stages */
	const int64_t **work;
	int64_t **comm_in, **comm_out;
	const int64_t **comm_in_c, **comm_out_c;
	int64_t *static_prefix, *stash_prefix, *stash_count, *mem_cap;
	ppcc_part_problem pb;
} instance;

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	ck_assert_ptr_nonnull(p);
	return p;
}

static void instance_alloc(instance *x, int n, int S)
{
	memset(x, 0, sizeof *x);
	x->n = n;
	x->S = S;
	x->work = xcalloc((size_t)S, sizeof *x->work);
	x->comm_in = xcalloc((size_t)S, sizeof *x->comm_in);
	x->comm_out = xcalloc((size_t)S, sizeof *x->comm_out);
	x->comm_in_c = xcalloc((size_t)S, sizeof *x->comm_in_c);
	x->comm_out_c = xcalloc((size_t)S, sizeof *x->comm_out_c);
	for (int s = 0; s < S; s++) {
		x->comm_in[s] = xcalloc((size_t)n, sizeof(int64_t));
		x->comm_out[s] = xcalloc((size_t)n, sizeof(int64_t));
		x->comm_in_c[s] = x->comm_in[s];
		x->comm_out_c[s] = x->comm_out[s];
	}
	x->static_prefix = xcalloc((size_t)n + 1, sizeof(int64_t));
	x->stash_prefix = xcalloc((size_t)n + 1, sizeof(int64_t));
	x->stash_count = xcalloc((size_t)S, sizeof(int64_t));
	x->mem_cap = xcalloc((size_t)S, sizeof(int64_t));
	x->pb.n_layers = n;
	x->pb.n_stages = S;
	x->pb.work = x->work;
	x->pb.comm_in = x->comm_in_c;
	x->pb.comm_out = x->comm_out_c;
	x->pb.static_prefix = x->static_prefix;
	x->pb.stash_prefix = x->stash_prefix;
	x->pb.stash_count = x->stash_count;
	x->pb.mem_cap = x->mem_cap;
}

static int64_t *instance_row(instance *x)
{
	ck_assert_int_lt(x->n_rows, 8);
	return x->rows[x->n_rows++] = xcalloc((size_t)x->n + 1, sizeof(int64_t));
}

static void instance_free(instance *x)
{
	for (int r = 0; r < x->n_rows; r++)
		free(x->rows[r]);
	for (int s = 0; s < x->S; s++) {
		free(x->comm_in[s]);
		free(x->comm_out[s]);
	}
	free(x->work);
	free(x->comm_in);
	free(x->comm_out);
	free(x->comm_in_c);
	free(x->comm_out_c);
	free(x->static_prefix);
	free(x->stash_prefix);
	free(x->stash_count);
	free(x->mem_cap);
}

static void print_array(const char *name, int s, const int64_t *a, int len)
{
	fprintf(stderr, "  %s", name);
	if (s >= 0)
		fprintf(stderr, "[%d]", s);
	fprintf(stderr, " =");
	for (int i = 0; i < len; i++)
		fprintf(stderr, " %lld", (long long)a[i]);
	fprintf(stderr, "\n");
}

static void instance_print(const instance *x)
{
	fprintf(stderr, "partition instance seed=%llu n=%d S=%d\n",
		(unsigned long long)x->seed, x->n, x->S);
	for (int s = 0; s < x->S; s++) {
		print_array("work", s, x->work[s], x->n + 1);
		print_array("comm_in", s, x->comm_in[s], x->n);
		print_array("comm_out", s, x->comm_out[s], x->n);
	}
	print_array("static_prefix", -1, x->static_prefix, x->n + 1);
	print_array("stash_prefix", -1, x->stash_prefix, x->n + 1);
	print_array("stash_count", -1, x->stash_count, x->S);
	print_array("mem_cap", -1, x->mem_cap, x->S);
}

/* Increments of at most span / n from start, so the prefix stays in int64. */
static void fill_prefix(int64_t *p, int n, uint64_t *r, wide start,
			wide span, int zero_often)
{
	wide v = start;
	p[0] = to_i64(v);
	for (int i = 0; i < n; i++) {
		wide step = span / n;
		wide inc = step > 0 ? (wide)(tu_rng_next(r) % (uint64_t)(step > (wide)UINT64_MAX ? UINT64_MAX : (uint64_t)step)) : 0;
		if (zero_often && rng_below(r, 5) == 0)
			inc = 0;
		v += inc;
		p[i + 1] = to_i64(v);
	}
}

/* Ordinary instances: a few device kinds (per-stage work arrays, shared
 * between stages of the same kind), non-monotone boundary costs, zero-cost
 * layers, stash counts and caps of which some cannot be met. */
static void instance_random(instance *x, uint64_t seed, int n_max, int S_max)
{
	uint64_t r = seed;
	int n = 1 + (int)rng_below(&r, n_max);
	int S = 1 + (int)rng_below(&r, n < S_max ? n : S_max);
	instance_alloc(x, n, S);
	x->seed = seed;
	int kinds = 1 + (int)rng_below(&r, 3);
	int64_t base[256];
	ck_assert_int_le(n, 256);
	for (int i = 0; i < n; i++)
		base[i] = rng_below(&r, 5) == 0 ? 0 : rng_below(&r, 100);
	for (int k = 0; k < kinds; k++) {
		int64_t *w = instance_row(x);
		int64_t mult = 1 + rng_below(&r, 4);
		w[0] = rng_below(&r, 5);
		for (int i = 0; i < n; i++)
			w[i + 1] = w[i] + base[i] * mult + rng_below(&r, 3);
	}
	static const int64_t comm_scale[] = {0, 5, 50, 500};
	int64_t cmax = comm_scale[rng_below(&r, 4)];
	for (int s = 0; s < S; s++) {
		x->work[s] = x->rows[rng_below(&r, kinds)];
		for (int i = 0; i < n; i++) {
			x->comm_in[s][i] = rng_below(&r, cmax + 1);
			x->comm_out[s][i] = rng_below(&r, cmax + 1);
		}
		if (s > 0 && rng_below(&r, 4) == 0) {
			x->comm_in_c[s] = x->comm_in_c[s - 1];
			x->comm_out_c[s] = x->comm_out_c[s - 1];
		}
	}
	for (int i = 0; i < n; i++) {
		x->static_prefix[i + 1] = x->static_prefix[i] + rng_below(&r, 50);
		x->stash_prefix[i + 1] = x->stash_prefix[i] + rng_below(&r, 20);
	}
	int64_t count_sum = 0;
	for (int s = 0; s < S; s++) {
		x->stash_count[s] = rng_below(&r, 2) ? S - s : rng_below(&r, S + 1);
		count_sum += x->stash_count[s];
	}
	int64_t mem = x->static_prefix[n] + count_sum / S * x->stash_prefix[n];
	int uncapped = (int)rng_below(&r, 3) == 0;
	for (int s = 0; s < S; s++)
		x->mem_cap[s] = uncapped || rng_below(&r, 4) == 0
			? INT64_MAX
			: mem / S * (40 + rng_below(&r, 300)) / 100 + rng_below(&r, 30);
}

static int64_t extreme(uint64_t *r)
{
	switch (rng_below(r, 6)) {
	case 0: return 0;
	case 1: return rng_below(r, 1000);
	case 2: return INT64_MAX - rng_below(r, 1000);
	case 3: return (int64_t)(tu_rng_next(r) >> 1);
	case 4: return (int64_t)(tu_rng_next(r) >> 20);
	default: return INT64_MAX / 2 + rng_below(r, 1000);
	}
}

/* Values near the int64 limits: prefixes spanning up to almost 2^64,
 * boundary costs and stash counts up to INT64_MAX, caps of any sign. */
static void instance_extreme(instance *x, uint64_t seed, int n_max)
{
	uint64_t r = seed;
	int n = 1 + (int)rng_below(&r, n_max);
	int S = 1 + (int)rng_below(&r, n);
	instance_alloc(x, n, S);
	x->seed = seed;
	const wide full = ((wide)1 << 64) - 1;
	int kinds = 1 + (int)rng_below(&r, 3);
	for (int k = 0; k < kinds; k++) {
		int big = (int)rng_below(&r, 3);
		wide span = big == 0 ? full : big == 1 ? ((wide)1 << 62) : 1000;
		wide start = big == 0 ? (wide)INT64_MIN
			   : INT64_MAX - span - rng_below(&r, 1000);
		fill_prefix(instance_row(x), n, &r, start, span, 1);
	}
	for (int s = 0; s < S; s++) {
		x->work[s] = x->rows[rng_below(&r, kinds)];
		for (int i = 0; i < n; i++) {
			x->comm_in[s][i] = rng_below(&r, 2) ? extreme(&r) : rng_below(&r, 10);
			x->comm_out[s][i] = rng_below(&r, 2) ? extreme(&r) : rng_below(&r, 10);
		}
	}
	int big = (int)rng_below(&r, 2);
	fill_prefix(x->static_prefix, n, &r, big ? (wide)INT64_MIN : 0,
		    big ? full : 1000, 1);
	fill_prefix(x->stash_prefix, n, &r, big ? INT64_MAX - full / 2 : 0,
		    big ? full / 2 : 1000, 1);
	for (int s = 0; s < S; s++) {
		x->stash_count[s] = rng_below(&r, 2) ? rng_below(&r, 4) : extreme(&r);
		switch (rng_below(&r, 4)) {
		case 0: x->mem_cap[s] = INT64_MAX; break;
		case 1: x->mem_cap[s] = INT64_MAX - 1 - rng_below(&r, 1000); break;
		case 2: x->mem_cap[s] = (int64_t)tu_rng_next(&r); break;
		default: x->mem_cap[s] = rng_below(&r, 5000); break;
		}
	}
}

/* ---- the contract, written out directly ---------------------------------- */

static int64_t clamp64(wide v)
{
	return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

static int64_t stage_time(const instance *x, int s, int i, int j)
{
	wide t = (wide)x->work[s][j + 1] - x->work[s][i];
	if (s > 0)
		t += x->pb.comm_in[s][i];
	if (s < x->S - 1)
		t += x->pb.comm_out[s][j];
	return clamp64(t);
}

static wide stage_memory(const instance *x, int s, int i, int j)
{
	return (wide)x->static_prefix[j + 1] - x->static_prefix[i] +
	       (wide)x->stash_count[s] *
		       ((wide)x->stash_prefix[j + 1] - x->stash_prefix[i]);
}

static int stage_fits(const instance *x, int s, int i, int j)
{
	return x->mem_cap[s] == INT64_MAX ||
	       stage_memory(x, s, i, j) <= x->mem_cap[s];
}

static int64_t stage_overflow(const instance *x, int s, int i, int j)
{
	if (x->mem_cap[s] == INT64_MAX)
		return INT64_MIN;
	return clamp64(stage_memory(x, s, i, j) - x->mem_cap[s]);
}

static int stage_last(const instance *x, const int *first, int s)
{
	return s + 1 < x->S ? first[s + 1] - 1 : x->n - 1;
}

/* The documented tie-break: later starts, compared from the last stage. */
static int later_split(const int *a, const int *b, int S)
{
	for (int s = S - 1; s > 0; s--)
		if (a[s] != b[s])
			return a[s] > b[s];
	return 0;
}

typedef struct split_eval {
	int fits;
	int64_t bottleneck;
	int64_t overflow;
	int overflow_stage;
} split_eval;

static split_eval split_evaluate(const instance *x, const int *first)
{
	split_eval e = {1, 0, INT64_MIN, 0};
	for (int s = 0; s < x->S; s++) {
		int j = stage_last(x, first, s);
		int64_t t = stage_time(x, s, first[s], j);
		int64_t o = stage_overflow(x, s, first[s], j);
		if (!stage_fits(x, s, first[s], j))
			e.fits = 0;
		if (t > e.bottleneck)
			e.bottleneck = t;
		if (s == 0 || o > e.overflow) {
			e.overflow = o;
			e.overflow_stage = s;
		}
	}
	return e;
}

static int split_valid(const instance *x, const int *first)
{
	if (first[0] != 0)
		return 0;
	for (int s = 1; s < x->S; s++)
		if (first[s] <= first[s - 1] || first[s] > x->n - 1)
			return 0;
	return 1;
}

/* ---- exhaustive enumeration ----------------------------------------------- */

typedef struct brute {
	const instance *x;
	int cur[16];
	int found;            /* a split that fits */
	int64_t best_time;
	int best_time_split[16];
	int64_t best_overflow;
	int best_overflow_stage;
	int best_overflow_split[16];
	int any;
} brute;

static void brute_visit(brute *b)
{
	const instance *x = b->x;
	split_eval e = split_evaluate(x, b->cur);
	if (e.fits && (!b->found || e.bottleneck < b->best_time ||
		       (e.bottleneck == b->best_time &&
			later_split(b->cur, b->best_time_split, x->S)))) {
		b->found = 1;
		b->best_time = e.bottleneck;
		memcpy(b->best_time_split, b->cur, sizeof b->cur);
	}
	if (!b->any || e.overflow < b->best_overflow ||
	    (e.overflow == b->best_overflow &&
	     later_split(b->cur, b->best_overflow_split, x->S))) {
		b->any = 1;
		b->best_overflow = e.overflow;
		b->best_overflow_stage = e.overflow_stage;
		memcpy(b->best_overflow_split, b->cur, sizeof b->cur);
	}
}

static void brute_from(brute *b, int s, int start)
{
	b->cur[s] = start;
	if (s == b->x->S - 1) {
		brute_visit(b);
		return;
	}
	for (int next = start + 1; next <= b->x->n - (b->x->S - 1 - s); next++)
		brute_from(b, s + 1, next);
}

static void brute_solve(brute *b, const instance *x)
{
	memset(b, 0, sizeof *b);
	b->x = x;
	ck_assert_int_le(x->S, 16);
	brute_from(b, 0, 0);
}

/* ---- the plain O(S n^2) dynamic program ----------------------------------- */

typedef struct plain_dp {
	int feasible;
	int64_t best;
	int split[256];
} plain_dp;

/* Objective: the bottleneck time over fitting splits, or (over_memory)
 * the largest overflow over all splits.  The split is the documented one,
 * rebuilt from the table: f[s][j] <= best says stages 0..s can hold
 * layers 0..j within best. */
static void plain_dp_solve(plain_dp *out, const instance *x, int over_memory)
{
	int n = x->n, S = x->S;
	int64_t *f = xcalloc((size_t)S * (size_t)n, sizeof(int64_t));
	unsigned char *ok = xcalloc((size_t)S * (size_t)n, 1);
#define F(s, j) f[(size_t)(s) * (size_t)n + (size_t)(j)]
#define OK(s, j) ok[(size_t)(s) * (size_t)n + (size_t)(j)]
	for (int s = 0; s < S; s++)
		for (int j = s; j < n; j++)
			for (int i = s == 0 ? 0 : s; i <= (s == 0 ? 0 : j); i++) {
				if (s > 0 && !OK(s - 1, i - 1))
					continue;
				if (!over_memory && !stage_fits(x, s, i, j))
					continue;
				int64_t v = over_memory ? stage_overflow(x, s, i, j)
							: stage_time(x, s, i, j);
				if (s > 0 && F(s - 1, i - 1) > v)
					v = F(s - 1, i - 1);
				if (!OK(s, j) || v < F(s, j)) {
					OK(s, j) = 1;
					F(s, j) = v;
				}
			}
	out->feasible = OK(S - 1, n - 1);
	if (out->feasible) {
		int64_t best = out->best = F(S - 1, n - 1);
		int j = n - 1;
		for (int s = S - 1; s >= 0; s--) {
			int i;
			for (i = s == 0 ? 0 : j; i >= 0; i--) {
				if (s > 0 && (i < s || !OK(s - 1, i - 1) || F(s - 1, i - 1) > best))
					continue;
				if (!over_memory && !stage_fits(x, s, i, j))
					continue;
				int64_t v = over_memory ? stage_overflow(x, s, i, j)
							: stage_time(x, s, i, j);
				if (v <= best)
					break;
			}
			ck_assert_int_ge(i, 0);
			out->split[s] = i;
			j = i - 1;
		}
	}
#undef F
#undef OK
	free(f);
	free(ok);
}

/* ---- comparing ------------------------------------------------------------ */

static int same_split(const int *a, const int *b, int S)
{
	return memcmp(a, b, (size_t)S * sizeof(int)) == 0;
}

/* Checks ppcc_partition_solve on x against the expected answer. */
static int check_solve(const instance *x, int want_feasible,
		       int64_t want_bottleneck, const int *want_split)
{
	int first[256];
	int64_t bottleneck = -1;
	ck_assert_int_le(x->S, 256);
	int err = ppcc_partition_solve(first, &bottleneck, &x->pb);
	if (!want_feasible) {
		if (err == PPCC_EINFEASIBLE)
			return 1;
		fprintf(stderr, "solve: got %d, want infeasible\n", err);
		return 0;
	}
	if (err != 0) {
		fprintf(stderr, "solve: got %d, want bottleneck %lld\n", err,
			(long long)want_bottleneck);
		return 0;
	}
	split_eval e = split_evaluate(x, first);
	if (!split_valid(x, first) || !e.fits || e.bottleneck != bottleneck ||
	    bottleneck != want_bottleneck || !same_split(first, want_split, x->S)) {
		fprintf(stderr, "solve: bottleneck %lld (split's %lld, fits %d), want %lld\n",
			(long long)bottleneck, (long long)e.bottleneck, e.fits,
			(long long)want_bottleneck);
		for (int s = 0; s < x->S; s++)
			fprintf(stderr, "  stage %d first %d want %d\n", s,
				first[s], want_split[s]);
		return 0;
	}
	return 1;
}

static int check_overflow(const instance *x, int64_t want_overflow,
			  int want_stage, const int *want_split)
{
	int first[256], stage = -1;
	int64_t overflow = 0;
	int err = ppcc_partition_min_overflow(first, &stage, &overflow, &x->pb);
	if (err != 0) {
		fprintf(stderr, "min_overflow: got %d\n", err);
		return 0;
	}
	split_eval e = split_evaluate(x, first);
	if (!split_valid(x, first) || e.overflow != overflow ||
	    e.overflow_stage != stage || overflow != want_overflow ||
	    stage != want_stage || !same_split(first, want_split, x->S)) {
		fprintf(stderr, "min_overflow: %lld at stage %d (split's %lld at %d), want %lld at %d\n",
			(long long)overflow, stage, (long long)e.overflow,
			e.overflow_stage, (long long)want_overflow, want_stage);
		for (int s = 0; s < x->S; s++)
			fprintf(stderr, "  stage %d first %d want %d\n", s,
				first[s], want_split[s]);
		return 0;
	}
	return 1;
}

enum { CHECK_SOLVE = 1, CHECK_OVERFLOW = 2 };

static void check_against_brute(instance *x, int what)
{
	brute b;
	brute_solve(&b, x);
	int ok = 1;
	if (what & CHECK_SOLVE)
		ok = check_solve(x, b.found, b.best_time, b.best_time_split);
	if (ok && (what & CHECK_OVERFLOW)) {
		ok = check_overflow(x, b.best_overflow, b.best_overflow_stage,
				    b.best_overflow_split);
		/* the overflow is positive exactly when nothing fits */
		if (ok && b.found != (b.best_overflow <= 0)) {
			fprintf(stderr, "feasible %d but least overflow %lld\n",
				b.found, (long long)b.best_overflow);
			ok = 0;
		}
	}
	if (!ok)
		instance_print(x);
	ck_assert_msg(ok, "partition differs from enumeration, seed %llu (n=%d S=%d)",
		      (unsigned long long)x->seed, x->n, x->S);
}

/* ---- tests ---------------------------------------------------------------- */

START_TEST(partition_matches_bruteforce)
{
	int infeasible = 0;
	for (uint64_t k = 0; k < 4000; k++) {
		instance x;
		instance_random(&x, 1000 + k, 12, 12);
		brute b;
		brute_solve(&b, &x);
		infeasible += !b.found;
		check_against_brute(&x, CHECK_SOLVE);
		instance_free(&x);
	}
	/* the generator must exercise both outcomes */
	ck_assert_int_gt(infeasible, 200);
	ck_assert_int_lt(infeasible, 3000);
}
END_TEST

START_TEST(partition_min_overflow_matches_bruteforce)
{
	for (uint64_t k = 0; k < 4000; k++) {
		instance x;
		instance_random(&x, 1000 + k, 12, 12);
		check_against_brute(&x, CHECK_OVERFLOW);
		instance_free(&x);
	}
}
END_TEST

START_TEST(partition_matches_bruteforce_near_int64_limits)
{
	for (uint64_t k = 0; k < 3000; k++) {
		instance x;
		instance_extreme(&x, 900000 + k, 10);
		check_against_brute(&x, CHECK_SOLVE | CHECK_OVERFLOW);
		instance_free(&x);
	}
}
END_TEST

START_TEST(partition_matches_plain_dp)
{
	for (uint64_t k = 0; k < 1200; k++) {
		instance x;
		instance_random(&x, 50000 + k, 200, 48);
		plain_dp d;
		plain_dp_solve(&d, &x, 0);
		int ok = check_solve(&x, d.feasible, d.best, d.split);
		if (ok) {
			plain_dp_solve(&d, &x, 1);
			split_eval e = split_evaluate(&x, d.split);
			ok = check_overflow(&x, d.best, e.overflow_stage, d.split);
		}
		if (!ok)
			instance_print(&x);
		ck_assert_msg(ok, "partition differs from the plain DP, seed %llu (n=%d S=%d)",
			      (unsigned long long)x.seed, x.n, x.S);
		instance_free(&x);
	}
}
END_TEST

/* Boundary costs far larger than the work make the best split depend on
 * where the cheap boundaries are, not on how many layers fit. */
START_TEST(partition_places_boundaries_at_cheap_activations)
{
	instance x;
	instance_alloc(&x, 6, 2);
	int64_t *w = instance_row(&x);
	for (int i = 0; i < 6; i++)
		w[i + 1] = w[i] + 10;
	/* the boundary after layer 1 is cheap, every other one dear */
	static const int64_t out_cost[6] = {100, 1, 100, 100, 100, 100};
	for (int s = 0; s < 2; s++) {
		x.work[s] = w;
		memcpy(x.comm_out[s], out_cost, sizeof out_cost);
		for (int i = 0; i < 6; i++)
			x.comm_in[s][i] = i == 2 ? 1 : 100;
		x.mem_cap[s] = INT64_MAX;
	}
	int first[2];
	int64_t bottleneck;
	ck_assert_int_eq(ppcc_partition_solve(first, &bottleneck, &x.pb), 0);
	/* 0..1 | 2..5: max(20 + 1, 40 + 1); an even 3 | 3 costs 130 */
	ck_assert_int_eq(first[1], 2);
	ck_assert_int_eq(bottleneck, 41);
	instance_free(&x);
}
END_TEST

START_TEST(partition_breaks_ties_by_latest_start)
{
	/* free layers: every split ties at 0; each stage starts late */
	instance x;
	instance_alloc(&x, 9, 4);
	int64_t *w = instance_row(&x);
	for (int s = 0; s < 4; s++) {
		x.work[s] = w;
		x.mem_cap[s] = INT64_MAX;
	}
	int first[4];
	int64_t bottleneck = -1;
	ck_assert_int_eq(ppcc_partition_solve(first, &bottleneck, &x.pb), 0);
	ck_assert_int_eq(bottleneck, 0);
	ck_assert_int_eq(first[0], 0);
	ck_assert_int_eq(first[1], 6);
	ck_assert_int_eq(first[2], 7);
	ck_assert_int_eq(first[3], 8);
	instance_free(&x);

	/* five unit layers in two stages: 2|3 and 3|2 both reach 3 */
	instance_alloc(&x, 5, 2);
	w = instance_row(&x);
	for (int i = 0; i < 5; i++)
		w[i + 1] = i + 1;
	x.work[0] = x.work[1] = w;
	x.mem_cap[0] = x.mem_cap[1] = INT64_MAX;
	ck_assert_int_eq(ppcc_partition_solve(first, &bottleneck, &x.pb), 0);
	ck_assert_int_eq(bottleneck, 3);
	ck_assert_int_eq(first[1], 3);
	instance_free(&x);
}
END_TEST

START_TEST(partition_is_deterministic)
{
	for (uint64_t k = 0; k < 200; k++) {
		instance x;
		instance_random(&x, 7000 + k, 120, 40);
		int a[256], b[256], sa = -1, sb = -2;
		int64_t va = 0, vb = 1;
		int ea = ppcc_partition_solve(a, &va, &x.pb);
		int eb = ppcc_partition_solve(b, &vb, &x.pb);
		ck_assert_int_eq(ea, eb);
		if (ea == 0) {
			ck_assert(va == vb);
			ck_assert(same_split(a, b, x.S));
		}
		ck_assert_int_eq(ppcc_partition_min_overflow(a, &sa, &va, &x.pb), 0);
		ck_assert_int_eq(ppcc_partition_min_overflow(b, &sb, &vb, &x.pb), 0);
		ck_assert(va == vb && sa == sb && same_split(a, b, x.S));
		instance_free(&x);
	}
}
END_TEST

START_TEST(partition_single_stage_takes_every_layer)
{
	instance x;
	instance_alloc(&x, 5, 1);
	int64_t *w = instance_row(&x);
	for (int i = 0; i < 5; i++) {
		w[i + 1] = w[i] + 3 * i + 1;
		/* an only stage pays no boundary */
		x.comm_in[0][i] = x.comm_out[0][i] = 1000;
		x.static_prefix[i + 1] = x.static_prefix[i] + 10;
		x.stash_prefix[i + 1] = x.stash_prefix[i] + 2;
	}
	x.work[0] = w;
	x.stash_count[0] = 3;
	x.mem_cap[0] = 80; /* 50 + 3 * 10 */
	int first[1] = {-1}, stage = -1;
	int64_t v = -1;
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), 0);
	ck_assert_int_eq(first[0], 0);
	ck_assert_int_eq(v, 35);
	ck_assert_int_eq(ppcc_partition_min_overflow(first, &stage, &v, &x.pb), 0);
	ck_assert_int_eq(v, 0);
	x.mem_cap[0] = 79;
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), PPCC_EINFEASIBLE);
	ck_assert_int_eq(ppcc_partition_min_overflow(first, &stage, &v, &x.pb), 0);
	ck_assert_int_eq(stage, 0);
	ck_assert_int_eq(v, 1);
	/* one stage reads no boundary array */
	x.pb.comm_in = x.pb.comm_out = NULL;
	x.mem_cap[0] = INT64_MAX;
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), 0);
	ck_assert_int_eq(v, 35);
	instance_free(&x);
}
END_TEST

START_TEST(partition_gives_each_stage_one_layer_when_stages_equal_layers)
{
	instance x;
	instance_alloc(&x, 4, 4);
	int64_t *w = instance_row(&x);
	static const int64_t cost[4] = {5, 0, 7, 2};
	for (int i = 0; i < 4; i++)
		w[i + 1] = w[i] + cost[i];
	for (int s = 0; s < 4; s++) {
		x.work[s] = w;
		x.mem_cap[s] = INT64_MAX;
		for (int i = 0; i < 4; i++) {
			x.comm_in[s][i] = 10 * i;
			x.comm_out[s][i] = i + 1;
		}
	}
	int first[4];
	int64_t v;
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), 0);
	for (int s = 0; s < 4; s++)
		ck_assert_int_eq(first[s], s);
	/* 5+1, 10+0+2, 20+7+3, 30+2 */
	ck_assert_int_eq(v, 32);
	/* a stage that cannot hold its one layer makes it infeasible */
	x.static_prefix[3] = 1;
	x.static_prefix[4] = 1;
	x.mem_cap[2] = 0;
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), PPCC_EINFEASIBLE);
	int stage;
	ck_assert_int_eq(ppcc_partition_min_overflow(first, &stage, &v, &x.pb), 0);
	ck_assert_int_eq(stage, 2);
	ck_assert_int_eq(v, 1);
	instance_free(&x);
}
END_TEST

START_TEST(partition_handles_times_beyond_int64)
{
	/* every split has a stage over INT64_MAX: all tie at INT64_MAX */
	instance x;
	instance_alloc(&x, 4, 2);
	int64_t *w = instance_row(&x);
	w[0] = INT64_MIN;
	w[1] = 0;
	w[2] = INT64_MAX - 2;
	w[3] = INT64_MAX - 1;
	w[4] = INT64_MAX;
	for (int s = 0; s < 2; s++) {
		x.work[s] = w;
		x.mem_cap[s] = INT64_MAX;
		for (int i = 0; i < 4; i++)
			x.comm_in[s][i] = x.comm_out[s][i] = INT64_MAX;
	}
	int first[2];
	int64_t v;
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), 0);
	ck_assert(v == INT64_MAX);
	ck_assert_int_eq(first[1], 3);
	/* cheap boundaries: 0..1 | 2..3 costs INT64_MAX - 2 - INT64_MIN, too
	 * much; 0 | 1..3 costs max(2^63, INT64_MAX) */
	for (int i = 0; i < 4; i++)
		x.comm_in[1][i] = x.comm_out[0][i] = 0;
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), 0);
	ck_assert(v == INT64_MAX);
	w[0] = -1;
	/* 0 | 1..3: max(1, INT64_MAX); 0..1 | 2..3: max(INT64_MAX - 1, 2) */
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), 0);
	ck_assert(v == INT64_MAX - 1);
	ck_assert_int_eq(first[1], 2);
	/* a stash count times a stash span beyond int64 does not fit */
	x.stash_prefix[4] = INT64_MAX;
	x.stash_count[1] = INT64_MAX;
	x.mem_cap[1] = INT64_MAX - 1;
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), PPCC_EINFEASIBLE);
	int stage;
	ck_assert_int_eq(ppcc_partition_min_overflow(first, &stage, &v, &x.pb), 0);
	ck_assert_int_eq(stage, 1);
	ck_assert(v == INT64_MAX);
	instance_free(&x);
}
END_TEST

START_TEST(partition_rejects_bad_input)
{
	instance x;
	instance_alloc(&x, 3, 2);
	int64_t *w = instance_row(&x);
	for (int i = 0; i < 3; i++)
		w[i + 1] = w[i] + 1;
	x.work[0] = x.work[1] = w;
	x.mem_cap[0] = x.mem_cap[1] = INT64_MAX;
	int first[4], stage;
	int64_t v;
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), 0);
	ck_assert_int_eq(ppcc_partition_solve(first, &v, NULL), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_partition_solve(NULL, &v, &x.pb), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_partition_min_overflow(first, NULL, &v, &x.pb), PPCC_EINPUT);
	x.pb.n_stages = 4; /* more stages than layers */
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), PPCC_EINPUT);
	ck_assert_int_eq(ppcc_partition_min_overflow(first, &stage, &v, &x.pb), PPCC_EINPUT);
	x.pb.n_stages = 0;
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), PPCC_EINPUT);
	x.pb.n_stages = 2;
	x.comm_out[0][1] = -1;
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), PPCC_EINPUT);
	x.comm_out[0][1] = 0;
	w[2] = 0; /* work goes down */
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), PPCC_EINPUT);
	w[2] = 2;
	x.stash_count[1] = -1;
	ck_assert_int_eq(ppcc_partition_min_overflow(first, &stage, &v, &x.pb), PPCC_EINPUT);
	x.stash_count[1] = 0;
	x.static_prefix[1] = 5; /* static bytes go down after layer 1 */
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), PPCC_EINPUT);
	x.static_prefix[1] = 0;
	x.comm_in_c[1] = NULL;
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), PPCC_EINPUT);
	x.comm_in_c[1] = x.comm_in[1];
	/* entries no split reads are not checked: stage 0 has no input
	 * boundary, the last stage no output, stage 1 never starts at 0 */
	x.comm_in[0][1] = x.comm_in[1][0] = x.comm_out[1][2] = -7;
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), 0);
	ck_assert_int_eq(v, 2);
	instance_free(&x);
}
END_TEST

/* PPCC_FAIL_ALLOC is read at the first allocation of the process, so this
 * needs Check's fork mode (each test in a fresh process). */
START_TEST(partition_reports_enomem_when_allocation_fails)
{
	const char *fork_mode = getenv("CK_FORK");
	if (fork_mode && strcmp(fork_mode, "no") == 0)
		return;
	instance x;
	instance_alloc(&x, 3, 2);
	int64_t *w = instance_row(&x);
	x.work[0] = x.work[1] = w;
	x.mem_cap[0] = x.mem_cap[1] = INT64_MAX;
	setenv("PPCC_FAIL_ALLOC", "1", 1);
	int first[2], stage;
	int64_t v;
	ck_assert_int_eq(ppcc_partition_solve(first, &v, &x.pb), PPCC_ENOMEM);
	ck_assert_int_eq(ppcc_partition_min_overflow(first, &stage, &v, &x.pb), PPCC_ENOMEM);
	instance_free(&x);
}
END_TEST

Suite *suite_partition(void)
{
	return tu_suite("partition", "partition", 600, (const TTest *const[]){
		partition_matches_bruteforce,
		partition_min_overflow_matches_bruteforce,
		partition_matches_bruteforce_near_int64_limits,
		partition_matches_plain_dp,
		partition_places_boundaries_at_cheap_activations,
		partition_breaks_ties_by_latest_start,
		partition_is_deterministic,
		partition_single_stage_takes_every_layer,
		partition_gives_each_stage_one_layer_when_stages_equal_layers,
		partition_handles_times_beyond_int64,
		partition_rejects_bad_input,
		partition_reports_enomem_when_allocation_fails,
		NULL});
}
