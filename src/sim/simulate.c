/*
 * simulate.c - event-driven simulation of a schedule: step time, bubble,
 * peak memory.
 *
 * The model is the semantics of include/ppcc/schedule.h with times
 * attached: each rank has a clock that starts at 0 and runs its actions
 * in order; computes take their stage's costs; a transfer occupies the
 * sender and then the receiver for its p2p time, the receive starting no
 * earlier than its send; the collectives run on the rank's own
 * communication channel and move no clock, a compute waiting only for
 * its own gathers.  The step is the latest end of any compute or p2p
 * action; the bubble is total idle over p * step.  The peak memory of a
 * rank is its stages' static bytes plus the largest stash along its
 * order (and ZeRO-3's gather buffers).
 * Contract: the result does not depend on which rank runs first, and the
 * work is linear in the number of actions; what is kept is the caller's
 * choice (ppcc_simulate_keep), and ppcc_rank_times replays any rank's
 * times with the same code, so the same doubles.
 * An overlapped pair's F and B last ppcc_pair_ms together.
 * Limits: p2p transfers are waited for between computations (Megatron-
 * LM's default); a runtime that overlaps them does better than this
 * estimate.
 *
 * Derivation: doc/design/simulate.md (each action's timing rule, the
 * memory rules, the wake-ups, what is kept).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ppcc.h"

/* What a rank carries between the runs of its actions. */
typedef struct sim_rank {
	const ppcc_action *actions;
	double *start, *end;   /* NULL, or times of actions [base, ...) */
	int32_t base;
	int32_t n_actions; /* run to here (a replay's block ends sooner) */
	int32_t n_list;    /* the rank's whole list */
	int32_t pc;     /* next action */
	int64_t wait;   /* message awaited at pc (ppcc_message_key), or -1 */
	double clock;
	double stash, peak_stash;
	double last;    /* latest end of any action so far */
	double busy;
	double comm;
	double dp_free; /* the reduction channel is free from here */
	double dp_busy;
	/* per stage, when its prologue's gathers end (dp_ready_ms); NULL
	 * when the rank has none */
	const double *ready;
	double gather_wait; /* how long its computes waited for them */
	double gather_busy; /* its UNSHARD_PARAM time on the channel */
	double unshard[2];  /* ends of the groups waiting for computes */
	int n_unshard;
	int general;        /* runs in sim_run_as's general form */
	ppcc_dp_ready red;  /* the reductions' readiness */
	/* an overlapped pair's scale and the F and B left to take it */
	double pair_scale;
	int pair_left;
} sim_rank;

/* The ALL_GATHER_PARAM actions at the start of a rank's list, run one
 * after another on its channel from time 0: their sum, and in ready
 * (when not NULL) when each stage's first compute may start, the same
 * doubles as sim_run's posts: the end of the stage's last gather, or,
 * under dp_ready_mid, the latest of each gather's end less the part of
 * the stage's forward that runs before it needs that bucket (its share
 * of the bytes gathered before it, in a run of the stage's gathers, of
 * the run's; ppcc_dp_param_ready). */
static double sim_prologue_ms(const ppcc_action *acts, int32_t n, int S,
			      const ppcc_stage_cost *costs, double *ready)
{
	double ms = 0, done = 0, total = 0;
	for (int32_t i = 0; i < n && acts[i].op == PPCC_OP_ALL_GATHER_PARAM; i++) {
		int st = acts[i].stage;
		if (st < 0 || st >= S)
			continue;
		const ppcc_stage_cost *c = &costs[st];
		if (i == 0 || acts[i - 1].stage != st) {
			done = 0;
			total = 0;
			for (int32_t j = i; j < n && acts[j].op ==
			     PPCC_OP_ALL_GATHER_PARAM && acts[j].stage == st; j++)
				total += (double)acts[j].bytes;
		}
		ppcc_dp_channel_post(&ms, 0, ppcc_dp_gather_ms(c, acts[i].bytes));
		if (ready) {
			double at = ppcc_dp_param_ready(c->dp_ready_mid, ms,
							ppcc_op_ms(c, PPCC_OP_F),
							done, total);
			if (!c->dp_ready_mid || done == 0 || at > ready[st])
				ready[st] = at;
		}
		done += (double)acts[i].bytes;
	}
	return ms;
}

void ppcc_sim_add_gather_buffers(double *peaks, const ppcc_schedule *s,
				 const ppcc_stage_cost *costs)
{
	int any = 0;
	for (int st = 0; st < s->n_stages && !any; st++)
		any = costs[st].zero3_param_bytes > 0;
	for (int r = 0; any && r < s->n_ranks; r++) {
		double most = 0;
		for (int st = 0; st < s->n_stages; st++)
			if (s->stages[st].rank == r &&
			    costs[st].zero3_param_bytes > most)
				most = costs[st].zero3_param_bytes;
		peaks[r] += most;
	}
}

#if defined(__GNUC__)
#define SIM_PREFETCH(addr, rw) __builtin_prefetch((addr), (rw))
#else
#define SIM_PREFETCH(addr, rw) ((void)(addr))
#endif
/* Microbatches ahead whose messages a send or receive fetches: a rank
 * sends and receives each of its stages' messages in microbatch order,
 * one stream per stage and direction, too many streams at once for the
 * hardware to follow (two per stage on every rank). */
#define SIM_AHEAD 8

#if defined(__GNUC__)
#define SIM_INLINE inline __attribute__((always_inline))
#else
#define SIM_INLINE inline
#endif
/* sim_run_as's answer, in its plain form, at an action that only its
 * general form runs */
#define SIM_GENERAL 1

/* sim_run in one of two forms, general a constant: the general one runs
 * every action; the plain one, for a rank that keeps no times, waits for
 * no gathers and holds no group, runs computes and p2p alone, and stops
 * (SIM_GENERAL) at the first other action, leaving the rank at it. */
static SIM_INLINE int sim_run_as(sim_rank *ranks, int r,
				 const ppcc_stage_info *stages, int S, int m,
				 const ppcc_stage_cost *costs, double *arrival,
				 uint8_t *sent, int32_t *ready, int *n_ready,
				 const int general)
{
	sim_rank *k = &ranks[r];
	const ppcc_action *acts = k->actions;
	double *start = k->start, *end = k->end;
	int32_t base = k->base;
	double t = k->clock, cur = k->stash, peak = k->peak_stash;
	double last = k->last, busy = k->busy, comm = k->comm;
	double dp_free = k->dp_free, dp_busy = k->dp_busy;
	double gather_wait = k->gather_wait, gather_busy = k->gather_busy;
	double unshard0 = k->unshard[0], unshard1 = k->unshard[1];
	int n_unshard = k->n_unshard;
	const double *params_at = k->ready;
	int32_t i = k->pc, n = k->n_actions;
	int err = 0;
	ppcc_dp_ready red = k->red;
	/* an overlapped pair's F and B last their own times x pair_scale,
	 * which makes them last ppcc_pair_ms together */
	double pair_scale = k->pair_left > 0 ? k->pair_scale : 1;
	int pair_left = k->pair_left;

	/* A rank runs a few actions at a time between waits, so the
	 * hardware does not see its lists as streams: fetch ahead. */
	for (; i < n; i++) {
		const ppcc_action *x = &acts[i];
		if (i + 16 < n)
			SIM_PREFETCH(x + 12, 0);
		int st = x->stage, mb = x->mb;
		if (!general && (unsigned)x->op > PPCC_OP_OVERLAP_F_B) {
			err = SIM_GENERAL;
			break;
		}
		/* the collectives: REDUCE_GRAD, REDUCE_SCATTER_GRAD,
		 * ALL_GATHER_PARAM, UNSHARD_PARAM */
		if (general && x->op == PPCC_OP_UNSHARD_PARAM && st >= 0 && st < S && mb >= 0) {
			double ms = ppcc_dp_gather_ms(&costs[st], x->bytes);
			double at = ppcc_dp_channel_post(&dp_free, t, ms);
			gather_busy += ms;
			if (mb == 0) {
				if (n_unshard >= 2) {
					err = PPCC_EINPUT;
					break;
				}
				n_unshard++;
			}
			if (n_unshard == 0) {
				err = PPCC_EINPUT;
				break;
			}
			if (n_unshard == 1)
				unshard0 = dp_free;
			else
				unshard1 = dp_free;
			if (start) {
				start[i - base] = at;
				end[i - base] = dp_free;
			}
			continue;
		}
		if (general && (unsigned)(x->op - PPCC_OP_REDUCE_GRAD) < 3u &&
		    st >= 0 && st < S && mb >= 0 &&
		    x->op == PPCC_OP_ALL_GATHER_PARAM) {
			double at = ppcc_dp_channel_post(
				&dp_free, t, ppcc_dp_gather_ms(&costs[st], x->bytes));
			if (start) {
				start[i - base] = at;
				end[i - base] = dp_free;
			}
			continue;
		}
		if (general && (unsigned)(x->op - PPCC_OP_REDUCE_GRAD) < 3u &&
		    st >= 0 && st < S && mb >= 0) {
			double ms = ppcc_dp_reduce_ms(&costs[st], x->bytes);
			double from = ppcc_dp_ready_at(&red, &costs[st], acts, i,
						       k->n_list, t);
			double at = ppcc_dp_channel_post(&dp_free, from, ms);
			dp_busy += ms;
			if (start) {
				start[i - base] = at;
				end[i - base] = dp_free;
			}
			continue;
		}
		if (st < 0 || st >= S || mb < 0 || mb >= m) {
			err = PPCC_EINPUT;
			break;
		}
		const ppcc_stage_cost *cost = &costs[st];
		/* a stage's first compute waits for its parameters */
		if (general && params_at && x->op <= PPCC_OP_W && params_at[st] > t) {
			gather_wait += params_at[st] - t;
			t = params_at[st];
		}
		/* ZeRO-3: an F, B or I waits for its own group */
		if (general && n_unshard > 0 && x->op <= PPCC_OP_I) {
			if (unshard0 > t) {
				gather_wait += unshard0 - t;
				t = unshard0;
			}
			unshard0 = unshard1;
			n_unshard--;
		}
		double t0 = t;
		switch (x->op) {
		case PPCC_OP_F:
			cur += cost->stash_bytes;
			if (cur > peak)
				peak = cur;
			t += ppcc_op_ms(cost, PPCC_OP_F) * pair_scale;
			busy += ppcc_op_ms(cost, PPCC_OP_F) * pair_scale;
			if (pair_left > 0 && --pair_left == 0)
				pair_scale = 1;
			break;
		case PPCC_OP_B:
			t += ppcc_op_ms(cost, PPCC_OP_B) * pair_scale;
			busy += ppcc_op_ms(cost, PPCC_OP_B) * pair_scale;
			if (pair_left > 0 && --pair_left == 0)
				pair_scale = 1;
			cur -= cost->stash_bytes;
			break;
		case PPCC_OP_W:
			t += ppcc_op_ms(cost, PPCC_OP_W);
			busy += ppcc_op_ms(cost, PPCC_OP_W);
			cur -= cost->stash_bytes - cost->stash_input_bytes;
			break;
		case PPCC_OP_I:
			t += ppcc_op_ms(cost, PPCC_OP_I);
			busy += ppcc_op_ms(cost, PPCC_OP_I);
			/* negative when W holds more than the stash */
			cur -= cost->stash_input_bytes;
			if (cur > peak)
				peak = cur;
			break;
		case PPCC_OP_OVERLAP_F_B:
			/* the pair's F and B that follow take the time */
			if (ppcc_pair_at(acts, i, k->n_list, S)) {
				const ppcc_stage_cost *cf = &costs[acts[i + 1].stage];
				const ppcc_stage_cost *cb = &costs[acts[i + 2].stage];
				double whole = cf->fwd_ms + cb->bwd_ms;
				pair_scale = whole > 0
					? ppcc_pair_ms(cf, cb) / whole : 1;
				pair_left = 2;
			}
			break;
		case PPCC_OP_SEND_F:
		case PPCC_OP_SEND_B: {
			int fwd = x->op == PPCC_OP_SEND_F;
			int to = fwd ? st + 1 : st - 1;
			/* st and mb are checked above: the key's own checks
			 * (ppcc_message_key) reduce to the other end's */
			if (to < 0 || to >= S) {
				err = PPCC_EINPUT;
				goto out;
			}
			int64_t msg = ppcc_message_key_of(st, mb, m, fwd);
			double c = ppcc_op_ms(cost, x->op);
			t += c;
			comm += c;
			if (sent) {
				/* the stage's next microbatches' messages,
				 * whose lines this rank writes next */
				if (mb + SIM_AHEAD < m) {
					SIM_PREFETCH(&arrival[msg + 2 * SIM_AHEAD], 1);
					SIM_PREFETCH(&sent[(msg >> 1) + SIM_AHEAD], 1);
				}
				arrival[msg] = t0;
				sent[msg >> 1] |= fwd ? 1 : 2;
				int q = stages[to].rank;
				if (ranks[q].wait == msg) {
					ranks[q].wait = -1;
					ready[(*n_ready)++] = q;
				}
			}
			break;
		}
		case PPCC_OP_RECV_F:
		case PPCC_OP_RECV_B: {
			int fwd = x->op == PPCC_OP_RECV_F;
			int from = fwd ? st - 1 : st + 1;
			if (from < 0 || from >= S) {
				err = PPCC_EINPUT;
				goto out;
			}
			int64_t msg = ppcc_message_key_of(from, mb, m, fwd);
			if (mb + SIM_AHEAD < m) {
				SIM_PREFETCH(&arrival[msg + 2 * SIM_AHEAD], 0);
				if (sent)
					SIM_PREFETCH(&sent[(msg >> 1) + SIM_AHEAD], 0);
			}
			if (sent && !(sent[msg >> 1] & (fwd ? 1 : 2))) {
				k->wait = msg;
				goto out;
			}
			double c = ppcc_op_ms(&costs[from], x->op);
			if (arrival[msg] > t)
				t = arrival[msg];
			t += c;
			comm += c;
			break;
		}
		default:
			err = PPCC_EINPUT;
			goto out;
		}
		if (x->op <= PPCC_OP_W)
			ppcc_dp_ready_compute(&red, st, t0, t);
		if (general && start) {
			start[i - base] = t0;
			end[i - base] = t;
		}
	}
out:
	if (t > last)
		last = t;
	k->pc = i;
	k->clock = t;
	k->stash = cur;
	k->peak_stash = peak;
	k->last = last;
	k->busy = busy;
	k->comm = comm;
	k->dp_free = dp_free;
	k->dp_busy = dp_busy;
	k->gather_wait = gather_wait;
	k->gather_busy = gather_busy;
	k->unshard[0] = unshard0;
	k->unshard[1] = unshard1;
	k->n_unshard = n_unshard;
	k->red = red;
	k->pair_scale = pair_scale;
	k->pair_left = pair_left;
	return err;
}

/* Runs rank r until it finishes or waits for a message not yet sent;
 * wakes (pushes on ready) a rank whose awaited message it sends.
 * Returns PPCC_EINPUT for an action whose fields are out of range.
 * With sent NULL it replays: every message was sent at arrival[], which
 * is only read, and no rank is woken (stages, which says where a woken
 * rank is, may then be NULL).  A rank runs in the plain form until it
 * reaches an action that needs the general one, and in the general one
 * from there on; the two compute the same doubles in the same order. */
static int sim_run(sim_rank *ranks, int r, const ppcc_stage_info *stages,
		   int S, int m, const ppcc_stage_cost *costs, double *arrival,
		   uint8_t *sent, int32_t *ready, int *n_ready)
{
	sim_rank *k = &ranks[r];
	if (!k->general && sent && !k->start && !k->ready &&
	    k->n_unshard == 0) {
		int err = sim_run_as(ranks, r, stages, S, m, costs, arrival,
				     sent, ready, n_ready, 0);
		if (err != SIM_GENERAL)
			return err;
		k->general = 1;
	}
	return sim_run_as(ranks, r, stages, S, m, costs, arrival, sent,
			  ready, n_ready, 1);
}

/* The buffers of ppcc_simulate_work, kept between simulations: the
 * messages' send times (not cleared: a time is read only once its flag
 * in sent is set) and flags, the ready stack and the ranks' states. */
struct ppcc_sim_work {
	double *arrival;
	uint8_t *sent;
	int32_t *ready;
	sim_rank *ranks;
	size_t keys, p, arrival_keys;
};

void ppcc_sim_work_free(ppcc_sim_work *w)
{
	if (!w)
		return;
	ppcc_free(w->arrival);
	ppcc_free(w->sent);
	ppcc_free(w->ready);
	ppcc_free(w->ranks);
	ppcc_free(w);
}

/* Grows w to keys (stage, microbatch) pairs and p ranks; the send times
 * too when arrival is asked for. */
static int sim_work_fit(ppcc_sim_work *w, size_t keys, int p, int arrival)
{
	if (keys > w->keys) {
		ppcc_free(w->sent);
		if (!(w->sent = ppcc_malloc(keys))) {
			w->keys = 0;
			return PPCC_ENOMEM;
		}
		w->keys = keys;
	}
	if (arrival && keys > w->arrival_keys) {
		ppcc_free(w->arrival);
		if (keys > SIZE_MAX / (2 * sizeof *w->arrival) ||
		    !(w->arrival = ppcc_malloc(keys * 2 * sizeof *w->arrival))) {
			w->arrival = NULL;
			w->arrival_keys = 0;
			return PPCC_ENOMEM;
		}
		w->arrival_keys = keys;
	}
	if ((size_t)p > w->p) {
		ppcc_free(w->ready);
		ppcc_free(w->ranks);
		w->ready = ppcc_malloc((size_t)p * sizeof *w->ready);
		w->ranks = ppcc_malloc((size_t)p * sizeof *w->ranks);
		if (!w->ready || !w->ranks) {
			w->p = 0;
			return PPCC_ENOMEM;
		}
		w->p = (size_t)p;
	}
	return 0;
}

/* Contract: s is a valid schedule (ppcc_schedule_validate accepts it) and
 * costs has s->n_stages entries.  Actions whose fields are out of range,
 * or a schedule whose ranks cannot all finish, give PPCC_EINPUT instead of
 * a result (no diagnostics: validate first).  PPCC_ENOMEM when an
 * allocation fails.  Every array of out lives in the arena. */
int ppcc_simulate_work(ppcc_estimate *out, ppcc_arena *a,
		       const ppcc_schedule *s, const ppcc_stage_cost *costs,
		       int keep, ppcc_sim_work **work)
{
	int err = 0;
	int p = s->n_ranks, S = s->n_stages, m = s->n_microbatches;
	double *arrival = NULL;
	uint8_t *sent = NULL;
	int32_t *ready = NULL;
	sim_rank *ranks = NULL;

	if (p < 1 || S < 1 || m < 1 || S % p != 0 || !s->stages)
		return PPCC_EINPUT;
	for (int st = 0; st < S; st++)
		if (s->stages[st].rank < 0 || s->stages[st].rank >= p)
			return PPCC_EINPUT;
	memset(out, 0, sizeof *out);
	out->busy_ms = ppcc_arena_alloc(a, (size_t)p, sizeof(double));
	out->idle_ms = ppcc_arena_alloc(a, (size_t)p, sizeof(double));
	out->comm_ms = ppcc_arena_alloc(a, (size_t)p, sizeof(double));
	out->peak_memory_bytes = ppcc_arena_alloc(a, (size_t)p, sizeof(double));
	out->dp_busy_ms = ppcc_arena_alloc(a, (size_t)p, sizeof(double));
	out->dp_end_ms = ppcc_arena_alloc(a, (size_t)p, sizeof(double));
	out->dp_gather_ms = ppcc_arena_alloc(a, (size_t)p, sizeof(double));
	out->dp_gather_wait_ms = ppcc_arena_alloc(a, (size_t)p, sizeof(double));
	out->dp_ready_ms = ppcc_arena_alloc(a, (size_t)S, sizeof(double));
	if (!out->busy_ms || !out->idle_ms || !out->comm_ms ||
	    !out->peak_memory_bytes || !out->dp_busy_ms || !out->dp_end_ms ||
	    !out->dp_gather_ms || !out->dp_gather_wait_ms || !out->dp_ready_ms)
		return PPCC_ENOMEM;
	if (keep & PPCC_SIM_ACTION_TIMES) {
		out->start_ms = ppcc_arena_alloc(a, (size_t)p, sizeof(double *));
		out->end_ms = ppcc_arena_alloc(a, (size_t)p, sizeof(double *));
		if (!out->start_ms || !out->end_ms)
			return PPCC_ENOMEM;
		for (int r = 0; r < p; r++) {
			size_t n = (size_t)(s->ranks[r].n_actions > 0
						    ? s->ranks[r].n_actions : 0);
			out->start_ms[r] = ppcc_arena_alloc(a, n, sizeof(double));
			out->end_ms[r] = ppcc_arena_alloc(a, n, sizeof(double));
			if (!out->start_ms[r] || !out->end_ms[r])
				return PPCC_ENOMEM;
		}
	}

	size_t keys = (size_t)S * (size_t)m;
	/* arrival[ppcc_message_key()] is valid once sent[key] has the bit of the
	 * direction: 1 for SEND_F, 2 for SEND_B */
	ppcc_sim_work *w = work ? *work : NULL;
	if (work && !w) {
		if (!(w = ppcc_calloc(1, sizeof *w)))
			return PPCC_ENOMEM;
		*work = w;
	}
	if (w && (err = sim_work_fit(w, keys, p, !(keep & PPCC_SIM_SEND_TIMES))) < 0)
		return err;
	if (keep & PPCC_SIM_SEND_TIMES)
		arrival = out->send_ms = ppcc_arena_alloc(a, keys * 2, sizeof *arrival);
	else
		arrival = w ? w->arrival : ppcc_malloc(keys * 2 * sizeof *arrival);
	if (w) {
		sent = w->sent;
		ready = w->ready;
		ranks = w->ranks;
		memset(sent, 0, keys);
		memset(ranks, 0, (size_t)p * sizeof *ranks);
	} else {
		sent = ppcc_calloc(keys, 1);
		ready = ppcc_malloc((size_t)p * sizeof *ready);
		ranks = ppcc_calloc((size_t)p, sizeof *ranks);
	}
	if (!arrival || !sent || !ready || !ranks) {
		err = PPCC_ENOMEM;
		goto out;
	}
	for (int r = 0; r < p; r++) {
		ranks[r].actions = s->ranks[r].actions;
		ranks[r].n_actions = s->ranks[r].n_actions > 0
					     ? s->ranks[r].n_actions : 0;
		ranks[r].n_list = ranks[r].n_actions;
		ranks[r].start = out->start_ms ? out->start_ms[r] : NULL;
		ranks[r].end = out->end_ms ? out->end_ms[r] : NULL;
		ranks[r].wait = -1;
		ranks[r].red.stage = -1;
		out->dp_gather_ms[r] = sim_prologue_ms(ranks[r].actions,
						       ranks[r].n_actions, S,
						       costs, out->dp_ready_ms);
		if (ranks[r].n_actions > 0 &&
		    ranks[r].actions[0].op == PPCC_OP_ALL_GATHER_PARAM)
			ranks[r].ready = out->dp_ready_ms;
	}

	int n_ready = 0;
	for (int r = p - 1; r >= 0; r--)
		ready[n_ready++] = r;
	while (n_ready > 0) {
		int r = ready[--n_ready];
		err = sim_run(ranks, r, s->stages, S, m, costs, arrival, sent,
			      ready, &n_ready);
		if (err < 0)
			goto out;
	}

	double step = 0;
	for (int r = 0; r < p; r++) {
		if (ranks[r].pc < ranks[r].n_actions) {
			err = PPCC_EINPUT; /* deadlock */
			goto out;
		}
		if (ranks[r].last > step)
			step = ranks[r].last;
	}
	double idle = 0, dp_step = 0;
	for (int st = 0; st < S; st++)
		out->peak_memory_bytes[s->stages[st].rank] += costs[st].static_bytes;
	ppcc_sim_add_gather_buffers(out->peak_memory_bytes, s, costs);
	for (int r = 0; r < p; r++) {
		out->busy_ms[r] = ranks[r].busy;
		out->peak_memory_bytes[r] += ranks[r].peak_stash;
		out->comm_ms[r] = ranks[r].comm;
		out->idle_ms[r] = step - ranks[r].busy - ranks[r].comm;
		if (out->idle_ms[r] < 0) /* rounding */
			out->idle_ms[r] = 0;
		idle += out->idle_ms[r];
		out->dp_busy_ms[r] = ranks[r].dp_busy;
		out->dp_gather_wait_ms[r] = ranks[r].gather_wait;
		out->dp_gather_ms[r] += ranks[r].gather_busy;
		out->dp_end_ms[r] = ranks[r].dp_free > ranks[r].last
			? ranks[r].dp_free : ranks[r].last;
		if (out->dp_end_ms[r] > dp_step)
			dp_step = out->dp_end_ms[r];
	}
	out->step_ms = step;
	out->dp_step_ms = dp_step;
	out->bubble_fraction = step > 0 ? idle / ((double)p * step) : 0;
	out->bubble_analytic = ppcc_bubble_closed_form(s->kind, p, s->n_chunks,
							m);
out:
	if (w)
		return err;
	if (!(keep & PPCC_SIM_SEND_TIMES))
		ppcc_free(arrival);
	ppcc_free(sent);
	ppcc_free(ready);
	ppcc_free(ranks);
	return err;
}

int ppcc_sim_work_send_times(double *out, const ppcc_sim_work *w, size_t keys)
{
	if (!w || !w->arrival || keys > w->arrival_keys || keys > w->keys)
		return PPCC_EINPUT;
	for (size_t k = 0; k < keys; k++) {
		out[2 * k] = w->sent[k] & 1 ? w->arrival[2 * k] : 0;
		out[2 * k + 1] = w->sent[k] & 2 ? w->arrival[2 * k + 1] : 0;
	}
	return 0;
}

int ppcc_simulate_keep(ppcc_estimate *out, ppcc_arena *a,
		       const ppcc_schedule *s, const ppcc_stage_cost *costs,
		       int keep)
{
	return ppcc_simulate_work(out, a, s, costs, keep, NULL);
}


int ppcc_simulate(ppcc_estimate *out, ppcc_arena *a, const ppcc_schedule *s,
		  const ppcc_stage_cost *costs)
{
	return ppcc_simulate_keep(out, a, s, costs,
				  PPCC_SIM_ACTION_TIMES | PPCC_SIM_SEND_TIMES);
}

int ppcc_rank_times_begin(ppcc_rank_times *t, const ppcc_schedule *s,
			  const ppcc_stage_cost *costs,
			  const ppcc_estimate *e, int rank)
{
	memset(t, 0, offsetof(ppcc_rank_times, start));
	if (rank < 0 || rank >= s->n_ranks || !s->ranks ||
	    (!(e->start_ms && e->end_ms) && !(e->send_ms && costs)))
		return PPCC_EINTERNAL;
	t->rs = &s->ranks[rank];
	t->costs = costs;
	t->e = e;
	t->rank = rank;
	t->n_ranks = s->n_ranks;
	t->n_stages = s->n_stages;
	t->n_microbatches = s->n_microbatches;
	t->red.stage = -1;
	if (t->rs->n_actions > 0 &&
	    t->rs->actions[0].op == PPCC_OP_ALL_GATHER_PARAM)
		t->ready = e->dp_ready_ms;
	return 0;
}

int ppcc_rank_times_at(ppcc_rank_times *t, int32_t i, double *start,
		       double *end)
{
	const ppcc_estimate *e = t->e;
	if (i < 0 || i >= t->rs->n_actions)
		return PPCC_EINTERNAL;
	if (e->start_ms && e->end_ms) {
		*start = e->start_ms[t->rank][i];
		*end = e->end_ms[t->rank][i];
		return 0;
	}
	if (i < t->base)
		return PPCC_EINTERNAL;
	while (i >= t->base + t->count) {
		/* replay the next block */
		int32_t from = t->base + t->count;
		int32_t to = t->rs->n_actions - from > PPCC_TIMES_BLOCK
				     ? from + PPCC_TIMES_BLOCK : t->rs->n_actions;
		sim_rank k = {
			.actions = t->rs->actions, .start = t->start,
			.end = t->end, .base = from, .n_actions = to,
			.n_list = t->rs->n_actions,
			.pc = from, .wait = -1, .clock = t->clock,
			.dp_free = t->dp_free, .ready = t->ready,
			.unshard = {t->unshard[0], t->unshard[1]},
			.n_unshard = t->n_unshard, .red = t->red,
			.pair_scale = t->pair_scale, .pair_left = t->pair_left,
		};
		if (sim_run(&k, 0, NULL, t->n_stages, t->n_microbatches,
			    t->costs, e->send_ms, NULL, NULL, NULL) < 0 ||
		    k.pc != to)
			return PPCC_EINTERNAL;
		t->base = from;
		t->count = to - from;
		t->clock = k.clock;
		t->dp_free = k.dp_free;
		t->unshard[0] = k.unshard[0];
		t->unshard[1] = k.unshard[1];
		t->n_unshard = k.n_unshard;
		t->red = k.red;
		t->pair_scale = k.pair_scale;
		t->pair_left = k.pair_left;
	}
	*start = t->start[i - t->base];
	*end = t->end[i - t->base];
	return 0;
}
