/* check_install: the installed libraries, as a trainer and a program on
 * the compiler see them (tests/install.sh, on `make install
 * DESTDIR=$PPCC_BUILD/stage`, which make check runs first). */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

Suite *suite_install(void);

START_TEST(trainer_links_the_runtime_alone_and_libraries_export_only_the_api)
{
	const char *build = getenv("PPCC_BUILD");
	ck_assert_msg(build != NULL, "PPCC_BUILD not set (run through make check)");
	char stage[PATH_MAX], script[PATH_MAX];
	snprintf(stage, sizeof stage, "%s/stage", build);
	snprintf(script, sizeof script, "%s/tests/install.sh", tu_src());
	ck_assert_msg(tu_exists(stage), "%s missing: make check installs there", stage);
	char *work = tu_mkdtemp();
	char *argv[] = {"sh", script, stage, (char *)build, (char *)tu_src(), work, NULL};
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 300, argv), 0);
	ck_assert_msg(r.status == 0, "install.sh (exit %d):\n%s%s", r.status, r.out, r.err);
	tu_run_free(&r);
	tu_rmtree(work);
	free(work);
}
END_TEST

Suite *suite_install(void)
{
	Suite *s = suite_create("install");
	TCase *tc = tcase_create("install");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, trainer_links_the_runtime_alone_and_libraries_export_only_the_api);
	suite_add_tcase(s, tc);
	return s;
}
