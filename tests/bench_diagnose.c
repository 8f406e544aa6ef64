/*
 * bench_diagnose.c - how long `ppcc diagnose` takes on a large job, and
 * how much memory.
 *
 * Writes the records of a job of 16,384 ranks, then of 100,000, caught
 * hanging (tests/flight_synth.h: one rank inside a forward, every other
 * waiting along a chain to it) into a temporary directory, and times
 * ppcc_diagnose and the text it prints, in this process.  Reported per
 * job: the records' bytes, the wall time, and the peak resident memory
 * (getrusage; the larger job runs second, so its figure is its own).
 * The goal for 16,384 ranks is under 10 s and 1 GB.  Exits 1 when the
 * cause is not the rank inside the forward.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "diagnose/diagnose.h"
#include "flight_synth.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double peak_mib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
}

static void print_error(ppcc_severity sev, const ppcc_loc *loc,
			const char *msg, void *user)
{
	(void)sev;
	(void)user;
	fprintf(stderr, "bench_diagnose: %s:%d:%d: %s\n", loc && loc->file ? loc->file : "",
		loc ? loc->line : 0, loc ? loc->col : 0, msg);
}

static void remove_dir(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	char path[4096];
	while (dp && (e = readdir(dp))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (dp)
		closedir(dp);
	rmdir(dir);
}

/* One job of `ranks`; 0, or 1 when the answer is wrong. */
static int bench_job(int ranks)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/ppcc-bench-diagnose.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("bench_diagnose: mkdtemp");
		return 1;
	}
	int holder = ranks / 2 + 1, bad = 0;
	if (synth_job(dir, ranks, SYNTH_HOLDER, holder) < 0) {
		perror("bench_diagnose: writing the records");
		remove_dir(dir);
		return 1;
	}
	unsigned long long bytes = 0;
	struct stat st;
	char path[4200];
	for (int r = 0; r < ranks; r++) {
		snprintf(path, sizeof path, "%s/rank-%05d.flight", dir, r);
		if (stat(path, &st) == 0)
			bytes += (unsigned long long)st.st_size;
	}
	ppcc_diag d = {.fn = print_error};
	ppcc_diagnosis *dg = NULL;
	char *text = NULL;
	size_t len = 0;
	double t0 = now_s();
	int err = ppcc_diagnose(&dg, dir, NULL, NULL, &d);
	FILE *mem = err == 0 ? open_memstream(&text, &len) : NULL;
	if (mem) {
		err = ppcc_diagnosis_emit(mem, dg, 0);
		fclose(mem);
	}
	double secs = now_s() - t0;
	char want[64];
	snprintf(want, sizeof want, "cause: rank %d holds everyone up", holder);
	if (err < 0 || !text || !strstr(text, want)) {
		fprintf(stderr, "bench_diagnose: %d ranks: expected \"%s\", got status "
			"%d:\n%.500s\n", ranks, want, err, text ? text : "");
		bad = 1;
	}
	printf("  %7d ranks  %6.1f MB of records  %7.3f s  peak RSS %7.1f MiB  %zu bytes "
	       "of text\n", ranks, (double)bytes / 1e6, secs, peak_mib(), len);
	free(text);
	ppcc_diagnosis_free(dg);
	remove_dir(dir);
	return bad;
}

int main(void)
{
	int bad = 0;
	printf("bench_diagnose: ppcc diagnose on a hung job's records, one "
	       "rank holding up a chain of waits (goal at 16384 ranks: < 10 s, "
	       "< 1 GB)\n");
	bad |= bench_job(16384);
	bad |= bench_job(100000);
	return bad;
}
