/*
 * Tests of the runtime's timeout (src/runtime/timeout.c): a non-finite
 * ppcc_rt_options.timeout_s is refused on every rank without a hang, an
 * absurd one is clamped to PPCC_RT_TIMEOUT_MAX (and the run still works:
 * before, the local transport's deadline overflowed time_t and every
 * rank failed at once), and a malformed $PPCC_TIMEOUT warns once, naming
 * the variable, the value given and the value used.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ppcc.h"
#include "ppcc/runtime.h"
#include "rt_pipe.h"
#include "testutil.h"

Suite *suite_rt_timeout(void);

/* run_with's diagnostics and its ranks' statuses. */
typedef struct line_log {
	rt_lines d;
	int status[4];
} line_log;

static int count_of(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* A four-rank 1F1B run of the numeric pipeline with timeout_s and
 * $PPCC_TIMEOUT (NULL: unset); returns its status, the diagnostics in
 * *log. */
static int run_with(double timeout_s, const char *env, line_log *log)
{
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(4, 4, 4, 0);
	ppcc_stage_info st[4];
	ppcc_schedule s;
	ppcc_rt_stage_fns fns[4];
	ppcc_rt_stats stats[4] = {PPCC_RT_STATS_INIT};
	char why[256];
	rt_pipe_stage_table(pp, st);
	ck_assert_int_eq(ppcc_schedule_build(&s, a, PPCC_SCHED_1F1B, 4, 1, 4, 0,
					     st), 0);
	rt_pipe_fns(pp, fns);
	rt_lines_init(&log->d, 0, 0);
	ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
	o.timeout_s = timeout_s;
	o.diag = rt_lines_add;
	o.diag_user = &log->d;
	if (env)
		setenv("PPCC_TIMEOUT", env, 1);
	else
		unsetenv("PPCC_TIMEOUT");
	int err = ppcc_rt_run_local(stats, &s, fns, &o);
	unsetenv("PPCC_TIMEOUT");
	for (int r = 0; r < 4; r++)
		log->status[r] = stats[r].status;
	if (err == 0)
		ck_assert_msg(rt_pipe_check(pp, &s, -1, why, sizeof why) == 0,
			      "%s", why);
	rt_pipe_free(pp);
	ppcc_arena_free(a);
	return err;
}

START_TEST(non_finite_timeout_option_is_refused_on_every_rank_at_once)
{
	const double bad[] = {NAN, INFINITY, -INFINITY};
	const char *const says[] = {"not a number", "infinite", "infinite"};
	for (int i = 0; i < 3; i++) {
		line_log log;
		int err = run_with(bad[i], NULL, &log);
		ck_assert_int_eq(err, PPCC_RT_EINPUT);
		/* each rank refuses it itself: none waits for the ones that
		 * refused (it would stop with ETIMEOUT after the 300 s
		 * default, or EPEER) */
		for (int r = 0; r < 4; r++)
			ck_assert_msg(log.status[r] == PPCC_RT_EINPUT, "rank %d: %s",
				      r, ppcc_rt_status_str(log.status[r]));
		ck_assert_msg(strstr(log.d.text, "the timeout_s option is ") &&
			      strstr(log.d.text, says[i]) &&
			      strstr(log.d.text, "at most 86400"), "%s", log.d.text);
	}
}
END_TEST

START_TEST(absurd_timeout_is_clamped_and_the_run_still_completes)
{
	/* before: a deadline of now + 1e300 cast to time_t, undefined, and
	 * every local rank timed out at once */
	line_log log;
	ck_assert_msg(run_with(1e300, NULL, &log) == 0, "%s", log.d.text);
	ck_assert_int_eq(count_of(log.d.text, "warning: a timeout_s of 1e+300 s "
				  "is above the maximum; using 86400 s"), 1);
	ck_assert_int_eq(log.d.total, 1);
	ck_assert_msg(run_with(0, "1e300", &log) == 0, "%s", log.d.text);
	ck_assert_int_eq(count_of(log.d.text, "warning: a PPCC_TIMEOUT of 1e+300 s "
				  "is above the maximum; using 86400 s"), 1);
	/* the maximum itself is taken as it is */
	ck_assert_msg(run_with(PPCC_RT_TIMEOUT_MAX, NULL, &log) == 0, "%s",
		      log.d.text);
	ck_assert_int_eq(log.d.len, 0);
}
END_TEST

START_TEST(malformed_timeout_environment_warns_once_with_the_value_used)
{
	const char *const bad[] = {"2s", "abc", "0", "-1", "", "inf", "nan",
				   " 5 x", "0x10", " 5", "5 ", "+5", "1e",
				   ".", "1e999"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		line_log log;
		char want[128];
		ck_assert_msg(run_with(0, bad[i], &log) == 0, "%s", log.d.text);
		snprintf(want, sizeof want, "warning: PPCC_TIMEOUT='%s' is not a "
			 "positive, finite number of seconds; using 300 s", bad[i]);
		/* four ranks resolve it; one line says so */
		ck_assert_msg(count_of(log.d.text, want) == 1 && log.d.total == 1,
			      "'%s': %s", bad[i], log.d.text);
	}
	/* a good value, or none, is silent */
	line_log log;
	const char *const good[] = {"12.5", "7", "0.5e1", ".5", "5."};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		ck_assert_int_eq(run_with(0, good[i], &log), 0);
		ck_assert_msg(log.d.len == 0, "'%s': %s", good[i], log.d.text);
	}
	ck_assert_int_eq(run_with(0, NULL, &log), 0);
	ck_assert_int_eq(log.d.len, 0);
}
END_TEST

Suite *suite_rt_timeout(void)
{
	return tu_suite("rt_timeout", "rt_timeout", 120, (const TTest *const[]){
		non_finite_timeout_option_is_refused_on_every_rank_at_once,
		absurd_timeout_is_clamped_and_the_run_still_completes,
		malformed_timeout_environment_warns_once_with_the_value_used,
		NULL});
}
