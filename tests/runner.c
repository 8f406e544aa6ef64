/* The one Check runner: every suite_<module>() of tests/check_*.c. */
#include <check.h>
#include <stdlib.h>

#define SUITE(name) Suite *name(void);
#include "suites.h"
#undef SUITE

int main(void)
{
	SRunner *sr = srunner_create(NULL);
#define SUITE(name) srunner_add_suite(sr, name());
#include "suites.h"
#undef SUITE
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
