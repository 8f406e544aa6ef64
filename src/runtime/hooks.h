/*
 * hooks.h - what the tests and fuzzers reach inside the runtime: holding
 * a data-parallel group to a count of collectives, the mpi transport's
 * tag window, the checkpoint reader's parsers and a flight record's
 * file name.  Part of the
 * runtime's internal interface (rt.h); no trainer calls them.
 */
#ifndef PPCC_RT_HOOKS_H
#define PPCC_RT_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "ppcc/checkpoint.h"
#include "ppcc/runtime.h"

/* Tests, to decide on the order of events instead of their times: hold
 * lets the group begin no more than n collectives in all (counted from
 * its making; n < 0: no limit) until it is called again; done waits
 * until the group has completed n collectives in all, or timeout_s has
 * passed, and returns how many it has completed. */
void ppcc_rt_dp_group_hold(ppcc_rt_dp_group *g, long n);
long ppcc_rt_dp_group_done(ppcc_rt_dp_group *g, long n, double timeout_s);

#if PPCC_HAVE_MPI
/* Tests: the mpi transport's reductions reuse their tags every `window`
 * collectives instead of every (MPI_TAG_UB - tags of the messages) / 3
 * (only ever lowered; called after ppcc_rt_init, before the first
 * step).  PPCC_RT_EINPUT on another transport or window < 1. */
int ppcc_rt_mpi_set_coll_window(ppcc_rt *rt, int window);
#endif

/* The checkpoint reader's parsers over n bytes at p (no NUL needed), as
 * a load runs them on the file path: a MANIFEST of step (its trailer's
 * CRC first), and a shard (framing, header, trailer and its CRC), then
 * its identity as layer of step.  0 or the load's negative status,
 * reported through m.  For the fuzzers (tests/fuzz/targets.c). */
int ppcc_ckpt_parse_manifest(const ppcc_ckpt_model *m, const char *path,
			     const char *p, size_t n, uint64_t step);
int ppcc_ckpt_parse_shard(const ppcc_ckpt_model *m, const char *path,
			  const char *p, size_t n, uint64_t step, int32_t layer);

/* DIR/rank-NNNNN.flight followed by suffix into out (n bytes, cut to
 * fit): the rank in at least five digits, more when it has them.
 * Async-signal-safe (flight.c). */
void ppcc_rt_flight_path(char *out, size_t n, const char *dir, int rank,
			 const char *suffix);

#endif
