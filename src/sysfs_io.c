// SPDX-License-Identifier: GPL-2.0-or-later
/* Bounded I/O on sysfs attributes.  See include/rngfeed/sysfs_io.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "rngfeed/sysfs_io.h"
#include "rngfeed/util.h"

/* The signal's only job: end the call with EINTR (no SA_RESTART). */
static void interrupt(int sig)
{
	(void)sig;
}

static pthread_once_t handler_once = PTHREAD_ONCE_INIT;
static bool handler_ok;

static void install_handler(void)
{
	struct sigaction sa = { .sa_handler = interrupt };

	sigemptyset(&sa.sa_mask);
	handler_ok = sigaction(SYSFS_IO_SIGNAL, &sa, NULL) == 0;
}

/* CLOCK_MONOTONIC milliseconds until which calls fail at once. */
static atomic_llong sick_until;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int sysfs_bound_begin(struct sysfs_bound *b)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID,
				.sigev_signo = SYSFS_IO_SIGNAL };
	struct itimerspec its = {
		.it_value = { SYSFS_IO_BOUND_MS / 1000,
			      (SYSFS_IO_BOUND_MS % 1000) * 1000000L },
		/* Again and again: a signal that came just before the call
		 * began interrupted nothing. */
		.it_interval = { 0, 10 * 1000000L },
	};
	sigset_t sig;

	*b = (struct sysfs_bound){ .deadline = now_ms() + SYSFS_IO_BOUND_MS };
	if (now_ms() < atomic_load(&sick_until))
		return -ETIMEDOUT;
	pthread_once(&handler_once, install_handler);
	if (!handler_ok)
		return 0;
	sev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &b->timer) < 0)
		return 0;
	if (timer_settime(b->timer, 0, &its, NULL) < 0) {
		timer_delete(b->timer);
		return 0;
	}
	sigemptyset(&sig);
	sigaddset(&sig, SYSFS_IO_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &sig, &b->old_mask);
	b->armed = true;
	return 0;
}

bool sysfs_bound_again(const struct sysfs_bound *b, long r)
{
	return r < 0 && errno == EINTR && (!b->armed || now_ms() < b->deadline);
}

long sysfs_bound_end(struct sysfs_bound *b, long r)
{
	if (b->armed) {
		timer_delete(b->timer);
		pthread_sigmask(SIG_SETMASK, &b->old_mask, NULL);
	}
	if (r == -EINTR) {
		atomic_store(&sick_until, now_ms() + SYSFS_IO_SICK_MS);
		r = -ETIMEDOUT;
	}
	return r;
}

ssize_t sysfs_read_text(const char *path, char *buf, size_t len)
{
	long n;
	int fd;

	if (len == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = SYSFS_BOUNDED(read(fd, buf, len - 1));
	close(fd);
	if (n < 0)
		return n;
	return text_trim(buf, (size_t)n);
}

int sysfs_write_text(const char *path, const char *text)
{
	size_t len = strlen(text);
	long n;
	int fd;

	/* O_TRUNC is ignored by sysfs and keeps a fixture file exact.  An
	 * attribute takes its value in one write. */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = SYSFS_BOUNDED(write(fd, text, len));
	close(fd);
	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EIO;
}
