/*
 * transformer.c - the `transformer:` shorthand: a decoder-only transformer
 * described by its shape, expanded into the per-layer costs a `layers:`
 * list would give.
 *
 * The model becomes L + 2 layers: "embed", L x "block", "head".  With b the
 * micro-batch size, s the sequence length, h hidden, a heads, k KV heads,
 * f the FFN width, V the vocabulary and nmat = 3 for SwiGLU (gate, up,
 * down), else 2, the costs per microbatch are:
 *
 *   block forward FLOPs  b*s*(2*(2h^2 + 2h*(h*k/a)) + 2*nmat*h*f + 4*s*h)
 *       the Q and O projections, K and V at k/a of the width, the FFN
 *       matrices, and the attention scores and values; for GPT (k = a,
 *       f = 4h, nmat = 2) this is 24*b*s*h^2*(1 + s/(6h)), Narayanan et
 *       al., SC'21, "Efficient Large-Scale Language Model Training on GPU
 *       Clusters Using Megatron-LM", section 5.1;
 *   block backward       2 x forward; full recomputation adds one forward,
 *       selective recomputation adds the attention scores and values,
 *       4*b*s^2*h (Korthikanti et al., 2022, "Reducing Activation
 *       Recomputation in Large Transformer Models"); split, the weight
 *       gradient W is the forward less its scores and values (one product
 *       a weight matrix) and the input gradient I the rest, recomputation
 *       included;
 *   block parameters     2h^2 + 2h*(h*k/a) + nmat*h*f, plus for GPT the
 *       biases (h + 2h*k/a for QKV, h for O, f and h for the FFN) and two
 *       LayerNorms (4h), for SwiGLU two RMSNorm weights (2h);
 *   block activation     2*s*b*h bytes sent to the next layer (16-bit);
 *   block stash          see below;
 *   embed                no FLOPs (a lookup), V*h parameters plus s*h
 *       learned positions when not SwiGLU, 2*s*b*h sent; its backward
 *       needs only the token ids, so it stashes its dropout mask, s*b*h
 *       bytes (GPT; SwiGLU models have no dropout);
 *   head                 forward 2*b*s*h*V (the logits), V*h parameters
 *       (untied: the last stage holds its own copy) plus the final norm
 *       (h for RMSNorm, 2h for LayerNorm), nothing sent; it stashes the
 *       final norm's input and the output layer's input (2*s*b*h each)
 *       and the logits: 2*s*b*V in 16 bits and their fp32 copy for the
 *       loss, 4*s*b*V, split across the tensor-parallel ranks (Megatron-
 *       LM's vocabulary-parallel cross entropy); backward 2 x forward,
 *       half of it W (the output layer's weight gradient).
 *
 * The block stash.  Korthikanti et al., 2022, "Reducing Activation
 * Recomputation in Large Transformer Models", section 4.1, list the
 * tensors a GPT block keeps for its backward pass (16-bit values, 1-byte
 * dropout masks).  Written for any FFN width f, nmat FFN matrices,
 * kv heads k (r = k/a) and dropout (delta = 1 for GPT, 0 for SwiGLU
 * models, which train without it), in bytes:
 *
 *   two norms' inputs                          4*s*b*h        whole
 *   QKV projection input                       2*s*b*h        whole
 *   Q; K and V (for Q*K^T and scores*V)        2*s*b*h + 4*s*b*h*r
 *   softmax output (and with dropout its mask
 *     and its output)                          (2 + 3*delta)*a*s^2*b
 *   output projection input                    2*s*b*h
 *   attention dropout mask                     delta*s*b*h    whole
 *   FFN input                                  2*s*b*h        whole
 *   FFN inputs of the activation: GeLU's
 *     (2*s*b*f), or SwiGLU's gate and up
 *     (4*s*b*f): 2*s*b*f*(nmat - 1)
 *   down projection input                      2*s*b*f
 *   FFN dropout mask                           delta*s*b*h    whole
 *
 * For GPT (r = 1, f = 4h, nmat = 2, delta = 1) the sum is
 * s*b*h*(34 + 5*a*s/h), Korthikanti et al.'s Table 2.  Under t-way tensor
 * parallelism the rows marked whole are kept entire on each device,
 * (8 + 2*delta)*s*b*h, and the rest is split: for GPT
 * s*b*h*(10 + 24/t + 5*a*s/(h*t)), the table's second row.  Sequence
 * parallelism splits the whole rows too: (34 + 5*a*s/h)*s*b*h/t.
 * Selective recomputation drops the softmax rows (recomputed from Q and
 * K): 34*s*b*h/t with sequence parallelism.  Flash attention never
 * materialises them either, but keeps the log-sum-exp of each row of
 * each head in fp32 for its backward: 4*a*s*b bytes, split.  Full
 * recomputation keeps only the block's input, 2*s*b*h (whole without
 * sequence parallelism).
 *
 * Tensor-parallel collectives (Megatron-LM): a block all-reduces its
 * 2*s*b*h activation after attention and after the FFN in the forward,
 * and the input gradients of both halves in the backward; with sequence
 * parallelism each is an all-gather plus a reduce-scatter of the same
 * total volume.  Full recomputation repeats the forward's two.  The
 * vocabulary-parallel embedding all-reduces its output in the forward and
 * the head its input gradient in the backward; the cross entropy's three
 * all-reduces of 4*s*b bytes each are not counted.  With context
 * parallelism (ring attention) each rank passes on the K and V of its
 * part of the sequence: 4*s*b*h*r bytes of the whole sequence per block.
 *
 * Memory-bound kernels.  Besides its matrix multiplies a block runs
 * kernels whose time is the bytes they move, not their FLOPs; each is
 * counted as reading its inputs and writing its outputs once (16-bit
 * values, 1-byte masks; Megatron-LM fuses bias, dropout and residual add,
 * bias and GeLU, scale, mask and softmax), forward:
 *
 *   two norms                 read 2*s*b*h, write 2*s*b*h each   whole
 *   two residual adds         read 4*s*b*h, write 2*s*b*h (and
 *                             delta*s*b*h of mask) each          whole
 *   the FFN's activation      GeLU: read 2*s*b*f, write 2*s*b*f;
 *                             SwiGLU: read 4*s*b*f, write 2*s*b*f:
 *                             2*nmat*s*b*f
 *   softmax of the scores     read and write 2*a*s^2*b each, and with
 *                             dropout read 2, write 2 + 1 more:
 *                             (4 + 5*delta)*a*s^2*b (none with flash
 *                             attention, which keeps the scores on chip)
 *
 * (20 + 2*delta)*s*b*h whole and the rest split.  The backward moves
 * twice the forward's bytes (an input and an output gradient per tensor);
 * recomputation adds the forward's again (full), or the softmax's
 * (selective).  The head's loss reads the 16-bit logits, writes and reads
 * their fp32 copy: 10*s*b*V, split, twice that in the backward.  plan.c
 * charges these at the device's memory bandwidth.
 *
 * Every count is computed in double precision; products of the shapes in
 * use (GPT-3, Llama) stay below 2^53 and are exact.
 */
#include "ppcc.h"

/* Forward FLOPs of one block per microbatch. */
static double block_fwd_flops(const ppcc_transformer *t, double kv_ratio,
			      double f, double nmat)
{
	double b = t->micro_batch_size, s = t->seq_len, h = t->hidden;
	double attn_proj = 2.0 * h * h + 2.0 * h * (h * kv_ratio);
	return b * s * (2.0 * attn_proj + 2.0 * nmat * h * f + 4.0 * s * h);
}

/* The forward's weight matrices alone (all of it but the 4*b*s^2*h of
 * the attention scores and values): the weight gradient W repeats each of
 * those products once, the input gradient I once more plus the scores'
 * two, so for GPT F = 24sbh^2 + 4s^2bh, I = 24sbh^2 + 8s^2bh, W = 24sbh^2
 * (Qi et al., ICLR 2024, "Zero Bubble Pipeline Parallelism", Table 1). */
static double block_weight_flops(const ppcc_transformer *t, double kv_ratio,
				 double f, double nmat)
{
	double b = t->micro_batch_size, s = t->seq_len, h = t->hidden;
	double attn_proj = 2.0 * h * h + 2.0 * h * (h * kv_ratio);
	return b * s * (2.0 * attn_proj + 2.0 * nmat * h * f);
}

/* What W needs from I on, in 16 bits: the inputs of the weight products
 * (QKV's and the FFN's h wide, the output projection's h, the down
 * projection's f) and their output gradients (QKV's h(1 + 2k/a), the
 * output projection's h, the FFN's (nmat - 1) f, the down projection's
 * h): s*b*(12h + 4h*k/a + 2*nmat*f), for GPT 32sbh, the zero-bubble
 * paper's M_W. */
static double block_weight_stash(const ppcc_transformer *t, double kv_ratio,
				 double f, double nmat)
{
	double b = t->micro_batch_size, s = t->seq_len, h = t->hidden;
	return s * b * (12.0 * h + 4.0 * h * kv_ratio + 2.0 * nmat * f);
}

static double block_params(const ppcc_transformer *t, double kv_ratio,
			   double f, double nmat)
{
	double h = t->hidden;
	double weights = 2.0 * h * h + 2.0 * h * (h * kv_ratio) + nmat * h * f;
	double extra = t->swiglu ? 2.0 * h
				 : h + 2.0 * h * kv_ratio + h + f + h + 4.0 * h;
	return weights + extra;
}

void ppcc_transformer_block_stash(double *out_total, double *out_replicated,
				  const ppcc_transformer *t)
{
	double b = t->micro_batch_size, s = t->seq_len, h = t->hidden;
	double a = t->heads;
	double r = (t->kv_heads > 0 ? t->kv_heads : t->heads) / (double)t->heads;
	double f = t->ffn_hidden > 0 ? t->ffn_hidden : 4.0 * h;
	double nmat = t->swiglu ? 3.0 : 2.0;
	double delta = t->swiglu ? 0.0 : 1.0;
	double sbh = s * b * h;

	if (t->recompute == PPCC_RECOMPUTE_FULL) {
		*out_total = 2.0 * sbh;
		*out_replicated = 2.0 * sbh;
		return;
	}
	double whole = (8.0 + 2.0 * delta) * sbh;
	double split = 2.0 * sbh + 4.0 * sbh * r + 2.0 * sbh +
		       2.0 * s * b * f * (nmat - 1.0) + 2.0 * s * b * f;
	if (t->recompute == PPCC_RECOMPUTE_SELECTIVE)
		; /* the scores are recomputed */
	else if (t->flash_attention)
		split += 4.0 * a * s * b;
	else
		split += (2.0 + 3.0 * delta) * a * s * s * b;
	*out_total = whole + split;
	*out_replicated = whole;
}

int ppcc_transformer_expand(ppcc_layer **out, int *out_n, ppcc_arena *a,
			    const ppcc_transformer *t, ppcc_loc loc)
{
	*out = NULL;
	*out_n = 0;
	if (t->layers < 1 || t->layers > PPCC_MAX_LAYERS - 2 ||
	    t->hidden < 1 || t->heads < 1 || t->seq_len < 1 || t->vocab < 1 ||
	    t->micro_batch_size < 1)
		return PPCC_EINTERNAL;

	double b = t->micro_batch_size, s = t->seq_len, h = t->hidden;
	double V = t->vocab;
	double k = t->kv_heads > 0 ? t->kv_heads : t->heads;
	double kv_ratio = k / t->heads;
	double f = t->ffn_hidden > 0 ? t->ffn_hidden : 4.0 * h;
	double nmat = t->swiglu ? 3.0 : 2.0;
	double bpp = t->bytes_per_param; /* 0: from pipeline.zero */
	double delta = t->swiglu ? 0.0 : 1.0;
	int sp = t->sequence_parallel;

	int n = t->layers + 2;
	ppcc_layer *layers = ppcc_arena_alloc(a, (size_t)n, sizeof *layers);
	if (!layers)
		return PPCC_ENOMEM;

	ppcc_layer *embed = &layers[0];
	embed->name = "embed";
	embed->loc = loc;
	embed->fwd_flops = 0;
	embed->bwd_flops = 0;
	embed->params = V * h + (t->swiglu ? 0.0 : s * h);
	embed->activation_bytes = 2.0 * s * b * h;
	embed->stash_bytes = delta * s * b * h;
	embed->stash_replicated_bytes = sp ? 0.0 : embed->stash_bytes;
	embed->stash_weight_bytes = embed->stash_bytes;
	embed->bytes_per_param = bpp;
	embed->tp_message_bytes = 2.0 * s * b * h;
	embed->tp_fwd_allreduces = 1;

	double fwd = block_fwd_flops(t, kv_ratio, f, nmat);
	double recompute = 0;
	if (t->recompute == PPCC_RECOMPUTE_FULL)
		recompute = fwd;
	else if (t->recompute == PPCC_RECOMPUTE_SELECTIVE)
		recompute = 4.0 * b * s * s * h;
	double stash, replicated;
	ppcc_transformer_block_stash(&stash, &replicated, t);
	double kwhole = (20.0 + 2.0 * delta) * s * b * h;
	double kscores = t->flash_attention ? 0.0
		: (4.0 + 5.0 * delta) * t->heads * s * s * b;
	double kfwd = kwhole + 2.0 * nmat * s * b * f + kscores;
	double kbwd = 2.0 * kfwd, kbwd_whole = 2.0 * kwhole;
	if (t->recompute == PPCC_RECOMPUTE_FULL) {
		kbwd += kfwd;
		kbwd_whole += kwhole;
	} else if (t->recompute == PPCC_RECOMPUTE_SELECTIVE) {
		kbwd += kscores;
	}
	ppcc_layer block = {
		.name = "block",
		.loc = loc,
		.fwd_flops = fwd,
		.bwd_flops = 2.0 * fwd + recompute,
		.bwd_weight_flops = block_weight_flops(t, kv_ratio, f, nmat),
		.params = block_params(t, kv_ratio, f, nmat),
		.activation_bytes = 2.0 * s * b * h,
		.stash_bytes = stash,
		.stash_weight_bytes = block_weight_stash(t, kv_ratio, f, nmat),
		.bytes_per_param = bpp,
		.recompute_flops = recompute,
		.stash_replicated_bytes = sp ? 0.0 : replicated,
		.tp_message_bytes = 2.0 * s * b * h,
		.tp_fwd_allreduces = 2,
		.tp_bwd_allreduces = t->recompute == PPCC_RECOMPUTE_FULL ? 4 : 2,
		.cp_kv_bytes = 4.0 * s * b * h * kv_ratio,
		.kernel_fwd_bytes = kfwd,
		.kernel_bwd_bytes = kbwd,
		.kernel_fwd_replicated_bytes = sp ? 0.0 : kwhole,
		.kernel_bwd_replicated_bytes = sp ? 0.0 : kbwd_whole,
	};
	for (int i = 1; i <= t->layers; i++)
		layers[i] = block;

	ppcc_layer *head = &layers[n - 1];
	head->name = "head";
	head->loc = loc;
	head->fwd_flops = 2.0 * b * s * h * V;
	head->bwd_flops = 2.0 * head->fwd_flops;
	head->bwd_weight_flops = head->fwd_flops;
	head->params = V * h + (t->swiglu ? h : 2.0 * h);
	head->activation_bytes = 0;
	head->logits_bytes = 6.0 * s * b * V;
	head->stash_bytes = 4.0 * s * b * h + head->logits_bytes;
	/* the output layer's input and the logits' gradient */
	head->stash_weight_bytes = 2.0 * s * b * h + 2.0 * s * b * V;
	head->stash_replicated_bytes = sp ? 0.0 : 4.0 * s * b * h;
	head->bytes_per_param = bpp;
	head->tp_message_bytes = 2.0 * s * b * h;
	head->tp_bwd_allreduces = 1;
	head->kernel_fwd_bytes = 10.0 * s * b * V;
	head->kernel_bwd_bytes = 20.0 * s * b * V;

	*out = layers;
	*out_n = n;
	return 0;
}
