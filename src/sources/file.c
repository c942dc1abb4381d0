// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * file: a FIFO or a regular file, for tests and for piping an external
 * generator in.  Nothing is known about what is in it, so it is credited
 * nothing unless the user says otherwise.  A regular file is read once: at
 * its end the source is finished (see file_finite()), and, when it is
 * credited, it is read through the file ledger (file_ledger.h): a reopen
 * (SIGHUP, a restart, another path to the same inode) goes on where the
 * last read stopped, never from byte 0.
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
#include <gcrypt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rngfeed/drbg.h"
#include "rngfeed/file_ledger.h"
#include "rngfeed/sources.h"

/* Bytes claimed in the ledger ahead of the reads: one durable write per
 * this many bytes.  What a crash leaves claimed and unread is lost, never
 * read twice. */
#define FILE_LEDGER_AHEAD (256u * 1024u)

struct file_state {
	int fd;
	bool regular; /* a regular file: read once, never reopened */
	bool fresh;   /* a FIFO no writer has written to yet (O_NONBLOCK) */
	char path[256];

	/* The ledger, for a credited regular file (ledger_dir != NULL). */
	const char *ledger_dir;
	bool resumed;           /* the ledger was consulted (first read) */
	enum { RESUME_LOOKUP, RESUME_CHECK, RESUME_SKIP } phase;
	struct file_ledger_mark found; /* the ledger's entry, while resuming */
	uint64_t hash_at;       /* resuming: the hash covers [0, hash_at) */
	gcry_md_hd_t md;        /* SHA-256 of bytes [0, pos) */
	struct file_ledger_mark id; /* dev and ino */
	uint64_t pos;           /* bytes of the file read or skipped */
	uint64_t claimed;       /* the ledger lets us read up to here */
	uint64_t ledger_at;     /* the ledger's offset as we last saw it */
	uint64_t began;         /* where this open began to read */
	const char *note;       /* why it began there, for describe */
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
		r = drbg_library_init();
		if (r == 0 && gcry_md_open(&st->md, GCRY_MD_SHA256, 0) != 0)
			r = -ENOMEM;
		if (r < 0) {
			snprintf(why, why_len, "%s: cannot hash it for the "
				 "file ledger", path);
			free(st);
			goto fail;
		}
		st->ledger_dir = cfg->ledger_dir;
		st->id.dev = (uint64_t)sb.st_dev;
		st->id.ino = (uint64_t)sb.st_ino;
	}
	*state = st;
	return 0;
fail:
	close(fd);
	return r;
}

/* ---- reading through the file ledger ------------------------------------ */

/* Hash bytes [from, to) of the file into st->md without using them (to
 * check or catch up with what the ledger says was read); stops at EOF.
 * The offset reached, or -errno. */
static int64_t hash_range(struct file_state *st, uint64_t from, uint64_t to)
{
	uint8_t buf[16384];
	int64_t r = (int64_t)from;

	while ((uint64_t)r < to) {
		size_t want = to - (uint64_t)r < sizeof(buf)
				      ? (size_t)(to - (uint64_t)r)
				      : sizeof(buf);
		ssize_t n = pread(st->fd, buf, want, (off_t)r);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		gcry_md_write(st->md, buf, (size_t)n);
		r += n;
	}
	explicit_bzero(buf, sizeof(buf));
	return r;
}

static int digest_now(struct file_state *st, uint8_t out[FILE_LEDGER_HASH_LEN])
{
	gcry_md_hd_t copy;

	if (gcry_md_copy(&copy, st->md) != 0)
		return -ENOMEM;
	memcpy(out, gcry_md_read(copy, GCRY_MD_SHA256), FILE_LEDGER_HASH_LEN);
	gcry_md_close(copy);
	return 0;
}

/* Start reading at @pos (the hash already covers [0, pos)). */
static int seek_to(struct file_state *st, uint64_t pos)
{
	if (lseek(st->fd, (off_t)pos, SEEK_SET) < 0)
		return -errno;
	st->pos = st->claimed = pos;
	return 0;
}

/*
 * Where to begin, from the ledger: where its entry for this inode stops,
 * when the first `hashed` bytes are still the ones it hashed; byte 0 when
 * there is no entry or the content changed (new input); the end, unread,
 * for a file that came with a copied image (older than the ledger's
 * adoption on this machine, and not listed).
 *
 * Checking a long prefix takes a while (SHA-256 at a few hundred MB/s),
 * so it is done FILE_RESUME_SLICE bytes per call: -EAGAIN until it is
 * done, and source_read() looks at its stop flag in between (SIGTERM is
 * honoured within a second whatever the file's size).
 */
#define FILE_RESUME_SLICE (32u * 1024u * 1024u)

/* Hash on towards @to, a slice at a time: 1 reached (or EOF), 0 more to
 * do, -errno. */
static int hash_towards(struct file_state *st, uint64_t to)
{
	uint64_t stop = to - st->hash_at > FILE_RESUME_SLICE
				? st->hash_at + FILE_RESUME_SLICE
				: to;
	int64_t got = hash_range(st, st->hash_at, stop);

	if (got < 0)
		return (int)got;
	if ((uint64_t)got < stop) {      /* EOF before @to */
		st->hash_at = (uint64_t)got;
		return 1;
	}
	st->hash_at = stop;
	return stop == to;
}

static int ledger_resume(struct file_state *st)
{
	uint8_t now[FILE_LEDGER_HASH_LEN];
	struct stat sb;
	int64_t since = 0;
	int r;

	switch (st->phase) {
	case RESUME_LOOKUP:
		if (fstat(st->fd, &sb) < 0)
			return -errno;
		r = file_ledger_lookup(st->ledger_dir, st->id.dev, st->id.ino,
				       &st->found, &since);
		if (r < 0)
			return r;
		st->hash_at = 0;
		if (r == 1) {
			/* Another device's entry is not ours to move. */
			st->ledger_at = st->found.dev == st->id.dev
						? st->found.offset
						: 0;
			if (st->found.hashed > (uint64_t)sb.st_size)
				goto changed;
			st->phase = RESUME_CHECK;
			return -EAGAIN;
		}
		st->ledger_at = 0;
		if (since > 0 && sb.st_ctime < since) {
			/* Not read here, and here before this machine's
			 * ledger was: a copy from the image's machine. */
			st->note = "it came with a copied image, not read";
			st->found.offset = (uint64_t)sb.st_size;
			st->phase = RESUME_SKIP;
			return -EAGAIN;
		}
		return seek_to(st, 0);
	case RESUME_CHECK:
		r = hash_towards(st, st->found.hashed);
		if (r <= 0)
			return r < 0 ? r : -EAGAIN;
		r = digest_now(st, now);
		if (r < 0)
			return r;
		if (st->hash_at != st->found.hashed ||
		    memcmp(now, st->found.hash, sizeof(now)) != 0)
			goto changed;
		/* The same bytes: go on after what was read (or claimed). */
		st->note = "the file ledger";
		st->phase = RESUME_SKIP;
		return -EAGAIN;
	case RESUME_SKIP:
		r = hash_towards(st, st->found.offset);
		if (r <= 0)
			return r < 0 ? r : -EAGAIN;
		/* From where the hash stops: the ledger's offset, or the
		 * end of the file when that comes first (a claim past the
		 * end covered nothing that was there). */
		return seek_to(st, st->hash_at);
	}
	return -EINVAL;
changed:
	/* Changed since it was read: new input, from byte 0. */
	gcry_md_reset(st->md);
	st->note = "changed since the file ledger's record: new input";
	return seek_to(st, 0);
}

/* Claim bytes past st->claimed in the ledger before reading them, so
 * that no crash or other reader can read them again. */
static int ledger_claim(struct file_state *st, size_t len)
{
	for (int tries = 0; tries < 8; tries++) {
		struct file_ledger_mark m = st->id, now;
		int r;

		m.offset = st->pos + (len > FILE_LEDGER_AHEAD ? len
							      : FILE_LEDGER_AHEAD);
		m.hashed = st->pos;
		r = digest_now(st, m.hash);
		if (r < 0)
			return r;
		r = file_ledger_record(st->ledger_dir, &m, st->ledger_at, &now);
		if (r < 0)
			return r;
		if (r == 1) {
			st->ledger_at = st->claimed = m.offset;
			return 0;
		}
		/* Another reader (or instance) read on: skip what it has. */
		st->ledger_at = now.offset;
		if (now.offset > st->pos) {
			int64_t got = hash_range(st, st->pos, now.offset);

			if (got < 0)
				return (int)got;
			/* From where the hash stops (the end, if first). */
			r = seek_to(st, (uint64_t)got);
			if (r < 0)
				return r;
		}
	}
	return -EBUSY;
}

/* Hand back what was claimed and not read: the next open goes on from
 * exactly here.  A failure leaves the claim, which only loses bytes. */
static void ledger_release(struct file_state *st)
{
	struct file_ledger_mark m = st->id;

	if (!st->resumed || st->claimed <= st->pos ||
	    st->ledger_at != st->claimed)
		return;
	m.offset = m.hashed = st->pos;
	if (digest_now(st, m.hash) == 0)
		file_ledger_record(st->ledger_dir, &m, st->ledger_at, NULL);
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
	int r;

	if (st->fresh) {
		int w = file_wait_writer(st);

		if (w < 0)
			return w;
	}
	if (!st->ledger_dir)
		return source_fd_read(st->fd, buf, len);
	if (!st->resumed) {
		r = ledger_resume(st);
		if (r < 0)
			return r;
		st->resumed = true;
		st->began = st->pos;
	}
	if (st->pos + len > st->claimed) {
		r = ledger_claim(st, len);
		if (r < 0)
			return r;
	}
	n = source_fd_read(st->fd, buf, len);
	if (n > 0) {
		gcry_md_write(st->md, buf, (size_t)n);
		st->pos += (uint64_t)n;
	}
	return n;
}

static void file_close(void *state)
{
	struct file_state *st = state;

	if (!st)
		return;
	if (st->ledger_dir) {
		ledger_release(st);
		gcry_md_close(st->md);
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
		snprintf(buf, len, "%s from byte %llu (%s)", st->path,
			 (unsigned long long)st->began, st->note);
	else
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
