// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * file: a FIFO or a regular file, for tests and for piping an external
 * generator in.  Nothing is known about what is in it, so it is credited
 * nothing unless the user says otherwise.  A regular file is read once: at
 * its end the source is finished (see file_finite()), and, when it is
 * credited, it is read through the file ledger (file_ledger.h), block by
 * block: a block whose content the ledger holds (read before, through
 * any path, mount or device) is skipped, a new one is claimed in the
 * ledger before it is read.
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

#include "rngfeed/file_ledger.h"
#include "rngfeed/sources.h"
#include "rngfeed/util.h"

/* Blocks claimed in the ledger at once, ahead of the reads: one durable
 * write per 320,000 bytes.  What a crash leaves claimed and unread is
 * lost, never read twice. */
#define FILE_AHEAD_BLOCKS 128u
/* Blocks read before that one read skips at most (32 MiB: about 0.1 s of
 * hashing), then -EAGAIN, so that a stop is seen whatever the file's
 * size. */
#define FILE_SKIP_SLICE (32u * 1024u * 1024u / FILE_LEDGER_BLOCK)

struct file_state {
	int fd;
	bool regular; /* a regular file: read once, never reopened */
	bool fresh;   /* a FIFO no writer has written to yet (O_NONBLOCK) */
	char path[256];

	/* The ledger, for a credited regular file (ledger_dir != NULL);
	 * opened at the first read, in the reader's thread.  Its own copy
	 * of the path, as a reader left behind at a stop may close this
	 * after the source set that named it is gone. */
	const char *ledger_dir;
	char ledger_path[256];
	struct file_ledger *ledger;
	bool begun;             /* the first read set it up */
	bool ended;             /* its end (and any part-block) returned */
	dev_t dev;
	ino_t ino;
	uint64_t pos;           /* the next block's offset */
	uint64_t legacy_end;    /* read up to here under the earlier ledger */
	uint64_t skipped;       /* blocks read before: not read again */
	/* The claimed window: blocks [win_pos, win_pos + win_n * BLOCK). */
	uint64_t win_pos;
	unsigned win_n;
	uint8_t keys[FILE_AHEAD_BLOCKS][FILE_LEDGER_KEY_LEN];
	uint8_t verdict[FILE_AHEAD_BLOCKS];
	bool used[FILE_AHEAD_BLOCKS]; /* read (or never to be) */
	const char *note;       /* why it was not read, for describe */
	int ledger_err;         /* the last read's ledger failure, -errno */
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

		source_say_open_error(why, why_len, path, -r);
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
	if (st->regular && cfg->ledger_dir && source_config_credit(cfg) > 0) {
		snprintf(st->ledger_path, sizeof(st->ledger_path), "%s",
			 cfg->ledger_dir);
		st->ledger_dir = st->ledger_path;
		st->dev = sb.st_dev;
		st->ino = sb.st_ino;
	}
	*state = st;
	return 0;
fail:
	close(fd);
	return r;
}

/* ---- reading through the file ledger ------------------------------------ */

/* Block @at, whole, into @buf: FILE_LEDGER_BLOCK, fewer at the end, or
 * -errno. */
static ssize_t read_block(struct file_state *st, uint64_t at, uint8_t *buf)
{
	return util_pread_full(st->fd, buf, FILE_LEDGER_BLOCK, (off_t)at);
}

/* The first read: the ledger opened; the rules of copied images and of
 * the earlier ledger. */
static int ledger_begin(struct file_state *st)
{
	uint64_t legacy = 0;
	struct stat sb;
	int64_t since;
	int r;

	if (!st->ledger) {
		r = file_ledger_open(st->ledger_dir, FILE_LEDGER_MAX_SHIFT, &st->ledger);
		if (r < 0) {
			st->ledger = NULL;
			return r;
		}
	}
	if (fstat(st->fd, &sb) < 0)
		return -errno;
	since = file_ledger_since(st->ledger);
	if (since > 0 && sb.st_ctime < since) {
		/* Here before this machine's ledger was: a copy from the
		 * image's machine, whose every clone has it. */
		st->note = "it came with a copied image, not read";
		st->ended = true;
		return 0;
	}
	r = file_ledger_legacy_offset(st->ledger_dir, (uint64_t)st->dev, (uint64_t)st->ino,
				      &legacy);
	if (r < 0)
		return r;
	st->legacy_end = r == 1 ? legacy : 0;
	return 0;
}

/* Give back what this window claimed and did not read. */
static int release_window(struct file_state *st)
{
	uint8_t keys[FILE_AHEAD_BLOCKS][FILE_LEDGER_KEY_LEN];
	size_t n = 0;
	int r;

	for (unsigned j = 0; j < st->win_n; j++)
		if (st->verdict[j] == FILE_LEDGER_CLAIMED && !st->used[j])
			memcpy(keys[n++], st->keys[j], FILE_LEDGER_KEY_LEN);
	st->win_n = 0;
	if (n == 0)
		return 0;
	r = file_ledger_release(st->ledger, (const uint8_t(*)[FILE_LEDGER_KEY_LEN])keys, n);
	return r;
}

/* The next window from st->pos: the keys of up to FILE_AHEAD_BLOCKS whole
 * blocks, claimed at once.  win_n 0 at the end. */
static int fill_window(struct file_state *st)
{
	uint8_t block[FILE_LEDGER_BLOCK];
	unsigned n = 0;
	int r = release_window(st);

	while (r == 0 && n < FILE_AHEAD_BLOCKS) {
		ssize_t got = read_block(st, st->pos + (uint64_t)n * FILE_LEDGER_BLOCK, block);

		if (got < 0)
			r = (int)got;
		else if (got < (ssize_t)FILE_LEDGER_BLOCK)
			break;
		else
			r = file_ledger_key(block, FILE_LEDGER_BLOCK, st->keys[n++]);
	}
	explicit_bzero(block, sizeof(block));
	if (r < 0 || n == 0)
		return r;
	r = file_ledger_claim(st->ledger, (const uint8_t(*)[FILE_LEDGER_KEY_LEN])st->keys, n,
			      st->verdict);
	if (r < 0)
		return r;
	st->win_pos = st->pos;
	st->win_n = n;
	/* Read under the earlier ledger: recorded now, not read again. */
	for (unsigned j = 0; j < n; j++)
		st->used[j] = st->pos + (uint64_t)(j + 1) * FILE_LEDGER_BLOCK <= st->legacy_end;
	return 0;
}

/* The block at st->pos, window slot @j, claimed: read it, and check it is
 * still what was claimed (the file may have changed since); if not, its
 * new content is claimed on its own.  FILE_LEDGER_BLOCK read into @buf, 0
 * when it is not ours to use after all, -errno. */
static ssize_t read_claimed(struct file_state *st, unsigned j, uint8_t *buf)
{
	uint8_t key[FILE_LEDGER_KEY_LEN], verdict;
	ssize_t got = read_block(st, st->pos, buf);
	int r;

	if (got < (ssize_t)FILE_LEDGER_BLOCK)
		return got < 0 ? got : 0; /* cut short meanwhile */
	r = file_ledger_key(buf, FILE_LEDGER_BLOCK, key);
	if (r == 0 && memcmp(key, st->keys[j], sizeof(key)) != 0) {
		/* Changed: the old claim goes back, the new content is
		 * claimed (once only, anywhere). */
		r = file_ledger_release(st->ledger,
					(const uint8_t(*)[FILE_LEDGER_KEY_LEN])st->keys[j], 1);
		if (r == 0)
			r = file_ledger_claim(st->ledger,
					      (const uint8_t(*)[FILE_LEDGER_KEY_LEN])key, 1,
					      &verdict);
		if (r == 0) {
			memcpy(st->keys[j], key, sizeof(key));
			st->verdict[j] = verdict;
		}
	}
	if (r < 0 || st->verdict[j] != FILE_LEDGER_CLAIMED) {
		explicit_bzero(buf, FILE_LEDGER_BLOCK);
		return r < 0 ? r : 0;
	}
	return FILE_LEDGER_BLOCK;
}

/*
 * One read through the ledger: the next block not read before, whole
 * (the reader asks for one block at a time), or at the end what is left
 * of a part-block (never used), then 0.  -EAGAIN after FILE_SKIP_SLICE
 * blocks skipped (source_read() then looks at its stop flag and calls
 * again).
 */
static ssize_t ledger_read(struct file_state *st, uint8_t *buf, size_t len)
{
	for (unsigned k = 0; k < FILE_SKIP_SLICE; k++) {
		unsigned j;
		ssize_t got;

		if (st->ended)
			return 0;
		if (len < FILE_LEDGER_BLOCK)
			return -EINVAL;
		if (st->win_n == 0 || st->pos < st->win_pos ||
		    st->pos >= st->win_pos + (uint64_t)st->win_n * FILE_LEDGER_BLOCK) {
			int r = fill_window(st);

			if (r < 0)
				return r;
			if (st->win_n == 0) {
				/* The end: the part-block once, never used. */
				st->ended = true;
				got = pread(st->fd, buf, FILE_LEDGER_BLOCK - 1, (off_t)st->pos);
				return got < 0 ? -errno : got;
			}
		}
		j = (unsigned)((st->pos - st->win_pos) / FILE_LEDGER_BLOCK);
		if (st->verdict[j] == FILE_LEDGER_FULL)
			return -ENOSPC;
		if (st->verdict[j] == FILE_LEDGER_CLAIMED && !st->used[j]) {
			got = read_claimed(st, j, buf);
			if (got < 0)
				return got;
			st->pos += FILE_LEDGER_BLOCK;
			if (got > 0) {
				st->used[j] = true;
				return got;
			}
			/* Not ours after all (changed, or cut short: then
			 * the claim goes back with the window). */
			st->skipped++;
			continue;
		}
		st->pos += FILE_LEDGER_BLOCK;
		st->skipped++;
	}
	return -EAGAIN;
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
	ssize_t n;

	if (st->fresh) {
		int w = file_wait_writer(st);

		if (w < 0)
			return w;
	}
	if (!st->ledger_dir)
		return source_fd_read(st->fd, buf, len);
	if (!st->begun) {
		int r = ledger_begin(st);

		if (r < 0) {
			st->ledger_err = r;
			return r;
		}
		st->begun = true;
	}
	n = ledger_read(st, buf, len);
	st->ledger_err = n < 0 && n != -EAGAIN ? (int)n : 0;
	return n;
}

static void file_close(void *state)
{
	struct file_state *st = state;

	if (!st)
		return;
	if (st->ledger) {
		/* A failure leaves the claims: lost, never read twice. */
		(void)release_window(st);
		file_ledger_close(st->ledger);
	}
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

	if (st->note)
		snprintf(buf, len, "%s (%s)", st->path, st->note);
	else if (st->skipped)
		snprintf(buf, len, "%s (%llu blocks read before skipped: the file ledger)",
			 st->path, (unsigned long long)st->skipped);
	else
		snprintf(buf, len, "%s", st->path);
	return 0;
}

/* The ledger's words for why the last read failed. */
static int file_why_failed(void *state, char *buf, size_t len)
{
	struct file_state *st = state;

	switch (st->ledger_err) {
	case 0:
		return -ENOENT;
	case -ENOSPC:
		snprintf(buf, len, "the file ledger in %s is full (%u buckets): new content is "
			 "not credited", st->ledger_dir, 1u << FILE_LEDGER_MAX_SHIFT);
		return 0;
	case -EBADMSG:
		snprintf(buf, len, "%s/%s is not a file ledger this version reads: nothing is "
			 "credited from files until it is moved away (files read before are then "
			 "credited again)", st->ledger_dir, FILE_LEDGER_NAME);
		return 0;
	default:
		snprintf(buf, len, "the file ledger in %s: %s", st->ledger_dir,
			 strerror(-st->ledger_err));
		return 0;
	}
}

/* The path alone: how many blocks the ledger skipped is not what it is. */
static int file_identity(void *state, char *buf, size_t len)
{
	const struct file_state *st = state;

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
	.identity = file_identity,
	.why_failed = file_why_failed,
	.finite = file_finite,
};
