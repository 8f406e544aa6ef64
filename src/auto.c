/*
 * auto.c - the auto kind's choice: the fastest schedule of one chunk per
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

/* Builds candidate kind (with params for the heuristic) into a, simulates
 * it and scores it into *c. */
static int auto_try(ppcc_schedule *s, ppcc_estimate *est, ppcc_arena *a,
		    ppcc_auto_candidate *c, int p, int m,
		    const ppcc_stage_info *stages, const ppcc_stage_cost *costs,
		    const double *rank_cap, const sched_auto_params *params)
{
	int err = ppcc_sched_build_with(s, a, c->kind, p, 1, m, 0, stages,
					params);
	if (err < 0)
		return err;
	if ((err = ppcc_simulate_keep(est, a, s, costs, 0)) < 0)
		return err;
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
	return 0;
}

int ppcc_sched_auto(ppcc_schedule *out, ppcc_auto_report *rep,
		    ppcc_arena *a, int ranks, int microbatches,
		    const ppcc_stage_info *stages, const ppcc_stage_cost *costs,
		    const double *rank_cap)
{
	int p = ranks, m = microbatches, err = 0;
	ppcc_arena *scratch = NULL;
	int32_t *cap = NULL, *mem = NULL;
	if (!out || !rep || !a || !stages || !costs || p < 1 || m < 1)
		return PPCC_EINPUT;
	memset(rep, 0, sizeof *rep);
	rep->chosen = -1;
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
		for (int fill = 0; fill < 2 && rep->n < PPCC_AUTO_MAX; fill++) {
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
		sched_auto_params params = {costs, &cap[(size_t)i * p], c[i].fill};
		if (!(scratch = ppcc_arena_new())) {
			err = PPCC_ENOMEM;
			goto out;
		}
		if ((err = auto_try(&s, &est, scratch, &c[i], p, m, stages, costs,
				    rank_cap, &params)) < 0)
			goto out;
		ppcc_arena_free(scratch);
		scratch = NULL;
		/* a heuristic's order must be faster by more than rounding
		 * (its step can differ from a handcrafted kind's with the
		 * same timeline in the last bits), so that a tie keeps the
		 * handcrafted kind, with its known memory */
		double margin = c[i].kind == PPCC_SCHED_AUTO && best >= 0
			? 1e-9 * c[best].step_ms : 0;
		if (best < 0 ||
		    (c[i].fits && !c[best].fits) ||
		    (c[i].fits == c[best].fits &&
		     (c[i].fits ? c[i].step_ms < c[best].step_ms - margin
				: c[i].over_bytes < c[best].over_bytes)))
			best = i;
	}
	rep->chosen = best;
	sched_auto_params params = {costs, &cap[(size_t)best * p], c[best].fill};
	if ((err = ppcc_sched_build_with(out, a, c[best].kind, p, 1, m, 0,
					 stages, &params)) < 0)
		goto out;
	err = c[best].fits ? 0 : PPCC_EINFEASIBLE;
out:
	ppcc_arena_free(scratch);
	ppcc_free(cap);
	ppcc_free(mem);
	return err;
}
