/*
 * group.c - where each SEND and RECV is posted when a rank runs grouped
 * (NCCL's discipline).
 *
 * Under NCCL a send completes only once the peer has posted the matching
 * receive, and a rank posts a group only after its previous group has
 * completed, so a schedule free of deadlock with non-blocking sends can
 * deadlock here.  A plan gives each communication action a point k: its
 * group is posted right before the rank's k-th compute action.  Receives
 * stay at their point; a send may move to later points, keeping its
 * buffer until then.  The plan comes from a dry run of every rank under
 * the rendezvous semantics, which moves the first blocked send one point
 * later until every rank finishes.
 * Contract: a plan found here is free of deadlock under any timing, and
 * every rank computes the same plan from the same (fingerprint-checked)
 * schedule; planning fails only if a blocked send is already at its
 * rank's last point.
 *
 * The argument: doc/design/group.md.
 */
#include <inttypes.h>
#include <string.h>

#include "rt.h"

typedef struct grp_op {
	int32_t rank, action;
} grp_op;

typedef struct grp_list {
	grp_op *ops;
	int n, cap;
} grp_list;

typedef struct grp_sim {
	const ppcc_schedule *s;
	int p, S, m;
	int32_t **point;     /* per rank, per action */
	uint8_t **posted;    /* per rank, per action */
	int32_t *n_compute;  /* per rank */
	int32_t *k;          /* per rank: current point */
	grp_list *cur;       /* per rank: the posted group */
	grp_list *carry;     /* per rank: sends moved to the next point */
	int32_t **first_at;  /* per rank: CSR of actions by initial point */
	int32_t **by_point;
	grp_op *send_of, *recv_of; /* per message key */
} grp_sim;

static int grp_is_comm(int op)
{
	return ppcc_op_is_comm(op);
}

static int grp_push(grp_list *l, grp_op op)
{
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 8;
		grp_op *n = ppcc_realloc(l->ops, (size_t)cap * sizeof *n);
		if (!n)
			return PPCC_RT_ENOMEM;
		l->ops = n;
		l->cap = cap;
	}
	l->ops[l->n++] = op;
	return 0;
}

/* The message key of a communication action (ppcc_message_key); the
 * schedule is valid, so it is in [0, 2 * S * m). */
static size_t grp_key(const grp_sim *g, const ppcc_action *a)
{
	return (size_t)ppcc_message_key(a, g->S, g->m);
}

static const ppcc_action *grp_action(const grp_sim *g, grp_op op)
{
	return &g->s->ranks[op.rank].actions[op.action];
}

static grp_op grp_partner(const grp_sim *g, grp_op op)
{
	const ppcc_action *a = grp_action(g, op);
	size_t key = grp_key(g, a);
	return a->op == PPCC_OP_SEND_F || a->op == PPCC_OP_SEND_B
		       ? g->recv_of[key] : g->send_of[key];
}

static int grp_done(const grp_sim *g, grp_op op)
{
	grp_op q = grp_partner(g, op);
	return g->posted[q.rank][q.action];
}

/* Posts group k of rank r: the sends carried over and the actions whose
 * point is k. */
static int grp_post(grp_sim *g, int r)
{
	int err;
	grp_list *cur = &g->cur[r];
	cur->n = 0;
	for (int i = 0; i < g->carry[r].n; i++)
		if ((err = grp_push(cur, g->carry[r].ops[i])) < 0)
			return err;
	g->carry[r].n = 0;
	int k = g->k[r];
	for (int j = g->first_at[r][k]; j < g->first_at[r][k + 1]; j++) {
		grp_op op = {r, g->by_point[r][j]};
		if ((err = grp_push(cur, op)) < 0)
			return err;
	}
	for (int i = 0; i < cur->n; i++)
		g->posted[r][cur->ops[i].action] = 1;
	return 0;
}

static void grp_free(grp_sim *g)
{
	for (int r = 0; r < g->p; r++) {
		if (g->point)
			ppcc_free(g->point[r]);
		if (g->posted)
			ppcc_free(g->posted[r]);
		if (g->first_at)
			ppcc_free(g->first_at[r]);
		if (g->by_point)
			ppcc_free(g->by_point[r]);
		if (g->cur)
			ppcc_free(g->cur[r].ops);
		if (g->carry)
			ppcc_free(g->carry[r].ops);
	}
	ppcc_free(g->point);
	ppcc_free(g->posted);
	ppcc_free(g->first_at);
	ppcc_free(g->by_point);
	ppcc_free(g->cur);
	ppcc_free(g->carry);
	ppcc_free(g->n_compute);
	ppcc_free(g->k);
	ppcc_free(g->send_of);
	ppcc_free(g->recv_of);
}

static int grp_setup(grp_sim *g)
{
	const ppcc_schedule *s = g->s;
	size_t n_keys = 2 * (size_t)g->S * (size_t)g->m;
	size_t p = (size_t)g->p;
	g->point = ppcc_calloc(p, sizeof *g->point);
	g->posted = ppcc_calloc(p, sizeof *g->posted);
	g->first_at = ppcc_calloc(p, sizeof *g->first_at);
	g->by_point = ppcc_calloc(p, sizeof *g->by_point);
	g->cur = ppcc_calloc(p, sizeof *g->cur);
	g->carry = ppcc_calloc(p, sizeof *g->carry);
	g->n_compute = ppcc_calloc(p, sizeof *g->n_compute);
	g->k = ppcc_calloc(p, sizeof *g->k);
	g->send_of = ppcc_calloc(n_keys, sizeof *g->send_of);
	g->recv_of = ppcc_calloc(n_keys, sizeof *g->recv_of);
	if (!g->point || !g->posted || !g->first_at || !g->by_point ||
	    !g->cur || !g->carry || !g->n_compute || !g->k || !g->send_of ||
	    !g->recv_of)
		return PPCC_RT_ENOMEM;
	for (int r = 0; r < g->p; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		size_t n = (size_t)rs->n_actions;
		int nc = 0;
		g->point[r] = ppcc_calloc(n, sizeof **g->point);
		g->posted[r] = ppcc_calloc(n, sizeof **g->posted);
		g->by_point[r] = ppcc_calloc(n, sizeof **g->by_point);
		if (!g->point[r] || !g->posted[r] || !g->by_point[r])
			return PPCC_RT_ENOMEM;
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			if (!grp_is_comm(a->op)) {
				g->point[r][i] = -1;
				nc++;
				continue;
			}
			g->point[r][i] = nc;
			grp_op op = {r, i};
			size_t key = grp_key(g, a);
			if (a->op == PPCC_OP_SEND_F || a->op == PPCC_OP_SEND_B)
				g->send_of[key] = op;
			else
				g->recv_of[key] = op;
		}
		g->n_compute[r] = nc;
		g->first_at[r] = ppcc_calloc((size_t)nc + 2, sizeof **g->first_at);
		if (!g->first_at[r])
			return PPCC_RT_ENOMEM;
		for (int i = 0; i < rs->n_actions; i++)
			if (g->point[r][i] >= 0)
				g->first_at[r][g->point[r][i] + 1]++;
		for (int k = 0; k <= nc; k++)
			g->first_at[r][k + 1] += g->first_at[r][k];
		int32_t *fill = ppcc_calloc((size_t)nc + 1, sizeof *fill);
		if (!fill)
			return PPCC_RT_ENOMEM;
		for (int i = 0; i < rs->n_actions; i++) {
			int k = g->point[r][i];
			if (k >= 0)
				g->by_point[r][g->first_at[r][k] + fill[k]++] = i;
		}
		ppcc_free(fill);
	}
	return 0;
}

/* Advances rank r as far as its groups complete; *moved when it did. */
static int grp_advance(grp_sim *g, int r, int *moved)
{
	int err;
	while (g->k[r] <= g->n_compute[r]) {
		const grp_list *cur = &g->cur[r];
		for (int i = 0; i < cur->n; i++)
			if (!grp_done(g, cur->ops[i]))
				return 0;
		g->k[r]++;
		*moved = 1;
		if (g->k[r] > g->n_compute[r]) {
			g->cur[r].n = 0;
			break;
		}
		if ((err = grp_post(g, r)) < 0)
			return err;
	}
	return 0;
}

/* Moves a blocked send to its rank's next point; 0 if none can move.
 * Preferred: the sends of the first rank whose group waits for nothing
 * else, so that the move lets that rank go on (moving a send of a rank
 * that also waits for a receive only delays its partner); otherwise the
 * first blocked send. */
static int grp_move_one(grp_sim *g)
{
	for (int pass = 0; pass < 2; pass++)
		for (int r = 0; r < g->p; r++) {
			if (g->k[r] >= g->n_compute[r])
				continue;
			grp_list *cur = &g->cur[r];
			int sends_only = 1;
			for (int i = 0; i < cur->n && sends_only; i++) {
				int o = grp_action(g, cur->ops[i])->op;
				if (!grp_done(g, cur->ops[i]) &&
				    !ppcc_op_traits_of(o)->send)
					sends_only = 0;
			}
			if (pass == 0 && !sends_only)
				continue;
			for (int i = 0; i < cur->n; i++) {
				grp_op op = cur->ops[i];
				int o = grp_action(g, op)->op;
				if (!ppcc_op_traits_of(o)->send || grp_done(g, op))
					continue;
				g->posted[r][op.action] = 0;
				g->point[r][op.action] = g->k[r] + 1;
				memmove(&cur->ops[i], &cur->ops[i + 1],
					(size_t)(cur->n - i - 1) * sizeof *cur->ops);
				cur->n--;
				if (grp_push(&g->carry[r], op) < 0)
					return PPCC_RT_ENOMEM;
				return 1;
			}
		}
	return 0;
}

int ppcc_rt_group_plan(int32_t *out_point, ppcc_rt *rt)
{
	grp_sim g;
	int err = 0;
	memset(&g, 0, sizeof g);
	g.s = rt->s;
	g.p = rt->s->n_ranks;
	g.S = rt->s->n_stages;
	g.m = rt->s->n_microbatches;
	if ((err = grp_setup(&g)) < 0)
		goto out;
	for (int r = 0; r < g.p; r++)
		if ((err = grp_post(&g, r)) < 0)
			goto out;
	for (;;) {
		int moved = 0, finished = 1;
		for (int r = 0; r < g.p; r++) {
			if ((err = grp_advance(&g, r, &moved)) < 0)
				goto out;
			finished &= g.k[r] > g.n_compute[r];
		}
		if (finished)
			break;
		if (moved)
			continue;
		if ((err = grp_move_one(&g)) < 0)
			goto out;
		if (err == 0) {
			int r = 0;
			while (g.k[r] > g.n_compute[r])
				r++;
			const grp_list *cur = &g.cur[r];
			const ppcc_action *a = cur->n ? grp_action(&g, cur->ops[0])
						      : NULL;
			ppcc_rt_report(rt, "no deadlock-free grouping: rank %d "
				       "stays blocked at its group %d (%s stage "
				       "%" PRId32 " mb %" PRId32 ")", r,
				       (int)g.k[r], a ? ppcc_op_name(a->op) : "-",
				       a ? a->stage : -1, a ? a->mb : -1);
			err = PPCC_RT_EINPUT;
			goto out;
		}
		err = 0;
	}
	memcpy(out_point, g.point[rt->tx.rank],
	       (size_t)rt->s->ranks[rt->tx.rank].n_actions * sizeof *out_point);
out:
	grp_free(&g);
	return err;
}
