/*
 * mlp_cuda.h - the trainer's model on the GPU: the stages of mlp.h as
 * CUDA kernels on the runtime's compute stream, over the nccl transport
 * (MPI bootstraps the ncclUniqueId; run one process per GPU under
 * mpirun).
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

/* Trains `steps` steps of schedule s and writes the same lines as the
 * CPU trainer (to output.RANK, or standard output when output is NULL).
 * ro->transport is set to nccl.  Returns the exit status: 0, or 1 after
 * reporting a failure on standard error. */
int mlp_cuda_train(const ppcc_schedule *s, int steps, ppcc_rt_options *ro,
		   int stats, const char *output);

#ifdef __cplusplus
}
#endif

#endif
