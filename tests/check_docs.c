/*
 * Docs that cannot drift: tests/docs.sh runs every transcript of
 * README.md, the documents of doc/ and the man pages (each "$ command"
 * and the output shown after it) and every listed ppcc command, and
 * compares; it also finds every make target the documents list in the
 * Makefile and every relative link and path of README.md and doc/ on
 * disk.  After an
 * intended change of ppcc's output, `tests/docs.sh show . build` prints
 * each transcript as it should read.  The man pages are also read by
 * groff with every warning on: a character troff cannot set (a stray
 * control character, say) or a malformed request is a defect of the page
 * even where man(1) renders around it.  schedules/ holds only what a
 * reader opens, under 5 MB, each file listed in SHA256SUMS (which make
 * schedules-check compares with what ppcc writes).
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

START_TEST(man_pages_format_without_a_troff_warning)
{
	static const char *const pages[] = {"man/ppcc.1", "man/ppcc.5",
					    "man/ppcc_runtime.3"};
	for (size_t i = 0; i < sizeof pages / sizeof *pages; i++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", tu_src(), pages[i]);
		tu_run r;
		ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60,
					     (char *[]){"groff", "-man", "-t",
							"-ww", "-z", path,
							NULL}), 0);
		ck_assert_msg(r.status == 0 && !r.err[0] && !r.out[0],
			      "%s: groff exit %d: %s%s", pages[i], r.status,
			      r.out, r.err);
		tu_run_free(&r);
	}
}
END_TEST

/* schedules/SHA256SUMS lists its outputs in C-locale order of paths;
 * every file kept beside it is listed with its hash, and the kept files
 * stay under 5 MB. */
START_TEST(schedules_tree_is_small_and_listed_in_its_manifest)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/schedules", tu_src());
	static const char script[] =
		"export LC_ALL=C; set -e\n"
		"sha256sum --quiet --strict --ignore-missing -c SHA256SUMS\n"
		"sed 's/^[0-9a-f]\\{64\\}  //' SHA256SUMS >\"$T/listed\"\n"
		"sort -c \"$T/listed\"\n"
		"find . -type f ! -name SHA256SUMS | sed 's|^\\./||' | sort |\n"
		"\tcomm -23 - \"$T/listed\" | sed 's/^/not listed: /'\n"
		"find . -type f ! -name SHA256SUMS -printf '%s\\n' |\n"
		"\tawk '{ n += $1 } END { printf \"bytes %d\\n\", n }'\n";
	char *tmp = tu_mkdtemp(), env_t[1100];
	snprintf(env_t, sizeof env_t, "T=%s", tmp);
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, dir, NULL, (char *[]){env_t, NULL}, 60,
				     (char *[]){"sh", "-c", (char *)script, NULL}),
			 0);
	long bytes = -1;
	ck_assert_msg(r.status == 0 && sscanf(r.out, "bytes %ld\n", &bytes) == 1,
		      "exit %d: %s%s", r.status, r.out, r.err);
	ck_assert_msg(bytes > 0 && bytes < 5L << 20, "schedules/ keeps %ld bytes",
		      bytes);
	tu_run_free(&r);
	tu_rmtree_free(tmp);
}
END_TEST

Suite *suite_docs(void)
{
	return tu_suite("docs", "docs", 300, (const TTest *const[]){
		readme_and_man_page_transcripts_match_what_ppcc_prints,
		man_pages_format_without_a_troff_warning,
		schedules_tree_is_small_and_listed_in_its_manifest,
		NULL});
}
