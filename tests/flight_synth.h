/*
 * flight_synth.h - synthetic flight records of a hung job, for the
 * diagnose tests and bench_diagnose: files in the format of
 * ppcc_runtime(3) ("When a job hangs"), as a rank's SIGUSR1 writes them
 * (reason signal, status 0).  The runtime's writer cannot be driven
 * without a running rank per record, so this writes the documented lines
 * itself: 13 keys, the line "current" being line 13, four action lines
 * and two message lines, then any extra lines and "end".  Times are
 * printed from integers, the same in any locale.  Header-only (static):
 * the benchmark links no test objects.
 */
#ifndef PPCC_FLIGHT_SYNTH_H
#define PPCC_FLIGHT_SYNTH_H

#include <stdio.h>

#define SYNTH_T0 1796118140LL /* the records' clock, in seconds */

/* Writes DIR/rank-NNNNN.flight of rank `rank` of a job of `ranks`:
 * `current` is what follows "current " (an action and its start, or
 * "none"); `extra` lines (each ending in a newline) go before "end".
 * 0, or -1 when the file cannot be written. */
static int synth_record(const char *dir, int rank, long long ranks,
			const char *current, const char *extra)
{
	char path[4352];
	snprintf(path, sizeof path, "%s/rank-%05d.flight", dir, rank);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "ppcc-flight 1\nrank %d\nranks %lld\npid %d\n"
		"fingerprint 82bc39069b7eb4dc\nschedule 1f1b %lld %lld 8 48\n"
		"covers 0-7\nreason signal\nwritten %lld.000000\nstep 0\n"
		"step_start %lld.000000\ntimeout 600.000000\ncurrent %s\n"
		"status 0 running\nfailed none\ncause none\nlast_mb 3\n",
		rank, ranks, 1000 + rank, ranks, ranks, SYNTH_T0 + 5, SYNTH_T0,
		current);
	for (int k = 0; k < 4; k++)
		fprintf(f, "action %d F %d %d -1 %lld.%06d %lld.%06d\n", k, rank, k,
			SYNTH_T0, 10 * k, SYNTH_T0, 10 * k + 5);
	for (int k = 0; k < 2; k++)
		fprintf(f, "message %d SEND_F %d %d %d %lld.%06d %lld.%06d\n", 4 + k,
			rank, k, rank + 1 < ranks ? rank + 1 : 0, SYNTH_T0, 50 + k,
			SYNTH_T0, 60 + k);
	fprintf(f, "%send\n", extra ? extra : "");
	return fclose(f) == 0 ? 0 : -1;
}

/* The hang shapes of synth_job. */
enum {
	SYNTH_HOLDER, /* rank `holder` inside a forward for 5 s; the ranks
		       * below it wait to receive a backward from the next
		       * one, those above a forward from the one before */
	SYNTH_CYCLE   /* each rank waits to receive from the next, the last
		       * from rank 0 */
};

/* Every rank's record of a job of `ranks` caught hanging in `shape`;
 * 0 or -1. */
static int synth_job(const char *dir, int ranks, int shape, int holder)
{
	for (int r = 0; r < ranks; r++) {
		char current[160];
		if (shape == SYNTH_HOLDER && r == holder)
			snprintf(current, sizeof current, "7 F %d 3 -1 %lld.000000", r,
				 SYNTH_T0);
		else if (shape == SYNTH_HOLDER && r < holder)
			snprintf(current, sizeof current, "9 RECV_B %d 2 %d %lld.500000",
				 r, r + 1, SYNTH_T0 + 1);
		else if (shape == SYNTH_HOLDER)
			snprintf(current, sizeof current, "6 RECV_F %d 3 %d %lld.500000",
				 r, r - 1, SYNTH_T0 + 1);
		else
			snprintf(current, sizeof current, "9 RECV_B %d 2 %d %lld.500000",
				 r, (r + 1) % ranks, SYNTH_T0 + 1);
		if (synth_record(dir, r, ranks, current, NULL) < 0)
			return -1;
	}
	return 0;
}

#endif
