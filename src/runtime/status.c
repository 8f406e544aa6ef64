/*
 * status.c - what every file of the runtime says with: the monotonic
 * clock, the status codes in words, and telling a rank's world that it
 * stopped.  A leaf: it calls into no other file of the runtime but
 * through the transport's ops table.
 */
#include <time.h>

#include "rt.h"

double ppcc_rt_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *ppcc_rt_status_str(int status)
{
	switch (status) {
	case PPCC_RT_OK: return "success";
	case PPCC_RT_ENOMEM: return "out of memory";
	case PPCC_RT_EINPUT: return "bad input";
	case PPCC_RT_EIO: return "input/output error";
	case PPCC_RT_EINTERNAL: return "internal error";
	case PPCC_RT_ETIMEOUT: return "timeout";
	case PPCC_RT_ECALLBACK: return "callback failed";
	case PPCC_RT_EPEER: return "another rank failed";
	case PPCC_RT_ECHECKSUM: return "message check failed";
	case PPCC_RT_EMISMATCH: return "schedules differ between ranks";
	case PPCC_RT_ETRANSPORT: return "transport error";
	case PPCC_RT_EUNAVAILABLE: return "transport not built in";
	}
	return "unknown status";
}

/* Tells this rank's world that it stopped with `status`: always for its
 * own failure; for a peer's (EPEER) only when the world has not heard of
 * it, as when the failure came through a local data-parallel group,
 * which is not the pipeline's world; its pipeline peers would otherwise
 * wait out their timeout. */
void ppcc_rt_tell_world(ppcc_rt *rt, int status)
{
	int who, st;
	if (!rt->tr)
		return;
	if (status == PPCC_RT_EPEER && rt->ops->aborted(rt->tr, &who, &st))
		return;
	rt->ops->abort(rt->tr, status);
}
