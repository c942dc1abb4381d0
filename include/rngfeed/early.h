/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The first instructions of main(): standard fds that exist, and the
 * daemon's signals held (blocked and queued) before anything can take
 * long enough for one to arrive.  No logging, no globals.
 */
#ifndef RNGFEED_EARLY_H
#define RNGFEED_EARLY_H

#include <signal.h>

/* What early_hold_signals() found, to put back for a mode that is no
 * daemon (--list, --raw, --check...: SIGINT and SIGTERM end those). */
struct early_signals {
	sigset_t old_mask;
	struct sigaction old_action[5];
};

/*
 * Open /dev/null onto each of fds 0, 1 and 2 that is closed, so that no
 * file the daemon opens later (a signalfd, a source) takes one of them and
 * gets --stdout's output or a library's message.  0 or -errno.
 */
int early_guard_std_fds(void);

/*
 * Block SIGTERM, SIGINT, SIGHUP, SIGUSR1 and SIGUSR2 and give each its
 * default action (an ignored signal is discarded even while blocked, so a
 * shell's ignored SIGINT would never reach the signalfd).  A signal that
 * comes before the daemon's signalfd exists waits for it; none is fatal.
 */
void early_hold_signals(struct early_signals *saved);

/* Put back the mask and actions early_hold_signals() found: a signal
 * that came meanwhile is delivered now, as it would have been. */
void early_release_signals(const struct early_signals *saved);

#endif
