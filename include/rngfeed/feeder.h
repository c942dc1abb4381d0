/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The feeder: what rngfeed asks of the kernel, and when.
 *
 * The kernel calls go through struct kernel_ops so that tests can replace
 * them; kernel_ops_linux() gives the real ones.
 *
 * Pacing (the README's "How credit is accounted"): until the CRNG is ready,
 * feed as fast as the sources allow, then ask the kernel to reseed its
 * CRNG at once.  After that, on kernels >= 5.18 credit changes nothing and
 * /dev/random never signals POLLOUT, so top up on a slow timer; on older
 * kernels wait for POLLOUT (the pool fell below the write wakeup
 * threshold) and feed then.
 */
#ifndef RNGFEED_FEEDER_H
#define RNGFEED_FEEDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct kernel_ops {
	void *ctx;
	/* RNDADDENTROPY: mix @len bytes in, crediting @credit_bits. */
	int (*add_entropy)(void *ctx, const uint8_t *buf, size_t len,
			   unsigned int credit_bits);
	/* 1 when getrandom(GRND_NONBLOCK) no longer fails with EAGAIN. */
	int (*crng_ready)(void *ctx);
	/* RNDRESEEDCRNG: make what was added take effect now. */
	int (*reseed_crng)(void *ctx);
	/* Old kernels: wait up to @timeout_ms for POLLOUT; 1, 0 or -errno. */
	int (*wait_writable)(void *ctx, int timeout_ms);
	/* Bytes from the kernel that never block (GRND_INSECURE), used as
	 * DRBG additional input and never credited. */
	ssize_t (*get_additional)(void *ctx, uint8_t *buf, size_t len);
};

struct kernel_linux {
	int fd;            /* the output device, /dev/random by default */
	char path[256];
};

/*
 * Open @path (which must be /dev/random or /dev/urandom: RNDADDENTROPY
 * exists nowhere else) for writing and fill @ops with the real calls.
 * Returns 0 or -errno with a one-line reason in @why.
 */
int kernel_linux_open(struct kernel_linux *k, struct kernel_ops *ops,
		      const char *path, char *why, size_t why_len);
void kernel_linux_close(struct kernel_linux *k);
/* getrandom(GRND_INSECURE): bytes that never block, for additional
 * input; no device needed.  Bytes or -errno. */
ssize_t kernel_get_additional(uint8_t *buf, size_t len);
/* Set /proc/sys/kernel/random/write_wakeup_threshold (old kernels). */
int kernel_set_watermark(unsigned int bits);

/* Parse "major.minor..." of a kernel release; -EINVAL if unparsable. */
int kernel_release_parse(const char *release, unsigned int *major,
			 unsigned int *minor);
/* true for 5.18 and later, where credit no longer matters once ready. */
bool kernel_release_is_modern(unsigned int major, unsigned int minor);

struct feeder_params {
	bool modern_kernel;      /* >= 5.18 */
	unsigned int interval_s; /* top-up period once ready (modern) */
	size_t step;             /* bytes per RNDADDENTROPY */
};

struct feeder {
	struct feeder_params p;
	bool crng_ready;
	bool kernel_asked;       /* old kernels: POLLOUT since the last feed */
	double next_topup;       /* monotonic seconds; when ready */
	uint64_t fed_bytes;
	uint64_t credited_bits;
	uint64_t calls;
};

void feeder_init(struct feeder *f, const struct feeder_params *p);

/*
 * Should the daemon gather credit and feed at @now?  Returns true when it
 * should (not ready yet, or the top-up time has come); otherwise sets
 * *@wait_s to the seconds until it should look again (modern kernels) or
 * to -1, meaning "when the kernel signals POLLOUT" (old kernels).
 */
bool feeder_wants(const struct feeder *f, double now, double *wait_s);

/* Old kernels: /dev/random signalled POLLOUT (the pool fell below the
 * write wakeup threshold); feeder_wants() says yes until the next feed. */
void feeder_kernel_asks(struct feeder *f);

/*
 * Feed @len bytes crediting @credit_bits; then, until the CRNG is ready,
 * check it and, when it has just become ready, ask for a CRNG reseed.
 * Returns 1 if the CRNG became ready with this call, 0, or -errno from
 * the kernel (nothing is counted as fed then).
 */
int feeder_feed(struct feeder *f, const struct kernel_ops *k,
		const uint8_t *buf, size_t len, unsigned int credit_bits,
		double now);

/* Check readiness without feeding (at start: the kernel may be ready). */
int feeder_check_ready(struct feeder *f, const struct kernel_ops *k,
		       double now);

#endif
