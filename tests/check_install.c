/* check_install: the installed libraries, as a trainer and a program on
 * the compiler see them (tests/install.sh, on `make install
 * DESTDIR=$PPCC_BUILD/stage`, which make check runs first). */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	tu_rmtree_free(work);
}
END_TEST

/* `make deps` as someone who is not root (make check runs it first):
 * nothing is installed and nothing under /etc edited; a missing package
 * the tests can do without is a message and exit 0, one the build needs
 * an error naming it.  As root (CI) the test runs make as nobody. */
static void deps_as_user(tu_run *r, const char *vars)
{
	char cmd[PATH_MAX + 512];
	snprintf(cmd, sizeof cmd, "%smake -s -C '%s' deps %s",
		 geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 "
				  "--clear-groups " : "", tu_src(), vars);
	ck_assert_int_eq(tu_run_argv(r, "/", NULL, NULL, 120,
				     (char *[]){"sh", "-c", cmd, NULL}), 0);
}

START_TEST(deps_as_a_user_installs_nothing_and_names_what_is_missing)
{
	tu_run r;
	deps_as_user(&r, "DEB_PACKAGES='check ppcc-no-such-package'");
	ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
	ck_assert_msg(strstr(r.out, "make deps: not root, not installing "
			     "ppcc-no-such-package (the tests that need them skip)"),
		      "%s%s", r.out, r.err);
	ck_assert_msg(!strstr(r.out, "make deps: installing") &&
		      !strstr(r.out, "generating"), "%s", r.out);
	tu_run_free(&r);
	deps_as_user(&r, "DEB_PACKAGES='check ppcc-no-such-package' "
			 "DEB_NEEDED='ppcc-no-such-package'");
	ck_assert_msg(r.status != 0, "exit 0: %s%s", r.out, r.err);
	ck_assert_msg(strstr(r.err, "make deps: the build and its tests need "
			     "ppcc-no-such-package: run make deps as root"),
		      "%s%s", r.out, r.err);
	tu_run_free(&r);
	/* everything there: silent, exit 0 */
	deps_as_user(&r, "DEB_PACKAGES='check'");
	ck_assert_msg(r.status == 0, "exit %d: %s%s", r.status, r.out, r.err);
	tu_run_free(&r);
}
END_TEST

Suite *suite_install(void)
{
	return tu_suite("install", "install", 300, (const TTest *const[]){
		trainer_links_the_runtime_alone_and_libraries_export_only_the_api,
		deps_as_a_user_installs_nothing_and_names_what_is_missing,
		NULL});
}
