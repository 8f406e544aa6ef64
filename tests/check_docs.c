/*
 * Docs that cannot drift: tests/docs.sh runs every transcript of
 * README.md and the man pages (each "$ command" and the output shown
 * after it) and every listed ppcc command, and compares.  After an
 * intended change of ppcc's output, `tests/docs.sh show . build` prints
 * each transcript as it should read.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

Suite *suite_docs(void);

START_TEST(readme_and_man_page_transcripts_match_what_ppcc_prints)
{
	const char *build = getenv("PPCC_BUILD");
	char script[1024];
	snprintf(script, sizeof script, "%s/tests/docs.sh", tu_src());
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 300,
				     (char *[]){"sh", script, "check",
						(char *)tu_src(),
						(char *)(build ? build : "build"),
						NULL}), 0);
	ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
	tu_run_free(&r);
}
END_TEST

Suite *suite_docs(void)
{
	Suite *s = suite_create("docs");
	TCase *tc = tcase_create("docs");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, readme_and_man_page_transcripts_match_what_ppcc_prints);
	suite_add_tcase(s, tc);
	return s;
}
