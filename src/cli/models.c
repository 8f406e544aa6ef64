/*
 * models.c - the `ppcc models` command: the model catalogue
 * (src/input/models.c) as a table, or as JSON with -f json.  Each row's
 * parameter count is the loader's (ppcc_transformer_params), not typed.
 *
 *   ppcc models [-f|--format text|json]
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

static const char *const norm_names[] = {"rmsnorm", "layernorm"};
static const char *const position_names[] = {"rope", "learned"};

static void models_text(FILE *f)
{
	fprintf(f, "%-11s %8s %6s %6s %5s %3s %6s %6s %5s %-6s %-9s %-7s %6s "
		"%4s  %s\n", "preset", "params", "layers", "hidden", "heads",
		"kv", "ffn", "vocab", "seq", "mlp", "norm", "pos", "theta",
		"tied", "model");
	for (int i = 0; i < ppcc_n_model_presets; i++) {
		const ppcc_model_preset *p = &ppcc_model_presets[i];
		char theta[16];
		if (p->rope_theta > 0)
			snprintf(theta, sizeof theta, "%g", p->rope_theta);
		else
			snprintf(theta, sizeof theta, "-");
		fprintf(f, "%-11s %7.2fB %6d %6d %5d %3d %6d %6d %5d %-6s %-9s "
			"%-7s %6s %4s  %s\n", p->name,
			ppcc_model_preset_params(p) / 1e9, p->layers,
			p->hidden, p->heads, p->kv_heads, p->ffn_hidden,
			p->vocab, p->seq_len, p->swiglu ? "swiglu" : "gelu",
			norm_names[p->norm], position_names[p->position],
			theta, p->tie_embeddings ? "yes" : "no", p->label);
	}
	fputs("\nparams: the loader's count (a tied head once).  kv: key-value\n"
	      "heads; seq: the training sequence; theta: RoPE's base (- none).\n",
	      f);
	for (int i = 0; i < ppcc_n_model_presets; i++)
		fprintf(f, "%s: %s\n", ppcc_model_presets[i].name,
			ppcc_model_presets[i].source);
	fputs("Sources for every figure: doc/design/models.md.  Name one with\n"
	      "`transformer: {preset: NAME}` (ppcc(5)) or `ppcc search --model "
	      "NAME`.\n", f);
}

static json_t *models_json(void)
{
	json_t *list = json_array();
	for (int i = 0; list && i < ppcc_n_model_presets; i++) {
		const ppcc_model_preset *p = &ppcc_model_presets[i];
		json_t *o = json_pack(
			"{s:s, s:s, s:f, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:b,"
			" s:s, s:s, s:f, s:b, s:s}",
			"name", p->name, "model", p->label, "params",
			ppcc_model_preset_params(p), "layers", p->layers,
			"hidden", p->hidden, "heads", p->heads, "kv_heads",
			p->kv_heads, "ffn_hidden", p->ffn_hidden, "vocab",
			p->vocab, "seq_len", p->seq_len, "swiglu", p->swiglu,
			"norm", norm_names[p->norm], "position",
			position_names[p->position], "rope_theta",
			p->rope_theta, "tie_embeddings", p->tie_embeddings,
			"source", p->source);
		if (!o || json_array_append_new(list, o) < 0) {
			json_decref(list);
			return NULL;
		}
	}
	return list;
}

static int models_usage(const char *msg, const char *arg)
{
	fputs("ppcc: ", stderr);
	fprintf(stderr, msg, arg);
	fputs("\nTry 'ppcc --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

int ppcc_cli_models(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"format", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int json = 0, c;
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":f:h", longopts, NULL)) != -1) {
		const char *opt = argv[optind - 1];
		switch (c) {
		case 'f':
			if (strcmp(optarg, "json") == 0)
				json = 1;
			else if (strcmp(optarg, "text") != 0)
				return models_usage("models: unknown format '%s' "
						    "(text or json)", optarg);
			break;
		case 'h':
			puts("usage: ppcc models [-f|--format text|json]");
			return EXIT_OK;
		case ':': return models_usage("option '%s' needs a value", opt);
		default: return models_usage("unknown option '%s'", opt);
		}
	}
	if (optind < argc)
		return models_usage("unexpected argument '%s'", argv[optind]);
	char *buf = NULL;
	size_t len = 0;
	locale_t saved = ppcc_locale_enter();
	FILE *f = open_memstream(&buf, &len);
	int ok = f != NULL;
	if (f && json) {
		json_t *list = models_json();
		ok = list && json_dumpf(list, f, JSON_INDENT(2) |
					JSON_REAL_PRECISION(17)) == 0 &&
		     fputc('\n', f) != EOF;
		json_decref(list);
	} else if (f) {
		models_text(f);
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
