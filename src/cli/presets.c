/*
 * presets.c - the one command's input: `--model NAME --devices NxPRESET`
 * as the YAML of a configuration file (a transformer preset on a cluster
 * of one device preset), loaded under the name "<command line>"; and
 * --global-batch's count, in sequences or, with a K or M suffix, in
 * tokens (2^10 and 2^20 of them) rounded down to whole sequences.
 *
 * Every error names the option ("--devices: unknown device 'h10'; did
 * you mean 'h100'?") and is a usage error (exit 2): the text built from
 * names the catalogues hold cannot fail to load.  Nothing else of the
 * configuration is set but --precision's transformer.precision: pipeline
 * settings, the reserve and the links are the loader's defaults and the
 * device preset's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppcc.h"
#include "cli/cli.h"

static int preset_usage(const char *opt, const char *what, const char *got,
			const char *near, const char *const *names,
			const char *command)
{
	fprintf(stderr, "ppcc: %s: unknown %s '", opt, what);
	ppcc_fput_visible(stderr, got);
	if (near) {
		fprintf(stderr, "'; did you mean '%s'?\n", near);
	} else {
		fputs("'; expected ", stderr);
		for (int i = 0; names[i]; i++)
			fprintf(stderr, "%s%s", i == 0 ? "" : names[i + 1]
				? ", " : ", or ", names[i]);
		fprintf(stderr, " (ppcc %s lists them)\n", command);
	}
	fputs("Try 'ppcc --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

/* "ppcc: MSG 'ARG'", ARG shown with its invisible characters escaped */
static int plain_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "ppcc: %s '", msg);
	ppcc_fput_visible(stderr, arg);
	fputs("'\nTry 'ppcc --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

int ppcc_cli_preset_yaml(char *out, size_t cap, const char *model,
			 const char *devices, const char *precision)
{
	if (precision && !model)
		return plain_usage("--precision goes with --model (in a file, "
				   "give transformer.precision, ppcc(5)), got "
				   "--precision", precision);
	if (precision && strcmp(precision, "bf16") != 0 &&
	    strcmp(precision, "fp8") != 0)
		return plain_usage("--precision: expected bf16 or fp8, got",
				   precision);
	if (!model)
		return plain_usage("--devices needs --model NAME (ppcc models "
				   "lists them), got --devices", devices);
	if (!devices)
		return plain_usage("--model needs --devices COUNTxPRESET, as "
				   "64xh100 (ppcc devices lists them), got "
				   "--model", model);
	const char *models[PPCC_MAX_MODEL_PRESETS + 1];
	ppcc_model_preset_names(models);
	const ppcc_model_preset *m = ppcc_model_preset_find(model,
							    strlen(model));
	if (!m)
		return preset_usage("--model", "model", model,
				    ppcc_input_suggest(model, models), models,
				    "models");
	const char *x = strchr(devices, 'x');
	char count[32];
	long long n = 0;
	size_t digits = x ? (size_t)(x - devices) : 0;
	if (!x || digits == 0 || digits >= sizeof count || !x[1])
		return plain_usage("--devices: expected COUNTxPRESET, as "
				   "64xh100, got", devices);
	memcpy(count, devices, digits);
	count[digits] = '\0';
	if (ppcc_cli_count(count, 1, PPCC_MAX_COUNT, &n) < 0)
		return plain_usage("--devices: expected a count of 1 to "
				   "1048576 devices before the x, got",
				   devices);
	const char *names[PPCC_MAX_DEVICE_PRESETS + 1];
	ppcc_device_preset_names(names);
	const char *device = x + 1;
	const ppcc_device_preset *dp = ppcc_device_preset_find(device,
							       strlen(device));
	if (!dp)
		return preset_usage("--devices", "device", device,
				    ppcc_input_suggest(device, names), names,
				    "devices");
	device = dp->name; /* H100 is h100 */
	int len = snprintf(out, cap, "model:\n  transformer: {preset: %s%s%s}\n"
			   "cluster:\n  devices: %lld\n  device: %s\n",
			   m->name, precision ? ", precision: " : "",
			   precision ? precision : "", n, device);
	if (len < 0 || (size_t)len >= cap)
		return EXIT_INTERNAL;
	return EXIT_OK;
}

int ppcc_cli_batch_parse(ppcc_cli_batch *out, const char *s)
{
	char digits[32];
	size_t n = strlen(s);
	out->shift = 0;
	out->text = s;
	if (n > 0 && (s[n - 1] == 'K' || s[n - 1] == 'M')) {
		out->shift = s[n - 1] == 'K' ? 10 : 20;
		n--;
	}
	if (n == 0 || n >= sizeof digits)
		return -1;
	memcpy(digits, s, n);
	digits[n] = '\0';
	return ppcc_cli_count(digits, 1, 1LL << 30, &out->count);
}

int ppcc_cli_batch_sequences(long *out, char *line, size_t cap,
			     const ppcc_cli_batch *b, int seq_len)
{
	line[0] = '\0';
	if (b->shift == 0) {
		*out = (long)b->count;
		return EXIT_OK;
	}
	if (seq_len <= 0)
		return plain_usage("--global-batch: a K or M suffix counts "
				   "tokens, but the model is given as layers, "
				   "without a sequence length; give sequences "
				   "(a plain count), got", b->text);
	long long tokens = b->count << b->shift;
	long long seqs = tokens / seq_len;
	if (seqs < 1 || seqs > 1LL << 30) {
		fprintf(stderr, "ppcc: --global-batch: %s tokens are %s one "
			"sequence of %d\nTry 'ppcc --help' for more "
			"information.\n", b->text, seqs < 1 ? "fewer than"
			: "more than 2^30 sequences of", seq_len);
		return EXIT_USAGE;
	}
	snprintf(line, cap, "global batch %lld sequence%s (%s tokens = %lld / "
		 "%d%s)\n", seqs, seqs == 1 ? "" : "s", b->text, tokens, seq_len,
		 tokens % seq_len ? ", rounded down" : "");
	*out = (long)seqs;
	return EXIT_OK;
}
