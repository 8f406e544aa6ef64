/*
 * compile.c - the one plan driver and libppcc's public entry point.
 *
 * ppcc_compile_plan runs the phases `ppcc plan` runs (load, the command
 * line's settings, defaults, check, budget, plan; or, with --from-search,
 * a search's entry over the files it read) for the CLI and for
 * ppcc_compile_file (ppcc/compiler.h), which then writes the plan with
 * its format's emitter (emit/formats.c).  The library takes the memory
 * limit, threads and budget of ppcc plan's --memory-limit, --jobs,
 * --max-actions and --max-work from its options (version 2).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ppcc.h"
#include "ppcc/compiler.h"

static const ppcc_loc cmdline = {"<command line>", 0, 0};

static void set_override(int value, int *field, ppcc_loc *loc)
{
	if (value > 0) {
		*field = value;
		*loc = cmdline;
	}
}

/* --partition 13,12,12,...: layers per stage.  The count and the sum are
 * checked with the rest of the configuration. */
static int parse_partition(ppcc_pipeline *pl, ppcc_arena *a, const char *arg,
			   ppcc_diag *d)
{
	int n = 1;
	for (const char *c = arg; *c; c++)
		n += *c == ',';
	int *counts = ppcc_arena_alloc(a, (size_t)n, sizeof *counts);
	if (!counts)
		return PPCC_ENOMEM;
	const char *at = arg;
	for (int i = 0; i < n; i++) {
		const char *end = strchr(at, ',');
		size_t len = end ? (size_t)(end - at) : strlen(at);
		char buf[16];
		long v = -1;
		if (len > 0 && len < sizeof buf && at[0] >= '0' && at[0] <= '9') {
			char *stop;
			memcpy(buf, at, len);
			buf[len] = '\0';
			errno = 0;
			v = strtol(buf, &stop, 10);
			if (errno || *stop || v > PPCC_MAX_LAYERS)
				v = -1;
		}
		if (v == 0) {
			ppcc_error(d, &cmdline, "--partition: stage %d is empty; "
				   "every stage needs at least one layer", i);
			return PPCC_EINPUT;
		}
		if (v < 0) {
			ppcc_error(d, &cmdline, "--partition: entry %d ('%.*s') is "
				   "not a layer count from 1 to %d; expected a "
				   "comma-separated list such as 13,12,12", i,
				   (int)(len > 32 ? 32 : len), at, PPCC_MAX_LAYERS);
			return PPCC_EINPUT;
		}
		counts[i] = (int)v;
		at = end ? end + 1 : at + len;
	}
	pl->partition = counts;
	pl->n_partition = n;
	pl->partition_locs = NULL;
	pl->partition_loc = cmdline;
	return 0;
}

int ppcc_config_limit_memory(ppcc_config *cfg, ppcc_arena *a, double bytes)
{
	/* every device holds this much, less the cluster's reserve */
	int n = cfg->cluster.n_groups;
	ppcc_device_group *g = ppcc_arena_alloc(a, (size_t)n, sizeof *g);
	if (!g)
		return PPCC_ENOMEM;
	for (int i = 0; i < n; i++) {
		g[i] = cfg->cluster.groups[i];
		g[i].memory_bytes = bytes;
	}
	cfg->cluster.groups = g;
	cfg->cluster.memory_limit_bytes = bytes;
	return 0;
}

int ppcc_config_set_trainer(ppcc_config *cfg, ppcc_arena *a, int trainer,
			    ppcc_loc loc)
{
	ppcc_pipeline *pl = &cfg->pipeline;
	pl->trainer = trainer;
	pl->trainer_loc = loc;
	if (!cfg->model.transformer)
		return 0;
	ppcc_transformer *tf = ppcc_arena_alloc(a, 1, sizeof *tf);
	if (!tf)
		return PPCC_ENOMEM;
	*tf = *cfg->model.transformer;
	tf->trainer = trainer;
	cfg->model.transformer = tf;
	return ppcc_transformer_expand(&cfg->model.layers, &cfg->model.n_layers,
				       a, tf, cfg->model.transformer_loc);
}

int ppcc_config_use_trainer(ppcc_config *cfg, ppcc_arena *a,
			    const ppcc_format_info *fi, ppcc_diag *d)
{
	ppcc_pipeline *pl = &cfg->pipeline;
	int want = fi->trainer - 1;
	if (!fi->trainer || pl->trainer == want)
		return 0;
	if (pl->trainer_loc.file) {
		int option = pl->trainer_loc.line == 0;
		ppcc_error(d, &pl->trainer_loc, "%s %s, but -f %s writes %s's "
			   "settings, whose memory the plan would not count; "
			   "%s %s, or use -f for %s",
			   option ? "--trainer" : "pipeline.trainer:",
			   ppcc_trainer_name(pl->trainer), fi->name, fi->title,
			   option ? "give --trainer" : "name trainer:",
			   ppcc_trainer_name(want),
			   ppcc_trainer_name(pl->trainer));
		return PPCC_EINPUT;
	}
	return ppcc_config_set_trainer(cfg, a, want, (ppcc_loc){0});
}

/* An input file of the search, read again: the same bytes, or an error
 * at the JSON's record of it. */
static int same_input(const ppcc_search_pick *p, const char *what,
		      const char *file, const ppcc_loc *at, uint64_t was,
		      uint64_t now, ppcc_diag *d)
{
	if (was == now)
		return 0;
	ppcc_error(d, at, "the %s file %s changed since the search read it "
		   "(fingerprint %016llx, now %016llx): its entry %d would not "
		   "be the configuration the search simulated; search again",
		   what, file, (unsigned long long)was,
		   (unsigned long long)now, p->rank);
	return PPCC_EINPUT;
}

/* The model_text of a search's JSON, loaded: what the loader says of it
 * is at the JSON's model_text, the text having no lines of its own. */
typedef struct in_text {
	ppcc_diag *d;
	ppcc_loc at;
} in_text;

static void text_diag(ppcc_severity sev, const ppcc_loc *loc, const char *msg,
		      void *user)
{
	in_text *t = user;
	if (loc && loc->file && strcmp(loc->file, PPCC_COMMAND_LINE) == 0) {
		ppcc_diag_report(t->d, sev, &t->at, "model_text: %s", msg);
		return;
	}
	ppcc_diag_report(t->d, sev, loc, "%s", msg);
}

/* The configuration of a search's entry (r->from_search), as the search
 * planned it (search.c, evaluate): the files it read, its memory limit,
 * the entry's settings (ppcc_search_config). */
static int config_from_search(ppcc_config *cfg, ppcc_search_pick *pick,
			      ppcc_arena *a, const ppcc_plan_request *r,
			      ppcc_diag *d)
{
	ppcc_search_pick p;
	ppcc_config base;
	int err;
	if ((err = ppcc_search_read(&p, a, r->from_search,
				    r->rank > 0 ? r->rank : 1, d)) < 0)
		return err;
	*pick = p;
	const char *files[2] = {p.model_file, p.cluster_file};
	const ppcc_loc *locs[2] = {&p.model_loc, &p.cluster_loc};
	int text = p.model_text && strcmp(p.model_file, PPCC_COMMAND_LINE) == 0;
	for (int i = text; i < 2 && files[i]; i++) {
		if (strcmp(files[i], PPCC_COMMAND_LINE) == 0) {
			ppcc_error(d, locs[i], "the search read its model from "
				   "the command line (--model, --devices), and "
				   "its JSON does not hold the model_text they "
				   "made; search again with this ppcc");
			return PPCC_EINPUT;
		}
		if (strcmp(files[i], "-") == 0) {
			ppcc_error(d, locs[i], "the search read its %s from standard "
				   "input, which cannot be read again; search "
				   "the file instead", i ? "cluster" : "model");
			return PPCC_EINPUT;
		}
		if (access(files[i], R_OK) != 0) {
			ppcc_error(d, locs[i], "the %s file %s the search read is "
				   "missing since: %s", i ? "cluster" : "model",
				   files[i], strerror(errno));
			return PPCC_EINPUT;
		}
	}
	if (text) {
		/* the text must be what the search read: its fingerprint */
		in_text it = {d, p.model_text_loc};
		ppcc_diag td = {.fn = text_diag, .user = &it};
		if ((err = ppcc_config_load_text(&base, a, PPCC_COMMAND_LINE,
						 p.model_text,
						 strlen(p.model_text), &td)) < 0)
			return err;
		if (base.fingerprint != p.model_fingerprint) {
			ppcc_error(d, &p.model_text_loc, "model_text is not "
				   "the text the search read (fingerprint "
				   "%016llx, this text's %016llx): its entry "
				   "%d would not be the configuration the "
				   "search simulated; search again",
				   (unsigned long long)p.model_fingerprint,
				   (unsigned long long)base.fingerprint, p.rank);
			return PPCC_EINPUT;
		}
	} else {
		err = ppcc_config_load(&base, a, p.model_file, p.cluster_file,
				       d);
	}
	/* a file that no longer loads may have changed: say so too */
	if (!text && base.path && (same_input(&p, "model", p.model_file, &p.model_loc,
				     p.model_fingerprint, base.fingerprint,
				     d) < 0 ||
			  (p.cluster_file &&
			   same_input(&p, "cluster", p.cluster_file,
				      &p.cluster_loc, p.cluster_fingerprint,
				      base.cluster_fingerprint, d) < 0)))
		return PPCC_EINPUT;
	if (err < 0)
		return err;
	if (p.trainer >= 0 &&
	    (err = ppcc_config_set_trainer(&base, a, p.trainer,
					   (ppcc_loc){p.path, 0, 0})) < 0)
		return err;
	if (p.memory_limit_bytes > 0 &&
	    (err = ppcc_config_limit_memory(&base, a, p.memory_limit_bytes)) < 0)
		return err;
	/* the search planned each configuration to leave its headroom
	 * free beside the reserve (search.c): so does the plan, whose split
	 * is then the search's */
	base.cluster.headroom_bytes = p.headroom_bytes;
	for (int g = 0; g < base.cluster.n_groups; g++) {
		const ppcc_device_group *dg = &base.cluster.groups[g];
		if (ppcc_memory_device_cap(&base.cluster, dg) > 0)
			continue;
		ppcc_error(d, &p.headroom_loc, "headroom_bytes: %.4g GiB leaves "
			   "nothing of the %.2f GiB of device group '%s' beyond "
			   "its reserve (%.2f GiB)", p.headroom_bytes / 1073741824.0,
			   dg->memory_bytes / 1073741824.0, dg->name,
			   base.cluster.reserved_bytes / 1073741824.0);
		return PPCC_EINPUT;
	}
	if ((err = ppcc_search_config(cfg, a, &base, &p.e)) < 0)
		return err;
	ppcc_search_pick_locate(cfg, &p);
	return 0;
}

/* The configuration of a model file and r's settings over it. */
static int config_from_file(ppcc_config *cfg, ppcc_arena *a,
			    const ppcc_plan_request *r, ppcc_diag *d)
{
	int err;
	if ((err = r->model_text
		   ? ppcc_config_load_text(cfg, a, r->model, r->model_text,
					   r->model_text_len, d)
		   : ppcc_config_load(cfg, a, r->model, r->cluster, d)) < 0)
		return err;
	ppcc_pipeline *pl = &cfg->pipeline;
	if (r->kind >= 0) {
		pl->kind = r->kind;
		pl->kind_loc = cmdline;
	}
	set_override(r->stages, &pl->stages, &pl->stages_loc);
	set_override(r->microbatches, &pl->microbatches, &pl->microbatches_loc);
	set_override(r->chunks, &pl->chunks, &pl->chunks_loc);
	if (r->group_size_set) {
		pl->group_size = r->group_size;
		pl->group_size_loc = cmdline;
	}
	set_override(r->tensor_parallel, &pl->tensor_parallel,
		     &pl->tensor_parallel_loc);
	set_override(r->expert_parallel, &pl->expert_parallel,
		     &pl->expert_parallel_loc);
	if (r->partition && (err = parse_partition(pl, a, r->partition, d)) < 0)
		return err;
	if (r->memory_limit > 0 &&
	    (err = ppcc_config_limit_memory(cfg, a, r->memory_limit)) < 0)
		return err;
	if (r->trainer > 0 &&
	    (err = ppcc_config_set_trainer(cfg, a, r->trainer - 1,
					   cmdline)) < 0)
		return err;
	ppcc_config_fill_defaults(cfg);
	return 0;
}

int ppcc_compile_plan(ppcc_plan *out, ppcc_arena *a,
		      const ppcc_plan_request *r, ppcc_diag *d)
{
	const ppcc_format_info *fi = ppcc_format_of(r->format);
	int err;

	if (!fi)
		return PPCC_EINTERNAL;
	/* in the arena: the plan points to it (ppcc_plan.config) */
	ppcc_config *cfg = ppcc_arena_alloc(a, 1, sizeof *cfg);
	if (!cfg)
		return PPCC_ENOMEM;
	ppcc_search_pick pick;
	if ((err = r->from_search ? config_from_search(cfg, &pick, a, r, d)
				  : config_from_file(cfg, a, r, d)) < 0 ||
	    (!r->from_search &&
	     (err = ppcc_config_use_trainer(cfg, a, fi, d)) < 0))
		return err;
	if (r->from_search && fi->trainer &&
	    cfg->pipeline.trainer != fi->trainer - 1)
		ppcc_note(d, &cfg->pipeline.loc, "the search planned %s's "
			  "memory (pipeline.trainer); name trainer: %s and "
			  "search again for %s's", ppcc_trainer_name(
				  cfg->pipeline.trainer),
			  ppcc_trainer_name(fi->trainer - 1),
			  ppcc_trainer_name(fi->trainer - 1));
	ppcc_pipeline *pl = &cfg->pipeline;
	pl->threads = r->threads;
	if (pl->threads <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		pl->threads = n > 64 ? 64 : n > 1 ? (int)n : 1;
	}
	/* an output that prints no action's times: the plan keeps none */
	pl->no_times = !ppcc_emit_replays_times(r->format, pl->stages);
	if (r->budget.max_work > PPCC_MAX_WORK_DEFAULT)
		ppcc_note(d, NULL, "--max-work raises the work budget to %lld "
			  "units from the default %lld",
			  (long long)r->budget.max_work,
			  (long long)PPCC_MAX_WORK_DEFAULT);
	if ((err = ppcc_config_check(cfg, d)) < 0 ||
	    (err = ppcc_plan_budget_check_work(cfg, r->format, &r->budget,
					       d)) < 0)
		return err;
	/* with auto and a trainer's format, auto chooses among what that
	 * trainer runs, as ppcc search -f does */
	if ((err = ppcc_plan_build_for(out, a, cfg, d, fi->admits, cfg)) < 0 ||
	    !r->from_search)
		return err;
	/* the same files and settings plan to the same figures, unless
	 * another ppcc's search wrote the JSON */
	double peak = 0;
	for (int i = 0; i < out->best.schedule.n_ranks; i++)
		if (out->best.estimate.peak_memory_bytes[i] > peak)
			peak = out->best.estimate.peak_memory_bytes[i];
	const ppcc_iteration *it = out->best.iteration;
	if (it && (it->iteration_ms != pick.e.iteration_ms ||
		   peak != pick.e.peak_bytes))
		ppcc_warning(d, &pick.entry_loc, "the plan's iteration (%.6g ms) "
			     "and peak memory (%.6g GiB) are not the search's "
			     "(%.6g ms, %.6g GiB): did another version of ppcc "
			     "write this search?", it->iteration_ms,
			     peak / (1024.0 * 1024.0 * 1024.0),
			     pick.e.iteration_ms,
			     pick.e.peak_bytes / (1024.0 * 1024.0 * 1024.0));
	return 0;
}

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

/* The options' version 2 settings as a request's, or PPCC_EINPUT with an
 * error naming the field. */
static int compile_settings(ppcc_plan_request *r,
			    const ppcc_compile_options *o, ppcc_diag *d)
{
	if (o->version < 2)
		return 0;
	double gib = o->memory_limit_gib;
	if (!(gib >= 0 && gib <= 1e6)) {
		ppcc_error(d, NULL, "ppcc_compile_file: options.memory_limit_gib: "
			   "expected GiB per device (a number > 0, or 0 for "
			   "the cluster's), got %g", gib);
		return PPCC_EINPUT;
	}
	if (o->threads < 0 || o->threads > 64) {
		ppcc_error(d, NULL, "ppcc_compile_file: options.threads: %d is "
			   "not a count of 1 to 64, or 0 for one per processor",
			   o->threads);
		return PPCC_EINPUT;
	}
	if (o->max_actions < 0 || o->max_work < 0) {
		ppcc_error(d, NULL, "ppcc_compile_file: options.%s: %lld is "
			   "negative; expected a count, or 0 for the default",
			   o->max_actions < 0 ? "max_actions" : "max_work",
			   o->max_actions < 0 ? o->max_actions : o->max_work);
		return PPCC_EINPUT;
	}
	r->memory_limit = gib * 1024.0 * 1024.0 * 1024.0;
	r->threads = o->threads;
	r->budget.max_actions = o->max_actions;
	r->budget.max_work = o->max_work;
	return 0;
}

int ppcc_compile_file(FILE *out, const char *model_path,
		      const ppcc_compile_options *opts)
{
	static const ppcc_compile_options defaults = PPCC_COMPILE_OPTIONS_INIT;
	const ppcc_compile_options *o = opts ? opts : &defaults;
	compile_sink sink = {o->version >= 1 ? o->diag : NULL, o->diag_user};
	ppcc_diag d = {.fn = compile_diag, .user = &sink};
	ppcc_plan_request r = {.model = model_path, .kind = -1};
	ppcc_emit_options emit = {0};
	ppcc_plan plan;
	int err;

	if (!out || !model_path || o->version < 1) {
		ppcc_error(&d, NULL, "ppcc_compile_file: %s",
			   o->version < 1 ? "options.version is not set"
					  : "no output stream or model file");
		return PPCC_EINPUT;
	}
	const char *format = o->format ? o->format : "text";
	const ppcc_format_info *fi = ppcc_format_named(format);
	if (!fi) {
		char names[256];
		ppcc_format_list(names, sizeof names, PPCC_FORMATS_ALL, ", ",
				 " or ");
		ppcc_error(&d, NULL, "unknown format '%s' (%s)", format, names);
		return PPCC_EINPUT;
	}
	r.format = emit.format = fi->format;
	r.cluster = o->cluster;
	if ((err = compile_settings(&r, o, &d)) < 0)
		return err;
	ppcc_arena *a = ppcc_arena_new();
	if (!a)
		return PPCC_ENOMEM;
	if ((err = ppcc_compile_plan(&plan, a, &r, &d)) < 0 ||
	    (err = fi->emit(out, &plan, &emit, &d)) < 0)
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
