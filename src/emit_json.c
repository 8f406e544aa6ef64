/*
 * emit_json.c - the plan as JSON (format "ppcc-schedule", version 1).
 *
 * Every value is encoded by jansson; the document is written piece by
 * piece, one action per line, so that memory stays flat however many
 * actions a plan has and golden files diff line by line.  Numbers are
 * finite (a missing closed form is null) and printed with 12 significant
 * digits; the same plan gives the same bytes in any locale.  The layout
 * is documented in ppcc(5).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "ppcc.h"

#define JSON_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(12) | JSON_ENCODE_ANY | \
	JSON_ENSURE_ASCII)

typedef struct json_out {
	FILE *f;
	int err;
} json_out;

/* Writes v (and takes it); NULL means allocation failed. */
static void put(json_out *o, json_t *v)
{
	if (!v) {
		o->err = PPCC_ENOMEM;
		return;
	}
	if (!o->err && json_dumpf(v, o->f, JSON_FLAGS) != 0)
		o->err = ferror(o->f) ? PPCC_EIO : PPCC_ENOMEM; /* or it could not allocate */
	json_decref(v);
}

static void raw(json_out *o, const char *s)
{
	if (!o->err && fputs(s, o->f) == EOF)
		o->err = PPCC_EIO;
}

static void key(json_out *o, const char *indent, const char *k)
{
	raw(o, indent);
	put(o, json_string(k));
	raw(o, ": ");
}

static json_t *real_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *num(double x)
{
	/* Whole numbers print as integers: byte counts stay exact. */
	if (isfinite(x) && x == floor(x) && fabs(x) < 9e15)
		return json_integer((json_int_t)x);
	return real_or_null(x);
}

static json_t *per_rank(const double *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; a && i < n; i++)
		if (json_array_append_new(a, num(v[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* json_pack reports failure by returning NULL, which put() turns into
 * PPCC_ENOMEM. */
static json_t *stage_json(const ppcc_stage_info *st, const ppcc_stage_cost *c)
{
	return json_pack("{s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:I, s:I, s:o, s:o, s:o, s:o}",
			 "stage", (int)st->stage, "rank", (int)st->rank,
			 "chunk", (int)st->chunk, "first_layer", (int)st->first_layer,
			 "last_layer", (int)st->last_layer,
			 "fwd_ms", num(c->fwd_ms), "bwd_ms", num(c->bwd_ms),
			 "recv_bytes", (json_int_t)st->recv_bytes,
			 "send_bytes", (json_int_t)st->send_bytes,
			 "send_f_ms", num(c->send_f_ms), "send_b_ms", num(c->send_b_ms),
			 "static_bytes", num(c->static_bytes),
			 "stash_bytes", num(c->stash_bytes));
}

static json_t *action_json(const ppcc_action *a, double start, double end)
{
	json_t *o = json_pack("{s:s, s:i, s:i}", "op", ppcc_op_name(a->op),
			      "stage", (int)a->stage, "mb", (int)a->mb);
	if (!o)
		return NULL;
	int bad = 0;
	if (a->op >= PPCC_OP_SEND_F) {
		bad |= json_object_set_new(o, "peer", json_integer(a->peer));
		bad |= json_object_set_new(o, "bytes", json_integer((json_int_t)a->bytes));
	}
	bad |= json_object_set_new(o, "start_ms", num(start));
	bad |= json_object_set_new(o, "end_ms", num(end));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static void variant_summary(json_out *o, const ppcc_plan_variant *v, int fits)
{
	const ppcc_estimate *e = &v->estimate;
	int p = v->schedule.n_ranks;
	double peak = 0;
	for (int r = 0; r < p; r++)
		if (e->peak_memory_bytes[r] > peak)
			peak = e->peak_memory_bytes[r];
	raw(o, "{");
	key(o, "", "step_ms");
	put(o, num(e->step_ms));
	key(o, ", ", "bottleneck_ms");
	put(o, num((double)v->bottleneck_ps / 1e9));
	key(o, ", ", "bubble_fraction");
	put(o, num(e->bubble_fraction));
	key(o, ", ", "max_peak_memory_bytes");
	put(o, num(peak));
	if (fits >= 0) {
		key(o, ", ", "fits");
		put(o, json_boolean(fits));
	}
	key(o, ", ", "first_layers");
	json_t *firsts = json_array();
	for (int s = 0; firsts && s < v->schedule.n_stages; s++)
		if (json_array_append_new(firsts, json_integer(v->stages[s].first_layer))) {
			json_decref(firsts);
			firsts = NULL;
		}
	put(o, firsts);
	raw(o, "}");
}

static int emit_json_body(FILE *f, const ppcc_plan *p, const ppcc_emit_options *opt,
		   ppcc_diag *d)
{
	json_out o = {.f = f};
	const ppcc_plan_variant *v = &p->best;

	const ppcc_schedule *s = &v->schedule;
	const ppcc_estimate *e = &v->estimate;
	char fp[32];

	raw(&o, "{\n");
	key(&o, "  ", "format");
	put(&o, json_string("ppcc-schedule"));
	key(&o, ",\n  ", "version");
	put(&o, json_integer(PPCC_SCHEDULE_VERSION));
	key(&o, ",\n  ", "generator");
	put(&o, json_string("ppcc " PPCC_VERSION_STRING));
	key(&o, ",\n  ", "model");
	put(&o, json_string(p->model_name ? p->model_name : ""));
	key(&o, ",\n  ", "schedule");
	put(&o, json_string(ppcc_schedule_kind_name(s->kind)));
	key(&o, ",\n  ", "stages");
	put(&o, json_integer(s->n_ranks));
	key(&o, ",\n  ", "chunks");
	put(&o, json_integer(s->n_chunks));
	key(&o, ",\n  ", "virtual_stages");
	put(&o, json_integer(s->n_stages));
	key(&o, ",\n  ", "microbatches");
	put(&o, json_integer(s->n_microbatches));
	snprintf(fp, sizeof fp, "%016" PRIx64, s->fingerprint);
	key(&o, ",\n  ", "fingerprint");
	put(&o, json_string(fp));

	key(&o, ",\n  ", "layers");
	if (p->layers) {
		raw(&o, "[");
		for (int i = 0; i < p->n_layers; i++) {
			raw(&o, i ? ", " : "");
			put(&o, json_stringn(p->layers[i].name,
						     strlen(p->layers[i].name)));
		}
		raw(&o, "]");
	} else {
		put(&o, json_integer(p->n_layers));
	}

	key(&o, ",\n  ", "partition");
	raw(&o, "[\n");
	for (int i = 0; i < s->n_stages; i++) {
		raw(&o, "    ");
		put(&o, stage_json(&v->stages[i], &v->costs[i]));
		raw(&o, i + 1 < s->n_stages ? ",\n" : "\n");
	}
	raw(&o, "  ]");

	key(&o, ",\n  ", "ranks");
	raw(&o, "[\n");
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		raw(&o, "    {");
		key(&o, "", "rank");
		put(&o, json_integer(rs->rank));
		key(&o, ", ", "busy_ms");
		put(&o, num(e->busy_ms[r]));
		if (e->comm_ms) {
			key(&o, ", ", "comm_ms");
			put(&o, num(e->comm_ms[r]));
		}
		key(&o, ", ", "idle_ms");
		put(&o, num(e->idle_ms[r]));
		key(&o, ", ", "peak_memory_bytes");
		put(&o, num(e->peak_memory_bytes[r]));
		key(&o, ", ", "actions");
		raw(&o, "[\n");
		for (int i = 0; i < rs->n_actions && !o.err; i++) {
			raw(&o, "      ");
			put(&o, action_json(&rs->actions[i], e->start_ms[r][i],
					    e->end_ms[r][i]));
			raw(&o, i + 1 < rs->n_actions ? ",\n" : "\n");
		}
		raw(&o, r + 1 < s->n_ranks ? "    ]},\n" : "    ]}\n");
	}
	raw(&o, "  ]");

	key(&o, ",\n  ", "estimate");
	raw(&o, "{");
	key(&o, "\n    ", "step_ms");
	put(&o, num(e->step_ms));
	key(&o, ",\n    ", "bottleneck_ms");
	put(&o, num((double)v->bottleneck_ps / 1e9));
	key(&o, ",\n    ", "bubble_fraction");
	put(&o, num(e->bubble_fraction));
	key(&o, ",\n    ", "bubble_fraction_analytic");
	put(&o, real_or_null(e->bubble_analytic));
	key(&o, ",\n    ", "busy_ms");
	put(&o, per_rank(e->busy_ms, s->n_ranks));
	if (e->comm_ms) {
		key(&o, ",\n    ", "comm_ms");
		put(&o, per_rank(e->comm_ms, s->n_ranks));
	}
	key(&o, ",\n    ", "idle_ms");
	put(&o, per_rank(e->idle_ms, s->n_ranks));
	key(&o, ",\n    ", "peak_memory_bytes");
	put(&o, per_rank(e->peak_memory_bytes, s->n_ranks));
	if (p->memory_cap_bytes) {
		key(&o, ",\n    ", "memory_cap_bytes");
		put(&o, per_rank(p->memory_cap_bytes, s->n_ranks));
	}
	raw(&o, "\n  }");

	if (p->has_uniform) {
		key(&o, ",\n  ", "baseline");
		raw(&o, "{");
		key(&o, "\n    ", "uniform");
		variant_summary(&o, &p->uniform, p->uniform_fits);
		key(&o, ",\n    ", "ppcc");
		variant_summary(&o, &p->best, -1);
		raw(&o, "\n  }");
	}
	raw(&o, "\n}\n");
	(void)opt;
	(void)d;
	/* A write error is the caller's to report: it knows the file. */
	return o.err;
}

int ppcc_emit_json(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o, ppcc_diag *d)
{
	locale_t saved = ppcc_locale_enter();
	int err = emit_json_body(f, p, o, d);
	ppcc_locale_leave(saved);
	return err;
}
