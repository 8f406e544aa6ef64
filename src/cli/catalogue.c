/*
 * catalogue.c - what the catalogue commands share (`ppcc devices`,
 * `ppcc models`): -f text|json and -h, the listing built in memory in the
 * C locale, then written to standard output as ppcc plan writes its own.
 *
 *   ppcc NAME [-f|--format text|json]
 *
 * Exit codes as ppcc(1): 0, 2 usage, 3 cannot write, 4 internal.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ppcc.h"
#include "cli/cli.h"

/* "ppcc: [NAME: ]MSG" with arg, and where to look; the usage status. */
static int catalogue_usage(const char *name, const char *msg, const char *arg)
{
	fputs("ppcc: ", stderr);
	if (name)
		fprintf(stderr, "%s: ", name);
	fprintf(stderr, msg, arg);
	fputs("\nTry 'ppcc --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

int ppcc_cli_catalogue_run(const ppcc_cli_catalogue *c, int argc,
			   char **argv)
{
	static const struct option longopts[] = {
		{"format", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int json = 0, k;
	opterr = 0;
	optind = 0;
	while ((k = getopt_long(argc, argv, ":f:h", longopts, NULL)) != -1) {
		const char *opt = argv[optind - 1];
		switch (k) {
		case 'f':
			if (strcmp(optarg, "json") == 0)
				json = 1;
			else if (strcmp(optarg, "text") != 0)
				return catalogue_usage(c->name, "unknown format "
						       "'%s' (text or json)",
						       optarg);
			break;
		case 'h':
			printf("usage: ppcc %s [-f|--format text|json] "
			       "[-h|--help]\n",
			       c->name);
			return EXIT_OK;
		case ':':
			return catalogue_usage(NULL, "option '%s' needs a value",
					       opt);
		default:
			return catalogue_usage(NULL, "unknown option '%s'", opt);
		}
	}
	if (optind < argc)
		return catalogue_usage(NULL, "unexpected argument '%s'",
				       argv[optind]);
	char *buf = NULL;
	size_t len = 0;
	locale_t saved = ppcc_locale_enter();
	FILE *f = open_memstream(&buf, &len);
	int ok = f != NULL;
	if (f && json) {
		json_t *list = c->json();
		ok = list && json_dumpf(list, f, JSON_INDENT(2) |
					JSON_REAL_PRECISION(c->precision)) == 0 &&
		     fputc('\n', f) != EOF;
		json_decref(list);
	} else if (f) {
		c->text(f);
	}
	if (f && fclose(f) != 0)
		ok = 0;
	ppcc_locale_leave(saved);
	if (!ok) {
		free(buf);
		fputs("ppcc: error: out of memory\n", stderr);
		return EXIT_INTERNAL;
	}
	int rc = ppcc_cli_write_output(NULL, buf, len);
	free(buf);
	return rc;
}
