/*
 * ppcc.h - the data structures the compiler's phases meet through.
 *
 * The pipeline, one file a phase:
 *
 *   load.c       YAML (libyaml events) -> ppcc_config, every node located
 *   transformer.c the `transformer:` shorthand -> per-layer costs
 *   config_check.c checks that need the whole configuration
 *   partition.c  exact min-bottleneck split into contiguous stages, and
 *                the least path bound (a lower bound on the step)
 *   refine.c     the split with the least simulated step: every split, or
 *                a bounded descent from seeds, with the gap to a bound
 *   plan.c       config -> integer cost tables; drives partition, schedule,
 *                simulation and the uniform baseline
 *   sched/       the schedule kinds: kinds.c is their table (name,
 *                placement, constraints, closed form), one file per kind
 *                holds its per-rank compute order, lower.c turns any
 *                compute order into action lists with p2p actions,
 *                reduce.c places a data-parallel plan's REDUCE_GRAD
 *                actions after each stage's last backward
 *   validate.c   structural checks and a dry run of any ppcc_schedule
 *   match_order.c per rank pair, send order against receive order (the
 *                condition of order-matching transports such as NCCL)
 *   simulate.c   event-driven simulation: step time, bubble, peak memory
 *   iteration.c  one training iteration: data-parallel gradient reduction
 *                on a communication timeline, the optimizer step,
 *                throughput, MFU, the memory split
 *   dp_timeline.c the reductions as the runtime launches them, timed by
 *                the one rule the simulator and iteration.c apply
 *   emit_*.c     text, JSON, DOT/SVG/PNG, C header, torch CSV, Chrome trace
 *   read_json.c  a JSON schedule back into a ppcc_schedule (ppcc check)
 *   diagnose.c   runtime flight records -> the cause of a failure or hang
 *                (diagnose.h; ppcc diagnose)
 *   main.c       argv -> options -> the calls above (cli_diagnose.c for
 *                ppcc diagnose)
 *
 * Library functions return 0 or a negative ppcc_status and never print:
 * diagnostics go to a ppcc_diag sink.  Compiler data lives in one
 * ppcc_arena and is freed with it.
 */
#ifndef PPCC_INTERNAL_H
#define PPCC_INTERNAL_H

#include <locale.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ppcc/schedule.h"

#define PPCC_VERSION_STRING "0.1.0"

/* Status codes; the CLI maps them to exit codes (see man/ppcc.1). */
typedef enum ppcc_status {
	PPCC_OK = 0,
	PPCC_ENOMEM = -1,      /* allocation failed */
	PPCC_EINPUT = -2,      /* bad input: diagnostics were reported */
	PPCC_EINFEASIBLE = -3, /* no plan satisfies the constraints */
	PPCC_EIO = -4,         /* cannot read or write a file */
	PPCC_EINTERNAL = -5    /* a bug: an invariant does not hold */
} ppcc_status;

const char *ppcc_status_str(int status);

/* Switch the calling thread to the C locale (returns what to restore) and
 * back: every emitter and the loader bracket their number formatting and
 * parsing with these. */
locale_t ppcc_locale_enter(void);
void ppcc_locale_leave(locale_t saved);

/* ---- diagnostics ---------------------------------------------------- */

/* Where a value came from: 1-based line and column.  line 0 means no
 * position (the whole file, or the command line when file says so). */
typedef struct ppcc_loc {
	const char *file;
	int line;
	int col;
} ppcc_loc;

typedef enum ppcc_severity {
	PPCC_SEV_ERROR,
	PPCC_SEV_WARNING,
	PPCC_SEV_NOTE
} ppcc_severity;

typedef void (*ppcc_diag_fn)(ppcc_severity sev, const ppcc_loc *loc,
			     const char *msg, void *user);

/* The sink.  fn may be NULL: messages are then only counted. */
typedef struct ppcc_diag {
	ppcc_diag_fn fn;
	void *user;
	int errors;
	int warnings;
} ppcc_diag;

#if defined(__GNUC__)
#define PPCC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PPCC_PRINTF(a, b)
#endif

/* loc may be NULL.  The message is lower case with no final period. */
void ppcc_diag_report(ppcc_diag *d, ppcc_severity sev, const ppcc_loc *loc,
		      const char *fmt, ...) PPCC_PRINTF(4, 5);
void ppcc_diag_vreport(ppcc_diag *d, ppcc_severity sev, const ppcc_loc *loc,
		       const char *fmt, va_list ap);
#define ppcc_error(d, loc, ...) ppcc_diag_report(d, PPCC_SEV_ERROR, loc, __VA_ARGS__)
#define ppcc_warning(d, loc, ...) ppcc_diag_report(d, PPCC_SEV_WARNING, loc, __VA_ARGS__)
#define ppcc_note(d, loc, ...) ppcc_diag_report(d, PPCC_SEV_NOTE, loc, __VA_ARGS__)

/* ---- memory --------------------------------------------------------- */

/* All allocation goes through ppcc_malloc/ppcc_calloc/ppcc_realloc so that
 * a test build can fail the Nth one (PPCC_FAIL_ALLOC=N, see alloc.c).
 * jansson's allocator is process-wide: the library leaves it alone, and a
 * program (the CLI, the tests) that wants it counted too calls
 * json_set_alloc_funcs(ppcc_malloc, ppcc_free) once. */
void *ppcc_malloc(size_t size);
void *ppcc_calloc(size_t n, size_t size);
void *ppcc_realloc(void *p, size_t size);
void ppcc_free(void *p);
/* Tests: fail the nth allocation from now on (0: never), count
 * allocations since, and blocks not yet freed. */
void ppcc_alloc_fail_at(long n);
long ppcc_alloc_count(void);
long ppcc_alloc_live(void);
/* Allocations that have failed so far (injected or real): a library that
 * reports out-of-memory as something else can be told apart by it. */
long ppcc_alloc_failures(void);

typedef struct ppcc_arena ppcc_arena;

ppcc_arena *ppcc_arena_new(void);
void ppcc_arena_free(ppcc_arena *a);
/* n * size zeroed bytes, 16-byte aligned; NULL on overflow or failure. */
void *ppcc_arena_alloc(ppcc_arena *a, size_t n, size_t size);
/* Forgets every allocation but keeps one chunk for the next ones. */
void ppcc_arena_reset(ppcc_arena *a);
/* A NUL-terminated copy of len bytes of s (which may hold NULs). */
char *ppcc_arena_strndup(ppcc_arena *a, const char *s, size_t len);
char *ppcc_arena_strdup(ppcc_arena *a, const char *s);
char *ppcc_arena_printf(ppcc_arena *a, const char *fmt, ...) PPCC_PRINTF(2, 3);

/* ---- the input ------------------------------------------------------ */

/* One layer, after `repeat` and `transformer:` are expanded.  Costs are per
 * microbatch; bytes are for the whole layer (before tensor parallelism). */
typedef struct ppcc_layer {
	const char *name;
	ppcc_loc loc;           /* the layer's mapping in the file */
	double fwd_flops;       /* fwd_ms is converted at the reference device */
	double bwd_flops;
	/* The part of bwd_flops that is the weight gradient (W, which a
	 * zero-bubble schedule runs apart); the rest is the input gradient
	 * (I), with any recomputation.  From bwd_weight_flops/_ms, the
	 * transformer's weight matrices, else half of bwd_flops. */
	double bwd_weight_flops;
	double params;
	double activation_bytes; /* output sent to the next layer */
	double stash_bytes;      /* kept for the backward pass */
	/* What a split backward holds from I until W: the inputs of the
	 * layer's weight products and their output gradients (the
	 * zero-bubble paper's M_W); stash_weight_bytes, the transformer's,
	 * else all of stash_bytes.  May exceed stash_bytes (recomputation). */
	double stash_weight_bytes;
	/* weights + gradients + optimizer state; 0: from pipeline.zero and
	 * grad_bytes (see ppcc_zero_bytes_per_param) */
	double bytes_per_param;
	/* The cost model of iteration.c (all 0 for a layer given by hand):
	 * the part of bwd_flops that recomputes the forward; the part of
	 * stash_bytes each of the t tensor-parallel devices keeps whole
	 * (without sequence parallelism); the part of stash_bytes that is
	 * logits; the tensor-parallel collectives of one microbatch, counted
	 * as all-reduces of tp_message_bytes each, in the forward and in the
	 * backward (which includes a recomputed forward's). */
	double recompute_flops;
	double stash_replicated_bytes;
	double logits_bytes;
	double tp_message_bytes;
	double tp_fwd_allreduces;
	double tp_bwd_allreduces;
	/* ring attention (context parallelism): K and V bytes of the whole
	 * sequence that each context-parallel rank passes on, forward */
	double cp_kv_bytes;
	/* bytes the memory-bound kernels (norms, residual adds, activation
	 * functions, softmax, dropout) read and write, forward and backward
	 * (with recomputation), and the parts of them kept whole on each
	 * tensor-parallel device without sequence parallelism */
	double kernel_fwd_bytes, kernel_bwd_bytes;
	double kernel_fwd_replicated_bytes, kernel_bwd_replicated_bytes;
} ppcc_layer;

typedef struct ppcc_model {
	const char *name;
	ppcc_loc loc;
	int n_layers;
	ppcc_layer *layers;
	/* 1 when the first and last layers are the embedding and the head
	 * (the transformer shorthand): Megatron-LM's default split divides
	 * the blocks evenly and adds these to the first and last stages. */
	int edge_layers;
	/* Sequences per microbatch and tokens per sequence: 1 and 0 for a
	 * model given as layers (tokens are then not counted). */
	int micro_batch_size;
	int seq_len;
	/* The transformer's shape as read, or NULL for layers: the checks
	 * that tensor parallelism divides heads, kv heads and the FFN. */
	const struct ppcc_transformer *transformer;
	ppcc_loc transformer_loc;
} ppcc_model;

/* A run of identical devices.  Devices are numbered in the order of the
 * groups; pipeline rank r uses devices [r*t, r*t + t) for t-way tensor
 * parallelism. */
typedef struct ppcc_device_group {
	const char *name;
	ppcc_loc loc;
	int count;
	double tflops;       /* peak, dense 16-bit */
	double efficiency;   /* fraction of peak reached, (0, 1] */
	double memory_bytes; /* per device */
	double memory_bandwidth; /* bytes per second, for the optimizer step */
} ppcc_device_group;

typedef struct ppcc_link {
	double bandwidth; /* bytes per second */
	double latency;   /* seconds */
} ppcc_link;

typedef struct ppcc_cluster {
	ppcc_loc loc;
	int devices;          /* sum of the groups' counts */
	int devices_per_node;
	int n_groups;
	ppcc_device_group *groups;
	ppcc_link intra_node;
	ppcc_link inter_node;
	double reserved_bytes; /* per device: CUDA context, NCCL, fragments */
} ppcc_cluster;

typedef struct ppcc_pipeline {
	ppcc_loc loc;
	int kind;            /* ppcc_schedule_kind */
	int stages;          /* p, pipeline ranks */
	int microbatches;    /* m */
	int chunks;          /* v, model chunks per rank (interleaved) */
	int group_size;      /* G, interleaved microbatch group; 0 = p */
	int tensor_parallel; /* t, devices per pipeline rank */
	int data_parallel;   /* d, replicas of the pipeline */
	int context_parallel; /* cp, ranks a sequence is split across */
	int global_batch_size; /* B = m * b * d sequences; 0: not given */
	int zero;            /* ZeRO stage 0-3 (1: distributed optimizer) */
	double grad_bytes;   /* G, bytes of a gradient (4: fp32 accumulation) */
	/* bytes of a gradient bucket / 10^6; 0: Megatron-LM's default
	 * (ppcc_dp_bucket_bytes) */
	double dp_bucket_mb;
	ppcc_loc dp_bucket_mb_loc;
	long max_simulations; /* budget of the split search; 0: the default */
	/* threads the split search may use (ppcc_step_problem.threads);
	 * 0 or 1: the caller's alone */
	int threads;
	/* 1: the caller replays no action's times from the plan (its
	 * output does not print them: ppcc_emit_replays_times), so the plan
	 * of a schedule without data-parallel collectives keeps no send
	 * times in best.estimate (send_ms NULL, and ppcc_rank_times_begin
	 * refuses it); 0: they are kept */
	int no_times;
	/* An explicit partition: layers per stage (n_partition of them, one
	 * per virtual stage), or NULL.  partition_locs: each entry's place,
	 * NULL when it came from the command line. */
	int n_partition;
	const int *partition;
	const ppcc_loc *partition_locs;
	ppcc_loc partition_loc;
	/* where each setting came from, for later diagnostics */
	ppcc_loc kind_loc, stages_loc, microbatches_loc, chunks_loc,
		group_size_loc, tensor_parallel_loc, data_parallel_loc,
		context_parallel_loc, global_batch_size_loc, zero_loc;
} ppcc_pipeline;

typedef struct ppcc_config {
	const char *path; /* the model file as named, "<stdin>" for - */
	ppcc_model model;
	ppcc_cluster cluster;
	ppcc_pipeline pipeline;
} ppcc_config;

/* Reads path ("-" for stdin) and, when cluster_path is not NULL, the
 * cluster from that file instead (format: man/ppcc.5).  Reports every
 * error of the input in line order (the first 100, then a count), then
 * returns PPCC_EINPUT, also for a file that cannot be read; PPCC_ENOMEM
 * when an allocation fails.  On success the pipeline's unset settings
 * hold their defaults (ppcc_config_fill_defaults).  Strings point into
 * the arena. */
int ppcc_config_load(ppcc_config *out, ppcc_arena *a, const char *path,
		     const char *cluster_path, ppcc_diag *d);

/* The checks that need the whole configuration (after command-line
 * overrides): stages vs layers and devices, interleaving constraints. */
int ppcc_config_check(const ppcc_config *c, ppcc_diag *d);

/* Sets each pipeline setting that nobody gave (its *_loc has no file) from
 * those that were given: tensor_parallel 1, context_parallel 1, zero 0,
 * schedule 1f1b, chunks 2 for interleaved else 1; stages devices /
 * (t * cp * d) when data_parallel is given, else devices / (t * cp),
 * capped at layers / chunks and lowered until t * cp * stages divides the
 * devices (at least 1); data_parallel devices / (t * p * cp);
 * microbatches global_batch_size / (micro_batch_size * d) when that is
 * given, else 4 x stages; group_size 0 (= stages).  The loader calls it;
 * call it again after command-line overrides. */
void ppcc_config_fill_defaults(ppcc_config *c);

/* Limits on counts read from a file (layers after repeat, devices,
 * stages, microbatches, chunks, tensor_parallel). */
#define PPCC_MAX_LAYERS (1 << 20)
#define PPCC_MAX_COUNT (1 << 20)
/* The largest schedule JSON ppcc_read_json reads (64 GiB: about 600
 * million actions as ppcc writes them). */
#define PPCC_JSON_MAX_BYTES ((uint64_t)1 << 36)

/* The `transformer:` shorthand as read (transformer.c); 0 in kv_heads,
 * ffn_hidden or bytes_per_param means the default (heads, 4 x hidden,
 * 16). */
typedef enum ppcc_recompute {
	PPCC_RECOMPUTE_NONE,
	PPCC_RECOMPUTE_SELECTIVE,
	PPCC_RECOMPUTE_FULL
} ppcc_recompute;

typedef struct ppcc_transformer {
	int layers, hidden, heads, kv_heads, ffn_hidden, vocab, seq_len;
	int micro_batch_size;
	int recompute; /* ppcc_recompute */
	int swiglu;    /* gated FFN, RMSNorm, no biases, no learned positions,
			  no dropout */
	int sequence_parallel; /* 1 (the default): norms and dropout split too */
	int flash_attention;   /* 1 (the default): no a*s^2 scores kept */
	double bytes_per_param; /* 0: from pipeline.zero */
	/* where heads, kv_heads and ffn_hidden were read (checks against t) */
	ppcc_loc heads_loc, kv_heads_loc, ffn_hidden_loc;
} ppcc_transformer;

/* Bytes kept for the backward pass by one block per microbatch, before
 * any parallelism, and the part of it that stays whole on each
 * tensor-parallel device without sequence parallelism (derivation in
 * transformer.c). */
void ppcc_transformer_block_stash(double *out_total, double *out_replicated,
				  const ppcc_transformer *t);

/* Writes "embed", t->layers x "block", "head" (t->layers + 2 layers, in
 * the arena) located at loc.  Returns PPCC_EINTERNAL for a shape the
 * loader should have rejected. */
int ppcc_transformer_expand(ppcc_layer **out, int *out_n, ppcc_arena *a,
			    const ppcc_transformer *t, ppcc_loc loc);

const char *ppcc_schedule_kind_name(int kind);   /* "gpipe", ... */
int ppcc_schedule_kind_parse(const char *name);  /* -1 if unknown */
const char *ppcc_op_name(int op);                /* "F", "SEND_F", ... */
int ppcc_op_parse(const char *name);             /* -1 if unknown */

/* ---- ops ------------------------------------------------------------- */

/* What every engine (validator, simulator, runtime, emitters) needs to
 * know of an op, in one table (diag.c).  A message is named by its
 * sender: SEND_F of stage s is received by RECV_F of stage s + 1, SEND_B
 * of s by RECV_B of s - 1. */
typedef struct ppcc_op_traits {
	const char *name;  /* "F", "SEND_F", ... */
	int compute;       /* F, B, I, W */
	int comm;          /* SEND_*, RECV_* (OVERLAP_F_B is neither: it
			      marks the pair of computes that follows) */
	int send;          /* SEND_* */
	int fwd;           /* F, SEND_F, RECV_F: the activation direction */
	int other;         /* stage at the other end: +1 or -1; 0 for compute */
	int match;         /* the op at the other end; -1 for compute */
	int collective;    /* REDUCE_GRAD, REDUCE_SCATTER_GRAD,
			    * ALL_GATHER_PARAM: over the stage's data-parallel
			    * group, launched without waiting; mb holds the
			    * bucket, not a microbatch */
} ppcc_op_traits;

/* The table, by op; the functions below are inline, since every engine
 * asks them of every action. */
extern const ppcc_op_traits ppcc_op_table[PPCC_OP_COUNT];

/* NULL for an op out of range. */
static inline const ppcc_op_traits *ppcc_op_traits_of(int op)
{
	return op >= 0 && op < PPCC_OP_COUNT ? &ppcc_op_table[op] : NULL;
}

/* 0 for an op out of range */
static inline int ppcc_op_is_compute(int op)
{
	return op >= 0 && op < PPCC_OP_COUNT && ppcc_op_table[op].compute;
}

static inline int ppcc_op_is_comm(int op)
{
	return op >= 0 && op < PPCC_OP_COUNT && ppcc_op_table[op].comm;
}

static inline int ppcc_op_is_collective(int op)
{
	return op >= 0 && op < PPCC_OP_COUNT && ppcc_op_table[op].collective;
}

/* A gradient reduction: REDUCE_GRAD or REDUCE_SCATTER_GRAD (the
 * collectives placed after a stage's backwards, on the rank's
 * communication channel); ALL_GATHER_PARAM and UNSHARD_PARAM, the
 * gathers, are the others. */
static inline int ppcc_op_is_reduction(int op)
{
	return op == PPCC_OP_REDUCE_GRAD || op == PPCC_OP_REDUCE_SCATTER_GRAD;
}

/* ---- schedule kinds ---------------------------------------------------- */

typedef enum ppcc_placement {
	PPCC_PLACE_LOOPED, /* stage s on rank s % p, chunk s / p */
	PPCC_PLACE_V       /* 2 chunks: rank r holds r and 2p - 1 - r */
} ppcc_placement;

/* The settings a kind's constraints are about, for the caller to locate
 * a complaint. */
typedef enum ppcc_sched_setting {
	PPCC_SET_KIND,
	PPCC_SET_STAGES,
	PPCC_SET_CHUNKS,
	PPCC_SET_MICROBATCHES,
	PPCC_SET_GROUP_SIZE
} ppcc_sched_setting;

typedef void (*ppcc_sched_complain_fn)(int setting, const char *msg,
				       void *user);

/* One row of the table of schedule kinds (src/sched/kinds.c). */
typedef struct ppcc_sched_kind_info {
	int kind;              /* ppcc_schedule_kind */
	const char *name;      /* on the command line and in YAML/JSON */
	const char *macro;     /* PPCC_SCHED_<macro> */
	const char *source;    /* where the order comes from */
	int placement;         /* ppcc_placement */
	int min_chunks, max_chunks, default_chunks;
	int split_backward;    /* the order uses I and W, not B; 2: both
				  (DualPipeV: B in its overlapped pairs,
				  I and W where it fills bubbles) */
	int uses_group;        /* group_size means something */
} ppcc_sched_kind_info;

/* NULL for an unknown kind. */
const ppcc_sched_kind_info *ppcc_sched_kind(int kind);

/* "gpipe, 1f1b, ... or dualpipe-v" (last_sep before the last name)
 * into buf, truncated to n bytes. */
void ppcc_sched_kind_list(char *buf, size_t n, const char *last_sep);

/* Reports, through complain, each constraint of the kind that (p, v, m,
 * group_size; 0 meaning p) breaks, with the message to show; returns the
 * number reported.  An unknown kind is one complaint about PPCC_SET_KIND. */
int ppcc_sched_check(int kind, int ranks, int chunks, int microbatches,
		     int group_size, ppcc_sched_complain_fn complain,
		     void *user);

/* The kind's closed-form bubble with equal stages and free
 * communication, as time: the largest idle time of any rank between its
 * first and its last action, for forward f and backward b (for a kind
 * that splits the backward, b is the input gradient I and w the weight
 * gradient W; otherwise b is the whole backward and w is ignored).  NAN
 * for an unknown kind or where no closed form is known. */
double ppcc_sched_bubble_ms(int kind, int ranks, int chunks,
			    int microbatches, double f, double b, double w);

/* The actions other than SEND/RECV (computes, OVERLAP_F_B markers) that
 * the kind's schedule of (p, v, m) holds on all ranks together; 0 for an
 * unknown kind or a count below 1.  Exact for shapes ppcc_sched_check
 * accepts. */
int64_t ppcc_sched_local_actions(int kind, int ranks, int chunks,
				 int microbatches);

/* Sets rank and chunk of each of the ranks * chunks entries of stages
 * (and stage to its index) from the kind's placement. */
void ppcc_sched_place(ppcc_stage_info *stages, int kind, int ranks,
		      int chunks);

/* ---- the auto kind (src/sched/auto.c) -------------------------------- */

struct ppcc_stage_cost;
struct ppcc_schedule;

#define PPCC_AUTO_MAX 24

/* One schedule ppcc_sched_auto simulated. */
typedef struct ppcc_auto_candidate {
	int kind;          /* a handcrafted kind, or PPCC_SCHED_AUTO for the
			    * heuristic's order */
	int cap;           /* the heuristic's: microbatches between F and W
			    * per rank at most (fewer where memory holds
			    * fewer); 0 for a handcrafted kind */
	int fill;          /* the heuristic's: a W in any gap (1), or only in
			    * gaps as long as the W and at the cap (0) */
	double step_ms;    /* simulated */
	double peak_bytes; /* the largest per-rank peak */
	double over_bytes; /* the most a rank's peak exceeds its cap */
	int fits;          /* every rank's peak within its cap */
	int exact;         /* the exact search's order (src/exact.c) */
} ppcc_auto_candidate;

/* ---- the exact search (src/exact.c) ---------------------------------- */

/* The most microbatches the exact search takes, and its default reach:
 * auto runs it when p x m is at most PPCC_EXACT_DEFAULT_PM. */
#define PPCC_EXACT_MAX_M 64
#define PPCC_EXACT_DEFAULT_PM 64

typedef enum ppcc_exact_status {
	PPCC_EXACT_NOT_RUN = 0,    /* p x m above the reach, or nothing fits */
	PPCC_EXACT_OPTIMAL,        /* proven optimal */
	PPCC_EXACT_TIME_LIMIT,     /* stopped by the time limit */
	PPCC_EXACT_NODE_LIMIT,     /* stopped after the node budget */
	PPCC_EXACT_STOPPED         /* GLPK stopped otherwise */
} ppcc_exact_status;

typedef struct ppcc_exact_options {
	int max_pm;          /* run when p x m <= this (0: never) */
	double time_limit_s; /* glp_iocp.tm_lim */
	long node_limit;     /* branch-and-bound nodes; 0: no budget */
} ppcc_exact_options;

/* auto's: p x m <= PPCC_EXACT_DEFAULT_PM, 10 s, 500 nodes. */
extern const ppcc_exact_options ppcc_exact_defaults;

typedef struct ppcc_exact_report {
	ppcc_exact_status status;
	double warm_model_ms;  /* the warm start's step in the model */
	double model_ms;       /* the incumbent's step in the model */
	double bound_ms;       /* the proven lower bound (= model_ms when
				* optimal) */
	double solve_s;        /* wall time; not printed by ppcc plan (it
				* varies from run to run) */
	int nodes, binaries, rows;
	int warm_taken;        /* GLPK accepted the warm start */
	int relaxed;           /* the LP relaxation was solved; else bound_ms
				* is the per-rank work bound alone */
} ppcc_exact_report;

/* The least-step order of one chunk per rank (stage r on rank r) that
 * keeps F, I and W each in microbatch order, under costs and rank_cap
 * (NULL: no limit), warm-started from warm (a schedule of that shape that
 * fits), as a MILP solved by GLPK (src/exact.c).  *out_order: per rank
 * its 3m compute actions, in a: the incumbent's, which is the warm
 * start's order when the search found nothing better or stopped before
 * it had an incumbent.  PPCC_EINPUT when warm is not of that shape. */
int ppcc_sched_exact(ppcc_action ***out_order, ppcc_exact_report *rep,
		     ppcc_arena *a, int ranks, int microbatches,
		     const struct ppcc_stage_cost *costs, const double *rank_cap,
		     const struct ppcc_schedule *warm,
		     const ppcc_exact_options *opt);

typedef struct ppcc_auto_report {
	int n;
	int chosen;        /* index into candidates */
	ppcc_auto_candidate candidates[PPCC_AUTO_MAX];
	/* the exact search: what it was given and what it found */
	ppcc_exact_options exact_opt;
	ppcc_exact_report exact;
	double heuristic_ms; /* the best of the heuristic's orders that fit;
			      * INFINITY when none does */
	double before_ms;    /* the best before the exact search (whose
			      * warm start is the best of those with I
			      * and W) */
} ppcc_auto_report;

/* The fastest schedule of one chunk per rank for these stages (ranks
 * entries, placed) and costs whose simulated peak fits rank_cap (bytes
 * per rank; NULL: no limit): among every handcrafted kind of the table
 * that takes the shape and the zero-bubble heuristic's order under
 * several caps (auto.c).  Writes the winner to *out (in a) and what was
 * tried to *rep.  PPCC_EINFEASIBLE when none fits: *out is then the one
 * that overflows least.  *out is not sealed (fingerprint 0):
 * ppcc_schedule_validate_seal checks and seals it. */
int ppcc_sched_auto(struct ppcc_schedule *out, ppcc_auto_report *rep,
		    ppcc_arena *a, int ranks, int microbatches,
		    const ppcc_stage_info *stages,
		    const struct ppcc_stage_cost *costs,
		    const double *rank_cap);
/* The same with the exact search's options (NULL: ppcc_exact_defaults). */
int ppcc_sched_auto_opts(struct ppcc_schedule *out, ppcc_auto_report *rep,
			 ppcc_arena *a, int ranks, int microbatches,
			 const ppcc_stage_info *stages,
			 const struct ppcc_stage_cost *costs,
			 const double *rank_cap, const ppcc_exact_options *ex);

/* ---- costs and partition -------------------------------------------- */

/* The partition problem in integers (picoseconds, bytes), so that the
 * optimum is exact.  Stage s holding layers i..j (0-based, inclusive)
 * costs
 *
 *   time(s,i,j) = work[s][j+1] - work[s][i]
 *               + (s > 0       ? comm_in[s][i]  : 0)
 *               + (s < S - 1   ? comm_out[s][j] : 0)
 *
 * and fits when
 *
 *   static_prefix[j+1] - static_prefix[i]
 *     + stash_count[s] * (stash_prefix[j+1] - stash_prefix[i]) <= mem_cap[s].
 *
 * work[s] is a prefix sum (n_layers + 1 entries) of forward + backward time
 * on stage s's device; comm_in[s][i] is the p2p time stage s pays for its
 * input boundary (between layers i-1 and i), comm_out[s][j] for its output
 * boundary (between j and j+1).  Stages may share arrays. */
typedef struct ppcc_part_problem {
	int n_layers;
	int n_stages;
	const int64_t *const *work;
	const int64_t *const *comm_in;
	const int64_t *const *comm_out;
	const int64_t *static_prefix;
	const int64_t *stash_prefix;
	const int64_t *stash_count;
	const int64_t *mem_cap; /* INT64_MAX: no limit */
} ppcc_part_problem;

/* Writes first[s], the first layer of each stage (first[0] == 0), for a
 * split with the least bottleneck max_s time(s, ...), and that bottleneck.
 * Ties are broken deterministically (see partition.c).  Returns
 * PPCC_EINFEASIBLE when no split fits the memory caps. */
int ppcc_partition_solve(int *out_first, int64_t *out_bottleneck,
			 const ppcc_part_problem *pb);

/* When ppcc_partition_solve is infeasible: the split that minimises the
 * largest memory overflow, the stage with that overflow, and the bytes by
 * which it is over its cap. */
int ppcc_partition_min_overflow(int *out_first, int *out_stage,
				int64_t *out_overflow,
				const ppcc_part_problem *pb);

/* A lower bound, within hi / 2^20 of the least, on max over stages r of
 * P_r + m time(r, ...) over the splits that fit (P_r: the work of stages
 * before r plus their input p2p; see partition.c), searched in [lo, hi];
 * hi must be the value of a split that fits.  With one chunk per rank it
 * bounds the simulated step of GPipe and 1F1B from below (refine.c).
 * out_first: a split within the final upper end of the search. */
int ppcc_partition_path_bound(int64_t *out, int *out_first,
			      const ppcc_part_problem *pb, int64_t m, int64_t lo,
			      int64_t hi);

/* ---- the step objective (refine.c) ----------------------------------- */

struct ppcc_stage_cost;
struct ppcc_estimate;

/* Stage costs of a split (first[s], the first layer of each stage) in the
 * simulator's terms; returns 0 or a negative status. */
typedef int (*ppcc_split_cost_fn)(void *user, const int *first,
				  struct ppcc_stage_cost *out);
/* The cost of stage s alone holding layers i..j (as ppcc_split_cost_fn
 * writes it: a stage's costs depend on s, i and j alone; its receive is
 * layer i - 1's activation and its links are its rank's). */
typedef int (*ppcc_stage_cost_fn)(void *user, int s, int i, int j,
				  struct ppcc_stage_cost *out);

/* The budget of simulations when ppcc_step_problem.max_sims is 0: as many
 * as fit in PPCC_STEP_ACTIONS simulated actions, at least
 * PPCC_STEP_MIN_SIMS. */
#define PPCC_STEP_ACTIONS (1L << 19)
/* The least schedule, in actions, whose simulations may run ahead on a
 * second thread (ppcc_step_problem.threads): a thread's start and a
 * second set of the simulator's buffers are then small beside it.
 * ppcc_step_ahead_actions is the value used (tests lower it; set it
 * before any search runs). */
#define PPCC_STEP_AHEAD_ACTIONS (1L << 22)
extern long ppcc_step_ahead_actions;
/* Split searches that read the shape's second half of ranks on a second
 * thread (step_shape; tests). */
extern _Atomic long ppcc_step_shape_halves;
#define PPCC_STEP_MIN_SIMS 4
/* The memory model's budget (refine.c): evaluations of a split without
 * simulating it, each O(S + the ranks' count vectors), so many steps. */
#define PPCC_STEP_MODEL_WORK (1L << 21)
#define PPCC_STEP_MAX_SEEDS 8

typedef struct ppcc_step_problem {
	int n_layers;
	const ppcc_schedule *shape;  /* the schedule's order (split-independent) */
	ppcc_split_cost_fn costs;
	ppcc_stage_cost_fn stage_cost;
	void *user;
	const double *rank_cap;      /* per rank, bytes per device; NULL: none */
	const int *const *seeds;     /* splits to start from (at least one) */
	int n_seeds;
	long max_sims;               /* 0: the default budget */
	double lower_bound_ms;       /* a bound on every split's step, reported */
	/* Optional: a split whose estimate the caller wants (the uniform
	 * one, which the plan prints beside its own).  The first time the
	 * search simulates it, the estimate is copied to *kept, its per-rank
	 * arrays in kept_arena, and *kept_have set to 1; a split the search
	 * never simulates leaves *kept_have 0. */
	const int *keep;
	struct ppcc_estimate *kept;
	ppcc_arena *kept_arena;
	int *kept_have;
	/* When best is not NULL: the estimate of the split the search
	 * returns, with its send times (as PPCC_SIM_SEND_TIMES keeps them),
	 * copied from the search's own simulation of it into kept_arena,
	 * and *best_have 1; 0 when it has none (the caller simulates).
	 * best_no_times: the same without the send times (send_ms NULL),
	 * for a caller that replays no action's times: 16 bytes a stage
	 * and microbatch neither copied nor held. */
	struct ppcc_estimate *best;
	int *best_have;
	int best_no_times;
	/* 1: every split simulated each time it is looked at, every stage's
	 * costs and every rank's modelled memory computed afresh for each
	 * split, none kept from the split before (tests; the search's splits
	 * and counts are the same either way) */
	int forget;
	/* > 1: on a schedule of PPCC_STEP_AHEAD_ACTIONS actions or more,
	 * the simulation the search expects to run next runs on a second
	 * thread beside the one it runs (refine.c, step_ahead); the
	 * answer, the counts and the estimates kept are the same.  sp->costs
	 * is still called from the caller's thread alone. */
	int threads;
} ppcc_step_problem;

typedef struct ppcc_step_result {
	int exact;          /* every split was simulated */
	long splits;        /* how many there are, -1: more than the budget */
	long simulations;   /* simulations the search ran, remembered ones too */
	long remembered;    /* of those, of a split simulated before in the
			     * same search: its key taken from then */
	long budget;
	long models;        /* memory-model evaluations, repairing's included */
	long model_budget;  /* balancing's budget of them (repairing's alike) */
	double step_ms;     /* of the split returned */
	double peak_bytes;  /* its largest per-rank peak */
	double lower_bound_ms;
	int path_bound;     /* the schedule met the path bound's conditions */
} ppcc_step_result;

/* Buffers kept between searches (sized on first use, grown as needed). */
typedef struct ppcc_step_ctx ppcc_step_ctx;
int ppcc_step_ctx_new(ppcc_step_ctx **out, int n_layers, int n_stages,
		      int n_ranks);
void ppcc_step_ctx_free(ppcc_step_ctx *x);

/* Writes the split that comes first in refine.c's order (least simulated
 * step among those whose simulated peak fits every rank's cap; ties: least
 * peak memory, then most balanced ranks, then latest starts), exact when
 * res->exact, else the best the bounded descent from the seeds found.
 * *ctx may be NULL (it is then created; free it with ppcc_step_ctx_free).
 * PPCC_EINFEASIBLE when no split seen fits; out_first then holds the one
 * with the least overflow. */
int ppcc_partition_step(int *out_first, ppcc_step_result *res,
			ppcc_step_ctx **ctx, const ppcc_step_problem *sp);

/* The lower bound on the simulated step of one split (see refine.c), or
 * NAN on failure.  For tests and reports. */
double ppcc_step_split_bound(ppcc_step_ctx **ctx, const ppcc_step_problem *sp,
			     const int *first);
/* Each rank's peak memory by the memory model (refine.c) for one split,
 * into out_peaks (n_ranks entries): equal to the simulated peak but for
 * the order of the additions when no I frees part of a stash.  For
 * tests. */
int ppcc_step_split_peaks(double *out_peaks, ppcc_step_ctx **ctx,
			  const ppcc_step_problem *sp, const int *first);

/* ---- the memory bound (src/membound.c) ------------------------------ */

/* What the proof that no split fits reads: the schedule's order (its
 * stage table and actions, split-independent) and, per layer and per
 * device, its static bytes, the stash a microbatch holds of it from F on
 * and what W keeps of that after I (wstash_bytes; may be NULL when the
 * schedule has no I).  rank_cap: bytes per device of each rank, NULL for
 * 0 (ppcc_mem_bound then bounds the largest peak itself). */
typedef struct ppcc_mem_problem {
	int n_layers;
	const ppcc_schedule *shape;
	const double *static_bytes, *stash_bytes, *wstash_bytes;
	const double *rank_cap;
} ppcc_mem_problem;

/* The count vectors and sums of one problem, in a (which owns them;
 * the arrays mp points to must outlive it).  PPCC_EINPUT when the
 * argument does not apply (a negative size, a malformed shape). */
typedef struct ppcc_mem_state ppcc_mem_state;
int ppcc_mem_prepare(ppcc_mem_state **out, ppcc_arena *a,
		     const ppcc_mem_problem *mp);
/* 1 when every split of the layers has a rank whose simulated peak
 * exceeds its cap + over (bytes per device), 0 when not shown. */
int ppcc_mem_unfit(ppcc_mem_state *m, double over);
/* The most over ppcc_mem_unfit proves (bisected): every split has a
 * rank whose simulated peak is more than that above its cap.
 * -INFINITY when none is proved, NAN when out of memory. */
double ppcc_mem_bound(ppcc_mem_state *m);

/* ---- the plan -------------------------------------------------------- */

/* What the simulator needs per (virtual) stage.  Times in milliseconds. */
typedef struct ppcc_stage_cost {
	double fwd_ms;
	double bwd_ms;      /* full backward; I + W when split */
	double bwd_input_ms;  /* I */
	double bwd_weight_ms; /* W */
	double send_f_ms;   /* p2p time of SEND_F to stage + 1 */
	double send_b_ms;   /* p2p time of SEND_B to stage - 1 */
	double static_bytes; /* per device of the stage's rank */
	double stash_bytes;  /* per microbatch held, per device */
	/* What iteration.c needs (plan.c fills them; 0 when read back from
	 * JSON).  Times are parts of fwd_ms and bwd_ms; bytes and
	 * parameters are per device; FLOPs per microbatch for all the
	 * stage's devices of one replica. */
	double tp_fwd_ms, tp_bwd_ms;   /* tensor-parallel collectives */
	double cp_fwd_ms, cp_bwd_ms;   /* ring attention's K and V exchange */
	double recompute_ms;           /* recomputed forward, in bwd_ms */
	double params;                 /* per device */
	double weight_bytes, grad_bytes, optimizer_bytes; /* static split */
	double logits_bytes;           /* of stash_bytes */
	double model_flops, hardware_flops;
	/* The part of stash_bytes that only I needs: a split backward frees
	 * it when I ends and the rest (the paper's M_W) when W ends; 0 holds
	 * all of it until W. */
	double stash_input_bytes;
	/* Each REDUCE_GRAD of the stage (plan.c; 0 when read back from
	 * JSON) takes dp_reduce_ms + bytes x dp_reduce_ms_per_byte on the
	 * rank's communication channel (ppcc_dp_reduce_ms). */
	double dp_reduce_ms, dp_reduce_ms_per_byte;
	/* Each ALL_GATHER_PARAM of the stage (ZeRO 1 and 2; plan.c, 0 when
	 * read back): dp_gather_ms + bytes x dp_gather_ms_per_byte, in the
	 * rank's prologue (ppcc_dp_gather_ms). */
	double dp_gather_ms, dp_gather_ms_per_byte;
	/* Under ZeRO-3 (plan.c; 0 otherwise): the stage's 16-bit
	 * parameters on one device, gathered whole (UNSHARD_PARAM) for each
	 * of its F, B and I.  Each UNSHARD_PARAM of the stage takes
	 * ppcc_dp_gather_ms of its bytes, as ALL_GATHER_PARAM does; a rank
	 * holds two gather buffers (its compute's and the prefetched one)
	 * the size of the largest of its stages' (simulate.c, refine.c). */
	double zero3_param_bytes;
} ppcc_stage_cost;

typedef struct ppcc_estimate {
	double step_ms;          /* makespan */
	double bubble_fraction;  /* sum of idle / (ranks * step) */
	double bubble_analytic;  /* closed form, NAN where none applies */
	double *busy_ms;         /* per rank: computing */
	double *comm_ms;         /* per rank: occupied by p2p transfers */
	double *idle_ms;         /* per rank: the rest of the step */
	double *peak_memory_bytes; /* per rank */
	double **start_ms;       /* per rank, per action; NULL when not kept */
	double **end_ms;
	/* When each message was sent, [2 * (stage * m + mb) + (0 for
	 * SEND_F, 1 for SEND_B)]: with it any rank's action times can be
	 * replayed in one pass (ppcc_rank_times).  NULL when not kept. */
	double *send_ms;
	/* The REDUCE_GRAD actions on each rank's communication channel
	 * (ppcc_dp_channel_post): per rank, the time they occupy it and
	 * when its actions and reductions are all done (its last action's
	 * end when it has none); dp_step_ms, the latest of those, is
	 * step_ms for a schedule without reductions. */
	double *dp_busy_ms;
	double *dp_end_ms;
	double dp_step_ms;
	/* Per rank, the ALL_GATHER_PARAM actions that open its list (ZeRO 1
	 * and 2), run on its communication channel from time 0 one after
	 * another, or its UNSHARD_PARAM actions (ZeRO-3), each run on the
	 * channel from where the rank reaches it: dp_gather_ms[r] their sum
	 * (0 without them), and dp_gather_wait_ms[r] how long the rank's
	 * computes waited for them (the gathers it exposed; each stage's
	 * first compute starts at dp_ready_ms[s] at the earliest: the end
	 * of that stage's last prologue gather, 0 without; each compute a
	 * group of UNSHARD_PARAM serves at its group's end).  Part of
	 * step_ms. */
	double *dp_gather_ms;
	double *dp_gather_wait_ms;
	double *dp_ready_ms;
} ppcc_estimate;

/* Builds the action lists of a kind for the stages given (n_stages = p *
 * v, placed by ppcc_sched_place).  The arrays live in the arena. */
int ppcc_schedule_build(ppcc_schedule *out, ppcc_arena *a, int kind,
			int ranks, int chunks, int microbatches,
			int group_size, const ppcc_stage_info *stages);
/* The same with the fingerprint left 0, for a schedule that is changed
 * and then sealed (ppcc_schedule_validate_seal). */
int ppcc_schedule_build_unsealed(ppcc_schedule *out, ppcc_arena *a, int kind,
				 int ranks, int chunks, int microbatches,
				 int group_size, const ppcc_stage_info *stages);
/* The same on two threads when threads > 1 and the lists hold
 * PPCC_BUILD_TOUCH_BYTES or more (ppcc_build_touch_bytes, the value
 * used: tests lower it; set it before any build runs): their fresh
 * memory first written (lower.c, lower_touch), then half the ranks
 * lowered on each thread; the schedule is the same. */
#define PPCC_BUILD_TOUCH_BYTES ((size_t)64 << 20)
extern size_t ppcc_build_touch_bytes;
/* Builds whose ranks were lowered on two threads (tests). */
extern _Atomic long ppcc_lower_halves;
/* The rank that halves lists of n[0..p) actions (p > 1) by actions, not
 * ranks (the first p/2 ranks of a kind can hold more than the rest):
 * ranks [0, mid) and [mid, p), neither empty; the work a build or a
 * search shares between two threads. */
int ppcc_sched_middle_rank(const int64_t *n, int p);
int ppcc_schedule_build_unsealed_on(ppcc_schedule *out, ppcc_arena *a,
				    int kind, int ranks, int chunks,
				    int microbatches, int group_size,
				    const ppcc_stage_info *stages, int threads);

/* The data-parallel reductions in the schedule (sched/reduce.c): after
 * the last B or W of each stage, that stage's grad_bytes[stage] (bytes
 * of gradients on one device) in REDUCE_GRAD actions of bucket_bytes
 * each, the last one holding the rest (at least one, of 0 bytes for a
 * stage without gradients), in bucket order.  The rank lists are new
 * ones in the arena; the fingerprint is left 0 for the caller's seal.
 * PPCC_EINPUT for a schedule that holds reductions already or a stage
 * without a backward, or counts that do not fit; PPCC_ENOMEM. */
int ppcc_schedule_place_reductions(ppcc_schedule *s, ppcc_arena *a,
				   const double *grad_bytes,
				   double bucket_bytes);
/* ppcc_schedule_place_reductions under ZeRO stage `zero` (0-3): with
 * zero >= 1 each reduction is a REDUCE_SCATTER_GRAD instead, and with
 * zero 1 or 2 every bucket k of stage s also has an ALL_GATHER_PARAM(s,
 * k) of llround(its gradient bytes x param_per_grad) bytes at the start
 * of the rank's list, before every other action: the rank's stages in
 * the order of their first F, buckets in order.  Version 4 when it
 * places either op.  With zero 3, each F, B and I has a group of
 * UNSHARD_PARAM(s, k), one per bucket of those bytes, listed right after
 * the rank's compute two before it (the first two at the start; after
 * the pair where that compute is an overlapped pair's F), and every B
 * and W is followed by its stage's reduce-scatters: version 5.  The
 * same errors. */
int ppcc_schedule_place_collectives(ppcc_schedule *s, ppcc_arena *a,
				    const double *grad_bytes,
				    double bucket_bytes, int zero,
				    double param_per_grad);
/* The number of REDUCE_GRAD actions that would place (saturating). */
int64_t ppcc_schedule_reduction_count(const ppcc_schedule *s,
				      const double *grad_bytes,
				      double bucket_bytes);

/* The time of one REDUCE_GRAD of `bytes` of a stage of costs c; 0 for 0
 * bytes. */
static inline double ppcc_dp_reduce_ms(const struct ppcc_stage_cost *c,
				       uint64_t bytes)
{
	return bytes == 0 ? 0
		: c->dp_reduce_ms + (double)bytes * c->dp_reduce_ms_per_byte;
}

/* The time of one ALL_GATHER_PARAM of `bytes`; 0 for 0 bytes. */
static inline double ppcc_dp_gather_ms(const struct ppcc_stage_cost *c,
				       uint64_t bytes)
{
	return bytes == 0 ? 0
		: c->dp_gather_ms + (double)bytes * c->dp_gather_ms_per_byte;
}

/* The one rule for when a gradient reduction runs, which the simulator,
 * the iteration model and the runtime's prediction (dp_timeline.c) all
 * apply: it is ready when the rank reaches it in its list (the end of
 * the backward that completed the bucket: the runtime launches it after
 * that callback returns) and runs for ms on the rank's one
 * communication channel, from when it is ready or the channel is free,
 * whichever is later.  *free_ms moves to its end; returns its start. */
static inline double ppcc_dp_channel_post(double *free_ms, double ready_ms,
					  double ms)
{
	double at = ready_ms > *free_ms ? ready_ms : *free_ms;
	*free_ms = at + ms;
	return at;
}

/* Structural checks and a dry run.  Reports each problem naming rank and
 * action index; returns PPCC_EINPUT when any.  `max_errors` bounds the
 * report (0 = no bound). */
int ppcc_schedule_validate(const ppcc_schedule *s, ppcc_diag *d,
			   const char *file, int max_errors);
/* The same, with hash = ppcc_schedule_fingerprint(s) already computed
 * by the caller (compared with s->fingerprint as there). */
int ppcc_schedule_validate_hashed(const ppcc_schedule *s, uint64_t hash,
				  ppcc_diag *d, const char *file, int max_errors);
/* Tests: 1 makes the validator run phases 2 and 3 on its table of
 * positions alone, without the quick pass on bits that decides most
 * schedules (validate.c, val_quick); the reports are the same.  The
 * count of schedules the quick pass has decided, kept atomically: the
 * runtime's threads validate at once. */
extern int ppcc_validate_force_positions;
extern _Atomic long ppcc_validate_quick_accepts;
/* For a schedule being made, whose fingerprint is not yet set (the
 * compiler's own): every check of ppcc_schedule_validate except the
 * comparison with s->fingerprint, which, when every check passes, is set
 * to the hash of exactly what was checked (computed in the same pass over
 * the actions that checks their fields).  So a sealed schedule is one
 * that ppcc_schedule_validate accepts. */
int ppcc_schedule_validate_seal(ppcc_schedule *s, ppcc_diag *d,
				const char *file, int max_errors);
/* ppcc_schedule_validate_seal with run(s, user) in place of the dry run:
 * a run of all ranks under the same semantics (the simulation the caller
 * makes anyway) returning PPCC_EINPUT when they cannot all finish, when
 * the dry run is made for its report (the same as
 * ppcc_schedule_validate_seal's).  Returns the validator's status, else
 * run's. */
int ppcc_schedule_validate_seal_run(ppcc_schedule *s, ppcc_diag *d,
				    const char *file, int max_errors,
				    int (*run)(const ppcc_schedule *s, void *user),
				    void *user);

/* For a valid schedule (after ppcc_schedule_validate): whether each
 * ordered pair of ranks sends its messages in the order the receiver
 * receives them, as transports that match by posting order (NCCL, the
 * runtime's grouped mode) need.  Reports the first message out of order
 * of each pair as a warning at {file, 0, 0}, at most max_findings (0: no
 * bound); returns the number of pairs out of order, or PPCC_ENOMEM.
 * (match_order.c) */
int ppcc_schedule_order_check(const ppcc_schedule *s, ppcc_diag *d,
			      const char *file, int max_findings);

/* Event-driven simulation of s under costs (one per stage).  Assumes s is
 * valid.  Arrays live in the arena. */
int ppcc_simulate(ppcc_estimate *out, ppcc_arena *a, const ppcc_schedule *s,
		  const ppcc_stage_cost *costs);

/* ppcc_simulate keeping only what `keep` asks for: PPCC_SIM_ACTION_TIMES
 * (start_ms, end_ms: 16 bytes per action), PPCC_SIM_SEND_TIMES (send_ms:
 * 16 bytes per stage and microbatch).  ppcc_simulate keeps both. */
#define PPCC_SIM_ACTION_TIMES 1
#define PPCC_SIM_SEND_TIMES 2
int ppcc_simulate_keep(ppcc_estimate *out, ppcc_arena *a,
		       const ppcc_schedule *s, const ppcc_stage_cost *costs,
		       int keep);

/* ppcc_simulate_keep with its working buffers (the send times it does
 * not keep, the messages' flags, the ranks' states) kept in *work from
 * one call to the next, allocated on the first (*work NULL), so that a
 * caller simulating many times allocates and first touches them once;
 * the same results.  *work is the caller's, to free with
 * ppcc_sim_work_free. */
typedef struct ppcc_sim_work ppcc_sim_work;
int ppcc_simulate_work(ppcc_estimate *out, ppcc_arena *a,
		       const ppcc_schedule *s, const ppcc_stage_cost *costs,
		       int keep, ppcc_sim_work **work);
void ppcc_sim_work_free(ppcc_sim_work *work);
/* The send times of the last simulation through work, one made without
 * PPCC_SIM_SEND_TIMES (which leaves them in work), as that simulation
 * would have kept them with it: into out (2 keys doubles for keys stage
 * and microbatch pairs), 0 where no message was sent.  PPCC_EINPUT when
 * work holds no such times. */
int ppcc_sim_work_send_times(double *out, const ppcc_sim_work *work,
			     size_t keys);

/* The start and end of each action of one rank, in list order, for an
 * emitter: read from the estimate's start_ms/end_ms where it has them,
 * else replayed a block at a time from its send_ms, with the same
 * arithmetic as the simulation (so the same doubles).  Memory is the
 * struct's. */
#define PPCC_TIMES_BLOCK 256
typedef struct ppcc_rank_times {
	const ppcc_rank_schedule *rs;
	const ppcc_stage_cost *costs;
	const ppcc_estimate *e;
	int rank, n_ranks, n_stages, n_microbatches;
	int32_t base, count;   /* start/end hold actions [base, base + count) */
	double clock;          /* the rank's clock after them */
	double dp_free;        /* its reduction channel's, after them */
	const double *ready;   /* the estimate's dp_ready_ms, or NULL */
	double unshard[2];     /* ends of the UNSHARD_PARAM groups waiting */
	int n_unshard;         /* for their computes, oldest first */
	double start[PPCC_TIMES_BLOCK], end[PPCC_TIMES_BLOCK];
} ppcc_rank_times;

/* Adds to peaks[r] rank r's ZeRO-3 gather buffers: two of the largest
 * zero3_param_bytes of its stages (simulate.c's peak; nothing without
 * ZeRO-3).  O(p S). */
void ppcc_sim_add_gather_buffers(double *peaks, const ppcc_schedule *s,
				 const ppcc_stage_cost *costs);

/* PPCC_EINTERNAL when the estimate has neither times nor send times (or
 * the plan no costs to replay them with). */
int ppcc_rank_times_begin(ppcc_rank_times *t, const ppcc_schedule *s,
			  const ppcc_stage_cost *costs,
			  const ppcc_estimate *e, int rank);
/* Action i's times; i may not go back between calls on one t. */
int ppcc_rank_times_at(ppcc_rank_times *t, int32_t i, double *start,
		       double *end);

/* The data-parallel reductions as the runtime launches them
 * (dp_timeline.c), in the simulated step e, one after another on each
 * rank's channel (ppcc_dp_channel_post): each REDUCE_GRAD of stage s
 * ready where the rank reaches it, reduce_ms[s] long, or, with
 * reduce_ms NULL, ppcc_dp_reduce_ms of its bytes (then the same figures
 * as the simulator's dp_end_ms and dp_step_ms); for a schedule without
 * REDUCE_GRAD, one reduction of reduce_ms[s] (0: none) per stage, ready
 * at the end of its rank's last B or W of s.  out_end_ms[r] (may be
 * NULL; n_ranks entries): when rank r's actions and reductions are
 * done; *out_step_ms (may be NULL) the latest.  PPCC_EINTERNAL as
 * ppcc_rank_times_begin, or without reduce_ms for a schedule without
 * REDUCE_GRAD; PPCC_ENOMEM. */
int ppcc_dp_reduce_timeline(double *out_end_ms, double *out_step_ms,
			    const ppcc_schedule *s, const ppcc_stage_cost *costs,
			    const ppcc_estimate *e, const double *reduce_ms);

/* Closed-form bubble fraction for equal stages and free communication, or
 * NAN when none is known for the schedule. */
double ppcc_bubble_closed_form(int kind, int ranks, int chunks,
			       int microbatches);

PPCC_API uint64_t ppcc_schedule_fingerprint(const ppcc_schedule *s);

/* FNV-1a over n bytes at p, continuing from h (PPCC_FNV1A_BASIS to
 * start): the hash of ppcc's in-memory tables, never written out. */
#define PPCC_FNV1A_BASIS 1469598103934665603ull
static inline uint64_t ppcc_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* The fingerprint in pieces, for a pass that hashes as it reads
 * (validate.c): ppcc_fingerprint_head over the header and the stage
 * table, then for each rank in order ppcc_fingerprint_mix of
 * ppcc_fingerprint_pair(rank, n_actions) and ppcc_fingerprint_action of
 * each of its actions in list order. */
uint64_t ppcc_fingerprint_head(const ppcc_schedule *s);

static inline uint64_t ppcc_fingerprint_mix(uint64_t h, uint64_t x)
{
	h ^= x;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

static inline uint64_t ppcc_fingerprint_pair(int32_t a, int32_t b)
{
	return (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
}

static inline uint64_t ppcc_fingerprint_action(uint64_t h, const ppcc_action *a)
{
	h = ppcc_fingerprint_mix(h, ppcc_fingerprint_pair(a->op, a->stage));
	h = ppcc_fingerprint_mix(h, ppcc_fingerprint_pair(a->mb, a->peer));
	return ppcc_fingerprint_mix(h, a->bytes);
}

/* One partition, scheduled and simulated. */
typedef struct ppcc_plan_variant {
	ppcc_stage_info *stages;  /* n_stages */
	ppcc_stage_cost *costs;   /* n_stages */
	int64_t bottleneck_ps;
	ppcc_schedule schedule;
	ppcc_estimate estimate;
	/* ppcc's split only: NULL for the uniform one and when read back
	 * from JSON */
	struct ppcc_iteration *iteration;
} ppcc_plan_variant;

typedef struct ppcc_plan {
	const ppcc_config *config;  /* NULL for a plan read back from JSON */
	const char *model_name;
	int n_layers;
	const ppcc_layer *layers;   /* NULL when read back from JSON */
	ppcc_plan_variant best;     /* ppcc's partition */
	ppcc_plan_variant uniform;  /* equal layer counts, for comparison */
	int has_uniform;            /* 0 for a plan read back from JSON */
	int uniform_fits;           /* the uniform split fits device memory */
	double *memory_cap_bytes;   /* per rank; NULL when read back */
	ppcc_step_result search;    /* how ppcc's split was found (0 when read back) */
	/* With an explicit partition, best is the partition given and own is
	 * ppcc's split, for comparison. */
	ppcc_plan_variant own;
	int has_own;
	int given_fits;
	int64_t least_bottleneck_ps; /* partition.c's optimum, for comparison */
	/* The auto kind: what was tried (NULL for any other kind). */
	const struct ppcc_plan_auto *auto_plan;
} ppcc_plan;

/* What the auto kind tried: each handcrafted kind's own plan, then the
 * orders ppcc_sched_auto simulated on the split of the fastest one-chunk
 * plan. */
typedef struct ppcc_auto_kind_result {
	int kind;
	int chunks;        /* per rank */
	int fits;          /* planned, and its split fits */
	double step_ms;    /* simulated, when it fits */
} ppcc_auto_kind_result;

typedef struct ppcc_plan_auto {
	int n_kinds;
	ppcc_auto_kind_result kinds[PPCC_SCHED_COUNT];
	int chosen_kind;   /* the kind of the schedule written */
	int split_kind;    /* the one-chunk kind whose split the orders
			      were tried on; -1: none fits */
	ppcc_auto_report orders;
} ppcc_plan_auto;

int ppcc_plan_build(ppcc_plan *out, ppcc_arena *a, const ppcc_config *cfg,
		    ppcc_diag *d);

/* Which configurations a caller takes (a trainer's, ppcc_trainer_admits):
 * 1 to take e. */
struct ppcc_search_entry;
typedef int (*ppcc_admits_fn)(const struct ppcc_search_entry *e, void *ctx);

/* ppcc_plan_build, where the auto kind writes only what admits takes (NULL:
 * anything): each kind asked with its settings, the heuristic's and the
 * exact search's orders as kind auto with one chunk.  Other kinds are
 * planned as ppcc_plan_build plans them. */
int ppcc_plan_build_for(ppcc_plan *out, ppcc_arena *a, const ppcc_config *cfg,
			ppcc_diag *d, ppcc_admits_fn admits, void *admits_ctx);

/* What a configuration search needs of ppcc_plan_build: the same split,
 * schedule, estimate and iteration in best (the same figures), without
 * the uniform baseline (has_uniform 0), the schedule's validation and
 * fingerprint (0), or,
 * when nothing fits, the trials of more stages (the memory per device it
 * would fit with is still noted).  With out_bound_ms, the proven lower
 * bound on every split's step that the split search starts from is
 * written there once known, and when it exceeds above_ms nothing is
 * built and the return is 1.  The auto kind is planned in full, as
 * ppcc_plan_build plans it, without a bound.  With shapes (may be NULL),
 * the schedule's shape is taken from there, or built there and kept, and
 * out's schedule shares its action lists (valid until the next plan with
 * the same shapes).  ppcc_plan_shapes_new: a cache whose actions are
 * emptied when they pass max_bytes (NULL when out of memory); the
 * caller's, to free with ppcc_plan_shapes_free. */
typedef struct ppcc_plan_shapes ppcc_plan_shapes;
ppcc_plan_shapes *ppcc_plan_shapes_new(size_t max_bytes);
void ppcc_plan_shapes_free(ppcc_plan_shapes *shapes);
int ppcc_plan_build_lean(ppcc_plan *out, ppcc_arena *a, const ppcc_config *cfg,
			 ppcc_diag *d, double above_ms, double *out_bound_ms,
			 ppcc_plan_shapes *shapes);
/* The same, and with out_memory_unfit (may be NULL: not asked) the
 * memory bound of membound.c before the split search of v > 1 chunks:
 * when it proves that no split fits, nothing is searched, *out_memory_unfit
 * is 1 and the return PPCC_EINFEASIBLE (with a note of the least memory
 * per device proved needed).  With out_stage_bounds_ms (2 entries, may be
 * NULL), the two bounds compared with above_ms, each written as it is
 * proven (NAN: not reached): [0] bound.c's from the cost tables, before
 * any shape (p > 1), [1] the step bound the split search starts from.
 * above_ms is read nowhere else, so the plan under a lower threshold A
 * is this one unless [0] > A (then 1 with *out_bound_ms [0]) or else
 * [1] > A (1 with [1]): the search commits a plan made under another
 * threshold by these alone. */
/* membound.c's bound for cfg's schedule (kind, p, v, m), from the cost
 * tables plan.c plans with: every split has a rank whose simulated peak
 * exceeds its cap by more than *out bytes per device (-INFINITY: nothing
 * proved); the caps to out_caps (p entries) when not NULL.  For tests
 * and reports. */
int ppcc_plan_memory_bound(double *out, double *out_caps, ppcc_arena *a,
			   const ppcc_config *cfg);
int ppcc_plan_build_pruned(ppcc_plan *out, ppcc_arena *a,
			   const ppcc_config *cfg, ppcc_diag *d,
			   double above_ms, double *out_bound_ms,
			   double *out_stage_bounds_ms,
			   ppcc_plan_shapes *shapes, int *out_memory_unfit);

/* A lower bound on the simulated step of every split (bound.c, where
 * it is proven), in the units of the per-layer figures given:
 * lead_f_prefix[k], the forward of the first k layers; lead_fb_prefix
 * (NULL when the kind splits the backward) the same with the backward,
 * each layer's lead at most its work; work_prefix, the compute per
 * microbatch of the first k layers; least_prefix[k], the sum of the k
 * least of those; extra (NULL: none), each rank's p2p per microbatch;
 * first_stage and stage_count per rank, from the kind's stage table;
 * contiguous when rank r holds stage r alone.  Every figure a least one
 * (over device groups, over boundaries): the bound holds for any larger
 * ones. */
typedef struct ppcc_bound_problem {
	int n_layers, n_ranks, microbatches;
	const double *lead_f_prefix, *lead_fb_prefix; /* n_layers + 1 */
	const double *work_prefix, *least_prefix;     /* n_layers + 1 */
	const double *extra;                          /* n_ranks */
	const int *first_stage, *stage_count;         /* n_ranks */
	int contiguous;
	/* the backward's bound (d) of bound.c, NULL when not asked, over
	 * the layers from the last: back_lead_prefix[k], the forward of
	 * every layer plus the input gradient (B, or I under a split
	 * backward) of the last k, each layer's at most its backward;
	 * back_work_prefix, the whole backward of the last k;
	 * back_least_prefix, of the k least; back_first_stage[r], S - 1 -
	 * rank r's highest stage */
	const double *back_lead_prefix, *back_work_prefix, *back_least_prefix;
	const int *back_first_stage;
} ppcc_bound_problem;
double ppcc_bound_step(const ppcc_bound_problem *b);
/* ppcc_bound_step remembered (bound.c): the same bound for a problem
 * whose counts and arrays are, bit for bit, those of one computed
 * before.  ppcc_bound_memo_new: at most max_bytes of problems kept (NULL
 * when out of memory), the caller's to free with ppcc_bound_memo_free;
 * m NULL computes every bound. */
typedef struct ppcc_bound_memo ppcc_bound_memo;
ppcc_bound_memo *ppcc_bound_memo_new(size_t max_bytes);
void ppcc_bound_memo_free(ppcc_bound_memo *m);
double ppcc_bound_step_memo(ppcc_bound_memo *m, const ppcc_bound_problem *b);
/* Bounds answered and computed so far. */
void ppcc_bound_memo_counts(const ppcc_bound_memo *m, long *hits,
			    long *misses);

/* What a configuration's iteration is at least when its step is at
 * least step_ms (plan.c): the gradient reductions and the optimizer
 * step added as iteration.c adds them, from cfg's pipeline settings and
 * layers alone. */
double ppcc_plan_iteration_bound(const ppcc_config *cfg, double step_ms);

/* Resource budget (budget.c).  The number of compute and point-to-point
 * actions the schedule of pl will hold, exact for its kind (saturating
 * at INT64_MAX); and the check
 * to run before ppcc_plan_build: PPCC_EINPUT, with an error at the
 * setting that makes the plan large naming its size in actions, memory
 * and output bytes of `format` (a ppcc_format), when it holds more than
 * max_actions (<= 0: PPCC_MAX_ACTIONS_DEFAULT). */
#define PPCC_MAX_ACTIONS_DEFAULT 4000000
int64_t ppcc_plan_action_count(const ppcc_pipeline *pl);
/* A data-parallel plan's REDUCE_GRAD actions, at most (any partition;
 * 0 without data parallelism), and the schedule's actions with them: what
 * ppcc_plan_budget_check compares with max_actions (see budget.c). */
int64_t ppcc_plan_reduction_bound(const ppcc_config *cfg);
int64_t ppcc_plan_action_bound(const ppcc_config *cfg);
int ppcc_plan_budget_check(const ppcc_config *cfg, int format,
			   int64_t max_actions, ppcc_diag *d);

/* ---- one training iteration (iteration.c) ---------------------------- */

/* Static bytes per parameter of ZeRO stage `zero` over d data-parallel
 * ranks with 16-bit weights, `grad_bytes` gradients and 12 bytes of Adam
 * state: 0: 2 + G + 12; 1: 2 + G + 12/d; 2: 2 + (G + 12)/d;
 * 3: (2 + G + 12)/d.  The three parts are written to out[0..2] (weights,
 * gradients, optimizer state) when out is not NULL. */
double ppcc_zero_bytes_per_param(double *out, int zero, double grad_bytes,
				 int d);

/* pipeline.dp_bucket_mb's range */
#define PPCC_DP_BUCKET_MB_MIN 1.0
#define PPCC_DP_BUCKET_MB_MAX 1000000.0

/* The bytes of one gradient bucket of pl: dp_bucket_mb x 10^6 when
 * given, else Megatron-LM's default, max(40,000,000, 1,000,000 x n)
 * parameters of grad_bytes each, n = d x cp the ranks that reduce. */
double ppcc_dp_bucket_bytes(const ppcc_pipeline *pl);

/* Ring collectives on n ranks of S bytes over l (nccl-tests' bus
 * bandwidth model, one latency per operation); 0 when n == 1. */
double ppcc_allreduce_seconds(const ppcc_link *l, int n, double bytes);
double ppcc_allgather_seconds(const ppcc_link *l, int n, double bytes);

/* Where one iteration's time goes, on the busiest rank (the least idle;
 * the first of equals), in milliseconds: compute + recompute + tp_comm +
 * cp_comm + zero3_comm + p2p + bubble = the schedule's step (zero3_comm:
 * what its computes waited for their ZeRO-3 gathers, the exposed part);
 * + dp_exposed + optimizer = iteration_ms. */
typedef struct ppcc_iteration {
	double iteration_ms;
	double step_ms;
	int rank;                /* the rank of the breakdown */
	double compute_ms, recompute_ms, tp_comm_ms, cp_comm_ms, zero3_comm_ms;
	double p2p_ms, bubble_ms;
	double dp_comm_ms;       /* every gradient bucket, hidden or not */
	/* of dp_comm_ms (on the rank with the most), the part that ran
	 * before the pipeline's step ended: hidden behind the compute */
	double dp_hidden_ms;
	long dp_reductions;      /* REDUCE_GRAD or REDUCE_SCATTER_GRAD
				    actions of the schedule */
	long dp_gathers;         /* its ALL_GATHER_PARAM (or, ZeRO-3,
				    UNSHARD_PARAM) actions */
	double dp_gather_ms;     /* the longest rank's time of them on its
				    channel (the prologue's from time 0) */
	/* the longest any rank's computes waited for their own stages'
	 * gathers (the estimate's dp_gather_wait_ms): the exposed part */
	double dp_gather_exposed_ms;
	double dp_exposed_ms;    /* what lengthens the iteration */
	double optimizer_ms;
	int data_parallel, global_batch_size;
	double tokens_per_s;     /* 0 for a model given as layers */
	double model_flops;      /* per iteration, all devices, no recompute */
	double hardware_flops;   /* the same, counting recompute */
	double model_tflops_per_device, hardware_tflops_per_device;
	double mfu;              /* model FLOP/s over the devices' peak */
	/* per rank, per device, bytes at the peak: */
	double *weight_bytes, *grad_bytes, *optimizer_bytes;
	double *activation_bytes, *logits_bytes, *reserved_bytes;
	double *dp_end_ms;       /* per rank: last gradient bucket reduced */
} ppcc_iteration;

/* The iteration of variant v under cfg: its schedule simulated keeping
 * action or send times (ppcc_rank_times replays them).  Costs O(actions)
 * time and arrays of O(ranks + stages) in the arena, no allocation
 * otherwise: a search may call it for each candidate. */
int ppcc_iteration_estimate(ppcc_iteration *out, ppcc_arena *a,
			    const ppcc_config *cfg,
			    const ppcc_plan_variant *v);

/* ppcc's split of cfg alone (first[s] for each of the p x v stages) and
 * how it was found, without scheduling the plan: what ppcc_plan_build
 * puts in best (or own, with an explicit partition).  The same errors. */
int ppcc_plan_choose_split(int *out_first, ppcc_step_result *out_res,
			   ppcc_arena *a, const ppcc_config *cfg, ppcc_diag *d);

/* One given split of cfg (first[s] for each of the p x v stages),
 * scheduled and simulated as ppcc_plan_build does its own; *out_fits is 1
 * when every rank's simulated peak is within its device's memory.
 * PPCC_EINPUT for a split that is not one (no diagnostic). */
int ppcc_plan_split(ppcc_plan_variant *out, int *out_fits, ppcc_arena *a,
		    const ppcc_config *cfg, const int *first, ppcc_diag *d);

/* ---- the configuration search (search.c) ------------------------------ */

/* One configuration and what ppcc_plan_build estimates for it. */
typedef struct ppcc_search_entry {
	int t, p, d, cp, v, b, m;
	int recompute;           /* ppcc_recompute */
	int zero, kind;
	double iteration_ms, tokens_per_s, mfu;
	double peak_bytes;       /* the simulated peak of the fullest device */
	double bubble;           /* simulated idle fraction */
	double lower_bound_ms;   /* the compute bound it was ordered by */
} ppcc_search_entry;

/* Settings held fixed (--fix): > 0 (recompute, zero, kind: >= 0) fixes. */
typedef struct ppcc_search_fix {
	int tensor_parallel, stages, data_parallel, context_parallel, chunks;
	int micro_batch_size, recompute, zero, kind;
} ppcc_search_fix;

/* One configuration of a --compare file (ppcc_compare_load): the
 * pipeline settings it gives, located, the others 0 with no location;
 * micro_batch_size 0 and recompute -1 when it gives none (the model's
 * then). */
typedef struct ppcc_compare_entry {
	const char *name;       /* its name:, or NULL */
	ppcc_loc loc;           /* the entry */
	ppcc_pipeline pipeline; /* loc: its pipeline: key, else the entry */
	int micro_batch_size, recompute;
	ppcc_loc micro_batch_size_loc, recompute_loc;
} ppcc_compare_entry;

/* Reads a --compare file (format: ppcc(1), "ppcc search"): a mapping
 * with `compare:`, a list of entries, or the JSON ppcc search -f json
 * writes, whose `top` it reads.  Each error located; PPCC_EINPUT after
 * reporting them, PPCC_ENOMEM. */
int ppcc_compare_load(ppcc_compare_entry **out, int *n_out, ppcc_arena *a,
		      const char *path, ppcc_diag *d);

typedef struct ppcc_search_options {
	long global_batch;         /* 0: pipeline.global_batch_size, else the
				    * batch the file's pipeline settings give */
	int top;                   /* K, 0: 10 */
	int exhaustive;            /* 1: simulate every candidate */
	int allow_idle;            /* 1: t p d cp may leave devices idle */
	int no_hints;              /* 1: nothing fits, do not search what would */
	double memory_limit_bytes; /* per device; 0: the devices' */
	ppcc_search_fix fix;
	/* NULL, or a trainer's rules: a configuration for which it returns
	 * 0 is not considered (ppcc search -f megatron searches what
	 * Megatron-LM runs) */
	ppcc_admits_fn admits;
	void *admits_ctx;
	/* configurations judged beside the search's own (--compare) */
	const ppcc_compare_entry *compare;
	int n_compare;
	/* threads planning candidates (the answer is the same for any
	 * number); 0: one per processor online */
	int threads;
} ppcc_search_options;

/* The dimensions a family of configurations shares a value of. */
enum {
	PPCC_DIM_T, PPCC_DIM_P, PPCC_DIM_CP, PPCC_DIM_V, PPCC_DIM_KIND,
	PPCC_DIM_RECOMPUTE, PPCC_DIM_ZERO, PPCC_DIM_COUNT
};

/* Every candidate with one value of one dimension, and what became of
 * them: the best that fits (has_best), else the least compute bound of
 * those not simulated for it (bound_ms, INFINITY if none). */
typedef struct ppcc_search_family {
	int dim, value;
	long enumerated, pruned_memory, pruned_bound, invalid, infeasible;
	int has_best;
	ppcc_search_entry best;
	double bound_ms;
} ppcc_search_family;

/* What would make a search that found nothing fit: the same search with
 * one thing changed (what, in words), and its best configuration. */
typedef struct ppcc_search_hint {
	char what[80];
	ppcc_search_entry best;
} ppcc_search_hint;

/* A compared configuration as the search judged it: its settings
 * completed as ppcc plan completes them, its figures when it fits (else
 * the memory per device it would need, need_exact 0: at least that, 0:
 * not known), and its rank among the search's configurations: 1 + those
 * faster (rank_exact 0: at least that, for some not simulated could be
 * faster too); in_space: one of the search's own candidates. */
typedef struct ppcc_search_compared {
	const ppcc_compare_entry *from;
	ppcc_search_entry e;
	int fits, in_space, rank_exact, need_exact;
	long rank;
	double need_bytes;
} ppcc_search_compared;

typedef struct ppcc_search_result {
	ppcc_search_entry *top;    /* n_top, best first */
	int n_top;
	long global_batch;
	int global_batch_given;    /* 0: from the file's pipeline settings */
	long considered;           /* enumerated */
	long pruned_memory;        /* a memory bound: no partition fits */
	long memory_proved;        /* of those, proved by membound.c before
				    * the split search of v > 1 chunks */
	long pruned_bound;         /* compute bound above the K-th best */
	long invalid;              /* refused by ppcc_config_check */
	long simulated;            /* partitioned and simulated */
	long infeasible;           /* of those, no partition fits */
	long faster_unfit;         /* bound under the winner's iteration,
				    * but no partition fits */
	ppcc_search_family *families; /* n_families, by dimension and value */
	int n_families;
	/* nothing fits: the candidate that came closest, the memory per
	 * device it would need (closest_exact: from its simulation, else
	 * the static bound), and what would fit */
	int has_closest, closest_exact;
	ppcc_search_entry closest;
	double closest_need_bytes, memory_bytes;
	ppcc_search_hint hints[8];
	int n_hints;
	ppcc_search_compared *compared; /* n_compared, in the file's order */
	int n_compared;
	double seconds;
} ppcc_search_result;

/* Searches cfg's model on cfg's cluster (search.c says how and why its
 * pruning keeps the top K).  PPCC_EINPUT without a global batch,
 * PPCC_EINFEASIBLE when nothing fits. */
int ppcc_search(ppcc_search_result *out, ppcc_arena *a,
		const ppcc_config *cfg, const ppcc_search_options *o,
		ppcc_diag *d);

/* e in words: "t 8 x p 4 x d 2 x cp 1, 1f1b with v 1, b 1 (m 32),
 * recompute selective, ZeRO-1". */
void ppcc_search_entry_describe(char *buf, size_t size,
				const ppcc_search_entry *e);

/* base with e's settings (layers re-expanded for its b and recompute),
 * located at "<search>": what ppcc_plan_build plans to e's figures. */
int ppcc_search_config(ppcc_config *out, ppcc_arena *a,
		       const ppcc_config *base, const ppcc_search_entry *e);

/* The bound a candidate of the search is ordered and pruned by before
 * it is planned (search.c, candidate_bound): bound.c's from the layers'
 * FLOPs, raised to the iteration (ppcc_plan_iteration_bound), for cfg's
 * pipeline settings (checked); at most the iteration of every split.
 * 0 when out of memory. */
double ppcc_search_bound_ms(const ppcc_config *cfg);

/* ---- output ----------------------------------------------------------- */

/* The bytes of the invisible or direction-changing character (a BiDi
 * control, a zero-width or other format character) that s starts with,
 * and its code point in *out_cp (may be NULL); 0 when s starts with none.
 * Text for people shows such a character as <U+XXXX> (visible.c). */
size_t ppcc_invisible_at(const char *s, uint32_t *out_cp);

/* s on f for a person, on one line: a control character as \xNN (no
 * name can forge a line or a terminal escape), an invisible or
 * direction-changing one as <U+XXXX>. */
void ppcc_fput_visible(FILE *f, const char *s);

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

/* Reads a schedule JSON written by ppcc_emit_json into a plan whose best
 * variant holds the stages, costs (fwd_ms/bwd_ms) and schedule; reports
 * format errors with the JSON's line and column. */
int ppcc_read_json(ppcc_plan *out, ppcc_arena *a, const char *path,
		   ppcc_diag *d);

#endif
