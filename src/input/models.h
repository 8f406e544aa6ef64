/*
 * models.h - the model catalogue: presets a `transformer:` section names
 * (`transformer: {preset: llama3-70b}`), one row each, every shape cited
 * in doc/design/models.md.  `ppcc models` prints it; `ppcc search --model
 * NAME` plans one without a file.
 *
 * A row holds every shape key of the transformer section (layers, hidden,
 * heads, kv_heads, ffn_hidden, vocab, seq_len, swiglu, norm, position,
 * rope_theta, tie_embeddings, head_dim, moe, attention, mtp_layers, the
 * sliding window, biases and sinks, the query and key norms); the loader fills the keys a file does not
 * give from it, and a key given wins.  Nothing of training (micro-batch
 * size, recomputation, bytes per parameter) is in a row.
 */
#ifndef PPCC_INPUT_MODELS_H
#define PPCC_INPUT_MODELS_H

#include "input/input.h"

typedef struct ppcc_model_preset {
	const char *name;   /* the preset's name: "llama3-70b" */
	const char *label;  /* "Llama 3.1 70B" */
	int layers, hidden, heads, kv_heads, ffn_hidden, vocab, seq_len;
	int swiglu;         /* and so no biases and no dropout */
	int norm;           /* ppcc_norm */
	int position;       /* ppcc_position */
	double rope_theta;  /* 0: no RoPE (learned positions) */
	int tie_embeddings;
	const char *source; /* where the shapes come from, in a few words */
	int head_dim;       /* 0: hidden / heads */
	/* a mixture of experts (experts 0: dense): routed experts, a
	 * token's, their FFN width, shared experts, dense first layers */
	int experts, top_k, expert_ffn, shared_experts, dense_layers;
	/* group-limited routing: expert groups, those a token may reach */
	int groups, group_topk;
	/* multi-head latent attention (0s: multi-head or grouped-query):
	 * q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
	 * v_head_dim */
	int mla[5];
	int mtp_layers;
	int sliding_window, sliding_window_pattern;
	int biases, attention_sinks; /* GPT-OSS's */
	int qk_norm;                 /* Qwen3's per-head query and key norms */
} ppcc_model_preset;

extern const ppcc_model_preset ppcc_model_presets[];
extern const int ppcc_n_model_presets;
/* Fills out[0 .. ppcc_n_model_presets] with the presets' names in the
 * catalogue's order and a NULL.  PPCC_MAX_MODEL_PRESETS bounds them. */
#define PPCC_MAX_MODEL_PRESETS 32
void ppcc_model_preset_names(const char **out);

/* The preset named name (len bytes), or NULL. */
const ppcc_model_preset *ppcc_model_preset_find(const char *name,
						size_t len);

/* Sets every shape field of out from p (its other fields unchanged). */
void ppcc_model_preset_shape(ppcc_transformer *out,
			     const ppcc_model_preset *p);

/* The model's parameters by the loader's own formulas (transformer.c's
 * ppcc_transformer_params): the embedding, the blocks and the head, the
 * head's weights once when tied. */
double ppcc_model_preset_params(const ppcc_model_preset *p);

#endif
