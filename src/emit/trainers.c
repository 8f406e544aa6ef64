/*
 * emit/trainers.c - a plan as the settings of the trainers that run it:
 * Megatron-LM's command-line arguments, torchtitan's job (v0.2.2's TOML)
 * and DeepSpeed's JSON configuration.  Option names and grammars are
 * those of man/ppcc.1 (FORMATS), taken from each project's documentation
 * and code (doc/design/torchtitan.md, doc/design/deepspeed.md).
 *
 * Every figure comes from the plan: t, p, d, cp, v, the microbatch size b
 * (model.transformer.micro_batch_size), m, the global batch B = m * b * d,
 * ZeRO, recomputation, and the partition (best.stages[s].first_layer ..
 * last_layer, over the layers ppcc numbers: with the `transformer:`
 * shorthand layer 0 is the embedding, 1..L the blocks, L + 1 the head).
 *
 * A mixture of experts adds its experts, router and expert-parallel
 * degrees (ep, etp) to Megatron-LM's arguments and Megatron-Bridge's
 * fields, and DeepSpeed's JSON its MoE layers' arguments; torchtitan's
 * outputs name the deepseek_v3, qwen3 or gpt_oss flavor of its shape and
 * its expert degrees.  Megatron-LM's arguments also carry latent
 * attention, multi-token prediction and sliding windows; torchtitan's
 * carry what a flavor has (GPT-OSS's biases and sinks too); the others
 * refuse them by name.
 *
 * A plan a trainer cannot run as planned (a schedule kind it lacks, a
 * setting Megatron-LM's argument checks reject, a model given as layers
 * where the trainer names transformer modules) is refused with a located
 * error and nothing written, rather than approximated.  Megatron-LM's
 * arguments carry `#` comment lines (the launcher, what the user must
 * still give): pass them with $(grep -v '^#' FILE).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ppcc.h"

static ppcc_loc where(const ppcc_config *c, const ppcc_loc *set)
{
	if (set && set->file)
		return *set;
	if (c->pipeline.loc.file)
		return c->pipeline.loc;
	return (ppcc_loc){c->path, 0, 0};
}

/* The plan's configuration, or an internal error for one read back. */
static const ppcc_config *plan_config(const ppcc_plan *p, ppcc_diag *d)
{
	const ppcc_schedule *s = &p->best.schedule;
	if (!p->config || !p->best.stages || s->n_stages < 1 ||
	    s->n_ranks < 1 || s->n_microbatches < 1) {
		ppcc_error(d, NULL, "the plan has no configuration to write "
			   "trainer settings from");
		return NULL;
	}
	return p->config;
}

/* What a trainer's settings may carry beyond a dense model's attention:
 * the writes argument of refuse_unwritten. */
enum {
	WRITES_MLA = 1,    /* multi-head latent attention */
	WRITES_MTP = 2,    /* multi-token prediction */
	WRITES_WINDOW = 4, /* sliding-window attention */
	WRITES_FP8 = 8,    /* precision fp8 */
	WRITES_GPT_OSS = 16, /* GPT-OSS's biases and attention sinks */
	WRITES_QK_NORM = 32  /* Qwen3's query and key norms */
};

/* What the trainer's settings do not carry (all but writes, a set of
 * WRITES_*): refused, not written as a model without them. */
static int refuse_unwritten(const ppcc_config *c, const char *trainer,
			    int writes, ppcc_diag *d)
{
	const ppcc_transformer *tf = c->model.transformer;
	if (!tf)
		return 0;
	const char *what =
		tf->mla.kind && !(writes & WRITES_MLA)
			? "multi-head latent attention"
		: tf->mtp_layers > 0 && !(writes & WRITES_MTP)
			? "multi-token prediction"
		: tf->sliding_window > 0 && !(writes & WRITES_WINDOW)
			? "sliding-window attention"
		: tf->fp8 && !(writes & WRITES_FP8) ? "FP8 (precision fp8)"
		: tf->biases && !(writes & WRITES_GPT_OSS)
			? "biases (transformer.biases)"
		: tf->attention_sinks && !(writes & WRITES_GPT_OSS)
			? "attention sinks"
		: tf->qk_norm && !(writes & WRITES_QK_NORM)
			? "query and key norms (transformer.qk_norm)" : NULL;
	if (!what)
		return 0;
	ppcc_loc loc = c->model.transformer_loc.file ? c->model.transformer_loc
		: (ppcc_loc){c->path, 0, 0};
	ppcc_error(d, &loc, "ppcc does not write %s's settings for %s yet: "
		   "without them %s would train another model", trainer, what,
		   trainer);
	return PPCC_EINPUT;
}

static int need_transformer(const ppcc_config *c, const char *trainer,
			    ppcc_diag *d)
{
	if (c->model.transformer && c->model.edge_layers)
		return 0;
	ppcc_loc loc = c->model.loc.file ? c->model.loc
					 : (ppcc_loc){c->path, 0, 0};
	ppcc_error(d, &loc, "%s names a transformer's modules: give the "
		   "model as `transformer:` to write its settings", trainer);
	return PPCC_EINPUT;
}

/* Blocks (transformer layers) of stage st, and whether it holds the
 * embedding (layer 0) and the head (layer n - 1). */
static void stage_blocks(const ppcc_plan *p, const ppcc_stage_info *st,
			 int *blocks, int *has_embed, int *has_head)
{
	int n = p->n_layers;
	int lo = st->first_layer, hi = st->last_layer;
	*has_embed = lo <= 0 && hi >= 0;
	*has_head = lo <= n - 1 && hi >= n - 1;
	int a = lo < 1 ? 1 : lo, b = hi > n - 2 ? n - 2 : hi;
	*blocks = b >= a ? b - a + 1 : 0;
}

static long long global_batch(const ppcc_config *c)
{
	const ppcc_pipeline *pl = &c->pipeline;
	return (long long)pl->microbatches * c->model.micro_batch_size *
	       pl->data_parallel;
}

static int write_status(FILE *f)
{
	return ferror(f) ? PPCC_EIO : 0;
}

/* ---- Megatron-LM ------------------------------------------------------ */

/* The layout in Megatron-LM's --pipeline-model-parallel-layout grammar,
 * every item written out (no `*`, so that the word is safe unquoted in a
 * shell): per virtual stage in stage order, E, one t a block, with the
 * head one m a multi-token prediction module and L, stages separated by
 * `|`. */
static void megatron_layout(FILE *f, const ppcc_plan *p)
{
	const ppcc_schedule *s = &p->best.schedule;
	for (int k = 0; k < s->n_stages; k++) {
		int blocks, e, h;
		stage_blocks(p, &p->best.stages[k], &blocks, &e, &h);
		if (k)
			fputc('|', f);
		if (e)
			fputc('E', f);
		for (int i = 0; i < blocks; i++)
			fputc('t', f);
		for (int i = 0; h && i < p->config->model.transformer->mtp_layers;
		     i++)
			fputc('m', f);
		if (h)
			fputc('L', f);
	}
}

/* 1 when every virtual stage holds the same number of blocks, the
 * embedding on stage 0 and the head on the last: Megatron-LM's default
 * split.  With v = 1, also *first and *last when the middle stages are
 * equal and no stage is empty (--decoder-first/last-pipeline-num-layers
 * suffice; Megatron-LM refuses 0 for either): returns 2.  0: a layout. */
static int megatron_split(const ppcc_plan *p, int *first, int *last)
{
	const ppcc_schedule *s = &p->best.schedule;
	int S = s->n_stages, b0 = -1, edges_ok = 1, even = 1;
	int mid = -1, mid_equal = 1;
	for (int k = 0; k < S; k++) {
		int blocks, e, h;
		stage_blocks(p, &p->best.stages[k], &blocks, &e, &h);
		if (e != (k == 0) || h != (k == S - 1))
			edges_ok = 0;
		if (k == 0)
			*first = blocks;
		if (k == S - 1)
			*last = blocks;
		if (b0 < 0)
			b0 = blocks;
		else if (blocks != b0)
			even = 0;
		if (k > 0 && k < S - 1) {
			if (mid < 0)
				mid = blocks;
			else if (blocks != mid)
				mid_equal = 0;
		}
	}
	if (!edges_ok)
		return 0;
	if (even && b0 > 0)
		return 1;
	if (s->n_chunks == 1 && mid_equal && mid != 0 && *first > 0 &&
	    *last > 0)
		return 2;
	return 0;
}

/* Megatron-LM's refusals of a plan (man/ppcc.1 lists them with their
 * sources); 0 when it runs as planned. */
static int megatron_refuses(const ppcc_config *c, ppcc_diag *d)
{
	const ppcc_pipeline *pl = &c->pipeline;
	const ppcc_transformer *tr = c->model.transformer;
	int combined = pl->kind == PPCC_SCHED_COMBINED_1F1B;
	if (tr->fp8 && tr->recompute == PPCC_RECOMPUTE_SELECTIVE &&
	    (tr->recompute_modules & (PPCC_RC_LAYERNORM | PPCC_RC_MOE_ACT))) {
		/* d98e8a6 transformer_config.py:2000-2006 */
		ppcc_loc loc = where(c, &tr->recompute_modules_loc);
		char m[64];
		ppcc_error(d, &loc, "Megatron-LM refuses %s recomputation "
			   "under FP8's delayed scaling (\"Delayed scaling does "
			   "not support moe_act and layernorm recompute for "
			   "fp8\"), which ppcc writes: plan without it, or in "
			   "bf16", ppcc_recompute_modules_text(
				   m, sizeof m, tr->recompute_modules &
				   (PPCC_RC_LAYERNORM | PPCC_RC_MOE_ACT),
				   " and "));
		return PPCC_EINPUT;
	}
	if (pl->kind != PPCC_SCHED_1F1B && pl->kind != PPCC_SCHED_INTERLEAVED &&
	    !combined) {
		ppcc_loc loc = where(c, &pl->kind_loc);
		ppcc_error(d, &loc, "Megatron-LM runs 1f1b, interleaved and "
			   "combined-1f1b schedules, not %s",
			   ppcc_schedule_kind_name(pl->kind));
		return PPCC_EINPUT;
	}
	if (combined && tr->mtp_layers > 1) {
		ppcc_loc loc = where(c, &pl->kind_loc);
		ppcc_error(d, &loc, "Megatron-LM's combined 1F1B takes at most "
			   "one multi-token prediction module (\"MTP supports at "
			   "most one layer when enabling "
			   "overlap_moe_expert_parallel_comm\"), not %d",
			   tr->mtp_layers);
		return PPCC_EINPUT;
	}
	int group = pl->group_size > 0 ? pl->group_size : pl->stages;
	if ((pl->kind == PPCC_SCHED_INTERLEAVED || combined) && pl->chunks > 1 &&
	    (group < pl->stages || group > pl->microbatches)) {
		ppcc_loc loc = where(c, &pl->group_size_loc);
		ppcc_error(d, &loc, "Megatron-LM's interleaved schedule groups "
			   "from p = %d to m = %d microbatches, not %d",
			   pl->stages, pl->microbatches, group);
		return PPCC_EINPUT;
	}
	if (pl->context_parallel > 1 &&
	    tr->seq_len % (2 * pl->context_parallel) != 0) {
		ppcc_loc loc = where(c, &pl->context_parallel_loc);
		ppcc_error(d, &loc, "Megatron-LM splits a sequence into 2 x cp "
			   "= %d chunks, which do not divide seq_len %d",
			   2 * pl->context_parallel, tr->seq_len);
		return PPCC_EINPUT;
	}
	if (tr->position == PPCC_POSITION_ROPE && tr->rope_theta > 0 &&
	    (tr->rope_theta != (double)(long long)tr->rope_theta ||
	     tr->rope_theta > 2147483647.0)) {
		ppcc_loc loc = where(c, &tr->rope_theta_loc);
		ppcc_error(d, &loc, "Megatron-LM's --rotary-base takes an "
			   "integer, not %g", tr->rope_theta);
		return PPCC_EINPUT;
	}
	if (tr->moe.experts > 0 &&
	    (tr->moe.node_limit > 0 || tr->moe.dispatch_fp8)) {
		/* planned, but no flag of ppcc's writes them: the export
		 * would run another routing or dispatch than planned */
		ppcc_loc loc = where(c, &tr->moe.loc);
		ppcc_error(d, &loc, "ppcc does not write Megatron-LM's settings "
			   "for %s yet: plan without it, or set it in "
			   "Megatron-LM by hand", tr->moe.node_limit > 0
			   ? "node-limited routing (moe.node_limit)"
			   : "FP8 token dispatch (moe.dispatch: fp8)");
		return PPCC_EINPUT;
	}
	if (tr->moe.experts > 0 && pl->tensor_parallel > 1 &&
	    !tr->sequence_parallel) {
		ppcc_loc loc = where(c, &pl->tensor_parallel_loc);
		ppcc_error(d, &loc, "Megatron-LM's mixture-of-experts layer "
			   "refuses to train with tensor parallelism (t = %d) "
			   "but no sequence parallelism: plan with "
			   "sequence_parallel: true", pl->tensor_parallel);
		return PPCC_EINPUT;
	}
	if (tr->position != PPCC_POSITION_ROPE &&
	    (tr->mla.kind || tr->mtp_layers > 0)) {
		ppcc_loc loc = where(c, tr->mla.kind ? &tr->mla.loc : NULL);
		ppcc_error(d, &loc, "Megatron-LM's %s: plan with position: "
			   "rope", tr->mla.kind
			   ? "multi-head latent attention rotates its "
			     "qk_rope_head_dim part of every query and key "
			     "(RoPE) whatever the positions"
			   : "multi-token prediction runs with rotary "
			     "positions or none, not learned ones");
		return PPCC_EINPUT;
	}
	if (tr->mla.kind && tr->mla.q_lora_rank == 0) {
		ppcc_loc loc = where(c, &tr->mla.loc);
		ppcc_error(d, &loc, "Megatron-LM norms multi-head latent "
			   "attention's key-value latent only with "
			   "--qk-layernorm, which without a query latent "
			   "(q_lora_rank 0) also norms the hidden state before "
			   "the query's projection, a norm ppcc's model does "
			   "not have: plan with a q_lora_rank");
		return PPCC_EINPUT;
	}
	if (tr->sliding_window > 0 && pl->context_parallel > 1) {
		ppcc_loc loc = where(c, &pl->context_parallel_loc);
		ppcc_error(d, &loc, "Megatron-LM's context parallelism passes "
			   "keys and values around a ring (its default "
			   "--cp-comm-type p2p, which ppcc prices), and "
			   "Transformer Engine refuses sliding-window attention "
			   "on that ring: plan with context_parallel: 1");
		return PPCC_EINPUT;
	}
	if (!tr->flash_attention && pl->context_parallel > 1) {
		ppcc_loc loc = where(c, &pl->context_parallel_loc);
		ppcc_error(d, &loc, "without flash attention Megatron-LM runs "
			   "Transformer Engine's unfused attention, which does "
			   "not run context parallelism (TransformerEngine "
			   "d0067d0 dot_product_attention/utils.py:1171): plan "
			   "with context_parallel: 1, or flash_attention: true");
		return PPCC_EINPUT;
	}
	if (pl->grad_bytes != 4.0 && (pl->grad_bytes != 2.0 || pl->zero >= 2)) {
		ppcc_loc loc = where(c, NULL);
		ppcc_error(d, &loc, "Megatron-LM keeps gradients in fp32 (4 "
			   "bytes) or, with the distributed optimizer or none, "
			   "bf16 (2), not %g bytes", pl->grad_bytes);
		return PPCC_EINPUT;
	}
	return 0;
}

/* The plan's configuration for Megatron-LM or Megatron-Bridge (trainer,
 * named in the errors), or NULL with *err set: the plan has none, its
 * model is not a transformer, or Megatron-LM refuses it. */
static const ppcc_config *megatron_config(const ppcc_plan *p,
					  const char *trainer,
					  int megatron_writes, ppcc_diag *d,
					  int *err)
{
	const ppcc_config *c = plan_config(p, d);
	if (!c) {
		*err = PPCC_EINTERNAL;
		return NULL;
	}
	if ((*err = need_transformer(c, trainer, d)) ||
	    (*err = refuse_unwritten(c, trainer,
					       megatron_writes, d)) ||
	    (*err = megatron_refuses(c, d)))
		return NULL;
	return c;
}

/* The launcher line: world size W = t p cp d processes.  Without
 * Megatron-FSDP, t or cp > 1 needs CUDA_DEVICE_MAX_CONNECTIONS=1 (before
 * Blackwell), while Megatron-FSDP refuses 1 (man/ppcc.1 gives the lines). */
static void megatron_launcher(FILE *f, const ppcc_config *c)
{
	const ppcc_pipeline *pl = &c->pipeline;
	long long W = (long long)pl->tensor_parallel * pl->stages *
		      pl->context_parallel * pl->data_parallel;
	long long per = c->cluster.host_devices > 0 ? c->cluster.host_devices
		      : c->cluster.devices_per_node > 0
		      ? c->cluster.devices_per_node : W;
	if (per > W)
		per = W;
	long long nodes = (W + per - 1) / per;
	fprintf(f, "# %lld processes = %d tensor x %d pipeline x %d context "
		"x %d data parallel; launch each node's with\n", W,
		pl->tensor_parallel, pl->stages, pl->context_parallel,
		pl->data_parallel);
	int one_conn = (pl->tensor_parallel > 1 || pl->context_parallel > 1) &&
		       pl->zero < 2;
	fprintf(f, "# %storchrun --nproc-per-node %lld --nnodes %lld "
		"--node-rank RANK --master-addr HOST --master-port PORT "
		"pretrain_gpt.py $(grep -v '^#' ARGS_FILE) ...\n",
		one_conn ? "CUDA_DEVICE_MAX_CONNECTIONS=1 " : "", per, nodes);
	const ppcc_transformer *tr = c->model.transformer;
	if (tr && tr->moe.experts > 0) {
		int width = pl->tensor_parallel * pl->context_parallel *
			    pl->data_parallel;
		int etp = ppcc_pipeline_etp(pl);
		fprintf(f, "# experts: each stage's %d devices fold into %d "
			"expert tensor x %d expert x %d expert data parallel\n",
			width, etp, pl->expert_parallel,
			width / (etp * pl->expert_parallel));
	}
}

/* 1 when the model's attention heads are not h / a wide: Megatron-LM
 * then needs --kv-channels (kv_channels), the width of one head. */
static int head_dim_given(const ppcc_transformer *tr)
{
	return tr->head_dim > 0 && tr->head_dim * tr->heads != tr->hidden;
}

/* Megatron-LM's --moe-layer-freq: ppcc's `every` when no dense layers
 * lead (an int N makes layer i an expert layer when i % N == 0), else
 * the pattern as a list of 0 (dense) and 1 (experts), one a layer,
 * written out with no `*`, `(`, `+` or spaces: a word the shell leaves
 * alone unless a file named 0, 1 or `,` is in the folder. */
static void megatron_moe_freq(FILE *f, const ppcc_transformer *tr)
{
	if (tr->moe.dense_layers == 0) {
		fprintf(f, "%d", tr->moe.every);
		return;
	}
	fputc('[', f);
	for (int i = 0; i < tr->layers; i++)
		fprintf(f, "%s%d", i ? "," : "", ppcc_transformer_is_moe(tr, i));
	fputc(']', f);
}

/* The attention's arguments beyond a dense model's heads (the rules and
 * their sources are in man/ppcc.1 and tests/check_trainers.c): multi-head
 * latent attention with its latents' norms (--qk-layernorm) and plain
 * RoPE (--rope-type rope; Megatron-LM's latent attention takes YaRN by
 * default), unfused (--no-rope-fusion: the fusion, on by default,
 * arguments.py:2902-2905, is YaRN's only, transformer_config.py:
 * 3345-3346); the multi-token
 * prediction modules; the window as Transformer Engine's (left, right)
 * keys beside the query, W - 1 and 0 for W keys, and the period of the
 * full-attention layers (Megatron-LM's layer n, from 1, attends in full
 * when n % N == 0, as ppcc's layer i = n - 1 does). */
/* Megatron-LM's attention_backend for the kernel c plans (d98e8a6
 * transformer_config.py:151-157; language_module.py:129-160 sets
 * Transformer Engine's NVTE_* switches from it): cuDNN's "fused",
 * FlashAttention-2 as "flash" pinned to version 2 (*fa2 set), and
 * without flash attention Transformer Engine's "unfused" (the s^2
 * scores ppcc prices then); NULL where c's device groups run different
 * kernels, Transformer Engine's own choice on each ("auto"). */
static const char *megatron_backend(const ppcc_config *c, int *fa2)
{
	const ppcc_transformer *tr = c->model.transformer;
	*fa2 = 0;
	if (!tr->flash_attention)
		return "unfused";
	int k = ppcc_cost_attention_kernel_all(c);
	*fa2 = k == PPCC_ATTN_FA2;
	return k == PPCC_ATTN_FA2 ? "flash" : k == PPCC_ATTN_CUDNN ? "fused"
								    : NULL;
}

static void megatron_attention(FILE *f, const ppcc_config *c)
{
	const ppcc_transformer *tr = c->model.transformer;
	const ppcc_mla *m = &tr->mla;
	int fa2;
	const char *backend = megatron_backend(c, &fa2);
	if (backend)
		fprintf(f, "--attention-backend %s\n", backend);
	if (fa2)
		fputs("--flash-attention-version 2\n", f);
	if (tr->qk_norm) /* each head's (d98e8a6 arguments.py --qk-layernorm) */
		fputs("--qk-layernorm\n", f);
	if (m->kind) {
		fprintf(f, "--multi-latent-attention\n--qk-layernorm\n"
			"--q-lora-rank %d\n", m->q_lora_rank);
		fprintf(f, "--kv-lora-rank %d\n--qk-head-dim %d\n"
			"--qk-pos-emb-head-dim %d\n--v-head-dim %d\n"
			"--rope-type rope\n--no-rope-fusion\n", m->kv_lora_rank,
			m->qk_nope_head_dim, m->qk_rope_head_dim, m->v_head_dim);
	}
	if (tr->mtp_layers > 0)
		fprintf(f, "--mtp-num-layers %d\n", tr->mtp_layers);
	if (tr->sliding_window > 0) {
		fprintf(f, "--window-size %d,0\n", tr->sliding_window - 1);
		if (tr->sliding_window_pattern >= 2)
			fprintf(f, "--window-attn-skip-freq %d\n",
				tr->sliding_window_pattern);
	}
}

/* The mixture of experts' arguments: the experts, their width and
 * pattern, the router's top k (softmax before the top k when k = 1, as
 * Megatron-LM requires), group-limited routing (d98e8a6
 * transformer_config.py:780-796, flags by arguments.py:2373's factory),
 * the shared experts as one FFN of their summed
 * width, the grouped GEMM and all-to-all dispatch ppcc prices, and the
 * capacity, padded (ppcc's capacity_factor; none: dropless). */
static void megatron_moe(FILE *f, const ppcc_transformer *tr)
{
	const ppcc_moe *e = &tr->moe;
	fprintf(f, "--num-experts %d\n--moe-layer-freq ", e->experts);
	megatron_moe_freq(f, tr);
	fprintf(f, "\n--moe-ffn-hidden-size %d\n--moe-router-topk %d\n",
		e->ffn_hidden, e->top_k);
	if (e->top_k == 1)
		fputs("--moe-router-pre-softmax\n", f);
	if (e->groups > 0)
		fprintf(f, "--moe-router-num-groups %d\n"
			"--moe-router-group-topk %d\n", e->groups,
			e->group_topk);
	if (e->shared_experts > 0)
		fprintf(f, "--moe-shared-expert-intermediate-size %lld\n",
			(long long)e->shared_experts * e->ffn_hidden);
	fputs("--moe-grouped-gemm\n--moe-token-dispatcher-type alltoall\n", f);
	if (e->capacity_factor > 0)
		fprintf(f, "--moe-expert-capacity-factor %g\n"
			"--moe-pad-expert-input-to-capacity\n",
			e->capacity_factor);
}

int ppcc_emit_megatron(FILE *f, const ppcc_plan *p,
		       const ppcc_emit_options *o, ppcc_diag *d)
{
	(void)o;
	int err;
	const ppcc_config *c = megatron_config(p, "Megatron-LM",
						 WRITES_MLA | WRITES_MTP |
						 WRITES_WINDOW | WRITES_FP8 |
						 WRITES_QK_NORM,
						 d, &err);
	if (!c)
		return err;
	const ppcc_pipeline *pl = &c->pipeline;
	const ppcc_transformer *tr = c->model.transformer;
	const ppcc_schedule *s = &p->best.schedule;
	int n_dp = pl->data_parallel * pl->context_parallel;
	int moe = tr->moe.experts > 0;
	megatron_launcher(f, c);
	long long mult = 128LL * pl->tensor_parallel;
	long long padded = (tr->vocab + mult - 1) / mult * mult;
	fprintf(f, "# vocabulary: the tokenizer's (--tokenizer-type and its "
		"files); ppcc planned %d tokens, Megatron-LM pads them to %lld "
		"(a multiple of 128 x t)\n", tr->vocab, padded);
	fputs("# still to give: --data-path (or --mock-data), the tokenizer, "
	      "--train-iters, the optimizer (adam) and learning-rate "
	      "schedule (--lr, --min-lr, --lr-decay-style, "
	      "--lr-warmup-iters), --save, --load\n", f);
	if (moe)
		fputs("# and the router's load-balancing loss "
		      "(--moe-router-load-balancing-type, --moe-aux-loss-coeff: "
		      "Megatron-LM's default coefficient is 0)\n", f);
	if (tr->mtp_layers > 0)
		fputs("# and the multi-token prediction loss's weight "
		      "(--mtp-loss-scaling-factor: Megatron-LM's default is "
		      "0.1)\n", f);
	if (pl->zero >= 2)
		fputs("# Megatron-FSDP: leave CUDA_DEVICE_MAX_CONNECTIONS unset "
		      "(not 1); the optimizer must be adam or sgd\n", f);
	if (s->n_chunks > 1 && pl->stages == 2)
		fputs("# interleaving with p = 2 is legal only because "
		      "--overlap-p2p-communication is on by default: do not "
		      "pass --no-overlap-p2p-communication\n", f);
	fprintf(f, "--tensor-model-parallel-size %d\n", pl->tensor_parallel);
	fprintf(f, "--pipeline-model-parallel-size %d\n", pl->stages);
	fprintf(f, "--context-parallel-size %d\n", pl->context_parallel);
	if (moe)
		fprintf(f, "--expert-model-parallel-size %d\n"
			"--expert-tensor-parallel-size %d\n",
			pl->expert_parallel, ppcc_pipeline_etp(pl));
	if (pl->tensor_parallel > 1 && tr->sequence_parallel)
		fputs("--sequence-parallel\n", f);
	fprintf(f, "--num-layers %d\n", tr->layers);
	fprintf(f, "--hidden-size %d\n", tr->hidden);
	fprintf(f, "--ffn-hidden-size %d\n",
		tr->ffn_hidden > 0 ? tr->ffn_hidden : 4 * tr->hidden);
	if (moe)
		megatron_moe(f, tr);
	/* combined-1f1b: its overlap of the experts' all-to-alls (d98e8a6
	 * transformer_config.py:3002-3041; schedules.py:964-970 the extra
	 * warm-up forward, combined_1f1b.py the pairs) */
	if (pl->kind == PPCC_SCHED_COMBINED_1F1B)
		fputs("--overlap-moe-expert-parallel-comm\n", f);
	fprintf(f, "--num-attention-heads %d\n", tr->heads);
	if (head_dim_given(tr))
		fprintf(f, "--kv-channels %d\n", tr->head_dim);
	if (tr->kv_heads > 0 && tr->kv_heads != tr->heads)
		fprintf(f, "--group-query-attention\n--num-query-groups %d\n",
			tr->kv_heads);
	megatron_attention(f, c);
	fprintf(f, "--seq-length %d\n", tr->seq_len);
	fprintf(f, "--max-position-embeddings %d\n", tr->seq_len);
	fprintf(f, "--normalization %s\n",
		tr->norm == PPCC_NORM_LAYERNORM ? "LayerNorm" : "RMSNorm");
	if (tr->position == PPCC_POSITION_ROPE)
		fprintf(f, "--position-embedding-type rope\n--rotary-base %lld\n",
			tr->rope_theta > 0 ? (long long)tr->rope_theta : 10000LL);
	else
		fputs("--position-embedding-type learned_absolute\n", f);
	if (tr->swiglu)
		fputs("--swiglu\n--disable-bias-linear\n"
		      "--attention-dropout 0.0\n--hidden-dropout 0.0\n", f);
	if (!tr->tie_embeddings)
		fputs("--untie-embeddings-and-output-weights\n", f);
	fputs("--bf16\n", f);
	/* FP8 as planned: Transformer Engine's blocks in FP8, E4M3 forward
	 * and E5M2 gradients, delayed scaling (Megatron-LM d98e8a6
	 * megatron/core/transformer/transformer_config.py:587-596) */
	if (tr->fp8)
		fputs("--fp8-format hybrid\n--fp8-recipe delayed\n", f);
	/* pipeline.overlap.tp_comm (Megatron-LM d98e8a6 megatron/core/
	 * model_parallel_config.py:265, arguments.py:1441-1442) */
	if (pl->overlap.tp_comm && pl->tensor_parallel > 1)
		fputs("--tp-comm-overlap\n", f);
	if (pl->grad_bytes == 2.0)
		fputs("--grad-reduce-in-bf16\n", f);
	int first = 0, last = 0;
	int split = megatron_split(p, &first, &last);
	if (split == 1) {
		if (s->n_chunks > 1)
			fprintf(f, "--num-layers-per-virtual-pipeline-stage %d\n",
				tr->layers / s->n_stages);
	} else if (split == 2) {
		fprintf(f, "--decoder-first-pipeline-num-layers %d\n", first);
		fprintf(f, "--decoder-last-pipeline-num-layers %d\n", last);
	} else {
		fputs("--pipeline-model-parallel-layout ", f);
		megatron_layout(f, p);
		fputc('\n', f);
	}
	if (s->n_chunks > 1 && pl->group_size > 0 &&
	    pl->group_size != pl->stages)
		fprintf(f, "--microbatch-group-size-per-virtual-pipeline-stage %d\n",
			pl->group_size);
	fprintf(f, "--micro-batch-size %d\n", c->model.micro_batch_size);
	fprintf(f, "--global-batch-size %lld\n", global_batch(c));
	if (pl->zero == 1)
		fputs("--use-distributed-optimizer\n", f);
	else if (pl->zero >= 2)
		fprintf(f, "--use-megatron-fsdp\n"
			"--data-parallel-sharding-strategy %s\n"
			"--ckpt-format fsdp_dtensor\n"
			"--no-gradient-accumulation-fusion\n",
			pl->zero == 2 ? "optim_grads" : "optim_grads_params");
	/* HSDP: the d x cp ranks split into this many shard groups
	 * (d98e8a6 parallel_state.py:921-929) */
	if (pl->zero >= 1 && ppcc_pipeline_zero_replicas(pl) > 1)
		fprintf(f, "--num-distributed-optimizer-instances %d\n",
			ppcc_pipeline_zero_replicas(pl));
	/* Transformer Engine's FusedAdam keeps the moments in bf16
	 * (d98e8a6 arguments.py:3667-3684, optimizer_config.py:433-478) */
	if (pl->moments_bf16)
		fputs("--use-precision-aware-optimizer\n"
		      "--exp-avg-dtype bf16\n--exp-avg-sq-dtype bf16\n", f);
	/* the simulator overlaps the gradient reduction with the backward
	 * and ZeRO's gathers with the forwards (doc/design/iteration.md) */
	if (n_dp > 1) {
		fputs("--overlap-grad-reduce\n", f);
		if (pl->zero >= 1)
			fputs("--overlap-param-gather\n", f);
	}
	if (tr->recompute == PPCC_RECOMPUTE_SELECTIVE) {
		fputs("--recompute-granularity selective\n", f);
		char m[128];
		if (tr->recompute_modules &&
		    tr->recompute_modules != PPCC_RC_CORE_ATTN)
			fprintf(f, "--recompute-modules %s\n",
				ppcc_recompute_modules_text(
					m, sizeof m, tr->recompute_modules,
					" "));
	} else if (tr->recompute == PPCC_RECOMPUTE_FULL)
		fputs("--recompute-granularity full\n"
		      "--recompute-method uniform\n"
		      "--recompute-num-layers 1\n", f);
	return write_status(f);
}

/* ---- Megatron-Bridge ----------------------------------------------------- */

/*
 * Megatron-Bridge (NVIDIA-NeMo/Megatron-Bridge 067f987df03b, which runs
 * Megatron-LM 2a75ac12c54b): a recipe is a function returning a
 * ConfigContainer (src/megatron/bridge/training/config.py:962-1008),
 * whose model provider is a TransformerConfig; its recipes set
 * cfg.model.*, cfg.train.* and cfg.ddp.* fields
 * (perf_recipes/llama/h100/llama3.py).  The snippet is ppcc_apply(cfg),
 * which sets the fields Megatron-LM's arguments set (the same decisions
 * and refusals as ppcc_emit_megatron): the layout as a list of lists of
 * "embedding", "decoder" and "loss", one list a virtual stage in
 * Megatron's order (transformer_config.py:104-120), Megatron-FSDP on
 * both cfg.ddp and cfg.dist (config.py:1065-1069), bf16 through the
 * bf16_mixed recipe (training/mixed_precision.py:185-197).
 */
static void bridge_layout(FILE *f, const ppcc_plan *p)
{
	const ppcc_schedule *s = &p->best.schedule;
	int mtp = p->config->model.transformer->mtp_layers;
	fputs("    m.pipeline_model_parallel_layout = [\n", f);
	for (int k = 0; k < s->n_stages; k++) {
		int blocks, e, h;
		stage_blocks(p, &p->best.stages[k], &blocks, &e, &h);
		const char *sep = "";
		fputs("        ", f);
		if (e) {
			fputs("[\"embedding\"]", f);
			sep = " + ";
		}
		if (blocks) {
			fprintf(f, "%s[\"decoder\"] * %d", sep, blocks);
			sep = " + ";
		}
		if (h && mtp > 0) {
			fprintf(f, "%s[\"mtp\"] * %d", sep, mtp);
			sep = " + ";
		}
		if (h)
			fprintf(f, "%s[\"loss\"]", sep);
		fputs(e || blocks || h ? ",\n" : "[],\n", f);
	}
	fputs("    ]\n", f);
}

/* The fields megatron_moe's arguments set, each written (a recipe's own
 * capacity or shared experts do not survive), and the expert degrees. */
static void bridge_moe(FILE *f, const ppcc_config *c)
{
	const ppcc_transformer *tr = c->model.transformer;
	const ppcc_moe *e = &tr->moe;
	fprintf(f, "    m.num_moe_experts = %d\n    m.moe_layer_freq = ",
		e->experts);
	megatron_moe_freq(f, tr);
	fprintf(f, "\n    m.moe_ffn_hidden_size = %d\n"
		"    m.moe_router_topk = %d\n"
		"    m.moe_router_pre_softmax = %s\n", e->ffn_hidden, e->top_k,
		e->top_k == 1 ? "True" : "False");
	if (e->groups > 0)
		fprintf(f, "    m.moe_router_num_groups = %d\n"
			"    m.moe_router_group_topk = %d\n", e->groups,
			e->group_topk);
	else
		fputs("    m.moe_router_num_groups = None\n"
		      "    m.moe_router_group_topk = None\n", f);
	if (e->shared_experts > 0)
		fprintf(f, "    m.moe_shared_expert_intermediate_size = %lld\n",
			(long long)e->shared_experts * e->ffn_hidden);
	else
		fputs("    m.moe_shared_expert_intermediate_size = None\n", f);
	/* the shared experts' overlap stays off, Megatron-LM's default
	 * (2a75ac12 transformer_config.py:703), which combined-1f1b
	 * needs; DeepSeek-V3's provider turns it on */
	fputs("    m.moe_grouped_gemm = True\n"
	      "    m.moe_token_dispatcher_type = \"alltoall\"\n"
	      "    m.moe_shared_expert_overlap = False\n", f);
	if (e->capacity_factor > 0)
		fprintf(f, "    m.moe_expert_capacity_factor = %g\n"
			"    m.moe_pad_expert_input_to_capacity = True\n",
			e->capacity_factor);
	else
		fputs("    m.moe_expert_capacity_factor = None\n"
		      "    m.moe_pad_expert_input_to_capacity = False\n", f);
	fprintf(f, "    m.expert_model_parallel_size = %d\n"
		"    m.expert_tensor_parallel_size = %d\n"
		"    m.overlap_moe_expert_parallel_comm = %s\n",
		c->pipeline.expert_parallel, ppcc_pipeline_etp(&c->pipeline),
		c->pipeline.kind == PPCC_SCHED_COMBINED_1F1B ? "True" : "False");
}

/* The attention's fields as megatron_attention's arguments set them
 * (Megatron-LM 2a75ac12c54b transformer_config.py: 68 mtp_num_layers,
 * 240 window_size, 244 window_attn_skip_freq, 252 qk_layernorm, 281
 * multi_latent_attention, 506 apply_rope_fusion; MLATransformerConfig
 * 3016-3068 q_lora_rank, kv_lora_rank, qk_head_dim,
 * qk_pos_emb_head_dim, v_head_dim, rope_type and YaRN's scale
 * (rotary_scaling_factor, mscale, mscale_all_dim, which set the
 * softmax's scale whatever the rope type, multi_latent_attention.py:
 * 177-178: written as Megatron-LM's arguments leave them), which only
 * an MLA recipe's provider has: the snippet checks for it).
 * Each is written either way, so that a recipe's own window or MTP
 * modules do not survive. */
static void bridge_attention(FILE *f, const ppcc_config *c)
{
	const ppcc_transformer *tr = c->model.transformer;
	const ppcc_mla *m = &tr->mla;
	int fa2;
	const char *backend = megatron_backend(c, &fa2);
	fprintf(f, "    m.attention_backend = AttnBackend.%s\n"
		"    m.flash_attention_version = %s\n",
		backend ? backend : "auto", fa2 ? "2" : "None");
	if (m->kind)
		fprintf(f, "    if not isinstance(m, MLATransformerConfig):\n"
			"        raise TypeError(\"ppcc_apply: the plan has "
			"multi-head latent attention; apply it to an MLA "
			"recipe's config (deepseek_v3_pretrain_config())\")\n"
			"    m.multi_latent_attention = True\n"
			"    m.qk_layernorm = True\n"
			"    m.q_lora_rank = %d\n    m.kv_lora_rank = %d\n"
			"    m.qk_head_dim = %d\n    m.qk_pos_emb_head_dim = %d\n"
			"    m.v_head_dim = %d\n    m.rope_type = \"rope\"\n"
			"    m.apply_rope_fusion = False\n"
			"    m.rotary_scaling_factor = 1.0\n    m.mscale = 1.0\n"
			"    m.mscale_all_dim = 0.0\n",
			m->q_lora_rank, m->kv_lora_rank, m->qk_nope_head_dim,
			m->qk_rope_head_dim, m->v_head_dim);
	else
		fprintf(f, "    m.multi_latent_attention = False\n"
			"    m.qk_layernorm = %s\n", tr->qk_norm ? "True"
							     : "False");
	if (tr->mtp_layers > 0)
		fprintf(f, "    m.mtp_num_layers = %d\n", tr->mtp_layers);
	else
		fputs("    m.mtp_num_layers = None\n", f);
	if (tr->sliding_window > 0) {
		fprintf(f, "    m.window_size = (%d, 0)\n",
			tr->sliding_window - 1);
		if (tr->sliding_window_pattern >= 2)
			fprintf(f, "    m.window_attn_skip_freq = %d\n",
				tr->sliding_window_pattern);
		else
			fputs("    m.window_attn_skip_freq = None\n", f);
	} else
		fputs("    m.window_size = None\n"
		      "    m.window_attn_skip_freq = None\n", f);
}

int ppcc_emit_megatron_bridge(FILE *f, const ppcc_plan *p,
			      const ppcc_emit_options *o, ppcc_diag *d)
{
	(void)o;
	int err;
	const ppcc_config *c = megatron_config(p, "Megatron-Bridge",
						 WRITES_MLA | WRITES_MTP |
						 WRITES_WINDOW | WRITES_FP8 |
						 WRITES_QK_NORM,
						 d, &err);
	if (!c)
		return err;
	if (c->pipeline.overlap.tp_comm && c->pipeline.tensor_parallel > 1) {
		/* it needs a userbuffers layout per model and GPU
		 * (Megatron-Bridge 067f987 training/comm_overlap.py:98-109) */
		ppcc_loc loc = c->pipeline.overlap.tp_comm_loc;
		ppcc_error(d, &loc, "ppcc does not write Megatron-Bridge's "
			   "tensor-parallel overlap (its userbuffers layout) "
			   "yet; plan it with pipeline.overlap.tp_comm false, "
			   "or use -f megatron");
		return PPCC_EINPUT;
	}
	const ppcc_pipeline *pl = &c->pipeline;
	const ppcc_transformer *tr = c->model.transformer;
	const ppcc_schedule *s = &p->best.schedule;
	int n_dp = pl->data_parallel * pl->context_parallel;
	long long W = (long long)pl->tensor_parallel * pl->stages *
		      pl->context_parallel * pl->data_parallel;
	fprintf(f, "# ppcc %s: a Megatron-Bridge recipe's settings as planned "
		"(Megatron-Bridge 067f987df03b, Megatron-LM 2a75ac12c54b).\n",
		PPCC_VERSION_STRING);
	fprintf(f, "# %lld processes = %d tensor x %d pipeline x %d context x "
		"%d data parallel (torchrun --nproc-per-node per node).\n", W,
		pl->tensor_parallel, pl->stages, pl->context_parallel,
		pl->data_parallel);
	/* latent attention needs an MLA recipe's provider */
	const char *module = tr->mla.kind ? "deepseek.deepseek_v3" : "llama";
	const char *recipe = tr->mla.kind ? "deepseek_v3_pretrain_config"
					  : "llama3_70b_pretrain_config";
	fprintf(f, "# Apply it to a recipe's ConfigContainer, for instance\n"
		"#     from megatron.bridge.recipes.%s import %s\n"
		"#     cfg = ppcc_apply(%s())\n", module, recipe, recipe);
	fputs("# Still to give: the dataset, the tokenizer (its vocabulary), "
	      "train_iters, the optimizer and its schedule, checkpoint paths.\n",
	      f);
	if (pl->zero >= 2)
		fputs("# Megatron-FSDP: leave CUDA_DEVICE_MAX_CONNECTIONS unset "
		      "(not 1); the optimizer must be adam or sgd.\n", f);
	if (s->n_chunks > 1 && pl->stages == 2)
		fputs("# Interleaving with p = 2 is legal only with "
		      "overlap_p2p_comm on (the default): keep it.\n", f);
	fputs("import torch\nimport torch.nn.functional as F\n"
	      "from megatron.core.transformer.enums import AttnBackend\n", f);
	if (tr->mla.kind)
		fputs("from megatron.bridge.models.transformer_config import "
		      "MLATransformerConfig\n", f);
	fprintf(f, "from megatron.bridge.training.mixed_precision import %s\n"
	      "\n\n"
	      "def ppcc_apply(cfg):\n", tr->fp8
	      ? "bf16_with_fp8_delayed_scaling_mixed" : "bf16_mixed");
	fputs("    m = cfg.model\n", f);
	fprintf(f, "    m.num_layers = %d\n", tr->layers);
	fprintf(f, "    m.hidden_size = %d\n", tr->hidden);
	fprintf(f, "    m.ffn_hidden_size = %d\n",
		tr->ffn_hidden > 0 ? tr->ffn_hidden : 4 * tr->hidden);
	fprintf(f, "    m.num_attention_heads = %d\n", tr->heads);
	if (head_dim_given(tr))
		fprintf(f, "    m.kv_channels = %d\n", tr->head_dim);
	/* the vocabulary padded as Megatron-LM's arguments pad it, to 128
	 * x t (d98e8a6 arguments.py:2441; gpt_provider.py:141, which
	 * DeepSeek-V3's provider raises to 1280) */
	fputs("    m.make_vocab_size_divisible_by = 128\n", f);
	fprintf(f, "    m.num_query_groups = %d\n",
		tr->kv_heads > 0 ? tr->kv_heads : tr->heads);
	bridge_attention(f, c);
	if (tr->moe.experts > 0)
		bridge_moe(f, c);
	else /* a mixture-of-experts recipe's experts go */
		fputs("    m.num_moe_experts = None\n    m.moe_layer_freq = 1\n"
		      "    m.moe_shared_expert_intermediate_size = None\n"
		      "    m.moe_router_num_groups = None\n"
		      "    m.moe_router_group_topk = None\n"
		      "    m.overlap_moe_expert_parallel_comm = False\n", f);
	/* ConfigContainer.validate wants the dataset's the model's
	 * (067f987 training/config.py:1642-1648) */
	fprintf(f, "    m.seq_length = %d\n    cfg.dataset.seq_length = %d\n",
		tr->seq_len, tr->seq_len);
	fprintf(f, "    m.normalization = \"%s\"\n",
		tr->norm == PPCC_NORM_LAYERNORM ? "LayerNorm" : "RMSNorm");
	if (tr->position == PPCC_POSITION_ROPE)
		fprintf(f, "    m.position_embedding_type = \"rope\"\n"
			"    m.rotary_base = %lld\n",
			tr->rope_theta > 0 ? (long long)tr->rope_theta : 10000LL);
	else
		fputs("    m.position_embedding_type = \"learned_absolute\"\n", f);
	if (tr->swiglu)
		fputs("    m.gated_linear_unit = True\n"
		      "    m.activation_func = F.silu\n"
		      "    m.add_bias_linear = False\n"
		      "    m.attention_dropout = 0.0\n"
		      "    m.hidden_dropout = 0.0\n", f);
	else
		fputs("    m.gated_linear_unit = False\n"
		      "    m.activation_func = F.gelu\n", f);
	fprintf(f, "    m.share_embeddings_and_output_weights = %s\n",
		tr->tie_embeddings ? "True" : "False");
	fprintf(f, "    m.tensor_model_parallel_size = %d\n",
		pl->tensor_parallel);
	fprintf(f, "    m.pipeline_model_parallel_size = %d\n", pl->stages);
	if (s->n_chunks > 1)
		fprintf(f, "    m.virtual_pipeline_model_parallel_size = %d\n",
			s->n_chunks);
	else
		fputs("    m.virtual_pipeline_model_parallel_size = None\n", f);
	fprintf(f, "    m.context_parallel_size = %d\n", pl->context_parallel);
	fprintf(f, "    m.sequence_parallel = %s\n",
		pl->tensor_parallel > 1 && tr->sequence_parallel ? "True"
								 : "False");
	int first = 0, last = 0;
	if (pl->stages > 1 && megatron_split(p, &first, &last) != 1)
		bridge_layout(f, p);
	else
		fputs("    m.pipeline_model_parallel_layout = None\n", f);
	if (s->n_chunks > 1 && pl->group_size > 0 &&
	    pl->group_size != pl->stages)
		fprintf(f, "    m.microbatch_group_size_per_vp_stage = %d\n",
			pl->group_size);
	if (tr->recompute == PPCC_RECOMPUTE_SELECTIVE) {
		char m[128];
		ppcc_recompute_modules_text(m, sizeof m,
					    tr->recompute_modules
					    ? tr->recompute_modules
					    : PPCC_RC_CORE_ATTN, "\", \"");
		fprintf(f, "    m.recompute_granularity = \"selective\"\n"
			"    m.recompute_modules = [%s%s%s]\n", *m ? "\"" : "",
			m, *m ? "\"" : "");
	} else if (tr->recompute == PPCC_RECOMPUTE_FULL)
		fputs("    m.recompute_granularity = \"full\"\n"
		      "    m.recompute_method = \"uniform\"\n"
		      "    m.recompute_num_layers = 1\n", f);
	else
		fputs("    m.recompute_granularity = None\n", f);
	fprintf(f, "    cfg.train.micro_batch_size = %d\n",
		c->model.micro_batch_size);
	fprintf(f, "    cfg.train.global_batch_size = %lld\n", global_batch(c));
	/* FP8 as megatron's arguments write it, the parameters gathered
	 * in bf16 as ppcc plans them and the arguments' amax history
	 * (Bridge's recipe gathers them in FP8 and keeps 1024 amaxes:
	 * training/mixed_precision.py:217-233; Megatron-LM's defaults,
	 * 2a75ac12 transformer_config.py:607-610) */
	if (tr->fp8)
		fputs("    cfg.mixed_precision = "
		      "bf16_with_fp8_delayed_scaling_mixed()\n"
		      "    cfg.mixed_precision.fp8_param_gather = False\n"
		      "    cfg.mixed_precision.fp8_amax_history_len = 1\n"
		      "    cfg.mixed_precision.fp8_amax_compute_algo = "
		      "\"most_recent\"\n", f);
	else
		fputs("    cfg.mixed_precision = bf16_mixed()\n", f);
	fprintf(f, "    cfg.mixed_precision.grad_reduce_in_fp32 = %s\n",
		pl->grad_bytes == 2.0 ? "False" : "True");
	fprintf(f, "    cfg.ddp.use_distributed_optimizer = %s\n",
		pl->zero == 1 ? "True" : "False");
	if (pl->zero >= 2)
		fprintf(f, "    cfg.ddp.use_megatron_fsdp = True\n"
			"    cfg.dist.use_megatron_fsdp = True\n"
			"    cfg.ddp.data_parallel_sharding_strategy = \"%s\"\n"
			"    cfg.checkpoint.ckpt_format = \"fsdp_dtensor\"\n"
			"    m.gradient_accumulation_fusion = False\n",
			pl->zero == 2 ? "optim_grads" : "optim_grads_params");
	if (pl->zero >= 1 && ppcc_pipeline_zero_replicas(pl) > 1)
		fprintf(f, "    cfg.ddp.num_distributed_optimizer_instances = "
			"%d\n", ppcc_pipeline_zero_replicas(pl));
	/* the optimizer's sharding and state as the arguments leave them,
	 * over a recipe's own (its use_distributed_optimizer would turn
	 * the DDP's back on, training/config.py:2101-2124; DeepSeek-V3's
	 * keeps bf16 states, recipes/deepseek/h100/deepseek_v3.py:221-225;
	 * 2a75ac12 optimizer_config.py:187-206, 324) */
	fprintf(f, "    cfg.optimizer.use_distributed_optimizer = %s\n"
		"    cfg.optimizer.use_precision_aware_optimizer = %s\n"
		"    cfg.optimizer.main_grads_dtype = torch.float32\n"
		"    cfg.optimizer.main_params_dtype = torch.float32\n"
		"    cfg.optimizer.exp_avg_dtype = torch.%s\n"
		"    cfg.optimizer.exp_avg_sq_dtype = torch.%s\n",
		pl->zero == 1 ? "True" : "False",
		pl->moments_bf16 ? "True" : "False",
		pl->moments_bf16 ? "bfloat16" : "float32",
		pl->moments_bf16 ? "bfloat16" : "float32");
	/* the overlaps the simulator assumes (doc/design/iteration.md);
	 * a recipe's CommOverlapConfig would redo them by its own rules
	 * and could turn TP overlap on (config.py:2027-2029,
	 * comm_overlap.py:430-451 and 571-579), so it goes */
	fputs("    cfg.comm_overlap = None\n", f);
	fprintf(f, "    cfg.ddp.overlap_grad_reduce = %s\n",
		n_dp > 1 ? "True" : "False");
	fprintf(f, "    cfg.ddp.overlap_param_gather = %s\n",
		n_dp > 1 && pl->zero >= 1 ? "True" : "False");
	fputs("    return cfg\n", f);
	return write_status(f);
}

/* ---- torchtitan ---------------------------------------------------------- */

/*
 * torchtitan's rules, as of v0.2.2 (73a0e69, its last TOML release) and
 * its main at b5bcd76 (Python configs since 9810191); each with its line
 * in doc/design/torchtitan.md.  In short: the model is one of the llama3
 * flavors, matched by shape (models/llama3/__init__.py:51-99); ZeRO 0
 * with d > 1 is DDP, which torchtitan runs alone only
 * (models/llama3/infra/parallelize.py:148-151); without FSDP (d_shard = 1
 * and cp = 1) but with TP or PP, torchtitan trains in fp32
 * (distributed/utils.py:246-256), both v0.2.2's only (main applies FSDP
 * at every degree); FSDP spans the context-parallel ranks
 * whenever cp > 1 (distributed/parallel_dims.py:334-335), so ZeRO 0 with
 * cp > 1 is not what runs; gradients are reduced in fp32 only
 * (config/job_config.py:290).  An order that is none of PyTorch's named
 * schedules runs from PyTorch's compute-only CSV (ppcc's torch-csv),
 * with the named schedule of its placement choosing the stages of each
 * rank (distributed/pipeline_parallel.py:171-179, 446-448).
 */

typedef struct tt_flavor {
	const char *name;
	int layers, hidden, heads, kv_heads, ffn_hidden, vocab;
} tt_flavor;

/* torchtitan v0.2.2 models/llama3/__init__.py:51-99 and model/args.py:33
 * (vocab 128256); the FFN width as model/model.py:330-336 computes it:
 * multiple_of * ceil(int(m * int(2 * 4 dim / 3)) / multiple_of). */
static const tt_flavor tt_llama3[] = {
	{"8B", 32, 4096, 32, 8, 14336, 128256},
	{"70B", 80, 8192, 64, 8, 28672, 128256},
	{"405B", 126, 16384, 128, 8, 53248, 128256},
};

#define TT_N_FLAVORS ((int)(sizeof tt_llama3 / sizeof tt_llama3[0]))

/* torchtitan's mixture-of-experts flavors, the same numbers in v0.2.2 and
 * main (doc/design/torchtitan.md gives each line): its model and flavor;
 * layers, hidden, heads, kv heads and head_dim (latent attention: 0, its
 * ranks in mla: q_lora, kv_lora, qk_nope, qk_rope, v), the dense FFN
 * (unused without dense layers), vocab; experts, top k, their width,
 * shared experts, dense layers; the expert groups a token may reach
 * (groups, of which group_top; 0: none); GPT-OSS's sliding window and
 * its pattern, biases and sinks (ppcc's fields); RoPE theta; whether
 * v0.2.2 pipelines it (a pipelining function) and runs it with context
 * parallelism (sdpa attention), whether main does the latter (not with
 * varlen attention); the longest sequence main's RoPE table holds. */
typedef struct tt_moe_flavor {
	const char *model, *name;
	int layers, hidden, heads, kv_heads, head_dim, ffn_hidden, vocab;
	int experts, top_k, expert_ffn, shared, dense;
	int mla[5];
	int groups, group_top;
	int window, window_pattern, gpt_oss;
	double rope_theta;
	int toml_pp, toml_cp, main_cp, max_context;
} tt_moe_flavor;

static const tt_moe_flavor tt_moe[] = {
	{"deepseek_v3", "16B", 27, 2048, 16, 0, 0, 10944, 102400,
	 64, 6, 1408, 2, 1, {0, 512, 128, 64, 128}, 0, 0, 0, 0, 0, 10000,
	 1, 0, 1, 16384},
	{"deepseek_v3", "236B", 60, 5120, 128, 0, 0, 12288, 102400,
	 160, 6, 1536, 2, 1, {1536, 512, 128, 64, 128}, 8, 3, 0, 0, 0, 10000,
	 1, 0, 1, 16384},
	{"deepseek_v3", "671B", 61, 7168, 128, 0, 0, 18432, 129280,
	 256, 8, 2048, 1, 3, {1536, 512, 128, 64, 128}, 8, 4, 0, 0, 0, 10000,
	 1, 0, 1, 16384},
	{"qwen3", "30B-A3B", 48, 2048, 32, 4, 128, 6144, 151936,
	 128, 8, 768, 0, 0, {0}, 0, 0, 0, 0, 0, 1e6, 0, 1, 1, 40960},
	{"qwen3", "235B-A22B", 94, 4096, 64, 4, 128, 12288, 151936,
	 128, 8, 1536, 0, 0, {0}, 0, 0, 0, 0, 0, 5e6, 0, 1, 1, 40960},
	{"gpt_oss", "20b", 24, 2880, 64, 8, 64, 2880, 201088,
	 32, 4, 2880, 0, 0, {0}, 0, 0, 128, 2, 1, 150000, 0, 0, 0, 131072},
	{"gpt_oss", "120b", 36, 2880, 64, 8, 64, 2880, 201088,
	 128, 4, 2880, 0, 0, {0}, 0, 0, 128, 2, 1, 150000, 0, 0, 0, 131072},
};

#define TT_N_MOE ((int)(sizeof tt_moe / sizeof tt_moe[0]))

/* What both torchtitan formats write, decided once. */
typedef struct tt_job {
	const ppcc_config *c;
	const ppcc_transformer *tr;
	const tt_flavor *flavor;    /* a dense model's, else NULL */
	const tt_moe_flavor *moe;   /* a mixture of experts', else NULL */
	const char *schedule; /* the named schedule, or its placement's */
	int csv;              /* the order comes from a torch-csv file */
	int d_rep, d_shard;
	const char *reshard;  /* FSDP's reshard_after_forward, or NULL */
	long long local_batch;
} tt_job;

static const char *torchtitan_schedule(int kind)
{
	switch (kind) {
	case PPCC_SCHED_GPIPE: return "GPipe";
	case PPCC_SCHED_1F1B: return "1F1B";
	case PPCC_SCHED_INTERLEAVED: return "Interleaved1F1B";
	case PPCC_SCHED_ZB_V: return "ZBVZeroBubble";
	case PPCC_SCHED_ZB_INTERLEAVED: return "InterleavedZeroBubble";
	case PPCC_SCHED_DUALPIPE_V: return "DualPipeV";
	}
	return NULL;
}

/* The rules on the parallel degrees and ZeRO, shared with the search's
 * admits: NULL when torchtitan runs them as planned, else why not.  toml:
 * v0.2.2's rules; else main's, which applies FSDP with its mixed
 * precision at any degree (no DDP, no fp32 without it). */
/* The ranks torchtitan's experts borrow their ep from: FSDP's shard
 * group (d, 1 under ZeRO 0, whose replicas it cannot borrow), the
 * context-parallel ranks and, with expert_tensor_parallel 1, the
 * tensor-parallel ones (v0.2.2 distributed/parallel_dims.py:136-158, the
 * sparse mesh efsdp x ep x etp over dp_shard x cp x tp; main 187-192). */
static int tt_ep_pool(int t, int d, int cp, int zero, int etp)
{
	return (zero == 0 ? 1 : d) * cp * (etp == 1 ? t : 1);
}

static const char *tt_refusal(int t, int p, int d, int cp, int zero,
			      int ep, int etp, int kind, int toml)
{
	if (kind == PPCC_SCHED_COMBINED_1F1B)
		return "combined";
	if (toml && zero == 0 && d > 1 && (t > 1 || p > 1 || cp > 1))
		return "zero0-ddp";
	if (zero == 0 && cp > 1)
		return "zero0-cp";
	if (zero == 1 && (d > 1 || cp > 1))
		return "zero1";
	if (toml && (zero == 0 || d == 1) && cp == 1 && (t > 1 || p > 1))
		return "fp32";
	if (ep < 1) /* a dense model's entry */
		ep = 1;
	if (ep == 1 ? etp != t : etp != 1 && (!toml || etp != t))
		return "etp";
	if (ep > 1 && tt_ep_pool(t, d, cp, zero, etp) % ep != 0)
		return "ep";
	return NULL;
}

static int tt_shape_matches(const ppcc_transformer *tr, const tt_flavor *f)
{
	int kv = tr->kv_heads > 0 ? tr->kv_heads : tr->heads;
	return tr->swiglu && tr->layers == f->layers &&
	       tr->hidden == f->hidden && tr->heads == f->heads &&
	       kv == f->kv_heads && tr->ffn_hidden == f->ffn_hidden &&
	       tr->vocab == f->vocab;
}

static void tt_shape(char *buf, size_t size, int layers, int hidden,
		     int heads, int kv, int ffn, int vocab)
{
	snprintf(buf, size, "%d layers, hidden %d, %d heads, %d kv heads, "
		 "ffn_hidden %d, vocab %d", layers, hidden, heads, kv, ffn,
		 vocab);
}

/* The flavor of the model's shape, or an error naming the flavors on
 * either side of its hidden size. */
static int tt_flavor_of(const tt_flavor **out, const ppcc_config *c,
			ppcc_diag *d)
{
	const ppcc_transformer *tr = c->model.transformer;
	for (int i = 0; i < TT_N_FLAVORS; i++)
		if (tt_shape_matches(tr, &tt_llama3[i])) {
			*out = &tt_llama3[i];
			return 0;
		}
	int below = -1, above = -1;
	for (int i = 0; i < TT_N_FLAVORS; i++) {
		if (tt_llama3[i].hidden <= tr->hidden)
			below = i;
		if (tt_llama3[i].hidden >= tr->hidden && above < 0)
			above = i;
	}
	char have[160], near[2][160];
	int n = 0, pick[2];
	if (below >= 0)
		pick[n++] = below;
	if (above >= 0 && above != below)
		pick[n++] = above;
	tt_shape(have, sizeof have, tr->layers, tr->hidden, tr->heads,
		 tr->kv_heads > 0 ? tr->kv_heads : tr->heads, tr->ffn_hidden,
		 tr->vocab);
	for (int k = 0; k < n; k++) {
		const tt_flavor *f = &tt_llama3[pick[k]];
		tt_shape(near[k], sizeof near[k], f->layers, f->hidden,
			 f->heads, f->kv_heads, f->ffn_hidden, f->vocab);
	}
	ppcc_loc loc = c->model.loc.file ? c->model.loc
					 : (ppcc_loc){c->path, 0, 0};
	if (n == 2)
		ppcc_error(d, &loc, "torchtitan has no llama3 flavor of this "
			   "shape (%s%s): the nearest are \"%s\" (%s) and "
			   "\"%s\" (%s)", have, tr->swiglu ? "" : ", no swiglu",
			   tt_llama3[pick[0]].name, near[0],
			   tt_llama3[pick[1]].name, near[1]);
	else
		ppcc_error(d, &loc, "torchtitan has no llama3 flavor of this "
			   "shape (%s%s): the nearest is \"%s\" (%s)", have,
			   tr->swiglu ? "" : ", no swiglu",
			   tt_llama3[pick[0]].name, near[0]);
	return PPCC_EINPUT;
}

static int tt_moe_matches(const ppcc_transformer *tr,
			  const tt_moe_flavor *f)
{
	const ppcc_moe *e = &tr->moe;
	int kv = tr->kv_heads > 0 ? tr->kv_heads : tr->heads;
	int hd = tr->head_dim > 0 ? tr->head_dim : tr->hidden / tr->heads;
	int attn = f->mla[1] > 0
		? tr->mla.kind && tr->mla.q_lora_rank == f->mla[0] &&
		  tr->mla.kv_lora_rank == f->mla[1] &&
		  tr->mla.qk_nope_head_dim == f->mla[2] &&
		  tr->mla.qk_rope_head_dim == f->mla[3] &&
		  tr->mla.v_head_dim == f->mla[4]
		: !tr->mla.kind && kv == f->kv_heads && hd == f->head_dim;
	/* qwen3's flavors norm each head's query and key (v0.2.2
	 * models/qwen3/__init__.py:41-176 qk_norm=True; main b5bcd76
	 * :121, :170), the others none */
	return attn && tr->swiglu && !tr->tie_embeddings &&
	       tr->qk_norm == !strcmp(f->model, "qwen3") &&
	       tr->sliding_window == f->window &&
	       (!f->window ||
		tr->sliding_window_pattern == f->window_pattern) &&
	       tr->biases == f->gpt_oss && tr->attention_sinks == f->gpt_oss &&
	       tr->layers == f->layers && tr->hidden == f->hidden &&
	       tr->heads == f->heads && tr->vocab == f->vocab &&
	       (f->dense == 0 || tr->ffn_hidden == f->ffn_hidden) &&
	       e->experts == f->experts && e->top_k == f->top_k &&
	       e->ffn_hidden == f->expert_ffn &&
	       e->shared_experts == f->shared &&
	       e->dense_layers == f->dense && e->every == 1;
}

/* The mixture-of-experts flavor of the model's shape, or an error that
 * names them all. */
static int tt_moe_of(const tt_moe_flavor **out, const ppcc_config *c,
		     ppcc_diag *d)
{
	const ppcc_transformer *tr = c->model.transformer;
	for (int i = 0; i < TT_N_MOE; i++) {
		const tt_moe_flavor *f = &tt_moe[i];
		if (!tt_moe_matches(tr, f))
			continue;
		*out = f;
		/* the flavor fixes its routing: planned groups are its */
		const ppcc_moe *e = &tr->moe;
		if (e->groups > 0 && (e->groups != f->groups ||
				      e->group_topk != f->group_top)) {
			ppcc_loc loc = where(c, &e->loc);
			char fr[64] = "without expert groups";
			if (f->groups > 0)
				snprintf(fr, sizeof fr, "to %d of %d expert "
					 "groups", f->group_top, f->groups);
			ppcc_error(d, &loc, "torchtitan's %s \"%s\" routes %s, "
				   "and the plan routes to %d of %d: plan the "
				   "flavor's routing", f->model, f->name, fr,
				   e->group_topk, e->groups);
			return PPCC_EINPUT;
		}
		return 0;
	}
	const ppcc_moe *e = &tr->moe;
	char names[256];
	size_t n = 0;
	for (int i = 0; i < TT_N_MOE && n < sizeof names; i++)
		n += (size_t)snprintf(names + n, sizeof names - n, "%s%s "
				      "\"%s\"", i ? ", " : "",
				      tt_moe[i].model, tt_moe[i].name);
	ppcc_loc loc = c->model.loc.file ? c->model.loc
					 : (ppcc_loc){c->path, 0, 0};
	int kv = tr->kv_heads > 0 ? tr->kv_heads : tr->heads;
	char attn[160];
	if (tr->mla.kind)
		snprintf(attn, sizeof attn, "latent attention %d/%d", tr->mla.q_lora_rank,
			 tr->mla.kv_lora_rank);
	else
		snprintf(attn, sizeof attn, "%d heads, %d kv heads, head_dim %d",
			 tr->heads, kv, tr->head_dim > 0 ? tr->head_dim
			 : tr->hidden / tr->heads);
	ppcc_error(d, &loc, "torchtitan has no mixture-of-experts flavor of "
		   "this shape (%d layers, hidden %d, %s, vocab %d, %d experts "
		   "of width %d, top %d, %d shared, %d dense layers, every "
		   "%d%s%s%s%s%s%s): its flavors are %s (doc/design/torchtitan.md "
		   "gives their shapes)", tr->layers, tr->hidden, attn,
		   tr->vocab, e->experts, e->ffn_hidden, e->top_k,
		   e->shared_experts, e->dense_layers, e->every,
		   tr->swiglu ? "" : ", no swiglu",
		   tr->tie_embeddings ? ", tied embeddings" : "",
		   tr->sliding_window > 0 ? ", a sliding window" : "",
		   tr->biases ? ", biases" : "",
		   tr->attention_sinks ? ", attention sinks" : "",
		   tr->qk_norm ? ", query and key norms" : "", names);
	return PPCC_EINPUT;
}

/* What torchtitan refuses of the model whatever its layout: a model it
 * has no flavor of, settings the flavor does not carry, and of a
 * mixture of experts dropped tokens, the routing and dispatch it does
 * not run, main's RoPE table and multi-token prediction where neither
 * release runs it.  Sets *dense or *moe to the flavor. */
static int tt_model_refuses(const ppcc_config *c, int toml,
			    const tt_flavor **dense,
			    const tt_moe_flavor **moe, ppcc_diag *d)
{
	int err = need_transformer(c, "torchtitan", d);
	if (err)
		return err;
	const ppcc_transformer *tr = c->model.transformer;
	int experts = tr->moe.experts > 0;
	if ((err = refuse_unwritten(c, "torchtitan", experts ? WRITES_MLA |
				    WRITES_MTP | WRITES_WINDOW |
				    WRITES_GPT_OSS | WRITES_QK_NORM : 0, d)))
		return err;
	*dense = NULL;
	*moe = NULL;
	/* v0.2.2 runs SDPA with cuDNN's kernel first, and has no setting
	 * for another (models/attention.py:175-190) */
	if (toml && tr->attention_kernel == PPCC_ATTN_FA2) {
		ppcc_loc loc = where(c, &tr->attention_kernel_loc);
		ppcc_error(d, &loc, "torchtitan v0.2.2 runs attention on "
			   "cuDNN's kernel first (models/attention.py:"
			   "175-190), and has no setting for FlashAttention-2: "
			   "plan with attention_kernel: cudnn, or leave it out");
		return PPCC_EINPUT;
	}
	if (!experts)
		return tt_flavor_of(dense, c, d);
	if ((err = tt_moe_of(moe, c, d)) < 0)
		return err;
	const tt_moe_flavor *f = *moe;
	ppcc_loc mloc = tr->moe.loc.file ? tr->moe.loc : where(c, NULL);
	ppcc_loc tloc = c->model.transformer_loc.file
		? c->model.transformer_loc : where(c, NULL);
	if (tr->moe.capacity_factor > 0) {
		ppcc_error(d, &mloc, "torchtitan's experts are dropless: it "
			   "routes every token, with no capacity factor to set; "
			   "plan with capacity_factor: 0, not %g",
			   tr->moe.capacity_factor);
		return PPCC_EINPUT;
	}
	if (tr->moe.node_limit > 0 || tr->moe.dispatch_fp8) {
		ppcc_error(d, &mloc, "torchtitan's all-to-all sends each "
			   "routed copy of a token in 16 bits: ppcc does not "
			   "write %s for it; plan without it",
			   tr->moe.node_limit > 0
			   ? "node-limited routing (moe.node_limit)"
			   : "FP8 token dispatch (moe.dispatch: fp8)");
		return PPCC_EINPUT;
	}
	if (!toml && tr->seq_len > f->max_context) {
		ppcc_error(d, &tloc, "torchtitan's main holds %s \"%s\"'s "
			   "rotary table for %d tokens and refuses a longer "
			   "sequence: plan with seq_len %d or fewer, not %d",
			   f->model, f->name, f->max_context, f->max_context,
			   tr->seq_len);
		return PPCC_EINPUT;
	}
	if (tr->mtp_layers > 0 && (toml || strcmp(f->model, "deepseek_v3"))) {
		ppcc_error(d, &tloc, "torchtitan %s runs no multi-token "
			   "prediction %s: plan with transformer.mtp_layers: "
			   "0%s", toml ? "v0.2.2" : "main", toml
			   ? "(v0.2.2 has none)" : "outside deepseek_v3",
			   toml && !strcmp(f->model, "deepseek_v3")
			   ? ", or write its main's config (-f torchtitan) on "
			     "one stage" : "");
		return PPCC_EINPUT;
	}
	return 0;
}

int ppcc_torchtitan_model_refuses(const ppcc_config *c, ppcc_diag *d)
{
	const tt_flavor *f;
	const tt_moe_flavor *m;
	return tt_model_refuses(c, 0, &f, &m, d);
}

int ppcc_torchtitan_toml_model_refuses(const ppcc_config *c, ppcc_diag *d)
{
	const tt_flavor *f;
	const tt_moe_flavor *m;
	return tt_model_refuses(c, 1, &f, &m, d);
}

/* What torchtitan refuses of a mixture of experts' layout beside the
 * degrees (doc/design/torchtitan.md gives the lines): a flavor's
 * pipeline or context parallelism, multi-token prediction beside either
 * (main; tt_model_refuses refuses the rest of it), and paired
 * all-to-alls where it runs none or, v0.2.2, beside recomputation. */
static int tt_moe_refuses(const tt_job *j, int toml, ppcc_diag *d)
{
	const ppcc_config *c = j->c;
	const ppcc_pipeline *pl = &c->pipeline;
	const ppcc_transformer *tr = j->tr;
	const tt_moe_flavor *f = j->moe;
	ppcc_loc tloc = c->model.transformer_loc.file
		? c->model.transformer_loc : where(c, NULL);
	ppcc_loc kloc = where(c, &pl->kind_loc);
	int P = pl->stages, cp = pl->context_parallel;
	int ep = pl->expert_parallel;
	if (toml && P > 1 && !f->toml_pp) {
		ppcc_error(d, &kloc, "torchtitan v0.2.2's %s has no pipelining "
			   "function (\"pipelining_fn\" is None): plan with "
			   "stages: 1, or write its main's config (-f "
			   "torchtitan)", f->model);
		return PPCC_EINPUT;
	}
	if (toml && cp > 1 && !f->toml_cp) {
		ppcc_loc loc = where(c, &pl->context_parallel_loc);
		ppcc_error(d, &loc, "torchtitan v0.2.2's %s \"%s\" attends with "
			   "FlexAttention, and its context parallelism runs "
			   "SDPA only: plan with context_parallel: 1%s", f->model,
			   f->name, f->main_cp ? ", or write its main's config "
			   "(-f torchtitan)" : "");
		return PPCC_EINPUT;
	}
	if (!toml && cp > 1 && !f->main_cp) {
		ppcc_loc loc = where(c, &pl->context_parallel_loc);
		ppcc_error(d, &loc, "torchtitan's main runs %s with varlen "
			   "attention, which its context parallelism refuses "
			   "(\"Context Parallel is not supported with "
			   "ScaledDotProductAttention or VarlenAttention\"): "
			   "plan with context_parallel: 1", f->model);
		return PPCC_EINPUT;
	}
	if (tr->mtp_layers > 0 && (P > 1 || cp > 1)) {
		ppcc_error(d, &tloc, "torchtitan main runs no multi-token "
			   "prediction with pipeline or context parallelism "
			   "(\"MTP does not support pipeline parallelism "
			   "yet\"): plan with stages: 1 and context_parallel: "
			   "1, or transformer.mtp_layers: 0");
		return PPCC_EINPUT;
	}
	if (P > 1 && ep > 1 && pl->kind == PPCC_SCHED_DUALPIPE_V &&
	    ppcc_overlap_moe_a2a(pl) &&
	    (!toml || tr->recompute != PPCC_RECOMPUTE_NONE)) {
		ppcc_loc loc = where(c, &pl->overlap.moe_a2a_loc);
		if (toml)
			ppcc_error(d, &loc, "torchtitan v0.2.2 overlaps "
				   "DualPipeV's expert all-to-alls only without "
				   "activation checkpointing (\"Expert Parallel "
				   "with DualPipeV and Activation Checkpointing "
				   "cannot be used together\"): plan with "
				   "recompute: none, or with overlap: {moe_a2a: "
				   "false}");
		else
			ppcc_error(d, &loc, "torchtitan's main runs each of "
				   "DualPipeV's paired forward and backward one "
				   "after the other, so their expert all-to-alls "
				   "do not overlap as planned: plan with overlap: "
				   "{moe_a2a: false}");
		return PPCC_EINPUT;
	}
	return 0;
}

/* "loop" when stage s runs on rank s mod p, "v" when the V placement
 * (rank r: stages r and 2p - 1 - r), else NULL. */
static const char *tt_placement(const ppcc_schedule *s)
{
	int P = s->n_ranks, loop = 1, v = s->n_chunks == 2;
	for (int k = 0; k < s->n_stages; k++) {
		int r = s->stages[k].rank;
		loop &= r == k % P;
		v &= r == (k < P ? k : 2 * P - 1 - k);
	}
	return loop ? "loop" : v ? "v" : NULL;
}

static int tt_prepare(tt_job *j, const ppcc_plan *p, int toml,
		      ppcc_diag *d)
{
	const ppcc_config *c = plan_config(p, d);
	if (!c)
		return PPCC_EINTERNAL;
	memset(j, 0, sizeof *j);
	int err = tt_model_refuses(c, toml, &j->flavor, &j->moe, d);
	if (err)
		return err;
	int moe = j->moe != NULL;
	const ppcc_pipeline *pl = &c->pipeline;
	const ppcc_schedule *s = &p->best.schedule;
	if (pl->kind == PPCC_SCHED_COMBINED_1F1B) {
		ppcc_loc loc = where(c, &pl->kind_loc);
		ppcc_error(d, &loc, "combined-1f1b is Megatron-LM's order "
			   "(--overlap-moe-expert-parallel-comm), which "
			   "torchtitan does not run: plan with interleaved, or "
			   "1f1b on one stage");
		return PPCC_EINPUT;
	}
	j->c = c;
	j->tr = c->model.transformer;
	if (moe && (err = tt_moe_refuses(j, toml, d)) < 0)
		return err;
	int t = pl->tensor_parallel, P = pl->stages, D = pl->data_parallel;
	int cp = pl->context_parallel;
	int ep = moe ? pl->expert_parallel : 1, etp = ppcc_pipeline_etp(pl);
	const char *why = tt_refusal(t, P, D, cp, pl->zero, ep, etp, pl->kind,
				     toml);
	if (why && strcmp(why, "etp") == 0) {
		ppcc_loc loc = where(c, &pl->expert_tensor_parallel_loc);
		if (ep == 1) {
			ppcc_error(d, &loc, "torchtitan splits each expert "
				   "over all %d tensor-parallel devices when "
				   "expert_parallel is 1, not over %d: plan with "
				   "expert_tensor_parallel: %d, or leave it out",
				   t, etp, t);
			return PPCC_EINPUT;
		}
		ppcc_error(d, &loc, "torchtitan splits each expert over %s, not "
			   "over %d devices (%s): plan with "
			   "expert_tensor_parallel: 1%s", toml && t > 1
			   ? "1 device or all t" : "1 device", etp, toml
			   ? "\"Currently we only support ETP=TP or ETP=1\""
			   : "its main has no expert tensor parallelism",
			   toml && t > 1 ? " or the tensor-parallel degree" : "");
		return PPCC_EINPUT;
	}
	if (why && strcmp(why, "ep") == 0) {
		ppcc_loc loc = where(c, &pl->expert_parallel_loc);
		int pool = tt_ep_pool(t, D, cp, pl->zero, etp);
		ppcc_error(d, &loc, "torchtitan's experts borrow their %d "
			   "expert-parallel ranks from FSDP's shard group, the "
			   "context-parallel ranks%s, %d in all here%s: plan "
			   "with %san expert_parallel that divides %d", ep,
			   etp == 1 ? " and the tensor-parallel ones" : "", pool,
			   pl->zero == 0 ? " (ZeRO 0 shards nothing, and its "
			   "replicas are not borrowed)" : "",
			   pl->zero == 0 ? "zero: 2 or 3, or " : "", pool);
		return PPCC_EINPUT;
	}
	if (why && strcmp(why, "zero0-ddp") == 0) {
		ppcc_loc loc = where(c, &pl->zero_loc);
		ppcc_error(d, &loc, "torchtitan runs zero 0 over %d replicas "
			   "as DDP, which it refuses beside tensor, pipeline "
			   "or context parallelism (\"DDP has not supported > "
			   "1D parallelism\"): plan with zero: 1, 2 or 3 "
			   "(FSDP)", D);
		return PPCC_EINPUT;
	}
	if (why && strcmp(why, "zero0-cp") == 0) {
		ppcc_loc loc = where(c, &pl->zero_loc);
		ppcc_error(d, &loc, "torchtitan shards the weights over the %d "
			   "context-parallel ranks (FSDP) whenever cp > 1, so "
			   "zero 0 is not what it runs: plan with zero: 1, 2 "
			   "or 3", cp);
		return PPCC_EINPUT;
	}
	if (why && strcmp(why, "zero1") == 0) {
		ppcc_loc loc = where(c, &pl->zero_loc);
		ppcc_error(d, &loc, "torchtitan's FSDP shards the gradients "
			   "with the weights and the optimizer's state; ZeRO-1 "
			   "keeps whole gradients, so the plan's memory is not "
			   "what it would run: plan with zero: 2 (FSDP that "
			   "keeps the gathered weights until the backward, the "
			   "same bytes) or 3");
		return PPCC_EINPUT;
	}
	if (why) {
		ppcc_loc loc = where(c, &pl->zero_loc);
		ppcc_error(d, &loc, "torchtitan turns mixed precision off, and "
			   "trains in fp32, when tensor or pipeline parallelism "
			   "runs without FSDP (\"Mixed precision training with "
			   "TP or PP is only supported when FSDP/HSDP/CP is "
			   "enabled\"): plan with zero: 1, 2 or 3 and more than "
			   "one replica, or with context parallelism");
		return PPCC_EINPUT;
	}
	if (pl->grad_bytes != 4) {
		ppcc_loc loc = where(c, &pl->loc);
		ppcc_error(d, &loc, "torchtitan reduces and keeps gradients in "
			   "fp32 (mixed_precision_reduce = \"float32\" is its "
			   "one choice): plan with grad_bytes: 4, not %g",
			   pl->grad_bytes);
		return PPCC_EINPUT;
	}
	/* HSDP: FSDP over the shard group, replicated across the groups
	 * (parallel_dims.py's dp_replicate x dp_shard) */
	j->d_shard = pl->zero == 0 ? 1 : ppcc_pipeline_zero_ranks(pl) /
					     cp;
	j->d_rep = D / j->d_shard;
	if (j->d_shard > 1 || cp > 1) /* ZeRO 2 or 3: 1 is refused above */
		j->reshard = pl->zero == 3 ? "always" : "never";
	j->local_batch = P > 1 ? (long long)pl->microbatches *
					 c->model.micro_batch_size
			       : c->model.micro_batch_size;
	if (P == 1)
		return 0;
	if (ppcc_sched_pipes(pl->kind) > 1) {
		ppcc_loc loc = where(c, &pl->kind_loc);
		ppcc_error(d, &loc, "torchtitan runs one pipeline of stages, not "
			   "%s's two (one per direction, each with its own copy "
			   "of the parameters)", ppcc_schedule_kind_name(pl->kind));
		return PPCC_EINPUT;
	}
	const char *named = torchtitan_schedule(pl->kind);
	if (named && s->n_chunks > 1 && pl->group_size > 0 &&
	    pl->group_size != pl->stages)
		named = NULL; /* PyTorch groups by the p stages */
	if (pl->kind == PPCC_SCHED_ZB_V && pl->microbatches <= pl->stages)
		named = NULL; /* ppcc's own order there (sched/zb_v.c) */
	if (named) {
		j->schedule = named;
		return 0;
	}
	const char *place = tt_placement(s);
	if (!place) {
		ppcc_loc loc = where(c, &pl->kind_loc);
		ppcc_error(d, &loc, "torchtitan places a rank's stages looped "
			   "or in a V, not as this %s plan does",
			   ppcc_schedule_kind_name(pl->kind));
		return PPCC_EINPUT;
	}
	j->csv = 1;
	j->schedule = strcmp(place, "v") == 0 ? "ZBVZeroBubble"
					      : "PipelineScheduleMulti";
	return 0;
}

static const char *tt_model(const tt_job *j)
{
	return j->moe ? j->moe->model : "llama3";
}

static const char *tt_flavor_name(const tt_job *j)
{
	return j->moe ? j->moe->name : j->flavor->name;
}

/* What a mixture-of-experts flavor fixes that the plan does not price,
 * as comment lines: its routing to a few expert groups and its RoPE
 * theta where the model's differs. */
static void tt_moe_note(FILE *f, const tt_job *j, const char *comment)
{
	const tt_moe_flavor *m = j->moe;
	if (!m)
		return;
	if (m->groups > 0 && j->tr->moe.groups == 0)
		fprintf(f, "%s %s \"%s\" routes each token to experts in at "
			"most %d of %d expert groups; the plan prices its "
			"all-to-alls without that limit.\n", comment, m->model,
			m->name, m->group_top, m->groups);
	double theta = j->tr->rope_theta > 0 ? j->tr->rope_theta : 10000;
	if (theta != m->rope_theta)
		fprintf(f, "%s %s \"%s\" rotates with RoPE theta %.0f, the "
			"model %.0f: the same cost, another model.\n", comment,
			m->model, m->name, m->rope_theta, theta);
}

/* The expert degrees both formats write, in TOML's `key = value` or
 * Python's `key=value,` (indent before each); the TOML also says whether
 * DualPipeV's pairs overlap their all-to-alls, as planned (v0.2.2's
 * default is true; the key does nothing for other schedules). */
static void tt_experts(FILE *f, const tt_job *j, int toml,
		       const char *indent)
{
	if (!j->moe)
		return;
	const ppcc_pipeline *pl = &j->c->pipeline;
	const char *eq = toml ? " = " : "=", *end = toml ? "" : ",";
	fprintf(f, "%sexpert_parallel_degree%s%d%s\n", indent, eq,
		pl->expert_parallel, end);
	if (!toml)
		return;
	fprintf(f, "expert_tensor_parallel_degree = %d\n"
		"pipeline_parallel_expert_parallel_overlap = %s\n",
		pl->expert_parallel > 1 ? ppcc_pipeline_etp(pl) : 1,
		pl->kind == PPCC_SCHED_DUALPIPE_V && ppcc_overlap_moe_a2a(pl)
		? "true" : "false");
}

/* The file name the TOML and the Python config give for the CSV. */
#define TT_CSV "schedule.csv"

/* Each stage's modules, as `prefix["a", "b"],` lines. */
static void tt_fqns(FILE *f, const ppcc_plan *p, const char *indent,
		    const char *head)
{
	const ppcc_schedule *s = &p->best.schedule;
	for (int k = 0; k < s->n_stages; k++) {
		const ppcc_stage_info *st = &p->best.stages[k];
		int blocks, e, h, sep = 0;
		stage_blocks(p, st, &blocks, &e, &h);
		fprintf(f, "%s[", indent);
		if (e) {
			fputs("\"tok_embeddings\"", f);
			sep = 1;
		}
		int a = st->first_layer < 1 ? 1 : st->first_layer;
		for (int i = 0; i < blocks; i++) {
			fprintf(f, "%s\"layers.%d\"", sep ? ", " : "", a + i - 1);
			sep = 1;
		}
		if (h)
			fprintf(f, "%s\"norm\", \"%s\"", sep ? ", " : "", head);
		fputs(k + 1 < s->n_stages ? "],\n" : "]\n", f);
	}
}

/* The world the plan uses, t p cp d processes (data_parallel may leave
 * devices unused: ParallelDims asserts the product is the world size). */
static int tt_world(const ppcc_config *c)
{
	const ppcc_pipeline *pl = &c->pipeline;
	return pl->tensor_parallel * pl->stages * pl->context_parallel *
	       pl->data_parallel;
}

/* The launcher line's node and per-node counts. */
static void tt_nodes(const ppcc_config *c, int *per_node, int *nodes)
{
	int n = tt_world(c), k = c->cluster.host_devices > 0
				 ? c->cluster.host_devices
				 : c->cluster.devices_per_node;
	if (k < 1 || k > n)
		k = n;
	*per_node = k;
	*nodes = (n + k - 1) / k;
}

static void tt_header(FILE *f, const tt_job *j, const char *comment,
		      const char *format)
{
	const ppcc_pipeline *pl = &j->c->pipeline;
	fprintf(f, "%s ppcc plan -f %s: %d devices = %d tensor x %d pipeline "
		"x %d context x %d data parallel; ZeRO-%d\n", comment, format,
		tt_world(j->c), pl->tensor_parallel, pl->stages,
		pl->context_parallel, pl->data_parallel, pl->zero);
}

/* What the plan leaves to the user, as comment lines. */
static void tt_supply(FILE *f, const char *comment)
{
	fprintf(f, "%s Still to supply: the dataset and the tokenizer "
		"(hf_assets_path), the optimizer and its learning rate, the "
		"learning-rate schedule, the steps, and the checkpoint "
		"folder.\n", comment);
}

static void tt_csv_note(FILE *f, const tt_job *j, const char *comment)
{
	if (!j->csv)
		return;
	fprintf(f, "%s The order is none of PyTorch's named schedules: write "
		"it with `ppcc plan FILE -f torch-csv -o %s` (the same FILE "
		"and options, without --with-comms) beside this file; the "
		"schedule named here places each rank's stages.\n", comment,
		TT_CSV);
}

int ppcc_emit_torchtitan_toml(FILE *f, const ppcc_plan *p,
			      const ppcc_emit_options *o, ppcc_diag *d)
{
	(void)o;
	tt_job j;
	int err = tt_prepare(&j, p, 1, d);
	if (err)
		return err;
	const ppcc_config *c = j.c;
	const ppcc_pipeline *pl = &c->pipeline;
	const ppcc_transformer *tr = j.tr;
	int per_node, nodes;
	tt_nodes(c, &per_node, &nodes);
	tt_header(f, &j, "#", "torchtitan-toml");
	fputs("# For torchtitan v0.2.2, the last release that reads TOML.\n", f);
	fprintf(f, "# torchrun --nproc-per-node %d --nnodes %d -m "
		"torchtitan.train --job.config_file FILE\n", per_node, nodes);
	tt_supply(f, "#");
	tt_csv_note(f, &j, "#");
	tt_moe_note(f, &j, "#");
	fprintf(f, "\n[model]\nname = \"%s\"\nflavor = \"%s\"\n",
		tt_model(&j), tt_flavor_name(&j));
	fputs("\n[parallelism]\n", f);
	fprintf(f, "data_parallel_replicate_degree = %d\n", j.d_rep);
	fprintf(f, "data_parallel_shard_degree = %d\n", j.d_shard);
	if (j.reshard)
		fprintf(f, "fsdp_reshard_after_forward = \"%s\"\n", j.reshard);
	fprintf(f, "tensor_parallel_degree = %d\n", pl->tensor_parallel);
	fprintf(f, "context_parallel_degree = %d\n", pl->context_parallel);
	fprintf(f, "pipeline_parallel_degree = %d\n", pl->stages);
	tt_experts(f, &j, 1, "");
	if (pl->stages > 1) {
		fprintf(f, "pipeline_parallel_schedule = \"%s\"\n", j.schedule);
		if (j.csv)
			fprintf(f, "pipeline_parallel_schedule_csv = \"%s\"\n",
				TT_CSV);
		fprintf(f, "pipeline_parallel_microbatch_size = %d\n",
			c->model.micro_batch_size);
		fputs("module_fqns_per_model_part = [\n", f);
		tt_fqns(f, p, "  ", "output");
		fputs("]\n", f);
	}
	fputs("\n[training]\n", f);
	fprintf(f, "local_batch_size = %lld\n", j.local_batch);
	fprintf(f, "global_batch_size = %lld\n", global_batch(c));
	fprintf(f, "seq_len = %d\n", tr->seq_len);
	fputs("mixed_precision_param = \"bfloat16\"\n"
	      "mixed_precision_reduce = \"float32\"\n", f);
	fputs("\n[activation_checkpoint]\n", f);
	if (tr->recompute == PPCC_RECOMPUTE_SELECTIVE)
		fputs("mode = \"selective\"\nselective_ac_option = \"op\"\n", f);
	else
		fprintf(f, "mode = \"%s\"\n",
			tr->recompute == PPCC_RECOMPUTE_FULL ? "full" : "none");
	return write_status(f);
}

/* torchtitan's main (b5bcd76): a function returning Trainer.Config, the
 * names of torchtitan/config/configs.py, trainer.py:70-116 and
 * models/llama3/__init__.py:369; its batch in tokens (configs.py:36-51,
 * trainer.py:409-428); the head is lm_head (pipeline_parallel.py:387). */
int ppcc_emit_torchtitan(FILE *f, const ppcc_plan *p,
			 const ppcc_emit_options *o, ppcc_diag *d)
{
	(void)o;
	tt_job j;
	int err = tt_prepare(&j, p, 0, d);
	if (err)
		return err;
	const ppcc_config *c = j.c;
	const ppcc_pipeline *pl = &c->pipeline;
	const ppcc_transformer *tr = j.tr;
	long long s = tr->seq_len;
	int per_node, nodes;
	tt_nodes(c, &per_node, &nodes);
	tt_header(f, &j, "#", "torchtitan");
	fputs("# For torchtitan's main as of b5bcd76 (2026-08-21), whose configs "
	      "are Python\n# functions; for v0.2.2's TOML use -f "
	      "torchtitan-toml.  Save this as ppcc_plan.py\n# in a package "
	      "Python imports, e.g. torchtitan_recipes/, and run:\n", f);
	fprintf(f, "# torchrun --nproc-per-node %d --nnodes %d -m "
		"torchtitan.train --module torchtitan_recipes.ppcc_plan "
		"--config ppcc_plan\n", per_node, nodes);
	tt_supply(f, "#");
	fputs("# Also the loss (the registry's configs use "
	      "ChunkedLossWrapper over CrossEntropyLoss).\n", f);
	tt_csv_note(f, &j, "#");
	tt_moe_note(f, &j, "#");
	/* main's models attend with FlexAttention or varlen attention
	 * (models/llama3/__init__.py:371; common/config_utils.py:71-106
	 * refuses sdpa), neither measured in the catalogue */
	if (tr->flash_attention)
		fputs("# Attention: main runs FlexAttention (or varlen), which "
		      "ppcc has no measurement of;\n# the plan prices it as "
		      "the catalogue's cuDNN or FlashAttention-2 figures (v0.2.2 "
		      "runs\n# cuDNN's SDPA kernel), or at the matrix rate "
		      "where it has none.\n", f);
	fputs("\nfrom torchtitan.config import ParallelismConfig, "
	      "TrainingConfig\n", f);
	if (tr->recompute == PPCC_RECOMPUTE_SELECTIVE)
		fputs("from torchtitan.distributed.activation_checkpoint import "
		      "SelectiveAC\n", f);
	else if (tr->recompute == PPCC_RECOMPUTE_FULL)
		fputs("from torchtitan.distributed.activation_checkpoint import "
		      "FullAC\n", f);
	fprintf(f, "from torchtitan.models.%s import model_registry\n"
		"from torchtitan.trainer import Trainer\n\n\n"
		"def ppcc_plan() -> Trainer.Config:\n"
		"    return Trainer.Config(\n", tt_model(&j));
	if (tr->mtp_layers > 0)
		fprintf(f, "        model_spec=model_registry(\"%s\", "
			"num_mtp_layers=%d),\n", tt_flavor_name(&j),
			tr->mtp_layers);
	else
		fprintf(f, "        model_spec=model_registry(\"%s\"),\n",
			tt_flavor_name(&j));
	fputs("        parallelism=ParallelismConfig(\n", f);
	fprintf(f, "            data_parallel_replicate_degree=%d,\n", j.d_rep);
	fprintf(f, "            data_parallel_shard_degree=%d,\n", j.d_shard);
	if (j.d_shard > 1 || pl->context_parallel > 1)
		fprintf(f, "            fsdp_reshard_after_forward=\"%s\",\n",
			pl->zero == 3 ? "always" : "never");
	fprintf(f, "            tensor_parallel_degree=%d,\n",
		pl->tensor_parallel);
	fprintf(f, "            context_parallel_degree=%d,\n",
		pl->context_parallel);
	fprintf(f, "            pipeline_parallel_degree=%d,\n", pl->stages);
	tt_experts(f, &j, 0, "            ");
	if (pl->stages > 1) {
		fprintf(f, "            pipeline_parallel_schedule=\"%s\",\n",
			j.schedule);
		if (j.csv)
			fprintf(f, "            pipeline_parallel_schedule_csv="
				"\"%s\",\n", TT_CSV);
		fprintf(f, "            num_pp_microbatches=%d,\n",
			pl->microbatches);
		fputs("            module_fqns_per_model_part=[\n", f);
		tt_fqns(f, p, "                ", "lm_head");
		fputs("            ],\n", f);
	}
	fputs("        ),\n        training=TrainingConfig(\n", f);
	fprintf(f, "            num_tokens_per_microbatch_per_dp_rank=%lld,\n",
		(long long)c->model.micro_batch_size * s);
	fprintf(f, "            num_tokens_per_train_step=%lld,\n",
		global_batch(c) * s);
	fprintf(f, "            max_context_length=%lld,\n", s);
	fputs("            mixed_precision_param=\"bfloat16\",\n"
	      "            mixed_precision_reduce=\"float32\",\n"
	      "        ),\n", f);
	fprintf(f, "        activation_checkpoint=%s,\n    )\n",
		tr->recompute == PPCC_RECOMPUTE_SELECTIVE ? "SelectiveAC.Config()"
		: tr->recompute == PPCC_RECOMPUTE_FULL ? "FullAC.Config()"
		: "None");
	return write_status(f);
}

/* ---- what each trainer runs ----------------------------------------------- */

/* What megatron_refuses refuses of e's degrees, kind and recomputation
 * for the model of c (NULL: the kind alone), so that a search finds
 * what Megatron-LM runs; what the model alone decides is left to the
 * export's message. */
int ppcc_megatron_admits(const ppcc_search_entry *e, void *ctx)
{
	const ppcc_config *c = ctx;
	const ppcc_transformer *tr = c ? c->model.transformer : NULL;
	int combined = e->kind == PPCC_SCHED_COMBINED_1F1B;
	if (!combined && e->kind != PPCC_SCHED_1F1B &&
	    e->kind != PPCC_SCHED_INTERLEAVED)
		return 0;
	if (!tr)
		return 1;
	const ppcc_pipeline *pl = &c->pipeline;
	int group = pl->group_size > 0 ? pl->group_size : e->p;
	return !(combined && tr->mtp_layers > 1) &&
	       !(e->v > 1 && (group < e->p || group > e->m)) &&
	       !(e->cp > 1 && tr->seq_len % (2 * e->cp) != 0) &&
	       !(tr->moe.experts > 0 && e->t > 1 && !tr->sequence_parallel) &&
	       !(tr->sliding_window > 0 && e->cp > 1) &&
	       !(!tr->flash_attention && e->cp > 1) &&
	       !(pl->grad_bytes == 2.0 && e->zero >= 2) &&
	       !(tr->fp8 && e->recompute == PPCC_RECOMPUTE_SELECTIVE &&
		 (tr->recompute_modules &
		  (PPCC_RC_LAYERNORM | PPCC_RC_MOE_ACT)));
}

/* What tt_moe_refuses refuses of e's degrees and kind for the model of
 * c (NULL: nothing), so that a search finds what the flavor runs; what
 * the model alone decides is left to the export's message. */
static int tt_moe_admits(const ppcc_search_entry *e, const ppcc_config *c,
			 int toml)
{
	const ppcc_transformer *tr = c ? c->model.transformer : NULL;
	if (!tr || tr->moe.experts == 0)
		return 1;
	const tt_moe_flavor *f = NULL;
	for (int i = 0; i < TT_N_MOE && !f; i++)
		if (tt_moe_matches(tr, &tt_moe[i]))
			f = &tt_moe[i];
	if (!f)
		return 1;
	if (toml && ((e->p > 1 && !f->toml_pp) || (e->cp > 1 && !f->toml_cp)))
		return 0;
	if (!toml && e->cp > 1 && !f->main_cp)
		return 0;
	if (!toml && tr->mtp_layers > 0 && (e->p > 1 || e->cp > 1))
		return 0;
	return !(e->p > 1 && e->ep > 1 && e->kind == PPCC_SCHED_DUALPIPE_V &&
		 ppcc_overlap_moe_a2a(&c->pipeline) &&
		 (!toml || e->recompute != PPCC_RECOMPUTE_NONE));
}

int ppcc_torchtitan_admits(const ppcc_search_entry *e, void *ctx)
{
	return tt_refusal(e->t, e->p, e->d, e->cp, e->zero, e->ep,
			  e->etp > 0 ? e->etp : e->t, e->kind, 0) == NULL &&
	       tt_moe_admits(e, ctx, 0);
}

int ppcc_torchtitan_toml_admits(const ppcc_search_entry *e, void *ctx)
{
	return tt_refusal(e->t, e->p, e->d, e->cp, e->zero, e->ep,
			  e->etp > 0 ? e->etp : e->t, e->kind, 1) == NULL &&
	       tt_moe_admits(e, ctx, 1);
}

int ppcc_deepspeed_admits(const ppcc_search_entry *e, void *ctx)
{
	(void)ctx;
	return ((e->p == 1 && e->kind != PPCC_SCHED_COMBINED_1F1B) ||
		(e->kind == PPCC_SCHED_1F1B && e->v == 1)) &&
	       !(e->zero >= 2 && e->p > 1) && e->cp == 1 &&
	       !(e->zero == 0 && e->d > 1);
}

int ppcc_trainer_admits(const ppcc_search_entry *e, void *ctx)
{
	const ppcc_format_info *f = ppcc_format_of((int)(intptr_t)ctx);
	return !f || !f->admits || f->admits(e, NULL);
}

/* ---- DeepSpeed ---------------------------------------------------------- */

/*
 * DeepSpeed's rules, as of its commit edaa722 (doc/design/deepspeed.md):
 * PipelineEngine asserts ZeRO < 2 (runtime/pipe/engine.py:76); bf16 with
 * fp32 gradient accumulation runs only in its BF16 optimizer at ZeRO 1,
 * which shards the fp32 weights and Adam state over the data-parallel
 * ranks (runtime/engine.py:1994, runtime/bf16_optimizer.py:161-177); with
 * no ZeRO, bf16 weights with fp32 accumulation raise NotImplementedError
 * (runtime/engine.py:2021); a PipelineModule without a topology takes
 * every rank outside the pipeline as data parallel (runtime/pipe/
 * module.py:169-180), so t > 1 needs PipeModelDataParallelTopology.
 */
/*
 * A mixture of experts in DeepSpeed (edaa722) is the model's own
 * deepspeed.moe.layer.MoE modules, whose expert-parallel degree is an
 * argument (moe/layer.py:38-53), not a key of the JSON; the JSON carries
 * them under "ppcc_moe", a top-level key DeepSpeed's configuration does
 * not read (runtime/config.py reads the keys it knows by name,
 * config_utils.py:193-194; only its sections are strict models): the
 * blocks that are MoE layers, the expert's shape and the MoE arguments.
 * The capacity is ceil(k cf T / E) of a rank's T tokens
 * (moe/sharded_moe.py:162-170, 383, 465: cf x 2 and cf x k), ppcc's, with
 * min_capacity 0; the second of two experts is the second best, not
 * sampled (top2_2nd_expert_sampling false, 357-365).  Refused: shared
 * experts (use_residual mixes one MLP in by a learned coefficient,
 * layer.py:124-131, not a sum), dropless routing (drop_tokens false pads
 * every expert to the busiest one's tokens, 384-396 and 485-494, which
 * ppcc does not price), t > 1 (the experts are then split over the
 * tensor-parallel ranks or their capacity is, 696-717), ZeRO 3
 * (runtime/engine.py:1889-1891), node-limited routing and FP8 dispatch.
 */
static int deepspeed_moe_refuses(const ppcc_config *c, ppcc_diag *d)
{
	const ppcc_transformer *tr = c->model.transformer;
	const ppcc_pipeline *pl = &c->pipeline;
	const ppcc_moe *e = &tr->moe;
	ppcc_loc loc = e->loc.file ? e->loc
		: c->model.transformer_loc.file ? c->model.transformer_loc
		: (ppcc_loc){c->path, 0, 0};
	const char *why = NULL;
	if (e->shared_experts > 0)
		why = "its shared experts (DeepSpeed's use_residual mixes one "
		      "dense MLP into the experts' output by a learned "
		      "coefficient, not a sum of shared experts)";
	else if (e->capacity_factor <= 0)
		why = "dropless routing (DeepSpeed's drop_tokens: false pads "
		      "every expert to the busiest expert's tokens, which ppcc "
		      "does not price): plan with a capacity_factor";
	else if (e->node_limit > 0)
		why = "node-limited routing (DeepSpeed's gate has none)";
	else if (e->groups > 0)
		why = "group-limited routing (DeepSpeed's gate has none): plan "
		      "with groups: 0 and group_topk: 0";
	else if (e->dispatch_fp8)
		why = "an FP8 dispatch (DeepSpeed's all-to-alls move the "
		      "model's bf16)";
	if (why) {
		ppcc_error(d, &loc, "DeepSpeed's mixture-of-experts layer cannot "
			   "run %s", why);
		return PPCC_EINPUT;
	}
	if (pl->tensor_parallel > 1 || ppcc_pipeline_etp(pl) > 1) {
		ppcc_loc at = where(c, &pl->tensor_parallel_loc);
		ppcc_error(d, &at, "ppcc writes DeepSpeed's mixture of experts "
			   "for t = 1 only: with tensor parallelism DeepSpeed "
			   "splits its experts or their capacity over the %d "
			   "tensor-parallel ranks, which is not the plan's "
			   "expert tensor parallelism of %d",
			   pl->tensor_parallel, ppcc_pipeline_etp(pl));
		return PPCC_EINPUT;
	}
	if (pl->zero >= 3) {
		ppcc_loc at = where(c, &pl->zero_loc);
		ppcc_error(d, &at, "DeepSpeed's mixture-of-experts layer does not "
			   "train under ZeRO stage 3: plan with zero: 1 or 2");
		return PPCC_EINPUT;
	}
	if (pl->expert_parallel < 1 || e->experts % pl->expert_parallel ||
	    pl->data_parallel % pl->expert_parallel) {
		ppcc_loc at = where(c, NULL);
		ppcc_error(d, &at, "DeepSpeed's expert-parallel groups of %d "
			   "must divide the %d experts and a stage's %d "
			   "data-parallel ranks", pl->expert_parallel,
			   e->experts, pl->data_parallel);
		return PPCC_EINPUT;
	}
	return 0;
}

/* The "ppcc_moe" key (deepspeed_moe_refuses gives its rules). */
static void deepspeed_moe(FILE *f, const ppcc_config *c)
{
	const ppcc_transformer *tr = c->model.transformer;
	const ppcc_moe *e = &tr->moe;
	fputs(",\n  \"ppcc_moe\": {\n    \"layers\": [", f);
	for (int i = 0, n = 0; i < tr->layers; i++)
		if (ppcc_transformer_is_moe(tr, i))
			fprintf(f, "%s%d", n++ ? ", " : "", i);
	fprintf(f, "],\n    \"expert\": {\"ffn_hidden_size\": %d, "
		"\"swiglu\": true},\n", e->ffn_hidden);
	fprintf(f, "    \"arguments\": {\"hidden_size\": %d, \"num_experts\": "
		"%d, \"ep_size\": %d, \"k\": %d, \"capacity_factor\": %g, "
		"\"min_capacity\": 0, \"drop_tokens\": true, "
		"\"use_residual\": false, \"top2_2nd_expert_sampling\": "
		"false}\n  }", tr->hidden, e->experts,
		c->pipeline.expert_parallel, e->top_k, e->capacity_factor);
}

int ppcc_emit_deepspeed(FILE *f, const ppcc_plan *p,
			const ppcc_emit_options *o, ppcc_diag *d)
{
	(void)o;
	const ppcc_config *c = plan_config(p, d);
	if (!c)
		return PPCC_EINTERNAL;
	const ppcc_transformer *tr = c->model.transformer;
	int moe = tr && tr->moe.experts > 0;
	if (refuse_unwritten(c, "DeepSpeed", 0, d) ||
	    (moe && deepspeed_moe_refuses(c, d)))
		return PPCC_EINPUT;
	const ppcc_pipeline *pl = &c->pipeline;
	const ppcc_schedule *s = &p->best.schedule;
	int piped = pl->stages > 1;
	/* combined-1f1b on one stage pairs its microbatches: another order
	 * than DeepSpeed's accumulation */
	if ((piped || pl->kind == PPCC_SCHED_COMBINED_1F1B) &&
	    (pl->kind != PPCC_SCHED_1F1B || s->n_chunks != 1)) {
		ppcc_loc loc = where(c, &pl->kind_loc);
		ppcc_error(d, &loc, "DeepSpeed's pipeline engine runs its own "
			   "1f1b schedule, one stage a rank: plan with "
			   "schedule: 1f1b, not %s",
			   ppcc_schedule_kind_name(pl->kind));
		return PPCC_EINPUT;
	}
	if (pl->zero >= 2 && piped) {
		ppcc_loc loc = where(c, &pl->zero_loc);
		ppcc_error(d, &loc, "DeepSpeed's pipeline engine runs ZeRO "
			   "stage 0 or 1, not %d", pl->zero);
		return PPCC_EINPUT;
	}
	if (pl->context_parallel > 1) {
		ppcc_loc loc = where(c, &pl->context_parallel_loc);
		ppcc_error(d, &loc, "DeepSpeed's configuration has no context "
			   "parallelism beside a pipeline");
		return PPCC_EINPUT;
	}
	if (pl->zero == 0 && pl->data_parallel > 1) {
		ppcc_loc loc = where(c, &pl->zero_loc);
		ppcc_error(d, &loc, "DeepSpeed keeps bf16 training's fp32 "
			   "weights and Adam state only in its BF16 optimizer, "
			   "which shards them over the %d data-parallel ranks "
			   "as ZeRO 1 does: plan with zero: 1",
			   pl->data_parallel);
		return PPCC_EINPUT;
	}
	const char *accum = pl->grad_bytes == 4 ? "fp32"
			  : pl->grad_bytes == 2 ? "bf16" : NULL;
	if (!accum) {
		ppcc_loc loc = where(c, &pl->loc);
		ppcc_error(d, &loc, "DeepSpeed accumulates gradients in fp32 "
			   "(grad_bytes: 4) or bf16 (grad_bytes: 2), not in "
			   "%g bytes", pl->grad_bytes);
		return PPCC_EINPUT;
	}
	int full = c->model.transformer &&
		   c->model.transformer->recompute == PPCC_RECOMPUTE_FULL;
	/* at d = 1, ZeRO 0 and 1 hold the same bytes: stage 1 is the BF16
	 * optimizer, the one that keeps fp32 weights */
	int stage = pl->zero == 0 ? 1 : pl->zero;
	fprintf(f, "{\n  \"train_batch_size\": %lld,\n", global_batch(c));
	fprintf(f, "  \"train_micro_batch_size_per_gpu\": %d,\n",
		c->model.micro_batch_size);
	fprintf(f, "  \"gradient_accumulation_steps\": %d,\n", pl->microbatches);
	fputs("  \"bf16\": {\"enabled\": true},\n", f);
	fprintf(f, "  \"data_types\": {\"grad_accum_dtype\": \"%s\"},\n", accum);
	fprintf(f, "  \"zero_optimization\": {\"stage\": %d}", stage);
	if (piped) {
		fputs(",\n", f);
		fprintf(f, "  \"pipeline\": {\n    \"stages\": %d,\n",
			pl->stages);
		fprintf(f, "    \"activation_checkpoint_interval\": %d,\n",
			full ? 1 : 0);
		fprintf(f, "    \"topology\": {\"num_pp\": %d, \"num_mp\": %d, "
			"\"num_dp\": %d},\n", pl->stages, pl->tensor_parallel,
			pl->data_parallel);
		fputs("    \"parts\": [", f);
		for (int k = 0; k < s->n_stages; k++)
			fprintf(f, "%d, ", p->best.stages[k].first_layer);
		fprintf(f, "%d]\n  }", p->n_layers);
	}
	if (moe)
		deepspeed_moe(f, c);
	fputs("\n}\n", f);
	return write_status(f);
}
