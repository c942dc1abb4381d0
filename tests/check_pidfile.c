// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The locked PID file: a held file is refused and left as it was (issue
 * 15 defect 6: a failed start deleted a running instance's PID file), a
 * stale one is taken over, and release removes only what was taken.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rngfeed/pidfile.h"
#include "test_doubles.h"

static char dir[64], path[128];

static void setup(void)
{
	strcpy(dir, "/tmp/check_pidfile.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.pid", dir);
}

static void teardown(void)
{
	unlink(path);
	rmdir(dir);
}

static void read_file(char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, len - 1);
	ck_assert_int_ge(n, 0);
	buf[n] = '\0';
	close(fd);
}

START_TEST(test_take_writes_and_release_removes)
{
	char why[256], buf[64];
	int fd = pidfile_take(path, 4242, why, sizeof(why));

	ck_assert_int_ge(fd, 0);
	read_file(buf, sizeof(buf));
	ck_assert_str_eq(buf, "4242\n");
	pidfile_release(path, fd, 4242);
	ck_assert_int_eq(access(path, F_OK), -1);
}
END_TEST

/* Another process holds the lock: refused, and the file keeps its
 * content and stays. */
START_TEST(test_held_file_is_left_alone)
{
	char why[256], buf[64];
	int p[2], go[2], fd;
	pid_t child;
	char c;

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(pipe(go), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		int cfd = pidfile_take(path, 777, why, sizeof(why));

		close(go[1]);
		if (write(p[1], cfd >= 0 ? "y" : "n", 1) != 1)
			_exit(2);
		/* Hold the lock until the parent closes its end, then exit
		 * normally (valgrind writes its summary only then). */
		while (read(go[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(go[0]);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	ck_assert_int_eq(c, 'y');
	fd = pidfile_take(path, 4242, why, sizeof(why));
	ck_assert_int_eq(fd, -EAGAIN);
	ck_assert_ptr_nonnull(strstr(why, "locked by a running process"));
	read_file(buf, sizeof(buf));
	ck_assert_str_eq(buf, "777\n");
	close(go[1]);
	waitpid(child, NULL, 0);
	/* Its process is gone, so is the lock: a stale file is taken over,
	 * with no trace of the old PID. */
	fd = pidfile_take(path, 4243, why, sizeof(why));
	ck_assert_int_ge(fd, 0);
	read_file(buf, sizeof(buf));
	ck_assert_str_eq(buf, "4243\n");
	pidfile_release(path, fd, 4243);
	ck_assert_int_eq(access(path, F_OK), -1);
	close(p[0]);
	close(p[1]);
}
END_TEST

START_TEST(test_symlink_refused)
{
	char why[256], target[160];

	snprintf(target, sizeof(target), "%s/target", dir);
	ck_assert_int_eq(symlink(target, path), 0);
	ck_assert_int_lt(pidfile_take(path, 1, why, sizeof(why)), 0);
	ck_assert_int_eq(access(target, F_OK), -1);
	unlink(path);
}
END_TEST

START_TEST(test_release_of_nothing)
{
	char buf[64];
	int fd = open(path, O_WRONLY | O_CREAT, 0644);

	ck_assert_int_eq(write(fd, "1\n", 2), 2);
	close(fd);
	pidfile_release(path, -1, 1); /* never taken: not removed */
	read_file(buf, sizeof(buf));
	ck_assert_str_eq(buf, "1\n");
}
END_TEST

/* Issue 24 (8): a file that is not a PID file is refused and left as it
 * was, content and all. */
START_TEST(test_not_a_pid_file_refused)
{
	static const char text[] = "precious notes\n";
	char why[256], buf[64];
	struct stat st;
	int fd;

	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(pidfile_take(path, 4242, why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "not a regular file"));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	unlink(path);

	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	ck_assert_int_eq(pidfile_take(path, 4242, why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "not a PID"));
	read_file(buf, sizeof(buf));
	ck_assert_str_eq(buf, text);
}
END_TEST

/* Release removes only the file it wrote: not one put in its place, nor
 * ours with someone else's PID written into it. */
START_TEST(test_release_only_ours)
{
	char why[256], buf[64], other[160];
	int fd = pidfile_take(path, 4242, why, sizeof(why)), ofd;

	ck_assert_int_ge(fd, 0);
	snprintf(other, sizeof(other), "%s/other", dir);
	ofd = open(other, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_eq(write(ofd, "4242\n", 5), 5);
	close(ofd);
	ck_assert_int_eq(rename(other, path), 0);
	pidfile_release(path, fd, 4242);
	read_file(buf, sizeof(buf));
	ck_assert_str_eq(buf, "4242\n");
	unlink(path);

	fd = pidfile_take(path, 4242, why, sizeof(why));
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "99\n", 3, 0), 3);
	ck_assert_int_eq(ftruncate(fd, 3), 0);
	pidfile_release(path, fd, 4242);
	read_file(buf, sizeof(buf));
	ck_assert_str_eq(buf, "99\n");
}
END_TEST

int main(void)
{
	return td_run(td_suite(
		"pidfile", "core", setup, teardown, 0,
		TD_TESTS(test_take_writes_and_release_removes,
			 test_held_file_is_left_alone, test_symlink_refused,
			 test_release_of_nothing, test_not_a_pid_file_refused,
			 test_release_only_ours)));
}
