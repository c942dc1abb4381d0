// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * virtio: a VM's virtio-rng device, which the kernel registers as the
 * hw_random device "virtio_rng.N".  It is read through /dev/hwrng, so it
 * is usable only while it is the current hw_random device; with
 * select=yes the driver makes it current and restores the previous
 * choice when it closes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "rngfeed/hwrandom.h"
#include "rngfeed/sources.h"
#include "rngfeed/util.h"

#define VIRTIO_PREFIX "virtio_rng."

static const char *const virtio_keys[] = { "select", "sysfs", NULL };

struct virtio_state {
	int fd;
	char sysfs[256];
	char name[HWRANDOM_NAME_LEN];
	char previous[HWRANDOM_NAME_LEN]; /* restored on close if set */
};

static const char *virtio_sysfs(const struct source_config *cfg)
{
	const char *dir = source_config_get(cfg, "sysfs");

	return dir ? dir : HWRANDOM_SYSFS_DIR;
}

/*
 * Find the virtio device and check that it is current.  Returns 0, 1
 * when it is present but another device is current (@current says which;
 * "none" if none), or -errno with a reason.
 */
static int virtio_locate(const struct source_config *cfg, char *name,
			 char *current, char *why, size_t why_len)
{
	const char *dir = virtio_sysfs(cfg);
	int r;

	r = hwrandom_find(dir, VIRTIO_PREFIX, name, HWRANDOM_NAME_LEN);
	if (r < 0) {
		if (r == -ENODEV)
			snprintf(why, why_len,
				 "no virtio-rng device (not a VM, or no "
				 "virtio-rng device attached)");
		else
			snprintf(why, why_len, "cannot read %s/rng_available: %s",
				 dir, strerror(-r));
		return r == -ENOENT ? -ENODEV : r;
	}
	r = hwrandom_current(dir, current, HWRANDOM_NAME_LEN);
	if (r == -ENODEV)
		strcpy(current, "none");
	else if (r < 0) {
		snprintf(why, why_len, "cannot read %s/rng_current: %s", dir,
			 strerror(-r));
		return r;
	}
	return strcmp(name, current) != 0;
}

static int parse_select(const struct source_config *cfg)
{
	const char *v = source_config_get(cfg, "select");

	return v ? parse_bool(v) : 0;
}

static int virtio_probe(const struct source_config *cfg, char *why,
			size_t why_len)
{
	char name[HWRANDOM_NAME_LEN], current[HWRANDOM_NAME_LEN];
	int r, sel = parse_select(cfg);

	if (sel < 0) {
		snprintf(why, why_len, "select must be yes or no");
		return -EINVAL;
	}
	r = virtio_locate(cfg, name, current, why, why_len);
	if (r < 0)
		return r;
	if (r == 1 && !sel) {
		snprintf(why, why_len,
			 "%s is present but the current hw_random device is "
			 "%s (use -O virtio:select=yes to select it)",
			 name, current);
		return -EBUSY;
	}
	snprintf(why, why_len, "%s via %s%s", name, source_config_device(cfg),
		 r == 1 ? " (will be selected)" : "");
	return 0;
}

static int virtio_open(const struct source_config *cfg, void **state,
		       char *why, size_t why_len)
{
	struct virtio_state *st;
	char current[HWRANDOM_NAME_LEN];
	int r, sel = parse_select(cfg);

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->fd = -1;
	snprintf(st->sysfs, sizeof(st->sysfs), "%s", virtio_sysfs(cfg));
	r = virtio_locate(cfg, st->name, current, why, why_len);
	if (r < 0)
		goto fail;
	if (r == 1) {
		if (sel != 1) {
			snprintf(why, why_len,
				 "the current hw_random device is %s, not %s "
				 "(use -O virtio:select=yes)",
				 current, st->name);
			r = -EBUSY;
			goto fail;
		}
		r = hwrandom_select(st->sysfs, st->name);
		if (r < 0) {
			snprintf(why, why_len, "cannot select %s: %s",
				 st->name, strerror(-r));
			goto fail;
		}
		if (strcmp(current, "none") != 0)
			strcpy(st->previous, current);
	}
	r = source_dev_open(source_config_device(cfg), 0, why, why_len);
	if (r < 0)
		goto fail;
	st->fd = r;
	*state = st;
	return 0;
fail:
	if (st->previous[0])
		hwrandom_select(st->sysfs, st->previous);
	free(st);
	return r;
}

static ssize_t virtio_read(void *state, void *buf, size_t len)
{
	struct virtio_state *st = state;

	return source_fd_read(st->fd, buf, len);
}

static void virtio_close(void *state)
{
	struct virtio_state *st = state;

	if (!st)
		return;
	if (st->fd >= 0)
		close(st->fd);
	/* Give the machine back the hw_random device it had. */
	if (st->previous[0])
		hwrandom_select(st->sysfs, st->previous);
	free(st);
}

/*
 * The same device has the same credit through hwrng and through virtio
 * (source_hwrandom_credit()): the kernel's rng_quality while it is the
 * current device, capped by the health tests' H.
 */
static unsigned int virtio_device_credit(const struct source_config *cfg)
{
	char name[HWRANDOM_NAME_LEN];
	const char *dir = virtio_sysfs(cfg);

	if (hwrandom_find(dir, VIRTIO_PREFIX, name, sizeof(name)) < 0)
		return source_hwrandom_credit(cfg, dir, VIRTIO_PREFIX "0");
	return source_hwrandom_credit(cfg, dir, name);
}

/*
 * What this open actually opened: the open fd must be the hw_random
 * device 10:183 (the path could name anything by now), and the device it
 * found current at the open gets its own credit; anything else 0.
 */
static unsigned int virtio_opened_credit(void *state,
					 const struct source_config *cfg)
{
	struct virtio_state *st = state;
	struct stat sb;

	if (fstat(st->fd, &sb) < 0 || !S_ISCHR(sb.st_mode) ||
	    major(sb.st_rdev) != 10 || minor(sb.st_rdev) != 183)
		return 0;
	return source_hwrandom_credit(cfg, virtio_sysfs(cfg), st->name);
}

static int virtio_check_option(const char *key, const char *value, char *err,
			       size_t err_len)
{
	if (strcmp(key, "select") == 0)
		return source_check_bool(key, value, err, err_len);
	return source_check_abs_path(key, value, err, err_len);
}

static int virtio_describe(void *state, char *buf, size_t len)
{
	struct virtio_state *st = state;

	snprintf(buf, len, "%s via /dev/hwrng", st->name);
	return 0;
}

const struct source_driver source_virtio = {
	.name = "virtio",
	.description = "VM virtio-rng device (through /dev/hwrng)",
	/*
	 * The host decides what a virtio-rng device delivers (usually its
	 * own /dev/urandom); the guest can test the output but not its
	 * origin.  It is the device hwrng reads too, so it gets the same
	 * credit and the same tests: the kernel's rng_quality (virtio-rng
	 * declared 1000 before 6.2; 1024 by default since), capped by H = 6
	 * bits per byte, 768 (source_hwrandom_credit()).
	 */
	.default_credit = 768,
	.credit_reason = "768: the device's rng_quality, capped by the "
			 "health tests' H = 6 bits per byte, as hwrng credits "
			 "the same device",
	.sample_bits = 8,
	/* The same device and tests as hwrng: the host may hand over only
	 * lightly conditioned data. */
	.min_entropy = 6.0,
	.flags = SOURCE_F_DEVICE,
	.default_device = "/dev/hwrng",
	.option_keys = virtio_keys,
	.probe = virtio_probe,
	.open = virtio_open,
	.read = virtio_read,
	.close = virtio_close,
	.describe = virtio_describe,
	.device_credit = virtio_device_credit,
	.opened_credit = virtio_opened_credit,
	.check_option = virtio_check_option,
	/* By definition: the device model is the host's. */
	.host_provided = "the host's virtio-rng device",
};
