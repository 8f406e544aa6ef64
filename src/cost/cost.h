/*
 * cost.h - the cost model: where a rank's devices are (topology.c).
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

#endif
