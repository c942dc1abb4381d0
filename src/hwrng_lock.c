// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One owner of the hw_random hand-over per machine (see hwrng_lock.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rngfeed/hwrng_lock.h"
#include "rngfeed/hwrng_record.h"

enum { BYTE_OWNER = 0, BYTE_WAITERS = 1 };

void hwrng_lock_init(struct hwrng_lock *l)
{
	*l = (struct hwrng_lock){ .fd = -1 };
}

/* The lock file is made as a record is (it holds the owner's record):
 * created 0600 with its directory, never through a link. */
static int open_file(const char *path)
{
	return hwrng_record_open(path);
}

int hwrng_lock_open(struct hwrng_lock *l, const char *path)
{
	int fd;

	hwrng_lock_init(l);
	if (strlen(path) >= sizeof(l->path))
		return -ENAMETOOLONG;
	fd = open_file(path);
	if (fd < 0)
		return fd;
	strcpy(l->path, path);
	l->fd = fd;
	return 0;
}

static int set_lock(int fd, short type, off_t byte)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = byte, .l_len = 1 };

	return fcntl(fd, F_OFD_SETLK, &fl) < 0 ? -errno : 0;
}

/* Is @fd still the file at @path?  An owner that had no waiter removes
 * the file at release; a lock taken on the removed file guards nothing. */
static bool still_there(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int hwrng_lock_try_own(struct hwrng_lock *l)
{
	if (l->fd < 0)
		return -EBADF;
	if (l->owner)
		return 1;
	/* A removed file is opened again, a few times at most. */
	for (int tries = 0; tries < 4; tries++) {
		int r = set_lock(l->fd, F_WRLCK, BYTE_OWNER), fd;

		if (r == -EAGAIN || r == -EACCES)
			return 0;
		if (r < 0)
			return r;
		if (still_there(l->fd, l->path)) {
			l->owner = true;
			if (l->waiting && set_lock(l->fd, F_UNLCK,
						   BYTE_WAITERS) == 0)
				l->waiting = false;
			return 1;
		}
		fd = open_file(l->path);
		if (fd < 0)
			return fd;
		close(l->fd); /* drops this description's locks */
		l->fd = fd;
		if (l->waiting && set_lock(l->fd, F_RDLCK, BYTE_WAITERS) < 0)
			l->waiting = false;
	}
	return -EAGAIN;
}

int hwrng_lock_wait(struct hwrng_lock *l)
{
	int r;

	if (l->fd < 0)
		return -EBADF;
	r = set_lock(l->fd, F_RDLCK, BYTE_WAITERS);
	if (r == 0)
		l->waiting = true;
	return r;
}

int hwrng_lock_others_wait(const struct hwrng_lock *l)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = BYTE_WAITERS, .l_len = 1 };

	if (l->fd < 0)
		return -EBADF;
	if (fcntl(l->fd, F_OFD_GETLK, &fl) < 0)
		return -errno;
	return fl.l_type != F_UNLCK;
}

int hwrng_lock_owned_at(const char *path)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = BYTE_OWNER, .l_len = 1 };
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	int r;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	r = fcntl(fd, F_OFD_GETLK, &fl) < 0 ? -errno : fl.l_type != F_UNLCK;
	close(fd);
	return r;
}

int hwrng_lock_read(const struct hwrng_lock *l, char *buf, size_t len)
{
	ssize_t n;

	if (l->fd < 0)
		return -EBADF;
	n = pread(l->fd, buf, len - 1, 0);
	if (n < 0)
		return -errno;
	if ((size_t)n == len - 1)
		return -EBADMSG;
	buf[n] = '\0';
	return (int)n;
}

int hwrng_lock_write(const struct hwrng_lock *l, const char *text)
{
	size_t n = strlen(text);

	if (!l->owner)
		return -EPERM;
	if (ftruncate(l->fd, 0) < 0)
		return -errno;
	if (pwrite(l->fd, text, n, 0) != (ssize_t)n)
		return errno ? -errno : -EIO;
	return 0;
}

int hwrng_lock_clear(const struct hwrng_lock *l)
{
	if (!l->owner)
		return -EPERM;
	return ftruncate(l->fd, 0) < 0 ? -errno : 0;
}

void hwrng_lock_close(struct hwrng_lock *l, bool remove)
{
	if (l->fd < 0)
		return;
	/* Removed while still locked: a newcomer that opened it before the
	 * unlink finds it gone (still_there()) and opens a new one. */
	if (remove && l->owner && hwrng_lock_others_wait(l) == 0)
		unlink(l->path);
	close(l->fd);
	hwrng_lock_init(l);
}
