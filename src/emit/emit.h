/*
 * emit.h - the output formats and their emitters.
 * Part of the internal interface; src/ppcc.h includes every such header.
 */
#ifndef PPCC_EMIT_EMIT_H
#define PPCC_EMIT_EMIT_H

#include "search/search.h"

typedef enum ppcc_format {
	PPCC_FMT_TEXT,
	PPCC_FMT_JSON,
	PPCC_FMT_DOT,
	PPCC_FMT_SVG,
	PPCC_FMT_PNG,
	PPCC_FMT_HEADER,
	PPCC_FMT_TORCH_CSV,
	PPCC_FMT_CHROME,
	PPCC_FMT_MEGATRON,
	PPCC_FMT_TORCHTITAN,
	PPCC_FMT_DEEPSPEED
} ppcc_format;

typedef struct ppcc_emit_options {
	int format;          /* ppcc_format */
	int view_deps;       /* DOT family: dependency graph, not timeline */
	int standalone;      /* header: own types, no ppcc/schedule.h */
	int with_comms;      /* torch CSV: SEND/RECV cells too */
	const char *prefix;  /* header: symbol prefix, "ppcc_plan" by default */
	struct ppcc_dot_probe *dot_probe; /* tests: NULL, or see below */
} ppcc_emit_options;

/* Whether the emitter of format reads the actions' times of a plan of
 * n_ranks pipeline ranks: JSON, the Chrome trace and the DOT family
 * always (the last two simulate again when the plan has none), the text
 * only for its timeline (at most PPCC_TEXT_TIMELINE_RANKS ranks), the
 * header, the torch CSV and the trainers' configurations never (any
 * other value: always).  A plan
 * for a format that reads none may be built with
 * ppcc_pipeline.no_times (emit/text.c). */
#define PPCC_TEXT_TIMELINE_RANKS 32
int ppcc_emit_replays_times(int format, int n_ranks);

/* Each writes the plan to f and returns 0, or a negative status with a
 * diagnostic.  They never close f. */
int ppcc_emit_text(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o);
int ppcc_emit_json(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o,
		   ppcc_diag *d);
int ppcc_emit_dot(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o,
		  ppcc_diag *d);
/* Tests, through ppcc_emit_options.dot_probe (a call's own, so that
 * concurrent calls stay safe): force_agwrite makes ppcc_emit_dot write
 * DOT with Graphviz's agwrite alone (the linear writer's output is
 * compared with it); linear_writes counts the DOT texts the linear
 * writer wrote and visits the graph objects it visited (the root, each
 * cluster, node and edge, and each attribute looked at for one of
 * them): its work, which the suites compare across sizes. */
typedef struct ppcc_dot_probe {
	int force_agwrite;
	long linear_writes;
	long visits;
} ppcc_dot_probe;
int ppcc_emit_header(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o,
		     ppcc_diag *d);
/* 0 when prefix can name a header's symbols (what ppcc_emit_header
 * checks first), else PPCC_EINPUT with a diagnostic saying what it must
 * be: the CLI refuses a bad --prefix before reading any input. */
int ppcc_emit_header_prefix_check(const char *prefix, ppcc_diag *d);
int ppcc_emit_torch_csv(FILE *f, const ppcc_plan *p,
			const ppcc_emit_options *o, ppcc_diag *d);
int ppcc_emit_chrome(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o,
		     ppcc_diag *d);

/* The plan as a trainer's settings (emit/trainers.c): Megatron-LM's
 * arguments, one a line; torchtitan's TOML; DeepSpeed's JSON
 * configuration with the partition as PipelineModule's boundaries. */
int ppcc_emit_megatron(FILE *f, const ppcc_plan *p,
		       const ppcc_emit_options *o, ppcc_diag *d);
int ppcc_emit_torchtitan(FILE *f, const ppcc_plan *p,
			 const ppcc_emit_options *o, ppcc_diag *d);
int ppcc_emit_deepspeed(FILE *f, const ppcc_plan *p,
			const ppcc_emit_options *o, ppcc_diag *d);

/* 1 when the trainer of format fmt (PPCC_FMT_MEGATRON, _TORCHTITAN,
 * _DEEPSPEED) runs configuration e as planned: its schedule kind, chunks,
 * ZeRO stage and context parallelism; the emitters refuse the others, with
 * the rule in words.  Any other fmt: 1.  ctx: (void *)(intptr_t)fmt, so
 * that it serves as ppcc_search_options.admits. */
int ppcc_trainer_admits(const ppcc_search_entry *e, void *ctx);

#endif
