#define _GNU_SOURCE
#include "testutil.h"

#include "ppcc/runtime.h"
#include "rt_pipe.h"

#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

TCase *tu_tcase(Suite *s, const char *name, double timeout_s,
		const TTest *const tests[])
{
	TCase *tc = tcase_create(name);
	if (timeout_s > 0)
		tcase_set_timeout(tc, timeout_s);
	for (size_t i = 0; tests[i]; i++)
		tcase_add_test(tc, tests[i]);
	suite_add_tcase(s, tc);
	return tc;
}

Suite *tu_suite(const char *name, const char *tcase, double timeout_s,
		const TTest *const tests[])
{
	Suite *s = suite_create(name);
	tu_tcase(s, tcase, timeout_s, tests);
	return s;
}

const char *tu_ppcc(void)
{
	const char *p = getenv("PPCC");
	return p ? p : "build/ppcc";
}

const char *tu_src(void)
{
	const char *p = getenv("PPCC_SRC");
	return p ? p : ".";
}

void tu_ppcc_run(tu_run *out, const char *dir, char *const env[],
		 int timeout_s, const char *const args[])
{
	char *argv[64] = {(char *)tu_ppcc()};
	size_t n = 1;
	for (; args[n - 1]; n++) {
		ck_assert_msg(n < 63, "more than 62 arguments for ppcc");
		argv[n] = (char *)args[n - 1];
	}
	argv[n] = NULL;
	ck_assert_int_eq(tu_run_argv(out, dir, NULL, env, timeout_s, argv), 0);
}

static void append(char **buf, size_t *len, size_t *cap, const char *d, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t nc = (*cap ? *cap * 2 : 4096);
		while (nc < *len + n + 1)
			nc *= 2;
		*buf = realloc(*buf, nc);
		*cap = nc;
	}
	memcpy(*buf + *len, d, n);
	*len += n;
	(*buf)[*len] = '\0';
}

int tu_sanitized(void)
{
	const char *san = getenv("PPCC_SAN");
	return san && *san;
}

int tu_run_argv(tu_run *out, const char *dir, const char *in_path,
		char *const env[], int timeout_s, char *const argv[])
{
	int po[2], pe[2];
	memset(out, 0, sizeof *out);
	if (pipe(po) < 0 || pipe(pe) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		setpgid(0, 0);
		if (dir && chdir(dir) < 0)
			_exit(126);
		int in = open(in_path ? in_path : "/dev/null", O_RDONLY);
		if (in < 0)
			_exit(126);
		dup2(in, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		for (int i = 0; env && env[i]; i++)
			putenv(env[i]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	size_t ocap = 0, ecap = 0;
	out->out = calloc(1, 1);
	out->err = calloc(1, 1);
	struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
	int open_fds = 2;
	/* the sanitizers' builds run several times slower */
	if (tu_sanitized())
		timeout_s *= 4;
	time_t deadline = time(NULL) + timeout_s;
	int killed = 0;
	while (open_fds > 0) {
		int left = (int)(deadline - time(NULL));
		if (left <= 0) {
			kill(-pid, SIGKILL);
			killed = 1;
			break;
		}
		if (poll(fds, 2, left * 1000) < 0 && errno != EINTR)
			break;
		for (int k = 0; k < 2; k++) {
			if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP)))
				continue;
			char buf[65536];
			ssize_t n = read(fds[k].fd, buf, sizeof buf);
			if (n <= 0) {
				close(fds[k].fd);
				fds[k].fd = -1;
				open_fds--;
			} else if (k == 0) {
				append(&out->out, &out->out_len, &ocap, buf, (size_t)n);
			} else {
				append(&out->err, &out->err_len, &ecap, buf, (size_t)n);
			}
		}
	}
	for (int k = 0; k < 2; k++)
		if (fds[k].fd >= 0)
			close(fds[k].fd);
	int st;
	waitpid(pid, &st, 0);
	if (killed)
		out->status = 124;
	else if (WIFEXITED(st))
		out->status = WEXITSTATUS(st);
	else
		out->status = 128 + WTERMSIG(st);
	return 0;
}

void tu_run_free(tu_run *r)
{
	free(r->out);
	free(r->err);
}

char *tu_mkdtemp(void)
{
	const char *t = getenv("TMPDIR");
	char *d;
	if (asprintf(&d, "%s/ppcc-test.XXXXXX", t ? t : "/tmp") < 0)
		return NULL;
	if (!mkdtemp(d)) {
		free(d);
		return NULL;
	}
	return d;
}

static int rm_one(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	chmod(path, 0700);
	return remove(path);
}

void tu_rmtree(const char *dir)
{
	if (dir)
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void tu_rmtree_free(char *dir)
{
	tu_rmtree(dir);
	free(dir);
}

char *tu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	char chunk[65536];
	size_t k;
	buf = calloc(1, 1);
	while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
		append(&buf, &n, &cap, chunk, k);
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

char *tu_read_src(const char *rel)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", tu_src(), rel);
	char *text = tu_read_file(path, NULL);
	ck_assert_msg(text != NULL, "cannot read %s", path);
	return text;
}

void tu_replace_in_file(const char *path, const char *from, const char *to)
{
	char *s = tu_read_file(path, NULL);
	ck_assert_msg(s != NULL, "cannot read %s", path);
	char *at = strstr(s, from);
	ck_assert_msg(at != NULL, "no '%s' in %s", from, path);
	FILE *f = fopen(path, "wb");
	ck_assert_msg(f != NULL, "cannot write %s", path);
	fwrite(s, 1, (size_t)(at - s), f);
	fputs(to, f);
	fputs(at + strlen(from), f);
	ck_assert_int_eq(fclose(f), 0);
	free(s);
}

void tu_write_in(char *path, size_t n, const char *dir, const char *name,
		 const char *text)
{
	int len = snprintf(path, n, "%s/%s", dir, name);
	ck_assert_msg(len >= 0 && (size_t)len < n, "path of %s too long", name);
	ck_assert_msg(tu_write_file(path, text) == 0, "cannot write %s", path);
}

int tu_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t n = strlen(text);
	int ok = fwrite(text, 1, n, f) == n;
	return fclose(f) == 0 && ok ? 0 : -1;
}

int tu_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static void collect(ppcc_severity sev, const ppcc_loc *loc, const char *msg,
		    void *user)
{
	tu_diag *t = user;
	const char *what = sev == PPCC_SEV_ERROR ? "error"
			   : sev == PPCC_SEV_WARNING ? "warning" : "note";
	int n = snprintf(t->text + t->len, sizeof t->text - t->len,
			 "%d:%d: %s: %s\n", loc ? loc->line : 0, loc ? loc->col : 0,
			 what, msg);
	if (n > 0 && t->len + (size_t)n < sizeof t->text)
		t->len += (size_t)n;
}

void tu_diag_init(tu_diag *t)
{
	memset(t, 0, sizeof *t);
	t->d.fn = collect;
	t->d.user = t;
}

int tu_plan_file(ppcc_plan *out, ppcc_arena *a, ppcc_config *cfg,
		 const char *path, tu_diag *diag)
{
	char full[4096];
	snprintf(full, sizeof full, "%s/%s", tu_src(), path);
	int err = ppcc_config_load(cfg, a, full, NULL, &diag->d);
	if (err == 0)
		err = ppcc_config_check(cfg, &diag->d);
	if (err == 0)
		err = ppcc_plan_build(out, a, cfg, &diag->d);
	return err;
}

void tu_plan_action_times(ppcc_plan *p, ppcc_arena *a)
{
	ppcc_estimate full;
	if (ppcc_simulate(&full, a, &p->best.schedule, p->best.costs) != 0)
		abort();
	p->best.estimate.start_ms = full.start_ms;
	p->best.estimate.end_ms = full.end_ms;
}

char *tu_emit(const ppcc_plan *p, int format, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	ck_assert_ptr_nonnull(f);
	ppcc_emit_options o = {.format = format};
	ppcc_diag d = {0};
	int err = ppcc_format_of(format)->emit(f, p, &o, &d);
	ck_assert_int_eq(err, 0);
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

int tu_skip_is_failure(void)
{
	const char *ci = getenv("CI");
	return ci && strcmp(ci, "true") == 0;
}

int tu_mpi_left_out(const char *test)
{
	const char *off = getenv("PPCC_MPI_LEFT_OUT");
	if (!off || strcmp(off, "1") != 0 || ppcc_rt_transport_available(PPCC_RT_MPI))
		return 0;
	fprintf(stderr, "%s: not in this build (HAVE_MPI=0): the MPI transport "
		"answers PPCC_RT_EUNAVAILABLE instead\n", test);
	return 1;
}

void tu_skip(const char *test, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	if (tu_skip_is_failure())
		ck_abort_msg("%s: cannot run here (%s), and CI=true allows no "
			     "skip", test, why);
	fprintf(stderr, "%s: SKIPPED: %s\n", test, why);
}

typedef struct alloc_watch {
	int (*line_fails)(const char *line);
	int failed;
} alloc_watch;

static void alloc_watch_line(int rank, const char *line, void *user)
{
	alloc_watch *w = user;
	(void)rank;
	if (w->line_fails && w->line_fails(line))
		w->failed = 1;
}

/* One try of tu_rt_alloc_failures, in the child: its exit status. */
static int alloc_try(int n, int grouped, alloc_watch *w)
{
	char v[16];
	snprintf(v, sizeof v, "%d", n);
	setenv("PPCC_FAIL_ALLOC", v, 1);
	ppcc_arena *a = ppcc_arena_new();
	rt_pipe *pp = rt_pipe_new(2, 3, 2, 0);
	ppcc_schedule s;
	ppcc_rt_stage_fns fns[2];
	int err = PPCC_RT_ENOMEM;
	ppcc_stage_info st[2];
	rt_pipe_stage_table(pp, st);
	if (a && ppcc_schedule_build(&s, a, PPCC_SCHED_1F1B, 2, 1, 3, 0, st) == 0) {
		rt_pipe_fns(pp, fns);
		ppcc_rt_options o = PPCC_RT_OPTIONS_INIT;
		o.debug = 1;
		o.grouped = grouped;
		o.timeout_s = 10;
		o.diag = alloc_watch_line;
		o.diag_user = w;
		err = ppcc_rt_run_local(NULL, &s, fns, &o);
	}
	rt_pipe_free(pp);
	ppcc_arena_free(a);
	if (w->failed)
		return 3;
	return err == 0 ? 0 : err == PPCC_RT_ENOMEM ? 1 : 2;
}

void tu_rt_alloc_failures(const char *test, int max_n, int grouped,
			  int (*line_fails)(const char *line),
			  const char *fails)
{
	int n, last = -1;
	const char *fork_mode = getenv("CK_FORK");
	if (fork_mode && strcmp(fork_mode, "no") == 0) {
		/* PPCC_FAIL_ALLOC is read at a process's first allocation:
		 * under CK_FORK=no this one has allocated, so its children
		 * cannot arm it */
		tu_skip(test, "needs CK_FORK (this run has CK_FORK=no)");
		return;
	}
	for (n = 1; n < max_n; n++) {
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			alloc_watch w = {line_fails, 0};
			exit(alloc_try(n, grouped, &w));
		}
		int status;
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFEXITED(status), "allocation %d: killed by signal %d", n,
			      WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		last = WEXITSTATUS(status);
		ck_assert_msg(last != 3, "allocation %d: %s", n, fails);
		ck_assert_msg(last == 0 || last == 1, "allocation %d: exit %d", n, last);
		if (last == 0)
			break;
	}
	ck_assert_msg(last == 0 && n > 10, "never succeeded (%d tries)", n);
}

void tu_header_compiles_alone(const char *test, const char *source)
{
	char *dir = tu_mkdtemp(), path[4096], inc[4096];
	ck_assert_ptr_nonnull(dir);
	snprintf(path, sizeof path, "%s/use.c", dir);
	snprintf(inc, sizeof inc, "-I%s/include", tu_src());
	ck_assert_int_eq(tu_write_file(path, source), 0);
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	char *c_argv[] = {(char *)cc, "-std=c11", "-pedantic", "-Werror", "-Wall",
			  "-Wextra", inc, "-fsyntax-only", path, NULL};
	tu_run r;
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, c_argv), 0);
	ck_assert_msg(r.status == 0, "C11: %s", r.err);
	tu_run_free(&r);
	char *cxx_argv[] = {"c++", "-std=c++11", "-pedantic", "-Werror", "-Wall",
			    "-Wextra", inc, "-x", "c++", "-fsyntax-only", path, NULL};
	ck_assert_int_eq(tu_run_argv(&r, NULL, NULL, NULL, 60, cxx_argv), 0);
	if (r.status == 127)
		tu_skip(test, "no c++ compiler (package build-essential)");
	else
		ck_assert_msg(r.status == 0, "C++: %s", r.err);
	tu_run_free(&r);
	tu_rmtree_free(dir);
}

uint64_t tu_rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double tu_rng_uniform(uint64_t *state, double lo, double hi)
{
	return lo + (hi - lo) * (double)(tu_rng_next(state) >> 11) / 9007199254740992.0;
}

int tu_rng_int(uint64_t *state, int lo, int hi)
{
	return lo + (int)(tu_rng_next(state) % (uint64_t)(hi - lo + 1));
}

void tu_assert_rebuilt_schedule(const ppcc_schedule *s, ppcc_arena *a,
				int group_size, const ppcc_stage_info *stages,
				const char *what)
{
	ppcc_schedule b;
	ck_assert_int_eq(ppcc_schedule_build(&b, a, s->kind, s->n_ranks,
					     s->n_chunks, s->n_microbatches,
					     group_size, stages), 0);
	ck_assert_msg(b.fingerprint == s->fingerprint, "%s", what);
	ck_assert_msg(memcmp(b.stages, s->stages,
			     (size_t)s->n_stages * sizeof *s->stages) == 0, "%s", what);
	for (int r = 0; r < s->n_ranks; r++) {
		ck_assert_int_eq(b.ranks[r].n_actions, s->ranks[r].n_actions);
		ck_assert_msg(memcmp(b.ranks[r].actions, s->ranks[r].actions,
				     (size_t)s->ranks[r].n_actions *
					     sizeof *s->ranks[r].actions) == 0,
			      "%s rank %d", what, r);
	}
}

void tu_build_path(char *out, size_t n, const char *rel)
{
	const char *b = getenv("PPCC_BUILD");
	if (b) {
		snprintf(out, n, "%s/%s", b, rel);
		return;
	}
	char exe[2048];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[k > 0 ? k : 0] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(out, n, "%s/%s", k > 0 ? exe : "build", rel);
}

static int cmp_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *tu_sorted_lines(const char *prefix, int from)
{
	char *all = NULL, path[4096 + 16];
	size_t len = 0;
	for (int k = -1; k < 16; k++) {
		if (k < 0)
			snprintf(path, sizeof path, "%s", prefix);
		else
			snprintf(path, sizeof path, "%s.%d", prefix, k);
		size_t n;
		char *t = tu_read_file(path, &n);
		if (!t)
			continue;
		all = realloc(all, len + n + 2);
		ck_assert_ptr_nonnull(all);
		memcpy(all + len, t, n);
		len += n;
		if (n && t[n - 1] != '\n')
			all[len++] = '\n';
		all[len] = '\0';
		free(t);
	}
	if (!all)
		return calloc(1, 1);
	size_t n_lines = 0;
	for (char *q = all; *q; q++)
		n_lines += *q == '\n';
	char **lines = calloc(n_lines + 1, sizeof *lines);
	ck_assert_ptr_nonnull(lines);
	size_t k = 0;
	for (char *q = strtok(all, "\n"); q; q = strtok(NULL, "\n")) {
		int step;
		if (sscanf(q, "loss %d ", &step) == 1 && step < from)
			continue;
		lines[k++] = q;
	}
	qsort(lines, k, sizeof *lines, cmp_lines);
	char *out = calloc(len + 2, 1);
	ck_assert_ptr_nonnull(out);
	size_t o = 0;
	for (size_t i = 0; i < k; i++) {
		size_t l = strlen(lines[i]);
		memcpy(out + o, lines[i], l);
		o += l;
		out[o++] = '\n';
	}
	free(lines);
	free(all);
	return out;
}

void tu_plan_json(char *out, size_t n, const char *dir, const char *example)
{
	char model[4096];
	snprintf(model, sizeof model, "%s/examples/%s", tu_src(), example);
	snprintf(out, n, "%s/plan.json", dir);
	tu_run r;
	TU_PPCC(&r, "plan", model, "-f", "json", "-o", out);
	ck_assert_msg(r.status == 0, "%s", r.err);
	tu_run_free(&r);
}

int tu_plan_text(ppcc_plan *out, ppcc_arena *a, ppcc_config *cfg,
		 const char *yaml, tu_diag *diag)
{
	char *dir = tu_mkdtemp(), path[4096];
	ck_assert_ptr_nonnull(dir);
	tu_write_in(path, sizeof path, dir, "m.yaml", yaml);
	tu_diag_init(diag);
	int err = ppcc_config_load(cfg, a, path, NULL, &diag->d);
	if (err == 0)
		err = ppcc_config_check(cfg, &diag->d);
	if (err == 0)
		err = ppcc_plan_build(out, a, cfg, &diag->d);
	tu_rmtree_free(dir);
	return err;
}
