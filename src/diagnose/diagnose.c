/*
 * diagnose.c - the root cause of a failed or hung run, from its ranks'
 * flight records (the format flight.c writes; ppcc_runtime(3)).
 *
 * The records are read whole first, every problem reported with its
 * FILE:LINE:COL (a rank or peer outside the job included), so that a
 * partial or damaged directory is described, never half-used.  Then the
 * cause, by sorting and indexes (O(n log n) in the n records, for jobs of
 * up to 2^20 ranks), in this order of precedence:
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
 * Ranks without a record are listed whatever the cause.
 */
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diagnose.h"

/* The largest job: as many ranks as plan and search take devices. */
#define DG_MAX_RANKS PPCC_MAX_COUNT
#define DG_TEXT 1024

typedef struct dg_act {
	int idx;
	char op[16];
	int stage, mb, peer;
	double t1, t2; /* start and end, or posted and done; -1: none */
} dg_act;

/* A peer a record names, where. */
typedef struct dg_peer {
	long long peer;
	int line, col;
} dg_peer;

typedef struct dg_rec {
	char *path;
	int rank, ranks;
	int rank_line, rank_col;
	long long pid;
	uint64_t fingerprint;
	char kind[32];
	int s_ranks, s_stages, s_mb, n_actions;
	char *covers;   /* at most DG_TEXT - 1 bytes, as cause */
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
	char *cause;
	int last_mb;
	int n_samples;
	long long sample_mb[32], sample_id[32]; /* the latest 32 */
	int n_acts, last_idx; /* action lines, the last one's index (-1) */
	/* checked against the job once every record is read: the largest
	 * peer named, and the smallest that a SEND or RECV names or that is
	 * below -1 (none) */
	int has_hi, has_lo;
	dg_peer peer_hi, peer_lo;
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
	dg_rec *recs;          /* by rank */
	int *missing, n_missing;
	const char *kind; /* mismatch, skip, failure, hang, dead, deadlock, none */
	int rank;         /* the rank the cause names, -1 none */
	char cause[4 * DG_TEXT];
	char **details;
	int n_details, cap_details;
	dg_wait *waits;
	int n_waits, cap_waits;
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
	errno = 0;
	double v = strtod(t, &end);
	/* NaN, an infinity and 1e400 (ERANGE) would make every duration
	 * derived from them meaningless */
	if (*end || errno == ERANGE || !(v >= 0 && v <= DBL_MAX)) {
		dg_err(r, t, "expected seconds for %s, got '%s'", what, t);
		return -1;
	}
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

static int dg_is_comm(const char *op)
{
	return strncmp(op, "SEND_", 5) == 0 || strncmp(op, "RECV_", 5) == 0;
}

/* "IDX OP STAGE MB PEER T1 [T2]"; the peer is noted in rec, to be
 * checked against the job's ranks (a->peer is only used once it is). */
static void dg_action(dg_reader *r, char **pos, dg_act *a, int two_times,
		      dg_rec *rec)
{
	a->idx = (int)dg_int(r, pos, "action index");
	dg_word(r, pos, a->op, sizeof a->op, "operation");
	a->stage = (int)dg_int(r, pos, "stage");
	a->mb = (int)dg_int(r, pos, "microbatch");
	long long peer = dg_int(r, pos, "peer");
	if (!r->bad) {
		dg_peer at = {peer, r->line, (int)(r->tok - r->cur) + 1};
		if (!rec->has_hi || peer > rec->peer_hi.peer)
			rec->peer_hi = at;
		if ((dg_is_comm(a->op) || peer < -1) &&
		    (!rec->has_lo || peer < rec->peer_lo.peer))
			rec->peer_lo = at;
		rec->has_lo |= dg_is_comm(a->op) || peer < -1;
		rec->has_hi = 1;
	}
	a->peer = peer < -1 || peer >= DG_MAX_RANKS ? -1 : (int)peer;
	a->t1 = dg_secs(r, pos, "a start time");
	a->t2 = two_times ? dg_secs(r, pos, "an end time") : -1;
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

/* A copy of s, cut at max bytes; NULL when out of memory. */
static char *dg_strndup(const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	char *c = ppcc_malloc(n + 1);
	if (c) {
		memcpy(c, s, n);
		c[n] = '\0';
	}
	return c;
}

/* Parses one record; 0, or -1 having reported, -2 out of memory (what
 * it holds freed by dg_rec_free in every case). */
static int dg_parse(dg_rec *rec, char *text, size_t n, const char *path,
		    ppcc_diag *d)
{
	dg_reader r = {path, 0, NULL, NULL, d, 0};
	int seen[K_REQUIRED] = {0}, ended = 0;
	char *p = text, *end = text + n;
	long long rank = -1, ranks = 0;
	memset(rec, 0, sizeof *rec);
	rec->last_idx = -1;
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
			dg_action(&r, &pos, &a, 1, rec);
			dg_end_of_line(&r, &pos);
			if (key[0] == 'a') {
				rec->n_acts++;
				rec->last_idx = a.idx;
			}
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
		case K_RANK:
			rank = dg_int(&r, &pos, "rank");
			rec->rank_line = r.line;
			rec->rank_col = (int)(r.tok - r.cur) + 1;
			break;
		case K_RANKS:
			ranks = dg_int(&r, &pos, "rank count");
			if (!r.bad && (ranks < 1 || ranks > DG_MAX_RANKS))
				dg_err(&r, r.tok, "a job of %lld ranks; ppcc diagnoses "
				       "jobs of 1 to %d ranks", ranks, DG_MAX_RANKS);
			break;
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
		case K_COVERS: {
			char covers[DG_TEXT];
			dg_word(&r, &pos, covers, sizeof covers, "microbatches");
			if (!(rec->covers = dg_strndup(covers, DG_TEXT - 1)))
				return -2;
			break;
		}
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
				dg_action(&r, &pos, &rec->current, 0, rec);
			} else {
				rec->has_failed = 1;
				dg_action(&r, &pos, &rec->failed, 0, rec);
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
			if (!(rec->cause = dg_strndup(pos, DG_TEXT - 1)))
				return -2;
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
	if (rank < 0 || rank >= ranks) {
		ppcc_loc loc = {path, rec->rank_line, rec->rank_col};
		ppcc_error(d, &loc, "rank %lld outside the job's %lld ranks", rank,
			   ranks);
		return -1;
	}
	rec->rank = (int)rank;
	rec->ranks = (int)ranks;
	return 0;
}

static void dg_rec_free(dg_rec *rec)
{
	ppcc_free(rec->path);
	ppcc_free(rec->covers);
	ppcc_free(rec->cause);
	memset(rec, 0, sizeof *rec);
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

/* By rank, then by file name (a second record of a rank is the later) */
static int dg_cmp_rank(const void *a, const void *b)
{
	const dg_rec *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->path, y->path);
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
	if (dg->n_details == dg->cap_details) {
		int cap = dg->cap_details ? 2 * dg->cap_details : 16;
		char **p = ppcc_realloc(dg->details, (size_t)cap * sizeof *p);
		if (!p)
			return;
		dg->details = p;
		dg->cap_details = cap;
	}
	char *copy = ppcc_malloc(strlen(line) + 1);
	if (!copy)
		return;
	strcpy(copy, line);
	dg->details[dg->n_details++] = copy;
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

/* The records sorted by a key (covers, or fingerprint), then by index:
 * records with equal keys form a run, in the order of the records. */
typedef struct dg_key {
	const char *covers;
	uint64_t fingerprint;
	int i;
} dg_key;

static int dg_cmp_covers(const void *a, const void *b)
{
	const dg_key *x = a, *y = b;
	int c = strcmp(x->covers, y->covers);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

static int dg_cmp_fingerprint(const void *a, const void *b)
{
	const dg_key *x = a, *y = b;
	if (x->fingerprint != y->fingerprint)
		return x->fingerprint < y->fingerprint ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

static int dg_same_key(const dg_key *x, const dg_key *y, int by_covers)
{
	return by_covers ? strcmp(x->covers, y->covers) == 0
			 : x->fingerprint == y->fingerprint;
}

/* One run of equal keys: k[start, start + len), its first record. */
typedef struct dg_group {
	int start, len, first;
} dg_group;

static int dg_cmp_group_first(const void *a, const void *b)
{
	const dg_group *x = a, *y = b;
	return (x->first > y->first) - (x->first < y->first);
}

/* Sorts k (n records) and fills groups with its runs, in the order of
 * their first records; returns the number of groups.  O(n log n). */
static int dg_group_by(dg_key *k, dg_group *groups, int n, int by_covers)
{
	qsort(k, (size_t)n, sizeof *k, by_covers ? dg_cmp_covers : dg_cmp_fingerprint);
	int ng = 0;
	for (int j = 0; j < n; j++) {
		if (j == 0 || !dg_same_key(&k[j - 1], &k[j], by_covers))
			groups[ng++] = (dg_group){j, 0, k[j].i};
		groups[ng - 1].len++;
	}
	qsort(groups, (size_t)ng, sizeof *groups, dg_cmp_group_first);
	return ng;
}

/* The largest group, the first met of equal ones. */
static const dg_group *dg_largest(const dg_group *groups, int ng)
{
	const dg_group *best = &groups[0];
	for (int g = 1; g < ng; g++)
		if (groups[g].len > best->len)
			best = &groups[g];
	return best;
}

static int dg_mismatch(ppcc_diagnosis *dg, const ppcc_schedule *sched,
		       const char *sched_name)
{
	int n = dg->n_records;
	if (n == 0)
		return 0;
	dg_key *k = ppcc_calloc((size_t)n, sizeof *k);
	dg_group *groups = ppcc_calloc((size_t)n, sizeof *groups);
	int *ranks = ppcc_calloc((size_t)n, sizeof *ranks); /* of k's records */
	int found = 0, err = 0;
	if (!k || !groups || !ranks) {
		err = PPCC_ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++)
		k[i] = (dg_key){dg->recs[i].covers, dg->recs[i].fingerprint, i};
	/* a rank whose list covers other microbatches than the most do */
	int ng = dg_group_by(k, groups, n, 1);
	for (int j = 0; j < n; j++)
		ranks[j] = dg->recs[k[j].i].rank;
	const dg_group *ref = dg_largest(groups, ng);
	const dg_rec *rr = &dg->recs[ref->first];
	char ol[DG_TEXT];
	dg_rank_list(ol, sizeof ol, ranks + ref->start, ref->len);
	int no = ref->len;
	for (int i = 0; ref->len < n && i < n; i++) {
		const dg_rec *x = &dg->recs[i];
		if (strcmp(x->covers, rr->covers) == 0)
			continue;
		int m = x->s_mb > rr->s_mb ? x->s_mb : rr->s_mb;
		unsigned char *a = ppcc_calloc((size_t)m + 1, 2);
		if (!a) {
			err = PPCC_ENOMEM;
			goto out;
		}
		dg_cover_set(rr->covers, m, a);
		dg_cover_set(x->covers, m, a + m);
		char skipped[DG_TEXT] = "", extra[DG_TEXT] = "";
		size_t ls = 0, le = 0;
		int ns = 0;
		for (int q = 0; q < m; q++) {
			if (a[q] && !a[m + q] && ls < sizeof skipped) {
				ls += (size_t)snprintf(skipped + ls, sizeof skipped - ls,
						       "%s%d", ls ? ", " : "", q);
				ns++;
			}
			if (!a[q] && a[m + q] && le < sizeof extra)
				le += (size_t)snprintf(extra + le, sizeof extra - le,
						       "%s%d", le ? ", " : "", q);
		}
		ppcc_free(a);
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
	/* fingerprints: against the file, or the largest group */
	ng = dg_group_by(k, groups, n, 0);
	for (int j = 0; j < n; j++)
		ranks[j] = dg->recs[k[j].i].rank;
	uint64_t want = 0;
	int have_want = 0;
	const dg_rec *wr = NULL; /* a record of the largest group */
	if (sched) {
		want = ppcc_schedule_fingerprint(sched);
		have_want = 1;
	} else {
		ref = dg_largest(groups, ng);
		if (ref->len < n) {
			wr = &dg->recs[ref->first];
			want = wr->fingerprint;
			have_want = 1;
		}
	}
	char refs[DG_TEXT] = "";
	for (int g = 0; wr && g < ng; g++)
		if (dg->recs[groups[g].first].fingerprint == want)
			dg_rank_list(refs, sizeof refs, ranks + groups[g].start,
				     groups[g].len);
	for (int g = 0; have_want && g < ng; g++) {
		const dg_rec *x = &dg->recs[groups[g].first];
		if (x->fingerprint == want)
			continue;
		char line[4 * DG_TEXT], who[DG_TEXT];
		int nw = groups[g].len;
		dg_rank_list(who, sizeof who, ranks + groups[g].start, nw);
		if (sched)
			snprintf(line, sizeof line, "%s hold%s schedule %016" PRIx64
				 " (%s, %d ranks, %d stages, %d microbatches), not %s's "
				 "%016" PRIx64 " (%s, %d ranks, %d stages, %d "
				 "microbatches)", who, nw == 1 ? "s" : "", x->fingerprint, x->kind,
				 x->s_ranks, x->s_stages, x->s_mb, sched_name, want,
				 ppcc_schedule_kind_name(sched->kind), (int)sched->n_ranks,
				 (int)sched->n_stages, (int)sched->n_microbatches);
		else
			snprintf(line, sizeof line, "the ranks hold different schedules: "
				 "%s ha%s %016" PRIx64 " (%s, %d ranks, %d stages, %d "
				 "microbatches), %s %016" PRIx64 " (%s, %d ranks, %d "
				 "stages, %d microbatches)", who, nw == 1 ? "s" : "ve",
				 x->fingerprint, x->kind, x->s_ranks, x->s_stages,
				 x->s_mb, refs, want, wr->kind, wr->s_ranks, wr->s_stages,
				 wr->s_mb);
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
	ppcc_free(k);
	ppcc_free(groups);
	ppcc_free(ranks);
	return err < 0 ? err : found;
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
	if (dg->n_waits == dg->cap_waits) {
		int cap = dg->cap_waits ? 2 * dg->cap_waits : 16;
		dg_wait *p = ppcc_realloc(dg->waits, (size_t)cap * sizeof *p);
		if (!p)
			return;
		dg->waits = p;
		dg->cap_waits = cap;
	}
	dg_wait *w = &dg->waits[dg->n_waits++];
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

/* Follows the wait-for graph from rank `from` (every peer is a rank of
 * the job, checked when read); fills the cause.  O(ranks). */
static int dg_follow(ppcc_diagnosis *dg, int from, const char *first)
{
	unsigned char *seen = ppcc_calloc((size_t)dg->n_ranks, 1);
	int *chain = ppcc_calloc((size_t)dg->n_ranks, sizeof *chain), n = 0;
	int cur = from;
	if (!seen || !chain) {
		ppcc_free(seen);
		ppcc_free(chain);
		return PPCC_ENOMEM;
	}
	while (cur >= 0 && cur < dg->n_ranks && !seen[cur]) {
		seen[cur] = 1;
		chain[n++] = cur;
		const dg_rec *x = dg->by_rank[cur];
		if (!x) {
			dg->kind = "dead";
			dg->rank = cur;
			snprintf(dg->cause, sizeof dg->cause, "rank %d wrote no flight "
				 "record (likely dead); %s", cur, first);
			goto out;
		}
		double until;
		const dg_act *a = dg_state(x, &until);
		if (!a) {
			dg->kind = "hang";
			dg->rank = cur;
			snprintf(dg->cause, sizeof dg->cause, "rank %d holds everyone up: "
				 "it is between actions (after action %d of %d, step "
				 "%lld); %s", cur, x->last_idx, x->n_actions, x->step, first);
			goto out;
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
		goto out;
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
out:
	ppcc_free(seen);
	ppcc_free(chain);
	return 0;
}

/* 0, or PPCC_ENOMEM. */
static int dg_analyse(ppcc_diagnosis *dg, const ppcc_schedule *sched,
		      const char *sched_name)
{
	int err;
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
	if ((err = dg_mismatch(dg, sched, sched_name)) < 0)
		return err;
	if (err)
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
			if ((err = dg_follow(dg, a->peer, line)) < 0)
				return err;
		} else {
			dg->kind = "failure";
			dg->rank = first->rank;
			snprintf(dg->cause, sizeof dg->cause, "rank %d failed first (%s) at "
				 "%s, step %lld: %s", first->rank, first->status_str, what,
				 first->step, reason);
		}
		int *stopped = ppcc_calloc((size_t)dg->n_records, sizeof *stopped), ns = 0;
		if (!stopped)
			return PPCC_ENOMEM;
		for (int i = 0; i < dg->n_records; i++)
			if (dg->recs[i].status == -22)
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
		ppcc_free(stopped);
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
		if ((err = dg_follow(dg, w->peer, line)) < 0)
			return err;
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
	return 0;
}

/* ---- the entry points ------------------------------------------------------------ */

void ppcc_diagnosis_free(ppcc_diagnosis *dg)
{
	if (!dg)
		return;
	for (int i = 0; i < dg->n_records; i++) {
		dg_rec_free(&dg->recs[i]);
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

int ppcc_diagnose_is_record_name(const char *name)
{
	size_t len = strlen(name);
	return strncmp(name, "rank-", 5) == 0 && len >= 13 &&
	       strcmp(name + len - 7, ".flight") == 0;
}

int ppcc_diagnose(ppcc_diagnosis **out, const char *dir,
		  const ppcc_schedule *sched, const char *sched_name,
		  ppcc_diag *d)
{
	int err = 0, n_names = 0, cap_names = 0;
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
		if (!ppcc_diagnose_is_record_name(e->d_name))
			continue;
		if (n_names == cap_names) {
			int cap = cap_names ? 2 * cap_names : 64;
			char **nn = ppcc_realloc(names, (size_t)cap * sizeof *nn);
			if (!nn) {
				err = PPCC_ENOMEM;
				break;
			}
			names = nn;
			cap_names = cap;
		}
		char *path = ppcc_malloc(strlen(dir) + strlen(e->d_name) + 2);
		if (!path) {
			err = PPCC_ENOMEM;
			break;
		}
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
		if (pe < 0)
			dg_rec_free(x);
		if (pe == -2) {
			err = PPCC_ENOMEM;
			break;
		}
		if (pe < 0) {
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
	/* the records in rank order (file names sort so only up to 99999) */
	qsort(dg->recs, (size_t)dg->n_records, sizeof *dg->recs, dg_cmp_rank);
	/* ranks: the largest count any record or the schedule gives */
	for (int i = 0; i < dg->n_records; i++)
		if (dg->recs[i].ranks > dg->n_ranks)
			dg->n_ranks = dg->recs[i].ranks;
	if (sched && sched->n_ranks > dg->n_ranks)
		dg->n_ranks = sched->n_ranks;
	/* every peer a rank of the job (or -1, none, for a compute) */
	for (int i = 0; i < dg->n_records; i++) {
		const dg_rec *x = &dg->recs[i];
		const dg_peer *p = x->has_hi && x->peer_hi.peer >= dg->n_ranks ? &x->peer_hi
				 : x->has_lo && x->peer_lo.peer < 0 ? &x->peer_lo : NULL;
		if (p) {
			ppcc_loc loc = {x->path, p->line, p->col};
			ppcc_error(d, &loc, "peer %lld outside the job's %d ranks",
				   p->peer, dg->n_ranks);
			err = PPCC_EINPUT;
		}
	}
	if (err < 0)
		goto out;
	dg->by_rank = ppcc_calloc((size_t)dg->n_ranks, sizeof *dg->by_rank);
	dg->missing = ppcc_calloc((size_t)dg->n_ranks, sizeof *dg->missing);
	if (!dg->by_rank || !dg->missing) {
		err = PPCC_ENOMEM;
		goto out;
	}
	for (int i = 0; i < dg->n_records; i++) {
		dg_rec *x = &dg->recs[i];
		if (dg->by_rank[x->rank]) {
			ppcc_loc loc = {x->path, x->rank_line, 1};
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
	err = dg_analyse(dg, sched, sched_name);
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
