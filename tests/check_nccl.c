/* What of the nccl transport can be proven without a GPU: the device
 * each rank takes (device.c), the out-of-band abort (oob.c) alone and
 * under the runtime, with the local transport's grouped mode standing in
 * for NCCL (an abort that reaches the other ranks only through the abort
 * store), the loopback mode failing cleanly where there is no GPU, and
 * tests/gpu/compare.c refusing numbers that are not finite. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ppcc.h"
#include "ppcc/runtime.h"
#include "runtime/rt.h"
#include "rt_pipe.h"
#include "testutil.h"

Suite *suite_nccl(void);

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- device choice ------------------------------------------------------ */

START_TEST(device_follows_the_node_local_rank)
{
	/* a node's four ranks get its four devices whatever their global
	 * ranks (mapped by node over two nodes: 0, 2, 4, 6, where modulo 4
	 * gives 0 and 4 the same device) */
	static const struct { int local, ndev, want; } cases[] = {
		{0, 4, 0}, {1, 4, 1}, {2, 4, 2}, {3, 4, 3}, {7, 8, 7},
		/* more ranks on the node than devices: none, not a shared GPU */
		{8, 8, -1}, {2, 2, -1}, {5, 4, -1},
		/* one visible device: the launcher bound it to this rank */
		{0, 1, 0}, {3, 1, 0},
		/* nothing to choose from, or no rank */
		{0, 0, -1}, {-1, 4, -1}, {1, -1, -1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		ck_assert_msg(ppcc_rt_device_choose(cases[i].local, cases[i].ndev) ==
				      cases[i].want,
			      "local rank %d of %d devices: %d, want %d",
			      cases[i].local, cases[i].ndev,
			      ppcc_rt_device_choose(cases[i].local, cases[i].ndev),
			      cases[i].want);
}
END_TEST

START_TEST(local_rank_comes_from_the_launcher_first_variable_set)
{
	static const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK",
				     "MPI_LOCALRANKID", "SLURM_LOCALID",
				     "LOCAL_RANK"};
	const char *var = NULL;
	for (int i = 0; i < 4; i++)
		unsetenv(vars[i]);
	ck_assert_int_eq(ppcc_rt_local_rank_env(&var), -1);
	setenv("LOCAL_RANK", "5", 1);
	ck_assert_int_eq(ppcc_rt_local_rank_env(&var), 5);
	ck_assert_str_eq(var, "LOCAL_RANK");
	setenv("SLURM_LOCALID", "x2", 1); /* not a number: skipped */
	ck_assert_int_eq(ppcc_rt_local_rank_env(&var), 5);
	setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1);
	ck_assert_int_eq(ppcc_rt_local_rank_env(&var), 3);
	ck_assert_str_eq(var, "OMPI_COMM_WORLD_LOCAL_RANK");
	setenv("OMPI_COMM_WORLD_LOCAL_RANK", "-1", 1);
	ck_assert_int_eq(ppcc_rt_local_rank_env(NULL), 5);
	for (int i = 0; i < 4; i++)
		unsetenv(vars[i]);
}
END_TEST

/* ---- the abort store ---------------------------------------------------- */

/* A port nobody listens on now (bound, read, released). */
static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a;
	socklen_t n = sizeof a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &n), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* A bare transport context whose reports go to an rt_lines, as the
 * runtime's would (the store only reports through it). */
typedef struct fake_rt {
	rt_tctx cx;
	rt_lines *d;
} fake_rt;

static void fake_rt_report(void *user, const char *fmt, va_list ap)
{
	fake_rt *f = user;
	char line[2048];
	int n = snprintf(line, sizeof line, "ppcc-rt: rank %d: ", f->cx.rank);
	if (n > 0 && (size_t)n < sizeof line)
		vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	rt_lines_add(f->cx.rank, line, f->d);
}

static void fake_rt_init(fake_rt *f, int rank, rt_lines *d)
{
	memset(f, 0, sizeof *f);
	f->cx.rank = rank;
	f->cx.report = fake_rt_report;
	f->cx.user = f;
	f->d = d;
}

typedef struct store_rank {
	pthread_t th;
	fake_rt f;
	rt_oob *o;
	int rank, n, port, err;
} store_rank;

static void *store_open_main(void *arg)
{
	store_rank *s = arg;
	s->err = ppcc_rt_oob_tcp_open(&s->o, &s->f.cx, s->rank, s->n, s->port,
				      now_s() + 30);
	return NULL;
}

/* Polls o until it has news, for up to 30 s (a bound only for a store
 * that never delivers); 0, or -1. */
static int poll_until(rt_oob *o, int *who, int *st)
{
	double t0 = now_s();
	while (now_s() - t0 < 30) {
		if (ppcc_rt_oob_poll(o, who, st))
			return 0;
		nanosleep(&(struct timespec){0, 1000000L}, NULL);
	}
	return -1;
}

/* Three ranks join; rank 2's abort reaches ranks 0 and 1 (relayed by
 * rank 0), and a rank that signalled does not see its own abort. */
START_TEST(abort_store_relays_a_rank_failure_to_every_other_rank)
{
	rt_lines d;
	store_rank s[3];
	int port = free_port(), who, st;
	rt_lines_init(&d, 0, 0);
	for (int r = 0; r < 3; r++) {
		memset(&s[r], 0, sizeof s[r]);
		s[r].rank = r;
		s[r].n = 3;
		s[r].port = port;
		fake_rt_init(&s[r].f, r, &d);
		ck_assert_int_eq(pthread_create(&s[r].th, NULL, store_open_main, &s[r]), 0);
	}
	for (int r = 0; r < 3; r++) {
		pthread_join(s[r].th, NULL);
		ck_assert_msg(s[r].err == 0, "rank %d: %d: %s", r, s[r].err, d.text);
	}
	for (int r = 0; r < 3; r++)
		ck_assert_int_eq(ppcc_rt_oob_poll(s[r].o, &who, &st), 0);
	ppcc_rt_oob_signal(s[2].o, 2, PPCC_RT_ECALLBACK);
	for (int r = 0; r < 2; r++) {
		who = st = 0;
		ck_assert_msg(poll_until(s[r].o, &who, &st) == 0, "rank %d never "
			      "heard", r);
		ck_assert_int_eq(who, 2);
		ck_assert_int_eq(st, PPCC_RT_ECALLBACK);
	}
	ck_assert_int_eq(ppcc_rt_oob_poll(s[2].o, &who, &st), 0);
	for (int r = 2; r >= 0; r--)
		ppcc_rt_oob_close(s[r].o, 1, now_s() + 1);
	ck_assert_int_eq((int)d.len, 0);
}
END_TEST

/* A rank whose process dies without a word (here a child that exits
 * after joining) is reported to the others as failed; and rank 0's own
 * failure reaches the rest directly. */
START_TEST(abort_store_reports_a_dead_process_and_rank_0s_own_failure)
{
	rt_lines d;
	store_rank s[2];
	int port = free_port(), who = -5, st = 0;
	rt_lines_init(&d, 0, 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		fake_rt f;
		rt_oob *o = NULL;
		fake_rt_init(&f, 2, &d);
		int err = ppcc_rt_oob_tcp_open(&o, &f.cx, 2, 3, port, now_s() + 30);
		nanosleep(&(struct timespec){0, 100000000L}, NULL);
		_exit(err == 0 ? 0 : 1); /* the connection dies with the process */
	}
	for (int r = 0; r < 2; r++) {
		memset(&s[r], 0, sizeof s[r]);
		s[r].rank = r;
		s[r].n = 3;
		s[r].port = port;
		fake_rt_init(&s[r].f, r, &d);
		ck_assert_int_eq(pthread_create(&s[r].th, NULL, store_open_main, &s[r]), 0);
	}
	for (int r = 0; r < 2; r++) {
		pthread_join(s[r].th, NULL);
		ck_assert_msg(s[r].err == 0, "rank %d: %d: %s", r, s[r].err, d.text);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_msg(poll_until(s[1].o, &who, &st) >= 0, "rank 1 never heard");
	ck_assert_int_eq(who, 2);
	ck_assert_int_eq(st, PPCC_RT_EPEER);
	ck_assert_msg(poll_until(s[0].o, &who, &st) >= 0, "rank 0 never heard");
	ck_assert_int_eq(who, 2);
	ppcc_rt_oob_close(s[1].o, 1, now_s() + 1);
	ppcc_rt_oob_close(s[0].o, 1, now_s() + 1);

	/* two ranks, rank 0 fails */
	port = free_port();
	for (int r = 0; r < 2; r++) {
		s[r].n = 2;
		s[r].port = port;
		s[r].o = NULL;
		ck_assert_int_eq(pthread_create(&s[r].th, NULL, store_open_main, &s[r]), 0);
	}
	for (int r = 0; r < 2; r++) {
		pthread_join(s[r].th, NULL);
		ck_assert_int_eq(s[r].err, 0);
	}
	ppcc_rt_oob_signal(s[0].o, 0, PPCC_RT_ETIMEOUT);
	ck_assert(poll_until(s[1].o, &who, &st) >= 0);
	ck_assert_int_eq(who, 0);
	ck_assert_int_eq(st, PPCC_RT_ETIMEOUT);
	ppcc_rt_oob_close(s[0].o, 1, now_s() + 1);
	ppcc_rt_oob_close(s[1].o, 1, now_s() + 1);
}
END_TEST

START_TEST(abort_store_port_comes_from_the_environment)
{
	static const struct { const char *v; int want; } cases[] = {
		{"29500", 29500}, {"1", 1}, {"65535", 65535}, {"0", 0},
		{"65536", 0}, {"-5", 0}, {"80x", 0}, {"", 0},
	};
	unsetenv("PPCC_ABORT_PORT");
	ck_assert_int_eq(ppcc_rt_oob_port_env(), 0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		setenv("PPCC_ABORT_PORT", cases[i].v, 1);
		ck_assert_msg(ppcc_rt_oob_port_env() == cases[i].want, "'%s': %d",
			      cases[i].v, ppcc_rt_oob_port_env());
	}
	unsetenv("PPCC_ABORT_PORT");
}
END_TEST

/* Nobody listening: the joining rank gives up at its deadline, naming
 * the address. */
START_TEST(abort_store_open_is_bounded_by_its_deadline)
{
	rt_lines d;
	fake_rt f;
	rt_oob *o = NULL;
	rt_lines_init(&d, 0, 0);
	fake_rt_init(&f, 1, &d);
	int port = free_port();
	double t0 = now_s();
	ck_assert_int_eq(ppcc_rt_oob_tcp_open(&o, &f.cx, 1, 2, port, t0 + 0.3),
			 PPCC_RT_ETIMEOUT);
	double took = now_s() - t0;
	/* not before its deadline (a wait can only grow under load; one
	 * that never ended would meet Check's timeout) */
	ck_assert_msg(took >= 0.3, "took %.3f s", took);
	ck_assert_ptr_null(o);
	char want[128];
	snprintf(want, sizeof want, "cannot reach rank 0 at 127.0.0.1:%d", port);
	ck_assert_msg(strstr(d.text, want), "%s", d.text);
}
END_TEST

/* ---- the runtime, standing in for NCCL ---------------------------------- */

typedef struct rank_run {
	pthread_t th;
	const ppcc_schedule *s;
	const ppcc_rt_stage_fns *fns;
	ppcc_rt_options o;
	int rank, status;
	ppcc_rt_stats st;
} rank_run;

static void *rank_main(void *arg)
{
	rank_run *k = arg;
	ppcc_rt *rt = NULL;
	k->status = ppcc_rt_init(&rt, k->s, k->rank, &k->o);
	k->st.version = PPCC_RT_STATS_VERSION;
	if (k->status == 0)
		k->status = ppcc_rt_step(&k->st, rt, k->fns);
	ppcc_rt_free(rt);
	return NULL;
}

/* Every rank of s in a thread, grouped, over a local world whose aborts
 * go only through the abort store. */
static void run_isolated(rank_run *k, const ppcc_schedule *s,
			 const ppcc_rt_stage_fns *fns, double timeout_s,
			 rt_lines *d)
{
	ppcc_rt_local_world *w = NULL;
	ck_assert_int_eq(ppcc_rt_local_world_new(&w, s->n_ranks), 0);
	ppcc_rt_local_world_set_oob_port(w, free_port());
	for (int r = 0; r < s->n_ranks; r++) {
		ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
		o.grouped = 1;
		o.timeout_s = timeout_s;
		o.world = w;
		o.diag = rt_lines_add;
		o.diag_user = d;
		k[r] = (rank_run){.s = s, .fns = fns, .o = o, .rank = r};
		ck_assert_int_eq(pthread_create(&k[r].th, NULL, rank_main, &k[r]), 0);
	}
	for (int r = 0; r < s->n_ranks; r++)
		pthread_join(k[r].th, NULL);
	ppcc_rt_local_world_free(w);
}

static int build(ppcc_schedule *out, ppcc_arena *a, const rt_pipe *p,
		 int kind, int ranks, int m)
{
	ppcc_stage_info st[16];
	rt_pipe_stage_table(p, st);
	return ppcc_schedule_build(out, a, kind, ranks, 1, m, 0, st);
}

/* The stand-in runs a step right, and a failing backward on rank 2 of 4
 * stops every other rank with EPEER naming it, long before the 5 s
 * timeout that the peers would otherwise report. */
START_TEST(grouped_ranks_told_of_a_failure_through_the_abort_store)
{
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(4, 8, 4, 0);
	ppcc_schedule s;
	ppcc_rt_stage_fns fns[4];
	rank_run k[4];
	rt_lines d;
	char why[512];
	ck_assert_int_eq(build(&s, a, pp, PPCC_SCHED_1F1B, 4, 8), 0);
	rt_pipe_fns(pp, fns);

	rt_lines_init(&d, 0, 0);
	rt_pipe_reset(pp);
	run_isolated(k, &s, fns, 5, &d);
	for (int r = 0; r < 4; r++)
		ck_assert_msg(k[r].status == 0, "rank %d: %s", r, d.text);
	ck_assert_msg(rt_pipe_check(pp, &s, -1, why, sizeof why) == 0, "%s", why);

	rt_lines_init(&d, 0, 0);
	rt_pipe_reset(pp);
	pp->fault_op = PPCC_OP_B;
	pp->fault_stage = 2;
	pp->fault_mb = 3;
	pp->fault_ret = -7;
	run_isolated(k, &s, fns, 5, &d);
	for (int r = 0; r < 4; r++) {
		ck_assert_int_eq(k[r].status, r == 2 ? PPCC_RT_ECALLBACK : PPCC_RT_EPEER);
		ck_assert_int_eq(d.lines[r], 1);
	}
	ck_assert_msg(strstr(d.text, "ppcc-rt: rank 0: ") &&
		      strstr(d.text, "another rank failed: stopped because rank 2 "
			     "failed (callback failed)"), "%s", d.text);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
}
END_TEST

/* A stuck forward on rank 1 (until every other rank has stopped; timeout
 * 0.5 s): its neighbours time out, and every rank stops with ETIMEOUT or
 * EPEER, each naming what stopped it, once. */
START_TEST(grouped_ranks_stop_within_the_bound_around_a_stuck_callback)
{
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(4, 4, 4, 0);
	ppcc_schedule s;
	ppcc_rt_stage_fns fns[4];
	rank_run k[4];
	rt_lines d;
	ck_assert_int_eq(build(&s, a, pp, PPCC_SCHED_1F1B, 4, 4), 0);
	rt_pipe_fns(pp, fns);
	rt_lines_init(&d, 0, 0);
	pp->fault_op = PPCC_OP_F;
	pp->fault_stage = 1;
	pp->fault_mb = 1;
	pp->fault_wait = rt_lines_wait_others; /* until the others stopped */
	pp->fault_wait_user = &d;
	d.ranks = 4;
	d.stuck = 1;
	run_isolated(k, &s, fns, 0.5, &d);
	int timeouts = 0;
	for (int r = 0; r < 4; r++) {
		ck_assert_msg(k[r].status == PPCC_RT_ETIMEOUT || k[r].status == PPCC_RT_EPEER,
			      "rank %d: %s", r, ppcc_rt_status_str(k[r].status));
		timeouts += k[r].status == PPCC_RT_ETIMEOUT;
		ck_assert_int_eq(d.lines[r], 1);
	}
	ck_assert_int_ge(timeouts, 1);
	ck_assert_msg(strstr(d.text, "forward ran "), "%s", d.text);
	ck_assert_msg(strstr(d.text, "did not complete within 0.500 s"), "%s", d.text);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
}
END_TEST

/* ---- loopback --------------------------------------------------------------- */

/* nccl with a world runs every rank as a thread on one GPU (tests/gpu/
 * run.sh drives it there); here, without a GPU, every rank fails at once
 * and alike with CUDA's reason, and none waits for the others. */
START_TEST(nccl_loopback_fails_cleanly_without_a_gpu)
{
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(2, 4, 2, 0);
	ppcc_schedule s;
	ppcc_rt_stage_fns fns[2];
	ppcc_rt_stats st[2] = {PPCC_RT_STATS_INIT};
	rt_lines d;
	rt_lines_init(&d, 0, 0);
	ck_assert_int_eq(build(&s, a, pp, PPCC_SCHED_1F1B, 2, 4), 0);
	rt_pipe_fns(pp, fns);
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.transport = PPCC_RT_NCCL;
	o.timeout_s = 5;
	o.diag = rt_lines_add;
	o.diag_user = &d;
	int err = ppcc_rt_run_local(st, &s, fns, &o);
	if (!ppcc_rt_transport_available(PPCC_RT_NCCL)) {
		ck_assert_int_eq(err, PPCC_RT_EUNAVAILABLE);
	} else if (err == 0) {
		/* a GPU: the results must be the serial ones */
		char why[512];
		ck_assert_msg(rt_pipe_check(pp, &s, -1, why, sizeof why) == 0, "%s", why);
	} else {
		ck_assert_int_eq(err, PPCC_RT_ETRANSPORT);
		for (int r = 0; r < 2; r++) {
			ck_assert_int_eq(st[r].status, PPCC_RT_ETRANSPORT);
			ck_assert_int_eq(d.lines[r], 1);
		}
		ck_assert_msg(strstr(d.text, "ppcc-rt: rank 1: nccl transport: "
				     "cudaGetDeviceCount failed: cuda"), "%s", d.text);
	}
	rt_pipe_free(pp);
	ppcc_arena_free(a);
}
END_TEST

/* ---- data parallelism ------------------------------------------------------ */

/* nccl with options.data_parallel: the reductions are the transport's
 * (coll_post, ncclAllReduce), the loopback has none (the core refuses
 * data parallelism there).  Without a GPU, a grid rank (world rank 1 of
 * p 2 x d 2, given its ncclUniqueId) fails at once in ppcc_rt_init with
 * PPCC_RT_ETRANSPORT and one line, CUDA's reason, before anything
 * collective; a libppcc without NCCL answers PPCC_RT_EUNAVAILABLE. */
START_TEST(nccl_data_parallel_fails_cleanly_without_a_gpu)
{
#if PPCC_HAVE_NCCL
	ck_assert_ptr_nonnull(ppcc_rt_nccl_ops.coll_post);
	ck_assert_ptr_nonnull(ppcc_rt_nccl_ops.coll_test);
	ck_assert_ptr_nonnull(ppcc_rt_nccl_ops.coll_release);
	ck_assert_ptr_null(ppcc_rt_nccl_loop_ops.coll_post);
#endif
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(2, 4, 2, 0);
	ppcc_schedule s;
	rt_lines d;
	rt_lines_init(&d, 0, 0);
	ck_assert_int_eq(build(&s, a, pp, PPCC_SCHED_1F1B, 2, 4), 0);
	static const unsigned char id[PPCC_RT_NCCL_ID_BYTES];
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.transport = PPCC_RT_NCCL;
	o.data_parallel = 2;
	o.nccl_id = id;
	o.timeout_s = 5;
	o.diag = rt_lines_add;
	o.diag_user = &d;
	ppcc_rt *rt = NULL;
	int err = ppcc_rt_init(&rt, &s, 1, &o);
	ck_assert_ptr_null(rt);
	if (!ppcc_rt_transport_available(PPCC_RT_NCCL)) {
		ck_assert_int_eq(err, PPCC_RT_EUNAVAILABLE);
	} else if (strstr(d.text, "cudaGetDeviceCount")) {
		ck_assert_int_eq(err, PPCC_RT_ETRANSPORT);
		ck_assert_msg(strncmp(d.text, "ppcc-rt: rank 0: nccl transport: "
				      "cudaGetDeviceCount failed: cuda", 64) == 0,
			      "%s", d.text);
		int lines = 0;
		for (const char *c = d.text; *c; c++)
			lines += *c == '\n';
		ck_assert_msg(lines == 1, "%d lines:\n%s", lines, d.text);
	} else {
		/* a GPU: one process cannot make a world of four */
		ck_assert_msg(err == PPCC_RT_ETRANSPORT || err == PPCC_RT_ETIMEOUT,
			      "%s: %s", ppcc_rt_status_str(err), d.text);
	}
	rt_pipe_free(pp);
	ppcc_arena_free(a);
}
END_TEST

/* ---- no abort inside an open group --------------------------------------- */

static int aborts_in_group(const char *line)
{
	return strstr(line, "aborted inside an open group") != NULL;
}

/* Grouped with debug trailers, the Nth allocation fails for every N
 * until a run succeeds (each try a child process, PPCC_FAIL_ALLOC=N, as
 * in the runtime suite): every failure is a clean ENOMEM, and none
 * aborts the transport between group_begin and group_end (the local
 * transport's brackets report it), where NCCL would free the
 * communicator under the group's queued posts. */
START_TEST(allocation_failures_in_grouped_mode_never_abort_inside_a_group)
{
	tu_rt_alloc_failures("allocation_failures_in_grouped_mode_never_abort_inside_a_group",
			     1000, 1, aborts_in_group, "aborted inside an open group");
}
END_TEST

/* ---- the GPU check's comparison ------------------------------------------ */

/* Builds tests/gpu/compare.c as run.sh does and runs it on REF and OUT;
 * its exit status and output. */
static int run_compare(const char *dir, const char *ref, const char *out,
		       const char *tol, char **stdout_text)
{
	char bin[4096], src[4096], rp[4096], op[4096];
	snprintf(bin, sizeof bin, "%s/compare", dir);
	snprintf(src, sizeof src, "%s/tests/gpu/compare.c", tu_src());
	if (!tu_exists(bin)) {
		const char *cc = getenv("CC") ? getenv("CC") : "cc";
		char *argv[] = {(char *)cc, "-std=c11", "-O2", "-o", bin, src, "-lm", NULL};
		tu_run r;
		ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, argv), 0);
		ck_assert_msg(r.status == 0, "cc: %s", r.err);
		tu_run_free(&r);
	}
	snprintf(rp, sizeof rp, "%s/ref", dir);
	snprintf(op, sizeof op, "%s/out", dir);
	ck_assert_int_eq(tu_write_file(rp, ref), 0);
	ck_assert_int_eq(tu_write_file(op, out), 0);
	char *argv[] = {bin, (char *)tol, rp, op, NULL};
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 30, argv), 0);
	*stdout_text = strdup(r.out);
	int st = r.status;
	tu_run_free(&r);
	return st;
}

START_TEST(compare_fails_on_nan_and_infinity)
{
	char *dir = tu_mkdtemp(), *out;
	const char *ref = "loss 0 0x1.8p+0 1.5\nparam 0 0x1p-1 0x1p+1\n";
	ck_assert_int_eq(run_compare(dir, ref, ref, "1e-12", &out), 0);
	ck_assert_str_eq(out, "compare: 2 lines agree, largest relative difference 0\n");
	free(out);
	/* a NaN loss: before, |NaN - y| > tol was false and it passed */
	ck_assert_int_eq(run_compare(dir, ref, "loss 0 nan nan\nparam 0 0x1p-1 0x1p+1\n",
				     "1e-12", &out), 1);
	ck_assert_str_eq(out, "compare: line 0: the output is not finite: loss 0 nan nan\n");
	free(out);
	ck_assert_int_eq(run_compare(dir, ref, "loss 0 0x1.8p+0 1.5\nparam 0 -inf 0x1p+1\n",
				     "1e-12", &out), 1);
	ck_assert_ptr_nonnull(strstr(out, "the output is not finite: param 0 -inf"));
	free(out);
	/* a reference that is not finite fails as well */
	ck_assert_int_eq(run_compare(dir, "loss 0 nan nan\n", "loss 0 nan nan\n",
				     "1e-12", &out), 1);
	free(out);
	/* a difference over TOL, and a TOL that is not a number */
	ck_assert_int_eq(run_compare(dir, ref, "loss 0 0x1.8p+0 1.5000001\nparam 0 0x1p-1 0x1p+1\n",
				     "1e-12", &out), 1);
	ck_assert_ptr_nonnull(strstr(out, "> 1e-12 in: loss 0"));
	free(out);
	ck_assert_int_eq(run_compare(dir, ref, ref, "nan", &out), 2);
	free(out);
	tu_rmtree_free(dir);
}
END_TEST

/* tests/gpu/gemm.c, the GPU check's measurement of matrix-multiply
 * rates, builds against this machine's CUDA and cuBLASLt headers, so that
 * it still compiles on the day a GPU is lent; with no driver it fails
 * cleanly (exit 1, the CUDA error on stderr), never crashes. */
START_TEST(gemm_measurement_builds_and_fails_cleanly_without_a_gpu)
{
	const char *cuda = getenv("CUDA_HOME") ? getenv("CUDA_HOME") : "/usr/local/cuda";
	char inc[4096], hdr[4096], lib[4096], rpath[4096], src[4096], bin[4096];
	snprintf(hdr, sizeof hdr, "%s/include/cublasLt.h", cuda);
	if (!tu_exists(hdr)) {
		tu_skip("gemm_measurement_builds_and_fails_cleanly_without_a_gpu",
			"no %s", hdr);
		return;
	}
	char *dir = tu_mkdtemp();
	snprintf(inc, sizeof inc, "-I%s/include", cuda);
	snprintf(lib, sizeof lib, "-L%s/lib64", cuda);
	snprintf(rpath, sizeof rpath, "-Wl,-rpath,%s/lib64", cuda);
	snprintf(src, sizeof src, "%s/tests/gpu/gemm.c", tu_src());
	snprintf(bin, sizeof bin, "%s/gemm", dir);
	char *cc[] = {"cc", "-std=c11", "-Wall", "-Wextra", "-Werror", inc, "-o", bin, src,
		      lib, rpath, "-lcublasLt", "-lcudart", NULL};
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 120, cc), 0);
	ck_assert_msg(r.status == 0, "cc: %s", r.err);
	tu_run_free(&r);
	char *run[] = {bin, "--quick", NULL};
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, run), 0);
	if (r.status == 0) {
		/* a GPU after all: the figures' header is there */
		ck_assert_ptr_nonnull(strstr(r.out, "precision\tshape\tm\tn\tk\tms\ttflops\n"));
	} else {
		ck_assert_int_eq(r.status, 1);
		ck_assert_msg(strncmp(r.err, "gemm: ", 6) == 0, "%s", r.err);
	}
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

/* ---- the GPU check itself -------------------------------------------------- */

/* tests/gpu/run.sh, rehearsed on the CPU (PPCC_GPU_REHEARSAL=1: the
 * local transport grouped, posting order as NCCL, in place of
 * trainer_cuda's loopback): every step it takes on a GPU passes here,
 * so what a GPU run would add is the GPU, not the script's plumbing
 * (the plans, the --stats figures it parses, compare.c, the order
 * refusal, the fault injection and every rank's bound, and the
 * all-to-all of tests/gpu/a2a.c, its elements checked and its member
 * that never comes timing out). */
START_TEST(gpu_check_rehearses_every_step_on_the_cpu)
{
	const char *build = getenv("PPCC_BUILD");
	ck_assert_msg(build != NULL, "PPCC_BUILD not set (run through make check)");
	char bvar[4096];
	snprintf(bvar, sizeof bvar, "BUILD=%s", build);
	char *argv[] = {"env", "PPCC_GPU_REHEARSAL=1", "PPCC_GPU_FAULT_TIMEOUT=2",
			bvar, "bash", "tests/gpu/run.sh", NULL};
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, tu_src(), NULL, NULL, 300, argv), 0);
	ck_assert_msg(r.status == 0, "exit %d:\n%s\n%s", r.status, r.out, r.err);
	const char *summary = strstr(r.out, "==== ppcc GPU check: ");
	ck_assert_msg(summary, "%s", r.out);
	static const char *const pass[] = {
		"loopback gpipe p=2 ", "loopback 1f1b p=2 ", "loopback interleaved p=2 ",
		"loopback gpipe p=4 ", "loopback gpipe p=4 --debug ",
		"loopback 1f1b p=4 ", "loopback interleaved p=4 ",
		/* the nccl grid's stand-in: local data parallelism */
		"nccl grid gpipe 1x2 ", "nccl grid 1f1b 1x2 ",
		"nccl grid interleaved 1x2 ", "nccl grid gpipe 2x2 ",
		"nccl grid 1f1b 2x2 ", "nccl grid interleaved 2x2 ",
		/* and ZeRO 3's */
		"nccl zero3 gpipe 1x2 ", "nccl zero3 1f1b 1x2 ",
		"nccl zero3 interleaved 1x2 ", "nccl zero3 gpipe 2x2 ",
		"nccl zero3 1f1b 2x2 ", "nccl zero3 interleaved 2x2 ",
	};
	char want[128];
	for (size_t k = 0; k < sizeof pass / sizeof pass[0]; k++) {
		snprintf(want, sizeof want, "\nPASS  %-28s step ", pass[k]);
		const char *line = strstr(summary, want);
		ck_assert_msg(line, "no '%s' in\n%s", want, summary);
		/* figures parsed from --stats: time, bytes (which the local
		 * data-parallel trainer does not count; it prints its
		 * reductions), the difference */
		const char *b = strstr(line, " ms, ");
		int dp = strncmp(pass[k], "nccl grid", 9) == 0 ||
			 strncmp(pass[k], "nccl zero3", 10) == 0;
		ck_assert_msg(b && (dp ? strncmp(b, " ms, reductions ", 16) == 0 &&
						 strstr(b, " ms waited for) per rank, "
							"largest difference 0,")
					: b[5] >= '1' && b[5] <= '9' &&
						  strstr(b, " bytes received per step, "
							 "largest difference 0,")),
			      "%.200s", line);
	}
	ck_assert_msg(strstr(summary, "\nPASS  order refusal                refused at init on both ranks\n") &&
		      strstr(summary, "\nPASS  fault fail p=4               every rank reported ") &&
		      strstr(summary, "(bound 0.4s)\n") &&
		      strstr(summary, "\nPASS  fault stuck p=4              every rank reported ") &&
		      strstr(summary, "(bound 5s)\n") &&
		      strstr(summary, "\nPASS  a2a ok p=4                   a2a ok 4 ranks\n") &&
		      strstr(summary, "\nPASS  a2a stuck p=4                a2a stuck ok\n") &&
		      strstr(summary, "\nresult:   all checks passed\n") &&
		      !strstr(summary, "FAIL"), "%s", summary);
	tu_run_free(&r);
}
END_TEST

Suite *suite_nccl(void)
{
	return tu_suite("nccl", "nccl", 120, (const TTest *const[]){
		device_follows_the_node_local_rank,
		local_rank_comes_from_the_launcher_first_variable_set,
		abort_store_relays_a_rank_failure_to_every_other_rank,
		abort_store_reports_a_dead_process_and_rank_0s_own_failure,
		abort_store_open_is_bounded_by_its_deadline,
		abort_store_port_comes_from_the_environment,
		grouped_ranks_told_of_a_failure_through_the_abort_store,
		grouped_ranks_stop_within_the_bound_around_a_stuck_callback,
		nccl_loopback_fails_cleanly_without_a_gpu,
		nccl_data_parallel_fails_cleanly_without_a_gpu,
		allocation_failures_in_grouped_mode_never_abort_inside_a_group,
		compare_fails_on_nan_and_infinity,
		gemm_measurement_builds_and_fails_cleanly_without_a_gpu,
		gpu_check_rehearses_every_step_on_the_cpu,
		NULL});
}
