// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rngfeed/service.h"

/* Retry a message systemd's socket did not take this soon. */
#define SERVICE_RETRY_S 0.1

/*
 * sd_notify(3)'s datagram, sent without waiting: libsystemd's own send
 * blocks while systemd's queue is full (a busy PID 1), and the main loop
 * never waits.  0, or -errno (-EAGAIN: try again later).
 */
static int notify(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len;
	int fd, r = 0;

	if (!path || (path[0] != '/' && path[0] != '@'))
		return -EAFNOSUPPORT; /* unset, or vsock: not ours to send */
	len = strlen(path);
	if (len >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@') /* abstract namespace */
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (sendto(fd, msg, strlen(msg), MSG_DONTWAIT | MSG_NOSIGNAL,
		   (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0)
		r = errno == EWOULDBLOCK ? -EAGAIN : -errno;
	close(fd);
	return r;
}

/*
 * systemd's watchdog period in microseconds, or 0 for none: WATCHDOG_USEC,
 * when WATCHDOG_PID (if set) names this process (sd_watchdog_enabled(3)'s
 * protocol, read here so that the notify protocol needs no libsystemd).
 */
static uint64_t watchdog_usec(void)
{
	const char *usec = getenv("WATCHDOG_USEC");
	const char *pid = getenv("WATCHDOG_PID");
	unsigned long long v;
	char *end;

	if (pid) {
		errno = 0;
		v = strtoull(pid, &end, 10);
		if (errno || end == pid || *end || v != (unsigned long long)getpid())
			return 0;
	}
	if (!usec || *usec < '0' || *usec > '9')
		return 0;
	errno = 0;
	v = strtoull(usec, &end, 10);
	if (errno || *end)
		return 0;
	return v;
}

void service_init(struct service *s, double now)
{
	uint64_t usec = watchdog_usec();

	*s = (struct service){ .last_ping = now,
			       .enabled = getenv("NOTIFY_SOCKET") != NULL };
	/* Ping at half the period, as sd_watchdog_enabled(3) advises. */
	if (usec > 0)
		s->watchdog_period = (double)usec / 2e6;
}

bool service_ready(struct service *s, const char *status)
{
	char msg[sizeof(s->last_status) + 32];

	if (s->ready_sent)
		return true;
	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=%s", status);
	if (notify(msg) == -EAGAIN)
		return false;
	s->ready_sent = true;
	snprintf(s->last_status, sizeof(s->last_status), "%s", status);
	return true;
}

bool service_status_changed(const struct service *s, const char *status)
{
	return strcmp(status, s->last_status) != 0;
}

void service_status(struct service *s, const char *status)
{
	char msg[sizeof(s->last_status) + 16];

	if (!service_status_changed(s, status))
		return;
	snprintf(msg, sizeof(msg), "STATUS=%s", status);
	/* Not taken now: the next change or period says it again. */
	if (notify(msg) == -EAGAIN)
		return;
	snprintf(s->last_status, sizeof(s->last_status), "%s", status);
}

double service_update(struct service *s, const char *status, double now)
{
	if (!s->ready_sent) {
		if (!service_ready(s, status))
			return SERVICE_RETRY_S;
		s->last_status_at = now;
		return 1e9;
	}
	if (!service_status_changed(s, status))
		return 1e9;
	if (now - s->last_status_at < SERVICE_STATUS_PERIOD_S)
		return s->last_status_at + SERVICE_STATUS_PERIOD_S - now;
	service_status(s, status);
	s->last_status_at = now;
	return 1e9;
}

double service_watchdog(struct service *s, double now)
{
	if (s->watchdog_period <= 0)
		return 1e9;
	if (now - s->last_ping >= s->watchdog_period) {
		if (notify("WATCHDOG=1") == -EAGAIN)
			return SERVICE_RETRY_S;
		s->last_ping = now;
	}
	return s->last_ping + s->watchdog_period - now;
}

void service_stopping(struct service *s)
{
	(void)s;
	(void)notify("STOPPING=1\nSTATUS=Stopping");
}
