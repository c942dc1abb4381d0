/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The current hw_random device's quality, the number the kernel's
 * hw_random core credits its reads by (bits per 1024), read and written
 * through a kept fd: a sysfs attribute is read from offset 0 each time
 * and needs no root to write once open.  For the gate (hwrng_gate.h).
 * Functions take the sysfs directory so tests can use a fixture.
 */
#ifndef RNGFEED_HWRNG_QUALITY_H
#define RNGFEED_HWRNG_QUALITY_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Before 5.18 there is no rng_quality: the hw_random thread credits each
 * read at rng_core's current_quality parameter (bits per 1024), which is
 * writable and which the kernel sets again from the device's quality
 * (or default_quality) whenever it initialises a device.  The gate takes
 * and puts back that instead, and takes it again when the kernel resets
 * it (hwrng_gate_tick()).  Under a fixture directory (not
 * HWRANDOM_SYSFS_DIR) its stand-in is the file rng_core.current_quality
 * there.  Returns @buf.
 */
#define HWRNG_GATE_PARAM_PATH "/sys/module/rng_core/parameters/current_quality"
const char *hwrng_quality_param_path(const char *sysfs_dir, char *buf,
				     size_t len);

/*
 * Strict mode: rng_core.default_quality=0 on the kernel command line (a
 * cap on every device's quality since 6.2), so a 0 is the administrator's
 * choice, not a sign of another feeder.  Read from
 * HWRNG_DEFAULT_QUALITY_PATH, or "rng_core.default_quality" in a fixture
 * directory.
 */
#define HWRNG_DEFAULT_QUALITY_PATH "/sys/module/rng_core/parameters/default_quality"
bool hwrng_strict_mode(const char *sysfs_dir);

/*
 * Open rng_quality (5.18 and later), else, when @param is not NULL, rng_core's
 * current_quality (*@param set).  The fd, or -errno (-ENOENT: neither).
 */
int hwrng_quality_open(const char *sysfs_dir, int flags, bool *param);
/* Read (0..1024) or write the quality through @fd.  0 or -errno. */
int hwrng_quality_read(int fd, unsigned int *q);
int hwrng_quality_write(int fd, unsigned int q);

/* rng_selected: the current device was chosen explicitly (false when the
 * kernel has no such file: it came with 5.5). */
bool hwrng_selected(const char *sysfs_dir);

/* Is @device the current hw_random device?  0 no, 1 yes, -errno; the
 * current one's name (or "none") in @cur. */
int hwrng_is_current(const char *sysfs_dir, const char *device, char *cur,
		     size_t cur_len);

#endif
