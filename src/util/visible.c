/*
 * visible.c - the characters a name may hold that a reader cannot see.
 *
 * A name is user text, and Unicode has characters that print nothing but
 * change how the text around them is shown: the bidirectional embeddings,
 * overrides and isolates (U+202A-U+202E, U+2066-U+2069) reorder what
 * follows them in a terminal, an SVG viewer or an editor
 * ("Trojan Source"), and zero-width and other format characters hide
 * inside a name that looks like another one.  Wherever ppcc prints a name
 * for a person (the text report, DOT and SVG labels, diagnostics), each
 * such character is written as <U+XXXX> instead; machine formats keep it
 * lossless (JSON as \uXXXX).
 */
#include "ppcc.h"

static int ppcc_is_invisible(uint32_t c)
{
	return c == 0x00AD ||                     /* soft hyphen */
	       c == 0x061C ||                     /* Arabic letter mark */
	       c == 0x180E ||                     /* Mongolian vowel sep. */
	       (c >= 0x200B && c <= 0x200F) ||    /* zero widths, LRM, RLM */
	       (c >= 0x2028 && c <= 0x202E) ||    /* LS, PS, embeddings */
	       (c >= 0x2060 && c <= 0x2064) ||    /* word joiner, invisibles */
	       (c >= 0x2066 && c <= 0x206F) ||    /* isolates, deprecated */
	       c == 0xFEFF ||                     /* zero-width no-break */
	       (c >= 0xFFF9 && c <= 0xFFFB) ||    /* interlinear annotation */
	       (c >= 0xE0000 && c <= 0xE007F);    /* tags */
}

size_t ppcc_invisible_at(const char *s, uint32_t *out_cp)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t c;
	size_t n;
	if (u[0] == 0xC2 || u[0] == 0xD8 || u[0] == 0xD9) {
		if ((u[1] & 0xC0) != 0x80)
			return 0;
		c = ((uint32_t)(u[0] & 0x1F) << 6) | (u[1] & 0x3F);
		n = 2;
	} else if (u[0] == 0xE1 || u[0] == 0xE2 || u[0] == 0xEF) {
		if ((u[1] & 0xC0) != 0x80 || (u[2] & 0xC0) != 0x80)
			return 0;
		c = ((uint32_t)(u[0] & 0x0F) << 12) |
		    ((uint32_t)(u[1] & 0x3F) << 6) | (u[2] & 0x3F);
		n = 3;
	} else if (u[0] == 0xF3) {
		if ((u[1] & 0xC0) != 0x80 || (u[2] & 0xC0) != 0x80 ||
		    (u[3] & 0xC0) != 0x80)
			return 0;
		c = ((uint32_t)(u[0] & 0x07) << 18) |
		    ((uint32_t)(u[1] & 0x3F) << 12) |
		    ((uint32_t)(u[2] & 0x3F) << 6) | (u[3] & 0x3F);
		n = 4;
	} else {
		return 0;
	}
	if (!ppcc_is_invisible(c))
		return 0;
	if (out_cp)
		*out_cp = c;
	return n;
}

void ppcc_fput_visible(FILE *f, const char *s)
{
	while (*s) {
		unsigned char c = (unsigned char)*s;
		uint32_t cp;
		size_t n = ppcc_invisible_at(s, &cp);
		if (n) {
			fprintf(f, "<U+%04X>", (unsigned)cp);
			s += n;
			continue;
		}
		if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
		s++;
	}
}

size_t ppcc_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t c, min;
	if (s[0] < 0x80) {
		if (cp)
			*cp = s[0];
		return 1;
	} else if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2, c = s[0] & 0x1f, min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3, c = s[0] & 0x0f, min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4, c = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	if (cp)
		*cp = c;
	return len;
}
