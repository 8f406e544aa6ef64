/*
 * cost.h - the cost model: where a rank's devices are (topology.c), what
 * a collective or a p2p transfer costs (comm.c), what a layer and a
 * stage cost on a rank (compute.c), the bytes a layer, a device and the
 * optimizer hold or move (memory.c).
 * Part of the internal interface; src/ppcc.h includes every such header.
 */
#ifndef PPCC_COST_COST_H
#define PPCC_COST_COST_H

#include "sim/sim.h"

/* Where pipeline rank `rank` of data-parallel replica 0 runs, in
 * config_check.c's layout: on the t x cp devices from rank x t x cp x d;
 * the cluster's device groups follow one another in the order given,
 * and a node holds devices_per_node consecutive devices. */
typedef struct ppcc_cost_place {
	int64_t block;        /* t x cp x d: devices of a rank, all replicas */
	int64_t first_device; /* rank x block */
	int64_t node;         /* first_device / devices_per_node */
	int group;            /* its device group's index (the last one's past
			       * the cluster's devices) */
	const ppcc_device_group *device_group;
} ppcc_cost_place;

void ppcc_topo_place(ppcc_cost_place *out, const ppcc_config *cfg, int rank);

/* The link PPCC_TOPO_INTRA or PPCC_TOPO_INTER of a cluster. */
enum { PPCC_TOPO_INTRA = 0, PPCC_TOPO_INTER = 1 };
const ppcc_link *ppcc_topo_link(const ppcc_cluster *c, int kind);

/* The link a group of `span` consecutive devices from a rank's first
 * uses: intra-node when span <= devices_per_node (ranks start on a node's
 * boundary), inter-node otherwise. */
const ppcc_link *ppcc_topo_span_link(const ppcc_cluster *c, int64_t span);

/* The nodes `span` such devices cover: 1 when span <= devices_per_node,
 * else span / devices_per_node rounded up. */
int64_t ppcc_topo_span_nodes(const ppcc_cluster *c, int64_t span);

/* The link between pipeline ranks a and b: intra-node when their first
 * devices share a node. */
int ppcc_topo_p2p_kind(const ppcc_cost_place *a, const ppcc_cost_place *b);

/* latency + bytes / bandwidth */
double ppcc_comm_link_seconds(const ppcc_link *l, double bytes);

/* A p2p boundary of `bytes` between two ranks of `shard` (t x cp)
 * devices: each device sends its share over its own link. */
double ppcc_comm_p2p_seconds(const ppcc_link *l, int shard, double bytes);

/* The collectives, as NCCL's tuner costs them (comm.c; the figures and
 * their sources: doc/design/collectives.md).  Reduce-scatter costs as
 * all-gather in NCCL's model. */
enum { PPCC_COMM_ALLREDUCE = 0, PPCC_COMM_ALLGATHER = 1,
       PPCC_COMM_REDUCE_SCATTER = PPCC_COMM_ALLGATHER };
enum { PPCC_COMM_NONE = -1, PPCC_COMM_TREE, PPCC_COMM_RING, PPCC_COMM_NVLS,
       PPCC_COMM_NVLS_TREE, PPCC_COMM_PAT };
typedef struct ppcc_comm_cost {
	int algo;         /* PPCC_COMM_TREE ... */
	double latency;   /* seconds */
	double bandwidth; /* algorithm bandwidth: bytes / (time - latency) */
} ppcc_comm_cost;

/* "ring", "tree", "nvls", "nvls-tree", "pat"; "none". */
const char *ppcc_comm_algo_name(int algo);

/* The algorithm NCCL picks for collective `coll` of `bytes` (the whole
 * buffer: an all-gather's output) over n ranks spread evenly over `span`
 * consecutive devices from a node's boundary (their nodes: topology.c's,
 * at most n): the least latency + bytes / bandwidth, ties to NCCL's
 * first.  0 and out->algo PPCC_COMM_NONE when n <= 1. */
int ppcc_comm_choose(ppcc_comm_cost *out, const ppcc_cluster *c, int coll,
		     int n, int64_t span, double bytes);

/* One algorithm's figures: 1, or 0 where NCCL would not run it there. */
int ppcc_comm_algo_cost(ppcc_comm_cost *out, const ppcc_cluster *c,
			int coll, int algo, int n, int64_t span, double bytes);

/* latency + bytes / bandwidth; 0 for PPCC_COMM_NONE. */
double ppcc_comm_seconds(const ppcc_comm_cost *k, double bytes);

/* The chosen algorithm's seconds; 0 when n <= 1.  An all-gather's also
 * stands for a reduce-scatter. */
double ppcc_allreduce_seconds(const ppcc_cluster *c, int n, int64_t span,
			      double bytes);
double ppcc_allgather_seconds(const ppcc_cluster *c, int n, int64_t span,
			      double bytes);

/* One tensor-parallel collective of a layer over t devices of cp
 * context-parallel ranks, message_bytes / cp over the t devices: an
 * all-reduce, or under sequence parallelism an all-gather and a
 * reduce-scatter; 0 when t == 1. */
double ppcc_comm_tp_seconds(const ppcc_cluster *c, int t, int cp,
			    double message_bytes, int sequence_parallel);

/* One step of ring attention's K and V exchange: kv_bytes / (cp x t)
 * over the link of the rank's t x cp devices. */
double ppcc_comm_cp_step_seconds(const ppcc_cluster *c, int t, int cp,
				 double kv_bytes);

/* One all-to-all of a mixture-of-experts layer: each of the ep ranks of
 * an expert-parallel group (etp devices apart, spanning ep x etp), n of
 * them in a node and N nodes, sends `copies` copies of its tokens'
 * token_bytes, each to a rank of the group.  Without a node limit
 * (node_limit 0) a copy goes to the n - 1 other members of its node
 * over the intra-node link, (n - 1)/ep of them, and to the others over
 * the inter-node link, (ep - n)/ep; with one (DeepSeek's routing to at
 * most M nodes, sent once a node and fanned out inside it), a token
 * crosses the network to min(copies, M, N) x (N - 1)/N nodes and each
 * copy crosses the node's links (n - 1)/n of the time.  Both links run
 * at once; the slower sets the time; 0 when ep == 1. */
double ppcc_comm_a2a_seconds(const ppcc_cluster *c, int ep, int etp,
			     double token_bytes, double copies,
			     int node_limit);

/* The data-parallel collectives of a stage's buckets over the n = d x cp
 * ranks that share its weights, spread over the t x cp x d devices: each
 * REDUCE_GRAD an all-reduce (ZeRO 0) or a reduce-scatter, each
 * ALL_GATHER_PARAM or UNSHARD_PARAM (ZeRO >= 1) an all-gather, each with
 * the algorithm NCCL picks at the plan's bucket size
 * (ppcc_dp_bucket_bytes), whose latency and bandwidth then price every
 * bucket, the last and smaller one too.  Under HSDP (ZeRO >= 1 with
 * r = ppcc_pipeline_zero_replicas > 1) the reduce-scatter and gather
 * run over the shard's ppcc_pipeline_zero_ranks ns consecutive ranks,
 * and each REDUCE_GRAD adds an all-reduce of its 1/ns over the r
 * replicas, priced at the bucket's 1/ns.  Sets c's dp_reduce_ms,
 * dp_reduce_ms_per_byte, dp_gather_ms and dp_gather_ms_per_byte (left
 * alone when n == 1, and the gather's under ZeRO 0). */
void ppcc_comm_dp_rates(ppcc_stage_cost *c, const ppcc_config *cfg);

/* Per layer, seconds: the tensor-parallel and ring-attention
 * communication inside its forward and its backward (plan/tables.c fills them
 * from ppcc_comm_tp_seconds and ppcc_comm_cp_step_seconds). */
typedef struct ppcc_cost_layer_comm {
	double *tp_f, *tp_b, *cp_f, *cp_b;
	/* a mixture of experts' token all-to-alls (NULL: the model has no
	 * expert parallelism), ppcc_cost_expert_comm's */
	double *ep_f, *ep_b;
} ppcc_cost_layer_comm;

/* A mixture-of-experts layer l's token dispatch and combine in its
 * forward (*out_f) and backward (*out_b), seconds: per device its share
 * of l's a2a_bytes (t x cp devices split a microbatch's tokens), the
 * busiest rank's imbalance times that, two all-to-alls over ep each way
 * (four in a backward that recomputes the forward), and under etp > 1
 * an all-gather (dispatch) and a reduce-scatter (combine) of the tokens
 * over the etp devices of each expert. */
void ppcc_cost_expert_comm(double *out_f, double *out_b,
			   const ppcc_config *cfg, const ppcc_layer *l);

/* The nodes a token's routed copies reach at most under cfg's layout:
 * moe.node_limit, and under group-limited routing group_topk times the
 * most nodes one group's experts span (the experts in order over the ep
 * ranks, etp devices apart, from a node's boundary) where that is fewer
 * than the nodes the ep ranks span, the lesser of the two; 0 when
 * neither limits them.  A limit prices the dispatch as DeepEP sends it,
 * once a node and fanned out inside (ppcc_comm_a2a_seconds). */
int ppcc_cost_expert_node_limit(const ppcc_config *cfg);

/* The busiest expert rank's extra routed FLOPs in layer l's forward
 * (returned) and backward (*out_bwd): imbalance - 1 times the mean's,
 * when ep > 1 spreads the experts; the backward twice the forward's,
 * three times with full recomputation. */
double ppcc_cost_expert_extra_flops(double *out_bwd, const ppcc_config *cfg,
				    const ppcc_layer *l);

/* The flash kernel cfg's attention runs on devices of dg
 * (ppcc_attn_kernel): the file's, else the trainer's own choice:
 * torchtitan's cuDNN first (v0.2.2 models/attention.py:175-190),
 * DeepSpeed's models FlashAttention-2, Transformer Engine's
 * FlashAttention-2 on Ampere and cuDNN from Hopper on
 * (doc/design/attention.md), cuDNN where FlashAttention-2 cannot run the
 * attention; PPCC_ATTN_AUTO without flash attention. */
int ppcc_cost_attention_kernel(const ppcc_config *cfg,
			       const ppcc_device_group *dg);

/* The kernel every device group of cfg runs attention on; PPCC_ATTN_AUTO
 * where they differ or without flash attention. */
int ppcc_cost_attention_kernel_all(const ppcc_config *cfg);

/* That kernel's measured forward and backward FLOP/s a device of dg
 * for sequences of len keys (the catalogue's, between its lengths
 * linear in log2 of the length, beyond them the nearest's; the backward
 * counted as 2.5 forwards); 0, both 0, when not measured there. */
int ppcc_cost_attention_rates(double *out_f, double *out_b,
			      const ppcc_config *cfg,
			      const ppcc_device_group *dg, double len);

/* The keys one call of layer l's attention kernel takes: its keys a
 * query (the sequence, or the window), at most a ring step's (the
 * sequence over the context-parallel ranks). */
double ppcc_cost_attention_len(const ppcc_config *cfg, const ppcc_layer *l);

/* A rank's compute speed: shard (t x cp) x tflops x 1e12 x efficiency
 * FLOP/s of its device group. */
double ppcc_cost_speed(const ppcc_device_group *dg, int shard);

/* Layer `layer`'s forward and backward, in seconds, on a rank of group
 * dg: its FLOPs at the rank's speed (its attention's at its kernel's
 * measured rate, ppcc_cost_attention_rates), its collectives (lc) and its
 * memory-bound kernels (kernel_*_bytes over t x cp devices, the
 * replicated part over cp, at the device's memory bandwidth). */
void ppcc_cost_layer_seconds(double *out_fwd, double *out_bwd,
			     const ppcc_config *cfg,
			     const ppcc_cost_layer_comm *lc, int layer,
			     const ppcc_device_group *dg);

/* Seconds of flops at speed (FLOP/s, 16-bit) on a device of dg, of which
 * fp8_flops run at dg's FP8 peak (speed x fp8_speedup); flops / speed
 * exactly when there are none or the device has no FP8. */
double ppcc_cost_flops_seconds(const ppcc_device_group *dg, double speed,
			       double flops, double fp8_flops);

/* What pipeline.overlap.tp_comm hides of layer `layer`'s tensor-parallel
 * collectives (lc) on a rank of dg, forward and backward: the layer's
 * products they feed (tp_gemm_flops; the backward's input and weight
 * gradients, and a fully recomputed forward) run beside them on all but
 * comm_sm_share of the SMs, so they last max(C + s A, A) for the
 * products' C and the collectives' A, which hides min((1 - s) A, C)
 * (doc/design/overlap.md); 0 without the overlap. */
void ppcc_cost_tp_hidden(double *out_fwd, double *out_bwd,
			 const ppcc_config *cfg,
			 const ppcc_cost_layer_comm *lc, int layer,
			 const ppcc_device_group *dg);

/* What ring attention's exchange hides of layer `layer`'s (lc's cp_f,
 * cp_b) on a rank of dg, forward and backward: each of its cp - 1 steps'
 * K and V transfer T runs beside one step's attention, C = 1/cp of the
 * attention's forward kernel on the rank (its measured rate, or
 * attn_flops at the rank's speed), on all but comm_sm_share s of the
 * SMs, hiding min((1 - s) T, C) a step; the backward likewise, its
 * transfers (cp_b) beside 1/cp of its kernel and any recomputed
 * forward's; 0 with cp 1 (doc/design/overlap.md). */
void ppcc_cost_cp_hidden(double *out_fwd, double *out_bwd,
			 const ppcc_config *cfg,
			 const ppcc_cost_layer_comm *lc, int layer,
			 const ppcc_device_group *dg);

/* The share of a stage's expert all-to-alls an overlapped pair of cfg
 * under schedule kind can hide (ppcc_stage_cost.ep_hidden_share): 1 -
 * the SMs' share communication takes, for a mixture of experts on a
 * kind that runs pairs with pipeline.overlap.moe_a2a on; else 0. */
double ppcc_cost_ep_hidden_share(const ppcc_config *cfg, int kind);

/* Adds to c the parts of layers i..j on a rank of group g that
 * iteration.c reports (collectives but the experts' all-to-alls, which
 * plan/tables.c sums, recomputation, parameters, the
 * static bytes' split, logits, FLOPs) and sets its data-parallel rates
 * (ppcc_comm_dp_rates); shared: the rank also holds the first layer,
 * so layer j's shared_params are not counted again. */
void ppcc_cost_stage_parts(ppcc_stage_cost *c, const ppcc_config *cfg,
			   const ppcc_cost_layer_comm *lc, int i, int j, int g,
			   int shared);

/* The memory model (memory.c). */

/* Static bytes per parameter of ZeRO stage `zero` over d data-parallel
 * ranks with 16-bit weights, `grad_bytes` gradients and A = 4 + 2M
 * bytes of Adam state (the fp32 master, two moments of M =
 * moment_bytes each: 12 in fp32, 8 with bf16 moments): 0: 2 + G + A;
 * 1: 2 + G + A/d; 2: 2 + (G + A)/d; 3: (2 + G + A)/d; under
 * torchtitan's FSDP (ZeRO 3, `trainer`) fp32 shards and Adam's two
 * moments, (4 + G + 2M)/d, plus the 2 of a stage's gathered weights
 * when `stages` > 1.  The three parts are written to out[0..2]
 * (weights, gradients, optimizer state) when out is not NULL. */
double ppcc_memory_zero_bytes_per_param(double *out, int zero,
					double grad_bytes, int d, int trainer,
					int stages, double moment_bytes);

/* What PyTorch's caching allocator reserves over the tensors ppcc
 * counts, as a factor on every memory term: torchtitan's reported
 * memory is the allocator's peak reservation (fitted on torchtitan's
 * published runs, `make fidelity`, doc/design/memory.md); 1 for the
 * other trainers, whose published runs give no such figure. */
#define PPCC_TORCHTITAN_RESERVE_FACTOR 1.16
/* The torchtitan runs that fit checks and its largest error (make
 * fidelity fails when these are not what it computes). */
#define PPCC_TORCHTITAN_MEMORY_RUNS 6
#define PPCC_TORCHTITAN_MEMORY_WORST_PCT 1.0
double ppcc_memory_reserve_factor(int trainer);

/* Transformer Engine's FP8 copy of a weight and its transpose, which
 * Hopper's FP8 products need, kept across microbatches: bytes a
 * parameter beside the 16-bit weight (doc/design/precision.md). */
#define PPCC_FP8_COPY_BYTES 2.0

struct ppcc_memory_experts;
/* Those copies of layer l on one device of t (ex: the experts' share,
 * or NULL to split them over t as the rest). */
double ppcc_memory_fp8_copy_bytes(const ppcc_layer *l, int t,
				  const struct ppcc_memory_experts *ex);

/* One layer's bytes on a pipeline rank of t x cp devices, unrounded:
 * plan/tables.c rounds each to a byte and sums them over a stage. */
typedef struct ppcc_memory_layer {
	double bytes_per_param;    /* the layer's own, else zero_bpp */
	/* params x bytes_per_param x cp; a routed expert's params x
	 * ex's bytes_per_param x share x t x cp */
	double static_bytes;
	double stash_bytes;        /* stash + (t - 1) x replicated stash */
	double stash_weight_bytes; /* what W keeps from I on */
	/* what a microbatch in flight holds at most: the larger of the two
	 * under a split backward, the stash otherwise */
	double hold_bytes;
	double gather_bytes;       /* its 16-bit parameters: 2 x params */
} ppcc_memory_layer;

/* How a stage's t x cp x d devices hold the routed experts, folded into
 * etp x ep x edp: bytes per parameter under ZeRO over the edp ranks that
 * share an expert, and an expert parameter's share on one of a rank's
 * devices, 1 / (ep x etp). */
typedef struct ppcc_memory_experts {
	double bytes_per_param;
	double share;
	int edp;
} ppcc_memory_experts;

void ppcc_memory_experts_of(ppcc_memory_experts *out, const ppcc_pipeline *p,
			    int stages);

/* Layer l's parameters on one device: the dense ones over t, the
 * routed experts' over ep x etp. */
double ppcc_memory_device_params(const ppcc_layer *l, const ppcc_pipeline *p);

/* The terms of layer l; zero_bpp is ppcc_memory_zero_bytes_per_param's
 * for the plan, ex the experts' (NULL: the layer has none), split
 * whether the schedule splits the backward; every byte term is
 * multiplied by factor (ppcc_memory_reserve_factor). */
void ppcc_memory_layer_terms(ppcc_memory_layer *out, const ppcc_layer *l,
			     int t, int cp, double zero_bpp,
			     const ppcc_memory_experts *ex, int split,
			     double factor);

/* What a device of group dg may hold: its memory less the cluster's
 * reserve (a rank of t x cp devices, t x cp times that). */
double ppcc_memory_device_cap(const ppcc_cluster *c,
			      const ppcc_device_group *dg);

/* Whether ZeRO-3's gathered weights stay for the whole step: torchtitan
 * with a pipeline (stages > 1) does not reshard after forward. */
int ppcc_memory_zero3_resident(int trainer, int stages);

/* What ZeRO-3's gathers hold on a device otherwise: two buffers (the
 * computing layer's, the prefetched next one's) the size of a stage's
 * largest layer's 16-bit parameters, layer_bytes, over t, times
 * factor (ppcc_memory_reserve_factor). */
double ppcc_memory_zero3_buffer_bytes(double layer_bytes, int t,
				      double factor);

/* The bytes of `params` 16-bit parameters (2 each): what ZeRO's gathers
 * move. */
double ppcc_memory_param16_bytes(double params);

/* The bytes a ZeRO 1 or 2 bucket gathers for each gradient byte it
 * reduces: 2 / grad_bytes (0 when grad_bytes is not positive). */
double ppcc_memory_gather_per_grad_byte(double grad_bytes);

/* The optimizer step of `params` parameters per device, in ms: it reads
 * and writes 10 + 4 x moment_bytes + grad_bytes bytes of each it
 * updates (26 + G with fp32 moments; params / n under ZeRO >= 1 over
 * n > 1 ranks, all of them otherwise) at `bandwidth` bytes/s. */
double ppcc_memory_optimizer_ms(double params, int zero, int n,
				double grad_bytes, double bandwidth,
				double moment_bytes);

/* The whole optimizer step of a rank holding `params` parameters, in
 * ms, as every trainer runs it: the gradients' global norm (a read of
 * the fp32 gradients the rank updates and an all-reduce of one float
 * over the model-parallel group, or over every rank when the states
 * are sharded or the trainer is not Megatron-LM), the clip (their
 * scale in place, run whatever the norm), then Adam
 * (ppcc_memory_optimizer_ms); doc/design/iteration.md. */
double ppcc_memory_step_ms(const ppcc_config *cfg, double params,
			   double bandwidth);

#endif
