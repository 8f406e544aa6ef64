/*
 * search/read.c - one entry of the JSON `ppcc search -f json` writes
 * (format ppcc-search, version 2), for ppcc plan --from-search: the
 * entry's settings and figures, and the input files and memory limit the
 * search planned it with.
 *
 * The file is read whole (at most SR_MAX_BYTES: the search writes at
 * most 1,000 entries, a few hundred kB) and parsed by yajl's callbacks
 * in one pass, as ir/read_json.c reads a schedule, with its limits: the
 * grammar and UTF-8 checked by yajl; no key twice in one object; no NUL
 * in a string; integers within 64 bits and reals finite; at most
 * SR_MAX_DEPTH containers open and SR_MAX_VALUES values.  A violation
 * stops the reading with one error at its FILE:LINE:COL.  Only the top
 * level's scalars and `top`'s entries are kept, as a small tree (its
 * nodes capped by SR_MAX_KEPT); `families` and `compared` are checked
 * and passed over.  The kept values are then checked: each error names
 * the key path (`top[2].pipeline.stages`) at its value's line and column,
 * or at its object's '{' when missing.  Only the entry asked for is read
 * past its being an object, so a file with an odd entry elsewhere still
 * plans the others.
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

#define SR_MAX_BYTES ((size_t)64 << 20)
#define SR_MAX_DEPTH 64
#define SR_MAX_VALUES ((uint64_t)1 << 24)
#define SR_MAX_KEPT (1L << 18)
#define SR_MAX_TOP 1000 /* ppcc search --top's most */
#define SR_VERSION 2

enum { V_OBJECT, V_ARRAY, V_STRING, V_INTEGER, V_REAL, V_BOOL, V_NULL };

/* A kept value: where it begins (a byte of the file), under which key. */
typedef struct sr_node {
	int type;
	size_t at;
	const char *key;     /* in an object; NULL in an array */
	int64_t i;           /* V_INTEGER, V_BOOL */
	double d;            /* V_REAL, V_INTEGER */
	const char *s;       /* V_STRING */
	struct sr_node *first, *last, *next;
	long n;
} sr_node;

/* An open container: its node when kept, and its keys so far (offsets
 * into keys[] of the reader) for duplicates. */
typedef struct sr_frame {
	sr_node *node;       /* NULL: passed over */
	int is_object;
	size_t key_base;     /* its first key in the key stack */
	size_t pool_base;    /* and its first byte in the key pool */
	size_t key_off, key_len; /* the key whose value comes next */
} sr_frame;

typedef struct sr_key {
	size_t off, len;     /* in the key pool */
} sr_key;

typedef struct sr_reader {
	ppcc_arena *a;
	const char *buf;
	size_t len;
	yajl_handle h;
	sr_frame stack[SR_MAX_DEPTH + 1];
	int depth;
	sr_node *root;
	uint64_t values;
	long kept;
	sr_key *keys;        /* keys of the open objects, innermost last */
	size_t n_keys, cap_keys;
	char *pool;          /* their bytes */
	size_t pool_len, pool_cap;
	char stop[200];
	int stopped, oom;
} sr_reader;

static int sr_stop(sr_reader *rd, const char *fmt, ...) PPCC_PRINTF(2, 3);
static int sr_stop(sr_reader *rd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rd->stop, sizeof rd->stop, fmt, ap);
	va_end(ap);
	rd->stopped = 1;
	return 0;
}

/* Line and column of byte at of the file. */
static ppcc_loc sr_loc(const sr_reader *rd, const char *file, size_t at)
{
	long line = 1, col = 1;
	for (size_t i = 0; i < at && i < rd->len; i++) {
		if (rd->buf[i] == '\n')
			line++, col = 1;
		else
			col++;
	}
	return (ppcc_loc){file, line > INT_MAX ? INT_MAX : (int)line,
			  col > INT_MAX ? INT_MAX : (int)col};
}

/* Where the token yajl has just read begins: n bytes before where it
 * stopped (a string: back to its opening quote). */
static size_t token_start(const sr_reader *rd, int type, size_t n)
{
	size_t end = yajl_get_bytes_consumed(rd->h);
	if (type == V_STRING) {
		for (size_t q = end >= 2 ? end - 1 : 0; q-- > 0;) {
			size_t b = 0;
			if (rd->buf[q] != '"')
				continue;
			while (b < q && rd->buf[q - b - 1] == '\\')
				b++;
			if (b % 2 == 0)
				return q;
		}
		return 0;
	}
	return n <= end ? end - n : 0;
}

/* The node of a value now arriving, or NULL when it is not kept: the
 * top level's scalars and "top", and what lies inside kept containers. */
static sr_node *value_node(sr_reader *rd, int type, size_t n, int *fail)
{
	*fail = 0;
	if (++rd->values > SR_MAX_VALUES) {
		*fail = 1;
		sr_stop(rd, "more than %" PRIu64 " values: more than ppcc reads",
			SR_MAX_VALUES);
		return NULL;
	}
	sr_frame *fr = rd->depth ? &rd->stack[rd->depth - 1] : NULL;
	if (fr && !fr->node)
		return NULL;
	if (fr && fr->node == rd->root &&
	    (type == V_OBJECT ||
	     (type == V_ARRAY && !(fr->key_len == 3 &&
				   memcmp(rd->pool + fr->key_off, "top", 3) == 0))))
		return NULL; /* families, compared: passed over */
	if (fr && fr->node->type == V_ARRAY && fr->node->key &&
	    strcmp(fr->node->key, "top") == 0 && fr->node->n >= SR_MAX_TOP) {
		*fail = 1;
		sr_stop(rd, "top: more than %d entries, the most ppcc search "
			"writes", SR_MAX_TOP);
		return NULL;
	}
	if (++rd->kept > SR_MAX_KEPT) {
		*fail = 1;
		sr_stop(rd, "more than %ld values in top: more than ppcc reads",
			SR_MAX_KEPT);
		return NULL;
	}
	sr_node *x = ppcc_arena_alloc(rd->a, 1, sizeof *x);
	if (!x) {
		*fail = 1;
		rd->oom = 1;
		return NULL;
	}
	x->type = type;
	x->at = token_start(rd, type, n);
	if (fr) {
		if (fr->is_object &&
		    !(x->key = ppcc_arena_strndup(rd->a, rd->pool + fr->key_off,
						  fr->key_len))) {
			*fail = 1;
			rd->oom = 1;
			return NULL;
		}
		if (fr->node->last)
			fr->node->last->next = x;
		else
			fr->node->first = x;
		fr->node->last = x;
		fr->node->n++;
	} else {
		rd->root = x;
	}
	return x;
}

static int cb_scalar(sr_reader *rd, int type, size_t n, int64_t i, double d,
		     const char *s, size_t len)
{
	int fail;
	if (rd->depth == 0)
		return sr_stop(rd, "'{' expected: the JSON of ppcc search -f json "
			       "is an object");
	sr_node *x = value_node(rd, type, n, &fail);
	if (fail)
		return 0;
	if (x) {
		x->i = i;
		x->d = d;
		if (type == V_STRING && !(x->s = ppcc_arena_strndup(rd->a, s, len)))
			return rd->oom = 1, 0;
	}
	return 1;
}

static int cb_null(void *ctx)
{
	return cb_scalar(ctx, V_NULL, 4, 0, 0, NULL, 0);
}

static int cb_boolean(void *ctx, int b)
{
	return cb_scalar(ctx, V_BOOL, b ? 4 : 5, b, 0, NULL, 0);
}

static int cb_number(void *ctx, const char *s, size_t n)
{
	sr_reader *rd = ctx;
	char buf[400];
	if (n >= sizeof buf)
		return sr_stop(rd, "number too long near '%.32s'", s);
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	if (strcspn(buf, ".eE") == n) {
		long long v = strtoll(buf, NULL, 10);
		if (errno == ERANGE)
			return sr_stop(rd, "too big integer near '%.32s'", buf);
		return cb_scalar(rd, V_INTEGER, n, v, (double)v, NULL, 0);
	}
	locale_t saved = ppcc_locale_enter();
	double v = strtod(buf, NULL);
	ppcc_locale_leave(saved);
	if (!isfinite(v))
		return sr_stop(rd, "real number overflow near '%.32s'", buf);
	return cb_scalar(rd, V_REAL, n, 0, v, NULL, 0);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	if (memchr(s, '\0', n))
		return sr_stop(ctx, "\\u0000 is not allowed in a string");
	return cb_scalar(ctx, V_STRING, 0, 0, 0, (const char *)s, n);
}

static int push(sr_reader *rd, int is_object)
{
	int fail;
	if (rd->depth >= SR_MAX_DEPTH)
		return sr_stop(rd, "maximum parsing depth reached near '%c'",
			       is_object ? '{' : '[');
	if (rd->depth == 0 && !is_object)
		return sr_stop(rd, "'{' expected: the JSON of ppcc search -f json "
			       "is an object");
	sr_node *x = value_node(rd, is_object ? V_OBJECT : V_ARRAY, 1, &fail);
	if (fail)
		return 0;
	sr_frame *fr = &rd->stack[rd->depth++];
	fr->node = x;
	fr->is_object = is_object;
	fr->key_base = rd->n_keys;
	fr->pool_base = rd->pool_len;
	fr->key_off = fr->key_len = 0;
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

static int cb_map_key(void *ctx, const unsigned char *k, size_t len)
{
	sr_reader *rd = ctx;
	sr_frame *fr = &rd->stack[rd->depth - 1];
	if (memchr(k, '\0', len))
		return sr_stop(rd, "\\u0000 is not allowed in a string");
	/* an object's keys are compared with each other only: at most
	 * as many comparisons as pairs of one object's keys, so a key
	 * is hashed into no table; objects of ppcc search hold at most
	 * 20 keys, and more than 256 in one are refused */
	if (rd->n_keys - fr->key_base >= 256)
		return sr_stop(rd, "more than 256 keys in one object: more than "
			       "ppcc reads");
	for (size_t i = fr->key_base; i < rd->n_keys; i++)
		if (rd->keys[i].len == len &&
		    memcmp(rd->pool + rd->keys[i].off, k, len) == 0)
			return sr_stop(rd, "duplicate object key near '\"%.*s\"'",
				       len > 64 ? 64 : (int)len, (const char *)k);
	if (rd->n_keys == rd->cap_keys) {
		size_t cap = rd->cap_keys ? 2 * rd->cap_keys : 64;
		sr_key *x = ppcc_realloc(rd->keys, cap * sizeof *x);
		if (!x)
			return rd->oom = 1, 0;
		rd->keys = x;
		rd->cap_keys = cap;
	}
	/* yajl's key is gone at the next token: its bytes are kept, on a
	 * stack popped with the object (at most the file's size) */
	if (len > rd->pool_cap - rd->pool_len) {
		size_t cap = rd->pool_cap ? 2 * rd->pool_cap : 4096;
		while (cap - rd->pool_len < len)
			cap *= 2;
		char *x = ppcc_realloc(rd->pool, cap);
		if (!x)
			return rd->oom = 1, 0;
		rd->pool = x;
		rd->pool_cap = cap;
	}
	memcpy(rd->pool + rd->pool_len, k, len);
	rd->keys[rd->n_keys++] = (sr_key){rd->pool_len, len};
	fr->key_off = rd->pool_len;
	fr->key_len = len;
	rd->pool_len += len;
	return 1;
}

static int cb_end(void *ctx)
{
	sr_reader *rd = ctx;
	sr_frame *fr = &rd->stack[--rd->depth];
	if (fr->is_object) {
		rd->n_keys = fr->key_base;
		rd->pool_len = fr->pool_base;
	}
	return 1;
}

static const yajl_callbacks sr_callbacks = {
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

/* The file into rd->buf (malloc'd): 0, or PPCC_EINPUT reported. */
static int sr_read_file(sr_reader *rd, const char *path, const char *name,
			ppcc_diag *d)
{
	ppcc_loc loc = {name, 0, 0};
	struct stat st;
	int is_stdin = strcmp(path, "-") == 0;
	if (!is_stdin && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		ppcc_error(d, &loc, "is a directory, not the JSON of ppcc search");
		return PPCC_EINPUT;
	}
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	if (!f) {
		ppcc_error(d, &loc, "cannot open: %s", strerror(errno));
		return PPCC_EINPUT;
	}
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int err = 0;
	for (;;) {
		if (len == cap) {
			if (cap > SR_MAX_BYTES) {
				ppcc_error(d, &loc, "the file is larger than %zu MiB, "
					   "the most ppcc reads of a search's JSON",
					   SR_MAX_BYTES >> 20);
				err = PPCC_EINPUT;
				break;
			}
			size_t ncap = cap ? 2 * cap : 64 * 1024;
			if (ncap > SR_MAX_BYTES + 1)
				ncap = SR_MAX_BYTES + 1;
			char *x = ppcc_realloc(buf, ncap);
			if (!x) {
				err = PPCC_ENOMEM;
				break;
			}
			buf = x;
			cap = ncap;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0) {
			if (ferror(f)) {
				ppcc_error(d, &loc, "cannot read: %s",
					   strerror(errno ? errno : EIO));
				err = PPCC_EINPUT;
			}
			break;
		}
	}
	if (!is_stdin)
		fclose(f);
	if (err) {
		ppcc_free(buf);
		return err;
	}
	rd->buf = buf;
	rd->len = len;
	return 0;
}

/* Parses rd->buf into rd->root: 0, or a status with the error reported
 * at the byte that stopped it. */
static int sr_parse(sr_reader *rd, const char *name, ppcc_diag *d)
{
	yajl_handle h = yajl_alloc(&sr_callbacks, NULL, rd);
	if (!h)
		return PPCC_ENOMEM;
	rd->h = h;
	yajl_status s = yajl_parse(h, (const unsigned char *)rd->buf, rd->len);
	size_t at = rd->len;
	if (s == yajl_status_ok) {
		s = yajl_complete_parse(h);
	} else {
		at = yajl_get_bytes_consumed(h);
		if (at > 0)
			at--; /* at the byte that stopped it */
	}
	int err = 0;
	if (rd->oom) {
		err = PPCC_ENOMEM;
	} else if (s != yajl_status_ok) {
		char msg[200];
		if (rd->stopped)
			snprintf(msg, sizeof msg, "%s", rd->stop);
		else
			ppcc_json_yajl_message(msg, sizeof msg, h);
		if (rd->values == 0 && !rd->stopped &&
		    strcmp(msg, "unexpected end of file") == 0)
			snprintf(msg, sizeof msg, "empty file; expected the JSON "
				 "of ppcc search -f json");
		ppcc_loc loc = sr_loc(rd, name, at);
		ppcc_error(d, &loc, "%s", msg);
		err = PPCC_EINPUT;
	}
	yajl_free(h);
	rd->h = NULL;
	return err;
}

/* ---- the checks ---------------------------------------------------------- */

typedef struct sr_check {
	sr_reader *rd;
	const char *name;
	ppcc_diag *d;
	int errors;
} sr_check;

static void bad(sr_check *c, size_t at, const char *path, const char *what)
{
	ppcc_loc loc = sr_loc(c->rd, c->name, at);
	ppcc_error(c->d, &loc, "%s: %s", path, what);
	c->errors++;
}

static const sr_node *get(const sr_node *obj, const char *key)
{
	for (const sr_node *x = obj ? obj->first : NULL; x; x = x->next)
		if (x->key && strcmp(x->key, key) == 0)
			return x;
	return NULL;
}

static const char *const type_names[] = {
	[V_OBJECT] = "an object", [V_ARRAY] = "an array",
	[V_STRING] = "a string", [V_INTEGER] = "an integer",
	[V_REAL] = "a number", [V_BOOL] = "a boolean", [V_NULL] = "null",
};

/* obj's member key of type (a number takes an integer too), or NULL
 * with the error: missing (at obj) or of another type (at it). */
static const sr_node *member(sr_check *c, const sr_node *obj,
			     const char *path, const char *key, int type)
{
	char where[160];
	snprintf(where, sizeof where, "%s%s%s", path, *path ? "." : "", key);
	const sr_node *x = get(obj, key);
	if (!x) {
		bad(c, obj->at, where, "missing");
		return NULL;
	}
	if (x->type == type || (type == V_REAL && x->type == V_INTEGER))
		return x;
	char msg[64];
	snprintf(msg, sizeof msg, "expected %s", type_names[type]);
	bad(c, x->at, where, msg);
	return NULL;
}

static int count_member(sr_check *c, const sr_node *obj, const char *path,
			const char *key, int lo)
{
	const sr_node *x = member(c, obj, path, key, V_INTEGER);
	if (x && (x->i < lo || x->i > PPCC_MAX_COUNT)) {
		char where[160], msg[96];
		snprintf(where, sizeof where, "%s.%s", path, key);
		snprintf(msg, sizeof msg, "%" PRId64 " is out of range [%d, %d]",
			 x->i, lo, PPCC_MAX_COUNT);
		bad(c, x->at, where, msg);
		return lo;
	}
	return x ? (int)x->i : lo;
}

/* A figure: finite, >= 0. */
static double figure_member(sr_check *c, const sr_node *obj,
			    const char *path, const char *key)
{
	const sr_node *x = member(c, obj, path, key, V_REAL);
	double v = x ? x->d : 0;
	if (x && !(v >= 0)) {
		char where[160];
		snprintf(where, sizeof where, "%s.%s", path, key);
		bad(c, x->at, where, "expected a number >= 0");
		return 0;
	}
	return v;
}

/* names (NULL-terminated) as "a, b or c", then end, after what msg
 * holds. */
static void word_list(char *msg, size_t size, const char *const *names,
		      const char *end)
{
	size_t at = strlen(msg);
	for (int i = 0; names[i] && at < size; i++)
		at += (size_t)snprintf(msg + at, size - at, "%s%s",
				       i == 0 ? "" : names[i + 1] ? ", " : " or ",
				       names[i]);
	if (at < size)
		snprintf(msg + at, size - at, "%s", end);
}

/* One of names (NULL-terminated), or -1 with the error. */
static int word_member(sr_check *c, const sr_node *obj, const char *path,
		       const char *key, const char *const *names)
{
	const sr_node *x = member(c, obj, path, key, V_STRING);
	if (!x)
		return -1;
	for (int i = 0; names[i]; i++)
		if (strcmp(x->s, names[i]) == 0)
			return i;
	char where[160], msg[400];
	snprintf(msg, sizeof msg, "expected ");
	word_list(msg, sizeof msg, names, "");
	snprintf(where, sizeof where, "%s.%s", path, key);
	bad(c, x->at, where, msg);
	return -1;
}

/* An input file: its path, fingerprint and where the path is. */
static void input_member(sr_check *c, const sr_node *root, const char *key,
			 const char **path, uint64_t *fp, ppcc_loc *loc)
{
	char file[32], print[40];
	snprintf(file, sizeof file, "%s_file", key);
	snprintf(print, sizeof print, "%s_fingerprint", key);
	const sr_node *p = member(c, root, "", file, V_STRING);
	const sr_node *f = member(c, root, "", print, V_STRING);
	if (p) {
		if (!p->s[0])
			bad(c, p->at, file, "expected a path");
		*path = p->s;
		*loc = sr_loc(c->rd, c->name, p->at);
	}
	if (f) {
		if (strlen(f->s) != 16 || strspn(f->s, "0123456789abcdef") != 16)
			bad(c, f->at, print, "expected 16 lower-case hexadecimal "
			    "digits");
		else
			*fp = strtoull(f->s, NULL, 16);
	}
}

static const char *const recompute_words[] = {"none", "selective", "full",
					      NULL};

/* The keys ppcc search writes in an entry (cli/search.c, json_settings),
 * its pipeline and its transformer: another is a hand's edit that
 * --from-search would not plan, refused rather than passed over. */
static const char *const entry_keys[] = {
	"pipeline", "transformer", "micro_batch_size", "recompute", "fits",
	"iteration_ms", "tokens_per_s", "mfu", "peak_memory_bytes",
	"bubble_fraction", "lower_bound_ms", "headroom_bytes", NULL};
const char *const ppcc_search_pipeline_keys[] = {
	"schedule", "stages", "microbatches", "chunks", "tensor_parallel",
	"data_parallel", "context_parallel", "global_batch_size", "zero",
	"expert_parallel", "expert_tensor_parallel", NULL};
const char *const ppcc_search_transformer_keys[] = {
	"micro_batch_size", "recompute", "recompute_modules", NULL};

static void known_keys(sr_check *c, const sr_node *obj, const char *path,
		       const char *const *keys)
{
	for (const sr_node *x = obj->first; x; x = x->next) {
		int k = 0;
		while (keys[k] && strcmp(keys[k], x->key) != 0)
			k++;
		if (keys[k])
			continue;
		char where[160], msg[400];
		snprintf(msg, sizeof msg, "not a key ppcc search writes here (");
		word_list(msg, sizeof msg, keys, ")");
		snprintf(where, sizeof where, "%s.%s", path, x->key);
		bad(c, x->at, where, msg);
	}
}

/* Entry i of top into out. */
static void read_entry(sr_check *c, const sr_node *x, long i,
		       ppcc_search_pick *out)
{
	char path[32], pp[48];
	snprintf(path, sizeof path, "top[%ld]", i);
	snprintf(pp, sizeof pp, "%s.pipeline", path);
	ppcc_search_entry *e = &out->e;
	out->entry_loc = sr_loc(c->rd, c->name, x->at);
	if (x->type != V_OBJECT) {
		bad(c, x->at, path, "expected an object");
		return;
	}
	known_keys(c, x, path, entry_keys);
	e->b = count_member(c, x, path, "micro_batch_size", 1);
	e->recompute = word_member(c, x, path, "recompute", recompute_words);
	const sr_node *tf = get(x, "transformer");
	if (tf) {
		/* what the search writes twice, once beside the pipeline */
		char tp[48];
		snprintf(tp, sizeof tp, "%s.transformer", path);
		tf = member(c, x, path, "transformer", V_OBJECT);
		if (tf) {
			known_keys(c, tf, tp, ppcc_search_transformer_keys);
			int b = count_member(c, tf, tp, "micro_batch_size", 1);
			int rc = word_member(c, tf, tp, "recompute",
					     recompute_words);
			const sr_node *y = get(tf, "micro_batch_size");
			if (y && b != e->b)
				bad(c, y->at, tp, "micro_batch_size differs "
				    "from the entry's");
			y = get(tf, "recompute");
			if (y && rc >= 0 && rc != e->recompute)
				bad(c, y->at, tp, "recompute differs from the "
				    "entry's");
			/* the file's modules, which the search writes for a
			 * selective entry only */
			y = get(tf, "recompute_modules");
			if (y && e->recompute != PPCC_RECOMPUTE_SELECTIVE)
				bad(c, y->at, tp, "recompute_modules beside a "
				    "recompute that is not selective");
		}
	}
	const sr_node *pl = member(c, x, path, "pipeline", V_OBJECT);
	/* where each pipeline setting is (the entry, when not given) */
	struct { const char *key; ppcc_loc *loc; } at[] = {
		{"schedule", &out->kind_loc},
		{"stages", &out->stages_loc},
		{"microbatches", &out->microbatches_loc},
		{"chunks", &out->chunks_loc},
		{"tensor_parallel", &out->tensor_parallel_loc},
		{"data_parallel", &out->data_parallel_loc},
		{"context_parallel", &out->context_parallel_loc},
		{"global_batch_size", &out->global_batch_size_loc},
		{"zero", &out->zero_loc},
		{"expert_parallel", &out->expert_parallel_loc},
		{"expert_tensor_parallel", &out->expert_tensor_parallel_loc}};
	for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
		const sr_node *y = pl ? get(pl, at[k].key) : NULL;
		*at[k].loc = sr_loc(c->rd, c->name, y ? y->at : x->at);
	}
	if (pl) {
		known_keys(c, pl, pp, ppcc_search_pipeline_keys);
		const char *kinds[PPCC_SCHED_COUNT + 1] = {NULL};
		for (int k = 0; k < PPCC_SCHED_COUNT; k++)
			kinds[k] = ppcc_schedule_kind_name(k);
		e->kind = word_member(c, pl, pp, "schedule", kinds);
		e->p = count_member(c, pl, pp, "stages", 1);
		e->m = count_member(c, pl, pp, "microbatches", 1);
		e->v = count_member(c, pl, pp, "chunks", 1);
		e->t = count_member(c, pl, pp, "tensor_parallel", 1);
		e->d = count_member(c, pl, pp, "data_parallel", 1);
		e->cp = count_member(c, pl, pp, "context_parallel", 1);
		/* a mixture of experts' layout, when the search wrote one */
		e->ep = 1;
		if (get(pl, "expert_parallel") ||
		    get(pl, "expert_tensor_parallel")) {
			e->ep = count_member(c, pl, pp, "expert_parallel", 1);
			e->etp = count_member(c, pl, pp,
					      "expert_tensor_parallel", 1);
		}
		char where[80];
		const sr_node *z = member(c, pl, pp, "zero", V_INTEGER);
		snprintf(where, sizeof where, "%s.zero", pp);
		if (z && (z->i < 0 || z->i > 3))
			bad(c, z->at, where, "expected 0, 1, 2 or 3");
		e->zero = z && z->i >= 0 && z->i <= 3 ? (int)z->i : 0;
		const sr_node *g = member(c, pl, pp, "global_batch_size",
					  V_INTEGER);
		snprintf(where, sizeof where, "%s.global_batch_size", pp);
		if (g && !c->errors && g->i != (int64_t)e->m * e->b * e->d) {
			char msg[160];
			snprintf(msg, sizeof msg, "%" PRId64 " is not microbatches "
				 "x micro_batch_size x data_parallel (%lld)", g->i,
				 (long long)e->m * e->b * e->d);
			bad(c, g->at, where, msg);
		}
	}
	const sr_node *fits = member(c, x, path, "fits", V_BOOL);
	if (fits && !fits->i) {
		char where[48];
		snprintf(where, sizeof where, "%s.fits", path);
		bad(c, fits->at, where, "false: the entry does not fit, and "
		    "the search ranks only what fits");
	}
	e->iteration_ms = figure_member(c, x, path, "iteration_ms");
	e->tokens_per_s = figure_member(c, x, path, "tokens_per_s");
	e->mfu = figure_member(c, x, path, "mfu");
	e->peak_bytes = figure_member(c, x, path, "peak_memory_bytes");
	e->bubble = figure_member(c, x, path, "bubble_fraction");
	e->lower_bound_ms = figure_member(c, x, path, "lower_bound_ms");
}

static int sr_check_all(sr_check *c, int rank, ppcc_search_pick *out)
{
	const sr_node *root = c->rd->root;
	const sr_node *f = member(c, root, "", "format", V_STRING);
	if (f && strcmp(f->s, "ppcc-search") != 0) {
		bad(c, f->at, "format", strcmp(f->s, "ppcc-schedule") == 0
		    ? "\"ppcc-schedule\" is a plan (ppcc plan -f json); "
		      "expected \"ppcc-search\", what ppcc search -f json writes"
		    : "expected \"ppcc-search\", what ppcc search -f json writes");
		return PPCC_EINPUT;
	}
	if (!f)
		return PPCC_EINPUT;
	const sr_node *v = member(c, root, "", "version", V_INTEGER);
	if (v && v->i == 1) {
		bad(c, v->at, "version", "1 does not record the files the search "
		    "read; run the search again with this ppcc");
	} else if (v && (v->i < 1 || v->i > SR_VERSION)) {
		char msg[96];
		snprintf(msg, sizeof msg, "%" PRId64 " is not a version this ppcc "
			 "reads (1 to %d)", v->i, SR_VERSION);
		bad(c, v->at, "version", msg);
	}
	if (c->errors || !v)
		return PPCC_EINPUT;
	input_member(c, root, "model", &out->model_file,
		     &out->model_fingerprint, &out->model_loc);
	if (get(root, "cluster_file") || get(root, "cluster_fingerprint"))
		input_member(c, root, "cluster", &out->cluster_file,
			     &out->cluster_fingerprint, &out->cluster_loc);
	out->trainer = -1;
	if (get(root, "model_text")) {
		const sr_node *t = member(c, root, "", "model_text", V_STRING);
		if (t) {
			out->model_text = t->s;
			out->model_text_loc = sr_loc(c->rd, c->name, t->at);
		}
	}
	if (get(root, "trainer")) {
		const sr_node *t = member(c, root, "", "trainer", V_STRING);
		if (t && (out->trainer = ppcc_trainer_named(t->s)) < 0)
			bad(c, t->at, "trainer", "expected megatron, torchtitan "
			    "or deepspeed");
	}
	/* what the search kept free beyond the reserve (--headroom) */
	const sr_node *hr = get(root, "headroom_bytes");
	if (hr) {
		out->headroom_bytes = figure_member(c, root, "",
						    "headroom_bytes");
		out->headroom_loc = sr_loc(c->rd, c->name, hr->at);
	}
	const sr_node *mem = get(root, "memory_limit_bytes");
	if (mem) {
		out->memory_limit_bytes = figure_member(c, root, "",
							"memory_limit_bytes");
		if (out->memory_limit_bytes <= 0 && !c->errors)
			bad(c, mem->at, "memory_limit_bytes", "expected a number > 0");
	}
	const sr_node *top = member(c, root, "", "top", V_ARRAY);
	if (c->errors || !top)
		return PPCC_EINPUT;
	out->n_top = (int)top->n;
	if (rank > top->n) {
		char msg[160];
		snprintf(msg, sizeof msg, "--rank %d: the search ranked %ld "
			 "configuration%s; give 1 to %ld", rank, top->n,
			 top->n == 1 ? "" : "s", top->n);
		bad(c, top->at, "top", top->n ? msg : "empty: the search ranked "
		    "no configuration");
		return PPCC_EINPUT;
	}
	const sr_node *x = top->first;
	for (int i = 1; i < rank; i++)
		x = x->next;
	read_entry(c, x, rank - 1, out);
	return c->errors ? PPCC_EINPUT : 0;
}

int ppcc_search_read(ppcc_search_pick *out, ppcc_arena *a, const char *path,
		     int rank, ppcc_diag *d)
{
	memset(out, 0, sizeof *out);
	const char *name = strcmp(path, "-") == 0 ? "<stdin>"
			   : ppcc_arena_strdup(a, path);
	if (!name)
		return PPCC_ENOMEM;
	out->path = name;
	out->rank = rank;
	sr_reader rd = {.a = a};
	int err = sr_read_file(&rd, path, name, d);
	if (err == 0)
		err = sr_parse(&rd, name, d);
	if (err == 0) {
		sr_check c = {&rd, name, d, 0};
		err = sr_check_all(&c, rank, out);
	}
	ppcc_free(rd.keys);
	ppcc_free(rd.pool);
	ppcc_free((char *)rd.buf);
	return err;
}

void ppcc_search_pick_locate(ppcc_config *cfg, const ppcc_search_pick *p)
{
	ppcc_pipeline *pl = &cfg->pipeline;
	pl->kind_loc = p->kind_loc;
	pl->stages_loc = p->stages_loc;
	pl->microbatches_loc = p->microbatches_loc;
	pl->chunks_loc = p->chunks_loc;
	pl->tensor_parallel_loc = p->tensor_parallel_loc;
	pl->data_parallel_loc = p->data_parallel_loc;
	pl->context_parallel_loc = p->context_parallel_loc;
	pl->global_batch_size_loc = p->global_batch_size_loc;
	pl->zero_loc = p->zero_loc;
	if (pl->expert_parallel_loc.file) {
		pl->expert_parallel_loc = p->expert_parallel_loc;
		pl->expert_tensor_parallel_loc = p->expert_tensor_parallel_loc;
	}
}
