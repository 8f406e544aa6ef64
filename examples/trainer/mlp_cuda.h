/*
 * mlp_cuda.h - the trainer's model on the GPU: the stages of mlp.h as
 * CUDA kernels on the runtime's compute stream, over the nccl transport
 * (MPI bootstraps the ncclUniqueId; run one process per GPU under
 * mpirun), or its loopback mode (every rank a thread, one GPU).
 *
 * The kernels do each sum in the order mlp.c does (one thread per output
 * element, built with -fmad=false), so the only differences from the CPU
 * trainer come from CUDA's tanh against the C library's: expect a
 * relative difference near 1e-15, not bit-identical results.
 */
#ifndef MLP_CUDA_H
#define MLP_CUDA_H

#include <ppcc/runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Faults the GPU check injects into one live rank: its first forward
 * of step 1 (microbatch 0 of its first stage) fails, or sleeps
 * 1.5 x the timeout before it returns. */
enum { MLP_FAULT_NONE = 0, MLP_FAULT_FAIL = 1, MLP_FAULT_STUCK = 2 };

typedef struct mlp_cuda_opts {
	int steps;
	int stats;        /* per-rank step figures on standard error */
	int loopback;     /* every rank a thread of this process, one GPU */
	const char *output;
	int fault, fault_rank;
	/* D > 1: D replicas of the pipeline, p x D processes under mpirun,
	 * their gradients reduced by the runtime (ncclAllReduce; under a
	 * ZeRO schedule reduce-scattered, each replica updating its own
	 * shards and the schedule gathering them); not with loopback */
	int data_parallel;
} mlp_cuda_opts;

/* Trains o->steps steps of schedule s and writes the same lines as the
 * CPU trainer: to output.RANK per MPI process (standard output when
 * output is NULL), or with loopback, one process for every rank, to
 * output itself.  ro->transport is set to nccl.  Returns the exit
 * status: 0, or 1 after reporting a failure on standard error. */
int mlp_cuda_train(const ppcc_schedule *s, ppcc_rt_options *ro,
		   const mlp_cuda_opts *o);

#ifdef __cplusplus
}
#endif

#endif
