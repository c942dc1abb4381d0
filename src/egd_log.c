// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The EGD server's log lines that rate-limit themselves: at most
 * EGD_LOG_BURST per EGD_LOG_WINDOW_S, then one line with how many were
 * not said.  Used by the clients' side (egd_server.c) and the replies
 * (egd_reply.c); it uses neither.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "rngfeed/egd_internal.h"
#include "rngfeed/log.h"

/* Say how many were suppressed, if any; a new window from @now. */
void egd_log_flush(struct ratelimit *rl, double now)
{
	if (rl->suppressed)
		log_notice("egd: %u more client messages suppressed",
			   rl->suppressed);
	*rl = (struct ratelimit){ .window = now };
}

/* The suppressed count is said when its window ends, even if no later
 * message comes: when that is, into *@wait. */
void egd_log_tick(struct ratelimit *rl, double now, double *wait)
{
	if (!rl->suppressed)
		return;
	if (now - rl->window >= EGD_LOG_WINDOW_S)
		egd_log_flush(rl, now);
	else
		*wait = fmin(*wait, rl->window + EGD_LOG_WINDOW_S - now);
}

void egd_log(struct egd_server *s, double now, const char *fmt, ...)
{
	struct ratelimit *rl = &s->rl;
	char msg[256];
	va_list ap;

	if (now - rl->window >= EGD_LOG_WINDOW_S)
		egd_log_flush(rl, now);
	if (rl->n >= EGD_LOG_BURST) {
		rl->suppressed++;
		return;
	}
	rl->n++;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_notice("egd: %s", msg);
}

