/*
 * The trainer formats (emit/trainers.c) read back by parsers that are not
 * ppcc's: Megatron-LM's --pipeline-model-parallel-layout by a parser
 * written here from the documented grammar (shared/reference, man/ppcc.1:
 * E, t, m, L, `|` between stages, X*N repeating a letter or a
 * parenthesised group, commas and spaces cosmetic), torchtitan's TOML by
 * Python's tomllib (Debian's python3), DeepSpeed's JSON by jansson; each
 * round-tripped against the plan's partition.  Whole outputs of one
 * example are also compared against values worked by hand.
 *
 * Mixtures of experts are planned from YAML written to a temporary
 * folder (the mixtral-8x7b preset); their Megatron-LM rules are stated
 * above megatron_moe_arguments_of_mixtral_by_hand.
 *
 * Megatron-LM's rules the checks apply, from its code (Megatron-LM
 * d98e8a64ddf34856e74b24714e3bedb2f5a39553, "d98e8a6" below):
 *  - megatron/core/transformer/pipeline_parallel_layer_layout.py:
 *    283-321 the layout grammar (commas cosmetic, (..)*n and x*n
 *    unrolled, E t m L, `|` between stages); 40-55 its stage count is a
 *    multiple of p, v = count / p, stage k on rank k mod p; 93-110 the
 *    first layer is E, the last L, each once, and the t count is
 *    --num-layers;
 *  - megatron/training/arguments.py: 927-939 at most one of the layout,
 *    --num-layers-per-virtual-pipeline-stage and
 *    --num-virtual-stages-per-pipeline-rank; 953-975 the second needs
 *    no first/last-stage counts, L % p == 0 and (L / p) % n == 0;
 *    1000-1009 interleaving needs p > 1 with --overlap-p2p-communication
 *    (on by default, 3118-3120), else p > 2; 1024-1029
 *    --overlap-param-gather needs the distributed optimizer or
 *    Megatron-FSDP, and --overlap-grad-reduce; 1118-1170
 *    --use-megatron-fsdp implies the distributed optimizer (v1, the
 *    default, 3158), needs adam or sgd and --ckpt-format fsdp_dtensor;
 *    1314-1317 --num-layers, --hidden-size, --num-attention-heads and
 *    --max-position-embeddings are required; 1335-1338 seq-length a
 *    multiple of 2 cp; 1353-1356 max-position-embeddings >= seq-length;
 *  - megatron/core/transformer/transformer_config.py:2242-2259 the
 *    layout excludes the first/last-stage counts; 2302-2304 and
 *    2321-2323 each count > 0; 2340-2353 the middle stages share the
 *    rest evenly;
 *  - megatron/core/num_microbatches_calculator.py:381-390 the global
 *    batch is m x b x d;
 *  - megatron/core/pipeline_parallel/schedules.py:1160-1168 the
 *    interleaved group size is within [p, m].
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

Suite *suite_trainers(void);

/* Runs the Python of argv (argv[0] python3) into *r: 0, r freed and the
 * test named skipped, without python3; else 1, having checked that it
 * exited 0 (what names the script in the failure). */
static int py_run(tu_run *r, char **argv, const char *test,
		  const char *what)
{
	ck_assert_int_eq(tu_run_argv(r, NULL, NULL, NULL, 120, argv), 0);
	if (r->status == 127) {
		tu_run_free(r);
		tu_skip(test, "python3 not found");
		return 0;
	}
	ck_assert_msg(r->status == 0, "%s: %s", what, r->err);
	return 1;
}

/* ---- the layout grammar --------------------------------------------- */

typedef struct lay_buf {
	char s[1 << 14];
	size_t n;
	int bad;
} lay_buf;

static void lay_put(lay_buf *b, char c)
{
	if (b->n + 1 >= sizeof b->s) {
		b->bad = 1;
		return;
	}
	b->s[b->n++] = c;
	b->s[b->n] = '\0';
}

static const char *lay_seq(lay_buf *out, const char *p, int nested);

/* One item and its repeat count. */
static const char *lay_item(lay_buf *out, const char *p)
{
	lay_buf one = {.n = 0};
	if (*p == '(') {
		p = lay_seq(&one, p + 1, 1);
		if (!p || *p != ')') {
			out->bad = 1;
			return NULL;
		}
		p++;
	} else if (strchr("EtmL|", *p)) {
		lay_put(&one, *p++);
	} else {
		out->bad = 1;
		return NULL;
	}
	int times = 1;
	while (*p == ' ')
		p++;
	if (*p == '*') {
		char *end;
		long n = strtol(p + 1, &end, 10);
		if (end == p + 1 || n < 0 || n > 10000) {
			out->bad = 1;
			return NULL;
		}
		times = (int)n;
		p = end;
	}
	for (int i = 0; i < times; i++)
		for (size_t k = 0; k < one.n; k++)
			lay_put(out, one.s[k]);
	if (one.bad)
		out->bad = 1;
	return p;
}

static const char *lay_seq(lay_buf *out, const char *p, int nested)
{
	while (*p) {
		if (*p == ',' || *p == ' ') {
			p++;
			continue;
		}
		if (*p == ')')
			return nested ? p : NULL;
		if (!(p = lay_item(out, p)))
			return NULL;
	}
	return nested ? NULL : p;
}

/* Stages of a layout: E/t/m/L counts of each (at most max). */
typedef struct lay_stage {
	int e, t, m, l;
} lay_stage;

static int lay_parse(lay_stage *st, int max, const char *text)
{
	static lay_buf b;
	memset(&b, 0, sizeof b);
	if (!lay_seq(&b, text, 0) || b.bad)
		return -1;
	int n = 0;
	memset(&st[0], 0, sizeof st[0]);
	for (size_t i = 0; i < b.n; i++) {
		char c = b.s[i];
		if (c == '|') {
			if (++n >= max)
				return -1;
			memset(&st[n], 0, sizeof st[n]);
		} else if (c == 'E') {
			st[n].e++;
		} else if (c == 't') {
			st[n].t++;
		} else if (c == 'm') {
			st[n].m++;
		} else {
			st[n].l++;
		}
	}
	return n + 1;
}

START_TEST(layout_parser_reads_the_documented_example)
{
	/* Megatron-LM's example for p = 16, v = 2: Ettt, 29 x tt, m, L. */
	lay_stage st[64];
	int n = lay_parse(st, 64, "Et*3|(tt|)*29,m|L");
	ck_assert_int_eq(n, 32);
	ck_assert(st[0].e == 1 && st[0].t == 3 && st[0].l == 0);
	for (int i = 1; i <= 29; i++)
		ck_assert(st[i].e == 0 && st[i].t == 2 && st[i].m == 0);
	ck_assert(st[30].m == 1 && st[30].t == 0);
	ck_assert(st[31].l == 1 && st[31].t == 0);
	ck_assert_int_eq(lay_parse(st, 64, "E||t|L"), 4);
	ck_assert_int_eq(st[1].t + st[1].e + st[1].l, 0);
	ck_assert_int_eq(lay_parse(st, 64, "E(t"), -1);
	ck_assert_int_eq(lay_parse(st, 64, "Ex|L"), -1);
}
END_TEST

/* ---- plans ---------------------------------------------------------- */

typedef struct built {
	ppcc_arena *a;
	ppcc_config cfg;
	ppcc_plan plan;
	tu_diag diag;
} built;

typedef struct overrides {
	int zero;          /* -1: the file's */
	int data_parallel; /* 0: the file's */
	int n_partition;
	const int *partition;
	double grad_bytes; /* 0: the file's */
	int microbatches;  /* 0: the file's (else the global batch is dropped) */
} overrides;

static built *build_with(const char *example, int kind, int chunks,
			 int stages, const overrides *ov, int must);

/* Plans examples/<example> with the schedule kind, chunks and stages
 * given (0: the file's). */
static built *build(const char *example, int kind, int chunks, int stages)
{
	return build_with(example, kind, chunks, stages, NULL, 1);
}

/* As build, with the overrides (example: a file of examples/, or an
 * absolute path); when !must, NULL where ppcc does not plan it. */
static built *build_with(const char *example, int kind, int chunks,
			 int stages, const overrides *ov, int must)
{
	built *b = calloc(1, sizeof *b);
	ck_assert_ptr_nonnull(b);
	b->a = ppcc_arena_new();
	tu_diag_init(&b->diag);
	char path[4096];
	if (example[0] == '/')
		snprintf(path, sizeof path, "%s", example);
	else
		snprintf(path, sizeof path, "%s/examples/%s", tu_src(), example);
	static const ppcc_loc cl = {"<command line>", 0, 0};
	ck_assert_int_eq(ppcc_config_load(&b->cfg, b->a, path, NULL,
					  &b->diag.d), 0);
	ppcc_pipeline *pl = &b->cfg.pipeline;
	if (kind >= 0) {
		pl->kind = kind;
		pl->kind_loc = cl;
	}
	if (chunks) {
		pl->chunks = chunks;
		pl->chunks_loc = cl;
	}
	if (stages) {
		pl->stages = stages;
		pl->stages_loc = cl;
	}
	if (ov && ov->zero >= 0) {
		pl->zero = ov->zero;
		pl->zero_loc = cl;
	}
	if (ov && ov->data_parallel > 0) {
		pl->data_parallel = ov->data_parallel;
		pl->data_parallel_loc = cl;
	}
	if (ov && ov->grad_bytes > 0)
		pl->grad_bytes = ov->grad_bytes;
	if (ov && ov->microbatches > 0) {
		pl->microbatches = ov->microbatches;
		pl->microbatches_loc = cl;
		pl->global_batch_size = 0;
	}
	if (ov && ov->partition) {
		pl->n_partition = ov->n_partition;
		pl->partition = ov->partition;
		pl->partition_loc = cl;
	}
	ppcc_config_fill_defaults(&b->cfg);
	int ok = ppcc_config_check(&b->cfg, &b->diag.d) == 0 &&
		 ppcc_plan_build(&b->plan, b->a, &b->cfg, &b->diag.d) == 0;
	if (!ok && !must) {
		ppcc_arena_free(b->a);
		free(b);
		return NULL;
	}
	ck_assert_msg(ok, "%s: %s", example, b->diag.text);
	return b;
}

static void built_free(built *b)
{
	ppcc_arena_free(b->a);
	free(b);
}

typedef int (*emit_fn)(FILE *, const ppcc_plan *, const ppcc_emit_options *,
		       ppcc_diag *);

/* The emitter's output, or NULL with its status in *status. */
static char *emit_to_string(emit_fn fn, built *b, int *status)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ppcc_emit_options o = {0};
	*status = fn(f, &b->plan, &o, &b->diag.d);
	fclose(f);
	if (*status) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Stage k's blocks and edges, counted here from the layer indices. */
static lay_stage plan_stage(const ppcc_plan *p, int k)
{
	const ppcc_stage_info *st = &p->best.stages[k];
	lay_stage s = {0};
	for (int i = st->first_layer; i <= st->last_layer; i++) {
		if (i == 0)
			s.e++;
		else if (i == p->n_layers - 1)
			s.l++;
		else
			s.t++;
	}
	/* the multi-token prediction modules ride with the head */
	if (s.l)
		s.m = p->config->model.transformer
			? p->config->model.transformer->mtp_layers : 0;
	return s;
}

/* The value after "--name " on its own line, or NULL. */
static const char *arg_value(const char *text, const char *name, char *buf,
			     size_t size)
{
	char key[128];
	snprintf(key, sizeof key, "%s ", name);
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (len > strlen(key) && strncmp(line, key, strlen(key)) == 0) {
			size_t v = len - strlen(key);
			if (v >= size)
				v = size - 1;
			memcpy(buf, line + strlen(key), v);
			buf[v] = '\0';
			return buf;
		}
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/* Megatron-LM's split as its arguments give it, stage by stage, against
 * the partition. */
static void check_megatron_split(built *b, const char *what)
{
	int status;
	char *text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_msg(text, "%s: %s", what, b->diag.text);
	const ppcc_plan *p = &b->plan;
	int S = p->best.schedule.n_stages, L = p->n_layers - 2;
	/* without a layout Megatron-LM puts every multi-token prediction
	 * module on the last stage (the file's opening comment) */
	int mtp = b->cfg.model.transformer
		? b->cfg.model.transformer->mtp_layers : 0;
	static lay_stage got[4096];
	static char v[1 << 14];
	int n;
	if (arg_value(text, "--pipeline-model-parallel-layout", v, sizeof v)) {
		n = lay_parse(got, 4096, v);
		ck_assert_msg(!strstr(text, "--decoder-first-pipeline-num-layers") &&
			      !strstr(text, "--num-layers-per-virtual-pipeline-stage"),
			      "%s: the layout is combined with another split", what);
	} else if (arg_value(text, "--decoder-first-pipeline-num-layers", v,
			     sizeof v)) {
		int first = atoi(v);
		ck_assert_ptr_nonnull(arg_value(text, "--decoder-last-pipeline-num-layers",
						v, sizeof v));
		int last = atoi(v);
		n = S;
		ck_assert_int_gt(S, 2);
		ck_assert_int_eq((L - first - last) % (S - 2), 0);
		for (int k = 0; k < S; k++)
			got[k] = (lay_stage){k == 0, k == 0 ? first : k == S - 1
				? last : (L - first - last) / (S - 2),
				k == S - 1 ? mtp : 0, k == S - 1};
	} else {
		/* Megatron-LM's default: L / (p v) blocks a stage */
		n = S;
		ck_assert_int_eq(L % S, 0);
		if (S > p->best.schedule.n_ranks) {
			ck_assert_ptr_nonnull(arg_value(text,
				"--num-layers-per-virtual-pipeline-stage", v, sizeof v));
			ck_assert_int_eq(atoi(v), L / S);
		}
		for (int k = 0; k < S; k++)
			got[k] = (lay_stage){k == 0, L / S, k == S - 1 ? mtp : 0,
					     k == S - 1};
	}
	ck_assert_msg(n == S, "%s: %d stages in the arguments, %d planned", what,
		      n, S);
	for (int k = 0; k < S; k++) {
		lay_stage want = plan_stage(p, k);
		ck_assert_msg(got[k].e == want.e && got[k].t == want.t &&
			      got[k].l == want.l && got[k].m == want.m,
			      "%s: stage %d holds E%d t%d m%d L%d, the arguments "
			      "say E%d t%d m%d L%d", what, k, want.e, want.t,
			      want.m, want.l, got[k].e, got[k].t, got[k].m,
			      got[k].l);
	}
	snprintf(v, sizeof v, "%d", p->best.schedule.n_ranks);
	char w[32];
	ck_assert_str_eq(arg_value(text, "--pipeline-model-parallel-size", w,
				   sizeof w), v);
	free(text);
}

START_TEST(megatron_split_round_trips_against_the_partition)
{
	static const struct {
		const char *example;
		int kind, chunks, stages;
	} cases[] = {
		{"hetero.yaml", -1, 0, 0},   /* uneven: a layout */
		{"hetero.yaml", PPCC_SCHED_INTERLEAVED, 2, 0},
		{"hetero.yaml", PPCC_SCHED_1F1B, 0, 4},
		{"llama3-70b.yaml", -1, 0, 0},
		{"llama3-70b.yaml", PPCC_SCHED_INTERLEAVED, 2, 0},
		{"llama2-70b.yaml", -1, 0, 0},
		{"gpt3-175b.yaml", PPCC_SCHED_INTERLEAVED, 2, 0},
		{"gpt3-175b.yaml", PPCC_SCHED_INTERLEAVED, 3, 0},
	};
	int layouts = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		built *b = build(cases[i].example, cases[i].kind, cases[i].chunks,
				 cases[i].stages);
		char what[128];
		snprintf(what, sizeof what, "%s kind %d v %d p %d",
			 cases[i].example, cases[i].kind, cases[i].chunks,
			 cases[i].stages);
		check_megatron_split(b, what);
		int status;
		char *text = emit_to_string(ppcc_emit_megatron, b, &status);
		layouts += strstr(text, "--pipeline-model-parallel-layout") != NULL;
		free(text);
		built_free(b);
	}
	/* the cases include uneven splits, which only a layout can give */
	ck_assert_int_ge(layouts, 1);
}
END_TEST

START_TEST(megatron_arguments_of_llama3_70b_by_hand)
{
	/* 256 processes = t 8 x p 4 x cp 1 x d 8 (256 devices / 32), 32
	 * nodes of 8; the vocabulary 128,256 padded to a multiple of 128 x 8
	 * = 1024: 126 x 1024 = 129,024.  The shape is the file's (GQA: 64
	 * heads, 8 groups; Llama 3: RMSNorm, RoPE base 500000, SwiGLU
	 * without biases or dropout, untied).  B 256 = m 32 x b 1 x d 8;
	 * ZeRO-1 is the distributed optimizer, with both overlaps (d > 1);
	 * ppcc's split of the 82 layers is 22, 20, 20, 20 (embedding + 21
	 * blocks, 20, 20, 19 blocks + head), which the first and last stage
	 * counts give without a layout: 21 + 20 + 20 + 19 = 80 blocks. */
	built *b = build("llama3-70b.yaml", -1, 0, 0);
	int status;
	char *text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text,
			 "# 256 processes = 8 tensor x 4 pipeline x 1 context x 8 "
			 "data parallel; launch each node's with\n"
			 "# CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc-per-node 8 "
			 "--nnodes 32 --node-rank RANK "
			 "--master-addr HOST --master-port PORT pretrain_gpt.py "
			 "$(grep -v '^#' ARGS_FILE) ...\n"
			 "# vocabulary: the tokenizer's (--tokenizer-type and its "
			 "files); ppcc planned 128256 tokens, Megatron-LM pads them "
			 "to 129024 (a multiple of 128 x t)\n"
			 "# still to give: --data-path (or --mock-data), the "
			 "tokenizer, --train-iters, the optimizer (adam) and "
			 "learning-rate schedule (--lr, --min-lr, --lr-decay-style, "
			 "--lr-warmup-iters), --save, --load\n"
			 "--tensor-model-parallel-size 8\n"
			 "--pipeline-model-parallel-size 4\n"
			 "--context-parallel-size 1\n"
			 "--sequence-parallel\n"
			 "--num-layers 80\n"
			 "--hidden-size 8192\n"
			 "--ffn-hidden-size 28672\n"
			 "--num-attention-heads 64\n"
			 "--group-query-attention\n"
			 "--num-query-groups 8\n"
			 "--attention-backend fused\n"
			 "--seq-length 8192\n"
			 "--max-position-embeddings 8192\n"
			 "--normalization RMSNorm\n"
			 "--position-embedding-type rope\n"
			 "--rotary-base 500000\n"
			 "--swiglu\n"
			 "--disable-bias-linear\n"
			 "--attention-dropout 0.0\n"
			 "--hidden-dropout 0.0\n"
			 "--untie-embeddings-and-output-weights\n"
			 "--bf16\n"
			 "--decoder-first-pipeline-num-layers 21\n"
			 "--decoder-last-pipeline-num-layers 19\n"
			 "--micro-batch-size 1\n"
			 "--global-batch-size 256\n"
			 "--use-distributed-optimizer\n"
			 "--overlap-grad-reduce\n"
			 "--overlap-param-gather\n"
			 "--recompute-granularity selective\n");
	free(text);
	built_free(b);
	/* GPT-3: LayerNorm, learned positions, tied (no untie flag) */
	b = build("gpt3-175b.yaml", -1, 0, 0);
	text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(strstr(text, "--normalization LayerNorm\n"
				     "--position-embedding-type learned_absolute\n"
				     "--bf16\n"));
	ck_assert_ptr_null(strstr(text, "--untie"));
	ck_assert_ptr_null(strstr(text, "--swiglu"));
	free(text);
	built_free(b);
}
END_TEST

START_TEST(megatron_empty_first_or_last_stage_is_a_layout)
{
	/* Megatron-LM refuses a first or last stage count of 0
	 * (transformer_config.py:2302-2304, 2321-2323): such a split is a
	 * layout, here E|t*11|t*11|t*10 L and E t*10|t*11|t*11|L. */
	static const int first_empty[] = {1, 11, 11, 11};
	static const int last_empty[] = {11, 11, 11, 1};
	static const char *const want[] = {
		"E|ttttttttttt|ttttttttttt|ttttttttttL",
		"Etttttttttt|ttttttttttt|ttttttttttt|L"};
	const int *parts[] = {first_empty, last_empty};
	for (int i = 0; i < 2; i++) {
		overrides ov = {-1, 0, 4, parts[i], 0, 0};
		built *b = build_with("llama3-8b.yaml", PPCC_SCHED_1F1B, 0, 4,
				      &ov, 1);
		int status;
		char *text = emit_to_string(ppcc_emit_megatron, b, &status);
		ck_assert_msg(text, "%s", b->diag.text);
		ck_assert_ptr_null(strstr(text, "pipeline-num-layers"));
		char v[256];
		ck_assert_ptr_nonnull(arg_value(text,
			"--pipeline-model-parallel-layout", v, sizeof v));
		ck_assert_str_eq(v, want[i]);
		free(text);
		check_megatron_split(b, want[i]);
		built_free(b);
	}
}
END_TEST

START_TEST(megatron_zero_stages_map_to_distributed_optimizer_and_fsdp)
{
	/* ZeRO-1 is the distributed optimizer; ZeRO-2 and 3 are Megatron-FSDP
	 * (optim_grads, optim_grads_params), which needs --ckpt-format
	 * fsdp_dtensor (arguments.py:1169-1170); --use-distributed-optimizer
	 * alone shards only the optimizer state: llama3-70b's ZeRO-2 plan
	 * as ZeRO-1 needs 93.63 GiB, not 69.23. */
	static const char *const strategy[] = {NULL, NULL, "optim_grads",
					       "optim_grads_params"};
	int planned[4][2] = {{0}};
	for (int zero = 0; zero <= 3; zero++) {
		for (int p = 1; p <= 4; p += 3) {
			overrides ov = {zero, 0, 0, NULL, 0, 0};
			built *b = build_with("llama3-8b.yaml", PPCC_SCHED_1F1B, 0,
					      p, &ov, 0);
			if (!b)
				continue; /* does not fit */
			planned[zero][p > 1] = 1;
			int status;
			char *text = emit_to_string(ppcc_emit_megatron, b, &status);
			ck_assert_msg(text, "zero %d p %d: %s", zero, p,
				      b->diag.text);
			char v[64];
			ck_assert_int_eq(strstr(text, "--use-distributed-optimizer\n")
					 != NULL, zero == 1);
			ck_assert_int_eq(strstr(text, "--use-megatron-fsdp\n") != NULL,
					 zero >= 2);
			ck_assert_ptr_null(strstr(text, "--use-torch-fsdp2"));
			const char *got = arg_value(text,
				"--data-parallel-sharding-strategy", v, sizeof v);
			if (strategy[zero])
				ck_assert_str_eq(got, strategy[zero]);
			else
				ck_assert_ptr_null(got);
			free(text);
			built_free(b);
		}
	}
	/* every stage with a pipeline, ZeRO-2 without (ZeRO-3 at p = 1 does
	 * not fit here: it peaks at 78.36 GiB of 76) */
	ck_assert_msg(planned[2][0] && planned[0][1] && planned[1][1] &&
		      planned[2][1] && planned[3][1],
		      "planned p 1: %d %d %d %d, p 4: %d %d %d %d",
		      planned[0][0], planned[1][0], planned[2][0], planned[3][0],
		      planned[0][1], planned[1][1], planned[2][1], planned[3][1]);
}
END_TEST

/* A model written to a file in dir and planned: the preset with
 * transformer_extra's lines (each indented four spaces) on devices H100s,
 * 8 a node, and pipeline's lines (selective recomputation, a global
 * batch of 256 and ZeRO-1 unless the lines give theirs). */
static built *build_preset(char *dir, const char *name, const char *preset,
			   const char *transformer_extra, const char *pipeline,
			   int devices, int must)
{
	static char path[4096];
	char text[4096];
	snprintf(text, sizeof text,
		 "model:\n  name: %s\n  transformer:\n"
		 "    preset: %s\n    micro_batch_size: 1\n%s%s"
		 "cluster:\n  devices: %d\n  devices_per_node: 8\n"
		 "  device: h100\n"
		 "pipeline:\n%s%s%s",
		 name, preset, strstr(transformer_extra, "recompute:") ? ""
			: "    recompute: selective\n", transformer_extra, devices,
		 strstr(pipeline, "global_batch_size:") ? ""
			: "  global_batch_size: 256\n",
		 strstr(pipeline, "zero:") ? "" : "  zero: 1\n", pipeline);
	tu_write_in(path, sizeof path, dir, name, text);
	return build_with(path, -1, 0, 0, NULL, must);
}

/* A mixture of experts: build_preset of mixtral-8x7b. */
static built *build_moe(char *dir, const char *name,
			const char *transformer_extra, const char *pipeline,
			int devices, int must)
{
	return build_preset(dir, name, "mixtral-8x7b", transformer_extra,
			    pipeline, devices, must);
}

/* Flags Megatron-LM's parser knows, with their arity. */
static const char *const mg_bool_flags[] = {
	"--sequence-parallel", "--group-query-attention", "--swiglu",
	"--disable-bias-linear", "--untie-embeddings-and-output-weights",
	"--bf16", "--grad-reduce-in-bf16", "--use-distributed-optimizer",
	"--use-precision-aware-optimizer",
	"--use-megatron-fsdp", "--no-gradient-accumulation-fusion",
	"--overlap-grad-reduce", "--overlap-param-gather",
	"--moe-router-pre-softmax", "--moe-grouped-gemm",
	"--moe-pad-expert-input-to-capacity", "--multi-latent-attention",
	"--qk-layernorm", "--tp-comm-overlap", "--no-rope-fusion",
	"--overlap-moe-expert-parallel-comm", NULL};
static const char *const mg_value_flags[] = {
	"--tensor-model-parallel-size", "--pipeline-model-parallel-size",
	"--context-parallel-size", "--num-layers", "--hidden-size",
	"--ffn-hidden-size", "--num-attention-heads", "--num-query-groups",
	"--seq-length", "--max-position-embeddings", "--normalization",
	"--position-embedding-type", "--rotary-base", "--attention-dropout",
	"--hidden-dropout", "--decoder-first-pipeline-num-layers",
	"--decoder-last-pipeline-num-layers", "--pipeline-model-parallel-layout",
	"--num-layers-per-virtual-pipeline-stage",
	"--microbatch-group-size-per-virtual-pipeline-stage",
	"--micro-batch-size", "--global-batch-size",
	"--data-parallel-sharding-strategy", "--ckpt-format",
	"--recompute-granularity", "--recompute-method",
	"--recompute-num-layers", "--kv-channels",
	"--expert-model-parallel-size", "--expert-tensor-parallel-size",
	"--num-experts", "--moe-layer-freq", "--moe-ffn-hidden-size",
	"--moe-router-topk", "--moe-shared-expert-intermediate-size",
	"--moe-router-num-groups", "--moe-router-group-topk",
	"--num-distributed-optimizer-instances", "--exp-avg-dtype",
	"--exp-avg-sq-dtype",
	"--moe-token-dispatcher-type", "--moe-expert-capacity-factor",
	"--q-lora-rank", "--kv-lora-rank", "--qk-head-dim",
	"--qk-pos-emb-head-dim", "--v-head-dim", "--rope-type",
	"--mtp-num-layers", "--window-size", "--window-attn-skip-freq",
	"--fp8-format", "--fp8-recipe", "--recompute-modules",
	"--attention-backend", "--flash-attention-version", NULL};

static int in_list(const char *const *list, const char *w)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(list[i], w) == 0)
			return 1;
	return 0;
}

/* The arguments as a shell splits $(grep -v '^#' FILE): words between
 * blanks, no quotes, escapes or expansions to undo; each a known flag,
 * once, with its value when it takes one. */
static void check_megatron_words(const char *text, const char *what)
{
	char *copy = strdup(text);
	ck_assert_ptr_nonnull(copy);
	int seen_flags = 0;
	char *save = NULL, *prev_flags[128];
	int n_prev = 0;
	for (char *line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			continue;
		/* --moe-layer-freq's list is one bracket expression, a
		 * glob of one character that a folder without files named
		 * 0, 1 or `,` leaves as it is */
		size_t len = strlen(line);
		if (strncmp(line, "--moe-layer-freq [", 18) == 0)
			ck_assert_msg(len > 19 && line[len - 1] == ']' &&
				      strspn(line + 18, "01,") == len - 19,
				      "%s: a shell would change %s", what, line);
		else
			ck_assert_msg(!strpbrk(line, "'\"\\$`*?[]{}~;&<>()"),
				      "%s: a shell would change %s", what, line);
		char *in = NULL;
		char *flag = strtok_r(line, " \t", &in);
		ck_assert_ptr_nonnull(flag);
		char *value = strtok_r(NULL, " \t", &in);
		/* transformer_config.py:1945-1957, the modules ppcc writes */
		static const char *const modules[] = {
			"core_attn", "layernorm", "mla_up_proj", "moe_act", NULL};
		if (strcmp(flag, "--recompute-modules") == 0)
			for (char *m = value; m; m = strtok_r(NULL, " \t", &in))
				ck_assert_msg(in_list(modules, m), "%s: %s %s",
					      what, flag, m);
		else
			ck_assert_msg(!strtok_r(NULL, " \t", &in), "%s: %s has "
				      "more than one value", what, flag);
		if (in_list(mg_bool_flags, flag))
			ck_assert_msg(!value, "%s: %s takes no value", what, flag);
		else
			ck_assert_msg(in_list(mg_value_flags, flag) && value &&
				      strncmp(value, "--", 2) != 0,
				      "%s: %s is not a flag with a value", what,
				      flag);
		for (int i = 0; i < n_prev; i++)
			ck_assert_msg(strcmp(prev_flags[i], flag) != 0,
				      "%s: %s twice", what, flag);
		if (n_prev < 128)
			prev_flags[n_prev++] = flag;
		seen_flags++;
	}
	ck_assert_int_gt(seen_flags, 10);
	free(copy);
}

static int arg_int(const char *text, const char *name)
{
	char v[64];
	const char *s = arg_value(text, name, v, sizeof v);
	return s ? atoi(s) : -1;
}

/* Megatron-LM's rules (the file's opening comment) on one output. */
static void check_megatron_rules(built *b, const char *text, const char *what)
{
	const ppcc_pipeline *pl = &b->cfg.pipeline;
	const ppcc_transformer *tr = b->cfg.model.transformer;
	int p = arg_int(text, "--pipeline-model-parallel-size");
	int t = arg_int(text, "--tensor-model-parallel-size");
	int cp = arg_int(text, "--context-parallel-size");
	int L = arg_int(text, "--num-layers");
	int mb = arg_int(text, "--micro-batch-size");
	long long B = atoll(strstr(text, "--global-batch-size ") + 20);
	int v = b->plan.best.schedule.n_chunks;
	ck_assert(p == pl->stages && t == pl->tensor_parallel &&
		  cp == pl->context_parallel && L == tr->layers);
	/* the launcher's world size and the batch identity */
	char head[128];
	snprintf(head, sizeof head, "# %d processes = ",
		 t * p * cp * pl->data_parallel);
	ck_assert_msg(strncmp(text, head, strlen(head)) == 0, "%s", what);
	ck_assert_int_eq(B % ((long long)mb * pl->data_parallel), 0);
	ck_assert_int_eq(B / ((long long)mb * pl->data_parallel),
			 pl->microbatches);
	ck_assert_int_ge(arg_int(text, "--max-position-embeddings"),
			 arg_int(text, "--seq-length"));
	if (cp > 1)
		ck_assert_int_eq(arg_int(text, "--seq-length") % (2 * cp), 0);
	int nq = arg_int(text, "--num-query-groups");
	if (nq > 0)
		ck_assert_int_eq(tr->heads % nq, 0);
	/* latent attention: no grouped queries, its latents normed, plain
	 * RoPE, and the rotary positions multi-token prediction needs */
	int mla = strstr(text, "\n--multi-latent-attention\n") != NULL;
	ck_assert_int_eq(mla, tr->mla.kind != 0);
	if (mla) {
		ck_assert(!strstr(text, "--group-query-attention") &&
			  strstr(text, "\n--qk-layernorm\n") &&
			  strstr(text, "\n--rope-type rope\n") &&
			  arg_int(text, "--q-lora-rank") > 0);
	}
	if (arg_int(text, "--mtp-num-layers") > 0 || mla)
		ck_assert_ptr_nonnull(strstr(text,
			"\n--position-embedding-type rope\n"));
	if (strstr(text, "\n--window-size "))
		ck_assert_int_eq(cp, 1);
	/* the split: one way at most, each within its rules */
	char lay[1 << 14];
	int has_layout = arg_value(text, "--pipeline-model-parallel-layout",
				   lay, sizeof lay) != NULL;
	int first = arg_int(text, "--decoder-first-pipeline-num-layers");
	int last = arg_int(text, "--decoder-last-pipeline-num-layers");
	int per_v = arg_int(text, "--num-layers-per-virtual-pipeline-stage");
	ck_assert_int_le(has_layout + (per_v > 0), 1);
	if (has_layout) {
		static lay_stage st[4096];
		int n = lay_parse(st, 4096, lay);
		ck_assert_msg(n == p * v && n % p == 0, "%s: %d stages", what, n);
		int e = 0, l = 0, blocks = 0;
		for (int k = 0; k < n; k++) {
			e += st[k].e;
			l += st[k].l;
			blocks += st[k].t;
		}
		ck_assert(e == 1 && st[0].e == 1 && l == 1 && st[n - 1].l == 1);
		ck_assert_int_eq(blocks, L);
		/* the multi-token prediction modules: as many as
		 * --mtp-num-layers, after every block, all in one stage,
		 * the last of its rank's */
		int mtp = arg_int(text, "--mtp-num-layers"), m = 0, blocks_after = 0;
		for (int k = 0; k < n; k++) {
			if (m)
				blocks_after += st[k].t;
			if (st[k].m) {
				ck_assert_int_eq(st[k].m, mtp);
				ck_assert_msg(k / p == v - 1, "%s: MTP in virtual "
					      "stage %d of its rank", what, k / p);
			}
			m += st[k].m;
		}
		ck_assert_int_eq(m, mtp > 0 ? mtp : 0);
		ck_assert_int_eq(blocks_after, 0);
		ck_assert(first < 0 && last < 0);
	}
	if (first >= 0 || last >= 0) {
		ck_assert(first > 0 && last > 0 && v == 1 && per_v < 0);
		int mid = L - first - last;
		ck_assert_int_eq(mid != 0, p - 2 != 0);
		if (p > 2)
			ck_assert_int_eq(mid % (p - 2), 0);
	}
	if (per_v > 0)
		ck_assert(L % p == 0 && (L / p) % per_v == 0 &&
			  (L / p) / per_v == v);
	if (v > 1) {
		ck_assert_int_gt(p, 1);
		ck_assert_int_eq(p == 2, strstr(text, "--overlap-p2p-communication "
						"is on by default") != NULL);
		int g = arg_int(text,
			"--microbatch-group-size-per-virtual-pipeline-stage");
		if (g > 0)
			ck_assert(g >= p && g <= pl->microbatches);
	}
	if (!has_layout && first < 0 && per_v < 0 && p > 1)
		ck_assert_int_eq(L % p, 0);
	/* ZeRO: the optimizer, Megatron-FSDP's strategy and checkpoints */
	int dist = strstr(text, "--use-distributed-optimizer\n") != NULL;
	int fsdp = strstr(text, "--use-megatron-fsdp\n") != NULL;
	char w[64];
	const char *strat = arg_value(text, "--data-parallel-sharding-strategy",
				      w, sizeof w);
	switch (pl->zero) {
	case 0: ck_assert(!dist && !fsdp && !strat); break;
	case 1: ck_assert(dist && !fsdp && !strat); break;
	case 2: ck_assert(!dist && fsdp && strcmp(strat, "optim_grads") == 0); break;
	default: ck_assert(!dist && fsdp &&
			   strcmp(strat, "optim_grads_params") == 0);
	}
	char ck[64];
	ck_assert_int_eq(fsdp, arg_value(text, "--ckpt-format", ck, sizeof ck)
			 && strcmp(ck, "fsdp_dtensor") == 0);
	int ogr = strstr(text, "--overlap-grad-reduce\n") != NULL;
	int opg = strstr(text, "--overlap-param-gather\n") != NULL;
	if (opg)
		ck_assert(ogr && (dist || fsdp));
	int n_dp = pl->data_parallel * pl->context_parallel;
	ck_assert_int_eq(ogr, n_dp > 1);
	ck_assert_int_eq(opg, n_dp > 1 && pl->zero >= 1);
	ck_assert_ptr_nonnull(strstr(text, "--bf16\n"));
}

START_TEST(megatron_arguments_obey_megatrons_rules_across_plans)
{
	static const char *const examples[] = {
		"hetero.yaml", "llama3-8b.yaml", "llama3-70b.yaml",
		"llama2-70b.yaml", "gpt3-175b.yaml"};
	static const struct {
		int kind, chunks, stages;
	} kinds[] = {
		{PPCC_SCHED_1F1B, 0, 0},
		{PPCC_SCHED_1F1B, 0, 1},
		{PPCC_SCHED_INTERLEAVED, 2, 0},
		{PPCC_SCHED_INTERLEAVED, 2, 2},
	};
	int planned = 0, d1 = 0, dn = 0, zeros[4] = {0};
	for (size_t e = 0; e < sizeof examples / sizeof examples[0]; e++)
		for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
			for (int zero = 0; zero <= 3; zero++)
				for (int dsel = 0; dsel < 2; dsel++) {
					overrides ov = {zero, dsel ? 0 : 1, 0, NULL, 0, 0};
					built *b = build_with(examples[e], kinds[k].kind,
							      kinds[k].chunks,
							      kinds[k].stages, &ov, 0);
					if (!b)
						continue;
					char what[160];
					snprintf(what, sizeof what, "%s kind %d v %d p %d "
						 "zero %d d %d", examples[e], kinds[k].kind,
						 kinds[k].chunks, kinds[k].stages, zero,
						 b->cfg.pipeline.data_parallel);
					int status;
					char *text = emit_to_string(ppcc_emit_megatron, b,
								    &status);
					ck_assert_msg(text, "%s: %s", what, b->diag.text);
					check_megatron_words(text, what);
					check_megatron_rules(b, text, what);
					check_megatron_split(b, what);
					free(text);
					planned++;
					zeros[zero]++;
					if (b->cfg.pipeline.data_parallel > 1)
						dn++;
					else
						d1++;
					built_free(b);
				}
	ck_assert_int_ge(planned, 40);
	ck_assert(d1 > 0 && dn > 0);
	for (int z = 0; z < 4; z++)
		ck_assert_int_gt(zeros[z], 0);
}
END_TEST

/* The fields the Megatron-Bridge snippet may set, each a field of the
 * object it is set on: Megatron-LM 2a75ac12c54b (the commit Megatron-
 * Bridge 067f987df03b runs, 3rdparty/Megatron-LM),
 * megatron/core/transformer/transformer_config.py:65 num_layers, 138
 * hidden_size, 141 num_attention_heads, 168 num_query_groups, 173
 * ffn_hidden_size, 181 hidden_dropout, 184 attention_dropout, 205
 * add_bias_linear, 214 gated_linear_unit, 217 activation_func, 249
 * normalization, 104 pipeline_model_parallel_layout, 525
 * recompute_granularity, 536 recompute_method, 544 recompute_num_layers,
 * 553 recompute_modules (None: ["core_attn"]), 703
 * moe_shared_expert_overlap, 68 mtp_num_layers, 240
 * window_size, 244 window_attn_skip_freq, 252 qk_layernorm, 281
 * multi_latent_attention, 506 apply_rope_fusion, 144 attention_backend
 * (enums.py:51 AttnBackend), 150 flash_attention_version, 573 fp8, 580
 * fp8_recipe, 607-610 the amax history (1, "most_recent");
 * MLATransformerConfig 3016-3068 q_lora_rank, kv_lora_rank,
 * qk_head_dim, qk_pos_emb_head_dim, v_head_dim, rope_type,
 * rotary_scaling_factor, mscale, mscale_all_dim;
 * megatron/core/optimizer/optimizer_config.py:187
 * use_precision_aware_optimizer, 197 main_grads_dtype, 200
 * main_params_dtype, 203 exp_avg_dtype, 206 exp_avg_sq_dtype, 324
 * use_distributed_optimizer (Bridge's training/config.py:983 optimizer,
 * 990 dataset, whose seq_length 1642-1648 asserts is the model's); pipeline_parallel_layer_layout.py:71 a layout
 * list's names are LayerType's (enums.py:26-30: embedding, loss,
 * decoder, mtp);
 * megatron/core/model_parallel_config.py:11 tensor_model_parallel_size,
 * 83 pipeline_model_parallel_size, 86
 * virtual_pipeline_model_parallel_size, 94 sequence_parallel, 100
 * context_parallel_size, 250 gradient_accumulation_fusion, 431
 * microbatch_group_size_per_vp_stage, 343 overlap_moe_expert_parallel_comm
 * (Megatron-LM's --overlap-moe-expert-parallel-comm: arguments.py
 * 2279-2374 makes TransformerConfig's fields flags); Megatron-Bridge
 * src/megatron/bridge/models/gpt_provider.py:141
 * make_vocab_size_divisible_by (Megatron-LM's --make-vocab-size-
 * divisible-by, 128 by default: d98e8a6 arguments.py:2441), 140
 * share_embeddings_and_output_weights, 142 position_embedding_type, 143
 * rotary_base, 160 seq_length; megatron/training/config/
 * training_config.py:11 micro_batch_size, 15 global_batch_size, 486
 * ckpt_format; megatron/core/distributed/distributed_data_parallel_
 * config.py:15 grad_reduce_in_fp32, 18 overlap_grad_reduce, 21
 * overlap_param_gather, 29 use_distributed_optimizer, 90
 * use_megatron_fsdp, 103 data_parallel_sharding_strategy;
 * megatron/training/config/common_config.py:92 use_megatron_fsdp (cfg.dist);
 * Bridge's training/mixed_precision.py:185 bf16_mixed, a
 * MixedPrecisionConfig with grad_reduce_in_fp32, 217-233
 * bf16_with_fp8_delayed_scaling_mixed (fp8 "hybrid", fp8_recipe
 * "delayed", fp8_param_gather True; the fields at 49-61);
 * models/mla_provider.py:23-27 MLA providers are
 * models/transformer_config.py's MLATransformerConfig; training/config.py:1007
 * comm_overlap, whose CommOverlapConfig, when a recipe sets one, resets
 * the ddp overlaps and may turn TP overlap on at setup (config.py:
 * 2027-2029, comm_overlap.py:430-451, 571-579), so the snippet clears
 * it (the runner starts from a recipe's).  The runner executes
 * each snippet's ppcc_apply on objects that refuse any other field, then
 * reads Megatron-LM's arguments for the same plan and says whether the
 * two set the same run: degrees, shape, batch, ZeRO, overlaps,
 * recomputation and the layout, each stage's modules in order. */
static const char *const bridge_runner =
	"import ast, shlex, sys, types\n"
	"F = {'model': {'num_layers', 'hidden_size', 'num_attention_heads',\n"
	"  'num_query_groups', 'ffn_hidden_size', 'hidden_dropout',\n"
	"  'attention_dropout', 'add_bias_linear', 'gated_linear_unit',\n"
	"  'activation_func', 'normalization', 'pipeline_model_parallel_layout',\n"
	"  'recompute_granularity', 'recompute_method', 'recompute_num_layers',\n"
	"  'tensor_model_parallel_size', 'pipeline_model_parallel_size',\n"
	"  'virtual_pipeline_model_parallel_size', 'sequence_parallel',\n"
	"  'context_parallel_size', 'gradient_accumulation_fusion',\n"
	"  'microbatch_group_size_per_vp_stage',\n"
	"  'share_embeddings_and_output_weights', 'position_embedding_type',\n"
	"  'rotary_base', 'seq_length', 'kv_channels', 'num_moe_experts',\n"
	"  'moe_layer_freq', 'moe_ffn_hidden_size', 'moe_router_topk',\n"
	"  'moe_router_pre_softmax', 'moe_shared_expert_intermediate_size',\n"
	"  'moe_grouped_gemm', 'moe_token_dispatcher_type',\n"
	"  'moe_expert_capacity_factor', 'moe_pad_expert_input_to_capacity',\n"
	"  'expert_model_parallel_size', 'expert_tensor_parallel_size',\n"
	"  'overlap_moe_expert_parallel_comm', 'recompute_modules',\n"
	"  'moe_router_num_groups', 'moe_router_group_topk',\n"
	"  'multi_latent_attention', 'qk_layernorm', 'q_lora_rank',\n"
	"  'kv_lora_rank', 'qk_head_dim', 'qk_pos_emb_head_dim', 'v_head_dim',\n"
	"  'rope_type', 'mtp_num_layers', 'window_size',\n"
	"  'window_attn_skip_freq', 'apply_rope_fusion', 'rotary_scaling_factor',\n"
	"  'mscale', 'mscale_all_dim', 'moe_shared_expert_overlap',\n"
	"  'make_vocab_size_divisible_by', 'attention_backend',\n"
	"  'flash_attention_version'},\n"
	"  'train': {'micro_batch_size', 'global_batch_size'},\n"
	"  'dataset': {'seq_length'},\n"
	"  'optimizer': {'use_distributed_optimizer',\n"
	"  'use_precision_aware_optimizer', 'main_grads_dtype',\n"
	"  'main_params_dtype', 'exp_avg_dtype', 'exp_avg_sq_dtype'},\n"
	"  'checkpoint': {'ckpt_format'},\n"
	"  'ddp': {'grad_reduce_in_fp32', 'overlap_grad_reduce',\n"
	"  'overlap_param_gather', 'use_distributed_optimizer',\n"
	"  'use_megatron_fsdp', 'data_parallel_sharding_strategy',\n"
	"  'num_distributed_optimizer_instances'},\n"
	"  'dist': {'use_megatron_fsdp'},\n"
	"  'mixed_precision': {'grad_reduce_in_fp32', 'fp8', 'fp8_recipe',\n"
	"  'fp8_param_gather', 'fp8_amax_history_len', 'fp8_amax_compute_algo'}}\n"
	"class Strict:\n"
	"    def __init__(s, n):\n"
	"        object.__setattr__(s, 'n', n); object.__setattr__(s, 'v', {})\n"
	"    def __setattr__(s, k, x):\n"
	"        if k not in F[s.n]: raise AttributeError(s.n + ' has no ' + k)\n"
	"        s.v[k] = x\n"
	"    def __getattr__(s, k):\n"
	"        return s.v.get(k)\n"
	"class Cfg:\n"
	"    def __init__(s):\n"
	"        for n in F:\n"
	"            if n != 'mixed_precision': setattr(s, n, Strict(n))\n"
	"        s.mixed_precision = None\n"
	"        s.comm_overlap = 'a recipe CommOverlapConfig'\n"
	"def mod(name, **kw):\n"
	"    m = types.ModuleType(name); m.__dict__.update(kw); sys.modules[name] = m\n"
	"for n in ('torch', 'torch.nn', 'megatron', 'megatron.bridge',\n"
	"          'megatron.bridge.training'):\n"
	"    mod(n)\n"
	"sys.modules['torch'].bfloat16, sys.modules['torch'].float32 = 'bf16', 'fp32'\n"
	"mod('torch.nn.functional', silu='silu', gelu='gelu')\n"
	"def fp8_mixed():\n"
	"    c = Strict('mixed_precision')\n"
	"    c.fp8, c.fp8_recipe, c.fp8_param_gather = 'hybrid', 'delayed', True\n"
	"    c.fp8_amax_history_len, c.fp8_amax_compute_algo = 1024, 'max'\n"
	"    return c\n"
	"mod('megatron.bridge.training.mixed_precision',\n"
	"    bf16_mixed=lambda: Strict('mixed_precision'),\n"
	"    bf16_with_fp8_delayed_scaling_mixed=fp8_mixed)\n"
	"class AttnBackend: flash, fused, unfused, auto = 'flash', 'fused', 'unfused', 'auto'\n"
	"for n in ('megatron.core', 'megatron.core.transformer'): mod(n)\n"
	"mod('megatron.core.transformer.enums', AttnBackend=AttnBackend)\n"
	"mod('megatron.bridge.models'); mod('megatron.bridge.models.transformer_config',\n"
	"    MLATransformerConfig=Strict)\n"
	"def layout(L, p, v, first, last, explicit):\n"
	"    if explicit: return explicit\n"
	"    S = p * v\n"
	"    if first is not None:\n"
	"        mid = [(L - first - last) // (p - 2)] * (p - 2) if p > 2 else []\n"
	"        n = [first] + mid + [last]\n"
	"    else:\n"
	"        n = [L // S] * S\n"
	"    return '|'.join(('E' if k == 0 else '') + 't' * n[k] +\n"
	"                    ('L' if k == S - 1 else '') for k in range(S))\n"
	"def values(w, flag):\n"
	"    if flag not in w: return None\n"
	"    r = []\n"
	"    for x in w[w.index(flag) + 1:]:\n"
	"        if x.startswith('--'): break\n"
	"        r.append(x)\n"
	"    return tuple(r)\n"
	"args = sys.argv[1:]\n"
	"for i in range(0, len(args), 2):\n"
	"    ns = {}\n"
	"    exec(compile(open(args[i + 1]).read(), args[i + 1], 'exec'), ns)\n"
	"    c = Cfg()\n"
	"    assert ns['ppcc_apply'](c) is c\n"
	"    assert c.comm_overlap is None, 'the recipe comm_overlap stays'\n"
	"    m, d = c.model, c.ddp\n"
	"    lay = m.pipeline_model_parallel_layout\n"
	"    ex = '|'.join(''.join({'embedding': 'E', 'decoder': 't', 'mtp': 'm',\n"
	"                           'loss': 'L'}[x] for x in st) for st in lay) if lay else None\n"
	"    v = m.virtual_pipeline_model_parallel_size or 1\n"
	"    b = {'tp': m.tensor_model_parallel_size,\n"
	"         'pp': m.pipeline_model_parallel_size, 'vp': v,\n"
	"         'cp': m.context_parallel_size, 'sp': m.sequence_parallel,\n"
	"         'layers': m.num_layers, 'hidden': m.hidden_size,\n"
	"         'ffn': m.ffn_hidden_size, 'heads': m.num_attention_heads,\n"
	"         'groups': m.num_query_groups, 'seq': m.seq_length,\n"
	"         'norm': m.normalization, 'pos': m.position_embedding_type,\n"
	"         'base': m.rotary_base, 'swiglu': m.gated_linear_unit and\n"
	"         m.activation_func == 'silu', 'untie':\n"
	"         not m.share_embeddings_and_output_weights,\n"
	"         'mbs': c.train.micro_batch_size, 'gbs': c.train.global_batch_size,\n"
	"         'distopt': d.use_distributed_optimizer,\n"
	"         'optdist': c.optimizer.use_distributed_optimizer ==\n"
	"         d.use_distributed_optimizer, 'dseq': c.dataset.seq_length,\n"
	"         'moments': (c.optimizer.use_precision_aware_optimizer,\n"
	"         c.optimizer.exp_avg_dtype, c.optimizer.exp_avg_sq_dtype,\n"
	"         c.optimizer.main_grads_dtype, c.optimizer.main_params_dtype),\n"
	"         'inst': d.num_distributed_optimizer_instances or 1,\n"
	"         'fsdp': d.data_parallel_sharding_strategy if d.use_megatron_fsdp\n"
	"                 and c.dist.use_megatron_fsdp else None,\n"
	"         'ogr': d.overlap_grad_reduce, 'opg': d.overlap_param_gather,\n"
	"         'rc': m.recompute_granularity, 'rcm': tuple(\n"
	"         m.recompute_modules) if m.recompute_granularity ==\n"
	"         'selective' else None, 'group':\n"
	"         m.microbatch_group_size_per_vp_stage,\n"
	"         'bf16grad': not c.mixed_precision.grad_reduce_in_fp32,\n"
	"         'pad': m.make_vocab_size_divisible_by, 'sharedov':\n"
	"         bool(m.moe_shared_expert_overlap),\n"
	"         'layout': layout(m.num_layers, m.pipeline_model_parallel_size,\n"
	"                          v, None, None, ex),\n"
	"         'kv': m.kv_channels, 'moe': (m.num_moe_experts, m.moe_layer_freq,\n"
	"         m.moe_ffn_hidden_size, m.moe_router_topk,\n"
	"         bool(m.moe_router_pre_softmax),\n"
	"         m.moe_shared_expert_intermediate_size, m.moe_grouped_gemm,\n"
	"         m.moe_token_dispatcher_type, m.moe_expert_capacity_factor,\n"
	"         bool(m.moe_pad_expert_input_to_capacity),\n"
	"         m.expert_model_parallel_size, m.expert_tensor_parallel_size,\n"
	"         bool(m.overlap_moe_expert_parallel_comm),\n"
	"         m.moe_router_num_groups, m.moe_router_group_topk)\n"
	"         if m.num_moe_experts else None,\n"
	"         'mla': (m.qk_layernorm, m.q_lora_rank, m.kv_lora_rank,\n"
	"         m.qk_head_dim, m.qk_pos_emb_head_dim, m.v_head_dim, m.rope_type,\n"
	"         m.apply_rope_fusion, m.rotary_scaling_factor, m.mscale,\n"
	"         m.mscale_all_dim) if m.multi_latent_attention else None,\n"
	"         'qk': None if m.multi_latent_attention else bool(m.qk_layernorm),\n"
	"         'attn': (m.attention_backend, m.flash_attention_version),\n"
	"         'mtp': m.mtp_num_layers, 'window': (m.window_size,\n"
	"         m.window_attn_skip_freq) if m.window_size else None,\n"
	"         'fp8': (c.mixed_precision.fp8, c.mixed_precision.fp8_recipe,\n"
	"         bool(c.mixed_precision.fp8_param_gather),\n"
	"         c.mixed_precision.fp8_amax_history_len,\n"
	"         c.mixed_precision.fp8_amax_compute_algo)\n"
	"         if c.mixed_precision.fp8 else None}\n"
	"    w = shlex.split(' '.join(l for l in open(args[i]).read().split('\\n')\n"
	"                             if not l.startswith('#')))\n"
	"    a = {}\n"
	"    for j, x in enumerate(w):\n"
	"        if x.startswith('--'):\n"
	"            nx = w[j + 1] if j + 1 < len(w) else None\n"
	"            a[x[2:]] = nx if nx is not None and not nx.startswith('--') else True\n"
	"    g = lambda k, t=int: t(a[k]) if k in a else None\n"
	"    L, p = g('num-layers'), g('pipeline-model-parallel-size')\n"
	"    vm = (L // p // g('num-layers-per-virtual-pipeline-stage')\n"
	"          if 'num-layers-per-virtual-pipeline-stage' in a else None)\n"
	"    lay = a.get('pipeline-model-parallel-layout')\n"
	"    if lay and vm is None: vm = lay.count('|') // p + 1\n"
	"    mg = {'tp': g('tensor-model-parallel-size'), 'pp': p, 'vp': vm or 1,\n"
	"          'cp': g('context-parallel-size'), 'sp': 'sequence-parallel' in a,\n"
	"          'layers': L, 'hidden': g('hidden-size'), 'ffn': g('ffn-hidden-size'),\n"
	"          'heads': g('num-attention-heads'),\n"
	"          'groups': g('num-query-groups') or g('num-attention-heads'),\n"
	"          'seq': g('seq-length'), 'norm': a['normalization'],\n"
	"          'pos': a['position-embedding-type'], 'base': g('rotary-base'),\n"
	"          'swiglu': 'swiglu' in a,\n"
	"          'untie': 'untie-embeddings-and-output-weights' in a,\n"
	"          'mbs': g('micro-batch-size'), 'gbs': g('global-batch-size'),\n"
	"          'distopt': 'use-distributed-optimizer' in a,\n"
	"          'optdist': True, 'dseq': g('seq-length'),\n"
	"          'moments': ('use-precision-aware-optimizer' in a,\n"
	"          a.get('exp-avg-dtype', 'fp32'), a.get('exp-avg-sq-dtype', 'fp32'),\n"
	"          'fp32', 'fp32'),\n"
	"          'inst': g('num-distributed-optimizer-instances') or 1,\n"
	"          'fsdp': a.get('data-parallel-sharding-strategy'),\n"
	"          'ogr': 'overlap-grad-reduce' in a,\n"
	"          'opg': 'overlap-param-gather' in a,\n"
	"          'rc': a.get('recompute-granularity'),\n"
	"          'rcm': (values(w, '--recompute-modules') or ('core_attn',))\n"
	"                  if a.get('recompute-granularity') == 'selective'\n"
	"                  else None,\n"
	"          'group': g('microbatch-group-size-per-virtual-pipeline-stage'),\n"
	"          'bf16grad': 'grad-reduce-in-bf16' in a,\n"
	"          'pad': g('make-vocab-size-divisible-by') or 128, 'sharedov':\n"
	"          'moe-shared-expert-overlap' in a,\n"
	"          'layout': layout(L, p, vm or 1,\n"
	"                           g('decoder-first-pipeline-num-layers'),\n"
	"                           g('decoder-last-pipeline-num-layers'), lay),\n"
	"          'kv': g('kv-channels'), 'moe': (g('num-experts'),\n"
	"          ast.literal_eval(a['moe-layer-freq']), g('moe-ffn-hidden-size'),\n"
	"          g('moe-router-topk'), 'moe-router-pre-softmax' in a,\n"
	"          g('moe-shared-expert-intermediate-size'), 'moe-grouped-gemm' in a,\n"
	"          a['moe-token-dispatcher-type'],\n"
	"          g('moe-expert-capacity-factor', float),\n"
	"          'moe-pad-expert-input-to-capacity' in a,\n"
	"          g('expert-model-parallel-size'), g('expert-tensor-parallel-size'),\n"
	"          'overlap-moe-expert-parallel-comm' in a,\n"
	"          g('moe-router-num-groups'), g('moe-router-group-topk'))\n"
	"          if 'num-experts' in a else None,\n"
	"          'mla': ('qk-layernorm' in a, g('q-lora-rank'), g('kv-lora-rank'),\n"
	"          g('qk-head-dim'), g('qk-pos-emb-head-dim'), g('v-head-dim'),\n"
	"          a.get('rope-type'), 'no-rope-fusion' not in a,\n"
	"          g('rotary-scaling-factor', float) or 1.0, g('mscale', float) or 1.0,\n"
	"          g('mscale-all-dim', float) or 0.0)\n"
	"          if 'multi-latent-attention' in a else None,\n"
	"          'qk': None if 'multi-latent-attention' in a\n"
	"          else 'qk-layernorm' in a,\n"
	"          'attn': (a.get('attention-backend', 'auto'),\n"
	"          g('flash-attention-version')),\n"
	"          'mtp': g('mtp-num-layers'),\n"
	"          'window': (tuple(int(x) for x in a['window-size'].split(',')),\n"
	"          g('window-attn-skip-freq')) if 'window-size' in a else None,\n"
	"          'fp8': (a['fp8-format'], a.get('fp8-recipe', 'delayed'),\n"
	"          'fp8-param-gather' in a, g('fp8-amax-history-len') or 1,\n"
	"          a.get('fp8-amax-compute-algo', 'most_recent'))\n"
	"          if 'fp8-format' in a else None}\n"
	"    diff = sorted(k for k in mg if mg[k] != b[k])\n"
	"    print(args[i], 'ok' if not diff else\n"
	"          ' '.join('%s=%r/%r' % (k, mg[k], b[k]) for k in diff))\n";

/* Megatron-Bridge's snippet runs on Bridge's own field names and sets
 * the run Megatron-LM's arguments for the same plan set, for every
 * example, the kinds Megatron runs, ZeRO 0-3, d = 1 and d > 1, even and
 * uneven splits (an empty first stage included). */
START_TEST(megatron_bridge_snippet_sets_what_megatrons_arguments_set)
{
	static const char *const examples[] = {
		"llama3-8b.yaml", "llama3-70b.yaml", "llama2-70b.yaml",
		"gpt3-175b.yaml"};
	static const struct {
		int kind, chunks, stages;
	} kinds[] = {
		{PPCC_SCHED_1F1B, 0, 0},
		{PPCC_SCHED_1F1B, 0, 1},
		{PPCC_SCHED_INTERLEAVED, 2, 0},
	};
	enum { MAX = 128 };
	static char paths[2 * MAX][4096];
	char *argv[2 * MAX + 4];
	char *dir = tu_mkdtemp();
	int n = 0, zeros[4] = {0};
	argv[0] = "python3";
	argv[1] = "-c";
	argv[2] = (char *)bridge_runner;
	for (size_t e = 0; e < sizeof examples / sizeof examples[0]; e++)
		for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
			for (int zero = 0; zero <= 3; zero++)
				for (int dsel = 0; dsel < 2 && n < MAX - 4; dsel++) {
					overrides ov = {zero, dsel ? 0 : 1, 0, NULL, 0, 0};
					built *b = build_with(examples[e], kinds[k].kind,
							      kinds[k].chunks,
							      kinds[k].stages, &ov, 0);
					if (!b)
						continue;
					int status;
					char *mt = emit_to_string(ppcc_emit_megatron, b,
								  &status);
					char *bt = emit_to_string(
						ppcc_emit_megatron_bridge, b, &status);
					ck_assert_msg(mt && bt, "%s: %s", examples[e],
						      b->diag.text);
					char name[64];
					snprintf(name, sizeof name, "args%d", n);
					tu_write_in(paths[2 * n], sizeof paths[0], dir,
						    name, mt);
					snprintf(name, sizeof name, "bridge%d.py", n);
					tu_write_in(paths[2 * n + 1], sizeof paths[0],
						    dir, name, bt);
					argv[3 + 2 * n] = paths[2 * n];
					argv[4 + 2 * n] = paths[2 * n + 1];
					free(mt);
					free(bt);
					zeros[zero]++;
					n++;
					built_free(b);
				}
	/* mixtures of experts: Mixtral as Megatron-Core lays it out, and a
	 * pattern with dense layers, shared experts, top 1, a capacity,
	 * etp 2 of t 4, heads of their own width, group-limited routing,
	 * latent attention with an MTP module in FP8, sliding windows, query
	 * and key norms, Adam moments in bf16 */
	static const char *const moe_cases[][3] = {
		{"mixtral.yaml", "",
		 "  tensor_parallel: 1\n  stages: 4\n  chunks: 8\n"
		 "  schedule: interleaved\n  expert_parallel: 8\n"},
		{"pattern.yaml",
		 "    moe: {experts: 8, top_k: 1, shared_experts: 2, "
		 "dense_layers: 3, every: 2, capacity_factor: 1.25}\n"
		 "    head_dim: 64\n",
		 "  tensor_parallel: 4\n  stages: 2\n  schedule: 1f1b\n"
		 "  expert_parallel: 4\n  expert_tensor_parallel: 2\n"},
		{"combined.yaml", "",
		 "  tensor_parallel: 1\n  stages: 4\n  chunks: 2\n"
		 "  schedule: combined-1f1b\n  expert_parallel: 8\n"},
		{"modules.yaml",
		 "    recompute_modules: [layernorm, moe_act]\n",
		 "  tensor_parallel: 2\n  stages: 4\n  schedule: 1f1b\n"
		 "  expert_parallel: 8\n"},
		{"groups.yaml", "    moe: {groups: 4, group_topk: 2}\n",
		 "  tensor_parallel: 1\n  stages: 4\n  schedule: 1f1b\n"
		 "  expert_parallel: 8\n"},
		{"mla.yaml", "    kv_heads: 32\n    mtp_layers: 1\n"
		 "    precision: fp8\n"
		 "    attention: {kind: mla, q_lora_rank: 512, kv_lora_rank: "
		 "256, qk_nope_head_dim: 128, qk_rope_head_dim: 64, "
		 "v_head_dim: 128}\n",
		 "  tensor_parallel: 1\n  stages: 4\n  chunks: 2\n"
		 "  schedule: interleaved\n  expert_parallel: 8\n"},
		{"window.yaml",
		 "    sliding_window: 128\n    sliding_window_pattern: 2\n",
		 "  tensor_parallel: 2\n  stages: 2\n  schedule: 1f1b\n"
		 "  expert_parallel: 8\n"},
		{"qk.yaml", "    qk_norm: true\n",
		 "  tensor_parallel: 2\n  stages: 2\n  schedule: 1f1b\n"
		 "  expert_parallel: 8\n"},
		{"moments.yaml", "",
		 "  tensor_parallel: 1\n  stages: 4\n  schedule: 1f1b\n"
		 "  expert_parallel: 8\n  adam_moments: bf16\n"},
	};
	for (size_t i = 0; i < sizeof moe_cases / sizeof moe_cases[0]; i++) {
		built *mb = build_moe(dir, moe_cases[i][0], moe_cases[i][1],
				      moe_cases[i][2], 64, 1);
		int st;
		char *mt = emit_to_string(ppcc_emit_megatron, mb, &st);
		char *bt = emit_to_string(ppcc_emit_megatron_bridge, mb, &st);
		ck_assert_msg(mt && bt, "%s: %s", moe_cases[i][0],
			      mb->diag.text);
		char name[64];
		snprintf(name, sizeof name, "args-moe%zu", i);
		tu_write_in(paths[2 * n], sizeof paths[0], dir, name, mt);
		snprintf(name, sizeof name, "bridge-moe%zu.py", i);
		tu_write_in(paths[2 * n + 1], sizeof paths[0], dir, name, bt);
		argv[3 + 2 * n] = paths[2 * n];
		argv[4 + 2 * n] = paths[2 * n + 1];
		n++;
		free(mt);
		free(bt);
		built_free(mb);
	}
	/* an empty first stage: a layout in both */
	static const int part[] = {1, 11, 11, 11};
	overrides ov = {-1, 0, 4, part, 0, 0};
	built *b = build_with("llama3-8b.yaml", PPCC_SCHED_1F1B, 0, 4, &ov, 1);
	int status;
	char *mt = emit_to_string(ppcc_emit_megatron, b, &status);
	char *bt = emit_to_string(ppcc_emit_megatron_bridge, b, &status);
	ck_assert_ptr_nonnull(strstr(bt, "        [\"embedding\"],\n"
				     "        [\"decoder\"] * 11,\n"));
	tu_write_in(paths[2 * n], sizeof paths[0], dir, "args-empty", mt);
	tu_write_in(paths[2 * n + 1], sizeof paths[0], dir, "bridge-empty.py",
		    bt);
	argv[3 + 2 * n] = paths[2 * n];
	argv[4 + 2 * n] = paths[2 * n + 1];
	n++;
	argv[3 + 2 * n] = NULL;
	free(mt);
	free(bt);
	built_free(b);
	ck_assert_int_ge(n, 40);
	for (int z = 0; z < 4; z++)
		ck_assert_int_gt(zeros[z], 0);
	tu_run r;
	if (py_run(&r, argv, "megatron_bridge", "runner")) {
		int ok = 0;
		for (const char *at = r.out; (at = strstr(at, " ok\n")); at++)
			ok++;
		ck_assert_msg(ok == n, "%d of %d agree:\n%s", ok, n, r.out);
	}
	tu_run_free(&r);
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(megatron_refuses_what_its_checks_reject)
{
	/* --rotary-base is an int (arguments.py:2418); cp > 1 needs
	 * seq-length % 2 cp == 0 (arguments.py:1335-1338) */
	built *b = build("llama3-8b.yaml", -1, 0, 0);
	ppcc_transformer tr = *b->cfg.model.transformer;
	tr.rope_theta = 500000.5;
	b->cfg.model.transformer = &tr;
	int status;
	ck_assert_ptr_null(emit_to_string(ppcc_emit_megatron, b, &status));
	ck_assert_int_eq(status, PPCC_EINPUT);
	ck_assert_ptr_nonnull(strstr(b->diag.text, "--rotary-base"));
	tr.rope_theta = 500000;
	tr.seq_len = 8190;
	b->cfg.pipeline.context_parallel = 2;
	ck_assert_ptr_null(emit_to_string(ppcc_emit_megatron, b, &status));
	ck_assert_int_eq(status, PPCC_EINPUT);
	ck_assert_ptr_nonnull(strstr(b->diag.text, "seq_len 8190"));
	built_free(b);
}
END_TEST

/* ---- mixtures of experts -------------------------------------------- */

/* Megatron-Core's Mixtral 8x7B layout (Megatron-LM d98e8a6,
 * megatron/core/transformer/moe/README.md:584-660: t 1, p 4, ep 8,
 * alltoall dispatch and grouped GEMM; it runs 32 GPUs), here on 64 with
 * ppcc's interleaved v 8.  Megatron-LM's rules (d98e8a6):
 *  - megatron/training/arguments.py:2373 makes TransformerConfig's
 *    fields (transformer_config.py:54, which extends ModelParallelConfig)
 *    arguments: argument_utils.py:106 names a field `--` and its name with
 *    `-` for `_`, 191 makes a bool that defaults to False a store_true
 *    flag; so --moe-router-topk (transformer_config.py:760, int),
 *    --moe-ffn-hidden-size (740), --moe-shared-expert-intermediate-size
 *    (701), --moe-router-pre-softmax (799), --moe-grouped-gemm (850),
 *    --moe-token-dispatcher-type (891, allgather, alltoall or flex),
 *    --moe-expert-capacity-factor (917, a float),
 *    --moe-pad-expert-input-to-capacity (921), --kv-channels (184), and
 *    --expert-model-parallel-size and --expert-tensor-parallel-size
 *    (model_parallel_config.py:127, 130);
 *  - arguments.py:3518 --num-experts (int); 3520 --moe-layer-freq, read
 *    by moe_freq_type (327-349): an int, or with `[` a Python list
 *    evaluated by _eval_pattern (245-253, digits , [ ] ( ) + * only);
 *    gpt_layer_specs.py:647-656: an int N makes layer i (from 0) an
 *    expert layer when i % N == 0, a list holds one 0 or 1 a layer;
 *  - arguments.py:587-588 etp defaults to t; 1655-1658 ep divides the
 *    experts; parallel_state.py:874-884 etp x ep x p divides the world;
 *  - transformer_config.py:1813-1819 the shared experts' size is their
 *    count x their width; 1862-1866 padding to capacity needs the
 *    capacity factor; 2661-2669 top-1 softmax routing needs
 *    --moe-router-pre-softmax; 2612-2615 biases in the experts need
 *    etp 1 (ppcc's experts are SwiGLU, written --disable-bias-linear). */
START_TEST(megatron_moe_arguments_of_mixtral_by_hand)
{
	char *dir = tu_mkdtemp();
	built *b = build_moe(dir, "mixtral.yaml", "",
			     "  tensor_parallel: 1\n  stages: 4\n  chunks: 8\n"
			     "  schedule: interleaved\n  expert_parallel: 8\n",
			     64, 1);
	int status;
	char *text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	ck_assert_ptr_nonnull(strstr(text,
		"# experts: each stage's 16 devices fold into 1 expert tensor x "
		"8 expert x 2 expert data parallel\n"));
	ck_assert_ptr_nonnull(strstr(text, "--moe-aux-loss-coeff"));
	ck_assert_ptr_nonnull(strstr(text,
		"--tensor-model-parallel-size 1\n"
		"--pipeline-model-parallel-size 4\n"
		"--context-parallel-size 1\n"
		"--expert-model-parallel-size 8\n"
		"--expert-tensor-parallel-size 1\n"
		"--num-layers 32\n"
		"--hidden-size 4096\n"
		"--ffn-hidden-size 14336\n"
		"--num-experts 8\n"
		"--moe-layer-freq 1\n"
		"--moe-ffn-hidden-size 14336\n"
		"--moe-router-topk 2\n"
		"--moe-grouped-gemm\n"
		"--moe-token-dispatcher-type alltoall\n"
		"--num-attention-heads 32\n"
		"--group-query-attention\n"
		"--num-query-groups 8\n"));
	ck_assert_ptr_nonnull(strstr(text,
		"--num-layers-per-virtual-pipeline-stage 1\n"));
	/* Mixtral's heads are h / a wide; dropless; top 2 */
	ck_assert_ptr_null(strstr(text, "--kv-channels"));
	ck_assert_ptr_null(strstr(text, "capacity"));
	ck_assert_ptr_null(strstr(text, "--moe-router-pre-softmax"));
	ck_assert_ptr_null(strstr(text, "--moe-shared-expert"));
	check_megatron_words(text, "mixtral");
	check_megatron_rules(b, text, "mixtral");
	ck_assert_int_eq(8 % arg_int(text, "--expert-model-parallel-size"), 0);
	ck_assert_int_eq(64 % (arg_int(text, "--expert-model-parallel-size") *
			       arg_int(text, "--expert-tensor-parallel-size") *
			       arg_int(text, "--pipeline-model-parallel-size")),
			 0);
	free(text);
	built_free(b);

	/* three dense layers, then experts every other layer: the list,
	 * one a layer; two shared experts, 2 x 14336 wide; top 1 with its
	 * softmax first; a capacity of 1.25, padded; etp 2 of t 4 */
	b = build_moe(dir, "pattern.yaml",
		      "    moe: {experts: 8, top_k: 1, shared_experts: 2, "
		      "dense_layers: 3, every: 2, capacity_factor: 1.25}\n"
		      "    head_dim: 64\n",
		      "  tensor_parallel: 4\n  stages: 2\n  schedule: 1f1b\n"
		      "  expert_parallel: 4\n  expert_tensor_parallel: 2\n",
		      64, 1);
	text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	char v[256];
	ck_assert_str_eq(arg_value(text, "--moe-layer-freq", v, sizeof v),
			 "[0,0,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,0,1,"
			 "0,1,0,1,0,1,0,1]");
	ck_assert_int_eq(arg_int(text, "--moe-router-topk"), 1);
	ck_assert_ptr_nonnull(strstr(text, "\n--moe-router-pre-softmax\n"));
	ck_assert_int_eq(arg_int(text, "--moe-shared-expert-intermediate-size"),
			 2 * 14336);
	ck_assert_str_eq(arg_value(text, "--moe-expert-capacity-factor", v,
				   sizeof v), "1.25");
	ck_assert_ptr_nonnull(strstr(text,
		"\n--moe-pad-expert-input-to-capacity\n"));
	ck_assert_int_eq(arg_int(text, "--expert-tensor-parallel-size"), 2);
	ck_assert_int_eq(arg_int(text, "--kv-channels"), 64);
	ck_assert_ptr_nonnull(strstr(text, "\n--sequence-parallel\n"));
	check_megatron_words(text, "pattern");
	check_megatron_rules(b, text, "pattern");
	free(text);
	built_free(b);
	tu_rmtree_free(dir);
}
END_TEST

/* Megatron-LM d98e8a6 megatron/core/transformer/moe/moe_layer.py:
 * 636-640: a mixture-of-experts layer raises in training when its
 * attention's tensor-parallel group has more than one rank and sequence
 * parallelism is off.  torchtitan does not write experts yet; DeepSpeed
 * cannot run Mixtral's dropless routing (deepspeed_moe_arguments_of_
 * mixtral_by_hand). */
START_TEST(moe_exports_refuse_what_their_trainer_cannot_run)
{
	char *dir = tu_mkdtemp();
	built *b = build_moe(dir, "nosp.yaml", "    sequence_parallel: false\n",
			     "  tensor_parallel: 2\n  stages: 4\n"
			     "  schedule: 1f1b\n  expert_parallel: 4\n", 64, 1);
	int status;
	ck_assert_ptr_null(emit_to_string(ppcc_emit_megatron, b, &status));
	ck_assert_int_eq(status, PPCC_EINPUT);
	ck_assert_ptr_nonnull(strstr(b->diag.text, "sequence_parallel: true"));
	ck_assert_msg(strstr(b->diag.text, "15:3: error:"), "%s", b->diag.text);
	ck_assert_ptr_null(emit_to_string(ppcc_emit_megatron_bridge, b,
					  &status));
	ck_assert_int_eq(status, PPCC_EINPUT);
	built_free(b);
	b = build_moe(dir, "sp.yaml", "",
		      "  tensor_parallel: 2\n  stages: 4\n"
		      "  schedule: 1f1b\n  expert_parallel: 4\n", 64, 1);
	char *text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	free(text);
	emit_fn others[] = {ppcc_emit_torchtitan_toml, ppcc_emit_torchtitan,
			    ppcc_emit_deepspeed};
	for (int i = 0; i < 3; i++) {
		ck_assert_ptr_null(emit_to_string(others[i], b, &status));
		ck_assert_int_eq(status, PPCC_EINPUT);
		ck_assert_ptr_nonnull(strstr(b->diag.text, i < 2
			? "no mixture-of-experts flavor" : "mixture-of-experts layer "
			  "cannot run dropless routing"));
	}
	built_free(b);
	/* a torchtitan flavor fixes its routing: other expert groups are
	 * another model (models/common/moe.py:188-196) */
	b = build_preset(dir, "qg.yaml", "qwen3-30b-a3b",
			 "    moe: {groups: 4, group_topk: 2}\n"
			 "    recompute: full\n",
			 "  trainer: torchtitan\n  zero: 2\n"
			 "  expert_parallel: 16\n", 16, 1);
	ck_assert_ptr_null(emit_to_string(ppcc_emit_torchtitan_toml, b,
					  &status));
	ck_assert_int_eq(status, PPCC_EINPUT);
	ck_assert_msg(strstr(b->diag.text, "error: torchtitan's qwen3 "
			     "\"30B-A3B\" routes without expert groups, and "
			     "the plan routes to 2 of 4: plan the flavor's "
			     "routing"), "%s", b->diag.text);
	built_free(b);
	/* qwen3's flavors norm each head's query and key (v0.2.2
	 * models/qwen3/__init__.py:41-176 qk_norm=True): its shape without
	 * them is no flavor, with them (the preset's) the flavor */
	b = build_preset(dir, "qn.yaml", "qwen3-30b-a3b",
			 "    qk_norm: false\n    recompute: full\n",
			 "  trainer: torchtitan\n  zero: 2\n"
			 "  expert_parallel: 16\n", 16, 1);
	ck_assert_ptr_null(emit_to_string(ppcc_emit_torchtitan_toml, b,
					  &status));
	ck_assert_msg(strstr(b->diag.text, "no mixture-of-experts flavor"),
		      "%s", b->diag.text);
	built_free(b);
	b = build_preset(dir, "qn.yaml", "qwen3-30b-a3b", "    recompute: full\n",
			 "  trainer: torchtitan\n  zero: 2\n"
			 "  expert_parallel: 16\n", 16, 1);
	char *toml = emit_to_string(ppcc_emit_torchtitan_toml, b, &status);
	ck_assert_msg(toml && strstr(toml, "\"30B-A3B\""), "%s", b->diag.text);
	free(toml);
	built_free(b);
	tu_rmtree_free(dir);
}
END_TEST

/* ---- latent attention, multi-token prediction, windows ------------- */

/* DeepSeek-V3 (Hugging Face config.json of deepseek-ai/DeepSeek-V3, the
 * preset's source: q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim
 * 128, qk_rope_head_dim 64, v_head_dim 128, num_nextn_predict_layers 1,
 * first_k_dense_replace 3 of 61 layers, 256 routed experts of 2048, 8 a
 * token, 1 shared, rope_theta 10000) as DeepSeek-V3 trained it: p 16, ep
 * 64, ZeRO-1, 2048 devices.  Megatron-LM's rules (d98e8a6):
 *  - transformer_config.py:288 multi_latent_attention, 259 qk_layernorm
 *    (bools: flags, argument_utils.py:191), 68 mtp_num_layers (an int);
 *    arguments.py:3548-3557 --q-lora-rank (default None), --kv-lora-rank,
 *    --qk-head-dim (the part without RoPE), --qk-pos-emb-head-dim,
 *    --v-head-dim; 2906-2909 --rope-type, rope or yarn;
 *  - argument_utils.py:292-293 --multi-latent-attention builds an
 *    MLATransformerConfig, whose rope_type defaults to yarn
 *    (transformer_config.py:3306) when --rope-type is not given
 *    (argument_utils.py:335-337); multi_latent_attention.py:181-187 rope
 *    is plain RoPE of --rotary-base over the qk_pos_emb_head_dim part,
 *    and 177-178 the softmax scale is 1 / sqrt(qk_head_dim +
 *    qk_pos_emb_head_dim) since --rotary-scaling-factor defaults to 1
 *    (arguments.py:3558) and yarn_rotary_pos_embedding.py:275-278 gives
 *    mscale 1 at a factor <= 1; gpt_model.py:183 the model adds no RoPE
 *    of its own beside latent attention;
 *  - mla_qk_norm_config.py:63-67 and 95-106: without --qk-layernorm the
 *    latents are not normed; 132-168 with it the norms are fused into the
 *    up projections, and with no query latent (q_lora_rank None) into
 *    linear_q_proj, a norm of h before the query's projection (147-150):
 *    ppcc refuses q_lora_rank 0;
 *  - arguments.py:1973-1974 latent attention refuses
 *    --group-query-attention; 882-886 multi-token prediction needs
 *    --position-embedding-type rope or none;
 *  - multi_token_prediction.py:823-828 without a layout every MTP module
 *    is on the last pipeline stage; pipeline_parallel_layer_layout.py:
 *    112-114 a layout's m count is --mtp-num-layers, 115-120 no decoder
 *    after an m, 121-137 all of them in one virtual stage, the last of its
 *    rank's, not on the first rank. */
START_TEST(megatron_latent_attention_and_mtp_of_deepseek_v3_by_hand)
{
	char *dir = tu_mkdtemp();
	built *b = build_preset(dir, "ds.yaml", "deepseek-v3", "",
				"  tensor_parallel: 1\n  stages: 16\n"
				"  schedule: 1f1b\n  expert_parallel: 64\n",
				2048, 1);
	int status;
	char *text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	/* three dense layers, then 58 of experts */
	char freq[256] = "[0,0,0";
	for (int i = 0; i < 58; i++)
		strcat(freq, ",1");
	strcat(freq, "]");
	char want[2048];
	snprintf(want, sizeof want,
		 "--num-layers 61\n"
		 "--hidden-size 7168\n"
		 "--ffn-hidden-size 18432\n"
		 "--num-experts 256\n"
		 "--moe-layer-freq %s\n"
		 "--moe-ffn-hidden-size 2048\n"
		 "--moe-router-topk 8\n"
		 "--moe-router-num-groups 8\n"
		 "--moe-router-group-topk 4\n"
		 "--moe-shared-expert-intermediate-size 2048\n"
		 "--moe-grouped-gemm\n"
		 "--moe-token-dispatcher-type alltoall\n"
		 "--num-attention-heads 128\n"
		 "--attention-backend fused\n"
		 "--multi-latent-attention\n"
		 "--qk-layernorm\n"
		 "--q-lora-rank 1536\n"
		 "--kv-lora-rank 512\n"
		 "--qk-head-dim 128\n"
		 "--qk-pos-emb-head-dim 64\n"
		 "--v-head-dim 128\n"
		 "--rope-type rope\n"
		 "--no-rope-fusion\n"
		 "--mtp-num-layers 1\n"
		 "--seq-length 4096\n"
		 "--max-position-embeddings 4096\n"
		 "--normalization RMSNorm\n"
		 "--position-embedding-type rope\n"
		 "--rotary-base 10000\n", freq);
	ck_assert_msg(strstr(text, want), "%s", text);
	ck_assert_ptr_null(strstr(text, "--group-query-attention"));
	ck_assert_ptr_null(strstr(text, "--kv-channels"));
	ck_assert_ptr_null(strstr(text, "--window-size"));
	ck_assert_ptr_nonnull(strstr(text, "--mtp-loss-scaling-factor"));
	ck_assert_int_eq(arg_int(text, "--pipeline-model-parallel-size"), 16);
	ck_assert_int_eq(arg_int(text, "--expert-model-parallel-size"), 64);
	check_megatron_words(text, "deepseek-v3");
	check_megatron_rules(b, text, "deepseek-v3");
	check_megatron_split(b, "deepseek-v3");
	/* 61 blocks do not split 16 ways: a layout, the MTP module beside
	 * the head, once */
	char lay[1024];
	ck_assert_ptr_nonnull(arg_value(text, "--pipeline-model-parallel-layout",
					lay, sizeof lay));
	ck_assert_msg(strlen(lay) > 2 && strcmp(lay + strlen(lay) - 2, "mL") == 0 &&
		      strchr(lay, 'm') == lay + strlen(lay) - 2, "%s", lay);
	free(text);
	built_free(b);

	/* interleaved, v 2: the module is in rank 7's last virtual stage */
	b = build_preset(dir, "ds2.yaml", "deepseek-v3", "    recompute: full\n",
			 "  tensor_parallel: 1\n  stages: 8\n  chunks: 2\n"
			 "  schedule: interleaved\n  expert_parallel: 64\n"
			 "  global_batch_size: 4096\n",
			 2048, 1);
	text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	check_megatron_words(text, "deepseek-v3 v 2");
	check_megatron_rules(b, text, "deepseek-v3 v 2");
	check_megatron_split(b, "deepseek-v3 v 2");
	free(text);
	built_free(b);

	/* DeepSeek-V3's recomputation (its report, section 3.2.3: the
	 * norms and the latent up projections; 3.3.3: the experts' SwiGLU
	 * output) as Megatron-LM's modules, in their order; in FP8 refused,
	 * for the delayed scaling ppcc writes (transformer_config.py:
	 * 2000-2006) */
	const char *mods = "    recompute_modules: [moe_act, mla_up_proj, "
			   "layernorm, core_attn]\n";
	b = build_preset(dir, "ds3.yaml", "deepseek-v3", mods,
			 "  tensor_parallel: 1\n  stages: 16\n"
			 "  schedule: 1f1b\n  expert_parallel: 64\n",
			 2048, 1);
	text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	ck_assert_ptr_nonnull(strstr(text, "\n--recompute-granularity "
				     "selective\n--recompute-modules core_attn "
				     "layernorm mla_up_proj moe_act\n"));
	check_megatron_words(text, "deepseek-v3 modules");
	free(text);
	built_free(b);
	char fp8[256];
	snprintf(fp8, sizeof fp8, "%s    precision: fp8\n", mods);
	b = build_preset(dir, "ds4.yaml", "deepseek-v3", fp8,
			 "  tensor_parallel: 1\n  stages: 16\n"
			 "  schedule: 1f1b\n  expert_parallel: 64\n",
			 2048, 1);
	text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_ptr_null(text);
	ck_assert_int_eq(status, PPCC_EINPUT);
	ck_assert_msg(strstr(b->diag.text, "Megatron-LM refuses layernorm "
			     "and moe_act recomputation under FP8's delayed "
			     "scaling"),
		      "%s", b->diag.text);
	built_free(b);
	tu_rmtree_free(dir);
}
END_TEST

/* Sliding windows (Megatron-LM d98e8a6): arguments.py:2384-2388
 * --window-size, read by tuple_type (377-387: "a,b" or "(a,b)"), and
 * --window-attn-skip-freq, read as --moe-layer-freq is;
 * extensions/transformer_engine.py:2163-2171 a layer that
 * transformer/utils.py:531-543 calls windowed passes window_size to
 * Transformer Engine: layer n (from 1) is windowed when no skip freq is
 * given, or when n % N != 0 for an int N; utils.py:43-50 (the mask
 * without Transformer Engine) and Transformer Engine d0067d0
 * transformer_engine/pytorch/attention/dot_product_attention/
 * dot_product_attention.py:568-570: query i sees keys i - w0 .. i + w1,
 * so W keys are (W - 1, 0).  Transformer Engine d0067d0
 * .../context_parallel.py:5054-5060 refuses a window under context
 * parallelism unless cp_comm_type is a2a or all_gather, and Megatron-LM's
 * --cp-comm-type defaults to p2p (arguments.py:3221), the ring ppcc
 * prices. */
/* precision fp8 is Megatron-LM's --fp8-format hybrid with delayed
 * scaling (d98e8a6 megatron/core/transformer/transformer_config.py:587-596:
 * fp8 is written --fp8-format, e4m3 or hybrid; fp8_recipe, --fp8-recipe,
 * defaults to delayed); Megatron-Bridge's the same through its
 * bf16_with_fp8_delayed_scaling_mixed recipe (067f987
 * training/mixed_precision.py:217-233), whose FP8 parameter gather
 * (line 231) goes: ppcc plans the gathers in bf16. */
START_TEST(megatron_writes_fp8_as_planned)
{
	char *dir = tu_mkdtemp();
	const char *pipe = "  tensor_parallel: 1\n  stages: 4\n"
			   "  schedule: 1f1b\n  expert_parallel: 8\n";
	built *b = build_moe(dir, "f8.yaml", "    precision: fp8\n", pipe, 64, 1);
	int status;
	char *text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	char v[64];
	ck_assert_str_eq(arg_value(text, "--fp8-format", v, sizeof v), "hybrid");
	ck_assert_str_eq(arg_value(text, "--fp8-recipe", v, sizeof v), "delayed");
	check_megatron_words(text, "fp8");
	free(text);
	text = emit_to_string(ppcc_emit_megatron_bridge, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	ck_assert_ptr_nonnull(strstr(text, "\n    cfg.mixed_precision = "
				     "bf16_with_fp8_delayed_scaling_mixed()\n"
				     "    cfg.mixed_precision.fp8_param_gather "
				     "= False\n"));
	free(text);
	built_free(b);
	b = build_moe(dir, "b16.yaml", "", pipe, 64, 1);
	text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	ck_assert_ptr_null(strstr(text, "--fp8"));
	ck_assert_ptr_null(strstr(text, "--tp-comm-overlap"));
	free(text);
	built_free(b);

	/* pipeline.overlap.tp_comm is --tp-comm-overlap (d98e8a6
	 * megatron/core/model_parallel_config.py:265, a store_true of
	 * ModelParallelConfig; arguments.py:1441-1442 wants sequence
	 * parallelism), which Megatron-Bridge needs a userbuffers layout
	 * for: refused there */
	b = build_preset(dir, "tp.yaml", "llama3-8b", "",
			 "  tensor_parallel: 2\n  stages: 2\n"
			 "  overlap: {tp_comm: true}\n", 8, 1);
	text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	ck_assert_ptr_nonnull(strstr(text, "\n--tp-comm-overlap\n"));
	ck_assert_ptr_nonnull(strstr(text, "\n--sequence-parallel\n"));
	check_megatron_words(text, "tp overlap");
	free(text);
	text = emit_to_string(ppcc_emit_megatron_bridge, b, &status);
	ck_assert_ptr_null(text);
	ck_assert_ptr_nonnull(strstr(b->diag.text, "userbuffers"));
	built_free(b);

	/* planned routing and dispatch that no flag writes are refused by
	 * name, not dropped */
	static const struct {
		const char *moe, *what;
	} no[] = {
		{"    moe: {node_limit: 2}\n", "node-limited routing"},
		{"    moe: {dispatch: fp8}\n", "FP8 token dispatch"},
	};
	for (int i = 0; i < 2; i++) {
		b = build_moe(dir, "nl.yaml", no[i].moe, pipe, 64, 1);
		for (int k = 0; k < 2; k++) {
			text = emit_to_string(k ? ppcc_emit_megatron_bridge
					      : ppcc_emit_megatron, b, &status);
			ck_assert_ptr_null(text);
			ck_assert_msg(strstr(b->diag.text, no[i].what), "%s",
				      b->diag.text);
		}
		built_free(b);
	}
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(megatron_sliding_windows_and_their_refusals)
{
	char *dir = tu_mkdtemp();
	const char *pipe = "  tensor_parallel: 1\n  stages: 4\n"
			   "  schedule: 1f1b\n  expert_parallel: 8\n";
	built *b = build_moe(dir, "w2.yaml", "    sliding_window: 128\n"
			     "    sliding_window_pattern: 2\n", pipe, 64, 1);
	int status;
	char *text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	char v[64];
	ck_assert_str_eq(arg_value(text, "--window-size", v, sizeof v), "127,0");
	ck_assert_int_eq(arg_int(text, "--window-attn-skip-freq"), 2);
	/* the layers Megatron-LM windows are ppcc's */
	for (int n = 1; n <= 32; n++)
		ck_assert_int_eq(n % 2 != 0, ppcc_transformer_is_windowed(
			b->cfg.model.transformer, n - 1));
	check_megatron_words(text, "window 2");
	check_megatron_rules(b, text, "window 2");
	free(text);
	built_free(b);

	/* every layer windowed: no skip freq */
	b = build_moe(dir, "w0.yaml", "    sliding_window: 4096\n", pipe, 64, 1);
	text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	ck_assert_str_eq(arg_value(text, "--window-size", v, sizeof v), "4095,0");
	ck_assert_ptr_null(strstr(text, "--window-attn-skip-freq"));
	free(text);
	built_free(b);

	/* refused: a window under context parallelism, latent attention
	 * with no query latent, multi-token prediction or latent attention
	 * with learned positions */
	static const struct {
		const char *preset, *extra, *pipeline, *what;
	} no[] = {
		{"mixtral-8x7b", "    sliding_window: 128\n",
		 "  tensor_parallel: 1\n  context_parallel: 2\n  stages: 4\n"
		 "  schedule: 1f1b\n  expert_parallel: 8\n",
		 "context_parallel: 1"},
		{"mixtral-8x7b", "    kv_heads: 32\n"
		 "    attention: {kind: mla, q_lora_rank: 0, kv_lora_rank: "
		 "256, qk_nope_head_dim: 128, qk_rope_head_dim: 64, "
		 "v_head_dim: 128}\n", NULL, "q_lora_rank"},
		{"mixtral-8x7b", "    mtp_layers: 1\n    position: learned\n",
		 NULL, "position: rope"},
		{"mixtral-8x7b", "    kv_heads: 32\n    position: learned\n"
		 "    attention: {kind: mla, q_lora_rank: 512, kv_lora_rank: "
		 "256, qk_nope_head_dim: 128, qk_rope_head_dim: 64, "
		 "v_head_dim: 128}\n", NULL, "position: rope"},
	};
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		b = build_preset(dir, "no.yaml", no[i].preset, no[i].extra,
				 no[i].pipeline ? no[i].pipeline : pipe, 64, 1);
		ck_assert_ptr_null(emit_to_string(ppcc_emit_megatron, b,
						  &status));
		ck_assert_int_eq(status, PPCC_EINPUT);
		ck_assert_msg(strstr(b->diag.text, no[i].what), "%zu: %s", i,
			      b->diag.text);
		built_free(b);
	}
	tu_rmtree_free(dir);
}
END_TEST

/* What a trainer's settings do not carry (multi-head latent attention,
 * multi-token prediction and sliding windows everywhere but Megatron-LM's
 * arguments and Megatron-Bridge's fields; GPT-OSS's biases and sinks
 * everywhere) is refused by that
 * trainer's format, not written as another model. */
START_TEST(unwritten_attention_and_heads_are_refused_by_every_trainer)
{
	static const struct {
		const char *preset, *extra, *what;
		int megatron; /* 1: Megatron-LM's arguments carry it */
	} cases[] = {
		{"mixtral-8x7b", "    kv_heads: 32\n"
		 "    attention: {kind: mla, q_lora_rank: 512, kv_lora_rank: "
		 "256, qk_nope_head_dim: 128, qk_rope_head_dim: 64, "
		 "v_head_dim: 128}\n", "multi-head latent attention", 1},
		{"mixtral-8x7b", "    mtp_layers: 1\n", "multi-token prediction",
		 1},
		{"mixtral-8x7b",
		 "    sliding_window: 128\n    sliding_window_pattern: 2\n",
		 "sliding-window attention", 1},
		{"gpt-oss-120b", "    sliding_window: 0\n    sliding_window_pattern: 0\n"
		 "    biases: false\n",
		 "attention sinks", 0},
		{"gpt-oss-120b", "", "biases (transformer.biases)", 0},
		{"mixtral-8x7b", "    qk_norm: true\n",
		 "query and key norms (transformer.qk_norm)", 1},
	};
	emit_fn all[] = {ppcc_emit_megatron, ppcc_emit_megatron_bridge,
			 ppcc_emit_torchtitan_toml, ppcc_emit_torchtitan,
			 ppcc_emit_deepspeed};
	char *dir = tu_mkdtemp();
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		built *b = build_preset(dir, "x.yaml", cases[c].preset,
					cases[c].extra,
					"  tensor_parallel: 1\n  stages: 4\n"
					"  schedule: 1f1b\n"
					"  expert_parallel: 8\n", 64, 1);
		for (size_t f = 0; f < sizeof all / sizeof all[0]; f++) {
			int status;
			b->diag.len = 0;
			b->diag.text[0] = 0;
			char *text = emit_to_string(all[f], b, &status);
			if (f <= 1 && cases[c].megatron) {
				ck_assert_msg(text, "%s", b->diag.text);
				free(text);
				continue;
			}
			ck_assert_ptr_null(text);
			ck_assert_int_eq(status, PPCC_EINPUT);
			/* torchtitan checks its flavors, their pipelining
			 * and ZeRO before the attention, and DeepSpeed's
			 * refusal names the first of GPT-OSS's features it
			 * does not write (its window): refused, not always
			 * for this */
			if (f <= 1)
				ck_assert_msg(strstr(b->diag.text, cases[c].what),
					      "%s", b->diag.text);
			else if (f == 4)
				ck_assert_msg(strstr(b->diag.text, "ppcc does not "
						     "write DeepSpeed's settings "
						     "for "), "%s", b->diag.text);
		}
		built_free(b);
	}
	tu_rmtree_free(dir);
}
END_TEST

/* The search's filter for Megatron-LM (ppcc_megatron_admits) admits a
 * configuration exactly when the export writes it: each of
 * megatron_refuses' clauses that the search's degrees, kind and
 * recomputation decide, refused and admitted alike (a window beside
 * context parallelism, bf16 gradients under Megatron-FSDP, experts with
 * t > 1 and no sequence parallelism, a sequence 2 cp does not divide,
 * FP8 with norm recomputation; an interleaving group outside p..m the
 * planner refuses first). */
START_TEST(megatron_admits_what_its_export_writes)
{
	static const struct {
		const char *preset, *extra, *pipeline;
		int admitted;
	} cases[] = {
		{"mixtral-8x7b", "    sliding_window: 128\n",
		 "  tensor_parallel: 1\n  context_parallel: 2\n  stages: 4\n"
		 "  schedule: 1f1b\n  expert_parallel: 8\n", 0},
		{"mixtral-8x7b", "    sliding_window: 128\n",
		 "  tensor_parallel: 1\n  stages: 4\n  schedule: 1f1b\n"
		 "  expert_parallel: 8\n", 1},
		{"llama3-8b", "", "  stages: 2\n  zero: 2\n  grad_bytes: 2\n"
		 "  schedule: 1f1b\n", 0},
		{"llama3-8b", "", "  stages: 2\n  zero: 1\n  grad_bytes: 2\n"
		 "  schedule: 1f1b\n", 1},
		{"mixtral-8x7b", "    sequence_parallel: false\n",
		 "  tensor_parallel: 2\n  stages: 4\n  schedule: 1f1b\n"
		 "  expert_parallel: 8\n", 0},
		{"llama3-8b", "    seq_len: 8190\n",
		 "  context_parallel: 2\n  stages: 2\n  schedule: 1f1b\n", 0},
		{"llama3-8b", "", "  stages: 2\n  chunks: 2\n"
		 "  schedule: interleaved\n", 1},
		{"mixtral-8x7b", "    precision: fp8\n"
		 "    recompute_modules: [layernorm]\n",
		 "  tensor_parallel: 1\n  stages: 4\n  schedule: 1f1b\n"
		 "  expert_parallel: 8\n", 0},
		/* Transformer Engine's unfused attention runs no context
		 * parallelism (d0067d0 dot_product_attention/utils.py:1171) */
		{"llama3-8b", "    flash_attention: false\n",
		 "  context_parallel: 2\n  stages: 2\n  schedule: 1f1b\n", 0},
		{"llama3-8b", "    flash_attention: false\n",
		 "  stages: 2\n  schedule: 1f1b\n", 1},
	};
	char *dir = tu_mkdtemp();
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		built *b = build_preset(dir, "adm.yaml", cases[i].preset,
					cases[i].extra, cases[i].pipeline, 64, 1);
		const ppcc_config *c = &b->cfg;
		const ppcc_pipeline *pl = &c->pipeline;
		ppcc_search_entry e = {
			.t = pl->tensor_parallel, .p = pl->stages,
			.d = pl->data_parallel, .cp = pl->context_parallel,
			.v = pl->chunks > 0 ? pl->chunks : 1,
			.b = c->model.micro_batch_size, .m = pl->microbatches,
			.ep = pl->expert_parallel, .etp = ppcc_pipeline_etp(pl),
			.recompute = c->model.transformer->recompute,
			.zero = pl->zero, .kind = pl->kind};
		int status;
		char *text = emit_to_string(ppcc_emit_megatron, b, &status);
		ck_assert_msg((text != NULL) == cases[i].admitted, "%zu: %s", i,
			      b->diag.text);
		ck_assert_int_eq(ppcc_megatron_admits(&e, (void *)c),
				 cases[i].admitted);
		free(text);
		built_free(b);
	}
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(trainer_formats_refuse_what_the_trainer_cannot_run)
{
	built *b = build("hetero.yaml", PPCC_SCHED_GPIPE, 0, 0);
	int status;
	ck_assert_ptr_null(emit_to_string(ppcc_emit_megatron, b, &status));
	ck_assert_int_eq(status, PPCC_EINPUT);
	ck_assert_ptr_nonnull(strstr(b->diag.text, "not gpipe"));
	ck_assert_ptr_null(emit_to_string(ppcc_emit_deepspeed, b, &status));
	ck_assert_int_eq(status, PPCC_EINPUT);
	built_free(b);
	b = build("tiny.yaml", -1, 0, 0);
	ck_assert_ptr_null(emit_to_string(ppcc_emit_torchtitan_toml, b, &status));
	ck_assert_int_eq(status, PPCC_EINPUT);
	ck_assert_ptr_nonnull(strstr(b->diag.text, "transformer"));
	/* DeepSpeed takes any list of layers */
	char *text = emit_to_string(ppcc_emit_deepspeed, b, &status);
	ck_assert_ptr_nonnull(text);
	free(text);
	built_free(b);
}
END_TEST

/* ---- torchtitan ------------------------------------------------------ */

/* examples/<example> with the kind (-1: the file's), p stages, ZeRO zero
 * (-1: the file's); NULL when ppcc cannot plan it (it does not fit). */
static built *build_try(const char *example, int kind, int stages, int zero)
{
	overrides ov = {.zero = zero};
	return build_with(example, kind, 0, stages, &ov, 0);
}

/* Python's tomllib over each file named: one line a file, the keys the
 * tests compare, then its stages' modules, one line each. */
static const char *const toml_reader =
	"import sys, tomllib\n"
	"for f in sys.argv[1:]:\n"
	"    c = tomllib.load(open(f, 'rb'))\n"
	"    p, t, m = c['parallelism'], c['training'], c['model']\n"
	"    print(m['name'], m['flavor'], p['tensor_parallel_degree'],\n"
	"          p['pipeline_parallel_degree'], p['context_parallel_degree'],\n"
	"          p['data_parallel_replicate_degree'],\n"
	"          p['data_parallel_shard_degree'],\n"
	"          p.get('pipeline_parallel_schedule', '-'),\n"
	"          p.get('pipeline_parallel_schedule_csv', '-'),\n"
	"          p.get('pipeline_parallel_microbatch_size', 1),\n"
	"          t['local_batch_size'], t['global_batch_size'],\n"
	"          t['mixed_precision_param'], t['mixed_precision_reduce'],\n"
	"          len(p.get('module_fqns_per_model_part', [])))\n"
	"    for part in p.get('module_fqns_per_model_part', []):\n"
	"        print(' '.join(part))\n";

/* tomllib's reading of the files, or NULL (the test skipped) without
 * python3. */
static char *toml_read(char *const *paths, int n)
{
	char *argv[4096];
	ck_assert_int_lt(n + 4, 4096);
	argv[0] = "python3";
	argv[1] = "-c";
	argv[2] = (char *)toml_reader;
	for (int i = 0; i < n; i++)
		argv[3 + i] = paths[i];
	argv[3 + n] = NULL;
	tu_run r;
	if (!py_run(&r, argv, "torchtitan_toml", "tomllib"))
		return NULL;
	char *out = strdup(r.out);
	tu_run_free(&r);
	return out;
}

typedef struct tt_read {
	char name[32], flavor[32], sched[64], csv[64], mp[32], mr[32];
	int t, p, cp, rep, shard, mbs, parts;
	long long local, global;
} tt_read;

/* One file's summary line at *at; *at moves past it. */
static void tt_scan(tt_read *o, const char **at)
{
	ck_assert_int_eq(sscanf(*at, "%31s %31s %d %d %d %d %d %63s %63s %d "
				"%lld %lld %31s %31s %d", o->name, o->flavor,
				&o->t, &o->p, &o->cp, &o->rep, &o->shard,
				o->sched, o->csv, &o->mbs, &o->local,
				&o->global, o->mp, o->mr, &o->parts), 15);
	*at = strchr(*at, '\n') + 1;
}

/* The stages' module lines at *at against the partition: each module
 * once, in model order (v0.2.2's names: tok_embeddings, layers.N, norm,
 * output; models/llama3/model/model.py:448-458). */
static void tt_modules(const built *b, const char **at, const char *what)
{
	const char *line = *at;
	int L = b->plan.n_layers - 2, next = 0;
	for (int k = 0; k < b->plan.best.schedule.n_stages; k++) {
		lay_stage st = plan_stage(&b->plan, k);
		static char exp[1 << 14];
		size_t pos = 0;
		exp[0] = '\0';
		if (st.e)
			pos += (size_t)snprintf(exp + pos, sizeof exp - pos,
						"tok_embeddings ");
		for (int j = 0; j < st.t; j++)
			pos += (size_t)snprintf(exp + pos, sizeof exp - pos,
						"layers.%d ", next++);
		if (st.l)
			pos += (size_t)snprintf(exp + pos, sizeof exp - pos,
						"norm output ");
		if (pos)
			exp[pos - 1] = '\n';
		ck_assert_msg(strncmp(line, exp, pos) == 0,
			      "%s stage %d: %.80s, want %.80s", what, k, line,
			      exp);
		line += pos;
	}
	ck_assert_int_eq(next, L);
	*at = line;
}

START_TEST(torchtitan_toml_parses_and_names_every_module_once)
{
	static const struct {
		const char *example;
		int kind, stages;
		const char *sched;
	} cases[] = {
		{"llama3-70b.yaml", -1, 4, "1F1B"},
		{"llama3-70b.yaml", PPCC_SCHED_INTERLEAVED, 4, "Interleaved1F1B"},
		{"llama3-70b.yaml", PPCC_SCHED_ZB_V, 4, "ZBVZeroBubble"},
		{"llama3-70b.yaml", PPCC_SCHED_ZB_INTERLEAVED, 4,
		 "InterleavedZeroBubble"},
		{"llama3-70b.yaml", PPCC_SCHED_DUALPIPE_V, 4, "DualPipeV"},
		{"llama3-70b.yaml", PPCC_SCHED_ZB_H1, 4, "PipelineScheduleMulti"},
		{"llama3-70b.yaml", PPCC_SCHED_1F1B, 8, "1F1B"},
		{"llama3-8b.yaml", PPCC_SCHED_1F1B, 8, "1F1B"},
	};
	enum { N = sizeof cases / sizeof cases[0] };
	char *dir = tu_mkdtemp();
	static char paths[N][4096];
	char *argv[N];
	built *bs[N];
	for (int i = 0; i < N; i++) {
		bs[i] = build_try(cases[i].example, cases[i].kind,
				  cases[i].stages, 2);
		ck_assert_msg(bs[i], "%s", cases[i].example);
		int status;
		char *text = emit_to_string(ppcc_emit_torchtitan_toml, bs[i],
					    &status);
		ck_assert_msg(text, "%s: %s", cases[i].example, bs[i]->diag.text);
		char name[64];
		snprintf(name, sizeof name, "job%d.toml", i);
		tu_write_in(paths[i], sizeof paths[i], dir, name, text);
		argv[i] = paths[i];
		free(text);
	}
	char *out = toml_read(argv, N);
	const char *at = out;
	for (int i = 0; out && i < N; i++) {
		const built *b = bs[i];
		const ppcc_pipeline *pl = &b->cfg.pipeline;
		tt_read r;
		tt_scan(&r, &at);
		ck_assert_str_eq(r.sched, cases[i].sched);
		ck_assert_int_eq(r.t, pl->tensor_parallel);
		ck_assert_int_eq(r.p, pl->stages);
		ck_assert_int_eq(r.cp, pl->context_parallel);
		ck_assert_int_eq(r.rep, 1);
		ck_assert_int_eq(r.shard, pl->data_parallel);
		ck_assert_int_eq(r.mbs, b->cfg.model.micro_batch_size);
		ck_assert_int_eq(r.local, (long long)pl->microbatches *
					  b->cfg.model.micro_batch_size);
		ck_assert_int_eq(r.parts, b->plan.best.schedule.n_stages);
		tt_modules(b, &at, cases[i].example);
	}
	ck_assert(!out || *at == '\0');
	free(out);
	for (int i = 0; i < N; i++)
		built_free(bs[i]);
	tu_rmtree_free(dir);
}
END_TEST

/* torchtitan v0.2.2 builds the flavor [model] names, debugmodel (6
 * layers) by default (config/job_config.py:100-105, train.py:138); its
 * llama3 flavors (models/llama3/__init__.py:51-99): "8B" 32 layers, dim
 * 4096, 32 heads, 8 kv heads; "70B" 80, 8192, 64, 8; "405B" 126, 16384,
 * 128, 8; vocab 128256 in all (model/args.py:33); the FFN width
 * multiple_of * ceil(int(m * int(2 * 4 dim / 3)) / multiple_of)
 * (model/model.py:330-336): 14336 (m 1.3, multiple 1024), 28672 (1.3,
 * 4096), 53248 (1.2, 4096). */
START_TEST(torchtitan_model_is_a_registered_flavor)
{
	static const struct {
		const char *example, *flavor;
	} ok[] = {{"llama3-70b.yaml", "[model]\nname = \"llama3\"\n"
				      "flavor = \"70B\"\n"},
		  {"llama3-8b.yaml", "[model]\nname = \"llama3\"\n"
				     "flavor = \"8B\"\n"}};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		built *b = build_try(ok[i].example, PPCC_SCHED_1F1B, 4, 2);
		ck_assert_ptr_nonnull(b);
		int status;
		char *text = emit_to_string(ppcc_emit_torchtitan_toml, b,
					    &status);
		ck_assert_msg(text, "%s", b->diag.text);
		ck_assert_msg(strstr(text, ok[i].flavor), "%s", text);
		free(text);
		built_free(b);
	}
	/* Llama 2 13B's shape lies between "8B" and "70B"; Llama 2 70B's is
	 * "70B"'s but for its 32000-word vocabulary; GPT-3 has no SwiGLU */
	static const struct {
		const char *example, *why;
	} no[] = {
		{"hetero.yaml", "the nearest are \"8B\" (32 layers, hidden 4096, "
		 "32 heads, 8 kv heads, ffn_hidden 14336, vocab 128256) and "
		 "\"70B\""},
		{"llama2-70b.yaml", "vocab 32000): the nearest is \"70B\""},
		{"gpt3-175b.yaml", "no swiglu): the nearest are \"70B\""},
	};
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		built *b = build(no[i].example, -1, 0, 0);
		int status;
		ck_assert_ptr_null(emit_to_string(ppcc_emit_torchtitan_toml, b,
						  &status));
		ck_assert_int_eq(status, PPCC_EINPUT);
		ck_assert_msg(strstr(b->diag.text, "no llama3 flavor of this "
				     "shape") && strstr(b->diag.text, no[i].why),
			      "%s: %s", no[i].example, b->diag.text);
		built_free(b);
	}
}
END_TEST

/* torchtitan v0.2.2, models/llama3/infra/parallelize.py:148-151: without
 * FSDP, data_parallel_replicate_degree > 1 is DDP, which raises "DDP has
 * not supported > 1D parallelism" unless it spans the world; so ZeRO 0
 * with d > 1 beside t, p or cp > 1 is refused, and alone it is DDP. */
START_TEST(torchtitan_zero0_replicas_are_ddp_alone_only)
{
	built *b = build_try("llama3-70b.yaml", PPCC_SCHED_1F1B, 16, 0);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_gt(b->cfg.pipeline.data_parallel, 1);
	int status;
	ck_assert_ptr_null(emit_to_string(ppcc_emit_torchtitan_toml, b,
					  &status));
	ck_assert_int_eq(status, PPCC_EINPUT);
	ck_assert_ptr_nonnull(strstr(b->diag.text, "DDP has not supported > "
				     "1D parallelism"));
	ck_assert_ptr_nonnull(strstr(b->diag.text, "plan with zero: 1, 2 or 3"));
	built_free(b);
	/* d alone: DDP, with mixed precision by autocast (no example's
	 * model fits a device without ZeRO, so the rule alone) */
	ppcc_search_entry e = {.t = 1, .p = 1, .d = 16, .cp = 1, .v = 1,
			       .zero = 0, .kind = PPCC_SCHED_1F1B};
	ck_assert(ppcc_torchtitan_toml_admits(&e, NULL));
	e.cp = 2;
	ck_assert(!ppcc_torchtitan_toml_admits(&e, NULL));
	e.cp = 1;
	e.t = 2;
	ck_assert(!ppcc_torchtitan_toml_admits(&e, NULL));
}
END_TEST

/* torchtitan v0.2.2, models/llama3/infra/parallelize.py:319-345: every
 * block is fully_shard-ed, "never" keeping its gathered 16-bit weights
 * from the forward to the backward; FSDP's gradients are reduce-scattered
 * into shards (reduce_dtype fp32, :135) whatever the policy, so no
 * setting keeps them whole: ZeRO-2 is written as "never" (its bytes),
 * ZeRO-1 with d x cp > 1 is refused (it would hold fewer bytes than
 * planned), and ZeRO-1 at d = cp = 1 shards nothing. */
START_TEST(torchtitan_zero1_is_refused_zero2_keeps_weights_gathered)
{
	for (int toml = 0; toml < 2; toml++) {
		ppcc_search_entry e = {.t = 8, .p = 4, .d = 8, .cp = 1, .v = 1,
				       .zero = 1, .kind = PPCC_SCHED_1F1B};
		int (*admits)(const ppcc_search_entry *, void *) =
			toml ? ppcc_torchtitan_toml_admits
			     : ppcc_torchtitan_admits;
		ck_assert(!admits(&e, NULL));
		e.zero = 2;
		ck_assert(admits(&e, NULL));
		e.zero = 3;
		ck_assert(admits(&e, NULL));
		e.zero = 1;
		e.d = 1;
		e.cp = 2;
		ck_assert(!admits(&e, NULL));
	}
	built *b = build_try("llama3-70b.yaml", PPCC_SCHED_1F1B, 16, 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_gt(b->cfg.pipeline.data_parallel, 1);
	int status;
	ck_assert_ptr_null(emit_to_string(ppcc_emit_torchtitan_toml, b,
					  &status));
	ck_assert_int_eq(status, PPCC_EINPUT);
	ck_assert_ptr_nonnull(strstr(b->diag.text, "keeps whole gradients"));
	ck_assert_ptr_nonnull(strstr(b->diag.text, "plan with zero: 2"));
	built_free(b);
	b = build_try("llama3-70b.yaml", PPCC_SCHED_1F1B, 16, 2);
	ck_assert_ptr_nonnull(b);
	char *text = emit_to_string(ppcc_emit_torchtitan_toml, b, &status);
	ck_assert_msg(text != NULL, "%s", b->diag.text);
	ck_assert_ptr_nonnull(strstr(text,
		"fsdp_reshard_after_forward = \"never\"\n"));
	free(text);
	built_free(b);
}
END_TEST

/* torchtitan v0.2.2, distributed/utils.py:246-256: without FSDP
 * (parallel_dims.py:334-335: dp_shard > 1 or cp > 1) but with TP or PP,
 * mixed precision is off ("Mixed precision training with TP or PP is only
 * supported when FSDP/HSDP/CP is enabled") and the weights train in fp32;
 * ppcc plans bf16 weights.  With FSDP, bf16 is its param_dtype
 * (models/llama3/infra/parallelize.py:125-137; config/job_config.py:282,
 * 290: mixed_precision_reduce takes "float32" only). */
START_TEST(torchtitan_trains_bf16_or_refuses)
{
	built *b = build_try("llama3-70b.yaml", PPCC_SCHED_1F1B, 32, 2);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(b->cfg.pipeline.data_parallel, 1);
	int status;
	ck_assert_ptr_null(emit_to_string(ppcc_emit_torchtitan_toml, b,
					  &status));
	ck_assert_int_eq(status, PPCC_EINPUT);
	ck_assert_ptr_nonnull(strstr(b->diag.text, "trains in fp32"));
	built_free(b);
	b = build_try("llama3-70b.yaml", PPCC_SCHED_1F1B, 4, 2);
	ck_assert_ptr_nonnull(b);
	char *text = emit_to_string(ppcc_emit_torchtitan_toml, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	ck_assert_ptr_nonnull(strstr(text, "data_parallel_shard_degree = 8\n"));
	ck_assert_ptr_nonnull(strstr(text, "mixed_precision_param = \"bfloat16\"\n"
					   "mixed_precision_reduce = \"float32\"\n"));
	free(text);
	b->cfg.pipeline.grad_bytes = 2;
	ck_assert_ptr_null(emit_to_string(ppcc_emit_torchtitan_toml, b,
					  &status));
	ck_assert_ptr_nonnull(strstr(b->diag.text, "grad_bytes: 4"));
	built_free(b);
}
END_TEST

/* torchtitan v0.2.2, distributed/pipeline_parallel.py:171-179 and 221-231:
 * with pipeline_parallel_schedule_csv it runs _PipelineScheduleRuntime
 * and loads the file's compute-only order (_load_csv); the schedule's
 * name still places the stages, V for ZBVZeroBubble and DualPipeV,
 * looped otherwise (446-471); config/job_config.py:405-410 names
 * PipelineScheduleMulti for it.  So zb-h1, zb-h2 and auto run, from the
 * CSV that -f torch-csv writes, which holds the plan's own stages. */
START_TEST(torchtitan_unnamed_orders_run_from_the_csv)
{
	static const int kinds[] = {PPCC_SCHED_ZB_H1, PPCC_SCHED_ZB_H2,
				    PPCC_SCHED_AUTO};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		built *b = build_try("llama3-70b.yaml", kinds[i], 4, 2);
		ck_assert_ptr_nonnull(b);
		int status;
		char *text = emit_to_string(ppcc_emit_torchtitan_toml, b,
					    &status);
		ck_assert_msg(text, "kind %d: %s", kinds[i], b->diag.text);
		const char *want =
			b->plan.best.schedule.n_chunks == 2 &&
			b->plan.best.stages[b->plan.best.schedule.n_stages - 1]
				.rank == 0
			? "pipeline_parallel_schedule = \"ZBVZeroBubble\"\n"
			: "pipeline_parallel_schedule = \"PipelineScheduleMulti\"\n";
		if (strstr(text, "pipeline_parallel_schedule_csv")) {
			ck_assert_msg(strstr(text, want), "%s", text);
			ck_assert_ptr_nonnull(strstr(text,
				"pipeline_parallel_schedule_csv = \"schedule.csv\"\n"));
			ck_assert_ptr_nonnull(strstr(text,
				"# The order is none of PyTorch's named schedules: "
				"write it with `ppcc plan FILE -f torch-csv -o "
				"schedule.csv`"));
		} else {
			/* auto chose a named kind */
			ck_assert_int_eq(kinds[i], PPCC_SCHED_AUTO);
			ck_assert_int_ne(b->plan.best.schedule.kind,
					 PPCC_SCHED_AUTO);
		}
		free(text);
		built_free(b);
	}
	/* and the CSV is there to write: ppcc plan -f torch-csv, one line
	 * a rank */
	char ex[4096];
	snprintf(ex, sizeof ex, "%s/examples/llama3-70b.yaml", tu_src());
	tu_run r;
	char *argv[] = {(char *)tu_ppcc(), "plan", ex, "-s", "zb-h1", "-f",
			"torch-csv", NULL};
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, argv), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	int lines = 0;
	for (const char *c = r.out; *c; c++)
		lines += *c == '\n';
	ck_assert_int_eq(lines, 4);
	tu_run_free(&r);
}
END_TEST

/* zb-v is PyTorch's ScheduleZBVZeroBubble only with m > p; with m <= p
 * its order is ppcc's own (src/sched/zb_v.c), which torchtitan runs from
 * the CSV, the name still placing the stages in a V. */
START_TEST(torchtitan_zb_v_with_few_microbatches_runs_from_the_csv)
{
	static const struct {
		int m, csv;
	} cases[] = {{4, 1}, {2, 1}, {5, 0}, {8, 0}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		overrides ov = {.zero = 2, .microbatches = cases[i].m};
		built *b = build_with("llama3-70b.yaml", PPCC_SCHED_ZB_V, 0, 4,
				      &ov, 1);
		ck_assert_int_eq(b->cfg.pipeline.microbatches, cases[i].m);
		int status;
		char *text = emit_to_string(ppcc_emit_torchtitan_toml, b,
					    &status);
		ck_assert_msg(text, "m %d: %s", cases[i].m, b->diag.text);
		ck_assert_msg(strstr(text, "pipeline_parallel_schedule = "
				     "\"ZBVZeroBubble\"\n"), "%s", text);
		ck_assert_msg(!strstr(text, "pipeline_parallel_schedule_csv") ==
			      !cases[i].csv, "m %d: %s", cases[i].m, text);
		free(text);
		built_free(b);
	}
}
END_TEST

/*
 * Every plan of the examples' models torchtitan has a flavor of, for each
 * kind, ZeRO 0-3 and d 1 and d > 1, is refused by a torchtitan rule or
 * written so that torchtitan v0.2.2 runs it as planned:
 * - distributed/parallel_dims.py:45-56: every degree >= 1 and
 *   dp_replicate * dp_shard * cp * tp * pp == the world size;
 * - models/llama3/infra/parallelize.py:148-151: DDP (dp_replicate > 1
 *   without FSDP) spans the world;
 * - distributed/utils.py:246-256 with parallel_dims.py:334-335: FSDP
 *   (dp_shard > 1 or cp > 1) or neither TP nor PP, so bf16 runs;
 * - train.py:196-215: global % (local * dp_replicate * dp_shard) == 0,
 *   accumulation steps = global / (local * dp); with a pipeline
 *   (pipeline_parallel.py:186-194) local / microbatch size = m and one
 *   accumulation step, without one m accumulation steps of b;
 * - pipeline_parallel.py:457-459: the model parts divide by pp;
 * and the search's admits agrees with the emitter.
 */
START_TEST(torchtitan_degrees_hold_torchtitans_rules)
{
	static const struct {
		const char *example;
		int p_d1, p_dn; /* stages giving d = 1 and d > 1 */
	} ex[] = {{"llama3-70b.yaml", 32, 4}, {"llama3-8b.yaml", 16, 4}};
	enum { MAX = 2 * PPCC_SCHED_COUNT * 4 * 2 };
	char *dir = tu_mkdtemp();
	static char paths[MAX][4096];
	char *argv[MAX];
	built *bs[MAX];
	int n = 0, refused = 0, unplanned = 0;
	for (size_t e = 0; e < sizeof ex / sizeof ex[0]; e++)
	for (int kind = 0; kind < PPCC_SCHED_COUNT; kind++)
	for (int zero = 0; zero <= 3; zero++)
	for (int dn = 0; dn <= 1; dn++) {
		built *b = build_try(ex[e].example, kind,
				     dn ? ex[e].p_dn : ex[e].p_d1, zero);
		if (!b) {
			unplanned++;
			continue;
		}
		const ppcc_pipeline *pl = &b->cfg.pipeline;
		ck_assert_int_eq(pl->data_parallel > 1, dn);
		ppcc_search_entry se = {
			.t = pl->tensor_parallel, .p = pl->stages,
			.d = pl->data_parallel, .cp = pl->context_parallel,
			.v = b->plan.best.schedule.n_chunks, .zero = zero,
			.kind = b->plan.best.schedule.kind};
		int status;
		char *text = emit_to_string(ppcc_emit_torchtitan_toml, b,
					    &status);
		ck_assert_int_eq(text != NULL, ppcc_torchtitan_toml_admits(&se, NULL));
		if (!text) {
			ck_assert_int_eq(status, PPCC_EINPUT);
			ck_assert_msg(strstr(b->diag.text, "DDP has not") ||
				      strstr(b->diag.text, "trains in fp32") ||
				      strstr(b->diag.text, "context-parallel") ||
				      strstr(b->diag.text, "keeps whole gradients"),
				      "%s", b->diag.text);
			refused++;
			built_free(b);
			continue;
		}
		char name[64];
		snprintf(name, sizeof name, "job%d.toml", n);
		tu_write_in(paths[n], sizeof paths[n], dir, name, text);
		argv[n] = paths[n];
		bs[n++] = b;
		free(text);
	}
	ck_assert_int_gt(n, 10);
	ck_assert_int_gt(refused, 10);
	char *out = toml_read(argv, n);
	const char *at = out;
	for (int i = 0; out && i < n; i++) {
		const built *b = bs[i];
		const ppcc_pipeline *pl = &b->cfg.pipeline;
		tt_read r;
		tt_scan(&r, &at);
		ck_assert(r.t >= 1 && r.p >= 1 && r.cp >= 1 && r.rep >= 1 &&
			  r.shard >= 1);
		ck_assert_int_eq(r.rep * r.shard * r.cp * r.t * r.p,
				 b->cfg.cluster.devices);
		int fsdp = r.shard > 1 || r.cp > 1;
		if (r.rep > 1 && !fsdp)
			ck_assert_int_eq(r.rep, b->cfg.cluster.devices);
		ck_assert(fsdp || (r.t == 1 && r.p == 1));
		ck_assert_str_eq(r.mp, "bfloat16");
		ck_assert_str_eq(r.mr, "float32");
		long long dp = (long long)r.rep * r.shard;
		ck_assert_int_eq(r.global % (r.local * dp), 0);
		long long accum = r.global / (r.local * dp);
		if (r.p > 1) {
			ck_assert_int_eq(r.local % r.mbs, 0);
			ck_assert_int_eq(r.local / r.mbs, pl->microbatches);
			ck_assert_int_eq(accum, 1);
			ck_assert_int_eq(r.parts % r.p, 0);
			tt_modules(b, &at, b->cfg.path);
		} else {
			ck_assert_int_eq(accum, pl->microbatches);
		}
		ck_assert_int_eq(r.global, (long long)pl->microbatches *
				 b->cfg.model.micro_batch_size *
				 pl->data_parallel);
		ck_assert_int_eq(r.shard * r.rep, pl->data_parallel);
	}
	ck_assert(!out || *at == '\0');
	free(out);
	for (int i = 0; i < n; i++)
		built_free(bs[i]);
	tu_rmtree_free(dir);
	(void)unplanned;
}
END_TEST

/* The Python config's calls and names, read by Python's ast: one line
 * a call, "CALLEE kw=value ...", the values as literals (lists of the
 * stages' modules last, one line a stage); then "import MODULE NAME"
 * lines. */
static const char *const py_reader =
	"import ast, sys\n"
	"for f in sys.argv[1:]:\n"
	"    t = ast.parse(open(f).read())\n"
	"    fn = [n for n in t.body if isinstance(n, ast.FunctionDef)]\n"
	"    assert [n.name for n in fn] == ['ppcc_plan'], fn\n"
	"    for n in t.body:\n"
	"        if isinstance(n, ast.ImportFrom):\n"
	"            for a in n.names:\n"
	"                print('import', n.module, a.name)\n"
	"    parts = []\n"
	"    for n in ast.walk(fn[0]):\n"
	"        if not isinstance(n, ast.Call):\n"
	"            continue\n"
	"        name = ast.unparse(n.func)\n"
	"        kws = []\n"
	"        for k in n.keywords:\n"
	"            if k.arg == 'module_fqns_per_model_part':\n"
	"                parts = ast.literal_eval(k.value)\n"
	"                kws.append(k.arg + '=' + str(len(parts)))\n"
	"            elif isinstance(k.value, ast.Constant):\n"
	"                kws.append(k.arg + '=' + str(k.value.value))\n"
	"            else:\n"
	"                kws.append(k.arg + '=' + ast.unparse(k.value).split('(')[0])\n"
	"        args = [str(ast.literal_eval(a)) for a in n.args]\n"
	"        print('call', name, *args, *kws)\n"
	"    print('end')\n"
	"    for part in parts:\n"
	"        print(' '.join(part))\n";

/* What torchtitan's main, b5bcd76, defines, each keyword or name the
 * config may use:
 * - torchtitan/trainer.py:68 Trainer, :70 its Config, with model_spec
 *   (:77), training (:103), parallelism (:104), activation_checkpoint
 *   (:108, a SelectiveAC.Config, FullAC.Config or None,
 *   distributed/activation_checkpoint.py:166-170, 185-195, 332-337);
 * - config/__init__.py:19-20 exports ParallelismConfig and TrainingConfig
 *   (config/configs.py:121, :36);
 * - ParallelismConfig (configs.py): data_parallel_replicate_degree :122,
 *   data_parallel_shard_degree :133, fsdp_reshard_after_forward :145,
 *   tensor_parallel_degree :166, pipeline_parallel_degree :180,
 *   module_fqns_per_model_part :187, pipeline_parallel_schedule :216,
 *   pipeline_parallel_schedule_csv :225, num_pp_microbatches :232,
 *   context_parallel_degree :239;
 * - TrainingConfig (configs.py): num_tokens_per_microbatch_per_dp_rank
 *   :37, num_tokens_per_train_step :43, max_context_length :51,
 *   mixed_precision_param :94, mixed_precision_reduce :102 ("float32"
 *   only);
 * - models/llama3/__init__.py:369 model_registry(flavor), flavors "8B",
 *   "70B", "405B" at :360-366 (shapes :236-359, those of v0.2.2).
 */
static const char *const py_names[] = {
	"import torchtitan.config ParallelismConfig",
	"import torchtitan.config TrainingConfig",
	"import torchtitan.distributed.activation_checkpoint SelectiveAC",
	"import torchtitan.distributed.activation_checkpoint FullAC",
	"import torchtitan.models.llama3 model_registry",
	"import torchtitan.trainer Trainer",
	"call Trainer.Config", "model_spec", "parallelism", "training",
	"activation_checkpoint",
	"call ParallelismConfig", "data_parallel_replicate_degree",
	"data_parallel_shard_degree", "fsdp_reshard_after_forward",
	"tensor_parallel_degree", "context_parallel_degree",
	"pipeline_parallel_degree", "pipeline_parallel_schedule",
	"pipeline_parallel_schedule_csv", "num_pp_microbatches",
	"module_fqns_per_model_part",
	"call TrainingConfig", "num_tokens_per_microbatch_per_dp_rank",
	"num_tokens_per_train_step", "max_context_length",
	"mixed_precision_param", "mixed_precision_reduce",
	"call model_registry", "call SelectiveAC.Config", "call FullAC.Config",
	NULL};

static int py_known(const char *w, size_t n)
{
	for (int i = 0; py_names[i]; i++)
		if (strlen(py_names[i]) == n && strncmp(py_names[i], w, n) == 0)
			return 1;
	return 0;
}

/* The integer after "key=" on line, or -1. */
static long long py_int(const char *line, const char *key)
{
	char k[96];
	snprintf(k, sizeof k, " %s=", key);
	const char *at = strstr(line, k);
	const char *nl = strchr(line, '\n');
	if (!at || (nl && at > nl))
		return -1;
	return strtoll(at + strlen(k), NULL, 10);
}

/*
 * -f torchtitan: torchtitan's main's Python config.  It parses; every
 * import, call and keyword is one main defines (above); and the values
 * hold main's rules: distributed/parallel_dims.py:175-184 (degrees >= 1,
 * dp_replicate * dp_shard * cp * tp * pp == world size); trainer.py:
 * 409-428 (tokens per train step = tokens per microbatch x pp
 * microbatches x dp x accumulation steps, pp microbatches 1 without a
 * pipeline), so with a pipeline m microbatches and one step, without one
 * m steps; models/llama3/parallelize.py:57-79 applies FSDP with its
 * mixed precision at any degree, so d = 1 beside a pipeline and ZeRO 0
 * with d > 1 (replicated) run in bf16 (v0.2.2 refuses both); the stages'
 * modules name the head lm_head (distributed/pipeline_parallel.py:387).
 */
/* HSDP (pipeline.data_parallel_shard 8 of d 32): Megatron-LM splits the
 * d x cp ranks into --num-distributed-optimizer-instances groups of
 * consecutive ranks (d98e8a6 parallel_state.py:921-929; arguments.py:
 * 3216; Megatron-FSDP reads the same count, mcore_fsdp_adapter.py:346),
 * the Bridge's cfg.ddp field of that name
 * (distributed_data_parallel_config.py:34); torchtitan's
 * dp_replicate x dp_shard, read back by tomllib and multiplying out to
 * the devices. */
START_TEST(hsdp_exports_name_the_shard_groups)
{
	char *dir = tu_mkdtemp();
	built *b = build_preset(dir, "hsdp.yaml", "llama3-8b", "",
				"  data_parallel: 32\n  data_parallel_shard: 8\n"
				"  zero: 2\n", 32, 1);
	int status;
	char *text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	char v[64];
	ck_assert_str_eq(arg_value(text, "--num-distributed-optimizer-instances",
				   v, sizeof v), "4");
	ck_assert_ptr_nonnull(strstr(text, "--use-megatron-fsdp\n"));
	free(text);
	text = emit_to_string(ppcc_emit_megatron_bridge, b, &status);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(strstr(text, "    cfg.ddp."
				     "num_distributed_optimizer_instances = 4\n"));
	free(text);
	/* torchtitan: FSDP over the shard, replicated 4 times */
	b->cfg.pipeline.trainer = PPCC_TRAINER_TORCHTITAN;
	text = emit_to_string(ppcc_emit_torchtitan_toml, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	static char path[4096];
	tu_write_in(path, sizeof path, dir, "hsdp.toml", text);
	free(text);
	char *argv[1] = {path};
	char *out = toml_read(argv, 1);
	if (out) {
		const char *at = out;
		tt_read r;
		tt_scan(&r, &at);
		ck_assert_int_eq(r.rep, 4);
		ck_assert_int_eq(r.shard, 8);
		ck_assert_int_eq(r.rep * r.shard * r.cp * r.t * r.p, 32);
		free(out);
	}
	built_free(b);
	/* Adam's moments in bf16: Megatron-LM's precision-aware optimizer
	 * (d98e8a6 arguments.py:3667-3684: --exp-avg-dtype and
	 * --exp-avg-sq-dtype take fp32, fp16, bf16 or fp8;
	 * optimizer_config.py:203-207 the Bridge's torch dtypes) */
	b = build_preset(dir, "bm.yaml", "llama3-8b", "    seq_len: 4096\n",
			 "  data_parallel: 32\n  adam_moments: bf16\n", 32, 1);
	text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	ck_assert_ptr_nonnull(strstr(text, "--use-distributed-optimizer\n"
				     "--use-precision-aware-optimizer\n"
				     "--exp-avg-dtype bf16\n"
				     "--exp-avg-sq-dtype bf16\n"));
	free(text);
	text = emit_to_string(ppcc_emit_megatron_bridge, b, &status);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(strstr(text, "import torch\n"));
	ck_assert_ptr_nonnull(strstr(text, "    cfg.optimizer."
				     "exp_avg_sq_dtype = torch.bfloat16\n"));
	free(text);
	built_free(b);
	/* without the key, one group: no count is written */
	b = build_preset(dir, "flat.yaml", "llama3-8b", "",
			 "  data_parallel: 32\n  zero: 2\n", 32, 1);
	text = emit_to_string(ppcc_emit_megatron, b, &status);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_null(strstr(text, "--num-distributed-optimizer-instances"));
	free(text);
	built_free(b);
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(torchtitan_python_config_sets_only_mains_names)
{
	static const struct {
		const char *example;
		int kind, stages, zero;
	} cases[] = {
		{"llama3-70b.yaml", -1, 4, 2},
		{"llama3-70b.yaml", PPCC_SCHED_ZB_H1, 4, 3},
		{"llama3-70b.yaml", PPCC_SCHED_INTERLEAVED, 4, 2},
		{"llama3-70b.yaml", PPCC_SCHED_1F1B, 16, 0},
		{"llama3-8b.yaml", -1, 16, -1},
		{"llama3-8b.yaml", PPCC_SCHED_ZB_V, 4, 3},
		{"llama3-70b.yaml", PPCC_SCHED_1F1B, 1, 3},
	};
	enum { N = sizeof cases / sizeof cases[0] };
	char *dir = tu_mkdtemp();
	static char paths[N][4096];
	char *argv[N + 4];
	built *bs[N];
	argv[0] = "python3";
	argv[1] = "-c";
	argv[2] = (char *)py_reader;
	for (int i = 0; i < N; i++) {
		bs[i] = build_try(cases[i].example, cases[i].kind,
				  cases[i].stages, cases[i].zero);
		ck_assert_msg(bs[i], "case %d", i);
		int status;
		char *text = emit_to_string(ppcc_emit_torchtitan, bs[i], &status);
		ck_assert_msg(text, "case %d: %s", i, bs[i]->diag.text);
		char name[64];
		snprintf(name, sizeof name, "ppcc_plan%d.py", i);
		tu_write_in(paths[i], sizeof paths[i], dir, name, text);
		argv[3 + i] = paths[i];
		free(text);
	}
	argv[3 + N] = NULL;
	tu_run r;
	if (!py_run(&r, argv, "torchtitan_python_config", "ast"))
		goto out;
	const char *at = r.out;
	for (int i = 0; i < N; i++) {
		const built *b = bs[i];
		const ppcc_pipeline *pl = &b->cfg.pipeline;
		const char *par = NULL, *tra = NULL;
		int model = 0;
		while (strncmp(at, "end\n", 4) != 0) {
			const char *nl = strchr(at, '\n');
			ck_assert_ptr_nonnull(nl);
			if (strncmp(at, "import ", 7) == 0) {
				ck_assert_msg(py_known(at, (size_t)(nl - at)),
					      "case %d: %.*s", i, (int)(nl - at), at);
			} else {
				ck_assert(strncmp(at, "call ", 5) == 0);
				const char *sp = strchr(at + 5, ' ');
				if (!sp || sp > nl)
					sp = nl;
				ck_assert_msg(py_known(at, (size_t)(sp - at)),
					      "case %d: %.*s", i, (int)(sp - at), at);
				if (strncmp(at, "call model_registry ", 20) == 0) {
					ck_assert(strncmp(at + 20, "8B\n", 3) == 0 ||
						  strncmp(at + 20, "70B\n", 4) == 0);
					model = 1;
					sp = nl; /* its one argument, no keywords */
				} else if (strncmp(at, "call ParallelismConfig", 22) == 0) {
					par = at;
				} else if (strncmp(at, "call TrainingConfig", 19) == 0) {
					tra = at;
				}
				/* each keyword a field of that call's class */
				for (const char *w = sp; w < nl;) {
					w++;
					const char *eq = strchr(w, '=');
					ck_assert(eq && eq < nl);
					ck_assert_msg(py_known(w, (size_t)(eq - w)),
						      "case %d: %.*s", i, (int)(eq - w), w);
					w = strchr(eq, ' ');
					if (!w || w > nl)
						w = nl;
				}
			}
			at = nl + 1;
		}
		at += 4;
		ck_assert(model && par && tra);
		long long rep = py_int(par, "data_parallel_replicate_degree");
		long long shard = py_int(par, "data_parallel_shard_degree");
		long long t = py_int(par, "tensor_parallel_degree");
		long long cp = py_int(par, "context_parallel_degree");
		long long pp = py_int(par, "pipeline_parallel_degree");
		ck_assert(rep >= 1 && shard >= 1 && t >= 1 && cp >= 1 && pp >= 1);
		ck_assert_int_eq(rep * shard * cp * t * pp, b->cfg.cluster.devices);
		ck_assert_int_eq(rep * shard, pl->data_parallel);
		long long mb = pp > 1 ? py_int(par, "num_pp_microbatches") : 1;
		long long tok = py_int(tra, "num_tokens_per_microbatch_per_dp_rank");
		long long step = py_int(tra, "num_tokens_per_train_step");
		long long dp = rep * shard;
		ck_assert_int_eq(step % (tok * mb * dp), 0);
		ck_assert_int_eq(step / (tok * mb * dp),
				 pp > 1 ? 1 : pl->microbatches);
		ck_assert_int_eq(tok, (long long)b->cfg.model.micro_batch_size *
				      b->cfg.model.transformer->seq_len);
		ck_assert_int_eq(py_int(tra, "max_context_length"),
				 b->cfg.model.transformer->seq_len);
		if (pp > 1) {
			ck_assert_int_eq(mb, pl->microbatches);
			ck_assert_int_eq(py_int(par, "module_fqns_per_model_part"),
					 b->plan.best.schedule.n_stages);
			/* the stages' modules, lm_head for output */
			static char lines[1 << 16];
			size_t n = 0;
			for (int k = 0; k < b->plan.best.schedule.n_stages; k++) {
				const char *nl = strchr(at, '\n');
				ck_assert_ptr_nonnull(nl);
				for (const char *c = at; c <= nl; c++) {
					ck_assert_uint_lt(n + 8, sizeof lines);
					if (strncmp(c, "lm_head", 7) == 0) {
						memcpy(lines + n, "output", 6);
						n += 6;
						c += 6;
					} else {
						lines[n++] = *c;
					}
				}
				at = nl + 1;
			}
			lines[n] = '\0';
			const char *lp = lines;
			tt_modules(b, &lp, cases[i].example);
		}
	}
	ck_assert_str_eq(at, "");
	tu_run_free(&r);
out:
	for (int i = 0; i < N; i++)
		built_free(bs[i]);
	tu_rmtree_free(dir);
}
END_TEST

/* ---- torchtitan's mixtures of experts ---------------------------------- */

/* Python over the written files, stating torchtitan's rules (v0.2.2 is
 * 73a0e69, main b5bcd76):
 * - v0.2.2 config/job_config.py:312-483, Parallelism's fields (a TOML key
 *   outside them is "Invalid field names", config/manager.py:165-171);
 *   distributed/parallel_dims.py:58-59 etp is 1 or tp when ep > 1;
 *   136-158 efsdp = dp_shard x cp x tp / (etp x ep), the sparse mesh
 *   spanning the dense one's ranks;
 * - main config/configs.py:282-290 expert_parallel_degree, the one
 *   expert field; distributed/parallel_dims.py:187-192 ep divides
 *   dp_shard x cp x tp; models/deepseek_v3/__init__.py:616-642 the
 *   registry's keywords (num_mtp_layers), models/deepseek_v3/mtp.py:
 *   196-206 MTP with neither pipeline nor context parallelism;
 * - both: the flavors' expert counts (v0.2.2 models/deepseek_v3/
 *   __init__.py:78-156, models/qwen3/__init__.py:145-190,
 *   models/gpt_oss/__init__.py:47-76; main's the same), which ep divides (v0.2.2 distributed/expert_parallel.py:
 *   107-108, main models/common/decoder.py:204-208).
 * One line a file: model flavor ep etp overlap mtp ("-": not written). */
static const char *const tt_moe_reader =
	"import ast, sys, tomllib\n"
	"PAR = {'data_parallel_replicate_degree', 'data_parallel_shard_degree',\n"
	"       'fsdp_reshard_after_forward', 'tensor_parallel_degree',\n"
	"       'context_parallel_degree', 'pipeline_parallel_degree',\n"
	"       'pipeline_parallel_schedule', 'pipeline_parallel_schedule_csv',\n"
	"       'pipeline_parallel_microbatch_size', 'module_fqns_per_model_part',\n"
	"       'expert_parallel_degree', 'expert_tensor_parallel_degree',\n"
	"       'pipeline_parallel_expert_parallel_overlap'}\n"
	"MAIN = {'data_parallel_replicate_degree', 'data_parallel_shard_degree',\n"
	"        'fsdp_reshard_after_forward', 'tensor_parallel_degree',\n"
	"        'context_parallel_degree', 'pipeline_parallel_degree',\n"
	"        'pipeline_parallel_schedule', 'pipeline_parallel_schedule_csv',\n"
	"        'num_pp_microbatches', 'module_fqns_per_model_part',\n"
	"        'expert_parallel_degree'}\n"
	"EXPERTS = {('deepseek_v3', '16B'): 64, ('deepseek_v3', '236B'): 160,\n"
	"           ('deepseek_v3', '671B'): 256, ('qwen3', '30B-A3B'): 128,\n"
	"           ('qwen3', '235B-A22B'): 128, ('gpt_oss', '20b'): 32,\n"
	"           ('gpt_oss', '120b'): 128}\n"
	"for f in sys.argv[1:]:\n"
	"    if f.endswith('.toml'):\n"
	"        c = tomllib.load(open(f, 'rb'))\n"
	"        p, m = c['parallelism'], c['model']\n"
	"        assert set(p) <= PAR, set(p) - PAR\n"
	"        model, flavor = m['name'], m['flavor']\n"
	"        ep = p.get('expert_parallel_degree', 1)\n"
	"        etp = p.get('expert_tensor_parallel_degree', 1)\n"
	"        tp, cp = p['tensor_parallel_degree'], p['context_parallel_degree']\n"
	"        shard = p['data_parallel_shard_degree']\n"
	"        assert ep == 1 or etp in (1, tp), (ep, etp, tp)\n"
	"        assert shard * cp * tp % (etp * ep) == 0, (shard, cp, tp, ep, etp)\n"
	"        ov = str(p.get('pipeline_parallel_expert_parallel_overlap',\n"
	"                       True)).lower()\n"
	"        print(model, flavor, ep, etp, ov, '-')\n"
	"    else:\n"
	"        t = ast.parse(open(f).read())\n"
	"        calls = {ast.unparse(n.func): n for n in ast.walk(t)\n"
	"                 if isinstance(n, ast.Call)}\n"
	"        reg, par = calls['model_registry'], calls['ParallelismConfig']\n"
	"        kw = {k.arg: ast.literal_eval(k.value) for k in par.keywords}\n"
	"        assert set(kw) <= MAIN, set(kw) - MAIN\n"
	"        imp = [n.module for n in t.body if isinstance(n, ast.ImportFrom)\n"
	"               and any(a.name == 'model_registry' for a in n.names)]\n"
	"        model = imp[0].split('.')[-1]\n"
	"        flavor = ast.literal_eval(reg.args[0])\n"
	"        rk = {k.arg: ast.literal_eval(k.value) for k in reg.keywords}\n"
	"        assert set(rk) <= {'num_mtp_layers'}, rk\n"
	"        ep = kw.get('expert_parallel_degree', 1)\n"
	"        region = (kw['data_parallel_shard_degree'] *\n"
	"                  kw['context_parallel_degree'] * kw['tensor_parallel_degree'])\n"
	"        assert region % ep == 0, (region, ep)\n"
	"        mtp = rk.get('num_mtp_layers', 0)\n"
	"        assert not mtp or (kw['pipeline_parallel_degree'] == 1 and\n"
	"                           kw['context_parallel_degree'] == 1)\n"
	"        print(model, flavor, ep, '-', '-', mtp)\n"
	"    assert EXPERTS[(model, flavor)] % ep == 0\n";

/* DeepSeek-V2-Lite's shape, torchtitan's deepseek_v3 "16B" (v0.2.2
 * models/deepseek_v3/__init__.py:78-102), with one MTP module on one
 * stage, and with none on two stages of DualPipeV. */
#define DS16B_YAML(mtp, pipeline)                                           \
	"model:\n  name: ds16b\n  transformer:\n"                            \
	"    layers: 27\n    hidden: 2048\n    heads: 16\n"                   \
	"    ffn_hidden: 10944\n    vocab: 102400\n    seq_len: 4096\n"       \
	"    swiglu: true\n    norm: rmsnorm\n    position: rope\n"           \
	"    tie_embeddings: false\n    micro_batch_size: 1\n"                \
	"    mtp_layers: " mtp "\n"                                            \
	"    moe: {experts: 64, top_k: 6, ffn_hidden: 1408,"                   \
	" shared_experts: 2, dense_layers: 1}\n"                              \
	"    attention: {kind: mla, q_lora_rank: 0, kv_lora_rank: 512,"        \
	" qk_nope_head_dim: 128, qk_rope_head_dim: 64, v_head_dim: 128}\n"    \
	"cluster:\n  devices: 8\n  devices_per_node: 8\n  device: h100\n"    \
	"pipeline:\n  zero: 2\n  global_batch_size: 64\n" pipeline

/* Both torchtitan formats of mixtures of experts: the flavor matched by
 * shape, the expert degrees as planned, each refusal with its reason,
 * and the search's admits agreeing on the degrees' rules. */
START_TEST(torchtitan_moe_flavors_and_expert_degrees)
{
	static const struct {
		const char *preset, *extra, *pipeline;
		int devices;
		const char *toml, *main; /* the reader's line, or a refusal */
		/* the degrees' rules; then with the model's (ctx) */
		int admits_toml, admits_main, with_toml, with_main;
	} cases[] = {
		{"qwen3-30b-a3b", "", "  stages: 1\n  data_parallel: 16\n"
		 "  zero: 2\n  expert_parallel: 8\n", 16,
		 "qwen3 30B-A3B 8 1 false -", "qwen3 30B-A3B 8 - - 0", 1, 1, 1, 1},
		{"qwen3-30b-a3b", "", "  tensor_parallel: 2\n  stages: 2\n"
		 "  data_parallel: 4\n  zero: 2\n  expert_parallel: 8\n"
		 "  expert_tensor_parallel: 1\n", 16,
		 "has no pipelining function", "qwen3 30B-A3B 8 - - 0", 1, 1, 0, 1},
		{"qwen3-30b-a3b", "", "  tensor_parallel: 2\n  stages: 1\n"
		 "  data_parallel: 8\n  zero: 2\n  expert_parallel: 8\n", 16,
		 "qwen3 30B-A3B 8 2 false -", "its main has no expert tensor "
		 "parallelism", 1, 0, 1, 0},
		{"qwen3-30b-a3b", "", "  stages: 1\n  data_parallel: 16\n"
		 "  zero: 2\n  expert_parallel: 4\n"
		 "  expert_tensor_parallel: 2\n", 16,
		 "over 1 device, not over 2", "over 1 device, not over 2",
		 0, 0, 0, 0},
		{"qwen3-30b-a3b", "    recompute: full\n", "  stages: 1\n"
		 "  data_parallel: 16\n  zero: 0\n  expert_parallel: 16\n", 16,
		 "ZeRO 0 shards nothing", "ZeRO 0 shards nothing", 0, 0, 0, 0},
		{"qwen3-30b-a3b", "    moe: {capacity_factor: 1.25}\n",
		 "  stages: 1\n  data_parallel: 16\n  zero: 2\n"
		 "  expert_parallel: 8\n", 16,
		 "experts are dropless", "experts are dropless", 1, 1, 1, 1},
		{"deepseek-v3", "    mtp_layers: 0\n    recompute: full\n",
		 "  stages: 16\n  data_parallel: 128\n  zero: 2\n"
		 "  expert_parallel: 64\n  schedule: dualpipe-v\n"
		 "  global_batch_size: 15360\n  trainer: torchtitan\n", 2048,
		 "deepseek_v3 671B 64 1 false -", "deepseek_v3 671B 64 - - 0",
		 1, 1, 1, 1},
		{"deepseek-v3", "    recompute: full\n",
		 "  stages: 16\n  data_parallel: 128\n  zero: 2\n"
		 "  expert_parallel: 64\n  schedule: dualpipe-v\n"
		 "  global_batch_size: 15360\n  trainer: torchtitan\n", 2048,
		 "(v0.2.2 has none)", "does not support pipeline parallelism",
		 1, 1, 1, 0},
		{"deepseek-v3", "    mtp_layers: 0\n    recompute: full\n",
		 "  stages: 16\n  data_parallel: 128\n  zero: 2\n"
		 "  expert_parallel: 64\n  schedule: dualpipe-v\n"
		 "  global_batch_size: 15360\n  overlap: {moe_a2a: true}\n", 2048,
		 "Activation Checkpointing cannot be used together",
		 "one after the other", 1, 1, 0, 0},
		{"gpt-oss-120b", "    recompute: full\n", "  stages: 1\n"
		 "  data_parallel: 64\n  zero: 2\n  expert_parallel: 16\n", 64,
		 "gpt_oss 120b 16 1 false -", "gpt_oss 120b 16 - - 0",
		 1, 1, 1, 1},
		{"gpt-oss-120b", "    recompute: full\n", "  stages: 4\n"
		 "  data_parallel: 16\n  zero: 2\n  expert_parallel: 16\n", 64,
		 "has no pipelining function", "gpt_oss 120b 16 - - 0",
		 1, 1, 0, 1},
		{"gpt-oss-120b", "    recompute: full\n", "  stages: 1\n"
		 "  context_parallel: 2\n  data_parallel: 32\n  zero: 2\n"
		 "  expert_parallel: 16\n", 64,
		 "SDPA only: plan with context_parallel: 1\n",
		 "VarlenAttention", 1, 1, 0, 0},
		{"mixtral-8x7b", "    recompute: full\n", "  stages: 2\n"
		 "  data_parallel: 8\n  zero: 2\n  expert_parallel: 8\n", 16,
		 "no mixture-of-experts flavor", "no mixture-of-experts flavor",
		 1, 1, 1, 1},
		{NULL, DS16B_YAML("1", "  stages: 1\n  data_parallel: 8\n"
				  "  expert_parallel: 8\n"), NULL, 8,
		 "(v0.2.2 has none)", "deepseek_v3 16B 8 - - 1", 1, 1, 1, 1},
		{NULL, DS16B_YAML("0", "  stages: 2\n  data_parallel: 4\n"
				  "  expert_parallel: 4\n"
				  "  schedule: dualpipe-v\n"
				  "  overlap: {moe_a2a: true}\n"), NULL, 8,
		 "deepseek_v3 16B 4 1 true -", "one after the other", 1, 1, 1, 0},
	};
	enum { N = sizeof cases / sizeof cases[0] };
	char *dir = tu_mkdtemp();
	static char paths[2 * N][4096];
	char *argv[2 * N + 4];
	const char *want[2 * N];
	int n = 0;
	argv[0] = "python3";
	argv[1] = "-c";
	argv[2] = (char *)tt_moe_reader;
	for (int i = 0; i < N; i++) {
		char name[64];
		snprintf(name, sizeof name, "m%d.yaml", i);
		built *b;
		if (cases[i].preset) {
			b = build_preset(dir, name, cases[i].preset,
					 cases[i].extra, cases[i].pipeline,
					 cases[i].devices, 1);
		} else {
			static char path[4096];
			tu_write_in(path, sizeof path, dir, name,
				    cases[i].extra);
			b = build_with(path, -1, 0, 0, NULL, 1);
		}
		const ppcc_pipeline *pl = &b->cfg.pipeline;
		ppcc_search_entry se = {
			.t = pl->tensor_parallel, .p = pl->stages,
			.d = pl->data_parallel, .cp = pl->context_parallel,
			.ep = pl->expert_parallel,
			.etp = ppcc_pipeline_etp(pl), .zero = pl->zero,
			.kind = b->plan.best.schedule.kind,
			.recompute = b->cfg.model.transformer->recompute};
		ck_assert_int_eq(ppcc_torchtitan_toml_admits(&se, NULL),
				 cases[i].admits_toml);
		ck_assert_int_eq(ppcc_torchtitan_admits(&se, NULL),
				 cases[i].admits_main);
		ck_assert_int_eq(ppcc_torchtitan_toml_admits(&se, &b->cfg),
				 cases[i].with_toml);
		ck_assert_int_eq(ppcc_torchtitan_admits(&se, &b->cfg),
				 cases[i].with_main);
		for (int k = 0; k < 2; k++) {
			const char *expect = k ? cases[i].main : cases[i].toml;
			int status;
			char *text = emit_to_string(k ? ppcc_emit_torchtitan
						    : ppcc_emit_torchtitan_toml,
						    b, &status);
			int written = strncmp(expect, "qwen3 ", 6) == 0 ||
				      strncmp(expect, "deepseek_v3 ", 12) == 0 ||
				      strncmp(expect, "gpt_oss ", 8) == 0;
			ck_assert_msg((text != NULL) == written,
				      "case %d %s: %s", i, k ? "main" : "toml",
				      b->diag.text);
			if (!text) {
				ck_assert_int_eq(status, PPCC_EINPUT);
				ck_assert_msg(strstr(b->diag.text, expect),
					      "case %d %s: %s", i,
					      k ? "main" : "toml", b->diag.text);
				b->diag.len = 0;
				b->diag.text[0] = '\0';
				continue;
			}
			snprintf(name, sizeof name, "m%d.%s", i,
				 k ? "py" : "toml");
			tu_write_in(paths[n], sizeof paths[n], dir, name, text);
			argv[3 + n] = paths[n];
			want[n++] = expect;
			free(text);
		}
		built_free(b);
	}
	argv[3 + n] = NULL;
	tu_run r;
	if (!py_run(&r, argv, "torchtitan_moe", "reader")) {
		tu_rmtree_free(dir);
		return;
	}
	const char *at = r.out;
	for (int i = 0; i < n; i++) {
		const char *nl = strchr(at, '\n');
		ck_assert_ptr_nonnull(nl);
		ck_assert_msg(strlen(want[i]) == (size_t)(nl - at) &&
			      strncmp(at, want[i], strlen(want[i])) == 0,
			      "%s: %.*s, want %s", paths[i], (int)(nl - at),
			      at, want[i]);
		at = nl + 1;
	}
	ck_assert_str_eq(at, "");
	tu_run_free(&r);
	/* what the model alone decides, which ppcc search states before
	 * searching: DeepSeek-V3's MTP module in v0.2.2, Mixtral's shape */
	built *b = build_preset(dir, "mtp.yaml", "deepseek-v3",
				"    recompute: full\n",
				"  stages: 16\n  data_parallel: 128\n  zero: 2\n"
				"  expert_parallel: 64\n  schedule: dualpipe-v\n"
				"  global_batch_size: 15360\n", 2048, 0);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(ppcc_torchtitan_toml_model_refuses(&b->cfg,
							    &b->diag.d),
			 PPCC_EINPUT);
	ck_assert_msg(strstr(b->diag.text, "(v0.2.2 has none)"), "%s",
		      b->diag.text);
	ck_assert_int_eq(ppcc_torchtitan_model_refuses(&b->cfg, &b->diag.d),
			 0);
	built_free(b);
	tu_rmtree_free(dir);
}
END_TEST

/* ---- DeepSpeed --------------------------------------------------------- */

START_TEST(deepspeed_config_batch_identity_and_parts)
{
	built *b = build("llama3-70b.yaml", -1, 0, 0);
	int status;
	char *text = emit_to_string(ppcc_emit_deepspeed, b, &status);
	ck_assert_ptr_nonnull(text);
	json_error_t err;
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &err);
	ck_assert_msg(j, "line %d: %s", err.line, err.text);
	/* DeepSpeed's rule: train_batch_size = micro x accumulation x d;
	 * here 256 = 1 x 32 x 8 */
	ck_assert_int_eq(json_integer_value(json_object_get(j, "train_batch_size")), 256);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
		"train_micro_batch_size_per_gpu")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(j,
		"gradient_accumulation_steps")), 32);
	ck_assert_int_eq(json_integer_value(json_object_get(
		json_object_get(j, "zero_optimization"), "stage")), 1);
	json_t *pipe = json_object_get(j, "pipeline");
	ck_assert_int_eq(json_integer_value(json_object_get(pipe, "stages")), 4);
	json_t *parts = json_object_get(pipe, "parts");
	ck_assert_int_eq((int)json_array_size(parts), 5);
	for (int k = 0; k < 4; k++)
		ck_assert_int_eq(json_integer_value(json_array_get(parts, (size_t)k)),
				 b->plan.best.stages[k].first_layer);
	/* the end: 82 layers (embedding, 80 blocks, head) */
	ck_assert_int_eq(json_integer_value(json_array_get(parts, 4)), 82);
	json_decref(j);
	free(text);
	built_free(b);
}
END_TEST

/* examples/<example> with p stages, d replicas, ZeRO zero and gradients of
 * grad_bytes bytes (the file's micro-batch size; microbatches follow from
 * its global batch). */
static built *build_zero(const char *example, int stages, int d, int zero,
			 double grad_bytes)
{
	overrides ov = {.zero = zero, .data_parallel = d,
			.grad_bytes = grad_bytes};
	return build_with(example, -1, 0, stages, &ov, 1);
}

/* DeepSpeed edaa722, runtime/config.py:937: train_batch_size must equal
 * micro x accumulation x the data-parallel world size, which a
 * PipelineModule takes from its topology (runtime/pipe/module.py:169-180;
 * PipeModelDataParallelTopology(num_pp, num_mp, num_dp), runtime/pipe/
 * topology.py:244-248); without one it counts the tensor-parallel ranks
 * as data parallel. */
static void deepspeed_batch_holds(json_t *j, int d)
{
	long long B = json_integer_value(json_object_get(j, "train_batch_size"));
	long long b = json_integer_value(json_object_get(j,
		"train_micro_batch_size_per_gpu"));
	long long m = json_integer_value(json_object_get(j,
		"gradient_accumulation_steps"));
	ck_assert_int_eq(B, b * m * d);
}

START_TEST(deepspeed_topology_names_the_tensor_parallel_ranks)
{
	built *b = build("llama3-70b.yaml", -1, 0, 0);
	int status;
	char *text = emit_to_string(ppcc_emit_deepspeed, b, &status);
	ck_assert_ptr_nonnull(text);
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	ck_assert_ptr_nonnull(j);
	json_t *topo = json_object_get(json_object_get(j, "pipeline"),
				       "topology");
	const ppcc_pipeline *pl = &b->cfg.pipeline;
	ck_assert_int_gt(pl->tensor_parallel, 1);
	ck_assert_int_eq(json_integer_value(json_object_get(topo, "num_pp")),
			 pl->stages);
	ck_assert_int_eq(json_integer_value(json_object_get(topo, "num_mp")),
			 pl->tensor_parallel);
	ck_assert_int_eq(json_integer_value(json_object_get(topo, "num_dp")),
			 pl->data_parallel);
	deepspeed_batch_holds(j, (int)json_integer_value(
		json_object_get(topo, "num_dp")));
	/* 16-bit weights with fp32 gradient accumulation, as planned
	 * (grad_bytes 4); DeepSpeed's default is fp32 weights */
	ck_assert(json_is_true(json_object_get(json_object_get(j, "bf16"),
					       "enabled")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j,
		"data_types"), "grad_accum_dtype")), "fp32");
	json_decref(j);
	free(text);
	built_free(b);
}
END_TEST

/* DeepSpeed edaa722, runtime/pipe/engine.py:76-77: the pipeline engine
 * asserts ZeRO < 2, and it is the engine deepspeed.initialize makes of a
 * PipelineModule; at p = 1 there is no PipelineModule and no "pipeline"
 * section, and ZeRO 2 and 3 are DeepSpeed's own. */
START_TEST(deepspeed_one_stage_has_no_pipeline_section)
{
	for (int zero = 1; zero <= 3; zero++) {
		built *b = build_zero("tiny.yaml", 1, 4, zero, 4);
		int status;
		char *text = emit_to_string(ppcc_emit_deepspeed, b, &status);
		ck_assert_msg(text, "ZeRO %d: %s", zero, b->diag.text);
		json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
		ck_assert_ptr_nonnull(j);
		ck_assert_ptr_null(json_object_get(j, "pipeline"));
		ck_assert_int_eq(json_integer_value(json_object_get(
			json_object_get(j, "zero_optimization"), "stage")), zero);
		deepspeed_batch_holds(j, 4);
		json_decref(j);
		free(text);
		built_free(b);
	}
}
END_TEST

/* DeepSpeed edaa722's mixture of experts, deepspeed.moe.layer.MoE: its
 * arguments (deepspeed/moe/layer.py:38-53) hidden_size, expert,
 * num_experts, ep_size, k, capacity_factor, eval_capacity_factor,
 * min_capacity, use_residual, noisy_gate_policy, drop_tokens, use_rts,
 * use_tutel, enable_expert_tensor_parallelism, top2_2nd_expert_sampling;
 * 59 ep_size divides num_experts; deepspeed/utils/groups.py:350-351 it
 * divides the ranks of a pipeline stage; moe/sharded_moe.py:162-170 the
 * capacity ceil(T / E x factor), at least min_capacity, with the factor
 * x 2 for top 2 (383) and x k above (465); 357-365 the second of two
 * experts drawn with Gumbel noise unless top2_2nd_expert_sampling is
 * false; 384-396 and 485-494 drop_tokens false pads every expert to the
 * busiest one's count; layer.py:124-131 use_residual mixes one MLP in by
 * a learned coefficient; runtime/engine.py:1889-1891 no MoE under ZeRO 3.
 * runtime/config.py reads the keys it knows by name (config_utils.py:
 * 193-194, get_scalar_param is dict.get), so a top-level key it does not
 * know, "ppcc_moe", is left alone; its sections are pydantic models that
 * forbid unknown fields (config_utils.py:110), so nothing is added to
 * them.  Mixtral 8x7B (its Hugging Face config: 8 experts of 14336, 2 a
 * token, every one of 32 layers) with a capacity factor of 1.25, by
 * hand. */
START_TEST(deepspeed_moe_arguments_of_mixtral_by_hand)
{
	static const char *const signature[] = {
		"hidden_size", "expert", "num_experts", "ep_size", "k",
		"capacity_factor", "eval_capacity_factor", "min_capacity",
		"use_residual", "noisy_gate_policy", "drop_tokens", "use_rts",
		"use_tutel", "enable_expert_tensor_parallelism",
		"top2_2nd_expert_sampling", NULL};
	char *dir = tu_mkdtemp();
	const char *pipe = "  tensor_parallel: 1\n  stages: 4\n"
			   "  schedule: 1f1b\n  expert_parallel: 8\n";
	built *b = build_moe(dir, "ds.yaml", "    moe: {capacity_factor: 1.25}\n",
			     pipe, 64, 1);
	int status;
	char *text = emit_to_string(ppcc_emit_deepspeed, b, &status);
	ck_assert_msg(text, "%s", b->diag.text);
	json_error_t err;
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &err);
	ck_assert_msg(j, "line %d: %s", err.line, err.text);
	/* 64 devices = 4 stages x 16 data-parallel ranks, in groups of 8 */
	deepspeed_batch_holds(j, 16);
	json_t *moe = json_object_get(j, "ppcc_moe");
	ck_assert_ptr_nonnull(moe);
	json_t *layers = json_object_get(moe, "layers");
	ck_assert_int_eq((int)json_array_size(layers), 32);
	for (int i = 0; i < 32; i++)
		ck_assert_int_eq(json_integer_value(json_array_get(layers,
							(size_t)i)), i);
	json_t *expert = json_object_get(moe, "expert");
	ck_assert_int_eq(json_integer_value(json_object_get(expert,
		"ffn_hidden_size")), 14336);
	ck_assert(json_is_true(json_object_get(expert, "swiglu")));
	json_t *a = json_object_get(moe, "arguments");
	const char *key;
	json_t *value;
	json_object_foreach(a, key, value) {
		ck_assert_msg(in_list(signature, key) &&
			      strcmp(key, "expert") != 0,
			      "%s is no argument of MoE", key);
	}
	ck_assert_int_eq(json_object_size(a), 9);
	ck_assert_int_eq(json_integer_value(json_object_get(a, "hidden_size")),
			 4096);
	ck_assert_int_eq(json_integer_value(json_object_get(a, "num_experts")), 8);
	ck_assert_int_eq(json_integer_value(json_object_get(a, "ep_size")), 8);
	ck_assert_int_eq(json_integer_value(json_object_get(a, "k")), 2);
	ck_assert(json_number_value(json_object_get(a, "capacity_factor")) == 1.25);
	ck_assert_int_eq(json_integer_value(json_object_get(a, "min_capacity")), 0);
	ck_assert(json_is_true(json_object_get(a, "drop_tokens")));
	ck_assert(json_is_false(json_object_get(a, "use_residual")));
	ck_assert(json_is_false(json_object_get(a, "top2_2nd_expert_sampling")));
	/* beside "ppcc_moe", the keys a dense model's configuration has */
	static const char *const known[] = {
		"train_batch_size", "train_micro_batch_size_per_gpu",
		"gradient_accumulation_steps", "bf16", "data_types",
		"zero_optimization", "pipeline", "ppcc_moe", NULL};
	json_object_foreach(j, key, value)
		ck_assert_msg(in_list(known, key), "%s", key);
	json_decref(j);
	free(text);
	built_free(b);

	/* refused: what DeepSpeed's layer cannot run as planned */
	static const struct {
		const char *extra, *pipeline, *what;
	} no[] = {
		{"", NULL, "dropless"},
		{"    moe: {capacity_factor: 1.25, shared_experts: 1}\n", NULL,
		 "shared experts"},
		{"    moe: {capacity_factor: 1.25, node_limit: 2}\n", NULL,
		 "node-limited"},
		{"    moe: {capacity_factor: 1.25}\n",
		 "  tensor_parallel: 2\n  stages: 4\n  schedule: 1f1b\n"
		 "  expert_parallel: 4\n", "t = 1 only"},
		{"    moe: {capacity_factor: 1.25}\n",
		 "  tensor_parallel: 1\n  stages: 1\n  expert_parallel: 1\n"
		 "  zero: 3\n", "ZeRO stage 3"},
		{"    moe: {capacity_factor: 1.25, groups: 4, group_topk: 2}\n",
		 NULL, "cannot run group-limited routing (DeepSpeed's gate has "
		 "none)"},
	};
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		b = build_moe(dir, "no.yaml", no[i].extra,
			      no[i].pipeline ? no[i].pipeline : pipe, 64, 1);
		ck_assert_ptr_null(emit_to_string(ppcc_emit_deepspeed, b,
						  &status));
		ck_assert_int_eq(status, PPCC_EINPUT);
		ck_assert_msg(strstr(b->diag.text, no[i].what), "%zu: %s", i,
			      b->diag.text);
		built_free(b);
	}
	tu_rmtree_free(dir);
}
END_TEST

/* DeepSpeed edaa722, runtime/engine.py:1994-1996 and 2011-2021: bf16
 * weights with fp32 gradient accumulation run only at ZeRO 1, in the BF16
 * optimizer, which shards the fp32 weights and Adam state over the
 * data-parallel ranks (runtime/bf16_optimizer.py:161-177); at ZeRO 0 the
 * mix raises NotImplementedError.  So ZeRO 0 with d > 1 is not what
 * DeepSpeed runs, and at d = 1 it is ZeRO 1 byte for byte. */
START_TEST(deepspeed_zero0_is_stage1_at_d1_and_refused_above)
{
	built *b = build_zero("tiny.yaml", 2, 2, 0, 4);
	int status;
	ck_assert_ptr_null(emit_to_string(ppcc_emit_deepspeed, b, &status));
	ck_assert_int_eq(status, PPCC_EINPUT);
	ck_assert_ptr_nonnull(strstr(b->diag.text, "2 data-parallel ranks"));
	ck_assert_ptr_nonnull(strstr(b->diag.text, "plan with zero: 1"));
	built_free(b);

	b = build_zero("tiny.yaml", 4, 1, 0, 4);
	char *text = emit_to_string(ppcc_emit_deepspeed, b, &status);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(strstr(text, "\"zero_optimization\": {\"stage\": 1}"));
	free(text);
	built_free(b);

	b = build_zero("tiny.yaml", 4, 1, 1, 3);
	ck_assert_ptr_null(emit_to_string(ppcc_emit_deepspeed, b, &status));
	ck_assert_int_eq(status, PPCC_EINPUT);
	ck_assert_ptr_nonnull(strstr(b->diag.text, "grad_bytes"));
	built_free(b);

	b = build_zero("tiny.yaml", 4, 1, 1, 2);
	text = emit_to_string(ppcc_emit_deepspeed, b, &status);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(strstr(text, "\"grad_accum_dtype\": \"bf16\""));
	free(text);
	built_free(b);
}
END_TEST

START_TEST(megatron_launcher_sets_one_connection_where_megatron_asserts_it)
{
	
/* Megatron-LM d98e8a6, megatron/training/arguments.py:1453-1454:
	 * with t > 1 or cp > 1 on a GPU before Blackwell (arch < 10), and
	 * 1456-1479: unless Torch-FSDP2, Megatron-FSDP or MoE overlap, it
	 * asserts CUDA_DEVICE_MAX_CONNECTIONS == "1"; 1166-1167: Megatron-FSDP
	 * (ppcc's ZeRO 2 and 3) asserts it is not "1".  So the launcher line
	 * sets it to 1 exactly where t or cp > 1 under ZeRO 0 or 1. */
	static const struct {
		const char *example;
		int t;
	} ex[] = {{"llama3-70b.yaml", 8}, {"llama3-8b.yaml", 1}};
	for (size_t e = 0; e < sizeof ex / sizeof ex[0]; e++)
		for (int zero = 0; zero <= 3; zero++) {
			overrides ov = {.zero = zero};
			built *b = build_with(ex[e].example, -1, 0, 0, &ov, 1);
			int status;
			char *text = emit_to_string(ppcc_emit_megatron, b,
						    &status);
			ck_assert_ptr_nonnull(text);
			int want = ex[e].t > 1 && zero < 2;
			ck_assert_msg((strstr(text, "# CUDA_DEVICE_MAX_CONNECTIONS=1 "
					      "torchrun ") != NULL) == want,
				      "%s zero %d:\n%s", ex[e].example, zero, text);
			if (!want)
				ck_assert_ptr_null(strstr(text,
					"CUDA_DEVICE_MAX_CONNECTIONS=1"));
			free(text);
			built_free(b);
		}
}
END_TEST

/* The launcher starts a host's devices, not an NVLink domain's: a GB200
 * NVL72 node holds 72 GPUs on 18 trays of 4 (NVIDIA's DGX GB200 user
 * guide, doc/design/devices.md), so Megatron-LM's and torchtitan's
 * torchrun lines start 4 processes a host. */
START_TEST(launchers_start_a_hosts_devices_not_an_nvlink_domains)
{
	char *dir = tu_mkdtemp(), path[4096];
	tu_write_in(path, sizeof path, dir, "gb200.yaml",
		    "model:\n  name: llama3-8b\n  transformer:\n"
		    "    layers: 32\n    hidden: 4096\n    heads: 32\n"
		    "    kv_heads: 8\n    ffn_hidden: 14336\n    vocab: 128256\n"
		    "    seq_len: 8192\n    swiglu: true\n    rope_theta: 500000\n"
		    "cluster:\n  devices: 144\n  device: gb200\n"
		    "pipeline: {tensor_parallel: 8, stages: 2, zero: 2, "
		    "global_batch_size: 72}\n");
	const char *fmts[] = {"megatron", "torchtitan-toml"};
	for (int i = 0; i < 2; i++) {
		tu_run r;
		TU_PPCC(&r, "plan", path, "-f", fmts[i]);
		ck_assert_msg(r.status == 0, "%s: %s", fmts[i], r.err);
		ck_assert_msg(strstr(r.out, "torchrun --nproc-per-node 4 "
				     "--nnodes 36 "), "%s: %s", fmts[i], r.out);
		tu_run_free(&r);
	}
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(torchtitan_launcher_world_is_the_plans_degrees)
{
	/* torchtitan v0.2.2 73a0e69, torchtitan/distributed/
	 * parallel_dims.py:53-56 asserts dp_replicate * dp_shard * cp * tp
	 * * pp == WORLD_SIZE; main b5bcd76 keeps the rule.  With
	 * data_parallel: 2, llama3-70b's 256 devices plan t 8 x p 4 x d 2 =
	 * 64 processes: 8 nodes of 8, not the cluster's 32 nodes. */
	overrides ov = {.zero = 2, .data_parallel = 2};
	built *b = build_with("llama3-70b.yaml", -1, 0, 4, &ov, 1);
	ck_assert_int_eq(b->cfg.pipeline.data_parallel, 2);
	emit_fn fns[] = {ppcc_emit_torchtitan_toml, ppcc_emit_torchtitan};
	for (int i = 0; i < 2; i++) {
		int status;
		char *text = emit_to_string(fns[i], b, &status);
		ck_assert_ptr_nonnull(text);
		ck_assert_msg(strstr(text, ": 64 devices = 8 tensor x 4 pipeline "
				     "x 1 context x 2 data parallel") != NULL,
			      "%s", text);
		ck_assert_msg(strstr(text, "# torchrun --nproc-per-node 8 "
				     "--nnodes 8 -m torchtitan.train") != NULL,
			      "%s", text);
		free(text);
	}
	built_free(b);
}
END_TEST

Suite *suite_trainers(void)
{
	return tu_suite("trainers", "trainers", 120, (const TTest *const[]){
		layout_parser_reads_the_documented_example,
		megatron_split_round_trips_against_the_partition,
		megatron_arguments_of_llama3_70b_by_hand,
		megatron_empty_first_or_last_stage_is_a_layout,
		megatron_zero_stages_map_to_distributed_optimizer_and_fsdp,
		megatron_arguments_obey_megatrons_rules_across_plans,
		megatron_refuses_what_its_checks_reject,
		megatron_moe_arguments_of_mixtral_by_hand,
		moe_exports_refuse_what_their_trainer_cannot_run,
		unwritten_attention_and_heads_are_refused_by_every_trainer,
		megatron_latent_attention_and_mtp_of_deepseek_v3_by_hand,
		megatron_writes_fp8_as_planned,
		megatron_sliding_windows_and_their_refusals,
		megatron_bridge_snippet_sets_what_megatrons_arguments_set,
		megatron_admits_what_its_export_writes,
		launchers_start_a_hosts_devices_not_an_nvlink_domains,
		trainer_formats_refuse_what_the_trainer_cannot_run,
		torchtitan_toml_parses_and_names_every_module_once,
		torchtitan_model_is_a_registered_flavor,
		torchtitan_zero0_replicas_are_ddp_alone_only,
		torchtitan_zero1_is_refused_zero2_keeps_weights_gathered,
		torchtitan_trains_bf16_or_refuses,
		torchtitan_unnamed_orders_run_from_the_csv,
		torchtitan_zb_v_with_few_microbatches_runs_from_the_csv,
		torchtitan_degrees_hold_torchtitans_rules,
		torchtitan_python_config_sets_only_mains_names,
		hsdp_exports_name_the_shard_groups,
		torchtitan_moe_flavors_and_expert_degrees,
		deepspeed_config_batch_identity_and_parts,
		deepspeed_topology_names_the_tensor_parallel_ranks,
		deepspeed_one_stage_has_no_pipeline_section,
		deepspeed_zero0_is_stage1_at_d1_and_refused_above,
		deepspeed_moe_arguments_of_mixtral_by_hand,
		megatron_launcher_sets_one_connection_where_megatron_asserts_it,
		torchtitan_launcher_world_is_the_plans_degrees,
		NULL});
}
