/*
 * ppcc search (search.c): pruning returns the same top K as simulating
 * every candidate; every configuration it prints, pasted into the model
 * file as its pipeline: and transformer settings, plans (ppcc plan) to
 * the iteration it printed, and none of them is faster than the winner.
 */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

Suite *suite_search(void);

static int search_example(ppcc_search_result *r, ppcc_arena *a,
			  ppcc_config *cfg, const char *example,
			  const ppcc_search_options *o)
{
	tu_diag diag;
	tu_diag_init(&diag);
	char path[4096];
	snprintf(path, sizeof path, "%s/examples/%s", tu_src(), example);
	ck_assert_int_eq(ppcc_config_load(cfg, a, path, NULL, &diag.d), 0);
	int err = ppcc_search(r, a, cfg, o, &diag.d);
	ck_assert_msg(err == 0, "%s: %s", example, diag.text);
	return err;
}

START_TEST(pruning_keeps_the_exhaustive_top_k)
{
	ppcc_search_options o = {.top = 3,
				 .fix = {.recompute = -1, .zero = 1, .kind = -1}};
	ppcc_arena *a = ppcc_arena_new();
	ppcc_config cfg;
	ppcc_search_result pruned, all;
	search_example(&pruned, a, &cfg, "llama3-70b.yaml", &o);
	o.exhaustive = 1;
	search_example(&all, a, &cfg, "llama3-70b.yaml", &o);
	/* the pruning did prune, by both bounds, and the exhaustive run
	 * simulated every candidate the checks accept */
	ck_assert_int_gt(pruned.pruned_bound, 0);
	ck_assert_int_gt(pruned.pruned_memory, 0);
	ck_assert_int_lt(pruned.simulated, all.simulated);
	ck_assert_int_eq(all.pruned_bound + all.pruned_memory, 0);
	ck_assert_int_eq(all.simulated + all.invalid, all.considered);
	ck_assert_int_eq(pruned.n_top, 3);
	ck_assert_int_eq(all.n_top, 3);
	for (int i = 0; i < 3; i++) {
		const ppcc_search_entry *p = &pruned.top[i], *e = &all.top[i];
		ck_assert_msg(p->t == e->t && p->p == e->p && p->d == e->d &&
			      p->v == e->v && p->b == e->b && p->m == e->m &&
			      p->recompute == e->recompute && p->zero == e->zero &&
			      p->kind == e->kind &&
			      p->iteration_ms == e->iteration_ms,
			      "rank %d: pruned t %d p %d v %d b %d %s %.3f ms, "
			      "exhaustive t %d p %d v %d b %d %s %.3f ms", i + 1,
			      p->t, p->p, p->v, p->b,
			      ppcc_schedule_kind_name(p->kind), p->iteration_ms,
			      e->t, e->p, e->v, e->b,
			      ppcc_schedule_kind_name(e->kind), e->iteration_ms);
		/* the bound it was ordered by holds */
		ck_assert(e->lower_bound_ms <= e->iteration_ms);
	}
	ppcc_arena_free(a);
}
END_TEST

/* src with `key: old` replaced by `key: new` (the first), as a malloc'd
 * string. */
static char *replace_line(const char *src, const char *old, const char *new)
{
	const char *at = strstr(src, old);
	ck_assert_msg(at, "no '%s' in the example", old);
	size_t n = strlen(src) - strlen(old) + strlen(new) + 1;
	char *out = malloc(n);
	ck_assert_ptr_nonnull(out);
	snprintf(out, n, "%.*s%s%s", (int)(at - src), src, new, at + strlen(old));
	return out;
}

START_TEST(printed_configurations_plan_to_their_figures_and_the_winner_leads)
{
	char *dir = tu_mkdtemp();
	char model[4096], out[4096], yaml[4096];
	snprintf(model, sizeof model, "%s/examples/hetero.yaml", tu_src());
	snprintf(out, sizeof out, "%s/search.json", dir);
	char *argv[] = {(char *)tu_ppcc(), "search", model, "--global-batch", "16",
			"--top", "6", "-f", "json", "-o", out, NULL};
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 120, argv), 0);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
	json_error_t je;
	json_t *j = json_load_file(out, JSON_REJECT_DUPLICATES, &je);
	ck_assert_msg(j, "%d: %s", je.line, je.text);
	ck_assert_str_eq(json_string_value(json_object_get(j, "format")),
			 "ppcc-search");
	json_t *top = json_object_get(j, "top");
	ck_assert_int_eq((int)json_array_size(top), 6);
	char *src = tu_read_file(model, NULL);
	ck_assert_ptr_nonnull(src);
	/* the example's pipeline: section is its last */
	char *cut = strstr(src, "\npipeline:");
	ck_assert_ptr_nonnull(cut);
	cut[1] = '\0';
	double winner = 0;
	for (size_t i = 0; i < json_array_size(top); i++) {
		json_t *e = json_array_get(top, i);
		json_t *pl = json_object_get(e, "pipeline");
		json_t *tr = json_object_get(e, "transformer");
		char mb[64], rc[64];
		snprintf(mb, sizeof mb, "micro_batch_size: %d",
			 (int)json_integer_value(json_object_get(tr, "micro_batch_size")));
		snprintf(rc, sizeof rc, "recompute: %s",
			 json_string_value(json_object_get(tr, "recompute")));
		char *t1 = replace_line(src, "micro_batch_size: 1", mb);
		char *t2 = replace_line(t1, "recompute: selective", rc);
		/* the entry's pipeline object, key for key, as YAML */
		size_t len = strlen(t2) + 1024;
		char *text = malloc(len);
		size_t at = (size_t)snprintf(text, len, "%spipeline:\n", t2);
		const char *key;
		json_t *val;
		json_object_foreach(pl, key, val) {
			if (json_is_string(val))
				at += (size_t)snprintf(text + at, len - at, "  %s: %s\n",
						       key, json_string_value(val));
			else
				at += (size_t)snprintf(text + at, len - at, "  %s: %lld\n",
						       key, (long long)json_integer_value(val));
		}
		snprintf(yaml, sizeof yaml, "%s/entry%zu.yaml", dir, i);
		ck_assert_int_eq(tu_write_file(yaml, text), 0);
		char plan_out[4096];
		snprintf(plan_out, sizeof plan_out, "%s/plan%zu.json", dir, i);
		char *pargv[] = {(char *)tu_ppcc(), "plan", yaml, "-f", "json", "-o",
				 plan_out, NULL};
		ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 120, pargv), 0);
		ck_assert_msg(r.status == 0, "entry %zu: %s", i, r.err);
		tu_run_free(&r);
		json_t *pj = json_load_file(plan_out, 0, &je);
		ck_assert_msg(pj, "%d: %s", je.line, je.text);
		/* the plan's iteration_ms, wherever its object holds it */
		char *dump = json_dumps(pj, JSON_COMPACT);
		const char *it = strstr(dump, "\"iteration_ms\":");
		ck_assert_ptr_nonnull(it);
		double planned = strtod(it + strlen("\"iteration_ms\":"), NULL);
		double printed = json_real_value(json_object_get(e, "iteration_ms"));
		/* the plan's JSON rounds to 12 digits */
		ck_assert_msg(fabs(planned - printed) <= 1e-10 * printed,
			      "entry %zu: ppcc plan says %.17g ms, search %.17g",
			      i, planned, printed);
		if (i == 0)
			winner = planned;
		ck_assert_msg(winner <= planned * (1 + 1e-10), "entry %zu is faster than the "
			      "winner: %.17g < %.17g", i, planned, winner);
		free(dump);
		json_decref(pj);
		free(text);
		free(t2);
		free(t1);
	}
	free(src);
	json_decref(j);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(search_without_a_global_batch_is_refused)
{
	char model[4096];
	snprintf(model, sizeof model, "%s/examples/tiny.yaml", tu_src());
	char *argv[] = {(char *)tu_ppcc(), "search", model, NULL};
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, argv), 0);
	ck_assert_int_eq(r.status, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "global batch"));
	ck_assert_str_eq(r.out, "");
	tu_run_free(&r);
}
END_TEST

Suite *suite_search(void)
{
	Suite *s = suite_create("search");
	TCase *tc = tcase_create("search");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, pruning_keeps_the_exhaustive_top_k);
	tcase_add_test(tc, printed_configurations_plan_to_their_figures_and_the_winner_leads);
	tcase_add_test(tc, search_without_a_global_batch_is_refused);
	suite_add_tcase(s, tc);
	return s;
}
