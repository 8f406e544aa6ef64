/*
 * diagnose.h - `ppcc diagnose`: the root cause of a failed or hung run,
 * from the flight records its ranks wrote (src/runtime/flight.c).
 */
#ifndef PPCC_DIAGNOSE_H
#define PPCC_DIAGNOSE_H

#include <stdio.h>

#include "ppcc.h"

typedef struct ppcc_diagnosis ppcc_diagnosis;

/* Reads every DIR/rank-NNNNN.flight and works out the cause.  sched, when
 * not NULL, is the schedule the job should have run (its fingerprint is
 * compared with each rank's).  Errors in the records are reported through
 * d as FILE:LINE:COL (PPCC_EINPUT, after every file was read); PPCC_EIO
 * when DIR cannot be read or holds no record.  *out is the caller's to
 * free with ppcc_diagnosis_free. */
int ppcc_diagnose(ppcc_diagnosis **out, const char *dir,
		  const ppcc_schedule *sched, const char *sched_name,
		  ppcc_diag *d);
void ppcc_diagnosis_free(ppcc_diagnosis *dg);

/* 1 when a file's name (no directory) is a flight record's,
 * rank-NNNNN.flight, which ppcc_diagnose reads. */
int ppcc_diagnose_is_record_name(const char *name);

/* A few lines of text, or one JSON object (json = 1). */
int ppcc_diagnosis_emit(FILE *f, const ppcc_diagnosis *dg, int json);

#endif
