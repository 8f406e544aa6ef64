/*
 * sched.h - what the schedule kinds (src/sched/) share: the shape a
 * compute order is generated for, and each kind's order and constraints.
 *
 * A compute order is, for each rank, the list of its F, B, I and W
 * actions (peer -1, bytes 0) in the order the rank runs them; lower.c
 * adds the SEND/RECV actions the stage table's placement calls for.  A
 * kind's order has one F and either one B or one I and one W for each
 * (stage, microbatch) the rank holds, and, for a kind with overlapped
 * pairs, an OVERLAP_F_B marker right before each pair's F and B.
 */
#ifndef PPCC_SCHED_H
#define PPCC_SCHED_H

#include "ppcc.h"

typedef struct sched_shape {
	int kind;
	int p, v, m;
	int group;     /* the interleaved microbatch group, 0 resolved to p */
	int S;         /* p * v */
	const ppcc_stage_info *stages; /* placed (ppcc_sched_place) */
	const int32_t *stage_of;       /* [r * v + c]: chunk c of rank r */
	const void *arg;               /* the order's parameters, or NULL */
} sched_shape;

/* ppcc_schedule_build_unsealed with the order function's parameters
 * (sh->arg): choose.c passes its costs and memory caps this way.  The
 * fingerprint is left 0 (ppcc_schedule_validate_seal sets it). */
int ppcc_sched_build_with(ppcc_schedule *out, ppcc_arena *a, int kind,
			  int ranks, int chunks, int microbatches,
			  int group_size, const ppcc_stage_info *stages,
			  const void *arg);

/* The parameters of the auto order (auto.c).  costs NULL: F = I = W = 1
 * and free communication; cap NULL: at most p microbatches per rank
 * between F and W. */
typedef struct sched_auto_params {
	const ppcc_stage_cost *costs;
	const int32_t *cap;  /* per rank */
	int fill;            /* 1: a W in any idle gap; 0: only in a gap as
			      * long as the W, or when the cap is reached */
	/* When not NULL, the order is not played but copied: given[r] holds
	 * rank r's compute actions (F, I, W; 3 m of them), in order (the
	 * exact search's, src/sched/exact.c). */
	const ppcc_action *const *given;
} sched_auto_params;

/* A rank's compute order being written: room for cap actions; n counts
 * every one put, also past cap (lower.c then reports the miscount). */
typedef struct sched_list {
	ppcc_action *a;
	int32_t n, cap;
} sched_list;

/* Writes out[r] for every rank; returns 0 or PPCC_ENOMEM. */
typedef int (*sched_order_fn)(sched_list *out, const sched_shape *sh);

/* Reports each broken constraint (see ppcc_sched_check). */
typedef int (*sched_check_fn)(const sched_shape *sh,
			      ppcc_sched_complain_fn complain, void *user);

/* Closed-form bubble of the kind with equal stages and free
 * communication, as time: the largest idle time of any rank between its
 * first and last action, for forward f, backward b (or input gradient b
 * and weight gradient w for a split backward; b is then I alone).
 * NAN where none is known. */
typedef double (*sched_bubble_fn)(const sched_shape *sh, double f, double b,
				  double w);

/* The number of actions other than SEND/RECV that the kind's order puts
 * on all ranks together (computes and OVERLAP_F_B markers), in closed
 * form; shapes that pass the kind's check only. */
typedef int64_t (*sched_count_fn)(const sched_shape *sh);

/* The order function of a kind; NULL for an unknown kind. */
sched_order_fn ppcc_sched_order_of(int kind);

/* 1 when the kind's lowered orders already receive from each peer in the
 * order it sends (GPipe, 1F1B, interleaved with the group size p, given
 * or 0), so lower.c leaves them as they are; 0 otherwise and for an
 * unknown kind. */
int ppcc_sched_receives_in_order(int kind, int ranks, int group_size);

/* A compute order being written. */
static inline void sched_put(sched_list *l, int op, int stage, int mb)
{
	if (l->n < l->cap)
		l->a[l->n] = (ppcc_action){op, stage, mb, -1, 0};
	if (l->n < INT32_MAX)
		l->n++;
}

int ppcc_sched_order_gpipe(sched_list *out, const sched_shape *sh);
int ppcc_sched_order_1f1b(sched_list *out, const sched_shape *sh);
int ppcc_sched_order_interleaved(sched_list *out, const sched_shape *sh);
int ppcc_sched_check_interleaved(const sched_shape *sh,
				 ppcc_sched_complain_fn complain, void *user);
int ppcc_sched_order_combined(sched_list *out, const sched_shape *sh);
int ppcc_sched_check_combined(const sched_shape *sh,
			      ppcc_sched_complain_fn complain, void *user);
int64_t ppcc_sched_count_combined(const sched_shape *sh);
int ppcc_sched_order_zb_1p(sched_list *out, const sched_shape *sh);
int ppcc_sched_check_zb_1p(const sched_shape *sh,
			   ppcc_sched_complain_fn complain, void *user);
int ppcc_sched_order_zb_h2(sched_list *out, const sched_shape *sh);
int ppcc_sched_order_zb_v(sched_list *out, const sched_shape *sh);
int ppcc_sched_order_auto(sched_list *out, const sched_shape *sh);
int ppcc_sched_order_dualpipe_v(sched_list *out, const sched_shape *sh);
int ppcc_sched_check_dualpipe_v(const sched_shape *sh,
				ppcc_sched_complain_fn complain, void *user);
int64_t ppcc_sched_count_dualpipe_v(const sched_shape *sh);
/* DualPipeV's eight steps for rank r of p, m microbatches per chunk,
 * into out: stage[0] is the chunk the steps call 0 (the one filled
 * first), stage[1] the other; wq has room for 2m entries.
 * PPCC_EINTERNAL when the counts do not close (a shape the check
 * refuses). */
int ppcc_sched_dualpipe_rank(sched_list *out, const int32_t stage[2],
			     int p, int r, int m, int32_t *wq);
int ppcc_sched_order_dualpipe(sched_list *out, const sched_shape *sh);
int ppcc_sched_check_dualpipe(const sched_shape *sh,
			      ppcc_sched_complain_fn complain, void *user);
int64_t ppcc_sched_count_dualpipe(const sched_shape *sh);

#endif
