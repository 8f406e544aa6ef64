/*
 * dp_timeline.c - the data-parallel reductions as the runtime launches
 * them, timed on each rank's communication channel: the prediction that
 * the runtime's measured step is compared with (check_dp's overlap test,
 * bench_runtime's p x d table).
 *
 * The runtime (src/runtime/reduce.c) posts a stage's gradient buckets
 * once the rank's last backward of the stage in the step (its last B,
 * or W of a split backward) has returned, and the replicas of a pipeline
 * rank reduce them in the order they were posted, one after another (the
 * local group's one thread; over mpi, the rank's messages in turn).  So
 * here stage s's reduction is ready at the simulated end of the rank's
 * last B or W of s, and takes reduce_ms[s] on the rank's one channel,
 * from when it is ready or the channel is free, whichever is later, in
 * the order the stages become ready (the rank's list order).  The step
 * ends, on each rank, when its actions and its reductions have.
 *
 * (The iteration model, iteration.c, readies a stage's buckets in the
 * course of its last backward instead, as Megatron-LM's gradient hooks
 * do inside autograd; a runtime whose callbacks are opaque launches them
 * at its end, which is what this times.)
 */
#include "ppcc.h"

int ppcc_dp_reduce_timeline(double *out_end_ms, double *out_step_ms,
			    const ppcc_schedule *s, const ppcc_stage_cost *costs,
			    const ppcc_estimate *e, const double *reduce_ms)
{
	double step = 0;
	if (!s || !costs || !e || !reduce_ms || s->n_stages < 1)
		return PPCC_EINTERNAL;
	int32_t *last_bwd = ppcc_calloc((size_t)s->n_stages, sizeof *last_bwd);
	if (!last_bwd)
		return PPCC_ENOMEM;
	int err = 0;
	for (int r = 0; r < s->n_ranks && err == 0; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		ppcc_rank_times t;
		double free_ms = 0, last = 0;
		for (int32_t i = 0; i < rs->n_actions; i++) {
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
			if (t1 > last)
				last = t1;
			if ((a->op != PPCC_OP_B && a->op != PPCC_OP_W) ||
			    last_bwd[a->stage] != i || reduce_ms[a->stage] <= 0)
				continue;
			double at = t1 > free_ms ? t1 : free_ms;
			free_ms = at + reduce_ms[a->stage];
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
