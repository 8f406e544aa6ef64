/*
 * comm.c - what communication costs: links, p2p boundaries, the
 * tensor- and context-parallel collectives inside a layer's compute and
 * the data-parallel collectives of a stage's buckets.
 *
 * Collectives follow NCCL's own cost model (graph/tuning.cc), Simple
 * protocol only: for each algorithm it can run - Ring, Tree (all-reduce),
 * NVLS and NVLSTree (NVLink SHARP nodes), PAT (all-gather and
 * reduce-scatter at one rank a node) - a latency of its steps and an
 * algorithm bandwidth from the bus bandwidth, time = latency + bytes /
 * bandwidth, and the least time wins, as NCCL's tuner picks.  Every
 * figure, with NCCL's commit, file and line, and how ppcc's links stand
 * for NCCL's topology search, is in doc/design/collectives.md; they live
 * here only.  Link latencies are not used by collectives (NCCL's own
 * per-step latencies are); links' bandwidths are.  Deterministic: plain
 * doubles, each expression in a fixed order.
 */
#include "ppcc.h"

/* NCCL 5067397, src/graph/tuning.cc (collectives.md gives the lines):
 * base latencies, per-step latencies over NVLink and the network, us */
#define BASE_TREE 6.8
#define BASE_RING 6.6
#define BASE_PAT 8.0
#define NVLINK_TREE 4.0
#define NVLINK_RING 3.4
#define NVLINK_NVLS 25.0
#define NET_TREE 14.0
#define NET_RING 14.0
#define NET_NVLS_TREE 20.9
/* an inter-node ring's post overhead, x3 for Simple (Intel or unknown
 * CPU: 1 us) */
#define NET_OVERHEAD_SIMPLE 3.0
#define TREE_DERATE 0.92     /* Tree all-reduce's bus bandwidth */
#define TREE_PATTERN_DERATE 0.85 /* a tree through one GPU a node */
#define PAT_DERATE 0.75
#define RING_PLATEAU 1.4     /* multi-node ring all-reduce, sm80 and up */
#define RING_PLATEAU_BYTES 64.0 /* per channel and rank */
#define MAX_CHANNELS 64.0    /* src/include/device.h: MAXCHANNELS */
#define NVLS_ARITY 32        /* src/include/device.h: NCCL_MAX_NVLS_ARITY */

/* tuning.cc treeCorrectionFactor, Simple row: Tree all-reduce's
 * bandwidth by log2(bytes / 64), 64 B up to 512 MiB */
static const double tree_correction[23] = {
	.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
	.5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9};

static int log2_floor(int64_t v)
{
	int r = -1;
	while (v > 0) {
		v >>= 1;
		r++;
	}
	return r;
}

static double nvls_efficiency(int nvls)
{
	return nvls == PPCC_NVLS_BLACKWELL ? 0.74
	       : nvls == PPCC_NVLS_HOPPER ? 0.85 : 0;
}

/* perChMaxNVLSTreeBws, GB/s a channel: on 2 nodes, on more */
static double nvls_tree_channel_cap(int nvls, int64_t nodes)
{
	if (nvls == PPCC_NVLS_BLACKWELL)
		return nodes <= 2 ? 96.0 : 80.0;
	return nodes <= 2 ? 57.7 : 45.5;
}

const char *ppcc_comm_algo_name(int algo)
{
	switch (algo) {
	case PPCC_COMM_TREE: return "tree";
	case PPCC_COMM_RING: return "ring";
	case PPCC_COMM_NVLS: return "nvls";
	case PPCC_COMM_NVLS_TREE: return "nvls-tree";
	case PPCC_COMM_PAT: return "pat";
	}
	return "none";
}

/* Where a collective of n ranks over `span` devices runs: its nodes
 * (at most n), ranks a node, and the bus bandwidth of a ring or a tree:
 * the node's link in one node, else the least of it and the network of
 * the node's ranks (each device its own port). */
typedef struct comm_shape {
	int n;
	int64_t nodes;
	double ppn;
	double intra, net, bus; /* bytes/s: node link, a device's network */
	int nvls;
} comm_shape;

static void comm_shape_of(comm_shape *out, const ppcc_cluster *c, int n,
			  int64_t span)
{
	out->n = n;
	out->nodes = ppcc_topo_span_nodes(c, span);
	if (out->nodes > n)
		out->nodes = n;
	out->ppn = (double)n / (double)out->nodes;
	out->intra = c->intra_node.bandwidth;
	out->net = c->inter_node.bandwidth;
	double net = out->ppn * out->net;
	out->bus = out->nodes == 1 ? out->intra
		   : net < out->intra ? net : out->intra;
	out->nvls = c->nvls;
}

/* The latency (s) and algorithm bandwidth (bytes/s) of algorithm `algo`
 * for collective `coll` of `bytes` on shape x: 1, or 0 where NCCL would
 * not run it. */
static int algo_cost(ppcc_comm_cost *out, const comm_shape *x, int coll,
		     int algo, double bytes)
{
	int n = x->n, ar = coll == PPCC_COMM_ALLREDUCE;
	int64_t N = x->nodes;
	int one = N == 1, ppn1 = x->ppn == 1;
	int nch = x->ppn < NVLS_ARITY ? (int)x->ppn : NVLS_ARITY;
	double lat, bw;
	if (n <= 1)
		return 0;
	switch (algo) {
	case PPCC_COMM_RING: {
		int64_t steps = ar ? 2 * (int64_t)(n - 1) : n - 1;
		int64_t inter = one ? 0 : ar ? 2 * (N - 1) : N - 1;
		double intra = NVLINK_RING;
		if (!one && NET_OVERHEAD_SIMPLE > intra)
			intra = NET_OVERHEAD_SIMPLE;
		lat = BASE_RING + (double)(steps - inter) * intra +
		      (double)inter * (ppn1 ? NET_TREE : NET_RING);
		if (ar && !one &&
		    bytes / (MAX_CHANNELS * n) >= RING_PLATEAU_BYTES)
			lat *= RING_PLATEAU;
		bw = x->bus * n / (double)steps;
		break;
	}
	case PPCC_COMM_TREE:
		if (!ar)
			return 0;
		lat = BASE_TREE + 2 * ((double)(n / N - 1) * NVLINK_TREE +
				       log2_floor(N) * NET_TREE);
		bw = x->bus * TREE_DERATE;
		if (!one && ppn1)
			bw *= TREE_PATTERN_DERATE;
		bw *= 0.5;
		{
			int ls = bytes >= 64 ? log2_floor((int64_t)bytes >> 6)
					     : -1;
			if (ls >= 0 && ls < 23)
				bw *= tree_correction[ls];
		}
		break;
	case PPCC_COMM_NVLS: {
		if (!x->nvls || !one || nch < 2 ||
		    (!ar && x->ppn > NVLS_ARITY))
			return 0;
		double intra = x->intra * nvls_efficiency(x->nvls) *
			       (nch - 1) / nch;
		lat = NVLINK_NVLS;
		bw = ar ? 2 * intra * n / (2.0 * (n - 1))
			: intra * (x->ppn - 1) / x->ppn;
		break;
	}
	case PPCC_COMM_NVLS_TREE: {
		if (!x->nvls || one || !ar || nch < 2)
			return 0;
		double intra = 2 * x->intra * nvls_efficiency(x->nvls) *
			       (nch - 1) / nch;
		double inter = x->ppn * x->net * (N <= 2 ? 2 : 1);
		double cap = nch * nvls_tree_channel_cap(x->nvls, N) * 1e9;
		double bus = intra < inter ? intra : inter;
		if (cap < bus)
			bus = cap;
		lat = NVLINK_NVLS + 2 * log2_floor(N) * NET_NVLS_TREE;
		bw = bus * n / (2.0 * (n - 1));
		break;
	}
	case PPCC_COMM_PAT:
		if (ar || !ppn1 || one)
			return 0;
		lat = BASE_PAT + log2_floor(N) * (NET_TREE / 3.5) + n * 2.8;
		bw = x->bus * PAT_DERATE;
		break;
	default:
		return 0;
	}
	out->algo = algo;
	out->latency = lat * 1e-6;
	out->bandwidth = bw;
	return 1;
}

/* NCCL's algorithms in its own order (NCCL_ALGO_*), which breaks ties */
static const int algo_order[] = {PPCC_COMM_TREE, PPCC_COMM_RING,
				 PPCC_COMM_NVLS, PPCC_COMM_NVLS_TREE,
				 PPCC_COMM_PAT};

int ppcc_comm_choose(ppcc_comm_cost *out, const ppcc_cluster *c, int coll,
		     int n, int64_t span, double bytes)
{
	comm_shape x;
	double best = 0;
	int found = 0;
	*out = (ppcc_comm_cost){PPCC_COMM_NONE, 0, 0};
	if (n <= 1)
		return 0;
	comm_shape_of(&x, c, n, span);
	for (size_t i = 0; i < sizeof algo_order / sizeof *algo_order; i++) {
		ppcc_comm_cost k;
		if (!algo_cost(&k, &x, coll, algo_order[i], bytes))
			continue;
		double t = k.latency + bytes / k.bandwidth;
		if (!found || t < best) {
			*out = k;
			best = t;
			found = 1;
		}
	}
	return found;
}

int ppcc_comm_algo_cost(ppcc_comm_cost *out, const ppcc_cluster *c,
			int coll, int algo, int n, int64_t span, double bytes)
{
	comm_shape x;
	*out = (ppcc_comm_cost){PPCC_COMM_NONE, 0, 0};
	comm_shape_of(&x, c, n > 0 ? n : 1, span);
	return algo_cost(out, &x, coll, algo, bytes);
}

double ppcc_comm_seconds(const ppcc_comm_cost *k, double bytes)
{
	return k->bandwidth > 0 ? k->latency + bytes / k->bandwidth : 0;
}

double ppcc_comm_link_seconds(const ppcc_link *l, double bytes)
{
	return l->latency + bytes / l->bandwidth;
}

double ppcc_comm_p2p_seconds(const ppcc_link *l, int shard, double bytes)
{
	return ppcc_comm_link_seconds(l, bytes / shard);
}

double ppcc_allreduce_seconds(const ppcc_cluster *c, int n, int64_t span,
			      double bytes)
{
	ppcc_comm_cost k;
	ppcc_comm_choose(&k, c, PPCC_COMM_ALLREDUCE, n, span, bytes);
	return ppcc_comm_seconds(&k, bytes);
}

double ppcc_allgather_seconds(const ppcc_cluster *c, int n, int64_t span,
			      double bytes)
{
	ppcc_comm_cost k;
	ppcc_comm_choose(&k, c, PPCC_COMM_ALLGATHER, n, span, bytes);
	return ppcc_comm_seconds(&k, bytes);
}

double ppcc_comm_tp_seconds(const ppcc_cluster *c, int t, int cp,
			    double message_bytes, int sequence_parallel)
{
	if (t <= 1)
		return 0;
	double bytes = message_bytes / cp;
	/* sequence parallelism: an all-gather and a reduce-scatter, each
	 * costed as NCCL does (alike) */
	return sequence_parallel
		? 2 * ppcc_allgather_seconds(c, t, t, bytes)
		: ppcc_allreduce_seconds(c, t, t, bytes);
}

double ppcc_comm_cp_step_seconds(const ppcc_cluster *c, int t, int cp,
				 double kv_bytes)
{
	return ppcc_comm_link_seconds(ppcc_topo_span_link(c, (int64_t)t * cp),
				      kv_bytes / ((double)cp * t));
}

double ppcc_comm_a2a_seconds(const ppcc_cluster *c, int ep, int etp,
			     double token_bytes, double copies,
			     int node_limit)
{
	if (ep <= 1 || !(token_bytes > 0))
		return 0;
	int64_t span = (int64_t)ep * etp;
	int64_t local = span <= c->devices_per_node ? ep
			: c->devices_per_node / etp;
	if (local < 1)
		local = 1;
	double nodes = (double)ep / (double)local;
	double in = token_bytes * copies * (double)(local - 1) / ep;
	double out = token_bytes * copies * (double)(ep - local) / ep;
	if (node_limit > 0 && nodes > 1) {
		double reach = copies < node_limit ? copies : node_limit;
		if (reach > nodes)
			reach = nodes;
		out = token_bytes * reach * (nodes - 1) / nodes;
		in = token_bytes * copies * (double)(local - 1) / local;
	}
	double ti = in > 0 ? ppcc_comm_link_seconds(&c->intra_node, in) : 0;
	double to = out > 0 ? ppcc_comm_link_seconds(&c->inter_node, out) : 0;
	return ti > to ? ti : to;
}

void ppcc_comm_dp_rates(ppcc_stage_cost *c, const ppcc_config *cfg)
{
	const ppcc_pipeline *pl = &cfg->pipeline;
	int cp = pl->context_parallel > 0 ? pl->context_parallel : 1;
	int dp = pl->data_parallel > 0 ? pl->data_parallel : 1;
	int n = dp * cp;
	if (n <= 1)
		return;
	int64_t span = (int64_t)pl->tensor_parallel * cp * dp;
	double bucket = ppcc_dp_bucket_bytes(pl);
	/* under HSDP the shard group's consecutive ranks reduce-scatter,
	 * then the r replicas of each shard all-reduce it */
	int ns = ppcc_pipeline_zero_ranks(pl);
	int r = ppcc_pipeline_zero_replicas(pl);
	int64_t sspan = span / r;
	ppcc_comm_cost k;
	c->dp_reduce_ms = c->dp_reduce_ms_per_byte = 0;
	if (ns > 1) {
		ppcc_comm_choose(&k, &cfg->cluster,
				 pl->zero == 0 ? PPCC_COMM_ALLREDUCE
					       : PPCC_COMM_REDUCE_SCATTER,
				 ns, sspan, bucket);
		c->dp_reduce_ms = 1e3 * k.latency;
		c->dp_reduce_ms_per_byte = 1e3 / k.bandwidth;
	}
	if (r > 1) {
		ppcc_comm_choose(&k, &cfg->cluster, PPCC_COMM_ALLREDUCE, r,
				 span, bucket / ns);
		c->dp_reduce_ms += 1e3 * k.latency;
		c->dp_reduce_ms_per_byte += 1e3 / k.bandwidth / ns;
	}
	if (pl->zero >= 1 && ns > 1) {
		ppcc_comm_choose(&k, &cfg->cluster, PPCC_COMM_ALLGATHER, ns,
				 sspan, bucket);
		c->dp_gather_ms = 1e3 * k.latency;
		c->dp_gather_ms_per_byte = 1e3 / k.bandwidth;
	}
}
