/*
 * targets.h - the per-input logic of ppcc's fuzzers, shared by the
 * libFuzzer harnesses (fuzz_plan.c, fuzz_json.c, fuzz_checkpoint.c,
 * fuzz_search.c) and the Check suite that
 * replays tests/fuzz/regressions/ (check_harden.c).
 *
 * Each target runs one input through the library exactly as the CLI
 * would, checks the contracts that hold for every input, and calls
 * abort() when one is broken, so that a fuzzer records the input and a
 * replay fails.  Both return 0 (libFuzzer's "keep going").
 */
#ifndef PPCC_FUZZ_TARGETS_H
#define PPCC_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

/* Plans larger than this are refused after ppcc_config_check by ppcc's
 * own budget (ppcc_plan_budget_check, the path `--max-actions` sets), so
 * that one input cannot run for seconds under the sanitizers and the
 * refusal itself is fuzzed: more than PPCC_FUZZ_MAX_ACTIONS actions (the
 * environment variable of that name overrides it); models of more than
 * PPCC_FUZZ_MAX_LAYERS layers are skipped.  The examples' plans have 160
 * to 2,944 actions. */
#define PPCC_FUZZ_MAX_ACTIONS 1024
#define PPCC_FUZZ_MAX_LAYERS 4096

/* A model file (YAML): load -> check -> plan; the plan's schedules must
 * validate; every emitter (text, JSON, DOT timeline and dependency view,
 * header and standalone header, torch CSV with and without
 * communication, Chrome trace) must succeed on it; the JSON must read
 * back to the same fingerprint, model and layer names; the Chrome trace
 * must parse; every CSV line must follow the grammar; the header must be
 * printable ASCII without trigraphs or line splices.  SVG and PNG are
 * not rendered (that is Graphviz's layout, slow and not ppcc's code).
 * Every allocation made through ppcc_malloc is freed by the end. */
int ppcc_fuzz_plan(const uint8_t *data, size_t size);

/* A schedule JSON, as `ppcc check` reads it: read -> validate; a valid
 * schedule is then simulated and written as a Chrome trace and DOT, the
 * two emitters that accept a plan read back from JSON. */
int ppcc_fuzz_json(const uint8_t *data, size_t size);

/* A checkpoint's MANIFEST or one of its shards, through the parser a
 * load runs on it (ppcc_ckpt_parse_manifest, ppcc_ckpt_parse_shard).
 * The first byte chooses: bit 0 the shard parser (else the manifest's),
 * bit 1 a correct "crc32" trailer appended to the rest (so that inputs
 * get past the checksum), bits 2-4 the model's layers less one, bits 5-7
 * the shard's layer (modulo the layers); the model is "fuzz", the step
 * 3.  Inputs longer than PPCC_FUZZ_CKPT_MAX_INPUT are skipped.  The
 * status must be one a load documents, an error must come with one
 * "ppcc-ckpt: FILE...: error: " line, no file may be read, and the bytes
 * allocated (the reader's own count) must stay within
 * PPCC_FUZZ_CKPT_ALLOC_PER_BYTE times the input's size, all freed. */
#define PPCC_FUZZ_CKPT_MAX_INPUT 65536
#define PPCC_FUZZ_CKPT_ALLOC_PER_BYTE 64
int ppcc_fuzz_checkpoint(const uint8_t *data, size_t size);

/* A model file (YAML), as `ppcc search` reads it, of at most
 * PPCC_FUZZ_SEARCH_BYTES bytes (longer inputs are skipped): load ->
 * search with one thread, the top 3, each plan held to
 * PPCC_FUZZ_MAX_ACTIONS actions and the whole search to
 * PPCC_FUZZ_SEARCH_WORK units of work (ppcc_budget); the work the
 * search counted must be within that budget whatever it answers, a
 * refusal must say why, and a ranking must hold finite iterations. */
#define PPCC_FUZZ_SEARCH_BYTES 2048
#define PPCC_FUZZ_SEARCH_WORK ((int64_t)1 << 24)
int ppcc_fuzz_search(const uint8_t *data, size_t size);

/* 1 when text (len bytes) is n_ranks lines of torch CSV cells
 * `{stage}{op}{mb}` separated by commas, each line ending in '\n';
 * empty cells (idle steps) are allowed unless with_comms, and with_comms
 * a line also keeps each stage's UNSHARD and RESHARD alternating and
 * closed, computes a stage only while unsharded if it gathers at all,
 * and has one REDUCE_GRAD for each stage it computes, after its last
 * compute (doc/design/torch-csv.md). */
int ppcc_fuzz_csv_ok(const char *text, size_t len, int n_ranks,
		     int with_comms);

/* 1 when every byte of the header is printable ASCII, '\n' or '\t', and
 * it holds neither a trigraph nor a backslash-newline. */
int ppcc_fuzz_header_ok(const char *text, size_t len);

#endif
