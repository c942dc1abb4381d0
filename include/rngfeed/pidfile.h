/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The PID file, locked for the daemon's life (a write lock with fcntl(2)):
 * a second instance pointed at a running one's file is refused and leaves
 * it alone, a stale file (its process gone, so its lock too) is taken
 * over, and only the instance that wrote the file removes it.
 */
#ifndef RNGFEED_PIDFILE_H
#define RNGFEED_PIDFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Create or take over @path, lock it and write @pid.  Returns the open
 * fd (keep it: the lock lives with it), -EAGAIN when another process
 * holds it, -EINVAL when it is not a regular file or holds something
 * other than a PID (a file that is not ours: bad usage), or -errno; @why
 * says which.  Refused, the file is not touched.
 */
int pidfile_take(const char *path, pid_t pid, char *why, size_t why_len);
/* Remove @path if it is still the file @fd (which pidfile_take() returned)
 * holding @pid, and close @fd. */
void pidfile_release(const char *path, int fd, pid_t pid);

/*
 * Before a switch to another user, who may not write the PID file's
 * directory: a child that keeps the right to remove it, and does so
 * (same file, same @pid only) when told or when the daemon ends.  Call
 * before any thread exists.  Returns the socket to tell it by, or -errno.
 */
int pidfile_keeper_start(const char *path, int fd, pid_t pid);
/* Tell the keeper to remove the file, look for its answer for
 * PIDFILE_KEEPER_WAIT_MS at most (in sleeps of PIDFILE_KEEPER_STEP_MS,
 * never a wait on the keeper), close.  A stop within its second needs it
 * short; a keeper answers within a millisecond when it runs. */
#define PIDFILE_KEEPER_WAIT_MS 200
#define PIDFILE_KEEPER_STEP_MS 2
void pidfile_keeper_release(int sock);

/* The daemon's PID file: the locked fd, and the keeper's socket. */
struct pidfile {
	int fd;     /* -1: none */
	int keeper; /* -1: none */
	pid_t pid;
};
#define PIDFILE_NONE ((struct pidfile){ .fd = -1, .keeper = -1 })

/*
 * pidfile_take(), and with @keeper (a switch of user follows) the keeper.
 * 0 with @why "" or, if the keeper could not start, a warning in @why;
 * or what pidfile_take() returned (<0) with @why saying it.
 */
int pidfile_open(struct pidfile *pf, const char *path, pid_t pid,
		 bool keeper, char *why, size_t why_len);
/* Remove the file (by the keeper if there is one) and close; idempotent. */
void pidfile_close(struct pidfile *pf, const char *path);

#endif
