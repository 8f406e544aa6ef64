/*
 * dualpipe.c - DualPipe (DeepSeek-V3 technical report, section 3.2.1;
 * deepseek-ai/DualPipe, dualpipe.py): two pipelines over the same p
 * ranks, one per direction, each with its own copy of the parameters.
 * Stages 0..p-1 are the forward direction (stage s on rank s, chunk 0);
 * stages p..2p-1 the reverse one (stage p+j, the model's stage j again,
 * on rank p-1-j, chunk 1): the V placement, with the chain cut between
 * stage p-1 and stage p (the kind's pipes, ir.h).  Each pipeline runs
 * m/2 microbatches, numbered 0..m/2-1 in each (the schedule's
 * n_microbatches is m/2; doc/design/dualpipe.md).
 *
 * Rank r runs DualPipeV's eight steps (dualpipe_v.c) for rank
 * h = min(r, p-1-r) of p/2 ranks with m/2 microbatches per chunk; the
 * chunk the steps fill first is the forward direction's on the first
 * half of the ranks and the reverse direction's on the second half
 * (dualpipe.py swaps its phases there, phase ^= is_in_second_half).
 * Constraints, as dualpipe.py's step() asserts them: p even, m even and
 * m >= 2p.
 */
#include "sched/sched.h"

int ppcc_sched_order_dualpipe(sched_list *out, const sched_shape *sh)
{
	int p = sh->p, m = sh->m; /* m: per pipeline */
	int32_t *wq = ppcc_malloc(2 * (size_t)m * sizeof *wq);
	if (!wq)
		return PPCC_ENOMEM;
	int err = 0;
	for (int r = 0; r < p && !err; r++) {
		int second = r >= p / 2, h = second ? p - 1 - r : r;
		int32_t stage[2] = {sh->stage_of[2 * r + second],
				    sh->stage_of[2 * r + !second]};
		err = ppcc_sched_dualpipe_rank(&out[r], stage, p / 2, h, m, wq);
	}
	ppcc_free(wq);
	return err;
}

/* sh->m here is the step's microbatches, both directions together. */
int ppcc_sched_check_dualpipe(const sched_shape *sh,
			      ppcc_sched_complain_fn complain, void *user)
{
	char msg[200];
	int n = 0;
	if (sh->p % 2 != 0) {
		snprintf(msg, sizeof msg, "the dualpipe schedule needs an even "
			 "number of ranks (half of them start each direction); "
			 "stages is %d", sh->p);
		complain(PPCC_SET_STAGES, msg, user);
		n++;
	}
	if (sh->m % 2 != 0 || (int64_t)sh->m < 2 * (int64_t)sh->p) {
		snprintf(msg, sizeof msg, "the dualpipe schedule needs an even "
			 "number of microbatches, at least 2 x %d = %lld for %d "
			 "ranks (half enter from each end); microbatches is %d",
			 sh->p, 2 * (long long)sh->p, sh->p, sh->m);
		complain(PPCC_SET_MICROBATCHES, msg, user);
		n++;
	}
	return n;
}

/* Ranks r and p-1-r run the same steps, so the count is twice
 * DualPipeV's for p/2 ranks and m/2 microbatches; sh->m is the step's. */
int64_t ppcc_sched_count_dualpipe(const sched_shape *sh)
{
	sched_shape half = *sh;
	half.p = sh->p / 2;
	half.m = sh->m / 2;
	half.S = 2 * half.p;
	return 2 * ppcc_sched_count_dualpipe_v(&half);
}
