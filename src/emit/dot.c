/*
 * emit/dot.c - the plan as a picture: a timeline of every rank's compute,
 * or the dependency graph of its actions, written as DOT or rendered to
 * SVG or PNG by libgvc.
 *
 * The timeline: one row per rank, one box per compute action at its
 * simulated start and as wide as it lasts, under it a lane of every
 * collective the text report counts (ppcc_lanes_build), over a window of
 * time (--window; by default the whole step, or a long plan's start);
 * every node pinned, no edges, laid out by the "nop" engine (the DOT
 * text renders to the same bytes with `neato -n`).  The
 * dependency view: an ordinary graph for `dot`, one node per compute
 * action in a cluster per rank, edges for program order and for each
 * message.
 * Contract: Graphviz does the quoting; names show as written (label
 * escapes, cut at DOT_NAME_MAX bytes on a UTF-8 boundary), messages go to
 * the diagnostics sink and never to stderr, numbers do not depend on the
 * locale, clusters come out in rank order.
 * Limits: the timeline draws at most TL_MAX_BOXES boxes and the
 * dependency view DEPS_MAX_NODES nodes (with a warning); a laid-out
 * dependency view over DEPS_MAX_NODE_RANKS is refused.  Not reentrant:
 * libgvc keeps global state, and so does this file.
 *
 * Derivation: doc/design/dot.md (the geometry, what libgvc leaves to the
 * caller, the libgvc 2.43 bugs avoided).
 */
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include "ppcc.h"

/* Bytes of a model or layer name shown in a label before it is cut. */
#define DOT_NAME_MAX 120
#define DOT_LAYER_NAME_MAX 40
#define DOT_FONT "Helvetica"

/* Timeline geometry, in points; y grows upwards as in Graphviz. */
#define TL_MAX_BOXES 50000
#define TL_ROW_H 34.0        /* one rank's row */
#define TL_BOX_H 26.0        /* a compute box */
#define TL_BOX_FONT 10.0
#define TL_TYPICAL_PT 24.0   /* width of the median action */
#define TL_MIN_W 1200.0      /* length of the time axis */
#define TL_MAX_W 2400.0
#define TL_X0 8.0            /* left edge of the row labels */
#define TL_LABEL_GAP 10.0    /* row labels to time 0 */
#define TL_LEGEND_Y 12.0
#define TL_TICK_LABEL_Y 38.0
#define TL_AXIS_Y 50.0
#define TL_ROWS_Y 56.0       /* bottom of the last rank's row */
#define TL_LEGEND_LINE 18.0  /* a second line of the legend */
/* The collectives' lane under each rank's row (when it has any). */
#define TL_LANE_ROW_H 14.0
#define TL_LANE_BOX_H 9.0
#define TL_LANE_FONT 8.0
#define TL_LANE_FONT_TEXT "8"
/* Lane ops narrower than this, with gaps under it, are one box. */
#define TL_LANE_MERGE_PT 1.5
/* The default window: a plan whose median box would be narrower than
 * TL_LABEL_MIN_PT over the whole step at TL_MAX_W is shown from its
 * start, over as much as puts a median box at TL_TYPICAL_PT on an axis
 * TL_AUTO_W long (a picture under 1,900 pixels wide). */
#define TL_LABEL_MIN_PT 16.0
#define TL_AUTO_W 1100.0

#define DEPS_MAX_NODES 2000
/* dot's layout of the dependency view grows faster than nodes x
 * clusters (one cluster per rank, and at least one microbatch, 2 x
 * stages nodes, is shown): as SVG or PNG, a view above this is refused
 * (2,000 nodes of 16 ranks lay out in about 3 s on one core, of 32 in
 * about 12).  Its DOT text is written in linear time
 * (dot_write_clusters) and has no such limit. */
#define DEPS_MAX_NODE_RANKS (1L << 15)

/* ---- strings ---------------------------------------------------------- */

/* A growable string; after a failed allocation oom is set and every
 * further append is dropped. */
typedef struct dot_str {
	char *s;
	size_t len, cap;
	int oom;
} dot_str;

static int str_reserve(dot_str *b, size_t more)
{
	if (b->oom)
		return -1;
	if (more > SIZE_MAX / 2 - b->len) {
		b->oom = 1;
		return -1;
	}
	if (b->len + more + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + more + 1)
		cap *= 2;
	char *s = ppcc_realloc(b->s, cap);
	if (!s) {
		b->oom = 1;
		return -1;
	}
	b->s = s;
	b->cap = cap;
	return 0;
}

static void str_putn(dot_str *b, const char *s, size_t n)
{
	if (str_reserve(b, n) < 0)
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void str_puts(dot_str *b, const char *s)
{
	str_putn(b, s, strlen(s));
}

/* printf for integers and strings only: %f would follow LC_NUMERIC. */
static void str_printf(dot_str *b, const char *fmt, ...) PPCC_PRINTF(2, 3);
static void str_printf(dot_str *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = 1;
		return;
	}
	if ((size_t)n < sizeof small) {
		str_putn(b, small, (size_t)n);
		return;
	}
	if (str_reserve(b, (size_t)n) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static void str_clear(dot_str *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
}

/* x with at most `decimals` digits after the point, trailing zeros
 * dropped; the same bytes in every locale. */
static void str_fixed(dot_str *b, double x, int decimals)
{
	static const long long pow10[] = {1, 10, 100, 1000, 10000, 100000,
					  1000000};
	if (decimals < 0)
		decimals = 0;
	if (decimals > 6)
		decimals = 6;
	if (!isfinite(x) || fabs(x) > 1e12)
		x = 0;
	long long unit = pow10[decimals];
	long long v = llround(fabs(x) * (double)unit);
	if (x < 0 && v != 0)
		str_puts(b, "-");
	str_printf(b, "%lld", v / unit);
	long long frac = v % unit;
	if (frac == 0)
		return;
	int digits = decimals;
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	str_printf(b, ".%0*lld", digits, frac);
}

/* A duration in ms with about four significant digits. */
static void str_ms(dot_str *b, double ms)
{
	double a = fabs(ms);
	str_fixed(b, ms, a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : 3);
}

static void str_bytes(dot_str *b, double bytes)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;
	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	str_fixed(b, bytes, u == 0 ? 0 : bytes >= 100 ? 0 : 1);
	str_printf(b, " %s", unit[u]);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if it is not one
 * (overlong forms and surrogates included). */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	size_t n;
	unsigned min;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		min = 0x10000;
	} else {
		return 0;
	}
	unsigned cp = c & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Appends s as label text that Graphviz shows exactly as s: '\' doubled
 * (so \N, \G, \n in a name stay text), '&' as &amp; (so entities in a name
 * stay text), each newline as the line break `nl` ("\\n" centred, "\\l"
 * left, "\\r" right), control characters and invalid UTF-8 as U+FFFD.
 * At most max bytes of s are used; if s is longer it is cut on a
 * character boundary and "…" follows. */
static void dot_label(dot_str *b, const char *s, size_t max, const char *nl)
{
	static const char replacement[] = "\xef\xbf\xbd";
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	uint32_t cp;
	while (u[i]) {
		size_t n = utf8_len(u + i);
		if (i + (n ? n : 1) > max) {
			str_puts(b, "\xe2\x80\xa6");
			return;
		}
		if (n == 0) {
			str_puts(b, replacement);
			i++;
			continue;
		}
		unsigned char c = u[i];
		if (c == '\\')
			str_puts(b, "\\\\");
		else if (c == '&')
			str_puts(b, "&amp;");
		else if (c == '\n')
			str_puts(b, nl);
		else if (c < 0x20 || c == 0x7f)
			str_puts(b, replacement);
		else if (ppcc_invisible_at((const char *)u + i, &cp))
			str_printf(b, "<U+%04X>", (unsigned)cp);
		else
			str_putn(b, (const char *)u + i, n);
		i += n;
	}
}

/* Characters of UTF-8 text (continuation bytes not counted). */
static size_t utf8_chars(const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

/* A generous estimate of the width of one line of text in DOT_FONT. */
static double text_width(size_t chars, double fontsize)
{
	return (double)chars * 0.6 * fontsize;
}

/* ---- libgvc messages --------------------------------------------------- */

/* libgvc hands its messages in pieces ("Error", ": ", text with '\n');
 * whole lines go to the sink as "graphviz: ..." diagnostics. */
static struct {
	ppcc_diag *d;
	char line[512];
	size_t len;
} gv_sink;

static void gv_sink_flush(void)
{
	if (gv_sink.len == 0)
		return;
	gv_sink.line[gv_sink.len] = '\0';
	const char *msg = gv_sink.line;
	int error = 0;
	if (strncmp(msg, "Error: ", 7) == 0) {
		error = 1;
		msg += 7;
	} else if (strncmp(msg, "Warning: ", 9) == 0) {
		msg += 9;
	}
	size_t n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '.' || msg[n - 1] == ' '))
		n--;
	if (gv_sink.d)
		ppcc_diag_report(gv_sink.d, error ? PPCC_SEV_ERROR
						  : PPCC_SEV_WARNING,
				 NULL, "graphviz: %.*s", (int)n, msg);
	gv_sink.len = 0;
}

static int gv_sink_message(char *msg)
{
	for (const char *c = msg; *c; c++) {
		if (*c == '\n') {
			gv_sink_flush();
			continue;
		}
		if (gv_sink.len < sizeof gv_sink.line - 1)
			gv_sink.line[gv_sink.len++] = *c;
	}
	return 0;
}

/* ---- the graph -------------------------------------------------------- */

/* Cluster ids.  cgraph gives a named object the address of its interned
 * name as id and keeps subgraphs in id order, so clusters would be
 * written and laid out in an order that depends on the heap.  (Its
 * fallback, the internal name map, is never freed.)  Here the clusters
 * "cluster_rank<r>" of the graph being built get the ids 2r + 2 (even, as
 * named ids are, and far below any address) and so come out in rank
 * order; every other name is mapped as usual. */
static struct {
	char **names; /* names[r] = "cluster_rank<r>", interned in the graph */
	int n;
} dot_clusters;

static int cluster_id(int objtype, const char *str, IDTYPE *id)
{
	int r;
	char tail;
	if (objtype != AGRAPH || !str ||
	    sscanf(str, "cluster_rank%d%c", &r, &tail) != 1 || r < 0 ||
	    r >= dot_clusters.n || strcmp(str, dot_clusters.names[r]) != 0)
		return 0;
	*id = (IDTYPE)(2 * (IDTYPE)r + 2);
	return 1;
}

static long dot_id_map(void *state, int objtype, char *str, IDTYPE *id,
		       int createflag)
{
	if (cluster_id(objtype, str, id))
		return 1;
	return AgIdDisc.map(state, objtype, str, id, createflag);
}

static int is_cluster_id(int objtype, IDTYPE id)
{
	return objtype == AGRAPH && id % 2 == 0 && id >= 2 &&
	       id <= 2 * (IDTYPE)dot_clusters.n;
}

static char *dot_id_print(void *state, int objtype, IDTYPE id)
{
	if (is_cluster_id(objtype, id))
		return dot_clusters.names[id / 2 - 1];
	return AgIdDisc.print(state, objtype, id);
}

static void dot_id_free(void *state, int objtype, IDTYPE id)
{
	if (!is_cluster_id(objtype, id))
		AgIdDisc.free(state, objtype, id);
}

static Agraph_t *dot_open(char *name, Agdesc_t desc)
{
	static Agiddisc_t id_disc;
	static Agdisc_t disc;
	id_disc = AgIdDisc;
	id_disc.map = dot_id_map;
	id_disc.print = dot_id_print;
	id_disc.free = dot_id_free;
	disc.mem = &AgMemDisc;
	disc.id = &id_disc;
	disc.io = &AgIoDisc;
	return agopen(name, desc, &disc);
}

typedef struct dot_ctx {
	const ppcc_plan *plan;
	const ppcc_schedule *s;
	const ppcc_estimate *e;
	ppcc_diag *d;
	Agraph_t *g;
	dot_str str; /* the value being built */
	int err;
	Agsym_t *pos, *width, *height, *label, *shape, *style, *fill, *color,
		*fontcolor, *fontsize, *penwidth, *tooltip;
	Agsym_t *e_style, *e_color, *e_label, *e_weight;
	Agsym_t *g_label, *g_labeljust, *g_style, *g_fill, *g_color,
		*g_fontsize;
	int format; /* a ppcc_format whose emitter is ppcc_emit_dot */
	ppcc_dot_probe *probe; /* tests: NULL */
	/* the timeline: its window (the options'), its collectives, the
	 * height of a rank's lane (0: none) and of the legend's lines
	 * above the first */
	ppcc_window window;
	ppcc_lanes lanes;
	double lane_h, legend_h;
} dot_ctx;

static int is_compute(int op)
{
	return op == PPCC_OP_F || op == PPCC_OP_B || op == PPCC_OP_I ||
	       op == PPCC_OP_W;
}

/* The half of an overlapped pair that action i of the list is: 1 for its
 * F (right after the OVERLAP_F_B marker), 2 for its B, 0 for neither. */
static int pair_half(const ppcc_action *acts, int i)
{
	if (i >= 1 && acts[i - 1].op == PPCC_OP_OVERLAP_F_B)
		return 1;
	if (i >= 2 && acts[i - 2].op == PPCC_OP_OVERLAP_F_B)
		return 2;
	return 0;
}

/* The outline of the two halves of an overlapped pair. */
#define DOT_PAIR_INK "#c0392b"

static int stage_chunk(const dot_ctx *x, int stage)
{
	const ppcc_schedule *s = x->s;
	if (s->stages && stage >= 0 && stage < s->n_stages)
		return s->stages[stage].chunk;
	return s->n_ranks > 0 && stage >= 0 ? stage / s->n_ranks : 0;
}

/* The fill of an op's boxes: a colour per op (forward blue, backward
 * green, input-gradient orange, weight-gradient purple), later chunks
 * lighter. */
static void op_fill(char out[8], int op, int chunk, int chunks)
{
	static const unsigned base[4] = {0x4e79a7, 0x59a14f, 0xf28e2b,
					 0xb07aa1};
	unsigned c = base[op >= 0 && op < 4 ? op : 0];
	double t = chunks > 1 ? 0.6 * chunk / (chunks - 1) : 0.0;
	if (t < 0 || t > 0.6)
		t = 0.6;
	int rgb[3] = {(int)(c >> 16) & 255, (int)(c >> 8) & 255, (int)c & 255};
	for (int k = 0; k < 3; k++)
		rgb[k] = (int)lround(rgb[k] + (255 - rgb[k]) * t);
	snprintf(out, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

static const char *ink_on(const char fill[8])
{
	unsigned c = (unsigned)strtoul(fill + 1, NULL, 16);
	double y = 0.299 * ((c >> 16) & 255) + 0.587 * ((c >> 8) & 255) +
		   0.114 * (c & 255);
	return y < 150 ? "white" : "#1a1a1a";
}

static const char *op_word(int op)
{
	switch (op) {
	case PPCC_OP_F: return "forward";
	case PPCC_OP_B: return "backward";
	case PPCC_OP_I: return "backward, input gradient";
	case PPCC_OP_W: return "backward, weight gradient";
	}
	return "?";
}

/* Sets attribute sym of obj to the value built in x->str, then clears it. */
static void set_str(dot_ctx *x, void *obj, Agsym_t *sym)
{
	if (x->str.oom) {
		x->err = PPCC_ENOMEM;
	} else if (!x->err &&
		   agxset(obj, sym, x->str.s ? x->str.s : (char *)"") != 0) {
		x->err = PPCC_EINTERNAL;
	}
	str_clear(&x->str);
}

static void set(dot_ctx *x, void *obj, Agsym_t *sym, const char *value)
{
	str_puts(&x->str, value);
	set_str(x, obj, sym);
}

static Agnode_t *add_node(dot_ctx *x, Agraph_t *sub, const char *name)
{
	if (x->err)
		return NULL;
	Agnode_t *n = agnode(sub ? sub : x->g, (char *)name, 1);
	if (!n)
		x->err = PPCC_EINTERNAL;
	return n;
}

/* pos="x,y!" and the size, for a node pinned at centre (cx, cy) with w by
 * h points. */
static void place(dot_ctx *x, Agnode_t *n, double cx, double cy, double w,
		  double h)
{
	if (!n)
		return;
	str_fixed(&x->str, cx, 2);
	str_puts(&x->str, ",");
	str_fixed(&x->str, cy, 2);
	str_puts(&x->str, "!");
	set_str(x, n, x->pos);
	str_fixed(&x->str, w / 72.0, 5);
	set_str(x, n, x->width);
	str_fixed(&x->str, h / 72.0, 5);
	set_str(x, n, x->height);
}

static void declare_common(dot_ctx *x)
{
	Agraph_t *g = x->g;
	agattr(g, AGRAPH, "fontname", DOT_FONT);
	x->g_fontsize = agattr(g, AGRAPH, "fontsize", "14");
	agattr(g, AGRAPH, "labelloc", "t");
	agattr(g, AGRAPH, "bgcolor", "white");
	/* agwrite leaves out a declaration whose default is "" unless it is
	 * marked to print; without it a reader labels nodes with their
	 * names. */
	x->label = agattr(g, AGNODE, "label", "");
	if (x->label)
		x->label->print = 1;
	x->shape = agattr(g, AGNODE, "shape", "box");
	x->style = agattr(g, AGNODE, "style", "filled");
	x->fill = agattr(g, AGNODE, "fillcolor", "white");
	x->color = agattr(g, AGNODE, "color", "white");
	x->fontcolor = agattr(g, AGNODE, "fontcolor", "#1a1a1a");
	agattr(g, AGNODE, "fontname", DOT_FONT);
	x->fontsize = agattr(g, AGNODE, "fontsize", "10");
	x->penwidth = agattr(g, AGNODE, "penwidth", "0.5");
	x->tooltip = agattr(g, AGNODE, "tooltip", "");
}

/* The title's first line: model, schedule, p, m, v. */
static void title_head(dot_ctx *x)
{
	const ppcc_schedule *s = x->s;
	const char *name = x->plan->model_name ? x->plan->model_name : "model";
	dot_label(&x->str, name, DOT_NAME_MAX, "\\n");
	str_printf(&x->str, ": %s, p = %d, m = %d, v = %d\\n",
		   ppcc_schedule_kind_name(s->kind), (int)s->n_ranks,
		   (int)s->n_microbatches, (int)s->n_chunks);
}

/* "layers a–b (first … last)" for stage, names cut to
 * DOT_LAYER_NAME_MAX bytes; lines end with nl. */
static void stage_layers(dot_ctx *x, int stage, const char *nl)
{
	const ppcc_schedule *s = x->s;
	if (!s->stages || stage < 0 || stage >= s->n_stages)
		return;
	const ppcc_stage_info *st = &s->stages[stage];
	if (st->first_layer == st->last_layer)
		str_printf(&x->str, "layer %d", (int)st->first_layer);
	else
		str_printf(&x->str, "layers %d\xe2\x80\x93%d",
			   (int)st->first_layer, (int)st->last_layer);
	const ppcc_layer *l = x->plan->layers;
	int n = x->plan->n_layers;
	if (l && st->first_layer >= 0 && st->last_layer < n &&
	    st->first_layer <= st->last_layer) {
		str_puts(&x->str, " (");
		if (l[st->first_layer].name)
			dot_label(&x->str, l[st->first_layer].name,
				  DOT_LAYER_NAME_MAX, nl);
		if (st->last_layer != st->first_layer &&
		    l[st->last_layer].name) {
			str_puts(&x->str, " \xe2\x80\xa6 ");
			dot_label(&x->str, l[st->last_layer].name,
				  DOT_LAYER_NAME_MAX, nl);
		}
		str_puts(&x->str, ")");
	}
	str_puts(&x->str, nl);
}

/* ---- timeline ---------------------------------------------------------- */

typedef struct tl_geom {
	double x0;     /* the window's start */
	double scale;  /* points per ms */
	double width;  /* of the time axis */
	double w0, w1; /* the window, ms: what overlaps [w0, w1) is drawn */
	double extent; /* w1 - w0 */
	double cutoff; /* actions starting at or after it are not drawn */
	double plan_end; /* the latest end of any action or collective */
	int auto_window; /* the default window of a big plan */
	double label_w;
} tl_geom;

/* The bottom of rank r's band: its lane (when the plan has collectives)
 * under its row of compute boxes. */
static double band_y(const dot_ctx *x, int r)
{
	return x->legend_h + TL_ROWS_Y +
	       (x->s->n_ranks - 1 - r) * (TL_ROW_H + x->lane_h);
}

static double row_y(const dot_ctx *x, int r)
{
	return band_y(x, r) + x->lane_h + TL_ROW_H / 2;
}

static double lane_y(const dot_ctx *x, int r)
{
	return band_y(x, r) + x->lane_h / 2;
}

/* Whether an action of [t0, t1] shows in the window: it overlaps it (an
 * instant, as a zero-length action is, when it lies in it). */
static int in_window(const tl_geom *gm, double t0, double t1)
{
	return t1 > t0 ? t1 > gm->w0 && t0 < gm->w1
		       : t0 >= gm->w0 && t0 < gm->w1;
}

static double clip(const tl_geom *gm, double t)
{
	return t < gm->w0 ? gm->w0 : t > gm->w1 ? gm->w1 : t;
}

static double tx(const tl_geom *gm, double t)
{
	return gm->x0 + (clip(gm, t) - gm->w0) * gm->scale;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The row label of rank r: "rank r · stage s" and its layers, or the list
 * of its stages; each line ends with nl. */
static void row_label(dot_ctx *x, int r, const char *nl)
{
	const ppcc_schedule *s = x->s;
	int p = s->n_ranks, v = s->n_chunks > 0 ? s->n_chunks : 1;
	if (v == 1) {
		str_printf(&x->str, "rank %d \xc2\xb7 stage %d%s", r, r, nl);
		stage_layers(x, r, nl);
		return;
	}
	/* the rank's stages in stage order, from the stage table (the V
	 * placement puts r and 2p-1-r together) */
	str_printf(&x->str, "rank %d%sstages ", r, nl);
	int c = 0, S = s->n_stages;
	for (int st = 0; st < S && c < v; st++) {
		int held = s->stages ? s->stages[st].rank == r : st % p == r;
		if (!held)
			continue;
		if (v > 6 && c == 3) {
			str_puts(&x->str, "\xe2\x80\xa6, ");
			for (int t = S - 1; t > st; t--)
				if (s->stages ? s->stages[t].rank == r
					      : t % p == r) {
					st = t;
					break;
				}
			c = v - 1;
		}
		str_printf(&x->str, "%d%s", st, c + 1 < v ? ", " : "");
		c++;
	}
	str_puts(&x->str, nl);
}

/* The label of rank r's lane: the time of its reductions and of its
 * gathers over the whole iteration, as the text report counts them. */
static void lane_label(dot_ctx *x, int r, const char *nl)
{
	const ppcc_lanes *l = &x->lanes;
	int any = 0;
	if (l->reduce_ms[r] > 0) {
		str_puts(&x->str, "reduce ");
		str_fixed(&x->str, l->reduce_ms[r], 3);
		str_puts(&x->str, " ms");
		any = 1;
	}
	if (l->gather_ms[r] > 0) {
		str_puts(&x->str, any ? ", gather " : "gather ");
		str_fixed(&x->str, l->gather_ms[r], 3);
		str_puts(&x->str, " ms");
	}
	str_puts(&x->str, nl);
}

/* Widest line of the label in x->str, in points at fontsize. */
static double label_width(const dot_ctx *x, double fontsize)
{
	double best = 0;
	const char *s = x->str.s ? x->str.s : "";
	const char *line = s;
	for (const char *c = s;; c++) {
		if (*c == '\0' || (c[0] == '\\' && c[1] != '\0' &&
				   strchr("nlr", c[1]))) {
			double w = text_width(utf8_chars(line,
						(size_t)(c - line)), fontsize);
			if (w > best)
				best = w;
			if (*c == '\0')
				break;
			c++;
			line = c + 1;
		} else if (c[0] == '\\' && c[1] != '\0') {
			c++;
		}
	}
	return best;
}

/* The median duration of the compute actions that show in [w0, w1)
 * (clipped to it), 0 with none; *out_n their count. */
static double tl_median(const dot_ctx *x, double *t, double w0, double w1,
			double cutoff, long *out_n)
{
	const ppcc_schedule *s = x->s;
	const ppcc_estimate *e = x->e;
	tl_geom win = {.w0 = w0, .w1 = w1};
	long k = 0;
	for (int r = 0; r < s->n_ranks; r++)
		for (int i = 0; i < s->ranks[r].n_actions; i++) {
			double t0 = e->start_ms[r][i], t1 = e->end_ms[r][i];
			if (!is_compute(s->ranks[r].actions[i].op) ||
			    !(t0 < cutoff) || !in_window(&win, t0, t1))
				continue;
			double d = clip(&win, t1) - clip(&win, t0);
			t[k++] = d > 0 ? d : 0;
		}
	*out_n = k;
	if (k == 0)
		return 0;
	qsort(t, (size_t)k, sizeof *t, cmp_double);
	return t[k / 2];
}

/* The window (the options' or the default), the cut at TL_MAX_BOXES
 * boxes, the scale.  A window that does not overlap the plan is an error
 * naming --window. */
static int tl_geometry(dot_ctx *x, tl_geom *out, long *n_drawn,
		       long *n_total)
{
	const ppcc_schedule *s = x->s;
	const ppcc_estimate *e = x->e;
	const ppcc_window *win = &x->window;
	long total = 0;
	double end = e->step_ms > 0 && isfinite(e->step_ms) ? e->step_ms : 0;
	for (int r = 0; r < s->n_ranks; r++)
		for (int i = 0; i < s->ranks[r].n_actions; i++) {
			total += is_compute(s->ranks[r].actions[i].op);
			if (e->end_ms[r][i] > end)
				end = e->end_ms[r][i];
		}
	for (int r = 0; e->dp_end_ms && r < s->n_ranks; r++)
		if (e->dp_end_ms[r] > end)
			end = e->dp_end_ms[r];
	if (x->lanes.end_ms > end)
		end = x->lanes.end_ms;
	if (!(end > 0) || !isfinite(end))
		end = 1;
	out->plan_end = end;
	out->auto_window = 0;
	double *t = ppcc_calloc((size_t)(total > 0 ? total : 1),
				sizeof(double));
	if (!t)
		return PPCC_ENOMEM;
	long k;
	int err = 0;
	switch (win->kind) {
	case PPCC_WINDOW_SPAN:
		out->w0 = win->start_ms;
		out->w1 = win->end_ms;
		break;
	case PPCC_WINDOW_STEP:
		err = ppcc_window_step_span(&out->w0, &out->w1, s,
					    x->plan->best.costs, e, win->step,
					    x->d);
		break;
	default:
		out->w0 = 0;
		out->w1 = end;
		if (win->kind == PPCC_WINDOW_ALL)
			break;
		/* the whole step, unless its median box would be narrower
		 * than a label at the widest axis: then its start, as much
		 * as TL_AUTO_W shows at TL_TYPICAL_PT a median box */
		double median = tl_median(x, t, 0, end, INFINITY, &k);
		if (median > 0 && TL_MAX_W * median / end < TL_LABEL_MIN_PT) {
			out->w1 = TL_AUTO_W * median / TL_TYPICAL_PT;
			out->auto_window = 1;
		}
		break;
	}
	if (err < 0)
		goto out;
	if (!(out->w1 > out->w0) || !(out->w0 < end) || out->w1 <= 0) {
		/* (the C locale: ppcc_emit_dot's) */
		ppcc_error(x->d, NULL, "--window: %.3f to %.3f ms lies "
			   "outside the plan, which runs from 0 to %.3f ms",
			   out->w0, out->w1, end);
		err = PPCC_EINPUT;
		goto out;
	}
	out->cutoff = INFINITY;
	k = 0;
	for (int r = 0; r < s->n_ranks; r++)
		for (int i = 0; i < s->ranks[r].n_actions; i++)
			if (is_compute(s->ranks[r].actions[i].op) &&
			    in_window(out, e->start_ms[r][i], e->end_ms[r][i]))
				t[k++] = e->start_ms[r][i];
	if (k > TL_MAX_BOXES) {
		qsort(t, (size_t)k, sizeof *t, cmp_double);
		out->cutoff = t[TL_MAX_BOXES];
	}
	total = k;
	double median = tl_median(x, t, out->w0, out->w1, out->cutoff, &k);
	double extent = out->w1 - out->w0;
	if (out->cutoff < out->w1 && out->cutoff > out->w0) {
		double last = out->w0;
		for (int r = 0; r < s->n_ranks; r++)
			for (int i = 0; i < s->ranks[r].n_actions; i++)
				if (is_compute(s->ranks[r].actions[i].op) &&
				    e->start_ms[r][i] < out->cutoff &&
				    in_window(out, e->start_ms[r][i],
					      e->end_ms[r][i]) &&
				    e->end_ms[r][i] > last)
					last = e->end_ms[r][i];
		if (last < out->w1)
			out->w1 = last > out->w0 ? last : out->w1;
		extent = out->w1 - out->w0;
	}
	double w = median > 0 ? TL_TYPICAL_PT * extent / median : TL_MIN_W;
	w = w < TL_MIN_W ? TL_MIN_W : w > TL_MAX_W ? TL_MAX_W : w;
	if (out->auto_window)
		w = TL_AUTO_W;

	double label_w = 60;
	for (int r = 0; r < s->n_ranks; r++) {
		row_label(x, r, "\\r");
		double lw = label_width(x, 10.0);
		str_clear(&x->str);
		if (lw > label_w)
			label_w = lw;
		if (x->lane_h > 0) {
			lane_label(x, r, "\\r");
			lw = label_width(x, TL_LANE_FONT);
			str_clear(&x->str);
			if (lw > label_w)
				label_w = lw;
		}
	}
	if (label_w > 360)
		label_w = 360;
	out->label_w = label_w + 12;
	out->x0 = TL_X0 + out->label_w + TL_LABEL_GAP;
	out->width = w;
	out->extent = extent;
	out->scale = w / extent;
	*n_drawn = k;
	*n_total = total;
	err = x->str.oom ? PPCC_ENOMEM : 0;
out:
	ppcc_free(t);
	return err;
}

/* About one tick per 110 points, at 1, 2 or 5 times a power of ten. */
static double tick_step(double extent, double width)
{
	double target = extent / fmax(2.0, width / 110.0);
	double mag = pow(10.0, floor(log10(target)));
	double f = target / mag;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

/* A filled rectangle with no text: row bands, grid lines, the axis. */
static void tl_rect(dot_ctx *x, const char *name, double cx, double cy,
		    double w, double h, const char *fill)
{
	Agnode_t *n = add_node(x, NULL, name);
	place(x, n, cx, cy, w, h);
	if (!n)
		return;
	set(x, n, x->fill, fill);
	set(x, n, x->color, fill);
	set(x, n, x->penwidth, "0");
}

/* A line of text, left-aligned at x_left when left, else centred at cx. */
static void tl_text(dot_ctx *x, const char *name, double cx, double cy,
		    int left, double fontsize)
{
	double w = label_width(x, fontsize) + 4;
	if (left)
		str_puts(&x->str, "\\l");
	Agnode_t *n = add_node(x, NULL, name);
	if (!n) {
		str_clear(&x->str);
		return;
	}
	set_str(x, n, x->label);
	place(x, n, left ? cx + w / 2 : cx, cy, w, fontsize + 6);
	set(x, n, x->shape, "plaintext");
	set(x, n, x->style, "solid");
	char size[16];
	snprintf(size, sizeof size, "%d", (int)fontsize);
	set(x, n, x->fontsize, size);
}

static void tl_background(dot_ctx *x, const tl_geom *gm)
{
	const ppcc_schedule *s = x->s;
	char name[48];
	double band = TL_ROW_H + x->lane_h;
	for (int r = 0; r < s->n_ranks; r++) {
		snprintf(name, sizeof name, "row%d", r);
		tl_rect(x, name, gm->x0 + gm->width / 2,
			band_y(x, r) + band / 2, gm->width, band - 2,
			r % 2 ? "#f2f2f2" : "#f8f8f8");
	}
	double step = tick_step(gm->extent, gm->width);
	int decimals = step >= 1 ? 0 : (int)-floor(log10(step) + 1e-9);
	double top = x->legend_h + TL_ROWS_Y + s->n_ranks * band;
	double axis_y = x->legend_h + TL_AXIS_Y;
	/* ticks at the multiples of step in the window, labelled with
	 * their time on the plan's clock */
	double first = ceil(gm->w0 / step - 1e-9);
	int n_ticks = (int)floor(gm->w1 / step + 1e-9) - (int)first;
	for (int k = 0; k <= n_ticks; k++) {
		double at = gm->x0 + ((first + k) * step - gm->w0) * gm->scale;
		snprintf(name, sizeof name, "grid%d", k);
		tl_rect(x, name, at, (axis_y + top) / 2, 0.6,
			top - axis_y, "#d9d9d9");
	}
	tl_rect(x, "axis", gm->x0 + gm->width / 2, axis_y, gm->width, 1.0,
		"#404040");
	for (int k = 0; k <= n_ticks; k++) {
		double at = gm->x0 + ((first + k) * step - gm->w0) * gm->scale;
		snprintf(name, sizeof name, "tick%d", k);
		tl_rect(x, name, at, axis_y - 2.5, 1.0, 5.0, "#404040");
		str_fixed(&x->str, (first + k) * step, decimals);
		snprintf(name, sizeof name, "ticklabel%d", k);
		tl_text(x, name, at, x->legend_h + TL_TICK_LABEL_Y, 0, 10);
	}
	str_puts(&x->str, "time (ms)");
	tl_text(x, "axislabel", gm->x0 + gm->width + 6, axis_y, 1, 10);
}

static void tl_rows(dot_ctx *x, const tl_geom *gm)
{
	char name[32];
	for (int r = 0; r < x->s->n_ranks; r++) {
		snprintf(name, sizeof name, "ranklabel%d", r);
		Agnode_t *n = add_node(x, NULL, name);
		if (!n)
			return;
		row_label(x, r, "\\r");
		set_str(x, n, x->label);
		place(x, n, TL_X0 + gm->label_w / 2, row_y(x, r), gm->label_w,
		      TL_ROW_H);
		set(x, n, x->shape, "plaintext");
		set(x, n, x->style, "solid");
		if (x->lane_h <= 0)
			continue;
		snprintf(name, sizeof name, "lanelabel%d", r);
		n = add_node(x, NULL, name);
		if (!n)
			return;
		lane_label(x, r, "\\r");
		set_str(x, n, x->label);
		place(x, n, TL_X0 + gm->label_w / 2, lane_y(x, r), gm->label_w,
		      x->lane_h);
		set(x, n, x->shape, "plaintext");
		set(x, n, x->style, "solid");
		set(x, n, x->fontsize, TL_LANE_FONT_TEXT);
		set(x, n, x->fontcolor, "#555555");
	}
}

/* The box label: the microbatch, or "mbcC" (chunk C) when v > 1 and
 * every box of the plan has room for that; the shade tells the chunk
 * otherwise.  A box too narrow for its label gets none. */
static int tl_box_text(char *out, size_t size, const ppcc_action *a,
		       int chunk, int with_chunk)
{
	if (with_chunk)
		return snprintf(out, size, "%dc%d", (int)a->mb, chunk);
	return snprintf(out, size, "%d", (int)a->mb);
}

static int tl_chunk_labels_fit(dot_ctx *x, const tl_geom *gm)
{
	const ppcc_schedule *s = x->s;
	const ppcc_estimate *e = x->e;
	char text[48];
	if (s->n_chunks <= 1)
		return 0;
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			double t0 = e->start_ms[r][i], t1 = e->end_ms[r][i];
			if (!is_compute(a->op) || !(t0 < gm->cutoff) ||
			    !in_window(gm, t0, t1))
				continue;
			int n = tl_box_text(text, sizeof text, a,
					    stage_chunk(x, a->stage), 1);
			if (text_width((size_t)n, TL_BOX_FONT) + 3 >
			    tx(gm, t1) - tx(gm, t0))
				return 0;
		}
	}
	return 1;
}

/* One box per compute action that shows in the window and starts before
 * the cutoff, clipped to the window, with a tooltip that says what it is
 * and when it runs. */
static void tl_boxes(dot_ctx *x, const tl_geom *gm)
{
	const ppcc_schedule *s = x->s;
	const ppcc_estimate *e = x->e;
	int v = s->n_chunks > 0 ? s->n_chunks : 1;
	int with_chunk = tl_chunk_labels_fit(x, gm);
	char name[48], fill[8], text[48];
	for (int r = 0; r < s->n_ranks && !x->err; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		for (int i = 0; i < rs->n_actions && !x->err; i++) {
			const ppcc_action *a = &rs->actions[i];
			double t0 = e->start_ms[r][i], t1 = e->end_ms[r][i];
			if (!is_compute(a->op) || !(t0 < gm->cutoff) ||
			    !in_window(gm, t0, t1))
				continue;
			if (t1 < t0)
				t1 = t0;
			double left = tx(gm, t0), w = tx(gm, t1) - left;
			snprintf(name, sizeof name, "r%da%d", r, i);
			Agnode_t *n = add_node(x, NULL, name);
			place(x, n, left + w / 2, row_y(x, r), w, TL_BOX_H);
			if (!n)
				return;
			int chunk = stage_chunk(x, a->stage);
			int half = pair_half(rs->actions, i);
			op_fill(fill, a->op, chunk, v);
			set(x, n, x->fill, fill);
			set(x, n, x->fontcolor, ink_on(fill));
			if (half) {
				set(x, n, x->color, DOT_PAIR_INK);
				set(x, n, x->penwidth, "2");
			}
			int len = tl_box_text(text, sizeof text, a, chunk,
					      with_chunk);
			if (text_width((size_t)len, TL_BOX_FONT) + 3 <= w)
				set(x, n, x->label, text);
			str_printf(&x->str, "%s stage %d mb %d", ppcc_op_name(a->op),
				   (int)a->stage, (int)a->mb);
			if (v > 1)
				str_printf(&x->str, " chunk %d", chunk);
			if (half) {
				const ppcc_action *o = &rs->actions[half == 1 ? i + 1 : i - 1];
				str_printf(&x->str, ", overlapped with %s stage %d "
					   "mb %d", ppcc_op_name(o->op),
					   (int)o->stage, (int)o->mb);
			}
			str_puts(&x->str, ": ");
			str_ms(&x->str, t0);
			str_puts(&x->str, "\xe2\x80\x93");
			str_ms(&x->str, t1);
			str_puts(&x->str, " ms");
			set_str(x, n, x->tooltip);
		}
	}
}

#define TL_LANE_FILL "#3d3d3d"   /* a gradient reduction */
#define TL_GATHER_FILL "#9c9c9c" /* a parameter gather */

static int tl_is_gather(int op)
{
	return op == PPCC_OP_ALL_GATHER_PARAM || op == PPCC_OP_UNSHARD_PARAM;
}

/* The op of the lanes' first collective for which is(op) holds
 * (ppcc_op_is_reduction: REDUCE_GRAD, or REDUCE_SCATTER_GRAD under ZeRO;
 * tl_is_gather: ALL_GATHER_PARAM or UNSHARD_PARAM), 0 when none. */
static int tl_first_op(const dot_ctx *x, int (*is)(int))
{
	for (long k = 0; k < x->lanes.n_ops; k++)
		if (is(x->lanes.ops[k].op))
			return x->lanes.ops[k].op;
	return 0;
}

static int tl_has_reductions(const dot_ctx *x)
{
	return tl_first_op(x, ppcc_op_is_reduction);
}

/* One lane box: ops [k, j) of the lanes, one op ("r<R>c<I>" for the
 * schedule's action I, "r<R>x<K>" for one it does not hold) or a run of
 * them too narrow to draw apart ("r<R>m<K>"), clipped to the window;
 * the tooltip says what they are, when, and their time in the window
 * ("busy"). */
static void tl_lane_box(dot_ctx *x, const tl_geom *gm, long k, long j)
{
	const ppcc_lane_op *o = &x->lanes.ops[k];
	const ppcc_lane_op *last = &x->lanes.ops[j - 1];
	char name[48];
	double busy = 0;
	for (long q = k; q < j; q++)
		busy += clip(gm, x->lanes.ops[q].end_ms) -
			clip(gm, x->lanes.ops[q].start_ms);
	if (j - k > 1)
		snprintf(name, sizeof name, "r%dm%ld", o->rank, k);
	else if (o->action >= 0)
		snprintf(name, sizeof name, "r%dc%d", o->rank, (int)o->action);
	else
		snprintf(name, sizeof name, "r%dx%ld", o->rank, k);
	double left = tx(gm, o->start_ms), w = tx(gm, last->end_ms) - left;
	Agnode_t *n = add_node(x, NULL, name);
	place(x, n, left + w / 2, lane_y(x, o->rank), w, TL_LANE_BOX_H);
	if (!n)
		return;
	int gather = tl_is_gather(o->op);
	set(x, n, x->fill, gather ? TL_GATHER_FILL : TL_LANE_FILL);
	set(x, n, x->color, gather ? TL_GATHER_FILL : TL_LANE_FILL);
	if (j - k > 1) {
		str_printf(&x->str, "%ld %s, stages %d to %d", j - k,
			   ppcc_op_name(o->op), o->stage, last->stage);
	} else {
		str_printf(&x->str, "%s stage %d bucket %d", ppcc_op_name(o->op),
			   o->stage, o->bucket);
		if (o->mb >= 0)
			str_printf(&x->str, " after mb %d's backward", o->mb);
		str_printf(&x->str, ", %llu bytes",
			   (unsigned long long)o->bytes);
	}
	str_puts(&x->str, ": ");
	str_ms(&x->str, o->start_ms);
	str_puts(&x->str, "\xe2\x80\x93");
	str_ms(&x->str, last->end_ms);
	str_puts(&x->str, " ms, busy ");
	str_fixed(&x->str, busy, 3);
	str_puts(&x->str, " ms");
	set_str(x, n, x->tooltip);
}

/* Each rank's lane: every collective the text report counts
 * (ppcc_lanes_build) that shows in the window, one box each, except that
 * a run of ops of one kind each narrower than TL_LANE_MERGE_PT with gaps
 * under it is one box (ZeRO 2 reduce-scatters thousands of buckets). */
static void tl_collectives(dot_ctx *x, const tl_geom *gm)
{
	const ppcc_lanes *l = &x->lanes;
	for (int r = 0; r < l->n_ranks && !x->err; r++) {
		long k = l->first[r];
		while (k < l->first[r + 1] && !x->err) {
			const ppcc_lane_op *o = &l->ops[k];
			if (!in_window(gm, o->start_ms, o->end_ms)) {
				k++;
				continue;
			}
			long j = k + 1;
			double narrow = (tx(gm, o->end_ms) - tx(gm, o->start_ms));
			if (narrow < TL_LANE_MERGE_PT)
				while (j < l->first[r + 1]) {
					const ppcc_lane_op *q = &l->ops[j];
					if (!in_window(gm, q->start_ms, q->end_ms) ||
					    tl_is_gather(q->op) != tl_is_gather(o->op) ||
					    tx(gm, q->end_ms) - tx(gm, q->start_ms) >=
						    TL_LANE_MERGE_PT ||
					    tx(gm, q->start_ms) -
							    tx(gm, l->ops[j - 1].end_ms) >=
						    TL_LANE_MERGE_PT)
						break;
					j++;
				}
			tl_lane_box(x, gm, k, j);
			k = j;
		}
	}
}

/* The legend's entry for the lane's op (none when op is 0): a swatch
 * of its fill named `name`, its text `name`text, at *cx, which it
 * advances. */
static void tl_lane_legend(dot_ctx *x, double *cx, const char *name,
			   const char *fill, int op, const char *what)
{
	if (!op)
		return;
	char text[32];
	tl_rect(x, name, *cx + 6, TL_LEGEND_Y, 12, TL_LANE_BOX_H, fill);
	str_printf(&x->str, "%s %s bucket, on the rank's lane",
		   ppcc_op_name(op), what);
	double w = label_width(x, 10);
	snprintf(text, sizeof text, "%stext", name);
	tl_text(x, text, *cx + 16, TL_LEGEND_Y, 1, 10);
	*cx += 16 + w + 20;
}

/* A swatch and a word for each op in the plan, then each chunk's shade. */
static void tl_legend(dot_ctx *x, const tl_geom *gm)
{
	const ppcc_schedule *s = x->s;
	int v = s->n_chunks > 0 ? s->n_chunks : 1;
	int seen[4] = {0}, pairs = 0;
	for (int r = 0; r < s->n_ranks; r++)
		for (int i = 0; i < s->ranks[r].n_actions; i++) {
			int op = s->ranks[r].actions[i].op;
			if (is_compute(op))
				seen[op] = 1;
			pairs |= op == PPCC_OP_OVERLAP_F_B;
		}
	double cx = gm->x0, y = x->legend_h + TL_LEGEND_Y;
	char name[32], fill[8];
	for (int op = 0; op < 4; op++) {
		if (!seen[op])
			continue;
		op_fill(fill, op, 0, 1);
		snprintf(name, sizeof name, "legend%s", ppcc_op_name(op));
		tl_rect(x, name, cx + 6, y, 12, 12, fill);
		str_printf(&x->str, "%s %s", ppcc_op_name(op), op_word(op));
		snprintf(name, sizeof name, "legend%stext", ppcc_op_name(op));
		double w = label_width(x, 10);
		tl_text(x, name, cx + 16, y, 1, 10);
		cx += 16 + w + 20;
	}
	if (v > 1 && v <= 8) {
		for (int c = 0; c < v; c++) {
			int k = 0;
			for (int op = 0; op < 4; op++) {
				if (!seen[op])
					continue;
				op_fill(fill, op, c, v);
				snprintf(name, sizeof name, "legendchunk%d%s", c,
					 ppcc_op_name(op));
				tl_rect(x, name, cx + 6 + 12 * k++, y,
					12, 12, fill);
			}
			str_printf(&x->str, "chunk %d", c);
			snprintf(name, sizeof name, "legendchunk%dtext", c);
			double w = label_width(x, 10);
			tl_text(x, name, cx + 4 + 12 * k, y, 1, 10);
			cx += 4 + 12 * k + w + 20;
		}
	}
	/* with lanes, the pair's entry, the lanes' and the note on a line
	 * of their own, below */
	if (x->legend_h > 0) {
		str_puts(&x->str, "box: microbatch; gaps: idle time");
		tl_text(x, "legendnote", cx + 10, y, 1, 10);
		cx = gm->x0;
		y = TL_LEGEND_Y;
	}
	if (pairs) {
		Agnode_t *n = add_node(x, NULL, "legendpair");
		place(x, n, cx + 6, y, 12, 12);
		if (n) {
			set(x, n, x->fill, "white");
			set(x, n, x->color, DOT_PAIR_INK);
			set(x, n, x->penwidth, "2");
		}
		str_puts(&x->str, "overlapped pair (OVERLAP_F_B), run as F then B");
		double w = label_width(x, 10);
		tl_text(x, "legendpairtext", cx + 16, y, 1, 10);
		cx += 16 + w + 20;
	}
	tl_lane_legend(x, &cx, "legendREDUCE_GRAD", TL_LANE_FILL,
		       tl_has_reductions(x), "gradient");
	tl_lane_legend(x, &cx, "legendGATHER", TL_GATHER_FILL,
		       tl_first_op(x, tl_is_gather), "parameter");
	if (x->legend_h > 0)
		return;
	str_puts(&x->str, "box: microbatch; gaps: idle time");
	tl_text(x, "legendnote", cx + 10, TL_LEGEND_Y, 1, 10);
}

static void tl_title(dot_ctx *x, const tl_geom *gm, long drawn, long total)
{
	const ppcc_estimate *e = x->e;
	title_head(x);
	str_puts(&x->str, "step ");
	str_ms(&x->str, e->step_ms);
	str_puts(&x->str, " ms \xc2\xb7 bubble ");
	str_fixed(&x->str, 100 * e->bubble_fraction, 1);
	str_puts(&x->str, "% simulated");
	if (isfinite(e->bubble_analytic)) {
		str_puts(&x->str, ", ");
		str_fixed(&x->str, 100 * e->bubble_analytic, 1);
		str_puts(&x->str, "% closed form");
	}
	if (tl_has_reductions(x) && e->dp_end_ms) {
		str_puts(&x->str, " \xc2\xb7 gradients reduced at ");
		str_ms(&x->str, x->lanes.end_ms > e->dp_step_ms
				? x->lanes.end_ms : e->dp_step_ms);
		str_puts(&x->str, " ms");
	}
	str_puts(&x->str, "\\n");
	if (gm->w0 > 0 || gm->w1 < gm->plan_end) {
		str_puts(&x->str, "window ");
		str_ms(&x->str, gm->w0);
		str_puts(&x->str, "\xe2\x80\x93");
		str_ms(&x->str, gm->w1);
		str_puts(&x->str, " ms of ");
		str_ms(&x->str, gm->plan_end);
		if (!gm->auto_window)
			str_puts(&x->str, " ms");
		if (x->window.kind == PPCC_WINDOW_STEP)
			str_printf(&x->str, " (microbatch %d's forwards and "
				   "backwards)", x->window.step);
		if (gm->auto_window)
			str_puts(&x->str, " ms, its start, where "
				 "the boxes are wide enough to label\n"
				 "--window all shows the whole step, --window "
				 "step N microbatch N's span, --window "
				 "START:END any span (ms)");
		str_puts(&x->str, "\\n");
	}
	if (drawn < total) {
		str_printf(&x->str, "showing the %ld compute actions that start "
			   "before ", drawn);
		str_ms(&x->str, gm->cutoff);
		str_printf(&x->str, " ms, of %ld\\n", total);
	}
	set_str(x, x->g, agattr(x->g, AGRAPH, "label", ""));
}

static int tl_build(dot_ctx *x)
{
	tl_geom gm;
	long drawn, total;
	int err = ppcc_lanes_build(&x->lanes, x->plan->config, x->s,
				   x->plan->best.costs, x->e);
	if (err < 0)
		return err;
	x->lane_h = x->lanes.n_ops > 0 ? TL_LANE_ROW_H : 0;
	x->legend_h = x->lanes.n_ops > 0 ? TL_LEGEND_LINE : 0;
	err = tl_geometry(x, &gm, &drawn, &total);
	if (err < 0)
		return err;
	if (drawn < total)
		ppcc_warning(x->d, NULL, "the timeline shows the %ld compute "
			     "actions that start first, of %ld", drawn, total);
	x->g = dot_open("ppcc_timeline", Agundirected);
	if (!x->g)
		return PPCC_ENOMEM;
	declare_common(x);
	x->pos = agattr(x->g, AGNODE, "pos", "");
	x->width = agattr(x->g, AGNODE, "width", "0.75");
	x->height = agattr(x->g, AGNODE, "height", "0.5");
	/* "shape": the box is exactly width by height, and a label that
	 * does not fit (the width of text is only estimated here) spills
	 * over without a warning. */
	agattr(x->g, AGNODE, "fixedsize", "shape");
	agattr(x->g, AGRAPH, "pad", "0.2");
	agattr(x->g, AGNODE, "margin", "0");
	tl_title(x, &gm, drawn, total);
	tl_background(x, &gm);
	tl_boxes(x, &gm);
	tl_collectives(x, &gm);
	tl_rows(x, &gm);
	tl_legend(x, &gm);
	return x->err;
}

/* ---- dependency graph --------------------------------------------------- */

/* How many microbatches, from the first, have at most DEPS_MAX_NODES
 * compute actions among them (at least one), the reductions counted with
 * the last microbatch, after whose backwards they come.  *out_shown and
 * *out_total count compute actions; *out_reductions the REDUCE_GRAD
 * nodes drawn (all, when every microbatch is shown; else none). */
static int deps_shown_microbatches(const ppcc_schedule *s, long *out_shown,
				   long *out_total, long *out_reductions)
{
	int m = s->n_microbatches;
	long *per_mb = ppcc_calloc((size_t)m, sizeof *per_mb);
	if (!per_mb)
		return PPCC_ENOMEM;
	long total = 0, reductions = 0;
	for (int r = 0; r < s->n_ranks; r++)
		for (int i = 0; i < s->ranks[r].n_actions; i++) {
			const ppcc_action *a = &s->ranks[r].actions[i];
			if (is_compute(a->op) && a->mb >= 0 && a->mb < m) {
				per_mb[a->mb]++;
				total++;
			}
			reductions += ppcc_op_is_reduction(a->op);
		}
	int shown_mb = 0;
	long shown = 0;
	while (shown_mb < m &&
	       (shown_mb == 0 ||
		shown + per_mb[shown_mb] +
				(shown_mb == m - 1 ? reductions : 0) <=
			DEPS_MAX_NODES))
		shown += per_mb[shown_mb++];
	ppcc_free(per_mb);
	*out_shown = shown;
	*out_total = total;
	*out_reductions = shown_mb == m ? reductions : 0;
	return shown_mb;
}

/* The dependency view's nodes in the order they are made, and for each
 * its out-edges: the next compute action on the rank (program order),
 * the compute action its SEND feeds, and the REDUCE_GRAD nodes made
 * right after it (reduce[k] set), which its gradients go to. */
typedef struct deps_nodes {
	Agnode_t **node;
	int *rank;
	char *reduce;
	Agnode_t **feeds;
	uint64_t *bytes;
	long n;
	int *fwd, *bwd; /* [stage * shown_mb + mb]: index + 1 of F, of B or I */
	int shown_mb;
	long reductions; /* REDUCE_GRAD nodes to draw */
} deps_nodes;

/* One cluster per rank holding its compute actions. */
static void deps_rank(dot_ctx *x, int r, deps_nodes *dn)
{
	const ppcc_schedule *s = x->s;
	const ppcc_rank_schedule *rs = &s->ranks[r];
	int v = s->n_chunks > 0 ? s->n_chunks : 1;
	char name[48], fill[8];
	Agraph_t *sub = agsubg(x->g, dot_clusters.names[r], 1);
	if (!sub) {
		x->err = PPCC_EINTERNAL;
		return;
	}
	str_printf(&x->str, "rank %d%s", r, v > 1 ? "\\l" : " \xc2\xb7 ");
	for (int c = 0, stage = 0; c < v; c++, stage++) {
		/* the rank's chunk c: its c-th stage in stage order */
		while (s->stages && stage < s->n_stages &&
		       s->stages[stage].rank != r)
			stage++;
		if (s->stages && stage >= s->n_stages)
			break;
		if (!s->stages)
			stage = c * s->n_ranks + r;
		str_printf(&x->str, "stage %d", stage);
		if (s->stages) {
			str_puts(&x->str, ": ");
			stage_layers(x, stage, "\\l");
		} else {
			str_puts(&x->str, "\\l");
		}
	}
	/* A subgraph starts with the root's values: each is set here. */
	set_str(x, sub, x->g_label);
	set(x, sub, x->g_labeljust, "l");
	set(x, sub, x->g_fontsize, "10");
	set(x, sub, x->g_style, "filled");
	set(x, sub, x->g_fill, "#f5f5f5");
	set(x, sub, x->g_color, "#cccccc");

	for (int i = 0; i < rs->n_actions && !x->err; i++) {
		const ppcc_action *a = &rs->actions[i];
		int reduce = ppcc_op_is_reduction(a->op);
		/* a reduction is drawn after the backward it follows */
		if (reduce ? !dn->reductions || dn->n == 0 ||
				     dn->rank[dn->n - 1] != r
			   : !is_compute(a->op) || a->mb < 0 ||
				     a->mb >= dn->shown_mb)
			continue;
		snprintf(name, sizeof name, "r%da%d", r, i);
		Agnode_t *n = add_node(x, sub, name);
		if (!n)
			return;
		if (reduce) {
			set(x, n, x->fill, TL_LANE_FILL);
			set(x, n, x->fontcolor, ink_on(TL_LANE_FILL));
			str_printf(&x->str, "%s s%d bucket %d", ppcc_op_name(a->op),
				   (int)a->stage, (int)a->mb);
		} else {
			op_fill(fill, a->op, stage_chunk(x, a->stage), v);
			set(x, n, x->fill, fill);
			set(x, n, x->fontcolor, ink_on(fill));
			str_printf(&x->str, "%s s%d mb%d", ppcc_op_name(a->op),
				   (int)a->stage, (int)a->mb);
		}
		set_str(x, n, x->label);
		long k = dn->n++;
		dn->node[k] = n;
		dn->rank[k] = r;
		dn->reduce[k] = (char)reduce;
		if (reduce)
			continue;
		if (a->stage >= 0 && a->stage < s->n_stages) {
			size_t cell = (size_t)a->stage * (size_t)dn->shown_mb +
				      (size_t)a->mb;
			if (a->op == PPCC_OP_F && !dn->fwd[cell])
				dn->fwd[cell] = (int)k + 1;
			if ((a->op == PPCC_OP_B || a->op == PPCC_OP_I) &&
			    !dn->bwd[cell])
				dn->bwd[cell] = (int)k + 1;
		}
	}
}

/* For each SEND: the node that made the tensor (F of s for SEND_F, B or
 * I of s for SEND_B) feeds the node that uses it after the matching RECV
 * (F of s+1, or B or I of s-1). */
static void deps_transfers(dot_ctx *x, deps_nodes *dn)
{
	const ppcc_schedule *s = x->s;
	for (int r = 0; r < s->n_ranks; r++) {
		const ppcc_rank_schedule *rs = &s->ranks[r];
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			int to;
			int *tab;
			if (a->op == PPCC_OP_SEND_F) {
				to = a->stage + 1;
				tab = dn->fwd;
			} else if (a->op == PPCC_OP_SEND_B) {
				to = a->stage - 1;
				tab = dn->bwd;
			} else {
				continue;
			}
			if (a->mb < 0 || a->mb >= dn->shown_mb || a->stage < 0 ||
			    a->stage >= s->n_stages || to < 0 ||
			    to >= s->n_stages)
				continue;
			int t = tab[(size_t)a->stage * dn->shown_mb + a->mb];
			int h = tab[(size_t)to * dn->shown_mb + a->mb];
			if (t && h && !dn->feeds[t - 1]) {
				dn->feeds[t - 1] = dn->node[h - 1];
				dn->bytes[t - 1] = a->bytes;
			}
		}
	}
}

static void deps_edge(dot_ctx *x, Agnode_t *t, Agnode_t *h, int order,
		      uint64_t bytes)
{
	if (x->err)
		return;
	Agedge_t *ed = agedge(x->g, t, h, NULL, 1);
	if (!ed) {
		x->err = PPCC_EINTERNAL;
		return;
	}
	if (order == 2) {
		set(x, ed, x->e_style, "dotted");
	} else if (order) {
		set(x, ed, x->e_style, "dashed");
		set(x, ed, x->e_color, "#999999");
		set(x, ed, x->e_weight, "4");
	} else {
		/* No weight=0 here: libgvc 2.43's dot frees a labelled
		 * zero-weight edge between clusters twice. */
		str_bytes(&x->str, (double)bytes);
		set_str(x, ed, x->e_label);
	}
}

/* Edges are made in the order agwrite writes them, by tail node and then
 * by head node, so that `dot` reading the DOT text numbers them as the
 * library does. */
static void deps_edges(dot_ctx *x, const deps_nodes *dn)
{
	for (long k = 0; k < dn->n && !x->err; k++) {
		if (dn->reduce[k])
			continue;
		/* its reductions k+1 .. j-1, then the rank's next compute */
		long j = k + 1;
		while (j < dn->n && dn->reduce[j] && dn->rank[j] == dn->rank[k])
			j++;
		Agnode_t *next = j < dn->n && dn->rank[j] == dn->rank[k]
				 ? dn->node[j] : NULL;
		Agnode_t *feeds = dn->feeds[k];
		for (long q = k + 1; q < j; q++) {
			if (feeds && AGSEQ(feeds) < AGSEQ(dn->node[q])) {
				deps_edge(x, dn->node[k], feeds, 0, dn->bytes[k]);
				feeds = NULL;
			}
			deps_edge(x, dn->node[k], dn->node[q], 2, 0);
		}
		int feeds_first = feeds && next && AGSEQ(feeds) < AGSEQ(next);
		if (feeds_first)
			deps_edge(x, dn->node[k], feeds, 0, dn->bytes[k]);
		if (next)
			deps_edge(x, dn->node[k], next, 1, 0);
		if (feeds && !feeds_first)
			deps_edge(x, dn->node[k], feeds, 0, dn->bytes[k]);
	}
}

static int deps_build(dot_ctx *x)
{
	const ppcc_schedule *s = x->s;
	int err = 0;
	deps_nodes dn = {0};
	if (s->n_microbatches <= 0 || s->n_stages <= 0) {
		ppcc_error(x->d, NULL, "the plan has no stages or microbatches "
			   "to draw");
		return PPCC_EINPUT;
	}
	long shown, total;
	dn.shown_mb = deps_shown_microbatches(s, &shown, &total, &dn.reductions);
	if (dn.shown_mb < 0)
		return dn.shown_mb;
	if (ppcc_format_of(x->format)->render &&
	    (double)shown * s->n_ranks > (double)DEPS_MAX_NODE_RANKS) {
		const ppcc_loc *loc = x->plan->config
			? &x->plan->config->pipeline.stages_loc : NULL;
		ppcc_error(x->d, loc && loc->file ? loc : NULL,
			   "the dependency graph of %d ranks would draw %ld "
			   "nodes in %d clusters, more than %ld node-cluster "
			   "pairs can be laid out in reasonable time; write "
			   "it as DOT (-f dot), use --view timeline, or fewer "
			   "stages",
			   (int)s->n_ranks, shown, (int)s->n_ranks,
			   DEPS_MAX_NODE_RANKS);
		return PPCC_EINPUT;
	}
	if (shown < total)
		ppcc_warning(x->d, NULL, "the dependency graph shows "
			     "microbatches 0 to %d of %d (%ld of %ld compute "
			     "actions)", dn.shown_mb - 1, (int)s->n_microbatches,
			     shown, total);
	size_t cells = (size_t)s->n_stages * (size_t)dn.shown_mb;
	size_t nodes = (size_t)(shown + dn.reductions > 0 ? shown + dn.reductions
							   : 1);
	dn.fwd = ppcc_calloc(cells, sizeof *dn.fwd);
	dn.bwd = ppcc_calloc(cells, sizeof *dn.bwd);
	dn.node = ppcc_calloc(nodes, sizeof *dn.node);
	dn.rank = ppcc_calloc(nodes, sizeof *dn.rank);
	dn.reduce = ppcc_calloc(nodes, sizeof *dn.reduce);
	dn.feeds = ppcc_calloc(nodes, sizeof *dn.feeds);
	dn.bytes = ppcc_calloc(nodes, sizeof *dn.bytes);
	dot_clusters.names = ppcc_calloc((size_t)s->n_ranks,
					 sizeof *dot_clusters.names);
	dot_clusters.n = 0;
	if (!dn.fwd || !dn.bwd || !dn.node || !dn.rank || !dn.reduce ||
	    !dn.feeds || !dn.bytes || !dot_clusters.names) {
		err = PPCC_ENOMEM;
		goto out;
	}

	x->g = dot_open("ppcc_deps", Agdirected);
	if (!x->g) {
		err = PPCC_ENOMEM;
		goto out;
	}
	/* agwrite takes names to be cgraph's own strings: intern them. */
	for (int r = 0; r < s->n_ranks; r++) {
		char name[32];
		snprintf(name, sizeof name, "cluster_rank%d", r);
		dot_clusters.names[r] = agstrdup(x->g, name);
		if (!dot_clusters.names[r]) {
			err = PPCC_ENOMEM;
			goto out;
		}
	}
	dot_clusters.n = s->n_ranks;
	declare_common(x);
	/* newrank: without it, libgvc 2.43's dot fails ("trouble in
	 * init_rank") on the interleaved schedules' clusters. */
	agattr(x->g, AGRAPH, "rankdir", "LR");
	agattr(x->g, AGRAPH, "newrank", "true");
	agattr(x->g, AGRAPH, "nodesep", "0.12");
	agattr(x->g, AGRAPH, "ranksep", "0.25");
	agattr(x->g, AGNODE, "style", "filled,rounded");
	x->g_label = agattr(x->g, AGRAPH, "label", "");
	x->g_labeljust = agattr(x->g, AGRAPH, "labeljust", "c");
	x->g_style = agattr(x->g, AGRAPH, "style", "");
	x->g_fill = agattr(x->g, AGRAPH, "fillcolor", "");
	x->g_color = agattr(x->g, AGRAPH, "color", "");
	x->e_style = agattr(x->g, AGEDGE, "style", "solid");
	x->e_color = agattr(x->g, AGEDGE, "color", "#333333");
	x->e_label = agattr(x->g, AGEDGE, "label", "");
	agattr(x->g, AGEDGE, "fontsize", "8");
	agattr(x->g, AGEDGE, "fontcolor", "#555555");
	agattr(x->g, AGEDGE, "fontname", DOT_FONT);
	agattr(x->g, AGEDGE, "arrowsize", "0.6");
	x->e_weight = agattr(x->g, AGEDGE, "weight", "1");

	title_head(x);
	str_puts(&x->str, "dashed: order on a rank \xc2\xb7 solid: transfer "
		 "between ranks, with its bytes");
	if (dn.reductions)
		str_puts(&x->str, " \xc2\xb7 dotted: gradients to their "
			 "reduction");
	str_puts(&x->str, "\\n");
	if (shown < total)
		str_printf(&x->str, "microbatches 0\xe2\x80\x93%d of %d shown\\n",
			   dn.shown_mb - 1, (int)s->n_microbatches);
	set_str(x, x->g, x->g_label);

	for (int r = 0; r < s->n_ranks && !x->err; r++)
		deps_rank(x, r, &dn);
	deps_transfers(x, &dn);
	deps_edges(x, &dn);
	err = x->err;
out:
	ppcc_free(dn.fwd);
	ppcc_free(dn.bwd);
	ppcc_free(dn.node);
	ppcc_free(dn.rank);
	ppcc_free(dn.reduce);
	ppcc_free(dn.feeds);
	ppcc_free(dn.bytes);
	return err;
}

/* ---- output -------------------------------------------------------------- */

/* One libgvc context for the life of the process.  libgvc 2.43's pango
 * plugin keeps a pointer to the last font name it used, which
 * gvFreeContext frees and the next context reads; a context that lives on
 * keeps that name valid.  It stays reachable until exit. */
static GVC_t *dot_context(void)
{
	static GVC_t *gvc;
	if (!gvc)
		gvc = gvContext();
	return gvc;
}

/* The comment of Graphviz's SVG header that names its version: bytes
 * [*out_from, *out_to) of data, newline included; both 0 when absent. */
static void svg_generator_comment(const char *data, size_t len,
				  size_t *out_from, size_t *out_to)
{
	static const char open[] = "<!-- Generated by graphviz";
	size_t head = len < 1024 ? len : 1024, n = sizeof open - 1;
	*out_from = *out_to = 0;
	for (size_t i = 0; i + n <= head; i++) {
		if (memcmp(data + i, open, n) != 0)
			continue;
		for (size_t j = i + n; j + 3 <= len; j++)
			if (memcmp(data + j, "-->", 3) == 0) {
				*out_from = i;
				*out_to = j + 3 < len && data[j + 3] == '\n'
					  ? j + 4 : j + 3;
				return;
			}
		return;
	}
}

/* ---- DOT text of a graph of clusters, in linear time --------------------- */

/* agwrite decides for every node and every edge of the root graph
 * whether one of the root's subgraphs holds it, asking each subgraph in
 * turn: nodes x clusters lookups, which for the dependency view (a
 * cluster per rank, at least two nodes per stage) grows with the square
 * of the stages (45.9 s at 16,000).  The graphs ppcc builds have one
 * shape: clusters directly under the root, every node in exactly one
 * cluster, every edge in the root alone.  For that shape
 * dot_write_clusters writes what agwrite writes, byte for byte (the
 * suite compares the two), in one pass over the clusters and one over
 * the edges; for any other shape it answers 1 and agwrite is used.
 * *visits counts the objects and attributes it looks at (the suites'
 * measure of its work: linear in the graph's size). */

static void w_tabs(FILE *f, int level)
{
	while (level-- > 0)
		putc('\t', f);
}

static void w_canon(FILE *f, char *s)
{
	fputs(agcanonStr(s), f);
}

/* One of the graph's default dictionaries ("graph [a=b, ...];"), the
 * root's: every attribute with a non-empty default, or marked to be
 * printed always (cgraph marks the node label so). */
static void w_root_dict(FILE *f, Agraph_t *g, int kind, const char *what,
			long *visits)
{
	int cnt = 0;
	for (Agsym_t *sym = agnxtattr(g, kind, NULL); sym;
	     sym = agnxtattr(g, kind, sym)) {
		++*visits;
		if ((!sym->defval || !*sym->defval) && !sym->print)
			continue;
		if (cnt++ == 0) {
			w_tabs(f, 1);
			fprintf(f, "%s [", what);
		} else {
			fputs(",\n", f);
			w_tabs(f, 2);
		}
		w_canon(f, sym->name);
		putc('=', f);
		w_canon(f, sym->defval);
	}
	if (cnt > 1) {
		putc('\n', f);
		w_tabs(f, 1);
	}
	if (cnt > 0)
		fputs("];\n", f);
}

/* A cluster's own graph attributes: those it sets to another value than
 * the root's (a value the same as the root's would be written by
 * agwrite, and the suite's comparison would tell). */
static void w_sub_dict(FILE *f, Agraph_t *root, Agraph_t *sub, long *visits)
{
	int cnt = 0;
	for (Agsym_t *sym = agnxtattr(root, AGRAPH, NULL); sym;
	     sym = agnxtattr(root, AGRAPH, sym)) {
		++*visits;
		char *mine = agxget(sub, sym), *theirs = agxget(root, sym);
		if (strcmp(mine ? mine : "", theirs ? theirs : "") == 0)
			continue;
		if (cnt++ == 0) {
			w_tabs(f, 2);
			fputs("graph [", f);
		} else {
			fputs(",\n", f);
			w_tabs(f, 3);
		}
		w_canon(f, sym->name);
		putc('=', f);
		w_canon(f, mine ? mine : (char *)"");
	}
	if (cnt > 1) {
		putc('\n', f);
		w_tabs(f, 2);
	}
	if (cnt > 0)
		fputs("];\n", f);
}

/* "\t[a=b,\n<tabs>c=d]": the attributes of obj that are not the
 * default (the same interned string), as agwrite writes them. */
static void w_attrs(FILE *f, Agraph_t *root, void *obj, int kind, int level,
		    long *visits)
{
	int cnt = 0;
	for (Agsym_t *sym = agnxtattr(root, kind, NULL); sym;
	     sym = agnxtattr(root, kind, sym)) {
		++*visits;
		char *v = agxget(obj, sym);
		if (v == sym->defval)
			continue;
		if (cnt++ == 0) {
			fputs("\t[", f);
		} else {
			fputs(",\n", f);
			w_tabs(f, level + 1);
		}
		w_canon(f, sym->name);
		putc('=', f);
		w_canon(f, v);
	}
	if (cnt > 0)
		putc(']', f);
}

/* 0 written; 1: g is not of the shape written here (nothing written);
 * PPCC_ENOMEM. */
static int dot_write_clusters(Agraph_t *g, FILE *f, ppcc_dot_probe *probe)
{
	long visits = 1;
	if ((probe && probe->force_agwrite) ||
	    agattr(g, AGEDGE, "tailport", NULL) ||
	    agattr(g, AGEDGE, "headport", NULL))
		return 1;
	/* every node in exactly one cluster, no subgraph below a cluster,
	 * no edge inside one */
	size_t n_nodes = (size_t)agnnodes(g), seen = 0, top = 0;
	for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n)) {
		visits++;
		if ((size_t)AGSEQ(n) > top)
			top = (size_t)AGSEQ(n);
	}
	unsigned char *in = ppcc_calloc(top + 1, 1);
	if (!in)
		return PPCC_ENOMEM;
	int shape = 1;
	for (Agraph_t *sub = agfstsubg(g); sub && shape; sub = agnxtsubg(sub)) {
		char *name = agnameof(sub);
		visits++;
		if (!name || strncmp(name, "cluster", 7) != 0 || agfstsubg(sub))
			shape = 0;
		for (Agnode_t *n = agfstnode(sub); n && shape; n = agnxtnode(sub, n)) {
			visits++;
			if (agfstout(sub, n) || in[AGSEQ(n)]++)
				shape = 0;
			seen++;
		}
	}
	ppcc_free(in);
	if (!shape || seen != n_nodes)
		return 1;
	for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n))
		for (Agedge_t *e = agfstout(g, n); e; e = agnxtout(g, e)) {
			char *key = agnameof(e);
			visits++;
			if (key && *key)
				return 1;
		}

	const char *arrow = agisdirected(g) ? " -> " : " -- ";
	fprintf(f, "%s%sgraph ", agisstrict(g) ? "strict " : "",
		agisdirected(g) ? "di" : "");
	w_canon(f, agnameof(g));
	fputs(" {\n", f);
	w_root_dict(f, g, AGRAPH, "graph", &visits);
	w_root_dict(f, g, AGNODE, "node", &visits);
	w_root_dict(f, g, AGEDGE, "edge", &visits);
	for (Agraph_t *sub = agfstsubg(g); sub; sub = agnxtsubg(sub)) {
		visits++;
		w_tabs(f, 1);
		fputs("subgraph ", f);
		w_canon(f, agnameof(sub));
		fputs(" {\n", f);
		w_sub_dict(f, g, sub, &visits);
		for (Agnode_t *n = agfstnode(sub); n; n = agnxtnode(sub, n)) {
			visits++;
			w_tabs(f, 2);
			w_canon(f, agnameof(n));
			w_attrs(f, g, n, AGNODE, 2, &visits);
			fputs(";\n", f);
		}
		w_tabs(f, 1);
		fputs("}\n", f);
	}
	for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n))
		for (Agedge_t *e = agfstout(g, n); e; e = agnxtout(g, e)) {
			visits++;
			w_tabs(f, 1);
			w_canon(f, agnameof(agtail(e)));
			fputs(arrow, f);
			w_canon(f, agnameof(aghead(e)));
			w_attrs(f, g, e, AGEDGE, 1, &visits);
			fputs(";\n", f);
		}
	fputs("}\n", f);
	if (probe) {
		probe->linear_writes++;
		probe->visits += visits;
	}
	return 0;
}

static int render(dot_ctx *x, FILE *f, int format, const char *engine)
{
	const ppcc_format_info *fi = ppcc_format_of(format);
	if (!fi->render) {
		int w = dot_write_clusters(x->g, f, x->probe);
		if (w == PPCC_ENOMEM)
			return PPCC_ENOMEM;
		if ((w != 0 && agwrite(x->g, f) != 0) || ferror(f)) {
			ppcc_error(x->d, NULL, "cannot write the graph");
			return PPCC_EIO;
		}
		return 0;
	}
	const char *fmt = fi->render;
	int err = 0;
	char *data = NULL;
	unsigned int len = 0;
	GVC_t *gvc = dot_context();
	if (!gvc)
		return PPCC_ENOMEM;
	/* cairo's bitmaps stop at 32,767 pixels a side (at 96 dpi, 341
	 * inches), past which its plugin scales the picture down itself and
	 * says so on stderr, out of the sink's reach: a bitmap larger than
	 * 320 inches is scaled down to it here, by graphviz's size */
	if (fi->binary)
		agattr(x->g, AGRAPH, "size", "320,320");
	if (gvLayout(gvc, x->g, engine) != 0) {
		ppcc_error(x->d, NULL, "graphviz cannot lay out the graph with "
			   "its \"%s\" engine (are graphviz's plugins "
			   "installed?)", engine);
		return PPCC_EIO;
	}
	if (gvRenderData(gvc, x->g, fmt, &data, &len) != 0) {
		ppcc_error(x->d, NULL, "graphviz cannot render %s here (is its "
			   "%s plugin installed?)", fmt,
			   fi->binary ? "cairo" : "core");
		err = PPCC_EIO;
	} else {
		/* SVG: without Graphviz's "Generated by graphviz version ..."
		 * comment, so the output is the same under every version */
		size_t cut = 0, rest = 0;
		if (!fi->binary)
			svg_generator_comment(data, len, &cut, &rest);
		if (fwrite(data, 1, cut, f) != cut ||
		    fwrite(data + rest, 1, len - rest, f) != len - rest ||
		    ferror(f)) {
			ppcc_error(x->d, NULL, "cannot write the %s image", fmt);
			err = PPCC_EIO;
		}
	}
	gvFreeRenderData(data);
	gvFreeLayout(gvc, x->g);
	return err;
}

int ppcc_emit_dot(FILE *f, const ppcc_plan *p, const ppcc_emit_options *o,
		  ppcc_diag *d)
{
	dot_ctx x = {.plan = p, .s = &p->best.schedule, .e = &p->best.estimate,
		     .d = d, .format = o->format, .probe = o->dot_probe,
		     .window = o->window};
	ppcc_arena *a = NULL;
	ppcc_estimate simulated;
	int err = 0;
	int format = o->format;
	const ppcc_format_info *fi = ppcc_format_of(format);
	if (!fi || fi->emit != ppcc_emit_dot)
		return PPCC_EINTERNAL;
	const ppcc_schedule *s = x.s;
	if (s->n_ranks <= 0 || !s->ranks) {
		ppcc_error(d, NULL, "the plan has no schedule to draw");
		return PPCC_EINPUT;
	}
	if (!o->view_deps && (!x.e->start_ms || !x.e->end_ms)) {
		/* A plan read back from JSON has costs but no times. */
		if (!p->best.costs) {
			ppcc_error(d, NULL, "the plan has no simulated times "
				   "for a timeline");
			return PPCC_EINPUT;
		}
		a = ppcc_arena_new();
		if (!a)
			return PPCC_ENOMEM;
		err = ppcc_simulate(&simulated, a, s, p->best.costs);
		if (err < 0) {
			if (err == PPCC_EINPUT)
				ppcc_error(d, NULL, "the schedule cannot be "
					   "simulated for a timeline");
			goto out;
		}
		x.e = &simulated;
	}

	/* libgvc parses some numbers (pad, for one) with strtod outside its
	 * own switch to the "C" locale: a host program that set a locale
	 * with a decimal comma would change the picture.  This thread runs
	 * libgvc in the "C" locale and gets its own locale back after. */
	locale_t c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	locale_t host_locale = c_locale ? uselocale(c_locale) : (locale_t)0;
	agusererrf previous = agseterrf(gv_sink_message);
	gv_sink.d = d;
	gv_sink.len = 0;
	err = o->view_deps ? deps_build(&x) : tl_build(&x);
	if (err == 0 && x.str.oom)
		err = PPCC_ENOMEM;
	if (err == 0)
		err = render(&x, f, format, o->view_deps ? "dot" : "nop");
	if (x.g)
		agclose(x.g);
	ppcc_free(dot_clusters.names);
	dot_clusters.names = NULL;
	dot_clusters.n = 0;
	gv_sink_flush();
	gv_sink.d = NULL;
	agseterrf(previous);
	if (c_locale) {
		uselocale(host_locale);
		freelocale(c_locale);
	}
out:
	ppcc_lanes_free(&x.lanes);
	ppcc_free(x.str.s);
	ppcc_arena_free(a);
	return err;
}
