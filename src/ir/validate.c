/*
 * validate.c - structural checks and a dry run of any ppcc_schedule.
 *
 * The semantics checked are those include/ppcc/schedule.h states for
 * runtimes; stage s runs on the rank its entry of the stage table names,
 * and every action of stage s belongs on that rank.
 * Contract: a schedule may come from a file written by anyone, so every
 * field is distrusted: the checks never index with a value they have not
 * bounded, and memory stays linear in the number of actions (a header
 * whose stages x microbatches exceeds what its actions could cover is
 * rejected before anything is allocated).  The caller guarantees only
 * that the pointers and counts agree.  Six phases (header, fields,
 * completeness, order, collectives, a dry run that must finish) each
 * report every problem they find, up to max_errors; a deadlock is
 * reported with the action each stuck rank waits at.  Phases 2-6 are
 * linear in the number of actions.
 * ppcc_schedule_validate_seal checks a schedule being made and sets its
 * fingerprint; ppcc_schedule_validate_seal_run takes the caller's run of
 * all ranks in the dry run's place; ppcc_schedule_validate_hashed takes a
 * hash its caller has just computed.
 *
 * Derivation: doc/design/validate.md (every rule of each phase, why the
 * collectives' rules make replicas agree, the quick pass and the seals).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ppcc.h"

typedef struct val_ctx {
	const ppcc_schedule *s;
	ppcc_diag *d;
	ppcc_probe *probe; /* the tests' (util.h), or NULL */
	ppcc_loc loc;
	const ppcc_loc *locp;
	int max_errors;
	int errors; /* reported by this call */
	int fingerprint_bad; /* of them, the fingerprint mismatch */
	int stop;   /* max_errors reached: report nothing more */
	int seal;   /* ppcc_schedule_validate_seal: hash, do not compare */
	int hashed; /* ppcc_schedule_validate_hashed: hash is the contents' */
	uint64_t hash; /* with seal: the fingerprint, once phase 2 is done */
	int p, S, m;
	int pipes;        /* the kind's pipelines (ppcc_sched_pipes) */
	int32_t *rank_of; /* stage -> rank, from the stage table */
	/* pos[key * VAL_POS_OPS + op], key = stage * m + mb: 1 + index of
	 * the first such action on the stage's rank; 0 when none; negated
	 * once a duplicate has been reported. */
	int32_t *pos;
	/* val_quick's table in pos's place: bits[key] has bit op set once
	 * (op, stage, mb) is recorded; NULL outside val_quick */
	uint16_t *bits;
	/* val_quick's pass: an error is not reported but ends the pass
	 * (stop) */
	int quiet;
	/* phase 2's findings for the phases after it: every action phase 4
	 * checks had what it needs before it already (so phase 4 would
	 * report nothing); some action is a REDUCE_GRAD (else phase 5 has
	 * nothing to check) */
	int order_ready;
	int any_collective;
	int any_unshard; /* some action is an UNSHARD_PARAM (ZeRO-3) */
	/* phase 2's finding for phase 3: every send and receive it recorded
	 * carries the bytes the stage table gives its boundary, and the
	 * table gives each boundary one value (stage s's send_bytes is stage
	 * s+1's recv_bytes), so the two ends of any message agree and phase
	 * 3 need not read them */
	int bytes_by_table;
	/* ppcc_schedule_validate_seal_run: the run that stands in for the
	 * dry run (NULL: the dry run) */
	int (*run)(const ppcc_schedule *s, void *user);
	void *run_user;
} val_ctx;

/* The ops the pos table has a slot for: those before the collectives
 * (ppcc/schedule.h numbers them last), which phase 5 checks without it. */
#define VAL_POS_OPS PPCC_OP_REDUCE_GRAD

static void val_error(val_ctx *c, const char *fmt, ...) PPCC_PRINTF(2, 3);

static void val_error(val_ctx *c, const char *fmt, ...)
{
	if (c->quiet) {
		c->stop = 1;
		return;
	}
	if (c->stop)
		return;
	if (c->max_errors > 0 && c->errors >= c->max_errors) {
		ppcc_note(c->d, c->locp, "further errors not reported");
		c->stop = 1;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	ppcc_diag_vreport(c->d, PPCC_SEV_ERROR, c->locp, fmt, ap);
	va_end(ap);
	c->errors++;
}

static const char *const val_plural[PPCC_OP_COUNT] = {
	"forwards", "backwards", "input-gradient backwards (I)",
	"weight-gradient backwards (W)", "SEND_F", "RECV_F", "SEND_B",
	"RECV_B", "overlapped pairs (OVERLAP_F_B)", "REDUCE_GRAD",
	"REDUCE_SCATTER_GRAD", "ALL_GATHER_PARAM", "UNSHARD_PARAM",
};

static const char *const val_singular[PPCC_OP_COUNT] = {
	"forward", "backward", "input-gradient backward (I)",
	"weight-gradient backward (W)", "SEND_F", "RECV_F", "SEND_B",
	"RECV_B", "overlapped pair (OVERLAP_F_B)", "REDUCE_GRAD",
	"REDUCE_SCATTER_GRAD", "ALL_GATHER_PARAM", "UNSHARD_PARAM",
};

static int val_is_comm(int op)
{
	return ppcc_op_is_comm(op);
}

static int val_is_collective(int op)
{
	return ppcc_op_is_collective(op);
}

/* Stage s's neighbour before and after it in its pipeline, or -1. */
static int val_prev(const val_ctx *c, int s)
{
	return ppcc_stage_prev(c->S, c->pipes, s);
}

static int val_next(const val_ctx *c, int s)
{
	return ppcc_stage_next(c->S, c->pipes, s);
}

/* The stage at the other end of a SEND/RECV of stage s (in [0, S)), or
 * -1 when there is none (a SEND_F of a pipeline's last stage, a RECV_F
 * of its first, ...). */
static int64_t val_other_stage(const val_ctx *c, int op, int64_t s)
{
	return ppcc_op_traits_of(op)->other > 0 ? val_next(c, (int)s)
						: val_prev(c, (int)s);
}

/* "RECV_F stage 2 mb 3", "REDUCE_GRAD stage 1 bucket 0" for an action
 * whose op is known to be valid. */
static const char *val_what(char *buf, size_t n, const ppcc_action *a)
{
	snprintf(buf, n, "%s stage %" PRId32 " %s %" PRId32,
		 ppcc_op_name(a->op), a->stage,
		 val_is_collective(a->op) ? "bucket" : "mb", a->mb);
	return buf;
}

/* An error about action i of rank r: "rank r, action i (what): ...". */
static void val_at(val_ctx *c, int r, int64_t i, const ppcc_action *a,
		   const char *fmt, ...) PPCC_PRINTF(5, 6);

static void val_at(val_ctx *c, int r, int64_t i, const ppcc_action *a,
		   const char *fmt, ...)
{
	char what[96], tail[512];
	if (c->stop)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tail, sizeof tail, fmt, ap);
	va_end(ap);
	val_error(c, "rank %d, action %" PRId64 " (%s): %s", r, i,
		  val_what(what, sizeof what, a), tail);
}

/* Whether phase 2 accepted the action well enough for phases 3-5 to
 * index with it (the peer and bytes may still be wrong). */
static int val_usable(const val_ctx *c, int r, const ppcc_action *a)
{
	if (a->op < 0 || a->op >= PPCC_OP_COUNT || val_is_collective(a->op) ||
	    a->stage < 0 || a->stage >= c->S || a->mb < 0 || a->mb >= c->m ||
	    c->rank_of[a->stage] != r)
		return 0;
	if (val_is_comm(a->op)) {
		int64_t o = val_other_stage(c, a->op, a->stage);
		if (o < 0 || c->rank_of[o] == r)
			return 0;
	}
	return 1;
}

static size_t val_slot(const val_ctx *c, int64_t stage, int64_t mb, int op)
{
	return ((size_t)stage * (size_t)c->m + (size_t)mb) * VAL_POS_OPS +
	       (size_t)op;
}

/* Index of the first (op, stage, mb) on the stage's rank, or -1. */
static int64_t val_find(const val_ctx *c, int64_t stage, int64_t mb, int op)
{
	int32_t v = c->pos[val_slot(c, stage, mb, op)];
	if (v < 0)
		v = -v;
	return (int64_t)v - 1;
}

/* ---- 1. header ---- */

/* Returns 0 when the later phases can run, -1 when the header is too
 * broken to index with. */
static int val_header(val_ctx *c)
{
	const ppcc_schedule *s = c->s;
	int fatal = 0;

	if (s->version < 1 || s->version > PPCC_SCHEDULE_VERSION)
		val_error(c, "schedule version %" PRId32 ", expected 1 to %d",
			  s->version, PPCC_SCHEDULE_VERSION);
	if (s->kind < 0 || s->kind >= PPCC_SCHED_COUNT)
		val_error(c, "unknown schedule kind %" PRId32, s->kind);
	if (s->n_ranks < 1) {
		val_error(c, "n_ranks is %" PRId32 "; it must be positive",
			  s->n_ranks);
		fatal = 1;
	}
	if (s->n_chunks < 1) {
		val_error(c, "n_chunks is %" PRId32 "; it must be positive",
			  s->n_chunks);
		fatal = 1;
	}
	if (s->n_microbatches < 1) {
		val_error(c, "n_microbatches is %" PRId32
			  "; it must be positive", s->n_microbatches);
		fatal = 1;
	}
	if (fatal)
		return -1;
	if ((int64_t)s->n_stages != (int64_t)s->n_ranks * s->n_chunks) {
		val_error(c, "n_stages is %" PRId32
			  ", not n_ranks * n_chunks = %" PRId64, s->n_stages,
			  (int64_t)s->n_ranks * s->n_chunks);
		return -1;
	}
	if (!s->stages || !s->ranks) {
		val_error(c, "no %s table", s->stages ? "rank" : "stage");
		return -1;
	}
	c->p = s->n_ranks;
	c->S = s->n_stages;
	c->m = s->n_microbatches;
	c->pipes = ppcc_sched_pipes(s->kind);
	if (c->S % c->pipes != 0) {
		val_error(c, "n_stages is %d; the %s schedule's %d pipelines "
			  "need a multiple of %d", c->S,
			  ppcc_schedule_kind_name(s->kind), c->pipes, c->pipes);
		return -1;
	}

	/* held[r]: stages of rank r so far, in stage order */
	int32_t *held = ppcc_calloc((size_t)c->p, sizeof *held);
	if (!held)
		return -2;
	for (int i = 0; i < c->S && !c->stop; i++) {
		const ppcc_stage_info *st = &s->stages[i];
		if (st->stage != i)
			val_error(c, "stage table entry %d says stage %" PRId32,
				  i, st->stage);
		if (st->rank < 0 || st->rank >= c->p) {
			val_error(c, "stage %d: rank %" PRId32 " out of range "
				  "[0, %d)", i, st->rank, c->p);
			fatal = 1;
			continue;
		}
		int32_t k = held[st->rank]++;
		if (k == s->n_chunks)
			val_error(c, "rank %" PRId32 " holds more than its %"
				  PRId32 " stages (stage %d is one too many)",
				  st->rank, s->n_chunks, i);
		if (st->chunk != k)
			val_error(c, "stage %d: chunk %" PRId32 ", but it is "
				  "stage %" PRId32 " of rank %" PRId32
				  " in stage order", i, st->chunk, k, st->rank);
	}
	for (int r = 0; r < c->p && !c->stop && !fatal; r++)
		if (held[r] < s->n_chunks)
			val_error(c, "rank %d holds %" PRId32 " stages, not %"
				  PRId32, r, held[r], s->n_chunks);
	ppcc_free(held);
	if (fatal)
		return -1;
	int64_t total = 0;
	for (int r = 0; r < c->p; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		if (rs->rank != r)
			val_error(c, "rank table entry %d says rank %" PRId32,
				  r, rs->rank);
		if (rs->n_actions < 0) {
			val_error(c, "rank %d: n_actions is %" PRId32, r,
				  rs->n_actions);
			fatal = 1;
		} else if (rs->n_actions > 0 && !rs->actions) {
			val_error(c, "rank %d: no action list", r);
			fatal = 1;
		} else {
			total += rs->n_actions;
		}
	}
	if (fatal)
		return -1;

	uint64_t h = c->seal ? 0 : c->hashed ? c->hash : ppcc_schedule_fingerprint(s);
	if (!c->seal && h != s->fingerprint) {
		val_error(c, "fingerprint mismatch: the schedule says %016"
			  PRIx64 ", its contents hash to %016" PRIx64,
			  s->fingerprint, h);
		c->fingerprint_bad = !c->stop;
	}

	/* Each (stage, microbatch) needs at least a forward and a backward:
	 * a header asking for more than the actions hold is rejected here,
	 * which also bounds the tables below by the number of actions. */
	int64_t need = (int64_t)c->S * c->m;
	if (need > total / 2) {
		val_error(c, "%" PRId64 " actions cannot hold a forward and a "
			  "backward of each of %d stages x %d microbatches",
			  total, c->S, c->m);
		return -1;
	}
	return 0;
}

/* ---- 2. fields ---- */

/* Checks one action's fields; returns 1 when phases 3-5 may index with
 * it (its peer and bytes may still be wrong). */
static int val_action_fields(val_ctx *c, int r, int i, const ppcc_action *a)
{
	if (a->op < 0 || a->op >= PPCC_OP_COUNT) {
		val_error(c, "rank %d, action %d: unknown op %" PRId32, r, i,
			  a->op);
		return 0;
	}
	if (a->stage < 0 || a->stage >= c->S) {
		val_at(c, r, i, a, "stage out of range [0, %d)", c->S);
		return 0;
	}
	if (val_is_collective(a->op)) {
		/* phase 5 checks the rest; the pos table is not for these */
		c->any_collective = 1;
		c->any_unshard |= a->op == PPCC_OP_UNSHARD_PARAM;
		int need = a->op == PPCC_OP_REDUCE_GRAD ? 3
			: a->op == PPCC_OP_UNSHARD_PARAM ? 5 : 4;
		if (c->s->version < need)
			val_at(c, r, i, a, "%s needs schedule version %d (this "
			       "one says %" PRId32 ")", ppcc_op_name(a->op), need,
			       c->s->version);
		if (a->mb < 0)
			val_at(c, r, i, a, "bucket %" PRId32 " is negative",
			       a->mb);
		else if (c->rank_of[a->stage] != r)
			val_at(c, r, i, a, "stage %" PRId32 " runs on rank %d",
			       a->stage, c->rank_of[a->stage]);
		if (a->peer != -1)
			val_at(c, r, i, a, "peer %" PRId32 " on a collective "
			       "(must be -1: the group is the stage's "
			       "replicas)", a->peer);
		/* a stage without parameters has one empty bucket, 0, so
		 * that every stage of a data-parallel plan has its own
		 * collectives (sched/reduce.c); any other bucket holds some */
		if (a->bytes == 0 && a->mb != 0)
			val_at(c, r, i, a, "0 bytes: a bucket %s at least one %s "
			       "(only bucket 0 of a stage without parameters "
			       "is empty)",
			       ppcc_op_is_reduction(a->op) ? "reduces" : "gathers",
			       ppcc_op_is_reduction(a->op) ? "gradient" : "parameter");
		return 0;
	}
	if (a->mb < 0 || a->mb >= c->m) {
		val_at(c, r, i, a, "microbatch out of range [0, %d)", c->m);
		return 0;
	}
	if (c->rank_of[a->stage] != r) {
		val_at(c, r, i, a, "stage %" PRId32 " runs on rank %d",
		       a->stage, c->rank_of[a->stage]);
		return 0;
	}
	if (!val_is_comm(a->op)) {
		if (a->peer != -1)
			val_at(c, r, i, a, "peer %" PRId32 " on a compute "
			       "action (must be -1)", a->peer);
		if (a->bytes != 0)
			val_at(c, r, i, a, "%" PRIu64 " bytes on a compute "
			       "action (must be 0)", a->bytes);
		return 1;
	}
	int send = a->op == PPCC_OP_SEND_F || a->op == PPCC_OP_SEND_B;
	int64_t o = val_other_stage(c, a->op, a->stage);
	if (o < 0) {
		val_at(c, r, i, a, "stage %" PRId32 " has no neighbour to %s",
		       a->stage, send ? "send to" : "receive from");
		return 0;
	}
	int q = c->rank_of[o];
	if (q == r) {
		val_at(c, r, i, a, "stages %" PRId32 " and %" PRId64 " both "
		       "run on rank %d; there is nothing to communicate",
		       a->stage, o, r);
		return 0;
	}
	if (c->bytes_by_table) {
		const ppcc_stage_info *st = &c->s->stages[a->stage];
		uint64_t want = a->op == PPCC_OP_SEND_F || a->op == PPCC_OP_RECV_B
			? st->send_bytes : st->recv_bytes;
		if (a->bytes != want)
			c->bytes_by_table = 0;
	}
	if (a->peer == r)
		val_at(c, r, i, a, "peer is the rank itself; stage %" PRId64
		       " runs on rank %d", o, q);
	else if (a->peer != q)
		val_at(c, r, i, a, "peer %" PRId32 ", but stage %" PRId64
		       " runs on rank %d", a->peer, o, q);
	return 1;
}

/* Whether (op, stage, mb) has been recorded (in range). */
static int val_recorded(const val_ctx *c, int64_t stage, int64_t mb, int op)
{
	if (c->bits)
		return c->bits[(size_t)stage * (size_t)c->m + (size_t)mb] >> op & 1;
	return c->pos[val_slot(c, stage, mb, op)] != 0;
}

/* Whether everything phase 4 requires before the usable action a of rank
 * r is recorded already, in phase 2's pass, which records each rank's
 * actions in list order (and the actions a depends on are of its rank):
 * then val_action_order finds each at a smaller index and reports nothing
 * about a.  0 for an overlapped pair's marker, whose checks are
 * val_pair's. */
static int val_order_ready(const val_ctx *c, int r, const ppcc_action *a)
{
	int s = a->stage, mb = a->mb, prev = val_prev(c, s),
	    next = val_next(c, s);
	switch (a->op) {
	case PPCC_OP_F:
		if (prev < 0)
			return 1;
		return c->rank_of[prev] == r
			? val_recorded(c, prev, mb, PPCC_OP_F)
			: val_recorded(c, s, mb, PPCC_OP_RECV_F);
	case PPCC_OP_B:
	case PPCC_OP_I:
		if (!val_recorded(c, s, mb, PPCC_OP_F))
			return 0;
		if (next < 0)
			return 1;
		if (c->rank_of[next] == r)
			return val_recorded(c, next, mb, PPCC_OP_B) ||
			       val_recorded(c, next, mb, PPCC_OP_I);
		return val_recorded(c, s, mb, PPCC_OP_RECV_B);
	case PPCC_OP_W:
		return val_recorded(c, s, mb, PPCC_OP_I);
	case PPCC_OP_SEND_F:
		return val_recorded(c, s, mb, PPCC_OP_F);
	case PPCC_OP_SEND_B:
		return val_recorded(c, s, mb, PPCC_OP_B) ||
		       val_recorded(c, s, mb, PPCC_OP_I);
	case PPCC_OP_OVERLAP_F_B:
		return 0;
	default:
		return 1;
	}
}

/* Records where each (op, stage, mb) is, reporting duplicates, and notes
 * whether phase 4 has anything to find (val_order_ready).  With
 * seal, hashes the actions as it reads them (the fingerprint's order is
 * this loop's), so the hash is of every action once the loop ran to its
 * end, which it does when nothing was reported. */
static void val_fields(val_ctx *c)
{
	uint64_t h = c->seal ? ppcc_fingerprint_head(c->s) : 0;
	for (int r = 0; r < c->p && !c->stop; r++) {
		const ppcc_rank_schedule *rs = &c->s->ranks[r];
		if (c->seal)
			h = ppcc_fingerprint_mix(h, ppcc_fingerprint_pair(rs->rank,
									  rs->n_actions));
		for (int i = 0; i < rs->n_actions && !c->stop; i++) {
			const ppcc_action *a = &rs->actions[i];
			if (c->seal)
				h = ppcc_fingerprint_action(h, a);
			if (!val_action_fields(c, r, i, a))
				continue;
			if (c->order_ready && !val_order_ready(c, r, a))
				c->order_ready = 0;
			int32_t *slot = &c->pos[val_slot(c, a->stage, a->mb,
							 a->op)];
			if (*slot == 0) {
				*slot = i + 1;
			} else if (*slot > 0) {
				val_error(c, "stage %" PRId32 " microbatch %"
					  PRId32 ": 2 %s (rank %d, actions %"
					  PRId32 " and %d)", a->stage, a->mb,
					  val_plural[a->op], r, *slot - 1, i);
				*slot = -*slot;
			} else {
				val_error(c, "stage %" PRId32 " microbatch %"
					  PRId32 ": another %s (rank %d, "
					  "action %d)", a->stage, a->mb,
					  val_singular[a->op], r, i);
			}
		}
	}
	c->hash = h;
}

/* ---- 3. completeness and matching ---- */

/* The message from stage `from` (op send) to stage `to` (op recv), on
 * different ranks.  `user` is the index of the compute on `to` that
 * needs it (-1 if none), of op user_op. */
static void val_message(val_ctx *c, int from, int to, int mb, int send,
			int recv, int64_t user, int user_op)
{
	int rf = c->rank_of[from], rt = c->rank_of[to];
	int64_t si = val_find(c, from, mb, send);
	int64_t ri = val_find(c, to, mb, recv);

	if (si >= 0 && ri >= 0 && c->bytes_by_table)
		return; /* matched, and its ends' bytes agree (phase 2) */
	const ppcc_action *sa = si >= 0 ? &c->s->ranks[rf].actions[si] : NULL;
	const ppcc_action *ra = ri >= 0 ? &c->s->ranks[rt].actions[ri] : NULL;
	if (sa && ra) {
		if (sa->bytes != ra->bytes)
			val_at(c, rt, ri, ra, "%" PRIu64 " bytes, but the "
			       "matching %s (rank %d, action %" PRId64
			       ") sends %" PRIu64, ra->bytes,
			       ppcc_op_name(send), rf, si, sa->bytes);
	} else if (sa) {
		val_at(c, rf, si, sa, "no matching %s on rank %d",
		       ppcc_op_name(recv), rt);
	} else if (ra) {
		val_at(c, rt, ri, ra, "no matching %s from rank %d",
		       ppcc_op_name(send), rf);
	} else if (user >= 0) {
		val_at(c, rt, user, &c->s->ranks[rt].actions[user],
		       "%s from stage %d on rank %d is never received "
		       "(no %s, no %s)",
		       user_op == PPCC_OP_F ? "its input"
					    : "its output gradient",
		       from, rf, ppcc_op_name(recv), ppcc_op_name(send));
	}
}

#if defined(__GNUC__)
#define VAL_PREFETCH(addr) __builtin_prefetch(addr)
#else
#define VAL_PREFETCH(addr) ((void)(addr))
#endif

static void val_prefetch_action(const val_ctx *c, int64_t stage, int64_t mb,
				int op)
{
	int64_t i = val_find(c, stage, mb, op);
	if (i >= 0)
		VAL_PREFETCH(&c->s->ranks[c->rank_of[stage]].actions[i]);
}

/* The sends and receives val_message reads for (s, mb), fetched ahead: a
 * stage's microbatches lie spread over its rank's list (between the other
 * chunks' actions), so each would be a cache miss. */
static void val_prefetch_messages(const val_ctx *c, int s, int mb)
{
	if (c->p == 1 || mb >= c->m || c->bytes_by_table)
		return;
	int prev = val_prev(c, s), next = val_next(c, s);
	if (prev >= 0) {
		val_prefetch_action(c, prev, mb, PPCC_OP_SEND_F);
		val_prefetch_action(c, s, mb, PPCC_OP_RECV_F);
	}
	if (next >= 0) {
		val_prefetch_action(c, next, mb, PPCC_OP_SEND_B);
		val_prefetch_action(c, s, mb, PPCC_OP_RECV_B);
	}
}

#define VAL_AHEAD 8 /* microbatches */

static void val_complete(val_ctx *c)
{
	for (int s = 0; s < c->S && !c->stop; s++) {
		int r = c->rank_of[s], prev = val_prev(c, s),
		    next = val_next(c, s);
		for (int mb = 0; mb < VAL_AHEAD; mb++)
			val_prefetch_messages(c, s, mb);
		for (int mb = 0; mb < c->m && !c->stop; mb++) {
			val_prefetch_messages(c, s, mb + VAL_AHEAD);
			int64_t f = val_find(c, s, mb, PPCC_OP_F);
			int64_t b = val_find(c, s, mb, PPCC_OP_B);
			int64_t in = val_find(c, s, mb, PPCC_OP_I);
			int64_t wt = val_find(c, s, mb, PPCC_OP_W);
			if (f < 0)
				val_error(c, "stage %d microbatch %d: no "
					  "forward (rank %d)", s, mb, r);
			if (b >= 0 && (in >= 0 || wt >= 0))
				val_error(c, "stage %d microbatch %d: both B "
					  "(rank %d, action %" PRId64
					  ") and a split backward I/W",
					  s, mb, r, b);
			else if (b < 0 && in < 0 && wt < 0)
				val_error(c, "stage %d microbatch %d: no "
					  "backward (rank %d)", s, mb, r);
			else if (b < 0 && in >= 0 && wt < 0)
				val_error(c, "stage %d microbatch %d: I "
					  "(rank %d, action %" PRId64
					  ") without W", s, mb, r, in);
			else if (b < 0 && in < 0 && wt >= 0)
				val_error(c, "stage %d microbatch %d: W "
					  "(rank %d, action %" PRId64
					  ") without I", s, mb, r, wt);
			if (prev >= 0 && c->rank_of[prev] != r)
				val_message(c, prev, s, mb, PPCC_OP_SEND_F,
					    PPCC_OP_RECV_F, f, PPCC_OP_F);
			if (next >= 0 && c->rank_of[next] != r)
				val_message(c, next, s, mb, PPCC_OP_SEND_B,
					    PPCC_OP_RECV_B, b >= 0 ? b : in,
					    b >= 0 ? PPCC_OP_B : PPCC_OP_I);
		}
	}
}

/* ---- 4. order on each rank ---- */

static int64_t val_min_present(int64_t a, int64_t b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

/* An overlapped pair: the marker at i, then at once its F (the marker's
 * stage and microbatch) and a B or I of this rank, of another stage or
 * microbatch than the F's.  The halves' own dependencies are checked as
 * any F's and B's are. */
static void val_pair(val_ctx *c, int r, int i, const ppcc_action *a)
{
	const ppcc_rank_schedule *rs = &c->s->ranks[r];
	char what[96];
	if (c->s->version < 2) {
		val_at(c, r, i, a, "overlapped pairs need schedule version 2; "
		       "this one is version %" PRId32, c->s->version);
		return;
	}
	const ppcc_action *f = i + 1 < rs->n_actions ? &rs->actions[i + 1] : NULL;
	if (!f || f->op != PPCC_OP_F || f->stage != a->stage ||
	    f->mb != a->mb) {
		val_at(c, r, i, a, "the next action is %s, not the pair's "
		       "forward F stage %" PRId32 " mb %" PRId32,
		       f ? val_what(what, sizeof what, f) : "none",
		       a->stage, a->mb);
		return;
	}
	const ppcc_action *b = i + 2 < rs->n_actions ? &rs->actions[i + 2] : NULL;
	if (!b || (b->op != PPCC_OP_B && b->op != PPCC_OP_I)) {
		val_at(c, r, i, a, "the action after its forward is %s, not "
		       "the pair's backward (B or I)",
		       b ? val_what(what, sizeof what, b) : "none");
		return;
	}
	if (b->stage < 0 || b->stage >= c->S)
		return; /* reported by phase 2 */
	if (c->rank_of[b->stage] != r)
		val_at(c, r, i, a, "the pair's backward (action %d, stage %"
		       PRId32 ") runs on rank %d: both halves of a pair run "
		       "on one rank", i + 2, b->stage,
		       c->rank_of[b->stage]);
	else if (b->stage == a->stage && b->mb == a->mb)
		val_at(c, r, i, a, "the pair's forward and backward are of "
		       "the same stage %" PRId32 " and microbatch %" PRId32
		       ": a backward needs its forward done", a->stage, a->mb);
}

/* A dependency that is missing was reported by phase 3; here only one
 * that comes later in the rank's list than action i, which needs it. */
static void val_action_order(val_ctx *c, int r, int i, const ppcc_action *a)
{
	int s = a->stage, mb = a->mb, prev = val_prev(c, s),
	    next = val_next(c, s);
	int64_t j;
	switch (a->op) {
	case PPCC_OP_F:
		if (prev < 0)
			break;
		if (c->rank_of[prev] == r) {
			j = val_find(c, prev, mb, PPCC_OP_F);
			if (j > i)
				val_at(c, r, i, a, "the forward of stage %d "
				       "comes later (action %" PRId64 ")",
				       prev, j);
		} else {
			j = val_find(c, s, mb, PPCC_OP_RECV_F);
			if (j > i)
				val_at(c, r, i, a, "its input is received "
				       "later (RECV_F at action %" PRId64 ")",
				       j);
		}
		break;
	case PPCC_OP_B:
	case PPCC_OP_I:
		j = val_find(c, s, mb, PPCC_OP_F);
		if (j > i)
			val_at(c, r, i, a, "its forward has not run on this "
			       "rank (F at action %" PRId64 ")", j);
		if (next < 0)
			break;
		if (c->rank_of[next] == r) {
			j = val_min_present(val_find(c, next, mb, PPCC_OP_B),
					    val_find(c, next, mb, PPCC_OP_I));
			if (j > i)
				val_at(c, r, i, a, "the backward of stage %d "
				       "comes later (action %" PRId64 ")",
				       next, j);
		} else {
			j = val_find(c, s, mb, PPCC_OP_RECV_B);
			if (j > i)
				val_at(c, r, i, a, "its output gradient is "
				       "received later (RECV_B at action %"
				       PRId64 ")", j);
		}
		break;
	case PPCC_OP_W:
		j = val_find(c, s, mb, PPCC_OP_I);
		if (j > i)
			val_at(c, r, i, a, "its I has not run (I at action %"
			       PRId64 ")", j);
		break;
	case PPCC_OP_SEND_F:
		j = val_find(c, s, mb, PPCC_OP_F);
		if (j > i)
			val_at(c, r, i, a, "sends before its forward has run "
			       "(F at action %" PRId64 ")", j);
		break;
	case PPCC_OP_SEND_B:
		j = val_min_present(val_find(c, s, mb, PPCC_OP_B),
				    val_find(c, s, mb, PPCC_OP_I));
		if (j > i)
			val_at(c, r, i, a, "sends before its backward has "
			       "run (action %" PRId64 ")", j);
		break;
	case PPCC_OP_OVERLAP_F_B:
		val_pair(c, r, i, a);
		break;
	default:
		break;
	}
}

static void val_order(val_ctx *c)
{
	for (int r = 0; r < c->p && !c->stop; r++) {
		const ppcc_rank_schedule *rs = &c->s->ranks[r];
		for (int i = 0; i < rs->n_actions && !c->stop; i++)
			if (val_usable(c, r, &rs->actions[i]))
				val_action_order(c, r, i, &rs->actions[i]);
	}
}

/* ---- 5. collectives ---- */

/* The last backward of stage s that completes its gradients: the
 * largest index of its B or W over the microbatches, or -1. */
static int64_t val_last_backward(const val_ctx *c, int s)
{
	int64_t last = -1;
	for (int mb = 0; mb < c->m; mb++) {
		int64_t b = val_find(c, s, mb, PPCC_OP_B);
		int64_t w = val_find(c, s, mb, PPCC_OP_W);
		if (b > last)
			last = b;
		if (w > last)
			last = w;
	}
	return last;
}

/* ZeRO-3: the UNSHARD_PARAM groups of one rank waiting for their
 * computes (at most two, and the one being listed). */
typedef struct val_unshard {
	int n;           /* groups waiting, the last maybe still open */
	int stage[3];
	int32_t size[3]; /* buckets listed so far */
} val_unshard;

/* A ZeRO-3 rank's action a at i, as its groups see it: opens, extends
 * or is served by them.  gsize[s]: the buckets of stage s's groups (0
 * until its first is served). */
static void val_unshard_step(val_ctx *c, int r, int i, const ppcc_action *a,
			     val_unshard *q, int32_t *gsize)
{
	int s = a->stage;
	if (a->op == PPCC_OP_UNSHARD_PARAM) {
		if (a->mb == 0) {
			if (q->n >= 2) {
				val_at(c, r, i, a, "opens a third group while "
				       "two wait for their computes: a rank "
				       "holds two gathered buffers at most");
				return;
			}
			q->stage[q->n] = s;
			q->size[q->n++] = 1;
			return;
		}
		if (q->n == 0 || q->stage[q->n - 1] != s ||
		    q->size[q->n - 1] != a->mb)
			val_at(c, r, i, a, "expected %s: a group gathers its "
			       "stage's buckets 0, 1, ... one after another",
			       q->n == 0 ? "bucket 0 first"
			       : q->stage[q->n - 1] != s ? "the open group's stage"
			       : "the next bucket");
		else
			q->size[q->n - 1]++;
		return;
	}
	if (a->op != PPCC_OP_F && a->op != PPCC_OP_B && a->op != PPCC_OP_I)
		return;
	if (q->n == 0 || q->stage[0] != s) {
		val_at(c, r, i, a, "has no UNSHARD_PARAM group of its stage "
		       "before it (%s): under ZeRO-3 each F, B and I waits "
		       "for the group listed for it, in order",
		       q->n == 0 ? "none waits" : "the next waiting is another "
		       "stage's");
		return;
	}
	if (gsize[s] == 0)
		gsize[s] = q->size[0];
	else if (q->size[0] != gsize[s])
		val_at(c, r, i, a, "its group gathers %" PRId32 " buckets, "
		       "stage %d's first %" PRId32 ": every compute gathers "
		       "the whole stage", q->size[0], s, gsize[s]);
	for (int k = 1; k < q->n; k++) {
		q->stage[k - 1] = q->stage[k];
		q->size[k - 1] = q->size[k];
	}
	q->n--;
}

/* The bucket after b, for the counters of val_collectives: a hostile
 * list's INT32_MAX stays there (it is reported missing buckets before
 * it) rather than overflowing. */
static int32_t val_after(int32_t b)
{
	return b < INT32_MAX ? b + 1 : INT32_MAX;
}

static int val_collectives(val_ctx *c)
{
	/* next[s]: the bucket stage s's next reduction must reduce;
	 * gnext[s]: the bucket its next ALL_GATHER_PARAM must gather */
	int32_t *next = ppcc_calloc((size_t)c->S, sizeof *next);
	int32_t *gnext = ppcc_calloc((size_t)c->S, sizeof *gnext);
	int64_t *last = ppcc_malloc((size_t)c->S * sizeof *last);
	/* ZeRO-3 (any_unshard): per stage, its backwards so far, the
	 * reduce-scatter rounds begun, the buckets of its first round
	 * (nb) and of its groups (gsize) */
	int z3 = c->any_unshard;
	int32_t *backs = z3 ? ppcc_calloc((size_t)c->S, sizeof *backs) : NULL;
	int32_t *rounds = z3 ? ppcc_calloc((size_t)c->S, sizeof *rounds) : NULL;
	int32_t *nb = z3 ? ppcc_calloc((size_t)c->S, sizeof *nb) : NULL;
	int32_t *gsize = z3 ? ppcc_calloc((size_t)c->S, sizeof *gsize) : NULL;
	int any = -1, red_op = -1, any_gather = -1, any_unshard = -1;
	if (!next || !gnext || !last || (z3 && (!backs || !rounds || !nb || !gsize))) {
		ppcc_free(next);
		ppcc_free(gnext);
		ppcc_free(last);
		ppcc_free(backs);
		ppcc_free(rounds);
		ppcc_free(nb);
		ppcc_free(gsize);
		return PPCC_ENOMEM;
	}
	for (int s = 0; s < c->S; s++)
		last[s] = -2; /* not computed yet */
	for (int r = 0; r < c->p && !c->stop; r++) {
		const ppcc_rank_schedule *rs = &c->s->ranks[r];
		int64_t other = -1; /* the first action that is not a gather */
		val_unshard q = {0};
		for (int i = 0; i < rs->n_actions && !c->stop; i++) {
			const ppcc_action *a = &rs->actions[i];
			if (a->op != PPCC_OP_ALL_GATHER_PARAM && other < 0)
				other = i;
			if (a->stage < 0 || a->stage >= c->S || a->mb < 0 ||
			    c->rank_of[a->stage] != r)
				continue;
			if (z3 && (a->op == PPCC_OP_B || a->op == PPCC_OP_W))
				backs[a->stage]++;
			if (z3)
				val_unshard_step(c, r, i, a, &q, gsize);
			if (!val_is_collective(a->op))
				continue;
			int s = a->stage;
			if (a->op == PPCC_OP_UNSHARD_PARAM) {
				if (any_unshard < 0)
					any_unshard = s;
				continue;
			}
			if (a->op == PPCC_OP_ALL_GATHER_PARAM) {
				if (any_gather < 0)
					any_gather = s;
				if (other >= 0)
					val_at(c, r, i, a, "comes after action %"
					       PRId64 ": a rank's gathers open its "
					       "list, so that every parameter is "
					       "gathered before its first use",
					       other);
				if (a->mb == gnext[s]) {
					gnext[s] = val_after(gnext[s]);
				} else {
					val_at(c, r, i, a, "expected ALL_GATHER_PARAM "
					       "stage %d bucket %" PRId32 ": each "
					       "bucket is gathered once, in order "
					       "0, 1, ..., the order every replica "
					       "enters them", s, gnext[s]);
					if (a->mb > gnext[s])
						gnext[s] = val_after(a->mb);
				}
				continue;
			}
			if (any < 0)
				any = s;
			if (red_op < 0)
				red_op = a->op;
			else if (a->op != red_op)
				val_at(c, r, i, a, "the schedule reduces with %s "
				       "elsewhere: each bucket is reduced once, "
				       "all of them one way", ppcc_op_name(red_op));
			if (z3) {
				/* a round per backward: bucket 0 begins the
				 * next, once the last is whole and its
				 * backward has run */
				if (a->mb == 0 && next[s] > 0) {
					if (nb[s] == 0)
						nb[s] = next[s];
					else if (next[s] != nb[s])
						val_at(c, r, i, a, "round %" PRId32
						       " of stage %d's reduce-scatters "
						       "has %" PRId32 " buckets, its "
						       "first %" PRId32, rounds[s], s,
						       next[s], nb[s]);
					next[s] = 0;
				}
				if (a->mb == 0) {
					rounds[s]++;
					if (rounds[s] > backs[s])
						val_at(c, r, i, a, "begins "
						       "reduce-scatter round %" PRId32
						       " of stage %d after %" PRId32
						       " backwards: under ZeRO-3 "
						       "each backward's gradients "
						       "are reduced after it", rounds[s],
						       s, backs[s]);
				}
			} else {
				if (last[s] == -2)
					last[s] = val_last_backward(c, s);
				if (last[s] > i)
					val_at(c, r, i, a, "reduces the gradients "
					       "before the stage's last backward "
					       "(action %" PRId64 ") has completed "
					       "them", last[s]);
			}
			if (a->mb == next[s]) {
				next[s] = val_after(next[s]);
			} else if (a->mb < next[s]) {
				val_at(c, r, i, a, "comes after %s "
				       "stage %d bucket %" PRId32 ": each bucket "
				       "is reduced once, in order 0, 1, ..., "
				       "the order every replica enters them",
				       ppcc_op_name(a->op), s, next[s] - 1);
			} else {
				val_at(c, r, i, a, "comes before %s "
				       "stage %d bucket %" PRId32 " (missing "
				       "or later in the list): the stage's "
				       "buckets are reduced in order 0, 1, "
				       "..., the order every replica enters "
				       "them", ppcc_op_name(a->op), s, next[s]);
				next[s] = val_after(a->mb);
			}
		}
		for (int k = 0; k < q.n && !c->stop; k++)
			val_error(c, "rank %d: an UNSHARD_PARAM group of stage "
				  "%d serves no compute (left at the end of the "
				  "list)", r, q.stage[k]);
	}
	for (int s = 0; z3 && s < c->S && !c->stop; s++) {
		if (c->rank_of[s] < 0)
			continue;
		int32_t per = nb[s] > 0 ? nb[s] : next[s];
		if (rounds[s] > 0 && rounds[s] != backs[s])
			val_error(c, "stage %d (rank %d): %" PRId32 " rounds of "
				  "REDUCE_SCATTER_GRAD for %" PRId32 " backwards: "
				  "under ZeRO-3 each backward reduces its own",
				  s, c->rank_of[s], rounds[s], backs[s]);
		else if (rounds[s] > 0 && nb[s] > 0 && next[s] != nb[s])
			val_error(c, "stage %d (rank %d): the last round of "
				  "REDUCE_SCATTER_GRAD has %" PRId32 " buckets, "
				  "its first %" PRId32, s, c->rank_of[s], next[s],
				  nb[s]);
		else if (gsize[s] > 0 && gsize[s] != per)
			val_error(c, "stage %d (rank %d): its UNSHARD_PARAM groups "
				  "gather %" PRId32 " buckets, its reduce-scatters "
				  "%" PRId32 ": each gathers the buckets the "
				  "replicas' shards are of", s, c->rank_of[s],
				  gsize[s], per);
		/* the round check above reads next[] as the last round's */
		if (nb[s] > 0)
			next[s] = nb[s];
	}
	for (int s = 0; any >= 0 && s < c->S && !c->stop; s++)
		if (next[s] == 0)
			val_error(c, "stage %d (rank %d): no %s, but "
				  "stage %d reduces its gradients: every stage "
				  "of a data-parallel plan reduces its own",
				  s, c->rank_of[s], ppcc_op_name(red_op), any);
	if (any_unshard >= 0 && any_gather >= 0 && !c->stop)
		val_error(c, "stage %d: UNSHARD_PARAM and ALL_GATHER_PARAM in "
			  "one schedule: ZeRO-3 gathers for every compute, ZeRO 1 "
			  "and 2 once a step", any_unshard);
	else if (any_unshard >= 0 && red_op != PPCC_OP_REDUCE_SCATTER_GRAD &&
		 !c->stop)
		val_error(c, "stage %d: UNSHARD_PARAM without "
			  "REDUCE_SCATTER_GRAD: only a reduce-scatter leaves "
			  "the replicas shards to gather", any_unshard);
	if (any_gather >= 0 && red_op != PPCC_OP_REDUCE_SCATTER_GRAD && !c->stop)
		val_error(c, "stage %d: ALL_GATHER_PARAM without "
			  "REDUCE_SCATTER_GRAD: only a reduce-scatter leaves "
			  "the replicas shards to gather", any_gather);
	else
		for (int s = 0; any_gather >= 0 && s < c->S && !c->stop; s++)
			if (gnext[s] != next[s])
				val_error(c, "stage %d (rank %d): %" PRId32
					  " ALL_GATHER_PARAM for %" PRId32
					  " reduce-scattered buckets: each "
					  "bucket is gathered once (and so, "
					  "when one stage gathers, every stage)",
					  s, c->rank_of[s], gnext[s], next[s]);
	ppcc_free(next);
	ppcc_free(gnext);
	ppcc_free(last);
	ppcc_free(backs);
	ppcc_free(rounds);
	ppcc_free(nb);
	ppcc_free(gsize);
	return 0;
}

/* ---- 6. dry run ---- */

/* Each rank runs until it finishes or reaches a RECV whose message has
 * not been sent; it then records the message it waits for
 * (ppcc_message_key), and the rank that sends it puts it back on the
 * ready stack. */
static int val_dry_run(val_ctx *c)
{
	const ppcc_schedule *s = c->s;
	int p = c->p, err = 0;
	int64_t m = c->m;
	size_t keys = (size_t)c->S * (size_t)c->m;
	uint8_t *sent = ppcc_calloc(keys * 2, 1);
	int32_t *pc = ppcc_calloc((size_t)p, sizeof *pc);
	int64_t *wait = ppcc_malloc((size_t)p * sizeof *wait);
	int32_t *ready = ppcc_malloc((size_t)p * sizeof *ready);
	if (!sent || !pc || !wait || !ready) {
		err = PPCC_ENOMEM;
		goto out;
	}
	int n_ready = 0;
	for (int r = p - 1; r >= 0; r--) {
		ready[n_ready++] = r;
		wait[r] = -1;
	}
	while (n_ready > 0) {
		int r = ready[--n_ready];
		const ppcc_action *acts = s->ranks[r].actions;
		int32_t i = pc[r], n = s->ranks[r].n_actions;
		for (; i < n; i++) {
			const ppcc_action *a = &acts[i];
			if (i + 12 < n)
				VAL_PREFETCH(a + 12);
			int64_t msg;
			switch (a->op) {
			case PPCC_OP_RECV_F:
			case PPCC_OP_RECV_B:
				msg = ppcc_message_key(a, c->S, m);
				if (!sent[msg]) {
					wait[r] = msg;
					goto stop;
				}
				break;
			case PPCC_OP_SEND_F:
			case PPCC_OP_SEND_B: {
				int fwd = a->op == PPCC_OP_SEND_F;
				msg = ppcc_message_key(a, c->S, m);
				sent[msg] = 1;
				int q = c->rank_of[fwd ? val_next(c, a->stage)
						       : val_prev(c, a->stage)];
				if (wait[q] == msg) {
					wait[q] = -1;
					ready[n_ready++] = q;
				}
				break;
			}
			default:
				break;
			}
		}
	stop:
		pc[r] = i;
	}

	char msg[768];
	size_t len = 0;
	int stuck = 0;
	for (int r = 0; r < p; r++) {
		if (pc[r] == s->ranks[r].n_actions)
			continue;
		if (stuck < 8) {
			char w[96];
			const ppcc_action *a = &s->ranks[r].actions[pc[r]];
			int k = snprintf(msg + len, sizeof msg - len,
					 "%srank %d waits at action %" PRId32
					 " (%s)", stuck ? ", " : "", r, pc[r],
					 val_what(w, sizeof w, a));
			if (k > 0)
				len += (size_t)k < sizeof msg - len
					       ? (size_t)k
					       : sizeof msg - len - 1;
		}
		stuck++;
	}
	if (stuck > 8)
		snprintf(msg + len, sizeof msg - len, ", and %d more ranks",
			 stuck - 8);
	if (stuck)
		val_error(c, "dry run: deadlock; %s", msg);
out:
	ppcc_free(sent);
	ppcc_free(pc);
	ppcc_free(wait);
	ppcc_free(ready);
	return err;
}

/* Phases 2 and 3 for a schedule in which they find nothing, on a table
 * of 2 bytes per (stage, microbatch), not the 36 of the positions: one
 * pass over the lists as val_fields makes (hashing with seal), reporting
 * nothing, each (op, stage, mb) recorded as a bit, then val_complete's
 * checks on the bits, where a valid schedule has every forward, one
 * backward (B, or I and W) and both ends of every message between
 * ranks.  Returns 1 when phases 2 and 3 would report nothing and phase 4
 * need not run (order_ready) with no collectives (phase 5 reads the
 * positions): then c->hash is val_fields' hash.  Otherwise 0, with c as
 * it was, for the phases to run on the positions and report what they
 * find (a schedule with any problem is read twice, the quick pass having
 * stopped at it).  The bits decide exactly what the positions would:
 * val_fields reports a duplicate where a bit is set already, and
 * val_complete nothing where every bit it needs is set (bytes_by_table
 * saying the ends of every message agree) and something where one is
 * missing, an F always being needed and each message's two ends either
 * both present or (with the user's compute missing too) an error. */
static int val_quick(val_ctx *c)
{
	size_t keys = (size_t)c->S * (size_t)c->m;
	int bytes_by_table = c->bytes_by_table;
	if (!(c->bits = ppcc_calloc(keys, sizeof *c->bits)))
		return 0; /* the positions' pass fails alike */
	c->quiet = 1;
	uint64_t h = c->seal ? ppcc_fingerprint_head(c->s) : 0;
	for (int r = 0; r < c->p && !c->stop; r++) {
		const ppcc_rank_schedule *rs = &c->s->ranks[r];
		if (c->seal)
			h = ppcc_fingerprint_mix(h, ppcc_fingerprint_pair(rs->rank,
									  rs->n_actions));
		for (int i = 0; i < rs->n_actions && !c->stop; i++) {
			const ppcc_action *a = &rs->actions[i];
			if (c->seal)
				h = ppcc_fingerprint_action(h, a);
			if (!val_action_fields(c, r, i, a)) {
				c->stop |= c->any_collective;
				continue;
			}
			uint16_t *key = &c->bits[(size_t)a->stage * (size_t)c->m +
						 (size_t)a->mb];
			if ((*key >> a->op & 1) || !val_order_ready(c, r, a))
				c->stop = 1;
			*key |= (uint16_t)(1u << a->op);
		}
	}
	int ok = !c->stop && c->bytes_by_table;
	for (int st = 0; st < c->S && ok; st++) {
		const uint16_t *b = &c->bits[(size_t)st * (size_t)c->m];
		int ps = val_prev(c, st), ns = val_next(c, st);
		const uint16_t *prev = ps >= 0 && c->rank_of[ps] != c->rank_of[st]
			? b - c->m : NULL;
		const uint16_t *next = ns >= 0 &&
			c->rank_of[ns] != c->rank_of[st] ? b + c->m : NULL;
		const unsigned whole = 1u << PPCC_OP_F | 1u << PPCC_OP_B;
		const unsigned split = 1u << PPCC_OP_F | 1u << PPCC_OP_I |
				       1u << PPCC_OP_W;
		const unsigned computes = split | 1u << PPCC_OP_B;
		for (int mb = 0; mb < c->m; mb++) {
			unsigned k = b[mb];
			if ((k & computes) != whole && (k & computes) != split)
				ok = 0;
			if (prev && !((k >> PPCC_OP_RECV_F & 1) &&
				      (prev[mb] >> PPCC_OP_SEND_F & 1)))
				ok = 0;
			if (next && !((k >> PPCC_OP_RECV_B & 1) &&
				      (next[mb] >> PPCC_OP_SEND_B & 1)))
				ok = 0;
		}
	}
	ppcc_free(c->bits);
	c->bits = NULL;
	c->quiet = 0;
	if (ok) {
		c->hash = h;
		if (c->probe)
			c->probe->validate_quick_accepts++;
		return 1;
	}
	c->stop = 0;
	c->order_ready = 1;
	c->bytes_by_table = bytes_by_table;
	c->any_collective = c->any_unshard = 0;
	return 0;
}

/* Contract: reports each problem to d at {file, 0, 0} (no location when
 * file is NULL), at most max_errors of them (0: no bound) followed by a
 * note when more were found; returns 0 for a valid schedule, PPCC_EINPUT
 * after any error, PPCC_ENOMEM when its working arrays (linear in the
 * number of actions) cannot be allocated.  Reads only within the arrays
 * that the counts of s describe. */
static int val_run(val_ctx *cp)
{
	val_ctx c = *cp;
	int err = 0;

	c.locp = c.loc.file ? &c.loc : NULL;
	int h = val_header(&c);
	if (h == -2)
		err = PPCC_ENOMEM;
	if (h < 0)
		goto out;
	c.rank_of = ppcc_malloc((size_t)c.S * sizeof *c.rank_of);
	if (!c.rank_of) {
		err = PPCC_ENOMEM;
		goto out;
	}
	for (int st = 0; st < c.S; st++)
		c.rank_of[st] = c.s->stages[st].rank;
	c.order_ready = 1;
	c.bytes_by_table = 1;
	for (int st = 0; st + 1 < c.S; st++)
		if (val_next(&c, st) >= 0 &&
		    c.s->stages[st].send_bytes != c.s->stages[st + 1].recv_bytes)
			c.bytes_by_table = 0;
	/* phases 2 and 3 on the positions only when the quick pass's bits
	 * do not show that they find nothing */
	if (c.stop || (c.probe && c.probe->validate_positions) ||
	    !val_quick(&c)) {
		c.pos = ppcc_calloc((size_t)c.S * (size_t)c.m,
				    VAL_POS_OPS * sizeof *c.pos);
		if (!c.pos) {
			err = PPCC_ENOMEM;
			goto out;
		}
		val_fields(&c);
		if (!c.stop)
			val_complete(&c);
	}
	/* phases 4 and 5 only where phase 2 saw something for them */
	if (!c.stop && !c.order_ready)
		val_order(&c);
	if (!c.stop && c.any_collective && (err = val_collectives(&c)) < 0)
		goto out;
	/* a stale fingerprint says nothing about the order: run it anyway, so
	 * that a hand edit's deadlock is reported with the mismatch */
	if (c.errors - c.fingerprint_bad == 0 && !c.stop && !c.run)
		err = val_dry_run(&c);
	if (c.errors == 0 && !c.stop && c.run) {
		/* the table is not needed by either run: give it back first */
		ppcc_free(c.pos);
		c.pos = NULL;
		err = c.run(c.s, c.run_user);
		/* a schedule that passed 1-5 gives the run nothing out of
		 * range: its ranks cannot all finish, which the dry run
		 * reports as it would have */
		if (err == PPCC_EINPUT) {
			int before = c.errors;
			if ((err = val_dry_run(&c)) == 0 && c.errors == before)
				err = PPCC_EINTERNAL;
		}
	}
out:
	ppcc_free(c.pos);
	ppcc_free(c.rank_of);
	cp->hash = c.hash;
	if (err < 0)
		return err;
	return c.errors > 0 || c.stop ? PPCC_EINPUT : 0;
}

int ppcc_schedule_validate(const ppcc_schedule *s, ppcc_diag *d,
			   const char *file, int max_errors)
{
	val_ctx c = {
		.s = s, .d = d, .loc = {file, 0, 0},
		.max_errors = max_errors,
	};
	return val_run(&c);
}

int ppcc_schedule_validate_hashed(const ppcc_schedule *s, uint64_t hash,
				  ppcc_diag *d, const char *file, int max_errors)
{
	val_ctx c = {
		.s = s, .d = d, .loc = {file, 0, 0},
		.max_errors = max_errors, .hashed = 1, .hash = hash,
	};
	return val_run(&c);
}

int ppcc_schedule_validate_seal(ppcc_schedule *s, ppcc_diag *d,
				const char *file, int max_errors)
{
	val_ctx c = {
		.s = s, .d = d, .loc = {file, 0, 0},
		.max_errors = max_errors, .seal = 1,
	};
	int err = val_run(&c);
	if (err == 0)
		s->fingerprint = c.hash;
	return err;
}

int ppcc_schedule_validate_seal_run(ppcc_schedule *s, ppcc_diag *d,
				    const char *file, int max_errors,
				    int (*run)(const ppcc_schedule *s, void *user),
				    void *user)
{
	val_ctx c = {
		.s = s, .d = d, .loc = {file, 0, 0},
		.max_errors = max_errors, .seal = 1,
		.run = run, .run_user = user,
	};
	int err = val_run(&c);
	if (err == 0)
		s->fingerprint = c.hash;
	return err;
}

int ppcc_schedule_validate_probed(ppcc_schedule *s, int how, uint64_t hash,
				  ppcc_diag *d, const char *file,
				  int max_errors, ppcc_probe *probe)
{
	val_ctx c = {
		.s = s, .d = d, .probe = probe, .loc = {file, 0, 0},
		.max_errors = max_errors, .seal = how == PPCC_VALIDATE_SEAL,
		.hashed = how == PPCC_VALIDATE_HASHED,
		.hash = how == PPCC_VALIDATE_HASHED ? hash : 0,
	};
	int err = val_run(&c);
	if (err == 0 && how == PPCC_VALIDATE_SEAL)
		s->fingerprint = c.hash;
	return err;
}
