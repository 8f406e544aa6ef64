/*
 * cost.h - the cost model: where a rank's devices are (topology.c), what
 * a collective or a p2p transfer costs (comm.c), what a layer and a
 * stage cost on a rank (compute.c).
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

/* The link between pipeline ranks a and b: intra-node when their first
 * devices share a node. */
int ppcc_topo_p2p_kind(const ppcc_cost_place *a, const ppcc_cost_place *b);

/* latency + bytes / bandwidth */
double ppcc_comm_link_seconds(const ppcc_link *l, double bytes);

/* A p2p boundary of `bytes` between two ranks of `shard` (t x cp)
 * devices: each device sends its share over its own link. */
double ppcc_comm_p2p_seconds(const ppcc_link *l, int shard, double bytes);

/* Ring collectives on n ranks of S bytes over l (nccl-tests' bus
 * bandwidth model, one latency per operation); 0 when n == 1. */
double ppcc_allreduce_seconds(const ppcc_link *l, int n, double bytes);
double ppcc_allgather_seconds(const ppcc_link *l, int n, double bytes);

/* One tensor-parallel collective of a layer over t devices of cp
 * context-parallel ranks: a ring all-reduce of message_bytes / cp over
 * the t devices' link, plus a second latency under sequence parallelism
 * (an all-gather and a reduce-scatter); 0 when t == 1. */
double ppcc_comm_tp_seconds(const ppcc_cluster *c, int t, int cp,
			    double message_bytes, int sequence_parallel);

/* One step of ring attention's K and V exchange: kv_bytes / (cp x t)
 * over the link of the rank's t x cp devices. */
double ppcc_comm_cp_step_seconds(const ppcc_cluster *c, int t, int cp,
				 double kv_bytes);

/* The data-parallel collectives of a stage's buckets over the n = d x cp
 * ranks that share its weights (ring, one latency each, over the link
 * of the t x cp x d devices): each REDUCE_GRAD an all-reduce (ZeRO 0)
 * or a reduce-scatter, each ALL_GATHER_PARAM or UNSHARD_PARAM (ZeRO >=
 * 1) an all-gather.  Sets c's dp_reduce_ms, dp_reduce_ms_per_byte,
 * dp_gather_ms and dp_gather_ms_per_byte (left alone when n == 1, and
 * the gather's under ZeRO 0). */
void ppcc_comm_dp_rates(ppcc_stage_cost *c, const ppcc_config *cfg);

/* Per layer, seconds: the tensor-parallel and ring-attention
 * communication inside its forward and its backward (plan.c fills them
 * from ppcc_comm_tp_seconds and ppcc_comm_cp_step_seconds). */
typedef struct ppcc_cost_layer_comm {
	double *tp_f, *tp_b, *cp_f, *cp_b;
} ppcc_cost_layer_comm;

/* A rank's compute speed: shard (t x cp) x tflops x 1e12 x efficiency
 * FLOP/s of its device group. */
double ppcc_cost_speed(const ppcc_device_group *dg, int shard);

/* Layer `layer`'s forward and backward, in seconds, on a rank of group
 * dg: its FLOPs at the rank's speed, its collectives (lc) and its
 * memory-bound kernels (kernel_*_bytes over t x cp devices, the
 * replicated part over cp, at the device's memory bandwidth). */
void ppcc_cost_layer_seconds(double *out_fwd, double *out_bwd,
			     const ppcc_config *cfg,
			     const ppcc_cost_layer_comm *lc, int layer,
			     const ppcc_device_group *dg);

/* Adds to c the parts of layers i..j on a rank of group g that
 * iteration.c reports (collectives, recomputation, parameters, the
 * static bytes' split, logits, FLOPs) and sets its data-parallel rates
 * (ppcc_comm_dp_rates). */
void ppcc_cost_stage_parts(ppcc_stage_cost *c, const ppcc_config *cfg,
			   const ppcc_cost_layer_comm *lc, int i, int j, int g);

#endif
