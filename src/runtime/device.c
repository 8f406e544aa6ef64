/*
 * device.c - which CUDA device a rank of the nccl transport takes when
 * options.cuda_device is -1.
 *
 * The rank's place on its node decides, not its global rank: with
 * `mpirun --map-by node`, or nodes holding different numbers of ranks,
 * the global rank modulo the device count gives two ranks of one node the
 * same GPU, which NCCL 2.28 refuses ("Duplicate GPU detected").  The
 * node-local rank comes from the launcher (OpenMPI's
 * OMPI_COMM_WORLD_LOCAL_RANK, MPICH's MPI_LOCALRANKID, Slurm's
 * SLURM_LOCALID, torchrun's LOCAL_RANK, in that order), or, under MPI,
 * from the ranks that share the host (nccl.c); without either, every
 * rank is taken to be on one node and its rank is its local rank.
 *
 * Kept apart from nccl.c and free of CUDA so that the rule is tested on
 * machines without a GPU.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "rt.h"

int ppcc_rt_device_choose(int local_rank, int n_devices)
{
	if (local_rank < 0 || n_devices < 1)
		return -1;
	/* one device visible: the launcher gave each process its own
	 * (CUDA_VISIBLE_DEVICES per rank), or the node has one GPU */
	if (n_devices == 1)
		return 0;
	return local_rank < n_devices ? local_rank : -1;
}

static const char *const rt_local_rank_vars[] = {
	"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
	"LOCAL_RANK",
};

int ppcc_rt_local_rank_env(const char **out_var)
{
	for (size_t i = 0; i < sizeof rt_local_rank_vars /
				       sizeof rt_local_rank_vars[0]; i++) {
		const char *v = getenv(rt_local_rank_vars[i]);
		if (!v || !*v)
			continue;
		char *end;
		errno = 0;
		long n = strtol(v, &end, 10);
		if (*end || errno || n < 0 || n > INT_MAX)
			continue;
		if (out_var)
			*out_var = rt_local_rank_vars[i];
		return (int)n;
	}
	return -1;
}
