/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel's hw_random state in sysfs (/sys/class/misc/hw_random):
 * rng_available lists the registered devices, rng_current names the one
 * /dev/hwrng reads from, and writing a name to rng_current selects it.
 * Every function takes the directory so tests can use fixtures.
 */
#ifndef RNGFEED_HWRANDOM_H
#define RNGFEED_HWRANDOM_H

#include <stddef.h>

#define HWRANDOM_SYSFS_DIR "/sys/class/misc/hw_random"
#define HWRANDOM_NAME_LEN 64

/*
 * Name of the current hw_random device (rng_current) under @sysfs_dir.
 * Returns its length, -ENODEV when the kernel reports "none" or an empty
 * name, or -errno when the file cannot be read.
 */
int hwrandom_current(const char *sysfs_dir, char *name, size_t len);

/*
 * The first device in rng_available whose name starts with @prefix
 * (e.g. "virtio_rng."), copied to @name.  Returns its length, -ENODEV
 * when there is none, -ENAMETOOLONG for a name that does not fit, or
 * -errno when the file cannot be read.
 */
int hwrandom_find(const char *sysfs_dir, const char *prefix, char *name,
		  size_t len);

/* Make @name the current device (write rng_current).  0 or -errno. */
int hwrandom_select(const char *sysfs_dir, const char *name);

#endif
