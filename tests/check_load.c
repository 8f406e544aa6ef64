/* The input phase: YAML files into ppcc_config (units, defaults, repeat,
 * the transformer shorthand against published figures), the exact text
 * and position of its diagnostics, its hardening against hostile files,
 * and ppcc_config_check's relations between settings. */
#define _GNU_SOURCE
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

static char *tmpdir;

static void setup(void)
{
	tmpdir = tu_mkdtemp();
	ck_assert_ptr_nonnull(tmpdir);
}

static void teardown(void)
{
	tu_rmtree_free(tmpdir);
	tmpdir = NULL;
}

/* Diagnostics as "LINE:COL: MSG", warnings as "LINE:COL: warning: MSG",
 * prefixed with the file's base name when it is not the model file. */
typedef struct collected {
	ppcc_diag d;
	const char *main_file;
	char text[1 << 15];
	size_t len;
} collected;

static void collect(ppcc_severity sev, const ppcc_loc *loc, const char *msg,
		    void *user)
{
	collected *c = user;
	char prefix[300] = "";
	if (loc && loc->file &&
	    (!c->main_file || strcmp(loc->file, c->main_file) != 0)) {
		const char *base = strrchr(loc->file, '/');
		snprintf(prefix, sizeof prefix, "%s:", base ? base + 1 : loc->file);
	}
	int n = snprintf(c->text + c->len, sizeof c->text - c->len,
			 "%s%d:%d: %s%s\n", prefix, loc ? loc->line : 0,
			 loc ? loc->col : 0,
			 sev == PPCC_SEV_WARNING ? "warning: "
			 : sev == PPCC_SEV_NOTE ? "note: " : "",
			 msg);
	if (n > 0 && c->len + (size_t)n < sizeof c->text)
		c->len += (size_t)n;
}

typedef struct loaded {
	ppcc_arena *a;
	ppcc_config cfg;
	collected diag;
	int status;
	char path[PATH_MAX];
} loaded;

static void write_bytes(const char *path, const char *bytes, size_t len)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

static char *temp_path(const char *name)
{
	static char buf[4][PATH_MAX];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
	return buf[k];
}

/* Loads len bytes of YAML (and a cluster file when cluster is not NULL). */
static void load_bytes(loaded *r, const char *yaml, size_t len,
		       const char *cluster)
{
	memset(r, 0, sizeof *r);
	snprintf(r->path, sizeof r->path, "%s", temp_path("in.yaml"));
	write_bytes(r->path, yaml, len);
	const char *cpath = NULL;
	if (cluster) {
		cpath = temp_path("cluster.yaml");
		write_bytes(cpath, cluster, strlen(cluster));
	}
	r->a = ppcc_arena_new();
	ck_assert_ptr_nonnull(r->a);
	r->diag.d.fn = collect;
	r->diag.d.user = &r->diag;
	r->diag.main_file = r->path;
	r->status = ppcc_config_load(&r->cfg, r->a, r->path, cpath, &r->diag.d);
}

static void load_text(loaded *r, const char *yaml)
{
	load_bytes(r, yaml, strlen(yaml), NULL);
}

static void done(loaded *r)
{
	ppcc_arena_free(r->a);
	r->a = NULL;
}

/* Loads yaml, expects PPCC_EINPUT and exactly the diagnostics want. */
static void expect_errors(const char *yaml, const char *want)
{
	loaded r;
	load_text(&r, yaml);
	ck_assert_msg(r.status == PPCC_EINPUT, "status %d for:\n%s\n%s",
		      r.status, yaml, r.diag.text);
	ck_assert_str_eq(r.diag.text, want);
	done(&r);
}

#define CLUSTER4 \
	"cluster:\n" \
	"  devices: 4\n" \
	"  device: {name: g, tflops: 100, efficiency: 1, memory_gib: 16}\n"

#define MODEL1 \
	"model:\n" \
	"  name: m\n" \
	"  layers: [{name: a, fwd_flops: 1e9, repeat: 8}]\n"

/* ---- values ----------------------------------------------------------- */

/* precision fp8 needs FP8 tensor cores on every device and is modelled
 * as Megatron-LM runs it with Transformer Engine: on an A100, under
 * ZeRO-3, or for torchtitan or DeepSpeed it is an error at the key. */
START_TEST(fp8_is_refused_where_it_is_not_modelled)
{
	static const struct {
		const char *device, *pipeline, *want;
	} cases[] = {
		{"h100", "{stages: 1}", NULL},
		{"a100", "{stages: 1}", "device 'a100' has no FP8 tensor cores"},
		{"{name: x, tflops: 100, tflops_fp8: 200, efficiency: 0.5, "
		 "memory_gib: 80}", "{stages: 1}", NULL},
		{"h100", "{stages: 1, zero: 3, data_parallel: 2}",
		 "FP8 beside ZeRO-3's sharded weights is not modelled"},
		{"h100", "{stages: 1, trainer: torchtitan}",
		 "torchtitan's float8 is not modelled"},
		{"h100", "{stages: 1, trainer: deepspeed}",
		 "DeepSpeed's configuration has no FP8 training"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char text[1024];
		snprintf(text, sizeof text, "model:\n  name: m\n"
			 "  transformer: {preset: llama3-8b, precision: fp8}\n"
			 "cluster: {devices: 2, device: %s}\n"
			 "pipeline: %s\n", cases[i].device, cases[i].pipeline);
		loaded r;
		load_text(&r, text);
		ck_assert_msg(r.status == 0, "%s", r.diag.text);
		int err = ppcc_config_check(&r.cfg, &r.diag.d);
		if (!cases[i].want)
			ck_assert_msg(err == 0, "%zu: %s", i, r.diag.text);
		else
			ck_assert_msg(err == PPCC_EINPUT &&
				      strstr(r.diag.text, cases[i].want) &&
				      strstr(r.diag.text, "3:36: precision fp8"),
				      "%zu: %s", i, r.diag.text);
		done(&r);
	}
}
END_TEST

/* pipeline.overlap: moe_a2a and comm_sm_share as given, else the
 * trainer's default (torchtitan registers no overlapped function for
 * PyTorch's OVERLAP_F_B: b5bcd76c has no register_custom_function
 * outside torchtitan/experiments); the four overlaps ppcc plans one way
 * are accepted at that value and refused at the other, by name. */
START_TEST(overlap_keys_take_their_values_and_refuse_what_is_not_modelled)
{
	loaded r;
	load_text(&r, MODEL1 CLUSTER4
		  "pipeline: {stages: 2, overlap: {moe_a2a: false, "
		  "comm_sm_share: 0.25, grad_reduce: true, param_gather: true, "
		  "tp_comm: false, p2p: false}}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_int_eq(ppcc_overlap_moe_a2a(&r.cfg.pipeline), 0);
	ck_assert(ppcc_overlap_comm_sm_share(&r.cfg.pipeline) == 0.25);
	done(&r);
	load_text(&r, MODEL1 CLUSTER4 "pipeline: {stages: 2}\n");
	ck_assert_int_eq(ppcc_overlap_moe_a2a(&r.cfg.pipeline), 1);
	ck_assert(ppcc_overlap_comm_sm_share(&r.cfg.pipeline) == 20.0 / 132.0);
	done(&r);
	load_text(&r, MODEL1 CLUSTER4
		  "pipeline: {stages: 2, trainer: torchtitan}\n");
	ck_assert_int_eq(ppcc_overlap_moe_a2a(&r.cfg.pipeline), 0);
	done(&r);
	expect_errors(MODEL1 CLUSTER4
		      "pipeline: {overlap: {moe_a2a: maybe, comm_sm_share: 2}}\n",
		      "7:31: pipeline.overlap.moe_a2a: expected true or false, "
		      "got 'maybe'\n"
		      "7:53: pipeline.overlap.comm_sm_share: expected a share of "
		      "the SMs above 0 and at most 1, got '2'\n");
	expect_errors(MODEL1 CLUSTER4
		      "pipeline:\n  overlap: {p2p: true, grad_reduce: false}\n",
		      "8:13: pipeline.overlap.p2p: ppcc does not model this "
		      "overlap; it plans it exposed: a pipeline transfer is "
		      "waited for between computes\n"
		      "8:24: pipeline.overlap.grad_reduce: ppcc does not model "
		      "this communication exposed; it plans it overlapped: each "
		      "gradient bucket reduces on the rank's communication "
		      "channel while later backwards run (Megatron-LM's "
		      "--overlap-grad-reduce)\n");
	/* tp_comm: Megatron-LM's, with sequence parallelism only */
	static const struct {
		const char *extra, *want;
	} tp[] = {
		{"", NULL},
		{", trainer: torchtitan", "ppcc models Megatron-LM's "
		 "--tp-comm-overlap, not this trainer's"},
		{"", "only with sequence parallelism"},
	};
	for (int i = 0; i < 3; i++) {
		char text[1024];
		snprintf(text, sizeof text, "model:\n  name: m\n"
			 "  transformer: {preset: llama3-8b%s}\n"
			 "cluster: {devices: 2, device: h100}\n"
			 "pipeline: {tensor_parallel: 2, overlap: {tp_comm: "
			 "true}%s}\n", i == 2 ? ", sequence_parallel: false" : "",
			 tp[i].extra);
		load_text(&r, text);
		ck_assert_msg(r.status == 0, "%s", r.diag.text);
		ck_assert_int_eq(r.cfg.pipeline.overlap.tp_comm, 1);
		int err = ppcc_config_check(&r.cfg, &r.diag.d);
		ck_assert_msg(tp[i].want ? err == PPCC_EINPUT &&
			      strstr(r.diag.text, tp[i].want) &&
			      strstr(r.diag.text, "5:42: pipeline.overlap.tp_comm")
			      : err == 0, "%d: %s", i, r.diag.text);
		done(&r);
	}
}
END_TEST

START_TEST(load_converts_units_and_fills_defaults)
{
	loaded r;
	load_text(&r,
		  "model:\n"
		  "  name: m\n"
		  "  layers:\n"
		  "    - name: a\n"
		  "      fwd_flops: 2e9\n"
		  "      params: 1000\n"
		  "      activation_bytes: 64\n"
		  "      stash_bytes: 128\n"
		  "    - {name: b, fwd_flops: 3e9, bwd_flops: 0, bytes_per_param: 2}\n"
		  "cluster:\n"
		  "  devices: 4\n"
		  "  device: {name: h100, tflops: 989, efficiency: 1, memory_gib: 80}\n"
		  "  links:\n"
		  "    inter_node: {bandwidth_gb_s: 50, latency_us: 8}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_str_eq(r.diag.text, "");
	const ppcc_config *c = &r.cfg;
	ck_assert_str_eq(c->path, r.path);
	ck_assert_str_eq(c->model.name, "m");
	ck_assert_int_eq(c->model.n_layers, 2);
	const ppcc_layer *a = &c->model.layers[0], *b = &c->model.layers[1];
	ck_assert_str_eq(a->name, "a");
	ck_assert_double_eq(a->fwd_flops, 2e9);
	ck_assert_double_eq(a->bwd_flops, 4e9); /* twice the forward */
	ck_assert_double_eq(a->params, 1000);
	ck_assert_double_eq(a->activation_bytes, 64);
	ck_assert_double_eq(a->stash_bytes, 128);
	ck_assert_double_eq(a->bytes_per_param, 0); /* from pipeline.zero */
	ck_assert_int_eq(a->loc.line, 4);
	ck_assert_int_eq(a->loc.col, 7);
	ck_assert_double_eq(b->bwd_flops, 0);
	ck_assert_double_eq(b->bytes_per_param, 2);
	ck_assert_int_eq(b->loc.line, 9);

	const ppcc_cluster *cl = &c->cluster;
	ck_assert_int_eq(cl->devices, 4);
	ck_assert_int_eq(cl->devices_per_node, 8);
	ck_assert_int_eq(cl->n_groups, 1);
	ck_assert_str_eq(cl->groups[0].name, "h100");
	ck_assert_int_eq(cl->groups[0].count, 4);
	ck_assert_double_eq(cl->groups[0].tflops, 989);
	ck_assert_double_eq(cl->groups[0].efficiency, 1.0);
	ck_assert_double_eq(cl->groups[0].memory_bytes, 80.0 * 1073741824.0);
	ck_assert_double_eq(cl->intra_node.bandwidth, 300e9);
	ck_assert_double_eq_tol(cl->intra_node.latency, 5e-6, 1e-18);
	ck_assert_double_eq(cl->inter_node.bandwidth, 50e9);
	ck_assert_double_eq_tol(cl->inter_node.latency, 8e-6, 1e-18);

	/* No pipeline section: every setting is a default, unlocated. */
	const ppcc_pipeline *p = &c->pipeline;
	ck_assert_int_eq(p->kind, PPCC_SCHED_1F1B);
	ck_assert_int_eq(p->stages, 2); /* 4 devices, capped at 2 layers */
	ck_assert_int_eq(p->microbatches, 8);
	ck_assert_int_eq(p->chunks, 1);
	ck_assert_int_eq(p->group_size, 0);
	ck_assert_int_eq(p->tensor_parallel, 1);
	ck_assert_ptr_null(p->stages_loc.file);
	ck_assert_ptr_null(p->kind_loc.file);
	ck_assert_int_eq(p->stages_loc.line, 0);
	ck_assert_str_eq(p->loc.file, r.path);
	ck_assert_int_eq(p->loc.line, 0);
	done(&r);
}
END_TEST

START_TEST(load_expands_repeat_in_place)
{
	loaded r;
	load_text(&r, "model:\n"
		      "  name: m\n"
		      "  layers:\n"
		      "    - {name: first, fwd_flops: 1}\n"
		      "    - {name: mid, fwd_flops: 2, repeat: 3}\n"
		      "    - {name: last, fwd_flops: 3}\n" CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_model *m = &r.cfg.model;
	ck_assert_int_eq(m->n_layers, 5);
	const char *names[] = {"first", "mid", "mid", "mid", "last"};
	const double fwd[] = {1, 2, 2, 2, 3};
	for (int i = 0; i < 5; i++) {
		ck_assert_str_eq(m->layers[i].name, names[i]);
		ck_assert_double_eq(m->layers[i].fwd_flops, fwd[i]);
	}
	for (int i = 1; i <= 3; i++)
		ck_assert_int_eq(m->layers[i].loc.line, 5);
	done(&r);
}
END_TEST

START_TEST(load_converts_ms_at_the_first_group_rate)
{
	loaded r;
	load_text(&r, "model:\n"
		      "  name: m\n"
		      "  layers:\n"
		      "    - {name: a, fwd_ms: 2, bwd_ms: 3}\n"
		      "    - {name: b, fwd_ms: 0.5}\n"
		      "cluster:\n"
		      "  groups:\n"
		      "    - {name: fast, count: 2, tflops: 100, efficiency: 0.5, memory_gib: 8}\n"
		      "    - {name: slow, count: 6, tflops: 10, efficiency: 1, memory_gib: 4}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	/* 1 ms at 100 TFLOP/s x 0.5 is 5e10 FLOPs */
	const ppcc_layer *y = r.cfg.model.layers;
	ck_assert_double_eq_tol(y[0].fwd_flops, 1e11, 1);
	ck_assert_double_eq_tol(y[0].bwd_flops, 1.5e11, 1);
	ck_assert_double_eq_tol(y[1].fwd_flops, 2.5e10, 1);
	ck_assert_double_eq_tol(y[1].bwd_flops, 5e10, 1);
	ck_assert_int_eq(r.cfg.cluster.devices, 8);
	ck_assert_int_eq(r.cfg.cluster.n_groups, 2);
	ck_assert_str_eq(r.cfg.cluster.groups[1].name, "slow");
	ck_assert_double_eq(r.cfg.cluster.groups[1].efficiency, 1.0);
	ck_assert_int_eq(r.cfg.cluster.groups[1].loc.line, 9);
	done(&r);
}
END_TEST

START_TEST(load_records_where_each_pipeline_setting_came_from)
{
	loaded r;
	load_text(&r, MODEL1 CLUSTER4
		  "pipeline:\n"
		  "  schedule: interleaved\n"
		  "  stages: 2\n"
		  "  chunks: 2\n"
		  "  microbatches: 6\n"
		  "  group_size: 3\n"
		  "  tensor_parallel: 2\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_pipeline *p = &r.cfg.pipeline;
	ck_assert_int_eq(p->kind, PPCC_SCHED_INTERLEAVED);
	ck_assert_int_eq(p->stages, 2);
	ck_assert_int_eq(p->chunks, 2);
	ck_assert_int_eq(p->microbatches, 6);
	ck_assert_int_eq(p->group_size, 3);
	ck_assert_int_eq(p->tensor_parallel, 2);
	ck_assert_int_eq(p->loc.line, 7);
	ck_assert_int_eq(p->kind_loc.line, 8);
	ck_assert_int_eq(p->stages_loc.line, 9);
	ck_assert_int_eq(p->chunks_loc.line, 10);
	ck_assert_int_eq(p->microbatches_loc.line, 11);
	ck_assert_int_eq(p->group_size_loc.line, 12);
	ck_assert_int_eq(p->tensor_parallel_loc.line, 13);
	ck_assert_int_eq(p->tensor_parallel_loc.col, 3);
	ck_assert_str_eq(p->stages_loc.file, r.path);
	done(&r);
}
END_TEST

START_TEST(load_accepts_plain_decimal_forms)
{
	loaded r;
	load_text(&r, "model:\n"
		      "  name: 1234\n"
		      "  layers: [{name: a, fwd_flops: 7.5e12, bwd_flops: +3, "
		      "params: 0.5, stash_bytes: 1., activation_bytes: .25, "
		      "repeat: 1e1}]\n" CLUSTER4
		      "pipeline: {stages: 2.0, microbatches: 1E2}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_layer *y = &r.cfg.model.layers[0];
	ck_assert_str_eq(r.cfg.model.name, "1234");
	ck_assert_int_eq(r.cfg.model.n_layers, 10);
	ck_assert_double_eq(y->fwd_flops, 7.5e12);
	ck_assert_double_eq(y->bwd_flops, 3);
	ck_assert_double_eq(y->params, 0.5);
	ck_assert_double_eq(y->stash_bytes, 1);
	ck_assert_double_eq(y->activation_bytes, 0.25);
	ck_assert_int_eq(r.cfg.pipeline.stages, 2);
	ck_assert_int_eq(r.cfg.pipeline.microbatches, 100);
	done(&r);
}
END_TEST

START_TEST(load_reads_decimals_alike_in_a_comma_locale)
{
	/* A program linking ppcc may set a locale whose decimal point is a
	 * comma; the file still means what it says. */
	const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
			       "fr_FR.utf8"};
	const char *set = NULL;
	for (size_t i = 0; i < 4 && !set; i++)
		set = setlocale(LC_ALL, names[i]);
	if (!set) {
		fprintf(stderr, "load: no comma-decimal locale installed; "
				"checking the C locale only\n");
	} else {
		ck_assert_str_eq(localeconv()->decimal_point, ",");
	}
	loaded r;
	load_text(&r, "model:\n  name: m\n  layers: [{name: a, fwd_ms: 0.5, "
		      "params: 2.5e3}]\n"
		      "cluster:\n  devices: 1\n"
		      "  device: {tflops: 100, efficiency: 0.25, memory_gib: 0.5}\n");
	setlocale(LC_ALL, "C");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_double_eq(r.cfg.model.layers[0].params, 2500);
	ck_assert_double_eq(r.cfg.cluster.groups[0].efficiency, 0.25);
	ck_assert_double_eq(r.cfg.cluster.groups[0].memory_bytes, 536870912.0);
	ck_assert_double_eq_tol(r.cfg.model.layers[0].fwd_flops, 1.25e10, 1);
	done(&r);
}
END_TEST

/* ---- the transformer shorthand ----------------------------------------- */

START_TEST(transformer_matches_gpt3_published_figures)
{
	loaded r;
	load_text(&r, "model:\n"
		      "  name: gpt3\n"
		      "  transformer:\n"
		      "    layers: 96\n"
		      "    hidden: 12288\n"
		      "    heads: 96\n"
		      "    vocab: 50257\n"
		      "    seq_len: 2048\n"
		      "    flash_attention: false\n" CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_model *m = &r.cfg.model;
	ck_assert_int_eq(m->n_layers, 98);
	ck_assert_str_eq(m->layers[0].name, "embed");
	ck_assert_str_eq(m->layers[1].name, "block");
	ck_assert_str_eq(m->layers[96].name, "block");
	ck_assert_str_eq(m->layers[97].name, "head");
	ck_assert_int_eq(m->layers[50].loc.line, 3);
	const ppcc_layer *blk = &m->layers[1];
	/* Narayanan et al.: 1,812,099,072 parameters per block; forward
	 * 24bsh^2(1 + s/6h) = 7.628e12 FLOPs per sequence. */
	ck_assert_double_eq(blk->params, 1812099072.0);
	double h = 12288, s = 2048;
	ck_assert_double_eq_tol(blk->fwd_flops,
				24 * s * h * h * (1 + s / (6 * h)), 1e-3);
	ck_assert_int_eq((int)lround(blk->fwd_flops / 1e9), 7628);
	ck_assert_double_eq(blk->bwd_flops, 2 * blk->fwd_flops);
	/* the zero-bubble paper's Table 1: W = 24sbh^2, I = sbh(24h + 8s),
	 * here 7,421,703,487,488 and 7,834,020,347,904 FLOPs */
	ck_assert_double_eq(blk->bwd_weight_flops, 7421703487488.0);
	ck_assert_double_eq(blk->bwd_weight_flops, 24 * s * h * h);
	ck_assert_double_eq(blk->bwd_flops - blk->bwd_weight_flops,
			    7834020347904.0);
	ck_assert_double_eq(blk->bwd_flops - blk->bwd_weight_flops,
			    s * h * (24 * h + 8 * s));
	ck_assert_double_eq(blk->activation_bytes, 2 * s * h);
	ck_assert_double_eq(blk->stash_bytes, s * h * (34 + 5 * 96 * s / h));
	/* what W holds from I on: the paper's M_W = 32sbh */
	ck_assert_double_eq(blk->stash_weight_bytes, 32 * s * h);
	ck_assert_double_eq(blk->bytes_per_param, 0);
	const ppcc_layer *embed = &m->layers[0], *head = &m->layers[97];
	ck_assert_double_eq(embed->fwd_flops, 0);
	ck_assert_double_eq(embed->params, 50257 * h + s * h);
	ck_assert_double_eq(embed->stash_bytes, s * h); /* dropout mask */
	ck_assert_double_eq(head->fwd_flops, 2 * s * h * 50257);
	ck_assert_double_eq(head->bwd_weight_flops, head->fwd_flops);
	ck_assert_double_eq(head->stash_weight_bytes, 2 * s * (h + 50257));
	ck_assert_double_eq(head->params, 50257 * h + 2 * h);
	ck_assert_double_eq(head->activation_bytes, 0);
	/* the norm's and the output layer's inputs, the logits in 16 bits
	 * and in fp32 */
	ck_assert_double_eq(head->stash_bytes, 4 * s * h + 6 * s * 50257);
	ck_assert_double_eq(head->logits_bytes, 6 * s * 50257);
	/* "175B": 96 blocks, the embedding, the positions and the final
	 * LayerNorm are 174.6e9 once the head's copy of the (tied) embedding
	 * is taken out. */
	double total = 0;
	for (int i = 0; i < m->n_layers; i++)
		total += m->layers[i].params;
	ck_assert_double_eq(total - 50257 * h, 174604259328.0);
	done(&r);
}
END_TEST

START_TEST(transformer_matches_llama2_70b_parameter_count)
{
	loaded r;
	load_text(&r, "model:\n"
		      "  name: llama2-70b\n"
		      "  transformer: {layers: 80, hidden: 8192, heads: 64, "
		      "kv_heads: 8, ffn_hidden: 28672, vocab: 32000, "
		      "seq_len: 4096, swiglu: true, micro_batch_size: 2}\n"
		      CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_model *m = &r.cfg.model;
	ck_assert_int_eq(m->n_layers, 82);
	double total = 0;
	for (int i = 0; i < m->n_layers; i++)
		total += m->layers[i].params;
	/* The released checkpoint's count. */
	ck_assert_double_eq(total, 68976648192.0);
	ck_assert_double_eq(m->layers[1].params, 855654400.0);
	ck_assert_double_eq(m->layers[0].params, 32000.0 * 8192);
	/* b = 2, s = 4096: 2bs(2h^2 + 2h^2/8) + 2*3*bs*h*f + 2bs^2h, the
	 * causal half of the scores and values under flash attention */
	double b = 2, s = 4096, h = 8192, f = 28672;
	double want = b * s * (2 * (2 * h * h + 2 * h * h / 8) + 6 * h * f +
			       2 * s * h);
	ck_assert_double_eq(m->layers[1].fwd_flops, want);
	ck_assert_double_eq(m->layers[1].activation_bytes, 2 * s * b * h);
	done(&r);
}
END_TEST

START_TEST(transformer_recompute_moves_cost_from_stash_to_backward)
{
	const char *modes[] = {"none", "selective", "full"};
	double b = 1, s = 1024, h = 1024, a = 16;
	double fwd = b * s * (2 * 4 * h * h + 2 * 2 * h * 4 * h + 4 * s * h);
	const double bwd[] = {2 * fwd, 2 * fwd + 4 * b * s * s * h, 3 * fwd};
	const double stash[] = {s * b * h * (34 + 5 * a * s / h),
				34 * s * b * h, 2 * s * b * h};
	for (int i = 0; i < 3; i++) {
		char yaml[512];
		snprintf(yaml, sizeof yaml,
			 "model:\n  name: t\n  transformer: {layers: 2, "
			 "hidden: 1024, heads: 16, vocab: 1000, seq_len: 1024, "
			 "recompute: %s, flash_attention: false}\n" CLUSTER4,
			 modes[i]);
		loaded r;
		load_text(&r, yaml);
		ck_assert_msg(r.status == 0, "%s", r.diag.text);
		const ppcc_layer *blk = &r.cfg.model.layers[1];
		ck_assert_double_eq(blk->fwd_flops, fwd);
		ck_assert_double_eq(blk->bwd_flops, bwd[i]);
		ck_assert_double_eq(blk->stash_bytes, stash[i]);
		done(&r);
	}
}
END_TEST

/* A transformer of 2 layers of hidden size 1000, its other keys given. */
#define TRANSFORMER_2x1000(rest) \
	"model:\n  name: t\n  transformer:\n    layers: 2\n    hidden: 1000\n" \
	rest CLUSTER4
#define HEADS_16_KV_5 "    heads: 16\n    kv_heads: 5\n    vocab: 10\n    seq_len: 8\n"

START_TEST(transformer_rejects_shapes_that_do_not_divide)
{
	static const struct {
		const char *yaml, *want;
	} cases[] = {
		{TRANSFORMER_2x1000(HEADS_16_KV_5 "    recompute: partial\n"),
		 "10:16: model.transformer.recompute: expected none, "
		 "selective, or full, got 'partial'\n"},
		{TRANSFORMER_2x1000(HEADS_16_KV_5 "    swiglu: yes\n"),
		 "10:13: model.transformer.swiglu: expected true or "
		 "false, got 'yes'\n"},
		{TRANSFORMER_2x1000(HEADS_16_KV_5 "    norm: batchnorm\n"),
		 "10:11: model.transformer.norm: expected rmsnorm or "
		 "layernorm, got 'batchnorm'\n"},
		{TRANSFORMER_2x1000(HEADS_16_KV_5 "    position: alibi\n"),
		 "10:15: model.transformer.position: expected rope or "
		 "learned, got 'alibi'\n"},
		{TRANSFORMER_2x1000(HEADS_16_KV_5 "    rope_theta: 0\n"),
		 "10:17: model.transformer.rope_theta: expected a positive "
		 "finite number, got '0'\n"},
		{TRANSFORMER_2x1000(HEADS_16_KV_5 "    tie_embeddings: 1\n"),
		 "10:21: model.transformer.tie_embeddings: expected true or "
		 "false, got '1'\n"},
		/* a typo of heads is reported once, and nothing divides by
		 * the heads it did not give */
		{TRANSFORMER_2x1000("    heasd: 16\n    vocab: 10\n    seq_len: 8\n"),
		 "6:5: unknown key 'heasd' in model.transformer; did you "
		 "mean 'heads'?\n"},
		{TRANSFORMER_2x1000(HEADS_16_KV_5),
		 "6:5: model.transformer.heads: 16 heads do not divide the "
		 "hidden size 1000; give head_dim when a head is not "
		 "hidden / heads wide\n"
		 "7:5: model.transformer.kv_heads: 5 kv heads do not "
		 "divide the 16 heads\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		expect_errors(cases[i].yaml, cases[i].want);
}
END_TEST

/* norm and position default to swiglu's and change the counts by
 * their own parameters: a LayerNorm's h biases (two a block, one at
 * the head), the s x h learned positions; tying changes none. */
START_TEST(transformer_norm_and_position_follow_their_keys)
{
	ppcc_transformer t = {.layers = 2, .hidden = 64, .heads = 4,
			      .vocab = 100, .seq_len = 32,
			      .micro_batch_size = 1, .swiglu = 1,
			      .norm = PPCC_NORM_RMSNORM,
			      .position = PPCC_POSITION_ROPE};
	ppcc_arena *a = ppcc_arena_new();
	ppcc_layer *rms, *ln, *tied;
	int n;
	ck_assert_int_eq(ppcc_transformer_expand(&rms, &n, a, &t,
						 (ppcc_loc){0}), 0);
	t.norm = PPCC_NORM_LAYERNORM;
	t.position = PPCC_POSITION_LEARNED;
	ck_assert_int_eq(ppcc_transformer_expand(&ln, &n, a, &t,
						 (ppcc_loc){0}), 0);
	t.tie_embeddings = 1;
	ck_assert_int_eq(ppcc_transformer_expand(&tied, &n, a, &t,
						 (ppcc_loc){0}), 0);
	ck_assert(ln[1].params - rms[1].params == 2.0 * 64);
	ck_assert(ln[3].params - rms[3].params == 64.0);
	ck_assert(ln[0].params - rms[0].params == 32.0 * 64);
	for (int i = 0; i < n; i++)
		ck_assert(tied[i].params == ln[i].params);
	ppcc_arena_free(a);
}
END_TEST

/* ---- diagnostics --------------------------------------------------------- */

START_TEST(loader_rejects_duplicate_key_citing_first_line)
{
	expect_errors(MODEL1 CLUSTER4
		      "pipeline:\n"
		      "  stages: 2\n"
		      "  microbatches: 4\n"
		      "  stages: 3\n",
		      "10:3: duplicate key 'stages' (first at line 8)\n");
	/* at any depth, and each repeat cites the first */
	expect_errors("model:\n"
		      "  name: m\n"
		      "  layers: [{name: a, name: b, fwd_flops: 1, name: c}]\n"
		      CLUSTER4,
		      "3:22: duplicate key 'name' (first at line 3)\n"
		      "3:45: duplicate key 'name' (first at line 3)\n");
}
END_TEST

START_TEST(loader_suggests_near_key_for_unknown_key)
{
	expect_errors(MODEL1 CLUSTER4
		      "pipeline:\n"
		      "  microbatch: 4\n"
		      "  Stages: 2\n"
		      "  sheduel: gpipe\n",
		      "8:3: unknown key 'microbatch' in pipeline; did you mean "
		      "'microbatches'?\n"
		      "9:3: unknown key 'Stages' in pipeline; did you mean "
		      "'stages'?\n"
		      "10:3: unknown key 'sheduel' in pipeline; did you mean "
		      "'schedule'?\n");
	expect_errors("modle:\n  name: m\n" CLUSTER4,
		      "1:1: unknown key 'modle'; did you mean 'model'?\n");
	/* nor is a key missing when its typo was reported */
	expect_errors("model:\n  name: m\n  layers:\n    - {name: a, fwd_flop: 1}\n"
		      CLUSTER4,
		      "4:17: unknown key 'fwd_flop' in model.layers[0]; did you "
		      "mean 'fwd_flops'?\n");
}
END_TEST

START_TEST(loader_lists_keys_when_none_is_near)
{
	expect_errors(MODEL1 CLUSTER4 "pipeline: {optimizer: adam}\n",
		      "7:12: unknown key 'optimizer' in pipeline; expected "
		      "stages, microbatches, schedule, chunks, group_size, "
		      "tensor_parallel, data_parallel, context_parallel, "
		      "global_batch_size, zero, data_parallel_shard, "
		      "adam_moments, grad_bytes, dp_bucket_mb, "
		      "partition, trainer, expert_parallel, "
		      "expert_tensor_parallel, or overlap\n");
	/* a key is shown with its control characters escaped, cut short */
	expect_errors(MODEL1 CLUSTER4
		      "pipeline: {\"a\\e[1m\\u009b\\tz\": 1, "
		      "0123456789012345678901234567890123456789xyz: 2}\n",
		      "7:12: unknown key 'a\\x1b[1m\\u009b\\x09z' in pipeline; "
		      "expected stages, microbatches, schedule, chunks, "
		      "group_size, tensor_parallel, data_parallel, "
		      "context_parallel, global_batch_size, zero, "
		      "data_parallel_shard, adam_moments, grad_bytes, dp_bucket_mb, partition, trainer, "
		      "expert_parallel, expert_tensor_parallel, or overlap\n"
		      "7:34: unknown key "
		      "'0123456789012345678901234567890123456789...' in "
		      "pipeline; expected stages, microbatches, schedule, "
		      "chunks, group_size, tensor_parallel, data_parallel, "
		      "context_parallel, global_batch_size, zero, "
		      "data_parallel_shard, adam_moments, grad_bytes, dp_bucket_mb, partition, trainer, "
		      "expert_parallel, expert_tensor_parallel, or overlap\n");
}
END_TEST

START_TEST(loader_rejects_bad_numbers_naming_path_and_position)
{
	static const struct {
		const char *value, *want;
	} cases[] = {
		{".nan", "expected a positive finite number, got '.nan'"},
		{".inf", "expected a positive finite number, got '.inf'"},
		{"-.inf", "expected a positive finite number, got '-.inf'"},
		{"1e400", "expected a positive finite number, got '1e400'"},
		{"1e-400", "expected a positive finite number, got '1e-400'"},
		{"-1", "expected a positive finite number, got '-1'"},
		{"0", "expected a positive finite number, got '0'"},
		{"yes", "expected a positive finite number, got 'yes'"},
		{"on", "expected a positive finite number, got 'on'"},
		{"0x10", "expected a positive finite number, got '0x10'"},
		{"010", "expected a positive finite number, got '010'"},
		{"1_000", "expected a positive finite number, got '1_000'"},
		{"'12'", "expected a positive finite number, got a quoted "
			 "string '12'"},
		{"", "expected a positive finite number, got an empty value"},
		{"[1]", "expected a positive finite number, got a list"},
		{"{a: 1}", "expected a positive finite number, got a mapping"},
		{"1e", "expected a positive finite number, got '1e'"},
		{"e5", "expected a positive finite number, got 'e5'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char yaml[512], want[512];
		snprintf(yaml, sizeof yaml,
			 "model:\n  name: m\n  layers:\n"
			 "    - name: a\n      fwd_flops: %s\n" CLUSTER4,
			 cases[i].value);
		snprintf(want, sizeof want,
			 "5:%d: model.layers[0].fwd_flops: %s\n",
			 cases[i].value[0] ? 18 : 17, cases[i].want);
		expect_errors(yaml, want);
	}
}
END_TEST

START_TEST(loader_rejects_integers_that_are_not_integral_or_in_range)
{
	static const struct {
		const char *value, *want;
	} cases[] = {
		{"1.5", "expected an integer from 1 to 1048576, got '1.5'"},
		{"1e12", "expected an integer from 1 to 1048576, got '1e12'"},
		{"99999999999",
		 "expected an integer from 1 to 1048576, got '99999999999'"},
		{"0", "expected an integer from 1 to 1048576, got '0'"},
		{"-2", "expected an integer from 1 to 1048576, got '-2'"},
		{"two", "expected an integer from 1 to 1048576, got 'two'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char yaml[512], want[512];
		snprintf(yaml, sizeof yaml, MODEL1 CLUSTER4
			 "pipeline:\n  stages: %s\n", cases[i].value);
		snprintf(want, sizeof want, "8:11: pipeline.stages: %s\n",
			 cases[i].want);
		expect_errors(yaml, want);
	}
	/* a transformer's dimensions run to INT_MAX */
	expect_errors("model:\n  name: t\n  transformer: {layers: 2, "
		      "hidden: 99999999999, heads: 1.5, vocab: 1, seq_len: 1}\n"
		      CLUSTER4,
		      "3:36: model.transformer.hidden: expected an integer from "
		      "1 to 2147483647, got '99999999999'\n"
		      "3:56: model.transformer.heads: expected a positive "
		      "integer, got '1.5'\n");
}
END_TEST

START_TEST(loader_checks_ranges_of_fractions_and_counts)
{
	expect_errors("model:\n"
		      "  name: m\n"
		      "  layers: [{name: a, fwd_flops: 1, bwd_ms: -1, params: -3,"
		      " bytes_per_param: 0}]\n"
		      "cluster:\n"
		      "  devices: 4\n"
		      "  devices_per_node: 0\n"
		      "  device: {tflops: 1, memory_gib: 1, efficiency: 1.01}\n"
		      "  links: {intra_node: {bandwidth_gb_s: 0, latency_us: -1}}\n",
		      "3:44: model.layers[0].bwd_ms: expected a finite number "
		      ">= 0, got '-1'\n"
		      "3:56: model.layers[0].params: expected a finite number "
		      ">= 0, got '-3'\n"
		      "3:77: model.layers[0].bytes_per_param: expected a "
		      "positive finite number, got '0'\n"
		      "6:21: cluster.devices_per_node: expected an integer from "
		      "1 to 1048576, got '0'\n"
		      "7:50: cluster.device.efficiency: expected a number in "
		      "(0, 1], got '1.01'\n"
		      "8:40: cluster.links.intra_node.bandwidth_gb_s: expected a "
		      "positive finite number, got '0'\n"
		      "8:55: cluster.links.intra_node.latency_us: expected a "
		      "finite number >= 0, got '-1'\n");
}
END_TEST

START_TEST(loader_reports_missing_required_keys)
{
	expect_errors("model:\n"
		      "  layers:\n"
		      "    - {fwd_flops: 1}\n"
		      "    - {name: b}\n"
		      "cluster:\n"
		      "  device: {name: g}\n",
		      "1:1: model: missing required key 'name'\n"
		      "3:7: model.layers[0]: missing required key 'name'\n"
		      "4:7: model.layers[1]: give either fwd_flops or fwd_ms\n"
		      "5:1: cluster: missing required key 'devices'\n"
		      "6:3: cluster.device: missing required key 'tflops'\n"
		      "6:3: cluster.device: missing required key 'efficiency'\n"
		      "6:3: cluster.device: missing required key 'memory_gib'\n"
		      "6:3: note: cluster.device: a preset gives the peak, the "
		      "efficiency and the memory: preset: NAME, one of "
		      "a100-40gb, a100, h100, h100-pcie, h800, h200, b200, "
		      "gb200, mi300x, or l40s (`ppcc devices` lists them)\n");
	expect_errors("pipeline: {stages: 2}\n",
		      "0:0: missing required key 'model'\n"
		      "0:0: missing required key 'cluster'\n");
	expect_errors(MODEL1 "cluster: {devices_per_node: 4}\n",
		      "4:1: cluster: give either device or groups\n");
	expect_errors("model: {name: m}\n" CLUSTER4,
		      "1:1: model: give either layers or transformer\n");
}
END_TEST

START_TEST(loader_rejects_wrong_types)
{
	expect_errors("model: [a, b]\n"
		      "cluster: 4\n"
		      "pipeline:\n",
		      "1:8: model: expected a mapping, got a list\n"
		      "2:10: cluster: expected a mapping, got '4'\n"
		      "3:10: pipeline: expected a mapping, got an empty value\n");
	expect_errors("- model\n",
		      "1:1: expected a mapping at the top level, got a list\n");
	expect_errors("model:\n  name: m\n  layers: {name: a}\n" CLUSTER4,
		      "3:11: model.layers: expected a list of layers, got a "
		      "mapping\n");
	expect_errors("model:\n  name: [m]\n  layers: []\n" CLUSTER4,
		      "2:9: model.name: expected a name, got a list\n"
		      "3:11: model.layers: expected a list of layers, got an "
		      "empty list\n");
	expect_errors("model:\n  name: m\n  layers: [5]\n" CLUSTER4,
		      "3:12: model.layers[0]: expected a mapping, got '5'\n");
	expect_errors(MODEL1 CLUSTER4 "pipeline: {? [a]: 1}\n",
		      "7:14: pipeline: expected a key name, got a list\n");
}
END_TEST

START_TEST(loader_rejects_device_and_groups_together)
{
	expect_errors(MODEL1
		      "cluster:\n"
		      "  devices: 4\n"
		      "  device: {tflops: 1, efficiency: 1, memory_gib: 1}\n"
		      "  groups: [{name: a, count: 4, tflops: 1, efficiency: 1, memory_gib: 0}]\n",
		      "7:3: cluster: give either device or groups, not both\n"
		      "7:70: cluster.groups[0].memory_gib: expected a positive "
		      "finite number, got '0'\n");
	expect_errors(MODEL1
		      "cluster:\n"
		      "  devices: 5\n"
		      "  groups:\n"
		      "    - {name: a, count: 2, tflops: 1, efficiency: 1, memory_gib: 1}\n"
		      "    - {name: b, count: 2, tflops: 1, efficiency: 1, memory_gib: 1}\n",
		      "5:12: cluster.devices: 5, but the groups hold 4 devices\n");
}
END_TEST

START_TEST(loader_rejects_fwd_flops_and_fwd_ms_together)
{
	expect_errors("model:\n"
		      "  name: m\n"
		      "  layers:\n"
		      "    - name: a\n"
		      "      fwd_flops: 1e9\n"
		      "      bwd_ms: 1\n"
		      "      fwd_ms: 2\n"
		      "      bwd_flops: 1\n" CLUSTER4,
		      "7:7: model.layers[0]: give either fwd_flops or fwd_ms, "
		      "not both\n"
		      "8:7: model.layers[0]: give either bwd_flops or bwd_ms, "
		      "not both\n");
	expect_errors("model:\n"
		      "  name: m\n"
		      "  transformer: {layers: 1, hidden: 8, heads: 1, vocab: 1, "
		      "seq_len: 1}\n"
		      "  layers: [{name: a, fwd_flops: 1}]\n" CLUSTER4,
		      "4:3: model: give either layers or transformer, not "
		      "both\n");
}
END_TEST

/* The backward in its two parts: I + W is the backward, W is kept, in
 * FLOPs or in milliseconds on measured_on (1 TFLOP/s at efficiency 1: a
 * millisecond is 1e9 FLOPs); without them W is half the backward. */
START_TEST(loader_reads_the_backward_in_two_parts)
{
	loaded r;
	load_text(&r, "model:\n"
		      "  name: m\n"
		      "  layers:\n"
		      "    - {name: a, fwd_flops: 1e9, bwd_input_flops: 3e9, "
		      "bwd_weight_ms: 0.5}\n"
		      "    - {name: b, fwd_ms: 1, bwd_input_ms: 0, "
		      "bwd_weight_flops: 7}\n"
		      "    - {name: c, fwd_flops: 1e9, bwd_flops: 6e9}\n"
		      "    - {name: d, fwd_flops: 1e9}\n"
		      "cluster:\n"
		      "  devices: 4\n"
		      "  device: {name: x, tflops: 1, efficiency: 1, "
		      "memory_gib: 1}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_layer *L = r.cfg.model.layers;
	ck_assert_double_eq(L[0].bwd_flops, 3.5e9);
	ck_assert_double_eq(L[0].bwd_weight_flops, 0.5e9);
	ck_assert_double_eq(L[1].bwd_flops, 7);
	ck_assert_double_eq(L[1].bwd_weight_flops, 7);
	ck_assert_double_eq(L[2].bwd_weight_flops, 3e9);
	ck_assert_double_eq(L[3].bwd_flops, 2e9);
	ck_assert_double_eq(L[3].bwd_weight_flops, 1e9);
	done(&r);
	expect_errors("model:\n"
		      "  name: m\n"
		      "  layers:\n"
		      "    - name: a\n"
		      "      fwd_flops: 1\n"
		      "      bwd_weight_flops: 1\n"
		      "    - name: c\n"
		      "      fwd_flops: 1\n"
		      "      bwd_input_ms: 1\n"
		      "    - name: b\n"
		      "      fwd_flops: 1\n"
		      "      bwd_flops: 2\n"
		      "      bwd_input_ms: 1\n"
		      "      bwd_weight_ms: 1\n" CLUSTER4,
		      "6:7: model.layers[0]: bwd_weight_flops needs "
		      "bwd_input_flops or bwd_input_ms beside it (the two parts "
		      "of the backward)\n"
		      "9:7: model.layers[1]: bwd_input_ms needs "
		      "bwd_weight_flops or bwd_weight_ms beside it (the two parts "
		      "of the backward)\n"
		      "12:7: model.layers[2]: give bwd_flops or the two parts "
		      "bwd_input_* and bwd_weight_*, not both\n");
}
END_TEST

START_TEST(loader_reports_every_error_in_file_order)
{
	/* The model is read first, the cluster after; the report is still in
	 * line order. */
	expect_errors("cluster:\n"
		      "  devices: 0\n"
		      "  device: {tflops: 1, efficiency: 1, memory_gib: 1}\n"
		      "model:\n"
		      "  name: m\n"
		      "  layers: [{name: a, fwd_flops: 0}]\n"
		      "pipeline: {stages: 0, chunks: x}\n",
		      "2:12: cluster.devices: expected an integer from 1 to "
		      "1048576, got '0'\n"
		      "6:33: model.layers[0].fwd_flops: expected a positive "
		      "finite number, got '0'\n"
		      "7:20: pipeline.stages: expected an integer from 1 to "
		      "1048576, got '0'\n"
		      "7:31: pipeline.chunks: expected an integer from 1 to "
		      "1048576, got 'x'\n");
}
END_TEST

START_TEST(loader_lists_at_most_100_errors_and_counts_the_rest)
{
	size_t cap = 1 << 16, o = 0;
	char *yaml = malloc(cap);
	ck_assert_ptr_nonnull(yaml);
	o += (size_t)snprintf(yaml + o, cap - o, "model:\n  name: m\n  layers:\n");
	for (int i = 0; i < 150; i++)
		o += (size_t)snprintf(yaml + o, cap - o,
				      "    - {name: a, fwd_flops: -1}\n");
	snprintf(yaml + o, cap - o, CLUSTER4);
	loaded r;
	load_text(&r, yaml);
	free(yaml);
	ck_assert_int_eq(r.status, PPCC_EINPUT);
	int lines = 0;
	for (const char *c = r.diag.text; *c; c++)
		lines += *c == '\n';
	ck_assert_int_eq(lines, 101);
	ck_assert_ptr_nonnull(strstr(r.diag.text,
				     "4:28: model.layers[0].fwd_flops: expected"));
	ck_assert_ptr_nonnull(strstr(r.diag.text,
				     "103:28: model.layers[99].fwd_flops"));
	ck_assert_ptr_null(strstr(r.diag.text, "model.layers[100]"));
	ck_assert_ptr_nonnull(strstr(r.diag.text,
				     "0:0: note: 50 more errors not listed\n"));
	ck_assert_int_eq(r.diag.d.errors, 100);
	done(&r);
}
END_TEST

START_TEST(loader_suggests_schedule_names)
{
	expect_errors(MODEL1 CLUSTER4 "pipeline: {schedule: zb-h1-2}\n",
		      "7:22: pipeline.schedule: expected gpipe, 1f1b, "
		      "interleaved, zb-h1, zb-h2, zb-v, zb-interleaved, auto, "
		      "dualpipe-v, dualpipe, or combined-1f1b, got "
		      "'zb-h1-2'; did you mean 'zb-h1'?\n");
	loaded r;
	load_text(&r, MODEL1 CLUSTER4 "pipeline: {schedule: \"gpipe\"}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_int_eq(r.cfg.pipeline.kind, PPCC_SCHED_GPIPE);
	ck_assert_int_eq(r.cfg.pipeline.kind_loc.line, 7);
	done(&r);
	expect_errors(MODEL1 CLUSTER4 "pipeline: {schedule: GPipe}\n",
		      "7:22: pipeline.schedule: expected gpipe, 1f1b, "
		      "interleaved, zb-h1, zb-h2, zb-v, zb-interleaved, auto, "
		      "dualpipe-v, dualpipe, or combined-1f1b, got "
		      "'GPipe'; did you mean 'gpipe'?\n");
	load_text(&r, MODEL1 CLUSTER4 "pipeline: {schedule: zb-v, stages: 2}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_int_eq(r.cfg.pipeline.kind, PPCC_SCHED_ZB_V);
	ck_assert_int_eq(r.cfg.pipeline.chunks, 2); /* its default */
	done(&r);
}
END_TEST

/* ---- hardening ------------------------------------------------------------ */

START_TEST(loader_stops_deep_nesting_fast)
{
	size_t n = 100000;
	char *deep = malloc(n + 2);
	ck_assert_ptr_nonnull(deep);
	memset(deep, '[', n);
	deep[n] = '\n';
	deep[n + 1] = '\0';
	loaded r;
	load_bytes(&r, deep, n + 1, NULL);
	free(deep);
	/* stopped at the 65th of the 100,000 brackets, its column: libyaml
	 * alone, asked for every event, takes tens of seconds on this
	 * input, but a parser stopped there has looked ahead at most the
	 * 1024 characters of a simple key */
	ck_assert_int_eq(r.status, PPCC_EINPUT);
	ck_assert_str_eq(r.diag.text, "1:65: nesting deeper than 64 levels\n");
	done(&r);

	/* block nesting too */
	char block[8192];
	size_t o = 0;
	for (int i = 0; i < 70; i++)
		o += (size_t)snprintf(block + o, sizeof block - o, "- ");
	snprintf(block + o, sizeof block - o, "x\n");
	expect_errors(block, "1:129: nesting deeper than 64 levels\n");
}
END_TEST

START_TEST(loader_rejects_billion_laughs_at_first_anchor)
{
	char yaml[4096];
	size_t o = 0;
	o += (size_t)snprintf(yaml + o, sizeof yaml - o,
			      "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
	for (char c = 'b'; c <= 'j'; c++)
		o += (size_t)snprintf(yaml + o, sizeof yaml - o,
				      "%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n",
				      c, c, c - 1, c - 1, c - 1, c - 1, c - 1,
				      c - 1, c - 1);
	expect_errors(yaml, "1:4: yaml anchors are not supported ('&a')\n");
	expect_errors("model: *undefined\n",
		      "1:8: yaml aliases are not supported ('*undefined')\n");
}
END_TEST

START_TEST(loader_rejects_nul_byte_and_bad_encodings)
{
	static const struct {
		const char *bytes;
		size_t len;
		const char *want;
	} cases[] = {
		{"model:\n  name: a\0b\n", 19,
		 "2:10: nul byte; the file must be utf-8 text\n"},
		{"model:\n  name: \xc3\x28\n", 18,
		 "2:9: invalid utf-8 byte 0xc3; the file must be utf-8 text\n"},
		{"model: {name: \xe2\x82}\n", 18,
		 "1:15: invalid utf-8 byte 0xe2; the file must be utf-8 text\n"},
		{"model: {name: \xc0\xaf}\n", 18, /* overlong '/' */
		 "1:15: invalid utf-8 byte 0xc0; the file must be utf-8 text\n"},
		{"model: {name: \xed\xa0\x80}\n", 19, /* a surrogate */
		 "1:15: invalid utf-8 byte 0xed; the file must be utf-8 text\n"},
		{"model:\n  name: \"x\x01\"\n", 18,
		 "2:11: control character U+0001 is not allowed in yaml\n"},
		{"\xff\xfem\0o\0d\0", 8,
		 "1:1: the file is utf-16 (it starts with a utf-16 byte order "
		 "mark); ppcc reads utf-8\n"},
		{"m\xc3\xa9: 1\n\x7f", 8,
		 "2:1: control character U+007F is not allowed in yaml\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		loaded r;
		load_bytes(&r, cases[i].bytes, cases[i].len, NULL);
		ck_assert_int_eq(r.status, PPCC_EINPUT);
		ck_assert_str_eq(r.diag.text, cases[i].want);
		done(&r);
	}
}
END_TEST

START_TEST(loader_rejects_tab_indentation)
{
	expect_errors("model:\n\tname: m\n",
		      "2:1: tab character where yaml allows only spaces; indent "
		      "with spaces\n");
	expect_errors("model:\n  name: m\n  layers:\n  -\t{name: a}\n",
		      "4:4: tab character where yaml allows only spaces; indent "
		      "with spaces\n");
}
END_TEST

START_TEST(loader_counts_lines_alike_with_crlf_bom_and_lf)
{
	const char *lf = "model:\n  name: m\n  layerz: 1\n" CLUSTER4;
	const char *want = "3:3: unknown key 'layerz' in model; did you mean "
			   "'layers'?\n";
	char crlf[1024], bom[1024];
	size_t o = 0;
	for (const char *c = lf; *c; c++) {
		if (*c == '\n')
			crlf[o++] = '\r';
		crlf[o++] = *c;
	}
	crlf[o] = '\0';
	snprintf(bom, sizeof bom, "\xef\xbb\xbf%s", lf);
	const char *inputs[] = {lf, crlf, bom};
	for (int i = 0; i < 3; i++)
		expect_errors(inputs[i], want);
	/* a column on the BOM's own line counts from after it */
	expect_errors("\xef\xbb\xbfmodel: {name: m, x: 1}\n" CLUSTER4,
		      "1:1: model: give either layers or transformer\n"
		      "1:18: unknown key 'x' in model; expected name, layers, "
		      "transformer, measured_on, or measured_tensor_parallel\n");
}
END_TEST

START_TEST(loader_rejects_tags_documents_and_syntax_errors)
{
	expect_errors(MODEL1 CLUSTER4 "pipeline: {stages: !!int 2}\n",
		      "7:20: yaml tags are not supported ('!!int')\n");
	expect_errors(MODEL1 CLUSTER4 "---\npipeline: {}\n",
		      "7:1: a second yaml document; ppcc reads one document "
		      "per file\n");
	expect_errors("model:\n  name: m\n   bad: 1\n",
		      "3:7: mapping values are not allowed in this context\n");
	expect_errors("model: {name: m\n",
		      "2:1: did not find expected ',' or '}' while parsing a "
		      "flow mapping at line 1, column 8\n");
	expect_errors("", "0:0: empty file; expected a mapping with model, "
			  "cluster and pipeline\n");
	expect_errors("# nothing\n",
		      "0:0: empty file; expected a mapping with model, cluster "
		      "and pipeline\n");
}
END_TEST

START_TEST(loader_rejects_file_over_the_size_limit)
{
	size_t n = ((size_t)16 << 20) + 1;
	char *big = malloc(n);
	ck_assert_ptr_nonnull(big);
	memset(big, '#', n);
	loaded r;
	load_bytes(&r, big, n, NULL);
	free(big);
	ck_assert_int_eq(r.status, PPCC_EINPUT);
	ck_assert_str_eq(r.diag.text,
			 "0:0: file is larger than the limit of 16 MiB\n");
	done(&r);
}
END_TEST

START_TEST(loader_rejects_repeat_beyond_the_layer_limit)
{
	expect_errors("model:\n  name: m\n  layers:\n"
		      "    - {name: a, fwd_flops: 1, repeat: 4096}\n"
		      "    - {name: b, fwd_flops: 1}\n" CLUSTER4,
		      "3:3: model.layers: 4097 layers after repeat; the "
		      "limit is 4096\n");
}
END_TEST

START_TEST(loader_names_unreadable_files)
{
	loaded r;
	memset(&r, 0, sizeof r);
	r.a = ppcc_arena_new();
	r.diag.d.fn = collect;
	r.diag.d.user = &r.diag;
	r.status = ppcc_config_load(&r.cfg, r.a, temp_path("missing.yaml"),
				    NULL, &r.diag.d);
	ck_assert_int_eq(r.status, PPCC_EINPUT);
	ck_assert_ptr_nonnull(strstr(r.diag.text, "missing.yaml:0:0: cannot "
						  "open: no such file or "
						  "directory\n"));
	done(&r);
}
END_TEST

START_TEST(loader_reads_stdin_as_dash)
{
	const char *path = temp_path("stdin.yaml");
	write_bytes(path, "model: {name: m}\n" CLUSTER4,
		    strlen("model: {name: m}\n" CLUSTER4));
	int saved = dup(0);
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(dup2(fd, 0), 0);
	close(fd);
	loaded r;
	memset(&r, 0, sizeof r);
	r.a = ppcc_arena_new();
	r.diag.d.fn = collect;
	r.diag.d.user = &r.diag;
	r.status = ppcc_config_load(&r.cfg, r.a, "-", NULL, &r.diag.d);
	clearerr(stdin);
	dup2(saved, 0);
	close(saved);
	ck_assert_int_eq(r.status, PPCC_EINPUT);
	ck_assert_str_eq(r.diag.text, "<stdin>:1:1: model: give either layers "
				      "or transformer\n");
	done(&r);
}
END_TEST

START_TEST(loader_takes_cluster_from_cluster_file)
{
	loaded r;
	load_bytes(&r, MODEL1 "cluster: {devices: 1}\n",
		   strlen(MODEL1 "cluster: {devices: 1}\n"),
		   "pipeline: {stages: 2}\n" CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	char want[PATH_MAX + 128];
	snprintf(want, sizeof want,
		 "4:1: warning: cluster ignored: the cluster comes from %s\n"
		 "cluster.yaml:1:1: warning: pipeline ignored: only the "
		 "cluster is read from a cluster file\n",
		 temp_path("cluster.yaml"));
	ck_assert_str_eq(r.diag.text, want);
	ck_assert_int_eq(r.cfg.cluster.devices, 4);
	ck_assert_double_eq(r.cfg.cluster.groups[0].tflops, 100);
	ck_assert_int_eq(r.cfg.cluster.loc.line, 2);
	/* the model file's pipeline is the one read */
	ck_assert_ptr_null(r.cfg.pipeline.stages_loc.file);
	done(&r);
}
END_TEST

/* A number beyond a double is refused where it stands even when its value
 * is never read: under an unknown key (nested too), in the model file's
 * ignored cluster, in the cluster file's ignored sections. */
START_TEST(loader_refuses_overflowing_reals_it_does_not_read)
{
	loaded r;
	const char *model = MODEL1 "cluster: {devices: 1, memory_gib: 1e400}\n"
		"pipeline: {stages: 2, junk: {a: [1, -2e400]}}\n";
	load_bytes(&r, model, strlen(model),
		   "pipeline: {stages: 1e-400}\n" CLUSTER4);
	ck_assert_int_eq(r.status, PPCC_EINPUT);
	char want[PATH_MAX + 1024];
	snprintf(want, sizeof want,
		 "4:1: warning: cluster ignored: the cluster comes from %s\n"
		 "4:35: number '1e400' overflows or underflows a double; give 0 "
		 "or one from about 2.3e-308 to 1.7e308 in size\n"
		 "5:23: unknown key 'junk' in pipeline; expected stages, "
		 "microbatches, schedule, chunks, group_size, tensor_parallel, "
		 "data_parallel, context_parallel, global_batch_size, zero, "
		 "data_parallel_shard, adam_moments, grad_bytes, dp_bucket_mb, partition, trainer, "
		      "expert_parallel, expert_tensor_parallel, or overlap\n"
		 "5:37: number '-2e400' overflows or underflows a double; give 0 "
		 "or one from about 2.3e-308 to 1.7e308 in size\n"
		 "cluster.yaml:1:1: warning: pipeline ignored: only the "
		 "cluster is read from a cluster file\n"
		 "cluster.yaml:1:20: number '1e-400' overflows or underflows a "
		 "double; give 0 or one from about 2.3e-308 to 1.7e308 in size\n",
		 temp_path("cluster.yaml"));
	ck_assert_str_eq(r.diag.text, want);
	done(&r);
}
END_TEST

START_TEST(loader_reports_cluster_file_errors_under_its_name)
{
	loaded r;
	load_bytes(&r, MODEL1, strlen(MODEL1),
		   "cluster:\n  devices: 4\n  device: {tflops: -1, efficiency: 1, memory_gib: 1}\n"
		   "extra: 1\n");
	ck_assert_int_eq(r.status, PPCC_EINPUT);
	ck_assert_str_eq(r.diag.text,
			 "cluster.yaml:3:20: cluster.device.tflops: expected a "
			 "positive finite number, got '-1'\n"
			 "cluster.yaml:4:1: unknown key 'extra'; expected model, "
			 "cluster, or pipeline\n");
	done(&r);
	load_bytes(&r, MODEL1, strlen(MODEL1), "devices: 4\n");
	ck_assert_int_eq(r.status, PPCC_EINPUT);
	ck_assert_str_eq(r.diag.text,
			 "cluster.yaml:1:1: unknown key 'devices'; expected "
			 "model, cluster, or pipeline\n"
			 "cluster.yaml:0:0: missing required key 'cluster'\n");
	done(&r);
}
END_TEST

START_TEST(loader_fails_cleanly_at_every_allocation)
{
	const char *yaml = "model:\n  name: m\n  layers:\n"
			   "    - {name: a, fwd_ms: 1, repeat: 3}\n"
			   "    - {name: b, fwd_flops: 1, fwd_ms: 2}\n"
			   CLUSTER4 "pipeline: {stages: 2, stages: 3}\n";
	/* a model big enough to take many arena chunks */
	size_t cap = 1 << 20, o = 0;
	char *good = malloc(cap);
	ck_assert_ptr_nonnull(good);
	o += (size_t)snprintf(good + o, cap - o, "model:\n  name: m\n  layers:\n");
	for (int i = 0; i < 4000; i++)
		o += (size_t)snprintf(good + o, cap - o,
				      "    - {name: l%d, fwd_flops: %d, params: 1e6}\n",
				      i, i + 1);
	snprintf(good + o, cap - o, CLUSTER4 "pipeline: {stages: 2}\n");
	const char *inputs[] = {yaml, good};
	for (int k = 0; k < 2; k++) {
		const char *path = temp_path("alloc.yaml");
		write_bytes(path, inputs[k], strlen(inputs[k]));
		int done_ok = 0;
		long n;
		for (n = 1; n < 10000 && !done_ok; n++) {
			long live = ppcc_alloc_live();
			ppcc_alloc_fail_at(n);
			ppcc_arena *a = ppcc_arena_new();
			ppcc_config cfg;
			ppcc_diag d = {0};
			int rc = a ? ppcc_config_load(&cfg, a, path, NULL, &d)
				   : PPCC_ENOMEM;
			ppcc_alloc_fail_at(0);
			ppcc_arena_free(a);
			ck_assert_int_eq(ppcc_alloc_live(), live);
			ck_assert_msg(rc == PPCC_ENOMEM ||
				      rc == (k == 0 ? PPCC_EINPUT : 0),
				      "input %d, failing allocation %ld: %d",
				      k, n, rc);
			done_ok = rc != PPCC_ENOMEM;
		}
		ck_assert(done_ok);
		/* each allocation of the load was made to fail in turn */
		ck_assert_int_gt(n, k == 0 ? 3 : 20);
	}
	free(good);
}
END_TEST

/* ---- ppcc_config_check -------------------------------------------------- */

/* Loads yaml, which must load, and runs the check. */
static void expect_check(const char *yaml, int status, const char *want)
{
	loaded r;
	load_text(&r, yaml);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	int rc = ppcc_config_check(&r.cfg, &r.diag.d);
	ck_assert_msg(rc == status, "status %d: %s", rc, r.diag.text);
	ck_assert_str_eq(r.diag.text, want);
	done(&r);
}

#define MODEL12 \
	"model:\n" \
	"  name: m\n" \
	"  layers: [{name: a, fwd_flops: 1e9, repeat: 12}]\n"

#define CLUSTER16 \
	"cluster:\n" \
	"  devices: 16\n" \
	"  device: {name: g, tflops: 100, efficiency: 1, memory_gib: 16}\n"

START_TEST(check_accepts_a_consistent_configuration)
{
	expect_check(MODEL12 CLUSTER16
		     "pipeline: {schedule: interleaved, stages: 4, chunks: 3, "
		     "microbatches: 10, group_size: 6}\n", 0, "");
	expect_check(MODEL12 CLUSTER16, 0, "");
}
END_TEST

START_TEST(check_rejects_more_stages_than_layers_or_devices)
{
	expect_check(MODEL12 CLUSTER16
		     "pipeline: {schedule: interleaved, stages: 8, chunks: 2, "
		     "microbatches: 8}\n", PPCC_EINPUT,
		     "7:35: 8 stages x 2 chunks need 16 layers; the model has "
		     "12\n");
	expect_check(MODEL1 CLUSTER16 "pipeline: {stages: 9}\n", PPCC_EINPUT,
		     "7:12: 9 stages need 9 layers; the model has 8\n");
	expect_check(MODEL12 CLUSTER4 "pipeline: {stages: 6}\n", PPCC_EINPUT,
		     "7:12: 6 stages need 6 devices; the cluster has 4\n");
	expect_check(MODEL12 CLUSTER16
		     "pipeline: {stages: 3, tensor_parallel: 8}\n", PPCC_EINPUT,
		     "7:12: 3 stages x 8-way tensor parallelism need 24 "
		     "devices; the cluster has 16\n");
	expect_check(MODEL12 CLUSTER4 "pipeline: {tensor_parallel: 8}\n",
		     PPCC_EINPUT,
		     "7:12: 8-way tensor parallelism needs 8 devices; the "
		     "cluster has 4\n");
}
END_TEST

START_TEST(check_rejects_chunks_outside_the_interleaved_schedule)
{
	expect_check(MODEL12 CLUSTER4 "pipeline: {stages: 2, chunks: 2}\n",
		     PPCC_EINPUT,
		     "7:23: 2 chunks per rank need a schedule with chunks "
		     "(interleaved, zb-v, zb-interleaved, auto, dualpipe-v, "
		     "dualpipe, combined-1f1b); the schedule "
		     "is 1f1b\n");
	/* the zero-bubble kinds' own rules */
	expect_check(MODEL12 CLUSTER4
		     "pipeline: {schedule: zb-v, stages: 2, chunks: 3}\n",
		     PPCC_EINPUT,
		     "7:39: the zb-v schedule needs exactly 2 chunks per rank; "
		     "chunks is 3\n");
	expect_check(MODEL12 CLUSTER4
		     "pipeline: {schedule: zb-h2, stages: 2, chunks: 2}\n",
		     PPCC_EINPUT,
		     "7:40: 2 chunks per rank need a schedule with chunks "
		     "(interleaved, zb-v, zb-interleaved, auto, dualpipe-v, "
		     "dualpipe, combined-1f1b); the schedule "
		     "is zb-h2\n");
	/* dualpipe-v: m >= 2p, at the microbatches */
	expect_check(MODEL12 CLUSTER4
		     "pipeline: {schedule: dualpipe-v, stages: 2, "
		     "microbatches: 3}\n", PPCC_EINPUT,
		     "7:45: the dualpipe-v schedule needs at least 2 x 2 = 4 "
		     "microbatches for 2 ranks (its warm-up fills both stages "
		     "of every rank); microbatches is 3\n");
	expect_check(MODEL12 CLUSTER4
		     "pipeline: {schedule: zb-interleaved, stages: 4, "
		     "microbatches: 9}\n", PPCC_EINPUT,
		     "7:49: 9 microbatches do not split into 2 rounds of equal "
		     "size; the zb-interleaved schedule needs microbatches to be "
		     "a multiple of max(1, microbatches / stages) = 2\n");
	expect_check(MODEL12 CLUSTER4
		     "pipeline: {schedule: zb-interleaved, stages: 4, "
		     "microbatches: 10}\n", 0, "");
	expect_check(MODEL12 CLUSTER4
		     "pipeline: {schedule: interleaved, stages: 2, chunks: 1}\n",
		     PPCC_EINPUT,
		     "7:46: the interleaved schedule needs at least 2 chunks "
		     "per rank; chunks is 1\n");
}
END_TEST

START_TEST(check_rejects_each_broken_interleaved_constraint)
{
	/* G < p */
	expect_check(MODEL12 CLUSTER16
		     "pipeline: {schedule: interleaved, stages: 4, "
		     "microbatches: 8, group_size: 2}\n", PPCC_EINPUT,
		     "7:63: group_size 2 is smaller than the 4 stages; the "
		     "interleaved schedule needs a group_size from 4 to the "
		     "microbatches (8)\n");
	/* G > m, G given */
	expect_check(MODEL12 CLUSTER16
		     "pipeline: {schedule: interleaved, stages: 4, "
		     "microbatches: 6, group_size: 8}\n", PPCC_EINPUT,
		     "7:46: 6 microbatches cannot fill a group of 8; the "
		     "interleaved schedule needs microbatches >= group_size\n");
	/* G = p > m */
	expect_check(MODEL12 CLUSTER16
		     "pipeline: {schedule: interleaved, stages: 4, "
		     "microbatches: 3}\n", PPCC_EINPUT,
		     "7:46: 3 microbatches cannot fill 4 stages; the "
		     "interleaved schedule needs microbatches >= stages\n");
	/* a last group shorter than p */
	expect_check(MODEL12 CLUSTER16
		     "pipeline: {schedule: interleaved, stages: 4, "
		     "microbatches: 10}\n", PPCC_EINPUT,
		     "7:46: 10 microbatches in groups of 4 leave a last group "
		     "of 2, fewer than the 4 stages; use a multiple of 4 "
		     "microbatches, or a last group of at least 4\n");
	/* several at once, each reported */
	expect_check(MODEL12 CLUSTER4
		     "pipeline: {schedule: interleaved, stages: 8, chunks: 1, "
		     "microbatches: 3}\n", PPCC_EINPUT,
		     "7:35: 8 stages need 8 devices; the cluster has 4\n"
		     "7:46: the interleaved schedule needs at least 2 chunks "
		     "per rank; chunks is 1\n"
		     "7:57: 3 microbatches cannot fill 8 stages; the "
		     "interleaved schedule needs microbatches >= stages\n");
}
END_TEST

START_TEST(check_rejects_tensor_groups_straddling_device_groups)
{
	expect_check(MODEL12
		     "cluster:\n"
		     "  groups:\n"
		     "    - {name: a100, count: 6, tflops: 312, efficiency: 1, memory_gib: 80}\n"
		     "    - {name: h100, count: 10, tflops: 989, efficiency: 1, memory_gib: 80}\n"
		     "pipeline: {stages: 4, tensor_parallel: 4}\n", PPCC_EINPUT,
		     "6:7: rank 1's 4-way tensor-parallel group (devices 4 to "
		     "7) spans device groups 'a100' and 'h100'; give each group "
		     "a multiple of 4 devices\n");
	/* a boundary past the ranks in use is harmless */
	expect_check(MODEL12
		     "cluster:\n"
		     "  groups:\n"
		     "    - {name: a100, count: 8, tflops: 312, efficiency: 1, memory_gib: 80}\n"
		     "    - {name: h100, count: 3, tflops: 989, efficiency: 1, memory_gib: 80}\n"
		     "pipeline: {stages: 2, tensor_parallel: 4, "
		     "data_parallel: 1}\n", 0, "");
}
END_TEST

START_TEST(check_points_overrides_at_the_command_line)
{
	loaded r;
	load_text(&r, MODEL12 CLUSTER16);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ppcc_pipeline *p = &r.cfg.pipeline;
	/* 16 devices, 12 layers: the most stages that divide the devices */
	ck_assert_int_eq(p->stages, 8);
	ck_assert_int_eq(p->data_parallel, 2);
	p->tensor_parallel = 4;
	p->tensor_parallel_loc = (ppcc_loc){"<command line>", 0, 0};
	/* a default that depends on the override is recomputed */
	ppcc_config_fill_defaults(&r.cfg);
	ck_assert_int_eq(p->stages, 4);
	ck_assert_int_eq(p->microbatches, 16);
	ck_assert_int_eq(ppcc_config_check(&r.cfg, &r.diag.d), 0);
	p->stages = 5;
	p->stages_loc = (ppcc_loc){"<command line>", 0, 0};
	ck_assert_int_eq(ppcc_config_check(&r.cfg, &r.diag.d), PPCC_EINPUT);
	ck_assert_str_eq(r.diag.text,
			 "<command line>:0:0: 5 stages x 4-way tensor "
			 "parallelism need 20 devices; the cluster has 16\n");
	done(&r);
}
END_TEST

START_TEST(fill_defaults_gives_interleaved_two_chunks)
{
	loaded r;
	load_text(&r, MODEL12 CLUSTER16 "pipeline: {schedule: interleaved}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_pipeline *p = &r.cfg.pipeline;
	ck_assert_int_eq(p->chunks, 2);
	/* 16 devices, capped at 12 / 2 = 6, lowered to divide them */
	ck_assert_int_eq(p->stages, 4);
	ck_assert_int_eq(p->data_parallel, 4);
	ck_assert_int_eq(p->microbatches, 16);
	ck_assert_int_eq(ppcc_config_check(&r.cfg, &r.diag.d), 0);
	done(&r);
}
END_TEST

/* ---- the manual ---------------------------------------------------------- */

/* The nth .nf block of man/ppcc.5's EXAMPLES, as plain text. */
static char *man_example(int nth)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/man/ppcc.5", tu_src());
	char *page = tu_read_file(path, NULL);
	ck_assert_msg(page != NULL, "cannot read %s", path);
	char *at = strstr(page, "\n.SH EXAMPLES\n");
	ck_assert_ptr_nonnull(at);
	for (int i = 0; i <= nth; i++) {
		at = strstr(at + 1, "\n.nf\n");
		ck_assert_ptr_nonnull(at);
	}
	at += 5;
	char *end = strstr(at, "\n.fi\n");
	ck_assert_ptr_nonnull(end);
	char *out = malloc((size_t)(end - at) + 2);
	ck_assert_ptr_nonnull(out);
	size_t o = 0;
	for (char *c = at; c <= end; c++) {
		if (c[0] == '\\' && c[1] == '-')
			out[o++] = '-', c++;
		else if (c[0] == '\\' && c[1] == 'e')
			out[o++] = '\\', c++;
		else
			out[o++] = *c;
	}
	out[o] = '\0';
	free(page);
	return out;
}

START_TEST(man_page_example_files_load)
{
	char *file = man_example(0);
	loaded r;
	load_text(&r, file);
	ck_assert_msg(r.status == 0, "%s\n%s", file, r.diag.text);
	ck_assert_int_eq(r.cfg.model.n_layers, 10);
	ck_assert_int_eq(ppcc_config_check(&r.cfg, &r.diag.d), 0);
	done(&r);
	free(file);

	char *shape = man_example(1);
	char yaml[4096];
	snprintf(yaml, sizeof yaml, "%s" CLUSTER4, shape);
	load_text(&r, yaml);
	ck_assert_msg(r.status == 0, "%s\n%s", yaml, r.diag.text);
	ck_assert_int_eq(r.cfg.model.n_layers, 98);
	done(&r);

	/* the data-parallel pipeline, with that shape on 256 devices */
	char *dp = man_example(2);
	snprintf(yaml, sizeof yaml,
		 "%scluster:\n  devices: 256\n"
		 "  device: {name: x, tflops: 989, efficiency: 1, memory_gib: 80}\n%s",
		 shape, dp);
	load_text(&r, yaml);
	ck_assert_msg(r.status == 0, "%s\n%s", yaml, r.diag.text);
	ck_assert_int_eq(ppcc_config_check(&r.cfg, &r.diag.d), 0);
	ck_assert_int_eq(r.cfg.pipeline.data_parallel, 8);
	ck_assert_int_eq(r.cfg.pipeline.microbatches, 32);
	ck_assert_int_eq(r.cfg.pipeline.zero, 1);
	done(&r);
	free(dp);
	free(shape);
}
END_TEST

/* What ppcc does not model is refused by name, in the spellings users
 * paste (ppcc's, Megatron-LM's, Hugging Face's), never as an unknown key
 * or, worse, accepted. */
START_TEST(unmodelled_keys_are_refused_by_name)
{
	expect_errors("model:\n  name: m\n  transformer:\n"
		      "    layers: 2\n    hidden: 64\n    heads: 4\n"
		      "    vocab: 100\n    seq_len: 16\n"
		      "    mamba: true\n    linear_attention: true\n"
		      "    attention_chunk_size: 8192\n"
		      "    hybrid_override_pattern: M-M*\n"
		      CLUSTER4,
		      "9:5: ppcc does not model state-space (Mamba) layers "
		      "('mamba' in model.transformer): planned without "
		      "it, the figures would be another model's; leave the "
		      "key out when the model has none\n"
		      "10:5: ppcc does not model linear attention "
		      "('linear_attention' in model.transformer): planned "
		      "without it, the figures would be another model's; "
		      "leave the key out when the model has none\n"
		      "11:5: ppcc does not model chunked attention "
		      "('attention_chunk_size' in model.transformer): planned "
		      "without it, the figures would be another model's; "
		      "leave the key out when the model has none\n"
		      "12:5: ppcc does not model hybrid state-space (Mamba) "
		      "layers ('hybrid_override_pattern' in "
		      "model.transformer): planned without it, the figures "
		      "would be another model's; leave the key out when the "
		      "model has none\n");
	/* what it models now is read, and Hugging Face's spelling of it
	 * gets the key to write */
	expect_errors("model:\n  name: m\n  transformer:\n"
		      "    layers: 2\n    hidden: 64\n    heads: 4\n"
		      "    vocab: 100\n    seq_len: 16\n    swiglu: true\n"
		      "    q_lora_rank: 16\n    num_nextn_predict_layers: 1\n"
		      "    sliding_window: 8\n    attention: {kind: gqa, "
		      "v_head_dim: 8}\n" CLUSTER4,
		      "10:5: unknown key 'q_lora_rank' in model.transformer: "
		      "that is Megatron-LM's and Hugging Face's name; did you "
		      "mean 'transformer.attention.q_lora_rank'?\n"
		      "11:5: unknown key 'num_nextn_predict_layers' in "
		      "model.transformer: that is Hugging Face's name; did "
		      "you mean 'transformer.mtp_layers'?\n"
		      "13:28: model.transformer.attention.v_head_dim: a rank "
		      "or width of multi-head latent attention; set kind: "
		      "mla\n");
	/* a typo of a modelled key still gets its suggestion */
	expect_errors(MODEL1 CLUSTER4 "pipeline: {stagse: 2}\n",
		      "7:12: unknown key 'stagse' in pipeline; did you mean "
		      "'stages'?\n");
}
END_TEST

/* Megatron-LM's and Hugging Face's names of ppcc's keys get the key to
 * write, and the key they stand for is not reported missing as well. */
START_TEST(foreign_key_names_get_the_key_to_write)
{
	expect_errors("model:\n  name: m\n  transformer:\n"
		      "    num_layers: 2\n    hidden: 64\n    heads: 4\n"
		      "    vocab: 100\n    seq_len: 16\n    swiglu: true\n"
		      "    num_experts: 8\n    num_experts_per_tok: 2\n"
		      CLUSTER4,
		      "4:5: unknown key 'num_layers' in model.transformer: "
		      "that is Megatron-LM's name; did you mean "
		      "'transformer.layers'?\n"
		      "10:5: unknown key 'num_experts' in model.transformer: "
		      "that is Megatron-LM's and Hugging Face's name; did you "
		      "mean 'transformer.moe.experts'?\n"
		      "11:5: unknown key 'num_experts_per_tok' in "
		      "model.transformer: that is Hugging Face's name; did "
		      "you mean 'transformer.moe.top_k'?\n");
}
END_TEST

#define MOE_SHAPE \
	"model:\n  name: m\n  transformer:\n" \
	"    layers: 4\n    hidden: 512\n    heads: 8\n" \
	"    vocab: 1000\n    seq_len: 128\n    swiglu: true\n" \
	"    ffn_hidden: 1024\n"

/* One mixture-of-experts layer by hand: h = 512, a = 8 heads, s = 128,
 * b = 1, E = 8 experts of width 256, top 2, one shared expert, SwiGLU
 * (3 matrices), a dense first layer and an MoE layer every second. */
START_TEST(moe_layer_flops_params_and_all_to_all_by_hand)
{
	loaded r;
	load_text(&r, MOE_SHAPE
		      "    moe: {experts: 8, top_k: 2, ffn_hidden: 256, "
		      "shared_experts: 1, dense_layers: 1, every: 2}\n"
		      CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_model *m = &r.cfg.model;
	ck_assert_int_eq(m->n_layers, 6);
	ck_assert_str_eq(m->layers[1].name, "block");
	ck_assert_str_eq(m->layers[2].name, "moe_block");
	ck_assert_str_eq(m->layers[3].name, "block");
	ck_assert_str_eq(m->layers[4].name, "moe_block");
	const ppcc_layer *l = &m->layers[2];
	double h = 512, s = 128;
	/* attention 4h^2; routed 8 x 3 x h x 256; shared 3 x h x 256;
	 * router h x 8; two RMSNorms */
	double experts = 8.0 * 3 * 512 * 256;
	ck_assert_double_eq(l->expert_params, experts);
	ck_assert_double_eq(l->params, 4.0 * 512 * 512 + experts +
				       3.0 * 512 * 256 + 512.0 * 8 + 2 * 512);
	/* per token: 2 x attention projections, 2 x 3 x h x (2 x 256 +
	 * 256) for the two routed copies and the shared expert, 2 x h x 8
	 * for the router; and the causal half of the scores, 2 s^2 h */
	double fwd = s * (2.0 * 4 * h * h + 2.0 * 3 * h * 768 +
			  2.0 * h * 8) + 2.0 * s * s * h;
	ck_assert_double_eq(l->fwd_flops, fwd);
	ck_assert_double_eq(l->expert_fwd_flops, s * 2.0 * 3 * h * 512);
	ck_assert_double_eq(l->bwd_weight_flops, fwd - 2.0 * s * s * h);
	/* two 16-bit copies of each token dispatched */
	ck_assert_double_eq(l->a2a_bytes, 2.0 * 2 * s * h);
	ck_assert_double_eq(m->layers[1].a2a_bytes, 0);
	/* the dense layers keep their FFN of 1024 */
	ck_assert_double_eq(m->layers[1].params,
			    4.0 * 512 * 512 + 3.0 * 512 * 1024 + 2 * 512);
	/* 4 blocks, two of each, and the untied embedding and head */
	const ppcc_transformer *tf = m->transformer;
	double all = 2.0 * 1000 * 512 + 512 + 2 * m->layers[1].params +
		     2 * l->params;
	ck_assert_double_eq(ppcc_transformer_params(tf), all);
	ck_assert_double_eq(ppcc_transformer_active_params(tf),
			    all - 2 * 6.0 * 3 * 512 * 256);
	ck_assert_double_eq(tf->moe.imbalance, PPCC_MOE_IMBALANCE);
	done(&r);
}
END_TEST

/* A head dimension other than hidden / heads widens Q, K, V and the
 * output projection (Qwen3: 32 heads of 128 on a hidden size of 2048). */
START_TEST(head_dim_sets_the_attention_width)
{
	loaded r;
	load_text(&r, "model:\n  name: m\n  transformer: {layers: 2, "
		      "hidden: 2048, heads: 32, kv_heads: 4, head_dim: 128, "
		      "ffn_hidden: 6144, vocab: 1000, seq_len: 64, "
		      "swiglu: true}\n" CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_layer *l = &r.cfg.model.layers[1];
	double h = 2048, q = 32 * 128, kv = 4 * 128, s = 64;
	ck_assert_double_eq(l->params, 2 * h * q + 2 * h * kv +
				       3 * h * 6144 + 2 * h);
	ck_assert_double_eq(l->fwd_flops, s * (2 * (2 * h * q + 2 * h * kv) +
					       6 * h * 6144) +
					  2 * s * s * q);
	ck_assert_double_eq(l->cp_kv_bytes, 4 * s * kv);
	done(&r);
}
END_TEST

/* One multi-head latent attention layer by hand (Megatron-LM's
 * MLASelfAttention, d98e8a6 megatron/core/transformer/
 * multi_latent_attention.py:537-631): h = 256, a = 4 heads, Q down to
 * 64 and up to 4 x (16 + 8), K and V down to 32 + 8 (the shared RoPE
 * key) and up to 4 x (16 + 16), O from 4 x 16; s = 32, b = 1, SwiGLU
 * of 512, flash attention. */
START_TEST(mla_layer_flops_and_params_by_hand)
{
	loaded r;
	load_text(&r, "model:\n  name: m\n  transformer: {layers: 2, "
		      "hidden: 256, heads: 4, ffn_hidden: 512, vocab: 100, "
		      "seq_len: 32, swiglu: true, attention: {kind: mla, "
		      "q_lora_rank: 64, kv_lora_rank: 32, qk_nope_head_dim: "
		      "16, qk_rope_head_dim: 8, v_head_dim: 16}}\n" CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_layer *l = &r.cfg.model.layers[1];
	/* Q down, Q up, KV down, KV up, O */
	double attn = 256.0 * 64 + 64.0 * 96 + 256.0 * 40 + 32.0 * 128 +
		      64.0 * 256;
	/* the two latent norms and the block's two */
	ck_assert_double_eq(l->params, attn + 3.0 * 256 * 512 + 64 + 32 +
				       2 * 256);
	/* per token 2 x the weights; the scores over 4 x 24, the values
	 * over 4 x 16, the causal half of 32 x 32 each */
	double scores = 2.0 * (32.0 * 32 / 2) * (96 + 64);
	ck_assert_double_eq(l->fwd_flops, 32.0 * (2 * attn +
						  2.0 * 3 * 256 * 512) +
					  scores);
	ck_assert_double_eq(l->bwd_weight_flops, l->fwd_flops - scores);
	/* ring attention passes K (4 x 24) and V (4 x 16) */
	ck_assert_double_eq(l->cp_kv_bytes, 2.0 * 32 * (96 + 64));
	/* the duplicated down projections and latent norms */
	ck_assert_double_eq(l->tp_replicated_params,
			    256.0 * (64 + 32 + 8) + 64 + 32);
	/* in all-reduces of 2*s*b*h: the FFN's one; with sequence
	 * parallelism the latents' all-gather (104 of 256 wide, half of
	 * one) and O's reduce-scatter (half), each way */
	ck_assert_double_eq(l->tp_fwd_allreduces, 1 + 0.5 + 0.5 * 104 / 256.0);
	ck_assert_double_eq(l->tp_bwd_allreduces, l->tp_fwd_allreduces);
	done(&r);
	expect_errors("model:\n  name: m\n  transformer: {layers: 2, "
		      "hidden: 64, heads: 4, head_dim: 8, vocab: 100, "
		      "seq_len: 16, swiglu: true, attention: {kind: mla, "
		      "kv_lora_rank: 8, qk_nope_head_dim: 8}}\n" CLUSTER4,
		      "3:102: model.transformer.attention: missing required "
		      "key 'qk_rope_head_dim'\n"
		      "3:102: model.transformer.attention: missing required "
		      "key 'v_head_dim'\n");
}
END_TEST

/* Megatron-LM's recompute_modules by hand, on a latent attention (the
 * MLA shape above: Q, K, V 96, 96 and 64 wide, Q latent 64, KV latent 32
 * up to 4 x (16 + 16)) with a dense first block and experts after it (8
 * of width 128, top 2, one shared); s = 32, b = 1, h = 256.  Against
 * core_attn alone: layernorm drops each norm's 2-byte output where the
 * norm is its own module (the latent attention's input norm; the
 * experts' pre-FFN norm), mla_up_proj drops Q, K and V and runs the two
 * up projections again, moe_act drops the routed experts' 2-byte down
 * projection input; in FP8 the norms' and the experts' inputs were one
 * byte.  The recomputed norms and SwiGLU move their bytes again. */
START_TEST(recompute_modules_drop_their_tensors_by_hand)
{
	const char *shape =
		"model:\n  name: m\n  transformer:\n    layers: 3\n"
		"    hidden: 256\n    heads: 4\n    ffn_hidden: 512\n"
		"    vocab: 100\n    seq_len: 32\n    swiglu: true\n"
		"    attention: {kind: mla, q_lora_rank: 64, kv_lora_rank: 32, "
		"qk_nope_head_dim: 16, qk_rope_head_dim: 8, v_head_dim: 16}\n"
		"    moe: {experts: 8, top_k: 2, ffn_hidden: 128, "
		"shared_experts: 1, dense_layers: 1}\n";
	char text[2048];
	loaded base, all, ln, base8, all8;
	const char *variants[][2] = {
		{"    recompute: selective\n", ""},
		{"    recompute_modules: [core_attn, layernorm, mla_up_proj, "
		 "moe_act]\n", ""},
		{"    recompute: selective\n    recompute_modules: "
		 "[layernorm]\n", ""},
		{"    recompute: selective\n", "    precision: fp8\n"},
		{"    recompute_modules: [core_attn, layernorm, mla_up_proj, "
		 "moe_act]\n", "    precision: fp8\n"}};
	loaded *out[] = {&base, &all, &ln, &base8, &all8};
	for (int i = 0; i < 5; i++) {
		snprintf(text, sizeof text, "%s%s%s" CLUSTER4, shape,
			 variants[i][0], variants[i][1]);
		load_text(out[i], text);
		ck_assert_msg(out[i]->status == 0, "%d: %s", i,
			      out[i]->diag.text);
	}
	const ppcc_layer *d0 = &base.cfg.model.layers[1],
			 *d1 = &all.cfg.model.layers[1],
			 *m0 = &base.cfg.model.layers[2],
			 *m1 = &all.cfg.model.layers[2];
	ck_assert_str_eq(m1->name, "moe_block");
	double sh = 32.0 * 256, qkv = 2.0 * 32 * (96 + 96 + 64);
	double up = 2.0 * 32 * (64.0 * 96 + 32.0 * 128);
	/* the dense block: its input norm, Q K V */
	ck_assert_double_eq(d0->stash_bytes - d1->stash_bytes, 2 * sh + qkv);
	ck_assert_double_eq(d1->recompute_flops - d0->recompute_flops, up);
	ck_assert_double_eq(d1->kernel_bwd_bytes - d0->kernel_bwd_bytes,
			    4 * sh);
	/* the experts' block: both norms, Q K V, 2 x 128 of SwiGLU output */
	double act = 2.0 * 32 * 2 * 128;
	ck_assert_double_eq(m0->stash_bytes - m1->stash_bytes,
			    2 * 2 * sh + qkv + act);
	ck_assert_double_eq(m1->stash_replicated_bytes,
			    m0->stash_replicated_bytes);
	ck_assert_double_eq(m1->recompute_flops - m0->recompute_flops, up);
	ck_assert_double_eq(m1->bwd_flops - m0->bwd_flops, up);
	ck_assert_double_eq(m1->kernel_bwd_bytes - m0->kernel_bwd_bytes,
			    2 * 4 * sh + 2.0 * 3 * 32 * 2 * 128);
	/* without core_attn the scores are not recomputed and flash
	 * attention keeps its log-sum-exp, 4 bytes a head and token */
	const ppcc_layer *l = &ln.cfg.model.layers[2];
	ck_assert_double_eq(l->recompute_flops, 0);
	ck_assert_double_eq(m0->stash_bytes - l->stash_bytes,
			    2 * 2 * sh - 4.0 * 4 * 32);
	/* FP8: one byte of each norm's output and of the experts' input */
	const ppcc_layer *f0 = &base8.cfg.model.layers[2],
			 *f1 = &all8.cfg.model.layers[2];
	ck_assert_double_eq(f0->stash_bytes - f1->stash_bytes,
			    2 * sh + qkv + act / 2);
	ck_assert_double_eq(f1->fp8_recompute_flops, up);
	ck_assert_int_eq(all.cfg.model.transformer->recompute,
			 PPCC_RECOMPUTE_SELECTIVE);
	for (int i = 0; i < 5; i++)
		done(out[i]);

	/* a module to be, one not modelled, a contradiction, and modules
	 * without what they recompute */
	expect_errors(MOE_SHAPE "    recompute_modules: [core_atn, mlp]\n"
		      CLUSTER4,
		      "11:25: model.transformer.recompute_modules[0]: expected "
		      "one of Megatron-LM's modules core_attn, layernorm, "
		      "mla_up_proj, moe_act, mlp, moe, shared_experts, "
		      "gdn_norm_out, gdp_in_proj, gdp_qkv, or mhc, got "
		      "'core_atn'; did you mean 'core_attn'?\n"
		      "11:35: model.transformer.recompute_modules[1]: ppcc "
		      "does not model Megatron-LM's recomputation of the "
		      "dense FFN (mlp); ppcc models core_attn, layernorm, "
		      "mla_up_proj and moe_act, and recompute: full\n");
	expect_errors(MOE_SHAPE "    recompute: full\n"
		      "    recompute_modules: [layernorm]\n" CLUSTER4,
		      "12:5: model.transformer.recompute_modules: the modules "
		      "selective recomputation recomputes, but "
		      "model.transformer.recompute is full (line 11); use "
		      "recompute: selective, or leave recompute_modules out\n");
	/* a bad recompute is said once, not also as a contradiction */
	expect_errors(MOE_SHAPE "    recompute: bogus\n"
		      "    recompute_modules: [core_attn]\n" CLUSTER4,
		      "11:16: model.transformer.recompute: expected none, "
		      "selective, or full, got 'bogus'\n");
	/* layernorm where every norm is fused: planned, and warned */
	loaded w;
	load_text(&w, MOE_SHAPE "    recompute_modules: [layernorm]\n"
		  CLUSTER4);
	ck_assert_int_eq(w.status, 0);
	ck_assert_str_eq(w.diag.text, "11:25: warning: model.transformer."
			 "recompute_modules[0]: layernorm recomputes the norms "
			 "that are modules of their own (a latent attention's "
			 "input norm, a mixture of experts' pre-FFN norm); this "
			 "model's run inside the projections after them, so it "
			 "recomputes nothing\n");
	done(&w);
	expect_errors(MOE_SHAPE "    recompute_modules: []\n" CLUSTER4,
		      "11:24: model.transformer.recompute_modules: expected "
		      "at least one module (none recomputes nothing: "
		      "recompute: none), got an empty list\n");
	expect_errors(MOE_SHAPE "    recompute_modules: [mla_up_proj, "
		      "moe_act]\n" CLUSTER4,
		      "11:25: model.transformer.recompute_modules[0]: "
		      "mla_up_proj recomputes a latent attention's up "
		      "projections, and this attention is not latent; give "
		      "attention: {kind: mla, ...} or leave it out\n"
		      "11:38: model.transformer.recompute_modules[1]: moe_act "
		      "recomputes the routed experts' activation, and this "
		      "model has no experts; give moe: {experts: ...} or "
		      "leave it out\n");
}
END_TEST

/* Sliding-window attention, as GPT-OSS's layer_types alternate (layer 0
 * windowed, 1 full): with a window of 8 keys, s = 32 queries score the
 * sum over positions of min(i + 1, 8), 1 + ... + 8 + 24 x 8 = 228, less
 * the 8/2 that the causal count (s^2/2, not s(s + 1)/2) leaves out too:
 * 224 keys, against 512 for the full layer. */
START_TEST(sliding_window_layer_scores_by_hand)
{
	loaded r;
	load_text(&r, "model:\n  name: m\n  transformer: {layers: 4, "
		      "hidden: 64, heads: 4, vocab: 100, seq_len: 32, "
		      "swiglu: true, ffn_hidden: 128, sliding_window: 8, "
		      "sliding_window_pattern: 2}\n" CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_layer *w = &r.cfg.model.layers[1], *f = &r.cfg.model.layers[2];
	double weights = 32.0 * (2 * 4 * 64 * 64 + 2.0 * 3 * 64 * 128);
	/* Q K^T and P V over 64 each */
	ck_assert_double_eq(w->fwd_flops, weights + 2.0 * 224 * 128);
	ck_assert_double_eq(f->fwd_flops, weights + 2.0 * 512 * 128);
	ck_assert_double_eq(r.cfg.model.layers[3].fwd_flops, w->fwd_flops);
	ck_assert_double_eq(r.cfg.model.layers[4].fwd_flops, f->fwd_flops);
	done(&r);
	expect_errors("model:\n  name: m\n  transformer: {layers: 2, "
		      "hidden: 64, heads: 4, vocab: 100, seq_len: 16, "
		      "sliding_window_pattern: 1}\n" CLUSTER4,
		      "3:75: model.transformer.sliding_window_pattern: 1 "
		      "would make every layer attend in full; expected 0 "
		      "(every layer windowed) or at least 2\n");
}
END_TEST

/* Attention's kernels at their measured rates (doc/design/attention.md):
 * on the h100 at 1k tokens, FlashAttention-2's forward at 260 TFLOP/s
 * and, forward and backward together, 221, so its backward at 2.5 /
 * (3.5 / 221 - 1 / 260); cuDNN's forward at 410, its backward at
 * FlashAttention-2's ratio; at 1.5k tokens each between the 1k and 2k
 * figures (298; 265; 484), linear in log2 of the length.  The backward
 * is 2.5 forwards' FLOPs (the scores again), a recomputed forward at
 * the forward's rate.  The attention's A: 2 b (s^2 / 2) (q + v widths)
 * = 2 x 1 x s^2 / 2 x (256 + 256), 536,870,912 FLOPs at 1k, causal. */
START_TEST(attention_kernels_at_their_measured_rates_by_hand)
{
	static const char *const shape =
		"model:\n  name: m\n  transformer: {layers: 2, hidden: 256, "
		"heads: 4, vocab: 100, seq_len: %d, swiglu: true, "
		"recompute: %s, attention_kernel: %s}\n"
		"cluster: {devices: 1, device: %s}\n";
	for (int c = 0; c < 3; c++) {
		int full = c == 1, seq = c == 2 ? 1536 : 1024;
		/* at 1k, and 1.5k: 0.585 of the way from 1k to 2k */
		double x = c == 2 ? log2(1.5) : 0;
		double ff = 260 + x * (298 - 260);
		double bf1 = 2.5 / (3.5 / 221 - 1 / 260.0);
		double bf2 = 2.5 / (3.5 / 265 - 1 / 298.0);
		double bf = bf1 + x * (bf2 - bf1);
		double cf = 410 + x * (484 - 410);
		double cb = 410 * bf1 / 260 + x * (484 * bf2 / 298 -
						   410 * bf1 / 260);
		double A = 2.0 * seq * seq / 2 * 512;
		loaded r[2];
		double f[2], b[2];
		for (int k = 0; k < 2; k++) {
			char text[512];
			snprintf(text, sizeof text, shape, seq,
				 full ? "full" : "none", k ? "cudnn" : "fa2",
				 "h100");
			load_text(&r[k], text);
			ck_assert_msg(r[k].status == 0, "%s", r[k].diag.text);
			const ppcc_layer *l = &r[k].cfg.model.layers[1];
			ck_assert_double_eq(l->attn_flops, A);
			ck_assert_double_eq(l->attn_recompute_flops, full ? A : 0);
			double zero[4] = {0};
			ppcc_cost_layer_comm lc = {zero, zero, zero, zero, NULL,
						   NULL};
			ppcc_cost_layer_seconds(&f[k], &b[k], &r[k].cfg, &lc, 1,
						&r[k].cfg.cluster.groups[0]);
		}
		double want_f = A / (ff * 1e12) - A / (cf * 1e12);
		double want_b = 2.5 * A / (bf * 1e12) - 2.5 * A / (cb * 1e12) +
				(full ? want_f : 0);
		ck_assert_double_eq_tol(f[0] - f[1], want_f, 1e-9 * f[0]);
		ck_assert_double_eq_tol(b[0] - b[1], want_b, 1e-9 * b[0]);
		done(&r[0]);
		done(&r[1]);
	}
	/* no cuDNN figure on the a100: its attention at the matrix rate,
	 * as without a measurement anywhere; a file's own peak beside the
	 * h100 preset is another chip's, at its matrix rate too, as a
	 * device without a preset, whose trainer's own kernel ppcc does not
	 * name */
	static const char *const same[][4] = {
		{"cudnn", "a100", "cudnn", "{name: g, tflops: 312, efficiency: "
		 "0.62, memory_gib: 80, memory_bandwidth_gb_s: 2039}"},
		{"cudnn", "{preset: h100, tflops: 148}", "auto", "{name: g, "
		 "tflops: 148, efficiency: 0.62, memory_gib: 79.65, "
		 "memory_bandwidth_gb_s: 3350}"},
	};
	loaded a, g;
	char text[512];
	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
		snprintf(text, sizeof text, shape, 1024, "none", same[i][0],
			 same[i][1]);
		load_text(&a, text);
		snprintf(text, sizeof text, shape, 1024, "none", same[i][2],
			 same[i][3]);
		load_text(&g, text);
		ck_assert_msg(a.status == 0 && g.status == 0, "%s%s",
			      a.diag.text, g.diag.text);
		double zero[4] = {0}, fa, ba, fg, bg;
		ppcc_cost_layer_comm lc = {zero, zero, zero, zero, NULL, NULL};
		ppcc_cost_layer_seconds(&fa, &ba, &a.cfg, &lc, 1,
					&a.cfg.cluster.groups[0]);
		ppcc_cost_layer_seconds(&fg, &bg, &g.cfg, &lc, 1,
					&g.cfg.cluster.groups[0]);
		ck_assert_double_eq(fa, fg);
		ck_assert_double_eq(ba, bg);
		if (i == 1)
			ck_assert_int_eq(ppcc_cost_attention_kernel(
				&g.cfg, &g.cfg.cluster.groups[0]),
				PPCC_ATTN_AUTO);
		done(&a);
		done(&g);
	}
	/* a call's keys: its window, at most a ring step's s / cp */
	for (int cp = 2; cp <= 8; cp *= 4) {
		snprintf(text, sizeof text, "model:\n  name: m\n  transformer: "
			 "{layers: 2, hidden: 256, heads: 4, vocab: 100, "
			 "seq_len: 4096, swiglu: true, sliding_window: 1024}\n"
			 "cluster: {devices: 8, device: h100}\n"
			 "pipeline: {stages: 1, context_parallel: %d}\n", cp);
		load_text(&a, text);
		ck_assert_msg(a.status == 0, "%s", a.diag.text);
		ck_assert_double_eq(a.cfg.model.layers[1].attn_keys, 1024);
		ck_assert_double_eq(ppcc_cost_attention_len(
			&a.cfg, &a.cfg.model.layers[1]), cp == 2 ? 1024 : 512);
		done(&a);
	}
	expect_errors("model:\n  name: m\n  transformer: {layers: 2, "
		      "hidden: 64, heads: 4, vocab: 100, seq_len: 16, "
		      "swiglu: true, attention_kernel: fa2, attention: {kind: "
		      "mla, q_lora_rank: 32, kv_lora_rank: 16, "
		      "qk_nope_head_dim: 16, qk_rope_head_dim: 8, v_head_dim: "
		      "16}}\n" CLUSTER4, "3:89: model.transformer."
		      "attention_kernel: FlashAttention-2 does not run latent "
		      "attention, whose queries and keys are wider than its "
		      "values; use cudnn\n");
}
END_TEST

/* Query and key norms (Qwen3's q_norm and k_norm, Megatron-LM's
 * --qk-layernorm): an RMSNorm of head_dim weights each for Q and K; the
 * norms keep their 16-bit inputs for the backward (2 x s x b x (q + kv)
 * bytes, split over t like the heads) and read and write Q and K
 * (4 x s x b x (q + kv) forward, twice that backward); no FLOPs.  With
 * latent attention they are refused; qk_layernorm gets the key's name. */
START_TEST(qk_norm_params_stash_and_kernels_by_hand)
{
	loaded r, n;
	const char *shape = "model:\n  name: m\n  transformer: {layers: 2, "
			    "hidden: 64, heads: 4, kv_heads: 2, vocab: 100, "
			    "seq_len: 16, swiglu: true, ffn_hidden: 128%s}\n"
			    CLUSTER4;
	char text[512];
	snprintf(text, sizeof text, shape, ", qk_norm: true");
	load_text(&r, text);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	snprintf(text, sizeof text, shape, "");
	load_text(&n, text);
	ck_assert_msg(n.status == 0, "%s", n.diag.text);
	ck_assert_int_eq(r.cfg.model.transformer->qk_norm, 1);
	ck_assert_int_eq(n.cfg.model.transformer->qk_norm, 0);
	const ppcc_layer *q = &r.cfg.model.layers[1], *p = &n.cfg.model.layers[1];
	/* head_dim 16; q 4 x 16 = 64, kv 2 x 16 = 32; s x b = 16 */
	ck_assert_double_eq(q->params - p->params, 2.0 * 16);
	ck_assert_double_eq(q->stash_bytes - p->stash_bytes, 2.0 * 16 * 96);
	ck_assert_double_eq(q->kernel_fwd_bytes - p->kernel_fwd_bytes,
			    4.0 * 16 * 96);
	ck_assert_double_eq(q->kernel_bwd_bytes - p->kernel_bwd_bytes,
			    8.0 * 16 * 96);
	ck_assert_double_eq(q->kernel_fwd_replicated_bytes,
			    p->kernel_fwd_replicated_bytes);
	ck_assert_double_eq(q->fwd_flops, p->fwd_flops);
	done(&r);
	done(&n);
	expect_errors("model:\n  name: m\n  transformer: {layers: 2, "
		      "hidden: 64, heads: 4, vocab: 100, seq_len: 16, "
		      "swiglu: true, "
		      "qk_norm: true, attention: {kind: mla, q_lora_rank: 32, "
		      "kv_lora_rank: 16, qk_nope_head_dim: 16, "
		      "qk_rope_head_dim: 8, v_head_dim: 16}}\n" CLUSTER4,
		      "3:89: model.transformer.qk_norm: latent attention "
		      "norms its latents, which ppcc counts; a norm of each "
		      "head's query and key beside them is not modelled: give "
		      "qk_norm false\n");
}
END_TEST

/* A multi-token prediction module (DeepSeek-V3's, Megatron-LM's
 * MultiTokenPredictionLayer, d98e8a6 megatron/core/transformer/
 * multi_token_prediction.py:1157-1251): two RMSNorms of h, the 2h -> h
 * projection, a block as the last and a final RMSNorm, on the head's
 * stage, which also builds its own copy of the V x h embedding; its
 * FLOPs add the block's, the projection's and its own logits'. */
START_TEST(mtp_layer_params_and_flops_by_hand)
{
	loaded r;
	load_text(&r, "model:\n  name: m\n  transformer: {layers: 2, "
		      "hidden: 64, heads: 4, vocab: 100, seq_len: 16, "
		      "swiglu: true, ffn_hidden: 128, mtp_layers: 1}\n"
		      CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_model *m = &r.cfg.model;
	ck_assert_int_eq(m->n_layers, 4);
	double block = 4.0 * 64 * 64 + 3.0 * 64 * 128 + 2 * 64;
	ck_assert_double_eq(m->layers[1].params, block);
	double mtp = 3.0 * 64 + 2.0 * 64 * 64 + block;
	ck_assert_double_eq(ppcc_transformer_mtp_params(m->transformer), mtp);
	/* the head: output layer and final norm, the module, the
	 * embedding's copy */
	ck_assert_double_eq(m->layers[3].params,
			    100.0 * 64 + 64 + mtp + 100.0 * 64);
	ck_assert_double_eq(ppcc_transformer_params(m->transformer),
			    2.0 * 100 * 64 + 64 + 2 * block);
	ck_assert_double_eq(m->layers[3].fwd_flops,
			    2.0 * 16 * 64 * 100 + m->layers[1].fwd_flops +
				    2.0 * 16 * (2.0 * 64 * 64 + 64 * 100));
	done(&r);
}
END_TEST

/* Megatron-LM numbers an MTP module's block from 1, not after the
 * decoder (2a75ac12 multi_token_prediction.py:1044-1051), and windows
 * layer k unless k is a multiple of window_attn_skip_freq (transformer/
 * utils.py:531-542): with a window every second layer, module 1 is
 * windowed and module 2 attends in full, whatever the last block does. */
START_TEST(mtp_blocks_are_windowed_as_megatron_numbers_them)
{
	loaded r;
	load_text(&r, "model:\n  name: m\n  transformer: {layers: 2, "
		      "hidden: 64, heads: 4, vocab: 100, seq_len: 32, "
		      "swiglu: true, ffn_hidden: 128, sliding_window: 8, "
		      "sliding_window_pattern: 2, mtp_layers: 2}\n" CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	const ppcc_layer *L = r.cfg.model.layers;
	const ppcc_layer *w = &L[1], *f = &L[2];
	ck_assert_double_lt(w->fwd_flops, f->fwd_flops);
	ck_assert_double_eq(L[3].fwd_flops,
			    2.0 * 32 * 64 * 100 + w->fwd_flops + f->fwd_flops +
				    2 * 2.0 * 32 * (2.0 * 64 * 64 + 64 * 100));
	ck_assert_double_eq(L[3].attn_flops, w->attn_flops + f->attn_flops);
	done(&r);
}
END_TEST

/* The experts' settings are checked where they are written. */
START_TEST(moe_settings_are_checked)
{
	loaded r;
	load_text(&r, MOE_SHAPE "    moe: {experts: 8, top_k: 2, "
		  "node_limit: 4, dispatch: fp8}\n" CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_int_eq(r.cfg.model.transformer->moe.node_limit, 4);
	ck_assert_int_eq(r.cfg.model.transformer->moe.dispatch_fp8, 1);
	done(&r);
	expect_errors(MOE_SHAPE "    moe: {experts: 8, top_k: 2, "
		      "dispatch: fp16}\n" CLUSTER4,
		      "11:43: model.transformer.moe.dispatch: expected bf16 "
		      "or fp8, got 'fp16'; did you mean 'bf16'?\n");
	expect_errors(MOE_SHAPE "    moe: {experts: 8, top_k: 9, "
		      "capacity_factor: 0.5, imbalance: 0.9}\n" CLUSTER4,
		      "11:23: model.transformer.moe.top_k: 9 experts a "
		      "token, of 8 experts; expected at most 8\n"
		      "11:50: model.transformer.moe.capacity_factor: "
		      "expected 0 (dropless) or a number >= 1, got '0.5'\n"
		      "11:66: model.transformer.moe.imbalance: expected a "
		      "number >= 1 (the busiest expert rank's tokens over "
		      "the mean), got '0.9'\n");
	expect_errors("model:\n  name: m\n  transformer: {layers: 2, "
		      "hidden: 64, heads: 4, vocab: 100, seq_len: 16, "
		      "moe: {experts: 4, top_k: 1}}\n" CLUSTER4,
		      "3:75: ppcc does not model mixture-of-experts layers "
		      "without SwiGLU experts (model.transformer.swiglu is "
		      "false): their biases and activation differ; set "
		      "swiglu: true\n");
}
END_TEST

/* Expert parallelism folds into a stage's t x cp x d devices: ep x etp
 * divides them, ep the experts, etp the experts' width. */
START_TEST(expert_parallel_folds_into_the_stage)
{
	loaded r;
	load_text(&r, MOE_SHAPE "    moe: {experts: 8, top_k: 2, "
		      "ffn_hidden: 256}\n"
		      "cluster:\n  devices: 16\n  device: {name: g, "
		      "tflops: 100, efficiency: 1, memory_gib: 16}\n"
		      "pipeline: {tensor_parallel: 2, stages: 1, "
		      "expert_parallel: 4, expert_tensor_parallel: 1}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_int_eq(ppcc_config_check(&r.cfg, &r.diag.d), 0);
	const ppcc_pipeline *p = &r.cfg.pipeline;
	ck_assert_int_eq(p->data_parallel, 8);
	/* 2 x 1 x 8 = 16 devices fold into etp 1 x ep 4 x edp 4 */
	ppcc_memory_experts ex;
	ppcc_memory_experts_of(&ex, p, 1);
	ck_assert_int_eq(ex.edp, 4);
	ck_assert_double_eq(ex.share, 0.25);
	const ppcc_layer *l = &r.cfg.model.layers[1];
	ck_assert_double_eq(ppcc_memory_device_params(l, p),
			    (l->params - l->expert_params) / 2 +
			    l->expert_params / 4);
	done(&r);
	/* stages left to follow leave a stage room for the experts' fold:
	 * 4 devices, ep 4, one stage of d 4 (not 4 stages of one device) */
	load_text(&r, MOE_SHAPE "    moe: {experts: 8, top_k: 2}\n" CLUSTER4
		  "pipeline: {expert_parallel: 4}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_int_eq(r.cfg.pipeline.stages, 1);
	ck_assert_int_eq(r.cfg.pipeline.data_parallel, 4);
	ck_assert_int_eq(ppcc_config_check(&r.cfg, &r.diag.d), 0);
	done(&r);
	expect_check(MOE_SHAPE "    moe: {experts: 8, top_k: 2}\n"
			     CLUSTER4 "pipeline: {expert_parallel: 3}\n", PPCC_EINPUT,
			     "15:12: 3-way expert parallelism does not divide "
			     "the 8 experts (line 11)\n"
			     "15:12: expert parallelism folds into the 4 "
			     "devices of a stage (t x cp x d = 1 x 1 x 4); "
			     "ep x etp = 3 x 1 does not divide them\n");
	/* torchtitan's per-operation selective recomputation is modelled
	 * for dense multi-head and grouped-query blocks only */
	expect_check(MOE_SHAPE "    recompute: selective\n"
		     "    moe: {experts: 8, top_k: 2}\n" CLUSTER4
		     "pipeline: {trainer: torchtitan}\n", PPCC_EINPUT,
		     "16:12: ppcc does not model torchtitan's per-operation "
		     "selective recomputation of mixture-of-experts layers; "
		     "use recompute: full or none, or trainer: megatron\n");
	expect_check(MOE_SHAPE "    recompute: selective\n"
		     "    attention: {kind: mla, kv_lora_rank: 64, "
		     "qk_nope_head_dim: 32, qk_rope_head_dim: 16, "
		     "v_head_dim: 32}\n" CLUSTER4
		     "pipeline: {trainer: torchtitan}\n", PPCC_EINPUT,
		     "16:12: ppcc does not model torchtitan's per-operation "
		     "selective recomputation of multi-head latent attention; "
		     "use recompute: full or none, or trainer: megatron\n");
	expect_check(MODEL1 CLUSTER4
			     "pipeline: {expert_parallel: 2}\n", PPCC_EINPUT,
			     "7:12: expert parallelism needs a "
			     "mixture-of-experts model (transformer.moe); this "
			     "model has none\n");
}
END_TEST

/* ---- model presets ------------------------------------------------------ */

/* Each row's parameters, by the loader's formulas, against the count
 * published for the model: Hugging Face's safetensors widget ("Model size
 * 8.03B params" for Llama 3.1 8B, "70.6B params" for Llama 3.3 70B, the
 * 3.1 70B's shape), Llama 3.1 405B's 405.9B computed from its config.json
 * (doc/design/models.md: no stored page prints it), Llama 2 70B's
 * released checkpoint (68,976,648,192, transformer_matches_llama2_70b_
 * parameter_count) and GPT-3's 174.6e9 with GPT-2's 50257-token
 * vocabulary and tied embeddings (transformer_matches_gpt3_published_
 * figures; the paper rounds it to 175.0B). */
START_TEST(model_presets_match_published_parameter_counts)
{
	static const struct {
		const char *name;
		double billions, within;
	} published[] = {
		{"llama3-8b", 8.03, 0.005},   {"llama3-70b", 70.6, 0.05},
		{"llama3-405b", 405.9, 0.05}, {"llama2-70b", 68.976648192, 0},
		{"gpt3-175b", 174.604259328, 0},
		{"mixtral-8x7b", 46.7, 0.05},  {"mixtral-8x22b", 141, 0.5},
		{"qwen3-30b-a3b", 30.5, 0.05}, {"qwen3-235b-a22b", 235, 0.5},
		{"deepseek-v3", 671, 0.5},     {"gpt-oss-120b", 116.8, 0.05},
	};
	/* and a token's: Mistral AI's 12.9B and 39B, Qwen3's 3.3B and 22B,
	 * DeepSeek-V3's 37B, gpt-oss-120b's 5.1B, which leaves the input
	 * embedding out (no_embed; doc/design/models.md) */
	static const struct {
		const char *name;
		double billions, within;
		int no_embed;
	} active[] = {
		{"mixtral-8x7b", 12.9, 0.05, 0},  {"mixtral-8x22b", 39, 0.5, 0},
		{"qwen3-30b-a3b", 3.3, 0.06, 0}, {"qwen3-235b-a22b", 22, 0.5, 0},
		{"deepseek-v3", 37, 0.6, 0},      {"gpt-oss-120b", 5.1, 0.05, 1},
	};
	for (size_t i = 0; i < sizeof active / sizeof *active; i++) {
		const ppcc_model_preset *p = ppcc_model_preset_find(
			active[i].name, strlen(active[i].name));
		ck_assert_ptr_nonnull(p);
		ppcc_transformer t = {.micro_batch_size = 1};
		ppcc_model_preset_shape(&t, p);
		double got = (ppcc_transformer_active_params(&t) -
			      (active[i].no_embed ? (double)t.vocab * t.hidden
						  : 0.0)) / 1e9;
		ck_assert_msg(fabs(got - active[i].billions) <=
			      active[i].within, "%s: %.4fB active, published "
			      "%gB", p->name, got, active[i].billions);
	}
	int n = (int)(sizeof published / sizeof published[0]);
	ck_assert_int_eq(ppcc_n_model_presets, n);
	for (int i = 0; i < n; i++) {
		const ppcc_model_preset *p = ppcc_model_preset_find(
			published[i].name, strlen(published[i].name));
		ck_assert_ptr_nonnull(p);
		double got = ppcc_model_preset_params(p) / 1e9;
		ck_assert_msg(fabs(got - published[i].billions) <=
			      published[i].within + 1e-9,
			      "%s: %.4fB, published %gB", p->name, got,
			      published[i].billions);
	}
	/* DeepSeek-V3's MTP module: 11.5B of its own, 14B with the
	 * embedding and output layer it shares (its README.md:99,
	 * README_WEIGHTS.md:38-39) */
	ppcc_transformer ds = {.micro_batch_size = 1};
	ppcc_model_preset_shape(&ds, ppcc_model_preset_find("deepseek-v3", 11));
	double own = ppcc_transformer_mtp_params(&ds) / 1e9;
	ck_assert_msg(fabs(own - 11.5) <= 0.15, "MTP %.4fB", own);
	ck_assert_msg(fabs(own + 2 * 129280.0 * 7168 / 1e9 - 14) <= 0.6,
		      "MTP %.4fB", own);
	/* the loader's layers count a tied head twice, as a pipeline
	 * keeps it on both ends; the preset's count once */
	loaded r;
	load_text(&r, "model:\n  transformer: {preset: gpt3-175b}\n" CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	double total = 0;
	for (int i = 0; i < r.cfg.model.n_layers; i++)
		total += r.cfg.model.layers[i].params;
	ck_assert_double_eq(total - 50257.0 * 12288,
			    ppcc_model_preset_params(ppcc_model_preset_find(
				    "gpt3-175b", 9)));
	done(&r);
	const char *names[PPCC_MAX_MODEL_PRESETS + 1];
	ppcc_model_preset_names(names);
	ck_assert_ptr_null(names[n]);
	ck_assert_ptr_null(ppcc_model_preset_find("llama3-70", 9));
}
END_TEST

/* A preset fills every shape key and the model's name; a key given, and a
 * name, win over the preset's; training keys stay the file's. */
START_TEST(model_preset_fills_the_shape_and_keys_given_win)
{
	loaded r;
	load_text(&r, "model:\n  transformer:\n    preset: llama3-405b\n"
		  "    micro_batch_size: 2\n" CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_str_eq(r.diag.text, "");
	const ppcc_transformer *t = r.cfg.model.transformer;
	ck_assert_str_eq(r.cfg.model.name, "llama3-405b");
	ck_assert_int_eq(t->layers, 126);
	ck_assert_int_eq(t->hidden, 16384);
	ck_assert_int_eq(t->heads, 128);
	ck_assert_int_eq(t->kv_heads, 8);
	ck_assert_int_eq(t->ffn_hidden, 53248);
	ck_assert_int_eq(t->vocab, 128256);
	ck_assert_int_eq(t->seq_len, 8192);
	ck_assert_int_eq(t->swiglu, 1);
	ck_assert_int_eq(t->norm, PPCC_NORM_RMSNORM);
	ck_assert_int_eq(t->position, PPCC_POSITION_ROPE);
	ck_assert_double_eq(t->rope_theta, 500000);
	ck_assert_int_eq(t->tie_embeddings, 0);
	ck_assert_int_eq(t->micro_batch_size, 2);
	ck_assert_int_eq(r.cfg.model.n_layers, 128);
	/* located at the preset: messages about heads name its line */
	ck_assert_int_eq(t->heads_loc.line, 3);
	ck_assert_int_eq(t->kv_heads_loc.line, 3);
	done(&r);

	load_text(&r, "model:\n  name: short\n  transformer:\n"
		  "    preset: gpt3-175b\n    seq_len: 1024\n    layers: 4\n"
		  "    position: rope\n    tie_embeddings: false\n" CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	t = r.cfg.model.transformer;
	ck_assert_str_eq(r.cfg.model.name, "short");
	ck_assert_int_eq(t->seq_len, 1024);
	ck_assert_int_eq(t->layers, 4);
	ck_assert_int_eq(t->hidden, 12288);
	ck_assert_int_eq(t->position, PPCC_POSITION_ROPE);
	ck_assert_int_eq(t->norm, PPCC_NORM_LAYERNORM);
	ck_assert_int_eq(t->tie_embeddings, 0);
	ck_assert_int_eq(t->swiglu, 0);
	ck_assert_int_eq(t->heads_loc.line, 4);
	done(&r);

	/* swiglu given does not move the preset's norm (a key wins only
	 * for itself) */
	load_text(&r, "model:\n  transformer: {preset: llama2-70b, "
		  "swiglu: false}\n" CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_int_eq(r.cfg.model.transformer->swiglu, 0);
	ck_assert_int_eq(r.cfg.model.transformer->norm, PPCC_NORM_RMSNORM);
	done(&r);
	/* a multi-head preset's kv heads follow the heads given */
	load_text(&r, "model:\n  transformer: {preset: gpt3-175b, heads: 12}\n"
		  CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_int_eq(r.cfg.model.transformer->kv_heads, 12);
	done(&r);
	load_text(&r, "model:\n  transformer: {preset: llama3-8b, heads: 64}\n"
		  CLUSTER4);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_int_eq(r.cfg.model.transformer->kv_heads, 8);
	done(&r);
}
END_TEST

/* An unknown preset: located, with the nearest name and the list, and no
 * missing shape key besides; a key given that breaks the preset's shape
 * is located at itself; a model without a preset still needs its name. */
START_TEST(model_preset_errors_are_located)
{
	expect_errors("model:\n  transformer:\n    preset: llama3-70\n"
		      "    micro_batch_size: 1\n" CLUSTER4,
		      "3:13: model.transformer.preset: expected llama3-8b, "
		      "llama3-70b, llama3-405b, llama2-70b, gpt3-175b, "
		      "mixtral-8x7b, mixtral-8x22b, qwen3-30b-a3b, "
		      "qwen3-235b-a22b, deepseek-v3, or gpt-oss-120b, got "
		      "'llama3-70'; did you mean 'llama3-70b'?\n");
	expect_errors("model:\n  transformer: {preset: [llama3-8b]}\n"
		      CLUSTER4,
		      "2:25: model.transformer.preset: expected llama3-8b, "
		      "llama3-70b, llama3-405b, llama2-70b, gpt3-175b, "
		      "mixtral-8x7b, mixtral-8x22b, qwen3-30b-a3b, "
		      "qwen3-235b-a22b, deepseek-v3, or gpt-oss-120b, got "
		      "a list\n");
	expect_errors("model:\n  transformer:\n    preset: llama3-8b\n"
		      "    kv_heads: 5\n" CLUSTER4,
		      "4:5: model.transformer.kv_heads: 5 kv heads do not "
		      "divide the 32 heads\n");
	expect_errors("model:\n  transformer:\n    preset: llama3-8b\n"
		      "    hidden: 4100\n" CLUSTER4,
		      "3:5: model.transformer.heads: 32 heads do not divide "
		      "the hidden size 4100; give head_dim when a head is "
		      "not hidden / heads wide\n");
	expect_errors("model:\n  transformer: {layers: 2, hidden: 8, heads: 2, "
		      "vocab: 8, seq_len: 8}\n" CLUSTER4,
		      "1:1: model: missing required key 'name'\n");
}
END_TEST

/* examples/ spell each preset's shape by hand: with those keys (and the
 * name) replaced by `preset:`, ppcc plan prints the same bytes, as text
 * and as JSON. */
START_TEST(model_presets_plan_as_the_examples_spell_them)
{
	static const char *const shape_keys[] = {
		"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab",
		"seq_len", "swiglu", "norm", "position", "rope_theta",
		"tie_embeddings", NULL};
	static const char *const examples[] = {"llama3-8b", "llama3-70b",
					       "llama2-70b", "gpt3-175b", NULL};
	for (int e = 0; examples[e]; e++) {
		char rel[64], ex[PATH_MAX], path[PATH_MAX];
		snprintf(rel, sizeof rel, "examples/%s.yaml", examples[e]);
		snprintf(ex, sizeof ex, "%s/%s", tu_src(), rel);
		char *text = tu_read_src(rel);
		size_t cap = strlen(text) + 64, o = 0;
		char *out = malloc(cap);
		ck_assert_ptr_nonnull(out);
		int dropped = 0;
		for (char *line = text; *line;) {
			char *end = strchr(line, '\n');
			size_t len = end ? (size_t)(end - line + 1) : strlen(line);
			int drop = strncmp(line, "  name: ", 8) == 0;
			for (int k = 0; shape_keys[k] && !drop; k++) {
				size_t kl = strlen(shape_keys[k]);
				drop = strncmp(line, "    ", 4) == 0 &&
				       strncmp(line + 4, shape_keys[k], kl) == 0 &&
				       line[4 + kl] == ':';
			}
			dropped += drop;
			if (!drop)
				memcpy(out + o, line, len), o += len;
			if (strncmp(line, "  transformer:\n", 15) == 0)
				o += (size_t)snprintf(out + o, cap - o,
						      "    preset: %s\n",
						      examples[e]);
			line += len;
		}
		out[o] = '\0';
		ck_assert_msg(dropped >= 8, "%s: %d lines", rel, dropped);
		tu_write_in(path, sizeof path, tmpdir, "preset.yaml", out);
		for (int f = 0; f < 2; f++) {
			const char *fmt = f ? "json" : "text";
			tu_run a, b;
			TU_PPCC(&a, "plan", ex, "-f", fmt);
			TU_PPCC(&b, "plan", path, "-f", fmt);
			ck_assert_msg(a.status == 0 && b.status == 0,
				      "%s: %s%s", rel, a.err, b.err);
			ck_assert_msg(a.out_len == b.out_len &&
				      memcmp(a.out, b.out, a.out_len) == 0,
				      "%s -f %s differs with the preset:\n%s",
				      rel, fmt, out);
			tu_run_free(&a);
			tu_run_free(&b);
		}
		free(out);
		free(text);
	}
}
END_TEST

/* ---- device presets ----------------------------------------------------- */

/* NVLink SHARP follows the presets (doc/design/devices.md cites each
 * row): an h100 node has it (Hopper's), a b200 node Blackwell's, an a100
 * or a PCIe card's none; a cluster takes the least of its groups', none
 * when a group names no preset or the node is larger than the presets'
 * (no NVSwitch domain). */
START_TEST(nvls_follows_the_presets_and_only_theirs)
{
	static const struct {
		const char *cluster;
		int nvls;
	} cases[] = {
		{"  devices: 16\n  device: h100\n", PPCC_NVLS_HOPPER},
		{"  devices: 16\n  device: b200\n", PPCC_NVLS_BLACKWELL},
		{"  devices: 144\n  device: gb200\n", PPCC_NVLS_BLACKWELL},
		{"  devices: 16\n  device: a100\n", PPCC_NVLS_NONE},
		{"  devices: 16\n  device: h100-pcie\n", PPCC_NVLS_NONE},
		{"  devices: 16\n  device: l40s\n", PPCC_NVLS_NONE},
		{"  devices: 16\n  device: mi300x\n", PPCC_NVLS_NONE},
		{"  devices: 32\n  devices_per_node: 16\n  device: h100\n",
		 PPCC_NVLS_NONE},
		{"  devices: 16\n  devices_per_node: 4\n  device: h100\n",
		 PPCC_NVLS_HOPPER},
		{"  groups:\n    - {name: a, count: 8, preset: h100}\n"
		 "    - {name: b, count: 8, preset: b200}\n", PPCC_NVLS_HOPPER},
		{"  groups:\n    - {name: a, count: 8, preset: h100}\n"
		 "    - {name: b, count: 8, preset: a100}\n", PPCC_NVLS_NONE},
		{"  devices: 16\n  device: {name: x, tflops: 989, efficiency: 0.5, "
		 "memory_gib: 80}\n", PPCC_NVLS_NONE},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		loaded r;
		char text[1024];
		snprintf(text, sizeof text, "%scluster:\n%s", MODEL1,
			 cases[i].cluster);
		load_text(&r, text);
		ck_assert_msg(r.status == 0, "%s", r.diag.text);
		ck_assert_msg(r.cfg.cluster.nvls == cases[i].nvls,
			      "case %zu: nvls %d, want %d", i,
			      r.cfg.cluster.nvls, cases[i].nvls);
		done(&r);
	}
}
END_TEST

/* `device: h100` takes every figure of the catalogue's row; the node and
 * both links follow it; a mapping overrides a field; a group names one. */
START_TEST(device_preset_gives_the_row_and_a_mapping_overrides_a_field)
{
	loaded r;
	const ppcc_device_preset *h100 = ppcc_device_preset_find("h100", 4);
	ck_assert_ptr_nonnull(h100);
	load_text(&r, MODEL1 "cluster:\n  devices: 16\n  device: h100\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_str_eq(r.diag.text, "");
	const ppcc_cluster *cl = &r.cfg.cluster;
	const ppcc_device_group *g = &cl->groups[0];
	ck_assert_ptr_eq(g->preset, h100);
	ck_assert_str_eq(g->name, "h100");
	ck_assert_int_eq(g->count, 16);
	ck_assert_double_eq(g->tflops, 989.4);
	ck_assert_double_eq(g->efficiency, PPCC_UNCALIBRATED_EFFICIENCY);
	ck_assert_int_eq(g->efficiency_given, 0);
	ck_assert_double_eq(g->memory_bytes, 79.65 * 1073741824.0);
	ck_assert_double_eq(g->memory_bandwidth, 3350e9);
	ck_assert_int_eq(cl->devices_per_node, 8);
	ck_assert_double_eq(cl->intra_node.bandwidth, 450e9);
	ck_assert_double_eq(cl->inter_node.bandwidth, 50e9);
	ck_assert_double_eq_tol(cl->intra_node.latency, 5e-6, 1e-18);
	done(&r);

	/* a group that names a preset takes its name by default; one that
	 * names none must give a name */
	load_text(&r, MODEL1 "cluster:\n  groups:\n"
		  "    - {preset: h100, count: 8}\n"
		  "    - {preset: a100, count: 8, name: old}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_str_eq(r.cfg.cluster.groups[0].name, "h100");
	ck_assert_str_eq(r.cfg.cluster.groups[1].name, "old");
	done(&r);
	expect_errors(MODEL1 "cluster:\n  groups:\n"
		      "    - {count: 8, tflops: 100, efficiency: 0.5, memory_gib: 80}\n",
		      "6:7: cluster.groups[0]: missing required key 'name'\n");

	/* a field given wins; the rest, links included, stay the row's */
	load_text(&r, MODEL1 "cluster:\n  devices: 16\n"
		  "  device: {preset: gb200, name: rack, memory_gib: 95, "
		  "efficiency: 0.5}\n"
		  "  links: {inter_node: {bandwidth_gb_s: 100}}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	cl = &r.cfg.cluster;
	g = &cl->groups[0];
	ck_assert_str_eq(g->name, "rack");
	ck_assert_str_eq(g->preset->name, "gb200");
	ck_assert_double_eq(g->tflops, 2500);
	ck_assert_double_eq(g->efficiency, 0.5);
	ck_assert_int_eq(g->efficiency_given, 1);
	ck_assert_double_eq(g->memory_bytes, 95.0 * 1073741824.0);
	ck_assert_int_eq(cl->devices_per_node, 72);
	ck_assert_double_eq(cl->intra_node.bandwidth, 900e9);
	ck_assert_double_eq(cl->inter_node.bandwidth, 100e9);
	done(&r);

	/* groups: the same preset sets the node; two presets the smallest
	 * node and the slowest links of the two (a cluster has one node size
	 * and one pair of links) */
	load_text(&r, MODEL1 "cluster:\n  groups:\n"
		  "    - {name: a, count: 4, preset: h800}\n"
		  "    - {name: b, count: 4, preset: h800, memory_gib: 40}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	cl = &r.cfg.cluster;
	ck_assert_double_eq(cl->intra_node.bandwidth, 200e9);
	ck_assert_double_eq(cl->groups[1].memory_bytes, 40.0 * 1073741824.0);
	ck_assert_double_eq(cl->groups[1].tflops, 989.4);
	done(&r);
	load_text(&r, MODEL1 "cluster:\n  devices_per_node: 4\n  groups:\n"
		  "    - {name: a, count: 4, preset: h100}\n"
		  "    - {name: b, count: 4, preset: a100}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	cl = &r.cfg.cluster;
	ck_assert_int_eq(cl->devices_per_node, 4);
	ck_assert_double_eq(cl->intra_node.bandwidth, 300e9);
	ck_assert_double_eq(cl->inter_node.bandwidth, 25e9);
	ck_assert_double_eq(cl->groups[1].tflops, 312);
	done(&r);

	/* two presets of the same node keep its links; a node of 72 is
	 * launched 4 devices a host; a preset's name in any case */
	load_text(&r, MODEL1 "cluster:\n  groups:\n"
		  "    - {name: a, count: 8, preset: H100}\n"
		  "    - {name: b, count: 8, preset: h200}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	cl = &r.cfg.cluster;
	ck_assert_str_eq(cl->groups[0].preset->name, "h100");
	ck_assert_int_eq(cl->devices_per_node, 8);
	ck_assert_int_eq(cl->host_devices, 8);
	ck_assert_double_eq(cl->intra_node.bandwidth, 450e9);
	ck_assert_double_eq(cl->inter_node.bandwidth, 50e9);
	done(&r);
	load_text(&r, MODEL1 "cluster:\n  devices: 144\n  device: gb200\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_int_eq(r.cfg.cluster.devices_per_node, 72);
	ck_assert_int_eq(r.cfg.cluster.host_devices, 4);
	done(&r);
	load_text(&r, MODEL1 "cluster:\n  devices: 144\n  device: gb200\n"
		  "  devices_per_node: 8\n");
	ck_assert_int_eq(r.cfg.cluster.host_devices, 8);
	done(&r);
	/* no usual network (a PCIe card): ppcc's default, 25 GB/s */
	load_text(&r, MODEL1 "cluster:\n  devices: 8\n  device: l40s\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_double_eq(r.cfg.cluster.inter_node.bandwidth, 25e9);
	ck_assert_double_eq(r.cfg.cluster.intra_node.bandwidth, 32e9);
	done(&r);
}
END_TEST

/* An unknown preset is located with the nearest name; a device without
 * a preset needs its efficiency (never a silent 1.0); a peak that is a
 * device's FP8 or sparse figure is warned. */
START_TEST(device_preset_errors_name_the_catalogue)
{
	expect_errors(MODEL1 "cluster:\n  devices: 4\n  device: h10\n",
		      "6:11: cluster.device: expected a100-40gb, a100, h100, "
		      "h100-pcie, h800, h200, b200, gb200, mi300x, or l40s, "
		      "got 'h10'; did you mean 'h100'?\n");
	expect_errors(MODEL1 "cluster:\n  devices: 4\n"
		      "  device: {preset: a10, memory_gib: 4}\n",
		      "6:20: cluster.device.preset: expected a100-40gb, a100, "
		      "h100, h100-pcie, h800, h200, b200, gb200, mi300x, or "
		      "l40s, got 'a10'; did you mean 'a100'?\n");
	expect_errors(MODEL1 "cluster:\n  devices: 4\n"
		      "  device: {name: x, tflops: 100, memory_gib: 80}\n",
		      "6:3: cluster.device: missing required key 'efficiency'\n"
		      "6:3: note: cluster.device: a preset gives the peak, the "
		      "efficiency and the memory: preset: NAME, one of "
		      "a100-40gb, a100, h100, h100-pcie, h800, h200, b200, "
		      "gb200, mi300x, or l40s (`ppcc devices` lists them)\n");
	expect_errors(MODEL1 "cluster:\n  groups:\n"
		      "    - {name: h100, count: 4, tflops: 989, memory_gib: 80}\n",
		      "6:7: cluster.groups[0]: missing required key "
		      "'efficiency'\n"
		      "6:7: note: cluster.groups[0]: the name 'h100' is only a "
		      "label; `preset: h100` gives that device's peak, "
		      "efficiency and memory\n");

	loaded r;
	load_text(&r, MODEL1 "cluster:\n  devices: 4\n"
		  "  device: {name: x, tflops: 1979, efficiency: 0.5, "
		  "memory_gib: 80}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_str_eq(r.diag.text,
			 "6:29: warning: cluster.device.tflops: 1979 TFLOP/s is "
			 "the NVIDIA H100 SXM5 80 GB's dense FP8 peak; tflops "
			 "is the dense 16-bit peak (989.4 on the h100; `preset: "
			 "h100` gives it)\n");
	done(&r);
	load_text(&r, MODEL1 "cluster:\n  devices: 4\n"
		  "  device: {name: x, tflops: 624, efficiency: 0.5, "
		  "memory_gib: 80}\n");
	ck_assert_msg(strstr(r.diag.text, "624 TFLOP/s is the NVIDIA A100 "
			     "SXM4 40 GB's 16-bit with sparsity peak"),
		      "%s", r.diag.text);
	done(&r);
	/* Gb/s typed for GB/s: above any link a device has, warned */
	load_text(&r, MODEL1 "cluster:\n  devices: 4\n  device: h100\n"
		  "  links: {inter_node: {bandwidth_gb_s: 400}, "
		  "intra_node: {bandwidth_gb_s: 7200}}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_str_eq(r.diag.text,
			 "7:40: warning: cluster.links.inter_node.bandwidth_gb_s: "
			 "400 GB/s is more than any device's network port "
			 "carries one way (800 Gb/s, 100 GB/s); if it is Gb/s, "
			 "that is 50 GB/s\n"
			 "7:75: warning: cluster.links.intra_node.bandwidth_gb_s: "
			 "7200 GB/s is more than any device's link in a node "
			 "carries one way (NVLink 5, 900 GB/s); if it is Gb/s, "
			 "that is 900 GB/s\n");
	ck_assert_double_eq(r.cfg.cluster.inter_node.bandwidth, 400e9);
	done(&r);
	/* a dense 16-bit peak of any row is not warned */
	load_text(&r, MODEL1 "cluster:\n  devices: 4\n"
		  "  device: {name: x, tflops: 989, efficiency: 0.5, "
		  "memory_gib: 80}\n");
	ck_assert_str_eq(r.diag.text, "");
	done(&r);
}
END_TEST

/* The catalogue's rows: every name found by itself, the peaks ordered as
 * the hardware's (TF32 about half of BF16 where published: B200's 1,100
 * is 2% under; FP8 about twice: L40S's 733 is 1% over), every
 * calibrated row's figures consistent, every uncalibrated row on the
 * stated default. */
START_TEST(device_catalogue_rows_are_consistent)
{
	const char *names[PPCC_MAX_DEVICE_PRESETS + 1];
	ck_assert_int_le(ppcc_n_device_presets, PPCC_MAX_DEVICE_PRESETS);
	ppcc_device_preset_names(names);
	ck_assert_ptr_null(names[ppcc_n_device_presets]);
	for (int i = 0; i < ppcc_n_device_presets; i++) {
		const ppcc_device_preset *p = &ppcc_device_presets[i];
		ck_assert_str_eq(names[i], p->name);
		ck_assert_ptr_eq(ppcc_device_preset_find(p->name,
							 strlen(p->name)), p);
		ck_assert_msg(p->tf32 == 0 || fabs(2 * p->tf32 - p->bf16) <=
			      0.03 * p->bf16, "%s: TF32 %g", p->name, p->tf32);
		ck_assert_msg(p->fp8 == 0 || fabs(p->fp8 - 2 * p->bf16) <=
			      0.03 * p->bf16, "%s: FP8 %g", p->name, p->fp8);
		ck_assert(p->memory_gib > 0 && p->memory_gb_s > 0 &&
			  p->node_devices > 0 && p->intra_gb_s > 0 &&
			  p->inter_gb_s >= 0);
		if (p->calibration)
			ck_assert(p->fitted_runs >= 2 * p->held_runs &&
				  p->held_runs > 0 && p->held_worst >=
				  p->held_error && p->efficiency > 0 &&
				  p->efficiency <= 1);
		else
			ck_assert(p->efficiency == PPCC_UNCALIBRATED_EFFICIENCY &&
				  p->fitted_runs == 0 && p->held_runs == 0);
	}
	ck_assert_ptr_null(ppcc_device_preset_find("h10", 3));
	ck_assert_ptr_null(ppcc_device_preset_find("h1000", 5));
}
END_TEST

/* Plausibility warnings, located, each with what to do: an efficiency
 * above 0.9 (a preset's with its calibrated figure; exactly 1 on a
 * device without a preset, an ideal device, is taken as asked), and a
 * model named as a preset (its name or label, in any case) whose
 * transformer differs from the preset's, naming each key and the
 * preset's value: here Llama 3.1 70B (80 layers, hidden 8192, 64 heads,
 * 8 kv heads, FFN 28672, vocab 128256, SwiGLU; meta-llama/
 * Meta-Llama-3.1-70B config.json, doc/design/models.md) with swiglu
 * left out and 40 layers. */
START_TEST(implausible_inputs_are_warned_with_a_suggestion)
{
	loaded r;
	load_text(&r, MODEL1 "cluster:\n  devices: 4\n"
		  "  device: {preset: h100, efficiency: 0.95}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_str_eq(r.diag.text,
			 "6:38: warning: cluster.device.efficiency: 0.95 of the "
			 "peak is more than a training step sustains on a real "
			 "device (above 0.9); give the fraction measured, or "
			 "leave it out for the h100 preset's 0.62\n");
	ck_assert_double_eq(r.cfg.cluster.groups[0].efficiency, 0.95);
	done(&r);
	/* a link faster than its preset's (h100: NVLink 450 GB/s, a 400
	 * Gb/s port's 50 GB/s); a slower one is a measurement, not warned */
	load_text(&r, MODEL1 "cluster:\n  devices: 16\n  device: h100\n"
		  "  links: {intra_node: {bandwidth_gb_s: 300}, inter_node: "
		  "{bandwidth_gb_s: 80}}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_str_eq(r.diag.text,
			 "7:75: warning: cluster.links.inter_node.bandwidth_gb_s: "
			 "80 GB/s is more than the device preset's network port "
			 "carries one way (50 GB/s); a measured rate is at most "
			 "that: leave the key out to take the preset's\n");
	ck_assert_double_eq(r.cfg.cluster.inter_node.bandwidth, 80e9);
	ck_assert_double_eq(r.cfg.cluster.intra_node.bandwidth, 300e9);
	done(&r);
	load_text(&r, MODEL1 "cluster:\n  groups:\n"
		  "    - {name: g, count: 4, tflops: 100, efficiency: 0.91, "
		  "memory_gib: 80}\n");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_str_eq(r.diag.text,
			 "6:52: warning: cluster.groups[0].efficiency: 0.91 of "
			 "the peak is more than a training step sustains on a "
			 "real device (above 0.9); give the fraction measured "
			 "(efficiency: 1, an ideal device, is taken without a "
			 "warning)\n");
	done(&r);
	/* a preset's device at its peak is no ideal device */
	load_text(&r, MODEL1 "cluster:\n  devices: 4\n"
		  "  device: {preset: a100, efficiency: 1}\n");
	ck_assert_msg(strstr(r.diag.text, "6:38: warning: cluster.device."
			     "efficiency: 1 of the peak"), "%s", r.diag.text);
	done(&r);
	/* not warned: 0.9, and 1 on a device of the file's own */
	load_text(&r, MODEL1 "cluster:\n  devices: 4\n"
		  "  device: {name: x, tflops: 100, efficiency: 0.9, "
		  "memory_gib: 80}\n");
	ck_assert_str_eq(r.diag.text, "");
	done(&r);
	load_text(&r, MODEL1 "cluster:\n  devices: 4\n"
		  "  device: {name: x, tflops: 100, efficiency: 1, "
		  "memory_gib: 80}\n");
	ck_assert_str_eq(r.diag.text, "");
	done(&r);

	static const char llama[] =
		"model:\n  name: %s\n  transformer: {layers: %d, hidden: 8192, "
		"heads: 64, kv_heads: 8, ffn_hidden: 28672, vocab: 128256, "
		"seq_len: 8192%s}\n"
		"cluster:\n  devices: 8\n  device: h100\n";
	char text[512];
	snprintf(text, sizeof text, llama, "Llama3-70B", 40, "");
	load_text(&r, text);
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ck_assert_str_eq(r.diag.text,
			 "2:9: warning: model.name: 'Llama3-70B' names the "
			 "llama3-70b preset, but the transformer differs from "
			 "it: layers 40 (the preset's 80), swiglu false (the "
			 "preset's true); for Llama 3.1 70B give `transformer: "
			 "{preset: llama3-70b}` (ppcc models), else name the "
			 "model otherwise\n");
	done(&r);
	/* the label names it too */
	snprintf(text, sizeof text, llama, "\"Llama 3.1 70B\"", 80, "");
	load_text(&r, text);
	ck_assert_msg(strstr(r.diag.text, "2:9: warning: model.name: 'Llama "
			     "3.1 70B' names the llama3-70b preset, but the "
			     "transformer differs from it: swiglu false (the "
			     "preset's true);"), "%s", r.diag.text);
	done(&r);
	/* the preset's shape, or another name: nothing */
	snprintf(text, sizeof text, llama, "llama3-70b", 80, ", swiglu: true");
	load_text(&r, text);
	ck_assert_str_eq(r.diag.text, "");
	done(&r);
	snprintf(text, sizeof text, llama, "my-70b", 40, "");
	load_text(&r, text);
	ck_assert_str_eq(r.diag.text, "");
	done(&r);
}
END_TEST

Suite *suite_load(void)
{
	Suite *s = suite_create("load");
	TCase *tc = tu_tcase(s, "load", 120, (const TTest *const[]){
		load_converts_units_and_fills_defaults,
		overlap_keys_take_their_values_and_refuse_what_is_not_modelled,
		fp8_is_refused_where_it_is_not_modelled,
		load_expands_repeat_in_place,
		device_preset_gives_the_row_and_a_mapping_overrides_a_field,
		nvls_follows_the_presets_and_only_theirs,
		device_preset_errors_name_the_catalogue,
		implausible_inputs_are_warned_with_a_suggestion,
		unmodelled_keys_are_refused_by_name,
		foreign_key_names_get_the_key_to_write,
		moe_layer_flops_params_and_all_to_all_by_hand,
		head_dim_sets_the_attention_width,
		moe_settings_are_checked,
		mla_layer_flops_and_params_by_hand,
		recompute_modules_drop_their_tensors_by_hand,
		sliding_window_layer_scores_by_hand,
		qk_norm_params_stash_and_kernels_by_hand,
		attention_kernels_at_their_measured_rates_by_hand,
		mtp_layer_params_and_flops_by_hand,
		mtp_blocks_are_windowed_as_megatron_numbers_them,
		expert_parallel_folds_into_the_stage,
		device_catalogue_rows_are_consistent,
		model_presets_match_published_parameter_counts,
		model_preset_fills_the_shape_and_keys_given_win,
		model_preset_errors_are_located,
		model_presets_plan_as_the_examples_spell_them,
		load_converts_ms_at_the_first_group_rate,
		load_records_where_each_pipeline_setting_came_from,
		load_accepts_plain_decimal_forms,
		load_reads_decimals_alike_in_a_comma_locale,
		transformer_matches_gpt3_published_figures,
		transformer_matches_llama2_70b_parameter_count,
		transformer_recompute_moves_cost_from_stash_to_backward,
		transformer_rejects_shapes_that_do_not_divide,
		loader_rejects_duplicate_key_citing_first_line,
		loader_suggests_near_key_for_unknown_key,
		loader_lists_keys_when_none_is_near,
		loader_rejects_bad_numbers_naming_path_and_position,
		loader_rejects_integers_that_are_not_integral_or_in_range,
		loader_checks_ranges_of_fractions_and_counts,
		loader_reports_missing_required_keys,
		loader_rejects_wrong_types,
		loader_rejects_device_and_groups_together,
		loader_rejects_fwd_flops_and_fwd_ms_together,
		loader_reads_the_backward_in_two_parts,
		loader_reports_every_error_in_file_order,
		loader_lists_at_most_100_errors_and_counts_the_rest,
		loader_suggests_schedule_names,
		loader_stops_deep_nesting_fast,
		loader_rejects_billion_laughs_at_first_anchor,
		loader_rejects_nul_byte_and_bad_encodings,
		loader_rejects_tab_indentation,
		loader_counts_lines_alike_with_crlf_bom_and_lf,
		loader_rejects_tags_documents_and_syntax_errors,
		loader_rejects_file_over_the_size_limit,
		loader_rejects_repeat_beyond_the_layer_limit,
		loader_names_unreadable_files,
		loader_reads_stdin_as_dash,
		loader_takes_cluster_from_cluster_file,
		loader_refuses_overflowing_reals_it_does_not_read,
		loader_reports_cluster_file_errors_under_its_name,
		loader_fails_cleanly_at_every_allocation,
		check_accepts_a_consistent_configuration,
		check_rejects_more_stages_than_layers_or_devices,
		check_rejects_chunks_outside_the_interleaved_schedule,
		check_rejects_each_broken_interleaved_constraint,
		check_rejects_tensor_groups_straddling_device_groups,
		check_points_overrides_at_the_command_line,
		fill_defaults_gives_interleaved_two_chunks,
		man_page_example_files_load,
		transformer_norm_and_position_follow_their_keys,
		NULL});
	tcase_add_checked_fixture(tc, setup, teardown);
	return s;
}
