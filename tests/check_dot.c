/*
 * check_dot.c - the DOT, SVG and PNG emitter (suite "dot").
 *
 * The DOT text is read back with Graphviz's own parser (agmemread) and
 * checked against the plan it came from: every compute action is a node
 * exactly once, at its simulated start and as wide as it lasts; the
 * dependency view has one edge per SEND/RECV pair.  Names that DOT or
 * Graphviz labels could misread (quotes, backslashes, \N, newlines,
 * keywords, UTF-8, 20 kB) must come back as written, both from the parsed
 * DOT and from the text of the rendered SVG, and the real `dot` and
 * `neato -n` commands must accept the output and draw the same image as
 * the library.  Plans come from the real schedule and simulation phases,
 * from one schedule written out by hand (with split backward I/W), and
 * from the example models.
 */
#include <check.h>
#include <graphviz/cgraph.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ppcc.h"
#include "testutil.h"

/* Under SANITIZE=1: libgvc 2.43 leaks in its layouts (dot's cluster
 * skeletons, neato -n's graph scan; blocks from its own allocator in
 * libgvc.so), and fontconfig, pango and cairo keep caches for the life of
 * the process.  LeakSanitizer is told to ignore blocks allocated there;
 * cgraph's, which hold the graphs built here, are still checked. */
#if defined(__SANITIZE_ADDRESS__)
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libgvc.so\n"
	       "leak:libgvplugin_dot_layout.so\n"
	       "leak:libgvplugin_neato_layout.so\n"
	       "leak:libgvplugin_pango.so\n"
	       "leak:libfontconfig.so\n"
	       "leak:libpango\n"
	       "leak:libcairo.so\n";
}

const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}
#endif

/* ---- plans -------------------------------------------------------------- */

typedef struct fixture {
	ppcc_arena *a;
	ppcc_plan plan;
} fixture;

#define MIB48 50331648ULL

/* p*v stages of three layers each; forward 4/v ms (the last stage 1.3
 * times that), backward twice the forward, 0.05 ms and 48 MiB per p2p
 * transfer; scheduled and simulated by the compiler's own phases. */
static void fixture_build(fixture *fx, int kind, int p, int m, int v)
{
	memset(fx, 0, sizeof *fx);
	fx->a = ppcc_arena_new();
	ck_assert_ptr_nonnull(fx->a);
	int n_st = p * v;
	ppcc_stage_info *st = ppcc_arena_alloc(fx->a, (size_t)n_st, sizeof *st);
	ppcc_stage_cost *c = ppcc_arena_alloc(fx->a, (size_t)n_st, sizeof *c);
	ppcc_layer *l = ppcc_arena_alloc(fx->a, (size_t)n_st * 3, sizeof *l);
	ck_assert(st && c && l);
	for (int i = 0; i < n_st * 3; i++)
		l[i].name = ppcc_arena_printf(fx->a, "block_%d", i);
	for (int s = 0; s < n_st; s++) {
		st[s].first_layer = 3 * s;
		st[s].last_layer = 3 * s + 2;
		st[s].send_bytes = s < n_st - 1 ? MIB48 : 0;
		st[s].recv_bytes = s > 0 ? MIB48 : 0;
		c[s].fwd_ms = 4.0 / v * (s == n_st - 1 ? 1.3 : 1.0);
		c[s].bwd_ms = 2 * c[s].fwd_ms;
		c[s].send_f_ms = 0.05;
		c[s].send_b_ms = 0.05;
	}
	ppcc_plan *pl = &fx->plan;
	pl->model_name = "gpt-test";
	pl->n_layers = n_st * 3;
	pl->layers = l;
	ck_assert_int_eq(ppcc_schedule_build(&pl->best.schedule, fx->a, kind, p,
					     v, m, 0, st), 0);
	pl->best.stages = (ppcc_stage_info *)pl->best.schedule.stages;
	pl->best.costs = c;
	ck_assert_int_eq(ppcc_simulate(&pl->best.estimate, fx->a,
				       &pl->best.schedule, c), 0);
}

static void fixture_free(fixture *fx)
{
	ppcc_arena_free(fx->a);
}

/* Two ranks, two microbatches, written out with their times: rank 1 runs
 * full backwards (B), rank 0 split ones (I then W), so all four compute
 * ops appear.  Step 8.5 ms; busy 5 and 6 ms, so the bubble is 6/17. */
static const ppcc_action hand_r0[] = {
	{PPCC_OP_F, 0, 0, -1, 0},      {PPCC_OP_SEND_F, 0, 0, 1, 1000},
	{PPCC_OP_F, 0, 1, -1, 0},      {PPCC_OP_SEND_F, 0, 1, 1, 1000},
	{PPCC_OP_RECV_B, 0, 0, 1, 1000}, {PPCC_OP_I, 0, 0, -1, 0},
	{PPCC_OP_W, 0, 0, -1, 0},      {PPCC_OP_RECV_B, 0, 1, 1, 1000},
	{PPCC_OP_I, 0, 1, -1, 0},      {PPCC_OP_W, 0, 1, -1, 0},
};
static const double hand_t0[][2] = {
	{0, 1}, {1, 1}, {1, 2}, {2, 2}, {2, 4},
	{4, 5}, {5, 5.5}, {5.5, 7}, {7, 8}, {8, 8.5},
};
static const ppcc_action hand_r1[] = {
	{PPCC_OP_RECV_F, 1, 0, 0, 1000}, {PPCC_OP_F, 1, 0, -1, 0},
	{PPCC_OP_B, 1, 0, -1, 0},      {PPCC_OP_SEND_B, 1, 0, 0, 1000},
	{PPCC_OP_RECV_F, 1, 1, 0, 1000}, {PPCC_OP_F, 1, 1, -1, 0},
	{PPCC_OP_B, 1, 1, -1, 0},      {PPCC_OP_SEND_B, 1, 1, 0, 1000},
};
static const double hand_t1[][2] = {
	{0, 1}, {1, 2}, {2, 4}, {4, 4}, {4, 4}, {4, 5}, {5, 7}, {7, 7},
};

typedef struct hand_plan {
	ppcc_plan plan;
	ppcc_stage_info stages[2];
	ppcc_rank_schedule ranks[2];
	double start0[10], end0[10], start1[8], end1[8];
	double *starts[2], *ends[2];
	double busy[2], idle[2], peak[2];
	ppcc_layer layers[4];
} hand_plan;

static void hand_build(hand_plan *h)
{
	memset(h, 0, sizeof *h);
	for (int i = 0; i < 10; i++) {
		h->start0[i] = hand_t0[i][0];
		h->end0[i] = hand_t0[i][1];
	}
	for (int i = 0; i < 8; i++) {
		h->start1[i] = hand_t1[i][0];
		h->end1[i] = hand_t1[i][1];
	}
	h->starts[0] = h->start0;
	h->starts[1] = h->start1;
	h->ends[0] = h->end0;
	h->ends[1] = h->end1;
	h->stages[0] = (ppcc_stage_info){0, 0, 0, 0, 1, 0, 1000};
	h->stages[1] = (ppcc_stage_info){1, 1, 0, 2, 3, 1000, 0};
	h->ranks[0] = (ppcc_rank_schedule){0, 10, hand_r0};
	h->ranks[1] = (ppcc_rank_schedule){1, 8, hand_r1};
	const char *names[4] = {"embed", "block_1", "block_2", "head"};
	for (int i = 0; i < 4; i++)
		h->layers[i].name = names[i];
	ppcc_plan *p = &h->plan;
	p->model_name = "hand";
	p->n_layers = 4;
	p->layers = h->layers;
	p->best.stages = h->stages;
	ppcc_schedule *s = &p->best.schedule;
	s->version = PPCC_SCHEDULE_VERSION;
	s->kind = PPCC_SCHED_1F1B;
	s->n_ranks = 2;
	s->n_chunks = 1;
	s->n_stages = 2;
	s->n_microbatches = 2;
	s->stages = h->stages;
	s->ranks = h->ranks;
	ppcc_estimate *e = &p->best.estimate;
	e->step_ms = 8.5;
	e->bubble_fraction = 6.0 / 17.0;
	e->bubble_analytic = NAN;
	e->busy_ms = h->busy;
	e->idle_ms = h->idle;
	e->peak_memory_bytes = h->peak;
	e->start_ms = h->starts;
	e->end_ms = h->ends;
}

static int is_compute(int op)
{
	return op == PPCC_OP_F || op == PPCC_OP_B || op == PPCC_OP_I ||
	       op == PPCC_OP_W;
}

static long count_compute(const ppcc_schedule *s)
{
	long n = 0;
	for (int r = 0; r < s->n_ranks; r++)
		for (int i = 0; i < s->ranks[r].n_actions; i++)
			n += is_compute(s->ranks[r].actions[i].op);
	return n;
}

/* ---- emitting ------------------------------------------------------------ */

typedef struct output {
	char *text; /* free() */
	size_t len;
	int status;
	tu_diag diag;
} output;

static void emit_window(output *out, const ppcc_plan *p, int format,
			int deps, ppcc_dot_probe *probe, ppcc_window window)
{
	ppcc_emit_options o = {.format = format, .view_deps = deps,
			       .dot_probe = probe, .window = window};
	FILE *f = open_memstream(&out->text, &out->len);
	ck_assert_ptr_nonnull(f);
	tu_diag_init(&out->diag);
	out->status = ppcc_emit_dot(f, p, &o, &out->diag.d);
	ck_assert_int_eq(fclose(f), 0);
}

static void emit_probed(output *out, const ppcc_plan *p, int format, int deps,
			ppcc_dot_probe *probe)
{
	emit_window(out, p, format, deps, probe, (ppcc_window){0});
}

static void emit(output *out, const ppcc_plan *p, int format, int deps)
{
	emit_probed(out, p, format, deps, NULL);
}

/* The output, which must have been written without any diagnostic;
 * probe: NULL, or what the DOT writer reports of its work. */
static char *emit_clean_probed(const ppcc_plan *p, int format, int deps,
			       size_t *len, ppcc_dot_probe *probe)
{
	output out;
	emit_probed(&out, p, format, deps, probe);
	ck_assert_msg(out.status == 0, "status %d: %s", out.status,
		      out.diag.text);
	ck_assert_msg(out.diag.len == 0, "diagnostics: %s", out.diag.text);
	if (len)
		*len = out.len;
	return out.text;
}

static char *emit_clean(const ppcc_plan *p, int format, int deps,
			size_t *len)
{
	return emit_clean_probed(p, format, deps, len, NULL);
}

static Agraph_t *parse_dot(const char *text)
{
	Agraph_t *g = agmemread(text);
	ck_assert_msg(g != NULL, "agmemread rejects the DOT output");
	return g;
}

static const char *attr(void *obj, const char *name)
{
	const char *v = agget(obj, (char *)name);
	return v ? v : "";
}

/* Undoes the label escapes ppcc writes: "\\" is a backslash, "\n", "\l"
 * and "\r" end a line, "&amp;" is '&'.  Caller frees. */
static char *label_text(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;
	ck_assert_ptr_nonnull(out);
	while (*s) {
		if (s[0] == '\\' && s[1]) {
			*o++ = strchr("nlr", s[1]) ? '\n' : s[1];
			s += 2;
		} else if (strncmp(s, "&amp;", 5) == 0) {
			*o++ = '&';
			s += 5;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	return out;
}

static void put_utf8(char **o, unsigned long cp)
{
	unsigned char *u = (unsigned char *)*o;
	if (cp < 0x80) {
		*u++ = (unsigned char)cp;
	} else if (cp < 0x800) {
		*u++ = (unsigned char)(0xc0 | cp >> 6);
		*u++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*u++ = (unsigned char)(0xe0 | cp >> 12);
		*u++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		*u++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else {
		*u++ = (unsigned char)(0xf0 | cp >> 18);
		*u++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		*u++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		*u++ = (unsigned char)(0x80 | (cp & 0x3f));
	}
	*o = (char *)u;
}

/* The contents of every <text> element of an SVG document, in order, one
 * per line, with XML entities decoded (Graphviz writes the second of two
 * spaces in a row as &#160;, read back as a space).  Caller frees. */
static char *svg_text(const char *svg)
{
	char *out = malloc(strlen(svg) + 1), *o = out;
	ck_assert_ptr_nonnull(out);
	const char *p = svg;
	while ((p = strstr(p, "<text")) != NULL) {
		p = strchr(p, '>');
		ck_assert_ptr_nonnull(p);
		p++;
		const char *end = strstr(p, "</text>");
		ck_assert_ptr_nonnull(end);
		while (p < end) {
			if (*p != '&') {
				*o++ = *p++;
				continue;
			}
			const char *semi = memchr(p, ';', (size_t)(end - p));
			ck_assert_ptr_nonnull(semi);
			size_t n = (size_t)(semi - p + 1);
			if (strncmp(p, "&amp;", n) == 0)
				*o++ = '&';
			else if (strncmp(p, "&lt;", n) == 0)
				*o++ = '<';
			else if (strncmp(p, "&gt;", n) == 0)
				*o++ = '>';
			else if (strncmp(p, "&quot;", n) == 0)
				*o++ = '"';
			else if (strncmp(p, "&apos;", n) == 0)
				*o++ = '\'';
			else if (p[1] == '#') {
				unsigned long cp = p[2] == 'x'
					? strtoul(p + 3, NULL, 16)
					: strtoul(p + 2, NULL, 10);
				put_utf8(&o, cp == 160 ? ' ' : cp);
			} else {
				ck_abort_msg("unknown entity in SVG: %.*s",
					     (int)n, p);
			}
			p = semi + 1;
		}
		*o++ = '\n';
		p = end;
	}
	*o = '\0';
	return out;
}

/* Centre x, y, and width of a pinned node, in points. */
static void node_box(Agnode_t *n, double *x, double *y, double *w)
{
	const char *pos = attr(n, "pos");
	char bang = 0;
	ck_assert_msg(sscanf(pos, "%lf,%lf%c", x, y, &bang) == 3 && bang == '!',
		      "node %s: pos \"%s\" is not pinned", agnameof(n), pos);
	*w = atof(attr(n, "width")) * 72.0;
}

/* Runs argv with its input from a file holding text; returns the exit
 * status, or -1 when the program is not installed. */
static int run_on(const char *text, char *const argv_head[], tu_run *run)
{
	char *dir = tu_mkdtemp();
	ck_assert_ptr_nonnull(dir);
	char path[4096];
	tu_write_in(path, sizeof path, dir, "in.dot", text);
	char *argv[8];
	int k = 0;
	for (; argv_head[k]; k++)
		argv[k] = argv_head[k];
	argv[k++] = path;
	argv[k] = NULL;
	ck_assert_int_eq(tu_run_argv(run, NULL, NULL, NULL, 120, argv), 0);
	tu_rmtree_free(dir);
	return run->status == 127 ? -1 : run->status;
}

/* ---- the timeline --------------------------------------------------------- */

/* The timeline's scale and offset (x = offset + ms * scale), fitted
 * from the earliest compute action of rank 0 and the latest-starting
 * one. */
static void fit_timeline(Agraph_t *g, const ppcc_schedule *s,
			 const ppcc_estimate *e, double *out_offset,
			 double *out_scale)
{
	int lr = 0, li = -1, fi = -1;
	for (int r = 0; r < s->n_ranks; r++)
		for (int i = 0; i < s->ranks[r].n_actions; i++) {
			if (!is_compute(s->ranks[r].actions[i].op))
				continue;
			if (r == 0 && fi < 0)
				fi = i;
			if (li < 0 || e->start_ms[r][i] > e->start_ms[lr][li]) {
				lr = r;
				li = i;
			}
		}
	char name[64];
	double x, y, w, x2, y2, w2;
	snprintf(name, sizeof name, "r0a%d", fi);
	Agnode_t *n0 = agnode(g, name, 0);
	snprintf(name, sizeof name, "r%da%d", lr, li);
	Agnode_t *n1 = agnode(g, name, 0);
	ck_assert(n0 && n1);
	node_box(n0, &x, &y, &w);
	node_box(n1, &x2, &y2, &w2);
	double scale = ((x2 - w2 / 2) - (x - w / 2)) /
		       (e->start_ms[lr][li] - e->start_ms[0][fi]);
	ck_assert_double_gt(scale, 0);
	*out_scale = scale;
	*out_offset = (x - w / 2) - e->start_ms[0][fi] * scale;
}

/* Checks that each compute action of p is one node "r<R>a<I>" whose left
 * edge is offset + start * scale and width duration * scale, the same
 * scale and offset for all (fitted from two actions), every rank on one
 * row, rank 0 on top; and that no other node has such a name. */
static void check_timeline_boxes(const ppcc_plan *p, const char *text)
{
	const ppcc_schedule *s = &p->best.schedule;
	const ppcc_estimate *e = &p->best.estimate;
	Agraph_t *g = parse_dot(text);
	char name[64];
	double x, y, w, offset, scale;
	fit_timeline(g, s, e, &offset, &scale);

	long seen = 0;
	double prev_row_y = INFINITY;
	for (int r = 0; r < s->n_ranks; r++) {
		double row_y = NAN;
		for (int i = 0; i < s->ranks[r].n_actions; i++) {
			const ppcc_action *a = &s->ranks[r].actions[i];
			snprintf(name, sizeof name, "r%da%d", r, i);
			Agnode_t *n = agnode(g, name, 0);
			if (!is_compute(a->op)) {
				ck_assert_msg(n == NULL, "%s is not compute",
					      name);
				continue;
			}
			ck_assert_msg(n != NULL, "no node %s", name);
			seen++;
			node_box(n, &x, &y, &w);
			double t0 = e->start_ms[r][i], t1 = e->end_ms[r][i];
			ck_assert_msg(fabs(x - w / 2 - (offset + t0 * scale)) <
					      0.02,
				      "%s: left %g, want %g", name, x - w / 2,
				      offset + t0 * scale);
			ck_assert_msg(fabs(w - (t1 - t0) * scale) < 0.02,
				      "%s: width %g, want %g", name, w,
				      (t1 - t0) * scale);
			if (isnan(row_y))
				row_y = y;
			ck_assert_double_eq(y, row_y);
		}
		ck_assert_double_lt(row_y, prev_row_y);
		prev_row_y = row_y;
	}
	ck_assert_int_eq(seen, count_compute(s));
	long named = 0;
	for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n)) {
		int r, i;
		char tail;
		if (sscanf(agnameof(n), "r%da%d%c", &r, &i, &tail) == 2)
			named++;
	}
	ck_assert_int_eq(named, seen);
	agclose(g);
}

START_TEST(timeline_places_each_compute_action_once_at_its_time)
{
	fixture fx;
	fixture_build(&fx, PPCC_SCHED_1F1B, 4, 8, 1);
	char *text = emit_clean(&fx.plan, PPCC_FMT_DOT, 0, NULL);
	check_timeline_boxes(&fx.plan, text);
	free(text);
	fixture_free(&fx);

	fixture_build(&fx, PPCC_SCHED_INTERLEAVED, 8, 16, 2);
	text = emit_clean(&fx.plan, PPCC_FMT_DOT, 0, NULL);
	check_timeline_boxes(&fx.plan, text);
	free(text);
	fixture_free(&fx);

	hand_plan h;
	hand_build(&h);
	text = emit_clean(&h.plan, PPCC_FMT_DOT, 0, NULL);
	check_timeline_boxes(&h.plan, text);
	free(text);
}
END_TEST

/* A data-parallel plan's collectives on its channel lane: 1F1B, p = 2,
 * m = 4, under ZeRO 1 (the ALL_GATHER_PARAM prologue and a
 * REDUCE_SCATTER_GRAD per bucket) and ZeRO 3 (an UNSHARD_PARAM group
 * before every compute, reduce-scatters after every backward).  Each
 * collective is one node "r<R>c<I>" on its rank's row, its left edge and
 * width at its simulated times on the compute boxes' scale, reductions
 * dark and gathers light, the boxes of a rank never overlapping (one
 * channel); the legend names both ops, and a plan without collectives
 * has no lane. */
START_TEST(timeline_draws_each_collective_on_its_rank_lane)
{
	for (int zero = 1; zero <= 3; zero += 2) {
		fixture fx;
		fixture_build(&fx, PPCC_SCHED_1F1B, 2, 4, 1);
		ppcc_plan *pl = &fx.plan;
		ppcc_stage_cost *c = (ppcc_stage_cost *)pl->best.costs;
		for (int k = 0; k < 2; k++) {
			c[k].dp_reduce_ms_per_byte = 0.01;
			c[k].dp_gather_ms_per_byte = 0.005;
			c[k].zero3_param_bytes = 250;
		}
		const double grad[2] = {250, 100};
		ppcc_schedule *s = &pl->best.schedule;
		ck_assert_int_eq(ppcc_schedule_place_collectives(s, fx.a, grad,
								 100, zero, 1.0), 0);
		ck_assert_int_eq(ppcc_simulate(&pl->best.estimate, fx.a, s, c), 0);
		const ppcc_estimate *e = &pl->best.estimate;
		char *text = emit_clean(pl, PPCC_FMT_DOT, 0, NULL);
		check_timeline_boxes(pl, text);
		Agraph_t *g = parse_dot(text);
		double offset, scale;
		fit_timeline(g, s, e, &offset, &scale);
		long gathers = 0, reductions = 0;
		for (int r = 0; r < s->n_ranks; r++) {
			double row_y = NAN, last_right = -INFINITY;
			for (int i = 0; i < s->ranks[r].n_actions; i++) {
				const ppcc_action *a = &s->ranks[r].actions[i];
				char name[32];
				snprintf(name, sizeof name, "r%dc%d", r, i);
				Agnode_t *n = agnode(g, name, 0);
				int gather = a->op == PPCC_OP_ALL_GATHER_PARAM ||
					     a->op == PPCC_OP_UNSHARD_PARAM;
				int red = a->op == PPCC_OP_REDUCE_SCATTER_GRAD;
				ck_assert_int_ne(a->op, PPCC_OP_REDUCE_GRAD);
				if (!gather && !red) {
					ck_assert_msg(n == NULL, "%s is not a collective",
						      name);
					continue;
				}
				ck_assert_msg(n != NULL, "zero %d: no node %s", zero,
					      name);
				gathers += gather;
				reductions += red;
				double x, y, w;
				node_box(n, &x, &y, &w);
				double t0 = e->start_ms[r][i], t1 = e->end_ms[r][i];
				ck_assert_double_gt(t1, t0);
				ck_assert_msg(fabs(x - w / 2 - (offset + t0 * scale)) < 0.02,
					      "%s: left %g, want %g", name, x - w / 2,
					      offset + t0 * scale);
				ck_assert_msg(fabs(w - (t1 - t0) * scale) < 0.02,
					      "%s: width %g, want %g", name, w,
					      (t1 - t0) * scale);
				ck_assert_double_ge(x - w / 2 + 0.02, last_right);
				last_right = x + w / 2;
				if (isnan(row_y))
					row_y = y;
				ck_assert_double_eq(y, row_y);
				ck_assert_str_eq(attr(n, "fillcolor"),
						 gather ? "#9c9c9c" : "#3d3d3d");
				ck_assert_ptr_nonnull(strstr(attr(n, "tooltip"),
							     ppcc_op_name(a->op)));
			}
		}
		/* stage 0's 250 bytes in 3 buckets, stage 1's 100 in one;
		 * ZeRO 1 gathers each bucket once and reduces it once, ZeRO 3
		 * gathers it before each of the 8 computes of its stage and
		 * reduces it after each of the 4 backwards */
		ck_assert_int_eq(gathers, zero == 1 ? 4 : 4 * 8);
		ck_assert_int_eq(reductions, zero == 1 ? 4 : 4 * 4);
		Agnode_t *legend = agnode(g, "legendGATHERtext", 0);
		ck_assert_ptr_nonnull(legend);
		char *words = label_text(attr(legend, "label"));
		ck_assert_ptr_nonnull(strstr(words, zero == 1 ? "ALL_GATHER_PARAM"
						       : "UNSHARD_PARAM"));
		free(words);
		ck_assert_ptr_nonnull(agnode(g, "legendREDUCE_GRAD", 0));
		agclose(g);
		free(text);
		fixture_free(&fx);
	}
	fixture fx;
	fixture_build(&fx, PPCC_SCHED_1F1B, 2, 4, 1);
	char *text = emit_clean(&fx.plan, PPCC_FMT_DOT, 0, NULL);
	Agraph_t *g = parse_dot(text);
	ck_assert_ptr_null(agnode(g, "legendGATHER", 0));
	ck_assert_ptr_null(agnode(g, "legendREDUCE_GRAD", 0));
	agclose(g);
	free(text);
	fixture_free(&fx);
}
END_TEST

/* Fill colour of each compute node, by op: one colour per op, four
 * different ones; wide boxes are labelled with their microbatch. */
START_TEST(timeline_gives_each_op_its_own_colour)
{
	hand_plan h;
	hand_build(&h);
	char *text = emit_clean(&h.plan, PPCC_FMT_DOT, 0, NULL);
	Agraph_t *g = parse_dot(text);
	char fills[4][32] = {"", "", "", ""};
	for (int r = 0; r < 2; r++) {
		const ppcc_rank_schedule *rs = &h.ranks[r];
		for (int i = 0; i < rs->n_actions; i++) {
			const ppcc_action *a = &rs->actions[i];
			if (!is_compute(a->op))
				continue;
			char name[32];
			snprintf(name, sizeof name, "r%da%d", r, i);
			Agnode_t *n = agnode(g, name, 0);
			ck_assert_ptr_nonnull(n);
			const char *fill = attr(n, "fillcolor");
			if (!fills[a->op][0])
				snprintf(fills[a->op], sizeof fills[0], "%s", fill);
			ck_assert_str_eq(fill, fills[a->op]);
			char mb[8];
			snprintf(mb, sizeof mb, "%d", (int)a->mb);
			ck_assert_str_eq(attr(n, "label"), mb);
		}
	}
	for (int i = 0; i < 4; i++)
		for (int j = i + 1; j < 4; j++)
			ck_assert_str_ne(fills[i], fills[j]);
	agclose(g);
	free(text);
}
END_TEST

/* With v > 1 a chunk is told by shade, and by the label "mbcC" when every
 * box has room for it; otherwise every label is the microbatch alone. */
START_TEST(timeline_marks_chunks_by_shade_and_label)
{
	static const int shapes[][3] = {{2, 2, 2}, {8, 16, 2}};
	for (int k = 0; k < 2; k++) {
		fixture fx;
		fixture_build(&fx, PPCC_SCHED_INTERLEAVED, shapes[k][0],
			      shapes[k][1], shapes[k][2]);
		const ppcc_schedule *s = &fx.plan.best.schedule;
		char *text = emit_clean(&fx.plan, PPCC_FMT_DOT, 0, NULL);
		Agraph_t *g = parse_dot(text);
		char fill[2][2][32] = {{"", ""}, {"", ""}}; /* [F/B][chunk] */
		int with_chunk = 0, bare = 0;
		for (int r = 0; r < s->n_ranks; r++)
			for (int i = 0; i < s->ranks[r].n_actions; i++) {
				const ppcc_action *a = &s->ranks[r].actions[i];
				if (!is_compute(a->op))
					continue;
				char name[32], want[32];
				snprintf(name, sizeof name, "r%da%d", r, i);
				Agnode_t *n = agnode(g, name, 0);
				ck_assert_ptr_nonnull(n);
				int chunk = a->stage / s->n_ranks;
				char *f = fill[a->op == PPCC_OP_B][chunk];
				if (!f[0])
					snprintf(f, 32, "%s", attr(n, "fillcolor"));
				ck_assert_str_eq(attr(n, "fillcolor"), f);
				const char *label = attr(n, "label");
				snprintf(want, sizeof want, "%dc%d", (int)a->mb,
					 chunk);
				if (strcmp(label, want) == 0) {
					with_chunk++;
					continue;
				}
				snprintf(want, sizeof want, "%d", (int)a->mb);
				ck_assert_msg(label[0] == '\0' ||
						      strcmp(label, want) == 0,
					      "%s: label \"%s\"", name, label);
				bare += label[0] != '\0';
			}
		ck_assert_str_ne(fill[0][0], fill[0][1]);
		ck_assert_str_ne(fill[1][0], fill[1][1]);
		if (k == 0)
			ck_assert_int_eq(with_chunk, count_compute(s));
		else
			ck_assert(with_chunk == 0 && bare > 0);
		agclose(g);
		free(text);
		fixture_free(&fx);
	}
}
END_TEST

START_TEST(timeline_title_names_schedule_step_and_bubbles)
{
	fixture fx;
	fixture_build(&fx, PPCC_SCHED_1F1B, 4, 8, 1);
	const ppcc_estimate *e = &fx.plan.best.estimate;
	char *text = emit_clean(&fx.plan, PPCC_FMT_DOT, 0, NULL);
	Agraph_t *g = parse_dot(text);
	char *title = label_text(attr(g, "label"));
	char want[256];
	snprintf(want, sizeof want, "gpt-test: 1f1b, p = 4, m = 8, v = 1\n"
		 "step %.1f ms \xc2\xb7 bubble %.1f%% simulated, %.1f%% closed "
		 "form\n", e->step_ms, 100 * e->bubble_fraction,
		 100 * e->bubble_analytic);
	ck_assert_str_eq(title, want);
	free(title);
	agclose(g);
	free(text);
	fixture_free(&fx);

	hand_plan h;
	hand_build(&h);
	text = emit_clean(&h.plan, PPCC_FMT_DOT, 0, NULL);
	g = parse_dot(text);
	title = label_text(attr(g, "label"));
	ck_assert_str_eq(title, "hand: 1f1b, p = 2, m = 2, v = 1\n"
			 "step 8.5 ms \xc2\xb7 bubble 35.3% simulated\n");
	free(title);
	agclose(g);
	free(text);
}
END_TEST

/* The time axis: a tick label "0" at time 0 and one at each step. */
START_TEST(timeline_axis_ticks_sit_at_their_times)
{
	hand_plan h;
	hand_build(&h);
	char *text = emit_clean(&h.plan, PPCC_FMT_DOT, 0, NULL);
	Agraph_t *g = parse_dot(text);
	double x, y, w, left0, w0;
	node_box(agnode(g, "r0a0", 0), &x, &y, &w0);
	left0 = x - w0 / 2; /* r0a0 runs from 0 to 1 ms */
	int ticks = 0;
	for (int k = 0;; k++) {
		char name[32];
		snprintf(name, sizeof name, "ticklabel%d", k);
		Agnode_t *n = agnode(g, name, 0);
		if (!n)
			break;
		node_box(n, &x, &y, &w);
		double t = atof(attr(n, "label"));
		ck_assert_msg(fabs(x - (left0 + t * w0)) < 0.02,
			      "tick %s at %g", attr(n, "label"), x);
		ticks++;
	}
	ck_assert_int_ge(ticks, 5);
	ck_assert_ptr_nonnull(agnode(g, "axis", 0));
	agclose(g);
	free(text);
}
END_TEST

/* ---- the dependency view -------------------------------------------------- */

static uint64_t send_bytes(const ppcc_schedule *s, int op, int stage, int mb)
{
	for (int r = 0; r < s->n_ranks; r++)
		for (int i = 0; i < s->ranks[r].n_actions; i++) {
			const ppcc_action *a = &s->ranks[r].actions[i];
			if (a->op == op && a->stage == stage && a->mb == mb)
				return a->bytes;
		}
	ck_abort_msg("no %s of stage %d mb %d", ppcc_op_name(op), stage, mb);
	return 0;
}

/* "48 MiB", "3.8 KiB", "512 B": within the rounding of one decimal. */
static void check_bytes_label(const char *label, uint64_t bytes)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double value;
	char unit[8];
	ck_assert_msg(sscanf(label, "%lf %7s", &value, unit) == 2,
		      "edge label \"%s\"", label);
	double scale = 1;
	int u = 0;
	while (u < 5 && strcmp(unit, units[u]) != 0) {
		u++;
		scale *= 1024;
	}
	ck_assert_msg(u < 5, "edge label \"%s\"", label);
	ck_assert_msg(fabs(value * scale - (double)bytes) <=
			      0.051 * scale + 0.5,
		      "edge label \"%s\" for %llu bytes", label,
		      (unsigned long long)bytes);
}

static void check_deps(const ppcc_plan *p)
{
	const ppcc_schedule *s = &p->best.schedule;
	char *text = emit_clean(p, PPCC_FMT_DOT, 1, NULL);
	Agraph_t *g = parse_dot(text);
	ck_assert(agisdirected(g));
	ck_assert_int_eq(agnnodes(g), count_compute(s));
	long sends = 0, order = 0;
	for (int r = 0; r < s->n_ranks; r++) {
		char name[64];
		snprintf(name, sizeof name, "cluster_rank%d", r);
		Agraph_t *sub = agsubg(g, name, 0);
		ck_assert_msg(sub != NULL, "no %s", name);
		long here = 0;
		for (int i = 0; i < s->ranks[r].n_actions; i++) {
			const ppcc_action *a = &s->ranks[r].actions[i];
			sends += a->op == PPCC_OP_SEND_F || a->op == PPCC_OP_SEND_B;
			if (!is_compute(a->op))
				continue;
			here++;
			snprintf(name, sizeof name, "r%da%d", r, i);
			Agnode_t *n = agnode(sub, name, 0);
			ck_assert_msg(n != NULL, "%s not in its rank's cluster",
				      name);
			char want[64];
			snprintf(want, sizeof want, "%s s%d mb%d",
				 ppcc_op_name(a->op), (int)a->stage, (int)a->mb);
			ck_assert_str_eq(attr(n, "label"), want);
		}
		ck_assert_int_eq(agnnodes(sub), here);
		order += here - 1;
	}
	long dashed = 0, solid = 0;
	for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n))
		for (Agedge_t *ed = agfstout(g, n); ed; ed = agnxtout(g, ed)) {
			const char *style = attr(ed, "style");
			char ot[8], oh[8];
			int st, sh, mt, mh;
			ck_assert(sscanf(attr(agtail(ed), "label"), "%7s s%d mb%d",
					 ot, &st, &mt) == 3);
			ck_assert(sscanf(attr(aghead(ed), "label"), "%7s s%d mb%d",
					 oh, &sh, &mh) == 3);
			if (strcmp(style, "dashed") == 0) {
				dashed++;
				ck_assert_int_eq(st % s->n_ranks, sh % s->n_ranks);
				continue;
			}
			ck_assert_str_eq(style, "solid");
			solid++;
			/* forward F(s) -> F(s+1), backward B(s) -> B(s-1) */
			ck_assert_int_eq(mt, mh);
			ck_assert_str_eq(ot, oh);
			ck_assert_int_eq(sh, strcmp(ot, "F") == 0 ? st + 1 : st - 1);
			check_bytes_label(attr(ed, "label"),
					  send_bytes(s, strcmp(ot, "F") == 0
						     ? PPCC_OP_SEND_F
						     : PPCC_OP_SEND_B, st, mt));
		}
	ck_assert_int_eq(dashed, order);
	ck_assert_int_eq(solid, sends);
	agclose(g);
	free(text);
}

START_TEST(deps_has_a_node_per_compute_and_an_edge_per_transfer)
{
	static const int shapes[][4] = {
		{PPCC_SCHED_GPIPE, 4, 8, 1},
		{PPCC_SCHED_1F1B, 4, 8, 1},
		{PPCC_SCHED_INTERLEAVED, 4, 8, 2},
		{PPCC_SCHED_INTERLEAVED, 2, 4, 3},
	};
	for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
		fixture fx;
		fixture_build(&fx, shapes[k][0], shapes[k][1], shapes[k][2],
			      shapes[k][3]);
		check_deps(&fx.plan);
		fixture_free(&fx);
	}
}
END_TEST

/* Rendering the dependency view with dot must work for each schedule
 * kind: libgvc 2.43 crashes on some graphs (zero-weight labelled edges
 * between clusters) and fails on others without newrank. */
START_TEST(deps_renders_for_every_schedule_kind)
{
	static const int shapes[][4] = {
		{PPCC_SCHED_GPIPE, 4, 8, 1},     {PPCC_SCHED_1F1B, 8, 32, 1},
		{PPCC_SCHED_INTERLEAVED, 4, 4, 2}, {PPCC_SCHED_INTERLEAVED, 8, 16, 2},
		{PPCC_SCHED_INTERLEAVED, 4, 8, 4}, {PPCC_SCHED_INTERLEAVED, 8, 8, 3},
	};
	for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
		fixture fx;
		fixture_build(&fx, shapes[k][0], shapes[k][1], shapes[k][2],
			      shapes[k][3]);
		size_t len;
		char *svg = emit_clean(&fx.plan, PPCC_FMT_SVG, 1, &len);
		ck_assert_ptr_nonnull(strstr(svg, "</svg>"));
		ck_assert_ptr_nonnull(strstr(svg, "<title>cluster_rank0</title>"));
		free(svg);
		fixture_free(&fx);
	}
}
END_TEST

/* ---- names ----------------------------------------------------------------- */

static const char *const hostile[] = {
	"say \"hi\"",
	"back\\slash",
	"trailing\\",
	"\\\\double\\\\",
	"\\N \\G \\E \\T \\H \\L \\n \\l \\r",
	"two\nlines",
	"\"\\\"",
	"node",
	"Digraph",
	"EDGE",
	"strict",
	"subgraph",
	"graph",
	"caf\xc3\xa9 \xe6\xa8\xa1\xe5\x9e\x8b \xf0\x9f\x9a\x80 \xce\xb1\xce\xb2",
	"a & b &amp; &#65; <b>x</b> 'q'",
	"-1.5",
	"{ } [ ] ; = , -- ->",
	"two  spaces",
};

/* A model named name whose first layer is named name too. */
static void with_name(hand_plan *h, const char *name)
{
	hand_build(h);
	h->plan.model_name = name;
	h->layers[0].name = name;
}

/* The dependency view's DOT text comes from ppcc's own writer (agwrite
 * looks every node and edge up in every cluster: quadratic in the
 * stages); it must be what agwrite writes, byte for byte, for every
 * schedule kind and for names that need quoting and escaping. */
static void deps_dot_matches_agwrite(const ppcc_plan *p, const char *what)
{
	ppcc_dot_probe probe = {0};
	char *mine = emit_clean_probed(p, PPCC_FMT_DOT, 1, NULL, &probe);
	ck_assert_msg(probe.linear_writes == 1,
		      "%s: the linear writer was not used", what);
	ppcc_dot_probe forced = {.force_agwrite = 1};
	char *theirs = emit_clean_probed(p, PPCC_FMT_DOT, 1, NULL, &forced);
	ck_assert_int_eq(forced.linear_writes, 0);
	if (strcmp(mine, theirs) != 0) {
		size_t i = 0;
		while (mine[i] && mine[i] == theirs[i])
			i++;
		size_t from = i > 80 ? i - 80 : 0;
		ck_abort_msg("%s: differs from agwrite at byte %zu:\nmine:   %.160s\n"
			     "agwrite: %.160s", what, i, mine + from, theirs + from);
	}
	free(mine);
	free(theirs);
}

/* A data-parallel plan: 1F1B, p 2, m 4, stage 0's 250 gradient bytes in
 * buckets of 100 (3 REDUCE_GRAD), stage 1's 100 in one.  Each reduction
 * is a node in its rank's cluster with one dotted edge from its stage's
 * last backward (B of microbatch 3) and none out; the program order and
 * the transfers are those of the plan without them (2 x 7 dashed edges,
 * 8 solid); the title names the dotted edges, and the DOT text is what
 * agwrite writes. */
START_TEST(deps_draws_each_reduction_after_its_backward)
{
	fixture fx;
	fixture_build(&fx, PPCC_SCHED_1F1B, 2, 4, 1);
	const double grad[2] = {250, 100};
	ck_assert_int_eq(ppcc_schedule_place_reductions(&fx.plan.best.schedule,
							fx.a, grad, 100), 0);
	char *text = emit_clean(&fx.plan, PPCC_FMT_DOT, 1, NULL);
	Agraph_t *g = parse_dot(text);
	ck_assert_ptr_nonnull(strstr(attr(g, "label"),
				     "dotted: gradients to their reduction"));
	ck_assert_int_eq(agnnodes(g), 16 + 4);
	static const char *const want[2][4] = {
		{"REDUCE_GRAD s0 bucket 0", "REDUCE_GRAD s0 bucket 1",
		 "REDUCE_GRAD s0 bucket 2", NULL},
		{"REDUCE_GRAD s1 bucket 0", NULL, NULL, NULL}};
	for (int r = 0; r < 2; r++) {
		char name[32];
		snprintf(name, sizeof name, "cluster_rank%d", r);
		Agraph_t *sub = agsubg(g, name, 0);
		ck_assert_ptr_nonnull(sub);
		int k = 0;
		for (Agnode_t *n = agfstnode(sub); n; n = agnxtnode(sub, n)) {
			if (strncmp(attr(n, "label"), "REDUCE_GRAD", 11) != 0)
				continue;
			ck_assert_msg(k < 4 && want[r][k], "rank %d: extra %s", r,
				      attr(n, "label"));
			ck_assert_str_eq(attr(n, "label"), want[r][k]);
			ck_assert_int_eq(agdegree(g, n, 1, 0), 1);
			ck_assert_int_eq(agdegree(g, n, 0, 1), 0);
			Agedge_t *in = agfstin(g, n);
			ck_assert_str_eq(attr(in, "style"), "dotted");
			ck_assert_str_eq(attr(agtail(in), "label"),
					 r == 0 ? "B s0 mb3" : "B s1 mb3");
			k++;
		}
		ck_assert_int_eq(k, r == 0 ? 3 : 1);
	}
	long dashed = 0, solid = 0, dotted = 0;
	for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n))
		for (Agedge_t *ed = agfstout(g, n); ed; ed = agnxtout(g, ed)) {
			const char *style = attr(ed, "style");
			dashed += strcmp(style, "dashed") == 0;
			solid += strcmp(style, "solid") == 0;
			dotted += strcmp(style, "dotted") == 0;
		}
	ck_assert_int_eq(dashed, 14);
	ck_assert_int_eq(solid, 8);
	ck_assert_int_eq(dotted, 4);
	agclose(g);
	free(text);
	deps_dot_matches_agwrite(&fx.plan, "data-parallel 1F1B");
	size_t len;
	char *svg = emit_clean(&fx.plan, PPCC_FMT_SVG, 1, &len);
	ck_assert_ptr_nonnull(strstr(svg, "REDUCE_GRAD s0 bucket 2"));
	free(svg);
	fixture_free(&fx);
}
END_TEST

START_TEST(deps_dot_text_is_what_agwrite_writes)
{
	static const int shapes[][4] = {
		{PPCC_SCHED_GPIPE, 4, 8, 1},     {PPCC_SCHED_1F1B, 8, 32, 1},
		{PPCC_SCHED_INTERLEAVED, 4, 4, 2}, {PPCC_SCHED_INTERLEAVED, 8, 8, 3},
		{PPCC_SCHED_1F1B, 1, 4, 1},
	};
	char what[64];
	for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
		fixture fx;
		fixture_build(&fx, shapes[k][0], shapes[k][1], shapes[k][2],
			      shapes[k][3]);
		snprintf(what, sizeof what, "kind %d p %d m %d v %d", shapes[k][0],
			 shapes[k][1], shapes[k][2], shapes[k][3]);
		deps_dot_matches_agwrite(&fx.plan, what);
		fixture_free(&fx);
	}
	for (size_t k = 0; k < sizeof hostile / sizeof hostile[0]; k++) {
		hand_plan h;
		with_name(&h, hostile[k]);
		snprintf(what, sizeof what, "name %zu", k);
		deps_dot_matches_agwrite(&h.plan, what);
	}
	/* the timeline (no clusters) is agwrite's */
	fixture fx;
	fixture_build(&fx, PPCC_SCHED_1F1B, 4, 8, 1);
	ppcc_dot_probe probe = {0};
	free(emit_clean_probed(&fx.plan, PPCC_FMT_DOT, 0, NULL, &probe));
	ck_assert_int_eq(probe.linear_writes, 0);
	fixture_free(&fx);
}
END_TEST

/* The dependency view of thousands of stages is written in linear work,
 * counted, not timed (agwrite's lookups were quadratic: 45.9 s at 16,000
 * stages): the linear writer is used, and its visits grow by the same
 * amount from 2,000 to 4,000 stages as from 4,000 to 6,000 (a writer
 * that scanned the clusters for each node would add four times as
 * many), and 16,000 stages cost at most four times 4,000's. */
static long deps_dot_visits(int stages)
{
	fixture fx;
	fixture_build(&fx, PPCC_SCHED_GPIPE, stages, 1, 1);
	ppcc_dot_probe probe = {0};
	size_t len;
	free(emit_clean_probed(&fx.plan, PPCC_FMT_DOT, 1, &len, &probe));
	ck_assert_msg(probe.linear_writes == 1, "%d stages: written by agwrite",
		      stages);
	/* at least a cluster per stage, F and B nodes, 3 p - 2 edges */
	ck_assert_int_ge(probe.visits, 6L * stages - 2);
	fixture_free(&fx);
	return probe.visits;
}

START_TEST(deps_dot_work_is_linear_in_the_stages)
{
	long v2 = deps_dot_visits(2000), v4 = deps_dot_visits(4000),
	     v6 = deps_dot_visits(6000), v16 = deps_dot_visits(16000);
	ck_assert_msg(v6 - v4 == v4 - v2, "visits %ld, %ld, %ld at 2,000, "
		      "4,000, 6,000 stages: not linear", v2, v4, v6);
	ck_assert_msg(v16 <= 4 * v4, "visits %ld at 4,000 stages, %ld at "
		      "16,000", v4, v16);
}
END_TEST

/* The label text of the title, the row label of rank 0 (timeline) and
 * the cluster of rank 0 (dependency view) hold the name exactly. */
START_TEST(names_survive_the_dot_round_trip)
{
	for (size_t k = 0; k < sizeof hostile / sizeof hostile[0]; k++) {
		const char *name = hostile[k];
		hand_plan h;
		with_name(&h, name);
		char want[512];
		for (int deps = 0; deps < 2; deps++) {
			char *text = emit_clean(&h.plan, PPCC_FMT_DOT, deps, NULL);
			Agraph_t *g = parse_dot(text);
			char *title = label_text(attr(g, "label"));
			snprintf(want, sizeof want, "%s: 1f1b, p = 2", name);
			ck_assert_msg(strncmp(title, want, strlen(want)) == 0,
				      "title \"%s\" for name \"%s\"", title, name);
			free(title);
			char *row = label_text(deps
				? attr(agsubg(g, "cluster_rank0", 0), "label")
				: attr(agnode(g, "ranklabel0", 0), "label"));
			snprintf(want, sizeof want, "layers 0\xe2\x80\x93" "1 (%s \xe2\x80\xa6 block_1)\n",
				 name);
			ck_assert_msg(strstr(row, want) != NULL,
				      "row label \"%s\" for name \"%s\"", row,
				      name);
			free(row);
			agclose(g);
			free(text);
		}
	}
}
END_TEST

START_TEST(names_show_verbatim_in_the_svg)
{
	for (size_t k = 0; k < sizeof hostile / sizeof hostile[0]; k++) {
		const char *name = hostile[k];
		hand_plan h;
		with_name(&h, name);
		for (int deps = 0; deps < 2; deps++) {
			char *svg = emit_clean(&h.plan, PPCC_FMT_SVG, deps, NULL);
			char *shown = svg_text(svg);
			char want[512];
			snprintf(want, sizeof want, "%s: 1f1b, p = 2", name);
			ck_assert_msg(strstr(shown, want) != NULL,
				      "\"%s\" not in the SVG's text:\n%s", name,
				      shown);
			snprintf(want, sizeof want, "(%s \xe2\x80\xa6 block_1)",
				 name);
			ck_assert_msg(strstr(shown, want) != NULL,
				      "\"%s\" not in the SVG's text:\n%s", want,
				      shown);
			free(shown);
			free(svg);
		}
	}
}
END_TEST

/* A 20 kB name (more than Graphviz's reader takes in one string) is cut
 * on a character boundary with an ellipsis, and the graph still parses
 * and renders. */
START_TEST(long_names_are_cut_on_a_character_boundary)
{
	size_t n = 20000;
	char *name = malloc(n + 1);
	ck_assert_ptr_nonnull(name);
	name[0] = 'x';
	for (size_t i = 1; i + 3 <= n; i += 3)
		memcpy(name + i, "\xe2\x82\xac", 3); /* euro sign */
	name[n - (n - 1) % 3] = '\0';
	size_t len = strlen(name);
	ck_assert_uint_gt(len, 19990);
	hand_plan h;
	with_name(&h, name);
	for (int deps = 0; deps < 2; deps++) {
		char *text = emit_clean(&h.plan, PPCC_FMT_DOT, deps, NULL);
		Agraph_t *g = parse_dot(text);
		char *title = label_text(attr(g, "label"));
		char *cut = strstr(title, "\xe2\x80\xa6: 1f1b");
		ck_assert_ptr_nonnull(cut);
		size_t kept = (size_t)(cut - title);
		ck_assert_uint_gt(kept, 60);
		ck_assert_uint_lt(kept, 400);
		ck_assert_int_eq(memcmp(title, name, kept), 0);
		ck_assert_int_ne((unsigned char)name[kept] & 0xc0, 0x80);
		free(title);
		agclose(g);
		free(text);
		size_t svg_len;
		char *svg = emit_clean(&h.plan, PPCC_FMT_SVG, deps, &svg_len);
		ck_assert_ptr_nonnull(strstr(svg, "</svg>"));
		free(svg);
	}
	free(name);
}
END_TEST

/* Control characters and invalid UTF-8 show as U+FFFD: Graphviz would
 * otherwise warn about the encoding and write invalid XML. */
START_TEST(invalid_text_shows_as_replacement_characters)
{
	hand_plan h;
	with_name(&h, "tab\there\x01 bad\xff\xc3(");
	char *svg = emit_clean(&h.plan, PPCC_FMT_SVG, 0, NULL);
	char *shown = svg_text(svg);
	ck_assert_ptr_nonnull(strstr(shown, "tab\xef\xbf\xbdhere\xef\xbf\xbd "
				     "bad\xef\xbf\xbd\xef\xbf\xbd(: 1f1b"));
	free(shown);
	free(svg);
}
END_TEST

/* The real commands: `dot` takes the dependency view, `neato -n` and
 * `neato -n2` the timeline, for every hostile name, and they draw exactly
 * what the library draws. */
START_TEST(graphviz_commands_accept_and_draw_the_same)
{
	char *dot_cmd[] = {"dot", "-Tsvg", NULL};
	char *neato_n[] = {"neato", "-n", "-Tsvg", NULL};
	char *neato_n2[] = {"neato", "-n2", "-Tsvg", NULL};
	for (size_t k = 0; k < sizeof hostile / sizeof hostile[0]; k++) {
		hand_plan h;
		with_name(&h, hostile[k]);
		for (int deps = 0; deps < 2; deps++) {
			char *text = emit_clean(&h.plan, PPCC_FMT_DOT, deps, NULL);
			char *svg = emit_clean(&h.plan, PPCC_FMT_SVG, deps, NULL);
			for (int v = 0; v < (deps ? 1 : 2); v++) {
				tu_run run;
				int st = run_on(text, deps ? dot_cmd
						: v ? neato_n2 : neato_n, &run);
				if (st < 0) {
					tu_skip("graphviz_commands", "dot or neato "
						"not installed (package graphviz)");
					tu_run_free(&run);
					free(svg);
					free(text);
					return;
				}
				ck_assert_msg(st == 0 && run.err_len == 0,
					      "status %d for \"%s\": %.300s", st,
					      hostile[k], run.err);
				/* the library's SVG drops the comment naming
				 * Graphviz's version; the command's has it */
				char *gen = strstr(run.out, "<!-- Generated by graphviz");
				char *gen_end = gen ? strstr(gen, "-->\n") : NULL;
				if (gen_end)
					memmove(gen, gen_end + 4, strlen(gen_end + 4) + 1);
				ck_assert_msg(strcmp(run.out, svg) == 0,
					      "%s draws \"%s\" differently",
					      deps ? "dot" : "neato", hostile[k]);
				tu_run_free(&run);
			}
			free(svg);
			free(text);
		}
	}
}
END_TEST

/* ---- images ------------------------------------------------------------------- */

START_TEST(svg_and_png_are_complete_and_deterministic)
{
	fixture fx;
	fixture_build(&fx, PPCC_SCHED_INTERLEAVED, 4, 8, 2);
	for (int deps = 0; deps < 2; deps++) {
		size_t n1, n2;
		char *svg = emit_clean(&fx.plan, PPCC_FMT_SVG, deps, &n1);
		ck_assert_int_eq(strncmp(svg, "<?xml", 5), 0);
		ck_assert_ptr_nonnull(strstr(svg, "<svg "));
		ck_assert_ptr_nonnull(strstr(svg, "</svg>\n"));
		char *again = emit_clean(&fx.plan, PPCC_FMT_SVG, deps, &n2);
		ck_assert(n1 == n2 && memcmp(svg, again, n1) == 0);
		free(again);
		free(svg);

		char *png = emit_clean(&fx.plan, PPCC_FMT_PNG, deps, &n1);
		ck_assert_uint_gt(n1, 1000);
		ck_assert_int_eq(memcmp(png, "\x89PNG\r\n\x1a\n", 8), 0);
		ck_assert_int_eq(memcmp(png + n1 - 8, "IEND", 4), 0);
		again = emit_clean(&fx.plan, PPCC_FMT_PNG, deps, &n2);
		ck_assert(n1 == n2 && memcmp(png, again, n1) == 0);
		free(again);
		free(png);

		char *dot = emit_clean(&fx.plan, PPCC_FMT_DOT, deps, &n1);
		again = emit_clean(&fx.plan, PPCC_FMT_DOT, deps, &n2);
		ck_assert(n1 == n2 && memcmp(dot, again, n1) == 0);
		free(again);
		free(dot);
	}
	fixture_free(&fx);
}
END_TEST

typedef struct locale_case {
	const ppcc_plan *plan;
	const char *want[3]; /* DOT, SVG: timeline; DOT: deps */
} locale_case;

/* In a child: the same bytes under a German locale, set in the
 * environment and made current by setlocale as a host program might do,
 * and that locale still current afterwards. */
static int locale_child(const locale_case *c)
{
	if (setenv("LC_ALL", "de_DE.UTF-8", 1) != 0 ||
	    !setlocale(LC_ALL, "de_DE.UTF-8"))
		return 77;
	char point[8];
	snprintf(point, sizeof point, "%.1f", 1.5);
	if (strcmp(point, "1,5") != 0)
		return 3;
	static const int forms[3][2] = {{PPCC_FMT_DOT, 0}, {PPCC_FMT_SVG, 0},
					{PPCC_FMT_DOT, 1}};
	for (int k = 0; k < 3; k++) {
		output out;
		emit(&out, c->plan, forms[k][0], forms[k][1]);
		if (out.status != 0 || strcmp(out.text, c->want[k]) != 0)
			return 10 + k;
		free(out.text);
	}
	const char *now = setlocale(LC_NUMERIC, NULL);
	return now && strcmp(now, "de_DE.UTF-8") == 0 ? 0 : 4;
}

START_TEST(output_is_the_same_in_a_german_locale)
{
	fixture fx;
	fixture_build(&fx, PPCC_SCHED_1F1B, 4, 8, 1);
	locale_case c = {.plan = &fx.plan};
	char *want[3] = {
		emit_clean(&fx.plan, PPCC_FMT_DOT, 0, NULL),
		emit_clean(&fx.plan, PPCC_FMT_SVG, 0, NULL),
		emit_clean(&fx.plan, PPCC_FMT_DOT, 1, NULL),
	};
	for (int k = 0; k < 3; k++)
		c.want[k] = want[k];
	/* libgvc leaves the program's locale as it found it. */
	ck_assert_str_eq(setlocale(LC_ALL, NULL), "C");
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(locale_child(&c));
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		tu_skip("output_is_the_same_in_a_german_locale",
			"de_DE.UTF-8 is not installed (make deps generates it)");
	else
		ck_assert_msg(WEXITSTATUS(st) == 0, "child status %d",
			      WEXITSTATUS(st));
	for (int k = 0; k < 3; k++)
		free(want[k]);
	fixture_free(&fx);
}
END_TEST

/* In a child with no Graphviz plugins (GVBINDIR names an empty folder):
 * SVG fails with PPCC_EIO and an error naming graphviz, nothing printed
 * on stderr; DOT still works. */
START_TEST(missing_graphviz_plugins_are_an_error_not_a_print)
{
	/* The library keeps one libgvc context per process: the child must
	 * be the first to render, which holds only when Check forks. */
	const char *fork_mode = getenv("CK_FORK");
	if (fork_mode && strcmp(fork_mode, "no") == 0) {
		tu_skip("missing_graphviz_plugins", "needs CK_FORK (this run "
			"has CK_FORK=no)");
		return;
	}
	char *dir = tu_mkdtemp();
	ck_assert_ptr_nonnull(dir);
	char errpath[4096];
	snprintf(errpath, sizeof errpath, "%s/stderr", dir);
	hand_plan h;
	hand_build(&h);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (!freopen(errpath, "w", stderr) ||
		    setenv("GVBINDIR", dir, 1) != 0)
			_exit(2);
		for (int deps = 0; deps < 2; deps++) {
			output out;
			emit(&out, &h.plan, PPCC_FMT_SVG, deps);
			if (out.status != PPCC_EIO || out.diag.d.errors == 0 ||
			    !strstr(out.diag.text, "error: graphviz"))
				_exit(3 + deps);
			free(out.text);
			emit(&out, &h.plan, PPCC_FMT_DOT, deps);
			if (out.status != 0)
				_exit(5 + deps);
			free(out.text);
		}
		fflush(stderr);
		_exit(0);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d",
		      st);
	size_t n;
	char *err = tu_read_file(errpath, &n);
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(n == 0, "printed: %s", err);
	free(err);
	tu_rmtree_free(dir);
}
END_TEST

/* ---- limits and inputs ------------------------------------------------------ */

/* 8 x 4096 1F1B has 65536 compute actions: the timeline of the whole
 * step (--window all) draws the 50000 that start first, the dependency
 * view the first microbatches (at most 2000 nodes); both warn, both
 * parse. */
START_TEST(huge_plans_are_cut_with_a_warning)
{
	fixture fx;
	fixture_build(&fx, PPCC_SCHED_1F1B, 8, 4096, 1);
	for (int deps = 0; deps < 2; deps++) {
		output out;
		emit_window(&out, &fx.plan, PPCC_FMT_DOT, deps, NULL,
			    (ppcc_window){.kind = PPCC_WINDOW_ALL});
		ck_assert_int_eq(out.status, 0);
		ck_assert_int_eq(out.diag.d.warnings, 1);
		ck_assert_int_eq(out.diag.d.errors, 0);
		Agraph_t *g = parse_dot(out.text);
		long boxes = 0;
		for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n)) {
			int r, i;
			char tail;
			boxes += sscanf(agnameof(n), "r%da%d%c", &r, &i, &tail) == 2;
		}
		if (deps) {
			ck_assert_int_le(boxes, 2000);
			ck_assert_int_ge(boxes, 1900);
		} else {
			ck_assert_int_le(boxes, 50000);
			ck_assert_int_ge(boxes, 49990);
			ck_assert_ptr_nonnull(strstr(attr(g, "label"),
						     "showing the"));
		}
		agclose(g);
		free(out.text);
	}
	fixture_free(&fx);
}
END_TEST

/* A plan read back from JSON has stage costs but no times: the timeline
 * simulates it, and gets what the simulated plan draws. */
START_TEST(plan_without_times_is_simulated_for_the_timeline)
{
	fixture fx;
	fixture_build(&fx, PPCC_SCHED_INTERLEAVED, 4, 8, 2);
	char *want = emit_clean(&fx.plan, PPCC_FMT_DOT, 0, NULL);
	memset(&fx.plan.best.estimate, 0, sizeof fx.plan.best.estimate);
	char *got = emit_clean(&fx.plan, PPCC_FMT_DOT, 0, NULL);
	ck_assert_str_eq(got, want);
	free(got);

	fx.plan.best.costs = NULL;
	output out;
	emit(&out, &fx.plan, PPCC_FMT_SVG, 0);
	ck_assert_int_eq(out.status, PPCC_EINPUT);
	ck_assert_ptr_nonnull(strstr(out.diag.text, "error: the plan has no "
				     "simulated times"));
	free(out.text);
	/* The dependency view needs no times. */
	free(emit_clean(&fx.plan, PPCC_FMT_DOT, 1, NULL));
	free(want);
	fixture_free(&fx);
}
END_TEST

/* Each failing allocation gives PPCC_ENOMEM and leaks nothing. */
START_TEST(failed_allocations_are_enomem_without_leaks)
{
	fixture fx;
	fixture_build(&fx, PPCC_SCHED_1F1B, 4, 8, 1);
	static const int forms[][2] = {{PPCC_FMT_DOT, 0}, {PPCC_FMT_DOT, 1},
				       {PPCC_FMT_SVG, 0}};
	for (int k = 0; k < 3; k++) {
		int ok = 0;
		for (long n = 1; n < 1000 && !ok; n++) {
			long live = ppcc_alloc_live();
			ppcc_alloc_fail_at(n);
			output out;
			emit(&out, &fx.plan, forms[k][0], forms[k][1]);
			ppcc_alloc_fail_at(0);
			ck_assert_int_eq(ppcc_alloc_live(), live);
			free(out.text);
			ok = out.status == 0;
			ck_assert_msg(ok || out.status == PPCC_ENOMEM,
				      "allocation %ld: status %d", n, out.status);
		}
		ck_assert(ok);
	}
	fixture_free(&fx);
}
END_TEST

/* Every example model's plan, both views: the DOT parses and holds each
 * compute action, and `dot` / `neato -n` accept it. */
START_TEST(examples_draw_and_parse)
{
	static const char *const examples[] = {"tiny.yaml", "gpt3-175b.yaml",
					       "llama2-70b.yaml", "hetero.yaml"};
	for (size_t k = 0; k < sizeof examples / sizeof examples[0]; k++) {
		char rel[256];
		snprintf(rel, sizeof rel, "examples/%s", examples[k]);
		char full[4096];
		snprintf(full, sizeof full, "%s/%s", tu_src(), rel);
		if (!tu_exists(full))
			continue;
		tu_diag diag;
		tu_diag_init(&diag);
		ppcc_arena *a = ppcc_arena_new();
		ppcc_config cfg;
		ppcc_plan plan;
		ck_assert_msg(tu_plan_file(&plan, a, &cfg, rel, &diag) == 0,
			      "%s: %s", rel, diag.text);
		char *text = emit_clean(&plan, PPCC_FMT_DOT, 0, NULL);
		tu_plan_action_times(&plan, a); /* what the boxes are checked against */
		check_timeline_boxes(&plan, text);
		free(text);
		check_deps(&plan);
		ppcc_arena_free(a);
	}
}
END_TEST

/* ---- the data-parallel lanes (emit/lanes.c) ------------------------------- */

/* Llama 3 8B on 16 H100s, 4 stages x 4 replicas, under ZeRO stage zero:
 * what the lanes and the picture are compared with. */
#define LANES_YAML(zero) \
	"model:\n" \
	"  transformer: {preset: llama3-8b, micro_batch_size: 1}\n" \
	"cluster:\n" \
	"  devices: 16\n" \
	"  device: {preset: h100}\n" \
	"pipeline: {stages: 4, data_parallel: 4, microbatches: 8, zero: " \
	zero "}\n"

static const char *const lanes_zero[] = {"0", "1", "2", "3"};

/* Every collective the text report counts is on the lanes, at the
 * iteration model's times: the busiest lane's reductions are the
 * iteration's dp_comm_ms (the text's "ms per rank at most"), each rank's
 * gathers its estimate's dp_gather_ms, each rank's lane ends where the
 * iteration says its reductions end; ZeRO 2 lists the reduce-scatters of
 * every earlier backward, which its schedule does not hold. */
START_TEST(lanes_hold_every_collective_the_text_counts)
{
	for (int z = 0; z < 4; z++) {
		tu_diag diag;
		ppcc_arena *a = ppcc_arena_new();
		ppcc_config cfg;
		ppcc_plan plan;
		const char *yaml[4] = {LANES_YAML("0"), LANES_YAML("1"),
				       LANES_YAML("2"), LANES_YAML("3")};
		ck_assert_msg(tu_plan_text(&plan, a, &cfg, yaml[z], &diag) == 0,
			      "zero %s: %s", lanes_zero[z], diag.text);
		const ppcc_iteration *it = plan.best.iteration;
		const ppcc_estimate *e = &plan.best.estimate;
		const ppcc_schedule *s = &plan.best.schedule;
		ck_assert_ptr_nonnull(it);
		ppcc_lanes l;
		ck_assert_int_eq(ppcc_lanes_of(&l, &plan), 0);
		ck_assert_int_eq(l.n_ranks, s->n_ranks);
		double most = 0;
		long added = 0, held = 0;
		tu_plan_action_times(&plan, a);
		for (int r = 0; r < s->n_ranks; r++) {
			double end = 0, prev = 0;
			for (long k = l.first[r]; k < l.first[r + 1]; k++) {
				const ppcc_lane_op *o = &l.ops[k];
				ck_assert_int_eq(o->rank, r);
				ck_assert(ppcc_op_is_collective(o->op));
				ck_assert(o->end_ms >= o->start_ms);
				ck_assert(o->start_ms >= prev);
				prev = o->start_ms;
				end = fmax(end, o->end_ms);
				added += o->action < 0;
				held += o->action >= 0 &&
					ppcc_op_is_reduction(o->op);
			}
			most = fmax(most, l.reduce_ms[r]);
			ck_assert_double_eq_tol(l.gather_ms[r], e->dp_gather_ms[r],
						1e-9 * e->dp_gather_ms[r] + 1e-12);
			int n = s->ranks[r].n_actions;
			double last = n > 0 ? e->end_ms[r][n - 1] : 0;
			for (int i = 0; i < n; i++)
				if (!ppcc_op_is_collective(s->ranks[r].actions[i].op))
					last = fmax(last, e->end_ms[r][i]);
			ck_assert_msg(fabs(fmax(end, last) - it->dp_end_ms[r]) <=
					      1e-9 * it->dp_end_ms[r],
				      "zero %s rank %d: lane ends %.6f, "
				      "iteration %.6f", lanes_zero[z], r,
				      fmax(end, last), it->dp_end_ms[r]);
		}
		ck_assert_msg(fabs(most - it->dp_comm_ms) <=
				      1e-9 * it->dp_comm_ms,
			      "zero %s: lanes %.6f ms, text %.6f ms",
			      lanes_zero[z], most, it->dp_comm_ms);
		ck_assert(it->dp_comm_ms > 0);
		ck_assert_int_eq(held, it->dp_reductions);
		/* ZeRO 2 reduce-scatters after each of the m - 1 earlier
		 * backwards too; the others hold all of theirs */
		if (z == 2)
			ck_assert_int_eq(added, (s->n_microbatches - 1) * held);
		else
			ck_assert_int_eq(added, 0);
		ppcc_lanes_free(&l);
		ppcc_arena_free(a);
	}
}
END_TEST

/* The text report's "gradient reduction: ..., X ms per rank at most". */
static double text_reduce_ms(const ppcc_plan *p)
{
	char *text = tu_emit(p, PPCC_FMT_TEXT, NULL);
	const char *at = strstr(text, "gradient reduction: ");
	ck_assert_ptr_nonnull(at);
	const char *ms = strstr(at, " ms per rank at most");
	ck_assert_ptr_nonnull(ms);
	while (ms > at && ms[-1] != ' ')
		ms--;
	double v = strtod(ms, NULL);
	free(text);
	return v;
}

/* The number after "busy " in a lane box's tooltip. */
static double tooltip_busy(Agnode_t *n)
{
	const char *b = strstr(attr(n, "tooltip"), "busy ");
	ck_assert_ptr_nonnull(b);
	return strtod(b + 5, NULL);
}

/* ZeRO 2's picture of the whole step (--window all) holds every
 * reduce-scatter the text report counts: on the busiest rank's lane the
 * boxes' busy times add up to the text's "ms per rank at most", and the
 * lane's label says that figure.  (Before the lanes, the picture drew
 * the schedule's last backward's reduce-scatters only: 1/m of them.) */
START_TEST(timeline_lanes_total_the_text_reports)
{
	tu_diag diag;
	ppcc_arena *a = ppcc_arena_new();
	ppcc_config cfg;
	ppcc_plan plan;
	ck_assert_msg(tu_plan_text(&plan, a, &cfg, LANES_YAML("2"), &diag) == 0,
		      "%s", diag.text);
	double want = text_reduce_ms(&plan);
	output out;
	emit_window(&out, &plan, PPCC_FMT_DOT, 0, NULL,
		    (ppcc_window){.kind = PPCC_WINDOW_ALL});
	ck_assert_msg(out.status == 0, "%s", out.diag.text);
	Agraph_t *g = parse_dot(out.text);
	const ppcc_schedule *s = &plan.best.schedule;
	double most = 0;
	for (int r = 0; r < s->n_ranks; r++) {
		double busy = 0;
		long boxes = 0;
		for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n)) {
			int rr, k;
			char kind, tail;
			if (sscanf(agnameof(n), "r%d%c%d%c", &rr, &kind, &k,
				   &tail) != 3 || rr != r ||
			    !strchr("cxm", kind) ||
			    strcmp(attr(n, "fillcolor"), "#3d3d3d") != 0)
				continue;
			busy += tooltip_busy(n);
			boxes++;
		}
		ck_assert_int_gt(boxes, 0);
		/* each box's busy time is printed to 0.001 ms */
		ck_assert_double_le(busy, want + 0.0005 * boxes + 1e-9);
		if (busy > most)
			most = busy;
		char name[32];
		snprintf(name, sizeof name, "lanelabel%d", r);
		Agnode_t *l = agnode(g, name, 0);
		ck_assert_ptr_nonnull(l);
		ck_assert_ptr_nonnull(strstr(attr(l, "label"), "reduce "));
	}
	ck_assert_msg(fabs(most - want) <= 0.0005 * 2000 + 1e-9 &&
			      fabs(most - want) <= 1e-4 * want,
		      "lane %.3f ms, text %.3f ms", most, want);
	char figure[64];
	snprintf(figure, sizeof figure, "reduce %.3f ms", want);
	int labelled = 0;
	for (int r = 0; r < s->n_ranks; r++) {
		char name[32];
		snprintf(name, sizeof name, "lanelabel%d", r);
		labelled += strstr(attr(agnode(g, name, 0), "label"), figure) != NULL;
	}
	ck_assert_int_eq(labelled, 1);
	agclose(g);
	free(out.text);
	ppcc_arena_free(a);
}
END_TEST

/* --window START:END draws exactly the compute actions that overlap the
 * span, clipped to it, and ticks only inside it; --window step N is the
 * span from microbatch N's first forward to its last backward. */
START_TEST(timeline_window_keeps_only_actions_that_overlap_it)
{
	fixture fx;
	fixture_build(&fx, PPCC_SCHED_1F1B, 4, 8, 1);
	const ppcc_schedule *s = &fx.plan.best.schedule;
	const ppcc_estimate *e = &fx.plan.best.estimate;
	for (int pass = 0; pass < 2; pass++) {
		double w0 = 20, w1 = 45;
		ppcc_window win = {.kind = PPCC_WINDOW_SPAN, .start_ms = w0,
				   .end_ms = w1};
		if (pass == 1) {
			win = (ppcc_window){.kind = PPCC_WINDOW_STEP, .step = 3};
			w0 = INFINITY;
			w1 = -INFINITY;
			for (int r = 0; r < s->n_ranks; r++)
				for (int i = 0; i < s->ranks[r].n_actions; i++)
					if (is_compute(s->ranks[r].actions[i].op) &&
					    s->ranks[r].actions[i].mb == 3) {
						w0 = fmin(w0, e->start_ms[r][i]);
						w1 = fmax(w1, e->end_ms[r][i]);
					}
		}
		output out;
		emit_window(&out, &fx.plan, PPCC_FMT_DOT, 0, NULL, win);
		ck_assert_msg(out.status == 0, "%s", out.diag.text);
		Agraph_t *g = parse_dot(out.text);
		long shown = 0, want = 0;
		double left = INFINITY, right = -INFINITY;
		for (int r = 0; r < s->n_ranks; r++)
			for (int i = 0; i < s->ranks[r].n_actions; i++) {
				if (!is_compute(s->ranks[r].actions[i].op))
					continue;
				double t0 = e->start_ms[r][i], t1 = e->end_ms[r][i];
				int overlaps = t1 > w0 && t0 < w1;
				char name[32];
				snprintf(name, sizeof name, "r%da%d", r, i);
				Agnode_t *n = agnode(g, name, 0);
				ck_assert_msg((n != NULL) == overlaps,
					      "%s (%g-%g ms) %s in %g-%g", name,
					      t0, t1, n ? "drawn" : "missing",
					      w0, w1);
				want += overlaps;
				if (!n)
					continue;
				shown++;
				double x, y, w;
				node_box(n, &x, &y, &w);
				left = fmin(left, x - w / 2);
				right = fmax(right, x + w / 2);
			}
		ck_assert_int_gt(shown, 0);
		ck_assert_int_eq(shown, want);
		/* clipped: the boxes span the axis, not beyond it */
		Agnode_t *axis = agnode(g, "axis", 0);
		double ax, ay, aw;
		node_box(axis, &ax, &ay, &aw);
		ck_assert_double_ge(left, ax - aw / 2 - 0.02);
		ck_assert_double_le(right, ax + aw / 2 + 0.02);
		ck_assert_ptr_nonnull(strstr(attr(g, "label"), "window "));
		if (pass == 1)
			ck_assert_ptr_nonnull(strstr(attr(g, "label"),
						     "microbatch 3"));
		agclose(g);
		free(out.text);
	}
	fixture_free(&fx);
}
END_TEST

/* A plan too long to label at the widest axis shows its start by
 * default, where every box wide enough for its microbatch holds it, and
 * its title says how to see the rest.  (1F1B, p = 4, m = 256: over the
 * whole step a box is about 3 points wide.) */
START_TEST(timeline_labels_boxes_wide_enough_and_windows_a_long_plan)
{
	fixture fx;
	fixture_build(&fx, PPCC_SCHED_1F1B, 4, 256, 1);
	const ppcc_schedule *s = &fx.plan.best.schedule;
	char *text = emit_clean(&fx.plan, PPCC_FMT_DOT, 0, NULL);
	Agraph_t *g = parse_dot(text);
	long boxes = 0, labelled = 0;
	for (int r = 0; r < s->n_ranks; r++)
		for (int i = 0; i < s->ranks[r].n_actions; i++) {
			char name[32];
			snprintf(name, sizeof name, "r%da%d", r, i);
			Agnode_t *n = agnode(g, name, 0);
			if (!n)
				continue;
			boxes++;
			double x, y, w;
			node_box(n, &x, &y, &w);
			char mb[16];
			int len = snprintf(mb, sizeof mb, "%d",
					   (int)s->ranks[r].actions[i].mb);
			int fits = len * 0.6 * 10 + 3 <= w;
			const char *label = attr(n, "label");
			if (fits) {
				ck_assert_msg(label && strcmp(label, mb) == 0,
					      "%s, %g points wide: label '%s'",
					      name, w, label ? label : "");
				labelled++;
			} else {
				ck_assert_msg(!label || !*label, "%s: '%s' does "
					      "not fit %g points", name, label, w);
			}
		}
	ck_assert_int_gt(boxes, 20);
	ck_assert_int_lt(boxes, count_compute(s));
	ck_assert_int_ge(labelled, boxes / 2);
	ck_assert_ptr_nonnull(strstr(attr(g, "label"), "--window all"));
	agclose(g);
	free(text);
	fixture_free(&fx);
}
END_TEST

/* A window that lies outside the plan, or a microbatch it does not have,
 * is an error naming --window; on the command line a malformed window,
 * or one for an output that is not a timeline, is a usage error (exit
 * 2), one outside the plan a bad input (exit 1), and nothing is
 * written. */
START_TEST(timeline_refuses_a_bad_window)
{
	fixture fx;
	fixture_build(&fx, PPCC_SCHED_1F1B, 4, 8, 1);
	const ppcc_window bad[] = {
		{.kind = PPCC_WINDOW_SPAN, .start_ms = 1000, .end_ms = 2000},
		{.kind = PPCC_WINDOW_STEP, .step = 8},
		{.kind = PPCC_WINDOW_STEP, .step = -1},
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		output out;
		emit_window(&out, &fx.plan, PPCC_FMT_DOT, 0, NULL, bad[k]);
		ck_assert_int_eq(out.status, PPCC_EINPUT);
		ck_assert_msg(strstr(out.diag.text, "--window"), "%s",
			      out.diag.text);
		ck_assert_uint_eq(out.len, 0);
		free(out.text);
	}
	fixture_free(&fx);

	char *dir = tu_mkdtemp(), png[4096], model[4096];
	snprintf(png, sizeof png, "%s/t.png", dir);
	snprintf(model, sizeof model, "%s/examples/tiny.yaml", tu_src());
	static const char *const usage[][2] = {
		{"5:3", "png"}, {"abc", "png"}, {"-1:4", "png"},
		{"step x", "png"}, {"1:2", "json"}, {"1:2", "chrome"},
	};
	for (size_t k = 0; k < sizeof usage / sizeof usage[0]; k++) {
		tu_run r;
		TU_PPCC(&r, "plan", model, "-f", usage[k][1], "--window",
			usage[k][0], "-o", png);
		ck_assert_msg(r.status == 2, "--window %s -f %s: exit %d: %s",
			      usage[k][0], usage[k][1], r.status, r.err);
		ck_assert_ptr_nonnull(strstr(r.err, "--window"));
		ck_assert(!tu_exists(png));
		tu_run_free(&r);
	}
	tu_run r;
	TU_PPCC(&r, "plan", model, "-f", "png", "--window", "1e9:2e9", "-o", png);
	ck_assert_msg(r.status == 1, "exit %d: %s", r.status, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "--window"));
	tu_run_free(&r);
	TU_PPCC(&r, "plan", model, "-f", "png", "--window", "step", "1", "-o", png);
	ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert(tu_exists(png));
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

Suite *suite_dot(void)
{
	return tu_suite("dot", "dot", 300, (const TTest *const[]){
		timeline_places_each_compute_action_once_at_its_time,
		timeline_draws_each_collective_on_its_rank_lane,
		timeline_gives_each_op_its_own_colour,
		timeline_marks_chunks_by_shade_and_label,
		timeline_title_names_schedule_step_and_bubbles,
		timeline_axis_ticks_sit_at_their_times,
		deps_has_a_node_per_compute_and_an_edge_per_transfer,
		deps_renders_for_every_schedule_kind,
		deps_dot_text_is_what_agwrite_writes,
		deps_dot_work_is_linear_in_the_stages,
		deps_draws_each_reduction_after_its_backward,
		names_survive_the_dot_round_trip,
		names_show_verbatim_in_the_svg,
		long_names_are_cut_on_a_character_boundary,
		invalid_text_shows_as_replacement_characters,
		graphviz_commands_accept_and_draw_the_same,
		svg_and_png_are_complete_and_deterministic,
		output_is_the_same_in_a_german_locale,
		missing_graphviz_plugins_are_an_error_not_a_print,
		huge_plans_are_cut_with_a_warning,
		plan_without_times_is_simulated_for_the_timeline,
		failed_allocations_are_enomem_without_leaks,
		examples_draw_and_parse,
		lanes_hold_every_collective_the_text_counts,
		timeline_lanes_total_the_text_reports,
		timeline_window_keeps_only_actions_that_overlap_it,
		timeline_labels_boxes_wide_enough_and_windows_a_long_plan,
		timeline_refuses_a_bad_window,
		NULL});
}
