/* The one Check runner: every suite_<module>() of tests/check_*.c. */
#include <check.h>
#include <stdlib.h>

#include "testutil.h"

#define SUITE(name) Suite *name(void);
#include "suites.h"
#undef SUITE

int main(void)
{
	/* Open MPI's session directories under a directory of this run's
	 * own: two test runs at once (a make check beside another) raced to
	 * create /tmp/ompi.HOST.UID, and one mpirun failed with "File
	 * exists" in orte_session_dir. */
	char *ompi = NULL;
	if (!getenv("OMPI_MCA_orte_tmpdir_base")) {
		ompi = tu_mkdtemp();
		setenv("OMPI_MCA_orte_tmpdir_base", ompi, 1);
	}
	SRunner *sr = srunner_create(NULL);
#define SUITE(name) srunner_add_suite(sr, name());
#include "suites.h"
#undef SUITE
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (ompi)
		tu_rmtree_free(ompi);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
