/*
 * cli.h - what the command line's files share: the exit statuses, the
 * diagnostic printer, and output that appears whole or not at all.
 */
#ifndef PPCC_CLI_CLI_H
#define PPCC_CLI_CLI_H

#include <limits.h>
#include <stdio.h>

#include "ppcc.h"

enum {
	EXIT_OK = 0,
	EXIT_INPUT = 1,  /* bad input, infeasible plan, invalid schedule */
	EXIT_USAGE = 2,
	EXIT_OUTPUT = 3, /* cannot write the output */
	EXIT_INTERNAL = 4 /* out of memory or a bug */
};

/* A diagnostic on stderr as `ppcc: FILE:LINE:COL: error: message`, user
 * text shown with its control and invisible characters escaped; a
 * ppcc_diag callback (user is unused). */
void ppcc_cli_print_diag(ppcc_severity sev, const ppcc_loc *loc,
			 const char *msg, void *user);

/* "ppcc: PATH: error: cannot write: REASON" ("<stdout>" for "-"). */
void ppcc_cli_cannot_write(const char *path, int err);

/* The output (output.c): built in an unnamed or temporary file beside
 * the target and renamed over it when complete, so a failed or killed run
 * leaves the target as it was; "-" is standard output; a target that is
 * not a regular file is written in place. */
typedef struct ppcc_cli_output {
	FILE *f;
	const char *path;
	int anonymous;       /* O_TMPFILE: no name until closed */
	int in_place;        /* stdout or a device */
	char dir[PATH_MAX];
	char resolved[PATH_MAX]; /* path, when it names a link: its target */
} ppcc_cli_output;

/* 0, or -1 with errno. */
int ppcc_cli_output_open(ppcc_cli_output *o, const char *path);
/* Finishes the output: when ok, every byte reaches the disk and the file
 * replaces the target; otherwise nothing of it remains.  -1 with errno on
 * failure. */
int ppcc_cli_output_close(ppcc_cli_output *o, int ok);

/* The subcommands' output: buf to path (NULL or "-": standard output)
 * exactly as ppcc plan writes -o, a failure reported as ppcc plan
 * reports it.  An exit status. */
int ppcc_cli_write_output(const char *path, const char *buf, size_t len);

/* 1 when the files a and b are one file (through links and `..`), so
 * that -o would overwrite an input; "-" is never one. */
int ppcc_cli_same_file(const char *a, const char *b);

/* 1 when path names a flight record of dir (dir/rank-NNNNN.flight, or
 * an existing file of that name there), which diagnose reads. */
int ppcc_cli_is_flight_record(const char *path, const char *dir);

/* After the file of format fi was written from plan: when the format's
 * row reports (a trainer's file), "ppcc: note: wrote FMT for CONFIG:
 * iteration ..., MFU ..., peak ... (rank R)" on stderr, standard output
 * flushed first; otherwise nothing. */
void ppcc_cli_report_export(const ppcc_format_info *fi, const ppcc_plan *plan);

/* s as a whole count in [lo, hi]: decimal digits only (no sign, space or
 * other base), within hi without overflow.  0, or -1 (args.c). */
int ppcc_cli_count(const char *s, long long lo, long long hi,
		   long long *out);
/* s as a plain decimal number in [lo, hi]: digits with an optional
 * fraction and exponent (no sign, space, hex, inf or nan), read in the
 * C locale.  0, or -1. */
int ppcc_cli_real(const char *s, double lo, double hi, double *out);

/* The subcommands (search.c, diagnose.c): argv after the command's name. */
int ppcc_cli_search(int argc, char **argv);
int ppcc_cli_diagnose(int argc, char **argv);

/* A catalogue command (catalogue.c): its name, its table as text, its
 * rows as a JSON array, and the JSON's real precision. */
typedef struct ppcc_cli_catalogue {
	const char *name;
	void (*text)(FILE *f);
	struct json_t *(*json)(void);
	int precision;
} ppcc_cli_catalogue;

/* `ppcc NAME [-f|--format text|json]` for c.  An exit status. */
int ppcc_cli_catalogue_run(const ppcc_cli_catalogue *c, int argc,
			   char **argv);

/* `ppcc devices` (devices.c): the device catalogue.  An exit status. */
int ppcc_cli_devices(int argc, char **argv);

/* The one command's input (presets.c).  --model NAME, --devices
 * COUNTxPRESET and --precision (NULL: not given; bf16 or fp8) as a
 * configuration's YAML text in out (cap bytes): 0, or an exit status
 * after a usage error naming the option on stderr. */
int ppcc_cli_preset_yaml(char *out, size_t cap, const char *model,
			 const char *devices, const char *precision);

/* --global-batch as given: count sequences (shift 0) or count << shift
 * tokens (shift 10 for K, 20 for M); text, the option's argument. */
typedef struct ppcc_cli_batch {
	long long count;
	int shift;
	const char *text;
} ppcc_cli_batch;
/* 0, or -1 when s is not a count of 1 to 2^30, with K or M or none. */
int ppcc_cli_batch_parse(ppcc_cli_batch *out, const char *s);
/* The batch in whole sequences of seq_len tokens (0: a model given as
 * layers, which takes sequences only) in *out, tokens rounded down; for
 * tokens, line (cap bytes) gets "global batch N sequences (4M tokens =
 * 4194304 / 8192)\n", else "".  0, or an exit status after a usage
 * error on stderr. */
int ppcc_cli_batch_sequences(long *out, char *line, size_t cap,
			     const ppcc_cli_batch *b, int seq_len);

/* `ppcc models` (models.c): the model catalogue.  An exit status. */
int ppcc_cli_models(int argc, char **argv);

#endif
