/*
 * input.h - the configuration as loaded (model, cluster, pipeline), the
 * loader, the whole-configuration checks and the transformer shorthand.
 * Part of the internal interface; src/ppcc.h includes every such header.
 */
#ifndef PPCC_INPUT_INPUT_H
#define PPCC_INPUT_INPUT_H

#include "util/util.h"

/* One layer, after `repeat` and `transformer:` are expanded.  Costs are per
 * microbatch; bytes are for the whole layer (before tensor parallelism). */
typedef struct ppcc_layer {
	const char *name;
	ppcc_loc loc;           /* the layer's mapping in the file */
	double fwd_flops;       /* fwd_ms is converted at the reference device */
	double bwd_flops;
	/* The part of bwd_flops that is the weight gradient (W, which a
	 * zero-bubble schedule runs apart); the rest is the input gradient
	 * (I), with any recomputation.  From bwd_weight_flops/_ms, the
	 * transformer's weight matrices, else half of bwd_flops. */
	double bwd_weight_flops;
	double params;
	double activation_bytes; /* output sent to the next layer */
	double stash_bytes;      /* kept for the backward pass */
	/* What a split backward holds from I until W: the inputs of the
	 * layer's weight products and their output gradients (the
	 * zero-bubble paper's M_W); stash_weight_bytes, the transformer's,
	 * else all of stash_bytes.  May exceed stash_bytes (recomputation). */
	double stash_weight_bytes;
	/* weights + gradients + optimizer state; 0: from pipeline.zero and
	 * grad_bytes (see ppcc_memory_zero_bytes_per_param) */
	double bytes_per_param;
	/* The cost model of iteration.c (all 0 for a layer given by hand):
	 * the part of bwd_flops that recomputes the forward; the part of
	 * stash_bytes each of the t tensor-parallel devices keeps whole
	 * (without sequence parallelism); the part of stash_bytes that is
	 * logits; the tensor-parallel collectives of one microbatch, counted
	 * as all-reduces of tp_message_bytes each, in the forward and in the
	 * backward (which includes a recomputed forward's). */
	double recompute_flops;
	double stash_replicated_bytes;
	double logits_bytes;
	double tp_message_bytes;
	double tp_fwd_allreduces;
	double tp_bwd_allreduces;
	/* ring attention (context parallelism): K and V bytes of the whole
	 * sequence that each context-parallel rank passes on, forward, and
	 * the forward FLOPs of the attention's scores and values, which
	 * each step's exchange runs beside (cost/compute.c) */
	double cp_kv_bytes;
	double attn_flops;
	/* the part of bwd_flops that recomputes attn_flops (full
	 * recomputation, or Megatron-LM's core_attn): its forward kernel
	 * again before the backward one */
	double attn_recompute_flops;
	/* the keys a query attends to: the sequence, or its window */
	double attn_keys;
	/* A mixture-of-experts layer: the routed experts' parameters (part
	 * of params, which expert parallelism shards instead of t), their
	 * forward FLOPs (part of fwd_flops, the busiest expert rank's
	 * imbalance scales them), and the bytes of tokens one dispatch
	 * all-to-all moves in the forward (the combine moves as many, and
	 * the backward both again); 0 for a dense layer */
	double expert_params;
	double expert_fwd_flops;
	double a2a_bytes;
	/* The part of params that every tensor-parallel device keeps whole:
	 * multi-head latent attention's down projections and their norms,
	 * which Megatron-LM duplicates on each device (doc/design/
	 * transformer.md); 0 for every other layer (cost/memory.c) */
	double tp_replicated_params;
	/* bytes the memory-bound kernels (norms, residual adds, activation
	 * functions, softmax, dropout) read and write, forward and backward
	 * (with recomputation), and the parts of them kept whole on each
	 * tensor-parallel device without sequence parallelism */
	double kernel_fwd_bytes, kernel_bwd_bytes;
	double kernel_fwd_replicated_bytes, kernel_bwd_replicated_bytes;
	/* Under precision fp8, the parts of fwd_flops, bwd_flops and
	 * recompute_flops that run in FP8: the blocks' weight matrix
	 * multiplies but the router's (W's FP8 part is fp8_fwd_flops, each
	 * product once); 0 in bf16 (cost/compute.c prices them at the FP8
	 * peak, doc/design/precision.md) */
	double fp8_fwd_flops, fp8_bwd_flops, fp8_recompute_flops;
	/* and the parameters of those products (the routed experts' among
	 * them, expert_params), of which Transformer Engine caches an FP8
	 * copy and its transpose (cost/memory.c) */
	double fp8_params;
	/* the part of params that copies the first layer's: a tied output
	 * layer, multi-token prediction's embedding (the head's).  A rank
	 * that also holds the first layer keeps them once, as Megatron-LM
	 * builds one embedding for a stage that is both first and last
	 * (gpt_model.py:173-174) and DeepSeek-V3 shares them under DualPipe
	 * (arXiv:2412.19437, 3.2.1) */
	double shared_params;
	/* the forward FLOPs of the matrix multiplies that feed and follow
	 * the tensor-parallel collectives (attention's projections, a
	 * dense FFN's): what pipeline.overlap.tp_comm hides them behind */
	double tp_gemm_flops;
} ppcc_layer;

typedef struct ppcc_model {
	const char *name;
	ppcc_loc loc;
	int n_layers;
	ppcc_layer *layers;
	/* 1 when the first and last layers are the embedding and the head
	 * (the transformer shorthand): Megatron-LM's default split divides
	 * the blocks evenly and adds these to the first and last stages. */
	int edge_layers;
	/* Sequences per microbatch and tokens per sequence: 1 and 0 for a
	 * model given as layers (tokens are then not counted). */
	int micro_batch_size;
	int seq_len;
	/* The transformer's shape as read, or NULL for layers: the checks
	 * that tensor parallelism divides heads, kv heads and the FFN. */
	const struct ppcc_transformer *transformer;
	ppcc_loc transformer_loc;
} ppcc_model;

/* A run of identical devices.  Devices are numbered in the order of the
 * groups; pipeline rank r uses devices [r*t, r*t + t) for t-way tensor
 * parallelism. */
typedef struct ppcc_device_group {
	const char *name;
	ppcc_loc loc;
	int count;
	double tflops;       /* peak, dense 16-bit */
	double efficiency;   /* fraction of peak reached, (0, 1] */
	double memory_bytes; /* per device */
	double memory_bandwidth; /* bytes per second, for the optimizer step */
	/* The catalogue's row it names (cost/devices.h), or NULL; and 1 when
	 * its efficiency is the file's, not the row's. */
	const struct ppcc_device_preset *preset;
	int efficiency_given;
	/* the dense FP8 peak over the dense 16-bit one (tflops_fp8 / tflops,
	 * or the preset's); 0: no FP8 tensor cores */
	double fp8_speedup;
	/* how many times as fast as the 16-bit ones its FP8 products run:
	 * the preset's fitted fp8_gain, else fp8_speedup; fp8_fitted says
	 * which */
	double fp8_gain;
	int fp8_fitted;
} ppcc_device_group;

typedef struct ppcc_link {
	double bandwidth; /* bytes per second */
	double latency;   /* seconds */
} ppcc_link;

typedef struct ppcc_cluster {
	ppcc_loc loc;
	int devices;          /* sum of the groups' counts */
	int devices_per_node;
	int host_devices;     /* devices of one host, which a trainer's
			       * launcher starts: devices_per_node, or the
			       * presets' (4 for an NVL72 node of 72) */
	int n_groups;
	ppcc_device_group *groups;
	ppcc_link intra_node;
	ppcc_link inter_node;
	/* NVLink SHARP in every node (cost/devices.h's PPCC_NVLS_*): the
	 * least of the presets' when every device group names one and the
	 * node is no larger than theirs; PPCC_NVLS_NONE otherwise */
	int nvls;
	double reserved_bytes; /* per device: CUDA context, NCCL, fragments */
	/* every group's memory_bytes set by --memory-limit (0: the file's) */
	double memory_limit_bytes;
	/* kept free beside the reserve when planning: a search's --headroom
	 * (ppcc search, plan --from-search); not reported as reserved */
	double headroom_bytes;
} ppcc_cluster;

/* The trainer a plan is for (pipeline.trainer): what it holds in
 * memory differs (doc/design/memory.md): torchtitan's FSDP keeps fp32
 * sharded parameters and no 16-bit copy, its selective recomputation is
 * per operation, its loss reads the logits in fp32. */
typedef enum ppcc_trainer {
	PPCC_TRAINER_MEGATRON,
	PPCC_TRAINER_TORCHTITAN,
	PPCC_TRAINER_DEEPSPEED,
	PPCC_TRAINER_COUNT
} ppcc_trainer;

/* transformer.attention_kernel: the trainer's choice, FlashAttention-2
 * (Dao 2023), or cuDNN's fused attention (doc/design/attention.md) */
typedef enum ppcc_attn_kernel {
	PPCC_ATTN_AUTO,
	PPCC_ATTN_FA2,
	PPCC_ATTN_CUDNN
} ppcc_attn_kernel;

/* "megatron", "torchtitan", "deepspeed"; NULL past the last. */
const char *ppcc_trainer_name(int trainer);
/* The ppcc_trainer named s, or -1. */
int ppcc_trainer_named(const char *s);

/* pipeline.overlap: what communication hides behind compute
 * (doc/design/overlap.md).  moe_a2a: whether an overlapped F&B pair
 * (dualpipe-v, dualpipe) runs one half's expert all-to-alls while the
 * other half computes: PPCC_OVERLAP_DEFAULT until given
 * (ppcc_overlap_moe_a2a gives the trainer's default).  comm_sm_share: the share of the SMs that
 * communication takes from compute while it runs beside it; 0 until
 * given (PPCC_COMM_SM_SHARE).  The other three keys are accepted at the
 * value ppcc models only. */
enum { PPCC_OVERLAP_DEFAULT, PPCC_OVERLAP_ON, PPCC_OVERLAP_OFF };

typedef struct ppcc_overlap {
	int moe_a2a;
	/* tp_comm: 1 when the tensor-parallel collectives run beside the
	 * matrix multiplies they feed (Megatron-LM's --tp-comm-overlap) */
	int tp_comm;
	double comm_sm_share;
	ppcc_loc loc, moe_a2a_loc, tp_comm_loc;
} ppcc_overlap;

/* DeepSeek-V3's 20 of an H800's 132 SMs for its all-to-alls
 * (DeepSeek-V3 Technical Report, arXiv:2412.19437, section 3.2.2). */
#define PPCC_COMM_SM_SHARE (20.0 / 132.0)

typedef struct ppcc_pipeline {
	ppcc_loc loc;
	int trainer;         /* ppcc_trainer; 0: megatron */
	int kind;            /* ppcc_schedule_kind */
	int stages;          /* p, pipeline ranks */
	int microbatches;    /* m */
	int chunks;          /* v, model chunks per rank (interleaved) */
	int group_size;      /* G, interleaved microbatch group; 0 = p */
	int tensor_parallel; /* t, devices per pipeline rank */
	int data_parallel;   /* d, replicas of the pipeline */
	int context_parallel; /* cp, ranks a sequence is split across */
	/* ep, the ranks a mixture-of-experts layer's routed experts are
	 * spread over, and etp, the devices each expert's matrices are
	 * split over (0: t): the t x cp x d devices of a stage fold into
	 * etp x ep x edp (Megatron-Core's MoE parallel folding) */
	int expert_parallel;
	int expert_tensor_parallel;
	/* the data-parallel ranks ZeRO shards the states over, d /
	 * data_parallel_shard replicas of each shard (HSDP, Megatron-LM's
	 * distributed optimizer instances); 0: all d */
	int data_parallel_shard;
	/* Adam's moments in bf16 (Megatron-LM's precision-aware optimizer,
	 * --exp-avg-dtype and --exp-avg-sq-dtype bf16); 0: fp32 */
	int moments_bf16;
	ppcc_overlap overlap;
	int global_batch_size; /* B = m * b * d sequences; 0: not given */
	int zero;            /* ZeRO stage 0-3 (1: distributed optimizer) */
	double grad_bytes;   /* G, bytes of a gradient (4: fp32 accumulation) */
	/* bytes of a gradient bucket / 10^6; 0: Megatron-LM's default
	 * (ppcc_dp_bucket_bytes) */
	double dp_bucket_mb;
	ppcc_loc dp_bucket_mb_loc;
	long max_simulations; /* budget of the split search; 0: the default */
	/* threads the split search may use (ppcc_step_problem.threads);
	 * 0 or 1: the caller's alone */
	int threads;
	/* 1: the caller replays no action's times from the plan (its
	 * output does not print them: ppcc_emit_replays_times), so the plan
	 * of a schedule without data-parallel collectives keeps no send
	 * times in best.estimate (send_ms NULL, and ppcc_rank_times_begin
	 * refuses it); 0: they are kept */
	int no_times;
	/* An explicit partition: layers per stage (n_partition of them, one
	 * per virtual stage), or NULL.  partition_locs: each entry's place,
	 * NULL when it came from the command line. */
	int n_partition;
	const int *partition;
	const ppcc_loc *partition_locs;
	ppcc_loc partition_loc;
	/* where each setting came from, for later diagnostics */
	ppcc_loc kind_loc, stages_loc, microbatches_loc, chunks_loc,
		group_size_loc, tensor_parallel_loc, data_parallel_loc,
		context_parallel_loc, global_batch_size_loc, zero_loc,
		trainer_loc, expert_parallel_loc, expert_tensor_parallel_loc,
		data_parallel_shard_loc, moments_loc;
} ppcc_pipeline;

typedef struct ppcc_config {
	const char *path; /* the model file as named, "<stdin>" for - */
	const char *cluster_path; /* the cluster file so named; NULL: none */
	/* FNV-1a 64 of the bytes read from each (ppcc search -f json
	 * records them, ppcc plan --from-search compares them) */
	uint64_t fingerprint, cluster_fingerprint;
	ppcc_model model;
	ppcc_cluster cluster;
	ppcc_pipeline pipeline;
	ppcc_probe *probe; /* tests' (util.h); NULL: none */
} ppcc_config;

/* Reads path ("-" for stdin) and, when cluster_path is not NULL, the
 * cluster from that file instead (format: man/ppcc.5).  Reports every
 * error of the input in line order (the first 100, then a count), then
 * returns PPCC_EINPUT, also for a file that cannot be read; PPCC_ENOMEM
 * when an allocation fails.  On success the pipeline's unset settings
 * hold their defaults (ppcc_config_fill_defaults).  Strings point into
 * the arena. */
int ppcc_config_load(ppcc_config *out, ppcc_arena *a, const char *path,
		     const char *cluster_path, ppcc_diag *d);

/* The name of an input ppcc's options build (ppcc search --model). */
#define PPCC_COMMAND_LINE "<command line>"

/* As ppcc_config_load, from the len bytes of text (YAML, as a file holds
 * it, with its cluster) under the name name ("<command line>"), which
 * every diagnostic and out->path carry. */
int ppcc_config_load_text(ppcc_config *out, ppcc_arena *a, const char *name,
			  const char *text, size_t len, ppcc_diag *d);

/* The word of known (NULL-terminated) nearest to s as the loader judges
 * a typo (a few edits, fewer for a short word), or NULL. */
const char *ppcc_input_suggest(const char *s, const char *const *known);

/* The checks that need the whole configuration (after command-line
 * overrides): stages vs layers and devices, interleaving constraints. */
int ppcc_config_check(const ppcc_config *c, ppcc_diag *d);
/* PPCC_EINPUT, with an error at the command line, when --memory-limit's
 * limit (bytes) leaves nothing beside cl's reserve. */
int ppcc_config_check_memory_limit(const ppcc_cluster *cl, double limit,
				   ppcc_diag *d);

/* The part of ppcc_config_check that no layout changes, said before a
 * search: recompute_modules under a trainer other than Megatron-LM.  0,
 * or PPCC_EINPUT with the error. */
int ppcc_config_check_recompute_modules(const ppcc_config *c, ppcc_diag *d);

/* Sets each pipeline setting that nobody gave (its *_loc has no file) from
 * those that were given: tensor_parallel 1, context_parallel 1, zero 0,
 * schedule 1f1b, chunks the kind's default (1 on one stage for a kind
 * that also runs one chunk: combined-1f1b); stages devices /
 * (t * cp * d) when data_parallel is given, else devices / (t * cp),
 * capped at layers / chunks and lowered until t * cp * stages divides the
 * devices and, with expert_parallel given, ep x etp divides the devices
 * of a stage (at least 1); data_parallel devices / (t * p * cp);
 * microbatches global_batch_size / (micro_batch_size * d) when that is
 * given, else 4 x stages; group_size 0 (= stages).  The loader calls it;
 * call it again after command-line overrides. */
void ppcc_config_fill_defaults(ppcc_config *c);

/* in with every device replaced by preset p (its peak, efficiency,
 * memory and bandwidth) into out, the groups in the arena: 0, or
 * PPCC_EINPUT when not every group names the same preset (nothing to
 * replace), PPCC_ENOMEM.  The node size and links become p's when they
 * are the old preset's own (as the loader gives them to a cluster that
 * names no others), else they stay.  What "a larger device" is when
 * nothing fits. */
int ppcc_cluster_swap_device(ppcc_cluster *out, ppcc_arena *a,
			     const ppcc_cluster *in,
			     const struct ppcc_device_preset *p);

/* The expert tensor parallelism planned: the file's, else t. */
int ppcc_pipeline_etp(const ppcc_pipeline *p);

/* The ranks ZeRO shards a stage's states over: data_parallel_shard x cp
 * under HSDP, else d x cp (ZeRO 0 shards nothing, and its collectives
 * span them all); and the replicas of each shard, d /
 * data_parallel_shard under HSDP, else 1. */
int ppcc_pipeline_zero_ranks(const ppcc_pipeline *p);
/* The bytes of each of Adam's two moments: 2 in bf16, else 4. */
double ppcc_pipeline_moment_bytes(const ppcc_pipeline *p);
int ppcc_pipeline_zero_replicas(const ppcc_pipeline *p);

/* Whether p's overlapped F&B pairs hide their expert all-to-alls: as
 * given, else the trainer's default (1; torchtitan 0: it registers no
 * overlapped function for PyTorch's OVERLAP_F_B). */
int ppcc_overlap_moe_a2a(const ppcc_pipeline *p);

/* The share of the SMs p's overlapped communication takes: as given,
 * else PPCC_COMM_SM_SHARE. */
double ppcc_overlap_comm_sm_share(const ppcc_pipeline *p);

/* Limits on counts read from a file: layers after repeat (32 times the
 * deepest model ppcc knows; a search of 16,382 transformer layers took
 * 49 s, of 2^20 4.2 GB), and devices, stages, microbatches, chunks and
 * tensor_parallel. */
#define PPCC_MAX_LAYERS (1 << 12)
#define PPCC_MAX_COUNT (1 << 20)

/* The largest schedule JSON ppcc_read_json reads (64 GiB: about 600
 * million actions as ppcc writes them). */
#define PPCC_JSON_MAX_BYTES ((uint64_t)1 << 36)

/* The `transformer:` shorthand as read (transformer.c); 0 in kv_heads,
 * ffn_hidden or bytes_per_param means the default (heads, 4 x hidden,
 * 16).  norm and position default to swiglu's (RMSNorm and RoPE with
 * swiglu, LayerNorm and learned positions without); rope_theta 0 means
 * 10000; tie_embeddings (0 by default) changes no count: the head's
 * V x h weights are counted on its stage either way (transformer.c). */
typedef enum ppcc_recompute {
	PPCC_RECOMPUTE_NONE,
	PPCC_RECOMPUTE_SELECTIVE,
	PPCC_RECOMPUTE_FULL
} ppcc_recompute;

/* The modules selective recomputation recomputes, as Megatron-LM names
 * them (transformer_config.py's recompute_modules): the attention's
 * scores and values; the two norms' outputs where a norm is its own
 * module (a latent attention's input norm, a mixture of experts' pre-FFN
 * norm); a latent attention's up projections and RoPE (Q, K, V); the
 * routed experts' SwiGLU output.  Derivation: doc/design/transformer.md. */
enum {
	PPCC_RC_CORE_ATTN = 1u << 0,
	PPCC_RC_LAYERNORM = 1u << 1,
	PPCC_RC_MLA_UP_PROJ = 1u << 2,
	PPCC_RC_MOE_ACT = 1u << 3
};

typedef enum ppcc_norm { PPCC_NORM_RMSNORM, PPCC_NORM_LAYERNORM } ppcc_norm;
typedef enum ppcc_position {
	PPCC_POSITION_ROPE,
	PPCC_POSITION_LEARNED
} ppcc_position;

/* `transformer.moe:` (transformer.c); experts 0: a dense model.  Layer i
 * (from 0) is a mixture of experts when i >= dense_layers and
 * (i - dense_layers) % every == 0; capacity_factor 0 is dropless, else
 * each expert computes its capacity's tokens, padded; imbalance is the
 * busiest expert rank's tokens over the mean (PPCC_MOE_IMBALANCE when
 * not given). */
typedef struct ppcc_moe {
	int experts, top_k, ffn_hidden, shared_experts, dense_layers, every;
	double capacity_factor, imbalance;
	/* a token reaches experts on at most node_limit nodes (0: any),
	 * and its dispatch moves FP8 (1: DeepSeek-V3's recipe) */
	int node_limit, dispatch_fp8;
	/* group-limited routing: the experts in `groups` equal groups in
	 * order, a token's top_k chosen from group_topk of them (0: none;
	 * Megatron-LM's moe_router_num_groups and moe_router_group_topk) */
	int groups, group_topk;
	ppcc_loc loc, experts_loc, ffn_hidden_loc;
} ppcc_moe;

#define PPCC_MOE_IMBALANCE 1.1

/* `transformer.attention: {kind: mla, ...}`, multi-head latent attention
 * (DeepSeek-V2/V3), when kind is set: Q is projected down to q_lora_rank
 * (0: no query compression, Q straight from h), normed and up to heads x
 * (qk_nope + qk_rope); K and V share a latent of kv_lora_rank, normed and
 * up to heads x (qk_nope + v_head_dim), beside a qk_rope-wide key all
 * heads share; the output projection reads heads x v_head_dim. */
typedef struct ppcc_mla {
	int kind; /* 1: mla; 0: multi-head or grouped-query attention */
	int q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
		v_head_dim;
	ppcc_loc loc;
} ppcc_mla;

typedef struct ppcc_transformer {
	int layers, hidden, heads, kv_heads, ffn_hidden, vocab, seq_len;
	int head_dim; /* 0: hidden / heads */
	ppcc_moe moe;
	ppcc_mla mla;
	/* multi-token prediction modules after the last block (DeepSeek-V3:
	 * 1), carried by the "head" layer (transformer.c) */
	int mtp_layers;
	/* sliding-window attention: 0 none, else the keys a query sees; and
	 * 0 (every layer windowed) or N >= 2: layer i (from 0) attends in
	 * full when (i + 1) % N == 0, the others windowed (GPT-OSS: 2) */
	int sliding_window, sliding_window_pattern;
	/* with swiglu, GPT-OSS's biases: on Q, K, V and O, on the router
	 * and on the experts' (or the FFN's) matrices; and attention sinks,
	 * a learned logit a head */
	int biases, attention_sinks;
	/* an RMSNorm over each head's query and key before RoPE (Qwen3's
	 * q_norm and k_norm; Megatron-LM's --qk-layernorm) */
	int qk_norm;
	int micro_batch_size;
	int recompute; /* ppcc_recompute */
	/* what selective recomputation recomputes, PPCC_RC_* bits
	 * (Megatron-LM's --recompute-modules); 0: core_attn alone */
	unsigned recompute_modules;
	ppcc_loc recompute_modules_loc; /* file 0: not given */
	int swiglu;    /* gated FFN, RMSNorm, no biases, no learned positions,
			  no dropout */
	int sequence_parallel; /* 1 (the default): norms and dropout split too */
	int flash_attention;   /* 1 (the default): no a*s^2 scores kept */
	/* the flash kernel that runs attention (ppcc_attn_kernel):
	 * PPCC_ATTN_AUTO, the trainer's own choice on the device
	 * (ppcc_cost_attention_kernel); where it was given, file 0 if not */
	int attention_kernel;
	ppcc_loc attention_kernel_loc;
	/* precision: 1 for fp8, the blocks' weight matrix multiplies in
	 * FP8 as Transformer Engine runs them (doc/design/precision.md);
	 * 0 for bf16 */
	int fp8;
	ppcc_loc precision_loc;
	int norm;              /* ppcc_norm */
	int position;          /* ppcc_position */
	double rope_theta;     /* RoPE's base; 0: 10000 */
	int tie_embeddings;    /* the head reuses the embedding's weights */
	double bytes_per_param; /* 0: from pipeline.zero */
	int trainer;            /* pipeline.trainer's (ppcc_trainer) */
	/* where heads, kv_heads and ffn_hidden were read (checks against t) */
	ppcc_loc heads_loc, kv_heads_loc, ffn_hidden_loc;
	ppcc_loc rope_theta_loc; /* for the trainers' checks */
} ppcc_transformer;

/* Bytes kept for the backward pass by one block per microbatch, before
 * any parallelism, and the part of it that stays whole on each
 * tensor-parallel device without sequence parallelism (derivation in
 * transformer.c). */
void ppcc_transformer_block_stash(double *out_total, double *out_replicated,
				  const ppcc_transformer *t);

/* Megatron-LM's names of the PPCC_RC_* bits, bit i the i-th; NULL-ended. */
extern const char *const ppcc_recompute_module_names[];

/* The PPCC_RC_* bits of modules as Megatron-LM names them, joined by
 * sep into buf (truncated to size); returns buf. */
const char *ppcc_recompute_modules_text(char *buf, size_t size,
					unsigned modules, const char *sep);

/* 1 when block i (from 0) of t is a mixture of experts. */
int ppcc_transformer_is_moe(const ppcc_transformer *t, int i);

/* The width of one head's query and key. */
int ppcc_transformer_head_width(const ppcc_transformer *t);

/* What of t FlashAttention-2 cannot run, in words ("attention sinks"),
 * or NULL when it runs t's attention. */
const char *ppcc_transformer_fa2_refuses(const ppcc_transformer *t);

/* 1 when block i (from 0) of t attends within the sliding window. */
int ppcc_transformer_is_windowed(const ppcc_transformer *t, int i);

/* The multi-token prediction modules' own parameters (their norms,
 * projections and blocks; the embedding and output layer are the
 * model's): none of ppcc_transformer_params, as DeepSeek-V3's 671B
 * leaves its MTP module out. */
double ppcc_transformer_mtp_params(const ppcc_transformer *t);

/* The parameters one token uses: the model's less the routed experts
 * it is not sent to (ppcc_transformer_params for a dense model). */
double ppcc_transformer_active_params(const ppcc_transformer *t);

/* The model's parameters: the embedding's, the blocks' and the head's,
 * less the head's V x h when the embeddings are tied: the count a paper
 * publishes.  The layers' params count the tied weights on both ends as
 * a pipeline keeps them, and the head's carry the multi-token prediction
 * modules and the last stage's copy of the embedding they read. */
double ppcc_transformer_params(const ppcc_transformer *t);

/* A token's forward FLOPs in the model's blocks by part, as the blocks'
 * fwd_flops count them over a microbatch's b x s tokens: the attention's
 * weight products (Q, K, V, O, multi-head latent attention's latents),
 * its scores and values (Q K^T and P V, causal under flash attention,
 * within any sliding window), and the FFN (in a mixture of experts the
 * router, the routed experts a token reaches, cf x top_k, and the shared
 * experts).  The embedding, the output layer and any multi-token
 * prediction modules are none of them.  And the parameters of the
 * routed experts (all of them) and of the shared experts. */
typedef struct ppcc_transformer_split {
	double projections, scores, mlp;
	double routed_params, shared_params;
} ppcc_transformer_split;
void ppcc_transformer_split_of(ppcc_transformer_split *out,
			       const ppcc_transformer *t);

/* Writes "embed", t->layers x "block" (or "moe_block"), "head" with any
 * multi-token prediction modules (t->layers + 2 layers, in the arena)
 * located at loc.  Returns PPCC_EINTERNAL for a shape the
 * loader should have rejected. */
int ppcc_transformer_expand(ppcc_layer **out, int *out_n, ppcc_arena *a,
			    const ppcc_transformer *t, ppcc_loc loc);

#endif
