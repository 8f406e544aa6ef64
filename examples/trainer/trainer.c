/*
 * trainer - trains the MLP of mlp.h for a few steps through the ppcc
 * runtime, or serially as the reference.
 *
 *   trainer [--transport local|mpi|nccl] [--schedule FILE.json]
 *           [--steps N] [--timeout S] [--debug] [--stats] [--serial]
 *           [--output FILE] [--save DIR --save-at STEP ...] [--resume DIR]
 *           [--loopback] [--fault fail|stuck --fault-rank R] [--grouped]
 *           [--data-parallel D] [--experts E [--top-k K]
 *           [--expert-parallel EP]]
 *
 * The schedule is the one compiled in (mlp_plan.h, which the build
 * generates with `ppcc plan -f header mlp.yaml`), or FILE.json from
 * `ppcc plan -f json`.  local runs every rank in a thread of this
 * process; mpi runs one rank per process (under mpirun); nccl runs the
 * stages on the GPU (the trainer_cuda build): one process per rank under
 * mpirun, or with --loopback every rank a thread of one process on one
 * GPU (nccl's loopback mode).  --serial trains without a pipeline, with
 * the microbatch count of the schedule.  --fault (nccl, or local) makes
 * rank R's first forward of step 1 fail, or sleep 1.5 x the timeout, for
 * the GPU check's fault step; --grouped (local) posts the messages in
 * groups and matches them by posting order, as NCCL does: with it and
 * --fault the GPU check rehearses on the CPU.
 *
 * --data-parallel D trains D replicas of the pipeline, each on its own
 * shard of a global batch of D x m microbatches, their gradients reduced
 * by the runtime: local runs the D x p ranks as threads, mpi as D x p
 * processes (world rank w is pipeline rank w / D of replica w % D), and
 * nccl (trainer_cuda, not --loopback) as D x p processes, one GPU each,
 * its device gradients summed by ncclAllReduce; with --serial, the
 * reference: one process over the whole batch.  A schedule of a ZeRO
 * plan (pipeline.zero >= 1: REDUCE_SCATTER_GRAD) leaves each replica
 * the reduced shard of each bucket it owns (ppcc_rt_dp_shard), and the
 * replica updates only that shard; the next step's ALL_GATHER_PARAM
 * prologue (ZeRO 1 and 2) gathers the shards, under ZeRO 3 (schedule
 * version 5) the runtime's UNSHARD_PARAM before each compute, and after
 * the last step the trainer gathers them once more
 * (ppcc_rt_dp_gather_params) before it prints or saves the weights.
 * ZeRO 3 reduce-scatters after every backward: the reference then adds
 * the replicas' gradients microbatch by microbatch (mlp.rounds), as the
 * runtime's rounds do.
 *
 * --experts E [--top-k K] [--expert-parallel EP] replaces hidden layer
 * MOE_LAYER with a mixture of E experts (moe.h: a softmax router, each
 * token to its top K experts).  With --data-parallel D each group of EP
 * replicas of the layer's pipeline rank shares the experts, E / EP each
 * (EP divides E and D), the tokens moved by ppcc_rt_alltoallv (local:
 * through a world of the D replicas' own; mpi: world ranks); the
 * runtime reduces only the router's gradient, and moe.h states the
 * order of the experts', which --serial --data-parallel D --expert-
 * parallel EP follows.  Each process holding the layer reports the
 * token rows it sent to other replicas on standard error.  Not with
 * nccl, checkpoints or a ZeRO schedule (refused, exit status 2).
 *
 * Checkpoints (ppcc/checkpoint.h): --save DIR --save-at STEP saves every
 * layer once STEP steps are done (--save-at may be repeated), each rank
 * its own layers; --resume DIR loads DIR's last checkpoint, each rank the
 * layers its stages hold under this run's schedule, whichever plan wrote
 * it, and trains on from its step.  --steps N is the step to stop at,
 * counted from the start of training, so a resumed run prints the losses
 * of steps k..N-1 and the same weights as a run that never stopped.
 *
 * Output, to compare runs line by line (C99 hex floats, exact), on
 * standard output or in FILE (FILE.RANK for each mpi or nccl process):
 *   loss STEP HEX DECIMAL   from the process that holds the last stage
 *   param LAYER HEX ...     weights then biases, from each layer's holder
 * Exit status: 0, 1 on a runtime or checkpoint failure, 2 on a usage
 * error.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ppcc/checkpoint.h>
#include <ppcc/runtime.h>

#include "mlp.h"
#include "mlp_plan.h"
#include "moe.h"

#if TRAINER_MPI
#include <mpi.h>
#endif
#if TRAINER_CUDA
#include "mlp_cuda.h"
#endif

typedef struct trainer_opts {
	int transport;
	const char *schedule;
	const char *output;
	int steps;
	double timeout_s;
	int debug, stats, serial;
	const char *save, *resume;
	int save_at[16], n_save_at;
	int loopback, fault, fault_rank;
	int data_parallel;
	int grouped;
	int experts, top_k, expert_parallel; /* experts 0: dense */
} trainer_opts;

static int usage(void)
{
	fprintf(stderr, "usage: trainer [--transport local|mpi|nccl] "
		"[--schedule FILE.json] [--steps N] [--timeout S] [--debug] "
		"[--stats] [--serial] [--output FILE] [--save DIR --save-at STEP "
		"...] [--resume DIR] [--loopback] [--fault fail|stuck --fault-rank R] "
		"[--grouped] [--data-parallel D] [--experts E [--top-k K] "
		"[--expert-parallel EP]]\n");
	return 2;
}

static int parse(trainer_opts *o, int argc, char **argv)
{
	*o = (trainer_opts){PPCC_RT_LOCAL, NULL, NULL, 4, 0, 0, 0, 0, NULL,
			    NULL, {0}, 0, 0, 0, -1, 1, 0, 0, 1, 1};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--transport") == 0 && v) {
			if (strcmp(v, "local") == 0)
				o->transport = PPCC_RT_LOCAL;
			else if (strcmp(v, "mpi") == 0)
				o->transport = PPCC_RT_MPI;
			else if (strcmp(v, "nccl") == 0)
				o->transport = PPCC_RT_NCCL;
			else
				return -1;
			i++;
		} else if (strcmp(a, "--schedule") == 0 && v) {
			o->schedule = v;
			i++;
		} else if (strcmp(a, "--output") == 0 && v) {
			o->output = v;
			i++;
		} else if (strcmp(a, "--steps") == 0 && v) {
			o->steps = atoi(v);
			i++;
		} else if (strcmp(a, "--timeout") == 0 && v) {
			o->timeout_s = atof(v);
			i++;
		} else if (strcmp(a, "--save") == 0 && v) {
			o->save = v;
			i++;
		} else if (strcmp(a, "--save-at") == 0 && v && o->n_save_at < 16) {
			o->save_at[o->n_save_at++] = atoi(v);
			i++;
		} else if (strcmp(a, "--resume") == 0 && v) {
			o->resume = v;
			i++;
		} else if (strcmp(a, "--debug") == 0) {
			o->debug = 1;
		} else if (strcmp(a, "--stats") == 0) {
			o->stats = 1;
		} else if (strcmp(a, "--serial") == 0) {
			o->serial = 1;
		} else if (strcmp(a, "--loopback") == 0) {
			o->loopback = 1;
		} else if (strcmp(a, "--grouped") == 0) {
			o->grouped = 1;
		} else if (strcmp(a, "--fault") == 0 && v) {
			if (strcmp(v, "fail") == 0)
				o->fault = 1; /* MLP_FAULT_FAIL */
			else if (strcmp(v, "stuck") == 0)
				o->fault = 2; /* MLP_FAULT_STUCK */
			else
				return -1;
			i++;
		} else if (strcmp(a, "--data-parallel") == 0 && v) {
			o->data_parallel = atoi(v);
			i++;
		} else if (strcmp(a, "--experts") == 0 && v) {
			o->experts = atoi(v);
			i++;
		} else if (strcmp(a, "--top-k") == 0 && v) {
			o->top_k = atoi(v);
			i++;
		} else if (strcmp(a, "--expert-parallel") == 0 && v) {
			o->expert_parallel = atoi(v);
			i++;
		} else if (strcmp(a, "--fault-rank") == 0 && v) {
			o->fault_rank = atoi(v);
			i++;
		} else {
			return -1;
		}
	}
	if (!o->save != !o->n_save_at)
		return -1;
	if (o->loopback && o->transport != PPCC_RT_NCCL)
		return -1;
	if (o->fault && (o->transport == PPCC_RT_MPI || o->serial ||
			 o->data_parallel > 1))
		return -1;
	if (o->grouped && (o->transport != PPCC_RT_LOCAL || o->serial))
		return -1;
	if (o->fault && o->fault_rank < 0)
		return -1;
	if (o->data_parallel < 1 || o->data_parallel > 64 ||
	    (o->data_parallel > 1 && !o->serial &&
	     (o->loopback || o->save || o->resume)))
		return -1;
	return o->steps >= 1 ? 0 : -1;
}

/* ---- checkpoints ------------------------------------------------------------ */

static void ckpt_diag(int rank, const char *line, void *user)
{
	(void)rank;
	(void)user;
	fprintf(stderr, "trainer: %s\n", line);
}

/* Reads of checkpoint files are bounded by --timeout, as the runtime's
 * waits are. */
static ppcc_ckpt_model ckpt_model(const trainer_opts *o, int rank)
{
	return (ppcc_ckpt_model){PPCC_CKPT_VERSION, MLP_CKPT_NAME, MLP_LAYERS,
				 rank, ckpt_diag, NULL, o->timeout_s, NULL};
}

static int save_due(const trainer_opts *o, int step)
{
	for (int k = 0; k < o->n_save_at; k++)
		if (o->save_at[k] == step)
			return 1;
	return 0;
}

/* Saves the layers marked in owned (NULL: all) for net->step. */
static int ckpt_save(const trainer_opts *o, mlp *net, const int *owned, int rank)
{
	ppcc_ckpt_model m = ckpt_model(o, rank);
	for (int l = 0; l < MLP_LAYERS; l++) {
		ppcc_ckpt_layer layer;
		ppcc_ckpt_tensor t[2];
		if (owned && !owned[l])
			continue;
		mlp_ckpt_layer(&layer, t, net, l);
		if (ppcc_ckpt_save_layer(&m, o->save, (uint64_t)net->step, &layer) < 0)
			return -1;
	}
	return 0;
}

static int ckpt_commit(const trainer_opts *o, const mlp *net, int rank)
{
	ppcc_ckpt_model m = ckpt_model(o, rank);
	if (ppcc_ckpt_commit(&m, o->save, (uint64_t)net->step) < 0)
		return -1;
	fprintf(stderr, "trainer: saved step %d in %s\n", net->step, o->save);
	return 0;
}

/* Loads the last checkpoint's layers marked in owned (NULL: all) and its
 * step. */
static int ckpt_resume(const trainer_opts *o, mlp *net, const int *owned, int rank)
{
	ppcc_ckpt_model m = ckpt_model(o, rank);
	uint64_t step;
	if (ppcc_ckpt_latest(&step, &m, o->resume) < 0)
		return -1;
	if (step > (uint64_t)o->steps) {
		fprintf(stderr, "trainer: %s holds step %llu, past --steps %d\n",
			o->resume, (unsigned long long)step, o->steps);
		return -1;
	}
	for (int l = 0; l < MLP_LAYERS; l++) {
		ppcc_ckpt_layer layer;
		ppcc_ckpt_tensor t[2];
		if (owned && !owned[l])
			continue;
		mlp_ckpt_layer(&layer, t, net, l);
		if (ppcc_ckpt_load_layer(&m, o->resume, step, &layer) < 0)
			return -1;
	}
	net->step = (int)step;
	return 0;
}

/* Where the results go: standard output or the --output file. */
static FILE *out_file;

static void print_loss(int step, double loss)
{
	fprintf(out_file, "loss %d %a %.17g\n", step, loss, loss);
}

static void print_stats(const ppcc_rt_stats *st, int step)
{
	fprintf(stderr, "step %d rank %d: %.3f ms, busy %.3f ms, waiting %.3f ms, "
		"%llu messages (%llu bytes) in, %d buffers at most\n", step,
		st->rank, st->step_s * 1e3, st->busy_s * 1e3, st->wait_s * 1e3,
		(unsigned long long)st->messages_received,
		(unsigned long long)st->bytes_received, st->peak_buffers);
}

/* Whether the schedule has an action of op. */
static int schedule_has(const ppcc_schedule *s, int op)
{
	for (int r = 0; r < s->n_ranks; r++)
		for (int i = 0; i < s->ranks[r].n_actions; i++)
			if (s->ranks[r].actions[i].op == op)
				return 1;
	return 0;
}

/* Whether the schedule gathers the parameters itself: the prologue of
 * ZeRO 1 and 2, or ZeRO-3's gathers before each compute. */
static int schedule_gathers(const ppcc_schedule *s)
{
	return schedule_has(s, PPCC_OP_ALL_GATHER_PARAM) ||
	       schedule_has(s, PPCC_OP_UNSHARD_PARAM);
}

/* Why --experts cannot run as asked, or NULL; s NULL: the options
 * alone (before MPI_Init, which a refused run need not pay for). */
static const char *moe_refusal(const trainer_opts *o, const ppcc_schedule *s)
{
	int E = o->experts, K = o->top_k, ep = o->expert_parallel;
	if (E < 1 || E > MOE_MAX_EXPERTS)
		return "E must be 1 to 16";
	if (K < 1 || K > E)
		return "--top-k K must be 1 to E";
	if (ep < 1 || ep > MOE_MAX_EP || E % ep || o->data_parallel % ep)
		return "--expert-parallel EP must divide E and --data-parallel D "
		       "(the expert group is EP replicas of one pipeline rank)";
	if (o->transport == PPCC_RT_NCCL && !o->serial)
		return "the nccl transport has no mixture-of-experts path in this "
		       "trainer (its stages run on the GPU); use local or mpi";
	if (o->save || o->resume)
		return "checkpoints hold the dense layers only; no --save or --resume";
	if (s && (schedule_has(s, PPCC_OP_REDUCE_SCATTER_GRAD) ||
		  schedule_gathers(s)))
		return "a ZeRO schedule shards every bucket over the replicas, "
		       "and the experts are not replicated";
	return NULL;
}

/* The net's MoE layer, as o asks (none without --experts).  0 or -1. */
static int moe_setup(mlp *net, const trainer_opts *o)
{
	if (!o->experts)
		return 0;
	return moe_init(net, o->experts, o->top_k, o->expert_parallel,
			o->data_parallel);
}

static int run_serial(const trainer_opts *o, const ppcc_schedule *s)
{
	mlp net;
	double loss;
	if (mlp_init(&net, o->data_parallel * s->n_microbatches) < 0)
		return 1;
	if (moe_setup(&net, o) < 0) {
		mlp_free(&net);
		return 1;
	}
	net.shards = o->data_parallel;
	net.rounds = schedule_has(s, PPCC_OP_UNSHARD_PARAM);
	for (int step = 0; step < o->steps; step++) {
		if (mlp_serial_step(&net, &loss) < 0)
			return 1;
		print_loss(step, loss);
	}
	mlp_print_params(out_file, &net, NULL);
	mlp_free(&net);
	return 0;
}

/* --fault on the local transport, as mlp_cuda.cu injects it on the GPU:
 * the first forward of step 1 on the fault rank fails, or sleeps 1.5 x
 * the timeout.  The stage's own forward runs otherwise. */
static struct {
	ppcc_rt_forward_fn inner;
	const ppcc_schedule *s;
	int fault, rank, step;
	double sleep_s;
	pthread_mutex_t mu;
	int done;
} local_fault = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int fault_forward(int stage, int mb, const void *input,
			 size_t input_bytes, void *output, size_t output_bytes,
			 void *user)
{
	int rank = local_fault.s->stages[stage].rank, fire = 0;
	if (rank == local_fault.rank && local_fault.step == 1) {
		pthread_mutex_lock(&local_fault.mu);
		fire = !local_fault.done;
		local_fault.done = 1;
		pthread_mutex_unlock(&local_fault.mu);
	}
	if (fire && local_fault.fault == 1) {
		fprintf(stderr, "trainer: injected fault: rank %d's forward of "
			"stage %d fails\n", rank, stage);
		return -1;
	}
	if (fire) {
		fprintf(stderr, "trainer: injected fault: rank %d's forward of "
			"stage %d sleeps %.3f s\n", rank, stage, local_fault.sleep_s);
		struct timespec ts;
		ts.tv_sec = (time_t)local_fault.sleep_s;
		ts.tv_nsec = (long)((local_fault.sleep_s - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
	return local_fault.inner(stage, mb, input, input_bytes, output,
				 output_bytes, user);
}

/* Every rank in a thread: one ppcc_rt_run_local per step, then the
 * update of every layer. */
static int run_local(const trainer_opts *o, const ppcc_schedule *s,
		     ppcc_rt_options *ro)
{
	mlp net;
	mlp_stages *st = NULL;
	ppcc_rt_stage_fns *fns = calloc((size_t)s->n_stages, sizeof *fns);
	ppcc_rt_stats *stats = calloc((size_t)s->n_ranks, sizeof *stats);
	char why[256];
	int err = 0;
	if (!fns || !stats || mlp_init(&net, s->n_microbatches) < 0) {
		fprintf(stderr, "trainer: out of memory\n");
		free(fns);
		free(stats);
		return 1;
	}
	if (moe_setup(&net, o) < 0) {
		fprintf(stderr, "trainer: out of memory\n");
		err = 1;
		goto out;
	}
	if (mlp_stages_new(&st, &net, s, why, sizeof why) < 0) {
		fprintf(stderr, "trainer: %s\n", why);
		err = 1;
		goto out;
	}
	mlp_stages_fns(st, fns);
	if (o->fault) {
		local_fault.inner = fns[0].forward;
		local_fault.s = s;
		local_fault.fault = o->fault;
		local_fault.rank = o->fault_rank;
		local_fault.sleep_s = 1.5 * (ro->timeout_s > 0 ? ro->timeout_s : 300);
		for (int k = 0; k < s->n_stages; k++)
			fns[k].forward = fault_forward;
	}
	if (o->resume && ckpt_resume(o, &net, NULL, 0) < 0) {
		err = 1;
		goto out;
	}
	for (int step = net.step; step < o->steps; step++) {
		local_fault.step = step;
		if ((err = ppcc_rt_run_local(stats, s, fns, ro)) != 0) {
			fprintf(stderr, "trainer: step %d: %s\n", step,
				ppcc_rt_status_str(err));
			err = 1;
			goto out;
		}
		if (o->stats)
			for (int r = 0; r < s->n_ranks; r++)
				print_stats(&stats[r], step);
		print_loss(step, mlp_stages_loss(st));
		for (int l = 0; l < MLP_LAYERS; l++)
			mlp_update(&net, l);
		net.step++;
		if (save_due(o, net.step) &&
		    (ckpt_save(o, &net, NULL, 0) < 0 || ckpt_commit(o, &net, 0) < 0)) {
			err = 1;
			goto out;
		}
	}
	mlp_print_params(out_file, &net, NULL);
out:
	mlp_stages_free(st);
	mlp_free(&net);
	free(fns);
	free(stats);
	return err;
}

/* Registers the layer gradients of rank's stages as buckets: w then b,
 * layer by layer, bucket 2*(l - first) and 2*(l - first) + 1, and the
 * layers' parameters as the same buckets' (what a ZeRO schedule's
 * gathers gather). */
static int register_grads(ppcc_rt *rt, const ppcc_schedule *s, mlp *net,
			  int rank)
{
	int err = 0;
	for (int st = 0; st < s->n_stages && err == 0; st++) {
		const ppcc_stage_info *si = &s->stages[st];
		if (si->rank != rank)
			continue;
		for (int l = si->first_layer; l <= si->last_layer && err == 0; l++) {
			mlp_layer *y = &net->layer[l];
			int b = 2 * (l - si->first_layer);
			size_t nw = (size_t)mlp_width[l] * (size_t)mlp_width[l + 1];
			size_t nb = (size_t)mlp_width[l + 1];
			double *w = y->w, *gw = y->gw, *bias = y->b, *gb = y->gb;
			if (net->moe && l == MOE_LAYER) {
				/* the router only: each expert's gradient is
				 * complete on its owner (moe.h), and summing it
				 * over the replicas would add the other
				 * replicas' zeros or copies */
				nb = (size_t)net->moe->E;
				nw = nb * MOE_WIDTH;
				w = net->moe->wr;
				gw = net->moe->gwr;
				bias = net->moe->br;
				gb = net->moe->gbr;
			}
			if ((err = ppcc_rt_grad_register(rt, st, b, gw, nw)) == 0 &&
			    (err = ppcc_rt_grad_register(rt, st, b + 1, gb, nb)) == 0 &&
			    (err = ppcc_rt_param_register(rt, st, b, w, nw)) == 0)
				err = ppcc_rt_param_register(rt, st, b + 1, bias, nb);
		}
	}
	return err;
}

/* The optimizer step of rank's layers: each bucket's shard this replica
 * owns (the whole bucket unless the schedule reduce-scatters), every
 * gradient zeroed.  *out_sharded: whether it reduce-scatters. */
static int update_shards(ppcc_rt *rt, const ppcc_schedule *s, mlp *net,
			 int rank, int *out_sharded)
{
	int err = 0;
	*out_sharded = 0;
	for (int st = 0; st < s->n_stages && err == 0; st++) {
		const ppcc_stage_info *si = &s->stages[st];
		if (si->rank != rank)
			continue;
		for (int l = si->first_layer; l <= si->last_layer && err == 0; l++) {
			int b = 2 * (l - si->first_layer);
			ppcc_rt_shard w = {PPCC_RT_SHARD_VERSION, 0, 0, 0, 0, 0, 0};
			ppcc_rt_shard bias = w;
			if (net->moe && l == MOE_LAYER) {
				/* never sharded (moe_refusal) */
				mlp_update(net, l);
				continue;
			}
			if ((err = ppcc_rt_dp_shard(&w, rt, st, b)) == 0 &&
			    (err = ppcc_rt_dp_shard(&bias, rt, st, b + 1)) == 0) {
				mlp_update_shard(net, l, w.offset, w.count, bias.offset,
						 bias.count);
				*out_sharded |= w.sharded;
			}
		}
	}
	return err;
}

/* ---- the MoE layer's expert groups -------------------------------------------- */

/* The pipeline rank whose stage holds layer MOE_LAYER. */
static int moe_rank(const ppcc_schedule *s)
{
	for (int st = 0; st < s->n_stages; st++)
		if (s->stages[st].first_layer <= MOE_LAYER &&
		    MOE_LAYER <= s->stages[st].last_layer)
			return s->stages[st].rank;
	return -1;
}

/* Over the local transport a world is one replica's pipeline, so the D
 * replicas of the MoE layer's pipeline rank reach each other through a
 * second runtime each, in a world of D ranks of their own, whose only
 * use is ppcc_rt_alltoallv (called "between steps" of that runtime).
 * A runtime needs a valid schedule: this one is GPipe over D one-layer
 * stages with one microbatch, never stepped. */
typedef struct ep_schedule {
	ppcc_schedule s;
	ppcc_stage_info stages[64];
	ppcc_rank_schedule ranks[64];
	ppcc_action actions[64][6];
} ep_schedule;

static void ep_schedule_make(ep_schedule *e, int D)
{
	for (int i = 0; i < D; i++) {
		ppcc_action *a = e->actions[i];
		int n = 0;
		e->stages[i] = (ppcc_stage_info){i, i, 0, i, i, i > 0 ? 8 : 0,
						 i < D - 1 ? 8 : 0};
		if (i > 0)
			a[n++] = (ppcc_action){PPCC_OP_RECV_F, i, 0, i - 1, 8};
		a[n++] = (ppcc_action){PPCC_OP_F, i, 0, -1, 0};
		if (i < D - 1) {
			a[n++] = (ppcc_action){PPCC_OP_SEND_F, i, 0, i + 1, 8};
			a[n++] = (ppcc_action){PPCC_OP_RECV_B, i, 0, i + 1, 8};
		}
		a[n++] = (ppcc_action){PPCC_OP_B, i, 0, -1, 0};
		if (i > 0)
			a[n++] = (ppcc_action){PPCC_OP_SEND_B, i, 0, i - 1, 8};
		e->ranks[i] = (ppcc_rank_schedule){i, n, a};
	}
	e->s = (ppcc_schedule){1, PPCC_SCHED_GPIPE, D, 1, D, 1, e->stages,
			       e->ranks, 0};
	e->s.fingerprint = ppcc_schedule_fingerprint(&e->s);
}

static void moe_report(const moe_link *link, int replica, int rank)
{
	fprintf(stderr, "trainer: moe: replica %d rank %d sent %llu of %llu "
		"token rows to other replicas\n", replica, rank,
		link->rows_remote, link->rows_sent);
}

/* Whether b's router and the experts replica rb holds equal a's. */
static int moe_same(const mlp *a, const mlp *b, int rb)
{
	const mlp_moe *x = a->moe, *y = b->moe;
	size_t nr = (size_t)x->E * MOE_WIDTH, per = (size_t)(x->E / x->ep);
	size_t lo = (size_t)(rb % x->ep) * per;
	return memcmp(x->wr, y->wr, nr * sizeof *x->wr) == 0 &&
	       memcmp(x->br, y->br, (size_t)x->E * sizeof *x->br) == 0 &&
	       memcmp(&x->we[lo * MOE_WIDTH * MOE_WIDTH],
		      &y->we[lo * MOE_WIDTH * MOE_WIDTH],
		      per * MOE_WIDTH * MOE_WIDTH * sizeof *x->we) == 0 &&
	       memcmp(&x->be[lo * MOE_WIDTH], &y->be[lo * MOE_WIDTH],
		      per * MOE_WIDTH * sizeof *x->be) == 0;
}

/* ---- data parallelism: D replicas of the pipeline, local --------------------
 *
 * Replica r trains on microbatches r*m .. r*m+m-1 of the global batch of
 * D*m, with its own copy of the model, in its own local world of p rank
 * threads; the D threads of pipeline rank k form one data-parallel group,
 * in which each stage's layer gradients (w then b, layer by layer: bucket
 * 2*(l - first) and 2*(l - first) + 1) are reduced as the stage's last
 * backward returns.  After its step each thread updates its own layers.
 * The step's loss adds the D*m microbatch losses in global order, as the
 * serial run over D*m microbatches does. */
typedef struct dp_run {
	const trainer_opts *o;
	const ppcc_schedule *s;
	const ppcc_rt_options *ro;
	int D;
	mlp *nets;
	mlp_stages **sts;
	ppcc_rt_stage_fns *fns;      /* D x n_stages */
	ppcc_rt_local_world **worlds; /* per replica */
	ppcc_rt_dp_group **groups;    /* per pipeline rank */
	double *losses;               /* steps x D*m */
	int *status;                  /* per thread */
	/* --experts: the MoE layer's rank, its D replicas' world */
	int moe_rank;
	ep_schedule *ep;
	ppcc_rt_local_world *ep_world;
} dp_run;

typedef struct dp_thread {
	dp_run *run;
	int replica, rank;
} dp_thread;

static void *dp_rank_main(void *arg)
{
	dp_thread *t = arg;
	dp_run *d = t->run;
	const ppcc_schedule *s = d->s;
	int r = t->replica, k = t->rank, S = s->n_stages, m = s->n_microbatches;
	int *status = &d->status[r * s->n_ranks + k];
	ppcc_rt_options ro = *d->ro;
	ro.world = d->worlds[r];
	ro.dp_group = d->groups[k];
	ro.replica = r;
	ppcc_rt *rt = NULL, *ep_rt = NULL;
	mlp *net = &d->nets[r];
	moe_link *link = d->ep && k == d->moe_rank ? mlp_stages_moe_link(d->sts[r]) : NULL;
	if ((*status = ppcc_rt_init(&rt, s, k, &ro)) != 0)
		return NULL;
	if (link) {
		ppcc_rt_options eo = *d->ro;
		eo.world = d->ep_world;
		if ((*status = ppcc_rt_init(&ep_rt, &d->ep->s, r, &eo)) == 0)
			moe_link_init(link, net, ep_rt, 0, r);
	}
	if (*status == 0)
		*status = register_grads(rt, s, net, k);
	int sharded = 0, gathers = schedule_gathers(s);
	for (int step = 0; step < d->o->steps && *status == 0; step++) {
		ppcc_rt_stats stats = PPCC_RT_STATS_INIT;
		if ((*status = ppcc_rt_step(&stats, rt, &d->fns[(size_t)r * (size_t)S])) != 0)
			break;
		if (d->o->stats) {
			double red, wait;
			ppcc_rt_dp_stats(rt, &red, &wait);
			fprintf(stderr, "step %d replica %d rank %d: %.3f ms, busy %.3f "
				"ms, reductions %.3f ms, %.3f ms of it waited for\n",
				step, r, k, stats.step_s * 1e3, stats.busy_s * 1e3,
				red * 1e3, wait * 1e3);
		}
		/* the expert copies of the D / EP groups summed */
		if (link && (*status = moe_reduce_experts(net, link)) != 0)
			break;
		if ((*status = update_shards(rt, s, net, k, &sharded)) != 0)
			break;
		/* a reduce-scatter without gathers (a hand-written schedule):
		 * the parameters gathered before they are used again */
		if (sharded && !gathers && step + 1 < d->o->steps &&
		    (*status = ppcc_rt_dp_gather_params(rt)) != 0)
			break;
		for (int st = 0; st < S; st++) {
			const ppcc_stage_info *si = &s->stages[st];
			if (si->rank != k)
				continue;
			if (st == S - 1)
				for (int mb = 0; mb < m; mb++)
					d->losses[(size_t)step * (size_t)(d->D * m) +
						  (size_t)(r * m + mb)] =
						mlp_stages_loss_of(d->sts[r], mb);
		}
	}
	/* the last update's shards, to every replica */
	if (*status == 0 && sharded)
		*status = ppcc_rt_dp_gather_params(rt);
	/* every expert to replica 0 (and each group's first), to print */
	if (*status == 0 && link && (*status = moe_gather_experts(net, link)) == 0)
		moe_report(link, r, k);
	ppcc_rt_free(ep_rt);
	ppcc_rt_free(rt);
	return NULL;
}

static int run_local_dp(const trainer_opts *o, const ppcc_schedule *s,
			ppcc_rt_options *ro)
{
	int D = o->data_parallel, p = s->n_ranks, S = s->n_stages;
	int m = s->n_microbatches, n = D * p, err = 0, made = 0;
	dp_run d = {o, s, ro, D, calloc((size_t)D, sizeof(mlp)),
		    calloc((size_t)D, sizeof(mlp_stages *)),
		    calloc((size_t)D * (size_t)S, sizeof(ppcc_rt_stage_fns)),
		    calloc((size_t)D, sizeof(ppcc_rt_local_world *)),
		    calloc((size_t)p, sizeof(ppcc_rt_dp_group *)),
		    calloc((size_t)o->steps * (size_t)(D * m), sizeof(double)),
		    calloc((size_t)n, sizeof(int)), moe_rank(s), NULL, NULL};
	pthread_t *th = calloc((size_t)n, sizeof *th);
	dp_thread *ts = calloc((size_t)n, sizeof *ts);
	char why[256];
	if (!d.nets || !d.sts || !d.fns || !d.worlds || !d.groups || !d.losses ||
	    !d.status || !th || !ts) {
		fprintf(stderr, "trainer: out of memory\n");
		err = 1;
		goto out;
	}
	if (o->experts && (!(d.ep = calloc(1, sizeof *d.ep)) ||
			   ppcc_rt_local_world_new(&d.ep_world, D) != 0)) {
		fprintf(stderr, "trainer: out of memory\n");
		err = 1;
		goto out;
	}
	if (d.ep)
		ep_schedule_make(d.ep, D);
	for (int r = 0; r < D; r++, made++) {
		if (mlp_init(&d.nets[r], m) < 0 || moe_setup(&d.nets[r], o) < 0 ||
		    mlp_stages_new(&d.sts[r], &d.nets[r], s, why, sizeof why) < 0 ||
		    ppcc_rt_local_world_new(&d.worlds[r], p) != 0) {
			fprintf(stderr, "trainer: %s\n", d.sts[r] ? "out of memory" : why);
			err = 1;
			made++;
			goto out;
		}
		d.nets[r].mb0 = r * m;
		d.nets[r].m_total = D * m;
		mlp_stages_fns(d.sts[r], &d.fns[(size_t)r * (size_t)S]);
	}
	for (int k = 0; k < p; k++)
		if (ppcc_rt_dp_group_new(&d.groups[k], D) != 0) {
			fprintf(stderr, "trainer: out of memory\n");
			err = 1;
			goto out;
		}
	int started = 0;
	for (int i = 0; i < n; i++) {
		ts[i] = (dp_thread){&d, i / p, i % p};
		if (pthread_create(&th[i], NULL, dp_rank_main, &ts[i]) != 0)
			break;
		started++;
	}
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < n; i++)
		if (i >= started || d.status[i] != 0) {
			fprintf(stderr, "trainer: replica %d rank %d: %s\n", i / p, i % p,
				i >= started ? "no thread" : ppcc_rt_status_str(d.status[i]));
			err = 1;
		}
	if (err)
		goto out;
	for (int step = 0; step < o->steps; step++) {
		double sum = 0;
		for (int j = 0; j < D * m; j++)
			sum += d.losses[(size_t)step * (size_t)(D * m) + (size_t)j];
		print_loss(step, sum / (D * m));
	}
	/* every replica must hold the same weights */
	for (int r = 1; r < D; r++)
		for (int l = 0; l < MLP_LAYERS; l++) {
			size_t nw = (size_t)mlp_width[l] * (size_t)mlp_width[l + 1];
			if (o->experts && l == MOE_LAYER &&
			    !moe_same(&d.nets[0], &d.nets[r], r)) {
				fprintf(stderr, "trainer: replica %d's router or "
					"experts differ from replica 0's\n", r);
				err = 1;
			}
			if (memcmp(d.nets[r].layer[l].w, d.nets[0].layer[l].w,
				   nw * sizeof(double)) != 0 ||
			    memcmp(d.nets[r].layer[l].b, d.nets[0].layer[l].b,
				   (size_t)mlp_width[l + 1] * sizeof(double)) != 0) {
				fprintf(stderr, "trainer: replica %d's layer %d differs "
					"from replica 0's\n", r, l);
				err = 1;
			}
		}
	if (!err)
		mlp_print_params(out_file, &d.nets[0], NULL);
out:
	for (int k = 0; d.groups && k < p; k++)
		ppcc_rt_dp_group_free(d.groups[k]);
	for (int r = 0; r < made && d.nets; r++) {
		mlp_stages_free(d.sts[r]);
		ppcc_rt_local_world_free(d.worlds[r]);
		mlp_free(&d.nets[r]);
	}
	free(d.nets);
	free(d.sts);
	free(d.fns);
	free(d.worlds);
	free(d.groups);
	free(d.losses);
	free(d.status);
	ppcc_rt_local_world_free(d.ep_world);
	free(d.ep);
	free(th);
	free(ts);
	return err;
}

#if TRAINER_MPI
/* One rank per process: the runtime for this rank, then the update of
 * the layers its stages hold.  With --data-parallel D the world is p x D
 * processes, world rank w pipeline rank w / D of replica w % D (the
 * runtime's rule); replica r trains on microbatches r*m .. r*m+m-1 of
 * the global batch, the runtime sums the gradients, and replica 0
 * prints: the step's loss adds the D*m microbatch losses, gathered from
 * the replicas' last stages, in global order.  After a failure a peer
 * may be stuck, so the job ends with MPI_Abort rather than
 * MPI_Finalize. */
static int run_mpi(const trainer_opts *o, const ppcc_schedule *s,
		   ppcc_rt_options *ro)
{
	mlp net;
	mlp_stages *st = NULL;
	ppcc_rt *rt = NULL;
	ppcc_rt_stage_fns *fns = calloc((size_t)s->n_stages, sizeof *fns);
	int owned[MLP_LAYERS] = {0};
	int D = o->data_parallel, m = s->n_microbatches, world = 0, replica = 0;
	double *mine = calloc((size_t)m, sizeof *mine);
	double *all = calloc((size_t)(D * m) * (size_t)s->n_ranks, sizeof *all);
	char why[256];
	int err;
	MPI_Comm_rank(MPI_COMM_WORLD, &world);
	replica = world % D;
	if (!fns || !mine || !all || mlp_init(&net, m) < 0 ||
	    (snprintf(why, sizeof why, "out of memory"), moe_setup(&net, o) < 0) ||
	    mlp_stages_new(&st, &net, s, why, sizeof why) < 0) {
		fprintf(stderr, "trainer: %s\n", fns && mine && all ? why : "out of memory");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	net.mb0 = replica * m;
	net.m_total = D * m;
	mlp_stages_fns(st, fns);
	ro->transport = PPCC_RT_MPI;
	if (D > 1)
		ro->data_parallel = D;
	if ((err = ppcc_rt_init(&rt, s, -1, ro)) != 0) {
		fprintf(stderr, "trainer: %s\n", ppcc_rt_status_str(err));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	int rank = ppcc_rt_rank(rt);
	if (D > 1 && (err = register_grads(rt, s, &net, rank)) != 0) {
		fprintf(stderr, "trainer: %s\n", ppcc_rt_status_str(err));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	int last = s->stages[s->n_stages - 1].rank == rank;
	int sharded = 0, gathers = schedule_gathers(s);
	/* the MoE layer's expert group: replicas of this pipeline rank, world
	 * ranks rank * D .. rank * D + D - 1 */
	moe_link *link = o->experts && moe_rank(s) == rank ? mlp_stages_moe_link(st) : NULL;
	if (link)
		moe_link_init(link, &net, rt, rank * D, replica);
	if (replica != 0)
		out_file = NULL; /* replica 0 prints for all */
	if (o->output && replica == 0) {
		char path[4096];
		snprintf(path, sizeof path, "%s.%d", o->output, rank);
		if (!(out_file = fopen(path, "w"))) {
			fprintf(stderr, "trainer: cannot write %s\n", path);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	/* mlp_stages_new has checked that the stages cover the layers */
	ppcc_ckpt_layers_of(owned, MLP_LAYERS, s, rank);
	if (o->resume) {
		int bad = ckpt_resume(o, &net, owned, rank) < 0, any;
		MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		if (any) {
			fflush(NULL);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	for (int step = net.step; step < o->steps; step++) {
		ppcc_rt_stats stats = PPCC_RT_STATS_INIT;
		if ((err = ppcc_rt_step(&stats, rt, fns)) != 0) {
			fprintf(stderr, "trainer: rank %d step %d: %s\n", rank, step,
				ppcc_rt_status_str(err));
			fflush(NULL);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		if (o->stats)
			print_stats(&stats, step);
		if (link && (err = moe_reduce_experts(&net, link)) != 0) {
			fprintf(stderr, "trainer: rank %d step %d: %s\n", rank, step,
				ppcc_rt_status_str(err));
			fflush(NULL);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		if (o->stats && D > 1) {
			double red, wait;
			ppcc_rt_dp_stats(rt, &red, &wait);
			fprintf(stderr, "step %d replica %d rank %d: reductions "
				"%.3f ms, %.3f ms of it waited for\n", step,
				replica, rank, red * 1e3, wait * 1e3);
		}
		if (D > 1) {
			/* every process sends m losses (zeros off the last
			 * stage); world rank w's land at all[w * m] */
			for (int mb = 0; mb < m; mb++)
				mine[mb] = last ? mlp_stages_loss_of(st, mb) : 0;
			MPI_Gather(mine, m, MPI_DOUBLE, all, m, MPI_DOUBLE, 0,
				   MPI_COMM_WORLD);
			if (world == 0) {
				int lr = s->stages[s->n_stages - 1].rank;
				double sum = 0;
				for (int r = 0; r < D; r++)
					for (int mb = 0; mb < m; mb++)
						sum += all[(size_t)(lr * D + r) * (size_t)m +
							   (size_t)mb];
				print_loss(step, sum / (D * m));
			}
		} else if (last) {
			print_loss(step, mlp_stages_loss(st));
		}
		if (D > 1) {
			err = update_shards(rt, s, &net, rank, &sharded);
			/* a reduce-scatter without gathers, or a save of a
			 * ZeRO run: every parameter gathered now */
			if (err == 0 && sharded &&
			    ((!gathers && step + 1 < o->steps) || step + 1 == o->steps ||
			     save_due(o, net.step + 1)))
				err = ppcc_rt_dp_gather_params(rt);
			if (err != 0) {
				fprintf(stderr, "trainer: rank %d step %d: %s\n", rank,
					step, ppcc_rt_status_str(err));
				fflush(NULL);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
		} else {
			for (int l = 0; l < MLP_LAYERS; l++)
				if (owned[l])
					mlp_update(&net, l);
		}
		net.step++;
		if (save_due(o, net.step)) {
			/* every rank's shards, then one commit */
			int bad = ckpt_save(o, &net, owned, rank) < 0, any;
			MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
			if (!any && rank == 0)
				bad = ckpt_commit(o, &net, rank) < 0;
			MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
			if (any) {
				fflush(NULL);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
		}
	}
	if (link) {
		if ((err = moe_gather_experts(&net, link)) != 0) {
			fprintf(stderr, "trainer: rank %d: %s\n", rank,
				ppcc_rt_status_str(err));
			fflush(NULL);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		moe_report(link, replica, rank);
	}
	if (replica == 0)
		mlp_print_params(out_file, &net, owned);
	ppcc_rt_free(rt);
	mlp_stages_free(st);
	mlp_free(&net);
	free(fns);
	free(mine);
	free(all);
	return 0;
}
#endif

static void to_stderr(int rank, const char *line, void *user)
{
	(void)rank;
	(void)user;
	fprintf(stderr, "%s\n", line);
}

int main(int argc, char **argv)
{
	trainer_opts o;
	ppcc_schedule *loaded = NULL;
	const ppcc_schedule *s = &ppcc_plan_schedule;
	int err;

	if (parse(&o, argc, argv) < 0)
		return usage();
	if ((o.experts || o.top_k != 1 || o.expert_parallel != 1) &&
	    (!o.experts || moe_refusal(&o, NULL))) {
		fprintf(stderr, "trainer: --experts: %s\n", o.experts ? moe_refusal(&o, NULL)
				: "--top-k and --expert-parallel need --experts");
		return 2;
	}
#if TRAINER_MPI
	/* only the transports that need it: MPI_Init is not free */
	int mpi = !o.serial && o.transport != PPCC_RT_LOCAL && !o.loopback;
	if (mpi)
		MPI_Init(&argc, &argv);
#endif
	ppcc_rt_options ro = PPCC_RT_OPTIONS_INIT;
	ro.timeout_s = o.timeout_s;
	ro.debug = o.debug;
	ro.grouped = o.grouped;
	ro.diag = to_stderr;
	if (o.schedule) {
		if (ppcc_rt_schedule_load(&loaded, o.schedule, &ro) != 0) {
			err = 1;
			goto out;
		}
		s = loaded;
	}
	out_file = stdout;
	if (o.output && (o.serial || o.transport == PPCC_RT_LOCAL) && !o.loopback &&
	    !(out_file = fopen(o.output, "w"))) {
		fprintf(stderr, "trainer: cannot write %s\n", o.output);
		err = 1;
		goto out;
	}
	const char *no_moe = o.experts ? moe_refusal(&o, s) : NULL;
	if (no_moe || (!o.experts && (o.top_k != 1 || o.expert_parallel != 1))) {
		fprintf(stderr, "trainer: --experts: %s\n",
			no_moe ? no_moe : "--top-k and --expert-parallel need --experts");
		err = 2;
	} else if ((o.save || o.resume) && (o.serial || o.transport == PPCC_RT_NCCL)) {
		fprintf(stderr, "trainer: --save and --resume need the local or "
			"mpi transport\n");
		err = 2;
	} else if (o.serial) {
		err = run_serial(&o, s);
	} else if (o.transport == PPCC_RT_LOCAL && o.data_parallel > 1) {
		err = run_local_dp(&o, s, &ro);
	} else if (o.transport == PPCC_RT_LOCAL) {
		err = run_local(&o, s, &ro);
	} else if (o.transport == PPCC_RT_MPI) {
#if TRAINER_MPI
		err = run_mpi(&o, s, &ro);
#else
		fprintf(stderr, "trainer: built without MPI\n");
		err = 2;
#endif
	} else {
#if TRAINER_CUDA
		mlp_cuda_opts co = {o.steps, o.stats, o.loopback, o.output,
				    o.fault, o.fault_rank, o.data_parallel};
		err = mlp_cuda_train(s, &ro, &co);
#else
		fprintf(stderr, "trainer: nccl needs the trainer_cuda build\n");
		err = 2;
#endif
	}
out:
	if (out_file && out_file != stdout && fclose(out_file) != 0)
		err = 1;
	ppcc_rt_schedule_free(loaded);
#if TRAINER_MPI
	if (mpi)
		MPI_Finalize();
#endif
	return err;
}
