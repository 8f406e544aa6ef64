/*
 * ppcc/checkpoint.h - save a pipeline's training state and load it under
 * another plan.
 *
 * A checkpoint is keyed by layer, never by stage or rank: each layer's
 * tensors are one shard file, so the ranks of any plan each load the
 * layers their stages hold (ppcc_ckpt_layers_of) whichever plan wrote
 * them.  Under the trainer's directory DIR: DIR/LATEST names the last
 * committed DIR/step-NNNNNNNNNNNN/, which holds a MANIFEST and one
 * layer-LLLL.shard a layer, each checked by CRC-32 (ppcc_runtime(3) gives
 * every line; doc/design/checkpoint.md the layout).  A save becomes the
 * checkpoint only at ppcc_ckpt_commit: a process killed at any point of a
 * save leaves LATEST naming the previous checkpoint, whole.  Earlier step
 * directories are kept; deleting them is the trainer's choice.
 * Loading refuses another model's checkpoint (PPCC_RT_EMISMATCH), a
 * damaged one (PPCC_RT_ECHECKSUM, with the file and line) and one that
 * cannot be read (PPCC_RT_EIO); nothing is partially loaded into a layer.
 * Reads are bounded: only regular files are opened, and a file's size is
 * checked against the manifest before anything is allocated for it.
 * Fault injection for tests: with $PPCC_CKPT_KILL_AT=N the process sends
 * itself SIGKILL once it has written N bytes of checkpoint files.
 *
 * This header compiles alone as C11 and as C++.
 */
#ifndef PPCC_CHECKPOINT_H
#define PPCC_CHECKPOINT_H

#include <stdint.h>

#include "ppcc/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Versions only append fields to ppcc_ckpt_model; the library reads a
 * model's fields of its version (1 or 2) and takes later ones at their
 * defaults.  ppcc_ckpt_layer is the same in both. */
#define PPCC_CKPT_VERSION 2
#define PPCC_CKPT_MAX_DIMS 4

typedef enum ppcc_ckpt_dtype {
	PPCC_CKPT_F32 = 0,
	PPCC_CKPT_F64 = 1,
	PPCC_CKPT_I32 = 2,
	PPCC_CKPT_I64 = 3,
	PPCC_CKPT_U8 = 4
} ppcc_ckpt_dtype;

/* One tensor of a layer: data holds dims[0] * ... * dims[n_dims-1]
 * elements of dtype (borrowed; read by save, written by load). */
typedef struct ppcc_ckpt_tensor {
	const char *name; /* [A-Za-z0-9_.-]+, unique in the layer */
	int32_t dtype;    /* ppcc_ckpt_dtype */
	int32_t n_dims;   /* 1..PPCC_CKPT_MAX_DIMS */
	int64_t dims[PPCC_CKPT_MAX_DIMS];
	void *data;
} ppcc_ckpt_tensor;

/* One layer, 0-based as in the schedule's stage table.  version covers
 * this struct and the ppcc_ckpt_tensor entries it points to. */
typedef struct ppcc_ckpt_layer {
	int version; /* PPCC_CKPT_VERSION */
	int32_t layer;
	const char *name; /* [A-Za-z0-9_.-]+ */
	int32_t n_tensors;
	ppcc_ckpt_tensor *tensors;
} ppcc_ckpt_layer;

/* What reading checkpoint files cost: every call given a model with
 * counts adds to them (the caller zeroes them). */
typedef struct ppcc_ckpt_counts {
	uint64_t files_opened;
	uint64_t bytes_read;      /* from checkpoint files */
	uint64_t bytes_allocated; /* for their contents and parsed tables */
} ppcc_ckpt_counts;

/* The model a checkpoint belongs to, and where problems are reported:
 * one line each, "ppcc-ckpt: FILE[:LINE]: error: ...", through diag
 * (NULL: standard error).  rank is passed to diag unchanged. */
typedef struct ppcc_ckpt_model {
	int version;      /* PPCC_CKPT_VERSION */
	const char *name; /* [A-Za-z0-9_.-]+ */
	int32_t n_layers;
	int rank;
	ppcc_rt_diag_fn diag;
	void *diag_user;
	/* Version 2.  Seconds the reads of one file may last, as
	 * ppcc_rt_options.timeout_s: <= 0: $PPCC_TIMEOUT, else 300; NaN or
	 * infinite: PPCC_RT_EINPUT; at most PPCC_RT_TIMEOUT_MAX.  Checked
	 * between reads of at most 1 MiB: one read(2) is not interrupted. */
	double timeout_s;
	ppcc_ckpt_counts *counts; /* NULL, or added to (borrowed) */
} ppcc_ckpt_model;

/* out_owned[l] (n_layers entries) set to 1 for each layer held by one of
 * rank's stages in s, else 0.  Returns how many, or PPCC_RT_EINPUT when
 * the stage table does not cover layers 0..n_layers-1 in order. */
PPCC_API int ppcc_ckpt_layers_of(int *out_owned, int32_t n_layers,
			const ppcc_schedule *s, int rank);

/* Writes the shard of one layer for `step`, atomically.  Any rank may
 * save any layers; a layer saved twice for one step is replaced. */
PPCC_API int ppcc_ckpt_save_layer(const ppcc_ckpt_model *m, const char *dir,
			 uint64_t step, const ppcc_ckpt_layer *layer);

/* Once every layer of `step` has been saved (by every rank: the caller
 * synchronises), checks each shard and makes step the checkpoint: writes
 * its MANIFEST, then LATEST.  Call it on one rank. */
PPCC_API int ppcc_ckpt_commit(const ppcc_ckpt_model *m, const char *dir,
		     uint64_t step);

/* The step of DIR's committed checkpoint, after checking that its
 * manifest is whole and belongs to m. */
PPCC_API int ppcc_ckpt_latest(uint64_t *out_step, const ppcc_ckpt_model *m,
		     const char *dir);

/* Loads one layer of checkpoint `step` into layer->tensors' data, after
 * checking the shard against the manifest, its checksum, and its layer
 * and tensors against layer's. */
PPCC_API int ppcc_ckpt_load_layer(const ppcc_ckpt_model *m, const char *dir,
			 uint64_t step, ppcc_ckpt_layer *layer);

#ifdef __cplusplus
}
#endif

#endif
