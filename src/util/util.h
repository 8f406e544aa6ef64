/*
 * util.h - status codes, the C locale, the diagnostics sink, allocation,
 * the arena, and the tests' probes: what every phase uses.
 * Part of the internal interface; src/ppcc.h includes every such header.
 */
#ifndef PPCC_UTIL_UTIL_H
#define PPCC_UTIL_UTIL_H

#include <locale.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ppcc/schedule.h"

/* Status codes; the CLI maps them to exit codes (see man/ppcc.1). */
typedef enum ppcc_status {
	PPCC_OK = 0,
	PPCC_ENOMEM = -1,      /* allocation failed */
	PPCC_EINPUT = -2,      /* bad input: diagnostics were reported */
	PPCC_EINFEASIBLE = -3, /* no plan satisfies the constraints */
	PPCC_EIO = -4,         /* cannot read or write a file */
	PPCC_EINTERNAL = -5    /* a bug: an invariant does not hold */
} ppcc_status;

const char *ppcc_status_str(int status);

/* Switch the calling thread to the C locale (returns what to restore) and
 * back: every emitter and the loader bracket their number formatting and
 * parsing with these. */
locale_t ppcc_locale_enter(void);
void ppcc_locale_leave(locale_t saved);

/* ---- diagnostics ---------------------------------------------------- */

/* Where a value came from: 1-based line and column.  line 0 means no
 * position (the whole file, or the command line when file says so). */
typedef struct ppcc_loc {
	const char *file;
	int line;
	int col;
} ppcc_loc;

typedef enum ppcc_severity {
	PPCC_SEV_ERROR,
	PPCC_SEV_WARNING,
	PPCC_SEV_NOTE
} ppcc_severity;

typedef void (*ppcc_diag_fn)(ppcc_severity sev, const ppcc_loc *loc,
			     const char *msg, void *user);

/* The sink.  fn may be NULL: messages are then only counted. */
typedef struct ppcc_diag {
	ppcc_diag_fn fn;
	void *user;
	int errors;
	int warnings;
} ppcc_diag;

#if defined(__GNUC__)
#define PPCC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PPCC_PRINTF(a, b)
#endif

/* loc may be NULL.  The message is lower case with no final period. */
void ppcc_diag_report(ppcc_diag *d, ppcc_severity sev, const ppcc_loc *loc,
		      const char *fmt, ...) PPCC_PRINTF(4, 5);
void ppcc_diag_vreport(ppcc_diag *d, ppcc_severity sev, const ppcc_loc *loc,
		       const char *fmt, va_list ap);
#define ppcc_error(d, loc, ...) ppcc_diag_report(d, PPCC_SEV_ERROR, loc, __VA_ARGS__)
#define ppcc_warning(d, loc, ...) ppcc_diag_report(d, PPCC_SEV_WARNING, loc, __VA_ARGS__)
#define ppcc_note(d, loc, ...) ppcc_diag_report(d, PPCC_SEV_NOTE, loc, __VA_ARGS__)

/* ---- memory --------------------------------------------------------- */

/* All allocation goes through ppcc_malloc/ppcc_calloc/ppcc_realloc so that
 * a test build can fail the Nth one (PPCC_FAIL_ALLOC=N, see alloc.c).
 * jansson's allocator is process-wide: the library leaves it alone, and a
 * program (the CLI, the tests) that wants it counted too calls
 * json_set_alloc_funcs(ppcc_malloc, ppcc_free) once. */
void *ppcc_malloc(size_t size);
void *ppcc_calloc(size_t n, size_t size);
void *ppcc_realloc(void *p, size_t size);
void ppcc_free(void *p);
/* Tests: fail the nth allocation from now on (0: never), count
 * allocations since, and blocks not yet freed. */
void ppcc_alloc_fail_at(long n);
long ppcc_alloc_count(void);
long ppcc_alloc_live(void);
/* Allocations that have failed so far (injected or real): a library that
 * reports out-of-memory as something else can be told apart by it. */
long ppcc_alloc_failures(void);

typedef struct ppcc_arena ppcc_arena;

ppcc_arena *ppcc_arena_new(void);
void ppcc_arena_free(ppcc_arena *a);
/* n * size zeroed bytes, 16-byte aligned; NULL on overflow or failure. */
void *ppcc_arena_alloc(ppcc_arena *a, size_t n, size_t size);
/* Forgets every allocation but keeps one chunk for the next ones. */
void ppcc_arena_reset(ppcc_arena *a);
/* Moves every allocation of from into a, to be freed with it, and frees
 * from (NULL or a itself: nothing). */
void ppcc_arena_adopt(ppcc_arena *a, ppcc_arena *from);
/* A NUL-terminated copy of len bytes of s (which may hold NULs). */
char *ppcc_arena_strndup(ppcc_arena *a, const char *s, size_t len);
char *ppcc_arena_strdup(ppcc_arena *a, const char *s);
char *ppcc_arena_printf(ppcc_arena *a, const char *fmt, ...) PPCC_PRINTF(2, 3);

/* ---- test probes ---------------------------------------------------- */

/* What a test passes in to send small inputs down the paths that large
 * ones take, and to count the paths taken: through ppcc_config.probe,
 * ppcc_step_problem.probe or the calls that take one; NULL wherever one
 * is taken means no probe (the defaults, nothing counted).  The
 * counters are atomic, so that concurrent calls may share a probe. */
typedef struct ppcc_probe {
	/* > 0: in place of PPCC_BUILD_TOUCH_BYTES (sched/kind.h) */
	size_t build_touch_bytes;
	/* > 0: in place of PPCC_STEP_AHEAD_ACTIONS (partition/partition.h) */
	long step_ahead_actions;
	/* 1: the validator runs its phases 2 and 3 on its table of
	 * positions alone, without the quick pass on bits that decides
	 * most schedules (validate.c, val_quick); the reports are the same */
	int validate_positions;
	_Atomic long lower_halves;     /* builds lowered on two threads */
	_Atomic long step_shape_halves; /* split searches that read the
					 * shape's halves on two threads */
	_Atomic long validate_quick_accepts; /* schedules the quick pass
					      * decided */
} ppcc_probe;

#endif
