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
	int v = ppcc_sched_kind(kind)->default_chunks;
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
	int m = 8, v = ppcc_sched_kind(kind)->default_chunks, err;
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

int main(int argc, char **argv)
{
	int size, code = 0;
	const char *mode = argc > 1 ? argv[1] : "ok";
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "ok") == 0 || strcmp(mode, "relabel") == 0) {
		for (int kind = 0; kind < RT_PIPE_KINDS; kind++) {
			run_kind(kind, size, mode, 0);
			run_kind(kind, size, mode, 1);
		}
	} else if (strncmp(mode, "dp", 2) == 0) {
		code = run_grid(size, mode);
	} else {
		code = run_kind(PPCC_SCHED_1F1B, size, mode, 0);
	}
	MPI_Finalize();
	return code;
}
