/*
 * models.c - the model catalogue, one row a model.  The shapes and their
 * sources are in doc/design/models.md; tests/check_load.c checks each
 * row's parameter count against the published one and plans each beside
 * the example that spells the same shape by hand.
 */
#include <string.h>

#include "ppcc.h"

#define RMS PPCC_NORM_RMSNORM
#define LN PPCC_NORM_LAYERNORM
#define ROPE PPCC_POSITION_ROPE
#define LEARNED PPCC_POSITION_LEARNED
#define HF31 "Hugging Face config.json, meta-llama/Meta-Llama-3.1-"

/* name, label; layers, hidden, heads, kv heads, FFN, vocabulary, sequence;
 * swiglu, norm, position, RoPE theta, tied embeddings; source */
const ppcc_model_preset ppcc_model_presets[] = {
	{"llama3-8b", "Llama 3.1 8B", 32, 4096, 32, 8, 14336, 128256, 8192,
	 1, RMS, ROPE, 500000, 0, HF31 "8B"},
	{"llama3-70b", "Llama 3.1 70B", 80, 8192, 64, 8, 28672, 128256, 8192,
	 1, RMS, ROPE, 500000, 0, HF31 "70B"},
	{"llama3-405b", "Llama 3.1 405B", 126, 16384, 128, 8, 53248, 128256,
	 8192, 1, RMS, ROPE, 500000, 0, HF31 "405B"},
	{"llama2-70b", "Llama 2 70B", 80, 8192, 64, 8, 28672, 32000, 4096, 1,
	 RMS, ROPE, 10000, 0, "Hugging Face config.json, meta-llama/Llama-2-70b-hf"},
	{"gpt3-175b", "GPT-3 175B", 96, 12288, 96, 96, 49152, 50257, 2048, 0,
	 LN, LEARNED, 0, 1, "Brown et al. 2020, Table 2.1; GPT-2's vocabulary"},
};

const int ppcc_n_model_presets =
	(int)(sizeof ppcc_model_presets / sizeof ppcc_model_presets[0]);

void ppcc_model_preset_names(const char **out)
{
	for (int i = 0; i < ppcc_n_model_presets; i++)
		out[i] = ppcc_model_presets[i].name;
	out[ppcc_n_model_presets] = NULL;
}

const ppcc_model_preset *ppcc_model_preset_find(const char *name, size_t len)
{
	for (int i = 0; i < ppcc_n_model_presets; i++) {
		const char *n = ppcc_model_presets[i].name;
		if (strlen(n) == len && memcmp(n, name, len) == 0)
			return &ppcc_model_presets[i];
	}
	return NULL;
}

void ppcc_model_preset_shape(ppcc_transformer *out, const ppcc_model_preset *p)
{
	out->layers = p->layers;
	out->hidden = p->hidden;
	out->heads = p->heads;
	out->kv_heads = p->kv_heads;
	out->ffn_hidden = p->ffn_hidden;
	out->vocab = p->vocab;
	out->seq_len = p->seq_len;
	out->swiglu = p->swiglu;
	out->norm = p->norm;
	out->position = p->position;
	out->rope_theta = p->rope_theta;
	out->tie_embeddings = p->tie_embeddings;
}

double ppcc_model_preset_params(const ppcc_model_preset *p)
{
	ppcc_transformer t = {.micro_batch_size = 1};
	ppcc_model_preset_shape(&t, p);
	return ppcc_transformer_params(&t);
}
