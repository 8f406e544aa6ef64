/*
 * read_json.c - a "ppcc-schedule" JSON document back into a plan, read as
 * a stream.
 *
 * yajl parses the file a block at a time and calls back for each token;
 * nothing of the document is kept but what the plan needs: the header's
 * scalars, one record per stage, and the actions, 24 bytes each, gathered
 * per rank in blocks and moved into the arena when the rank ends.  So
 * memory is the plan's plus a constant, whatever the file's size.
 *
 * The checks are those of the whole-document reader this replaced, with
 * the same messages in the same order: every required key present with
 * the right type, every integer in range, counts consistent with each
 * other, so that what it returns can be handed to the validator without
 * out-of-bounds reads.  Keys may come in any order, so the checks of an
 * object run when it ends, and the errors of the partition and the ranks
 * are held back until the header is known to be good (a bad header is
 * reported alone).  Whether the schedule is *correct* (dependencies,
 * matching sends, no deadlock) is the validator's business.  Errors name
 * the key path, e.g. `ranks[2].actions[5].op: unknown op 'X'`; the
 * header's are also placed at their value's line and column (a missing
 * key at the document's '{'), those of partition and ranks entries not.
 *
 * What the document may be, beyond the grammar (yajl's, with UTF-8
 * checked): its top level an object or an array; no key twice in one
 * object; no NUL in a string; integers within 64 bits and reals finite;
 * at most RJ_MAX_DEPTH arrays and objects open; at most PPCC_JSON_MAX_BYTES
 * bytes and RJ_MAX_VALUES values.  A violation stops the reading with one
 * error at its line and column, as a syntax error does.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <yajl/yajl_parse.h>

#include "ppcc.h"

#define RJ_MAX_DEPTH 2048
#define RJ_MAX_VALUES ((uint64_t)1 << 33)
#define RJ_BLOCK (1 << 18)          /* bytes read at a time */
#define RJ_ACTION_BLOCK (1 << 15)   /* actions gathered per block */
#define RJ_MAX_STAGE_ENTRIES (1 << 26) /* > 65536 ranks x 1024 chunks */
#define RJ_MAX_RANK_ENTRIES (1 << 16)
#define RJ_MAX_HELD_ERRORS 10000    /* per section, then counted */

/* ---- values as the checks see them ----------------------------------- */

enum { T_NONE, T_OBJECT, T_ARRAY, T_STRING, T_INTEGER, T_REAL, T_TRUE,
       T_FALSE, T_NULL };

typedef struct field {
	int type;
	int64_t i;
	double d;
	const char *s; /* T_STRING: NUL-terminated (NULs are refused) */
} field;

/* ---- the reader -------------------------------------------------------- */

/* What a container on the stack is. */
enum { C_SKIP, C_ROOT, C_LAYERS, C_PARTITION, C_STAGE, C_RANKS, C_RANK,
       C_ACTIONS, C_ACTION };

/* Known keys, per context: duplicates are caught by a bit each, the rest
 * of the keys by the hash of open objects' keys. */
enum { K_UNKNOWN = -1 };
enum { R_FORMAT, R_VERSION, R_GENERATOR, R_MODEL, R_SCHEDULE, R_STAGES,
       R_CHUNKS, R_VSTAGES, R_MICRO, R_FINGERPRINT, R_LAYERS, R_PARTITION,
       R_RANKS, R_ESTIMATE, R_BASELINE, R_N };
enum { S_STAGE, S_RANK, S_CHUNK, S_FIRST, S_LAST, S_RECV, S_SEND, S_FWD,
       S_BWD, S_SENDF, S_SENDB, S_STATIC, S_STASH, S_BWDW, S_WSTASH,
       S_EPF, S_EPB, S_EPH, S_N };
enum { K_RANK, K_ACTIONS, K_BUSY, K_COMM, K_IDLE, K_PEAK, K_N };
enum { A_OP, A_STAGE, A_MB, A_PEER, A_BYTES, A_START, A_END, A_N };

typedef struct key_name {
	const char *name;
	size_t len;
} key_name;
#define KEY(s) {s, sizeof s - 1}

static const key_name root_keys[R_N] = {
	KEY("format"),
	KEY("version"),
	KEY("generator"),
	KEY("model"),
	KEY("schedule"),
	KEY("stages"),
	KEY("chunks"),
	KEY("virtual_stages"),
	KEY("microbatches"),
	KEY("fingerprint"),
	KEY("layers"),
	KEY("partition"),
	KEY("ranks"),
	KEY("estimate"),
	KEY("baseline"),
};
static const key_name stage_keys[S_N] = {
	KEY("stage"),
	KEY("rank"),
	KEY("chunk"),
	KEY("first_layer"),
	KEY("last_layer"),
	KEY("recv_bytes"),
	KEY("send_bytes"),
	KEY("fwd_ms"),
	KEY("bwd_ms"),
	KEY("send_f_ms"),
	KEY("send_b_ms"),
	KEY("static_bytes"),
	KEY("stash_bytes"),
	KEY("bwd_weight_ms"),
	KEY("stash_weight_bytes"),
	KEY("ep_fwd_ms"),
	KEY("ep_bwd_ms"),
	KEY("ep_hidden_share"),
};
static const key_name rank_keys[K_N] = {
	KEY("rank"),
	KEY("actions"),
	KEY("busy_ms"),
	KEY("comm_ms"),
	KEY("idle_ms"),
	KEY("peak_memory_bytes"),
};

typedef struct frame {
	int ctx;
	int is_object;
	int key;            /* the key whose value comes next, or K_UNKNOWN */
	uint32_t seen;      /* known keys met */
	size_t key_base;    /* first entry of this object in the key stack */
	int64_t index;      /* elements so far (arrays) */
} frame;

/* One key of an open object, for duplicates among the unknown keys. */
typedef struct key_entry {
	uint64_t hash;
	size_t off, len;     /* in key_pool */
	size_t next;         /* entry + 1 in the same bucket, 0 at the end */
	size_t object;       /* key_base of its object */
} key_entry;

/* Messages held back (see the top), in order. */
typedef struct held {
	char **msg;
	size_t n, cap;
	uint64_t dropped;
} held;

typedef struct action_block {
	struct action_block *next;
	ppcc_action a[RJ_ACTION_BLOCK];
} action_block;

typedef struct rank_entry {
	field rank;
	field actions_f;    /* its type only */
	int32_t n_actions;
	ppcc_action *actions;
} rank_entry;

typedef struct stage_entry {
	int is_object;
	ppcc_stage_info st;
	ppcc_stage_cost c;
} stage_entry;

typedef struct reader {
	ppcc_diag *d;
	ppcc_arena *a;
	ppcc_loc loc;       /* the file, no position */
	int bad;
	int oom;
	/* a stop: the message, reported at the position yajl stopped */
	char stop[160];
	int stopped;
	uint64_t values;

	frame stack[RJ_MAX_DEPTH + 1];
	int depth;          /* frames on the stack */
	int top_type;       /* the document's own type */

	/* keys of open objects */
	key_entry *keys;
	size_t n_keys, cap_keys;
	size_t *buckets;    /* entry + 1, 0 for none */
	size_t n_buckets;
	char *key_pool;
	size_t pool_len, pool_cap;

	/* where yajl is: the block it parses, and the line and column of
	 * its first byte (blk NULL while it finishes, past the last) */
	yajl_handle h;
	const char *blk;
	long blk_line, blk_col;

	/* the header, and where each of its values begins in the file
	 * (top_at: the document's own '{' or '[') */
	field root[R_N];
	ppcc_loc root_at[R_N];
	ppcc_loc top_at;

	/* layers: names, gathered */
	const char **names;
	size_t n_names, cap_names;

	/* partition */
	stage_entry *stages;
	size_t n_stages, cap_stages;
	int64_t partition_entries;
	field sf[S_N];      /* the stage object being read */
	held part_msgs;

	/* ranks */
	rank_entry *ranks;
	size_t n_ranks, cap_ranks;
	int64_t rank_entries;
	rank_entry cur_rank;
	size_t rank_msgs_at; /* where the current rank's own errors go */
	held rank_msgs;
	field af[A_N];      /* the action being read */
	char op_text[48];
	int op_long;
	action_block *blocks, *last_block;
	int64_t n_actions;  /* of the current rank */
	int64_t rank_index;
} reader;

static int oom(reader *rd)
{
	rd->oom = 1;
	return 0;
}

static int stop(reader *rd, const char *fmt, ...) PPCC_PRINTF(2, 3);
static int stop(reader *rd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rd->stop, sizeof rd->stop, fmt, ap);
	va_end(ap);
	rd->stopped = 1;
	return 0;
}

/* ---- held messages ---------------------------------------------------- */

static int held_insert(reader *rd, held *h, size_t at, const char *path,
		       const char *what)
{
	if (h->n >= RJ_MAX_HELD_ERRORS) {
		h->dropped++;
		return 1;
	}
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		char **m = ppcc_realloc(h->msg, cap * sizeof *m);
		if (!m)
			return oom(rd);
		h->msg = m;
		h->cap = cap;
	}
	size_t len = strlen(path) + strlen(what) + 3;
	char *s = ppcc_malloc(len);
	if (!s)
		return oom(rd);
	snprintf(s, len, "%s: %s", path, what);
	memmove(h->msg + at + 1, h->msg + at, (h->n - at) * sizeof *h->msg);
	h->msg[at] = s;
	h->n++;
	return 1;
}

static void held_free(held *h)
{
	for (size_t i = 0; i < h->n; i++)
		ppcc_free(h->msg[i]);
	ppcc_free(h->msg);
	memset(h, 0, sizeof *h);
}

/* Reports what h holds; counts as bad. */
static void held_report(reader *rd, held *h, const char *section)
{
	for (size_t i = 0; i < h->n; i++) {
		ppcc_error(rd->d, &rd->loc, "%s", h->msg[i]);
		rd->bad = 1;
	}
	if (h->dropped) {
		ppcc_error(rd->d, &rd->loc, "%s: %" PRIu64 " more errors not shown",
			   section, h->dropped);
		rd->bad = 1;
	}
}

/* ---- checks on collected objects (the messages of the tree reader) ---- */

/* A key path, spelled out only for a complaint. */
enum { P_TOP, P_STAGE, P_RANK, P_ACTION, P_TEXT };
typedef struct pathref {
	int kind;
	int64_t i, j;
	const char *text; /* P_TEXT */
} pathref;

static const char *path_text(char *buf, size_t cap, const pathref *p)
{
	switch (p->kind) {
	case P_STAGE: snprintf(buf, cap, "partition[%" PRId64 "]", p->i); break;
	case P_RANK: snprintf(buf, cap, "ranks[%" PRId64 "]", p->i); break;
	case P_ACTION:
		snprintf(buf, cap, "ranks[%" PRId64 "].actions[%" PRId64 "]",
			 p->i, p->j);
		break;
	case P_TEXT: snprintf(buf, cap, "%s", p->text); break;
	default: buf[0] = '\0';
	}
	return buf;
}

/* Where a check's complaint goes: reported now, or held. */
typedef struct sink {
	reader *rd;
	held *h;        /* NULL: report now */
	size_t *at;     /* insertion point in h, advanced; NULL: append */
	const ppcc_loc *loc; /* reported now: where; NULL: the file alone */
} sink;

static void complain(sink *k, const char *path, const char *what)
{
	reader *rd = k->rd;
	if (!k->h) {
		ppcc_error(rd->d, k->loc ? k->loc : &rd->loc, "%s: %s", path, what);
		rd->bad = 1;
		return;
	}
	size_t at = k->at ? *k->at : k->h->n;
	size_t before = k->h->n;
	held_insert(rd, k->h, at, path, what);
	if (k->at && k->h->n > before)
		(*k->at)++;
}

static void where_text(char *where, size_t cap, const pathref *pr,
		       const char *key)
{
	char path[128];
	path_text(path, sizeof path, pr);
	snprintf(where, cap, "%s%s%s", path, *path ? "." : "", key);
}

static const field *member(sink *k, const field *f, const pathref *pr,
			   const char *key, int type)
{
	char where[256];
	if (f->type == type || (type == T_REAL && f->type == T_INTEGER))
		return f;
	where_text(where, sizeof where, pr, key);
	if (f->type == T_NONE) {
		complain(k, where, "missing");
		return NULL;
	}
	{
		static const char *const names[] = {
			[T_OBJECT] = "an object", [T_ARRAY] = "an array",
			[T_STRING] = "a string", [T_INTEGER] = "an integer",
			[T_REAL] = "a number", [T_TRUE] = "a boolean",
			[T_FALSE] = "a boolean", [T_NULL] = "null",
		};
		char msg[64];
		snprintf(msg, sizeof msg, "expected %s", names[type]);
		complain(k, where, msg);
		return NULL;
	}
	return f;
}

/* An integer member in [lo, hi]; returns lo on error. */
static int64_t int_member(sink *k, const field *f, const pathref *pr,
			  const char *key, int64_t lo, int64_t hi)
{
	if (!member(k, f, pr, key, T_INTEGER))
		return lo;
	int64_t x = f->i;
	if (x < lo || x > hi) {
		char where[256], msg[96];
		where_text(where, sizeof where, pr, key);
		snprintf(msg, sizeof msg, "%lld is out of range [%lld, %lld]",
			 (long long)x, (long long)lo, (long long)hi);
		complain(k, where, msg);
		return lo;
	}
	return x;
}

static double real_member(sink *k, const field *f, const pathref *pr,
			  const char *key)
{
	const field *v = member(k, f, pr, key, T_REAL);
	double x = v ? (v->type == T_INTEGER ? (double)v->i : v->d) : 0;
	if (v && (!isfinite(x) || x < 0)) {
		char where[256], path[128];
		snprintf(where, sizeof where, "%s.%s",
			 path_text(path, sizeof path, pr), key);
		complain(k, where, "expected a finite number >= 0");
		return 0;
	}
	return x;
}

/* The next entry of the stage table, zeroed; NULL when out of memory
 * (reported).  The caller has checked RJ_MAX_STAGE_ENTRIES. */
static stage_entry *stage_append(reader *rd)
{
	if (rd->n_stages == rd->cap_stages) {
		size_t cap = rd->cap_stages ? 2 * rd->cap_stages : 64;
		stage_entry *s = ppcc_realloc(rd->stages, cap * sizeof *s);
		if (!s) {
			oom(rd);
			return NULL;
		}
		rd->stages = s;
		rd->cap_stages = cap;
	}
	stage_entry *e = &rd->stages[rd->n_stages++];
	memset(e, 0, sizeof *e);
	return e;
}

/* A stage object has ended: its checks, and its record. */
static int stage_done(reader *rd)
{
	int64_t i = rd->partition_entries++;
	if (rd->n_stages >= RJ_MAX_STAGE_ENTRIES)
		return 1; /* more than any header allows: the count will say */
	stage_entry *e = stage_append(rd);
	if (!e)
		return 0;
	e->is_object = 1;
	sink k = {rd, &rd->part_msgs, NULL, NULL};
	char text[64];
	pathref pr = {P_STAGE, i, 0, NULL};
	const pathref *path = &pr;
	const field *f = rd->sf;
	ppcc_stage_info *st = &e->st;
	ppcc_stage_cost *c = &e->c;
	st->stage = (int32_t)int_member(&k, &f[S_STAGE], path, "stage", 0, INT32_MAX);
	st->rank = (int32_t)int_member(&k, &f[S_RANK], path, "rank", 0, INT32_MAX);
	st->chunk = (int32_t)int_member(&k, &f[S_CHUNK], path, "chunk", 0, INT32_MAX);
	st->first_layer = (int32_t)int_member(&k, &f[S_FIRST], path, "first_layer", 0, INT32_MAX);
	st->last_layer = (int32_t)int_member(&k, &f[S_LAST], path, "last_layer", 0, INT32_MAX - 1);
	st->recv_bytes = (uint64_t)int_member(&k, &f[S_RECV], path, "recv_bytes", 0, INT64_MAX);
	st->send_bytes = (uint64_t)int_member(&k, &f[S_SEND], path, "send_bytes", 0, INT64_MAX);
	if (st->first_layer > st->last_layer)
		complain(&k, path_text(text, sizeof text, path),
			 "first_layer is after last_layer");
	c->fwd_ms = real_member(&k, &f[S_FWD], path, "fwd_ms");
	c->bwd_ms = real_member(&k, &f[S_BWD], path, "bwd_ms");
	/* Optional: W's part, written for kinds that split the backward;
	 * else half of it. */
	c->bwd_weight_ms = c->bwd_ms / 2;
	if (f[S_BWDW].type != T_NONE) {
		c->bwd_weight_ms = real_member(&k, &f[S_BWDW], path, "bwd_weight_ms");
		if (c->bwd_weight_ms > c->bwd_ms)
			complain(&k, path_text(text, sizeof text, path),
				 "bwd_weight_ms is more than bwd_ms");
	}
	c->bwd_input_ms = c->bwd_ms - c->bwd_weight_ms;
	/* Optional: absent in hand-written schedules. */
	if (f[S_SENDF].type != T_NONE)
		c->send_f_ms = real_member(&k, &f[S_SENDF], path, "send_f_ms");
	if (f[S_SENDB].type != T_NONE)
		c->send_b_ms = real_member(&k, &f[S_SENDB], path, "send_b_ms");
	if (f[S_STATIC].type != T_NONE)
		c->static_bytes = real_member(&k, &f[S_STATIC], path, "static_bytes");
	if (f[S_STASH].type != T_NONE)
		c->stash_bytes = real_member(&k, &f[S_STASH], path, "stash_bytes");
	/* Optional: absent, W holds all of the stash */
	if (f[S_WSTASH].type != T_NONE)
		c->stash_input_bytes = c->stash_bytes -
			real_member(&k, &f[S_WSTASH], path, "stash_weight_bytes");
	/* Optional: an overlapped pair's all-to-alls (ppcc_pair_ms) */
	if (f[S_EPF].type != T_NONE)
		c->ep_fwd_ms = real_member(&k, &f[S_EPF], path, "ep_fwd_ms");
	if (f[S_EPB].type != T_NONE)
		c->ep_bwd_ms = real_member(&k, &f[S_EPB], path, "ep_bwd_ms");
	if (f[S_EPH].type != T_NONE) {
		c->ep_hidden_share = real_member(&k, &f[S_EPH], path,
						 "ep_hidden_share");
		if (c->ep_hidden_share > 1)
			complain(&k, path_text(text, sizeof text, path),
				 "ep_hidden_share is more than 1");
	}
	if (c->ep_fwd_ms > c->fwd_ms || c->ep_bwd_ms > c->bwd_ms)
		complain(&k, path_text(text, sizeof text, path),
			 "ep_fwd_ms or ep_bwd_ms is more than the time it is "
			 "part of");
	return !rd->oom;
}

/* An element of partition that is not an object. */
static int stage_not_object(reader *rd)
{
	int64_t i = rd->partition_entries++;
	if (rd->n_stages >= RJ_MAX_STAGE_ENTRIES)
		return 1;
	if (!stage_append(rd))
		return 0;
	char path[64];
	pathref pr = {P_STAGE, i, 0, NULL};
	sink k = {rd, &rd->part_msgs, NULL, NULL};
	complain(&k, path_text(path, sizeof path, &pr), "expected an object");
	return !rd->oom;
}

/* ---- actions ------------------------------------------------------------ */

static ppcc_action *action_slot(reader *rd)
{
	int64_t at = rd->n_actions % RJ_ACTION_BLOCK;
	if (at == 0) {
		action_block *b = ppcc_malloc(sizeof *b);
		if (!b)
			return NULL;
		b->next = NULL;
		if (rd->last_block)
			rd->last_block->next = b;
		else
			rd->blocks = b;
		rd->last_block = b;
	}
	return &rd->last_block->a[at];
}

static void blocks_free(reader *rd)
{
	for (action_block *b = rd->blocks, *n; b; b = n) {
		n = b->next;
		ppcc_free(b);
	}
	rd->blocks = rd->last_block = NULL;
}

static inline int same_bytes(const char *a, const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != (char)b[i])
			return 0;
	return 1;
}

static inline int known_key(const key_name *keys, int n, const unsigned char *k,
			    size_t len)
{
	for (int i = 0; i < n; i++)
		if (keys[i].len == len && same_bytes(keys[i].name, k, len))
			return i;
	return K_UNKNOWN;
}

/* The op named by the n bytes at t (not NUL-terminated), or -1: the slot
 * (first + 4 last + n) mod 32 of its first and last letters and length
 * is distinct for each name, so one comparison, with no branch on which
 * op it may be. */
#define OP_SLOT(first, last, n) (((first) + 4 * (last) + (n)) & 31)
static inline int op_of(const unsigned char *t, size_t n)
{
	/* 1 + the op (a slot given twice would be -Woverride-init's
	 * warning), 0 for none */
	static const int8_t slots[32] = {
		[OP_SLOT('F', 'F', 1)] = 1 + PPCC_OP_F,
		[OP_SLOT('B', 'B', 1)] = 1 + PPCC_OP_B,
		[OP_SLOT('I', 'I', 1)] = 1 + PPCC_OP_I,
		[OP_SLOT('W', 'W', 1)] = 1 + PPCC_OP_W,
		[OP_SLOT('S', 'F', 6)] = 1 + PPCC_OP_SEND_F,
		[OP_SLOT('R', 'F', 6)] = 1 + PPCC_OP_RECV_F,
		[OP_SLOT('S', 'B', 6)] = 1 + PPCC_OP_SEND_B,
		[OP_SLOT('R', 'B', 6)] = 1 + PPCC_OP_RECV_B,
		[OP_SLOT('O', 'B', 11)] = 1 + PPCC_OP_OVERLAP_F_B,
		[OP_SLOT('R', 'D', 11)] = 1 + PPCC_OP_REDUCE_GRAD,
		[OP_SLOT('R', 'D', 19)] = 1 + PPCC_OP_REDUCE_SCATTER_GRAD,
		[OP_SLOT('A', 'M', 16)] = 1 + PPCC_OP_ALL_GATHER_PARAM,
		[OP_SLOT('U', 'M', 13)] = 1 + PPCC_OP_UNSHARD_PARAM,
	};
	if (n == 0 || n > 19)
		return -1;
	int op = slots[OP_SLOT(t[0], t[n - 1], n)] - 1;
	/* the name in the op table (diag.c), as long as t (strnlen reads
	 * no further than its end; t may hold a NUL) */
	const char *name = op >= 0 ? ppcc_op_table[op].name : NULL;
	return name && strnlen(name, n + 1) == n && same_bytes(name, t, n) ? op : -1;
}

/* ppcc_op_parse, without a call to strcmp per name */
static int op_parse(const char *t)
{
	int k = op_of((const unsigned char *)t, strlen(t));
	return k < 0 ? ppcc_op_parse(t) : k;
}

static int action_done(reader *rd, int is_object)
{
	if (rd->n_actions >= INT32_MAX)
		return stop(rd, "ranks[%" PRId64 "].actions: more than %d actions",
			    rd->rank_index, INT32_MAX);
	int keep = rd->rank_index < RJ_MAX_RANK_ENTRIES;
	ppcc_action dummy, *act = keep ? action_slot(rd) : &dummy;
	if (!act)
		return oom(rd);
	int64_t at = rd->n_actions++;
	const field *f = rd->af;
	/* what ppcc writes: every field there, in range (the op's string
	 * was looked up as it came, in af[A_OP].i) */
	int op = is_object && f[A_OP].type == T_STRING ? (int)f[A_OP].i : -1;
	int comm = ppcc_op_is_comm(op) || ppcc_op_is_collective(op);
	if (op >= 0 && f[A_STAGE].type == T_INTEGER && f[A_MB].type == T_INTEGER &&
	    f[A_STAGE].i >= INT32_MIN && f[A_STAGE].i <= INT32_MAX &&
	    f[A_MB].i >= INT32_MIN && f[A_MB].i <= INT32_MAX &&
	    (!comm ||
	     (f[A_PEER].type == T_INTEGER && f[A_BYTES].type == T_INTEGER &&
	      f[A_PEER].i >= INT32_MIN && f[A_PEER].i <= INT32_MAX &&
	      f[A_BYTES].i >= 0))) {
		*act = (ppcc_action){
			.op = op,
			.stage = (int32_t)f[A_STAGE].i,
			.mb = (int32_t)f[A_MB].i,
			.peer = comm ? (int32_t)f[A_PEER].i : -1,
			.bytes = comm ? (uint64_t)f[A_BYTES].i : 0,
		};
		return 1;
	}
	memset(act, 0, sizeof *act);
	pathref pr = {P_ACTION, rd->rank_index, at, NULL};
	const pathref *path = &pr;
	char text[96];
	sink k = {rd, &rd->rank_msgs, NULL, NULL};
	if (!is_object) {
		complain(&k, path_text(text, sizeof text, path), "expected an object");
		return !rd->oom;
	}
	if (member(&k, &f[A_OP], path, "op", T_STRING)) {
		act->op = op;
		if (act->op < 0) {
			char msg[200];
			snprintf(msg, sizeof msg, "unknown op '%.40s' (F, B, I, W, "
				 "SEND_F, RECV_F, SEND_B, RECV_B, OVERLAP_F_B, "
				 "REDUCE_GRAD, REDUCE_SCATTER_GRAD, "
				 "ALL_GATHER_PARAM or UNSHARD_PARAM)",
				 rd->op_text);
			char where[128];
			snprintf(where, sizeof where, "%s.op",
				 path_text(text, sizeof text, path));
			complain(&k, where, msg);
			act->op = 0;
		}
	}
	act->stage = (int32_t)int_member(&k, &f[A_STAGE], path, "stage", INT32_MIN, INT32_MAX);
	act->mb = (int32_t)int_member(&k, &f[A_MB], path, "mb", INT32_MIN, INT32_MAX);
	act->peer = -1;
	if (ppcc_op_is_comm(act->op) || ppcc_op_is_collective(act->op)) {
		act->peer = (int32_t)int_member(&k, &f[A_PEER], path, "peer", INT32_MIN, INT32_MAX);
		act->bytes = (uint64_t)int_member(&k, &f[A_BYTES], path, "bytes", 0, INT64_MAX);
	}
	return !rd->oom;
}

/* The actions gathered for the current rank, into one arena array. */
static int actions_done(reader *rd)
{
	if (rd->rank_index >= RJ_MAX_RANK_ENTRIES) {
		rd->n_actions = 0;
		return 1;
	}
	size_t n = (size_t)rd->n_actions;
	ppcc_action *all = ppcc_arena_alloc(rd->a, n ? n : 1, sizeof *all);
	if (!all)
		return oom(rd);
	size_t at = 0;
	for (action_block *b = rd->blocks; b && at < n; b = b->next) {
		size_t k = n - at < RJ_ACTION_BLOCK ? n - at : RJ_ACTION_BLOCK;
		memcpy(all + at, b->a, k * sizeof *all);
		at += k;
	}
	blocks_free(rd);
	rd->cur_rank.actions = all;
	rd->cur_rank.n_actions = (int32_t)n;
	rd->n_actions = 0;
	return 1;
}

static void rank_begin(reader *rd)
{
	memset(&rd->cur_rank, 0, sizeof rd->cur_rank);
	rd->rank_msgs_at = rd->rank_msgs.n;
	rd->n_actions = 0;
}

/* A rank object has ended: its own checks go before its actions'. */
static int rank_done(reader *rd, int is_object)
{
	int64_t r = rd->rank_entries++;
	rd->rank_index = rd->rank_entries;
	pathref pr = {P_RANK, r, 0, NULL};
	const pathref *path = &pr;
	char text[64];
	sink k = {rd, &rd->rank_msgs, &rd->rank_msgs_at, NULL};
	if (!is_object) {
		k.at = NULL;
		complain(&k, path_text(text, sizeof text, path), "expected an object");
		memset(&rd->cur_rank, 0, sizeof rd->cur_rank);
	} else {
		/* the rank's index bounds it; keep the tree reader's
		 * message, which names r as both ends */
		int_member(&k, &rd->cur_rank.rank, path, "rank", r, r);
		member(&k, &rd->cur_rank.actions_f, path, "actions", T_ARRAY);
	}
	if (r >= RJ_MAX_RANK_ENTRIES)
		return !rd->oom;
	if (rd->n_ranks == rd->cap_ranks) {
		size_t cap = rd->cap_ranks ? 2 * rd->cap_ranks : 64;
		rank_entry *e = ppcc_realloc(rd->ranks, cap * sizeof *e);
		if (!e)
			return oom(rd);
		rd->ranks = e;
		rd->cap_ranks = cap;
	}
	rd->ranks[rd->n_ranks++] = rd->cur_rank;
	return !rd->oom;
}

/* ---- keys ------------------------------------------------------------- */


static int rehash(reader *rd, size_t n_buckets)
{
	size_t *b = ppcc_calloc(n_buckets, sizeof *b);
	if (!b)
		return oom(rd);
	ppcc_free(rd->buckets);
	rd->buckets = b;
	rd->n_buckets = n_buckets;
	for (size_t e = 0; e < rd->n_keys; e++) {
		size_t slot = rd->keys[e].hash & (n_buckets - 1);
		rd->keys[e].next = b[slot];
		b[slot] = e + 1;
	}
	return 1;
}

/* Adds an unknown key of the object on top; 0 with a stop if it is there
 * already. */
static int key_add(reader *rd, const frame *fr, const unsigned char *k,
		   size_t len)
{
	uint64_t h = ppcc_fnv1a(PPCC_FNV1A_BASIS, k, len) ^
		     (uint64_t)fr->key_base * 0x9e3779b97f4a7c15ull;
	if (!rd->buckets && !rehash(rd, 64))
		return 0;
	for (size_t e = rd->buckets[h & (rd->n_buckets - 1)]; e; e = rd->keys[e - 1].next) {
		const key_entry *x = &rd->keys[e - 1];
		if (x->hash == h && x->object == fr->key_base && x->len == len &&
		    memcmp(rd->key_pool + x->off, k, len) == 0)
			return stop(rd, "duplicate object key near '\"%.*s\"'",
				    len > 64 ? 64 : (int)len, (const char *)k);
	}
	if (rd->n_keys == rd->cap_keys) {
		size_t cap = rd->cap_keys ? 2 * rd->cap_keys : 64;
		key_entry *x = ppcc_realloc(rd->keys, cap * sizeof *x);
		if (!x)
			return oom(rd);
		rd->keys = x;
		rd->cap_keys = cap;
	}
	/* the pool exists once a key is in the table, even an empty one:
	 * the comparison above never offsets or passes a null pointer */
	if (!rd->key_pool || rd->pool_len + len > rd->pool_cap) {
		size_t cap = rd->pool_cap ? 2 * rd->pool_cap : 1024;
		while (cap < rd->pool_len + len)
			cap *= 2;
		char *p = ppcc_realloc(rd->key_pool, cap);
		if (!p)
			return oom(rd);
		rd->key_pool = p;
		rd->pool_cap = cap;
	}
	memcpy(rd->key_pool + rd->pool_len, k, len);
	size_t slot = h & (rd->n_buckets - 1);
	rd->keys[rd->n_keys] = (key_entry){h, rd->pool_len, len,
					   rd->buckets[slot], fr->key_base};
	rd->buckets[slot] = ++rd->n_keys;
	rd->pool_len += len;
	if (rd->n_keys > 2 * rd->n_buckets)
		return rehash(rd, 4 * rd->n_buckets);
	return 1;
}

/* The object on top has ended: its unknown keys leave the table, latest
 * first, each the head of its bucket. */
static void keys_pop(reader *rd, const frame *fr)
{
	while (rd->n_keys > fr->key_base) {
		key_entry *x = &rd->keys[--rd->n_keys];
		rd->buckets[x->hash & (rd->n_buckets - 1)] = x->next;
		rd->pool_len = x->off;
	}
}

/* ---- where a header value is ------------------------------------------ */

static void position(ppcc_loc *loc, const char *buf, size_t at, long line,
		     long col);

/* Where the value yajl has just read begins: its token ends where yajl
 * has got to in the block; n is a number's length.  A token holds no
 * newline, so one begun in an earlier block is that many columns before
 * the block's start (a string's length there is not known: at the
 * block's start).  O(the block), so for the header's few values only. */
static void value_loc(reader *rd, ppcc_loc *out, int type, size_t n)
{
	*out = rd->loc;
	if (!rd->blk) {
		out->line = (int)rd->blk_line;
		out->col = (int)rd->blk_col;
		return;
	}
	size_t end = yajl_get_bytes_consumed(rd->h);
	size_t start = end ? end - 1 : 0, before = 0;
	switch (type) {
	case T_OBJECT:
	case T_ARRAY:
		break;
	case T_STRING:
		/* back from the closing quote to the first quote that no
		 * backslash escapes */
		for (size_t q = end >= 2 ? end - 1 : 0; q-- > 0;) {
			size_t b = 0;
			if (rd->blk[q] != '"')
				continue;
			while (b < q && rd->blk[q - b - 1] == '\\')
				b++;
			if (b % 2 == 0) {
				start = q;
				break;
			}
		}
		break;
	default:
		n = type == T_TRUE || type == T_NULL ? 4 : type == T_FALSE ? 5 : n;
		start = n <= end ? end - n : 0;
		before = n <= end ? 0 : n - end;
	}
	position(out, rd->blk, start, rd->blk_line, rd->blk_col);
	if (before && (size_t)out->col > before)
		out->col -= (int)before;
}

/* A value arriving at the top: the document's start, or one of the
 * header's known keys (the others are not kept). */
static inline void root_mark(reader *rd, int type, size_t n)
{
	if (rd->depth == 0)
		value_loc(rd, &rd->top_at, type, n);
	else if (rd->depth == 1 && rd->stack[0].ctx == C_ROOT &&
		 rd->stack[0].key != K_UNKNOWN)
		value_loc(rd, &rd->root_at[rd->stack[0].key], type, n);
}

/* ---- the callbacks ---------------------------------------------------- */

/* Copies a string value for the plan (arena) */
static const char *arena_string(reader *rd, const unsigned char *s, size_t n)
{
	char *c = ppcc_arena_strndup(rd->a, (const char *)s, n);
	if (!c)
		oom(rd);
	return c;
}

/* Where the value now arriving goes, as a field, or NULL. */
static inline field *value_field(reader *rd)
{
	if (rd->depth == 0)
		return NULL;
	frame *fr = &rd->stack[rd->depth - 1];
	if (!fr->is_object || fr->key == K_UNKNOWN)
		return NULL;
	switch (fr->ctx) {
	case C_ROOT: return &rd->root[fr->key];
	case C_STAGE: return &rd->sf[fr->key];
	case C_RANK: return fr->key == K_RANK ? &rd->cur_rank.rank
					      : &rd->cur_rank.actions_f;
	case C_ACTION: return &rd->af[fr->key];
	}
	return NULL;
}

/* Before any value: limits, and the document's own type. */
static int value_begin(reader *rd, int type)
{
	if (++rd->values > RJ_MAX_VALUES)
		return stop(rd, "more than %" PRIu64 " values: more than ppcc reads",
			    RJ_MAX_VALUES);
	if (rd->depth == 0) {
		if (type != T_OBJECT && type != T_ARRAY)
			return stop(rd, "'[' or '{' expected");
		rd->top_type = type;
	}
	return 1;
}

/* An array element that is a scalar, in the contexts that count them. */
static int element_scalar(reader *rd, int type, const unsigned char *s,
			  size_t n)
{
	frame *fr = &rd->stack[rd->depth - 1];
	if (fr->is_object)
		return 1;
	fr->index++;
	switch (fr->ctx) {
	case C_LAYERS: {
		if (rd->n_names == rd->cap_names) {
			size_t cap = rd->cap_names ? 2 * rd->cap_names : 64;
			const char **x = ppcc_realloc(rd->names, cap * sizeof *x);
			if (!x)
				return oom(rd);
			rd->names = x;
			rd->cap_names = cap;
		}
		const char *name = type == T_STRING ? arena_string(rd, s, n) : "";
		if (!name)
			return 0;
		rd->names[rd->n_names++] = name;
		return 1;
	}
	case C_PARTITION: return stage_not_object(rd);
	case C_RANKS:
		rank_begin(rd);
		return rank_done(rd, 0);
	case C_ACTIONS: return action_done(rd, 0);
	}
	return 1;
}

static int scalar_at(reader *rd, field *f, int type, int64_t i, double d,
		     const unsigned char *s, size_t n)
{
	if (!value_begin(rd, type))
		return 0;
	if (f) {
		f->type = type;
		f->i = i;
		f->d = d;
		if (type == T_STRING) {
			frame *fr = &rd->stack[rd->depth - 1];
			if (fr->ctx == C_ACTION && fr->key != A_OP) {
				f->s = NULL; /* only its type is checked */
			} else if (fr->ctx == C_ACTION) {
				/* the op: only its first 40 bytes are ever shown */
				size_t k = n < sizeof rd->op_text - 1 ? n : sizeof rd->op_text - 1;
				memcpy(rd->op_text, s, k);
				rd->op_text[k] = '\0';
				rd->op_long = n >= sizeof rd->op_text - 1;
				f->i = rd->op_long ? -1 : op_parse(rd->op_text);
			} else if (!(f->s = arena_string(rd, s, n))) {
				return 0;
			}
		}
		return 1;
	}
	return element_scalar(rd, type, s, n);
}

static int scalar(reader *rd, int type, int64_t i, double d,
		  const unsigned char *s, size_t n)
{
	return scalar_at(rd, value_field(rd), type, i, d, s, n);
}

static int cb_null(void *ctx)
{
	root_mark(ctx, T_NULL, 0);
	return scalar(ctx, T_NULL, 0, 0, NULL, 0);
}

static int cb_boolean(void *ctx, int b)
{
	root_mark(ctx, b ? T_TRUE : T_FALSE, 0);
	return scalar(ctx, b ? T_TRUE : T_FALSE, 0, 0, NULL, 0);
}

/* A number of at most 18 digits (no overflow) with no fraction or
 * exponent, into *out; 0 for any other. */
static inline int small_integer(const char *s, size_t n, int64_t *out)
{
	if (n >= 19)
		return 0;
	size_t i = s[0] == '-';
	int64_t v = 0;
	for (; i < n; i++) {
		unsigned digit = (unsigned)(unsigned char)s[i] - '0';
		if (digit > 9)
			return 0;
		v = v * 10 + digit;
	}
	*out = s[0] == '-' ? -v : v;
	return 1;
}

/* Whether a JSON number overflows a double.  One without an exponent and
 * shorter than DBL_MAX's 309 digits cannot, so only the others are
 * converted (in the C locale). */
static int real_overflows(const char *s, size_t n)
{
	char buf[64];
	if (!memchr(s, 'e', n) && !memchr(s, 'E', n) && n < 300)
		return 0;
	char *copy = n < sizeof buf ? buf : ppcc_malloc(n + 1);
	if (!copy)
		return 0; /* the caller converts nothing: nothing to refuse */
	memcpy(copy, s, n);
	copy[n] = '\0';
	errno = 0;
	locale_t saved = ppcc_locale_enter();
	double v = strtod(copy, NULL);
	ppcc_locale_leave(saved);
	if (copy != buf)
		ppcc_free(copy);
	return (v == HUGE_VAL || v == -HUGE_VAL) && errno == ERANGE;
}

/* A number that is counted but not kept (a time, a value of an unknown
 * key) is still held to "reals finite". */
static int number_skipped(reader *rd, const char *s, size_t n, int type)
{
	if (type == T_REAL && real_overflows(s, n))
		return stop(rd, "real number overflow near '%.*s'",
			    n > 64 ? 64 : (int)n, s);
	return 1;
}

static int cb_number(void *ctx, const char *s, size_t n)
{
	reader *rd = ctx;
	char buf[64];
	/* the hot path: an action's stage, mb, peer or bytes, or a number
	 * under a key that is not kept (its times) */
	if (rd->depth > 0 && rd->stack[rd->depth - 1].ctx == C_ACTION) {
		const frame *fr = &rd->stack[rd->depth - 1];
		int64_t v;
		if (fr->key == K_UNKNOWN)
			return number_skipped(rd, s, n, T_REAL) &&
				value_begin(rd, T_REAL);
		if (small_integer(s, n, &v)) {
			if (!value_begin(rd, T_INTEGER))
				return 0;
			rd->af[fr->key] = (field){T_INTEGER, v, 0, NULL};
			return 1;
		}
	}
	root_mark(rd, T_REAL, n);
	/* Only the values of known keys are converted: a value of an
	 * unknown key is only counted. */
	field *f = value_field(rd);
	if (!f && rd->depth > 0 && rd->stack[rd->depth - 1].is_object)
		return number_skipped(rd, s, n, T_REAL) &&
			value_begin(rd, T_REAL);
	int is_int = 1;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '.' || s[i] == 'e' || s[i] == 'E') {
			is_int = 0;
			break;
		}
	if (!f && rd->depth > 0)
		return number_skipped(rd, s, n, is_int ? T_INTEGER : T_REAL) &&
			scalar_at(rd, f, is_int ? T_INTEGER : T_REAL, 0, 0, NULL, 0);
	if (is_int && n < 19) {
		/* at most 18 digits: no overflow */
		size_t i = s[0] == '-';
		int64_t v = 0;
		for (; i < n; i++)
			v = v * 10 + (s[i] - '0');
		return scalar_at(rd, f, T_INTEGER, s[0] == '-' ? -v : v, 0, NULL, 0);
	}
	if (is_int) {
		if (n >= sizeof buf)
			return stop(rd, "too big integer");
		memcpy(buf, s, n);
		buf[n] = '\0';
		errno = 0;
		long long v = strtoll(buf, NULL, 10);
		if (errno == ERANGE)
			return stop(rd, "too big integer");
		return scalar(rd, T_INTEGER, v, 0, NULL, 0);
	}
	/* a real as long as it likes; strtod in the C locale */
	char *copy = n < sizeof buf ? buf : ppcc_malloc(n + 1);
	if (!copy)
		return oom(rd);
	memcpy(copy, s, n);
	copy[n] = '\0';
	errno = 0;
	locale_t saved = ppcc_locale_enter();
	double v = strtod(copy, NULL);
	ppcc_locale_leave(saved);
	int overflow = (v == HUGE_VAL || v == -HUGE_VAL) && errno == ERANGE;
	if (copy != buf)
		ppcc_free(copy);
	if (overflow)
		return stop(rd, "real number overflow near '%.*s'",
			    n > 64 ? 64 : (int)n, s);
	return scalar(rd, T_REAL, 0, v, NULL, 0);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	reader *rd = ctx;
	/* the hot path: an action's op, one of the names (so no NUL) */
	if (rd->depth > 0 && rd->stack[rd->depth - 1].ctx == C_ACTION &&
	    rd->stack[rd->depth - 1].key == A_OP) {
		int op = op_of(s, n);
		if (op >= 0) {
			if (!value_begin(rd, T_STRING))
				return 0;
			rd->af[A_OP] = (field){T_STRING, op, 0, NULL};
			return 1;
		}
	}
	if (memchr(s, '\0', n))
		return stop(rd, "\\u0000 is not allowed in a string");
	root_mark(rd, T_STRING, n);
	return scalar(rd, T_STRING, 0, 0, s, n);
}

static int push(reader *rd, int is_object)
{
	int type = is_object ? T_OBJECT : T_ARRAY;
	if (!value_begin(rd, type))
		return 0;
	if (rd->depth >= RJ_MAX_DEPTH)
		return stop(rd, "maximum parsing depth reached near '%c'",
			    is_object ? '{' : '[');
	root_mark(rd, type, 1);
	int ctx = C_SKIP;
	if (rd->depth == 0) {
		ctx = is_object ? C_ROOT : C_SKIP;
	} else {
		frame *fr = &rd->stack[rd->depth - 1];
		field *f = value_field(rd);
		if (f) {
			f->type = type;
			if (fr->ctx == C_ROOT && !is_object) {
				if (fr->key == R_LAYERS)
					ctx = C_LAYERS;
				else if (fr->key == R_PARTITION)
					ctx = C_PARTITION;
				else if (fr->key == R_RANKS)
					ctx = C_RANKS;
			} else if (fr->ctx == C_RANK && fr->key == K_ACTIONS &&
				   !is_object) {
				ctx = C_ACTIONS;
				rd->n_actions = 0;
			}
		} else if (!fr->is_object) {
			if (fr->ctx == C_PARTITION) {
				if (is_object) {
					ctx = C_STAGE;
					memset(rd->sf, 0, sizeof rd->sf);
				} else if (!stage_not_object(rd)) {
					return 0;
				}
			} else if (fr->ctx == C_RANKS) {
				rank_begin(rd);
				if (is_object)
					ctx = C_RANK;
				else if (!rank_done(rd, 0))
					return 0;
			} else if (fr->ctx == C_ACTIONS) {
				if (is_object) {
					ctx = C_ACTION;
					for (int a = 0; a < A_N; a++)
						rd->af[a].type = T_NONE;
					rd->op_long = 0;
					rd->op_text[0] = '\0';
				} else if (!action_done(rd, 0)) {
					return 0;
				}
			} else if (fr->ctx == C_LAYERS) {
				if (!element_scalar(rd, T_NULL, NULL, 0))
					return 0;
				rd->stack[rd->depth - 1].index--; /* counted below */
			}
			fr->index++;
		}
	}
	frame *nf = &rd->stack[rd->depth++];
	nf->ctx = ctx;
	nf->is_object = is_object;
	nf->key = K_UNKNOWN;
	nf->seen = 0;
	nf->key_base = rd->n_keys;
	nf->index = 0;
	return 1;
}

static int cb_start_map(void *ctx)
{
	return push(ctx, 1);
}

static int cb_start_array(void *ctx)
{
	return push(ctx, 0);
}

/* The known key of an action the n bytes at k spell, or K_UNKNOWN: the
 * slot (3 len + k[0]) mod 16 is distinct for each of the seven, so one
 * comparison, with no branch on which key it may be. */
typedef struct key_slot {
	int8_t id, len;
	char name[9];
} key_slot;

static inline int action_key(const unsigned char *k, size_t len)
{
	/* (a slot given twice would be -Woverride-init's warning) */
	static const key_slot slots[16] = {
		[(3 * 2 + 'o') & 15] = {A_OP, 2, "op"},
		[(3 * 2 + 'm') & 15] = {A_MB, 2, "mb"},
		[(3 * 5 + 's') & 15] = {A_STAGE, 5, "stage"},
		[(3 * 5 + 'b') & 15] = {A_BYTES, 5, "bytes"},
		[(3 * 4 + 'p') & 15] = {A_PEER, 4, "peer"},
		[(3 * 8 + 's') & 15] = {A_START, 8, "start_ms"},
		[(3 * 6 + 'e') & 15] = {A_END, 6, "end_ms"},
	};
	if (len == 0 || len > 8)
		return K_UNKNOWN;
	const key_slot *e = &slots[(3 * len + k[0]) & 15];
	return e->len == (int)len && same_bytes(e->name, k, len) ? e->id : K_UNKNOWN;
}

static int cb_map_key(void *ctx, const unsigned char *k, size_t len)
{
	reader *rd = ctx;
	frame *fr = &rd->stack[rd->depth - 1];
	int id = K_UNKNOWN;
	/* the hot path: one of these per action and key; an unknown key
	 * goes the common way, to the table of keys */
	if (fr->ctx == C_ACTION && (id = action_key(k, len)) != K_UNKNOWN) {
		if (fr->seen & (1u << id))
			return stop(rd, "duplicate object key near '\"%.*s\"'",
				    (int)len, (const char *)k);
		fr->seen |= 1u << id;
		/* the times are not kept */
		fr->key = id >= A_START ? K_UNKNOWN : id;
		return 1;
	}
	if (len == 0 || (len < 24 && fr->ctx != C_SKIP)) {
		/* known keys are short; a NUL cannot match one */
	} else if (memchr(k, '\0', len)) {
		return stop(rd, "\\u0000 is not allowed in a string");
	}
	switch (fr->ctx) {
	case C_ROOT: id = known_key(root_keys, R_N, k, len); break;
	case C_STAGE: id = known_key(stage_keys, S_N, k, len); break;
	case C_RANK: id = known_key(rank_keys, K_N, k, len); break;
	case C_ACTION: break; /* not one of its keys (above) */
	}
	if (id != K_UNKNOWN) {
		if (fr->seen & (1u << id))
			return stop(rd, "duplicate object key near '\"%.*s\"'",
				    (int)len, (const char *)k);
		fr->seen |= 1u << id;
		/* values the checks never read are not kept */
		if ((fr->ctx == C_ROOT && (id == R_GENERATOR || id == R_ESTIMATE ||
					   id == R_BASELINE)) ||
		    (fr->ctx == C_RANK && id >= K_BUSY) ||
		    (fr->ctx == C_ACTION && id >= A_START))
			id = K_UNKNOWN;
	} else if ((len > 0 && len < 24 && fr->ctx != C_SKIP &&
		    memchr(k, '\0', len)) || !key_add(rd, fr, k, len)) {
		if (!rd->stopped && !rd->oom)
			return stop(rd, "\\u0000 is not allowed in a string");
		return 0;
	}
	fr->key = id;
	return 1;
}

static int pop(reader *rd)
{
	frame *fr = &rd->stack[--rd->depth];
	int ok = 1;
	if (fr->is_object)
		keys_pop(rd, fr);
	switch (fr->ctx) {
	case C_STAGE: ok = stage_done(rd); break;
	case C_ACTION: ok = action_done(rd, 1); break;
	case C_ACTIONS: ok = actions_done(rd); break;
	case C_RANK: ok = rank_done(rd, 1); break;
	}
	return ok;
}

static int cb_end(void *ctx)
{
	return pop(ctx);
}

static const yajl_callbacks callbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_boolean,
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_map_key,
	.yajl_end_map = cb_end,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end,
};

/* ---- the file ----------------------------------------------------------- */

void ppcc_json_yajl_message(char *out, size_t cap, void *h)
{
	unsigned char *e = yajl_get_error(h, 0, NULL, 0);
	const char *m = e ? (const char *)e : "invalid JSON";
	if (!strncmp(m, "parse error: ", 13))
		m += 13;
	else if (!strncmp(m, "lexical error: ", 15))
		m += 15;
	snprintf(out, cap, "%s", m);
	size_t n = strlen(out);
	while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '.'))
		out[--n] = '\0';
	/* in the words ppcc has always used for these */
	if (strcmp(out, "trailing garbage") == 0)
		snprintf(out, cap, "end of file expected");
	else if (strcmp(out, "premature EOF") == 0)
		snprintf(out, cap, "unexpected end of file");
	if (e)
		yajl_free_error(h, e);
}

/* Line and column of byte `at` of buf, given those at buf's start. */
static void position(ppcc_loc *loc, const char *buf, size_t at, long line,
		     long col)
{
	const char *p = buf, *end = buf + at, *nl;
	while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		line++;
		col = 1;
		p = nl + 1;
	}
	col += end - p;
	loc->line = line > INT_MAX ? INT_MAX : (int)line;
	loc->col = col > INT_MAX ? INT_MAX : (int)col;
}

/* Parses the whole file; 0, or a status with the error reported. */
static int parse_file(reader *rd, const char *path)
{
	FILE *f;
	struct stat st;
	if (strcmp(path, "-") == 0) {
		f = stdin;
	} else {
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			ppcc_error(rd->d, &rd->loc, "is a directory, not a schedule");
			rd->bad = 1;
			return PPCC_EINPUT;
		}
		if (!(f = fopen(path, "rb"))) {
			ppcc_error(rd->d, &rd->loc, "unable to open: %s", strerror(errno));
			rd->bad = 1;
			return PPCC_EINPUT;
		}
	}
	char *buf = ppcc_malloc(RJ_BLOCK);
	yajl_handle h = buf ? yajl_alloc(&callbacks, NULL, rd) : NULL;
	int err = 0;
	if (!h) {
		err = PPCC_ENOMEM;
		goto out;
	}
	rd->h = h;
	long line = 1, col = 1;  /* at the start of buf */
	uint64_t total = 0;
	size_t n = 0;
	yajl_status s = yajl_status_ok;
	for (;;) {
		n = fread(buf, 1, RJ_BLOCK, f);
		if (n == 0)
			break;
		total += n;
		if (total > PPCC_JSON_MAX_BYTES) {
			ppcc_loc at = rd->loc;
			position(&at, buf, 0, line, col);
			ppcc_error(rd->d, &at, "the file is larger than %llu GiB, "
				   "the most ppcc reads",
				   (unsigned long long)(PPCC_JSON_MAX_BYTES >> 30));
			rd->bad = 1;
			err = PPCC_EINPUT;
			goto out;
		}
		rd->blk = buf;
		rd->blk_line = line;
		rd->blk_col = col;
		s = yajl_parse(h, (const unsigned char *)buf, n);
		if (s != yajl_status_ok)
			break;
		ppcc_loc next;
		position(&next, buf, n, line, col); /* the next block's start */
		line = next.line;
		col = next.col;
	}
	if (ferror(f)) {
		ppcc_error(rd->d, &rd->loc, "cannot read: %s", strerror(errno));
		rd->bad = 1;
		err = PPCC_EINPUT;
		goto out;
	}
	size_t at = n;
	if (s == yajl_status_ok) {
		rd->blk = NULL; /* yajl finishes on a buffer of its own */
		rd->blk_line = line;
		rd->blk_col = col;
		n = 0;
		s = yajl_complete_parse(h);
		at = 0;
	} else {
		at = yajl_get_bytes_consumed(h);
	}
	if (rd->oom) {
		err = PPCC_ENOMEM;
	} else if (s != yajl_status_ok) {
		char msg[200];
		if (rd->stopped) {
			snprintf(msg, sizeof msg, "%s", rd->stop);
		} else {
			ppcc_json_yajl_message(msg, sizeof msg, h);
			if (rd->values == 0 && !strcmp(msg, "unexpected end of file"))
				snprintf(msg, sizeof msg,
					 "'[' or '{' expected near end of file");
		}
		ppcc_loc where = rd->loc;
		position(&where, buf, at > n ? n : at, line, col);
		if (where.col > 1 && (at > 0 || rd->stopped))
			where.col--; /* at the byte that stopped it */
		ppcc_error(rd->d, &where, "%s", msg);
		rd->bad = 1;
		err = PPCC_EINPUT;
	}
out:
	if (h)
		yajl_free(h);
	ppcc_free(buf);
	if (f && f != stdin)
		fclose(f);
	return err;
}

/* ---- from what was read to the plan -------------------------------- */

/* k, reporting at the header key's value, or at the document's start
 * when the key is missing. */
static sink *at_key(sink *k, int key)
{
	reader *rd = k->rd;
	k->loc = rd->root[key].type != T_NONE ? &rd->root_at[key] : &rd->top_at;
	return k;
}

static int finish(reader *rd, ppcc_plan *out)
{
	ppcc_arena *a = rd->a;
	ppcc_schedule *s = &out->best.schedule;
	sink now = {rd, NULL, NULL, &rd->top_at};
	const field *R = rd->root;
	static const pathref top_ = {P_TOP, 0, 0, NULL};
	const pathref *top = &top_;

	if (rd->top_type != T_OBJECT) {
		complain(&now, "(document)", "expected an object");
		return 0;
	}
	const field *fmt = member(at_key(&now, R_FORMAT), &R[R_FORMAT], top, "format",
				  T_STRING);
	if (fmt && strcmp(fmt->s, "ppcc-schedule") != 0)
		complain(at_key(&now, R_FORMAT), "format", "expected \"ppcc-schedule\"");
	s->version = (int32_t)int_member(at_key(&now, R_VERSION), &R[R_VERSION], top, "version", 1,
					 PPCC_SCHEDULE_VERSION);
	const field *kind = member(at_key(&now, R_SCHEDULE), &R[R_SCHEDULE], top,
				   "schedule", T_STRING);
	if (kind && (s->kind = ppcc_schedule_kind_parse(kind->s)) < 0) {
		char kinds[256], msg[300];
		ppcc_sched_kind_list(kinds, sizeof kinds, " or ");
		snprintf(msg, sizeof msg, "expected %s", kinds);
		complain(at_key(&now, R_SCHEDULE), "schedule", msg);
	}
	/* Bounds keep p * v and later arrays of p * v * m entries sane. */
	s->n_ranks = (int32_t)int_member(at_key(&now, R_STAGES), &R[R_STAGES], top,
					 "stages", 1, 1 << 16);
	s->n_chunks = (int32_t)int_member(at_key(&now, R_CHUNKS), &R[R_CHUNKS], top,
					  "chunks", 1, 1 << 10);
	s->n_microbatches = (int32_t)int_member(at_key(&now, R_MICRO), &R[R_MICRO], top,
						"microbatches", 1, 1 << 24);
	if (rd->bad)
		return 0;
	s->n_stages = s->n_ranks * s->n_chunks;
	if ((int64_t)s->n_stages * s->n_microbatches > (1LL << 28)) {
		complain(at_key(&now, R_MICRO), "microbatches",
			 "stages x chunks x microbatches is too large");
		return 0;
	}
	if (R[R_VSTAGES].type != T_NONE &&
	    int_member(at_key(&now, R_VSTAGES), &R[R_VSTAGES], top, "virtual_stages", s->n_stages,
		       s->n_stages) != s->n_stages)
		return 0;
	out->model_name = ppcc_arena_strdup(a, R[R_MODEL].type == T_STRING
					    ? R[R_MODEL].s : "");
	if (!out->model_name)
		return PPCC_ENOMEM;

	/* the partition */
	if (member(at_key(&now, R_PARTITION), &R[R_PARTITION], top, "partition", T_ARRAY)) {
		if (rd->partition_entries != s->n_stages) {
			complain(at_key(&now, R_PARTITION), "partition", "expected one entry per virtual stage");
		} else {
			held_report(rd, &rd->part_msgs, "partition");
			ppcc_stage_info *st = ppcc_arena_alloc(a, (size_t)s->n_stages, sizeof *st);
			ppcc_stage_cost *c = ppcc_arena_alloc(a, (size_t)s->n_stages, sizeof *c);
			if (!st || !c)
				return PPCC_ENOMEM;
			for (int i = 0; i < s->n_stages; i++) {
				st[i] = rd->stages[i].st;
				c[i] = rd->stages[i].c;
			}
			out->best.stages = st;
			out->best.costs = c;
		}
	}

	/* the ranks */
	if (member(at_key(&now, R_RANKS), &R[R_RANKS], top, "ranks", T_ARRAY)) {
		if (rd->rank_entries != s->n_ranks) {
			complain(at_key(&now, R_RANKS), "ranks", "expected one entry per rank (stages)");
		} else {
			held_report(rd, &rd->rank_msgs, "ranks");
			ppcc_rank_schedule *rs = ppcc_arena_alloc(a, (size_t)s->n_ranks,
								  sizeof *rs);
			if (!rs)
				return PPCC_ENOMEM;
			for (int r = 0; r < s->n_ranks; r++) {
				rs[r].rank = r; /* checked equal */
				rs[r].n_actions = rd->ranks[r].n_actions;
				rs[r].actions = rd->ranks[r].actions;
			}
			s->ranks = rs;
		}
	}
	if (rd->bad)
		return 0;
	s->stages = out->best.stages;
	/* the file's fingerprint, else the contents' hash (then never stale) */
	if (R[R_FINGERPRINT].type != T_NONE) {
		const char *t = R[R_FINGERPRINT].type == T_STRING ? R[R_FINGERPRINT].s : NULL;
		int ok = t && strlen(t) == 16 && strspn(t, "0123456789abcdef") == 16;
		if (!ok) {
			complain(at_key(&now, R_FINGERPRINT), "fingerprint",
				 "expected 16 lower-case hexadecimal digits");
			s->fingerprint = ppcc_schedule_fingerprint(s);
		} else {
			s->fingerprint = strtoull(t, NULL, 16);
		}
	} else {
		s->fingerprint = ppcc_schedule_fingerprint(s);
	}
	int last = 0;
	for (int i = 0; i < s->n_stages; i++)
		if (s->stages[i].last_layer + 1 > last)
			last = s->stages[i].last_layer + 1;
	out->n_layers = last;
	if (R[R_LAYERS].type == T_ARRAY && rd->n_names < (size_t)last)
		complain(at_key(&now, R_LAYERS), "layers", "fewer names than the partition's layers");
	if (R[R_LAYERS].type == T_ARRAY && rd->n_names >= (size_t)last &&
	    rd->n_names < INT32_MAX) {
		int n = (int)rd->n_names;
		ppcc_layer *L = ppcc_arena_alloc(a, (size_t)n, sizeof *L);
		if (!L)
			return PPCC_ENOMEM;
		for (int i = 0; i < n; i++)
			L[i].name = rd->names[i];
		out->layers = L;
		out->n_layers = n;
	}
	return 0;
}

int ppcc_read_json(ppcc_plan *out, ppcc_arena *a, const char *path,
		   ppcc_diag *d)
{
	reader *rd = ppcc_calloc(1, sizeof *rd);
	int err;
	memset(out, 0, sizeof *out);
	if (!rd)
		return PPCC_ENOMEM;
	rd->d = d;
	rd->a = a;
	rd->loc = (ppcc_loc){strcmp(path, "-") == 0 ? "<stdin>" : path, 0, 0};
	err = parse_file(rd, path);
	if (err == 0 && !rd->bad)
		err = finish(rd, out);
	if (err == 0 && rd->oom)
		err = PPCC_ENOMEM;
	if (err == 0 && rd->bad)
		err = PPCC_EINPUT;
	blocks_free(rd);
	held_free(&rd->part_msgs);
	held_free(&rd->rank_msgs);
	ppcc_free(rd->stages);
	ppcc_free(rd->ranks);
	ppcc_free(rd->names);
	ppcc_free(rd->keys);
	ppcc_free(rd->buckets);
	ppcc_free(rd->key_pool);
	ppcc_free(rd);
	return err;
}
