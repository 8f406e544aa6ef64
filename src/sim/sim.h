/*
 * sim.h - what the simulator needs per stage, the estimate it writes,
 * the data-parallel channel's one rule, and the simulation itself.
 * Part of the internal interface; src/ppcc.h includes every such header.
 */
#ifndef PPCC_SIM_SIM_H
#define PPCC_SIM_SIM_H

#include "ir/ir.h"
#include "input/input.h"

/* What the simulator needs per (virtual) stage.  Times in milliseconds. */
typedef struct ppcc_stage_cost {
	double fwd_ms;
	double bwd_ms;      /* full backward; I + W when split */
	double bwd_input_ms;  /* I */
	double bwd_weight_ms; /* W */
	double send_f_ms;   /* p2p time of SEND_F to stage + 1 */
	double send_b_ms;   /* p2p time of SEND_B to stage - 1 */
	double static_bytes; /* per device of the stage's rank */
	double stash_bytes;  /* per microbatch held, per device */
	/* What iteration.c needs (plan/tables.c fills them; 0 when read
	 * back from JSON).  Times are parts of fwd_ms and bwd_ms; bytes and
	 * parameters are per device; FLOPs per microbatch for all the
	 * stage's devices of one replica. */
	double tp_fwd_ms, tp_bwd_ms;   /* tensor-parallel collectives */
	double cp_fwd_ms, cp_bwd_ms;   /* ring attention's K and V exchange */
	double ep_fwd_ms, ep_bwd_ms;   /* experts' token all-to-alls */
	/* The share of ep_fwd_ms and ep_bwd_ms an overlapped pair can hide
	 * behind its other half's compute: 1 - pipeline.overlap's
	 * comm_sm_share where the kind runs pairs and they overlap the
	 * all-to-alls, else 0 (ppcc_pair_ms). */
	double ep_hidden_share;
	double recompute_ms;           /* recomputed forward, in bwd_ms */
	double params;                 /* per device */
	double weight_bytes, grad_bytes, optimizer_bytes; /* static split */
	double logits_bytes;           /* of stash_bytes */
	double model_flops, hardware_flops;
	/* The part of stash_bytes that only I needs: a split backward frees
	 * it when I ends and the rest (the paper's M_W) when W ends; 0 holds
	 * all of it until W. */
	double stash_input_bytes;
	/* Each REDUCE_GRAD of the stage (plan/tables.c; 0 when read back from
	 * JSON) takes dp_reduce_ms + bytes x dp_reduce_ms_per_byte on the
	 * rank's communication channel (ppcc_dp_reduce_ms). */
	double dp_reduce_ms, dp_reduce_ms_per_byte;
	/* Each ALL_GATHER_PARAM of the stage (ZeRO 1 and 2; plan/tables.c,
	 * 0 when read back): dp_gather_ms + bytes x dp_gather_ms_per_byte, in the
	 * rank's prologue (ppcc_dp_gather_ms). */
	double dp_gather_ms, dp_gather_ms_per_byte;
	/* 1 (ppcc_cost_stage_parts, for every trainer): a bucket's reduction is
	 * ready as soon as the backward that completes the stage's
	 * gradients has produced the bucket's bytes, at that backward's
	 * average rate (ppcc_dp_grad_ready), as the trainers' hooks launch
	 * it; 0 (by hand, read back, and libppcc_rt's prediction): when
	 * the rank reaches it in its list, after the backward returns. */
	int dp_ready_mid;
	/* Under ZeRO-3 (plan/tables.c; 0 otherwise): what the stage's
	 * gathers (UNSHARD_PARAM, one round for each of its F, B and I)
	 * hold on one device at once, two buffers of its largest layer's
	 * 16-bit parameters (ppcc_memory_zero3_buffer_bytes).  Each
	 * UNSHARD_PARAM of the stage takes ppcc_dp_gather_ms of its bytes,
	 * as ALL_GATHER_PARAM does; a rank holds the most of its stages'
	 * (simulate.c, split.c). */
	double zero3_param_bytes;
} ppcc_stage_cost;

/* How long one action of op lasts, c the costs of the stage whose time
 * it is: its own for a compute or a SEND (the transfer), the sending
 * stage's for a RECV (a receive lasts the transfer it waits for); 0 for
 * any other op.  The one rule of an op's duration: the simulator, the
 * split search's models and the auto order all read it. */
static inline double ppcc_op_ms(const ppcc_stage_cost *c, int op)
{
	switch (op) {
	case PPCC_OP_F: return c->fwd_ms;
	case PPCC_OP_B: return c->bwd_ms;
	case PPCC_OP_I: return c->bwd_input_ms;
	case PPCC_OP_W: return c->bwd_weight_ms;
	case PPCC_OP_SEND_F:
	case PPCC_OP_RECV_F: return c->send_f_ms;
	case PPCC_OP_SEND_B:
	case PPCC_OP_RECV_B: return c->send_b_ms;
	default: return 0;
	}
}

/* The least an action of op can last: ppcc_op_ms, less the part of its
 * all-to-alls an overlapped pair may hide (F and B only).  A rank's sum
 * of these bounds its busy time from below whatever pairs it runs. */
static inline double ppcc_op_least_ms(const ppcc_stage_cost *c, int op)
{
	double ms = ppcc_op_ms(c, op);
	if (op == PPCC_OP_F)
		ms -= c->ep_hidden_share * c->ep_fwd_ms;
	else if (op == PPCC_OP_B)
		ms -= c->ep_hidden_share * c->ep_bwd_ms;
	return ms > 0 ? ms : 0;
}

/* 1 when a[i] of a list of n actions on S stages opens an overlapped
 * pair: the OVERLAP_F_B marker, then at once its F and its B, of stages
 * of the schedule (what the validator requires of every pair). */
static inline int ppcc_pair_at(const ppcc_action *a, int32_t i, int32_t n,
			       int S)
{
	return i + 2 < n && a[i].op == PPCC_OP_OVERLAP_F_B &&
	       a[i + 1].op == PPCC_OP_F && a[i + 2].op == PPCC_OP_B &&
	       (unsigned)a[i + 1].stage < (unsigned)S &&
	       (unsigned)a[i + 2].stage < (unsigned)S;
}

/* How long an overlapped pair runs: the F of stage costs f beside the B
 * of stage costs b.  Their all-to-alls A = f's ep_fwd_ms + b's
 * ep_bwd_ms run on the communication SMs while the rest, C, computes on
 * the others: with s = 1 - f's ep_hidden_share the SMs' share that
 * communication takes, compute runs at 1 - s while A runs, so the pair
 * lasts max(C + s A, A) (doc/design/overlap.md).  s = 1 (no overlap):
 * F + B exactly. */
static inline double ppcc_pair_ms(const ppcc_stage_cost *f,
				  const ppcc_stage_cost *b)
{
	double whole = f->fwd_ms + b->bwd_ms;
	double h = f->ep_hidden_share;
	if (!(h > 0))
		return whole;
	double a = f->ep_fwd_ms + b->ep_bwd_ms;
	double c = whole - a;
	if (c < 0)
		c = 0;
	double ms = c + (1 - h) * a;
	return ms > a ? ms : a;
}

typedef struct ppcc_estimate {
	double step_ms;          /* makespan */
	double bubble_fraction;  /* sum of idle / (ranks * step) */
	double bubble_analytic;  /* closed form, NAN where none applies */
	double *busy_ms;         /* per rank: computing */
	double *comm_ms;         /* per rank: occupied by p2p transfers */
	double *idle_ms;         /* per rank: the rest of the step */
	double *peak_memory_bytes; /* per rank */
	double **start_ms;       /* per rank, per action; NULL when not kept */
	double **end_ms;
	/* When each message was sent, by ppcc_message_key: with it any
	 * rank's action times can be replayed in one pass
	 * (ppcc_rank_times).  NULL when not kept. */
	double *send_ms;
	/* The REDUCE_GRAD actions on each rank's communication channel
	 * (ppcc_dp_channel_post): per rank, the time they occupy it and
	 * when its actions and reductions are all done (its last action's
	 * end when it has none); dp_step_ms, the latest of those, is
	 * step_ms for a schedule without reductions. */
	double *dp_busy_ms;
	double *dp_end_ms;
	double dp_step_ms;
	/* Per rank, the ALL_GATHER_PARAM actions that open its list (ZeRO 1
	 * and 2), run on its communication channel from time 0 one after
	 * another, or its UNSHARD_PARAM actions (ZeRO-3), each run on the
	 * channel from where the rank reaches it: dp_gather_ms[r] their sum
	 * (0 without them), and dp_gather_wait_ms[r] how long the rank's
	 * computes waited for them (the gathers it exposed; each stage's
	 * first compute starts at dp_ready_ms[s] at the earliest: the end
	 * of that stage's last prologue gather, 0 without; each compute a
	 * group of UNSHARD_PARAM serves at its group's end).  Part of
	 * step_ms. */
	double *dp_gather_ms;
	double *dp_gather_wait_ms;
	double *dp_ready_ms;
} ppcc_estimate;

/* The time of one REDUCE_GRAD of `bytes` of a stage of costs c; 0 for 0
 * bytes. */
static inline double ppcc_dp_reduce_ms(const struct ppcc_stage_cost *c,
				       uint64_t bytes)
{
	return bytes == 0 ? 0
		: c->dp_reduce_ms + (double)bytes * c->dp_reduce_ms_per_byte;
}

/* The time of one ALL_GATHER_PARAM of `bytes`; 0 for 0 bytes. */
static inline double ppcc_dp_gather_ms(const struct ppcc_stage_cost *c,
				       uint64_t bytes)
{
	return bytes == 0 ? 0
		: c->dp_gather_ms + (double)bytes * c->dp_gather_ms_per_byte;
}

/* The one rule for when a gradient reduction runs, which the simulator,
 * the iteration model and the runtime's prediction (dp_timeline.c) all
 * apply: it runs for ms on the rank's one communication channel, from
 * when it is ready (ppcc_dp_grad_ready) or the channel is free,
 * whichever is later.  *free_ms moves to its end; returns its start. */
static inline double ppcc_dp_channel_post(double *free_ms, double ready_ms,
					  double ms)
{
	double at = ready_ms > *free_ms ? ready_ms : *free_ms;
	*free_ms = at + ms;
	return at;
}

/* When a gradient reduction is ready, the one rule the simulator and
 * the iteration model share (doc/design/reduce-placement.md): `at`,
 * where the rank reaches it, unless mid is set and it reduces bytes
 * [done, done + bytes) of the `total` that the backward of [start, end]
 * completed (the run of reductions after it, in the order the backward
 * produces them): then start + (done + bytes) / total of the backward,
 * the end exactly for the last. */
static inline double ppcc_dp_grad_ready(int mid, double at, double start,
					double end, double done, double bytes,
					double total)
{
	if (!mid || !(total > 0))
		return at;
	if (done + bytes >= total)
		return end;
	return start + (end - start) * ((done + bytes) / total);
}

/* The mirror of ppcc_dp_grad_ready for a parameter gather that ends
 * at `end`: its stage's first compute may start then, unless mid is set
 * and the forward (fwd_ms long) needs the gather's bucket only after
 * the bytes gathered before it, `done` of the `total` the stage's
 * gathers bring: then that part of the forward earlier. */
static inline double ppcc_dp_param_ready(int mid, double end, double fwd_ms,
					 double done, double total)
{
	if (!mid || !(total > 0) || !(done > 0))
		return end;
	return end - fwd_ms * (done / total);
}

/* The bytes of the run of reductions of stage `stage` from action i of
 * acts[0..n), the gathers among them skipped: what the backward before
 * them completed. */
static inline double ppcc_dp_reduction_run_bytes(const ppcc_action *acts,
						 int32_t i, int32_t n,
						 int stage)
{
	double total = 0;
	for (; i < n; i++) {
		const ppcc_action *x = &acts[i];
		if (x->op == PPCC_OP_UNSHARD_PARAM ||
		    x->op == PPCC_OP_ALL_GATHER_PARAM)
			continue;
		if (!ppcc_op_is_reduction(x->op) || x->stage != stage)
			break;
		total += (double)x->bytes;
	}
	return total;
}

/* Where a rank's list stands for ppcc_dp_grad_ready: its last compute's
 * stage (-1: none yet), start and end, and the bytes of the reductions
 * after it so far, of their run's total. */
typedef struct ppcc_dp_ready {
	int stage;
	double start, end, done, total;
} ppcc_dp_ready;

/* A compute of stage `stage` ran from start to end. */
static inline void ppcc_dp_ready_compute(ppcc_dp_ready *r, int stage,
					 double start, double end)
{
	r->stage = stage;
	r->start = start;
	r->end = end;
	r->done = 0;
}

/* When reduction acts[i] (of a list of n, under its stage's costs c) is
 * ready, `at` being where the rank reaches it: ppcc_dp_grad_ready over
 * the run of reductions after r's compute.  Moves r past it. */
static inline double ppcc_dp_ready_at(ppcc_dp_ready *r,
				      const struct ppcc_stage_cost *c,
				      const ppcc_action *acts, int32_t i,
				      int32_t n, double at)
{
	const ppcc_action *x = &acts[i];
	if (!c->dp_ready_mid || x->stage != r->stage)
		return at;
	if (r->done == 0)
		r->total = ppcc_dp_reduction_run_bytes(acts, i, n, x->stage);
	double ready = ppcc_dp_grad_ready(1, at, r->start, r->end, r->done,
					  (double)x->bytes, r->total);
	r->done += (double)x->bytes;
	return ready;
}

/* Event-driven simulation of s under costs (one per stage).  Assumes s is
 * valid.  Arrays live in the arena. */
int ppcc_simulate(ppcc_estimate *out, ppcc_arena *a, const ppcc_schedule *s,
		  const ppcc_stage_cost *costs);

/* ppcc_simulate keeping only what `keep` asks for: PPCC_SIM_ACTION_TIMES
 * (start_ms, end_ms: 16 bytes per action), PPCC_SIM_SEND_TIMES (send_ms:
 * 16 bytes per stage and microbatch).  ppcc_simulate keeps both. */
#define PPCC_SIM_ACTION_TIMES 1
#define PPCC_SIM_SEND_TIMES 2
int ppcc_simulate_keep(ppcc_estimate *out, ppcc_arena *a,
		       const ppcc_schedule *s, const ppcc_stage_cost *costs,
		       int keep);

/* ppcc_simulate_keep with its working buffers (the send times it does
 * not keep, the messages' flags, the ranks' states) kept in *work from
 * one call to the next, allocated on the first (*work NULL), so that a
 * caller simulating many times allocates and first touches them once;
 * the same results.  *work is the caller's, to free with
 * ppcc_sim_work_free. */
typedef struct ppcc_sim_work ppcc_sim_work;
int ppcc_simulate_work(ppcc_estimate *out, ppcc_arena *a,
		       const ppcc_schedule *s, const ppcc_stage_cost *costs,
		       int keep, ppcc_sim_work **work);
void ppcc_sim_work_free(ppcc_sim_work *work);
/* The send times of the last simulation through work, one made without
 * PPCC_SIM_SEND_TIMES (which leaves them in work), as that simulation
 * would have kept them with it: into out (2 keys doubles for keys stage
 * and microbatch pairs), 0 where no message was sent.  PPCC_EINPUT when
 * work holds no such times. */
int ppcc_sim_work_send_times(double *out, const ppcc_sim_work *work,
			     size_t keys);

/* The start and end of each action of one rank, in list order, for an
 * emitter: read from the estimate's start_ms/end_ms where it has them,
 * else replayed a block at a time from its send_ms, with the same
 * arithmetic as the simulation (so the same doubles).  Memory is the
 * struct's. */
#define PPCC_TIMES_BLOCK 256
typedef struct ppcc_rank_times {
	const ppcc_rank_schedule *rs;
	const ppcc_stage_cost *costs;
	const ppcc_estimate *e;
	int rank, n_ranks, n_stages, n_microbatches;
	int32_t base, count;   /* start/end hold actions [base, base + count) */
	double clock;          /* the rank's clock after them */
	double dp_free;        /* its reduction channel's, after them */
	const double *ready;   /* the estimate's dp_ready_ms, or NULL */
	double unshard[2];     /* ends of the UNSHARD_PARAM groups waiting */
	int n_unshard;         /* for their computes, oldest first */
	ppcc_dp_ready red;     /* the reductions' readiness */
	double pair_scale;     /* an overlapped pair's, split by a block */
	int pair_left;
	double start[PPCC_TIMES_BLOCK], end[PPCC_TIMES_BLOCK];
} ppcc_rank_times;

/* Adds to peaks[r] rank r's ZeRO-3 gather buffers: the largest
 * zero3_param_bytes of its stages (simulate.c's peak; nothing without
 * ZeRO-3).  O(p S). */
void ppcc_sim_add_gather_buffers(double *peaks, const ppcc_schedule *s,
				 const ppcc_stage_cost *costs);

/* PPCC_EINTERNAL when the estimate has neither times nor send times (or
 * the plan no costs to replay them with). */
int ppcc_rank_times_begin(ppcc_rank_times *t, const ppcc_schedule *s,
			  const ppcc_stage_cost *costs,
			  const ppcc_estimate *e, int rank);
/* Action i's times; i may not go back between calls on one t. */
int ppcc_rank_times_at(ppcc_rank_times *t, int32_t i, double *start,
		       double *end);

/* The data-parallel reductions as the runtime launches them
 * (dp_timeline.c), in the simulated step e, one after another on each
 * rank's channel (ppcc_dp_channel_post): each REDUCE_GRAD of stage s
 * ready where the rank reaches it, reduce_ms[s] long, or, with
 * reduce_ms NULL, ppcc_dp_reduce_ms of its bytes (then the same figures
 * as the simulator's dp_end_ms and dp_step_ms); for a schedule without
 * REDUCE_GRAD, one reduction of reduce_ms[s] (0: none) per stage, ready
 * at the end of its rank's last B or W of s.  out_end_ms[r] (may be
 * NULL; n_ranks entries): when rank r's actions and reductions are
 * done; *out_step_ms (may be NULL) the latest.  PPCC_EINTERNAL as
 * ppcc_rank_times_begin, or without reduce_ms for a schedule without
 * REDUCE_GRAD; PPCC_ENOMEM. */
int ppcc_dp_reduce_timeline(double *out_end_ms, double *out_step_ms,
			    const ppcc_schedule *s, const ppcc_stage_cost *costs,
			    const ppcc_estimate *e, const double *reduce_ms);

#endif
