/*
 * output.c - the command line's diagnostics and its output, which
 * appears whole or not at all (see cli.h).
 *
 * The output is built in an unnamed file (O_TMPFILE) in the target's
 * directory, given a temporary name only once complete, and renamed over
 * the target: a run killed at any point leaves the target as it was and,
 * except in the instant between link and rename, no stray file.  Where
 * O_TMPFILE is not supported a named temporary file is used, removed on
 * SIGINT, SIGTERM and SIGHUP (the one name a signal handler reads, so it
 * is the file's own, not the caller's).  A target that exists and is not
 * a regular file (a terminal, /dev/null, a pipe) is written in place.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "diagnose/diagnose.h"

/* User text (paths, names in messages) on one line: a control character
 * is shown as \xNN, so that no name can forge a line or a terminal
 * escape, and an invisible or direction-changing one as <U+XXXX>. */
static void put_clean(const char *s)
{
	ppcc_fput_visible(stderr, s);
}

void ppcc_cli_print_diag(ppcc_severity sev, const ppcc_loc *loc,
			 const char *msg, void *user)
{
	(void)user;
	const char *what = sev == PPCC_SEV_ERROR ? "error"
			   : sev == PPCC_SEV_WARNING ? "warning" : "note";
	fputs("ppcc: ", stderr);
	if (loc && loc->file) {
		put_clean(loc->file);
		/* the input --model and --devices make has no lines the
		 * user wrote: its name alone */
		if (loc->line > 0 && strcmp(loc->file, PPCC_COMMAND_LINE) != 0)
			fprintf(stderr, ":%d:%d", loc->line, loc->col);
		fputs(": ", stderr);
	}
	fprintf(stderr, "%s: ", what);
	put_clean(msg);
	fputc('\n', stderr);
}

void ppcc_cli_cannot_write(const char *path, int err)
{
	char msg[256];
	ppcc_loc loc = {strcmp(path, "-") == 0 ? "<stdout>" : path, 0, 0};
	snprintf(msg, sizeof msg, "cannot write: %s", strerror(err));
	ppcc_cli_print_diag(PPCC_SEV_ERROR, &loc, msg, NULL);
}

void ppcc_cli_report_export(const ppcc_format_info *fi, const ppcc_plan *plan)
{
	char what[512], msg[600];
	if (!fi->reports)
		return;
	ppcc_format_summary(what, sizeof what, plan);
	snprintf(msg, sizeof msg, "wrote %s for %s", fi->name, what);
	fflush(stdout);
	ppcc_cli_print_diag(PPCC_SEV_NOTE, NULL, msg, NULL);
}

static char tmp_path[PATH_MAX];
static volatile sig_atomic_t tmp_live;

static void on_signal(int sig)
{
	if (tmp_live)
		unlink(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* DIR.NAME.XXXXXX for mkstemp, or -1 when it would not fit. */
static int temp_name(const ppcc_cli_output *o)
{
	const char *slash = strrchr(o->path, '/');
	const char *base = slash ? slash + 1 : o->path;
	size_t nd = strlen(o->dir), nb = strlen(base);
	if (nd + 1 + nb + sizeof ".XXXXXX" > sizeof tmp_path)
		return -1;
	char *q = tmp_path;
	memcpy(q, o->dir, nd);
	q += nd;
	*q++ = '.';
	memcpy(q, base, nb);
	memcpy(q + nb, ".XXXXXX", sizeof ".XXXXXX");
	return 0;
}

/* Where writing to the symbolic link `path` puts the bytes, as the
 * shell's > finds it: the chain of links followed (each relative one from
 * its own directory) to a path that is not a link, which need not exist
 * (a dangling link creates its target, so the link stays a link).  -1
 * with ELOOP after 40 links, as the kernel counts them, or ENAMETOOLONG. */
static int link_target(char out[PATH_MAX], const char *path)
{
	char cur[PATH_MAX], target[PATH_MAX];
	struct stat st;
	if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (int hops = 0; hops <= 40; hops++) {
		if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) {
			memcpy(out, cur, sizeof cur);
			return 0;
		}
		ssize_t n = readlink(cur, target, sizeof target - 1);
		if (n < 0)
			return -1;
		target[n] = '\0';
		const char *slash = strrchr(cur, '/');
		int dirlen = target[0] == '/' || !slash ? 0
			     : (int)(slash - cur + 1);
		char next[PATH_MAX];
		if (snprintf(next, sizeof next, "%.*s%s", dirlen, cur, target) >=
		    (int)sizeof next) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(cur, next, sizeof cur);
	}
	errno = ELOOP;
	return -1;
}

int ppcc_cli_output_open(ppcc_cli_output *o, const char *path)
{
	struct stat st;
	memset(o, 0, sizeof *o);
	o->path = path;
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		o->in_place = 1;
		return 0;
	}
	/* A link is followed: its target is what gets replaced. */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		if (link_target(o->resolved, path) < 0)
			return -1;
		o->path = path = o->resolved;
	}
	int exists = stat(path, &st) == 0;
	if (exists && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return -1;
		}
		o->f = fopen(path, "wb");
		o->in_place = 1;
		return o->f ? 0 : -1;
	}
	/* Like the shell's >: a file one may not write is not replaced. */
	if (exists && access(path, W_OK) != 0)
		return -1;
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	if (dirlen >= (int)sizeof o->dir)
		dirlen = -1;
	else
		snprintf(o->dir, sizeof o->dir, "%.*s", dirlen, path);
	if (dirlen < 0 || temp_name(o) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	mode_t mask = umask(0);
	umask(mask);
	mode_t mode = exists ? st.st_mode & 07777 : 0666 & ~mask;
	int fd = -1;
#ifdef O_TMPFILE
	/* linkat needs /proc/self/fd to give the file its name. */
	if (access("/proc/self/fd", X_OK) == 0) {
		fd = open(dirlen ? o->dir : ".", O_TMPFILE | O_WRONLY | O_CLOEXEC,
			  mode);
		o->anonymous = fd >= 0;
		if (fd >= 0)
			fchmod(fd, mode);
	}
#endif
	if (fd < 0) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		signal(SIGHUP, on_signal);
		if ((fd = mkstemp(tmp_path)) < 0)
			return -1;
		tmp_live = 1;
		fchmod(fd, mode);
	}
	if (!(o->f = fdopen(fd, "wb"))) {
		int e = errno;
		close(fd);
		if (tmp_live)
			unlink(tmp_path);
		tmp_live = 0;
		errno = e;
		return -1;
	}
	return 0;
}

int ppcc_cli_output_close(ppcc_cli_output *o, int ok)
{
	int e = 0;
	if (o->f == stdout) {
		if (fflush(stdout) != 0 || ferror(stdout))
			return -1;
		return 0;
	}
	if (fflush(o->f) != 0 || ferror(o->f))
		e = errno ? errno : EIO;
	if (!o->in_place && !e && fsync(fileno(o->f)) != 0)
		e = errno;
	if (ok && !e && o->anonymous) {
		char proc[64];
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", fileno(o->f));
		/* a fresh random name for the link */
		int tries = 0;
		do {
			temp_name(o);
			char *x = tmp_path + strlen(tmp_path) - 6;
			unsigned long r = (unsigned long)getpid() * 2654435761u +
					  (unsigned long)time(NULL) * 40503u +
					  (unsigned long)tries * 7919u;
			for (int i = 0; i < 6; i++, r /= 36)
				x[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[r % 36];
			if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp_path, AT_SYMLINK_FOLLOW) == 0) {
				tmp_live = 1;
				break;
			}
		} while (errno == EEXIST && ++tries < 100);
		if (!tmp_live)
			e = errno;
	}
	if (fclose(o->f) != 0 && !e)
		e = errno;
	if (ok && !e && !o->in_place && rename(tmp_path, o->path) != 0)
		e = errno;
	if ((!ok || e) && tmp_live)
		unlink(tmp_path);
	tmp_live = 0;
	if (e) {
		errno = e;
		return -1;
	}
	return ok ? 0 : -1;
}

int ppcc_cli_write_output(const char *path, const char *buf, size_t len)
{
	ppcc_cli_output out;
	if (!path)
		path = "-";
	if (ppcc_cli_output_open(&out, path) < 0) {
		ppcc_cli_cannot_write(path, errno);
		return EXIT_OUTPUT;
	}
	errno = 0;
	int ok, e = 0;
	if (out.f == stdout) {
		/* the whole output in one write(2) where the kernel takes it
		 * so (a pipe takes 64 KiB): `ppcc ... | head` reads it whole
		 * before it can go away between two writes */
		ok = fflush(stdout) == 0;
		for (size_t at = 0; ok && at < len;) {
			ssize_t n = write(STDOUT_FILENO, buf + at, len - at);
			if (n < 0 && errno == EINTR)
				continue;
			ok = n > 0;
			at += ok ? (size_t)n : 0;
		}
	} else {
		ok = fwrite(buf, 1, len, out.f) == len;
	}
	e = ok ? 0 : errno ? errno : EIO;
	errno = 0;
	if (ppcc_cli_output_close(&out, ok) < 0 || !ok) {
		ppcc_cli_cannot_write(path, e ? e : errno ? errno : EIO);
		return EXIT_OUTPUT;
	}
	return EXIT_OK;
}

int ppcc_cli_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return strcmp(a, "-") != 0 && strcmp(b, "-") != 0 &&
	       stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int ppcc_cli_is_flight_record(const char *path, const char *dir)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strcmp(path, "-") == 0 || !ppcc_diagnose_is_record_name(base))
		return 0;
	char parent[4096];
	size_t plen = (size_t)(base - path);
	if (plen >= sizeof parent)
		return 0;
	memcpy(parent, path, plen);
	parent[plen] = '\0';
	return ppcc_cli_same_file(plen ? parent : ".", dir);
}
