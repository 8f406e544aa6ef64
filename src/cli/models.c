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

/* The preset's shape as the loader would read it. */
static void preset_shape(ppcc_transformer *t, const ppcc_model_preset *p)
{
	*t = (ppcc_transformer){.micro_batch_size = 1};
	ppcc_model_preset_shape(t, p);
}

static void models_text(FILE *f)
{
	fprintf(f, "%-15s %8s %8s %6s %6s %5s %3s %6s %7s %6s %5s %-6s %-9s "
		"%-7s %6s %4s  %s\n", "preset", "params", "active", "layers",
		"hidden", "heads", "kv", "ffn", "experts", "vocab", "seq",
		"mlp", "norm", "pos", "theta", "tied", "model");
	for (int i = 0; i < ppcc_n_model_presets; i++) {
		const ppcc_model_preset *p = &ppcc_model_presets[i];
		ppcc_transformer t;
		preset_shape(&t, p);
		char theta[16], experts[16];
		if (p->rope_theta > 0)
			snprintf(theta, sizeof theta, "%.0f", p->rope_theta);
		else
			snprintf(theta, sizeof theta, "-");
		if (p->experts > 0)
			snprintf(experts, sizeof experts, "%dx%d", p->experts,
				 p->top_k);
		else
			snprintf(experts, sizeof experts, "-");
		fprintf(f, "%-15s %7.2fB %7.2fB %6d %6d %5d %3d %6d %7s %6d "
			"%5d %-6s %-9s %-7s %6s %4s  %s\n", p->name,
			ppcc_transformer_params(&t) / 1e9,
			ppcc_transformer_active_params(&t) / 1e9, p->layers,
			p->hidden, p->heads, p->kv_heads,
			p->experts > 0 ? p->expert_ffn : p->ffn_hidden,
			experts, p->vocab, p->seq_len,
			p->swiglu ? "swiglu" : "gelu", norm_names[p->norm],
			position_names[p->position], theta,
			p->tie_embeddings ? "yes" : "no", p->label);
	}
	fputs("\nparams: the loader's count (a tied head once); active: a "
	      "token's, its\ntop-k routed experts of the experts (- dense).  "
	      "ffn: the FFN's width,\nan expert's in a mixture of experts.  kv: "
	      "key-value heads; seq: the\ntraining sequence; theta: RoPE's "
	      "base (- none).\n", f);
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
		ppcc_transformer t;
		preset_shape(&t, p);
		if (o && (json_object_set_new(o, "active_params", json_real(
				  ppcc_transformer_active_params(&t))) < 0 ||
			  (p->head_dim > 0 &&
			   json_object_set_new(o, "head_dim",
					       json_integer(p->head_dim)) < 0) ||
			  (p->experts > 0 &&
			   json_object_set_new(o, "moe", json_pack(
				"{s:i, s:i, s:i, s:i, s:i}", "experts",
				p->experts, "top_k", p->top_k, "ffn_hidden",
				p->expert_ffn, "shared_experts",
				p->shared_experts, "dense_layers",
				p->dense_layers)) < 0) ||
			  (p->mla[1] > 0 &&
			   json_object_set_new(o, "attention", json_pack(
				"{s:s, s:i, s:i, s:i, s:i, s:i}", "kind", "mla",
				"q_lora_rank", p->mla[0], "kv_lora_rank",
				p->mla[1], "qk_nope_head_dim", p->mla[2],
				"qk_rope_head_dim", p->mla[3], "v_head_dim",
				p->mla[4])) < 0) ||
			  (p->mtp_layers > 0 &&
			   json_object_set_new(o, "mtp_layers",
					       json_integer(p->mtp_layers)) < 0) ||
			  (p->sliding_window > 0 &&
			   (json_object_set_new(o, "sliding_window",
						json_integer(p->sliding_window)) < 0 ||
			    json_object_set_new(o, "sliding_window_pattern",
						json_integer(p->sliding_window_pattern)) < 0)) ||
			  (p->biases &&
			   json_object_set_new(o, "biases", json_true()) < 0) ||
			  (p->attention_sinks &&
			   json_object_set_new(o, "attention_sinks",
					       json_true()) < 0) ||
			  (p->qk_norm &&
			   json_object_set_new(o, "qk_norm", json_true()) < 0))) {
			json_decref(o);
			o = NULL;
		}
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
