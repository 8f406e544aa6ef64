/* The cost model of one training iteration, each formula against a value
 * computed by hand: ZeRO's bytes per parameter, the ring collectives, the
 * memory terms of a layer, a device and the optimizer, the
 * tensor-parallel collectives of a block, the p2p share of each device,
 * the activation stash of a GPT and of a SwiGLU/GQA block, the logits on
 * the loss stage, the data-parallel reduction and the optimizer step,
 * the MFU of whole plans, ZeRO-3, context parallelism and measured
 * times; and the located errors and warnings of the new keys. */
#include <check.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppcc.h"
#include "testutil.h"

/* Relative tolerance for times computed in a different order than here. */
#define REL 1e-12
#define ck_near(x, want) \
	ck_assert_double_eq_tol((x), (want), fabs(want) * REL + 1e-300)

static void expect_error(const char *yaml, const char *want);

typedef struct planned {
	ppcc_arena *a;
	ppcc_config cfg;
	ppcc_plan plan;
	tu_diag diag;
	int status;
} planned;

/* The gradient norm's all-reduce of one float over n ranks of r's
 * cluster, in ms: on the two-device clusters below a ring (NCCL's
 * 6.6 + 2 x 3.4 us), 0.0134 ms and a few picoseconds for its bytes. */
static double norm_ar(const planned *r, int n)
{
	double ms = 1e3 * ppcc_allreduce_seconds(&r->cfg.cluster, n, n, 4);
	ck_assert(n != 2 || fabs(ms - 0.0134) < 1e-6);
	return ms;
}

/* Loads yaml, checks it and (when the check passes) plans it. */
static void plan_text(planned *r, const char *yaml)
{
	r->a = ppcc_arena_new();
	ck_assert_ptr_nonnull(r->a);
	r->status = tu_plan_text(&r->plan, r->a, &r->cfg, yaml, &r->diag);
}

static void done(planned *r)
{
	ppcc_arena_free(r->a);
}

START_TEST(zero_stages_give_published_bytes_per_param)
{
	double part[3];
	/* 2 + G + 12 with fp32 gradients (Megatron-LM accumulates in fp32) */
	ck_assert_double_eq(ppcc_memory_zero_bytes_per_param(part, 0, 4, 8, 0, 1, 4), 18);
	ck_assert_double_eq(part[0], 2);
	ck_assert_double_eq(part[1], 4);
	ck_assert_double_eq(part[2], 12);
	/* Rajbhandari et al.'s 16 bytes with 16-bit gradients */
	ck_assert_double_eq(ppcc_memory_zero_bytes_per_param(NULL, 0, 2, 64, 0, 1, 4), 16);
	/* stage 1, d = 8: 2 + 4 + 12/8 (the distributed optimizer, 6 + 12/d) */
	ck_assert_double_eq(ppcc_memory_zero_bytes_per_param(part, 1, 4, 8, 0, 1, 4), 7.5);
	ck_assert_double_eq(part[2], 1.5);
	/* stage 2: 2 + (4 + 12)/8 */
	ck_assert_double_eq(ppcc_memory_zero_bytes_per_param(part, 2, 4, 8, 0, 1, 4), 4);
	ck_assert_double_eq(part[1], 0.5);
	/* stage 3: (2 + 4 + 12)/8 */
	ck_assert_double_eq(ppcc_memory_zero_bytes_per_param(part, 3, 4, 8, 0, 1, 4), 2.25);
	ck_assert_double_eq(part[0], 0.25);
	/* Adam's moments in bf16: 4 + 2 x 2 = 8 bytes of state, not 12 */
	ck_assert_double_eq(ppcc_memory_zero_bytes_per_param(part, 1, 4, 8, 0, 1, 2), 7);
	ck_assert_double_eq(part[2], 1);
	ck_assert_double_eq(ppcc_memory_zero_bytes_per_param(part, 0, 4, 8, 0, 1, 2), 14);
}
END_TEST

/* torchtitan's FSDP keeps fp32 shards as the master weights and Adam's
 * two moments, (4 + G + 8) / d, and with a pipeline a stage's gathered
 * 16-bit weights besides (2 more: it does not reshard after forward,
 * torchtitan 9dec370 torchtitan/parallelisms/parallelize_llama.py:339);
 * the other trainers' ZeRO-3 is (2 + G + 12) / d. */
START_TEST(fsdp_bytes_per_param_are_torchtitans)
{
	double part[3];
	ck_assert_double_eq(ppcc_memory_zero_bytes_per_param(
		part, 3, 4, 8, PPCC_TRAINER_TORCHTITAN, 1, 4), 2);
	ck_assert_double_eq(part[0], 0.5);
	ck_assert_double_eq(part[1], 0.5);
	ck_assert_double_eq(part[2], 1);
	ck_assert_double_eq(ppcc_memory_zero_bytes_per_param(
		part, 3, 4, 8, PPCC_TRAINER_TORCHTITAN, 4, 4), 4);
	ck_assert_double_eq(part[0], 2.5);
	ck_assert_double_eq(ppcc_memory_zero_bytes_per_param(
		NULL, 3, 4, 8, PPCC_TRAINER_DEEPSPEED, 4, 4), 2.25);
	/* its ZeRO 2 (reshard never) is Megatron-LM's: 2 + (4 + 12) / 8 */
	ck_assert_double_eq(ppcc_memory_zero_bytes_per_param(
		NULL, 2, 4, 8, PPCC_TRAINER_TORCHTITAN, 1, 4), 4);
	ck_assert_int_eq(ppcc_memory_zero3_resident(PPCC_TRAINER_TORCHTITAN, 2), 1);
	ck_assert_int_eq(ppcc_memory_zero3_resident(PPCC_TRAINER_TORCHTITAN, 1), 0);
	ck_assert_int_eq(ppcc_memory_zero3_resident(PPCC_TRAINER_MEGATRON, 2), 0);
	/* the gather buffers: two of a 436 MB layer over t = 2, times 1.5 */
	ck_assert_double_eq(ppcc_memory_zero3_buffer_bytes(436e6, 2, 1.5),
			    1.5 * 436e6);
	ck_assert_double_eq(ppcc_memory_reserve_factor(PPCC_TRAINER_MEGATRON), 1);
	ck_assert_double_eq(ppcc_memory_reserve_factor(PPCC_TRAINER_TORCHTITAN),
			    PPCC_TORCHTITAN_RESERVE_FACTOR);
}
END_TEST

/* memory.c's terms of one layer, one device and the optimizer, each
 * against its closed form written out here. */
START_TEST(memory_terms_of_a_layer_a_device_and_the_optimizer)
{
	double G = 4, P = 1e6;
	int d = 8, t = 4, cp = 2;
	ppcc_layer l = {0};
	l.params = P;
	l.stash_bytes = 3e6;
	l.stash_replicated_bytes = 5e5;
	l.stash_weight_bytes = 5e6;
	/* ZeRO 1: 2 + G + 12 / d bytes a parameter */
	double bpp = ppcc_memory_zero_bytes_per_param(NULL, 1, G, d, 0, 1, 4);
	ck_assert_double_eq(bpp, 2 + G + 12.0 / d);
	ppcc_memory_layer m;
	ppcc_memory_layer_terms(&m, &l, t, cp, bpp, NULL, 0, 1);
	ck_assert_double_eq(m.bytes_per_param, 2 + G + 12.0 / d);
	ck_assert_double_eq(m.static_bytes, P * (2 + G + 12.0 / d) * cp);
	ck_assert_double_eq(m.stash_bytes, 3e6 + (t - 1) * 5e5);
	ck_assert_double_eq(m.stash_weight_bytes, 5e6);
	/* without a split backward a microbatch holds its stash (4.5 MB);
	 * with one, W's 5 MB when larger */
	ck_assert_double_eq(m.hold_bytes, 4.5e6);
	ck_assert_double_eq(m.gather_bytes, 2 * P);
	ppcc_memory_layer_terms(&m, &l, t, cp, bpp, NULL, 1, 1);
	ck_assert_double_eq(m.hold_bytes, 5e6);
	/* a layer's own bytes per parameter replace ZeRO's */
	l.bytes_per_param = 10;
	ppcc_memory_layer_terms(&m, &l, t, cp, bpp, NULL, 0, 1);
	ck_assert_double_eq(m.bytes_per_param, 10);
	ck_assert_double_eq(m.static_bytes, P * 10 * cp);

	/* a device: 80 GB less the 2 GB reserve */
	ppcc_device_group dg = {0};
	ppcc_cluster c = {0};
	dg.memory_bytes = 80e9;
	c.reserved_bytes = 2e9;
	ck_assert_double_eq(ppcc_memory_device_cap(&c, &dg), 78e9);

	/* the optimizer: (26 + G) bytes of each updated parameter at 1 TB/s,
	 * P / d of them under ZeRO >= 1, all of them under ZeRO 0 or d = 1 */
	ck_assert_double_eq(ppcc_memory_optimizer_ms(P, 1, d, G, 1e12, 4),
			    1e3 * (P / d) * (26.0 + G) / 1e12);
	ck_assert_double_eq(ppcc_memory_optimizer_ms(P, 0, d, G, 1e12, 4),
			    1e3 * P * (26.0 + G) / 1e12);
	ck_assert_double_eq(ppcc_memory_optimizer_ms(P, 3, 1, G, 1e12, 4),
			    1e3 * P * (26.0 + G) / 1e12);
	/* bf16 moments: 2 + 2 x 4 (master) + 2 x 2 x 2 (moments) + G */
	ck_assert_double_eq(ppcc_memory_optimizer_ms(P, 0, d, G, 1e12, 2),
			    1e3 * P * (18.0 + G) / 1e12);
	ck_assert_double_eq(ppcc_memory_param16_bytes(P), 2e6);
	ck_assert_double_eq(ppcc_memory_gather_per_grad_byte(G), 0.5);
	ck_assert_double_eq(ppcc_memory_gather_per_grad_byte(0), 0);
}
END_TEST

/* A cluster of nodes of 8 for the collectives' tests: no link latency
 * counts (NCCL's per-step latencies do). */
static ppcc_cluster comm_cluster(double intra, double inter, int nvls)
{
	ppcc_cluster c = {0};
	c.devices_per_node = 8;
	c.intra_node = (ppcc_link){intra, 5e-6};
	c.inter_node = (ppcc_link){inter, 10e-6};
	c.nvls = nvls;
	return c;
}

/* NCCL 5067397, src/graph/tuning.cc: Ring Simple's base latency 6.6 us
 * (line 151), 3.4 us a step over NVLink (line 159), 2(n - 1) steps of
 * an all-reduce and n - 1 of an all-gather (lines 289-290), algorithm
 * bandwidth = bus x n / steps (line 379).  One node of 8 devices at
 * 100 GB/s, no NVLS; a GPT-3 block's activation, 2048 x 12288 x 2 bytes:
 * a ring (a tree's 6.8 + 14 x 4.0 us and 0.46 x 0.7 of the bus lose). */
START_TEST(ring_allreduce_in_a_node_takes_nccls_ring_latency)
{
	ppcc_cluster c = comm_cluster(100e9, 25e9, PPCC_NVLS_NONE);
	double S = 50331648.0;
	ppcc_comm_cost k;
	ck_assert_int_eq(ppcc_comm_choose(&k, &c, PPCC_COMM_ALLREDUCE, 8, 8, S),
			 1);
	ck_assert_int_eq(k.algo, PPCC_COMM_RING);
	ck_near(ppcc_allreduce_seconds(&c, 8, 8, S),
		(6.6 + 14 * 3.4) * 1e-6 + S * 14 / 8 / 100e9);
	ck_near(ppcc_allgather_seconds(&c, 8, 8, S),
		(6.6 + 7 * 3.4) * 1e-6 + S * 7 / 8 / 100e9);
	/* the tree in one node: a chain, 6.8 + 2 x 7 x 4.0 us, 0.92 x 0.5
	 * of the bus, x 0.7 at 2^19 x 64 bytes (tuning.cc:626) */
	ck_assert_int_eq(ppcc_comm_algo_cost(&k, &c, PPCC_COMM_ALLREDUCE,
					     PPCC_COMM_TREE, 8, 8, S), 1);
	ck_near(k.latency, (6.8 + 2 * 7 * 4.0) * 1e-6);
	ck_near(k.bandwidth, 100e9 * 0.92 * 0.5 * 0.7);
	ck_assert_double_eq(ppcc_allreduce_seconds(&c, 1, 8, S), 0);
	ck_assert_double_eq(ppcc_allgather_seconds(&c, 1, 8, S), 0);
}
END_TEST

/* 16 nodes of 8 A100-like devices (300 GB/s NVLink, 25 GB/s a device's
 * network), all 128 in the collective: the bus is min(300, 8 x 25) GB/s.
 * tuning.cc: Tree = 6.8 us + 2((128/16 - 1) x 4.0 + log2(16) x 14) us
 * (lines 151, 159, 171, 416), bandwidth 0.92 x bus x 0.5 (lines 331,
 * 380) x 0.5 at 1 MiB (line 626: log2(2^20 / 64) = 14); Ring = (6.6 +
 * 224 x 3.4 + 30 x 14) us (2(16 - 1) of its 254 steps cross nodes, line
 * 411) x 1.4 (multi-node plateau, line 649).  1 MiB is Tree's. */
START_TEST(tree_allreduce_across_nodes_takes_the_trees_latency)
{
	ppcc_cluster c = comm_cluster(300e9, 25e9, PPCC_NVLS_NONE);
	double S = 1048576.0;
	ppcc_comm_cost k;
	ppcc_comm_choose(&k, &c, PPCC_COMM_ALLREDUCE, 128, 128, S);
	ck_assert_int_eq(k.algo, PPCC_COMM_TREE);
	ck_near(k.latency, (6.8 + 2 * (7 * 4.0 + 4 * 14.0)) * 1e-6);
	ck_near(k.bandwidth, 200e9 * 0.92 * 0.5 * 0.5);
	ck_near(ppcc_allreduce_seconds(&c, 128, 128, S),
		174.8e-6 + S / (200e9 * 0.92 * 0.5 * 0.5));
	ppcc_comm_algo_cost(&k, &c, PPCC_COMM_ALLREDUCE, PPCC_COMM_RING, 128,
			    128, S);
	ck_near(k.latency, (6.6 + 224 * 3.4 + 30 * 14.0) * 1.4e-6);
	ck_near(k.bandwidth, 200e9 * 128 / 254);
	/* one device a node (t 8): the tree passes through one GPU
	 * (NCCL_TOPO_PATTERN_TREE, search.cc:1133), x 0.85 (line 336) */
	ppcc_comm_algo_cost(&k, &c, PPCC_COMM_ALLREDUCE, PPCC_COMM_TREE, 16,
			    128, S);
	ck_near(k.latency, (6.8 + 2 * 4 * 14.0) * 1e-6);
	ck_near(k.bandwidth, 25e9 * 0.92 * 0.85 * 0.5 * 0.5);
}
END_TEST

/* The same 16 nodes of 8: above 512 MiB no correction applies, so Tree
 * costs 174.8 us + S / 92 GB/s and Ring 1663.48 us + S x 254 / (128 x
 * 200 GB/s); they meet at S = 1488.68e-6 / (1/92e9 - 254/25600e9) =
 * 1.5708 GB: Tree below, Ring above (doc/design/collectives.md). */
START_TEST(allreduce_flips_from_tree_to_ring_at_nccls_threshold)
{
	ppcc_cluster c = comm_cluster(300e9, 25e9, PPCC_NVLS_NONE);
	double tree_lat = 174.8e-6, ring_lat = 1663.48e-6;
	double flip = (ring_lat - tree_lat) /
		      (1 / 92e9 - 254.0 / (128 * 200e9));
	ck_assert(flip > 1.57e9 && flip < 1.571e9);
	ppcc_comm_cost k;
	ppcc_comm_choose(&k, &c, PPCC_COMM_ALLREDUCE, 128, 128, 1.5e9);
	ck_assert_int_eq(k.algo, PPCC_COMM_TREE);
	ck_near(ppcc_allreduce_seconds(&c, 128, 128, 1.5e9),
		tree_lat + 1.5e9 / 92e9);
	ppcc_comm_choose(&k, &c, PPCC_COMM_ALLREDUCE, 128, 128, 1.6e9);
	ck_assert_int_eq(k.algo, PPCC_COMM_RING);
	ck_near(ppcc_allreduce_seconds(&c, 128, 128, 1.6e9),
		ring_lat + 1.6e9 * 254 / (128 * 200e9));
}
END_TEST

/* One node of 8 H100-like devices (450 GB/s).  With NVLink SHARP, NVLS
 * all-gathers in 25 us (tuning.cc:161, 425) at 450 GB/s x 0.85 (line
 * 142) x 7/8 (its 8 channels, one a GPU: search.cc:1127, 1137) x 7/8
 * (line 317), no conversion to algorithm bandwidth (line 377); without
 * it a ring: 6.6 + 7 x 3.4 us at 450 x 8/7 GB/s.  1 MB is NVLS's, 8 MB
 * the ring's (they meet near 3.67 MB).  An all-reduce there is NVLS's:
 * 25 us at 2 x 0.85 x 7/8 x 450 x 8/14 GB/s (lines 315, 379). */
START_TEST(allgather_with_nvls_and_without)
{
	ppcc_cluster c = comm_cluster(450e9, 50e9, PPCC_NVLS_HOPPER);
	double nvls_bw = 450e9 * 0.85 * 7 / 8 * 7 / 8;
	ppcc_comm_cost k;
	ppcc_comm_choose(&k, &c, PPCC_COMM_ALLGATHER, 8, 8, 1e6);
	ck_assert_int_eq(k.algo, PPCC_COMM_NVLS);
	ck_near(ppcc_allgather_seconds(&c, 8, 8, 1e6), 25e-6 + 1e6 / nvls_bw);
	ppcc_comm_choose(&k, &c, PPCC_COMM_ALLGATHER, 8, 8, 8e6);
	ck_assert_int_eq(k.algo, PPCC_COMM_RING);
	ck_near(ppcc_allgather_seconds(&c, 8, 8, 8e6),
		(6.6 + 7 * 3.4) * 1e-6 + 8e6 * 7 / 8 / 450e9);
	c.nvls = PPCC_NVLS_NONE;
	ppcc_comm_choose(&k, &c, PPCC_COMM_ALLGATHER, 8, 8, 1e6);
	ck_assert_int_eq(k.algo, PPCC_COMM_RING);
	ck_near(ppcc_allgather_seconds(&c, 8, 8, 1e6),
		(6.6 + 7 * 3.4) * 1e-6 + 1e6 * 7 / 8 / 450e9);
	c.nvls = PPCC_NVLS_HOPPER;
	ppcc_comm_choose(&k, &c, PPCC_COMM_ALLREDUCE, 8, 8, 1e9);
	ck_assert_int_eq(k.algo, PPCC_COMM_NVLS);
	ck_near(k.bandwidth, 2 * 0.85 * 7 / 8 * 450e9 * 8 / 14);
	/* across nodes NVLS needs CollNet (line 505): none for all-gather,
	 * NVLSTree for all-reduce; at one device a node, PAT all-gathers:
	 * 8 + log2(16) x 14 / 3.5 + 16 x 2.8 us at 0.75 of the bus (lines
	 * 337, 432-433) */
	ck_assert_int_eq(ppcc_comm_algo_cost(&k, &c, PPCC_COMM_ALLGATHER,
					     PPCC_COMM_NVLS, 16, 16, 1e6), 0);
	ck_assert_int_eq(ppcc_comm_algo_cost(&k, &c, PPCC_COMM_ALLREDUCE,
					     PPCC_COMM_NVLS_TREE, 16, 16, 1e6),
			 1);
	ppcc_comm_choose(&k, &c, PPCC_COMM_ALLGATHER, 16, 128, 1e5);
	ck_assert_int_eq(k.algo, PPCC_COMM_PAT);
	ck_near(k.latency, (8 + 4 * 14 / 3.5 + 16 * 2.8) * 1e-6);
	ck_near(k.bandwidth, 50e9 * 0.75);
}
END_TEST

/* The data-parallel rates: the algorithm NCCL picks at the plan's bucket
 * (40 MB here) prices every bucket.  d = 8 on one H100 node: ZeRO 0
 * all-reduces by NVLS (25 us), ZeRO 1 reduce-scatters and gathers by
 * ring (6.6 + 7 x 3.4 us, 7/8 of the bytes at 450 GB/s).  Sequence
 * parallelism's all-gather and reduce-scatter each cost an all-gather. */
START_TEST(dp_rates_take_the_algorithm_at_the_bucket_size)
{
	ppcc_config cfg = {0};
	cfg.cluster = comm_cluster(450e9, 50e9, PPCC_NVLS_HOPPER);
	cfg.pipeline.tensor_parallel = 1;
	cfg.pipeline.data_parallel = 8;
	cfg.pipeline.dp_bucket_mb = 40;
	ppcc_stage_cost c = {0};
	ppcc_comm_dp_rates(&c, &cfg);
	ck_near(c.dp_reduce_ms, 25e-3);
	ck_near(c.dp_reduce_ms_per_byte,
		1e3 / (2 * 0.85 * 7 / 8 * 450e9 * 8 / 14));
	ck_assert_double_eq(c.dp_gather_ms_per_byte, 0);
	cfg.pipeline.zero = 1;
	c = (ppcc_stage_cost){0};
	ppcc_comm_dp_rates(&c, &cfg);
	ck_near(c.dp_reduce_ms, (6.6 + 7 * 3.4) * 1e-3);
	ck_near(c.dp_reduce_ms_per_byte, 1e3 * 7 / 8 / 450e9);
	ck_near(c.dp_gather_ms, (6.6 + 7 * 3.4) * 1e-3);
	ck_near(c.dp_gather_ms_per_byte, 1e3 * 7 / 8 / 450e9);
	ck_near(ppcc_comm_tp_seconds(&cfg.cluster, 8, 1, 1e6, 1),
		2 * (25e-6 + 1e6 / (450e9 * 0.85 * 7 / 8 * 7 / 8)));
	ck_near(ppcc_comm_tp_seconds(&cfg.cluster, 8, 2, 2e6, 0),
		25e-6 + 1e6 / (2 * 0.85 * 7 / 8 * 450e9 * 8 / 14));
}
END_TEST

/* HSDP (pipeline.data_parallel_shard): 4 nodes of 8 H100-like devices,
 * d = 32, ZeRO 1 sharded over the 8 ranks of a node, 4 replicas.  A
 * bucket (40 MB) reduce-scatters in its node by ring (6.6 + 7 x 3.4 us,
 * 7/8 of the bytes at 450 GB/s, as above), then the 4 replicas of each
 * shard, one a node, all-reduce its 1/8 at NCCL's choice for 5 MB over
 * 4 nodes; the gathers stay in the node.  The optimizer, the static
 * bytes and the plan's gathers shard over 8, not 32. */
START_TEST(hsdp_reduces_in_the_shard_then_across_its_replicas)
{
	ppcc_config cfg = {0};
	cfg.cluster = comm_cluster(450e9, 50e9, PPCC_NVLS_HOPPER);
	cfg.pipeline.tensor_parallel = 1;
	cfg.pipeline.context_parallel = 1;
	cfg.pipeline.data_parallel = 32;
	cfg.pipeline.data_parallel_shard = 8;
	cfg.pipeline.zero = 1;
	cfg.pipeline.dp_bucket_mb = 40;
	ck_assert_int_eq(ppcc_pipeline_zero_ranks(&cfg.pipeline), 8);
	ck_assert_int_eq(ppcc_pipeline_zero_replicas(&cfg.pipeline), 4);
	ppcc_comm_cost ar;
	ppcc_comm_choose(&ar, &cfg.cluster, PPCC_COMM_ALLREDUCE, 4, 32, 5e6);
	ck_assert_int_ne(ar.algo, PPCC_COMM_NONE);
	ppcc_stage_cost c = {0};
	ppcc_comm_dp_rates(&c, &cfg);
	ck_near(c.dp_reduce_ms, (6.6 + 7 * 3.4) * 1e-3 + 1e3 * ar.latency);
	ck_near(c.dp_reduce_ms_per_byte,
		1e3 * 7 / 8 / 450e9 + 1e3 / ar.bandwidth / 8);
	ck_near(c.dp_gather_ms, (6.6 + 7 * 3.4) * 1e-3);
	ck_near(c.dp_gather_ms_per_byte, 1e3 * 7 / 8 / 450e9);
	/* a shard of all d is the flat reduce-scatter over 32 */
	cfg.pipeline.data_parallel_shard = 32;
	ppcc_comm_cost rs;
	ppcc_comm_choose(&rs, &cfg.cluster, PPCC_COMM_REDUCE_SCATTER, 32, 32,
			 40e6);
	c = (ppcc_stage_cost){0};
	ppcc_comm_dp_rates(&c, &cfg);
	ck_near(c.dp_reduce_ms, 1e3 * rs.latency);
	ck_near(c.dp_reduce_ms_per_byte, 1e3 / rs.bandwidth);

	/* a plan: the optimizer's states over 8 ranks are 4 times those over
	 * 32; weights and gradients stay whole under ZeRO 1 */
	static const char *const shards[] = {"", "  data_parallel_shard: 8\n"};
	double opt[2], w[2], g[2], step[2], norm[2];
	for (int i = 0; i < 2; i++) {
		char yaml[512];
		snprintf(yaml, sizeof yaml, "model:\n  name: one\n"
			 "  layers: [{name: l, fwd_flops: 1.0e12, params: "
			 "1.0e9}]\n"
			 "cluster:\n  devices: 32\n"
			 "  device: {name: x, tflops: 100, efficiency: 0.5, "
			 "memory_gib: 80, memory_bandwidth_gb_s: 1000}\n"
			 "pipeline:\n  zero: 1\n%s", shards[i]);
		planned r;
		plan_text(&r, yaml);
		ck_assert_msg(r.status == 0, "%s", r.diag.text);
		const ppcc_iteration *it = r.plan.best.iteration;
		opt[i] = it->optimizer_bytes[0];
		w[i] = it->weight_bytes[0];
		g[i] = it->grad_bytes[0];
		step[i] = it->optimizer_ms;
		/* the norm's one float, all-reduced over the 32 ranks */
		norm[i] = 1e3 * ppcc_allreduce_seconds(&r.cfg.cluster, 32, 32, 4);
		done(&r);
	}
	ck_assert_double_eq_tol(opt[1], 4 * opt[0], 4);
	ck_assert_double_eq_tol(opt[1], 12e9 / 8, 4);
	ck_assert_double_eq(w[1], w[0]);
	ck_assert_double_eq(g[1], g[0]);
	/* Adam's (26 + 4) bytes and the norm's and clip's 3 x 4 of each of
	 * 1e9 / 8 parameters at 1 TB/s, and the norm's all-reduce */
	ck_assert_double_eq(norm[0], norm[1]);
	ck_assert(norm[1] > 0);
	ck_near(step[1], 1e3 * (1e9 / 8) * (30 + 12) / 1e12 + norm[1]);
	ck_near(step[1] - norm[1], 4 * (step[0] - norm[0]));
}
END_TEST

/* Under a split backward the input gradient I frees the logits and W
 * keeps their gradient: at a rank's peak the logits column holds only
 * the logits in flight, and the activations (the peak's rest) are never
 * negative, with a vocabulary large enough for the logits to dominate. */
START_TEST(split_backward_frees_the_logits_at_the_input_gradient)
{
	static const char *const kinds[] = {"zb-h1", "zb-h2", "zb-v", "1f1b"};
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		char yaml[512];
		snprintf(yaml, sizeof yaml, "model: {name: v, transformer: "
			 "{layers: 8, hidden: 2048, heads: 16, ffn_hidden: 8192, "
			 "vocab: 256000, seq_len: 2048}}\n"
			 "cluster: {devices: 8, devices_per_node: 8, device: h100}\n"
			 "pipeline: {global_batch_size: 32, stages: 2, schedule: "
			 "%s, microbatches: 8}\n", kinds[k]);
		planned r;
		plan_text(&r, yaml);
		ck_assert_msg(r.status == 0, "%s: %s", kinds[k], r.diag.text);
		const ppcc_iteration *it = r.plan.best.iteration;
		for (int i = 0; i < r.plan.best.schedule.n_ranks; i++) {
			ck_assert_msg(it->activation_bytes[i] >= 0, "%s rank %d: "
				      "%g", kinds[k], i, it->activation_bytes[i]);
			ck_assert(it->logits_bytes[i] >= 0);
		}
		done(&r);
	}
}
END_TEST

/* Pipeline rank r runs from device r x t x cp x d: with t 2, d 2 and
 * 8-device nodes, ranks 0 and 1 share node 0 and rank 2 is on node 1;
 * the second group begins at device 12, so rank 3 is its first.  A group
 * of devices within a node uses the intra-node link. */
START_TEST(topology_places_ranks_on_groups_nodes_and_links)
{
	ppcc_device_group groups[2] = {{.count = 12}, {.count = 4}};
	ppcc_config cfg = {0};
	cfg.cluster.devices_per_node = 8;
	cfg.cluster.n_groups = 2;
	cfg.cluster.groups = groups;
	cfg.pipeline.tensor_parallel = 2;
	cfg.pipeline.data_parallel = 2;
	ppcc_cost_place at[4];
	for (int r = 0; r < 4; r++)
		ppcc_topo_place(&at[r], &cfg, r);
	ck_assert_int_eq(at[1].first_device, 4);
	ck_assert_int_eq(at[2].node, 1);
	ck_assert_int_eq(at[2].group, 0);
	ck_assert_int_eq(at[3].group, 1);
	ck_assert_ptr_eq(at[3].device_group, &groups[1]);
	ck_assert_int_eq(ppcc_topo_p2p_kind(&at[0], &at[1]), PPCC_TOPO_INTRA);
	ck_assert_int_eq(ppcc_topo_p2p_kind(&at[1], &at[2]), PPCC_TOPO_INTER);
	ck_assert_ptr_eq(ppcc_topo_span_link(&cfg.cluster, 8),
			 &cfg.cluster.intra_node);
	ck_assert_ptr_eq(ppcc_topo_span_link(&cfg.cluster, 16),
			 &cfg.cluster.inter_node);
}
END_TEST

/* A layer's forward on a rank of t 2 devices of 1 TFLOP/s at full
 * efficiency: 2e12 FLOPs in 1 s, its collective's 0.5 s, and 1 GB of
 * split and 1 GB of replicated kernel traffic, (1 + 1) / 2 GB at 1 GB/s
 * per device: 2.5 s; the backward has neither collective nor kernels. */
START_TEST(layer_time_is_flops_collectives_and_kernels)
{
	ppcc_device_group dg = {.count = 2, .tflops = 1, .efficiency = 1,
				.memory_bandwidth = 1e9};
	ppcc_layer layer = {.fwd_flops = 2e12, .bwd_flops = 4e12,
			    .kernel_fwd_bytes = 1e9,
			    .kernel_fwd_replicated_bytes = 1e9};
	double tp_f = 0.5, none = 0;
	ppcc_cost_layer_comm lc = {&tp_f, &none, &none, &none, NULL, NULL};
	ppcc_config cfg = {0};
	cfg.model.layers = &layer;
	cfg.model.n_layers = 1;
	cfg.pipeline.tensor_parallel = 2;
	ck_near(ppcc_cost_speed(&dg, 2), 2e12);
	double f, b;
	ppcc_cost_layer_seconds(&f, &b, &cfg, &lc, 0, &dg);
	ck_near(f, 2.5);
	ck_near(b, 2.0);
}
END_TEST

#define SMALL_GPT(extra) \
	"model:\n" \
	"  name: g\n" \
	"  transformer: {layers: 2, hidden: 1024, heads: 16, vocab: 1000, " \
	"seq_len: 1024, flash_attention: false" extra "}\n"

START_TEST(tp_collectives_are_two_allreduces_per_block_each_way)
{
	planned r;
	plan_text(&r, SMALL_GPT("") "cluster:\n"
		  "  devices: 2\n"
		  "  device: {name: x, tflops: 100, efficiency: 1, memory_gib: 80}\n"
		  "  links: {intra_node: {bandwidth_gb_s: 100, latency_us: 5}}\n"
		  "pipeline: {tensor_parallel: 2, microbatches: 1}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_stage_cost *c = &r.plan.best.costs[0];
	/* One all-reduce of s*b*h*2 = 2097152 bytes on 2 ranks, with
	 * sequence parallelism an all-gather and a reduce-scatter, each a
	 * ring of one step, NCCL's 6.6 + 3.4 us (tuning.cc:151, 159), the
	 * link latency unused: 2 * (10 us + 1/2 * 2097152 / 1e11) =
	 * 4.097152e-5 s.  Forward: the embedding's one and two per block
	 * (5); backward: two per block and the head's one (5). */
	ck_near(c->tp_fwd_ms, 5 * 4.097152e-2);
	ck_near(c->tp_bwd_ms, 5 * 4.097152e-2);
	done(&r);

	/* Without sequence parallelism a ring all-reduce, 6.6 + 2 x 3.4 us
	 * + 2097152 / 1e11; full recomputation repeats the blocks' two in
	 * the backward: 5 forward, 9 backward. */
	plan_text(&r, SMALL_GPT(", sequence_parallel: false, recompute: full")
		  "cluster:\n"
		  "  devices: 2\n"
		  "  device: {name: x, tflops: 100, efficiency: 1, memory_gib: 80}\n"
		  "  links: {intra_node: {bandwidth_gb_s: 100, latency_us: 5}}\n"
		  "pipeline: {tensor_parallel: 2, microbatches: 1}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	c = &r.plan.best.costs[0];
	ck_near(c->tp_fwd_ms, 5 * 3.437152e-2);
	ck_near(c->tp_bwd_ms, 9 * 3.437152e-2);
	done(&r);
}
END_TEST

START_TEST(p2p_sends_one_tth_of_the_activation_per_device)
{
	planned r;
	plan_text(&r, SMALL_GPT("") "cluster:\n"
		  "  devices: 8\n"
		  "  devices_per_node: 4\n"
		  "  device: {name: x, tflops: 100, efficiency: 1, memory_gib: 80}\n"
		  "  links: {inter_node: {bandwidth_gb_s: 25, latency_us: 10}}\n"
		  "pipeline: {tensor_parallel: 4, stages: 2, microbatches: 2}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	/* rank 0 on devices 0-3, rank 1 on 4-7: inter-node.  Each of the
	 * 4 devices sends 2097152 / 4 bytes: 10 us + 524288 / 25e9 s */
	const ppcc_stage_cost *c = r.plan.best.costs;
	ck_near(c[0].send_f_ms, 1e3 * (1e-5 + 524288.0 / 25e9));
	ck_near(c[1].send_b_ms, 1e3 * (1e-5 + 524288.0 / 25e9));
	ck_assert_uint_eq(r.plan.best.stages[0].send_bytes, 2097152);
	done(&r);
}
END_TEST

START_TEST(context_parallel_passes_k_and_v_around_the_ring)
{
	planned r;
	plan_text(&r, SMALL_GPT("") "cluster:\n"
		  "  devices: 2\n"
		  "  device: {name: x, tflops: 100, efficiency: 1, memory_gib: 80}\n"
		  "  links: {intra_node: {bandwidth_gb_s: 100, latency_us: 5}}\n"
		  "pipeline: {context_parallel: 2, microbatches: 1}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_stage_cost *c = &r.plan.best.costs[0];
	/* K and V of the whole sequence, 4*s*b*h = 4194304 bytes per
	 * block; each of cp - 1 = 1 steps passes one rank's half:
	 * T = 5 us + 2097152 / 1e11 s; beside it runs one step's attention,
	 * the scores and values' 2*s^2*2h = 4294967296 FLOPs (no flash
	 * attention: the full square) at the rank's 2 x 100 TFLOP/s, over
	 * cp: C = 10.73741824 us, less than (1 - 20/132) T, so C is hidden;
	 * two blocks; the backward twice that, its transfers and attention
	 * alike (doc/design/overlap.md) */
	double T = 2.597152e-5, C = 4294967296.0 / 2e14 / 2;
	ck_assert(C < (1 - 20.0 / 132) * T);
	ck_near(c->cp_fwd_ms, 2 * 1e3 * (T - C));
	ck_near(c->cp_bwd_ms, 4 * 1e3 * (T - C));
	done(&r);
	/* a link ten times as fast, no latency: T = 2097152 / 1e12 s
	 * is under C, so all of it but the SMs' share s = 20/132 hides */
	plan_text(&r, SMALL_GPT("") "cluster:\n"
		  "  devices: 2\n"
		  "  device: {name: x, tflops: 100, efficiency: 1, memory_gib: 80}\n"
		  "  links: {intra_node: {bandwidth_gb_s: 1000, latency_us: 0}}\n"
		  "pipeline: {context_parallel: 2, microbatches: 1}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	c = &r.plan.best.costs[0];
	T = 2097152 / 1e12;
	ck_assert(T < C);
	ck_near(c->cp_fwd_ms, 2 * 1e3 * T * 20 / 132);
	ck_near(c->cp_bwd_ms, 4 * 1e3 * T * 20 / 132);
	/* the stash splits with the sequence: a block's 34*s*b*h + 4*a*s*b
	 * (flash attention is off here: + 5*a*s*s*b) over cp = 2 */
	double s = 1024, h = 1024, a = 16;
	double block = s * h * (34 + 5 * a * s / h) / 2;
	double embed = s * h / 2, head = (4 * s * h + 6 * s * 1000) / 2;
	ck_assert_double_eq(c->stash_bytes, embed + 2 * block + head);
	ck_assert_int_eq(r.plan.best.iteration->data_parallel, 1);
	done(&r);
}
END_TEST

START_TEST(gpt_stash_matches_korthikanti_table_2)
{
	ppcc_transformer t = {.layers = 1, .hidden = 12288, .heads = 96,
			      .vocab = 50257, .seq_len = 2048,
			      .micro_batch_size = 1, .flash_attention = 0};
	double s = 2048, h = 12288, a = 96, tp = 8, total, whole;
	double sbh = s * h;
	ppcc_transformer_block_stash(&total, &whole, &t);
	/* no parallelism: s*b*h*(34 + 5*a*s/h) */
	ck_assert_double_eq(total, sbh * (34 + 5 * a * s / h));
	ck_assert_double_eq(whole, 10 * sbh);
	/* t-way tensor parallel, per device as plan.c divides it:
	 * s*b*h*(10 + 24/t + 5*a*s/(h*t)) */
	ck_assert_double_eq((total + (tp - 1) * whole) / tp,
			    sbh * (10 + 24 / tp + 5 * a * s / (h * tp)));
	/* with sequence parallelism (nothing kept whole): all over t */
	ck_assert_double_eq(total / tp, sbh * (34 + 5 * a * s / h) / tp);
	/* selective recomputation: 34*s*b*h */
	t.recompute = PPCC_RECOMPUTE_SELECTIVE;
	ppcc_transformer_block_stash(&total, &whole, &t);
	ck_assert_double_eq(total, 34 * sbh);
	ck_assert_double_eq((total + (tp - 1) * whole) / tp,
			    sbh * (10 + 24 / tp));
	/* full recomputation: the input, 2*s*b*h */
	t.recompute = PPCC_RECOMPUTE_FULL;
	ppcc_transformer_block_stash(&total, &whole, &t);
	ck_assert_double_eq(total, 2 * sbh);
	/* flash attention keeps 4*a*s*b of log-sum-exp instead of the
	 * scores */
	t.recompute = PPCC_RECOMPUTE_NONE;
	t.flash_attention = 1;
	ppcc_transformer_block_stash(&total, &whole, &t);
	ck_assert_double_eq(total, 34 * sbh + 4 * a * s);
}
END_TEST

START_TEST(swiglu_gqa_stash_is_derived_from_the_kept_tensors)
{
	/* Llama 2 70B, b = 1, flash attention, no recomputation, no
	 * dropout.  s*b*h = 4096 * 8192 = 33554432; whole: two norms' and
	 * the QKV and FFN inputs, 8*s*b*h = 268435456; split: Q 2*s*b*h
	 * (67108864), K and V 4*s*b*h/8 (16777216), the output projection's
	 * input 2*s*b*h (67108864), gate and up 4*s*b*f (469762048), the
	 * down projection's input 2*s*b*f (234881024), log-sum-exp 4*a*s
	 * (1048576): 856686592. */
	ppcc_transformer t = {.layers = 1, .hidden = 8192, .heads = 64,
			      .kv_heads = 8, .ffn_hidden = 28672,
			      .vocab = 32000, .seq_len = 4096,
			      .micro_batch_size = 1, .swiglu = 1,
			      .flash_attention = 1};
	double total, whole;
	ppcc_transformer_block_stash(&total, &whole, &t);
	ck_assert_double_eq(whole, 268435456.0);
	ck_assert_double_eq(total, 268435456.0 + 856686592.0);
}
END_TEST

/* torchtitan's per-operation selective recomputation (9dec370
 * torchtitan/parallelisms/parallelize_llama.py:214-262: it saves every
 * aten.mm output but each second one, flash attention's, the
 * reduce-scatters'), Llama 3 8B, b = 2, s = 8192: the mm order is Q, K,
 * V, O, W1, W3, W2 (torchtitan/models/llama/model.py:189, 253), so Q
 * (h), V (h/4), W1 (f) and W2 (h) are kept; with the block's input (h),
 * the attention output (h) and its fp32 log-sum-exp (4a bytes a
 * token): per token 2 x (4h + h/4 + f) + 4a = 2 x (16384 + 1024 +
 * 14336) + 128 = 63616 bytes, 16384 tokens: 1042284544.  W2's output
 * stays whole on each tensor-parallel device: 2h = 8192 a token.  It
 * recomputes K (2 x h x h/4), O (2h^2) and W3 (2hf) a token:
 * 2 x 4096 x (1024 + 4096 + 14336) = 159383552, x 16384. */
START_TEST(torchtitan_selective_keeps_every_other_matmul)
{
	ppcc_transformer t = {.layers = 1, .hidden = 4096, .heads = 32,
			      .kv_heads = 8, .ffn_hidden = 14336,
			      .vocab = 128256, .seq_len = 8192,
			      .micro_batch_size = 2, .swiglu = 1,
			      .flash_attention = 1,
			      .recompute = PPCC_RECOMPUTE_SELECTIVE,
			      .sequence_parallel = 1,
			      .trainer = PPCC_TRAINER_TORCHTITAN};
	double total, whole;
	ppcc_transformer_block_stash(&total, &whole, &t);
	ck_assert_double_eq(total, 1042284544.0);
	ck_assert_double_eq(whole, 16384.0 * 8192);
	ppcc_arena *a = ppcc_arena_new();
	ck_assert_ptr_nonnull(a);
	ppcc_layer *L;
	int n;
	ck_assert_int_eq(ppcc_transformer_expand(&L, &n, a, &t,
						 (ppcc_loc){0}), 0);
	ck_assert_double_eq(L[1].recompute_flops, 16384.0 * 159383552.0);
	ck_assert_double_eq(L[1].stash_bytes, 1042284544.0);
	/* its loss upcasts the logits: 12 bytes each at the backward's
	 * peak (9dec370 train.py:131-133), where Megatron-LM's keep 6 */
	ck_assert_double_eq(L[2].logits_bytes, 12.0 * 16384 * 128256);
	t.trainer = PPCC_TRAINER_MEGATRON;
	ck_assert_int_eq(ppcc_transformer_expand(&L, &n, a, &t,
						 (ppcc_loc){0}), 0);
	ck_assert_double_eq(L[2].logits_bytes, 6.0 * 16384 * 128256);
	ck_assert_double_eq(L[1].recompute_flops, 2.0 * 2 * 8192.0 * 8192 * 4096);
	ppcc_arena_free(a);
}
END_TEST

/* torchtitan's published FSDP run: Llama 3.1 8B on 8 x H100 (96 GB HBM2e,
 * 95 GiB usable), selective (op) recomputation, local batch 2 of 8192
 * tokens, measured at 82.4 GiB of reserved memory (torchtitan b5bcd76c
 * benchmarks/llama3_h100_202412_torchtitan.md:27).  It plans as fitting,
 * its peak within 10% of that (doc/fidelity/runs.md R1). */
START_TEST(fsdp_llama3_8b_on_8_h100_fits_as_measured)
{
#define R1(trainer) \
	"model:\n" \
	"  transformer: {preset: llama3-8b, recompute: selective,\n" \
	"                micro_batch_size: 2}\n" \
	"cluster:\n" \
	"  devices: 8\n" \
	"  reserved_gib: 1\n" \
	"  device: {preset: h100, memory_gib: 95}\n" \
	"pipeline: {stages: 1, data_parallel: 8, zero: 3,\n" \
	"           microbatches: 1" trainer "}\n"
	planned r;
	plan_text(&r, R1(", trainer: torchtitan"));
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	double peak = r.plan.best.estimate.peak_memory_bytes[0] / 1073741824.0;
	ck_assert_msg(fabs(peak - 82.4) <= 0.1 * 82.4, "peak %.2f GiB", peak);
	done(&r);
	/* Megatron-LM's accounting of the same run does not fit */
	plan_text(&r, R1(""));
	ck_assert_int_eq(r.status, PPCC_EINFEASIBLE);
	done(&r);
#undef R1
}
END_TEST

/* A block's forward FLOPs with flash attention count the causal half of
 * the scores and values: Llama 3 8B, b = 1, s = 8192: projections
 * 2 x (2h^2 + 2h x h/4) = 2 x (33554432 + 8388608) = 83886080, FFN
 * 2 x 3 x h x f = 352321536, per token 436207616, x 8192 =
 * 3573412790272; attention 2 x s^2 x h = 549755813888; without flash
 * attention 4 x s^2 x h.  Selective recomputation redoes that
 * attention. */
START_TEST(flash_attention_counts_the_causal_half)
{
	ppcc_transformer t = {.layers = 1, .hidden = 4096, .heads = 32,
			      .kv_heads = 8, .ffn_hidden = 14336,
			      .vocab = 128256, .seq_len = 8192,
			      .micro_batch_size = 1, .swiglu = 1,
			      .flash_attention = 1, .sequence_parallel = 1,
			      .recompute = PPCC_RECOMPUTE_SELECTIVE};
	ppcc_arena *a = ppcc_arena_new();
	ck_assert_ptr_nonnull(a);
	ppcc_layer *L;
	int n;
	ck_assert_int_eq(ppcc_transformer_expand(&L, &n, a, &t, (ppcc_loc){0}), 0);
	ck_assert_double_eq(L[1].fwd_flops, 3573412790272.0 + 549755813888.0);
	ck_assert_double_eq(L[1].recompute_flops, 549755813888.0);
	ck_assert_double_eq(L[1].bwd_flops,
			    2 * (3573412790272.0 + 549755813888.0) + 549755813888.0);
	ck_assert_double_eq(L[1].bwd_weight_flops, 3573412790272.0);
	t.flash_attention = 0;
	ck_assert_int_eq(ppcc_transformer_expand(&L, &n, a, &t, (ppcc_loc){0}), 0);
	ck_assert_double_eq(L[1].fwd_flops, 3573412790272.0 + 2 * 549755813888.0);
	ck_assert_double_eq(L[1].recompute_flops, 2 * 549755813888.0);
	ppcc_arena_free(a);
}
END_TEST

/* precision fp8, by hand, on Llama 3 8B's block (s 8192, b 1): its
 * weight products, 24sbh^2-like 3,573,412,790,272 FLOPs forward (W's
 * too), run in FP8, twice that in the backward, none recomputed under
 * selective recomputation and all of them again under full; its
 * 218,103,808 weight parameters (h (h + 2 h/4) + h h + 3 h f) get
 * Transformer Engine's FP8 copy and transpose, 2 bytes each, over t; its
 * stash keeps the QKV and FFN inputs in one byte (-2sbh, whole), the
 * output projection's input once more in one (+sbh) and the down
 * projection's in one (-sbf): 8192 (-8192 + 4096 - 14336) = -150,994,944
 * bytes.  On a device of 100 dense 16-bit TFLOP/s and 200 FP8 at
 * efficiency 1, the forward takes 549,755,813,888 / 1e14 +
 * 3,573,412,790,272 / 2e14 = 0.02336462209024 s. */
START_TEST(fp8_prices_the_weight_products_and_holds_their_copies)
{
	ppcc_transformer t = {.layers = 1, .hidden = 4096, .heads = 32,
			      .kv_heads = 8, .ffn_hidden = 14336,
			      .vocab = 128256, .seq_len = 8192,
			      .micro_batch_size = 1, .swiglu = 1,
			      .flash_attention = 1, .sequence_parallel = 1,
			      .recompute = PPCC_RECOMPUTE_SELECTIVE};
	ppcc_arena *a = ppcc_arena_new();
	ppcc_layer *L;
	int n;
	ck_assert_int_eq(ppcc_transformer_expand(&L, &n, a, &t, (ppcc_loc){0}), 0);
	ppcc_layer bf16 = L[1];
	ck_assert(bf16.fp8_fwd_flops == 0 && bf16.fp8_params == 0);
	t.fp8 = 1;
	ck_assert_int_eq(ppcc_transformer_expand(&L, &n, a, &t, (ppcc_loc){0}), 0);
	ck_assert_double_eq(L[1].fwd_flops, bf16.fwd_flops);
	ck_assert_double_eq(L[1].fp8_fwd_flops, 3573412790272.0);
	ck_assert_double_eq(L[1].fp8_bwd_flops, 2 * 3573412790272.0);
	ck_assert_double_eq(L[1].fp8_recompute_flops, 0);
	ck_assert_double_eq(L[1].fp8_params, 218103808.0);
	ck_assert_double_eq(L[1].stash_bytes - bf16.stash_bytes, -150994944.0);
	ck_assert_double_eq(L[0].fp8_params, 0); /* the embedding */
	ck_assert_double_eq(L[2].fp8_fwd_flops, 0); /* the head */
	ck_assert_double_eq(ppcc_memory_fp8_copy_bytes(&L[1], 2, NULL),
			    218103808.0);
	ppcc_device_group dg = {.tflops = 100, .efficiency = 1,
				.fp8_speedup = 2, .fp8_gain = 2};
	double sec = ppcc_cost_flops_seconds(&dg, 1e14, L[1].fwd_flops,
					     L[1].fp8_fwd_flops);
	ck_assert_msg(fabs(sec - 0.02336462209024) < 1e-15, "%.17g", sec);
	/* a calibrated gain (the h100's, fitted: 1.27) in place of the
	 * peaks' ratio: 549,755,813,888 / 1e14 + 3,573,412,790,272 /
	 * 1.27e14 = 0.0336346667236989 s */
	dg.fp8_gain = 1.27;
	sec = ppcc_cost_flops_seconds(&dg, 1e14, L[1].fwd_flops,
				      L[1].fp8_fwd_flops);
	ck_assert_msg(fabs(sec - 0.0336346667236989) < 1e-15, "%.17g", sec);
	dg.fp8_speedup = dg.fp8_gain = 0; /* no FP8 tensor cores */
	ck_assert(ppcc_cost_flops_seconds(&dg, 1e14, L[1].fwd_flops,
					  L[1].fp8_fwd_flops) ==
		  L[1].fwd_flops / 1e14);
	t.recompute = PPCC_RECOMPUTE_FULL;
	ck_assert_int_eq(ppcc_transformer_expand(&L, &n, a, &t, (ppcc_loc){0}), 0);
	ck_assert_double_eq(L[1].fp8_recompute_flops, 3573412790272.0);
	ck_assert_double_eq(L[1].fp8_bwd_flops, 3 * 3573412790272.0);
	ppcc_arena_free(a);
	/* the loader: the h100 preset runs FP8 at its fitted gain; a
	 * device given its FP8 peak, at the peaks' ratio, uncalibrated */
	static const char *const devices[] = {
		"h100", "{preset: h100, tflops_fp8: 1500}",
		("{name: x, tflops: 100, tflops_fp8: 300, efficiency: 0.5, "
		 "memory_gib: 80}")};
	static const double gain[] = {PPCC_HOPPER_FP8_GAIN, 1500 / 989.4, 3};
	for (int k = 0; k < 3; k++) {
		char yaml[512];
		snprintf(yaml, sizeof yaml, "model:\n  name: one\n  layers: "
			 "[{name: l, fwd_flops: 1.0e12, params: 1.0e6}]\n"
			 "cluster:\n  devices: 1\n  device: %s\n"
			 "pipeline: {microbatches: 1}\n", devices[k]);
		planned r;
		plan_text(&r, yaml);
		ck_assert_msg(r.status == 0, "%s", r.diag.text);
		const ppcc_device_group *g = &r.cfg.cluster.groups[0];
		ck_assert_double_eq_tol(g->fp8_gain, gain[k], 1e-12);
		ck_assert_int_eq(g->fp8_fitted, k == 0);
		done(&r);
	}
}
END_TEST

/* pipeline.overlap.tp_comm, by hand: a layer whose collectives feed
 * 1e12 FLOPs of products on a rank of t 2 devices of 100 TFLOP/s at
 * efficiency 1 (0.005 s forward, 0.01 s for the backward's two) with
 * communication taking a quarter of the SMs: collectives of 0.004 s
 * forward and 0.008 s backward hide 0.75 of themselves, 0.003 and
 * 0.006 s; of 0.01 s forward they hide 0.005, all the products last.
 * Without the overlap they hide nothing. */
START_TEST(tp_overlap_hides_the_collectives_by_hand)
{
	ppcc_layer l = {.fwd_flops = 1e12, .tp_gemm_flops = 1e12};
	ppcc_device_group dg = {.tflops = 100, .efficiency = 1};
	ppcc_config cfg = {0};
	cfg.model.layers = &l;
	cfg.model.n_layers = 1;
	cfg.pipeline.tensor_parallel = 2;
	cfg.pipeline.overlap.tp_comm = 1;
	cfg.pipeline.overlap.comm_sm_share = 0.25;
	double tf[1] = {0.004}, tb[1] = {0.008};
	ppcc_cost_layer_comm lc = {.tp_f = tf, .tp_b = tb};
	double hf, hb;
	ppcc_cost_tp_hidden(&hf, &hb, &cfg, &lc, 0, &dg);
	ck_assert_msg(fabs(hf - 0.003) < 1e-15 && fabs(hb - 0.006) < 1e-15,
		      "%.17g %.17g", hf, hb);
	tf[0] = 0.01;
	ppcc_cost_tp_hidden(&hf, &hb, &cfg, &lc, 0, &dg);
	ck_assert_msg(fabs(hf - 0.005) < 1e-15, "%.17g", hf);
	cfg.pipeline.overlap.tp_comm = 0;
	ppcc_cost_tp_hidden(&hf, &hb, &cfg, &lc, 0, &dg);
	ck_assert(hf == 0 && hb == 0);
}
END_TEST

START_TEST(loss_stage_keeps_logits_in_16_bits_and_fp32)
{
	planned r;
	plan_text(&r, SMALL_GPT("") "cluster:\n"
		  "  devices: 2\n"
		  "  device: {name: x, tflops: 100, efficiency: 1, memory_gib: 80}\n"
		  "pipeline: {tensor_parallel: 2, microbatches: 4}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	/* 6*s*b*V split over t: 6 * 1024 * 1000 / 2, one microbatch in
	 * flight at the peak of a single-stage 1F1B */
	ck_assert_double_eq(r.plan.best.costs[0].logits_bytes, 3072000.0);
	ck_assert_double_eq(r.plan.best.iteration->logits_bytes[0], 3072000.0);
	done(&r);
}
END_TEST

#define ONE_LAYER(params) \
	"model:\n" \
	"  name: one\n" \
	"  layers: [{name: l, fwd_flops: 1.0e12, params: " params "}]\n"
#define ONE_DEVICE_GROUP(n) \
	"cluster:\n" \
	"  devices: " n "\n" \
	"  device: {name: x, tflops: 100, efficiency: 0.5, memory_gib: 80, " \
	"memory_bandwidth_gb_s: 1000}\n" \
	"  links: {intra_node: {bandwidth_gb_s: 100, latency_us: 0}}\n"

START_TEST(mfu_of_a_single_device_plan)
{
	planned r;
	plan_text(&r, ONE_LAYER("1.0e6") ONE_DEVICE_GROUP("1")
		  "pipeline: {microbatches: 4}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_iteration *it = r.plan.best.iteration;
	/* F 1e12 / 5e13 = 20 ms, B 40 ms, 4 microbatches: 240 ms; the
	 * gradients' norm and clip read 4 bytes of each of 1e6 parameters
	 * and scale them in place (3 x 4), one device all-reduces nothing,
	 * and Adam touches (26 + 4) bytes of each, at 1 TB/s: 0.042 ms */
	ck_near(it->step_ms, 240.0);
	ck_near(it->optimizer_ms, 0.042);
	ck_assert_double_eq(it->dp_exposed_ms, 0);
	ck_near(it->iteration_ms, 240.042);
	/* 4 * 3e12 model FLOPs in 0.240042 s on one 100 TFLOP/s device */
	ck_near(it->model_flops, 1.2e13);
	ck_near(it->mfu, 1.2e13 / 0.240042 / 1e14);
	ck_near(it->model_tflops_per_device, 1.2e13 / 0.240042 / 1e12);
	ck_assert_int_eq(it->global_batch_size, 4);
	ck_assert_double_eq(it->tokens_per_s, 0); /* no sequence length */
	/* breakdown: all compute, no bubble on one rank */
	ck_near(it->compute_ms, 240.0);
	ck_assert_double_eq(it->bubble_ms, 0);
	/* static memory: 18 bytes per parameter */
	ck_assert_double_eq(it->weight_bytes[0], 2e6);
	ck_assert_double_eq(it->grad_bytes[0], 4e6);
	ck_assert_double_eq(it->optimizer_bytes[0], 12e6);
	done(&r);
}
END_TEST

START_TEST(gradient_buckets_reduce_as_the_last_backward_produces_them)
{
	planned r;
	/* d = 2 (the devices left over); 1e8 parameters in buckets of
	 * 40M, 40M and 20M (3 REDUCE_GRAD: 1.6e8, 1.6e8 and 0.8e8 of the
	 * 4e8 gradient bytes), ready as the last B (200-240 ms) produces
	 * them: at 200 + 40 x 0.4 = 216, 200 + 40 x 0.8 = 232 and 240; a
	 * ring all-reduce on 2 ranks of 4-byte gradients at 100 GB/s takes
	 * 13.4 us (NCCL's 6.6 + 2 x 3.4) + 1.6, 1.6 and 0.8 ms: 216-217.6134,
	 * 232-233.6134, 240-240.8134, so 0.8134 ms of the 4.0402 exposed. */
	plan_text(&r, ONE_LAYER("1.0e8") ONE_DEVICE_GROUP("2")
		  "pipeline: {microbatches: 4}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_iteration *it = r.plan.best.iteration;
	ck_assert_int_eq(it->data_parallel, 2);
	ck_assert_int_eq(it->global_batch_size, 8);
	ck_assert_int_eq(it->dp_reductions, 3);
	ck_assert_int_eq(r.plan.best.costs[0].dp_ready_mid, 1);
	ck_near(it->dp_comm_ms, 4.0402);
	ck_near(it->dp_exposed_ms, 0.8134);
	ck_near(it->dp_hidden_ms, 4.0402 - 0.8134);
	/* 30 + 12 bytes x 1e8 at 1 TB/s; without the distributed
	 * optimizer Megatron-LM all-reduces the norm over t x p = 1 */
	ck_near(it->optimizer_ms, 4.2);
	ck_near(it->iteration_ms, 245.0134);
	/* 2 replicas x 4 x 3e12 FLOPs over 2 x 100 TFLOP/s */
	ck_near(it->mfu, 2.4e13 / 0.2450134 / 2e14);
	/* as libppcc_rt launches them, after the backward returns (its
	 * prediction's rule, dp_ready_mid 0): one after another from 240,
	 * all 4.0402 ms exposed */
	{
		ppcc_arena *a = ppcc_arena_new();
		ppcc_stage_cost c = r.plan.best.costs[0];
		ppcc_estimate e;
		c.dp_ready_mid = 0;
		ck_assert_int_eq(ppcc_simulate(&e, a, &r.plan.best.schedule, &c), 0);
		ck_near(e.dp_end_ms[0], 244.0402);
		ck_near(r.plan.best.estimate.dp_end_ms[0], 240.8134);
		ppcc_arena_free(a);
	}
	done(&r);

	/* ZeRO-1: the 16-bit weights all-gathered, bucket by bucket, from
	 * the step's start (3 x 10 us + 1/2 x 2e8 / 1e11 = 1.03 ms: 0-0.41,
	 * 0.41-0.82, 0.82-1.03); the forward needs the second bucket after
	 * 0.4 of its 20 ms and the third after 0.8, so it starts at 0.41
	 * (max(0.41, 0.82 - 8, 1.03 - 16)) and the step is 240.41; the
	 * reduce-scatters (10 us + 0.8, 0.8, 0.4 ms) run from 216.41,
	 * 232.41 and 240.41, the last 0.41 ms past the step; half the
	 * parameters updated (1.5 ms, and 0.6 ms of norm and clip), the
	 * norm's float all-reduced over both ranks (norm_ar). */
	plan_text(&r, ONE_LAYER("1.0e8") ONE_DEVICE_GROUP("2")
		  "pipeline: {microbatches: 4, zero: 1}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	it = r.plan.best.iteration;
	ck_near(it->dp_comm_ms, 2.03);
	ck_near(it->dp_exposed_ms, 0.41 + 0.41);
	ck_near(it->optimizer_ms, 1.5 + 0.6 + norm_ar(&r, 2));
	ck_near(it->iteration_ms, 240 + 0.41 + 0.41 + 2.1 + norm_ar(&r, 2));
	/* 2 + 4 + 12/2 bytes per parameter */
	ck_assert_double_eq(it->weight_bytes[0], 2e8);
	ck_assert_double_eq(it->grad_bytes[0], 4e8);
	ck_assert_double_eq(it->optimizer_bytes[0], 6e8);
	ck_assert_double_eq(r.plan.best.costs[0].static_bytes, 12e8);
	done(&r);
}
END_TEST

/* ZeRO-1 with a link latency: the schedule reduce-scatters each bucket
 * (1.6e8, 1.6e8 and 0.8e8 gradient bytes: 0.01 + 0.8, 0.01 + 0.8 and
 * 0.01 + 0.4 ms) and opens the step with an ALL_GATHER_PARAM of each
 * bucket's 16-bit weights (0.8e8, 0.8e8, 0.4e8 bytes: 0.01 + 0.4, 0.01 +
 * 0.4, 0.01 + 0.2 ms, 1.03 ms in all), timed one after another on the
 * rank's channel from 0 (0-0.41, 0.41-0.82, 0.82-1.03); the one stage's
 * first forward (20 ms) needs the first bucket at its start, the second
 * after 0.4 of it and the third after 0.8 (Megatron-LM's forward
 * pre-hooks), so it starts at max(0.41, 0.82 - 8, 1.03 - 16) = 0.41
 * (exposed 0.41 ms: no other stage to hide them behind), the step is
 * 240.41, its bubble 0; the reduce-scatters, ready at 216.41, 232.41
 * and 240.41 as the last B produces them, end 0.41 ms past it; the
 * iteration is 240.41 + 0.41 + 1.5. */
START_TEST(zero1_gathers_open_the_step_and_are_charged_whole)
{
	planned r;
	plan_text(&r, ONE_LAYER("1.0e8")
		  "cluster:\n  devices: 2\n"
		  "  device: {name: x, tflops: 100, efficiency: 0.5, memory_gib: 80, "
		  "memory_bandwidth_gb_s: 1000}\n"
		  "  links: {intra_node: {bandwidth_gb_s: 100, latency_us: 10}}\n"
		  "pipeline: {microbatches: 4, zero: 1}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_plan_variant *b = &r.plan.best;
	const ppcc_iteration *it = b->iteration;
	const ppcc_rank_schedule *rs = &b->schedule.ranks[0];
	ck_assert_int_eq(b->schedule.version, 4);
	ck_assert_int_eq(it->dp_reductions, 3);
	ck_assert_int_eq(it->dp_gathers, 3);
	ck_near(it->dp_gather_ms, 1.03);
	ck_near(it->dp_gather_exposed_ms, 0.41);
	ck_near(b->estimate.dp_gather_ms[0], 1.03);
	ck_near(b->estimate.dp_gather_wait_ms[0], 0.41);
	ck_near(b->estimate.dp_ready_ms[0], 0.41);
	ck_near(it->dp_comm_ms, 2.03);
	ck_near(it->dp_exposed_ms, 0.41 + 0.41);
	ck_assert_double_eq_tol(it->bubble_ms, 0, 1e-9);
	ck_near(it->iteration_ms, 240.41 + 0.41 + 2.1 + norm_ar(&r, 2));
	ck_near(b->estimate.step_ms, 240.41);
	static const double want_start[] = {0, 0.41, 0.82};
	ppcc_rank_times t;
	ck_assert_int_eq(ppcc_rank_times_begin(&t, &b->schedule, b->costs,
					       &b->estimate, 0), 0);
	for (int k = 0; k < 3; k++) {
		double t0, t1;
		ck_assert_int_eq(rs->actions[k].op, PPCC_OP_ALL_GATHER_PARAM);
		ck_assert_int_eq(rs->actions[k].mb, k);
		ck_assert_uint_eq(rs->actions[k].bytes, k < 2 ? 80000000u : 40000000u);
		ck_assert_int_eq(ppcc_rank_times_at(&t, k, &t0, &t1), 0);
		ck_assert_double_eq_tol(t0, want_start[k], 1e-12);
		ck_assert_double_eq_tol(t1, k < 2 ? want_start[k + 1] : 1.03, 1e-12);
	}
	ck_assert_int_eq(rs->actions[3].op, PPCC_OP_F);
	{
		double t0, t1;
		ck_assert_int_eq(ppcc_rank_times_at(&t, 3, &t0, &t1), 0);
		ck_assert_double_eq_tol(t0, 0.41, 1e-12);
	}
	int n = rs->n_actions;
	for (int k = 0; k < 3; k++) {
		ck_assert_int_eq(rs->actions[n - 3 + k].op, PPCC_OP_REDUCE_SCATTER_GRAD);
		ck_assert_int_eq(rs->actions[n - 3 + k].mb, k);
	}
	done(&r);

	/* ZeRO-3 gathers for each compute instead: UNSHARD_PARAM, and no
	 * ALL_GATHER_PARAM */
	plan_text(&r, ONE_LAYER("1.0e8") ONE_DEVICE_GROUP("2")
		  "pipeline: {microbatches: 4, zero: 3}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	rs = &r.plan.best.schedule.ranks[0];
	ck_assert_int_eq(rs->actions[0].op, PPCC_OP_UNSHARD_PARAM);
	for (int i = 0; i < rs->n_actions; i++)
		ck_assert_int_ne(rs->actions[i].op, PPCC_OP_ALL_GATHER_PARAM);
	done(&r);
}
END_TEST

/* FSDP's peak, per block: a stage of four 1e8-parameter blocks and a
 * 3e8-parameter embedding, ZeRO-3 over d = 4, holds two gather buffers
 * of its largest layer (2 x 6e8 bytes), not of the whole stage's 1.4e9
 * bytes of 16-bit weights. */
START_TEST(zero3_peak_holds_two_buffers_of_the_largest_layer)
{
	planned r;
	plan_text(&r, "model:\n"
		  "  name: m\n"
		  "  layers:\n"
		  "    - {name: e, fwd_flops: 1.0e12, params: 3.0e8}\n"
		  "    - {name: b, fwd_flops: 1.0e12, params: 1.0e8, repeat: 4}\n"
		  ONE_DEVICE_GROUP("4")
		  "pipeline: {stages: 1, data_parallel: 4, microbatches: 2, zero: 3}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_plan_variant *b = &r.plan.best;
	ck_assert_double_eq(b->costs[0].zero3_param_bytes, 2 * 6e8);
	/* (2 + 4 + 12) / 4 bytes of each of 7e8 parameters, the buffers */
	ck_assert_double_eq(b->costs[0].static_bytes, 7e8 * 4.5);
	ck_assert_double_eq(b->estimate.peak_memory_bytes[0],
			    7e8 * 4.5 + 1.2e9);
	ck_assert_double_eq(b->iteration->weight_bytes[0], 7e8 * 0.5 + 1.2e9);
	done(&r);
}
END_TEST

/* ZeRO-3, d = 2, p = 1, m = 4, F 20 ms, B 40 ms: each F and B has a
 * group of UNSHARD_PARAM, the layer's 16-bit weights in the gradient
 * buckets' slices (0.8e8, 0.8e8, 0.4e8 bytes: 0.4 + 0.4 + 0.2 ms at 1/2
 * x bytes / 1e11, and 10 us each, NCCL's ring of one step: 1.03 ms a
 * group), and every B its reduce-scatters (0.8, 0.8, 0.4 ms and 10 us
 * each: 2.03 ms).  The list, C0..C7 = F0 B0 F1 B1 F2 B2 F3 B3:
 *   G0 G1 F0 G2 B0 G3 RS F1 G4 B1 G5 RS F2 G6 B2 G7 RS F3 B3 RS
 * (each group right after the compute two before its own, the gathers
 * before the reduce-scatters).  On the channel: G0 0-1.03, G1
 * 1.03-2.06; F0 waits for G0: 1.03-21.03 (the 1.03 ms exposed); G2
 * 21.03-22.06, B0 21.03-61.03; G3 61.03-62.06, RS 62.06-64.09, F1
 * 61.03-81.03; ... F3 181.03-201.03, B3 201.03-241.03, its RS ready
 * as B3 produces them (1.6e8, 1.6e8 and 0.8e8 of 4e8 bytes: at 217.03,
 * 233.03 and 241.03) and run 217.03-217.84, 233.03-233.84 and
 * 241.03-241.44.  So the step is 241.03 ms (it would be 248.24 with the
 * gathers inside F and B), 1.03 ms of it the gathers' (the "ZeRO-3
 * parameter gathers" part, out of the bubble), the other 7.21 of their
 * 8.24 ms hidden; the reductions end 0.41 ms after the step (their
 * other 7.71 ms hidden); Adam on half the parameters, 1.5 ms; no
 * all-gather after the step.  Memory: the shards, (2 + 4 + 12) / 2
 * bytes a parameter, and two gather buffers of the largest layer's 2e8
 * bytes of weights (its only one). */
START_TEST(zero3_gathers_weights_and_reduces_every_backward)
{
	planned r;
	plan_text(&r, ONE_LAYER("1.0e8") ONE_DEVICE_GROUP("2")
		  "pipeline: {microbatches: 4, zero: 3}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_plan_variant *b = &r.plan.best;
	const ppcc_iteration *it = b->iteration;
	const ppcc_rank_schedule *rs = &b->schedule.ranks[0];
	ck_assert_int_eq(b->schedule.version, 5);
	ck_near(b->costs[0].fwd_ms, 20.0);
	ck_near(b->costs[0].bwd_ms, 40.0);
	/* two buffers of its one layer's 2e8 bytes of 16-bit weights */
	ck_assert_double_eq(b->costs[0].zero3_param_bytes, 4e8);
	/* G = 3 gathers, R = 3 reduce-scatters */
	static const char want[] = "GGFGBGRFGBGRFGBGRFBR";
	ck_assert_int_eq(rs->n_actions, 4 * 2 + 8 * 3 + 4 * 3);
	int k = 0;
	for (int i = 0; i < rs->n_actions; i++) {
		int op = rs->actions[i].op;
		char c = op == PPCC_OP_UNSHARD_PARAM ? 'G'
			: op == PPCC_OP_REDUCE_SCATTER_GRAD ? 'R'
			: op == PPCC_OP_F ? 'F' : op == PPCC_OP_B ? 'B' : '?';
		ck_assert_msg(c == want[k], "action %d: %c, not %c", i, c, want[k]);
		if (c == 'G' || c == 'R') {
			ck_assert_int_eq(rs->actions[i].mb, 0);
			ck_assert_uint_eq(rs->actions[i].bytes, c == 'G' ? 80000000u
								  : 160000000u);
			ck_assert_int_eq(rs->actions[i + 1].mb, 1);
			ck_assert_int_eq(rs->actions[i + 2].mb, 2);
			ck_assert_uint_eq(rs->actions[i + 2].bytes, c == 'G' ? 40000000u
									  : 80000000u);
			i += 2;
		}
		k++;
	}
	ck_assert_int_eq(k, (int)sizeof want - 1);
	ck_near(it->step_ms, 241.03);
	ck_near(b->estimate.dp_gather_ms[0], 8.24);
	ck_near(b->estimate.dp_gather_wait_ms[0], 1.03);
	ck_near(b->estimate.dp_end_ms[0], 241.44);
	ck_assert_int_eq(it->dp_gathers, 24);
	ck_assert_int_eq(it->dp_reductions, 12);
	ck_near(it->dp_gather_ms, 8.24);
	ck_near(it->dp_gather_exposed_ms, 1.03);
	ck_near(it->zero3_comm_ms, 1.03);
	ck_near(it->compute_ms, 240.0);
	ck_assert_double_eq_tol(it->bubble_ms, 0, 1e-9);
	ck_near(it->dp_comm_ms, 8.12);
	ck_near(it->dp_hidden_ms, 7.71);
	ck_near(it->dp_exposed_ms, 0.41);
	ck_near(it->optimizer_ms, 2.1 + norm_ar(&r, 2));
	ck_near(it->iteration_ms, 241.03 + 0.41 + 2.1 + norm_ar(&r, 2));
	/* F3 waits for G6 and B3 for G7, both done before: hidden */
	ppcc_rank_times t;
	ck_assert_int_eq(ppcc_rank_times_begin(&t, &b->schedule, b->costs,
					       &b->estimate, 0), 0);
	for (int i = 0; i < rs->n_actions; i++) {
		double t0, t1;
		ck_assert_int_eq(ppcc_rank_times_at(&t, i, &t0, &t1), 0);
		if (i == 6) /* F0 */
			ck_assert_double_eq_tol(t0, 1.03, 1e-9);
		if (i == rs->n_actions - 4) /* B3 */
			ck_assert_double_eq_tol(t0, 201.03, 1e-9);
		if (i == rs->n_actions - 1) /* its last reduce-scatter */
			ck_assert_double_eq_tol(t1, 241.44, 1e-9);
	}
	/* (2 + 4 + 12) / 2 bytes per parameter, and the two buffers */
	ck_assert_double_eq(it->weight_bytes[0], 1e8 + 4e8);
	ck_assert_double_eq(it->grad_bytes[0], 2e8);
	ck_assert_double_eq(it->optimizer_bytes[0], 6e8);
	ck_assert_double_eq(b->costs[0].static_bytes, 9e8);
	ck_assert_double_eq(b->estimate.peak_memory_bytes[0], 9e8 + 4e8);
	done(&r);
}
END_TEST

START_TEST(measured_times_convert_on_the_group_and_t_they_were_measured)
{
	const char *yaml =
		"model:\n"
		"  name: m\n"
		"  measured_on: %s\n"
		"  measured_tensor_parallel: 2\n"
		"  layers: [{name: l, fwd_ms: 1, params: 1}]\n"
		"cluster:\n"
		"  groups:\n"
		"    - {name: a, count: 2, tflops: 100, efficiency: 1, memory_gib: 80}\n"
		"    - {name: b, count: 2, tflops: 200, efficiency: 0.5, "
		"memory_gib: 80}\n"
		"pipeline: {stages: 1, data_parallel: 1}\n";
	char text[1024];
	planned r;
	/* 1 ms on 2 devices of b: 1e-3 s x 2 x 200e12 x 0.5 FLOP/s */
	snprintf(text, sizeof text, yaml, "b");
	plan_text(&r, text);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_double_eq(r.cfg.model.layers[0].fwd_flops, 2e11);
	done(&r);
	snprintf(text, sizeof text, yaml, "c");
	expect_error(text, "3:3: error: model.measured_on: no device group is "
		     "named 'c'");
}
END_TEST

START_TEST(global_batch_gives_microbatches_per_replica)
{
	planned r;
	plan_text(&r, ONE_LAYER("1.0e6") ONE_DEVICE_GROUP("4")
		  "pipeline: {global_batch_size: 32}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	/* p = 1 (one layer), d = 4, m = 32 / (1 * 4) */
	ck_assert_int_eq(r.cfg.pipeline.data_parallel, 4);
	ck_assert_int_eq(r.cfg.pipeline.microbatches, 8);
	ck_assert_int_eq(r.plan.best.iteration->global_batch_size, 32);
	done(&r);
}
END_TEST

/* pipeline.dp_bucket_mb cuts the buckets: 1e8 parameters of 4 bytes in
 * buckets of 100 MB are 4 REDUCE_GRAD of 1e8 bytes, after the last B;
 * outside 1 to 1000000 it is an error at the value. */
START_TEST(dp_bucket_mb_sets_the_buckets_and_is_checked)
{
	planned r;
	plan_text(&r, ONE_LAYER("1.0e8") ONE_DEVICE_GROUP("2")
		  "pipeline: {microbatches: 4, dp_bucket_mb: 100}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_rank_schedule *rs = &r.plan.best.schedule.ranks[0];
	ck_assert_int_eq(rs->n_actions, 4 + 4 + 4);
	for (int k = 0; k < 4; k++) {
		const ppcc_action *x = &rs->actions[8 + k];
		ck_assert_int_eq(x->op, PPCC_OP_REDUCE_GRAD);
		ck_assert_int_eq(x->mb, k);
		ck_assert_uint_eq(x->bytes, 100000000);
	}
	ck_assert_int_eq(rs->actions[7].op, PPCC_OP_B);
	ck_assert_int_eq(r.plan.best.iteration->dp_reductions, 4);
	/* the budget counts them: 8 compute actions and 4 reductions */
	ck_assert_int_eq(ppcc_plan_reduction_bound(&r.cfg), 4);
	ck_assert_int_eq(ppcc_plan_action_bound(&r.cfg), 12);
	done(&r);
	/* d = 1: no reductions */
	plan_text(&r, ONE_LAYER("1.0e8") ONE_DEVICE_GROUP("1")
		  "pipeline: {microbatches: 4, dp_bucket_mb: 100}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_int_eq(r.plan.best.schedule.ranks[0].n_actions, 8);
	ck_assert_int_eq(ppcc_plan_reduction_bound(&r.cfg), 0);
	ck_assert_int_eq(ppcc_plan_action_bound(&r.cfg), 8);
	done(&r);
	expect_error(ONE_LAYER("1.0e8") ONE_DEVICE_GROUP("2")
		     "pipeline: {microbatches: 4, dp_bucket_mb: 0.5}\n",
		     "8:43: error: pipeline.dp_bucket_mb: expected megabytes "
		     "from 1 to 1000000, got '0.5'");
	expect_error(ONE_LAYER("1.0e8") ONE_DEVICE_GROUP("2")
		     "pipeline: {microbatches: 4, dp_bucket_mb: -3}\n",
		     "pipeline.dp_bucket_mb: expected a positive finite number");
}
END_TEST

/* One rule for when a reduction runs: the simulator's dp_end_ms and the
 * iteration's agree to the last bit on every kind, with many buckets a
 * stage, as the trainers launch them (dp_ready_mid); the runtime's
 * prediction (ppcc_dp_reduce_timeline) agrees with the simulation of
 * the same costs with dp_ready_mid 0, libppcc_rt's rule, and ends no
 * earlier (ZeRO 0 and 1; 2 and 3 add the earlier backwards'
 * reduce-scatters, which the schedule does not hold). */
START_TEST(simulator_iteration_and_prediction_time_reductions_alike)
{
	static const char *const kinds[] = {"gpipe", "1f1b", "interleaved",
		"zb-h1", "zb-h2", "zb-v", "zb-interleaved"};
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		for (int zero = 0; zero <= 1; zero++) {
			char yaml[2048];
			int v = k == 2 || k >= 5 ? 2 : 1;
			snprintf(yaml, sizeof yaml,
				 "model:\n  name: eight\n  layers:\n"
				 "    - {name: l, repeat: 8, fwd_flops: 1.0e12, "
				 "params: 3.0e7, activation_bytes: 1.0e8}\n"
				 ONE_DEVICE_GROUP("4")
				 "pipeline: {stages: 2, chunks: %d, microbatches: "
				 "8, schedule: %s, zero: %d, dp_bucket_mb: 50}\n",
				 v, kinds[k], zero);
			planned r;
			plan_text(&r, yaml);
			ck_assert_msg(r.status == 0, "%s: %s", kinds[k], r.diag.text);
			const ppcc_plan_variant *b = &r.plan.best;
			const ppcc_estimate *e = &b->estimate;
			double end[2], step;
			ppcc_arena *a = ppcc_arena_new();
			int S = b->schedule.n_stages;
			ppcc_stage_cost *rt = ppcc_arena_alloc(a, (size_t)S, sizeof *rt);
			ppcc_estimate er;
			for (int st = 0; st < S; st++) {
				ck_assert_int_eq(b->costs[st].dp_ready_mid, 1);
				rt[st] = b->costs[st];
				rt[st].dp_ready_mid = 0;
			}
			ck_assert_int_eq(ppcc_simulate(&er, a, &b->schedule, rt), 0);
			ck_assert_int_eq(ppcc_dp_reduce_timeline(end, &step, &b->schedule,
								 rt, &er, NULL), 0);
			for (int rk = 0; rk < 2; rk++) {
				ck_assert_double_eq(end[rk], er.dp_end_ms[rk]);
				ck_assert(e->dp_end_ms[rk] <= er.dp_end_ms[rk]);
				ck_assert_double_eq(b->iteration->dp_end_ms[rk],
						    e->dp_end_ms[rk]);
			}
			ck_assert_double_eq(step, er.dp_step_ms);
			ppcc_arena_free(a);
			/* what lengthens the iteration is what the simulator
			 * puts after the pipeline's step */
			if (zero == 0)
				ck_assert_double_eq(b->iteration->dp_exposed_ms,
						    e->dp_step_ms - e->step_ms);
			/* layers of 1.2e8 gradient bytes, buckets of 5e7
			 * bytes: ceil(2.4 x layers) a stage */
			long want = 0;
			for (int st = 0; st < 2 * v; st++) {
				int n = b->stages[st].last_layer -
					b->stages[st].first_layer + 1;
				want += (long)ceil(2.4 * n - 1e-9);
			}
			ck_assert_int_eq(b->iteration->dp_reductions, want);
			ck_assert(e->dp_step_ms > e->step_ms);
			done(&r);
		}
}
END_TEST

static void expect_error(const char *yaml, const char *want)
{
	planned r;
	plan_text(&r, yaml);
	ck_assert_int_eq(r.status, PPCC_EINPUT);
	ck_assert_msg(strstr(r.diag.text, want), "want '%s' in:\n%s", want,
		      r.diag.text);
	done(&r);
}

START_TEST(parallel_sizes_that_do_not_divide_are_located_errors)
{
	expect_error(ONE_LAYER("1") ONE_DEVICE_GROUP("6")
		     "pipeline:\n  global_batch_size: 32\n",
		     "9:3: error: global_batch_size 32 is not a multiple of "
		     "micro_batch_size x data_parallel = 1 x 6 = 6");
	expect_error(ONE_LAYER("1") ONE_DEVICE_GROUP("4")
		     "pipeline:\n  global_batch_size: 32\n  microbatches: 4\n",
		     "10:3: error: 4 microbatches x micro_batch_size 1 x "
		     "data_parallel 4 = 16 sequences, but global_batch_size is "
		     "32; give one of the two");
	expect_error(SMALL_GPT("") ONE_DEVICE_GROUP("10")
		     "pipeline:\n  stages: 4\n",
		     "4:1: error: 10 devices are not a multiple of tensor x "
		     "pipeline parallel = 1 x 4 = 4; give pipeline.data_parallel "
		     "or a multiple of 4 devices");
	expect_error(SMALL_GPT("") ONE_DEVICE_GROUP("8")
		     "pipeline:\n  data_parallel: 3\n  stages: 3\n",
		     "9:3: error: 1-way tensor x 3 stages x 1-way context x "
		     "3-way data parallelism need 9 devices; the cluster has 8");
	expect_error(SMALL_GPT("") ONE_DEVICE_GROUP("8")
		     "pipeline:\n  tensor_parallel: 3\n  data_parallel: 1\n",
		     "9:3: error: 3-way tensor parallelism does not divide the "
		     "16 heads (line 3)");
	/* tensor parallelism beyond a node: a warning, the inter-node link */
	planned r;
	plan_text(&r, SMALL_GPT("") "cluster:\n"
		  "  devices: 8\n"
		  "  devices_per_node: 4\n"
		  "  device: {name: x, tflops: 100, efficiency: 1, memory_gib: 80}\n"
		  "pipeline:\n  tensor_parallel: 8\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_msg(strstr(r.diag.text, "9:3: warning: 8-way tensor "
			     "parallelism spans nodes of 4 devices; its "
			     "collectives are charged to the inter-node link"),
		      "%s", r.diag.text);
	/* the inter-node link's default, 25 GB/s a device: 2 nodes of 4,
	 * a bus of 4 x 25 GB/s; sequence parallel: an all-gather and a
	 * reduce-scatter, each a ring of 7 steps, one across nodes (NCCL's
	 * 6.6 + 6 x 3.4 + 14 us) + 7/8 * 2097152 / 100e9; five in the
	 * forward */
	ck_near(r.plan.best.costs[0].tp_fwd_ms,
		5e3 * 2 * (41e-6 + 0.875 * 2097152 / 100e9));
	done(&r);

	/* implausible but computable: a warning, and the plan */
	plan_text(&r, ONE_LAYER("1")
		  "cluster:\n  devices: 1\n"
		  "  device: {name: x, tflops: 20000, efficiency: 1, memory_gib: 8000}\n");
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.diag.text, "6:29: warning: cluster.device.tflops: "
			     "20000 TFLOP/s is faster than any device (above "
			     "10000 dense 16-bit)") &&
		      strstr(r.diag.text, "6:63: warning: cluster.device."
			     "memory_gib: 8000 GiB is more than any device "
			     "holds (above 4096)"), "%s", r.diag.text);
	done(&r);
}
END_TEST

/* Multi-head latent attention's down projections stay whole on every
 * tensor-parallel device (Megatron-LM duplicates them): a device holds
 * (params - whole)/t + whole, and a rank of t x cp devices t x cp times
 * that, at bpp bytes each. */
START_TEST(replicated_parameters_stay_whole_on_each_device)
{
	ppcc_layer l = {.params = 1000, .tp_replicated_params = 100};
	ppcc_pipeline p = {.tensor_parallel = 4, .context_parallel = 2,
			   .data_parallel = 1, .expert_parallel = 1};
	ck_assert_double_eq(ppcc_memory_device_params(&l, &p),
			    900.0 / 4 + 100);
	ppcc_memory_layer m;
	ppcc_memory_layer_terms(&m, &l, 4, 2, 16, NULL, 0, 1);
	ck_assert_double_eq(m.static_bytes, 900.0 * 16 * 2 + 100.0 * 16 * 4 * 2);
	l.tp_replicated_params = 0;
	ppcc_memory_layer_terms(&m, &l, 4, 2, 16, NULL, 0, 1);
	ck_assert_double_eq(m.static_bytes, 1000.0 * 16 * 2);
}
END_TEST

/* One all-to-all by hand: 16 ranks of one device each (etp 1) on nodes
 * of 8 send B bytes each, 15/16 of them away: 7/16 to the node's other
 * 7 over NVLink and 8/16 to the other node's 8 over the network at
 * once; the slower sets the time.  Inside one node only the first part
 * runs; one rank sends nothing.  Node-limited (DeepSeek-V3: 8 copies of
 * each token, at most 4 nodes of the group's 8), a token crosses the
 * network to 4 x 7/8 nodes and each copy crosses NVLink 7/8 of the
 * time. */
START_TEST(expert_all_to_all_by_hand)
{
	ppcc_cluster c = {.devices_per_node = 8,
			  .intra_node = {.bandwidth = 400e9, .latency = 1e-6},
			  .inter_node = {.bandwidth = 50e9, .latency = 5e-6}};
	double B = 64e6;
	ck_assert_double_eq(ppcc_comm_a2a_seconds(&c, 16, 1, B, 1, 0),
			    5e-6 + B * 8 / 16 / 50e9);
	ck_assert_double_eq(ppcc_comm_a2a_seconds(&c, 8, 1, B, 1, 0),
			    1e-6 + B * 7 / 8 / 400e9);
	/* 4 ranks 2 devices apart span 8: one node */
	ck_assert_double_eq(ppcc_comm_a2a_seconds(&c, 4, 2, B, 1, 0),
			    1e-6 + B * 3 / 4 / 400e9);
	ck_assert_double_eq(ppcc_comm_a2a_seconds(&c, 1, 8, B, 1, 0), 0);
	/* two copies of each token without a limit: twice the bytes */
	ck_assert_double_eq(ppcc_comm_a2a_seconds(&c, 16, 1, B, 2, 0),
			    5e-6 + B * 2 * 8 / 16 / 50e9);
	/* node-limited: 64 ranks on 8 nodes, 8 copies, at most 4 nodes */
	ck_assert_double_eq(ppcc_comm_a2a_seconds(&c, 64, 1, B, 8, 4),
			    5e-6 + B * 4 * (8.0 - 1) / 8 / 50e9);
	/* a limit above the copies or the nodes does not bind */
	ck_assert_double_eq(ppcc_comm_a2a_seconds(&c, 16, 1, B, 2, 4),
			    5e-6 + B * 2 * (2.0 - 1) / 2 / 50e9);

	/* group-limited routing: DeepSeek-V3's 256 experts in 8 groups, a
	 * token's from 4 of them.  Over ep 64 on 8 nodes of 8 a group's 32
	 * experts are one node's (4 ranks of 8 experts): 4 nodes; over ep
	 * 128 on 16 nodes a group spans 2 nodes: 8; over ep 8, one node,
	 * 4 groups reach past the one node: no limit (0); with etp 2,
	 * ep 64 spans 16 nodes, a group 2; node_limit 3 beside it binds */
	ppcc_transformer tf = {0};
	tf.moe = (ppcc_moe){.experts = 256, .top_k = 8, .groups = 8,
			    .group_topk = 4};
	ppcc_config cfg = {0};
	cfg.cluster = c;
	cfg.model.transformer = &tf;
	cfg.pipeline.tensor_parallel = 1;
	cfg.pipeline.expert_tensor_parallel = 1;
	static const struct { int ep, etp, node_limit, want; } g[] = {
		{64, 1, 0, 4}, {128, 1, 0, 8}, {8, 1, 0, 0}, {64, 2, 0, 8},
		{64, 1, 3, 3}, {1, 1, 0, 0}, {256, 1, 0, 16}};
	for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
		cfg.pipeline.expert_parallel = g[i].ep;
		cfg.pipeline.expert_tensor_parallel = g[i].etp;
		tf.moe.node_limit = g[i].node_limit;
		ck_assert_msg(ppcc_cost_expert_node_limit(&cfg) == g[i].want,
			      "case %zu: %d", i,
			      ppcc_cost_expert_node_limit(&cfg));
	}
	/* no groups: node_limit alone */
	tf.moe.groups = tf.moe.group_topk = 0;
	tf.moe.node_limit = 4;
	ck_assert_int_eq(ppcc_cost_expert_node_limit(&cfg), 4);
}
END_TEST

/* make fidelity's table, as doc/accuracy.md shows it, is what the
 * script prints, and every row is within 10% (the script's exit
 * status). */
START_TEST(fidelity_table_in_docs_is_what_make_fidelity_prints)
{
	char path[4096], script[4096];
	snprintf(path, sizeof path, "%s/doc/accuracy.md", tu_src());
	snprintf(script, sizeof script, "%s/tests/fidelity/run.sh", tu_src());
	char *readme = tu_read_file(path, NULL);
	ck_assert_ptr_nonnull(readme);
	const char *start = strstr(readme, "```\nmodel      t   p");
	ck_assert_msg(start != NULL, "doc/accuracy.md has no fidelity table");
	start += 4;
	const char *end = strstr(start, "```");
	ck_assert_ptr_nonnull(end);
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 300,
				     (char *[]){"sh", script, (char *)tu_ppcc(),
						NULL}), 0);
	ck_assert_msg(r.status == 0, "fidelity: %d\n%s%s", r.status, r.out,
		      r.err);
	size_t shown = (size_t)(end - start), k = 0;
	while (k < shown && r.out[k] && r.out[k] == start[k])
		k++;
	while (k > 0 && r.out[k - 1] != '\n')
		k--;
	ck_assert_msg(strlen(r.out) == shown && k == shown,
		      "doc/accuracy.md shows another table; from the first "
		      "line that differs, make fidelity prints:\n%.400s",
		      r.out + k);
	tu_run_free(&r);
	free(readme);
}
END_TEST

/* make fidelity checks the catalogue's tie band against the one the
 * rows give: a ppcc whose catalogue says another band (its `devices -f
 * json` rewritten) fails it, naming the band. */
START_TEST(fidelity_fails_when_the_catalogues_tie_band_is_not_the_rows)
{
	char *dir = tu_mkdtemp();
	char wrap[4096], text[8192], script[4096];
	snprintf(script, sizeof script, "%s/tests/fidelity/run.sh", tu_src());
	snprintf(text, sizeof text, "#!/bin/sh\n"
		 "if [ \"$1\" = devices ]; then\n"
		 "  '%s' \"$@\" | sed 's/\"tie_band_pct\": [0-9.]*/"
		 "\"tie_band_pct\": 3.9/'\n"
		 "else\n  exec '%s' \"$@\"\nfi\n", tu_ppcc(), tu_ppcc());
	tu_write_in(wrap, sizeof wrap, dir, "ppcc", text);
	ck_assert_int_eq(chmod(wrap, 0755), 0);
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 300,
				     (char *[]){"sh", script, wrap, NULL}), 0);
	ck_assert_msg(r.status == 1 && strstr(r.err, "the catalogue's a100 row "
		      "says a tie band of 3.9%; this run computes 4.4%"),
		      "exit %d\n%s%s", r.status, r.out, r.err);
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

Suite *suite_iteration(void)
{
	return tu_suite("iteration", "iteration", 300, (const TTest *const[]){
		expert_all_to_all_by_hand,
		replicated_parameters_stay_whole_on_each_device,
		zero_stages_give_published_bytes_per_param,
		fsdp_bytes_per_param_are_torchtitans,
		zero3_peak_holds_two_buffers_of_the_largest_layer,
		torchtitan_selective_keeps_every_other_matmul,
		flash_attention_counts_the_causal_half,
		fp8_prices_the_weight_products_and_holds_their_copies,
		tp_overlap_hides_the_collectives_by_hand,
		fsdp_llama3_8b_on_8_h100_fits_as_measured,
		memory_terms_of_a_layer_a_device_and_the_optimizer,
		ring_allreduce_in_a_node_takes_nccls_ring_latency,
		tree_allreduce_across_nodes_takes_the_trees_latency,
		allreduce_flips_from_tree_to_ring_at_nccls_threshold,
		allgather_with_nvls_and_without,
		dp_rates_take_the_algorithm_at_the_bucket_size,
		hsdp_reduces_in_the_shard_then_across_its_replicas,
		split_backward_frees_the_logits_at_the_input_gradient,
		topology_places_ranks_on_groups_nodes_and_links,
		layer_time_is_flops_collectives_and_kernels,
		tp_collectives_are_two_allreduces_per_block_each_way,
		p2p_sends_one_tth_of_the_activation_per_device,
		context_parallel_passes_k_and_v_around_the_ring,
		gpt_stash_matches_korthikanti_table_2,
		swiglu_gqa_stash_is_derived_from_the_kept_tensors,
		loss_stage_keeps_logits_in_16_bits_and_fp32,
		mfu_of_a_single_device_plan,
		gradient_buckets_reduce_as_the_last_backward_produces_them,
		zero1_gathers_open_the_step_and_are_charged_whole,
		zero3_gathers_weights_and_reduces_every_backward,
		measured_times_convert_on_the_group_and_t_they_were_measured,
		global_batch_gives_microbatches_per_replica,
		parallel_sizes_that_do_not_divide_are_located_errors,
		fidelity_table_in_docs_is_what_make_fidelity_prints,
		fidelity_fails_when_the_catalogues_tie_band_is_not_the_rows,
		dp_bucket_mb_sets_the_buckets_and_is_checked,
		simulator_iteration_and_prediction_time_reductions_alike,
		NULL});
}
