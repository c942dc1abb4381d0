// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * file: a FIFO or a regular file, for tests and for piping an external
 * generator in.  Nothing is known about what is in it, so it is credited
 * nothing unless the user says otherwise.  A regular file is read once: at
 * its end the source is finished (see file_finite()).
 *
 * A FIFO's open waits for a writer, which may start much later in boot:
 * it is opened O_NONBLOCK (open never waits, whoever calls it), and the
 * first read, in the source's reader thread, waits in poll(2) until a
 * writer has written (a FIFO that never had a writer is not readable) and
 * only then makes the fd blocking.  Until then the source has nothing
 * yet; a stop interrupts the wait (the reader's wake signal: EINTR).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rngfeed/sources.h"

struct file_state {
	int fd;
	bool regular; /* a regular file: read once, never reopened */
	bool fresh;   /* a FIFO no writer has written to yet (O_NONBLOCK) */
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
	st->fd = fd;
	st->regular = S_ISREG(sb.st_mode);
	st->fresh = !st->regular;
	/* Reads of a regular file never wait; cleared all the same, as
	 * reads expect a blocking fd. */
	if (st->regular)
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	snprintf(st->path, sizeof(st->path), "%s", path);
	*state = st;
	return 0;
fail:
	close(fd);
	return r;
}

/* In the reader thread: wait until a writer has written to the FIFO (or
 * come and gone: POLLHUP, then the read says end of input), then block
 * as reads expect.  -EINTR when its stop interrupts the wait. */
static int file_wait_writer(struct file_state *st)
{
	struct pollfd p = { .fd = st->fd, .events = POLLIN };

	if (poll(&p, 1, -1) < 0)
		return -errno;
	if (fcntl(st->fd, F_SETFL, fcntl(st->fd, F_GETFL) & ~O_NONBLOCK) < 0)
		return -errno;
	st->fresh = false;
	return 0;
}

static ssize_t file_read(void *state, void *buf, size_t len)
{
	struct file_state *st = state;

	if (st->fresh) {
		int r = file_wait_writer(st);

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
