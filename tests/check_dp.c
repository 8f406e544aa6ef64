/* check_dp: data parallelism over the local transport (reduce.c): the
 * gradient reduction of every stage's replicas, launched in the step
 * and overlapped with the backward passes that follow; its sums, its
 * order, its failures. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/rt.h"
#include "rt_pipe.h"
#include "testutil.h"

Suite *suite_dp(void);

#define DP_MAX 16

typedef struct dp_case {
	const ppcc_schedule *s;
	int p, d;
	double fwd_s, bwd_s;       /* callbacks sleep this long */
	int fail_replica;          /* its rank 0's first forward fails; -1 */
	/* its rank 0's first forward is stuck until rank 1 of its
	 * replica has returned from its step (or 60 s); -1 */
	int stuck_replica;
	int mismatch_replica;      /* registers bucket 1 instead of 0; -1 */
	int no_group;              /* 1: no data parallelism (the baseline) */
	double timeout_s;          /* the runtime's (dp_case_new: 30 s) */
	/* 1: rank 0's last backward of stage 0 waits (up to 60 s) for its
	 * group to complete a collective; done_in_b: how many it had */
	int wait_in_last_b;
	long done_in_b[DP_MAX];
	int finished[DP_MAX][DP_MAX]; /* its step returned; under mu */
	pthread_cond_t cv;            /* finished changed */
	ppcc_rt_local_world *worlds[DP_MAX];
	ppcc_rt_dp_group *groups[DP_MAX];
	double grad[DP_MAX][DP_MAX][3]; /* [replica][stage] */
	int status[DP_MAX][DP_MAX];     /* [replica][rank] */
	double step_s[DP_MAX][DP_MAX], reduce_s[DP_MAX][DP_MAX], wait_s[DP_MAX][DP_MAX];
	pthread_mutex_t mu;
	char lines[8192];
	size_t len;
	int n_lines;
} dp_case;

typedef struct dp_member {
	dp_case *c;
	int replica, rank;
} dp_member;

static void dp_sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	nanosleep(&ts, NULL);
}

/* Stuck, not for a time but until rank 1 of the replica has given up
 * on this rank and returned from its step (60 s at most: a runtime
 * that never times out fails the test instead of hanging it). */
static void dp_stuck_until_peer_returns(dp_case *c, int replica)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	pthread_mutex_lock(&c->mu);
	while (!c->finished[replica][1] &&
	       pthread_cond_timedwait(&c->cv, &c->mu, &until) == 0)
		;
	pthread_mutex_unlock(&c->mu);
}

static int dp_forward(int stage, int mb, const void *in, size_t in_n, void *out,
		      size_t out_n, void *user)
{
	dp_member *m = user;
	if (out)
		memset(out, 0, out_n);
	if (stage == 0 && mb == 0 && m->replica == m->c->fail_replica)
		return 1;
	if (stage == 0 && mb == 0 && m->replica == m->c->stuck_replica)
		dp_stuck_until_peer_returns(m->c, m->replica);
	dp_sleep_s(m->c->fwd_s);
	return 0;
}

/* Adds (replica + 1) * (stage + 1) * (mb + 1) to each of the stage's
 * three gradients. */
static int dp_backward(int stage, int mb, const void *gout, size_t gout_n,
		       void *gin, size_t gin_n, void *user)
{
	dp_member *m = user;
	if (gin)
		memset(gin, 0, gin_n);
	for (int k = 0; k < 3; k++)
		m->c->grad[m->replica][stage][k] +=
			(double)((m->replica + 1) * (stage + 1) * (mb + 1)) * (k + 1);
	if (m->c->wait_in_last_b && stage == 0 &&
	    mb == m->c->s->n_microbatches - 1)
		m->c->done_in_b[m->replica] =
			ppcc_rt_dp_group_done(m->c->groups[0], 1, 60);
	dp_sleep_s(m->c->bwd_s);
	return 0;
}

/* The split backward: the input gradient adds nothing, the weight
 * gradient what dp_backward adds. */
static int dp_backward_input(int stage, int mb, const void *gout, size_t gout_n,
			     void *gin, size_t gin_n, void *user)
{
	dp_member *m = user;
	(void)stage, (void)mb, (void)gout, (void)gout_n;
	if (gin)
		memset(gin, 0, gin_n);
	dp_sleep_s(m->c->bwd_s / 2);
	return 0;
}

static int dp_backward_weight(int stage, int mb, const void *gout,
			      size_t gout_n, void *user)
{
	dp_member *m = user;
	(void)gout, (void)gout_n;
	for (int k = 0; k < 3; k++)
		m->c->grad[m->replica][stage][k] +=
			(double)((m->replica + 1) * (stage + 1) * (mb + 1)) * (k + 1);
	dp_sleep_s(m->c->bwd_s / 2);
	return 0;
}

static void dp_diag(int rank, const char *line, void *user)
{
	dp_case *c = user;
	pthread_mutex_lock(&c->mu);
	int n = snprintf(c->lines + c->len, sizeof c->lines - c->len, "%s\n", line);
	if (n > 0 && c->len + (size_t)n < sizeof c->lines)
		c->len += (size_t)n;
	c->n_lines++;
	pthread_mutex_unlock(&c->mu);
}

static void *dp_member_main(void *arg)
{
	dp_member *me = arg;
	dp_case *c = me->c;
	int r = me->replica, k = me->rank;
	ppcc_rt_stage_fns fns[DP_MAX];
	for (int s = 0; s < c->s->n_stages; s++)
		fns[s] = (ppcc_rt_stage_fns){dp_forward, dp_backward,
					     dp_backward_input, dp_backward_weight,
					     NULL, me, PPCC_RT_STAGE_FNS_VERSION};
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.timeout_s = c->timeout_s;
	o.world = c->worlds[r];
	o.dp_group = c->no_group ? NULL : c->groups[k];
	o.replica = r;
	o.diag = dp_diag;
	o.diag_user = c;
	ppcc_rt *rt = NULL;
	int err = ppcc_rt_init(&rt, c->s, k, &o);
	for (int s = 0; s < c->s->n_stages && err == 0 && !c->no_group; s++)
		if (c->s->stages[s].rank == k)
			err = ppcc_rt_grad_register(rt, s, r == c->mismatch_replica,
						    c->grad[r][s], 3);
	ppcc_rt_stats st = PPCC_RT_STATS_INIT;
	if (err == 0) {
		err = ppcc_rt_step(&st, rt, fns);
		c->step_s[r][k] = st.step_s;
		if (!c->no_group)
			ppcc_rt_dp_stats(rt, &c->reduce_s[r][k], &c->wait_s[r][k]);
	}
	c->status[r][k] = err;
	pthread_mutex_lock(&c->mu);
	c->finished[r][k] = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	ppcc_rt_free(rt);
	return NULL;
}

static void dp_run(dp_case *c, double delay_s)
{
	pthread_t th[DP_MAX * DP_MAX];
	dp_member mem[DP_MAX * DP_MAX];
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	for (int r = 0; r < c->d; r++)
		ck_assert_int_eq(ppcc_rt_local_world_new(&c->worlds[r], c->p), 0);
	for (int k = 0; k < c->p; k++) {
		ck_assert_int_eq(ppcc_rt_dp_group_new(&c->groups[k], c->d), 0);
		ppcc_rt_dp_group_set_delay(c->groups[k], delay_s);
	}
	int n = c->p * c->d;
	for (int i = 0; i < n; i++) {
		mem[i] = (dp_member){c, i / c->p, i % c->p};
		ck_assert_int_eq(pthread_create(&th[i], NULL, dp_member_main, &mem[i]), 0);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (int k = 0; k < c->p; k++)
		ppcc_rt_dp_group_free(c->groups[k]);
	for (int r = 0; r < c->d; r++)
		ppcc_rt_local_world_free(c->worlds[r]);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
}

static dp_case *dp_case_new(const ppcc_schedule *s, int p, int d, double fwd_s,
			    double bwd_s, int fail, int stuck, int mismatch,
			    int no_group)
{
	dp_case *c = calloc(1, sizeof *c);
	ck_assert_ptr_nonnull(c);
	c->s = s;
	c->p = p;
	c->d = d;
	c->fwd_s = fwd_s;
	c->bwd_s = bwd_s;
	c->fail_replica = fail;
	c->stuck_replica = stuck;
	c->mismatch_replica = mismatch;
	c->no_group = no_group;
	c->timeout_s = 30;
	return c;
}

static void dp_schedule(ppcc_schedule *out, ppcc_arena *a, int kind, int p,
			int m)
{
	int v = ppcc_sched_kind_chunks(kind, p), S = p * v;
	ppcc_stage_info st[DP_MAX];
	for (int s = 0; s < S; s++)
		st[s] = (ppcc_stage_info){s, s % p, s / p, s, s,
					  s > 0 ? 8 : 0, s < S - 1 ? 8 : 0};
	ck_assert_int_eq(ppcc_schedule_build(out, a, kind, p, v, m, 0, st), 0);
}

/* dp_schedule with the compiler's REDUCE_GRAD actions: each stage's 16
 * gradient bytes in two buckets of 8 (the runtime posts the registered
 * bucket 0 at the first, nothing at the second). */
static void dp_schedule_placed(ppcc_schedule *out, ppcc_arena *a, int kind,
			       int p, int m)
{
	dp_schedule(out, a, kind, p, m);
	double g[DP_MAX];
	for (int s = 0; s < out->n_stages; s++)
		g[s] = 16;
	ck_assert_int_eq(ppcc_schedule_place_reductions(out, a, g, 8), 0);
	ck_assert_int_eq(ppcc_schedule_validate_seal(out, NULL, NULL, 0), 0);
}

/* Every replica's every stage ends the step with the sum over replicas
 * of their gradients: sum_r (r+1) * (s+1) * sum_mb (mb+1) * (k+1),
 * here with d = 3, m = 4: 6 * 10 * (s+1) * (k+1); with the reductions
 * where the schedule's REDUCE_GRAD actions say, and where the runtime
 * places them itself in a schedule without them. */
START_TEST(reduced_gradients_are_the_sum_over_the_replicas)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	for (int n = 0; n < 2 * RT_PIPE_KINDS; n++) {
		int kind = RT_PIPE_KIND(n % RT_PIPE_KINDS);
		if (n < RT_PIPE_KINDS)
			dp_schedule(&s, a, kind, 2, 4);
		else
			dp_schedule_placed(&s, a, kind, 2, 4);
		dp_case *c = dp_case_new(&s, 2, 3, 0, 0, -1, -1, -1, 0);
		dp_run(c, 0);
		for (int r = 0; r < c->d; r++) {
			for (int k = 0; k < c->p; k++)
				ck_assert_msg(c->status[r][k] == 0, "%s: replica %d rank %d: %s\n%s",
					      ppcc_schedule_kind_name(kind), r, k,
					      ppcc_rt_status_str(c->status[r][k]), c->lines);
			for (int st = 0; st < s.n_stages; st++)
				for (int k = 0; k < 3; k++)
					ck_assert_msg(c->grad[r][st][k] == 60.0 * (st + 1) * (k + 1),
						      "%s replica %d stage %d: %g",
						      ppcc_schedule_kind_name(kind), r, st,
						      c->grad[r][st][k]);
		}
		ck_assert_int_eq(c->n_lines, 0);
		free(c);
	}
	ppcc_arena_free(a);
}
END_TEST

/* ---- ZeRO: reduce-scatter and the parameter gathers ------------------ */

#define ZC_N 5 /* values a bucket: shards of 1, 1 and 3 over d = 3 */

typedef struct zero_case {
	const ppcc_schedule *s;
	int p, d;
	int no_params_replica;     /* registers none for stage 0; -1 */
	int fail_replica;          /* its rank 0's forward of mb 1 fails; -1 */
	int steps;                 /* 0: 1 */
	ppcc_rt_local_world *worlds[DP_MAX];
	ppcc_rt_dp_group *groups[DP_MAX];
	double grad[DP_MAX][DP_MAX][ZC_N], param[DP_MAX][DP_MAX][ZC_N];
	double seen[DP_MAX][DP_MAX][ZC_N]; /* param at the first forward */
	ppcc_rt_shard shard[DP_MAX][DP_MAX]; /* [replica][stage] */
	int status[DP_MAX][DP_MAX], gather_status[DP_MAX][DP_MAX];
	pthread_mutex_t mu;
	char lines[8192];
	size_t len;
} zero_case;

typedef struct zero_member {
	zero_case *c;
	int replica, rank;
} zero_member;

static int zc_forward(int stage, int mb, const void *in, size_t in_n, void *out,
		      size_t out_n, void *user)
{
	zero_member *m = user;
	if (out)
		memset(out, 0, out_n);
	if (m->replica == m->c->fail_replica && m->rank == 0 && mb == 1)
		return -1;
	if (mb == 0)
		memcpy(m->c->seen[m->replica][stage], m->c->param[m->replica][stage],
		       sizeof m->c->seen[0][0]);
	return 0;
}

/* (replica + 1) * (stage + 1) * (mb + 1) * (k + 1) into value k */
static int zc_backward(int stage, int mb, const void *gout, size_t gout_n,
		       void *gin, size_t gin_n, void *user)
{
	zero_member *m = user;
	if (gin)
		memset(gin, 0, gin_n);
	for (int k = 0; k < ZC_N; k++)
		m->c->grad[m->replica][stage][k] +=
			(double)((m->replica + 1) * (stage + 1) * (mb + 1)) * (k + 1);
	return 0;
}

static void zc_diag(int rank, const char *line, void *user)
{
	zero_case *c = user;
	pthread_mutex_lock(&c->mu);
	int n = snprintf(c->lines + c->len, sizeof c->lines - c->len, "%s\n", line);
	if (n > 0 && c->len + (size_t)n < sizeof c->lines)
		c->len += (size_t)n;
	pthread_mutex_unlock(&c->mu);
}

static void *zc_member_main(void *arg)
{
	zero_member *me = arg;
	zero_case *c = me->c;
	int r = me->replica, k = me->rank;
	ppcc_rt_stage_fns fns[DP_MAX];
	for (int s = 0; s < c->s->n_stages; s++)
		fns[s] = (ppcc_rt_stage_fns){zc_forward, zc_backward, NULL, NULL,
					     NULL, me, PPCC_RT_STAGE_FNS_VERSION};
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.timeout_s = 30; /* a stop that did not spread would time out */
	o.world = c->worlds[r];
	o.dp_group = c->groups[k];
	o.replica = r;
	o.diag = zc_diag;
	o.diag_user = c;
	ppcc_rt *rt = NULL;
	int err = ppcc_rt_init(&rt, c->s, k, &o);
	for (int s = 0; s < c->s->n_stages && err == 0; s++) {
		if (c->s->stages[s].rank != k)
			continue;
		for (int i = 0; i < ZC_N; i++)
			c->param[r][s][i] = 100.0 * (r + 1) + i;
		err = ppcc_rt_grad_register(rt, s, 0, c->grad[r][s], ZC_N);
		if (err == 0 && (r != c->no_params_replica || s != 0))
			err = ppcc_rt_param_register(rt, s, 0, c->param[r][s], ZC_N);
		c->shard[r][s].version = PPCC_RT_SHARD_VERSION;
		if (err == 0)
			err = ppcc_rt_dp_shard(&c->shard[r][s], rt, s, 0);
	}
	ppcc_rt_stats st = PPCC_RT_STATS_INIT;
	for (int step = 0; step < (c->steps > 0 ? c->steps : 1) && err == 0; step++) {
		if (step > 0)
			/* between steps: the own shard updated, every
			 * gradient zeroed, as an optimizer does */
			for (int s = 0; s < c->s->n_stages; s++)
				if (c->s->stages[s].rank == k) {
					for (size_t i = 0; i < c->shard[r][s].count; i++)
						c->param[r][s][c->shard[r][s].offset + i] =
							-10.0 - (double)r;
					memset(c->grad[r][s], 0, sizeof c->grad[r][s]);
				}
		err = ppcc_rt_step(&st, rt, fns);
	}
	c->status[r][k] = err;
	/* the optimizer: the own shard of the parameters, then the gather
	 * every replica makes after the last step */
	for (int s = 0; s < c->s->n_stages && err == 0; s++)
		if (c->s->stages[s].rank == k)
			for (size_t i = 0; i < c->shard[r][s].count; i++)
				c->param[r][s][c->shard[r][s].offset + i] = -1.0 - (double)r;
	if (err == 0)
		c->gather_status[r][k] = ppcc_rt_dp_gather_params(rt);
	ppcc_rt_free(rt);
	return NULL;
}

static void zc_run(zero_case *c)
{
	pthread_t th[DP_MAX * DP_MAX];
	zero_member mem[DP_MAX * DP_MAX];
	pthread_mutex_init(&c->mu, NULL);
	for (int r = 0; r < c->d; r++)
		ck_assert_int_eq(ppcc_rt_local_world_new(&c->worlds[r], c->p), 0);
	for (int k = 0; k < c->p; k++)
		ck_assert_int_eq(ppcc_rt_dp_group_new(&c->groups[k], c->d), 0);
	int n = c->p * c->d;
	for (int i = 0; i < n; i++) {
		mem[i] = (zero_member){c, i / c->p, i % c->p};
		ck_assert_int_eq(pthread_create(&th[i], NULL, zc_member_main, &mem[i]), 0);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (int k = 0; k < c->p; k++)
		ppcc_rt_dp_group_free(c->groups[k]);
	for (int r = 0; r < c->d; r++)
		ppcc_rt_local_world_free(c->worlds[r]);
	pthread_mutex_destroy(&c->mu);
}

/* 1 when one line of lines holds a, then b, then c. */
static int zc_line_has(const char *lines, const char *a, const char *b,
		       const char *c)
{
	for (const char *at = lines; *at;) {
		const char *eol = strchr(at, '\n');
		size_t len = eol ? (size_t)(eol - at) : strlen(at);
		char line[1024];
		snprintf(line, sizeof line, "%.*s", (int)len, at);
		const char *x = strstr(line, a), *y = x ? strstr(x, b) : NULL;
		if (y && strstr(y, c))
			return 1;
		at += len + (eol != NULL);
	}
	return 0;
}

/* The shard owner of value i of a bucket of ZC_N over 3 replicas: 1
 * value each, the last replica the 3 left. */
static int zc_owner(int i)
{
	return i < 2 ? i : 2;
}

/* p = 2, d = 3 on s, replica 1 registering no parameters for stage 0:
 * its rank 0 fails its first gather (op) with one line naming it, every
 * other rank stops as a peer. */
static void zc_expect_unregistered(const ppcc_schedule *s, const char *op)
{
	zero_case *c = calloc(1, sizeof *c);
	ck_assert_ptr_nonnull(c);
	*c = (zero_case){.s = s, .p = 2, .d = 3, .no_params_replica = 1,
			 .fail_replica = -1};
	zc_run(c);
	for (int r = 0; r < 3; r++)
		for (int k = 0; k < 2; k++)
			ck_assert_msg(c->status[r][k] == (r == 1 && k == 0 ? PPCC_RT_EINPUT
									  : PPCC_RT_EPEER),
				      "replica %d rank %d: %s\n%s", r, k,
				      ppcc_rt_status_str(c->status[r][k]), c->lines);
	char want[128];
	snprintf(want, sizeof want, "replica 1: %s stage 0 bucket 0: no "
		 "parameters registered for it (ppcc_rt_param_register)", op);
	ck_assert_msg(strstr(c->lines, want), "%s", c->lines);
	free(c);
}

/* ZeRO 1, p = 2, d = 3, m = 4: each stage's bucket of 5 gradients is
 * reduce-scattered, replica 0 owning value 0, replica 1 value 1 and
 * replica 2 values 2-4 (ppcc_rt_dp_shard says so), each holding the sum
 * over the replicas of its shard only, 6 * 10 * (s + 1) * (k + 1), and
 * its own accumulation, (r + 1) * 10 * (s + 1) * (k + 1), elsewhere; the
 * prologue's gathers gave every first forward each value from its
 * owner, 100 * (owner + 1) + i; and ppcc_rt_dp_gather_params after the
 * step brings every replica each owner's update.  A replica that
 * registered no parameters for stage 0 fails that stage's first gather,
 * naming it, and every other rank of the grid stops as its peer. */
START_TEST(reduce_scatter_keeps_each_shard_and_gathers_give_every_replica_all)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	int kinds[] = {PPCC_SCHED_GPIPE, PPCC_SCHED_1F1B};
	for (size_t n = 0; n < 2; n++) {
		dp_schedule(&s, a, kinds[n], 2, 4);
		double g[DP_MAX];
		for (int st = 0; st < s.n_stages; st++)
			g[st] = 40;
		ck_assert_int_eq(ppcc_schedule_place_collectives(&s, a, g, 1000, 1, 0.5), 0);
		ck_assert_int_eq(ppcc_schedule_validate_seal(&s, NULL, NULL, 0), 0);
		zero_case *c = calloc(1, sizeof *c);
		ck_assert_ptr_nonnull(c);
		*c = (zero_case){.s = &s, .p = 2, .d = 3, .no_params_replica = -1,
				 .fail_replica = -1};
		zc_run(c);
		for (int r = 0; r < 3; r++) {
			for (int k = 0; k < 2; k++) {
				ck_assert_msg(c->status[r][k] == 0 && c->gather_status[r][k] == 0,
					      "replica %d rank %d: %s %s\n%s", r, k,
					      ppcc_rt_status_str(c->status[r][k]),
					      ppcc_rt_status_str(c->gather_status[r][k]),
					      c->lines);
			}
			for (int st = 0; st < 2; st++) {
				const ppcc_rt_shard *sh = &c->shard[r][st];
				ck_assert_int_eq(sh->replica, r);
				ck_assert_int_eq(sh->replicas, 3);
				ck_assert_int_eq(sh->sharded, 1);
				ck_assert_uint_eq(sh->offset, (size_t)r);
				ck_assert_uint_eq(sh->count, r < 2 ? 1u : 3u);
				ck_assert_uint_eq(sh->bucket_count, ZC_N);
				for (int i = 0; i < ZC_N; i++) {
					int own = zc_owner(i) == r;
					double want = (own ? 60.0 : 10.0 * (r + 1)) *
						      (st + 1) * (i + 1);
					ck_assert_msg(c->grad[r][st][i] == want,
						      "replica %d stage %d value %d: %g, not %g",
						      r, st, i, c->grad[r][st][i], want);
					ck_assert_double_eq(c->seen[r][st][i],
							    100.0 * (zc_owner(i) + 1) + i);
					ck_assert_double_eq(c->param[r][st][i],
							    -1.0 - zc_owner(i));
				}
			}
		}
		ck_assert_msg(c->len == 0, "%s", c->lines);
		free(c);
	}

	zc_expect_unregistered(&s, "ALL_GATHER_PARAM");
	ppcc_arena_free(a);
}
END_TEST

/* ZeRO-3 over the runtime, p = 2, d = 3, m = 4, GPipe and 1F1B, two
 * steps: every F and B waits for its own UNSHARD_PARAM group, so each
 * step's first forward sees every value from its owner (100 * (owner +
 * 1) + i in the first step; in the second the -10 - owner each replica's
 * optimizer wrote into its own shard between the steps, which only the
 * second step's gathers bring); the reduce-scatter after each backward
 * adds that backward's gradients over the replicas, 6 * (s + 1) * (mb +
 * 1) * (k + 1), and each replica adds its shard of it to its sum: after
 * the step its shard holds 60 * (s + 1) * (k + 1) and the rest of its
 * buffer the zeros the rounds left (a gradient of a round counted again,
 * or a round left out, gives another sum).  A replica that registered no
 * parameters for stage 0 fails its first gather, naming it; a replica
 * whose forward fails mid-step stops every rank of the grid before the
 * timeout (30 s) could, a gather of the others reporting the failed
 * peer. */
START_TEST(zero3_gathers_serve_each_compute_and_rounds_sum_each_backward)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	int kinds[] = {PPCC_SCHED_GPIPE, PPCC_SCHED_1F1B};
	for (size_t n = 0; n < 2; n++) {
		dp_schedule(&s, a, kinds[n], 2, 4);
		double g[DP_MAX];
		for (int st = 0; st < s.n_stages; st++)
			g[st] = 40;
		ck_assert_int_eq(ppcc_schedule_place_collectives(&s, a, g, 1000, 3, 0.5), 0);
		ck_assert_int_eq(ppcc_schedule_validate_seal(&s, NULL, NULL, 0), 0);
		ck_assert_int_eq(s.version, 5);
		zero_case *c = calloc(1, sizeof *c);
		ck_assert_ptr_nonnull(c);
		*c = (zero_case){.s = &s, .p = 2, .d = 3, .no_params_replica = -1,
				 .fail_replica = -1, .steps = 2};
		zc_run(c);
		for (int r = 0; r < 3; r++) {
			for (int k = 0; k < 2; k++)
				ck_assert_msg(c->status[r][k] == 0 && c->gather_status[r][k] == 0,
					      "%s replica %d rank %d: %s %s\n%s",
					      ppcc_schedule_kind_name(kinds[n]), r, k,
					      ppcc_rt_status_str(c->status[r][k]),
					      ppcc_rt_status_str(c->gather_status[r][k]),
					      c->lines);
			for (int st = 0; st < 2; st++) {
				ck_assert_int_eq(c->shard[r][st].sharded, 1);
				for (int i = 0; i < ZC_N; i++) {
					double want = zc_owner(i) == r ? 60.0 * (st + 1) * (i + 1) : 0;
					ck_assert_msg(c->grad[r][st][i] == want,
						      "%s replica %d stage %d value %d: %g, not %g",
						      ppcc_schedule_kind_name(kinds[n]), r, st, i,
						      c->grad[r][st][i], want);
					ck_assert_double_eq(c->seen[r][st][i], -10.0 - zc_owner(i));
					ck_assert_double_eq(c->param[r][st][i], -1.0 - zc_owner(i));
				}
			}
		}
		ck_assert_msg(c->len == 0, "%s", c->lines);
		free(c);
	}

	zc_expect_unregistered(&s, "UNSHARD_PARAM");

	zero_case *c = calloc(1, sizeof *c);
	ck_assert_ptr_nonnull(c);
	*c = (zero_case){.s = &s, .p = 2, .d = 3, .no_params_replica = -1,
			 .fail_replica = 1};
	zc_run(c);
	/* told, not timed out: EPEER, where a wait that ran to its
	 * timeout would be ETIMEOUT */
	for (int r = 0; r < 3; r++)
		for (int k = 0; k < 2; k++)
			ck_assert_msg(c->status[r][k] == (r == 1 && k == 0 ? PPCC_RT_ECALLBACK
									  : PPCC_RT_EPEER),
				      "replica %d rank %d: %s\n%s", r, k,
				      ppcc_rt_status_str(c->status[r][k]), c->lines);
	/* Which gather sees replica 1 stop first, and whether replica 1's
	 * rank 0 or rank 1 had stopped by then, is timing: stage 0's
	 * gathers may see "(callback failed)", stage 1's "(another rank
	 * failed)", and a rank between gathers stops through its own
	 * pipeline instead.  The first of replicas 0 and 2 to stop can only
	 * have learnt it in a gather, so one such line is always there. */
	ck_assert_msg(zc_line_has(c->lines, ": UNSHARD_PARAM stage ",
				  " bucket 0 #", ": peer failed: replica 1 stopped ("),
		      "%s", c->lines);
	free(c);
	ppcc_arena_free(a);
}
END_TEST

/* A replica whose forward fails stops the others' reductions at once,
 * each with one line naming the reduction: they are told (EPEER), not
 * timed out (ETIMEOUT, after the 30 s timeout). */
START_TEST(a_failing_replica_stops_the_grid_naming_the_collective)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	dp_schedule(&s, a, PPCC_SCHED_1F1B, 2, 4);
	dp_case *c = dp_case_new(&s, 2, 2, 0, 0, 1, -1, -1, 0);
	dp_run(c, 0);
	ck_assert_int_eq(c->status[1][0], PPCC_RT_ECALLBACK);
	ck_assert_int_eq(c->status[1][1], PPCC_RT_EPEER);
	for (int k = 0; k < 2; k++)
		ck_assert_msg(c->status[0][k] == PPCC_RT_EPEER, "rank %d: %s\n%s", k,
			      ppcc_rt_status_str(c->status[0][k]), c->lines);
	/* rank 1's stage 1 reduction is posted first; whether it or rank
	 * 0's, posted later, reports the stop first is timing */
	ck_assert_msg((strstr(c->lines, "ppcc-rt: rank 1: replica 0: REDUCE_GRAD stage 1 "
					"bucket 0 #0: peer failed: replica 1 stopped") ||
		       strstr(c->lines, "ppcc-rt: rank 0: replica 0: REDUCE_GRAD stage 0 "
					"bucket 0 #0: peer failed: replica 1 stopped")),
		      "%s", c->lines);
	free(c);
	ppcc_arena_free(a);
}
END_TEST

/* A replica stuck in a callback (until its pipeline peer has returned:
 * no margin of time): that peer times out on the receive from it and
 * stops the group, or the other replica's wait for the reduction times
 * out first; either way no rank waits past its timeout (1 s) for the
 * reduction, and the line names it and the replica. */
START_TEST(a_stuck_replica_times_out_the_reduction_naming_it)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	dp_schedule(&s, a, PPCC_SCHED_GPIPE, 2, 2);
	dp_case *c = dp_case_new(&s, 2, 2, 0, 0, -1, 1, -1, 0);
	c->timeout_s = 1.0;
	dp_run(c, 0);
	ck_assert_msg(c->status[0][1] == PPCC_RT_ETIMEOUT ||
		      c->status[0][1] == PPCC_RT_EPEER, "%s", c->lines);
	ck_assert_msg(strstr(c->lines, "ppcc-rt: rank 1: replica 0: REDUCE_GRAD stage 1 "
				       "bucket 0 #0: timeout: waited 1.0") ||
		      strstr(c->lines, "ppcc-rt: rank 1: replica 0: REDUCE_GRAD stage 1 "
				       "bucket 0 #0: peer failed: replica 1 "
				       "stopped (timeout)"), "%s", c->lines);
	ck_assert_msg(c->status[1][1] == PPCC_RT_ETIMEOUT, "%s", c->lines);
	free(c);
	ppcc_arena_free(a);
}
END_TEST

/* Replicas that register different buckets would enter different
 * collectives: refused on both sides of the first one. */
START_TEST(replicas_entering_different_collectives_are_refused)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	dp_schedule(&s, a, PPCC_SCHED_1F1B, 2, 2);
	dp_case *c = dp_case_new(&s, 2, 2, 0, 0, -1, -1, 1, 0);
	dp_run(c, 0);
	int mismatch = 0;
	for (int r = 0; r < 2; r++)
		for (int k = 0; k < 2; k++)
			mismatch += c->status[r][k] == PPCC_RT_EMISMATCH;
	ck_assert_msg(mismatch >= 1, "%s", c->lines);
	ck_assert_msg(strstr(c->lines, "but stage 1 bucket 0 (3 values) on another replica") ||
		      strstr(c->lines, "but stage 1 bucket 1 (3 values) on another replica"),
		      "%s", c->lines);
	free(c);
	ppcc_arena_free(a);
}
END_TEST

/* The simulator's costs for dp_schedule's stages: forward f, backward b
 * milliseconds, communication free. */
static ppcc_stage_cost *dp_costs(ppcc_arena *a, int S, double f, double b)
{
	ppcc_stage_cost *c = ppcc_arena_alloc(a, (size_t)S, sizeof *c);
	ck_assert_ptr_nonnull(c);
	for (int k = 0; k < S; k++)
		c[k] = (ppcc_stage_cost){.fwd_ms = f, .bwd_ms = b};
	return c;
}

/* The simulator times the REDUCE_GRAD actions as the prediction does.
 * GPipe, p = 2, m = 2, F 1 ms, B 2 ms (rank 1's last B ends at 7, rank
 * 0's at 9, as below), two buckets of 8 bytes a stage, each 1 ms + 8 x
 * 0.25 ms = 3 ms, one after another: rank 1 done at 7 + 6 = 13, rank 0
 * at 9 + 6 = 15; the pipeline's step stays 9.  With 4 ms for each
 * reduction instead (reduce_ms): 7 + 8 = 15 and 9 + 8 = 17. */
START_TEST(the_simulator_times_the_schedules_reductions_as_predicted)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	ppcc_estimate e;
	double end[2], step, four[2] = {4, 4};
	dp_schedule_placed(&s, a, PPCC_SCHED_GPIPE, 2, 2);
	ppcc_stage_cost c[2];
	for (int k = 0; k < 2; k++)
		c[k] = (ppcc_stage_cost){.fwd_ms = 1, .bwd_ms = 2,
					 .dp_reduce_ms = 1,
					 .dp_reduce_ms_per_byte = 0.25};
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
	ck_assert_double_eq(e.step_ms, 9);
	ck_assert_double_eq(e.dp_end_ms[0], 15);
	ck_assert_double_eq(e.dp_end_ms[1], 13);
	ck_assert_double_eq(e.dp_busy_ms[0], 6);
	ck_assert_double_eq(e.dp_step_ms, 15);
	/* each REDUCE_GRAD's times are its run on the channel */
	int i = s.ranks[0].n_actions - 1;
	ck_assert_int_eq(s.ranks[0].actions[i].op, PPCC_OP_REDUCE_GRAD);
	ck_assert_double_eq(e.start_ms[0][i], 12);
	ck_assert_double_eq(e.end_ms[0][i], 15);
	ck_assert_int_eq(ppcc_dp_reduce_timeline(end, &step, &s, c, &e, NULL), 0);
	ck_assert_double_eq(end[0], 15);
	ck_assert_double_eq(end[1], 13);
	ck_assert_double_eq(step, 15);
	ck_assert_int_eq(ppcc_dp_reduce_timeline(end, &step, &s, c, &e, four), 0);
	ck_assert_double_eq(end[0], 17);
	ck_assert_double_eq(end[1], 15);
	ck_assert_double_eq(step, 17);
	/* without reductions in the schedule there is nothing to time but
	 * what reduce_ms gives */
	dp_schedule(&s, a, PPCC_SCHED_GPIPE, 2, 2);
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
	ck_assert_double_eq(e.dp_step_ms, 9);
	ck_assert_double_eq(e.dp_busy_ms[0], 0);
	ck_assert_int_eq(ppcc_dp_reduce_timeline(end, &step, &s, c, &e, NULL),
			 PPCC_EINTERNAL);
	ppcc_arena_free(a);
}
END_TEST

/* The prediction, by hand.  GPipe, p = 2, m = 2, F 1 ms, B 2 ms: rank 1
 * runs F at 1-2 and 2-3, B at 3-5 and 5-7; rank 0 F at 0-1 and 1-2, B at
 * 5-7 and 7-9.  4 ms reductions from the end of each stage's last B:
 * rank 1 done at 7 + 4 = 11, rank 0 at 9 + 4 = 13.  Interleaved, p = 1,
 * v = 2, m = 1 (one rank, two stages): F s0 0-1, F s1 1-2, B s1 2-4, B s0
 * 4-6; 3 ms each: s1's at 4-7, s0's ready at 6 but the channel is busy
 * until 7: 7-10. */
START_TEST(the_prediction_launches_each_stage_after_its_last_backward)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	ppcc_estimate e;
	double end[2], step, four[2] = {4, 4}, three[2] = {3, 3};
	dp_schedule(&s, a, PPCC_SCHED_GPIPE, 2, 2);
	ppcc_stage_cost *c = dp_costs(a, 2, 1, 2);
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
	ck_assert_double_eq(e.step_ms, 9);
	ck_assert_int_eq(ppcc_dp_reduce_timeline(end, &step, &s, c, &e, four), 0);
	ck_assert_double_eq(end[0], 13);
	ck_assert_double_eq(end[1], 11);
	ck_assert_double_eq(step, 13);

	dp_schedule(&s, a, PPCC_SCHED_INTERLEAVED, 1, 1);
	c = dp_costs(a, 2, 1, 2);
	ck_assert_int_eq(ppcc_simulate(&e, a, &s, c), 0);
	ck_assert_double_eq(e.step_ms, 6);
	ck_assert_int_eq(ppcc_dp_reduce_timeline(end, &step, &s, c, &e, three), 0);
	ck_assert_double_eq(end[0], 10);
	ck_assert_double_eq(step, 10);
	ppcc_arena_free(a);
}
END_TEST

/* Overlap, decided on the order of events, not on their times.
 * Interleaved, p = 2, v = 2, m = 4, d = 2: rank 0 runs stages 0 and 2,
 * and stage 2's last backward comes before stage 0's.  Launched at that
 * backward, stage 2's reduction completes while rank 0 is still in its
 * last backward of stage 0, which waits for it (for rank 0's group to
 * complete a collective: stage 0's own cannot have begun).  Reductions
 * run after the step instead would leave that wait to run out (60 s)
 * with none complete.  How much shorter the step is for it, against
 * the prediction, is bench_runtime's figure (make bench, part 3). */
START_TEST(reductions_overlap_the_remaining_backward_passes)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	dp_schedule(&s, a, PPCC_SCHED_INTERLEAVED, 2, 4);
	dp_case *c = dp_case_new(&s, 2, 2, 0, 0, -1, -1, -1, 0);
	c->wait_in_last_b = 1;
	dp_run(c, 0);
	for (int r = 0; r < 2; r++) {
		for (int k = 0; k < 2; k++)
			ck_assert_msg(c->status[r][k] == 0, "%s", c->lines);
		ck_assert_msg(c->done_in_b[r] == 1, "replica %d: %ld reductions "
			      "complete in the last backward of stage 0, not 1",
			      r, c->done_in_b[r]);
		/* and the sums are whole: sum over replicas q of (q + 1) *
		 * (stage + 1) * (1 + 2 + 3 + 4) * (k + 1) */
		for (int st = 0; st < 4; st++)
			for (int k = 0; k < 3; k++)
				ck_assert_double_eq(c->grad[r][st][k],
						    3.0 * (st + 1) * 10 * (k + 1));
	}
	free(c);
	ppcc_arena_free(a);
}
END_TEST

/* dp_schedule under ZeRO 1: each stage's gradients (g[s] bytes) one
 * bucket, reduce-scattered, and its parameters (as many bytes) gathered
 * in the prologue. */
static void dp_schedule_zero1(ppcc_schedule *out, ppcc_arena *a, int kind,
			      int p, int m, const double *g)
{
	dp_schedule(out, a, kind, p, m);
	ck_assert_int_eq(ppcc_schedule_place_collectives(out, a, g, 1e6, 1, 1.0), 0);
	ck_assert_int_eq(ppcc_schedule_validate_seal(out, NULL, NULL, 0), 0);
}

/* The prologue's gathers by hand.  Interleaved, p = 1, v = 2, m = 1:
 * one rank holding stages 0 and 1, its list G0 G1 F0 F1 B1 RS1 B0 RS0;
 * F 4 ms, B 5 ms, a gather 1 ms a byte (stage 0's 2 bytes, stage 1's 3),
 * the reduce-scatters free.  The gathers run on the rank's channel from
 * 0: G0 0-2, G1 2-5; F0 waits for G0 only: 2-6 (2 ms exposed); F1 at 6,
 * after G1's end at 5 (hidden): 6-10; B1 10-15, B0 15-20.  The step is
 * 20 ms, where waiting for both gathers first would give 5 + 16 = 21.
 * With stage 1's gather 5 ms (G1 2-7), F1 waits from 6 to 7: 3 ms
 * exposed, F1 7-11, B1 11-16, B0 16-21.  The replay from the send times
 * gives the same times. */
START_TEST(each_stage_waits_only_for_its_own_gathers_in_the_simulation)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	ppcc_estimate e;
	ppcc_stage_cost c[2];
	for (int k = 0; k < 2; k++)
		c[k] = (ppcc_stage_cost){.fwd_ms = 4, .bwd_ms = 5,
					 .dp_gather_ms_per_byte = 1};
	static const int op[8] = {PPCC_OP_ALL_GATHER_PARAM, PPCC_OP_ALL_GATHER_PARAM,
				  PPCC_OP_F, PPCC_OP_F, PPCC_OP_B,
				  PPCC_OP_REDUCE_SCATTER_GRAD, PPCC_OP_B,
				  PPCC_OP_REDUCE_SCATTER_GRAD};
	static const int stage[8] = {0, 1, 0, 1, 1, 1, 0, 0};
	static const double want[2][8][2] = {
		{{0, 2}, {2, 5}, {2, 6}, {6, 10}, {10, 15}, {15, 15}, {15, 20}, {20, 20}},
		{{0, 2}, {2, 7}, {2, 6}, {7, 11}, {11, 16}, {16, 16}, {16, 21}, {21, 21}}};
	for (int v = 0; v < 2; v++) {
		double g[2] = {2, v == 0 ? 3 : 5};
		dp_schedule_zero1(&s, a, PPCC_SCHED_INTERLEAVED, 1, 1, g);
		ck_assert_int_eq(s.ranks[0].n_actions, 8);
		for (int i = 0; i < 8; i++) {
			ck_assert_int_eq(s.ranks[0].actions[i].op, op[i]);
			ck_assert_int_eq(s.ranks[0].actions[i].stage, stage[i]);
		}
		for (int keep = 0; keep < 2; keep++) {
			ck_assert_int_eq(ppcc_simulate_keep(&e, a, &s, c,
							    keep ? PPCC_SIM_ACTION_TIMES
								 : PPCC_SIM_SEND_TIMES), 0);
			ck_assert_double_eq(e.step_ms, v == 0 ? 20 : 21);
			ck_assert_double_eq(e.dp_gather_ms[0], v == 0 ? 5 : 7);
			ck_assert_double_eq(e.dp_gather_wait_ms[0], v == 0 ? 2 : 3);
			ck_assert_double_eq(e.dp_ready_ms[0], 2);
			ck_assert_double_eq(e.dp_ready_ms[1], v == 0 ? 5 : 7);
			ppcc_rank_times t;
			ck_assert_int_eq(ppcc_rank_times_begin(&t, &s, c, &e, 0), 0);
			for (int i = 0; i < 8; i++) {
				double t0, t1;
				ck_assert_int_eq(ppcc_rank_times_at(&t, i, &t0, &t1), 0);
				ck_assert_msg(t0 == want[v][i][0] && t1 == want[v][i][1],
					      "case %d action %d: %g-%g, not %g-%g", v, i,
					      t0, t1, want[v][i][0], want[v][i][1]);
			}
		}
	}
	ppcc_arena_free(a);
}
END_TEST

/* ZeRO-3's gathers by hand.  1F1B, p = 2, m = 2, one bucket a stage:
 * stage 0's parameters 2 bytes, stage 1's 5, a gather or a
 * reduce-scatter 1 ms a byte, F 4 ms, B 6 ms, p2p free.  Each F and B
 * has its group (one UNSHARD_PARAM), listed right after the compute two
 * before it, the first two at the start; each B its reduce-scatter,
 * after the gathers listed with it:
 *   rank 0: G G F00 G SEND_F F01 G SEND_F RECV_B B00 RS RECV_B B01 RS
 *   rank 1: G G RECV_F F10 G B10 G RS SEND_B RECV_F F11 B11 RS SEND_B
 * Rank 0's channel: G 0-2, G 2-4; F00 waits for the first: 2-6 (2 ms
 * exposed); G 6-8 (for B00); F01 6-10 (its group ended at 4); G 10-12
 * (for B01).  Rank 1: G 0-5, G 5-10; F10 6-10 once its input is in
 * (its group ended at 5); G 10-15 (F11's); B10 10-16 (its group ended
 * at 10); G 16-21 (B11's), then RS 21-26; F11 16-20; B11 waits for its
 * group until 21: 21-27 (1 ms exposed), RS 27-32.  Rank 0's B00 16-22
 * (the gradient sent at 16), RS 22-24, B01 27-33 (sent at 27), RS
 * 33-35: the step is 33 ms, the reductions end at 35 and 32.  Peaks:
 * the gather buffers of each rank's stage (zero3_param_bytes, 10 and 11
 * bytes, both buffers), nothing else held.  The replay from the send times gives the
 * same times. */
START_TEST(each_compute_waits_for_its_own_zero3_gathers_in_the_simulation)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	ppcc_estimate e;
	ppcc_stage_cost c[2];
	for (int k = 0; k < 2; k++)
		c[k] = (ppcc_stage_cost){.fwd_ms = 4, .bwd_ms = 6,
					 .bwd_input_ms = 3, .bwd_weight_ms = 3,
					 .dp_gather_ms_per_byte = 1,
					 .dp_reduce_ms_per_byte = 1,
					 .zero3_param_bytes = 10 + k};
	dp_schedule(&s, a, PPCC_SCHED_1F1B, 2, 2);
	double g[2] = {2, 5};
	ck_assert_int_eq(ppcc_schedule_place_collectives(&s, a, g, 1e6, 3, 1.0), 0);
	ck_assert_int_eq(ppcc_schedule_validate_seal(&s, NULL, NULL, 0), 0);
	ck_assert_int_eq(s.version, 5);
	enum { G = PPCC_OP_UNSHARD_PARAM, R = PPCC_OP_REDUCE_SCATTER_GRAD };
	static const int op[2][14] = {
		{G, G, PPCC_OP_F, G, PPCC_OP_SEND_F, PPCC_OP_F, G, PPCC_OP_SEND_F,
		 PPCC_OP_RECV_B, PPCC_OP_B, R, PPCC_OP_RECV_B, PPCC_OP_B, R},
		{G, G, PPCC_OP_RECV_F, PPCC_OP_F, G, PPCC_OP_B, G, R, PPCC_OP_SEND_B,
		 PPCC_OP_RECV_F, PPCC_OP_F, PPCC_OP_B, R, PPCC_OP_SEND_B}};
	static const double want[2][14][2] = {
		{{0, 2}, {2, 4}, {2, 6}, {6, 8}, {6, 6}, {6, 10}, {10, 12},
		 {10, 10}, {10, 16}, {16, 22}, {22, 24}, {22, 27}, {27, 33},
		 {33, 35}},
		{{0, 5}, {5, 10}, {0, 6}, {6, 10}, {10, 15}, {10, 16}, {16, 21},
		 {21, 26}, {16, 16}, {16, 16}, {16, 20}, {21, 27}, {27, 32},
		 {27, 27}}};
	for (int r = 0; r < 2; r++) {
		ck_assert_int_eq(s.ranks[r].n_actions, 14);
		for (int i = 0; i < 14; i++) {
			ck_assert_msg(s.ranks[r].actions[i].op == op[r][i],
				      "rank %d action %d: %s", r, i,
				      ppcc_op_name(s.ranks[r].actions[i].op));
			ck_assert_int_eq(s.ranks[r].actions[i].stage, r);
		}
	}
	for (int keep = 0; keep < 2; keep++) {
		ck_assert_int_eq(ppcc_simulate_keep(&e, a, &s, c,
						    keep ? PPCC_SIM_ACTION_TIMES
							 : PPCC_SIM_SEND_TIMES), 0);
		ck_assert_double_eq(e.step_ms, 33);
		ck_assert_double_eq(e.dp_gather_ms[0], 8);
		ck_assert_double_eq(e.dp_gather_ms[1], 20);
		ck_assert_double_eq(e.dp_gather_wait_ms[0], 2);
		ck_assert_double_eq(e.dp_gather_wait_ms[1], 1);
		ck_assert_double_eq(e.dp_busy_ms[0], 4);
		ck_assert_double_eq(e.dp_busy_ms[1], 10);
		ck_assert_double_eq(e.dp_end_ms[0], 35);
		ck_assert_double_eq(e.dp_end_ms[1], 32);
		ck_assert_double_eq(e.peak_memory_bytes[0], 10);
		ck_assert_double_eq(e.peak_memory_bytes[1], 11);
		for (int r = 0; r < 2; r++) {
			ppcc_rank_times t;
			ck_assert_int_eq(ppcc_rank_times_begin(&t, &s, c, &e, r), 0);
			for (int i = 0; i < 14; i++) {
				double t0, t1;
				ck_assert_int_eq(ppcc_rank_times_at(&t, i, &t0, &t1), 0);
				ck_assert_msg(t0 == want[r][i][0] && t1 == want[r][i][1],
					      "rank %d action %d: %g-%g, not %g-%g", r,
					      i, t0, t1, want[r][i][0], want[r][i][1]);
			}
		}
	}
	ppcc_arena_free(a);
}
END_TEST

static void dp_no_complaint(int setting, const char *msg, void *user)
{
	(void)setting;
	(void)msg;
	(void)user;
}

/* Every kind under ZeRO-3, p 2 to 4, m 1 to 2p, v its chunks, two
 * buckets a stage: the placement validates; each rank's F, B and I are
 * served in order by groups of their own stage, at most two waiting;
 * gathers and reductions of no time leave the simulated step the
 * pipeline's own, and of some time never shorten it. */
START_TEST(zero3_gathers_serve_every_compute_of_every_kind)
{
	int tried = 0;
	for (int kind = 0; kind < PPCC_SCHED_COUNT; kind = RT_PIPE_NEXT(kind)) {
		if (kind == PPCC_SCHED_AUTO)
			continue;
		for (int p = 2; p <= 4; p++)
			for (int m = 1; m <= 2 * p; m++) {
				int v = ppcc_sched_kind_chunks(kind, p), S = p * v;
				if (ppcc_sched_check(kind, p, v, m, 0, dp_no_complaint, NULL) > 0 ||
				    S > DP_MAX)
					continue;
				ppcc_arena *a = ppcc_arena_new();
				ppcc_stage_info pl[DP_MAX], st[DP_MAX];
				ppcc_sched_place(pl, kind, p, v);
				for (int k = 0; k < S; k++)
					st[k] = (ppcc_stage_info){k, pl[k].rank, pl[k].chunk,
								  k, k, k > 0 ? 8 : 0,
								  k < S - 1 ? 8 : 0};
				ppcc_schedule plain, s;
				ck_assert_int_eq(ppcc_schedule_build(&plain, a, kind, p, v,
								     m, 0, st), 0);
				s = plain;
				double g[DP_MAX];
				ppcc_stage_cost c[DP_MAX];
				for (int k = 0; k < S; k++) {
					g[k] = 2;
					c[k] = (ppcc_stage_cost){.fwd_ms = 2 + k % 3,
								 .bwd_ms = 4, .bwd_input_ms = 2,
								 .bwd_weight_ms = 2,
								 .send_f_ms = 0.5,
								 .send_b_ms = 0.5};
				}
				ck_assert_int_eq(ppcc_schedule_place_collectives(&s, a, g, 1,
										 3, 1.0), 0);
				ck_assert_msg(ppcc_schedule_validate_seal(&s, NULL, NULL, 0) == 0,
					      "%s p %d m %d", ppcc_schedule_kind_name(kind), p, m);
				for (int r = 0; r < p; r++) {
					int q[2], n = 0;
					const ppcc_rank_schedule *rs = &s.ranks[r];
					for (int i = 0; i < rs->n_actions; i++) {
						const ppcc_action *x = &rs->actions[i];
						if (x->op == PPCC_OP_UNSHARD_PARAM && x->mb == 0) {
							ck_assert_int_lt(n, 2);
							q[n++] = x->stage;
						} else if (x->op == PPCC_OP_F || x->op == PPCC_OP_B ||
							   x->op == PPCC_OP_I) {
							ck_assert_int_gt(n, 0);
							ck_assert_int_eq(q[0], x->stage);
							q[0] = q[1];
							n--;
						}
					}
					ck_assert_int_eq(n, 0);
				}
				ppcc_estimate e0, e1, e2;
				ck_assert_int_eq(ppcc_simulate(&e0, a, &plain, c), 0);
				ck_assert_int_eq(ppcc_simulate(&e1, a, &s, c), 0);
				ck_assert_double_eq_tol(e1.step_ms, e0.step_ms, 1e-9);
				for (int k = 0; k < S; k++)
					c[k].dp_gather_ms_per_byte = c[k].dp_reduce_ms_per_byte = 0.5;
				ck_assert_int_eq(ppcc_simulate(&e2, a, &s, c), 0);
				ck_assert(e2.step_ms >= e0.step_ms);
				tried++;
				ppcc_arena_free(a);
			}
	}
	ck_assert_int_gt(tried, 60);
}
END_TEST

/* ---- the prologue's gathers over the runtime ------------------------- */

typedef struct gather_case {
	const ppcc_schedule *s;
	ppcc_rt_local_world *worlds[2];
	ppcc_rt_dp_group *groups[2];
	double grad[2][4][2], param[2][4][2];
	/* [replica]: the collectives rank 0's group had completed when its
	 * F(0, 0) began; at_f: the replicas that have begun it (under mu) */
	long done_at_f[2];
	int at_f;
	int status[2][2];
	pthread_mutex_t mu;
	char lines[4096];
	size_t len;
} gather_case;

typedef struct gather_member {
	gather_case *c;
	int replica, rank;
} gather_member;

static int gc_forward(int stage, int mb, const void *in, size_t in_n, void *out,
		      size_t out_n, void *user)
{
	gather_member *m = user;
	gather_case *c = m->c;
	(void)in, (void)in_n;
	if (stage == 0 && mb == 0) {
		c->done_at_f[m->replica] = ppcc_rt_dp_group_done(c->groups[0], 0, 0);
		/* the second replica here lets the held gather begin */
		pthread_mutex_lock(&c->mu);
		if (++c->at_f == 2)
			ppcc_rt_dp_group_hold(c->groups[0], -1);
		pthread_mutex_unlock(&c->mu);
	}
	if (out)
		memset(out, 0, out_n);
	return 0;
}

static int gc_backward(int stage, int mb, const void *gout, size_t gout_n,
		       void *gin, size_t gin_n, void *user)
{
	(void)stage, (void)mb, (void)gout, (void)gout_n, (void)user;
	if (gin)
		memset(gin, 0, gin_n);
	return 0;
}

static void gc_diag(int rank, const char *line, void *user)
{
	gather_case *c = user;
	(void)rank;
	pthread_mutex_lock(&c->mu);
	int n = snprintf(c->lines + c->len, sizeof c->lines - c->len, "%s\n", line);
	if (n > 0 && c->len + (size_t)n < sizeof c->lines)
		c->len += (size_t)n;
	pthread_mutex_unlock(&c->mu);
}

static void *gc_member_main(void *arg)
{
	gather_member *me = arg;
	gather_case *c = me->c;
	int r = me->replica, k = me->rank;
	ppcc_rt_stage_fns fns[4];
	for (int s = 0; s < c->s->n_stages; s++)
		fns[s] = (ppcc_rt_stage_fns){gc_forward, gc_backward, NULL, NULL,
					     NULL, me, PPCC_RT_STAGE_FNS_VERSION};
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.timeout_s = 30;
	o.world = c->worlds[r];
	o.dp_group = c->groups[k];
	o.replica = r;
	o.diag = gc_diag;
	o.diag_user = c;
	ppcc_rt *rt = NULL;
	int err = ppcc_rt_init(&rt, c->s, k, &o);
	for (int s = 0; s < c->s->n_stages && err == 0; s++)
		if (c->s->stages[s].rank == k) {
			err = ppcc_rt_grad_register(rt, s, 0, c->grad[r][s], 2);
			if (err == 0)
				err = ppcc_rt_param_register(rt, s, 0, c->param[r][s], 2);
		}
	ppcc_rt_stats st = PPCC_RT_STATS_INIT;
	if (err == 0)
		err = ppcc_rt_step(&st, rt, fns);
	c->status[r][k] = err;
	ppcc_rt_free(rt);
	return NULL;
}

/* Runs c with rank 0's group held to one collective (its first gather)
 * until both replicas have begun F(0, 0). */
static void gc_run(gather_case *c)
{
	pthread_t th[4];
	gather_member mem[4];
	pthread_mutex_init(&c->mu, NULL);
	for (int r = 0; r < 2; r++)
		ck_assert_int_eq(ppcc_rt_local_world_new(&c->worlds[r], 2), 0);
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(ppcc_rt_dp_group_new(&c->groups[k], 2), 0);
	ppcc_rt_dp_group_hold(c->groups[0], 1);
	for (int i = 0; i < 4; i++) {
		mem[i] = (gather_member){c, i / 2, i % 2};
		ck_assert_int_eq(pthread_create(&th[i], NULL, gc_member_main, &mem[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int k = 0; k < 2; k++)
		ppcc_rt_dp_group_free(c->groups[k]);
	for (int r = 0; r < 2; r++)
		ppcc_rt_local_world_free(c->worlds[r]);
	pthread_mutex_destroy(&c->mu);
}

/* Overlap of the prologue, decided on the order of events, not on their
 * times.  Interleaved, p = 2, v = 2, d = 2, m = 4 under ZeRO 1: rank 0
 * gathers stage 0's parameters and then stage 2's, and its first
 * forward, of stage 0, waits for stage 0's gather alone.  Rank 0's group
 * is held to one collective (stage 0's gather) until both replicas have
 * begun F(0, 0): each begins it with exactly that gather complete.  A
 * runtime that waited for stage 2's gather too would never begin it and
 * stop at its timeout; one that waited for none would begin it with
 * none complete. */
START_TEST(the_later_stages_gathers_overlap_the_first_stages_forwards)
{
	ppcc_arena *a = ppcc_arena_new();
	double g[4] = {16, 16, 16, 16};
	ppcc_schedule s;
	dp_schedule_zero1(&s, a, PPCC_SCHED_INTERLEAVED, 2, 4, g);
	gather_case *c = calloc(1, sizeof *c);
	ck_assert_ptr_nonnull(c);
	c->s = &s;
	gc_run(c);
	for (int r = 0; r < 2; r++) {
		for (int k = 0; k < 2; k++)
			ck_assert_msg(c->status[r][k] == 0, "replica %d rank %d: "
				      "%s\n%s", r, k,
				      ppcc_rt_status_str(c->status[r][k]), c->lines);
		ck_assert_msg(c->done_at_f[r] == 1, "replica %d began F(0, 0) "
			      "with %ld of rank 0's collectives complete, not 1",
			      r, c->done_at_f[r]);
	}
	free(c);
	ppcc_arena_free(a);
}
END_TEST

/* Options of version 1 (before dp_group and replica existed) still
 * work: the runtime reads none of the later fields, whatever they hold. */
START_TEST(options_of_version_1_ignore_the_later_fields)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	dp_schedule(&s, a, PPCC_SCHED_1F1B, 1, 2);
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.version = 1;
	o.dp_group = (ppcc_rt_dp_group *)(void *)&s; /* not a group */
	o.replica = 7;
	ppcc_rt *rt = NULL;
	ck_assert_int_eq(ppcc_rt_init(&rt, &s, 0, &o), 0);
	double g[3] = {0};
	ck_assert_int_eq(ppcc_rt_grad_register(rt, 0, 0, g, 3), PPCC_RT_EINPUT);
	ck_assert_int_eq(ppcc_rt_dp_stats(rt, NULL, NULL), PPCC_RT_EINPUT);
	ppcc_rt_free(rt);
	ppcc_arena_free(a);
}
END_TEST

/* Options of version 2 (before data_parallel existed) do not read it;
 * at version 3 a nonzero data_parallel is mpi's alone, and the local
 * transport refuses it, saying where to look instead. */
START_TEST(options_data_parallel_is_read_from_version_3_and_refused_off_mpi)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_schedule s;
	dp_schedule(&s, a, PPCC_SCHED_1F1B, 1, 2);
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	dp_case *c = calloc(1, sizeof *c);
	pthread_mutex_init(&c->mu, NULL);
	o.version = 2;
	o.data_parallel = 2;
	ppcc_rt *rt = NULL;
	ck_assert_int_eq(ppcc_rt_init(&rt, &s, 0, &o), 0);
	double g[3] = {0};
	ck_assert_int_eq(ppcc_rt_grad_register(rt, 0, 0, g, 3), PPCC_RT_EINPUT);
	ppcc_rt_free(rt);
	o.version = 3;
	o.diag = dp_diag;
	o.diag_user = c;
	ck_assert_int_eq(ppcc_rt_init(&rt, &s, 0, &o), PPCC_RT_EINPUT);
	ck_assert_ptr_null(rt);
	ck_assert_msg(strstr(c->lines, "options.data_parallel 2: data parallelism "
			     "over the transport needs mpi or nccl (not its "
			     "loopback) and d >= 1 (local: options.dp_group)"),
		      "%s", c->lines);
	pthread_mutex_destroy(&c->mu);
	free(c);
	ppcc_arena_free(a);
}
END_TEST

Suite *suite_dp(void)
{
	return tu_suite("dp", "dp", 120, (const TTest *const[]){
		reduced_gradients_are_the_sum_over_the_replicas,
		reduce_scatter_keeps_each_shard_and_gathers_give_every_replica_all,
		a_failing_replica_stops_the_grid_naming_the_collective,
		a_stuck_replica_times_out_the_reduction_naming_it,
		replicas_entering_different_collectives_are_refused,
		the_prediction_launches_each_stage_after_its_last_backward,
		the_simulator_times_the_schedules_reductions_as_predicted,
		reductions_overlap_the_remaining_backward_passes,
		each_stage_waits_only_for_its_own_gathers_in_the_simulation,
		each_compute_waits_for_its_own_zero3_gathers_in_the_simulation,
		zero3_gathers_serve_every_compute_of_every_kind,
		zero3_gathers_serve_each_compute_and_rounds_sum_each_backward,
		the_later_stages_gathers_overlap_the_first_stages_forwards,
		options_of_version_1_ignore_the_later_fields,
		options_data_parallel_is_read_from_version_3_and_refused_off_mpi,
		NULL});
}
