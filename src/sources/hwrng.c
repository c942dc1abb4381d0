// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hwrng: the kernel's hw_random character device (/dev/hwrng).
 *
 * Read with plain read(2), only as much as asked: the kernel copies from
 * the current hw_random driver, so asking for more than we need would
 * drain a slow device (virtio-rng gives ~9 KiB/s here) for nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rngfeed/hwrandom.h"
#include "rngfeed/sources.h"

struct hwrng_state {
	int fd;
	char path[256];
	char current[64];
};

static int hwrng_probe(const struct source_config *cfg, char *why,
		       size_t why_len)
{
	const char *path = source_config_device(cfg);
	char current[64];
	int fd, r;

	fd = source_fd_open(path, 0, why, why_len);
	if (fd < 0)
		return fd;
	close(fd);
	r = hwrandom_current(HWRANDOM_SYSFS_DIR, current, sizeof(current));
	if (r == -ENODEV && strcmp(path, cfg->driver->default_device) == 0) {
		snprintf(why, why_len,
			 "no hw_random device is active (rng_current is none)");
		return -ENODEV;
	}
	if (r > 0)
		snprintf(why, why_len, "%s is %s", path, current);
	else
		snprintf(why, why_len, "%s", path);
	return 0;
}

static int hwrng_open(const struct source_config *cfg, void **state,
		      char *why, size_t why_len)
{
	const char *path = source_config_device(cfg);
	struct hwrng_state *st;
	int fd;

	fd = source_fd_open(path, 0, why, why_len);
	if (fd < 0)
		return fd;
	st = calloc(1, sizeof(*st));
	if (!st) {
		close(fd);
		return -ENOMEM;
	}
	st->fd = fd;
	snprintf(st->path, sizeof(st->path), "%s", path);
	if (hwrandom_current(HWRANDOM_SYSFS_DIR, st->current,
			     sizeof(st->current)) < 0)
		st->current[0] = '\0';
	*state = st;
	return 0;
}

static ssize_t hwrng_read(void *state, void *buf, size_t len)
{
	struct hwrng_state *st = state;

	return source_fd_read(st->fd, buf, len);
}

static void hwrng_close(void *state)
{
	struct hwrng_state *st = state;

	if (!st)
		return;
	close(st->fd);
	free(st);
}

static int hwrng_describe(void *state, char *buf, size_t len)
{
	struct hwrng_state *st = state;

	if (st->current[0])
		snprintf(buf, len, "%s (%s)", st->path, st->current);
	else
		snprintf(buf, len, "%s", st->path);
	return 0;
}

const struct source_driver source_hwrng = {
	.name = "hwrng",
	.description = "kernel hw_random device",
	/* The kernel itself credits hw_random devices in full by default
	 * since 6.2 (rng_core.default_quality = 1024); the health tests
	 * decide whether a block earns it.  Lower it for devices such as a
	 * TPM behind /dev/hwrng, which the kernel credits with quality 0. */
	.default_credit = 1024,
	.credit_reason = "full: a hardware noise source, as the kernel's "
			 "own default quality",
	.sample_bits = 8,
	/* What is behind /dev/hwrng may be only lightly conditioned; H = 6
	 * keeps false alarms rare there while stuck or two-valued output
	 * still trips the repetition count test within 6 samples. */
	.min_entropy = 6.0,
	.flags = SOURCE_F_DEVICE,
	.default_device = "/dev/hwrng",
	.probe = hwrng_probe,
	.open = hwrng_open,
	.read = hwrng_read,
	.close = hwrng_close,
	.describe = hwrng_describe,
};
