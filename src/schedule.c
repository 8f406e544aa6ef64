/*
 * schedule.c - the action lists of GPipe, 1F1B and interleaved 1F1B.
 *
 * Each rank's list is first a sequence of compute steps (forward or
 * backward of one (stage, microbatch)); communication is then made
 * explicit around each step: a RECV right before the compute that needs
 * it, a SEND right after the compute that produced it.  With p == 1 every
 * stage lives on rank 0 and there is no communication at all.
 *
 *   F(s, mb):  [RECV_F(s, mb) from rank(s-1)]  F  [SEND_F(s, mb) to rank(s+1)]
 *   B(s, mb):  [RECV_B(s, mb) from rank(s+1)]  B  [SEND_B(s, mb) to rank(s-1)]
 *
 * RECV_F(s) and SEND_B(s) carry stages[s].recv_bytes (the tensor at the
 * boundary between s-1 and s); SEND_F(s) and RECV_B(s) carry
 * stages[s].send_bytes.
 *
 * The compute orders:
 *
 *   GPipe      every forward, microbatch 0..m-1, then every backward in
 *              the same order.
 *   1F1B       (PipeDream-Flush, Megatron-LM's non-interleaved schedule)
 *              rank r runs w = min(p-r-1, m) warm-up forwards, then m-w
 *              pairs "forward, backward", then the w remaining backwards;
 *              at most min(p-r, m) microbatches are in flight on rank r.
 *   interleaved (Megatron-LM's interleaved schedule, v >= 2 chunks)
 *              one table of (microbatch, chunk), shared by all ranks:
 *              microbatches in groups of G (the last group may be
 *              shorter), each group listed chunk-major.  Forward k runs
 *              table[k]; backward k runs table[k] with chunk c replaced by
 *              v-1-c.  Rank r runs min((p-r-1)*2 + (v-1)*G, m*v) warm-up
 *              forwards, then pairs "forward warm-up+k, backward k", then
 *              the remaining backwards.  Chunk c of rank r is stage c*p+r.
 *
 * Every list is counted before it is written, so memory is exactly one
 * ppcc_action per action (plus the copied stage table); generation is
 * linear in the number of actions.
 */
#include <stdint.h>
#include <string.h>

#include "ppcc.h"

/* Number of actions of one forward (or one backward) step of stage s in
 * a pipeline of n_stages stages over p ranks: the compute itself and,
 * when p > 1, one receive or send for each neighbouring stage. */
static int64_t sched_actions_per_step(int s, int n_stages, int p)
{
	int64_t n = 1;
	if (p > 1)
		n += (s > 0) + (s < n_stages - 1);
	return n;
}

typedef struct sched_writer {
	ppcc_action *out;
	int n;
	int p;
	int n_stages;
	const ppcc_stage_info *stages;
} sched_writer;

static void sched_put(sched_writer *w, int op, int stage, int mb, int peer,
		      uint64_t bytes)
{
	ppcc_action *a = &w->out[w->n++];
	a->op = op;
	a->stage = stage;
	a->mb = mb;
	a->peer = peer;
	a->bytes = bytes;
}

static void sched_forward(sched_writer *w, int s, int mb)
{
	int cross = w->p > 1;
	if (cross && s > 0)
		sched_put(w, PPCC_OP_RECV_F, s, mb, (s - 1) % w->p,
			  w->stages[s].recv_bytes);
	sched_put(w, PPCC_OP_F, s, mb, -1, 0);
	if (cross && s < w->n_stages - 1)
		sched_put(w, PPCC_OP_SEND_F, s, mb, (s + 1) % w->p,
			  w->stages[s].send_bytes);
}

static void sched_backward(sched_writer *w, int s, int mb)
{
	int cross = w->p > 1;
	if (cross && s < w->n_stages - 1)
		sched_put(w, PPCC_OP_RECV_B, s, mb, (s + 1) % w->p,
			  w->stages[s].send_bytes);
	sched_put(w, PPCC_OP_B, s, mb, -1, 0);
	if (cross && s > 0)
		sched_put(w, PPCC_OP_SEND_B, s, mb, (s - 1) % w->p,
			  w->stages[s].recv_bytes);
}

static void sched_gpipe_rank(sched_writer *w, int r, int m)
{
	for (int mb = 0; mb < m; mb++)
		sched_forward(w, r, mb);
	for (int mb = 0; mb < m; mb++)
		sched_backward(w, r, mb);
}

static void sched_1f1b_rank(sched_writer *w, int r, int m)
{
	int warmup = w->p - r - 1 < m ? w->p - r - 1 : m;
	int f = 0, b = 0;
	while (f < warmup)
		sched_forward(w, r, f++);
	while (f < m) {
		sched_forward(w, r, f++);
		sched_backward(w, r, b++);
	}
	while (b < m)
		sched_backward(w, r, b++);
}

/* Megatron-LM's table of (microbatch, chunk), m*v entries, shared by all
 * ranks. */
typedef struct sched_table {
	int32_t *mb;
	int32_t *chunk;
} sched_table;

static void sched_interleaved_rank(sched_writer *w, int r, int m, int v,
				   int group, const sched_table *t)
{
	int p = w->p;
	int64_t total = (int64_t)m * v;
	int64_t warmup = (int64_t)(p - r - 1) * 2 + (int64_t)(v - 1) * group;
	if (warmup > total)
		warmup = total;
	int64_t f = 0, b = 0;
	while (f < warmup) {
		sched_forward(w, t->chunk[f] * p + r, t->mb[f]);
		f++;
	}
	while (f < total) {
		sched_forward(w, t->chunk[f] * p + r, t->mb[f]);
		f++;
		sched_backward(w, (v - 1 - t->chunk[b]) * p + r, t->mb[b]);
		b++;
	}
	while (b < total) {
		sched_backward(w, (v - 1 - t->chunk[b]) * p + r, t->mb[b]);
		b++;
	}
}

/* Megatron-LM's constraints on the microbatch group G: p <= G <= m, and a
 * last, shorter group holds at least p microbatches.  They are needed:
 * over p <= 8, v <= 4, m <= 24, every G outside them gives an order that
 * either deadlocks under the semantics of ppcc/schedule.h or idles more
 * than (p-1)/(v*m+p-1) with equal stages, except G > m >= p, which runs
 * like G = m with a longer warm-up. */
static int sched_interleaved_ok(int p, int m, int group)
{
	if (group < p || group > m)
		return 0;
	return m % group == 0 || m % group >= p;
}

/*
 * Contract: returns PPCC_EINPUT, leaving *out untouched, when the
 * arguments do not describe a schedule this generator makes: kind
 * unknown; ranks, chunks or microbatches below 1; chunks != 1 for GPipe
 * and 1F1B; chunks < 2 for interleaved; for interleaved, G (group_size, 0
 * meaning p) outside [p, m] or m % G nonzero and below p; a negative
 * group_size (GPipe and 1F1B otherwise ignore it); a rank's list longer
 * than INT32_MAX actions.  There is no diagnostics sink here: the caller
 * checks the configuration first (ppcc_config_check) and reports.
 * PPCC_ENOMEM when the arena fails.
 *
 * stages has ranks*chunks entries.  The schedule keeps a copy in the arena
 * whose stage, rank and chunk fields are set from the index (s, s % p,
 * s / p); the layers and byte counts are copied as given.
 * ppcc_schedule_build_unsealed leaves the fingerprint 0, for a caller
 * that changes the schedule before it is sealed (plan.c).
 */
int ppcc_schedule_build_unsealed(ppcc_schedule *out, ppcc_arena *a, int kind,
				 int ranks, int chunks, int microbatches,
				 int group_size, const ppcc_stage_info *stages)
{
	int p = ranks, v = chunks, m = microbatches;
	int group = group_size == 0 ? p : group_size;
	int err = 0;
	sched_table table = {NULL, NULL};

	if (!out || !a || !stages || p < 1 || v < 1 || m < 1 || group_size < 0)
		return PPCC_EINPUT;
	switch (kind) {
	case PPCC_SCHED_GPIPE:
	case PPCC_SCHED_1F1B:
		if (v != 1)
			return PPCC_EINPUT;
		break;
	case PPCC_SCHED_INTERLEAVED:
		if (v < 2 || !sched_interleaved_ok(p, m, group))
			return PPCC_EINPUT;
		break;
	default:
		return PPCC_EINPUT;
	}
	int64_t n_stages64 = (int64_t)p * v;
	if (n_stages64 > INT32_MAX)
		return PPCC_EINPUT;
	int n_stages = (int)n_stages64;

	/* Count: every rank runs one forward and one backward of each
	 * (stage, microbatch) it holds. */
	int32_t *n_actions = ppcc_arena_alloc(a, (size_t)p, sizeof *n_actions);
	if (!n_actions)
		return PPCC_ENOMEM;
	for (int r = 0; r < p; r++) {
		int64_t n = 0;
		for (int c = 0; c < v; c++)
			n += 2 * sched_actions_per_step(c * p + r, n_stages, p);
		n *= m;
		if (n > INT32_MAX)
			return PPCC_EINPUT;
		n_actions[r] = (int32_t)n;
	}

	ppcc_stage_info *st = ppcc_arena_alloc(a, (size_t)n_stages, sizeof *st);
	ppcc_rank_schedule *rs = ppcc_arena_alloc(a, (size_t)p, sizeof *rs);
	if (!st || !rs)
		return PPCC_ENOMEM;
	for (int s = 0; s < n_stages; s++) {
		st[s] = stages[s];
		st[s].stage = s;
		st[s].rank = s % p;
		st[s].chunk = s / p;
	}

	if (kind == PPCC_SCHED_INTERLEAVED) {
		size_t total = (size_t)m * (size_t)v;
		table.mb = ppcc_malloc(total * sizeof *table.mb);
		table.chunk = ppcc_malloc(total * sizeof *table.chunk);
		if (!table.mb || !table.chunk) {
			err = PPCC_ENOMEM;
			goto out;
		}
		size_t k = 0;
		for (int g0 = 0; g0 < m; g0 += group) {
			int g1 = m - g0 > group ? g0 + group : m;
			for (int c = 0; c < v; c++)
				for (int mb = g0; mb < g1; mb++) {
					table.mb[k] = mb;
					table.chunk[k] = c;
					k++;
				}
		}
	}

	for (int r = 0; r < p; r++) {
		sched_writer w = {
			.out = ppcc_arena_alloc(a, (size_t)n_actions[r],
						sizeof(ppcc_action)),
			.n = 0, .p = p, .n_stages = n_stages, .stages = st,
		};
		if (!w.out) {
			err = PPCC_ENOMEM;
			goto out;
		}
		if (kind == PPCC_SCHED_GPIPE)
			sched_gpipe_rank(&w, r, m);
		else if (kind == PPCC_SCHED_1F1B)
			sched_1f1b_rank(&w, r, m);
		else
			sched_interleaved_rank(&w, r, m, v, group, &table);
		if (w.n != n_actions[r]) {
			err = PPCC_EINTERNAL;
			goto out;
		}
		rs[r].rank = r;
		rs[r].n_actions = w.n;
		rs[r].actions = w.out;
	}

	memset(out, 0, sizeof *out);
	out->version = PPCC_SCHEDULE_VERSION;
	out->kind = kind;
	out->n_ranks = p;
	out->n_chunks = v;
	out->n_stages = n_stages;
	out->n_microbatches = m;
	out->stages = st;
	out->ranks = rs;
out:
	ppcc_free(table.mb);
	ppcc_free(table.chunk);
	return err;
}

int ppcc_schedule_build(ppcc_schedule *out, ppcc_arena *a, int kind,
			int ranks, int chunks, int microbatches,
			int group_size, const ppcc_stage_info *stages)
{
	int err = ppcc_schedule_build_unsealed(out, a, kind, ranks, chunks,
					       microbatches, group_size, stages);
	if (err == 0)
		out->fingerprint = ppcc_schedule_fingerprint(out);
	return err;
}
