/*
 * gemm.c - measures one GPU's matrix-multiply rate by shape and precision,
 * and its memory bandwidth, for the cost model's device constants.
 *
 *   gemm [--quick] > figures.tsv
 *
 * Every GEMM is D = A x B through cuBLASLt, A m x k, B k x n, D m x n,
 * in the layout Transformer Engine and PyTorch use for a linear layer
 * (A row-major tokens x features, so cuBLAS sees the transposed
 * problem), accumulating in FP32:
 *   bf16  A, B and D in BF16;
 *   fp8   A and B in FP8 E4M3 (scales 1), D in BF16 (the "TN" layout
 *         Hopper's FP8 kernels require).
 * The inputs are random, finite in both precisions (constant data runs
 * faster than a trained layer's).
 * Each shape is run 3 times untimed, then timed over 20 back-to-back
 * launches with CUDA events, three times; the best of the three is
 * printed (the GPU's sustained rate, not one launch's latency).
 * The shapes: squares from 256 to 16384, and the linear layers of
 * Llama 3 8B and 70B (QKV, attention output, FFN in, FFN out) at 4,096
 * to 16,384 tokens, sliced by tensor parallelism t = 1, 2, 4, 8.
 * Memory: cudaMemcpy device to device of 2 GiB, bytes read plus written
 * over time.
 *
 * Output: TSV on stdout, a header line of column names first; lines
 * starting with '#' describe the device and the library.  Exit status:
 * 0, or 1 when CUDA or cuBLAS fails (the message on stderr).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cuda_runtime.h>

#define CU(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "gemm: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, \
		cudaGetErrorString(e_)); exit(1); } } while (0)
#define LT(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { \
	fprintf(stderr, "gemm: %s:%d: %s: cuBLAS status %d\n", __FILE__, \
		__LINE__, #x, (int)s_); exit(1); } } while (0)

enum { WARM = 3, TIMED = 20, TRIES = 3 };
static const size_t WORKSPACE = (size_t)64 << 20;

typedef struct gemm_ctx {
	cublasLtHandle_t lt;
	void *a, *b, *d, *work;
	size_t cap;  /* bytes of each of a, b, d */
	cudaStream_t stream;
	cudaEvent_t t0, t1;
} gemm_ctx;

/* Best time of one launch in ms, or a negative value when cuBLASLt has no
 * kernel for the shape (printed as such, not fatal). */
static double time_gemm(gemm_ctx *g, int fp8, long m, long n, long k)
{
	cudaDataType_t in = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
	size_t esz = fp8 ? 1 : 2;
	if ((size_t)m * k * esz > g->cap || (size_t)k * n * esz > g->cap ||
	    (size_t)m * n * 2 > g->cap)
		return -1;
	/* Column-major cuBLAS view of row-major D (m x n) = A (m x k) B (k x n)
	 * with the weight stored as n x k (a linear layer's out x in):
	 * D^T (n x m) = W (n x k) . A^T (k x m), W transposed ("T"), A^T
	 * not ("N"): the TN layout. */
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t lw, la, ld;
	cublasOperation_t tr = CUBLAS_OP_T, nt = CUBLAS_OP_N;
	LT(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &tr, sizeof tr));
	LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof nt));
	LT(cublasLtMatrixLayoutCreate(&lw, in, (uint64_t)k, (uint64_t)n, k));
	LT(cublasLtMatrixLayoutCreate(&la, in, (uint64_t)k, (uint64_t)m, k));
	LT(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, (uint64_t)n, (uint64_t)m, n));
	cublasLtMatmulPreference_t pref;
	LT(cublasLtMatmulPreferenceCreate(&pref));
	LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
						&WORKSPACE, sizeof WORKSPACE));
	cublasLtMatmulHeuristicResult_t h;
	int found = 0;
	double best = -1;
	if (cublasLtMatmulAlgoGetHeuristic(g->lt, op, lw, la, ld, ld, pref, 1, &h,
					   &found) == CUBLAS_STATUS_SUCCESS && found > 0) {
		float one = 1.0f, zero = 0.0f;
		for (int t = 0; t < TRIES; t++) {
			for (int i = 0; i < (t == 0 ? WARM : 0); i++)
				LT(cublasLtMatmul(g->lt, op, &one, g->b, lw, g->a, la, &zero,
						  g->d, ld, g->d, ld, &h.algo, g->work,
						  WORKSPACE, g->stream));
			CU(cudaEventRecord(g->t0, g->stream));
			for (int i = 0; i < TIMED; i++)
				LT(cublasLtMatmul(g->lt, op, &one, g->b, lw, g->a, la, &zero,
						  g->d, ld, g->d, ld, &h.algo, g->work,
						  WORKSPACE, g->stream));
			CU(cudaEventRecord(g->t1, g->stream));
			CU(cudaEventSynchronize(g->t1));
			float ms;
			CU(cudaEventElapsedTime(&ms, g->t0, g->t1));
			double one_ms = ms / TIMED;
			if (best < 0 || one_ms < best)
				best = one_ms;
		}
	}
	cublasLtMatmulPreferenceDestroy(pref);
	cublasLtMatrixLayoutDestroy(lw);
	cublasLtMatrixLayoutDestroy(la);
	cublasLtMatrixLayoutDestroy(ld);
	cublasLtMatmulDescDestroy(op);
	return best;
}

static void row(gemm_ctx *g, const char *what, long m, long n, long k)
{
	for (int fp8 = 0; fp8 <= 1; fp8++) {
		double ms = time_gemm(g, fp8, m, n, k);
		double tf = ms > 0 ? 2.0 * m * n * k / (ms * 1e-3) / 1e12 : 0;
		printf("%s\t%s\t%ld\t%ld\t%ld\t%.5f\t%.1f\n", fp8 ? "fp8" : "bf16",
		       what, m, n, k, ms, tf);
		fflush(stdout);
	}
}

int main(int argc, char **argv)
{
	int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	gemm_ctx g = {0};
	struct cudaDeviceProp prop;
	int dev = 0, drv = 0, rtv = 0;
	CU(cudaGetDevice(&dev));
	CU(cudaGetDeviceProperties(&prop, dev));
	CU(cudaDriverGetVersion(&drv));
	CU(cudaRuntimeGetVersion(&rtv));
	printf("# device\t%s\n# sm\t%d.%d\t%d SMs\n# memory_bytes\t%zu\n"
	       "# driver\t%d\n# runtime\t%d\n# cublaslt\t%zu\n",
	       prop.name, prop.major, prop.minor, prop.multiProcessorCount,
	       prop.totalGlobalMem, drv, rtv, cublasLtGetVersion());

	g.cap = (size_t)2 << 30;  /* 16384 x 65536 BF16 */
	CU(cudaMalloc(&g.a, g.cap));
	CU(cudaMalloc(&g.b, g.cap));
	CU(cudaMalloc(&g.d, g.cap));
	CU(cudaMalloc(&g.work, WORKSPACE));
	/* random finite values, as a trained layer's: constant or zero
	 * inputs toggle fewer bits, draw less power and run faster (by about
	 * a tenth at 8192^3 on an H200).  Every byte is s0111mmm, random sign
	 * and mantissa bits from one xorshift: an E4M3 in [1, 2) of either
	 * sign, and, read in pairs, a BF16 between 2^-16 and 2 of either
	 * sign, so both precisions read moderate finite numbers. */
	{
		size_t n = g.cap;
		unsigned char *h = malloc(n);
		if (!h) {
			fprintf(stderr, "gemm: out of host memory\n");
			return 1;
		}
		uint64_t x = 0x9e3779b97f4a7c15ull;
		for (size_t i = 0; i + 8 <= n; i += 8) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			uint64_t y = (x & 0x8787878787878787ull) | 0x3838383838383838ull;
			memcpy(h + i, &y, 8);
		}
		CU(cudaMemcpy(g.a, h, n, cudaMemcpyHostToDevice));
		CU(cudaMemcpy(g.b, h + n / 2, n / 2, cudaMemcpyHostToDevice));
		CU(cudaMemcpy((char *)g.b + n / 2, h, n / 2, cudaMemcpyHostToDevice));
		free(h);
	}
	CU(cudaStreamCreate(&g.stream));
	CU(cudaEventCreate(&g.t0));
	CU(cudaEventCreate(&g.t1));
	LT(cublasLtCreate(&g.lt));

	/* HBM: a device-to-device copy reads and writes every byte */
	{
		size_t bytes = g.cap;
		float best = 0;
		for (int t = 0; t < 5; t++) {
			CU(cudaEventRecord(g.t0, g.stream));
			CU(cudaMemcpyAsync(g.d, g.a, bytes, cudaMemcpyDeviceToDevice, g.stream));
			CU(cudaEventRecord(g.t1, g.stream));
			CU(cudaEventSynchronize(g.t1));
			float ms;
			CU(cudaEventElapsedTime(&ms, g.t0, g.t1));
			if (t > 0 && (best == 0 || ms < best))
				best = ms;
		}
		printf("# hbm_copy_gb_s\t%.1f\t(2 GiB device to device, read + write, best of 4)\n",
		       2.0 * bytes / (best * 1e-3) / 1e9);
	}

	printf("precision\tshape\tm\tn\tk\tms\ttflops\n");
	static const long sq[] = {256, 512, 1024, 2048, 4096, 8192, 16384};
	for (size_t i = 0; i < sizeof sq / sizeof sq[0]; i++)
		if (!quick || sq[i] <= 1024)
			row(&g, "square", sq[i], sq[i], sq[i]);
	/* Llama 3 8B (h 4096, 32 heads, 8 KV heads, f 14336) and 70B (h 8192,
	 * 64 heads, 8 KV heads, f 28672): QKV h -> h + 2 h k / a, output
	 * h -> h, FFN in h -> 2 f (SwiGLU's gate and up), FFN out f -> h; each
	 * output (QKV, FFN in) or input (output, FFN out) split t ways. */
	static const struct { const char *name; long h, kv, f; } model[] = {
		{"llama3-8b", 4096, 1024, 14336},
		{"llama3-70b", 8192, 1024, 28672},
	};
	static const long tokens[] = {4096, 8192, 16384};
	static const long tps[] = {1, 2, 4, 8};
	for (size_t mi = 0; mi < 2; mi++)
		for (size_t ti = 0; ti < (quick ? 1 : 3); ti++)
			for (size_t pi = 0; pi < (quick ? 1 : 4); pi++) {
				long h = model[mi].h, f = model[mi].f, t = tps[pi];
				long m = tokens[ti];
				char name[64];
				snprintf(name, sizeof name, "%s/t%ld/qkv", model[mi].name, t);
				row(&g, name, m, (h + 2 * model[mi].kv) / t, h);
				snprintf(name, sizeof name, "%s/t%ld/proj", model[mi].name, t);
				row(&g, name, m, h, h / t);
				snprintf(name, sizeof name, "%s/t%ld/fc1", model[mi].name, t);
				row(&g, name, m, 2 * f / t, h);
				snprintf(name, sizeof name, "%s/t%ld/fc2", model[mi].name, t);
				row(&g, name, m, h, f / t);
			}
	cublasLtDestroy(g.lt);
	cudaFree(g.a);
	cudaFree(g.b);
	cudaFree(g.d);
	cudaFree(g.work);
	return 0;
}
