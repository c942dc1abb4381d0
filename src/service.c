// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "rngfeed/service.h"

void service_init(struct service *s, double now)
{
	uint64_t usec = 0;

	*s = (struct service){ .last_ping = now,
			       .enabled = getenv("NOTIFY_SOCKET") != NULL };
	/* Ping at half the period, as sd_watchdog_enabled(3) advises. */
	if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0)
		s->watchdog_period = (double)usec / 2e6;
}

void service_ready(struct service *s, const char *status)
{
	if (s->ready_sent)
		return;
	s->ready_sent = true;
	snprintf(s->last_status, sizeof(s->last_status), "%s", status);
	sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

bool service_status_changed(const struct service *s, const char *status)
{
	return strcmp(status, s->last_status) != 0;
}

void service_status(struct service *s, const char *status)
{
	if (!service_status_changed(s, status))
		return;
	snprintf(s->last_status, sizeof(s->last_status), "%s", status);
	sd_notifyf(0, "STATUS=%s", status);
}

double service_update(struct service *s, const char *status, double now)
{
	if (!s->ready_sent) {
		service_ready(s, status);
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
		sd_notify(0, "WATCHDOG=1");
		s->last_ping = now;
	}
	return s->last_ping + s->watchdog_period - now;
}

void service_stopping(struct service *s)
{
	(void)s;
	sd_notify(0, "STOPPING=1\nSTATUS=Stopping");
}
