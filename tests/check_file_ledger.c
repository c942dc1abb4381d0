// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the file ledger (file_ledger.h) and the file source read
 * through it (issue 33: content, not names):
 *  - a key is claimed once: again it is seen, also from another handle
 *    and after a reopen; released, it can be claimed again;
 *  - the table doubles when a bucket fills (every key kept, a handle
 *    opened before follows it), and at its size limit says full without
 *    recording;
 *  - damage: a bucket whose checksum fails holds every key (never
 *    claimed), a header that is not this version's or a table cut short
 *    is refused;
 *  - the file source: a file read through one path is not read again
 *    through a symlink, a hard link or a copy; an edit of one byte reads
 *    one block, a cut and a new tail read the new blocks; a reader killed
 *    mid-file leaves its claims (nothing read twice); a ledger of the
 *    earlier kind counts what it lists as read; a ledger from another
 *    machine keeps what it lists and its image's files are not read;
 *  - two readers at once on one content take turns: each block once.
 * Each test uses its own directory under $TMPDIR.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rngfeed/file_ledger.h"
#include "rngfeed/hwrng_gate.h"
#include "rngfeed/hwrng_record.h"
#include "rngfeed/source.h"
#include "test_doubles.h"

#define B FILE_LEDGER_BLOCK

static char dir[256];

static void make_dir(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/check_file_ledger.XXXXXX", t ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void write_bytes(const char *path, const void *data, size_t len, const char *mode)
{
	FILE *f = fopen(path, mode);

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

static void write_file(const char *path, const char *text)
{
	write_bytes(path, text, strlen(text), "w");
}

/* @n bytes of a fixed-seed stream: no two blocks alike. */
static uint8_t *stream(uint64_t seed, size_t n)
{
	uint8_t *p = malloc(n);

	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(td_xorshift64(&seed) >> 56);
	return p;
}

static void key_of(uint64_t i, uint8_t key[FILE_LEDGER_KEY_LEN])
{
	ck_assert_int_eq(file_ledger_key(&i, sizeof(i), key), 0);
}

/* ---- the ledger ------------------------------------------------------------ */

START_TEST(test_claim_release)
{
	uint8_t keys[4][FILE_LEDGER_KEY_LEN], v[4];
	struct file_ledger *a, *b;

	make_dir();
	for (uint64_t i = 0; i < 3; i++)
		key_of(i, keys[i]);
	memcpy(keys[3], keys[0], FILE_LEDGER_KEY_LEN); /* twice in one claim */
	ck_assert_int_eq(file_ledger_open(dir, FILE_LEDGER_MAX_SHIFT, &a), 0);
	ck_assert_int_eq(file_ledger_open(dir, FILE_LEDGER_MAX_SHIFT, &b), 0);
	ck_assert_int_eq(file_ledger_claim(a, (const uint8_t(*)[16])keys, 4, v), 0);
	ck_assert_int_eq(v[0], FILE_LEDGER_CLAIMED);
	ck_assert_int_eq(v[1], FILE_LEDGER_CLAIMED);
	ck_assert_int_eq(v[2], FILE_LEDGER_CLAIMED);
	ck_assert_int_eq(v[3], FILE_LEDGER_SEEN);
	/* Another handle (another reader or instance) sees them. */
	ck_assert_int_eq(file_ledger_claim(b, (const uint8_t(*)[16])keys, 3, v), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(v[i], FILE_LEDGER_SEEN);
	/* Given back, one can be claimed again, once. */
	ck_assert_int_eq(file_ledger_release(a, (const uint8_t(*)[16])keys + 1, 1), 0);
	ck_assert_int_eq(file_ledger_claim(b, (const uint8_t(*)[16])keys, 3, v), 0);
	ck_assert_int_eq(v[0], FILE_LEDGER_SEEN);
	ck_assert_int_eq(v[1], FILE_LEDGER_CLAIMED);
	ck_assert_int_eq(v[2], FILE_LEDGER_SEEN);
	file_ledger_close(a);
	file_ledger_close(b);
	/* Kept on disk. */
	ck_assert_int_eq(file_ledger_open(dir, FILE_LEDGER_MAX_SHIFT, &a), 0);
	ck_assert_int_eq(file_ledger_claim(a, (const uint8_t(*)[16])keys, 3, v), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(v[i], FILE_LEDGER_SEEN);
	file_ledger_close(a);
	remove_dir();
}
END_TEST

/* Claim keys [from, to) in batches; count each verdict. */
static void claim_range(struct file_ledger *l, uint64_t from, uint64_t to, unsigned counts[3])
{
	static uint8_t keys[1000][FILE_LEDGER_KEY_LEN];
	uint8_t v[1000];

	for (uint64_t i = from; i < to;) {
		size_t n = 0;

		for (; n < 1000 && i < to; n++, i++)
			key_of(i, keys[n]);
		ck_assert_int_eq(file_ledger_claim(l, (const uint8_t(*)[16])keys, n, v), 0);
		for (size_t k = 0; k < n; k++)
			counts[v[k]]++;
	}
}

START_TEST(test_grow_and_full)
{
	char table[300];
	struct file_ledger *a, *b;
	struct stat sb;
	unsigned c[3] = { 0 };

	make_dir();
	path_of(table, sizeof(table), FILE_LEDGER_NAME);
	ck_assert_int_eq(file_ledger_open(dir, 8, &a), 0);
	ck_assert_int_eq(file_ledger_open(dir, 8, &b), 0);
	ck_assert_int_eq(stat(table, &sb), 0);
	ck_assert_int_eq(sb.st_size, FILE_LEDGER_BUCKET_BYTES * (1 + (1u << FILE_LEDGER_INITIAL_SHIFT)));
	/* 16 buckets of 255: 10,000 keys need at least two doublings. */
	claim_range(a, 0, 10000, c);
	ck_assert_uint_eq(c[FILE_LEDGER_CLAIMED], 10000);
	ck_assert_int_eq(stat(table, &sb), 0);
	ck_assert_int_ge(sb.st_size, FILE_LEDGER_BUCKET_BYTES * (1 + 64));
	/* b was opened before: it follows the new table. */
	memset(c, 0, sizeof(c));
	claim_range(b, 0, 10000, c);
	ck_assert_uint_eq(c[FILE_LEDGER_SEEN], 10000);
	file_ledger_close(b);
	/* At 2^8 buckets (65,280 keys at most): full before 70,000, and a
	 * key it could not hold is not recorded. */
	memset(c, 0, sizeof(c));
	claim_range(a, 10000, 70000, c);
	ck_assert_uint_gt(c[FILE_LEDGER_FULL], 0);
	ck_assert_uint_eq(c[FILE_LEDGER_SEEN], 0);
	ck_assert_int_eq(stat(table, &sb), 0);
	ck_assert_int_eq(sb.st_size, FILE_LEDGER_BUCKET_BYTES * (1 + 256));
	{
		unsigned again[3] = { 0 };

		claim_range(a, 10000, 70000, again);
		ck_assert_uint_eq(again[FILE_LEDGER_FULL], c[FILE_LEDGER_FULL]);
		ck_assert_uint_eq(again[FILE_LEDGER_SEEN], c[FILE_LEDGER_CLAIMED]);
	}
	file_ledger_close(a);
	remove_dir();
}
END_TEST

START_TEST(test_damage)
{
	char table[300];
	uint8_t keys[64][FILE_LEDGER_KEY_LEN], v[64], junk[FILE_LEDGER_BUCKET_BYTES];
	struct file_ledger *a;
	unsigned claimed = 0, seen = 0;
	int fd;

	make_dir();
	path_of(table, sizeof(table), FILE_LEDGER_NAME);
	ck_assert_int_eq(file_ledger_open(dir, FILE_LEDGER_MAX_SHIFT, &a), 0);
	for (uint64_t i = 0; i < 64; i++)
		key_of(i, keys[i]);
	ck_assert_int_eq(file_ledger_claim(a, (const uint8_t(*)[16])keys, 32, v), 0);
	/* Bucket 0 overwritten (a torn write, a stray program). */
	memset(junk, 0x5a, sizeof(junk));
	fd = open(table, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, junk, sizeof(junk), FILE_LEDGER_BUCKET_BYTES),
			 (ssize_t)sizeof(junk));
	close(fd);
	/* Its keys, read or not, are never claimed again; the others are
	 * as they were. */
	ck_assert_int_eq(file_ledger_claim(a, (const uint8_t(*)[16])keys, 64, v), 0);
	for (unsigned i = 0; i < 64; i++) {
		const unsigned bucket = keys[i][0] & 15u;

		if (bucket == 0)
			ck_assert_int_eq(v[i], FILE_LEDGER_SEEN);
		else
			ck_assert_int_eq(v[i], i < 32 ? FILE_LEDGER_SEEN : FILE_LEDGER_CLAIMED);
		claimed += v[i] == FILE_LEDGER_CLAIMED;
		seen += v[i] == FILE_LEDGER_SEEN;
	}
	ck_assert_uint_gt(seen, 32); /* bucket 0 held some of the new ones */
	ck_assert_uint_gt(claimed, 0);
	file_ledger_close(a);

	/* A table cut short: refused. */
	ck_assert_int_eq(truncate(table, FILE_LEDGER_BUCKET_BYTES * 5), 0);
	ck_assert_int_eq(file_ledger_open(dir, FILE_LEDGER_MAX_SHIFT, &a), -EBADMSG);
	/* Not a ledger at all (another program's file): refused, kept. */
	write_file(table, "rngfeed-file-ledger 1 machine=- since=0\n");
	ck_assert_int_eq(file_ledger_open(dir, FILE_LEDGER_MAX_SHIFT, &a), -EBADMSG);
	ck_assert_int_eq(file_ledger_adopt(dir, "/nonexistent", NULL), -EBADMSG);
	{
		struct stat sb;

		ck_assert_int_eq(stat(table, &sb), 0);
		ck_assert_int_eq(sb.st_size, 40);
	}
	remove_dir();
}
END_TEST

/* ---- the file source through the ledger -------------------------------- */

static struct source *open_file(const char *path)
{
	struct source_config cfg;
	struct source *src = NULL;
	char err[256];

	source_config_init(&cfg, source_driver_find("file"));
	ck_assert_int_eq(source_config_set(&cfg, "device", path, err, sizeof(err)), 0);
	ck_assert_int_eq(source_config_set(&cfg, "credit", "512", err, sizeof(err)), 0);
	cfg.ledger_dir = dir;
	ck_assert_int_eq(source_open(&src, &cfg, err, sizeof(err)), 0);
	return src;
}

/* Read @path through the ledger to its end (or @max blocks), as the
 * reader does: the whole blocks read, each checked to be the file's block
 * at some offset of @data (NULL: not checked). */
static unsigned read_blocks(const char *path, const uint8_t *data, size_t size, unsigned max,
			    char *desc, size_t desc_len)
{
	struct source *src = open_file(path);
	atomic_bool stop = false;
	uint8_t buf[B];
	unsigned n = 0;

	while (n < max) {
		ssize_t got = source_read(src, buf, B, &stop);

		ck_assert_int_ge(got, 0);
		if (got < (ssize_t)B)
			break;
		if (data) {
			bool found = false;

			for (size_t at = 0; !found && at + B <= size; at += B)
				found = memcmp(data + at, buf, B) == 0;
			ck_assert_msg(found, "block %u is not one of the file's", n);
		}
		n++;
	}
	if (desc)
		source_describe(src, desc, desc_len);
	source_close(src);
	return n;
}

START_TEST(test_paths_and_copies)
{
	char real[300], sym[300], hard[300], copy[300], desc[400];
	uint8_t *data = stream(1, 10 * B + 123);

	make_dir();
	path_of(real, sizeof(real), "seed");
	path_of(sym, sizeof(sym), "link");
	path_of(hard, sizeof(hard), "hard");
	path_of(copy, sizeof(copy), "copy");
	write_bytes(real, data, 10 * B + 123, "w");
	write_bytes(copy, data, 10 * B + 123, "w");
	ck_assert_int_eq(symlink(real, sym), 0);
	ck_assert_int_eq(link(real, hard), 0);

	ck_assert_uint_eq(read_blocks(real, data, 10 * B, 4, NULL, 0), 4);
	/* The rest, through another name; then nothing by any name. */
	ck_assert_uint_eq(read_blocks(sym, data, 10 * B, 100, desc, sizeof(desc)), 6);
	ck_assert_msg(strstr(desc, "4 blocks read before skipped"), "%s", desc);
	ck_assert_uint_eq(read_blocks(hard, NULL, 0, 100, NULL, 0), 0);
	ck_assert_uint_eq(read_blocks(real, NULL, 0, 100, NULL, 0), 0);
	ck_assert_uint_eq(read_blocks(copy, NULL, 0, 100, desc, sizeof(desc)), 0);
	ck_assert_msg(strstr(desc, "10 blocks read before skipped"), "%s", desc);
	/* Appended to a whole block: the new block only (the old part-block
	 * was never used). */
	write_bytes(real, data, B, "a");
	ck_assert_uint_eq(read_blocks(real, NULL, 0, 100, NULL, 0), 1);
	free(data);
	remove_dir();
}
END_TEST

START_TEST(test_edits)
{
	char path[300];
	uint8_t *data = stream(2, 20 * B), *tail = stream(3, 5 * B);
	int fd;

	make_dir();
	path_of(path, sizeof(path), "seed");
	write_bytes(path, data, 20 * B, "w");
	ck_assert_uint_eq(read_blocks(path, data, 20 * B, 100, NULL, 0), 20);
	/* One byte changed in place: one block. */
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "X", 1, 7 * B + 11), 1);
	close(fd);
	data[7 * B + 11] = 'X';
	ck_assert_uint_eq(read_blocks(path, data, 20 * B, 100, NULL, 0), 1);
	/* Cut in the middle of block 12, a new tail of 5 blocks: the block
	 * at the cut and the new ones after it (12 .. 16; 17 is a part). */
	ck_assert_int_eq(truncate(path, 12 * B + 100), 0);
	write_bytes(path, tail, 5 * B, "a");
	ck_assert_uint_eq(read_blocks(path, NULL, 0, 100, NULL, 0), 5);
	/* The old content of those blocks, back (a restored backup): read
	 * before, nothing. */
	write_bytes(path, data, 20 * B, "w");
	ck_assert_uint_eq(read_blocks(path, NULL, 0, 100, NULL, 0), 0);
	free(data);
	free(tail);
	remove_dir();
}
END_TEST

/*
 * A reader that dies (no close) leaves its claims (a window of up to
 * 128 blocks ahead): nothing it claimed is read again, now or later; what
 * was beyond its window is.
 */
START_TEST(test_crash_leaves_claim)
{
	char path[300];
	uint8_t *data = stream(4, 200 * B);
	pid_t pid;
	int status;

	make_dir();
	path_of(path, sizeof(path), "seed");
	write_bytes(path, data, 200 * B, "w");
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct source *src = open_file(path);
		atomic_bool stop = false;
		uint8_t buf[B];

		if (source_read(src, buf, B, &stop) != B)
			_exit(1);
		raise(SIGKILL); /* a crash: no close, no exit handlers */
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	ck_assert_uint_eq(read_blocks(path, data, 200 * B, 1000, NULL, 0), 200 - 128);
	ck_assert_uint_eq(read_blocks(path, NULL, 0, 1000, NULL, 0), 0);
	free(data);
	remove_dir();
}
END_TEST

/* A reader that stops (closes) gives its unread claims back. */
START_TEST(test_stop_gives_back)
{
	char path[300];
	uint8_t *data = stream(5, 50 * B);

	make_dir();
	path_of(path, sizeof(path), "seed");
	write_bytes(path, data, 50 * B, "w");
	ck_assert_uint_eq(read_blocks(path, data, 50 * B, 3, NULL, 0), 3);
	ck_assert_uint_eq(read_blocks(path, data, 50 * B, 1000, NULL, 0), 47);
	free(data);
	remove_dir();
}
END_TEST

/* A ledger of the earlier kind (device, inode, how far read): the blocks
 * it lists as read are recorded, not read, whatever name shows them
 * next. */
START_TEST(test_legacy_ledger)
{
	char path[300], copy[300], legacy[300], text[300];
	uint8_t *data = stream(6, 10 * B);
	struct stat sb;

	make_dir();
	path_of(path, sizeof(path), "seed");
	path_of(copy, sizeof(copy), "copy");
	path_of(legacy, sizeof(legacy), FILE_LEDGER_LEGACY_NAME);
	write_bytes(path, data, 10 * B, "w");
	write_bytes(copy, data, 10 * B, "w");
	ck_assert_int_eq(stat(path, &sb), 0);
	snprintf(text, sizeof(text),
		 "rngfeed-file-ledger 1 machine=- since=0\n"
		 "%llu %llu %u 0 %064u 1\n",
		 (unsigned long long)sb.st_dev + 7, (unsigned long long)sb.st_ino, 4u * B + 10, 0u);
	write_file(legacy, text);
	ck_assert_uint_eq(read_blocks(path, data, 10 * B, 100, NULL, 0), 6);
	ck_assert_uint_eq(read_blocks(copy, NULL, 0, 100, NULL, 0), 0);
	/* One that is not readable: nothing credited (refused). */
	write_file(legacy, "rngfeed-file-ledger 1 machine=- since=0\ngarbage\n");
	{
		uint64_t off;

		ck_assert_int_eq(file_ledger_legacy_offset(dir, sb.st_dev, sb.st_ino, &off), -EBADMSG);
	}
	free(data);
	remove_dir();
}
END_TEST

/* A ledger from another machine: what it lists stays read, and a file
 * that was there before it was adopted here (it came with the image) is
 * not read; one made after is. */
START_TEST(test_copied_image)
{
	char id_a[300], id_b[300], listed[300], baked[300], fresh[300], desc[400];
	char other[40];
	uint8_t *a = stream(7, 4 * B), *b = stream(8, 4 * B), *c = stream(9, 4 * B);

	make_dir();
	path_of(id_a, sizeof(id_a), "machine-a");
	path_of(id_b, sizeof(id_b), "machine-b");
	write_file(id_a, "0123456789abcdef0123456789abcdef\n");
	write_file(id_b, "fedcba9876543210fedcba9876543210\n");
	path_of(listed, sizeof(listed), "listed");
	path_of(baked, sizeof(baked), "baked");
	path_of(fresh, sizeof(fresh), "fresh");
	write_bytes(listed, a, 4 * B, "w");
	write_bytes(baked, b, 4 * B, "w");

	ck_assert_int_eq(file_ledger_adopt(dir, id_a, other), 0);
	ck_assert_uint_eq(read_blocks(listed, a, 4 * B, 100, NULL, 0), 4);
	ck_assert_int_eq(file_ledger_adopt(dir, id_a, other), 0);

	/* The clone boots: another machine id, later than the files. */
	sleep(2);
	ck_assert_int_eq(file_ledger_adopt(dir, id_b, other), 1);
	ck_assert_str_eq(other, "0123456789abcdef0123456789abcdef");
	ck_assert_int_eq(file_ledger_adopt(dir, id_b, other), 0);
	write_bytes(fresh, c, 4 * B, "w");

	ck_assert_uint_eq(read_blocks(listed, NULL, 0, 100, NULL, 0), 0);
	ck_assert_uint_eq(read_blocks(baked, NULL, 0, 100, desc, sizeof(desc)), 0);
	ck_assert_msg(strstr(desc, "came with a copied image"), "%s", desc);
	ck_assert_uint_eq(read_blocks(fresh, c, 4 * B, 100, NULL, 0), 4);
	free(a);
	free(b);
	free(c);
	remove_dir();
}
END_TEST

/* Two readers at once (two threads, two handles: as two instances) on
 * one content through two names: every block read once in all. */
struct racer {
	char path[300];
	const uint8_t *data;
	unsigned got;
};

static void *race(void *arg)
{
	struct racer *r = arg;

	r->got = read_blocks(r->path, r->data, 600 * B, 100000, NULL, 0);
	return NULL;
}

START_TEST(test_two_readers)
{
	uint8_t *data = stream(10, 600 * B);
	struct racer x = { .data = data }, y = { .data = data };
	pthread_t tx, ty;

	make_dir();
	path_of(x.path, sizeof(x.path), "one");
	path_of(y.path, sizeof(y.path), "two");
	write_bytes(x.path, data, 600 * B, "w");
	write_bytes(y.path, data, 600 * B, "w");
	ck_assert_int_eq(pthread_create(&tx, NULL, race, &x), 0);
	ck_assert_int_eq(pthread_create(&ty, NULL, race, &y), 0);
	pthread_join(tx, NULL);
	pthread_join(ty, NULL);
	ck_assert_uint_eq(x.got + y.got, 600);
	free(data);
	remove_dir();
}
END_TEST

/* The ledger's directory and the hand-over record follow systemd's
 * STATE_DIRECTORY and RUNTIME_DIRECTORY alike: the first entry of the
 * list when it is absolute, else the compiled-in place. */
START_TEST(test_unit_directories)
{
	static const struct {
		const char *value, *ledger, *record;
	} cases[] = {
		{ "/st:/other", "/st", "/st/hwrng-quality" },
		{ "/st", "/st", "/st/hwrng-quality" },
		{ "relative", FILE_LEDGER_DEFAULT_DIR, HWRNG_GATE_STATE_PATH },
		{ "", FILE_LEDGER_DEFAULT_DIR, HWRNG_GATE_STATE_PATH },
		{ ":/second", FILE_LEDGER_DEFAULT_DIR, HWRNG_GATE_STATE_PATH },
		{ NULL, FILE_LEDGER_DEFAULT_DIR, HWRNG_GATE_STATE_PATH },
	};
	char *saved_state = getenv("STATE_DIRECTORY"), *saved_run = getenv("RUNTIME_DIRECTORY");
	char buf[256], tiny[8];

	saved_state = saved_state ? strdup(saved_state) : NULL;
	saved_run = saved_run ? strdup(saved_run) : NULL;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].value) {
			setenv("STATE_DIRECTORY", cases[i].value, 1);
			setenv("RUNTIME_DIRECTORY", cases[i].value, 1);
		} else {
			unsetenv("STATE_DIRECTORY");
			unsetenv("RUNTIME_DIRECTORY");
		}
		ck_assert_str_eq(file_ledger_default_dir(buf, sizeof(buf)), cases[i].ledger);
		ck_assert_str_eq(hwrng_record_path(buf, sizeof(buf)), cases[i].record);
	}
	/* Too long for the buffer: the fallback (cut to fit), not a cut path. */
	setenv("RUNTIME_DIRECTORY", "/a-long-runtime-directory", 1);
	ck_assert_int_eq(strncmp(hwrng_record_path(tiny, sizeof(tiny)),
				 HWRNG_GATE_STATE_PATH, sizeof(tiny) - 1), 0);
	if (saved_state)
		setenv("STATE_DIRECTORY", saved_state, 1);
	else
		unsetenv("STATE_DIRECTORY");
	if (saved_run)
		setenv("RUNTIME_DIRECTORY", saved_run, 1);
	else
		unsetenv("RUNTIME_DIRECTORY");
	free(saved_state);
	free(saved_run);
}
END_TEST

static Suite *file_ledger_suite(void)
{
	Suite *s = suite_create("file_ledger");
	TCase *tc = tcase_create("ledger");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_claim_release);
	tcase_add_test(tc, test_grow_and_full);
	tcase_add_test(tc, test_damage);
	tcase_add_test(tc, test_unit_directories);
	suite_add_tcase(s, tc);
	tc = tcase_create("source");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_paths_and_copies);
	tcase_add_test(tc, test_edits);
	tcase_add_test(tc, test_crash_leaves_claim);
	tcase_add_test(tc, test_stop_gives_back);
	tcase_add_test(tc, test_legacy_ledger);
	tcase_add_test(tc, test_copied_image);
	tcase_add_test(tc, test_two_readers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return td_run(file_ledger_suite()); }
