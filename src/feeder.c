// SPDX-License-Identifier: GPL-2.0-or-later
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/random.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "rngfeed/feeder.h"

#ifndef GRND_INSECURE
#define GRND_INSECURE 0x0004 /* Linux 5.6 */
#endif

/* ---- the real kernel calls --------------------------------------------- */

static int linux_add_entropy(void *ctx, const uint8_t *buf, size_t len,
			     unsigned int credit_bits)
{
	struct kernel_linux *k = ctx;
	/* The request and its bytes in one buffer: rand_pool_info ends in
	 * an array of no length where the bytes go, and in C no member may
	 * follow such an array (clang refused the struct that had one). */
	union {
		struct rand_pool_info info;
		uint8_t raw[offsetof(struct rand_pool_info, buf) + 4096];
	} req;
	const size_t at = offsetof(struct rand_pool_info, buf);
	int r = 0;

	if (len > sizeof(req.raw) - at || credit_bits > len * 8)
		return -EINVAL;
	req.info.entropy_count = (int)credit_bits;
	req.info.buf_size = (int)len;
	memcpy(req.raw + at, buf, len);
	if (ioctl(k->fd, RNDADDENTROPY, &req) < 0)
		r = -errno;
	explicit_bzero(&req, sizeof(req));
	return r;
}

static int linux_crng_ready(void *ctx)
{
	uint8_t b;
	ssize_t n;

	(void)ctx;
	n = getrandom(&b, 1, GRND_NONBLOCK);
	explicit_bzero(&b, sizeof(b));
	if (n == 1)
		return 1;
	return errno == EAGAIN ? 0 : -errno;
}

static int linux_reseed_crng(void *ctx)
{
	struct kernel_linux *k = ctx;

	/* RNDRESEEDCRNG exists since 4.17; older kernels say ENOTTY/EINVAL
	 * and reseed on their own schedule. */
	if (ioctl(k->fd, RNDRESEEDCRNG) < 0)
		return -errno;
	return 0;
}

static int linux_wait_writable(void *ctx, int timeout_ms)
{
	struct kernel_linux *k = ctx;
	struct pollfd p = { .fd = k->fd, .events = POLLOUT };
	int r = poll(&p, 1, timeout_ms);

	if (r < 0)
		return -errno;
	return r > 0 && (p.revents & POLLOUT);
}

static ssize_t linux_get_additional(void *ctx, uint8_t *buf, size_t len)
{
	(void)ctx;
	return kernel_get_additional(buf, len);
}

ssize_t kernel_get_additional(uint8_t *buf, size_t len)
{
	ssize_t n;

	/* GRND_INSECURE never waits; GRND_NONBLOCK says so to anyone
	 * checking (make liveness), and the kernel accepts the pair. */
	n = getrandom(buf, len, GRND_INSECURE | GRND_NONBLOCK);
	if (n < 0 && errno == EINVAL) /* before 5.6: never block anyway */
		n = getrandom(buf, len, GRND_NONBLOCK);
	return n < 0 ? -errno : n;
}

int kernel_linux_open(struct kernel_linux *k, struct kernel_ops *ops,
		      const char *path, char *why, size_t why_len)
{
	struct stat st;

	/* Refuse what is not a character device before opening it: opening
	 * a FIFO for writing blocks until someone reads it.  O_NONBLOCK
	 * covers a swap between the two calls; fstat() below decides. */
	if (stat(path, &st) == 0 && !S_ISCHR(st.st_mode)) {
		snprintf(why, why_len,
			 "%s is not the kernel's random device (not a "
			 "character device)",
			 path);
		return -ENOTTY;
	}
	k->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (k->fd < 0) {
		int r = -errno;

		snprintf(why, why_len, "cannot open %s: %s", path,
			 strerror(-r));
		return r;
	}
	if (fstat(k->fd, &st) < 0 || !S_ISCHR(st.st_mode) ||
	    major(st.st_rdev) != 1 ||
	    (minor(st.st_rdev) != 8 && minor(st.st_rdev) != 9)) {
		snprintf(why, why_len,
			 "%s is not the kernel's random device (char 1:8 or "
			 "1:9)",
			 path);
		close(k->fd);
		k->fd = -1;
		return -ENOTTY;
	}
	snprintf(k->path, sizeof(k->path), "%s", path);
	*ops = (struct kernel_ops){
		.ctx = k,
		.add_entropy = linux_add_entropy,
		.crng_ready = linux_crng_ready,
		.reseed_crng = linux_reseed_crng,
		.wait_writable = linux_wait_writable,
		.get_additional = linux_get_additional,
	};
	return 0;
}

void kernel_linux_close(struct kernel_linux *k)
{
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
}

int kernel_set_watermark(unsigned int bits)
{
	char buf[32];
	int fd, n, r = 0;

	fd = open("/proc/sys/kernel/random/write_wakeup_threshold",
		  O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%u\n", bits);
	if (write(fd, buf, (size_t)n) != n)
		r = -errno;
	close(fd);
	return r;
}

int kernel_release_parse(const char *release, unsigned int *major,
			 unsigned int *minor)
{
	unsigned long a, b;
	char *end;

	/* Digits, a dot, digits: not sscanf("%u"), which takes "-5" and
	 * "+5" as numbers. */
	if (!isdigit((unsigned char)release[0]))
		return -EINVAL;
	errno = 0;
	a = strtoul(release, &end, 10);
	if (*end != '.' || !isdigit((unsigned char)end[1]))
		return -EINVAL;
	b = strtoul(end + 1, &end, 10);
	if (errno || a > UINT_MAX || b > UINT_MAX)
		return -EINVAL;
	*major = (unsigned int)a;
	*minor = (unsigned int)b;
	return 0;
}

bool kernel_release_is_modern(unsigned int major, unsigned int minor)
{
	return major > 5 || (major == 5 && minor >= 18);
}

/* ---- policy --------------------------------------------------------------- */

void feeder_init(struct feeder *f, const struct feeder_params *p)
{
	*f = (struct feeder){ .p = *p };
}

bool feeder_wants(const struct feeder *f, double now, double *wait_s)
{
	if (!f->crng_ready)
		return true;
	if (!f->p.modern_kernel) {
		if (f->kernel_asked)
			return true;
		*wait_s = -1;
		return false;
	}
	if (now >= f->next_topup)
		return true;
	*wait_s = f->next_topup - now;
	return false;
}

void feeder_kernel_asks(struct feeder *f)
{
	f->kernel_asked = true;
}

static int became_ready(struct feeder *f, const struct kernel_ops *k,
			double now)
{
	f->crng_ready = true;
	f->next_topup = now + f->p.interval_s;
	/* Failure to force a reseed is not fatal: the kernel reseeds
	 * within a minute by itself. */
	(void)k->reseed_crng(k->ctx);
	return 1;
}

int feeder_check_ready(struct feeder *f, const struct kernel_ops *k,
		       double now)
{
	int r;

	if (f->crng_ready)
		return 0;
	r = k->crng_ready(k->ctx);
	if (r < 0)
		return r;
	return r ? became_ready(f, k, now) : 0;
}

int feeder_feed(struct feeder *f, const struct kernel_ops *k,
		const uint8_t *buf, size_t len, unsigned int credit_bits,
		double now)
{
	int r;

	r = k->add_entropy(k->ctx, buf, len, credit_bits);
	if (r < 0)
		return r;
	f->fed_bytes += len;
	f->credited_bits += credit_bits;
	f->calls++;
	f->kernel_asked = false;
	if (f->crng_ready) {
		f->next_topup = now + f->p.interval_s;
		return 0;
	}
	return feeder_check_ready(f, k, now);
}
