/*
 * json_write.c - the streaming JSON writer (see json_write.h).
 *
 * Reals: "%.Pg" of a value from 1e-4 up to 10^P is the value rounded to
 * P significant digits, printed without an exponent.  The rounding is
 * done here in long double, where x * 10^k (10^k exact, k <= 18) is within
 * a few units of 2^-LDBL_MANT_DIG of the exact product; when the digit
 * after the last kept one is too close to a tie for that to decide, and
 * for every value outside the range, snprintf formats it instead, so the
 * result is always snprintf's.  This is what makes a plan's JSON print at
 * several hundred MB/s rather than at the speed of snprintf.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/json_write.h"
#include "ppcc.h"

void ppcc_jw_init(ppcc_jw *w, FILE *f)
{
	w->f = f;
	w->err = 0;
	w->len = 0;
}

int ppcc_jw_flush(ppcc_jw *w)
{
	if (w->len && !w->err && fwrite(w->buf, 1, w->len, w->f) != w->len)
		w->err = PPCC_EIO;
	w->len = 0;
	return w->err;
}

void ppcc_jw_raw_slow(ppcc_jw *w, const char *s, size_t n)
{
	while (n > 0) {
		if (w->len == sizeof w->buf)
			ppcc_jw_flush(w);
		size_t k = sizeof w->buf - w->len;
		if (k > n)
			k = n;
		memcpy(w->buf + w->len, s, k);
		w->len += k;
		s += k;
		n -= k;
	}
}

/* The code point of the UTF-8 sequence at s (n bytes left) and its
 * length; a byte that starts no valid sequence is U+FFFD, one byte. */
static uint32_t utf8_decode(const unsigned char *s, size_t n, size_t *len)
{
	uint32_t cp, min;
	size_t k;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		k = 2, cp = s[0] & 0x1f, min = 0x80;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		k = 3, cp = s[0] & 0x0f, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		k = 4, cp = s[0] & 0x07, min = 0x10000;
	else
		goto bad;
	if (k > n)
		goto bad;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			goto bad;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		goto bad;
	*len = k;
	return cp;
bad:
	*len = 1;
	return 0xfffd;
}

static void put_u_escape(ppcc_jw *w, uint32_t u)
{
	static const char hex[] = "0123456789ABCDEF";
	char e[6] = {'\\', 'u', hex[u >> 12 & 15], hex[u >> 8 & 15],
		     hex[u >> 4 & 15], hex[u & 15]};
	ppcc_jw_raw_n(w, e, 6);
}

/* As jansson with JSON_ENSURE_ASCII: the two-character escapes, \u00XX
 * for the other control characters, and every code point past ASCII as
 * \uXXXX (a surrogate pair past U+FFFF). */
void ppcc_jw_string_n(ppcc_jw *w, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	ppcc_jw_raw_n(w, "\"", 1);
	size_t run = 0; /* bytes of s[run..i) that need no escape */
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		ppcc_jw_raw_n(w, s + run, i - run);
		char e[2] = {'\\', 0};
		size_t len = 1;
		switch (c) {
		case '"': e[1] = '"'; break;
		case '\\': e[1] = '\\'; break;
		case '\b': e[1] = 'b'; break;
		case '\f': e[1] = 'f'; break;
		case '\n': e[1] = 'n'; break;
		case '\r': e[1] = 'r'; break;
		case '\t': e[1] = 't'; break;
		default: {
			uint32_t cp = c < 0x80 ? c : utf8_decode(u + i, n - i, &len);
			if (cp < 0x10000) {
				put_u_escape(w, cp);
			} else {
				cp -= 0x10000;
				put_u_escape(w, 0xd800 | (cp >> 10));
				put_u_escape(w, 0xdc00 | (cp & 0x3ff));
			}
			i += len;
			run = i;
			continue;
		}
		}
		ppcc_jw_raw_n(w, e, 2);
		i += len;
		run = i;
	}
	ppcc_jw_raw_n(w, s + run, n - run);
	ppcc_jw_raw_n(w, "\"", 1);
}

/* The decimal digits of x, most significant first, into out; returns
 * how many. */
static size_t put_u64(char *out, uint64_t x)
{
	char tmp[24];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + x % 10);
		x /= 10;
	} while (x);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

void ppcc_jw_int(ppcc_jw *w, int64_t x)
{
	char *o = ppcc_jw_room(w, 24);
	size_t n = 0;
	uint64_t u = (uint64_t)x;
	if (x < 0) {
		o[n++] = '-';
		u = 0 - u;
	}
	n += put_u64(o + n, u);
	w->len += n;
}

/* snprintf's "%.*g" with jansson's changes: ".0" when there is neither a
 * point nor an exponent, and no '+' or leading zeros in the exponent. */
static size_t format_slow(char *out, double x, int precision)
{
	locale_t saved = ppcc_locale_enter();
	int n = snprintf(out, 32, "%.*g", precision, x);
	ppcc_locale_leave(saved);
	if (n < 0 || n >= 32)
		return 0;
	size_t len = (size_t)n;
	if (!strchr(out, '.') && !strchr(out, 'e')) {
		memcpy(out + len, ".0", 3);
		len += 2;
	}
	char *e = strchr(out, 'e');
	if (e) {
		char *start = e + 1, *end = e + 2;
		if (*start == '-')
			start++;
		while (*end == '0')
			end++;
		if (end != start) {
			memmove(start, end, len - (size_t)(end - out) + 1);
			len -= (size_t)(end - start);
		}
	}
	return len;
}

static const long double pow10l_table[] = {
	1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L, 1e7L, 1e8L, 1e9L, 1e10L,
	1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
};

static const uint64_t pow10_u64[] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
	10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
	100000000000ull, 1000000000000ull, 10000000000000ull,
	100000000000000ull, 1000000000000000ull, 10000000000000000ull,
};

/* 10^X as doubles, X from -4 to 19, for the first guess of the exponent
 * (the ones below 1 are not exact; the guess is checked) */
static const double pow10_guess[] = {
	1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
	1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
};

size_t ppcc_jw_format_real(char *out, double x, int precision)
{
	double ax = fabs(x);
	int P = precision;
	if (P < 1 || P > 15 || !(ax >= 1e-4) || !(ax < pow10_guess[P + 4]) ||
	    LDBL_MANT_DIG < 60)
		return format_slow(out, x, P);
	/* A few units of 2^-LDBL_MANT_DIG of the largest scaled value: how
	 * far from a tie the exact product may lie from the computed one.
	 * Where long double is no wider than double this would be too
	 * coarse to use, and every value takes the slow path above. */
	const long double margin = pow10l_table[P] * (LDBL_EPSILON * 8);

	/* X: the decimal exponent of ax, first a guess */
	int X = P - 1;
	while (X > -4 && ax < pow10_guess[X + 4])
		X--;
	uint64_t D;
	for (int tries = 0;; tries++) {
		int k = P - 1 - X; /* 0 <= k <= P + 3 <= 18 */
		if (tries > 2 || k < 0 || k > 18)
			return format_slow(out, x, P);
		long double scaled = (long double)ax * pow10l_table[k];
		/* nearest, ties aside: a tie is left to snprintf */
		long long near = llrintl(scaled);
		long double off = scaled - (long double)near;
		if (fabsl(fabsl(off) - 0.5L) < margin)
			return format_slow(out, x, P); /* too near a tie to tell */
		D = (uint64_t)near;
		if (D >= pow10_u64[P]) {
			/* rounds up to 10^P: one more digit before the point */
			if (D == pow10_u64[P]) {
				D = pow10_u64[P - 1];
				X++;
				break;
			}
			X++;
			continue;
		}
		if (D < pow10_u64[P - 1]) {
			X--;
			continue;
		}
		break;
	}
	if (X >= P || X < -4)
		return format_slow(out, x, P); /* exponent notation */

	char digits[24];
	size_t nd = put_u64(digits, D); /* == P */
	while (nd > 1 && digits[nd - 1] == '0' && (int)nd > X + 1)
		nd--; /* trailing zeros of the fraction */
	size_t n = 0;
	if (x < 0)
		out[n++] = '-';
	if (X >= 0) {
		size_t whole = (size_t)X + 1;
		if (nd <= whole) {
			memcpy(out + n, digits, nd);
			n += nd;
			for (size_t i = nd; i < whole; i++)
				out[n++] = '0';
			memcpy(out + n, ".0", 2); /* jansson's mark of a real */
			n += 2;
		} else {
			memcpy(out + n, digits, whole);
			n += whole;
			out[n++] = '.';
			memcpy(out + n, digits + whole, nd - whole);
			n += nd - whole;
		}
	} else {
		out[n++] = '0';
		out[n++] = '.';
		for (int i = 0; i < -X - 1; i++)
			out[n++] = '0';
		memcpy(out + n, digits, nd);
		n += nd;
	}
	out[n] = '\0';
	return n;
}

void ppcc_jw_real(ppcc_jw *w, double x, int precision)
{
	if (!isfinite(x)) {
		ppcc_jw_raw_n(w, "null", 4);
		return;
	}
	char *o = ppcc_jw_room(w, 40);
	w->len += ppcc_jw_format_real(o, x, precision);
}
