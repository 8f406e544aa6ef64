/*
 * check_stream.c - the streaming JSON writer and reader, and the lean
 * plan they serve.
 *
 * The writer must give the bytes jansson gives for the same values: its
 * reals are compared with jansson's json_dumps on values of every
 * magnitude, including ties and carries at the last digit, and its
 * strings on every ASCII byte and multi-byte UTF-8.  The plan keeps one
 * schedule and replays action times: the schedule must equal the one
 * ppcc_schedule_build makes for the chosen stages, and the replayed times
 * must equal a full simulation's, bit for bit.
 */
#include <check.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_write.h"
#include "ppcc.h"
#include "testutil.h"

/* What jansson writes for the real x at precision P. */
static char *jansson_real(double x, int P)
{
	json_t *v = json_real(x);
	ck_assert_ptr_nonnull(v);
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT |
				     JSON_REAL_PRECISION(P));
	json_decref(v);
	ck_assert_ptr_nonnull(s);
	return s;
}

static void same_real(double x, int P)
{
	char mine[40];
	ppcc_jw_format_real(mine, x, P);
	char *theirs = jansson_real(x, P);
	ck_assert_msg(strcmp(mine, theirs) == 0, "%.17g at %d digits: %s, jansson %s",
		      x, P, mine, theirs);
	free(theirs);
}

/* xorshift: the same values on every run */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

START_TEST(writer_reals_match_jansson_at_12_and_15_digits)
{
	static const double fixed[] = {
		0.1, 0.5, 1.5, 2.5, 0.0001, 0.00012345678901234, 0.000099999999999999,
		9.99999999999949, 9.9999999999995, 99999999999.95, 999999999999.5,
		123456789012.5, 1e11, 1e12, 1e15, 0.3, 1.0 / 3, 2.0 / 3, 1e-5,
		181.82, 34.97, 0.017, 1.000000000005, 1.0000000000005, 5e-324,
		DBL_MAX, -0.0, -1.25, -123.456, 4.35, 0.015625, 1e300,
	};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		same_real(fixed[i], 12);
		same_real(fixed[i], 15);
	}
	/* every magnitude, random mantissas */
	for (int i = 0; i < 200000; i++) {
		uint64_t bits = rng();
		int e = (int)(rng() % 48) - 20; /* 1e-20 .. 1e27 */
		double x = ((double)(bits >> 11) / 9007199254740992.0 + 1) * pow(10, e);
		if (i & 1)
			x = -x;
		same_real(x, 12);
		same_real(x, 15);
	}
	/* decimal values and sums of them, as times in ms are: many ties and
	 * near ties at the 12th digit */
	for (int i = 0; i < 200000; i++) {
		double x = (double)(rng() % 100000000) / 1000.0;
		x += (double)(rng() % 1000) * 0.017;
		same_real(x, 12);
		same_real(x * 1000.0, 15);
		same_real((double)(rng() % 10000000) * 0.5e-3, 12);
	}
}
END_TEST

static char *jansson_string(const char *s, size_t n)
{
	json_t *v = json_stringn(s, n);
	ck_assert_ptr_nonnull(v);
	char *out = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(v);
	ck_assert_ptr_nonnull(out);
	return out;
}

static char *writer_output(void (*fn)(ppcc_jw *, const void *), const void *arg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	ppcc_jw *w = malloc(sizeof *w);
	ck_assert_ptr_nonnull(w);
	ppcc_jw_init(w, f);
	fn(w, arg);
	ck_assert_int_eq(ppcc_jw_flush(w), 0);
	free(w);
	fclose(f);
	return text;
}

typedef struct str_arg {
	const char *s;
	size_t n;
} str_arg;

static void write_str(ppcc_jw *w, const void *arg)
{
	const str_arg *a = arg;
	ppcc_jw_string_n(w, a->s, a->n);
}

START_TEST(writer_strings_match_jansson)
{
	char all[200];
	size_t n = 0;
	for (int c = 0; c < 128; c++)
		all[n++] = (char)c; /* NUL too: jansson escapes it */
	const char *utf8 = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 \xe2\x80\xa8/\\\"";
	memcpy(all + n, utf8, strlen(utf8));
	n += strlen(utf8);
	str_arg a = {all, n};
	char *mine = writer_output(write_str, &a);
	char *theirs = jansson_string(all, n);
	ck_assert_str_eq(mine, theirs);
	free(mine);
	free(theirs);
}
END_TEST

static void write_many(ppcc_jw *w, const void *arg)
{
	(void)arg;
	for (int i = 0; i < 100000; i++) {
		ppcc_jw_int(w, i - 50000);
		ppcc_jw_raw(w, ",");
	}
	ppcc_jw_int(w, INT64_MIN);
	ppcc_jw_raw(w, ",");
	ppcc_jw_int(w, INT64_MAX);
}

START_TEST(writer_integers_and_long_output_cross_buffers)
{
	char *mine = writer_output(write_many, NULL);
	char *p = mine;
	for (int i = 0; i < 100000; i++) {
		char *end;
		long long v = strtoll(p, &end, 10);
		ck_assert_int_eq(v, i - 50000);
		ck_assert(*end == ',');
		p = end + 1;
	}
	ck_assert_str_eq(p, "-9223372036854775808,9223372036854775807");
	free(mine);
}
END_TEST


/* ---- the lean plan ------------------------------------------------------ */

static const char *const examples[] = {
	"examples/tiny.yaml", "examples/hetero.yaml", "examples/llama2-70b.yaml",
};
static const int kinds[] = {PPCC_SCHED_GPIPE, PPCC_SCHED_1F1B,
			    PPCC_SCHED_INTERLEAVED};

/* examples[i / 3] under kinds[i % 3]; 0 when that has no plan */
static int plan_case(ppcc_plan *p, ppcc_arena *a, ppcc_config *cfg, int i)
{
	tu_diag diag;
	tu_diag_init(&diag);
	char full[4096];
	snprintf(full, sizeof full, "%s/%s", tu_src(), examples[i / 3]);
	ck_assert_int_eq(ppcc_config_load(cfg, a, full, NULL, &diag.d), 0);
	cfg->pipeline.kind = kinds[i % 3];
	cfg->pipeline.kind_loc = (ppcc_loc){"<test>", 0, 0};
	if (kinds[i % 3] == PPCC_SCHED_INTERLEAVED) {
		cfg->pipeline.chunks = 2;
		cfg->pipeline.chunks_loc = (ppcc_loc){"<test>", 0, 0};
	} else {
		cfg->pipeline.chunks = 1;
	}
	if (ppcc_config_check(cfg, &diag.d) < 0)
		return 0;
	return ppcc_plan_build(p, a, cfg, &diag.d) == 0;
}

/* The one schedule of a plan (built before the split, then given the
 * chosen stages' bytes) is the schedule built for those stages. */
START_TEST(plan_schedule_equals_schedule_built_for_its_stages)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_config cfg;
	ppcc_plan p;
	if (plan_case(&p, a, &cfg, _i)) {
		const ppcc_schedule *s = &p.best.schedule;
		tu_assert_rebuilt_schedule(s, a, cfg.pipeline.group_size,
					   p.best.stages, examples[_i / 3]);
		ck_assert(ppcc_schedule_fingerprint(s) == s->fingerprint);
		/* and the bytes are the stages' own: not all zero */
		int nonzero = 0;
		for (int r = 0; r < s->n_ranks; r++)
			for (int k = 0; k < s->ranks[r].n_actions; k++)
				nonzero |= s->ranks[r].actions[k].bytes != 0;
		ck_assert(nonzero || s->n_ranks == 1);
	}
	ppcc_arena_free(a);
}
END_TEST

/* Times replayed from the send times are a full simulation's, bit for
 * bit; the plan keeps no per-action times. */
START_TEST(replayed_times_equal_full_simulation)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_config cfg;
	ppcc_plan p;
	if (plan_case(&p, a, &cfg, _i)) {
		const ppcc_schedule *s = &p.best.schedule;
		const ppcc_estimate *lean = &p.best.estimate;
		ck_assert_ptr_null(lean->start_ms);
		ck_assert_ptr_nonnull(lean->send_ms);
		ppcc_estimate full;
		ck_assert_int_eq(ppcc_simulate(&full, a, s, p.best.costs), 0);
		ck_assert(full.step_ms == lean->step_ms);
		long compared = 0;
		for (int r = 0; r < s->n_ranks; r++) {
			ppcc_rank_times t;
			ck_assert_int_eq(ppcc_rank_times_begin(&t, s, p.best.costs,
							       lean, r), 0);
			for (int k = 0; k < s->ranks[r].n_actions; k++) {
				double t0, t1;
				ck_assert_int_eq(ppcc_rank_times_at(&t, k, &t0, &t1), 0);
				ck_assert_msg(t0 == full.start_ms[r][k] &&
					      t1 == full.end_ms[r][k],
					      "rank %d action %d: %.17g..%.17g, "
					      "simulated %.17g..%.17g", r, k, t0, t1,
					      full.start_ms[r][k], full.end_ms[r][k]);
				compared++;
			}
			/* no going back */
			if (s->ranks[r].n_actions > PPCC_TIMES_BLOCK) {
				double t0, t1;
				ck_assert_int_eq(ppcc_rank_times_at(&t, 0, &t0, &t1),
						 PPCC_EINTERNAL);
			}
		}
		ck_assert(compared > 0);
	}
	ppcc_arena_free(a);
}
END_TEST

/* The same across replay blocks that split an overlapped pair (DualPipeV
 * hiding a mixture of experts' all-to-alls: 123 pairs on rank 0 of 733
 * actions) and that split a run of reductions from the backward that
 * readies it: a block carries both on. */
START_TEST(replayed_times_equal_full_simulation_across_pairs)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_config cfg;
	ppcc_plan p;
	tu_diag diag;
	tu_diag_init(&diag);
	char *dir = tu_mkdtemp(), path[4096];
	tu_write_in(path, sizeof path, dir, "moe.yaml",
		    "model:\n  transformer: {preset: mixtral-8x7b, seq_len: 2048}\n"
		    "cluster:\n  devices: 16\n  device: h100\n"
		    "pipeline: {stages: 2, chunks: 2, schedule: dualpipe-v, "
		    "data_parallel: 8, expert_parallel: 8, "
		    "expert_tensor_parallel: 1, microbatches: 64}\n");
	ck_assert_int_eq(ppcc_config_load(&cfg, a, path, NULL, &diag.d), 0);
	ck_assert_int_eq(ppcc_config_check(&cfg, &diag.d), 0);
	ck_assert_msg(ppcc_plan_build(&p, a, &cfg, &diag.d) == 0, "%s", diag.text);
	const ppcc_schedule *s = &p.best.schedule;
	ck_assert(p.best.costs[0].ep_hidden_share > 0);
	ppcc_estimate full;
	ck_assert_int_eq(ppcc_simulate(&full, a, s, p.best.costs), 0);
	for (int r = 0; r < s->n_ranks; r++) {
		ck_assert(s->ranks[r].n_actions > 2 * PPCC_TIMES_BLOCK);
		ppcc_rank_times t;
		ck_assert_int_eq(ppcc_rank_times_begin(&t, s, p.best.costs,
						       &p.best.estimate, r), 0);
		for (int k = 0; k < s->ranks[r].n_actions; k++) {
			double t0, t1;
			ck_assert_int_eq(ppcc_rank_times_at(&t, k, &t0, &t1), 0);
			ck_assert_msg(t0 == full.start_ms[r][k] &&
				      t1 == full.end_ms[r][k],
				      "rank %d action %d: %.17g..%.17g, simulated "
				      "%.17g..%.17g", r, k, t0, t1,
				      full.start_ms[r][k], full.end_ms[r][k]);
		}
	}
	tu_rmtree_free(dir);
	ppcc_arena_free(a);
}
END_TEST

/* The uniform split's figures, simulated on best's lists, are those of
 * its own schedule, built, validated and simulated in full. */
START_TEST(uniform_figures_equal_its_own_schedule)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_config cfg;
	ppcc_plan p;
	if (plan_case(&p, a, &cfg, _i)) {
		const ppcc_plan_variant *u = &p.uniform;
		const ppcc_schedule *s = &p.best.schedule;
		ck_assert_ptr_null(u->schedule.ranks);
		ppcc_schedule own;
		ck_assert_int_eq(ppcc_schedule_build(&own, a, s->kind, s->n_ranks,
						     s->n_chunks, s->n_microbatches,
						     cfg.pipeline.group_size,
						     u->stages), 0);
		ck_assert_int_eq(ppcc_schedule_validate(&own, NULL, "uniform", 5), 0);
		ppcc_estimate e;
		ck_assert_int_eq(ppcc_simulate(&e, a, &own, u->costs), 0);
		ck_assert(e.step_ms == u->estimate.step_ms);
		ck_assert(e.bubble_fraction == u->estimate.bubble_fraction);
		for (int r = 0; r < s->n_ranks; r++) {
			ck_assert(e.peak_memory_bytes[r] == u->estimate.peak_memory_bytes[r]);
			ck_assert(e.busy_ms[r] == u->estimate.busy_ms[r]);
			ck_assert(e.idle_ms[r] == u->estimate.idle_ms[r]);
		}
	}
	ppcc_arena_free(a);
}
END_TEST

/* ---- the streaming reader --------------------------------------------- */

typedef struct read_result {
	int status;
	tu_diag diag;
	ppcc_plan plan;
	ppcc_arena *a;
} read_result;

static void read_text(read_result *r, const char *dir, const char *name,
		      const char *text)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	ck_assert_int_eq(tu_write_file(path, text), 0);
	tu_diag_init(&r->diag);
	r->a = ppcc_arena_new();
	r->status = ppcc_read_json(&r->plan, r->a, path, &r->diag.d);
}

/* The smallest valid schedule: one rank, one stage, one microbatch. */
#define ONE_F "{\"op\": \"F\", \"stage\": 0, \"mb\": 0}"
#define ONE_B "{\"op\": \"B\", \"stage\": 0, \"mb\": 0}"
#define PART "[{\"stage\": 0, \"rank\": 0, \"chunk\": 0, \"first_layer\": 0, " \
	"\"last_layer\": 0, \"recv_bytes\": 0, \"send_bytes\": 0, \"fwd_ms\": 1, \"bwd_ms\": 2}]"

/* Keys in any order: the ranks before the header, the header's keys
 * reversed, unknown keys and nested values between them. */
START_TEST(reader_takes_keys_in_any_order)
{
	char *dir = tu_mkdtemp();
	read_result a, b;
	read_text(&a, dir, "plain.json",
		  "{\"format\": \"ppcc-schedule\", \"version\": 1, \"schedule\": \"gpipe\", "
		  "\"stages\": 1, \"chunks\": 1, \"microbatches\": 1, \"partition\": " PART ", "
		  "\"ranks\": [{\"rank\": 0, \"actions\": [" ONE_F ", " ONE_B "]}]}");
	ck_assert_msg(a.status == 0, "%s", a.diag.text);
	read_text(&b, dir, "shuffled.json",
		  "{\"ranks\": [{\"x\": {\"rank\": 7, \"actions\": 3}, "
		  "\"actions\": [{\"mb\": 0, \"y\": [1, {\"op\": 2}], \"stage\": 0, \"op\": \"F\"}, "
		  "{\"stage\": 0, \"op\": \"B\", \"mb\": 0}], \"rank\": 0}], "
		  "\"partition\": " PART ", \"microbatches\": 1, \"chunks\": 1, "
		  "\"stages\": 1, \"schedule\": \"gpipe\", \"version\": 1, "
		  "\"format\": \"ppcc-schedule\"}");
	ck_assert_msg(b.status == 0, "%s", b.diag.text);
	ck_assert(a.plan.best.schedule.fingerprint == b.plan.best.schedule.fingerprint);
	ck_assert_int_eq(b.plan.best.schedule.ranks[0].n_actions, 2);
	ck_assert_int_eq(b.plan.best.schedule.ranks[0].actions[1].op, PPCC_OP_B);
	ppcc_arena_free(a.a);
	ppcc_arena_free(b.a);
	tu_rmtree_free(dir);
}
END_TEST

/* A bad header is reported alone, even when bad actions come before it;
 * with a good header, a rank's own errors come before its actions'. */
START_TEST(reader_holds_back_errors_until_the_header_is_known)
{
	char *dir = tu_mkdtemp();
	read_result r;
	read_text(&r, dir, "bad-header.json",
		  "{\"ranks\": [{\"rank\": 0, \"actions\": [{\"op\": \"Z\"}]}], "
		  "\"format\": \"ppcc-schedule\", \"version\": 6, \"schedule\": \"gpipe\", "
		  "\"stages\": 1, \"chunks\": 1, \"microbatches\": 1, \"partition\": " PART "}");
	ck_assert_int_eq(r.status, PPCC_EINPUT);
	ck_assert_str_eq(r.diag.text, "1:90: error: version: 6 is out of range [1, 5]\n");
	ppcc_arena_free(r.a);
	read_text(&r, dir, "bad-rank.json",
		  "{\"format\": \"ppcc-schedule\", \"version\": 1, \"schedule\": \"gpipe\", "
		  "\"stages\": 1, \"chunks\": 1, \"microbatches\": 1, \"partition\": " PART ", "
		  "\"ranks\": [{\"actions\": [{\"op\": \"Z\", \"stage\": 0, \"mb\": 0}], \"rank\": 3}]}");
	ck_assert_int_eq(r.status, PPCC_EINPUT);
	ck_assert_str_eq(r.diag.text,
			 "0:0: error: ranks[0].rank: 3 is out of range [0, 0]\n"
			 "0:0: error: ranks[0].actions[0].op: unknown op 'Z' (F, B, I, W, "
			 "SEND_F, RECV_F, SEND_B, RECV_B, OVERLAP_F_B, REDUCE_GRAD, "
			 "REDUCE_SCATTER_GRAD, ALL_GATHER_PARAM or UNSHARD_PARAM)\n");
	ppcc_arena_free(r.a);
	tu_rmtree_free(dir);
}
END_TEST

/* A string under an action's stage or mb is that field's error alone:
 * the op written before it is still the op (it was once taken for the
 * op's text, "unknown op 'x'" beside the field's own error), and an op
 * is named by its exact letters, whatever its length or case. */
START_TEST(reader_reports_a_string_field_of_an_action_as_that_field)
{
	char *dir = tu_mkdtemp();
	read_result r;
	read_text(&r, dir, "string-stage.json",
		  "{\"format\": \"ppcc-schedule\", \"version\": 1, \"schedule\": \"gpipe\", "
		  "\"stages\": 1, \"chunks\": 1, \"microbatches\": 1, \"partition\": " PART ", "
		  "\"ranks\": [{\"rank\": 0, \"actions\": [{\"op\": \"F\", \"stage\": \"x\", "
		  "\"mb\": 0}, {\"op\": \"B\", \"stage\": 0, \"mb\": \"SEND_F\"}]}]}");
	ck_assert_int_eq(r.status, PPCC_EINPUT);
	ck_assert_str_eq(r.diag.text,
			 "0:0: error: ranks[0].actions[0].stage: expected an integer\n"
			 "0:0: error: ranks[0].actions[1].mb: expected an integer\n");
	ppcc_arena_free(r.a);
	read_text(&r, dir, "near-ops.json",
		  "{\"format\": \"ppcc-schedule\", \"version\": 1, \"schedule\": \"gpipe\", "
		  "\"stages\": 1, \"chunks\": 1, \"microbatches\": 1, \"partition\": " PART ", "
		  "\"ranks\": [{\"rank\": 0, \"actions\": [{\"op\": \"SEND_FF\", \"stage\": 0, "
		  "\"mb\": 0}, {\"op\": \"f\", \"stage\": 0, \"mb\": 0}, "
		  "{\"op\": \"RECV_D\", \"stage\": 0, \"mb\": 0}, "
		  "{\"op\": \"REDUCE_SCATTER_GRAB\", \"stage\": 0, \"mb\": 0}]}]}");
	ck_assert_int_eq(r.status, PPCC_EINPUT);
#define OPS " (F, B, I, W, SEND_F, RECV_F, SEND_B, RECV_B, OVERLAP_F_B, " \
	    "REDUCE_GRAD, REDUCE_SCATTER_GRAD, ALL_GATHER_PARAM or UNSHARD_PARAM)\n"
	ck_assert_str_eq(r.diag.text,
			 "0:0: error: ranks[0].actions[0].op: unknown op 'SEND_FF'" OPS
			 "0:0: error: ranks[0].actions[1].op: unknown op 'f'" OPS
			 "0:0: error: ranks[0].actions[2].op: unknown op 'RECV_D'" OPS
			 "0:0: error: ranks[0].actions[3].op: unknown op "
			 "'REDUCE_SCATTER_GRAB'" OPS);
#undef OPS
	ppcc_arena_free(r.a);
	tu_rmtree_free(dir);
}
END_TEST

/* Duplicates are refused in every object, known key or not, at any depth;
 * the same key in sibling objects is not a duplicate. */
START_TEST(reader_refuses_duplicate_keys_at_any_depth)
{
	char *dir = tu_mkdtemp();
	read_result r;
	read_text(&r, dir, "siblings.json",
		  "{\"format\": \"ppcc-schedule\", \"version\": 1, \"schedule\": \"gpipe\", "
		  "\"stages\": 1, \"chunks\": 1, \"microbatches\": 1, \"partition\": " PART ", "
		  "\"estimate\": [{\"k\": 1, \"j\": {\"k\": 2}}, {\"k\": 3}], "
		  "\"ranks\": [{\"rank\": 0, \"actions\": [" ONE_F ", " ONE_B "]}]}");
	ck_assert_msg(r.status == 0, "%s", r.diag.text);
	ppcc_arena_free(r.a);
	read_text(&r, dir, "deep-dup.json",
		  "{\"estimate\": [{\"k\": 1, \"j\": {\"k\": 2}}, {\"k\": 3,\n \"k\": 4}]}");
	ck_assert_int_eq(r.status, PPCC_EINPUT);
	ck_assert_str_eq(r.diag.text, "2:4: error: duplicate object key near '\"k\"'\n");
	ppcc_arena_free(r.a);
	read_text(&r, dir, "action-dup.json",
		  "{\"ranks\": [{\"actions\": [{\"op\": \"F\", \"op\": \"B\"}]}]}");
	ck_assert_int_eq(r.status, PPCC_EINPUT);
	ck_assert_str_eq(r.diag.text, "1:40: error: duplicate object key near '\"op\"'\n");
	ppcc_arena_free(r.a);
	tu_rmtree_free(dir);
}
END_TEST

/* An error far into a document that spans many read blocks is placed at
 * its line and column. */
START_TEST(reader_places_an_error_across_read_blocks)
{
	size_t n = 200000, cap = n * 40 + 1000, len = 0;
	char *text = malloc(cap);
	ck_assert_ptr_nonnull(text);
	len += (size_t)snprintf(text + len, cap - len, "{\"estimate\": [\n");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, "  {\"x\": %zu},\n", i);
	len += (size_t)snprintf(text + len, cap - len, "  {\"x\": tru}]}\n");
	ck_assert(len > 4 * (1 << 18)); /* several blocks */
	char *dir = tu_mkdtemp();
	read_result r;
	read_text(&r, dir, "long.json", text);
	ck_assert_int_eq(r.status, PPCC_EINPUT);
	char want[64];
	snprintf(want, sizeof want, "%zu:", n + 2);
	ck_assert_msg(strncmp(r.diag.text, want, strlen(want)) == 0, "%s", r.diag.text);
	ppcc_arena_free(r.a);
	tu_rmtree_free(dir);
	free(text);
}
END_TEST

/* The header's errors are placed at their value's line and column, a
 * missing key at the document's '{', a value past the first block of
 * 256 KiB (a number begun in one block and ended in the next, a string
 * with escaped quotes) as exactly as one in it. */
START_TEST(reader_places_header_errors_at_their_values)
{
	char *dir = tu_mkdtemp();
	read_result r;
	read_text(&r, dir, "header.json",
		  "{\n"
		  "  \"format\": \"ppcc-schedule\",\n"
		  "  \"version\":   6,\n"
		  "  \"schedule\": \"gp\\\"ipe\",\n"
		  "  \"stages\": true, \"chunks\": 1, \"microbatches\": 0,\n"
		  "  \"partition\": [], \"ranks\": []\n"
		  "}\n");
	ck_assert_int_eq(r.status, PPCC_EINPUT);
	ck_assert_str_eq(r.diag.text,
			 "3:16: error: version: 6 is out of range [1, 5]\n"
			 "4:15: error: schedule: expected gpipe, 1f1b, interleaved, "
			 "zb-h1, zb-h2, zb-v, zb-interleaved, auto, dualpipe-v, "
			 "dualpipe or combined-1f1b\n"
			 "5:13: error: stages: expected an integer\n"
			 "5:48: error: microbatches: 0 is out of range [1, 16777216]\n");
	ppcc_arena_free(r.a);
	read_text(&r, dir, "counts.json",
		  "{\"format\": \"ppcc-schedule\", \"version\": 1, \"schedule\": \"gpipe\",\n"
		  " \"stages\": 1, \"chunks\": 1, \"microbatches\": 1,\n"
		  " \"partition\": [], \"ranks\": {}}");
	ck_assert_str_eq(r.diag.text,
			 "3:15: error: partition: expected one entry per virtual stage\n"
			 "3:28: error: ranks: expected an array\n");
	ppcc_arena_free(r.a);
	read_text(&r, dir, "missing.json", "\n  {\"format\": \"ppcc-schedule\", "
		  "\"version\": 1, \"schedule\": \"gpipe\", \"chunks\": 1, "
		  "\"microbatches\": 1}");
	ck_assert_str_eq(r.diag.text, "2:3: error: stages: missing\n");
	ppcc_arena_free(r.a);
	/* "version": 12345 with its digits either side of byte 2^18 */
	size_t block = (size_t)1 << 18;
	char *text = malloc(block + 200);
	ck_assert_ptr_nonnull(text);
	const char *head = "{\"model\": \"", *tail = "\",\n\"version\": 1";
	size_t len = strlen(head), pad = block - len - strlen(tail);
	memcpy(text, head, len);
	memset(text + len, 'm', pad);
	len += pad;
	snprintf(text + len, 200, "\",\n\"version\": 12345, \"format\": "
		 "\"ppcc-schedule\", \"schedule\": \"x\\\\\\\"y\"}");
	ck_assert(strstr(text, "12345") - text == (ptrdiff_t)block - 1);
	read_text(&r, dir, "across.json", text);
	ck_assert_msg(strstr(r.diag.text, "2:12: error: version: 12345 is out of "
			     "range [1, 5]\n") == r.diag.text, "%s", r.diag.text);
	ck_assert_msg(strstr(r.diag.text, "\n2:58: error: schedule: expected "),
		      "%s", r.diag.text);
	ppcc_arena_free(r.a);
	free(text);
	tu_rmtree_free(dir);
}
END_TEST

/* The hostile-input limits: nesting, NUL, numbers out of range. */
START_TEST(reader_keeps_the_hostile_input_limits)
{
	static const struct {
		const char *name, *text, *want;
	} cases[] = {
		{"nul", "{\"model\": \"a\\u0000b\"}", "1:20: error: \\u0000 is not allowed in a string\n"},
		{"bigint", "{\"version\": 99999999999999999999}",
		 "1:32: error: too big integer\n"},
		{"bigreal", "{\"version\": 1e999}", "1:17: error: real number overflow near '1e999'\n"},
		/* values that are counted, not kept: an unknown key's, one
		 * nested under it, an action's times */
		{"bigreal-unknown", "{\"nosuch\": -1e999}", "1:17: error: real number overflow near '-1e999'\n"},
		{"bigreal-nested", "{\"nosuch\": [1, 2e400]}", "1:20: error: real number overflow near '2e400'\n"},
		{"bigreal-time", "{\"ranks\": [{\"actions\": [{\"op\": \"F\", \"start_ms\": 1E309}]}]}",
		 "1:53: error: real number overflow near '1E309'\n"},
		{"scalar", "3", "1:1: error: '[' or '{' expected\n"},
		{"empty", "", "1:1: error: '[' or '{' expected near end of file\n"},
		{"trailing", "{} {}", "1:4: error: end of file expected\n"},
	};
	char *dir = tu_mkdtemp();
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		read_result r;
		read_text(&r, dir, cases[i].name, cases[i].text);
		ck_assert_int_eq(r.status, PPCC_EINPUT);
		ck_assert_msg(strcmp(r.diag.text, cases[i].want) == 0, "%s: %s",
			      cases[i].name, r.diag.text);
		ppcc_arena_free(r.a);
	}
	/* 2048 levels are read, 2049 are not */
	size_t depth = 2049;
	char *deep = malloc(2 * depth + 1);
	ck_assert_ptr_nonnull(deep);
	for (int k = 0; k < 2; k++) {
		size_t d = depth - 1 + (size_t)k;
		memset(deep, '[', d);
		memset(deep + d, ']', d);
		deep[2 * d] = '\0';
		read_result r;
		read_text(&r, dir, "deep", deep);
		if (k == 0) {
			/* an array at the top: read, then refused as not an object */
			ck_assert_str_eq(r.diag.text, "1:1: error: (document): expected an object\n");
		} else {
			ck_assert_str_eq(r.diag.text,
					 "1:2049: error: maximum parsing depth reached near '['\n");
		}
		ppcc_arena_free(r.a);
	}
	free(deep);
	tu_rmtree_free(dir);
}
END_TEST

Suite *suite_stream(void)
{
	Suite *s = tu_suite("stream", "writer", 120, (const TTest *const[]){
		writer_reals_match_jansson_at_12_and_15_digits,
		writer_strings_match_jansson,
		writer_integers_and_long_output_cross_buffers,
		NULL});
	TCase *p = tu_tcase(s, "plan", 120, (const TTest *const[]){NULL});
	int n = (int)(sizeof examples / sizeof examples[0]) * 3;
	tcase_add_loop_test(p, plan_schedule_equals_schedule_built_for_its_stages, 0, n);
	tcase_add_loop_test(p, replayed_times_equal_full_simulation, 0, n);
	tcase_add_test(p, replayed_times_equal_full_simulation_across_pairs);
	tcase_add_loop_test(p, uniform_figures_equal_its_own_schedule, 0, n);
	tu_tcase(s, "reader", 0, (const TTest *const[]){
		reader_takes_keys_in_any_order,
		reader_holds_back_errors_until_the_header_is_known,
		reader_reports_a_string_field_of_an_action_as_that_field,
		reader_refuses_duplicate_keys_at_any_depth,
		reader_places_an_error_across_read_blocks,
		reader_places_header_errors_at_their_values,
		reader_keeps_the_hostile_input_limits,
		NULL});
	return s;
}
