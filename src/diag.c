/*
 * diag.c - the diagnostics sink and the names shared by every phase.
 *
 * The library never prints: a phase formats its message here and the
 * sink's callback decides what to do with it (the CLI prints
 * `ppcc: FILE:LINE:COL: error: message`; tests collect the text).
 */
#include <math.h>
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

/* FNV-1a over every field in a fixed order and width, so that the same
 * schedule hashes the same on every rank and from every source (JSON,
 * generated header, the compiler's own IR). */
static uint64_t fnv(uint64_t h, uint64_t x)
{
	for (int i = 0; i < 8; i++) {
		h ^= (x >> (8 * i)) & 0xff;
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint64_t ppcc_schedule_fingerprint(const ppcc_schedule *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	h = fnv(h, (uint64_t)s->version);
	h = fnv(h, (uint64_t)s->kind);
	h = fnv(h, (uint64_t)s->n_ranks);
	h = fnv(h, (uint64_t)s->n_chunks);
	h = fnv(h, (uint64_t)s->n_stages);
	h = fnv(h, (uint64_t)s->n_microbatches);
	for (int i = 0; i < s->n_stages; i++) {
		const ppcc_stage_info *st = &s->stages[i];
		h = fnv(h, (uint64_t)st->stage);
		h = fnv(h, (uint64_t)st->rank);
		h = fnv(h, (uint64_t)st->chunk);
		h = fnv(h, (uint64_t)st->first_layer);
		h = fnv(h, (uint64_t)st->last_layer);
		h = fnv(h, st->recv_bytes);
		h = fnv(h, st->send_bytes);
	}
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		h = fnv(h, (uint64_t)rs->rank);
		h = fnv(h, (uint64_t)rs->n_actions);
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			h = fnv(h, (uint64_t)a->op);
			h = fnv(h, (uint64_t)a->stage);
			h = fnv(h, (uint64_t)a->mb);
			h = fnv(h, (uint64_t)(int64_t)a->peer);
			h = fnv(h, a->bytes);
		}
	}
	return h;
}
