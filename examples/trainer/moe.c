/*
 * moe.c - the mixture-of-experts layer of moe.h: its arithmetic, the
 * serial reference, and the layer inside a pipeline stage, its tokens
 * moved between the replicas of an expert group by ppcc_rt_alltoallv.
 *
 * A forward dispatches: the counts of token rows for each member, then
 * the rows (the token's input and its expert's number), every member's
 * rows in (token, choice) order; the owner computes each row and sends
 * the outputs back in the order it got them.  The backward sends each
 * row's output gradient the same way, with the forward's counts, and
 * gets the input gradients back; the owner keeps each row's dz for the
 * weight gradient, which needs no message (a split backward's W).
 * Every sum runs in one fixed order (moe.h), so the serial reference,
 * which recomputes the routing and keeps every microbatch's dz until
 * the step's end, gets the bits of the parallel run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "moe.h"

enum { MW = MOE_WIDTH, MB = MLP_BATCH };

static size_t row_cap(const mlp_moe *m)
{
	return (size_t)m->ep * MB * (size_t)m->K;
}

void moe_free(mlp *net)
{
	mlp_moe *m = net->moe;
	if (!m)
		return;
	free(m->wr);
	free(m->br);
	free(m->gwr);
	free(m->gbr);
	free(m->we);
	free(m->be);
	free(m->gwe);
	free(m->gbe);
	free(m->s_sel);
	free(m->s_x);
	free(m->s_dz);
	free(m);
	net->moe = NULL;
}

int moe_init(mlp *net, int E, int K, int ep, int D)
{
	mlp_moe *m = calloc(1, sizeof *m);
	if (!m)
		return -1;
	net->moe = m;
	*m = (mlp_moe){E, K, ep, D, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
		       NULL, NULL, NULL, NULL};
	size_t nr = (size_t)E * MW, ne = nr * MW;
	m->wr = calloc(nr, sizeof *m->wr);
	m->gwr = calloc(nr, sizeof *m->gwr);
	m->br = calloc((size_t)E, sizeof *m->br);
	m->gbr = calloc((size_t)E, sizeof *m->gbr);
	m->we = calloc(ne, sizeof *m->we);
	m->gwe = calloc(ne, sizeof *m->gwe);
	m->be = calloc(nr, sizeof *m->be);
	m->gbe = calloc(nr, sizeof *m->gbe);
	if (!m->wr || !m->gwr || !m->br || !m->gbr || !m->we || !m->gwe ||
	    !m->be || !m->gbe) {
		moe_free(net);
		return -1;
	}
	for (int e = 0; e < E; e++) {
		m->br[e] = 0.1 * cos(1.7 * e);
		for (int i = 0; i < MW; i++)
			m->wr[e * MW + i] = 0.8 * sin(0.9 * e + 0.4 * i + 0.2) / sqrt((double)MW);
		for (int o = 0; o < MW; o++) {
			m->be[e * MW + o] = 0.05 * cos(MOE_LAYER + o + 0.37 * e);
			for (int i = 0; i < MW; i++)
				m->we[((size_t)e * MW + o) * MW + i] =
					0.9 * sin(1.3 * MOE_LAYER + 0.7 * o + 0.3 * i + 0.61 * e) /
					sqrt((double)MW);
		}
	}
	return 0;
}

/* ---- the arithmetic ------------------------------------------------------ */

/* Each token's softmax over the router's logits and its top K experts,
 * largest first, ties to the lower index. */
static void moe_route(const mlp_moe *m, const double *x, double *prob, int *sel)
{
	int E = m->E, K = m->K;
	for (int k = 0; k < MB; k++) {
		double lg[MOE_MAX_EXPERTS], mx, sum = 0;
		int taken[MOE_MAX_EXPERTS] = {0};
		for (int e = 0; e < E; e++) {
			double z = m->br[e];
			for (int i = 0; i < MW; i++)
				z += m->wr[e * MW + i] * x[k * MW + i];
			lg[e] = z;
		}
		mx = lg[0];
		for (int e = 1; e < E; e++)
			if (lg[e] > mx)
				mx = lg[e];
		for (int e = 0; e < E; e++) {
			lg[e] = exp(lg[e] - mx);
			sum += lg[e];
		}
		for (int e = 0; e < E; e++)
			prob[k * E + e] = lg[e] / sum;
		for (int j = 0; j < K; j++) {
			int best = -1;
			for (int e = 0; e < E; e++)
				if (!taken[e] && (best < 0 || prob[k * E + e] > prob[k * E + best]))
					best = e;
			taken[best] = 1;
			sel[k * K + j] = best;
		}
	}
}

/* One row through expert e: y = tanh(W_e x + b_e). */
static void expert_forward(const mlp_moe *m, int e, const double *x, double *y)
{
	const double *w = &m->we[(size_t)e * MW * MW], *b = &m->be[e * MW];
	for (int o = 0; o < MW; o++) {
		double z = b[o];
		for (int i = 0; i < MW; i++)
			z += w[o * MW + i] * x[i];
		y[o] = tanh(z);
	}
}

/* h = sum_j p[e_j] y_j, in j order; y holds B x K rows. */
static void moe_combine(const mlp_moe *m, const double *prob, const int *sel,
			const double *y, double *h)
{
	int E = m->E, K = m->K;
	for (int k = 0; k < MB; k++)
		for (int o = 0; o < MW; o++) {
			double s = 0;
			for (int j = 0; j < K; j++)
				s += prob[k * E + sel[k * K + j]] * y[(k * K + j) * MW + o];
			h[k * MW + o] = s;
		}
}

/* From gh: each row's output gradient dy = p[e_j] gh, and the router's
 * logit gradients through the softmax. */
static void moe_backward_origin(const mlp_moe *m, const double *prob,
				const int *sel, const double *y, const double *gh,
				double *dy, double *dlogit)
{
	int E = m->E, K = m->K;
	for (int k = 0; k < MB; k++) {
		double dp[MOE_MAX_EXPERTS] = {0}, dot = 0;
		for (int j = 0; j < K; j++) {
			int e = sel[k * K + j];
			double s = 0;
			for (int o = 0; o < MW; o++) {
				dy[(k * K + j) * MW + o] = prob[k * E + e] * gh[k * MW + o];
				s += gh[k * MW + o] * y[(k * K + j) * MW + o];
			}
			dp[e] = s;
		}
		for (int e = 0; e < E; e++)
			dot += prob[k * E + e] * dp[e];
		for (int e = 0; e < E; e++)
			dlogit[k * E + e] = prob[k * E + e] * (dp[e] - dot);
	}
}

/* One row back through expert e: dz = dy (1 - y^2), gx = W_e^T dz. */
static void expert_backward_input(const mlp_moe *m, int e, const double *y,
				  const double *dy, double *dz, double *gx)
{
	const double *w = &m->we[(size_t)e * MW * MW];
	for (int o = 0; o < MW; o++)
		dz[o] = dy[o] * (1 - y[o] * y[o]);
	for (int i = 0; i < MW; i++) {
		double s = 0;
		for (int o = 0; o < MW; o++)
			s += dz[o] * w[o * MW + i];
		gx[i] = s;
	}
}

/* gx = Wr^T dlogit, then each choice's input gradient added in j
 * order. */
static void moe_input_grad(const mlp_moe *m, const double *dlogit,
			   const double *gxe, double *gx)
{
	int E = m->E, K = m->K;
	for (int k = 0; k < MB; k++)
		for (int i = 0; i < MW; i++) {
			double s = 0;
			for (int e = 0; e < E; e++)
				s += dlogit[k * E + e] * m->wr[e * MW + i];
			for (int j = 0; j < K; j++)
				s += gxe[(k * K + j) * MW + i];
			gx[k * MW + i] = s;
		}
}

/* The router's gradient of one microbatch, added as one sum per value
 * (as mlp_layer_backward_weight). */
static void moe_router_weight(mlp_moe *m, const double *x, const double *dlogit)
{
	int E = m->E;
	for (int e = 0; e < E; e++) {
		double sb = 0;
		for (int k = 0; k < MB; k++)
			sb += dlogit[k * E + e];
		m->gbr[e] += sb;
		for (int i = 0; i < MW; i++) {
			double s = 0;
			for (int k = 0; k < MB; k++)
				s += dlogit[k * E + e] * x[k * MW + i];
			m->gwr[e * MW + i] += s;
		}
	}
}

/* Expert rows' gradient: one sum per value over the n rows in order,
 * added to gw (W x W) and gb (W).  Called for every expert and
 * microbatch, rows or none, on both sides: adding a zero is not always
 * a no-op (-0 + 0 is +0). */
static void expert_accumulate(const double *const *xs, const double *const *dzs,
			      int n, double *gw, double *gb)
{
	for (int o = 0; o < MW; o++) {
		double sb = 0;
		for (int r = 0; r < n; r++)
			sb += dzs[r][o];
		gb[o] += sb;
		for (int i = 0; i < MW; i++) {
			double s = 0;
			for (int r = 0; r < n; r++)
				s += dzs[r][o] * xs[r][i];
			gw[o * MW + i] += s;
		}
	}
}

void moe_update(mlp *net)
{
	mlp_moe *m = net->moe;
	size_t nr = (size_t)m->E * MW, ne = nr * MW;
	for (size_t j = 0; j < nr; j++) {
		m->wr[j] -= MLP_LR * m->gwr[j];
		m->gwr[j] = 0;
		m->be[j] -= MLP_LR * m->gbe[j];
		m->gbe[j] = 0;
	}
	for (int e = 0; e < m->E; e++) {
		m->br[e] -= MLP_LR * m->gbr[e];
		m->gbr[e] = 0;
	}
	for (size_t j = 0; j < ne; j++) {
		m->we[j] -= MLP_LR * m->gwe[j];
		m->gwe[j] = 0;
	}
}

void moe_print_params(FILE *f, const mlp *net)
{
	const mlp_moe *m = net->moe;
	size_t nr = (size_t)m->E * MW;
	fprintf(f, "param %d", MOE_LAYER);
	for (size_t j = 0; j < nr; j++)
		fprintf(f, " %a", m->wr[j]);
	for (int e = 0; e < m->E; e++)
		fprintf(f, " %a", m->br[e]);
	for (int e = 0; e < m->E; e++) {
		for (int j = 0; j < MW * MW; j++)
			fprintf(f, " %a", m->we[(size_t)e * MW * MW + (size_t)j]);
		for (int o = 0; o < MW; o++)
			fprintf(f, " %a", m->be[e * MW + o]);
	}
	fprintf(f, "\n");
}

/* ---- the serial reference -------------------------------------------------- */

int moe_serial_begin(mlp *net)
{
	mlp_moe *m = net->moe;
	size_t rows = (size_t)net->m * MB * (size_t)m->K;
	if (m->s_sel)
		return 0;
	m->s_sel = calloc(rows, sizeof *m->s_sel);
	m->s_x = calloc((size_t)net->m * MB * MW, sizeof *m->s_x);
	m->s_dz = calloc(rows * MW, sizeof *m->s_dz);
	return m->s_sel && m->s_x && m->s_dz ? 0 : -1;
}

void moe_serial_forward(mlp *net, int gmb, const double *x, double *h)
{
	mlp_moe *m = net->moe;
	double prob[MB * MOE_MAX_EXPERTS], y[MB * MOE_MAX_EXPERTS * MW] = {0};
	int *sel = &m->s_sel[(size_t)gmb * MB * (size_t)m->K];
	moe_route(m, x, prob, sel);
	for (int r = 0; r < MB * m->K; r++)
		expert_forward(m, sel[r], &x[r / m->K * MW], &y[r * MW]);
	moe_combine(m, prob, sel, y, h);
	memcpy(&m->s_x[(size_t)gmb * MB * MW], x, MB * MW * sizeof *x);
}

void moe_serial_backward(mlp *net, int gmb, const double *x, const double *gh,
			 double *gx)
{
	mlp_moe *m = net->moe;
	double prob[MB * MOE_MAX_EXPERTS], dlogit[MB * MOE_MAX_EXPERTS];
	double y[MB * MOE_MAX_EXPERTS * MW] = {0}, dy[MB * MOE_MAX_EXPERTS * MW];
	double gxe[MB * MOE_MAX_EXPERTS * MW];
	int sel[MB * MOE_MAX_EXPERTS];
	double *dz = &m->s_dz[(size_t)gmb * MB * (size_t)m->K * MW];
	/* the forward's routing and outputs, recomputed: the same bits */
	moe_route(m, x, prob, sel);
	for (int r = 0; r < MB * m->K; r++)
		expert_forward(m, sel[r], &x[r / m->K * MW], &y[r * MW]);
	moe_backward_origin(m, prob, sel, y, gh, dy, dlogit);
	for (int r = 0; r < MB * m->K; r++)
		expert_backward_input(m, sel[r], &y[r * MW], &dy[r * MW],
				      &dz[r * MW], &gxe[r * MW]);
	moe_router_weight(m, x, dlogit);
	if (gx)
		moe_input_grad(m, dlogit, gxe, gx);
}

void moe_serial_finish(mlp *net)
{
	mlp_moe *m = net->moe;
	int E = m->E, K = m->K, ep = m->ep;
	int shards = net->shards > 1 ? net->shards : 1, per = net->m / shards;
	int groups = shards / ep;
	size_t ne = (size_t)E * MW * MW, nb = (size_t)E * MW;
	double *gw = calloc(ne, sizeof *gw), *gb = calloc(nb, sizeof *gb);
	const double *xs[MOE_MAX_EP * MB], *dzs[MOE_MAX_EP * MB];
	if (!gw || !gb)
		abort(); /* a few kilobytes; the trainer's sizes are fixed */
	for (int g = 0; g < groups; g++) {
		memset(gw, 0, ne * sizeof *gw);
		memset(gb, 0, nb * sizeof *gb);
		for (int j = 0; j < per; j++)
			for (int e = 0; e < E; e++) {
				int n = 0;
				/* the group's replicas in order, their tokens
				 * in order: the rows the owner gets */
				for (int q = 0; q < ep; q++) {
					int gmb = (g * ep + q) * per + j;
					const int *sel = &m->s_sel[(size_t)gmb * MB * (size_t)K];
					for (int r = 0; r < MB * K; r++)
						if (sel[r] == e) {
							xs[n] = &m->s_x[((size_t)gmb * MB + (size_t)(r / K)) * MW];
							dzs[n++] = &m->s_dz[((size_t)gmb * MB * (size_t)K + (size_t)r) * MW];
						}
				}
				expert_accumulate(xs, dzs, n, &gw[(size_t)e * MW * MW],
						  &gb[e * MW]);
			}
		/* the groups' copies added in group order */
		for (size_t i = 0; i < ne; i++)
			m->gwe[i] = g ? m->gwe[i] + gw[i] : gw[i];
		for (size_t i = 0; i < nb; i++)
			m->gbe[i] = g ? m->gbe[i] + gb[i] : gb[i];
	}
	free(gw);
	free(gb);
}

/* ---- inside a pipeline stage ----------------------------------------------- */

struct moe_stash {
	mlp *net;
	int m;
	double *prob, *dlogit; /* per mb: B x E */
	int *sel;              /* per mb: B x K */
	double *y;             /* per mb: B x K rows back from the owners */
	size_t *send_n, *recv_n; /* per mb: rows to, from each member */
	double *rows;          /* per mb: the rows got, W + 1 (x, expert) */
	double *ry, *rdz;      /* per mb: their outputs, their dz */
	double *sbuf, *rbuf, *gxe; /* one call's */
};

void moe_link_init(moe_link *out, const mlp *net, ppcc_rt *rt, int base,
		   int replica)
{
	const mlp_moe *m = net->moe;
	int ep = m->ep, g = replica / ep;
	memset(out, 0, sizeof *out);
	out->rt = rt;
	out->n = ep;
	out->me = replica % ep;
	for (int q = 0; q < ep; q++)
		out->group[q] = base + g * ep + q;
	out->n_copies = m->replicas / ep;
	out->copy_me = g;
	for (int h = 0; h < out->n_copies; h++)
		out->copies[h] = base + h * ep + out->me;
}

int moe_stash_new(moe_stash **out, const mlp *net)
{
	const mlp_moe *m = net->moe;
	size_t M = (size_t)net->m, E = (size_t)m->E, K = (size_t)m->K;
	size_t cap = row_cap(m);
	moe_stash *st = calloc(1, sizeof *st);
	*out = NULL;
	if (!st)
		return -1;
	st->net = (mlp *)net;
	st->m = net->m;
	st->prob = calloc(M * MB * E, sizeof *st->prob);
	st->dlogit = calloc(M * MB * E, sizeof *st->dlogit);
	st->sel = calloc(M * MB * K, sizeof *st->sel);
	st->y = calloc(M * MB * K * MW, sizeof *st->y);
	st->send_n = calloc(M * (size_t)m->ep, sizeof *st->send_n);
	st->recv_n = calloc(M * (size_t)m->ep, sizeof *st->recv_n);
	st->rows = calloc(M * cap * (MW + 1), sizeof *st->rows);
	st->ry = calloc(M * cap * MW, sizeof *st->ry);
	st->rdz = calloc(M * cap * MW, sizeof *st->rdz);
	st->sbuf = calloc(cap * (MW + 1), sizeof *st->sbuf);
	st->rbuf = calloc(cap * (MW + 1), sizeof *st->rbuf);
	st->gxe = calloc(MB * K * MW, sizeof *st->gxe);
	if (!st->prob || !st->dlogit || !st->sel || !st->y || !st->send_n ||
	    !st->recv_n || !st->rows || !st->ry || !st->rdz || !st->sbuf ||
	    !st->rbuf || !st->gxe) {
		moe_stash_free(st);
		return -1;
	}
	*out = st;
	return 0;
}

void moe_stash_free(moe_stash *st)
{
	if (!st)
		return;
	free(st->prob);
	free(st->dlogit);
	free(st->sel);
	free(st->y);
	free(st->send_n);
	free(st->recv_n);
	free(st->rows);
	free(st->ry);
	free(st->rdz);
	free(st->sbuf);
	free(st->rbuf);
	free(st->gxe);
	free(st);
}

/* One all-to-all of the expert group, counts in elements of elem
 * bytes, each member's elements packed in member order; a group of one
 * is a copy. */
static int moe_a2a(moe_link *l, void *out, const size_t *out_n,
		   const void *in, const size_t *in_n, size_t elem)
{
	size_t od[MOE_MAX_EP], id[MOE_MAX_EP], o = 0, i = 0;
	if (l->n == 1) {
		memcpy(out, in, in_n[0] * elem);
		return 0;
	}
	for (int q = 0; q < l->n; q++) {
		od[q] = o;
		id[q] = i;
		o += out_n[q];
		i += in_n[q];
	}
	return ppcc_rt_alltoallv(out, out_n, od, l->rt, in, in_n, id, elem,
				 l->group, l->n);
}

int moe_forward(moe_stash *st, moe_link *link, int mb, const double *x,
		double *h)
{
	mlp_moe *m = st->net->moe;
	int E = m->E, K = m->K, ep = m->ep, per = E / ep, err;
	size_t cap = row_cap(m), ones[MOE_MAX_EP], total = 0, n = 0;
	double *prob = &st->prob[(size_t)mb * MB * (size_t)E];
	int *sel = &st->sel[(size_t)mb * MB * (size_t)K];
	double *y = &st->y[(size_t)mb * MB * (size_t)K * MW];
	size_t *sn = &st->send_n[(size_t)mb * (size_t)ep];
	size_t *rn = &st->recv_n[(size_t)mb * (size_t)ep];
	double *rows = &st->rows[(size_t)mb * cap * (MW + 1)];
	double *ry = &st->ry[(size_t)mb * cap * MW];
	moe_route(m, x, prob, sel);
	for (int q = 0; q < ep; q++) {
		ones[q] = 1;
		sn[q] = 0;
		for (int r = 0; r < MB * K; r++) {
			if (sel[r] / per != q)
				continue;
			double *row = &st->sbuf[n++ * (MW + 1)];
			memcpy(row, &x[r / K * MW], MW * sizeof *row);
			row[MW] = sel[r];
			sn[q]++;
		}
	}
	link->rows_sent += n;
	link->rows_remote += n - sn[link->me];
	if ((err = moe_a2a(link, rn, ones, sn, ones, sizeof *sn)) != 0)
		return err;
	for (int q = 0; q < ep; q++)
		total += rn[q];
	if (total > cap)
		return -1;
	if ((err = moe_a2a(link, rows, rn, st->sbuf, sn,
			   (MW + 1) * sizeof(double))) != 0)
		return err;
	for (size_t r = 0; r < total; r++) {
		int e = (int)rows[r * (MW + 1) + MW];
		if (e / per != link->me)
			return -1; /* not this member's expert */
		expert_forward(m, e, &rows[r * (MW + 1)], &ry[r * MW]);
	}
	if ((err = moe_a2a(link, st->rbuf, sn, ry, rn, MW * sizeof(double))) != 0)
		return err;
	/* back in the order sent: member by member, (token, choice) */
	n = 0;
	for (int q = 0; q < ep; q++)
		for (int r = 0; r < MB * K; r++)
			if (sel[r] / per == q)
				memcpy(&y[r * MW], &st->rbuf[n++ * MW], MW * sizeof *y);
	moe_combine(m, prob, sel, y, h);
	return 0;
}

int moe_backward_input(moe_stash *st, moe_link *link, int mb, const double *gh,
		       double *gx)
{
	mlp_moe *m = st->net->moe;
	int E = m->E, K = m->K, ep = m->ep, per = E / ep, err;
	size_t cap = row_cap(m), total = 0, n = 0;
	const double *prob = &st->prob[(size_t)mb * MB * (size_t)E];
	const int *sel = &st->sel[(size_t)mb * MB * (size_t)K];
	const double *y = &st->y[(size_t)mb * MB * (size_t)K * MW];
	double *dlogit = &st->dlogit[(size_t)mb * MB * (size_t)E];
	const size_t *sn = &st->send_n[(size_t)mb * (size_t)ep];
	const size_t *rn = &st->recv_n[(size_t)mb * (size_t)ep];
	const double *rows = &st->rows[(size_t)mb * cap * (MW + 1)];
	const double *ry = &st->ry[(size_t)mb * cap * MW];
	double *rdz = &st->rdz[(size_t)mb * cap * MW];
	double dy[MB * MOE_MAX_EXPERTS * MW];
	moe_backward_origin(m, prob, sel, y, gh, dy, dlogit);
	for (int q = 0; q < ep; q++)
		for (int r = 0; r < MB * K; r++)
			if (sel[r] / per == q)
				memcpy(&st->sbuf[n++ * MW], &dy[r * MW], MW * sizeof *dy);
	if ((err = moe_a2a(link, st->rbuf, rn, st->sbuf, sn, MW * sizeof(double))) != 0)
		return err;
	for (int q = 0; q < ep; q++)
		total += rn[q];
	for (size_t r = 0; r < total; r++)
		expert_backward_input(m, (int)rows[r * (MW + 1) + MW], &ry[r * MW],
				      &st->rbuf[r * MW], &rdz[r * MW], &st->sbuf[r * MW]);
	if ((err = moe_a2a(link, st->rbuf, sn, st->sbuf, rn, MW * sizeof(double))) != 0)
		return err;
	n = 0;
	for (int q = 0; q < ep; q++)
		for (int r = 0; r < MB * K; r++)
			if (sel[r] / per == q)
				memcpy(&st->gxe[r * MW], &st->rbuf[n++ * MW],
				       MW * sizeof *st->gxe);
	if (gx)
		moe_input_grad(m, dlogit, st->gxe, gx);
	return 0;
}

void moe_backward_weight(moe_stash *st, moe_link *link, int mb, const double *x)
{
	mlp_moe *m = st->net->moe;
	int ep = m->ep, per = m->E / ep;
	size_t cap = row_cap(m), total = 0;
	const size_t *rn = &st->recv_n[(size_t)mb * (size_t)ep];
	const double *rows = &st->rows[(size_t)mb * cap * (MW + 1)];
	const double *rdz = &st->rdz[(size_t)mb * cap * MW];
	const double *xs[MOE_MAX_EP * MB], *dzs[MOE_MAX_EP * MB];
	moe_router_weight(m, x, &st->dlogit[(size_t)mb * MB * (size_t)m->E]);
	for (int q = 0; q < ep; q++)
		total += rn[q];
	/* each expert this member holds, its rows in the order got:
	 * member by member, token by token (moe.h) */
	for (int e = link->me * per; e < (link->me + 1) * per; e++) {
		int n = 0;
		for (size_t r = 0; r < total; r++)
			if ((int)rows[r * (MW + 1) + MW] == e) {
				xs[n] = &rows[r * (MW + 1)];
				dzs[n++] = &rdz[r * MW];
			}
		expert_accumulate(xs, dzs, n, &m->gwe[(size_t)e * MW * MW],
				  &m->gbe[e * MW]);
	}
}

/* The values of the experts member `me` holds: per experts of W x W
 * weights (or gradients), then per x W biases. */
static size_t block_len(const mlp_moe *m)
{
	return (size_t)(m->E / m->ep) * (MW * MW + MW);
}

static void block_pack(double *to, const double *w, const double *b,
		       const mlp_moe *m, int me)
{
	size_t per = (size_t)(m->E / m->ep);
	memcpy(to, &w[(size_t)me * per * MW * MW], per * MW * MW * sizeof *to);
	memcpy(&to[per * MW * MW], &b[(size_t)me * per * MW], per * MW * sizeof *to);
}

int moe_reduce_experts(mlp *net, moe_link *link)
{
	mlp_moe *m = net->moe;
	int nc = link->n_copies, err;
	size_t len = block_len(m), per = (size_t)(m->E / m->ep);
	size_t in_n[64], in_d[64], out_n[64], out_d[64];
	if (nc <= 1)
		return 0;
	double *mine = calloc(len, sizeof *mine), *all = calloc(len * (size_t)nc,
								sizeof *all);
	if (!mine || !all) {
		free(mine);
		free(all);
		return -1;
	}
	block_pack(mine, m->gwe, m->gbe, m, link->me);
	for (int h = 0; h < nc; h++) {
		in_n[h] = out_n[h] = len;
		in_d[h] = 0;
		out_d[h] = (size_t)h * len;
	}
	err = ppcc_rt_alltoallv(all, out_n, out_d, link->rt, mine, in_n, in_d,
				sizeof(double), link->copies, nc);
	if (err == 0) {
		/* (G0 + G1) + G2 ..., as moe_serial_finish */
		for (size_t i = 0; i < len; i++) {
			double s = all[i];
			for (int h = 1; h < nc; h++)
				s += all[(size_t)h * len + i];
			mine[i] = s;
		}
		memcpy(&m->gwe[(size_t)link->me * per * MW * MW], mine,
		       per * MW * MW * sizeof *mine);
		memcpy(&m->gbe[(size_t)link->me * per * MW], &mine[per * MW * MW],
		       per * MW * sizeof *mine);
	}
	free(mine);
	free(all);
	return err;
}

int moe_gather_experts(mlp *net, moe_link *link)
{
	mlp_moe *m = net->moe;
	int n = link->n, err;
	size_t len = block_len(m), per = (size_t)(m->E / m->ep);
	size_t in_n[MOE_MAX_EP], in_d[MOE_MAX_EP], out_n[MOE_MAX_EP], out_d[MOE_MAX_EP];
	if (n <= 1)
		return 0;
	double *mine = calloc(len, sizeof *mine), *all = calloc(len * (size_t)n,
								sizeof *all);
	if (!mine || !all) {
		free(mine);
		free(all);
		return -1;
	}
	block_pack(mine, m->we, m->be, m, link->me);
	for (int q = 0; q < n; q++) {
		in_n[q] = q == 0 ? len : 0;
		in_d[q] = 0;
		out_n[q] = link->me == 0 ? len : 0;
		out_d[q] = link->me == 0 ? (size_t)q * len : 0;
	}
	err = ppcc_rt_alltoallv(all, out_n, out_d, link->rt, mine, in_n, in_d,
				sizeof(double), link->group, n);
	if (err == 0 && link->me == 0)
		for (int q = 1; q < n; q++) {
			const double *blk = &all[(size_t)q * len];
			memcpy(&m->we[(size_t)q * per * MW * MW], blk,
			       per * MW * MW * sizeof *blk);
			memcpy(&m->be[(size_t)q * per * MW], &blk[per * MW * MW],
			       per * MW * sizeof *blk);
		}
	free(mine);
	free(all);
	return err;
}
