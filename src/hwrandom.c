// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rngfeed/hwrandom.h"
#include "rngfeed/util.h"

int hwrandom_current(const char *sysfs_dir, char *name, size_t len)
{
	char path[512];
	ssize_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/rng_current",
			     sysfs_dir) >= sizeof(path))
		return -ENAMETOOLONG;
	n = read_text_file(path, name, len);
	if (n < 0)
		return (int)n;
	if (n == 0 || strcmp(name, "none") == 0)
		return -ENODEV;
	return (int)n;
}
