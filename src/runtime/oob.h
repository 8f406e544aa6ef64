/*
 * oob.h - the out-of-band abort (oob.c): how the ranks of a transport
 * that tells no peer of a failure (nccl, and local standing in for it)
 * hear of one.  Part of the transports' interface (transport.h): it
 * reports through their rt_tctx.
 */
#ifndef PPCC_RT_OOB_H
#define PPCC_RT_OOB_H

#include "ppcc/runtime.h"
#include "runtime/transport.h"

/* NCCL tells no peer of an abort, so the nccl transport (and the local
 * one standing in for it) carries failures on a side channel: a rank that
 * fails signals it; every other rank polls in its waits and between
 * actions and stops with PPCC_RT_EPEER naming the rank and its status.
 * Two channels: MPI (a duplicate of MPI_COMM_WORLD, an abort receive kept
 * posted), or a TCP store on 127.0.0.1 whose rank 0 listens and relays
 * (for ranks bootstrapped without MPI).  Open, poll and signal never
 * block past their deadline; close with failed == 0 waits (up to its
 * deadline) for the others to close too, so that nobody loses the channel
 * while it still runs. */
typedef struct rt_oob rt_oob;

/* Every rank of n calls it with the same port; blocks until all have
 * joined, the deadline (PPCC_RT_ETIMEOUT) or an error
 * (PPCC_RT_ETRANSPORT), reported through cx. */
int ppcc_rt_oob_tcp_open(rt_oob **out, const rt_tctx *cx, int rank, int n,
			 int port, double deadline);
#if PPCC_HAVE_MPI
/* Over MPI_COMM_WORLD (MPI initialised; every rank calls it). */
int ppcc_rt_oob_mpi_open(rt_oob **out, const rt_tctx *cx, double deadline);
#endif
/* Tells every other rank that `rank` failed with status (once; later
 * calls and calls after a peer's abort are no-ops). */
void ppcc_rt_oob_signal(rt_oob *o, int rank, int status);
/* 1 when another rank has signalled (or, TCP, its connection died), with
 * its rank and status (-1, PPCC_RT_EPEER when unknown); never blocks. */
int ppcc_rt_oob_poll(rt_oob *o, int *out_rank, int *out_status);
/* NULL is a no-op. */
void ppcc_rt_oob_close(rt_oob *o, int failed, double deadline);

/* The port of the TCP store: $PPCC_ABORT_PORT (1..65535), else 0. */
int ppcc_rt_oob_port_env(void);

/* Local worlds that stand in for NCCL: with a port, a rank's abort stops
 * only that rank in the world and reaches the others through the TCP
 * store on that port, which each rank polls (set before any rank
 * joins). */
void ppcc_rt_local_world_set_oob_port(ppcc_rt_local_world *w, int port);

#endif
