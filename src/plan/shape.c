/*
 * shape.c - the configuration search's cache of schedule shapes
 * (ppcc_plan_shapes), kept across the plans of one search.
 *
 * A shape is the order of the actions and the in-flight counts read off
 * it, which depend on (kind, p, v, m, group) alone, not on the layers,
 * t, cp, d or the costs, so a search that plans thousands of candidates
 * builds each shape once.  Entries live in the cache's own arena,
 * chained in SHAPE_BUCKETS lists; when their actions pass the byte
 * budget the whole cache is emptied (a later plan builds its shape
 * again: the same bytes).  A plan from the cache shares its action
 * lists, which the next plan with the same shape rewrites
 * (variant.c's schedule_set_stages sets every send's and receive's
 * bytes, and nothing before reads them).  The cache also holds bound.c's
 * memo of bound problems (PLAN_BOUND_BYTES), which bounds.c consults.
 * Not thread-safe: one search thread plans with it at a time.
 */
#include <stdint.h>
#include <string.h>

#include "plan/ctx.h"

/* Shapes kept across plans (ppcc_plan_shapes_new): a shape is the
 * order of the actions and the in-flight counts read off it, which
 * depend on (kind, p, v, m, group) alone, not on the layers, t, cp, d or
 * the costs, so a search that plans thousands of candidates builds each
 * shape once.  Entries live in the cache's own arena, chained in
 * SHAPE_BUCKETS lists; when their actions pass the byte budget the whole
 * cache is emptied (a later plan builds its shape again: the same
 * bytes). */
#define SHAPE_BUCKETS 1024

typedef struct shape_entry {
	struct shape_entry *next;
	int kind, p, v, m, group;
	ppcc_schedule shape;
	int64_t *stash_count;
} shape_entry;

struct ppcc_plan_shapes {
	ppcc_arena *a;
	size_t bytes, max_bytes;
	shape_entry *bucket[SHAPE_BUCKETS];
	ppcc_bound_memo *bounds; /* ppcc_plan_pipe_bound_ps's, across the plans */
};

/* The bytes of bound problems a ppcc_plan_shapes keeps. */
#define PLAN_BOUND_BYTES ((size_t)32 << 20)

ppcc_plan_shapes *ppcc_plan_shapes_new(size_t max_bytes)
{
	ppcc_plan_shapes *c = ppcc_calloc(1, sizeof *c);
	if (!c)
		return NULL;
	if (!(c->a = ppcc_arena_new()) ||
	    !(c->bounds = ppcc_bound_memo_new(PLAN_BOUND_BYTES))) {
		ppcc_plan_shapes_free(c);
		return NULL;
	}
	c->max_bytes = max_bytes;
	return c;
}

void ppcc_plan_shapes_free(ppcc_plan_shapes *c)
{
	if (!c)
		return;
	ppcc_arena_free(c->a);
	ppcc_bound_memo_free(c->bounds);
	ppcc_free(c);
}

static unsigned shape_hash(int kind, int p, int v, int m, int group)
{
	uint64_t h = (uint64_t)kind * 0x9e3779b97f4a7c15u;
	h = (h ^ (uint64_t)p) * 0xff51afd7ed558ccdu;
	h = (h ^ (uint64_t)v) * 0xc4ceb9fe1a85ec53u;
	h = (h ^ (uint64_t)m) * 0xff51afd7ed558ccdu;
	h = (h ^ (uint64_t)group) * 0xc4ceb9fe1a85ec53u;
	return (unsigned)(h >> 40) % SHAPE_BUCKETS;
}

static shape_entry *shape_find(ppcc_plan_shapes *c, const ppcc_plan_ctx *x)
{
	unsigned h = shape_hash(x->kind, x->p, x->v, x->m, x->group);
	for (shape_entry *e = c->bucket[h]; e; e = e->next)
		if (e->kind == x->kind && e->p == x->p && e->v == x->v &&
		    e->m == x->m && e->group == x->group)
			return e;
	return NULL;
}

/* The shape of x built in the cache's arena (the cache emptied first
 * when full), or NULL on a failed allocation. */
static int shape_add(ppcc_plan_shapes *c, ppcc_plan_ctx *x, shape_entry **out)
{
	ppcc_stage_info *blank;
	shape_entry *e;
	int err;
	if (c->bytes > c->max_bytes) {
		ppcc_arena_reset(c->a);
		memset(c->bucket, 0, sizeof c->bucket);
		c->bytes = 0;
	}
	if (!(e = ppcc_arena_alloc(c->a, 1, sizeof *e)) ||
	    !(blank = ppcc_arena_alloc(c->a, (size_t)x->S, sizeof *blank)))
		return PPCC_ENOMEM;
	for (int s = 0; s < x->S; s++)
		blank[s] = x->place[s];
	if ((err = ppcc_schedule_build_unsealed(&e->shape, c->a, x->kind, x->p,
						x->v, x->m, x->group, blank)) < 0)
		return err;
	ppcc_arena *mine = x->a;
	x->a = c->a;
	err = ppcc_plan_count_in_flight(x, &e->shape);
	x->a = mine;
	if (err < 0)
		return err;
	e->stash_count = x->stash_count;
	e->kind = x->kind;
	e->p = x->p;
	e->v = x->v;
	e->m = x->m;
	e->group = x->group;
	for (int r = 0; r < x->p; r++)
		c->bytes += (size_t)e->shape.ranks[r].n_actions * sizeof(ppcc_action);
	unsigned h = shape_hash(x->kind, x->p, x->v, x->m, x->group);
	e->next = c->bucket[h];
	c->bucket[h] = e;
	*out = e;
	return 0;
}

int ppcc_plan_shape_get(ppcc_schedule *shape, ppcc_plan_shapes *c,
			ppcc_plan_ctx *x)
{
	shape_entry *e = shape_find(c, x);
	int err;
	if (!e && (err = shape_add(c, x, &e)) < 0)
		return err;
	*shape = e->shape;
	x->stash_count = e->stash_count;
	return 0;
}

ppcc_bound_memo *ppcc_plan_shapes_bounds(ppcc_plan_shapes *c)
{
	return c->bounds;
}
