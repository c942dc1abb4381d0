/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * I/O on sysfs attributes, bounded in time.
 *
 * The kernel side of a device's attribute may wait on its driver:
 * hw_random's rng_current, rng_available and rng_quality wait for the
 * core's rng_mutex, which a device's registration holds while the driver
 * initialises the device (and so, through the reading mutex, while a read
 * of a stuck device goes on).  That wait ends on a signal, but the daemon
 * takes its signals through a signalfd and blocks every one, so nothing
 * would end it and the main thread would never see SIGTERM.
 *
 * A bounded call arms a timer that sends SYSFS_IO_SIGNAL to the calling
 * thread (a handler without SA_RESTART, installed on first use, the
 * signal unblocked for the call only) after SYSFS_IO_BOUND_MS and every
 * 10 ms after that, and fails with -ETIMEDOUT once the bound has passed.
 * For SYSFS_IO_SICK_MS after a timeout every call fails at once, so that
 * a stop's hand-back of rng_quality costs one bound at most.  Opening an
 * attribute and truncating it never reach the driver: not bounded.
 */
#ifndef RNGFEED_SYSFS_IO_H
#define RNGFEED_SYSFS_IO_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#define SYSFS_IO_SIGNAL (SIGRTMIN + 2)
#define SYSFS_IO_BOUND_MS 200
#define SYSFS_IO_SICK_MS 2000

struct sysfs_bound {
	timer_t timer;
	sigset_t old_mask;
	long long deadline; /* CLOCK_MONOTONIC ms */
	bool armed;
};

/* 0, or -ETIMEDOUT while the attributes are known to be stuck.  Without a
 * timer (none left, no handler) the call goes unbounded rather than not
 * at all. */
int sysfs_bound_begin(struct sysfs_bound *b);
/* Call again after @r (a call's -1 with errno EINTR) before the bound? */
bool sysfs_bound_again(const struct sysfs_bound *b, long r);
/* Disarm; @r the call's result or -errno, -EINTR becoming -ETIMEDOUT. */
long sysfs_bound_end(struct sysfs_bound *b, long r);

/*
 * @call (a read, pread or pwrite on an attribute's fd: -1 and errno on an
 * error) bounded: its result, or -errno.  A macro, so that the call stays
 * in the function that makes it (make liveness tells call sites apart by
 * the function that makes the call and its caller).
 */
#define SYSFS_BOUNDED(call)                                                   \
	__extension__({                                                       \
		struct sysfs_bound sb_;                                       \
		long sr_ = sysfs_bound_begin(&sb_);                           \
		if (sr_ == 0) {                                               \
			do                                                    \
				sr_ = (long)(call);                           \
			while (sysfs_bound_again(&sb_, sr_));                 \
			sr_ = sysfs_bound_end(&sb_, sr_ < 0 ? -errno : sr_);  \
		}                                                             \
		sr_;                                                          \
	})

/* read_text_file() (util.h), bounded. */
ssize_t sysfs_read_text(const char *path, char *buf, size_t len);
/* All of @text to @path, opened O_WRONLY | O_TRUNC: 0 or -errno. */
int sysfs_write_text(const char *path, const char *text);

#endif
