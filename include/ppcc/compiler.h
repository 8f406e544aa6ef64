/*
 * ppcc/compiler.h - the compiler as a library (libppcc): plan a model
 * file and write the plan in one of `ppcc plan`'s formats.
 *
 * ppcc_compile_file does what `ppcc plan FILE [--cluster C] -f FORMAT
 * [--memory-limit GIB] [--jobs N] [--max-actions N] [--max-work N]` does
 * (the same driver), writing to a stream the caller owns.  It never
 * prints: every diagnostic goes to opts->diag (NULL: none are delivered,
 * only the status tells).  It is safe to call from several threads at
 * once on different streams.
 *
 * The runtime (ppcc/runtime.h) lives in libppcc_rt, which a trainer
 * links without this library and its YAML and Graphviz dependencies.
 *
 * This header compiles alone as C11 and as C++.
 */
#ifndef PPCC_COMPILER_H
#define PPCC_COMPILER_H

#include <stdio.h>

#include "ppcc/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One diagnostic: severity 0 error, 1 warning, 2 note; file NULL and
 * line 0 when it has no position; msg lower case, no final period. */
typedef void (*ppcc_compile_diag_fn)(int severity, const char *file,
				     int line, int col, const char *msg,
				     void *user);

#define PPCC_COMPILE_OPTIONS_VERSION 2

/* Fields are only ever appended; a zero field means its default.  The
 * fields after diag_user are read when version is 2 or more (a caller
 * built against version 1 gets their defaults). */
typedef struct ppcc_compile_options {
	int version;         /* PPCC_COMPILE_OPTIONS_VERSION */
	/* any name `ppcc plan -f` takes (ppcc --help lists them); NULL:
	 * "text" */
	const char *format;
	const char *cluster; /* a cluster file, as --cluster; NULL: none */
	ppcc_compile_diag_fn diag;
	void *diag_user;
	/* version 2 */
	double memory_limit_gib; /* as --memory-limit: GiB every device
				    holds; 0: the cluster's */
	int threads;             /* as --jobs: 1 to 64; 0: one per processor
				    online */
	long long max_actions;   /* as --max-actions; 0: the default */
	long long max_work;      /* as --max-work; 0: the default */
} ppcc_compile_options;

#define PPCC_COMPILE_OPTIONS_INIT { PPCC_COMPILE_OPTIONS_VERSION, NULL, NULL, NULL, NULL, 0, 0, 0, 0 }

/* Plans model_path and writes the plan to out (never closed).  Returns 0;
 * -1 out of memory; -2 bad input or options (diagnostics delivered); -3
 * no plan satisfies the constraints; -4 cannot read a file or write out;
 * -5 internal error.  opts NULL means PPCC_COMPILE_OPTIONS_INIT. */
PPCC_API int ppcc_compile_file(FILE *out, const char *model_path,
			       const ppcc_compile_options *opts);

/* The library's version, e.g. "0.1.0". */
PPCC_API const char *ppcc_version(void);

#ifdef __cplusplus
}
#endif

#endif
