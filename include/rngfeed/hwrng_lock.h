/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One owner of the hw_random hand-over per machine.
 *
 * rng_quality belongs to the machine, not to an rngfeed: two instances
 * (a service and a manual run, with the same or different
 * RUNTIME_DIRECTORY) must not both take it, nor one hand it back under
 * the other.  The lock is a file in a fixed, machine-wide place
 * (HWRNG_LOCK_PATH; the callers take the path so that tests use their
 * own), with two open-file-description locks on it:
 *
 *   byte 0, exclusive: the owner, the instance that set rng_quality to 0;
 *   byte 1, shared:    the instances waiting to take it over.
 *
 * The file's content is the owner's record (what rng_quality read before;
 * hwrng_gate.c formats it), so a waiter that takes over, or a start after
 * a crash, knows what to put back whatever its runtime directory is.
 * The kernel drops the locks when their holder dies, so "the owner's
 * lock is free" means the record's owner is gone.  OFD locks conflict
 * between two opens of one process too, which the unit tests use.
 *
 * No logging; -errno returns.
 */
#ifndef RNGFEED_HWRNG_LOCK_H
#define RNGFEED_HWRNG_LOCK_H

#include <stdbool.h>
#include <stddef.h>

/* Beside the unit's record, in its RuntimeDirectory= (writable under
 * ProtectSystem=strict); one path for every instance on the machine. */
#define HWRNG_LOCK_PATH "/run/rngfeed/hwrng.lock"

struct hwrng_lock {
	int fd;        /* -1 = not open */
	bool owner;    /* holds byte 0 */
	bool waiting;  /* holds byte 1 */
	char path[256];
};

void hwrng_lock_init(struct hwrng_lock *l);

/* Open (creating it and its directory) the lock file at @path.  0 or
 * -errno. */
int hwrng_lock_open(struct hwrng_lock *l, const char *path);

/* Try to become the owner without waiting: 1 owner, 0 another instance
 * owns it, -errno.  A waiter that becomes the owner stops waiting. */
int hwrng_lock_try_own(struct hwrng_lock *l);

/* Say that this instance waits to take over (kept until close).  0 or
 * -errno. */
int hwrng_lock_wait(struct hwrng_lock *l);

/* Without opening a lock of one's own (--list): does an instance own the
 * hand-over whose lock file is @path?  1 yes, 0 no (or no file), -errno. */
int hwrng_lock_owned_at(const char *path);

/* Does another instance wait to take over?  1 yes, 0 no, -errno. */
int hwrng_lock_others_wait(const struct hwrng_lock *l);

/* The record in the lock file (owner only for the writes).  read: its
 * length, 0 when empty; write replaces it; clear empties it. */
int hwrng_lock_read(const struct hwrng_lock *l, char *buf, size_t len);
int hwrng_lock_write(const struct hwrng_lock *l, const char *text);
int hwrng_lock_clear(const struct hwrng_lock *l);

/* Drop the locks and close.  @remove: the owner, with no waiter, removes
 * the file first (so a test leaves nothing behind). */
void hwrng_lock_close(struct hwrng_lock *l, bool remove);

#endif
