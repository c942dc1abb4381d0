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

static const char *const hwrng_keys[] = { "sysfs", NULL };

struct hwrng_state {
	int fd;
	char path[256];
	char current[64];
};

/* The misc device the kernel's hw_random core registers (10:183). */
static bool is_hw_random(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && major(st->st_rdev) == 10 &&
	       minor(st->st_rdev) == 183;
}

static const char *hwrng_sysfs(const struct source_config *cfg)
{
	const char *dir = source_config_get(cfg, "sysfs");

	return dir ? dir : HWRANDOM_SYSFS_DIR;
}

/*
 * Is @cfg's device path the kernel's hw_random device?  A path that does
 * not exist (yet) counts as one only when it is the driver's default
 * (/dev/hwrng appears when the kernel registers a device); any other path
 * is credited as the file source credits what it cannot vouch for.
 */
static bool reads_hw_random(const struct source_config *cfg)
{
	const char *path = source_config_device(cfg);
	struct stat st;

	if (!path)
		return false;
	if (stat(path, &st) == 0)
		return is_hw_random(&st);
	return cfg->driver->default_device &&
	       strcmp(path, cfg->driver->default_device) == 0;
}

/*
 * In a confidential guest: the hw_random device @hw_device (NULL = the
 * current one) is the guest's own when hwrandom_host_backed() says so,
 * or when guest-owned=yes says so of every device but virtio_rng.N (the
 * host's by definition); a path that is not the hw_random device is not
 * this rule's (it is credited as the file source credits what it cannot
 * vouch for).
 */
static bool hwrng_guest_owned(const struct source_config *cfg,
			      const char *hw_device)
{
	char cur[HWRANDOM_NAME_LEN];

	if (!reads_hw_random(cfg))
		return true;
	if (!hw_device) {
		if (hwrandom_current(hwrng_sysfs(cfg), cur, sizeof(cur)) < 0)
			return false;
		hw_device = cur;
	}
	return !hwrandom_host_backed(hw_device, cfg->tpm_guest_owned,
				     cfg->guest_owned);
}

unsigned int source_hwrandom_credit(const struct source_config *cfg,
				    const char *sysfs_dir, const char *name)
{
	const struct hwrandom_credit_rule rule = {
		.fallback = cfg->driver->default_credit,
		.tpm = source_tpm.default_credit,
		.cap = source_credit_cap(cfg),
	};
	char current[HWRANDOM_NAME_LEN];
	int quality = cfg->hw_quality;

	if (!reads_hw_random(cfg) || source_host_provided(cfg, name))
		return 0;
	if (quality < 0)
		return hwrandom_device_credit_sysfs(sysfs_dir, name, &rule);
	/* The gate's quality is the current device's. */
	if (hwrandom_current(sysfs_dir, current, sizeof(current)) < 0)
		current[0] = '\0';
	if (!name)
		name = current[0] ? current : NULL;
	else if (strcmp(name, current) != 0)
		quality = -1;
	return hwrandom_device_credit(name, quality, &rule);
}

#define NOT_HW_RANDOM "is not the kernel's hw_random device (char 10:183)"

/*
 * Open @path, which must be a character device (a regular file here
 * would be credited as hardware noise), and name the hw_random device
 * behind it when it is the kernel's /dev/hwrng.  Returns the fd or
 * -errno with @why set.
 */
static int hwrng_open_device(const char *path, const char *sysfs,
			     char *current, size_t len, char *why,
			     size_t why_len)
{
	struct stat st;
	int fd, r;

	current[0] = '\0';
	fd = source_dev_open(path, 0, why, why_len);
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
	r = hwrandom_current(sysfs, current, len);
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

	fd = hwrng_open_device(path, hwrng_sysfs(cfg), current,
			       sizeof(current), why, why_len);
	if (fd < 0)
		return fd;
	close(fd);
	if (current[0])
		snprintf(why, why_len, "%s is %s", path, current);
	else if (!reads_hw_random(cfg))
		snprintf(why, why_len, "%s " NOT_HW_RANDOM "%s", path,
			 cfg->credit < 0 ? ": credited 0 unless credit= is "
					   "given, as the file source"
					 : "");
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
	fd = hwrng_open_device(path, hwrng_sysfs(cfg), st->current,
			       sizeof(st->current), why, why_len);
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
 * What this open actually opened: the fd, not the path (which may point
 * elsewhere by now), must be the hw_random device 10:183, and its credit
 * follows the device that was current when it was opened.
 */
static unsigned int hwrng_opened_credit(void *state,
					const struct source_config *cfg)
{
	struct hwrng_state *st = state;
	struct stat sb;

	if (fstat(st->fd, &sb) < 0 || !is_hw_random(&sb) || !st->current[0])
		return 0;
	return source_hwrandom_credit(cfg, hwrng_sysfs(cfg), st->current);
}

/* The current hw_random device's credit: see source_hwrandom_credit(). */
static unsigned int hwrng_device_credit(const struct source_config *cfg)
{
	return source_hwrandom_credit(cfg, hwrng_sysfs(cfg), NULL);
}

static int hwrng_check_option(const char *key, const char *value, char *err,
			      size_t err_len)
{
	(void)key; /* only sysfs */
	return source_check_abs_path(key, value, err, err_len);
}

static int hwrng_config_warning(const struct source_config *cfg, char *buf,
				size_t len)
{
	if (cfg->credit >= 0 || reads_hw_random(cfg))
		return 0;
	snprintf(buf, len,
		 "%s " NOT_HW_RANDOM ": credited 0 unless credit= is given",
		 source_config_device(cfg));
	return 1;
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
	/*
	 * The device's rng_quality (the kernel's own default is 1024 since
	 * 6.2), but never above what the health tests assume: H = 6 bits
	 * per byte allows 1024 * 6 / 8 = 768.  The same rule as the virtio
	 * driver, so one device has one credit (source_hwrandom_credit()).
	 * A TPM behind it (tpm-rng-N) gets the tpm source's 64; any path
	 * that is not the hw_random device (10:183) gets 0, as the file
	 * source, unless credit= is given.
	 */
	.default_credit = 768,
	.credit_reason = "768: the device's rng_quality, capped by the "
			 "health tests' H = 6 bits per byte (1024 x 6 / 8); "
			 "a TPM behind it (tpm-rng) gets the tpm source's 64; "
			 "a device that is not 10:183 gets 0",
	.sample_bits = 8,
	/* What is behind /dev/hwrng may be only lightly conditioned; H = 6
	 * keeps false alarms rare there while stuck or two-valued output
	 * still trips the repetition count test within 6 samples. */
	.min_entropy = 6.0,
	.flags = SOURCE_F_DEVICE,
	.default_device = "/dev/hwrng",
	.option_keys = hwrng_keys,
	.probe = hwrng_probe,
	.open = hwrng_open,
	.read = hwrng_read,
	.close = hwrng_close,
	.describe = hwrng_describe,
	.device_credit = hwrng_device_credit,
	.opened_credit = hwrng_opened_credit,
	.check_option = hwrng_check_option,
	.config_warning = hwrng_config_warning,
	.host_provided = "the current hw_random device, unless it is the "
			 "CPU's own (s390-trng) or a TPM the tpm source "
			 "declares guest-owned",
	.guest_owned = hwrng_guest_owned,
};
