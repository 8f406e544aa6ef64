/*
 * zb_h2.c - ZB-H2 (Qi et al., Zero Bubble Pipeline Parallelism, ICLR
 * 2024, section 3): one chunk per rank, up to 2p-1 microbatches held
 * between F and W, no bubble when F = I = W and m >= 2p.
 *
 * The order is the paper's construction played out at unit time (F = I =
 * W = 1, free communication): at each tick every rank that is free runs
 * the first of
 *   1. the I of its oldest microbatch without one, once the gradient
 *      from the next stage (or, on the last stage, its own F) is done;
 *   2. its next F, once the input from the previous stage is done and
 *      fewer than 2p-1 of its microbatches are between F and W;
 *   3. the W of its oldest microbatch that has had its I;
 * and idles otherwise.  So rank r runs 2(p-1-r)+1 warm-up forwards (as
 * many as fit before its first gradient arrives), then I, F and W in
 * turn; the later a rank, the more of its W wait for the tail, where
 * they fill what would be the bubble of 1F1B: each rank's span is
 * exactly its work, 3m, and the step is 3m + p - 1.  The order is a
 * valid execution under any costs (each action follows what it needs in
 * the unit-time run), and the unit-time run takes O(p m) work.
 */
#include <stdint.h>

#include "sched/sched.h"

int ppcc_sched_order_zb_h2(sched_list *out, const sched_shape *sh)
{
	int p = sh->p, m = sh->m, err = 0;
	int64_t limit = 2 * (int64_t)p - 1;
	size_t keys = (size_t)p * (size_t)m;
	/* tick at whose end F / I of (rank, mb) is done; -1 not yet */
	int64_t *done_f = ppcc_malloc(keys * sizeof *done_f);
	int64_t *done_i = ppcc_malloc(keys * sizeof *done_i);
	int32_t *cnt = ppcc_calloc((size_t)p * 3, sizeof *cnt);
	if (!done_f || !done_i || !cnt) {
		err = PPCC_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < keys; k++)
		done_f[k] = done_i[k] = -1;
	int64_t finished = 0, bound = 3 * (int64_t)m * p + 2 * (int64_t)p + 8;
	for (int64_t t = 0; finished < p; t++) {
		if (t > bound) {
			err = PPCC_EINTERNAL;
			goto out;
		}
		for (int r = 0; r < p; r++) {
			int32_t *nf = &cnt[3 * r], *ni = nf + 1, *nw = nf + 2;
			int s = sh->stage_of[r];
			if (*nw == m)
				continue;
			int64_t *df = &done_f[(size_t)r * m];
			int64_t *di = &done_i[(size_t)r * m];
			if (*ni < *nf) {
				int64_t dep = r == p - 1
					? df[*ni] : done_i[(size_t)(r + 1) * m + *ni];
				if (dep >= 0 && dep <= t) {
					di[*ni] = t + 1;
					sched_put(&out[r], PPCC_OP_I, s, (*ni)++);
					continue;
				}
			}
			if (*nf < m && *nf - *nw < limit) {
				int64_t dep = r == 0
					? 0 : done_f[(size_t)(r - 1) * m + *nf];
				if (dep >= 0 && dep <= t) {
					df[*nf] = t + 1;
					sched_put(&out[r], PPCC_OP_F, s, (*nf)++);
					continue;
				}
			}
			if (*nw < *ni) {
				sched_put(&out[r], PPCC_OP_W, s, (*nw)++);
				if (*nw == m)
					finished++;
			}
		}
	}
out:
	ppcc_free(done_f);
	ppcc_free(done_i);
	ppcc_free(cnt);
	return err;
}
