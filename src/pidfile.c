// SPDX-License-Identifier: GPL-2.0-or-later
/* The locked PID file.  See include/rngfeed/pidfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rngfeed/pidfile.h"
#include "rngfeed/util.h"

int pidfile_take(const char *path, pid_t pid, char *why, size_t why_len)
{
	struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char buf[32];
	int fd, n, r;

	/* No O_TRUNC: the file is only emptied once the lock is ours. */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		r = -errno;
		snprintf(why, why_len, "cannot open the PID file %s: %s", path,
			 strerror(-r));
		return r;
	}
	if (fcntl(fd, F_SETLK, &lk) < 0) {
		r = errno == EACCES || errno == EAGAIN ? -EAGAIN : -errno;
		snprintf(why, why_len,
			 "the PID file %s is locked by a running process (is "
			 "rngfeed running already?)",
			 path);
		close(fd);
		return r;
	}
	n = snprintf(buf, sizeof(buf), "%d\n", (int)pid);
	r = ftruncate(fd, 0) < 0 ? -errno : write_all(fd, buf, (size_t)n);
	if (r < 0) {
		snprintf(why, why_len, "cannot write the PID file %s: %s", path,
			 strerror(-r));
		unlink(path);
		close(fd);
		return r;
	}
	return fd;
}

void pidfile_release(const char *path, int fd)
{
	if (fd < 0)
		return;
	/* After a switch to another user this may fail (a root-owned
	 * directory); the lock, which goes with the process, is what tells
	 * the next start that the file is stale. */
	unlink(path);
	close(fd);
}
