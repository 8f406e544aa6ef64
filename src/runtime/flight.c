/*
 * flight.c - the flight record each rank writes for `ppcc diagnose`.
 *
 * With $PPCC_FLIGHT_DIR set (off by default), every runtime keeps, beside
 * the short flight record of its diagnostic line, the action it is in
 * and since when, its last completed actions with their start and end
 * times, and the sends and receives it posted with when they were posted
 * and completed.  It writes them, with its schedule's fingerprint, the
 * microbatches its action list covers, the step and its position in the
 * list, to DIR/rank-NNNNN.flight:
 *   - on any failure (rt_fail, and init failures such as a fingerprint
 *     mismatch), with the status and the diagnostic line;
 *   - on ppcc_rt_dump;
 *   - (with the samples a callback named, ppcc_rt_flight_sample)
 *   - on SIGUSR1, every runtime of the process (installed at the first
 *     init when the signal's handler is the default), so that a rank stuck
 *     for good in a callback or a kernel can still be asked where it is.
 *
 * The writer runs in a signal handler, so it allocates nothing and calls
 * only async-signal-safe functions (open, write, rename, clock_gettime):
 * numbers are formatted by hand into a buffer of the record's own.  A
 * record is written to a temporary name and renamed, so a reader sees a
 * whole record or the previous one.  Times are CLOCK_REALTIME seconds,
 * comparable between the processes of one machine (and across machines
 * as far as their clocks agree).  The format is line based, one key per
 * line, and documented in ppcc_runtime(3).
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

#define FR_ACTIONS 32  /* completed actions kept */
#define FR_MESSAGES 32 /* posted sends and receives kept */
#define FR_MAX_RT 256  /* runtimes a signal reaches */
#define FR_SAMPLES 32  /* (microbatch, sample) pairs kept */
#define FR_BUF (64 * 1024)

typedef struct fr_action {
	int action;
	double start, end; /* monotonic */
} fr_action;

/* op NULL: the action's SEND or RECV; else an all-to-all's message
 * (SEND_ALLTOALLV, RECV_ALLTOALLV) to or from peer, posted during
 * action (the compute whose callback called it; -1 between steps). */
typedef struct fr_message {
	int action;
	double posted, done; /* monotonic; done < 0 while in flight */
	const char *op;
	int peer;
} fr_message;

struct rt_frec {
	char dir[1024];
	double real_minus_mono;
	fr_action acts[FR_ACTIONS];
	int act_pos, act_len;
	fr_message msgs[FR_MESSAGES];
	int msg_pos, msg_len;
	int cur_action;   /* the action in progress, -1 none */
	double cur_start;
	/* an all-to-all's wait in progress (inside cur_action or between
	 * steps): its op and peer, since when; op NULL: none */
	const char *wait_op;
	int wait_peer;
	double wait_start;
	const char *failed_op; /* the wait_op the failure came in, or NULL */
	int failed_peer;
	int last_mb;
	int status;       /* 0 until a failure */
	int failed_action;
	double failed_waited, failed_at;
	char cause[1024]; /* the last diagnostic line */
	struct {
		int mb;
		uint64_t sample;
	} samples[FR_SAMPLES];
	int sample_pos, sample_len;
	atomic_int busy;  /* the buffer below is being written */
	char buf[FR_BUF];
	size_t len;
};

static ppcc_rt *_Atomic fr_all[FR_MAX_RT];
static _Thread_local ppcc_rt *fr_running; /* the rank this thread runs */
static atomic_int fr_handler_installed;

static double fr_clock(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- async-signal-safe formatting -------------------------------------------- */

static void fr_put(rt_frec *f, const char *s)
{
	while (*s && f->len < FR_BUF - 1)
		f->buf[f->len++] = *s++;
}

static void fr_int(rt_frec *f, long long v)
{
	char t[24];
	int n = 0;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v
				     : (unsigned long long)v;
	do {
		t[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		t[n++] = '-';
	while (n > 0 && f->len < FR_BUF - 1)
		f->buf[f->len++] = t[--n];
}

static void fr_hex(rt_frec *f, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	for (int k = 60; k >= 0 && f->len < FR_BUF - 1; k -= 4)
		f->buf[f->len++] = digits[(v >> k) & 15];
}

/* Seconds with six decimals; negative as "-". */
static void fr_secs(rt_frec *f, double s)
{
	if (s < 0) {
		fr_put(f, "-");
		return;
	}
	long long us = (long long)(s * 1e6 + 0.5);
	fr_int(f, us / 1000000);
	fr_put(f, ".");
	char t[7];
	long long frac = us % 1000000;
	for (int k = 5; k >= 0; k--) {
		t[k] = (char)('0' + frac % 10);
		frac /= 10;
	}
	t[6] = '\0';
	fr_put(f, t);
}

static double fr_real(const rt_frec *f, double mono)
{
	return mono < 0 ? -1 : mono + f->real_minus_mono;
}

/* One action as "IDX OP STAGE MB PEER"; op not NULL: an all-to-all's
 * message or wait inside action i, op and peer its own. */
static void fr_fields(rt_frec *f, const ppcc_rank_schedule *rs, int i,
		      const char *op, int peer)
{
	const ppcc_action *a = rs && i >= 0 && i < rs->n_actions ? &rs->actions[i]
								  : NULL;
	fr_int(f, i);
	fr_put(f, " ");
	fr_put(f, op ? op : a ? ppcc_op_name(a->op) : "-");
	fr_put(f, " ");
	fr_int(f, a ? a->stage : -1);
	fr_put(f, " ");
	fr_int(f, a ? a->mb : -1);
	fr_put(f, " ");
	fr_int(f, op ? peer : a ? a->peer : -1);
}

static void fr_action_fields(rt_frec *f, const ppcc_rank_schedule *rs, int i)
{
	fr_fields(f, rs, i, NULL, -1);
}

/* Microbatches of the rank's list as ranges: "0-3,5". */
static void fr_covers(rt_frec *f, const ppcc_schedule *s,
		      const ppcc_rank_schedule *rs)
{
	int first = -1, prev = -1, any = 0;
	for (int mb = 0; mb <= s->n_microbatches; mb++) {
		int has = 0;
		for (int i = 0; rs && mb < s->n_microbatches && i < rs->n_actions && !has; i++)
			has = rs->actions[i].mb == mb;
		if (has) {
			if (first < 0)
				first = mb;
			prev = mb;
			continue;
		}
		if (first >= 0) {
			fr_put(f, any ? "," : "");
			fr_int(f, first);
			if (prev > first) {
				fr_put(f, "-");
				fr_int(f, prev);
			}
			any = 1;
			first = -1;
		}
	}
	if (!any)
		fr_put(f, "none");
}

void ppcc_rt_flight_path(char *out, size_t n, const char *dir, int rank,
			 const char *suffix)
{
	/* by hand: snprintf is not async-signal-safe */
	size_t k = 0;
	if (n == 0)
		return;
	for (const char *p = dir; *p && k + 1 < n; p++)
		out[k++] = *p;
	const char *name = "/rank-";
	for (const char *p = name; *p && k + 1 < n; p++)
		out[k++] = *p;
	/* at least five digits, as many as the rank has (rank 100000 is
	 * rank-100000, not rank 0's rank-00000) */
	char d[10];
	int nd = 0;
	unsigned r = rank < 0 ? 0 : (unsigned)rank;
	do {
		d[nd++] = (char)('0' + r % 10);
		r /= 10;
	} while (r > 0 || nd < 5);
	while (nd > 0 && k + 1 < n)
		out[k++] = d[--nd];
	for (const char *p = ".flight"; *p && k + 1 < n; p++)
		out[k++] = *p;
	for (const char *p = suffix; *p && k + 1 < n; p++)
		out[k++] = *p;
	out[k] = '\0';
}

/* Formats and writes the record; async-signal-safe.  0 or EIO; 0 when
 * another writer holds the buffer (that one writes a record). */
static int fr_write(ppcc_rt *rt, const char *reason)
{
	rt_frec *f = rt->frec;
	if (!f || atomic_exchange(&f->busy, 1))
		return 0;
	const ppcc_schedule *s = rt->s;
	int me = rt->tx.rank;
	const ppcc_rank_schedule *rs =
		rt->rs ? rt->rs
		       : (s && me >= 0 && me < s->n_ranks ? &s->ranks[me] : NULL);
	double now = fr_clock(CLOCK_MONOTONIC);
	f->len = 0;
	fr_put(f, "ppcc-flight 1\nrank ");
	fr_int(f, rt->tx.rank);
	fr_put(f, "\nranks ");
	fr_int(f, s ? s->n_ranks : rt->tx.n_ranks);
	fr_put(f, "\npid ");
	fr_int(f, (long long)getpid());
	fr_put(f, "\nfingerprint ");
	fr_hex(f, s ? ppcc_schedule_fingerprint(s) : 0);
	fr_put(f, "\nschedule ");
	fr_put(f, s ? ppcc_schedule_kind_name(s->kind) : "-");
	fr_put(f, " ");
	fr_int(f, s ? s->n_ranks : 0);
	fr_put(f, " ");
	fr_int(f, s ? s->n_stages : 0);
	fr_put(f, " ");
	fr_int(f, s ? s->n_microbatches : 0);
	fr_put(f, " ");
	fr_int(f, rs ? rs->n_actions : 0);
	fr_put(f, "\ncovers ");
	if (s)
		fr_covers(f, s, rs);
	else
		fr_put(f, "none");
	fr_put(f, "\nreason ");
	fr_put(f, reason);
	fr_put(f, "\nwritten ");
	fr_secs(f, fr_real(f, now));
	fr_put(f, "\nstep ");
	fr_int(f, (long long)rt->step);
	fr_put(f, "\nstep_start ");
	fr_secs(f, rt->step_t0 > 0 ? fr_real(f, rt->step_t0) : -1);
	fr_put(f, "\ntimeout ");
	fr_secs(f, rt->tx.timeout_s);
	fr_put(f, "\ncurrent ");
	if (f->wait_op) {
		fr_fields(f, rs, f->cur_action, f->wait_op, f->wait_peer);
		fr_put(f, " ");
		fr_secs(f, fr_real(f, f->wait_start));
	} else if (f->cur_action >= 0) {
		fr_action_fields(f, rs, f->cur_action);
		fr_put(f, " ");
		fr_secs(f, fr_real(f, f->cur_start));
	} else {
		fr_put(f, "none");
	}
	fr_put(f, "\nstatus ");
	fr_int(f, f->status);
	fr_put(f, " ");
	fr_put(f, f->status ? ppcc_rt_status_str(f->status) : "running");
	fr_put(f, "\nfailed ");
	if (f->status) {
		fr_fields(f, rs, f->failed_action, f->failed_op, f->failed_peer);
		fr_put(f, " ");
		fr_secs(f, f->failed_waited);
		fr_put(f, " ");
		fr_secs(f, fr_real(f, f->failed_at));
	} else {
		fr_put(f, "none");
	}
	fr_put(f, "\ncause ");
	fr_put(f, f->cause[0] ? f->cause : "none");
	fr_put(f, "\nlast_mb ");
	fr_int(f, f->last_mb);
	for (int k = 0; k < f->sample_len; k++) {
		int at = (f->sample_pos - f->sample_len + k + FR_SAMPLES) % FR_SAMPLES;
		fr_put(f, "\nsample ");
		fr_int(f, f->samples[at].mb);
		fr_put(f, " ");
		fr_int(f, (long long)f->samples[at].sample);
	}
	for (int k = 0; k < f->act_len; k++) {
		const fr_action *a = &f->acts[(f->act_pos - f->act_len + k + FR_ACTIONS) %
					      FR_ACTIONS];
		fr_put(f, "\naction ");
		fr_action_fields(f, rs, a->action);
		fr_put(f, " ");
		fr_secs(f, fr_real(f, a->start));
		fr_put(f, " ");
		fr_secs(f, fr_real(f, a->end));
	}
	for (int k = 0; k < f->msg_len; k++) {
		const fr_message *m = &f->msgs[(f->msg_pos - f->msg_len + k + FR_MESSAGES) %
					       FR_MESSAGES];
		fr_put(f, "\nmessage ");
		fr_fields(f, rs, m->action, m->op, m->peer);
		fr_put(f, " ");
		fr_secs(f, fr_real(f, m->posted));
		fr_put(f, " ");
		fr_secs(f, fr_real(f, m->done));
	}
	fr_put(f, "\nend\n");

	char tmp[1100], path[1100];
	ppcc_rt_flight_path(tmp, sizeof tmp, f->dir, rt->tx.rank, ".tmp");
	ppcc_rt_flight_path(path, sizeof path, f->dir, rt->tx.rank, "");
	int err = 0, fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		err = PPCC_RT_EIO;
	} else {
		const char *p = f->buf;
		size_t n = f->len;
		while (n > 0) {
			ssize_t w = write(fd, p, n);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				err = PPCC_RT_EIO;
				break;
			}
			p += w;
			n -= (size_t)w;
		}
		if (close(fd) < 0 || err || rename(tmp, path) < 0)
			err = PPCC_RT_EIO;
	}
	atomic_store(&f->busy, 0);
	return err;
}

static void fr_on_signal(int sig)
{
	int saved = errno;
	(void)sig;
	for (int k = 0; k < FR_MAX_RT; k++) {
		ppcc_rt *rt = atomic_load(&fr_all[k]);
		if (rt)
			fr_write(rt, "signal");
	}
	errno = saved;
}

/* ---- the hooks core.c calls ------------------------------------------------------ */

void ppcc_rt_flight_open(ppcc_rt *rt)
{
	const char *dir = getenv("PPCC_FLIGHT_DIR");
	rt->frec = NULL;
	if (!dir || !*dir || strlen(dir) >= sizeof rt->frec->dir)
		return;
	rt_frec *f = ppcc_calloc(1, sizeof *f);
	if (!f)
		return; /* recording is best effort; the run goes on */
	memcpy(f->dir, dir, strlen(dir) + 1);
	mkdir(dir, 0755);
	f->real_minus_mono = fr_clock(CLOCK_REALTIME) - fr_clock(CLOCK_MONOTONIC);
	f->cur_action = -1;
	f->last_mb = -1;
	rt->frec = f;
	for (int k = 0; k < FR_MAX_RT; k++) {
		ppcc_rt *expect = NULL;
		if (atomic_compare_exchange_strong(&fr_all[k], &expect, rt))
			break;
	}
	if (!atomic_exchange(&fr_handler_installed, 1)) {
		struct sigaction old, sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = fr_on_signal;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		if (sigaction(SIGUSR1, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
			sigaction(SIGUSR1, &sa, NULL);
	}
}

void ppcc_rt_flight_close(ppcc_rt *rt)
{
	if (!rt->frec)
		return;
	for (int k = 0; k < FR_MAX_RT; k++) {
		ppcc_rt *expect = rt;
		if (atomic_compare_exchange_strong(&fr_all[k], &expect, NULL))
			break;
	}
	if (fr_running == rt)
		fr_running = NULL;
	/* a signal handler may be writing it on another thread */
	while (atomic_exchange(&rt->frec->busy, 1))
		;
	ppcc_free(rt->frec);
	rt->frec = NULL;
}

void ppcc_rt_flight_begin(ppcc_rt *rt, int action, double t0)
{
	rt_frec *f = rt->frec;
	if (!f)
		return;
	f->cur_start = t0;
	f->cur_action = action;
	fr_running = rt;
	f->last_mb = rt->rs->actions[action].mb;
}

void ppcc_rt_flight_end(ppcc_rt *rt, int action, double start, double end)
{
	rt_frec *f = rt->frec;
	if (!f)
		return;
	f->acts[f->act_pos] = (fr_action){action, start, end};
	f->act_pos = (f->act_pos + 1) % FR_ACTIONS;
	if (f->act_len < FR_ACTIONS)
		f->act_len++;
	f->cur_action = -1;
	fr_running = NULL;
}

void ppcc_rt_flight_post(ppcc_rt *rt, const rt_req *r)
{
	rt_frec *f = rt->frec;
	if (!f)
		return;
	f->msgs[f->msg_pos] = (fr_message){
		r->action, ppcc_rt_now(), -1,
		r->world ? (r->is_send ? "SEND_ALLTOALLV" : "RECV_ALLTOALLV") : NULL,
		r->world ? (r->is_send ? r->dst : r->src) : -1};
	f->msg_pos = (f->msg_pos + 1) % FR_MESSAGES;
	if (f->msg_len < FR_MESSAGES)
		f->msg_len++;
}

void ppcc_rt_flight_done(ppcc_rt *rt, const rt_req *r)
{
	rt_frec *f = rt->frec;
	if (!f)
		return;
	for (int k = 1; k <= f->msg_len; k++) {
		fr_message *m = &f->msgs[(f->msg_pos - k + FR_MESSAGES) % FR_MESSAGES];
		if (m->action == r->action && m->done < 0 &&
		    (m->op != NULL) == (r->world != 0) &&
		    (!m->op || (m->op[0] == (r->is_send ? 'S' : 'R') &&
				m->peer == (r->is_send ? r->dst : r->src)))) {
			m->done = ppcc_rt_now();
			return;
		}
	}
}

void ppcc_rt_flight_wait(ppcc_rt *rt, const rt_req *r, double t0)
{
	rt_frec *f = rt->frec;
	if (!f)
		return;
	if (!r) {
		f->wait_op = NULL;
		return;
	}
	f->wait_peer = r->is_send ? r->dst : r->src;
	f->wait_start = t0;
	f->wait_op = r->is_send ? "SEND_ALLTOALLV" : "RECV_ALLTOALLV";
}

void ppcc_rt_flight_line(ppcc_rt *rt, const char *line)
{
	rt_frec *f = rt->frec;
	if (!f)
		return;
	size_t n = strlen(line);
	if (n >= sizeof f->cause)
		n = sizeof f->cause - 1;
	for (size_t k = 0; k < n; k++) /* one line whatever the diag said */
		f->cause[k] = line[k] == '\n' ? ' ' : line[k];
	f->cause[n] = '\0';
}

void ppcc_rt_flight_fail(ppcc_rt *rt, int status, int action, double waited)
{
	rt_frec *f = rt->frec;
	if (!f || f->status)
		return;
	f->status = status;
	f->failed_action = action;
	f->failed_op = f->wait_op;
	f->failed_peer = f->wait_peer;
	f->failed_waited = waited;
	f->failed_at = ppcc_rt_now();
	fr_write(rt, "failure");
	if (fr_running == rt)
		fr_running = NULL;
}

int ppcc_rt_flight_sample(int mb, uint64_t sample)
{
	ppcc_rt *rt = fr_running;
	rt_frec *f = rt ? rt->frec : NULL;
	if (!f || f->cur_action < 0 || sample > (uint64_t)INT64_MAX)
		return PPCC_RT_EINPUT;
	f->samples[f->sample_pos].mb = mb;
	f->samples[f->sample_pos].sample = sample;
	f->sample_pos = (f->sample_pos + 1) % FR_SAMPLES;
	if (f->sample_len < FR_SAMPLES)
		f->sample_len++;
	return 0;
}

int ppcc_rt_dump(ppcc_rt *rt)
{
	if (!rt || !rt->frec)
		return PPCC_RT_EINPUT;
	return fr_write(rt, "dump");
}

/* Every line a rank says goes to its flight record and then to the
 * options' diag sink. */
void ppcc_rt_vreport(void *user, const char *fmt, va_list ap)
{
	ppcc_rt *rt = user;
	char line[2048];
	int n = snprintf(line, sizeof line, "ppcc-rt: rank %d: ", rt->tx.rank);
	if (n > 0 && (size_t)n < sizeof line)
		vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	ppcc_rt_flight_line(rt, line);
	rt->o.diag(rt->tx.rank, line, rt->o.diag_user);
}

void ppcc_rt_report(ppcc_rt *rt, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ppcc_rt_vreport(rt, fmt, ap);
	va_end(ap);
}
