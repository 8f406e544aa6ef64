/*
 * tests/gpu/a2a.c - ppcc_rt_alltoallv over nccl's loopback (every rank a
 * thread on one GPU, device buffers), for tests/gpu/run.sh; built with
 * -DA2A_CUDA there.  Without it (run.sh's rehearsal on the CPU) the
 * local transport in grouped mode stands in, on host buffers.
 *
 *   gpu_a2a SCHEDULE.json ok     every rank of the schedule: two
 *       all-to-alls (the group in two orders), rank a sending rank b
 *       (a + 2b) % 4 doubles, element e being 1000a + 100b + e, each
 *       region a gap of one element apart; every element received is
 *       checked against that.  Prints "a2a ok N ranks"; exit 0.
 *   gpu_a2a SCHEDULE.json stuck  the last rank never calls it (it waits
 *       until the others have returned): each other rank must fail with
 *       ETIMEOUT or EPEER, the first to time out naming the receive from
 *       the last rank (every member waits for it first after itself and
 *       rank 0).
 *       Prints "a2a stuck ok"; exit 0.
 * Anything else prints what differed and exits 1.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ppcc/runtime.h"

#ifdef A2A_CUDA
#include <cuda_runtime.h>
#endif

#define MAX_RANKS 8
#define SPAN 64

typedef struct job {
	const ppcc_schedule *s;
	ppcc_rt_local_world *w;
	int n, stuck;
	atomic_int returned;
	pthread_mutex_t mu;
	char lines[8192];
} job;

typedef struct rank_run {
	pthread_t th;
	job *j;
	int rank, status;
	char why[256];
} rank_run;

static void diag(int rank, const char *line, void *user)
{
	job *j = user;
	(void)rank;
	pthread_mutex_lock(&j->mu);
	size_t n = strlen(j->lines);
	snprintf(j->lines + n, sizeof j->lines - n, "%s\n", line);
	pthread_mutex_unlock(&j->mu);
}

/* Copies n bytes between host and the transport's memory. */
static int put(void *dst, const void *src, size_t n)
{
#ifdef A2A_CUDA
	return cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice) == cudaSuccess ? 0 : -1;
#else
	memcpy(dst, src, n);
	return 0;
#endif
}

static int get(void *dst, const void *src, size_t n)
{
#ifdef A2A_CUDA
	return cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost) == cudaSuccess ? 0 : -1;
#else
	memcpy(dst, src, n);
	return 0;
#endif
}

static void *alloc(size_t n)
{
#ifdef A2A_CUDA
	void *p = NULL;
	return cudaMalloc(&p, n) == cudaSuccess ? p : NULL;
#else
	return malloc(n);
#endif
}

static void release(void *p)
{
#ifdef A2A_CUDA
	cudaFree(p);
#else
	free(p);
#endif
}

/* One all-to-all of rank me over group; 0, the call's status, or 1 with
 * the first wrong element in why. */
static int once(ppcc_rt *rt, int me, const int *group, int n, char *why,
		size_t why_n)
{
	double in[SPAN], out[SPAN];
	size_t ic[MAX_RANKS], id[MAX_RANKS], oc[MAX_RANKS], od[MAX_RANKS], at = 0;
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
	size_t span = at;
	for (size_t k = 0; k < SPAN; k++)
		out[k] = -7;
	double *din = alloc(sizeof in), *dout = alloc(sizeof out);
	int err = !din || !dout || put(din, in, sizeof in) || put(dout, out, sizeof out)
			  ? 1 : 0;
	if (err) {
		snprintf(why, why_n, "rank %d: device buffers", me);
	} else if ((err = ppcc_rt_alltoallv(dout, oc, od, rt, din, ic, id,
					    sizeof(double), group, n)) == 0) {
		if (get(out, dout, sizeof out)) {
			snprintf(why, why_n, "rank %d: copying back", me);
			err = 1;
		}
		for (size_t k = 0; k < span && !err; k++) {
			double want = -7;
			for (int j = 0; j < n; j++)
				if (k >= od[j] && k < od[j] + oc[j])
					want = 1000.0 * group[j] + 100.0 * me +
					       (double)(k - od[j]);
			if (out[k] != want) {
				snprintf(why, why_n, "rank %d: out[%zu] = %g, want %g",
					 me, k, out[k], want);
				err = 1;
			}
		}
	}
	release(din);
	release(dout);
	return err;
}

static void *rank_main(void *arg)
{
	rank_run *k = arg;
	job *j = k->j;
	ppcc_rt *rt = NULL;
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
#ifdef A2A_CUDA
	o.transport = PPCC_RT_NCCL;
#else
	o.transport = PPCC_RT_LOCAL;
	o.grouped = 1;
#endif
	o.world = j->w;
	o.timeout_s = j->stuck ? 2 : 60;
	o.diag = diag;
	o.diag_user = j;
	if ((k->status = ppcc_rt_init(&rt, j->s, k->rank, &o)) == 0) {
		int group[MAX_RANKS];
		for (int pass = 0; pass < 2 && k->status == 0; pass++) {
			for (int m = 0; m < j->n; m++)
				group[m] = pass ? m : (j->n - m) % j->n;
			if (j->stuck && k->rank == j->n - 1) {
				/* never comes: until the others have returned */
				while (atomic_load(&j->returned) < j->n - 1) {
					struct timespec ts = {0, 1000000};
					nanosleep(&ts, NULL);
				}
				break;
			}
			k->status = once(rt, k->rank, group, j->n, k->why,
					 sizeof k->why);
		}
		atomic_fetch_add(&j->returned, 1);
	} else {
		atomic_fetch_add(&j->returned, 1);
	}
	ppcc_rt_free(rt);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[2], "ok") != 0 && strcmp(argv[2], "stuck") != 0)) {
		fprintf(stderr, "usage: gpu_a2a SCHEDULE.json ok|stuck\n");
		return 2;
	}
	ppcc_schedule *s = NULL;
	if (ppcc_rt_schedule_load(&s, argv[1], NULL) < 0)
		return 1;
	job j = {.s = s, .n = (int)s->n_ranks, .stuck = strcmp(argv[2], "stuck") == 0};
	rank_run k[MAX_RANKS];
	atomic_init(&j.returned, 0);
	pthread_mutex_init(&j.mu, NULL);
	if (j.n < 2 || j.n > MAX_RANKS || ppcc_rt_local_world_new(&j.w, j.n) < 0) {
		fprintf(stderr, "gpu_a2a: a schedule of 2 to %d ranks\n", MAX_RANKS);
		return 1;
	}
	for (int r = 0; r < j.n; r++) {
		k[r] = (rank_run){.j = &j, .rank = r};
		pthread_create(&k[r].th, NULL, rank_main, &k[r]);
	}
	for (int r = 0; r < j.n; r++)
		pthread_join(k[r].th, NULL);
	int bad = 0;
	for (int r = 0; r < j.n; r++) {
		if (j.stuck && r == j.n - 1)
			continue;
		int ok = j.stuck ? k[r].status == PPCC_RT_ETIMEOUT ||
					   k[r].status == PPCC_RT_EPEER
				 : k[r].status == 0;
		if (!ok) {
			printf("rank %d: %s %s\n", r, ppcc_rt_status_str(k[r].status),
			       k[r].why);
			bad = 1;
		}
	}
	char want[128];
	snprintf(want, sizeof want, "alltoallv #0 between steps: timeout: the "
		 "receive from rank %d (", j.n - 1);
	if (j.stuck && !strstr(j.lines, want)) {
		printf("no line says '%s'\n", want);
		bad = 1;
	}
	if (bad)
		printf("%s", j.lines);
	else if (j.stuck)
		printf("a2a stuck ok\n");
	else
		printf("a2a ok %d ranks\n", j.n);
	ppcc_rt_local_world_free(j.w);
	ppcc_rt_schedule_free(s);
	return bad;
}
