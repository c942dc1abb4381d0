// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Bounded I/O on sysfs attributes (sysfs_io.h): an attribute whose
 * driver never answers stands for a FIFO that a holder keeps open and
 * never writes.  The bounded call's signal is blocked the rest of the
 * time, as the daemon's main thread blocks every signal.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rngfeed/sysfs_io.h"
#include "test_doubles.h"

static char dir[64];

static void setup(void)
{
	sigset_t held;

	td_tmpdir(dir, sizeof(dir), "sysfsio");
	/* As in the daemon's main thread, which blocks them all. */
	sigemptyset(&held);
	sigaddset(&held, SYSFS_IO_SIGNAL);
	sigaddset(&held, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &held, NULL);
}

static void teardown(void)
{
	td_tree_remove(dir);
}

static bool signal_blocked(void)
{
	sigset_t cur;

	pthread_sigmask(SIG_SETMASK, NULL, &cur);
	return sigismember(&cur, SYSFS_IO_SIGNAL) == 1;
}

START_TEST(reads_and_writes_a_plain_attribute)
{
	char path[128], buf[32];

	td_put(dir, "rng_current", "virtio_rng.0\n");
	snprintf(path, sizeof(path), "%s/rng_current", dir);
	ck_assert_int_eq(sysfs_read_text(path, buf, sizeof(buf)), 12);
	ck_assert_str_eq(buf, "virtio_rng.0");
	ck_assert_int_eq(sysfs_write_text(path, "tpm-rng-0"), 0);
	ck_assert_str_eq(td_get(dir, "rng_current", buf, sizeof(buf)),
			 "tpm-rng-0");
	ck_assert(signal_blocked());
}
END_TEST

/* A call that never completes returns -ETIMEDOUT after the bound, with
 * the thread's signal mask as it was; then every call fails at once for a
 * while (a regular file too), and works again after. */
START_TEST(a_call_that_never_answers_ends)
{
	char fifo[128], file[128], buf[32];
	double t0, took;
	int holder;

	snprintf(fifo, sizeof(fifo), "%s/stuck", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	/* A writer that never writes: the read waits. */
	holder = open(fifo, O_RDWR);
	ck_assert_int_ge(holder, 0);
	t0 = td_now();
	ck_assert_int_eq(sysfs_read_text(fifo, buf, sizeof(buf)), -ETIMEDOUT);
	took = td_now() - t0;
	ck_assert_msg(took >= SYSFS_IO_BOUND_MS / 1000.0 && took < TD_DEADLINE_S,
		      "the call took %.3f s", took);
	ck_assert(signal_blocked());

	td_put(dir, "rng_quality", "1024\n");
	snprintf(file, sizeof(file), "%s/rng_quality", dir);
	ck_assert_int_eq(sysfs_read_text(file, buf, sizeof(buf)), -ETIMEDOUT);
	ck_assert(TD_WAIT_UNTIL(sysfs_read_text(file, buf, sizeof(buf)) == 4));
	ck_assert_str_eq(buf, "1024");
	close(holder);
}
END_TEST

int main(void)
{
	/* Past Check's 4-s default: a_call_that_never_answers_ends waits
	 * about 2 s by design, and up to TD_DEADLINE_S for the calls to
	 * work again (a loaded machine, qemu-user at nice 19). */
	return td_run(td_suite("sysfs_io", "bound", setup, teardown,
			       TD_DEADLINE_S + 10,
			       TD_TESTS(reads_and_writes_a_plain_attribute,
					a_call_that_never_answers_ends)));
}
