/*
 * rt.h - what the runtime's core (core.c) and its transports (local.c,
 * mpi.c, nccl.c) share: the request a SEND or RECV becomes, the
 * transport vtable, and the per-rank runtime state.
 *
 * A message is named by ppcc_message_key (ir/ir.h), the same at its
 * two ends.  Transports match a receive to a send by that name and the
 * sending rank, first posted first matched, never by arrival order
 * alone; except in grouped mode, where nccl (and local, standing in
 * for it) pair a rank pair's sends and receives by posting order alone,
 * which ppcc_rt_init allows only for schedules that keep each pair's
 * order (match_order.c).
 */
#ifndef PPCC_RT_INTERNAL_H
#define PPCC_RT_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ppcc.h"
#include "ppcc/checkpoint.h"
#include "ppcc/runtime.h"
#include "runtime/oob.h"
#include "runtime/hooks.h"

/* One posted SEND or RECV.  The core owns it (a pool per rank); the
 * transport links it into its own lists through `next` and sets `done`
 * (an atomic, because a local peer's thread may complete it). */
typedef struct rt_req {
	struct rt_req *next;      /* transport's list */
	struct rt_req *pending_next; /* core's sends in flight */
	struct rt_req *pool_next; /* core's free list */
	struct rt_req *all_next;  /* every request of the rank, for freeing */
	int is_send;
	int64_t key;   /* the message's ppcc_message_key, at both ends */
	int src, dst;  /* ranks */
	void *buf;     /* payload and, in debug mode, the trailer */
	size_t bytes;
	int action;    /* index in the owning rank's list */
	struct rt_buf *owner; /* the pool buffer behind buf */
	int posted;    /* handed to the transport, not yet given back */
	atomic_int done;
	int status;    /* transport's status once done */
	uint64_t opaque[4]; /* transport's handle (MPI_Request, group id) */
} rt_req;

/* The C11 release/acquire pairs by which one thread hands memory to
 * another (a request's `done`, a local world's `aborted`), told to
 * valgrind --tool=helgrind, which does not see atomics: the annotation
 * before the store and after the load that observed it.  No-ops without
 * valgrind's headers; a few instructions outside valgrind. */
#if defined(__has_include)
#if __has_include(<valgrind/helgrind.h>)
#include <valgrind/helgrind.h>
#define RT_HAPPENS_BEFORE(addr) ANNOTATE_HAPPENS_BEFORE(addr)
#define RT_HAPPENS_AFTER(addr) ANNOTATE_HAPPENS_AFTER(addr)
#endif
#endif
#ifndef RT_HAPPENS_BEFORE
#define RT_HAPPENS_BEFORE(addr) ((void)(addr))
#define RT_HAPPENS_AFTER(addr) ((void)(addr))
#endif

/* r->done as its owner reads it, and as the completing thread sets it. */
static inline int rt_req_done(rt_req *r)
{
	int done = atomic_load(&r->done);
	if (done)
		RT_HAPPENS_AFTER(&r->done);
	return done;
}

static inline void rt_req_set_done(rt_req *r)
{
	RT_HAPPENS_BEFORE(&r->done);
	atomic_store(&r->done, 1);
}

typedef struct rt_transport rt_transport; /* each transport's own state */

/* What a data-parallel collective does to its bucket of count values
 * over the d replicas: every replica gets the sum (REDUCE_GRAD), only
 * the shard it owns of the sum (REDUCE_SCATTER_GRAD: the rest of its
 * buffer is left as it was), or every replica's shard of the values
 * (ALL_GATHER_PARAM: the parameters its optimizer updated; UNSHARD_PARAM,
 * ZeRO-3's gather for one compute, moves the same values). */
enum { RT_COLL_ALL_REDUCE = 0, RT_COLL_REDUCE_SCATTER = 1,
       RT_COLL_ALL_GATHER = 2, RT_COLL_UNSHARD = 3 };

/* The op a kind stands for, in diagnostics. */
static inline const char *rt_coll_name(int kind)
{
	return kind == RT_COLL_REDUCE_SCATTER ? "REDUCE_SCATTER_GRAD"
	       : kind == RT_COLL_ALL_GATHER ? "ALL_GATHER_PARAM"
	       : kind == RT_COLL_UNSHARD ? "UNSHARD_PARAM" : "REDUCE_GRAD";
}

/* 1 for the kinds that copy each replica's shard to every replica (no
 * sums): ALL_GATHER_PARAM and UNSHARD_PARAM. */
static inline int rt_coll_gathers(int kind)
{
	return kind == RT_COLL_ALL_GATHER || kind == RT_COLL_UNSHARD;
}

/* The shard of a bucket of count values that replica q of d owns
 * (ppcc/schedule.h's rule, ppcc_rt_dp_shard): count / d values from
 * q x (count / d), the last replica also the count % d left. */
static inline size_t rt_shard_lo(size_t count, int d, int q)
{
	return count / (size_t)d * (size_t)q;
}

static inline size_t rt_shard_len(size_t count, int d, int q)
{
	return q == d - 1 ? count - count / (size_t)d * (size_t)(d - 1)
			  : count / (size_t)d;
}

/* One collective over the replicas of a pipeline rank, run by a
 * transport that has the coll operations (reduce.c owns it): the k-th
 * collective a replica posts is collective seq k of every replica; a
 * reduction adds the replicas' values in replica order. */
typedef struct rt_coll {
	uint64_t seq;
	int stage, bucket;
	double *grad;   /* the values: gradients, or parameters (gather) */
	size_t count;
	int done;       /* set by the transport */
	int waiting_on; /* the replica it last waited for, -1: none */
	double t_post, t_done;
	void *state;    /* the transport's */
	/* 1: compare the replicas' descriptors of this reduction before it
	 * runs (the runtime's first step, and the first after a bucket is
	 * registered; mpi compares every reduction's) */
	int verify;
	/* what a post that waited and failed (ETIMEOUT) waited for, for
	 * the failure's line; empty otherwise */
	char why[224];
	int kind;       /* RT_COLL_* */
	/* ZeRO-3: 1 for a REDUCE_SCATTER_GRAD of one backward's gradients
	 * (a round), on every transport; only nccl reads it.  Host
	 * transports get grad pointing at a copy reduce.c owns (staging,
	 * freed with c), so the values a compute reads and writes are never
	 * the ones in flight; nccl gets the registered buffers themselves:
	 * for a round it reduces in place, zeroes
	 * the shards this replica does not own, and its compute stream
	 * waits for both, so the next backward adds to the owned sum. */
	int round;
	double *staging;
} rt_coll;

/* A collective's descriptor, the words its replicas compare before it
 * runs: sequence, kind, stage, bucket, count. */
#define RT_COLL_DESC 5
void rt_coll_desc(const rt_coll *c, int64_t out[RT_COLL_DESC]);

/* Reports that replica q (world rank world) posted the descriptor
 * theirs where replica me posted c's, in one line; returns
 * PPCC_RT_EMISMATCH. */
int rt_coll_mismatch(ppcc_rt *rt, const rt_coll *c, int me,
		     const int64_t *theirs, int q, int world);

/*
 * The transport vtable.  Every function returns 0 or a negative
 * ppcc_rt_status.  Deadlines are absolute CLOCK_MONOTONIC seconds; a
 * function that waits returns PPCC_RT_ETIMEOUT at the deadline and
 * PPCC_RT_EPEER as soon as another rank has reported a failure.
 */
typedef struct rt_transport_ops {
	const char *name;
	/* Joins: sets rt->rank (when the transport decides it) and
	 * rt->n_ranks; reports its own errors through rt_report. */
	int (*init)(rt_transport **out, ppcc_rt *rt, int rank);
	/* All-gather of two words per rank: out has 2 * n_ranks entries. */
	int (*exchange)(rt_transport *t, uint64_t *out, const uint64_t mine[2],
			double deadline);
	/* Optional brackets around a run of posts that must progress
	 * together (nccl's group). */
	int (*group_begin)(rt_transport *t);
	int (*group_end)(rt_transport *t);
	/* Post without blocking. */
	int (*send)(rt_transport *t, rt_req *r);
	int (*recv)(rt_transport *t, rt_req *r);
	/* Sets *done (and r->done) without blocking; progresses the rest. */
	int (*test)(rt_transport *t, rt_req *r, int *done);
	/* Blocks until r is done or the deadline. */
	int (*wait)(rt_transport *t, rt_req *r, double deadline);
	/* Stops the other ranks: they see PPCC_RT_EPEER in their next wait
	 * (or, when they poll, after their next action). */
	void (*abort)(rt_transport *t, int status);
	/* 1 when another rank has aborted; *out_rank, *out_status its own
	 * rank and status when known (else -1, PPCC_RT_EPEER). */
	int (*aborted)(rt_transport *t, int *out_rank, int *out_status);
	/* Buffers in the transport's memory (host unless nccl). */
	int (*alloc)(rt_transport *t, void **out, size_t bytes);
	void (*free)(rt_transport *t, void *p);
	/* Copies between host memory and transport memory (debug trailer). */
	int (*read)(rt_transport *t, void *dst, const void *src, size_t n);
	int (*write)(rt_transport *t, void *dst, const void *src, size_t n);
	/* Forgets a posted request that will not be waited for (after a
	 * failure): the transport no longer touches its buffer. */
	void (*cancel)(rt_transport *t, rt_req *r);
	/* Optional: data parallelism over the transport's own ranks (see
	 * rt_coll).  post starts c without blocking; test progresses every
	 * collective posted and sets c->done; release forgets c (done or
	 * not, after a failure) and frees its state. */
	int (*coll_post)(rt_transport *t, rt_coll *c);
	int (*coll_test)(rt_transport *t, rt_coll *c);
	void (*coll_release)(rt_transport *t, rt_coll *c);
	/* Leaves and frees the state; failed: after a failure, so nothing
	 * collective that could block.  NULL t is a no-op. */
	void (*finalize)(rt_transport *t, int failed);
} rt_transport_ops;

extern const rt_transport_ops ppcc_rt_local_ops;
extern const rt_transport_ops ppcc_rt_mpi_ops;
extern const rt_transport_ops ppcc_rt_nccl_ops;
extern const rt_transport_ops ppcc_rt_nccl_loop_ops; /* nccl, options.world set */

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
	int rank, n_ranks, S, m;
	/* Data parallelism over the transport (mpi, options.data_parallel):
	 * the replicas d (1 without), this rank's replica, and the world
	 * of n_ranks x d ranks; set by the transport's init. */
	int grid_d, grid_replica, n_world;
	ppcc_rt_options o;  /* resolved: timeout, debug, diag set */
	double timeout_s;
	int debug;
	int grouped;

	const rt_transport_ops *ops;
	rt_transport *tr;
	void *cuda_stream; /* nccl's compute stream */

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
	struct rt_dp *dp; /* data parallelism (reduce.c); NULL without */

	struct rt_frec *frec; /* flight.c's record; NULL: PPCC_FLIGHT_DIR unset */
};

/* The grouped discipline's plan for rt's rank: out_point[i], for each
 * SEND/RECV action i, the number of compute actions that run before its
 * group is posted (see group.c).  PPCC_RT_EINPUT, reported, when no plan
 * is free of deadlock. */
int ppcc_rt_group_plan(int32_t *out_point, ppcc_rt *rt);

/* Stops every rank of a local world, as if `rank` had failed with
 * `status` (for a rank that fails before it has joined). */
void ppcc_rt_local_world_abort(ppcc_rt_local_world *w, int rank, int status);

/* The timeout rt's waits are bounded by, from rt->o.timeout_s, else
 * $PPCC_TIMEOUT, else 300 s: finite, in (0, PPCC_RT_TIMEOUT_MAX]
 * (timeout.c).  PPCC_RT_EINPUT, reported, for a non-finite option. */
int ppcc_rt_timeout_resolve(double *out, ppcc_rt *rt);
/* The same rule for a caller without a runtime (checkpoint reads), t
 * finite: t when positive, else $PPCC_TIMEOUT, else the default, at most
 * PPCC_RT_TIMEOUT_MAX; silent (ppcc_rt_init gives the warnings). */
double ppcc_rt_timeout_of(double t);

/* The CUDA device of a rank that is local_rank-th on its node, among
 * n_devices visible ones: local_rank, or 0 when one device is visible;
 * -1 when there is none for it (local_rank >= n_devices > 1: two ranks
 * would share a GPU) or the arguments are out of range.  (device.c) */
int ppcc_rt_device_choose(int local_rank, int n_devices);

/* The node-local rank the launcher exported (OMPI_COMM_WORLD_LOCAL_RANK,
 * MPI_LOCALRANKID, SLURM_LOCALID, LOCAL_RANK: the first set to a number
 * >= 0), and in *out_var (may be NULL) its name; -1 when none. */
int ppcc_rt_local_rank_env(const char **out_var);

/* What nccl's loopback mode (every rank a thread, one GPU) uses of a
 * local world: its size, the exchange of two words per rank (a barrier,
 * bounded by the deadline; PPCC_RT_EPEER after an abort), its mutex, one
 * pointer of state shared by its ranks (read and written under the
 * mutex; the last rank to leave frees it), and its abort flag. */
int ppcc_rt_local_world_size(const ppcc_rt_local_world *w);
int ppcc_rt_local_world_exchange(ppcc_rt_local_world *w, int rank,
				 uint64_t *out, const uint64_t mine[2],
				 double deadline);
void ppcc_rt_local_world_lock(ppcc_rt_local_world *w);
void ppcc_rt_local_world_unlock(ppcc_rt_local_world *w);
void **ppcc_rt_local_world_shared(ppcc_rt_local_world *w);
int ppcc_rt_local_world_aborted(ppcc_rt_local_world *w, int *out_rank,
				int *out_status);

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

/* Monotonic seconds (status.c). */
double ppcc_rt_now(void);

/* Sends one diagnostic line to the flight record and rt->o.diag
 * (flight.c). */
void ppcc_rt_report(ppcc_rt *rt, const char *fmt, ...) PPCC_PRINTF(2, 3);

#endif
