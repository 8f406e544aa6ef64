/*
 * transformer.c - the `transformer:` shorthand: a decoder-only transformer
 * described by its shape, expanded into the per-layer costs a `layers:`
 * list would give.
 *
 * The model becomes L + 2 layers: "embed", L x "block", "head", each
 * with its FLOPs (forward, backward, the split backward's weight part),
 * parameters, activation sent, stash, tensor- and context-parallel
 * collectives and memory-bound kernel bytes, per microbatch, for GPT
 * (LayerNorm, GeLU, dropout) or SwiGLU (RMSNorm, no dropout) blocks,
 * grouped-query attention, sequence parallelism, flash attention and
 * none, selective or full recomputation.  The formulas follow Narayanan
 * et al., SC'21 (FLOPs) and Korthikanti et al., 2022 (the stash), and
 * reduce to their closed forms for GPT.
 * Limits: the cross entropy's small all-reduces are not counted; every
 * count is computed in double precision, exact for the shapes in use
 * (GPT-3, Llama), whose products stay below 2^53.
 *
 * Derivation: doc/design/transformer.md (every formula, the block stash
 * table, the collectives and the memory-bound kernels).
 */
#include "ppcc.h"

/* The forward's attention scores and values, Q K^T and P V, per
 * microbatch: 4*b*s^2*h for the full square the unfused kernel computes,
 * half that under flash attention's causal mask, which skips the blocks
 * above the diagonal (as Megatron-LM counts it: d98e8a6
 * megatron/training/training.py:1163-1169). */
static double attention_flops(const ppcc_transformer *t)
{
	double b = t->micro_batch_size, s = t->seq_len, h = t->hidden;
	return (t->flash_attention ? 2.0 : 4.0) * b * s * s * h;
}

/* Forward FLOPs of one block per microbatch. */
static double block_fwd_flops(const ppcc_transformer *t, double kv_ratio,
			      double f, double nmat)
{
	double b = t->micro_batch_size, s = t->seq_len, h = t->hidden;
	double attn_proj = 2.0 * h * h + 2.0 * h * (h * kv_ratio);
	return b * s * (2.0 * attn_proj + 2.0 * nmat * h * f) +
	       attention_flops(t);
}

/* The forward's weight matrices alone (all of it but the attention_flops of
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
	/* the biases (none with swiglu), then two norms of h weights each,
	 * and h biases each for LayerNorm */
	double biases = t->swiglu ? 0.0 : h + 2.0 * h * kv_ratio + h + f + h;
	double norms = t->norm == PPCC_NORM_LAYERNORM ? 4.0 * h : 2.0 * h;
	return weights + biases + norms;
}

/* The embedding's weights (and learned positions'), and the head's: the
 * final norm and the output layer's V x h, tied or not (with a pipeline
 * Megatron-LM keeps a copy of the tied weights on the last stage,
 * doc/design/transformer.md). */
static double embed_params(const ppcc_transformer *t)
{
	double h = t->hidden;
	return (double)t->vocab * h +
	       (t->position == PPCC_POSITION_LEARNED ? t->seq_len * h : 0.0);
}

static double head_params(const ppcc_transformer *t)
{
	double h = t->hidden;
	return (double)t->vocab * h +
	       (t->norm == PPCC_NORM_LAYERNORM ? 2.0 * h : h);
}

double ppcc_transformer_params(const ppcc_transformer *t)
{
	double h = t->hidden;
	double k = t->kv_heads > 0 ? t->kv_heads : t->heads;
	double f = t->ffn_hidden > 0 ? t->ffn_hidden : 4.0 * h;
	double block = block_params(t, k / t->heads, f, t->swiglu ? 3.0 : 2.0);
	return embed_params(t) + t->layers * block + head_params(t) -
	       (t->tie_embeddings ? (double)t->vocab * h : 0.0);
}

/* torchtitan's per-operation selective recomputation: the matmul
 * outputs it keeps, in bytes per token, and (rc non-NULL) the FLOPs per
 * token of those it recomputes.  Its policy saves the output of every
 * other aten.mm of a block (the 1st, 3rd, ...: Q, V and the first FFN
 * matrix, and SwiGLU's down projection), flash attention's output and
 * the reduce-scatters'; a linear with biases runs as addmm, which it
 * does not save (doc/design/memory.md). */
static double op_sac_saved(const ppcc_transformer *t, double *rc)
{
	double h = t->hidden, a = t->heads;
	double r = (t->kv_heads > 0 ? t->kv_heads : t->heads) / a;
	double f = t->ffn_hidden > 0 ? t->ffn_hidden : 4.0 * h;
	/* each mm in order: its input and output widths */
	double in[7] = {h, h, h, h, h, h, f}, out[7] = {h, h * r, h * r, h, f,
							 f, h};
	int n = 7;
	if (!t->swiglu) { /* no gate: W1 (h -> f), W2 (f -> h) */
		in[5] = f;
		out[5] = h;
		n = 6;
	}
	double saved = 0, flops = 0;
	for (int i = 0; i < n; i++) {
		if (i % 2 == 0 && t->swiglu)
			saved += 2.0 * out[i];
		else
			flops += 2.0 * in[i] * out[i];
	}
	if (rc)
		*rc = flops;
	return saved;
}

/* The part of op_sac_saved that stays whole on each tensor-parallel
 * device: a row-parallel matmul's output (the output projection's, the
 * down projection's) is a full partial sum before its reduce-scatter. */
static double op_sac_whole(const ppcc_transformer *t)
{
	double h = t->hidden;
	return t->swiglu ? 2.0 * h : 0.0; /* the down projection, 7th */
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
	if (t->trainer == PPCC_TRAINER_TORCHTITAN &&
	    t->recompute == PPCC_RECOMPUTE_SELECTIVE) {
		/* the block's input, flash attention's output and its
		 * log-sum-exp (fp32 a head), the matmul outputs kept */
		double tokens = s * b;
		*out_total = tokens * (4.0 * h + 4.0 * a + op_sac_saved(t, NULL));
		*out_replicated = tokens * op_sac_whole(t);
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
	embed->params = embed_params(t);
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
	else if (t->recompute == PPCC_RECOMPUTE_SELECTIVE &&
		 t->trainer == PPCC_TRAINER_TORCHTITAN) {
		double per_token = 0;
		op_sac_saved(t, &per_token);
		recompute = b * s * per_token;
	} else if (t->recompute == PPCC_RECOMPUTE_SELECTIVE)
		recompute = attention_flops(t);
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
	head->params = head_params(t);
	head->activation_bytes = 0;
	/* Megatron-LM: the 16-bit logits and their fp32 copy; torchtitan's
	 * loss upcasts them, and its backward holds the log-softmax's fp32
	 * output, its gradient and the gradient of its input at once */
	head->logits_bytes = (t->trainer == PPCC_TRAINER_TORCHTITAN ? 12.0
								    : 6.0) *
			     s * b * V;
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
