/*
 * dp_timeline.c - the data-parallel reductions as the runtime launches
 * them, timed on each rank's communication channel: the prediction that
 * the runtime's measured step is compared with (check_dp's overlap test,
 * bench_runtime's p x d table).
 *
 * The runtime (src/runtime/reduce.c) launches a reduction when the rank
 * reaches its REDUCE_GRAD in the list, right after the backward that
 * completed the bucket has returned, and the replicas of a pipeline rank
 * reduce them in the order they were launched, one after another (the
 * local group's one thread; over mpi, the rank's messages in turn).  So
 * here a REDUCE_GRAD is ready at the simulated end of the action before
 * it and runs for its time on the rank's one channel, from when it is
 * ready or the channel is free, whichever is later: the rule of
 * ppcc_dp_channel_post, which the simulator (simulate.c) and the
 * iteration model (iteration.c) apply too, so that the three agree to
 * the last bit (check_dp tests it).  A schedule without REDUCE_GRAD
 * actions (one built without data parallelism, for which the runtime
 * launches a stage's registered buckets after its last backward) is
 * timed as if each stage had one REDUCE_GRAD right after its last B or
 * W.  The ALL_GATHER_PARAM prologue (ZeRO 1 and 2) takes the channel
 * first, from time 0, each gather for ppcc_dp_gather_ms of the costs e
 * was simulated with (reduce_ms gives only the reductions' times), and
 * ZeRO-3's UNSHARD_PARAM gathers take it where the rank reaches them, for
 * the same time.  The
 * step ends, on each rank, when its actions and its reductions have.
 */
#include "ppcc.h"

static int dp_has_reductions(const ppcc_schedule *s)
{
	for (int r = 0; r < s->n_ranks; r++)
		for (int32_t i = 0; i < s->ranks[r].n_actions; i++)
			if (ppcc_op_is_reduction(s->ranks[r].actions[i].op))
				return 1;
	return 0;
}

int ppcc_dp_reduce_timeline(double *out_end_ms, double *out_step_ms,
			    const ppcc_schedule *s, const ppcc_stage_cost *costs,
			    const ppcc_estimate *e, const double *reduce_ms)
{
	double step = 0;
	if (!s || !costs || !e || s->n_stages < 1)
		return PPCC_EINTERNAL;
	int placed = dp_has_reductions(s);
	if (!placed && !reduce_ms)
		return PPCC_EINTERNAL;
	int32_t *last_bwd = ppcc_calloc((size_t)s->n_stages, sizeof *last_bwd);
	if (!last_bwd)
		return PPCC_ENOMEM;
	int err = 0;
	for (int r = 0; r < s->n_ranks && err == 0; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		ppcc_rank_times t;
		double free_ms = 0, last = 0, clock = 0;
		for (int32_t i = 0; !placed && i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			if ((a->op == PPCC_OP_B || a->op == PPCC_OP_W) &&
			    a->stage >= 0 && a->stage < s->n_stages)
				last_bwd[a->stage] = i;
		}
		if (rs->n_actions > 0 &&
		    (err = ppcc_rank_times_begin(&t, s, costs, e, r)) < 0)
			break;
		for (int32_t i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			double t0, t1;
			if ((err = ppcc_rank_times_at(&t, i, &t0, &t1)) < 0)
				break;
			if (a->op == PPCC_OP_ALL_GATHER_PARAM ||
			    a->op == PPCC_OP_UNSHARD_PARAM) {
				/* the gathers, timed as e was */
				ppcc_dp_channel_post(&free_ms, clock,
						     ppcc_dp_gather_ms(&costs[a->stage],
								       a->bytes));
				continue;
			}
			if (ppcc_op_is_collective(a->op)) {
				double ms = reduce_ms ? reduce_ms[a->stage]
					: ppcc_dp_reduce_ms(&costs[a->stage],
							    a->bytes);
				ppcc_dp_channel_post(&free_ms, clock, ms);
				continue;
			}
			clock = t1;
			if (t1 > last)
				last = t1;
			if (placed || (a->op != PPCC_OP_B && a->op != PPCC_OP_W) ||
			    last_bwd[a->stage] != i || reduce_ms[a->stage] <= 0)
				continue;
			ppcc_dp_channel_post(&free_ms, clock, reduce_ms[a->stage]);
		}
		double end = free_ms > last ? free_ms : last;
		if (out_end_ms)
			out_end_ms[r] = end;
		if (end > step)
			step = end;
	}
	ppcc_free(last_bwd);
	if (err == 0 && out_step_ms)
		*out_step_ms = step;
	return err;
}
