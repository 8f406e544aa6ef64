/* The ppcc binary as a user meets it: exit codes, output files that
 * appear whole or not at all, stdin and stdout, ppcc check, and the man
 * page's examples. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "testutil.h"

static char *example(const char *name)
{
	static char buf[4][4096];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/examples/%s", tu_src(), name);
	return buf[k];
}

START_TEST(cli_help_and_version_exit_zero)
{
	tu_run r;
	TU_PPCC(&r, "--help");
	ck_assert_int_eq(r.status, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "usage: ppcc plan FILE"));
	ck_assert_str_eq(r.err, "");
	tu_run_free(&r);
	TU_PPCC(&r, "-V");
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "ppcc " PPCC_VERSION_STRING "\n");
	tu_run_free(&r);
}
END_TEST

/* Every long option of the command line's tables (src/cli/main.c,
 * src/cli/search.c and src/cli/catalogue.c, read as text) is named in
 * --help. */
START_TEST(cli_help_names_every_option)
{
	tu_run r;
	TU_PPCC(&r, "--help");
	ck_assert_int_eq(r.status, 0);
	const char *files[] = {"src/cli/main.c", "src/cli/search.c",
			       "src/cli/catalogue.c"};
	int seen = 0;
	for (int k = 0; k < 3; k++) {
		char *text = tu_read_src(files[k]);
		ck_assert_ptr_nonnull(text);
		for (char *p = text; (p = strstr(p, "{\"")); p++) {
			char name[64], word[72];
			if (sscanf(p, "{\"%63[a-z-]\", %*[a-z]_argument", name) != 1 ||
			    !strstr(p, "_argument") ||
			    strstr(p, "_argument") - p > 80)
				continue;
			snprintf(word, sizeof word, "--%s", name);
			const char *at = r.out;
			int named = 0;
			while ((at = strstr(at, word))) {
				char c = at[strlen(word)];
				if (!(c == '-' || (c >= 'a' && c <= 'z')))
					named = 1;
				at++;
			}
			ck_assert_msg(named, "--help does not name %s (%s)", word,
				      files[k]);
			seen++;
		}
		free(text);
	}
	/* plan's and search's tables: far more than a handful */
	ck_assert_int_gt(seen, 30);
	tu_run_free(&r);
}
END_TEST

/* name (as "--name" or "-c") is named in usage as a whole word: not
 * followed by a letter, a digit or '-'. */
static int usage_names(const char *usage, const char *name)
{
	size_t n = strlen(name);
	for (const char *at = usage; (at = strstr(at, name)); at++) {
		char before = at == usage ? ' ' : at[-1];
		char after = at[n];
		if ((before == ' ' || before == '[' || before == '|' ||
		     before == '\n') &&
		    !(after == '-' || (after >= 'a' && after <= 'z') ||
		      (after >= 'A' && after <= 'Z') ||
		      (after >= '0' && after <= '9')))
			return 1;
	}
	return 0;
}

/* Each command's own usage (COMMAND --help) names every option its
 * parser's table (struct option, read from the source) accepts, by
 * its long name and its letter when it has one: plan and check's in
 * src/cli/main.c, search's, diagnose's, and the catalogues' (models,
 * devices). */
START_TEST(cli_each_commands_help_names_its_options)
{
	static const struct {
		const char *file;
		const char *args[3];
	} cmds[] = {
		{"src/cli/main.c", {"--help"}},
		{"src/cli/main.c", {"plan", "--help"}},
		{"src/cli/search.c", {"search", "--help"}},
		{"src/cli/diagnose.c", {"diagnose", "--help"}},
		{"src/cli/catalogue.c", {"models", "--help"}},
		{"src/cli/catalogue.c", {"devices", "--help"}},
	};
	for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
		tu_run r;
		const char *const *a = cmds[k].args;
		if (a[1])
			TU_PPCC(&r, a[0], a[1]);
		else
			TU_PPCC(&r, a[0]);
		ck_assert_int_eq(r.status, 0);
		ck_assert_str_eq(r.err, "");
		char *text = tu_read_src(cmds[k].file);
		ck_assert_ptr_nonnull(text);
		int seen = 0;
		for (char *p = text; (p = strstr(p, "{\"")); p++) {
			char name[64], word[72], letter = 0;
			if (sscanf(p, "{\"%63[a-z-]\", %*[a-z]_argument, NULL, "
				   "'%c'", name, &letter) < 1 ||
			    !strstr(p, "_argument") ||
			    strstr(p, "_argument") - p > 80)
				continue;
			snprintf(word, sizeof word, "--%s", name);
			ck_assert_msg(usage_names(r.out, word),
				      "ppcc %s %s does not name %s (%s):\n%s",
				      a[0], a[1] ? a[1] : "", word,
				      cmds[k].file, r.out);
			if (letter) {
				snprintf(word, sizeof word, "-%c", letter);
				ck_assert_msg(usage_names(r.out, word),
					      "ppcc %s %s does not name %s "
					      "(--%s, %s):\n%s", a[0],
					      a[1] ? a[1] : "", word, name,
					      cmds[k].file, r.out);
			}
			seen++;
		}
		ck_assert_int_ge(seen, 2);
		free(text);
		tu_run_free(&r);
	}
}
END_TEST

/* The model's summary comes first: after ppcc plan's header line and
 * ppcc search's, once (the winner's plan below does not repeat it).
 * Llama 3.1 8B's figures by hand (Narayanan et al., SC'21, the forward
 * 2 x weights a token, causal scores under flash attention): h 4096, q
 * 4096, kv 1024, FFN 14336 (SwiGLU: 3 matrices), 32 layers, vocab 128256,
 * s 8192.  A layer's projections 2(2h q + 2h kv) = 83886080, scores
 * 2 (s/2)(q + q) = 67108864, FFN 2 x 3 h f = 352321536; the output layer
 * 2 V h = 1050673152: 17156800512 forward, 51.5 GFLOP forward and
 * backward; full recomputation repeats the blocks' forward, 16.1 more
 * (16106127360 a token); Mixtral 8x7B's routed experts
 * 32 x 8 x 3 x 4096 x 14336 = 45.10B. */
START_TEST(cli_model_summary_comes_first)
{
	tu_run r;
	TU_PPCC(&r, "plan", example("llama3-8b.yaml"));
	ck_assert_int_eq(r.status, 0);
	/* after the header and the device's two lines, before the
	 * partition */
	const char *line4 = r.out;
	for (int i = 0; i < 3 && line4; i++)
		line4 = strchr(line4 + 1, '\n');
	ck_assert_ptr_nonnull(line4);
	ck_assert_msg(strncmp(line4, "\nmodel: 8.03B parameters; its 16 "
			      "pipeline ranks hold ", 46) == 0, "%.300s", r.out);
	ck_assert_ptr_nonnull(strstr(r.out, "\n  FLOPs a token: 51.5 GFLOP "
				     "forward and backward with attention's "
				     "scores (8192 tokens, causal), 6 x "
				     "parameters 48.2 GFLOP; recompute: none\n"
				     "  forward: attention 28.2% (projections "
				     "15.6%, scores 12.5%), MLP 65.7%, output "
				     "layer 6.1%\n  attention: cuDNN's fused "
				     "attention (the trainer's choice), 529 "
				     "TFLOP/s forward and 475 backward a device "
				     "at 8192 keys, measured on the H100 "
				     "SXM5\n\npartition"));
	tu_run_free(&r);

	char *dir = tu_mkdtemp(), path[PATH_MAX];
	char *text = tu_read_src("examples/llama3-8b.yaml");
	ck_assert_ptr_nonnull(text);
	tu_write_in(path, sizeof path, dir, "full.yaml", text);
	free(text);
	tu_replace_in_file(path, "swiglu: true", "swiglu: true\n"
			   "    recompute: full");
	TU_PPCC(&r, "plan", path);
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "6 x parameters 48.2 GFLOP; recompute "
			     "(full) adds 16.1 GFLOP\n"), "%.2000s", r.out);
	tu_run_free(&r);

	TU_PPCC(&r, "plan", "--model", "mixtral-8x7b", "--devices", "64xh100");
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "\nmodel: 46.70B parameters; its 32 "
			     "pipeline ranks hold ") &&
		      strstr(r.out, "each, before tensor and expert "
			     "parallelism\n") &&
		      strstr(r.out, "6 x active parameters 77.3 GFLOP") &&
		      strstr(r.out, "\n  mixture of experts: 12.88B parameters "
			     "active a token; routed experts 45.10B (2 of 8 a "
			     "token), no shared experts\n"), "%.2000s", r.out);
	tu_run_free(&r);

	/* a model given as layers: what the file gives */
	TU_PPCC(&r, "plan", example("tiny.yaml"));
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "\nmodel: 260.0M parameters in the layers; "
			     "its 4 pipeline ranks hold ") &&
		      strstr(r.out, "\n  a microbatch: "), "%.2000s", r.out);
	tu_run_free(&r);

	TU_PPCC(&r, "search", example("llama3-8b.yaml"), "--top", "2");
	ck_assert_int_eq(r.status, 0);
	const char *first = strstr(r.out, "\nmodel: 8.03B parameters");
	const char *table = strstr(r.out, "\nrank ");
	ck_assert_msg(first && table && first < table &&
		      strncmp(r.out, "search: ", 8) == 0, "%.2000s", r.out);
	/* once: the winner's plan below does not repeat it */
	ck_assert_msg(!strstr(table, "\nmodel: ") &&
		      !strstr(table, "FLOPs a token"), "%.2000s", r.out);
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

/* ppcc with args (NULL-terminated), its standard error a pseudo-terminal
 * and its standard output out_path: what it wrote to the terminal
 * (malloc'd; the terminal's line discipline adds \r before \n), its
 * exit status in *status; killed after 300 s. */
static char *run_on_tty(const char *const args[], const char *out_path,
			int *status)
{
	int master, slave;
	ck_assert_int_eq(openpty(&master, &slave, NULL, NULL, NULL), 0);
	const char *argv[64] = {tu_ppcc()};
	int n = 1;
	while (args[n - 1] && n < 63) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int in = open("/dev/null", O_RDONLY);
		if (out < 0 || in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
		    dup2(slave, 2) < 0)
			_exit(127);
		close(master);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(slave);
	size_t len = 0, cap = 1 << 16;
	char *text = malloc(cap);
	ck_assert_ptr_nonnull(text);
	time_t t0 = time(NULL);
	for (;;) {
		struct pollfd pf = {master, POLLIN, 0};
		int k = poll(&pf, 1, 1000);
		if (k == 0 && time(NULL) - t0 < 300)
			continue;
		if (k <= 0)
			break;
		if (len + 4096 > cap) {
			text = realloc(text, cap *= 2);
			ck_assert_ptr_nonnull(text);
		}
		ssize_t got = read(master, text + len, cap - len - 1);
		if (got <= 0) /* EIO: the last holder of the terminal closed it */
			break;
		len += (size_t)got;
	}
	text[len] = '\0';
	close(master);
	if (time(NULL) - t0 >= 300)
		kill(pid, SIGKILL);
	int ws;
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	return text;
}

/* A search that runs over a second draws a progress line on a terminal's
 * standard error (configurations done and pruned, the time left),
 * redrawn in place with \r, and erases it before anything else is
 * written there; on a pipe, nothing of it.  Exhaustive, stopped by
 * --time-limit after 2 s, with helper threads. */
START_TEST(cli_search_progress_only_on_a_terminal)
{
	const char *const args[] = {"search", example("llama3-8b.yaml"),
				    "--exhaustive", "--time-limit", "2",
				    "--jobs", "3", "--top", "1", NULL};
	char *dir = tu_mkdtemp(), out[PATH_MAX];
	snprintf(out, sizeof out, "%s/out.txt", dir);
	int status;
	char *tty = run_on_tty(args, out, &status);
	ck_assert_msg(status == 0, "%s", tty);
	const char *first = strstr(tty, "\rppcc: search: 12192 "
				   "configurations: ");
	ck_assert_msg(first, "no progress line in '%s'", tty);
	ck_assert_msg(strstr(first, " simulated, 0 pruned, ") &&
		      strstr(first, " to plan, about "), "%s", tty);
	/* the last drawing erased: spaces over it, then \r, before the
	 * time limit's note */
	const char *last = first, *at;
	while ((at = strstr(last + 1, "\rppcc: search: ")))
		last = at;
	const char *erase = strstr(last + 1, "\r");
	ck_assert_ptr_nonnull(erase);
	size_t blank = strspn(erase + 1, " ");
	ck_assert_msg(blank >= strcspn(last + 1, "\r") &&
		      erase[1 + blank] == '\r' &&
		      strncmp(erase + 2 + blank, "ppcc: note: --time-limit: ",
			      26) == 0, "%s", last);
	char *result = tu_read_file(out, NULL);
	ck_assert_ptr_nonnull(result);
	ck_assert_msg(strncmp(result, "search: llama3-8b", 17) == 0 &&
		      !strchr(result, '\r'), "%s", result);
	free(result);
	free(tty);

	/* standard error a pipe: no line, no \r */
	tu_run r;
	tu_ppcc_run(&r, NULL, NULL, 300, args);
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(!strchr(r.err, '\r') && !strstr(r.err, "ppcc: search:") &&
		      strstr(r.err, "ppcc: note: --time-limit: "), "%s", r.err);
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

/* `ppcc devices` prints every row of the catalogue, as text and as JSON
 * with the row's figures; a bad format or argument is a usage error. */
START_TEST(cli_devices_lists_the_catalogue)
{
	tu_run r;
	TU_PPCC(&r, "devices");
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	for (int i = 0; i < ppcc_n_device_presets; i++) {
		char line[64];
		snprintf(line, sizeof line, "\n%-10s %7.1f ",
			 ppcc_device_presets[i].name, ppcc_device_presets[i].bf16);
		ck_assert_msg(strstr(r.out, line), "no row '%s' in\n%s", line,
			      r.out);
	}
	ck_assert_ptr_nonnull(strstr(r.out, "\nh100         989.4  1978.9   "
				     "494.7  79.65  3350    8   450   50   yes "
				     "0.62*  NVIDIA H100 SXM5 80 GB\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "\na100         312.0       -   "
				     "156.0     80  2039    8   300   25     - "
				     "0.62   NVIDIA A100 SXM4 80 GB\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "\na100: calibrated on SC'21 "
				     "Table 1, 7 runs fitted; 3.7% off on "
				     "average (at most 4.9%) on 3 held out;\n"
				     "  configurations tie within 4.4% (the median "
				     "difference of two runs' errors)\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "\n*: uncalibrated, no published run "
				     "calibrates it yet: the A100's constant, "
				     "fitted on SC'21 Table 1, stands in;\n"
				     "  configurations tie within the a100's "
				     "4.4%\n"));
	tu_run_free(&r);

	TU_PPCC(&r, "devices", "-f", "json");
	ck_assert_int_eq(r.status, 0);
	json_error_t e;
	json_t *list = json_loads(r.out, 0, &e);
	ck_assert_msg(list && json_is_array(list), "%s", e.text);
	ck_assert_int_eq(json_array_size(list), ppcc_n_device_presets);
	for (int i = 0; i < ppcc_n_device_presets; i++) {
		const ppcc_device_preset *p = &ppcc_device_presets[i];
		json_t *o = json_array_get(list, i);
		ck_assert_str_eq(json_string_value(json_object_get(o, "name")),
				 p->name);
		ck_assert_double_eq(json_real_value(json_object_get(o,
					"bf16_tflops")), p->bf16);
		ck_assert_double_eq(json_real_value(json_object_get(o,
					"efficiency")), p->efficiency);
		ck_assert_double_eq(json_real_value(json_object_get(o,
					"tie_band_pct")), p->tie_band);
		ck_assert(json_is_null(json_object_get(o, "calibration")) ==
			  (p->calibration == NULL));
		ck_assert(json_is_true(json_object_get(o, "nvlink_sharp")) ==
			  (p->nvls != 0));
	}
	json_decref(list);
	tu_run_free(&r);

	TU_PPCC(&r, "devices", "-f", "dot");
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "devices: unknown format 'dot' "
				     "(text or json)"));
	tu_run_free(&r);
	TU_PPCC(&r, "devices", "h100");
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "unexpected argument 'h100'"));
	tu_run_free(&r);
}
END_TEST

/* `ppcc models` prints every row of the catalogue with the loader's
 * parameter count, as text and as JSON; a bad format or argument is a
 * usage error. */
START_TEST(cli_models_lists_the_catalogue)
{
	tu_run r;
	TU_PPCC(&r, "models");
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	for (int i = 0; i < ppcc_n_model_presets; i++) {
		const ppcc_model_preset *p = &ppcc_model_presets[i];
		char line[64], source[256];
		snprintf(line, sizeof line, "\n%-15s %7.2fB ", p->name,
			 ppcc_model_preset_params(p) / 1e9);
		ck_assert_msg(strstr(r.out, line), "no row '%s' in\n%s", line,
			      r.out);
		snprintf(source, sizeof source, "\n%s: %s\n", p->name,
			 p->source);
		ck_assert_msg(strstr(r.out, source), "no source '%s'", source);
	}
	ck_assert_ptr_nonnull(strstr(r.out, "\nllama3-70b        70.55B   "
				     "70.55B     80   8192    64   8  28672"
				     "       - 128256  8192 swiglu rmsnorm   "
				     "rope    500000   no  Llama 3.1 70B\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "\ngpt3-175b        174.60B  "
				     "174.60B     96  12288    96  96  49152"
				     "       -  50257  2048 gelu   layernorm "
				     "learned      -  yes  GPT-3 175B\n"));
	/* a mixture of experts: the active count, experts x top-k, and an
	 * expert's FFN width */
	ck_assert_ptr_nonnull(strstr(r.out, "\nmixtral-8x7b      46.70B   "
				     "12.88B     32   4096    32   8  14336"
				     "     8x2  32000  4096 swiglu rmsnorm   "
				     "rope    1000000   no  Mixtral 8x7B\n"));
	tu_run_free(&r);

	TU_PPCC(&r, "models", "-f", "json");
	ck_assert_int_eq(r.status, 0);
	json_error_t e;
	json_t *list = json_loads(r.out, 0, &e);
	ck_assert_msg(list && json_is_array(list), "%s", e.text);
	ck_assert_int_eq(json_array_size(list), ppcc_n_model_presets);
	for (int i = 0; i < ppcc_n_model_presets; i++) {
		const ppcc_model_preset *p = &ppcc_model_presets[i];
		json_t *o = json_array_get(list, i);
		ck_assert_str_eq(json_string_value(json_object_get(o, "name")),
				 p->name);
		ck_assert_double_eq(json_real_value(json_object_get(o,
					"params")), ppcc_model_preset_params(p));
		ck_assert_int_eq(json_integer_value(json_object_get(o,
					"kv_heads")), p->kv_heads);
	}
	json_decref(list);
	tu_run_free(&r);

	TU_PPCC(&r, "models", "-f", "dot");
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "models: unknown format 'dot' "
				     "(text or json)"));
	tu_run_free(&r);
	TU_PPCC(&r, "models", "llama3-8b");
	ck_assert_int_eq(r.status, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "unexpected argument 'llama3-8b'"));
	tu_run_free(&r);
}
END_TEST

/* The one command: `ppcc search --model NAME --devices COUNTxPRESET
 * --global-batch 4M` searches the two presets with no file, the batch it
 * used on its first line (4M tokens = 2^22 = 512 sequences of 8192);
 * ppcc plan takes the same two options and plans what a file naming the
 * same presets plans, byte for byte. */
START_TEST(cli_one_command_searches_the_presets)
{
	tu_run r;
	/* the ties within the band are simulated too: longer than 60 s
	 * under the sanitizers */
	tu_ppcc_run(&r, NULL, NULL, 300, (const char *const[]){"search",
		    "--model", "llama3-70b", "--devices", "64xh100",
		    "--global-batch", "4M", "--top", "3", NULL});
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(r.err, "");
	static const char head[] =
		"global batch 512 sequences (4M tokens = 4194304 / 8192)\n"
		"search: llama3-70b on 64 devices (8 a node), global batch 512 "
		"sequences\ndevice h100: NVIDIA H100 SXM5 80 GB,";
	ck_assert_msg(strncmp(r.out, head, sizeof head - 1) == 0, "%s", r.out);
	tu_run_free(&r);

	char *dir = tu_mkdtemp(), path[PATH_MAX];
	tu_write_in(path, sizeof path, dir, "p.yaml",
		    "model:\n  transformer: {preset: llama3-8b}\n"
		    "cluster:\n  devices: 16\n  device: h100\n");
	tu_run a, b;
	TU_PPCC(&a, "plan", "--model", "llama3-8b", "--devices", "16xh100",
		"-f", "json");
	TU_PPCC(&b, "plan", path, "-f", "json");
	ck_assert_msg(a.status == 0 && b.status == 0, "%s%s", a.err, b.err);
	ck_assert_str_eq(a.out, b.out);
	tu_run_free(&a);
	tu_run_free(&b);
	/* --precision fp8 is transformer.precision: fp8 */
	tu_write_in(path, sizeof path, dir, "p8.yaml",
		    "model:\n  transformer: {preset: llama3-8b, precision: fp8}\n"
		    "cluster:\n  devices: 16\n  device: h100\n");
	TU_PPCC(&a, "plan", "--model", "llama3-8b", "--devices", "16xh100",
		"--precision", "fp8", "-f", "json");
	TU_PPCC(&b, "plan", path, "-f", "json");
	ck_assert_msg(a.status == 0 && b.status == 0, "%s%s", a.err, b.err);
	ck_assert_str_eq(a.out, b.out);
	tu_run_free(&a);
	tu_run_free(&b);
	/* the search's JSON holds the text the command line made, which
	 * --from-search plans; without it (an older JSON), it refuses by
	 * name rather than as a missing file */
	char json[PATH_MAX];
	snprintf(json, sizeof json, "%s/s.json", dir);
	TU_PPCC(&a, "search", "--model", "llama3-8b", "--devices", "16xh100",
		"--global-batch", "64", "-f", "json", "-o", json);
	ck_assert_msg(a.status == 0, "%s", a.err);
	tu_run_free(&a);
	TU_PPCC(&a, "plan", "--from-search", json);
	ck_assert_msg(a.status == 0, "%s", a.err);
	tu_run_free(&a);
	char *text = tu_read_file(json, NULL), *mt = strstr(text, "  \"model_text\"");
	ck_assert_msg(mt, "%s", text);
	memmove(mt, strchr(mt, '\n') + 1, strlen(strchr(mt, '\n') + 1) + 1);
	tu_write_in(json, sizeof json, dir, "s.json", text);
	free(text);
	TU_PPCC(&a, "plan", "--from-search", json);
	ck_assert_int_eq(a.status, 1);
	ck_assert_msg(strstr(a.err, "the search read its model from the "
			     "command line (--model, --devices)"), "%s", a.err);
	tu_run_free(&a);
	/* a model_text edited since: the fingerprint says so */
	TU_PPCC(&a, "search", "--model", "llama3-8b", "--devices", "16xh100",
		"--global-batch", "64", "-f", "json", "-o", json);
	tu_run_free(&a);
	text = tu_read_file(json, NULL);
	char *at = strstr(text, "devices: 16");
	ck_assert(at);
	at[9] = '3';
	tu_write_in(json, sizeof json, dir, "s.json", text);
	free(text);
	TU_PPCC(&a, "plan", "--from-search", json);
	ck_assert_int_eq(a.status, 1);
	ck_assert_msg(strstr(a.err, "s.json:6:17: error: model_text is not "
			     "the text the search read"), "%s", a.err);
	tu_run_free(&a);
	/* nothing fits: located at the command line, with no line and
	 * column of an input the user never wrote, and what would fit */
	TU_PPCC(&a, "search", "--model", "llama3-70b", "--devices", "8xl40s",
		"--global-batch", "4M");
	ck_assert_int_eq(a.status, 1);
	ck_assert_msg(strncmp(a.err, "ppcc: <command line>: error: no "
			      "configuration", 40) == 0 &&
		      !strstr(a.err, "<command line>:1") &&
		      strstr(a.err, "note: it would fit on "), "%s", a.err);
	/* the smallest device count, and the cheapest larger device with
	 * its figures, which the search on that device gives */
	ck_assert_msg(strstr(a.err, "note: it would fit on 32 devices: t "),
		      "%s", a.err);
	const char *swap = strstr(a.err, "note: it would fit on 8 b200 "
				  "(179.1 GiB) in place of the l40s: t ");
	ck_assert_msg(swap, "%s", a.err);
	double ms, tps, peak;
	ck_assert_int_eq(sscanf(strstr(swap, "; "), "; %lf ms an iteration, "
				"%lf tokens/s, peak %lf GiB per device", &ms,
				&tps, &peak), 3);
	tu_run_free(&a);
	TU_PPCC(&a, "search", "--model", "llama3-70b", "--devices", "8xb200",
		"--global-batch", "4M", "--top", "1", "-f", "json");
	ck_assert_msg(a.status == 0, "%s", a.err);
	json_error_t je;
	json_t *j = json_loads(a.out, 0, &je);
	ck_assert_msg(j, "%d: %s", je.line, je.text);
	json_t *e = json_array_get(json_object_get(j, "top"), 0);
	double it = json_number_value(json_object_get(e, "iteration_ms"));
	double pk = json_number_value(json_object_get(e, "peak_memory_bytes")) /
		    1073741824.0;
	ck_assert_msg(fabs(it - ms) <= 0.05 + 1e-9 * it &&
		      fabs(pk - peak) <= 0.005 + 1e-9,
		      "the note says %.1f ms, %.2f GiB; the search: %.17g ms, "
		      "%.17g GiB", ms, peak, it, pk);
	json_decref(j);
	tu_run_free(&a);
	tu_rmtree_free(dir);
}
END_TEST

/* A token batch rounds down to whole sequences and says so (first line of
 * the text, a note beside another format); a model given as layers has
 * no sequence to count tokens in; bad presets and spellings are usage
 * errors that name the option; FILE beside the presets is refused with
 * where the presets go instead. */
START_TEST(cli_one_command_errors_name_the_option)
{
	static const struct {
		const char *args[10];
		const char *err;
	} cases[] = {
		{{"search", "--model", "llama3-8b", "--devices", "16xh10"},
		 "ppcc: --devices: unknown device 'h10'; did you mean 'h100'?\n"},
		{{"plan", "--model", "llama3-7b", "--devices", "16xh100"},
		 "ppcc: --model: unknown model 'llama3-7b'; did you mean "
		 "'llama3-8b'?\n"},
		{{"search", "--model", "bert", "--devices", "16xh100"},
		 "ppcc: --model: unknown model 'bert'; expected llama3-8b, "
		 "llama3-70b, llama3-405b, llama2-70b, gpt3-175b, "
		 "mixtral-8x7b, mixtral-8x22b, qwen3-30b-a3b, "
		 "qwen3-235b-a22b, deepseek-v3, or gpt-oss-120b (ppcc "
		 "models lists them)\n"},
		{{"search", "--model", "llama3-8b", "--devices", "h100"},
		 "ppcc: --devices: expected COUNTxPRESET, as 64xh100, got "
		 "'h100'\n"},
		{{"search", "--model", "llama3-8b", "--devices", "0xh100"},
		 "ppcc: --devices: expected a count of 1 to 1048576 devices "
		 "before the x, got '0xh100'\n"},
		{{"search", "--model", "llama3-8b"},
		 "ppcc: --model needs --devices COUNTxPRESET, as 64xh100 (ppcc "
		 "devices lists them), got --model 'llama3-8b'\n"},
		{{"plan", "--devices", "8xa100"},
		 "ppcc: --devices needs --model NAME (ppcc models lists them), "
		 "got --devices '8xa100'\n"},
		{{"plan", "examples/tiny.yaml", "--precision", "fp8"},
		 "ppcc: --precision goes with --model (in a file, give "
		 "transformer.precision, ppcc(5)), got --precision 'fp8'\n"},
		{{"search", "examples/tiny.yaml", "--precision", "fp8"},
		 "ppcc: --precision goes with --model (in a file, give "
		 "transformer.precision, ppcc(5)), got --precision 'fp8'\n"},
		{{"search", "--model", "llama3-8b", "--devices", "8xh100",
		  "--precision", "FP8"},
		 "ppcc: --precision: expected bf16 or fp8, got 'FP8'\n"},
		{{"search", "examples/tiny.yaml", "--model", "llama3-8b",
		  "--devices", "8xa100"},
		 "ppcc: --model and --devices build the input; FILE "
		 "'examples/tiny.yaml' gives it too: name the presets in the "
		 "file instead (transformer: {preset: NAME}, cluster.device: "
		 "NAME; ppcc(5))\n"},
		{{"plan", "--model", "llama3-8b", "--devices", "8xa100",
		  "examples/tiny.yaml"},
		 "ppcc: --model and --devices build the input; FILE "
		 "'examples/tiny.yaml' gives it too: name the presets in the "
		 "file instead (transformer: {preset: NAME}, cluster.device: "
		 "NAME; ppcc(5))\n"},
		{{"search", "--model", "llama3-8b", "--devices", "8xa100",
		  "--cluster", "c.yaml"},
		 "ppcc: --cluster 'c.yaml' and --devices both give the cluster; "
		 "give one\n"},
		{{"search", "examples/tiny.yaml", "--global-batch", "4K"},
		 "ppcc: --global-batch: a K or M suffix counts tokens, but the "
		 "model is given as layers, without a sequence length; give "
		 "sequences (a plain count), got '4K'\n"},
		{{"search", "examples/llama3-8b.yaml", "--global-batch", "4G"},
		 "ppcc: --global-batch: '4G' is not a count of sequences, or of "
		 "tokens with K or M (4M: 2^22)\n"},
		{{"search", "examples/llama3-8b.yaml", "--global-batch", "4K"},
		 "ppcc: --global-batch: 4K tokens are fewer than one sequence "
		 "of 8192\n"},
		{{"search", "--model", "llama3-8b", "--devices", "8xh100",
		  "--trainer", "nemo"},
		 "ppcc: --trainer: expected megatron, torchtitan or deepspeed, "
		 "got 'nemo'\n"},
		{{"plan", "--model", "llama3-8b", "--devices", "8xh100",
		  "--trainer", "Megatron"},
		 "ppcc: --trainer: expected megatron, torchtitan or deepspeed, "
		 "got 'Megatron'\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *args[12] = {NULL};
		int n = 0;
		for (; cases[i].args[n]; n++)
			args[n] = cases[i].args[n];
		tu_run r;
		tu_ppcc_run(&r, tu_src(), NULL, 60, args);
		ck_assert_msg(r.status == 2, "case %zu: exit %d\n%s", i,
			      r.status, r.err);
		char want[512];
		snprintf(want, sizeof want, "%sTry 'ppcc --help' for more "
			 "information.\n", cases[i].err);
		ck_assert_str_eq(r.err, want);
		ck_assert_str_eq(r.out, "");
		tu_run_free(&r);
	}

	/* 1001K tokens = 1025024 = 125.125 sequences of 8192: 125 */
	tu_run r;
	char file[PATH_MAX];
	snprintf(file, sizeof file, "%s/examples/llama3-8b.yaml", tu_src());
	TU_PPCC(&r, "search", file, "--global-batch", "1001K", "--top", "1");
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strncmp(r.out, "global batch 125 sequences (1001K tokens "
			      "= 1025024 / 8192, rounded down)\nsearch: "
			      "llama3-8b on 16 devices (8 a node), global batch "
			      "125 sequences\n", 143) == 0, "%s", r.out);
	tu_run_free(&r);
	TU_PPCC(&r, "search", file, "--global-batch", "1M", "--top", "1",
		"-f", "json");
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(r.err, "ppcc: note: global batch 128 sequences (1M "
			 "tokens = 1048576 / 8192)\n");
	ck_assert_ptr_nonnull(strstr(r.out, "\"global_batch_size\": 128,"));
	tu_run_free(&r);
	/* a plain count is sequences, and no line is added */
	TU_PPCC(&r, "search", file, "--global-batch", "128", "--top", "1");
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strncmp(r.out, "search: llama3-8b on 16 devices (8 a "
			      "node), global batch 128 sequences\n", 62) == 0,
		      "%s", r.out);
	tu_run_free(&r);
}
END_TEST

/* -e|--expert-parallel sets pipeline.expert_parallel beside --model, as
 * the file's key does; a search whose --fix schedule rules out every
 * layout says why, not only that nothing fills the devices. */
START_TEST(cli_expert_parallel_and_fixed_kinds_say_why)
{
	char *dir = tu_mkdtemp(), path[PATH_MAX];
	tu_write_in(path, sizeof path, dir, "m.yaml",
		    "model:\n  transformer: {preset: mixtral-8x7b}\n"
		    "cluster:\n  devices: 64\n  device: h100\n"
		    "pipeline: {expert_parallel: 8}\n");
	tu_run a, b;
	TU_PPCC(&a, "plan", "--model", "mixtral-8x7b", "--devices", "64xh100",
		"-s", "combined-1f1b", "-p", "4", "-v", "2", "-e", "8", "-f",
		"json");
	TU_PPCC(&b, "plan", path, "-s", "combined-1f1b", "-p", "4",
		"--chunks", "2", "-f", "json");
	ck_assert_msg(a.status == 0 && b.status == 0, "%s%s", a.err, b.err);
	ck_assert_str_eq(a.out, b.out);
	tu_run_free(&a);
	tu_run_free(&b);
	TU_PPCC(&a, "plan", "--model", "mixtral-8x7b", "--devices", "64xh100",
		"--expert-parallel", "3");
	ck_assert_int_eq(a.status, 1);
	static const char ep3[] = "ppcc: <command line>: error: 3-way expert "
				  "parallelism does not divide the 8 experts\n";
	ck_assert_msg(strncmp(a.err, ep3, sizeof ep3 - 1) == 0, "%s", a.err);
	tu_run_free(&a);

	static const struct {
		const char *model, *devices, *args[4], *why;
	} cases[] = {
		{"llama3-8b", "8xh100", {"--fix", "schedule=combined-1f1b"},
		 "8 devices with the settings --fix holds: combined-1f1b "
		 "overlaps the experts' all-to-alls, and this model has no "
		 "experts\n"},
		{"mixtral-8x7b", "64xh100",
		 {"--fix", "schedule=combined-1f1b", "--fix",
		  "expert_parallel=1"},
		 "64 devices with the settings --fix holds: combined-1f1b "
		 "overlaps the experts' all-to-alls, which need "
		 "expert_parallel of 2 or more\n"},
		{"mixtral-8x7b", "64xh100",
		 {"--fix", "schedule=dualpipe-v", "--fix", "chunks=1"},
		 "64 devices with the settings --fix holds: dualpipe-v runs 2 "
		 "chunks a rank, not --fix chunks=1\n"},
		{"mixtral-8x7b", "64xh100",
		 {"--fix", "schedule=interleaved", "--fix", "chunks=1"},
		 "64 devices with the settings --fix holds: interleaved runs "
		 "at least 2 chunks a rank, not --fix chunks=1\n"},
		{"mixtral-8x7b", "64xh100", {"--fix", "schedule=dualpipe"},
		 "64 devices with the settings --fix holds: ppcc cannot plan the "
		 "dualpipe schedule yet (its second pipeline holds a copy of "
		 "every stage's layers); search dualpipe-v, its one-copy "
		 "form\n"},
		{"llama3-8b", "8xh100", {"--fix", "chunks=5"},
		 "8 devices with the settings --fix holds: the search tries 1 to "
		 "4 chunks a rank, not --fix chunks=5; plan it with ppcc plan "
		 "-v 5\n"},
		{"llama3-8b", "8xh100",
		 {"--fix", "schedule=interleaved", "--fix", "stages=1"},
		 "8 devices with the settings --fix holds: one stage runs one "
		 "chunk, and interleaved runs at least 2 a rank\n"},
		{"mixtral-8x7b", "64xh100", {"--fix", "expert_parallel=3"},
		 "64 devices with the settings --fix holds: --fix "
		 "expert_parallel=3 does not divide the 8 experts\n"},
		{"mixtral-8x7b", "64xh100",
		 {"--fix", "schedule=combined-1f1b", "--trainer",
		  "torchtitan"},
		 "64 devices with the settings --fix holds: combined-1f1b is "
		 "the overlap of the experts' all-to-alls, and overlap.moe_a2a "
		 "is false (torchtitan's default: it does not run it)\n"},
		{"mixtral-8x7b", "8xh100",
		 {"--fix", "expert_parallel=8", "--fix", "stages=2"},
		 "8 devices with the settings --fix holds: --fix "
		 "expert_parallel=8 spreads the experts over 8 devices of a "
		 "stage, and 2 stages of the 8 devices have 4 each\n"},
		{"mixtral-8x7b", "4xh100", {"--fix", "expert_parallel=8"},
		 "4 devices with the settings --fix holds: --fix "
		 "expert_parallel=8 spreads the experts over 8 devices of a "
		 "stage, and there are 4 devices\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *args[16] = {"search", "--model", cases[i].model,
					"--devices", cases[i].devices,
					"--global-batch", "256"};
		for (int n = 0; n < 4 && cases[i].args[n]; n++)
			args[7 + n] = cases[i].args[n];
		tu_run r;
		tu_ppcc_run(&r, tu_src(), NULL, 300, args);
		ck_assert_int_eq(r.status, 1);
		char want[512];
		snprintf(want, sizeof want, "ppcc: <command line>: error: no "
			 "configuration fills the %s", cases[i].why);
		ck_assert_msg(strncmp(r.err, want, strlen(want)) == 0,
			      "case %zu: %s", i, r.err);
		tu_run_free(&r);
	}
	/* what no layout changes is said before searching: experts fixed
	 * on a dense model, Megatron-LM's modules under torchtitan */
	TU_PPCC(&a, "search", "--model", "llama3-8b", "--devices", "64xh100",
		"--global-batch", "256", "--fix", "expert_parallel=8");
	ck_assert_int_eq(a.status, 1);
	ck_assert_str_eq(a.err, "ppcc: <command line>: error: --fix "
			 "expert_parallel: expert parallelism needs a "
			 "mixture-of-experts model (transformer.moe); this model "
			 "has none\n");
	tu_run_free(&a);
	tu_write_in(path, sizeof path, dir, "rm.yaml",
		    "model:\n  transformer: {preset: llama3-8b,\n"
		    "    recompute_modules: [core_attn]}\n"
		    "cluster:\n  devices: 16\n  device: h100\n"
		    "pipeline: {trainer: torchtitan, global_batch_size: 64}\n");
	TU_PPCC(&a, "search", path);
	ck_assert_int_eq(a.status, 1);
	ck_assert_msg(strstr(a.err, "rm.yaml:3:5: error: recompute_modules "
			     "are Megatron-LM's, and torchtitan has none") &&
		      !strstr(a.err, "fits"), "%s", a.err);
	tu_run_free(&a);
	/* the file's modules: written beside selective rows, and said to
	 * go unused where --fix holds another recomputation */
	tu_write_in(path, sizeof path, dir, "mm.yaml",
		    "model:\n  transformer: {preset: mixtral-8x7b,\n"
		    "    recompute_modules: [core_attn, moe_act]}\n"
		    "cluster:\n  devices: 16\n  device: h100\n"
		    "pipeline: {global_batch_size: 64}\n");
	TU_PPCC(&a, "search", path, "--fix", "recompute=selective", "--top",
		"1", "-f", "json");
	ck_assert_msg(a.status == 0, "%s", a.err);
	ck_assert_msg(strstr(a.out, "\"transformer\": {\"micro_batch_size\": "
			     "1, \"recompute\": \"selective\", "
			     "\"recompute_modules\": [\"core_attn\", "
			     "\"moe_act\"]}"), "%s", a.out);
	/* --compare reads them back; other modules than the model's are
	 * refused at their key */
	char json[PATH_MAX];
	tu_write_in(json, sizeof json, dir, "s.json", a.out);
	TU_PPCC(&b, "search", path, "--compare", json);
	ck_assert_msg(b.status == 0, "%s", b.err);
	tu_run_free(&b);
	tu_replace_in_file(json, "\"moe_act\"]}", "\"core_a\"]}");
	TU_PPCC(&b, "search", path, "--compare", json);
	ck_assert_int_eq(b.status, 1);
	ck_assert_msg(strstr(b.err, "error: top[0].transformer."
			     "recompute_modules[1]: expected one of core_attn, "
			     "layernorm, mla_up_proj, or moe_act, got a quoted "
			     "string 'core_a'"),
		      "%s", b.err);
	tu_run_free(&b);
	tu_replace_in_file(json, "\"core_a\"]}", "\"layernorm\"]}");
	TU_PPCC(&b, "search", path, "--compare", json);
	ck_assert_int_eq(b.status, 1);
	ck_assert_msg(strstr(b.err, ": error: recompute_modules: core_attn, "
			     "layernorm, but the search plans the model's "
			     "(core_attn, moe_act); set "
			     "transformer.recompute_modules in the model to "
			     "compare these\n"), "%s", b.err);
	tu_run_free(&b);
	tu_run_free(&a);
	TU_PPCC(&a, "search", path, "--fix", "recompute=none", "--top", "1",
		"-f", "json");
	ck_assert_msg(a.status == 0, "%s", a.err);
	ck_assert_ptr_null(strstr(a.out, "recompute_modules"));
	ck_assert_msg(strstr(a.err, "mm.yaml:3:5: note: --fix recompute=none "
			     "leaves transformer.recompute_modules (core_attn, "
			     "moe_act) unused: it names what selective "
			     "recomputation recomputes\n"), "%s", a.err);
	tu_run_free(&a);
	/* HSDP's shard groups are planned, not searched */
	tu_write_in(path, sizeof path, dir, "hs.yaml",
		    "model:\n  transformer: {preset: llama3-8b}\n"
		    "cluster:\n  devices: 16\n  device: h100\n"
		    "pipeline: {zero: 1, data_parallel_shard: 8,\n"
		    "  global_batch_size: 64}\n");
	TU_PPCC(&a, "search", path);
	ck_assert_int_eq(a.status, 1);
	ck_assert_msg(strstr(a.err, "hs.yaml:6:21: error: the search shards "
			     "ZeRO over every data-parallel rank of a layout, "
			     "and does not search HSDP's shard groups; leave "
			     "data_parallel_shard out, and plan the winner with "
			     "it\n"), "%s", a.err);
	tu_run_free(&a);
	tu_rmtree_free(dir);
}
END_TEST

/* --trainer plans the memory that trainer holds, in plan and search, as
 * pipeline.trainer does; a trainer's format for another is an error at
 * the command line, and --from-search names its trainer already. */
START_TEST(cli_trainer_option_plans_that_trainers_memory)
{
	static const char *const plan[] = {"plan", "--model", "llama3-8b",
		"--devices", "8xh100", "--trainer", "torchtitan", NULL};
	tu_run r;
	tu_ppcc_run(&r, tu_src(), NULL, 60, plan);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "\n  as torchtitan reports it: each "
			     "column but reserved is the tensors x 1.16,\n"),
		      "%s", r.out);
	tu_run_free(&r);
	static const char *const search[] = {"search", "--model", "llama3-8b",
		"--devices", "8xh100", "--global-batch", "16", "--trainer",
		"torchtitan", "--top", "1", NULL};
	tu_ppcc_run(&r, tu_src(), NULL, 120, search);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_msg(strstr(r.out, "\n  as torchtitan reports it: "), "%s",
		      r.out);
	tu_run_free(&r);
	static const char *const clash[] = {"plan", "--model", "llama3-8b",
		"--devices", "8xh100", "--trainer", "torchtitan", "-f",
		"megatron", NULL};
	tu_ppcc_run(&r, tu_src(), NULL, 60, clash);
	ck_assert_int_eq(r.status, 1);
	ck_assert_str_eq(r.err, "ppcc: <command line>: error: --trainer "
			 "torchtitan, but -f megatron writes Megatron-LM's "
			 "settings, whose memory the plan would not count; give "
			 "--trainer megatron, or use -f for torchtitan\n");
	ck_assert_str_eq(r.out, "");
	tu_run_free(&r);
	static const char *const from[] = {"plan", "--from-search", "s.json",
		"--trainer", "megatron", NULL};
	tu_ppcc_run(&r, tu_src(), NULL, 60, from);
	ck_assert_int_eq(r.status, 2);
	ck_assert_msg(strstr(r.err, "--from-search and --trainer contradict: "
			     "the search's model file names its trainer"),
		      "%s", r.err);
	tu_run_free(&r);
}
END_TEST

/* The plan's text names each preset under its first line, with the
 * efficiency every figure rests on and where it came from: calibrated
 * (with the held-out error), uncalibrated, or the file's, and under
 * the iteration time its band. */
START_TEST(cli_plan_names_the_preset_and_its_calibration)
{
	static const char model[] =
		"model:\n  name: m\n  layers:\n"
		"    - {name: a, fwd_flops: 1e12, params: 1e8, repeat: 8}\n"
		"cluster:\n  devices: 2\n  device: %s\n"
		"pipeline: {stages: 2, microbatches: 4}\n";
	static const char *const cases[][3] = {
		{"h100", "device h100: NVIDIA H100 SXM5 80 GB, 989.4 TFLOP/s "
		 "dense BF16, 79.65 GiB\n  efficiency 0.62, uncalibrated: the "
		 "A100's constant, fitted on SC'21 Table 1, stands in; every "
		 "figure below rests on it\n",
		 "none stated: h100's efficiency is uncalibrated\n"},
		{"a100", "device a100: NVIDIA A100 SXM4 80 GB, 312 TFLOP/s "
		 "dense BF16, 80 GiB\n  efficiency 0.62, calibrated on SC'21 "
		 "Table 1: 3.7% off on average (at most 4.9%) on the 3 runs "
		 "held out of the fit\n",
		 "+/-3.7%  (a100: the mean error on the 3 published runs held "
		 "out of its fit; at most 4.9%)\n"},
		{"{preset: h200, efficiency: 0.5}", "device h200: NVIDIA H200 "
		 "SXM5 141 GB, 989.4 TFLOP/s dense BF16, 140.4 GiB\n  "
		 "efficiency 0.50, the file's\n",
		 "none stated: the file's efficiency, which no published run "
		 "checks\n"},
		{"{name: x, tflops: 100, efficiency: 0.5, memory_gib: 80}",
		 NULL, "none stated: the file's efficiency, which no published "
		 "run checks\n"},
	};
	char *dir = tu_mkdtemp();
	char path[4096], text[1024];
	snprintf(path, sizeof path, "%s/m.yaml", dir);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(text, sizeof text, model, cases[i][0]);
		ck_assert_int_eq(tu_write_file(path, text), 0);
		tu_run r;
		TU_PPCC(&r, "plan", path);
		ck_assert_msg(r.status == 0, "%s", r.err);
		const char *second = strchr(r.out, '\n') + 1;
		if (cases[i][1])
			ck_assert_msg(strncmp(second, cases[i][1],
					      strlen(cases[i][1])) == 0,
				      "%s", r.out);
		else
			/* no device lines: the model's summary follows */
			ck_assert_msg(strncmp(second, "model: ", 7) == 0 &&
				      !strstr(r.out, "\n  efficiency "), "%s", r.out);
		/* the iteration's band: the calibration's held-out error,
		 * or why none is stated; the memory's, none for Megatron-LM */
		char band[256];
		snprintf(band, sizeof band, "  iteration time (ms)  ");
		const char *it = strstr(r.out, band);
		ck_assert_msg(it, "%s", r.out);
		it = strchr(it, '\n') + 1;
		snprintf(band, sizeof band, "  uncertainty                 %s",
			 cases[i][2]);
		ck_assert_msg(strncmp(it, band, strlen(band)) == 0, "%s", r.out);
		ck_assert_msg(strstr(r.out, "\n  uncertainty: none stated: no "
				     "published Megatron-LM run with a known "
				     "layout gives its peak memory\n"), "%s", r.out);
		tu_run_free(&r);
	}
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(cli_usage_errors_exit_two)
{
	const char *cases[][4] = {
		{"plan", NULL},
		{"frobnicate", "x", NULL},
		{"plan", "x.yaml", "-f", "pdf"},
		{"plan", "x.yaml", "-p", "0"},
		{"plan", "x.yaml", "-s", "zb"},
		{"plan", "x.yaml", "--bogus", NULL},
		{"plan", "a.yaml", "b.yaml", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *argv[6] = {(char *)tu_ppcc()};
		for (int k = 0; k < 4 && cases[i][k]; k++)
			argv[k + 1] = (char *)cases[i][k];
		tu_run r;
		ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 30, argv), 0);
		ck_assert_msg(r.status == 2, "case %zu: exit %d: %s", i, r.status, r.err);
		ck_assert_msg(strncmp(r.err, "ppcc: ", 6) == 0, "case %zu: %s", i, r.err);
		ck_assert_str_eq(r.out, "");
		tu_run_free(&r);
	}
}
END_TEST

/* --headroom GIB|PCT%: a bad value is a usage error naming the option;
 * a configuration fits only when every device leaves that much free
 * beyond the reserve (the JSON's headroom_bytes, each entry's at least
 * it), so a headroom above the default winner's changes the winner; a
 * percent is of the memory a device has for training. */
/* A --memory-limit at or under the cluster's reserve is the command
 * line's error, not the file's cluster section's. */
START_TEST(cli_memory_limit_under_the_reserve_is_the_command_lines)
{
	tu_run r;
	TU_PPCC(&r, "plan", example("tiny.yaml"), "--memory-limit", "1.5");
	ck_assert_msg(r.status == 1 && strstr(r.err, "ppcc: <command line>: "
		      "error: --memory-limit 1.5 GiB leaves nothing beside the "
		      "cluster's reserved_gib 2.00 (") && !strstr(r.err,
		      "tiny.yaml:23:1"), "exit %d: %s", r.status, r.err);
	tu_run_free(&r);
	/* the search too, before anything is searched */
	TU_PPCC(&r, "search", example("tiny.yaml"), "--global-batch", "8",
		"--memory-limit", "2");
	ck_assert_msg(r.status == 1 && strstr(r.err, "ppcc: <command line>: "
		      "error: --memory-limit 2 GiB leaves nothing beside the "
		      "cluster's reserved_gib 2.00 (") && !*r.out, "exit %d: %s",
		      r.status, r.err);
	tu_run_free(&r);
}
END_TEST

START_TEST(cli_headroom_sets_what_a_configuration_leaves_free)
{
	char *tiny = example("tiny.yaml");
	const char *bad[] = {"abc", "100%", "-1", "%", "1e9", "2GiB"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		tu_run r;
		TU_PPCC(&r, "search", tiny, "--headroom", bad[i]);
		ck_assert_msg(r.status == 2, "%s: exit %d", bad[i], r.status);
		ck_assert_msg(strncmp(r.err, "ppcc: --headroom: '", 19) == 0,
			      "%s: %s", bad[i], r.err);
		ck_assert_str_eq(r.out, "");
		tu_run_free(&r);
	}
	/* tiny's devices: 24 GiB less a reserve of 2 */
	double least = INFINITY, winner = 0;
	const char *values[] = {"0", "10%", NULL};
	for (int k = 0; k < 3; k++) {
		char more[32];
		const char *h = values[k];
		if (k == 2) {
			/* above the winner's of --headroom 0 */
			snprintf(more, sizeof more, "%.3f", winner / 1073741824.0 + 0.01);
			h = more;
		}
		tu_run r;
		TU_PPCC(&r, "search", tiny, "--headroom", h, "-f", "json");
		ck_assert_msg(r.status == 0, "%s: %s", h, r.err);
		json_error_t je;
		json_t *j = json_loads(r.out, 0, &je);
		ck_assert_ptr_nonnull(j);
		double want = json_number_value(json_object_get(j, "headroom_bytes"));
		if (k == 0)
			ck_assert(want == 0);
		else if (k == 1)
			ck_assert_double_eq_tol(want, 0.1 * 22 * 1073741824.0, 1);
		else
			ck_assert_double_eq_tol(want, atof(h) * 1073741824.0, 1);
		json_t *top = json_object_get(j, "top");
		ck_assert_int_gt((int)json_array_size(top), 0);
		least = INFINITY;
		for (size_t i = 0; i < json_array_size(top); i++) {
			double f = json_number_value(json_object_get(
				json_array_get(top, i), "headroom_bytes"));
			ck_assert_msg(f >= want, "%s: entry %zu leaves %g", h, i, f);
			if (f < least)
				least = f;
		}
		if (k == 0)
			winner = json_number_value(json_object_get(
				json_array_get(top, 0), "headroom_bytes"));
		else if (k == 2)
			ck_assert(json_number_value(json_object_get(
				json_array_get(top, 0), "headroom_bytes")) > winner);
		json_decref(j);
		tu_run_free(&r);
	}
	/* the text names it */
	tu_run r;
	TU_PPCC(&r, "search", tiny, "--headroom", "1.5");
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, "a configuration fits when it leaves 1.50 GiB "
			     "(--headroom)"), "%s", r.out);
	tu_run_free(&r);
}
END_TEST

/* A usage error names the option and the value refused; a bad --prefix
 * is one (exit 2, before any input is read: x.yaml does not exist), and
 * so is a --fix of a dimension already fixed to another value. */
START_TEST(cli_usage_errors_name_the_option)
{
	char *tiny = example("tiny.yaml");
	const struct {
		const char *argv[10], *first_line;
	} cases[] = {
		{{"foo"},
		 "ppcc: unknown command 'foo' (plan, check, search, diagnose, "
		 "devices or models)"},
		{{"-q"},
		 "ppcc: missing command (plan, check, search, diagnose, devices "
		 "or models)"},
		{{"plan", "x.yaml", "--memory-limit", "1048577"},
		 "ppcc: --memory-limit: expected GiB per device (a number > 0, "
		 "at most 1048576: 1 PiB), got '1048577'"},
		{{"plan", "x.yaml", "-p", "0"},
		 "ppcc: --stages: expected a positive integer, got '0'"},
		{{"plan", "x.yaml", "--microbatches=0"},
		 "ppcc: --microbatches: expected a positive integer, got '0'"},
		{{"-v", "x", "plan", "x.yaml"},
		 "ppcc: --chunks: expected a positive integer, got 'x'"},
		{{"plan", "x.yaml", "-t", "-1"},
		 "ppcc: --tensor-parallel: expected a positive integer, got '-1'"},
		{{"plan", "x.yaml", "--max-actions", "0"},
		 "ppcc: --max-actions: expected a positive integer, got '0'"},
		{{"plan", "x.yaml", "-e", "99999999999"},
		 "ppcc: --expert-parallel: '99999999999' is more than "
		 "2147483647"},
		{{"plan", "x.yaml", "-f", "header", "--prefix", "9x"},
		 "ppcc: --prefix: invalid header prefix '9x': it must be a C "
		 "identifier of at most 64 characters that starts with a letter, "
		 "does not end with '_' and holds no '__'"},
		{{"plan", "x.yaml", "--prefix", "ppcc"},
		 "ppcc: --prefix: header prefix 'ppcc' would define "
		 "'PPCC_SCHED_GPIPE', which <ppcc/schedule.h> declares"},
		{{"search", tiny, "--global-batch", "8", "--fix", "stages=2",
		  "--fix", "stages=4"},
		 "ppcc: --fix: 'stages=2' and 'stages=4' fix the same dimension; "
		 "give one"},
		{{"search", tiny, "--global-batch", "8", "--fix",
		  "schedule=gpipe", "--fix", "schedule=1f1b"},
		 "ppcc: --fix: 'schedule=gpipe' and 'schedule=1f1b' fix the same "
		 "dimension; give one"},
		{{"search", tiny, "--global-batch", "8", "--fix", "zero=1",
		  "--fix", "zero=0"},
		 "ppcc: --fix: 'zero=1' and 'zero=0' fix the same dimension; "
		 "give one"},
		{{"search", tiny, "--global-batch", "8", "--fix",
		  "recompute=full", "--fix", "recompute=none"},
		 "ppcc: --fix: 'recompute=full' and 'recompute=none' fix the "
		 "same dimension; give one"},
		/* numbers are decimal digits: no sign, space, other base,
		 * infinity or overflow (strtol and strtod took the first four) */
		{{"plan", "x.yaml", "-m", "+5"},
		 "ppcc: --microbatches: expected a positive integer, got '+5'"},
		{{"plan", "x.yaml", "-m", " 5"},
		 "ppcc: --microbatches: expected a positive integer, got ' 5'"},
		{{"plan", "x.yaml", "--jobs", "+2"},
		 "ppcc: --jobs: '+2' is not a count of 1 to 64"},
		{{"plan", "x.yaml", "--max-actions", "99999999999999999999"},
		 "ppcc: --max-actions: '99999999999999999999' is more than "
		 "9223372036854775807"},
		{{"plan", "x.yaml", "--memory-limit", "0x10"},
		 "ppcc: --memory-limit: expected GiB per device (a number > 0, "
		 "at most 1048576: 1 PiB), got '0x10'"},
		{{"plan", "x.yaml", "--memory-limit", "inf"},
		 "ppcc: --memory-limit: expected GiB per device (a number > 0, "
		 "at most 1048576: 1 PiB), got 'inf'"},
		{{"search", tiny, "--global-batch", " 8"},
		 "ppcc: --global-batch: ' 8' is not a count of sequences, or "
		 "of tokens with K or M (4M: 2^22)"},
		{{"search", tiny, "--global-batch", "+8"},
		 "ppcc: --global-batch: '+8' is not a count of sequences, or "
		 "of tokens with K or M (4M: 2^22)"},
		{{"search", tiny, "--global-batch", "8", "--memory-limit", "0x10"},
		 "ppcc: --memory-limit: expected GiB per device (a number > 0, "
		 "at most 1048576: 1 PiB), got '0x10'"},
		{{"search", tiny, "--global-batch", "8", "--memory-limit", " 40"},
		 "ppcc: --memory-limit: expected GiB per device (a number > 0, "
		 "at most 1048576: 1 PiB), got ' 40'"},
		{{"plan", "x.yaml", "--max-work", "+5"},
		 "ppcc: --max-work: expected a positive integer, got '+5'"},
		{{"search", tiny, "--global-batch", "8", "--max-work", "+5"},
		 "ppcc: --max-work: expected a positive integer, got '+5'"},
		{{"search", tiny, "--global-batch", "8", "--max-actions", " 9"},
		 "ppcc: --max-actions: expected a positive integer, got ' 9'"},
		{{"search", tiny, "--global-batch", "8", "--time-limit", "0x5"},
		 "ppcc: --time-limit: '0x5' is not seconds"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *argv[12] = {(char *)tu_ppcc()};
		for (int k = 0; k < 10 && cases[i].argv[k]; k++)
			argv[k + 1] = (char *)cases[i].argv[k];
		tu_run r;
		ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, argv), 0);
		size_t n = strlen(cases[i].first_line);
		ck_assert_msg(r.status == 2 && strncmp(r.err, cases[i].first_line, n) == 0 &&
			      r.err[n] == '\n', "case %zu: exit %d: %s", i, r.status, r.err);
		ck_assert_str_eq(r.out, "");
		tu_run_free(&r);
	}
	/* the same value twice is no conflict */
	tu_run r;
	TU_PPCC(&r, "search", tiny, "--global-batch", "8", "--fix", "stages=2",
	    "--fix", "stages=2", "--fix", "schedule=1f1b", "--fix",
	    "schedule=1f1b", "--top", "1", "-f", "json");
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "\"stages\": 2"));
	tu_run_free(&r);
}
END_TEST

START_TEST(cli_plan_writes_output_file)
{
	char *dir = tu_mkdtemp();
	char out[4096];
	snprintf(out, sizeof out, "%s/plan.json", dir);
	tu_run r;
	TU_PPCC(&r, "plan", example("tiny.yaml"), "-f", "json", "-o", out);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_str_eq(r.out, "");
	size_t len;
	char *json = tu_read_file(out, &len);
	ck_assert_ptr_nonnull(json);
	ck_assert_ptr_nonnull(strstr(json, "\"format\": \"ppcc-schedule\""));
	ck_assert(len > 0 && json[len - 1] == '\n');
	free(json);
	tu_run_free(&r);

	/* ppcc check accepts it. */
	TU_PPCC(&r, "check", out);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "valid 1f1b schedule: 4 ranks"));
	tu_run_free(&r);

	/* Nothing else is left in the directory: no temporary file. */
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
	ck_assert_int_eq(system(cmd), 0);
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(cli_bad_input_leaves_existing_output_untouched)
{
	char *dir = tu_mkdtemp();
	char out[4096], bad[4096];
	tu_write_in(out, sizeof out, dir, "plan.json", "precious\n");
	tu_write_in(bad, sizeof bad, dir, "bad.yaml", "model:\n  name: x\n  layers: 3\n");
	tu_run r;
	TU_PPCC(&r, "plan", bad, "-o", out);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "bad.yaml:3:11: error: "), "%s", r.err);
	char *kept = tu_read_file(out, NULL);
	ck_assert_str_eq(kept, "precious\n");
	free(kept);
	tu_run_free(&r);
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 2", dir);
	ck_assert_int_eq(system(cmd), 0);
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(cli_unwritable_output_exits_three)
{
	tu_run r;
	TU_PPCC(&r, "plan", example("tiny.yaml"), "-o", "/nonexistent-dir/plan.txt");
	ck_assert_int_eq(r.status, 3);
	ck_assert_msg(strstr(r.err, "ppcc: /nonexistent-dir/plan.txt: error: cannot write"),
		      "%s", r.err);
	tu_run_free(&r);
	/* A full disk: everything fits in the buffer until the flush fails. */
	TU_PPCC(&r, "plan", example("tiny.yaml"), "-o", "/dev/full");
	ck_assert_int_eq(r.status, 3);
	tu_run_free(&r);
	/* A read-only directory: harden_read_only_directory_exits_three
	 * (check_harden.c), through a read-only bind mount, which holds for
	 * root too (permissions alone do not stop root). */
}
END_TEST

START_TEST(cli_reads_stdin_and_names_it)
{
	tu_run r;
	char *argv[] = {(char *)tu_ppcc(), "plan", "-", "-f", "json", NULL};
	ck_assert_int_eq(tu_run_argv(&r, NULL, example("tiny.yaml"), NULL, 60, argv), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "\"model\": \"tiny\""));
	tu_run_free(&r);

	char *dir = tu_mkdtemp();
	char bad[4096];
	tu_write_in(bad, sizeof bad, dir, "bad.yaml", "model: [\n");
	ck_assert_int_eq(tu_run_argv(&r, NULL, bad, NULL, 60, argv), 0);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strncmp(r.err, "ppcc: <stdin>:", 14) == 0, "%s", r.err);
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(cli_check_rejects_mutated_schedule)
{
	char *dir = tu_mkdtemp();
	char out[4096];
	tu_plan_json(out, sizeof out, dir, "tiny.yaml");
	tu_run r;
	/* Rank 1's first action is RECV_F of stage 1, microbatch 0: make it
	 * microbatch 1's, a duplicate that leaves microbatch 0's send
	 * unmatched. */
	tu_replace_in_file(out, "{\"op\":\"RECV_F\",\"stage\":1,\"mb\":0",
			   "{\"op\":\"RECV_F\",\"stage\":1,\"mb\":1");
	TU_PPCC(&r, "check", out);
	ck_assert_int_eq(r.status, 1);
	ck_assert_msg(strstr(r.err, "error: stage 1 microbatch 1: 2 RECV_F "
				    "(rank 1, actions 0 and 3)"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "error: rank 0, action 1 (SEND_F stage 0 mb 0): "
				    "no matching RECV_F on rank 1"), "%s", r.err);
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(cli_check_reports_json_syntax_position)
{
	char *dir = tu_mkdtemp();
	char path[4096];
	tu_write_in(path, sizeof path, dir, "broken.json",
		    "{\n  \"format\": \"ppcc-schedule\",\n  \"version\": 1,,\n}\n");
	tu_run r;
	TU_PPCC(&r, "check", path);
	ck_assert_int_eq(r.status, 1);
	char want[4200];
	snprintf(want, sizeof want, "ppcc: %s:3:", path);
	ck_assert_msg(strncmp(r.err, want, strlen(want)) == 0, "%s", r.err);
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

/* Every "$ ppcc ..." line in the man pages' EXAMPLES runs and succeeds. */
START_TEST(cli_man_page_examples_run)
{
	const char *pages[] = {"man/ppcc.1", "man/ppcc.5"};
	char *dir = tu_mkdtemp();
	char link[4096], target[4096];
	snprintf(link, sizeof link, "%s/examples", dir);
	snprintf(target, sizeof target, "%s/examples", tu_src());
	ck_assert_int_eq(symlink(target, link), 0);
	int ran = 0;
	for (int pg = 0; pg < 2; pg++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", tu_src(), pages[pg]);
		char *text = tu_read_file(path, NULL);
		if (!text)
			continue;
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
			if (strncmp(line, "$ ppcc ", 7) != 0)
				continue;
			/* a transcript that shows its output (an error, say) is
			 * compared by the docs suite (tests/docs.sh) */
			const char *next = line + strlen(line) + 1;
			if (*next && *next != '$' && *next != '.')
				continue;
			char *argv[32] = {(char *)tu_ppcc()};
			int n = 1;
			char *save = NULL;
			char *copy = strdup(line + 7);
			for (char *w = strtok_r(copy, " ", &save); w && n < 31;
			     w = strtok_r(NULL, " ", &save))
				argv[n++] = w;
			argv[n] = NULL;
			tu_run r;
			ck_assert_int_eq(tu_run_argv(&r, dir, NULL, NULL, 120, argv), 0);
			ck_assert_msg(r.status == 0, "%s: '%s' exited %d: %s", pages[pg],
				      line, r.status, r.err);
			tu_run_free(&r);
			free(copy);
			ran++;
		}
		free(text);
	}
	ck_assert_int_ge(ran, 5);
	tu_rmtree_free(dir);
}
END_TEST

Suite *suite_cli(void)
{
	return tu_suite("cli", "cli", 300, (const TTest *const[]){
		cli_help_and_version_exit_zero,
		cli_help_names_every_option,
		cli_each_commands_help_names_its_options,
		cli_model_summary_comes_first,
		cli_search_progress_only_on_a_terminal,
		cli_usage_errors_exit_two,
		cli_devices_lists_the_catalogue,
		cli_models_lists_the_catalogue,
		cli_one_command_searches_the_presets,
		cli_one_command_errors_name_the_option,
		cli_plan_names_the_preset_and_its_calibration,
		cli_trainer_option_plans_that_trainers_memory,
		cli_expert_parallel_and_fixed_kinds_say_why,
		cli_usage_errors_name_the_option,
		cli_memory_limit_under_the_reserve_is_the_command_lines,
		cli_headroom_sets_what_a_configuration_leaves_free,
		cli_plan_writes_output_file,
		cli_bad_input_leaves_existing_output_untouched,
		cli_unwritable_output_exits_three,
		cli_reads_stdin_and_names_it,
		cli_check_rejects_mutated_schedule,
		cli_check_reports_json_syntax_position,
		cli_man_page_examples_run,
		NULL});
}
