// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The file ledger on disk.  See include/rngfeed/file_ledger.h.
 *
 * DIR/file-blocks, integers little-endian:
 *   the header, 4096 bytes:
 *     0     16  "rngfeed-blocks1" and a NUL (magic and version)
 *     16    4   shift: 2^shift buckets
 *     24    8   since (unix time of the adoption; 0: began here)
 *     32    33  machine id, 32 hex digits and a NUL ("": unknown)
 *     4092  4   CRC-32 of bytes [0, 4092)
 *   bucket b, 4096 bytes at 4096 x (1 + b):
 *     0     2   count of keys (<= FILE_LEDGER_BUCKET_KEYS)
 *     2     2   flags: BUCKET_DAMAGED (its keys are unknown: it holds all)
 *     4     4   CRC-32 of bytes [0, 4) and of the keys
 *     8     16 x count  the keys, in the order they came
 *   Eight zero bytes at a bucket's start are an empty bucket (the holes
 *   of a new, sparse file).  A key's bucket: its first four bytes,
 *   little-endian, modulo 2^shift; doubling the table splits bucket b into
 *   b and b + 2^shift, so a damaged bucket stays damaged in both.
 */
#include <errno.h>
#include <fcntl.h>
#include <gcrypt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/drbg.h"
#include "rngfeed/file_ledger.h"
#include "rngfeed/util.h"

#define MAGIC "rngfeed-blocks1"
#define ID_LEN 33 /* 32 hex digits and a NUL */
#define PAGE FILE_LEDGER_BUCKET_BYTES
#define BUCKET_DAMAGED 1u
#define MAX_CLAIM 1024u

struct header {
	unsigned shift;
	int64_t since;
	char machine[ID_LEN];
};

struct file_ledger {
	char dir[256];
	int fd;              /* DIR/file-blocks, read-write */
	ino_t ino;           /* ...its inode: a grow renames another over it */
	unsigned max_shift;
	struct header h;
	uint8_t page[PAGE];  /* one bucket at a time */
};

/* ---- encoding ------------------------------------------------------------ */

static void put_le(uint8_t *p, uint64_t x, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(x >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, unsigned bytes)
{
	uint64_t x = 0;

	for (unsigned i = 0; i < bytes; i++)
		x |= (uint64_t)p[i] << (8 * i);
	return x;
}

/* CRC-32 of @a then @b (either may be empty). */
static uint32_t crc_of(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	gcry_md_hd_t md;
	uint32_t crc;

	if (gcry_md_open(&md, GCRY_MD_CRC32, 0) != 0)
		return 0xffffffffu; /* matches nothing written: taken as damage */
	gcry_md_write(md, a, alen);
	if (blen)
		gcry_md_write(md, b, blen);
	crc = (uint32_t)get_le(gcry_md_read(md, GCRY_MD_CRC32), 4);
	gcry_md_close(md);
	return crc;
}

static void header_encode(const struct header *h, uint8_t page[PAGE])
{
	memset(page, 0, PAGE);
	memcpy(page, MAGIC, sizeof(MAGIC));
	put_le(page + 16, h->shift, 4);
	put_le(page + 24, (uint64_t)h->since, 8);
	memcpy(page + 32, h->machine, ID_LEN);
	page[32 + ID_LEN - 1] = '\0';
	put_le(page + PAGE - 4, crc_of(page, PAGE - 4, NULL, 0), 4);
}

static int header_decode(const uint8_t page[PAGE], struct header *h)
{
	if (memcmp(page, MAGIC, sizeof(MAGIC)) != 0 ||
	    get_le(page + PAGE - 4, 4) != crc_of(page, PAGE - 4, NULL, 0))
		return -EBADMSG;
	h->shift = (unsigned)get_le(page + 16, 4);
	h->since = (int64_t)get_le(page + 24, 8);
	memcpy(h->machine, page + 32, ID_LEN);
	h->machine[ID_LEN - 1] = '\0';
	if (h->shift > FILE_LEDGER_MAX_SHIFT ||
	    strspn(h->machine, "0123456789abcdef") != strlen(h->machine))
		return -EBADMSG;
	return 0;
}

/* A bucket's keys and flags; false when it is damaged (then *count 0). */
static bool bucket_decode(const uint8_t page[PAGE], unsigned *count, unsigned *flags)
{
	static const uint8_t zero[8];

	*count = (unsigned)get_le(page, 2);
	*flags = (unsigned)get_le(page + 2, 2);
	if (memcmp(page, zero, sizeof(zero)) == 0)
		return true;
	if (*count > FILE_LEDGER_BUCKET_KEYS || (*flags & ~BUCKET_DAMAGED) ||
	    get_le(page + 4, 4) != crc_of(page, 4, page + 8, (size_t)*count * FILE_LEDGER_KEY_LEN)) {
		*count = 0;
		*flags = BUCKET_DAMAGED;
		return false;
	}
	if (*flags & BUCKET_DAMAGED)
		*count = 0;
	return true;
}

static void bucket_seal(uint8_t page[PAGE], unsigned count, unsigned flags)
{
	put_le(page, count, 2);
	put_le(page + 2, flags, 2);
	memset(page + 8 + (size_t)count * FILE_LEDGER_KEY_LEN, 0,
	       PAGE - 8 - (size_t)count * FILE_LEDGER_KEY_LEN);
	put_le(page + 4, crc_of(page, 4, page + 8, (size_t)count * FILE_LEDGER_KEY_LEN), 4);
}

static uint64_t bucket_of(const uint8_t key[FILE_LEDGER_KEY_LEN], unsigned shift)
{
	return get_le(key, 4) & ((UINT64_C(1) << shift) - 1);
}

static off_t bucket_at(uint64_t b)
{
	return (off_t)(PAGE * (1 + b));
}

/* ---- whole pages ------------------------------------------------------- */

static int read_page(int fd, off_t at, uint8_t page[PAGE])
{
	ssize_t n = util_pread_full(fd, page, PAGE, at);
	size_t got;

	if (n < 0)
		return (int)n;
	got = (size_t)n;
	/* Past the end of a table that was cut short: reads as damage
	 * for a bucket (never as empty), as a bad magic for the header. */
	if (got < PAGE)
		memset(page + got, 0xff, PAGE - got);
	return 0;
}

static int write_page(int fd, off_t at, const uint8_t page[PAGE])
{
	size_t put = 0;

	while (put < PAGE) {
		ssize_t n = pwrite(fd, page + put, PAGE - put, at + (off_t)put);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		put += (size_t)n;
	}
	return 0;
}

/* ---- the directory, its lock, its files ---------------------------------- */

static int path_in(char *buf, size_t len, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* The lock that serialises every change of @dir's ledger (@create: make
 * @dir when missing); the fd, or -errno. */
static int lock_dir(const char *dir, bool create)
{
	char path[512];
	int fd, r;

	r = path_in(path, sizeof(path), dir, FILE_LEDGER_NAME ".lock");
	if (r < 0)
		return r;
	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	/* flock() needs no write access.  The lock file is made where the
	 * directory is. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT)
		fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	/* Bounded: file_ledger_adopt() runs in the main thread, which
	 * never waits on another process (one stuck holding the lock on a
	 * hung disk), and a reader's -EAGAIN is tried again later: 50
	 * tries 10 ms apart. */
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

static void sync_dir(const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
}

/* Under the lock: a new, empty table of 2^@h->shift buckets as @path
 * (sparse: the buckets are holes), synced.  The fd, or -errno. */
static int create_table(const char *path, const struct header *h)
{
	uint8_t page[PAGE];
	int fd, r;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	header_encode(h, page);
	r = write_page(fd, 0, page);
	if (r == 0 && ftruncate(fd, bucket_at(UINT64_C(1) << h->shift)) < 0)
		r = -errno;
	if (r == 0 && fdatasync(fd) < 0)
		r = -errno;
	if (r < 0) {
		close(fd);
		unlink(path);
		return r;
	}
	return fd;
}

/* Under the lock: the table's fd (@create: a new one when missing, with
 * @fresh's header), its header in *@h; -ENOENT when missing and not
 * @create, -EBADMSG when it is not a table this version reads. */
static int open_table(const char *dir, bool create, const struct header *fresh,
		      struct header *h)
{
	char path[512];
	uint8_t page[PAGE];
	struct stat sb;
	int fd, r;

	r = path_in(path, sizeof(path), dir, FILE_LEDGER_NAME);
	if (r < 0)
		return r;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && (errno != ENOENT || !create))
		return -errno;
	if (fd < 0) {
		fd = create_table(path, fresh);
		if (fd < 0)
			return fd;
		sync_dir(dir);
	}
	r = read_page(fd, 0, page);
	if (r == 0)
		r = header_decode(page, h);
	/* Whole buckets, as many as the header says: a table cut short is
	 * not one (its lost keys would be credited again). */
	if (r == 0 && (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
		       sb.st_size < bucket_at(UINT64_C(1) << h->shift)))
		r = -EBADMSG;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* ---- the earlier kind of ledger, read only -------------------------------- */

/* Its first line, "rngfeed-file-ledger 1 machine=ID since=T": 1 read, 0
 * none, -errno.  *@f is left open after it when @f is given. */
static int legacy_header(const char *dir, char machine[ID_LEN], int64_t *since, FILE **f)
{
	char path[512], line[256];
	FILE *in;

	if (path_in(path, sizeof(path), dir, FILE_LEDGER_LEGACY_NAME) < 0)
		return -ENAMETOOLONG;
	in = fopen(path, "re");
	if (!in)
		return errno == ENOENT ? 0 : -errno;
	if (!fgets(line, sizeof(line), in) ||
	    sscanf(line, "rngfeed-file-ledger 1 machine=%32s since=%" SCNd64, machine, since) != 2) {
		fclose(in);
		return -EBADMSG;
	}
	if (strcmp(machine, "-") == 0)
		machine[0] = '\0';
	if (f)
		*f = in;
	else
		fclose(in);
	return 1;
}

int file_ledger_legacy_offset(const char *dir, uint64_t dev, uint64_t ino, uint64_t *offset)
{
	char machine[ID_LEN], line[256];
	int64_t since;
	bool found = false;
	FILE *f = NULL;
	int r;

	r = legacy_header(dir, machine, &since, &f);
	if (r <= 0)
		return r;
	/* DEV INO OFFSET HASHED SHA256HEX TOUCHED */
	while (fgets(line, sizeof(line), f)) {
		uint64_t d, i, off, hashed;

		if (sscanf(line, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &d, &i, &off,
			   &hashed) != 4) {
			r = -EBADMSG;
			break;
		}
		/* The same device first; else the same inode elsewhere. */
		if (i == ino && (!found || d == dev)) {
			*offset = off;
			found = true;
		}
	}
	if (r >= 0 && ferror(f))
		r = -EIO;
	fclose(f);
	return r < 0 ? r : found;
}

/* ---- adoption -------------------------------------------------------------- */

/* The 32 hex digits of @path (a machine-id file), or -errno. */
static int read_machine_id(const char *path, char id[ID_LEN])
{
	char line[64];
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -EBADMSG;
	}
	fclose(f);
	if (strspn(line, "0123456789abcdef") != 32)
		return -EBADMSG;
	memcpy(id, line, 32);
	id[32] = '\0';
	return 0;
}

/* A new table's header: the machine and "since" of a ledger of the
 * earlier kind, when there is one (its files are the ones it lists). */
static void fresh_header(const char *dir, struct header *h)
{
	*h = (struct header){ .shift = FILE_LEDGER_INITIAL_SHIFT };
	if (legacy_header(dir, h->machine, &h->since, NULL) != 1)
		*h = (struct header){ .shift = FILE_LEDGER_INITIAL_SHIFT };
}

int file_ledger_adopt(const char *dir, const char *machine_id_path, char *other)
{
	char id[ID_LEN] = "";
	struct header fresh, h = { 0 };
	uint8_t page[PAGE];
	int lock, fd, r, id_err;

	r = drbg_library_init();
	if (r < 0)
		return r;
	/* Without a machine id the ledger is still made (and works); only
	 * a copy from another machine cannot be told. */
	id_err = read_machine_id(machine_id_path, id);
	lock = lock_dir(dir, true);
	if (lock < 0)
		return lock;
	fresh_header(dir, &fresh);
	fd = open_table(dir, true, &fresh, &h);
	if (fd < 0) {
		r = fd;
		goto out;
	}
	if (id_err < 0 || strcmp(h.machine, id) == 0) {
		r = id_err < 0 ? id_err : 0;
		goto out_fd;
	}
	r = 0; /* new, or started before the machine was known */
	if (h.machine[0]) {
		/* Another machine's: what it read stays spent; files from
		 * before now came with the image. */
		if (other)
			snprintf(other, ID_LEN, "%s", h.machine);
		h.since = (int64_t)time(NULL);
		r = 1;
	}
	memcpy(h.machine, id, sizeof(id));
	header_encode(&h, page);
	if (write_page(fd, 0, page) < 0 || fdatasync(fd) < 0)
		r = -errno;
out_fd:
	close(fd);
out:
	close(lock);
	return r;
}

/* ---- a reader's handle ------------------------------------------------------ */

int file_ledger_open(const char *dir, unsigned max_shift, struct file_ledger **out)
{
	struct file_ledger *l;
	struct header fresh;
	struct stat sb;
	int lock, r;

	r = drbg_library_init();
	if (r < 0)
		return r;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	if ((size_t)snprintf(l->dir, sizeof(l->dir), "%s", dir) >= sizeof(l->dir)) {
		free(l);
		return -ENAMETOOLONG;
	}
	l->max_shift = max_shift > FILE_LEDGER_MAX_SHIFT ? FILE_LEDGER_MAX_SHIFT : max_shift;
	lock = lock_dir(dir, true);
	if (lock < 0) {
		free(l);
		return lock;
	}
	fresh_header(dir, &fresh);
	l->fd = open_table(dir, true, &fresh, &l->h);
	close(lock);
	if (l->fd < 0 || fstat(l->fd, &sb) < 0) {
		r = l->fd < 0 ? l->fd : -errno;
		if (l->fd >= 0)
			close(l->fd);
		free(l);
		return r;
	}
	l->ino = sb.st_ino;
	*out = l;
	return 0;
}

void file_ledger_close(struct file_ledger *l)
{
	if (!l)
		return;
	close(l->fd);
	free(l);
}

int64_t file_ledger_since(const struct file_ledger *l)
{
	return l->h.since;
}

int file_ledger_key(const void *block, size_t len, uint8_t key[FILE_LEDGER_KEY_LEN])
{
	uint8_t digest[32];
	int r = drbg_library_init();

	if (r < 0)
		return r;
	gcry_md_hash_buffer(GCRY_MD_SHA256, digest, block, len);
	memcpy(key, digest, FILE_LEDGER_KEY_LEN);
	return 0;
}

/* Under the lock: the table on disk may be a newer one (another handle
 * grew it and renamed it over ours): then that one. */
static int follow_table(struct file_ledger *l)
{
	char path[512];
	struct stat sb;
	int fd;

	if (path_in(path, sizeof(path), l->dir, FILE_LEDGER_NAME) < 0)
		return -ENAMETOOLONG;
	if (stat(path, &sb) < 0)
		return -errno; /* removed meanwhile: not ours to remake */
	if (sb.st_ino == l->ino)
		return 0;
	fd = open_table(l->dir, false, NULL, &l->h);
	if (fd < 0)
		return fd;
	if (fstat(fd, &sb) < 0) {
		close(fd);
		return -errno;
	}
	close(l->fd);
	l->fd = fd;
	l->ino = sb.st_ino;
	return 0;
}

/* Under the lock: bucket @b into l->page; *count, *flags; a damaged one
 * is written back as such (once: it holds every key from then on). */
static int load_bucket(struct file_ledger *l, uint64_t b, unsigned *count, unsigned *flags)
{
	int r = read_page(l->fd, bucket_at(b), l->page);

	if (r < 0)
		return r;
	if (!bucket_decode(l->page, count, flags)) {
		bucket_seal(l->page, 0, BUCKET_DAMAGED);
		return write_page(l->fd, bucket_at(b), l->page);
	}
	return 0;
}

static bool bucket_has(const uint8_t page[PAGE], unsigned count,
		       const uint8_t key[FILE_LEDGER_KEY_LEN])
{
	for (unsigned i = 0; i < count; i++)
		if (memcmp(page + 8 + (size_t)i * FILE_LEDGER_KEY_LEN, key, FILE_LEDGER_KEY_LEN) == 0)
			return true;
	return false;
}

/*
 * Under the lock: twice the buckets.  The new table is written beside the
 * old one (a crash leaves the old one whole), synced and renamed over
 * it.  Old bucket b goes to new b and b + 2^shift by the key's next bit;
 * a damaged one makes both damaged.
 */
static int grow(struct file_ledger *l)
{
	char path[512], tmp[520];
	struct header h = l->h;
	uint8_t lo[PAGE], hi[PAGE];
	const uint64_t n = UINT64_C(1) << l->h.shift;
	struct stat sb;
	int fd, r = 0;

	if (path_in(path, sizeof(path), l->dir, FILE_LEDGER_NAME) < 0 ||
	    path_in(tmp, sizeof(tmp), l->dir, FILE_LEDGER_NAME ".new") < 0)
		return -ENAMETOOLONG;
	h.shift++;
	fd = create_table(tmp, &h);
	if (fd < 0)
		return fd;
	for (uint64_t b = 0; b < n && r == 0; b++) {
		unsigned count, flags, nlo = 0, nhi = 0;

		r = read_page(l->fd, bucket_at(b), l->page);
		if (r < 0)
			break;
		(void)bucket_decode(l->page, &count, &flags);
		for (unsigned i = 0; i < count; i++) {
			const uint8_t *key = l->page + 8 + (size_t)i * FILE_LEDGER_KEY_LEN;

			if (bucket_of(key, h.shift) == b)
				memcpy(lo + 8 + (size_t)nlo++ * FILE_LEDGER_KEY_LEN, key,
				       FILE_LEDGER_KEY_LEN);
			else
				memcpy(hi + 8 + (size_t)nhi++ * FILE_LEDGER_KEY_LEN, key,
				       FILE_LEDGER_KEY_LEN);
		}
		/* Empty, undamaged buckets stay holes. */
		if (nlo || flags) {
			bucket_seal(lo, nlo, flags);
			r = write_page(fd, bucket_at(b), lo);
		}
		if (r == 0 && (nhi || flags)) {
			bucket_seal(hi, nhi, flags);
			r = write_page(fd, bucket_at(b + n), hi);
		}
	}
	if (r == 0 && fdatasync(fd) < 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		close(fd);
		unlink(tmp);
		return r;
	}
	sync_dir(l->dir);
	close(l->fd);
	l->fd = fd;
	l->h = h;
	if (fstat(fd, &sb) == 0)
		l->ino = sb.st_ino;
	return 0;
}

/* Under the lock: one key.  *@verdict; *@wrote when a page changed. */
static int claim_one(struct file_ledger *l, const uint8_t key[FILE_LEDGER_KEY_LEN],
		     uint8_t *verdict, bool *wrote)
{
	for (;;) {
		const uint64_t b = bucket_of(key, l->h.shift);
		unsigned count, flags;
		int r = load_bucket(l, b, &count, &flags);

		if (r < 0)
			return r;
		if ((flags & BUCKET_DAMAGED) || bucket_has(l->page, count, key)) {
			*verdict = FILE_LEDGER_SEEN;
			return 0;
		}
		if (count < FILE_LEDGER_BUCKET_KEYS) {
			memcpy(l->page + 8 + (size_t)count * FILE_LEDGER_KEY_LEN, key,
			       FILE_LEDGER_KEY_LEN);
			bucket_seal(l->page, count + 1, flags);
			r = write_page(l->fd, bucket_at(b), l->page);
			if (r < 0)
				return r;
			*wrote = true;
			*verdict = FILE_LEDGER_CLAIMED;
			return 0;
		}
		if (l->h.shift >= l->max_shift) {
			*verdict = FILE_LEDGER_FULL;
			return 0;
		}
		/* The new table holds what was written so far (it is read
		 * back through the page cache) and is synced whole. */
		*wrote = false;
		r = grow(l);
		if (r < 0)
			return r;
	}
}

int file_ledger_claim(struct file_ledger *l, const uint8_t (*keys)[FILE_LEDGER_KEY_LEN],
		      size_t n, uint8_t *verdicts)
{
	bool wrote = false;
	int lock, r;

	if (n > MAX_CLAIM)
		return -EINVAL;
	lock = lock_dir(l->dir, false);
	if (lock < 0)
		return lock;
	r = follow_table(l);
	for (size_t i = 0; i < n && r == 0; i++)
		r = claim_one(l, keys[i], &verdicts[i], &wrote);
	if (wrote && fdatasync(l->fd) < 0 && r == 0)
		r = -errno;
	close(lock);
	return r;
}

int file_ledger_release(struct file_ledger *l, const uint8_t (*keys)[FILE_LEDGER_KEY_LEN],
			size_t n)
{
	bool wrote = false;
	int lock, r;

	lock = lock_dir(l->dir, false);
	if (lock < 0)
		return lock;
	r = follow_table(l);
	for (size_t i = 0; i < n && r == 0; i++) {
		const uint64_t b = bucket_of(keys[i], l->h.shift);
		unsigned count, flags;

		r = load_bucket(l, b, &count, &flags);
		for (unsigned k = 0; r == 0 && k < count; k++) {
			uint8_t *at = l->page + 8 + (size_t)k * FILE_LEDGER_KEY_LEN;

			if (memcmp(at, keys[i], FILE_LEDGER_KEY_LEN) != 0)
				continue;
			memmove(at, at + FILE_LEDGER_KEY_LEN,
				(size_t)(count - k - 1) * FILE_LEDGER_KEY_LEN);
			bucket_seal(l->page, count - 1, flags);
			r = write_page(l->fd, bucket_at(b), l->page);
			wrote = true;
			break;
		}
	}
	if (wrote && fdatasync(l->fd) < 0 && r == 0)
		r = -errno;
	close(lock);
	return r;
}

int file_ledger_chown(const char *dir, uid_t uid, gid_t gid)
{
	static const char *const names[] = { FILE_LEDGER_NAME, FILE_LEDGER_NAME ".lock" };
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
	return unit_dir_path(buf, len, "STATE_DIRECTORY", NULL, FILE_LEDGER_DEFAULT_DIR);
}
