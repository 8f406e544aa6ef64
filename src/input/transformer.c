/*
 * transformer.c - the `transformer:` shorthand: a decoder-only transformer
 * described by its shape, expanded into the per-layer costs a `layers:`
 * list would give.
 *
 * The model becomes L + 2 layers: "embed", L x "block" (or "moe_block"),
 * "head" (carrying any multi-token prediction modules), each with its
 * FLOPs (forward, backward, the split backward's weight part),
 * parameters, activation sent, stash, tensor- and context-parallel
 * collectives and memory-bound kernel bytes, per microbatch, for GPT
 * (LayerNorm, GeLU, dropout) or SwiGLU (RMSNorm, no dropout) blocks,
 * grouped-query or multi-head latent attention, sliding windows,
 * mixtures of experts, sequence parallelism, flash attention and none,
 * selective or full recomputation.  The formulas follow Narayanan et
 * al., SC'21 (FLOPs) and Korthikanti et al., 2022 (the stash), and
 * reduce to their closed forms for GPT.
 * Limits: the cross entropy's small all-reduces are not counted; every
 * count is computed in double precision, exact for the shapes in use
 * (GPT-3, Llama), whose products stay below 2^53.
 *
 * Derivation: doc/design/transformer.md (every formula, the block stash
 * table, the collectives and the memory-bound kernels).
 */
#include "ppcc.h"

/* One block's widths.  The attention's: Q, K and V as the scores and
 * values read them (qw, kw, vw), the output projection's input ow, the
 * scores' and the values' products over every query head (sw, pw), the
 * attention's weights a token multiplies (attn) and, for multi-head
 * latent attention, its latents: qr (Q's, 0 with no compression), kvr
 * (K's and V's) and dr (the key all heads share).  Multi-head or
 * grouped-query attention has q = heads x head_dim for Q and O and
 * kv = kv_heads x head_dim for K and for V.  The FFN's: nmat matrices of
 * a token's width f (the dense FFN's, or in a mixture of experts the
 * routed experts' cf x top_k x their width plus the shared experts'); in
 * a mixture of experts E routed experts of width fe each and the shared
 * experts' width fs.  window: the keys a query sees, 0 all before it. */
typedef struct block_shape {
	double h, q, kv, nmat, f;
	double qw, kw, vw, ow, sw, pw, attn;
	int mla;
	double qr, kvr, dr, kvup;
	int moe;
	double E, k, fe, fs, cf;
	double window;
} block_shape;

static void shape_of(block_shape *out, const ppcc_transformer *t, int moe,
		     int windowed)
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
		.window = windowed ? t->sliding_window : 0,
	};
	const ppcc_mla *l = &t->mla;
	if (l->kind) {
		double qk = a * ((double)l->qk_nope_head_dim +
				 l->qk_rope_head_dim);
		double v = a * l->v_head_dim;
		out->mla = 1;
		out->qr = l->q_lora_rank;
		out->kvr = l->kv_lora_rank;
		out->dr = l->qk_rope_head_dim;
		out->qw = out->kw = out->sw = qk;
		out->vw = out->ow = out->pw = v;
		out->kvup = a * ((double)l->qk_nope_head_dim + l->v_head_dim);
		/* Q down and up (or straight from h), K and V down with the
		 * shared key, K and V up, the output projection */
		out->attn = (out->qr > 0 ? h * out->qr + out->qr * qk
					 : h * qk) +
			    h * (out->kvr + out->dr) +
			    out->kvr * a * ((double)l->qk_nope_head_dim +
					    l->v_head_dim) +
			    v * h;
	} else {
		out->qw = out->ow = out->sw = out->pw = out->q;
		out->kw = out->vw = out->kv;
		out->attn = 2.0 * h * out->q + 2.0 * h * out->kv;
	}
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

const char *const ppcc_recompute_module_names[] = {
	"core_attn", "layernorm", "mla_up_proj", "moe_act", NULL};

const char *ppcc_recompute_modules_text(char *buf, size_t size,
					unsigned modules, const char *sep)
{
	const char *const *names = ppcc_recompute_module_names;
	size_t at = 0;
	if (size)
		buf[0] = '\0';
	for (int i = 0; names[i]; i++)
		if ((modules & (1u << i)) && at < size)
			at += (size_t)snprintf(buf + at, size - at, "%s%s",
					       at ? sep : "", names[i]);
	return buf;
}

int ppcc_transformer_is_moe(const ppcc_transformer *t, int i)
{
	const ppcc_moe *m = &t->moe;
	return m->experts > 0 && i >= m->dense_layers &&
	       (i - m->dense_layers) % (m->every > 0 ? m->every : 1) == 0;
}

int ppcc_transformer_is_windowed(const ppcc_transformer *t, int i)
{
	int n = t->sliding_window_pattern;
	return t->sliding_window > 0 && !(n >= 2 && (i + 1) % n == 0);
}

int ppcc_transformer_head_width(const ppcc_transformer *t)
{
	if (t->mla.kind)
		return t->mla.qk_nope_head_dim + t->mla.qk_rope_head_dim;
	return t->head_dim > 0 ? t->head_dim
	       : t->heads > 0 ? t->hidden / t->heads : 0;
}

const char *ppcc_transformer_fa2_refuses(const ppcc_transformer *t)
{
	if (t->mla.kind)
		return "latent attention, whose queries and keys are wider "
		       "than its values";
	if (t->attention_sinks)
		return "attention sinks";
	if (ppcc_transformer_head_width(t) > 256)
		return "heads over 256 wide";
	return NULL;
}

/* The keys the flash kernel scores per sequence, summed over its queries:
 * s^2/2, the causal half, as Megatron-LM counts it; within a window of W
 * < s keys the band of that triangle, s*W - W^2/2 (the sum over
 * positions of min(i + 1, W), less the W/2 that the causal count's s^2/2
 * leaves out of s(s + 1)/2 too). */
static double causal_keys(double s, double w)
{
	return w > 0 && w < s ? s * w - w * w / 2.0 : s * s / 2.0;
}

/* The forward's attention scores and values, Q K^T over every query head's
 * Q and K width and P V over its V width, per microbatch: 2*b*s^2*(sw +
 * pw) for the full square
 * the unfused kernel computes (4*b*s^2*q for multi-head attention), half
 * that under flash attention's causal mask, which skips the blocks above
 * the diagonal (as Megatron-LM counts it: d98e8a6
 * megatron/training/training.py:1163-1169), and within a sliding window
 * the band causal_keys counts. */
static double attention_flops(const ppcc_transformer *t, const block_shape *g)
{
	double b = t->micro_batch_size, s = t->seq_len;
	double keys = t->flash_attention ? causal_keys(s, g->window) : s * s;
	return 2.0 * b * keys * (g->sw + g->pw);
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
	return b * s * (2.0 * g->attn + 2.0 * g->nmat * h * g->f +
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

/* The attention's part of W's stash, in 16-bit values a token: each
 * weight product's input and output gradient, an input two products
 * share counted once.  Multi-head: QKV's input h and output gradient
 * q + 2kv, O's input q and output gradient h.  Latent: the block's h
 * (read by Q's and KV's down projections), the latents qr and kvr (read
 * by the up projections), O's input; the gradients of the down
 * projections' outputs qr and kvr + dr, of the up projections' qk and
 * heads x (nope + v), and of O's output h. */
static double attention_weight_widths(const block_shape *g)
{
	double h = g->h;
	if (!g->mla)
		return 2.0 * h + 2.0 * g->q + 2.0 * g->kv;
	return 2.0 * h + 2.0 * g->qr + 2.0 * g->kvr + g->dr + g->qw +
	       g->kvup + g->ow;
}

/* What W needs from I on, in 16 bits: the inputs of the weight products
 * and their output gradients, the attention's (attention_weight_widths)
 * and the FFN's (its input h and the down projection's output gradient
 * h, the down projection's input f and the other matrices' output
 * gradients (nmat - 1) f): for multi-head attention s*b*(8h + 4q + 4kv +
 * 2*nmat*f), for GPT 32sbh, the zero-bubble paper's M_W.  A mixture of
 * experts holds the FFN's h-wide rows once per copy of a token (cf x
 * top_k, and once for the shared experts) and its router's input and
 * output gradient. */
static double block_weight_stash(const ppcc_transformer *t,
				 const block_shape *g)
{
	double b = t->micro_batch_size, s = t->seq_len, h = g->h;
	double copies = g->moe ? g->cf * g->k + (g->fs > 0 ? 1.0 : 0.0) : 1.0;
	return s * b * (2.0 * attention_weight_widths(g) +
			4.0 * h * copies + 2.0 * g->nmat * g->f +
			(g->moe ? 2.0 * (h + g->E) : 0.0));
}

/* The routed experts' parameters of a block (0 for a dense one), with
 * GPT-OSS's biases on their matrices (2 x fe on the fused gate and up,
 * h on the down projection). */
static double block_expert_params(const ppcc_transformer *t,
				  const block_shape *g)
{
	double bias = t->biases ? (g->nmat - 1.0) * g->fe + g->h : 0.0;
	return g->E * (g->nmat * g->h * g->fe + bias);
}

/* The parameters Megatron-LM keeps whole on every tensor-parallel
 * device: multi-head latent attention's down projections (a duplicated
 * TELinear) and the norms of their latents. */
static double block_replicated_params(const block_shape *g)
{
	if (!g->mla)
		return 0.0;
	return g->h * (g->qr + g->kvr + g->dr) + g->qr + g->kvr;
}

static double block_params(const ppcc_transformer *t, const block_shape *g)
{
	double h = g->h;
	double ffn = g->moe ? block_expert_params(t, g) +
				      g->nmat * h * g->fs + h * g->E
			    : g->nmat * h * g->f;
	double weights = g->attn + ffn;
	/* the biases: GPT's (Q, K, V, O, the FFN's), none with swiglu
	 * unless biases is set (GPT-OSS's: Q, K, V, O, the router's, the
	 * experts' above) and attention sinks, a logit a head; two norms
	 * of h weights each, and h biases each for LayerNorm, and the
	 * latents' norms of multi-head latent attention */
	double biases = 0;
	if (!t->swiglu)
		biases = g->q + 2.0 * g->kv + h + g->f + h;
	else if (t->biases && g->moe)
		biases = g->q + 2.0 * g->kv + h + g->E +
			 (g->fs > 0 ? (g->nmat - 1.0) * g->fs + h : 0.0);
	else if (t->biases)
		biases = g->q + 2.0 * g->kv + h + (g->nmat - 1.0) * g->f + h;
	if (t->attention_sinks)
		biases += t->heads;
	double norms = t->norm == PPCC_NORM_LAYERNORM ? 4.0 * h : 2.0 * h;
	if (g->mla)
		norms += g->qr + g->kvr;
	if (t->qk_norm) /* one weight a head dimension, each of Q and K */
		norms += 2.0 * g->q / t->heads;
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

/* The shape of block i (from 0). */
static void block_shape_at(block_shape *out, const ppcc_transformer *t, int i)
{
	shape_of(out, t, ppcc_transformer_is_moe(t, i),
		 ppcc_transformer_is_windowed(t, i));
}

/* One multi-token prediction module's own parameters: two RMSNorms (of
 * the embedding and of the hidden state), the 2h -> h projection, a
 * block as the last and its final norm; the embedding and the output
 * layer are the model's. */
static double mtp_module_params(const ppcc_transformer *t)
{
	double h = t->hidden;
	block_shape g;
	block_shape_at(&g, t, t->layers - 1);
	return 3.0 * h + 2.0 * h * h + block_params(t, &g);
}

double ppcc_transformer_mtp_params(const ppcc_transformer *t)
{
	return t->mtp_layers * mtp_module_params(t);
}

static double count_params(const ppcc_transformer *t, int active)
{
	double blocks = 0;
	for (int i = 0; i < t->layers; i++) {
		block_shape g;
		block_shape_at(&g, t, i);
		blocks += block_params(t, &g);
		if (active && g.moe)
			blocks -= (g.E - g.k) / g.E *
				  block_expert_params(t, &g);
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

void ppcc_transformer_split_of(ppcc_transformer_split *out,
			       const ppcc_transformer *t)
{
	double bs = (double)t->micro_batch_size * t->seq_len;
	*out = (ppcc_transformer_split){0};
	for (int i = 0; i < t->layers; i++) {
		block_shape g;
		block_shape_at(&g, t, i);
		double mlp = 2.0 * g.nmat * g.h * g.f + 2.0 * g.h * g.E;
		out->projections += 2.0 * g.attn;
		out->scores += attention_flops(t, &g) / bs;
		out->mlp += mlp;
		if (g.moe) {
			out->routed_params += block_expert_params(t, &g);
			out->shared_params += g.nmat * g.h * g.fs;
		}
	}
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

/* The modules Megatron-LM's selective recomputation recomputes in t
 * (PPCC_RC_* bits): none without it, or under torchtitan, whose
 * selective recomputation is per operation (op_sac_saved). */
static unsigned rc_modules(const ppcc_transformer *t)
{
	if (t->recompute != PPCC_RECOMPUTE_SELECTIVE ||
	    t->trainer == PPCC_TRAINER_TORCHTITAN)
		return 0;
	return t->recompute_modules ? t->recompute_modules : PPCC_RC_CORE_ATTN;
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
	/* multi-head latent attention keeps its latents as the norms and
	 * the up projections read them and the shared key, whole on each
	 * device (the down projections are duplicated) */
	double whole = (8.0 + 2.0 * delta) * sbh +
		       2.0 * s * b * (2.0 * g->qr + 2.0 * g->kvr + g->dr);
	double split = 2.0 * s * b * (g->qw + g->kw + g->vw + g->ow) +
		       2.0 * s * b * f * (nmat - 1.0) + 2.0 * s * b * f;
	/* the query and key norms keep their 16-bit inputs */
	if (t->qk_norm)
		split += 2.0 * s * b * (g->qw + g->kw);
	if (g->moe)
		split += 4.0 * g->cf * g->k * sbh + 4.0 * s * b * g->E;
	if (t->fp8) {
		/* Transformer Engine keeps an FP8 product's input in one
		 * byte: the QKV (or down) projections' and the FFN's normed
		 * inputs, the down projection's, each routed copy as the
		 * experts read it; the output projection's beside the
		 * attention's own 16-bit copy (doc/design/precision.md) */
		whole -= 2.0 * sbh;
		split += s * b * g->ow - s * b * f;
		if (g->moe)
			split -= g->cf * g->k * sbh;
	}
	unsigned rc = rc_modules(t);
	if (rc & PPCC_RC_CORE_ATTN)
		; /* the scores are recomputed */
	else if (t->flash_attention)
		split += 4.0 * a * s * b;
	else
		split += (2.0 + 3.0 * delta) * a * s * s * b;
	/* Megatron-LM's output-discarding modules drop what they would
	 * keep: a norm that is its own module keeps no output (a latent
	 * attention's input norm, a mixture of experts' pre-FFN norm; the
	 * others are fused into the projection after them), the up
	 * projections no Q, K or V, the experts' SwiGLU no output, the
	 * routed part of the down projection's input */
	double narrow = t->fp8 ? 1.0 : 2.0;
	if (rc & PPCC_RC_LAYERNORM)
		whole -= narrow * sbh * (g->mla + g->moe);
	if ((rc & PPCC_RC_MLA_UP_PROJ) && g->mla)
		split -= 2.0 * s * b * (g->qw + g->kw + g->vw);
	if ((rc & PPCC_RC_MOE_ACT) && g->moe)
		split -= narrow * s * b * g->cf * g->k * g->fe;
	*out_total = whole + split;
	*out_replicated = whole;
}

void ppcc_transformer_block_stash(double *out_total, double *out_replicated,
				  const ppcc_transformer *t)
{
	block_shape g;
	shape_of(&g, t, 0, 0);
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
	}
	unsigned rc = rc_modules(t);
	if (rc & PPCC_RC_CORE_ATTN)
		recompute = attention_flops(t, g);
	/* the up projections again (Q's straight from h without a Q
	 * latent), in FP8 where they ran in it */
	double up = (rc & PPCC_RC_MLA_UP_PROJ) && g->mla
		? 2.0 * b * s * ((g->qr > 0 ? g->qr : h) * g->qw +
				 g->kvr * g->kvup) : 0.0;
	recompute += up;
	double stash, replicated;
	block_stash(&stash, &replicated, t, g);
	/* and multi-head latent attention's two latent norms */
	double kwhole = (20.0 + 2.0 * delta) * s * b * h +
			4.0 * s * b * (g->qr + g->kvr);
	double kscores = t->flash_attention ? 0.0
		: (4.0 + 5.0 * delta) * t->heads * s * s * b;
	/* a mixture of experts also permutes each token to its experts and
	 * back: reads 2*s*b*h and writes cf x top_k copies, each way */
	double kperm = g->moe ? 4.0 * s * b * h * (1.0 + g->cf * g->k) : 0.0;
	/* the query and key norms read and write each head's Q and K */
	double kqk = t->qk_norm ? 4.0 * s * b * (g->qw + g->kw) : 0.0;
	double kfwd = kwhole + 2.0 * g->nmat * s * b * g->f + kscores + kperm +
		      kqk;
	double kbwd = 2.0 * kfwd, kbwd_whole = 2.0 * kwhole;
	if (t->recompute == PPCC_RECOMPUTE_FULL) {
		kbwd += kfwd;
		kbwd_whole += kwhole;
	} else if (t->recompute == PPCC_RECOMPUTE_SELECTIVE &&
		   t->trainer == PPCC_TRAINER_TORCHTITAN) {
		kbwd += kscores;
	} else if (rc) {
		/* the scores, a norm (reads and writes 2*s*b*h) and the
		 * routed experts' SwiGLU at their width, each again */
		double knorm = 4.0 * s * b * h * (g->mla + g->moe);
		if (rc & PPCC_RC_CORE_ATTN)
			kbwd += kscores;
		if (rc & PPCC_RC_LAYERNORM) {
			kbwd += knorm;
			kbwd_whole += knorm;
		}
		if ((rc & PPCC_RC_MOE_ACT) && g->moe)
			kbwd += 2.0 * g->nmat * s * b * g->cf * g->k * g->fe;
	}
	double expert = g->moe ? block_expert_flops(t, g) : 0.0;
	/* FP8: the weight products but the router's, forward, their input
	 * and weight gradients, and any recomputed ones */
	double fp8 = 0, fp8_rc = 0;
	if (t->fp8) {
		fp8 = block_weight_flops(t, g) - 2.0 * b * s * g->h * g->E;
		if (t->recompute == PPCC_RECOMPUTE_FULL)
			fp8_rc = fp8;
		else if (t->recompute == PPCC_RECOMPUTE_SELECTIVE &&
			 t->trainer == PPCC_TRAINER_TORCHTITAN)
			fp8_rc = recompute; /* its matmuls alone */
		else
			fp8_rc = up;
	}
	/* The tensor-parallel collectives, in all-reduces of 2*s*b*h: the
	 * FFN's one each way (none in a mixture of experts, whose tokens
	 * move by all-to-all, a2a_bytes) and the attention's one each way.
	 * Multi-head latent attention's down projections are duplicated:
	 * without sequence parallelism the forward all-reduces only O's
	 * output, the backward only the latents' gradients, lat = qr + kvr
	 * + dr wide, lat/h of one; with it the forward all-gathers the
	 * latents (lat/h of half of one) and reduce-scatters O's output
	 * (half), and the backward the reverse. */
	double ffn_tp = g->moe ? 0.0 : 1.0, attn_fwd = 1.0, attn_bwd = 1.0;
	if (g->mla) {
		double lat = (g->qr + g->kvr + g->dr) / h;
		attn_fwd = sp ? 0.5 + 0.5 * lat : 1.0;
		attn_bwd = sp ? 0.5 + 0.5 * lat : lat;
	}
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
		.tp_fwd_allreduces = attn_fwd + ffn_tp,
		/* full recomputation repeats the forward's */
		.tp_bwd_allreduces = attn_bwd + ffn_tp +
				     (t->recompute == PPCC_RECOMPUTE_FULL
					      ? attn_fwd + ffn_tp : 0.0),
		.cp_kv_bytes = 2.0 * s * b * (g->kw + g->vw),
		.attn_flops = attention_flops(t, g),
		.attn_keys = g->window > 0 && g->window < s ? g->window : s,
		.attn_recompute_flops = t->recompute == PPCC_RECOMPUTE_FULL ||
					(rc & PPCC_RC_CORE_ATTN)
					? attention_flops(t, g) : 0.0,
		.tp_replicated_params = block_replicated_params(g),
		.kernel_fwd_bytes = kfwd,
		.kernel_bwd_bytes = kbwd,
		.kernel_fwd_replicated_bytes = sp ? 0.0 : kwhole,
		.kernel_bwd_replicated_bytes = sp ? 0.0 : kbwd_whole,
		.expert_params = g->moe ? block_expert_params(t, g) : 0.0,
		.expert_fwd_flops = expert,
		/* each copy of a token to a routed expert, 16 bits */
		.a2a_bytes = g->moe ? 2.0 * g->k * s * b * h : 0.0,
		.fp8_fwd_flops = fp8,
		.fp8_bwd_flops = 2.0 * fp8 + fp8_rc,
		.fp8_recompute_flops = fp8_rc,
		.tp_gemm_flops = 2.0 * b * s * (g->attn + (g->moe ? 0.0
			: g->nmat * g->h * g->f)),
		.fp8_params = t->fp8 ? g->attn + (g->moe
			? g->E * g->nmat * g->h * g->fe + g->nmat * g->h * g->fs
			: g->nmat * g->h * g->f) : 0.0,
	};
}

/* Multi-token prediction: mtp_layers modules after the last block, each
 * the RMSNorms of the next token's embedding and of the hidden state, the
 * 2h -> h projection of the two, a block of the last block's kind (module
 * k's windowed as layer k), a final norm and the shared output layer with
 * its own loss.  Megatron-LM
 * places them all on the last pipeline stage (d98e8a6 megatron/core/
 * transformer/multi_token_prediction.py:874-881), so the head carries
 * them, and that stage builds its own copy of the embedding (untied: the
 * output layer is not it; megatron/core/models/gpt/gpt_model.py:173-174).
 * Derivation: doc/design/transformer.md. */
static void add_mtp(ppcc_layer *head, const ppcc_transformer *t,
		    ppcc_loc loc)
{
	double b = t->micro_batch_size, s = t->seq_len, h = t->hidden;
	double V = t->vocab, D = t->mtp_layers;
	double sbh = s * b * h;
	int sp = t->sequence_parallel;
	/* y: the D modules' blocks summed, each of the last block's kind
	 * (experts or not) but windowed as Megatron-LM numbers it, from 1
	 * (2a75ac12 multi_token_prediction.py:1044-1051): module k's
	 * attention is windowed as the decoder's layer k's */
	ppcc_layer y = {0};
	for (int k = 0; k < t->mtp_layers; k++) {
		block_shape g;
		shape_of(&g, t, ppcc_transformer_is_moe(t, t->layers - 1),
			 ppcc_transformer_is_windowed(t, k));
		ppcc_layer yk = block_layer(t, &g, loc);
		/* the modules' keys, where they agree; else the sequence */
		y.attn_keys = k == 0 || y.attn_keys == yk.attn_keys
			      ? yk.attn_keys : s;
		y.fwd_flops += yk.fwd_flops;
		y.bwd_flops += yk.bwd_flops;
		y.bwd_weight_flops += yk.bwd_weight_flops;
		y.recompute_flops += yk.recompute_flops;
		y.fp8_fwd_flops += yk.fp8_fwd_flops;
		y.fp8_bwd_flops += yk.fp8_bwd_flops;
		y.fp8_recompute_flops += yk.fp8_recompute_flops;
		y.fp8_params += yk.fp8_params;
		y.tp_gemm_flops += yk.tp_gemm_flops;
		y.stash_bytes += yk.stash_bytes;
		y.stash_replicated_bytes += yk.stash_replicated_bytes;
		y.stash_weight_bytes += yk.stash_weight_bytes;
		y.tp_fwd_allreduces += yk.tp_fwd_allreduces;
		y.tp_bwd_allreduces += yk.tp_bwd_allreduces;
		y.cp_kv_bytes += yk.cp_kv_bytes;
		y.attn_flops += yk.attn_flops;
		y.attn_recompute_flops += yk.attn_recompute_flops;
		y.kernel_fwd_bytes += yk.kernel_fwd_bytes;
		y.kernel_bwd_bytes += yk.kernel_bwd_bytes;
		y.kernel_fwd_replicated_bytes += yk.kernel_fwd_replicated_bytes;
		y.kernel_bwd_replicated_bytes += yk.kernel_bwd_replicated_bytes;
		y.expert_params += yk.expert_params;
		y.expert_fwd_flops += yk.expert_fwd_flops;
		y.a2a_bytes += yk.a2a_bytes;
		y.tp_replicated_params += yk.tp_replicated_params;
	}
	/* the projection's 2h x h and the logits, a token */
	double weights = 2.0 * b * s * (2.0 * h * h + h * V);
	head->fwd_flops += y.fwd_flops + D * weights;
	head->bwd_flops += y.bwd_flops + D * 2.0 * weights;
	head->bwd_weight_flops += y.bwd_weight_flops + D * weights;
	head->recompute_flops += y.recompute_flops;
	head->fp8_fwd_flops += y.fp8_fwd_flops;
	head->fp8_bwd_flops += y.fp8_bwd_flops;
	head->fp8_recompute_flops += y.fp8_recompute_flops;
	head->fp8_params += y.fp8_params;
	head->tp_gemm_flops += y.tp_gemm_flops;
	head->params += D * mtp_module_params(t) +
			(t->tie_embeddings ? 0.0 : V * h);
	/* that copy of the embedding (tied, the output layer's already) */
	head->shared_params = V * h;
	/* the inputs of the two norms, of the projection (2h), of the final
	 * norm and of the output layer, and the logits as the head's */
	double own = 12.0 * sbh;
	head->stash_bytes += y.stash_bytes + D * (own + head->logits_bytes);
	head->stash_replicated_bytes +=
		y.stash_replicated_bytes + D * (sp ? 0.0 : own);
	head->logits_bytes += D * head->logits_bytes;
	/* the projection's input and output gradient, the output layer's
	 * input and the logits' gradient */
	head->stash_weight_bytes += y.stash_weight_bytes +
				    D * (8.0 * sbh + 2.0 * s * b * V);
	/* the embedding's all-reduce and the gather of the projection's
	 * column-parallel output (half of one), forward; the projection's
	 * 2h-wide input gradient (two) and the output layer's, backward */
	head->tp_fwd_allreduces += y.tp_fwd_allreduces + D * 1.5;
	head->tp_bwd_allreduces += y.tp_bwd_allreduces + D * 3.0;
	head->cp_kv_bytes += y.cp_kv_bytes;
	head->attn_flops += y.attn_flops;
	head->attn_recompute_flops += y.attn_recompute_flops;
	head->attn_keys = y.attn_keys > 0 ? y.attn_keys : s;
	/* three norms, read and written, and the loss */
	head->kernel_fwd_bytes += y.kernel_fwd_bytes +
				  D * (12.0 * sbh + 10.0 * s * b * V);
	head->kernel_bwd_bytes += y.kernel_bwd_bytes +
				  D * (24.0 * sbh + 20.0 * s * b * V);
	head->kernel_fwd_replicated_bytes +=
		y.kernel_fwd_replicated_bytes + D * (sp ? 0.0 : 12.0 * sbh);
	head->kernel_bwd_replicated_bytes +=
		y.kernel_bwd_replicated_bytes + D * (sp ? 0.0 : 24.0 * sbh);
	head->expert_params += y.expert_params;
	head->expert_fwd_flops += y.expert_fwd_flops;
	head->a2a_bytes += y.a2a_bytes;
	head->tp_replicated_params += y.tp_replicated_params;
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

	/* the blocks' four kinds: dense or a mixture of experts, attending
	 * in full or within the sliding window */
	ppcc_layer kind[2][2];
	int built[2][2] = {{0}};
	for (int i = 1; i <= t->layers; i++) {
		int e = ppcc_transformer_is_moe(t, i - 1);
		int w = ppcc_transformer_is_windowed(t, i - 1);
		if (!built[e][w]) {
			block_shape g;
			shape_of(&g, t, e, w);
			kind[e][w] = block_layer(t, &g, loc);
			built[e][w] = 1;
		}
		layers[i] = kind[e][w];
	}

	ppcc_layer *head = &layers[n - 1];
	head->name = "head";
	head->loc = loc;
	head->fwd_flops = 2.0 * b * s * h * V;
	head->bwd_flops = 2.0 * head->fwd_flops;
	head->bwd_weight_flops = head->fwd_flops;
	head->params = head_params(t);
	/* the tied output layer is the embedding */
	head->shared_params = t->tie_embeddings ? V * h : 0.0;
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
	if (t->mtp_layers > 0)
		add_mtp(head, t, loc);

	*out = layers;
	*out_n = n;
	return 0;
}
