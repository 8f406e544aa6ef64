/*
 * diagnose.c - the `ppcc diagnose` command: argv to options, then
 * the library's ppcc_diagnose (src/diagnose/diagnose.c).
 *
 *   ppcc diagnose DIR [--schedule FILE.json] [-f text|json] [-o FILE]
 *
 * It has a file of its own because its --schedule names a file, where
 * plan's names a kind.  Exit codes as ppcc(1): 0, 1 bad input (records,
 * schedule), 2 usage, 3 cannot write, 4 internal.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diagnose.h"
#include "ppcc.h"
#include "cli/cli.h"

static int dg_usage(const char *msg, const char *arg)
{
	fputs("ppcc: ", stderr);
	fprintf(stderr, msg, arg);
	fputs("\nTry 'ppcc --help' for more information.\n", stderr);
	return 2;
}

int ppcc_cli_diagnose(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"schedule", required_argument, NULL, 's'},
		{"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *sched_path = NULL, *output = NULL;
	int json = 0, c, rc = 0, err;
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":s:f:o:h", longopts, NULL)) != -1) {
		const char *opt = argv[optind - 1];
		switch (c) {
		case 's': sched_path = optarg; break;
		case 'o': output = optarg; break;
		case 'f':
			if (strcmp(optarg, "json") == 0)
				json = 1;
			else if (strcmp(optarg, "text") != 0)
				return dg_usage("diagnose: unknown format '%s' (text or json)",
						optarg);
			break;
		case 'h':
			puts("usage: ppcc diagnose DIR [-s|--schedule FILE.json] "
			     "[-f|--format text|json]\n"
			     "                     [-o|--output FILE] [-h|--help]");
			return 0;
		case ':': return dg_usage("option '%s' needs a value", opt);
		default: return dg_usage("unknown option '%s'", opt);
		}
	}
	if (optind >= argc)
		return dg_usage("%s", "diagnose: missing DIR");
	if (optind + 1 < argc)
		return dg_usage("unexpected argument '%s'", argv[optind + 1]);
	const char *dir = argv[optind];
	if (output && (ppcc_cli_is_flight_record(output, dir) ||
		       (sched_path && ppcc_cli_same_file(output, sched_path))))
		return dg_usage("the output '%s' is an input file", output);
	ppcc_diag d = {.fn = ppcc_cli_print_diag};
	ppcc_arena *a = ppcc_arena_new();
	ppcc_plan plan;
	ppcc_diagnosis *dg = NULL;
	const ppcc_schedule *sched = NULL;
	if (!a) {
		fputs("ppcc: error: out of memory\n", stderr);
		return 4;
	}
	if (sched_path) {
		if ((err = ppcc_read_json(&plan, a, sched_path, &d)) < 0 ||
		    (err = ppcc_schedule_validate(&plan.best.schedule, &d, sched_path,
						  50)) < 0) {
			rc = err == PPCC_ENOMEM ? 4 : 1;
			goto out;
		}
		sched = &plan.best.schedule;
	}
	if ((err = ppcc_diagnose(&dg, dir, sched, sched_path, &d)) < 0) {
		rc = err == PPCC_ENOMEM ? 4 : 1;
		goto out;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	if (!mem) {
		fputs("ppcc: error: out of memory\n", stderr);
		rc = 4;
		goto out;
	}
	err = ppcc_diagnosis_emit(mem, dg, json);
	if (fclose(mem) != 0 || err < 0) {
		fputs("ppcc: error: out of memory\n", stderr);
		rc = 4;
	} else {
		rc = ppcc_cli_write_output(output, buf, len);
	}
	free(buf);
out:
	ppcc_diagnosis_free(dg);
	ppcc_arena_free(a);
	return rc;
}
