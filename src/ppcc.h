/*
 * ppcc.h - the data structures the compiler's phases meet through.
 *
 * The pipeline, a folder a phase (doc/design/pipeline.md describes each):
 *   input/       YAML -> ppcc_config; the transformer shorthand; checks
 *   search/      every configuration that fills the cluster, ranked
 *   partition/   the min-bottleneck split, the least-step split, bounds
 *   sched/       the schedule kinds, lowering, reductions, the auto kind
 *   ir/          validation, send against receive order, JSON read back
 *   sim/         simulation, one training iteration, the reductions' times
 *   cost/        the cost model: rank -> devices and links; collectives and
 *                transfers; layer and stage costs
 *   plan/        config -> cost tables -> plan; the budget; the one driver
 *                of `ppcc plan` and the library's entry point
 *   emit/        the formats' table; text, JSON, DOT/SVG/PNG, C header,
 *                torch CSV, Chrome trace, trainers' settings
 *   diagnose/    runtime flight records -> the cause of a failure or hang
 *   util/        allocation and the arena, diagnostics, names, JSON writer
 *   cli/         argv -> options -> the calls above; search and diagnose
 *   runtime/     libppcc_rt: the transports and the executor
 *
 * Library functions return 0 or a negative ppcc_status and never print:
 * diagnostics go to a ppcc_diag sink.  Compiler data lives in one
 * ppcc_arena and is freed with it.
 */
#ifndef PPCC_INTERNAL_H
#define PPCC_INTERNAL_H

#define PPCC_VERSION_STRING "0.1.0"

#include "util/util.h"
#include "input/input.h"
#include "input/models.h"
#include "ir/ir.h"
#include "sim/sim.h"
#include "cost/cost.h"
#include "cost/devices.h"
#include "sched/kind.h"
#include "partition/partition.h"
#include "plan/plan.h"
#include "plan/compile.h"
#include "partition/bound.h"
#include "sim/iteration.h"
#include "search/search.h"
#include "util/visible.h"
#include "emit/emit.h"
#include "ir/read_json.h"

#endif
