/*
 * compare - do two trainer outputs agree?  (tests/gpu/run.sh)
 *
 *   compare TOL REF OUT [OUT...]
 *
 * Sorts the lines of REF and of the OUT files together, then compares
 * them number by number (C99 hex floats or decimals, read with strtod):
 * exit 0 when the shapes match and every relative difference is at most
 * TOL, else 1 with the largest difference and the first line over TOL.
 * A number that is not finite (NaN or infinity, on either side) fails
 * the comparison: a NaN difference compares false against any TOL, so
 * it is tested for first.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of files[0..n), sorted; *out_n lines. */
static char **read_lines(char **files, int n, size_t *out_n)
{
	size_t cap = 1024, k = 0;
	char **lines = malloc(cap * sizeof *lines);
	char buf[1 << 16];
	for (int i = 0; i < n; i++) {
		FILE *f = fopen(files[i], "r");
		if (!f) {
			fprintf(stderr, "compare: cannot read %s\n", files[i]);
			exit(2);
		}
		while (fgets(buf, sizeof buf, f)) {
			if (k == cap)
				lines = realloc(lines, (cap *= 2) * sizeof *lines);
			buf[strcspn(buf, "\n")] = '\0';
			lines[k++] = strdup(buf);
		}
		fclose(f);
	}
	qsort(lines, k, sizeof *lines, by_text);
	*out_n = k;
	return lines;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: compare TOL REF OUT [OUT...]\n");
		return 2;
	}
	char *end;
	double tol = strtod(argv[1], &end), worst = 0;
	if (end == argv[1] || *end || !isfinite(tol) || tol < 0) {
		fprintf(stderr, "compare: TOL must be a finite number >= 0, not %s\n",
			argv[1]);
		return 2;
	}
	size_t nr, no;
	char **ref = read_lines(&argv[2], 1, &nr);
	char **out = read_lines(&argv[3], argc - 3, &no);
	if (nr != no) {
		printf("compare: %zu lines, the reference has %zu\n", no, nr);
		return 1;
	}
	for (size_t i = 0; i < nr; i++) {
		const char *a = out[i], *b = ref[i];
		char *ea, *eb;
		while (*a && *b) {
			double x = strtod(a, &ea), y = strtod(b, &eb);
			if (ea == a || eb == b) {
				if (*a++ != *b++) {
					printf("compare: line %zu differs in shape\n", i);
					return 1;
				}
				continue;
			}
			if (!isfinite(x) || !isfinite(y)) {
				printf("compare: line %zu: %s is not finite: %.60s\n",
				       i, isfinite(x) ? "the reference" : "the output",
				       isfinite(x) ? ref[i] : out[i]);
				return 1;
			}
			double d = fabs(x - y) / (fabs(y) > 0 ? fabs(y) : 1);
			if (d > worst)
				worst = d;
			if (d > tol) {
				printf("compare: %.3g > %.3g in: %.60s\n", d, tol, out[i]);
				return 1;
			}
			a = ea;
			b = eb;
		}
		if (*a || *b) {
			printf("compare: line %zu differs in length\n", i);
			return 1;
		}
	}
	printf("compare: %zu lines agree, largest relative difference %.3g\n", nr,
	       worst);
	return 0;
}
