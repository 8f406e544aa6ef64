/*
 * json_write.h - a streaming JSON writer for the emitters.
 *
 * Values go into a fixed buffer that is flushed to the FILE when full, so
 * a document of any size is written in constant memory.  The bytes are
 * those jansson's json_dumpf gives for the same values (compact; strings
 * escaped as jansson escapes them with JSON_ENSURE_ASCII, so every byte
 * past ASCII is a \uXXXX escape; reals as "%.Ng" with ".0" added to a
 * whole number and the exponent's '+' and leading zeros dropped), so the
 * output did not change when the emitters stopped building jansson
 * values.  Numbers are printed in the C locale whatever the caller's.
 *
 * The first failure sticks: PPCC_EIO when the FILE refuses bytes.
 * Nothing here allocates.
 */
#ifndef PPCC_JSON_WRITE_H
#define PPCC_JSON_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PPCC_JW_BUFFER 65536

typedef struct ppcc_jw {
	FILE *f;
	int err;      /* 0 or the first failure */
	size_t len;   /* bytes in buf */
	char buf[PPCC_JW_BUFFER];
} ppcc_jw;

void ppcc_jw_init(ppcc_jw *w, FILE *f);
/* Writes out what is buffered; returns w->err. */
int ppcc_jw_flush(ppcc_jw *w);

/* Makes room for n <= 64 bytes. */
static inline char *ppcc_jw_room(ppcc_jw *w, size_t n)
{
	if (w->len + n > sizeof w->buf)
		ppcc_jw_flush(w);
	return w->buf + w->len;
}

/* Bytes as they are (punctuation, known keys). */
void ppcc_jw_raw_slow(ppcc_jw *w, const char *s, size_t n);
static inline void ppcc_jw_raw_n(ppcc_jw *w, const char *s, size_t n)
{
	if (w->len + n <= sizeof w->buf) {
		memcpy(w->buf + w->len, s, n);
		w->len += n;
	} else {
		ppcc_jw_raw_slow(w, s, n);
	}
}
static inline void ppcc_jw_raw(ppcc_jw *w, const char *s)
{
	ppcc_jw_raw_n(w, s, strlen(s));
}

/* A JSON string of the n bytes at s, which should be UTF-8 (a byte that
 * is not is written as U+FFFD). */
void ppcc_jw_string_n(ppcc_jw *w, const char *s, size_t n);
static inline void ppcc_jw_string(ppcc_jw *w, const char *s)
{
	ppcc_jw_string_n(w, s, strlen(s));
}

void ppcc_jw_int(ppcc_jw *w, int64_t x);
/* A real as jansson writes it with JSON_REAL_PRECISION(precision), or
 * null when x is not finite. */
void ppcc_jw_real(ppcc_jw *w, double x, int precision);

/* The formatting of ppcc_jw_real into out (at least 32 bytes); returns
 * the length.  x must be finite.  Exposed for the tests. */
size_t ppcc_jw_format_real(char *out, double x, int precision);

#endif
