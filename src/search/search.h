/*
 * search.h - the configuration search: entries, fixes, --compare files,
 * families and the pruning bound.
 * Part of the internal interface; src/ppcc.h includes every such header.
 */
#ifndef PPCC_SEARCH_SEARCH_H
#define PPCC_SEARCH_SEARCH_H

#include "sim/iteration.h"

/* One configuration and what ppcc_plan_build estimates for it. */
typedef struct ppcc_search_entry {
	int t, p, d, cp, v, b, m;
	/* a mixture of experts' ep and etp (pipeline.expert_parallel,
	 * expert_tensor_parallel); 1 and 0 (t) for a dense model */
	int ep, etp;
	int recompute;           /* ppcc_recompute */
	int zero, kind;
	double iteration_ms, tokens_per_s, mfu;
	double peak_bytes;       /* the simulated peak of the fullest device */
	double headroom_bytes;   /* the least memory a device leaves free
				  * beyond the reserve at its peak */
	double bubble;           /* simulated idle fraction */
	double lower_bound_ms;   /* the compute bound it was ordered by */
} ppcc_search_entry;

/* Settings held fixed (--fix): > 0 (recompute, zero, kind: >= 0) fixes. */
typedef struct ppcc_search_fix {
	int tensor_parallel, stages, data_parallel, context_parallel, chunks;
	int micro_batch_size, recompute, zero, kind;
	int expert_parallel, expert_tensor_parallel;
} ppcc_search_fix;

/* One configuration of a --compare file (ppcc_compare_load): the
 * pipeline settings it gives, located, the others 0 with no location;
 * micro_batch_size 0 and recompute -1 when it gives none (the model's
 * then); recompute_modules only where the model's are. */
typedef struct ppcc_compare_entry {
	const char *name;       /* its name:, or NULL */
	ppcc_loc loc;           /* the entry */
	ppcc_pipeline pipeline; /* loc: its pipeline: key, else the entry */
	int micro_batch_size, recompute;
	/* transformer.recompute_modules as a search's JSON writes it,
	 * PPCC_RC_* bits; 0 when it gives none */
	unsigned recompute_modules;
	ppcc_loc micro_batch_size_loc, recompute_loc, recompute_modules_loc;
} ppcc_compare_entry;

/* Reads a --compare file (format: ppcc(1), "ppcc search"): a mapping
 * with `compare:`, a list of entries, or the JSON ppcc search -f json
 * writes, whose `top` it reads.  Each error located; PPCC_EINPUT after
 * reporting them, PPCC_ENOMEM. */
int ppcc_compare_load(ppcc_compare_entry **out, int *n_out, ppcc_arena *a,
		      const char *path, ppcc_diag *d);

/* Where a search stands, for a progress line (ppcc_search_options.
 * progress): the configurations enumerated so far, those simulated,
 * pruned (by a memory bound or a bound on the iteration) and refused by
 * the configuration checks; left: those still to plan under the current
 * threshold (at most that many: the threshold only falls), and left_s
 * the seconds they would take at the pace so far (NAN before planning
 * starts); seconds since the search began.  done: the last call of a
 * search, after which nothing of it is shown. */
typedef struct ppcc_search_progress {
	long considered, simulated, pruned, refused, left;
	double seconds, left_s;
	int done;
} ppcc_search_progress;
typedef void (*ppcc_search_progress_fn)(const ppcc_search_progress *p,
					void *user);

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
	/* each configuration's plan budget, and (max_work) the whole
	 * search's: refused before anything is planned when the work its
	 * configurations may take (search.c, cand_work) is over it; with
	 * exhaustive and no max_work, no limit on the whole */
	ppcc_budget budget;
	/* > 0: stop simulating after this many seconds and rank what was
	 * simulated (result.stopped_early); 0: no limit */
	double time_limit_s;
	int64_t work_spent; /* counted against max_work before (the hints) */
	/* a fraction: configurations whose iterations differ from the
	 * fastest's by less tie with it, and among those ties the one with
	 * the most headroom ranks first; every candidate with a bound
	 * under the fastest's iteration x (1 + tie_band) is simulated.  0:
	 * no ties (ppcc search takes its devices' ppcc_device_tie_band) */
	double tie_band;
	/* the memory each device must leave free beyond the cluster's
	 * reserve for a configuration to fit (--headroom); 0: none */
	double headroom_bytes;
	/* NULL, or called with the search's progress, often (after each
	 * configuration planned, and while bounding): always from the
	 * thread that called ppcc_search, never from a helper, so it needs
	 * no lock of its own; the callee decides what to show and when.
	 * The searches run for hints when nothing fits call it too. */
	ppcc_search_progress_fn progress;
	void *progress_user;
} ppcc_search_options;

/* ppcc search's headroom when --headroom is not given: this percent of
 * the memory a device has for training (its memory less the reserve;
 * the smallest of a mixed cluster's), the memory model's largest error
 * on the peaks it was fitted on (ppcc(1), doc/design/memory.md). */
#define PPCC_SEARCH_HEADROOM_PCT PPCC_TORCHTITAN_MEMORY_WORST_PCT

/* The dimensions a family of configurations shares a value of. */
enum {
	PPCC_DIM_T, PPCC_DIM_P, PPCC_DIM_CP, PPCC_DIM_V, PPCC_DIM_KIND,
	PPCC_DIM_RECOMPUTE, PPCC_DIM_ZERO, PPCC_DIM_EP, PPCC_DIM_ETP,
	PPCC_DIM_COUNT
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
 * one thing changed (what, in words), and its best configuration, with
 * the figures that search planned for it. */
enum {
	PPCC_HINT_DEVICES,  /* more of the same devices */
	PPCC_HINT_BATCH,    /* a smaller global batch */
	PPCC_HINT_SETTING,  /* a setting --fix pinned, changed or freed */
	PPCC_HINT_DEVICE    /* a larger device of the catalogue */
};
typedef struct ppcc_search_hint {
	int kind;           /* PPCC_HINT_* */
	char what[96];
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
	/* the least memory per device any configuration enumerated needs,
	 * proved from its weights, optimizer state and one microbatch's
	 * activations (reserve included): independent of the microbatch
	 * count, so no smaller global batch fits either when it exceeds
	 * memory_bytes (no_smaller_batch) */
	double least_need_bytes;
	int no_smaller_batch;
	/* every device names one preset, and none of the catalogue's has
	 * least_need_bytes */
	int no_larger_device;
	ppcc_search_hint hints[16];
	int n_hints;
	ppcc_search_compared *compared; /* n_compared, in the file's order */
	int n_compared;
	double seconds;
	/* the work counted before planning (ppcc_budget), hints' included */
	int64_t work;
	/* the fastest configuration (top is ranked with ties), and how
	 * many that fit tie with it: the first of top, in headroom order */
	ppcc_search_entry fastest;
	long ties;
	int stopped_early;         /* time_limit_s reached */
	long not_simulated;        /* when stopped: candidates left */
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

/* One entry of the JSON ppcc search -f json writes (search/read.c), and
 * what the search planned it with; strings in the arena. */
typedef struct ppcc_search_pick {
	const char *path;          /* the JSON, as named ("<stdin>" for -) */
	int rank, n_top;           /* the entry (1-based) of the n ranked */
	ppcc_search_entry e;       /* its settings and figures */
	const char *model_file;    /* absolute; "-": the search read stdin */
	const char *cluster_file;  /* NULL: the model file's cluster */
	const char *model_text;    /* the YAML of --model and --devices, when
				    * model_file is "<command line>"; or NULL */
	int trainer;               /* --trainer's (ppcc_trainer), or -1 */
	uint64_t model_fingerprint, cluster_fingerprint; /* FNV-1a 64 */
	double memory_limit_bytes; /* --memory-limit; 0: the devices' */
	double headroom_bytes;     /* --headroom's, kept free beside the
				    * reserve as the search planned */
	ppcc_loc headroom_loc;     /* in the JSON */
	ppcc_loc entry_loc, model_loc, cluster_loc; /* in the JSON */
	ppcc_loc model_text_loc;
	/* the entry's pipeline settings, where the JSON gives them (the
	 * entry's place when not) */
	ppcc_loc kind_loc, stages_loc, microbatches_loc, chunks_loc,
		tensor_parallel_loc, data_parallel_loc, context_parallel_loc,
		global_batch_size_loc, zero_loc, expert_parallel_loc,
		expert_tensor_parallel_loc;
} ppcc_search_pick;

/* The keys ppcc search writes in an entry's pipeline and transformer
 * (cli/search.c, json_settings), NULL-terminated: what --from-search and
 * a compare file's search entries take. */
extern const char *const ppcc_search_pipeline_keys[];
extern const char *const ppcc_search_transformer_keys[];

/* Puts the locations of pick's settings on cfg's pipeline, which
 * ppcc_search_config built from its entry. */
void ppcc_search_pick_locate(ppcc_config *cfg, const ppcc_search_pick *pick);

/* Reads entry rank (1-based, as the search's table numbers them) of the
 * search's JSON at path ("-": stdin): 0; PPCC_EINPUT after reporting,
 * at FILE:LINE:COL, what is wrong (not JSON, not a search's output, an
 * older version, rank past the entries: how many there are, a bad
 * entry); PPCC_ENOMEM. */
int ppcc_search_read(ppcc_search_pick *out, ppcc_arena *a, const char *path,
		     int rank, ppcc_diag *d);

/* The bound a candidate of the search is ordered and pruned by before
 * it is planned (search.c, candidate_bound): bound.c's from the layers'
 * FLOPs, raised to the iteration (ppcc_plan_iteration_bound), for cfg's
 * pipeline settings (checked); at most the iteration of every split.
 * 0 when out of memory. */
double ppcc_search_bound_ms(const ppcc_config *cfg);

#endif
