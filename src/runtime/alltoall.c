/*
 * alltoall.c - ppcc_rt_alltoallv: the all-to-all by which a mixture-of-
 * experts layer sends each token to the rank holding its expert and
 * gets the results back, over the runtime's own transport.
 *
 * One call is n messages out and n in, one to and from each member of
 * the group the caller names (itself included), every count and
 * displacement in elements of elem_bytes bytes.  They are posted
 * together between the transport's group brackets (ncclGroupStart and
 * ncclGroupEnd over nccl: every ncclSend and ncclRecv of the call in one
 * group), receives first, then each is waited for within the runtime's
 * timeout, as a pipeline message is.  The messages are named apart from
 * the pipeline's (key RT_KEY_ALLTOALL: mpi's tag 2, matched by name on
 * the local transport even when grouped), and their peers are ranks of
 * the transport's world (rt_req.world).
 * Contract: the arguments are checked before anything moves (a bad one
 * fails the rank, PPCC_RT_EINPUT, and stops the others as any failure
 * does); a wait that fails reports one line naming the call, the
 * action whose callback made it and the member waited for, fills the
 * flight record (RECV_ALLTOALLV or SEND_ALLTOALLV and the peer), stops
 * the other ranks, and leaves the runtime failed.
 * Limits: no debug trailer, no ppcc_rt_stats counts, no on_message
 * events.  Derivation: doc/design/runtime-alltoall.md.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

/* A region of a buffer: [lo, hi) as addresses, the member it is for. */
typedef struct a2a_span {
	uintptr_t lo, hi;
	int member;
} a2a_span;

static int a2a_span_cmp(const void *pa, const void *pb)
{
	const a2a_span *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->member < b->member ? -1 : a->member > b->member;
}

static int a2a_rank_cmp(const void *pa, const void *pb)
{
	int a = *(const int *)pa, b = *(const int *)pb;
	return a < b ? -1 : a > b;
}

/* The bytes of count elements at displacement displ of a buffer at base:
 * 0, or -1 when count x elem_bytes or the end overflows. */
static int a2a_span_of(a2a_span *out, const void *base, size_t count,
		       size_t displ, size_t elem, int member)
{
	if (count > SIZE_MAX / elem || displ > SIZE_MAX / elem)
		return -1;
	uintptr_t lo = (uintptr_t)base, off = displ * elem, n = count * elem;
	if (off > UINTPTR_MAX - lo || n > UINTPTR_MAX - lo - off)
		return -1;
	*out = (a2a_span){lo + off, lo + off + n, member};
	return 0;
}

/* Checks the arguments; 0, or PPCC_RT_EINPUT with the reason in why
 * (PPCC_RT_ENOMEM: none).  *out_me: this rank's index in the group. */
static int a2a_check(int *out_me, char *why, size_t n, const ppcc_rt *rt,
		     const void *out, const size_t *out_counts,
		     const size_t *out_displs, const void *in,
		     const size_t *in_counts, const size_t *in_displs,
		     size_t elem_bytes, const int *group, int n_group)
{
	int world = rt->tx.n_world, me = rt->tx.rank * rt->tx.grid_d +
					 rt->tx.grid_replica;
	int err = 0;
	*out_me = -1;
	if (!group || n_group < 1) {
		snprintf(why, n, "no group (group %s, n_group %d)",
			 group ? "given" : "NULL", n_group);
		return PPCC_RT_EINPUT;
	}
	if (n_group > world) {
		snprintf(why, n, "a group of %d members in a world of %d ranks",
			 n_group, world);
		return PPCC_RT_EINPUT;
	}
	if (elem_bytes == 0) {
		snprintf(why, n, "elem_bytes is 0");
		return PPCC_RT_EINPUT;
	}
	if (!out_counts || !out_displs || !in_counts || !in_displs) {
		snprintf(why, n, "%s is NULL", !in_counts ? "in_counts"
					       : !in_displs ? "in_displs"
					       : !out_counts ? "out_counts"
							     : "out_displs");
		return PPCC_RT_EINPUT;
	}
	for (int j = 0; j < n_group; j++) {
		if (group[j] < 0 || group[j] >= world) {
			snprintf(why, n, "group[%d] is rank %d, outside the world's "
				 "%d ranks", j, group[j], world);
			return PPCC_RT_EINPUT;
		}
		if (group[j] == me)
			*out_me = j;
	}
	if (*out_me < 0) {
		snprintf(why, n, "this rank (world rank %d) is not in the group",
			 me);
		return PPCC_RT_EINPUT;
	}
	int *sorted = ppcc_calloc((size_t)n_group, sizeof *sorted);
	a2a_span *outs = ppcc_calloc((size_t)n_group, sizeof *outs);
	if (!sorted || !outs) {
		err = PPCC_RT_ENOMEM;
		snprintf(why, n, "no memory to check the arguments");
		goto done;
	}
	memcpy(sorted, group, (size_t)n_group * sizeof *sorted);
	qsort(sorted, (size_t)n_group, sizeof *sorted, a2a_rank_cmp);
	for (int j = 1; j < n_group; j++)
		if (sorted[j] == sorted[j - 1]) {
			snprintf(why, n, "rank %d is in the group twice", sorted[j]);
			err = PPCC_RT_EINPUT;
			goto done;
		}
	int any_in = 0, any_out = 0;
	for (int j = 0; j < n_group; j++) {
		a2a_span s;
		if (a2a_span_of(&s, in, in_counts[j], in_displs[j], elem_bytes, j) < 0 ||
		    a2a_span_of(&outs[j], out, out_counts[j], out_displs[j],
				elem_bytes, j) < 0) {
			snprintf(why, n, "member %d: %zu elements at %zu (in) or %zu "
				 "at %zu (out) of %zu bytes overflow the address "
				 "space", j, in_counts[j], in_displs[j],
				 out_counts[j], out_displs[j], elem_bytes);
			err = PPCC_RT_EINPUT;
			goto done;
		}
		any_in |= in_counts[j] > 0;
		any_out |= out_counts[j] > 0;
	}
	if ((any_in && !in) || (any_out && !out)) {
		snprintf(why, n, "%s is NULL with elements to %s",
			 any_in && !in ? "in" : "out",
			 any_in && !in ? "send" : "receive");
		err = PPCC_RT_EINPUT;
		goto done;
	}
	/* the regions received into are disjoint, and none overlaps a
	 * region sent from (empty regions overlap nothing) */
	qsort(outs, (size_t)n_group, sizeof *outs, a2a_span_cmp);
	uintptr_t reach = 0;
	int reach_member = -1;
	for (int j = 0; j < n_group; j++) {
		if (outs[j].lo == outs[j].hi)
			continue;
		if (reach_member >= 0 && outs[j].lo < reach) {
			snprintf(why, n, "the regions of out for members %d and %d "
				 "overlap", reach_member < outs[j].member
				 ? reach_member : outs[j].member,
				 reach_member < outs[j].member ? outs[j].member
							       : reach_member);
			err = PPCC_RT_EINPUT;
			goto done;
		}
		reach = outs[j].hi;
		reach_member = outs[j].member;
	}
	for (int j = 0; j < n_group && any_in; j++) {
		a2a_span s = {0, 0, j};
		a2a_span_of(&s, in, in_counts[j], in_displs[j], elem_bytes, j);
		if (s.lo == s.hi)
			continue;
		/* the last out region starting below s.hi */
		int lo = 0, hi = n_group;
		while (lo < hi) {
			int mid = lo + (hi - lo) / 2;
			if (outs[mid].lo < s.hi)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (int k = lo - 1; k >= 0; k--) {
			if (outs[k].lo == outs[k].hi)
				continue;
			if (outs[k].hi > s.lo) {
				snprintf(why, n, "the region of in for member %d "
					 "overlaps the region of out for member %d",
					 j, outs[k].member);
				err = PPCC_RT_EINPUT;
				goto done;
			}
			break;
		}
	}
done:
	ppcc_free(sorted);
	ppcc_free(outs);
	return err;
}

/* "alltoallv #K in action I OP stage S mb M" or "... between steps". */
static void a2a_where(char *buf, size_t n, const ppcc_rt *rt, uint64_t seq)
{
	int i = rt->in_action;
	if (rt->rs && i >= 0 && i < rt->rs->n_actions) {
		const ppcc_action *a = &rt->rs->actions[i];
		snprintf(buf, n, "alltoallv #%" PRIu64 " in action %d %s stage %"
			 PRId32 " mb %" PRId32, seq, i, ppcc_op_name(a->op),
			 a->stage, a->mb);
	} else {
		snprintf(buf, n, "alltoallv #%" PRIu64 " between steps", seq);
	}
}

/* A byte address for a message of n bytes at base + off: base may be
 * NULL only when the rank has nothing there, and an empty message still
 * gets an address that is not NULL (NCCL 2.7.3 took a NULL receive
 * buffer for a send; the messages go out whatever their size, since
 * NCCL 2.12.10 pairs empty ones too). */
static void *a2a_addr(const void *base, size_t off, size_t n, void *dummy)
{
	if (!base)
		return n == 0 ? dummy : NULL;
	return (char *)(uintptr_t)base + off;
}

int ppcc_rt_alltoallv(void *out, const size_t *out_counts,
		      const size_t *out_displs, ppcc_rt *rt, const void *in,
		      const size_t *in_counts, const size_t *in_displs,
		      size_t elem_bytes, const int *group, int n_group)
{
	if (!rt)
		return PPCC_RT_EINPUT;
	if (rt->failed)
		return PPCC_RT_EPEER;
	uint64_t seq = rt->a2a_seq++;
	char where[192], why[256];
	int me, err, handed = 0, n = 0, k;
	rt_req **reqs = NULL;
	double t0 = ppcc_rt_now();
	unsigned char dummy[1];
	a2a_where(where, sizeof where, rt, seq);

	err = a2a_check(&me, why, sizeof why, rt, out, out_counts, out_displs,
			in, in_counts, in_displs, elem_bytes, group, n_group);
	if (err < 0)
		return ppcc_rt_fail_at(rt, err, rt->in_action, -1, where, 0,
				       "%s", why);
	reqs = ppcc_calloc(2 * (size_t)n_group, sizeof *reqs);
	if (!reqs)
		return ppcc_rt_fail_at(rt, PPCC_RT_ENOMEM, rt->in_action, -1,
				       where, 0, "no memory for its requests");
	/* receives first, then sends, each in the group's order */
	for (k = 0; k < 2 * n_group; k++) {
		int j = k % n_group, send = k >= n_group;
		rt_req *r;
		if ((err = ppcc_rt_req_get(&r, rt)) < 0) {
			err = ppcc_rt_fail_at(rt, err, rt->in_action, -1, where, 0,
					      "no memory for a request");
			goto out;
		}
		reqs[n++] = r;
		size_t count = send ? in_counts[j] : out_counts[j];
		size_t displ = send ? in_displs[j] : out_displs[j];
		r->is_send = send;
		r->world = 1;
		r->key = RT_KEY_ALLTOALL;
		r->src = send ? group[me] : group[j];
		r->dst = send ? group[j] : group[me];
		r->bytes = count * elem_bytes;
		r->buf = a2a_addr(send ? in : out, displ * elem_bytes, r->bytes,
				  dummy);
		r->action = rt->in_action;
		r->owner = NULL;
	}
	if (rt->ops->group_begin && (err = rt->ops->group_begin(rt->tr)) < 0) {
		err = ppcc_rt_fail_at(rt, err, rt->in_action, -1, where,
				      ppcc_rt_now() - t0, "%s failed (%s transport)",
				      "opening its group", rt->ops->name);
		goto out;
	}
	/* nothing between the brackets reports or aborts (NCCL would run
	 * the posts queued on an aborted communicator) */
	for (; handed < n; handed++) {
		rt_req *r = reqs[handed];
		if ((err = r->is_send ? rt->ops->send(rt->tr, r)
				      : rt->ops->recv(rt->tr, r)) < 0)
			break;
		r->posted = 1;
		ppcc_rt_flight_post(rt, r);
	}
	int end = rt->ops->group_end ? rt->ops->group_end(rt->tr) : 0;
	if (err < 0 || end < 0) {
		rt_req *r = err < 0 ? reqs[handed] : reqs[0];
		err = ppcc_rt_fail_at(rt, err < 0 ? err : end, rt->in_action,
				      err < 0 ? (r->is_send ? r->dst : r->src) : -1,
				      where, ppcc_rt_now() - t0,
				      "%s failed (%s transport)",
				      err < 0 ? (r->is_send ? "posting a send"
							    : "posting a receive")
					      : "closing its group", rt->ops->name);
		goto out;
	}
	for (k = 0; k < n; k++) {
		rt_req *r = reqs[k];
		int peer = r->is_send ? r->dst : r->src;
		double w0 = ppcc_rt_now();
		ppcc_rt_flight_wait(rt, r, w0);
		err = rt->ops->wait(rt->tr, r, w0 + rt->tx.timeout_s);
		if (err == 0 && r->status < 0)
			err = r->status;
		if (err < 0) {
			char cause[256];
			const char *what = r->is_send ? "the send to" : "the receive from";
			if (err == PPCC_RT_EPEER) {
				ppcc_rt_peer_cause(rt, cause, sizeof cause);
				err = ppcc_rt_fail_at(rt, err, rt->in_action, peer, where,
						      ppcc_rt_now() - t0, "%s; it waited "
						      "for %s rank %d", cause, what, peer);
			} else if (err == PPCC_RT_ETIMEOUT) {
				err = ppcc_rt_fail_at(rt, err, rt->in_action, peer, where,
						      ppcc_rt_now() - t0, "%s rank %d "
						      "(%zu bytes) did not complete "
						      "within %.3f s", what, peer,
						      r->bytes, rt->tx.timeout_s);
			} else {
				err = ppcc_rt_fail_at(rt, err, rt->in_action, peer, where,
						      ppcc_rt_now() - t0, "%s rank %d "
						      "(%zu bytes) failed (%s transport)",
						      what, peer, r->bytes, rt->ops->name);
			}
			goto out;
		}
		ppcc_rt_flight_done(rt, r);
	}
	err = 0;
out:
	ppcc_rt_flight_wait(rt, NULL, 0);
	/* after a failure the transport lets go of what it still holds (the
	 * caller's buffers: nccl aborts the communicator) */
	for (k = 0; k < n; k++) {
		if (reqs[k]->posted && !rt_req_done(reqs[k]))
			rt->ops->cancel(rt->tr, reqs[k]);
		ppcc_rt_req_put(rt, reqs[k]);
	}
	ppcc_free(reqs);
	return err;
}
