// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The file ledger on disk.  See include/rngfeed/file_ledger.h.
 *
 * Format (text, so that an administrator can read it):
 *   rngfeed-file-ledger 1 machine=ID since=UNIXTIME
 *   DEV INO OFFSET HASHED SHA256HEX TOUCHED
 * one entry per line; TOUCHED (unix time of the last record) picks the
 * entries dropped beyond FILE_LEDGER_MAX_ENTRIES.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/file_ledger.h"
#include "rngfeed/util.h"

#define MAGIC "rngfeed-file-ledger 1"
#define ID_LEN 33 /* 32 hex digits and a NUL */

struct entry {
	struct file_ledger_mark m;
	int64_t touched;
};

struct book {
	char machine[ID_LEN];
	int64_t since;
	size_t n, cap;
	struct entry *e;
};

static void book_free(struct book *b)
{
	free(b->e);
	memset(b, 0, sizeof(*b));
}

static int path_in(char *buf, size_t len, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* The lock that serialises every read-modify-write of @dir's ledger
 * (@create: make @dir when missing); the fd, or -errno (-ENOENT: no
 * directory, so no ledger). */
static int lock_dir(const char *dir, bool create)
{
	char path[512];
	int fd, r;

	r = path_in(path, sizeof(path), dir, FILE_LEDGER_NAME ".lock");
	if (r < 0)
		return r;
	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	/* flock() needs no write access: a reader of a read-only ledger
	 * still locks.  The lock file is made where the directory is. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT)
		fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			  0600);
	if (fd < 0)
		return -errno;
	/* Bounded: file_ledger_adopt() runs in the main thread, which
	 * never waits on another process (one stuck holding the lock on a
	 * hung disk): 50 tries 10 ms apart, then -EAGAIN. */
	for (int tries = 0; flock(fd, LOCK_EX | LOCK_NB) < 0; tries++) {
		const struct timespec ten_ms = { 0, 10 * 1000 * 1000 };

		if ((errno != EWOULDBLOCK && errno != EINTR) || tries >= 50) {
			r = errno == EWOULDBLOCK ? -EAGAIN : -errno;
			close(fd);
			return r;
		}
		nanosleep(&ten_ms, NULL);
	}
	return fd;
}

static int hex_decode(const char *hex, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		out[i] = (uint8_t)v;
	}
	return hex[2 * n] == '\0' ? 0 : -EINVAL;
}

static int book_add(struct book *b, const struct entry *e)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16;
		struct entry *ne = realloc(b->e, cap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		b->e = ne;
		b->cap = cap;
	}
	b->e[b->n++] = *e;
	return 0;
}

/* Read @dir's ledger into @b: 1 read, 0 none yet, -errno (-EBADMSG: not
 * a ledger this version can read). */
static int book_load(const char *dir, struct book *b)
{
	char path[512], line[256];
	FILE *f;
	int r = 1;

	memset(b, 0, sizeof(*b));
	if (path_in(path, sizeof(path), dir, FILE_LEDGER_NAME) < 0)
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, MAGIC " machine=%32s since=%" SCNd64, b->machine,
		   &b->since) != 2) {
		r = -EBADMSG;
		goto out;
	}
	if (strcmp(b->machine, "-") == 0)
		b->machine[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		struct entry e = { 0 };
		char hex[2 * FILE_LEDGER_HASH_LEN + 2];

		if (sscanf(line, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
				 " %65s %" SCNd64,
			   &e.m.dev, &e.m.ino, &e.m.offset, &e.m.hashed, hex,
			   &e.touched) != 6 ||
		    e.m.hashed > e.m.offset ||
		    hex_decode(hex, e.m.hash, FILE_LEDGER_HASH_LEN) < 0) {
			r = -EBADMSG;
			goto out;
		}
		r = book_add(b, &e);
		if (r < 0)
			goto out;
		r = 1;
	}
	if (ferror(f))
		r = -EIO;
out:
	fclose(f);
	if (r < 0)
		book_free(b);
	return r;
}

static int by_touched_desc(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return (x->touched < y->touched) - (x->touched > y->touched);
}

/* Write @b as @dir's ledger: a new file, synced, renamed over the old
 * one, and the directory synced, so that a crash leaves the old ledger
 * or the new one. */
static int book_store(const char *dir, struct book *b)
{
	char path[512], tmp[520];
	FILE *f;
	int fd, r = 0;

	if (path_in(path, sizeof(path), dir, FILE_LEDGER_NAME) < 0 ||
	    path_in(tmp, sizeof(tmp), dir, FILE_LEDGER_NAME ".new") < 0)
		return -ENAMETOOLONG;
	if (b->n > FILE_LEDGER_MAX_ENTRIES) {
		qsort(b->e, b->n, sizeof(b->e[0]), by_touched_desc);
		b->n = FILE_LEDGER_MAX_ENTRIES;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		goto fail;
	}
	fprintf(f, MAGIC " machine=%s since=%" PRId64 "\n",
		b->machine[0] ? b->machine : "-", b->since);
	for (size_t i = 0; i < b->n; i++) {
		const struct entry *e = &b->e[i];

		fprintf(f, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " ",
			e->m.dev, e->m.ino, e->m.offset, e->m.hashed);
		for (size_t k = 0; k < FILE_LEDGER_HASH_LEN; k++)
			fprintf(f, "%02x", e->m.hash[k]);
		fprintf(f, " %" PRId64 "\n", e->touched);
	}
	if (fflush(f) != 0 || fsync(fileno(f)) < 0)
		r = -errno;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r == 0) {
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
		return 0;
	}
fail:
	unlink(tmp);
	return r;
}

static struct entry *book_find(struct book *b, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->e[i].m.dev == dev && b->e[i].m.ino == ino)
			return &b->e[i];
	return NULL;
}

/* The 32 hex digits of @path (a machine-id file), or -errno. */
static int read_machine_id(const char *path, char id[ID_LEN])
{
	char line[64];
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -EBADMSG;
	}
	fclose(f);
	n = strspn(line, "0123456789abcdef");
	if (n != 32)
		return -EBADMSG;
	memcpy(id, line, 32);
	id[32] = '\0';
	return 0;
}

int file_ledger_adopt(const char *dir, const char *machine_id_path,
		      char *other)
{
	char id[ID_LEN] = "";
	struct book b;
	int lock, r, id_err;

	/* Without a machine id the ledger is still made (and works); only
	 * a copy from another machine cannot be told. */
	id_err = read_machine_id(machine_id_path, id);
	lock = lock_dir(dir, true);
	if (lock < 0)
		return lock;
	r = book_load(dir, &b);
	if (r < 0)
		goto out;
	if (r == 1 && (id_err < 0 || strcmp(b.machine, id) == 0)) {
		r = id_err < 0 ? id_err : 0;
		goto out;
	}
	if (r == 1 && b.machine[0]) {
		/* Another machine's: what it read stays spent; files from
		 * before now came with the image. */
		if (other)
			snprintf(other, ID_LEN, "%s", b.machine);
		b.since = (int64_t)time(NULL);
		r = 1;
	} else {
		r = 0; /* new, or started before the machine was known */
	}
	memcpy(b.machine, id, sizeof(id));
	{
		int w = book_store(dir, &b);

		if (w < 0)
			r = w;
		else if (id_err < 0)
			r = id_err;
	}
out:
	book_free(&b);
	close(lock);
	return r;
}

int file_ledger_lookup(const char *dir, uint64_t dev, uint64_t ino,
		       struct file_ledger_mark *out, int64_t *since)
{
	struct book b;
	struct entry *e;
	int lock, r;

	lock = lock_dir(dir, false);
	if (lock == -ENOENT) {
		if (since)
			*since = 0;
		return 0; /* no ledger yet */
	}
	if (lock < 0)
		return lock;
	r = book_load(dir, &b);
	close(lock);
	if (r <= 0) {
		if (since)
			*since = 0;
		return r;
	}
	if (since)
		*since = b.since;
	e = book_find(&b, dev, ino);
	/* A device number can change between boots (btrfs subvolumes,
	 * network file systems): the same inode number on another device
	 * is offered too, and the caller's check of the hashed prefix says
	 * whether it is the same file. */
	for (size_t i = 0; !e && i < b.n; i++)
		if (b.e[i].m.ino == ino)
			e = &b.e[i];
	if (e)
		*out = e->m;
	book_free(&b);
	return e != NULL;
}

int file_ledger_record(const char *dir, const struct file_ledger_mark *m,
		       uint64_t expect_offset, struct file_ledger_mark *now)
{
	struct entry fresh = { .m = *m, .touched = (int64_t)time(NULL) };
	struct book b;
	struct entry *e;
	int lock, r;

	if (m->hashed > m->offset)
		return -EINVAL;
	lock = lock_dir(dir, true);
	if (lock < 0)
		return lock;
	r = book_load(dir, &b);
	if (r < 0)
		goto out;
	e = book_find(&b, m->dev, m->ino);
	if ((e ? e->m.offset : 0) != expect_offset) {
		/* Someone else read it further: never move it back. */
		if (now)
			*now = e ? e->m : (struct file_ledger_mark){ 0 };
		r = 0;
		goto out;
	}
	if (e)
		*e = fresh;
	else if ((r = book_add(&b, &fresh)) < 0)
		goto out;
	r = book_store(dir, &b);
	if (r == 0)
		r = 1;
out:
	book_free(&b);
	close(lock);
	return r;
}

int file_ledger_chown(const char *dir, uid_t uid, gid_t gid)
{
	static const char *const names[] = { FILE_LEDGER_NAME,
					     FILE_LEDGER_NAME ".lock" };
	char path[512];

	if (chown(dir, uid, gid) < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (path_in(path, sizeof(path), dir, names[i]) < 0)
			return -ENAMETOOLONG;
		if (lchown(path, uid, gid) < 0 && errno != ENOENT)
			return -errno;
	}
	return 0;
}

const char *file_ledger_default_dir(char *buf, size_t len)
{
	return unit_dir_path(buf, len, "STATE_DIRECTORY", NULL,
			     FILE_LEDGER_DEFAULT_DIR);
}
