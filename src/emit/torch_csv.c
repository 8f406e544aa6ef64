/*
 * emit/torch_csv.c - the schedule as the CSV that PyTorch's pipelining
 * runtime loads (`_load_csv` of torch.distributed.pipelining).
 *
 * One line per rank, rank 0 first; cells are `{stage}{action}{mb}` with
 * the global virtual stage, e.g. 0F3, 7B2, 1SEND_F0, 2RECV_B4, separated
 * by commas; lines end in "\n".  An overlapped pair is one cell,
 * `(0F7;7B3)OVERLAP_F_B`.  With communication (o->with_comms) every
 * action of a rank is listed in its order, with no empty cells; a
 * stage's collectives become PyTorch's per-stage REDUCE_GRAD, UNSHARD
 * and RESHARD cells.  Compute only (the default), the computes are laid
 * out on the earliest grid of lock-step time steps in which every
 * consumer comes at a later step than its producer, an empty cell being
 * an idle step; the same file serves both of PyTorch's loaders.
 * Limits: a schedule whose compute order cannot be laid out this way (a
 * cross-rank cycle) is reported as bad input.
 *
 * Derivation: doc/design/torch-csv.md (the mapping of each action and
 * why the grid).
 */
#include <stdio.h>
#include <string.h>

#include "ppcc.h"

static int is_compute(int op)
{
	return op == PPCC_OP_F || op == PPCC_OP_B || op == PPCC_OP_I ||
	       op == PPCC_OP_W;
}

static void put_action(FILE *f, const ppcc_action *a)
{
	if (ppcc_op_is_reduction(a->op))
		fprintf(f, "%dREDUCE_GRAD", (int)a->stage);
	else if (a->op == PPCC_OP_ALL_GATHER_PARAM ||
		 a->op == PPCC_OP_UNSHARD_PARAM)
		fprintf(f, "%dUNSHARD", (int)a->stage);
	else
		fprintf(f, "%d%s%d", (int)a->stage, ppcc_op_name(a->op),
			(int)a->mb);
}

/* The actions that one cell at a of a rank's list stands for: 3 for an
 * overlapped pair (marker, F, B), written as PyTorch writes it,
 * `(0F7;7B3)OVERLAP_F_B`; 1 otherwise.  check_schedule made sure that a
 * marker has its two halves after it. */
static int cell_len(const ppcc_action *a)
{
	return a->op == PPCC_OP_OVERLAP_F_B ? 3 : 1;
}

static void put_cell(FILE *f, const ppcc_action *a)
{
	if (a->op != PPCC_OP_OVERLAP_F_B) {
		put_action(f, a);
		return;
	}
	fputc('(', f);
	put_action(f, &a[1]);
	fputc(';', f);
	put_action(f, &a[2]);
	fputs(")OVERLAP_F_B", f);
}

/* A cell the compute-only grid places: a compute action or a pair. */
static int is_cell(int op)
{
	return is_compute(op) || op == PPCC_OP_OVERLAP_F_B;
}

/* Ranges the emitter relies on, checked rather than assumed. */
static int check_schedule(const ppcc_schedule *s, ppcc_diag *d)
{
	if (s->n_ranks < 1 || s->n_stages < 1 || s->n_microbatches < 1 ||
	    !s->ranks) {
		ppcc_error(d, NULL, "the plan has no schedule to write");
		return PPCC_EINTERNAL;
	}
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		if (rs->n_actions < 0 || (rs->n_actions > 0 && !rs->actions)) {
			ppcc_error(d, NULL, "rank %d has no action list", r);
			return PPCC_EINTERNAL;
		}
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			if (a->op < 0 || a->op >= PPCC_OP_COUNT || a->stage < 0 ||
			    a->stage >= s->n_stages || a->mb < 0 ||
			    (a->mb >= s->n_microbatches &&
			     !ppcc_op_is_collective(a->op))) {
				ppcc_error(d, NULL,
					   "rank %d action %d (op %d, stage %d, "
					   "microbatch %d) is out of range",
					   r, i, (int)a->op, (int)a->stage, (int)a->mb);
				return PPCC_EINTERNAL;
			}
			if (a->op == PPCC_OP_OVERLAP_F_B &&
			    (i + 2 >= rs->n_actions || a[1].op != PPCC_OP_F ||
			     !(a[2].op == PPCC_OP_B || a[2].op == PPCC_OP_I))) {
				ppcc_error(d, NULL, "rank %d action %d: an "
					   "overlapped pair without its forward "
					   "and backward", r, i);
				return PPCC_EINTERNAL;
			}
		}
	}
	return 0;
}

/* step[r][i]: the lock-step time step of compute action i of rank r.
 * placed_f[s*m + mb] / placed_b[...] hold the step of F / (B or I) of
 * (s, mb), -1 until placed.  Each round places every rank's next action
 * whose cross-rank producer sits at an earlier step; a round that places
 * nothing means a cycle. */
static int lay_out(int **step, int *placed_f, int *placed_b, int *next,
		   const ppcc_schedule *s, ppcc_diag *d)
{
	int S = s->n_stages, m = s->n_microbatches;
	long remaining = 0;
	for (int r = 0; r < s->n_ranks; r++) {
		next[r] = 0;
		for (int i = 0; i < s->ranks[r].n_actions; i++)
			step[r][i] = -1;
		for (int i = 0; i < s->ranks[r].n_actions;) {
			const ppcc_action *a = &s->ranks[r].actions[i];
			remaining += is_cell(a->op);
			i += cell_len(a);
		}
	}
	for (int k = 0; k < S * m; k++)
		placed_f[k] = placed_b[k] = -1;

	for (int t = 0; remaining > 0; t++) {
		int placed = 0;
		/* First decide for every rank, then commit, so that nothing
		 * placed at step t enables another action at step t. */
		for (int r = 0; r < s->n_ranks; r++) {
			const ppcc_rank_schedule *rs = &s->ranks[r];
			while (next[r] < rs->n_actions &&
			       !is_cell(rs->actions[next[r]].op))
				next[r]++;
			if (next[r] >= rs->n_actions)
				continue;
			const ppcc_action *a = &rs->actions[next[r]];
			int ready = 1;
			for (int k = a->op == PPCC_OP_OVERLAP_F_B; k < cell_len(a); k++) {
				const ppcc_action *x = &a[k];
				int dep = -2; /* -2: no cross-stage producer */
				if (x->op == PPCC_OP_F && x->stage > 0)
					dep = placed_f[(x->stage - 1) * m + x->mb];
				else if ((x->op == PPCC_OP_B || x->op == PPCC_OP_I) &&
					 x->stage < S - 1)
					dep = placed_b[(x->stage + 1) * m + x->mb];
				if (dep == -1 || dep >= t)
					ready = 0;
			}
			if (!ready)
				continue;
			step[r][next[r]] = t;
			placed++;
		}
		if (!placed) {
			ppcc_error(d, NULL,
				   "the compute order cannot run in lock step "
				   "(ranks wait on each other in a cycle)");
			return PPCC_EINPUT;
		}
		for (int r = 0; r < s->n_ranks; r++) {
			const ppcc_rank_schedule *rs = &s->ranks[r];
			if (next[r] >= rs->n_actions || step[r][next[r]] != t)
				continue;
			const ppcc_action *a = &rs->actions[next[r]];
			for (int k = 0; k < cell_len(a); k++) {
				if (a[k].op == PPCC_OP_F)
					placed_f[a[k].stage * m + a[k].mb] = t;
				else if (a[k].op == PPCC_OP_B || a[k].op == PPCC_OP_I)
					placed_b[a[k].stage * m + a[k].mb] = t;
			}
			next[r] += cell_len(a);
			remaining--;
		}
	}
	return 0;
}

static int emit_torch_csv_body(FILE *f, const ppcc_plan *p,
			const ppcc_emit_options *o, ppcc_diag *d)
{
	ppcc_diag quiet = {0};
	const ppcc_schedule *s = &p->best.schedule;
	ppcc_arena *a = NULL;
	int err;

	if (!d)
		d = &quiet;
	if ((err = check_schedule(s, d)) < 0)
		return err;

	if (o && o->with_comms) {
		int S = s->n_stages;
		/* per stage: its last reduction round's bucket 0, and its
		 * UNSHARD_PARAM groups waiting or in use */
		int32_t *last_red = ppcc_malloc((size_t)S * sizeof *last_red);
		int32_t *held = ppcc_malloc((size_t)S * sizeof *held);
		if (!last_red || !held) {
			ppcc_free(last_red);
			ppcc_free(held);
			err = PPCC_ENOMEM;
			goto out;
		}
		for (int r = 0; r < s->n_ranks; r++) {
			const ppcc_rank_schedule *rs = &s->ranks[r];
			int cells = 0;
			/* the groups' stages, oldest first (at most two wait) */
			int queue[4], n_queue = 0;
			for (int st = 0; st < S; st++)
				held[st] = 0;
			for (int i = 0; i < rs->n_actions; i++)
				if (ppcc_op_is_reduction(rs->actions[i].op) &&
				    rs->actions[i].mb == 0)
					last_red[rs->actions[i].stage] = i;
			for (int i = 0; i < rs->n_actions;) {
				const ppcc_action *x = &rs->actions[i];
				int st = x->stage;
				if (x->op == PPCC_OP_UNSHARD_PARAM) {
					int open = x->mb == 0 && n_queue < 4;
					if (open)
						queue[n_queue++] = st;
					i++;
					if (!open || held[st]++ > 0)
						continue;
				} else if ((ppcc_op_is_collective(x->op) && x->mb != 0) ||
					   (ppcc_op_is_reduction(x->op) &&
					    last_red[st] != i)) {
					i++;
					continue;
				} else {
					i += cell_len(x);
				}
				if (cells++)
					fputc(',', f);
				put_cell(f, x);
				/* the computes served: the cell's, or a pair's two */
				int served = n_queue > 0 && x->op <= PPCC_OP_I
					? 1 : x->op == PPCC_OP_OVERLAP_F_B && n_queue >= 2
					? 2 : 0;
				for (int k = 0; k < served; k++) {
					int q = queue[0];
					memmove(queue, queue + 1,
						(size_t)--n_queue * sizeof *queue);
					if (--held[q] == 0) {
						fprintf(f, ",%dRESHARD", q);
						cells++;
					}
				}
			}
			fputc('\n', f);
		}
		ppcc_free(last_red);
		ppcc_free(held);
		goto out;
	}

	if (!(a = ppcc_arena_new())) {
		err = PPCC_ENOMEM;
		goto out;
	}
	size_t cells = (size_t)s->n_stages * (size_t)s->n_microbatches;
	int **step = ppcc_arena_alloc(a, (size_t)s->n_ranks, sizeof *step);
	int *next = ppcc_arena_alloc(a, (size_t)s->n_ranks, sizeof *next);
	int *placed_f = ppcc_arena_alloc(a, cells, sizeof *placed_f);
	int *placed_b = ppcc_arena_alloc(a, cells, sizeof *placed_b);
	if (!step || !next || !placed_f || !placed_b) {
		err = PPCC_ENOMEM;
		goto out;
	}
	for (int r = 0; r < s->n_ranks; r++) {
		step[r] = ppcc_arena_alloc(a, (size_t)s->ranks[r].n_actions + 1,
					   sizeof **step);
		if (!step[r]) {
			err = PPCC_ENOMEM;
			goto out;
		}
	}
	if ((err = lay_out(step, placed_f, placed_b, next, s, d)) < 0)
		goto out;

	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		int col = 0; /* cells written so far on this line */
		for (int i = 0; i < rs->n_actions;) {
			int n = cell_len(&rs->actions[i]);
			if (is_cell(rs->actions[i].op)) {
				for (; col < step[r][i]; col++)
					fputs(col ? "," : "", f);
				fputs(col ? "," : "", f);
				put_cell(f, &rs->actions[i]);
				col++;
			}
			i += n;
		}
		fputc('\n', f);
	}
out:
	ppcc_arena_free(a);
	if (err == PPCC_ENOMEM)
		ppcc_error(d, NULL, "out of memory writing the torch CSV");
	if (!err && ferror(f)) {
		ppcc_error(d, NULL, "cannot write the torch CSV");
		err = PPCC_EIO;
	}
	return err;
}

int ppcc_emit_torch_csv(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o, ppcc_diag *d)
{
	locale_t saved = ppcc_locale_enter();
	int err = emit_torch_csv_body(f, p, o, d);
	ppcc_locale_leave(saved);
	return err;
}
