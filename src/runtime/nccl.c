/*
 * nccl.c - the NCCL transport: device buffers, ncclSend/ncclRecv.
 *
 * Set-up: cudaGetDeviceCount first, so that a machine without a usable
 * GPU fails at once with CUDA's own reason; then the ncclUniqueId, either
 * the caller's (opts->nccl_id) or made by rank 0 and broadcast over
 * MPI_COMM_WORLD; then the device (opts->cuda_device, or rank modulo the
 * device count), a compute stream for the trainer's callbacks
 * (ppcc_rt_cuda_stream), a dedicated communication stream, and a
 * non-blocking communicator whose initialisation is polled against the
 * timeout.
 *
 * The core always runs this transport grouped (see group.c): each group
 * of SEND/RECV actions is one ncclGroupStart/ncclGroupEnd on the
 * communication stream, which first waits (cudaStreamWaitEvent) for the
 * compute stream's work so far, so a send never reads an output before
 * its forward has written it.  The core then waits for the group's event,
 * polling cudaEventQuery, ncclCommGetAsyncError and the clock; after it,
 * callbacks may use the received buffers on the compute stream.
 *
 * A failure aborts the communicator (ncclCommAbort); peers blocked in a
 * transfer with this rank stop at their own timeout.
 */
#include "rt.h"

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
#include <string.h>
#include <time.h>
#if PPCC_HAVE_MPI
#include <mpi.h>
#endif

_Static_assert(sizeof(ncclUniqueId) == PPCC_RT_NCCL_ID_BYTES,
	       "PPCC_RT_NCCL_ID_BYTES must be sizeof(ncclUniqueId)");

struct rt_transport {
	ppcc_rt *rt;
	ncclComm_t comm;
	cudaStream_t compute, comm_stream;
	cudaEvent_t compute_done, group_done;
	int have_streams, have_events;
	int rank, n, device;
	int aborted; /* ncclCommAbort was called */
};

static int nccl_cuda_fail(rt_transport *t, cudaError_t e, const char *call)
{
	ppcc_rt_report(t->rt, "nccl transport: %s failed: %s (%s)", call,
		       cudaGetErrorName(e), cudaGetErrorString(e));
	return PPCC_RT_ETRANSPORT;
}

static int nccl_fail(rt_transport *t, ncclResult_t r, const char *call)
{
	const char *last = t->comm ? ncclGetLastError(t->comm) : NULL;
	ppcc_rt_report(t->rt, "nccl transport: %s failed: %s%s%s", call,
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

/* Polls a non-blocking communicator until its last call has settled. */
static int nccl_settle(rt_transport *t, ncclResult_t r, const char *call,
		       double deadline)
{
	int spins = 0;
	while (r == ncclInProgress) {
		if (ppcc_rt_now() > deadline)
			return PPCC_RT_ETIMEOUT;
		nccl_pause(&spins);
		if (ncclCommGetAsyncError(t->comm, &r) != ncclSuccess)
			break;
	}
	return r == ncclSuccess ? 0 : nccl_fail(t, r, call);
}

/* Polls ev until it has completed, the communicator reports an error or
 * the deadline. */
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
		if (ncclCommGetAsyncError(t->comm, &ar) == ncclSuccess &&
		    ar != ncclSuccess && ar != ncclInProgress)
			return nccl_fail(t, ar, "an NCCL transfer");
		if (ppcc_rt_now() > deadline)
			return PPCC_RT_ETIMEOUT;
		nccl_pause(&spins);
	}
}

static void nccl_release(rt_transport *t, int failed)
{
	if (t->comm) {
		if (failed || t->aborted) {
			if (!t->aborted)
				ncclCommAbort(t->comm);
		} else {
			double deadline = ppcc_rt_now() + t->rt->timeout_s;
			ncclResult_t r = ncclCommFinalize(t->comm);
			if (nccl_settle(t, r, "ncclCommFinalize", deadline) == 0)
				ncclCommDestroy(t->comm);
			else
				ncclCommAbort(t->comm);
		}
		t->comm = NULL;
	}
	if (t->have_events) {
		cudaEventDestroy(t->compute_done);
		cudaEventDestroy(t->group_done);
	}
	if (t->have_streams) {
		cudaStreamDestroy(t->compute);
		cudaStreamDestroy(t->comm_stream);
	}
	ppcc_free(t);
}

/* This rank and the number of ranks: the caller's with opts->nccl_id,
 * else MPI_COMM_WORLD's. */
static int nccl_rank(rt_transport *t, int rank)
{
	ppcc_rt *rt = t->rt;
	if (rt->o.nccl_id) {
		t->rank = rank;
		t->n = rt->s->n_ranks;
		return 0;
	}
#if PPCC_HAVE_MPI
	int flag = 0;
	if (MPI_Initialized(&flag) != MPI_SUCCESS || !flag) {
		ppcc_rt_report(rt, "nccl transport: no options.nccl_id and MPI "
			       "is not initialised to broadcast one");
		return PPCC_RT_EINPUT;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &t->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &t->n);
	return 0;
#else
	(void)rank;
	ppcc_rt_report(rt, "nccl transport: options.nccl_id is required "
		       "(this libppcc has no MPI to broadcast one)");
	return PPCC_RT_EINPUT;
#endif
}

/* The caller's ncclUniqueId, or rank 0's broadcast over MPI.  With MPI,
 * every rank must get here (rank 0 broadcasts even a failed id, zeroed,
 * so that nobody waits for it). */
static int nccl_get_id(rt_transport *t, ncclUniqueId *id)
{
	ppcc_rt *rt = t->rt;
	if (rt->o.nccl_id) {
		memcpy(id, rt->o.nccl_id, sizeof *id);
		return 0;
	}
#if PPCC_HAVE_MPI
	static const ncclUniqueId zero;
	ncclResult_t r = ncclSuccess;
	if (t->rank == 0 && (r = ncclGetUniqueId(id)) != ncclSuccess)
		memset(id, 0, sizeof *id);
	/* non-blocking, so that a rank that never comes (its own set-up
	 * failed) costs the timeout, not a hang */
	MPI_Request req;
	int done = 0, spins = 0;
	double deadline = ppcc_rt_now() + rt->timeout_s;
	if (MPI_Ibcast(id, (int)sizeof *id, MPI_BYTE, 0, MPI_COMM_WORLD,
		       &req) != MPI_SUCCESS) {
		ppcc_rt_report(rt, "nccl transport: MPI_Ibcast failed");
		return PPCC_RT_ETRANSPORT;
	}
	while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
		if (ppcc_rt_now() > deadline) {
			ppcc_rt_report(rt, "nccl transport: no ncclUniqueId from "
				       "rank 0 within %.3f s", rt->timeout_s);
			return PPCC_RT_ETIMEOUT;
		}
		nccl_pause(&spins);
	}
	if (!done) {
		ppcc_rt_report(rt, "nccl transport: MPI_Test failed");
		return PPCC_RT_ETRANSPORT;
	}
	if (r != ncclSuccess)
		return nccl_fail(t, r, "ncclGetUniqueId");
	if (memcmp(id, &zero, sizeof zero) == 0) {
		ppcc_rt_report(rt, "nccl transport: rank 0 could not make an "
			       "ncclUniqueId");
		return PPCC_RT_EPEER;
	}
	return 0;
#else
	return PPCC_RT_EINPUT;
#endif
}

static int nccl_init(rt_transport **out, ppcc_rt *rt, int rank)
{
	int ndev = 0, err = 0;
	cudaError_t e;
	ncclUniqueId id;
	*out = NULL;
	rt_transport *t = ppcc_calloc(1, sizeof *t);
	if (!t)
		return PPCC_RT_ENOMEM;
	t->rt = rt;

	if ((err = nccl_rank(t, rank)) < 0)
		goto out;
	rt->rank = t->rank;
	rt->n_ranks = t->n;
	/* Every rank fails here alike on a machine without a GPU, before
	 * anything collective. */
	if ((e = cudaGetDeviceCount(&ndev)) != cudaSuccess) {
		err = nccl_cuda_fail(t, e, "cudaGetDeviceCount");
		goto out;
	}
	if (ndev < 1) {
		ppcc_rt_report(rt, "nccl transport: cudaGetDeviceCount found "
			       "no CUDA device");
		err = PPCC_RT_ETRANSPORT;
		goto out;
	}
	if ((err = nccl_get_id(t, &id)) < 0)
		goto out;
	if (t->rank < 0 || t->rank >= t->n) {
		ppcc_rt_report(rt, "nccl transport: rank %d outside %d ranks",
			       t->rank, t->n);
		err = PPCC_RT_EINPUT;
		goto out;
	}
	t->device = rt->o.cuda_device >= 0 ? rt->o.cuda_device : t->rank % ndev;
	if ((e = cudaSetDevice(t->device)) != cudaSuccess) {
		err = nccl_cuda_fail(t, e, "cudaSetDevice");
		goto out;
	}
	if ((e = cudaStreamCreateWithFlags(&t->compute,
					   cudaStreamNonBlocking)) != cudaSuccess) {
		err = nccl_cuda_fail(t, e, "cudaStreamCreate");
		goto out;
	}
	if ((e = cudaStreamCreateWithFlags(&t->comm_stream,
					   cudaStreamNonBlocking)) != cudaSuccess) {
		cudaStreamDestroy(t->compute);
		err = nccl_cuda_fail(t, e, "cudaStreamCreate");
		goto out;
	}
	t->have_streams = 1;
	if ((e = cudaEventCreateWithFlags(&t->compute_done,
					  cudaEventDisableTiming)) != cudaSuccess) {
		err = nccl_cuda_fail(t, e, "cudaEventCreate");
		goto out;
	}
	if ((e = cudaEventCreateWithFlags(&t->group_done,
					  cudaEventDisableTiming)) != cudaSuccess) {
		cudaEventDestroy(t->compute_done);
		err = nccl_cuda_fail(t, e, "cudaEventCreate");
		goto out;
	}
	t->have_events = 1;

	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	cfg.blocking = 0;
	ncclResult_t r = ncclCommInitRankConfig(&t->comm, t->n, id, t->rank,
						&cfg);
	if (r != ncclSuccess && r != ncclInProgress) {
		err = nccl_fail(t, r, "ncclCommInitRankConfig");
		goto out;
	}
	if ((err = nccl_settle(t, r, "ncclCommInitRankConfig",
			       ppcc_rt_now() + rt->timeout_s)) < 0) {
		if (err == PPCC_RT_ETIMEOUT)
			ppcc_rt_report(rt, "nccl transport: the communicator "
				       "did not form within %.3f s",
				       rt->timeout_s);
		goto out;
	}
	rt->cuda_stream = t->compute;
out:
	if (err < 0) {
		nccl_release(t, 1);
		return err;
	}
	*out = t;
	return 0;
}

static int nccl_exchange(rt_transport *t, uint64_t *out,
			 const uint64_t mine[2], double deadline)
{
	uint64_t *dev = NULL;
	size_t n = (size_t)t->n * 2;
	cudaError_t e;
	int err = 0;
	if ((e = cudaMalloc((void **)&dev, n * sizeof *dev)) != cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaMalloc");
	if ((e = cudaMemcpy(dev + 2 * t->rank, mine, 2 * sizeof *dev,
			    cudaMemcpyHostToDevice)) != cudaSuccess) {
		err = nccl_cuda_fail(t, e, "cudaMemcpy");
		goto out;
	}
	ncclResult_t r = ncclAllGather(dev + 2 * t->rank, dev, 2, ncclUint64,
				       t->comm, t->comm_stream);
	if ((err = nccl_settle(t, r, "ncclAllGather", deadline)) < 0)
		goto out;
	if ((e = cudaEventRecord(t->group_done, t->comm_stream)) != cudaSuccess) {
		err = nccl_cuda_fail(t, e, "cudaEventRecord");
		goto out;
	}
	if ((err = nccl_sync(t, t->group_done, deadline)) < 0)
		goto out;
	if ((e = cudaMemcpy(out, dev, n * sizeof *dev,
			    cudaMemcpyDeviceToHost)) != cudaSuccess)
		err = nccl_cuda_fail(t, e, "cudaMemcpy");
out:
	/* a transfer still running reads dev: leave it to the abort */
	if (err != PPCC_RT_ETIMEOUT)
		cudaFree(dev);
	return err;
}

static int nccl_group_begin(rt_transport *t)
{
	cudaError_t e;
	if ((e = cudaEventRecord(t->compute_done, t->compute)) != cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaEventRecord");
	if ((e = cudaStreamWaitEvent(t->comm_stream, t->compute_done, 0)) !=
	    cudaSuccess)
		return nccl_cuda_fail(t, e, "cudaStreamWaitEvent");
	ncclResult_t r = ncclGroupStart();
	return r == ncclSuccess ? 0 : nccl_fail(t, r, "ncclGroupStart");
}

static int nccl_group_end(rt_transport *t)
{
	ncclResult_t r = ncclGroupEnd();
	int err = nccl_settle(t, r, "ncclGroupEnd",
			      ppcc_rt_now() + t->rt->timeout_s);
	if (err < 0)
		return err;
	cudaError_t e = cudaEventRecord(t->group_done, t->comm_stream);
	return e == cudaSuccess ? 0 : nccl_cuda_fail(t, e, "cudaEventRecord");
}

static int nccl_send(rt_transport *t, rt_req *r)
{
	ncclResult_t res = ncclSend(r->buf, r->bytes, ncclUint8, r->dst,
				    t->comm, t->comm_stream);
	return res == ncclSuccess || res == ncclInProgress
		       ? 0 : nccl_fail(t, res, "ncclSend");
}

static int nccl_recv(rt_transport *t, rt_req *r)
{
	ncclResult_t res = ncclRecv(r->buf, r->bytes, ncclUint8, r->src,
				    t->comm, t->comm_stream);
	return res == ncclSuccess || res == ncclInProgress
		       ? 0 : nccl_fail(t, res, "ncclRecv");
}

/* Every request of a group completes with the group's event. */
static int nccl_test(rt_transport *t, rt_req *r, int *done)
{
	cudaError_t e = cudaEventQuery(t->group_done);
	*done = 0;
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
	int err = nccl_sync(t, t->group_done, deadline);
	if (err == 0) {
		r->status = 0;
		atomic_store(&r->done, 1);
	}
	return err;
}

static void nccl_abort(rt_transport *t, int status)
{
	(void)status;
	if (t->comm && !t->aborted) {
		ncclCommAbort(t->comm);
		t->aborted = 1;
	}
}

static int nccl_aborted(rt_transport *t, int *out_rank, int *out_status)
{
	(void)t;
	(void)out_rank;
	(void)out_status;
	return 0;
}

static int nccl_alloc(rt_transport *t, void **out, size_t bytes)
{
	cudaError_t e = cudaMalloc(out, bytes ? bytes : 1);
	if (e == cudaErrorMemoryAllocation)
		return PPCC_RT_ENOMEM;
	return e == cudaSuccess ? 0 : nccl_cuda_fail(t, e, "cudaMalloc");
}

static void nccl_free(rt_transport *t, void *p)
{
	(void)t;
	cudaFree(p);
}

static int nccl_read(rt_transport *t, void *dst, const void *src, size_t n)
{
	cudaError_t e = cudaStreamSynchronize(t->compute);
	if (e == cudaSuccess)
		e = cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost);
	return e == cudaSuccess ? 0 : nccl_cuda_fail(t, e, "cudaMemcpy");
}

static int nccl_write(rt_transport *t, void *dst, const void *src, size_t n)
{
	cudaError_t e = cudaStreamSynchronize(t->compute);
	if (e == cudaSuccess)
		e = cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice);
	return e == cudaSuccess ? 0 : nccl_cuda_fail(t, e, "cudaMemcpy");
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
	.finalize = nccl_finalize,
};

#else

/* Without NCCL the core never selects this transport. */
typedef int rt_nccl_absent;

#endif
