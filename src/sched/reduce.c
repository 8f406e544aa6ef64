/*
 * reduce.c - the data-parallel gradient reduction placed in the schedule:
 * one REDUCE_GRAD per (stage, bucket), right after the action that
 * completes the stage's gradients.
 *
 * A stage's weight gradients are complete once its last backward of the
 * step has run: the last B, or the last W of a split backward (I leaves
 * them to W), whichever microbatch it is.  The stage's gradient bytes on
 * one device are cut into buckets of bucket_bytes, the last one holding
 * the rest, so a bucket never spans two stages and the small layers of a
 * stage share one; the buckets' REDUCE_GRAD actions follow that backward
 * in bucket order, before anything else the rank does next (the SEND_B
 * of that backward included): a runtime launches them without waiting,
 * so nothing after them is delayed.  A stage without gradients (no
 * parameters) still gets bucket 0, of 0 bytes, so that every stage of a
 * data-parallel plan has its reduction (what the validator checks).
 *
 * The pass copies each rank's list into a new one in the arena (the old
 * lists, which plan.c shares between the variants of a plan, are left as
 * they are) and is linear in the number of actions.  The fingerprint is
 * left to the caller's seal.
 */
#include <math.h>
#include <string.h>

#include "sched/sched.h"

/* Buckets of a stage of `bytes` gradient bytes: at least 1. */
static int64_t reduce_buckets(uint64_t bytes, uint64_t bucket)
{
	if (bytes == 0)
		return 1;
	return (int64_t)((bytes - 1) / bucket + 1);
}

int64_t ppcc_schedule_reduction_count(const ppcc_schedule *s,
				      const double *grad_bytes,
				      double bucket_bytes)
{
	int64_t n = 0;
	uint64_t bucket = bucket_bytes >= 1 ? (uint64_t)llround(bucket_bytes) : 1;
	for (int st = 0; st < s->n_stages; st++) {
		double g = grad_bytes[st] > 0 ? grad_bytes[st] : 0;
		int64_t k = g >= 0x1p63 ? INT64_MAX
			: reduce_buckets((uint64_t)llround(g), bucket);
		n = k > INT64_MAX - n ? INT64_MAX : n + k;
	}
	return n;
}

int ppcc_schedule_place_reductions(ppcc_schedule *s, ppcc_arena *a,
				   const double *grad_bytes,
				   double bucket_bytes)
{
	int S = s->n_stages, p = s->n_ranks;
	if (!s->ranks || !s->stages || S < 1 || p < 1 ||
	    !(bucket_bytes >= 1) || bucket_bytes > 0x1p62)
		return PPCC_EINPUT;
	uint64_t bucket = (uint64_t)llround(bucket_bytes);
	uint64_t *total = ppcc_arena_alloc(a, (size_t)S, sizeof *total);
	int64_t *nb = ppcc_arena_alloc(a, (size_t)S, sizeof *nb);
	int32_t *last = ppcc_arena_alloc(a, (size_t)S, sizeof *last);
	ppcc_rank_schedule *rs = ppcc_arena_alloc(a, (size_t)p, sizeof *rs);
	if (!total || !nb || !last || !rs)
		return PPCC_ENOMEM;
	for (int st = 0; st < S; st++) {
		double g = grad_bytes[st];
		if (!(g >= 0) || g > 0x1p62)
			return PPCC_EINPUT;
		total[st] = (uint64_t)llround(g);
		nb[st] = reduce_buckets(total[st], bucket);
		last[st] = -1;
	}
	for (int r = 0; r < p; r++) {
		const ppcc_rank_schedule *old = &s->ranks[r];
		int64_t n = old->n_actions;
		for (int32_t i = 0; i < old->n_actions; i++) {
			const ppcc_action *x = &old->actions[i];
			if (ppcc_op_is_collective(x->op))
				return PPCC_EINPUT; /* placed already */
			if ((x->op == PPCC_OP_B || x->op == PPCC_OP_W) &&
			    x->stage >= 0 && x->stage < S)
				last[x->stage] = i;
		}
		for (int st = 0; st < S; st++)
			if (s->stages[st].rank == r) {
				if (last[st] < 0)
					return PPCC_EINPUT; /* no backward */
				n += nb[st];
			}
		if (n > INT32_MAX)
			return PPCC_EINPUT;
		ppcc_action *w = ppcc_arena_alloc(a, (size_t)n, sizeof *w);
		if (!w)
			return PPCC_ENOMEM;
		int32_t k = 0;
		for (int32_t i = 0; i < old->n_actions; i++) {
			const ppcc_action *x = &old->actions[i];
			w[k++] = *x;
			if ((x->op != PPCC_OP_B && x->op != PPCC_OP_W) ||
			    last[x->stage] != i)
				continue;
			int st = x->stage;
			for (int64_t b = 0; b < nb[st]; b++) {
				uint64_t bytes = b + 1 < nb[st]
					? bucket
					: total[st] - bucket * (uint64_t)(nb[st] - 1);
				w[k++] = (ppcc_action){PPCC_OP_REDUCE_GRAD, st,
						       (int32_t)b, -1, bytes};
			}
		}
		rs[r] = (ppcc_rank_schedule){old->rank, (int32_t)n, w};
	}
	s->ranks = rs;
	s->version = 3; /* the oldest format that holds REDUCE_GRAD */
	s->fingerprint = 0;
	return 0;
}
