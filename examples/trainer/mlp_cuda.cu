/*
 * mlp_cuda.cu - the stages of mlp.h on the GPU (see mlp_cuda.h).
 *
 * Parameters, gradients, the activations each stage keeps for backward
 * and the data set live in device memory; the runtime's buffers are
 * device memory too.  Every kernel runs on the runtime's compute stream
 * (ppcc_rt_cuda_stream), which the runtime orders against its
 * communication stream, so the callbacks only enqueue work.  Each thread
 * computes one output element with a sequential loop in mlp.c's order.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <mpi.h>

#include "mlp.h"
#include "mlp_cuda.h"

#define CHECK(call)                                                          \
	do {                                                                 \
		cudaError_t e_ = (call);                                     \
		if (e_ != cudaSuccess) {                                     \
			fprintf(stderr, "trainer: %s: %s\n", #call,          \
				cudaGetErrorString(e_));                     \
			return -1;                                           \
		}                                                            \
	} while (0)

enum { VEC = MLP_BATCH * MLP_MAX_WIDTH };

__global__ static void k_forward(const double *w, const double *b,
				 const double *x, double *h, int in, int out,
				 int last)
{
	int t = threadIdx.x, k = t / out, o = t % out;
	if (k >= MLP_BATCH)
		return;
	double z = b[o];
	for (int i = 0; i < in; i++)
		z += w[o * in + i] * x[k * in + i];
	h[k * out + o] = last ? z : tanh(z);
}

/* gz = gh * tanh' (or gh on the last layer), in place into gz. */
__global__ static void k_gz(const double *h, const double *gh, double *gz,
			    int out, int last)
{
	int t = threadIdx.x;
	if (t >= MLP_BATCH * out)
		return;
	double v = h[t];
	gz[t] = gh[t] * (last ? 1 : 1 - v * v);
}

__global__ static void k_grad_w(const double *gz, const double *x, double *gw,
				double *gb, int in, int out)
{
	int t = threadIdx.x, o = t / (in + 1), i = t % (in + 1);
	if (o >= out)
		return;
	double s = 0;
	if (i == in) {
		for (int k = 0; k < MLP_BATCH; k++)
			s += gz[k * out + o];
		gb[o] += s;
		return;
	}
	for (int k = 0; k < MLP_BATCH; k++)
		s += gz[k * out + o] * x[k * in + i];
	gw[o * in + i] += s;
}

__global__ static void k_grad_x(const double *gz, const double *w, double *gx,
				int in, int out)
{
	int t = threadIdx.x, k = t / in, i = t % in;
	if (k >= MLP_BATCH)
		return;
	double s = 0;
	for (int o = 0; o < out; o++)
		s += gz[k * out + o] * w[o * in + i];
	gx[k * in + i] = s;
}

/* The microbatch's loss into *loss and gy, as mlp_loss. */
__global__ static void k_loss(const double *y, const double *t, double *gy,
			      double *loss, int n, int m)
{
	if (threadIdx.x != 0)
		return;
	double s = 0;
	for (int j = 0; j < n; j++) {
		double d = y[j] - t[j];
		s += d * d;
		gy[j] = d / ((double)MLP_BATCH * m);
	}
	*loss = 0.5 * s / MLP_BATCH;
}

__global__ static void k_update(double *p, double *g, int n)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j < n) {
		p[j] -= MLP_LR * g[j];
		g[j] = 0;
	}
}

typedef struct dev_layer {
	double *w, *b, *gw, *gb;
} dev_layer;

typedef struct gpu_run {
	const ppcc_schedule *s;
	cudaStream_t stream;
	int m;
	int m_total; /* microbatches of the global batch (D x m) */
	dev_layer layer[MLP_LAYERS];
	double *x0, *t;        /* the data set: per mb */
	double *h;             /* per (layer, mb) */
	const double **xin;    /* host array of device pointers, per (layer, mb) */
	double *loss;          /* per mb */
	double *scratch;       /* per stage: g, gz, gn */
	int *step;             /* per rank: the step it runs */
	int fault, fault_rank, fault_done;
	double fault_sleep_s;
} gpu_run;

/* The injected fault: the first forward of step 1 on fault_rank. */
static int gpu_fault(gpu_run *g, int stage)
{
	int rank = g->s->stages[stage].rank;
	if (!g->fault || rank != g->fault_rank || g->step[rank] != 1 ||
	    g->fault_done)
		return 0;
	g->fault_done = 1;
	if (g->fault == MLP_FAULT_FAIL) {
		fprintf(stderr, "trainer: injected fault: rank %d's forward of "
			"stage %d fails\n", rank, stage);
		return -1;
	}
	fprintf(stderr, "trainer: injected fault: rank %d's forward of stage %d "
		"sleeps %.3f s\n", rank, stage, g->fault_sleep_s);
	struct timespec ts;
	ts.tv_sec = (time_t)g->fault_sleep_s;
	ts.tv_nsec = (long)((g->fault_sleep_s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	return 0;
}

static double *h_of(gpu_run *g, int l, int mb)
{
	return g->h + ((size_t)l * g->m + mb) * VEC;
}

static int gpu_forward(int stage, int mb, const void *input, size_t in_n,
		       void *output, size_t out_n, void *user)
{
	gpu_run *g = (gpu_run *)user;
	const ppcc_stage_info *si = &g->s->stages[stage];
	const double *x = stage == 0 ? g->x0 + (size_t)mb * VEC
				     : (const double *)input;
	(void)in_n;
	if (gpu_fault(g, stage) < 0)
		return -1;
	for (int l = si->first_layer; l <= si->last_layer; l++) {
		int in = mlp_width[l], out = mlp_width[l + 1];
		g->xin[(size_t)l * g->m + mb] = x;
		k_forward<<<1, MLP_BATCH * out, 0, g->stream>>>(
			g->layer[l].w, g->layer[l].b, x, h_of(g, l, mb), in, out,
			l == MLP_LAYERS - 1);
		x = h_of(g, l, mb);
	}
	if (output) {
		CHECK(cudaMemcpyAsync(output, x, out_n, cudaMemcpyDeviceToDevice,
				      g->stream));
	} else {
		double *sc = g->scratch + (size_t)stage * 3 * VEC;
		k_loss<<<1, 1, 0, g->stream>>>(x, g->t + (size_t)mb * VEC, sc,
					       g->loss + mb,
					       MLP_BATCH * mlp_width[MLP_LAYERS],
					       g->m_total);
	}
	CHECK(cudaGetLastError());
	return 0;
}

static int gpu_backward(int stage, int mb, const void *grad_output,
			size_t go_n, void *grad_input, size_t gi_n, void *user)
{
	gpu_run *g = (gpu_run *)user;
	const ppcc_stage_info *si = &g->s->stages[stage];
	double *gh = g->scratch + (size_t)stage * 3 * VEC;
	double *gz = gh + VEC, *gn = gz + VEC;
	(void)gi_n;
	if (grad_output)
		CHECK(cudaMemcpyAsync(gh, grad_output, go_n,
				      cudaMemcpyDeviceToDevice, g->stream));
	else /* the last stage: gy again, as the CPU stage does */
		k_loss<<<1, 1, 0, g->stream>>>(h_of(g, MLP_LAYERS - 1, mb),
					       g->t + (size_t)mb * VEC, gh,
					       g->loss + mb,
					       MLP_BATCH * mlp_width[MLP_LAYERS],
					       g->m_total);
	for (int l = si->last_layer; l >= si->first_layer; l--) {
		int in = mlp_width[l], out = mlp_width[l + 1];
		const double *x = g->xin[(size_t)l * g->m + mb];
		k_gz<<<1, MLP_BATCH * out, 0, g->stream>>>(h_of(g, l, mb), gh, gz,
							  out, l == MLP_LAYERS - 1);
		k_grad_w<<<1, out * (in + 1), 0, g->stream>>>(
			gz, x, g->layer[l].gw, g->layer[l].gb, in, out);
		double *gx = l > si->first_layer ? gn : (double *)grad_input;
		if (gx)
			k_grad_x<<<1, MLP_BATCH * in, 0, g->stream>>>(
				gz, g->layer[l].w, gx, in, out);
		if (l > si->first_layer)
			CHECK(cudaMemcpyAsync(gh, gn, VEC * sizeof(double),
					      cudaMemcpyDeviceToDevice, g->stream));
	}
	CHECK(cudaGetLastError());
	return 0;
}

/* Every copy and memset is ordered on g->stream, the stream the kernels
 * run on (a pageable cudaMemcpy on the legacy stream may return before
 * the data lands, and a non-blocking stream does not wait for it), then
 * the stream is synchronised before the host buffer goes. */
static int gpu_setup(gpu_run *g, const mlp *net)
{
	int m = g->m;
	double *host = (double *)calloc((size_t)m * VEC * 2, sizeof(double));
	if (!host)
		return -1;
	for (int l = 0; l < MLP_LAYERS; l++) {
		size_t nw = (size_t)mlp_width[l] * mlp_width[l + 1];
		size_t nb = (size_t)mlp_width[l + 1];
		dev_layer *d = &g->layer[l];
		CHECK(cudaMalloc((void **)&d->w, nw * sizeof(double)));
		CHECK(cudaMalloc((void **)&d->b, nb * sizeof(double)));
		CHECK(cudaMalloc((void **)&d->gw, nw * sizeof(double)));
		CHECK(cudaMalloc((void **)&d->gb, nb * sizeof(double)));
		CHECK(cudaMemcpyAsync(d->w, net->layer[l].w, nw * sizeof(double),
				      cudaMemcpyHostToDevice, g->stream));
		CHECK(cudaMemcpyAsync(d->b, net->layer[l].b, nb * sizeof(double),
				      cudaMemcpyHostToDevice, g->stream));
		CHECK(cudaMemsetAsync(d->gw, 0, nw * sizeof(double), g->stream));
		CHECK(cudaMemsetAsync(d->gb, 0, nb * sizeof(double), g->stream));
	}
	for (int mb = 0; mb < m; mb++)
		mlp_sample(net, mb, host + (size_t)mb * VEC,
			   host + (size_t)(m + mb) * VEC);
	CHECK(cudaMalloc((void **)&g->x0, (size_t)m * VEC * sizeof(double)));
	CHECK(cudaMalloc((void **)&g->t, (size_t)m * VEC * sizeof(double)));
	CHECK(cudaMemcpyAsync(g->x0, host, (size_t)m * VEC * sizeof(double),
			      cudaMemcpyHostToDevice, g->stream));
	CHECK(cudaMemcpyAsync(g->t, host + (size_t)m * VEC,
			      (size_t)m * VEC * sizeof(double),
			      cudaMemcpyHostToDevice, g->stream));
	CHECK(cudaStreamSynchronize(g->stream));
	free(host);
	CHECK(cudaMalloc((void **)&g->h,
			 (size_t)MLP_LAYERS * m * VEC * sizeof(double)));
	CHECK(cudaMalloc((void **)&g->loss, (size_t)m * sizeof(double)));
	CHECK(cudaMalloc((void **)&g->scratch,
			 (size_t)g->s->n_stages * 3 * VEC * sizeof(double)));
	g->xin = (const double **)calloc((size_t)MLP_LAYERS * m, sizeof *g->xin);
	g->step = (int *)calloc((size_t)g->s->n_ranks, sizeof *g->step);
	return g->xin && g->step ? 0 : -1;
}

static void gpu_free(gpu_run *g)
{
	for (int l = 0; l < MLP_LAYERS; l++) {
		cudaFree(g->layer[l].w);
		cudaFree(g->layer[l].b);
		cudaFree(g->layer[l].gw);
		cudaFree(g->layer[l].gb);
	}
	cudaFree(g->x0);
	cudaFree(g->t);
	cudaFree(g->h);
	cudaFree(g->loss);
	cudaFree(g->scratch);
	free(g->xin);
	free(g->step);
}

static int gpu_update(gpu_run *g, int l)
{
	int nw = mlp_width[l] * mlp_width[l + 1], nb = mlp_width[l + 1];
	k_update<<<(nw + 127) / 128, 128, 0, g->stream>>>(g->layer[l].w,
							   g->layer[l].gw, nw);
	k_update<<<1, 128, 0, g->stream>>>(g->layer[l].b, g->layer[l].gb, nb);
	CHECK(cudaGetLastError());
	return 0;
}

static int gpu_fetch(gpu_run *g, mlp *net, int l)
{
	size_t nw = (size_t)mlp_width[l] * mlp_width[l + 1];
	CHECK(cudaMemcpyAsync(net->layer[l].w, g->layer[l].w, nw * sizeof(double),
			      cudaMemcpyDeviceToHost, g->stream));
	CHECK(cudaMemcpyAsync(net->layer[l].b, g->layer[l].b,
			      (size_t)mlp_width[l + 1] * sizeof(double),
			      cudaMemcpyDeviceToHost, g->stream));
	CHECK(cudaStreamSynchronize(g->stream));
	return 0;
}

/* The mean loss of the step just run, read on the stream that wrote it. */
static int gpu_loss(gpu_run *g, double *loss, double *out)
{
	CHECK(cudaMemcpyAsync(loss, g->loss, (size_t)g->m * sizeof *loss,
			      cudaMemcpyDeviceToHost, g->stream));
	CHECK(cudaStreamSynchronize(g->stream));
	double sum = 0;
	for (int mb = 0; mb < g->m; mb++)
		sum += loss[mb];
	*out = sum / g->m;
	return 0;
}

static void gpu_stats(const ppcc_rt_stats *st, int step)
{
	fprintf(stderr, "step %d rank %d: %.3f ms, busy %.3f ms, waiting %.3f ms, "
		"%llu messages (%llu bytes) in\n", step, st->rank, st->step_s * 1e3,
		st->busy_s * 1e3, st->wait_s * 1e3,
		(unsigned long long)st->messages_received,
		(unsigned long long)st->bytes_received);
}

static void gpu_fns(gpu_run *g, ppcc_rt_stage_fns *fns)
{
	for (int k = 0; k < g->s->n_stages; k++) {
		fns[k].forward = gpu_forward;
		fns[k].backward = gpu_backward;
		fns[k].user = g;
	}
}

/* ---- one process per rank, under mpirun --------------------------------- */

/* Registers the device gradients of rank's stages as buckets, as the CPU
 * trainer does: w then b, layer by layer, bucket 2*(l - first) and
 * 2*(l - first) + 1, and the layers' device parameters as the same
 * buckets' (what a ZeRO schedule's gathers gather). */
static int gpu_register_grads(ppcc_rt *rt, gpu_run *g, int rank)
{
	const ppcc_schedule *s = g->s;
	int err = 0;
	for (int st = 0; st < s->n_stages && err == 0; st++) {
		const ppcc_stage_info *si = &s->stages[st];
		if (si->rank != rank)
			continue;
		for (int l = si->first_layer; l <= si->last_layer && err == 0; l++) {
			int b = 2 * (l - si->first_layer);
			size_t nw = (size_t)mlp_width[l] * mlp_width[l + 1];
			size_t nb = (size_t)mlp_width[l + 1];
			if ((err = ppcc_rt_grad_register(rt, st, b, g->layer[l].gw,
							 nw)) == 0 &&
			    (err = ppcc_rt_grad_register(rt, st, b + 1,
							 g->layer[l].gb, nb)) == 0 &&
			    (err = ppcc_rt_param_register(rt, st, b, g->layer[l].w,
							  nw)) == 0)
				err = ppcc_rt_param_register(rt, st, b + 1,
							     g->layer[l].b, nb);
		}
	}
	return err;
}

/* The optimizer step of rank's layers under data parallelism, as the
 * CPU trainer's: each bucket's shard this replica owns (the whole bucket
 * unless the schedule reduce-scatters), every gradient zeroed.
 * *out_sharded: whether it reduce-scatters. */
static int gpu_update_shards(ppcc_rt *rt, gpu_run *g, int rank, int *out_sharded)
{
	const ppcc_schedule *s = g->s;
	*out_sharded = 0;
	for (int st = 0; st < s->n_stages; st++) {
		const ppcc_stage_info *si = &s->stages[st];
		if (si->rank != rank)
			continue;
		for (int l = si->first_layer; l <= si->last_layer; l++) {
			int b = 2 * (l - si->first_layer);
			ppcc_rt_shard w = {PPCC_RT_SHARD_VERSION, 0, 0, 0, 0, 0, 0};
			ppcc_rt_shard bias = w;
			if (ppcc_rt_dp_shard(&w, rt, st, b) != 0 ||
			    ppcc_rt_dp_shard(&bias, rt, st, b + 1) != 0)
				return -1;
			*out_sharded |= w.sharded;
			dev_layer *y = &g->layer[l];
			if (w.count > 0)
				k_update<<<((int)w.count + 127) / 128, 128, 0, g->stream>>>(
					y->w + w.offset, y->gw + w.offset, (int)w.count);
			if (bias.count > 0)
				k_update<<<1, 128, 0, g->stream>>>(
					y->b + bias.offset, y->gb + bias.offset,
					(int)bias.count);
			CHECK(cudaGetLastError());
			CHECK(cudaMemsetAsync(y->gw, 0, w.bucket_count * sizeof(double),
					      g->stream));
			CHECK(cudaMemsetAsync(y->gb, 0, bias.bucket_count * sizeof(double),
					      g->stream));
		}
	}
	return 0;
}

/* Whether the schedule gathers the parameters itself: the prologue of
 * ZeRO 1 and 2, or ZeRO-3's gathers before each compute. */
static int gpu_schedule_gathers(const ppcc_schedule *s)
{
	for (int r = 0; r < s->n_ranks; r++)
		for (int i = 0; i < s->ranks[r].n_actions; i++)
			if (s->ranks[r].actions[i].op == PPCC_OP_ALL_GATHER_PARAM ||
			    s->ranks[r].actions[i].op == PPCC_OP_UNSHARD_PARAM)
				return 1;
	return 0;
}

/* With o->data_parallel D > 1 the world is p x D processes, world rank
 * w pipeline rank w / D of replica w % D (the runtime's rule); replica r
 * trains on microbatches r*m .. r*m+m-1 of the global batch, the runtime
 * sums the device gradients (ncclAllReduce), and replica 0 writes: the
 * step's loss adds the D*m microbatch losses, gathered from the
 * replicas' last stages, in global order, as the CPU trainer does.
 * Under ZeRO (REDUCE_SCATTER_GRAD) each replica updates its own shards
 * and the schedule's gathers bring the others' (ALL_GATHER_PARAM,
 * UNSHARD_PARAM), the last step's gathered once more before the weights
 * are written. */
static int train_mpi(const ppcc_schedule *s, ppcc_rt_options *ro,
		     const mlp_cuda_opts *o, gpu_run *g, mlp *net)
{
	ppcc_rt *rt = NULL;
	ppcc_rt_stage_fns *fns = NULL;
	FILE *out = stdout;
	int owned[MLP_LAYERS] = {0};
	int err, D = o->data_parallel > 1 ? o->data_parallel : 1, world = 0;

	MPI_Comm_rank(MPI_COMM_WORLD, &world);
	int replica = world % D;
	if (D > 1)
		ro->data_parallel = D;
	if ((err = ppcc_rt_init(&rt, s, -1, ro)) != 0) {
		fprintf(stderr, "trainer: %s\n", ppcc_rt_status_str(err));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	int rank = ppcc_rt_rank(rt);
	g->stream = (cudaStream_t)ppcc_rt_cuda_stream(rt);
	fns = (ppcc_rt_stage_fns *)calloc((size_t)s->n_stages, sizeof *fns);
	if (!fns || mlp_init(net, g->m) < 0) {
		fprintf(stderr, "trainer: cannot set up the GPU model\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	net->mb0 = replica * g->m;
	net->m_total = D * g->m;
	g->m_total = D * g->m;
	if (gpu_setup(g, net) < 0) {
		fprintf(stderr, "trainer: cannot set up the GPU model\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (D > 1 && (err = gpu_register_grads(rt, g, rank)) != 0) {
		fprintf(stderr, "trainer: %s\n", ppcc_rt_status_str(err));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	gpu_fns(g, fns);
	for (int k = 0; k < s->n_stages; k++)
		if (s->stages[k].rank == rank)
			for (int l = s->stages[k].first_layer;
			     l <= s->stages[k].last_layer; l++)
				owned[l] = 1;
	if (replica != 0)
		out = NULL; /* replica 0 writes for all */
	if (o->output && replica == 0) {
		char path[4096];
		snprintf(path, sizeof path, "%s.%d", o->output, rank);
		if (!(out = fopen(path, "w"))) {
			fprintf(stderr, "trainer: cannot write %s\n", path);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	int last_rank = s->stages[s->n_stages - 1].rank;
	double *loss = (double *)calloc((size_t)g->m, sizeof *loss);
	double *all = (double *)calloc((size_t)(D * g->m) * (size_t)s->n_ranks,
				       sizeof *all);
	if (!loss || !all)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int step = 0; step < o->steps; step++) {
		ppcc_rt_stats st = PPCC_RT_STATS_INIT;
		g->step[rank] = step;
		if ((err = ppcc_rt_step(&st, rt, fns)) != 0) {
			fprintf(stderr, "trainer: rank %d step %d: %s\n", rank, step,
				ppcc_rt_status_str(err));
			fflush(NULL);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		if (o->stats)
			gpu_stats(&st, step);
		if (o->stats && D > 1) {
			double red, wait;
			ppcc_rt_dp_stats(rt, &red, &wait);
			fprintf(stderr, "step %d replica %d rank %d: reductions "
				"%.3f ms, %.3f ms of it waited for\n", step, replica,
				rank, red * 1e3, wait * 1e3);
		}
		double mean = 0;
		if (rank == last_rank && gpu_loss(g, loss, &mean) < 0)
			MPI_Abort(MPI_COMM_WORLD, 1);
		if (D > 1) {
			/* every process sends m losses (zeros off the last
			 * stage); world rank w's land at all[w * m] */
			if (rank != last_rank)
				memset(loss, 0, (size_t)g->m * sizeof *loss);
			MPI_Gather(loss, g->m, MPI_DOUBLE, all, g->m, MPI_DOUBLE, 0,
				   MPI_COMM_WORLD);
			if (world == 0) {
				double sum = 0;
				for (int r = 0; r < D; r++)
					for (int mb = 0; mb < g->m; mb++)
						sum += all[(size_t)(last_rank * D + r) *
								   (size_t)g->m +
							   (size_t)mb];
				mean = sum / (D * g->m);
				fprintf(out, "loss %d %a %.17g\n", step, mean, mean);
			}
		} else if (rank == last_rank) {
			fprintf(out, "loss %d %a %.17g\n", step, mean, mean);
		}
		if (D > 1) {
			int sharded = 0;
			if (gpu_update_shards(rt, g, rank, &sharded) < 0)
				MPI_Abort(MPI_COMM_WORLD, 1);
			if (sharded && (step + 1 == o->steps || !gpu_schedule_gathers(s)) &&
			    (err = ppcc_rt_dp_gather_params(rt)) != 0) {
				fprintf(stderr, "trainer: rank %d step %d: %s\n", rank,
					step, ppcc_rt_status_str(err));
				fflush(NULL);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
			continue;
		}
		for (int l = 0; l < MLP_LAYERS; l++)
			if (owned[l] && gpu_update(g, l) < 0)
				MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int l = 0; l < MLP_LAYERS; l++)
		if (owned[l] && gpu_fetch(g, net, l) < 0)
			MPI_Abort(MPI_COMM_WORLD, 1);
	if (out)
		mlp_print_params(out, net, owned);
	if (out && out != stdout)
		fclose(out);
	free(loss);
	free(all);
	free(fns);
	gpu_free(g);
	ppcc_rt_free(rt);
	return 0;
}

/* ---- loopback: every rank a thread, one GPU ------------------------------- */

typedef struct loop_shared {
	const ppcc_schedule *s;
	const mlp_cuda_opts *o;
	ppcc_rt_options ro;
	gpu_run *g;
	mlp *net;
	ppcc_rt_stage_fns *fns;
	pthread_barrier_t bar;
	pthread_mutex_t mu;
	int failed;  /* a rank's init or step failed (under mu) */
	FILE *out;
	double *loss;
} loop_shared;

typedef struct loop_rank {
	pthread_t th;
	loop_shared *sh;
	int rank;
	int status;
} loop_rank;

static void loop_fail(loop_shared *sh)
{
	pthread_mutex_lock(&sh->mu);
	sh->failed = 1;
	pthread_mutex_unlock(&sh->mu);
}

static int loop_failed(loop_shared *sh)
{
	pthread_mutex_lock(&sh->mu);
	int f = sh->failed;
	pthread_mutex_unlock(&sh->mu);
	return f;
}

/* Every rank reaches every barrier, failed or not: a failure is seen by
 * all after the barrier that follows it. */
static void *loop_rank_main(void *arg)
{
	loop_rank *k = (loop_rank *)arg;
	loop_shared *sh = k->sh;
	const ppcc_schedule *s = sh->s;
	gpu_run *g = sh->g;
	ppcc_rt *rt = NULL;
	ppcc_rt_options ro = sh->ro;
	int r = k->rank;

	if ((k->status = ppcc_rt_init(&rt, s, r, &ro)) != 0) {
		fprintf(stderr, "trainer: rank %d: %s\n", r,
			ppcc_rt_status_str(k->status));
		loop_fail(sh);
	}
	pthread_barrier_wait(&sh->bar);
	if (r == 0 && !loop_failed(sh)) {
		g->stream = (cudaStream_t)ppcc_rt_cuda_stream(rt);
		if (gpu_setup(g, sh->net) < 0) {
			fprintf(stderr, "trainer: cannot set up the GPU model\n");
			loop_fail(sh);
		}
	}
	pthread_barrier_wait(&sh->bar);
	int last_rank = s->stages[s->n_stages - 1].rank;
	for (int step = 0; step < sh->o->steps && !loop_failed(sh); step++) {
		ppcc_rt_stats st = PPCC_RT_STATS_INIT;
		g->step[r] = step;
		if ((k->status = ppcc_rt_step(&st, rt, sh->fns)) != 0) {
			fprintf(stderr, "trainer: rank %d step %d: %s\n", r, step,
				ppcc_rt_status_str(k->status));
			loop_fail(sh);
		} else if (sh->o->stats) {
			gpu_stats(&st, step);
		}
		pthread_barrier_wait(&sh->bar);
		if (loop_failed(sh))
			break;
		if (r == last_rank) {
			double mean;
			if (gpu_loss(g, sh->loss, &mean) < 0)
				loop_fail(sh);
			else
				fprintf(sh->out, "loss %d %a %.17g\n", step, mean, mean);
		}
		for (int j = 0; j < s->n_stages; j++)
			if (s->stages[j].rank == r)
				for (int l = s->stages[j].first_layer;
				     l <= s->stages[j].last_layer; l++)
					if (gpu_update(g, l) < 0)
						loop_fail(sh);
		pthread_barrier_wait(&sh->bar);
	}
	if (r == 0) {
		if (!loop_failed(sh)) {
			for (int l = 0; l < MLP_LAYERS; l++)
				if (gpu_fetch(g, sh->net, l) < 0)
					loop_fail(sh);
			if (!loop_failed(sh))
				mlp_print_params(sh->out, sh->net, NULL);
		}
		gpu_free(g);
	}
	/* the shared stream lives until the last rank is freed */
	pthread_barrier_wait(&sh->bar);
	ppcc_rt_free(rt);
	return NULL;
}

static int train_loopback(const ppcc_schedule *s, ppcc_rt_options *ro,
			  const mlp_cuda_opts *o, gpu_run *g, mlp *net)
{
	ppcc_rt_local_world *w = NULL;
	loop_shared sh;
	int p = s->n_ranks, started = 0, err = 0;
	memset(&sh, 0, sizeof sh);
	sh.s = s;
	sh.o = o;
	sh.g = g;
	sh.net = net;
	sh.out = stdout;
	loop_rank *ranks = (loop_rank *)calloc((size_t)p, sizeof *ranks);
	sh.fns = (ppcc_rt_stage_fns *)calloc((size_t)s->n_stages, sizeof *sh.fns);
	sh.loss = (double *)calloc((size_t)g->m, sizeof *sh.loss);
	if (!ranks || !sh.fns || !sh.loss || mlp_init(net, g->m) < 0 ||
	    ppcc_rt_local_world_new(&w, p) != 0) {
		fprintf(stderr, "trainer: out of memory\n");
		free(ranks);
		free(sh.fns);
		free(sh.loss);
		return 1;
	}
	if (o->output && !(sh.out = fopen(o->output, "w"))) {
		fprintf(stderr, "trainer: cannot write %s\n", o->output);
		err = 1;
		goto out;
	}
	gpu_fns(g, sh.fns);
	sh.ro = *ro;
	sh.ro.world = w;
	pthread_barrier_init(&sh.bar, NULL, (unsigned)p);
	pthread_mutex_init(&sh.mu, NULL);
	for (; started < p; started++) {
		ranks[started].sh = &sh;
		ranks[started].rank = started;
		if (pthread_create(&ranks[started].th, NULL, loop_rank_main,
				   &ranks[started]) != 0)
			break;
	}
	if (started < p) {
		/* the started ones wait at a barrier for ever: nothing to join */
		fprintf(stderr, "trainer: cannot start rank %d's thread\n", started);
		fflush(NULL);
		_exit(1);
	}
	for (int r = 0; r < p; r++)
		pthread_join(ranks[r].th, NULL);
	err = sh.failed ? 1 : 0;
	pthread_barrier_destroy(&sh.bar);
	pthread_mutex_destroy(&sh.mu);
out:
	if (sh.out != stdout && fclose(sh.out) != 0)
		err = 1;
	ppcc_rt_local_world_free(w);
	free(ranks);
	free(sh.fns);
	free(sh.loss);
	return err;
}

extern "C" int mlp_cuda_train(const ppcc_schedule *s, ppcc_rt_options *ro,
			      const mlp_cuda_opts *o)
{
	mlp net;
	gpu_run g;
	int err;

	memset(&g, 0, sizeof g);
	memset(&net, 0, sizeof net);
	g.s = s;
	g.m = s->n_microbatches;
	g.m_total = g.m;
	g.fault = o->fault;
	g.fault_rank = o->fault_rank;
	g.fault_sleep_s = 1.5 * (ro->timeout_s > 0 ? ro->timeout_s : 300);
	ro->transport = PPCC_RT_NCCL;
	err = o->loopback ? train_loopback(s, ro, o, &g, &net)
			  : train_mpi(s, ro, o, &g, &net);
	mlp_free(&net);
	return err;
}
