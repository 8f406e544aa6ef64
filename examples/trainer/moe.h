/*
 * moe.h - the example trainer's mixture-of-experts layer: layer
 * MOE_LAYER of the MLP (12 -> 12) replaced by a router and E experts,
 * each token sent to its top K experts, and those experts spread over an
 * expert-parallel group of data-parallel replicas.
 *
 * Per token x (one of the microbatch's B samples): logits = Wr x + br
 * (E of them), p = softmax(logits); the K experts of largest p, ties to
 * the lower index, in that order; h = sum_j p[e_j] * tanh(W_e_j x +
 * b_e_j), the terms added in j order.  The router is a dense layer of
 * every replica, its gradient reduced over the replicas as the others;
 * expert e lives on member e / (E / ep) of each expert-parallel group
 * (replicas g*ep .. g*ep + ep - 1), which computes every token its group
 * routes to e and so holds its complete gradient for the group; with
 * ep < D the D / ep copies of an expert then add their groups' gradients
 * in group order (moe_reduce_experts).
 *
 * The order of an expert's gradient sum, in the parallel run and in the
 * serial reference alike: for each group g, for each microbatch j of a
 * replica (in the order the owner's backwards run: ascending), one sum
 * over the group's replicas in order, then their tokens in order, added
 * to the group's accumulator; then the groups' accumulators added in
 * group order ((G0 + G1) + G2) ....  Derivation: doc/runtime.md,
 * "Mixture of experts".
 */
#ifndef MOE_H
#define MOE_H

#include "mlp.h"

#define MOE_LAYER (MLP_LAYERS / 2)
#define MOE_WIDTH 12 /* mlp_width[MOE_LAYER], in and out */
#define MOE_MAX_EXPERTS 16
#define MOE_MAX_EP 16

struct mlp_moe {
	int E, K;
	int ep;       /* expert-parallel degree: each member holds E / ep */
	int replicas; /* D: D / ep groups */
	double *wr, *br, *gwr, *gbr; /* router: E x W, E */
	double *we, *be, *gwe, *gbe; /* experts: E x W x W, E x W */
	/* the serial step's, per global microbatch: the routing, the
	 * layer's input and the experts' dz (B x K rows of W) */
	int *s_sel;
	double *s_x, *s_dz;
};

/* Allocates net->moe (E experts, top K, expert-parallel degree ep over
 * D replicas) with deterministic weights.  0 or -1. */
int moe_init(mlp *net, int E, int K, int ep, int D);
void moe_free(mlp *net);

/* The serial MoE layer over one microbatch of the serial step (see
 * mlp_serial_step): forward writes h and keeps the routing of global
 * microbatch gmb; backward writes gx, accumulates the router's gradient
 * now and keeps the experts' for moe_serial_finish. */
int moe_serial_begin(mlp *net);
void moe_serial_forward(mlp *net, int gmb, const double *x, double *h);
void moe_serial_backward(mlp *net, int gmb, const double *x,
			 const double *gh, double *gx);
/* The experts' gradients in the order above (replica r's microbatch j
 * is global microbatch r * m + j, m = net->m / net->shards). */
void moe_serial_finish(mlp *net);

/* W -= lr * dW of the router and of every expert, gradients zeroed (an
 * expert this replica does not hold has a zero gradient). */
void moe_update(mlp *net);

/* "param MOE_LAYER": router w, b, then each expert's w, b. */
void moe_print_params(FILE *f, const mlp *net);

/* ---- as part of a pipeline stage ------------------------------------ */

/* Where this replica's expert-parallel all-to-alls go: rt (NULL: ep 1,
 * no messages) and, in rt's world, the members of its expert group
 * (group[me] is this rank) and of its expert data-parallel group (the
 * replicas holding the same experts, in group order). */
typedef struct moe_link {
	ppcc_rt *rt;
	int group[MOE_MAX_EP], n, me;
	int copies[64], n_copies, copy_me;
	/* token rows this replica sent to another member, and all */
	unsigned long long rows_remote, rows_sent;
} moe_link;

/* The link of replica `replica` of D whose rank's world numbers the
 * replicas of this pipeline rank base + replica. */
void moe_link_init(moe_link *out, const mlp *net, ppcc_rt *rt, int base,
		   int replica);

typedef struct moe_stash moe_stash;
int moe_stash_new(moe_stash **out, const mlp *net);
void moe_stash_free(moe_stash *st);

/* The layer's forward, backward (input then weight gradient), for
 * microbatch mb of this replica; link->rt's all-to-alls move the tokens.
 * 0 or the runtime's status. */
int moe_forward(moe_stash *st, moe_link *link, int mb, const double *x,
		double *h);
int moe_backward_input(moe_stash *st, moe_link *link, int mb,
		       const double *gh, double *gx);
void moe_backward_weight(moe_stash *st, moe_link *link, int mb,
			 const double *x);

/* Between steps, with ep < D: each expert copy's gradient becomes the
 * sum of its copies' in group order.  0 or the runtime's status. */
int moe_reduce_experts(mlp *net, moe_link *link);
/* Between steps: the first member of each expert group gets every
 * member's experts (to print them).  0 or the runtime's status. */
int moe_gather_experts(mlp *net, moe_link *link);

#endif
