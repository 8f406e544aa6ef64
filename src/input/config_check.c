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
 * device groups: its devices must be alike.
 *
 * Devices are laid out as Megatron-LM orders its ranks (tensor fastest,
 * then context, then data, then pipeline): pipeline rank r owns the
 * t * cp * d devices from r * t * cp * d, and its replicas must be alike
 * too.  The data-parallel size d defaults to the devices left over,
 * devices / (t * p * cp), which must divide; global_batch_size B gives
 * the microbatches, m = B / (b * d).  These run after the command
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
	if (!p->context_parallel_loc.file)
		p->context_parallel = 1;
	if (!p->zero_loc.file)
		p->zero = 0;
	if (!p->kind_loc.file)
		p->kind = PPCC_SCHED_1F1B;
	if (!p->chunks_loc.file)
		p->chunks = ppcc_sched_kind(p->kind)
			? ppcc_sched_kind(p->kind)->default_chunks : 1;
	int64_t width = (int64_t)(p->tensor_parallel > 0 ? p->tensor_parallel : 1) *
			(p->context_parallel > 0 ? p->context_parallel : 1);
	if (p->data_parallel_loc.file && p->data_parallel > 0)
		width *= p->data_parallel;
	if (!p->stages_loc.file && p->partition && p->chunks > 0 &&
	    p->n_partition % p->chunks == 0) {
		/* the explicit partition lists every virtual stage */
		p->stages = p->n_partition / p->chunks;
	} else if (!p->stages_loc.file) {
		int s = (int)(c->cluster.devices / width);
		int cap = p->chunks > 0 ? c->model.n_layers / p->chunks
					: c->model.n_layers;
		if (s > cap)
			s = cap;
		/* With the data-parallel size left to follow, the most stages
		 * whose product with t * cp divides the devices, and whose
		 * stage of t * cp * d devices the experts' ep x etp given
		 * divides. */
		int64_t fold = 1;
		if (p->expert_parallel_loc.file && p->expert_parallel > 0)
			fold = (int64_t)p->expert_parallel *
			       (p->expert_tensor_parallel > 0
				? p->expert_tensor_parallel
				: p->tensor_parallel > 0 ? p->tensor_parallel : 1);
		if (!p->data_parallel_loc.file)
			while (s > 1 && (c->cluster.devices % (width * s) != 0 ||
					 (c->cluster.devices / s) % fold != 0))
				s--;
		p->stages = s < 1 ? 1 : s;
	}
	/* a kind that interleaves only a pipeline (combined-1f1b) runs one
	 * chunk on one stage */
	if (!p->chunks_loc.file && p->stages == 1)
		p->chunks = ppcc_sched_kind_chunks(p->kind, 1);
	if (!p->data_parallel_loc.file) {
		int64_t rep = (int64_t)(p->tensor_parallel > 0 ? p->tensor_parallel : 1) *
			(p->context_parallel > 0 ? p->context_parallel : 1) *
			(p->stages > 0 ? p->stages : 1);
		int64_t dp = c->cluster.devices / rep;
		p->data_parallel = dp < 1 ? 1 : (int)dp;
	}
	int64_t per_mb = (int64_t)(c->model.micro_batch_size > 0
				   ? c->model.micro_batch_size : 1) *
			 (p->data_parallel > 0 ? p->data_parallel : 1);
	if (!p->microbatches_loc.file && p->global_batch_size > 0) {
		int64_t m = p->global_batch_size / per_mb;
		p->microbatches = (int)(m < 1 ? 1 : m > PPCC_MAX_COUNT
					? PPCC_MAX_COUNT : m);
	} else if (!p->microbatches_loc.file) {
		int64_t m = 4 * (int64_t)p->stages;
		p->microbatches = (int)(m > PPCC_MAX_COUNT ? PPCC_MAX_COUNT : m);
	}
	if (!p->group_size_loc.file)
		p->group_size = 0;
	if (!p->expert_parallel_loc.file)
		p->expert_parallel = 1;
	if (!p->expert_tensor_parallel_loc.file)
		p->expert_tensor_parallel = 0;
	if (!p->data_parallel_shard_loc.file)
		p->data_parallel_shard = 0;
}

int ppcc_pipeline_etp(const ppcc_pipeline *p)
{
	return p->expert_tensor_parallel > 0 ? p->expert_tensor_parallel
					     : p->tensor_parallel;
}

int ppcc_pipeline_zero_replicas(const ppcc_pipeline *p)
{
	int d = p->data_parallel > 0 ? p->data_parallel : 1;
	return p->zero >= 1 && p->data_parallel_shard > 0
	       ? d / p->data_parallel_shard : 1;
}

int ppcc_pipeline_zero_ranks(const ppcc_pipeline *p)
{
	int cp = p->context_parallel > 0 ? p->context_parallel : 1;
	int d = p->data_parallel > 0 ? p->data_parallel : 1;
	return (ppcc_pipeline_zero_replicas(p) > 1 ? p->data_parallel_shard
						  : d) * cp;
}

double ppcc_pipeline_moment_bytes(const ppcc_pipeline *p)
{
	return p->moments_bf16 ? 2.0 : 4.0;
}

int ppcc_overlap_moe_a2a(const ppcc_pipeline *p)
{
	if (p->overlap.moe_a2a != PPCC_OVERLAP_DEFAULT)
		return p->overlap.moe_a2a == PPCC_OVERLAP_ON;
	return p->trainer != PPCC_TRAINER_TORCHTITAN;
}

double ppcc_overlap_comm_sm_share(const ppcc_pipeline *p)
{
	return p->overlap.comm_sm_share > 0 ? p->overlap.comm_sm_share
					    : PPCC_COMM_SM_SHARE;
}

/* Expert parallelism: a mixture of experts to spread, ep dividing its
 * experts and etp its expert width, and etp x ep dividing the t x cp x d
 * devices of a stage, which fold into them. */
static void check_experts(const ppcc_config *c, ppcc_diag *d)
{
	const ppcc_pipeline *p = &c->pipeline;
	const ppcc_transformer *tf = c->model.transformer;
	int ep = p->expert_parallel > 0 ? p->expert_parallel : 1;
	int etp = ppcc_pipeline_etp(p);
	int given = p->expert_parallel_loc.file ||
		    p->expert_tensor_parallel_loc.file;
	ppcc_loc loc = where(c, p->expert_parallel_loc.file
				? &p->expert_parallel_loc
				: &p->expert_tensor_parallel_loc);
	if (!tf || tf->moe.experts == 0) {
		if (given && (ep > 1 || p->expert_tensor_parallel_loc.file))
			ppcc_error(d, &loc, "expert parallelism needs a "
				   "mixture-of-experts model "
				   "(transformer.moe); this model has none");
		return;
	}
	if (tf->moe.experts % ep != 0) {
		char at[32] = "";
		if (tf->moe.experts_loc.line > 0)
			snprintf(at, sizeof at, " (line %d)",
				 tf->moe.experts_loc.line);
		ppcc_error(d, &loc, "%d-way expert parallelism does not "
			   "divide the %d experts%s", ep, tf->moe.experts, at);
	}
	if (tf->moe.ffn_hidden % etp != 0) {
		loc = where(c, p->expert_tensor_parallel_loc.file
				? &p->expert_tensor_parallel_loc
				: &p->tensor_parallel_loc);
		ppcc_error(d, &loc, "%d-way expert tensor parallelism does "
			   "not divide the experts' FFN width %d", etp,
			   tf->moe.ffn_hidden);
	}
	int64_t width = (int64_t)p->tensor_parallel * p->context_parallel *
			p->data_parallel;
	if (width % ((int64_t)ep * etp) != 0)
		ppcc_error(d, &loc, "expert parallelism folds into the %lld "
			   "device%s of a stage (t x cp x d = %d x %d x %d); "
			   "ep x etp = %d x %d does not divide %s",
			   (long long)width, plural(width), p->tensor_parallel,
			   p->context_parallel, p->data_parallel, ep, etp,
			   width == 1 ? "it" : "them");
	/* DeepSpeed's gate routes to any expert (emit/trainers.c) */
	if (tf->moe.groups > 0 && p->trainer == PPCC_TRAINER_DEEPSPEED) {
		ppcc_loc gl = tf->moe.loc.file ? tf->moe.loc
			      : where(c, &p->trainer_loc);
		ppcc_error(d, &gl, "DeepSpeed's mixture-of-experts gate has no "
			   "group-limited routing (moe.groups %d, group_topk "
			   "%d); plan without it, or with trainer: megatron",
			   tf->moe.groups, tf->moe.group_topk);
	}
	if (p->zero == 3 && ep * etp != p->tensor_parallel) {
		loc = where(c, &p->zero_loc);
		ppcc_error(d, &loc, "ppcc does not model ZeRO-3 with expert "
			   "parallelism (ep x etp = %d x %d, t = %d): its "
			   "gathers of sharded experts; use zero: 1 or 2",
			   ep, etp, p->tensor_parallel);
	}
}

/* HSDP: data_parallel_shard divides d, and a ZeRO stage shards; the
 * experts' groups and DeepSpeed's MiCS are not modelled. */
static void check_shard(const ppcc_config *c, ppcc_diag *d)
{
	const ppcc_pipeline *p = &c->pipeline;
	const ppcc_transformer *tf = c->model.transformer;
	int n = p->data_parallel_shard, dp = p->data_parallel;
	if (!p->data_parallel_shard_loc.file || n == 0)
		return;
	ppcc_loc loc = p->data_parallel_shard_loc;
	if (dp % n != 0)
		ppcc_error(d, &loc, "data_parallel_shard %d does not divide the "
			   "%d data-parallel ranks; give a divisor of %d", n, dp,
			   dp);
	else if (n == dp)
		return;
	else if (n * p->context_parallel == 1)
		ppcc_error(d, &loc, "data_parallel_shard 1 shards over one rank, "
			   "which holds every state whole: plan with zero: 0 "
			   "(the %d replicas all-reduce), or shard over 2 or "
			   "more", dp);
	else if (p->zero == 0)
		ppcc_error(d, &loc, "data_parallel_shard %d shards ZeRO's states "
			   "over %d of the %d data-parallel ranks, and ZeRO 0 "
			   "shards nothing: plan with zero: 1, 2 or 3", n, n, dp);
	else if (tf && tf->moe.experts > 0)
		ppcc_error(d, &loc, "ppcc does not model data_parallel_shard "
			   "with a mixture of experts (the experts' own "
			   "data-parallel groups, which Megatron-LM divides into "
			   "the same instances); leave it out");
	else if (p->trainer == PPCC_TRAINER_DEEPSPEED)
		ppcc_error(d, &loc, "ppcc does not model DeepSpeed's sharding "
			   "groups (MiCS's mics_shard_size, ZeRO++'s hpZ): "
			   "DeepSpeed is planned sharding over every "
			   "data-parallel rank; leave data_parallel_shard out");
}

/* bf16 moments: Megatron-LM's precision-aware optimizer, with its
 * distributed optimizer or none (Megatron-FSDP keeps its own dtypes);
 * torchtitan and DeepSpeed keep fp32 moments. */
static void check_moments(const ppcc_config *c, ppcc_diag *d)
{
	const ppcc_pipeline *p = &c->pipeline;
	if (!p->moments_bf16)
		return;
	ppcc_loc loc = p->moments_loc;
	if (p->trainer != PPCC_TRAINER_MEGATRON)
		ppcc_error(d, &loc, "adam_moments bf16 is Megatron-LM's "
			   "precision-aware optimizer, and %s keeps fp32 "
			   "moments; leave it out, or use trainer: megatron",
			   p->trainer == PPCC_TRAINER_TORCHTITAN ? "torchtitan"
			   : "DeepSpeed");
	else if (p->zero >= 2)
		ppcc_error(d, &loc, "ppcc models adam_moments bf16 with "
			   "Megatron-LM's distributed optimizer (zero: 1) or "
			   "none (zero: 0), not with Megatron-FSDP (zero: %d), "
			   "which keeps its own dtypes", p->zero);
}

/* combined-1f1b is Megatron-LM's overlap of the experts' all-to-alls
 * (d98e8a6 transformer_config.py:3002-3041): it asserts expert
 * parallelism and no full recomputation; and it is the overlap, so
 * moe_a2a off would plan another run than the one it names. */
static void check_combined(const ppcc_config *c, ppcc_diag *d)
{
	const ppcc_pipeline *p = &c->pipeline;
	const ppcc_transformer *tf = c->model.transformer;
	if (p->kind != PPCC_SCHED_COMBINED_1F1B)
		return;
	ppcc_loc loc = where(c, &p->kind_loc);
	if (!tf || tf->moe.experts == 0 || p->expert_parallel < 2)
		ppcc_error(d, &loc, "combined-1f1b overlaps one microbatch's "
			   "expert all-to-alls with another's compute, and "
			   "Megatron-LM runs it with expert parallelism only: "
			   "%s", !tf || tf->moe.experts == 0
			   ? "this model has no experts (transformer.moe); use "
			     "interleaved or 1f1b"
			   : "plan with expert_parallel of 2 or more");
	else if (!ppcc_overlap_moe_a2a(p)) {
		loc = where(c, p->overlap.moe_a2a_loc.file
			       ? &p->overlap.moe_a2a_loc : &p->trainer_loc);
		ppcc_error(d, &loc, "combined-1f1b is the overlap of the "
			   "experts' all-to-alls, and overlap.moe_a2a is %s: "
			   "plan with moe_a2a: true, or with interleaved",
			   p->overlap.moe_a2a_loc.file ? "false here"
			   : "false by default for torchtitan, which does not "
			     "run it");
	} else if (tf->recompute == PPCC_RECOMPUTE_FULL) {
		loc = c->model.transformer_loc.file ? c->model.transformer_loc
						    : loc;
		ppcc_error(d, &loc, "Megatron-LM refuses full recomputation "
			   "with combined-1f1b (\"disable full recomputation "
			   "when enabling overlap_moe_expert_parallel_comm\"): "
			   "plan with recompute: selective or none");
	}
}

int ppcc_config_check_recompute_modules(const ppcc_config *c, ppcc_diag *d)
{
	const ppcc_transformer *tf = c->model.transformer;
	if (!tf || !tf->recompute_modules_loc.file ||
	    c->pipeline.trainer == PPCC_TRAINER_MEGATRON)
		return 0;
	ppcc_loc loc = tf->recompute_modules_loc;
	ppcc_error(d, &loc, "recompute_modules are Megatron-LM's, and %s has "
		   "none: its selective recomputation is %s; use trainer: "
		   "megatron, or leave recompute_modules out",
		   c->pipeline.trainer == PPCC_TRAINER_TORCHTITAN
		   ? "torchtitan" : "DeepSpeed",
		   c->pipeline.trainer == PPCC_TRAINER_TORCHTITAN
		   ? "per operation or per layer" : "of whole layers");
	return PPCC_EINPUT;
}

/* torchtitan's per-operation selective recomputation is modelled for
 * dense multi-head and grouped-query blocks only; recompute_modules are
 * Megatron-LM's, which no other trainer runs. */
static void check_torchtitan_selective(const ppcc_config *c, ppcc_diag *d)
{
	const ppcc_transformer *tf = c->model.transformer;
	if (ppcc_config_check_recompute_modules(c, d) < 0)
		return;
	if (!tf || c->pipeline.trainer != PPCC_TRAINER_TORCHTITAN ||
	    tf->recompute != PPCC_RECOMPUTE_SELECTIVE)
		return;
	const char *what = tf->moe.experts > 0 ? "mixture-of-experts layers"
		: tf->mla.kind ? "multi-head latent attention" : NULL;
	if (!what)
		return;
	ppcc_loc loc = where(c, &c->pipeline.trainer_loc);
	ppcc_error(d, &loc, "ppcc does not model torchtitan's per-operation "
		   "selective recomputation of %s; use recompute: full or "
		   "none, or trainer: megatron", what);
}

/* Each t-device tensor-parallel group of the first p ranks must lie in
 * one device group. */
static void check_tensor_groups(const ppcc_config *c, ppcc_diag *d)
{
	const ppcc_cluster *cl = &c->cluster;
	int64_t t = (int64_t)c->pipeline.tensor_parallel *
		    c->pipeline.context_parallel * c->pipeline.data_parallel;
	int64_t used = (int64_t)c->pipeline.stages * t;
	int block = t != c->pipeline.tensor_parallel;
	int64_t end = 0;
	long listed = 0, more = 0;
	for (int i = 0; i + 1 < cl->n_groups; i++) {
		end += cl->groups[i].count;
		if (end >= used)
			break;
		if (end % t == 0)
			continue;
		/* ppcc(5): past 100 errors, counted, not listed */
		if (listed++ >= 100) {
			more++;
			continue;
		}
		int64_t rank = end / t;
		ppcc_loc loc = where(c, &cl->groups[i].loc);
		if (block) {
			ppcc_error(d, &loc,
				   "rank %lld's %lld devices (%lld to %lld: "
				   "tensor x context x data parallel) span device "
				   "groups '%s' and '%s'; give each group a "
				   "multiple of %lld devices",
				   (long long)rank, (long long)t,
				   (long long)(rank * t),
				   (long long)(rank * t + t - 1), cl->groups[i].name,
				   cl->groups[i + 1].name, (long long)t);
			continue;
		}
		ppcc_error(d, &loc,
			   "rank %lld's %lld-way tensor-parallel group (devices "
			   "%lld to %lld) spans device groups '%s' and '%s'; "
			   "give each group a multiple of %lld devices",
			   (long long)rank, (long long)t, (long long)(rank * t),
			   (long long)(rank * t + t - 1), cl->groups[i].name,
			   cl->groups[i + 1].name, (long long)t);
	}
	if (more) {
		ppcc_loc loc = where(c, &cl->loc);
		ppcc_note(d, &loc, "%ld more ranks span two device groups, "
			  "not listed", more);
	}
}

/* Data and context parallelism, the global batch, and what tensor
 * parallelism must divide. */
static void check_parallel(const ppcc_config *c, ppcc_diag *d)
{
	const ppcc_pipeline *p = &c->pipeline;
	const ppcc_cluster *cl = &c->cluster;
	int64_t t = p->tensor_parallel, cp = p->context_parallel;
	int64_t dp = p->data_parallel, st = p->stages;
	int64_t b = c->model.micro_batch_size > 0 ? c->model.micro_batch_size : 1;
	ppcc_loc loc;

	if (!p->data_parallel_loc.file) {
		int64_t rep = t * st * cp;
		if (cl->devices % rep != 0) {
			loc = where(c, &cl->loc);
			if (cp > 1)
				ppcc_error(d, &loc,
					   "%d devices are not a multiple of tensor "
					   "x pipeline x context parallel = %lld x "
					   "%lld x %lld = %lld; give "
					   "pipeline.data_parallel or a multiple of "
					   "%lld devices", cl->devices, (long long)t,
					   (long long)st, (long long)cp,
					   (long long)rep, (long long)rep);
			else
				ppcc_error(d, &loc,
					   "%d devices are not a multiple of tensor "
					   "x pipeline parallel = %lld x %lld = "
					   "%lld; give pipeline.data_parallel or a "
					   "multiple of %lld devices", cl->devices,
					   (long long)t, (long long)st,
					   (long long)rep, (long long)rep);
		}
	} else if (t * st * cp * dp > cl->devices) {
		loc = where(c, &p->data_parallel_loc);
		ppcc_error(d, &loc,
			   "%lld-way tensor x %lld stages x %lld-way context x "
			   "%lld-way data parallelism need %lld devices; the "
			   "cluster has %d", (long long)t, (long long)st,
			   (long long)cp, (long long)dp,
			   (long long)(t * st * cp * dp), cl->devices);
	}
	if (p->global_batch_size > 0) {
		int64_t B = p->global_batch_size;
		loc = where(c, &p->global_batch_size_loc);
		if (B % (b * dp) != 0) {
			ppcc_error(d, &loc,
				   "global_batch_size %lld is not a multiple of "
				   "micro_batch_size x data_parallel = %lld x %lld "
				   "= %lld", (long long)B, (long long)b,
				   (long long)dp, (long long)(b * dp));
		} else if (p->microbatches_loc.file &&
			   (int64_t)p->microbatches * b * dp != B) {
			loc = where(c, &p->microbatches_loc);
			ppcc_error(d, &loc,
				   "%d microbatches x micro_batch_size %lld x "
				   "data_parallel %lld = %lld sequences, but "
				   "global_batch_size is %lld; give one of the two",
				   p->microbatches, (long long)b, (long long)dp,
				   (long long)p->microbatches * b * dp,
				   (long long)B);
		} else if (B / (b * dp) > PPCC_MAX_COUNT) {
			ppcc_error(d, &loc,
				   "global_batch_size %lld gives %lld microbatches; "
				   "the limit is %d", (long long)B,
				   (long long)(B / (b * dp)), PPCC_MAX_COUNT);
		}
	}
	const ppcc_transformer *tf = c->model.transformer;
	if (tf) {
		int kv = tf->kv_heads > 0 ? tf->kv_heads : tf->heads;
		long long f = tf->ffn_hidden > 0 ? tf->ffn_hidden
				: 4LL * tf->hidden;
		loc = where(c, &p->tensor_parallel_loc);
		if (tf->heads % t != 0)
			ppcc_error(d, &loc,
				   "%lld-way tensor parallelism does not divide "
				   "the %d heads (line %d)", (long long)t,
				   tf->heads, tf->heads_loc.line);
		else if (kv % t != 0)
			ppcc_error(d, &loc,
				   "%lld-way tensor parallelism does not divide "
				   "the %d kv heads (line %d); ppcc does not "
				   "replicate kv heads", (long long)t, kv,
				   tf->kv_heads_loc.line ? tf->kv_heads_loc.line
							 : tf->heads_loc.line);
		if (f % t != 0)
			ppcc_error(d, &loc,
				   "%lld-way tensor parallelism does not divide "
				   "the FFN width %lld", (long long)t, f);
		if (tf->seq_len % cp != 0) {
			loc = where(c, &p->context_parallel_loc);
			ppcc_error(d, &loc,
				   "%lld-way context parallelism does not divide "
				   "the sequence of %d tokens", (long long)cp,
				   tf->seq_len);
		}
	}
	check_experts(c, d);
	check_shard(c, d);
	check_moments(c, d);
	check_combined(c, d);
	check_torchtitan_selective(c, d);
	if (t > cl->devices_per_node) {
		loc = where(c, &p->tensor_parallel_loc);
		ppcc_warning(d, &loc,
			     "%lld-way tensor parallelism spans nodes of %d "
			     "devices; its collectives are charged to the "
			     "inter-node link", (long long)t, cl->devices_per_node);
	}
	if (cl->memory_limit_bytes > 0) {
		/* every group's memory is the command line's */
		ppcc_config_check_memory_limit(cl, cl->memory_limit_bytes, d);
		return;
	}
	for (int g = 0; g < cl->n_groups; g++)
		if (cl->reserved_bytes >= cl->groups[g].memory_bytes) {
			loc = where(c, &cl->loc);
			ppcc_error(d, &loc,
				   "reserved_gib %.2f leaves nothing of the %.2f "
				   "GiB of device group '%s'",
				   cl->reserved_bytes / 1073741824.0,
				   cl->groups[g].memory_bytes / 1073741824.0,
				   cl->groups[g].name);
			break;
		}
}

int ppcc_config_check_memory_limit(const ppcc_cluster *cl, double limit,
				   ppcc_diag *d)
{
	if (cl->reserved_bytes < limit)
		return 0;
	ppcc_loc loc = {PPCC_COMMAND_LINE, 0, 0};
	ppcc_error(d, &loc, "--memory-limit %.4g GiB leaves nothing beside the "
		   "cluster's reserved_gib %.2f (%s); give more than it",
		   limit / 1073741824.0, cl->reserved_bytes / 1073741824.0,
		   cl->loc.file ? cl->loc.file : "the cluster");
	return PPCC_EINPUT;
}

/* A complaint of the schedule kind's constraints (src/sched/kinds.c),
 * located at the setting it is about. */
typedef struct check_sched {
	const ppcc_config *c;
	ppcc_diag *d;
} check_sched;

static void complain_sched(int setting, const char *msg, void *user)
{
	check_sched *x = user;
	const ppcc_pipeline *p = &x->c->pipeline;
	const ppcc_loc *at = &p->kind_loc;
	switch (setting) {
	case PPCC_SET_STAGES:
		at = &p->stages_loc;
		break;
	case PPCC_SET_CHUNKS:
		at = p->chunks_loc.file ? &p->chunks_loc : &p->kind_loc;
		break;
	case PPCC_SET_MICROBATCHES:
		at = p->microbatches_loc.file ? &p->microbatches_loc
					      : &p->group_size_loc;
		break;
	case PPCC_SET_GROUP_SIZE:
		at = &p->group_size_loc;
		break;
	}
	ppcc_loc loc = where(x->c, at);
	ppcc_error(x->d, &loc, "%s", msg);
}

/* An explicit partition: one entry per virtual stage, summing to the
 * layers (each entry >= 1 was checked where it was read). */
static void check_partition(const ppcc_config *c, ppcc_diag *d)
{
	const ppcc_pipeline *p = &c->pipeline;
	int64_t want = (int64_t)p->stages * p->chunks, sum = 0;
	ppcc_loc loc = where(c, &p->partition_loc);
	for (int i = 0; i < p->n_partition; i++) {
		if (p->partition[i] < 1) {
			ppcc_loc at = p->partition_locs ? p->partition_locs[i] : loc;
			ppcc_error(d, &at, "partition: stage %d is empty; every "
				   "stage needs at least one layer", i);
			return;
		}
		sum += p->partition[i];
	}
	if (p->n_partition != want) {
		if (p->chunks > 1)
			ppcc_error(d, &loc, "partition: %d entr%s, but the pipeline "
				   "has %lld stages (%d ranks x %d chunks): give one "
				   "layer count per stage", p->n_partition,
				   p->n_partition == 1 ? "y" : "ies", (long long)want,
				   p->stages, p->chunks);
		else
			ppcc_error(d, &loc, "partition: %d entr%s, but the pipeline "
				   "has %lld stage%s: give one layer count per stage",
				   p->n_partition, p->n_partition == 1 ? "y" : "ies",
				   (long long)want, plural(want));
		return;
	}
	if (sum != c->model.n_layers)
		ppcc_error(d, &loc, "partition: the layer counts add up to %lld, "
			   "but the model has %d layers", (long long)sum,
			   c->model.n_layers);
}

int ppcc_config_check(const ppcc_config *c, ppcc_diag *d)
{
	const ppcc_pipeline *p = &c->pipeline;
	int errors = d->errors;
	ppcc_loc loc;

	if (!ppcc_sched_kind(p->kind)) {
		loc = where(c, &p->kind_loc);
		ppcc_error(d, &loc, "unknown schedule kind %d", p->kind);
	}
	static const struct {
		const char *name;
		int min;
	} mins[] = {{"stages", 1}, {"microbatches", 1}, {"chunks", 1},
		    {"group_size", 0}, {"tensor_parallel", 1},
		    {"data_parallel", 1}, {"context_parallel", 1}};
	const int values[] = {p->stages, p->microbatches, p->chunks,
			      p->group_size, p->tensor_parallel,
			      p->data_parallel, p->context_parallel};
	const ppcc_loc *locs[] = {&p->stages_loc, &p->microbatches_loc,
				  &p->chunks_loc, &p->group_size_loc,
				  &p->tensor_parallel_loc, &p->data_parallel_loc,
				  &p->context_parallel_loc};
	for (int i = 0; i < 7; i++)
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
	/* FP8 needs FP8 tensor cores on every device */
	const ppcc_transformer *tf = c->model.transformer;
	for (int g = 0; tf && tf->fp8 && g < c->cluster.n_groups; g++) {
		const ppcc_device_group *dg = &c->cluster.groups[g];
		if (dg->fp8_speedup > 0)
			continue;
		loc = where(c, &tf->precision_loc);
		ppcc_error(d, &loc, "precision fp8: device '%s' has no FP8 "
			   "tensor cores (no dense FP8 peak); plan bf16, or give "
			   "the device's tflops_fp8", dg->name);
		break;
	}
	if (p->overlap.tp_comm && p->tensor_parallel > 1 &&
	    (!tf || !tf->sequence_parallel ||
	     p->trainer != PPCC_TRAINER_MEGATRON)) {
		loc = where(c, &p->overlap.tp_comm_loc);
		ppcc_error(d, &loc, "pipeline.overlap.tp_comm: %s; leave it "
			   "false", !tf ? "ppcc models the overlap of a "
			   "transformer's matrix multiplies, and the model is "
			   "given as layers"
			   : p->trainer != PPCC_TRAINER_MEGATRON
			   ? "ppcc models Megatron-LM's --tp-comm-overlap, not "
			   "this trainer's" : "Megatron-LM overlaps them only "
			   "with sequence parallelism (d98e8a6 megatron/"
			   "training/arguments.py:1441-1442)");
	}
	if (tf && tf->fp8 && (p->zero == 3 ||
			      p->trainer != PPCC_TRAINER_MEGATRON)) {
		loc = where(c, &tf->precision_loc);
		ppcc_error(d, &loc, "precision fp8: ppcc models FP8 as "
			   "Megatron-LM runs it with Transformer Engine; %s; "
			   "plan bf16", p->zero == 3
			   ? "FP8 beside ZeRO-3's sharded weights is not modelled"
			   : p->trainer == PPCC_TRAINER_TORCHTITAN
			   ? "torchtitan's float8 is not modelled"
			   : "DeepSpeed's configuration has no FP8 training");
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
	} else if (d->errors == errors) {
		/* what must divide the devices, once the counts are sound */
		check_parallel(c, d);
		if (t * p->context_parallel * p->data_parallel > 1)
			check_tensor_groups(c, d);
	}
	check_sched x = {c, d};
	ppcc_sched_check(p->kind, p->stages, p->chunks, p->microbatches,
			 p->group_size, complain_sched, &x);
	if (p->partition)
		check_partition(c, d);
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
