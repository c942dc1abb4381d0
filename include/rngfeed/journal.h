/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One log line to the journal, for log.c's LOG_TO_JOURNAL target (started
 * by systemd: JOURNAL_STREAM is set).  Built with libsystemd
 * (RNGFEED_SYSTEMD=1): journald's native protocol, sd_journal_print(3).
 * Built without it (make SYSTEMD=no) there is no native protocol: log.c
 * writes the line on stderr with the "<N>" priority prefix that journald
 * reads on a service's output stream (SyslogLevelPrefix=, on by default),
 * so each message still keeps its priority; only the native protocol's
 * extra fields (CODE_FILE=, CODE_LINE=, CODE_FUNC=) are lost.
 */
#ifndef RNGFEED_JOURNAL_H
#define RNGFEED_JOURNAL_H

/* 0, -errno when journald refused the line, or -EOPNOTSUPP in a build
 * without libsystemd (the caller then writes "<N>line" on stderr). */
int journal_write(int priority, const char *line);

#endif
