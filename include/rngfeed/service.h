/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Talking to systemd (sd_notify's protocol, sent without waiting): READY=1
 * once the pipeline has done its first useful work, STATUS= lines for
 * "systemctl status", WATCHDOG=1 when WatchdogSec= is set, STOPPING=1 on
 * the way out.  Without NOTIFY_SOCKET every call is a cheap no-op.
 */
#ifndef RNGFEED_SERVICE_H
#define RNGFEED_SERVICE_H

#include <stdbool.h>
#include <stdint.h>

struct service {
	bool enabled;             /* NOTIFY_SOCKET was set at start */
	bool ready_sent;
	double watchdog_period;   /* seconds between pings; 0 = off */
	double last_ping;
	char last_status[512];
	double last_status_at;    /* when the last STATUS= went out */
};

/* A changed STATUS= goes out at most this often: a daemon with nothing
 * to do sleeps. */
#define SERVICE_STATUS_PERIOD_S 5.0

void service_init(struct service *s, double now);
/* READY=1 (once), with a first STATUS= line; false if systemd's socket
 * did not take it now (full: try again soon). */
bool service_ready(struct service *s, const char *status);
/* STATUS=@status, sent only when it changed. */
void service_status(struct service *s, const char *status);
/* Would service_status() send @status? */
bool service_status_changed(const struct service *s, const char *status);
/*
 * The first call sends READY=1 with @status; later ones STATUS=@status
 * when it changed, at most every SERVICE_STATUS_PERIOD_S.  Returns seconds
 * until a held-back change may go (a large value when nothing waits).
 */
double service_update(struct service *s, const char *status, double now);
/* Send WATCHDOG=1 if due; returns seconds until the next one is due
 * (a large value when the watchdog is off). */
double service_watchdog(struct service *s, double now);
void service_stopping(struct service *s);

#endif
