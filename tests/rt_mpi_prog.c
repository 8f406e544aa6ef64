/*
 * rt_mpi_prog - the runtime over MPI, for check_runtime.c (run it under
 * `mpirun -np 2`).
 *
 *   rt_mpi_prog ok        every schedule kind, two steps each, debug mode,
 *                         eager then grouped; prints "rank R KIND ok" and
 *                         "rank R KIND grouped ok" per kind; exit 0
 *   rt_mpi_prog kill      1F1B; rank 1 raises SIGKILL in its forward of
 *                         microbatch 2; the other rank must not hang
 *   rt_mpi_prog mismatch  rank 1 holds a schedule with one more
 *                         microbatch; both print "rank R mismatch
 *                         refused" and exit 3
 *   rt_mpi_prog relabel   as ok, each kind's ranks relabelled by the
 *                         permutation rt_pipe_permutation draws from
 *                         seed 1 + kind (the placement permuted); prints
 *                         "rank R KIND relabelled ok" and "rank R KIND
 *                         relabelled grouped ok"
 *
 *
 * Data parallelism (options.data_parallel 2: the world is p x 2, world
 * rank w pipeline rank w / 2 of replica w % 2), 1F1B over p = size / 2
 * ranks, 4 microbatches; each stage registers bucket 0 (5 values) and
 * bucket 1 (1 value), value k of bucket b set to (replica + 1) * (k + 1)
 * + 100 * stage + 10 * b before each of two steps:
 *   rt_mpi_prog dp          prints "world W replica R stage S bucket B:
 *                           v ..." after the second step, "world W dp ok"
 *   rt_mpi_prog dp-window   the same with four buckets (5, 1, 4 and 2
 *                           values), all posted at once, and the
 *                           reductions' tags reused by every collective
 *                           (a window of 1)
 *   rt_mpi_prog dp-window-stuck  dp-window, replica 1 stuck as in dp-stuck
 *   rt_mpi_prog dp-fail     replica 1's first forward fails
 *   rt_mpi_prog dp-stuck    replica 1's first forward sleeps 3 s (timeout 1 s)
 *   rt_mpi_prog dp-mismatch replica 1 registers 4 values as bucket 0
 * A failing step prints "world W step: STATUS" and, 2 s later (the others
 * report first), calls MPI_Abort.
 *
 * All-to-all (ppcc_rt_alltoallv), world rank a sending world rank b
 * (a + 2b) % 4 doubles, element e being 1000a + 100b + e, each rank's
 * group in a permuted order, in and out regions a gap of one element
 * apart (out's in reverse member order):
 *   rt_mpi_prog a2a         1F1B over every rank; a step, an all-to-all of
 *                           every rank between steps (eager, then
 *                           grouped), a step; prints "rank R a2a ok"
 *   rt_mpi_prog a2a-grid    data_parallel 2 (p = size / 2): each forward
 *                           runs an all-to-all among the two replicas of
 *                           its pipeline rank (world ranks 2k, 2k + 1) from
 *                           inside the callback; prints "world W a2a-grid
 *                           ok"
 *   rt_mpi_prog a2a-stuck   as a2a with a 1 s timeout, rank 1 never calls
 *                           it (sleeps 3 s): rank 0 prints "rank 0
 *                           alltoallv: timeout", then MPI_Abort
 *
 * Any other failure prints the status and calls MPI_Abort (exit 2): after
 * a failure a peer may be stuck, so MPI_Finalize could wait forever.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ppcc.h"
#include "ppcc/runtime.h"
#include "rt_pipe.h"
#include "runtime/rt.h"

static int rank;

static void fail(const char *what, int err)
{
	printf("rank %d %s: %s\n", rank, what, ppcc_rt_status_str(err));
	fflush(stdout);
	MPI_Abort(MPI_COMM_WORLD, 2);
}

static void build(ppcc_schedule *out, ppcc_arena *a, rt_pipe *p,
		  int kind, int ranks, int m, int relabel)
{
	ppcc_stage_info st[64];
	int v = ppcc_sched_kind_chunks(kind, ranks);
	rt_pipe_stage_table(p, st);
	if (ppcc_schedule_build(out, a, kind, ranks, v, m, 0, st) != 0)
		fail("schedule", PPCC_RT_EINTERNAL);
	if (relabel) {
		int perm[64];
		ppcc_schedule built = *out;
		rt_pipe_permutation(perm, ranks, 1 + (uint64_t)kind);
		if (rt_pipe_relabel(out, a, &built, perm) != 0)
			fail("relabel", PPCC_RT_ENOMEM);
	}
	rt_pipe_place(p, out);
}

static int run_kind(int kind, int ranks, const char *mode, int grouped)
{
	int m = 8, v = ppcc_sched_kind_chunks(kind, ranks), err;
	int mismatch = strcmp(mode, "mismatch") == 0;
	int relabel = strcmp(mode, "relabel") == 0;
	if (mismatch && rank == 1)
		m++;
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *p = rt_pipe_new(ranks * v, m, ranks, 0);
	ppcc_schedule s;
	ppcc_rt_stage_fns fns[64];
	ppcc_rt *rt = NULL;
	char why[512];
	build(&s, a, p, kind, ranks, m, relabel);
	rt_pipe_fns(p, fns);
	if (strcmp(mode, "kill") == 0 && rank == 1) {
		p->fault_op = PPCC_OP_F;
		p->fault_stage = 1;
		p->fault_mb = 2;
		p->fault_kill = 1;
	}

	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.transport = PPCC_RT_MPI;
	o.grouped = grouped;
	o.debug = 1;
	o.timeout_s = 2;
	o.on_message = rt_pipe_on_message;
	o.message_user = p;
	err = ppcc_rt_init(&rt, &s, -1, &o);
	if (mismatch) {
		if (err != PPCC_RT_EMISMATCH)
			fail("mismatch not refused", err);
		printf("rank %d mismatch refused\n", rank);
		rt_pipe_free(p);
		ppcc_arena_free(a);
		return 3;
	}
	if (err < 0)
		fail("init", err);
	for (int step = 0; step < 2; step++) {
		ppcc_rt_stats st = PPCC_RT_STATS_INIT;
		rt_pipe_reset(p);
		if ((err = ppcc_rt_step(&st, rt, fns)) < 0)
			fail("step", err);
		if (rt_pipe_check(p, &s, rank, why, sizeof why) != 0) {
			printf("rank %d: %s\n", rank, why);
			fail("check", PPCC_RT_EINTERNAL);
		}
	}
	if (rt_pipe_check_messages(p, &s, rank, 2, why, sizeof why) != 0) {
		printf("rank %d: %s\n", rank, why);
		fail("messages", PPCC_RT_EINTERNAL);
	}
	printf("rank %d %s %s%sok\n", rank, ppcc_schedule_kind_name(kind),
	       relabel ? "relabelled " : "", grouped ? "grouped " : "");
	ppcc_rt_free(rt);
	rt_pipe_free(p);
	ppcc_arena_free(a);
	return 0;
}

static int run_grid(int size, const char *mode)
{
	int d = 2, p = size / d, m = 4, err, world = rank, replica = rank % d;
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pipe = rt_pipe_new(p, m, p, 0);
	ppcc_schedule s;
	ppcc_rt_stage_fns fns[64];
	ppcc_rt *rt = NULL;
	double grad[64][4][5];
	char why[512];
	int window = strncmp(mode, "dp-window", 9) == 0;
	static const size_t sizes[4] = {5, 1, 4, 2};
	int nb = window ? 4 : 2;
	if (size % d != 0)
		fail("world not p x 2", PPCC_RT_EINPUT);
	build(&s, a, pipe, PPCC_SCHED_1F1B, p, m, 0);
	rt_pipe_fns(pipe, fns);
	if (replica == 1 && rank / d == 0) {
		pipe->fault_op = PPCC_OP_F;
		pipe->fault_stage = 0;
		pipe->fault_mb = 0;
		if (strcmp(mode, "dp-fail") == 0)
			pipe->fault_ret = 1;
		else if (strstr(mode, "stuck"))
			pipe->fault_sleep_s = 3.0;
		else
			pipe->fault_op = -1;
	}
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.transport = PPCC_RT_MPI;
	o.debug = 1;
	o.timeout_s = strstr(mode, "stuck") ? 1.0 : 5.0;
	o.data_parallel = d;
	if ((err = ppcc_rt_init(&rt, &s, -1, &o)) < 0)
		fail("init", err);
	if (window && (err = ppcc_rt_mpi_set_coll_window(rt, 1)) < 0)
		fail("window", err);
	int k = ppcc_rt_rank(rt);
	for (int st = 0; st < p; st++) {
		if (s.stages[st].rank != k)
			continue;
		for (int b = 0; b < nb; b++) {
			size_t n = b == 0 && strcmp(mode, "dp-mismatch") == 0 &&
					   replica == 1 ? 4 : sizes[b];
			if ((err = ppcc_rt_grad_register(rt, st, b, grad[st][b], n)) < 0)
				fail("register", err);
		}
	}
	for (int step = 0; step < 2; step++) {
		ppcc_rt_stats stats = PPCC_RT_STATS_INIT;
		for (int st = 0; st < p; st++)
			for (int b = 0; b < nb; b++)
				for (int i = 0; i < 5; i++)
					grad[st][b][i] = (replica + 1) * (i + 1) +
							 100.0 * st + 10.0 * b;
		rt_pipe_reset(pipe);
		if ((err = ppcc_rt_step(&stats, rt, fns)) < 0) {
			printf("world %d step: %s\n", world, ppcc_rt_status_str(err));
			fflush(NULL);
			struct timespec ts = {2, 0};
			nanosleep(&ts, NULL);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		if (rt_pipe_check(pipe, &s, k, why, sizeof why) != 0) {
			printf("world %d: %s\n", world, why);
			fail("check", PPCC_RT_EINTERNAL);
		}
	}
	for (int st = 0; st < p; st++) {
		if (s.stages[st].rank != k)
			continue;
		for (int b = 0; b < nb; b++) {
			printf("world %d replica %d stage %d bucket %d:", world, replica,
			       st, b);
			for (int i = 0; i < (int)sizes[b]; i++)
				printf(" %g", grad[st][b][i]);
			printf("\n");
		}
	}
	printf("world %d dp ok\n", world);
	ppcc_rt_free(rt);
	rt_pipe_free(pipe);
	ppcc_arena_free(a);
	return 0;
}

/* ---- all-to-all ----------------------------------------------------------- */

/* The layout of world rank me's all-to-all over group[0..n) (see the
 * opening comment); out filled with -7; the elements out spans. */
static size_t a2a_layout(int me, const int *group, int n, double *in,
			 size_t *ic, size_t *id, double *out, size_t *oc,
			 size_t *od)
{
	size_t at = 0;
	for (int j = 0; j < n; j++) {
		ic[j] = (size_t)((me + 2 * group[j]) % 4);
		id[j] = at;
		for (size_t e = 0; e < ic[j]; e++)
			in[at + e] = 1000.0 * me + 100.0 * group[j] + (double)e;
		at += ic[j] + 1;
	}
	at = 0;
	for (int j = n - 1; j >= 0; j--) {
		oc[j] = (size_t)((group[j] + 2 * me) % 4);
		od[j] = at;
		at += oc[j] + 1;
	}
	for (size_t k = 0; k < at; k++)
		out[k] = -7;
	return at;
}

/* Checks every element of out against what each member sent (and -7
 * between); fails the run naming the first that differs. */
static void a2a_verify(int me, const int *group, int n, const double *out,
		       const size_t *oc, const size_t *od, size_t span)
{
	for (size_t k = 0; k < span; k++) {
		double want = -7;
		for (int j = 0; j < n; j++)
			if (k >= od[j] && k < od[j] + oc[j])
				want = 1000.0 * group[j] + 100.0 * me +
				       (double)(k - od[j]);
		if (out[k] != want) {
			printf("world %d: out[%zu] = %g, want %g\n", me, k, out[k],
			       want);
			fail("alltoallv result", PPCC_RT_EINTERNAL);
		}
	}
}

/* One all-to-all of world rank me over group; 0 or the call's status. */
static int a2a_once(ppcc_rt *rt, int me, const int *group, int n)
{
	double in[256], out[256];
	size_t ic[64], id[64], oc[64], od[64];
	size_t span = a2a_layout(me, group, n, in, ic, id, out, oc, od);
	int err = ppcc_rt_alltoallv(out, oc, od, rt, in, ic, id, sizeof(double),
				    group, n);
	if (err == 0)
		a2a_verify(me, group, n, out, oc, od, span);
	return err;
}

static int run_a2a(int size, const char *mode)
{
	int stuck = strcmp(mode, "a2a-stuck") == 0, m = 4, err;
	int group[64];
	for (int j = 0; j < size; j++)
		group[j] = (size - j) % size; /* 0, size - 1, ..., 1 */
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *p = rt_pipe_new(size, m, size, 0);
	ppcc_schedule s;
	ppcc_rt_stage_fns fns[64];
	char why[512];
	build(&s, a, p, PPCC_SCHED_1F1B, size, m, 0);
	rt_pipe_fns(p, fns);
	for (int grouped = 0; grouped <= 1; grouped++) {
		ppcc_rt *rt = NULL;
		ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
		o.transport = PPCC_RT_MPI;
		o.grouped = grouped;
		o.timeout_s = stuck ? 1 : 5;
		if ((err = ppcc_rt_init(&rt, &s, -1, &o)) < 0)
			fail("init", err);
		for (int step = 0; step < 2; step++) {
			rt_pipe_reset(p);
			if ((err = ppcc_rt_step(NULL, rt, fns)) < 0)
				fail("step", err);
			if (rt_pipe_check(p, &s, rank, why, sizeof why) != 0) {
				printf("rank %d: %s\n", rank, why);
				fail("check", PPCC_RT_EINTERNAL);
			}
			if (step == 1)
				break;
			if (stuck && rank == 1) {
				struct timespec ts = {3, 0};
				nanosleep(&ts, NULL);
				continue;
			}
			if ((err = a2a_once(rt, rank, group, size)) < 0) {
				printf("rank %d alltoallv: %s\n", rank,
				       ppcc_rt_status_str(err));
				fflush(NULL);
				struct timespec ts = {2, 0};
				nanosleep(&ts, NULL);
				MPI_Abort(MPI_COMM_WORLD, 2);
			}
		}
		ppcc_rt_free(rt);
	}
	printf("rank %d a2a ok\n", rank);
	rt_pipe_free(p);
	ppcc_arena_free(a);
	return 0;
}

/* a2a-grid: every forward's callback runs an all-to-all among the two
 * replicas of its pipeline rank. */
typedef struct grid_fwd {
	ppcc_rt_forward_fn inner;
	ppcc_rt_backward_fn backward;
	ppcc_rt_loss_fn loss;
	void *inner_user;
	ppcc_rt *rt;
	int world, calls;
} grid_fwd;

/* The other callbacks, forwarded with the pipeline's own user pointer. */
static int grid_backward(int stage, int mb, const void *grad_output,
			 size_t grad_output_bytes, void *grad_input,
			 size_t grad_input_bytes, void *user)
{
	const grid_fwd *f = user;
	return f->backward(stage, mb, grad_output, grad_output_bytes, grad_input,
			   grad_input_bytes, f->inner_user);
}

static int grid_loss(double *out_loss, int stage, int mb, void *user)
{
	const grid_fwd *f = user;
	return f->loss(out_loss, stage, mb, f->inner_user);
}

static int grid_forward(int stage, int mb, const void *input, size_t input_bytes,
			void *output, size_t output_bytes, void *user)
{
	grid_fwd *f = user;
	int group[2] = {f->world - f->world % 2 + 1, f->world - f->world % 2};
	int err = a2a_once(f->rt, f->world, group, 2);
	if (err < 0) {
		printf("world %d alltoallv in forward: %s\n", f->world,
		       ppcc_rt_status_str(err));
		return 1;
	}
	f->calls++;
	return f->inner(stage, mb, input, input_bytes, output, output_bytes,
			f->inner_user);
}

static int run_a2a_grid(int size)
{
	int d = 2, p = size / d, m = 4, err;
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pipe = rt_pipe_new(p, m, p, 0);
	ppcc_schedule s;
	ppcc_rt_stage_fns fns[64];
	grid_fwd fwd[64];
	ppcc_rt *rt = NULL;
	char why[512];
	if (size % d != 0)
		fail("world not p x 2", PPCC_RT_EINPUT);
	build(&s, a, pipe, PPCC_SCHED_1F1B, p, m, 0);
	rt_pipe_fns(pipe, fns);
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.transport = PPCC_RT_MPI;
	o.timeout_s = 5;
	o.data_parallel = d;
	if ((err = ppcc_rt_init(&rt, &s, -1, &o)) < 0)
		fail("init", err);
	for (int st = 0; st < p; st++) {
		fwd[st] = (grid_fwd){fns[st].forward, fns[st].backward, fns[st].loss,
				     fns[st].user, rt, rank, 0};
		fns[st] = (ppcc_rt_stage_fns){grid_forward, grid_backward, NULL, NULL,
					      grid_loss, &fwd[st],
					      PPCC_RT_STAGE_FNS_VERSION};
	}
	rt_pipe_reset(pipe);
	if ((err = ppcc_rt_step(NULL, rt, fns)) < 0)
		fail("step", err);
	if (rt_pipe_check(pipe, &s, ppcc_rt_rank(rt), why, sizeof why) != 0) {
		printf("world %d: %s\n", rank, why);
		fail("check", PPCC_RT_EINTERNAL);
	}
	if (fwd[ppcc_rt_rank(rt)].calls != m)
		fail("forward calls", PPCC_RT_EINTERNAL);
	printf("world %d a2a-grid ok\n", rank);
	ppcc_rt_free(rt);
	rt_pipe_free(pipe);
	ppcc_arena_free(a);
	return 0;
}

int main(int argc, char **argv)
{
	int size, code = 0;
	const char *mode = argc > 1 ? argv[1] : "ok";
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "ok") == 0 || strcmp(mode, "relabel") == 0) {
		for (int kind = 0; kind < PPCC_SCHED_COUNT; kind = RT_PIPE_NEXT(kind)) {
			run_kind(kind, size, mode, 0);
			run_kind(kind, size, mode, 1);
		}
	} else if (strcmp(mode, "a2a-grid") == 0) {
		code = run_a2a_grid(size);
	} else if (strncmp(mode, "a2a", 3) == 0) {
		code = run_a2a(size, mode);
	} else if (strncmp(mode, "dp", 2) == 0) {
		code = run_grid(size, mode);
	} else {
		code = run_kind(PPCC_SCHED_1F1B, size, mode, 0);
	}
	MPI_Finalize();
	return code;
}
