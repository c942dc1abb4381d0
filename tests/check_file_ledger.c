// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the file ledger (file_ledger.h) and the file source read
 * through it: entries by (dev, ino) survive a reload of the ledger,
 * record() only moves an entry it expected, a ledger that is not one is
 * refused, the oldest entries go beyond the limit, a ledger from another
 * machine keeps its entries and its files that came with the image are
 * not read; the file source goes on where the ledger says, whatever path
 * names the file, and reads a changed file as new input.  Each test uses
 * its own directory under $TMPDIR.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
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

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

START_TEST(test_record_lookup)
{
	struct file_ledger_mark m = { .dev = 7, .ino = 42, .offset = 1000,
				      .hashed = 900 }, got = { 0 }, now = { 0 };

	make_dir();
	memset(m.hash, 0xab, sizeof(m.hash));
	ck_assert_int_eq(file_ledger_lookup(dir, 7, 42, &got, NULL), 0);
	ck_assert_int_eq(file_ledger_record(dir, &m, 0, NULL), 1);
	ck_assert_int_eq(file_ledger_lookup(dir, 7, 42, &got, NULL), 1);
	ck_assert(memcmp(&got, &m, sizeof(m)) == 0); /* check.h's mem macro trips scan-build */
	ck_assert_int_eq(file_ledger_lookup(dir, 7, 43, &got, NULL), 0);
	/* Only from where it was: another reader's stale mark is refused
	 * and told where the entry is. */
	m.offset = 500;
	m.hashed = 500;
	ck_assert_int_eq(file_ledger_record(dir, &m, 0, &now), 0);
	ck_assert_uint_eq(now.offset, 1000);
	ck_assert_int_eq(file_ledger_record(dir, &m, 1000, NULL), 1);
	ck_assert_int_eq(file_ledger_lookup(dir, 7, 42, &got, NULL), 1);
	ck_assert_uint_eq(got.offset, 500);
	/* hashed beyond offset is no mark. */
	m.hashed = 600;
	ck_assert_int_eq(file_ledger_record(dir, &m, 500, NULL), -EINVAL);
	remove_dir();
}
END_TEST

START_TEST(test_bad_ledger)
{
	char path[300];
	struct file_ledger_mark got;

	make_dir();
	path_of(path, sizeof(path), FILE_LEDGER_NAME);
	write_file(path, "not a ledger\n");
	ck_assert_int_eq(file_ledger_lookup(dir, 1, 2, &got, NULL), -EBADMSG);
	write_file(path, "rngfeed-file-ledger 1 machine=- since=0\n1 2 3\n");
	ck_assert_int_eq(file_ledger_lookup(dir, 1, 2, &got, NULL), -EBADMSG);
	remove_dir();
}
END_TEST

START_TEST(test_oldest_dropped)
{
	struct file_ledger_mark m = { .dev = 1 }, got;
	char path[300], line[200];
	FILE *f;

	make_dir();
	/* Written directly, with increasing TOUCHED times: inode 0 oldest. */
	path_of(path, sizeof(path), FILE_LEDGER_NAME);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "rngfeed-file-ledger 1 machine=- since=0\n");
	for (unsigned int i = 0; i < FILE_LEDGER_MAX_ENTRIES; i++) {
		snprintf(line, sizeof(line), "1 %u 10 10 %064d %u\n", i, 0,
			 1000 + i);
		fputs(line, f);
	}
	fclose(f);
	m.ino = 999999;
	m.offset = 5;
	ck_assert_int_eq(file_ledger_record(dir, &m, 0, NULL), 1);
	ck_assert_int_eq(file_ledger_lookup(dir, 1, 999999, &got, NULL), 1);
	ck_assert_int_eq(file_ledger_lookup(dir, 1, 0, &got, NULL), 0);
	ck_assert_int_eq(file_ledger_lookup(dir, 1, 1, &got, NULL), 1);
	remove_dir();
}
END_TEST

/* ---- the file source through the ledger -------------------------------- */

static struct source *open_file(const char *path, char *desc, size_t len)
{
	struct source_config cfg;
	struct source *src = NULL;
	char err[256];

	source_config_init(&cfg, source_driver_find("file"));
	ck_assert_int_eq(source_config_set(&cfg, "device", path, err,
					   sizeof(err)), 0);
	ck_assert_int_eq(source_config_set(&cfg, "credit", "512", err,
					   sizeof(err)), 0);
	cfg.ledger_dir = dir;
	ck_assert_int_eq(source_open(&src, &cfg, err, sizeof(err)), 0);
	if (desc)
		source_describe(src, desc, len);
	return src;
}

/* Read up to @want bytes; the count read. */
static size_t read_some(struct source *src, size_t want, char *buf)
{
	atomic_bool stop = false;
	ssize_t n = source_read(src, buf, want, &stop);

	ck_assert_int_ge(n, 0);
	return (size_t)n;
}

START_TEST(test_source_resumes_by_inode)
{
	char real[300], sym[300], hard[300], buf[64], desc[400];
	struct source *src;

	make_dir();
	path_of(real, sizeof(real), "seed");
	path_of(sym, sizeof(sym), "link");
	path_of(hard, sizeof(hard), "hard");
	write_file(real, "0123456789abcdefghijklmnopqrstuvwxyz");
	ck_assert_int_eq(symlink(real, sym), 0);
	ck_assert_int_eq(link(real, hard), 0);

	src = open_file(real, NULL, 0);
	ck_assert_uint_eq(read_some(src, 10, buf), 10);
	ck_assert_mem_eq(buf, "0123456789", 10);
	source_close(src); /* a reload */

	src = open_file(sym, NULL, 0);
	ck_assert_uint_eq(read_some(src, 6, buf), 6);
	ck_assert_mem_eq(buf, "abcdef", 6);
	source_describe(src, desc, sizeof(desc));
	ck_assert_msg(strstr(desc, "from byte 10 (the file ledger)"), "%s", desc);
	source_close(src);

	src = open_file(hard, NULL, 0);
	ck_assert_uint_eq(read_some(src, 64, buf), 20);
	ck_assert_mem_eq(buf, "ghijklmnopqrstuvwxyz", 20);
	ck_assert_uint_eq(read_some(src, 64, buf), 0);
	source_close(src);

	/* Read to its end: nothing more, by any name. */
	src = open_file(real, NULL, 0);
	ck_assert_uint_eq(read_some(src, 64, buf), 0);
	source_close(src);
	remove_dir();
}
END_TEST

/* The same file after its device number changed (a btrfs subvolume, a
 * network file system after a reboot): found by its inode and prefix. */
START_TEST(test_device_number_changed)
{
	char path[300], buf[64], ledger[300], line[300];
	struct source *src;
	struct stat sb;
	FILE *f;

	make_dir();
	path_of(path, sizeof(path), "seed");
	write_file(path, "0123456789abcdefghij");
	src = open_file(path, NULL, 0);
	ck_assert_uint_eq(read_some(src, 10, buf), 10);
	source_close(src);
	/* Rewrite the entry's device number. */
	ck_assert_int_eq(stat(path, &sb), 0);
	path_of(ledger, sizeof(ledger), FILE_LEDGER_NAME);
	f = fopen(ledger, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	fclose(f);
	{
		char *rest = strchr(line, ' ');
		char text[400];

		ck_assert_ptr_nonnull(rest);
		snprintf(text, sizeof(text),
			 "rngfeed-file-ledger 1 machine=- since=0\n%llu%s",
			 (unsigned long long)sb.st_dev + 1, rest);
		write_file(ledger, text);
	}
	src = open_file(path, NULL, 0);
	ck_assert_uint_eq(read_some(src, 64, buf), 10);
	ck_assert_mem_eq(buf, "abcdefghij", 10);
	source_close(src);
	src = open_file(path, NULL, 0);
	ck_assert_uint_eq(read_some(src, 64, buf), 0);
	source_close(src);
	remove_dir();
}
END_TEST

START_TEST(test_source_changed_is_new)
{
	char path[300], buf[64], desc[400];
	struct source *src;
	int fd;

	make_dir();
	path_of(path, sizeof(path), "seed");
	write_file(path, "AAAAAAAAAAAAAAAAAAAA");
	src = open_file(path, NULL, 0);
	ck_assert_uint_eq(read_some(src, 64, buf), 20);
	source_close(src);
	/* Rewritten in place: the same inode, other bytes. */
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "B", 1, 3), 1);
	close(fd);
	src = open_file(path, NULL, 0);
	ck_assert_uint_eq(read_some(src, 64, buf), 20);
	ck_assert_mem_eq(buf, "AAABAAAAAAAAAAAAAAAA", 20);
	source_describe(src, desc, sizeof(desc));
	ck_assert_msg(strstr(desc, "changed since the file ledger's record"),
		      "%s", desc);
	source_close(src);
	remove_dir();
}
END_TEST

/*
 * A reader that dies (no close) leaves its claim, up to 256 KiB ahead and
 * past the end of a small file: after it, nothing of the file is read
 * again, now or at the next open (the claim is not taken for a changed
 * file), and bytes appended later are read.
 */
START_TEST(test_crash_leaves_claim)
{
	char path[300], buf[64];
	struct source *src;
	pid_t pid;
	int status;

	make_dir();
	path_of(path, sizeof(path), "seed");
	write_file(path, "0123456789abcdefghij");
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		src = open_file(path, NULL, 0);
		if (read_some(src, 10, buf) != 10)
			_exit(1);
		raise(SIGKILL); /* a crash: no close, no exit handlers */
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	for (int i = 0; i < 2; i++) {
		src = open_file(path, NULL, 0);
		ck_assert_uint_eq(read_some(src, 64, buf), 0);
		source_close(src);
	}
	{
		FILE *f = fopen(path, "a");

		ck_assert_ptr_nonnull(f);
		fputs("KLMNO", f);
		fclose(f);
	}
	src = open_file(path, NULL, 0);
	ck_assert_uint_eq(read_some(src, 64, buf), 5);
	ck_assert_mem_eq(buf, "KLMNO", 5);
	source_close(src);
	remove_dir();
}
END_TEST

/* A ledger from another machine: what it lists stays read, and a file
 * that was there before it was adopted here (it came with the image) is
 * not read; one made after is. */
START_TEST(test_copied_image)
{
	char id_a[300], id_b[300], listed[300], baked[300], fresh[300];
	char buf[64], other[40];
	struct source *src;

	make_dir();
	path_of(id_a, sizeof(id_a), "machine-a");
	path_of(id_b, sizeof(id_b), "machine-b");
	write_file(id_a, "0123456789abcdef0123456789abcdef\n");
	write_file(id_b, "fedcba9876543210fedcba9876543210\n");
	path_of(listed, sizeof(listed), "listed");
	path_of(baked, sizeof(baked), "baked");
	path_of(fresh, sizeof(fresh), "fresh");
	write_file(listed, "listed-listed-listed");
	write_file(baked, "baked-baked-baked");

	ck_assert_int_eq(file_ledger_adopt(dir, id_a, other), 0);
	src = open_file(listed, NULL, 0);
	ck_assert_uint_eq(read_some(src, 64, buf), 20);
	source_close(src);
	ck_assert_int_eq(file_ledger_adopt(dir, id_a, other), 0);

	/* The clone boots: another machine id, later than the files. */
	sleep(2);
	ck_assert_int_eq(file_ledger_adopt(dir, id_b, other), 1);
	ck_assert_str_eq(other, "0123456789abcdef0123456789abcdef");
	ck_assert_int_eq(file_ledger_adopt(dir, id_b, other), 0);
	write_file(fresh, "fresh-fresh");

	src = open_file(listed, NULL, 0);
	ck_assert_uint_eq(read_some(src, 64, buf), 0);
	source_close(src);
	src = open_file(baked, NULL, 0);
	ck_assert_uint_eq(read_some(src, 64, buf), 0);
	source_close(src);
	src = open_file(fresh, NULL, 0);
	ck_assert_uint_eq(read_some(src, 64, buf), 11);
	source_close(src);
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

	tcase_add_test(tc, test_record_lookup);
	tcase_add_test(tc, test_bad_ledger);
	tcase_add_test(tc, test_oldest_dropped);
	tcase_add_test(tc, test_unit_directories);
	suite_add_tcase(s, tc);
	tc = tcase_create("source");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_source_resumes_by_inode);
	tcase_add_test(tc, test_source_changed_is_new);
	tcase_add_test(tc, test_crash_leaves_claim);
	tcase_add_test(tc, test_device_number_changed);
	tcase_add_test(tc, test_copied_image);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return td_run(file_ledger_suite()); }
