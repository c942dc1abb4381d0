// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The current hw_random device's quality file (see hwrng_quality.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rngfeed/hwrandom.h"
#include "rngfeed/hwrng_gate.h"
#include "rngfeed/hwrng_quality.h"
#include "rngfeed/sysfs_io.h"
#include "rngfeed/util.h"

static void say(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static int sysfs_path(char *path, size_t len, const char *dir,
		      const char *file)
{
	if ((size_t)snprintf(path, len, "%s/%s", dir, file) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* ---- rng_quality through a kept fd ------------------------------------ */

/* A sysfs attribute is read from offset 0 each time. */
int hwrng_quality_read(int fd, unsigned int *q)
{
	char buf[16];
	long long v = 0;
	ssize_t n;

	n = SYSFS_BOUNDED(pread(fd, buf, sizeof(buf) - 1, 0));
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (parse_ll(buf, 0, 1024, &v) < 0)
		return -EBADMSG;
	*q = (unsigned int)v;
	return 0;
}

/* ftruncate() is a no-op on sysfs and keeps a test fixture exact. */
int hwrng_quality_write(int fd, unsigned int q)
{
	char buf[16];
	int n = snprintf(buf, sizeof(buf), "%u\n", q);

	ssize_t w;

	if (ftruncate(fd, 0) < 0 && errno != EINVAL && errno != EPERM)
		return -errno;
	w = SYSFS_BOUNDED(pwrite(fd, buf, (size_t)n, 0));
	if (w < 0)
		return (int)w;
	return w == n ? 0 : -EIO;
}

const char *hwrng_quality_param_path(const char *sysfs_dir, char *buf,
				  size_t len)
{
	if (strcmp(sysfs_dir, HWRANDOM_SYSFS_DIR) == 0)
		snprintf(buf, len, "%s", HWRNG_GATE_PARAM_PATH);
	else if ((size_t)snprintf(buf, len, "%s/rng_core.current_quality",
				  sysfs_dir) >= len)
		buf[0] = '\0';
	return buf;
}

/*
 * The current device's quality: rng_quality (5.18 and later), else rng_core's
 * current_quality parameter (*@param set), which the hw_random thread of
 * those kernels credits by in the same unit, and which the kernel sets
 * again from the device whenever it initialises one.
 */
bool hwrng_strict_mode(const char *sysfs_dir)
{
	char path[512], text[16];
	long long v = -1;

	if (strcmp(sysfs_dir, HWRANDOM_SYSFS_DIR) == 0)
		snprintf(path, sizeof(path), "%s", HWRNG_DEFAULT_QUALITY_PATH);
	else if ((size_t)snprintf(path, sizeof(path),
				  "%s/rng_core.default_quality",
				  sysfs_dir) >= sizeof(path))
		return false;
	return sysfs_read_text(path, text, sizeof(text)) > 0 &&
	       parse_ll(text, 0, 1024, &v) == 0 && v == 0;
}

int hwrng_quality_open(const char *sysfs_dir, int flags, bool *param)
{
	char path[512];
	int fd, r;

	if (param)
		*param = false;
	r = sysfs_path(path, sizeof(path), sysfs_dir, "rng_quality");
	if (r < 0)
		return r;
	fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT && param) {
		hwrng_quality_param_path(sysfs_dir, path, sizeof(path));
		fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW);
		*param = fd >= 0;
	}
	if (fd < 0)
		return -errno;
	return fd;
}

/* rng_selected, 0 when the kernel has none (it came with 5.5). */
bool hwrng_selected(const char *sysfs_dir)
{
	char path[512], buf[8];

	if (sysfs_path(path, sizeof(path), sysfs_dir, "rng_selected") < 0 ||
	    sysfs_read_text(path, buf, sizeof(buf)) < 0)
		return false;
	return strcmp(buf, "1") == 0;
}

/* Is @device the current hw_random device?  0 no, 1 yes, -errno. */
int hwrng_is_current(const char *sysfs_dir, const char *device, char *cur,
		      size_t cur_len)
{
	int r = hwrandom_current(sysfs_dir, cur, cur_len);

	if (r == -ENODEV) {
		snprintf(cur, cur_len, "none");
		return 0;
	}
	if (r < 0)
		return r;
	return strcmp(cur, device) == 0;
}

void hwrng_gate_describe_kernel(const char *sysfs_dir, char *buf, size_t len)
{
	char cur[HWRANDOM_NAME_LEN];
	unsigned int q = 0;
	bool param;
	int fd, r;

	r = hwrandom_current(sysfs_dir, cur, sizeof(cur));
	if (r == -ENODEV || r == -ENOENT) {
		say(buf, len, "no hw_random device");
		return;
	}
	if (r < 0) {
		say(buf, len, "hw_random: %s/rng_current: %s", sysfs_dir,
		    strerror(-r));
		return;
	}
	fd = hwrng_quality_open(sysfs_dir, O_RDONLY, &param);
	r = fd < 0 ? fd : hwrng_quality_read(fd, &q);
	if (fd >= 0)
		close(fd);
	if (r >= 0 && param)
		say(buf, len,
		    "the kernel credits %s itself at %u/1024 (rng_core "
		    "current_quality, kernel before 5.18)",
		    cur, q);
	else if (r == -ENOENT)
		say(buf, len,
		    "the kernel may credit %s itself (no rng_quality: kernel "
		    "before 5.18)",
		    cur);
	else if (r < 0)
		say(buf, len, "%s: rng_quality: %s", cur, strerror(-r));
	else if (q == 0)
		say(buf, len,
		    "the kernel credits nothing itself from %s (rng_quality 0)",
		    cur);
	else
		say(buf, len, "the kernel credits %s itself at %u/1024", cur, q);
}
