// SPDX-License-Identifier: GPL-2.0-or-later
/* The locked PID file.  See include/rngfeed/pidfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/pidfile.h"
#include "rngfeed/util.h"

/* "123\n" and the like: what this program (or another daemon) writes.
 * Empty counts too: a start that stopped between truncate and write. */
static bool holds_a_pid(const char *buf, size_t n)
{
	size_t digits = 0;

	while (digits < n && buf[digits] >= '0' && buf[digits] <= '9')
		digits++;
	if (n == 0)
		return true;
	if (digits == 0 || digits > 10)
		return false;
	return digits == n || (digits + 1 == n && buf[digits] == '\n');
}

/* The file's whole content, if it is short: -EINVAL if it is longer than
 * a PID could be. */
static ssize_t read_short(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? -EINVAL : n;
}

static int refuse(const char *path, const char *what, char *why,
		  size_t why_len)
{
	snprintf(why, why_len,
		 "refusing the PID file %s: %s (left untouched; remove it or "
		 "name another)",
		 path, what);
	return -EINVAL;
}

int pidfile_take(const char *path, pid_t pid, char *why, size_t why_len)
{
	struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char buf[32];
	struct stat st;
	ssize_t got;
	int fd, n, r;

	/* A FIFO, device or directory is no PID file: looked at before it
	 * is opened (opening may have effects), and again on the fd. */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return refuse(path, S_ISLNK(st.st_mode) ? "a symbolic link"
						       : "not a regular file",
			      why, why_len);
	/* No O_TRUNC: the file is only emptied once the lock is ours and
	 * its content is a PID.  O_NONBLOCK: a FIFO swapped in after the
	 * check above must not make open() wait. */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
		  0644);
	if (fd < 0 && errno == ELOOP) /* a link swapped in after lstat */
		return refuse(path, "a symbolic link", why, why_len);
	if (fd < 0) {
		r = -errno;
		snprintf(why, why_len, "cannot open the PID file %s: %s", path,
			 strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return refuse(path, "not a regular file", why, why_len);
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
	got = read_short(fd, buf, sizeof(buf));
	if (got < 0 || !holds_a_pid(buf, (size_t)got)) {
		close(fd);
		return refuse(path, "its content is not a PID", why, why_len);
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

/* @path is still the file @dev/@ino and holds @pid: the one this
 * instance wrote (not one a later start or someone else put there). */
static bool still_ours(const char *path, dev_t dev, ino_t ino, pid_t pid)
{
	char want[32], buf[32];
	struct stat st;
	ssize_t got;
	int fd, n;

	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != dev ||
	    st.st_ino != ino)
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return false;
	got = read_short(fd, buf, sizeof(buf));
	close(fd);
	n = snprintf(want, sizeof(want), "%d\n", (int)pid);
	return got == n && memcmp(buf, want, (size_t)n) == 0;
}

void pidfile_release(const char *path, int fd, pid_t pid)
{
	struct stat st;

	if (fd < 0)
		return;
	/* After a switch to another user this may fail (a root-owned
	 * directory: see pidfile_keeper_start()); the lock, which goes with
	 * the process, tells the next start that the file is stale. */
	if (fstat(fd, &st) == 0 && still_ours(path, st.st_dev, st.st_ino, pid))
		unlink(path);
	close(fd);
}

/* The keeper: waits for a byte or the end of @sock, removes the file if
 * it is still ours, answers, exits.  It holds nothing else. */
static void __attribute__((noreturn))
keeper_run(int sock, const char *path, dev_t dev, ino_t ino, pid_t pid)
{
	char c;

	cap_t none = cap_init();

	(void)prctl(PR_SET_NAME, "rngfeed-pidfile", 0L, 0L, 0L);
	/* Root's uid owns the usual directory (/run): that is all it
	 * needs, so no capability at all, and none to regain. */
	if (none)
		(void)cap_set_proc(none);
	cap_free(none);
	(void)prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L);
	/* The daemon's end closes when it exits, however it exits. */
	while (read(sock, &c, 1) < 0 && errno == EINTR)
		;
	if (still_ours(path, dev, ino, pid))
		unlink(path);
	(void)!write(sock, "", 1);
	_exit(0);
}

int pidfile_keeper_start(const char *path, int fd, pid_t pid)
{
	struct stat st;
	int sv[2];
	pid_t child;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	child = fork();
	if (child < 0) {
		int r = -errno;

		close(sv[0]);
		close(sv[1]);
		return r;
	}
	if (child == 0) {
		/* Only its end of the socket: no copy of the daemon's fds
		 * (a detach verdict pipe, the kernel's device). */
		if (dup2(sv[1], 3) < 0)
			_exit(1);
		close_range(4, ~0U, 0);
		keeper_run(3, path, st.st_dev, st.st_ino, pid);
	}
	close(sv[1]);
	return sv[0];
}

void pidfile_keeper_release(int sock)
{
	const struct timespec step = { 0, PIDFILE_KEEPER_STEP_MS * 1000000L };
	struct timespec now, until;
	char c;

	if (sock < 0)
		return;
	/* By the clock: on a loaded machine a 2-ms sleep takes longer. */
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += PIDFILE_KEEPER_WAIT_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	/*
	 * Nothing here waits on the keeper: it is told without waiting (a
	 * byte; failing that, the close is its end of input too) and its
	 * answer is looked for in short sleeps, PIDFILE_KEEPER_WAIT_MS in
	 * all.  A keeper that is slower (stopped, SIGSTOP) removes the file
	 * when it runs again, after the daemon is gone.
	 */
	if (send(sock, "", 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1)
		for (;;) {
			ssize_t n = recv(sock, &c, 1, MSG_DONTWAIT);

			if (n >= 0 || (errno != EAGAIN && errno != EINTR))
				break;
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec > until.tv_sec ||
			    (now.tv_sec == until.tv_sec &&
			     now.tv_nsec >= until.tv_nsec))
				break;
			nanosleep(&step, NULL);
		}
	close(sock);
}

int pidfile_open(struct pidfile *pf, const char *path, pid_t pid,
		 bool keeper, char *why, size_t why_len)
{
	int fd = pidfile_take(path, pid, why, why_len);

	if (fd < 0)
		return fd;
	*pf = (struct pidfile){ .fd = fd, .keeper = -1, .pid = pid };
	why[0] = '\0';
	if (keeper) {
		pf->keeper = pidfile_keeper_start(path, fd, pid);
		if (pf->keeper < 0)
			snprintf(why, why_len,
				 "the PID file %s may stay after the switch of "
				 "user: %s",
				 path, strerror(-pf->keeper));
	}
	return 0;
}

void pidfile_close(struct pidfile *pf, const char *path)
{
	pidfile_keeper_release(pf->keeper);
	pidfile_release(path, pf->fd, pf->pid);
	*pf = PIDFILE_NONE;
}
