/*
 * core.c - runs one rank's action list over a transport.
 *
 * ppcc_rt_init joins the transport, validates the schedule and compares
 * its fingerprint with every other rank's before any data moves.
 * ppcc_rt_step then walks the rank's actions in list order: a RECV waits
 * (with the timeout) for a receive posted `recv_ahead` computes earlier;
 * F, B, I and W call the stage's callback; a SEND is posted and the rank
 * goes on, its buffer returning to the pool when the send completes.  In
 * grouped mode (nccl, or opts->grouped) the SEND/RECV actions are posted
 * in groups planned at init (group.c) so that no group waits for ever.
 * Buffers live in four slots per (stage, microbatch) and come from a pool
 * with a free list per size, so the pool grows to the most buffers the
 * schedule holds at once (plus the receives posted ahead) and no more.
 * In debug mode each buffer carries a checked trailer.
 * Every failure goes through rt_fail: one diagnostic line naming the
 * action, what it waited for and for how long, and the flight record of
 * the rank's last actions; then the transport's abort, so that the other
 * ranks stop instead of waiting for this one.
 *
 * More: doc/design/runtime-core.md (the slots' lifetimes, the trailer).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt.h"

enum { SLOT_IN_ACT, SLOT_OUT_ACT, SLOT_IN_GRAD, SLOT_OUT_GRAD, SLOT_KINDS };

#define RT_DEFAULT_FLIGHT 8
#define RT_TRAILER_MAGIC 0x70706372u /* "ppcr" */

/* The debug trailer, stored unaligned after the payload. */
typedef struct rt_trailer {
	uint32_t magic;
	int32_t src, dst;
	int32_t zero;  /* 0: no padding bytes for the checksum to read */
	int64_t key;   /* ppcc_message_key */
	uint64_t step;
	uint64_t sum;
} rt_trailer;

int ppcc_rt_transport_available(int transport)
{
	switch (transport) {
	case PPCC_RT_LOCAL: return 1;
	case PPCC_RT_MPI: return PPCC_HAVE_MPI;
	case PPCC_RT_NCCL: return PPCC_HAVE_NCCL;
	}
	return 0;
}

static void rt_default_diag(int rank, const char *line, void *user)
{
	(void)rank;
	(void)user;
	fprintf(stderr, "%s\n", line);
}

/* ---- options ------------------------------------------------------------- */

static void rt_resolve_options(ppcc_rt_options *o, const ppcc_rt_options *in)
{
	static const ppcc_rt_options dflt = PPCC_RT_OPTIONS_INIT;
	*o = dflt;
	if (in && in->version == 1) /* the fields up to message_user */
		memcpy(o, in, offsetof(ppcc_rt_options, dp_group));
	else if (in && in->version == 2) /* up to replica */
		memcpy(o, in, offsetof(ppcc_rt_options, data_parallel));
	else if (in)
		*o = *in;
	o->version = PPCC_RT_OPTIONS_VERSION;
	const char *dbg = getenv("PPCC_DEBUG");
	if (dbg && strcmp(dbg, "1") == 0)
		o->debug = 1;
	if (o->recv_ahead < 0)
		o->recv_ahead = 0;
	if (o->flight_record <= 0)
		o->flight_record = RT_DEFAULT_FLIGHT;
	if (!o->diag) {
		o->diag = rt_default_diag;
		o->diag_user = NULL;
	}
}

/* ---- pool ------------------------------------------------------------------ */

static size_t rt_wire_bytes(const ppcc_rt *rt, uint64_t payload)
{
	return (size_t)payload + (rt->tx.debug ? sizeof(rt_trailer) : 0);
}

static int rt_buf_get(rt_buf **out, ppcc_rt *rt, size_t size)
{
	rt_size_class *c = NULL;
	for (int i = 0; i < rt->n_classes; i++)
		if (rt->classes[i].size == size)
			c = &rt->classes[i];
	if (!c) {
		if (rt->n_classes == rt->cap_classes) {
			int cap = rt->cap_classes ? 2 * rt->cap_classes : 8;
			rt_size_class *nc = ppcc_realloc(
				rt->classes, (size_t)cap * sizeof *nc);
			if (!nc)
				return PPCC_RT_ENOMEM;
			rt->classes = nc;
			rt->cap_classes = cap;
		}
		c = &rt->classes[rt->n_classes++];
		c->size = size;
		c->free = NULL;
	}
	rt_buf *b = c->free;
	if (b) {
		c->free = b->next;
	} else {
		b = ppcc_calloc(1, sizeof *b);
		if (!b)
			return PPCC_RT_ENOMEM;
		int err = rt->ops->alloc(rt->tr, &b->mem, size);
		if (err < 0) {
			ppcc_free(b);
			return err;
		}
		b->size = size;
		b->all_next = rt->buf_all;
		rt->buf_all = b;
		rt->pool_buffers++;
	}
	b->next = NULL;
	rt->in_use++;
	rt->in_use_bytes += size;
	if (rt->in_use > rt->st.peak_buffers)
		rt->st.peak_buffers = rt->in_use;
	if (rt->in_use_bytes > rt->st.peak_buffer_bytes)
		rt->st.peak_buffer_bytes = rt->in_use_bytes;
	*out = b;
	return 0;
}

static void rt_buf_put(ppcc_rt *rt, rt_buf *b)
{
	if (!b)
		return;
	for (int i = 0; i < rt->n_classes; i++)
		if (rt->classes[i].size == b->size) {
			b->next = rt->classes[i].free;
			rt->classes[i].free = b;
			break;
		}
	rt->in_use--;
	rt->in_use_bytes -= b->size;
}

static rt_buf **rt_slot(ppcc_rt *rt, int kind, int stage, int mb)
{
	return &rt->slot[((size_t)kind * (size_t)rt->S + (size_t)stage) *
			 (size_t)rt->m + (size_t)mb];
}

/* Takes the buffer out of a slot (NULL when empty). */
static rt_buf *rt_take(ppcc_rt *rt, int kind, int stage, int mb)
{
	rt_buf **p = rt_slot(rt, kind, stage, mb);
	rt_buf *b = *p;
	*p = NULL;
	return b;
}

int ppcc_rt_req_get(rt_req **out, ppcc_rt *rt)
{
	rt_req *r = rt->req_free;
	if (r) {
		rt->req_free = r->pool_next;
	} else {
		r = ppcc_calloc(1, sizeof *r);
		if (!r)
			return PPCC_RT_ENOMEM;
		r->all_next = rt->req_all;
		rt->req_all = r;
	}
	rt_req *all = r->all_next;
	memset(r, 0, sizeof *r);
	r->all_next = all;
	atomic_init(&r->done, 0);
	*out = r;
	return 0;
}

void ppcc_rt_req_put(ppcc_rt *rt, rt_req *r)
{
	r->posted = 0;
	r->pool_next = rt->req_free;
	rt->req_free = r;
}

/* ---- failure ----------------------------------------------------------------- */

static int rt_stage_rank(const ppcc_rt *rt, int stage)
{
	return rt->s->stages[stage].rank;
}

static const ppcc_action *rt_action(const ppcc_rt *rt, int i)
{
	return i >= 0 && i < rt->rs->n_actions ? &rt->rs->actions[i] : NULL;
}

static void rt_flight_add(ppcc_rt *rt, int action, double start, double end)
{
	rt_flight *f = &rt->flight[rt->flight_pos];
	f->action = action;
	f->start = start - rt->step_t0;
	f->dur = end - start;
	rt->flight_pos = (rt->flight_pos + 1) % rt->n_flight;
	if (rt->flight_len < rt->n_flight)
		rt->flight_len++;
	ppcc_rt_flight_end(rt, action, start, end);
}

/* Reports the failure in one line, fills the statistics and stops the
 * other ranks.  Returns status.  place NULL: the action's (peer its
 * peer); else the line's opening words and the peer waited for. */
static int rt_vfail(ppcc_rt *rt, int status, int action, int peer,
		    const char *place, double waited, const char *fmt,
		    va_list ap) PPCC_PRINTF(7, 0);

static int rt_vfail(ppcc_rt *rt, int status, int action, int peer,
		    const char *place, double waited, const char *fmt,
		    va_list ap)
{
	char cause[512], where[320], flight[1024];
	vsnprintf(cause, sizeof cause, fmt, ap);

	const ppcc_action *a = rt_action(rt, action);
	if (place)
		snprintf(where, sizeof where, "%s", place);
	else if (a)
		snprintf(where, sizeof where,
			 "action %d %s stage %" PRId32 " mb %" PRId32
			 " peer %" PRId32, action, ppcc_op_name(a->op),
			 a->stage, a->mb, a->peer);
	else if (action >= 0)
		snprintf(where, sizeof where, "after the last action (%d)",
			 action);
	else
		snprintf(where, sizeof where, "before the first action");

	size_t n = 0;
	flight[0] = '\0';
	for (int k = 0; k < rt->flight_len && n < sizeof flight; k++) {
		int idx = (rt->flight_pos - rt->flight_len + k + rt->n_flight) %
			  rt->n_flight;
		const rt_flight *f = &rt->flight[idx];
		const ppcc_action *fa = rt_action(rt, f->action);
		if (!fa)
			continue;
		int w = snprintf(flight + n, sizeof flight - n,
				 "%s#%d %s s%" PRId32 " mb%" PRId32 " %.3f ms",
				 n ? ", " : "", f->action, ppcc_op_name(fa->op),
				 fa->stage, fa->mb, f->dur * 1e3);
		if (w < 0)
			break;
		n += (size_t)w;
	}
	ppcc_rt_report(rt, "%s: %s: %s; waited %.3f s; last: %s", where,
		       ppcc_rt_status_str(status), cause, waited,
		       n ? flight : "none");

	rt->st.status = status;
	rt->st.failed_action = action;
	rt->st.failed_op = a ? a->op : -1;
	rt->st.failed_stage = a ? a->stage : -1;
	rt->st.failed_mb = a ? a->mb : -1;
	rt->st.failed_peer = place ? peer : a ? a->peer : -1;
	rt->st.failed_waited_s = waited;
	ppcc_rt_flight_fail(rt, status, action, waited);
	ppcc_rt_tell_world(rt, status);
	rt->failed = 1;
	return status;
}

static int rt_fail(ppcc_rt *rt, int status, int action, double waited,
		   const char *fmt, ...) PPCC_PRINTF(5, 6);

static int rt_fail(ppcc_rt *rt, int status, int action, double waited,
		   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int err = rt_vfail(rt, status, action, -1, NULL, waited, fmt, ap);
	va_end(ap);
	return err;
}

int ppcc_rt_fail_at(ppcc_rt *rt, int status, int action, int peer,
		    const char *where, double waited, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int err = rt_vfail(rt, status, action, peer, where, waited, fmt, ap);
	va_end(ap);
	return err;
}

/* "rank K" for rank w of the transport's world; with data parallelism
 * over the transport, "rank K replica R (world rank w)". */
static const char *rt_world_name(const ppcc_rt *rt, int w, char *buf, size_t n)
{
	if (rt->tx.grid_d > 1)
		snprintf(buf, n, "rank %d replica %d (world rank %d)",
			 w / rt->tx.grid_d, w % rt->tx.grid_d, w);
	else
		snprintf(buf, n, "rank %d", w);
	return buf;
}

/* The cause of an EPEER, for the diagnostic. */
void ppcc_rt_peer_cause(ppcc_rt *rt, char *buf, size_t n)
{
	int who = -1, st = PPCC_RT_EPEER;
	char name[96];
	rt->ops->aborted(rt->tr, &who, &st);
	if (who >= 0)
		snprintf(buf, n, "stopped because %s failed (%s)",
			 rt_world_name(rt, who, name, sizeof name),
			 ppcc_rt_status_str(st));
	else
		snprintf(buf, n, "stopped because another rank failed");
}

/* Turns a transport status at action i into the failure report. */
static int rt_fail_wait(ppcc_rt *rt, int err, int action, double t0,
			const char *what)
{
	double waited = ppcc_rt_now() - t0;
	char cause[256];
	if (err == PPCC_RT_EPEER) {
		ppcc_rt_peer_cause(rt, cause, sizeof cause);
		return rt_fail(rt, err, action, waited, "%s", cause);
	}
	if (err == PPCC_RT_ETIMEOUT)
		return rt_fail(rt, err, action, waited,
			       "%s did not complete within %.3f s", what,
			       rt->tx.timeout_s);
	return rt_fail(rt, err, action, waited, "%s failed (%s transport)",
		       what, rt->ops->name);
}

/* A gradient reduction's post failed at action i (begun at t0): a
 * peer's failure, a wait for an earlier collective that timed out (the
 * line says which, ppcc_rt_dp_why), or the reduction's own error. */
static int rt_fail_reduce(ppcc_rt *rt, int err, int i, double t0)
{
	if (err == PPCC_RT_EPEER)
		return rt_fail_wait(rt, err, i, t0, "gradient reduction");
	return rt_fail(rt, err, i,
		       err == PPCC_RT_ETIMEOUT ? ppcc_rt_now() - t0 : 0, "%s",
		       ppcc_rt_dp_why(rt));
}

/* ---- debug trailer --------------------------------------------------------------- */

static uint64_t rt_fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t rt_checksum(const void *payload, size_t n, const rt_trailer *t)
{
	rt_trailer head = *t;
	head.sum = 0;
	uint64_t h = rt_fnv(0xcbf29ce484222325ULL, payload, n);
	return rt_fnv(h, &head, sizeof head);
}

/* Host view of a transport buffer: the buffer itself, or a copy in
 * *scratch (nccl) that the caller frees. */
static int rt_host_view(const void **out, void **scratch, ppcc_rt *rt,
			const void *buf, size_t n)
{
	*scratch = NULL;
	if (rt->o.transport != PPCC_RT_NCCL) {
		*out = buf;
		return 0;
	}
	*scratch = ppcc_malloc(n);
	if (!*scratch)
		return PPCC_RT_ENOMEM;
	int err = rt->ops->read(rt->tr, *scratch, buf, n);
	*out = *scratch;
	return err;
}

/* "RECV_F stage 2 mb 3": the receiving end of the message of key (a
 * trailer's key may be anything). */
static const char *rt_key_name(char *buf, size_t n, const ppcc_rt *rt,
			       int64_t key)
{
	if (key < 0 || key >= 2 * (int64_t)rt->s->n_stages *
					rt->s->n_microbatches) {
		snprintf(buf, n, "key %" PRId64, key);
		return buf;
	}
	ppcc_message msg = ppcc_message_of_key(key, rt->s->n_microbatches);
	snprintf(buf, n, "%s stage %" PRId32 " mb %" PRId32,
		 msg.fwd ? "RECV_F" : "RECV_B", msg.dst_stage, msg.mb);
	return buf;
}

static int rt_trailer_write(ppcc_rt *rt, rt_req *r, size_t payload)
{
	rt_trailer t = {
		.magic = RT_TRAILER_MAGIC, .src = r->src, .dst = r->dst,
		.key = r->key,
		.step = rt->step, .sum = 0,
	};
	const void *view = NULL;
	void *scratch;
	int err = rt_host_view(&view, &scratch, rt, r->buf, payload);
	if (err == 0) {
		t.sum = rt_checksum(view, payload, &t);
		err = rt->ops->write(rt->tr, (char *)r->buf + payload, &t,
				     sizeof t);
	}
	ppcc_free(scratch);
	return err;
}

/* 0, or ECHECKSUM having reported what differs. */
static int rt_trailer_check(ppcc_rt *rt, rt_req *r, size_t payload,
			    double t0)
{
	rt_trailer t;
	const void *view = NULL;
	void *scratch;
	int err = rt->ops->read(rt->tr, &t, (char *)r->buf + payload,
				sizeof t);
	if (err == 0)
		err = rt_host_view(&view, &scratch, rt, r->buf, payload);
	else
		scratch = NULL;
	if (err < 0) {
		ppcc_free(scratch);
		return rt_fail_wait(rt, err, r->action, t0, "reading a message");
	}
	uint64_t sum = rt_checksum(view, payload, &t);
	ppcc_free(scratch);
	if (t.magic != RT_TRAILER_MAGIC)
		return rt_fail(rt, PPCC_RT_ECHECKSUM, r->action, 0,
			       "message has no trailer (magic %08" PRIx32 ")",
			       t.magic);
	if (t.src != r->src || t.dst != r->dst || t.key != r->key ||
	    t.step != rt->step) {
		char got[64], want[64];
		return rt_fail(rt, PPCC_RT_ECHECKSUM, r->action, 0,
			       "message names %s from rank %" PRId32 " to %"
			       PRId32 " step %" PRIu64 ", expected %s from rank "
			       "%d to %d step %" PRIu64,
			       rt_key_name(got, sizeof got, rt, t.key), t.src,
			       t.dst, t.step,
			       rt_key_name(want, sizeof want, rt, r->key),
			       r->src, r->dst, rt->step);
	}
	if (sum != t.sum)
		return rt_fail(rt, PPCC_RT_ECHECKSUM, r->action, 0,
			       "checksum %016" PRIx64 " of %zu payload bytes, "
			       "the sender wrote %016" PRIx64,
			       sum, payload, t.sum);
	return 0;
}

/* ---- messages ---------------------------------------------------------------------- */

static void rt_message_event(ppcc_rt *rt, const rt_req *r, int event,
			     uint64_t payload)
{
	if (!rt->o.on_message)
		return;
	ppcc_message m = ppcc_message_of_key(r->key, rt->s->n_microbatches);
	ppcc_rt_message msg = {
		.event = event, .kind = m.fwd ? PPCC_OP_SEND_F : PPCC_OP_SEND_B,
		.src = r->src, .dst = r->dst, .src_stage = m.src_stage,
		.dst_stage = m.dst_stage, .mb = m.mb, .bytes = payload,
		.step = rt->step,
	};
	rt->o.on_message(&msg, rt->o.message_user);
}

/* Payload bytes of the message a RECV action at stage s receives. */
static uint64_t rt_recv_payload(const ppcc_rt *rt, const ppcc_action *a)
{
	const ppcc_stage_info *st = &rt->s->stages[a->stage];
	return a->op == PPCC_OP_RECV_F ? st->recv_bytes : st->send_bytes;
}

/* What posting a SEND or RECV needs besides the transport's own call:
 * the request, the buffer and (debug) the trailer.  Grouped, this runs
 * before the group opens, so that a failure here (the pool's allocation,
 * a device copy) is reported and aborts with no group open: NCCL's
 * ncclGroupEnd after an ncclCommAbort inside the group would run the
 * queued free of the communicator and then the posts queued on it. */
static int rt_prepare_recv(rt_req **out, ppcc_rt *rt, int i)
{
	const ppcc_action *a = &rt->rs->actions[i];
	rt_req *r;
	rt_buf *b;
	int err;
	*out = NULL;
	if ((err = ppcc_rt_req_get(&r, rt)) < 0)
		return rt_fail(rt, err, i, 0, "no memory for a request");
	if ((err = rt_buf_get(&b, rt, rt_wire_bytes(rt, rt_recv_payload(rt, a)))) < 0) {
		ppcc_rt_req_put(rt, r);
		return rt_fail(rt, err, i, 0, "no memory for a %s buffer",
			       rt->ops->name);
	}
	r->is_send = 0;
	r->key = ppcc_message_key(a, rt->s->n_stages, rt->s->n_microbatches);
	r->src = a->peer;
	r->dst = rt->tx.rank;
	r->buf = b->mem;
	r->bytes = b->size;
	r->owner = b;
	r->action = i;
	*out = r;
	return 0;
}

/* Gives a prepared request back, unposted (after a failure). */
static void rt_unprepare(ppcc_rt *rt, rt_req *r)
{
	if (!r)
		return;
	rt_buf_put(rt, r->owner);
	ppcc_rt_req_put(rt, r);
}

/* The transport's post of a prepared request; its status as the
 * transport gave it, unreported (grouped, the caller reports it once the
 * group is closed). */
static int rt_hand(ppcc_rt *rt, rt_req *r)
{
	int err = r->is_send ? rt->ops->send(rt->tr, r) : rt->ops->recv(rt->tr, r);
	if (err < 0)
		return err;
	r->posted = 1;
	ppcc_rt_flight_post(rt, r);
	if (!r->is_send) {
		rt->recv_of[r->action] = r;
		return 0;
	}
	const ppcc_action *a = &rt->rs->actions[r->action];
	const ppcc_stage_info *st = &rt->s->stages[a->stage];
	uint64_t payload = a->op == PPCC_OP_SEND_F ? st->send_bytes
						   : st->recv_bytes;
	rt->st.messages_sent++;
	rt->st.bytes_sent += payload;
	rt_message_event(rt, r, PPCC_RT_MSG_SENT, payload);
	return 0;
}

static int rt_post_recv(ppcc_rt *rt, int i)
{
	rt_req *r;
	int err;
	if ((err = rt_prepare_recv(&r, rt, i)) < 0)
		return err;
	if ((err = rt_hand(rt, r)) < 0) {
		rt_unprepare(rt, r);
		return rt_fail_wait(rt, err, i, ppcc_rt_now(),
				    "posting the receive");
	}
	return 0;
}

/* Posts every receive below `limit` not posted yet. */
static int rt_post_ahead(ppcc_rt *rt, int limit)
{
	int err;
	for (; rt->next_post < limit; rt->next_post++) {
		int op = rt->rs->actions[rt->next_post].op;
		if ((op == PPCC_OP_RECV_F || op == PPCC_OP_RECV_B) &&
		    !rt->recv_of[rt->next_post] &&
		    (err = rt_post_recv(rt, rt->next_post)) < 0)
			return err;
	}
	return 0;
}

/* A completed receive: check it and put its buffer in its slot. */
static int rt_recv_done(ppcc_rt *rt, int i, double t0)
{
	const ppcc_action *a = &rt->rs->actions[i];
	rt_req *r = rt->recv_of[i];
	uint64_t payload = rt_recv_payload(rt, a);
	int err;
	rt->recv_of[i] = NULL;
	if (r->status < 0) {
		err = r->status;
		rt_buf_put(rt, r->owner);
		ppcc_rt_req_put(rt, r);
		return rt_fail_wait(rt, err, i, t0, "the receive");
	}
	if (rt->tx.debug && (err = rt_trailer_check(rt, r, payload, t0)) < 0) {
		rt_buf_put(rt, r->owner);
		ppcc_rt_req_put(rt, r);
		return err;
	}
	int kind = a->op == PPCC_OP_RECV_F ? SLOT_IN_ACT : SLOT_IN_GRAD;
	rt_buf **slot = rt_slot(rt, kind, a->stage, a->mb);
	if (*slot) {
		rt_buf_put(rt, r->owner);
		ppcc_rt_req_put(rt, r);
		return rt_fail(rt, PPCC_RT_EINTERNAL, i, 0,
			       "a buffer for this message is already held");
	}
	*slot = r->owner;
	ppcc_rt_flight_done(rt, r);
	rt->st.messages_received++;
	rt->st.bytes_received += payload;
	rt_message_event(rt, r, PPCC_RT_MSG_RECEIVED, payload);
	ppcc_rt_req_put(rt, r);
	return 0;
}

static int rt_prepare_send(rt_req **out, ppcc_rt *rt, int i)
{
	const ppcc_action *a = &rt->rs->actions[i];
	const ppcc_stage_info *st = &rt->s->stages[a->stage];
	int fwd = a->op == PPCC_OP_SEND_F;
	uint64_t payload = fwd ? st->send_bytes : st->recv_bytes;
	rt_buf *b = rt_take(rt, fwd ? SLOT_OUT_ACT : SLOT_OUT_GRAD, a->stage,
			    a->mb);
	rt_req *r;
	int err;
	*out = NULL;
	if (!b)
		return rt_fail(rt, PPCC_RT_EINTERNAL, i, 0,
			       "nothing to send: the %s has not run",
			       fwd ? "forward" : "backward");
	if ((err = ppcc_rt_req_get(&r, rt)) < 0) {
		rt_buf_put(rt, b);
		return rt_fail(rt, err, i, 0, "no memory for a request");
	}
	r->is_send = 1;
	r->key = ppcc_message_key(a, rt->s->n_stages, rt->s->n_microbatches);
	r->src = rt->tx.rank;
	r->dst = a->peer;
	r->buf = b->mem;
	r->bytes = b->size;
	r->owner = b;
	r->action = i;
	if (rt->tx.debug && (err = rt_trailer_write(rt, r, (size_t)payload)) < 0) {
		rt_unprepare(rt, r);
		return rt_fail_wait(rt, err, i, ppcc_rt_now(),
				    "writing the message trailer");
	}
	*out = r;
	return 0;
}

static int rt_post_send(rt_req **out, ppcc_rt *rt, int i)
{
	rt_req *r;
	int err;
	*out = NULL;
	if ((err = rt_prepare_send(&r, rt, i)) < 0)
		return err;
	if ((err = rt_hand(rt, r)) < 0) {
		rt_unprepare(rt, r);
		return rt_fail_wait(rt, err, i, ppcc_rt_now(), "the send");
	}
	*out = r;
	return 0;
}

static int rt_send_done(ppcc_rt *rt, rt_req *r, double t0)
{
	int err = r->status;
	int action = r->action;
	if (err == 0)
		ppcc_rt_flight_done(rt, r);
	rt_buf_put(rt, r->owner);
	ppcc_rt_req_put(rt, r);
	return err < 0 ? rt_fail_wait(rt, err, action, t0, "the send") : 0;
}

/* Returns the buffers of completed sends to the pool. */
static int rt_reap_sends(ppcc_rt *rt)
{
	rt_req **pp = &rt->pending;
	while (*pp) {
		rt_req *r = *pp;
		int done = 0, err;
		if ((err = rt->ops->test(rt->tr, r, &done)) < 0)
			return rt_fail_wait(rt, err, r->action, ppcc_rt_now(),
					    "the send");
		if (!done) {
			pp = &r->pending_next;
			continue;
		}
		*pp = r->pending_next;
		if ((err = rt_send_done(rt, r, ppcc_rt_now())) < 0)
			return err;
	}
	return 0;
}

static int rt_is_comm(int op)
{
	return ppcc_op_is_comm(op);
}

static int rt_is_recv(int op)
{
	return ppcc_op_is_comm(op) && !ppcc_op_traits_of(op)->send;
}

/* ---- compute ---------------------------------------------------------------------- */

static void *rt_mem(rt_buf *b)
{
	return b ? b->mem : NULL;
}

/* The stage's input activation: received, or stage-1's output on this
 * rank; NULL on stage 0. */
static rt_buf *rt_input_of(ppcc_rt *rt, int s, int mb)
{
	if (s == 0)
		return NULL;
	rt_buf **in = rt_slot(rt, SLOT_IN_ACT, s, mb);
	if (!*in && rt_stage_rank(rt, s - 1) == rt->tx.rank)
		*in = rt_take(rt, SLOT_OUT_ACT, s - 1, mb);
	return *in;
}

/* The gradient of the stage's output: received, or stage+1's input
 * gradient on this rank; NULL on the last stage. */
static rt_buf *rt_grad_output_of(ppcc_rt *rt, int s, int mb)
{
	if (s == rt->S - 1)
		return NULL;
	rt_buf **g = rt_slot(rt, SLOT_IN_GRAD, s, mb);
	if (!*g && rt_stage_rank(rt, s + 1) == rt->tx.rank)
		*g = rt_take(rt, SLOT_OUT_GRAD, s + 1, mb);
	return *g;
}

/* Also leaves the callback's end time in rt->t_last, so that the caller
 * need not read the clock again (reading it is most of the runtime's
 * cost per action). */
static int rt_callback_status(ppcc_rt *rt, int i, int ret, double t0,
			      const char *name)
{
	rt->t_last = ppcc_rt_now();
	double ran = rt->t_last - t0;
	rt->st.busy_s += ran;
	rt->in_action = -1;
	/* the callback's all-to-all failed and reported it: that is the
	 * failure, whatever the callback returned */
	if (rt->failed)
		return rt->st.status < 0 ? rt->st.status : PPCC_RT_EINTERNAL;
	if (ret != 0)
		return rt_fail(rt, PPCC_RT_ECALLBACK, i, 0,
			       "%s returned %d", name, ret);
	int who, st;
	if (rt->ops->aborted(rt->tr, &who, &st)) {
		char cause[256];
		ppcc_rt_peer_cause(rt, cause, sizeof cause);
		return rt_fail(rt, PPCC_RT_EPEER, i, 0, "%s; %s ran %.3f s",
			       cause, name, ran);
	}
	if (ran > rt->tx.timeout_s)
		return rt_fail(rt, PPCC_RT_ETIMEOUT, i, 0,
			       "%s ran %.3f s, past the %.3f s timeout", name,
			       ran, rt->tx.timeout_s);
	return 0;
}

/* Runs compute action i; t0 is now (the caller's clock reading). */
/* fns[stage], stepping by the size of the caller's struct version
 * (ppcc_rt_stage_fns: versions 0 and 1 share one layout). */
static const ppcc_rt_stage_fns *rt_fns_at(const ppcc_rt_stage_fns *fns,
					  int stage)
{
	static const size_t size_of_version[] = {sizeof(ppcc_rt_stage_fns),
						 sizeof(ppcc_rt_stage_fns)};
	size_t stride = size_of_version[fns->version >= 0 && fns->version <= 1
					? fns->version : 1];
	return (const ppcc_rt_stage_fns *)(const void *)((const char *)fns +
							 (size_t)stage * stride);
}

static int rt_compute(ppcc_rt *rt, int i, const ppcc_rt_stage_fns *fns,
		      double t0)
{
	const ppcc_action *a = &rt->rs->actions[i];
	int s = a->stage, mb = a->mb, err, ret;
	if (ppcc_op_is_collective(a->op)) {
		/* REDUCE_GRAD, REDUCE_SCATTER_GRAD, ALL_GATHER_PARAM,
		 * UNSHARD_PARAM: launched, not waited for:
		 * ppcc_rt_dp_finish waits, or for the gathers
		 * ppcc_rt_dp_before (a post
		 * itself may wait: mpi, for the collective whose tags it
		 * reuses) */
		err = ppcc_rt_dp_reduce(rt, i);
		rt->t_last = ppcc_rt_now();
		return err < 0 ? rt_fail_reduce(rt, err, i, t0) : 0;
	}
	const ppcc_stage_info *st = &rt->s->stages[s];
	const ppcc_rt_stage_fns *f = rt_fns_at(fns, s);
	size_t in_n = (size_t)st->recv_bytes, out_n = (size_t)st->send_bytes;

	/* An overlapped pair's marker: its F and its B are the next two
	 * actions, run one after the other (the validator made sure), so the
	 * results are those of the same F and B run alone. */
	if (a->op == PPCC_OP_OVERLAP_F_B) {
		rt->t_last = t0;
		return 0;
	}
	if (a->op == PPCC_OP_F) {
		rt_buf *in = rt_input_of(rt, s, mb), *out = NULL;
		if (s > 0 && !in)
			return rt_fail(rt, PPCC_RT_EINTERNAL, i, 0,
				       "the input has not arrived");
		if (s < rt->S - 1) {
			if ((err = rt_buf_get(&out, rt, rt_wire_bytes(rt, out_n))) < 0)
				return rt_fail(rt, err, i, 0,
					       "no memory for the output");
			*rt_slot(rt, SLOT_OUT_ACT, s, mb) = out;
		}
		rt->in_action = i;
		ret = f->forward(s, mb, rt_mem(in), in ? in_n : 0, rt_mem(out),
				 out ? out_n : 0, f->user);
		if ((err = rt_callback_status(rt, i, ret, t0, "forward")) < 0)
			return err;
		if (s == rt->S - 1 && f->loss) {
			double loss = 0;
			t0 = rt->t_last;
			rt->in_action = i;
			ret = f->loss(&loss, s, mb, f->user);
			if ((err = rt_callback_status(rt, i, ret, t0, "loss")) < 0)
				return err;
			rt->st.loss_sum += loss;
			rt->st.loss_count++;
		}
		return 0;
	}

	rt_buf *in = s > 0 ? *rt_slot(rt, SLOT_IN_ACT, s, mb) : NULL;
	rt_buf *gout = a->op == PPCC_OP_W ? *rt_slot(rt, SLOT_IN_GRAD, s, mb)
					  : rt_grad_output_of(rt, s, mb);
	if (s < rt->S - 1 && !gout)
		return rt_fail(rt, PPCC_RT_EINTERNAL, i, 0,
			       "the output gradient has not arrived");
	if (a->op == PPCC_OP_W) {
		rt->in_action = i;
		ret = f->backward_weight(s, mb, rt_mem(gout),
					 gout ? out_n : 0, f->user);
		err = rt_callback_status(rt, i, ret, t0, "backward_weight");
	} else {
		rt_buf *gin = NULL;
		if (s > 0) {
			if ((err = rt_buf_get(&gin, rt, rt_wire_bytes(rt, in_n))) < 0)
				return rt_fail(rt, err, i, 0,
					       "no memory for the input gradient");
			*rt_slot(rt, SLOT_OUT_GRAD, s, mb) = gin;
		}
		ppcc_rt_backward_fn fn = a->op == PPCC_OP_B ? f->backward
							    : f->backward_input;
		rt->in_action = i;
		ret = fn(s, mb, rt_mem(gout), gout ? out_n : 0, rt_mem(gin),
			 gin ? in_n : 0, f->user);
		err = rt_callback_status(rt, i, ret, t0,
					 a->op == PPCC_OP_B ? "backward"
							    : "backward_input");
	}
	if (err < 0)
		return err;
	if (a->op != PPCC_OP_I) {
		/* The stage is done with this microbatch. */
		rt_buf_put(rt, in);
		rt_buf_put(rt, gout);
		*rt_slot(rt, SLOT_IN_ACT, s, mb) = NULL;
		*rt_slot(rt, SLOT_IN_GRAD, s, mb) = NULL;
		double t_post = ppcc_rt_now();
		if (rt->dp && (err = ppcc_rt_dp_after(rt, i)) < 0)
			return rt_fail_reduce(rt, err, i, t_post);
	}
	return 0;
}

/* ---- the step ------------------------------------------------------------------------ */

/* One group: the SEND/RECV actions acts[0..n) prepared, posted
 * together between group_begin and group_end, then waited for.  Nothing
 * between the two calls reports or aborts: a failed post is reported
 * once the group is closed. */
static int rt_run_group(ppcc_rt *rt, const int *acts, int n)
{
	double t0 = ppcc_rt_now();
	int err = 0, k, handed = 0;
	rt_req **reqs = ppcc_calloc((size_t)n, sizeof *reqs);

	if (!reqs)
		return rt_fail(rt, PPCC_RT_ENOMEM, acts[0], 0,
			       "no memory for a group");
	for (k = 0; k < n && err == 0; k++)
		err = rt_is_recv(rt->rs->actions[acts[k]].op)
			      ? rt_prepare_recv(&reqs[k], rt, acts[k])
			      : rt_prepare_send(&reqs[k], rt, acts[k]);
	if (err < 0)
		goto out;
	if (rt->ops->group_begin && (err = rt->ops->group_begin(rt->tr)) < 0) {
		err = rt_fail_wait(rt, err, acts[0], t0, "ncclGroupStart");
		goto out;
	}
	for (; handed < n; handed++)
		if ((err = rt_hand(rt, reqs[handed])) < 0)
			break;
	int end = rt->ops->group_end ? rt->ops->group_end(rt->tr) : 0;
	if (err < 0) {
		int i = acts[handed];
		err = rt_fail_wait(rt, err, i, t0,
				   reqs[handed]->is_send ? "the send"
							 : "posting the receive");
		goto out;
	}
	if (end < 0) {
		err = rt_fail_wait(rt, end, acts[0], t0, "ncclGroupEnd");
		goto out;
	}
	t0 = ppcc_rt_now();
	for (k = 0; k < n; k++) {
		int i = acts[k];
		rt_req *r = reqs[k];
		double w0 = ppcc_rt_now();
		ppcc_rt_flight_begin(rt, i, w0);
		err = rt->ops->wait(rt->tr, r, w0 + rt->tx.timeout_s);
		rt->st.wait_s += ppcc_rt_now() - w0;
		if (err < 0) {
			err = rt_fail_wait(rt, err, i, t0, "the group's transfer");
			goto out;
		}
		reqs[k] = NULL;
		if (r->is_send) {
			if ((err = rt_send_done(rt, r, t0)) < 0)
				goto out;
		} else if ((err = rt_recv_done(rt, i, t0)) < 0) {
			goto out;
		}
		rt_flight_add(rt, i, t0, ppcc_rt_now());
	}
out:
	/* Requests prepared and never handed go back; those handed and not
	 * completed are left to the transport's cancel (their buffers stay
	 * in the pool's list until then). */
	for (k = handed; k < n; k++)
		if (reqs[k] && !reqs[k]->posted)
			rt_unprepare(rt, reqs[k]);
	ppcc_free(reqs);
	return err;
}

static int rt_check_fns(ppcc_rt *rt, const ppcc_rt_stage_fns *fns)
{
	if (!fns)
		return rt_fail(rt, PPCC_RT_EINPUT, -1, 0, "no stage callbacks");
	if (fns->version < 0 || fns->version > PPCC_RT_STAGE_FNS_VERSION)
		return rt_fail(rt, PPCC_RT_EINPUT, -1, 0,
			       "stage callbacks of version %d (this runtime "
			       "knows up to %d)", fns->version,
			       PPCC_RT_STAGE_FNS_VERSION);
	for (int i = 0; i < rt->rs->n_actions; i++) {
		const ppcc_action *a = &rt->rs->actions[i];
		const ppcc_rt_stage_fns *f = rt_fns_at(fns, a->stage);
		const char *missing = NULL;
		if (a->op == PPCC_OP_F && !f->forward)
			missing = "forward";
		else if (a->op == PPCC_OP_B && !f->backward)
			missing = "backward";
		else if (a->op == PPCC_OP_I && !f->backward_input)
			missing = "backward_input";
		else if (a->op == PPCC_OP_W && !f->backward_weight)
			missing = "backward_weight";
		if (missing)
			return rt_fail(rt, PPCC_RT_EINPUT, i, 0,
				       "stage %" PRId32 " has no %s callback",
				       a->stage, missing);
	}
	return 0;
}

static int rt_check_aborted(ppcc_rt *rt, int i)
{
	int who, st, err;
	/* the transport's gradient reductions advance between actions */
	if (rt->dp && (err = ppcc_rt_dp_progress(rt)) < 0)
		return rt_fail(rt, err, i, 0, "gradient reduction");
	/* a stage's parameters gathered before its first compute; the
	 * wait reported its failure in its one line, as the step's end
	 * does */
	if (rt->dp && (err = ppcc_rt_dp_before(rt, i)) < 0) {
		const ppcc_action *a = rt_action(rt, i);
		rt->st.status = err;
		rt->st.failed_action = i;
		rt->st.failed_op = a ? a->op : -1;
		rt->st.failed_stage = a ? a->stage : -1;
		rt->st.failed_mb = a ? a->mb : -1;
		rt->st.failed_peer = -1;
		ppcc_rt_flight_fail(rt, err, i, 0);
		ppcc_rt_tell_world(rt, err);
		rt->failed = 1;
		return err;
	}
	if (!rt->ops->aborted(rt->tr, &who, &st))
		return 0;
	char cause[256];
	ppcc_rt_peer_cause(rt, cause, sizeof cause);
	return rt_fail(rt, PPCC_RT_EPEER, i, 0, "%s", cause);
}

/* Grouped: group k, then compute k, for every k. */
static int rt_run_grouped(ppcc_rt *rt, const ppcc_rt_stage_fns *fns)
{
	int err;
	for (int k = 0; k <= rt->n_computes; k++) {
		int first = rt->group_first[k], n = rt->group_first[k + 1] - first;
		if (n > 0 && (err = rt_run_group(rt, &rt->group_ops[first], n)) < 0)
			return err;
		if (k == rt->n_computes)
			break;
		int i = rt->computes[k];
		if ((err = rt_check_aborted(rt, i)) < 0)
			return err;
		double t0 = ppcc_rt_now();
		ppcc_rt_flight_begin(rt, i, t0);
		if ((err = rt_compute(rt, i, fns, t0)) < 0)
			return err;
		rt_flight_add(rt, i, t0, rt->t_last);
	}
	return 0;
}

/* Eager: the list in order, receives posted ahead, sends in the
 * background. */
static int rt_run_actions(ppcc_rt *rt, const ppcc_rt_stage_fns *fns)
{
	const ppcc_rank_schedule *rs = rt->rs;
	int err = 0;
	for (int i = 0; i < rs->n_actions; i++) {
		const ppcc_action *a = &rs->actions[i];
		if ((err = rt_check_aborted(rt, i)) < 0)
			return err;
		int limit = rt_is_recv(a->op) ? i + 1 : rt->horizon[i];
		if ((err = rt_post_ahead(rt, limit)) < 0)
			return err;
		double t0 = ppcc_rt_now();
		ppcc_rt_flight_begin(rt, i, t0);
		if (rt_is_recv(a->op)) {
			err = rt->ops->wait(rt->tr, rt->recv_of[i],
					    t0 + rt->tx.timeout_s);
			rt->st.wait_s += ppcc_rt_now() - t0;
			if (err < 0)
				return rt_fail_wait(rt, err, i, t0,
						    "the receive");
			if ((err = rt_recv_done(rt, i, t0)) < 0)
				return err;
		} else if (rt_is_comm(a->op)) {
			rt_req *r;
			if ((err = rt_post_send(&r, rt, i)) < 0)
				return err;
			r->pending_next = rt->pending;
			rt->pending = r;
		} else {
			if ((err = rt_compute(rt, i, fns, t0)) < 0)
				return err;
			rt_flight_add(rt, i, t0, rt->t_last);
			t0 = -1;
		}
		if (t0 >= 0)
			rt_flight_add(rt, i, t0, ppcc_rt_now());
		if (rt->pending && (err = rt_reap_sends(rt)) < 0)
			return err;
	}
	/* The step ends when every send has completed. */
	while (rt->pending) {
		rt_req *r = rt->pending;
		double t0 = ppcc_rt_now();
		ppcc_rt_flight_begin(rt, r->action, t0);
		err = rt->ops->wait(rt->tr, r, t0 + rt->tx.timeout_s);
		rt->st.wait_s += ppcc_rt_now() - t0;
		if (err < 0)
			return rt_fail_wait(rt, err, r->action, t0,
					    "the send");
		rt->pending = r->pending_next;
		if ((err = rt_send_done(rt, r, t0)) < 0)
			return err;
	}
	return 0;
}

size_t ppcc_rt_stats_size(int version)
{
	switch (version) {
	case 0:
	case 1:
		return sizeof(ppcc_rt_stats);
	}
	return 0;
}

void ppcc_rt_stats_put(ppcc_rt_stats *out, const ppcc_rt_stats *st)
{
	int version = out->version;
	size_t n = ppcc_rt_stats_size(version);
	memcpy(out, st, n);
	out->version = version;
}

int ppcc_rt_step(ppcc_rt_stats *out, ppcc_rt *rt, const ppcc_rt_stage_fns *fns)
{
	int err;
	if (!rt || (out && !ppcc_rt_stats_size(out->version)))
		return PPCC_RT_EINPUT;
	memset(&rt->st, 0, sizeof rt->st);
	rt->st.rank = rt->tx.rank;
	rt->st.failed_action = -1;
	rt->st.failed_op = rt->st.failed_stage = rt->st.failed_mb = -1;
	rt->st.failed_peer = -1;
	rt->step_t0 = ppcc_rt_now();
	rt->flight_len = rt->flight_pos = 0;
	rt->next_post = 0;
	rt->st.peak_buffers = rt->in_use;
	rt->st.peak_buffer_bytes = rt->in_use_bytes;

	if (rt->failed) {
		err = PPCC_RT_EPEER;
		rt->st.status = err;
		goto out;
	}
	if ((err = rt_check_fns(rt, fns)) < 0 ||
	    (err = rt->tx.grouped ? rt_run_grouped(rt, fns)
				  : rt_run_actions(rt, fns)) < 0)
		goto out;
	if (rt->in_use != 0)
		err = rt_fail(rt, PPCC_RT_EINTERNAL, rt->rs->n_actions, 0,
			      "%d buffers still held at the end of the step",
			      rt->in_use);
	if (err == 0 && rt->dp && (err = ppcc_rt_dp_finish(rt)) < 0) {
		/* reported; this replica's pipeline peers are told too */
		ppcc_rt_tell_world(rt, err);
		rt->failed = 1;
	}
out:
	if (err < 0 && rt->dp)
		ppcc_rt_dp_abort(rt, err);
	rt->st.step_s = ppcc_rt_now() - rt->step_t0;
	rt->st.pool_buffers = rt->pool_buffers;
	rt->st.status = err;
	rt->step++;
	if (out)
		ppcc_rt_stats_put(out, &rt->st);
	return err;
}

/* ---- init ---------------------------------------------------------------------------- */

static void rt_validate_diag(ppcc_severity sev, const ppcc_loc *loc,
			     const char *msg, void *user)
{
	ppcc_rt *rt = user;
	ppcc_rt_report(rt, "%s: %s: %s", loc && loc->file ? loc->file : "schedule",
		       sev == PPCC_SEV_ERROR ? "error" : "warning", msg);
}

/* Grouped (and so nccl): a transport that pairs sends and receives by
 * posting order needs each rank pair's send order to be its receive
 * order (match_order.c); a schedule without it would deliver a message
 * into another's buffer, so it is refused. */
static int rt_check_order(ppcc_rt *rt)
{
	ppcc_diag d = {rt_validate_diag, rt, 0, 0};
	int n = ppcc_schedule_order_check(rt->s, &d, "schedule", 4);
	if (n <= 0)
		return n;
	ppcc_rt_report(rt, "schedule: %d rank pair%s send%s in another order "
		       "than %s received; refusing it in grouped mode, where "
		       "messages match by posting order", n, n == 1 ? "" : "s",
		       n == 1 ? "s" : "", n == 1 ? "it is" : "they are");
	return PPCC_RT_EINPUT;
}

/* The checks beyond ppcc_schedule_validate that the runtime relies on:
 * the transport's size, message bytes equal to the stage table's, and
 * in grouped mode the order of each rank pair's messages. */
static int rt_check_schedule(ppcc_rt *rt)
{
	const ppcc_schedule *s = rt->s;
	ppcc_diag d = {rt_validate_diag, rt, 0, 0};
	int err = ppcc_schedule_validate(s, &d, "schedule", 10);
	if (err < 0)
		return err;
	if (ppcc_sched_pipes(s->kind) > 1) {
		/* DualPipe's two pipelines hold two copies of each stage's
		 * layers (stage j on rank j and stage p+j on rank p-1-j): the
		 * copies' gradients must be summed across those two ranks
		 * before the optimizer step, and the runtime reduces a
		 * stage's gradients only over its data-parallel replicas */
		ppcc_rt_report(rt, "the runtime cannot run the %s schedule: "
			       "its two copies of each stage's parameters (stage "
			       "j on rank j, stage p+j on rank p-1-j) need their "
			       "gradients summed across ranks, which the runtime "
			       "does not do", ppcc_schedule_kind_name(s->kind));
		return PPCC_RT_EINPUT;
	}
	if (s->n_ranks != rt->tx.n_ranks) {
		ppcc_rt_report(rt, "the schedule has %" PRId32 " ranks, the %s "
			       "transport %d", s->n_ranks, rt->ops->name,
			       rt->tx.n_ranks);
		return PPCC_RT_EINPUT;
	}
	const ppcc_rank_schedule *rs = &s->ranks[rt->tx.rank];
	for (int i = 0; i < rs->n_actions; i++) {
		const ppcc_action *a = &rs->actions[i];
		const ppcc_stage_info *st = &s->stages[a->stage];
		uint64_t want = 0;
		if (a->op == PPCC_OP_RECV_F || a->op == PPCC_OP_SEND_B)
			want = st->recv_bytes;
		else if (a->op == PPCC_OP_SEND_F || a->op == PPCC_OP_RECV_B)
			want = st->send_bytes;
		else
			continue;
		if (a->bytes != want || want > (uint64_t)(SIZE_MAX / 2)) {
			ppcc_rt_report(rt, "schedule: action %d %s stage %" PRId32
				       " mb %" PRId32 ": %" PRIu64 " bytes, the "
				       "stage table says %" PRIu64, i,
				       ppcc_op_name(a->op), a->stage, a->mb,
				       a->bytes, want);
			return PPCC_RT_EINPUT;
		}
	}
	return rt->tx.grouped ? rt_check_order(rt) : 0;
}

/* horizon[i] for a compute action i: the index of the recv_ahead-th
 * compute action after i (n when there are fewer); receives below it are
 * posted before i runs. */
static void rt_horizons(ppcc_rt *rt)
{
	const ppcc_rank_schedule *rs = rt->rs;
	int n = rs->n_actions;
	for (int i = 0; i < n; i++) {
		rt->horizon[i] = i;
		if (rt_is_comm(rs->actions[i].op))
			continue;
		int h = i;
		for (int k = 0; k < rt->o.recv_ahead && h < n; k++) {
			h++;
			while (h < n && rt_is_comm(rs->actions[h].op))
				h++;
		}
		rt->horizon[i] = h;
	}
}

/* The grouped plan as arrays: the compute actions in order, and the
 * SEND/RECV actions of each group (CSR by point, in list order). */
static int rt_groups(ppcc_rt *rt)
{
	const ppcc_rank_schedule *rs = rt->rs;
	int n = rs->n_actions, err = 0;
	int32_t *point = ppcc_calloc((size_t)n + 1, sizeof *point);
	if (!point)
		return PPCC_RT_ENOMEM;
	if ((err = ppcc_rt_group_plan(point, rt)) < 0)
		goto out;
	int nc = 0;
	for (int i = 0; i < n; i++)
		nc += !rt_is_comm(rs->actions[i].op);
	rt->n_computes = nc;
	rt->computes = ppcc_calloc((size_t)nc + 1, sizeof *rt->computes);
	rt->group_first = ppcc_calloc((size_t)nc + 2, sizeof *rt->group_first);
	rt->group_ops = ppcc_calloc((size_t)n + 1, sizeof *rt->group_ops);
	if (!rt->computes || !rt->group_first || !rt->group_ops) {
		err = PPCC_RT_ENOMEM;
		goto out;
	}
	for (int i = 0, c = 0; i < n; i++) {
		if (!rt_is_comm(rs->actions[i].op))
			rt->computes[c++] = i;
		else
			rt->group_first[point[i] + 1]++;
	}
	for (int k = 0; k <= nc; k++)
		rt->group_first[k + 1] += rt->group_first[k];
	/* fill in list order; group_first[k] counts up as it fills */
	for (int i = 0; i < n; i++)
		if (rt_is_comm(rs->actions[i].op))
			rt->group_ops[rt->group_first[point[i]]++] = i;
	for (int k = nc; k >= 0; k--)
		rt->group_first[k + 1] = rt->group_first[k];
	rt->group_first[0] = 0;
out:
	ppcc_free(point);
	return err;
}

static const rt_transport_ops *rt_transport_ops_of(int transport,
						    const ppcc_rt_local_world *world)
{
	(void)world;
	switch (transport) {
	case PPCC_RT_LOCAL: return &ppcc_rt_local_ops;
#if PPCC_HAVE_MPI
	case PPCC_RT_MPI: return &ppcc_rt_mpi_ops;
#endif
#if PPCC_HAVE_NCCL
	case PPCC_RT_NCCL:
		return world ? &ppcc_rt_nccl_loop_ops : &ppcc_rt_nccl_ops;
#endif
	}
	return NULL;
}

/* Compares this rank's (status, fingerprint) with everyone's. */
static int rt_agree(ppcc_rt *rt, int status)
{
	uint64_t mine[2] = {(uint64_t)(int64_t)status,
			    status == 0 ? ppcc_schedule_fingerprint(rt->s) : 0};
	uint64_t *all = ppcc_calloc((size_t)rt->tx.n_world, 2 * sizeof *all);
	int err;
	if (!all)
		return PPCC_RT_ENOMEM;
	double t0 = ppcc_rt_now();
	if ((err = rt->ops->exchange(rt->tr, all, mine,
				     t0 + rt->tx.timeout_s)) < 0) {
		if (status == 0)
			err = rt_fail_wait(rt, err, -1, t0,
					   "the exchange of schedule fingerprints");
		goto out;
	}
	if (status < 0) {
		err = status;
		goto out;
	}
	char who[96];
	for (int r = 0; r < rt->tx.n_world; r++) {
		int st = (int)(int64_t)all[2 * r];
		if (st < 0) {
			ppcc_rt_report(rt, "%s failed to start (%s); not starting",
				       rt_world_name(rt, r, who, sizeof who),
				       ppcc_rt_status_str(st));
			err = PPCC_RT_EPEER;
			goto out;
		}
	}
	for (int r = 0; r < rt->tx.n_world; r++)
		if (all[2 * r + 1] != mine[1]) {
			ppcc_rt_report(rt, "schedule fingerprint %016" PRIx64
				       " differs from %s's %016" PRIx64
				       "; refusing to start", mine[1],
				       rt_world_name(rt, r, who, sizeof who),
				       all[2 * r + 1]);
			err = PPCC_RT_EMISMATCH;
			goto out;
		}
out:
	ppcc_free(all);
	return err;
}

int ppcc_rt_rank(const ppcc_rt *rt)
{
	return rt ? rt->tx.rank : -1;
}

void *ppcc_rt_cuda_stream(const ppcc_rt *rt)
{
	return rt ? rt->tx.cuda_stream : NULL;
}

#if PPCC_HAVE_MPI
int ppcc_rt_mpi_set_coll_window(ppcc_rt *rt, int window)
{
	if (!rt || rt->ops != &ppcc_rt_mpi_ops || !rt->tr || window < 1)
		return PPCC_RT_EINPUT;
	ppcc_rt_mpi_coll_window(rt->tr, window);
	return 0;
}
#endif

void ppcc_rt_free(ppcc_rt *rt)
{
	if (!rt)
		return;
	/* the reductions first: they are the transport's until released */
	ppcc_rt_dp_free(rt);
	if (rt->tr) {
		for (rt_req *r = rt->req_all; r; r = r->all_next)
			if (r->posted && !rt_req_done(r))
				rt->ops->cancel(rt->tr, r);
		for (rt_buf *b = rt->buf_all; b; b = b->all_next)
			rt->ops->free(rt->tr, b->mem);
		rt->ops->finalize(rt->tr, rt->failed);
	}
	for (rt_buf *b = rt->buf_all, *next; b; b = next) {
		next = b->all_next;
		ppcc_free(b);
	}
	for (rt_req *r = rt->req_all, *next; r; r = next) {
		next = r->all_next;
		ppcc_free(r);
	}
	ppcc_free(rt->classes);
	ppcc_free(rt->slot);
	ppcc_free(rt->recv_of);
	ppcc_free(rt->horizon);
	ppcc_free(rt->flight);
	ppcc_free(rt->computes);
	ppcc_free(rt->group_first);
	ppcc_free(rt->group_ops);
	ppcc_rt_flight_close(rt);
	ppcc_free(rt);
}

int ppcc_rt_init(ppcc_rt **out, const ppcc_schedule *s, int rank,
		 const ppcc_rt_options *opts)
{
	ppcc_rt *rt = NULL;
	int err = 0;

	if (!out)
		return PPCC_RT_EINPUT;
	*out = NULL;
	if (!s || (opts && (opts->version < 1 ||
			   opts->version > PPCC_RT_OPTIONS_VERSION)))
		return PPCC_RT_EINPUT;
	rt = ppcc_calloc(1, sizeof *rt);
	if (!rt) {
		/* the other local ranks would wait for this one */
		if (opts && opts->transport == PPCC_RT_LOCAL && opts->world)
			ppcc_rt_local_world_abort(opts->world, rank,
						  PPCC_RT_ENOMEM);
		return PPCC_RT_ENOMEM;
	}
	rt_resolve_options(&rt->o, opts);
	rt->s = s;
	rt->tx.s = s;
	rt->tx.rank = rank;
	rt->tx.report = ppcc_rt_vreport;
	rt->tx.user = rt;
	rt->in_action = -1;
	ppcc_rt_flight_open(rt);
	if ((err = ppcc_rt_timeout_resolve(&rt->tx.timeout_s, rt)) < 0) {
		/* no deadline to join with: the other local ranks are told */
		if (rt->o.transport == PPCC_RT_LOCAL && rt->o.world)
			ppcc_rt_local_world_abort(rt->o.world, rank, err);
		goto out;
	}
	rt->o.timeout_s = rt->tx.timeout_s;
	rt->tx.debug = rt->o.debug;
	rt->tx.grouped = rt->o.grouped || rt->o.transport == PPCC_RT_NCCL;
	rt->tx.data_parallel = rt->o.data_parallel;
	rt->tx.world = rt->o.world;
	rt->tx.nccl_id = rt->o.nccl_id;
	rt->tx.cuda_device = rt->o.cuda_device;
	rt->ops = rt_transport_ops_of(rt->o.transport, rt->o.world);
	if (!rt->ops) {
		if (rt->o.transport == PPCC_RT_MPI ||
		    rt->o.transport == PPCC_RT_NCCL) {
			ppcc_rt_report(rt, "the %s transport is not built into "
				       "this libppcc",
				       rt->o.transport == PPCC_RT_MPI ? "mpi"
								      : "nccl");
			err = PPCC_RT_EUNAVAILABLE;
		} else {
			ppcc_rt_report(rt, "unknown transport %d",
				       rt->o.transport);
			err = PPCC_RT_EINPUT;
		}
		goto out;
	}
	if ((err = rt->ops->init(&rt->tr, &rt->tx, rank)) < 0)
		goto out;
	if (rt->tx.grid_d < 1) {
		rt->tx.grid_d = 1;
		rt->tx.n_world = rt->tx.n_ranks;
	}

	/* Every rank takes part in the agreement, even one whose schedule
	 * is unusable, so that the others learn of it instead of waiting. */
	int status = 0;
	if (rt->tx.rank < 0 || rt->tx.rank >= rt->tx.n_ranks) {
		ppcc_rt_report(rt, "rank %d outside the %s transport's %d ranks",
			       rt->tx.rank, rt->ops->name, rt->tx.n_ranks);
		status = PPCC_RT_EINPUT;
	} else {
		status = rt_check_schedule(rt);
	}
	if (status == 0 && rt->o.data_parallel != 0 &&
	    (rt->o.data_parallel < 0 || !rt->ops->coll_post)) {
		ppcc_rt_report(rt, "options.data_parallel %d: data parallelism "
			       "over the transport needs mpi or nccl (not its "
			       "loopback) and d >= 1 (local: options.dp_group)",
			       rt->o.data_parallel);
		status = PPCC_RT_EINPUT;
	}
	if ((err = rt_agree(rt, status)) < 0)
		goto out;

	rt->rs = &s->ranks[rt->tx.rank];
	rt->S = s->n_stages;
	rt->m = s->n_microbatches;
	size_t n_slots = (size_t)SLOT_KINDS * (size_t)rt->S * (size_t)rt->m;
	size_t n_actions = (size_t)rt->rs->n_actions;
	rt->slot = ppcc_calloc(n_slots, sizeof *rt->slot);
	rt->recv_of = ppcc_calloc(n_actions, sizeof *rt->recv_of);
	rt->horizon = ppcc_calloc(n_actions, sizeof *rt->horizon);
	rt->n_flight = rt->o.flight_record;
	rt->flight = ppcc_calloc((size_t)rt->n_flight, sizeof *rt->flight);
	if (!rt->slot || !rt->recv_of || !rt->horizon || !rt->flight) {
		err = PPCC_RT_ENOMEM;
		goto out;
	}
	rt_horizons(rt);
	if (rt->tx.grouped && (err = rt_groups(rt)) < 0)
		goto out;
	if (rt->o.dp_group) {
		if (rt->o.transport != PPCC_RT_LOCAL) {
			ppcc_rt_report(rt, "options.dp_group: a group of local "
				       "runtimes; over mpi, options.data_parallel");
			err = PPCC_RT_EINPUT;
			goto out;
		}
		if ((err = ppcc_rt_dp_init(rt)) < 0)
			goto out;
	} else if (rt->o.data_parallel > 0) {
		if ((err = ppcc_rt_dp_init(rt)) < 0)
			goto out;
	}
out:
	if (err < 0 && rt->dp)
		ppcc_rt_dp_abort(rt, err);
	if (err < 0) {
		ppcc_rt_flight_fail(rt, err, -1, 0);
		if (!rt->failed)
			ppcc_rt_tell_world(rt, err);
		rt->failed = 1;
		ppcc_rt_free(rt);
		return err;
	}
	*out = rt;
	return 0;
}
