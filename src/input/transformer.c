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

/* One block's widths.  The attention's: q = heads x head_dim for Q and
 * the output projection, kv = kv_heads x head_dim for K and for V.  The
 * FFN's: nmat matrices of a token's width f (the dense FFN's, or in a
 * mixture of experts the routed experts' cf x top_k x their width plus
 * the shared experts'); in a mixture of experts E routed experts of
 * width fe each and the shared experts' width fs. */
typedef struct block_shape {
	double h, q, kv, nmat, f;
	int moe;
	double E, k, fe, fs, cf;
} block_shape;

static void shape_of(block_shape *out, const ppcc_transformer *t, int moe)
{
	double h = t->hidden, a = t->heads;
	double dh = t->head_dim > 0 ? t->head_dim : h / a;
	double kvh = t->kv_heads > 0 ? t->kv_heads : a;
	*out = (block_shape){
		.h = h,
		.q = t->head_dim > 0 ? a * dh : h,
		.kv = t->head_dim > 0 ? kvh * dh : h * (kvh / a),
		.nmat = t->swiglu ? 3.0 : 2.0,
		.f = t->ffn_hidden > 0 ? t->ffn_hidden : 4.0 * h,
	};
	if (!moe)
		return;
	const ppcc_moe *m = &t->moe;
	out->moe = 1;
	out->E = m->experts;
	out->k = m->top_k;
	out->fe = m->ffn_hidden;
	out->fs = (double)m->shared_experts * m->ffn_hidden;
	out->cf = m->capacity_factor > 0 ? m->capacity_factor : 1.0;
	out->f = out->cf * out->k * out->fe + out->fs;
}

int ppcc_transformer_is_moe(const ppcc_transformer *t, int i)
{
	const ppcc_moe *m = &t->moe;
	return m->experts > 0 && i >= m->dense_layers &&
	       (i - m->dense_layers) % (m->every > 0 ? m->every : 1) == 0;
}

/* The forward's attention scores and values, Q K^T and P V, per
 * microbatch: 4*b*s^2*q for the full square the unfused kernel computes,
 * half that under flash attention's causal mask, which skips the blocks
 * above the diagonal (as Megatron-LM counts it: d98e8a6
 * megatron/training/training.py:1163-1169). */
static double attention_flops(const ppcc_transformer *t, const block_shape *g)
{
	double b = t->micro_batch_size, s = t->seq_len;
	return (t->flash_attention ? 2.0 : 4.0) * b * s * s * g->q;
}

/* The forward's weight matrices alone (all of it but the attention_flops of
 * the attention scores and values): the weight gradient W repeats each of
 * those products once, the input gradient I once more plus the scores'
 * two, so for GPT F = 24sbh^2 + 4s^2bh, I = 24sbh^2 + 8s^2bh, W = 24sbh^2
 * (Qi et al., ICLR 2024, "Zero Bubble Pipeline Parallelism", Table 1).
 * A mixture of experts adds its router, h x E a token. */
static double block_weight_flops(const ppcc_transformer *t,
				 const block_shape *g)
{
	double b = t->micro_batch_size, s = t->seq_len, h = g->h;
	double attn_proj = 2.0 * h * g->q + 2.0 * h * g->kv;
	return b * s * (2.0 * attn_proj + 2.0 * g->nmat * h * g->f +
			2.0 * h * g->E);
}

/* Forward FLOPs of one block per microbatch. */
static double block_fwd_flops(const ppcc_transformer *t, const block_shape *g)
{
	return block_weight_flops(t, g) + attention_flops(t, g);
}

/* The routed experts' part of block_fwd_flops. */
static double block_expert_flops(const ppcc_transformer *t,
				 const block_shape *g)
{
	double b = t->micro_batch_size, s = t->seq_len;
	return b * s * 2.0 * g->nmat * g->h * g->cf * g->k * g->fe;
}

/* What W needs from I on, in 16 bits: the inputs of the weight products
 * (QKV's and the FFN's h wide, the output projection's q, the down
 * projection's f) and their output gradients (QKV's q + 2kv, the output
 * projection's h, the FFN's (nmat - 1) f, the down projection's h):
 * s*b*(8h + 4q + 4kv + 2*nmat*f), for GPT 32sbh, the zero-bubble paper's
 * M_W.  A mixture of experts holds the FFN's h-wide rows once per copy of
 * a token (cf x top_k, and once for the shared experts) and its router's
 * input and output gradient. */
static double block_weight_stash(const ppcc_transformer *t,
				 const block_shape *g)
{
	double b = t->micro_batch_size, s = t->seq_len, h = g->h;
	double copies = g->moe ? g->cf * g->k + (g->fs > 0 ? 1.0 : 0.0) : 1.0;
	return s * b * (4.0 * h + 4.0 * g->q + 4.0 * g->kv +
			4.0 * h * copies + 2.0 * g->nmat * g->f +
			(g->moe ? 2.0 * (h + g->E) : 0.0));
}

/* The routed experts' parameters of a block (0 for a dense one). */
static double block_expert_params(const block_shape *g)
{
	return g->E * g->nmat * g->h * g->fe;
}

static double block_params(const ppcc_transformer *t, const block_shape *g)
{
	double h = g->h;
	double ffn = g->moe ? block_expert_params(g) + g->nmat * h * g->fs +
				      h * g->E
			    : g->nmat * h * g->f;
	double weights = 2.0 * h * g->q + 2.0 * h * g->kv + ffn;
	/* the biases (none with swiglu, which a mixture of experts needs),
	 * then two norms of h weights each, and h biases each for
	 * LayerNorm */
	double biases = t->swiglu ? 0.0 : g->q + 2.0 * g->kv + h + g->f + h;
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

static double count_params(const ppcc_transformer *t, int active)
{
	block_shape dense, moe;
	shape_of(&dense, t, 0);
	shape_of(&moe, t, 1);
	double blocks = 0;
	for (int i = 0; i < t->layers; i++) {
		if (!ppcc_transformer_is_moe(t, i)) {
			blocks += block_params(t, &dense);
			continue;
		}
		blocks += block_params(t, &moe);
		if (active)
			blocks -= (moe.E - moe.k) * moe.nmat * moe.h * moe.fe;
	}
	return embed_params(t) + blocks + head_params(t) -
	       (t->tie_embeddings ? (double)t->vocab * t->hidden : 0.0);
}

double ppcc_transformer_params(const ppcc_transformer *t)
{
	return count_params(t, 0);
}

double ppcc_transformer_active_params(const ppcc_transformer *t)
{
	return count_params(t, 1);
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

/* The block stash (doc/design/transformer.md's table) of a block of
 * shape g.  A mixture of experts keeps, besides the FFN rows at its
 * token width, each routed copy of a token as the experts read it and
 * as they return it (2 x cf x top_k x 2*s*b*h) and the router's fp32
 * scores, 4*s*b*E. */
static void block_stash(double *out_total, double *out_replicated,
			const ppcc_transformer *t, const block_shape *g)
{
	double b = t->micro_batch_size, s = t->seq_len, h = t->hidden;
	double a = t->heads;
	double f = g->f, nmat = g->nmat;
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
	double split = 2.0 * s * b * g->q + 4.0 * s * b * g->kv +
		       2.0 * s * b * g->q + 2.0 * s * b * f * (nmat - 1.0) +
		       2.0 * s * b * f;
	if (g->moe)
		split += 4.0 * g->cf * g->k * sbh + 4.0 * s * b * g->E;
	if (t->recompute == PPCC_RECOMPUTE_SELECTIVE)
		; /* the scores are recomputed */
	else if (t->flash_attention)
		split += 4.0 * a * s * b;
	else
		split += (2.0 + 3.0 * delta) * a * s * s * b;
	*out_total = whole + split;
	*out_replicated = whole;
}

void ppcc_transformer_block_stash(double *out_total, double *out_replicated,
				  const ppcc_transformer *t)
{
	block_shape g;
	shape_of(&g, t, 0);
	block_stash(out_total, out_replicated, t, &g);
}

/* One block of shape g, as a layer. */
static ppcc_layer block_layer(const ppcc_transformer *t, const block_shape *g,
			      ppcc_loc loc)
{
	double b = t->micro_batch_size, s = t->seq_len, h = t->hidden;
	double delta = t->swiglu ? 0.0 : 1.0;
	int sp = t->sequence_parallel;
	double fwd = block_fwd_flops(t, g);
	double recompute = 0;
	if (t->recompute == PPCC_RECOMPUTE_FULL)
		recompute = fwd;
	else if (t->recompute == PPCC_RECOMPUTE_SELECTIVE &&
		 t->trainer == PPCC_TRAINER_TORCHTITAN) {
		double per_token = 0;
		op_sac_saved(t, &per_token);
		recompute = b * s * per_token;
	} else if (t->recompute == PPCC_RECOMPUTE_SELECTIVE)
		recompute = attention_flops(t, g);
	double stash, replicated;
	block_stash(&stash, &replicated, t, g);
	double kwhole = (20.0 + 2.0 * delta) * s * b * h;
	double kscores = t->flash_attention ? 0.0
		: (4.0 + 5.0 * delta) * t->heads * s * s * b;
	/* a mixture of experts also permutes each token to its experts and
	 * back: reads 2*s*b*h and writes cf x top_k copies, each way */
	double kperm = g->moe ? 4.0 * s * b * h * (1.0 + g->cf * g->k) : 0.0;
	double kfwd = kwhole + 2.0 * g->nmat * s * b * g->f + kscores + kperm;
	double kbwd = 2.0 * kfwd, kbwd_whole = 2.0 * kwhole;
	if (t->recompute == PPCC_RECOMPUTE_FULL) {
		kbwd += kfwd;
		kbwd_whole += kwhole;
	} else if (t->recompute == PPCC_RECOMPUTE_SELECTIVE) {
		kbwd += kscores;
	}
	double expert = g->moe ? block_expert_flops(t, g) : 0.0;
	return (ppcc_layer){
		.name = g->moe ? "moe_block" : "block",
		.loc = loc,
		.fwd_flops = fwd,
		.bwd_flops = 2.0 * fwd + recompute,
		.bwd_weight_flops = block_weight_flops(t, g),
		.params = block_params(t, g),
		.activation_bytes = 2.0 * s * b * h,
		.stash_bytes = stash,
		.stash_weight_bytes = block_weight_stash(t, g),
		.bytes_per_param = t->bytes_per_param,
		.recompute_flops = recompute,
		.stash_replicated_bytes = sp ? 0.0 : replicated,
		.tp_message_bytes = 2.0 * s * b * h,
		/* attention's and the FFN's; a mixture of experts moves its
		 * tokens with its all-to-alls instead (a2a_bytes) */
		.tp_fwd_allreduces = g->moe ? 1 : 2,
		.tp_bwd_allreduces = (g->moe ? 1 : 2) *
				     (t->recompute == PPCC_RECOMPUTE_FULL ? 2 : 1),
		.cp_kv_bytes = 2.0 * s * b * g->kv * 2.0,
		.kernel_fwd_bytes = kfwd,
		.kernel_bwd_bytes = kbwd,
		.kernel_fwd_replicated_bytes = sp ? 0.0 : kwhole,
		.kernel_bwd_replicated_bytes = sp ? 0.0 : kbwd_whole,
		.expert_params = g->moe ? block_expert_params(g) : 0.0,
		.expert_fwd_flops = expert,
		/* each copy of a token to a routed expert, 16 bits */
		.a2a_bytes = g->moe ? 2.0 * g->k * s * b * h : 0.0,
	};
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

	block_shape dense, moe;
	shape_of(&dense, t, 0);
	shape_of(&moe, t, 1);
	ppcc_layer block = block_layer(t, &dense, loc);
	ppcc_layer moe_block = t->moe.experts > 0 ? block_layer(t, &moe, loc)
						  : block;
	for (int i = 1; i <= t->layers; i++)
		layers[i] = ppcc_transformer_is_moe(t, i - 1) ? moe_block : block;

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
