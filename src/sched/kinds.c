/*
 * kinds.c - the table of how each schedule kind is made.
 *
 * A kind is one row here and one in ir/kinds.c, both indexed by
 * ppcc_schedule_kind.  There: its name, placement, chunk rules and
 * whether it splits the backward (what a schedule's readers need, the
 * runtime among them).  Here: its per-rank compute order, its
 * constraints on microbatches and groups (with the text of each
 * complaint), its count of compute actions and its closed-form bubble
 * where one is known.  Adding a kind is adding a row to each table and
 * an order function.
 *
 * The closed forms (equal stages, free communication; largest idle time
 * of a rank between its first and last action, F forward, B backward or
 * its input gradient I when split, W weight gradient):
 *   GPipe, 1F1B     (p-1)(F+B)        with B = I + W: (p-1)(F+I+W)
 *   interleaved     (p-1)(F+B), F and B of one chunk (a rank works
 *                   v m (F+B)), so the fraction is (p-1)/(v m + p-1)
 *   ZB-H1           (p-1)(F+I-W)      Qi et al., ICLR 2024, section 3
 *   ZB-H2           (p-1)(F+I-2W), not below 0
 * ZB-V and the interleaved zero-bubble order have none in ppcc (the paper
 * gives ZB-V's only for F = I = W: 0 once m >= 2p), nor has auto, whose
 * order depends on the costs.  Nor has DualPipeV: DualPipe's
 * (PP/2-1)(F&B+B-3W), PP = 2p stages, counts the overlapped pair as one
 * time F&B, where ppcc's pair lasts max(C + s A, A) of its halves' costs
 * (ppcc_pair_ms, doc/design/overlap.md); nor, for the same reason, has
 * DualPipe, whose row it is (PP = p there), nor combined-1f1b, whose
 * pairs are priced alike.  DualPipe's check and count take the
 * step's m (both directions); its order is given m/2, what each of its
 * two pipelines runs (lower.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sched/sched.h"

typedef struct sched_row {
	sched_order_fn order;
	sched_check_fn check;
	sched_bubble_fn bubble;
	sched_count_fn count; /* NULL: 2 (3 split) computes per (stage, mb) */
	/* 1: each rank's order, lowered, receives from every peer in the
	 * order that peer sends, with the group size of p where the kind has
	 * one (check_order proves it over a grid of shapes, and finds other
	 * group sizes that do not), so lower.c need not reorder them */
	int receives_in_order;
} sched_row;

static double bubble_1f1b(const sched_shape *sh, double f, double b, double w)
{
	(void)w;
	return (sh->p - 1) * (f + b);
}

static double bubble_zb_h1(const sched_shape *sh, double f, double b, double w)
{
	double x = (sh->p - 1) * (f + b - w);
	return x > 0 ? x : 0;
}

static double bubble_zb_h2(const sched_shape *sh, double f, double b, double w)
{
	double x = (sh->p - 1) * (f + b - 2 * w);
	return x > 0 ? x : 0;
}

static const sched_row sched_rows[PPCC_SCHED_COUNT] = {
	[PPCC_SCHED_GPIPE] = {ppcc_sched_order_gpipe, NULL, bubble_1f1b, NULL, 1},
	[PPCC_SCHED_1F1B] = {ppcc_sched_order_1f1b, NULL, bubble_1f1b, NULL, 1},
	[PPCC_SCHED_INTERLEAVED] = {ppcc_sched_order_interleaved,
		ppcc_sched_check_interleaved, bubble_1f1b, NULL, 1},
	[PPCC_SCHED_ZB_H1] = {ppcc_sched_order_zb_1p, NULL, bubble_zb_h1, NULL, 0},
	[PPCC_SCHED_ZB_H2] = {ppcc_sched_order_zb_h2, NULL, bubble_zb_h2, NULL, 0},
	[PPCC_SCHED_ZB_V] = {ppcc_sched_order_zb_v, NULL, NULL, NULL, 0},
	[PPCC_SCHED_ZB_INTERLEAVED] = {ppcc_sched_order_zb_1p,
		ppcc_sched_check_zb_1p, NULL, NULL, 0},
	[PPCC_SCHED_AUTO] = {ppcc_sched_order_auto, NULL, NULL, NULL, 0},
	[PPCC_SCHED_DUALPIPE_V] = {ppcc_sched_order_dualpipe_v,
		ppcc_sched_check_dualpipe_v, NULL, ppcc_sched_count_dualpipe_v, 0},
	[PPCC_SCHED_DUALPIPE] = {ppcc_sched_order_dualpipe,
		ppcc_sched_check_dualpipe, NULL, ppcc_sched_count_dualpipe, 0},
	[PPCC_SCHED_COMBINED_1F1B] = {ppcc_sched_order_combined,
		ppcc_sched_check_combined, NULL, ppcc_sched_count_combined, 0},
};

static const sched_row *sched_row_of(int kind)
{
	return kind >= 0 && kind < PPCC_SCHED_COUNT ? &sched_rows[kind] : NULL;
}

static int sched_rank_of(int placement, int p, int s, int *chunk)
{
	if (placement == PPCC_PLACE_V) {
		*chunk = s < p ? 0 : 1;
		return s < p ? s : 2 * p - 1 - s;
	}
	*chunk = s / p;
	return s % p;
}

void ppcc_sched_place(ppcc_stage_info *stages, int kind, int ranks,
		      int chunks)
{
	const sched_row *row = sched_row_of(kind);
	int placement = row && ppcc_sched_kind(kind)->placement == PPCC_PLACE_V && chunks == 2
				? PPCC_PLACE_V : PPCC_PLACE_LOOPED;
	for (int s = 0; s < ranks * chunks; s++) {
		int c;
		stages[s].stage = s;
		stages[s].rank = sched_rank_of(placement, ranks, s, &c);
		stages[s].chunk = c;
	}
}

int ppcc_sched_check(int kind, int ranks, int chunks, int microbatches,
		     int group_size, ppcc_sched_complain_fn complain,
		     void *user)
{
	const sched_row *row = sched_row_of(kind);
	char msg[256];
	int n = 0;
	if (!row) {
		snprintf(msg, sizeof msg, "unknown schedule kind %d", kind);
		complain(PPCC_SET_KIND, msg, user);
		return 1;
	}
	const ppcc_sched_kind_info *k = ppcc_sched_kind(kind);
	if (chunks < k->min_chunks || chunks > k->max_chunks) {
		if (k->min_chunks == k->max_chunks && k->min_chunks == 1) {
			char with[128] = "";
			size_t len = 0;
			for (int j = 0; j < PPCC_SCHED_COUNT && len < sizeof with; j++)
				if (ppcc_sched_kind(j)->max_chunks > 1) {
					int w = snprintf(with + len, sizeof with - len,
							 "%s%s", len ? ", " : "",
							 ppcc_sched_kind(j)->name);
					if (w < 0)
						break;
					len += (size_t)w;
				}
			snprintf(msg, sizeof msg, "%d chunks per rank need a "
				 "schedule with chunks (%s); the schedule is %s",
				 chunks, with, k->name);
		}
		else if (k->min_chunks == k->max_chunks)
			snprintf(msg, sizeof msg, "the %s schedule needs "
				 "exactly %d chunks per rank; chunks is %d",
				 k->name, k->min_chunks, chunks);
		else
			snprintf(msg, sizeof msg, "the %s schedule needs at "
				 "least %d chunks per rank; chunks is %d",
				 k->name, k->min_chunks, chunks);
		complain(PPCC_SET_CHUNKS, msg, user);
		n++;
	}
	if (row->check) {
		sched_shape sh = {
			.kind = kind, .p = ranks, .v = chunks,
			.m = microbatches, .group = group_size,
			.S = ranks * chunks,
		};
		n += row->check(&sh, complain, user);
	}
	return n;
}

double ppcc_sched_bubble_ms(int kind, int ranks, int chunks,
			    int microbatches, double f, double b, double w)
{
	const sched_row *row = sched_row_of(kind);
	if (!row || !row->bubble || ranks < 1 || chunks < 1)
		return NAN;
	sched_shape sh = {.kind = kind, .p = ranks, .v = chunks,
			  .m = microbatches, .S = ranks * chunks};
	return row->bubble(&sh, f, b, w);
}

int64_t ppcc_sched_local_actions(int kind, int ranks, int chunks,
				 int microbatches, int group_size)
{
	const sched_row *row = sched_row_of(kind);
	if (!row || ranks < 1 || chunks < 1 || microbatches < 1)
		return 0;
	/* at most 4 such actions per (stage, mb): saturate well before */
	if ((double)ranks * chunks * microbatches * 8 >= 0x1p62)
		return INT64_MAX;
	int64_t S = (int64_t)ranks * chunks;
	sched_shape sh = {.kind = kind, .p = ranks, .v = chunks,
			  .m = microbatches, .S = (int)S,
			  .group = group_size > 0 ? group_size : ranks};
	if (row->count)
		return row->count(&sh);
	return S * microbatches * (ppcc_sched_kind(kind)->split_backward ? 3 : 2);
}

int ppcc_sched_receives_in_order(int kind, int ranks, int group_size)
{
	const sched_row *row = sched_row_of(kind);
	return row && row->receives_in_order &&
	       (!ppcc_sched_kind(kind)->uses_group || group_size == 0 || group_size == ranks);
}

sched_order_fn ppcc_sched_order_of(int kind)
{
	const sched_row *row = sched_row_of(kind);
	return row ? row->order : NULL;
}

/* For a kind whose ranks all idle the same (those that do not split the
 * backward): bubble / (work + bubble) with F = B = 1. */
double ppcc_bubble_closed_form(int kind, int ranks, int chunks,
			       int microbatches)
{
	const sched_row *row = sched_row_of(kind);
	if (!row || !row->bubble || ppcc_sched_kind(kind)->split_backward || ranks < 1 ||
	    chunks < 1 || microbatches < 1)
		return NAN;
	double bubble = ppcc_sched_bubble_ms(kind, ranks, chunks,
					     microbatches, 1, 1, 0);
	return bubble / (2.0 * chunks * microbatches + bubble);
}
