/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One log message to the journal, for log.c's LOG_TO_JOURNAL target
 * (started by systemd: JOURNAL_STREAM is set).  Built with libsystemd
 * (RNGFEED_SYSTEMD=1): journald's native protocol, sd_journal_printv(3).
 * Built without it (make SYSTEMD=no): the line on stderr with the
 * "<N>" priority prefix that journald reads on a service's output
 * stream (SyslogLevelPrefix=, on by default), so each message still keeps
 * its priority; only the native protocol's extra fields (CODE_FILE=,
 * CODE_LINE=, CODE_FUNC=) are lost.
 */
#ifndef RNGFEED_JOURNAL_H
#define RNGFEED_JOURNAL_H

#include <stdarg.h>

void journal_printv(int priority, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#endif
