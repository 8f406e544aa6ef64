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

/* The op traits: name, compute or communication, direction, the stage
 * at the other end, collective. */
const ppcc_op_traits ppcc_op_table[PPCC_OP_COUNT] = {
	[PPCC_OP_F] = {"F", 1, 0, 0, 1, 0, 0},
	[PPCC_OP_B] = {"B", 1, 0, 0, 0, 0, 0},
	[PPCC_OP_I] = {"I", 1, 0, 0, 0, 0, 0},
	[PPCC_OP_W] = {"W", 1, 0, 0, 0, 0, 0},
	[PPCC_OP_SEND_F] = {"SEND_F", 0, 1, 1, 1, +1, 0},
	[PPCC_OP_RECV_F] = {"RECV_F", 0, 1, 0, 1, -1, 0},
	[PPCC_OP_SEND_B] = {"SEND_B", 0, 1, 1, 0, -1, 0},
	[PPCC_OP_RECV_B] = {"RECV_B", 0, 1, 0, 0, +1, 0},
	[PPCC_OP_OVERLAP_F_B] = {"OVERLAP_F_B", 0, 0, 0, 0, 0, 0},
	[PPCC_OP_REDUCE_GRAD] = {"REDUCE_GRAD", 0, 0, 0, 0, 0, 1},
	[PPCC_OP_REDUCE_SCATTER_GRAD] = {"REDUCE_SCATTER_GRAD", 0, 0, 0, 0, 0, 1},
	[PPCC_OP_ALL_GATHER_PARAM] = {"ALL_GATHER_PARAM", 0, 0, 0, 0, 0, 1},
	[PPCC_OP_UNSHARD_PARAM] = {"UNSHARD_PARAM", 0, 0, 0, 0, 0, 1},
};

const char *ppcc_op_name(int op)
{
	return op >= 0 && op < PPCC_OP_COUNT ? ppcc_op_table[op].name : "?";
}

int ppcc_op_parse(const char *name)
{
	for (int k = 0; k < PPCC_OP_COUNT; k++)
		if (strcmp(name, ppcc_op_table[k].name) == 0)
			return k;
	return -1;
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
