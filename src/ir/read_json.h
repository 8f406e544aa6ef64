/*
 * read_json.h - a schedule JSON back into a plan.
 * Part of the internal interface; src/ppcc.h includes every such header.
 */
#ifndef PPCC_IR_READ_JSON_H
#define PPCC_IR_READ_JSON_H

#include "plan/plan.h"

/* Reads a schedule JSON written by ppcc_emit_json into a plan whose best
 * variant holds the stages, costs (fwd_ms/bwd_ms) and schedule; reports
 * format errors with the JSON's line and column. */
int ppcc_read_json(ppcc_plan *out, ppcc_arena *a, const char *path,
		   ppcc_diag *d);

/* yajl's error for the parser handle h (a yajl_handle) in the words ppcc's
 * JSON readers use: without its kind, final period and newline,
 * "end of file expected" for trailing garbage and "unexpected end of
 * file" for a premature end. */
void ppcc_json_yajl_message(char *out, size_t cap, void *h);

#endif
