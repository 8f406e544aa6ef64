/*
 * ppcc.h - the data structures the compiler's phases meet through.
 *
 * The pipeline, a folder a phase (a file a step within it):
 *
 *   input/       load.c: YAML (libyaml events) -> ppcc_config, every node
 *                located; transformer.c: the `transformer:` shorthand ->
 *                per-layer costs; config_check.c: checks that need the
 *                whole configuration, and the settings nobody gave
 *   search/      search.c: every configuration that fills the cluster,
 *                ranked by its planned iteration, provably pruned
 *   partition/   partition.c: the exact min-bottleneck split and the
 *                least path bound; split.c: the split with the least
 *                simulated step; bound.c, membound.c: the search's
 *                lower bounds on time and memory
 *   sched/       the schedule kinds: kinds.c is their table (name,
 *                placement, constraints, closed form), one file per kind
 *                holds its per-rank compute order, lower.c turns any
 *                compute order into action lists with p2p actions,
 *                reduce.c places a data-parallel plan's reductions;
 *                choose.c and exact.c: the auto kind's choice and its
 *                exact (GLPK) search
 *   ir/          validate.c: structural checks and a dry run of any
 *                ppcc_schedule; match_order.c: send order against receive
 *                order per rank pair (order-matching transports such as
 *                NCCL); read_json.c: a JSON schedule back into a
 *                ppcc_schedule (ppcc check, the runtime)
 *   sim/         simulate.c: event-driven simulation (step, bubble, peak
 *                memory); iteration.c: one training iteration (reduction
 *                on a communication timeline, optimizer, throughput, MFU,
 *                memory split); dp_timeline.c: the reductions as the
 *                runtime launches them
 *   cost/        the cost model: topology.c, from a pipeline rank to its
 *                devices, group, node and links; comm.c, every collective
 *                and p2p time; compute.c, layer and stage costs
 *   plan/        plan.c: config -> cost tables, driving partition,
 *                schedule, simulation and the uniform baseline; budget.c:
 *                what a plan will cost before it is built; compile.c: the
 *                library's entry point (ppcc/compiler.h)
 *   emit/        text, JSON, DOT/SVG/PNG, C header, torch CSV, Chrome
 *                trace, trainers' settings
 *   diagnose/    runtime flight records -> the cause of a failure or hang
 *   util/        allocation and the arena, diagnostics, visible names,
 *                the JSON writer
 *   cli/         main.c: argv -> options -> the calls above; search.c and
 *                diagnose.c: those commands
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
#include "ir/ir.h"
#include "sim/sim.h"
#include "cost/cost.h"
#include "sched/kind.h"
#include "partition/partition.h"
#include "plan/plan.h"
#include "partition/bound.h"
#include "sim/iteration.h"
#include "search/search.h"
#include "util/visible.h"
#include "emit/emit.h"
#include "ir/read_json.h"

#endif
