/*
 * rt_pipe.h - a numeric pipeline whose every result is known, for the
 * runtime's tests (check_runtime.c and the runtime's other suites,
 * rt_mpi_prog.c) and benchmark.
 *
 * Stage s maps its input x (len[s] doubles; stage 0's comes from a
 * deterministic "data loader") to y (len[s+1] doubles):
 *
 *   y[j] = w[s] * x[j % len[s]] + c[s] * j
 *
 * and the last stage's loss is sum(y^2) / 2.  Backward gives
 * dx[i] = sum over j = i (mod len[s]) of w[s] * dy[j], dw = sum dy[j] *
 * x[j % len[s]], dc = sum dy[j] * j, with dy = y on the last stage.  The
 * results of each (stage, microbatch) are kept apart and compared, bit for
 * bit, with a serial computation that does the same operations in the
 * same order; so a lost, duplicated, misrouted or stale buffer changes a
 * result.  The callbacks also check the runtime's contracts: sizes,
 * NULL inputs/outputs at the ends, forward before backward, I before W,
 * the input buffer unchanged from forward until backward, and each rank's
 * compute order against the schedule.
 */
#ifndef PPCC_TESTS_RT_PIPE_H
#define PPCC_TESTS_RT_PIPE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ppcc.h"
#include "ppcc/runtime.h"

/* The kinds the runtime runs: every kind but DualPipe, which it refuses
 * (its two copies of the parameters need a cross-rank gradient sum the
 * runtime does not have; src/runtime/core.c).  RT_PIPE_KIND(i) is the
 * i-th of the RT_PIPE_KINDS; RT_PIPE_NEXT steps over DualPipe. */
#define RT_PIPE_KINDS (PPCC_SCHED_COUNT - 1)
#define RT_PIPE_KIND(i) ((i) < PPCC_SCHED_DUALPIPE ? (i) : (i) + 1)
#define RT_PIPE_NEXT(k) ((k) + 1 + ((k) + 1 == PPCC_SCHED_DUALPIPE))

typedef struct rt_pipe {
	int S, m, n_ranks;
	int *rank_of;         /* S: where each stage runs (rt_pipe_place) */
	int *len;             /* S + 1 */
	double *w, *c;        /* S */
	double *x0;           /* m * len[0] */
	double *dw, *dc;      /* S * m: the runtime's results */
	double *loss;         /* m */
	double *ref_dw, *ref_dc, *ref_loss;
	const double **stash; /* S * m: forward's input pointer */
	double *stash_sum;
	int *fwd, *bwd, *inp, *wgt; /* calls per (stage, mb) */
	int **log;            /* per rank: op * 1e6 + stage * 1e3 + mb */
	int *log_len;
	int log_cap;
	int *sent, *recvd;    /* [kind 0 F, 1 B][src_stage][mb] */
	pthread_mutex_t mu;
	int violations;
	char violation[512];  /* the first */
	/* Faults: when (fault_op, fault_stage, fault_mb) runs, return
	 * fault_ret (if nonzero), sleep fault_sleep_s, or raise SIGKILL;
	 * fault_wait, if set, is called instead of the sleep (a callback
	 * stuck until the test has seen what it waits for, not for a
	 * time). */
	int fault_op, fault_stage, fault_mb;
	int fault_ret;
	double fault_sleep_s;
	int fault_kill;
	void (*fault_wait)(void *user);
	void *fault_wait_user;
	/* rt_pipe_scribbling_forward's: stage 0's output of mb 0, and 1
	 * once it has been changed */
	unsigned char *kept_output;
	atomic_int scribbled;
} rt_pipe;

/* A pipeline of S stages (run by n_ranks ranks) over m microbatches;
 * width 0: vectors of 3 + s % 3 + s doubles at stage s (a different
 * size at each boundary), else all of `width` doubles. */
rt_pipe *rt_pipe_new(int S, int m, int n_ranks, int width);
void rt_pipe_free(rt_pipe *p);

/* Clears results, call counts and logs (not message counts). */
void rt_pipe_reset(rt_pipe *p);

/* recv_bytes / send_bytes of each stage, rank and chunk looped, the
 * other fields zero. */
void rt_pipe_stage_table(const rt_pipe *p, ppcc_stage_info *out);
/* Takes the placement (stage -> rank) from the schedule's stage table;
 * until then stage s runs on rank s % n_ranks. */
void rt_pipe_place(rt_pipe *p, const ppcc_schedule *s);

/* Callbacks for every stage; split: backward_input/backward_weight. */
void rt_pipe_fns(rt_pipe *p, ppcc_rt_stage_fns *out);

int rt_pipe_forward(int stage, int mb, const void *input, size_t input_bytes,
		    void *output, size_t output_bytes, void *user);
int rt_pipe_backward(int stage, int mb, const void *grad_output,
		     size_t grad_output_bytes, void *grad_input,
		     size_t grad_input_bytes, void *user);

/* rt_pipe_forward, except that stage 0's forward of mb 1 flips a bit
 * of mb 0's output, which the receiver may not have taken yet (a
 * corrupted message), and then sets scribbled; kept_output and
 * scribbled start at NULL and 0 (rt_pipe_new). */
int rt_pipe_scribbling_forward(int stage, int mb, const void *input,
			       size_t input_bytes, void *output,
			       size_t output_bytes, void *user);

/* For options.on_message. */
void rt_pipe_on_message(const ppcc_rt_message *msg, void *user);

/* 0 when every result of the stages of `rank` (-1: all) equals the
 * serial one bit for bit, every (stage, mb) ran exactly once, no contract
 * was violated and each rank's compute order is the schedule's; else -1
 * with the first difference in why. */
int rt_pipe_check(const rt_pipe *p, const ppcc_schedule *s, int rank,
		  char *why, size_t n);

/* 0 when each message the schedule implies was sent and received
 * `times` times and no other was (ranks: the receiving or sending rank
 * filter, -1 for all). */
int rt_pipe_check_messages(const rt_pipe *p, const ppcc_schedule *s,
			   int rank, int times, char *why, size_t n);

/* Replaces every B of s by I at its place and W at the end of the
 * rank's list (a split backward with deferred weight gradients); the
 * result lives in the arena. */
int rt_pipe_split_backward(ppcc_schedule *out, ppcc_arena *a,
			   const ppcc_schedule *s);

/* A permutation of 0 .. n - 1 drawn from seed, the same on every machine
 * (Fisher-Yates over a 64-bit LCG, no libc random); never the identity
 * for n > 1 (a draw of it becomes the rotation r -> r + 1 mod n). */
void rt_pipe_permutation(int *out, int n, uint64_t seed);

/* s with rank r renamed perm[r] (a permutation of its ranks): the stage
 * table's ranks and every peer rewritten, rank r's action list moved to
 * perm[r], the fingerprint recomputed; the new tables live in the arena.
 * The result is the same schedule on a permuted placement. */
int rt_pipe_relabel(ppcc_schedule *out, ppcc_arena *a, const ppcc_schedule *s,
		    const int *perm);

/* For a fault_wait: with mu held, waits on cv until lines[r] > 0 for
 * every rank r < ranks but `stuck` (each has reported its line), or 60 s
 * have passed (a runtime that never stops them fails the test instead of
 * hanging it). */
void rt_pipe_wait_lines(pthread_mutex_t *mu, pthread_cond_t *cv,
			const int *lines, int ranks, int stuck);

/* A diagnostic sink for ppcc_rt_options.diag, called from any rank's
 * thread: it keeps the lines, each ended by '\n', in text (those that fit
 * in 32 KiB), counts them per rank in lines[] (rank -1's, the load's, and
 * any past rank 15 in other; all of them in total) and broadcasts cv at
 * each.  Its fault_wait returns once every rank of `ranks` but `stuck`
 * has reported (rt_pipe_wait_lines). */
typedef struct rt_lines {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char text[1 << 15];
	size_t len;
	int lines[16];
	int other;
	int total; /* every line */
	int ranks, stuck;
} rt_lines;
void rt_lines_init(rt_lines *l, int ranks, int stuck);
void rt_lines_add(int rank, const char *line, void *user);
void rt_lines_wait_others(void *user);

#endif
