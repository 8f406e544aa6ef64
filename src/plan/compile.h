/*
 * compile.h - the one plan driver: what `ppcc plan` and the library's
 * ppcc_compile_file both run (load, the command line's settings, defaults,
 * check, budget, plan), before the format's emitter writes the plan.
 * Part of the internal interface; src/ppcc.h includes every such header.
 */
#ifndef PPCC_PLAN_COMPILE_H
#define PPCC_PLAN_COMPILE_H

#include "plan/plan.h"

/* What to plan.  A zero field is the model file's setting or the
 * default; settings given here are located at "<command line>". */
typedef struct ppcc_plan_request {
	const char *model;     /* a model file; "-": standard input */
	/* when not NULL, the model file's bytes (model_text_len of them),
	 * read under the name model ("<command line>") */
	const char *model_text;
	size_t model_text_len;
	const char *cluster;   /* a cluster file; NULL: none */
	int format;            /* ppcc_format the plan is for */
	int kind;              /* a ppcc_sched_kind; -1: the file's */
	int stages, microbatches, chunks, tensor_parallel;
	int expert_parallel;   /* 0: the file's */
	int group_size;        /* read when group_size_set; 0: the stages */
	int group_size_set;
	const char *partition; /* layers per stage, "13,12,12"; NULL: none */
	double memory_limit;   /* bytes every device holds; 0: the cluster's */
	int threads;           /* 0: one per processor online, at most 64 */
	ppcc_budget budget;    /* zeros: the defaults */
	/* the JSON of ppcc search -f json, whose entry rank (1-based; 0:
	 * 1) is planned as the search planned it, from the files it read
	 * (unchanged, by their fingerprints) with its memory limit; model,
	 * cluster, memory_limit and the settings above are then unset */
	const char *from_search;
	int rank;
	int trainer;           /* 1 + a ppcc_trainer (--trainer); 0: the file's */
} ppcc_plan_request;

/* Plans r into out, its data in a: the configuration loaded and
 * overridden by r, checked, admitted by the budget for r->format (a note
 * when r->budget.max_work raises the default), and planned for that
 * format: without actions' times when its emitter reads none, and, for a
 * trainer's format, auto choosing among what that trainer runs.  0, or a
 * negative status with diagnostics. */
int ppcc_compile_plan(ppcc_plan *out, ppcc_arena *a,
		      const ppcc_plan_request *r, ppcc_diag *d);

/* Every device group of cfg holding bytes (a copy of the groups, in a),
 * as --memory-limit sets it: 0, or PPCC_ENOMEM. */
int ppcc_config_limit_memory(ppcc_config *cfg, ppcc_arena *a, double bytes);

/* A trainer's format (fi->trainer) plans for that trainer: the
 * pipeline's trainer becomes its and a transformer's layers are
 * expanded again for it (their stash and logits are the trainer's).
 * A file whose pipeline.trainer names another is PPCC_EINPUT, with an
 * error at that key. */
/* The configuration for trainer (a ppcc_trainer), as given at loc: the
 * pipeline's trainer and loc, and a transformer's layers expanded again
 * for it.  0 or PPCC_ENOMEM. */
int ppcc_config_set_trainer(ppcc_config *cfg, ppcc_arena *a, int trainer,
			    ppcc_loc loc);

struct ppcc_format_info;
int ppcc_config_use_trainer(ppcc_config *cfg, ppcc_arena *a,
			    const struct ppcc_format_info *fi, ppcc_diag *d);

#endif
