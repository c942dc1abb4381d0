// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * file: a FIFO or a regular file, for tests and for piping an external
 * generator in.  Nothing is known about what is in it, so it is credited
 * nothing unless the user says otherwise.  A regular file is read once: at
 * its end the source is finished (see file_finite()).
 *
 * A FIFO's open waits for a writer, which may start much later in boot: it
 * is only checked here (opened O_NONBLOCK, so open never waits, whoever
 * calls it) and opened for reading by the first read, which runs in the
 * source's reader thread.  Until a writer comes the source has nothing
 * yet; a stop interrupts the wait (the reader's wake signal: EINTR).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rngfeed/sources.h"

struct file_state {
	int fd;       /* -1: a FIFO not opened for reading yet */
	bool regular; /* a regular file: read once, never reopened */
	char path[256];
};

static int file_check_type(const char *path, const struct stat *st,
			   char *why, size_t why_len)
{
	/* Character devices belong to hwrng; directories and sockets
	 * cannot be read as a byte stream. */
	if (S_ISFIFO(st->st_mode) || S_ISREG(st->st_mode))
		return 0;
	snprintf(why, why_len, "%s is not a FIFO or a regular file", path);
	return -EINVAL;
}

/*
 * What probe and open both check before anything is opened: a path is
 * given, it exists, it is not the kernel's own output (that reason wins
 * over the type), and it is a FIFO or a regular file.
 */
static int file_check_path(const char *path, char *why, size_t why_len)
{
	struct stat st;

	if (!path) {
		snprintf(why, why_len,
			 "no path given (use -O file:device=PATH)");
		return -ENOENT;
	}
	if (stat(path, &st) < 0) {
		int r = -errno;

		snprintf(why, why_len, "cannot open %s: %s", path,
			 strerror(-r));
		return r;
	}
	if (source_path_is_kernel_output(path) == 1) {
		snprintf(why, why_len, "refusing %s: %s", path,
			 SOURCE_LOOPBACK_REASON);
		return -ELOOP;
	}
	return file_check_type(path, &st, why, why_len);
}

static int file_probe(const struct source_config *cfg, char *why,
		      size_t why_len)
{
	const char *path = source_config_device(cfg);
	int r = file_check_path(path, why, why_len);

	if (r == 0)
		snprintf(why, why_len, "%s", path);
	return r;
}

static int file_open(const struct source_config *cfg, void **state,
		     char *why, size_t why_len)
{
	const char *path = source_config_device(cfg);
	struct file_state *st;
	struct stat sb;
	int fd, r;

	/* Refuse devices and sockets before opening them; the type is
	 * checked again on the open fd below. */
	r = file_check_path(path, why, why_len);
	if (r < 0)
		return r;
	/* Never waits: a FIFO without a writer opens at once. */
	fd = source_fd_open(path, O_NONBLOCK, why, why_len);
	if (fd < 0)
		return fd;
	if (fstat(fd, &sb) < 0) {
		r = -errno;
		goto fail;
	}
	r = file_check_type(path, &sb, why, why_len);
	if (r < 0)
		goto fail;
	st = calloc(1, sizeof(*st));
	if (!st) {
		r = -ENOMEM;
		goto fail;
	}
	st->regular = S_ISREG(sb.st_mode);
	if (st->regular) {
		/* Reads of a regular file never wait; clear it all the
		 * same, as reads expect a blocking fd. */
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		st->fd = fd;
	} else {
		close(fd);
		st->fd = -1;
	}
	snprintf(st->path, sizeof(st->path), "%s", path);
	*state = st;
	return 0;
fail:
	close(fd);
	return r;
}

/* The FIFO's blocking open, in the reader thread: -EINTR when its stop
 * interrupts the wait for a writer. */
static int file_open_fifo(struct file_state *st)
{
	char why[SOURCE_WHY_LEN];
	struct stat sb;
	int fd = source_fd_open(st->path, 0, why, sizeof(why));

	if (fd < 0)
		return fd;
	/* Replaced by something else since file_open() checked it. */
	if (fstat(fd, &sb) < 0 || !S_ISFIFO(sb.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	st->fd = fd;
	return 0;
}

static ssize_t file_read(void *state, void *buf, size_t len)
{
	struct file_state *st = state;

	if (st->fd < 0) {
		int r = file_open_fifo(st);

		if (r < 0)
			return r;
	}
	return source_fd_read(st->fd, buf, len);
}

static void file_close(void *state)
{
	struct file_state *st = state;

	if (!st)
		return;
	if (st->fd >= 0)
		close(st->fd);
	free(st);
}

/*
 * A regular file's end is final: reopening it would read the same bytes
 * again, and credit them again.  A FIFO whose writer closed may be reopened:
 * new data comes from a new writer.
 */
static bool file_finite(void *state)
{
	const struct file_state *st = state;

	return st->regular;
}

static int file_describe(void *state, char *buf, size_t len)
{
	struct file_state *st = state;

	snprintf(buf, len, "%s", st->path);
	return 0;
}

const struct source_driver source_file = {
	.name = "file",
	.description = "FIFO or regular file (device=PATH)",
	.default_credit = 0,
	.credit_reason = "none: nothing is known about what is in the file",
	.sample_bits = 8,
	/* Unknown data: the same middle ground as hwrng. */
	.min_entropy = 6.0,
	.flags = SOURCE_F_DEVICE | SOURCE_F_NEEDS_DEVICE,
	.default_device = NULL,
	.probe = file_probe,
	.open = file_open,
	.read = file_read,
	.close = file_close,
	.describe = file_describe,
	.finite = file_finite,
};
