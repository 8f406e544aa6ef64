/*
 * The formats' table (emit/formats.c) and the one plan driver
 * (plan/compile.c): every row round-trips by its name and its index,
 * --help and ppcc search -h list exactly the table's names, -f takes
 * each and refuses others with the table's list, and ppcc_compile_file
 * honours the memory limit and the budget's admission as ppcc plan does,
 * with the same diagnostics and, where it plans, the same bytes.  A
 * trainer's file (a row that reports) is followed on stderr by exactly
 * one line naming its configuration and figures, with or without -o,
 * for plan and search alike, and its bytes are the emitter's alone.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppcc/compiler.h"
#include "testutil.h"

static char *example(const char *name)
{
	static char buf[2][4096];
	static int k;
	k = (k + 1) % 2;
	snprintf(buf[k], sizeof buf[k], "%s/examples/%s", tu_src(), name);
	return buf[k];
}

/* TU_PPCC with 120 s to run */
#define RUN(r, ...) tu_ppcc_run((r), NULL, NULL, 120, \
				(const char *const[]){__VA_ARGS__, NULL})

START_TEST(formats_round_trip_by_name_and_index)
{
	ck_assert_int_gt(ppcc_n_formats, 0);
	for (int i = 0; i < ppcc_n_formats; i++) {
		const ppcc_format_info *f = &ppcc_formats[i];
		ck_assert_int_eq(f->format, i);
		ck_assert_ptr_eq(ppcc_format_of(i), f);
		ck_assert_ptr_nonnull(f->name);
		ck_assert_ptr_eq(ppcc_format_named(f->name), f);
		ck_assert_ptr_nonnull(f->emit);
		ck_assert_ptr_nonnull(f->title);
		ck_assert(f->bytes_per_action >= 0);
		/* a trainer's settings come from ppcc search -f too */
		ck_assert(!f->admits || f->search);
	}
	ck_assert_ptr_null(ppcc_format_of(-1));
	ck_assert_ptr_null(ppcc_format_of(ppcc_n_formats));
	ck_assert_ptr_null(ppcc_format_named("pdf"));
	ck_assert_ptr_null(ppcc_format_named(NULL));
	ck_assert_ptr_eq(ppcc_format_named("torch-csv"),
			 ppcc_format_of(PPCC_FMT_TORCH_CSV));
}
END_TEST

/* The names of rows that which selects, joined by sep. */
static void joined(char *buf, size_t size, int which, const char *sep)
{
	size_t need = ppcc_format_list(buf, size, which, sep, NULL);
	ck_assert_uint_lt(need, size);
}

START_TEST(help_lists_exactly_the_tables_names)
{
	char want[512], got[512] = "", bar[512];
	joined(want, sizeof want, PPCC_FORMATS_ALL, " ");
	tu_run r;
	RUN(&r, "--help");
	ck_assert_int_eq(r.status, 0);
	/* "FMT:  a, b,\n      c, d\n": the names, in the table's order */
	const char *at = strstr(r.out, "\nFMT: ");
	ck_assert_ptr_nonnull(at);
	at += strlen("\nFMT: ");
	for (;;) {
		size_t n = strcspn(at, "\n");
		char line[256];
		ck_assert_uint_lt(n, sizeof line);
		memcpy(line, at, n);
		line[n] = '\0';
		for (char *w = strtok(line, " ,"); w; w = strtok(NULL, " ,")) {
			if (got[0])
				strcat(got, " ");
			strcat(got, w);
		}
		at += n + (at[n] == '\n');
		if (strncmp(at, "      ", 6) != 0)
			break;
	}
	ck_assert_str_eq(got, want);
	/* ppcc search's -f, in ppcc --help and in ppcc search -h */
	char search[600];
	joined(bar, sizeof bar, PPCC_FORMATS_SEARCH, "|");
	snprintf(search, sizeof search, "[-f|--format %s] [-o|--output FILE]",
		 bar);
	ck_assert_msg(strstr(r.out, search), "no '%s' in:\n%s", search, r.out);
	tu_run_free(&r);
	RUN(&r, "search", "-h");
	ck_assert_int_eq(r.status, 0);
	ck_assert_msg(strstr(r.out, search), "no '%s' in:\n%s", search, r.out);
	tu_run_free(&r);
}
END_TEST

START_TEST(format_option_takes_each_row_and_refuses_others)
{
	char list[512], msg[700];
	for (int i = 0; i < ppcc_n_formats; i++) {
		tu_run r;
		RUN(&r, "-f", (char *)ppcc_formats[i].name, "--help");
		ck_assert_msg(r.status == 0, "-f %s: %s", ppcc_formats[i].name,
			      r.err);
		tu_run_free(&r);
	}
	tu_run r;
	RUN(&r, "-f", "pdf", "--help");
	ck_assert_int_eq(r.status, 2);
	ppcc_format_list(list, sizeof list, PPCC_FORMATS_ALL, ", ", " or ");
	snprintf(msg, sizeof msg, "ppcc: unknown format 'pdf' (%s)\n", list);
	ck_assert_ptr_nonnull(strstr(r.err, msg));
	tu_run_free(&r);
	RUN(&r, "search", example("tiny.yaml"), "-f", "svg");
	ck_assert_int_eq(r.status, 2);
	ppcc_format_list(list, sizeof list, PPCC_FORMATS_SEARCH, ", ", " or ");
	snprintf(msg, sizeof msg, "ppcc: search: unknown format 'svg' (%s)\n",
		 list);
	ck_assert_ptr_nonnull(strstr(r.err, msg));
	tu_run_free(&r);
}
END_TEST

/* ---- ppcc_compile_file against ppcc plan ------------------------------ */

typedef struct lib_diags {
	char text[1 << 14];
	size_t len;
	int errors, notes;
} lib_diags;

static void lib_diag(int severity, const char *file, int line, int col,
		     const char *msg, void *user)
{
	lib_diags *k = user;
	(void)file, (void)line, (void)col;
	k->errors += severity == 0;
	k->notes += severity == 2;
	int n = snprintf(k->text + k->len, sizeof k->text - k->len, "%s\n", msg);
	if (n > 0 && (size_t)n < sizeof k->text - k->len)
		k->len += (size_t)n;
}

/* The library's plan of path in o's settings: its status, its output in
 * *out (free with free()), its diagnostics in k. */
static int lib_plan(const char *path, ppcc_compile_options *o, char **out,
		    lib_diags *k)
{
	size_t n = 0;
	FILE *f = open_memstream(out, &n);
	ck_assert_ptr_nonnull(f);
	memset(k, 0, sizeof *k);
	o->diag = lib_diag;
	o->diag_user = k;
	int err = ppcc_compile_file(f, path, o);
	fclose(f);
	return err;
}

/* Each message of k appears in the CLI's stderr. */
static void same_messages(const lib_diags *k, const char *cli_err)
{
	char copy[sizeof k->text];
	memcpy(copy, k->text, k->len + 1);
	for (char *m = strtok(copy, "\n"); m; m = strtok(NULL, "\n"))
		ck_assert_msg(strstr(cli_err, m), "'%s' not in ppcc plan's:\n%s",
			      m, cli_err);
}

START_TEST(compile_file_honours_the_memory_limit)
{
	const char *tiny = example("tiny.yaml");
	ppcc_compile_options o = PPCC_COMPILE_OPTIONS_INIT;
	lib_diags k;
	char *out;
	tu_run r, plain;
	/* a larger memory than the cluster's changes the plan: the same bytes */
	o.memory_limit_gib = 1000;
	RUN(&r, "plan", (char *)tiny, "--memory-limit", "1000");
	RUN(&plain, "plan", (char *)tiny);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_ne(r.out, plain.out);
	ck_assert_int_eq(lib_plan(tiny, &o, &out, &k), 0);
	ck_assert_str_eq(out, r.out);
	free(out);
	tu_run_free(&r);
	tu_run_free(&plain);
	/* too small: refused with ppcc plan's errors */
	o.memory_limit_gib = 3;
	RUN(&r, "plan", (char *)tiny, "--memory-limit", "3");
	ck_assert_int_eq(r.status, 1);
	int err = lib_plan(tiny, &o, &out, &k);
	ck_assert_msg(err == -2 || err == -3, "status %d", err);
	ck_assert_int_gt(k.errors, 0);
	ck_assert_str_eq(out, "");
	same_messages(&k, r.err);
	free(out);
	tu_run_free(&r);
	/* out of range: an error naming the field */
	o.memory_limit_gib = -1;
	ck_assert_int_eq(lib_plan(tiny, &o, &out, &k), -2);
	ck_assert_ptr_nonnull(strstr(k.text, "options.memory_limit_gib"));
	free(out);
}
END_TEST

START_TEST(compile_file_honours_the_budget)
{
	const char *tiny = example("tiny.yaml");
	ppcc_compile_options o = PPCC_COMPILE_OPTIONS_INIT;
	lib_diags k;
	char *out;
	tu_run r;
	o.format = "json";
	o.max_actions = 10;
	RUN(&r, "plan", (char *)tiny, "-f", "json", "--max-actions", "10");
	ck_assert_int_eq(r.status, 1);
	ck_assert_int_eq(lib_plan(tiny, &o, &out, &k), -2);
	ck_assert_int_eq(k.errors, 1);
	ck_assert_ptr_nonnull(strstr(k.text, "over the budget of 10 actions"));
	same_messages(&k, r.err);
	free(out);
	tu_run_free(&r);
	o.max_actions = 0;
	o.max_work = 10;
	RUN(&r, "plan", (char *)tiny, "-f", "json", "--max-work", "10");
	ck_assert_int_eq(r.status, 1);
	ck_assert_int_eq(lib_plan(tiny, &o, &out, &k), -2);
	ck_assert_ptr_nonnull(strstr(k.text, "partition cells"));
	same_messages(&k, r.err);
	free(out);
	tu_run_free(&r);
	/* raised past the default: ppcc plan's note, the same plan */
	o.max_work = (long long)PPCC_MAX_WORK_DEFAULT * 2;
	char work[32];
	snprintf(work, sizeof work, "%lld", o.max_work);
	RUN(&r, "plan", (char *)tiny, "-f", "json", "--max-work", work);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(lib_plan(tiny, &o, &out, &k), 0);
	ck_assert_int_eq(k.notes, 1);
	same_messages(&k, r.err);
	ck_assert_str_eq(out, r.out);
	free(out);
	tu_run_free(&r);
	/* a version-1 caller's struct ends before the budget: not read */
	o.version = 1;
	o.max_actions = 10;
	ck_assert_int_eq(lib_plan(tiny, &o, &out, &k), 0);
	ck_assert_int_eq(k.errors + k.notes, 0);
	free(out);
}
END_TEST

START_TEST(compile_file_writes_every_format_as_ppcc_plan)
{
	char *dir = tu_mkdtemp();
	for (int i = 0; i < ppcc_n_formats; i++) {
		/* the trainers name a transformer's modules; torchtitan
		 * runs llama3-8b's default (d 1 beside a pipeline) in fp32
		 * and refuses it, and llama3-70b's ZeRO-1 (its FSDP shards
		 * the gradients): it runs llama3-70b at ZeRO 2 */
		int tt = strncmp(ppcc_formats[i].name, "torchtitan", 10) == 0;
		char zero2[4096];
		if (tt) {
			char *text = tu_read_src("examples/llama3-70b.yaml");
			char *at = strstr(text, "  zero: 1\n");
			ck_assert_ptr_nonnull(at);
			at[8] = '2';
			tu_write_in(zero2, sizeof zero2, dir, "llama3-70b.yaml",
				    text);
			free(text);
		}
		const char *tiny = tt ? zero2 : example(
			!ppcc_formats[i].admits ? "tiny.yaml" : "llama3-8b.yaml");
		if (ppcc_formats[i].binary)
			continue; /* Graphviz's PNG: compared by the CLI suites */
		ppcc_compile_options o = PPCC_COMPILE_OPTIONS_INIT;
		lib_diags k;
		char *out;
		tu_run r;
		o.format = ppcc_formats[i].name;
		o.threads = 1;
		RUN(&r, "plan", (char *)tiny, "-f", (char *)o.format);
		ck_assert_msg(r.status == 0, "-f %s: %s", o.format, r.err);
		ck_assert_int_eq(lib_plan(tiny, &o, &out, &k), 0);
		ck_assert_msg(strcmp(out, r.out) == 0, "-f %s differs", o.format);
		free(out);
		tu_run_free(&r);
	}
	tu_rmtree_free(dir);
}
END_TEST


/* The line ppcc prints after model's plan in format name: its
 * configuration (b 1, no recompute) and figures read from the plan's
 * JSON, formatted here. */
static void expected_line(char *out, size_t n, const ppcc_format_info *f,
			  const char *model)
{
	tu_run r;
	const char *name = f->name;
	/* the plan for the format's trainer, as the format plans it (its
	 * memory, its attention kernel) */
	if (f->trainer > 0)
		RUN(&r, "plan", model, "-f", "json", "--trainer",
		    ppcc_trainer_name(f->trainer - 1));
	else
		RUN(&r, "plan", model, "-f", "json");
	ck_assert_msg(r.status == 0, "%s", r.err);
	json_error_t je;
	json_t *j = json_loads(r.out, 0, &je);
	ck_assert_msg(j, "%s", je.text);
	json_t *it = json_object_get(j, "iteration");
	json_t *peaks = json_object_get(json_object_get(j, "estimate"),
					"peak_memory_bytes");
	size_t fullest = 0;
	for (size_t k = 1; k < json_array_size(peaks); k++)
		if (json_number_value(json_array_get(peaks, k)) >
		    json_number_value(json_array_get(peaks, fullest)))
			fullest = k;
#define INT(o, key) (int)json_integer_value(json_object_get(o, key))
	snprintf(out, n, "ppcc: note: wrote %s for t %d x p %d x d %d x cp %d, "
		 "%s with v %d, b 1 (m %d), recompute none, ZeRO-%d: iteration "
		 "%.1f ms, MFU %.1f%%, peak %.2f GiB (rank %zu)\n", name,
		 INT(it, "tensor_parallel"), INT(j, "stages"),
		 INT(it, "data_parallel"), INT(it, "context_parallel"),
		 json_string_value(json_object_get(j, "schedule")),
		 INT(j, "chunks"), INT(j, "microbatches"), INT(it, "zero"),
		 json_number_value(json_object_get(it, "iteration_ms")),
		 100 * json_number_value(json_object_get(it, "mfu")),
		 json_number_value(json_array_get(peaks, fullest)) /
		 (1024.0 * 1024.0 * 1024.0), fullest);
#undef INT
	json_decref(j);
	tu_run_free(&r);
}

START_TEST(a_trainers_file_is_followed_by_one_line_naming_its_configuration)
{
	char *dir = tu_mkdtemp();
	/* llama3-8b over two replicas at ZeRO 1, which Megatron-LM and
	 * DeepSpeed run beside a pipeline, and at ZeRO 2, which torchtitan
	 * runs (v0.2.2 trains bf16 beside a pipeline only with FSDP, whose
	 * gradients are sharded) */
	char models[2][4096];
	char *text = tu_read_src("examples/llama3-8b.yaml");
	size_t len = strlen(text);
	char *base = malloc(len + 64);
	ck_assert_ptr_nonnull(base);
	/* the torchtitan one names its trainer, so that its JSON plan
	 * counts torchtitan's memory as -f torchtitan does */
	for (int z = 0; z < 2; z++) {
		snprintf(base, len + 64, "%s  zero: %d\n  data_parallel: 2\n%s",
			 text, z + 1, z ? "  trainer: torchtitan\n" : "");
		tu_write_in(models[z], sizeof models[z], dir,
			    z ? "llama2.yaml" : "llama1.yaml", base);
	}
	free(base);
	free(text);
	int reporting = 0;
	for (int i = 0; i < ppcc_n_formats; i++) {
		const ppcc_format_info *f = &ppcc_formats[i];
		if (f->binary)
			continue;
		/* the trainers' rows, PyTorch's schedule CSV among them */
		ck_assert_int_eq(f->reports, f->admits != NULL ||
				 i == PPCC_FMT_TORCH_CSV);
		char want[1024], file[4096];
		tu_run r, ro;
		const char *model =
			models[strncmp(f->name, "torchtitan", 10) == 0];
		RUN(&r, "plan", model, "-f", f->name);
		ck_assert_msg(r.status == 0, "-f %s: %s", f->name, r.err);
		snprintf(file, sizeof file, "%s/out.%s", dir, f->name);
		RUN(&ro, "plan", model, "-f", f->name, "-o", file);
		ck_assert_msg(ro.status == 0, "-f %s -o: %s", f->name, ro.err);
		/* stdout: the emitter's bytes, as the library writes them */
		ppcc_compile_options o = PPCC_COMPILE_OPTIONS_INIT;
		lib_diags k;
		char *lib;
		o.format = f->name;
		ck_assert_int_eq(lib_plan(model, &o, &lib, &k), 0);
		ck_assert_msg(strcmp(lib, r.out) == 0, "-f %s: stdout differs",
			      f->name);
		char *written = tu_read_file(file, NULL);
		ck_assert_msg(written && strcmp(written, lib) == 0,
			      "-f %s: the file differs", f->name);
		ck_assert_str_eq(ro.out, "");
		/* stderr: the one line, the same with -o */
		if (f->reports) {
			expected_line(want, sizeof want, f, model);
			reporting++;
		} else {
			want[0] = '\0';
		}
		ck_assert_str_eq(r.err, want);
		ck_assert_str_eq(ro.err, want);
		free(written);
		free(lib);
		tu_run_free(&r);
		tu_run_free(&ro);
		if (!f->reports || !f->search)
			continue;
		/* the search's winner: the line ppcc plan prints for it */
		/* recompute fixed: the file's, which winner.yaml plans with */
		RUN(&r, "search", model, "-f", f->name, "--fix",
		    "recompute=none");
		ck_assert_msg(r.status == 0, "search -f %s: %s", f->name, r.err);
		RUN(&ro, "search", model, "-f", f->name, "--fix",
		    "recompute=none", "-o", file);
		ck_assert_str_eq(ro.err, r.err);
		int t, p, d, cp, v, b, m, z;
		char kind[32], rc[16];
		ck_assert_msg(sscanf(r.err, "ppcc: note: wrote %*s for t %d x p %d "
				     "x d %d x cp %d, %31s with v %d, b %d (m %d), "
				     "recompute %15[a-z], ZeRO-%d:", &t, &p, &d,
				     &cp, kind, &v, &b, &m, rc, &z) == 10,
			      "search -f %s: %s", f->name, r.err);
		ck_assert_ptr_null(strchr(strchr(r.err, '\n') + 1, '\n'));
		char *src = tu_read_src("examples/llama3-8b.yaml");
		char *cut = strstr(src, "\npipeline:");
		if (cut)
			cut[1] = '\0';
		char yaml[8192], path[4096];
		snprintf(yaml, sizeof yaml, "%s%spipeline:\n  schedule: %s\n"
			 "  stages: %d\n  microbatches: %d\n  chunks: %d\n"
			 "  tensor_parallel: %d\n  data_parallel: %d\n"
			 "  context_parallel: %d\n  zero: %d\n", src,
			 cut ? "" : "\n", kind, p, m, v, t, d, cp, z);
		free(src);
		ck_assert_int_eq(b, 1);
		ck_assert_str_eq(rc, "none");
		tu_write_in(path, sizeof path, dir, "winner.yaml", yaml);
		tu_run w;
		RUN(&w, "plan", path, "-f", f->name);
		ck_assert_msg(w.status == 0, "%s", w.err);
		ck_assert_str_eq(w.out, r.out);
		/* the same line, which names no file */
		ck_assert_str_eq(w.err, r.err);
		tu_run_free(&w);
		tu_run_free(&r);
		tu_run_free(&ro);
	}
	ck_assert_int_eq(reporting, 6); /* four trainers (torchtitan twice), the CSV */
	/* a search's JSON, and the trainers' files' notes alone on stderr */
	tu_run r;
	RUN(&r, "search", example("tiny.yaml"), "-f", "json");
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.err, "");
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

Suite *suite_formats(void)
{
	Suite *s = tu_suite("formats", "table", 0, (const TTest *const[]){
		formats_round_trip_by_name_and_index,
		help_lists_exactly_the_tables_names,
		format_option_takes_each_row_and_refuses_others,
		NULL});
	tu_tcase(s, "compile", 300, (const TTest *const[]){
		compile_file_honours_the_memory_limit,
		compile_file_honours_the_budget,
		compile_file_writes_every_format_as_ppcc_plan,
		a_trainers_file_is_followed_by_one_line_naming_its_configuration,
		NULL});
	return s;
}
