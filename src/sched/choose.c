/*
 * choose.c - the auto kind's choice: the fastest schedule of one chunk per
 * rank whose every rank's simulated peak fits its memory cap.
 *
 * The candidates are every handcrafted kind of the table that takes one
 * chunk and the shape, and the zero-bubble heuristic's order
 * (src/sched/auto.c) played under the stage costs given, with caps of p,
 * 3p/2, 2p - 1 and m microbatches between F and W (each less where the
 * rank's memory holds fewer: (cap - static) / stash) and both of its W
 * rules.  Each is built and simulated (ppcc_simulate, the real costs and
 * communication); the fastest that fits wins, ties going to the earlier
 * candidate, the handcrafted kinds first (a heuristic's order must be
 * faster by more than 10^-9 of the step).  The handcrafted kinds being
 * candidates, the choice is never slower than 1F1B or any of them that
 * fits the same limit.  The order is in the runtime's library (it builds
 * schedules); the choice needs the simulator, so it is the compiler's.
 *
 * Then, when the best fits and p x m is at most the exact search's reach
 * (PPCC_EXACT_DEFAULT_PM unless the caller says otherwise), the exact
 * search (exact.c) is warm-started from the best that fits of the orders
 * that split the backward; its order, lowered and
 * simulated like the others, is one more candidate, kept when faster by
 * more than rounding.  So the figure written is always a simulated one.
 */
#include <math.h>
#include <string.h>

#include "sched/sched.h"

static void auto_quiet(int setting, const char *msg, void *user)
{
	(void)setting;
	(void)msg;
	(void)user;
}

/* The caps of the heuristic tried: c microbatches per rank at most, less
 * where the rank's memory holds fewer. */
static int auto_caps(int *out, int p, int m)
{
	int want[4] = {p, p + p / 2, 2 * p - 1, m}, n = 0;
	for (int i = 0; i < 4; i++) {
		int c = want[i] < m ? want[i] : m;
		int dup = 0;
		for (int j = 0; j < n; j++)
			dup |= out[j] == c;
		if (!dup && c >= 1)
			out[n++] = c;
	}
	return n;
}

/* Scores a simulated candidate into *c. */
static void auto_score(ppcc_auto_candidate *c, const ppcc_estimate *est, int p,
		       const double *rank_cap)
{
	c->step_ms = est->step_ms;
	c->peak_bytes = 0;
	c->over_bytes = -INFINITY;
	for (int r = 0; r < p; r++) {
		double pk = est->peak_memory_bytes[r];
		if (pk > c->peak_bytes)
			c->peak_bytes = pk;
		double over = rank_cap ? pk - rank_cap[r] : -INFINITY;
		if (over > c->over_bytes)
			c->over_bytes = over;
	}
	c->fits = c->over_bytes <= 0;
}

const ppcc_exact_options ppcc_exact_defaults = {PPCC_EXACT_DEFAULT_PM, 10.0,
						 500};

int ppcc_sched_auto(ppcc_schedule *out, ppcc_auto_report *rep,
		    ppcc_arena *a, int ranks, int microbatches,
		    const ppcc_stage_info *stages, const ppcc_stage_cost *costs,
		    const double *rank_cap)
{
	return ppcc_sched_auto_opts(out, rep, a, ranks, microbatches, stages,
				    costs, rank_cap, NULL);
}

/* Is c better than the best so far (NULL: none)?  A fitting one beats one
 * that does not; among fitting ones the faster, where an order of the
 * heuristic or the exact search must be faster by more than rounding (its
 * step can differ from a handcrafted kind's with the same timeline in the
 * last bits), so that a tie keeps the handcrafted kind, with its known
 * memory; among others the one that overflows least. */
static int auto_better(const ppcc_auto_candidate *c, const ppcc_auto_candidate *b)
{
	if (!b)
		return 1;
	if (c->fits != b->fits)
		return c->fits;
	if (!c->fits)
		return c->over_bytes < b->over_bytes;
	double margin = c->kind == PPCC_SCHED_AUTO ? 1e-9 * b->step_ms : 0;
	return c->step_ms < b->step_ms - margin;
}

/* The exact search warm-started from candidate `from`, its order tried
 * as one more candidate (rep->n), in ea (kept for the final build). */
static int auto_exact(ppcc_auto_report *rep, ppcc_action ***ord,
		      ppcc_arena *ea, int from, int p, int m,
		      const ppcc_stage_info *stages, const ppcc_stage_cost *costs,
		      const double *rank_cap, const int32_t *cap)
{
	ppcc_auto_candidate *c = rep->candidates;
	sched_auto_params params = {costs, &cap[(size_t)from * p], c[from].fill,
				    NULL};
	ppcc_schedule warm, s;
	ppcc_estimate est;
	int err = ppcc_sched_build_with(&warm, ea, c[from].kind, p, 1, m, 0,
					stages, &params);
	if (err < 0)
		return err;
	if ((err = ppcc_sched_exact(ord, &rep->exact, ea, p, m, costs, rank_cap,
				    &warm, &rep->exact_opt)) < 0)
		return err;
	if (!*ord)
		return 0;
	c[rep->n] = (ppcc_auto_candidate){.kind = PPCC_SCHED_AUTO, .exact = 1};
	sched_auto_params given = {costs, NULL, 0, (const ppcc_action *const *)*ord};
	ppcc_arena *scratch = ppcc_arena_new();
	if (!scratch)
		return PPCC_ENOMEM;
	err = ppcc_sched_build_with(&s, scratch, PPCC_SCHED_AUTO, p, 1, m, 0,
				    stages, &given);
	if (err == 0)
		err = ppcc_simulate_keep(&est, scratch, &s, costs, 0);
	if (err == 0)
		auto_score(&c[rep->n], &est, p, rank_cap);
	ppcc_arena_free(scratch);
	if (err < 0)
		return err;
	rep->n++;
	return 0;
}

int ppcc_sched_auto_opts(ppcc_schedule *out, ppcc_auto_report *rep,
			 ppcc_arena *a, int ranks, int microbatches,
			 const ppcc_stage_info *stages,
			 const ppcc_stage_cost *costs, const double *rank_cap,
			 const ppcc_exact_options *ex)
{
	int p = ranks, m = microbatches, err = 0;
	ppcc_arena *scratch = NULL, *ea = NULL;
	int32_t *cap = NULL, *mem = NULL;
	ppcc_action **ord = NULL;
	if (!out || !rep || !a || !stages || !costs || p < 1 || m < 1)
		return PPCC_EINPUT;
	memset(rep, 0, sizeof *rep);
	rep->chosen = -1;
	rep->exact_opt = ex ? *ex : ppcc_exact_defaults;
	rep->heuristic_ms = INFINITY;
	cap = ppcc_calloc((size_t)p * PPCC_AUTO_MAX, sizeof *cap);
	mem = ppcc_calloc((size_t)p, sizeof *mem);
	if (!cap || !mem) {
		err = PPCC_ENOMEM;
		goto out;
	}
	/* the microbatches each rank's memory holds between F and W */
	for (int s = 0; s < p; s++) {
		int r = s; /* one chunk, looped: stage s on rank s */
		double room = rank_cap ? rank_cap[r] - costs[s].static_bytes
				       : INFINITY;
		double n = costs[s].stash_bytes > 0
			? floor(room / costs[s].stash_bytes) : INFINITY;
		mem[r] = n >= m ? m : n >= 1 ? (int32_t)n : 1;
	}
	ppcc_auto_candidate *c = rep->candidates;
	for (int k = 0; k < PPCC_SCHED_COUNT && rep->n < PPCC_AUTO_MAX; k++) {
		const ppcc_sched_kind_info *ki = ppcc_sched_kind(k);
		if (k == PPCC_SCHED_AUTO || ki->min_chunks > 1 ||
		    ppcc_sched_check(k, p, 1, m, 0, auto_quiet, NULL) > 0)
			continue;
		c[rep->n++] = (ppcc_auto_candidate){.kind = k};
	}
	int caps[4], n_caps = auto_caps(caps, p, m);
	for (int i = 0; i < n_caps; i++)
		for (int fill = 0; fill < 2 && rep->n < PPCC_AUTO_MAX - 1; fill++) {
			int32_t *cr = &cap[(size_t)rep->n * p];
			for (int r = 0; r < p; r++)
				cr[r] = caps[i] < mem[r] ? caps[i] : mem[r] > 0 ? mem[r] : 1;
			c[rep->n++] = (ppcc_auto_candidate){
				.kind = PPCC_SCHED_AUTO, .cap = caps[i],
				.fill = fill};
		}
	int best = -1;
	for (int i = 0; i < rep->n; i++) {
		ppcc_schedule s;
		ppcc_estimate est;
		sched_auto_params params = {costs, &cap[(size_t)i * p], c[i].fill,
					    NULL};
		if (!(scratch = ppcc_arena_new())) {
			err = PPCC_ENOMEM;
			goto out;
		}
		if ((err = ppcc_sched_build_with(&s, scratch, c[i].kind, p, 1, m, 0,
						 stages, &params)) < 0 ||
		    (err = ppcc_simulate_keep(&est, scratch, &s, costs, 0)) < 0)
			goto out;
		auto_score(&c[i], &est, p, rank_cap);
		ppcc_arena_free(scratch);
		scratch = NULL;
		if (c[i].kind == PPCC_SCHED_AUTO && c[i].fits &&
		    c[i].step_ms < rep->heuristic_ms)
			rep->heuristic_ms = c[i].step_ms;
		if (auto_better(&c[i], best >= 0 ? &c[best] : NULL))
			best = i;
	}
	rep->before_ms = c[best].step_ms;
	/* the warm start: the best that fits of the orders with I and W (a
	 * B frees its stash at once, which an I and a W in its place do not
	 * when I grows the stash) */
	int warm = -1;
	for (int i = 0; i < rep->n; i++)
		if (c[i].fits && (c[i].kind == PPCC_SCHED_AUTO ||
				  ppcc_sched_kind(c[i].kind)->split_backward) &&
		    (warm < 0 || c[i].step_ms < c[warm].step_ms))
			warm = i;
	if (warm >= 0 && (long)p * m <= rep->exact_opt.max_pm &&
	    m <= PPCC_EXACT_MAX_M) {
		if (!(ea = ppcc_arena_new())) {
			err = PPCC_ENOMEM;
			goto out;
		}
		int n = rep->n;
		if ((err = auto_exact(rep, &ord, ea, warm, p, m, stages, costs,
				      rank_cap, cap)) < 0)
			goto out;
		if (rep->n > n && auto_better(&c[n], &c[best]))
			best = n;
	}
	rep->chosen = best;
	sched_auto_params params = {costs, &cap[(size_t)best * p], c[best].fill,
				    c[best].exact ? (const ppcc_action *const *)ord
						  : NULL};
	if ((err = ppcc_sched_build_with(out, a, c[best].kind, p, 1, m, 0,
					 stages, &params)) < 0)
		goto out;
	err = c[best].fits ? 0 : PPCC_EINFEASIBLE;
out:
	ppcc_arena_free(scratch);
	ppcc_arena_free(ea);
	ppcc_free(cap);
	ppcc_free(mem);
	return err;
}
