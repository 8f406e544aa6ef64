/*
 * run_local.c - ppcc_rt_run_local: every rank of a schedule in a thread
 * of its own over the local transport (or nccl's loopback), through the
 * same ppcc_rt_init, ppcc_rt_step and ppcc_rt_free a trainer calls.
 */
#include <pthread.h>
#include <string.h>

#include "rt.h"

typedef struct local_thread {
	pthread_t thread;
	const ppcc_schedule *s;
	const ppcc_rt_stage_fns *fns;
	ppcc_rt_options o;
	int rank;
	int status;
	ppcc_rt_stats stats;
} local_thread;

static void *local_rank_main(void *arg)
{
	local_thread *lt = arg;
	ppcc_rt *rt = NULL;
	memset(&lt->stats, 0, sizeof lt->stats);
	lt->stats.rank = lt->rank;
	lt->stats.failed_action = -1;
	lt->status = ppcc_rt_init(&rt, lt->s, lt->rank, &lt->o);
	if (lt->status == 0)
		lt->status = ppcc_rt_step(&lt->stats, rt, lt->fns);
	lt->stats.status = lt->status;
	ppcc_rt_free(rt);
	return NULL;
}

int ppcc_rt_run_local(ppcc_rt_stats *out, const ppcc_schedule *s,
		      const ppcc_rt_stage_fns *fns,
		      const ppcc_rt_options *opts)
{
	static const ppcc_rt_options dflt = PPCC_RT_OPTIONS_INIT;
	ppcc_rt_local_world *w = NULL;
	local_thread *th = NULL;
	int err, started = 0;

	size_t size = out ? ppcc_rt_stats_size(out->version) : 0;
	if (!s || !fns || s->n_ranks < 1 || (out && !size))
		return PPCC_RT_EINPUT;
	if ((err = ppcc_rt_local_world_new(&w, s->n_ranks)) < 0)
		return err;
	th = ppcc_calloc((size_t)s->n_ranks, sizeof *th);
	if (!th) {
		err = PPCC_RT_ENOMEM;
		goto out;
	}
	for (int r = 0; r < s->n_ranks; r++) {
		th[r].s = s;
		th[r].fns = fns;
		th[r].o = opts ? *opts : dflt;
		/* nccl with a world is its loopback mode; anything else
		 * runs over the local transport */
		if (th[r].o.transport != PPCC_RT_NCCL)
			th[r].o.transport = PPCC_RT_LOCAL;
		th[r].o.world = w;
		th[r].rank = r;
	}
	for (; started < s->n_ranks; started++)
		if (pthread_create(&th[started].thread, NULL, local_rank_main,
				   &th[started]) != 0)
			break;
	if (started < s->n_ranks) {
		ppcc_rt_local_world_abort(w, started, PPCC_RT_ENOMEM);
		err = PPCC_RT_ENOMEM;
	}
	for (int r = 0; r < started; r++)
		pthread_join(th[r].thread, NULL);
	int who, why;
	if (err == 0 && ppcc_rt_local_world_aborted(w, &who, &why))
		err = why;
	for (int r = 0; r < started && err == 0; r++)
		err = th[r].status;
	for (int r = 0; out && r < s->n_ranks; r++) {
		/* entries of the caller's version, stepped by its size */
		ppcc_rt_stats *o = (ppcc_rt_stats *)((char *)out + (size_t)r * size);
		if (r >= started) {
			th[r].stats.rank = r;
			th[r].stats.status = PPCC_RT_ENOMEM;
			th[r].stats.failed_action = -1;
		}
		o->version = out->version;
		ppcc_rt_stats_put(o, &th[r].stats);
	}
out:
	ppcc_free(th);
	ppcc_rt_local_world_free(w);
	return err;
}
