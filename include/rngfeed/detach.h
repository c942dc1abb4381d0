/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Detaching (no -f) with a verdict: the parent process waits until the
 * daemon's start-up has run or failed and exits as it did -- 0, or 1 or 2
 * with the failure's message on stderr, as rngfeed(8) says -- instead of 0
 * at the fork with the message only in syslog.
 */
#ifndef RNGFEED_DETACH_H
#define RNGFEED_DETACH_H

/*
 * Fork, as daemon(3) does (a new session, "/", fds 0-2 on /dev/null), and
 * log to syslog (unless under systemd) keeping the last error.
 * The parent never returns: it waits for the verdict, passing on to the
 * child the signals that arrive at @sigfd (a signalfd of the daemon's
 * signals) meanwhile, and exits.  Returns, in the child, the fd to send
 * the verdict on; -errno (and no child) when fork fails.  Before any
 * thread exists.
 */
int detach_start(int sigfd);

/* In the child: start-up ended with @exit_code (0: running; otherwise
 * the last error logged goes with it); closes *@fd and sets it to -1 (a
 * no-op when it is -1 already).  A child that ends without a verdict makes
 * the parent exit 1. */
void detach_verdict(int *fd, int exit_code);

#endif
