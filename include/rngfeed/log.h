/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging for the program (not for library-like modules, which return
 * errors and let the caller decide).  Priorities are syslog's.
 *
 * Until log_queue_begin() each line is written where it goes at once (the
 * modes that end by themselves: --list, --check, option errors).  The
 * daemon calls it first thing: from then on log_msg() copies the line into
 * a bounded queue and returns, and a writer thread of its own (from
 * log_writer_start()) writes the lines in the order they came.  A log
 * stream that stops taking lines (a full pipe, a stalled journald or
 * syslog daemon, a terminal on hold) holds up that writer only.  A line
 * that finds the queue full is dropped and counted; the writer says how
 * many were dropped when it gets to them (the stream drained), and
 * log_finish() says the total at exit.
 */
#ifndef RNGFEED_LOG_H
#define RNGFEED_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <syslog.h>

#define LOG_LINE_MAX 1024

/* What the queue holds: about 100 lines of the usual length (a summary
 * is a dozen), as long as the stream stalls. */
#define LOG_QUEUE_BYTES 16384
/* log_finish() does not wait for a writer that has been writing one line
 * this long: the stream has stalled (a writer that only waits for a CPU on
 * a loaded machine gets one sooner). */
#define LOG_STALLED_S 0.25

enum log_target {
	LOG_TO_STDERR,  /* foreground: "rngfeed: message" lines */
	LOG_TO_JOURNAL, /* started by systemd: native journal with priorities */
	LOG_TO_SYSLOG,  /* a classic daemon without systemd */
};

/* Messages above @max_priority are dropped.  Before any thread exists. */
void log_setup(int max_priority, enum log_target target);
int log_max_priority(void);
void log_msg(int priority, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A line on stderr as it is (no prefix), whatever the target and the
 * verbosity: for scripts that read it (--bench-fill). */
void log_plain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Keep (or stop keeping) a copy of the last error message, whatever the
 * target and verbosity: a detached start-up's verdict carries it. */
void log_keep_last_error(bool on);
void log_last_error(char *buf, size_t len);

/* From here on lines wait in the queue (until log_writer_start(), or
 * log_finish(), starts the writer).  Once, before any thread exists. */
void log_queue_begin(void);
/* The writer thread, after the privilege drop (it inherits the caller's
 * capabilities) and after any fork.  0 or -errno. */
int log_writer_start(void);
/* The end of the daemon: the total of dropped lines is logged, and the
 * writer (started now if it was not) gets until @until (CLOCK_MONOTONIC
 * seconds) at most to write what waits, and no time at all once it has
 * been writing one line for LOG_STALLED_S; what it cannot write is left
 * (the process ends).  Nothing waits on the stream itself. */
void log_finish(double until);
/* Lines dropped so far (the queue was full, or the stream refused them). */
uint64_t log_dropped_lines(void);

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
