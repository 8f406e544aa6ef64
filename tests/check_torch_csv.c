/*
 * The torch-csv output against what does not come from ppcc or from the
 * test's own parser (check_emit.c): rows traced by hand, and every cell of
 * every example's plan matched by the action pattern of PyTorch's
 * schedule runtime (torch.distributed.pipelining, _action_regex):
 *
 *   (\d+)(F|I|B|W|UNSHARD|RESHARD|REDUCE_GRAD|SEND_F|RECV_F|SEND_B|RECV_B)(\d*)
 *
 * The hand traces place each action in the first unit slot after the
 * previous action of its rank and the action it waits for on another
 * rank (slot = max(previous + 1, producer + 1)); an empty cell is a slot
 * in which the rank idles.
 */
#include <check.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

Suite *suite_torch_csv(void);

static char *csv_of(const char *example, char *const extra[])
{
	char path[1024];
	if (example[0] == '/')
		snprintf(path, sizeof path, "%s", example);
	else
		snprintf(path, sizeof path, "%s/examples/%s", tu_src(), example);
	char *argv[24];
	int n = 0;
	argv[n++] = (char *)tu_ppcc();
	argv[n++] = "plan";
	argv[n++] = path;
	argv[n++] = "-f";
	argv[n++] = "torch-csv";
	for (; extra && *extra && n < 23; extra++)
		argv[n++] = *extra;
	argv[n] = NULL;
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, argv), 0);
	ck_assert_msg(r.status == 0, "%s: %s", example, r.err);
	char *out = r.out;
	r.out = NULL;
	tu_run_free(&r);
	return out;
}

START_TEST(csv_rows_match_hand_traces)
{
	static const struct {
		char *args[10];
		const char *want;
	} cases[] = {
		/* GPipe p 2 m 2: rank 0 F0@0 F1@1, rank 1 F0@1 F1@2 B0@3 B1@4,
		 * rank 0 B0@4 (after rank 1's B0) B1@5 */
		{{"-p", "2", "-m", "2", "-s", "gpipe", NULL},
		 "0F0,0F1,,,0B0,0B1\n"
		 ",1F0,1F1,1B0,1B1\n"},
		/* 1F1B p 2 m 3: rank 0 F0 F1 B0 F2 B1 B2 at 0 1 3 4 5 7, rank
		 * 1 F0 B0 F1 B1 F2 B2 at 1 2 3 4 5 6 */
		{{"-p", "2", "-m", "3", "-s", "1f1b", NULL},
		 "0F0,0F1,,0B0,0F2,0B1,,0B2\n"
		 ",1F0,1B0,1F1,1B1,1F2,1B2\n"},
		/* with the transfers as cells, in list order; each stage's
		 * REDUCE_GRAD cell (no microbatch) follows its last B and
		 * that B's own SEND_B, as PyTorch's lowering leaves it */
		{{"-p", "2", "-m", "2", "-s", "gpipe", "--with-comms", NULL},
		 "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1,0REDUCE_GRAD\n"
		 "1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1,1REDUCE_GRAD\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = csv_of("tiny.yaml", cases[i].args);
		ck_assert_msg(strcmp(got, cases[i].want) == 0,
			      "case %zu:\n%s\nwant\n%s", i, got, cases[i].want);
		free(got);
	}
}
END_TEST

/* DualPipe's two pipelines (stage p-1 the forward direction's last,
 * stage p the reverse one's first) are no chain PyTorch's CSV can hold,
 * where stage s sends to stage s+1: refused by name, nothing written. */
START_TEST(dualpipe_is_refused_by_name)
{
	ppcc_arena *a = ppcc_arena_new();
	ppcc_stage_info st[8];
	memset(st, 0, sizeof st);
	ppcc_plan plan;
	memset(&plan, 0, sizeof plan);
	ck_assert_int_eq(ppcc_schedule_build(&plan.best.schedule, a,
					     PPCC_SCHED_DUALPIPE, 4, 2, 8, 0, st), 0);
	plan.best.stages = (ppcc_stage_info *)plan.best.schedule.stages;
	ppcc_emit_options o = {.format = PPCC_FMT_TORCH_CSV};
	tu_diag td;
	tu_diag_init(&td);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ppcc_emit_torch_csv(f, &plan, &o, &td.d), PPCC_EINPUT);
	fclose(f);
	ck_assert_uint_eq(len, 0);
	ck_assert_msg(strstr(td.text, "not the dualpipe schedule's two"), "%s",
		      td.text);
	free(buf);
	ppcc_arena_free(a);
}
END_TEST

/* tiny.yaml with pipeline.zero and pipeline.data_parallel set (pipeline
 * is its last section, so appending the keys puts them there), written
 * into dir; path receives the file's name. */
static void tiny_with(char *path, size_t cap, const char *dir, int zero,
		      int data_parallel)
{
	char src[1024];
	snprintf(src, sizeof src, "%s/examples/tiny.yaml", tu_src());
	snprintf(path, cap, "%s/tiny-z%d-d%d.yaml", dir, zero, data_parallel);
	FILE *in = fopen(src, "r"), *out = fopen(path, "w");
	ck_assert(in && out);
	int c;
	while ((c = fgetc(in)) != EOF)
		fputc(c, out);
	fprintf(out, "  zero: %d\n  data_parallel: %d\n", zero, data_parallel);
	fclose(in);
	fclose(out);
}

/* PyTorch's lowering gives every stage a REDUCE_GRAD, with data
 * parallelism or without (its runtime scales the gradients there): on
 * one replica too, after the stage's m-th B or W and that compute's own
 * SEND.  Traced from zb-h1's list on p 2, m 4. */
START_TEST(reduce_grad_cell_for_every_stage_without_data_parallel)
{
	char *dir = tu_mkdtemp(), path[1024];
	tiny_with(path, sizeof path, dir, 0, 1);
	char *got = csv_of(path, (char *[]){"-p", "2", "-m", "4", "-s", "zb-h1",
					     "--with-comms", NULL});
	ck_assert_str_eq(got,
		"0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0I0,0W0,0F2,0SEND_F2,"
		"0RECV_B1,0I1,0W1,0F3,0SEND_F3,0RECV_B2,0I2,0W2,0RECV_B3,0I3,"
		"0W3,0REDUCE_GRAD\n"
		"1RECV_F0,1F0,1I0,1SEND_B0,1RECV_F1,1F1,1I1,1SEND_B1,1W0,"
		"1RECV_F2,1F2,1I2,1SEND_B2,1W1,1RECV_F3,1F3,1I3,1SEND_B3,1W2,"
		"1W3,1REDUCE_GRAD\n");
	free(got);
	tu_rmtree_free(dir);
}
END_TEST

/* UNSHARD and RESHARD are FSDP's (ZeRO-3's) actions; ZeRO-1 and 2 keep
 * whole parameters, their gather after the optimizer step being the
 * optimizer's own, so they write neither (an UNSHARD without a RESHARD
 * left the stage gathered into the next step).  The reduce-scatters are
 * the stage's one REDUCE_GRAD. */
START_TEST(zero_1_and_2_write_no_unshard_or_reshard)
{
	char *dir = tu_mkdtemp(), path[1024];
	for (int zero = 1; zero <= 2; zero++) {
		tiny_with(path, sizeof path, dir, zero, 2);
		char *got = csv_of(path, (char *[]){"-p", "2", "-m", "2", "-s",
						     "gpipe", "--with-comms", NULL});
		ck_assert_msg(strcmp(got,
			"0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1,0REDUCE_GRAD\n"
			"1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1SEND_B1,1REDUCE_GRAD\n")
			== 0, "zero %d:\n%s", zero, got);
		free(got);
	}
	tu_rmtree_free(dir);
}
END_TEST

/* ZeRO-3 on a zero-bubble kind: a stage's W comes after its last I, so
 * its RESHARD must wait for the last W (PyTorch's runtime refuses a
 * compute on a resharded stage).  Traced from zb-h1's list on p 2, m 4:
 * each rank's one stage is gathered before its first compute and
 * resharded after its REDUCE_GRAD. */
START_TEST(zero_3_never_computes_on_a_resharded_stage)
{
	char *dir = tu_mkdtemp(), path[1024];
	tiny_with(path, sizeof path, dir, 3, 2);
	char *got = csv_of(path, (char *[]){"-p", "2", "-m", "4", "-s", "zb-h1",
					     "--with-comms", NULL});
	ck_assert_str_eq(got,
		"0UNSHARD,0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0I0,0W0,0F2,"
		"0SEND_F2,0RECV_B1,0I1,0W1,0F3,0SEND_F3,0RECV_B2,0I2,0W2,"
		"0RECV_B3,0I3,0W3,0REDUCE_GRAD,0RESHARD\n"
		"1RECV_F0,1UNSHARD,1F0,1I0,1SEND_B0,1RECV_F1,1F1,1I1,1SEND_B1,"
		"1W0,1RECV_F2,1F2,1I2,1SEND_B2,1W1,1RECV_F3,1F3,1I3,1SEND_B3,"
		"1W2,1W3,1REDUCE_GRAD,1RESHARD\n");
	free(got);
	tu_rmtree_free(dir);
}
END_TEST

/*
 * A checker of a with-comms CSV from PyTorch's own rules, PyTorch
 * 1fd7abc, torch/distributed/pipelining/schedules.py:
 * - :1172-1244 (_validate_schedule): every action of a stage on one
 *   rank; per stage m distinct F; B and I after the microbatch's F, W
 *   after its I; B + (I + W) / 2 == m.
 * - :1086-1094 (_add_send_recv's _get_comms): SEND_F of (s, mb) goes
 *   with RECV_F of (s + 1, mb), SEND_B of (s, mb) with RECV_B of
 *   (s - 1, mb); :1762-1781: a RECV at most once.
 * - :1782-1797 (the runtime's UNSHARD and RESHARD, for an FSDP stage):
 *   no UNSHARD of a stage already unsharded ("Unsharding the same
 *   stage_idx twice"), no RESHARD of one that is not; :1716-1724 with
 *   :1799, :1826, :1860, :1885: no F, B, I or W of an FSDP stage that is
 *   not unsharded ("Attempted to compute on sharded stage_idx").
 * - :1842-1852 and :1887-1891: a stage's gradient is complete at its
 *   m-th B or W (counted together); that is where PyTorch's later
 *   _add_reduce_grad puts the stage's one REDUCE_GRAD, and
 *   _add_send_recv (:1153-1160) puts a compute's SEND right after it.
 * - :2639-2767 (_simulate_comms_compute): the lists run to their ends;
 *   the readiness of each action is that function's (:2666-2722), the
 *   per-stage cells being always ready.
 * ppcc's own rules on top: UNSHARD and RESHARD only under ZeRO-3 with
 * data parallelism (nothing is sharded on one replica), every stage
 * resharded by the end of its rank's row (the optimizer steps on the
 * shards), exactly one REDUCE_GRAD per stage.
 */
enum { A_F, A_B, A_I, A_W, A_SEND_F, A_RECV_F, A_SEND_B, A_RECV_B,
       A_UNSHARD, A_RESHARD, A_REDUCE_GRAD, A_COUNT };

typedef struct tact {
	int rank, cell, stage, op, mb; /* mb -1 for the per-stage cells */
} tact;

/* One action at *p: digits, an op, digits unless per-stage. */
static int parse_action(tact *out, const char **p)
{
	static const char *const names[A_COUNT] = {
		"F", "B", "I", "W", "SEND_F", "RECV_F", "SEND_B", "RECV_B",
		"UNSHARD", "RESHARD", "REDUCE_GRAD"};
	const char *s = *p;
	if (*s < '0' || *s > '9')
		return -1;
	out->stage = (int)strtol(s, (char **)&s, 10);
	int best = -1;
	size_t best_len = 0;
	for (int k = 0; k < A_COUNT; k++) {
		size_t n = strlen(names[k]);
		if (strncmp(s, names[k], n) == 0 && n > best_len) {
			best = k;
			best_len = n;
		}
	}
	if (best < 0)
		return -1;
	s += best_len;
	out->op = best;
	out->mb = -1;
	if (best < A_UNSHARD) {
		if (*s < '0' || *s > '9')
			return -1;
		out->mb = (int)strtol(s, (char **)&s, 10);
	}
	*p = s;
	return 0;
}

typedef struct tcsv {
	int n, cap, ranks;
	tact *a;
} tcsv;

static void csv_parse(tcsv *c, const char *text)
{
	memset(c, 0, sizeof *c);
	c->cap = 1024;
	c->a = malloc((size_t)c->cap * sizeof *c->a);
	int cell = 0;
	for (const char *p = text; *p;) {
		if (c->n + 2 > c->cap) {
			c->cap *= 2;
			c->a = realloc(c->a, (size_t)c->cap * sizeof *c->a);
		}
		ck_assert_ptr_nonnull(c->a);
		tact *x = &c->a[c->n];
		x[0].rank = x[1].rank = c->ranks;
		x[0].cell = x[1].cell = cell++;
		if (*p == '(') {
			p++;
			ck_assert_msg(parse_action(&x[0], &p) == 0 && *p == ';',
				      "bad pair at '%.20s'", p);
			p++;
			ck_assert_msg(parse_action(&x[1], &p) == 0 &&
				      strncmp(p, ")OVERLAP_F_B", 12) == 0,
				      "bad pair at '%.20s'", p);
			p += 12;
			c->n += 2;
		} else {
			ck_assert_msg(parse_action(x, &p) == 0, "bad cell at '%.20s'", p);
			c->n++;
		}
		if (*p == ',') {
			p++;
		} else {
			ck_assert_msg(*p == '\n', "no newline at '%.20s'", p);
			p++;
			c->ranks++;
			cell = 0;
		}
	}
}

/* done[(op * S + stage) * m + mb] */
#define TDONE(op, st, mb) done[((size_t)(op) * S + (size_t)(st)) * m + (size_t)(mb)]

static int ready(const tact *x, const unsigned char *done, const int *rank_of,
		 int S, int m)
{
	int s = x->stage, mb = x->mb;
	switch (x->op) {
	case A_F:
		return s == 0 || TDONE(A_RECV_F, s, mb) ||
		       (rank_of[s - 1] == rank_of[s] && TDONE(A_F, s - 1, mb));
	case A_B:
	case A_I:
		return s == S - 1 || TDONE(A_RECV_B, s, mb) ||
		       (rank_of[s + 1] == rank_of[s] &&
			(TDONE(A_I, s + 1, mb) || TDONE(A_B, s + 1, mb)));
	case A_SEND_F:
		return TDONE(A_F, s, mb);
	case A_RECV_F:
		return s > 0 && TDONE(A_SEND_F, s - 1, mb);
	case A_SEND_B:
		return TDONE(A_I, s, mb) || TDONE(A_B, s, mb);
	case A_RECV_B:
		return s < S - 1 && TDONE(A_SEND_B, s + 1, mb);
	default: /* W and the per-stage cells */
		return 1;
	}
}

/* Checks one CSV; returns the RESHARDs that come before a rank's last
 * compute (prefetch evictions), for the caller to count. */
static int check_pytorch_rules(const char *text, const char *what, int S,
			       int m, int fsdp)
{
	tcsv c;
	csv_parse(&c, text);
	int *rank_of = malloc((size_t)S * sizeof *rank_of);
	int *count = calloc((size_t)S * A_COUNT, sizeof *count);
	unsigned char *done = calloc((size_t)S * A_COUNT * m, 1);
	ck_assert(rank_of && count && done);
	for (int s = 0; s < S; s++)
		rank_of[s] = -1;
	for (int i = 0; i < c.n; i++) {
		const tact *x = &c.a[i];
		ck_assert_msg(x->stage >= 0 && x->stage < S && x->mb < m,
			      "%s: action %d out of range", what, i);
		ck_assert_msg(rank_of[x->stage] < 0 || rank_of[x->stage] == x->rank,
			      "%s: stage %d on two ranks", what, x->stage);
		rank_of[x->stage] = x->rank;
		count[x->stage * A_COUNT + x->op]++;
		if (x->mb >= 0) {
			ck_assert_msg(!TDONE(x->op, x->stage, x->mb) ||
				      x->op == A_SEND_F || x->op == A_SEND_B,
				      "%s: action %d twice", what, i);
			TDONE(x->op, x->stage, x->mb) = 1;
		}
	}
	/* _validate_schedule's counts and orders, the pairing of sends */
	for (int s = 0; s < S; s++) {
		ck_assert_msg(count[s * A_COUNT + A_F] == m, "%s: stage %d has %d F",
			      what, s, count[s * A_COUNT + A_F]);
		ck_assert_msg(count[s * A_COUNT + A_B] + (count[s * A_COUNT + A_I] +
			      count[s * A_COUNT + A_W]) / 2 == m,
			      "%s: stage %d backwards", what, s);
		ck_assert_msg(count[s * A_COUNT + A_REDUCE_GRAD] == 1,
			      "%s: stage %d has %d REDUCE_GRAD", what, s,
			      count[s * A_COUNT + A_REDUCE_GRAD]);
		ck_assert_msg(fsdp || (count[s * A_COUNT + A_UNSHARD] == 0 &&
				       count[s * A_COUNT + A_RESHARD] == 0),
			      "%s: stage %d has UNSHARD or RESHARD", what, s);
		ck_assert_msg(!fsdp || count[s * A_COUNT + A_UNSHARD] > 0,
			      "%s: stage %d never unsharded", what, s);
		for (int mb = 0; mb < m; mb++) {
			if (s + 1 < S)
				ck_assert_msg(TDONE(A_SEND_F, s, mb) ==
					      TDONE(A_RECV_F, s + 1, mb),
					      "%s: SEND_F %d %d unmatched", what, s, mb);
			if (s > 0)
				ck_assert_msg(TDONE(A_SEND_B, s, mb) ==
					      TDONE(A_RECV_B, s - 1, mb),
					      "%s: SEND_B %d %d unmatched", what, s, mb);
		}
	}
	memset(done, 0, (size_t)S * A_COUNT * m);
	/* in list order per rank: the order rules, gathering, REDUCE_GRAD */
	int evictions = 0;
	for (int r = 0; r < c.ranks; r++) {
		int *unsharded = calloc((size_t)S, sizeof *unsharded);
		int *grads = calloc((size_t)S, sizeof *grads);
		int *reduced = calloc((size_t)S, sizeof *reduced);
		int last_compute = -1, completing = -1;
		ck_assert(unsharded && grads && reduced);
		for (int i = 0; i < c.n; i++)
			if (c.a[i].rank == r && c.a[i].op <= A_W)
				last_compute = i;
		for (int i = 0; i < c.n; i++) {
			const tact *x = &c.a[i];
			if (x->rank != r)
				continue;
			int s = x->stage, mb = x->mb;
			if (x->op <= A_W) {
				ck_assert_msg(!fsdp || unsharded[s], "%s: %d%s%d on a "
					      "sharded stage", what, s,
					      x->op == A_F ? "F" : "B/I/W", mb);
				ck_assert_msg(!reduced[s], "%s: stage %d computes "
					      "after its REDUCE_GRAD", what, s);
				if (x->op == A_B || x->op == A_I)
					ck_assert_msg(TDONE(A_F, s, mb), "%s: backward "
						      "%d %d before F", what, s, mb);
				if (x->op == A_W)
					ck_assert_msg(TDONE(A_I, s, mb), "%s: W %d %d "
						      "before I", what, s, mb);
				TDONE(x->op, s, mb) = 1;
				if ((x->op == A_B || x->op == A_W) && ++grads[s] == m)
					completing = i;
			} else if (x->op == A_UNSHARD) {
				ck_assert_msg(!unsharded[s], "%s: stage %d unsharded "
					      "twice", what, s);
				unsharded[s] = 1;
			} else if (x->op == A_RESHARD) {
				ck_assert_msg(unsharded[s], "%s: stage %d resharded "
					      "without unsharding", what, s);
				unsharded[s] = 0;
				evictions += i < last_compute;
			} else if (x->op == A_REDUCE_GRAD) {
				ck_assert_msg(grads[s] == m && completing >= 0 &&
					      c.a[completing].stage == s,
					      "%s: %dREDUCE_GRAD not after the stage's "
					      "last B/W", what, s);
				/* only the completing cell's own SENDs between */
				for (int j = completing + 1; j < i; j++) {
					const tact *y = &c.a[j];
					int own = 0;
					for (int k = completing; k >= 0 &&
					     c.a[k].cell == c.a[completing].cell &&
					     c.a[k].rank == r; k--)
						own |= (y->op == A_SEND_F || y->op == A_SEND_B) &&
						       y->stage == c.a[k].stage &&
						       y->mb == c.a[k].mb;
					ck_assert_msg(own || y->cell == c.a[completing].cell,
						      "%s: %dREDUCE_GRAD is not right after "
						      "its last B/W", what, s);
				}
				reduced[s] = 1;
			}
		}
		for (int s = 0; s < S; s++)
			ck_assert_msg(!unsharded[s], "%s: stage %d left unsharded",
				      what, s);
		free(unsharded);
		free(grads);
		free(reduced);
	}
	/* _simulate_comms_compute: every list runs to its end */
	memset(done, 0, (size_t)S * A_COUNT * m);
	int *pos = calloc((size_t)c.ranks + 1, sizeof *pos);
	int *start = calloc((size_t)c.ranks + 1, sizeof *start);
	ck_assert(pos && start);
	for (int i = c.n - 1; i >= 0; i--)
		start[c.a[i].rank] = i;
	for (int r = 0; r < c.ranks; r++)
		pos[r] = start[r];
	for (int left = c.n; left > 0;) {
		int progress = 0;
		for (int r = 0; r < c.ranks; r++)
			while (pos[r] < c.n && c.a[pos[r]].rank == r &&
			       ready(&c.a[pos[r]], done, rank_of, S, m)) {
				const tact *x = &c.a[pos[r]++];
				if (x->mb >= 0)
					TDONE(x->op, x->stage, x->mb) = 1;
				left--;
				progress = 1;
			}
		ck_assert_msg(progress, "%s: the schedule is not progressing", what);
	}
	free(pos);
	free(start);
	free(rank_of);
	free(count);
	free(done);
	free(c.a);
	return evictions;
}
#undef TDONE

/* The checker over every kind, ZeRO 0-3 and d 1 and 2 on tiny.yaml at p
 * 2, m 4 (v 2 where the kind takes chunks, v 4 too for interleaved, so
 * that a rank holds more stages than are gathered at once). */
START_TEST(with_comms_follows_pytorch_rules_for_every_kind)
{
	static const struct {
		const char *kind, *v;
	} kinds[] = {
		{"gpipe", "1"}, {"1f1b", "1"}, {"interleaved", "2"},
		{"interleaved", "4"}, {"zb-h1", "1"}, {"zb-h2", "1"},
		{"zb-v", "2"}, {"zb-interleaved", "2"}, {"dualpipe-v", "2"},
		{"auto", "1"},
	};
	char *dir = tu_mkdtemp(), path[1024];
	int checked = 0, evictions = 0;
	for (int zero = 0; zero <= 3; zero++)
		for (int dp = 1; dp <= 2; dp++) {
			tiny_with(path, sizeof path, dir, zero, dp);
			for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
				char *got = csv_of(path, (char *[]){
					"-p", "2", "-m", "4", "-s", (char *)kinds[k].kind,
					"-v", (char *)kinds[k].v, "--with-comms", NULL});
				char what[128];
				snprintf(what, sizeof what, "%s v %s zero %d d %d",
					 kinds[k].kind, kinds[k].v, zero, dp);
				int S = 2 * atoi(kinds[k].v);
				evictions += check_pytorch_rules(got, what, S, 4,
								 zero == 3 && dp > 1);
				checked++;
				free(got);
			}
		}
	ck_assert_int_eq(checked, 80);
	/* interleaved v 4 under ZeRO-3 reshards stages mid-list */
	ck_assert_int_gt(evictions, 0);
	tu_rmtree_free(dir);
}
END_TEST

START_TEST(every_cell_is_an_action_pytorch_reads)
{
	regex_t re;
	ck_assert_int_eq(regcomp(&re, "^([0-9]+)(F|I|B|W|UNSHARD|RESHARD|"
				 "REDUCE_GRAD|SEND_F|RECV_F|SEND_B|RECV_B)"
				 "([0-9]*)$", REG_EXTENDED), 0);
	const char *examples[] = {"tiny.yaml", "hetero.yaml", "llama2-70b.yaml",
				  "gpt3-175b.yaml"};
	long cells = 0;
	for (int e = 0; e < 4; e++)
		for (int comms = 0; comms < 2; comms++) {
			char *text = csv_of(examples[e], comms ? (char *[]){"--with-comms",
									  NULL}
							       : NULL);
			int rows = 0;
			for (char *line = strtok(text, "\n"); line;
			     line = strtok(NULL, "\n"), rows++) {
				char *cell = line;
				for (;;) {
					char *comma = strchr(cell, ',');
					if (comma)
						*comma = '\0';
					if (*cell) {
						ck_assert_msg(regexec(&re, cell, 0, NULL, 0) == 0,
							      "%s row %d: '%s'", examples[e],
							      rows, cell);
						cells++;
					}
					if (!comma)
						break;
					cell = comma + 1;
				}
			}
			ck_assert_int_ge(rows, 4);
			free(text);
		}
	regfree(&re);
	ck_assert_int_gt(cells, 1000);
}
END_TEST

Suite *suite_torch_csv(void)
{
	return tu_suite("torch_csv", "torch_csv", 0, (const TTest *const[]){
		csv_rows_match_hand_traces,
		dualpipe_is_refused_by_name,
		reduce_grad_cell_for_every_stage_without_data_parallel,
		zero_1_and_2_write_no_unshard_or_reshard,
		zero_3_never_computes_on_a_resharded_stage,
		with_comms_follows_pytorch_rules_for_every_kind,
		every_cell_is_an_action_pytorch_reads,
		NULL});
}
