/*
 * diagnose.c - the root cause of a failed or hung run, from its ranks'
 * flight records (the format flight.c writes; ppcc_runtime(3)).
 *
 * The records are read whole first, every problem reported with its
 * FILE:LINE:COL, so that a partial or damaged directory is described,
 * never half-used.  Then the cause, in this order of precedence:
 *
 *   1. schedule mismatch: the ranks' action lists cover different
 *      microbatches (a rank that skips one is named with what it skips),
 *      or their fingerprints differ (from each other, or from --schedule);
 *      the odd ranks are those outside the largest group;
 *   2. the first failure: of the ranks whose status is a failure of their
 *      own (not "another rank failed"), the one that failed earliest.  A
 *      timeout in a SEND or RECV is followed along the wait-for graph:
 *      rank A waits on its peer B; B is looked up in its own record: in a
 *      compute action (it holds everyone up, for how long), waiting on C
 *      (follow; a cycle is a deadlock), or without a record (likely
 *      dead);
 *   3. no failure: records written on demand (SIGUSR1, ppcc_rt_dump) of a
 *      job still hanging; the same graph from each waiting rank, reduced
 *      to the ranks at its ends.
 *
 * Ranks without a record are listed whatever the cause.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diagnose.h"

#define DG_MAX_RANKS 4096
#define DG_TEXT 1024

typedef struct dg_act {
	int idx;
	char op[16];
	int stage, mb, peer;
	double t1, t2; /* start and end, or posted and done; -1: none */
} dg_act;

typedef struct dg_rec {
	char *path;
	int rank, ranks;
	long long pid;
	uint64_t fingerprint;
	char kind[32];
	int s_ranks, s_stages, s_mb, n_actions;
	char covers[DG_TEXT];
	char reason[32];
	double written, step_start, timeout;
	long long step;
	int has_current;
	dg_act current; /* t1: since */
	int status;
	char status_str[64];
	int has_failed;
	dg_act failed;
	double waited, failed_at;
	char cause[DG_TEXT];
	int last_mb;
	int n_samples;
	long long sample_mb[32], sample_id[32]; /* the latest 32 */
	int n_acts, n_msgs;
	dg_act *acts, *msgs;
} dg_rec;

typedef struct dg_wait {
	int rank, peer;
	char op[16];
	int stage, mb;
	double seconds;
	int timed_out;
} dg_wait;

struct ppcc_diagnosis {
	char *dir;
	int n_ranks, n_records;
	dg_rec **by_rank; /* n_ranks, NULL: no record */
	dg_rec *recs;
	int *missing, n_missing;
	const char *kind; /* mismatch, skip, failure, hang, dead, deadlock, none */
	int rank;         /* the rank the cause names, -1 none */
	char cause[4 * DG_TEXT];
	char **details;
	int n_details;
	dg_wait *waits;
	int n_waits;
};

/* ---- reading ------------------------------------------------------------------- */

typedef struct dg_reader {
	const char *path;
	int line;
	char *cur;       /* the line, NUL-terminated */
	char *tok;       /* the token last taken */
	ppcc_diag *d;
	int bad;
} dg_reader;

static void dg_err(dg_reader *r, const char *at, const char *fmt, ...)
	PPCC_PRINTF(3, 4);

static void dg_err(dg_reader *r, const char *at, const char *fmt, ...)
{
	va_list ap;
	ppcc_loc loc = {r->path, r->line, at ? (int)(at - r->cur) + 1 : 1};
	va_start(ap, fmt);
	if (!r->bad)
		ppcc_diag_vreport(r->d, PPCC_SEV_ERROR, &loc, fmt, ap);
	va_end(ap);
	r->bad = 1;
}

/* The next space-separated token of the line, or NULL. */
static char *dg_tok(dg_reader *r, char **pos)
{
	char *p = *pos;
	while (*p == ' ')
		p++;
	if (!*p)
		return NULL;
	char *start = p;
	while (*p && *p != ' ')
		p++;
	if (*p)
		*p++ = '\0';
	*pos = p;
	r->tok = start;
	return start;
}

static long long dg_int(dg_reader *r, char **pos, const char *what)
{
	char *t = dg_tok(r, pos), *end;
	if (!t) {
		dg_err(r, *pos, "missing %s", what);
		return 0;
	}
	errno = 0;
	long long v = strtoll(t, &end, 10);
	if (*end || errno)
		dg_err(r, t, "expected an integer %s, got '%s'", what, t);
	return v;
}

/* Seconds, or "-" for none (-1). */
static double dg_secs(dg_reader *r, char **pos, const char *what)
{
	char *t = dg_tok(r, pos), *end;
	if (!t) {
		dg_err(r, *pos, "missing %s", what);
		return -1;
	}
	if (strcmp(t, "-") == 0)
		return -1;
	double v = strtod(t, &end);
	if (*end || v < 0)
		dg_err(r, t, "expected seconds for %s, got '%s'", what, t);
	return v;
}

static void dg_word(dg_reader *r, char **pos, char *out, size_t n,
		    const char *what)
{
	char *t = dg_tok(r, pos);
	if (!t) {
		dg_err(r, *pos, "missing %s", what);
		out[0] = '\0';
		return;
	}
	if (strlen(t) >= n)
		dg_err(r, t, "%s too long", what);
	snprintf(out, n, "%s", t);
}

static void dg_end_of_line(dg_reader *r, char **pos)
{
	char *t = dg_tok(r, pos);
	if (t)
		dg_err(r, t, "unexpected '%s' at the end of the line", t);
}

/* "IDX OP STAGE MB PEER T1 [T2]" */
static void dg_action(dg_reader *r, char **pos, dg_act *a, int two_times)
{
	a->idx = (int)dg_int(r, pos, "action index");
	dg_word(r, pos, a->op, sizeof a->op, "operation");
	a->stage = (int)dg_int(r, pos, "stage");
	a->mb = (int)dg_int(r, pos, "microbatch");
	a->peer = (int)dg_int(r, pos, "peer");
	a->t1 = dg_secs(r, pos, "a start time");
	a->t2 = two_times ? dg_secs(r, pos, "an end time") : -1;
}

static int dg_push(dg_act **arr, int *n, const dg_act *a)
{
	dg_act *p = ppcc_realloc(*arr, (size_t)(*n + 1) * sizeof **arr);
	if (!p)
		return -1;
	p[(*n)++] = *a;
	*arr = p;
	return 0;
}

enum {
	K_RANK, K_RANKS, K_PID, K_FP, K_SCHEDULE, K_COVERS, K_REASON, K_WRITTEN,
	K_STEP, K_STEP_START, K_TIMEOUT, K_CURRENT, K_STATUS, K_FAILED, K_CAUSE,
	K_LAST_MB, K_REQUIRED
};

static const char *const dg_keys[K_REQUIRED] = {
	"rank", "ranks", "pid", "fingerprint", "schedule", "covers", "reason",
	"written", "step", "step_start", "timeout", "current", "status",
	"failed", "cause", "last_mb"};

/* Parses one record; 0, or -1 having reported (ENOMEM: -2). */
static int dg_parse(dg_rec *rec, char *text, size_t n, const char *path,
		    ppcc_diag *d)
{
	dg_reader r = {path, 0, NULL, NULL, d, 0};
	int seen[K_REQUIRED] = {0}, ended = 0;
	char *p = text, *end = text + n;
	memset(rec, 0, sizeof *rec);
	rec->rank = -1;
	while (p < end && !r.bad) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		r.line++;
		r.cur = p;
		if (!nl) {
			dg_err(&r, NULL, "truncated: the last line has no newline");
			break;
		}
		*nl = '\0';
		if (memchr(p, '\0', (size_t)(nl - p))) {
			dg_err(&r, NULL, "a NUL byte in the line");
			break;
		}
		char *pos = p, *key = dg_tok(&r, &pos);
		p = nl + 1;
		if (ended) {
			dg_err(&r, key, "text after 'end'");
			break;
		}
		if (r.line == 1) {
			if (!key || strcmp(key, "ppcc-flight") != 0) {
				dg_err(&r, key, "not a ppcc flight record (expected "
				       "'ppcc-flight 1')");
				break;
			}
			long long v = dg_int(&r, &pos, "format version");
			if (!r.bad && v != 1)
				dg_err(&r, r.tok, "flight record format %lld; this ppcc "
				       "reads 1", v);
			dg_end_of_line(&r, &pos);
			continue;
		}
		if (!key) {
			dg_err(&r, NULL, "empty line");
			break;
		}
		if (strcmp(key, "end") == 0) {
			dg_end_of_line(&r, &pos);
			ended = 1;
			continue;
		}
		if (strcmp(key, "sample") == 0) {
			long long mbv = dg_int(&r, &pos, "microbatch");
			long long id = dg_int(&r, &pos, "sample");
			dg_end_of_line(&r, &pos);
			int k = rec->n_samples++ % 32;
			rec->sample_mb[k] = mbv;
			rec->sample_id[k] = id;
			continue;
		}
		if (strcmp(key, "action") == 0 || strcmp(key, "message") == 0) {
			dg_act a;
			int is_action = key[0] == 'a';
			dg_action(&r, &pos, &a, 1);
			dg_end_of_line(&r, &pos);
			if (!r.bad && dg_push(is_action ? &rec->acts : &rec->msgs,
					      is_action ? &rec->n_acts : &rec->n_msgs, &a) < 0)
				return -2;
			continue;
		}
		int k;
		for (k = 0; k < K_REQUIRED; k++)
			if (strcmp(key, dg_keys[k]) == 0)
				break;
		if (k == K_REQUIRED) {
			dg_err(&r, key, "unknown key '%s'", key);
			break;
		}
		if (seen[k]) {
			dg_err(&r, key, "'%s' given twice", key);
			break;
		}
		seen[k] = 1;
		switch (k) {
		case K_RANK: rec->rank = (int)dg_int(&r, &pos, "rank"); break;
		case K_RANKS: rec->ranks = (int)dg_int(&r, &pos, "rank count"); break;
		case K_PID: rec->pid = dg_int(&r, &pos, "pid"); break;
		case K_FP: {
			char *t = dg_tok(&r, &pos), *e;
			if (!t || strlen(t) != 16) {
				dg_err(&r, t ? t : pos, "expected 16 hex digits");
				break;
			}
			rec->fingerprint = strtoull(t, &e, 16);
			if (*e)
				dg_err(&r, t, "expected 16 hex digits, got '%s'", t);
			break;
		}
		case K_SCHEDULE:
			dg_word(&r, &pos, rec->kind, sizeof rec->kind, "schedule kind");
			rec->s_ranks = (int)dg_int(&r, &pos, "rank count");
			rec->s_stages = (int)dg_int(&r, &pos, "stage count");
			rec->s_mb = (int)dg_int(&r, &pos, "microbatch count");
			rec->n_actions = (int)dg_int(&r, &pos, "action count");
			break;
		case K_COVERS:
			dg_word(&r, &pos, rec->covers, sizeof rec->covers, "microbatches");
			break;
		case K_REASON:
			dg_word(&r, &pos, rec->reason, sizeof rec->reason, "reason");
			break;
		case K_WRITTEN: rec->written = dg_secs(&r, &pos, "the time written"); break;
		case K_STEP: rec->step = dg_int(&r, &pos, "step"); break;
		case K_STEP_START: rec->step_start = dg_secs(&r, &pos, "the step's start"); break;
		case K_TIMEOUT: rec->timeout = dg_secs(&r, &pos, "the timeout"); break;
		case K_CURRENT:
		case K_FAILED: {
			while (*pos == ' ')
				pos++;
			if (strncmp(pos, "none", 4) == 0 &&
			    (pos[4] == '\0' || pos[4] == ' ')) {
				pos += 4;
				break;
			}
			if (k == K_CURRENT) {
				rec->has_current = 1;
				dg_action(&r, &pos, &rec->current, 0);
			} else {
				rec->has_failed = 1;
				dg_action(&r, &pos, &rec->failed, 0);
				rec->waited = rec->failed.t1;
				rec->failed_at = dg_secs(&r, &pos, "the failure's time");
			}
			break;
		}
		case K_STATUS:
			rec->status = (int)dg_int(&r, &pos, "status");
			snprintf(rec->status_str, sizeof rec->status_str, "%s",
				 *pos == ' ' ? pos + 1 : pos);
			pos += strlen(pos);
			break;
		case K_CAUSE:
			snprintf(rec->cause, sizeof rec->cause, "%s", pos);
			pos += strlen(pos);
			break;
		case K_LAST_MB: rec->last_mb = (int)dg_int(&r, &pos, "microbatch"); break;
		}
		if (!r.bad)
			dg_end_of_line(&r, &pos);
	}
	if (r.bad)
		return -1;
	for (int k = 0; k < K_REQUIRED; k++)
		if (!seen[k]) {
			r.cur = NULL;
			ppcc_loc loc = {path, r.line, 1};
			ppcc_error(d, &loc, "truncated: no '%s' line before the end",
				   dg_keys[k]);
			return -1;
		}
	if (!ended) {
		ppcc_loc loc = {path, r.line, 1};
		ppcc_error(d, &loc, "truncated: no 'end' line");
		return -1;
	}
	if (rec->ranks < 1 || rec->ranks > DG_MAX_RANKS || rec->rank < 0 ||
	    rec->rank >= rec->ranks) {
		ppcc_loc loc = {path, 2, 1};
		ppcc_error(d, &loc, "rank %d outside the %d ranks", rec->rank,
			   rec->ranks);
		return -1;
	}
	return 0;
}

static char *dg_read(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, len = 0;
	char *p = ppcc_malloc(cap + 1);
	size_t k;
	while (p && (k = fread(p + len, 1, cap - len, f)) > 0) {
		len += k;
		if (len == cap) {
			char *q = ppcc_realloc(p, 2 * cap + 1);
			if (!q) {
				ppcc_free(p);
				p = NULL;
				break;
			}
			p = q;
			cap *= 2;
		}
	}
	if (p && ferror(f)) {
		ppcc_free(p);
		p = NULL;
	}
	fclose(f);
	if (p) {
		p[len] = '\0';
		*n = len;
	}
	return p;
}

static int dg_cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- analysis ------------------------------------------------------------------- */

static void dg_detail(ppcc_diagnosis *dg, const char *fmt, ...) PPCC_PRINTF(2, 3);

static void dg_detail(ppcc_diagnosis *dg, const char *fmt, ...)
{
	char line[2 * DG_TEXT];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	char **p = ppcc_realloc(dg->details, (size_t)(dg->n_details + 1) * sizeof *p);
	char *copy = ppcc_malloc(strlen(line) + 1);
	if (!p || !copy) {
		ppcc_free(copy);
		if (p)
			dg->details = p;
		return;
	}
	strcpy(copy, line);
	p[dg->n_details++] = copy;
	dg->details = p;
}

static int dg_is_comm(const char *op)
{
	return strncmp(op, "SEND_", 5) == 0 || strncmp(op, "RECV_", 5) == 0;
}

static const char *dg_op_words(const char *op)
{
	if (strcmp(op, "F") == 0)
		return "forward";
	if (strcmp(op, "B") == 0)
		return "backward";
	if (strcmp(op, "I") == 0)
		return "backward_input";
	if (strcmp(op, "W") == 0)
		return "backward_weight";
	return op;
}

/* "ranks 0, 2 and 3" / "rank 1". */
static void dg_rank_list(char *out, size_t n, const int *ranks, int k)
{
	size_t len = (size_t)snprintf(out, n, "%s", k == 1 ? "rank " : "ranks ");
	for (int i = 0; i < k && len < n; i++)
		len += (size_t)snprintf(out + len, n - len, "%s%d",
					i == 0 ? "" : i == k - 1 ? " and " : ", ",
					ranks[i]);
}

/* The microbatches of a "covers" list as a bitmap (m entries). */
static void dg_cover_set(const char *covers, int m, unsigned char *set)
{
	memset(set, 0, (size_t)m);
	const char *p = covers;
	while (*p && strcmp(p, "none") != 0) {
		char *e;
		long a = strtol(p, &e, 10), b = a;
		if (e == p)
			return;
		p = e;
		if (*p == '-') {
			b = strtol(p + 1, &e, 10);
			p = e;
		}
		for (long k = a; k <= b && k < m; k++)
			if (k >= 0)
				set[k] = 1;
		if (*p == ',')
			p++;
		else if (*p)
			return;
	}
}

/* The index of the group (by a string key) with the most ranks. */
static int dg_majority(char **keys, int n, int *out_count)
{
	int best = -1, best_n = 0;
	for (int i = 0; i < n; i++) {
		int c = 0;
		for (int j = 0; j < n; j++)
			c += strcmp(keys[i], keys[j]) == 0;
		if (c > best_n) {
			best = i;
			best_n = c;
		}
	}
	*out_count = best_n;
	return best;
}

static int dg_mismatch(ppcc_diagnosis *dg, const ppcc_schedule *sched,
		       const char *sched_name)
{
	int n = dg->n_records;
	char **cov = ppcc_calloc((size_t)n, sizeof *cov);
	char **fps = ppcc_calloc((size_t)n, sizeof *fps);
	char (*fpbuf)[64] = ppcc_calloc((size_t)n, sizeof *fpbuf);
	int found = 0, count;
	if (!cov || !fps || !fpbuf)
		goto out;
	for (int i = 0; i < n; i++) {
		cov[i] = dg->recs[i].covers;
		snprintf(fpbuf[i], sizeof fpbuf[i], "%016" PRIx64, dg->recs[i].fingerprint);
		fps[i] = fpbuf[i];
	}
	/* a rank whose list covers other microbatches */
	int ref = dg_majority(cov, n, &count);
	if (count < n) {
		const dg_rec *rr = &dg->recs[ref];
		for (int i = 0; i < n; i++) {
			const dg_rec *x = &dg->recs[i];
			if (strcmp(x->covers, rr->covers) == 0)
				continue;
			int m = x->s_mb > rr->s_mb ? x->s_mb : rr->s_mb;
			unsigned char *a = ppcc_calloc((size_t)m + 1, 2);
			if (!a)
				break;
			dg_cover_set(rr->covers, m, a);
			dg_cover_set(x->covers, m, a + m);
			char skipped[DG_TEXT] = "", extra[DG_TEXT] = "";
			size_t ls = 0, le = 0;
			int ns = 0;
			for (int k = 0; k < m; k++) {
				if (a[k] && !a[m + k] && ls < sizeof skipped) {
					ls += (size_t)snprintf(skipped + ls, sizeof skipped - ls,
							       "%s%d", ls ? ", " : "", k);
					ns++;
				}
				if (!a[k] && a[m + k] && le < sizeof extra)
					le += (size_t)snprintf(extra + le, sizeof extra - le,
							       "%s%d", le ? ", " : "", k);
			}
			ppcc_free(a);
			int others[DG_MAX_RANKS], no = 0;
			for (int j = 0; j < n && no < DG_MAX_RANKS; j++)
				if (strcmp(dg->recs[j].covers, rr->covers) == 0)
					others[no++] = dg->recs[j].rank;
			char ol[DG_TEXT];
			dg_rank_list(ol, sizeof ol, others, no);
			if (!found) {
				dg->kind = ls && !le ? "skip" : "mismatch";
				dg->rank = x->rank;
				if (ls && !le)
					snprintf(dg->cause, sizeof dg->cause,
						 "rank %d's action list skips microbatch%s %s "
						 "(it covers %s; %s cover%s %s)", x->rank,
						 ns > 1 ? "es" : "", skipped, x->covers, ol,
						 no == 1 ? "s" : "", rr->covers);
				else
					snprintf(dg->cause, sizeof dg->cause,
						 "rank %d's action list covers microbatches %s; "
						 "%s cover%s %s", x->rank, x->covers, ol,
						 no == 1 ? "s" : "", rr->covers);
			} else {
				dg_detail(dg, "rank %d's action list covers microbatches %s",
					  x->rank, x->covers);
			}
			found = 1;
		}
	}
	/* fingerprints: against the file, or the largest group */
	uint64_t want = 0;
	int have_want = 0;
	if (sched) {
		want = ppcc_schedule_fingerprint(sched);
		have_want = 1;
	} else {
		ref = dg_majority(fps, n, &count);
		if (count < n) {
			want = dg->recs[ref].fingerprint;
			have_want = 1;
		}
	}
	for (int i = 0; have_want && i < n; i++) {
		const dg_rec *x = &dg->recs[i];
		int dup = 0, group[DG_MAX_RANKS], ng = 0;
		for (int j = 0; j < i; j++)
			dup |= dg->recs[j].fingerprint == x->fingerprint;
		if (x->fingerprint == want || dup)
			continue;
		for (int j = i; j < n && ng < DG_MAX_RANKS; j++)
			if (dg->recs[j].fingerprint == x->fingerprint)
				group[ng++] = dg->recs[j].rank;
		char line[4 * DG_TEXT], who[DG_TEXT];
		dg_rank_list(who, sizeof who, group, ng);
		if (sched)
			snprintf(line, sizeof line, "%s hold%s schedule %016" PRIx64
				 " (%s, %d ranks, %d stages, %d microbatches), not %s's "
				 "%016" PRIx64 " (%s, %d ranks, %d stages, %d "
				 "microbatches)", who, ng == 1 ? "s" : "", x->fingerprint, x->kind,
				 x->s_ranks, x->s_stages, x->s_mb, sched_name, want,
				 ppcc_schedule_kind_name(sched->kind), (int)sched->n_ranks,
				 (int)sched->n_stages, (int)sched->n_microbatches);
		if (!sched) {
			int rg[DG_MAX_RANKS], nr = 0;
			char refs[DG_TEXT];
			for (int j = 0; j < n && nr < DG_MAX_RANKS; j++)
				if (dg->recs[j].fingerprint == want)
					rg[nr++] = dg->recs[j].rank;
			dg_rank_list(refs, sizeof refs, rg, nr);
			snprintf(line, sizeof line, "the ranks hold different schedules: "
				 "%s ha%s %016" PRIx64 " (%s, %d ranks, %d stages, %d "
				 "microbatches), %s %016" PRIx64 " (%s, %d ranks, %d "
				 "stages, %d microbatches)", who, ng == 1 ? "s" : "ve",
				 x->fingerprint, x->kind, x->s_ranks, x->s_stages,
				 x->s_mb, refs, want, dg->recs[ref].kind,
				 dg->recs[ref].s_ranks, dg->recs[ref].s_stages,
				 dg->recs[ref].s_mb);
		}
		if (!found) {
			dg->kind = "mismatch";
			dg->rank = x->rank;
			snprintf(dg->cause, sizeof dg->cause, "%s", line);
		} else {
			dg_detail(dg, "%s", line);
		}
		found = 1;
	}
out:
	ppcc_free(cov);
	ppcc_free(fps);
	ppcc_free(fpbuf);
	return found;
}

static int dg_is_own_failure(const dg_rec *x)
{
	return x->status < 0 && x->status != -22; /* PPCC_RT_EPEER */
}

/* The reason from a runtime diagnostic line: what follows "STATUS: ",
 * up to "; waited". */
static void dg_reason(char *out, size_t n, const dg_rec *x)
{
	char key[80];
	snprintf(key, sizeof key, ": %s: ", x->status_str);
	const char *p = strstr(x->cause, key);
	p = p ? p + strlen(key) : x->cause;
	const char *e = strstr(p, "; waited");
	size_t len = e ? (size_t)(e - p) : strlen(p);
	if (len >= n)
		len = n - 1;
	memcpy(out, p, len);
	out[len] = '\0';
}

static void dg_add_wait(ppcc_diagnosis *dg, const dg_rec *x, const dg_act *a,
			double seconds, int timed_out)
{
	dg_wait *w = ppcc_realloc(dg->waits, (size_t)(dg->n_waits + 1) * sizeof *w);
	if (!w)
		return;
	dg->waits = w;
	w = &w[dg->n_waits++];
	*w = (dg_wait){x->rank, a->peer, {0}, a->stage, a->mb, seconds, timed_out};
	snprintf(w->op, sizeof w->op, "%s", a->op);
}

/* The action rank x was inside when its record was written (NULL:
 * between actions), and until when. */
static const dg_act *dg_state(const dg_rec *x, double *out_since_end)
{
	*out_since_end = x->status ? x->failed_at : x->written;
	return x->has_current ? &x->current : NULL;
}

/* " (sample N)" when x named the sample of microbatch mb, else "". */
static void dg_sample(char *out, size_t n, const dg_rec *x, int mb)
{
	out[0] = '\0';
	int have = x->n_samples < 32 ? x->n_samples : 32;
	for (int k = 0; k < have; k++)
		if (x->sample_mb[k] == mb)
			snprintf(out, n, " (sample %lld)", x->sample_id[k]);
}

/* Follows the wait-for graph from rank `from`; fills the cause. */
static void dg_follow(ppcc_diagnosis *dg, int from, const char *first)
{
	int seen[DG_MAX_RANKS] = {0}, chain[DG_MAX_RANKS], n = 0;
	int cur = from;
	while (cur >= 0 && cur < dg->n_ranks && !seen[cur]) {
		seen[cur] = 1;
		chain[n++] = cur;
		const dg_rec *x = dg->by_rank[cur];
		if (!x) {
			dg->kind = "dead";
			dg->rank = cur;
			snprintf(dg->cause, sizeof dg->cause, "rank %d wrote no flight "
				 "record (likely dead); %s", cur, first);
			return;
		}
		double until;
		const dg_act *a = dg_state(x, &until);
		if (!a) {
			dg->kind = "hang";
			dg->rank = cur;
			snprintf(dg->cause, sizeof dg->cause, "rank %d holds everyone up: "
				 "it is between actions (after action %d of %d, step "
				 "%lld); %s", cur, x->n_acts ? x->acts[x->n_acts - 1].idx : -1,
				 x->n_actions, x->step, first);
			return;
		}
		if (dg_is_comm(a->op)) {
			cur = a->peer;
			continue;
		}
		char sample[64];
		dg_sample(sample, sizeof sample, x, a->mb);
		dg->kind = "hang";
		dg->rank = cur;
		snprintf(dg->cause, sizeof dg->cause, "rank %d holds everyone up: it "
			 "has been inside %s of stage %d mb %d%s for %.3f s (step %lld, "
			 "timeout %.3f s); %s", cur, dg_op_words(a->op), a->stage, a->mb,
			 sample, until - a->t1, x->step, x->timeout, first);
		return;
	}
	/* back at a rank of the chain: a cycle */
	char list[DG_TEXT];
	size_t len = 0;
	int k0 = 0;
	while (k0 < n && chain[k0] != cur)
		k0++;
	for (int k = k0; k < n && len < sizeof list; k++)
		len += (size_t)snprintf(list + len, sizeof list - len, "%d -> ", chain[k]);
	if (len < sizeof list)
		snprintf(list + len, sizeof list - len, "%d", cur);
	dg->kind = "deadlock";
	dg->rank = cur;
	snprintf(dg->cause, sizeof dg->cause, "the ranks wait for each other in a "
		 "cycle: %s; %s", list, first);
}

static void dg_analyse(ppcc_diagnosis *dg, const ppcc_schedule *sched,
		       const char *sched_name)
{
	dg->kind = "none";
	dg->rank = -1;
	/* every rank blocked in a SEND/RECV: the wait-for edges */
	for (int i = 0; i < dg->n_records; i++) {
		const dg_rec *x = &dg->recs[i];
		double until;
		const dg_act *a = dg_state(x, &until);
		if (a && dg_is_comm(a->op))
			dg_add_wait(dg, x, a, until - a->t1,
				    x->status == -20 /* ETIMEOUT */);
	}
	if (dg_mismatch(dg, sched, sched_name))
		goto rest;

	const dg_rec *first = NULL;
	for (int i = 0; i < dg->n_records; i++) {
		const dg_rec *x = &dg->recs[i];
		if (dg_is_own_failure(x) &&
		    (!first || x->failed_at < first->failed_at ||
		     (x->failed_at == first->failed_at && x->rank < first->rank)))
			first = x;
	}
	if (first) {
		const dg_act *a = first->has_failed ? &first->failed : NULL;
		char reason[DG_TEXT], what[DG_TEXT];
		dg_reason(reason, sizeof reason, first);
		if (a && a->idx >= 0 && strcmp(a->op, "-") != 0) {
			char sample[64];
			dg_sample(sample, sizeof sample, first, a->mb);
			snprintf(what, sizeof what, "action %d %s stage %d mb %d%s", a->idx,
				 a->op, a->stage, a->mb, sample);
		}
		else
			snprintf(what, sizeof what, "%s", "start-up");
		if (first->status == -20 && a && dg_is_comm(a->op) && a->peer >= 0) {
			char line[2 * DG_TEXT];
			snprintf(line, sizeof line, "rank %d, the first to fail, timed out "
				 "after %.3f s in %s %s stage %d mb %d %s rank %d",
				 first->rank, first->waited, a->op,
				 a->op[0] == 'R' ? "of" : "to", a->stage, a->mb,
				 a->op[0] == 'R' ? "from" : "for", a->peer);
			dg_follow(dg, a->peer, line);
		} else {
			dg->kind = "failure";
			dg->rank = first->rank;
			snprintf(dg->cause, sizeof dg->cause, "rank %d failed first (%s) at "
				 "%s, step %lld: %s", first->rank, first->status_str, what,
				 first->step, reason);
		}
		int stopped[DG_MAX_RANKS], ns = 0;
		for (int i = 0; i < dg->n_records; i++)
			if (dg->recs[i].status == -22 && ns < DG_MAX_RANKS)
				stopped[ns++] = dg->recs[i].rank;
		if (ns) {
			char list[DG_TEXT];
			dg_rank_list(list, sizeof list, stopped, ns);
			if (strcmp(dg->kind, "failure") == 0)
				dg_detail(dg, "%s stopped because rank %d failed", list,
					  first->rank);
			else
				dg_detail(dg, "%s stopped when rank %d timed out", list,
					  first->rank);
		}
		goto rest;
	}
	/* no failure of its own anywhere: a hang caught on demand, or ranks
	 * stopped by one that left no record */
	for (int k = 0; k < dg->n_waits; k++) {
		const dg_wait *w = &dg->waits[k];
		char line[DG_TEXT];
		snprintf(line, sizeof line, "rank %d waits %s stage %d mb %d %s rank %d",
			 w->rank, w->op, w->stage, w->mb,
			 w->op[0] == 'R' ? "from" : "for", w->peer);
		dg_follow(dg, w->peer, line);
		break;
	}
	if (strcmp(dg->kind, "none") == 0 && dg->n_missing) {
		dg->kind = "dead";
		dg->rank = dg->missing[0];
		snprintf(dg->cause, sizeof dg->cause, "rank %d wrote no flight record "
			 "(likely dead); no other rank failed of its own", dg->missing[0]);
	}
	if (strcmp(dg->kind, "none") == 0)
		snprintf(dg->cause, sizeof dg->cause, "no rank failed and none is "
			 "waiting on another");
rest:
	for (int k = 0; k < dg->n_waits; k++) {
		const dg_wait *w = &dg->waits[k];
		dg_detail(dg, "rank %d waits %s stage %d mb %d %s rank %d (%.3f s%s)",
			  w->rank, w->op, w->stage, w->mb,
			  w->op[0] == 'R' ? "from" : "for", w->peer, w->seconds,
			  w->timed_out ? ", then timed out" : "");
	}
	for (int k = 0; k < dg->n_missing; k++)
		if (!(strcmp(dg->kind, "dead") == 0 && dg->rank == dg->missing[k]))
			dg_detail(dg, "rank %d wrote no flight record (likely dead)",
				  dg->missing[k]);
}

/* ---- the entry points ------------------------------------------------------------ */

void ppcc_diagnosis_free(ppcc_diagnosis *dg)
{
	if (!dg)
		return;
	for (int i = 0; i < dg->n_records; i++) {
		ppcc_free(dg->recs[i].path);
		ppcc_free(dg->recs[i].acts);
		ppcc_free(dg->recs[i].msgs);
	}
	for (int i = 0; i < dg->n_details; i++)
		ppcc_free(dg->details[i]);
	ppcc_free(dg->details);
	ppcc_free(dg->recs);
	ppcc_free(dg->by_rank);
	ppcc_free(dg->missing);
	ppcc_free(dg->waits);
	ppcc_free(dg->dir);
	ppcc_free(dg);
}

int ppcc_diagnose(ppcc_diagnosis **out, const char *dir,
		  const ppcc_schedule *sched, const char *sched_name,
		  ppcc_diag *d)
{
	int err = 0, n_names = 0;
	char **names = NULL;
	ppcc_diagnosis *dg = ppcc_calloc(1, sizeof *dg);
	*out = NULL;
	if (!dg)
		return PPCC_ENOMEM;
	dg->dir = ppcc_malloc(strlen(dir) + 1);
	if (!dg->dir) {
		err = PPCC_ENOMEM;
		goto out;
	}
	strcpy(dg->dir, dir);
	DIR *dp = opendir(dir);
	if (!dp) {
		ppcc_loc loc = {dir, 0, 0};
		ppcc_error(d, &loc, "cannot read the directory: %s", strerror(errno));
		err = PPCC_EIO;
		goto out;
	}
	struct dirent *e;
	while ((e = readdir(dp))) {
		size_t len = strlen(e->d_name);
		if (strncmp(e->d_name, "rank-", 5) != 0 || len < 13 ||
		    strcmp(e->d_name + len - 7, ".flight") != 0)
			continue;
		char **nn = ppcc_realloc(names, (size_t)(n_names + 1) * sizeof *nn);
		char *path = ppcc_malloc(strlen(dir) + len + 2);
		if (!nn || !path) {
			ppcc_free(path);
			if (nn)
				names = nn;
			err = PPCC_ENOMEM;
			break;
		}
		names = nn;
		sprintf(path, "%s/%s", dir, e->d_name);
		names[n_names++] = path;
	}
	closedir(dp);
	if (err < 0)
		goto out;
	if (n_names == 0) {
		ppcc_loc loc = {dir, 0, 0};
		ppcc_error(d, &loc, "no flight records (rank-NNNNN.flight); was "
			   "PPCC_FLIGHT_DIR set to this directory?");
		err = PPCC_EIO;
		goto out;
	}
	qsort(names, (size_t)n_names, sizeof *names, dg_cmp_names);
	dg->recs = ppcc_calloc((size_t)n_names, sizeof *dg->recs);
	if (!dg->recs) {
		err = PPCC_ENOMEM;
		goto out;
	}
	locale_t saved = ppcc_locale_enter();
	for (int i = 0; i < n_names; i++) {
		size_t n;
		char *text = dg_read(names[i], &n);
		if (!text) {
			ppcc_loc loc = {names[i], 0, 0};
			ppcc_error(d, &loc, "cannot read: %s", strerror(errno));
			err = PPCC_EIO;
			continue;
		}
		dg_rec *x = &dg->recs[dg->n_records];
		int pe = dg_parse(x, text, n, names[i], d);
		ppcc_free(text);
		if (pe == -2) {
			err = PPCC_ENOMEM;
			break;
		}
		if (pe < 0) {
			ppcc_free(x->acts);
			ppcc_free(x->msgs);
			memset(x, 0, sizeof *x);
			if (err == 0)
				err = PPCC_EINPUT;
			continue;
		}
		x->path = names[i];
		names[i] = NULL;
		dg->n_records++;
	}
	ppcc_locale_leave(saved);
	if (err < 0)
		goto out;
	/* ranks: the largest count any record or the schedule gives */
	for (int i = 0; i < dg->n_records; i++)
		if (dg->recs[i].ranks > dg->n_ranks)
			dg->n_ranks = dg->recs[i].ranks;
	if (sched && sched->n_ranks > dg->n_ranks && sched->n_ranks <= DG_MAX_RANKS)
		dg->n_ranks = sched->n_ranks;
	dg->by_rank = ppcc_calloc((size_t)dg->n_ranks, sizeof *dg->by_rank);
	dg->missing = ppcc_calloc((size_t)dg->n_ranks, sizeof *dg->missing);
	if (!dg->by_rank || !dg->missing) {
		err = PPCC_ENOMEM;
		goto out;
	}
	for (int i = 0; i < dg->n_records; i++) {
		dg_rec *x = &dg->recs[i];
		if (dg->by_rank[x->rank]) {
			ppcc_loc loc = {x->path, 2, 1};
			ppcc_error(d, &loc, "a second record of rank %d (the first is "
				   "%s)", x->rank, dg->by_rank[x->rank]->path);
			err = PPCC_EINPUT;
			continue;
		}
		dg->by_rank[x->rank] = x;
	}
	if (err < 0)
		goto out;
	for (int r = 0; r < dg->n_ranks; r++)
		if (!dg->by_rank[r])
			dg->missing[dg->n_missing++] = r;
	dg_analyse(dg, sched, sched_name);
out:
	for (int i = 0; i < n_names; i++)
		ppcc_free(names[i]);
	ppcc_free(names);
	if (err < 0) {
		ppcc_diagnosis_free(dg);
		return err;
	}
	*out = dg;
	return 0;
}

static int dg_emit_json(FILE *f, const ppcc_diagnosis *dg)
{
	json_t *o = json_object(), *miss = json_array(), *det = json_array();
	json_t *waits = json_array(), *recs = json_array();
	int bad = !o || !miss || !det || !waits || !recs;
	for (int k = 0; !bad && k < dg->n_missing; k++)
		bad |= json_array_append_new(miss, json_integer(dg->missing[k]));
	for (int k = 0; !bad && k < dg->n_details; k++)
		bad |= json_array_append_new(det, json_string(dg->details[k]));
	for (int k = 0; !bad && k < dg->n_waits; k++) {
		const dg_wait *w = &dg->waits[k];
		json_t *x = json_pack("{s:i,s:s,s:i,s:i,s:i,s:f,s:b}", "rank", w->rank,
				      "op", w->op, "stage", w->stage, "mb", w->mb,
				      "peer", w->peer, "seconds", w->seconds,
				      "timed_out", w->timed_out);
		bad |= !x || json_array_append_new(waits, x);
	}
	for (int k = 0; !bad && k < dg->n_records; k++) {
		const dg_rec *x = &dg->recs[k];
		char fp[17];
		snprintf(fp, sizeof fp, "%016" PRIx64, x->fingerprint);
		json_t *y = json_pack("{s:i,s:s,s:s,s:i,s:s,s:I,s:s}", "rank", x->rank,
				      "file", x->path, "reason", x->reason,
				      "status", x->status, "status_text", x->status_str,
				      "step", (json_int_t)x->step, "fingerprint", fp);
		bad |= !y || json_array_append_new(recs, y);
	}
	if (!bad) {
		json_t *cause = json_pack("{s:s,s:i,s:s}", "kind", dg->kind, "rank",
					  dg->rank, "text", dg->cause);
		bad = !cause ||
		      json_object_set_new(o, "directory", json_string(dg->dir)) ||
		      json_object_set_new(o, "ranks", json_integer(dg->n_ranks)) ||
		      json_object_set_new(o, "cause", cause) ||
		      json_object_set_new(o, "details", det) ||
		      json_object_set_new(o, "waits", waits) ||
		      json_object_set_new(o, "missing", miss) ||
		      json_object_set_new(o, "records", recs);
		det = waits = miss = recs = NULL;
	}
	/* ASCII, as every JSON ppcc writes: a BiDi control in a path or a
	 * record is \u202e, lossless and never raw */
	if (!bad)
		bad = json_dumpf(o, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
				       JSON_ENSURE_ASCII | JSON_REAL_PRECISION(9)) != 0 ||
		      fputc('\n', f) == EOF;
	json_decref(o);
	json_decref(miss);
	json_decref(det);
	json_decref(waits);
	json_decref(recs);
	return bad ? PPCC_EIO : 0;
}

int ppcc_diagnosis_emit(FILE *f, const ppcc_diagnosis *dg, int json)
{
	locale_t saved = ppcc_locale_enter();
	int err = 0;
	if (json) {
		err = dg_emit_json(f, dg);
	} else {
		/* the directory, and what the records say, shown for a
		 * person: a record is a file anyone may have written */
		ppcc_fput_visible(f, dg->dir);
		fprintf(f, ": %d of %d ranks wrote flight records\n",
			dg->n_records, dg->n_ranks);
		fputs("cause: ", f);
		ppcc_fput_visible(f, dg->cause);
		fputc('\n', f);
		for (int k = 0; k < dg->n_details; k++) {
			fputs("  ", f);
			ppcc_fput_visible(f, dg->details[k]);
			fputc('\n', f);
		}
		if (ferror(f))
			err = PPCC_EIO;
	}
	ppcc_locale_leave(saved);
	return err;
}
