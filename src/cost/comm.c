/*
 * comm.c - what communication costs: links, p2p boundaries, the
 * tensor- and context-parallel collectives inside a layer's compute and
 * the data-parallel collectives of a stage's buckets.
 *
 * Collectives follow nccl-tests' bus-bandwidth model of a ring: one link
 * latency per operation, and (n - 1) / n of the bytes (twice for an
 * all-reduce) at the link's bandwidth.  Which link is topology.c's.
 * These are the figures plan/tables.c turns into integer picoseconds and the
 * simulator and iteration.c into milliseconds; each expression keeps the
 * order of its operations, on which the plans' bytes depend.
 */
#include "ppcc.h"

double ppcc_comm_link_seconds(const ppcc_link *l, double bytes)
{
	return l->latency + bytes / l->bandwidth;
}

double ppcc_comm_p2p_seconds(const ppcc_link *l, int shard, double bytes)
{
	return ppcc_comm_link_seconds(l, bytes / shard);
}

double ppcc_allreduce_seconds(const ppcc_link *l, int n, double bytes)
{
	if (n <= 1)
		return 0;
	return l->latency + 2.0 * (n - 1) / n * bytes / l->bandwidth;
}

double ppcc_allgather_seconds(const ppcc_link *l, int n, double bytes)
{
	if (n <= 1)
		return 0;
	return l->latency + (double)(n - 1) / n * bytes / l->bandwidth;
}

double ppcc_comm_tp_seconds(const ppcc_cluster *c, int t, int cp,
			    double message_bytes, int sequence_parallel)
{
	if (t <= 1)
		return 0;
	const ppcc_link *l = ppcc_topo_span_link(c, t);
	return ppcc_allreduce_seconds(l, t, message_bytes / cp) +
	       (sequence_parallel ? l->latency : 0);
}

double ppcc_comm_cp_step_seconds(const ppcc_cluster *c, int t, int cp,
				 double kv_bytes)
{
	return ppcc_comm_link_seconds(ppcc_topo_span_link(c, (int64_t)t * cp),
				      kv_bytes / ((double)cp * t));
}

void ppcc_comm_dp_rates(ppcc_stage_cost *c, const ppcc_config *cfg)
{
	const ppcc_pipeline *pl = &cfg->pipeline;
	int cp = pl->context_parallel > 0 ? pl->context_parallel : 1;
	int dp = pl->data_parallel > 0 ? pl->data_parallel : 1;
	int n = dp * cp;
	if (n <= 1)
		return;
	const ppcc_link *l = ppcc_topo_span_link(
		&cfg->cluster, (int64_t)pl->tensor_parallel * cp * dp);
	double f = (pl->zero == 0 ? 2.0 : 1.0) * (n - 1) / n;
	c->dp_reduce_ms = 1e3 * l->latency;
	c->dp_reduce_ms_per_byte = 1e3 * f / l->bandwidth;
	if (pl->zero >= 1) {
		c->dp_gather_ms = 1e3 * l->latency;
		c->dp_gather_ms_per_byte = 1e3 * (double)(n - 1) / n /
					   l->bandwidth;
	}
}
