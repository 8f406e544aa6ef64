/*
 * ppcc/runtime.h - run one rank's pipeline schedule.
 *
 * A trainer hands the runtime the schedule (a generated header's `static
 * const ppcc_schedule`, or a JSON file from `ppcc plan -f json`) and, for
 * each stage it owns, its compute callbacks.  The runtime runs the rank's
 * actions in list order, calls forward and backward, moves what they
 * produce, and owns every buffer that crosses a stage boundary.  Every
 * wait has a timeout; on any failure every rank stops and reports.
 * Transports: `local` (one thread per rank), `mpi` (one process per rank)
 * and `nccl` (device buffers; options.world for its loopback mode); a
 * libppcc built without MPI or NCCL answers PPCC_RT_EUNAVAILABLE.
 * Callbacks return 0, or nonzero to fail the step (this rank stops with
 * PPCC_RT_ECALLBACK, the others with PPCC_RT_EPEER); a rank's callbacks
 * never run concurrently; with nccl they enqueue their work on
 * ppcc_rt_cuda_stream() (or synchronise before returning).  Buffers:
 * forward's `input` stays valid until the backward (or backward_weight)
 * of its (stage, microbatch) returns, backward's `grad_output` until
 * backward (or backward_weight) returns, every other buffer only during
 * its call; after that the runtime recycles it.  What blocks, grouping
 * and how nccl ranks learn of a failure: ppcc_runtime(3), and the
 * reasoning in doc/design/runtime.md.  Data parallelism and ZeRO:
 * ppcc/runtime_dp.h, which this header includes at its end.
 *
 * This header compiles alone as C11 and as C++.
 */
#ifndef PPCC_RUNTIME_H
#define PPCC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "ppcc/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Statuses.  The first five share their values with the compiler's. */
typedef enum ppcc_rt_status {
	PPCC_RT_OK = 0,
	PPCC_RT_ENOMEM = -1,       /* allocation failed */
	PPCC_RT_EINPUT = -2,       /* invalid schedule, options or callbacks */
	PPCC_RT_EIO = -4,          /* the schedule file cannot be read */
	PPCC_RT_EINTERNAL = -5,    /* a bug: an invariant does not hold */
	PPCC_RT_ETIMEOUT = -20,    /* a wait on this rank passed the timeout */
	PPCC_RT_ECALLBACK = -21,   /* a callback on this rank returned nonzero */
	PPCC_RT_EPEER = -22,       /* another rank failed; this one stopped */
	PPCC_RT_ECHECKSUM = -23,   /* debug: a message failed its check */
	PPCC_RT_EMISMATCH = -24,   /* the ranks hold different schedules */
	PPCC_RT_ETRANSPORT = -25,  /* MPI, NCCL or CUDA reported an error */
	PPCC_RT_EUNAVAILABLE = -26 /* transport not built into this libppcc */
} ppcc_rt_status;

/* A short lower-case description ("timeout", "peer failed", ...). */
PPCC_API const char *ppcc_rt_status_str(int status);

typedef enum ppcc_rt_transport {
	PPCC_RT_LOCAL = 0,
	PPCC_RT_MPI = 1,
	PPCC_RT_NCCL = 2
} ppcc_rt_transport;

/* 1 when this libppcc was built with the transport. */
PPCC_API int ppcc_rt_transport_available(int transport);

/* A 64-bit hash of every field of the schedule in a fixed order and width:
 * equal on every rank exactly when the schedules are equal.  Generated
 * headers store it in ppcc_schedule.fingerprint. */
PPCC_API uint64_t ppcc_schedule_fingerprint(const ppcc_schedule *s);

/* ---- callbacks ---------------------------------------------------------- */

/* F.  input: input_bytes (the stage's recv_bytes) received from stage-1,
 * NULL on stage 0.  output: output_bytes (send_bytes) to fill, NULL on the
 * last stage, whose forward computes and keeps the microbatch's loss. */
typedef int (*ppcc_rt_forward_fn)(int stage, int mb, const void *input,
				  size_t input_bytes, void *output,
				  size_t output_bytes, void *user);

/* B, and I (the input-gradient half of a split backward).  grad_output:
 * the gradient of the stage's output (send_bytes), NULL on the last stage
 * (the gradient of its loss).  grad_input: the gradient of the stage's
 * input to fill (recv_bytes), NULL on stage 0.  B also accumulates the
 * stage's weight gradients; I leaves them to W. */
typedef int (*ppcc_rt_backward_fn)(int stage, int mb, const void *grad_output,
				   size_t grad_output_bytes, void *grad_input,
				   size_t grad_input_bytes, void *user);

/* W, the weight-gradient half of a split backward, after I of the same
 * (stage, microbatch).  grad_output as I saw it. */
typedef int (*ppcc_rt_weight_fn)(int stage, int mb, const void *grad_output,
				 size_t grad_output_bytes, void *user);

/* Optional, last stage only: called right after its forward; *out_loss is
 * added to ppcc_rt_stats.loss_sum. */
typedef int (*ppcc_rt_loss_fn)(double *out_loss, int stage, int mb,
			       void *user);

/* The callbacks of one stage.  ppcc_rt_step takes an array of n_stages of
 * these, indexed by stage; only the entries of the rank's own stages are
 * read.  forward is needed for every stage, backward when the schedule
 * has B actions, backward_input and backward_weight when it has I/W.
 *
 * Versioned like ppcc_rt_options: version is PPCC_RT_STAGE_FNS_VERSION
 * (0, what a zeroed or six-field initializer leaves, is read as 1); later
 * versions only append fields after it, and the runtime steps through
 * the array by the size of the version in fns[0], so a trainer built
 * against an older header keeps working. */
#define PPCC_RT_STAGE_FNS_VERSION 1

typedef struct ppcc_rt_stage_fns {
	ppcc_rt_forward_fn forward;
	ppcc_rt_backward_fn backward;
	ppcc_rt_backward_fn backward_input;
	ppcc_rt_weight_fn backward_weight;
	ppcc_rt_loss_fn loss;
	void *user;
	int version; /* PPCC_RT_STAGE_FNS_VERSION; every entry the same */
} ppcc_rt_stage_fns;

/* ---- options -------------------------------------------------------------- */

/* One line, without a newline, e.g.
 *   ppcc-rt: rank 1: action 7 RECV_F stage 1 mb 2 peer 0: timeout:
 *   waited 2.000 s; last: #6 F s1 mb1 0.120 ms, ...
 * The default writes it and a newline to stderr.  May be called from any
 * rank's thread (local), never concurrently for one rank. */
typedef void (*ppcc_rt_diag_fn)(int rank, const char *line, void *user);

typedef enum ppcc_rt_message_event {
	PPCC_RT_MSG_SENT = 0,    /* handed to the transport */
	PPCC_RT_MSG_RECEIVED = 1 /* arrived (and, in debug mode, verified) */
} ppcc_rt_message_event;

/* One message between stages.  kind is PPCC_OP_SEND_F (an activation,
 * src_stage + 1 == dst_stage) or PPCC_OP_SEND_B (a gradient, src_stage -
 * 1 == dst_stage); bytes is the payload, without the debug trailer. */
typedef struct ppcc_rt_message {
	int event; /* ppcc_rt_message_event */
	int kind;
	int src, dst; /* ranks */
	int src_stage, dst_stage;
	int mb;
	uint64_t bytes;
	uint64_t step; /* ppcc_rt_step calls before this one on the rank */
} ppcc_rt_message;

typedef void (*ppcc_rt_message_fn)(const ppcc_rt_message *msg, void *user);

typedef struct ppcc_rt_local_world ppcc_rt_local_world;
typedef struct ppcc_rt_dp_group ppcc_rt_dp_group;

/* ABI rule for ppcc_rt_options: fields are only ever appended; a caller
 * sets version to the PPCC_RT_OPTIONS_VERSION it was compiled with
 * (PPCC_RT_OPTIONS_INIT does), and the runtime reads only the fields
 * that version has, taking every later one at its default.  Versions
 * above this header's are refused (PPCC_RT_EINPUT). */
#define PPCC_RT_OPTIONS_VERSION 3
#define PPCC_RT_TIMEOUT_MAX 86400.0 /* seconds: the longest wait, one day */
#define PPCC_RT_NCCL_ID_BYTES 128 /* sizeof(ncclUniqueId) */

typedef struct ppcc_rt_options {
	int version;      /* PPCC_RT_OPTIONS_VERSION */
	int transport;    /* ppcc_rt_transport */
	/* Seconds any one wait may last.  <= 0: $PPCC_TIMEOUT, else 300;
	 * NaN or infinite: ppcc_rt_init fails (PPCC_RT_EINPUT); above
	 * PPCC_RT_TIMEOUT_MAX: that, with a warning. */
	double timeout_s;
	/* 1: checksum and check every message (also $PPCC_DEBUG=1). */
	int debug;
	/* Receives are posted this many compute actions ahead of the one
	 * that needs them (0: at their place in the list). */
	int recv_ahead;
	/* Actions in a failure's flight record (0: 8). */
	int flight_record;
	/* 1: post SEND/RECV actions in deadlock-free groups, each waited for
	 * as a whole (always on for nccl; off: receives posted ahead, sends
	 * complete in the background). */
	int grouped;
	/* local: the world the rank joins (ppcc_rt_local_world_new); one
	 * world per set of ranks that run together; NULL for one rank. */
	ppcc_rt_local_world *world;
	/* nccl: PPCC_RT_NCCL_ID_BYTES bytes of an ncclUniqueId every rank
	 * was given; NULL: rank 0 makes one and broadcasts it over MPI. */
	const void *nccl_id;
	/* nccl: the CUDA device; -1: by the rank's place on its node
	 * (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID,
	 * LOCAL_RANK, else under MPI the ranks on the same host, else the
	 * rank): that device, or device 0 when only one is visible; init
	 * fails (PPCC_RT_EINPUT) when the node has more ranks than devices.
	 * Loopback: -1 is device 0. */
	int cuda_device;
	ppcc_rt_diag_fn diag;
	void *diag_user;
	/* Called on every message sent and received, from the rank's own
	 * thread; NULL: none. */
	ppcc_rt_message_fn on_message;
	void *message_user;
	/* Version 2.  Data parallelism (local transport; mpi: see
	 * data_parallel): the group of the
	 * d runtimes that run this pipeline rank in d replicas
	 * (ppcc_rt_dp_group_new), each replica a pipeline of its own (its
	 * own local world), and this runtime's replica in 0..d-1; NULL: no
	 * data parallelism.  See ppcc_rt_grad_register. */
	ppcc_rt_dp_group *dp_group;
	int replica;
	/* Version 3.  Data parallelism over mpi or nccl: the number d of
	 * replicas of the pipeline; the world (MPI_COMM_WORLD, or nccl's
	 * p x d ranks with nccl_id, each given its world rank) then has
	 * p x d ranks, and world rank w runs pipeline rank w / d of
	 * replica w % d (the d replicas of a pipeline rank are adjacent
	 * world ranks).  0: no data parallelism, the world is the
	 * pipeline.  local and nccl's loopback refuse a nonzero value
	 * (local: dp_group). */
	int data_parallel;
} ppcc_rt_options;

#define PPCC_RT_OPTIONS_INIT                                              \
	{ PPCC_RT_OPTIONS_VERSION, PPCC_RT_LOCAL, 0.0, 0, 1, 0, 0, NULL,  \
	  NULL, -1, NULL, NULL, NULL, NULL, NULL, 0, 0 }

/* ---- statistics ------------------------------------------------------------ */

/* One rank's figures for one ppcc_rt_step (for ppcc_rt_run_local, one
 * entry per rank).  Times are wall-clock seconds.
 *
 * Versioned like ppcc_rt_options: the caller sets version to the
 * PPCC_RT_STATS_VERSION it was compiled with (PPCC_RT_STATS_INIT does;
 * 0, what a zeroed struct holds, is read as 1), and the runtime writes
 * only the fields that version has, leaving version as it was; later
 * versions only append fields.  A version above the runtime's is refused
 * (PPCC_RT_EINPUT) before anything runs or is written.  For
 * ppcc_rt_run_local the entries are stepped through by the size of the
 * version in out[0]. */
#define PPCC_RT_STATS_VERSION 1
#define PPCC_RT_STATS_INIT                                                \
	{ PPCC_RT_STATS_VERSION, 0, 0, 0.0, 0.0, 0.0, 0, 0, 0, 0, 0, 0, 0, \
	  0.0, 0, 0, 0, 0, 0, 0, 0.0 }

typedef struct ppcc_rt_stats {
	int version; /* PPCC_RT_STATS_VERSION, set by the caller */
	int rank;
	int status;              /* what ppcc_rt_step returned on this rank */
	double step_s;           /* the whole step */
	double busy_s;           /* inside callbacks */
	double wait_s;           /* blocked on receives, sends and groups */
	uint64_t bytes_sent;     /* payload bytes */
	uint64_t bytes_received;
	uint64_t messages_sent;
	uint64_t messages_received;
	int peak_buffers;        /* runtime buffers in use at once */
	uint64_t peak_buffer_bytes;
	int pool_buffers;        /* buffers the pool holds (all steps) */
	double loss_sum;         /* of the loss callback's values */
	int loss_count;
	/* The failure, when status != 0: the action (-1 before the first or
	 * after the last), its op, stage, microbatch and peer (-1 when none),
	 * and how long the rank had waited there. */
	int failed_action;
	int failed_op;
	int failed_stage;
	int failed_mb;
	int failed_peer;
	double failed_waited_s;
} ppcc_rt_stats;

/* ---- the runtime ------------------------------------------------------------- */

typedef struct ppcc_rt ppcc_rt;

/* Reads a schedule written by `ppcc plan -f json` and validates it.
 * *out is the caller's to free with ppcc_rt_schedule_free.  Problems go
 * to opts->diag (opts may be NULL: stderr) as `FILE:LINE:COL: message`;
 * returns PPCC_RT_EIO or PPCC_RT_EINPUT. */
PPCC_API int ppcc_rt_schedule_load(ppcc_schedule **out, const char *path,
			  const ppcc_rt_options *opts);
PPCC_API void ppcc_rt_schedule_free(ppcc_schedule *s);

/* A set of n_ranks ranks that run in threads of this process.  *out is
 * the caller's to free, after every rank that joined it is freed. */
PPCC_API int ppcc_rt_local_world_new(ppcc_rt_local_world **out, int n_ranks);
PPCC_API void ppcc_rt_local_world_free(ppcc_rt_local_world *w);

/* Joins the transport as `rank` (mpi: ignored, MPI_COMM_WORLD's rank is
 * used; MPI_Init must have been called; nccl with options.nccl_id and
 * data_parallel: the world rank), validates s (problems reported
 * through opts->diag, PPCC_RT_EINPUT), and compares s's fingerprint with
 * every other rank's: PPCC_RT_EMISMATCH on every rank when any differs,
 * PPCC_RT_EPEER when another rank failed to start.  Blocks until all ranks
 * have joined or the timeout.  s and opts->world are borrowed and must
 * outlive the runtime; *out is the caller's to free with ppcc_rt_free.
 * opts NULL means PPCC_RT_OPTIONS_INIT; a local rank needs opts->world
 * unless the schedule has one rank. */
PPCC_API int ppcc_rt_init(ppcc_rt **out, const ppcc_schedule *s, int rank,
		 const ppcc_rt_options *opts);

/* This rank, and (nccl) its compute stream as a cudaStream_t (NULL for
 * the other transports). */
PPCC_API int ppcc_rt_rank(const ppcc_rt *rt);
PPCC_API void *ppcc_rt_cuda_stream(const ppcc_rt *rt);

/* Runs the rank's action list once (one training step; call it again for
 * the next).  fns has n_stages entries, indexed by stage.  Fills *out (out
 * may be NULL) and returns 0 or the failure's status, having reported it
 * in one diagnostic line.  After a failure every later step returns
 * PPCC_RT_EPEER at once: free the runtime.  (mpi and nccl over MPI: a
 * peer may be stuck in a callback, and a collective that timed out stays
 * posted with its buffer kept alive; call MPI_Abort rather than
 * MPI_Finalize after a failure.) */
PPCC_API int ppcc_rt_step(ppcc_rt_stats *out, ppcc_rt *rt,
		 const ppcc_rt_stage_fns *fns);

/* Writes this rank's flight record to $PPCC_FLIGHT_DIR now (see
 * ppcc_runtime(3), "When a job hangs"); safe to call from another thread
 * of the process while the rank runs.  PPCC_RT_EINPUT when the variable
 * was unset at ppcc_rt_init, PPCC_RT_EIO when the file cannot be
 * written.  (SIGUSR1 does the same for every runtime of the process.) */
PPCC_API int ppcc_rt_dump(ppcc_rt *rt);

/* From a callback: microbatch mb of the running step holds the trainer's
 * sample `sample` (a data loader's index, say), for the flight record and
 * ppcc diagnose.  Acts on the rank whose callback calls it; 0, or
 * PPCC_RT_EINPUT outside a callback or with recording off. */
PPCC_API int ppcc_rt_flight_sample(int mb, uint64_t sample);

/* ---- all-to-all (expert parallelism) --------------------------------------
 *
 * The all-to-all of a mixture-of-experts layer (token dispatch and
 * combine) among the n_group ranks of group, over the runtime's
 * transport.  group lists distinct ranks of the transport's world, the
 * same list in the same order on every member, this rank among them:
 * local and nccl's loopback, the local world's ranks; mpi and nccl, the
 * world ranks (with options.data_parallel = d, world rank w is pipeline
 * rank w / d of replica w % d, so the d replicas of pipeline rank k,
 * k * d .. k * d + d - 1, are a data-parallel group to carve expert
 * groups from).  Member j of the group is index j below.  Counts and
 * displacements are in elements of elem_bytes bytes: in_counts[j]
 * elements from in + in_displs[j] * elem_bytes go to member j, which
 * receives them at its out + out_displs[i] * elem_bytes, i this rank's
 * index; out_counts[j] must be what member j sends here (zero counts
 * are messages too).  Over nccl in and out are device memory and the
 * sends follow the compute stream's work so far.  Returns once every
 * message has arrived and every send has completed (each wait bounded
 * by the timeout), or the failure's status, having reported it in one
 * diagnostic line and the flight record: the rank is then failed (the
 * others stop with PPCC_RT_EPEER, later steps return it; a callback
 * that called it fails its step whatever it returns).  PPCC_RT_EINPUT,
 * checked before anything moves: a member out of the world or twice,
 * this rank absent, elem_bytes 0, a NULL array, in or out NULL with
 * elements there, overlapping regions of out, or of in and out.  A
 * collective: the k-th call of every member is one all-to-all.  Call it
 * from one of the rank's compute callbacks or between steps, on the
 * rank's thread.  Not counted in ppcc_rt_stats nor given to
 * on_message; no debug trailer.  ppcc_runtime(3), "All-to-all". */
PPCC_API int ppcc_rt_alltoallv(void *out, const size_t *out_counts,
			       const size_t *out_displs, ppcc_rt *rt,
			       const void *in, const size_t *in_counts,
			       const size_t *in_displs, size_t elem_bytes,
			       const int *group, int n_group);

/* Releases the buffers and leaves the transport.  NULL is a no-op. */
PPCC_API void ppcc_rt_free(ppcc_rt *rt);

/* Runs one step of every rank of s, each in its own thread over the local
 * transport, or nccl's loopback when opts->transport is PPCC_RT_NCCL
 * (opts->world is ignored; the other transports are replaced by local).  out, when not
 * NULL, has s->n_ranks entries.  Returns 0, or the status of the rank
 * that failed first (the cause, not the ranks it stopped). */
PPCC_API int ppcc_rt_run_local(ppcc_rt_stats *out, const ppcc_schedule *s,
		      const ppcc_rt_stage_fns *fns,
		      const ppcc_rt_options *opts);

#ifdef __cplusplus
}
#endif

/* Data parallelism and ZeRO (ppcc_rt_dp_*, ppcc_rt_shard, ...). */
#include "ppcc/runtime_dp.h"

#endif
