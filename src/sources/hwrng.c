// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hwrng: the kernel's hw_random character device (/dev/hwrng).
 *
 * Read with plain read(2), only as much as asked: the kernel copies from
 * the current hw_random driver, so asking for more than we need would
 * drain a slow device (virtio-rng gives ~9 KiB/s here) for nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "rngfeed/hwrandom.h"
#include "rngfeed/sources.h"

struct hwrng_state {
	int fd;
	char path[256];
	char current[64];
};

/* The misc device the kernel's hw_random core registers (10:183). */
static bool is_hw_random(const struct stat *st)
{
	return major(st->st_rdev) == 10 && minor(st->st_rdev) == 183;
}

/*
 * Open @path, which must be a character device (a regular file here
 * would be credited as hardware noise), and name the hw_random device
 * behind it when it is the kernel's /dev/hwrng.  Returns the fd or
 * -errno with @why set.
 */
static int hwrng_open_device(const char *path, char *current, size_t len,
			     char *why, size_t why_len)
{
	struct stat st;
	int fd, r;

	current[0] = '\0';
	fd = source_fd_open(path, 0, why, why_len);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode)) {
		snprintf(why, why_len,
			 "%s is not a character device (use the file source "
			 "for files and FIFOs)",
			 path);
		close(fd);
		return -ENOTTY;
	}
	if (!is_hw_random(&st))
		return fd;
	r = hwrandom_current(HWRANDOM_SYSFS_DIR, current, len);
	if (r == -ENODEV) {
		snprintf(why, why_len,
			 "no hw_random device is active (rng_current is none)");
		close(fd);
		return -ENODEV;
	}
	if (r < 0)
		current[0] = '\0';
	return fd;
}

static int hwrng_probe(const struct source_config *cfg, char *why,
		       size_t why_len)
{
	const char *path = source_config_device(cfg);
	char current[64];
	int fd;

	fd = hwrng_open_device(path, current, sizeof(current), why, why_len);
	if (fd < 0)
		return fd;
	close(fd);
	if (current[0])
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

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	fd = hwrng_open_device(path, st->current, sizeof(st->current), why,
			       why_len);
	if (fd < 0) {
		free(st);
		return fd;
	}
	st->fd = fd;
	snprintf(st->path, sizeof(st->path), "%s", path);
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

/*
 * The kernel's TPM hw_random device (tpm-rng-N) answers with
 * TPM2_GetRandom, a DRBG's output, and the kernel gives it quality 0 on
 * its own: credit it as the tpm source credits the same TPM, not as noise.
 */
static unsigned int hwrng_device_credit(const struct source_config *cfg)
{
	char current[64];
	struct stat st;

	if (stat(source_config_device(cfg), &st) == 0 && S_ISCHR(st.st_mode) &&
	    is_hw_random(&st) &&
	    hwrandom_current(HWRANDOM_SYSFS_DIR, current, sizeof(current)) > 0 &&
	    strncmp(current, "tpm-rng", 7) == 0)
		return source_tpm.default_credit;
	return cfg->driver->default_credit;
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
			 "own default quality; a TPM behind it (tpm-rng) gets "
			 "the tpm source's 64",
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
	.device_credit = hwrng_device_credit,
};
