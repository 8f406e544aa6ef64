/*
 * mpi.c - the MPI transport: one process per rank, ranks are those of
 * MPI_COMM_WORLD.
 *
 * The runtime works on its own duplicate of MPI_COMM_WORLD with
 * MPI_ERRORS_RETURN, so its tags cannot meet the trainer's messages and
 * every MPI failure comes back as a status.  A message's tag is derived
 * from its name, 16 + 2 * (stage * m + mb) + (gradient ? 1 : 0), so MPI
 * matches a receive to its send by identity (and, for the same name in
 * successive steps, by MPI's non-overtaking order).  Tags below 16 are
 * the runtime's own: an abort notice that each rank keeps a receive
 * posted for.
 *
 * Nothing here blocks without a deadline: sends and receives are
 * MPI_Isend/MPI_Irecv, the fingerprint exchange is MPI_Iallgather, and
 * every wait polls MPI_Test, the abort receive and the clock, backing off
 * from spinning to 1 ms sleeps.  A failing rank sends the abort notice to
 * every other rank; each stops at its next wait or action.  A rank whose
 * peer dies is usually killed by mpirun itself (OpenMPI's default on a
 * dead process); otherwise its wait times out.
 */
#include "rt.h"

#if PPCC_HAVE_MPI

#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#define MPI_TAG_ABORT 1
#define MPI_TAG_DATA0 16

_Static_assert(sizeof(MPI_Request) <= sizeof(((rt_req *)0)->opaque),
	       "an MPI_Request must fit in rt_req.opaque");

struct rt_transport {
	ppcc_rt *rt;
	MPI_Comm comm;
	int rank, n;
	int m;
	MPI_Request abort_req;
	int abort_msg[2]; /* rank, status */
	int aborted, abort_rank, abort_status;
	MPI_Request *abort_sends;
	int n_abort_sends;
	MPI_Request exchange_req; /* outstanding after a failed exchange */
};

static int mpi_fail(rt_transport *t, int rc, const char *call)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;
	if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
		len = 0;
	msg[len] = '\0';
	ppcc_rt_report(t->rt, "%s failed: %s", call, len ? msg : "unknown error");
	return PPCC_RT_ETRANSPORT;
}

/* Backs off: spins first, then sleeps up to 1 ms. */
static void mpi_pause(int *spins)
{
	if (*spins < 64) {
		(*spins)++;
		sched_yield();
		return;
	}
	long ns = 10000L << (*spins - 64 < 7 ? *spins - 64 : 7);
	if (ns > 1000000L)
		ns = 1000000L;
	struct timespec ts = {0, ns};
	nanosleep(&ts, NULL);
	(*spins)++;
}

static int mpi_poll_abort(rt_transport *t)
{
	if (t->aborted)
		return 1;
	if (t->abort_req == MPI_REQUEST_NULL)
		return 0;
	int flag = 0;
	if (MPI_Test(&t->abort_req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
	    flag) {
		t->aborted = 1;
		t->abort_rank = t->abort_msg[0];
		t->abort_status = t->abort_msg[1];
	}
	return t->aborted;
}

static int mpi_init(rt_transport **out, ppcc_rt *rt, int rank)
{
	int flag = 0, rc, err = 0;
	void *attr = NULL;
	(void)rank;
	*out = NULL;
	if (MPI_Initialized(&flag) != MPI_SUCCESS || !flag) {
		ppcc_rt_report(rt, "the mpi transport needs MPI_Init before "
			       "ppcc_rt_init");
		return PPCC_RT_EINPUT;
	}
	rt_transport *t = ppcc_calloc(1, sizeof *t);
	if (!t)
		return PPCC_RT_ENOMEM;
	t->rt = rt;
	t->comm = MPI_COMM_NULL;
	t->abort_req = MPI_REQUEST_NULL;
	t->exchange_req = MPI_REQUEST_NULL;
	t->abort_rank = -1;
	t->m = rt->s->n_microbatches;
	if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &t->comm)) != MPI_SUCCESS) {
		err = mpi_fail(t, rc, "MPI_Comm_dup");
		goto out;
	}
	if ((rc = MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN)) !=
		    MPI_SUCCESS ||
	    (rc = MPI_Comm_rank(t->comm, &t->rank)) != MPI_SUCCESS ||
	    (rc = MPI_Comm_size(t->comm, &t->n)) != MPI_SUCCESS) {
		err = mpi_fail(t, rc, "MPI communicator set-up");
		goto out;
	}
	rt->rank = t->rank;
	rt->n_ranks = t->n;
	if ((rc = MPI_Comm_get_attr(t->comm, MPI_TAG_UB, &attr, &flag)) !=
		    MPI_SUCCESS || !flag) {
		err = mpi_fail(t, rc, "MPI_Comm_get_attr(MPI_TAG_UB)");
		goto out;
	}
	int64_t top = MPI_TAG_DATA0 + 2 * (int64_t)rt->s->n_stages * t->m;
	if (top > *(int *)attr) {
		ppcc_rt_report(rt, "%d stages x %d microbatches need tags up to "
			       "%lld; MPI_TAG_UB is %d", (int)rt->s->n_stages,
			       t->m, (long long)top, *(int *)attr);
		err = PPCC_RT_EINPUT;
		goto out;
	}
	if ((rc = MPI_Irecv(t->abort_msg, 2, MPI_INT, MPI_ANY_SOURCE,
			    MPI_TAG_ABORT, t->comm, &t->abort_req)) !=
	    MPI_SUCCESS) {
		err = mpi_fail(t, rc, "MPI_Irecv");
		goto out;
	}
out:
	if (err < 0) {
		/* nothing outstanding yet but the duplicate */
		if (t->comm != MPI_COMM_NULL)
			MPI_Comm_free(&t->comm);
		ppcc_free(t);
		return err;
	}
	*out = t;
	return 0;
}

/* Polls req until it completes, an abort notice arrives or the
 * deadline. */
static int mpi_poll(rt_transport *t, MPI_Request *req, MPI_Status *st,
		    double deadline)
{
	int spins = 0;
	for (;;) {
		int flag = 0;
		int rc = MPI_Test(req, &flag, st);
		if (rc != MPI_SUCCESS)
			return mpi_fail(t, rc, "MPI_Test");
		if (flag)
			return 0;
		if (mpi_poll_abort(t))
			return PPCC_RT_EPEER;
		if (!(ppcc_rt_now() <= deadline)) /* a NaN deadline too */
			return PPCC_RT_ETIMEOUT;
		mpi_pause(&spins);
	}
}

static int mpi_exchange(rt_transport *t, uint64_t *out, const uint64_t mine[2],
			double deadline)
{
	int rc = MPI_Iallgather(mine, 2, MPI_UINT64_T, out, 2, MPI_UINT64_T,
				t->comm, &t->exchange_req);
	if (rc != MPI_SUCCESS)
		return mpi_fail(t, rc, "MPI_Iallgather");
	return mpi_poll(t, &t->exchange_req, MPI_STATUS_IGNORE, deadline);
}

static MPI_Request *mpi_req(rt_req *r)
{
	return (MPI_Request *)(void *)r->opaque;
}

static int mpi_tag(const rt_transport *t, const rt_req *r)
{
	return MPI_TAG_DATA0 +
	       2 * (r->key_stage * t->m + r->mb) +
	       (r->key_op == PPCC_OP_RECV_B);
}

static int mpi_count(rt_transport *t, const rt_req *r, int *out)
{
	if (r->bytes > INT_MAX) {
		ppcc_rt_report(t->rt, "a message of %zu bytes is over MPI's "
			       "int count", r->bytes);
		return PPCC_RT_EINPUT;
	}
	*out = (int)r->bytes;
	return 0;
}

static int mpi_send(rt_transport *t, rt_req *r)
{
	int count, err, rc;
	if ((err = mpi_count(t, r, &count)) < 0)
		return err;
	rc = MPI_Isend(r->buf, count, MPI_BYTE, r->dst, mpi_tag(t, r), t->comm,
		       mpi_req(r));
	return rc == MPI_SUCCESS ? 0 : mpi_fail(t, rc, "MPI_Isend");
}

static int mpi_recv(rt_transport *t, rt_req *r)
{
	int count, err, rc;
	if ((err = mpi_count(t, r, &count)) < 0)
		return err;
	rc = MPI_Irecv(r->buf, count, MPI_BYTE, r->src, mpi_tag(t, r), t->comm,
		       mpi_req(r));
	return rc == MPI_SUCCESS ? 0 : mpi_fail(t, rc, "MPI_Irecv");
}

/* Marks r done, checking a receive's length. */
static void mpi_complete(rt_transport *t, rt_req *r, MPI_Status *st)
{
	r->status = 0;
	if (!r->is_send) {
		int got = -1;
		MPI_Get_count(st, MPI_BYTE, &got);
		if (got < 0 || (size_t)got != r->bytes) {
			ppcc_rt_report(t->rt, "received %d bytes from rank %d, "
				       "expected %zu", got, r->src, r->bytes);
			r->status = PPCC_RT_ETRANSPORT;
		}
	}
	atomic_store(&r->done, 1);
}

static int mpi_test(rt_transport *t, rt_req *r, int *done)
{
	MPI_Status st;
	int flag = 0;
	*done = 0;
	if (atomic_load(&r->done)) {
		*done = 1;
		return 0;
	}
	int rc = MPI_Test(mpi_req(r), &flag, &st);
	if (rc != MPI_SUCCESS)
		return mpi_fail(t, rc, "MPI_Test");
	if (flag) {
		mpi_complete(t, r, &st);
		*done = 1;
	}
	return 0;
}

static int mpi_wait(rt_transport *t, rt_req *r, double deadline)
{
	MPI_Status st;
	if (atomic_load(&r->done))
		return 0;
	int err = mpi_poll(t, mpi_req(r), &st, deadline);
	if (err == 0)
		mpi_complete(t, r, &st);
	return err;
}

static void mpi_abort(rt_transport *t, int status)
{
	if (t->abort_sends || t->n < 2)
		return;
	t->abort_sends = ppcc_calloc((size_t)t->n, sizeof *t->abort_sends);
	if (!t->abort_sends)
		return;
	static int msg[2];
	/* one notice per process: the buffer must outlive the sends */
	msg[0] = t->rank;
	msg[1] = status;
	for (int r = 0; r < t->n; r++) {
		t->abort_sends[r] = MPI_REQUEST_NULL;
		if (r != t->rank)
			MPI_Isend(msg, 2, MPI_INT, r, MPI_TAG_ABORT, t->comm,
				  &t->abort_sends[r]);
	}
	t->n_abort_sends = t->n;
}

static int mpi_aborted(rt_transport *t, int *out_rank, int *out_status)
{
	if (!mpi_poll_abort(t))
		return 0;
	*out_rank = t->abort_rank;
	*out_status = t->abort_status;
	return 1;
}

static int mpi_alloc(rt_transport *t, void **out, size_t bytes)
{
	(void)t;
	/* zeroed: a callback need not write every byte it is given, and a
	 * debug checksum then reads defined memory */
	*out = ppcc_calloc(1, bytes);
	return *out ? 0 : PPCC_RT_ENOMEM;
}

static void mpi_free(rt_transport *t, void *p)
{
	(void)t;
	ppcc_free(p);
}

static int mpi_copy(rt_transport *t, void *dst, const void *src, size_t n)
{
	(void)t;
	memcpy(dst, src, n);
	return 0;
}

/* A receive can be cancelled; a send is only released (MPI delivers or
 * drops it; the runtime no longer waits). */
static void mpi_cancel(rt_transport *t, rt_req *r)
{
	(void)t;
	MPI_Request *req = mpi_req(r);
	if (*req == MPI_REQUEST_NULL)
		return;
	if (!r->is_send)
		MPI_Cancel(req);
	MPI_Request_free(req);
}

static void mpi_finalize(rt_transport *t, int failed)
{
	if (!t)
		return;
	if (t->abort_req != MPI_REQUEST_NULL) {
		MPI_Cancel(&t->abort_req);
		MPI_Request_free(&t->abort_req);
	}
	for (int r = 0; r < t->n_abort_sends; r++)
		if (t->abort_sends[r] != MPI_REQUEST_NULL)
			MPI_Request_free(&t->abort_sends[r]);
	ppcc_free(t->abort_sends);
	/* After a failure a peer may never take part in anything collective
	 * again: the duplicate is left to MPI_Finalize or MPI_Abort. */
	if (!failed && t->exchange_req == MPI_REQUEST_NULL)
		MPI_Comm_free(&t->comm);
	ppcc_free(t);
}

const rt_transport_ops ppcc_rt_mpi_ops = {
	.name = "mpi",
	.init = mpi_init,
	.exchange = mpi_exchange,
	.group_begin = NULL,
	.group_end = NULL,
	.send = mpi_send,
	.recv = mpi_recv,
	.test = mpi_test,
	.wait = mpi_wait,
	.abort = mpi_abort,
	.aborted = mpi_aborted,
	.alloc = mpi_alloc,
	.free = mpi_free,
	.read = mpi_copy,
	.write = mpi_copy,
	.cancel = mpi_cancel,
	.finalize = mpi_finalize,
};

#else

/* Without MPI the core never selects this transport. */
typedef int rt_mpi_absent;

#endif
