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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	dev_layer layer[MLP_LAYERS];
	double *x0, *t;        /* the data set: per mb */
	double *h;             /* per (layer, mb) */
	const double **xin;    /* host array of device pointers, per (layer, mb) */
	double *loss;          /* per mb */
	double *scratch;       /* per stage: g, gz, gn */
} gpu_run;

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
					       MLP_BATCH * mlp_width[MLP_LAYERS], g->m);
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
					       MLP_BATCH * mlp_width[MLP_LAYERS], g->m);
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
		CHECK(cudaMemcpy(d->w, net->layer[l].w, nw * sizeof(double),
				 cudaMemcpyHostToDevice));
		CHECK(cudaMemcpy(d->b, net->layer[l].b, nb * sizeof(double),
				 cudaMemcpyHostToDevice));
		CHECK(cudaMemset(d->gw, 0, nw * sizeof(double)));
		CHECK(cudaMemset(d->gb, 0, nb * sizeof(double)));
	}
	for (int mb = 0; mb < m; mb++)
		mlp_sample(net, mb, host + (size_t)mb * VEC,
			   host + (size_t)(m + mb) * VEC);
	CHECK(cudaMalloc((void **)&g->x0, (size_t)m * VEC * sizeof(double)));
	CHECK(cudaMalloc((void **)&g->t, (size_t)m * VEC * sizeof(double)));
	CHECK(cudaMemcpy(g->x0, host, (size_t)m * VEC * sizeof(double),
			 cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(g->t, host + (size_t)m * VEC,
			 (size_t)m * VEC * sizeof(double), cudaMemcpyHostToDevice));
	free(host);
	CHECK(cudaMalloc((void **)&g->h,
			 (size_t)MLP_LAYERS * m * VEC * sizeof(double)));
	CHECK(cudaMalloc((void **)&g->loss, (size_t)m * sizeof(double)));
	CHECK(cudaMalloc((void **)&g->scratch,
			 (size_t)g->s->n_stages * 3 * VEC * sizeof(double)));
	g->xin = (const double **)calloc((size_t)MLP_LAYERS * m, sizeof *g->xin);
	return g->xin ? 0 : -1;
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
	CHECK(cudaMemcpy(net->layer[l].w, g->layer[l].w, nw * sizeof(double),
			 cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy(net->layer[l].b, g->layer[l].b,
			 (size_t)mlp_width[l + 1] * sizeof(double),
			 cudaMemcpyDeviceToHost));
	return 0;
}

extern "C" int mlp_cuda_train(const ppcc_schedule *s, int steps,
			      ppcc_rt_options *ro, int stats, const char *output)
{
	mlp net;
	gpu_run g;
	ppcc_rt *rt = NULL;
	ppcc_rt_stage_fns *fns = NULL;
	FILE *out = stdout;
	int owned[MLP_LAYERS] = {0};
	int err;

	memset(&g, 0, sizeof g);
	ro->transport = PPCC_RT_NCCL;
	if ((err = ppcc_rt_init(&rt, s, -1, ro)) != 0) {
		fprintf(stderr, "trainer: %s\n", ppcc_rt_status_str(err));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	int rank = ppcc_rt_rank(rt);
	g.s = s;
	g.m = s->n_microbatches;
	g.stream = (cudaStream_t)ppcc_rt_cuda_stream(rt);
	fns = (ppcc_rt_stage_fns *)calloc((size_t)s->n_stages, sizeof *fns);
	if (!fns || mlp_init(&net, g.m) < 0 || gpu_setup(&g, &net) < 0) {
		fprintf(stderr, "trainer: cannot set up the GPU model\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int k = 0; k < s->n_stages; k++) {
		fns[k].forward = gpu_forward;
		fns[k].backward = gpu_backward;
		fns[k].user = &g;
		if (s->stages[k].rank == rank)
			for (int l = s->stages[k].first_layer;
			     l <= s->stages[k].last_layer; l++)
				owned[l] = 1;
	}
	if (output) {
		char path[4096];
		snprintf(path, sizeof path, "%s.%d", output, rank);
		if (!(out = fopen(path, "w"))) {
			fprintf(stderr, "trainer: cannot write %s\n", path);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	int last_rank = s->stages[s->n_stages - 1].rank;
	double *loss = (double *)calloc((size_t)g.m, sizeof *loss);
	for (int step = 0; step < steps; step++) {
		ppcc_rt_stats st;
		if ((err = ppcc_rt_step(&st, rt, fns)) != 0) {
			fprintf(stderr, "trainer: rank %d step %d: %s\n", rank, step,
				ppcc_rt_status_str(err));
			fflush(NULL);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		if (stats)
			fprintf(stderr, "step %d rank %d: %.3f ms, busy %.3f ms, "
				"waiting %.3f ms\n", step, rank, st.step_s * 1e3,
				st.busy_s * 1e3, st.wait_s * 1e3);
		if (rank == last_rank) {
			if (cudaStreamSynchronize(g.stream) != cudaSuccess ||
			    cudaMemcpy(loss, g.loss, (size_t)g.m * sizeof *loss,
				       cudaMemcpyDeviceToHost) != cudaSuccess)
				MPI_Abort(MPI_COMM_WORLD, 1);
			double sum = 0;
			for (int mb = 0; mb < g.m; mb++)
				sum += loss[mb];
			fprintf(out, "loss %d %a %.17g\n", step, sum / g.m, sum / g.m);
		}
		for (int l = 0; l < MLP_LAYERS; l++)
			if (owned[l] && gpu_update(&g, l) < 0)
				MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (cudaStreamSynchronize(g.stream) != cudaSuccess)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int l = 0; l < MLP_LAYERS; l++)
		if (owned[l] && gpu_fetch(&g, &net, l) < 0)
			MPI_Abort(MPI_COMM_WORLD, 1);
	mlp_print_params(out, &net, owned);
	if (out != stdout)
		fclose(out);
	free(loss);
	free(fns);
	gpu_free(&g);
	mlp_free(&net);
	ppcc_rt_free(rt);
	return 0;
}
