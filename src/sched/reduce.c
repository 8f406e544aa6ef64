/*
 * reduce.c - the data-parallel gradient reduction placed in the schedule:
 * one REDUCE_GRAD per (stage, bucket), right after the action that
 * completes the stage's gradients.
 *
 * A stage's gradient bytes on one device are cut into buckets of
 * bucket_bytes (the last holding the rest; a stage without parameters
 * gets one bucket of 0 bytes); their REDUCE_GRAD actions follow its last
 * B (or W) of the step, in bucket order.  Under ZeRO >= 1 the same places
 * hold REDUCE_SCATTER_GRAD; ZeRO 1 and 2 add one ALL_GATHER_PARAM per
 * bucket at the start of the list (the step's prologue); ZeRO-3 instead
 * lists an UNSHARD_PARAM group before each F, B and I (right after the
 * compute two before it: one prefetched, so a rank holds at most two
 * groups' buffers) and the reduce-scatters after every backward.
 * Contract: the placement is the one ppcc/schedule.h states and the
 * validator checks.  The pass copies each rank's list into a new one in
 * the arena (the old lists, which plan.c shares between the variants of a
 * plan, are left as they are) and is linear in the number of actions.
 * The fingerprint is left to the caller's seal.
 *
 * Derivation: doc/design/reduce-placement.md (why each place, buckets,
 * ZeRO's gathers and prefetch).
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

/* An F, B or I: a compute that reads the stage's parameters. */
static int uses_params(int op)
{
	return op == PPCC_OP_F || op == PPCC_OP_B || op == PPCC_OP_I;
}

/* Appends to w at *k the UNSHARD_PARAM group of the next compute after
 * action *ahead of the rank's list that uses its parameters, moving
 * *ahead to that compute; 0 when there is none. */
static int unshard_next(ppcc_action *w, int32_t *k, const ppcc_rank_schedule *old,
			int S, int32_t *ahead, const int64_t *nb,
			const uint64_t *total, uint64_t bucket,
			double param_per_grad)
{
	int32_t i = *ahead + 1;
	while (i < old->n_actions && (!uses_params(old->actions[i].op) ||
				      old->actions[i].stage < 0 ||
				      old->actions[i].stage >= S))
		i++;
	if (i >= old->n_actions)
		return 0;
	*ahead = i;
	int st = old->actions[i].stage;
	for (int64_t b = 0; b < nb[st]; b++) {
		double g = (double)bucket_bytes_of(b, nb[st], total[st], bucket);
		w[(*k)++] = (ppcc_action){PPCC_OP_UNSHARD_PARAM, st, (int32_t)b, -1,
					  (uint64_t)llround(g * param_per_grad)};
	}
	return 1;
}

int ppcc_schedule_place_collectives(ppcc_schedule *s, ppcc_arena *a,
				    const double *grad_bytes,
				    double bucket_bytes, int zero,
				    double param_per_grad)
{
	int S = s->n_stages, p = s->n_ranks;
	int gather = zero == 1 || zero == 2;
	int unshard = zero == 3;
	int red_op = zero >= 1 ? PPCC_OP_REDUCE_SCATTER_GRAD : PPCC_OP_REDUCE_GRAD;
	if (!s->ranks || !s->stages || S < 1 || p < 1 || zero < 0 || zero > 3 ||
	    !(bucket_bytes >= 1) || bucket_bytes > 0x1p62 ||
	    ((gather || unshard) &&
	     !(param_per_grad >= 0 && param_per_grad <= 64)))
		return PPCC_EINPUT;
	uint64_t bucket = (uint64_t)llround(bucket_bytes);
	uint64_t *total = ppcc_arena_alloc(a, (size_t)S, sizeof *total);
	int64_t *nb = ppcc_arena_alloc(a, (size_t)S, sizeof *nb);
	int32_t *last = ppcc_arena_alloc(a, (size_t)S, sizeof *last);
	int32_t *first = ppcc_arena_alloc(a, (size_t)S, sizeof *first);
	int *order = ppcc_arena_alloc(a, (size_t)S, sizeof *order);
	/* per stage: its F, B and I, and its B and W (ZeRO-3's counts) */
	int64_t *uses = ppcc_arena_alloc(a, (size_t)S, sizeof *uses);
	int64_t *backs = ppcc_arena_alloc(a, (size_t)S, sizeof *backs);
	ppcc_rank_schedule *rs = ppcc_arena_alloc(a, (size_t)p, sizeof *rs);
	if (!total || !nb || !last || !first || !order || !uses || !backs || !rs)
		return PPCC_ENOMEM;
	for (int st = 0; st < S; st++) {
		double g = grad_bytes[st];
		if (!(g >= 0) || g > 0x1p62)
			return PPCC_EINPUT;
		total[st] = (uint64_t)llround(g);
		nb[st] = reduce_buckets(total[st], bucket);
		last[st] = -1;
		first[st] = -1;
		uses[st] = backs[st] = 0;
	}
	for (int r = 0; r < p; r++) {
		const ppcc_rank_schedule *old = &s->ranks[r];
		int64_t n = old->n_actions;
		for (int32_t i = 0; i < old->n_actions; i++) {
			const ppcc_action *x = &old->actions[i];
			if (ppcc_op_is_collective(x->op))
				return PPCC_EINPUT; /* placed already */
			if (x->stage < 0 || x->stage >= S)
				continue;
			if (x->op == PPCC_OP_B || x->op == PPCC_OP_W) {
				last[x->stage] = i;
				backs[x->stage]++;
			}
			uses[x->stage] += uses_params(x->op);
			if (x->op == PPCC_OP_F && x->stage >= 0 && x->stage < S &&
			    first[x->stage] < 0)
				first[x->stage] = i;
		}
		int n_own = 0;
		for (int st = 0; st < S; st++)
			if (s->stages[st].rank == r) {
				if (last[st] < 0 || first[st] < 0)
					return PPCC_EINPUT; /* no backward */
				if (unshard) {
					/* a group per compute, reductions per
					 * backward (overflow: the int32 check) */
					double more = (double)nb[st] *
						      (double)(uses[st] + backs[st]);
					n = more > INT32_MAX ? (int64_t)INT32_MAX + 1
						: n + (int64_t)more;
				} else {
					n += gather ? 2 * nb[st] : nb[st];
				}
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
		/* ZeRO-3: the groups of the first two computes open the
		 * list; ahead is the last compute whose group is listed,
		 * done counts the computes listed */
		int32_t ahead = -1;
		int64_t listed = 0, done = 0;
		for (int j = 0; unshard && j < 2; j++)
			listed += unshard_next(w, &k, old, S, &ahead, nb, total,
					       bucket, param_per_grad);
		for (int32_t i = 0; i < old->n_actions; i++) {
			const ppcc_action *x = &old->actions[i];
			w[k++] = *x;
			if (unshard && uses_params(x->op)) {
				done++;
				/* not between a pair's halves */
				int pair_f = x->op == PPCC_OP_F && i > 0 &&
					     old->actions[i - 1].op == PPCC_OP_OVERLAP_F_B;
				while (!pair_f && listed < done + 2 &&
				       unshard_next(w, &k, old, S, &ahead, nb, total,
						    bucket, param_per_grad))
					listed++;
			}
			if ((x->op != PPCC_OP_B && x->op != PPCC_OP_W) ||
			    (!unshard && last[x->stage] != i))
				continue;
			int st = x->stage;
			for (int64_t b = 0; b < nb[st]; b++)
				w[k++] = (ppcc_action){red_op, st, (int32_t)b, -1,
						       bucket_bytes_of(b, nb[st],
								       total[st], bucket)};
		}
		if (k != n)
			return PPCC_EINTERNAL;
		rs[r] = (ppcc_rank_schedule){old->rank, (int32_t)n, w};
	}
	s->ranks = rs;
	/* the oldest format that holds what was placed */
	s->version = unshard ? 5 : zero >= 1 ? 4 : 3;
	s->fingerprint = 0;
	return 0;
}
