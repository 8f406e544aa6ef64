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
 * of its stages' neighbouring stages, which the placement, the stage
 * table, names: one counter per such peer, whatever the ranks' numbers);
 * the schedule is order-safe exactly when the two positions agree for
 * every message, since both sequences hold the same messages.  The
 * first disagreement of each pair is reported, in rank order.  The
 * runtime's grouped discipline (group.c) keeps each pair's send order
 * when it moves sends to later groups, so list order is posting order
 * there too.
 */
#include <inttypes.h>
#include <stdint.h>

#include "ppcc.h"

/* The peers of each rank, from the placement: peer[off[r] ..
 * off[r + 1]) are the distinct ranks that hold a stage next to one of
 * r's, at most 2 per stage.  Out-of-range ranks in the stage table (an
 * invalid schedule) are left out. */
typedef struct mo_peers {
	int32_t *off, *peer;
} mo_peers;

static int mo_peers_build(mo_peers *out, const ppcc_schedule *s)
{
	int p = s->n_ranks, S = s->n_stages;
	out->off = ppcc_calloc((size_t)p + 1, sizeof *out->off);
	out->peer = ppcc_malloc((2 * (size_t)S + 1) * sizeof *out->peer);
	if (!out->off || !out->peer)
		return PPCC_ENOMEM;
	for (int st = 0; st < S; st++) {
		int r = s->stages[st].rank;
		if (r >= 0 && r < p)
			out->off[r + 1] += 2;
	}
	for (int r = 0; r < p; r++)
		out->off[r + 1] += out->off[r];
	int32_t *fill = ppcc_calloc((size_t)p, sizeof *fill);
	if (!fill)
		return PPCC_ENOMEM;
	for (int st = 0; st < S; st++) {
		int r = s->stages[st].rank;
		if (r < 0 || r >= p)
			continue;
		for (int o = st - 1; o <= st + 1; o += 2) {
			int q = o >= 0 && o < S ? s->stages[o].rank : -1;
			if (q < 0 || q >= p || q == r)
				continue;
			int32_t *list = out->peer + out->off[r], k = 0;
			while (k < fill[r] && list[k] != q)
				k++;
			if (k == fill[r])
				list[fill[r]++] = q;
		}
	}
	/* close the gaps left by duplicates: off[r + 1] - off[r] = fill[r] */
	int32_t n = 0;
	for (int r = 0; r < p; r++) {
		int32_t from = out->off[r];
		out->off[r] = n;
		for (int k = 0; k < fill[r]; k++)
			out->peer[n++] = out->peer[from + k];
	}
	out->off[p] = n;
	ppcc_free(fill);
	return 0;
}

static void mo_peers_free(mo_peers *pe)
{
	ppcc_free(pe->off);
	ppcc_free(pe->peer);
}

/* The counter of the pair (src, dst): dst's slot among src's peers, or
 * -1 when the placement puts no stage of dst next to one of src's. */
static int64_t mo_pair(const mo_peers *pe, int src, int dst)
{
	for (int32_t k = pe->off[src]; k < pe->off[src + 1]; k++)
		if (pe->peer[k] == dst)
			return k;
	return -1;
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
	mo_peers pe = {NULL, NULL};
	int64_t *recv_pos = ppcc_malloc(n_keys * sizeof *recv_pos);
	int32_t *recv_rank = ppcc_malloc(n_keys * sizeof *recv_rank);
	int32_t *recv_action = ppcc_malloc(n_keys * sizeof *recv_action);
	int64_t *count = NULL;
	uint8_t *reported = NULL;
	int found = 0;

	if (!recv_pos || !recv_rank || !recv_action ||
	    mo_peers_build(&pe, s) < 0) {
		found = PPCC_ENOMEM;
		goto out;
	}
	size_t n_pairs = (size_t)pe.off[p];
	count = ppcc_calloc(n_pairs + 1, sizeof *count);
	reported = ppcc_calloc(n_pairs + 1, 1);
	if (!count || !reported) {
		found = PPCC_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < n_keys; k++)
		recv_pos[k] = -1;
	/* receivers first: where each message stands in its receiver's
	 * sequence from its sender (a message whose ends the placement does
	 * not pair, or without a key, is the validator's to report) */
	for (int r = 0; r < p; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			if (!mo_is_recv(a->op))
				continue;
			int64_t key = ppcc_message_key(a, S, m);
			int64_t pair = a->peer >= 0 && a->peer < p
					       ? mo_pair(&pe, a->peer, r) : -1;
			if (key < 0 || pair < 0)
				continue;
			recv_pos[key] = count[pair]++;
			recv_rank[key] = r;
			recv_action[key] = i;
		}
	}
	for (size_t k = 0; k < n_pairs; k++)
		count[k] = 0;
	for (int r = 0; r < p; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			if (!mo_is_send(a->op))
				continue;
			int64_t key = ppcc_message_key(a, S, m);
			int64_t pair = a->peer >= 0 && a->peer < p
					       ? mo_pair(&pe, r, a->peer) : -1;
			if (key < 0 || pair < 0)
				continue;
			int64_t pos = count[pair]++;
			if (recv_pos[key] < 0 || recv_pos[key] == pos ||
			    reported[pair])
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
	mo_peers_free(&pe);
	ppcc_free(recv_pos);
	ppcc_free(recv_rank);
	ppcc_free(recv_action);
	ppcc_free(count);
	ppcc_free(reported);
	return found;
}
