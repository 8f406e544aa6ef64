/*
 * read_json.c - a "ppcc-schedule" JSON document back into a plan.
 *
 * jansson parses (rejecting duplicate keys); this file checks the shape:
 * every required key present with the right type, every integer in range,
 * counts consistent with each other, so that what it returns can be
 * handed to the validator without out-of-bounds reads.  Whether the
 * schedule is *correct* (dependencies, matching sends, no deadlock) is the
 * validator's business, not this file's.  Errors name the key path, e.g.
 * `ranks[2].actions[5].op: unknown op 'X'`; parse errors carry jansson's
 * line and column.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "ppcc.h"

typedef struct reader {
	ppcc_diag *d;
	ppcc_loc loc;
	int bad;
	int oom;
} reader;

static void complain(reader *rd, const char *path, const char *what)
{
	ppcc_error(rd->d, &rd->loc, "%s: %s", path, what);
	rd->bad = 1;
}

static json_t *member(reader *rd, json_t *obj, const char *path,
		      const char *k, int type)
{
	char where[256];
	json_t *v = json_object_get(obj, k);
	snprintf(where, sizeof where, "%s%s%s", path, *path ? "." : "", k);
	if (!v) {
		complain(rd, where, "missing");
		return NULL;
	}
	if ((int)json_typeof(v) != type &&
	    !(type == JSON_REAL && json_typeof(v) == JSON_INTEGER)) {
		static const char *const names[] = {
			[JSON_OBJECT] = "an object", [JSON_ARRAY] = "an array",
			[JSON_STRING] = "a string", [JSON_INTEGER] = "an integer",
			[JSON_REAL] = "a number", [JSON_TRUE] = "a boolean",
			[JSON_FALSE] = "a boolean", [JSON_NULL] = "null",
		};
		char msg[64];
		snprintf(msg, sizeof msg, "expected %s", names[type]);
		complain(rd, where, msg);
		return NULL;
	}
	return v;
}

/* An integer member in [lo, hi]; returns lo on error. */
static int64_t int_member(reader *rd, json_t *obj, const char *path,
			  const char *k, int64_t lo, int64_t hi)
{
	json_t *v = member(rd, obj, path, k, JSON_INTEGER);
	if (!v)
		return lo;
	json_int_t x = json_integer_value(v);
	if (x < lo || x > hi) {
		char where[256], msg[96];
		snprintf(where, sizeof where, "%s%s%s", path, *path ? "." : "", k);
		snprintf(msg, sizeof msg, "%lld is out of range [%lld, %lld]",
			 (long long)x, (long long)lo, (long long)hi);
		complain(rd, where, msg);
		return lo;
	}
	return x;
}

static double real_member(reader *rd, json_t *obj, const char *path,
			  const char *k)
{
	json_t *v = member(rd, obj, path, k, JSON_REAL);
	double x = v ? json_number_value(v) : 0;
	if (v && (!isfinite(x) || x < 0)) {
		char where[256];
		snprintf(where, sizeof where, "%s.%s", path, k);
		complain(rd, where, "expected a finite number >= 0");
		return 0;
	}
	return x;
}

static json_t *load(reader *rd, const char *path)
{
	json_error_t je = {0}; /* jansson leaves it unset when it cannot allocate */
	json_t *root;
	size_t flags = JSON_REJECT_DUPLICATES;
	long failures = ppcc_alloc_failures();
	struct stat st;
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		ppcc_error(rd->d, &rd->loc, "is a directory, not a schedule");
		rd->bad = 1;
		return NULL;
	}
	if (strcmp(path, "-") == 0)
		root = json_loadf(stdin, flags, &je);
	else
		root = json_load_file(path, flags, &je);
	/* jansson reports some failed allocations as syntax errors. */
	if (!root && (json_error_code(&je) == json_error_out_of_memory ||
		      ppcc_alloc_failures() != failures)) {
		rd->oom = 1;
		return NULL;
	}
	if (!root) {
		ppcc_loc at = rd->loc;
		at.line = je.line > 0 ? je.line : 0;
		at.col = je.column > 0 ? je.column : 1;
		ppcc_error(rd->d, &at, "%s", je.text);
		rd->bad = 1;
	}
	return root;
}

static int read_stages(reader *rd, ppcc_plan *out, ppcc_arena *a, json_t *root,
		       int n_stages)
{
	json_t *part = member(rd, root, "", "partition", JSON_ARRAY);
	if (!part)
		return 0;
	if ((int64_t)json_array_size(part) != n_stages) {
		complain(rd, "partition", "expected one entry per virtual stage");
		return 0;
	}
	ppcc_stage_info *st = ppcc_arena_alloc(a, (size_t)n_stages, sizeof *st);
	ppcc_stage_cost *c = ppcc_arena_alloc(a, (size_t)n_stages, sizeof *c);
	if (!st || !c)
		return PPCC_ENOMEM;
	for (int i = 0; i < n_stages; i++) {
		char path[64];
		snprintf(path, sizeof path, "partition[%d]", i);
		json_t *e = json_array_get(part, (size_t)i);
		if (!json_is_object(e)) {
			complain(rd, path, "expected an object");
			continue;
		}
		st[i].stage = (int32_t)int_member(rd, e, path, "stage", 0, INT32_MAX);
		st[i].rank = (int32_t)int_member(rd, e, path, "rank", 0, INT32_MAX);
		st[i].chunk = (int32_t)int_member(rd, e, path, "chunk", 0, INT32_MAX);
		st[i].first_layer = (int32_t)int_member(rd, e, path, "first_layer", 0, INT32_MAX);
		st[i].last_layer = (int32_t)int_member(rd, e, path, "last_layer", 0, INT32_MAX - 1);
		st[i].recv_bytes = (uint64_t)int_member(rd, e, path, "recv_bytes", 0, INT64_MAX);
		st[i].send_bytes = (uint64_t)int_member(rd, e, path, "send_bytes", 0, INT64_MAX);
		if (st[i].first_layer > st[i].last_layer)
			complain(rd, path, "first_layer is after last_layer");
		c[i].fwd_ms = real_member(rd, e, path, "fwd_ms");
		c[i].bwd_ms = real_member(rd, e, path, "bwd_ms");
		c[i].bwd_input_ms = c[i].bwd_ms / 2;
		c[i].bwd_weight_ms = c[i].bwd_ms - c[i].bwd_input_ms;
		/* Optional: absent in hand-written schedules. */
		if (json_object_get(e, "send_f_ms"))
			c[i].send_f_ms = real_member(rd, e, path, "send_f_ms");
		if (json_object_get(e, "send_b_ms"))
			c[i].send_b_ms = real_member(rd, e, path, "send_b_ms");
		if (json_object_get(e, "static_bytes"))
			c[i].static_bytes = real_member(rd, e, path, "static_bytes");
		if (json_object_get(e, "stash_bytes"))
			c[i].stash_bytes = real_member(rd, e, path, "stash_bytes");
	}
	out->best.stages = st;
	out->best.costs = c;
	return 0;
}

static int read_action(reader *rd, ppcc_action *act, json_t *e,
		       const char *path)
{
	if (!json_is_object(e)) {
		complain(rd, path, "expected an object");
		return 0;
	}
	json_t *op = member(rd, e, path, "op", JSON_STRING);
	if (op) {
		act->op = ppcc_op_parse(json_string_value(op));
		if (act->op < 0) {
			char msg[160];
			snprintf(msg, sizeof msg, "unknown op '%.40s' (F, B, I, W, "
				 "SEND_F, RECV_F, SEND_B or RECV_B)",
				 json_string_value(op));
			char where[128];
			snprintf(where, sizeof where, "%s.op", path);
			complain(rd, where, msg);
			act->op = 0;
		}
	}
	act->stage = (int32_t)int_member(rd, e, path, "stage", INT32_MIN, INT32_MAX);
	act->mb = (int32_t)int_member(rd, e, path, "mb", INT32_MIN, INT32_MAX);
	act->peer = -1;
	if (act->op >= PPCC_OP_SEND_F) {
		act->peer = (int32_t)int_member(rd, e, path, "peer", INT32_MIN, INT32_MAX);
		act->bytes = (uint64_t)int_member(rd, e, path, "bytes", 0, INT64_MAX);
	}
	return 0;
}

static int read_ranks(reader *rd, ppcc_arena *a, json_t *root,
		      ppcc_schedule *s)
{
	json_t *ranks = member(rd, root, "", "ranks", JSON_ARRAY);
	if (!ranks)
		return 0;
	if ((int64_t)json_array_size(ranks) != s->n_ranks) {
		complain(rd, "ranks", "expected one entry per rank (stages)");
		return 0;
	}
	ppcc_rank_schedule *rs = ppcc_arena_alloc(a, (size_t)s->n_ranks, sizeof *rs);
	if (!rs)
		return PPCC_ENOMEM;
	for (int r = 0; r < s->n_ranks; r++) {
		char path[64];
		snprintf(path, sizeof path, "ranks[%d]", r);
		json_t *e = json_array_get(ranks, (size_t)r);
		if (!json_is_object(e)) {
			complain(rd, path, "expected an object");
			continue;
		}
		rs[r].rank = (int32_t)int_member(rd, e, path, "rank", r, r);
		json_t *acts = member(rd, e, path, "actions", JSON_ARRAY);
		if (!acts)
			continue;
		size_t n = json_array_size(acts);
		if (n > INT32_MAX) {
			complain(rd, path, "too many actions");
			continue;
		}
		ppcc_action *aa = ppcc_arena_alloc(a, n, sizeof *aa);
		if (!aa)
			return PPCC_ENOMEM;
		for (size_t i = 0; i < n; i++) {
			char apath[96];
			snprintf(apath, sizeof apath, "%s.actions[%zu]", path, i);
			read_action(rd, &aa[i], json_array_get(acts, i), apath);
		}
		rs[r].n_actions = (int32_t)n;
		rs[r].actions = aa;
	}
	s->ranks = rs;
	return 0;
}

int ppcc_read_json(ppcc_plan *out, ppcc_arena *a, const char *path,
		   ppcc_diag *d)
{
	reader rd = {.d = d, .loc = {strcmp(path, "-") == 0 ? "<stdin>" : path, 0, 0}};
	ppcc_schedule *s = &out->best.schedule;
	int err = 0;

	memset(out, 0, sizeof *out);
	json_t *root = load(&rd, path);
	if (!root)
		return rd.oom ? PPCC_ENOMEM : PPCC_EINPUT;
	if (!json_is_object(root)) {
		complain(&rd, "(document)", "expected an object");
		goto out;
	}
	json_t *fmt = member(&rd, root, "", "format", JSON_STRING);
	if (fmt && strcmp(json_string_value(fmt), "ppcc-schedule") != 0)
		complain(&rd, "format", "expected \"ppcc-schedule\"");
	s->version = (int32_t)int_member(&rd, root, "", "version", 1, PPCC_SCHEDULE_VERSION);
	json_t *kind = member(&rd, root, "", "schedule", JSON_STRING);
	if (kind && (s->kind = ppcc_schedule_kind_parse(json_string_value(kind))) < 0)
		complain(&rd, "schedule", "expected gpipe, 1f1b or interleaved");
	/* Bounds keep p * v and later arrays of p * v * m entries sane. */
	s->n_ranks = (int32_t)int_member(&rd, root, "", "stages", 1, 1 << 16);
	s->n_chunks = (int32_t)int_member(&rd, root, "", "chunks", 1, 1 << 10);
	s->n_microbatches = (int32_t)int_member(&rd, root, "", "microbatches", 1, 1 << 24);
	if (rd.bad)
		goto out;
	s->n_stages = s->n_ranks * s->n_chunks;
	if ((int64_t)s->n_stages * s->n_microbatches > (1LL << 28)) {
		complain(&rd, "microbatches", "stages x chunks x microbatches is too large");
		goto out;
	}
	if (json_object_get(root, "virtual_stages") &&
	    int_member(&rd, root, "", "virtual_stages", s->n_stages, s->n_stages) != s->n_stages)
		goto out;
	json_t *model = json_object_get(root, "model");
	out->model_name = ppcc_arena_strdup(a, json_is_string(model)
					    ? json_string_value(model) : "");
	if (!out->model_name) {
		err = PPCC_ENOMEM;
		goto out;
	}
	if ((err = read_stages(&rd, out, a, root, s->n_stages)) < 0 ||
	    (err = read_ranks(&rd, a, root, s)) < 0)
		goto out;
	if (rd.bad)
		goto out;
	s->stages = out->best.stages;
	s->fingerprint = ppcc_schedule_fingerprint(s);
	json_t *fp = json_object_get(root, "fingerprint");
	if (fp) {
		const char *t = json_string_value(fp);
		int ok = t && strlen(t) == 16 &&
			 strspn(t, "0123456789abcdef") == 16;
		if (!ok)
			complain(&rd, "fingerprint", "expected 16 lower-case hexadecimal digits");
		else
			s->fingerprint = strtoull(t, NULL, 16);
	}
	int last = 0;
	for (int i = 0; i < s->n_stages; i++)
		if (s->stages[i].last_layer + 1 > last)
			last = s->stages[i].last_layer + 1;
	out->n_layers = last;
	json_t *layers = json_object_get(root, "layers");
	if (json_is_array(layers) && json_array_size(layers) < (size_t)last)
		complain(&rd, "layers", "fewer names than the partition's layers");
	if (json_is_array(layers) && json_array_size(layers) >= (size_t)last &&
	    json_array_size(layers) < INT32_MAX) {
		int n = (int)json_array_size(layers);
		ppcc_layer *L = ppcc_arena_alloc(a, (size_t)n, sizeof *L);
		if (!L) {
			err = PPCC_ENOMEM;
			goto out;
		}
		for (int i = 0; i < n; i++) {
			json_t *nm = json_array_get(layers, (size_t)i);
			L[i].name = ppcc_arena_strdup(a, json_is_string(nm)
						      ? json_string_value(nm) : "");
			if (!L[i].name) {
				err = PPCC_ENOMEM;
				goto out;
			}
		}
		out->layers = L;
		out->n_layers = n;
	}
out:
	json_decref(root);
	if (err < 0)
		return err;
	return rd.bad ? PPCC_EINPUT : 0;
}
