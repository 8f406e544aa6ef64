/*
 * compile.c - libppcc's public entry point: the phases `ppcc plan` runs
 * (load, defaults, check, budget, plan, emit), behind ppcc/compiler.h.
 */
#include <string.h>

#include "ppcc.h"
#include "ppcc/compiler.h"

static const char *const compile_formats[] = {
	[PPCC_FMT_TEXT] = "text",     [PPCC_FMT_JSON] = "json",
	[PPCC_FMT_DOT] = "dot",       [PPCC_FMT_SVG] = "svg",
	[PPCC_FMT_PNG] = "png",       [PPCC_FMT_HEADER] = "header",
	[PPCC_FMT_TORCH_CSV] = "torch-csv", [PPCC_FMT_CHROME] = "chrome",
};

typedef struct compile_sink {
	ppcc_compile_diag_fn fn;
	void *user;
} compile_sink;

static void compile_diag(ppcc_severity sev, const ppcc_loc *loc,
			 const char *msg, void *user)
{
	const compile_sink *k = user;
	int severity = sev == PPCC_SEV_ERROR ? 0 : sev == PPCC_SEV_WARNING ? 1 : 2;
	if (k->fn)
		k->fn(severity, loc ? loc->file : NULL, loc ? loc->line : 0,
		      loc ? loc->col : 0, msg, k->user);
}

static int compile_emit(FILE *f, const ppcc_plan *plan,
			const ppcc_emit_options *o, ppcc_diag *d)
{
	switch (o->format) {
	case PPCC_FMT_TEXT: return ppcc_emit_text(f, plan, o);
	case PPCC_FMT_JSON: return ppcc_emit_json(f, plan, o, d);
	case PPCC_FMT_DOT:
	case PPCC_FMT_SVG:
	case PPCC_FMT_PNG: return ppcc_emit_dot(f, plan, o, d);
	case PPCC_FMT_HEADER: return ppcc_emit_header(f, plan, o, d);
	case PPCC_FMT_TORCH_CSV: return ppcc_emit_torch_csv(f, plan, o, d);
	case PPCC_FMT_CHROME: return ppcc_emit_chrome(f, plan, o, d);
	}
	return PPCC_EINTERNAL;
}

int ppcc_compile_file(FILE *out, const char *model_path,
		      const ppcc_compile_options *opts)
{
	static const ppcc_compile_options defaults = PPCC_COMPILE_OPTIONS_INIT;
	const ppcc_compile_options *o = opts ? opts : &defaults;
	compile_sink sink = {o->version >= 1 ? o->diag : NULL, o->diag_user};
	ppcc_diag d = {.fn = compile_diag, .user = &sink};
	ppcc_emit_options emit = {0};
	ppcc_config cfg;
	ppcc_plan plan;
	int err;

	if (!out || !model_path || o->version < 1) {
		ppcc_error(&d, NULL, "ppcc_compile_file: %s",
			   o->version < 1 ? "options.version is not set"
					  : "no output stream or model file");
		return PPCC_EINPUT;
	}
	emit.format = -1;
	const char *format = o->format ? o->format : "text";
	for (int i = 0; i < (int)(sizeof compile_formats / sizeof *compile_formats); i++)
		if (strcmp(format, compile_formats[i]) == 0)
			emit.format = i;
	if (emit.format < 0) {
		ppcc_error(&d, NULL, "unknown format '%s'", format);
		return PPCC_EINPUT;
	}
	ppcc_arena *a = ppcc_arena_new();
	if (!a)
		return PPCC_ENOMEM;
	if ((err = ppcc_config_load(&cfg, a, model_path, o->cluster, &d)) < 0)
		goto out;
	ppcc_config_fill_defaults(&cfg);
	if ((err = ppcc_config_check(&cfg, &d)) < 0 ||
	    (err = ppcc_plan_budget_check(&cfg, emit.format, 0, &d)) < 0 ||
	    (err = ppcc_plan_build(&plan, a, &cfg, &d)) < 0 ||
	    (err = compile_emit(out, &plan, &emit, &d)) < 0)
		goto out;
	if (fflush(out) != 0 || ferror(out))
		err = PPCC_EIO;
out:
	ppcc_arena_free(a);
	return err;
}

const char *ppcc_version(void)
{
	return PPCC_VERSION_STRING;
}
