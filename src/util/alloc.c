/*
 * alloc.c - the allocator every part of ppcc goes through, and the arena.
 *
 * PPCC_FAIL_ALLOC=N (read once) makes the Nth allocation and every later
 * one fail, so tests can prove that each failure path exits cleanly and
 * leaks nothing.  The hook (and ppcc_alloc_fail_at) is compiled in only
 * with PPCC_ALLOC_HOOKS=1, as the build tree's archive that the tests and
 * the CLI link; the installed libraries are built without it.  The arena hands out zeroed, 16-byte aligned blocks from
 * chunks and frees them all at once; a request larger than a chunk gets a
 * chunk of its own.  A new chunk comes zeroed from calloc (whose fresh
 * pages from the system are zero already), so the first block cut from it
 * is not written twice.
 */
#define _DEFAULT_SOURCE /* madvise */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "ppcc.h"

static _Atomic long fail_at = -1; /* -1: not read yet; 0: never */
static _Atomic long alloc_count;
static _Atomic long alloc_live;
static _Atomic long alloc_failed;

#ifndef PPCC_ALLOC_HOOKS
#define PPCC_ALLOC_HOOKS 0
#endif

static int alloc_should_fail(void)
{
	if (!PPCC_ALLOC_HOOKS)
		return 0;
	if (fail_at < 0) {
		const char *e = getenv("PPCC_FAIL_ALLOC");
		long n = e ? strtol(e, NULL, 10) : 0;
		fail_at = n > 0 ? n : 0;
	}
	if (fail_at > 0 && ++alloc_count >= fail_at) {
		alloc_failed++;
		return 1;
	}
	return 0;
}

long ppcc_alloc_failures(void)
{
	return alloc_failed;
}

void ppcc_alloc_fail_at(long n)
{
	fail_at = n > 0 ? n : 0;
	alloc_count = 0;
}

long ppcc_alloc_count(void)
{
	return alloc_count;
}

long ppcc_alloc_live(void)
{
	return alloc_live;
}

/* A block of ALLOC_HUGE bytes or more is asked to live on transparent
 * huge pages (where the system gives them on request, its "madvise"
 * mode): the schedule's action lists and the simulator's message
 * tables are gigabytes read far apart, and on 4 KiB pages a tenth of a
 * large plan's time went to faulting them in and its walks to missing
 * the TLB.  Only whole 2 MiB pages inside the block are asked for; the
 * block's first touch still zeroes it, and a system without them
 * ignores the request. */
#define ALLOC_HUGE ((size_t)8 << 20)
#define ALLOC_HUGE_PAGE ((uintptr_t)2 << 20)

static void alloc_advise(void *p, size_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
	if (!p || size < ALLOC_HUGE)
		return;
	uintptr_t lo = ((uintptr_t)p + ALLOC_HUGE_PAGE - 1) & ~(ALLOC_HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)p + size) & ~(ALLOC_HUGE_PAGE - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
	(void)p;
	(void)size;
#endif
}

void *ppcc_malloc(size_t size)
{
	if (alloc_should_fail())
		return NULL;
	void *p = malloc(size ? size : 1);
	alloc_advise(p, size);
	if (p)
		alloc_live++;
	else
		alloc_failed++;
	return p;
}

void *ppcc_calloc(size_t n, size_t size)
{
	if (alloc_should_fail())
		return NULL;
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (n && size <= SIZE_MAX / n)
		alloc_advise(p, n * size);
	if (p)
		alloc_live++;
	else
		alloc_failed++;
	return p;
}

void *ppcc_realloc(void *p, size_t size)
{
	if (alloc_should_fail())
		return NULL;
	void *q = realloc(p, size ? size : 1);
	alloc_advise(q, size);
	if (q && !p)
		alloc_live++;
	else if (!q)
		alloc_failed++;
	return q;
}

void ppcc_free(void *p)
{
	if (p)
		alloc_live--;
	free(p);
}

/* ---- arena ---- */

#define ARENA_CHUNK (64 * 1024)

typedef struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char mem[];
} arena_chunk;

struct ppcc_arena {
	arena_chunk *head;
};

ppcc_arena *ppcc_arena_new(void)
{
	return ppcc_calloc(1, sizeof(ppcc_arena));
}

void ppcc_arena_free(ppcc_arena *a)
{
	if (!a)
		return;
	arena_chunk *c = a->head;
	while (c) {
		arena_chunk *next = c->next;
		ppcc_free(c);
		c = next;
	}
	ppcc_free(a);
}

void *ppcc_arena_alloc(ppcc_arena *a, size_t n, size_t size)
{
	if (size && n > (SIZE_MAX - 64) / size)
		return NULL;
	size_t bytes = (n * size + 15) & ~(size_t)15;
	if (bytes == 0)
		bytes = 16;
	arena_chunk *c = a->head;
	int fresh = 0; /* a new chunk, zero throughout */
	if (!c || c->cap - c->used < bytes) {
		size_t cap = bytes > ARENA_CHUNK / 2 ? bytes : ARENA_CHUNK;
		if (cap > SIZE_MAX - sizeof(arena_chunk))
			return NULL;
		arena_chunk *nc = ppcc_calloc(1, sizeof(arena_chunk) + cap);
		if (!nc)
			return NULL;
		nc->used = 0;
		nc->cap = cap;
		fresh = 1;
		if (cap == bytes && c) {
			/* a big block: keep filling the current chunk */
			nc->next = c->next;
			c->next = nc;
		} else {
			nc->next = c;
			a->head = nc;
		}
		c = nc;
	}
	void *p = c->mem + c->used;
	c->used += bytes;
	if (!fresh)
		memset(p, 0, bytes);
	return p;
}

void ppcc_arena_reset(ppcc_arena *a)
{
	if (!a || !a->head)
		return;
	arena_chunk *c = a->head->next;
	while (c) {
		arena_chunk *next = c->next;
		ppcc_free(c);
		c = next;
	}
	a->head->next = NULL;
	a->head->used = 0;
}

void ppcc_arena_adopt(ppcc_arena *a, ppcc_arena *from)
{
	if (!from || from == a)
		return;
	arena_chunk *last = from->head;
	if (last) {
		while (last->next)
			last = last->next;
		/* after a's head, which keeps filling */
		if (a->head) {
			last->next = a->head->next;
			a->head->next = from->head;
		} else {
			a->head = from->head;
		}
	}
	ppcc_free(from);
}

char *ppcc_arena_strndup(ppcc_arena *a, const char *s, size_t len)
{
	if (len == SIZE_MAX)
		return NULL;
	char *d = ppcc_arena_alloc(a, len + 1, 1);
	if (d) {
		memcpy(d, s, len);
		d[len] = '\0';
	}
	return d;
}

char *ppcc_arena_strdup(ppcc_arena *a, const char *s)
{
	return ppcc_arena_strndup(a, s, strlen(s));
}

char *ppcc_arena_printf(ppcc_arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *d = ppcc_arena_alloc(a, (size_t)n + 1, 1);
	if (!d)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(d, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return d;
}
