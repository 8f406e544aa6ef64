/* The numeric test pipeline of rt_pipe.h. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ppcc.h"
#include "rt_pipe.h"

#define IDX(p, s, mb) ((size_t)(s) * (size_t)(p)->m + (size_t)(mb))

static void violate(rt_pipe *p, const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&p->mu);
	if (p->violations++ == 0) {
		va_start(ap, fmt);
		vsnprintf(p->violation, sizeof p->violation, fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&p->mu);
}

static double x0_value(int mb, int i)
{
	return ((mb * 31 + i * 17) % 13) * 0.125 - 0.75;
}

rt_pipe *rt_pipe_new(int S, int m, int n_ranks, int width)
{
	rt_pipe *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	atomic_init(&p->scribbled, 0);
	p->S = S;
	p->m = m;
	p->n_ranks = n_ranks;
	size_t sm = (size_t)S * (size_t)m;
	p->rank_of = calloc((size_t)S, sizeof *p->rank_of);
	for (int s = 0; p->rank_of && s < S; s++)
		p->rank_of[s] = s % n_ranks;
	p->len = calloc((size_t)S + 1, sizeof *p->len);
	p->w = calloc((size_t)S, sizeof *p->w);
	p->c = calloc((size_t)S, sizeof *p->c);
	for (int s = 0; s <= S; s++)
		p->len[s] = width > 0 ? width : 3 + s % 3 + s;
	p->x0 = calloc((size_t)m * (size_t)p->len[0], sizeof *p->x0);
	p->dw = calloc(sm, sizeof *p->dw);
	p->dc = calloc(sm, sizeof *p->dc);
	p->loss = calloc((size_t)m, sizeof *p->loss);
	p->ref_dw = calloc(sm, sizeof *p->ref_dw);
	p->ref_dc = calloc(sm, sizeof *p->ref_dc);
	p->ref_loss = calloc((size_t)m, sizeof *p->ref_loss);
	p->stash = calloc(sm, sizeof *p->stash);
	p->stash_sum = calloc(sm, sizeof *p->stash_sum);
	p->fwd = calloc(sm, sizeof *p->fwd);
	p->bwd = calloc(sm, sizeof *p->bwd);
	p->inp = calloc(sm, sizeof *p->inp);
	p->wgt = calloc(sm, sizeof *p->wgt);
	p->log = calloc((size_t)n_ranks, sizeof *p->log);
	p->log_len = calloc((size_t)n_ranks, sizeof *p->log_len);
	p->log_cap = 4 * (int)sm + 16;
	for (int r = 0; r < n_ranks; r++)
		p->log[r] = calloc((size_t)p->log_cap, sizeof **p->log);
	p->sent = calloc(2 * sm, sizeof *p->sent);
	p->recvd = calloc(2 * sm, sizeof *p->recvd);
	pthread_mutex_init(&p->mu, NULL);
	p->fault_op = -1;
	for (int s = 0; s < S; s++) {
		p->w[s] = 0.875 + 0.0625 * s;
		p->c[s] = 0.015625 * (s + 1);
	}
	for (int mb = 0; mb < m; mb++)
		for (int i = 0; i < p->len[0]; i++)
			p->x0[(size_t)mb * (size_t)p->len[0] + (size_t)i] =
				x0_value(mb, i);

	/* The serial reference: the same operations in the same order. */
	int maxlen = 0;
	for (int s = 0; s <= S; s++)
		if (p->len[s] > maxlen)
			maxlen = p->len[s];
	double *xs = calloc((size_t)(S + 1) * (size_t)maxlen, sizeof *xs);
	double *g = calloc((size_t)maxlen, sizeof *g);
	double *gn = calloc((size_t)maxlen, sizeof *gn);
	for (int mb = 0; mb < m; mb++) {
		memcpy(xs, &p->x0[(size_t)mb * (size_t)p->len[0]],
		       (size_t)p->len[0] * sizeof *xs);
		for (int s = 0; s < S; s++) {
			const double *x = &xs[(size_t)s * (size_t)maxlen];
			double *y = &xs[(size_t)(s + 1) * (size_t)maxlen];
			for (int j = 0; j < p->len[s + 1]; j++)
				y[j] = p->w[s] * x[j % p->len[s]] + p->c[s] * j;
		}
		const double *yl = &xs[(size_t)S * (size_t)maxlen];
		double loss = 0;
		for (int j = 0; j < p->len[S]; j++)
			loss += yl[j] * yl[j];
		p->ref_loss[mb] = loss / 2;
		memcpy(g, yl, (size_t)p->len[S] * sizeof *g);
		for (int s = S - 1; s >= 0; s--) {
			const double *x = &xs[(size_t)s * (size_t)maxlen];
			double dw = 0, dc = 0;
			for (int j = 0; j < p->len[s + 1]; j++) {
				dw += g[j] * x[j % p->len[s]];
				dc += g[j] * j;
			}
			p->ref_dw[IDX(p, s, mb)] = dw;
			p->ref_dc[IDX(p, s, mb)] = dc;
			memset(gn, 0, (size_t)maxlen * sizeof *gn);
			for (int j = 0; j < p->len[s + 1]; j++)
				gn[j % p->len[s]] += p->w[s] * g[j];
			memcpy(g, gn, (size_t)maxlen * sizeof *g);
		}
	}
	free(xs);
	free(g);
	free(gn);
	return p;
}

void rt_pipe_free(rt_pipe *p)
{
	if (!p)
		return;
	for (int r = 0; r < p->n_ranks; r++)
		free(p->log[r]);
	free(p->log);
	free(p->log_len);
	free(p->rank_of);
	free(p->len);
	free(p->w);
	free(p->c);
	free(p->x0);
	free(p->dw);
	free(p->dc);
	free(p->loss);
	free(p->ref_dw);
	free(p->ref_dc);
	free(p->ref_loss);
	free(p->stash);
	free(p->stash_sum);
	free(p->fwd);
	free(p->bwd);
	free(p->inp);
	free(p->wgt);
	free(p->sent);
	free(p->recvd);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

void rt_pipe_reset(rt_pipe *p)
{
	size_t sm = (size_t)p->S * (size_t)p->m;
	memset(p->dw, 0, sm * sizeof *p->dw);
	memset(p->dc, 0, sm * sizeof *p->dc);
	memset(p->loss, 0, (size_t)p->m * sizeof *p->loss);
	memset(p->stash, 0, sm * sizeof *p->stash);
	memset(p->fwd, 0, sm * sizeof *p->fwd);
	memset(p->bwd, 0, sm * sizeof *p->bwd);
	memset(p->inp, 0, sm * sizeof *p->inp);
	memset(p->wgt, 0, sm * sizeof *p->wgt);
	memset(p->log_len, 0, (size_t)p->n_ranks * sizeof *p->log_len);
	p->violations = 0;
	p->violation[0] = '\0';
}

void rt_pipe_stage_table(const rt_pipe *p, ppcc_stage_info *out)
{
	memset(out, 0, sizeof *out * (size_t)p->S);
	for (int s = 0; s < p->S; s++) {
		out[s].stage = s;
		out[s].rank = s % p->n_ranks;
		out[s].chunk = s / p->n_ranks;
		out[s].first_layer = s;
		out[s].last_layer = s;
		out[s].recv_bytes = s > 0 ? (uint64_t)p->len[s] * sizeof(double) : 0;
		out[s].send_bytes = s < p->S - 1
					    ? (uint64_t)p->len[s + 1] * sizeof(double)
					    : 0;
	}
}

void rt_pipe_place(rt_pipe *p, const ppcc_schedule *s)
{
	for (int st = 0; st < p->S && st < s->n_stages; st++)
		p->rank_of[st] = s->stages[st].rank;
}

static void log_call(rt_pipe *p, int op, int stage, int mb)
{
	int r = p->rank_of[stage];
	if (p->log_len[r] < p->log_cap)
		p->log[r][p->log_len[r]++] = op * 1000000 + stage * 1000 + mb;
}

/* The configured fault, if this call is the one; returns the callback's
 * return value. */
static int fault(rt_pipe *p, int op, int stage, int mb)
{
	if (op != p->fault_op || stage != p->fault_stage || mb != p->fault_mb)
		return 0;
	if (p->fault_kill)
		raise(SIGKILL);
	if (p->fault_wait) {
		p->fault_wait(p->fault_wait_user);
	} else if (p->fault_sleep_s > 0) {
		struct timespec ts;
		ts.tv_sec = (time_t)p->fault_sleep_s;
		ts.tv_nsec = (long)((p->fault_sleep_s - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
	return p->fault_ret;
}

static double sum_of(const double *x, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += x[i] * (i + 1);
	return s;
}

static const double *input_of(rt_pipe *p, int stage, int mb, const void *in)
{
	return stage == 0 ? &p->x0[(size_t)mb * (size_t)p->len[0]] : in;
}

int rt_pipe_forward(int stage, int mb, const void *input, size_t input_bytes,
		    void *output, size_t output_bytes, void *user)
{
	rt_pipe *p = user;
	size_t want_in = stage > 0 ? (size_t)p->len[stage] * sizeof(double) : 0;
	size_t want_out = stage < p->S - 1
				  ? (size_t)p->len[stage + 1] * sizeof(double)
				  : 0;
	log_call(p, PPCC_OP_F, stage, mb);
	if (input_bytes != want_in || output_bytes != want_out ||
	    (stage == 0) != (input == NULL) ||
	    (stage == p->S - 1) != (output == NULL)) {
		violate(p, "forward %d/%d: input %p %zu bytes, output %p %zu",
			stage, mb, input, input_bytes, output, output_bytes);
		return 0;
	}
	if (p->fwd[IDX(p, stage, mb)]++)
		violate(p, "forward %d/%d twice", stage, mb);
	const double *x = input_of(p, stage, mb, input);
	int nin = p->len[stage], nout = p->len[stage + 1];
	p->stash[IDX(p, stage, mb)] = x;
	p->stash_sum[IDX(p, stage, mb)] = sum_of(x, nin);
	double loss = 0;
	for (int j = 0; j < nout; j++) {
		double y = p->w[stage] * x[j % nin] + p->c[stage] * j;
		if (output)
			((double *)output)[j] = y;
		else
			loss += y * y;
	}
	if (!output)
		p->loss[mb] = loss / 2;
	return fault(p, PPCC_OP_F, stage, mb);
}

/* dy for (stage, mb): grad_output, or y itself on the last stage. */
static const double *grad_of(rt_pipe *p, int stage, int mb, const double *x,
			     const void *grad_output, double *scratch)
{
	if (stage < p->S - 1)
		return grad_output;
	for (int j = 0; j < p->len[stage + 1]; j++)
		scratch[j] = p->w[stage] * x[j % p->len[stage]] + p->c[stage] * j;
	(void)mb;
	return scratch;
}

static int check_stash(rt_pipe *p, int stage, int mb, const char *what)
{
	const double *x = p->stash[IDX(p, stage, mb)];
	if (!p->fwd[IDX(p, stage, mb)] || !x) {
		violate(p, "%s %d/%d before its forward", what, stage, mb);
		return -1;
	}
	if (sum_of(x, p->len[stage]) != p->stash_sum[IDX(p, stage, mb)]) {
		violate(p, "%s %d/%d: forward's input changed before backward",
			what, stage, mb);
		return -1;
	}
	return 0;
}

static void weight_grads(rt_pipe *p, int stage, int mb, const double *x,
			 const double *g)
{
	double dw = 0, dc = 0;
	for (int j = 0; j < p->len[stage + 1]; j++) {
		dw += g[j] * x[j % p->len[stage]];
		dc += g[j] * j;
	}
	p->dw[IDX(p, stage, mb)] = dw;
	p->dc[IDX(p, stage, mb)] = dc;
}

static int backward_common(int op, int stage, int mb, const void *grad_output,
			   size_t grad_output_bytes, void *grad_input,
			   size_t grad_input_bytes, rt_pipe *p)
{
	size_t want_go = stage < p->S - 1
				 ? (size_t)p->len[stage + 1] * sizeof(double)
				 : 0;
	size_t want_gi = stage > 0 ? (size_t)p->len[stage] * sizeof(double) : 0;
	log_call(p, op, stage, mb);
	if (grad_output_bytes != want_go || grad_input_bytes != want_gi ||
	    (stage == p->S - 1) != (grad_output == NULL) ||
	    (stage == 0) != (grad_input == NULL)) {
		violate(p, "%s %d/%d: grad_output %p %zu bytes, grad_input %p %zu",
			ppcc_op_name(op), stage, mb, grad_output,
			grad_output_bytes, grad_input, grad_input_bytes);
		return 0;
	}
	int *count = op == PPCC_OP_B ? p->bwd : p->inp;
	if (count[IDX(p, stage, mb)]++)
		violate(p, "%s %d/%d twice", ppcc_op_name(op), stage, mb);
	if (check_stash(p, stage, mb, ppcc_op_name(op)) < 0)
		return 0;
	const double *x = p->stash[IDX(p, stage, mb)];
	double scratch[64];
	const double *g = grad_of(p, stage, mb, x, grad_output, scratch);
	if (op == PPCC_OP_B)
		weight_grads(p, stage, mb, x, g);
	if (grad_input) {
		double *gi = grad_input;
		int nin = p->len[stage];
		memset(gi, 0, (size_t)nin * sizeof *gi);
		for (int j = 0; j < p->len[stage + 1]; j++)
			gi[j % nin] += p->w[stage] * g[j];
	}
	return fault(p, op, stage, mb);
}

int rt_pipe_scribbling_forward(int stage, int mb, const void *input,
			       size_t input_bytes, void *output,
			       size_t output_bytes, void *user)
{
	rt_pipe *p = user;
	int ret = rt_pipe_forward(stage, mb, input, input_bytes, output,
				  output_bytes, user);
	if (stage == 0 && mb == 0)
		p->kept_output = output;
	if (stage == 0 && mb == 1 && p->kept_output) {
		p->kept_output[3] ^= 0x40;
		atomic_store(&p->scribbled, 1);
	}
	return ret;
}

int rt_pipe_backward(int stage, int mb, const void *grad_output,
		     size_t grad_output_bytes, void *grad_input,
		     size_t grad_input_bytes, void *user)
{
	return backward_common(PPCC_OP_B, stage, mb, grad_output,
			       grad_output_bytes, grad_input, grad_input_bytes,
			       user);
}

static int pipe_backward_input(int stage, int mb, const void *grad_output,
			       size_t grad_output_bytes, void *grad_input,
			       size_t grad_input_bytes, void *user)
{
	return backward_common(PPCC_OP_I, stage, mb, grad_output,
			       grad_output_bytes, grad_input, grad_input_bytes,
			       user);
}

static int pipe_backward_weight(int stage, int mb, const void *grad_output,
				size_t grad_output_bytes, void *user)
{
	rt_pipe *p = user;
	size_t want_go = stage < p->S - 1
				 ? (size_t)p->len[stage + 1] * sizeof(double)
				 : 0;
	log_call(p, PPCC_OP_W, stage, mb);
	if (grad_output_bytes != want_go ||
	    (stage == p->S - 1) != (grad_output == NULL)) {
		violate(p, "W %d/%d: grad_output %p %zu bytes", stage, mb,
			grad_output, grad_output_bytes);
		return 0;
	}
	if (!p->inp[IDX(p, stage, mb)])
		violate(p, "W %d/%d before its I", stage, mb);
	if (p->wgt[IDX(p, stage, mb)]++)
		violate(p, "W %d/%d twice", stage, mb);
	if (check_stash(p, stage, mb, "W") < 0)
		return 0;
	const double *x = p->stash[IDX(p, stage, mb)];
	double scratch[64];
	weight_grads(p, stage, mb, x, grad_of(p, stage, mb, x, grad_output, scratch));
	return fault(p, PPCC_OP_W, stage, mb);
}

static int pipe_loss(double *out_loss, int stage, int mb, void *user)
{
	rt_pipe *p = user;
	(void)stage;
	*out_loss = p->loss[mb];
	return 0;
}

void rt_pipe_fns(rt_pipe *p, ppcc_rt_stage_fns *out)
{
	for (int s = 0; s < p->S; s++) {
		out[s].forward = rt_pipe_forward;
		out[s].backward = rt_pipe_backward;
		out[s].backward_input = pipe_backward_input;
		out[s].backward_weight = pipe_backward_weight;
		out[s].loss = pipe_loss;
		out[s].user = p;
		out[s].version = PPCC_RT_STAGE_FNS_VERSION;
	}
}

void rt_pipe_on_message(const ppcc_rt_message *msg, void *user)
{
	rt_pipe *p = user;
	int k = msg->kind == PPCC_OP_SEND_F ? 0 : 1;
	int ok = msg->src_stage >= 0 && msg->src_stage < p->S &&
		 msg->mb >= 0 && msg->mb < p->m &&
		 msg->dst_stage == msg->src_stage + (k ? -1 : 1) &&
		 msg->dst_stage >= 0 && msg->dst_stage < p->S &&
		 msg->src == p->rank_of[msg->src_stage] &&
		 msg->dst == p->rank_of[msg->dst_stage];
	if (!ok) {
		violate(p, "message %d kind %d src %d/%d dst %d/%d mb %d",
			msg->event, msg->kind, msg->src, msg->src_stage,
			msg->dst, msg->dst_stage, msg->mb);
		return;
	}
	int *c = msg->event == PPCC_RT_MSG_SENT ? p->sent : p->recvd;
	c[(size_t)k * (size_t)p->S * (size_t)p->m + IDX(p, msg->src_stage, msg->mb)]++;
}

int rt_pipe_check(const rt_pipe *p, const ppcc_schedule *s, int rank,
		  char *why, size_t n)
{
	if (p->violations) {
		snprintf(why, n, "%d contract violations, first: %s",
			 p->violations, p->violation);
		return -1;
	}
	for (int st = 0; st < p->S; st++) {
		if (rank >= 0 && p->rank_of[st] != rank)
			continue;
		for (int mb = 0; mb < p->m; mb++) {
			size_t k = IDX(p, st, mb);
			int split = p->inp[k] || p->wgt[k];
			if (p->fwd[k] != 1 ||
			    (split ? p->inp[k] != 1 || p->wgt[k] != 1 || p->bwd[k]
				   : p->bwd[k] != 1)) {
				snprintf(why, n, "stage %d mb %d: F %d B %d I %d W %d calls",
					 st, mb, p->fwd[k], p->bwd[k], p->inp[k],
					 p->wgt[k]);
				return -1;
			}
			if (p->dw[k] != p->ref_dw[k] || p->dc[k] != p->ref_dc[k]) {
				snprintf(why, n, "stage %d mb %d: dw %.17g dc %.17g, "
					 "serial %.17g %.17g", st, mb, p->dw[k],
					 p->dc[k], p->ref_dw[k], p->ref_dc[k]);
				return -1;
			}
			if (st == p->S - 1 && p->loss[mb] != p->ref_loss[mb]) {
				snprintf(why, n, "mb %d: loss %.17g, serial %.17g",
					 mb, p->loss[mb], p->ref_loss[mb]);
				return -1;
			}
		}
	}
	for (int r = 0; r < s->n_ranks; r++) {
		if (rank >= 0 && r != rank)
			continue;
		const ppcc_rank_schedule *rs = &s->ranks[r];
		int k = 0;
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			if (a->op >= PPCC_OP_SEND_F)
				continue;
			int want = a->op * 1000000 + a->stage * 1000 + a->mb;
			if (k >= p->log_len[r] || p->log[r][k] != want) {
				snprintf(why, n, "rank %d: compute call %d is %d, "
					 "the schedule's %s %d/%d", r, k,
					 k < p->log_len[r] ? p->log[r][k] : -1,
					 ppcc_op_name(a->op), a->stage, a->mb);
				return -1;
			}
			k++;
		}
		if (k != p->log_len[r]) {
			snprintf(why, n, "rank %d: %d compute calls, the schedule "
				 "has %d", r, p->log_len[r], k);
			return -1;
		}
	}
	return 0;
}

int rt_pipe_check_messages(const rt_pipe *p, const ppcc_schedule *s,
			   int rank, int times, char *why, size_t n)
{
	int cross = s->n_ranks > 1;
	for (int k = 0; k < 2; k++)
		for (int st = 0; st < p->S; st++)
			for (int mb = 0; mb < p->m; mb++) {
				size_t i = (size_t)k * (size_t)p->S * (size_t)p->m +
					   IDX(p, st, mb);
				int dst_stage = k ? st - 1 : st + 1;
				int exists = cross && dst_stage >= 0 &&
					     dst_stage < p->S &&
					     p->rank_of[dst_stage] != p->rank_of[st];
				int src_rank = p->rank_of[st];
				int dst_rank = exists ? p->rank_of[dst_stage] : -1;
				int want_sent = exists && (rank < 0 || rank == src_rank)
							? times : 0;
				int want_recvd = exists && (rank < 0 || rank == dst_rank)
							 ? times : 0;
				if (p->sent[i] != want_sent ||
				    p->recvd[i] != want_recvd) {
					snprintf(why, n, "%s from stage %d mb %d: sent %d "
						 "received %d times, expected %d and %d",
						 k ? "gradient" : "activation", st, mb,
						 p->sent[i], p->recvd[i], want_sent,
						 want_recvd);
					return -1;
				}
			}
	return 0;
}

int rt_pipe_split_backward(ppcc_schedule *out, ppcc_arena *a,
			   const ppcc_schedule *s)
{
	ppcc_rank_schedule *rs = ppcc_arena_alloc(a, (size_t)s->n_ranks, sizeof *rs);
	if (!rs)
		return PPCC_ENOMEM;
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *in = &s->ranks[r];
		int nb = 0;
		for (int i = 0; i < in->n_actions; i++)
			nb += in->actions[i].op == PPCC_OP_B;
		ppcc_action *acts = ppcc_arena_alloc(a, (size_t)(in->n_actions + nb),
						     sizeof *acts);
		if (!acts)
			return PPCC_ENOMEM;
		int k = 0;
		for (int i = 0; i < in->n_actions; i++) {
			acts[k] = in->actions[i];
			if (acts[k].op == PPCC_OP_B)
				acts[k].op = PPCC_OP_I;
			k++;
		}
		for (int i = 0; i < in->n_actions; i++)
			if (in->actions[i].op == PPCC_OP_B) {
				acts[k] = in->actions[i];
				acts[k].op = PPCC_OP_W;
				k++;
			}
		rs[r].rank = r;
		rs[r].n_actions = k;
		rs[r].actions = acts;
	}
	*out = *s;
	out->ranks = rs;
	out->fingerprint = ppcc_schedule_fingerprint(out);
	return 0;
}

void rt_pipe_permutation(int *out, int n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15u + 1;
	for (int i = 0; i < n; i++)
		out[i] = i;
	for (int i = n - 1; i > 0; i--) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		int j = (int)((x >> 33) % (uint64_t)(i + 1));
		int t = out[i];
		out[i] = out[j];
		out[j] = t;
	}
	int moved = 0;
	for (int i = 0; i < n; i++)
		moved |= out[i] != i;
	for (int i = 0; !moved && i < n; i++)
		out[i] = (i + 1) % n;
}

int rt_pipe_relabel(ppcc_schedule *out, ppcc_arena *a, const ppcc_schedule *s,
		    const int *perm)
{
	int p = s->n_ranks;
	ppcc_stage_info *st = ppcc_arena_alloc(a, (size_t)s->n_stages, sizeof *st);
	ppcc_rank_schedule *rs = ppcc_arena_alloc(a, (size_t)p, sizeof *rs);
	if (!st || !rs)
		return PPCC_ENOMEM;
	for (int i = 0; i < s->n_stages; i++) {
		st[i] = s->stages[i];
		st[i].rank = perm[st[i].rank];
	}
	for (int r = 0; r < p; r++) {
		const ppcc_rank_schedule *in = &s->ranks[r];
		ppcc_action *acts = ppcc_arena_alloc(a, (size_t)in->n_actions + 1,
						     sizeof *acts);
		if (!acts)
			return PPCC_ENOMEM;
		for (int i = 0; i < in->n_actions; i++) {
			acts[i] = in->actions[i];
			if (acts[i].peer >= 0)
				acts[i].peer = perm[acts[i].peer];
		}
		rs[perm[r]].rank = perm[r];
		rs[perm[r]].n_actions = in->n_actions;
		rs[perm[r]].actions = acts;
	}
	*out = *s;
	out->stages = st;
	out->ranks = rs;
	out->fingerprint = ppcc_schedule_fingerprint(out);
	return 0;
}

void rt_pipe_wait_lines(pthread_mutex_t *mu, pthread_cond_t *cv,
			const int *lines, int ranks, int stuck)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	for (;;) {
		int all = 1;
		for (int r = 0; r < ranks; r++)
			all &= r == stuck || lines[r] > 0;
		if (all || pthread_cond_timedwait(cv, mu, &until) != 0)
			return;
	}
}

void rt_lines_init(rt_lines *l, int ranks, int stuck)
{
	memset(l, 0, sizeof *l);
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
	l->ranks = ranks;
	l->stuck = stuck;
}

void rt_lines_add(int rank, const char *line, void *user)
{
	rt_lines *l = user;
	pthread_mutex_lock(&l->mu);
	int n = snprintf(l->text + l->len, sizeof l->text - l->len, "%s\n", line);
	if (n > 0 && l->len + (size_t)n < sizeof l->text)
		l->len += (size_t)n;
	if (rank >= 0 && rank < 16)
		l->lines[rank]++;
	else
		l->other++;
	l->total++;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
}

void rt_lines_wait_others(void *user)
{
	rt_lines *l = user;
	pthread_mutex_lock(&l->mu);
	rt_pipe_wait_lines(&l->mu, &l->cv, l->lines, l->ranks, l->stuck);
	pthread_mutex_unlock(&l->mu);
}
