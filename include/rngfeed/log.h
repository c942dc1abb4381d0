/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging for the program (not for library-like modules, which return
 * errors and let the caller decide).  Priorities are syslog's.
 */
#ifndef RNGFEED_LOG_H
#define RNGFEED_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <syslog.h>

#define LOG_LINE_MAX 1024

enum log_target {
	LOG_TO_STDERR,  /* foreground: "rngfeed: message" lines */
	LOG_TO_JOURNAL, /* started by systemd: native journal with priorities */
	LOG_TO_SYSLOG,  /* a classic daemon without systemd */
};

/* Messages above @max_priority are dropped. */
void log_setup(int max_priority, enum log_target target);
int log_max_priority(void);
void log_msg(int priority, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Keep (or stop keeping) a copy of the last error message, whatever the
 * target and verbosity: a detached start-up's verdict carries it. */
void log_keep_last_error(bool on);
void log_last_error(char *buf, size_t len);

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
