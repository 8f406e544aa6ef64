/*
 * emit/text.c - the plan for a person at a terminal.
 *
 * Six blocks: a one-line summary with the layout t x p x d (x cp); the
 * model's (ppcc_emit_model_summary, from the loader's figures); the
 * partition (which layers each stage holds, on which rank, its time per
 * microbatch and its memory); the estimate next to Megatron-LM's default
 * uniform split; the training iteration (throughput, MFU, where the time
 * goes, memory per device); and, when the plan is small enough to read,
 * a character timeline per rank.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ppcc.h"

#define TIMELINE_WIDTH 96
#define NAME_WIDTH 24

static double gib(double bytes)
{
	return bytes / (1024.0 * 1024.0 * 1024.0);
}

static double max_of(const double *v, int n)
{
	double m = 0;
	for (int i = 0; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

/* User text on one terminal line: control characters become '?', and
 * invisible or direction-changing ones <U+XXXX>. */
static void put_name(FILE *f, const char *s)
{
	while (*s) {
		uint32_t cp;
		size_t n = ppcc_invisible_at(s, &cp);
		if (n) {
			fprintf(f, "<U+%04X>", (unsigned)cp);
			s += n;
			continue;
		}
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
		s++;
	}
}

/* s into buf as put_name shows it (cut at size). */
static void visible_name(char *buf, size_t size, const char *s)
{
	size_t at = 0;
	while (*s && at + 1 < size) {
		uint32_t cp;
		size_t n = ppcc_invisible_at(s, &cp);
		if (n) {
			int k = snprintf(buf + at, size - at, "<U+%04X>",
					 (unsigned)cp);
			if (k < 0 || (size_t)k >= size - at)
				break;
			at += (size_t)k;
			s += n;
		} else {
			buf[at++] = *s++;
		}
	}
	buf[at] = '\0';
}

/* Layer range of a stage as names: "block..head" (cut to fit). */
static void layer_names(char *buf, size_t size, const ppcc_plan *p,
			const ppcc_stage_info *st)
{
	if (!p->layers) {
		buf[0] = '\0';
		return;
	}
	char a[NAME_WIDTH * 2 + 8], b[NAME_WIDTH * 2 + 8];
	visible_name(a, sizeof a, p->layers[st->first_layer].name);
	visible_name(b, sizeof b, p->layers[st->last_layer].name);
	int k = st->first_layer == st->last_layer || strcmp(a, b) == 0
		? snprintf(buf, size, "%s", a)
		: snprintf(buf, size, "%s..%s", a, b);
	if (k < 0)
		buf[0] = '\0'; /* longer is cut below */
	/* Names are user text: keep the table on one line each. */
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	if (strlen(buf) > NAME_WIDTH) {
		/* cut on a UTF-8 character boundary */
		size_t cut = NAME_WIDTH - 2;
		while (cut > 0 && ((unsigned char)buf[cut] & 0xc0) == 0x80)
			cut--;
		buf[cut] = '.';
		buf[cut + 1] = '.';
		buf[cut + 2] = '\0';
	}
}

static void print_partition(FILE *f, const ppcc_plan *p)
{
	const ppcc_plan_variant *v = &p->best;
	const ppcc_schedule *s = &v->schedule;
	char names[NAME_WIDTH + 8];

	const ppcc_step_result *sr = &p->search;
	const ppcc_config *cfg = p->config;
	if (p->has_own)
		fprintf(f, "partition (as given by %s)\n",
			cfg && cfg->pipeline.partition_locs ? "pipeline.partition"
							    : "--partition");
	else if (sr->simulations == 0)
		fprintf(f, "partition\n");
	else if (sr->exact)
		fprintf(f, "partition (least simulated step: exact, all %ld splits "
			"simulated)\n", sr->splits);
	else if (sr->step_ms - sr->lower_bound_ms < 0.0005 * sr->step_ms)
		fprintf(f, "partition (least simulated step: within 0.05%% of the "
			"proven lower bound %.3f ms; %ld simulation%s)\n",
			sr->lower_bound_ms, sr->simulations,
			sr->simulations == 1 ? "" : "s");
	else
		fprintf(f, "partition (least simulated step found by %ld simulation%s; "
			"not proven optimal: at most %.1f%% above the proven lower "
			"bound %.3f ms)\n", sr->simulations,
			sr->simulations == 1 ? "" : "s",
			100 * (sr->step_ms - sr->lower_bound_ms) / sr->step_ms,
			sr->lower_bound_ms);
	fprintf(f, "  stage rank  layers      count  %-*s  fwd ms    bwd ms    p2p ms    static GiB\n",
		NAME_WIDTH, "names");
	for (int i = 0; i < s->n_stages; i++) {
		const ppcc_stage_info *st = &v->stages[i];
		const ppcc_stage_cost *c = &v->costs[i];
		char range[32];
		snprintf(range, sizeof range, "%d-%d", st->first_layer, st->last_layer);
		layer_names(names, sizeof names, p, st);
		fprintf(f, "  %5d %4d  %-10s %6d  %-*s %9.3f %9.3f %9.3f %11.2f\n",
			st->stage, st->rank, range,
			st->last_layer - st->first_layer + 1, NAME_WIDTH, names,
			c->fwd_ms, c->bwd_ms, 2 * (c->send_f_ms + c->send_b_ms),
			gib(c->static_bytes));
	}
}

/* "ppcc's split is 3.2% faster than the uniform split"; below 0.05%
 * the step is called the same. */
static void print_compare(FILE *f, const char *what, const ppcc_plan_variant *a,
			  const char *than, const ppcc_plan_variant *b)
{
	const ppcc_estimate *ea = &a->estimate, *eb = &b->estimate;
	int same = 1;
	for (int s = 0; s < a->schedule.n_stages; s++)
		same &= a->stages[s].first_layer == b->stages[s].first_layer;
	if (same) {
		fprintf(f, "  %s is %s\n", what, than);
	} else if (eb->step_ms > 0) {
		double gain = (eb->step_ms - ea->step_ms) / eb->step_ms;
		if (fabs(gain) < 0.0005)
			fprintf(f, "  %s differs from %s; the step is the same "
				"(within 0.05%%)\n", what, than);
		else
			fprintf(f, "  %s is %.1f%% %s than %s\n", what,
				100 * fabs(gain), gain >= 0 ? "faster" : "slower", than);
	}
}

static void print_estimate(FILE *f, const ppcc_plan *p)
{
	const ppcc_plan_variant *col[3];
	const char *name[3];
	int fits[3];
	int k = 0;
	if (p->has_own) {
		col[k] = &p->best, name[k] = "given", fits[k++] = p->given_fits;
		col[k] = &p->own, name[k] = "ppcc", fits[k++] = 1;
	} else {
		col[k] = &p->best, name[k] = "ppcc", fits[k++] = 1;
	}
	col[k] = &p->uniform, name[k] = "uniform", fits[k++] = p->uniform_fits;
	const ppcc_estimate *eb = &p->best.estimate;
	int n = p->best.schedule.n_ranks;

	fprintf(f, "\nestimate            ");
	for (int i = 0; i < k; i++)
		fprintf(f, " %12s", name[i]);
	fprintf(f, "\n  step time (ms)     ");
	for (int i = 0; i < k; i++)
		fprintf(f, " %12.3f", col[i]->estimate.step_ms);
	fprintf(f, "\n  bottleneck (ms/mb) ");
	for (int i = 0; i < k; i++)
		fprintf(f, " %12.3f", (double)col[i]->bottleneck_ps / 1e9);
	fprintf(f, "\n  bubble (simulated) ");
	for (int i = 0; i < k; i++)
		fprintf(f, " %11.2f%%", 100 * col[i]->estimate.bubble_fraction);
	fputc('\n', f);
	if (isfinite(eb->bubble_analytic))
		fprintf(f, "  bubble (closed form, equal stages, free p2p) %.2f%%\n",
			100 * eb->bubble_analytic);
	fprintf(f, "  peak memory (GiB)  ");
	for (int i = 0; i < k; i++)
		fprintf(f, " %12.2f", gib(max_of(col[i]->estimate.peak_memory_bytes, n)));
	for (int i = 0; i < k; i++)
		if (!fits[i])
			fprintf(f, "  (%s does not fit)", name[i]);
	fputc('\n', f);
	if (p->has_own) {
		print_compare(f, "the given split", &p->best, "ppcc's split", &p->own);
		print_compare(f, "the given split", &p->best, "the uniform split", &p->uniform);
	} else {
		print_compare(f, "ppcc's split", &p->best, "the uniform split", &p->uniform);
	}

	fprintf(f, "\nper rank          busy ms      p2p ms      idle ms   peak GiB");
	fprintf(f, p->memory_cap_bytes ? "   of GiB\n" : "\n");
	for (int r = 0; r < n; r++) {
		fprintf(f, "  rank %-4d %12.3f %11.3f %12.3f %10.2f", r, eb->busy_ms[r],
			eb->comm_ms ? eb->comm_ms[r] : 0, eb->idle_ms[r], gib(eb->peak_memory_bytes[r]));
		if (p->memory_cap_bytes)
			fprintf(f, " %10.2f", gib(p->memory_cap_bytes[r]));
		fputc('\n', f);
	}
	if (p->memory_cap_bytes && p->config &&
	    p->config->cluster.headroom_bytes > 0)
		fprintf(f, "  of GiB: the device's memory less its reserve and "
			"the search's headroom, %.2f GiB, which the plan leaves "
			"free\n", gib(p->config->cluster.headroom_bytes));
}

static void breakdown_row(FILE *f, const char *what, double ms, double total)
{
	fprintf(f, "    %-34s %12.3f %7.2f%%\n", what, ms,
		total > 0 ? 100 * ms / total : 0);
}

void ppcc_time_band(char *buf, size_t n, const ppcc_cluster *cl, int fp8)
{
	const ppcc_device_preset *worst = NULL;
	if (fp8) {
		for (int g = 0; g < cl->n_groups; g++) {
			const ppcc_device_group *dg = &cl->groups[g];
			const ppcc_device_preset *pr = dg->preset;
			if (!dg->fp8_fitted || !pr || dg->efficiency_given) {
				snprintf(buf, n, "none stated: FP8 matrix "
					 "multiplies run at the device's "
					 "efficiency of its FP8 peak, which no "
					 "published run checks");
				return;
			}
			if (!worst || pr->fp8_held_error > worst->fp8_held_error)
				worst = pr;
		}
		snprintf(buf, n, "+/-%.1f%%  (%s in FP8: the mean error on the "
			 "%d published FP8 runs held out of its FP8 fit; at "
			 "most %.1f%%)", worst->fp8_held_error, worst->name,
			 worst->fp8_held, worst->fp8_held_worst);
		return;
	}
	for (int g = 0; g < cl->n_groups; g++) {
		const ppcc_device_group *dg = &cl->groups[g];
		const ppcc_device_preset *pr = dg->preset;
		if (dg->efficiency_given || !pr) {
			snprintf(buf, n, "none stated: the file's efficiency, "
				 "which no published run checks");
			return;
		}
		if (!pr->calibration) {
			snprintf(buf, n, "none stated: %s's efficiency is "
				 "uncalibrated", pr->name);
			return;
		}
		if (!worst || pr->held_error > worst->held_error)
			worst = pr;
	}
	if (worst)
		snprintf(buf, n, "+/-%.1f%%  (%s: the mean error on the %d "
			 "published runs held out of its fit; at most %.1f%%)",
			 worst->held_error, worst->name, worst->held_runs,
			 worst->held_worst);
	else
		snprintf(buf, n, "none stated");
}

static void print_iteration(FILE *f, const ppcc_plan *p)
{
	const ppcc_iteration *it = p->best.iteration;
	const ppcc_config *c = p->config;
	const ppcc_estimate *e = &p->best.estimate;
	int n = p->best.schedule.n_ranks;
	if (!it || !c)
		return;
	double total = it->iteration_ms;
	fprintf(f, "\niteration (ppcc's split; data parallel %d, global batch %d, ZeRO %d",
		it->data_parallel, it->global_batch_size, c->pipeline.zero);
	if (c->pipeline.zero >= 1 && ppcc_pipeline_zero_replicas(&c->pipeline) > 1)
		fprintf(f, " sharded over %d rank%s, %d replicas of each shard",
			ppcc_pipeline_zero_ranks(&c->pipeline),
			ppcc_pipeline_zero_ranks(&c->pipeline) == 1 ? "" : "s",
			ppcc_pipeline_zero_replicas(&c->pipeline));
	if (c->pipeline.moments_bf16)
		fputs(", Adam's moments in bf16", f);
	fputs(")\n", f);
	fprintf(f, "  iteration time (ms)         %12.3f\n", it->iteration_ms);
	char band[256];
	ppcc_time_band(band, sizeof band, &c->cluster,
		       c->model.transformer && c->model.transformer->fp8);
	fprintf(f, "  uncertainty                 %s\n", band);
	if (c->model.seq_len > 0)
		fprintf(f, "  tokens per second           %12.1f\n", it->tokens_per_s);
	fprintf(f, "  model TFLOP/s per device    %12.2f  (no recomputation)\n",
		it->model_tflops_per_device);
	fprintf(f, "  hardware TFLOP/s per device %12.2f  (counting recomputation)\n",
		it->hardware_tflops_per_device);
	fprintf(f, "  MFU                         %11.2f%%\n", 100 * it->mfu);
	fprintf(f, "  where the time goes (rank %d, the busiest)      ms        %%\n",
		it->rank);
	breakdown_row(f, "compute", it->compute_ms, total);
	breakdown_row(f, "recomputation", it->recompute_ms, total);
	breakdown_row(f, c->pipeline.overlap.tp_comm
		      ? "tensor-parallel collectives, exposed"
		      : "tensor-parallel collectives", it->tp_comm_ms, total);
	if (c->pipeline.context_parallel > 1)
		breakdown_row(f, "context-parallel exchange, exposed",
			      it->cp_comm_ms, total);
	double share = ppcc_cost_ep_hidden_share(c, c->pipeline.kind);
	if (c->model.transformer && c->model.transformer->moe.experts > 0)
		breakdown_row(f, share > 0 ? "expert all-to-all, exposed"
			      : "expert all-to-all", it->ep_comm_ms, total);
	if (c->pipeline.zero == 3)
		breakdown_row(f, "ZeRO-3 parameter gathers, exposed",
			      it->zero3_comm_ms, total);
	breakdown_row(f, "pipeline p2p", it->p2p_ms, total);
	breakdown_row(f, "bubble", it->bubble_ms, total);
	breakdown_row(f, "data-parallel communication, exposed",
		      it->dp_exposed_ms, total);
	breakdown_row(f, "optimizer step", it->optimizer_ms, total);
	if (it->dp_comm_ms > 0)
		fprintf(f, "  gradient reduction: %ld %s (buckets of "
			"%.1f MB), %.3f ms per rank at most, %.3f ms (%.1f%%) "
			"of it within the pipeline's step\n", it->dp_reductions,
			c->pipeline.zero >= 1 ? "REDUCE_SCATTER_GRAD" : "REDUCE_GRAD",
			ppcc_dp_bucket_bytes(&c->pipeline) / 1e6,
			it->dp_comm_ms, it->dp_hidden_ms,
			100 * it->dp_hidden_ms / it->dp_comm_ms);
	if (share > 0)
		fprintf(f, "  expert all-to-all: %.3f ms on rank %d, %.3f ms "
			"of it hidden behind the other half of %s's "
			"overlapped pairs (communication takes %.1f%% of the "
			"SMs meanwhile)\n", it->ep_comm_ms + it->ep_hidden_ms,
			it->rank, it->ep_hidden_ms,
			ppcc_schedule_kind_name(c->pipeline.kind),
			100 * (1 - share));
	if (it->dp_gathers > 0 && c->pipeline.zero == 3)
		fprintf(f, "  parameter gather: %ld UNSHARD_PARAM, %.3f ms "
			"on the slowest rank's channel, %.3f ms exposed (the "
			"longest any rank's computes waited for their "
			"gathers; %.3f ms on rank %d, the busiest)\n",
			it->dp_gathers, it->dp_gather_ms,
			it->dp_gather_exposed_ms, it->zero3_comm_ms, it->rank);
	else if (it->dp_gathers > 0)
		fprintf(f, "  parameter gather: %ld ALL_GATHER_PARAM, %.3f ms "
			"on the slowest rank's channel from the step's start, "
			"%.3f ms exposed (the longest any rank's first "
			"computes of a stage waited for that stage's "
			"gathers)\n", it->dp_gathers, it->dp_gather_ms,
			it->dp_gather_exposed_ms);

	fprintf(f, "\nmemory per device at the peak (GiB)\n");
	fprintf(f, "  rank      weights  gradients  optimizer  activations     logits   reserved      total\n");
	for (int r = 0; r < n; r++) {
		double sum = it->weight_bytes[r] + it->grad_bytes[r] +
			     it->optimizer_bytes[r] + it->activation_bytes[r] +
			     it->logits_bytes[r] + it->reserved_bytes[r];
		fprintf(f, "  %-4d %12.2f %10.2f %10.2f %12.2f %10.2f %10.2f %10.2f\n",
			r, gib(it->weight_bytes[r]), gib(it->grad_bytes[r]),
			gib(it->optimizer_bytes[r]), gib(it->activation_bytes[r]),
			gib(it->logits_bytes[r]), gib(it->reserved_bytes[r]),
			gib(sum));
	}
	double fr = ppcc_memory_reserve_factor(c->pipeline.trainer);
	if (fr != 1)
		fprintf(f, "  as %s reports it: each column but reserved is the "
			"tensors x %.2f,\n  PyTorch's caching allocator's "
			"reservation over them (fitted: make fidelity)\n"
			"  uncertainty: at most %.1f%% off on the %d published "
			"torchtitan runs ppcc plans\n",
			ppcc_trainer_name(c->pipeline.trainer), fr,
			PPCC_TORCHTITAN_MEMORY_WORST_PCT,
			PPCC_TORCHTITAN_MEMORY_RUNS);
	else
		fprintf(f, "  uncertainty: none stated: no published %s run "
			"with a known layout gives its peak memory\n",
			c->pipeline.trainer == PPCC_TRAINER_DEEPSPEED
			? "DeepSpeed" : "Megatron-LM");
	(void)e;
}

/* One character per column: the compute action under the column's middle.
 * Forward shows the microbatch's last digit, backward a letter (a = 0,
 * b = 1, ... mod 26), idle a dot. */
static void print_timeline(FILE *f, const ppcc_plan *p)
{
	const ppcc_schedule *s = &p->best.schedule;
	const ppcc_estimate *e = &p->best.estimate;
	double step = e->step_ms;
	if (s->n_ranks > PPCC_TEXT_TIMELINE_RANKS || step <= 0)
		return;
	/* Readable only while a column is no longer than the shortest action.
	 * The times are replayed (ppcc_rank_times), once for this and once
	 * for the drawing. */
	double shortest = step;
	ppcc_rank_times tt;
	for (int r = 0; r < s->n_ranks; r++) {
		if (s->ranks[r].n_actions > 0 &&
		    ppcc_rank_times_begin(&tt, s, p->best.costs, e, r) < 0)
			return;
		for (int i = 0; i < s->ranks[r].n_actions; i++) {
			int op = s->ranks[r].actions[i].op;
			double t0, t1;
			if (ppcc_rank_times_at(&tt, i, &t0, &t1) < 0)
				return;
			double d = t1 - t0;
			if (op <= PPCC_OP_W && d > 0 && d < shortest)
				shortest = d;
		}
	}
	if (shortest < step / TIMELINE_WIDTH * 0.999)
		return;

	fprintf(f, "\ntimeline (one column = %.3f ms; digits: forward of microbatch "
		"mod 10, letters: backward, a = 0; dots: idle)\n",
		step / TIMELINE_WIDTH);
	for (int r = 0; r < s->n_ranks; r++) {
		char line[TIMELINE_WIDTH + 1];
		memset(line, '.', TIMELINE_WIDTH);
		line[TIMELINE_WIDTH] = '\0';
		const ppcc_rank_schedule *rs = &s->ranks[r];
		int at = 0;
		double t0 = 0, t1 = 0;
		if (rs->n_actions > 0 &&
		    (ppcc_rank_times_begin(&tt, s, p->best.costs, e, r) < 0 ||
		     ppcc_rank_times_at(&tt, 0, &t0, &t1) < 0))
			return;
		for (int c = 0; c < TIMELINE_WIDTH; c++) {
			double t = (c + 0.5) * step / TIMELINE_WIDTH;
			while (at < rs->n_actions &&
			       (rs->actions[at].op > PPCC_OP_W || t1 <= t)) {
				if (++at < rs->n_actions &&
				    ppcc_rank_times_at(&tt, at, &t0, &t1) < 0)
					return;
			}
			if (at < rs->n_actions && t0 <= t) {
				const ppcc_action *a = &rs->actions[at];
				line[c] = a->op == PPCC_OP_F ? (char)('0' + a->mb % 10)
					  : (char)('a' + a->mb % 26);
			}
		}
		fprintf(f, "  rank %-3d |%s|\n", r, line);
	}
}

/* The exact search's line: the best of the heuristic's orders and the
 * exact search's (both simulated), their gap, and how the search ended
 * (proven optimal, or the bound it proved and the MIP gap to it). */
static void print_exact(FILE *f, const ppcc_auto_report *o, int p, int m)
{
	const ppcc_exact_report *e = &o->exact;
	long pm = (long)p * m;
	if (e->status == PPCC_EXACT_NOT_RUN) {
		if (pm > o->exact_opt.max_pm)
			fprintf(f, "  exact search: not run (p x m = %ld, above %d)\n",
				pm, o->exact_opt.max_pm);
		else
			fprintf(f, "  exact search: not run (no order fits to start "
				"from)\n");
		return;
	}
	double exact = NAN;
	for (int i = 0; i < o->n; i++)
		if (o->candidates[i].exact)
			exact = o->candidates[i].step_ms;
	fprintf(f, "  exact search (p x m = %ld, %d binaries): ", pm, e->binaries);
	if (isfinite(o->heuristic_ms))
		fprintf(f, "heuristic %.3f ms, ", o->heuristic_ms);
	else
		fprintf(f, "no heuristic order fits, ");
	if (isfinite(exact)) {
		fprintf(f, "%s %.3f ms", e->status == PPCC_EXACT_OPTIMAL ? "exact"
			: "best found", exact);
		if (isfinite(o->heuristic_ms) && exact > 0)
			fprintf(f, " (gap %.2f%%)",
				100 * (o->heuristic_ms - exact) / exact);
	} else {
		fprintf(f, "no exact order");
	}
	switch (e->status) {
	case PPCC_EXACT_OPTIMAL:
		fprintf(f, ", proven optimal\n");
		break;
	default: {
		double inc = isfinite(exact) ? exact : e->warm_model_ms;
		fprintf(f, ", stopped %s: bound %.3f ms%s, MIP gap %.2f%%\n",
			e->status == PPCC_EXACT_TIME_LIMIT ? "at the time limit"
			: e->status == PPCC_EXACT_NODE_LIMIT ? "at the node budget"
			: "early", e->bound_ms,
			e->relaxed ? "" : " (per-rank work; the relaxation was not solved)",
			inc > 0 ? 100 * (inc - e->bound_ms) / inc : 0);
		break;
	}
	}
}

/* A kind and its chunks, as auto's table names it. */
static void auto_kind_name(char *buf, size_t n, int kind, int chunks)
{
	if (chunks > 1)
		snprintf(buf, n, "%s, %d chunks", ppcc_schedule_kind_name(kind), chunks);
	else
		snprintf(buf, n, "%s", ppcc_schedule_kind_name(kind));
}

/* The auto kind: each handcrafted kind's own plan, then the orders tried
 * on the fastest one-chunk plan's split, and which was written. */
static void print_auto(FILE *f, const ppcc_plan *p)
{
	const ppcc_plan_auto *au = p->auto_plan;
	const ppcc_schedule *s = &p->best.schedule;
	double f1b = NAN;
	char what[64];
	fprintf(f, "\nauto (the fastest simulated schedule whose peak fits every "
		"rank's memory)\n  %-42sstep ms\n", "planned as its own kind");
	for (int i = 0; i < au->n_kinds; i++) {
		const ppcc_auto_kind_result *k = &au->kinds[i];
		auto_kind_name(what, sizeof what, k->kind, k->chunks);
		fprintf(f, "    %-34s", what);
		if (k->fits)
			fprintf(f, " %12.3f\n", k->step_ms);
		else
			fprintf(f, "   does not fit\n");
		if (k->kind == PPCC_SCHED_1F1B && k->fits)
			f1b = k->step_ms;
	}
	const ppcc_auto_report *o = &au->orders;
	if (au->split_kind >= 0) {
		char on[64];
		snprintf(on, sizeof on, "on %s's split",
			 ppcc_schedule_kind_name(au->split_kind));
		fprintf(f, "  %-42sstep ms   peak GiB\n", on);
		int gathers = 0;
		for (int r = 0; p->best.estimate.dp_gather_ms && r < s->n_ranks; r++)
			gathers |= p->best.estimate.dp_gather_ms[r] > 0;
		if (gathers)
			fprintf(f, "    (each order alone, without the ZeRO "
				"%sparameter gathers the plans above "
				"wait for)\n", p->config && p->config->pipeline.zero == 3
				? "" : "prologue's ");
		for (int i = 0; i < o->n; i++) {
			const ppcc_auto_candidate *c = &o->candidates[i];
			if (c->exact)
				snprintf(what, sizeof what, "exact search (MILP)");
			else if (c->kind == PPCC_SCHED_AUTO)
				snprintf(what, sizeof what, "heuristic, cap %d, W %s",
					 c->cap, c->fill ? "in any gap" : "in gaps >= W");
			else
				snprintf(what, sizeof what, "%s",
					 ppcc_schedule_kind_name(c->kind));
			/* marked when it is what was written */
			fprintf(f, "  %c %-34s %12.3f %10.2f%s\n",
				i == o->chosen && c->kind == s->kind ? '*' : ' ',
				what, c->step_ms, gib(c->peak_bytes),
				c->fits ? "" : "  does not fit");
		}
		print_exact(f, o, s->n_ranks, s->n_microbatches);
	}
	double step = p->best.estimate.step_ms;
	int exact = o->chosen >= 0 && o->candidates[o->chosen].exact &&
		    au->chosen_kind == PPCC_SCHED_AUTO;
	auto_kind_name(what, sizeof what, au->chosen_kind, s->n_chunks);
	fprintf(f, "  written: %s, step %.3f ms", exact ? "the exact search's order"
		: au->chosen_kind == PPCC_SCHED_AUTO ? "the heuristic's order"
		: what, step);
	if (au->chosen_kind != PPCC_SCHED_AUTO && s->n_chunks == 1 &&
	    au->split_kind >= 0 && au->chosen_kind != au->split_kind)
		fprintf(f, " (on %s's split)", ppcc_schedule_kind_name(au->split_kind));
	if (isfinite(f1b) && f1b > 0)
		fprintf(f, ", %.1f%% %s than 1f1b's plan", 100 * fabs(f1b - step) / f1b,
			step <= f1b ? "faster" : "slower");
	fputc('\n', f);
}

void ppcc_emit_presets(FILE *f, const ppcc_cluster *c)
{
	for (int g = 0; g < c->n_groups; g++) {
		const ppcc_device_group *dg = &c->groups[g];
		const ppcc_device_preset *pr = dg->preset;
		if (!pr)
			continue;
		fprintf(f, "device %s", pr->name);
		if (c->n_groups > 1) {
			fputs(" (group ", f);
			ppcc_fput_visible(f, dg->name);
			fprintf(f, ", %d devices)", dg->count);
		}
		fprintf(f, ": %s, %g TFLOP/s dense BF16, %g GiB\n"
			"  efficiency %.2f", pr->label, dg->tflops,
			dg->memory_bytes / 1073741824.0, dg->efficiency);
		if (dg->efficiency_given)
			fputs(", the file's\n", f);
		else if (pr->calibration)
			fprintf(f, ", calibrated on %s: %.1f%% off on average "
				"(at most %.1f%%) on the %d runs held out of the "
				"fit\n", pr->calibration, pr->held_error,
				pr->held_worst, pr->held_runs);
		else
			fprintf(f, ", uncalibrated: %s; every figure below "
				"rests on it\n", PPCC_UNCALIBRATED_WHY);
	}
}

/* v as "70.55B", "262.1M" or "5120". */
static void count_text(char *buf, size_t n, double v)
{
	if (v >= 1e9)
		snprintf(buf, n, "%.2fB", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, n, "%.1fM", v / 1e6);
	else
		snprintf(buf, n, "%.0f", v);
}

/* v FLOPs as "451.2 GFLOP". */
static void flop_text(char *buf, size_t n, double v)
{
	static const char *const unit[] = {"", "K", "M", "G", "T", "P", "E"};
	int u = 0;
	while (u < 6 && v >= 1000) {
		v /= 1000;
		u++;
	}
	snprintf(buf, n, "%.*f %sFLOP", u ? 1 : 0, v, unit[u]);
}

/* The kernel device group dg runs attention on and its rate
 * (cost/compute.c), a line into line. */
static void attention_line(char *line, size_t size, const ppcc_config *c,
			   const ppcc_device_group *dg)
{
	static const char *const names[] = {"", "FlashAttention-2",
					     "cuDNN's fused attention"};
	const ppcc_transformer *t = c->model.transformer;
	const ppcc_device_preset *pr = dg->preset;
	int k = ppcc_cost_attention_kernel(c, dg);
	double rf, rb;
	int n;
	if (k == PPCC_ATTN_AUTO)
		n = snprintf(line, size, "  attention: the trainer's own "
			     "flash kernel, ");
	else
		n = snprintf(line, size, "  attention: %s (%s), ", names[k],
			     t->attention_kernel ? "as given"
			     : c->pipeline.trainer == PPCC_TRAINER_DEEPSPEED
			     ? "assumed: DeepSpeed leaves it to the model's "
			       "code" : "the trainer's choice");
	if (n < 0 || (size_t)n >= size)
		return;
	int cp = c->pipeline.context_parallel > 0
		 ? c->pipeline.context_parallel : 1;
	double len = (double)t->seq_len / cp, wf, wb;
	double w = t->sliding_window > 0 && t->sliding_window < len
		   ? t->sliding_window : 0;
	if (ppcc_cost_attention_rates(&rf, &rb, c, dg, len)) {
		int m = snprintf(line + n, size - n, "%.0f TFLOP/s forward and "
				 "%.0f backward a device at %.0f keys",
				 rf / 1e12, rb / 1e12, len);
		if (m > 0 && (size_t)(n + m) < size && w > 0 &&
		    ppcc_cost_attention_rates(&wf, &wb, c, dg, w))
			m += snprintf(line + n + m, size - n - m, " (%.0f and "
				      "%.0f in a window of %.0f)", wf / 1e12,
				      wb / 1e12, w);
		if (m > 0 && (size_t)(n + m) < size)
			snprintf(line + n + m, size - n - m, ", measured on "
				 "the %s\n", pr->attn_chip);
	} else if (pr && dg->tflops != pr->bf16) {
		snprintf(line + n, size - n, "at the matrix products' rate: "
			 "the file's peak is not the %s's\n", pr->name);
	} else {
		snprintf(line + n, size - n, "at the matrix products' rate: "
			 "none measured on %s\n", pr ? pr->name
			 : "a device without a preset");
	}
}

/* The attention's kernel and rate, a line a device group whose line no
 * group before it printed. */
static void attention_text(FILE *f, const ppcc_config *c)
{
	if (!c->model.transformer->flash_attention) {
		fputs("  attention: unfused, its s^2 scores at the matrix "
		      "products' rate\n", f);
		return;
	}
	for (int g = 0; g < c->cluster.n_groups; g++) {
		char line[320], seen[320];
		attention_line(line, sizeof line, c, &c->cluster.groups[g]);
		int dup = 0;
		for (int h = 0; h < g && !dup; h++) {
			attention_line(seen, sizeof seen, c,
				       &c->cluster.groups[h]);
			dup = strcmp(seen, line) == 0;
		}
		if (!dup)
			fputs(line, f);
	}
}

static const char *const recompute_words[] = {"none", "selective", "full"};

int ppcc_emit_model_summary(FILE *f, const ppcc_plan *p, int winner)
{
	const ppcc_config *c = p->config;
	const ppcc_schedule *s = &p->best.schedule;
	if (!c || !p->layers || !p->best.stages)
		return 0;
	const ppcc_transformer *t = c->model.transformer;
	double fwd = 0, bwd = 0, recompute = 0, params = 0;
	for (int l = 0; l < p->n_layers; l++) {
		fwd += p->layers[l].fwd_flops;
		bwd += p->layers[l].bwd_flops;
		recompute += p->layers[l].recompute_flops;
		params += p->layers[l].params;
	}
	/* what each pipeline rank's stages hold, as the ranks keep it (a
	 * tied embedding on both ends) */
	double *rank = ppcc_calloc((size_t)s->n_ranks, sizeof *rank);
	double lo = 0, hi = 0;
	int have = rank != NULL;
	if (!rank && s->n_ranks > 0)
		return PPCC_ENOMEM;
	if (rank) {
		for (int i = 0; i < s->n_stages; i++) {
			const ppcc_stage_info *st = &p->best.stages[i];
			for (int l = st->first_layer; l <= st->last_layer; l++)
				rank[st->rank] += p->layers[l].params;
		}
		lo = hi = rank[0];
		for (int r = 1; r < s->n_ranks; r++) {
			lo = rank[r] < lo ? rank[r] : lo;
			hi = rank[r] > hi ? rank[r] : hi;
		}
		ppcc_free(rank);
	}
	char a[32], b[32], x[32], y[32];
	count_text(a, sizeof a, t ? ppcc_transformer_params(t) : params);
	if (!t && params <= 0)
		fprintf(f, "model: %d layers, no parameters given", p->n_layers);
	else
		fprintf(f, "model: %s parameters%s", a, t ? "" : " in the layers");
	count_text(a, sizeof a, lo);
	count_text(b, sizeof b, hi);
	if (have && params > 0 && s->n_ranks > 1)
		fprintf(f, "; %s %d pipeline ranks hold %s to %s each, before "
			"tensor%s parallelism\n", winner ? "the winner's" : "its",
			s->n_ranks, a, b, t && t->moe.experts > 0
			? " and expert" : "");
	else
		fputc('\n', f);
	if (!t || c->model.seq_len <= 0) {
		flop_text(a, sizeof a, fwd + bwd);
		flop_text(b, sizeof b, fwd);
		fprintf(f, "  a microbatch: %s forward and backward (%s forward)",
			a, b);
		if (recompute > 0) {
			flop_text(x, sizeof x, recompute);
			fprintf(f, ", %s of it recompute", x);
		}
		fputs(", as the layers give them\n", f);
		return 0;
	}
	double tokens = (double)c->model.micro_batch_size * c->model.seq_len;
	double active = ppcc_transformer_active_params(t);
	flop_text(a, sizeof a, (fwd + bwd - recompute) / tokens);
	flop_text(b, sizeof b, 6.0 * active);
	fprintf(f, "  FLOPs a token: %s forward and backward with attention's "
		"scores (%d tokens%s), 6 x %sparameters %s; %s", a,
		c->model.seq_len, t->flash_attention ? ", causal" : "",
		t->moe.experts > 0 ? "active " : "", b,
		winner ? "the winner's " : "");
	/* the modules, where the file named them */
	char m[128] = "";
	if (t->recompute == PPCC_RECOMPUTE_SELECTIVE &&
	    t->recompute_modules_loc.file)
		ppcc_recompute_modules_text(m, sizeof m, t->recompute_modules,
					    ", ");
	if (recompute > 0) {
		flop_text(x, sizeof x, recompute / tokens);
		fprintf(f, "recompute (%s%s%s) adds %s\n",
			recompute_words[t->recompute], *m ? ": " : "", m, x);
	} else if (*m) {
		fprintf(f, "recompute (selective: %s) adds no products, only "
			"kernels\n", m);
	} else {
		fputs("recompute: none\n", f);
	}
	ppcc_transformer_split sp;
	ppcc_transformer_split_of(&sp, t);
	double per = fwd / tokens;
	double other = per - sp.projections - sp.scores - sp.mlp;
	fprintf(f, "  forward: attention %.1f%% (projections %.1f%%, scores "
		"%.1f%%), MLP %.1f%%, %s %.1f%%\n",
		100 * (sp.projections + sp.scores) / per,
		100 * sp.projections / per, 100 * sp.scores / per,
		100 * sp.mlp / per, t->mtp_layers > 0
		? "output layer and multi-token prediction" : "output layer",
		100 * (other > 0 ? other : 0) / per);
	attention_text(f, c);
	if (t->moe.experts > 0) {
		count_text(a, sizeof a, active);
		count_text(x, sizeof x, sp.routed_params);
		count_text(y, sizeof y, sp.shared_params);
		char g[48] = "";
		if (t->moe.groups > 0)
			snprintf(g, sizeof g, ", from %d of %d group%s",
				 t->moe.group_topk, t->moe.groups,
				 t->moe.groups == 1 ? "" : "s");
		fprintf(f, "  mixture of experts: %s parameters active a token; "
			"routed experts %s (%d of %d a token%s), %s%s\n", a, x,
			t->moe.top_k, t->moe.experts, g, sp.shared_params > 0
			? "shared experts " : "no shared experts",
			sp.shared_params > 0 ? y : "");
	}
	return 0;
}

static int emit_text_body(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o)
{
	const ppcc_schedule *s = &p->best.schedule;
	const ppcc_config *c = p->config;

	fprintf(f, "ppcc %s: ", PPCC_VERSION_STRING);
	put_name(f, p->model_name);
	fprintf(f, ", %s, %d stages", ppcc_schedule_kind_name(s->kind), s->n_ranks);
	if (s->n_chunks > 1)
		fprintf(f, " x %d chunks", s->n_chunks);
	fprintf(f, ", %d microbatches, %d layers", s->n_microbatches, p->n_layers);
	if (c) {
		const ppcc_pipeline *pl = &c->pipeline;
		long long used = (long long)pl->tensor_parallel * s->n_ranks *
				 pl->data_parallel * pl->context_parallel;
		fprintf(f, ", t x p x d%s = %d x %d x %d",
			pl->context_parallel > 1 ? " x cp" : "",
			pl->tensor_parallel, s->n_ranks, pl->data_parallel);
		if (pl->context_parallel > 1)
			fprintf(f, " x %d", pl->context_parallel);
		fprintf(f, " = %lld", used);
		if (used != c->cluster.devices)
			fprintf(f, " of %d", c->cluster.devices);
		fprintf(f, " devices (");
		for (int g = 0; g < c->cluster.n_groups; g++) {
			fprintf(f, "%s%d x ", g ? " + " : "", c->cluster.groups[g].count);
			put_name(f, c->cluster.groups[g].name);
		}
		fputc(')', f);
		fputc('\n', f);
		ppcc_emit_presets(f, &c->cluster);
		if (!o->model_summary_shown &&
		    ppcc_emit_model_summary(f, p, 0) < 0)
			return PPCC_ENOMEM;
	}
	fputc('\n', f);
	print_partition(f, p);
	if (p->has_uniform)
		print_estimate(f, p);
	if (p->auto_plan)
		print_auto(f, p);
	print_iteration(f, p);
	print_timeline(f, p);
	return ferror(f) ? PPCC_EIO : 0;
}

int ppcc_emit_text(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o)
{
	locale_t saved = ppcc_locale_enter();
	int err = emit_text_body(f, p, o);
	ppcc_locale_leave(saved);
	return err;
}
