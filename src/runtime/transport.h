/*
 * transport.h - what a transport (local.c, mpi.c, nccl.c) and the
 * out-of-band abort (oob.c) are given: the request a SEND or RECV
 * becomes, a data-parallel collective, the transport vtable and the
 * context (rt_tctx) the core fills in and hands to the vtable's init.
 *
 * A transport sees the runtime only through its rt_tctx: the schedule,
 * the options it reads, the timeout, and the one callback (report) by
 * which its diagnostics reach the flight record and options.diag; its
 * init writes the rank, the world and (nccl) the compute stream back
 * into it.  It never sees struct ppcc_rt (rt.h), so what a transport
 * may change is exactly what this header lists.
 *
 * A message is named by ppcc_message_key (ir/ir.h), the same at its
 * two ends.  Transports match a receive to a send by that name and the
 * sending rank, first posted first matched, never by arrival order
 * alone; except in grouped mode, where nccl (and local, standing in
 * for it) pair a rank pair's sends and receives by posting order alone,
 * which ppcc_rt_init allows only for schedules that keep each pair's
 * order (match_order.c).
 */
#ifndef PPCC_RT_TRANSPORT_H
#define PPCC_RT_TRANSPORT_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ppcc/runtime.h"
#include "util/util.h"

/* What the core hands a transport (filled in by ppcc_rt_init before the
 * vtable's init, and kept in the runtime, at the same address, until the
 * transport is finalized).  A transport reads the inputs, writes the
 * outputs in its init (the rank, when it decides it, and the world),
 * and reports through report (rt_tctx_report); nothing else of the
 * runtime is its to read or change. */
typedef struct rt_tctx {
	/* inputs */
	const ppcc_schedule *s;
	double timeout_s;   /* resolved: every wait's bound */
	int debug;          /* checksummed messages (nccl: pinned staging) */
	int grouped;        /* SEND/RECV posted in groups */
	int data_parallel;  /* options.data_parallel */
	ppcc_rt_local_world *world; /* options.world */
	const void *nccl_id;        /* options.nccl_id */
	int cuda_device;            /* options.cuda_device */
	/* outputs: set by init (rank before it, to the rank asked for).
	 * Data parallelism over the transport (mpi, nccl,
	 * options.data_parallel): the replicas d (1 without), this rank's
	 * replica, and the world of n_ranks x d ranks. */
	int rank, n_ranks;
	int grid_d, grid_replica, n_world;
	void *cuda_stream;  /* nccl's compute stream; NULL otherwise */
	/* One diagnostic line, "ppcc-rt: rank R: " and fmt's text, to the
	 * flight record and options.diag: the core's ppcc_rt_vreport, user
	 * its runtime. */
	void (*report)(void *user, const char *fmt, va_list ap);
	void *user;
} rt_tctx;

/* A transport's diagnostic line, through cx->report. */
static inline PPCC_PRINTF(2, 3) void rt_tctx_report(const rt_tctx *cx,
						     const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cx->report(cx->user, fmt, ap);
	va_end(ap);
}

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
	/* 1: one of ppcc_rt_alltoallv's messages (alltoall.c): src and dst
	 * are ranks of the transport's world (world rank w = pipeline rank
	 * w / grid_d of replica w % grid_d), key RT_KEY_ALLTOALL; 0: a
	 * pipeline message, src and dst this replica's pipeline ranks */
	int world;
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

/* The key of every all-to-all message: below every ppcc_message_key, so
 * that no transport matches it with a pipeline message (local matches
 * it by key even when grouped; mpi gives it a tag of its own). */
#define RT_KEY_ALLTOALL (-1)

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
int rt_coll_mismatch(const rt_tctx *cx, const rt_coll *c, int me,
		     const int64_t *theirs, int q, int world);

/*
 * The transport vtable.  Every function returns 0 or a negative
 * ppcc_rt_status.  Deadlines are absolute CLOCK_MONOTONIC seconds; a
 * function that waits returns PPCC_RT_ETIMEOUT at the deadline and
 * PPCC_RT_EPEER as soon as another rank has reported a failure.
 */
typedef struct rt_transport_ops {
	const char *name;
	/* Joins: sets cx->rank (when the transport decides it), cx->n_ranks
	 * and, with data parallelism, the grid; reports its own errors
	 * through rt_tctx_report.  cx outlives the transport. */
	int (*init)(rt_transport **out, rt_tctx *cx, int rank);
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

#if PPCC_HAVE_MPI
/* Lowers the mpi transport t's window of collectives between reuses of
 * a tag to `window` (>= 1) when it is larger (ppcc_rt_mpi_set_coll_window,
 * hooks.h). */
void ppcc_rt_mpi_coll_window(rt_transport *t, int window);
#endif

/* Stops every rank of a local world, as if `rank` had failed with
 * `status` (for a rank that fails before it has joined). */
void ppcc_rt_local_world_abort(ppcc_rt_local_world *w, int rank, int status);

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

/* Monotonic seconds (status.c). */
double ppcc_rt_now(void);

#endif
