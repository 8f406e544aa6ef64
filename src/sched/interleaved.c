/*
 * interleaved.c - Megatron-LM's interleaved 1F1B (v >= 2 chunks).
 *
 * One table of (microbatch, chunk), shared by all ranks: microbatches in
 * groups of G (the last group may be shorter), each group listed
 * chunk-major.  Forward k runs table[k]; backward k runs table[k] with
 * chunk c replaced by v-1-c.  Rank r runs min((p-r-1)*2 + (v-1)*G, m*v)
 * warm-up forwards, then pairs "forward warm-up+k, backward k", then the
 * remaining backwards.
 *
 * Combined 1F1B (Megatron-LM's --overlap-moe-expert-parallel-comm) is
 * the same table with one more warm-up forward, each steady "forward,
 * backward" written as an OVERLAP_F_B pair (schedules.py:964-970,
 * combined_1f1b.py; doc/design/combined-1f1b.md); with one stage and one
 * chunk that is its no-pipelining order, F1, pairs (F k+1, B k), B m.
 *
 * Megatron-LM's constraints on G: p <= G <= m, and a last, shorter group
 * holds at least p microbatches.  They are needed: over p <= 8, v <= 4,
 * m <= 24, every G outside them gives an order that either deadlocks
 * under the semantics of ppcc/schedule.h or idles more than
 * (p-1)/(v*m+p-1) with equal stages, except G > m >= p, which runs like
 * G = m with a longer warm-up.
 */
#include <stdio.h>

#include "sched/sched.h"

int ppcc_sched_check_interleaved(const sched_shape *sh,
				 ppcc_sched_complain_fn complain, void *user)
{
	char msg[256];
	int given = sh->group != 0;
	int g = given ? sh->group : sh->p;
	int m = sh->m;

	if (given && g < sh->p) {
		snprintf(msg, sizeof msg,
			 "group_size %d is smaller than the %d stages; the "
			 "interleaved schedule needs a group_size from %d to "
			 "the microbatches (%d)", g, sh->p, sh->p, m);
		complain(PPCC_SET_GROUP_SIZE, msg, user);
		return 1;
	}
	if (g > m) {
		if (given)
			snprintf(msg, sizeof msg,
				 "%d microbatch%s cannot fill a group of %d; "
				 "the interleaved schedule needs microbatches "
				 ">= group_size", m, m == 1 ? "" : "es", g);
		else
			snprintf(msg, sizeof msg,
				 "%d microbatch%s cannot fill %d stages; the "
				 "interleaved schedule needs microbatches >= "
				 "stages", m, m == 1 ? "" : "es", sh->p);
		complain(PPCC_SET_MICROBATCHES, msg, user);
		return 1;
	}
	int rest = m % g;
	if (rest != 0 && rest < sh->p) {
		snprintf(msg, sizeof msg,
			 "%d microbatches in groups of %d leave a last group "
			 "of %d, fewer than the %d stages; use a multiple of %d "
			 "microbatches, or a last group of at least %d",
			 m, g, rest, sh->p, g, sh->p);
		complain(PPCC_SET_MICROBATCHES, msg, user);
		return 1;
	}
	return 0;
}

/* Combined 1F1B: one stage with one chunk, or several with at least two
 * chunks each (Megatron-LM: transformer_config.py:3007-3011 asserts
 * virtual stages with a pipeline; arguments.py:1000-1009 interleaving
 * needs one), and then the interleaved schedule's groups. */
int ppcc_sched_check_combined(const sched_shape *sh,
			      ppcc_sched_complain_fn complain, void *user)
{
	char msg[256];
	if (sh->p == 1 && sh->v > 1) {
		snprintf(msg, sizeof msg, "combined-1f1b on one stage runs "
			 "one chunk (Megatron-LM interleaves only a pipeline), "
			 "not %d", sh->v);
		complain(PPCC_SET_CHUNKS, msg, user);
		return 1;
	}
	if (sh->p > 1 && sh->v < 2) {
		snprintf(msg, sizeof msg, "combined-1f1b on %d stages needs "
			 "chunks >= 2: Megatron-LM overlaps the experts' "
			 "all-to-alls in a pipeline only interleaved", sh->p);
		complain(PPCC_SET_CHUNKS, msg, user);
		return 1;
	}
	return sh->v > 1 ? ppcc_sched_check_interleaved(sh, complain, user)
			 : 0;
}

/* Rank r's warm-up forwards, of total = m v. */
static int64_t warmup_of(const sched_shape *sh, int r, int extra)
{
	int group = sh->group == 0 ? sh->p : sh->group;
	int64_t total = (int64_t)sh->m * sh->v;
	int64_t w = (int64_t)(sh->p - r - 1) * 2 +
		    (int64_t)(sh->v - 1) * group + extra;
	return w < total ? w : total;
}

int64_t ppcc_sched_count_combined(const sched_shape *sh)
{
	int64_t total = (int64_t)sh->m * sh->v, n = 0;
	for (int r = 0; r < sh->p; r++)
		n += 3 * total - warmup_of(sh, r, 1);
	return n;
}

static int order(sched_list *out, const sched_shape *sh, int combined)
{
	int p = sh->p, v = sh->v, m = sh->m;
	int group = sh->group == 0 ? p : sh->group;
	size_t total = (size_t)m * (size_t)v;
	int32_t *tmb = ppcc_malloc(total * sizeof *tmb);
	int32_t *tchunk = ppcc_malloc(total * sizeof *tchunk);
	if (!tmb || !tchunk) {
		ppcc_free(tmb);
		ppcc_free(tchunk);
		return PPCC_ENOMEM;
	}
	size_t k = 0;
	for (int g0 = 0; g0 < m; g0 += group) {
		int g1 = m - g0 > group ? g0 + group : m;
		for (int c = 0; c < v; c++)
			for (int mb = g0; mb < g1; mb++) {
				tmb[k] = mb;
				tchunk[k] = c;
				k++;
			}
	}
	for (int r = 0; r < p; r++) {
		const int32_t *st = &sh->stage_of[r * v];
		sched_list *o = &out[r];
		int64_t warmup = warmup_of(sh, r, combined);
		size_t f = 0, b = 0;
		while ((int64_t)f < warmup) {
			sched_put(o, PPCC_OP_F, st[tchunk[f]], tmb[f]);
			f++;
		}
		while (f < total) {
			if (combined)
				sched_put(o, PPCC_OP_OVERLAP_F_B,
					  st[tchunk[f]], tmb[f]);
			sched_put(o, PPCC_OP_F, st[tchunk[f]], tmb[f]);
			f++;
			sched_put(o, PPCC_OP_B, st[v - 1 - tchunk[b]], tmb[b]);
			b++;
		}
		while (b < total) {
			sched_put(o, PPCC_OP_B, st[v - 1 - tchunk[b]], tmb[b]);
			b++;
		}
	}
	ppcc_free(tmb);
	ppcc_free(tchunk);
	return 0;
}

int ppcc_sched_order_interleaved(sched_list *out, const sched_shape *sh)
{
	return order(out, sh, 0);
}

int ppcc_sched_order_combined(sched_list *out, const sched_shape *sh)
{
	return order(out, sh, 1);
}
