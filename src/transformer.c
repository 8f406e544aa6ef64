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
 *       Recomputation in Large Transformer Models");
 *   block parameters     2h^2 + 2h*(h*k/a) + nmat*h*f, plus for GPT the
 *       biases (h + 2h*k/a for QKV, h for O, f and h for the FFN) and two
 *       LayerNorms (4h), for SwiGLU two RMSNorm weights (2h);
 *   block activation     2*s*b*h bytes sent to the next layer (16-bit);
 *   block stash          kept for the backward (Korthikanti et al., Table 2,
 *       16-bit, before tensor parallelism): no recomputation
 *       s*b*h*(34 + 5*a*s/h), selective 34*s*b*h, full 2*s*b*h;
 *   embed                no FLOPs (a lookup), V*h parameters plus s*h
 *       learned positions when not SwiGLU, 2*s*b*h sent and stashed;
 *   head                 forward 2*b*s*h*V (the logits), V*h parameters
 *       (untied: the last stage holds its own copy) plus the final norm
 *       (h for RMSNorm, 2h for LayerNorm), nothing sent, 2*s*b*h + 4*b*s*V
 *       stashed (the input and the fp32 logits).
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

static double block_params(const ppcc_transformer *t, double kv_ratio,
			   double f, double nmat)
{
	double h = t->hidden;
	double weights = 2.0 * h * h + 2.0 * h * (h * kv_ratio) + nmat * h * f;
	double extra = t->swiglu ? 2.0 * h
				 : h + 2.0 * h * kv_ratio + h + f + h + 4.0 * h;
	return weights + extra;
}

static double block_stash_bytes(const ppcc_transformer *t)
{
	double b = t->micro_batch_size, s = t->seq_len, h = t->hidden;
	double a = t->heads;
	switch (t->recompute) {
	case PPCC_RECOMPUTE_SELECTIVE:
		return 34.0 * s * b * h;
	case PPCC_RECOMPUTE_FULL:
		return 2.0 * s * b * h;
	default:
		return s * b * h * (34.0 + 5.0 * a * s / h);
	}
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
	double bpp = t->bytes_per_param > 0 ? t->bytes_per_param : 16.0;

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
	embed->stash_bytes = 2.0 * s * b * h;
	embed->bytes_per_param = bpp;

	double fwd = block_fwd_flops(t, kv_ratio, f, nmat);
	double bwd = 2.0 * fwd;
	if (t->recompute == PPCC_RECOMPUTE_FULL)
		bwd += fwd;
	else if (t->recompute == PPCC_RECOMPUTE_SELECTIVE)
		bwd += 4.0 * b * s * s * h;
	ppcc_layer block = {
		.name = "block",
		.loc = loc,
		.fwd_flops = fwd,
		.bwd_flops = bwd,
		.params = block_params(t, kv_ratio, f, nmat),
		.activation_bytes = 2.0 * s * b * h,
		.stash_bytes = block_stash_bytes(t),
		.bytes_per_param = bpp,
	};
	for (int i = 1; i <= t->layers; i++)
		layers[i] = block;

	ppcc_layer *head = &layers[n - 1];
	head->name = "head";
	head->loc = loc;
	head->fwd_flops = 2.0 * b * s * h * V;
	head->bwd_flops = 2.0 * head->fwd_flops;
	head->params = V * h + (t->swiglu ? h : 2.0 * h);
	head->activation_bytes = 0;
	head->stash_bytes = 2.0 * s * b * h + 4.0 * b * s * V;
	head->bytes_per_param = bpp;

	*out = layers;
	*out_n = n;
	return 0;
}
