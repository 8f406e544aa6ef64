/*
 * reduce.c - data parallelism over the local transport: the gradient
 * reduction of a stage's replicas, launched after the stage's last
 * backward of the step and waited for before ppcc_rt_step returns.
 *
 * A data-parallel group (ppcc_rt_dp_group) joins the d runtimes that run
 * one pipeline rank in d replicas.  Each member posts the buckets it
 * registered where the schedule says (REDUCE_GRAD, REDUCE_SCATTER_GRAD,
 * ALL_GATHER_PARAM, UNSHARD_PARAM); the k-th post of every member is
 * collective k, and the group's reducer thread sums it in replica order
 * (((g0 + g1) + g2) + ...), so equal runs give equal bits, while the
 * members compute on.
 * Contract: members whose k-th collectives differ (stage, bucket, count
 * or kind) fail with PPCC_RT_EMISMATCH; a member that fails aborts the
 * group and the others end with PPCC_RT_EPEER; every wait is bounded by
 * the member's timeout and names the collective and the replicas.  A
 * compute waits only for its own gathers and those posted before them.
 * Over mpi the same posts become the transport's rt_coll reductions
 * (same order, same bits); over nccl they run in place (nccl.c).
 *
 * Derivation: doc/design/runtime-reduce.md (what is posted where, ZeRO's
 * shards and gathers, ZeRO-3's rounds and copies).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rt.h"

typedef struct dp_slot {
	struct dp_slot *next;
	uint64_t seq;
	int kind; /* RT_COLL_* */
	int stage, bucket;
	size_t count;
	double **buf;  /* per replica; NULL until it posts */
	/* per replica: its ZeRO-3 copy (buf points into it), the slot's
	 * to free, so that a member that fails never frees what the
	 * reducer may still be adding */
	double **staging;
	int arrived, consumed, taken, done;
	double t_full, t_start, t_done; /* last member posted, sum begun, done */
} dp_slot;

struct ppcc_rt_dp_group {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	int d, joined, stop, started;
	dp_slot *slots;
	int aborted, abort_replica, abort_status;
	double delay_s; /* tests: each reduction takes at least this long */
	/* tests: collectives begun and done since the group was made; none
	 * begins while n_begun >= hold (hold < 0: no limit) */
	long n_begun, n_done, hold;
};

/* A member's view: its buckets per stage, and the collectives it has
 * posted this step. */
typedef struct rt_bucket {
	int bucket;
	double *grad;
	size_t count;
	double *param; /* ppcc_rt_param_register; NULL: none */
	/* ZeRO-3 over a host transport: the sum of the step's rounds of
	 * the shard this replica owns, added in posting order; NULL
	 * until the first round */
	double *acc;
	int acc_used; /* a round was added this step */
} rt_bucket;

/* ZeRO-3, host transports: what the step's k-th post owes the trainer's
 * buffers once it completes (dp_settle): a round's shard added to
 * bucket's acc, or an UNSHARD_PARAM's copy moved into its parameters. */
typedef struct dp_staged {
	rt_bucket *bucket; /* NULL: nothing (the other collectives) */
	int kind;          /* RT_COLL_REDUCE_SCATTER or RT_COLL_UNSHARD */
	double *vals;      /* the copy (local: the slot's; mpi: c->staging) */
} dp_staged;

struct rt_dp {
	ppcc_rt_dp_group *g; /* local; NULL: the transport's collectives */
	int replica, d;
	rt_coll **colls;     /* transport: this step's, in posting order */
	int n_colls, cap_colls;
	rt_bucket **by_stage; /* per stage, sorted by bucket */
	int *n_by_stage;
	/* per action: DP_AT_BACKWARD at a stage's last B or W (schedules
	 * without REDUCE_GRAD), DP_AT_LAST at a stage's last REDUCE_GRAD */
	int *last_bwd;
	uint64_t next_seq;
	uint64_t *posted;     /* this step's sequence numbers */
	int n_posted, cap_posted;
	double reduce_s, wait_s; /* last step */
	/* 1: the schedule reduce-scatters (REDUCE_SCATTER_GRAD) */
	int sharded;
	/* per action: 1 + the stage whose gathers it waits for (the
	 * stage's first compute after an ALL_GATHER_PARAM of it), else 0;
	 * per stage: how many of the step's posts (local) or colls
	 * (transport) to wait for then, those up to its last gather */
	int *uses_gather;
	int *gather_mark;
	/* posts (local) or colls (transport) of this step waited for
	 * already, and the prologue's share of the step's figures */
	int n_waited;
	double pro_reduce_s, pro_wait_s;
	/* ZeRO-3 (the schedule has UNSHARD_PARAM): host, 1 unless nccl
	 * (the rounds and gathers on copies, staged per post); the groups
	 * opened and served this step, and per group the posts (local) or
	 * colls (transport) up to its last bucket */
	int zero3, host;
	int groups_opened, groups_served, n_groups;
	int *group_mark;
	dp_staged *staged; /* per post of the step */
	int cap_staged;
	char why[224]; /* a failed post's rt_coll.why */
	int verify;    /* until a step's reductions have all completed */
};

enum { DP_AT_BACKWARD = 1, DP_AT_LAST = 2 };

static void dp_deadline(struct timespec *ts, double deadline)
{
	ts->tv_sec = (time_t)deadline;
	ts->tv_nsec = (long)((deadline - (double)ts->tv_sec) * 1e9);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void dp_sleep(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The slot of a post and its copies, once every member is done. */
static void dp_slot_free(ppcc_rt_dp_group *g, dp_slot *k)
{
	for (int r = 0; k->staging && r < g->d; r++)
		ppcc_free(k->staging[r]);
	ppcc_free(k->staging);
	ppcc_free(k->buf);
	ppcc_free(k);
}

static void *dp_reducer(void *arg)
{
	ppcc_rt_dp_group *g = arg;
	pthread_mutex_lock(&g->mu);
	for (;;) {
		/* the earliest posted of those every replica has posted
		 * (the list holds the newest first): the collectives run in
		 * the order the schedule launches them, as the simulator
		 * times them */
		dp_slot *k = NULL;
		for (dp_slot *x = g->slots; x; x = x->next)
			if (x->arrived == g->d && !x->taken &&
			    (!k || x->seq < k->seq))
				k = x;
		if (g->hold >= 0 && g->n_begun >= g->hold)
			k = NULL;
		if (!k) {
			if (g->stop)
				break;
			pthread_cond_wait(&g->cv, &g->mu);
			continue;
		}
		k->taken = 1;
		g->n_begun++;
		double t0 = ppcc_rt_now();
		k->t_start = t0;
		pthread_mutex_unlock(&g->mu);
		if (rt_coll_gathers(k->kind)) {
			/* each replica's shard to every other replica */
			for (int q = 0; q < g->d; q++) {
				size_t lo = rt_shard_lo(k->count, g->d, q);
				size_t n = rt_shard_len(k->count, g->d, q);
				for (int r = 0; r < g->d && n > 0; r++)
					if (r != q)
						memcpy(k->buf[r] + lo, k->buf[q] + lo,
						       n * sizeof(double));
			}
		} else {
			for (int q = 0; q < g->d; q++) {
				size_t lo = rt_shard_lo(k->count, g->d, q);
				size_t hi = lo + rt_shard_len(k->count, g->d, q);
				for (size_t i = lo; i < hi; i++) {
					double acc = k->buf[0][i];
					for (int r = 1; r < g->d; r++)
						acc += k->buf[r][i];
					if (k->kind == RT_COLL_REDUCE_SCATTER)
						k->buf[q][i] = acc; /* its owner's */
					else
						for (int r = 0; r < g->d; r++)
							k->buf[r][i] = acc;
				}
			}
		}
		double left = g->delay_s - (ppcc_rt_now() - t0);
		if (left > 0)
			dp_sleep(left);
		pthread_mutex_lock(&g->mu);
		k->done = 1;
		k->t_done = ppcc_rt_now();
		g->n_done++;
		pthread_cond_broadcast(&g->cv);
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

int ppcc_rt_dp_group_new(ppcc_rt_dp_group **out, int n_replicas)
{
	if (!out)
		return PPCC_RT_EINPUT;
	*out = NULL;
	if (n_replicas < 1 || n_replicas > 4096)
		return PPCC_RT_EINPUT;
	ppcc_rt_dp_group *g = ppcc_calloc(1, sizeof *g);
	if (!g)
		return PPCC_RT_ENOMEM;
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, &attr);
	pthread_condattr_destroy(&attr);
	g->d = n_replicas;
	g->abort_replica = -1;
	g->hold = -1;
	if (pthread_create(&g->thread, NULL, dp_reducer, g) != 0) {
		pthread_cond_destroy(&g->cv);
		pthread_mutex_destroy(&g->mu);
		ppcc_free(g);
		return PPCC_RT_ENOMEM;
	}
	g->started = 1;
	*out = g;
	return 0;
}

void ppcc_rt_dp_group_free(ppcc_rt_dp_group *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->mu);
	g->stop = 1;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	if (g->started)
		pthread_join(g->thread, NULL);
	for (dp_slot *k = g->slots, *next; k; k = next) {
		next = k->next;
		dp_slot_free(g, k);
	}
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	ppcc_free(g);
}

void ppcc_rt_dp_group_set_delay(ppcc_rt_dp_group *g, double seconds)
{
	pthread_mutex_lock(&g->mu);
	g->delay_s = seconds;
	pthread_mutex_unlock(&g->mu);
}

void ppcc_rt_dp_group_hold(ppcc_rt_dp_group *g, long n)
{
	pthread_mutex_lock(&g->mu);
	g->hold = n;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

long ppcc_rt_dp_group_done(ppcc_rt_dp_group *g, long n, double timeout_s)
{
	struct timespec ts;
	dp_deadline(&ts, ppcc_rt_now() + timeout_s);
	pthread_mutex_lock(&g->mu);
	while (g->n_done < n &&
	       pthread_cond_timedwait(&g->cv, &g->mu, &ts) != ETIMEDOUT)
		;
	long done = g->n_done;
	pthread_mutex_unlock(&g->mu);
	return done;
}

int ppcc_rt_dp_init(ppcc_rt *rt)
{
	ppcc_rt_dp_group *g = rt->o.dp_group;
	int replica = g ? rt->o.replica : rt->tx.grid_replica;
	if (g && (replica < 0 || replica >= g->d)) {
		ppcc_rt_report(rt, "options.replica %d is outside the group of %d",
			       replica, g->d);
		return PPCC_RT_EINPUT;
	}
	struct rt_dp *dp = ppcc_calloc(1, sizeof *dp);
	if (!dp)
		return PPCC_RT_ENOMEM;
	rt->dp = dp;
	dp->g = g;
	dp->verify = 1;
	dp->replica = replica;
	dp->d = g ? g->d : rt->tx.grid_d;
	dp->by_stage = ppcc_calloc((size_t)rt->S, sizeof *dp->by_stage);
	dp->n_by_stage = ppcc_calloc((size_t)rt->S, sizeof *dp->n_by_stage);
	dp->last_bwd = ppcc_calloc((size_t)rt->rs->n_actions + 1,
				   sizeof *dp->last_bwd);
	dp->uses_gather = ppcc_calloc((size_t)rt->rs->n_actions + 1,
				      sizeof *dp->uses_gather);
	dp->gather_mark = ppcc_calloc((size_t)rt->S, sizeof *dp->gather_mark);
	if (!dp->by_stage || !dp->n_by_stage || !dp->last_bwd ||
	    !dp->uses_gather || !dp->gather_mark)
		return PPCC_RT_ENOMEM;
	/* the last B or W of each stage completes its gradients; the
	 * schedule's REDUCE_GRAD actions, when it has them, say where to
	 * reduce them (ppcc_rt_dp_reduce) */
	int placed = 0;
	for (int i = 0; i < rt->rs->n_actions; i++) {
		const ppcc_action *a = &rt->rs->actions[i];
		int op = a->op;
		placed |= op == PPCC_OP_REDUCE_GRAD ||
			  op == PPCC_OP_REDUCE_SCATTER_GRAD;
		dp->sharded |= op == PPCC_OP_REDUCE_SCATTER_GRAD;
		dp->zero3 |= op == PPCC_OP_UNSHARD_PARAM;
		dp->n_groups += op == PPCC_OP_UNSHARD_PARAM && a->mb == 0;
		if (a->stage < 0 || a->stage >= rt->S)
			continue;
		/* gather_mark, until the step: a gather of the stage not yet
		 * waited for */
		if (op == PPCC_OP_ALL_GATHER_PARAM)
			dp->gather_mark[a->stage] = 1;
		else if (op <= PPCC_OP_W && dp->gather_mark[a->stage]) {
			dp->uses_gather[i] = a->stage + 1;
			dp->gather_mark[a->stage] = 0;
		}
	}
	memset(dp->gather_mark, 0, (size_t)rt->S * sizeof *dp->gather_mark);
	for (int s = 0; s < rt->S; s++) {
		int found_gather = 0;
		for (int i = rt->rs->n_actions - 1; i >= 0; i--) {
			const ppcc_action *a = &rt->rs->actions[i];
			if (a->stage != s)
				continue;
			if (a->op == PPCC_OP_ALL_GATHER_PARAM && !found_gather) {
				dp->last_bwd[i] = DP_AT_LAST;
				found_gather = 1;
			}
		}
		for (int i = rt->rs->n_actions - 1; i >= 0; i--) {
			const ppcc_action *a = &rt->rs->actions[i];
			if (a->stage == s && placed &&
			    (a->op == PPCC_OP_REDUCE_GRAD ||
			     a->op == PPCC_OP_REDUCE_SCATTER_GRAD)) {
				dp->last_bwd[i] = DP_AT_LAST;
				break;
			}
			if (a->stage == s && !placed &&
			    (a->op == PPCC_OP_B || a->op == PPCC_OP_W)) {
				dp->last_bwd[i] = DP_AT_BACKWARD;
				break;
			}
		}
	}
	/* ZeRO-3: a group's last UNSHARD_PARAM and a round's last
	 * REDUCE_SCATTER_GRAD also post the buckets numbered above it; a
	 * run's buckets are in order among its stage's actions of its op
	 * (the validator's rule; another stage's may come between them in a
	 * list written by hand), so it is the last unless the next of its
	 * op and stage is the next bucket */
	dp->host = rt->o.transport != PPCC_RT_NCCL;
	dp->group_mark = ppcc_calloc((size_t)dp->n_groups + 1,
				     sizeof *dp->group_mark);
	if (!dp->group_mark)
		return PPCC_RT_ENOMEM;
	for (int i = 0; dp->zero3 && i < rt->rs->n_actions; i++) {
		const ppcc_action *a = &rt->rs->actions[i];
		if (a->op != PPCC_OP_UNSHARD_PARAM &&
		    a->op != PPCC_OP_REDUCE_SCATTER_GRAD)
			continue;
		int last = 1;
		for (int j = i + 1; j < rt->rs->n_actions; j++) {
			const ppcc_action *b = &rt->rs->actions[j];
			if (b->op == a->op && b->stage == a->stage) {
				last = b->mb != a->mb + 1;
				break;
			}
		}
		dp->last_bwd[i] = last ? DP_AT_LAST : 0;
	}
	if (g) {
		pthread_mutex_lock(&g->mu);
		g->joined++;
		pthread_mutex_unlock(&g->mu);
	}
	return 0;
}

int ppcc_rt_grad_register(ppcc_rt *rt, int stage, int bucket, double *grad,
			  size_t count)
{
	if (!rt || !rt->dp || !grad || count == 0 || bucket < 0 ||
	    stage < 0 || stage >= rt->S || rt->s->stages[stage].rank != rt->rs->rank)
		return PPCC_RT_EINPUT;
	struct rt_dp *dp = rt->dp;
	int n = dp->n_by_stage[stage];
	for (int k = 0; k < n; k++)
		if (dp->by_stage[stage][k].bucket == bucket)
			return PPCC_RT_EINPUT;
	rt_bucket *b = ppcc_realloc(dp->by_stage[stage], (size_t)(n + 1) * sizeof *b);
	if (!b)
		return PPCC_RT_ENOMEM;
	int at = n;
	while (at > 0 && b[at - 1].bucket > bucket) {
		b[at] = b[at - 1];
		at--;
	}
	b[at] = (rt_bucket){bucket, grad, count, NULL, NULL, 0};
	dp->by_stage[stage] = b;
	dp->n_by_stage[stage] = n + 1;
	dp->verify = 1;
	return 0;
}

static rt_bucket *dp_bucket_of(const ppcc_rt *rt, int stage, int bucket)
{
	struct rt_dp *dp = rt->dp;
	if (!dp || stage < 0 || stage >= rt->S)
		return NULL;
	for (int k = 0; k < dp->n_by_stage[stage]; k++)
		if (dp->by_stage[stage][k].bucket == bucket)
			return &dp->by_stage[stage][k];
	return NULL;
}

int ppcc_rt_param_register(ppcc_rt *rt, int stage, int bucket, double *param,
			   size_t count)
{
	rt_bucket *b = rt ? dp_bucket_of(rt, stage, bucket) : NULL;
	if (!b || !param || count != b->count)
		return PPCC_RT_EINPUT;
	b->param = param;
	rt->dp->verify = 1;
	return 0;
}

int ppcc_rt_dp_shard(ppcc_rt_shard *out, const ppcc_rt *rt, int stage,
		     int bucket)
{
	const rt_bucket *b = rt ? dp_bucket_of(rt, stage, bucket) : NULL;
	if (!out || !b || out->version < 1 || out->version > PPCC_RT_SHARD_VERSION)
		return PPCC_RT_EINPUT;
	const struct rt_dp *dp = rt->dp;
	out->replica = dp->replica;
	out->replicas = dp->d;
	out->sharded = dp->sharded;
	out->offset = dp->sharded ? rt_shard_lo(b->count, dp->d, dp->replica) : 0;
	out->count = dp->sharded ? rt_shard_len(b->count, dp->d, dp->replica)
				 : b->count;
	out->bucket_count = b->count;
	return 0;
}

void rt_coll_desc(const rt_coll *c, int64_t out[RT_COLL_DESC])
{
	out[0] = (int64_t)c->seq;
	out[1] = c->kind;
	out[2] = c->stage;
	out[3] = c->bucket;
	out[4] = (int64_t)c->count;
}

int rt_coll_mismatch(const rt_tctx *cx, const rt_coll *c, int me,
		     const int64_t *theirs, int q, int world)
{
	int k = theirs[1] >= RT_COLL_ALL_REDUCE && theirs[1] <= RT_COLL_UNSHARD
		? (int)theirs[1] : RT_COLL_ALL_REDUCE;
	rt_tctx_report(cx, "replica %d: %s #%llu is stage %d bucket %d (%zu "
		       "values) here but #%lld %s%sstage %lld bucket %lld (%lld "
		       "values) on replica %d (world rank %d)", me,
		       rt_coll_name(c->kind), (unsigned long long)c->seq,
		       c->stage, c->bucket, c->count, (long long)theirs[0],
		       k != c->kind ? rt_coll_name(k) : "",
		       k != c->kind ? " " : "", (long long)theirs[2],
		       (long long)theirs[3], (long long)theirs[4], q, world);
	return PPCC_RT_EMISMATCH;
}

static dp_slot *dp_find(ppcc_rt_dp_group *g, uint64_t seq)
{
	for (dp_slot *k = g->slots; k; k = k->next)
		if (k->seq == seq)
			return k;
	return NULL;
}

/* An array of *cap elements of size bytes, arr, made to hold element n:
 * arr itself when it does, else grown (doubling, from 16) with *cap
 * updated; NULL when out of memory, arr and *cap left as they were. */
static void *dp_reserve(void *arr, int *cap, int n, size_t size)
{
	if (n < *cap)
		return arr;
	int c = *cap ? *cap : 16;
	while (c <= n)
		c *= 2;
	void *p = ppcc_realloc(arr, (size_t)c * size);
	if (p)
		*cap = c;
	return p;
}

/* Transport: posts bucket b of stage s as a collective of `kind` on
 * vals (b's own buffer, or `copy`, which c then owns). */
static int dp_post_coll(ppcc_rt *rt, int s, const rt_bucket *b, int kind,
			double *vals, double *copy)
{
	struct rt_dp *dp = rt->dp;
	rt_coll **colls = dp_reserve(dp->colls, &dp->cap_colls, dp->n_colls,
				     sizeof *colls);
	if (!colls) {
		ppcc_free(copy);
		return PPCC_RT_ENOMEM;
	}
	dp->colls = colls;
	rt_coll *c = ppcc_calloc(1, sizeof *c);
	if (!c) {
		ppcc_free(copy);
		return PPCC_RT_ENOMEM;
	}
	*c = (rt_coll){dp->next_seq++, s, b->bucket, vals, b->count,
		       0, -1, ppcc_rt_now(), 0, NULL, dp->verify, "", kind,
		       dp->zero3 && kind == RT_COLL_REDUCE_SCATTER, copy};
	dp->colls[dp->n_colls++] = c;
	int err = rt->ops->coll_post(rt->tr, c);
	if (err < 0) {
		memcpy(dp->why, c->why, sizeof dp->why);
		return err;
	}
	return 0;
}

const char *ppcc_rt_dp_why(const ppcc_rt *rt)
{
	return rt->dp && rt->dp->why[0] ? rt->dp->why : "gradient reduction";
}

static void dp_release_colls(ppcc_rt *rt)
{
	struct rt_dp *dp = rt->dp;
	for (int k = 0; k < dp->n_colls; k++) {
		rt->ops->coll_release(rt->tr, dp->colls[k]);
		ppcc_free(dp->colls[k]->staging);
		ppcc_free(dp->colls[k]);
	}
	dp->n_colls = 0;
}

/* Transport: progresses the step's collectives without blocking. */
int ppcc_rt_dp_progress(ppcc_rt *rt)
{
	struct rt_dp *dp = rt->dp;
	if (dp->g || dp->n_colls == 0)
		return 0;
	return rt->ops->coll_test(rt->tr, dp->colls[0]);
}

/* ZeRO-3 over a host transport: the copy a round or an UNSHARD_PARAM
 * of b runs on, made on the rank's thread as the action comes.  A
 * round's is the gradient its backward made, and the trainer's buffer
 * is zeroed for the next backward (the bucket's acc made ready for the
 * round's shard); an UNSHARD_PARAM's holds this replica's shard of the
 * parameters, the others' arriving there.  NULL: out of memory. */
static double *dp_copy(struct rt_dp *dp, rt_bucket *b, int kind)
{
	size_t lo = rt_shard_lo(b->count, dp->d, dp->replica);
	size_t n = rt_shard_len(b->count, dp->d, dp->replica);
	double *copy = ppcc_calloc(b->count, sizeof *copy);
	if (!copy)
		return NULL;
	if (kind == RT_COLL_UNSHARD) {
		memcpy(copy + lo, b->param + lo, n * sizeof *copy);
		return copy;
	}
	if (!b->acc && !(b->acc = ppcc_calloc(n + 1, sizeof *b->acc))) {
		ppcc_free(copy);
		return NULL;
	}
	memcpy(copy, b->grad, b->count * sizeof *copy);
	memset(b->grad, 0, b->count * sizeof *b->grad);
	return copy;
}

/* ZeRO-3 over a host transport: post k of the step has completed (its
 * waits run in posting order, so the rounds of a bucket are added in
 * the order of its backwards): a round's shard added to the bucket's
 * sum, an UNSHARD_PARAM's parameters moved into the trainer's buffer,
 * on the rank's thread, between its computes. */
static void dp_settle(struct rt_dp *dp, int k)
{
	const dp_staged *x = &dp->staged[k];
	rt_bucket *b = x->bucket;
	if (!b)
		return;
	if (x->kind == RT_COLL_UNSHARD) {
		memcpy(b->param, x->vals, b->count * sizeof *b->param);
		return;
	}
	size_t lo = rt_shard_lo(b->count, dp->d, dp->replica);
	size_t n = rt_shard_len(b->count, dp->d, dp->replica);
	for (size_t i = 0; i < n; i++)
		b->acc[i] += x->vals[lo + i];
	b->acc_used = 1;
}

/* Posts bucket b of stage s as a collective of `kind`: to the group, or
 * as the transport's collective. */
static int dp_post(ppcc_rt *rt, int s, rt_bucket *b, int kind)
{
	struct rt_dp *dp = rt->dp;
	ppcc_rt_dp_group *g = dp->g;
	if (rt_coll_gathers(kind) && !b->param) {
		ppcc_rt_report(rt, "replica %d: %s stage %d bucket %d: no "
			       "parameters registered for it "
			       "(ppcc_rt_param_register)", dp->replica,
			       rt_coll_name(kind), s, b->bucket);
		return PPCC_RT_EINPUT;
	}
	double *vals = rt_coll_gathers(kind) ? b->param : b->grad, *copy = NULL;
	int at = g ? dp->n_posted : dp->n_colls;
	dp_staged *staged = dp_reserve(dp->staged, &dp->cap_staged, at,
				       sizeof *staged);
	if (!staged)
		return PPCC_RT_ENOMEM;
	dp->staged = staged;
	/* the group's table grows before the copy below, which would leak
	 * if it then failed */
	if (g) {
		uint64_t *posted = dp_reserve(dp->posted, &dp->cap_posted,
					      dp->n_posted, sizeof *posted);
		if (!posted)
			return PPCC_RT_ENOMEM;
		dp->posted = posted;
	}
	dp->staged[at] = (dp_staged){NULL, kind, NULL};
	if (dp->zero3 && dp->host &&
	    (kind == RT_COLL_REDUCE_SCATTER || kind == RT_COLL_UNSHARD)) {
		if (!(copy = dp_copy(dp, b, kind)))
			return PPCC_RT_ENOMEM;
		dp->staged[at] = (dp_staged){b, kind, copy};
		vals = copy;
	}
	if (!g)
		return dp_post_coll(rt, s, b, kind, vals, copy);
	uint64_t seq = dp->next_seq++;
	int err = 0;
	pthread_mutex_lock(&g->mu);
	dp_slot *x = dp_find(g, seq);
	if (!x) {
		x = ppcc_calloc(1, sizeof *x);
		double **bufs = x ? ppcc_calloc((size_t)g->d, sizeof *bufs) : NULL;
		double **copies = bufs ? ppcc_calloc((size_t)g->d, sizeof *copies)
				       : NULL;
		if (!copies) {
			ppcc_free(bufs);
			ppcc_free(x);
			ppcc_free(copy);
			pthread_mutex_unlock(&g->mu);
			return PPCC_RT_ENOMEM;
		}
		*x = (dp_slot){g->slots, seq, kind, s, b->bucket, b->count, bufs,
			       copies, 0, 0, 0, 0, 0, 0, 0};
		g->slots = x;
	}
	if (x->kind != kind || x->stage != s || x->bucket != b->bucket ||
	    x->count != b->count) {
		ppcc_rt_report(rt, "replica %d: %s #%" PRIu64
			       " is stage %d bucket %d (%zu values) here "
			       "but %s%sstage %d bucket %d (%zu values) on "
			       "another replica", dp->replica, rt_coll_name(kind),
			       seq, s, b->bucket, b->count,
			       x->kind != kind ? rt_coll_name(x->kind) : "",
			       x->kind != kind ? " " : "",
			       x->stage, x->bucket, x->count);
		err = PPCC_RT_EMISMATCH;
		ppcc_free(copy);
	} else {
		x->buf[dp->replica] = vals;
		x->staging[dp->replica] = copy;
		if (++x->arrived == g->d) {
			x->t_full = ppcc_rt_now();
			pthread_cond_broadcast(&g->cv);
		}
		dp->posted[dp->n_posted++] = seq;
	}
	pthread_mutex_unlock(&g->mu);
	if (err < 0)
		return err;
	return 0;
}

/* After action i ran: at a stage's last backward (a schedule without
 * REDUCE_GRAD), post its buckets. */
int ppcc_rt_dp_after(ppcc_rt *rt, int i)
{
	struct rt_dp *dp = rt->dp;
	if (dp->last_bwd[i] != DP_AT_BACKWARD)
		return 0;
	int s = rt->rs->actions[i].stage, err;
	for (int k = 0; k < dp->n_by_stage[s]; k++)
		if ((err = dp_post(rt, s, &dp->by_stage[s][k],
				   RT_COLL_ALL_REDUCE)) < 0)
			return err;
	return 0;
}

int ppcc_rt_dp_reduce(ppcc_rt *rt, int i)
{
	struct rt_dp *dp = rt->dp;
	if (!dp)
		return 0;
	const ppcc_action *a = &rt->rs->actions[i];
	int s = a->stage, err;
	int kind = a->op == PPCC_OP_ALL_GATHER_PARAM ? RT_COLL_ALL_GATHER
		   : a->op == PPCC_OP_REDUCE_SCATTER_GRAD ? RT_COLL_REDUCE_SCATTER
		   : RT_COLL_ALL_REDUCE;
	if (a->op == PPCC_OP_UNSHARD_PARAM)
		kind = RT_COLL_UNSHARD;
	for (int k = 0; k < dp->n_by_stage[s]; k++) {
		rt_bucket *b = &dp->by_stage[s][k];
		if ((b->bucket == a->mb ||
		     (b->bucket > a->mb && dp->last_bwd[i] == DP_AT_LAST)) &&
		    (err = dp_post(rt, s, b, kind)) < 0)
			return err;
	}
	if (kind == RT_COLL_ALL_GATHER)
		dp->gather_mark[s] = dp->g ? dp->n_posted : dp->n_colls;
	if (kind == RT_COLL_UNSHARD) {
		/* bucket 0 opens the group the rank's next compute without
		 * one waits for; each bucket extends it */
		if (a->mb == 0 && dp->groups_opened < dp->n_groups)
			dp->groups_opened++;
		if (dp->groups_opened > 0)
			dp->group_mark[dp->groups_opened - 1] =
				dp->g ? dp->n_posted : dp->n_colls;
	}
	return 0;
}

/* Transport: waits for the collectives posted and not yet waited for
 * (those before upto; final: all), each bounded by the timeout from
 * when the wait began; final (the step's end): then releases them
 * all. */
static int dp_wait_coll(ppcc_rt *rt, int final, int upto)
{
	struct rt_dp *dp = rt->dp;
	double t0 = ppcc_rt_now(), deadline = t0 + rt->tx.timeout_s;
	int err = 0, spins = 0;
	int n = final || upto > dp->n_colls ? dp->n_colls : upto;
	dp->reduce_s = 0;
	for (int k = dp->n_waited; k < n && err == 0; k++) {
		rt_coll *c = dp->colls[k];
		while (!c->done) {
			int who = -1, st = PPCC_RT_EPEER;
			if ((err = rt->ops->coll_test(rt->tr, c)) < 0 || c->done)
				break;
			char whom[64] = "the other replicas";
			if (c->waiting_on >= 0)
				snprintf(whom, sizeof whom, "replica %d (world rank %d)",
					 c->waiting_on,
					 rt->tx.rank * dp->d + c->waiting_on);
			if (rt->ops->aborted(rt->tr, &who, &st)) {
				ppcc_rt_report(rt, "replica %d: %s stage %d "
					       "bucket %d #%" PRIu64 ": peer failed: "
					       "world rank %d stopped (%s)", dp->replica,
					       rt_coll_name(c->kind), c->stage,
					       c->bucket, c->seq, who,
					       ppcc_rt_status_str(st));
				err = PPCC_RT_EPEER;
				break;
			}
			if (!(ppcc_rt_now() <= deadline)) {
				ppcc_rt_report(rt, "replica %d: %s stage %d "
					       "bucket %d #%" PRIu64 ": timeout: waited "
					       "%.3f s for %s", dp->replica,
					       rt_coll_name(c->kind), c->stage,
					       c->bucket, c->seq, ppcc_rt_now() - t0,
					       whom);
				err = PPCC_RT_ETIMEOUT;
				break;
			}
			if (spins++ < 64) {
				sched_yield();
			} else {
				struct timespec ts = {0, 100000L};
				nanosleep(&ts, NULL);
			}
		}
		if (err == 0) {
			dp->reduce_s += c->t_done - c->t_post;
			dp_settle(dp, k);
			/* done: its transport state and ZeRO-3's copy are let go
			 * now, not at the step's end, so that the copies held are
			 * those of the collectives in flight, not one a round and
			 * gather of the whole step (releasing is idempotent) */
			rt->ops->coll_release(rt->tr, c);
			ppcc_free(c->staging);
			c->staging = NULL;
			dp->staged[k].vals = NULL;
			dp->n_waited = k + 1;
		}
	}
	dp->wait_s = ppcc_rt_now() - t0;
	if (err == 0 && final) {
		dp_release_colls(rt);
		dp->n_waited = 0;
		dp->verify = 0;
	}
	return err;
}

/* Waits for the collectives posted and not yet waited for, the first
 * upto of the step's (final: all, at the step's end, which forgets
 * them).  dp->reduce_s and wait_s: this wait's. */
static int dp_wait(ppcc_rt *rt, int final, int upto)
{
	struct rt_dp *dp = rt->dp;
	ppcc_rt_dp_group *g = dp->g;
	if (!g)
		return dp_wait_coll(rt, final, upto);
	double t0 = ppcc_rt_now(), deadline = t0 + rt->tx.timeout_s;
	int err = 0;
	int until = final || upto > dp->n_posted ? dp->n_posted : upto;
	dp->reduce_s = 0;
	pthread_mutex_lock(&g->mu);
	for (int k = dp->n_waited; k < until && err == 0; k++) {
		dp_slot *x = dp_find(g, dp->posted[k]);
		while (x && !x->done && !g->aborted) {
			struct timespec ts;
			dp_deadline(&ts, deadline);
			if (pthread_cond_timedwait(&g->cv, &g->mu, &ts) == ETIMEDOUT &&
			    !x->done)
				break;
		}
		if (!x || g->aborted || !x->done) {
			char who[256];
			size_t n = 0;
			who[0] = '\0';
			for (int r = 0; x && r < g->d && n < sizeof who - 16; r++)
				if (!x->buf[r])
					n += (size_t)snprintf(who + n, sizeof who - n,
							      "%s%d", n ? ", " : "", r);
			const char *what = rt_coll_name(x ? x->kind : RT_COLL_ALL_REDUCE);
			if (g->aborted && g->abort_replica != dp->replica) {
				ppcc_rt_report(rt, "replica %d: %s stage %d "
					       "bucket %d #%" PRIu64 ": peer failed: "
					       "replica %d stopped (%s)",
					       dp->replica, what, x ? x->stage : -1,
					       x ? x->bucket : -1, dp->posted[k],
					       g->abort_replica,
					       ppcc_rt_status_str(g->abort_status));
				err = PPCC_RT_EPEER;
			} else if (!g->aborted) {
				ppcc_rt_report(rt, "replica %d: %s stage %d "
					       "bucket %d #%" PRIu64 ": timeout: waited "
					       "%.3f s for replica %s",
					       dp->replica, what, x ? x->stage : -1,
					       x ? x->bucket : -1, dp->posted[k],
					       ppcc_rt_now() - t0,
					       who[0] ? who : "(the reduction)");
				err = PPCC_RT_ETIMEOUT;
			} else {
				err = PPCC_RT_EPEER;
			}
			break;
		}
		dp->reduce_s += x->t_done - x->t_start;
		dp_settle(dp, k);
		dp->n_waited = k + 1;
		if (++x->consumed == g->d) {
			for (dp_slot **p = &g->slots; *p; p = &(*p)->next)
				if (*p == x) {
					*p = x->next;
					break;
				}
			dp_slot_free(g, x);
		}
	}
	pthread_mutex_unlock(&g->mu);
	dp->wait_s = ppcc_rt_now() - t0;
	if (final) {
		dp->n_posted = 0;
		dp->n_waited = 0;
	}
	return err;
}

int ppcc_rt_dp_before(ppcc_rt *rt, int i)
{
	struct rt_dp *dp = rt->dp;
	if (!dp)
		return 0;
	int op = rt->rs->actions[i].op;
	if (dp->zero3 && (op == PPCC_OP_F || op == PPCC_OP_B || op == PPCC_OP_I)) {
		/* ZeRO-3: the rank's k-th F, B or I waits for its k-th
		 * group (and so for the posts before it), no more */
		if (dp->groups_served >= dp->groups_opened) {
			ppcc_rt_report(rt, "replica %d: action %d: no UNSHARD_PARAM "
				       "group posted for it", dp->replica, i);
			return PPCC_RT_EINTERNAL;
		}
		int upto = dp->group_mark[dp->groups_served++];
		if (upto <= dp->n_waited)
			return 0;
		int err = dp_wait(rt, 0, upto);
		dp->pro_reduce_s += dp->reduce_s;
		dp->pro_wait_s += dp->wait_s;
		return err;
	}
	if (!dp->uses_gather[i])
		return 0;
	int upto = dp->gather_mark[dp->uses_gather[i] - 1];
	if (upto <= dp->n_waited)
		return 0;
	int err = dp_wait(rt, 0, upto);
	dp->pro_reduce_s += dp->reduce_s;
	dp->pro_wait_s += dp->wait_s;
	return err;
}

/* Waits for every collective posted this step; the step's statistics
 * (the prologue's wait included). */
int ppcc_rt_dp_finish(ppcc_rt *rt)
{
	struct rt_dp *dp = rt->dp;
	int err = dp_wait(rt, 1, 0);
	memset(dp->gather_mark, 0, (size_t)rt->S * sizeof *dp->gather_mark);
	dp->groups_opened = dp->groups_served = 0;
	/* ZeRO-3, host: each bucket's shard holds the sum of its rounds,
	 * the rest the zeros the last round left */
	for (int s = 0; err == 0 && s < rt->S; s++)
		for (int k = 0; k < dp->n_by_stage[s]; k++) {
			rt_bucket *b = &dp->by_stage[s][k];
			if (!b->acc_used)
				continue;
			size_t lo = rt_shard_lo(b->count, dp->d, dp->replica);
			size_t n = rt_shard_len(b->count, dp->d, dp->replica);
			memcpy(b->grad + lo, b->acc, n * sizeof *b->acc);
			memset(b->acc, 0, n * sizeof *b->acc);
			b->acc_used = 0;
		}
	dp->reduce_s += dp->pro_reduce_s;
	dp->wait_s += dp->pro_wait_s;
	dp->pro_reduce_s = dp->pro_wait_s = 0;
	return err;
}

int ppcc_rt_dp_gather_params(ppcc_rt *rt)
{
	if (!rt || !rt->dp)
		return PPCC_RT_EINPUT;
	if (rt->failed)
		return PPCC_RT_EPEER;
	struct rt_dp *dp = rt->dp;
	int err = 0, posted = 0;
	for (int s = 0; s < rt->S && err == 0; s++)
		for (int k = 0; k < dp->n_by_stage[s] && err == 0; k++)
			if (dp->by_stage[s][k].param) {
				err = dp_post(rt, s, &dp->by_stage[s][k],
					      RT_COLL_ALL_GATHER);
				posted++;
			}
	if (err == 0 && posted)
		err = ppcc_rt_dp_finish(rt);
	if (err < 0) {
		ppcc_rt_tell_world(rt, err);
		ppcc_rt_dp_abort(rt, err);
		rt->failed = 1;
	}
	return err;
}

void ppcc_rt_dp_abort(ppcc_rt *rt, int status)
{
	ppcc_rt_dp_group *g = rt->dp->g;
	rt->dp->groups_opened = rt->dp->groups_served = 0;
	if (!g) {
		dp_release_colls(rt);
		rt->dp->n_waited = 0;
		return;
	}
	pthread_mutex_lock(&g->mu);
	if (!g->aborted) {
		g->aborted = 1;
		g->abort_replica = rt->dp->replica;
		g->abort_status = status;
	}
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	rt->dp->n_posted = 0;
	rt->dp->n_waited = 0;
	rt->dp->groups_opened = rt->dp->groups_served = 0;
}

int ppcc_rt_dp_stats(const ppcc_rt *rt, double *out_reduce_s,
		     double *out_wait_s)
{
	if (!rt || !rt->dp)
		return PPCC_RT_EINPUT;
	if (out_reduce_s)
		*out_reduce_s = rt->dp->reduce_s;
	if (out_wait_s)
		*out_wait_s = rt->dp->wait_s;
	return 0;
}

void ppcc_rt_dp_free(ppcc_rt *rt)
{
	struct rt_dp *dp = rt->dp;
	if (!dp)
		return;
	for (int s = 0; s < rt->S && dp->by_stage; s++) {
		for (int k = 0; k < dp->n_by_stage[s]; k++)
			ppcc_free(dp->by_stage[s][k].acc);
		ppcc_free(dp->by_stage[s]);
	}
	ppcc_free(dp->group_mark);
	ppcc_free(dp->staged);
	ppcc_free(dp->by_stage);
	ppcc_free(dp->n_by_stage);
	ppcc_free(dp->last_bwd);
	ppcc_free(dp->uses_gather);
	ppcc_free(dp->gather_mark);
	ppcc_free(dp->posted);
	if (!dp->g)
		dp_release_colls(rt);
	ppcc_free(dp->colls);
	ppcc_free(dp);
	rt->dp = NULL;
}
