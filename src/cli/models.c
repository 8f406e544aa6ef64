/*
 * models.c - the `ppcc models` command: the model catalogue
 * (src/input/models.c) as a table, or as JSON with -f json.  Each row's
 * parameter count is the loader's (ppcc_transformer_params), not typed.
 *
 *   ppcc models [-f|--format text|json]
 *
 * The options and the output are catalogue.c's.
 */
#include <stdio.h>
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

int ppcc_cli_models(int argc, char **argv)
{
	static const ppcc_cli_catalogue c = {"models", models_text,
					       models_json, 17};
	return ppcc_cli_catalogue_run(&c, argc, argv);
}
