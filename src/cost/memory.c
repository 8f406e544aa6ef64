/*
 * memory.c - the memory model: the bytes a layer, a device and the
 * optimizer hold or move.
 *
 * A parameter holds 2 bytes of 16-bit weights, grad_bytes of gradients
 * and 12 of Adam's state, the ZeRO stage dividing these over the n = d x
 * cp ranks that share the weights (or the layer's own bytes_per_param).
 * A layer's static bytes on a rank are its parameters times that, times
 * cp (the cp ranks of a rank hold the same weights); its stash, the
 * split part plus t - 1 times the replicated part; under a split
 * backward a microbatch in flight holds at most the larger of the stash
 * and what W keeps; ZeRO-3 holds two gather buffers of a stage's
 * largest layer.  torchtitan (pipeline.trainer) differs: fp32 FSDP
 * shards, a pipeline stage's weights kept gathered, and every term times
 * its caching allocator's factor.  Under precision fp8 Transformer
 * Engine adds an FP8 copy and transpose of each FP8 product's weight
 * (doc/design/precision.md).  A device holds its memory less the
 * cluster's reserve.  The optimizer step reads and writes 26 +
 * grad_bytes bytes of each parameter it updates at the device's memory
 * bandwidth; ZeRO's gathers move the 16-bit parameters, 2 bytes each.
 *
 * plan/tables.c rounds the layer terms to bytes and sums them into the
 * partitioner's tables; iteration.c and the iteration bound take the
 * optimizer's time and the gathers' bytes from here.  Each expression
 * keeps the order of its operations, on which the plans' bytes depend.
 *
 * Derivation: doc/design/plan.md (memory per device),
 * doc/design/memory.md (the trainers' terms, the fitted factor) and
 * doc/design/iteration.md (the optimizer's bytes, the gathers).
 */
#include <limits.h>
#include <stdint.h>

#include "ppcc.h"

double ppcc_memory_zero_bytes_per_param(double *out, int zero,
					double grad_bytes, int d, int trainer,
					int stages, double moment_bytes)
{
	double n = d > 0 ? d : 1;
	double w = 2.0, g = grad_bytes, o = 4.0 + 2.0 * moment_bytes;
	/* torchtitan's FSDP: the fp32 shards are the master weights */
	int fsdp = trainer == PPCC_TRAINER_TORCHTITAN && zero == 3;
	if (fsdp) {
		w = 4.0;
		o = 2.0 * moment_bytes;
	}
	if (zero >= 1)
		o /= n;
	if (zero >= 2)
		g /= n;
	if (zero >= 3)
		w /= n;
	/* with a pipeline it gathers a stage's parameters once and keeps
	 * them, in 16 bits, to the end of the step */
	if (zero == 3 && ppcc_memory_zero3_resident(trainer, stages))
		w += 2.0;
	if (out) {
		out[0] = w;
		out[1] = g;
		out[2] = o;
	}
	return w + g + o;
}

double ppcc_memory_reserve_factor(int trainer)
{
	return trainer == PPCC_TRAINER_TORCHTITAN
		? PPCC_TORCHTITAN_RESERVE_FACTOR : 1.0;
}

void ppcc_memory_experts_of(ppcc_memory_experts *out, const ppcc_pipeline *p,
			    int stages)
{
	int64_t ep = p->expert_parallel > 0 ? p->expert_parallel : 1;
	int64_t etp = ppcc_pipeline_etp(p);
	int64_t width = (int64_t)p->tensor_parallel *
			(p->context_parallel > 0 ? p->context_parallel : 1) *
			(p->data_parallel > 0 ? p->data_parallel : 1);
	int64_t edp = width / (ep * etp);
	out->edp = edp > 0 ? (int)edp : 1;
	out->bytes_per_param = ppcc_memory_zero_bytes_per_param(
		NULL, p->zero, p->grad_bytes, edp > 0 ? (int)edp : 1,
		p->trainer, stages, ppcc_pipeline_moment_bytes(p));
	out->share = 1.0 / (double)(ep * etp);
}

double ppcc_memory_device_params(const ppcc_layer *l, const ppcc_pipeline *p)
{
	int t = p->tensor_parallel > 0 ? p->tensor_parallel : 1;
	if (!(l->expert_params > 0) && !(l->tp_replicated_params > 0))
		return l->params / t;
	double ep = p->expert_parallel > 0 ? p->expert_parallel : 1;
	double whole = l->tp_replicated_params;
	return (l->params - l->expert_params - whole) / t + whole +
	       l->expert_params / (ep * ppcc_pipeline_etp(p));
}

double ppcc_memory_fp8_copy_bytes(const ppcc_layer *l, int t,
				  const ppcc_memory_experts *ex)
{
	if (!(l->fp8_params > 0))
		return 0;
	double e = ex ? l->expert_params : 0;
	double whole = l->tp_replicated_params;
	double split = l->fp8_params - e - whole;
	if (split < 0)
		split = 0;
	return PPCC_FP8_COPY_BYTES *
	       (split / t + whole + (e > 0 ? e * ex->share : 0));
}

void ppcc_memory_layer_terms(ppcc_memory_layer *out, const ppcc_layer *l,
			     int t, int cp, double zero_bpp,
			     const ppcc_memory_experts *ex, int split,
			     double factor)
{
	double bpp = l->bytes_per_param > 0 ? l->bytes_per_param : zero_bpp;
	double stash = factor * (l->stash_bytes +
				 (t - 1) * l->stash_replicated_bytes);
	double wst = factor * l->stash_weight_bytes;
	out->bytes_per_param = bpp;
	if ((l->expert_params > 0 || l->tp_replicated_params > 0) &&
	    !(l->bytes_per_param > 0)) {
		/* the dense part split over t, the replicated part whole on
		 * each of the t devices, the routed experts' share */
		double whole = l->tp_replicated_params;
		double e = ex ? l->expert_params : 0;
		out->static_bytes = factor * (l->params - e - whole) * bpp * cp +
				    factor * whole * bpp * t * cp;
		if (e > 0)
			out->static_bytes += factor * e * ex->bytes_per_param *
					     ex->share * t * cp;
	} else {
		out->static_bytes = factor * l->params * bpp * cp;
	}
	if (l->fp8_params > 0)
		out->static_bytes += factor * t * cp *
				     ppcc_memory_fp8_copy_bytes(l, t, ex);
	out->stash_bytes = stash;
	out->stash_weight_bytes = wst;
	out->hold_bytes = split && wst > stash ? wst : stash;
	out->gather_bytes = ppcc_memory_param16_bytes(l->params);
}

double ppcc_memory_device_cap(const ppcc_cluster *c,
			      const ppcc_device_group *dg)
{
	return dg->memory_bytes - c->reserved_bytes - c->headroom_bytes;
}

int ppcc_memory_zero3_resident(int trainer, int stages)
{
	return trainer == PPCC_TRAINER_TORCHTITAN && stages > 1;
}

double ppcc_memory_zero3_buffer_bytes(double layer_bytes, int t,
				      double factor)
{
	return factor * (2.0 * layer_bytes / t);
}

double ppcc_memory_param16_bytes(double params)
{
	return 2.0 * params;
}

double ppcc_memory_gather_per_grad_byte(double grad_bytes)
{
	return grad_bytes > 0 ? 2.0 / grad_bytes : 0;
}

double ppcc_memory_optimizer_ms(double params, int zero, int n,
				double grad_bytes, double bandwidth,
				double moment_bytes)
{
	double updated = zero >= 1 && n > 1 ? params / n : params;
	/* the 16-bit weight written, the fp32 master and the two moments
	 * read and written, the gradient read */
	return 1e3 * updated * (10.0 + 4.0 * moment_bytes + grad_bytes) /
	       bandwidth;
}

double ppcc_memory_step_ms(const ppcc_config *cfg, double params,
			   double bandwidth)
{
	const ppcc_pipeline *pl = &cfg->pipeline;
	int zero = pl->zero, ns = ppcc_pipeline_zero_ranks(pl);
	double updated = zero >= 1 && ns > 1 ? params / ns : params;
	/* the norm reads the fp32 gradients, the clip scales them in
	 * place, whatever the norm: 3 x 4 bytes of each updated one */
	double clip = 1e3 * updated * 3.0 * 4.0 / bandwidth;
	int64_t world = (int64_t)pl->tensor_parallel * pl->stages *
			(pl->context_parallel > 0 ? pl->context_parallel : 1) *
			(pl->data_parallel > 0 ? pl->data_parallel : 1);
	int64_t group = zero == 0 && pl->trainer == PPCC_TRAINER_MEGATRON
			? (int64_t)pl->tensor_parallel * pl->stages : world;
	double norm = group > 1 && group <= INT_MAX
		? 1e3 * ppcc_allreduce_seconds(&cfg->cluster, (int)group, world,
					       4.0) : 0;
	return clip + norm + ppcc_memory_optimizer_ms(
		params, zero, ns, pl->grad_bytes, bandwidth,
		ppcc_pipeline_moment_bytes(pl));
}
