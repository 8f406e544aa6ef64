/*
 * checkpoint.c - per-layer checkpoints that load under any plan.
 *
 * The layout and its guarantees are in ppcc/checkpoint.h.  Every file
 * goes through ck_write_atomic (temporary name, fsync, rename, fsync of
 * the directory), so a file is either absent, its old self or whole.  A
 * step directory becomes the checkpoint when LATEST names it, and LATEST
 * is replaced only after ppcc_ckpt_commit has read back and checked every
 * shard of the step and written its manifest; a loader trusts nothing
 * else, so a save that died half way is invisible.
 *
 * A shard is checked, in this order, against the manifest (size, then
 * CRC-32), against its own trailer, then parsed: a flipped byte anywhere
 * or a shorter file is caught before any header field is believed.
 * Reading trusts the file system no more: ck_open refuses anything but
 * a regular file without blocking on it, each caller checks the size
 * fstat gives against its limit before a byte is allocated, and ck_load
 * reads exactly that many bytes, in bounded reads, until the timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"
#include "ppcc/checkpoint.h"

#define CK_NAME_MAX 255
#define CK_TRAILER_BYTES 15 /* "crc32 xxxxxxxx\n" */
#define CK_LATEST_MAX 64    /* "step-NNNNNNNNNNNN\n" is 18 */
#define CK_READ_CHUNK (1u << 20)
#define CK_TENSOR_LINE_MIN 14 /* "tensor a u8 1\n" */

/* The longest MANIFEST of n layers: four header lines (a name of at most
 * CK_NAME_MAX), the trailer, and at most 70 bytes a shard line. */
static uint64_t ck_manifest_max(int32_t n_layers)
{
	return 512 + 80 * (uint64_t)(n_layers > 0 ? n_layers : 0);
}

/* ---- reports, checksums ------------------------------------------------------ */

static void ck_report(const ppcc_ckpt_model *m, const char *fmt, ...)
	PPCC_PRINTF(2, 3);

static void ck_report(const ppcc_ckpt_model *m, const char *fmt, ...)
{
	char line[1024];
	int n = snprintf(line, sizeof line, "ppcc-ckpt: ");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	if (m && m->version >= 1 && m->version <= PPCC_CKPT_VERSION && m->diag)
		m->diag(m->rank, line, m->diag_user);
	else
		fprintf(stderr, "%s\n", line);
}

/* The model's counts, NULL for a version-1 model or none. */
static ppcc_ckpt_counts *ck_counts(const ppcc_ckpt_model *m)
{
	return m && m->version >= 2 ? m->counts : NULL;
}

/* n zeroed objects of size bytes, counted. */
static void *ck_calloc(const ppcc_ckpt_model *m, size_t n, size_t size)
{
	void *p = ppcc_calloc(n, size);
	ppcc_ckpt_counts *c = ck_counts(m);
	if (p && c)
		c->bytes_allocated += (uint64_t)n * size;
	return p;
}

static uint32_t ck_table[256];
static pthread_once_t ck_table_once = PTHREAD_ONCE_INIT;

static void ck_table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		ck_table[i] = c;
	}
}

/* CRC-32 as zlib computes it (reflected 0xEDB88320). */
static uint32_t ck_crc32(const void *p, size_t n)
{
	pthread_once(&ck_table_once, ck_table_init);
	const uint32_t *table = ck_table;
	const unsigned char *b = p;
	uint32_t c = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++)
		c = table[(c ^ b[i]) & 0xFF] ^ (c >> 8);
	return c ^ 0xFFFFFFFFu;
}

static const char *ck_dtype_name(int dtype)
{
	switch (dtype) {
	case PPCC_CKPT_F32: return "f32";
	case PPCC_CKPT_F64: return "f64";
	case PPCC_CKPT_I32: return "i32";
	case PPCC_CKPT_I64: return "i64";
	case PPCC_CKPT_U8: return "u8";
	}
	return NULL;
}

static size_t ck_dtype_bytes(int dtype)
{
	switch (dtype) {
	case PPCC_CKPT_F32: case PPCC_CKPT_I32: return 4;
	case PPCC_CKPT_F64: case PPCC_CKPT_I64: return 8;
	case PPCC_CKPT_U8: return 1;
	}
	return 0;
}

static int ck_dtype_of(const char *name)
{
	for (int d = 0; d <= PPCC_CKPT_U8; d++)
		if (strcmp(name, ck_dtype_name(d)) == 0)
			return d;
	return -1;
}

static int ck_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > CK_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

static int ck_little_endian(void)
{
	uint16_t one = 1;
	unsigned char b;
	memcpy(&b, &one, 1);
	return b == 1;
}

/* Bytes of a tensor's data; 0 when its shape is not valid. */
static uint64_t ck_tensor_bytes(const ppcc_ckpt_tensor *t)
{
	size_t eb = ck_dtype_bytes(t->dtype);
	if (!eb || t->n_dims < 1 || t->n_dims > PPCC_CKPT_MAX_DIMS)
		return 0;
	uint64_t n = eb;
	for (int d = 0; d < t->n_dims; d++) {
		if (t->dims[d] <= 0 || (uint64_t)t->dims[d] > (UINT64_MAX >> 2) / n)
			return 0;
		n *= (uint64_t)t->dims[d];
	}
	return n;
}

/* ---- a growable text buffer ----------------------------------------------------- */

typedef struct ck_buf {
	char *p;
	size_t n, cap;
	int oom;
} ck_buf;

static void ck_put(ck_buf *b, const void *src, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *p = ppcc_realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, src, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void ck_printf(ck_buf *b, const char *fmt, ...) PPCC_PRINTF(2, 3);

static void ck_printf(ck_buf *b, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof line)
		b->oom = 1;
	else
		ck_put(b, line, (size_t)n);
}

/* Appends the trailer line: the CRC-32 of everything so far. */
static void ck_seal(ck_buf *b)
{
	uint32_t crc = b->oom ? 0 : ck_crc32(b->p, b->n);
	ck_printf(b, "crc32 %08" PRIx32 "\n", crc);
}

/* ---- files -------------------------------------------------------------------- */

/* Bytes written by this process, for $PPCC_CKPT_KILL_AT (process-wide by
 * its contract; atomic, as ranks on threads save at once). */
static _Atomic long long ck_written;

/* write(2) in full; with $PPCC_CKPT_KILL_AT, dies at that many bytes. */
static int ck_write_all(int fd, const char *p, size_t n)
{
	const char *e = getenv("PPCC_CKPT_KILL_AT");
	long long kill_at = e && *e ? atoll(e) : -1;
	while (n > 0) {
		size_t chunk = n;
		long long done = atomic_load(&ck_written);
		if (kill_at >= 0 && done + (long long)chunk >= kill_at)
			chunk = (size_t)(kill_at > done ? kill_at - done : 0);
		if (chunk == 0 && kill_at >= 0) {
			fsync(fd);
			raise(SIGKILL);
		}
		ssize_t w = write(fd, p, chunk);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		atomic_fetch_add(&ck_written, (long long)w);
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int ck_fsync_dir(const char *path)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof dir, ".");
	int fd = open(dir, O_RDONLY);
	if (fd < 0)
		return -1;
	int err = fsync(fd);
	close(fd);
	return err;
}

/* path replaced by n bytes of p, or left as it was. */
static int ck_write_atomic(const ppcc_ckpt_model *m, const char *path,
			   const char *p, size_t n)
{
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		ck_report(m, "%s: error: cannot write: %s", tmp, strerror(errno));
		return PPCC_RT_EIO;
	}
	if (ck_write_all(fd, p, n) < 0 || fsync(fd) < 0) {
		ck_report(m, "%s: error: cannot write: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return PPCC_RT_EIO;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0 || ck_fsync_dir(path) < 0) {
		ck_report(m, "%s: error: cannot write: %s", path, strerror(errno));
		unlink(tmp);
		return PPCC_RT_EIO;
	}
	return 0;
}

static int ck_mkdir(const ppcc_ckpt_model *m, const char *path)
{
	if (mkdir(path, 0755) == 0) {
		ck_fsync_dir(path);
		return 0;
	}
	struct stat sb;
	if (errno == EEXIST && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		return 0;
	ck_report(m, "%s: error: cannot create the directory: %s", path,
		  strerror(errno));
	return PPCC_RT_EIO;
}

static const char *ck_file_kind(mode_t mode)
{
	return S_ISDIR(mode) ? "a directory"
	       : S_ISCHR(mode) ? "a character device"
	       : S_ISBLK(mode) ? "a block device"
	       : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISSOCK(mode) ? "a socket" : "a special file";
}

/* Opens path, which must be a regular file, and gives its size.  The open
 * does not block (O_NONBLOCK: a FIFO without a writer, a device) and
 * anything else is refused by name before a byte of it is read.  On
 * failure, reported: PPCC_RT_EIO, *out_errno the open's errno (0 when
 * the file was there but not regular). */
static int ck_open(int *out_fd, uint64_t *out_size, int *out_errno,
		   const ppcc_ckpt_model *m, const char *path)
{
	struct stat sb;
	*out_fd = -1;
	*out_errno = 0;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		*out_errno = errno;
		ck_report(m, "%s: error: cannot read: %s", path, strerror(errno));
		return PPCC_RT_EIO;
	}
	if (fstat(fd, &sb) < 0) {
		*out_errno = errno;
		ck_report(m, "%s: error: cannot read: %s", path, strerror(errno));
		close(fd);
		return PPCC_RT_EIO;
	}
	if (!S_ISREG(sb.st_mode)) {
		ck_report(m, "%s: error: %s, not a regular file", path,
			  ck_file_kind(sb.st_mode));
		close(fd);
		return PPCC_RT_EIO;
	}
	int flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	ppcc_ckpt_counts *c = ck_counts(m);
	if (c)
		c->files_opened++;
	*out_fd = fd;
	*out_size = (uint64_t)sb.st_size;
	return 0;
}

/* Reads the size bytes fstat gave for fd (opened by ck_open; closed
 * here) into *out (ppcc_free; a NUL after them), in reads of at most
 * CK_READ_CHUNK bytes, the timeout checked before each.  A file that
 * turns out shorter or longer than size is PPCC_RT_ECHECKSUM. */
static int ck_load(char **out, const ppcc_ckpt_model *m, const char *path,
		   int fd, uint64_t size)
{
	ppcc_ckpt_counts *c = ck_counts(m);
	double timeout = ppcc_rt_timeout_of(m && m->version >= 2 ? m->timeout_s : 0);
	double deadline = ppcc_rt_now() + timeout;
	char *p = NULL;
	uint64_t got = 0;
	int err = 0;
	*out = NULL;
	if (size >= SIZE_MAX || !(p = ck_calloc(m, (size_t)size + 1, 1))) {
		ck_report(m, "%s: error: out of memory for its %" PRIu64 " bytes",
			  path, size);
		err = PPCC_RT_ENOMEM;
		goto out;
	}
	/* one byte past size: a file that grew is not read to its end */
	char extra;
	while (got <= size) {
		if (ppcc_rt_now() > deadline) {
			ck_report(m, "%s: error: timeout: %" PRIu64 " of %" PRIu64
				  " bytes read when the %g s timeout passed", path, got,
				  size, timeout);
			err = PPCC_RT_ETIMEOUT;
			goto out;
		}
		uint64_t left = size - got;
		size_t want = left > CK_READ_CHUNK ? CK_READ_CHUNK : (size_t)left;
		ssize_t k = left ? read(fd, p + got, want) : read(fd, &extra, 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			ck_report(m, "%s: error: cannot read: %s", path, strerror(errno));
			err = PPCC_RT_EIO;
			goto out;
		}
		if (k == 0)
			break;
		got += (uint64_t)k;
		if (c)
			c->bytes_read += (uint64_t)k;
	}
	if (got > size) {
		ck_report(m, "%s: error: changed while being read: more than %"
			  PRIu64 " bytes", path, size);
		err = PPCC_RT_ECHECKSUM;
	} else if (got < size) {
		ck_report(m, "%s: error: changed while being read: %" PRIu64
			  " bytes, not %" PRIu64, path, got, size);
		err = PPCC_RT_ECHECKSUM;
	}
out:
	close(fd);
	if (err < 0) {
		ppcc_free(p);
		return err;
	}
	*out = p;
	return 0;
}

/* path (a regular file of at most max bytes, `what` naming the limit in
 * the message) into *out and *out_n, as ck_load. */
static int ck_read(char **out, size_t *out_n, const ppcc_ckpt_model *m,
		   const char *path, uint64_t max, const char *what)
{
	int fd, err, e;
	uint64_t size;
	*out = NULL;
	if ((err = ck_open(&fd, &size, &e, m, path)) < 0)
		return err;
	if (size > max) {
		ck_report(m, "%s: error: %" PRIu64 " bytes; %s is at most %" PRIu64,
			  path, size, what, max);
		close(fd);
		return PPCC_RT_ECHECKSUM;
	}
	if ((err = ck_load(out, m, path, fd, size)) < 0)
		return err;
	*out_n = (size_t)size;
	return 0;
}

static void ck_step_dir(char *out, size_t n, const char *dir, uint64_t step)
{
	snprintf(out, n, "%s/step-%012" PRIu64, dir, step);
}

static void ck_shard_path(char *out, size_t n, const char *dir, uint64_t step,
			  int layer)
{
	snprintf(out, n, "%s/step-%012" PRIu64 "/layer-%04d.shard", dir, step,
		 layer);
}

/* ---- line parsing -------------------------------------------------------------- */

typedef struct ck_lines {
	const char *p, *end;
	int line; /* of the line last returned */
	char cur[CK_NAME_MAX * 2 + 128];
} ck_lines;

/* The next line into l->cur (without its newline); 0 at the end or when
 * the line is too long or unterminated (*bad set then). */
static int ck_next(ck_lines *l, int *bad)
{
	*bad = 0;
	if (l->p >= l->end)
		return 0;
	const char *nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
	l->line++;
	if (!nl || (size_t)(nl - l->p) >= sizeof l->cur) {
		*bad = 1;
		return 0;
	}
	memcpy(l->cur, l->p, (size_t)(nl - l->p));
	l->cur[nl - l->p] = '\0';
	l->p = nl + 1;
	return 1;
}

/* Whether the whole line matches fmt with `want` conversions (%n last). */
#define CK_SCAN(l, want, fmt, ...)                                        \
	(ck_scan_end = -1,                                                \
	 sscanf((l)->cur, fmt "%n", __VA_ARGS__, &ck_scan_end) == (want) && \
		 ck_scan_end == (int)strlen((l)->cur))

/* ---- the stage table ---------------------------------------------------------- */

int ppcc_ckpt_layers_of(int *out_owned, int32_t n_layers,
			const ppcc_schedule *s, int rank)
{
	if (!out_owned || !s || n_layers < 1 || s->n_stages < 1)
		return PPCC_RT_EINPUT;
	int next = 0, count = 0;
	for (int32_t l = 0; l < n_layers; l++)
		out_owned[l] = 0;
	for (int32_t k = 0; k < s->n_stages; k++) {
		const ppcc_stage_info *si = &s->stages[k];
		if (si->first_layer != next || si->last_layer < si->first_layer ||
		    si->last_layer >= n_layers)
			return PPCC_RT_EINPUT;
		next = si->last_layer + 1;
		if (si->rank != rank)
			continue;
		for (int32_t l = si->first_layer; l <= si->last_layer; l++)
			out_owned[l] = 1;
		count += si->last_layer - si->first_layer + 1;
	}
	return next == n_layers ? count : PPCC_RT_EINPUT;
}

/* ---- save ------------------------------------------------------------------- */

static int ck_model_ok(const ppcc_ckpt_model *m, const char *dir)
{
	if (!m || m->version < 1 || m->version > PPCC_CKPT_VERSION ||
	    !ck_name_ok(m->name) || m->n_layers < 1 || !dir || !*dir) {
		ck_report(m, "error: invalid model description or directory");
		return PPCC_RT_EINPUT;
	}
	if (m->version >= 2 && !isfinite(m->timeout_s)) {
		ck_report(m, "error: the timeout_s of model '%s' is %s: a timeout "
			  "must be a finite number of seconds", m->name,
			  isnan(m->timeout_s) ? "not a number" : "infinite");
		return PPCC_RT_EINPUT;
	}
	return 0;
}

int ppcc_ckpt_save_layer(const ppcc_ckpt_model *m, const char *dir,
			 uint64_t step, const ppcc_ckpt_layer *layer)
{
	char path[4096];
	int err;
	if ((err = ck_model_ok(m, dir)) < 0)
		return err;
	if (!layer || layer->version < 1 || layer->version > PPCC_CKPT_VERSION ||
	    layer->layer < 0 ||
	    layer->layer >= m->n_layers || !ck_name_ok(layer->name) ||
	    layer->n_tensors < 1 ||
	    layer->n_tensors > 1000 || !layer->tensors) {
		ck_report(m, "error: invalid layer %d", layer ? (int)layer->layer : -1);
		return PPCC_RT_EINPUT;
	}
	ck_buf b = {0};
	ck_printf(&b, "ppcc-checkpoint-shard 1\nendian %s\nmodel %s\nlayers %" PRId32
		  "\nlayer %" PRId32 " %s\nstep %" PRIu64 "\ntensors %" PRId32 "\n",
		  ck_little_endian() ? "little" : "big", m->name, m->n_layers,
		  layer->layer, layer->name, step, layer->n_tensors);
	uint64_t payload = 0;
	for (int32_t t = 0; t < layer->n_tensors; t++) {
		const ppcc_ckpt_tensor *x = &layer->tensors[t];
		uint64_t nb = ck_tensor_bytes(x);
		if (!ck_name_ok(x->name) || !nb || !x->data) {
			ck_report(m, "error: layer %" PRId32 ": invalid tensor %d",
				  layer->layer, (int)t);
			ppcc_free(b.p);
			return PPCC_RT_EINPUT;
		}
		ck_printf(&b, "tensor %s %s", x->name, ck_dtype_name(x->dtype));
		for (int d = 0; d < x->n_dims; d++)
			ck_printf(&b, " %" PRId64, x->dims[d]);
		ck_printf(&b, "\n");
		payload += nb;
	}
	ck_printf(&b, "payload %" PRIu64 "\n", payload);
	for (int32_t t = 0; t < layer->n_tensors; t++)
		ck_put(&b, layer->tensors[t].data,
		       (size_t)ck_tensor_bytes(&layer->tensors[t]));
	ck_seal(&b);
	if (b.oom) {
		ppcc_free(b.p);
		ck_report(m, "error: out of memory");
		return PPCC_RT_ENOMEM;
	}
	if ((err = ck_mkdir(m, dir)) == 0) {
		ck_step_dir(path, sizeof path, dir, step);
		err = ck_mkdir(m, path);
	}
	if (err == 0) {
		ck_shard_path(path, sizeof path, dir, step, layer->layer);
		err = ck_write_atomic(m, path, b.p, b.n);
	}
	ppcc_free(b.p);
	return err;
}

/* ---- a shard, parsed ------------------------------------------------------------ */

typedef struct ck_shard {
	char model[CK_NAME_MAX + 1];
	int32_t n_layers, layer;
	char name[CK_NAME_MAX + 1];
	uint64_t step;
	int32_t n_tensors;
	ppcc_ckpt_tensor *tensors; /* names in `names` */
	char (*names)[CK_NAME_MAX + 1];
	const char *payload;
	uint64_t payload_bytes;
	uint32_t crc; /* the trailer's */
} ck_shard;

static void ck_shard_free(ck_shard *sh)
{
	ppcc_free(sh->tensors);
	ppcc_free(sh->names);
	sh->tensors = NULL;
	sh->names = NULL;
}

/* Parses and checks the framing of the n bytes of path (its header, the
 * payload size, the trailer and its CRC).  ECHECKSUM, reported. */
static int ck_shard_parse(ck_shard *sh, const ppcc_ckpt_model *m,
			  const char *path, const char *p, size_t n)
{
	ck_lines l = {p, p + n, 0, {0}};
	int bad, ck_scan_end, version = 0;
	char endian[16], dtype[16];
	memset(sh, 0, sizeof *sh);
#define CK_LINE(want, fmt, ...)                                               \
	do {                                                                   \
		if (!ck_next(&l, &bad)) {                                      \
			ck_report(m, "%s:%d: error: %s", path, l.line,         \
				  bad ? "unreadable header line" :             \
					"truncated: the header ends early");   \
			goto bad;                                              \
		}                                                              \
		if (!CK_SCAN(&l, want, fmt, __VA_ARGS__)) {                    \
			ck_report(m, "%s:%d: error: expected '%s'", path,      \
				  l.line, fmt);                                \
			goto bad;                                              \
		}                                                              \
	} while (0)
	CK_LINE(1, "ppcc-checkpoint-shard %d", &version);
	if (version != 1) {
		ck_report(m, "%s:1: error: shard format %d, this libppcc reads 1",
			  path, version);
		goto bad;
	}
	CK_LINE(1, "endian %15s", endian);
	if (strcmp(endian, ck_little_endian() ? "little" : "big") != 0) {
		ck_report(m, "%s:2: error: written on a %s-endian host", path,
			  endian);
		goto bad;
	}
	CK_LINE(1, "model %255s", sh->model);
	CK_LINE(1, "layers %" SCNd32, &sh->n_layers);
	CK_LINE(2, "layer %" SCNd32 " %255s", &sh->layer, sh->name);
	CK_LINE(1, "step %" SCNu64, &sh->step);
	CK_LINE(1, "tensors %" SCNd32, &sh->n_tensors);
	if (sh->n_tensors < 1 || sh->n_tensors > 1000) {
		ck_report(m, "%s:%d: error: %" PRId32 " tensors", path, l.line,
			  sh->n_tensors);
		goto bad;
	}
	/* the tables below cost 300 bytes a tensor: only as many as the
	 * file has room for lines ("tensor a u8 1\n" is the shortest) */
	if ((size_t)(l.end - l.p) / CK_TENSOR_LINE_MIN < (size_t)sh->n_tensors) {
		ck_report(m, "%s:%d: error: truncated: %" PRId32 " tensors, room "
			  "for %zu lines", path, l.line, sh->n_tensors,
			  (size_t)(l.end - l.p) / CK_TENSOR_LINE_MIN);
		goto bad;
	}
	sh->tensors = ck_calloc(m, (size_t)sh->n_tensors, sizeof *sh->tensors);
	sh->names = ck_calloc(m, (size_t)sh->n_tensors, sizeof *sh->names);
	if (!sh->tensors || !sh->names) {
		ck_report(m, "%s: error: out of memory", path);
		ck_shard_free(sh);
		return PPCC_RT_ENOMEM;
	}
	uint64_t sum = 0;
	for (int32_t t = 0; t < sh->n_tensors; t++) {
		ppcc_ckpt_tensor *x = &sh->tensors[t];
		int64_t *d = x->dims;
		int got = -1;
		if (!ck_next(&l, &bad)) {
			ck_report(m, "%s:%d: error: truncated: the header ends early",
				  path, l.line);
			goto bad;
		}
		got = sscanf(l.cur, "tensor %255s %15s %" SCNd64 " %" SCNd64
			     " %" SCNd64 " %" SCNd64, sh->names[t], dtype, &d[0],
			     &d[1], &d[2], &d[3]);
		x->name = sh->names[t];
		x->dtype = ck_dtype_of(dtype);
		x->n_dims = got - 2;
		if (got < 3 || x->dtype < 0 || !ck_tensor_bytes(x)) {
			ck_report(m, "%s:%d: error: expected 'tensor NAME DTYPE "
				  "DIM...'", path, l.line);
			goto bad;
		}
		/* sum <= n, so the sum cannot wrap into a small payload */
		uint64_t nb = ck_tensor_bytes(x);
		if (nb > (uint64_t)n - sum) {
			ck_report(m, "%s:%d: error: truncated: the tensors so far "
				  "hold %" PRIu64 " bytes more than the file's %zu",
				  path, l.line, nb - ((uint64_t)n - sum), n);
			goto bad;
		}
		sum += nb;
	}
	CK_LINE(1, "payload %" SCNu64, &sh->payload_bytes);
	if (sh->payload_bytes != sum) {
		ck_report(m, "%s:%d: error: payload of %" PRIu64 " bytes, the "
			  "tensors hold %" PRIu64, path, l.line,
			  sh->payload_bytes, sum);
		goto bad;
	}
	size_t head = (size_t)(l.p - p);
	if (n < head || n - head < sh->payload_bytes + CK_TRAILER_BYTES) {
		ck_report(m, "%s: error: truncated: %zu bytes, the header "
			  "promises %" PRIu64, path, n,
			  (uint64_t)head + sh->payload_bytes + CK_TRAILER_BYTES);
		goto bad;
	}
	if (n - head > sh->payload_bytes + CK_TRAILER_BYTES) {
		ck_report(m, "%s: error: %zu bytes after the trailer", path,
			  (size_t)(n - head - sh->payload_bytes - CK_TRAILER_BYTES));
		goto bad;
	}
	sh->payload = p + head;
	l.p = sh->payload + sh->payload_bytes;
	l.line = 0;
	uint32_t crc = 0;
	if (!ck_next(&l, &bad) || !CK_SCAN(&l, 1, "crc32 %8" SCNx32, &crc)) {
		ck_report(m, "%s: error: no 'crc32' trailer", path);
		goto bad;
	}
	sh->crc = crc;
	uint32_t got_crc = ck_crc32(p, n - CK_TRAILER_BYTES);
	if (got_crc != crc) {
		ck_report(m, "%s: error: checksum %08" PRIx32 " does not match "
			  "the stored %08" PRIx32 ": the shard is damaged", path,
			  got_crc, crc);
		goto bad;
	}
	return 0;
bad:
	ck_shard_free(sh);
	return PPCC_RT_ECHECKSUM;
#undef CK_LINE
}

/* The trailer's CRC of a shard without parsing it (n >= trailer). */
static int ck_trailer_crc(uint32_t *out, const char *p, size_t n)
{
	char t[CK_TRAILER_BYTES + 1];
	int end = -1;
	if (n < CK_TRAILER_BYTES || p[n - 1] != '\n')
		return -1;
	memcpy(t, p + n - CK_TRAILER_BYTES, CK_TRAILER_BYTES);
	t[CK_TRAILER_BYTES] = '\0';
	if (sscanf(t, "crc32 %8" SCNx32 "\n%n", out, &end) != 1 ||
	    end != CK_TRAILER_BYTES)
		return -1;
	return 0;
}

/* ---- the manifest ------------------------------------------------------------------ */

typedef struct ck_entry {
	uint64_t bytes;
	uint32_t crc;
	int present;
} ck_entry;

typedef struct ck_manifest {
	char model[CK_NAME_MAX + 1];
	int32_t n_layers;
	uint64_t step;
	ck_entry *shard; /* n_layers */
} ck_manifest;

/* Parses the n bytes of the MANIFEST path of step: checks its CRC, that
 * it belongs to m and that it lists every layer once. */
static int ck_manifest_parse(ck_manifest *mf, const ppcc_ckpt_model *m,
			     const char *path, const char *p, size_t n,
			     uint64_t step)
{
	int err = PPCC_RT_ECHECKSUM, bad, ck_scan_end, version = 0;
	memset(mf, 0, sizeof *mf);
	uint32_t crc;
	if (ck_trailer_crc(&crc, p, n) < 0) {
		ck_report(m, "%s: error: truncated: no 'crc32' trailer", path);
		goto out;
	}
	if (ck_crc32(p, n - CK_TRAILER_BYTES) != crc) {
		ck_report(m, "%s: error: checksum does not match: the manifest "
			  "is damaged", path);
		goto out;
	}
	ck_lines l = {p, p + n - CK_TRAILER_BYTES, 0, {0}};
#define MF_LINE(want, fmt, ...)                                             \
	do {                                                                 \
		if (!ck_next(&l, &bad) || !CK_SCAN(&l, want, fmt, __VA_ARGS__)) { \
			ck_report(m, "%s:%d: error: expected '%s'", path,    \
				  l.line, fmt);                              \
			goto out;                                            \
		}                                                            \
	} while (0)
	MF_LINE(1, "ppcc-checkpoint %d", &version);
	if (version != 1) {
		ck_report(m, "%s:1: error: checkpoint format %d, this libppcc "
			  "reads 1", path, version);
		goto out;
	}
	MF_LINE(1, "model %255s", mf->model);
	MF_LINE(1, "layers %" SCNd32, &mf->n_layers);
	MF_LINE(1, "step %" SCNu64, &mf->step);
	if (strcmp(mf->model, m->name) != 0) {
		ck_report(m, "%s:2: error: a checkpoint of model '%s', not '%s'",
			  path, mf->model, m->name);
		err = PPCC_RT_EMISMATCH;
		goto out;
	}
	if (mf->n_layers != m->n_layers) {
		ck_report(m, "%s:3: error: a checkpoint of %" PRId32 " layers; "
			  "model '%s' has %" PRId32, path, mf->n_layers, m->name,
			  m->n_layers);
		err = PPCC_RT_EMISMATCH;
		goto out;
	}
	if (mf->step != step) {
		ck_report(m, "%s:4: error: step %" PRIu64 " in the directory of "
			  "step %" PRIu64, path, mf->step, step);
		goto out;
	}
	mf->shard = ck_calloc(m, (size_t)mf->n_layers, sizeof *mf->shard);
	if (!mf->shard) {
		err = PPCC_RT_ENOMEM;
		goto out;
	}
	for (int32_t k = 0; k < mf->n_layers; k++) {
		int32_t layer = -1;
		char file[64];
		uint64_t bytes;
		MF_LINE(4, "shard %" SCNd32 " %63s %" SCNu64 " %8" SCNx32, &layer,
			file, &bytes, &crc);
		char want[32];
		snprintf(want, sizeof want, "layer-%04d.shard", (int)layer);
		if (layer != k || strcmp(file, want) != 0) {
			ck_report(m, "%s:%d: error: expected layer %" PRId32
				  "'s shard", path, l.line, k);
			goto out;
		}
		mf->shard[k] = (ck_entry){bytes, crc, 1};
	}
	if (ck_next(&l, &bad) || bad) {
		ck_report(m, "%s:%d: error: lines after the last shard", path,
			  l.line);
		goto out;
	}
	err = 0;
#undef MF_LINE
out:
	if (err < 0) {
		ppcc_free(mf->shard);
		mf->shard = NULL;
	}
	return err;
}

/* Reads DIR/step-N/MANIFEST and parses it. */
static int ck_manifest_read(ck_manifest *mf, const ppcc_ckpt_model *m,
			    const char *dir, uint64_t step)
{
	char path[4200], what[64], *p = NULL;
	size_t n;
	int err;
	memset(mf, 0, sizeof *mf);
	ck_step_dir(path, sizeof path - 16, dir, step);
	strcat(path, "/MANIFEST");
	snprintf(what, sizeof what, "a manifest of %" PRId32 " layers",
		 m->n_layers);
	if ((err = ck_read(&p, &n, m, path, ck_manifest_max(m->n_layers),
			   what)) < 0)
		return err;
	err = ck_manifest_parse(mf, m, path, p, n, step);
	ppcc_free(p);
	return err;
}

int ppcc_ckpt_parse_manifest(const ppcc_ckpt_model *m, const char *path,
			     const char *p, size_t n, uint64_t step)
{
	ck_manifest mf;
	int err = ck_model_ok(m, path);
	if (err == 0 && (err = ck_manifest_parse(&mf, m, path, p, n, step)) == 0)
		ppcc_free(mf.shard);
	return err;
}

/* Checks a parsed shard's identity against the model and step. */
static int ck_shard_identity(const ppcc_ckpt_model *m, const char *path,
			     const ck_shard *sh, uint64_t step, int32_t layer)
{
	if (strcmp(sh->model, m->name) != 0) {
		ck_report(m, "%s:3: error: a shard of model '%s', not '%s'", path,
			  sh->model, m->name);
		return PPCC_RT_EMISMATCH;
	}
	if (sh->n_layers != m->n_layers) {
		ck_report(m, "%s:4: error: a shard of a %" PRId32 "-layer model; "
			  "'%s' has %" PRId32, path, sh->n_layers, m->name,
			  m->n_layers);
		return PPCC_RT_EMISMATCH;
	}
	if (sh->layer != layer || sh->step != step) {
		ck_report(m, "%s:5: error: holds layer %" PRId32 " of step %" PRIu64
			  ", not layer %" PRId32 " of step %" PRIu64, path,
			  sh->layer, sh->step, layer, step);
		return PPCC_RT_ECHECKSUM;
	}
	return 0;
}

int ppcc_ckpt_parse_shard(const ppcc_ckpt_model *m, const char *path,
			  const char *p, size_t n, uint64_t step, int32_t layer)
{
	ck_shard sh;
	int err = ck_model_ok(m, path);
	if (err == 0 && (err = ck_shard_parse(&sh, m, path, p, n)) == 0) {
		err = ck_shard_identity(m, path, &sh, step, layer);
		ck_shard_free(&sh);
	}
	return err;
}

int ppcc_ckpt_commit(const ppcc_ckpt_model *m, const char *dir, uint64_t step)
{
	char path[4200];
	int err;
	if ((err = ck_model_ok(m, dir)) < 0)
		return err;
	ck_buf b = {0};
	ck_printf(&b, "ppcc-checkpoint 1\nmodel %s\nlayers %" PRId32 "\nstep %"
		  PRIu64 "\n", m->name, m->n_layers, step);
	for (int32_t k = 0; k < m->n_layers && err == 0; k++) {
		char *p;
		size_t n;
		ck_shard sh;
		ck_shard_path(path, sizeof path, dir, step, k);
		if (access(path, F_OK) != 0) {
			ck_report(m, "%s: error: incomplete: layer %" PRId32
				  " was not saved", path, k);
			err = PPCC_RT_ECHECKSUM;
			break;
		}
		if ((err = ck_read(&p, &n, m, path, UINT64_MAX, "")) < 0)
			break;
		if ((err = ck_shard_parse(&sh, m, path, p, n)) == 0) {
			err = ck_shard_identity(m, path, &sh, step, k);
			ck_printf(&b, "shard %" PRId32 " layer-%04d.shard %zu %08"
				  PRIx32 "\n", k, (int)k, n, sh.crc);
			ck_shard_free(&sh);
		}
		ppcc_free(p);
	}
	ck_seal(&b);
	if (err == 0 && b.oom) {
		ck_report(m, "error: out of memory");
		err = PPCC_RT_ENOMEM;
	}
	if (err == 0) {
		ck_step_dir(path, sizeof path - 16, dir, step);
		strcat(path, "/MANIFEST");
		err = ck_write_atomic(m, path, b.p, b.n);
	}
	if (err == 0) {
		char latest[64];
		int k = snprintf(latest, sizeof latest, "step-%012" PRIu64 "\n", step);
		snprintf(path, sizeof path, "%s/LATEST", dir);
		err = ck_write_atomic(m, path, latest, (size_t)k);
	}
	ppcc_free(b.p);
	return err;
}

/* ---- load --------------------------------------------------------------------- */

int ppcc_ckpt_latest(uint64_t *out_step, const ppcc_ckpt_model *m,
		     const char *dir)
{
	char path[4200], *p = NULL;
	size_t n;
	int err = 0, end = -1;
	uint64_t step = 0;
	if (!out_step || (err = ck_model_ok(m, dir)) < 0)
		return err < 0 ? err : PPCC_RT_EINPUT;
	snprintf(path, sizeof path, "%s/LATEST", dir);
	if ((err = ck_read(&p, &n, m, path, CK_LATEST_MAX, "LATEST")) < 0)
		return err;
	if (sscanf(p, "step-%12" SCNu64 "\n%n", &step, &end) != 1 ||
	    end != (int)n || n != 18) {
		ck_report(m, "%s:1: error: expected 'step-NNNNNNNNNNNN'", path);
		ppcc_free(p);
		return PPCC_RT_ECHECKSUM;
	}
	ppcc_free(p);
	ck_manifest mf;
	if ((err = ck_manifest_read(&mf, m, dir, step)) < 0)
		return err;
	ppcc_free(mf.shard);
	*out_step = step;
	return 0;
}

static void ck_shape(char *out, size_t n, const ppcc_ckpt_tensor *t)
{
	int k = snprintf(out, n, "%s ", ck_dtype_name(t->dtype) ? ck_dtype_name(t->dtype) : "?");
	for (int d = 0; d < t->n_dims && k > 0 && (size_t)k < n; d++)
		k += snprintf(out + k, n - (size_t)k, "%s%" PRId64, d ? "x" : "",
			      t->dims[d]);
}

int ppcc_ckpt_load_layer(const ppcc_ckpt_model *m, const char *dir,
			 uint64_t step, ppcc_ckpt_layer *layer)
{
	char path[4200], *p = NULL;
	size_t n;
	int err;
	ck_manifest mf;
	ck_shard sh = {0};
	if ((err = ck_model_ok(m, dir)) < 0)
		return err;
	if (!layer || layer->version < 1 || layer->version > PPCC_CKPT_VERSION ||
	    layer->layer < 0 ||
	    layer->layer >= m->n_layers || !layer->name || layer->n_tensors < 1 ||
	    !layer->tensors) {
		ck_report(m, "error: invalid layer %d", layer ? (int)layer->layer : -1);
		return PPCC_RT_EINPUT;
	}
	if ((err = ck_manifest_read(&mf, m, dir, step)) < 0)
		return err;
	const ck_entry *e = &mf.shard[layer->layer];
	ck_shard_path(path, sizeof path, dir, step, layer->layer);
	int fd, no;
	uint64_t size;
	if ((err = ck_open(&fd, &size, &no, m, path)) < 0) {
		if (no == ENOENT) {
			ck_report(m, "%s: error: incomplete: the manifest lists "
				  "layer %" PRId32 "'s shard", path, layer->layer);
			err = PPCC_RT_ECHECKSUM;
		}
		goto out;
	}
	if (size != e->bytes) {
		/* before a byte is read: a sparse or grown file costs nothing */
		ck_report(m, "%s: error: %s: %" PRIu64 " bytes, the manifest says %"
			  PRIu64, path, size < e->bytes ? "truncated" : "changed",
			  size, e->bytes);
		close(fd);
		err = PPCC_RT_ECHECKSUM;
		goto out;
	}
	if ((err = ck_load(&p, m, path, fd, size)) < 0)
		goto out;
	n = (size_t)size;
	err = PPCC_RT_ECHECKSUM;
	uint32_t got = ck_crc32(p, n >= CK_TRAILER_BYTES ? n - CK_TRAILER_BYTES : 0);
	if (got != e->crc) {
		ck_report(m, "%s: error: checksum %08" PRIx32 " does not match the "
			  "manifest's %08" PRIx32 ": the shard is damaged", path,
			  got, e->crc);
		goto out;
	}
	if ((err = ck_shard_parse(&sh, m, path, p, n)) < 0 ||
	    (err = ck_shard_identity(m, path, &sh, step, layer->layer)) < 0)
		goto out;
	err = PPCC_RT_EMISMATCH;
	if (strcmp(sh.name, layer->name) != 0) {
		ck_report(m, "%s:5: error: layer %" PRId32 " is '%s' in the "
			  "checkpoint, '%s' in the model", path, layer->layer,
			  sh.name, layer->name);
		goto out;
	}
	if (sh.n_tensors != layer->n_tensors) {
		ck_report(m, "%s:7: error: layer %" PRId32 " has %" PRId32
			  " tensors in the checkpoint, %" PRId32 " in the model",
			  path, layer->layer, sh.n_tensors, layer->n_tensors);
		goto out;
	}
	for (int32_t t = 0; t < sh.n_tensors; t++) {
		const ppcc_ckpt_tensor *a = &sh.tensors[t], *b = &layer->tensors[t];
		int same = b->name && strcmp(a->name, b->name) == 0 &&
			   a->dtype == b->dtype && a->n_dims == b->n_dims &&
			   b->data;
		for (int d = 0; same && d < a->n_dims; d++)
			same = a->dims[d] == b->dims[d];
		if (!same) {
			char sa[96], sb[96];
			ck_shape(sa, sizeof sa, a);
			ck_shape(sb, sizeof sb, b);
			ck_report(m, "%s:%d: error: layer %" PRId32 " tensor %d is "
				  "'%s' %s in the checkpoint, '%s' %s in the model",
				  path, 8 + (int)t, layer->layer, (int)t, a->name, sa,
				  b->name ? b->name : "?", sb);
			goto out;
		}
	}
	const char *q = sh.payload;
	for (int32_t t = 0; t < sh.n_tensors; t++) {
		size_t nb = (size_t)ck_tensor_bytes(&sh.tensors[t]);
		memcpy(layer->tensors[t].data, q, nb);
		q += nb;
	}
	err = 0;
out:
	ck_shard_free(&sh);
	ppcc_free(mf.shard);
	ppcc_free(p);
	return err;
}
