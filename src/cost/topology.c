/*
 * topology.c - from a pipeline rank to its devices, their group, their
 * node, and the links they use.  The one place the cost model derives
 * the layout that config_check.c sets out: pipeline rank r of replica 0
 * on the t x cp devices from r x t x cp x d (the d replicas of a rank
 * side by side), the device groups in the order the cluster lists them,
 * devices_per_node consecutive devices a node.  A group of devices
 * within a node's span of a rank's first is taken to share its node.
 */
#include "ppcc.h"

void ppcc_topo_place(ppcc_cost_place *out, const ppcc_config *cfg, int rank)
{
	const ppcc_cluster *c = &cfg->cluster;
	const ppcc_pipeline *pl = &cfg->pipeline;
	int cp = pl->context_parallel > 0 ? pl->context_parallel : 1;
	int dp = pl->data_parallel > 0 ? pl->data_parallel : 1;
	out->block = (int64_t)pl->tensor_parallel * cp * dp;
	out->first_device = (int64_t)rank * out->block;
	out->node = out->first_device / c->devices_per_node;
	int64_t device = out->first_device;
	out->group = c->n_groups - 1;
	for (int g = 0; g < c->n_groups; g++) {
		if (device < c->groups[g].count) {
			out->group = g;
			break;
		}
		device -= c->groups[g].count;
	}
	out->device_group = &c->groups[out->group];
}

const ppcc_link *ppcc_topo_link(const ppcc_cluster *c, int kind)
{
	return kind == PPCC_TOPO_INTRA ? &c->intra_node : &c->inter_node;
}

const ppcc_link *ppcc_topo_span_link(const ppcc_cluster *c, int64_t span)
{
	return ppcc_topo_link(c, span <= c->devices_per_node ? PPCC_TOPO_INTRA
							     : PPCC_TOPO_INTER);
}

int64_t ppcc_topo_span_nodes(const ppcc_cluster *c, int64_t span)
{
	int64_t per = c->devices_per_node > 0 ? c->devices_per_node : 1;
	return span <= per ? 1 : (span + per - 1) / per;
}

int ppcc_topo_p2p_kind(const ppcc_cost_place *a, const ppcc_cost_place *b)
{
	return a->node == b->node ? PPCC_TOPO_INTRA : PPCC_TOPO_INTER;
}
