/*
 * targets.h - the per-input logic of ppcc's fuzzers, shared by the
 * libFuzzer harnesses (fuzz_plan.c, fuzz_json.c, fuzz_search.c) and the Check suite that
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
 * empty cells (idle steps) are allowed unless with_comms. */
int ppcc_fuzz_csv_ok(const char *text, size_t len, int n_ranks,
		     int with_comms);

/* 1 when every byte of the header is printable ASCII, '\n' or '\t', and
 * it holds neither a trigraph nor a backslash-newline. */
int ppcc_fuzz_header_ok(const char *text, size_t len);

#endif
