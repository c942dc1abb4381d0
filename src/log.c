// SPDX-License-Identifier: GPL-2.0-or-later
#include <stdarg.h>
#include <stdio.h>
#include <systemd/sd-journal.h>

#include "rngfeed/log.h"

/* The one piece of process-wide state: where messages go.  Set once at
 * start-up, before any thread exists. */
static struct {
	int max_priority;
	enum log_target target;
} log_target = { LOG_NOTICE, LOG_TO_STDERR };

void log_setup(int max_priority, enum log_target target)
{
	log_target.max_priority = max_priority;
	log_target.target = target;
	if (target == LOG_TO_SYSLOG)
		openlog("rngfeed", LOG_PID, LOG_DAEMON);
}

int log_max_priority(void)
{
	return log_target.max_priority;
}

void log_msg(int priority, const char *fmt, ...)
{
	va_list ap;

	if (priority > log_target.max_priority)
		return;
	va_start(ap, fmt);
	if (log_target.target == LOG_TO_JOURNAL) {
		sd_journal_printv(priority, fmt, ap);
	} else if (log_target.target == LOG_TO_SYSLOG) {
		vsyslog(priority, fmt, ap);
	} else {
		/* One fprintf per line so lines from threads do not mix. */
		char line[1024];

		vsnprintf(line, sizeof(line), fmt, ap);
		fprintf(stderr, "rngfeed: %s\n", line);
	}
	va_end(ap);
}
