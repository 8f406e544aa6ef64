/*
 * bench_schedule.c - how fast schedules are built, validated and
 * simulated, and what they cost in memory.
 *
 * The large case is 1F1B with p = 256 ranks and m = 4096 microbatches
 * (about 2 million compute actions and 4 million sends and receives); the
 * budget is one second for build + validate + simulate together.  Each
 * phase is timed best of three.
 *
 * A baseline shows why the simulator advances ranks by events: a naive
 * simulator in the style of simple Python ones keeps a global clock,
 * scans every rank for an action that can start now, and steps the clock
 * to the next time anything changes.  Both run on a smaller case and must
 * agree on every action's start and end.
 *
 * The zero-bubble kinds (ZB-H1, ZB-H2, ZB-V, interleaved ZB-1P) are each
 * built, validated and simulated at p = 64, m = 512, also within one
 * second.  A budget is a figure, printed "within" or "OVER": a loaded
 * machine runs over, so only a failed build, validation or simulation,
 * or timelines that disagree, make the exit status nonzero.
 */
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "ppcc.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Best of three of wall and CPU time (user + system: the page faults of
 * fresh memory are a good part of it). */
typedef struct timing {
	double wall, cpu;
} timing;

static void timing_keep(timing *best, double w0, double c0)
{
	double w = now_s() - w0, c = cpu_s() - c0;
	if (w < best->wall)
		best->wall = w;
	if (c < best->cpu)
		best->cpu = c;
}

static void print_machine(void)
{
	char model[256] = "unknown";
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		char line[512];
		while (fgets(line, sizeof line, f)) {
			if (strncmp(line, "model name", 10) == 0) {
				char *c = strchr(line, ':');
				if (c) {
					c += 2;
					c[strcspn(c, "\n")] = '\0';
					snprintf(model, sizeof model, "%s", c);
				}
				break;
			}
		}
		fclose(f);
	}
	printf("machine: %s, %ld cores online\n", model,
	       sysconf(_SC_NPROCESSORS_ONLN));
}

static long peak_rss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static ppcc_stage_info *stages_make(int n)
{
	ppcc_stage_info *st = calloc((size_t)n, sizeof *st);
	for (int s = 0; s < n; s++) {
		st[s].recv_bytes = s > 0 ? 25165824 : 0;
		st[s].send_bytes = s < n - 1 ? 25165824 : 0;
	}
	return st;
}

/* Stage costs that are not all equal, with communication. */
static ppcc_stage_cost *costs_make(int n)
{
	ppcc_stage_cost *c = calloc((size_t)n, sizeof *c);
	for (int s = 0; s < n; s++) {
		c[s].fwd_ms = 1.0 + 0.25 * (s % 3);
		c[s].bwd_ms = 2.0 + 0.5 * (s % 2);
		c[s].send_f_ms = 0.125;
		c[s].send_b_ms = 0.125;
		c[s].static_bytes = 1e9;
		c[s].stash_bytes = 1e6;
	}
	return c;
}

/* ---- the naive baseline ---- */

typedef struct naive_result {
	double step_ms;
	double **start, **end;
	long steps; /* global clock steps taken */
} naive_result;

/* The simulator's model (simulate.c), by a global clock: a send occupies
 * its sender for its p2p time and its message is there from the send's
 * start; a receive occupies the receiver as long, from the later of the
 * message and the rank's own clock, and starts (its wait) when the rank
 * gets to it. */
static int naive_simulate(naive_result *out, const ppcc_schedule *s,
			  const ppcc_stage_cost *costs)
{
	int p = s->n_ranks, m = s->n_microbatches, S = s->n_stages;
	size_t keys = (size_t)S * (size_t)m;
	double *arr_f = malloc(keys * sizeof *arr_f);
	double *arr_b = malloc(keys * sizeof *arr_b);
	double *free_at = calloc((size_t)p, sizeof *free_at);
	int *pc = calloc((size_t)p, sizeof *pc);
	for (size_t k = 0; k < keys; k++)
		arr_f[k] = arr_b[k] = -1;
	out->start = calloc((size_t)p, sizeof *out->start);
	out->end = calloc((size_t)p, sizeof *out->end);
	for (int r = 0; r < p; r++) {
		out->start[r] = calloc((size_t)s->ranks[r].n_actions, sizeof(double));
		out->end[r] = calloc((size_t)s->ranks[r].n_actions, sizeof(double));
	}
	double t = 0, step = 0;
	long steps = 0;
	for (;;) {
		int progressed = 1, left = 0;
		while (progressed) {
			progressed = 0;
			left = 0;
			for (int r = 0; r < p; r++) {
				const ppcc_rank_schedule *rs = &s->ranks[r];
				if (pc[r] == rs->n_actions)
					continue;
				left = 1;
				if (free_at[r] > t)
					continue;
				const ppcc_action *a = &rs->actions[pc[r]];
				const ppcc_stage_cost *c = &costs[a->stage];
				size_t key = (size_t)a->stage * (size_t)m + (size_t)a->mb;
				double d = -1;
				switch (a->op) {
				case PPCC_OP_F: d = c->fwd_ms; break;
				case PPCC_OP_B: d = c->bwd_ms; break;
				case PPCC_OP_I: d = c->bwd_input_ms; break;
				case PPCC_OP_W: d = c->bwd_weight_ms; break;
				case PPCC_OP_SEND_F:
				case PPCC_OP_SEND_B:
					/* the message is there from the send's
					 * start; the send occupies the sender */
					if (a->op == PPCC_OP_SEND_F)
						arr_f[key] = t;
					else
						arr_b[key] = t;
					d = a->op == PPCC_OP_SEND_F ? c->send_f_ms
								    : c->send_b_ms;
					break;
				case PPCC_OP_RECV_F:
				case PPCC_OP_RECV_B: {
					int fwd = a->op == PPCC_OP_RECV_F;
					double at = fwd ? arr_f[key - (size_t)m]
							: arr_b[key + (size_t)m];
					if (at < 0 || at > t)
						continue;
					/* as long as the send, on the receiver */
					d = fwd ? costs[a->stage - 1].send_f_ms
						: costs[a->stage + 1].send_b_ms;
					break;
				}
				}
				/* a receive's wait began when the rank got
				 * there */
				out->start[r][pc[r]] = a->op == PPCC_OP_RECV_F ||
						       a->op == PPCC_OP_RECV_B
					? free_at[r] : t;
				out->end[r][pc[r]] = t + d;
				free_at[r] = t + d;
				if (t + d > step)
					step = t + d;
				pc[r]++;
				progressed = 1;
			}
		}
		if (!left)
			break;
		/* the next time anything can change: a rank gets free or a
		 * message a waiting rank needs arrives */
		double next = -1;
		for (int r = 0; r < p; r++) {
			const ppcc_rank_schedule *rs = &s->ranks[r];
			if (pc[r] == rs->n_actions)
				continue;
			double cand = free_at[r];
			if (cand <= t) {
				const ppcc_action *a = &rs->actions[pc[r]];
				size_t key = (size_t)a->stage * (size_t)m + (size_t)a->mb;
				cand = a->op == PPCC_OP_RECV_F ? arr_f[key - (size_t)m]
				     : a->op == PPCC_OP_RECV_B ? arr_b[key + (size_t)m]
							       : -1;
				if (cand <= t)
					continue;
			}
			if (next < 0 || cand < next)
				next = cand;
		}
		if (next < 0) {
			out->step_ms = -1; /* deadlock */
			break;
		}
		t = next;
		steps++;
	}
	out->step_ms = step;
	out->steps = steps;
	free(arr_f);
	free(arr_b);
	free(free_at);
	free(pc);
	return 0;
}

static void naive_free(naive_result *n, int p)
{
	for (int r = 0; r < p; r++) {
		free(n->start[r]);
		free(n->end[r]);
	}
	free(n->start);
	free(n->end);
}

/* Every action's start and end, and the step, to the bit. */
static int same_timeline(const ppcc_schedule *s, const ppcc_estimate *e,
			 const naive_result *n)
{
	for (int r = 0; r < s->n_ranks; r++)
		for (int i = 0; i < s->ranks[r].n_actions; i++)
			if (e->end_ms[r][i] != n->end[r][i] ||
			    e->start_ms[r][i] != n->start[r][i])
				return 0;
	return e->step_ms == n->step_ms;
}

static int baseline(int p, int m)
{
	ppcc_stage_info *st = stages_make(p);
	ppcc_stage_cost *c = costs_make(p);
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	int ok = 0;
	if (ppcc_schedule_build(&s, a, PPCC_SCHED_1F1B, p, 1, m, 0, st) != 0)
		goto out;
	double best_fast = 1e30, best_naive = 1e30;
	ppcc_estimate e;
	naive_result n = {0};
	for (int k = 0; k < 3; k++) {
		ppcc_arena *sa = ppcc_arena_new();
		double t0 = now_s();
		if (ppcc_simulate(&e, sa, &s, c) != 0) {
			ppcc_arena_free(sa);
			goto out;
		}
		double t1 = now_s();
		if (t1 - t0 < best_fast)
			best_fast = t1 - t0;
		if (k < 2)
			ppcc_arena_free(sa);
		else {
			if (n.start)
				naive_free(&n, p);
			t0 = now_s();
			naive_simulate(&n, &s, c);
			t1 = now_s();
			if (t1 - t0 < best_naive)
				best_naive = t1 - t0;
			ok = same_timeline(&s, &e, &n);
			ppcc_arena_free(sa);
			naive_free(&n, p);
			n.start = NULL;
		}
	}
	long actions = 0;
	for (int r = 0; r < p; r++)
		actions += s.ranks[r].n_actions;
	printf("baseline p=%d m=%d (%ld actions): ppcc_simulate %.4f s, "
	       "naive time-stepped scan %.4f s (%ld clock steps x %d ranks), "
	       "ratio %.1fx, timelines %s\n",
	       p, m, actions, best_fast, best_naive, n.steps, p,
	       best_naive / best_fast, ok ? "identical" : "DIFFER");
out:
	ppcc_arena_free(a);
	free(st);
	free(c);
	return ok ? 0 : 1;
}

/* 1f1b's build + validate + simulate at the zero-bubble kinds' p and m:
 * the baseline their times are given against (0 until measured). */
static double ref_1f1b_s;

/* Build + validate + simulate of one kind, best of three, against the
 * one-second budget, and against 1f1b's time at the same p and m. */
static int bench_kind(int kind, int p, int m)
{
	const ppcc_sched_kind_info *k = ppcc_sched_kind(kind);
	int v = ppcc_sched_kind_chunks(kind, p), S = p * v, status = 0;
	ppcc_stage_info *st = stages_make(S);
	ppcc_stage_cost *c = costs_make(S);
	for (int i = 0; i < S; i++) {
		c[i].bwd_input_ms = c[i].bwd_ms / 2;
		c[i].bwd_weight_ms = c[i].bwd_ms / 2;
	}
	double best = 1e30;
	long actions = 0;
	ppcc_estimate e;
	for (int rep = 0; rep < 3 && status == 0; rep++) {
		ppcc_arena *a = ppcc_arena_new();
		ppcc_schedule s;
		ppcc_diag d = {NULL, NULL, 0, 0};
		double w0 = now_s();
		if (ppcc_schedule_build(&s, a, kind, p, v, m, 0, st) != 0 ||
		    ppcc_schedule_validate(&s, &d, NULL, 10) != 0 ||
		    ppcc_simulate(&e, a, &s, c) != 0) {
			fprintf(stderr, "bench: %s p=%d m=%d failed\n", k->name, p, m);
			status = 1;
		}
		double w = now_s() - w0;
		if (w < best)
			best = w;
		actions = 0;
		for (int r = 0; status == 0 && r < p; r++)
			actions += s.ranks[r].n_actions;
		ppcc_arena_free(a);
	}
	if (status == 0) {
		printf("%s p=%d v=%d m=%d: %ld actions, build + validate + "
		       "simulate %.3f s (budget 1 s: %s), step %.3f ms, bubble "
		       "%.4f", k->name, p, v, m, actions, best,
		       best < 1.0 ? "within" : "OVER", e.step_ms,
		       e.bubble_fraction);
		if (ref_1f1b_s > 0 && kind != PPCC_SCHED_1F1B)
			printf("; %.1fx 1f1b's %.3f s", best / ref_1f1b_s, ref_1f1b_s);
		putchar('\n');
		if (kind == PPCC_SCHED_1F1B)
			ref_1f1b_s = best;
	}
	free(st);
	free(c);
	return status;
}

/* auto at p, m: ppcc_sched_auto's choice among the handcrafted kinds and
 * the heuristic's orders (each built and simulated), the winner validated
 * and simulated, under equal stages with a split backward. */
static int bench_auto(int p, int m)
{
	ppcc_stage_info *st = stages_make(p);
	ppcc_stage_cost *c = costs_make(p);
	int status = 0;
	for (int i = 0; i < p; i++) {
		c[i].bwd_input_ms = c[i].bwd_ms / 2;
		c[i].bwd_weight_ms = c[i].bwd_ms / 2;
	}
	double best = 1e30;
	ppcc_estimate e;
	ppcc_auto_report rep;
	for (int k = 0; k < 3 && status == 0; k++) {
		ppcc_arena *a = ppcc_arena_new();
		ppcc_schedule s;
		ppcc_diag d = {NULL, NULL, 0, 0};
		double w0 = now_s();
		if (ppcc_sched_auto(&s, &rep, a, p, m, st, c, NULL) != 0 ||
		    ppcc_schedule_validate_seal(&s, &d, NULL, 10) != 0 ||
		    ppcc_simulate(&e, a, &s, c) != 0) {
			fprintf(stderr, "bench: auto p=%d m=%d failed\n", p, m);
			status = 1;
		}
		double w = now_s() - w0;
		if (w < best)
			best = w;
		ppcc_arena_free(a);
	}
	if (status == 0) {
		const ppcc_auto_candidate *won = &rep.candidates[rep.chosen];
		printf("auto p=%d m=%d: %d candidates simulated, chose %s", p, m,
		       rep.n, ppcc_schedule_kind_name(won->kind));
		if (won->kind == PPCC_SCHED_AUTO)
			printf(" (heuristic, cap %d, W %s)", won->cap,
			       won->fill ? "in any gap" : "in gaps >= W");
		printf("; all + validate + simulate %.3f s (budget 1 s: %s), step "
		       "%.3f ms, bubble %.4f", best, best < 1.0 ? "within" : "OVER",
		       e.step_ms, e.bubble_fraction);
		if (ref_1f1b_s > 0)
			printf("; %.1fx 1f1b's %.3f s", best / ref_1f1b_s, ref_1f1b_s);
		putchar('\n');
	}
	free(st);
	free(c);
	return status;
}

/* auto at p, m with the exact search forced (p x m above its default
 * reach), under the stage costs above with a split backward and a memory
 * cap of p microbatches' stash per rank (1F1B's): the heuristic's best
 * order, the exact search's, their gap, how the search ended (optimal, or
 * the bound and MIP gap at the time limit), the time against its 10 s
 * budget, and the step against 1F1B's. */
static int bench_auto_exact(int p, int m)
{
	ppcc_stage_info *st = stages_make(p);
	ppcc_stage_cost *c = costs_make(p);
	double *cap = calloc((size_t)p, sizeof *cap);
	int status = 0;
	for (int i = 0; i < p; i++) {
		c[i].bwd_input_ms = c[i].bwd_ms / 2;
		c[i].bwd_weight_ms = c[i].bwd_ms / 2;
		c[i].stash_input_bytes = c[i].stash_bytes / 2;
		cap[i] = c[i].static_bytes + p * c[i].stash_bytes;
	}
	/* 9.5 s for the search, so that all of it stays within 10 s */
	ppcc_exact_options ex = {p * m, 9.5, 0};
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s, f;
	ppcc_estimate e, fe;
	ppcc_auto_report rep;
	ppcc_diag d = {NULL, NULL, 0, 0};
	double w0 = now_s();
	if (ppcc_sched_auto_opts(&s, &rep, a, p, m, st, c, cap, &ex) != 0 ||
	    ppcc_schedule_validate_seal(&s, &d, NULL, 10) != 0 ||
	    ppcc_simulate(&e, a, &s, c) != 0 ||
	    ppcc_schedule_build(&f, a, PPCC_SCHED_1F1B, p, 1, m, 0, st) != 0 ||
	    ppcc_simulate(&fe, a, &f, c) != 0) {
		fprintf(stderr, "bench: auto with the exact search p=%d m=%d failed\n",
			p, m);
		status = 1;
	}
	double w = now_s() - w0;
	if (status == 0) {
		const ppcc_exact_report *x = &rep.exact;
		double exact = NAN;
		for (int i = 0; i < rep.n; i++)
			if (rep.candidates[i].exact)
				exact = rep.candidates[i].step_ms;
		printf("auto p=%d m=%d, exact search (%d binaries, %d rows, %d nodes, "
		       "warm start %s): heuristic %.3f ms, %s %.3f ms (gap %.2f%%), ",
		       p, m, x->binaries, x->rows, x->nodes,
		       x->warm_taken ? "taken" : x->relaxed ? "REFUSED"
		       : "not reached", rep.heuristic_ms,
		       x->status == PPCC_EXACT_OPTIMAL ? "exact" : "best found", exact,
		       100 * (rep.heuristic_ms - exact) / exact);
		if (x->status == PPCC_EXACT_OPTIMAL)
			printf("proven optimal");
		else
			printf("%s: bound %.3f ms%s, MIP gap %.2f%%",
			       x->status == PPCC_EXACT_TIME_LIMIT ? "stopped at the time limit"
			       : "stopped", x->bound_ms,
			       x->relaxed ? "" : " (per-rank work: the LP relaxation "
			       "was not solved in time)",
			       100 * (exact - x->bound_ms) / exact);
		printf("; written %.3f ms against 1f1b's %.3f ms (%.3fx); search %.2f s, "
		       "all %.2f s (budget 10 s: %s)\n", e.step_ms, fe.step_ms,
		       e.step_ms / fe.step_ms, x->solve_s, w,
		       w < 10.0 ? "within" : "OVER");
	}
	ppcc_arena_free(a);
	free(st);
	free(c);
	free(cap);
	return status;
}

int main(void)
{
	const int p = 256, m = 4096;
	int status = 0;
	print_machine();

	ppcc_stage_info *st = stages_make(p);
	ppcc_stage_cost *c = costs_make(p);
	timing t_build = {1e30, 1e30}, t_validate = t_build, t_sim = t_build;
	timing t_fp = t_build;
	ppcc_arena *a = NULL;
	ppcc_schedule s;
	for (int k = 0; k < 3; k++) {
		ppcc_arena_free(a);
		a = ppcc_arena_new();
		double w0 = now_s(), c0 = cpu_s();
		if (ppcc_schedule_build(&s, a, PPCC_SCHED_1F1B, p, 1, m, 0, st) != 0) {
			fprintf(stderr, "bench: build failed\n");
			return 1;
		}
		timing_keep(&t_build, w0, c0);
	}
	long rss_built = peak_rss_kib();
	ppcc_diag d = {NULL, NULL, 0, 0};
	for (int k = 0; k < 3; k++) {
		double w0 = now_s(), c0 = cpu_s();
		int err = ppcc_schedule_validate(&s, &d, NULL, 10);
		timing_keep(&t_validate, w0, c0);
		if (err != 0) {
			fprintf(stderr, "bench: validate failed (%d)\n", err);
			return 1;
		}
	}
	for (int k = 0; k < 3; k++) {
		double w0 = now_s(), c0 = cpu_s();
		volatile uint64_t h = ppcc_schedule_fingerprint(&s);
		(void)h;
		timing_keep(&t_fp, w0, c0);
	}
	long rss_validated = peak_rss_kib();
	ppcc_estimate e;
	for (int k = 0; k < 3; k++) {
		ppcc_arena *sa = ppcc_arena_new();
		double w0 = now_s(), c0 = cpu_s();
		int err = ppcc_simulate(&e, sa, &s, c);
		timing_keep(&t_sim, w0, c0);
		ppcc_arena_free(sa);
		if (err != 0) {
			fprintf(stderr, "bench: simulate failed (%d)\n", err);
			return 1;
		}
	}
	long rss_peak = peak_rss_kib();

	long actions = 0, compute = 0;
	for (int r = 0; r < p; r++) {
		actions += s.ranks[r].n_actions;
		for (int i = 0; i < s.ranks[r].n_actions; i++)
			compute += s.ranks[r].actions[i].op <= PPCC_OP_W;
	}
	double total = t_build.wall + t_validate.wall + t_sim.wall;
	double total_cpu = t_build.cpu + t_validate.cpu + t_sim.cpu;
	printf("1f1b p=%d m=%d: %ld actions (%ld compute, %ld send/recv)\n", p,
	       m, actions, compute, actions - compute);
	printf("  best of 3      wall     cpu\n");
	printf("  build       %7.3f %7.3f s\n", t_build.wall, t_build.cpu);
	printf("  validate    %7.3f %7.3f s\n", t_validate.wall, t_validate.cpu);
	printf("  simulate    %7.3f %7.3f s\n", t_sim.wall, t_sim.cpu);
	printf("  total       %7.3f %7.3f s  (budget 1 s: %s)\n", total,
	       total_cpu, total < 1.0 ? "within" : "OVER");
	printf("  build and validate each include one "
	       "ppcc_schedule_fingerprint: %.3f s wall, %.3f s cpu\n",
	       t_fp.wall, t_fp.cpu);
	printf("  peak RSS  %.1f MiB after build, %.1f MiB after validate, "
	       "%.1f MiB after simulate\n", rss_built / 1024.0,
	       rss_validated / 1024.0, rss_peak / 1024.0);
	printf("  bytes per action: %zu in the IR, +%zu for the simulated "
	       "start/end; peak RSS / actions = %.1f\n", sizeof(ppcc_action),
	       2 * sizeof(double), rss_peak * 1024.0 / (double)actions);
	printf("  step %.3f ms, bubble %.4f (closed form for equal stages "
	       "%.4f)\n", e.step_ms, e.bubble_fraction, e.bubble_analytic);
	ppcc_arena_free(a);
	free(st);
	free(c);

	/* the zero-bubble kinds and auto at p = 64, m = 512, beside 1f1b */
	status |= bench_kind(PPCC_SCHED_1F1B, 64, 512);
	for (int kind = PPCC_SCHED_ZB_H1; kind < PPCC_SCHED_COUNT; kind++)
		if (kind != PPCC_SCHED_AUTO)
			status |= bench_kind(kind, 64, 512);
	status |= bench_auto(64, 512);
	status |= bench_auto_exact(8, 32);
	status |= baseline(32, 256);
	status |= baseline(64, 1024);
	status |= baseline(256, 4096);
	return status;
}
