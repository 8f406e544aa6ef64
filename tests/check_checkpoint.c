/*
 * Tests of checkpoints (src/runtime/checkpoint.c, ppcc/checkpoint.h):
 * which layers a rank holds, a save loaded back bit for bit, every
 * damaged byte and every truncation refused, another model refused, an
 * incomplete save never committed; and the example trainer stopped,
 * saved and resumed onto other plans (other p, other schedule kinds,
 * local and MPI), its losses after the restart and its final weights
 * bitwise equal to a run that never stopped, also after a save killed
 * with SIGKILL at any point.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ppcc/checkpoint.h"
#include "testutil.h"

Suite *suite_checkpoint(void);

typedef struct ck_log {
	char text[8192];
	size_t len;
} ck_log;

static void ck_collect(int rank, const char *line, void *user)
{
	ck_log *l = user;
	(void)rank;
	int n = snprintf(l->text + l->len, sizeof l->text - l->len, "%s\n", line);
	if (n > 0 && l->len + (size_t)n < sizeof l->text)
		l->len += (size_t)n;
}

static ppcc_ckpt_model model(const char *name, int n_layers, ck_log *log)
{
	log->len = 0;
	log->text[0] = '\0';
	return (ppcc_ckpt_model){PPCC_CKPT_VERSION, name, n_layers, 0, ck_collect, log,
				 0.0, NULL};
}

START_TEST(layers_of_a_rank_follow_the_stage_table)
{
	/* p = 2, v = 2: stages 0..3 on ranks 0, 1, 0, 1 */
	ppcc_stage_info st[4] = {{0, 0, 0, 0, 1, 0, 8}, {1, 1, 0, 2, 3, 8, 8},
				 {2, 0, 1, 4, 5, 8, 8}, {3, 1, 1, 6, 7, 8, 0}};
	ppcc_schedule s = {PPCC_SCHEDULE_VERSION, PPCC_SCHED_INTERLEAVED, 2, 2, 4, 4,
			   st, NULL, 0};
	int owned[9]; /* room for the 9-layer call below */
	ck_assert_int_eq(ppcc_ckpt_layers_of(owned, 8, &s, 0), 4);
	int want0[8] = {1, 1, 0, 0, 1, 1, 0, 0};
	ck_assert_mem_eq(owned, want0, sizeof want0);
	ck_assert_int_eq(ppcc_ckpt_layers_of(owned, 8, &s, 1), 4);
	ck_assert_int_eq(owned[0] + owned[1] + owned[4] + owned[5], 0);
	ck_assert_int_eq(owned[2] + owned[3] + owned[6] + owned[7], 4);
	/* a model of 9 layers is not covered; a gap is refused */
	ck_assert_int_eq(ppcc_ckpt_layers_of(owned, 9, &s, 0), PPCC_RT_EINPUT);
	st[2].first_layer = 5;
	ck_assert_int_eq(ppcc_ckpt_layers_of(owned, 8, &s, 0), PPCC_RT_EINPUT);
}
END_TEST

/* A two-layer model: layer 0 "emb" with w 3x2 (f64) and an i32 counter,
 * layer 1 "head" with w 2 (f32). */
typedef struct tiny {
	double w0[6];
	int32_t n0[1];
	float w1[2];
	ppcc_ckpt_tensor t0[2], t1[1];
	ppcc_ckpt_layer l[2];
} tiny;

static void tiny_init(tiny *t, double seed)
{
	for (int i = 0; i < 6; i++)
		t->w0[i] = seed * (i + 1) / 7.0;
	t->n0[0] = (int32_t)(seed * 10);
	t->w1[0] = (float)(seed / 3);
	t->w1[1] = (float)-seed;
	t->t0[0] = (ppcc_ckpt_tensor){"w", PPCC_CKPT_F64, 2, {3, 2, 0, 0}, t->w0};
	t->t0[1] = (ppcc_ckpt_tensor){"count", PPCC_CKPT_I32, 1, {1, 0, 0, 0}, t->n0};
	t->t1[0] = (ppcc_ckpt_tensor){"w", PPCC_CKPT_F32, 1, {2, 0, 0, 0}, t->w1};
	t->l[0] = (ppcc_ckpt_layer){PPCC_CKPT_VERSION, 0, "emb", 2, t->t0};
	t->l[1] = (ppcc_ckpt_layer){PPCC_CKPT_VERSION, 1, "head", 1, t->t1};
}

static void tiny_save(const char *dir, uint64_t step, double seed)
{
	ck_log log;
	ppcc_ckpt_model m = model("tiny", 2, &log);
	tiny t;
	tiny_init(&t, seed);
	for (int l = 0; l < 2; l++)
		ck_assert_int_eq(ppcc_ckpt_save_layer(&m, dir, step, &t.l[l]), 0);
	ck_assert_msg(ppcc_ckpt_commit(&m, dir, step) == 0, "%s", log.text);
}

/* CRC-32 bit by bit, as zlib defines it. */
static uint32_t crc32_ref(const unsigned char *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
	}
	return ~c;
}

/* The trailer of a shard and of the manifest is the CRC-32 (zlib's) of
 * every byte before it, as ppcc_runtime(3) documents. */
START_TEST(trailers_are_zlib_crc32_of_what_precedes)
{
	ck_assert_uint_eq(crc32_ref((const unsigned char *)"123456789", 9), 0xCBF43926u);
	char *dir = tu_mkdtemp(), path[2 * PATH_MAX];
	tiny_save(dir, 5, 0.5);
	const char *files[] = {"layer-0000.shard", "layer-0001.shard", "MANIFEST"};
	for (int k = 0; k < 3; k++) {
		snprintf(path, sizeof path, "%s/step-000000000005/%s", dir, files[k]);
		size_t n;
		char *t = tu_read_file(path, &n);
		ck_assert_ptr_nonnull(t);
		ck_assert_uint_gt(n, 15);
		char want[16];
		snprintf(want, sizeof want, "crc32 %08x\n",
			 (unsigned)crc32_ref((const unsigned char *)t, n - 15));
		ck_assert_msg(memcmp(t + n - 15, want, 15) == 0, "%s: trailer %.15s, want %s",
			      files[k], t + n - 15, want);
		free(t);
	}
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(saved_layers_load_back_bit_for_bit)
{
	char *dir = tu_mkdtemp();
	ck_log log;
	ppcc_ckpt_model m = model("tiny", 2, &log);
	tiny_save(dir, 7, 1.5);
	uint64_t step = 0;
	ck_assert_int_eq(ppcc_ckpt_latest(&step, &m, dir), 0);
	ck_assert_uint_eq(step, 7);
	tiny want, got;
	tiny_init(&want, 1.5);
	tiny_init(&got, 0);
	for (int l = 0; l < 2; l++)
		ck_assert_msg(ppcc_ckpt_load_layer(&m, dir, 7, &got.l[l]) == 0, "%s", log.text);
	ck_assert_mem_eq(got.w0, want.w0, sizeof want.w0);
	ck_assert_int_eq(got.n0[0], 15);
	ck_assert_mem_eq(got.w1, want.w1, sizeof want.w1);
	/* a later save becomes the checkpoint; the earlier one stays whole */
	tiny_save(dir, 9, -2.0);
	ck_assert_int_eq(ppcc_ckpt_latest(&step, &m, dir), 0);
	ck_assert_uint_eq(step, 9);
	tiny_init(&got, 0);
	ck_assert_int_eq(ppcc_ckpt_load_layer(&m, dir, 7, &got.l[0]), 0);
	ck_assert_mem_eq(got.w0, want.w0, sizeof want.w0);
	/* structs of another version are refused */
	got.l[0].version = PPCC_CKPT_VERSION + 1;
	ck_assert_int_eq(ppcc_ckpt_save_layer(&m, dir, 11, &got.l[0]), PPCC_RT_EINPUT);
	ck_assert_int_eq(ppcc_ckpt_load_layer(&m, dir, 9, &got.l[0]), PPCC_RT_EINPUT);
	m.version = 0;
	ck_assert_int_eq(ppcc_ckpt_commit(&m, dir, 9), PPCC_RT_EINPUT);
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(another_models_checkpoint_is_refused_with_the_reason)
{
	char *dir = tu_mkdtemp();
	ck_log log;
	uint64_t step;
	tiny_save(dir, 3, 1.0);

	ppcc_ckpt_model other = model("other", 2, &log);
	ck_assert_int_eq(ppcc_ckpt_latest(&step, &other, dir), PPCC_RT_EMISMATCH);
	ck_assert_msg(strstr(log.text, "MANIFEST:2: error: a checkpoint of model "
			     "'tiny', not 'other'"), "%s", log.text);

	ppcc_ckpt_model three = model("tiny", 3, &log);
	ck_assert_int_eq(ppcc_ckpt_latest(&step, &three, dir), PPCC_RT_EMISMATCH);
	ck_assert_msg(strstr(log.text, "a checkpoint of 2 layers; model 'tiny' has 3"),
		      "%s", log.text);

	ppcc_ckpt_model m = model("tiny", 2, &log);
	tiny t;
	tiny_init(&t, 0);
	t.t0[0].dims[1] = 3; /* w 3x3 */
	double big[9] = {0};
	t.t0[0].data = big;
	ck_assert_int_eq(ppcc_ckpt_load_layer(&m, dir, 3, &t.l[0]), PPCC_RT_EMISMATCH);
	ck_assert_msg(strstr(log.text, "layer-0000.shard:8: error: layer 0 tensor 0 "
			     "is 'w' f64 3x2 in the checkpoint, 'w' f64 3x3 in the model"),
		      "%s", log.text);
	for (int i = 0; i < 9; i++)
		ck_assert(big[i] == 0); /* nothing loaded */

	tiny_init(&t, 0);
	t.l[1].name = "lm_head";
	ck_assert_int_eq(ppcc_ckpt_load_layer(&m, dir, 3, &t.l[1]), PPCC_RT_EMISMATCH);
	ck_assert_msg(strstr(log.text, "layer 1 is 'head' in the checkpoint, "
			     "'lm_head' in the model"), "%s", log.text);
	tu_rmtree_free(dir);
}
END_TEST

static char *shard_path(char *out, size_t n, const char *dir, uint64_t step,
			int layer)
{
	snprintf(out, n, "%s/step-%012llu/layer-%04d.shard", dir,
		 (unsigned long long)step, layer);
	return out;
}

static void write_bytes(const char *path, const char *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

/* Every single flipped byte, and every shorter length, of a shard is
 * refused; the intact shard is then accepted again. */
START_TEST(every_flipped_byte_and_every_truncation_is_refused)
{
	char *dir = tu_mkdtemp(), path[2 * PATH_MAX];
	ck_log log;
	ppcc_ckpt_model m = model("tiny", 2, &log);
	tiny_save(dir, 1, 0.25);
	shard_path(path, sizeof path, dir, 1, 0);
	size_t n;
	char *orig = tu_read_file(path, &n);
	ck_assert_ptr_nonnull(orig);
	ck_assert_uint_gt(n, 100);
	char *bad = malloc(n);
	tiny t;
	for (size_t i = 0; i < n; i++) {
		memcpy(bad, orig, n);
		bad[i] ^= 0x01;
		write_bytes(path, bad, n);
		tiny_init(&t, 0);
		int err = ppcc_ckpt_load_layer(&m, dir, 1, &t.l[0]);
		ck_assert_msg(err == PPCC_RT_ECHECKSUM, "byte %zu flipped: status %d", i, err);
		ck_assert_msg(t.w0[0] == 0 && t.n0[0] == 0, "byte %zu: loaded anyway", i);
	}
	ck_assert_msg(strstr(log.text, "does not match the manifest's"), "%s", log.text);
	for (size_t k = 0; k < n; k++) {
		write_bytes(path, orig, k);
		tiny_init(&t, 0);
		log.len = 0;
		ck_assert_int_eq(ppcc_ckpt_load_layer(&m, dir, 1, &t.l[0]), PPCC_RT_ECHECKSUM);
		ck_assert_msg(strstr(log.text, "error: truncated: "), "%zu: %s", k, log.text);
	}
	write_bytes(path, orig, n);
	tiny_init(&t, 0);
	ck_assert_int_eq(ppcc_ckpt_load_layer(&m, dir, 1, &t.l[0]), 0);
	ck_assert(t.w0[5] == 0.25 * 6 / 7.0);
	/* a damaged manifest is refused too */
	char mf[PATH_MAX + 64];
	snprintf(mf, sizeof mf, "%s/step-%012d/MANIFEST", dir, 1);
	size_t mn;
	char *mtext = tu_read_file(mf, &mn);
	mtext[10] ^= 0x20;
	write_bytes(mf, mtext, mn);
	uint64_t step;
	log.len = 0;
	ck_assert_int_eq(ppcc_ckpt_latest(&step, &m, dir), PPCC_RT_ECHECKSUM);
	ck_assert_msg(strstr(log.text, "MANIFEST: error: checksum does not match"), "%s",
		      log.text);
	free(mtext);
	free(bad);
	free(orig);
	tu_rmtree_free(dir);
}
END_TEST

/* A shard whose tensors' sizes add up past 2^64 (four u8 tensors of
 * 2^62 - 1 bytes and one of 14: 10 bytes modulo 2^64) with a payload of
 * those 10 bytes, its checksums and manifest entry all correct, is
 * refused: its tensors hold more bytes than the file, and a loader that
 * believed it would copy 2^62 bytes into the caller's tensors. */
START_TEST(tensor_sizes_that_wrap_around_are_refused)
{
	char *dir = tu_mkdtemp(), path[2 * PATH_MAX], line[128];
	ck_log log;
	ppcc_ckpt_model m = model("tiny", 2, &log);
	tiny_save(dir, 5, 1.0);
	char shard[1024];
	int n = snprintf(shard, sizeof shard, "ppcc-checkpoint-shard 1\nendian little\n"
			 "model tiny\nlayers 2\nlayer 0 emb\nstep 5\ntensors 5\n");
	for (char c = 'a'; c <= 'd'; c++)
		n += snprintf(shard + n, sizeof shard - (size_t)n,
			      "tensor %c u8 4611686018427387903\n", c);
	n += snprintf(shard + n, sizeof shard - (size_t)n, "tensor e u8 14\npayload 10\n");
	memset(shard + n, 'x', 10);
	n += 10;
	uint32_t crc = crc32_ref((const unsigned char *)shard, (size_t)n);
	n += snprintf(shard + n, sizeof shard - (size_t)n, "crc32 %08x\n", (unsigned)crc);
	write_bytes(shard_path(path, sizeof path, dir, 5, 0), shard, (size_t)n);
	/* the manifest, with shard 1 as it was and shard 0 the one above */
	size_t n1;
	char *s1 = tu_read_file(shard_path(path, sizeof path, dir, 5, 1), &n1);
	ck_assert_ptr_nonnull(s1);
	char mtext[512];
	int k = snprintf(mtext, sizeof mtext, "ppcc-checkpoint 1\nmodel tiny\nlayers 2\n"
			 "step 5\nshard 0 layer-0000.shard %d %08x\nshard 1 layer-0001.shard "
			 "%zu %.8s\n", n, (unsigned)crc, n1, s1 + n1 - 9);
	snprintf(line, sizeof line, "crc32 %08x\n",
		 (unsigned)crc32_ref((const unsigned char *)mtext, (size_t)k));
	snprintf(mtext + k, sizeof mtext - (size_t)k, "%s", line);
	snprintf(path, sizeof path, "%s/step-000000000005/MANIFEST", dir);
	write_bytes(path, mtext, strlen(mtext));
	free(s1);
	/* a caller whose layer has the same shapes, over 16-byte buffers */
	static unsigned char buf[5][16];
	ppcc_ckpt_tensor t[5];
	for (int i = 0; i < 5; i++)
		t[i] = (ppcc_ckpt_tensor){(const char *[]){"a", "b", "c", "d", "e"}[i],
					  PPCC_CKPT_U8, 1, {i < 4 ? 4611686018427387903 : 14, 0, 0, 0},
					  buf[i]};
	ppcc_ckpt_layer layer = {PPCC_CKPT_VERSION, 0, "emb", 5, t};
	uint64_t step;
	ck_assert_msg(ppcc_ckpt_latest(&step, &m, dir) == 0, "%s", log.text);
	ck_assert_int_eq(ppcc_ckpt_load_layer(&m, dir, 5, &layer), PPCC_RT_ECHECKSUM);
	ck_assert_msg(strstr(log.text, "layer-0000.shard:8: error: truncated: the tensors "
			     "so far hold "), "%s", log.text);
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(an_incomplete_save_is_never_committed)
{
	char *dir = tu_mkdtemp(), path[2 * PATH_MAX];
	ck_log log;
	ppcc_ckpt_model m = model("tiny", 2, &log);
	tiny_save(dir, 4, 1.0);
	tiny t;
	tiny_init(&t, 2.0);
	/* step 6: only layer 1 saved (its rank died before layer 0's) */
	ck_assert_int_eq(ppcc_ckpt_save_layer(&m, dir, 6, &t.l[1]), 0);
	ck_assert_int_eq(ppcc_ckpt_commit(&m, dir, 6), PPCC_RT_ECHECKSUM);
	ck_assert_msg(strstr(log.text, "layer-0000.shard: error: incomplete: layer 0 "
			     "was not saved"), "%s", log.text);
	uint64_t step;
	ck_assert_int_eq(ppcc_ckpt_latest(&step, &m, dir), 0);
	ck_assert_uint_eq(step, 4);
	/* a committed checkpoint that lost a shard is refused */
	unlink(shard_path(path, sizeof path, dir, 4, 1));
	log.len = 0;
	ck_assert_int_eq(ppcc_ckpt_load_layer(&m, dir, 4, &t.l[1]), PPCC_RT_ECHECKSUM);
	ck_assert_msg(strstr(log.text, "incomplete: the manifest lists layer 1's shard"),
		      "%s", log.text);
	/* no checkpoint at all */
	char *empty = tu_mkdtemp();
	log.len = 0;
	ck_assert_int_eq(ppcc_ckpt_latest(&step, &m, empty), PPCC_RT_EIO);
	ck_assert_msg(strstr(log.text, "LATEST: error: cannot read"), "%s", log.text);
	tu_rmtree_free(empty);
	tu_rmtree_free(dir);
}
END_TEST

/* ---- the trainer ----------------------------------------------------------- */

/* The 1-based line where a and b first differ. */
static int first_difference(const char *a, const char *b)
{
	int line = 1;
	for (; *a && *a == *b; a++, b++)
		line += *a == '\n';
	return line;
}

/* Runs argv; 1 when it is mpirun and MPI is missing (skip). */
static int run(tu_run *r, char *const argv[], char *const extra_env)
{
	char *env[] = {"ASAN_OPTIONS=detect_leaks=0",
		       "OMPI_MCA_btl_vader_single_copy_mechanism=none", extra_env, NULL};
	ck_assert_int_eq(tu_run_argv(r, NULL, NULL, env, 60, argv), 0);
	return r->status == 127 || (r->status == 2 && strstr(r->err, "built without MPI"));
}

static int run_ok(char *const argv[], const char *what)
{
	tu_run r;
	int skip = run(&r, argv, NULL);
	ck_assert_msg(skip || r.status == 0, "%s: exit %d\n%s%s", what, r.status, r.out,
		      r.err);
	tu_run_free(&r);
	return skip;
}

/* A trainer run: over mpirun with np ranks when np > 0. */
static int trainer(const char *json, int np, const char *steps, const char *out,
		   const char *save, const char *save_at, const char *resume,
		   const char *what)
{
	char tr[PATH_MAX], npbuf[8];
	char *argv[32];
	int k = 0;
	tu_build_path(tr, sizeof tr, "trainer");
	snprintf(npbuf, sizeof npbuf, "%d", np);
	if (np > 0) {
		char *mpi[] = {"mpirun", "-np", npbuf, "--oversubscribe", "--allow-run-as-root",
			       "--mca", "btl", "self,vader"};
		for (int i = 0; i < 8; i++)
			argv[k++] = mpi[i];
	}
	argv[k++] = tr;
	if (np > 0) {
		argv[k++] = "--transport";
		argv[k++] = "mpi";
	}
	if (json) {
		argv[k++] = "--schedule";
		argv[k++] = (char *)json;
	}
	argv[k++] = "--steps";
	argv[k++] = (char *)steps;
	argv[k++] = "--output";
	argv[k++] = (char *)out;
	if (save) {
		argv[k++] = "--save";
		argv[k++] = (char *)save;
		argv[k++] = "--save-at";
		argv[k++] = (char *)save_at;
	}
	if (resume) {
		argv[k++] = "--resume";
		argv[k++] = (char *)resume;
	}
	argv[k] = NULL;
	return run_ok(argv, what);
}

static void plan(char *json, size_t n, const char *dir, const char *kind, int p)
{
	char bin[PATH_MAX], model[PATH_MAX], np[8];
	tu_build_path(bin, sizeof bin, "ppcc");
	snprintf(model, sizeof model, "%s/examples/trainer/mlp.yaml", tu_src());
	snprintf(json, n, "%s/%s-%d.json", dir, kind, p);
	snprintf(np, sizeof np, "%d", p);
	int inter = strcmp(kind, "interleaved") == 0;
	char *argv[] = {bin, "plan", "-f", "json", "-s", (char *)kind, "-p", np, "-m", "8",
			"-o", json, model, inter ? "-v" : NULL, "2", NULL};
	run_ok(argv, "ppcc plan");
}

/* Train 3 steps under plan A (save at 3, stop), resume under plan B to
 * step 6: the losses of steps 3..5 and the final weights are those of 6
 * uninterrupted steps, bit for bit. */
START_TEST(trainer_resumes_onto_another_plan_bitwise)
{
	char *dir = tu_mkdtemp(), full[PATH_MAX], out[PATH_MAX], ck[PATH_MAX];
	char j1f1b2[PATH_MAX], jgpipe4[PATH_MAX], jinter2[PATH_MAX], jinter4[PATH_MAX];
	char j1f1b1[PATH_MAX];
	plan(j1f1b2, sizeof j1f1b2, dir, "1f1b", 2);
	plan(j1f1b1, sizeof j1f1b1, dir, "1f1b", 1);
	plan(jgpipe4, sizeof jgpipe4, dir, "gpipe", 4);
	plan(jinter2, sizeof jinter2, dir, "interleaved", 2);
	plan(jinter4, sizeof jinter4, dir, "interleaved", 4);
	snprintf(full, sizeof full, "%s/full", dir);
	trainer(NULL, 0, "6", full, NULL, NULL, NULL, "uninterrupted");
	char *ref = tu_sorted_lines(full, 3);
	ck_assert_msg(strstr(ref, "loss 3 ") && strstr(ref, "loss 5 ") &&
		      !strstr(ref, "loss 2 ") && strstr(ref, "param 7 "), "%s", ref);

	struct {
		const char *a;
		int np_a;
		const char *b;
		int np_b;
		const char *what;
	} cases[] = {
		{NULL, 0, NULL, 0, "same plan (compiled-in 1f1b p=2), local"},
		{NULL, 0, jgpipe4, 0, "1f1b p=2 -> gpipe p=4, local"},
		{j1f1b2, 0, jinter2, 0, "1f1b p=2 -> interleaved p=2 v=2, local"},
		{jinter4, 0, j1f1b1, 0, "interleaved p=4 -> 1f1b p=1, local"},
		{j1f1b2, 2, j1f1b2, 2, "same plan 1f1b p=2, mpi"},
		{j1f1b2, 2, jinter4, 4, "1f1b p=2 -> interleaved p=4 v=2, mpi"},
		{jgpipe4, 4, j1f1b2, 0, "gpipe p=4 mpi -> 1f1b p=2 local"},
	};
	int mpi = 1;
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		if ((cases[c].np_a || cases[c].np_b) && !mpi)
			continue;
		snprintf(ck, sizeof ck, "%s/ck%zu", dir, c);
		snprintf(out, sizeof out, "%s/first%zu", dir, c);
		if (trainer(cases[c].a, cases[c].np_a, "3", out, ck, "3", NULL, cases[c].what)) {
			if (!tu_mpi_left_out("checkpoint_restarts"))
				tu_skip("checkpoint_restarts", "no mpirun or no MPI in "
					"the trainer; MPI restarts not run");
			mpi = 0;
			continue;
		}
		snprintf(out, sizeof out, "%s/resumed%zu", dir, c);
		trainer(cases[c].b, cases[c].np_b, "6", out, NULL, NULL, ck, cases[c].what);
		char *got = tu_sorted_lines(out, 0);
		ck_assert_msg(strcmp(got, ref) == 0, "%s: the resumed run differs from "
			      "line %d on", cases[c].what, first_difference(got, ref));
		free(got);
	}
	free(ref);
	tu_rmtree_free(dir);
}
END_TEST

static long file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* The trainer refuses a truncated shard, a flipped byte and another
 * model's checkpoint; and a save killed at any point (in the first shard,
 * half way, in the manifest, in LATEST) leaves the previous checkpoint,
 * from which the run continues bit for bit. */
START_TEST(trainer_refuses_damage_and_survives_a_killed_save)
{
	char *dir = tu_mkdtemp(), full[PATH_MAX], out[PATH_MAX], ck[PATH_MAX];
	char path[2 * PATH_MAX], tr[PATH_MAX];
	tu_build_path(tr, sizeof tr, "trainer");
	snprintf(full, sizeof full, "%s/full", dir);
	trainer(NULL, 0, "6", full, NULL, NULL, NULL, "uninterrupted");
	char *ref = tu_sorted_lines(full, 2);
	snprintf(ck, sizeof ck, "%s/ck", dir);
	snprintf(out, sizeof out, "%s/first", dir);
	trainer(NULL, 0, "2", out, ck, "2", NULL, "save at 2");

	/* the bytes a save writes: shards, manifest, LATEST */
	long total = 18;
	for (int l = 0; l < 8; l++)
		total += file_size(shard_path(path, sizeof path, ck, 2, l));
	snprintf(path, sizeof path, "%s/step-%012d/MANIFEST", ck, 2);
	long manifest = file_size(path);
	total += manifest;
	long kill_at[] = {1, total / 2, total - 18 - manifest / 2, total - 5};
	for (size_t k = 0; k < sizeof kill_at / sizeof *kill_at; k++) {
		char env[64];
		snprintf(env, sizeof env, "PPCC_CKPT_KILL_AT=%ld", kill_at[k]);
		char *argv[] = {tr, "--steps", "5", "--output", out, "--resume", ck,
				"--save", ck, "--save-at", "4", NULL};
		tu_run r;
		run(&r, argv, env);
		ck_assert_msg(r.status == 128 + 9, "killed at %ld: exit %d\n%s", kill_at[k],
			      r.status, r.err);
		tu_run_free(&r);
		char *latest = tu_read_file((snprintf(path, sizeof path, "%s/LATEST", ck), path),
					    NULL);
		ck_assert_str_eq(latest, "step-000000000002\n");
		free(latest);
		snprintf(out, sizeof out, "%s/after-kill%zu", dir, k);
		trainer(NULL, 0, "6", out, NULL, NULL, ck, "resume after a killed save");
		char *got = tu_sorted_lines(out, 0);
		ck_assert_msg(strcmp(got, ref) == 0, "killed at %ld: the resumed run differs "
			      "from line %d on", kill_at[k], first_difference(got, ref));
		free(got);
	}

	struct {
		const char *what, *expect;
	} bad[] = {
		{"truncated", "layer-0003.shard: error: truncated: 700 bytes, the manifest says"},
		{"flipped", "layer-0005.shard: error: checksum"},
		{"other model", "layer-0000.shard:8: error: layer 0 tensor 0 is 'w' f64 12x12 "
				"in the checkpoint, 'w' f64 12x6 in the model"},
	};
	for (size_t k = 0; k < 3; k++) {
		char cp[PATH_MAX + 32];
		snprintf(cp, sizeof cp, "%s/bad%zu", dir, k);
		if (k < 2) {
			char cmd[3 * PATH_MAX];
			snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", ck, cp);
			ck_assert_int_eq(system(cmd), 0);
		}
		if (k == 0) {
			ck_assert_int_eq(truncate(shard_path(path, sizeof path, cp, 2, 3), 700), 0);
		} else if (k == 1) {
			size_t n;
			char *t = tu_read_file(shard_path(path, sizeof path, cp, 2, 5), &n);
			t[n / 2] ^= 0x10;
			write_bytes(path, t, n);
			free(t);
		} else {
			/* model "mlp", 8 layers of 12x12: not this mlp */
			ck_log log;
			ppcc_ckpt_model m = model("mlp", 8, &log);
			static double w[144], b[12];
			for (int l = 0; l < 8; l++) {
				ppcc_ckpt_tensor t[2] = {
					{"w", PPCC_CKPT_F64, 2, {12, 12, 0, 0}, w},
					{"b", PPCC_CKPT_F64, 1, {12, 0, 0, 0}, b}};
				ppcc_ckpt_layer layer = {PPCC_CKPT_VERSION, l, l == 0 ? "in" : l == 7 ? "out" : "hidden",
							 2, t};
				ck_assert_int_eq(ppcc_ckpt_save_layer(&m, cp, 2, &layer), 0);
			}
			ck_assert_int_eq(ppcc_ckpt_commit(&m, cp, 2), 0);
		}
		char *argv[] = {tr, "--steps", "6", "--output", out, "--resume", cp, NULL};
		tu_run r;
		run(&r, argv, NULL);
		ck_assert_msg(r.status == 1 && strstr(r.err, bad[k].expect), "%s: exit %d\n%s",
			      bad[k].what, r.status, r.err);
		tu_run_free(&r);
	}
	free(ref);
	tu_rmtree_free(dir);
}
END_TEST

/* ---- reads bounded before they start ---------------------------------------- */

/* What one checkpoint call did in a child process. */
typedef struct bounded {
	int status;              /* the call's */
	ppcc_ckpt_counts counts; /* its reads and allocations */
	ck_log log;
} bounded;

typedef struct bounded_call {
	const char *dir;
	int latest;     /* 1: ppcc_ckpt_latest; 0: load layer */
	int layer;
	double timeout_s;
} bounded_call;

/* Runs call in a child process, killed after 20 s (80 under the
 * sanitizers) and, outside them, held to 1 GiB of address space, so that
 * a read that never ends, blocks or grows without bound fails the test
 * (the child's exit status is checked) instead of hanging it or the
 * machine.  The call's status, counts and messages come back. */
static bounded run_bounded(const bounded_call *call)
{
	bounded *b = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(b, MAP_FAILED);
	memset(b, 0, sizeof *b);
	const char *san = getenv("PPCC_SAN");
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit as = {1u << 30, 1u << 30};
		if (!(san && *san))
			setrlimit(RLIMIT_AS, &as);
		signal(SIGALRM, SIG_DFL); /* Check's handler kills the group */
		alarm(san && *san ? 80 : 20);
		ppcc_ckpt_model m = model("tiny", 2, &b->log);
		m.timeout_s = call->timeout_s;
		m.counts = &b->counts;
		tiny t;
		tiny_init(&t, 0);
		uint64_t step;
		b->status = call->latest ? ppcc_ckpt_latest(&step, &m, call->dir)
					 : ppcc_ckpt_load_layer(&m, call->dir, 5,
								&t.l[call->layer]);
		_exit(0);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "the read did not return: %s %d", WIFSIGNALED(st) ? "signal" : "exit",
		      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	bounded out = *b;
	munmap(b, sizeof *b);
	return out;
}

/* A fresh copy of tiny_save's step-5 checkpoint in dir/name. */
static void fresh_copy(char *out, size_t n, const char *dir, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
	tiny_save(out, 5, 1.0);
}

/* LATEST, MANIFEST or a shard that is a link to /dev/zero, a FIFO or a
 * directory is refused by name, before a byte of it is read or anything
 * allocated for it (counted), and without blocking (the FIFO has no
 * writer: opening it for reading would wait for one). */
START_TEST(reads_refuse_devices_fifos_and_directories_by_name)
{
	char *dir = tu_mkdtemp(), ck[PATH_MAX], path[2 * PATH_MAX];
	fresh_copy(ck, sizeof ck, dir, "ref");
	snprintf(path, sizeof path, "%s/step-000000000005/MANIFEST", ck);
	uint64_t manifest = (uint64_t)file_size(path);
	struct {
		const char *file, *kind;
		int latest, layer;
		uint64_t read; /* bytes the call may read: LATEST, the manifest */
	} cases[] = {
		{"LATEST", "a character device", 1, 0, 0},
		{"step-000000000005/MANIFEST", "a character device", 1, 0, 18},
		{"step-000000000005/layer-0000.shard", "a character device", 0, 0, manifest},
		{"step-000000000005/layer-0001.shard", "a FIFO", 0, 1, manifest},
		{"step-000000000005/layer-0000.shard", "a directory", 0, 0, manifest},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		char name[16], want[2 * PATH_MAX + 96];
		snprintf(name, sizeof name, "case%zu", k);
		fresh_copy(ck, sizeof ck, dir, name);
		snprintf(path, sizeof path, "%s/%s", ck, cases[k].file);
		ck_assert_int_eq(unlink(path), 0);
		if (strcmp(cases[k].kind, "a FIFO") == 0)
			ck_assert_int_eq(mkfifo(path, 0644), 0);
		else if (strcmp(cases[k].kind, "a directory") == 0)
			ck_assert_int_eq(mkdir(path, 0755), 0);
		else
			ck_assert_int_eq(symlink("/dev/zero", path), 0);
		bounded_call call = {ck, cases[k].latest, cases[k].layer, 0};
		bounded b = run_bounded(&call);
		snprintf(want, sizeof want, "%s: error: %s, not a regular file", path,
			 cases[k].kind);
		ck_assert_msg(b.status == PPCC_RT_EIO && strstr(b.log.text, want),
			      "%s: status %d\n%s", want, b.status, b.log.text);
		ck_assert_msg(b.counts.bytes_read == cases[k].read,
			      "%s: %llu bytes read, want %llu", want,
			      (unsigned long long)b.counts.bytes_read,
			      (unsigned long long)cases[k].read);
		/* LATEST and the manifest, with its NULs, and one entry a layer */
		ck_assert_uint_le(b.counts.bytes_allocated, cases[k].read + 2 + 2 * 64);
	}
	tu_rmtree_free(dir);
}
END_TEST

/* A shard of another size than the manifest's, LATEST above 64 bytes and
 * a manifest above its limit are refused from their size alone: sparse
 * files of 1 and 2 GiB cost no reads and no allocation; a whole load
 * reads each of its two files once, exactly. */
START_TEST(reads_are_bounded_by_the_manifest_before_allocating)
{
	char *dir = tu_mkdtemp(), ck[PATH_MAX], path[2 * PATH_MAX], shard[2 * PATH_MAX];
	fresh_copy(ck, sizeof ck, dir, "ref");
	snprintf(path, sizeof path, "%s/step-000000000005/MANIFEST", ck);
	uint64_t manifest = (uint64_t)file_size(path);
	uint64_t shard0 = (uint64_t)file_size(shard_path(shard, sizeof shard, ck, 5, 0));
	bounded_call call = {ck, 0, 0, 0};
	bounded b = run_bounded(&call);
	ck_assert_msg(b.status == 0, "%s", b.log.text);
	ck_assert_uint_eq(b.counts.files_opened, 2);
	ck_assert_uint_eq(b.counts.bytes_read, manifest + shard0);

	struct {
		const char *file, *expect;
		int latest;
		off_t size;
		uint64_t read;
	} cases[] = {
		{"step-000000000005/layer-0000.shard", "error: changed: 2147483648 bytes, "
		 "the manifest says ", 0, (off_t)1 << 31, manifest},
		{"step-000000000005/layer-0000.shard", "error: truncated: 100 bytes, "
		 "the manifest says ", 0, 100, manifest},
		{"step-000000000005/MANIFEST", "error: 1073741824 bytes; a manifest of 2 "
		 "layers is at most 672", 1, (off_t)1 << 30, 18},
		{"LATEST", "error: 1073741824 bytes; LATEST is at most 64", 1,
		 (off_t)1 << 30, 0},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		char name[16];
		snprintf(name, sizeof name, "case%zu", k);
		fresh_copy(ck, sizeof ck, dir, name);
		snprintf(path, sizeof path, "%s/%s", ck, cases[k].file);
		ck_assert_int_eq(truncate(path, cases[k].size), 0);
		call = (bounded_call){ck, cases[k].latest, 0, 0};
		b = run_bounded(&call);
		ck_assert_msg(b.status == PPCC_RT_ECHECKSUM && strstr(b.log.text, cases[k].expect),
			      "%s: status %d\n%s", cases[k].expect, b.status, b.log.text);
		ck_assert_uint_eq(b.counts.bytes_read, cases[k].read);
		ck_assert_uint_le(b.counts.bytes_allocated, cases[k].read + 2 + 2 * 64);
	}
	tu_rmtree_free(dir);
}
END_TEST

/* The reads of a file stop at the model's timeout (the deadline is
 * checked before every read, so a timeout of 1 ns has passed before the
 * first); a non-finite timeout is the caller's error; a version-1 model
 * (no timeout, no counts) still loads. */
START_TEST(reads_stop_at_the_timeout)
{
	char *dir = tu_mkdtemp(), ck[PATH_MAX];
	fresh_copy(ck, sizeof ck, dir, "ref");
	bounded_call call = {ck, 1, 0, 1e-9};
	bounded b = run_bounded(&call);
	ck_assert_msg(b.status == PPCC_RT_ETIMEOUT &&
		      strstr(b.log.text, "LATEST: error: timeout: 0 of 18 bytes read"),
		      "status %d\n%s", b.status, b.log.text);
	ck_assert_uint_eq(b.counts.bytes_read, 0);
	ck_log log;
	ppcc_ckpt_model m = model("tiny", 2, &log);
	uint64_t step;
	m.timeout_s = NAN;
	ck_assert_int_eq(ppcc_ckpt_latest(&step, &m, ck), PPCC_RT_EINPUT);
	ck_assert_msg(strstr(log.text, "timeout_s of model 'tiny' is not a number"),
		      "%s", log.text);
	m = model("tiny", 2, &log);
	m.version = 1;
	m.timeout_s = NAN; /* not a field of version 1: not read */
	ck_assert_msg(ppcc_ckpt_latest(&step, &m, ck) == 0, "%s", log.text);
	tiny t;
	tiny_init(&t, 0);
	ck_assert_msg(ppcc_ckpt_load_layer(&m, ck, 5, &t.l[0]) == 0, "%s", log.text);
	tu_rmtree_free(dir);
}
END_TEST

/* The trainer resuming from a checkpoint whose LATEST, MANIFEST or a
 * shard is /dev/zero, a FIFO, a directory or a sparse 2 GiB file stops
 * at once with exit 1, naming the file and what is wrong with it.  Run
 * with a 20 s limit (the old reader grew without bound on /dev/zero and
 * blocked for ever on the FIFO) and, outside the sanitizers, 2 GiB of
 * address space. */
START_TEST(trainer_refuses_special_files_and_wrong_sizes_at_once)
{
	char *dir = tu_mkdtemp(), ck[PATH_MAX], out[PATH_MAX], tr[PATH_MAX];
	char path[2 * PATH_MAX];
	tu_build_path(tr, sizeof tr, "trainer");
	snprintf(ck, sizeof ck, "%s/ck", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	trainer(NULL, 0, "3", out, ck, "3", NULL, "save at 3");
	long shard3 = file_size(shard_path(path, sizeof path, ck, 3, 3));
	struct {
		const char *file, *what, *expect;
	} cases[] = {
		{"LATEST", "zero", "LATEST: error: a character device, not a regular file"},
		{"step-000000000003/MANIFEST", "zero",
		 "MANIFEST: error: a character device, not a regular file"},
		{"step-000000000003/layer-0003.shard", "zero",
		 "layer-0003.shard: error: a character device, not a regular file"},
		{"step-000000000003/layer-0003.shard", "fifo",
		 "layer-0003.shard: error: a FIFO, not a regular file"},
		{"step-000000000003/layer-0003.shard", "dir",
		 "layer-0003.shard: error: a directory, not a regular file"},
		{"step-000000000003/layer-0003.shard", "sparse",
		 "layer-0003.shard: error: changed: 2147483648 bytes, the manifest says "},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		char cp[PATH_MAX + 32], cmd[3 * PATH_MAX];
		snprintf(cp, sizeof cp, "%s/case%zu", dir, k);
		snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", ck, cp);
		ck_assert_int_eq(system(cmd), 0);
		snprintf(path, sizeof path, "%s/%s", cp, cases[k].file);
		if (strcmp(cases[k].what, "sparse") == 0) {
			ck_assert_int_eq(truncate(path, (off_t)1 << 31), 0);
		} else {
			ck_assert_int_eq(unlink(path), 0);
			if (strcmp(cases[k].what, "fifo") == 0)
				ck_assert_int_eq(mkfifo(path, 0644), 0);
			else if (strcmp(cases[k].what, "dir") == 0)
				ck_assert_int_eq(mkdir(path, 0755), 0);
			else
				ck_assert_int_eq(symlink("/dev/zero", path), 0);
		}
		const char *san = getenv("PPCC_SAN");
		char *argv[] = {"sh", "-c", san && *san ? "exec \"$@\"" : "ulimit -v 2097152; exec \"$@\"",
				"sh", tr, "--steps", "6", "--output", out, "--resume", cp, NULL};
		char *env[] = {"ASAN_OPTIONS=detect_leaks=0", NULL};
		tu_run r;
		ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, env, 20, argv), 0);
		ck_assert_msg(r.status == 1 && strstr(r.err, cases[k].expect), "%s %s: exit %d\n%s",
			      cases[k].file, cases[k].what, r.status, r.err);
		if (strcmp(cases[k].what, "sparse") == 0) {
			char says[64];
			snprintf(says, sizeof says, "the manifest says %ld\n", shard3);
			ck_assert_msg(strstr(r.err, says), "want '%s' in\n%s", says, r.err);
		}
		tu_run_free(&r);
	}
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(checkpoint_header_compiles_alone_as_c11_and_cxx)
{
	tu_header_compiles_alone("checkpoint_header_compiles_alone_as_c11_and_cxx",
		"#include <ppcc/checkpoint.h>\n"
		"int main(void)\n{\n"
		"\tppcc_ckpt_model m = {PPCC_CKPT_VERSION, \"m\", 1, 0, 0, 0, 0.0, 0};\n"
		"\treturn m.version == PPCC_CKPT_VERSION ? 0 : 1;\n}\n");
}
END_TEST

Suite *suite_checkpoint(void)
{
	return tu_suite("checkpoint", "checkpoint", 300, (const TTest *const[]){
		layers_of_a_rank_follow_the_stage_table,
		saved_layers_load_back_bit_for_bit,
		trailers_are_zlib_crc32_of_what_precedes,
		another_models_checkpoint_is_refused_with_the_reason,
		every_flipped_byte_and_every_truncation_is_refused,
		tensor_sizes_that_wrap_around_are_refused,
		an_incomplete_save_is_never_committed,
		trainer_resumes_onto_another_plan_bitwise,
		trainer_refuses_damage_and_survives_a_killed_save,
		reads_refuse_devices_fifos_and_directories_by_name,
		reads_are_bounded_by_the_manifest_before_allocating,
		reads_stop_at_the_timeout,
		trainer_refuses_special_files_and_wrong_sizes_at_once,
		checkpoint_header_compiles_alone_as_c11_and_cxx,
		NULL});
}
