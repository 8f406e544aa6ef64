/*
 * load.c - a schedule for the runtime from a JSON file.
 *
 * `ppcc plan -f json` writes the plan; ppcc_read_json streams it back
 * into an arena (the schedule and a constant, not the document) and
 * ppcc_schedule_validate checks it (the same checks and dry
 * run that ppcc_rt_init repeats, so a bad file is reported once, here,
 * with its position).  The schedule handed out is the first member of a
 * block that also holds the arena, which is how ppcc_rt_schedule_free
 * finds what to release.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rt.h"

typedef struct rt_loaded {
	ppcc_schedule schedule; /* first: the caller's pointer */
	ppcc_arena *arena;
} rt_loaded;

typedef struct load_sink {
	ppcc_rt_diag_fn fn;
	void *user;
} load_sink;

static void load_diag(ppcc_severity sev, const ppcc_loc *loc, const char *msg,
		      void *user)
{
	load_sink *k = user;
	char line[1400];
	const char *what = sev == PPCC_SEV_ERROR     ? "error"
			   : sev == PPCC_SEV_WARNING ? "warning"
						     : "note";
	if (loc && loc->file && loc->line > 0)
		snprintf(line, sizeof line, "ppcc-rt: %s:%d:%d: %s: %s",
			 loc->file, loc->line, loc->col, what, msg);
	else if (loc && loc->file)
		snprintf(line, sizeof line, "ppcc-rt: %s: %s: %s", loc->file,
			 what, msg);
	else
		snprintf(line, sizeof line, "ppcc-rt: %s: %s", what, msg);
	if (k->fn)
		k->fn(-1, line, k->user);
	else
		fprintf(stderr, "%s\n", line);
}

int ppcc_rt_schedule_load(ppcc_schedule **out, const char *path,
			  const ppcc_rt_options *opts)
{
	load_sink sink = {opts ? opts->diag : NULL, opts ? opts->diag_user : NULL};
	ppcc_diag d = {load_diag, &sink, 0, 0};
	rt_loaded *l = NULL;
	ppcc_plan plan;
	int err = 0;

	if (!out || !path)
		return PPCC_RT_EINPUT;
	*out = NULL;
	if (strcmp(path, "-") != 0) {
		FILE *f = fopen(path, "r");
		if (!f) {
			ppcc_loc loc = {path, 0, 0};
			ppcc_error(&d, &loc, "cannot open: %s", strerror(errno));
			return PPCC_RT_EIO;
		}
		fclose(f);
	}
	l = ppcc_calloc(1, sizeof *l);
	if (!l || !(l->arena = ppcc_arena_new())) {
		err = PPCC_RT_ENOMEM;
		goto out;
	}
	if ((err = ppcc_read_json(&plan, l->arena, path, &d)) < 0)
		goto out;
	if ((err = ppcc_schedule_validate(&plan.best.schedule, &d,
					  strcmp(path, "-") == 0 ? "<stdin>"
								 : path,
					  10)) < 0)
		goto out;
	l->schedule = plan.best.schedule;
out:
	if (err < 0) {
		if (l)
			ppcc_arena_free(l->arena);
		ppcc_free(l);
		return err;
	}
	*out = &l->schedule;
	return 0;
}

void ppcc_rt_schedule_free(ppcc_schedule *s)
{
	if (!s)
		return;
	rt_loaded *l = (rt_loaded *)(void *)s;
	ppcc_arena_free(l->arena);
	ppcc_free(l);
}
