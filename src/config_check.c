/*
 * config_check.c - the checks that need the whole configuration, and the
 * pipeline settings nobody gave.
 *
 * The loader checks each value on its own; what remains are relations:
 * enough layers for the stages and chunks, enough devices for the stages
 * and tensor parallelism, chunks only with the interleaved schedule, and
 * Megatron-LM's constraints on the interleaved schedule's microbatch group
 * G (group_size, 0 meaning the stages p):
 *
 *   p <= G <= m, and m % G == 0 or m % G >= p
 *
 * (the last, shorter group must still fill the pipeline).  A tensor-
 * parallel group, the t devices of one pipeline rank, may not straddle two
 * device groups: its devices must be alike.  These run after the command
 * line has overridden the file, so each message points at whatever set
 * the value: its key in the file, "<command line>", or, for a default, the
 * pipeline section.  A device's tflops must lie where the cost model's
 * products stay finite and nonzero.  Every broken constraint is reported.
 */
#include <stdint.h>

#include "ppcc.h"

/* The most (virtual stage, microbatch) pairs a plan may hold: each is a
 * forward, a backward and up to four transfers in the schedule. */
#define CHECK_MAX_PAIRS ((int64_t)1 << 24)

/* A device's peak: 1 MFLOP/s to 1 ZFLOP/s (ppcc(5)). */
#define CHECK_MIN_TFLOPS 1e-6
#define CHECK_MAX_TFLOPS 1e9

static ppcc_loc where(const ppcc_config *c, const ppcc_loc *set)
{
	if (set->file)
		return *set;
	if (c->pipeline.loc.file)
		return c->pipeline.loc;
	return (ppcc_loc){c->path, 0, 0};
}

static const char *plural(int64_t n)
{
	return n == 1 ? "" : "s";
}

void ppcc_config_fill_defaults(ppcc_config *c)
{
	ppcc_pipeline *p = &c->pipeline;
	if (!p->tensor_parallel_loc.file)
		p->tensor_parallel = 1;
	if (!p->kind_loc.file)
		p->kind = PPCC_SCHED_1F1B;
	if (!p->chunks_loc.file)
		p->chunks = p->kind == PPCC_SCHED_INTERLEAVED ? 2 : 1;
	if (!p->stages_loc.file) {
		int s = p->tensor_parallel > 0
			? c->cluster.devices / p->tensor_parallel : 1;
		int cap = p->chunks > 0 ? c->model.n_layers / p->chunks
					: c->model.n_layers;
		if (s > cap)
			s = cap;
		p->stages = s < 1 ? 1 : s;
	}
	if (!p->microbatches_loc.file) {
		int64_t m = 4 * (int64_t)p->stages;
		p->microbatches = (int)(m > PPCC_MAX_COUNT ? PPCC_MAX_COUNT : m);
	}
	if (!p->group_size_loc.file)
		p->group_size = 0;
}

/* Each t-device tensor-parallel group of the first p ranks must lie in
 * one device group. */
static void check_tensor_groups(const ppcc_config *c, ppcc_diag *d)
{
	const ppcc_cluster *cl = &c->cluster;
	int64_t t = c->pipeline.tensor_parallel;
	int64_t used = (int64_t)c->pipeline.stages * t;
	int64_t end = 0;
	for (int i = 0; i + 1 < cl->n_groups; i++) {
		end += cl->groups[i].count;
		if (end >= used)
			break;
		if (end % t == 0)
			continue;
		int64_t rank = end / t;
		ppcc_loc loc = where(c, &cl->groups[i].loc);
		ppcc_error(d, &loc,
			   "rank %lld's %lld-way tensor-parallel group (devices "
			   "%lld to %lld) spans device groups '%s' and '%s'; "
			   "give each group a multiple of %lld devices",
			   (long long)rank, (long long)t, (long long)(rank * t),
			   (long long)(rank * t + t - 1), cl->groups[i].name,
			   cl->groups[i + 1].name, (long long)t);
	}
}

static void check_interleaved(const ppcc_config *c, ppcc_diag *d)
{
	const ppcc_pipeline *p = &c->pipeline;
	ppcc_loc loc;
	int given = p->group_size != 0;
	int g = given ? p->group_size : p->stages;
	int m = p->microbatches;

	if (p->chunks < 2) {
		loc = where(c, p->chunks_loc.file ? &p->chunks_loc : &p->kind_loc);
		ppcc_error(d, &loc,
			   "the interleaved schedule needs at least 2 chunks per "
			   "rank; chunks is %d", p->chunks);
	}
	if (given && g < p->stages) {
		loc = where(c, &p->group_size_loc);
		ppcc_error(d, &loc,
			   "group_size %d is smaller than the %d stages; the "
			   "interleaved schedule needs a group_size from %d to "
			   "the microbatches (%d)", g, p->stages, p->stages, m);
		return;
	}
	loc = where(c, p->microbatches_loc.file ? &p->microbatches_loc
						: &p->group_size_loc);
	if (g > m) {
		if (given)
			ppcc_error(d, &loc,
				   "%d microbatch%s cannot fill a group of %d; "
				   "the interleaved schedule needs microbatches "
				   ">= group_size", m, m == 1 ? "" : "es", g);
		else
			ppcc_error(d, &loc,
				   "%d microbatch%s cannot fill %d stages; the "
				   "interleaved schedule needs microbatches >= "
				   "stages", m, m == 1 ? "" : "es", p->stages);
		return;
	}
	int rest = m % g;
	if (rest != 0 && rest < p->stages)
		ppcc_error(d, &loc,
			   "%d microbatches in groups of %d leave a last group "
			   "of %d, fewer than the %d stages; use a multiple of %d "
			   "microbatches, or a last group of at least %d",
			   m, g, rest, p->stages, g, p->stages);
}

int ppcc_config_check(const ppcc_config *c, ppcc_diag *d)
{
	const ppcc_pipeline *p = &c->pipeline;
	int errors = d->errors;
	ppcc_loc loc;

	if (p->kind < 0 || p->kind >= PPCC_SCHED_COUNT) {
		loc = where(c, &p->kind_loc);
		ppcc_error(d, &loc, "unknown schedule kind %d", p->kind);
	}
	static const struct {
		const char *name;
		int min;
	} mins[] = {{"stages", 1}, {"microbatches", 1}, {"chunks", 1},
		    {"group_size", 0}, {"tensor_parallel", 1}};
	const int values[] = {p->stages, p->microbatches, p->chunks,
			      p->group_size, p->tensor_parallel};
	const ppcc_loc *locs[] = {&p->stages_loc, &p->microbatches_loc,
				  &p->chunks_loc, &p->group_size_loc,
				  &p->tensor_parallel_loc};
	for (int i = 0; i < 5; i++)
		if (values[i] < mins[i].min) {
			loc = where(c, locs[i]);
			ppcc_error(d, &loc, "%s must be at least %d, got %d",
				   mins[i].name, mins[i].min, values[i]);
		}
	if (c->model.n_layers < 1 || c->cluster.devices < 1 ||
	    c->cluster.n_groups < 1) {
		loc = (ppcc_loc){c->path, 0, 0};
		ppcc_error(d, &loc, "the configuration has no %s",
			   c->model.n_layers < 1 ? "layers" : "devices");
	}
	if (d->errors != errors)
		return PPCC_EINPUT;

	/* A device's speed divides every layer's work: outside this range
	 * the products overflow or underflow (a layer's time became NaN and
	 * the layer was blamed), so the device is. */
	for (int g = 0; g < c->cluster.n_groups; g++) {
		const ppcc_device_group *dg = &c->cluster.groups[g];
		if (!(dg->tflops >= CHECK_MIN_TFLOPS &&
		      dg->tflops <= CHECK_MAX_TFLOPS))
			ppcc_error(d, &dg->loc, "device '%s': tflops of %.3g is "
				   "outside the range ppcc can plan (%g to %g)",
				   dg->name ? dg->name : "", dg->tflops,
				   CHECK_MIN_TFLOPS, CHECK_MAX_TFLOPS);
	}
	if (d->errors != errors)
		return PPCC_EINPUT;

	int64_t stages = p->stages, chunks = p->chunks, t = p->tensor_parallel;
	if (stages * chunks > c->model.n_layers) {
		loc = where(c, p->stages_loc.file ? &p->stages_loc : &p->chunks_loc);
		if (chunks == 1)
			ppcc_error(d, &loc,
				   "%lld stages need %lld layers; the model has %d",
				   (long long)stages, (long long)stages,
				   c->model.n_layers);
		else
			ppcc_error(d, &loc,
				   "%lld stage%s x %lld chunks need %lld layers; "
				   "the model has %d", (long long)stages,
				   plural(stages), (long long)chunks,
				   (long long)(stages * chunks), c->model.n_layers);
	}
	if (t > c->cluster.devices) {
		loc = where(c, &p->tensor_parallel_loc);
		ppcc_error(d, &loc,
			   "%lld-way tensor parallelism needs %lld devices; the "
			   "cluster has %d", (long long)t, (long long)t,
			   c->cluster.devices);
	} else if (stages * t > c->cluster.devices) {
		loc = where(c, p->stages_loc.file ? &p->stages_loc
						  : &p->tensor_parallel_loc);
		if (t == 1)
			ppcc_error(d, &loc,
				   "%lld stages need %lld devices; the cluster "
				   "has %d", (long long)stages, (long long)stages,
				   c->cluster.devices);
		else
			ppcc_error(d, &loc,
				   "%lld stage%s x %lld-way tensor parallelism "
				   "need %lld devices; the cluster has %d",
				   (long long)stages, plural(stages), (long long)t,
				   (long long)(stages * t), c->cluster.devices);
	} else if (t > 1) {
		check_tensor_groups(c, d);
	}
	if (p->kind != PPCC_SCHED_INTERLEAVED && chunks > 1) {
		loc = where(c, &p->chunks_loc);
		ppcc_error(d, &loc,
			   "%lld chunks per rank need the interleaved schedule; "
			   "the schedule is %s", (long long)chunks,
			   ppcc_schedule_kind_name(p->kind));
	}
	if (p->kind == PPCC_SCHED_INTERLEAVED)
		check_interleaved(c, d);
	if (stages * chunks * p->microbatches > CHECK_MAX_PAIRS) {
		loc = where(c, &p->microbatches_loc);
		if (chunks == 1)
			ppcc_error(d, &loc,
				   "%lld stages x %d microbatches exceed the "
				   "limit of %lld stage-microbatch pairs",
				   (long long)stages, p->microbatches,
				   (long long)CHECK_MAX_PAIRS);
		else
			ppcc_error(d, &loc,
				   "%lld stages x %lld chunks x %d microbatches "
				   "exceed the limit of %lld stage-microbatch "
				   "pairs", (long long)stages, (long long)chunks,
				   p->microbatches, (long long)CHECK_MAX_PAIRS);
	}
	return d->errors != errors ? PPCC_EINPUT : 0;
}
