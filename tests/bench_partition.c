/*
 * bench_partition.c - how fast ppcc_partition_solve splits large models,
 * next to the plain O(S n^2) dynamic program on the same instances.
 *
 * Instances look like real clusters: several device kinds of different
 * speed, activation sizes that differ from layer to layer, slower links
 * between nodes than inside them, 1F1B stash counts (stage s keeps S - s
 * microbatches) and memory caps that bind.  Prints the machine, then per
 * case the layers, stages, the bottleneck and how much the caps raise it,
 * the best-of-5 wall time of the solver, the plain program's time where it
 * finishes in reasonable time, and their ratio.  Exits 1 when the two
 * disagree on the bottleneck.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ppcc.h"

#define REPEATS 5

typedef struct bench_instance {
	int n, S;
	int64_t *work_rows[3];
	const int64_t **work;
	int64_t **comm_in, **comm_out;
	int64_t *static_prefix, *stash_prefix, *stash_count, *mem_cap;
	ppcc_part_problem pb;
} bench_instance;

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in [lo, hi] */
static double rng_uniform(double lo, double hi)
{
	return lo + (hi - lo) * (double)(rng_next() >> 11) / 9007199254740992.0;
}

static void *bench_alloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p) {
		fprintf(stderr, "bench_partition: out of memory\n");
		exit(1);
	}
	return p;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Device kinds: speed relative to the first. */
static const double kind_speed[3] = {1.0, 0.7, 0.45};

/* comm_scale multiplies every boundary cost: 10 makes links the
 * bottleneck's main part, where dropping them (the solver's relaxation)
 * bounds it least well. */
static void bench_instance_make(bench_instance *x, int n, int S, int kinds,
				double comm_scale, uint64_t seed)
{
	rng_state = seed;
	memset(x, 0, sizeof *x);
	x->n = n;
	x->S = S;
	x->work = bench_alloc((size_t)S, sizeof *x->work);
	x->comm_in = bench_alloc((size_t)S, sizeof *x->comm_in);
	x->comm_out = bench_alloc((size_t)S, sizeof *x->comm_out);
	x->static_prefix = bench_alloc((size_t)n + 1, sizeof(int64_t));
	x->stash_prefix = bench_alloc((size_t)n + 1, sizeof(int64_t));
	x->stash_count = bench_alloc((size_t)S, sizeof(int64_t));
	x->mem_cap = bench_alloc((size_t)S, sizeof(int64_t));

	/* per layer: forward + backward ~1 ms on the fastest device, 2-5x
	 * for a few large layers; activations 8-32 MB; weights and stash */
	double *base_ps = bench_alloc((size_t)n, sizeof(double));
	double *act_bytes = bench_alloc((size_t)n, sizeof(double));
	for (int i = 0; i < n; i++) {
		base_ps[i] = rng_uniform(0.8e9, 1.2e9);
		if (rng_next() % 50 == 0)
			base_ps[i] *= rng_uniform(2, 5);
		act_bytes[i] = rng_uniform(8e6, 32e6);
		x->static_prefix[i + 1] = x->static_prefix[i] +
			(int64_t)rng_uniform(100e6, 300e6);
		x->stash_prefix[i + 1] = x->stash_prefix[i] +
			(int64_t)(act_bytes[i] * rng_uniform(0.05, 0.15));
	}
	for (int k = 0; k < kinds; k++) {
		int64_t *w = x->work_rows[k] = bench_alloc((size_t)n + 1, sizeof(int64_t));
		for (int i = 0; i < n; i++)
			w[i + 1] = w[i] + (int64_t)(base_ps[i] / kind_speed[k] *
						    rng_uniform(0.97, 1.03));
	}
	/* stages in runs of 8 per node; a node's devices are of one kind */
	int64_t total_static = x->static_prefix[n];
	int64_t total_stash = x->stash_prefix[n];
	for (int s = 0; s < S; s++) {
		int kind = (s / 8) % kinds;
		x->work[s] = x->work_rows[kind];
		x->stash_count[s] = S - s;
		/* caps that bind: 15% over what an even share of the layers
		 * needs, while the fastest devices would rather take ~40% more */
		double even = (double)total_static / S +
			      (double)(S - s) * (double)total_stash / S;
		x->mem_cap[s] = (int64_t)(1.15 * even);
		x->comm_in[s] = bench_alloc((size_t)n, sizeof(int64_t));
		x->comm_out[s] = bench_alloc((size_t)n, sizeof(int64_t));
		double in_bw = s % 8 == 0 ? 25e9 : 150e9;    /* bytes / s */
		double out_bw = s % 8 == 7 ? 25e9 : 150e9;
		for (int i = 0; i < n; i++) {
			double in_bytes = i > 0 ? act_bytes[i - 1] : 0;
			x->comm_in[s][i] = (int64_t)(comm_scale * (5e6 + in_bytes / in_bw * 1e12));
			x->comm_out[s][i] = (int64_t)(comm_scale * (5e6 + act_bytes[i] / out_bw * 1e12));
		}
	}
	free(base_ps);
	free(act_bytes);
	x->pb.n_layers = n;
	x->pb.n_stages = S;
	x->pb.work = x->work;
	x->pb.comm_in = (const int64_t *const *)x->comm_in;
	x->pb.comm_out = (const int64_t *const *)x->comm_out;
	x->pb.static_prefix = x->static_prefix;
	x->pb.stash_prefix = x->stash_prefix;
	x->pb.stash_count = x->stash_count;
	x->pb.mem_cap = x->mem_cap;
}

static void bench_instance_free(bench_instance *x)
{
	for (int k = 0; k < 3; k++)
		free(x->work_rows[k]);
	for (int s = 0; s < x->S; s++) {
		free(x->comm_in[s]);
		free(x->comm_out[s]);
	}
	free(x->work);
	free(x->comm_in);
	free(x->comm_out);
	free(x->static_prefix);
	free(x->stash_prefix);
	free(x->stash_count);
	free(x->mem_cap);
}

/* The plain program: f[s][j] = min over i of max(f[s-1][i-1], time(s,i,j))
 * over every start i whose stage fits, O(S n^2).  Bench values are small
 * enough for int64. */
static int plain_dp(int64_t *out_bottleneck, const ppcc_part_problem *pb)
{
	int n = pb->n_layers, S = pb->n_stages;
	const int64_t none = INT64_MAX;
	int64_t *f = bench_alloc((size_t)S * (size_t)n, sizeof(int64_t));
	for (size_t k = 0; k < (size_t)S * (size_t)n; k++)
		f[k] = none;
	for (int s = 0; s < S; s++) {
		const int64_t *w = pb->work[s];
		int64_t *row = f + (size_t)s * (size_t)n;
		const int64_t *prev = row - n;
		for (int j = s; j <= n - S + s; j++) {
			int64_t out = s < S - 1 ? pb->comm_out[s][j] : 0;
			int64_t best = none;
			for (int i = s == 0 ? 0 : j; i >= (s == 0 ? 0 : s); i--) {
				int64_t mem = pb->static_prefix[j + 1] - pb->static_prefix[i] +
					pb->stash_count[s] * (pb->stash_prefix[j + 1] - pb->stash_prefix[i]);
				if (mem > pb->mem_cap[s])
					continue;
				if (s > 0 && prev[i - 1] == none)
					continue;
				int64_t t = w[j + 1] - w[i] + out +
					    (s > 0 ? pb->comm_in[s][i] : 0);
				if (s > 0 && prev[i - 1] > t)
					t = prev[i - 1];
				if (t < best)
					best = t;
			}
			row[j] = best;
		}
	}
	int64_t b = f[(size_t)(S - 1) * (size_t)n + (size_t)(n - 1)];
	free(f);
	if (b == none)
		return PPCC_EINFEASIBLE;
	*out_bottleneck = b;
	return 0;
}

static void print_machine(void)
{
	char line[512], model[256] = "unknown";
	int cores = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		while (fgets(line, sizeof line, f)) {
			if (strncmp(line, "processor", 9) == 0)
				cores++;
			if (strncmp(line, "model name", 10) == 0 && strcmp(model, "unknown") == 0) {
				char *colon = strchr(line, ':');
				if (colon) {
					snprintf(model, sizeof model, "%s", colon + 2);
					model[strcspn(model, "\n")] = '\0';
				}
			}
		}
		fclose(f);
	}
	printf("partition benchmark\n");
	printf("machine: %s, %d cores\n", model, cores);
}

/* Best of REPEATS runs of the solver; 0, or 1 on any failure. */
static int time_solve(double *out_ms, int64_t *out_bottleneck,
		      const bench_instance *x)
{
	int *first = bench_alloc((size_t)x->S, sizeof(int));
	double best = 1e300;
	int err = 0;
	for (int r = 0; r < REPEATS && !err; r++) {
		double t0 = now_ms();
		err = ppcc_partition_solve(first, out_bottleneck, &x->pb);
		double t = now_ms() - t0;
		if (t < best)
			best = t;
	}
	free(first);
	*out_ms = best;
	if (err) {
		fprintf(stderr, "bench_partition: solve failed: %s\n",
			ppcc_status_str(err));
		return 1;
	}
	return 0;
}

/* The bottleneck with every cap lifted, to show that the caps bind. */
static int64_t uncapped_bottleneck(bench_instance *x)
{
	int64_t *none = bench_alloc((size_t)x->S, sizeof(int64_t));
	int *first = bench_alloc((size_t)x->S, sizeof(int));
	int64_t bottleneck = -1;
	for (int s = 0; s < x->S; s++)
		none[s] = INT64_MAX;
	x->pb.mem_cap = none;
	if (ppcc_partition_solve(first, &bottleneck, &x->pb) != 0)
		bottleneck = -1;
	x->pb.mem_cap = x->mem_cap;
	free(none);
	free(first);
	return bottleneck;
}

static int run_case(const char *label, int n, int S, int kinds,
		    double comm_scale, int dp_repeats, double *out_dp_ms)
{
	bench_instance x;
	bench_instance_make(&x, n, S, kinds, comm_scale,
			    0x5eed0000u + (uint64_t)n * 1000u + (uint64_t)S);
	double ms, dp_ms = 1e300;
	int64_t bottleneck, dp_bottleneck = -1;
	int bad = time_solve(&ms, &bottleneck, &x);
	if (bad) {
		bench_instance_free(&x);
		return bad;
	}
	int64_t free_bottleneck = uncapped_bottleneck(&x);
	printf("%-15s %6d %6d %5d %10.3f %+7.1f%% %9.3f", label, n, S, kinds,
	       (double)bottleneck / 1e9,
	       100.0 * (double)(bottleneck - free_bottleneck) / (double)free_bottleneck,
	       ms);
	if (dp_repeats > 0) {
		for (int r = 0; r < dp_repeats; r++) {
			double t0 = now_ms();
			int err = plain_dp(&dp_bottleneck, &x.pb);
			double t = now_ms() - t0;
			if (err)
				dp_bottleneck = -1;
			if (t < dp_ms)
				dp_ms = t;
		}
		printf(" %11.1f %7.0fx %s\n", dp_ms, dp_ms / ms,
		       dp_bottleneck == bottleneck ? "yes" : "NO");
		if (dp_bottleneck != bottleneck) {
			fprintf(stderr, "bench_partition: %s: solver %lld, plain DP %lld\n",
				label, (long long)bottleneck, (long long)dp_bottleneck);
			bad = 1;
		}
		if (out_dp_ms)
			*out_dp_ms = dp_ms;
	} else {
		printf(" %11s %8s %s\n", "skipped", "-", "-");
	}
	bench_instance_free(&x);
	return bad;
}

/* ppcc_partition_min_overflow on an instance whose caps cannot be met. */
static int run_overflow_case(int n, int S, int kinds)
{
	bench_instance x;
	bench_instance_make(&x, n, S, kinds, 1, 0x0f10u + (uint64_t)n);
	int *first = bench_alloc((size_t)S, sizeof(int));
	int stage = -1, err = 0;
	int64_t overflow = 0, bottleneck;
	double best = 1e300;
	int halvings = 0;
	while (ppcc_partition_solve(first, &bottleneck, &x.pb) != PPCC_EINFEASIBLE) {
		for (int s = 0; s < S; s++)
			x.mem_cap[s] /= 2;
		halvings++;
	}
	for (int r = 0; r < REPEATS && !err; r++) {
		double t0 = now_ms();
		err = ppcc_partition_min_overflow(first, &stage, &overflow, &x.pb);
		double t = now_ms() - t0;
		if (t < best)
			best = t;
	}
	if (!err)
		printf("min_overflow, caps halved %d times to not fit: %d layers, %d stages:\n"
		       "  %.3f ms, least overflow %.3f GB on stage %d\n",
		       halvings, n, S, best, (double)overflow / 1e9, stage);
	free(first);
	bench_instance_free(&x);
	return err != 0;
}

int main(void)
{
	int bad = 0;
	double dp_2500 = 0;
	print_machine();
	printf("solve: best of %d runs of ppcc_partition_solve; plain DP: the O(S n^2)\n"
	       "program on the same instance (best of %d, or 1 run when slow);\n"
	       "bottleneck in ms; caps: how much the memory caps raise it\n\n",
	       REPEATS, REPEATS);
	printf("%-15s %6s %6s %5s %10s %8s %9s %11s %8s %s\n", "case", "layers",
	       "stages", "kinds", "bottleneck", "caps", "solve ms", "plain DP ms",
	       "ratio", "agree");
	bad |= run_case("uniform devices", 1000, 64, 1, 1, REPEATS, NULL);
	bad |= run_case("heterogeneous", 1000, 64, 3, 1, REPEATS, NULL);
	bad |= run_case("slow links", 1000, 64, 3, 10, REPEATS, NULL);
	bad |= run_case("heterogeneous", 2500, 256, 3, 1, 1, &dp_2500);
	bad |= run_case("heterogeneous", 10000, 256, 3, 1, 0, NULL);
	bad |= run_case("slow links", 10000, 256, 3, 10, 0, NULL);
	printf("\nplain DP skipped at 10000 x 256: O(S n^2) makes it 16x the 2500 x 256\n"
	       "case, about %.0f ms by that measurement\n"
	       "slow links: boundary costs x10 (several layers' work each)\n\n",
	       16 * dp_2500);
	bad |= run_overflow_case(10000, 256, 3);
	return bad;
}
