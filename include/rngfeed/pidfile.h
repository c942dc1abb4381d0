/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The PID file, locked for the daemon's life (a write lock with fcntl(2)):
 * a second instance pointed at a running one's file is refused and leaves
 * it alone, a stale file (its process gone, so its lock too) is taken
 * over, and only the instance that wrote the file removes it.
 */
#ifndef RNGFEED_PIDFILE_H
#define RNGFEED_PIDFILE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Create or take over @path, lock it and write @pid.  Returns the open
 * fd (keep it: the lock lives with it), -EAGAIN when another process
 * holds it (the file is not touched), or -errno; @why says which.
 */
int pidfile_take(const char *path, pid_t pid, char *why, size_t why_len);
/* Remove @path and close @fd (which pidfile_take() returned). */
void pidfile_release(const char *path, int fd);

#endif
