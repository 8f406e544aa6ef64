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

/* the fields after the experts' of a row without them */
#define PLAIN {0}, 0, 0, 0, 0, 0, 0
/* and with Qwen3's query and key norms */
#define PLAIN_QK_NORM {0}, 0, 0, 0, 0, 0, 1
#define DENSE 0, 0, 0, 0, 0, 0, 0, 0, PLAIN

/* name, label; layers, hidden, heads, kv heads, FFN, vocabulary, sequence;
 * swiglu, norm, position, RoPE theta, tied embeddings; source; head
 * dimension; experts, top k, expert FFN, shared experts, dense layers,
 * expert groups and those a token may reach;
 * latent attention's {q_lora_rank, kv_lora_rank, qk_nope_head_dim,
 * qk_rope_head_dim, v_head_dim}; MTP modules; sliding window and its
 * pattern; GPT-OSS's biases and attention sinks; Qwen3's query and key
 * norms (its config's model type, qwen3_moe, whose attention norms each
 * head's query and key: Hugging Face transformers' Qwen3MoeAttention) */
const ppcc_model_preset ppcc_model_presets[] = {
	{"llama3-8b", "Llama 3.1 8B", 32, 4096, 32, 8, 14336, 128256, 8192,
	 1, RMS, ROPE, 500000, 0, HF31 "8B", DENSE},
	{"llama3-70b", "Llama 3.1 70B", 80, 8192, 64, 8, 28672, 128256, 8192,
	 1, RMS, ROPE, 500000, 0, HF31 "70B", DENSE},
	{"llama3-405b", "Llama 3.1 405B", 126, 16384, 128, 8, 53248, 128256,
	 8192, 1, RMS, ROPE, 500000, 0, HF31 "405B", DENSE},
	{"llama2-70b", "Llama 2 70B", 80, 8192, 64, 8, 28672, 32000, 4096, 1,
	 RMS, ROPE, 10000, 0, "Hugging Face config.json, meta-llama/Llama-2-70b-hf",
	 DENSE},
	{"gpt3-175b", "GPT-3 175B", 96, 12288, 96, 96, 49152, 50257, 2048, 0,
	 LN, LEARNED, 0, 1, "Brown et al. 2020, Table 2.1; GPT-2's vocabulary",
	 DENSE},
	{"mixtral-8x7b", "Mixtral 8x7B", 32, 4096, 32, 8, 14336, 32000, 4096,
	 1, RMS, ROPE, 1e6, 0,
	 "Hugging Face config.json, mistralai/Mixtral-8x7B-v0.1",
	 0, 8, 2, 14336, 0, 0, 0, 0, PLAIN},
	{"mixtral-8x22b", "Mixtral 8x22B", 56, 6144, 48, 8, 16384, 32000, 4096,
	 1, RMS, ROPE, 1e6, 0,
	 "Hugging Face config.json, mistralai/Mixtral-8x22B-v0.1",
	 0, 8, 2, 16384, 0, 0, 0, 0, PLAIN},
	{"qwen3-30b-a3b", "Qwen3-30B-A3B", 48, 2048, 32, 4, 6144, 151936, 4096,
	 1, RMS, ROPE, 1e6, 0, "Hugging Face config.json, Qwen/Qwen3-30B-A3B",
	 128, 128, 8, 768, 0, 0, 0, 0, PLAIN_QK_NORM},
	{"qwen3-235b-a22b", "Qwen3-235B-A22B", 94, 4096, 64, 4, 12288, 151936,
	 4096, 1, RMS, ROPE, 1e6, 0,
	 "Hugging Face config.json, Qwen/Qwen3-235B-A22B",
	 128, 128, 8, 1536, 0, 0, 0, 0, PLAIN_QK_NORM},
	{"deepseek-v3", "DeepSeek-V3", 61, 7168, 128, 128, 18432, 129280, 4096,
	 1, RMS, ROPE, 10000, 0,
	 "Hugging Face config.json, deepseek-ai/DeepSeek-V3",
	 0, 256, 8, 2048, 1, 3, 8, 4, {1536, 512, 128, 64, 128}, 1, 0, 0, 0, 0, 0},
	{"gpt-oss-120b", "gpt-oss-120b", 36, 2880, 64, 8, 2880, 201088, 4096,
	 1, RMS, ROPE, 150000, 0, "Hugging Face config.json, openai/gpt-oss-120b",
	 64, 128, 4, 2880, 0, 0, 0, 0, {0}, 0, 128, 2, 1, 1, 0},
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
	out->head_dim = p->head_dim;
	out->moe = (ppcc_moe){0};
	if (p->experts > 0) {
		out->moe.experts = p->experts;
		out->moe.top_k = p->top_k;
		out->moe.ffn_hidden = p->expert_ffn;
		out->moe.shared_experts = p->shared_experts;
		out->moe.dense_layers = p->dense_layers;
		out->moe.groups = p->groups;
		out->moe.group_topk = p->group_topk;
		out->moe.every = 1;
		out->moe.imbalance = PPCC_MOE_IMBALANCE;
	}
	out->mla = (ppcc_mla){0};
	if (p->mla[1] > 0)
		out->mla = (ppcc_mla){.kind = 1, .q_lora_rank = p->mla[0],
				      .kv_lora_rank = p->mla[1],
				      .qk_nope_head_dim = p->mla[2],
				      .qk_rope_head_dim = p->mla[3],
				      .v_head_dim = p->mla[4]};
	out->mtp_layers = p->mtp_layers;
	out->sliding_window = p->sliding_window;
	out->sliding_window_pattern = p->sliding_window_pattern;
	out->biases = p->biases;
	out->attention_sinks = p->attention_sinks;
	out->qk_norm = p->qk_norm;
}

double ppcc_model_preset_params(const ppcc_model_preset *p)
{
	ppcc_transformer t = {.micro_batch_size = 1};
	ppcc_model_preset_shape(&t, p);
	return ppcc_transformer_params(&t);
}
