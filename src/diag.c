/*
 * diag.c - the diagnostics sink and the names shared by every phase.
 *
 * The library never prints: a phase formats its message here and the
 * sink's callback decides what to do with it (the CLI prints
 * `ppcc: FILE:LINE:COL: error: message`; tests collect the text).
 */
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ppcc.h"

void ppcc_diag_vreport(ppcc_diag *d, ppcc_severity sev, const ppcc_loc *loc,
		       const char *fmt, va_list ap)
{
	char msg[1024];
	vsnprintf(msg, sizeof msg, fmt, ap);
	if (sev == PPCC_SEV_ERROR)
		d->errors++;
	else if (sev == PPCC_SEV_WARNING)
		d->warnings++;
	if (d->fn)
		d->fn(sev, loc, msg, d->user);
}

void ppcc_diag_report(ppcc_diag *d, ppcc_severity sev, const ppcc_loc *loc,
		      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ppcc_diag_vreport(d, sev, loc, fmt, ap);
	va_end(ap);
}

/* printf and strtod follow the calling thread's locale; ppcc's files must
 * not.  uselocale() switches only this thread, so a trainer's own locale
 * and other threads are left alone. */
static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void c_locale_init(void)
{
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

locale_t ppcc_locale_enter(void)
{
	pthread_once(&c_locale_once, c_locale_init);
	return c_locale ? uselocale(c_locale) : (locale_t)0;
}

void ppcc_locale_leave(locale_t saved)
{
	if (saved)
		uselocale(saved);
}

const char *ppcc_status_str(int status)
{
	switch (status) {
	case PPCC_OK: return "success";
	case PPCC_ENOMEM: return "out of memory";
	case PPCC_EINPUT: return "bad input";
	case PPCC_EINFEASIBLE: return "no feasible plan";
	case PPCC_EIO: return "input/output error";
	case PPCC_EINTERNAL: return "internal error";
	}
	return "unknown status";
}

static const char *const kind_names[PPCC_SCHED_COUNT] = {
	[PPCC_SCHED_GPIPE] = "gpipe",
	[PPCC_SCHED_1F1B] = "1f1b",
	[PPCC_SCHED_INTERLEAVED] = "interleaved",
};

const char *ppcc_schedule_kind_name(int kind)
{
	return kind >= 0 && kind < PPCC_SCHED_COUNT ? kind_names[kind] : "?";
}

int ppcc_schedule_kind_parse(const char *name)
{
	for (int k = 0; k < PPCC_SCHED_COUNT; k++)
		if (strcmp(name, kind_names[k]) == 0)
			return k;
	return -1;
}

static const char *const op_names[PPCC_OP_COUNT] = {
	[PPCC_OP_F] = "F",           [PPCC_OP_B] = "B",
	[PPCC_OP_I] = "I",           [PPCC_OP_W] = "W",
	[PPCC_OP_SEND_F] = "SEND_F", [PPCC_OP_RECV_F] = "RECV_F",
	[PPCC_OP_SEND_B] = "SEND_B", [PPCC_OP_RECV_B] = "RECV_B",
};

const char *ppcc_op_name(int op)
{
	return op >= 0 && op < PPCC_OP_COUNT ? op_names[op] : "?";
}

int ppcc_op_parse(const char *name)
{
	for (int k = 0; k < PPCC_OP_COUNT; k++)
		if (strcmp(name, op_names[k]) == 0)
			return k;
	return -1;
}

double ppcc_bubble_closed_form(int kind, int ranks, int chunks,
			       int microbatches)
{
	double p = ranks, m = microbatches, v = chunks;
	switch (kind) {
	case PPCC_SCHED_GPIPE:
	case PPCC_SCHED_1F1B:
		return (p - 1) / (m + p - 1);
	case PPCC_SCHED_INTERLEAVED:
		return (p - 1) / (v * m + p - 1);
	}
	return NAN;
}

/* A 64-bit word hash over every field in a fixed order and width, so that
 * the same schedule hashes the same on every rank and from every source
 * (JSON, generated header, the compiler's own IR).  One multiply-xorshift
 * round per word: fast enough for millions of actions, and any change of a
 * field changes the result with overwhelming probability. */
static uint64_t mix(uint64_t h, uint64_t x)
{
	return ppcc_fingerprint_mix(h, x);
}

static uint64_t pair(int32_t a, int32_t b)
{
	return ppcc_fingerprint_pair(a, b);
}

uint64_t ppcc_fingerprint_head(const ppcc_schedule *s)
{
	uint64_t h = 0x70706363u; /* "ppcc" */
	h = mix(h, pair(s->version, s->kind));
	h = mix(h, pair(s->n_ranks, s->n_chunks));
	h = mix(h, pair(s->n_stages, s->n_microbatches));
	for (int i = 0; i < s->n_stages; i++) {
		const ppcc_stage_info *st = &s->stages[i];
		h = mix(h, pair(st->stage, st->rank));
		h = mix(h, pair(st->chunk, st->first_layer));
		h = mix(h, pair(st->last_layer, 0));
		h = mix(h, st->recv_bytes);
		h = mix(h, st->send_bytes);
	}
	return h;
}

uint64_t ppcc_schedule_fingerprint(const ppcc_schedule *s)
{
	uint64_t h = ppcc_fingerprint_head(s);
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		h = mix(h, pair(rs->rank, rs->n_actions));
		for (int i = 0; i < rs->n_actions; i++)
			h = ppcc_fingerprint_action(h, &rs->actions[i]);
	}
	return h;
}
