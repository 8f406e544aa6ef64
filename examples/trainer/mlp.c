/*
 * mlp.c - the model's arithmetic, the serial reference, and the model as
 * pipeline stages for the ppcc runtime.
 *
 * A stage holds layers first..last of the schedule's stage table.  Its
 * forward keeps each layer's output of the microbatch for the backward
 * pass and relies on the runtime's contract for its input: the buffer
 * passed to forward stays valid until the backward of the same
 * (stage, microbatch) returns, so the first layer's input is not copied.
 * The last stage computes the loss; stage 0 gets its input from the data
 * loader.  Each stage writes only its own layers' gradients, so stages of
 * different ranks may run in different threads.  With a mixture of
 * experts (net->moe), layer MOE_LAYER runs moe.c's layer instead.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp.h"
#include "moe.h"

const int mlp_width[MLP_LAYERS + 1] = {6, 12, 12, 12, 12, 12, 12, 12, 4};

static size_t n_w(int l)
{
	return (size_t)mlp_width[l] * (size_t)mlp_width[l + 1];
}

int mlp_init(mlp *net, int m)
{
	memset(net, 0, sizeof *net);
	net->m = m;
	net->m_total = m;
	net->shards = 1;
	for (int l = 0; l < MLP_LAYERS; l++) {
		int in = mlp_width[l], out = mlp_width[l + 1];
		mlp_layer *y = &net->layer[l];
		y->w = calloc(n_w(l), sizeof *y->w);
		y->gw = calloc(n_w(l), sizeof *y->gw);
		y->b = calloc((size_t)out, sizeof *y->b);
		y->gb = calloc((size_t)out, sizeof *y->gb);
		if (!y->w || !y->gw || !y->b || !y->gb) {
			mlp_free(net);
			return -1;
		}
		for (int o = 0; o < out; o++) {
			for (int i = 0; i < in; i++)
				y->w[o * in + i] = 0.9 * sin(1.3 * l + 0.7 * o + 0.3 * i) /
						   sqrt((double)in);
			y->b[o] = 0.05 * cos(l + o);
		}
	}
	return 0;
}

void mlp_free(mlp *net)
{
	for (int l = 0; l < MLP_LAYERS; l++) {
		free(net->layer[l].w);
		free(net->layer[l].gw);
		free(net->layer[l].b);
		free(net->layer[l].gb);
		memset(&net->layer[l], 0, sizeof net->layer[l]);
	}
	moe_free(net);
}

void mlp_sample(const mlp *net, int mb, double *x, double *t)
{
	for (int k = 0; k < MLP_BATCH; k++) {
		/* the same every step */
		double j = (double)(net->mb0 + mb) * MLP_BATCH + k;
		if (x)
			for (int i = 0; i < mlp_width[0]; i++)
				x[k * mlp_width[0] + i] = sin(0.37 * j + 0.11 * i + 0.5);
		if (t)
			for (int o = 0; o < mlp_width[MLP_LAYERS]; o++)
				t[k * mlp_width[MLP_LAYERS] + o] = 0.5 * cos(0.23 * j + 0.5 * o);
	}
}

void mlp_layer_forward(const mlp *net, int l, const double *x, double *h)
{
	const mlp_layer *y = &net->layer[l];
	int in = mlp_width[l], out = mlp_width[l + 1];
	for (int k = 0; k < MLP_BATCH; k++)
		for (int o = 0; o < out; o++) {
			double z = y->b[o];
			for (int i = 0; i < in; i++)
				z += y->w[o * in + i] * x[k * in + i];
			h[k * out + o] = l < MLP_LAYERS - 1 ? tanh(z) : z;
		}
}

void mlp_layer_backward_input(const mlp *net, int l, const double *h,
			      const double *gh, double *gz, double *gx)
{
	const mlp_layer *y = &net->layer[l];
	int in = mlp_width[l], out = mlp_width[l + 1];
	for (int k = 0; k < MLP_BATCH; k++)
		for (int o = 0; o < out; o++) {
			double v = h[k * out + o];
			gz[k * out + o] = gh[k * out + o] *
					  (l < MLP_LAYERS - 1 ? 1 - v * v : 1);
		}
	if (gx)
		for (int k = 0; k < MLP_BATCH; k++)
			for (int i = 0; i < in; i++) {
				double s = 0;
				for (int o = 0; o < out; o++)
					s += gz[k * out + o] * y->w[o * in + i];
				gx[k * in + i] = s;
			}
}

void mlp_layer_backward_weight(mlp *net, int l, const double *x,
			       const double *gz)
{
	mlp_layer *y = &net->layer[l];
	int in = mlp_width[l], out = mlp_width[l + 1];
	for (int o = 0; o < out; o++) {
		double sb = 0;
		for (int k = 0; k < MLP_BATCH; k++)
			sb += gz[k * out + o];
		y->gb[o] += sb;
		for (int i = 0; i < in; i++) {
			double s = 0;
			for (int k = 0; k < MLP_BATCH; k++)
				s += gz[k * out + o] * x[k * in + i];
			y->gw[o * in + i] += s;
		}
	}
}

void mlp_layer_backward(mlp *net, int l, const double *x, const double *h,
			const double *gh, double *gx)
{
	double gz[MLP_BATCH * MLP_MAX_WIDTH];
	mlp_layer_backward_input(net, l, h, gh, gz, gx);
	mlp_layer_backward_weight(net, l, x, gz);
}

double mlp_loss(const mlp *net, const double *y, const double *t, double *gy)
{
	int n = MLP_BATCH * mlp_width[MLP_LAYERS];
	double loss = 0;
	for (int j = 0; j < n; j++) {
		double d = y[j] - t[j];
		loss += d * d;
		gy[j] = d / ((double)MLP_BATCH * net->m_total);
	}
	return 0.5 * loss / MLP_BATCH;
}

void mlp_update(mlp *net, int l)
{
	mlp_update_shard(net, l, 0, n_w(l), 0, (size_t)mlp_width[l + 1]);
	if (net->moe && l == MOE_LAYER)
		moe_update(net);
}

void mlp_update_shard(mlp *net, int l, size_t w_lo, size_t w_n, size_t b_lo,
		      size_t b_n)
{
	mlp_layer *y = &net->layer[l];
	for (size_t j = 0; j < n_w(l); j++) {
		if (j >= w_lo && j - w_lo < w_n)
			y->w[j] -= MLP_LR * y->gw[j];
		y->gw[j] = 0;
	}
	for (size_t o = 0; o < (size_t)mlp_width[l + 1]; o++) {
		if (o >= b_lo && o - b_lo < b_n)
			y->b[o] -= MLP_LR * y->gb[o];
		y->gb[o] = 0;
	}
}

/* Dense gradient k of the serial step's shard sums: layer k / 2's
 * weights (k even) or biases, the router's for the MoE layer (its
 * experts' are summed by moe_serial_finish). */
static double *dense_grad(mlp *net, int k, size_t *out_n)
{
	int l = k / 2;
	if (net->moe && l == MOE_LAYER) {
		*out_n = (size_t)net->moe->E * (k % 2 ? 1 : MOE_WIDTH);
		return k % 2 ? net->moe->gbr : net->moe->gwr;
	}
	*out_n = k % 2 ? (size_t)mlp_width[l + 1] : n_w(l);
	return k % 2 ? net->layer[l].gb : net->layer[l].gw;
}

int mlp_serial_step(mlp *net, double *out_loss)
{
	double act[MLP_LAYERS + 1][MLP_BATCH * MLP_MAX_WIDTH];
	double t[MLP_BATCH * MLP_MAX_WIDTH], g[MLP_BATCH * MLP_MAX_WIDTH];
	double gn[MLP_BATCH * MLP_MAX_WIDTH];
	double *loss = calloc((size_t)net->m, sizeof *loss);
	double *sum_g[2 * MLP_LAYERS] = {NULL}, *acc[2 * MLP_LAYERS] = {NULL};
	int shards = net->shards > 1 ? net->shards : 1, per = net->m / shards;
	int rounds = net->rounds && shards > 1;
	size_t n;
	if (!loss || per * shards != net->m || (net->moe && moe_serial_begin(net) < 0))
		goto fail;
	for (int k = 0; shards > 1 && k < 2 * MLP_LAYERS; k++)
		if (dense_grad(net, k, &n), !(sum_g[k] = calloc(n, sizeof(double))) ||
		    (rounds && !(acc[k] = calloc(n, sizeof(double)))))
			goto fail;
	for (int k = 0; k < net->m; k++) {
		/* rounds: the shards' j-th microbatches one after another */
		int mb = rounds ? k % shards * per + k / shards : k;
		mlp_sample(net, mb, act[0], t);
		for (int l = 0; l < MLP_LAYERS; l++)
			if (net->moe && l == MOE_LAYER)
				moe_serial_forward(net, mb, act[l], act[l + 1]);
			else
				mlp_layer_forward(net, l, act[l], act[l + 1]);
		loss[mb] = mlp_loss(net, act[MLP_LAYERS], t, g);
		for (int l = MLP_LAYERS - 1; l >= 0; l--) {
			if (net->moe && l == MOE_LAYER)
				moe_serial_backward(net, mb, act[l], g, l > 0 ? gn : NULL);
			else
				mlp_layer_backward(net, l, act[l], act[l + 1], g,
						   l > 0 ? gn : NULL);
			memcpy(g, gn, sizeof g);
		}
		if (shards > 1 && (rounds || (mb + 1) % per == 0)) {
			/* a shard's gradients, added to the earlier shards' sum
			 * (((g0 + g1) + g2) ...), as the replicas' reduction does
			 * (rounds: one microbatch's of each shard) */
			int first = rounds ? k % shards == 0 : mb + 1 == per;
			for (int d = 0; d < 2 * MLP_LAYERS; d++) {
				double *y = dense_grad(net, d, &n);
				for (size_t j = 0; j < n; j++) {
					sum_g[d][j] = first ? y[j] : sum_g[d][j] + y[j];
					y[j] = 0;
				}
			}
		}
		if (rounds && k % shards == shards - 1)
			/* the round's sum added to the earlier rounds', as
			 * each replica adds its shard of it */
			for (int d = 0; d < 2 * MLP_LAYERS; d++) {
				dense_grad(net, d, &n);
				for (size_t j = 0; j < n; j++)
					acc[d][j] += sum_g[d][j];
			}
	}
	for (int d = 0; shards > 1 && d < 2 * MLP_LAYERS; d++) {
		double **from = rounds ? acc : sum_g;
		double *y = dense_grad(net, d, &n);
		memcpy(y, from[d], n * sizeof(double));
		free(sum_g[d]);
		free(acc[d]);
	}
	if (net->moe)
		moe_serial_finish(net);
	double sum = 0;
	for (int mb = 0; mb < net->m; mb++)
		sum += loss[mb];
	*out_loss = sum / net->m;
	free(loss);
	for (int l = 0; l < MLP_LAYERS; l++)
		mlp_update(net, l);
	net->step++;
	return 0;
fail:
	for (int k = 0; k < 2 * MLP_LAYERS; k++) {
		free(sum_g[k]);
		free(acc[k]);
	}
	free(loss);
	return -1;
}

/* ---- as pipeline stages ---------------------------------------------- */

struct mlp_stages {
	mlp *net;
	const ppcc_schedule *s;
	int n_stages;
	int *first, *last;    /* per stage */
	double *x0;           /* per mb: the loaded input of stage 0 */
	double *h;            /* per (layer, mb): the layer's output */
	const double **xin;   /* per (layer, mb): the layer's input */
	double *loss;         /* per mb */
	double *scratch;      /* per stage: two vectors for the backward */
	double *gz;           /* per (layer, mb): from backward_input to
			       * backward_weight */
	moe_stash *moe;       /* the MoE layer's, with a net that has one */
	moe_link link;        /* where its tokens go */
};

static size_t vec_len(void)
{
	return (size_t)MLP_BATCH * MLP_MAX_WIDTH;
}

static double *h_of(mlp_stages *st, int l, int mb)
{
	return &st->h[((size_t)l * (size_t)st->net->m + (size_t)mb) * vec_len()];
}

static int mlp_stage_forward(int stage, int mb, const void *input,
			     size_t input_bytes, void *output,
			     size_t output_bytes, void *user)
{
	mlp_stages *st = user;
	mlp *net = st->net;
	int first = st->first[stage], last = st->last[stage];
	const double *x = input;
	(void)input_bytes;
	if (stage == 0) {
		double *x0 = &st->x0[(size_t)mb * vec_len()];
		/* for a flight record: the microbatch's first sample */
		ppcc_rt_flight_sample(mb, (uint64_t)mb * MLP_BATCH);
		mlp_sample(net, mb, x0, NULL);
		x = x0;
	}
	for (int l = first; l <= last; l++) {
		st->xin[(size_t)l * (size_t)net->m + (size_t)mb] = x;
		if (st->moe && l == MOE_LAYER) {
			int err = moe_forward(st->moe, &st->link, mb, x, h_of(st, l, mb));
			if (err != 0)
				return err;
		} else {
			mlp_layer_forward(net, l, x, h_of(st, l, mb));
		}
		x = h_of(st, l, mb);
	}
	if (output) {
		memcpy(output, x, output_bytes);
	} else {
		double t[MLP_BATCH * MLP_MAX_WIDTH], gy[MLP_BATCH * MLP_MAX_WIDTH];
		mlp_sample(net, mb, NULL, t);
		st->loss[mb] = mlp_loss(net, x, t, gy);
	}
	return 0;
}

static double *gz_of(mlp_stages *st, int l, int mb)
{
	return &st->gz[((size_t)l * (size_t)st->net->m + (size_t)mb) * vec_len()];
}

/* The backward of a stage; split: only the input gradient, keeping each
 * layer's gz for mlp_stage_backward_weight. */
static int stage_backward(mlp_stages *st, int stage, int mb,
			  const void *grad_output, size_t grad_output_bytes,
			  void *grad_input, int split)
{
	mlp *net = st->net;
	int first = st->first[stage], last = st->last[stage];
	double *g = &st->scratch[(size_t)stage * 2 * vec_len()];
	double *gn = g + vec_len();
	if (grad_output) {
		memcpy(g, grad_output, grad_output_bytes);
	} else {
		double t[MLP_BATCH * MLP_MAX_WIDTH];
		mlp_sample(net, mb, NULL, t);
		mlp_loss(net, h_of(st, MLP_LAYERS - 1, mb), t, g);
	}
	for (int l = last; l >= first; l--) {
		const double *x = st->xin[(size_t)l * (size_t)net->m + (size_t)mb];
		double *gx = l > first ? gn : grad_input;
		if (st->moe && l == MOE_LAYER) {
			int err = moe_backward_input(st->moe, &st->link, mb, g, gx);
			if (err != 0)
				return err;
			if (!split)
				moe_backward_weight(st->moe, &st->link, mb, x);
		} else if (split)
			mlp_layer_backward_input(net, l, h_of(st, l, mb), g,
						 gz_of(st, l, mb), gx);
		else
			mlp_layer_backward(net, l, x, h_of(st, l, mb), g, gx);
		if (l > first)
			memcpy(g, gn, vec_len() * sizeof *g);
	}
	return 0;
}

static int mlp_stage_backward(int stage, int mb, const void *grad_output,
			      size_t grad_output_bytes, void *grad_input,
			      size_t grad_input_bytes, void *user)
{
	(void)grad_input_bytes;
	return stage_backward(user, stage, mb, grad_output, grad_output_bytes,
			      grad_input, 0);
}

static int mlp_stage_backward_input(int stage, int mb, const void *grad_output,
				    size_t grad_output_bytes, void *grad_input,
				    size_t grad_input_bytes, void *user)
{
	(void)grad_input_bytes;
	return stage_backward(user, stage, mb, grad_output, grad_output_bytes,
			      grad_input, 1);
}

/* The weight gradients of the stage's layers from the gz that
 * backward_input kept, and the inputs the forward saw. */
static int mlp_stage_backward_weight(int stage, int mb, const void *grad_output,
				     size_t grad_output_bytes, void *user)
{
	mlp_stages *st = user;
	(void)grad_output;
	(void)grad_output_bytes;
	for (int l = st->last[stage]; l >= st->first[stage]; l--) {
		const double *x = st->xin[(size_t)l * (size_t)st->net->m + (size_t)mb];
		if (st->moe && l == MOE_LAYER)
			moe_backward_weight(st->moe, &st->link, mb, x);
		else
			mlp_layer_backward_weight(st->net, l, x, gz_of(st, l, mb));
	}
	return 0;
}

static int mlp_stage_loss(double *out_loss, int stage, int mb, void *user)
{
	const mlp_stages *st = user;
	(void)stage;
	*out_loss = st->loss[mb];
	return 0;
}

int mlp_stages_new(mlp_stages **out, mlp *net, const ppcc_schedule *s,
		   char *why, size_t why_len)
{
	int S = s->n_stages, m = net->m;
	*out = NULL;
	if (s->n_microbatches != m) {
		snprintf(why, why_len, "the schedule has %d microbatches, the "
			 "model was set up for %d", (int)s->n_microbatches, m);
		return -1;
	}
	for (int k = 0; k < S; k++) {
		const ppcc_stage_info *si = &s->stages[k];
		int want_first = k ? s->stages[k - 1].last_layer + 1 : 0;
		uint64_t in = (uint64_t)MLP_BATCH * mlp_width[si->first_layer] *
			      sizeof(double);
		uint64_t outb = si->last_layer + 1 < MLP_LAYERS
					? (uint64_t)MLP_BATCH *
						  mlp_width[si->last_layer + 1] *
						  sizeof(double)
					: 0;
		if (si->first_layer != want_first || si->last_layer < si->first_layer ||
		    si->last_layer >= MLP_LAYERS || (k == S - 1 && si->last_layer != MLP_LAYERS - 1)) {
			snprintf(why, why_len, "stage %d holds layers %d-%d, which "
				 "do not continue the model's %d layers in order",
				 k, (int)si->first_layer, (int)si->last_layer,
				 MLP_LAYERS);
			return -1;
		}
		if ((k > 0 && si->recv_bytes != in) || (k < S - 1 && si->send_bytes != outb)) {
			snprintf(why, why_len, "stage %d moves %llu bytes in and %llu "
				 "out; this model's layers %d-%d need %llu and %llu",
				 k, (unsigned long long)si->recv_bytes,
				 (unsigned long long)si->send_bytes,
				 (int)si->first_layer, (int)si->last_layer,
				 (unsigned long long)in, (unsigned long long)outb);
			return -1;
		}
	}
	mlp_stages *st = calloc(1, sizeof *st);
	if (!st) {
		snprintf(why, why_len, "out of memory");
		return -1;
	}
	st->net = net;
	st->s = s;
	st->n_stages = S;
	st->first = calloc((size_t)S, sizeof *st->first);
	st->last = calloc((size_t)S, sizeof *st->last);
	st->x0 = calloc((size_t)m * vec_len(), sizeof *st->x0);
	st->h = calloc((size_t)MLP_LAYERS * (size_t)m * vec_len(), sizeof *st->h);
	st->xin = calloc((size_t)MLP_LAYERS * (size_t)m, sizeof *st->xin);
	st->loss = calloc((size_t)m, sizeof *st->loss);
	st->scratch = calloc((size_t)S * 2 * vec_len(), sizeof *st->scratch);
	st->gz = calloc((size_t)MLP_LAYERS * (size_t)m * vec_len(), sizeof *st->gz);
	if (!st->first || !st->last || !st->x0 || !st->h || !st->xin ||
	    !st->loss || !st->scratch || !st->gz ||
	    (net->moe && moe_stash_new(&st->moe, net) < 0)) {
		mlp_stages_free(st);
		snprintf(why, why_len, "out of memory");
		return -1;
	}
	for (int k = 0; k < S; k++) {
		st->first[k] = s->stages[k].first_layer;
		st->last[k] = s->stages[k].last_layer;
	}
	if (net->moe)
		moe_link_init(&st->link, net, NULL, 0, 0);
	*out = st;
	return 0;
}

void mlp_stages_free(mlp_stages *st)
{
	if (!st)
		return;
	free(st->first);
	free(st->last);
	free(st->x0);
	free(st->h);
	free(st->xin);
	free(st->loss);
	free(st->scratch);
	free(st->gz);
	moe_stash_free(st->moe);
	free(st);
}

moe_link *mlp_stages_moe_link(mlp_stages *st)
{
	return st->moe ? &st->link : NULL;
}

void mlp_stages_fns(mlp_stages *st, ppcc_rt_stage_fns *fns)
{
	for (int k = 0; k < st->n_stages; k++)
		fns[k] = (ppcc_rt_stage_fns){mlp_stage_forward, mlp_stage_backward,
					     mlp_stage_backward_input,
					     mlp_stage_backward_weight,
					     mlp_stage_loss, st,
					     PPCC_RT_STAGE_FNS_VERSION};
}

double mlp_stages_loss_of(const mlp_stages *st, int mb)
{
	return st->loss[mb];
}

double mlp_stages_loss(const mlp_stages *st)
{
	double sum = 0;
	for (int mb = 0; mb < st->net->m; mb++)
		sum += st->loss[mb];
	return sum / st->net->m;
}

void mlp_print_params(FILE *f, const mlp *net, const int *owned)
{
	for (int l = 0; l < MLP_LAYERS; l++) {
		if (owned && !owned[l])
			continue;
		if (net->moe && l == MOE_LAYER) {
			moe_print_params(f, net);
			continue;
		}
		const mlp_layer *y = &net->layer[l];
		fprintf(f, "param %d", l);
		for (size_t j = 0; j < n_w(l); j++)
			fprintf(f, " %a", y->w[j]);
		for (int o = 0; o < mlp_width[l + 1]; o++)
			fprintf(f, " %a", y->b[o]);
		fprintf(f, "\n");
	}
}

void mlp_ckpt_layer(ppcc_ckpt_layer *out, ppcc_ckpt_tensor tensors[2],
		    mlp *net, int l)
{
	int in = mlp_width[l], o = mlp_width[l + 1];
	tensors[0] = (ppcc_ckpt_tensor){"w", PPCC_CKPT_F64, 2, {o, in, 0, 0},
					net->layer[l].w};
	tensors[1] = (ppcc_ckpt_tensor){"b", PPCC_CKPT_F64, 1, {o, 0, 0, 0},
					net->layer[l].b};
	*out = (ppcc_ckpt_layer){PPCC_CKPT_VERSION, l, l == 0 ? "in" : l == MLP_LAYERS - 1 ? "out"
								       : "hidden",
				 2, tensors};
}
