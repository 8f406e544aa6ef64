/*
 * compute.c - what a layer and a stage cost on a pipeline rank's devices.
 *
 * A rank of t x cp devices of group g computes at t x cp x tflops x 1e12
 * x efficiency FLOP/s; a layer's forward (backward) is its FLOPs at that
 * speed, but its attention's at the flash kernel's measured rate where the
 * catalogue has one (doc/design/attention.md), plus its tensor- and
 * context-parallel collectives (comm.c, per
 * layer, in ppcc_cost_layer_comm) and its memory-bound kernels, the split
 * part of their bytes over t x cp and the replicated part over cp, at the
 * device's memory bandwidth; a mixture-of-experts layer adds its token
 * all-to-alls and, under expert parallelism, the busiest expert rank's
 * extra routed FLOPs.  Under precision fp8 the layers' FP8 products run
 * at the FP8 peak (ppcc_cost_flops_seconds, doc/design/precision.md).
 * plan/tables.c rounds these to picoseconds
 * and sums them into the partitioner's integer tables; the stage parts
 * below are what iteration.c reports.  Each expression keeps the order of its
 * operations, on which the plans' bytes depend.
 */
#include <math.h>

#include "ppcc.h"

double ppcc_cost_speed(const ppcc_device_group *dg, int shard)
{
	return shard * dg->tflops * 1e12 * dg->efficiency;
}

double ppcc_cost_flops_seconds(const ppcc_device_group *dg, double speed,
				double flops, double fp8_flops)
{
	if (!(fp8_flops > 0) || !(dg->fp8_gain > 0))
		return flops / speed;
	return (flops - fp8_flops) / speed + fp8_flops / (speed * dg->fp8_gain);
}

int ppcc_cost_attention_kernel(const ppcc_config *cfg,
			       const ppcc_device_group *dg)
{
	const ppcc_transformer *tf = cfg->model.transformer;
	if (!tf || !tf->flash_attention)
		return PPCC_ATTN_AUTO;
	if (tf->attention_kernel != PPCC_ATTN_AUTO)
		return tf->attention_kernel;
	int arch = dg && dg->preset ? dg->preset->arch : 0;
	int fa2 = !ppcc_transformer_fa2_refuses(tf);
	/* neither kernel is known to run the device, or the heads */
	if (arch == 0 || ppcc_transformer_head_width(tf) > 256)
		return PPCC_ATTN_AUTO;
	switch (cfg->pipeline.trainer) {
	case PPCC_TRAINER_TORCHTITAN:
		return PPCC_ATTN_CUDNN;
	case PPCC_TRAINER_DEEPSPEED:
		return fa2 ? PPCC_ATTN_FA2 : PPCC_ATTN_CUDNN;
	default:
		return fa2 && arch >= 80 && arch < 90 ? PPCC_ATTN_FA2
						      : PPCC_ATTN_CUDNN;
	}
}

int ppcc_cost_attention_kernel_all(const ppcc_config *cfg)
{
	int k = PPCC_ATTN_AUTO;
	for (int g = 0; g < cfg->cluster.n_groups; g++) {
		int kg = ppcc_cost_attention_kernel(cfg, &cfg->cluster.groups[g]);
		if (g > 0 && kg != k)
			return PPCC_ATTN_AUTO;
		k = kg;
	}
	return k;
}

int ppcc_cost_attention_rates(double *out_f, double *out_b,
			      const ppcc_config *cfg,
			      const ppcc_device_group *dg, double len)
{
	int k = ppcc_cost_attention_kernel(cfg, dg);
	*out_f = *out_b = 0;
	/* a file's own peak is another chip's, of no measured kernel */
	if (k == PPCC_ATTN_AUTO || !dg->preset ||
	    dg->tflops != dg->preset->bf16)
		return 0;
	/* the measured lengths around len, linear in log2 of the length,
	 * the ends' rates beyond them */
	int hi = 0;
	while (hi < PPCC_ATTN_LENS - 1 && ppcc_attn_lens[hi] < len)
		hi++;
	int lo = hi > 0 && ppcc_attn_lens[hi] > len ? hi - 1 : hi;
	double f0, b0, f1, b1;
	if (!ppcc_device_attention(&f0, &b0, dg->preset, k, lo) ||
	    !ppcc_device_attention(&f1, &b1, dg->preset, k, hi))
		return 0;
	double x = lo == hi ? 0 : log2(len / ppcc_attn_lens[lo]) /
				  log2(ppcc_attn_lens[hi] / ppcc_attn_lens[lo]);
	*out_f = (f0 + x * (f1 - f0)) * 1e12;
	*out_b = (b0 + x * (b1 - b0)) * 1e12;
	return 1;
}

double ppcc_cost_attention_len(const ppcc_config *cfg, const ppcc_layer *l)
{
	int cp = cfg->pipeline.context_parallel > 0
		? cfg->pipeline.context_parallel : 1;
	/* a ring step's call: the rank's s / cp queries, each of their
	 * window's keys in it */
	double s = cfg->model.seq_len > 0 ? cfg->model.seq_len : l->attn_keys;
	return l->attn_keys < s / cp ? l->attn_keys : s / cp;
}

/* Layer l's attention kernels on a rank of shard devices of dg, at their
 * measured rates: the forward's, and the backward's (2.5 forwards'
 * FLOPs, the scores computed again, as the kernels' benchmarks count
 * them) with any recomputed forward before it, that forward's part
 * in *out_rc (when not NULL); 0 when unmeasured, the attention then at
 * the matrix products' rate with the rest. */
static int attention_seconds(double *out_f, double *out_b, double *out_rc,
			     const ppcc_config *cfg,
			     const ppcc_device_group *dg,
			     const ppcc_layer *l, int shard)
{
	double rf, rb, rc = 0;
	*out_f = *out_b = 0;
	if (out_rc)
		*out_rc = 0;
	if (!(l->attn_flops > 0) ||
	    !ppcc_cost_attention_rates(&rf, &rb, cfg, dg,
				       ppcc_cost_attention_len(cfg, l)))
		return 0;
	rc = l->attn_recompute_flops / (shard * rf);
	*out_f = l->attn_flops / (shard * rf);
	*out_b = 2.5 * l->attn_flops / (shard * rb) + rc;
	if (out_rc)
		*out_rc = rc;
	return 1;
}

static double kernel_seconds(const ppcc_device_group *dg, int t, int shard,
			     double bytes, double whole)
{
	if (bytes <= 0)
		return 0;
	double per_device = (bytes + (t - 1) * whole) / shard;
	return per_device / dg->memory_bandwidth;
}

int ppcc_cost_expert_node_limit(const ppcc_config *cfg)
{
	const ppcc_transformer *tf = cfg->model.transformer;
	const ppcc_pipeline *p = &cfg->pipeline;
	if (!tf || tf->moe.experts < 1)
		return 0;
	const ppcc_moe *m = &tf->moe;
	int limit = m->node_limit;
	int64_t ep = p->expert_parallel > 0 ? p->expert_parallel : 1;
	int64_t etp = ppcc_pipeline_etp(p);
	int64_t per_node = cfg->cluster.devices_per_node > 0
			   ? cfg->cluster.devices_per_node : 1;
	if (m->groups > 0 && m->group_topk > 0 && ep > 1 &&
	    m->experts % m->groups == 0 && m->experts % ep == 0) {
		int64_t per_group = m->experts / m->groups;
		int64_t per_rank = m->experts / ep, span = 1;
		for (int64_t g = 0; g < m->groups; g++) {
			int64_t first = g * per_group / per_rank * etp / per_node;
			int64_t last = ((g + 1) * per_group - 1) / per_rank *
				       etp / per_node;
			if (last - first + 1 > span)
				span = last - first + 1;
		}
		/* a limit binds only below the nodes the group spans */
		int64_t nodes = (ep * etp + per_node - 1) / per_node;
		int64_t reach = span * m->group_topk;
		if (reach < nodes && (limit == 0 || reach < limit))
			limit = (int)reach;
	}
	return limit;
}

void ppcc_cost_expert_comm(double *out_f, double *out_b,
			   const ppcc_config *cfg, const ppcc_layer *l)
{
	const ppcc_pipeline *p = &cfg->pipeline;
	const ppcc_transformer *tf = cfg->model.transformer;
	*out_f = *out_b = 0;
	if (!tf || !(l->a2a_bytes > 0))
		return;
	int ep = p->expert_parallel > 0 ? p->expert_parallel : 1;
	int etp = ppcc_pipeline_etp(p);
	int cp = p->context_parallel > 0 ? p->context_parallel : 1;
	double imb = ep > 1 ? tf->moe.imbalance : 1.0;
	double k = tf->moe.top_k > 0 ? tf->moe.top_k : 1;
	/* a device's tokens, one 16-bit copy each; the dispatch (and its
	 * gradient's, backward) in FP8 moves 1 + 4/128 bytes an element
	 * (a float scale a block of 128), the combine 2 */
	double tokens = imb * l->a2a_bytes / k /
			((double)p->tensor_parallel * cp);
	double narrow = tf->moe.dispatch_fp8 ? (1.0 + 4.0 / 128.0) / 2.0 : 1.0;
	double pair = 0;
	int limit = ppcc_cost_expert_node_limit(cfg);
	for (int w = 0; w < 2; w++) {
		double bytes = tokens * (w == 0 ? narrow : 1.0);
		pair += ppcc_comm_a2a_seconds(&cfg->cluster, ep, etp, bytes, k,
					      limit);
		if (etp > 1)
			pair += ppcc_allgather_seconds(&cfg->cluster, etp, etp,
						       bytes * k * etp);
	}
	int full = tf->recompute == PPCC_RECOMPUTE_FULL;
	*out_f = pair;
	*out_b = (full ? 2 : 1) * pair;
}

double ppcc_cost_expert_extra_flops(double *out_bwd, const ppcc_config *cfg,
				    const ppcc_layer *l)
{
	const ppcc_transformer *tf = cfg->model.transformer;
	*out_bwd = 0;
	if (!tf || !(l->expert_fwd_flops > 0) ||
	    cfg->pipeline.expert_parallel <= 1)
		return 0;
	double f = (tf->moe.imbalance - 1.0) * l->expert_fwd_flops;
	*out_bwd = (tf->recompute == PPCC_RECOMPUTE_FULL ? 3 : 2) * f;
	return f;
}

void ppcc_cost_tp_hidden(double *out_fwd, double *out_bwd,
			 const ppcc_config *cfg,
			 const ppcc_cost_layer_comm *lc, int layer,
			 const ppcc_device_group *dg)
{
	const ppcc_layer *l = &cfg->model.layers[layer];
	*out_fwd = *out_bwd = 0;
	if (!cfg->pipeline.overlap.tp_comm || !(l->tp_gemm_flops > 0) ||
	    !(lc->tp_f[layer] > 0 || lc->tp_b[layer] > 0))
		return;
	const ppcc_transformer *tf = cfg->model.transformer;
	int cp = cfg->pipeline.context_parallel > 0
		? cfg->pipeline.context_parallel : 1;
	double speed = ppcc_cost_speed(dg, cfg->pipeline.tensor_parallel * cp);
	int f8 = l->fp8_fwd_flops > 0;
	/* backward: the input and weight gradients' products, and the
	 * forward's again under full recomputation */
	double nb = tf && tf->recompute == PPCC_RECOMPUTE_FULL ? 3.0 : 2.0;
	double gf = ppcc_cost_flops_seconds(dg, speed, l->tp_gemm_flops,
					    f8 ? l->tp_gemm_flops : 0);
	double gb = ppcc_cost_flops_seconds(dg, speed, nb * l->tp_gemm_flops,
					    f8 ? nb * l->tp_gemm_flops : 0);
	double keep = 1 - ppcc_overlap_comm_sm_share(&cfg->pipeline);
	double hf = keep * lc->tp_f[layer], hb = keep * lc->tp_b[layer];
	*out_fwd = hf < gf ? hf : gf;
	*out_bwd = hb < gb ? hb : gb;
}

void ppcc_cost_cp_hidden(double *out_fwd, double *out_bwd,
			 const ppcc_config *cfg,
			 const ppcc_cost_layer_comm *lc, int layer,
			 const ppcc_device_group *dg)
{
	const ppcc_layer *l = &cfg->model.layers[layer];
	int cp = cfg->pipeline.context_parallel;
	*out_fwd = *out_bwd = 0;
	if (cp < 2 || !(l->attn_flops > 0) || !(lc->cp_f[layer] > 0))
		return;
	double speed = ppcc_cost_speed(dg, cfg->pipeline.tensor_parallel * cp);
	/* each ring step beside 1/cp of the attention's kernels: the
	 * forward's, and the backward's with any recomputed forward */
	double af, ab;
	if (!attention_seconds(&af, &ab, NULL, cfg, dg, l,
			       cfg->pipeline.tensor_parallel * cp)) {
		af = ppcc_cost_flops_seconds(dg, speed, l->attn_flops, 0);
		ab = ppcc_cost_flops_seconds(dg, speed, 2 * l->attn_flops +
					     l->attn_recompute_flops, 0);
	}
	double keep = 1 - ppcc_overlap_comm_sm_share(&cfg->pipeline);
	double sf = keep * lc->cp_f[layer] / (cp - 1);
	double sb = keep * lc->cp_b[layer] / (cp - 1);
	*out_fwd = (cp - 1) * (sf < af / cp ? sf : af / cp);
	*out_bwd = (cp - 1) * (sb < ab / cp ? sb : ab / cp);
}

void ppcc_cost_layer_seconds(double *out_fwd, double *out_bwd,
			     const ppcc_config *cfg,
			     const ppcc_cost_layer_comm *lc, int layer,
			     const ppcc_device_group *dg)
{
	const ppcc_layer *l = &cfg->model.layers[layer];
	int t = cfg->pipeline.tensor_parallel;
	int cp = cfg->pipeline.context_parallel > 0
		? cfg->pipeline.context_parallel : 1;
	int shard = t * cp;
	double speed = ppcc_cost_speed(dg, shard);
	double af, ab, fa = 0, ba = 0;
	if (attention_seconds(&af, &ab, NULL, cfg, dg, l, shard)) {
		fa = l->attn_flops;
		ba = 2.0 * l->attn_flops + l->attn_recompute_flops;
	}
	*out_fwd = ppcc_cost_flops_seconds(dg, speed, l->fwd_flops - fa,
					   l->fp8_fwd_flops) + af +
		   lc->tp_f[layer] + lc->cp_f[layer] +
		   kernel_seconds(dg, t, shard, l->kernel_fwd_bytes,
				  l->kernel_fwd_replicated_bytes);
	*out_bwd = ppcc_cost_flops_seconds(dg, speed, l->bwd_flops - ba,
					   l->fp8_bwd_flops) + ab +
		   lc->tp_b[layer] + lc->cp_b[layer] +
		   kernel_seconds(dg, t, shard, l->kernel_bwd_bytes,
				  l->kernel_bwd_replicated_bytes);
	if (cfg->pipeline.overlap.tp_comm) {
		double hf, hb;
		ppcc_cost_tp_hidden(&hf, &hb, cfg, lc, layer, dg);
		*out_fwd -= hf;
		*out_bwd -= hb;
	}
	double cf, cb;
	ppcc_cost_cp_hidden(&cf, &cb, cfg, lc, layer, dg);
	*out_fwd -= cf;
	*out_bwd -= cb;
	if (lc->ep_f) {
		double xb, xf = ppcc_cost_expert_extra_flops(&xb, cfg, l);
		/* the experts' matrix multiplies: FP8 where the blocks' are */
		int f8 = l->fp8_fwd_flops > 0;
		*out_fwd += lc->ep_f[layer] +
			    ppcc_cost_flops_seconds(dg, speed, xf, f8 ? xf : 0);
		*out_bwd += lc->ep_b[layer] +
			    ppcc_cost_flops_seconds(dg, speed, xb, f8 ? xb : 0);
	}
}

double ppcc_cost_ep_hidden_share(const ppcc_config *cfg, int kind)
{
	const ppcc_transformer *tf = cfg->model.transformer;
	const ppcc_sched_kind_info *ki = ppcc_sched_kind(kind);
	if (!tf || tf->moe.experts == 0 || !ki || !ki->pairs ||
	    !ppcc_overlap_moe_a2a(&cfg->pipeline))
		return 0;
	return 1 - ppcc_overlap_comm_sm_share(&cfg->pipeline);
}

void ppcc_cost_stage_parts(ppcc_stage_cost *c, const ppcc_config *cfg,
			   const ppcc_cost_layer_comm *lc, int i, int j, int g,
			   int shared)
{
	const ppcc_layer *L = cfg->model.layers;
	const ppcc_device_group *dg = &cfg->cluster.groups[g];
	int t = cfg->pipeline.tensor_parallel;
	int cp = cfg->pipeline.context_parallel > 0
		? cfg->pipeline.context_parallel : 1;
	int shard = t * cp;
	double speed = ppcc_cost_speed(dg, shard);
	double split[3], mb = ppcc_pipeline_moment_bytes(&cfg->pipeline);
	ppcc_memory_zero_bytes_per_param(split, cfg->pipeline.zero,
					 cfg->pipeline.grad_bytes,
					 ppcc_pipeline_zero_ranks(&cfg->pipeline),
					 cfg->pipeline.trainer,
					 cfg->pipeline.stages, mb);
	double f = ppcc_memory_reserve_factor(cfg->pipeline.trainer);
	for (int k = 0; k < 3; k++)
		split[k] *= f;
	ppcc_comm_dp_rates(c, cfg);
	/* every trainer launches a bucket's reduction from the backward's
	 * hooks as soon as its gradients are in (doc/design/
	 * reduce-placement.md) */
	c->dp_ready_mid = 1;
	ppcc_memory_experts ex;
	ppcc_memory_experts_of(&ex, &cfg->pipeline, cfg->pipeline.stages);
	double esplit[3];
	ppcc_memory_zero_bytes_per_param(esplit, cfg->pipeline.zero,
					 cfg->pipeline.grad_bytes,
					 ex.edp, cfg->pipeline.trainer,
					 cfg->pipeline.stages, mb);
	for (int k = 0; k < 3; k++)
		esplit[k] *= f;
	for (int k = i; k <= j; k++) {
		ppcc_layer lk = L[k];
		if (shared && k == j)
			lk.params -= lk.shared_params;
		double per_device = ppcc_memory_device_params(&lk,
							      &cfg->pipeline);
		/* the collectives the step waits for: what the matrix
		 * multiplies do not hide */
		double hf, hb;
		ppcc_cost_tp_hidden(&hf, &hb, cfg, lc, k, dg);
		c->tp_fwd_ms += 1e3 * (lc->tp_f[k] - hf);
		c->tp_bwd_ms += 1e3 * (lc->tp_b[k] - hb);
		double cf, cb;
		ppcc_cost_cp_hidden(&cf, &cb, cfg, lc, k, dg);
		c->cp_fwd_ms += 1e3 * (lc->cp_f[k] - cf);
		c->cp_bwd_ms += 1e3 * (lc->cp_b[k] - cb);
		/* a recomputed attention at its kernel's rate */
		double af, ab, ra = 0, rs = 0;
		if (attention_seconds(&af, &ab, &rs, cfg, dg, &L[k], shard))
			ra = L[k].attn_recompute_flops;
		c->recompute_ms += 1e3 * (ppcc_cost_flops_seconds(
			dg, speed, L[k].recompute_flops - ra,
			L[k].fp8_recompute_flops) + rs);
		c->params += per_device;
		if (L[k].bytes_per_param > 0) {
			c->weight_bytes += per_device * f * L[k].bytes_per_param;
		} else if (L[k].expert_params > 0) {
			double e = L[k].expert_params * ex.share;
			double dense = per_device - e;
			c->weight_bytes += dense * split[0] + e * esplit[0];
			c->grad_bytes += dense * split[1] + e * esplit[1];
			c->optimizer_bytes += dense * split[2] + e * esplit[2];
		} else {
			c->weight_bytes += per_device * split[0];
			c->grad_bytes += per_device * split[1];
			c->optimizer_bytes += per_device * split[2];
		}
		/* Transformer Engine's FP8 weight copies are weights too */
		c->weight_bytes += f * ppcc_memory_fp8_copy_bytes(
			&L[k], t, &ex);
		c->logits_bytes += f * L[k].logits_bytes / shard;
		c->hardware_flops += L[k].fwd_flops + L[k].bwd_flops;
		c->model_flops += L[k].fwd_flops + L[k].bwd_flops -
				  L[k].recompute_flops;
	}
}
