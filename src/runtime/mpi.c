/*
 * mpi.c - the MPI transport: one process per rank, ranks are those of
 * MPI_COMM_WORLD.
 *
 * The runtime works on its own duplicate of MPI_COMM_WORLD with
 * MPI_ERRORS_RETURN, so its tags cannot meet the trainer's messages and
 * every MPI failure comes back as a status.  A message's tag is derived
 * from its name, 16 + ppcc_message_key, so MPI matches a receive to its
 * send by identity; tags below 16 are the runtime's own abort notice.
 * Data parallelism (options.data_parallel = d): p x d processes, world
 * rank w being pipeline rank w / d of replica w % d.  A reduction over a
 * pipeline rank's replicas is a reduce-scatter and an all-gather of
 * point-to-point messages that adds in replica order, so the result is
 * the same bits on every replica and every run, and those of the local
 * transport's group; a replica whose descriptor differs fails with
 * PPCC_RT_EMISMATCH.
 * Contract: nothing here blocks without a deadline (MPI_Isend/Irecv,
 * MPI_Iallgather, every wait polling the abort receive and the clock).
 * Limits: a rank whose peer dies is usually killed by mpirun itself;
 * otherwise its wait times out.
 *
 * Derivation: doc/design/mpi.md (tags, why not MPI_Ireduce_scatter, the
 * window of collectives, progress without a thread).
 */
#include "transport.h"
#include "oob.h"

#if PPCC_HAVE_MPI

#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MPI_TAG_ABORT 1
#define MPI_TAG_ALLTOALL 2 /* every ppcc_rt_alltoallv message */
#define MPI_TAG_DATA0 16

_Static_assert(sizeof(MPI_Request) <= sizeof(((rt_req *)0)->opaque),
	       "an MPI_Request must fit in rt_req.opaque");

typedef struct mpi_coll mpi_coll;

struct rt_transport {
	rt_tctx *cx;
	MPI_Comm comm;
	int rank, n;  /* in the world */
	int m;
	int d, replica; /* data parallelism: replicas, this one's */
	int coll_tag0, coll_window; /* the reductions' tags */
	mpi_coll *colls; /* posted, not released */
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
	rt_tctx_report(t->cx, "%s failed: %s", call, len ? msg : "unknown error");
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

static int mpi_init(rt_transport **out, rt_tctx *cx, int rank)
{
	int flag = 0, rc, err = 0;
	void *attr = NULL;
	(void)rank;
	*out = NULL;
	if (MPI_Initialized(&flag) != MPI_SUCCESS || !flag) {
		rt_tctx_report(cx, "the mpi transport needs MPI_Init before "
			       "ppcc_rt_init");
		return PPCC_RT_EINPUT;
	}
	rt_transport *t = ppcc_calloc(1, sizeof *t);
	if (!t)
		return PPCC_RT_ENOMEM;
	t->cx = cx;
	t->comm = MPI_COMM_NULL;
	t->abort_req = MPI_REQUEST_NULL;
	t->exchange_req = MPI_REQUEST_NULL;
	t->abort_rank = -1;
	t->m = cx->s->n_microbatches;
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
	t->d = cx->data_parallel > 0 ? cx->data_parallel : 1;
	if (t->n % t->d != 0) {
		rt_tctx_report(cx, "options.data_parallel %d does not divide "
			       "the %d ranks of MPI_COMM_WORLD", t->d, t->n);
		err = PPCC_RT_EINPUT;
		goto out;
	}
	t->replica = t->rank % t->d;
	cx->rank = t->rank / t->d;
	cx->n_ranks = t->n / t->d;
	cx->grid_d = t->d;
	cx->grid_replica = t->replica;
	cx->n_world = t->n;
	if ((rc = MPI_Comm_get_attr(t->comm, MPI_TAG_UB, &attr, &flag)) !=
		    MPI_SUCCESS || !flag) {
		err = mpi_fail(t, rc, "MPI_Comm_get_attr(MPI_TAG_UB)");
		goto out;
	}
	int64_t top = MPI_TAG_DATA0 + 2 * (int64_t)cx->s->n_stages * t->m;
	int64_t window = top <= *(int *)attr ? (*(int *)attr - top) / 3 : 0;
	if (top > *(int *)attr || (t->d > 1 && window < 64)) {
		rt_tctx_report(cx, "%d stages x %d microbatches need tags up to "
			       "%lld%s; MPI_TAG_UB is %d", (int)cx->s->n_stages,
			       t->m, (long long)top,
			       t->d > 1 ? " and 192 more for the reductions" : "",
			       *(int *)attr);
		err = PPCC_RT_EINPUT;
		goto out;
	}
	t->coll_tag0 = (int)top;
	t->coll_window = window > (1 << 20) ? 1 << 20 : (int)window;
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
static int mpi_coll_progress(rt_transport *t);

static int mpi_poll(rt_transport *t, MPI_Request *req, MPI_Status *st,
		    double deadline)
{
	int spins = 0;
	for (;;) {
		int flag = 0, err;
		int rc = MPI_Test(req, &flag, st);
		if (rc != MPI_SUCCESS)
			return mpi_fail(t, rc, "MPI_Test");
		if (flag)
			return 0;
		if ((err = mpi_coll_progress(t)) < 0)
			return err;
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

/* The world rank of pipeline rank k of this replica; an all-to-all's k
 * is a world rank already. */
static int mpi_peer(const rt_transport *t, const rt_req *r, int k)
{
	return r->world ? k : k * t->d + t->replica;
}

/* An all-to-all's messages share one tag: each rank's k-th call is the
 * k-th of every member, and MPI does not let messages of one tag and
 * pair overtake each other. */
static int mpi_tag(const rt_transport *t, const rt_req *r)
{
	(void)t;
	return r->key == RT_KEY_ALLTOALL ? MPI_TAG_ALLTOALL
					 : MPI_TAG_DATA0 + (int)r->key;
}

static int mpi_count(rt_transport *t, const rt_req *r, int *out)
{
	if (r->bytes > INT_MAX) {
		rt_tctx_report(t->cx, "a message of %zu bytes is over MPI's "
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
	rc = MPI_Isend(r->buf, count, MPI_BYTE, mpi_peer(t, r, r->dst),
		       mpi_tag(t, r), t->comm, mpi_req(r));
	return rc == MPI_SUCCESS ? 0 : mpi_fail(t, rc, "MPI_Isend");
}

static int mpi_recv(rt_transport *t, rt_req *r)
{
	int count, err, rc;
	if ((err = mpi_count(t, r, &count)) < 0)
		return err;
	rc = MPI_Irecv(r->buf, count, MPI_BYTE, mpi_peer(t, r, r->src),
		       mpi_tag(t, r), t->comm, mpi_req(r));
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
			rt_tctx_report(t->cx, "received %d bytes from rank %d, "
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

/* ---- gradient reductions over the replicas ---------------------------- */

/* The requests of one reduction, d of each kind, indexed kind * d + q:
 * to and from replica q, its descriptor, its chunk of the gradient
 * (the one q owns, or mine from q) and the sum of the chunk. */
enum { MC_DESC_S, MC_DESC_R, MC_CHUNK_S, MC_CHUNK_R, MC_SUM_S, MC_SUM_R,
       MC_KINDS };


struct mpi_coll {
	mpi_coll *next;
	rt_coll *c;
	int64_t desc[RT_COLL_DESC];  /* seq, kind, stage, bucket, count */
	int64_t *peer;    /* d x RT_COLL_DESC: what each replica posted */
	double *scratch;  /* d x my chunk: the replicas' values of it */
	MPI_Request *req; /* MC_KINDS x d */
	char *matched;    /* per replica: its descriptor checked, chunk posted */
	char *sum_posted; /* per replica: its sum's receive posted */
	int summed;
};

/* Chunk q: replica q's shard (rt_shard_lo, rt_shard_len). */
static size_t mc_lo(const rt_transport *t, const rt_coll *c, int q)
{
	return rt_shard_lo(c->count, t->d, q);
}

static int mc_len(const rt_transport *t, const rt_coll *c, int q)
{
	return (int)rt_shard_len(c->count, t->d, q);
}

static int mc_tag(const rt_transport *t, const rt_coll *c, int kind)
{
	return t->coll_tag0 + 3 * (int)(c->seq % (uint64_t)t->coll_window) + kind;
}

static MPI_Request *mc_req(const rt_transport *t, mpi_coll *mc, int kind, int q)
{
	return &mc->req[kind * t->d + q];
}

static void mc_free(rt_transport *t, mpi_coll *mc)
{
	for (int k = 0; mc->req && k < MC_KINDS * t->d; k++) {
		if (mc->req[k] == MPI_REQUEST_NULL)
			continue;
		int kind = k / t->d;
		if (kind == MC_DESC_R || kind == MC_CHUNK_R || kind == MC_SUM_R)
			MPI_Cancel(&mc->req[k]);
		MPI_Request_free(&mc->req[k]);
	}
	ppcc_free(mc->peer);
	ppcc_free(mc->scratch);
	ppcc_free(mc->req);
	ppcc_free(mc->matched);
	ppcc_free(mc->sum_posted);
	ppcc_free(mc);
}

/* Collective c->seq takes the tags of c->seq - window: blocks until that
 * one is complete here (its every request done), progressing the rest,
 * so that no two live collectives of this rank share a tag.  Then each
 * tag carries one collective at a time between two ranks, posted and
 * sent in sequence order on both, and MPI's non-overtaking order matches
 * every message to its own collective's receive.  This cannot deadlock
 * a runnable schedule: the collective waited for is earlier in the same
 * list on every replica, so a replica that has not completed it is
 * behind, never waiting on this one.  Bounded by the timeout; on
 * failure c->why names both collectives and the replica waited for. */
static int mc_wait_tags(rt_transport *t, rt_coll *c)
{
	uint64_t w = (uint64_t)t->coll_window;
	if (c->seq < w)
		return 0;
	mpi_coll *old = NULL;
	for (mpi_coll *mc = t->colls; mc && !old; mc = mc->next)
		if (mc->c->seq == c->seq - w)
			old = mc;
	if (!old) /* released: complete */
		return 0;
	double t0 = ppcc_rt_now(), deadline = t0 + t->cx->timeout_s;
	int spins = 0, err;
	for (;;) {
		if ((err = mpi_coll_progress(t)) < 0)
			return err;
		if (old->c->done)
			return 0;
		if (mpi_poll_abort(t))
			return PPCC_RT_EPEER;
		if (!(ppcc_rt_now() <= deadline)) {
			int q = old->c->waiting_on;
			snprintf(c->why, sizeof c->why, "replica %d: %s "
				 "stage %d bucket %d #%llu needs the tags of #%llu "
				 "(stage %d bucket %d), which waits for replica %d "
				 "(world rank %d)", t->replica, rt_coll_name(c->kind),
				 c->stage, c->bucket,
				 (unsigned long long)c->seq,
				 (unsigned long long)old->c->seq, old->c->stage,
				 old->c->bucket, q,
				 q < 0 ? -1 : t->cx->rank * t->d + q);
			return PPCC_RT_ETIMEOUT;
		}
		mpi_pause(&spins);
	}
}

static int mpi_coll_post(rt_transport *t, rt_coll *c)
{
	int d = t->d, me = t->replica, rc, err;
	c->done = 0;
	c->waiting_on = -1;
	c->state = NULL;
	if (d == 1) {
		c->done = 1;
		c->t_done = ppcc_rt_now();
		return 0;
	}
	if ((err = mc_wait_tags(t, c)) < 0)
		return err;
	if (c->count / (size_t)d >= (size_t)INT_MAX - (size_t)d) {
		rt_tctx_report(t->cx, "%s stage %d bucket %d: %zu values "
			       "make chunks over MPI's int count",
			       rt_coll_name(c->kind), c->stage, c->bucket, c->count);
		return PPCC_RT_EINPUT;
	}
	mpi_coll *mc = ppcc_calloc(1, sizeof *mc);
	if (!mc)
		return PPCC_RT_ENOMEM;
	int mine = mc_len(t, c, me);
	mc->c = c;
	mc->peer = ppcc_calloc((size_t)d, RT_COLL_DESC * sizeof *mc->peer);
	/* a gather receives into c->grad itself: no scratch */
	mc->scratch = ppcc_calloc((rt_coll_gathers(c->kind) ? 0
				   : (size_t)d * (size_t)mine) + 1,
				  sizeof *mc->scratch);
	mc->req = ppcc_calloc((size_t)(MC_KINDS * d), sizeof *mc->req);
	mc->matched = ppcc_calloc((size_t)d, 1);
	mc->sum_posted = ppcc_calloc((size_t)d, 1);
	if (!mc->peer || !mc->scratch || !mc->req || !mc->matched || !mc->sum_posted) {
		mc->req = NULL;
		mc_free(t, mc);
		return PPCC_RT_ENOMEM;
	}
	for (int k = 0; k < MC_KINDS * d; k++)
		mc->req[k] = MPI_REQUEST_NULL;
	rt_coll_desc(c, mc->desc);
	mc->matched[me] = 1;
	/* a reduce-scatter receives no sums: each keeps its own chunk's */
	for (int q = 0; q < d; q++)
		mc->sum_posted[q] = q == me || c->kind == RT_COLL_REDUCE_SCATTER;
	c->state = mc;
	mc->next = t->colls;
	t->colls = mc;
	for (int q = 0; q < d; q++) {
		if (q == me)
			continue;
		int w = t->cx->rank * d + q;
		if ((rc = MPI_Irecv(&mc->peer[RT_COLL_DESC * q], RT_COLL_DESC,
				    MPI_INT64_T, w,
				    mc_tag(t, c, 0), t->comm,
				    mc_req(t, mc, MC_DESC_R, q))) != MPI_SUCCESS ||
		    (rc = MPI_Isend(mc->desc, RT_COLL_DESC, MPI_INT64_T, w,
				    mc_tag(t, c, 0), t->comm,
				    mc_req(t, mc, MC_DESC_S, q))) != MPI_SUCCESS)
			return mpi_fail(t, rc, "MPI_Isend");
		/* a gather has no chunks to add: its values go out as the
		 * sums do, once the descriptors match */
		if (!rt_coll_gathers(c->kind) &&
		    (rc = MPI_Isend(c->grad + mc_lo(t, c, q), mc_len(t, c, q),
				    MPI_DOUBLE, w, mc_tag(t, c, 1), t->comm,
				    mc_req(t, mc, MC_CHUNK_S, q))) != MPI_SUCCESS)
			return mpi_fail(t, rc, "MPI_Isend");
	}
	return 0;
}

/* Tests mc's requests and takes every step they allow. */
static int mc_step(rt_transport *t, mpi_coll *mc)
{
	rt_coll *c = mc->c;
	int d = t->d, me = t->replica, mine = mc_len(t, c, me), rc, flag;
	if (c->done)
		return 0;
	for (int k = 0; k < MC_KINDS * d; k++)
		if (mc->req[k] != MPI_REQUEST_NULL &&
		    (rc = MPI_Test(&mc->req[k], &flag, MPI_STATUS_IGNORE)) !=
			    MPI_SUCCESS)
			return mpi_fail(t, rc, "MPI_Test");
	int all_chunks = 1;
	c->waiting_on = -1;
	for (int q = 0; q < d; q++) {
		if (!mc->matched[q] && *mc_req(t, mc, MC_DESC_R, q) == MPI_REQUEST_NULL) {
			const int64_t *p = &mc->peer[RT_COLL_DESC * q];
			if (memcmp(p, mc->desc, sizeof mc->desc) != 0)
				return rt_coll_mismatch(t->cx, c, me, p, q,
							t->cx->rank * d + q);
			mc->matched[q] = 1;
			if (!rt_coll_gathers(c->kind) &&
			    (rc = MPI_Irecv(mc->scratch + (size_t)q * (size_t)mine, mine,
					    MPI_DOUBLE, t->cx->rank * d + q,
					    mc_tag(t, c, 1), t->comm,
					    mc_req(t, mc, MC_CHUNK_R, q))) != MPI_SUCCESS)
				return mpi_fail(t, rc, "MPI_Irecv");
		}
		if (!mc->matched[q] || *mc_req(t, mc, MC_CHUNK_R, q) != MPI_REQUEST_NULL) {
			all_chunks = 0;
			if (c->waiting_on < 0)
				c->waiting_on = q;
		}
	}
	if (!all_chunks)
		return 0;
	if (!mc->summed) {
		/* my chunk: the replicas' values added in replica order (a
		 * gather's is my own, as it is) */
		double *own = c->grad + mc_lo(t, c, me);
		for (int i = 0; !rt_coll_gathers(c->kind) && i < mine; i++) {
			double acc = me == 0 ? own[i] : mc->scratch[i];
			for (int q = 1; q < d; q++)
				acc += q == me ? own[i]
					       : mc->scratch[(size_t)q * (size_t)mine + (size_t)i];
			own[i] = acc;
		}
		mc->summed = 1;
		for (int q = 0; q < d && c->kind != RT_COLL_REDUCE_SCATTER; q++)
			if (q != me &&
			    (rc = MPI_Isend(own, mine, MPI_DOUBLE, t->cx->rank * d + q,
					    mc_tag(t, c, 2), t->comm,
					    mc_req(t, mc, MC_SUM_S, q))) != MPI_SUCCESS)
				return mpi_fail(t, rc, "MPI_Isend");
	}
	int all = 1;
	for (int q = 0; q < d; q++) {
		/* q's sum lands where my chunk for q was sent from: once that
		 * send is done */
		if (!mc->sum_posted[q] &&
		    *mc_req(t, mc, MC_CHUNK_S, q) == MPI_REQUEST_NULL) {
			mc->sum_posted[q] = 1;
			if ((rc = MPI_Irecv(c->grad + mc_lo(t, c, q), mc_len(t, c, q),
					    MPI_DOUBLE, t->cx->rank * d + q,
					    mc_tag(t, c, 2), t->comm,
					    mc_req(t, mc, MC_SUM_R, q))) != MPI_SUCCESS)
				return mpi_fail(t, rc, "MPI_Irecv");
		}
		if (!mc->sum_posted[q] ||
		    *mc_req(t, mc, MC_CHUNK_S, q) != MPI_REQUEST_NULL ||
		    *mc_req(t, mc, MC_SUM_R, q) != MPI_REQUEST_NULL ||
		    *mc_req(t, mc, MC_SUM_S, q) != MPI_REQUEST_NULL ||
		    *mc_req(t, mc, MC_DESC_S, q) != MPI_REQUEST_NULL) {
			all = 0;
			if (c->waiting_on < 0)
				c->waiting_on = q;
		}
	}
	if (all) {
		c->done = 1;
		c->t_done = ppcc_rt_now();
	}
	return 0;
}

static int mpi_coll_progress(rt_transport *t)
{
	int err;
	for (mpi_coll *mc = t->colls; mc; mc = mc->next)
		if ((err = mc_step(t, mc)) < 0)
			return err;
	return 0;
}

static int mpi_coll_test(rt_transport *t, rt_coll *c)
{
	(void)c;
	return mpi_coll_progress(t);
}

static void mpi_coll_release(rt_transport *t, rt_coll *c)
{
	mpi_coll *mc = c->state;
	if (!mc)
		return;
	for (mpi_coll **p = &t->colls; *p; p = &(*p)->next)
		if (*p == mc) {
			*p = mc->next;
			break;
		}
	mc_free(t, mc);
	c->state = NULL;
}

void ppcc_rt_mpi_coll_window(rt_transport *t, int window)
{
	if (window < t->coll_window)
		t->coll_window = window;
}

static void mpi_finalize(rt_transport *t, int failed)
{
	if (!t)
		return;
	while (t->colls) {
		mpi_coll *mc = t->colls;
		t->colls = mc->next;
		mc->c->state = NULL;
		mc_free(t, mc);
	}
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
	.coll_post = mpi_coll_post,
	.coll_test = mpi_coll_test,
	.coll_release = mpi_coll_release,
	.finalize = mpi_finalize,
};

#else

/* Without MPI the core never selects this transport. */
typedef int rt_mpi_absent;

#endif
