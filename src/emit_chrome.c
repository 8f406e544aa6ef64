/*
 * emit_chrome.c - the simulated step as a Chrome trace (Trace Event
 * Format JSON), for chrome://tracing and Perfetto.
 *
 * One process per pipeline rank (pid = rank, named "rank N"), thread 0
 * for compute and thread 1 for communication; every action is a complete
 * event (ph "X") whose ts and dur are the simulated start and duration in
 * microseconds, named like "F s2 mb3" or "SEND_F s2 mb3", with category
 * "compute" or "comm" and args {stage, mb, chunk, peer, bytes}.  The
 * model's name and the plan's figures go in otherData.
 *
 * Every value is encoded by jansson (strings escaped, numbers with 15
 * significant digits, keys in insertion order); the document is written
 * one event per line so that memory stays flat.  Only finite numbers are
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

#include <jansson.h>

#include "ppcc.h"

#define CHROME_JSON_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(15) | \
	JSON_ENSURE_ASCII)

typedef struct chrome_out {
	FILE *f;
	int err; /* the first failure: PPCC_ENOMEM or PPCC_EIO */
} chrome_out;

/* Writes v and drops it; NULL means an allocation failed. */
static void put(chrome_out *o, json_t *v)
{
	if (!v) {
		if (!o->err)
			o->err = PPCC_ENOMEM;
		return;
	}
	/* json_dumpf fails on a write error or when it cannot allocate */
	if (!o->err && json_dumpf(v, o->f, CHROME_JSON_FLAGS) != 0)
		o->err = ferror(o->f) ? PPCC_EIO : PPCC_ENOMEM;
	json_decref(v);
}

static void raw(chrome_out *o, const char *s)
{
	if (!o->err && fputs(s, o->f) == EOF)
		o->err = PPCC_EIO;
}

/* One element of traceEvents, on a line of its own. */
static void event(chrome_out *o, int *first, json_t *v)
{
	raw(o, *first ? "" : ",\n");
	*first = 0;
	put(o, v);
}

/* Sets obj[k] = v (taking v); marks obj bad on failure. */
static void set(json_t *obj, int *bad, const char *k, json_t *v)
{
	if (!v || json_object_set_new(obj, k, v) != 0)
		*bad = 1;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if none:
 * no overlong forms, surrogates or code points past U+10FFFF. */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
	if (s[0] < 0x80)
		return 1;
	size_t len;
	uint32_t cp, min;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2, cp = s[0] & 0x1f, min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3, cp = s[0] & 0x0f, min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4, cp = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* A JSON string of s, with U+FFFD for each byte that is not UTF-8. */
static json_t *utf8_string(const char *s)
{
	json_t *v = json_string(s);
	if (v)
		return v;
	size_t n = strlen(s), out = 0;
	char *fixed = ppcc_malloc(3 * n + 1);
	if (!fixed)
		return NULL;
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		size_t len = utf8_sequence(u + i, n - i);
		if (len) {
			memcpy(fixed + out, s + i, len);
			out += len, i += len;
		} else {
			memcpy(fixed + out, "\xef\xbf\xbd", 3);
			out += 3, i++;
		}
	}
	v = json_stringn(fixed, out);
	ppcc_free(fixed);
	return v;
}

static json_t *metadata(const char *name, int pid, int tid, const char *key,
			json_t *value)
{
	json_t *ev = json_object(), *args = json_object();
	int bad = !ev || !args;
	if (!bad) {
		set(ev, &bad, "name", json_string(name));
		set(ev, &bad, "ph", json_string("M"));
		set(ev, &bad, "pid", json_integer(pid));
		set(ev, &bad, "tid", json_integer(tid));
		set(args, &bad, key, value);
		value = NULL;
		set(ev, &bad, "args", args);
		args = NULL;
	}
	json_decref(value);
	json_decref(args);
	if (bad) {
		json_decref(ev);
		return NULL;
	}
	return ev;
}

static json_t *action_event(const ppcc_action *a, int rank, int chunk,
			    double start_ms, double end_ms)
{
	char name[64];
	int comm = a->op >= PPCC_OP_SEND_F;
	snprintf(name, sizeof name, "%s s%d mb%d", ppcc_op_name(a->op),
		 (int)a->stage, (int)a->mb);
	json_t *ev = json_object(), *args = json_object();
	int bad = !ev || !args;
	if (!bad) {
		set(ev, &bad, "name", json_string(name));
		set(ev, &bad, "cat", json_string(comm ? "comm" : "compute"));
		set(ev, &bad, "ph", json_string("X"));
		set(ev, &bad, "ts", json_real(start_ms * 1000.0));
		set(ev, &bad, "dur", json_real((end_ms - start_ms) * 1000.0));
		set(ev, &bad, "pid", json_integer(rank));
		set(ev, &bad, "tid", json_integer(comm));
		set(args, &bad, "stage", json_integer(a->stage));
		set(args, &bad, "mb", json_integer(a->mb));
		set(args, &bad, "chunk", json_integer(chunk));
		set(args, &bad, "peer", json_integer(a->peer));
		set(args, &bad, "bytes",
		    a->bytes <= (uint64_t)INT64_MAX
			    ? json_integer((json_int_t)a->bytes)
			    : json_real((double)a->bytes));
		set(ev, &bad, "args", args);
		args = NULL;
	}
	json_decref(args);
	if (bad) {
		json_decref(ev);
		return NULL;
	}
	return ev;
}

static json_t *other_data(const ppcc_plan *p, const ppcc_schedule *s,
			  const ppcc_estimate *e)
{
	char fp[32];
	snprintf(fp, sizeof fp, "%016" PRIx64, s->fingerprint);
	json_t *od = json_object();
	int bad = !od;
	if (!bad) {
		set(od, &bad, "generator", json_string("ppcc " PPCC_VERSION_STRING));
		set(od, &bad, "model", utf8_string(p->model_name ? p->model_name : ""));
		set(od, &bad, "schedule", json_string(ppcc_schedule_kind_name(s->kind)));
		set(od, &bad, "ranks", json_integer(s->n_ranks));
		set(od, &bad, "chunks", json_integer(s->n_chunks));
		set(od, &bad, "virtual_stages", json_integer(s->n_stages));
		set(od, &bad, "microbatches", json_integer(s->n_microbatches));
		set(od, &bad, "fingerprint", json_string(fp));
		if (isfinite(e->step_ms))
			set(od, &bad, "step_ms", json_real(e->step_ms));
		if (isfinite(e->bubble_fraction))
			set(od, &bad, "bubble_fraction", json_real(e->bubble_fraction));
		if (isfinite(e->bubble_analytic))
			set(od, &bad, "bubble_fraction_analytic",
			    json_real(e->bubble_analytic));
	}
	if (bad) {
		json_decref(od);
		return NULL;
	}
	return od;
}

/* The shape and the times the events are made of, checked. */
static int check_plan(const ppcc_schedule *s, const ppcc_estimate *e,
		      ppcc_diag *d)
{
	if (s->n_ranks < 1 || !s->ranks || !e->start_ms || !e->end_ms) {
		ppcc_error(d, NULL, "the plan has no simulated schedule to trace");
		return PPCC_EINTERNAL;
	}
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		if (rs->n_actions < 0 ||
		    (rs->n_actions > 0 && (!rs->actions || !e->start_ms[r] ||
					   !e->end_ms[r]))) {
			ppcc_error(d, NULL, "rank %d has no action list or times", r);
			return PPCC_EINTERNAL;
		}
		for (int i = 0; i < rs->n_actions; i++) {
			double t0 = e->start_ms[r][i], t1 = e->end_ms[r][i];
			int op = rs->actions[i].op;
			if (op < 0 || op >= PPCC_OP_COUNT) {
				ppcc_error(d, NULL, "rank %d action %d has unknown op %d",
					   r, i, op);
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

static int emit_chrome_body(FILE *f, const ppcc_plan *p, const ppcc_emit_options *opt,
		     ppcc_diag *d)
{
	ppcc_diag quiet = {0};
	chrome_out o = {.f = f};
	const ppcc_schedule *s = &p->best.schedule;
	const ppcc_estimate *e = &p->best.estimate;
	ppcc_estimate simulated;
	ppcc_arena *a = NULL;
	int err;
	char label[32];

	(void)opt;
	if (!d)
		d = &quiet;
	if (!e->start_ms && p->best.costs && s->ranks) {
		if (!(a = ppcc_arena_new())) {
			err = PPCC_ENOMEM;
			goto out;
		}
		if ((err = ppcc_simulate(&simulated, a, s, p->best.costs)) < 0)
			goto out;
		e = &simulated;
	}
	if ((err = check_plan(s, e, d)) < 0)
		goto out;

	raw(&o, "{\"traceEvents\":[\n");
	int first = 1;
	for (int r = 0; r < s->n_ranks; r++) {
		snprintf(label, sizeof label, "rank %d", r);
		event(&o, &first, metadata("process_name", r, 0, "name",
					   json_string(label)));
		event(&o, &first, metadata("process_sort_index", r, 0,
					   "sort_index", json_integer(r)));
		event(&o, &first, metadata("thread_name", r, 0, "name",
					   json_string("compute")));
		event(&o, &first, metadata("thread_name", r, 1, "name",
					   json_string("comm")));
	}
	for (int r = 0; r < s->n_ranks && !o.err; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		for (int i = 0; i < rs->n_actions && !o.err; i++) {
			const ppcc_action *act = &rs->actions[i];
			int chunk = s->stages && act->stage >= 0 &&
						    act->stage < s->n_stages
					    ? s->stages[act->stage].chunk
					    : act->stage / s->n_ranks;
			event(&o, &first, action_event(act, r, chunk,
						       e->start_ms[r][i],
						       e->end_ms[r][i]));
		}
	}
	raw(&o, "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":");
	put(&o, other_data(p, s, e));
	raw(&o, "}\n");
	err = o.err;
out:
	ppcc_arena_free(a);
	if (err == PPCC_ENOMEM)
		ppcc_error(d, NULL, "out of memory writing the Chrome trace");
	if (err == PPCC_EIO || (!err && ferror(f))) {
		ppcc_error(d, NULL, "cannot write the Chrome trace");
		err = PPCC_EIO;
	}
	return err;
}

int ppcc_emit_chrome(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o, ppcc_diag *d)
{
	locale_t saved = ppcc_locale_enter();
	int err = emit_chrome_body(f, p, o, d);
	ppcc_locale_leave(saved);
	return err;
}
