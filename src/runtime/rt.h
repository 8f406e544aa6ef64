/*
 * rt.h - the runtime's own state (struct ppcc_rt), shared by the core
 * (core.c), the data-parallel collectives (reduce.c), the flight record
 * (flight.c) and the grouping plan (group.c): the buffer pool, the
 * receives posted ahead, the groups, the statistics.
 *
 * The transports do not include it: they see what transport.h gives
 * them (an rt_tctx), which the core keeps inside struct ppcc_rt (tx) so
 * that the rank, the world and the timeout have one home.
 */
#ifndef PPCC_RT_INTERNAL_H
#define PPCC_RT_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "ppcc.h"
#include "ppcc/checkpoint.h"
#include "ppcc/runtime.h"
#include "runtime/transport.h"
#include "runtime/oob.h"
#include "runtime/hooks.h"

/* A pool buffer: `mem` of `size` bytes, recycled through a free list per
 * size. */
typedef struct rt_buf {
	struct rt_buf *next; /* free list */
	struct rt_buf *all_next;
	void *mem;
	size_t size;
} rt_buf;

typedef struct rt_size_class {
	size_t size;
	rt_buf *free;
} rt_size_class;

/* One entry of the flight record. */
typedef struct rt_flight {
	int action;
	double start; /* seconds since the step began */
	double dur;
} rt_flight;

struct ppcc_rt {
	const ppcc_schedule *s;
	const ppcc_rank_schedule *rs;
	int S, m;
	ppcc_rt_options o;  /* resolved: timeout, debug, diag set */
	/* What the transport is given and sets: the rank, the world and the
	 * grid, the timeout, debug and grouped (transport.h). */
	rt_tctx tx;

	const rt_transport_ops *ops;
	rt_transport *tr;

	/* Buffers at stage boundaries, by (slot kind, stage, mb). */
	rt_buf **slot;
	rt_req **recv_of; /* per action: the posted receive, or NULL */
	int next_post;    /* first action not yet considered for posting */
	int *horizon;     /* per action: post receives below this first */

	/* grouped: the compute actions, and the SEND/RECV actions posted
	 * before each (group k before computes[k]; group n_computes after
	 * the last), from ppcc_rt_group_plan */
	int *computes, n_computes;
	int *group_first; /* n_computes + 2 */
	int *group_ops;

	rt_req *pending;  /* sends in flight */
	rt_req *req_free, *req_all;
	rt_size_class *classes;
	int n_classes, cap_classes;
	rt_buf *buf_all;
	int in_use, pool_buffers;
	uint64_t in_use_bytes;

	rt_flight *flight;
	int n_flight, flight_pos, flight_len;

	ppcc_rt_stats st;
	double step_t0;
	double t_last; /* the clock when the last callback returned */
	uint64_t step;
	int failed; /* a failure was reported: later steps refuse */
	/* the compute action whose callback runs now, -1 outside one (an
	 * all-to-all's failure names it); the all-to-alls called so far */
	int in_action;
	uint64_t a2a_seq;
	struct rt_dp *dp; /* data parallelism (reduce.c); NULL without */

	struct rt_frec *frec; /* flight.c's record; NULL: PPCC_FLIGHT_DIR unset */
};

/* The grouped discipline's plan for rt's rank: out_point[i], for each
 * SEND/RECV action i, the number of compute actions that run before its
 * group is posted (see group.c).  PPCC_RT_EINPUT, reported, when no plan
 * is free of deadlock. */
int ppcc_rt_group_plan(int32_t *out_point, ppcc_rt *rt);

/* The timeout rt's waits are bounded by, from rt->o.timeout_s, else
 * $PPCC_TIMEOUT, else 300 s: finite, in (0, PPCC_RT_TIMEOUT_MAX]
 * (timeout.c).  PPCC_RT_EINPUT, reported, for a non-finite option. */
int ppcc_rt_timeout_resolve(double *out, ppcc_rt *rt);
/* The same rule for a caller without a runtime (checkpoint reads), t
 * finite: t when positive, else $PPCC_TIMEOUT, else the default, at most
 * PPCC_RT_TIMEOUT_MAX; silent (ppcc_rt_init gives the warnings). */
double ppcc_rt_timeout_of(double t);

/* The flight record (flight.c); each is a no-op when recording is off.
 * open at the start of init, close in free; begin when action i starts
 * (t0 its monotonic start), end when it completes; post and done for
 * each SEND/RECV handed to the transport and completed; line keeps the
 * last diagnostic line; fail records the failure and writes the record. */
typedef struct rt_frec rt_frec;
void ppcc_rt_flight_open(ppcc_rt *rt);
void ppcc_rt_flight_close(ppcc_rt *rt);
void ppcc_rt_flight_begin(ppcc_rt *rt, int action, double t0);
void ppcc_rt_flight_end(ppcc_rt *rt, int action, double start, double end);
void ppcc_rt_flight_post(ppcc_rt *rt, const rt_req *r);
void ppcc_rt_flight_done(ppcc_rt *rt, const rt_req *r);
void ppcc_rt_flight_line(ppcc_rt *rt, const char *line);
/* An all-to-all's wait for r begins at t0 (the record's current names
 * r's op and peer inside the running action); r NULL: it ended. */
void ppcc_rt_flight_wait(ppcc_rt *rt, const rt_req *r, double t0);
void ppcc_rt_flight_fail(ppcc_rt *rt, int status, int action, double waited);

/* ---- data parallelism (reduce.c) ------------------------------------------
 * init: joins rt->o.dp_group (reported, PPCC_RT_EINPUT on a bad replica);
 * after: called once action i has run, posts the buckets of a stage
 * whose last backward it was; progress: advances the transport's
 * collectives without blocking (after every action); finish: waits for
 * the step's reductions;
 * abort: tells the group this member failed; free: NULL rt->dp is a
 * no-op.  set_delay: every reduction takes at least `seconds` (tests). */
int ppcc_rt_dp_init(ppcc_rt *rt);
int ppcc_rt_dp_after(ppcc_rt *rt, int i);
/* Runs collective action i (REDUCE_GRAD, REDUCE_SCATTER_GRAD,
 * ALL_GATHER_PARAM or UNSHARD_PARAM): posts the registered buckets it names
 * (nothing without data parallelism).  A post may wait (mpi: for the
 * collective whose tags it reuses); when that wait fails, dp_why says
 * what it waited for. */
int ppcc_rt_dp_reduce(ppcc_rt *rt, int i);
/* Before action i runs: at a stage's first compute after its
 * ALL_GATHER_PARAM actions, waits for them and the collectives posted
 * before them (each bounded by the timeout), not for later stages';
 * under ZeRO-3, at each F, B or I, for its own UNSHARD_PARAM group and
 * what was posted before it. */
int ppcc_rt_dp_before(ppcc_rt *rt, int i);
const char *ppcc_rt_dp_why(const ppcc_rt *rt);
int ppcc_rt_dp_progress(ppcc_rt *rt);
int ppcc_rt_dp_finish(ppcc_rt *rt);
void ppcc_rt_dp_abort(ppcc_rt *rt, int status);
/* core.c: tells the world this rank stopped (EPEER only if it has not
 * heard) */
void ppcc_rt_tell_world(ppcc_rt *rt, int status);
void ppcc_rt_dp_free(ppcc_rt *rt);
void ppcc_rt_dp_group_set_delay(ppcc_rt_dp_group *g, double seconds);
/* The bytes of a ppcc_rt_stats of `version` (0: 1), or 0 for a version
 * this runtime does not know (core.c). */
size_t ppcc_rt_stats_size(int version);
/* *out, of out->version, from the runtime's own *st: only the fields that
 * version has; out->version kept. */
void ppcc_rt_stats_put(ppcc_rt_stats *out, const ppcc_rt_stats *st);

/* core.c, for alltoall.c: a request from the rank's pool, and back. */
int ppcc_rt_req_get(rt_req **out, ppcc_rt *rt);
void ppcc_rt_req_put(ppcc_rt *rt, rt_req *r);
/* core.c's failure report (rt_fail) with the place given: one line
 * "WHERE: STATUS: CAUSE; waited W s; last: FLIGHT", the statistics'
 * failure fields (action, its op, stage and mb; peer), the flight
 * record, the other ranks told.  Returns status. */
int ppcc_rt_fail_at(ppcc_rt *rt, int status, int action, int peer,
		    const char *where, double waited, const char *fmt, ...)
	PPCC_PRINTF(7, 8);
/* The cause of an EPEER ("stopped because rank K failed (timeout)"). */
void ppcc_rt_peer_cause(ppcc_rt *rt, char *buf, size_t n);

/* Sends one diagnostic line, "ppcc-rt: rank R: " and fmt's text, to the
 * flight record and rt->o.diag (flight.c); vreport is rt->tx.report,
 * its user pointer the runtime. */
void ppcc_rt_report(ppcc_rt *rt, const char *fmt, ...) PPCC_PRINTF(2, 3);
void ppcc_rt_vreport(void *user, const char *fmt, va_list ap);

#endif
