// SPDX-License-Identifier: GPL-2.0-or-later
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rngfeed/journal.h"
#include "rngfeed/log.h"

/* The one piece of process-wide state: where messages go.  Set once at
 * start-up, before any thread exists. */
static struct {
	int max_priority;
	enum log_target target;
} log_target = { LOG_NOTICE, LOG_TO_STDERR };

/* The last error message, while a detached start-up keeps it for the
 * parent that waits for its verdict (readers may log meanwhile). */
static struct {
	pthread_mutex_t lock;
	bool on;
	char line[LOG_LINE_MAX];
} last_error = { .lock = PTHREAD_MUTEX_INITIALIZER };

void log_keep_last_error(bool on)
{
	pthread_mutex_lock(&last_error.lock);
	last_error.on = on;
	last_error.line[0] = '\0';
	pthread_mutex_unlock(&last_error.lock);
}

void log_last_error(char *buf, size_t len)
{
	pthread_mutex_lock(&last_error.lock);
	snprintf(buf, len, "%s", last_error.line);
	pthread_mutex_unlock(&last_error.lock);
}

static void keep_error(int priority, const char *fmt, va_list ap)
{
	pthread_mutex_lock(&last_error.lock);
	if (last_error.on && priority <= LOG_ERR)
		vsnprintf(last_error.line, sizeof(last_error.line), fmt, ap);
	pthread_mutex_unlock(&last_error.lock);
}

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

	va_start(ap, fmt);
	keep_error(priority, fmt, ap);
	va_end(ap);
	if (priority > log_target.max_priority)
		return;
	va_start(ap, fmt);
	if (log_target.target == LOG_TO_JOURNAL) {
		journal_printv(priority, fmt, ap);
	} else if (log_target.target == LOG_TO_SYSLOG) {
		vsyslog(priority, fmt, ap);
	} else {
		/* One fprintf per line so lines from threads do not mix. */
		char line[LOG_LINE_MAX];

		vsnprintf(line, sizeof(line), fmt, ap);
		fprintf(stderr, "rngfeed: %s\n", line);
	}
	va_end(ap);
}
