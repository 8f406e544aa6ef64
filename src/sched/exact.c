/*
 * exact.c - the auto kind's exact search: for small p and m, the order of
 * least step among all orders of one chunk per rank that keep each kind
 * of pass in microbatch order, as a mixed-integer program solved by GLPK
 * (the formulation of Qi et al., Zero Bubble Pipeline Parallelism, ICLR
 * 2024, appendix, which solves it with CBC; here GLPK's branch and cut).
 *
 * Contract: the model is the simulator's (simulate.c) for the lowered
 * schedule (sched/lower.c), memory included, so that its optimum is a
 * simulated step, not an approximation of one.  The caller's schedule is
 * the warm start and GLPK's first incumbent, so the answer is never
 * worse.  The search stops at optimality, at the time limit
 * (glp_iocp.tm_lim) or after a number of branch-and-bound nodes
 * (deterministic, unlike the time); the report says which, with the best
 * bound GLPK proved.  The incumbent's start times give each rank's order;
 * the caller lowers, validates and simulates it like any kind's.
 * Limits: one chunk per rank, rank r running stage r; small p and m.
 *
 * Derivation: doc/design/exact.md (the constraints, the memory rows, the
 * valid inequality and big-M).
 */
#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sched/sched.h"

enum { EX_F, EX_I, EX_W };

typedef struct ex_ctx {
	int p, m;
	const ppcc_stage_cost *c;
	double *cin, *comp, *dur;   /* per pass o = (s * 3 + kind) * m + i */
	int n_pass, pairs;          /* pairs: m (m - 1) / 2 per stage and kind */
	int col_c;                  /* C */
	int col_y0;                 /* the first binary */
	/* the rows being built: triplets, 1-based as GLPK takes them */
	int *ia, *ja;
	double *ar, *lo;
	int ne, ne_cap, rows, rows_cap;
	int err;
	/* the search */
	double *warm;               /* column values, [1..cols] */
	int warm_given, warm_taken;
	long node_limit;
	int nodes, stopped_nodes;
	double bound;
} ex_ctx;

static int ex_pass(const ex_ctx *x, int s, int kind, int i)
{
	return (s * 3 + kind) * x->m + i;
}

/* The binary of the pair (X_i, Y_j), i > j, of stage s: q 0 (F, I),
 * 1 (F, W), 2 (I, W). */
static int ex_ycol(const ex_ctx *x, int s, int q, int i, int j)
{
	return x->col_y0 + (s * 3 + q) * x->pairs + i * (i - 1) / 2 + j;
}

static void ex_row(ex_ctx *x, int n, const int *col, const double *val,
		   double lo)
{
	if (x->err)
		return;
	if (x->ne + n >= x->ne_cap) {
		int cap = 2 * (x->ne_cap + n) + 64;
		int *ia = realloc(x->ia, (size_t)cap * sizeof *ia);
		if (ia)
			x->ia = ia;
		int *ja = realloc(x->ja, (size_t)cap * sizeof *ja);
		if (ja)
			x->ja = ja;
		double *ar = realloc(x->ar, (size_t)cap * sizeof *ar);
		if (ar)
			x->ar = ar;
		if (!ia || !ja || !ar) {
			x->err = PPCC_ENOMEM;
			return;
		}
		x->ne_cap = cap;
	}
	if (x->rows + 1 >= x->rows_cap) {
		int cap = 2 * x->rows_cap + 64;
		double *l = realloc(x->lo, (size_t)cap * sizeof *l);
		if (!l) {
			x->err = PPCC_ENOMEM;
			return;
		}
		x->lo = l;
		x->rows_cap = cap;
	}
	x->rows++;
	x->lo[x->rows] = lo;
	for (int k = 0; k < n; k++) {
		x->ne++;
		x->ia[x->ne] = x->rows;
		x->ja[x->ne] = col[k];
		x->ar[x->ne] = val[k];
	}
}

/* a - b >= lo */
static void ex_diff(ex_ctx *x, int a, int b, double lo)
{
	int col[2] = {a, b};
	double val[2] = {1, -1};
	ex_row(x, 2, col, val, lo);
}

/* The pass a cross-rank message comes from, or -1. */
static int ex_pred(const ex_ctx *x, int s, int kind, int i)
{
	if (kind == EX_F && s > 0)
		return ex_pass(x, s - 1, EX_F, i);
	if (kind == EX_I && s < x->p - 1)
		return ex_pass(x, s + 1, EX_I, i);
	return -1;
}

/* When the message a pass waits for is there: its sender's start, receive
 * and compute (the send's start). */
static double ex_ready(const ex_ctx *x, const double *t, int o)
{
	return t[o] + x->cin[o] + x->comp[o];
}

static void ex_costs(ex_ctx *x)
{
	int p = x->p, m = x->m;
	for (int s = 0; s < p; s++) {
		const ppcc_stage_cost *c = &x->c[s];
		double in[3] = {s > 0 ? x->c[s - 1].send_f_ms : 0,
				s < p - 1 ? x->c[s + 1].send_b_ms : 0, 0};
		double out[3] = {s < p - 1 ? c->send_f_ms : 0,
				 s > 0 ? c->send_b_ms : 0, 0};
		double comp[3] = {ppcc_op_ms(c, PPCC_OP_F), ppcc_op_ms(c, PPCC_OP_I),
				  ppcc_op_ms(c, PPCC_OP_W)};
		for (int k = 0; k < 3; k++)
			for (int i = 0; i < m; i++) {
				int o = ex_pass(x, s, k, i);
				x->cin[o] = in[k];
				x->comp[o] = comp[k];
				x->dur[o] = in[k] + comp[k] + out[k];
			}
	}
}

/* The warm start: each rank's compute order of w as passes (a B is its I
 * and W at once), in *pos the position of each pass on its rank.
 * PPCC_EINPUT when w is not one chunk per rank in the looped placement,
 * or a kind of pass is out of microbatch order. */
static int ex_warm_order(const ex_ctx *x, const ppcc_schedule *w, int *pos,
			 int *order)
{
	int p = x->p, m = x->m;
	if (w->n_ranks != p || w->n_chunks != 1 || w->n_microbatches != m)
		return PPCC_EINPUT;
	for (int r = 0; r < p; r++) {
		if (w->stages[r].rank != r)
			return PPCC_EINPUT;
		int next[3] = {0, 0, 0}, n = 0;
		const ppcc_rank_schedule *rs = &w->ranks[r];
		for (int k = 0; k < rs->n_actions; k++) {
			const ppcc_action *a = &rs->actions[k];
			int kinds[2], nk = 0;
			switch (a->op) {
			case PPCC_OP_F: kinds[nk++] = EX_F; break;
			case PPCC_OP_I: kinds[nk++] = EX_I; break;
			case PPCC_OP_W: kinds[nk++] = EX_W; break;
			case PPCC_OP_B: kinds[nk++] = EX_I; kinds[nk++] = EX_W; break;
			default: continue;
			}
			for (int q = 0; q < nk; q++) {
				if (a->stage != r || a->mb != next[kinds[q]] ||
				    n >= 3 * m)
					return PPCC_EINPUT;
				int o = ex_pass(x, r, kinds[q], next[kinds[q]]++);
				order[r * 3 * m + n] = o;
				pos[o] = n++;
			}
		}
		if (n != 3 * m)
			return PPCC_EINPUT;
	}
	return 0;
}

/* Times the orders in the model as the simulator times the lowered
 * schedule: each pass as early as its rank and its message allow.  The
 * step is returned; PPCC_EINTERNAL (as a negative) on a deadlock. */
static double ex_time(const ex_ctx *x, const int *order, double *t)
{
	int p = x->p, n = 3 * x->m, left = p * n;
	int *at = calloc((size_t)p, sizeof *at);
	double *clock = calloc((size_t)p, sizeof *clock);
	char *done = calloc((size_t)x->n_pass, 1);
	double step = 0;
	if (!at || !clock || !done) {
		step = PPCC_ENOMEM;
		goto out;
	}
	while (left > 0) {
		int moved = 0;
		for (int r = 0; r < p; r++)
			while (at[r] < n) {
				int o = order[r * n + at[r]];
				int s = o / (3 * x->m), k = o / x->m % 3,
				    i = o % x->m;
				int pr = ex_pred(x, s, k, i);
				if (pr >= 0 && !done[pr])
					break;
				double st = clock[r];
				if (pr >= 0 && ex_ready(x, t, pr) > st)
					st = ex_ready(x, t, pr);
				t[o] = st;
				clock[r] = st + x->dur[o];
				if (clock[r] > step)
					step = clock[r];
				done[o] = 1;
				at[r]++;
				left--;
				moved = 1;
			}
		if (!moved) {
			step = PPCC_EINTERNAL;
			goto out;
		}
	}
out:
	free(at);
	free(clock);
	free(done);
	return step;
}

static void ex_callback(glp_tree *tree, void *info)
{
	ex_ctx *x = info;
	if (glp_ios_reason(tree) == GLP_IHEUR && !x->warm_given) {
		x->warm_given = 1;
		x->warm_taken = glp_ios_heur_sol(tree, x->warm) == 0;
	}
	int active, current, total;
	glp_ios_tree_size(tree, &active, &current, &total);
	x->nodes = total;
	int best = glp_ios_best_node(tree);
	if (best) {
		double b = glp_ios_node_bound(tree, best);
		if (b > x->bound && b < 1e300)
			x->bound = b;
	}
	if (x->node_limit > 0 && total > x->node_limit &&
	    glp_ios_reason(tree) == GLP_ISELECT) {
		x->stopped_nodes = 1;
		glp_ios_terminate(tree);
	}
}

static double ex_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The rows: see the opening comment. */
static void ex_model(ex_ctx *x, const double *rank_cap, double ub)
{
	int p = x->p, m = x->m;
	for (int s = 0; s < p; s++) {
		for (int k = 0; k < 3; k++)
			for (int i = 0; i + 1 < m; i++)
				ex_diff(x, 1 + ex_pass(x, s, k, i + 1),
					1 + ex_pass(x, s, k, i),
					x->dur[ex_pass(x, s, k, i)]);
		for (int i = 0; i < m; i++) {
			int f = ex_pass(x, s, EX_F, i), in = ex_pass(x, s, EX_I, i),
			    w = ex_pass(x, s, EX_W, i);
			ex_diff(x, 1 + in, 1 + f, x->dur[f]);
			ex_diff(x, 1 + w, 1 + in, x->dur[in]);
			for (int k = EX_F; k <= EX_I; k++) {
				int pr = ex_pred(x, s, k, i), o = ex_pass(x, s, k, i);
				if (pr >= 0)
					ex_diff(x, 1 + o, 1 + pr,
						x->cin[pr] + x->comp[pr]);
			}
		}
		/* the pairs */
		static const int first[3] = {EX_F, EX_F, EX_I};
		static const int second[3] = {EX_I, EX_W, EX_W};
		for (int q = 0; q < 3; q++)
			for (int i = 1; i < m; i++)
				for (int j = 0; j < i; j++) {
					int a = 1 + ex_pass(x, s, first[q], i);
					int b = 1 + ex_pass(x, s, second[q], j);
					int y = ex_ycol(x, s, q, i, j);
					int col[3] = {b, a, y};
					double v1[3] = {1, -1, -ub};
					ex_row(x, 3, col, v1, x->dur[a - 1] - ub);
					int col2[3] = {a, b, y};
					double v2[3] = {1, -1, ub};
					ex_row(x, 3, col2, v2, x->dur[b - 1]);
				}
		/* the makespan, and the rank's work between F_0 and C */
		int last = ex_pass(x, s, EX_W, m - 1);
		ex_diff(x, x->col_c, 1 + last, x->dur[last]);
		double work = 0;
		for (int k = 0; k < 3; k++)
			for (int i = 0; i < m; i++)
				work += x->dur[ex_pass(x, s, k, i)];
		ex_diff(x, x->col_c, 1 + ex_pass(x, s, EX_F, 0), work);
		/* memory */
		const ppcc_stage_cost *c = &x->c[s];
		double room = rank_cap ? rank_cap[s] - c->static_bytes : INFINITY;
		double in = c->stash_input_bytes, rest = c->stash_bytes - in;
		if (!((c->stash_bytes - (in < 0 ? in : 0)) * m > room))
			continue;
		for (int j = 1; j < m; j++) {
			int col[2 * PPCC_EXACT_MAX_M];
			double val[2 * PPCC_EXACT_MAX_M];
			int n = 0;
			/* in units of the stash, for the simplex's numerics */
			double u = c->stash_bytes;
			for (int i = 0; i < j; i++) {
				col[n] = ex_ycol(x, s, 0, j, i);
				val[n++] = -in / u;
				col[n] = ex_ycol(x, s, 1, j, i);
				val[n++] = -rest / u;
			}
			ex_row(x, n, col, val, 1 - room / u);
		}
		/* a negative stash_input_bytes (W holds more than the stash)
		 * makes I grow the stash, so the peak can come after an I:
		 * after I_j, F_0..F_j and the F_i before it are held, less the
		 * inputs of I_0..I_j and the rest of each W_i (i < j) before it */
		if (in < 0)
			for (int j = 0; j < m; j++) {
				int col[2 * PPCC_EXACT_MAX_M];
				double val[2 * PPCC_EXACT_MAX_M];
				int n = 0;
				double u = c->stash_bytes, fixed = (j + 1) * (u - in);
				for (int i = j + 1; i < m; i++) {
					col[n] = ex_ycol(x, s, 0, i, j);
					val[n++] = -1;
				}
				for (int i = 0; i < j; i++) {
					/* W_i before I_j frees rest: 1 - y(I_j, W_i) */
					fixed -= rest;
					col[n] = ex_ycol(x, s, 2, j, i);
					val[n++] = -rest / u;
				}
				ex_row(x, n, col, val, fixed / u - room / u);
			}
	}
}

/* Milliseconds left of limit_s after used_s, as glp_*.tm_lim takes them. */
static int ex_ms(double limit_s, double used_s)
{
	double ms = (limit_s - used_s) * 1000;
	return ms < 1 ? 1 : ms > 1e9 ? 1000000000 : (int)ms;
}

/* A bound that needs no LP: every pass of rank s lies between the
 * earliest start of its F_0 (the forward chain before it) and the step,
 * so the step is at least that start plus the rank's work. */
static double ex_simple_bound(const ex_ctx *x)
{
	double best = 0, start = 0;
	for (int s = 0; s < x->p; s++) {
		double work = 0;
		for (int k = 0; k < 3; k++)
			for (int i = 0; i < x->m; i++)
				work += x->dur[ex_pass(x, s, k, i)];
		if (start + work > best)
			best = start + work;
		int f = ex_pass(x, s, EX_F, 0);
		start += x->cin[f] + x->comp[f];
	}
	return best;
}

/* Each rank's compute actions into *out (in a): with t, its passes
 * sorted by start time (passes of positive length never tie; a tie keeps
 * microbatch and then F, I, W order); without, order as it is. */
static int ex_orders(const ex_ctx *x, ppcc_arena *a, ppcc_action ***out,
		     int *order, const double *t)
{
	int p = x->p, m = x->m, n = 3 * m;
	ppcc_action **ord = ppcc_arena_alloc(a, (size_t)p, sizeof *ord);
	if (!ord)
		return PPCC_ENOMEM;
	for (int s = 0; s < p; s++) {
		ord[s] = ppcc_arena_alloc(a, (size_t)n, sizeof **ord);
		if (!ord[s])
			return PPCC_ENOMEM;
		int *o = &order[s * n];
		if (t) {
			for (int k = 0; k < n; k++)
				o[k] = s * n + k;
			/* insertion sort: n <= 3 PPCC_EXACT_MAX_M */
			for (int k = 1; k < n; k++) {
				int v = o[k], q = k;
				while (q > 0) {
					int u = o[q - 1];
					int ui = u % m, vi = v % m, uk = u / m % 3,
					    vk = v / m % 3;
					int after = t[u] > t[v] + 1e-9 ||
						(fabs(t[u] - t[v]) <= 1e-9 &&
						 (ui > vi || (ui == vi && uk > vk)));
					if (!after)
						break;
					o[q] = u;
					q--;
				}
				o[q] = v;
			}
		}
		static const int op_of[3] = {PPCC_OP_F, PPCC_OP_I, PPCC_OP_W};
		for (int k = 0; k < n; k++)
			ord[s][k] = (ppcc_action){op_of[o[k] / m % 3], s, o[k] % m,
						  -1, 0};
	}
	*out = ord;
	return 0;
}

int ppcc_sched_exact(ppcc_action ***out_order, ppcc_exact_report *rep,
		     ppcc_arena *a, int ranks, int microbatches,
		     const ppcc_stage_cost *costs, const double *rank_cap,
		     const ppcc_schedule *warm, const ppcc_exact_options *opt)
{
	int p = ranks, m = microbatches, err = 0;
	ex_ctx x = {.p = p, .m = m, .c = costs};
	int *order = NULL, *pos = NULL;
	double *t = NULL;
	glp_prob *lp = NULL;
	if (!out_order || !rep || !a || !costs || !warm || !opt || p < 1 ||
	    m < 1 || m > PPCC_EXACT_MAX_M)
		return PPCC_EINPUT;
	memset(rep, 0, sizeof *rep);
	*out_order = NULL;
	x.n_pass = 3 * p * m;
	x.pairs = m * (m - 1) / 2;
	x.col_c = 1 + x.n_pass;
	x.col_y0 = x.col_c + 1;
	int cols = x.n_pass + 1 + 3 * p * x.pairs;
	x.cin = calloc((size_t)x.n_pass, sizeof *x.cin);
	x.comp = calloc((size_t)x.n_pass, sizeof *x.comp);
	x.dur = calloc((size_t)x.n_pass, sizeof *x.dur);
	order = calloc((size_t)x.n_pass, sizeof *order);
	pos = calloc((size_t)x.n_pass, sizeof *pos);
	t = calloc((size_t)x.n_pass, sizeof *t);
	x.warm = calloc((size_t)cols + 1, sizeof *x.warm);
	if (!x.cin || !x.comp || !x.dur || !order || !pos || !t || !x.warm) {
		err = PPCC_ENOMEM;
		goto out;
	}
	ex_costs(&x);
	if ((err = ex_warm_order(&x, warm, pos, order)) < 0)
		goto out;
	double ub = ex_time(&x, order, t);
	if (ub < 0) {
		err = (int)ub;
		goto out;
	}
	rep->warm_model_ms = ub;
	for (int o = 0; o < x.n_pass; o++)
		x.warm[1 + o] = t[o];
	x.warm[x.col_c] = ub;
	static const int first[3] = {EX_F, EX_F, EX_I};
	static const int second[3] = {EX_I, EX_W, EX_W};
	for (int s = 0; s < p; s++)
		for (int q = 0; q < 3; q++)
			for (int i = 1; i < m; i++)
				for (int j = 0; j < i; j++)
					x.warm[ex_ycol(&x, s, q, i, j)] =
						pos[ex_pass(&x, s, first[q], i)] <
						pos[ex_pass(&x, s, second[q], j)];

	ex_model(&x, rank_cap, ub);
	if ((err = x.err) < 0)
		goto out;
	rep->binaries = 3 * p * x.pairs;
	rep->rows = x.rows;
	lp = glp_create_prob();
	glp_set_obj_dir(lp, GLP_MIN);
	glp_add_cols(lp, cols);
	for (int o = 0; o < x.n_pass; o++)
		glp_set_col_bnds(lp, 1 + o, GLP_DB, 0, ub - x.dur[o]);
	glp_set_col_bnds(lp, x.col_c, GLP_DB, 0, ub);
	glp_set_obj_coef(lp, x.col_c, 1);
	for (int j = x.col_y0; j <= cols; j++)
		glp_set_col_kind(lp, j, GLP_BV);
	glp_add_rows(lp, x.rows);
	for (int r = 1; r <= x.rows; r++)
		glp_set_row_bnds(lp, r, GLP_LO, x.lo[r], 0);
	glp_load_matrix(lp, x.ne, x.ia, x.ja, x.ar);

	/* the warm start satisfies every row (the model's timing and memory
	 * are the simulator's): else the model is wrong */
	double *act = calloc((size_t)x.rows + 1, sizeof *act);
	if (!act) {
		err = PPCC_ENOMEM;
		goto out;
	}
	for (int k = 1; k <= x.ne; k++)
		act[x.ia[k]] += x.ar[k] * x.warm[x.ja[k]];
	for (int r = 1; r <= x.rows && err == 0; r++)
		if (act[r] < x.lo[r] - 1e-6 * (1 + fabs(x.lo[r])))
			err = PPCC_EINTERNAL;
	free(act);
	if (err < 0)
		goto out;
	double t0 = ex_now();
	glp_term_out(GLP_OFF);
	glp_scale_prob(lp, GLP_SF_AUTO);
	glp_smcp sm;
	glp_init_smcp(&sm);
	sm.msg_lev = GLP_MSG_OFF;
	sm.presolve = GLP_OFF;
	sm.meth = GLP_DUALP;
	sm.tm_lim = ex_ms(opt->time_limit_s, 0);
	int lp_ret = glp_simplex(lp, &sm);
	rep->bound_ms = ex_simple_bound(&x);
	if (lp_ret == GLP_ETMLIM) {
		/* the relaxation itself took the time: the warm start stands,
		 * with the simple bound */
		rep->status = PPCC_EXACT_TIME_LIMIT;
		rep->model_ms = ub;
		rep->solve_s = ex_now() - t0;
		err = ex_orders(&x, a, out_order, order, NULL);
		goto out;
	}
	if (lp_ret != 0 || glp_get_status(lp) != GLP_OPT) {
		/* the relaxation holds the warm start, so it has an optimum */
		err = PPCC_EINTERNAL;
		goto out;
	}
	x.bound = glp_get_obj_val(lp);
	rep->relaxed = 1;
	x.node_limit = opt->node_limit;
	glp_iocp io;
	glp_init_iocp(&io);
	io.msg_lev = GLP_MSG_OFF;
	io.presolve = GLP_OFF;
	io.cb_func = ex_callback;
	io.cb_info = &x;
	io.mip_gap = 1e-9;
	io.tm_lim = ex_ms(opt->time_limit_s, ex_now() - t0);
	int ret = glp_intopt(lp, &io);
	rep->solve_s = ex_now() - t0;
	rep->nodes = x.nodes;
	rep->warm_taken = x.warm_taken;
	int st = glp_mip_status(lp);
	if (st != GLP_OPT && st != GLP_FEAS) {
		/* not even the warm start taken: it stands, with the bound */
		rep->status = ret == GLP_ETMLIM ? PPCC_EXACT_TIME_LIMIT
			    : x.stopped_nodes ? PPCC_EXACT_NODE_LIMIT
			    : PPCC_EXACT_STOPPED;
		if (x.bound > rep->bound_ms && x.bound <= ub)
			rep->bound_ms = x.bound;
		rep->model_ms = ub;
		err = ex_orders(&x, a, out_order, order, NULL);
		goto out;
	}
	rep->model_ms = glp_mip_obj_val(lp);
	if (ret == 0 && st == GLP_OPT) {
		rep->status = PPCC_EXACT_OPTIMAL;
		rep->bound_ms = rep->model_ms;
	} else {
		rep->status = ret == GLP_ETMLIM ? PPCC_EXACT_TIME_LIMIT
			    : x.stopped_nodes ? PPCC_EXACT_NODE_LIMIT
			    : PPCC_EXACT_STOPPED;
		if (x.bound > rep->bound_ms)
			rep->bound_ms = x.bound;
		if (rep->bound_ms > rep->model_ms)
			rep->bound_ms = rep->model_ms;
	}
	for (int o = 0; o < x.n_pass; o++)
		t[o] = glp_mip_col_val(lp, 1 + o);
	err = ex_orders(&x, a, out_order, order, t);
out:
	if (lp) {
		glp_delete_prob(lp);
		glp_free_env();
	}
	free(x.cin);
	free(x.comp);
	free(x.dur);
	free(x.ia);
	free(x.ja);
	free(x.ar);
	free(x.lo);
	free(x.warm);
	free(order);
	free(pos);
	free(t);
	return err;
}
