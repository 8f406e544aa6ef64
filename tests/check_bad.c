/* Bad input as a user meets it: for each tests/bad/NAME.yaml, `ppcc plan
 * tests/bad/NAME.yaml -o OUT` run from the source tree must write exactly
 * NAME.err to stderr, exit with NAME.code, and create no OUT.  The
 * expected files are regenerated, as reviewed diffs, by
 * tests/bad/regen.sh. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* The case names (NAME of NAME.yaml), sorted; free with free_names. */
static char **case_names(int *out_n)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/tests/bad", tu_src());
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s", dir);
	char **names = NULL;
	int n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len <= 5 || strcmp(e->d_name + len - 5, ".yaml") != 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			names = realloc(names, (size_t)cap * sizeof *names);
			ck_assert_ptr_nonnull(names);
		}
		names[n++] = strndup(e->d_name, len - 5);
	}
	closedir(d);
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			char *t = names[j];
			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	*out_n = n;
	return names;
}

static void free_names(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static const char *ppcc_abs(void)
{
	static char path[PATH_MAX];
	if (!realpath(tu_ppcc(), path))
		snprintf(path, sizeof path, "%s", tu_ppcc());
	return path;
}

/* Runs ppcc plan on one case with env (may be NULL); out.json goes to
 * tmpdir. */
static void run_case(tu_run *r, const char *name, const char *tmpdir,
		     char *const env[])
{
	char yaml[PATH_MAX], out[PATH_MAX];
	snprintf(yaml, sizeof yaml, "tests/bad/%s.yaml", name);
	snprintf(out, sizeof out, "%s/out.json", tmpdir);
	char *argv[] = {(char *)ppcc_abs(), "plan", yaml, "-o", out, NULL};
	ck_assert_int_eq(tu_run_argv(r, tu_src(), NULL, env, 60, argv), 0);
}

static char *expected(const char *name, const char *ext)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/tests/bad/%s.%s", tu_src(), name, ext);
	return tu_read_file(path, NULL);
}

START_TEST(bad_inputs_match_expected_stderr_and_exit_code)
{
	int n;
	char **names = case_names(&n);
	char *tmpdir = tu_mkdtemp();
	char out[PATH_MAX];
	snprintf(out, sizeof out, "%s/out.json", tmpdir);
	char report[16384] = "";
	size_t len = 0;
	int failed = 0;

	ck_assert_int_ge(n, 40);
	for (int i = 0; i < n; i++) {
		char *want_err = expected(names[i], "err");
		char *want_code = expected(names[i], "code");
		tu_run r;
		run_case(&r, names[i], tmpdir, NULL);
		const char *why = NULL;
		if (!want_err || !want_code)
			why = "no .err or .code file (run tests/bad/regen.sh)";
		else if (r.status != atoi(want_code))
			why = "exit code differs";
		else if (strcmp(r.err, want_err) != 0)
			why = "stderr differs";
		else if (r.out_len != 0)
			why = "wrote to stdout";
		else if (tu_exists(out))
			why = "created the output file";
		if (why) {
			failed++;
			int k = snprintf(report + len, sizeof report - len,
					 "%s: %s (exit %d)\n--- got:\n%s--- want:\n%s",
					 names[i], why, r.status, r.err,
					 want_err ? want_err : "");
			if (k > 0 && len + (size_t)k < sizeof report)
				len += (size_t)k;
		}
		remove(out);
		tu_run_free(&r);
		free(want_err);
		free(want_code);
	}
	tu_rmtree_free(tmpdir);
	free_names(names, n);
	ck_assert_msg(failed == 0, "%d of %d cases failed:\n%s", failed, n,
		      report);
}
END_TEST

/* Each expected stderr is nothing but ppcc's diagnostics for the file it
 * names, and bad input exits 1. */
START_TEST(bad_expected_files_are_diagnostics_of_their_case)
{
	int n;
	char **names = case_names(&n);
	for (int i = 0; i < n; i++) {
		char *err = expected(names[i], "err");
		char *code = expected(names[i], "code");
		ck_assert_msg(err && code, "%s: missing .err or .code", names[i]);
		ck_assert_msg(strcmp(code, "1\n") == 0, "%s: exit %s", names[i],
			      code);
		ck_assert_msg(err[0] != '\0', "%s: empty .err", names[i]);
		char prefix[PATH_MAX];
		snprintf(prefix, sizeof prefix, "ppcc: tests/bad/%s.yaml:",
			 names[i]);
		for (char *line = err; *line;) {
			char *nl = strchr(line, '\n');
			ck_assert_msg(nl != NULL, "%s: unterminated line", names[i]);
			ck_assert_msg(strncmp(line, prefix, strlen(prefix)) == 0,
				      "%s: stray line: %.*s", names[i],
				      (int)(nl - line), line);
			ck_assert_msg(nl[-1] != '.', "%s: message ends in a period",
				      names[i]);
			line = nl + 1;
		}
		free(err);
		free(code);
	}
	free_names(names, n);
}
END_TEST

/* Under every allocation failure up to the point where the run
 * completes, ppcc either reports the same diagnostics or says it is out of
 * memory, and never crashes or writes output. */
START_TEST(bad_inputs_survive_allocation_failures)
{
	const char *names[] = {"many-errors", "dup-key-pipeline",
			       "deep-nesting", "stages-over-layers"};
	char *tmpdir = tu_mkdtemp();
	char out[PATH_MAX];
	snprintf(out, sizeof out, "%s/out.json", tmpdir);
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
		char *want = expected(names[k], "err");
		ck_assert_ptr_nonnull(want);
		int finished = 0;
		for (int fail = 1; fail < 500 && !finished; fail++) {
			char var[64];
			snprintf(var, sizeof var, "PPCC_FAIL_ALLOC=%d", fail);
			char *env[] = {var, NULL};
			tu_run r;
			run_case(&r, names[k], tmpdir, env);
			ck_assert_msg(r.status == 1 || r.status == 4,
				      "%s, allocation %d failing: exit %d: %s",
				      names[k], fail, r.status, r.err);
			if (r.status == 1) {
				ck_assert_str_eq(r.err, want);
				finished = 1;
			} else {
				ck_assert_ptr_nonnull(strstr(r.err, "out of memory"));
			}
			ck_assert_msg(!tu_exists(out), "%s: output written",
				      names[k]);
			tu_run_free(&r);
		}
		ck_assert_msg(finished, "%s never completed", names[k]);
		free(want);
	}
	tu_rmtree_free(tmpdir);
}
END_TEST

Suite *suite_bad(void)
{
	return tu_suite("bad", "bad", 600, (const TTest *const[]){
		bad_inputs_match_expected_stderr_and_exit_code,
		bad_expected_files_are_diagnostics_of_their_case,
		bad_inputs_survive_allocation_failures,
		NULL});
}
