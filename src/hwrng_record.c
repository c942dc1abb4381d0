// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The hw_random hand-over's record (see hwrng_record.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rngfeed/hwrng_gate.h"
#include "rngfeed/hwrng_record.h"
#include "rngfeed/util.h"

int hwrng_record_format(const struct hwrng_record *rec, char *buf, size_t len)
{
	int n = snprintf(buf, len, "device=%s\nquality=%u\nselected=%d\nstate=%s\n",
			 rec->device, rec->quality, rec->selected,
			 rec->failed ? "failed" : rec->host ? "host" : "held");

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : n;
}

int hwrng_record_write_fd(int fd, const struct hwrng_record *rec)
{
	char buf[256];
	int n = hwrng_record_format(rec, buf, sizeof(buf));

	if (n < 0)
		return n;
	if (ftruncate(fd, 0) < 0)
		return -errno;
	if (pwrite(fd, buf, (size_t)n, 0) != n)
		return errno ? -errno : -EIO;
	return 0;
}

/* Parse a record.  -ENODATA for an empty one (a record released after a
 * privilege drop that kept it from being removed), -EBADMSG for one that
 * is not ours. */
int hwrng_record_parse(char *text, struct hwrng_record *rec)
{
	char *save = NULL, *line;
	unsigned int seen = 0;
	long long v = 0;

	*rec = (struct hwrng_record){ 0 };
	if (!*text)
		return -ENODATA;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');

		if (!eq)
			return -EBADMSG;
		*eq++ = '\0';
		if (strcmp(line, "device") == 0) {
			if (!*eq || strlen(eq) >= sizeof(rec->device) ||
			    strchr(eq, ' ') || strcmp(eq, "none") == 0)
				return -EBADMSG;
			strcpy(rec->device, eq);
			seen |= 1;
		} else if (strcmp(line, "quality") == 0) {
			/* 0 is never recorded: there was nothing to take. */
			if (parse_ll(eq, 1, 1024, &v) < 0)
				return -EBADMSG;
			rec->quality = (unsigned int)v;
			seen |= 2;
		} else if (strcmp(line, "selected") == 0) {
			if (strcmp(eq, "0") && strcmp(eq, "1"))
				return -EBADMSG;
			rec->selected = eq[0] == '1';
			seen |= 4;
		} else if (strcmp(line, "state") == 0) {
			if (strcmp(eq, "held") && strcmp(eq, "failed") &&
			    strcmp(eq, "host"))
				return -EBADMSG;
			rec->failed = strcmp(eq, "failed") == 0;
			rec->host = strcmp(eq, "host") == 0;
			seen |= 8;
		} else {
			return -EBADMSG;
		}
	}
	return seen == 15 ? 0 : -EBADMSG;
}

/* Read the record at @path.  0, -ENOENT (none), -ENODATA (empty),
 * -EBADMSG, or -errno. */
int hwrng_record_read(const char *path, struct hwrng_record *rec)
{
	char buf[256];
	ssize_t n;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r;
	if ((size_t)n == sizeof(buf) - 1)
		return -EBADMSG;
	buf[n] = '\0';
	return hwrng_record_parse(buf, rec);
}

/* Open (creating it, and its directory outside systemd) the record. */
int hwrng_record_open(const char *path)
{
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 && errno == ENOENT) {
		char dir[256], *slash;

		if (strlen(path) >= sizeof(dir))
			return -ENAMETOOLONG;
		strcpy(dir, path);
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return -ENOENT;
		*slash = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return -errno;
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			  0600);
	}
	if (fd < 0)
		return -errno;
	return fd;
}

/* Empty, then remove, the record.  Emptying works through the kept fd
 * after the privilege drop; removing may not, and need not: an empty
 * record is no record.  0 if either worked. */
int hwrng_record_clear(int fd, const char *path)
{
	int r = fd >= 0 ? ftruncate(fd, 0) : -1;

	if (path && *path && unlink(path) == 0)
		r = 0;
	return r < 0 ? -errno : 0;
}

const char *hwrng_record_path(char *buf, size_t len)
{
	return unit_dir_path(buf, len, "RUNTIME_DIRECTORY", "hwrng-quality",
			     HWRNG_GATE_STATE_PATH);
}
