/*
 * emit/torch_csv.c - the schedule as the CSV that PyTorch's pipelining
 * runtime loads (`_load_csv` of torch.distributed.pipelining).
 *
 * One line per rank, rank 0 first; cells are `{stage}{action}{mb}` with
 * the global virtual stage, e.g. 0F3, 7B2, 1SEND_F0, 2RECV_B4, separated
 * by commas; lines end in "\n".  An overlapped pair is one cell,
 * `(0F7;7B3)OVERLAP_F_B`.  With communication (o->with_comms) every
 * compute and transfer of a rank is listed in its order, with no empty
 * cells, and the collectives give way to PyTorch's per-stage cells,
 * placed as its own lowering places them: one REDUCE_GRAD per stage,
 * always, after its last B or W; UNSHARD and RESHARD only under ZeRO-3
 * (a schedule with UNSHARD_PARAM groups), never a compute of a stage
 * between its RESHARD and its next UNSHARD.  Compute only (the
 * default), the computes are laid out on the earliest grid of lock-step
 * time steps in which every consumer comes at a later step than its
 * producer, an empty cell being an idle step; the same file serves both
 * of PyTorch's loaders.
 * Limits: a schedule whose compute order cannot be laid out this way (a
 * cross-rank cycle) is reported as bad input, and so is DualPipe's, whose
 * two pipelines PyTorch's single chain of stages cannot hold.
 *
 * Derivation: doc/design/torch-csv.md (the mapping of each action, the
 * PyTorch rules it follows, and why the grid).
 */
#include <stdio.h>

#include "ppcc.h"

static int is_compute(int op)
{
	return op == PPCC_OP_F || op == PPCC_OP_B || op == PPCC_OP_I ||
	       op == PPCC_OP_W;
}

/* A compute or transfer action; the collectives are never written as
 * such (emit_with_comms writes PyTorch's per-stage cells instead). */
static void put_action(FILE *f, const ppcc_action *a)
{
	fprintf(f, "%d%s%d", (int)a->stage, ppcc_op_name(a->op), (int)a->mb);
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
	if (ppcc_sched_pipes(s->kind) > 1) {
		/* PyTorch's stage s sends to stage s+1: one chain */
		ppcc_error(d, NULL, "PyTorch's pipelining runs one pipeline of "
			   "stages, not the %s schedule's two (one per "
			   "direction, each with its own copy of the "
			   "parameters)", ppcc_schedule_kind_name(s->kind));
		return PPCC_EINPUT;
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

/* How many stages _add_unshard_reshard keeps gathered at once (its
 * max_active_stages); doc/design/torch-csv.md. */
enum { TORCH_ACTIVE_STAGES = 3 };

/* The stages of a cell's computes, in order: one, or a pair's two. */
static int cell_stages(int out[2], const ppcc_action *a)
{
	if (a->op == PPCC_OP_OVERLAP_F_B) {
		out[0] = a[1].stage;
		out[1] = a[2].stage;
		return out[0] == out[1] ? 1 : 2;
	}
	out[0] = a->stage;
	return 1;
}

/* The computes of a cell that count toward its stage's gradient: B and
 * W (PyTorch counts these two to find a stage's last backward). */
static int counts_grad(int op)
{
	return op == PPCC_OP_B || op == PPCC_OP_W;
}

/* One rank's list with communication, written as PyTorch's own lowering
 * would write it (doc/design/torch-csv.md has the rules and where they
 * come from).  The list's transfers and computes keep their order; its
 * collectives are replaced by PyTorch's per-stage cells: one
 * {stage}REDUCE_GRAD after the cell that completes the stage's m-th B or
 * W (and that cell's own SENDs), always; with ZeRO-3 (zero3), before
 * each compute cell, RESHARD for the gathered stages that are not among
 * the next TORCH_ACTIVE_STAGES distinct stages to compute, then UNSHARD
 * for those of them not gathered yet, and after the list RESHARD for
 * every stage still gathered.  next[i * 3 + k] holds the k-th of those
 * stages from compute cell i on (-1 past the last), grad[st] counts. */
static int emit_rank_with_comms(FILE *f, const ppcc_schedule *s, int r,
				int zero3, int32_t *next, int32_t *grad,
				ppcc_diag *d)
{
	const ppcc_rank_schedule *rs = &s->ranks[r];
	const int K = TORCH_ACTIVE_STAGES;
	int m = s->n_microbatches, cells = 0;

	/* next[], from the list's end: a cell's own stages, then the
	 * following cell's list without them, cut at K */
	int32_t after[TORCH_ACTIVE_STAGES];
	for (int k = 0; k < K; k++)
		after[k] = -1;
	for (int i = rs->n_actions - 1; i >= 0; i--) {
		const ppcc_action *x = &rs->actions[i];
		if (!is_cell(x->op) || (i >= 2 && rs->actions[i - 2].op ==
					PPCC_OP_OVERLAP_F_B) ||
		    (i >= 1 && rs->actions[i - 1].op == PPCC_OP_OVERLAP_F_B))
			continue;
		int own[2], n_own = cell_stages(own, x), n = 0;
		int32_t list[TORCH_ACTIVE_STAGES];
		for (int k = 0; k < n_own && n < K; k++)
			list[n++] = own[k];
		for (int k = 0; k < K && n < K && after[k] >= 0; k++) {
			int dup = 0;
			for (int j = 0; j < n; j++)
				dup |= list[j] == after[k];
			if (!dup)
				list[n++] = after[k];
		}
		for (int k = 0; k < K; k++)
			after[k] = next[(size_t)i * K + k] = k < n ? list[k] : -1;
	}

	for (int st = 0; st < s->n_stages; st++)
		grad[st] = 0;
	int32_t active[TORCH_ACTIVE_STAGES];
	int n_active = 0;
	/* REDUCE_GRAD cells waiting for the SENDs of the cell before */
	int pending[2], n_pending = 0;
	const ppcc_action *last_cell = NULL;
#define PUT_CELL(...) (fputs(cells++ ? "," : "", f), fprintf(f, __VA_ARGS__))
	for (int i = 0; i < rs->n_actions;) {
		const ppcc_action *x = &rs->actions[i];
		if (ppcc_op_is_collective(x->op)) {
			i++;
			continue;
		}
		int own_send = 0;
		if (last_cell && (x->op == PPCC_OP_SEND_F || x->op == PPCC_OP_SEND_B))
			for (int k = last_cell->op == PPCC_OP_OVERLAP_F_B;
			     k < cell_len(last_cell); k++)
				own_send |= last_cell[k].stage == x->stage &&
					    last_cell[k].mb == x->mb;
		if (!own_send) {
			for (int k = 0; k < n_pending; k++)
				PUT_CELL("%dREDUCE_GRAD", pending[k]);
			n_pending = 0;
			last_cell = NULL;
		}
		if (!is_cell(x->op)) {
			PUT_CELL("%d%s%d", (int)x->stage, ppcc_op_name(x->op),
				 (int)x->mb);
			i++;
			continue;
		}
		if (zero3) {
			const int32_t *want = &next[(size_t)i * K];
			/* RESHARD what is not wanted, in ascending stage order */
			for (;;) {
				int pick = -1;
				for (int k = 0; k < n_active; k++) {
					int wanted = 0;
					for (int j = 0; j < K; j++)
						wanted |= want[j] == active[k];
					if (!wanted && (pick < 0 || active[k] < active[pick]))
						pick = k;
				}
				if (pick < 0)
					break;
				PUT_CELL("%dRESHARD", (int)active[pick]);
				active[pick] = active[--n_active];
			}
			for (int j = 0; j < K && want[j] >= 0; j++) {
				int have = 0;
				for (int k = 0; k < n_active; k++)
					have |= active[k] == want[j];
				if (!have) {
					PUT_CELL("%dUNSHARD", (int)want[j]);
					active[n_active++] = want[j];
				}
			}
		}
		fputs(cells++ ? "," : "", f);
		put_cell(f, x);
		for (int k = x->op == PPCC_OP_OVERLAP_F_B; k < cell_len(x); k++)
			if (counts_grad(x[k].op) && ++grad[x[k].stage] == m &&
			    n_pending < 2)
				pending[n_pending++] = x[k].stage;
		last_cell = x;
		i += cell_len(x);
	}
	for (int k = 0; k < n_pending; k++)
		PUT_CELL("%dREDUCE_GRAD", pending[k]);
	while (n_active > 0) {
		int pick = 0;
		for (int k = 1; k < n_active; k++)
			if (active[k] < active[pick])
				pick = k;
		PUT_CELL("%dRESHARD", (int)active[pick]);
		active[pick] = active[--n_active];
	}
#undef PUT_CELL
	fputc('\n', f);

	for (int st = 0; st < s->n_stages; st++)
		if (s->stages[st].rank == r && grad[st] != m) {
			ppcc_error(d, NULL, "stage %d has %d backward-weight "
				   "computes (B or W) on rank %d, not %d",
				   st, (int)grad[st], r, m);
			return PPCC_EINTERNAL;
		}
	return 0;
}

/* Every rank's list with communication; ZeRO-3 is a schedule that holds
 * UNSHARD_PARAM groups. */
static int emit_with_comms(FILE *f, const ppcc_schedule *s, ppcc_arena *a,
			   ppcc_diag *d)
{
	int zero3 = 0, longest = 0, err;
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		if (rs->n_actions > longest)
			longest = rs->n_actions;
		for (int i = 0; i < rs->n_actions; i++)
			zero3 |= rs->actions[i].op == PPCC_OP_UNSHARD_PARAM;
	}
	if (!s->stages) {
		ppcc_error(d, NULL, "the schedule has no stage placement");
		return PPCC_EINTERNAL;
	}
	int32_t *next = ppcc_arena_alloc(a, (size_t)longest + 1,
					 TORCH_ACTIVE_STAGES * sizeof *next);
	int32_t *grad = ppcc_arena_alloc(a, (size_t)s->n_stages, sizeof *grad);
	if (!next || !grad)
		return PPCC_ENOMEM;
	for (int r = 0; r < s->n_ranks; r++)
		if ((err = emit_rank_with_comms(f, s, r, zero3, next, grad, d)) < 0)
			return err;
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
		if (!(a = ppcc_arena_new())) {
			err = PPCC_ENOMEM;
			goto out;
		}
		err = emit_with_comms(f, s, a, d);
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
