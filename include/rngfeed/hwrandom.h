/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading the kernel's hw_random state from sysfs. */
#ifndef RNGFEED_HWRANDOM_H
#define RNGFEED_HWRANDOM_H

#include <stddef.h>

#define HWRANDOM_SYSFS_DIR "/sys/class/misc/hw_random"

/*
 * Name of the current hw_random device (rng_current) under @sysfs_dir.
 * Returns its length, -ENODEV when the kernel reports "none" or an empty
 * name, or -errno when the file cannot be read.
 */
int hwrandom_current(const char *sysfs_dir, char *name, size_t len);

#endif
