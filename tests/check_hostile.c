/*
 * Hostile inputs and outputs met by the command line, each a reproduction
 * from a review: -o through a dangling symbolic link or a loop of links,
 * BiDi controls and invisible characters in names, a device's absurd
 * tflops, a reader that closes the pipe, and FIFOs for input and output.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "ppcc.h"
#include "testutil.h"

Suite *suite_hostile(void);

static void run_ppcc(tu_run *r, const char *dir, const char *const args[])
{
	tu_ppcc_run(r, dir, NULL, 60, args);
}

static const char *tiny(void)
{
	static char path[1024];
	snprintf(path, sizeof path, "%s/examples/tiny.yaml", tu_src());
	return path;
}

static int is_link_to(const char *path, const char *target)
{
	char buf[1024];
	ssize_t n = readlink(path, buf, sizeof buf - 1);
	if (n < 0)
		return 0;
	buf[n] = '\0';
	return strcmp(buf, target) == 0;
}

/* Before, realpath failed on a dangling link and the link itself was
 * replaced by a regular file. */
START_TEST(output_through_a_dangling_link_creates_its_target)
{
	char *dir = tu_mkdtemp(), p[1200];
	ck_assert_int_eq(mkdir(strcat(strcpy(p, dir), "/sub"), 0755), 0);
	snprintf(p, sizeof p, "%s/dangling", dir);
	ck_assert_int_eq(symlink("plan.txt", p), 0);
	/* a chain of relative links, the last one dangling */
	snprintf(p, sizeof p, "%s/chain", dir);
	ck_assert_int_eq(symlink("sub/hop", p), 0);
	snprintf(p, sizeof p, "%s/sub/hop", dir);
	ck_assert_int_eq(symlink("../chained.txt", p), 0);

	tu_run r;
	run_ppcc(&r, dir, (const char *[]){"plan", (char *)tiny(), "-o", "dangling", NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	snprintf(p, sizeof p, "%s/dangling", dir);
	ck_assert(is_link_to(p, "plan.txt"));
	snprintf(p, sizeof p, "%s/plan.txt", dir);
	size_t len;
	char *text = tu_read_file(p, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(strstr(text, "ppcc 0.1.0: tiny, 1f1b"));
	free(text);

	run_ppcc(&r, dir, (const char *[]){"plan", (char *)tiny(), "-o", "chain", NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	snprintf(p, sizeof p, "%s/chain", dir);
	ck_assert(is_link_to(p, "sub/hop"));
	snprintf(p, sizeof p, "%s/sub/hop", dir);
	ck_assert(is_link_to(p, "../chained.txt"));
	snprintf(p, sizeof p, "%s/chained.txt", dir);
	ck_assert(tu_exists(p));
	tu_rmtree_free(dir);
}
END_TEST

/* As the shell's >: a loop is ELOOP, a link into a missing directory
 * ENOENT; exit 3 and the links as they were. */
START_TEST(output_through_a_link_loop_or_into_nowhere_is_refused_as_the_shell_does)
{
	char *dir = tu_mkdtemp(), p[1200];
	snprintf(p, sizeof p, "%s/loop1", dir);
	ck_assert_int_eq(symlink("loop2", p), 0);
	snprintf(p, sizeof p, "%s/loop2", dir);
	ck_assert_int_eq(symlink("loop1", p), 0);
	snprintf(p, sizeof p, "%s/self", dir);
	ck_assert_int_eq(symlink("self", p), 0);
	snprintf(p, sizeof p, "%s/nowhere", dir);
	ck_assert_int_eq(symlink("no/such/dir/plan.txt", p), 0);
	const struct {
		const char *link, *target, *says;
	} cases[] = {
		{"loop1", "loop2", "ppcc: loop1: error: cannot write: Too many "
				   "levels of symbolic links"},
		{"self", "self", "ppcc: self: error: cannot write: Too many "
				 "levels of symbolic links"},
		{"nowhere", "no/such/dir/plan.txt",
		 "ppcc: nowhere: error: cannot write: No such file or directory"},
	};
	for (int i = 0; i < 3; i++) {
		tu_run r;
		run_ppcc(&r, dir, (const char *[]){"plan", (char *)tiny(), "-o",
					     (char *)cases[i].link, NULL});
		ck_assert_msg(r.status == 3 && strstr(r.err, cases[i].says),
			      "%s: %d %s", cases[i].link, r.status, r.err);
		tu_run_free(&r);
		snprintf(p, sizeof p, "%s/%s", dir, cases[i].link);
		ck_assert_msg(is_link_to(p, cases[i].target), "%s replaced",
			      cases[i].link);
	}
	tu_rmtree_free(dir);
}
END_TEST

/* U+202E (RLO), U+2066 (LRI), U+2067 (RLI), U+200B (ZWSP) in the model,
 * layer and device names. */
static const char bidi_yaml[] =
	"model:\n"
	"  name: \"m\\u202eabc\"\n"
	"  layers:\n"
	"    - {name: \"emb\\u202egnp.exe\", fwd_ms: 1, params: 1, "
	"activation_bytes: 1, stash_bytes: 1}\n"
	"    - {name: \"bl\\u2066k\\u200b\", repeat: 3, fwd_ms: 1, params: 1, "
	"activation_bytes: 1, stash_bytes: 1}\n"
	"cluster:\n"
	"  devices: 2\n"
	"  device: {name: \"d\\u2067x\", tflops: %s, efficiency: 1, memory_gib: 80}\n"
	"pipeline:\n"
	"  stages: 2\n"
	"  microbatches: 2\n";

static int has_raw_invisible(const char *s, size_t len)
{
	for (size_t i = 0; i + 3 <= len; i++)
		if (ppcc_invisible_at(s + i, NULL))
			return 1;
	return 0;
}

START_TEST(bidi_controls_in_names_are_shown_not_obeyed)
{
	char *dir = tu_mkdtemp(), path[1200], text[2048];
	snprintf(path, sizeof path, "%s/bidi.yaml", dir);
	snprintf(text, sizeof text, bidi_yaml, "100");
	ck_assert_int_eq(tu_write_file(path, text), 0);
	const char *formats[] = {"text", "dot", "svg", "torch-csv", "header"};
	for (int i = 0; i < 5; i++) {
		tu_run r;
		run_ppcc(&r, NULL, (const char *[]){"plan", path, "-f",
					      (char *)formats[i], NULL});
		ck_assert_msg(r.status == 0, "%s: %s", formats[i], r.err);
		ck_assert_msg(!has_raw_invisible(r.out, r.out_len),
			      "%s output holds a raw format character", formats[i]);
		if (i < 2)
			ck_assert_msg(strstr(r.out, "emb<U+202E>gnp.exe") &&
				      strstr(r.out, "bl<U+2066>k<U+200B>"),
				      "%s: %s", formats[i], r.out);
		if (i == 0)
			ck_assert(strstr(r.out, "m<U+202E>abc, 1f1b") &&
				  strstr(r.out, "(2 x d<U+2067>x)"));
		tu_run_free(&r);
	}
	/* JSON: valid, escaped, lossless */
	const char *machine[] = {"json", "chrome"};
	for (int i = 0; i < 2; i++) {
		tu_run r;
		run_ppcc(&r, NULL, (const char *[]){"plan", path, "-f",
					      (char *)machine[i], NULL});
		ck_assert_msg(r.status == 0, "%s", r.err);
		ck_assert(!has_raw_invisible(r.out, r.out_len));
		ck_assert_ptr_nonnull(strstr(r.out, "\"m\\u202Eabc\""));
		json_error_t je;
		json_t *v = json_loads(r.out, 0, &je);
		ck_assert_msg(v != NULL, "%s: %s", machine[i], je.text);
		if (i == 0) {
			ck_assert_str_eq(json_string_value(json_object_get(v, "model")),
					 "m\xe2\x80\xae" "abc");
			json_t *layers = json_object_get(v, "layers");
			ck_assert_str_eq(json_string_value(json_array_get(layers, 0)),
					 "emb\xe2\x80\xaegnp.exe");
			ck_assert_str_eq(json_string_value(json_array_get(layers, 1)),
					 "bl\xe2\x81\xa6k\xe2\x80\x8b");
		}
		json_decref(v);
		tu_run_free(&r);
	}
	/* ppcc check names its file, ppcc search the model, visibly */
	char sched[1300];
	snprintf(sched, sizeof sched, "%s/s\xe2\x80\xaenosj.json", dir);
	{
		tu_run r;
		run_ppcc(&r, NULL, (const char *[]){"plan", path, "-f", "json", "-o", sched,
					      NULL});
		ck_assert_msg(r.status == 0, "%s", r.err);
		tu_run_free(&r);
		run_ppcc(&r, NULL, (const char *[]){"check", sched, NULL});
		ck_assert_msg(r.status == 0, "%s", r.err);
		ck_assert_msg(!has_raw_invisible(r.out, r.out_len) &&
			      strstr(r.out, "/s<U+202E>nosj.json: valid 1f1b"), "%s", r.out);
		tu_run_free(&r);
		run_ppcc(&r, NULL, (const char *[]){"search", path, "--global-batch", "2",
					      "--top", "1", NULL});
		ck_assert_msg(r.status == 0, "%s", r.err);
		ck_assert_msg(!has_raw_invisible(r.out, r.out_len) &&
			      strstr(r.out, "search: m<U+202E>abc on 2 devices"), "%s", r.out);
		tu_run_free(&r);
	}
	/* diagnostics name the device visibly */
	snprintf(text, sizeof text, bidi_yaml, "1e308");
	ck_assert_int_eq(tu_write_file(path, text), 0);
	tu_run r;
	run_ppcc(&r, NULL, (const char *[]){"plan", path, NULL});
	ck_assert_int_eq(r.status, 1);
	ck_assert(!has_raw_invisible(r.err, r.err_len));
	ck_assert_msg(strstr(r.err, "device 'd<U+2067>x'"), "%s", r.err);
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

/* Before: "layer 'embed': compute time of -nan picoseconds". */
START_TEST(absurd_tflops_blames_the_device_at_its_line)
{
	char *src = tu_read_file(tiny(), NULL);
	ck_assert_ptr_nonnull(src);
	char *dir = tu_mkdtemp(), path[1200];
	snprintf(path, sizeof path, "%s/tf.yaml", dir);
	const char *values[] = {"1e308", "1e-300", "1.1e9", "9e-7"};
	const char *shown[] = {"1e+308", "1e-300", "1.1e+09", "9e-07"};
	for (int i = 0; i < 4; i++) {
		char *at = strstr(src, "tflops: 121");
		ck_assert_ptr_nonnull(at);
		char text[4096];
		snprintf(text, sizeof text, "%.*stflops: %s%s", (int)(at - src), src,
			 values[i], at + strlen("tflops: 121"));
		ck_assert_int_eq(tu_write_file(path, text), 0);
		tu_run r;
		run_ppcc(&r, NULL, (const char *[]){"plan", path, NULL});
		char want[256];
		snprintf(want, sizeof want, "tf.yaml:26:3: error: device 'l4': "
			 "tflops of %s is outside the range ppcc can plan (1e-06 "
			 "to 1e+09)", shown[i]);
		ck_assert_msg(r.status == 1 && strstr(r.err, want) &&
			      !strstr(r.err, "layer") && !strstr(r.err, "nan"),
			      "%s: %s", values[i], r.err);
		tu_run_free(&r);
	}
	/* the ends of the range plan */
	const char *ok[] = {"1e9", "1e-6"};
	for (int i = 0; i < 2; i++) {
		char *at = strstr(src, "tflops: 121");
		char text[4096];
		snprintf(text, sizeof text, "%.*stflops: %s%s", (int)(at - src), src,
			 ok[i], at + strlen("tflops: 121"));
		ck_assert_int_eq(tu_write_file(path, text), 0);
		tu_run r;
		run_ppcc(&r, NULL, (const char *[]){"plan", path, NULL});
		ck_assert_msg(r.status == 0, "%s: %s", ok[i], r.err);
		tu_run_free(&r);
	}
	free(src);
	tu_rmtree_free(dir);
}
END_TEST

/* stdout a pipe whose reader is gone before ppcc writes: exit 3 with a
 * diagnostic, not death by SIGPIPE (status 141 in the shell). */
/* args run with stdout a pipe whose reader has gone; its exit status
 * and what it wrote to stderr. */
static int closed_pipe_run(char *const args[], char **out_err)
{
	char *dir = tu_mkdtemp(), errpath[1200];
	snprintf(errpath, sizeof errpath, "%s/err", dir);
	int fds[2], go[2];
	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(pipe(go), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* SIGPIPE as a shell leaves it, whatever the runner does */
		signal(SIGPIPE, SIG_DFL);
		close(fds[0]);
		close(go[1]);
		/* wait until the parent has closed its read end too: only
		 * then is the reader gone before ppcc writes */
		char c;
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		close(go[0]);
		dup2(fds[1], 1);
		int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(e, 2);
		execv(tu_ppcc(), args);
		_exit(127);
	}
	close(go[0]);
	close(fds[0]);
	close(fds[1]);
	close(go[1]);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	*out_err = tu_read_file(errpath, NULL);
	if (!*out_err)
		*out_err = strdup("");
	tu_rmtree_free(dir);
	return st;
}

/* Every command that writes to stdout: a reader gone is "cannot write:
 * Broken pipe", exit 3, not a silent death by SIGPIPE (141) or a silent
 * exit 3. */
START_TEST(closed_pipe_on_stdout_gets_a_diagnostic)
{
	char hang[1200], json[1200], cmd[4096];
	char *dir = tu_mkdtemp();
	snprintf(hang, sizeof hang, "%s/examples/hang", tu_src());
	snprintf(json, sizeof json, "%s/t.json", dir);
	snprintf(cmd, sizeof cmd, "'%s' plan '%s' -f json -o '%s'", tu_ppcc(),
		 tiny(), json);
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60,
				     (char *[]){"sh", "-c", cmd, NULL}), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	char *cases[][8] = {
		{"ppcc", "plan", (char *)tiny(), "-f", "json", NULL},
		{"ppcc", "check", json, NULL},
		{"ppcc", "diagnose", hang, NULL},
		{"ppcc", "search", (char *)tiny(), "--global-batch", "8", "--top", "1",
		 NULL},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		char *err;
		int st = closed_pipe_run(cases[k], &err);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 3,
			      "ppcc %s: status %#x: %s", cases[k][1], st, err);
		ck_assert_msg(strstr(err, "ppcc: <stdout>: error: cannot write: "
				     "Broken pipe"), "ppcc %s: %s", cases[k][1], err);
		free(err);
	}
	tu_rmtree_free(dir);
}
END_TEST

/* FIFOs block as with the shell: the input is read as it comes, the
 * output written in place once a reader opens it. */
START_TEST(fifos_as_input_and_output_work_as_with_the_shell)
{
	char *dir = tu_mkdtemp(), in[1200], out[1200], got[1200], cmd[8192];
	snprintf(in, sizeof in, "%s/in.fifo", dir);
	snprintf(out, sizeof out, "%s/out.fifo", dir);
	snprintf(got, sizeof got, "%s/got.txt", dir);
	ck_assert_int_eq(mkfifo(in, 0644), 0);
	ck_assert_int_eq(mkfifo(out, 0644), 0);
	snprintf(cmd, sizeof cmd, "cat '%s' > '%s' & cat '%s' > '%s' & "
		 "'%s' plan '%s' -o '%s'; rc=$?; wait; exit $rc", tiny(), in, out,
		 got, tu_ppcc(), in, out);
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60,
				     (char *[]){"sh", "-c", cmd, NULL}), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	struct stat st;
	ck_assert_int_eq(stat(out, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode)); /* written in place, not replaced */
	char *text = tu_read_file(got, NULL);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(strstr(text, "ppcc 0.1.0: tiny, 1f1b, 4 stages") &&
		      strstr(text, "rank 3"), "%s", text);
	free(text);
	tu_rmtree_free(dir);
}
END_TEST

/* The SVG names no Graphviz version (its generator comment is dropped),
 * so golden files and users' diffs do not change with Graphviz. */
START_TEST(svg_output_does_not_embed_the_graphviz_version)
{
	tu_run r;
	run_ppcc(&r, NULL, (const char *[]){"plan", (char *)tiny(), "-f", "svg", NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strncmp(r.out, "<?xml version=\"1.0\"", 19) == 0, "%.80s",
		      r.out);
	ck_assert_ptr_null(strstr(r.out, "Generated by graphviz"));
	ck_assert_ptr_null(strstr(r.out, "graphviz version"));
	ck_assert_ptr_nonnull(strstr(r.out, "<!-- Title: ppcc_timeline Pages: 1 -->"));
	ck_assert_ptr_nonnull(strstr(r.out, "</svg>"));
	tu_run_free(&r);
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "grep -rl 'graphviz version' '%s/schedules'",
		 tu_src());
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60,
				     (char *[]){"sh", "-c", cmd, NULL}), 0);
	ck_assert_msg(r.status == 1 && r.out_len == 0, "golden files with a "
		      "version: %s", r.out);
	tu_run_free(&r);
}
END_TEST

/* No -o overwrites what the command reads: search's model, cluster and
 * compare files, plan --from-search's model file (named in the JSON),
 * diagnose's flight records; each a usage error (exit 2), the file as it
 * was. */
START_TEST(no_output_overwrites_an_input)
{
	char *dir = tu_mkdtemp(), model[1200], cmp[1200], json[1200],
	     flight[1200];
	size_t len;
	char *text = tu_read_file(tiny(), &len);
	ck_assert_ptr_nonnull(text);
	tu_write_in(model, sizeof model, dir, "tiny.yaml", text);
	tu_write_in(cmp, sizeof cmp, dir, "cmp.yaml",
		    "compare:\n  - pipeline: {stages: 2}\n");
	tu_run r;
	const char *const *cases[] = {
		(const char *[]){"search", model, "-o", model, NULL},
		(const char *[]){"search", model, "--compare", cmp, "-o", cmp,
				 NULL},
		(const char *[]){"search", model, "--cluster", model, "-o",
				 model, NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		run_ppcc(&r, dir, cases[i]);
		ck_assert_msg(r.status == 2 && strstr(r.err, "is an input file"),
			      "%zu: exit %d %s", i, r.status, r.err);
		tu_run_free(&r);
	}
	size_t now;
	char *after = tu_read_file(model, &now);
	ck_assert(now == len && memcmp(after, text, len) == 0);
	free(after);
	snprintf(json, sizeof json, "%s/s.json", dir);
	run_ppcc(&r, dir, (const char *[]){"search", model, "-f", "json", "-o",
					   json, NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	run_ppcc(&r, dir, (const char *[]){"plan", "--from-search", json, "-o",
					   model, NULL});
	ck_assert_msg(r.status == 2 && strstr(r.err, "is an input file"),
		      "exit %d %s", r.status, r.err);
	tu_run_free(&r);
	after = tu_read_file(model, &now);
	ck_assert(now == len && memcmp(after, text, len) == 0);
	free(after);
	free(text);
	tu_write_in(flight, sizeof flight, dir, "rank-00000.flight", "x\n");
	run_ppcc(&r, dir, (const char *[]){"diagnose", dir, "-o", flight, NULL});
	ck_assert_msg(r.status == 2 && strstr(r.err, "is an input file"),
		      "exit %d %s", r.status, r.err);
	tu_run_free(&r);
	text = tu_read_file(flight, &len);
	ck_assert(len == 2 && memcmp(text, "x\n", 2) == 0);
	free(text);
	tu_rmtree_free(dir);
}
END_TEST

/* What ppcc does not plan or cannot hold is an input error (exit 1) at
 * its line, never exit 4's internal error: auto with a layer's time out
 * of range, a compared DualPipe, an imbalance no routing reaches; and
 * --fix of what a model given as layers keeps is refused. */
START_TEST(refusals_are_input_errors_not_internal_ones)
{
	char *dir = tu_mkdtemp(), p[1200], c[1200];
	tu_write_in(p, sizeof p, dir, "ie.yaml",
		    "model:\n  name: m\n  layers:\n"
		    "    - {name: l0, fwd_ms: 1e9}\n    - {name: l1, fwd_ms: 1}\n"
		    "cluster:\n  devices: 2\n  device: h100\n"
		    "pipeline: {schedule: auto}\n");
	tu_run r;
	run_ppcc(&r, dir, (const char *[]){"plan", p, NULL});
	ck_assert_msg(r.status == 1 && strstr(r.err, "ie.yaml:4:7: error: "
		      "layer 'l0': compute time of 3e+18 picoseconds is out "
		      "of the range ppcc can plan"), "exit %d %s", r.status, r.err);
	tu_run_free(&r);
	tu_write_in(c, sizeof c, dir, "cmp.yaml", "compare:\n  - pipeline: "
		    "{stages: 2, schedule: dualpipe, microbatches: 4, "
		    "data_parallel: 2}\n");
	run_ppcc(&r, dir, (const char *[]){"search", (char *)tiny(),
					   "--compare", c, NULL});
	ck_assert_msg(r.status == 1 && strstr(r.err, "cmp.yaml:2:27: error: "
		      "ppcc cannot plan the dualpipe schedule yet"),
		      "exit %d %s", r.status, r.err);
	tu_run_free(&r);
	tu_write_in(p, sizeof p, dir, "imb.yaml",
		    "model:\n  name: m\n  transformer: {preset: mixtral-8x7b, "
		    "moe: {imbalance: 1e10}}\ncluster:\n  devices: 8\n"
		    "  device: h100\n");
	run_ppcc(&r, dir, (const char *[]){"plan", p, NULL});
	ck_assert_msg(r.status == 1 && strstr(r.err, "moe.imbalance: expected "
		      "a number from 1 to 4 (experts / top_k: every token on "
		      "the busiest rank), got '1e10'"), "exit %d %s", r.status,
		      r.err);
	tu_run_free(&r);
	static const char *const fixes[][2] = {
		{"micro_batch_size=2", "--fix micro_batch_size=2: a model given "
		 "as layers keeps its micro-batch size 1"},
		{"recompute=full", "--fix recompute=full: a model given as "
		 "layers has no recompute to choose"},
	};
	for (int i = 0; i < 2; i++) {
		run_ppcc(&r, dir, (const char *[]){"search", (char *)tiny(),
						   "--fix", fixes[i][0], NULL});
		ck_assert_msg(r.status == 1 && strstr(r.err, fixes[i][1]),
			      "exit %d %s", r.status, r.err);
		tu_run_free(&r);
	}
	tu_rmtree_free(dir);
}
END_TEST

Suite *suite_hostile(void)
{
	return tu_suite("hostile", "hostile", 120, (const TTest *const[]){
		output_through_a_dangling_link_creates_its_target,
		output_through_a_link_loop_or_into_nowhere_is_refused_as_the_shell_does,
		bidi_controls_in_names_are_shown_not_obeyed,
		absurd_tflops_blames_the_device_at_its_line,
		closed_pipe_on_stdout_gets_a_diagnostic,
		fifos_as_input_and_output_work_as_with_the_shell,
		svg_output_does_not_embed_the_graphviz_version,
		no_output_overwrites_an_input,
		refusals_are_input_errors_not_internal_ones,
		NULL});
}
