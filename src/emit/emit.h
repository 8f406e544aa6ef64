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
	PPCC_FMT_TORCHTITAN_TOML,
	PPCC_FMT_DEEPSPEED,
	PPCC_FMT_MEGATRON_BRIDGE,
	PPCC_FMT_HTML
} ppcc_format;

/* The span of time a timeline shows (ppcc plan --window). */
enum {
	PPCC_WINDOW_DEFAULT, /* the whole step, or for a plan whose boxes
				would be too narrow to read, its start */
	PPCC_WINDOW_ALL,     /* the whole step: --window all */
	PPCC_WINDOW_SPAN,    /* [start_ms, end_ms): --window START:END */
	PPCC_WINDOW_STEP     /* microbatch `step`'s span: --window step N */
};
typedef struct ppcc_window {
	int kind;            /* PPCC_WINDOW_* */
	double start_ms, end_ms;
	int step;
} ppcc_window;

typedef struct ppcc_emit_options {
	int format;          /* ppcc_format */
	int view_deps;       /* DOT family: dependency graph, not timeline */
	int standalone;      /* header: own types, no ppcc/schedule.h */
	int with_comms;      /* torch CSV: SEND/RECV cells too */
	const char *prefix;  /* header: symbol prefix, "ppcc_plan" by default */
	struct ppcc_dot_probe *dot_probe; /* tests: NULL, or see below */
	ppcc_window window;  /* DOT family: the span shown (zero: default) */
	/* text: 1 when the caller printed ppcc_emit_model_summary already
	 * (ppcc search, above its ranking) */
	int model_summary_shown;
} ppcc_emit_options;

/* Whether the emitter of format reads the actions' times of a plan of
 * n_ranks pipeline ranks, as its row's times says (an unknown format:
 * always).  A plan for a format that reads none may be built with
 * ppcc_pipeline.no_times (emit/formats.c). */
#define PPCC_TEXT_TIMELINE_RANKS 32
int ppcc_emit_replays_times(int format, int n_ranks);

/* What an emitter of the table calls: the plan to f, 0 or a negative
 * status with a diagnostic; f is never closed. */
typedef int (*ppcc_emit_fn)(FILE *f, const ppcc_plan *p,
			    const ppcc_emit_options *o, ppcc_diag *d);

/* Which actions' times an emitter reads (ppcc_emit_replays_times). */
enum {
	PPCC_TIMES_NEVER,
	PPCC_TIMES_ALWAYS,
	PPCC_TIMES_TIMELINE /* up to PPCC_TEXT_TIMELINE_RANKS ranks */
};

/* One output format, a row of ppcc_formats (emit/formats.c): every
 * place that names, lists or dispatches on a format reads its row. */
typedef struct ppcc_format_info {
	const char *name;    /* as -f takes it */
	int format;          /* ppcc_format: the row's index */
	ppcc_emit_fn emit;
	/* output bytes per action, for the budget's error; 0: the output
	 * does not grow with the actions.  title: the output's name there */
	double bytes_per_action;
	const char *title;
	int times;           /* PPCC_TIMES_* */
	/* a trainer's settings: what the trainer runs (auto chooses among
	 * them; NULL: any plan) */
	ppcc_admits_fn admits;
	int search;          /* ppcc search -f takes it */
	/* Graphviz: the name gvRenderData renders to (NULL: DOT text or not
	 * Graphviz) and whether the result is binary (cairo's PNG, not the
	 * core plugin's text) */
	const char *render;
	int binary;
	/* a trainer's file (its settings, or PyTorch's schedule CSV): after
	 * writing it, ppcc plan and ppcc search say on standard error which
	 * configuration it holds and its figures (ppcc_format_summary) */
	int reports;
	/* a trainer's file: 1 + the ppcc_trainer it is for, whose memory
	 * the plan then counts (ppcc_config_use_trainer); 0: none */
	int trainer;
	/* a trainer's refusals of the model whatever its layout, which ppcc
	 * search states before searching (NULL: none apart) */
	int (*model_refuses)(const ppcc_config *c, ppcc_diag *d);
} ppcc_format_info;

extern const ppcc_format_info ppcc_formats[];
extern const int ppcc_n_formats;

/* The row of format (a ppcc_format) or of name as -f takes it; NULL when
 * there is none. */
const ppcc_format_info *ppcc_format_of(int format);
const ppcc_format_info *ppcc_format_named(const char *name);

/* The configuration plan p holds and its figures, as the line after a
 * trainer's file says them: "t 1 x p 4 x d 4 x cp 1, 1f1b with v 1, b 1
 * (m 16), recompute none, ZeRO-1: iteration 1234.5 ms, MFU 41.2%, peak
 * 61.30 GiB (rank 0)" (the fullest rank's peak, the first of equals),
 * in the C locale, to buf of size bytes (truncated, terminated).
 * Needs a plan that ppcc_plan_build made (its config and iteration). */
void ppcc_format_summary(char *buf, size_t size, const ppcc_plan *p);

/* Which rows ppcc_format_list lists. */
enum { PPCC_FORMATS_ALL, PPCC_FORMATS_SEARCH };

/* The names of the rows that which selects, in the table's order,
 * separated by sep, the last two by last ("text, json or chrome";
 * last NULL: sep throughout), written to buf of size bytes
 * (truncated, always terminated).  Returns the length it needs. */
size_t ppcc_format_list(char *buf, size_t size, int which, const char *sep,
			const char *last);

/* Each writes the plan to f and returns 0, or a negative status with a
 * diagnostic.  They never close f. */
int ppcc_emit_text(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o);

/* The band of a plan's time on cluster cl, for the text reports: the
 * held-out error of its devices' calibration (the worst group's), or
 * why none is stated (an uncalibrated preset, the file's efficiency, FP8
 * products, fp8 1, which no published run checks). */
void ppcc_time_band(char *buf, size_t n, const ppcc_cluster *cl, int fp8);

/* Two lines for each device group that names a preset (its name and
 * count when there are several groups; none without a preset):
 * what it is, and the efficiency every figure rests on with where it
 * came from, calibrated (with its held-out error), uncalibrated, or the
 * file's.  The caller holds the C locale. */
void ppcc_emit_presets(FILE *f, const ppcc_cluster *c);

/* The model in three to four lines, from what the loader computed
 * (the layers' costs, ppcc_transformer_params and _split_of): its
 * parameters, the least and most that one of the plan's pipeline ranks
 * holds; a transformer's FLOPs a token (forward and backward, attention's
 * scores counted, recomputation apart) beside 6 x its (active)
 * parameters, the forward's attention/MLP split, and a mixture of
 * experts' active, routed and shared parameters; a model given as layers,
 * its FLOPs a microbatch.  winner: the plan is a search's winner (said
 * so).  Nothing for a plan read back from JSON.  The caller holds the C
 * locale.  0, or PPCC_ENOMEM with nothing written. */
int ppcc_emit_model_summary(FILE *f, const ppcc_plan *p, int winner);
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
/* The estimate p's timeline is drawn from: *e, its own, when it holds
 * the actions' and sends' times, else one simulated into *simulated in
 * a new arena *a (the caller frees it; NULL when none was needed).  0,
 * or PPCC_ENOMEM (emit/json.c). */
int ppcc_emit_times(const ppcc_plan *p, const ppcc_estimate **e,
		    ppcc_estimate *simulated, ppcc_arena **a);
struct ppcc_jw;
/* Writes body's JSON-writer output of p to f, reporting to d (what:
 * "the Chrome trace") a failed allocation or write (emit/json.c). */
int ppcc_emit_jw(FILE *f, const ppcc_plan *p, ppcc_diag *d,
		 int (*body)(struct ppcc_jw *, const ppcc_plan *, ppcc_diag *),
		 const char *what);
/* The timeline as one self-contained, pannable and zoomable HTML page
 * (emit/html.c). */
int ppcc_emit_html(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o,
		   ppcc_diag *d);

/* The data-parallel and ZeRO collectives of a plan, per pipeline rank,
 * as the text report counts them (emit/lanes.c): REDUCE_GRAD or
 * REDUCE_SCATTER_GRAD (the schedule's, and under ZeRO 2 the ones every
 * earlier backward adds, which the schedule does not hold),
 * ALL_GATHER_PARAM and UNSHARD_PARAM, each with its start and end in ms
 * on the timeline's clock (the simulated step, from 0; the
 * estimate's start_ms and end_ms are on the same clock). */
typedef struct ppcc_lane_op {
	int rank, stage;
	int op;          /* a collective ppcc_op */
	int bucket;      /* the bucket (the action's mb field) */
	int mb;          /* an added ZeRO-2 reduce-scatter: the microbatch
			    whose backward it follows; else -1 */
	int32_t action;  /* its index in the rank's list; -1 for one the
			    schedule does not hold */
	uint64_t bytes;
	double start_ms, end_ms;
} ppcc_lane_op;

typedef struct ppcc_lanes {
	int n_ranks;
	long n_ops;
	ppcc_lane_op *ops;  /* by rank, then by start on the rank */
	long *first;        /* rank r's ops: [first[r], first[r + 1]) */
	/* per rank, the time of its reductions (the text's "gradient
	 * reduction ... ms per rank at most" is the largest) and of its
	 * gathers (the estimate's dp_gather_ms) */
	double *reduce_ms, *gather_ms;
	double end_ms;      /* the latest end of any op, 0 with none */
} ppcc_lanes;

/* The collectives of schedule s as simulated in e with costs, under
 * cfg's ZeRO stage (cfg NULL: a plan read back from JSON, whose own
 * collectives only are listed).  0, or PPCC_ENOMEM, or PPCC_EINTERNAL
 * when e has no times to replay, or costs is NULL and s holds a
 * collective; on error *out is empty.  *out is the
 * caller's, to free with ppcc_lanes_free.  O(actions) time. */
int ppcc_lanes_build(ppcc_lanes *out, const ppcc_config *cfg,
		     const ppcc_schedule *s, const ppcc_stage_cost *costs,
		     const ppcc_estimate *e);
/* The same for plan p's best variant. */
int ppcc_lanes_of(ppcc_lanes *out, const ppcc_plan *p);
void ppcc_lanes_free(ppcc_lanes *l);

/* Microbatch mb's span in schedule s simulated in e (times replayed with
 * costs): from the earliest start of any of its forwards to the latest
 * end of any of its backwards (B, I or W), on every rank: the window of
 * --window step N.  PPCC_EINPUT, with a diagnostic naming --window, when
 * mb is not one of the schedule's microbatches; PPCC_EINTERNAL when e
 * has no times.  O(actions). */
int ppcc_window_step_span(double *out_start, double *out_end,
			  const ppcc_schedule *s, const ppcc_stage_cost *costs,
			  const ppcc_estimate *e, int mb, ppcc_diag *d);

/* The plan as a trainer's settings (emit/trainers.c): Megatron-LM's
 * arguments, one a line; torchtitan's Python config (its main) and its
 * TOML (v0.2.2); DeepSpeed's JSON configuration with the partition as
 * PipelineModule's boundaries. */
int ppcc_emit_megatron(FILE *f, const ppcc_plan *p,
		       const ppcc_emit_options *o, ppcc_diag *d);
int ppcc_emit_torchtitan(FILE *f, const ppcc_plan *p,
			 const ppcc_emit_options *o, ppcc_diag *d);
int ppcc_emit_torchtitan_toml(FILE *f, const ppcc_plan *p,
			      const ppcc_emit_options *o, ppcc_diag *d);
int ppcc_emit_deepspeed(FILE *f, const ppcc_plan *p,
			const ppcc_emit_options *o, ppcc_diag *d);
/* Megatron-Bridge: ppcc_apply(cfg), the fields of a recipe's
 * ConfigContainer that Megatron-LM's arguments set, in Python. */
int ppcc_emit_megatron_bridge(FILE *f, const ppcc_plan *p,
			      const ppcc_emit_options *o, ppcc_diag *d);

/* 1 when the trainer of format fmt (PPCC_FMT_MEGATRON, _TORCHTITAN,
 * _DEEPSPEED) runs configuration e as planned: its schedule kind, chunks,
 * ZeRO stage and context parallelism; the emitters refuse the others, with
 * the rule in words.  Any other fmt: 1.  ctx: (void *)(intptr_t)fmt, so
 * that it serves as ppcc_search_options.admits.  It calls the row's
 * admits with ctx NULL.  A row's admits takes as ctx the ppcc_config
 * planned, or NULL: torchtitan's then also apply its mixture-of-experts
 * flavor's rules (pipelines, context parallelism, multi-token
 * prediction, DualPipeV's overlap). */
int ppcc_trainer_admits(const ppcc_search_entry *e, void *ctx);
int ppcc_megatron_admits(const ppcc_search_entry *e, void *ctx);
int ppcc_torchtitan_admits(const ppcc_search_entry *e, void *ctx);
int ppcc_torchtitan_toml_admits(const ppcc_search_entry *e, void *ctx);
int ppcc_deepspeed_admits(const ppcc_search_entry *e, void *ctx);

/* What a trainer refuses of c's model whatever the layout (no flavor of
 * its shape, settings it does not carry): PPCC_EINPUT with the error,
 * else 0.  ppcc search calls a format's before searching. */
int ppcc_torchtitan_model_refuses(const ppcc_config *c, ppcc_diag *d);
int ppcc_torchtitan_toml_model_refuses(const ppcc_config *c, ppcc_diag *d);

#endif
