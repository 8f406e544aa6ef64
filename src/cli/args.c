/*
 * args.c - numbers on the command line, read strictly: what a user types
 * for a count or a size is decimal digits, so a sign, a space, another
 * base, "inf" or "nan" is an error naming the option, never a value that
 * strtol or strtod happened to make of it.  Read in the C locale.
 */
#include <errno.h>
#include <stdlib.h>

#include "cli/cli.h"

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int ppcc_cli_count(const char *s, long long lo, long long hi, long long *out)
{
	long long v = 0;
	if (!s || !is_digit(*s))
		return -1;
	for (; *s; s++) {
		if (!is_digit(*s) || v > (hi - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (v < lo)
		return -1;
	*out = v;
	return 0;
}

int ppcc_cli_real(const char *s, double lo, double hi, double *out)
{
	const char *p = s;
	int digits = 0;
	if (!p)
		return -1;
	for (; is_digit(*p); p++)
		digits++;
	if (*p == '.')
		for (p++; is_digit(*p); p++)
			digits++;
	if (!digits)
		return -1;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!is_digit(*p))
			return -1;
		while (is_digit(*p))
			p++;
	}
	if (*p)
		return -1;
	locale_t saved = ppcc_locale_enter();
	errno = 0;
	double v = strtod(s, NULL);
	int e = errno;
	ppcc_locale_leave(saved);
	if (e || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}
