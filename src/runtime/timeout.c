/*
 * timeout.c - the one timeout every wait of a rank is bounded by.
 *
 * The runtime promises that no wait lasts for ever, so the timeout must be
 * a finite number of seconds that every transport can add to its clock and
 * turn into its own deadline type (a double compared with the monotonic
 * clock for MPI and NCCL, a struct timespec for the local transport's
 * condition variables).  It comes from ppcc_rt_options.timeout_s, or, when
 * that is <= 0, from $PPCC_TIMEOUT, or else the default of 300 s:
 *
 *   - a non-finite timeout_s (NaN, an infinity) is a caller's error:
 *     ppcc_rt_init refuses it with PPCC_RT_EINPUT;
 *   - a $PPCC_TIMEOUT that is not one positive, finite decimal number of
 *     seconds ("2s", "abc", "0", "-1", "", "inf", "0x10", " 5") is an
 *     operator's mistake: the default is used, with a warning naming the
 *     variable, the value given and the value used;
 *   - anything above PPCC_RT_TIMEOUT_MAX (one day) is clamped to it, with
 *     a warning.
 *
 * Each warning is printed once per process and value: every local rank
 * resolves the same environment, and one line says it.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

#define RT_DEFAULT_TIMEOUT 300.0

/* FNV-1a of the last value warned about, per warning (0: none yet). */
static _Atomic uint64_t warned_env, warned_clamp;

static int rt_first_warning(_Atomic uint64_t *last, const char *source,
			    const void *value, size_t n)
{
	uint64_t h = ppcc_fnv1a(PPCC_FNV1A_BASIS, source, strlen(source));
	h = ppcc_fnv1a(h, value, n) | 1;
	return atomic_exchange(last, h) != h;
}

/* Whether s is a plain decimal: digits, an optional fraction, an optional
 * exponent; no sign, space, hexadecimal, "inf" or "nan" (which strtod
 * would take). */
static int rt_is_decimal(const char *s)
{
	size_t digits = 0;
	for (; *s >= '0' && *s <= '9'; s++)
		digits++;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			digits++;
	if (digits == 0)
		return 0;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == '\0';
}

/* $PPCC_TIMEOUT as seconds; 0 when unset, -1 when not a positive finite
 * decimal number.  Read in the C locale: "0.5" is half a second in any. */
static double rt_env_timeout(const char **out_text)
{
	const char *e = getenv("PPCC_TIMEOUT");
	*out_text = e;
	if (!e)
		return 0;
	if (!rt_is_decimal(e))
		return -1;
	locale_t saved = ppcc_locale_enter();
	double v = strtod(e, NULL);
	ppcc_locale_leave(saved);
	if (!isfinite(v) || !(v > 0))
		return -1;
	return v;
}

int ppcc_rt_timeout_resolve(double *out, ppcc_rt *rt)
{
	double t = rt->o.timeout_s;
	const char *source = "timeout_s";
	if (!isfinite(t)) {
		ppcc_rt_report(rt, "the timeout_s option is %s: a timeout must be "
			       "a finite number of seconds (at most %.0f)",
			       isnan(t) ? "not a number" : "infinite",
			       PPCC_RT_TIMEOUT_MAX);
		return PPCC_RT_EINPUT;
	}
	if (t <= 0) {
		const char *text;
		source = "PPCC_TIMEOUT";
		t = rt_env_timeout(&text);
		if (t < 0) {
			t = RT_DEFAULT_TIMEOUT;
			if (rt_first_warning(&warned_env, source, text, strlen(text)))
				ppcc_rt_report(rt, "warning: PPCC_TIMEOUT='%.64s' is "
					       "not a positive, finite number of "
					       "seconds; using %.0f s", text, t);
		} else if (t == 0) {
			t = RT_DEFAULT_TIMEOUT;
		}
	}
	if (t > PPCC_RT_TIMEOUT_MAX) {
		if (rt_first_warning(&warned_clamp, source, &t, sizeof t))
			ppcc_rt_report(rt, "warning: a %s of %.3g s is above the "
				       "maximum; using %.0f s", source, t,
				       PPCC_RT_TIMEOUT_MAX);
		t = PPCC_RT_TIMEOUT_MAX;
	}
	*out = t;
	return 0;
}

double ppcc_rt_timeout_of(double t)
{
	const char *text;
	if (!(t > 0))
		t = rt_env_timeout(&text);
	if (!(t > 0))
		t = RT_DEFAULT_TIMEOUT;
	return t < PPCC_RT_TIMEOUT_MAX ? t : PPCC_RT_TIMEOUT_MAX;
}
