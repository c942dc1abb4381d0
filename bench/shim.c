// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * shim.so: the LD_PRELOAD instrument bench/fill.sh and bench/startup.sh
 * put on both rngfeed and rngd, so the two daemons are counted by the
 * same code at the same place, the RNDADDENTROPY ioctl.
 *
 *   LD_PRELOAD=bench/shim.so RNGFEED_SHIM_OUT=FILE [RNGFEED_SHIM_T0=T] cmd
 *
 * 1. poll()/ppoll() asking POLLOUT on the kernel's random device (char
 *    1:8 or 1:9) return at once with it writable.  On kernels >= 5.18 the
 *    device never turns writable once the CRNG is ready, so rngd writes
 *    64 bytes and then sleeps for ever; before 5.18 the same poll returned
 *    at once while the pool was below the wake-up threshold, which is the
 *    fill phase this emulates.  The fstat() that recognises the device is
 *    one system call in place of the one poll() that would have returned
 *    at once, so neither daemon is charged much more or less than there.
 * 2. Every RNDADDENTROPY goes through to the kernel and is counted: calls
 *    the kernel accepted, their bytes (buf_size) and credited bits
 *    (entropy_count), calls it refused, and the CLOCK_MONOTONIC time of
 *    the first accepted call with a non-zero credit.
 * 3. The counts go to FILE as one line of key=value pairs, written to
 *    FILE.tmp and renamed so a reader never sees half a line:
 *      - at the first credited call (bench/startup.sh waits for it),
 *      - on an RNDADDENTROPY at least 100 ms after the last write,
 *      - at exit (a destructor; final=1).
 *    rngd 5 installs no SIGTERM handler and dies by the signal, so no
 *    destructor runs for it: its last record is the last periodic one, at
 *    most 100 ms of feeding old.  Each record carries the CLOCK_MONOTONIC
 *    time and the process's CPU time (CLOCK_PROCESS_CPUTIME_ID, every
 *    thread) at which it was taken, so a rate computed from one record is
 *    exact for the interval it covers, the same way for both daemons.
 *
 * Keys: pid calls bytes credited_bits errors polls_forced
 * first_credit_mono_ns ctor_mono_ns ctor_real_ns snap_mono_ns cpu_ns
 * minflt majflt (getrusage(RUSAGE_SELF) when the record was taken: in the
 * first credit's record, the page faults from exec to it, the loader's
 * included) final t0 (RNGFEED_SHIM_T0 copied verbatim; the harness sets
 * it to bash's $EPOCHREALTIME just before exec, and ctor_real_ns - t0 is
 * then the time from exec through the dynamic loader to this library's
 * constructor).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/random.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define SNAP_PERIOD_NS 100000000LL /* rewrite the file at most every 100 ms */

typedef int (*ioctl_fn)(int, unsigned long, ...);
typedef int (*poll_fn)(struct pollfd *, nfds_t, int);
typedef int (*ppoll_fn)(struct pollfd *, nfds_t, const struct timespec *,
			const sigset_t *);

static atomic_ullong calls, bytes, credited_bits, errors, polls_forced;
static atomic_llong first_credit_ns; /* 0: no credited call yet */
static atomic_llong last_snap_ns;
static atomic_flag writing = ATOMIC_FLAG_INIT;
static long long ctor_mono_ns, ctor_real_ns;
static const char *out_path;

static long long clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The next definition of NAME after this library: libc's. */
static void *real(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		static const char msg[] = "shim.so: a libc symbol is missing\n";

		if (write(2, msg, sizeof(msg) - 1) < 0)
			_exit(127);
		_exit(127);
	}
	return f;
}

/*
 * Write one record.  One writer at a time (an atomic flag, not a mutex,
 * so a thread that finds another writing just skips: the other's record
 * is as fresh); the destructor waits its turn because its record is the
 * last.  errno is preserved: the caller returns the ioctl's own.
 */
static void snapshot(int final)
{
	char line[512], tmp[4096];
	const char *t0 = getenv("RNGFEED_SHIM_T0");
	long long now = clock_ns(CLOCK_MONOTONIC);
	struct rusage ru = { 0 };
	int saved = errno, fd, n;

	if (!out_path)
		return;
	while (atomic_flag_test_and_set(&writing)) {
		if (!final)
			return;
		sched_yield();
	}
	getrusage(RUSAGE_SELF, &ru);
	n = snprintf(line, sizeof(line),
		     "pid=%d calls=%llu bytes=%llu credited_bits=%llu errors=%llu "
		     "polls_forced=%llu first_credit_mono_ns=%lld ctor_mono_ns=%lld "
		     "ctor_real_ns=%lld snap_mono_ns=%lld cpu_ns=%lld minflt=%ld "
		     "majflt=%ld final=%d t0=%s\n",
		     (int)getpid(), atomic_load(&calls), atomic_load(&bytes),
		     atomic_load(&credited_bits), atomic_load(&errors),
		     atomic_load(&polls_forced), atomic_load(&first_credit_ns),
		     ctor_mono_ns, ctor_real_ns, now,
		     clock_ns(CLOCK_PROCESS_CPUTIME_ID), ru.ru_minflt,
		     ru.ru_majflt, final, t0 ? t0 : "-");
	snprintf(tmp, sizeof(tmp), "%s.tmp", out_path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		int ok = n > 0 && write(fd, line, (size_t)n) == n;

		close(fd);
		if (ok)
			rename(tmp, out_path);
	}
	atomic_store(&last_snap_ns, now);
	atomic_flag_clear(&writing);
	errno = saved;
}

__attribute__((constructor)) static void shim_init(void)
{
	ctor_mono_ns = clock_ns(CLOCK_MONOTONIC);
	ctor_real_ns = clock_ns(CLOCK_REALTIME);
	out_path = getenv("RNGFEED_SHIM_OUT");
	if (out_path && !*out_path)
		out_path = NULL;
	/* A record from the start, so a daemon that never feeds still
	 * leaves one (calls=0) rather than a stale file. */
	snapshot(0);
}

__attribute__((destructor)) static void shim_fini(void)
{
	snapshot(1);
}

int ioctl(int fd, unsigned long request, ...)
{
	static _Atomic(ioctl_fn) next;
	ioctl_fn f = atomic_load(&next);
	va_list ap;
	void *arg;
	int r;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!f) {
		f = (ioctl_fn)real("ioctl");
		atomic_store(&next, f);
	}
	r = f(fd, request, arg);
	if (request == RNDADDENTROPY) {
		const struct rand_pool_info *p = arg;
		long long now, zero = 0;

		if (r < 0) {
			atomic_fetch_add(&errors, 1);
			return r;
		}
		atomic_fetch_add(&calls, 1);
		atomic_fetch_add(&bytes, (unsigned long long)(p->buf_size > 0 ? p->buf_size : 0));
		if (p->entropy_count > 0) {
			atomic_fetch_add(&credited_bits, (unsigned long long)p->entropy_count);
			if (!atomic_load(&first_credit_ns)) {
				now = clock_ns(CLOCK_MONOTONIC);
				if (atomic_compare_exchange_strong(&first_credit_ns, &zero, now)) {
					snapshot(0);
					return r;
				}
			}
		}
		/* One vDSO clock read per call (tens of ns against the
		 * ioctl's ~1 us) buys a record never more than 100 ms old. */
		now = clock_ns(CLOCK_MONOTONIC);
		if (now - atomic_load(&last_snap_ns) >= SNAP_PERIOD_NS)
			snapshot(0);
	}
	return r;
}

static int is_random_device(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) &&
	       major(st.st_rdev) == 1 &&
	       (minor(st.st_rdev) == 8 || minor(st.st_rdev) == 9);
}

/*
 * -1: nothing to force (call the real poll).  Otherwise the random
 * device's entries asking POLLOUT get revents POLLOUT, the others those of
 * a non-blocking real poll; the return is the count of entries with events.
 */
static int forced_poll(struct pollfd *fds, nfds_t nfds, ppoll_fn real_ppoll)
{
	static const struct timespec zero;
	nfds_t forced = 0;
	int n = 0;

	for (nfds_t i = 0; i < nfds; i++)
		if ((fds[i].events & POLLOUT) && is_random_device(fds[i].fd))
			forced++;
	if (!forced)
		return -1;
	atomic_fetch_add(&polls_forced, 1);
	if (forced == nfds) { /* rngd's case: one fd, no second fstat */
		for (nfds_t i = 0; i < nfds; i++)
			fds[i].revents = POLLOUT;
		return (int)nfds;
	}
	if (real_ppoll(fds, nfds, &zero, NULL) < 0)
		return -1; /* let the real call report the error */
	for (nfds_t i = 0; i < nfds; i++) {
		if ((fds[i].events & POLLOUT) && is_random_device(fds[i].fd))
			fds[i].revents |= POLLOUT;
		if (fds[i].revents)
			n++;
	}
	return n;
}

static ppoll_fn next_ppoll(void)
{
	static _Atomic(ppoll_fn) next;
	ppoll_fn f = atomic_load(&next);

	if (!f) {
		f = (ppoll_fn)real("ppoll");
		atomic_store(&next, f);
	}
	return f;
}

int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	static _Atomic(poll_fn) next;
	poll_fn f = atomic_load(&next);
	int n = forced_poll(fds, nfds, next_ppoll());

	if (n >= 0)
		return n;
	if (!f) {
		f = (poll_fn)real("poll");
		atomic_store(&next, f);
	}
	return f(fds, nfds, timeout);
}

int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *tmo,
	  const sigset_t *sigmask)
{
	ppoll_fn f = next_ppoll();
	int n = forced_poll(fds, nfds, f);

	return n >= 0 ? n : f(fds, nfds, tmo, sigmask);
}
