/*
 * ir.h - the ops and their traits, the validator, order matching and
 * the schedule's fingerprint.
 * Part of the internal interface; src/ppcc.h includes every such header.
 */
#ifndef PPCC_IR_IR_H
#define PPCC_IR_IR_H

#include "util/util.h"

/* What every engine (validator, simulator, runtime, emitters) needs to
 * know of an op, in one table (diag.c).  A message is named by its
 * sender: SEND_F of stage s is received by RECV_F of stage s + 1, SEND_B
 * of s by RECV_B of s - 1. */
typedef struct ppcc_op_traits {
	const char *name;  /* "F", "SEND_F", ... */
	int compute;       /* F, B, I, W */
	int comm;          /* SEND_*, RECV_* (OVERLAP_F_B is neither: it
			      marks the pair of computes that follows) */
	int send;          /* SEND_* */
	int fwd;           /* F, SEND_F, RECV_F: the activation direction */
	int other;         /* stage at the other end: +1 or -1; 0 for compute */
	int collective;    /* REDUCE_GRAD, REDUCE_SCATTER_GRAD,
			    * ALL_GATHER_PARAM: over the stage's data-parallel
			    * group, launched without waiting; mb holds the
			    * bucket, not a microbatch */
} ppcc_op_traits;

/* The table, by op; the functions below are inline, since every engine
 * asks them of every action. */
extern const ppcc_op_traits ppcc_op_table[PPCC_OP_COUNT];

/* NULL for an op out of range. */
static inline const ppcc_op_traits *ppcc_op_traits_of(int op)
{
	return op >= 0 && op < PPCC_OP_COUNT ? &ppcc_op_table[op] : NULL;
}

/* 0 for an op out of range */
static inline int ppcc_op_is_compute(int op)
{
	return op >= 0 && op < PPCC_OP_COUNT && ppcc_op_table[op].compute;
}

static inline int ppcc_op_is_comm(int op)
{
	return op >= 0 && op < PPCC_OP_COUNT && ppcc_op_table[op].comm;
}

static inline int ppcc_op_is_collective(int op)
{
	return op >= 0 && op < PPCC_OP_COUNT && ppcc_op_table[op].collective;
}

/* A gradient reduction: REDUCE_GRAD or REDUCE_SCATTER_GRAD (the
 * collectives placed after a stage's backwards, on the rank's
 * communication channel); ALL_GATHER_PARAM and UNSHARD_PARAM, the
 * gathers, are the others. */
static inline int ppcc_op_is_reduction(int op)
{
	return op == PPCC_OP_REDUCE_GRAD || op == PPCC_OP_REDUCE_SCATTER_GRAD;
}

/* ---- messages -------------------------------------------------------- */

/* The one name of a message, the same at both of its ends: every engine
 * (validator, simulator, order check, the runtime's grouping, matching
 * and tags) keys messages by this and nothing else.  A SEND_F or RECV_F
 * carries stage src's activation to stage src + 1, a SEND_B or RECV_B
 * stage src's input gradient to stage src - 1; src is the SEND's own
 * stage and the RECV's stage at the other end. */
typedef struct ppcc_message {
	int32_t src_stage, dst_stage, mb;
	int fwd; /* 1: activation (SEND_F/RECV_F); 0: gradient */
} ppcc_message;

/* The key of the message stage src sends for microbatch mb (fwd: an
 * activation, else a gradient), m microbatches: the formula alone, for a
 * caller that has already checked what ppcc_message_key checks (the
 * simulator's inner loop). */
static inline int64_t ppcc_message_key_of(int64_t src, int64_t mb,
					  int64_t m, int fwd)
{
	return 2 * (src * m + mb) + !fwd;
}

/* The key of the message a SEND or RECV action carries:
 * 2 * (src_stage * m + mb) + (fwd ? 0 : 1), in [0, 2 * S * m).  -1 for
 * an action that is no SEND or RECV, or whose stages or microbatch lie
 * outside S stages and m microbatches. */
static inline int64_t ppcc_message_key(const ppcc_action *a, int64_t S,
				       int64_t m)
{
	if (!ppcc_op_is_comm(a->op))
		return -1;
	const ppcc_op_traits *t = &ppcc_op_table[a->op];
	int64_t src = t->send ? a->stage : (int64_t)a->stage + t->other;
	int64_t dst = t->send ? (int64_t)a->stage + t->other : a->stage;
	if (src < 0 || src >= S || dst < 0 || dst >= S || a->mb < 0 ||
	    a->mb >= m)
		return -1;
	return ppcc_message_key_of(src, a->mb, m, t->fwd);
}

/* The message of a key from ppcc_message_key (m microbatches). */
static inline ppcc_message ppcc_message_of_key(int64_t key, int64_t m)
{
	ppcc_message msg;
	msg.fwd = !(key & 1);
	msg.src_stage = (int32_t)(key / 2 / m);
	msg.mb = (int32_t)(key / 2 % m);
	msg.dst_stage = msg.src_stage + (msg.fwd ? 1 : -1);
	return msg;
}

/* Structural checks and a dry run.  Reports each problem naming rank and
 * action index; returns PPCC_EINPUT when any.  `max_errors` bounds the
 * report (0 = no bound). */
int ppcc_schedule_validate(const ppcc_schedule *s, ppcc_diag *d,
			   const char *file, int max_errors);
/* The same, with hash = ppcc_schedule_fingerprint(s) already computed
 * by the caller (compared with s->fingerprint as there). */
int ppcc_schedule_validate_hashed(const ppcc_schedule *s, uint64_t hash,
				  ppcc_diag *d, const char *file, int max_errors);
/* Tests: ppcc_schedule_validate (how PPCC_VALIDATE_CHECK),
 * ppcc_schedule_validate_seal (PPCC_VALIDATE_SEAL) or
 * ppcc_schedule_validate_hashed with hash (PPCC_VALIDATE_HASHED), under
 * probe (util.h; NULL: none): with its validate_positions, phases 2 and
 * 3 on the table of positions alone, without the quick pass on bits
 * that decides most schedules (validate.c, val_quick), the reports the
 * same; it counts the schedules the quick pass decided. */
enum { PPCC_VALIDATE_CHECK, PPCC_VALIDATE_SEAL, PPCC_VALIDATE_HASHED };
int ppcc_schedule_validate_probed(ppcc_schedule *s, int how, uint64_t hash,
				  ppcc_diag *d, const char *file,
				  int max_errors, ppcc_probe *probe);
/* For a schedule being made, whose fingerprint is not yet set (the
 * compiler's own): every check of ppcc_schedule_validate except the
 * comparison with s->fingerprint, which, when every check passes, is set
 * to the hash of exactly what was checked (computed in the same pass over
 * the actions that checks their fields).  So a sealed schedule is one
 * that ppcc_schedule_validate accepts. */
int ppcc_schedule_validate_seal(ppcc_schedule *s, ppcc_diag *d,
				const char *file, int max_errors);
/* ppcc_schedule_validate_seal with run(s, user) in place of the dry run:
 * a run of all ranks under the same semantics (the simulation the caller
 * makes anyway) returning PPCC_EINPUT when they cannot all finish, when
 * the dry run is made for its report (the same as
 * ppcc_schedule_validate_seal's).  Returns the validator's status, else
 * run's. */
int ppcc_schedule_validate_seal_run(ppcc_schedule *s, ppcc_diag *d,
				    const char *file, int max_errors,
				    int (*run)(const ppcc_schedule *s, void *user),
				    void *user);

/* For a valid schedule (after ppcc_schedule_validate): whether each
 * ordered pair of ranks sends its messages in the order the receiver
 * receives them, as transports that match by posting order (NCCL, the
 * runtime's grouped mode) need.  Reports the first message out of order
 * of each pair as a warning at {file, 0, 0}, at most max_findings (0: no
 * bound); returns the number of pairs out of order, or PPCC_ENOMEM.
 * (match_order.c) */
int ppcc_schedule_order_check(const ppcc_schedule *s, ppcc_diag *d,
			      const char *file, int max_findings);

/* FNV-1a over n bytes at p, continuing from h (PPCC_FNV1A_BASIS to
 * start): the hash of ppcc's in-memory tables, and of the input files a
 * search read (ppcc search -f json writes it, to tell a changed file; it
 * guards against accidents, not against anyone forging a file). */
#define PPCC_FNV1A_BASIS 1469598103934665603ull
static inline uint64_t ppcc_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* The fingerprint in pieces, for a pass that hashes as it reads
 * (validate.c): ppcc_fingerprint_head over the header and the stage
 * table, then for each rank in order ppcc_fingerprint_mix of
 * ppcc_fingerprint_pair(rank, n_actions) and ppcc_fingerprint_action of
 * each of its actions in list order. */
uint64_t ppcc_fingerprint_head(const ppcc_schedule *s);

static inline uint64_t ppcc_fingerprint_mix(uint64_t h, uint64_t x)
{
	h ^= x;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

static inline uint64_t ppcc_fingerprint_pair(int32_t a, int32_t b)
{
	return (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
}

static inline uint64_t ppcc_fingerprint_action(uint64_t h, const ppcc_action *a)
{
	h = ppcc_fingerprint_mix(h, ppcc_fingerprint_pair(a->op, a->stage));
	h = ppcc_fingerprint_mix(h, ppcc_fingerprint_pair(a->mb, a->peer));
	return ppcc_fingerprint_mix(h, a->bytes);
}

typedef enum ppcc_placement {
	PPCC_PLACE_LOOPED, /* stage s on rank s % p, chunk s / p */
	PPCC_PLACE_V       /* 2 chunks: rank r holds r and 2p - 1 - r */
} ppcc_placement;

/* What a schedule's readers know of its kind: one row of ir/kinds.c's
 * table (how the kind is made: sched/kinds.c). */
typedef struct ppcc_sched_kind_info {
	int kind;              /* ppcc_schedule_kind */
	const char *name;      /* on the command line and in YAML/JSON */
	const char *macro;     /* PPCC_SCHED_<macro> */
	const char *source;    /* where the order comes from */
	int placement;         /* ppcc_placement */
	int min_chunks, max_chunks, default_chunks;
	int split_backward;    /* the order uses I and W, not B; 2: both
				  (DualPipeV: B in its overlapped pairs,
				  I and W where it fills bubbles) */
	int uses_group;        /* group_size means something */
	int pipes;             /* the pipelines the stages form (0 read as
				  1): stages [k S/pipes, (k+1) S/pipes) are
				  pipeline k, each a chain of its own that
				  runs every microbatch (DualPipe: 2, one
				  per direction; doc/design/dualpipe.md) */
	int pairs;             /* its order runs overlapped F&B pairs
				  (OVERLAP_F_B), which can hide one half's
				  communication behind the other's compute
				  (ppcc_pair_ms) */
	int opt_in;            /* ppcc search tries it only when --fix
				  schedule names it (auto: its order is
				  the others' and the heuristic's;
				  combined-1f1b: doc/design/combined-1f1b.md) */
} ppcc_sched_kind_info;

/* NULL for an unknown kind. */
const ppcc_sched_kind_info *ppcc_sched_kind(int kind);

/* The chunks a kind runs on `ranks` ranks when none are given: its
 * default_chunks, or 1 on one rank where it takes 1 (combined-1f1b
 * interleaves only a pipeline); 1 for an unknown kind. */
int ppcc_sched_kind_chunks(int kind, int ranks);

/* The pipelines of a kind's stages: 1, or the row's pipes (2 for
 * DualPipe); 1 for an unknown kind. */
int ppcc_sched_pipes(int kind);

/* Stage s's neighbour in its own pipeline of S / pipes stages (pipes
 * dividing S): the stage before it (ppcc_stage_prev) or after it
 * (ppcc_stage_next), -1 at the pipeline's first or last stage.  With
 * one pipeline, s - 1 and s + 1 within [0, S). */
static inline int ppcc_stage_prev(int S, int pipes, int s)
{
	int n = pipes > 1 ? S / pipes : S;
	return n > 0 && s % n != 0 ? s - 1 : -1;
}

static inline int ppcc_stage_next(int S, int pipes, int s)
{
	int n = pipes > 1 ? S / pipes : S;
	return n > 0 && (s + 1) % n != 0 ? s + 1 : -1;
}

/* "gpipe, 1f1b, ... or dualpipe-v" (last_sep before the last name)
 * into buf, truncated to n bytes. */
void ppcc_sched_kind_list(char *buf, size_t n, const char *last_sep);

const char *ppcc_schedule_kind_name(int kind);   /* "gpipe", ... */
int ppcc_schedule_kind_parse(const char *name);  /* -1 if unknown */
const char *ppcc_op_name(int op);                /* "F", "SEND_F", ... */
int ppcc_op_parse(const char *name);             /* -1 if unknown */

/* The schedule's fingerprint (util/diag.c; public in ppcc/runtime.h). */
PPCC_API uint64_t ppcc_schedule_fingerprint(const ppcc_schedule *s);

#endif
