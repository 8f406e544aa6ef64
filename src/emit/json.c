/*
 * emit/json.c - the plan as JSON (format "ppcc-schedule", version PPCC_SCHEDULE_VERSION).
 *
 * The document is streamed through json_write.h, one action per line, so
 * that memory stays flat however many actions a plan has and golden files
 * diff line by line; each action's times are replayed from the
 * simulation as it is written (ppcc_rank_times).  Numbers are finite (a
 * missing closed form is null), whole ones printed as integers and the
 * rest with 12 significant digits, and strings escaped to ASCII (\uXXXX
 * for anything else), as jansson printed them; the same plan
 * gives the same bytes in any locale.  The layout is documented in
 * ppcc(5).  Each part is one function, so a key is added in one place.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/json_write.h"
#include "ppcc.h"

/* jansson's JSON_REAL_PRECISION(12), which this format has always used */
#define JSON_DIGITS 12

static void key(ppcc_jw *w, const char *sep, const char *k)
{
	ppcc_jw_raw(w, sep);
	ppcc_jw_string(w, k);
	ppcc_jw_raw_n(w, ": ", 2);
}

static void real_or_null(ppcc_jw *w, double x)
{
	ppcc_jw_real(w, x, JSON_DIGITS);
}

/* Whole numbers print as integers. */
static void num(ppcc_jw *w, double x)
{
	if (isfinite(x) && x == floor(x) && fabs(x) < 9e15)
		ppcc_jw_int(w, (int64_t)x);
	else
		real_or_null(w, x);
}

/* A byte count: whole, or a fraction of a byte (a rank's bytes over its
 * t x cp devices) in the 17 digits that read back as the same double,
 * so that byte counts stay exact. */
static void bytes(ppcc_jw *w, double x)
{
	if (isfinite(x) && x == floor(x) && fabs(x) < 9e15)
		ppcc_jw_int(w, (int64_t)x);
	else
		ppcc_jw_real(w, x, 17);
}

static void per_rank_as(ppcc_jw *w, const double *v, int n,
			void (*put)(ppcc_jw *, double))
{
	ppcc_jw_raw_n(w, "[", 1);
	for (int i = 0; i < n; i++) {
		if (i)
			ppcc_jw_raw_n(w, ",", 1);
		put(w, v[i]);
	}
	ppcc_jw_raw_n(w, "]", 1);
}

static void per_rank(ppcc_jw *w, const double *v, int n)
{
	per_rank_as(w, v, n, num);
}

/* "name":value pairs of a compact object: the separator before all but
 * the first */
static void field(ppcc_jw *w, const char *quoted_key_colon, int first)
{
	if (!first)
		ppcc_jw_raw_n(w, ",", 1);
	ppcc_jw_raw(w, quoted_key_colon);
}

static void stage_json(ppcc_jw *w, const ppcc_stage_info *st,
		       const ppcc_stage_cost *c, int split)
{
	field(w, "{\"stage\":", 1);
	ppcc_jw_int(w, st->stage);
	field(w, "\"rank\":", 0);
	ppcc_jw_int(w, st->rank);
	field(w, "\"chunk\":", 0);
	ppcc_jw_int(w, st->chunk);
	field(w, "\"first_layer\":", 0);
	ppcc_jw_int(w, st->first_layer);
	field(w, "\"last_layer\":", 0);
	ppcc_jw_int(w, st->last_layer);
	field(w, "\"fwd_ms\":", 0);
	num(w, c->fwd_ms);
	field(w, "\"bwd_ms\":", 0);
	num(w, c->bwd_ms);
	if (split) {
		/* W's part of bwd_ms, where the schedule runs I and W apart */
		field(w, "\"bwd_weight_ms\":", 0);
		num(w, c->bwd_weight_ms);
	}
	field(w, "\"recv_bytes\":", 0);
	ppcc_jw_int(w, (int64_t)st->recv_bytes);
	field(w, "\"send_bytes\":", 0);
	ppcc_jw_int(w, (int64_t)st->send_bytes);
	field(w, "\"send_f_ms\":", 0);
	num(w, c->send_f_ms);
	field(w, "\"send_b_ms\":", 0);
	num(w, c->send_b_ms);
	field(w, "\"static_bytes\":", 0);
	bytes(w, c->static_bytes);
	field(w, "\"stash_bytes\":", 0);
	bytes(w, c->stash_bytes);
	if (split) {
		/* what W holds from I until it runs */
		field(w, "\"stash_weight_bytes\":", 0);
		bytes(w, c->stash_bytes - c->stash_input_bytes);
	}
	if (c->ep_hidden_share > 0) {
		/* what an overlapped pair may hide (ppcc_pair_ms) */
		field(w, "\"ep_fwd_ms\":", 0);
		num(w, c->ep_fwd_ms);
		field(w, "\"ep_bwd_ms\":", 0);
		num(w, c->ep_bwd_ms);
		field(w, "\"ep_hidden_share\":", 0);
		num(w, c->ep_hidden_share);
	}
	ppcc_jw_raw_n(w, "}", 1);
}

/* One action, on a line of its own.  The op names are plain ASCII
 * words, written as they are.  The collectives are written as the IR
 * holds them: the bucket in mb, peer -1, the bytes; the times of
 * REDUCE_GRAD and REDUCE_SCATTER_GRAD are their run on the rank's
 * communication channel, those of ALL_GATHER_PARAM its run in the
 * rank's prologue, on the same channel from time 0, those of
 * UNSHARD_PARAM their run on it from where the rank reaches them
 * (simulate.c). */
static void action_json(ppcc_jw *w, const ppcc_action *a, double start, double end)
{
	ppcc_jw_raw_n(w, "{\"op\":\"", 7);
	ppcc_jw_raw(w, ppcc_op_name(a->op));
	field(w, "\",\"stage\":", 1);
	ppcc_jw_int(w, a->stage);
	field(w, "\"mb\":", 0);
	ppcc_jw_int(w, a->mb);
	if (ppcc_op_is_comm(a->op) || ppcc_op_is_collective(a->op)) {
		field(w, "\"peer\":", 0);
		ppcc_jw_int(w, a->peer);
		field(w, "\"bytes\":", 0);
		ppcc_jw_int(w, (int64_t)a->bytes);
	}
	field(w, "\"start_ms\":", 0);
	num(w, start);
	field(w, "\"end_ms\":", 0);
	num(w, end);
	ppcc_jw_raw_n(w, "}", 1);
}

static void variant_summary(ppcc_jw *w, const ppcc_plan_variant *v, int fits)
{
	const ppcc_estimate *e = &v->estimate;
	int p = v->schedule.n_ranks;
	double peak = 0;
	for (int r = 0; r < p; r++)
		if (e->peak_memory_bytes[r] > peak)
			peak = e->peak_memory_bytes[r];
	ppcc_jw_raw(w, "{");
	key(w, "", "step_ms");
	num(w, e->step_ms);
	key(w, ", ", "bottleneck_ms");
	num(w, (double)v->bottleneck_ps / 1e9);
	key(w, ", ", "bubble_fraction");
	num(w, e->bubble_fraction);
	key(w, ", ", "max_peak_memory_bytes");
	bytes(w, peak);
	if (fits >= 0) {
		key(w, ", ", "fits");
		ppcc_jw_raw(w, fits ? "true" : "false");
	}
	key(w, ", ", "first_layers");
	ppcc_jw_raw(w, "[");
	for (int s = 0; s < v->schedule.n_stages; s++) {
		if (s)
			ppcc_jw_raw_n(w, ",", 1);
		ppcc_jw_int(w, v->stages[s].first_layer);
	}
	ppcc_jw_raw(w, "]}");
}

/* ---- the training iteration (iteration.c), one block at the end ----- */

static void iteration_json(ppcc_jw *w, const ppcc_plan *p)
{
	const ppcc_iteration *it = p->best.iteration;
	const ppcc_pipeline *pl = &p->config->pipeline;
	int n = p->best.schedule.n_ranks;
	key(w, ",\n  ", "iteration");
	ppcc_jw_raw(w, "{");
	key(w, "\n    ", "iteration_ms");
	num(w, it->iteration_ms);
	key(w, ",\n    ", "tokens_per_s");
	if (p->config->model.seq_len > 0)
		num(w, it->tokens_per_s);
	else
		ppcc_jw_raw(w, "null");
	key(w, ",\n    ", "model_tflops_per_device");
	num(w, it->model_tflops_per_device);
	key(w, ",\n    ", "hardware_tflops_per_device");
	num(w, it->hardware_tflops_per_device);
	key(w, ",\n    ", "mfu");
	num(w, it->mfu);
	key(w, ",\n    ", "model_flops");
	num(w, it->model_flops);
	key(w, ",\n    ", "hardware_flops");
	num(w, it->hardware_flops);
	key(w, ",\n    ", "tensor_parallel");
	ppcc_jw_int(w, pl->tensor_parallel);
	key(w, ",\n    ", "data_parallel");
	ppcc_jw_int(w, it->data_parallel);
	key(w, ",\n    ", "context_parallel");
	ppcc_jw_int(w, pl->context_parallel);
	key(w, ",\n    ", "zero");
	ppcc_jw_int(w, pl->zero);
	if (pl->zero >= 1 && ppcc_pipeline_zero_replicas(pl) > 1) {
		key(w, ",\n    ", "data_parallel_shard");
		ppcc_jw_int(w, pl->data_parallel_shard);
	}
	key(w, ",\n    ", "global_batch_size");
	ppcc_jw_int(w, it->global_batch_size);
	const ppcc_transformer *tf = p->config->model.transformer;
	if (tf) {
		/* the flash kernel planned; null where groups differ */
		int k = ppcc_cost_attention_kernel_all(p->config);
		key(w, ",\n    ", "attention_kernel");
		if (!tf->flash_attention)
			ppcc_jw_string(w, "unfused");
		else if (k == PPCC_ATTN_AUTO)
			ppcc_jw_raw(w, "null");
		else
			ppcc_jw_string(w, k == PPCC_ATTN_FA2 ? "fa2" : "cudnn");
	}
	key(w, ",\n    ", "breakdown_rank");
	ppcc_jw_int(w, it->rank);
	key(w, ",\n    ", "breakdown_ms");
	field(w, "{\"compute\":", 1);
	num(w, it->compute_ms);
	field(w, "\"recompute\":", 0);
	num(w, it->recompute_ms);
	field(w, "\"tp_comm\":", 0);
	num(w, it->tp_comm_ms);
	field(w, "\"cp_comm\":", 0);
	num(w, it->cp_comm_ms);
	field(w, "\"zero3_comm\":", 0);
	num(w, it->zero3_comm_ms);
	if (p->config && p->config->model.transformer &&
	    p->config->model.transformer->moe.experts > 0) {
		field(w, "\"ep_comm\":", 0);
		num(w, it->ep_comm_ms);
		field(w, "\"ep_hidden\":", 0);
		num(w, it->ep_hidden_ms);
	}
	field(w, "\"p2p\":", 0);
	num(w, it->p2p_ms);
	field(w, "\"bubble\":", 0);
	num(w, it->bubble_ms);
	field(w, "\"dp_exposed\":", 0);
	num(w, it->dp_exposed_ms);
	field(w, "\"optimizer\":", 0);
	num(w, it->optimizer_ms);
	ppcc_jw_raw_n(w, "}", 1);
	key(w, ",\n    ", "dp_comm_ms");
	num(w, it->dp_comm_ms);
	key(w, ",\n    ", "weight_bytes");
	per_rank_as(w, it->weight_bytes, n, bytes);
	key(w, ",\n    ", "grad_bytes");
	per_rank_as(w, it->grad_bytes, n, bytes);
	key(w, ",\n    ", "optimizer_bytes");
	per_rank_as(w, it->optimizer_bytes, n, bytes);
	key(w, ",\n    ", "activation_bytes");
	per_rank_as(w, it->activation_bytes, n, bytes);
	key(w, ",\n    ", "logits_bytes");
	per_rank_as(w, it->logits_bytes, n, bytes);
	key(w, ",\n    ", "reserved_bytes");
	per_rank_as(w, it->reserved_bytes, n, bytes);
	ppcc_jw_raw(w, "\n  }");
}

static int emit_json_body(ppcc_jw *w, const ppcc_plan *p)
{
	const ppcc_plan_variant *v = &p->best;
	const ppcc_schedule *s = &v->schedule;
	const ppcc_estimate *e = &v->estimate;
	char fp[32];

	ppcc_jw_raw(w, "{\n");
	key(w, "  ", "format");
	ppcc_jw_string(w, "ppcc-schedule");
	key(w, ",\n  ", "version");
	ppcc_jw_int(w, s->version);
	key(w, ",\n  ", "generator");
	ppcc_jw_string(w, "ppcc " PPCC_VERSION_STRING);
	key(w, ",\n  ", "model");
	ppcc_jw_string(w, p->model_name ? p->model_name : "");
	key(w, ",\n  ", "schedule");
	ppcc_jw_string(w, ppcc_schedule_kind_name(s->kind));
	key(w, ",\n  ", "stages");
	ppcc_jw_int(w, s->n_ranks);
	key(w, ",\n  ", "chunks");
	ppcc_jw_int(w, s->n_chunks);
	key(w, ",\n  ", "virtual_stages");
	ppcc_jw_int(w, s->n_stages);
	key(w, ",\n  ", "microbatches");
	ppcc_jw_int(w, s->n_microbatches);
	snprintf(fp, sizeof fp, "%016" PRIx64, s->fingerprint);
	key(w, ",\n  ", "fingerprint");
	ppcc_jw_string(w, fp);

	key(w, ",\n  ", "layers");
	if (p->layers) {
		ppcc_jw_raw(w, "[");
		for (int i = 0; i < p->n_layers; i++) {
			ppcc_jw_raw(w, i ? ", " : "");
			ppcc_jw_string(w, p->layers[i].name);
		}
		ppcc_jw_raw(w, "]");
	} else {
		ppcc_jw_int(w, p->n_layers);
	}

	const ppcc_sched_kind_info *ki = ppcc_sched_kind(s->kind);
	int split = ki && ki->split_backward;
	key(w, ",\n  ", "partition");
	ppcc_jw_raw(w, "[\n");
	for (int i = 0; i < s->n_stages; i++) {
		ppcc_jw_raw(w, "    ");
		stage_json(w, &v->stages[i], &v->costs[i], split);
		ppcc_jw_raw(w, i + 1 < s->n_stages ? ",\n" : "\n");
	}
	ppcc_jw_raw(w, "  ]");

	key(w, ",\n  ", "ranks");
	ppcc_jw_raw(w, "[\n");
	for (int r = 0; r < s->n_ranks && !w->err; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		ppcc_rank_times times;
		if (rs->n_actions > 0 &&
		    ppcc_rank_times_begin(&times, s, v->costs, e, r) < 0)
			return PPCC_EINTERNAL;
		ppcc_jw_raw(w, "    {");
		key(w, "", "rank");
		ppcc_jw_int(w, rs->rank);
		key(w, ", ", "busy_ms");
		num(w, e->busy_ms[r]);
		if (e->comm_ms) {
			key(w, ", ", "comm_ms");
			num(w, e->comm_ms[r]);
		}
		key(w, ", ", "idle_ms");
		num(w, e->idle_ms[r]);
		key(w, ", ", "peak_memory_bytes");
		bytes(w, e->peak_memory_bytes[r]);
		key(w, ", ", "actions");
		ppcc_jw_raw(w, "[\n");
		for (int i = 0; i < rs->n_actions && !w->err; i++) {
			double t0, t1;
			if (ppcc_rank_times_at(&times, i, &t0, &t1) < 0)
				return PPCC_EINTERNAL;
			ppcc_jw_raw_n(w, "      ", 6);
			action_json(w, &rs->actions[i], t0, t1);
			if (i + 1 < rs->n_actions)
				ppcc_jw_raw_n(w, ",\n", 2);
			else
				ppcc_jw_raw_n(w, "\n", 1);
		}
		ppcc_jw_raw(w, r + 1 < s->n_ranks ? "    ]},\n" : "    ]}\n");
	}
	ppcc_jw_raw(w, "  ]");

	key(w, ",\n  ", "estimate");
	ppcc_jw_raw(w, "{");
	key(w, "\n    ", "step_ms");
	num(w, e->step_ms);
	key(w, ",\n    ", "bottleneck_ms");
	num(w, (double)v->bottleneck_ps / 1e9);
	key(w, ",\n    ", "bubble_fraction");
	num(w, e->bubble_fraction);
	key(w, ",\n    ", "bubble_fraction_analytic");
	real_or_null(w, e->bubble_analytic);
	key(w, ",\n    ", "busy_ms");
	per_rank(w, e->busy_ms, s->n_ranks);
	if (e->comm_ms) {
		key(w, ",\n    ", "comm_ms");
		per_rank(w, e->comm_ms, s->n_ranks);
	}
	key(w, ",\n    ", "idle_ms");
	per_rank(w, e->idle_ms, s->n_ranks);
	key(w, ",\n    ", "peak_memory_bytes");
	per_rank_as(w, e->peak_memory_bytes, s->n_ranks, bytes);
	if (p->memory_cap_bytes) {
		key(w, ",\n    ", "memory_cap_bytes");
		per_rank_as(w, p->memory_cap_bytes, s->n_ranks, bytes);
	}
	ppcc_jw_raw(w, "\n  }");

	if (p->has_uniform) {
		key(w, ",\n  ", "baseline");
		ppcc_jw_raw(w, "{");
		key(w, "\n    ", "uniform");
		variant_summary(w, &p->uniform, p->uniform_fits);
		key(w, ",\n    ", "ppcc");
		variant_summary(w, &p->best, -1);
		ppcc_jw_raw(w, "\n  }");
	}
	if (p->best.iteration && p->config)
		iteration_json(w, p);
	ppcc_jw_raw(w, "\n}\n");
	return 0;
}

int ppcc_emit_times(const ppcc_plan *p, const ppcc_estimate **e,
		    ppcc_estimate *simulated, ppcc_arena **a)
{
	const ppcc_schedule *s = &p->best.schedule;
	*e = &p->best.estimate;
	*a = NULL;
	if ((*e)->start_ms || (*e)->send_ms || !p->best.costs || !s->ranks)
		return 0;
	if (!(*a = ppcc_arena_new()))
		return PPCC_ENOMEM;
	int err = ppcc_simulate_keep(simulated, *a, s, p->best.costs,
				     PPCC_SIM_SEND_TIMES);
	if (err < 0)
		return err;
	*e = simulated;
	return 0;
}

int ppcc_emit_jw(FILE *f, const ppcc_plan *p, ppcc_diag *d,
		 int (*body)(struct ppcc_jw *, const ppcc_plan *, ppcc_diag *),
		 const char *what)
{
	ppcc_diag quiet = {0};
	if (!d)
		d = &quiet;
	ppcc_jw *w = ppcc_malloc(sizeof *w);
	int err;
	if (!w) {
		err = PPCC_ENOMEM;
	} else {
		ppcc_jw_init(w, f);
		err = body(w, p, d);
		ppcc_free(w);
	}
	if (err == PPCC_ENOMEM)
		ppcc_error(d, NULL, "out of memory writing %s", what);
	if (err == PPCC_EIO || (!err && ferror(f))) {
		ppcc_error(d, NULL, "cannot write %s", what);
		err = PPCC_EIO;
	}
	return err;
}

int ppcc_emit_json(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o, ppcc_diag *d)
{
	ppcc_jw *w = ppcc_malloc(sizeof *w);
	(void)o;
	(void)d;
	if (!w)
		return PPCC_ENOMEM;
	ppcc_jw_init(w, f);
	int err = emit_json_body(w, p);
	if (ppcc_jw_flush(w) < 0 && !err)
		err = w->err;
	ppcc_free(w);
	/* A write error is the caller's to report: it knows the file. */
	return err;
}
