/*
 * emit/chrome.c - the simulated step as a Chrome trace (Trace Event
 * Format JSON), for chrome://tracing and Perfetto.
 *
 * One process per pipeline rank (pid = rank, named "rank N"), thread 0
 * for compute, thread 1 for communication and, when the plan is data
 * parallel, thread 2 for its collectives ("dp reduce": every one the
 * text report counts, ppcc_lanes_build's, ZeRO 2's added reduce-scatters
 * after the rank's actions); every
 * action is a complete event (ph "X") whose ts and dur are the simulated
 * start and duration in microseconds, named like "F s2 mb3", "SEND_F s2
 * mb3" or "REDUCE_GRAD s2 bucket0", with category "compute", "comm" or
 * "collective" and args {stage, mb, chunk, peer, bytes} (mb is the
 * bucket of a collective).  An
 * overlapped pair is one more compute event, "OVERLAP_F_B s2 mb3" named
 * by its forward, from the start of its F to the end of its B, so that
 * the two nest inside it; it is written after its B's event.  The
 * model's name and the plan's figures go in otherData.
 *
 * The document is streamed through json_write.h, one event per line, so
 * that memory stays flat, with the bytes jansson gave it before (strings
 * escaped to ASCII, reals with 15 significant digits, keys in a fixed order); each
 * action's times are replayed from the simulation as it is written.  Only finite numbers are
 * written: a non-finite or backwards simulated time is an internal error.
 * A model name that is not valid UTF-8 has each bad byte replaced by
 * U+FFFD, since JSON strings are UTF-8.  A plan without simulated times
 * (read back from JSON) is simulated here from its stage costs.
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/json_write.h"
#include "ppcc.h"

/* jansson's JSON_REAL_PRECISION(15), which the trace has always used */
#define CHROME_DIGITS 15

/* A JSON string of s, with U+FFFD for each byte that is not UTF-8. */
static int utf8_string(ppcc_jw *w, const char *s)
{
	size_t n = strlen(s), out = 0, i, len;
	const unsigned char *u = (const unsigned char *)s;
	for (i = 0; i < n && (len = ppcc_utf8_decode(u + i, n - i, NULL)) > 0; i += len)
		;
	if (i >= n) {
		ppcc_jw_string_n(w, s, n);
		return 0;
	}
	char *fixed = ppcc_malloc(3 * n + 1);
	if (!fixed)
		return PPCC_ENOMEM;
	for (i = 0; i < n;) {
		len = ppcc_utf8_decode(u + i, n - i, NULL);
		if (len) {
			memcpy(fixed + out, s + i, len);
			out += len, i += len;
		} else {
			memcpy(fixed + out, "\xef\xbf\xbd", 3);
			out += 3, i++;
		}
	}
	ppcc_jw_string_n(w, fixed, out);
	ppcc_free(fixed);
	return 0;
}

static void metadata(ppcc_jw *w, const char *name, int pid, int tid,
		     const char *key, const char *svalue, int ivalue)
{
	ppcc_jw_raw(w, "{\"name\":");
	ppcc_jw_string(w, name);
	ppcc_jw_raw(w, ",\"ph\":\"M\",\"pid\":");
	ppcc_jw_int(w, pid);
	ppcc_jw_raw(w, ",\"tid\":");
	ppcc_jw_int(w, tid);
	ppcc_jw_raw(w, ",\"args\":{");
	ppcc_jw_string(w, key);
	ppcc_jw_raw(w, ":");
	if (svalue)
		ppcc_jw_string(w, svalue);
	else
		ppcc_jw_int(w, ivalue);
	ppcc_jw_raw(w, "}}");
}

static void action_event(ppcc_jw *w, const ppcc_action *a, int rank, int chunk,
			 double start_ms, double end_ms)
{
	int coll = ppcc_op_is_collective(a->op);
	int comm = coll ? 2 : ppcc_op_is_comm(a->op);
	ppcc_jw_raw_n(w, "{\"name\":\"", 9);
	ppcc_jw_raw(w, ppcc_op_name(a->op));
	ppcc_jw_raw_n(w, " s", 2);
	ppcc_jw_int(w, a->stage);
	ppcc_jw_raw(w, coll ? " bucket" : " mb");
	ppcc_jw_int(w, a->mb);
	ppcc_jw_raw(w, coll ? "\",\"cat\":\"collective\",\"ph\":\"X\",\"ts\":"
		       : comm ? "\",\"cat\":\"comm\",\"ph\":\"X\",\"ts\":"
			      : "\",\"cat\":\"compute\",\"ph\":\"X\",\"ts\":");
	ppcc_jw_real(w, start_ms * 1000.0, CHROME_DIGITS);
	ppcc_jw_raw(w, ",\"dur\":");
	ppcc_jw_real(w, (end_ms - start_ms) * 1000.0, CHROME_DIGITS);
	ppcc_jw_raw(w, ",\"pid\":");
	ppcc_jw_int(w, rank);
	ppcc_jw_raw(w, ",\"tid\":");
	ppcc_jw_int(w, comm);
	ppcc_jw_raw(w, ",\"args\":{\"stage\":");
	ppcc_jw_int(w, a->stage);
	ppcc_jw_raw(w, ",\"mb\":");
	ppcc_jw_int(w, a->mb);
	ppcc_jw_raw(w, ",\"chunk\":");
	ppcc_jw_int(w, chunk);
	ppcc_jw_raw(w, ",\"peer\":");
	ppcc_jw_int(w, a->peer);
	ppcc_jw_raw(w, ",\"bytes\":");
	if (a->bytes <= (uint64_t)INT64_MAX)
		ppcc_jw_int(w, (int64_t)a->bytes);
	else
		ppcc_jw_real(w, (double)a->bytes, CHROME_DIGITS);
	ppcc_jw_raw_n(w, "}}", 2);
}

static int stage_chunk_of(const ppcc_schedule *s, int stage)
{
	return s->stages && stage >= 0 && stage < s->n_stages
		       ? s->stages[stage].chunk
		       : stage / s->n_ranks;
}

static int other_data(ppcc_jw *w, const ppcc_plan *p, const ppcc_schedule *s,
		      const ppcc_estimate *e)
{
	char fp[32];
	snprintf(fp, sizeof fp, "%016" PRIx64, s->fingerprint);
	ppcc_jw_raw(w, "{\"generator\":");
	ppcc_jw_string(w, "ppcc " PPCC_VERSION_STRING);
	ppcc_jw_raw(w, ",\"model\":");
	if (utf8_string(w, p->model_name ? p->model_name : "") < 0)
		return PPCC_ENOMEM;
	ppcc_jw_raw(w, ",\"schedule\":");
	ppcc_jw_string(w, ppcc_schedule_kind_name(s->kind));
	ppcc_jw_raw(w, ",\"ranks\":");
	ppcc_jw_int(w, s->n_ranks);
	ppcc_jw_raw(w, ",\"chunks\":");
	ppcc_jw_int(w, s->n_chunks);
	ppcc_jw_raw(w, ",\"virtual_stages\":");
	ppcc_jw_int(w, s->n_stages);
	ppcc_jw_raw(w, ",\"microbatches\":");
	ppcc_jw_int(w, s->n_microbatches);
	ppcc_jw_raw(w, ",\"fingerprint\":");
	ppcc_jw_string(w, fp);
	if (isfinite(e->step_ms)) {
		ppcc_jw_raw(w, ",\"step_ms\":");
		ppcc_jw_real(w, e->step_ms, CHROME_DIGITS);
	}
	if (isfinite(e->bubble_fraction)) {
		ppcc_jw_raw(w, ",\"bubble_fraction\":");
		ppcc_jw_real(w, e->bubble_fraction, CHROME_DIGITS);
	}
	if (isfinite(e->bubble_analytic)) {
		ppcc_jw_raw(w, ",\"bubble_fraction_analytic\":");
		ppcc_jw_real(w, e->bubble_analytic, CHROME_DIGITS);
	}
	ppcc_jw_raw(w, "}");
	return 0;
}

/* The shape and the times the events are made of, checked (the times are
 * replayed for this and again for the events: ppcc_rank_times). */
static int check_plan(const ppcc_schedule *s, const ppcc_stage_cost *costs,
		      const ppcc_estimate *e, ppcc_diag *d)
{
	if (s->n_ranks < 1 || !s->ranks ||
	    (!(e->start_ms && e->end_ms) && !(e->send_ms && costs))) {
		ppcc_error(d, NULL, "the plan has no simulated schedule to trace");
		return PPCC_EINTERNAL;
	}
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		ppcc_rank_times tt;
		if (rs->n_actions < 0 ||
		    (rs->n_actions > 0 && (!rs->actions ||
					   (e->start_ms && (!e->start_ms[r] || !e->end_ms[r])) ||
					   ppcc_rank_times_begin(&tt, s, costs, e, r) < 0))) {
			ppcc_error(d, NULL, "rank %d has no action list or times", r);
			return PPCC_EINTERNAL;
		}
		for (int i = 0; i < rs->n_actions; i++) {
			double t0, t1;
			int op = rs->actions[i].op;
			if (op < 0 || op >= PPCC_OP_COUNT) {
				ppcc_error(d, NULL, "rank %d action %d has unknown op %d",
					   r, i, op);
				return PPCC_EINTERNAL;
			}
			if (ppcc_rank_times_at(&tt, i, &t0, &t1) < 0) {
				ppcc_error(d, NULL, "rank %d action %d cannot be "
					   "replayed", r, i);
				return PPCC_EINTERNAL;
			}
			if (!isfinite(t0) || !isfinite(t1) || t1 < t0) {
				ppcc_error(d, NULL,
					   "rank %d action %d has simulated times "
					   "%g .. %g ms",
					   r, i, t0, t1);
				return PPCC_EINTERNAL;
			}
		}
	}
	return 0;
}

static int emit_chrome_body(ppcc_jw *w, const ppcc_plan *p, ppcc_diag *d)
{
	const ppcc_schedule *s = &p->best.schedule;
	const ppcc_estimate *e = NULL;
	ppcc_estimate simulated;
	ppcc_lanes lanes = {0};
	ppcc_arena *a = NULL;
	int err;
	char label[32];

	if ((err = ppcc_emit_times(p, &e, &simulated, &a)) < 0)
		goto out;
	if ((err = check_plan(s, p->best.costs, e, d)) < 0 ||
	    (err = ppcc_lanes_build(&lanes, p->config, s, p->best.costs,
				    e)) < 0)
		goto out;

	ppcc_jw_raw(w, "{\"traceEvents\":[\n");
	for (int r = 0; r < s->n_ranks; r++) {
		snprintf(label, sizeof label, "rank %d", r);
		ppcc_jw_raw(w, r ? ",\n" : "");
		metadata(w, "process_name", r, 0, "name", label, 0);
		ppcc_jw_raw(w, ",\n");
		metadata(w, "process_sort_index", r, 0, "sort_index", NULL, r);
		ppcc_jw_raw(w, ",\n");
		metadata(w, "thread_name", r, 0, "name", "compute", 0);
		ppcc_jw_raw(w, ",\n");
		metadata(w, "thread_name", r, 1, "name", "comm", 0);
		if (lanes.first[r] < lanes.first[r + 1]) {
			ppcc_jw_raw(w, ",\n");
			metadata(w, "thread_name", r, 2, "name", "dp reduce", 0);
		}
	}
	for (int r = 0; r < s->n_ranks && !w->err; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		ppcc_rank_times tt;
		if (rs->n_actions > 0 &&
		    ppcc_rank_times_begin(&tt, s, p->best.costs, e, r) < 0) {
			err = PPCC_EINTERNAL;
			goto out;
		}
		double pair_start = 0;
		long k = lanes.first[r];
		for (int i = 0; i < rs->n_actions && !w->err; i++) {
			const ppcc_action *act = &rs->actions[i];
			int chunk = stage_chunk_of(s, act->stage);
			double t0, t1;
			if (ppcc_rank_times_at(&tt, i, &t0, &t1) < 0) {
				err = PPCC_EINTERNAL;
				goto out;
			}
			if (ppcc_op_is_collective(act->op)) {
				/* at the lanes' times (ZeRO 2's are the
				 * iteration's, not the simulator's) */
				while (k < lanes.first[r + 1] &&
				       lanes.ops[k].action != i)
					k++;
				if (k == lanes.first[r + 1]) {
					err = PPCC_EINTERNAL;
					goto out;
				}
				t0 = lanes.ops[k].start_ms;
				t1 = lanes.ops[k].end_ms;
			}
			/* a pair spans its F and B, which nest inside it: its
			 * event follows the B's (the times replay forwards) */
			if (act->op == PPCC_OP_OVERLAP_F_B)
				continue;
			ppcc_jw_raw_n(w, ",\n", 2);
			action_event(w, act, r, chunk, t0, t1);
			if (i >= 1 && rs->actions[i - 1].op == PPCC_OP_OVERLAP_F_B)
				pair_start = t0;
			if (i >= 2 && rs->actions[i - 2].op == PPCC_OP_OVERLAP_F_B) {
				ppcc_jw_raw_n(w, ",\n", 2);
				action_event(w, &rs->actions[i - 2], r,
					     stage_chunk_of(s, rs->actions[i - 2].stage),
					     pair_start, t1);
			}
		}
		/* the collectives the schedule does not hold: ZeRO 2's
		 * reduce-scatters after each earlier backward, an older
		 * schedule's all-gather after the optimizer step */
		for (k = lanes.first[r]; k < lanes.first[r + 1] && !w->err; k++) {
			const ppcc_lane_op *o = &lanes.ops[k];
			if (o->action >= 0)
				continue;
			ppcc_action act = {.op = o->op, .stage = o->stage,
					   .mb = o->bucket, .peer = -1,
					   .bytes = o->bytes};
			ppcc_jw_raw_n(w, ",\n", 2);
			action_event(w, &act, r, stage_chunk_of(s, o->stage),
				     o->start_ms, o->end_ms);
		}
	}
	ppcc_jw_raw(w, "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":");
	if ((err = other_data(w, p, s, e)) < 0)
		goto out;
	ppcc_jw_raw(w, "}\n");
	err = ppcc_jw_flush(w);
out:
	ppcc_lanes_free(&lanes);
	ppcc_arena_free(a);
	return err;
}

int ppcc_emit_chrome(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o, ppcc_diag *d)
{
	(void)o;
	return ppcc_emit_jw(f, p, d, emit_chrome_body, "the Chrome trace");
}
