/*
 * oob.c - the out-of-band abort: how the ranks of a transport that does
 * not propagate failures (NCCL: an aborted communicator tells nobody,
 * and a peer blocked in a transfer with it waits for ever) learn that
 * one of them failed.  oob.h states the interface.
 *
 * The TCP store.  Rank 0 listens on 127.0.0.1:port; every other rank
 * connects, says hello with its rank, and waits for rank 0's
 * acknowledgement, which comes once all n have joined (so open is a
 * barrier, bounded by its deadline).  Rank 0 then runs a relay thread:
 * an abort from any rank is passed on to every other rank, and a
 * connection that ends without a goodbye (the process died) is relayed
 * as an abort of that rank, so the relay works while rank 0 itself is
 * busy in a callback.  Rank 0's own failure goes straight to every
 * connection.  Messages are three native-endian int32s (type, rank,
 * status): every end is on one host.  A rank polls its connection with
 * non-blocking reads; a signal is one small write.  Closing normally,
 * rank 0 waits (up to the deadline) for every other rank's goodbye, so
 * nobody loses the channel while it still runs.
 *
 * The MPI channel.  A duplicate of MPI_COMM_WORLD (MPI_Comm_idup, polled
 * against the deadline), an MPI_Irecv of any rank's notice kept posted,
 * and one MPI_Isend to every other rank on failure, as mpi.c does.  A
 * request that cannot be completed (the duplicate not formed in time,
 * the notice receive not cancelled) keeps its buffer: the channel is
 * then left allocated and reachable (oob_abandoned), and the process
 * must end with MPI_Abort rather than MPI_Finalize.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "oob.h"

#if PPCC_HAVE_MPI
#include <mpi.h>
#endif

enum {
	OOB_HELLO = 0x70706f62, /* "ppob" */
	OOB_ACK = 1,
	OOB_ABORT = 2,
	OOB_BYE = 3,
	OOB_MPI_TAG = 1,
};

typedef struct oob_msg {
	int32_t type, rank, status;
} oob_msg;

/* One connection, as rank 0 sees it (or a rank's one to rank 0). */
typedef struct oob_conn {
	int fd;
	int closed; /* goodbye received or connection ended */
	unsigned char buf[sizeof(oob_msg)];
	size_t len;
} oob_conn;

enum { OOB_TCP, OOB_MPI };

struct rt_oob {
	const rt_tctx *cx;
	int kind, rank, n;
	pthread_mutex_t mu; /* the state below, and writes to connections */
	int aborted, abort_rank, abort_status;
	int signalled;
	/* tcp */
	oob_conn self;   /* rank > 0: the connection to rank 0 */
	oob_conn *conns; /* rank 0: per rank (conns[0] unused) */
	pthread_t relay;
	int have_relay;
	atomic_int quit;
#if PPCC_HAVE_MPI
	MPI_Comm comm;
	MPI_Request recv_req;
	int recv_msg[2];
	int send_msg[2];
	MPI_Request *sends;
#endif
};

#if PPCC_HAVE_MPI
/* Channels whose MPI requests could not be completed: their buffers stay
 * valid until the process ends. */
static rt_oob *oob_abandoned[16];
static atomic_int oob_n_abandoned;

static void oob_abandon(rt_oob *o)
{
	int k = atomic_fetch_add(&oob_n_abandoned, 1);
	if (k < (int)(sizeof oob_abandoned / sizeof oob_abandoned[0]))
		oob_abandoned[k] = o;
	/* beyond that, still never freed: the pointer is only dropped */
}
#endif

int ppcc_rt_oob_port_env(void)
{
	const char *v = getenv("PPCC_ABORT_PORT");
	if (!v || !*v)
		return 0;
	char *end;
	long p = strtol(v, &end, 10);
	return *end == '\0' && p >= 1 && p <= 65535 ? (int)p : 0;
}

static void oob_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static int oob_ms_left(double deadline)
{
	double left = deadline - ppcc_rt_now();
	if (left <= 0)
		return 0;
	return left > 1e6 ? 1000000000 : (int)(left * 1e3) + 1;
}

static int oob_write(int fd, const oob_msg *m)
{
	const char *p = (const char *)m;
	size_t n = sizeof *m;
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads one whole message before the deadline: 0, or -1 on timeout, end
 * of stream or error. */
static int oob_read_until(int fd, oob_msg *m, double deadline)
{
	char *p = (char *)m;
	size_t got = 0;
	while (got < sizeof *m) {
		struct pollfd pf = {fd, POLLIN, 0};
		int ms = oob_ms_left(deadline);
		if (ms == 0)
			return -1;
		int k = poll(&pf, 1, ms);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		ssize_t r = recv(fd, p + got, sizeof *m - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* Non-blocking: 1 with a whole message in *m, 0 when none is complete
 * yet, -1 when the connection has ended. */
static int oob_read_some(oob_conn *c, oob_msg *m)
{
	for (;;) {
		ssize_t r = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len,
				 MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (r <= 0)
			return -1;
		c->len += (size_t)r;
		if (c->len == sizeof c->buf) {
			memcpy(m, c->buf, sizeof *m);
			c->len = 0;
			return 1;
		}
	}
}

/* Under o->mu: the first failure another rank reports. */
static void oob_record(rt_oob *o, int rank, int status)
{
	if (o->aborted)
		return;
	o->aborted = 1;
	o->abort_rank = rank;
	o->abort_status = status;
}

/* Rank 0, under o->mu: a message to every connection but `except`. */
static void oob_relay_all(rt_oob *o, int except, const oob_msg *m)
{
	for (int r = 1; r < o->n; r++)
		if (r != except && !o->conns[r].closed)
			(void)oob_write(o->conns[r].fd, m);
}

/* Rank 0's relay: aborts in, aborts out. */
static void *oob_relay_main(void *arg)
{
	rt_oob *o = arg;
	struct pollfd *pf = ppcc_calloc((size_t)o->n, sizeof *pf);
	int *who = ppcc_calloc((size_t)o->n, sizeof *who);
	if (!pf || !who) {
		ppcc_free(pf);
		ppcc_free(who);
		return NULL;
	}
	while (!atomic_load(&o->quit)) {
		int k = 0;
		pthread_mutex_lock(&o->mu);
		for (int r = 1; r < o->n; r++)
			if (!o->conns[r].closed) {
				pf[k].fd = o->conns[r].fd;
				pf[k].events = POLLIN;
				pf[k].revents = 0;
				who[k++] = r;
			}
		pthread_mutex_unlock(&o->mu);
		if (k == 0) {
			oob_sleep_ms(20);
			continue;
		}
		if (poll(pf, (nfds_t)k, 50) <= 0)
			continue;
		for (int i = 0; i < k; i++) {
			if (!pf[i].revents)
				continue;
			int r = who[i];
			oob_msg m;
			int got;
			pthread_mutex_lock(&o->mu);
			while ((got = oob_read_some(&o->conns[r], &m)) == 1) {
				if (m.type == OOB_ABORT) {
					int first = !o->aborted;
					oob_record(o, r, m.status);
					if (first)
						oob_relay_all(o, r, &m);
				} else if (m.type == OOB_BYE) {
					o->conns[r].closed = 1;
					break;
				}
			}
			if (got < 0 && !o->conns[r].closed) {
				/* ended without a goodbye: the process is gone */
				oob_msg lost = {OOB_ABORT, r, PPCC_RT_EPEER};
				o->conns[r].closed = 1;
				int first = !o->aborted;
				oob_record(o, r, PPCC_RT_EPEER);
				if (first)
					oob_relay_all(o, r, &lost);
			}
			pthread_mutex_unlock(&o->mu);
		}
	}
	ppcc_free(pf);
	ppcc_free(who);
	return NULL;
}

static rt_oob *oob_new(const rt_tctx *cx, int kind, int rank, int n)
{
	rt_oob *o = ppcc_calloc(1, sizeof *o);
	if (!o)
		return NULL;
	if (pthread_mutex_init(&o->mu, NULL) != 0) {
		ppcc_free(o);
		return NULL;
	}
	o->cx = cx;
	o->kind = kind;
	o->rank = rank;
	o->n = n;
	o->abort_rank = -1;
	o->abort_status = PPCC_RT_EPEER;
	o->self.fd = -1;
	atomic_init(&o->quit, 0);
	return o;
}

static void oob_free_tcp(rt_oob *o)
{
	if (o->have_relay) {
		atomic_store(&o->quit, 1);
		pthread_join(o->relay, NULL);
	}
	if (o->conns)
		for (int r = 1; r < o->n; r++)
			if (o->conns[r].fd >= 0)
				close(o->conns[r].fd);
	if (o->self.fd >= 0)
		close(o->self.fd);
	ppcc_free(o->conns);
	pthread_mutex_destroy(&o->mu);
	ppcc_free(o);
}

static struct sockaddr_in oob_addr(int port)
{
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int oob_tcp_serve(rt_oob *o, int port, double deadline)
{
	const rt_tctx *cx = o->cx;
	struct sockaddr_in a = oob_addr(port);
	int one = 1, err = 0, joined = 0;
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    listen(lfd, o->n) < 0) {
		rt_tctx_report(cx, "abort store: cannot listen on 127.0.0.1:%d: %s",
			       port, strerror(errno));
		err = PPCC_RT_ETRANSPORT;
		goto out;
	}
	while (joined < o->n - 1) {
		struct pollfd pf = {lfd, POLLIN, 0};
		int ms = oob_ms_left(deadline);
		int k = ms ? poll(&pf, 1, ms) : 0;
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			rt_tctx_report(cx, "abort store: %d of %d ranks joined "
				       "127.0.0.1:%d in time", joined + 1, o->n,
				       port);
			err = PPCC_RT_ETIMEOUT;
			goto out;
		}
		int cfd = accept(lfd, NULL, NULL);
		if (cfd < 0)
			continue;
		oob_msg m;
		if (oob_read_until(cfd, &m, deadline) < 0 || m.type != OOB_HELLO ||
		    m.rank < 1 || m.rank >= o->n || o->conns[m.rank].fd >= 0) {
			/* not one of ours (or a second hello): ignored */
			close(cfd);
			continue;
		}
		o->conns[m.rank].fd = cfd;
		joined++;
	}
	oob_msg ack = {OOB_ACK, 0, 0};
	for (int r = 1; r < o->n; r++)
		if (oob_write(o->conns[r].fd, &ack) < 0) {
			rt_tctx_report(cx, "abort store: rank %d left while "
				       "joining", r);
			err = PPCC_RT_ETRANSPORT;
			goto out;
		}
	if (pthread_create(&o->relay, NULL, oob_relay_main, o) != 0) {
		err = PPCC_RT_ENOMEM;
		goto out;
	}
	o->have_relay = 1;
out:
	if (lfd >= 0)
		close(lfd);
	return err;
}

static int oob_tcp_join(rt_oob *o, int port, double deadline)
{
	const rt_tctx *cx = o->cx;
	struct sockaddr_in a = oob_addr(port);
	int fd = -1;
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			break;
		if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
			break;
		int e = errno;
		close(fd);
		fd = -1;
		if ((e != ECONNREFUSED && e != EINTR && e != EAGAIN) ||
		    ppcc_rt_now() > deadline)
			break;
		oob_sleep_ms(10); /* rank 0 is not listening yet */
	}
	if (fd < 0) {
		rt_tctx_report(cx, "abort store: cannot reach rank 0 at "
			       "127.0.0.1:%d", port);
		return ppcc_rt_now() > deadline ? PPCC_RT_ETIMEOUT
						: PPCC_RT_ETRANSPORT;
	}
	o->self.fd = fd;
	oob_msg hello = {OOB_HELLO, o->rank, 0}, ack;
	if (oob_write(fd, &hello) < 0 || oob_read_until(fd, &ack, deadline) < 0 ||
	    ack.type != OOB_ACK) {
		rt_tctx_report(cx, "abort store: rank 0 at 127.0.0.1:%d did not "
			       "see every rank join in time", port);
		return PPCC_RT_ETIMEOUT;
	}
	return 0;
}

int ppcc_rt_oob_tcp_open(rt_oob **out, const rt_tctx *cx, int rank, int n,
			 int port, double deadline)
{
	*out = NULL;
	if (n < 1 || rank < 0 || rank >= n || port < 1 || port > 65535)
		return PPCC_RT_EINPUT;
	rt_oob *o = oob_new(cx, OOB_TCP, rank, n);
	if (!o)
		return PPCC_RT_ENOMEM;
	int err = 0;
	if (rank == 0) {
		o->conns = ppcc_calloc((size_t)n, sizeof *o->conns);
		if (!o->conns) {
			err = PPCC_RT_ENOMEM;
		} else {
			for (int r = 0; r < n; r++)
				o->conns[r].fd = -1;
			err = n > 1 ? oob_tcp_serve(o, port, deadline) : 0;
		}
	} else {
		err = oob_tcp_join(o, port, deadline);
	}
	if (err < 0) {
		oob_free_tcp(o);
		return err;
	}
	*out = o;
	return 0;
}

#if PPCC_HAVE_MPI
/* Polls req against the deadline: 0 when complete. */
static int oob_mpi_wait(MPI_Request *req, double deadline)
{
	int done = 0;
	while (MPI_Test(req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
		if (ppcc_rt_now() > deadline)
			return PPCC_RT_ETIMEOUT;
		oob_sleep_ms(1);
	}
	return done ? 0 : PPCC_RT_ETRANSPORT;
}

int ppcc_rt_oob_mpi_open(rt_oob **out, const rt_tctx *cx, double deadline)
{
	int rank = 0, n = 1, err = 0;
	*out = NULL;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	rt_oob *o = oob_new(cx, OOB_MPI, rank, n);
	if (!o)
		return PPCC_RT_ENOMEM;
	o->comm = MPI_COMM_NULL;
	o->recv_req = MPI_REQUEST_NULL;
	MPI_Request dup = MPI_REQUEST_NULL;
	if (MPI_Comm_idup(MPI_COMM_WORLD, &o->comm, &dup) != MPI_SUCCESS) {
		rt_tctx_report(cx, "abort channel: MPI_Comm_idup failed");
		err = PPCC_RT_ETRANSPORT;
		goto out;
	}
	if ((err = oob_mpi_wait(&dup, deadline)) < 0) {
		rt_tctx_report(cx, "abort channel: MPI_Comm_idup %s",
			       err == PPCC_RT_ETIMEOUT ? "did not complete in time"
						       : "failed");
		/* MPI still owns &o->comm: keep it */
		oob_abandon(o);
		return err;
	}
	if (MPI_Comm_set_errhandler(o->comm, MPI_ERRORS_RETURN) != MPI_SUCCESS ||
	    MPI_Irecv(o->recv_msg, 2, MPI_INT, MPI_ANY_SOURCE, OOB_MPI_TAG,
		      o->comm, &o->recv_req) != MPI_SUCCESS) {
		rt_tctx_report(cx, "abort channel: MPI_Irecv failed");
		err = PPCC_RT_ETRANSPORT;
	}
out:
	if (err < 0) {
		if (o->comm != MPI_COMM_NULL)
			MPI_Comm_free(&o->comm);
		pthread_mutex_destroy(&o->mu);
		ppcc_free(o);
		return err;
	}
	*out = o;
	return 0;
}

static int oob_mpi_poll(rt_oob *o)
{
	int flag = 0;
	if (o->recv_req != MPI_REQUEST_NULL &&
	    MPI_Test(&o->recv_req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
	    flag)
		oob_record(o, o->recv_msg[0], o->recv_msg[1]);
	return o->aborted;
}

static void oob_mpi_signal(rt_oob *o, int status)
{
	o->sends = ppcc_calloc((size_t)o->n, sizeof *o->sends);
	if (!o->sends)
		return;
	o->send_msg[0] = o->rank;
	o->send_msg[1] = status;
	for (int r = 0; r < o->n; r++) {
		o->sends[r] = MPI_REQUEST_NULL;
		if (r != o->rank)
			MPI_Isend(o->send_msg, 2, MPI_INT, r, OOB_MPI_TAG, o->comm,
				  &o->sends[r]);
	}
}

static void oob_mpi_close(rt_oob *o, int failed)
{
	int pending = 0;
	if (o->recv_req != MPI_REQUEST_NULL) {
		MPI_Cancel(&o->recv_req);
		if (oob_mpi_wait(&o->recv_req, ppcc_rt_now() + 1.0) < 0)
			pending = 1;
	}
	if (o->sends)
		for (int r = 0; r < o->n; r++)
			if (o->sends[r] != MPI_REQUEST_NULL) {
				int done = 0;
				MPI_Test(&o->sends[r], &done, MPI_STATUS_IGNORE);
				if (!done)
					pending = 1;
			}
	if (pending) {
		/* buffers MPI may still touch: kept; the process must end
		 * with MPI_Abort */
		oob_abandon(o);
		return;
	}
	/* after a failure a peer may never free its duplicate: leave ours
	 * to MPI_Finalize or MPI_Abort, as mpi.c does */
	if (!failed)
		MPI_Comm_free(&o->comm);
	ppcc_free(o->sends);
	pthread_mutex_destroy(&o->mu);
	ppcc_free(o);
}
#endif

void ppcc_rt_oob_signal(rt_oob *o, int rank, int status)
{
	if (!o)
		return;
	pthread_mutex_lock(&o->mu);
	if (o->signalled || o->aborted) {
		pthread_mutex_unlock(&o->mu);
		return;
	}
	o->signalled = 1;
	if (o->kind == OOB_TCP) {
		oob_msg m = {OOB_ABORT, rank, status};
		if (o->rank == 0 && o->conns)
			oob_relay_all(o, 0, &m);
		else if (o->self.fd >= 0)
			(void)oob_write(o->self.fd, &m);
	}
#if PPCC_HAVE_MPI
	else {
		(void)rank;
		oob_mpi_signal(o, status);
	}
#endif
	pthread_mutex_unlock(&o->mu);
}

int ppcc_rt_oob_poll(rt_oob *o, int *out_rank, int *out_status)
{
	if (!o)
		return 0;
	pthread_mutex_lock(&o->mu);
	if (!o->aborted && o->kind == OOB_TCP && o->rank > 0 && !o->self.closed) {
		oob_msg m;
		int got;
		while ((got = oob_read_some(&o->self, &m)) == 1)
			if (m.type == OOB_ABORT)
				oob_record(o, m.rank, m.status);
		if (got < 0) {
			/* rank 0 ended without a word */
			o->self.closed = 1;
			oob_record(o, 0, PPCC_RT_EPEER);
		}
	}
#if PPCC_HAVE_MPI
	if (o->kind == OOB_MPI)
		oob_mpi_poll(o);
#endif
	int aborted = o->aborted && !o->signalled;
	if (aborted) {
		*out_rank = o->abort_rank;
		*out_status = o->abort_status;
	}
	pthread_mutex_unlock(&o->mu);
	return aborted;
}

void ppcc_rt_oob_close(rt_oob *o, int failed, double deadline)
{
	if (!o)
		return;
#if PPCC_HAVE_MPI
	if (o->kind == OOB_MPI) {
		oob_mpi_close(o, failed);
		return;
	}
#endif
	if (o->rank > 0) {
		oob_msg bye = {OOB_BYE, o->rank, 0};
		pthread_mutex_lock(&o->mu);
		if (o->self.fd >= 0 && !o->self.closed)
			(void)oob_write(o->self.fd, &bye);
		pthread_mutex_unlock(&o->mu);
	} else if (!failed && o->conns) {
		/* the others may still be running: wait for their goodbyes */
		for (;;) {
			int open = 0;
			pthread_mutex_lock(&o->mu);
			for (int r = 1; r < o->n; r++)
				open += !o->conns[r].closed;
			pthread_mutex_unlock(&o->mu);
			if (!open || ppcc_rt_now() > deadline)
				break;
			oob_sleep_ms(5);
		}
	}
	oob_free_tcp(o);
}
