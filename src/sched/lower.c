/*
 * lower.c - from a kind's compute order to the action lists of a
 * ppcc_schedule.
 *
 * The kind's order function (kinds.c has the table) writes each rank's
 * compute actions; this pass then makes communication explicit, from the
 * stage table's placement alone: a RECV right before the compute that
 * needs it, a SEND right after the compute that produced it, whenever
 * the neighbouring stage (in the stage's own pipeline, ir.h's
 * ppcc_stage_prev/next: DualPipe has two) runs on another rank.
 * RECV_F(s) and SEND_B(s)
 * carry stages[s].recv_bytes; SEND_F(s) and RECV_B(s) carry
 * stages[s].send_bytes.  Each rank's receives from a peer are then put in
 * the order the peer sends them where the kind needs it.
 * Contract: the order's length is checked against the kind's closed-form
 * count; the pass is linear in the number of actions and needs one
 * ppcc_action per action; with a second thread the lists are the same.
 *
 * Derivation: doc/design/lower.md (the lowering rules, lowering in place,
 * the two threads).
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "sched/sched.h"

/* The ranks [lo, hi) whose lists lower_touch writes first. */
typedef struct lower_touch_part {
	ppcc_action *const *acts;
	const int64_t *n;
	int lo, hi;
} lower_touch_part;

static void *lower_touch_run(void *arg)
{
	const lower_touch_part *t = arg;
	for (int r = t->lo; r < t->hi; r++) {
		volatile unsigned char *b = (unsigned char *)t->acts[r];
		size_t len = (size_t)t->n[r] * sizeof *t->acts[r];
		for (size_t at = 0; at < len; at += 4096)
			b[at] = 0;
	}
	return NULL;
}

int ppcc_sched_middle_rank(const int64_t *n, int p)
{
	int64_t all = 0, half = 0;
	for (int r = 0; r < p; r++)
		all += n[r];
	int mid = 0;
	while (mid < p - 1 && half + n[mid] <= all / 2)
		half += n[mid++];
	return mid > 0 ? mid : 1;
}

/* The bytes of lists from which a build takes two threads: probe's,
 * else PPCC_BUILD_TOUCH_BYTES. */
static size_t lower_touch_bytes(const ppcc_probe *probe)
{
	return probe && probe->build_touch_bytes > 0 ? probe->build_touch_bytes
						     : PPCC_BUILD_TOUCH_BYTES;
}

/* Lists of lower_touch_bytes bytes or more in all are written first
 * (a byte a page, of memory the kernel hands out zeroed) on two threads,
 * half the ranks each, when threads > 1: the kernel's clearing of fresh
 * pages, which would otherwise come a page at a time as the order and
 * the lowering reach them, is then shared between two processors.
 * Without a second thread the lists are left to be touched as written. */
static void lower_touch(ppcc_action *const *acts, const int64_t *n, int p,
			int threads, const ppcc_probe *probe)
{
	size_t bytes = 0;
	for (int r = 0; r < p; r++)
		bytes += (size_t)n[r] * sizeof *acts[r];
	if (threads < 2 || p < 2 || bytes < lower_touch_bytes(probe))
		return;
	int mid = ppcc_sched_middle_rank(n, p);
	lower_touch_part hi = {acts, n, mid, p}, lo = {acts, n, 0, mid};
	pthread_t t;
	if (pthread_create(&t, NULL, lower_touch_run, &hi) != 0)
		return;
	lower_touch_run(&lo);
	pthread_join(t, NULL);
}

static void lower_complain(int setting, const char *msg, void *user)
{
	(void)setting;
	(void)msg;
	(*(int *)user)++;
}

/* The receive the compute action c of rank r needs before it (RECV_F
 * of an F, RECV_B of a B or I), written at w when not NULL; returns 0
 * or 1, the number of actions. */
static int lower_recv(ppcc_action *w, const ppcc_action *c, int r,
		      const ppcc_stage_info *st, int S, int pipes)
{
	int s = c->stage, prev = ppcc_stage_prev(S, pipes, s),
	    next = ppcc_stage_next(S, pipes, s);
	if (c->op == PPCC_OP_F && prev >= 0 && st[prev].rank != r) {
		if (w)
			*w = (ppcc_action){PPCC_OP_RECV_F, s, c->mb,
					   st[prev].rank, st[s].recv_bytes};
		return 1;
	}
	if ((c->op == PPCC_OP_B || c->op == PPCC_OP_I) && next >= 0 &&
	    st[next].rank != r) {
		if (w)
			*w = (ppcc_action){PPCC_OP_RECV_B, s, c->mb,
					   st[next].rank, st[s].send_bytes};
		return 1;
	}
	return 0;
}

/* The send that follows the compute action c of rank r (SEND_F after an
 * F, SEND_B after a B or I), as lower_recv. */
static int lower_send(ppcc_action *w, const ppcc_action *c, int r,
		      const ppcc_stage_info *st, int S, int pipes)
{
	int s = c->stage, prev = ppcc_stage_prev(S, pipes, s),
	    next = ppcc_stage_next(S, pipes, s);
	if (c->op == PPCC_OP_F && next >= 0 && st[next].rank != r) {
		if (w)
			*w = (ppcc_action){PPCC_OP_SEND_F, s, c->mb,
					   st[next].rank, st[s].send_bytes};
		return 1;
	}
	if ((c->op == PPCC_OP_B || c->op == PPCC_OP_I) && prev >= 0 &&
	    st[prev].rank != r) {
		if (w)
			*w = (ppcc_action){PPCC_OP_SEND_B, s, c->mb,
					   st[prev].rank, st[s].recv_bytes};
		return 1;
	}
	return 0;
}

/* The actions that the n compute actions c[0..n) of rank r lower to,
 * written at w (when not NULL); returns their number.  n is 1 for a
 * lone compute and 3 for an overlapped pair (the OVERLAP_F_B marker, its
 * F, its B), whose receives all come before the marker and whose sends
 * all follow the B: the pair starts once both halves have their inputs. */
static int lower_one(ppcc_action *w, const ppcc_action *c, int n_c, int r,
		     const ppcc_stage_info *st, int S, int pipes)
{
	int n = 0;
	for (int k = 0; k < n_c; k++)
		n += lower_recv(w ? w + n : NULL, &c[k], r, st, S, pipes);
	for (int k = 0; k < n_c; k++) {
		if (w)
			w[n] = (ppcc_action){c[k].op, c[k].stage, c[k].mb, -1, 0};
		n++;
	}
	for (int k = 0; k < n_c; k++)
		n += lower_send(w ? w + n : NULL, &c[k], r, st, S, pipes);
	return n;
}

/* Whether items a[i..] start a well-formed pair: the marker, the F it
 * names, then a B or I of another stage. */
static int lower_is_pair(const ppcc_action *a, int32_t i, int32_t n)
{
	return i + 2 < n && a[i + 1].op == PPCC_OP_F &&
	       a[i + 1].stage == a[i].stage && a[i + 1].mb == a[i].mb &&
	       (a[i + 2].op == PPCC_OP_B || a[i + 2].op == PPCC_OP_I) &&
	       (a[i + 2].stage != a[i].stage || a[i + 2].mb != a[i].mb);
}

/* The lowering of the ranks [lo, hi): each rank's order, in the tail of
 * its list, checked and lowered in place from the front (sched_build). */
typedef struct lower_part {
	const sched_list *items;
	ppcc_action *const *acts;
	ppcc_rank_schedule *rs;
	const int64_t *n_rank;
	int64_t per_rank;
	const ppcc_stage_info *st;
	int S, m, split_backward, pipes;
	int pairs_ok; /* the kind's order may hold overlapped pairs */
	int lo, hi;
	int err, pairs; /* out: 0 or PPCC_EINTERNAL; any pair lowered */
} lower_part;

static int lower_rank(lower_part *t, int r)
{
	const ppcc_stage_info *st = t->st;
	int S = t->S, m = t->m, sb = t->split_backward;
	int64_t n = 0, from = t->n_rank[r] - t->per_rank;
	const ppcc_action *c = t->items[r].a;
	int32_t len = t->items[r].n;
	/* each item checked, then counted: the lowered actions of items
	 * [0, i) must end at or before item i, the next one read (one F and
	 * one B or I and W of each of the rank's (stage, mb) lower to
	 * exactly n_rank[r]) */
	for (int32_t i = 0; i < len;) {
		int n_c = c[i].op == PPCC_OP_OVERLAP_F_B ? 3 : 1;
		for (int32_t j = i; j < i + n_c && j < len; j++) {
			int pair = c[j].op == PPCC_OP_OVERLAP_F_B;
			if (c[j].stage < 0 || c[j].stage >= S || c[j].mb < 0 ||
			    c[j].mb >= m || st[c[j].stage].rank != r ||
			    !(ppcc_op_is_compute(c[j].op) || pair) ||
			    (pair && (!t->pairs_ok ||
				      !lower_is_pair(c, j, len))) ||
			    (sb == 1 && c[j].op == PPCC_OP_B) ||
			    (!sb && (c[j].op == PPCC_OP_I || c[j].op == PPCC_OP_W)))
				return PPCC_EINTERNAL;
		}
		n += lower_one(NULL, c + i, n_c, r, st, S, t->pipes);
		t->pairs |= n_c == 3;
		i += n_c;
		if (n > from + i)
			return PPCC_EINTERNAL;
	}
	if (n > t->n_rank[r] || (!t->pairs_ok && n != t->n_rank[r]))
		return PPCC_EINTERNAL;
	int32_t w = 0;
	for (int32_t i = 0; i < len;) {
		ppcc_action group[3];
		int n_c = c[i].op == PPCC_OP_OVERLAP_F_B ? 3 : 1;
		memcpy(group, c + i, (size_t)n_c * sizeof *group);
		w += lower_one(t->acts[r] + w, group, n_c, r, st, S, t->pipes);
		i += n_c;
	}
	t->rs[r].rank = r;
	t->rs[r].n_actions = w;
	t->rs[r].actions = t->acts[r];
	return 0;
}

static void *lower_part_run(void *arg)
{
	lower_part *t = arg;
	for (int r = t->lo; r < t->hi && !t->err; r++)
		t->err = lower_rank(t, r);
	return NULL;
}

/* Puts each rank's receives from each peer in the order that peer sends
 * them, so that a transport matching messages by their order on a pair
 * of ranks (NCCL, grouped posting) matches them right.  A receive is
 * only ever moved earlier: when a rank comes to the receive of the k-th
 * message from q before it has received the earlier ones from q, those
 * are pulled in just before it, so every receive still precedes the
 * compute that needs it.  The orders of GPipe, 1F1B and the interleaved
 * kinds are already so; ZB-V's turn of the V is not (rank r receives
 * activations of chunk 0 and gradients of chunk 1 from rank r-1 in
 * another interleaving than it sends them).  A rank whose receives are
 * in order is only read; another is reordered through one buffer of its
 * length and copied back, so the lists stay where they are.  Linear in
 * the number of actions; a schedule this pass leaves deadlocked is
 * caught by the validation every caller runs. */
static int lower_order_receives(ppcc_action *const *acts,
				const ppcc_rank_schedule *rs, int p, int S,
				int m)
{
	size_t n_msg = 2 * (size_t)S * (size_t)m;
	int err = 0;
	int32_t *seq = ppcc_malloc(n_msg * sizeof *seq);
	int32_t *ctr = ppcc_calloc((size_t)p, sizeof *ctr);
	int32_t *off = ppcc_calloc((size_t)p + 1, sizeof *off);
	int32_t *next = ppcc_calloc((size_t)p, sizeof *next);
	int32_t *pos = NULL;
	ppcc_action *w = NULL;
	if (!seq || !ctr || !off || !next) {
		err = PPCC_ENOMEM;
		goto out;
	}
	/* seq[message]: its place among the messages of its pair of ranks */
	for (int q = 0; q < p; q++) {
		const ppcc_action *x = rs[q].actions;
		for (int i = 0; i < rs[q].n_actions; i++)
			if (x[i].op == PPCC_OP_SEND_F || x[i].op == PPCC_OP_SEND_B)
				seq[ppcc_message_key(&x[i], S, m)] = ctr[x[i].peer]++;
		memset(ctr, 0, (size_t)p * sizeof *ctr);
	}
	for (int r = 0; r < p; r++) {
		ppcc_action *x = acts[r];
		int n = rs[r].n_actions, n_recv = 0, sorted = 1;
		/* off[q]..: where rank r's receives from q go, by seq */
		for (int i = 0; i < n; i++)
			if (x[i].op == PPCC_OP_RECV_F || x[i].op == PPCC_OP_RECV_B) {
				int32_t k = seq[ppcc_message_key(&x[i], S, m)];
				sorted &= k == off[x[i].peer + 1];
				off[x[i].peer + 1]++;
				n_recv++;
			}
		if (sorted) {
			memset(off, 0, ((size_t)p + 1) * sizeof *off);
			continue;
		}
		for (int q = 0; q < p; q++)
			off[q + 1] += off[q];
		ppcc_free(pos);
		ppcc_free(w);
		pos = ppcc_malloc((size_t)n_recv * sizeof *pos);
		w = ppcc_malloc((size_t)n * sizeof *w);
		if (!pos || !w) {
			err = PPCC_ENOMEM;
			goto out;
		}
		for (int i = 0; i < n; i++) {
			if (x[i].op != PPCC_OP_RECV_F && x[i].op != PPCC_OP_RECV_B)
				continue;
			int fwd = x[i].op == PPCC_OP_RECV_F;
			int32_t k = seq[2 * ((size_t)(x[i].stage + (fwd ? -1 : 1)) * m +
					     x[i].mb) + !fwd];
			pos[off[x[i].peer] + k] = i;
		}
		int32_t out_n = 0;
		for (int i = 0; i < n; i++) {
			if (x[i].op != PPCC_OP_RECV_F && x[i].op != PPCC_OP_RECV_B) {
				w[out_n++] = x[i];
				continue;
			}
			int q = x[i].peer, fwd = x[i].op == PPCC_OP_RECV_F;
			int32_t k = seq[2 * ((size_t)(x[i].stage + (fwd ? -1 : 1)) * m +
					     x[i].mb) + !fwd];
			for (; next[q] <= k; next[q]++)
				w[out_n++] = x[pos[off[q] + next[q]]];
		}
		if (out_n != n) {
			err = PPCC_EINTERNAL;
			goto out;
		}
		memcpy(x, w, (size_t)n * sizeof *x);
		memset(off, 0, ((size_t)p + 1) * sizeof *off);
		for (int i = 0; i < n; i++)
			if (x[i].op == PPCC_OP_RECV_F || x[i].op == PPCC_OP_RECV_B)
				next[x[i].peer] = 0;
	}
out:
	ppcc_free(seq);
	ppcc_free(ctr);
	ppcc_free(off);
	ppcc_free(next);
	ppcc_free(pos);
	ppcc_free(w);
	return err;
}

/*
 * Contract: returns PPCC_EINPUT, leaving *out untouched, when the
 * arguments do not describe a schedule the kind makes: kind unknown;
 * ranks, chunks or microbatches below 1; a negative group_size; any
 * constraint of ppcc_sched_check; a rank's list longer than INT32_MAX
 * actions.  There is no diagnostics sink here: the caller checks the
 * configuration first (ppcc_config_check) and reports.  PPCC_ENOMEM when
 * an allocation fails; PPCC_EINTERNAL when an order function writes
 * other than the kind's count of actions (ppcc_sched_local_actions), an
 * action of a stage of another rank, a B in a split kind or an I or W in
 * an unsplit one, or a marker not followed by its pair.  Whether each
 * (stage, microbatch) has exactly its F and its backward is the
 * validation's to prove, which every caller runs.
 *
 * stages has ranks*chunks entries.  The schedule keeps a copy in the
 * arena whose stage, rank and chunk fields are set by the kind's
 * placement (ppcc_sched_place); the layers and byte counts are copied as
 * given.  ppcc_schedule_build_unsealed leaves the fingerprint 0, for a
 * caller that changes the schedule before it is sealed (plan.c), and so
 * does ppcc_sched_build_with (sched.h), which passes the order function
 * its parameters (the auto order's costs and caps).
 */
int ppcc_schedule_build(ppcc_schedule *out, ppcc_arena *a, int kind,
			int ranks, int chunks, int microbatches,
			int group_size, const ppcc_stage_info *stages)
{
	int err = ppcc_sched_build_with(out, a, kind, ranks, chunks,
					microbatches, group_size, stages, NULL);
	if (err == 0)
		out->fingerprint = ppcc_schedule_fingerprint(out);
	return err;
}

static int sched_build(ppcc_schedule *out, ppcc_arena *a, int kind,
		       int ranks, int chunks, int microbatches, int group_size,
		       const ppcc_stage_info *stages, const void *arg,
		       int threads, ppcc_probe *probe);

int ppcc_schedule_build_unsealed(ppcc_schedule *out, ppcc_arena *a, int kind,
				 int ranks, int chunks, int microbatches,
				 int group_size, const ppcc_stage_info *stages)
{
	return sched_build(out, a, kind, ranks, chunks, microbatches,
			   group_size, stages, NULL, 1, NULL);
}

int ppcc_schedule_build_unsealed_on(ppcc_schedule *out, ppcc_arena *a,
				    int kind, int ranks, int chunks,
				    int microbatches, int group_size,
				    const ppcc_stage_info *stages, int threads,
				    ppcc_probe *probe)
{
	return sched_build(out, a, kind, ranks, chunks, microbatches,
			   group_size, stages, NULL, threads, probe);
}

int ppcc_sched_build_with(ppcc_schedule *out, ppcc_arena *a, int kind,
			  int ranks, int chunks, int microbatches,
			  int group_size, const ppcc_stage_info *stages,
			  const void *arg)
{
	return sched_build(out, a, kind, ranks, chunks, microbatches,
			   group_size, stages, arg, 1, NULL);
}

static int sched_build(ppcc_schedule *out, ppcc_arena *a, int kind,
		       int ranks, int chunks, int microbatches, int group_size,
		       const ppcc_stage_info *stages, const void *arg,
		       int threads, ppcc_probe *probe)
{
	int p = ranks, v = chunks, m = microbatches, err = 0, fails = 0;
	const ppcc_sched_kind_info *k = ppcc_sched_kind(kind);
	sched_order_fn order = ppcc_sched_order_of(kind);
	sched_list *items = NULL;

	if (!out || !a || !stages || !k || !order || p < 1 || v < 1 ||
	    m < 1 || group_size < 0)
		return PPCC_EINPUT;
	if (ppcc_sched_check(kind, p, v, m, group_size, lower_complain,
			     &fails) > 0)
		return PPCC_EINPUT;
	/* with pipelines (DualPipe), each runs m / pipes microbatches: the
	 * schedule's n_microbatches and the order's m */
	int pipes = ppcc_sched_pipes(kind), m_step = m;
	m /= pipes;
	int64_t n_stages64 = (int64_t)p * v;
	/* computes per (stage, mb): F and B, or F, I and W (DualPipeV: at
	 * most), and a pair's marker where the kind has pairs */
	int per_mb = (k->split_backward ? 3 : 2) + (k->pairs != 0);
	int64_t per_rank = (int64_t)v * m * per_mb;
	if (n_stages64 > INT32_MAX || per_rank > INT32_MAX)
		return PPCC_EINPUT;
	int S = (int)n_stages64;
	int64_t expect = ppcc_sched_local_actions(kind, p, v, m_step,
						  group_size);

	ppcc_stage_info *st = ppcc_arena_alloc(a, (size_t)S, sizeof *st);
	ppcc_rank_schedule *rs = ppcc_arena_alloc(a, (size_t)p, sizeof *rs);
	int32_t *stage_of = ppcc_arena_alloc(a, (size_t)S, sizeof *stage_of);
	int64_t *n_rank = ppcc_arena_alloc(a, (size_t)p, sizeof *n_rank);
	if (!st || !rs || !stage_of || !n_rank)
		return PPCC_ENOMEM;
	memcpy(st, stages, (size_t)S * sizeof *st);
	ppcc_sched_place(st, kind, p, v);
	/* Every order runs one F and one B (or I and W) of each (stage, mb)
	 * of the rank, so a bound on the lowered count is known before the
	 * order is: per microbatch per_mb actions and, in each direction,
	 * one message per boundary that crosses ranks (exact without
	 * pairs). */
	for (int s = 0; s < S; s++) {
		int r = st[s].rank;
		stage_of[r * v + st[s].chunk] = s;
		int prev = ppcc_stage_prev(S, pipes, s),
		    next = ppcc_stage_next(S, pipes, s);
		int cross = (prev >= 0 && st[prev].rank != r) +
			    (next >= 0 && st[next].rank != r);
		n_rank[r] += (int64_t)m * (per_mb + 2 * cross);
	}
	for (int r = 0; r < p; r++)
		if (n_rank[r] > INT32_MAX)
			return PPCC_EINPUT;

	/* Each rank's list is allocated once, at its lowered length: the
	 * order is written into its last per_rank slots and lowered from the
	 * front, which never overtakes what it has still to read (checked
	 * below), so nothing is copied and no list is kept beside it. */
	ppcc_action **acts = ppcc_arena_alloc(a, (size_t)p, sizeof *acts);
	if (!acts || !(items = ppcc_calloc((size_t)p, sizeof *items))) {
		err = PPCC_ENOMEM;
		goto out;
	}
	for (int r = 0; r < p; r++) {
		if (n_rank[r] < per_rank) {
			err = PPCC_EINTERNAL;
			goto out;
		}
		if (!(acts[r] = ppcc_arena_alloc(a, (size_t)n_rank[r], sizeof *acts[r]))) {
			err = PPCC_ENOMEM;
			goto out;
		}
		items[r].cap = (int32_t)per_rank;
		items[r].a = acts[r] + (n_rank[r] - per_rank);
	}
	lower_touch(acts, n_rank, p, threads, probe);
	sched_shape sh = {
		.kind = kind, .p = p, .v = v, .m = m,
		.group = group_size == 0 ? p : group_size, .S = S,
		.stages = st, .stage_of = stage_of, .arg = arg,
	};
	if ((err = order(items, &sh)) < 0)
		goto out;

	int64_t total = 0;
	int pairs = 0;
	for (int r = 0; r < p; r++) {
		if (items[r].n > items[r].cap) {
			err = PPCC_EINTERNAL;
			goto out;
		}
		total += items[r].n;
	}
	if (total != expect) {
		err = PPCC_EINTERNAL;
		goto out;
	}
	lower_part parts[2] = {{
		.items = items, .acts = acts, .rs = rs, .n_rank = n_rank,
		.per_rank = per_rank, .st = st, .S = S, .m = m,
		.split_backward = k->split_backward, .pipes = pipes,
		.pairs_ok = k->pairs != 0, .lo = 0, .hi = p,
	}};
	/* on two threads, the ranks halved by actions, when the lists are
	 * as large as lower_touch's; the lists are the same */
	pthread_t beside;
	int64_t lowered = 0;
	for (int r = 0; r < p; r++)
		lowered += n_rank[r];
	int two = threads > 1 && p > 1 &&
		  (size_t)lowered * sizeof **acts >= lower_touch_bytes(probe);
	if (two) {
		parts[1] = parts[0];
		parts[0].hi = parts[1].lo = ppcc_sched_middle_rank(n_rank, p);
		two = pthread_create(&beside, NULL, lower_part_run, &parts[1]) == 0;
		if (!two)
			parts[0].hi = p;
	}
	lower_part_run(&parts[0]);
	if (two) {
		pthread_join(beside, NULL);
		if (!parts[0].err)
			parts[0].err = parts[1].err;
		if (probe)
			probe->lower_halves++;
	}
	if ((err = parts[0].err) < 0)
		goto out;
	pairs = parts[0].pairs | (two && parts[1].pairs);

	if (!ppcc_sched_receives_in_order(kind, p, group_size) &&
	    (err = lower_order_receives(acts, rs, p, S, m)) < 0)
		goto out;

	memset(out, 0, sizeof *out);
	out->version = pairs ? 2 : 1; /* the oldest format that holds it */
	out->kind = kind;
	out->n_ranks = p;
	out->n_chunks = v;
	out->n_stages = S;
	out->n_microbatches = m;
	out->stages = st;
	out->ranks = rs;
	out->fingerprint = 0;
out:
	ppcc_free(items);
	return err;
}
