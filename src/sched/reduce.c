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
 * Under ZeRO >= 1 (the optimizer state sharded over the d replicas)
 * the same places hold REDUCE_SCATTER_GRAD: each replica keeps only the
 * reduced shard of the bucket its optimizer updates.  Under ZeRO 1 and
 * 2 the updated shards must then reach every replica before the
 * parameters are used again: one ALL_GATHER_PARAM per bucket, at the
 * start of the next step, before anything else on the rank (the step's
 * prologue, which the rank waits for before its first other action).
 * The trainer runs its optimizer after ppcc_rt_step returns, so this is
 * the first place in the list where the update is there to gather; the
 * rank's stages come in the order of their first forward, so a runtime
 * that waited per stage rather than for the whole prologue would
 * overlap the later stages' gathers with the first forwards, as
 * Megatron-LM's --overlap-param-gather does.  Under ZeRO-3 parameters
 * are gathered before each forward and backward, inside the trainer's
 * callbacks (plan.c charges them to F and B): no ALL_GATHER_PARAM.
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

/* Bucket b's gradient bytes of a stage of `total` in nb buckets. */
static uint64_t bucket_bytes_of(int64_t b, int64_t nb, uint64_t total,
				uint64_t bucket)
{
	return b + 1 < nb ? bucket : total - bucket * (uint64_t)(nb - 1);
}

int ppcc_schedule_place_reductions(ppcc_schedule *s, ppcc_arena *a,
				   const double *grad_bytes,
				   double bucket_bytes)
{
	return ppcc_schedule_place_collectives(s, a, grad_bytes, bucket_bytes,
					       0, 0);
}

int ppcc_schedule_place_collectives(ppcc_schedule *s, ppcc_arena *a,
				    const double *grad_bytes,
				    double bucket_bytes, int zero,
				    double param_per_grad)
{
	int S = s->n_stages, p = s->n_ranks;
	int gather = zero == 1 || zero == 2;
	int red_op = zero >= 1 ? PPCC_OP_REDUCE_SCATTER_GRAD : PPCC_OP_REDUCE_GRAD;
	if (!s->ranks || !s->stages || S < 1 || p < 1 || zero < 0 || zero > 3 ||
	    !(bucket_bytes >= 1) || bucket_bytes > 0x1p62 ||
	    (gather && !(param_per_grad >= 0 && param_per_grad <= 64)))
		return PPCC_EINPUT;
	uint64_t bucket = (uint64_t)llround(bucket_bytes);
	uint64_t *total = ppcc_arena_alloc(a, (size_t)S, sizeof *total);
	int64_t *nb = ppcc_arena_alloc(a, (size_t)S, sizeof *nb);
	int32_t *last = ppcc_arena_alloc(a, (size_t)S, sizeof *last);
	int32_t *first = ppcc_arena_alloc(a, (size_t)S, sizeof *first);
	int *order = ppcc_arena_alloc(a, (size_t)S, sizeof *order);
	ppcc_rank_schedule *rs = ppcc_arena_alloc(a, (size_t)p, sizeof *rs);
	if (!total || !nb || !last || !first || !order || !rs)
		return PPCC_ENOMEM;
	for (int st = 0; st < S; st++) {
		double g = grad_bytes[st];
		if (!(g >= 0) || g > 0x1p62)
			return PPCC_EINPUT;
		total[st] = (uint64_t)llround(g);
		nb[st] = reduce_buckets(total[st], bucket);
		last[st] = -1;
		first[st] = -1;
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
			if (x->op == PPCC_OP_F && x->stage >= 0 && x->stage < S &&
			    first[x->stage] < 0)
				first[x->stage] = i;
		}
		int n_own = 0;
		for (int st = 0; st < S; st++)
			if (s->stages[st].rank == r) {
				if (last[st] < 0 || first[st] < 0)
					return PPCC_EINPUT; /* no backward */
				n += gather ? 2 * nb[st] : nb[st];
				/* by first forward (insertion: v is small) */
				int at = n_own++;
				while (at > 0 && first[order[at - 1]] > first[st]) {
					order[at] = order[at - 1];
					at--;
				}
				order[at] = st;
			}
		if (n > INT32_MAX)
			return PPCC_EINPUT;
		ppcc_action *w = ppcc_arena_alloc(a, (size_t)n, sizeof *w);
		if (!w)
			return PPCC_ENOMEM;
		int32_t k = 0;
		for (int j = 0; gather && j < n_own; j++) {
			int st = order[j];
			for (int64_t b = 0; b < nb[st]; b++) {
				double g = (double)bucket_bytes_of(b, nb[st], total[st],
								   bucket);
				w[k++] = (ppcc_action){PPCC_OP_ALL_GATHER_PARAM, st,
						       (int32_t)b, -1,
						       (uint64_t)llround(g * param_per_grad)};
			}
		}
		for (int32_t i = 0; i < old->n_actions; i++) {
			const ppcc_action *x = &old->actions[i];
			w[k++] = *x;
			if ((x->op != PPCC_OP_B && x->op != PPCC_OP_W) ||
			    last[x->stage] != i)
				continue;
			int st = x->stage;
			for (int64_t b = 0; b < nb[st]; b++)
				w[k++] = (ppcc_action){red_op, st, (int32_t)b, -1,
						       bucket_bytes_of(b, nb[st],
								       total[st], bucket)};
		}
		rs[r] = (ppcc_rank_schedule){old->rank, (int32_t)n, w};
	}
	s->ranks = rs;
	/* the oldest format that holds what was placed */
	s->version = zero >= 1 ? 4 : 3;
	s->fingerprint = 0;
	return 0;
}
