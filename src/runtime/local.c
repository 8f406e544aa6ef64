/*
 * local.c - the local transport: every rank a thread of this process.
 *
 * A world holds, per destination rank, the sends that no receive has
 * matched yet and the receives that no send has matched yet, under one
 * mutex.  Whichever of a matching pair is posted second copies the
 * payload from the sender's buffer into the receiver's and completes
 * both, so a send never blocks its rank but its buffer stays the
 * sender's until a receive has taken the data (which, with `grouped`,
 * gives the rendezvous semantics of NCCL).  Matching is by message name
 * and sending rank, oldest first, as transport.h states; grouped, as
 * NCCL, by sending rank and posting order alone.
 *
 * Waits sleep on the rank's condition variable (CLOCK_MONOTONIC) until
 * their request completes, the deadline passes, or a rank aborts the
 * world: the abort flag is set under the mutex and every rank's
 * condition is broadcast, so every wait and every later action sees it.
 *
 * ppcc_rt_run_local runs one step of each rank of a schedule in its own
 * thread over a fresh world.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "transport.h"
#include "oob.h"

struct ppcc_rt_local_world {
	int n_ranks;
	pthread_mutex_t mu;
	pthread_cond_t *cond;        /* per rank */
	pthread_cond_t barrier;
	rt_req **sends;              /* per destination: unmatched sends */
	rt_req **recvs;              /* per destination: unmatched receives */
	atomic_int aborted;
	int abort_rank, abort_status;
	uint64_t *words;             /* the exchange, 2 per rank */
	int arrived;
	unsigned generation;
	int n_cond; /* per-rank conditions initialised; n_ranks + 1 once
		     * the barrier and the mutex are too */
	int oob_port; /* standing in for nccl: aborts go through the TCP
		       * abort store on this port, not the world */
	void *shared; /* nccl loopback's state (nccl.c), under mu */
};

struct rt_transport {
	ppcc_rt_local_world *w;
	int rank;
	int own_world; /* created for a one-rank schedule */
	int by_order;  /* grouped: match by posting order per rank pair */
	rt_oob *oob;   /* with the world's oob_port */
	double timeout_s;
	rt_tctx *cx;
	int in_group;  /* between group_begin and group_end */
};

static void local_deadline(struct timespec *ts, double deadline)
{
	/* deadline is CLOCK_MONOTONIC seconds, as are the conditions.  The
	 * core's deadlines are the clock plus at most PPCC_RT_TIMEOUT_MAX;
	 * anything else (NaN, beyond what time_t holds) is clamped before
	 * the conversion, which would otherwise be undefined. */
	if (!(deadline >= 0))
		deadline = 0;
	else if (deadline > 1e15)
		deadline = 1e15;
	double whole = (double)(time_t)deadline;
	ts->tv_sec = (time_t)deadline;
	ts->tv_nsec = (long)((deadline - whole) * 1e9);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	} else if (ts->tv_nsec < 0) {
		ts->tv_nsec = 0;
	}
}

void ppcc_rt_local_world_free(ppcc_rt_local_world *w)
{
	if (!w)
		return;
	for (int r = 0; r < w->n_cond && r < w->n_ranks; r++)
		pthread_cond_destroy(&w->cond[r]);
	if (w->n_cond == w->n_ranks + 1) {
		pthread_cond_destroy(&w->barrier);
		pthread_mutex_destroy(&w->mu);
	}
	ppcc_free(w->cond);
	ppcc_free(w->sends);
	ppcc_free(w->recvs);
	ppcc_free(w->words);
	ppcc_free(w);
}

int ppcc_rt_local_world_new(ppcc_rt_local_world **out, int n_ranks)
{
	pthread_condattr_t attr;
	int err = 0;
	if (!out)
		return PPCC_RT_EINPUT;
	*out = NULL;
	if (n_ranks < 1)
		return PPCC_RT_EINPUT;
	ppcc_rt_local_world *w = ppcc_calloc(1, sizeof *w);
	if (!w)
		return PPCC_RT_ENOMEM;
	w->n_ranks = n_ranks;
	w->cond = ppcc_calloc((size_t)n_ranks, sizeof *w->cond);
	w->sends = ppcc_calloc((size_t)n_ranks, sizeof *w->sends);
	w->recvs = ppcc_calloc((size_t)n_ranks, sizeof *w->recvs);
	w->words = ppcc_calloc((size_t)n_ranks, 2 * sizeof *w->words);
	atomic_init(&w->aborted, 0);
	w->abort_rank = -1;
	if (!w->cond || !w->sends || !w->recvs || !w->words) {
		err = PPCC_RT_ENOMEM;
		goto out;
	}
	if (pthread_condattr_init(&attr) != 0) {
		err = PPCC_RT_ENOMEM;
		goto out;
	}
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	for (; w->n_cond < n_ranks; w->n_cond++)
		if (pthread_cond_init(&w->cond[w->n_cond], &attr) != 0)
			break;
	if (w->n_cond == n_ranks && pthread_cond_init(&w->barrier, &attr) == 0) {
		if (pthread_mutex_init(&w->mu, NULL) == 0)
			w->n_cond++;
		else
			pthread_cond_destroy(&w->barrier);
	}
	pthread_condattr_destroy(&attr);
	if (w->n_cond != n_ranks + 1)
		err = PPCC_RT_ENOMEM;
out:
	if (err < 0) {
		ppcc_rt_local_world_free(w);
		return err;
	}
	*out = w;
	return 0;
}

/* Under w->mu. */
static void local_abort_locked(ppcc_rt_local_world *w, int rank, int status)
{
	if (atomic_load(&w->aborted))
		return;
	w->abort_rank = rank;
	w->abort_status = status;
	RT_HAPPENS_BEFORE(&w->aborted);
	atomic_store(&w->aborted, 1);
	for (int r = 0; r < w->n_ranks; r++)
		pthread_cond_broadcast(&w->cond[r]);
	pthread_cond_broadcast(&w->barrier);
}

void ppcc_rt_local_world_set_oob_port(ppcc_rt_local_world *w, int port)
{
	w->oob_port = port;
}

void ppcc_rt_local_world_abort(ppcc_rt_local_world *w, int rank, int status)
{
	pthread_mutex_lock(&w->mu);
	local_abort_locked(w, rank, status);
	pthread_mutex_unlock(&w->mu);
}

static int local_init(rt_transport **out, rt_tctx *cx, int rank)
{
	ppcc_rt_local_world *w = cx->world;
	int own = 0, err;
	*out = NULL;
	if (!w) {
		if (cx->s->n_ranks != 1) {
			rt_tctx_report(cx, "the local transport needs a world "
				       "(options.world) for %d ranks",
				       (int)cx->s->n_ranks);
			return PPCC_RT_EINPUT;
		}
		if ((err = ppcc_rt_local_world_new(&w, 1)) < 0)
			return err;
		own = 1;
	}
	if (rank < 0 || rank >= w->n_ranks) {
		rt_tctx_report(cx, "rank %d outside the local world's %d ranks",
			       rank, w->n_ranks);
		/* the others would wait for a rank that never comes */
		if (!own)
			ppcc_rt_local_world_abort(w, rank, PPCC_RT_EINPUT);
		else
			ppcc_rt_local_world_free(w);
		return PPCC_RT_EINPUT;
	}
	rt_transport *t = ppcc_calloc(1, sizeof *t);
	if (!t) {
		if (own)
			ppcc_rt_local_world_free(w);
		else
			ppcc_rt_local_world_abort(w, rank, PPCC_RT_ENOMEM);
		return PPCC_RT_ENOMEM;
	}
	t->w = w;
	t->rank = rank;
	t->own_world = own;
	t->by_order = cx->grouped;
	t->timeout_s = cx->timeout_s;
	t->cx = cx;
	cx->rank = rank;
	cx->n_ranks = w->n_ranks;
	if (w->oob_port &&
	    (err = ppcc_rt_oob_tcp_open(&t->oob, cx, rank, w->n_ranks,
					w->oob_port,
					ppcc_rt_now() + cx->timeout_s)) < 0) {
		ppcc_free(t);
		ppcc_rt_local_world_abort(w, rank, err);
		return err;
	}
	*out = t;
	return 0;
}

/* Waits, under w->mu, until every rank has arrived.  A barrier that has
 * completed wins over an abort that came after it. */
static int local_barrier(rt_transport *t, double deadline)
{
	ppcc_rt_local_world *w = t->w;
	struct timespec ts;
	unsigned gen = w->generation;
	local_deadline(&ts, deadline);
	if (++w->arrived == w->n_ranks) {
		w->arrived = 0;
		w->generation++;
		pthread_cond_broadcast(&w->barrier);
		return 0;
	}
	while (w->generation == gen) {
		if (atomic_load(&w->aborted)) {
			w->arrived--;
			return PPCC_RT_EPEER;
		}
		if (pthread_cond_timedwait(&w->barrier, &w->mu, &ts) == ETIMEDOUT &&
		    w->generation == gen) {
			w->arrived--;
			return PPCC_RT_ETIMEOUT;
		}
	}
	return 0;
}

int ppcc_rt_local_world_exchange(ppcc_rt_local_world *w, int rank,
				 uint64_t *out, const uint64_t mine[2],
				 double deadline)
{
	rt_transport t = {.w = w, .rank = rank};
	int err;
	pthread_mutex_lock(&w->mu);
	w->words[2 * rank] = mine[0];
	w->words[2 * rank + 1] = mine[1];
	if ((err = local_barrier(&t, deadline)) == 0) {
		memcpy(out, w->words, (size_t)w->n_ranks * 2 * sizeof *out);
		/* nobody may write the next exchange before all have read */
		err = local_barrier(&t, deadline);
	}
	pthread_mutex_unlock(&w->mu);
	return err;
}

static int local_exchange(rt_transport *t, uint64_t *out,
			  const uint64_t mine[2], double deadline)
{
	return ppcc_rt_local_world_exchange(t->w, t->rank, out, mine, deadline);
}

int ppcc_rt_local_world_size(const ppcc_rt_local_world *w)
{
	return w->n_ranks;
}

void ppcc_rt_local_world_lock(ppcc_rt_local_world *w)
{
	pthread_mutex_lock(&w->mu);
}

void ppcc_rt_local_world_unlock(ppcc_rt_local_world *w)
{
	pthread_mutex_unlock(&w->mu);
}

void **ppcc_rt_local_world_shared(ppcc_rt_local_world *w)
{
	return &w->shared;
}

int ppcc_rt_local_world_aborted(ppcc_rt_local_world *w, int *out_rank,
				int *out_status)
{
	if (!atomic_load(&w->aborted))
		return 0;
	*out_rank = w->abort_rank;
	*out_status = w->abort_status;
	return 1;
}

/* opaque[0] of a request: 1 when its rank runs grouped, and so matches
 * by posting order per rank pair, as NCCL does (ppcc_rt_init has checked
 * that the schedule's pairs keep their order, so this pairs the same
 * messages as matching by name would). */
#define LOCAL_BY_ORDER(r) ((r)->opaque[0])

static int local_key_match(const rt_req *a, const rt_req *b)
{
	/* an all-to-all's messages match by key even when grouped: one
	 * posted inside a callback must never take a pipeline message */
	if ((LOCAL_BY_ORDER(a) || LOCAL_BY_ORDER(b)) &&
	    a->key != RT_KEY_ALLTOALL && b->key != RT_KEY_ALLTOALL)
		return a->src == b->src;
	return a->key == b->key && a->src == b->src;
}

/* Unlinks and returns the oldest request of *list matching r. */
static rt_req *local_take(rt_req **list, const rt_req *r)
{
	for (rt_req **pp = list; *pp; pp = &(*pp)->next)
		if (local_key_match(*pp, r)) {
			rt_req *m = *pp;
			*pp = m->next;
			m->next = NULL;
			return m;
		}
	return NULL;
}

static void local_append(rt_req **list, rt_req *r)
{
	r->next = NULL;
	while (*list)
		list = &(*list)->next;
	*list = r;
}

/* Under w->mu: the data moves and both sides complete.  Once `done` is
 * set, the owner may reuse the request at once (without the mutex), so
 * nothing of it is read after that. */
static void local_deliver(ppcc_rt_local_world *w, rt_req *send, rt_req *recv)
{
	int st = 0, src = send->src, dst = recv->dst;
	if (send->bytes != recv->bytes)
		st = PPCC_RT_ETRANSPORT;
	else if (send->bytes)
		memcpy(recv->buf, send->buf, send->bytes);
	send->status = recv->status = st;
	rt_req_set_done(send);
	rt_req_set_done(recv);
	pthread_cond_broadcast(&w->cond[src]);
	pthread_cond_broadcast(&w->cond[dst]);
}

static int local_send(rt_transport *t, rt_req *r)
{
	ppcc_rt_local_world *w = t->w;
	LOCAL_BY_ORDER(r) = (uint64_t)t->by_order;
	pthread_mutex_lock(&w->mu);
	rt_req *m = local_take(&w->recvs[r->dst], r);
	if (m)
		local_deliver(w, r, m);
	else
		local_append(&w->sends[r->dst], r);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

static int local_recv(rt_transport *t, rt_req *r)
{
	ppcc_rt_local_world *w = t->w;
	LOCAL_BY_ORDER(r) = (uint64_t)t->by_order;
	pthread_mutex_lock(&w->mu);
	rt_req *m = local_take(&w->sends[t->rank], r);
	if (m)
		local_deliver(w, m, r);
	else
		local_append(&w->recvs[t->rank], r);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

/* Grouped posts are bracketed as NCCL's are; the brackets only track
 * that the core never aborts between them. */
static int local_group_begin(rt_transport *t)
{
	t->in_group = 1;
	return 0;
}

static int local_group_end(rt_transport *t)
{
	t->in_group = 0;
	return 0;
}

static int local_test(rt_transport *t, rt_req *r, int *done)
{
	(void)t;
	*done = rt_req_done(r);
	return 0;
}

static int local_wait(rt_transport *t, rt_req *r, double deadline)
{
	ppcc_rt_local_world *w = t->w;
	struct timespec ts;
	int err = 0;
	if (rt_req_done(r))
		return 0;
	local_deadline(&ts, deadline);
	pthread_mutex_lock(&w->mu);
	while (!rt_req_done(r)) {
		int who, st;
		if (atomic_load(&w->aborted) ||
		    (t->oob && ppcc_rt_oob_poll(t->oob, &who, &st))) {
			err = PPCC_RT_EPEER;
			break;
		}
		/* with the abort store, wake every 5 ms to poll it */
		struct timespec slice = ts;
		if (t->oob) {
			double now = ppcc_rt_now();
			if (now > deadline) {
				err = PPCC_RT_ETIMEOUT;
				break;
			}
			local_deadline(&slice, now + 0.005 < deadline ? now + 0.005
								      : deadline);
		}
		if (pthread_cond_timedwait(&w->cond[t->rank], &w->mu, &slice) ==
			    ETIMEDOUT &&
		    !rt_req_done(r) && (!t->oob || ppcc_rt_now() > deadline)) {
			err = PPCC_RT_ETIMEOUT;
			break;
		}
	}
	pthread_mutex_unlock(&w->mu);
	return err;
}

/* Standing in for nccl (an abort store), the failure reaches the other
 * ranks only through the store, as with NCCL, whose abort tells nobody. */
static void local_abort(rt_transport *t, int status)
{
	/* NCCL forbids it (the communicator is freed under the queued
	 * posts): the core must close a group before it aborts */
	if (t->in_group)
		rt_tctx_report(t->cx, "internal error: the transport was aborted "
			       "inside an open group");
	if (t->oob)
		ppcc_rt_oob_signal(t->oob, t->rank, status);
	else
		ppcc_rt_local_world_abort(t->w, t->rank, status);
}

static int local_aborted(rt_transport *t, int *out_rank, int *out_status)
{
	ppcc_rt_local_world *w = t->w;
	if (t->oob && !atomic_load(&w->aborted))
		return ppcc_rt_oob_poll(t->oob, out_rank, out_status);
	if (!atomic_load(&w->aborted))
		return 0;
	/* written before the flag was set */
	RT_HAPPENS_AFTER(&w->aborted);
	*out_rank = w->abort_rank;
	*out_status = w->abort_status;
	return 1;
}

static int local_alloc(rt_transport *t, void **out, size_t bytes)
{
	(void)t;
	/* zeroed: a callback need not write every byte it is given, and a
	 * debug checksum then reads defined memory */
	*out = ppcc_calloc(1, bytes);
	return *out ? 0 : PPCC_RT_ENOMEM;
}

static void local_free(rt_transport *t, void *p)
{
	(void)t;
	ppcc_free(p);
}

static int local_copy(rt_transport *t, void *dst, const void *src, size_t n)
{
	(void)t;
	memcpy(dst, src, n);
	return 0;
}

static void local_unlink(rt_req **list, const rt_req *r)
{
	for (rt_req **pp = list; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			return;
		}
}

/* Once unlinked, no other rank can match the request and touch its
 * buffer (delivery happens under the same mutex). */
static void local_cancel(rt_transport *t, rt_req *r)
{
	ppcc_rt_local_world *w = t->w;
	pthread_mutex_lock(&w->mu);
	local_unlink(r->is_send ? &w->sends[r->dst] : &w->recvs[r->dst], r);
	pthread_mutex_unlock(&w->mu);
}

/* Removes every request of this rank from the world's lists, so that no
 * other rank touches its buffers once they are freed. */
static void local_finalize(rt_transport *t, int failed)
{
	if (!t)
		return;
	ppcc_rt_local_world *w = t->w;
	pthread_mutex_lock(&w->mu);
	for (int d = 0; d < w->n_ranks; d++)
		for (rt_req **pp = &w->sends[d]; *pp;) {
			if ((*pp)->src == t->rank)
				*pp = (*pp)->next;
			else
				pp = &(*pp)->next;
		}
	w->recvs[t->rank] = NULL;
	pthread_mutex_unlock(&w->mu);
	ppcc_rt_oob_close(t->oob, failed, ppcc_rt_now() + t->timeout_s);
	if (t->own_world)
		ppcc_rt_local_world_free(w);
	ppcc_free(t);
}

const rt_transport_ops ppcc_rt_local_ops = {
	.name = "local",
	.init = local_init,
	.exchange = local_exchange,
	.group_begin = local_group_begin,
	.group_end = local_group_end,
	.send = local_send,
	.recv = local_recv,
	.test = local_test,
	.wait = local_wait,
	.abort = local_abort,
	.aborted = local_aborted,
	.alloc = local_alloc,
	.free = local_free,
	.read = local_copy,
	.write = local_copy,
	.cancel = local_cancel,
	.finalize = local_finalize,
};
