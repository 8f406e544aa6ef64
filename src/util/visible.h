/*
 * visible.h - names as a person sees them: invisible characters and escapes.
 * Part of the internal interface; src/ppcc.h includes every such header.
 */
#ifndef PPCC_UTIL_VISIBLE_H
#define PPCC_UTIL_VISIBLE_H

#include "util/util.h"

/* The bytes of the invisible or direction-changing character (a BiDi
 * control, a zero-width or other format character) that s starts with,
 * and its code point in *out_cp (may be NULL); 0 when s starts with none.
 * Text for people shows such a character as <U+XXXX> (visible.c). */
size_t ppcc_invisible_at(const char *s, uint32_t *out_cp);

/* The code point of the UTF-8 sequence at s (at most n bytes, n >= 1)
 * in *cp (may be NULL) and its length; 0 when there is none (an
 * overlong form, a surrogate, past U+10FFFF, cut short). */
size_t ppcc_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* s on f for a person, on one line: a control character as \xNN (no
 * name can forge a line or a terminal escape), an invisible or
 * direction-changing one as <U+XXXX>. */
void ppcc_fput_visible(FILE *f, const char *s);

#endif
