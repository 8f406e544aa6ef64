/*
 * mlp.h - the example trainer's model: a multi-layer perceptron
 * 6 -> 12 x 7 -> 4 in double precision (mlp.yaml describes the same
 * layers to ppcc), trained by SGD with gradient accumulation over the m
 * microbatches of a step.
 *
 * Layer l maps B x width[l] to B x width[l+1]: h = tanh(W x + b), the
 * last layer without tanh.  The loss of a microbatch is the mean over its
 * B samples of half the squared error; a step's loss is the mean over its
 * microbatches, and its gradient is accumulated microbatch by microbatch
 * before the update W -= lr * dW.
 *
 * Every function does its arithmetic in one fixed order, so the same
 * microbatches accumulated in the same order give bit-identical results
 * whether run serially (mlp_serial_step) or as pipeline stages (mlp.c's
 * callbacks, on any schedule and transport).
 */
#ifndef MLP_H
#define MLP_H

#include <stddef.h>
#include <stdio.h>

#include <ppcc/checkpoint.h>
#include <ppcc/runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MLP_LAYERS 8
#define MLP_BATCH 4 /* samples per microbatch */
#define MLP_MAX_WIDTH 12
#define MLP_LR 0.1

extern const int mlp_width[MLP_LAYERS + 1];

typedef struct mlp_layer {
	double *w, *b;   /* out x in, out */
	double *gw, *gb; /* accumulated gradients */
} mlp_layer;

/* The mixture-of-experts layer that may replace layer MOE_LAYER (moe.h). */
typedef struct mlp_moe mlp_moe;

typedef struct mlp {
	int m;    /* microbatches per step */
	int step; /* steps done */
	/* Data parallelism: this replica's microbatch mb is the global
	 * batch's mb0 + mb, of m_total (mlp_init: 0 and m). */
	int mb0, m_total;
	/* The serial reference of d replicas: mlp_serial_step accumulates
	 * each of `shards` consecutive runs of m / shards microbatches on
	 * its own, then adds the runs' gradients in order, as the runtime's
	 * reduction adds the replicas' (mlp_init: 1). */
	int shards;
	/* With shards > 1, ZeRO-3's order instead (mlp_init: 0): each
	 * round adds the shards' j-th microbatch gradients in shard order,
	 * and the rounds' sums are added in j order ((0 + r0) + r1) + ...,
	 * as each replica adds the reduce-scatter after each backward. */
	int rounds;
	mlp_layer layer[MLP_LAYERS];
	/* NULL: the dense MLP; else moe_init's layer, which stands in for
	 * layer MOE_LAYER (whose own weights then stay as initialised) */
	mlp_moe *moe;
} mlp;

/* Deterministic initial parameters, zero gradients.  0 or -1. */
int mlp_init(mlp *net, int m);
void mlp_free(mlp *net);

/* The data loader: microbatch mb (of every step: the data set is one
 * step's worth), B x width[0] inputs and B x width[L] targets. */
void mlp_sample(const mlp *net, int mb, double *x, double *t);

/* h = layer(x) for B samples. */
void mlp_layer_forward(const mlp *net, int l, const double *x, double *h);

/* Given gh = dloss/dh, accumulates dW and db and writes gx = dloss/dx
 * (when gx is not NULL).  x and h as in the forward. */
void mlp_layer_backward(mlp *net, int l, const double *x, const double *h,
			const double *gh, double *gx);

/* The two halves of mlp_layer_backward, for a split backward: the input
 * gradient writes gz = dloss/dz (z before tanh) and gx; the weight
 * gradient accumulates dW and db from gz.  Each does the arithmetic of
 * its part of mlp_layer_backward in the same order. */
void mlp_layer_backward_input(const mlp *net, int l, const double *h,
			      const double *gh, double *gz, double *gx);
void mlp_layer_backward_weight(mlp *net, int l, const double *x,
			       const double *gz);

/* The microbatch's loss, and gy = d(step loss)/dy (1/m_total of its
 * share). */
double mlp_loss(const mlp *net, const double *y, const double *t, double *gy);

/* W -= lr * dW for layer l, and zero its gradients (the MoE layer's
 * router and experts for layer MOE_LAYER of a net with one). */
void mlp_update(mlp *net, int l);
/* The same for the weights [w_lo, w_lo + w_n) and biases [b_lo, b_lo +
 * b_n) only (a ZeRO replica's shards); every gradient zeroed. */
void mlp_update_shard(mlp *net, int l, size_t w_lo, size_t w_n, size_t b_lo,
		      size_t b_n);

/* One step without a pipeline: every microbatch forward and backward in
 * order (by shard, see mlp.shards), then the update; *out_loss the
 * step's loss. */
int mlp_serial_step(mlp *net, double *out_loss);

/* ---- as pipeline stages ---------------------------------------------- */

/* The stages of a schedule over this model: which layers each holds, the
 * activations they keep for backward, the data and the losses. */
typedef struct mlp_stages mlp_stages;

/* Checks that the schedule's stages cover the layers in order and that
 * their boundaries carry this model's activation sizes; describes a
 * mismatch in why.  0 or -1. */
int mlp_stages_new(mlp_stages **out, mlp *net, const ppcc_schedule *s,
		   char *why, size_t why_len);
void mlp_stages_free(mlp_stages *st);

/* The MoE layer's link to its expert group (moe.h), NULL without one:
 * an expert-parallel degree of 1 and no runtime until the trainer sets
 * it (moe_link_init). */
struct moe_link;
struct moe_link *mlp_stages_moe_link(mlp_stages *st);

/* Callbacks for every stage (fns has s->n_stages entries). */
void mlp_stages_fns(mlp_stages *st, ppcc_rt_stage_fns *fns);

/* The step's loss from the microbatch losses (in microbatch order); only
 * meaningful where the last stage ran. */
double mlp_stages_loss(const mlp_stages *st);
/* Microbatch mb's loss in the last step. */
double mlp_stages_loss_of(const mlp_stages *st, int mb);

/* Writes "param L v v ..." (C99 hex floats, exact) for each layer l with
 * owned[l] (NULL: all); the MoE layer as moe_print_params. */
void mlp_print_params(FILE *f, const mlp *net, const int *owned);

/* ---- checkpoints ------------------------------------------------------ */

/* The model as ppcc_ckpt_model sees it: "mlp", MLP_LAYERS layers. */
#define MLP_CKPT_NAME "mlp"

/* Layer l for ppcc_ckpt_save_layer / ppcc_ckpt_load_layer: named as in
 * mlp.yaml (in, hidden, out), tensors "w" (f64, out x in) and "b" (f64,
 * out) pointing into net.  Plain SGD keeps no other state, and the
 * gradients are zero between steps, so these and net->step are all a
 * restart needs to continue bit for bit. */
void mlp_ckpt_layer(ppcc_ckpt_layer *out, ppcc_ckpt_tensor tensors[2],
		    mlp *net, int l);

#ifdef __cplusplus
}
#endif

#endif
