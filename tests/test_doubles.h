/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The test doubles and fixtures the unit tests share (issue 28), so that
 * each check_*.c holds only what it tests:
 *  - source drivers that read the kernel's random bytes (getrandom) and
 *    never touch hardware, and TD_DRIVER to declare one; opening a
 *    source that must open (td_source_open);
 *  - a directory per test run (td_run_suite makes and removes it around
 *    the suite) and per test (td_dir_make, td_tree_remove), and files in
 *    it (td_put, td_get): a fake sysfs, state files;
 *  - waiting for an event with a generous deadline (TD_WAIT_UNTIL): a
 *    test asserts what happens, never how fast a loaded machine is;
 *  - main()'s suite and runner (td_suite, td_run): one test case built
 *    from a list, the exit status from the failures;
 *  - the fixed-seed generator of synthetic data and a full read
 *    (td_util.h, which the helper programs share).
 * Header-only (static inline): each check program is one .c file.
 */
#ifndef RNGFEED_TEST_DOUBLES_H
#define RNGFEED_TEST_DOUBLES_H

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/source.h"
#include "td_util.h"

/* ---- source drivers ------------------------------------------------------ */

static inline int td_probe(const struct source_config *cfg, char *why,
			   size_t len)
{
	(void)cfg;
	(void)why;
	(void)len;
	return 0;
}

static inline int td_open(const struct source_config *cfg, void **state,
			  char *why, size_t len)
{
	(void)cfg;
	(void)why;
	(void)len;
	*state = malloc(1);
	return *state ? 0 : -ENOMEM;
}

static inline ssize_t td_read(void *state, void *buf, size_t len)
{
	ssize_t n;

	(void)state;
	n = getrandom(buf, len, 0);
	return n < 0 ? -errno : n;
}

static inline ssize_t td_read_fails(void *state, void *buf, size_t len)
{
	(void)state;
	(void)buf;
	(void)len;
	return -EIO;
}

static inline void td_close(void *state)
{
	free(state);
}

/* The source @cfg configures, opened: the test fails, saying why, if it
 * cannot be. */
static inline struct source *td_source_open(const struct source_config *cfg)
{
	struct source *src = NULL;
	char why[SOURCE_WHY_LEN] = "";
	int r = source_open(&src, cfg, why, sizeof(why));

	ck_assert_msg(r == 0, "%s: open: %d %s", cfg->driver->name, r, why);
	return src;
}

/* A driver named @id, 8-bit samples at H 6 (a credit cap of 768/1024),
 * with these probe, open and read; more fields after them. */
#define TD_DRIVER(id, credit, probef, openf, readf, ...)                    \
	static const struct source_driver id = {                            \
		.name = #id, .description = "test double",                  \
		.default_credit = credit, .sample_bits = 8,                 \
		.min_entropy = 6.0, .probe = probef, .open = openf,         \
		.read = readf, .close = td_close, __VA_ARGS__               \
	}

/* ---- directories and files ----------------------------------------------- */

static inline int td_rm_entry(const char *p, const struct stat *sb, int flag,
			      struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/* Remove @path and everything below it. */
static inline void td_tree_remove(const char *path)
{
	nftw(path, td_rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/*
 * One directory for the whole run, made by main() before the tests and
 * removed by it after them (td_tree_remove): a test that fails ends its
 * process before its teardown runs.  @base: at least 64 bytes.
 */
static inline bool td_base_make(char *base, size_t len, const char *name)
{
	snprintf(base, len, "/tmp/rngfeed-check-%s-XXXXXX", name);
	return mkdtemp(base) != NULL;
}

/* ---- main() -------------------------------------------------------------- */

/* A list of tests for td_suite(): TD_TESTS(test_a, test_b). */
#define TD_TESTS(...) ((const TTest *const[]){ __VA_ARGS__, NULL })

/*
 * A suite @name of one test case @tcname: the NULL-ended @tests, each
 * with the checked fixture @setup/@teardown (either may be NULL) and a
 * timeout of @timeout s (0: Check's default, or CK_DEFAULT_TIMEOUT).
 */
static inline Suite *td_suite(const char *name, const char *tcname,
			      SFun setup, SFun teardown, double timeout,
			      const TTest *const *tests)
{
	Suite *s = suite_create(name);
	TCase *tc = tcase_create(tcname);

	if (setup || teardown)
		tcase_add_checked_fixture(tc, setup, teardown);
	if (timeout > 0)
		tcase_set_timeout(tc, timeout);
	for (; *tests; tests++)
		tcase_add_test(tc, *tests);
	suite_add_tcase(s, tc);
	return s;
}

/* main()'s end: suite @s run.  Returns main()'s exit status. */
static inline int td_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* main()'s end with a run directory: made in @base, suite @s run, the
 * directory removed.  Returns main()'s exit status. */
static inline int td_run_suite(Suite *s, char *base, size_t len,
			       const char *name)
{
	int status;

	if (!td_base_make(base, len, name))
		return EXIT_FAILURE;
	status = td_run(s);
	td_tree_remove(base);
	return status;
}

/* A fresh directory /tmp/rngfeed-@name-XXXXXX for one test (its setup);
 * td_tree_remove() in its teardown. */
static inline void td_tmpdir(char *dir, size_t len, const char *name)
{
	snprintf(dir, len, "/tmp/rngfeed-%s-XXXXXX", name);
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* A fresh directory below @base for one test (its setup). */
static inline void td_dir_make(char *dir, size_t len, const char *base)
{
	snprintf(dir, len, "%s/tXXXXXX", base);
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* Write @text to @dir/@file (a fake sysfs attribute, a state file). */
static inline void td_put(const char *dir, const char *file, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* The contents of @path in @buf ("" when it cannot be read). */
static inline const char *td_slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	buf[0] = '\0';
	if (!f)
		return buf;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The contents of @dir/@file in @buf ("" when it cannot be read). */
static inline const char *td_get(const char *dir, const char *file,
				 char *buf, size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return td_slurp(path, buf, len);
}

/* ---- waiting for events -------------------------------------------------- */

/* How long a wait may take before the test fails: generous, so that a
 * loaded machine, valgrind or emulation only makes it slower. */
#define TD_DEADLINE_S 60.0

static inline double td_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void td_nap(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

/* True as soon as @cond holds, false if it still does not after
 * TD_DEADLINE_S; @cond is evaluated every 10 ms. */
#define TD_WAIT_UNTIL(cond)                                                 \
	({                                                                  \
		double td_end_ = td_now() + TD_DEADLINE_S;                  \
		bool td_ok_;                                                \
		while (!(td_ok_ = (cond)) && td_now() < td_end_)            \
			td_nap();                                           \
		td_ok_;                                                     \
	})

#endif
