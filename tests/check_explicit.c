/* Explicit partitions (pipeline.partition and --partition): planned as
 * given, compared with ppcc's own split, refused with located errors when
 * they are not a split; and ppcc check's stale fingerprint, reported with
 * every other finding and refreshed on request. */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* tiny.yaml's model and cluster with the pipeline lines given. */
static char *write_tiny(const char *dir, const char *pipeline)
{
	char *text = tu_read_src("examples/tiny.yaml");
	char *cut = strstr(text, "pipeline:");
	ck_assert_ptr_nonnull(cut);
	*cut = '\0';
	static char path[4096];
	snprintf(path, sizeof path, "%s/tiny.yaml", dir);
	char *all = malloc(strlen(text) + strlen(pipeline) + 1);
	ck_assert_ptr_nonnull(all);
	strcpy(all, text);
	strcat(all, pipeline);
	ck_assert_int_eq(tu_write_file(path, all), 0);
	free(all);
	free(text);
	return path;
}

/* The line of the file at which "pipeline:" starts, 1-based. */
static int pipeline_line(const char *path)
{
	char *s = tu_read_file(path, NULL);
	int line = 1;
	for (char *c = s; c < strstr(s, "pipeline:"); c++)
		line += *c == '\n';
	free(s);
	return line;
}

START_TEST(explicit_partition_in_yaml_is_planned_and_compared)
{
	char *dir = tu_mkdtemp();
	const char *path = write_tiny(dir, "pipeline:\n  stages: 4\n  microbatches: 8\n"
				      "  partition: [3, 3, 2, 2]\n");
	tu_run r;
	TU_PPCC(&r, "plan", (char *)path);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "partition (as given by pipeline.partition)"), "%s", r.out);
	/* the stages as given: 0-2, 3-5, 6-7, 8-9 */
	ck_assert_msg(strstr(r.out, "      0    0  0-2             3"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "      3    3  8-9             2"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "estimate                    given         ppcc      uniform"),
		      "%s", r.out);
	ck_assert_msg(strstr(r.out, "than ppcc's split"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "the uniform split"), "%s", r.out);
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(explicit_partition_on_command_line_sets_stages)
{
	char *dir = tu_mkdtemp();
	const char *path = write_tiny(dir, "pipeline:\n  microbatches: 8\n"
					   "  data_parallel: 1\n");
	tu_run r;
	/* three stages from the list's length, on three of the four devices
	 * (data_parallel 1 given: 4 is no multiple of 3) */
	TU_PPCC(&r, "plan", (char *)path, "--partition", "3,4,3");
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "partition (as given by --partition)"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "3 stages"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "      1    1  3-6             4"), "%s", r.out);
	tu_run_free(&r);
	/* the json carries the given split */
	TU_PPCC(&r, "plan", (char *)path, "--partition", "3,4,3", "-f", "json");
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "\"first_layer\": 3") || strstr(r.out, "\"first_layer\":3"),
		      "%.400s", r.out);
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(explicit_partition_errors_are_located)
{
	char *dir = tu_mkdtemp();
	char want[4200];
	tu_run r;
	/* wrong count and the sum at the key, an empty stage at its entry;
	 * not a list, not a count */
	static const struct {
		const char *partition; /* the pipeline's third line */
		int col;               /* of the error, on that line; 0: any place */
		const char *error;
	} cases[] = {
		{"  partition: [4, 3, 3]\n", 3, "error: partition: 3 entries, but the "
		 "pipeline has 4 stages: give one layer count per stage"},
		{"  partition: [4, 0, 3, 3]\n", 18, "error: pipeline.partition[1]: stage 1 "
		 "is empty; every stage needs at least one layer"},
		{"  partition: [4, 3, 3, 3]\n", 3, "error: partition: the layer counts add "
		 "up to 13, but the model has 10 layers"},
		{"  partition: 4\n", 0, "error: pipeline.partition: expected a list of layer "
		 "counts, one per stage, got '4'"},
		{"  partition: [4, 2.5, 2, 2]\n", 0, ":18: error: pipeline.partition[1]: "
		 "expected a layer count from 1 to 4096, got '2.5'"},
	};
	const char *path;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char pipeline[128];
		snprintf(pipeline, sizeof pipeline, "pipeline:\n  stages: 4\n%s",
			 cases[i].partition);
		path = write_tiny(dir, pipeline);
		TU_PPCC(&r, "plan", path);
		ck_assert_int_eq(r.status, 1);
		if (cases[i].col)
			snprintf(want, sizeof want, "ppcc: %s:%d:%d: %s", path,
				 pipeline_line(path) + 2, cases[i].col, cases[i].error);
		else
			snprintf(want, sizeof want, "%s", cases[i].error);
		ck_assert_msg(strstr(r.err, want), "%s", r.err);
		tu_run_free(&r);
	}
	/* the command line */
	path = write_tiny(dir, "pipeline:\n  stages: 4\n");
	TU_PPCC(&r, "plan", (char *)path, "--partition", "4,3,x,3");
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "ppcc: <command line>: error: --partition: entry 2 "
				    "('x') is not a layer count"), "%s", r.err);
	ck_assert_str_eq(r.out, "");
	tu_run_free(&r);
	TU_PPCC(&r, "plan", (char *)path, "--partition", "4,3,0,3");
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "--partition: stage 2 is empty"), "%s", r.err);
	tu_run_free(&r);
	TU_PPCC(&r, "plan", (char *)path, "--partition", "4,3,3");
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "ppcc: <command line>: error: partition: 3 entries, but "
				    "the pipeline has 4 stages"), "%s", r.err);
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

/* Two splits a ten-thousandth of a millisecond apart per microbatch:
 * their steps differ by far less than 0.05%, and the text says so rather
 * than "0.0% faster". */
START_TEST(explicit_partition_near_tie_reads_the_same)
{
	char *dir = tu_mkdtemp();
	char path[4096];
	tu_write_in(path, sizeof path, dir, "tie.yaml", "model:\n  name: tie\n  layers:\n"
		"    - {name: a, repeat: 2, fwd_ms: 2.0, params: 1.0e7, activation_bytes: 1.0e6, stash_bytes: 1.0e6}\n"
		"    - {name: t, fwd_ms: 0.0001, params: 1.0e7, activation_bytes: 1.0e6, stash_bytes: 1.0e6}\n"
		"    - {name: a, repeat: 2, fwd_ms: 2.0, params: 1.0e7, activation_bytes: 1.0e6, stash_bytes: 1.0e6}\n"
		"cluster:\n  devices: 2\n  devices_per_node: 2\n"
		"  device: {name: l4, tflops: 121, efficiency: 0.5, memory_gib: 24}\n"
		"  links:\n    intra_node: {bandwidth_gb_s: 32, latency_us: 10}\n"
		"pipeline:\n  stages: 2\n  microbatches: 4\n");
	tu_run r;
	TU_PPCC(&r, "plan", path, "--partition", "2,3");
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "  the given split differs from ppcc's split; the step "
				    "is the same (within 0.05%)\n"), "%s", r.out);
	ck_assert_msg(strstr(r.out, "  the given split is the uniform split\n"), "%s", r.out);
	ck_assert_msg(!strstr(r.out, "0.0%"), "%s", r.out);
	tu_run_free(&r);
	TU_PPCC(&r, "plan", path);
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "  ppcc's split differs from the uniform split; the step "
				    "is the same (within 0.05%)\n"), "%s", r.out);
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

/* Moves the line holding `what` to just after the line holding `after`. */
static void move_line(const char *path, const char *what, const char *after)
{
	char *s = tu_read_file(path, NULL);
	ck_assert_ptr_nonnull(s);
	char *w = strstr(s, what), *a = strstr(s, after);
	ck_assert(w && a && a < w);
	char *ws = w, *we = strchr(w, '\n') + 1;
	while (ws > s && ws[-1] != '\n')
		ws--;
	char *ae = strchr(a, '\n') + 1;
	FILE *f = fopen(path, "wb");
	fwrite(s, 1, (size_t)(ae - s), f);
	fwrite(ws, 1, (size_t)(we - ws), f);
	fwrite(ae, 1, (size_t)(ws - ae), f);
	fputs(we, f);
	fclose(f);
	free(s);
}

START_TEST(check_reports_stale_fingerprint_with_the_deadlock)
{
	char *dir = tu_mkdtemp();
	char out[4096];
	tu_plan_json(out, sizeof out, dir, "tiny.yaml");
	tu_run r;
	/* rank 0 waits for microbatch 0's gradient before sending its
	 * activation: every rank stops */
	move_line(out, "{\"op\":\"RECV_B\",\"stage\":0,\"mb\":0,",
		  "{\"op\":\"F\",\"stage\":0,\"mb\":0,");
	char *before = tu_read_file(out, NULL);
	TU_PPCC(&r, "check", out);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "error: fingerprint mismatch"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "error: dry run: deadlock; rank 0 waits at action 1 "
				    "(RECV_B stage 0 mb 0)"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "note: if the schedule was edited on purpose, fix the "
				    "problems above, then run 'ppcc check "
				    "--refresh-fingerprint"), "%s", r.err);
	tu_run_free(&r);
	/* refreshing refuses, and leaves the file as it was */
	TU_PPCC(&r, "check", "--refresh-fingerprint", out);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "fingerprint not refreshed: the schedule has 1 other "
				    "problem; fix it first"), "%s", r.err);
	ck_assert_msg(!strstr(r.err, "fingerprint mismatch"), "%s", r.err);
	tu_run_free(&r);
	char *after = tu_read_file(out, NULL);
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(check_refreshes_a_stale_fingerprint)
{
	char *dir = tu_mkdtemp();
	char out[4096];
	tu_plan_json(out, sizeof out, dir, "tiny.yaml");
	tu_run r;
	char *orig = tu_read_file(out, NULL);
	char *fp = strstr(orig, "\"fingerprint\": \"");
	ck_assert_ptr_nonnull(fp);
	char old[17];
	memcpy(old, fp + 16, 16);
	old[16] = '\0';
	tu_replace_in_file(out, old, "0123456789abcdef");
	TU_PPCC(&r, "check", out);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "note: if the schedule was edited on purpose, run 'ppcc "
				    "check --refresh-fingerprint"), "%s", r.err);
	tu_run_free(&r);
	TU_PPCC(&r, "check", "--refresh-fingerprint", out);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(r.err, "");
	char want[4200];
	snprintf(want, sizeof want, "%s: fingerprint refreshed to %s\n", out, old);
	ck_assert_str_eq(r.out, want);
	tu_run_free(&r);
	/* byte for byte the file ppcc wrote */
	char *now = tu_read_file(out, NULL);
	ck_assert_str_eq(now, orig);
	free(now);
	free(orig);
	TU_PPCC(&r, "check", out);
	ck_assert_int_eq(r.status, 0);
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

Suite *suite_explicit(void)
{
	return tu_suite("explicit", "core", 0, (const TTest *const[]){
		explicit_partition_in_yaml_is_planned_and_compared,
		explicit_partition_on_command_line_sets_stages,
		explicit_partition_errors_are_located,
		explicit_partition_near_tie_reads_the_same,
		check_reports_stale_fingerprint_with_the_deadlock,
		check_refreshes_a_stale_fingerprint,
		NULL});
}
