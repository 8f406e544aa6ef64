/*
 * bench_split.c - how long ppcc_plan_build takes to find the split with the
 * least simulated step, and how many simulations it spends.
 *
 * Each case is a configuration as ppcc reads it: a generated model of
 * 1,000 layers of uneven cost and size on H100-class devices in nodes of
 * 8 (slower links between nodes), and Llama 3 405B through the
 * transformer shorthand.  The time is the best of REPEATS runs of the
 * whole ppcc_plan_build (cost tables, the least-bottleneck search, the
 * simulated search, and the scheduling, validation and simulation of the
 * split and of the uniform one).  Prints per case the simulations and
 * the budget, whether every split was simulated, ppcc's step against the
 * uniform split's, and the time.  Exits 1 when a plan fails or is slower
 * than the uniform split.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ppcc.h"

#define REPEATS 3

static uint64_t rng_state = 0x5eed5eedu;

static double rng_uniform(double lo, double hi)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return lo + (hi - lo) * (double)(z >> 11) / 9007199254740992.0;
}

/* CPU time of this thread: the machine may be shared. */
static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *cluster_yaml =
	"cluster:\n"
	"  devices: %d\n"
	"  devices_per_node: 8\n"
	"  device: {name: h100, tflops: 989, efficiency: 0.4, memory_gib: %d}\n"
	"  links:\n"
	"    intra_node: {bandwidth_gb_s: 370, latency_us: 5}\n"
	"    inter_node: {bandwidth_gb_s: 50, latency_us: 8}\n";

/* 1,000 layers: ~1 ms forward and backward each, a few 2-5x larger;
 * activations 8-32 MB. */
static void write_generated(FILE *f, int devices)
{
	rng_state = 0x5eed5eedu;
	fprintf(f, "model:\n  name: generated\n  layers:\n");
	for (int i = 0; i < 1000; i++) {
		double ms = rng_uniform(0.27, 0.4);
		if (rng_uniform(0, 1) < 0.02)
			ms *= rng_uniform(2, 5);
		fprintf(f, "    - {name: l%d, fwd_ms: %.4f, params: %.4g, "
			"activation_bytes: %.4g, stash_bytes: %.4g}\n", i, ms,
			rng_uniform(6e6, 18e6), rng_uniform(8e6, 32e6),
			rng_uniform(1e6, 3e6));
	}
	fprintf(f, cluster_yaml, devices, 80);
}

static void write_llama3(FILE *f)
{
	fprintf(f, "model:\n  name: llama3-405b\n  transformer:\n"
		"    layers: 126\n    hidden: 16384\n    heads: 128\n"
		"    kv_heads: 8\n    ffn_hidden: 53248\n    vocab: 128256\n"
		"    seq_len: 8192\n    micro_batch_size: 1\n    swiglu: true\n"
		"    recompute: selective\n");
	fprintf(f, cluster_yaml, 128, 131);
}

static int run_case(const char *label, const char *path, int kind, int p,
		    int v, int m, int t)
{
	ppcc_diag quiet = {0};
	double best = 1e300, best_plan = 1e300;
	ppcc_plan plan;
	int err = 0;
	ppcc_arena *keep = NULL;
	for (int r = 0; r < REPEATS && !err; r++) {
		ppcc_arena *a = ppcc_arena_new();
		ppcc_config cfg;
		if (!a || ppcc_config_load(&cfg, a, path, NULL, &quiet) < 0) {
			fprintf(stderr, "bench_split: %s: cannot load\n", label);
			return 1;
		}
		static const ppcc_loc here = {"bench", 1, 1};
		cfg.pipeline.kind = kind;
		cfg.pipeline.kind_loc = here;
		cfg.pipeline.stages = p;
		cfg.pipeline.stages_loc = here;
		cfg.pipeline.chunks = v;
		cfg.pipeline.chunks_loc = here;
		cfg.pipeline.microbatches = m;
		cfg.pipeline.microbatches_loc = here;
		cfg.pipeline.tensor_parallel = t;
		cfg.pipeline.tensor_parallel_loc = here;
		ppcc_config_fill_defaults(&cfg);
		if ((err = ppcc_config_check(&cfg, &quiet)) < 0)
			break;
		int first[512];
		ppcc_step_result res;
		double t0 = now_ms();
		err = ppcc_plan_choose_split(first, &res, a, &cfg, &quiet);
		double t1 = now_ms();
		if (err == 0)
			err = ppcc_plan_build(&plan, a, &cfg, &quiet);
		double t2 = now_ms();
		if (t1 - t0 < best)
			best = t1 - t0;
		if (t2 - t1 < best_plan)
			best_plan = t2 - t1;
		ppcc_arena_free(keep);
		keep = a;
	}
	if (err < 0) {
		fprintf(stderr, "bench_split: %s: %s\n", label, ppcc_status_str(err));
		ppcc_arena_free(keep);
		return 1;
	}
	const ppcc_step_result *sr = &plan.search;
	double ppcc = plan.best.estimate.step_ms, uni = plan.uniform.estimate.step_ms;
	printf("%-20s %5d %4d x %d %4d %5ld %6ld %-5s %11.3f %11.3f %+7.2f%% %6.1f%% %8.3f %8.3f\n",
	       label, plan.n_layers, p, v, m, sr->simulations, sr->budget,
	       sr->exact ? "yes" : "no", ppcc, uni, 100 * (uni - ppcc) / uni,
	       100 * (ppcc - sr->lower_bound_ms) / ppcc, best, best_plan);
	int bad = plan.uniform_fits && ppcc > uni;
	if (bad)
		fprintf(stderr, "bench_split: %s: slower than the uniform split\n", label);
	ppcc_arena_free(keep);
	return bad;
}

int main(void)
{
	char gen[] = "/tmp/bench_split_genXXXXXX", llama[] = "/tmp/bench_split_l3XXXXXX";
	int fg = mkstemp(gen), fl = mkstemp(llama);
	if (fg < 0 || fl < 0) {
		perror("bench_split");
		return 1;
	}
	FILE *f = fdopen(fg, "w");
	write_generated(f, 512);
	fclose(f);
	f = fdopen(fl, "w");
	write_llama3(f);
	fclose(f);

	printf("split benchmark: ppcc_plan_build, CPU time, best of %d (ms)\n", REPEATS);
	printf("%-20s %5s %8s %4s %5s %6s %-5s %11s %11s %8s %7s %8s %8s\n", "case", "layers",
	       "p x v", "m", "sims", "budget", "exact", "step ms", "uniform ms",
	       "gain", "gap", "search", "plan");
	int bad = 0;
	bad |= run_case("1f1b", gen, PPCC_SCHED_1F1B, 64, 1, 64, 1);
	bad |= run_case("1f1b", gen, PPCC_SCHED_1F1B, 64, 1, 256, 1);
	bad |= run_case("gpipe", gen, PPCC_SCHED_GPIPE, 64, 1, 64, 1);
	bad |= run_case("interleaved", gen, PPCC_SCHED_INTERLEAVED, 16, 2, 64, 1);
	bad |= run_case("interleaved", gen, PPCC_SCHED_INTERLEAVED, 16, 4, 64, 1);
	bad |= run_case("interleaved", gen, PPCC_SCHED_INTERLEAVED, 32, 4, 64, 1);
	bad |= run_case("llama3-405b", llama, PPCC_SCHED_INTERLEAVED, 16, 2, 16, 8);
	bad |= run_case("llama3-405b", llama, PPCC_SCHED_INTERLEAVED, 16, 3, 16, 8);
	bad |= run_case("llama3-405b", llama, PPCC_SCHED_INTERLEAVED, 16, 4, 16, 8);
	unlink(gen);
	unlink(llama);
	return bad;
}
