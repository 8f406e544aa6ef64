/*
 * nccl.c - the NCCL transport: device buffers, ncclSend/ncclRecv.
 *
 * Set-up checks for a usable GPU first, gets the ncclUniqueId (the
 * caller's, or rank 0's broadcast over MPI), opens the out-of-band abort
 * channel (oob.c) and makes a non-blocking communicator whose
 * initialisation is polled against the timeout.  The core always runs
 * this transport grouped (group.c): each group of SEND/RECV actions is
 * one ncclGroupStart/ncclGroupEnd on a communication stream ordered after
 * the compute stream, and the core polls its event, NCCL's async error,
 * the abort channel and the clock.  NCCL pairs messages by peer and
 * posting order, so the core refuses schedules that do not keep each
 * pair's order (match_order.c).  Every entry sets the rank's device first.
 * Data parallelism (options.data_parallel) reduces, scatters and gathers
 * over a communicator of each pipeline rank's replicas, on a stream of
 * its own; loopback (options.world) runs every rank as a thread on one
 * GPU.
 * Limits: cudaFree of the pool's buffers and a callback's own work are
 * the waits this transport cannot bound (runtime.h); an abort that does
 * not return within the timeout leaves CUDA untouched and the process
 * must exit.
 *
 * Derivation: doc/design/nccl.md (set-up, grouping, copies, failure,
 * data parallelism and ZeRO, loopback).
 */
#include "transport.h"
#include "oob.h"

#if PPCC_HAVE_NCCL

#include <cuda_runtime.h>
/* nccl.h declares some functions as `f()`; the project warns on that */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#endif
#include <nccl.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#if PPCC_HAVE_MPI
#include <mpi.h>
#endif

_Static_assert(sizeof(ncclUniqueId) == PPCC_RT_NCCL_ID_BYTES,
	       "PPCC_RT_NCCL_ID_BYTES must be sizeof(ncclUniqueId)");

typedef struct nccl_loop nccl_loop;

struct rt_transport {
	rt_tctx *cx;
	ncclComm_t comm;
	cudaStream_t compute, comm_stream;
	cudaEvent_t compute_done, group_done, copy_done;
	int have_streams, have_events;
	int rank, n, device;
	/* data parallelism: replicas, this one's, the communicator of the
	 * pipeline rank's replicas, its stream, the compute stream's mark,
	 * the reductions posted and not released */
	int d, replica;
	ncclComm_t dp_comm;
	cudaStream_t dp_stream;
	cudaEvent_t dp_ready;
	int64_t *dp_desc; /* device: the d replicas' descriptors */
	int have_dp_stream, have_dp_ready;
	struct nccl_red *reds;
	int aborted; /* ncclCommAbort was called */
	int hung;    /* ... and did not return in time: touch CUDA no more */
	rt_oob *oob;
	void *pinned; /* host staging of every host-device copy */
	size_t pinned_bytes;
	/* loopback */
	nccl_loop *loop;
	ppcc_rt_local_world *w;
};

static int nccl_cuda_fail(rt_transport *t, cudaError_t e, const char *call)
{
	rt_tctx_report(t->cx, "nccl transport: %s failed: %s (%s)", call,
		       cudaGetErrorName(e), cudaGetErrorString(e));
	return PPCC_RT_ETRANSPORT;
}

static int nccl_fail(rt_transport *t, ncclResult_t r, const char *call)
{
	const char *last = t->comm ? ncclGetLastError(t->comm) : NULL;
	rt_tctx_report(t->cx, "nccl transport: %s failed: %s%s%s", call,
		       ncclGetErrorString(r), last && *last ? ": " : "",
		       last ? last : "");
	return PPCC_RT_ETRANSPORT;
}

static void nccl_pause(int *spins)
{
	struct timespec ts = {0, *spins < 100 ? 1000L : 100000L};
	(*spins)++;
	nanosleep(&ts, NULL);
}

/* Another rank has failed: the world's flag (loopback) or the abort
 * channel. */
static int nccl_peer_failed(rt_transport *t)
{
	int who, st;
	if (t->w)
		return ppcc_rt_local_world_aborted(t->w, &who, &st);
	return ppcc_rt_oob_poll(t->oob, &who, &st);
}

/* The first call of every entry that may touch CUDA: the rank's device
 * on this thread. */
static int nccl_enter(rt_transport *t)
{
	if (t->hung)
		return PPCC_RT_ETRANSPORT;
	cudaError_t e = cudaSetDevice(t->device);
	return e == cudaSuccess ? 0 : nccl_cuda_fail(t, e, "cudaSetDevice");
}

/* The world rank of replica q of this pipeline rank. */
static int nccl_world_of(const rt_transport *t, int q)
{
	return t->cx->rank * t->d + q;
}

/* Polls non-blocking communicator comm until its last call has
 * settled. */
static int nccl_settle_on(rt_transport *t, ncclComm_t comm, ncclResult_t r,
			  const char *call, double deadline)
{
	int spins = 0;
	while (r == ncclInProgress) {
		if (nccl_peer_failed(t))
			return PPCC_RT_EPEER;
		if (ppcc_rt_now() > deadline)
			return PPCC_RT_ETIMEOUT;
		nccl_pause(&spins);
		if (ncclCommGetAsyncError(comm, &r) != ncclSuccess)
			break;
	}
	return r == ncclSuccess ? 0 : nccl_fail(t, r, call);
}

static int nccl_settle(rt_transport *t, ncclResult_t r, const char *call,
		       double deadline)
{
	return nccl_settle_on(t, t->comm, r, call, deadline);
}

/* Polls ev until it has completed, the communicator reports an error,
 * another rank fails, or the deadline. */
static int nccl_sync(rt_transport *t, cudaEvent_t ev, double deadline)
{
	int spins = 0;
	for (;;) {
		cudaError_t e = cudaEventQuery(ev);
		if (e == cudaSuccess)
			return 0;
		if (e != cudaErrorNotReady)
			return nccl_cuda_fail(t, e, "cudaEventQuery");
		ncclResult_t ar = ncclSuccess;
		if (!t->loop && t->comm &&
		    ncclCommGetAsyncError(t->comm, &ar) == ncclSuccess &&
		    ar != ncclSuccess && ar != ncclInProgress)
			return nccl_fail(t, ar, "an NCCL transfer");
		if (nccl_peer_failed(t))
			return PPCC_RT_EPEER;
		if (ppcc_rt_now() > deadline)
			return PPCC_RT_ETIMEOUT;
		nccl_pause(&spins);
	}
}

/* ---- bounded abort and destroy ----------------------------------------------- */

typedef struct nccl_watch {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done, abandoned, device, destroy;
	ncclComm_t comm;
} nccl_watch;

static void nccl_watch_free(nccl_watch *w)
{
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	ppcc_free(w);
}

static void *nccl_watch_main(void *arg)
{
	nccl_watch *w = arg;
	cudaSetDevice(w->device);
	if (w->destroy)
		ncclCommDestroy(w->comm);
	else
		ncclCommAbort(w->comm);
	pthread_mutex_lock(&w->mu);
	w->done = 1;
	int abandoned = w->abandoned;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	if (abandoned)
		nccl_watch_free(w);
	return NULL;
}

static void nccl_timespec(struct timespec *ts, double deadline)
{
	ts->tv_sec = (time_t)deadline;
	ts->tv_nsec = (long)((deadline - (double)ts->tv_sec) * 1e9);
	if (ts->tv_nsec < 0)
		ts->tv_nsec = 0;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* ncclCommAbort (destroy 0) or ncclCommDestroy (1) of comm in a watchdog
 * thread, waited for until the deadline.  Past it the call is left
 * running, reported, and t->hung set: the transport touches CUDA no
 * more and the process must exit. */
static int nccl_bounded(rt_transport *t, ncclComm_t comm, int destroy,
			double deadline)
{
	const char *call = destroy ? "ncclCommDestroy" : "ncclCommAbort";
	nccl_watch *w = ppcc_calloc(1, sizeof *w);
	pthread_condattr_t ca;
	pthread_attr_t attr;
	pthread_t th;
	int started = 0;
	if (w && pthread_condattr_init(&ca) == 0) {
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		if (pthread_cond_init(&w->cv, &ca) == 0) {
			if (pthread_mutex_init(&w->mu, NULL) == 0) {
				w->comm = comm;
				w->destroy = destroy;
				w->device = t->device;
				if (pthread_attr_init(&attr) == 0) {
					pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
					started = pthread_create(&th, &attr, nccl_watch_main, w) == 0;
					pthread_attr_destroy(&attr);
				}
				if (!started)
					pthread_mutex_destroy(&w->mu);
			}
			if (!started)
				pthread_cond_destroy(&w->cv);
		}
		pthread_condattr_destroy(&ca);
	}
	if (!started) {
		/* no thread to watch it: the call itself, unbounded */
		ppcc_free(w);
		if (destroy)
			ncclCommDestroy(comm);
		else
			ncclCommAbort(comm);
		return 0;
	}
	struct timespec ts;
	nccl_timespec(&ts, deadline);
	pthread_mutex_lock(&w->mu);
	while (!w->done)
		if (pthread_cond_timedwait(&w->cv, &w->mu, &ts) == ETIMEDOUT)
			break;
	int done = w->done;
	if (!done)
		w->abandoned = 1;
	pthread_mutex_unlock(&w->mu);
	if (done) {
		nccl_watch_free(w);
		return 0;
	}
	rt_tctx_report(t->cx, "nccl transport: %s did not return within %.3f s; "
		       "the process must exit", call, t->cx->timeout_s);
	t->hung = 1;
	return PPCC_RT_ETIMEOUT;
}

/* ---- MPI requests that may be abandoned ------------------------------------------- */

#if PPCC_HAVE_MPI
/* A non-blocking collective's buffers and request.  One that does not
 * complete by its deadline stays posted, so its buffers are kept (on
 * nccl_abandoned, reachable to the process's end) and the process must
 * end with MPI_Abort, never MPI_Finalize. */
typedef struct nccl_coll {
	struct nccl_coll *next;
	MPI_Request req;
	char buf[]; /* the collective's memory */
} nccl_coll;

static nccl_coll *nccl_abandoned;

static pthread_mutex_t nccl_abandoned_mu = PTHREAD_MUTEX_INITIALIZER;

static nccl_coll *nccl_coll_new(size_t bytes)
{
	nccl_coll *c = ppcc_calloc(1, sizeof *c + bytes);
	if (c)
		c->req = MPI_REQUEST_NULL;
	return c;
}

/* 0 once complete; ETIMEOUT (c abandoned) or ETRANSPORT. */
static int nccl_coll_wait(rt_transport *t, nccl_coll *c, double deadline,
			  const char *what)
{
	int done = 0, spins = 0;
	while (MPI_Test(&c->req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
	       !done) {
		if (ppcc_rt_now() > deadline) {
			rt_tctx_report(t->cx, "nccl transport: %s did not complete "
				       "within %.3f s; it stays posted, so the "
				       "process must end with MPI_Abort", what,
				       t->cx->timeout_s);
			pthread_mutex_lock(&nccl_abandoned_mu);
			c->next = nccl_abandoned;
			nccl_abandoned = c;
			pthread_mutex_unlock(&nccl_abandoned_mu);
			return PPCC_RT_ETIMEOUT;
		}
		nccl_pause(&spins);
	}
	if (!done) {
		rt_tctx_report(t->cx, "nccl transport: MPI_Test failed (%s)", what);
		return PPCC_RT_ETRANSPORT;
	}
	return 0;
}
#endif

/* ---- data parallelism ------------------------------------------------------------- */

/* One gradient reduction in flight: its rt_coll and the event that
 * completes it on the reduction stream. */
typedef struct nccl_red {
	struct nccl_red *next;
	rt_coll *c;
	cudaEvent_t done;
} nccl_red;

/* The reduction stream, its event, and the communicator of this
 * pipeline rank's replicas (a split of the world's). */
static int nccl_dp_setup(rt_transport *t)
{
	cudaError_t e;
	if ((e = cudaStreamCreateWithFlags(&t->dp_stream,
					   cudaStreamNonBlocking)) != cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaStreamCreate");
	t->have_dp_stream = 1;
	if ((e = cudaEventCreateWithFlags(&t->dp_ready, cudaEventDisableTiming)) !=
	    cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaEventCreate");
	t->have_dp_ready = 1;
	/* allocated once: cudaFree waits for the whole device, which may
	 * wait for a peer, so nothing is freed while the rank runs */
	if ((e = cudaMalloc((void **)&t->dp_desc,
			    (size_t)t->d * RT_COLL_DESC * sizeof *t->dp_desc)) != cudaSuccess) {
		t->dp_desc = NULL;
		return nccl_cuda_fail(t, e, "cudaMalloc");
	}
	/* NULL config: the world's, non-blocking */
	ncclResult_t r = ncclCommSplit(t->comm, t->cx->rank, t->replica,
				       &t->dp_comm, NULL);
	if (r != ncclSuccess && r != ncclInProgress)
		return nccl_fail(t, r, "ncclCommSplit");
	int err = nccl_settle_on(t, t->dp_comm ? t->dp_comm : t->comm, r,
				 "ncclCommSplit", ppcc_rt_now() + t->cx->timeout_s);
	if (err == PPCC_RT_ETIMEOUT)
		rt_tctx_report(t->cx, "nccl transport: the communicator of the "
			       "%d replicas did not form within %.3f s", t->d,
			       t->cx->timeout_s);
	return err;
}

/* Forgets the reductions and leaves their communicator: aborted after a
 * failure, else finalized and destroyed (each bounded). */
static void nccl_dp_release(rt_transport *t, int failed, double deadline)
{
	while (t->reds) {
		nccl_red *x = t->reds;
		t->reds = x->next;
		x->c->state = NULL;
		if (!t->hung)
			cudaEventDestroy(x->done);
		ppcc_free(x);
	}
	if (!t->dp_comm || t->hung)
		return;
	if (failed) {
		nccl_bounded(t, t->dp_comm, 0, deadline);
	} else {
		ncclResult_t r = ncclCommFinalize(t->dp_comm);
		int ok = nccl_settle_on(t, t->dp_comm, r, "ncclCommFinalize",
					deadline) == 0;
		nccl_bounded(t, t->dp_comm, ok, deadline);
	}
	t->dp_comm = NULL;
}

/* Polls ev (on the reduction stream) like nccl_sync, watching the
 * replicas' communicator for errors. */
static int nccl_dp_sync(rt_transport *t, cudaEvent_t ev, double deadline)
{
	int spins = 0;
	for (;;) {
		cudaError_t e = cudaEventQuery(ev);
		if (e == cudaSuccess)
			return 0;
		if (e != cudaErrorNotReady)
			return nccl_cuda_fail(t, e, "cudaEventQuery");
		ncclResult_t ar = ncclSuccess;
		if (ncclCommGetAsyncError(t->dp_comm, &ar) == ncclSuccess &&
		    ar != ncclSuccess && ar != ncclInProgress)
			return nccl_fail(t, ar, "an NCCL reduction");
		if (nccl_peer_failed(t))
			return PPCC_RT_EPEER;
		if (ppcc_rt_now() > deadline)
			return PPCC_RT_ETIMEOUT;
		nccl_pause(&spins);
	}
}

/* The replicas' descriptors of reduction c, all-gathered on the
 * reduction stream and compared with this one's before c runs. */
static int nccl_dp_verify(rt_transport *t, rt_coll *c, double deadline)
{
	int d = t->d, me = t->replica, err;
	int64_t *dev = t->dp_desc, *host = t->pinned;
	int64_t desc[RT_COLL_DESC];
	rt_coll_desc(c, desc);
	cudaError_t e;
	memcpy(host + RT_COLL_DESC * me, desc, sizeof desc);
	if ((e = cudaMemcpyAsync(dev + RT_COLL_DESC * me, host + RT_COLL_DESC * me,
				 sizeof desc, cudaMemcpyHostToDevice,
				 t->dp_stream)) != cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaMemcpyAsync");
	ncclResult_t r = ncclAllGather(dev + RT_COLL_DESC * me, dev, RT_COLL_DESC,
				       ncclInt64, t->dp_comm, t->dp_stream);
	if (r != ncclSuccess && r != ncclInProgress)
		return nccl_fail(t, r, "ncclAllGather");
	if ((err = nccl_settle_on(t, t->dp_comm, r, "ncclAllGather", deadline)) < 0)
		return err;
	if ((e = cudaMemcpyAsync(host, dev, (size_t)d * sizeof desc,
				 cudaMemcpyDeviceToHost, t->dp_stream)) !=
		    cudaSuccess ||
	    (e = cudaEventRecord(t->copy_done, t->dp_stream)) != cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaMemcpyAsync");
	if ((err = nccl_dp_sync(t, t->copy_done, deadline)) < 0) {
		if (err == PPCC_RT_ETIMEOUT)
			snprintf(c->why, sizeof c->why, "replica %d: %s "
				 "stage %d bucket %d #%llu: the replicas' "
				 "descriptors did not arrive", me,
				 rt_coll_name(c->kind), c->stage,
				 c->bucket, (unsigned long long)c->seq);
		return err;
	}
	for (int q = 0; q < d; q++) {
		const int64_t *x = host + RT_COLL_DESC * q;
		if (q == me || memcmp(x, desc, sizeof desc) == 0)
			continue;
		return rt_coll_mismatch(t->cx, c, me, x, q, nccl_world_of(t, q));
	}
	return 0;
}

/* Launches c: after the compute stream's work so far, one in-place
 * ncclAllReduce of its doubles on the reduction stream, then its event.
 * Waits only to compare descriptors (c->verify). */
static int nccl_coll_post(rt_transport *t, rt_coll *c)
{
	cudaError_t e;
	int err;
	c->done = 0;
	c->waiting_on = -1;
	c->state = NULL;
	if (t->d == 1) {
		c->done = 1;
		c->t_done = ppcc_rt_now();
		return 0;
	}
	if ((err = nccl_enter(t)) < 0)
		return err;
	double deadline = ppcc_rt_now() + t->cx->timeout_s;
	if (c->verify && (err = nccl_dp_verify(t, c, deadline)) < 0)
		return err;
	nccl_red *x = ppcc_calloc(1, sizeof *x);
	if (!x)
		return PPCC_RT_ENOMEM;
	if ((e = cudaEventCreateWithFlags(&x->done, cudaEventDisableTiming)) !=
	    cudaSuccess) {
		ppcc_free(x);
		return nccl_cuda_fail(t, e, "cudaEventCreate");
	}
	x->c = c;
	c->state = x;
	x->next = t->reds;
	t->reds = x;
	if ((e = cudaEventRecord(t->dp_ready, t->compute)) != cudaSuccess ||
	    (e = cudaStreamWaitEvent(t->dp_stream, t->dp_ready, 0)) != cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaStreamWaitEvent");
	const char *call = "ncclAllReduce";
	ncclResult_t r;
	if (c->kind == RT_COLL_ALL_REDUCE) {
		r = ncclAllReduce(c->grad, c->grad, c->count, ncclFloat64,
				  ncclSum, t->dp_comm, t->dp_stream);
	} else {
		/* the shards of the first d x q values in place, the rest
		 * the last replica's */
		int d = t->d, me = t->replica;
		size_t q = c->count / (size_t)d, rest = c->count - q * (size_t)d;
		double *tail = c->grad + q * (size_t)d;
		int gather = rt_coll_gathers(c->kind);
		call = gather ? "ncclAllGather" : "ncclReduceScatter";
		r = ncclGroupStart();
		if (r == ncclSuccess && q > 0)
			r = gather
				? ncclAllGather(c->grad + q * (size_t)me, c->grad, q,
						ncclFloat64, t->dp_comm, t->dp_stream)
				: ncclReduceScatter(c->grad, c->grad + q * (size_t)me,
						    q, ncclFloat64, ncclSum,
						    t->dp_comm, t->dp_stream);
		if (r == ncclSuccess && rest > 0)
			r = gather
				? ncclBroadcast(tail, tail, rest, ncclFloat64, d - 1,
						t->dp_comm, t->dp_stream)
				: ncclReduce(tail, tail, rest, ncclFloat64, ncclSum,
					     d - 1, t->dp_comm, t->dp_stream);
		ncclResult_t g = ncclGroupEnd();
		if (r == ncclSuccess || r == ncclInProgress)
			r = g;
	}
	if (r != ncclSuccess && r != ncclInProgress)
		return nccl_fail(t, r, call);
	if ((err = nccl_settle_on(t, t->dp_comm, r, call, deadline)) < 0)
		return err;
	if (c->round) {
		/* ZeRO-3's round, in place: the shards other replicas own
		 * zeroed, so that the next backward adds its gradient to
		 * this replica's sum alone, and the compute stream waits
		 * for it before that backward writes the buffer */
		size_t lo = rt_shard_lo(c->count, t->d, t->replica);
		size_t hi = lo + rt_shard_len(c->count, t->d, t->replica);
		if ((lo > 0 && (e = cudaMemsetAsync(c->grad, 0, lo * sizeof(double),
						    t->dp_stream)) != cudaSuccess) ||
		    (hi < c->count &&
		     (e = cudaMemsetAsync(c->grad + hi, 0,
					  (c->count - hi) * sizeof(double),
					  t->dp_stream)) != cudaSuccess))
			return nccl_cuda_fail(t, e, "cudaMemsetAsync");
	}
	if ((e = cudaEventRecord(x->done, t->dp_stream)) != cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaEventRecord");
	if (c->round &&
	    (e = cudaStreamWaitEvent(t->compute, x->done, 0)) != cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaStreamWaitEvent");
	return 0;
}

/* Marks every posted reduction whose event has completed; never
 * blocks. */
static int nccl_coll_test(rt_transport *t, rt_coll *c)
{
	(void)c;
	int err = nccl_enter(t);
	if (err < 0)
		return err;
	for (nccl_red *x = t->reds; x; x = x->next) {
		if (x->c->done)
			continue;
		cudaError_t e = cudaEventQuery(x->done);
		if (e == cudaErrorNotReady)
			continue;
		if (e != cudaSuccess)
			return nccl_cuda_fail(t, e, "cudaEventQuery");
		x->c->done = 1;
		x->c->t_done = ppcc_rt_now();
	}
	ncclResult_t ar = ncclSuccess;
	if (t->dp_comm && ncclCommGetAsyncError(t->dp_comm, &ar) == ncclSuccess &&
	    ar != ncclSuccess && ar != ncclInProgress)
		return nccl_fail(t, ar, "an NCCL reduction");
	return 0;
}

static void nccl_coll_release(rt_transport *t, rt_coll *c)
{
	nccl_red *x = c->state;
	if (!x)
		return;
	for (nccl_red **p = &t->reds; *p; p = &(*p)->next)
		if (*p == x) {
			*p = x->next;
			break;
		}
	if (!t->hung) {
		cudaSetDevice(t->device);
		cudaEventDestroy(x->done);
	}
	ppcc_free(x);
	c->state = NULL;
}

/* ---- set-up --------------------------------------------------------------------- */

static void nccl_release(rt_transport *t, int failed)
{
	double deadline = ppcc_rt_now() + t->cx->timeout_s;
	if (!t->hung)
		cudaSetDevice(t->device);
	nccl_dp_release(t, failed || t->aborted, deadline);
	if (t->comm && !t->hung) {
		if (failed || t->aborted) {
			if (!t->aborted) {
				t->aborted = 1;
				nccl_bounded(t, t->comm, 0, deadline);
			}
		} else {
			ncclResult_t r = ncclCommFinalize(t->comm);
			if (nccl_settle(t, r, "ncclCommFinalize", deadline) == 0)
				nccl_bounded(t, t->comm, 1, deadline);
			else
				nccl_bounded(t, t->comm, 0, deadline);
		}
	}
	t->comm = NULL;
	ppcc_rt_oob_close(t->oob, failed || t->aborted, deadline);
	t->oob = NULL;
	if (t->hung)
		return; /* a thread may still be inside NCCL with these */
	if (t->have_events) {
		cudaEventDestroy(t->compute_done);
		cudaEventDestroy(t->group_done);
		cudaEventDestroy(t->copy_done);
	}
	if (t->have_streams) {
		cudaStreamDestroy(t->compute);
		cudaStreamDestroy(t->comm_stream);
	}
	if (t->have_dp_ready)
		cudaEventDestroy(t->dp_ready);
	if (t->dp_desc)
		cudaFree(t->dp_desc);
	if (t->have_dp_stream)
		cudaStreamDestroy(t->dp_stream);
	if (t->pinned)
		cudaFreeHost(t->pinned);
	ppcc_free(t);
}

/* The pinned staging: the exchange's words, and in debug mode the
 * largest message with its trailer. */
static size_t nccl_pinned_bytes(const rt_tctx *cx, int n)
{
	size_t need = (size_t)n * 2 * sizeof(uint64_t);
	/* a reduction's descriptors, d x RT_COLL_DESC words */
	if (cx->data_parallel > 1 &&
	    (size_t)cx->data_parallel * RT_COLL_DESC * sizeof(int64_t) > need)
		need = (size_t)cx->data_parallel * RT_COLL_DESC * sizeof(int64_t);
	if (cx->debug)
		for (int k = 0; k < cx->s->n_stages; k++) {
			uint64_t b = cx->s->stages[k].recv_bytes;
			if (cx->s->stages[k].send_bytes > b)
				b = cx->s->stages[k].send_bytes;
			if (b + 64 > need)
				need = (size_t)b + 64;
		}
	return need;
}

/* This rank and the number of ranks: the caller's with opts->nccl_id,
 * else MPI_COMM_WORLD's. */
static int nccl_rank(rt_transport *t, int rank)
{
	rt_tctx *cx = t->cx;
	if (cx->nccl_id) {
		t->rank = rank;
		t->n = cx->s->n_ranks * t->d;
		return 0;
	}
#if PPCC_HAVE_MPI
	int flag = 0;
	if (MPI_Initialized(&flag) != MPI_SUCCESS || !flag) {
		rt_tctx_report(cx, "nccl transport: no options.nccl_id and MPI "
			       "is not initialised to broadcast one");
		return PPCC_RT_EINPUT;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &t->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &t->n);
	return 0;
#else
	(void)rank;
	rt_tctx_report(cx, "nccl transport: options.nccl_id is required "
		       "(this libppcc has no MPI to broadcast one)");
	return PPCC_RT_EINPUT;
#endif
}

/* The caller's ncclUniqueId, or rank 0's broadcast over MPI.  With MPI,
 * every rank must get here (rank 0 broadcasts even a failed id, zeroed,
 * so that nobody waits for it). */
static int nccl_get_id(rt_transport *t, ncclUniqueId *id)
{
	rt_tctx *cx = t->cx;
	if (cx->nccl_id) {
		memcpy(id, cx->nccl_id, sizeof *id);
		return 0;
	}
#if PPCC_HAVE_MPI
	static const ncclUniqueId zero;
	ncclResult_t r = ncclSuccess;
	int err;
	/* the broadcast's buffer lives on the heap: abandoned at the
	 * timeout, MPI may still write it */
	nccl_coll *c = nccl_coll_new(sizeof *id);
	if (!c)
		return PPCC_RT_ENOMEM;
	if (t->rank == 0 && (r = ncclGetUniqueId((ncclUniqueId *)c->buf)) !=
				    ncclSuccess)
		memset(c->buf, 0, sizeof *id);
	/* non-blocking, so that a rank that never comes (its own set-up
	 * failed) costs the timeout, not a hang */
	if (MPI_Ibcast(c->buf, (int)sizeof *id, MPI_BYTE, 0, MPI_COMM_WORLD,
		       &c->req) != MPI_SUCCESS) {
		ppcc_free(c);
		rt_tctx_report(cx, "nccl transport: MPI_Ibcast failed");
		return PPCC_RT_ETRANSPORT;
	}
	if ((err = nccl_coll_wait(t, c, ppcc_rt_now() + cx->timeout_s,
				  "the broadcast of the ncclUniqueId")) < 0) {
		if (err != PPCC_RT_ETIMEOUT)
			ppcc_free(c);
		return err;
	}
	memcpy(id, c->buf, sizeof *id);
	ppcc_free(c);
	if (r != ncclSuccess)
		return nccl_fail(t, r, "ncclGetUniqueId");
	if (memcmp(id, &zero, sizeof zero) == 0) {
		rt_tctx_report(cx, "nccl transport: rank 0 could not make an "
			       "ncclUniqueId");
		return PPCC_RT_EPEER;
	}
	return 0;
#else
	(void)id;
	return PPCC_RT_EINPUT;
#endif
}

/* The rank's place among the ranks of its node: the launcher's word,
 * else (MPI) the ranks whose host name is this rank's (what
 * MPI_Comm_split_type with MPI_COMM_TYPE_SHARED would group, found with
 * a non-blocking all-gather so that it is bounded), else its rank. */
static int nccl_local_rank(rt_transport *t, int *out)
{
	int lr = ppcc_rt_local_rank_env(NULL);
	*out = t->rank;
	if (lr >= 0) {
		*out = lr;
		return 0;
	}
#if PPCC_HAVE_MPI
	if (!t->cx->nccl_id) {
		size_t w = MPI_MAX_PROCESSOR_NAME + 1;
		nccl_coll *c = nccl_coll_new(w * ((size_t)t->n + 1));
		int len = 0, err;
		if (!c)
			return PPCC_RT_ENOMEM;
		char *mine = c->buf + w * (size_t)t->n;
		MPI_Get_processor_name(mine, &len);
		if (MPI_Iallgather(mine, (int)w, MPI_CHAR, c->buf, (int)w, MPI_CHAR,
				   MPI_COMM_WORLD, &c->req) != MPI_SUCCESS) {
			ppcc_free(c);
			rt_tctx_report(t->cx, "nccl transport: MPI_Iallgather failed");
			return PPCC_RT_ETRANSPORT;
		}
		if ((err = nccl_coll_wait(t, c, ppcc_rt_now() + t->cx->timeout_s,
					  "the all-gather of host names")) < 0) {
			if (err != PPCC_RT_ETIMEOUT)
				ppcc_free(c);
			return err;
		}
		lr = 0;
		for (int r = 0; r < t->rank; r++)
			lr += strncmp(c->buf + w * (size_t)r, mine, w) == 0;
		ppcc_free(c);
		*out = lr;
	}
#endif
	return 0;
}

/* The out-of-band abort channel: MPI when the id came over it, else the
 * TCP store on $PPCC_ABORT_PORT, else none (peers then learn of a
 * failure only from their own timeout). */
static int nccl_open_oob(rt_transport *t)
{
	double deadline = ppcc_rt_now() + t->cx->timeout_s;
	int port = ppcc_rt_oob_port_env();
	if (port)
		return ppcc_rt_oob_tcp_open(&t->oob, t->cx, t->rank, t->n, port,
					    deadline);
#if PPCC_HAVE_MPI
	if (!t->cx->nccl_id)
		return ppcc_rt_oob_mpi_open(&t->oob, t->cx, deadline);
#endif
	return 0;
}

/* On t->device: with own_streams the compute and communication streams
 * (loopback shares the world's), then the events and pinned staging. */
static int nccl_cuda_setup(rt_transport *t, int own_streams)
{
	cudaError_t e;
	if ((e = cudaSetDevice(t->device)) != cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaSetDevice");
	if (own_streams) {
		if ((e = cudaStreamCreateWithFlags(&t->compute,
						   cudaStreamNonBlocking)) != cudaSuccess)
			return nccl_cuda_fail(t, e, "cudaStreamCreate");
		if ((e = cudaStreamCreateWithFlags(&t->comm_stream,
						   cudaStreamNonBlocking)) != cudaSuccess) {
			cudaStreamDestroy(t->compute);
			return nccl_cuda_fail(t, e, "cudaStreamCreate");
		}
		t->have_streams = 1;
	}
	cudaEvent_t *evs[3] = {&t->compute_done, &t->group_done, &t->copy_done};
	for (int k = 0; k < 3; k++)
		if ((e = cudaEventCreateWithFlags(evs[k], cudaEventDisableTiming)) !=
		    cudaSuccess) {
			while (k-- > 0)
				cudaEventDestroy(*evs[k]);
			return nccl_cuda_fail(t, e, "cudaEventCreate");
		}
	t->have_events = 1;
	t->pinned_bytes = nccl_pinned_bytes(t->cx, t->n);
	if ((e = cudaMallocHost(&t->pinned, t->pinned_bytes)) != cudaSuccess) {
		t->pinned = NULL;
		return nccl_cuda_fail(t, e, "cudaMallocHost");
	}
	return 0;
}

static int nccl_init(rt_transport **out, rt_tctx *cx, int rank)
{
	int ndev = 0, err = 0, local = 0;
	cudaError_t e;
	ncclUniqueId id;
	*out = NULL;
	rt_transport *t = ppcc_calloc(1, sizeof *t);
	if (!t)
		return PPCC_RT_ENOMEM;
	t->cx = cx;

	t->d = cx->data_parallel > 0 ? cx->data_parallel : 1;
	if ((err = nccl_rank(t, rank)) < 0)
		goto out;
	if (t->n % t->d != 0) {
		rt_tctx_report(cx, "options.data_parallel %d does not divide "
			       "the %d ranks of the world", t->d, t->n);
		err = PPCC_RT_EINPUT;
		goto out;
	}
	t->replica = t->rank % t->d;
	cx->rank = t->rank / t->d;
	cx->n_ranks = t->n / t->d;
	cx->grid_d = t->d;
	cx->grid_replica = t->replica;
	cx->n_world = t->n;
	/* Every rank fails here alike on a machine without a GPU, before
	 * anything collective. */
	if ((e = cudaGetDeviceCount(&ndev)) != cudaSuccess) {
		err = nccl_cuda_fail(t, e, "cudaGetDeviceCount");
		goto out;
	}
	if (ndev < 1) {
		rt_tctx_report(cx, "nccl transport: cudaGetDeviceCount found "
			       "no CUDA device");
		err = PPCC_RT_ETRANSPORT;
		goto out;
	}
	if ((err = nccl_get_id(t, &id)) < 0)
		goto out;
	if (t->rank < 0 || t->rank >= t->n) {
		rt_tctx_report(cx, "nccl transport: rank %d outside %d ranks",
			       t->rank, t->n);
		err = PPCC_RT_EINPUT;
		goto out;
	}
	if ((err = nccl_open_oob(t)) < 0)
		goto out;
	if (cx->cuda_device >= 0) {
		t->device = cx->cuda_device;
	} else {
		if ((err = nccl_local_rank(t, &local)) < 0)
			goto out;
		if ((t->device = ppcc_rt_device_choose(local, ndev)) < 0) {
			rt_tctx_report(cx, "nccl transport: this rank is number %d "
				       "on its node, which has %d devices: two "
				       "ranks would share a GPU (set "
				       "options.cuda_device)", local, ndev);
			err = PPCC_RT_EINPUT;
			goto out;
		}
	}
	if ((err = nccl_cuda_setup(t, 1)) < 0)
		goto out;

	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	cfg.blocking = 0;
	ncclResult_t r = ncclCommInitRankConfig(&t->comm, t->n, id, t->rank,
						&cfg);
	if (r != ncclSuccess && r != ncclInProgress) {
		err = nccl_fail(t, r, "ncclCommInitRankConfig");
		goto out;
	}
	if ((err = nccl_settle(t, r, "ncclCommInitRankConfig",
			       ppcc_rt_now() + cx->timeout_s)) < 0) {
		if (err == PPCC_RT_ETIMEOUT)
			rt_tctx_report(cx, "nccl transport: the communicator "
				       "did not form within %.3f s",
				       cx->timeout_s);
		goto out;
	}
	if (t->d > 1 && (err = nccl_dp_setup(t)) < 0)
		goto out;
	cx->cuda_stream = t->compute;
out:
	if (err < 0) {
		/* the others stop instead of waiting for this rank */
		if (err != PPCC_RT_EPEER)
			ppcc_rt_oob_signal(t->oob, t->rank, err);
		nccl_release(t, 1);
		return err;
	}
	*out = t;
	return 0;
}

static int nccl_exchange(rt_transport *t, uint64_t *out,
			 const uint64_t mine[2], double deadline)
{
	uint64_t *dev = NULL, *host = t->pinned;
	size_t n = (size_t)t->n * 2;
	cudaError_t e;
	int err;
	if ((err = nccl_enter(t)) < 0)
		return err;
	if ((e = cudaMalloc((void **)&dev, n * sizeof *dev)) != cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaMalloc");
	memcpy(host + 2 * t->rank, mine, 2 * sizeof *dev);
	if ((e = cudaMemcpyAsync(dev + 2 * t->rank, host + 2 * t->rank,
				 2 * sizeof *dev, cudaMemcpyHostToDevice,
				 t->comm_stream)) != cudaSuccess) {
		err = nccl_cuda_fail(t, e, "cudaMemcpyAsync");
		goto out;
	}
	ncclResult_t r = ncclAllGather(dev + 2 * t->rank, dev, 2, ncclUint64,
				       t->comm, t->comm_stream);
	if ((err = nccl_settle(t, r, "ncclAllGather", deadline)) < 0)
		goto out;
	if ((e = cudaMemcpyAsync(host, dev, n * sizeof *dev,
				 cudaMemcpyDeviceToHost, t->comm_stream)) !=
		    cudaSuccess ||
	    (e = cudaEventRecord(t->group_done, t->comm_stream)) != cudaSuccess) {
		err = nccl_cuda_fail(t, e, "cudaMemcpyAsync");
		goto out;
	}
	if ((err = nccl_sync(t, t->group_done, deadline)) < 0)
		goto out;
	memcpy(out, host, n * sizeof *dev);
out:
	/* a transfer still running reads dev: leave it to the abort */
	if (err != PPCC_RT_ETIMEOUT && err != PPCC_RT_EPEER)
		cudaFree(dev);
	return err;
}

static int nccl_group_begin(rt_transport *t)
{
	cudaError_t e;
	int err;
	if ((err = nccl_enter(t)) < 0)
		return err;
	if ((e = cudaEventRecord(t->compute_done, t->compute)) != cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaEventRecord");
	if ((e = cudaStreamWaitEvent(t->comm_stream, t->compute_done, 0)) !=
	    cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaStreamWaitEvent");
	ncclResult_t r = ncclGroupStart();
	return r == ncclSuccess ? 0 : nccl_fail(t, r, "ncclGroupStart");
}

/* Never fails before ncclGroupEnd: the group is always closed. */
static int nccl_group_end(rt_transport *t)
{
	ncclResult_t r = ncclGroupEnd();
	int err = nccl_settle(t, r, "ncclGroupEnd",
			      ppcc_rt_now() + t->cx->timeout_s);
	if (err < 0)
		return err;
	cudaError_t e = cudaEventRecord(t->group_done, t->comm_stream);
	return e == cudaSuccess ? 0 : nccl_cuda_fail(t, e, "cudaEventRecord");
}

/* Inside a group (the device set by nccl_group_begin): no CUDA call. */
/* The world rank of pipeline rank k of this replica; an all-to-all's k
 * is a world rank already. */
static int nccl_peer(const rt_transport *t, const rt_req *r, int k)
{
	return r->world ? k : k * t->d + t->replica;
}

static int nccl_send(rt_transport *t, rt_req *r)
{
	ncclResult_t res = ncclSend(r->buf, r->bytes, ncclUint8,
				    nccl_peer(t, r, r->dst), t->comm,
				    t->comm_stream);
	return res == ncclSuccess || res == ncclInProgress
		       ? 0 : nccl_fail(t, res, "ncclSend");
}

static int nccl_recv(rt_transport *t, rt_req *r)
{
	ncclResult_t res = ncclRecv(r->buf, r->bytes, ncclUint8,
				    nccl_peer(t, r, r->src), t->comm,
				    t->comm_stream);
	return res == ncclSuccess || res == ncclInProgress
		       ? 0 : nccl_fail(t, res, "ncclRecv");
}

/* Every request of a group completes with the group's event. */
static int nccl_test(rt_transport *t, rt_req *r, int *done)
{
	int err;
	*done = 0;
	if ((err = nccl_enter(t)) < 0)
		return err;
	cudaError_t e = cudaEventQuery(t->group_done);
	if (e == cudaErrorNotReady)
		return 0;
	if (e != cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaEventQuery");
	r->status = 0;
	atomic_store(&r->done, 1);
	*done = 1;
	return 0;
}

static int nccl_wait(rt_transport *t, rt_req *r, double deadline)
{
	if (atomic_load(&r->done))
		return 0;
	int err = nccl_enter(t);
	if (err == 0)
		err = nccl_sync(t, t->group_done, deadline);
	if (err == 0) {
		r->status = 0;
		atomic_store(&r->done, 1);
	}
	return err;
}

/* Tells the others first (the abort itself tells nobody), then aborts
 * the communicator, bounded. */
static void nccl_abort(rt_transport *t, int status)
{
	ppcc_rt_oob_signal(t->oob, t->rank, status);
	if (t->comm && !t->aborted && !t->hung) {
		cudaSetDevice(t->device);
		t->aborted = 1;
		double deadline = ppcc_rt_now() + t->cx->timeout_s;
		if (t->dp_comm && nccl_bounded(t, t->dp_comm, 0, deadline) == 0)
			t->dp_comm = NULL;
		if (!t->hung)
			nccl_bounded(t, t->comm, 0, deadline);
	}
}

static int nccl_aborted(rt_transport *t, int *out_rank, int *out_status)
{
	return ppcc_rt_oob_poll(t->oob, out_rank, out_status);
}

static int nccl_alloc(rt_transport *t, void **out, size_t bytes)
{
	int err;
	if ((err = nccl_enter(t)) < 0)
		return err;
	cudaError_t e = cudaMalloc(out, bytes ? bytes : 1);
	if (e == cudaErrorMemoryAllocation) {
		cudaGetLastError(); /* not sticky: clear it */
		return PPCC_RT_ENOMEM;
	}
	return e == cudaSuccess ? 0 : nccl_cuda_fail(t, e, "cudaMalloc");
}

/* cudaFree waits for the device: unbounded (runtime.h); skipped once an
 * abort has hung. */
static void nccl_free(rt_transport *t, void *p)
{
	if (t->hung)
		return;
	cudaSetDevice(t->device);
	cudaFree(p);
}

/* Device to host through the pinned staging, ordered after the compute
 * stream's work (which wrote src), bounded by the timeout. */
static int nccl_read(rt_transport *t, void *dst, const void *src, size_t n)
{
	cudaError_t e;
	int err;
	if ((err = nccl_enter(t)) < 0)
		return err;
	if (n > t->pinned_bytes) {
		rt_tctx_report(t->cx, "nccl transport: a copy of %zu bytes, the "
			       "staging holds %zu", n, t->pinned_bytes);
		return PPCC_RT_EINTERNAL;
	}
	if ((e = cudaMemcpyAsync(t->pinned, src, n, cudaMemcpyDeviceToHost,
				 t->compute)) != cudaSuccess ||
	    (e = cudaEventRecord(t->copy_done, t->compute)) != cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaMemcpyAsync");
	if ((err = nccl_sync(t, t->copy_done, ppcc_rt_now() + t->cx->timeout_s)) < 0)
		return err;
	memcpy(dst, t->pinned, n);
	return 0;
}

/* Host to device on the compute stream, so that the group's transfer
 * (which waits for that stream) reads it; waited for, so the staging can
 * be reused. */
static int nccl_write(rt_transport *t, void *dst, const void *src, size_t n)
{
	cudaError_t e;
	int err;
	if ((err = nccl_enter(t)) < 0)
		return err;
	if (n > t->pinned_bytes) {
		rt_tctx_report(t->cx, "nccl transport: a copy of %zu bytes, the "
			       "staging holds %zu", n, t->pinned_bytes);
		return PPCC_RT_EINTERNAL;
	}
	memcpy(t->pinned, src, n);
	if ((e = cudaMemcpyAsync(dst, t->pinned, n, cudaMemcpyHostToDevice,
				 t->compute)) != cudaSuccess ||
	    (e = cudaEventRecord(t->copy_done, t->compute)) != cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaMemcpyAsync");
	return nccl_sync(t, t->copy_done, ppcc_rt_now() + t->cx->timeout_s);
}

/* Only an aborted communicator stops touching the buffers. */
static void nccl_cancel(rt_transport *t, rt_req *r)
{
	(void)r;
	nccl_abort(t, PPCC_RT_EPEER);
}

static void nccl_finalize(rt_transport *t, int failed)
{
	if (t)
		nccl_release(t, failed);
}

const rt_transport_ops ppcc_rt_nccl_ops = {
	.name = "nccl",
	.init = nccl_init,
	.exchange = nccl_exchange,
	.group_begin = nccl_group_begin,
	.group_end = nccl_group_end,
	.send = nccl_send,
	.recv = nccl_recv,
	.test = nccl_test,
	.wait = nccl_wait,
	.abort = nccl_abort,
	.aborted = nccl_aborted,
	.alloc = nccl_alloc,
	.free = nccl_free,
	.read = nccl_read,
	.write = nccl_write,
	.cancel = nccl_cancel,
	.coll_post = nccl_coll_post,
	.coll_test = nccl_coll_test,
	.coll_release = nccl_coll_release,
	.finalize = nccl_finalize,
};

/* ---- loopback: every rank a thread, one GPU, sends to self ------------------------ */

struct nccl_loop {
	int refs, n, device;
	int dead; /* a rank failed: no transfer is issued any more */
	ncclComm_t comm; /* one rank */
	cudaStream_t compute, xfer;
	cudaEvent_t ready;
	rt_req **sends, **recvs; /* n * n lists by (src, dst), oldest first */
};

/* A request's transfer, set under the world's mutex when both sides are
 * posted: the event that completes it, and whether it was issued. */
#define LOOP_EVENT(r) ((r)->opaque[1])
#define LOOP_ISSUED(r) ((r)->opaque[2])

static cudaEvent_t loop_event(const rt_req *r)
{
	return (cudaEvent_t)(uintptr_t)LOOP_EVENT(r);
}

static void loop_append(rt_req **list, rt_req *r)
{
	r->next = NULL;
	while (*list)
		list = &(*list)->next;
	*list = r;
}

static void loop_unlink(rt_req **list, const rt_req *r)
{
	for (rt_req **pp = list; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			return;
		}
}

static void loop_destroy(rt_transport *t, nccl_loop *L, int failed)
{
	double deadline = ppcc_rt_now() + t->cx->timeout_s;
	cudaSetDevice(L->device);
	if (L->comm) {
		t->comm = L->comm;
		if (failed || L->dead) {
			nccl_bounded(t, L->comm, 0, deadline);
		} else {
			ncclResult_t r = ncclCommFinalize(L->comm);
			nccl_bounded(t, L->comm,
				     nccl_settle(t, r, "ncclCommFinalize", deadline) == 0,
				     deadline);
		}
		t->comm = NULL;
	}
	if (!t->hung) {
		if (L->ready)
			cudaEventDestroy(L->ready);
		if (L->xfer)
			cudaStreamDestroy(L->xfer);
		if (L->compute)
			cudaStreamDestroy(L->compute);
	}
	ppcc_free(L->sends);
	ppcc_free(L->recvs);
	ppcc_free(L);
}

/* The world's shared state, made by the first rank to join (under the
 * world's mutex). */
static int loop_new(nccl_loop **out, rt_transport *t)
{
	rt_tctx *cx = t->cx;
	cudaError_t e;
	ncclUniqueId id;
	int err = 0;
	nccl_loop *L = ppcc_calloc(1, sizeof *L);
	*out = NULL;
	if (!L)
		return PPCC_RT_ENOMEM;
	L->n = t->n;
	L->device = cx->cuda_device >= 0 ? cx->cuda_device : 0;
	L->sends = ppcc_calloc((size_t)t->n * (size_t)t->n, sizeof *L->sends);
	L->recvs = ppcc_calloc((size_t)t->n * (size_t)t->n, sizeof *L->recvs);
	if (!L->sends || !L->recvs) {
		err = PPCC_RT_ENOMEM;
		goto out;
	}
	if ((e = cudaSetDevice(L->device)) != cudaSuccess ||
	    (e = cudaStreamCreateWithFlags(&L->compute, cudaStreamNonBlocking)) !=
		    cudaSuccess ||
	    (e = cudaStreamCreateWithFlags(&L->xfer, cudaStreamNonBlocking)) !=
		    cudaSuccess ||
	    (e = cudaEventCreateWithFlags(&L->ready, cudaEventDisableTiming)) !=
		    cudaSuccess) {
		err = nccl_cuda_fail(t, e, "CUDA set-up");
		goto out;
	}
	ncclResult_t r = ncclGetUniqueId(&id);
	if (r != ncclSuccess) {
		err = nccl_fail(t, r, "ncclGetUniqueId");
		goto out;
	}
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	cfg.blocking = 0;
	r = ncclCommInitRankConfig(&L->comm, 1, id, 0, &cfg);
	t->comm = L->comm;
	if (r != ncclSuccess && r != ncclInProgress)
		err = nccl_fail(t, r, "ncclCommInitRankConfig");
	else
		err = nccl_settle(t, r, "ncclCommInitRankConfig",
				  ppcc_rt_now() + cx->timeout_s);
	t->comm = NULL;
out:
	if (err < 0) {
		loop_destroy(t, L, 1);
		return err;
	}
	*out = L;
	return 0;
}

static int loop_init(rt_transport **out, rt_tctx *cx, int rank)
{
	ppcc_rt_local_world *w = cx->world;
	int ndev = 0, err = 0;
	cudaError_t e;
	*out = NULL;
	rt_transport *t = ppcc_calloc(1, sizeof *t);
	if (!t) {
		ppcc_rt_local_world_abort(w, rank, PPCC_RT_ENOMEM);
		return PPCC_RT_ENOMEM;
	}
	t->cx = cx;
	t->w = w;
	t->rank = rank;
	t->n = ppcc_rt_local_world_size(w);
	cx->rank = rank;
	cx->n_ranks = t->n;
	if (rank < 0 || rank >= t->n) {
		rt_tctx_report(cx, "rank %d outside the local world's %d ranks",
			       rank, t->n);
		err = PPCC_RT_EINPUT;
		goto out;
	}
	if ((e = cudaGetDeviceCount(&ndev)) != cudaSuccess) {
		err = nccl_cuda_fail(t, e, "cudaGetDeviceCount");
		goto out;
	}
	if (ndev < 1) {
		rt_tctx_report(cx, "nccl transport: cudaGetDeviceCount found "
			       "no CUDA device");
		err = PPCC_RT_ETRANSPORT;
		goto out;
	}
	ppcc_rt_local_world_lock(w);
	int who, st;
	nccl_loop **shared = (nccl_loop **)ppcc_rt_local_world_shared(w);
	if (ppcc_rt_local_world_aborted(w, &who, &st))
		err = PPCC_RT_EPEER;
	else if (!*shared)
		err = loop_new(shared, t);
	if (err == 0) {
		t->loop = *shared;
		t->loop->refs++;
	}
	ppcc_rt_local_world_unlock(w);
	if (err < 0)
		goto out;
	t->device = t->loop->device;
	t->compute = t->loop->compute;
	if ((err = nccl_cuda_setup(t, 0)) < 0)
		goto out;
	cx->cuda_stream = t->compute;
out:
	if (err < 0) {
		if (err != PPCC_RT_EPEER)
			ppcc_rt_local_world_abort(w, rank, err);
		if (t->loop) {
			ppcc_rt_local_world_lock(w);
			int last = --t->loop->refs == 0;
			if (last)
				*(nccl_loop **)ppcc_rt_local_world_shared(w) = NULL;
			ppcc_rt_local_world_unlock(w);
			if (last)
				loop_destroy(t, t->loop, 1);
		}
		if (t->have_events) {
			cudaEventDestroy(t->compute_done);
			cudaEventDestroy(t->group_done);
			cudaEventDestroy(t->copy_done);
		}
		if (t->pinned)
			cudaFreeHost(t->pinned);
		ppcc_free(t);
		return err;
	}
	*out = t;
	return 0;
}

static int loop_exchange(rt_transport *t, uint64_t *out, const uint64_t mine[2],
			 double deadline)
{
	return ppcc_rt_local_world_exchange(t->w, t->rank, out, mine, deadline);
}

static int loop_group_begin(rt_transport *t)
{
	return nccl_enter(t);
}

static int loop_group_end(rt_transport *t)
{
	(void)t;
	return 0;
}

/* Under the world's mutex: one send and one receive to self in one
 * group, after the compute stream's work so far (which wrote the send's
 * buffer and last used the receive's); each side gets its own event.  A
 * failure is each side's status. */
static void loop_issue(rt_transport *t, rt_req *send, rt_req *recv)
{
	nccl_loop *L = t->loop;
	cudaEvent_t es = NULL, er = NULL;
	cudaError_t e;
	int err = 0;
	if (L->dead) {
		err = PPCC_RT_EPEER;
	} else if (send->bytes != recv->bytes) {
		rt_tctx_report(t->cx, "nccl loopback: rank %d's next send to rank "
			       "%d has %zu bytes, the receive posted next %zu",
			       send->src, recv->dst, send->bytes, recv->bytes);
		err = PPCC_RT_ETRANSPORT;
	} else if ((e = cudaEventRecord(L->ready, L->compute)) != cudaSuccess ||
		   (e = cudaStreamWaitEvent(L->xfer, L->ready, 0)) != cudaSuccess) {
		err = nccl_cuda_fail(t, e, "cudaStreamWaitEvent");
	} else {
		ncclResult_t r = ncclGroupStart();
		if (r == ncclSuccess) {
			ncclResult_t rs = ncclSend(send->buf, send->bytes, ncclUint8,
						   0, L->comm, L->xfer);
			ncclResult_t rr = ncclRecv(recv->buf, recv->bytes, ncclUint8,
						   0, L->comm, L->xfer);
			r = ncclGroupEnd();
			if (rs != ncclSuccess && rs != ncclInProgress)
				r = rs;
			else if (rr != ncclSuccess && rr != ncclInProgress)
				r = rr;
		}
		t->comm = L->comm;
		if (r != ncclSuccess && r != ncclInProgress)
			err = nccl_fail(t, r, "ncclSend/ncclRecv to self");
		else
			err = nccl_settle(t, r, "ncclGroupEnd",
					  ppcc_rt_now() + t->cx->timeout_s);
		t->comm = NULL;
		if (err == 0 &&
		    ((e = cudaEventCreateWithFlags(&es, cudaEventDisableTiming)) !=
			     cudaSuccess ||
		     (e = cudaEventCreateWithFlags(&er, cudaEventDisableTiming)) !=
			     cudaSuccess ||
		     (e = cudaEventRecord(es, L->xfer)) != cudaSuccess ||
		     (e = cudaEventRecord(er, L->xfer)) != cudaSuccess))
			err = nccl_cuda_fail(t, e, "cudaEventRecord");
	}
	if (err < 0) {
		if (es)
			cudaEventDestroy(es);
		if (er)
			cudaEventDestroy(er);
		es = er = NULL;
		send->status = recv->status = err;
	}
	LOOP_EVENT(send) = (uint64_t)(uintptr_t)es;
	LOOP_EVENT(recv) = (uint64_t)(uintptr_t)er;
	LOOP_ISSUED(send) = LOOP_ISSUED(recv) = 1;
}

static int loop_post(rt_transport *t, rt_req *r)
{
	nccl_loop *L = t->loop;
	size_t pair = (size_t)r->src * (size_t)L->n + (size_t)r->dst;
	rt_req **mine = r->is_send ? &L->sends[pair] : &L->recvs[pair];
	rt_req **theirs = r->is_send ? &L->recvs[pair] : &L->sends[pair];
	LOOP_EVENT(r) = 0;
	LOOP_ISSUED(r) = 0;
	r->status = 0;
	ppcc_rt_local_world_lock(t->w);
	rt_req *m = *theirs;
	if (m) {
		/* by posting order, as NCCL pairs them */
		*theirs = m->next;
		m->next = NULL;
		loop_issue(t, r->is_send ? r : m, r->is_send ? m : r);
	} else {
		loop_append(mine, r);
	}
	ppcc_rt_local_world_unlock(t->w);
	return 0;
}

/* One look at r: *done when its transfer has completed (or failed). */
static int loop_poll(rt_transport *t, rt_req *r, int *done)
{
	*done = 0;
	if (atomic_load(&r->done))
		return *done = 1, 0;
	ppcc_rt_local_world_lock(t->w);
	int issued = (int)LOOP_ISSUED(r), st = r->status;
	cudaEvent_t ev = loop_event(r);
	ppcc_rt_local_world_unlock(t->w);
	if (!issued)
		return 0;
	if (st < 0) {
		*done = 1;
		atomic_store(&r->done, 1);
		return st;
	}
	cudaError_t e = cudaEventQuery(ev);
	if (e == cudaErrorNotReady)
		return 0;
	if (e != cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaEventQuery");
	cudaEventDestroy(ev);
	LOOP_EVENT(r) = 0;
	r->status = 0;
	atomic_store(&r->done, 1);
	*done = 1;
	return 0;
}

static int loop_test(rt_transport *t, rt_req *r, int *done)
{
	int err = nccl_enter(t);
	return err < 0 ? err : loop_poll(t, r, done);
}

static int loop_wait(rt_transport *t, rt_req *r, double deadline)
{
	int err, done = 0, spins = 0;
	if ((err = nccl_enter(t)) < 0)
		return err;
	for (;;) {
		if ((err = loop_poll(t, r, &done)) < 0 || done)
			return err;
		if (nccl_peer_failed(t))
			return PPCC_RT_EPEER;
		if (ppcc_rt_now() > deadline)
			return PPCC_RT_ETIMEOUT;
		nccl_pause(&spins);
	}
}

/* The world's flag tells the other ranks; no transfer is issued after
 * it.  Every transfer already issued has both sides posted, so it
 * completes without the communicator being aborted. */
static void loop_abort(rt_transport *t, int status)
{
	ppcc_rt_local_world_abort(t->w, t->rank, status);
	ppcc_rt_local_world_lock(t->w);
	t->loop->dead = 1;
	ppcc_rt_local_world_unlock(t->w);
}

static int loop_aborted(rt_transport *t, int *out_rank, int *out_status)
{
	return ppcc_rt_local_world_aborted(t->w, out_rank, out_status);
}

static void loop_cancel(rt_transport *t, rt_req *r)
{
	nccl_loop *L = t->loop;
	size_t pair = (size_t)r->src * (size_t)L->n + (size_t)r->dst;
	ppcc_rt_local_world_lock(t->w);
	if (!LOOP_ISSUED(r))
		loop_unlink(r->is_send ? &L->sends[pair] : &L->recvs[pair], r);
	cudaEvent_t ev = loop_event(r);
	LOOP_EVENT(r) = 0;
	ppcc_rt_local_world_unlock(t->w);
	if (ev && !t->hung)
		cudaEventDestroy(ev); /* released once it completes */
}

static void loop_finalize(rt_transport *t, int failed)
{
	if (!t)
		return;
	nccl_loop *L = t->loop;
	ppcc_rt_local_world_lock(t->w);
	for (int k = 0; k < L->n; k++) {
		/* nothing of this rank stays where a peer could match it */
		for (rt_req **pp = &L->sends[(size_t)t->rank * (size_t)L->n + (size_t)k]; *pp;)
			*pp = (*pp)->next;
		for (rt_req **pp = &L->recvs[(size_t)k * (size_t)L->n + (size_t)t->rank]; *pp;)
			*pp = (*pp)->next;
	}
	if (failed)
		L->dead = 1;
	int last = --L->refs == 0;
	if (last)
		*(nccl_loop **)ppcc_rt_local_world_shared(t->w) = NULL;
	ppcc_rt_local_world_unlock(t->w);
	if (!t->hung)
		cudaSetDevice(t->device);
	if (t->have_events && !t->hung) {
		cudaEventDestroy(t->compute_done);
		cudaEventDestroy(t->group_done);
		cudaEventDestroy(t->copy_done);
	}
	if (t->pinned && !t->hung)
		cudaFreeHost(t->pinned);
	if (last)
		loop_destroy(t, L, failed);
	ppcc_free(t);
}

const rt_transport_ops ppcc_rt_nccl_loop_ops = {
	.name = "nccl",
	.init = loop_init,
	.exchange = loop_exchange,
	.group_begin = loop_group_begin,
	.group_end = loop_group_end,
	.send = loop_post,
	.recv = loop_post,
	.test = loop_test,
	.wait = loop_wait,
	.abort = loop_abort,
	.aborted = loop_aborted,
	.alloc = nccl_alloc,
	.free = nccl_free,
	.read = nccl_read,
	.write = nccl_write,
	.cancel = loop_cancel,
	.finalize = loop_finalize,
};

#else

/* Without NCCL the core never selects this transport. */
typedef int rt_nccl_absent;

#endif
