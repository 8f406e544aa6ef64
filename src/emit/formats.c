/*
 * emit/formats.c - the output formats, one row each: the name -f takes,
 * the emitter, what the plan must keep for it, its output's size for the
 * budget, and what ppcc search and Graphviz need to know of it.
 *
 * The row of a format is ppcc_formats[format]: the command line's -f,
 * its --help and its "unknown format" error, ppcc search -f, the
 * library's ppcc_compile_file, the budget's admission and the emit
 * dispatch all read this table, so a format is added here and in its own
 * emitter's file.  A trainer's row `reports`: the command line then says
 * on standard error what configuration the file holds
 * (ppcc_format_summary), the same line for plan and search, with or
 * without -o.  The bytes per action were measured on
 * examples/tiny.yaml at 1,024 microbatches (20,480 actions); the text
 * report and the trainers' settings do not grow with the actions.
 */
#include <stdio.h>
#include <string.h>

#include "ppcc.h"

/* The text report takes no diagnostic sink. */
static int emit_text(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o,
		     ppcc_diag *d)
{
	(void)d;
	return ppcc_emit_text(f, p, o);
}

const ppcc_format_info ppcc_formats[] = {
	[PPCC_FMT_TEXT] = {"text", PPCC_FMT_TEXT, emit_text, 0, "text",
			   PPCC_TIMES_TIMELINE, NULL, 1, NULL, 0, 0, 0, NULL},
	[PPCC_FMT_JSON] = {"json", PPCC_FMT_JSON, ppcc_emit_json, 93, "JSON",
			   PPCC_TIMES_ALWAYS, NULL, 1, NULL, 0, 0, 0, NULL},
	[PPCC_FMT_DOT] = {"dot", PPCC_FMT_DOT, ppcc_emit_dot, 62, "DOT",
			  PPCC_TIMES_ALWAYS, NULL, 0, NULL, 0, 0, 0, NULL},
	[PPCC_FMT_SVG] = {"svg", PPCC_FMT_SVG, ppcc_emit_dot, 62, "SVG",
			  PPCC_TIMES_ALWAYS, NULL, 0, "svg", 0, 0, 0, NULL},
	[PPCC_FMT_PNG] = {"png", PPCC_FMT_PNG, ppcc_emit_dot, 62, "PNG",
			  PPCC_TIMES_ALWAYS, NULL, 0, "png", 1, 0, 0, NULL},
	[PPCC_FMT_HEADER] = {"header", PPCC_FMT_HEADER, ppcc_emit_header, 41,
			     "header", PPCC_TIMES_NEVER, NULL, 0, NULL, 0, 0, 0, NULL},
	[PPCC_FMT_TORCH_CSV] = {"torch-csv", PPCC_FMT_TORCH_CSV,
				ppcc_emit_torch_csv, 2.4, "CSV",
				PPCC_TIMES_NEVER, NULL, 0, NULL, 0, 1, 0, NULL},
	[PPCC_FMT_CHROME] = {"chrome", PPCC_FMT_CHROME, ppcc_emit_chrome, 167,
			     "Chrome trace", PPCC_TIMES_ALWAYS, NULL, 0, NULL, 0,
			     0, 0, NULL},
	[PPCC_FMT_MEGATRON] = {"megatron", PPCC_FMT_MEGATRON,
			       ppcc_emit_megatron, 0, "Megatron-LM",
			       PPCC_TIMES_NEVER, ppcc_megatron_admits, 1, NULL,
			       0, 1, 1, NULL},
	[PPCC_FMT_TORCHTITAN] = {"torchtitan", PPCC_FMT_TORCHTITAN,
				 ppcc_emit_torchtitan, 0, "torchtitan",
				 PPCC_TIMES_NEVER, ppcc_torchtitan_admits, 1,
				 NULL, 0, 1, 2, ppcc_torchtitan_model_refuses},
	[PPCC_FMT_TORCHTITAN_TOML] = {"torchtitan-toml",
				      PPCC_FMT_TORCHTITAN_TOML,
				      ppcc_emit_torchtitan_toml, 0,
				      "torchtitan TOML", PPCC_TIMES_NEVER,
				      ppcc_torchtitan_toml_admits, 1, NULL, 0, 1, 2,
				      ppcc_torchtitan_toml_model_refuses},
	[PPCC_FMT_DEEPSPEED] = {"deepspeed", PPCC_FMT_DEEPSPEED,
				ppcc_emit_deepspeed, 0, "DeepSpeed",
				PPCC_TIMES_NEVER, ppcc_deepspeed_admits, 1, NULL,
				0, 1, 3, NULL},
	[PPCC_FMT_MEGATRON_BRIDGE] = {"megatron-bridge",
				      PPCC_FMT_MEGATRON_BRIDGE,
				      ppcc_emit_megatron_bridge, 0,
				      "Megatron-Bridge", PPCC_TIMES_NEVER,
				      ppcc_megatron_admits, 1, NULL, 0, 1, 1, NULL},
	[PPCC_FMT_HTML] = {"html", PPCC_FMT_HTML, ppcc_emit_html, 36,
			   "HTML timeline", PPCC_TIMES_ALWAYS, NULL, 0, NULL, 0,
			   0, 0, NULL},
};

const int ppcc_n_formats = (int)(sizeof ppcc_formats / sizeof *ppcc_formats);

const ppcc_format_info *ppcc_format_of(int format)
{
	return format >= 0 && format < ppcc_n_formats ? &ppcc_formats[format]
						      : NULL;
}

const ppcc_format_info *ppcc_format_named(const char *name)
{
	for (int i = 0; name && i < ppcc_n_formats; i++)
		if (strcmp(name, ppcc_formats[i].name) == 0)
			return &ppcc_formats[i];
	return NULL;
}

size_t ppcc_format_list(char *buf, size_t size, int which, const char *sep,
			const char *last)
{
	int n = 0, k = 0;
	size_t len = 0;
	for (int i = 0; i < ppcc_n_formats; i++)
		n += which == PPCC_FORMATS_ALL || ppcc_formats[i].search;
	if (size > 0)
		buf[0] = '\0';
	for (int i = 0; i < ppcc_n_formats; i++) {
		if (which != PPCC_FORMATS_ALL && !ppcc_formats[i].search)
			continue;
		const char *s = k == 0 ? "" : k == n - 1 && last ? last : sep;
		int w = snprintf(len < size ? buf + len : NULL,
				 len < size ? size - len : 0, "%s%s", s,
				 ppcc_formats[i].name);
		len += w > 0 ? (size_t)w : 0;
		k++;
	}
	return len;
}

void ppcc_format_summary(char *buf, size_t size, const ppcc_plan *p)
{
	const ppcc_config *c = p->config;
	const ppcc_schedule *s = &p->best.schedule;
	const ppcc_estimate *est = &p->best.estimate;
	ppcc_search_entry e = {
		.t = c->pipeline.tensor_parallel, .p = s->n_ranks,
		.d = c->pipeline.data_parallel, .cp = c->pipeline.context_parallel,
		.v = s->n_chunks, .b = c->model.micro_batch_size,
		.m = s->n_microbatches,
		.recompute = c->model.transformer ? c->model.transformer->recompute
						  : PPCC_RECOMPUTE_NONE,
		.zero = c->pipeline.zero,
		.kind = p->auto_plan ? p->auto_plan->chosen_kind : s->kind,
	};
	char what[256];
	ppcc_search_entry_describe(what, sizeof what, &e);
	int peak_rank = 0;
	for (int r = 1; r < s->n_ranks; r++)
		if (est->peak_memory_bytes[r] > est->peak_memory_bytes[peak_rank])
			peak_rank = r;
	const ppcc_iteration *it = p->best.iteration;
	locale_t saved = ppcc_locale_enter();
	snprintf(buf, size, "%s: iteration %.1f ms, MFU %.1f%%, peak %.2f GiB "
		 "(rank %d)", what, it ? it->iteration_ms : 0,
		 it ? 100 * it->mfu : 0,
		 est->peak_memory_bytes[peak_rank] / (1024.0 * 1024.0 * 1024.0),
		 peak_rank);
	ppcc_locale_leave(saved);
}

int ppcc_emit_replays_times(int format, int n_ranks)
{
	const ppcc_format_info *f = ppcc_format_of(format);
	if (!f || f->times == PPCC_TIMES_ALWAYS)
		return 1;
	if (f->times == PPCC_TIMES_TIMELINE)
		return n_ranks <= PPCC_TEXT_TIMELINE_RANKS;
	return 0;
}
