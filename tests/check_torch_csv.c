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
		/* with the transfers as cells, in list order; tiny's 4
		 * devices on p 2 are d 2, so each stage's reduction (one
		 * REDUCE_GRAD cell, no microbatch) follows its last B, before
		 * that B's SEND_B */
		{{"-p", "2", "-m", "2", "-s", "gpipe", "--with-comms", NULL},
		 "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1,0REDUCE_GRAD\n"
		 "1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1REDUCE_GRAD,1SEND_B1\n"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = csv_of("tiny.yaml", cases[i].args);
		ck_assert_msg(strcmp(got, cases[i].want) == 0,
			      "case %zu:\n%s\nwant\n%s", i, got, cases[i].want);
		free(got);
	}
}
END_TEST

/* Under ZeRO 1 (tiny.yaml with zero: 1) each stage's reduce-scatters
 * are PyTorch's REDUCE_GRAD cell (its data-parallel wrapper's reduction,
 * a reduce-scatter for a sharded one) and its parameter gathers one
 * UNSHARD cell, opening the rank's row. */
START_TEST(zero_collectives_are_reduce_grad_and_unshard_cells)
{
	char *dir = tu_mkdtemp(), src[1024], path[1024];
	snprintf(src, sizeof src, "%s/examples/tiny.yaml", tu_src());
	snprintf(path, sizeof path, "%s/tiny-zero1.yaml", dir);
	FILE *in = fopen(src, "r"), *out = fopen(path, "w");
	ck_assert(in && out);
	int c;
	while ((c = fgetc(in)) != EOF)
		fputc(c, out);
	fputs("  zero: 1\n", out);
	fclose(in);
	fclose(out);
	char *got = csv_of(path, (char *[]){"-p", "2", "-m", "2", "-s", "gpipe",
					     "--with-comms", NULL});
	ck_assert_str_eq(got,
		"0UNSHARD,0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1,0REDUCE_GRAD\n"
		"1UNSHARD,1RECV_F0,1F0,1RECV_F1,1F1,1B0,1SEND_B0,1B1,1REDUCE_GRAD,1SEND_B1\n");
	free(got);
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
		zero_collectives_are_reduce_grad_and_unshard_cells,
		every_cell_is_an_action_pytorch_reads,
		NULL});
}
