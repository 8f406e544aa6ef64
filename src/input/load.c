/*
 * load.c - the input phase: a YAML file (model, cluster, pipeline) into a
 * ppcc_config, with every value located.
 *
 * The file is read whole (at most LOAD_MAX_FILE_BYTES), checked to be
 * UTF-8 text without NUL or control characters, and handed to libyaml's
 * event parser.  The events build a small tree in the arena: each node
 * keeps its start mark as a 1-based line and column and the file's name,
 * and each scalar is copied at once, so nothing of libyaml's outlives the
 * parse.  The builder enforces what ppcc's format needs and nothing more:
 * one document, nesting at most LOAD_MAX_DEPTH deep (checked on each start
 * event, so a hostile `[[[[...` stops after a few hundred bytes rather
 * than feeding libyaml's quadratic scanner), no anchors or aliases (the
 * billion-laughs shape cannot arise), no tags, no duplicate keys.
 *
 * The tree is then read section by section against the keys each section
 * allows.  Numbers are strict: a plain decimal, optionally with a fraction
 * and an exponent, finite after conversion, in the range the key needs;
 * YAML 1.1's yes/on, hex, octal, .inf and .nan are errors, not values.
 * The phase reports every error it finds, sorted by file, line and column,
 * and returns PPCC_EINPUT at its end.  An encoding error, a YAML syntax
 * error, an anchor or alias, or nesting too deep ends the reading of that
 * file at once, since the tree would be incomplete.
 *
 * Only this file includes <yaml.h>.
 */
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "ppcc.h"

#define LOAD_MAX_FILE_BYTES ((size_t)16 << 20)
#define LOAD_MAX_SCALAR_BYTES ((size_t)1 << 20)
#define LOAD_MAX_DEPTH 64
#define LOAD_MAX_NODES (1L << 21)
#define LOAD_MAX_GROUPS 4096
#define LOAD_MAX_ERRORS 100 /* listed; the rest are counted */

#define PATH_CAP 160
#define SHOW_CHARS 40

/* Defaults of the cluster's links (see man/ppcc.5). */
#define DEFAULT_INTRA_GB_S 300.0
#define DEFAULT_INTRA_US 5.0
#define DEFAULT_INTER_GB_S 25.0
#define DEFAULT_INTER_US 10.0
#define DEFAULT_DEVICES_PER_NODE 8
#define DEFAULT_MEMORY_BANDWIDTH_GB_S 2000.0
/* The one reserve (ppcc(5), reserved_gib): the CUDA context and NCCL's
 * buffers; the examples and the presets take it too. */
#define DEFAULT_RESERVED_GIB 2.0
#define DEFAULT_GRAD_BYTES 4.0
/* Plausibility: no device is faster or holds more (a warning; the
 * range the cost model can compute is config_check.c's). */
#define MAX_DEVICE_TFLOPS 10000.0
#define MAX_DEVICE_MEMORY_GIB 4096.0
/* The fastest link a device has one way: NVLink 5 in a node (the b200
 * and gb200 presets); one 800 Gb/s port between nodes. */
#define MAX_INTRA_GB_S 900.0
#define MAX_INTER_GB_S 100.0
/* The most memory_gib or reserved_gib taken (an error above): 1 PiB, so
 * that every sum and product of bytes the planner forms stays finite. */
#define LOAD_MAX_MEMORY_GIB 1048576.0
/* The bandwidths (links' and memory's) and link latencies taken (an error
 * outside): 1 kB/s to 1 PB/s, and at most 1000 s, where every time the
 * cost model forms from them is finite and nonzero. */
#define LOAD_MIN_GB_S 1e-6
#define LOAD_MAX_GB_S 1e6
#define LOAD_MAX_LATENCY_US 1e9

/* snprintf whose truncation is intended: messages and paths are cut at
 * their buffers' sizes. */
static void textf(char *buf, size_t cap, const char *fmt, ...)
	PPCC_PRINTF(3, 4);

static void textf(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
}

/* ---- diagnostics, held until the end and sorted ---------------------- */

typedef struct pending {
	struct pending *next;
	ppcc_severity sev;
	ppcc_loc loc;
	int file_rank; /* the model file 0, the cluster file 1 */
	long seq;
	char *msg;
} pending;

typedef enum node_kind { NODE_SCALAR, NODE_SEQ, NODE_MAP } node_kind;

/* A YAML node.  A mapping's children alternate key, value. */
typedef struct node {
	node_kind kind;
	int plain; /* a scalar written without quotes or block style */
	int n;     /* sequence items, or mapping pairs */
	size_t len;
	const char *text;
	ppcc_loc loc;
	struct node *first, *last, *next;
} node;

/* One entry of `layers:` before `repeat` is expanded and times converted. */
typedef struct layer_src {
	ppcc_layer layer;
	int repeat;
	int fwd_in_ms, bwd_in_ms, bwd_given;
	/* bwd_input_* and bwd_weight_* given (layer.bwd_flops then holds
	 * the input part until the two are added); in milliseconds */
	int split_given, input_in_ms, weight_in_ms;
} layer_src;

typedef struct loader {
	ppcc_arena *a;
	ppcc_diag *d;
	int status; /* PPCC_ENOMEM once an allocation failed */
	int errors; /* errors said so far */
	long unlisted; /* errors beyond LOAD_MAX_ERRORS, only counted */
	pending *head, **tail;
	long n_pending;
	const char *files[2]; /* names in the order diagnostics sort them */
	long nodes;
	/* the model as read, expanded once the cluster is known */
	layer_src *items;
	int n_items;
	int has_transformer;
	ppcc_transformer tf;
	const ppcc_model_preset *tf_preset; /* the transformer's, or NULL */
	/* the model file's bytes when they come from memory, not a path */
	const char *text;
	size_t text_len;
	ppcc_loc tf_loc;
	/* what fwd_ms / bwd_ms were measured on */
	const char *measured_on;
	ppcc_loc measured_on_loc;
	int measured_t;
} loader;

static void say(loader *L, ppcc_severity sev, const ppcc_loc *loc,
		const char *fmt, ...) PPCC_PRINTF(4, 5);

static void say(loader *L, ppcc_severity sev, const ppcc_loc *loc,
		const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	if (sev == PPCC_SEV_ERROR && L->errors++ >= LOAD_MAX_ERRORS) {
		L->unlisted++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	pending *p = ppcc_arena_alloc(L->a, 1, sizeof *p);
	if (p)
		p->msg = ppcc_arena_strdup(L->a, msg);
	if (!p || !p->msg) {
		L->status = PPCC_ENOMEM;
		ppcc_diag_report(L->d, sev, loc, "%s", msg);
		return;
	}
	p->sev = sev;
	p->loc = loc ? *loc : (ppcc_loc){NULL, 0, 0};
	p->file_rank = 2;
	for (int i = 0; i < 2; i++)
		if (L->files[i] && p->loc.file == L->files[i])
			p->file_rank = i;
	p->seq = L->n_pending++;
	*L->tail = p;
	L->tail = &p->next;
}

/* File order, then line and column, positionless last within a file,
 * then the order said. */
static int pending_cmp(const void *pa, const void *pb)
{
	const pending *x = *(const pending *const *)pa;
	const pending *y = *(const pending *const *)pb;
	if (x->file_rank != y->file_rank)
		return x->file_rank < y->file_rank ? -1 : 1;
	long lx = x->loc.line > 0 ? x->loc.line : LONG_MAX;
	long ly = y->loc.line > 0 ? y->loc.line : LONG_MAX;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	if (x->loc.col != y->loc.col)
		return x->loc.col < y->loc.col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void flush(loader *L)
{
	pending **v = L->n_pending
		? ppcc_arena_alloc(L->a, (size_t)L->n_pending, sizeof *v)
		: NULL;
	long n = 0;
	for (pending *p = L->head; p; p = p->next)
		if (v)
			v[n++] = p;
	if (v) {
		qsort(v, (size_t)n, sizeof *v, pending_cmp);
		for (long i = 0; i < n; i++)
			ppcc_diag_report(L->d, v[i]->sev,
					 v[i]->loc.file ? &v[i]->loc : NULL,
					 "%s", v[i]->msg);
	} else {
		for (pending *p = L->head; p; p = p->next)
			ppcc_diag_report(L->d, p->sev,
					 p->loc.file ? &p->loc : NULL, "%s",
					 p->msg);
	}
	if (L->unlisted) {
		ppcc_loc loc = {L->files[0], 0, 0};
		ppcc_diag_report(L->d, PPCC_SEV_NOTE, &loc,
				 "%ld more errors not listed", L->unlisted);
	}
	L->head = NULL;
	L->tail = &L->head;
	L->n_pending = 0;
	L->unlisted = 0;
}

/* ---- reading the bytes --------------------------------------------- */

static void errno_text(char *buf, size_t cap, int e)
{
	textf(buf, cap, "%s", strerror(e));
	if (buf[0] >= 'A' && buf[0] <= 'Z')
		buf[0] = (char)(buf[0] - 'A' + 'a');
}

/* The whole of path ("-": stdin) into *out (ppcc_malloc'd, the caller
 * frees it), at most LOAD_MAX_FILE_BYTES. */
static int read_all(unsigned char **out, size_t *out_len, loader *L,
		    const char *path, const char *name)
{
	ppcc_loc where = {name, 0, 0};
	int is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	char why[128];
	int err = 0;

	*out = NULL;
	*out_len = 0;
	if (!f) {
		errno_text(why, sizeof why, errno);
		say(L, PPCC_SEV_ERROR, &where, "cannot open: %s", why);
		return PPCC_EINPUT;
	}
	for (;;) {
		if (len == cap) {
			if (cap > LOAD_MAX_FILE_BYTES) {
				say(L, PPCC_SEV_ERROR, &where,
				    "file is larger than the limit of %zu MiB",
				    LOAD_MAX_FILE_BYTES >> 20);
				err = PPCC_EINPUT;
				goto out;
			}
			size_t ncap = cap ? cap * 2 : 64 * 1024;
			if (ncap > LOAD_MAX_FILE_BYTES + 1)
				ncap = LOAD_MAX_FILE_BYTES + 1;
			unsigned char *nbuf = ppcc_realloc(buf, ncap);
			if (!nbuf) {
				err = PPCC_ENOMEM;
				goto out;
			}
			buf = nbuf;
			cap = ncap;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0) {
			if (ferror(f)) {
				errno_text(why, sizeof why, errno ? errno : EIO);
				say(L, PPCC_SEV_ERROR, &where, "cannot read: %s",
				    why);
				err = PPCC_EINPUT;
				goto out;
			}
			break;
		}
		if (len > LOAD_MAX_FILE_BYTES) {
			say(L, PPCC_SEV_ERROR, &where,
			    "file is larger than the limit of %zu MiB",
			    LOAD_MAX_FILE_BYTES >> 20);
			err = PPCC_EINPUT;
			goto out;
		}
	}
out:
	if (!is_stdin)
		fclose(f);
	if (err < 0) {
		ppcc_free(buf);
		return err;
	}
	*out = buf;
	*out_len = len;
	return 0;
}

/* ---- encoding -------------------------------------------------------- */

/* Decodes the UTF-8 character at s (n bytes left) into *cp; returns its
 * length, or 0 for an invalid, overlong, surrogate or truncated one. */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned c = s[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	size_t w;
	uint32_t v, min;
	if (c >= 0xC2 && c <= 0xDF) {
		w = 2, v = c & 0x1F, min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		w = 3, v = c & 0x0F, min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		w = 4, v = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n < w)
		return 0;
	for (size_t i = 1; i < w; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return w;
}

/* The characters libyaml's reader accepts. */
static int yaml_printable(uint32_t c)
{
	return c == 0x09 || c == 0x0A || c == 0x0D ||
	       (c >= 0x20 && c <= 0x7E) || c == 0x85 ||
	       (c >= 0xA0 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
	       (c >= 0x10000 && c <= 0x10FFFF);
}

/* Line and column as libyaml counts them: CR LF, CR, LF, NEL, LS and PS
 * end a line; columns count characters. */
typedef struct text_pos {
	int line, col;
} text_pos;

static void text_advance(text_pos *p, uint32_t cp, const unsigned char *next,
			 size_t left)
{
	if (cp == '\r' && left > 0 && next[0] == '\n')
		p->col++; /* the LF ends the line */
	else if (cp == '\n' || cp == '\r' || cp == 0x85 || cp == 0x2028 ||
		 cp == 0x2029)
		p->line++, p->col = 1;
	else
		p->col++;
}

/* Rejects what is not UTF-8 YAML text, at the first offending byte:
 * libyaml would stop there too, with less to say. */
static int check_encoding(loader *L, const char *name, const unsigned char *s,
			  size_t n)
{
	text_pos pos = {1, 1};
	if (n >= 2 && ((s[0] == 0xFF && s[1] == 0xFE) ||
		       (s[0] == 0xFE && s[1] == 0xFF))) {
		ppcc_loc loc = {name, 1, 1};
		say(L, PPCC_SEV_ERROR, &loc,
		    "the file is utf-16 (it starts with a utf-16 byte order "
		    "mark); ppcc reads utf-8");
		return PPCC_EINPUT;
	}
	for (size_t i = 0; i < n;) {
		ppcc_loc loc = {name, pos.line, pos.col};
		uint32_t cp;
		size_t w = s[i] ? utf8_decode(s + i, n - i, &cp) : 0;
		if (s[i] == 0) {
			say(L, PPCC_SEV_ERROR, &loc,
			    "nul byte; the file must be utf-8 text");
			return PPCC_EINPUT;
		}
		if (w == 0) {
			say(L, PPCC_SEV_ERROR, &loc,
			    "invalid utf-8 byte 0x%02x; the file must be utf-8 "
			    "text", s[i]);
			return PPCC_EINPUT;
		}
		if (!yaml_printable(cp)) {
			say(L, PPCC_SEV_ERROR, &loc,
			    "control character U+%04X is not allowed in yaml",
			    (unsigned)cp);
			return PPCC_EINPUT;
		}
		i += w;
		text_advance(&pos, cp, s + i, n - i);
	}
	return 0;
}

/* The byte at libyaml's mark index (which counts characters). */
static int char_at_index(const unsigned char *s, size_t n, size_t index)
{
	size_t i = 0;
	for (size_t k = 0; k < index && i < n; k++) {
		uint32_t cp;
		size_t w = utf8_decode(s + i, n - i, &cp);
		i += w ? w : 1;
	}
	return i < n ? s[i] : -1;
}

/* Line and column of a byte offset. */
static text_pos pos_of_offset(const unsigned char *s, size_t n, size_t off)
{
	text_pos pos = {1, 1};
	for (size_t i = 0; i < off && i < n;) {
		uint32_t cp;
		size_t w = utf8_decode(s + i, n - i, &cp);
		if (!w)
			w = 1, cp = s[i];
		i += w;
		text_advance(&pos, cp, s + i, n - i);
	}
	return pos;
}

/* ---- the node tree ----------------------------------------------------- */

/* A scalar as a message shows it: at most SHOW_CHARS characters, and
 * control characters (C0, DEL and C1, which a terminal might obey)
 * escaped.  The text is valid UTF-8 (libyaml decoded it). */
static void show_text(char *buf, size_t cap, const char *s, size_t len)
{
	size_t o = 0;
	int chars = 0;
	for (size_t i = 0; i < len && o + 8 < cap; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c & 0xC0) != 0x80 && chars++ == SHOW_CHARS) {
			o += (size_t)snprintf(buf + o, cap - o, "...");
			break;
		}
		if (c < 0x20 || c == 0x7F) {
			o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
		} else if (c == 0xC2 && i + 1 < len &&
			   (unsigned char)s[i + 1] >= 0x80 &&
			   (unsigned char)s[i + 1] <= 0x9F) {
			o += (size_t)snprintf(buf + o, cap - o, "\\u%04x",
					      (unsigned char)s[i + 1]);
			i++;
		} else {
			buf[o++] = (char)c;
		}
	}
	buf[o < cap ? o : cap - 1] = '\0';
}

/* "a mapping", "a list", "an empty value", "'-1'", "a quoted string
 * '12'". */
static void describe(char *buf, size_t cap, const node *n)
{
	char text[SHOW_CHARS * 4 + 16];
	if (n->kind == NODE_MAP) {
		textf(buf, cap, n->n ? "a mapping" : "an empty mapping");
	} else if (n->kind == NODE_SEQ) {
		textf(buf, cap, n->n ? "a list" : "an empty list");
	} else if (n->plain && n->len == 0) {
		textf(buf, cap, "an empty value");
	} else {
		show_text(text, sizeof text, n->text, n->len);
		textf(buf, cap, "%s'%s'", n->plain ? "" : "a quoted string ",
			 text);
	}
}

static int scalar_is(const node *n, const char *s)
{
	return n->kind == NODE_SCALAR && n->len == strlen(s) &&
	       memcmp(n->text, s, n->len) == 0;
}

static int key_cmp(const void *pa, const void *pb)
{
	const node *x = *(const node *const *)pa;
	const node *y = *(const node *const *)pb;
	size_t m = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->text, y->text, m);
	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	if (x->loc.line != y->loc.line)
		return x->loc.line < y->loc.line ? -1 : 1;
	return (x->loc.col > y->loc.col) - (x->loc.col < y->loc.col);
}

/* Each repeated key of a mapping, citing its first occurrence.  Sorting
 * keeps this O(n log n) for a mapping of many keys. */
static void check_duplicates(loader *L, const node *map)
{
	if (map->n < 2)
		return;
	const node **keys = ppcc_arena_alloc(L->a, (size_t)map->n, sizeof *keys);
	if (!keys) {
		L->status = PPCC_ENOMEM;
		return;
	}
	int n = 0;
	for (const node *k = map->first; k; k = k->next ? k->next->next : NULL)
		if (k->kind == NODE_SCALAR)
			keys[n++] = k;
	qsort(keys, (size_t)n, sizeof *keys, key_cmp);
	for (int i = 0, first = 0; i < n; i++) {
		if (i > 0 && keys[i]->len == keys[first]->len &&
		    memcmp(keys[i]->text, keys[first]->text, keys[i]->len) == 0) {
			char text[SHOW_CHARS * 4 + 16];
			show_text(text, sizeof text, keys[i]->text, keys[i]->len);
			say(L, PPCC_SEV_ERROR, &keys[i]->loc,
			    "duplicate key '%s' (first at line %d)", text,
			    keys[first]->loc.line);
		} else {
			first = i;
		}
	}
}

static void append_child(node *parent, node *child)
{
	if (parent->last)
		parent->last->next = child;
	else
		parent->first = child;
	parent->last = child;
	parent->n++; /* children: a mapping's count is halved at its end */
}

/* libyaml's complaint, reworded: lower case, with its context. */
static void yaml_failure(loader *L, const yaml_parser_t *p, const char *name,
			 const unsigned char *buf, size_t len)
{
	char problem[256], context[128];
	textf(problem, sizeof problem, "%s",
		 p->problem ? p->problem : "invalid yaml");
	textf(context, sizeof context, "%s", p->context ? p->context : "");
	for (char *c = problem; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	for (char *c = context; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');

	ppcc_loc loc = {name, 0, 0};
	if (p->error == YAML_READER_ERROR) {
		text_pos pos = pos_of_offset(buf, len, p->problem_offset);
		loc.line = pos.line;
		loc.col = pos.col;
		say(L, PPCC_SEV_ERROR, &loc, "%s", problem);
		return;
	}
	loc.line = (int)p->problem_mark.line + 1;
	loc.col = (int)p->problem_mark.column + 1;
	if (char_at_index(buf, len, p->problem_mark.index) == '\t' &&
	    strstr(problem, "cannot start any token")) {
		say(L, PPCC_SEV_ERROR, &loc,
		    "tab character where yaml allows only spaces; indent with "
		    "spaces");
		return;
	}
	if (!context[0]) {
		say(L, PPCC_SEV_ERROR, &loc, "%s", problem);
	} else if (p->context_mark.line == p->problem_mark.line &&
		   p->context_mark.column == p->problem_mark.column) {
		say(L, PPCC_SEV_ERROR, &loc, "%s %s", problem, context);
	} else {
		say(L, PPCC_SEV_ERROR, &loc, "%s %s at line %d, column %d",
		    problem, context, (int)p->context_mark.line + 1,
		    (int)p->context_mark.column + 1);
	}
}

/* Builds the tree of one YAML document from libyaml's events into *out
 * (NULL for an empty file).  Stops at the first structural problem. */
static int parse_tree(node **out, loader *L, const char *name,
		      const unsigned char *buf, size_t len)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int have_ev = 0, docs = 0, depth = 0, err = 0;
	node *stack[LOAD_MAX_DEPTH];
	node *root = NULL;

	*out = NULL;
	if (!yaml_parser_initialize(&p))
		return PPCC_ENOMEM;
	yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
	yaml_parser_set_input_string(&p, buf, len);
	for (;;) {
		if (!yaml_parser_parse(&p, &ev)) {
			if (p.error == YAML_MEMORY_ERROR) {
				err = PPCC_ENOMEM;
			} else {
				yaml_failure(L, &p, name, buf, len);
				err = PPCC_EINPUT;
			}
			goto out;
		}
		have_ev = 1;
		ppcc_loc loc = {name, (int)ev.start_mark.line + 1,
				(int)ev.start_mark.column + 1};
		const unsigned char *anchor = NULL, *tag = NULL;
		node *n = NULL;

		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			goto out;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1) {
				say(L, PPCC_SEV_ERROR, &loc,
				    "a second yaml document; ppcc reads one "
				    "document per file");
				err = PPCC_EINPUT;
				goto out;
			}
			break;
		case YAML_ALIAS_EVENT:
			say(L, PPCC_SEV_ERROR, &loc,
			    "yaml aliases are not supported ('*%.40s')",
			    (const char *)ev.data.alias.anchor);
			err = PPCC_EINPUT;
			goto out;
		case YAML_SCALAR_EVENT:
			anchor = ev.data.scalar.anchor;
			tag = ev.data.scalar.tag;
			break;
		case YAML_SEQUENCE_START_EVENT:
			anchor = ev.data.sequence_start.anchor;
			tag = ev.data.sequence_start.tag;
			break;
		case YAML_MAPPING_START_EVENT:
			anchor = ev.data.mapping_start.anchor;
			tag = ev.data.mapping_start.tag;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			n = stack[--depth];
			if (n->kind == NODE_MAP) {
				n->n /= 2;
				check_duplicates(L, n);
				if (L->status) {
					err = L->status;
					goto out;
				}
			}
			n = NULL;
			break;
		default:
			break;
		}

		if (anchor) {
			say(L, PPCC_SEV_ERROR, &loc,
			    "yaml anchors are not supported ('&%.40s')",
			    (const char *)anchor);
			err = PPCC_EINPUT;
			goto out;
		}
		if (ev.type == YAML_SCALAR_EVENT ||
		    ev.type == YAML_SEQUENCE_START_EVENT ||
		    ev.type == YAML_MAPPING_START_EVENT) {
			if (tag) {
				char text[SHOW_CHARS * 4 + 16];
				const char *t = (const char *)tag;
				const char *std = "tag:yaml.org,2002:";
				int short_form = strncmp(t, std, strlen(std)) == 0;
				if (short_form)
					t += strlen(std);
				show_text(text, sizeof text, t, strlen(t));
				say(L, PPCC_SEV_ERROR, &loc,
				    "yaml tags are not supported ('%s%s')",
				    short_form ? "!!" : "", text);
			}
			if (++L->nodes > LOAD_MAX_NODES) {
				say(L, PPCC_SEV_ERROR, &loc,
				    "more than %ld yaml nodes", LOAD_MAX_NODES);
				err = PPCC_EINPUT;
				goto out;
			}
			if (ev.type != YAML_SCALAR_EVENT &&
			    depth == LOAD_MAX_DEPTH) {
				say(L, PPCC_SEV_ERROR, &loc,
				    "nesting deeper than %d levels",
				    LOAD_MAX_DEPTH);
				err = PPCC_EINPUT;
				goto out;
			}
			n = ppcc_arena_alloc(L->a, 1, sizeof *n);
			if (!n) {
				err = PPCC_ENOMEM;
				goto out;
			}
			n->loc = loc;
		}
		if (n && ev.type == YAML_SCALAR_EVENT) {
			if (ev.data.scalar.length > LOAD_MAX_SCALAR_BYTES) {
				say(L, PPCC_SEV_ERROR, &loc,
				    "a scalar longer than the limit of %zu MiB",
				    LOAD_MAX_SCALAR_BYTES >> 20);
				err = PPCC_EINPUT;
				goto out;
			}
			n->kind = NODE_SCALAR;
			n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			n->len = ev.data.scalar.length;
			n->text = ppcc_arena_strndup(
				L->a, (const char *)ev.data.scalar.value, n->len);
			if (!n->text) {
				err = PPCC_ENOMEM;
				goto out;
			}
		} else if (n) {
			n->kind = ev.type == YAML_MAPPING_START_EVENT ? NODE_MAP
								      : NODE_SEQ;
		}
		if (n) {
			if (depth > 0)
				append_child(stack[depth - 1], n);
			else
				root = n;
			if (n->kind != NODE_SCALAR)
				stack[depth++] = n;
		}
		yaml_event_delete(&ev);
		have_ev = 0;
	}
out:
	if (have_ev)
		yaml_event_delete(&ev);
	yaml_parser_delete(&p);
	if (err == 0)
		*out = root;
	return err;
}

/* Reads, checks and parses one file; *out is NULL for an empty one. */
static int load_tree(node **out, loader *L, const char *path,
		     const char *name, uint64_t *fingerprint)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	int err;

	*out = NULL;
	if (!path && L->text) {
		if (L->text_len > LOAD_MAX_FILE_BYTES) {
			ppcc_loc where = {name, 0, 0};
			say(L, PPCC_SEV_ERROR, &where, "file is larger than the "
			    "limit of %zu MiB", LOAD_MAX_FILE_BYTES >> 20);
			return PPCC_EINPUT;
		}
		if (!(buf = ppcc_malloc(L->text_len + 1)))
			return PPCC_ENOMEM;
		memcpy(buf, L->text, L->text_len);
		len = L->text_len;
	} else if ((err = read_all(&buf, &len, L, path, name)) < 0) {
		goto out;
	}
	if (fingerprint)
		*fingerprint = ppcc_fnv1a(PPCC_FNV1A_BASIS, buf, len);
	/* A UTF-8 byte order mark is dropped here, so that columns on the
	 * first line count from the first character after it. */
	size_t skip = len >= 3 && buf[0] == 0xEF && buf[1] == 0xBB &&
			      buf[2] == 0xBF ? 3 : 0;
	if ((err = check_encoding(L, name, buf + skip, len - skip)) < 0 ||
	    (err = parse_tree(out, L, name, buf + skip, len - skip)) < 0)
		goto out;
out:
	ppcc_free(buf);
	return err;
}

/* ---- reading values ----------------------------------------------------- */

/* A mapping being read: its keys, the path that names it in messages
 * ("model.layers[2]"; "" at the top level) and where to report a key it
 * lacks. */
typedef struct section {
	loader *L;
	const node *map; /* NULL: absent or not a mapping */
	const char *const *known;
	unsigned typos; /* bit i: an unknown key looks like known[i] */
	char path[PATH_CAP];
	ppcc_loc where;
} section;

static void key_path(char *buf, const section *s, const char *key)
{
	textf(buf, PATH_CAP, "%s%s%s", s->path, s->path[0] ? "." : "", key);
}

static const node *sec_get(const section *s, const char *key,
			   const node **out_key)
{
	if (out_key)
		*out_key = NULL;
	if (!s->map)
		return NULL;
	for (const node *k = s->map->first; k && k->next; k = k->next->next)
		if (scalar_is(k, key)) {
			if (out_key)
				*out_key = k;
			return k->next;
		}
	return NULL;
}

/* Restricted Damerau-Levenshtein distance of two short keys. */
static int edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
	enum { MAXK = 48 };
	int d[MAXK + 1][MAXK + 1];
	if (na > MAXK || nb > MAXK)
		return INT_MAX;
	for (size_t i = 0; i <= na; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= nb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= na; i++)
		for (size_t j = 1; j <= nb; j++) {
			int cost = a[i - 1] != b[j - 1];
			int v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[na][nb];
}

/* The known word nearest to s, or NULL when none is near enough to be a
 * likely typo. */
static const char *suggest(const char *s, size_t len,
			   const char *const *known)
{
	const char *best = NULL;
	int best_d = INT_MAX;
	int limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
	for (int i = 0; known[i]; i++) {
		int dist = edit_distance(s, len, known[i], strlen(known[i]));
		if (dist <= limit && dist < best_d) {
			best = known[i];
			best_d = dist;
		}
	}
	return best;
}

static void list_words(char *buf, size_t cap, const char *const *known)
{
	size_t o = 0;
	buf[0] = '\0';
	for (int i = 0; known[i] && o < cap; i++) {
		const char *sep = !known[i + 1] && i > 0 ? (i > 1 ? ", or " : " or ")
			: i > 0 ? ", " : "";
		o += (size_t)snprintf(buf + o, cap - o, "%s%s", sep, known[i]);
	}
}

/* Keys of what ppcc does not model, as ppcc, Megatron-LM and Hugging
 * Face spell them: refused by name, not as unknown keys, in any section. */
static const struct {
	const char *key, *what, *hint; /* hint NULL: leave the key out */
} unmodelled[] = {
	{"attention_chunk_size", "chunked attention", NULL},
	{"mamba", "state-space (Mamba) layers", NULL},
	{"hybrid_override_pattern", "hybrid state-space (Mamba) layers", NULL},
	{"linear_attention", "linear attention", NULL},
};

/* Other projects' names of ppcc's keys, which a user pastes from a
 * Megatron-LM or Hugging Face configuration: each gets the key to write
 * instead. */
static const struct {
	const char *key, *project, *ours;
} foreign[] = {
	{"num_experts", "Megatron-LM's and Hugging Face's",
	 "transformer.moe.experts"},
	{"num_local_experts", "Hugging Face's", "transformer.moe.experts"},
	{"n_routed_experts", "Hugging Face's", "transformer.moe.experts"},
	{"moe_router_topk", "Megatron-LM's", "transformer.moe.top_k"},
	{"num_experts_per_tok", "Hugging Face's", "transformer.moe.top_k"},
	{"moe_ffn_hidden_size", "Megatron-LM's", "transformer.moe.ffn_hidden"},
	{"moe_intermediate_size", "Hugging Face's",
	 "transformer.moe.ffn_hidden"},
	{"n_shared_experts", "Hugging Face's",
	 "transformer.moe.shared_experts"},
	{"first_k_dense_replace", "Hugging Face's",
	 "transformer.moe.dense_layers"},
	{"moe_layer_freq", "Megatron-LM's", "transformer.moe.every"},
	{"moe_router_num_groups", "Megatron-LM's", "transformer.moe.groups"},
	{"n_group", "Hugging Face's", "transformer.moe.groups"},
	{"moe_router_group_topk", "Megatron-LM's",
	 "transformer.moe.group_topk"},
	{"topk_group", "Hugging Face's", "transformer.moe.group_topk"},
	{"num_distributed_optimizer_instances", "Megatron-LM's (d over it)",
	 "pipeline.data_parallel_shard"},
	{"data_parallel_shard_degree", "torchtitan's",
	 "pipeline.data_parallel_shard"},
	{"recompute_granularity", "Megatron-LM's", "transformer.recompute"},
	{"decoder_sparse_step", "Hugging Face's", "transformer.moe.every"},
	{"moe_expert_capacity_factor", "Megatron-LM's",
	 "transformer.moe.capacity_factor"},
	{"num_layers", "Megatron-LM's", "transformer.layers"},
	{"num_hidden_layers", "Hugging Face's", "transformer.layers"},
	{"hidden_size", "Megatron-LM's and Hugging Face's",
	 "transformer.hidden"},
	{"num_attention_heads", "Megatron-LM's and Hugging Face's",
	 "transformer.heads"},
	{"num_key_value_heads", "Hugging Face's", "transformer.kv_heads"},
	{"num_query_groups", "Megatron-LM's", "transformer.kv_heads"},
	{"ffn_hidden_size", "Megatron-LM's", "transformer.ffn_hidden"},
	{"intermediate_size", "Hugging Face's", "transformer.ffn_hidden"},
	{"kv_channels", "Megatron-LM's", "transformer.head_dim"},
	{"q_lora_rank", "Megatron-LM's and Hugging Face's",
	 "transformer.attention.q_lora_rank"},
	{"kv_lora_rank", "Megatron-LM's and Hugging Face's",
	 "transformer.attention.kv_lora_rank"},
	{"qk_nope_head_dim", "Hugging Face's",
	 "transformer.attention.qk_nope_head_dim"},
	{"qk_head_dim", "Megatron-LM's",
	 "transformer.attention.qk_nope_head_dim"},
	{"qk_rope_head_dim", "Hugging Face's",
	 "transformer.attention.qk_rope_head_dim"},
	{"qk_pos_emb_head_dim", "Megatron-LM's",
	 "transformer.attention.qk_rope_head_dim"},
	{"v_head_dim", "Megatron-LM's and Hugging Face's",
	 "transformer.attention.v_head_dim"},
	{"mtp_num_layers", "Megatron-LM's", "transformer.mtp_layers"},
	{"num_nextn_predict_layers", "Hugging Face's",
	 "transformer.mtp_layers"},
	{"attention_bias", "Hugging Face's", "transformer.biases"},
	{"qk_layernorm", "Megatron-LM's", "transformer.qk_norm"},
	{"use_qk_norm", "Hugging Face's", "transformer.qk_norm"},
	{"vocab_size", "Megatron-LM's and Hugging Face's", "transformer.vocab"},
	{"seq_length", "Megatron-LM's", "transformer.seq_len"},
};

static const char *foreign_key(const node *k, const char **project)
{
	for (size_t i = 0; i < sizeof foreign / sizeof *foreign; i++)
		if (scalar_is(k, foreign[i].key)) {
			*project = foreign[i].project;
			return foreign[i].ours;
		}
	return NULL;
}

static const char *unmodelled_key(const node *k, const char **hint)
{
	for (size_t i = 0; i < sizeof unmodelled / sizeof *unmodelled; i++)
		if (scalar_is(k, unmodelled[i].key)) {
			*hint = unmodelled[i].hint ? unmodelled[i].hint
				: "leave the key out when the model has none";
			return unmodelled[i].what;
		}
	return NULL;
}

/* Opens the mapping `value` (under key, or a sequence item when key is
 * NULL) as a section, reporting a value that is not a mapping and every
 * key it has that is not in known. */
static void unread_reals(loader *L, const node *n);

static int sec_open(section *out, loader *L, const section *parent,
		    const node *key, const char *name, const node *value,
		    const char *const *known)
{
	char got[SHOW_CHARS * 4 + 32];
	out->L = L;
	out->map = NULL;
	out->known = known;
	out->typos = 0;
	if (!parent)
		textf(out->path, PATH_CAP, "%s", name);
	else if (key)
		key_path(out->path, parent, name);
	else
		textf(out->path, PATH_CAP, "%s%s", parent->path, name);
	out->where = key ? key->loc : value->loc;
	if (value->kind != NODE_MAP) {
		describe(got, sizeof got, value);
		if (out->path[0])
			say(L, PPCC_SEV_ERROR, &value->loc,
			    "%s: expected a mapping, got %s", out->path, got);
		else
			say(L, PPCC_SEV_ERROR, &value->loc,
			    "expected a mapping at the top level, got %s", got);
		return -1;
	}
	out->map = value;
	for (const node *k = value->first; k && k->next; k = k->next->next) {
		if (k->kind != NODE_SCALAR) {
			describe(got, sizeof got, k);
			say(L, PPCC_SEV_ERROR, &k->loc,
			    "%s%sexpected a key name, got %s", out->path,
			    out->path[0] ? ": " : "", got);
			continue;
		}
		int ok = 0;
		for (int i = 0; known[i] && !ok; i++)
			ok = scalar_is(k, known[i]);
		if (ok)
			continue;
		char text[SHOW_CHARS * 4 + 16], where[PATH_CAP + 8], words[512];
		if (L->errors >= LOAD_MAX_ERRORS) {
			say(L, PPCC_SEV_ERROR, &k->loc, "unknown key");
			continue; /* counted only: spare the suggestion */
		}
		show_text(text, sizeof text, k->text, k->len);
		textf(where, sizeof where, "%s%s", out->path[0] ? " in " : "",
			 out->path);
		const char *hint = NULL, *what = unmodelled_key(k, &hint);
		if (what) {
			say(L, PPCC_SEV_ERROR, &k->loc,
			    "ppcc does not model %s ('%s'%s): planned without "
			    "it, the figures would be another model's; %s",
			    what, text, where, hint);
			if (k->next)
				unread_reals(L, k->next);
			continue;
		}
		const char *project = NULL, *ours = foreign_key(k, &project);
		if (ours) {
			/* the key it stands for, when the section has it, is
			 * not missing as well */
			const char *last = strrchr(ours, '.') + 1;
			for (int i = 0; known[i] && i < 32; i++)
				if (strcmp(known[i], last) == 0)
					out->typos |= 1u << i;
			say(L, PPCC_SEV_ERROR, &k->loc,
			    "unknown key '%s'%s: that is %s name; did you mean "
			    "'%s'?", text, where, project, ours);
			if (k->next)
				unread_reals(L, k->next);
			continue;
		}
		const char *near = suggest(k->text, k->len, known);
		for (int i = 0; near && known[i] && i < 32; i++)
			if (near == known[i])
				out->typos |= 1u << i;
		if (near) {
			say(L, PPCC_SEV_ERROR, &k->loc,
			    "unknown key '%s'%s; did you mean '%s'?", text,
			    where, near);
		} else {
			list_words(words, sizeof words, known);
			say(L, PPCC_SEV_ERROR, &k->loc,
			    "unknown key '%s'%s; expected %s", text, where,
			    words);
		}
		if (k->next)
			unread_reals(L, k->next);
	}
	return 0;
}

/* Whether an unknown key of the section looked like a typo of key: its
 * error already says what is missing. */
static int sec_has_typo_of(const section *s, const char *key)
{
	for (int i = 0; s->known && s->known[i] && i < 32; i++)
		if (strcmp(s->known[i], key) == 0)
			return (s->typos >> i) & 1;
	return 0;
}

static void sec_missing(const section *s, const char *key)
{
	if (sec_has_typo_of(s, key))
		return;
	if (s->path[0])
		say(s->L, PPCC_SEV_ERROR, &s->where,
		    "%s: missing required key '%s'", s->path, key);
	else
		say(s->L, PPCC_SEV_ERROR, &s->where,
		    "missing required key '%s'", key);
}

static void sec_bad(const section *s, const char *key, const node *v,
		    const char *expected)
{
	char path[PATH_CAP], got[SHOW_CHARS * 4 + 32];
	key_path(path, s, key);
	describe(got, sizeof got, v);
	say(s->L, PPCC_SEV_ERROR, &v->loc, "%s: expected %s, got %s", path,
	    expected, got);
}

/* 1: read; 0: absent (an error when required); -1: bad (reported). */
static int sec_string(const section *s, const char *key, int required,
		      const char **out)
{
	const node *v = sec_get(s, key, NULL);
	if (!v) {
		if (required && s->map)
			sec_missing(s, key);
		return required ? -1 : 0;
	}
	if (v->kind != NODE_SCALAR || (v->plain && v->len == 0) ||
	    (v->plain && (scalar_is(v, "~") || scalar_is(v, "null") ||
			  scalar_is(v, "Null") || scalar_is(v, "NULL")))) {
		sec_bad(s, key, v, "a name");
		return -1;
	}
	if (memchr(v->text, '\0', v->len)) {
		sec_bad(s, key, v, "a name without nul characters");
		return -1;
	}
	*out = v->text;
	return 1;
}

/* A plain decimal number: sign, digits with no leading zero, an optional
 * fraction and exponent.  0: not one; 1: *out is finite; -1: out of
 * range. */
static int parse_decimal(const node *v, double *out)
{
	const char *s = v->text;
	size_t n = v->len, i = 0, int_digits = 0, frac_digits = 0;
	if (v->kind != NODE_SCALAR || !v->plain || n == 0 || n > 64)
		return 0;
	if (s[i] == '+' || s[i] == '-')
		i++;
	size_t start = i;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++, int_digits++;
	if (int_digits > 1 && s[start] == '0')
		return 0;
	if (i < n && s[i] == '.') {
		i++;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++, frac_digits++;
	}
	if (int_digits + frac_digits == 0)
		return 0;
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		size_t exp_digits = 0;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++, exp_digits++;
		if (exp_digits == 0)
			return 0;
	}
	if (i != n)
		return 0;
	/* strtod reads the locale's decimal point, which a program linking
	 * ppcc may have set to ','; the text, checked above, is rewritten
	 * in it so that "0.5" means one half in any locale. */
	char tmp[64 + 16];
	const char *dp = localeconv()->decimal_point;
	if (!dp || !dp[0] || strlen(dp) > 8)
		dp = ".";
	size_t dpl = strlen(dp), o = 0;
	for (size_t k = 0; k < n; k++) {
		if (s[k] == '.') {
			memcpy(tmp + o, dp, dpl);
			o += dpl;
		} else {
			tmp[o++] = s[k];
		}
	}
	tmp[o] = '\0';
	errno = 0;
	double x = strtod(tmp, NULL);
	if (errno == ERANGE || !isfinite(x))
		return -1;
	*out = x;
	return 1;
}

/* A value that is not read (an unknown key's, an ignored section's) is
 * still held to the rule for numbers: a plain decimal beyond a double's
 * range is an error at its place, whatever holds it (ppcc(5)).  The
 * recursion is bounded by LOAD_MAX_DEPTH. */
static void unread_reals(loader *L, const node *n)
{
	double x;
	if (n->kind == NODE_SCALAR) {
		if (parse_decimal(n, &x) < 0) {
			char text[SHOW_CHARS * 4 + 16];
			show_text(text, sizeof text, n->text, n->len);
			say(L, PPCC_SEV_ERROR, &n->loc,
			    "number '%s' overflows or underflows a double; "
			    "give 0 or one from about 2.3e-308 to 1.7e308 in "
			    "size", text);
		}
		return;
	}
	for (const node *c = n->first; c; c = c->next)
		unread_reals(L, c);
}

typedef enum num_kind { NUM_POSITIVE, NUM_NONNEG, NUM_FRACTION } num_kind;

static int sec_number(const section *s, const char *key, num_kind kind,
		      int required, double *out)
{
	static const char *const expected[] = {
		[NUM_POSITIVE] = "a positive finite number",
		[NUM_NONNEG] = "a finite number >= 0",
		[NUM_FRACTION] = "a number in (0, 1]",
	};
	const node *v = sec_get(s, key, NULL);
	double x = 0;
	if (!v) {
		if (required && s->map)
			sec_missing(s, key);
		return required ? -1 : 0;
	}
	int ok = parse_decimal(v, &x) == 1;
	if (ok && kind == NUM_POSITIVE)
		ok = x > 0;
	else if (ok && kind == NUM_NONNEG)
		ok = x >= 0;
	else if (ok && kind == NUM_FRACTION)
		ok = x > 0 && x <= 1;
	if (!ok) {
		sec_bad(s, key, v, expected[kind]);
		return -1;
	}
	*out = x == 0 ? 0.0 : x; /* no -0 */
	return 1;
}

static int sec_int(const section *s, const char *key, int min, int max,
		   int required, int *out, ppcc_loc *out_loc)
{
	const node *k;
	const node *v = sec_get(s, key, &k);
	double x = 0;
	if (!v) {
		if (required && s->map)
			sec_missing(s, key);
		return required ? -1 : 0;
	}
	int r = parse_decimal(v, &x);
	int integral = r == 1 && x == floor(x);
	if (!integral || x < min || x > max) {
		char expected[64];
		if (max == INT_MAX && min == 1 && !(integral && x > max))
			textf(expected, sizeof expected, "a positive integer");
		else if (max == INT_MAX && min == 0 && !(integral && x > max))
			textf(expected, sizeof expected, "an integer >= 0");
		else
			textf(expected, sizeof expected,
				 "an integer from %d to %d", min, max);
		sec_bad(s, key, v, expected);
		return -1;
	}
	*out = (int)x;
	if (out_loc)
		*out_loc = k->loc;
	return 1;
}

static int sec_bool(const section *s, const char *key, int *out)
{
	const node *v = sec_get(s, key, NULL);
	if (!v)
		return 0;
	if (v->plain && (scalar_is(v, "true") || scalar_is(v, "True") ||
			 scalar_is(v, "TRUE"))) {
		*out = 1;
		return 1;
	}
	if (v->plain && (scalar_is(v, "false") || scalar_is(v, "False") ||
			 scalar_is(v, "FALSE"))) {
		*out = 0;
		return 1;
	}
	sec_bad(s, key, v, "true or false");
	return -1;
}

/* One of words (quoted or not: these are strings), as its index. */
static int sec_word(const section *s, const char *key,
		    const char *const *words, int *out, ppcc_loc *out_loc)
{
	const node *k;
	const node *v = sec_get(s, key, &k);
	if (!v)
		return 0;
	for (int i = 0; words[i] && v->kind == NODE_SCALAR; i++)
		if (scalar_is(v, words[i])) {
			*out = i;
			if (out_loc)
				*out_loc = k->loc;
			return 1;
		}
	char path[PATH_CAP], got[SHOW_CHARS * 4 + 32], list[256];
	key_path(path, s, key);
	describe(got, sizeof got, v);
	const char *near = v->kind == NODE_SCALAR
		? suggest(v->text, v->len, words) : NULL;
	list_words(list, sizeof list, words);
	if (near)
		say(s->L, PPCC_SEV_ERROR, &v->loc,
		    "%s: expected %s, got %s; did you mean '%s'?", path, list,
		    got, near);
	else
		say(s->L, PPCC_SEV_ERROR, &v->loc, "%s: expected %s, got %s",
		    path, list, got);
	return -1;
}

/* Exactly one of two keys; returns 0 or 1 for the one given, -1 for
 * neither or both (reported). */
static int sec_one_of(const section *s, const char *a, const char *b,
		      int required)
{
	const node *ka, *kb;
	const node *va = sec_get(s, a, &ka), *vb = sec_get(s, b, &kb);
	if (va && vb) {
		const node *later = ka->loc.line > kb->loc.line ||
			(ka->loc.line == kb->loc.line && ka->loc.col > kb->loc.col)
			? ka : kb;
		say(s->L, PPCC_SEV_ERROR, &later->loc,
		    "%s: give either %s or %s, not both", s->path, a, b);
		return -1;
	}
	if (!va && !vb) {
		if (required && s->map && !sec_has_typo_of(s, a) &&
		    !sec_has_typo_of(s, b))
			say(s->L, PPCC_SEV_ERROR, &s->where,
			    "%s: give either %s or %s", s->path, a, b);
		return required ? -1 : 2;
	}
	return va ? 0 : 1;
}

/* ---- model -------------------------------------------------------------- */

static const char *const model_keys[] = {"name", "layers", "transformer",
					 "measured_on",
					 "measured_tensor_parallel", NULL};
static const char *const layer_keys[] = {
	"name", "repeat", "fwd_flops", "fwd_ms", "bwd_flops", "bwd_ms",
	"bwd_input_flops", "bwd_input_ms", "bwd_weight_flops", "bwd_weight_ms",
	"params", "activation_bytes", "stash_bytes", "stash_weight_bytes",
	"bytes_per_param", NULL};
static const char *const transformer_keys[] = {
	"preset", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab",
	"seq_len", "micro_batch_size", "recompute", "swiglu",
	"bytes_per_param", "sequence_parallel", "flash_attention", "norm",
	"position", "rope_theta", "tie_embeddings", "head_dim", "moe",
	"attention", "mtp_layers", "sliding_window", "sliding_window_pattern",
	"biases", "attention_sinks", "qk_norm", "precision",
	"recompute_modules", "attention_kernel", NULL};
static const char *const precision_words[] = {"bf16", "fp8", NULL};
/* ppcc_attn_kernel's order */
static const char *const attention_kernel_words[] = {"auto", "fa2", "cudnn",
						     NULL};
static const char *const attention_keys[] = {
	"kind", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
	"qk_rope_head_dim", "v_head_dim", NULL};
/* mha and gqa are the same attention (kv_heads tells them apart) */
static const char *const attention_words[] = {"mha", "gqa", "mla", NULL};
static const char *const moe_keys[] = {
	"experts", "top_k", "ffn_hidden", "shared_experts", "dense_layers",
	"every", "capacity_factor", "imbalance", "node_limit", "dispatch",
	"groups", "group_topk", NULL};
static const char *const dispatch_words[] = {"bf16", "fp8", NULL};
static const char *const recompute_words[] = {"none", "selective", "full",
					      NULL};
/* Megatron-LM's recompute_modules (d98e8a6 transformer_config.py:
 * 1945-1957) that ppcc refuses, each with what it recomputes; those it
 * models are ppcc_recompute_module_names */
static const struct {
	const char *name, *what;
} rc_refused[] = {
	{"mlp", "the dense FFN"},
	{"moe", "the whole mixture-of-experts layer"},
	{"shared_experts", "the shared experts"},
	{"gdn_norm_out", "the GatedDeltaNet output norm"},
	{"gdp_in_proj", "the GatedDeltaProduct input projection"},
	{"gdp_qkv", "the GatedDeltaProduct convolution"},
	{"mhc", "hyper-connections"},
};
/* in the order of ppcc_norm and ppcc_position */
static const char *const norm_words[] = {"rmsnorm", "layernorm", NULL};
static const char *const position_words[] = {"rope", "learned", NULL};

static int read_layer(layer_src *out, loader *L, const section *model,
		      const node *item, int index)
{
	section s;
	char name[32];
	int errors = L->errors; /* the section's unknown keys count too */
	textf(name, sizeof name, ".layers[%d]", index);
	if (sec_open(&s, L, model, NULL, name, item, layer_keys) < 0)
		return -1;
	ppcc_layer *y = &out->layer;
	y->loc = item->loc;
	out->repeat = 1;
	sec_string(&s, "name", 1, &y->name);
	sec_int(&s, "repeat", 1, PPCC_MAX_LAYERS, 0, &out->repeat, NULL);
	int f = sec_one_of(&s, "fwd_flops", "fwd_ms", 1);
	if (f == 0)
		sec_number(&s, "fwd_flops", NUM_POSITIVE, 1, &y->fwd_flops);
	else if (f == 1)
		out->fwd_in_ms =
			sec_number(&s, "fwd_ms", NUM_POSITIVE, 1, &y->fwd_flops) == 1;
	int b = sec_one_of(&s, "bwd_flops", "bwd_ms", 0);
	if (b == 0)
		out->bwd_given =
			sec_number(&s, "bwd_flops", NUM_NONNEG, 1, &y->bwd_flops) == 1;
	else if (b == 1)
		out->bwd_given = out->bwd_in_ms =
			sec_number(&s, "bwd_ms", NUM_NONNEG, 1, &y->bwd_flops) == 1;
	/* or the backward in its two parts, each in FLOPs or milliseconds */
	int bi = sec_one_of(&s, "bwd_input_flops", "bwd_input_ms", 0);
	int bw = sec_one_of(&s, "bwd_weight_flops", "bwd_weight_ms", 0);
	static const char *const part_key[2][2] = {
		{"bwd_input_flops", "bwd_input_ms"},
		{"bwd_weight_flops", "bwd_weight_ms"}};
	if (bi >= 0 && bw >= 0 && (bi == 2) != (bw == 2)) {
		int given = bi == 2; /* 0: I, 1: W */
		const char *key = part_key[given][given ? bw : bi];
		const node *k;
		sec_get(&s, key, &k);
		say(L, PPCC_SEV_ERROR, &k->loc, "%s: %s needs %s or %s beside "
		    "it (the two parts of the backward)", s.path, key,
		    part_key[!given][0], part_key[!given][1]);
	} else if (bi >= 0 && bi < 2 && bw >= 0 && bw < 2) {
		if (b == 0 || b == 1) {
			const node *k;
			sec_get(&s, b ? "bwd_ms" : "bwd_flops", &k);
			say(L, PPCC_SEV_ERROR, &k->loc, "%s: give %s or the two "
			    "parts bwd_input_* and bwd_weight_*, not both",
			    s.path, b ? "bwd_ms" : "bwd_flops");
		} else {
			out->split_given = out->bwd_given = 1;
			out->input_in_ms = bi;
			out->weight_in_ms = bw;
			sec_number(&s, part_key[0][bi], NUM_NONNEG, 1,
				   &y->bwd_flops);
			sec_number(&s, part_key[1][bw], NUM_NONNEG, 1,
				   &y->bwd_weight_flops);
		}
	}
	sec_number(&s, "params", NUM_NONNEG, 0, &y->params);
	sec_number(&s, "activation_bytes", NUM_NONNEG, 0, &y->activation_bytes);
	sec_number(&s, "stash_bytes", NUM_NONNEG, 0, &y->stash_bytes);
	y->stash_weight_bytes = -1;
	sec_number(&s, "stash_weight_bytes", NUM_NONNEG, 0,
		   &y->stash_weight_bytes);
	sec_number(&s, "bytes_per_param", NUM_POSITIVE, 0, &y->bytes_per_param);
	return L->errors == errors ? 0 : -1;
}

/* `preset: NAME` of a transformer section: 1 and its shape in t, the
 * keys' locations at the preset's; 0 absent; -1 reported. */
static int read_model_preset(ppcc_transformer *t,
			     const ppcc_model_preset **out, const section *s)
{
	const char *names[PPCC_MAX_MODEL_PRESETS + 1];
	const node *k;
	int i;
	ppcc_model_preset_names(names);
	int r = sec_word(s, "preset", names, &i, NULL);
	if (r != 1)
		return r;
	sec_get(s, "preset", &k);
	*out = &ppcc_model_presets[i];
	ppcc_model_preset_shape(t, *out);
	t->heads_loc = t->kv_heads_loc = t->ffn_hidden_loc = k->loc;
	if (t->rope_theta > 0)
		t->rope_theta_loc = k->loc;
	return 1;
}

/* `moe:` of a transformer section into t->moe (a preset's values stay
 * where the file gives none). */
static void read_moe(loader *L, const section *tsec, ppcc_transformer *t,
		     int preset)
{
	const node *key;
	const node *value = sec_get(tsec, "moe", &key);
	if (!value)
		return;
	section s;
	if (sec_open(&s, L, tsec, key, "moe", value, moe_keys) < 0)
		return;
	ppcc_moe *m = &t->moe;
	int need = !(preset && m->experts > 0);
	m->loc = key->loc;
	sec_int(&s, "experts", 1, PPCC_MAX_COUNT, need, &m->experts,
		&m->experts_loc);
	sec_int(&s, "top_k", 1, PPCC_MAX_COUNT, need, &m->top_k, NULL);
	sec_int(&s, "ffn_hidden", 1, INT_MAX, 0, &m->ffn_hidden,
		&m->ffn_hidden_loc);
	sec_int(&s, "shared_experts", 0, PPCC_MAX_COUNT, 0, &m->shared_experts,
		NULL);
	sec_int(&s, "dense_layers", 0, PPCC_MAX_LAYERS, 0, &m->dense_layers,
		NULL);
	sec_int(&s, "every", 1, PPCC_MAX_LAYERS, 0, &m->every, NULL);
	sec_number(&s, "capacity_factor", NUM_NONNEG, 0, &m->capacity_factor);
	sec_int(&s, "node_limit", 0, PPCC_MAX_COUNT, 0, &m->node_limit, NULL);
	const node *gk = NULL, *tk = NULL;
	int g_given = sec_get(&s, "groups", &gk) != NULL;
	int t_given = sec_get(&s, "group_topk", &tk) != NULL;
	sec_int(&s, "groups", 0, PPCC_MAX_COUNT, 0, &m->groups, NULL);
	sec_int(&s, "group_topk", 0, PPCC_MAX_COUNT, 0, &m->group_topk, NULL);
	sec_word(&s, "dispatch", dispatch_words, &m->dispatch_fp8, NULL);
	double imb = 0;
	if (sec_number(&s, "imbalance", NUM_POSITIVE, 0, &imb) == 1) {
		if (imb < 1) {
			const node *v = sec_get(&s, "imbalance", NULL);
			sec_bad(&s, "imbalance", v, "a number >= 1 (the busiest "
				"expert rank's tokens over the mean)");
		} else
			m->imbalance = imb;
	}
	if (m->top_k > m->experts && m->experts > 0) {
		const node *k;
		sec_get(&s, "top_k", &k);
		say(L, PPCC_SEV_ERROR, k ? &k->loc : &key->loc,
		    "%s.top_k: %d experts a token, of %d experts; expected "
		    "at most %d", s.path, m->top_k, m->experts, m->experts);
	} else if (m->experts > 0 && m->top_k > 0 &&
		   m->imbalance > (double)m->experts / m->top_k) {
		/* a rank's tokens: at most all of them, each to at most
		 * top_k of its experts, against top_k / experts of them on
		 * average a rank per expert it holds */
		const node *v = sec_get(&s, "imbalance", NULL);
		char want[96];
		snprintf(want, sizeof want, "a number from 1 to %g (experts / "
			 "top_k: every token on the busiest rank)",
			 (double)m->experts / m->top_k);
		sec_bad(&s, "imbalance", v, want);
	}
	/* group-limited routing, as Megatron-LM checks it (d98e8a6
	 * transformer_config.py:2671-2689) and scores a group (the sum of
	 * its top top_k / group_topk experts, moe_utils.py:716-718) */
	const node *at = t_given ? tk : g_given ? gk : key;
	if ((g_given || t_given) && (m->groups > 0) != (m->group_topk > 0))
		say(L, PPCC_SEV_ERROR, &at->loc, "%s: group-limited routing "
		    "needs both groups and group_topk (0 and 0: none); got "
		    "groups %d, group_topk %d", s.path, m->groups,
		    m->group_topk);
	else if (m->groups > 0 && m->experts > 0 &&
		 m->experts % m->groups != 0)
		say(L, PPCC_SEV_ERROR, g_given ? &gk->loc : &at->loc,
		    "%s.groups: %d groups do not divide the %d experts",
		    s.path, m->groups, m->experts);
	else if (m->group_topk > m->groups)
		say(L, PPCC_SEV_ERROR, &at->loc, "%s.group_topk: %d of %d "
		    "groups; expected at most %d", s.path, m->group_topk,
		    m->groups, m->groups);
	else if (m->group_topk > m->top_k && m->top_k > 0)
		say(L, PPCC_SEV_ERROR, &at->loc, "%s.group_topk: %d is more "
		    "than top_k %d (Megatron-LM scores a group by its top "
		    "top_k / group_topk experts); expected at most %d", s.path,
		    m->group_topk, m->top_k, m->top_k);
	else if (m->groups > 0 && m->top_k > 0 && (long long)m->group_topk *
		 (m->experts / m->groups) < m->top_k)
		say(L, PPCC_SEV_ERROR, &at->loc, "%s: %d groups of %d experts "
		    "hold %lld, fewer than a token's top_k %d; give fewer "
		    "groups or a larger group_topk", s.path, m->group_topk,
		    m->experts / m->groups, (long long)m->group_topk *
		    (m->experts / m->groups), m->top_k);
	if (m->capacity_factor > 0 && m->capacity_factor < 1) {
		const node *v = sec_get(&s, "capacity_factor", NULL);
		sec_bad(&s, "capacity_factor", v, "0 (dropless) or a number "
			">= 1");
	}
}

/* `attention:` of a transformer section into t->mla (a preset's values
 * stay where the file gives none). */
static void read_attention(loader *L, const section *tsec,
			   ppcc_transformer *t)
{
	const node *key;
	const node *value = sec_get(tsec, "attention", &key);
	if (!value)
		return;
	section s;
	if (sec_open(&s, L, tsec, key, "attention", value, attention_keys) < 0)
		return;
	ppcc_mla *m = &t->mla;
	int kind = m->kind ? 2 : 0;
	sec_word(&s, "kind", attention_words, &kind, NULL);
	m->loc = key->loc;
	if (kind != 2) {
		*m = (ppcc_mla){0};
		for (int i = 1; attention_keys[i]; i++) {
			const node *k;
			if (sec_get(&s, attention_keys[i], &k))
				say(L, PPCC_SEV_ERROR, &k->loc,
				    "%s.%s: a rank or width of multi-head "
				    "latent attention; set kind: mla",
				    s.path, attention_keys[i]);
		}
		return;
	}
	int need = !m->kind;
	m->kind = 1;
	m->loc = key->loc;
	sec_int(&s, "q_lora_rank", 0, INT_MAX, 0, &m->q_lora_rank, NULL);
	sec_int(&s, "kv_lora_rank", 1, INT_MAX, need, &m->kv_lora_rank, NULL);
	sec_int(&s, "qk_nope_head_dim", 1, INT_MAX, need,
		&m->qk_nope_head_dim, NULL);
	sec_int(&s, "qk_rope_head_dim", 1, INT_MAX, need,
		&m->qk_rope_head_dim, NULL);
	sec_int(&s, "v_head_dim", 1, INT_MAX, need, &m->v_head_dim, NULL);
}

/* The attention's settings against the rest of the shape: each error
 * located at its key (a preset's value at the preset). */
static void check_attention(loader *L, const section *s, const node *key,
			    const ppcc_transformer *t)
{
	const node *k, *pk;
	sec_get(s, "preset", &pk);
#define AT(name) (sec_get(s, name, &k) ? &k->loc : pk ? &pk->loc : &key->loc)
	if (t->mla.kind) {
		if (!t->swiglu)
			say(L, PPCC_SEV_ERROR, AT("attention"),
			    "ppcc does not model multi-head latent attention "
			    "in GPT blocks (%s.swiglu is false): their biases "
			    "differ; set swiglu: true", s->path);
		if (t->head_dim > 0)
			say(L, PPCC_SEV_ERROR, AT("head_dim"),
			    "%s.head_dim: multi-head latent attention's heads "
			    "are qk_nope_head_dim + qk_rope_head_dim wide for "
			    "Q and K and v_head_dim for V; leave head_dim out",
			    s->path);
		if (t->kv_heads > 0 && t->kv_heads != t->heads)
			say(L, PPCC_SEV_ERROR, AT("kv_heads"),
			    "%s.kv_heads: multi-head latent attention has a "
			    "key and a value a head (%d); expected %d or "
			    "nothing", s->path, t->kv_heads, t->heads);
		if (t->biases)
			say(L, PPCC_SEV_ERROR, AT("biases"),
			    "ppcc does not model biases in multi-head latent "
			    "attention; leave %s.biases out", s->path);
	}
	if (t->biases && !t->swiglu)
		say(L, PPCC_SEV_ERROR, AT("biases"),
		    "%s.biases: GPT blocks (swiglu false) have their biases "
		    "already; biases adds GPT-OSS's to SwiGLU blocks",
		    s->path);
	if (t->qk_norm && t->mla.kind)
		say(L, PPCC_SEV_ERROR, AT("qk_norm"),
		    "%s.qk_norm: latent attention norms its latents, which "
		    "ppcc counts; a norm of each head's query and key beside "
		    "them is not modelled: give qk_norm false", s->path);
	const char *why = ppcc_transformer_fa2_refuses(t);
	if (t->attention_kernel != PPCC_ATTN_AUTO && !t->flash_attention)
		say(L, PPCC_SEV_ERROR, AT("attention_kernel"),
		    "%s.attention_kernel names a flash kernel, but "
		    "%s.flash_attention is false; leave attention_kernel out "
		    "or give flash_attention true", s->path, s->path);
	else if (t->attention_kernel == PPCC_ATTN_FA2 && why)
		say(L, PPCC_SEV_ERROR, AT("attention_kernel"),
		    "%s.attention_kernel: FlashAttention-2 does not run %s; "
		    "use cudnn", s->path, why);
	if (t->sliding_window_pattern == 1)
		say(L, PPCC_SEV_ERROR, AT("sliding_window_pattern"),
		    "%s.sliding_window_pattern: 1 would make every layer "
		    "attend in full; expected 0 (every layer windowed) or at "
		    "least 2", s->path);
	else if (t->sliding_window_pattern > 0 && t->sliding_window == 0)
		say(L, PPCC_SEV_ERROR, AT("sliding_window_pattern"),
		    "%s.sliding_window_pattern needs %s.sliding_window, the "
		    "keys a windowed layer attends to", s->path, s->path);
#undef AT
}

/* transformer.recompute_modules: a list of Megatron-LM's module names,
 * into t's PPCC_RC_* bits (core_attn when not given).  It is selective
 * recomputation's: it implies recompute: selective, and contradicts none
 * or full.  A module of Megatron-LM's that ppcc does not model is refused
 * by name; each needs what it recomputes (a latent attention, experts). */
static void read_recompute_modules(loader *L, const section *s,
				   ppcc_transformer *t)
{
	const node *k, *rk;
	const node *list = sec_get(s, "recompute_modules", &k);
	if (!list)
		return;
	char path[PATH_CAP], got[SHOW_CHARS * 4 + 32], words[512];
	key_path(path, s, "recompute_modules");
	if (list->kind != NODE_SEQ || list->n == 0) {
		sec_bad(s, "recompute_modules", list, list->kind == NODE_SEQ
			? "at least one module (none recomputes nothing: "
			  "recompute: none)"
			: "a list of modules, as Megatron-LM's "
			  "--recompute-modules names them");
		return;
	}
	const node *rv = sec_get(s, "recompute", &rk);
	if (rv && (scalar_is(rv, "none") || scalar_is(rv, "full"))) {
		say(L, PPCC_SEV_ERROR, &k->loc, "%s: the modules selective "
		    "recomputation recomputes, but %s.recompute is %s (line "
		    "%d); use recompute: selective, or leave "
		    "recompute_modules out", path, s->path,
		    t->recompute == PPCC_RECOMPUTE_FULL ? "full" : "none",
		    rk->loc.line);
		return;
	}
	t->recompute = PPCC_RECOMPUTE_SELECTIVE;
	t->recompute_modules = 0;
	t->recompute_modules_loc = k->loc;
	/* every name Megatron-LM takes: the modelled, then the refused */
	enum { NREFUSED = (int)(sizeof rc_refused / sizeof rc_refused[0]) };
	const char *all[16 + NREFUSED + 1];
	int modelled = 0;
	while (ppcc_recompute_module_names[modelled] && modelled < 16) {
		all[modelled] = ppcc_recompute_module_names[modelled];
		modelled++;
	}
	for (int r = 0; r < NREFUSED; r++)
		all[modelled + r] = rc_refused[r].name;
	all[modelled + NREFUSED] = NULL;
	list_words(words, sizeof words, all);
	int i = 0;
	for (const node *item = list->first; item; item = item->next, i++) {
		int w = 0;
		while (all[w] && !(item->kind == NODE_SCALAR &&
				   scalar_is(item, all[w])))
			w++;
		if (!all[w]) {
			describe(got, sizeof got, item);
			const char *near = item->kind == NODE_SCALAR
				? suggest(item->text, item->len, all) : NULL;
			say(L, PPCC_SEV_ERROR, &item->loc, "%s[%d]: expected "
			    "one of Megatron-LM's modules %s, got %s%s%s%s",
			    path, i, words, got, near ? "; did you mean '" : "",
			    near ? near : "", near ? "'?" : "");
			continue;
		}
		if (w >= modelled) {
			char known[128];
			size_t n = strlen(ppcc_recompute_modules_text(
				known, sizeof known, (1u << (modelled - 1)) - 1,
				", "));
			snprintf(known + n, sizeof known - n, " and %s",
				 all[modelled - 1]);
			say(L, PPCC_SEV_ERROR, &item->loc, "%s[%d]: ppcc does "
			    "not model Megatron-LM's recomputation of %s (%s); "
			    "ppcc models %s, and recompute: full", path, i,
			    rc_refused[w - modelled].what, all[w], known);
			continue;
		}
		unsigned bit = 1u << w;
		if (t->recompute_modules & bit) {
			say(L, PPCC_SEV_ERROR, &item->loc, "%s[%d]: %s is named "
			    "twice; name each module once", path, i, all[w]);
			continue;
		}
		/* Megatron-LM raises for both (:1964-1973) */
		if (bit == PPCC_RC_MLA_UP_PROJ && !t->mla.kind)
			say(L, PPCC_SEV_ERROR, &item->loc, "%s[%d]: mla_up_proj "
			    "recomputes a latent attention's up projections, "
			    "and this attention is not latent; give "
			    "attention: {kind: mla, ...} or leave it out",
			    path, i);
		else if (bit == PPCC_RC_MOE_ACT && t->moe.experts == 0)
			say(L, PPCC_SEV_ERROR, &item->loc, "%s[%d]: moe_act "
			    "recomputes the routed experts' activation, and "
			    "this model has no experts; give moe: {experts: "
			    "...} or leave it out", path, i);
		t->recompute_modules |= bit;
		if (bit == PPCC_RC_LAYERNORM && !t->mla.kind &&
		    t->moe.experts == 0)
			say(L, PPCC_SEV_WARNING, &item->loc, "%s[%d]: layernorm "
			    "recomputes the norms that are modules of their own "
			    "(a latent attention's input norm, a mixture of "
			    "experts' pre-FFN norm); this model's run inside the "
			    "projections after them, so it recomputes nothing",
			    path, i);
	}
}

static void read_transformer(loader *L, const section *model,
			     const node *key, const node *value)
{
	section s;
	/* Counted from here: a typo of a required key is reported as an
	 * unknown key and not again as missing, and must still stop the
	 * shape checks below. */
	int errors = L->errors;
	if (sec_open(&s, L, model, key, "transformer", value,
		     transformer_keys) < 0)
		return;
	ppcc_transformer *t = &L->tf;
	memset(t, 0, sizeof *t);
	t->micro_batch_size = 1;
	t->sequence_parallel = 1;
	t->flash_attention = 1;
	/* a preset fills every shape key; each key given wins */
	int preset = read_model_preset(t, &L->tf_preset, &s) == 1;
	/* a preset named, even one unknown (reported), asks for no key */
	int need = !sec_get(&s, "preset", NULL);
	sec_int(&s, "layers", 1, PPCC_MAX_LAYERS - 2, need, &t->layers, NULL);
	int r = sec_int(&s, "hidden", 1, INT_MAX, need, &t->hidden, NULL);
	int hidden_ok = r == 1 || (r == 0 && preset);
	r = sec_int(&s, "heads", 1, INT_MAX, need, &t->heads, &t->heads_loc);
	int heads_ok = r == 1 || (r == 0 && preset);
	/* a multi-head preset's kv heads follow the heads the file gives */
	if (preset && r == 1 && L->tf_preset->kv_heads == L->tf_preset->heads)
		t->kv_heads = t->heads;
	sec_int(&s, "kv_heads", 1, INT_MAX, 0, &t->kv_heads, &t->kv_heads_loc);
	sec_int(&s, "ffn_hidden", 1, INT_MAX, 0, &t->ffn_hidden,
		&t->ffn_hidden_loc);
	sec_int(&s, "vocab", 1, INT_MAX, need, &t->vocab, NULL);
	sec_int(&s, "seq_len", 1, INT_MAX, need, &t->seq_len, NULL);
	sec_int(&s, "micro_batch_size", 1, INT_MAX, 0, &t->micro_batch_size,
		NULL);
	sec_word(&s, "recompute", recompute_words, &t->recompute, NULL);
	sec_bool(&s, "swiglu", &t->swiglu);
	sec_bool(&s, "sequence_parallel", &t->sequence_parallel);
	sec_bool(&s, "flash_attention", &t->flash_attention);
	sec_word(&s, "precision", precision_words, &t->fp8, &t->precision_loc);
	sec_word(&s, "attention_kernel", attention_kernel_words,
		 &t->attention_kernel, &t->attention_kernel_loc);
	sec_number(&s, "bytes_per_param", NUM_POSITIVE, 0, &t->bytes_per_param);
	if (!preset) {
		t->norm = t->swiglu ? PPCC_NORM_RMSNORM : PPCC_NORM_LAYERNORM;
		t->position = t->swiglu ? PPCC_POSITION_ROPE
					: PPCC_POSITION_LEARNED;
	}
	sec_word(&s, "norm", norm_words, &t->norm, NULL);
	sec_word(&s, "position", position_words, &t->position, NULL);
	if (sec_number(&s, "rope_theta", NUM_POSITIVE, 0, &t->rope_theta) == 1) {
		const node *th;
		sec_get(&s, "rope_theta", &th);
		t->rope_theta_loc = th->loc;
	}
	sec_bool(&s, "tie_embeddings", &t->tie_embeddings);
	sec_int(&s, "head_dim", 1, INT_MAX, 0, &t->head_dim, NULL);
	read_moe(L, &s, t, preset);
	read_attention(L, &s, t);
	sec_int(&s, "mtp_layers", 0, PPCC_MAX_LAYERS, 0, &t->mtp_layers, NULL);
	sec_int(&s, "sliding_window", 0, INT_MAX, 0, &t->sliding_window, NULL);
	sec_int(&s, "sliding_window_pattern", 0, PPCC_MAX_LAYERS, 0,
		&t->sliding_window_pattern, NULL);
	sec_bool(&s, "biases", &t->biases);
	sec_bool(&s, "attention_sinks", &t->attention_sinks);
	sec_bool(&s, "qk_norm", &t->qk_norm);
	read_recompute_modules(L, &s, t);
	if (L->errors != errors || !hidden_ok || !heads_ok)
		return;
	check_attention(L, &s, key, t);
	if (L->errors != errors)
		return;
	ppcc_moe *m = &t->moe;
	if (m->experts > 0) {
		if (m->ffn_hidden == 0) /* as wide as the dense FFN */
			m->ffn_hidden = t->ffn_hidden > 0 ? t->ffn_hidden
							  : 4 * t->hidden;
		if (m->every == 0)
			m->every = 1;
		if (m->imbalance == 0)
			m->imbalance = PPCC_MOE_IMBALANCE;
		const node *mk;
		sec_get(&s, "moe", &mk);
		if (!t->swiglu)
			say(L, PPCC_SEV_ERROR, mk ? &mk->loc : &key->loc,
			    "ppcc does not model mixture-of-experts layers "
			    "without SwiGLU experts (%s.swiglu is false): "
			    "their biases and activation differ; set "
			    "swiglu: true", s.path);
		if (m->dense_layers >= t->layers)
			say(L, PPCC_SEV_ERROR, mk ? &mk->loc : &key->loc,
			    "%s.moe.dense_layers: %d dense layers leave no "
			    "mixture-of-experts layer of the %d; expected "
			    "fewer than %d", s.path, m->dense_layers,
			    t->layers, t->layers);
		if (L->errors != errors)
			return;
	}
	/* a value from the preset is located at the preset */
	const node *k, *pk;
	sec_get(&s, "preset", &pk);
	if (t->head_dim == 0 && t->hidden % t->heads != 0) {
		if (!sec_get(&s, "heads", &k))
			k = pk;
		say(L, PPCC_SEV_ERROR, &k->loc,
		    "%s.heads: %d heads do not divide the hidden size %d; "
		    "give head_dim when a head is not hidden / heads wide",
		    s.path, t->heads, t->hidden);
	}
	if (t->kv_heads > 0 && t->heads % t->kv_heads != 0) {
		if (!sec_get(&s, "kv_heads", &k))
			k = pk;
		say(L, PPCC_SEV_ERROR, &k->loc,
		    "%s.kv_heads: %d kv heads do not divide the %d heads",
		    s.path, t->kv_heads, t->heads);
	}
	if (L->errors == errors) {
		L->has_transformer = 1;
		L->tf_loc = key->loc;
	}
}

/* s's letters and digits, lower case, into buf: "Llama-3 70B" is
 * "llama370b". */
static void name_key(char *buf, size_t size, const char *s, size_t len)
{
	size_t at = 0;
	for (size_t i = 0; i < len && at + 1 < size; i++) {
		char c = s[i];
		if (c >= 'A' && c <= 'Z')
			buf[at++] = (char)(c - 'A' + 'a');
		else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
			buf[at++] = c;
	}
	buf[at] = '\0';
}

/* A model named as a preset is (its name or label, in any case and
 * punctuation) whose transformer's shape differs from the preset's:
 * warned at the name, each differing key with the preset's value (a
 * GPT block typed for a SwiGLU one plans about a quarter fewer FLOPs). */
static void check_preset_name(loader *L, const section *s,
			      const ppcc_transformer *t)
{
	const node *v = sec_get(s, "name", NULL);
	if (!v || v->kind != NODE_SCALAR)
		return;
	char name[64], other[64];
	name_key(name, sizeof name, v->text, v->len);
	const ppcc_model_preset *p = NULL;
	for (int i = 0; i < ppcc_n_model_presets && !p; i++) {
		const ppcc_model_preset *q = &ppcc_model_presets[i];
		name_key(other, sizeof other, q->name, strlen(q->name));
		if (strcmp(name, other) == 0)
			p = q;
		name_key(other, sizeof other, q->label, strlen(q->label));
		if (name[0] && strcmp(name, other) == 0)
			p = q;
	}
	if (!p)
		return;
	ppcc_transformer w = {0};
	ppcc_model_preset_shape(&w, p);
	char diff[512];
	size_t at = 0;
	diff[0] = '\0';
#define DIFF(key, mine, theirs, fmt_mine, fmt_theirs)                        \
	if ((mine) != (theirs) && at < sizeof diff)                         \
		at += (size_t)snprintf(diff + at, sizeof diff - at,            \
				       "%s" key " " fmt_mine " (the preset's " \
				       fmt_theirs ")", at ? ", " : "",         \
				       mine, theirs);
	int kv = t->kv_heads > 0 ? t->kv_heads : t->heads;
	int ffn = t->ffn_hidden > 0 ? t->ffn_hidden : 4 * t->hidden;
	int hd = t->head_dim > 0 ? t->head_dim : t->hidden / t->heads;
	int whd = w.head_dim > 0 ? w.head_dim : w.hidden / w.heads;
	DIFF("layers", t->layers, w.layers, "%d", "%d")
	DIFF("hidden", t->hidden, w.hidden, "%d", "%d")
	DIFF("heads", t->heads, w.heads, "%d", "%d")
	DIFF("kv_heads", kv, w.kv_heads, "%d", "%d")
	DIFF("head_dim", hd, whd, "%d", "%d")
	DIFF("ffn_hidden", ffn, w.ffn_hidden, "%d", "%d")
	DIFF("vocab", t->vocab, w.vocab, "%d", "%d")
#define BOOL_DIFF(key, mine, theirs)                                         \
	if (!(mine) != !(theirs) && at < sizeof diff)                       \
		at += (size_t)snprintf(diff + at, sizeof diff - at,            \
				       "%s" key " %s (the preset's %s)",      \
				       at ? ", " : "",                         \
				       (mine) ? "true" : "false",              \
				       (theirs) ? "true" : "false");
	BOOL_DIFF("swiglu", t->swiglu, w.swiglu)
	BOOL_DIFF("qk_norm", t->qk_norm, w.qk_norm)
	DIFF("moe.experts", t->moe.experts, w.moe.experts, "%d", "%d")
	if (t->moe.experts > 0 && w.moe.experts > 0) {
		DIFF("moe.top_k", t->moe.top_k, w.moe.top_k, "%d", "%d")
		DIFF("moe.ffn_hidden", t->moe.ffn_hidden, w.moe.ffn_hidden,
		     "%d", "%d")
	}
#undef BOOL_DIFF
#undef DIFF
	if (!at)
		return;
	char path[PATH_CAP];
	key_path(path, s, "name");
	say(L, PPCC_SEV_WARNING, &v->loc,
	    "%s: '%.*s' names the %s preset, but the transformer differs "
	    "from it: %s; for %s give `transformer: {preset: %s}` (ppcc "
	    "models), else name the model otherwise", path, (int)v->len,
	    v->text, p->name,
	    diff, p->label, p->name);
}

static void read_model(ppcc_model *out, loader *L, const section *top,
		       const node *key, const node *value)
{
	section s;
	out->loc = key->loc;
	if (sec_open(&s, L, top, key, "model", value, model_keys) < 0)
		return;
	/* required unless the transformer names a preset, whose name it
	 * then is (below) */
	const node *tv = sec_get(&s, "transformer", NULL);
	int named_preset = tv && tv->kind == NODE_MAP;
	if (named_preset) {
		section ts = {.L = L, .map = tv};
		named_preset = sec_get(&ts, "preset", NULL) != NULL;
	}
	sec_string(&s, "name", !named_preset, &out->name);
	const node *k;
	if (sec_string(&s, "measured_on", 0, &L->measured_on) == 1) {
		sec_get(&s, "measured_on", &k);
		L->measured_on_loc = k->loc;
	}
	L->measured_t = 1;
	sec_int(&s, "measured_tensor_parallel", 1, PPCC_MAX_COUNT, 0,
		&L->measured_t, NULL);
	int which = sec_one_of(&s, "layers", "transformer", 1);
	if (which == 1) {
		const node *v = sec_get(&s, "transformer", &k);
		read_transformer(L, &s, k, v);
	}
	if (!sec_get(&s, "name", NULL) && L->tf_preset)
		out->name = L->tf_preset->name;
	if (which == 1 && L->has_transformer)
		check_preset_name(L, &s, &L->tf);
	if (which != 0)
		return;
	const node *list = sec_get(&s, "layers", &k);
	if (list->kind != NODE_SEQ || list->n == 0) {
		sec_bad(&s, "layers", list, "a list of layers");
		return;
	}
	L->items = ppcc_arena_alloc(L->a, (size_t)list->n, sizeof *L->items);
	if (!L->items) {
		L->status = PPCC_ENOMEM;
		return;
	}
	int errors = L->errors, i = 0;
	int64_t total = 0;
	for (const node *item = list->first; item; item = item->next, i++)
		if (read_layer(&L->items[i], L, &s, item, i) == 0)
			total += L->items[i].repeat;
	if (L->errors != errors)
		return;
	if (total > PPCC_MAX_LAYERS) {
		say(L, PPCC_SEV_ERROR, &k->loc,
		    "model.layers: %lld layers after repeat; the limit is %d",
		    (long long)total, PPCC_MAX_LAYERS);
		return;
	}
	L->n_items = list->n;
}

/* Expands repeats (or the transformer) into out->layers, converting
 * milliseconds at the sustained rate of the device group named by
 * measured_on (the first by default) times measured_tensor_parallel:
 * a time measured on t devices is t devices' worth of FLOPs. */
static int expand_model(ppcc_model *out, loader *L, const ppcc_cluster *c)
{
	int measured = 0;
	out->micro_batch_size = 1;
	/* named, it must name a group, whether or not times use it (a
	 * transformer's costs are FLOPs) */
	if (L->measured_on) {
		measured = -1;
		for (int g = 0; g < c->n_groups && measured < 0; g++)
			if (strcmp(c->groups[g].name, L->measured_on) == 0)
				measured = g;
		if (measured < 0) {
			say(L, PPCC_SEV_ERROR, &L->measured_on_loc,
			    "model.measured_on: no device group is named '%.40s'",
			    L->measured_on);
			return PPCC_EINPUT;
		}
	}
	if (L->has_transformer) {
		out->edge_layers = 1;
		out->micro_batch_size = L->tf.micro_batch_size;
		out->seq_len = L->tf.seq_len;
		ppcc_transformer *tf = ppcc_arena_alloc(L->a, 1, sizeof *tf);
		if (!tf)
			return PPCC_ENOMEM;
		*tf = L->tf;
		out->transformer = tf;
		out->transformer_loc = L->tf_loc;
		return ppcc_transformer_expand(&out->layers, &out->n_layers,
					       L->a, &L->tf, L->tf_loc);
	}
	int n = 0;
	for (int i = 0; i < L->n_items; i++)
		n += L->items[i].repeat;
	out->layers = ppcc_arena_alloc(L->a, (size_t)n, sizeof *out->layers);
	if (!out->layers)
		return PPCC_ENOMEM;
	double flops_per_ms = c->groups[measured].tflops * 1e12 *
			      c->groups[measured].efficiency * 1e-3 * L->measured_t;
	for (int i = 0, o = 0; i < L->n_items; i++) {
		layer_src *src = &L->items[i];
		ppcc_layer y = src->layer;
		if (src->fwd_in_ms)
			y.fwd_flops *= flops_per_ms;
		if (src->bwd_in_ms || (src->split_given && src->input_in_ms))
			y.bwd_flops *= flops_per_ms;
		if (src->split_given && src->weight_in_ms)
			y.bwd_weight_flops *= flops_per_ms;
		if (!src->bwd_given)
			y.bwd_flops = 2.0 * y.fwd_flops;
		if (y.stash_weight_bytes < 0)
			y.stash_weight_bytes = y.stash_bytes;
		if (src->split_given)
			y.bwd_flops += y.bwd_weight_flops;
		else
			y.bwd_weight_flops = y.bwd_flops / 2;
		for (int r = 0; r < src->repeat; r++)
			out->layers[o++] = y;
	}
	out->n_layers = n;
	return 0;
}

/* ---- cluster ---------------------------------------------------------- */

static const char *const cluster_keys[] = {"device", "devices", "groups",
					   "devices_per_node", "links",
					   "reserved_gib", NULL};
static const char *const device_keys[] = {"preset", "name", "tflops",
					  "efficiency", "memory_gib",
					  "memory_bandwidth_gb_s", "tflops_fp8",
					  NULL};
static const char *const group_keys[] = {"name", "count", "preset",
					 "tflops", "efficiency", "memory_gib",
					 "memory_bandwidth_gb_s", "tflops_fp8",
					 NULL};
static const char *const links_keys[] = {"intra_node", "inter_node", NULL};
static const char *const link_keys[] = {"bandwidth_gb_s", "latency_us", NULL};

/* A rate or a delay within [lo, hi] (else reported at the value, -1), so
 * that every time computed from it stays finite and nonzero: a link of
 * 1e308 GB/s made each transfer's time 0, one of 1e-300 made it
 * infinite, and the layer carrying it was blamed. */
static int sec_ranged(const section *s, const char *key, num_kind kind,
		      double lo, double hi, const char *unit, double *out)
{
	double x = 0;
	int r = sec_number(s, key, kind, 0, &x);
	if (r == 1 && (x < lo || x > hi)) {
		char path[PATH_CAP];
		key_path(path, s, key);
		say(s->L, PPCC_SEV_ERROR, &sec_get(s, key, NULL)->loc,
		    "%s: %.10g %s is outside the range ppcc can plan (%g to %g)",
		    path, x, unit, lo, hi);
		return -1;
	}
	if (r == 1)
		*out = x;
	return r;
}

/* A size in GiB, at most LOAD_MAX_MEMORY_GIB (else reported, -1). */
static int sec_gib(const section *s, const char *key, num_kind kind,
		   int required, double *out)
{
	int r = sec_number(s, key, kind, required, out);
	if (r == 1 && *out > LOAD_MAX_MEMORY_GIB) {
		char path[PATH_CAP];
		key_path(path, s, key);
		say(s->L, PPCC_SEV_ERROR, &sec_get(s, key, NULL)->loc,
		    "%s: %.10g GiB is more than ppcc can plan with; the largest "
		    "accepted is %.0f (1 PiB)", path, *out,
		    LOAD_MAX_MEMORY_GIB);
		return -1;
	}
	return r;
}

/* A device's name when none is given (a group's name, required, is this
 * pointer only when it was not read). */
static const char default_device_name[] = "device";

static void use_preset(ppcc_device_group *g, const ppcc_device_preset *p)
{
	g->preset = p;
	g->name = p->name;
	g->tflops = p->bf16;
	g->fp8_speedup = p->fp8 > 0 ? p->fp8 / p->bf16 : 0;
	g->fp8_gain = ppcc_device_preset_fp8_gain(p, &g->fp8_fitted);
	g->efficiency = p->efficiency;
	g->memory_bytes = p->memory_gib * 1073741824.0;
	g->memory_bandwidth = p->memory_gb_s * 1e9;
}

int ppcc_cluster_swap_device(ppcc_cluster *out, ppcc_arena *a,
			     const ppcc_cluster *in,
			     const ppcc_device_preset *p)
{
	const ppcc_device_preset *old = in->n_groups > 0 ? in->groups[0].preset
							 : NULL;
	for (int g = 0; g < in->n_groups; g++)
		if (!old || in->groups[g].preset != old)
			return PPCC_EINPUT;
	ppcc_device_group *gs = ppcc_arena_alloc(a, (size_t)in->n_groups,
						 sizeof *gs);
	if (!gs)
		return PPCC_ENOMEM;
	*out = *in;
	for (int g = 0; g < in->n_groups; g++) {
		gs[g] = in->groups[g];
		use_preset(&gs[g], p);
		gs[g].efficiency_given = 0;
	}
	out->groups = gs;
	double inter = old->inter_gb_s > 0 ? old->inter_gb_s : DEFAULT_INTER_GB_S;
	if (in->devices_per_node == old->node_devices &&
	    in->intra_node.bandwidth == old->intra_gb_s * 1e9 &&
	    in->inter_node.bandwidth == inter * 1e9) {
		out->devices_per_node = p->node_devices;
		out->host_devices = p->host_devices < p->node_devices
				    ? p->host_devices : p->node_devices;
		out->nvls = p->nvls;
		out->intra_node.bandwidth = p->intra_gb_s * 1e9;
		out->inter_node.bandwidth = (p->inter_gb_s > 0 ? p->inter_gb_s
					     : DEFAULT_INTER_GB_S) * 1e9;
	}
	return 0;
}

/* `preset: NAME` of a device section, or the scalar of `device: NAME`
 * (s's key): 1 and the row, 0 absent, -1 reported. */
static int read_preset(ppcc_device_group *g, const section *s,
		       const char *key)
{
	const char *names[PPCC_MAX_DEVICE_PRESETS + 1];
	int i;
	const node *v = sec_get(s, key, NULL);
	const ppcc_device_preset *p = v && v->kind == NODE_SCALAR
		? ppcc_device_preset_find(v->text, v->len) : NULL;
	if (p) { /* any case: H100 is h100 */
		use_preset(g, p);
		return 1;
	}
	ppcc_device_preset_names(names);
	int r = sec_word(s, key, names, &i, NULL);
	if (r == 1)
		use_preset(g, &ppcc_device_presets[i]);
	return r;
}

/* A peak that is some device's FP8 or sparse 16-bit figure, given as the
 * dense 16-bit one: warned, with the device's dense figure. */
static void check_peak(const section *s, double tflops)
{
	for (int i = 0; i < ppcc_n_device_presets; i++) {
		const ppcc_device_preset *p = &ppcc_device_presets[i];
		if (fabs(tflops - p->bf16) <= 0.005 * p->bf16)
			return;
	}
	for (int i = 0; i < ppcc_n_device_presets; i++) {
		const ppcc_device_preset *p = &ppcc_device_presets[i];
		const char *what = fabs(tflops - p->fp8) <= 0.005 * p->fp8
			? "dense FP8" : fabs(tflops - 2 * p->bf16) <= 0.01 * p->bf16
			? "16-bit with sparsity" : NULL;
		if (!what)
			continue;
		char path[PATH_CAP];
		key_path(path, s, "tflops");
		say(s->L, PPCC_SEV_WARNING, &sec_get(s, "tflops", NULL)->loc,
		    "%s: %g TFLOP/s is the %s's %s peak; tflops is the dense "
		    "16-bit peak (%g on the %s; `preset: %s` gives it)", path,
		    tflops, p->label, what, p->bf16, p->name, p->name);
		return;
	}
}

/* An efficiency above PLAUSIBLE_EFFICIENCY of the peak: no training
 * step sustains it on a real device (the presets' calibrated constants
 * are far below it), so it is warned, with the preset's figure.  Exactly
 * 1 on a device of the file's own (no preset) is an ideal device, asked
 * for on purpose (the tests' and the example trainer's), and is not. */
#define PLAUSIBLE_EFFICIENCY 0.9
static void check_efficiency(const section *s, const ppcc_device_group *g)
{
	double e = g->efficiency;
	if (e <= PLAUSIBLE_EFFICIENCY || (e == 1.0 && !g->preset))
		return;
	char path[PATH_CAP], hint[160];
	key_path(path, s, "efficiency");
	if (g->preset)
		snprintf(hint, sizeof hint, "give the fraction measured, or "
			 "leave it out for the %s preset's %.2f",
			 g->preset->name, g->preset->efficiency);
	else
		snprintf(hint, sizeof hint, "give the fraction measured "
			 "(efficiency: 1, an ideal device, is taken without a "
			 "warning)");
	say(s->L, PPCC_SEV_WARNING, &sec_get(s, "efficiency", NULL)->loc,
	    "%s: %g of the peak is more than a training step sustains on a "
	    "real device (above %g); %s", path, e, PLAUSIBLE_EFFICIENCY,
	    hint);
}

static void read_device(ppcc_device_group *g, const section *s, int is_group)
{
	char path[PATH_CAP];
	int errors = s->L->errors;
	g->efficiency = 1.0;
	g->name = default_device_name;
	g->memory_bandwidth = DEFAULT_MEMORY_BANDWIDTH_GB_S * 1e9;
	int named = read_preset(g, s, "preset");
	int preset = named == 1, need = named == 0; /* -1: reported */
	sec_string(s, "name", is_group && !preset, &g->name);
	if (is_group)
		sec_int(s, "count", 1, PPCC_MAX_COUNT, 1, &g->count, NULL);
	if (sec_number(s, "tflops", NUM_POSITIVE, need, &g->tflops) == 1) {
		if (g->tflops > MAX_DEVICE_TFLOPS) {
			key_path(path, s, "tflops");
			say(s->L, PPCC_SEV_WARNING,
			    &sec_get(s, "tflops", NULL)->loc,
			    "%s: %g TFLOP/s is faster than any device (above "
			    "%g dense 16-bit)", path, g->tflops,
			    MAX_DEVICE_TFLOPS);
		} else {
			check_peak(s, g->tflops);
		}
	}
	double fp8 = 0;
	if (sec_number(s, "tflops_fp8", NUM_POSITIVE, 0, &fp8) == 1) {
		if (fp8 < g->tflops || fp8 > 4 * g->tflops)
			sec_bad(s, "tflops_fp8", sec_get(s, "tflops_fp8", NULL),
				"the dense FP8 peak, from tflops to 4 x tflops");
		else {
			g->fp8_speedup = fp8 / g->tflops;
			g->fp8_gain = g->fp8_speedup;
			g->fp8_fitted = 0;
		}
	}
	g->efficiency_given = sec_number(s, "efficiency", NUM_FRACTION,
					 need, &g->efficiency) == 1;
	if (g->efficiency_given)
		check_efficiency(s, g);
	if (sec_gib(s, "memory_gib", NUM_POSITIVE, need,
		    &g->memory_bytes) == 1) {
		if (g->memory_bytes > MAX_DEVICE_MEMORY_GIB) {
			key_path(path, s, "memory_gib");
			say(s->L, PPCC_SEV_WARNING,
			    &sec_get(s, "memory_gib", NULL)->loc,
			    "%s: %g GiB is more than any device holds (above "
			    "%g)", path, g->memory_bytes,
			    MAX_DEVICE_MEMORY_GIB);
		}
		g->memory_bytes *= 1073741824.0;
	}
	if (sec_ranged(s, "memory_bandwidth_gb_s", NUM_POSITIVE, LOAD_MIN_GB_S,
		       LOAD_MAX_GB_S, "GB/s", &g->memory_bandwidth) == 1)
		g->memory_bandwidth *= 1e9;
	if (!preset && s->L->errors != errors && !sec_get(s, "preset", NULL) &&
	    (!sec_get(s, "tflops", NULL) || !sec_get(s, "efficiency", NULL) ||
	     !sec_get(s, "memory_gib", NULL))) {
		const char *names[PPCC_MAX_DEVICE_PRESETS + 1];
		char list[256];
		ppcc_device_preset_names(names);
		list_words(list, sizeof list, names);
		const ppcc_device_preset *p = g->name
			? ppcc_device_preset_find(g->name, strlen(g->name)) : NULL;
		if (p)
			say(s->L, PPCC_SEV_NOTE, &s->where,
			    "%s: the name '%s' is only a label; `preset: %s` "
			    "gives that device's peak, efficiency and memory",
			    s->path, p->name, p->name);
		else
			say(s->L, PPCC_SEV_NOTE, &s->where,
			    "%s: a preset gives the peak, the efficiency and "
			    "the memory: preset: NAME, one of %s (`ppcc "
			    "devices` lists them)", s->path, list);
	}
}

/* A link; its bandwidth stays 0 when not given (the device's preset or
 * the default then sets it).  One above what any device's link carries
 * one way (NVLink 5's 900 GB/s in a node, one 800 Gb/s port's 100 GB/s
 * between nodes) is warned: most often Gb/s typed for GB/s. */
static void read_link(ppcc_link *out, loader *L, const section *links,
		      const char *key, double us, ppcc_loc *given)
{
	section s;
	const node *k;
	const node *v = sec_get(links, key, &k);
	int intra = strcmp(key, "intra_node") == 0;
	double most = intra ? MAX_INTRA_GB_S : MAX_INTER_GB_S;
	out->bandwidth = 0;
	out->latency = us * 1e-6;
	if (!v || sec_open(&s, L, links, k, key, v, link_keys) < 0)
		return;
	if (sec_ranged(&s, "bandwidth_gb_s", NUM_POSITIVE, LOAD_MIN_GB_S,
		       LOAD_MAX_GB_S, "GB/s", &out->bandwidth) == 1) {
		if (out->bandwidth > most) {
			char path[PATH_CAP];
			key_path(path, &s, "bandwidth_gb_s");
			say(L, PPCC_SEV_WARNING,
			    &sec_get(&s, "bandwidth_gb_s", NULL)->loc,
			    "%s: %g GB/s is more than any device's %s carries "
			    "one way (%s); if it is Gb/s, that is %g GB/s",
			    path, out->bandwidth,
			    intra ? "link in a node" : "network port",
			    intra ? "NVLink 5, 900 GB/s"
				  : "800 Gb/s, 100 GB/s", out->bandwidth / 8);
		}
		*given = sec_get(&s, "bandwidth_gb_s", NULL)->loc;
		out->bandwidth *= 1e9;
	}
	if (sec_ranged(&s, "latency_us", NUM_NONNEG, 0, LOAD_MAX_LATENCY_US,
		       "us", &out->latency) == 1)
		out->latency *= 1e-6;
}

/* Group i's name must not be an earlier group's: measured_on and the
 * messages name groups. */
static void group_name_once(const ppcc_device_group *groups, int i,
			    const section *gs)
{
	const node *v = sec_get(gs, "name", NULL);
	if (!v || v->kind != NODE_SCALAR)
		return;
	if (groups[i].name != v->text)
		return; /* not read: reported already */
	for (int j = 0; j < i; j++)
		if (groups[j].name && groups[j].name != default_device_name &&
		    strcmp(groups[j].name, groups[i].name) == 0) {
			char path[PATH_CAP];
			key_path(path, gs, "name");
			say(gs->L, PPCC_SEV_ERROR, &v->loc,
			    "%s: duplicate group name '%.40s' (first at line %d, "
			    "column %d, cluster.groups[%d]); give each group its "
			    "own name", path, groups[i].name, groups[j].loc.line,
			    groups[j].loc.col, j);
			return;
		}
}

/* The node size and the links not given: when every device names a
 * preset, the smallest node and the slowest links among them (a cluster
 * has one node size and one pair of links), else the defaults.  The host
 * size follows the node's, or the presets' when the node is theirs.
 * NVLink SHARP: the presets' least, when every group names one and the
 * node is within theirs (a larger node is no NVSwitch domain).  A link
 * given (at[0] in a node, at[1] between nodes; line 0: not given) above
 * the presets' is warned: no measurement beats the hardware's rate. */
static void node_from_preset(ppcc_cluster *c, loader *L, int per_node_given,
			     const ppcc_loc at[2])
{
	int all = c->n_groups > 0, most = 0, host = 0, nvls = 0;
	double intra = 0, inter = 0;
	for (int g = 0; g < c->n_groups && all; g++) {
		const ppcc_device_preset *p = c->groups[g].preset;
		if (!p) {
			all = 0;
			break;
		}
		double net = p->inter_gb_s > 0 ? p->inter_gb_s
					       : DEFAULT_INTER_GB_S;
		if (g == 0 || p->node_devices < most)
			most = p->node_devices;
		if (g == 0 || p->host_devices < host)
			host = p->host_devices;
		if (g == 0 || p->nvls < nvls)
			nvls = p->nvls;
		if (g == 0 || p->intra_gb_s < intra)
			intra = p->intra_gb_s;
		if (g == 0 || net < inter)
			inter = net;
	}
	if (all && !per_node_given)
		c->devices_per_node = most;
	c->host_devices = all && !per_node_given ? host : c->devices_per_node;
	if (c->host_devices > c->devices_per_node)
		c->host_devices = c->devices_per_node;
	c->nvls = all && c->devices_per_node <= most ? nvls : PPCC_NVLS_NONE;
	const ppcc_link *given[2] = {&c->intra_node, &c->inter_node};
	const double preset[2] = {intra, inter};
	const double rate_max[2] = {MAX_INTRA_GB_S, MAX_INTER_GB_S};
	for (int i = 0; i < 2 && all; i++)
		if (at[i].line > 0 && preset[i] > 0 &&
		    given[i]->bandwidth > preset[i] * 1e9 * 1.0001 &&
		    given[i]->bandwidth <= rate_max[i] * 1e9) /* else warned */
			say(L, PPCC_SEV_WARNING, &at[i],
			    "cluster.links.%s.bandwidth_gb_s: %g GB/s is more "
			    "than the device preset%s %s carries one way (%g "
			    "GB/s); a measured rate is at most that: leave the "
			    "key out to take the preset's", i ? "inter_node"
			    : "intra_node", given[i]->bandwidth / 1e9,
			    c->n_groups > 1 ? "s'" : "'s", i ? "network port"
			    : "link in a node", preset[i]);
	if (c->intra_node.bandwidth == 0)
		c->intra_node.bandwidth = (all ? intra : DEFAULT_INTRA_GB_S) * 1e9;
	if (c->inter_node.bandwidth == 0)
		c->inter_node.bandwidth = (all ? inter : DEFAULT_INTER_GB_S) * 1e9;
}

static void read_cluster(ppcc_cluster *out, loader *L, const section *top,
			 const node *key, const node *value)
{
	section s;
	const node *k;
	out->loc = key->loc;
	out->devices_per_node = DEFAULT_DEVICES_PER_NODE;
	out->intra_node = (ppcc_link){DEFAULT_INTRA_GB_S * 1e9,
				      DEFAULT_INTRA_US * 1e-6};
	out->inter_node = (ppcc_link){DEFAULT_INTER_GB_S * 1e9,
				      DEFAULT_INTER_US * 1e-6};
	int per_node_given = 0;
	out->reserved_bytes = DEFAULT_RESERVED_GIB * 1073741824.0;
	if (sec_open(&s, L, top, key, "cluster", value, cluster_keys) < 0)
		return;
	int errors = L->errors;
	int devices = 0;
	int devices_given = sec_int(&s, "devices", 1, PPCC_MAX_COUNT, 0,
				    &devices, NULL);
	per_node_given = sec_int(&s, "devices_per_node", 1, PPCC_MAX_COUNT, 0,
				 &out->devices_per_node, NULL);
	if (sec_gib(&s, "reserved_gib", NUM_NONNEG, 0,
		    &out->reserved_bytes) == 1)
		out->reserved_bytes *= 1073741824.0;
	const node *lv = sec_get(&s, "links", &k);
	section links = {.L = L};
	if (lv)
		sec_open(&links, L, &s, k, "links", lv, links_keys);
	ppcc_loc link_at[2] = {{0}, {0}};
	read_link(&out->intra_node, L, &links, "intra_node", DEFAULT_INTRA_US,
		  &link_at[0]);
	read_link(&out->inter_node, L, &links, "inter_node", DEFAULT_INTER_US,
		  &link_at[1]);

	/* Both are read when both are given, so that each is checked. */
	int which = sec_one_of(&s, "device", "groups", 1);
	const node *dk, *gk;
	const node *dv = sec_get(&s, "device", &dk);
	const node *gv = sec_get(&s, "groups", &gk);
	ppcc_device_group *single = NULL, *groups = NULL;
	int n_groups = 0;
	int64_t sum = 0;
	if (dv) {
		section ds;
		single = ppcc_arena_alloc(L->a, 1, sizeof *single);
		if (!single) {
			L->status = PPCC_ENOMEM;
			return;
		}
		single->loc = dk->loc;
		single->efficiency = 1.0;
		if (dv->kind == NODE_SCALAR)
			read_preset(single, &s, "device");
		else if (sec_open(&ds, L, &s, dk, "device", dv,
				  device_keys) == 0)
			read_device(single, &ds, 0);
		if (which == 0 && devices_given == 0)
			sec_missing(&s, "devices");
		single->count = devices;
	}
	if (gv && (gv->kind != NODE_SEQ || gv->n == 0 ||
		   gv->n > LOAD_MAX_GROUPS)) {
		char expected[64];
		textf(expected, sizeof expected,
		      "a list of 1 to %d device groups", LOAD_MAX_GROUPS);
		sec_bad(&s, "groups", gv, expected);
	} else if (gv) {
		groups = ppcc_arena_alloc(L->a, (size_t)gv->n, sizeof *groups);
		if (!groups) {
			L->status = PPCC_ENOMEM;
			return;
		}
		n_groups = gv->n;
		int i = 0;
		for (const node *item = gv->first; item; item = item->next, i++) {
			section gs;
			char name[32];
			textf(name, sizeof name, ".groups[%d]", i);
			groups[i].loc = item->loc;
			if (sec_open(&gs, L, &s, NULL, name, item, group_keys) == 0) {
				read_device(&groups[i], &gs, 1);
				group_name_once(groups, i, &gs);
			}
			sum += groups[i].count;
		}
	}
	if (L->errors != errors)
		return;
	if (which == 0) {
		out->groups = single;
		out->n_groups = 1;
	} else if (which == 1) {
		if (sum > PPCC_MAX_COUNT) {
			say(L, PPCC_SEV_ERROR, &gk->loc,
			    "cluster.groups: %lld devices in all; the limit is %d",
			    (long long)sum, PPCC_MAX_COUNT);
			return;
		}
		if (devices_given == 1 && devices != sum) {
			const node *nv = sec_get(&s, "devices", NULL);
			say(L, PPCC_SEV_ERROR, &nv->loc,
			    "cluster.devices: %d, but the groups hold %lld "
			    "devices", devices, (long long)sum);
			return;
		}
		out->groups = groups;
		out->n_groups = n_groups;
		devices = (int)sum;
	}
	node_from_preset(out, L, per_node_given, link_at);
	out->devices = devices;
}

/* ---- pipeline ---------------------------------------------------------- */

static const char *const pipeline_keys[] = {
	"stages", "microbatches", "schedule", "chunks", "group_size",
	"tensor_parallel", "data_parallel", "context_parallel",
	"global_batch_size", "zero", "data_parallel_shard", "adam_moments",
	"grad_bytes",
	"dp_bucket_mb", "partition", "trainer", "expert_parallel",
	"expert_tensor_parallel", "overlap", NULL};

static const char *const moment_words[] = {"fp32", "bf16", NULL};

static const char *const overlap_keys[] = {
	"moe_a2a", "comm_sm_share", "grad_reduce", "param_gather", "tp_comm",
	"p2p", NULL};

/* The overlaps ppcc plans one way only: the value it models, and what
 * that is (doc/design/overlap.md). */
static const struct {
	const char *key;
	int modelled;
	const char *what;
} fixed_overlaps[] = {
	{"grad_reduce", 1, "each gradient bucket reduces on the rank's "
	 "communication channel while later backwards run (Megatron-LM's "
	 "--overlap-grad-reduce)"},
	{"param_gather", 1, "ZeRO's parameter gathers run on the rank's "
	 "communication channel beside the first computes, each stage's "
	 "first compute waiting for its own"},
	{"p2p", 0, "a pipeline transfer is waited for between computes"},
};

/* pipeline.overlap into out->overlap. */
static void read_overlap(ppcc_pipeline *out, loader *L, const section *ps)
{
	const node *key, *value = sec_get(ps, "overlap", &key);
	if (!value)
		return;
	section s;
	if (sec_open(&s, L, ps, key, "overlap", value, overlap_keys) < 0)
		return;
	out->overlap.loc = key->loc;
	int on = 0;
	const node *mk;
	if (sec_bool(&s, "moe_a2a", &on) == 1) {
		sec_get(&s, "moe_a2a", &mk);
		out->overlap.moe_a2a = on ? PPCC_OVERLAP_ON : PPCC_OVERLAP_OFF;
		out->overlap.moe_a2a_loc = mk->loc;
	}
	const node *tk;
	if (sec_bool(&s, "tp_comm", &out->overlap.tp_comm) == 1) {
		sec_get(&s, "tp_comm", &tk);
		out->overlap.tp_comm_loc = tk->loc;
	}
	double share = 0;
	if (sec_number(&s, "comm_sm_share", NUM_POSITIVE, 0, &share) == 1) {
		if (share > 1)
			sec_bad(&s, "comm_sm_share", sec_get(&s, "comm_sm_share",
							     NULL),
				"a share of the SMs above 0 and at most 1");
		else
			out->overlap.comm_sm_share = share;
	}
	for (size_t i = 0; i < sizeof fixed_overlaps / sizeof *fixed_overlaps;
	     i++) {
		int v = 0;
		if (sec_bool(&s, fixed_overlaps[i].key, &v) != 1 ||
		    v == fixed_overlaps[i].modelled)
			continue;
		const node *k;
		sec_get(&s, fixed_overlaps[i].key, &k);
		say(L, PPCC_SEV_ERROR, &k->loc,
		    "%s.%s: ppcc does not model %s; it plans it %s: %s",
		    s.path, fixed_overlaps[i].key, v ? "this overlap"
		    : "this communication exposed", fixed_overlaps[i].modelled
		    ? "overlapped" : "exposed", fixed_overlaps[i].what);
	}
}

static const char *const trainer_words[PPCC_TRAINER_COUNT + 1] = {
	"megatron", "torchtitan", "deepspeed", NULL};

const char *ppcc_trainer_name(int trainer)
{
	return trainer >= 0 && trainer < PPCC_TRAINER_COUNT
		? trainer_words[trainer] : NULL;
}

int ppcc_trainer_named(const char *s)
{
	for (int i = 0; i < PPCC_TRAINER_COUNT; i++)
		if (strcmp(s, trainer_words[i]) == 0)
			return i;
	return -1;
}

/* pipeline.partition: layers per stage, each a positive integer.  The
 * count and the sum are checked against the pipeline and the model by
 * ppcc_config_check, after the command line has had its say. */
static void read_partition(ppcc_pipeline *out, loader *L, const section *s,
			   const node *key, const node *list)
{
	if (list->kind != NODE_SEQ || list->n == 0) {
		sec_bad(s, "partition", list,
			"a list of layer counts, one per stage");
		return;
	}
	int *counts = ppcc_arena_alloc(L->a, (size_t)list->n, sizeof *counts);
	ppcc_loc *locs = ppcc_arena_alloc(L->a, (size_t)list->n, sizeof *locs);
	if (!counts || !locs) {
		L->status = PPCC_ENOMEM;
		return;
	}
	int errors = L->errors, i = 0;
	for (const node *item = list->first; item; item = item->next, i++) {
		double x = 0;
		char got[SHOW_CHARS * 4 + 32];
		locs[i] = item->loc;
		if (item->kind == NODE_SCALAR && parse_decimal(item, &x) == 1 &&
		    x == 0) {
			say(L, PPCC_SEV_ERROR, &item->loc,
			    "pipeline.partition[%d]: stage %d is empty; every "
			    "stage needs at least one layer", i, i);
			continue;
		}
		if (item->kind != NODE_SCALAR || parse_decimal(item, &x) != 1 ||
		    x != floor(x) || x < 1 || x > PPCC_MAX_LAYERS) {
			describe(got, sizeof got, item);
			say(L, PPCC_SEV_ERROR, &item->loc,
			    "pipeline.partition[%d]: expected a layer count from 1 "
			    "to %d, got %s", i, PPCC_MAX_LAYERS, got);
			continue;
		}
		counts[i] = (int)x;
	}
	if (L->errors != errors)
		return;
	out->partition = counts;
	out->partition_locs = locs;
	out->n_partition = list->n;
	out->partition_loc = key->loc;
}

static void read_pipeline(ppcc_pipeline *out, loader *L, const section *top,
			  const node *key, const node *value)
{
	const char *kinds[PPCC_SCHED_COUNT + 1] = {NULL};
	for (int k = 0; k < PPCC_SCHED_COUNT; k++)
		kinds[k] = ppcc_schedule_kind_name(k);
	section s;
	out->loc = key->loc;
	if (sec_open(&s, L, top, key, "pipeline", value, pipeline_keys) < 0)
		return;
	sec_int(&s, "stages", 1, PPCC_MAX_COUNT, 0, &out->stages,
		&out->stages_loc);
	sec_int(&s, "microbatches", 1, PPCC_MAX_COUNT, 0, &out->microbatches,
		&out->microbatches_loc);
	sec_int(&s, "chunks", 1, PPCC_MAX_COUNT, 0, &out->chunks,
		&out->chunks_loc);
	sec_int(&s, "group_size", 0, PPCC_MAX_COUNT, 0, &out->group_size,
		&out->group_size_loc);
	sec_int(&s, "tensor_parallel", 1, PPCC_MAX_COUNT, 0,
		&out->tensor_parallel, &out->tensor_parallel_loc);
	sec_int(&s, "data_parallel", 1, PPCC_MAX_COUNT, 0,
		&out->data_parallel, &out->data_parallel_loc);
	sec_int(&s, "context_parallel", 1, PPCC_MAX_COUNT, 0,
		&out->context_parallel, &out->context_parallel_loc);
	sec_int(&s, "global_batch_size", 1, INT_MAX, 0,
		&out->global_batch_size, &out->global_batch_size_loc);
	sec_int(&s, "expert_parallel", 1, PPCC_MAX_COUNT, 0,
		&out->expert_parallel, &out->expert_parallel_loc);
	sec_int(&s, "expert_tensor_parallel", 1, PPCC_MAX_COUNT, 0,
		&out->expert_tensor_parallel,
		&out->expert_tensor_parallel_loc);
	sec_int(&s, "zero", 0, 3, 0, &out->zero, &out->zero_loc);
	sec_int(&s, "data_parallel_shard", 1, PPCC_MAX_COUNT, 0,
		&out->data_parallel_shard, &out->data_parallel_shard_loc);
	sec_word(&s, "adam_moments", moment_words, &out->moments_bf16,
		 &out->moments_loc);
	sec_number(&s, "grad_bytes", NUM_POSITIVE, 0, &out->grad_bytes);
	const node *bk, *bv = sec_get(&s, "dp_bucket_mb", &bk);
	double mb = 0;
	if (bv && sec_number(&s, "dp_bucket_mb", NUM_POSITIVE, 0, &mb) == 1) {
		/* 1 MB to 1 TB: fewer bytes would make a REDUCE_GRAD of
		 * every few parameters */
		if (mb < PPCC_DP_BUCKET_MB_MIN || mb > PPCC_DP_BUCKET_MB_MAX)
			sec_bad(&s, "dp_bucket_mb", bv,
				"megabytes from 1 to 1000000");
		else
			out->dp_bucket_mb = mb;
		out->dp_bucket_mb_loc = bv->loc;
	}
	int kind = 0;
	if (sec_word(&s, "schedule", kinds, &kind, &out->kind_loc) == 1)
		out->kind = kind;
	int trainer = 0;
	if (sec_word(&s, "trainer", trainer_words, &trainer,
		     &out->trainer_loc) == 1)
		out->trainer = trainer;
	read_overlap(out, L, &s);
	const node *pk, *pv = sec_get(&s, "partition", &pk);
	if (pv)
		read_partition(out, L, &s, pk, pv);
}

/* ---- the whole -------------------------------------------------------- */

static const char *const top_keys[] = {"model", "cluster", "pipeline", NULL};

static void empty_file(loader *L, const char *name, const char *wanted)
{
	ppcc_loc loc = {name, 0, 0};
	say(L, PPCC_SEV_ERROR, &loc, "empty file; expected %s", wanted);
}

/* The model from path, or, when path is NULL, from L's text under the
 * name text_name. */
static int load_config(ppcc_config *out, loader *Lp, const char *path,
		       const char *text_name, const char *cluster_path)
{
	loader L = *Lp;
	ppcc_arena *a = L.a;
	node *root = NULL, *croot = NULL;
	const char *name, *cname = NULL;
	int err = 0;

	memset(out, 0, sizeof *out);
	L.tail = &L.head;
	name = !path ? ppcc_arena_strdup(a, text_name)
		: strcmp(path, "-") == 0 ? "<stdin>"
		: ppcc_arena_strdup(a, path);
	if (cluster_path)
		cname = strcmp(cluster_path, "-") == 0
			? "<stdin>" : ppcc_arena_strdup(a, cluster_path);
	if (!name || (cluster_path && !cname))
		return PPCC_ENOMEM;
	L.files[0] = name;
	L.files[1] = cname;
	out->path = name;
	out->pipeline.kind = PPCC_SCHED_1F1B;
	out->pipeline.grad_bytes = DEFAULT_GRAD_BYTES;

	out->cluster_path = cname;
	int e1 = load_tree(&root, &L, path, name, &out->fingerprint);
	int e2 = cluster_path ? load_tree(&croot, &L, cluster_path, cname,
					  &out->cluster_fingerprint) : 0;
	if (e1 == PPCC_ENOMEM || e2 == PPCC_ENOMEM || L.status) {
		err = PPCC_ENOMEM;
		goto out;
	}
	if (e1 < 0 || e2 < 0) {
		err = PPCC_EINPUT;
		goto out;
	}

	section top, ctop;
	const node *k, *v;
	if (!root) {
		empty_file(&L, name, cluster_path
			   ? "a mapping with model and pipeline"
			   : "a mapping with model, cluster and pipeline");
	} else if (sec_open(&top, &L, NULL, NULL, "", root, top_keys) == 0) {
		top.where = (ppcc_loc){name, 0, 0};
		if ((v = sec_get(&top, "model", &k)))
			read_model(&out->model, &L, &top, k, v);
		else
			sec_missing(&top, "model");
		if ((v = sec_get(&top, "pipeline", &k)))
			read_pipeline(&out->pipeline, &L, &top, k, v);
		v = sec_get(&top, "cluster", &k);
		if (v && cluster_path) {
			say(&L, PPCC_SEV_WARNING, &k->loc,
			    "cluster ignored: the cluster comes from %s", cname);
			unread_reals(&L, v);
		} else if (v)
			read_cluster(&out->cluster, &L, &top, k, v);
		else if (!cluster_path)
			sec_missing(&top, "cluster");
	}
	if (cluster_path && !croot) {
		empty_file(&L, cname, "a mapping with cluster");
	} else if (cluster_path &&
		   sec_open(&ctop, &L, NULL, NULL, "", croot, top_keys) == 0) {
		ctop.where = (ppcc_loc){cname, 0, 0};
		for (const char *const *sk = top_keys; *sk; sk++)
			if (strcmp(*sk, "cluster") != 0 &&
			    (v = sec_get(&ctop, *sk, &k))) {
				say(&L, PPCC_SEV_WARNING, &k->loc,
				    "%s ignored: only the cluster is read from "
				    "a cluster file", *sk);
				unread_reals(&L, v);
			}
		if ((v = sec_get(&ctop, "cluster", &k)))
			read_cluster(&out->cluster, &L, &ctop, k, v);
		else
			sec_missing(&ctop, "cluster");
	}
	if (!out->pipeline.loc.file)
		out->pipeline.loc = (ppcc_loc){name, 0, 0};
	if (L.status) {
		err = L.status;
		goto out;
	}
	if (L.errors) {
		err = PPCC_EINPUT;
		goto out;
	}
	L.tf.trainer = out->pipeline.trainer;
	if ((err = expand_model(&out->model, &L, &out->cluster)) < 0)
		goto out;
	ppcc_config_fill_defaults(out);
out:
	if (err == 0 && L.errors)
		err = PPCC_EINPUT;
	flush(&L);
	return err;
}

int ppcc_config_load(ppcc_config *out, ppcc_arena *a, const char *path,
		     const char *cluster_path, ppcc_diag *d)
{
	loader L = {.a = a, .d = d};
	return load_config(out, &L, path, NULL, cluster_path);
}

int ppcc_config_load_text(ppcc_config *out, ppcc_arena *a, const char *name,
			  const char *text, size_t len, ppcc_diag *d)
{
	loader L = {.a = a, .d = d, .text = text, .text_len = len};
	return load_config(out, &L, NULL, name, NULL);
}

const char *ppcc_input_suggest(const char *s, const char *const *known)
{
	return suggest(s, strlen(s), known);
}

/* ---- a --compare file --------------------------------------------------- */

/* Either `compare:`, a list of entries, or the object ppcc search -f json
 * writes (format: ppcc-search), whose `top` entries are read.  An entry
 * is a `pipeline:` mapping of the search's dimensions, and the
 * micro-batch size and recompute, in a `transformer:` mapping, beside
 * it, or both; the figures of a search's entry are read past.  ppcc(1),
 * "ppcc search", gives the format. */
static const char *const compare_top_keys[] = {"compare", NULL};
static const char *const compare_search_keys[] = {
	"format", "version", "model_file", "model_fingerprint", "cluster_file",
	"cluster_fingerprint", "memory_limit_bytes", "devices", "global_batch_size", "considered",
	"pruned", "pruned_memory", "pruned_bound", "invalid", "simulated",
	"infeasible", "faster_unfit", "seconds", "tie_band", "ties",
	"headroom_bytes", "top", "families", "compared", "model_text",
	"trainer", NULL};
static const char *const compare_entry_keys[] = {
	"name", "pipeline", "transformer", "micro_batch_size", "recompute",
	"fits", "iteration_ms", "tokens_per_s", "mfu", "peak_memory_bytes",
	"bubble_fraction", "lower_bound_ms", "headroom_bytes", "rank",
	"rank_exact", "in_space", NULL};

/* A search's recompute_modules, the names it writes, into e. */
static void read_compare_modules(ppcc_compare_entry *e, const section *s)
{
	const node *k, *list = sec_get(s, "recompute_modules", &k);
	const char *const *names = ppcc_recompute_module_names;
	char words[96], got[64];
	if (!list)
		return;
	list_words(words, sizeof words, names);
	e->recompute_modules_loc = k->loc;
	if (list->kind != NODE_SEQ || list->n == 0) {
		sec_bad(s, "recompute_modules", list, "a list of modules");
		return;
	}
	int i = 0;
	for (const node *item = list->first; item; item = item->next, i++) {
		int w = 0;
		while (names[w] && !(item->kind == NODE_SCALAR &&
				     scalar_is(item, names[w])))
			w++;
		if (names[w]) {
			e->recompute_modules |= 1u << w;
			continue;
		}
		describe(got, sizeof got, item);
		say(s->L, PPCC_SEV_ERROR, &item->loc, "%s.recompute_modules[%d]: "
		    "expected one of %s, got %s", s->path, i, words, got);
	}
}

/* micro_batch_size and recompute of one mapping, into e (a second
 * source that disagrees with the first is an error). */
static void read_compare_mbs(ppcc_compare_entry *e, const section *s)
{
	int b = 0, r = 0;
	ppcc_loc bl = {0}, rl = {0};
	if (sec_int(s, "micro_batch_size", 1, PPCC_MAX_COUNT, 0, &b, &bl) == 1) {
		if (e->micro_batch_size && e->micro_batch_size != b)
			say(s->L, PPCC_SEV_ERROR, &bl, "%s%smicro_batch_size: %d, "
			    "but the entry also gives %d", s->path,
			    s->path[0] ? "." : "", b, e->micro_batch_size);
		e->micro_batch_size = b;
		e->micro_batch_size_loc = bl;
	}
	if (sec_word(s, "recompute", recompute_words, &r, &rl) == 1) {
		if (e->recompute >= 0 && e->recompute != r)
			say(s->L, PPCC_SEV_ERROR, &rl, "%s%srecompute: %s, but "
			    "the entry also gives %s", s->path,
			    s->path[0] ? "." : "", recompute_words[r],
			    recompute_words[e->recompute]);
		e->recompute = r;
		e->recompute_loc = rl;
	}
}

static void read_compare_entry(ppcc_compare_entry *e, loader *L,
			       const section *list, int i, const node *item)
{
	const char *kinds[PPCC_SCHED_COUNT + 1] = {NULL};
	for (int k = 0; k < PPCC_SCHED_COUNT; k++)
		kinds[k] = ppcc_schedule_kind_name(k);
	char name[32];
	section s, ps, ts;
	textf(name, sizeof name, "[%d]", i);
	memset(e, 0, sizeof *e);
	e->recompute = -1;
	e->loc = item->loc;
	e->pipeline.loc = item->loc;
	if (sec_open(&s, L, list, NULL, name, item, compare_entry_keys) < 0)
		return;
	sec_string(&s, "name", 0, &e->name);
	const node *k, *v = sec_get(&s, "pipeline", &k);
	ppcc_pipeline *p = &e->pipeline;
	if (!v) {
		sec_missing(&s, "pipeline");
	} else if (sec_open(&ps, L, &s, k, "pipeline", v,
			    ppcc_search_pipeline_keys) == 0) {
		p->loc = k->loc;
		sec_int(&ps, "stages", 1, PPCC_MAX_COUNT, 0, &p->stages,
			&p->stages_loc);
		sec_int(&ps, "microbatches", 1, PPCC_MAX_COUNT, 0,
			&p->microbatches, &p->microbatches_loc);
		sec_int(&ps, "chunks", 1, PPCC_MAX_COUNT, 0, &p->chunks,
			&p->chunks_loc);
		sec_int(&ps, "tensor_parallel", 1, PPCC_MAX_COUNT, 0,
			&p->tensor_parallel, &p->tensor_parallel_loc);
		sec_int(&ps, "data_parallel", 1, PPCC_MAX_COUNT, 0,
			&p->data_parallel, &p->data_parallel_loc);
		sec_int(&ps, "context_parallel", 1, PPCC_MAX_COUNT, 0,
			&p->context_parallel, &p->context_parallel_loc);
		sec_int(&ps, "global_batch_size", 1, INT_MAX, 0,
			&p->global_batch_size, &p->global_batch_size_loc);
		sec_int(&ps, "zero", 0, 3, 0, &p->zero, &p->zero_loc);
		sec_int(&ps, "expert_parallel", 1, PPCC_MAX_COUNT, 0,
			&p->expert_parallel, &p->expert_parallel_loc);
		sec_int(&ps, "expert_tensor_parallel", 1, PPCC_MAX_COUNT, 0,
			&p->expert_tensor_parallel,
			&p->expert_tensor_parallel_loc);
		int kind = 0;
		if (sec_word(&ps, "schedule", kinds, &kind, &p->kind_loc) == 1)
			p->kind = kind;
	}
	if ((v = sec_get(&s, "transformer", &k)) &&
	    sec_open(&ts, L, &s, k, "transformer", v,
		     ppcc_search_transformer_keys) == 0) {
		read_compare_mbs(e, &ts);
		read_compare_modules(e, &ts);
	}
	read_compare_mbs(e, &s);
}

int ppcc_compare_load(ppcc_compare_entry **out, int *n_out, ppcc_arena *a,
		      const char *path, ppcc_diag *d)
{
	loader L = {.a = a, .d = d};
	node *root = NULL;
	int err = 0;

	*out = NULL;
	*n_out = 0;
	L.tail = &L.head;
	const char *name = strcmp(path, "-") == 0 ? "<stdin>"
			   : ppcc_arena_strdup(a, path);
	if (!name)
		return PPCC_ENOMEM;
	L.files[0] = name;
	err = load_tree(&root, &L, path, name, NULL);
	if (err == PPCC_ENOMEM || L.status) {
		err = PPCC_ENOMEM;
		goto out;
	}
	if (err < 0) {
		err = PPCC_EINPUT;
		goto out;
	}
	section top, list;
	const node *k, *v;
	if (!root) {
		empty_file(&L, name, "a mapping with compare");
		goto out;
	}
	/* the search's own JSON, or a compare: list */
	int is_search = root->kind == NODE_MAP;
	if (is_search) {
		top.L = &L;
		top.map = root;
		is_search = sec_get(&top, "format", NULL) != NULL;
	}
	if (sec_open(&top, &L, NULL, NULL, "", root,
		     is_search ? compare_search_keys : compare_top_keys) < 0)
		goto out;
	top.where = (ppcc_loc){name, 0, 0};
	const char *key = is_search ? "top" : "compare";
	if (is_search) {
		static const char *const formats[] = {"ppcc-search", NULL};
		int f = 0;
		sec_word(&top, "format", formats, &f, NULL);
	}
	if (!(v = sec_get(&top, key, &k))) {
		sec_missing(&top, key);
		goto out;
	}
	if (v->kind != NODE_SEQ || v->n == 0) {
		sec_bad(&top, key, v, "a list of configurations");
		goto out;
	}
	ppcc_compare_entry *e = ppcc_arena_alloc(a, (size_t)v->n, sizeof *e);
	if (!e) {
		err = PPCC_ENOMEM;
		goto out;
	}
	list.L = &L;
	list.map = NULL;
	list.known = NULL;
	list.typos = 0;
	textf(list.path, PATH_CAP, "%s", key);
	list.where = k->loc;
	int i = 0;
	for (const node *item = v->first; item; item = item->next, i++)
		read_compare_entry(&e[i], &L, &list, i, item);
	*out = e;
	*n_out = v->n;
out:
	if (err == 0 && L.status)
		err = L.status;
	if (err == 0 && L.errors)
		err = PPCC_EINPUT;
	if (err) {
		*out = NULL;
		*n_out = 0;
	}
	flush(&L);
	return err;
}
