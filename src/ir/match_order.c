/*
 * match_order.c - is a schedule runnable on a transport that matches
 * messages by posting order?
 *
 * ppcc_schedule_validate checks the semantics of include/ppcc/schedule.h,
 * where a receive matches its send by (kind, stage, microbatch).  NCCL
 * does not know those names: it pairs the k-th ncclSend from rank a to
 * rank b with the k-th ncclRecv that b posts from a, whatever they carry.
 * A schedule runs correctly there only if, for every ordered pair of
 * ranks (a, b), the messages a sends to b in its list order are the
 * messages b receives from a in its list order.  Otherwise a payload
 * lands in another microbatch's buffer: silently, unless the debug
 * trailer is on, and deadlocking when the sizes differ.
 *
 * The check is one pass over every action.  Each message gets its
 * position in its sender's sequence to that receiver and in its
 * receiver's sequence from that sender (a rank only talks to the ranks
 * of its neighbouring stages, r + 1 and r - 1 mod p, so two counters per
 * rank suffice); the schedule is order-safe exactly when the two
 * positions agree for every message, since both sequences hold the same
 * messages.  The first disagreement of each pair is reported, in rank
 * order.  The runtime's grouped discipline (group.c) keeps each pair's
 * send order when it moves sends to later groups, so list order is
 * posting order there too.
 */
#include <inttypes.h>
#include <stdint.h>

#include "ppcc.h"

/* The counter of the pair (src, dst): src's successor or predecessor. */
static size_t mo_pair(int src, int dst, int p)
{
	return 2 * (size_t)src + (dst == (src + 1) % p ? 0 : 1);
}

/* The message key of a SEND/RECV: (kind, receiving stage, mb). */
static size_t mo_key(const ppcc_action *a, int S, int m)
{
	int grad = a->op == PPCC_OP_SEND_B || a->op == PPCC_OP_RECV_B;
	int stage = a->op == PPCC_OP_SEND_F   ? a->stage + 1
		    : a->op == PPCC_OP_SEND_B ? a->stage - 1
					      : a->stage;
	return ((size_t)grad * (size_t)S + (size_t)stage) * (size_t)m +
	       (size_t)a->mb;
}

static int mo_is_send(int op)
{
	return op == PPCC_OP_SEND_F || op == PPCC_OP_SEND_B;
}

static int mo_is_recv(int op)
{
	return op == PPCC_OP_RECV_F || op == PPCC_OP_RECV_B;
}

/* English ordinal of a 0-based position: "1st", "2nd", ... */
static const char *mo_nth(char *buf, size_t n, int64_t pos)
{
	int64_t k = pos + 1;
	const char *suf = "th";
	if (k % 100 < 11 || k % 100 > 13) {
		if (k % 10 == 1)
			suf = "st";
		else if (k % 10 == 2)
			suf = "nd";
		else if (k % 10 == 3)
			suf = "rd";
	}
	snprintf(buf, n, "%" PRId64 "%s", k, suf);
	return buf;
}

int ppcc_schedule_order_check(const ppcc_schedule *s, ppcc_diag *d,
			      const char *file, int max_findings)
{
	int p = s->n_ranks, S = s->n_stages, m = s->n_microbatches;
	size_t n_keys = 2 * (size_t)S * (size_t)m;
	ppcc_loc loc = {file, 0, 0};
	int64_t *recv_pos = ppcc_malloc(n_keys * sizeof *recv_pos);
	int32_t *recv_rank = ppcc_malloc(n_keys * sizeof *recv_rank);
	int32_t *recv_action = ppcc_malloc(n_keys * sizeof *recv_action);
	int64_t *count = ppcc_calloc(2 * (size_t)p, sizeof *count);
	uint8_t *reported = ppcc_calloc(2 * (size_t)p, 1);
	int found = 0;

	if (!recv_pos || !recv_rank || !recv_action || !count ||
	    !reported) {
		found = PPCC_ENOMEM;
		goto out;
	}
	/* receivers first: where each message stands in its receiver's
	 * sequence from its sender */
	for (int r = 0; r < p; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			if (!mo_is_recv(a->op))
				continue;
			size_t key = mo_key(a, S, m);
			recv_pos[key] = count[mo_pair(a->peer, r, p)]++;
			recv_rank[key] = r;
			recv_action[key] = i;
		}
	}
	for (size_t k = 0; k < 2 * (size_t)p; k++)
		count[k] = 0;
	for (int r = 0; r < p; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			if (!mo_is_send(a->op))
				continue;
			size_t pair = mo_pair(r, a->peer, p);
			size_t key = mo_key(a, S, m);
			int64_t pos = count[pair]++;
			if (recv_pos[key] == pos || reported[pair])
				continue;
			reported[pair] = 1;
			found++;
			if (max_findings > 0 && found > max_findings)
				continue;
			char sn[24], rn[24];
			ppcc_warning(d, file ? &loc : NULL,
				     "rank %d, action %d (%s stage %" PRId32
				     " mb %" PRId32 "): the %s message rank %d "
				     "sends to rank %" PRId32 " is the %s that "
				     "rank %" PRId32 " receives (action %" PRId32
				     "): not runnable on order-matching "
				     "transports (nccl, grouped)",
				     r, i, ppcc_op_name(a->op), a->stage, a->mb,
				     mo_nth(sn, sizeof sn, pos), r, a->peer,
				     mo_nth(rn, sizeof rn, recv_pos[key]),
				     recv_rank[key], recv_action[key]);
		}
	}
	if (max_findings > 0 && found > max_findings)
		ppcc_note(d, file ? &loc : NULL,
			  "%d further rank pairs out of order not reported",
			  found - max_findings);
out:
	ppcc_free(recv_pos);
	ppcc_free(recv_rank);
	ppcc_free(recv_action);
	ppcc_free(count);
	ppcc_free(reported);
	return found;
}
