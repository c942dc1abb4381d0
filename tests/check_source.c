// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for src/source.c and the file and hwrng drivers: the driver
 * table, per-source options, the refusal of the kernel's own output, and
 * the source_read() loop — driven by a scripted fake driver for the error
 * paths (short reads, EINTR, EAGAIN, EOF, EIO) and by the real file driver
 * on a FIFO and a regular file.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <sys/sysmacros.h>

#include "rngfeed/hwrandom.h"
#include "rngfeed/monitor.h"
#include "rngfeed/source.h"
#include "rngfeed/sources.h"
#include "test_doubles.h"

/* ---- helpers -------------------------------------------------------------- */

/* One temporary directory per test case, made and removed in the parent
 * (unchecked fixture), so a failing test does not leave it behind. */
static char tmpdir[64];

static void tmpdir_setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_source.XXXXXX");
	if (!mkdtemp(tmpdir))
		abort();
}

static void tmpdir_teardown(void)
{
	td_tree_remove(tmpdir);
}

/* A path inside the test case's temporary directory. */
static const char *tmp_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
	return buf;
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* Bytes that differ at every offset, so a misplaced or repeated chunk
 * shows up in a comparison. */
static void fill_pattern(unsigned char *buf, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 131u + seed + (i >> 8));
}

static bool all_bytes(const unsigned char *buf, size_t len, unsigned char b)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != b)
			return false;
	return true;
}

/* A config for the named real driver with one option set (or none). */
static void config_for(struct source_config *cfg, const char *driver,
		       const char *key, const char *value)
{
	char err[512] = "";
	const struct source_driver *drv = source_driver_find(driver);

	ck_assert_ptr_nonnull(drv);
	source_config_init(cfg, drv);
	if (key)
		ck_assert_msg(source_config_set(cfg, key, value, err,
						sizeof(err)) == 0,
			      "%s:%s=%s refused: %s", driver, key, value, err);
}

/* Bypasses source_config_set()'s checks, to test that open() checks on
 * its own (defence in depth against a path that changes after parsing). */
static void config_force_device(struct source_config *cfg,
				const char *driver, const char *path)
{
	config_for(cfg, driver, NULL, NULL);
	/* The packed "key\0value\0" text source_config_set() writes. */
	memcpy(cfg->options, "device", sizeof("device"));
	snprintf(cfg->options + sizeof("device"),
		 sizeof(cfg->options) - sizeof("device"), "%s", path);
	cfg->n_options = 1;
}

/* source_config_set() that must fail with @want, and name @culprit. */
static void expect_set_fails(struct source_config *cfg, const char *key,
			     const char *value, int want, const char *culprit)
{
	char err[512] = "";
	int r = source_config_set(cfg, key, value, err, sizeof(err));

	ck_assert_msg(r == want, "%s=%s: got %d, want %d (%s)", key, value, r,
		      want, err);
	ck_assert_msg(err[0] != '\0', "%s=%s: no message", key, value);
	ck_assert_msg(strstr(err, culprit), "%s=%s: message '%s' lacks '%s'",
		      key, value, err, culprit);
	ck_assert_msg(!strchr(err, '\n'), "message is not one line: '%s'",
		      err);
}

/* source_open() that must fail with @want, with a reason naming @word. */
static void expect_open_fails(const struct source_config *cfg, int want,
			      const char *word)
{
	struct source *src = NULL;
	char why[SOURCE_WHY_LEN] = "";
	int r = source_open(&src, cfg, why, sizeof(why));

	ck_assert_msg(r == want, "open: got %d (%s), want %d (%s)", r,
		      strerror(r < 0 ? -r : 0), want, strerror(-want));
	ck_assert_ptr_null(src);
	ck_assert_msg(strstr(why, word), "why '%s' lacks '%s'", why, word);
}

/* ---- the driver table ------------------------------------------------------ */

START_TEST(test_table_shape)
{
	size_t n = source_driver_count();

	/* At least the four drivers of the foundation; later issues add
	 * more, and each must meet the same rules. */
	ck_assert_uint_ge(n, 4);
	ck_assert_ptr_null(source_drivers[n]);
	for (size_t i = 0; i < n; i++) {
		const struct source_driver *d = source_drivers[i];

		ck_assert_ptr_nonnull(d->name);
		ck_assert_msg(d->name[0], "driver %zu has an empty name", i);
		ck_assert_ptr_nonnull(d->description);
		ck_assert_ptr_nonnull(d->credit_reason);
		ck_assert_msg(d->probe && d->open && d->read && d->close,
			      "%s lacks an operation", d->name);
		ck_assert_uint_le(d->default_credit, SOURCE_CREDIT_MAX);
		ck_assert_uint_gt(d->sample_bits, 0);
		/* The health tests' cutoffs follow from H per sample. */
		ck_assert_msg(d->min_entropy > 0 &&
				      d->min_entropy <= d->sample_bits,
			      "%s: min_entropy %g not in (0, %u]", d->name,
			      d->min_entropy, d->sample_bits);
		/* A device driver either has a default path or needs one. */
		if (d->flags & SOURCE_F_NEEDS_DEVICE)
			ck_assert(d->flags & SOURCE_F_DEVICE);
		if ((d->flags & SOURCE_F_DEVICE) &&
		    !(d->flags & SOURCE_F_NEEDS_DEVICE))
			ck_assert_ptr_nonnull(d->default_device);
		for (size_t j = 0; j < i; j++)
			ck_assert_msg(strcmp(d->name, source_drivers[j]->name),
				      "driver name '%s' is not unique",
				      d->name);
		ck_assert_int_eq(source_driver_index(d), (int)i);
	}
}
END_TEST

START_TEST(test_table_find)
{
	static const char *const names[] = { "hwrng", "rdseed", "rdrand",
					      "file" };

	for (size_t i = 0; i < 4; i++) {
		const struct source_driver *d = source_driver_find(names[i]);
		int idx;

		ck_assert_msg(d != NULL, "driver %s not found", names[i]);
		ck_assert_str_eq(d->name, names[i]);
		idx = source_driver_index(d);
		ck_assert_int_ge(idx, 0);
		ck_assert_ptr_eq(source_drivers[idx], d);
	}
	ck_assert_ptr_eq(source_driver_find("hwrng"), &source_hwrng);
	ck_assert_ptr_null(source_driver_find("nosuch"));
	ck_assert_ptr_null(source_driver_find(""));
	ck_assert_ptr_null(source_driver_find("HWRNG"));
	ck_assert_ptr_null(source_driver_find("hwrng "));
	ck_assert_int_eq(source_driver_index(NULL), -ENOENT);
}
END_TEST

/* ---- per-source options ----------------------------------------------------- */

START_TEST(test_config_defaults)
{
	struct source_config c;

	config_for(&c, "hwrng", NULL, NULL);
	ck_assert(c.enabled);
	ck_assert_str_eq(source_config_device(&c), "/dev/hwrng");
	ck_assert_ptr_null(source_config_get(&c, "device"));
	/* A character device that is not the kernel's hw_random one
	 * (10:183) is credited as the file source: 0 unless credit= is
	 * given (it was 1024). */
	config_for(&c, "hwrng", "device", "/dev/null");
	ck_assert_uint_eq(source_config_credit(&c), 0);
	ck_assert_ptr_nonnull(source_hwrng.device_credit);
	config_for(&c, "hwrng", "credit", "512");
	ck_assert_uint_eq(source_config_credit(&c), 512);
	config_for(&c, "rdrand", NULL, NULL);
	ck_assert_uint_eq(source_config_credit(&c), source_rdrand.default_credit);
	config_for(&c, "file", NULL, NULL);
	ck_assert_ptr_null(source_config_device(&c));
	ck_assert_uint_eq(source_config_credit(&c), 0);
}
END_TEST

START_TEST(test_config_credit)
{
	static const char *const bad[] = { "1025", "-1", "abc", "", " 5",
					   "5 ", "1e3", "+5", "0x10",
					   "99999999999999999999" };
	char culprit[64];
	struct source_config c;

	config_for(&c, "rdrand", "credit", "0");
	ck_assert_uint_eq(source_config_credit(&c), 0);
	config_for(&c, "rdrand", "credit", "1024");
	ck_assert_uint_eq(source_config_credit(&c), 1024);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(culprit, sizeof(culprit), "'%s'", bad[i]);
		expect_set_fails(&c, "credit", bad[i], -EINVAL, culprit);
		/* A refused value leaves the last good one. */
		ck_assert_uint_eq(source_config_credit(&c), 1024);
	}
}
END_TEST

START_TEST(test_config_min_entropy)
{
	static const char *const bad[] = { "0", "-1", "9", "nan", "inf", "",
					   "4x", "abc" };
	char culprit[64];
	struct source_config c;

	config_for(&c, "rdseed", NULL, NULL);
	ck_assert(source_config_min_entropy(&c) == source_rdseed.min_entropy);
	config_for(&c, "rdseed", "min-entropy", "4.5");
	ck_assert(source_config_min_entropy(&c) == 4.5);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(culprit, sizeof(culprit), "'%s'", bad[i]);
		expect_set_fails(&c, "min-entropy", bad[i], -EINVAL, culprit);
		ck_assert(source_config_min_entropy(&c) == 4.5);
	}
}
END_TEST

START_TEST(test_config_enable)
{
	struct source_config c;

	config_for(&c, "rdseed", "enable", "no");
	ck_assert(!c.enabled);
	ck_assert_int_eq(source_config_set(&c, "enable", "yes", (char[64]){ 0 },
					   64),
			 0);
	ck_assert(c.enabled);
	expect_set_fails(&c, "enable", "maybe", -EINVAL, "maybe");
	expect_set_fails(&c, "enable", "", -EINVAL, "enable");
	ck_assert(c.enabled);
}
END_TEST

START_TEST(test_config_keys)
{
	char longval[400];
	struct source_config c;

	config_for(&c, "hwrng", NULL, NULL);
	expect_set_fails(&c, "colour", "red", -EINVAL, "colour");
	/* "tries" belongs to the CPU drivers only. */
	expect_set_fails(&c, "tries", "5", -EINVAL, "tries");
	config_for(&c, "rdrand", "tries", "5");
	ck_assert_str_eq(source_config_get(&c, "tries"), "5");
	expect_set_fails(&c, "device", "/dev/hwrng", -EINVAL, "device");
	ck_assert_ptr_null(source_config_get(&c, "device"));

	config_for(&c, "hwrng", NULL, NULL);
	memset(longval, 'a', sizeof(longval) - 1);
	longval[0] = '/';
	longval[sizeof(longval) - 1] = '\0';
	expect_set_fails(&c, "device", longval, -EINVAL, "too long");
	expect_set_fails(&c, "device", "", -EINVAL, "empty");
	ck_assert_uint_eq(c.n_options, 0);
}
END_TEST

/*
 * Every driver's options fit the packed text at their longest (issue 20
 * packed it: a driver with more keys than it holds must raise
 * SOURCE_OPTIONS_LEN, not refuse a user's valid options).
 */
START_TEST(test_config_options_fit)
{
	char err[256], dev[SOURCE_OPTION_VALUE_LEN], sysfs[SOURCE_OPTION_VALUE_LEN];
	struct source_config c;

	for (size_t i = 0; source_drivers[i]; i++) {
		const struct source_driver *d = source_drivers[i];
		size_t worst = 0;

		if (d->flags & SOURCE_F_DEVICE)
			worst += sizeof("device") + SOURCE_OPTION_VALUE_LEN;
		for (const char *const *k = d->option_keys; k && *k; k++)
			worst += strlen(*k) + 1 + SOURCE_OPTION_VALUE_LEN;
		ck_assert_msg(worst <= SOURCE_OPTIONS_LEN,
			      "%s: options need up to %zu bytes", d->name,
			      worst);
	}
	/* Two paths of the longest length, then one replaced by a short
	 * one: both read back, the replaced key once. */
	memset(dev, 'd', sizeof(dev) - 1);
	memset(sysfs, 's', sizeof(sysfs) - 1);
	dev[0] = sysfs[0] = '/';
	dev[sizeof(dev) - 1] = sysfs[sizeof(sysfs) - 1] = '\0';
	config_for(&c, "hwrng", "device", dev);
	ck_assert_int_eq(source_config_set(&c, "sysfs", sysfs, err,
					   sizeof(err)), 0);
	ck_assert_str_eq(source_config_device(&c), dev);
	ck_assert_int_eq(source_config_set(&c, "device", "/dev/hwrng", err,
					   sizeof(err)), 0);
	ck_assert_uint_eq(c.n_options, 2);
	ck_assert_str_eq(source_config_device(&c), "/dev/hwrng");
	ck_assert_str_eq(source_config_get(&c, "sysfs"), sysfs);
	ck_assert_int_eq(source_config_set(&c, "sysfs", "/sys/x", err,
					   sizeof(err)), 0);
	ck_assert_str_eq(source_config_get(&c, "sysfs"), "/sys/x");
	ck_assert_str_eq(source_config_device(&c), "/dev/hwrng");
	ck_assert_uint_eq(c.n_options, 2);
}
END_TEST

START_TEST(test_config_device)
{
	struct source_config c;

	/* A missing path is not refused here: it may appear before open. */
	config_for(&c, "hwrng", "device", "/nonexistent/hwrng0");
	ck_assert_str_eq(source_config_device(&c), "/nonexistent/hwrng0");
	/* Setting it again replaces, not appends. */
	ck_assert_int_eq(source_config_set(&c, "device", "/dev/hwrng",
					   (char[64]){ 0 }, 64),
			 0);
	ck_assert_uint_eq(c.n_options, 1);
	ck_assert_str_eq(source_config_device(&c), "/dev/hwrng");
}
END_TEST

START_TEST(test_config_device_loopback)
{
	char link[128], link2[128];
	struct source_config c;

	tmp_path(link, sizeof(link), "urandom-link");
	tmp_path(link2, sizeof(link2), "link-to-link");
	ck_assert_int_eq(symlink("/dev/urandom", link), 0);
	ck_assert_int_eq(symlink(link, link2), 0);
	for (int i = 0; i < 2; i++) {
		const char *drv = i ? "file" : "hwrng";

		config_for(&c, drv, NULL, NULL);
		expect_set_fails(&c, "device", "/dev/random", -ELOOP,
				 "kernel's own random output");
		expect_set_fails(&c, "device", "/dev/urandom", -ELOOP,
				 "/dev/urandom");
		expect_set_fails(&c, "device", link, -ELOOP,
				 "kernel's own random output");
		expect_set_fails(&c, "device", link2, -ELOOP, link2);
		ck_assert_ptr_eq(source_config_device(&c),
				 c.driver->default_device);
	}
}
END_TEST

/* ---- is it the kernel's own output? ------------------------------------------- */

START_TEST(test_path_is_kernel_output)
{
	char link[128], dangling[128], reg[128];

	tmp_path(link, sizeof(link), "r-link");
	tmp_path(dangling, sizeof(dangling), "dangling");
	tmp_path(reg, sizeof(reg), "regular");
	ck_assert_int_eq(symlink("/dev/random", link), 0);
	ck_assert_int_eq(symlink("/nonexistent/x", dangling), 0);
	write_file(reg, "abc", 3);

	ck_assert_int_eq(source_path_is_kernel_output("/dev/random"), 1);
	ck_assert_int_eq(source_path_is_kernel_output("/dev/urandom"), 1);
	ck_assert_int_eq(source_path_is_kernel_output(link), 1);
	ck_assert_int_eq(source_path_is_kernel_output("/dev/null"), 0);
	ck_assert_int_eq(source_path_is_kernel_output("/dev/zero"), 0);
	ck_assert_int_eq(source_path_is_kernel_output(reg), 0);
	ck_assert_int_eq(source_path_is_kernel_output(tmpdir), 0);
	ck_assert_int_eq(source_path_is_kernel_output("/nonexistent/x"),
			 -ENOENT);
	ck_assert_int_eq(source_path_is_kernel_output(dangling), -ENOENT);
}
END_TEST

/* Opens @path and asks about the fd. */
static int fd_verdict(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
	r = source_fd_is_kernel_output(fd);
	close(fd);
	return r;
}

START_TEST(test_fd_is_kernel_output)
{
	char link[128], reg[128];
	int fd;

	tmp_path(link, sizeof(link), "u-link");
	tmp_path(reg, sizeof(reg), "regular");
	ck_assert_int_eq(symlink("/dev/urandom", link), 0);
	write_file(reg, "abc", 3);

	ck_assert_int_eq(fd_verdict("/dev/random"), 1);
	ck_assert_int_eq(fd_verdict("/dev/urandom"), 1);
	ck_assert_int_eq(fd_verdict(link), 1);
	ck_assert_int_eq(fd_verdict("/dev/null"), 0);
	ck_assert_int_eq(fd_verdict(reg), 0);
	/* A closed descriptor is an error, not "no". */
	fd = open(reg, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(source_fd_is_kernel_output(fd), -EBADF);
}
END_TEST

/* ---- source_read() over a scripted fake driver ---------------------------------- */

/*
 * One step of a script: what the fake read returns, @repeat times (0 = 1).
 * A positive value gives that many bytes (fewer if fewer were asked for).
 */
struct step {
	ssize_t ret;
	unsigned int repeat;
};

struct fake {
	const struct step *steps;
	size_t n_steps, pos;
	unsigned int rep;       /* repeats done of steps[pos] */
	unsigned char next;     /* next byte value given */
	size_t calls, given;
	size_t stop_after;      /* set *stop after this many calls; 0 = never */
	atomic_bool *stop;
	bool closed;
};

static struct fake fake;

static int fake_probe(const struct source_config *cfg, char *why,
		      size_t why_len)
{
	(void)cfg;
	snprintf(why, why_len, "scripted");
	return 0;
}

static int fake_open(const struct source_config *cfg, void **state,
		     char *why, size_t why_len)
{
	(void)cfg;
	(void)why;
	(void)why_len;
	*state = &fake;
	return 0;
}

static ssize_t fake_read(void *state, void *buf, size_t len)
{
	struct fake *f = state;
	const struct step *s;
	ssize_t r;

	f->calls++;
	if (f->stop_after && f->calls == f->stop_after)
		*f->stop = true;
	ck_assert_uint_gt(len, 0);
	if (f->pos == f->n_steps)
		return -EPROTO; /* read past the end of the script */
	s = &f->steps[f->pos];
	if (++f->rep >= (s->repeat ? s->repeat : 1)) {
		f->pos++;
		f->rep = 0;
	}
	r = s->ret;
	if (r > 0) {
		unsigned char *p = buf;

		if ((size_t)r > len)
			r = (ssize_t)len;
		for (ssize_t i = 0; i < r; i++)
			p[i] = f->next++;
		f->given += (size_t)r;
	}
	return r;
}

static void fake_close(void *state)
{
	((struct fake *)state)->closed = true;
}

static const struct source_driver fake_driver = {
	.name = "fake",
	.description = "scripted reads for tests",
	.credit_reason = "none",
	.sample_bits = 8,
	.probe = fake_probe,
	.open = fake_open,
	.read = fake_read,
	.close = fake_close,
};

#define GUARD 16

/*
 * Runs source_read() of @len bytes over @steps into a buffer pre-filled
 * with 0xAA and followed by guard bytes, which must survive.  With @stop,
 * the fake sets it during its @stop_after-th call (0: never).
 */
static ssize_t run_script(const struct step *steps, size_t n_steps,
			  unsigned char *buf, size_t len, atomic_bool *stop,
			  size_t stop_after)
{
	struct source_config cfg;
	struct source *src = NULL;
	char why[SOURCE_WHY_LEN];
	ssize_t r;

	fake = (struct fake){ .steps = steps, .n_steps = n_steps,
			      .stop = stop, .stop_after = stop_after };
	source_config_init(&cfg, &fake_driver);
	ck_assert_int_eq(source_open(&src, &cfg, why, sizeof(why)), 0);
	memset(buf, 0xAA, len + GUARD);
	r = source_read(src, buf, len, stop);
	ck_assert_msg(all_bytes(buf + len, GUARD, 0xAA),
		      "source_read wrote past the end of the buffer");
	source_close(src);
	ck_assert(fake.closed);
	return r;
}

/* The first @n bytes are the fake's sequence 0, 1, 2, ... */
static void assert_sequence(const unsigned char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(buf[i] == (unsigned char)i,
			      "byte %zu is %u, want %zu", i, buf[i], i & 0xff);
}

#define N_STEPS(a) (sizeof(a) / sizeof((a)[0]))

START_TEST(test_read_short_reads)
{
	static const struct step s[] = { { 3, 0 }, { 1, 0 }, { 5, 0 },
					 { 1000, 0 } };
	unsigned char buf[20 + GUARD];

	ck_assert_int_eq(run_script(s, N_STEPS(s), buf, 20, NULL, 0), 20);
	assert_sequence(buf, 20);
	ck_assert_uint_eq(fake.calls, 4);
	ck_assert_uint_eq(fake.given, 20); /* never asked for more than left */
}
END_TEST

START_TEST(test_read_eintr_storm)
{
	static const struct step s[] = { { -EINTR, 1000 }, { 10, 0 },
					 { -EINTR, 1000 }, { 10, 0 } };
	unsigned char buf[20 + GUARD];

	ck_assert_int_eq(run_script(s, N_STEPS(s), buf, 20, NULL, 0), 20);
	assert_sequence(buf, 20);
	ck_assert_uint_eq(fake.calls, 2002);
}
END_TEST

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

START_TEST(test_read_eagain_then_data)
{
	static const struct step s[] = { { -EAGAIN, 3 }, { 7, 0 },
					 { -EAGAIN, 2 }, { 100, 0 } };
	unsigned char buf[20 + GUARD];
	double t0 = now_s(), dt;

	ck_assert_int_eq(run_script(s, N_STEPS(s), buf, 20, NULL, 0), 20);
	dt = now_s() - t0;
	assert_sequence(buf, 20);
	ck_assert_uint_eq(fake.calls, 7);
	/* It backs off (no busy loop) but briefly: 5 waits of 1..4 ms. */
	ck_assert_msg(dt >= 0.004, "no back-off on EAGAIN (%.4f s)", dt);
	ck_assert_msg(dt < 0.5, "back-off too long (%.3f s)", dt);
}
END_TEST

START_TEST(test_read_eof_mid_buffer)
{
	static const struct step s[] = { { 4, 0 }, { 3, 0 }, { 0, 0 } };
	unsigned char buf[20 + GUARD];

	ck_assert_int_eq(run_script(s, N_STEPS(s), buf, 20, NULL, 0), 7);
	assert_sequence(buf, 7);
	ck_assert(all_bytes(buf + 7, 13, 0xAA));
	ck_assert_uint_eq(fake.calls, 3); /* stops at EOF, no more reads */
}
END_TEST

START_TEST(test_read_eof_at_once)
{
	static const struct step s[] = { { 0, 0 } };
	unsigned char buf[20 + GUARD];

	ck_assert_int_eq(run_script(s, N_STEPS(s), buf, 20, NULL, 0), 0);
	ck_assert(all_bytes(buf, 20, 0xAA));
}
END_TEST

/* A fault after some bytes: the error comes back and the bytes already
 * read are wiped, since data from a failing read is never used. */
static void check_fault(int err)
{
	const struct step s[] = { { 5, 0 }, { -EINTR, 0 }, { 6, 0 },
				  { err, 0 }, { 100, 0 } };
	unsigned char buf[20 + GUARD];

	ck_assert_int_eq(run_script(s, N_STEPS(s), buf, 20, NULL, 0), err);
	ck_assert_msg(all_bytes(buf, 11, 0), "bytes read before %s not wiped",
		      strerror(-err));
	ck_assert(all_bytes(buf + 11, 9, 0xAA));
	ck_assert_uint_eq(fake.calls, 4); /* no read after the fault */
}

START_TEST(test_read_eio_wipes)
{
	check_fault(-EIO);
}
END_TEST

START_TEST(test_read_enodev_wipes)
{
	check_fault(-ENODEV); /* the device went away */
}
END_TEST

START_TEST(test_read_ebadmsg_wipes)
{
	check_fault(-EBADMSG); /* a source-level fault */
}
END_TEST

START_TEST(test_read_stop_before)
{
	static const struct step s[] = { { 20, 0 } };
	unsigned char buf[20 + GUARD];
	atomic_bool stop = true;

	ck_assert_int_eq(run_script(s, N_STEPS(s), buf, 20, &stop, 0), 0);
	ck_assert_uint_eq(fake.calls, 0);
}
END_TEST

START_TEST(test_read_stop_set_later)
{
	static const struct step s[] = { { 4, 0 }, { -EAGAIN, 1000 } };
	unsigned char buf[20 + GUARD];
	atomic_bool stop = false;
	double t0 = now_s();

	ck_assert_int_eq(run_script(s, N_STEPS(s), buf, 20, &stop, 3),
			 4);
	assert_sequence(buf, 4);
	ck_assert_uint_eq(fake.calls, 3);
	ck_assert(now_s() - t0 < 0.5);
}
END_TEST

/* ---- the file driver -------------------------------------------------------------- */

struct writer {
	const char *path;
	const unsigned char *data;
	size_t len, chunk;
	useconds_t pause_us;
	int err;
};

/* Writes data into the FIFO in small pieces with pauses, then closes:
 * what a slow external generator looks like to the reader. */
static void *writer_main(void *arg)
{
	struct writer *w = arg;
	int fd = open(w->path, O_WRONLY | O_CLOEXEC); /* waits for a reader */

	if (fd < 0) {
		w->err = errno;
		return NULL;
	}
	for (size_t off = 0; off < w->len; off += w->chunk) {
		size_t n = w->len - off < w->chunk ? w->len - off : w->chunk;

		if (write(fd, w->data + off, n) != (ssize_t)n) {
			w->err = errno ? errno : EIO;
			break;
		}
		usleep(w->pause_us);
	}
	close(fd);
	return NULL;
}

static struct source *open_file_source(const char *path)
{
	struct source_config cfg;

	config_for(&cfg, "file", "device", path);
	return td_source_open(&cfg);
}

/* Feeds @len bytes through a FIFO and reads @want with source_read(). */
static void fifo_roundtrip(size_t len, size_t want, size_t expect)
{
	static unsigned char data[3000], buf[4000];
	struct writer w = { .data = data, .len = len, .chunk = 37,
			    .pause_us = 300 };
	char path[128];
	pthread_t t;
	struct source *src;

	ck_assert_uint_le(len, sizeof(data));
	signal(SIGPIPE, SIG_IGN); /* a failed test must not kill the writer */
	fill_pattern(data, len, 7);
	w.path = tmp_path(path, sizeof(path), "fifo");
	unlink(path);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, writer_main, &w), 0);
	src = open_file_source(path);
	ck_assert_int_eq(source_read(src, buf, want, NULL), (ssize_t)expect);
	ck_assert_mem_eq(buf, data, expect);
	/* The writer has closed (or will): end of input, not a hang. */
	ck_assert_int_eq(source_read(src, buf, 10, NULL), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(w.err, 0);
	source_close(src);
}

START_TEST(test_file_fifo_exact)
{
	fifo_roundtrip(1000, 1000, 1000);
}
END_TEST

START_TEST(test_file_fifo_eof_short)
{
	fifo_roundtrip(500, 1000, 500);
}
END_TEST

START_TEST(test_file_regular)
{
	unsigned char data[1000], buf[1500];
	char path[128], desc[256];
	struct source *src;

	fill_pattern(data, sizeof(data), 3);
	write_file(tmp_path(path, sizeof(path), "data"), data, sizeof(data));
	src = open_file_source(path);
	ck_assert_int_eq(source_describe(src, desc, sizeof(desc)), 0);
	ck_assert_str_eq(desc, path);
	ck_assert_int_eq(source_read(src, buf, 600, NULL), 600);
	ck_assert_mem_eq(buf, data, 600);
	/* Asking past the end gives the rest, then end of input. */
	ck_assert_int_eq(source_read(src, buf, 1000, NULL), 400);
	ck_assert_mem_eq(buf, data + 600, 400);
	ck_assert_int_eq(source_read(src, buf, 1, NULL), 0);
	source_close(src);
}
END_TEST

/* Both probe and open refuse @path, each with a reason naming it. */
static void expect_file_refused(const char *path, const char *word)
{
	struct source_config cfg;
	char why[SOURCE_WHY_LEN] = "";

	config_for(&cfg, "file", "device", path);
	ck_assert_int_lt(source_file.probe(&cfg, why, sizeof(why)), 0);
	ck_assert_msg(strstr(why, path), "probe why '%s' lacks the path",
		      why);
	ck_assert_msg(strstr(why, word), "probe why '%s' lacks '%s'", why,
		      word);
	why[0] = '\0';
	{
		struct source *src = NULL;
		int r = source_open(&src, &cfg, why, sizeof(why));

		ck_assert_msg(r < 0, "open %s succeeded", path);
		ck_assert_ptr_null(src);
		ck_assert_msg(strstr(why, path), "open why '%s' lacks the path",
			      why);
	}
}

START_TEST(test_file_refuses_directory)
{
	struct source_config cfg;

	expect_file_refused(tmpdir, "not a FIFO or a regular file");
	config_for(&cfg, "file", "device", tmpdir);
	expect_open_fails(&cfg, -EINVAL, "not a FIFO or a regular file");
}
END_TEST

START_TEST(test_file_refuses_socket)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[128];
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(s, 0);
	tmp_path(path, sizeof(path), "sock");
	ck_assert_uint_lt(strlen(path), sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	expect_file_refused(path, "not a FIFO or a regular file");
	close(s);
}
END_TEST

START_TEST(test_file_refuses_char_device)
{
	struct source_config cfg;

	expect_file_refused("/dev/null", "not a FIFO or a regular file");
	config_for(&cfg, "file", "device", "/dev/zero");
	expect_open_fails(&cfg, -EINVAL, "not a FIFO or a regular file");
}
END_TEST

START_TEST(test_file_missing_path)
{
	struct source_config cfg;

	expect_file_refused("/nonexistent/feed", "No such file");
	config_for(&cfg, "file", "device", "/nonexistent/feed");
	expect_open_fails(&cfg, -ENOENT, "/nonexistent/feed");
	/* No path at all: says how to give one. */
	config_for(&cfg, "file", NULL, NULL);
	expect_open_fails(&cfg, -ENOENT, "device=PATH");
}
END_TEST

START_TEST(test_open_refuses_kernel_output)
{
	/* Even when the configuration check was bypassed, open() checks
	 * the opened fd. */
	static const char *const drivers[] = { "file", "hwrng" };
	char link[128];
	struct source_config cfg;

	ck_assert_int_eq(symlink("/dev/urandom",
				 tmp_path(link, sizeof(link), "ulink")),
			 0);
	for (size_t i = 0; i < 2; i++) {
		char why[SOURCE_WHY_LEN] = "";

		config_force_device(&cfg, drivers[i], "/dev/random");
		expect_open_fails(&cfg, -ELOOP, "kernel's own random output");
		config_force_device(&cfg, drivers[i], link);
		expect_open_fails(&cfg, -ELOOP, link);
		ck_assert_int_eq(cfg.driver->probe(&cfg, why, sizeof(why)),
				 -ELOOP);
		ck_assert_msg(strstr(why, "kernel's own random output"),
			      "probe why '%s'", why);
	}
}
END_TEST

/* ---- the hwrng driver's error paths ----------------------------------------------- */

START_TEST(test_hwrng_missing_device)
{
	struct source_config cfg;
	char why[SOURCE_WHY_LEN] = "";

	config_for(&cfg, "hwrng", "device", "/nonexistent/hwrng0");
	ck_assert_int_eq(cfg.driver->probe(&cfg, why, sizeof(why)), -ENOENT);
	ck_assert_msg(strstr(why, "/nonexistent/hwrng0"), "probe why '%s'",
		      why);
	expect_open_fails(&cfg, -ENOENT, "/nonexistent/hwrng0");
}
END_TEST


/* ---- the credit rule: credit <= 1024 * H / sample bits ---------------------------- */

/* Every driver's default respects its own tests' H (issue 14, 3: hwrng
 * defaulted to 1024 with H = 6 bits per byte, cap 768). */
START_TEST(test_credit_defaults_within_cap)
{
	for (size_t i = 0; source_drivers[i]; i++) {
		const struct source_driver *d = source_drivers[i];
		struct source_config c;
		unsigned int cap;

		source_config_init(&c, d);
		cap = source_credit_cap(&c);
		ck_assert_msg(d->default_credit <= cap,
			      "%s: default credit %u above its cap %u (H %g)",
			      d->name, d->default_credit, cap, d->min_entropy);
		ck_assert_uint_le(source_config_credit(&c), cap);
		ck_assert_int_eq(source_config_validate(&c, (char[8]){ 0 }, 8),
				 0);
	}
	ck_assert_uint_eq(source_hwrng.default_credit, 768);
	ck_assert_uint_eq(source_virtio.default_credit, 768);
	ck_assert(source_hwrng.min_entropy == source_virtio.min_entropy);
}
END_TEST

START_TEST(test_credit_cap_formula)
{
	struct source_config c;

	config_for(&c, "hwrng", NULL, NULL);
	ck_assert_uint_eq(source_credit_cap(&c), 768);
	config_for(&c, "rdseed", NULL, NULL);
	ck_assert_uint_eq(source_credit_cap(&c), 1024);
	config_for(&c, "rdseed", "min-entropy", "4.5");
	ck_assert_uint_eq(source_credit_cap(&c), 576);
	/* Decimal H inexact in binary still gives the exact cap. */
	config_for(&c, "rdseed", "min-entropy", "6.25");
	ck_assert_uint_eq(source_credit_cap(&c), 800);
	config_for(&c, "rdseed", "min-entropy", "0.1171875");
	ck_assert_uint_eq(source_credit_cap(&c), 15);
	/* A default is capped by a lower H the user sets. */
	config_for(&c, "rdseed", "min-entropy", "2");
	ck_assert_uint_eq(source_config_credit(&c), 256);
}
END_TEST

/* validate() that must refuse @cfg with a message naming each of @want. */
static void expect_invalid(const struct source_config *cfg, const char *want1,
			   const char *want2)
{
	char err[512] = "";

	ck_assert_int_eq(source_config_validate(cfg, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, want1) && strstr(err, want2),
		      "message '%s' lacks '%s' or '%s'", err, want1, want2);
	ck_assert_msg(!strchr(err, '\n'), "not one line: '%s'", err);
}

/* A user credit above the cap is refused, whatever the order of credit=
 * and min-entropy=; the message says the cap and how to raise it. */
START_TEST(test_credit_above_cap_refused)
{
	struct source_config c;
	char err[512] = "";

	config_for(&c, "hwrng", "credit", "1024");
	expect_invalid(&c, "768", "min-entropy to at least 8,");
	expect_invalid(&c, "stricter", "hwrng");
	/* Defence in depth: even unvalidated it is never credited more. */
	ck_assert_uint_eq(source_config_credit(&c), 768);
	/* Raising H allows it, before or after credit=. */
	ck_assert_int_eq(source_config_set(&c, "min-entropy", "8", err,
					   sizeof(err)), 0);
	ck_assert_int_eq(source_config_validate(&c, err, sizeof(err)), 0);
	ck_assert_uint_eq(source_config_credit(&c), 1024);
	config_for(&c, "hwrng", "min-entropy", "8");
	ck_assert_int_eq(source_config_set(&c, "credit", "1024", err,
					   sizeof(err)), 0);
	ck_assert_int_eq(source_config_validate(&c, err, sizeof(err)), 0);
	/* The H it names is exact: 800 needs 6.25, and 6.25 is enough. */
	config_for(&c, "rdseed", "min-entropy", "6");
	ck_assert_int_eq(source_config_set(&c, "credit", "800", err,
					   sizeof(err)), 0);
	expect_invalid(&c, "at least 6.25,", "768");
	ck_assert_int_eq(source_config_set(&c, "min-entropy", "6.25", err,
					   sizeof(err)), 0);
	ck_assert_int_eq(source_config_validate(&c, err, sizeof(err)), 0);
	ck_assert_int_eq(source_config_set(&c, "credit", "801", err,
					   sizeof(err)), 0);
	expect_invalid(&c, "801", "at least 6.2578125,");
	/* At or below the cap, and the default, are fine. */
	config_for(&c, "hwrng", "credit", "768");
	ck_assert_int_eq(source_config_validate(&c, err, sizeof(err)), 0);
	config_for(&c, "file", "credit", "1024");
	expect_invalid(&c, "file", "768");
}
END_TEST

/* ---- min-entropy's floor: the health tests must be able to fail ------------------- */

START_TEST(test_min_entropy_floor)
{
	static const char *const bad[] = { "0.001", "1e-300", "0.1171874",
					   "4.9e-324", "0.1" };
	struct monitor_params p;
	struct source_config c;
	char culprit[64];

	ck_assert(source_min_entropy_floor(8) == 60.0 / MONITOR_APT_WINDOW);
	ck_assert(source_min_entropy_floor(1) ==
		  60.0 / MONITOR_APT_WINDOW_BINARY);
	/* The floor follows the monitor's own parameters and cutoffs: at
	 * it the permanent APT cutoff fits the window, below it not. */
	monitor_params_default(&p);
	ck_assert(p.permanent_alpha_log2 == -60.0);
	for (unsigned int bits = 1; bits <= 8; bits += 7) {
		unsigned int w = bits == 1 ? MONITOR_APT_WINDOW_BINARY
					   : MONITOR_APT_WINDOW;
		double h = source_min_entropy_floor(bits);
		struct monitor *m = NULL;

		ck_assert_uint_le(monitor_apt_cutoff(h, w, p.permanent_alpha_log2),
				  w);
		ck_assert_uint_gt(monitor_apt_cutoff(h * 0.999, w,
						     p.permanent_alpha_log2),
				  w);
		p.sample_bits = bits;
		p.min_entropy = h;
		ck_assert_int_eq(monitor_new(&p, &m), 0);
		monitor_free(m);
	}
	config_for(&c, "hwrng", "min-entropy", "0.1171875");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(culprit, sizeof(culprit), "'%s'", bad[i]);
		expect_set_fails(&c, "min-entropy", bad[i], -EINVAL, culprit);
		expect_set_fails(&c, "min-entropy", bad[i], -EINVAL,
				 "from 0.1171875 to 8");
	}
	ck_assert(source_config_min_entropy(&c) == 0.1171875);
}
END_TEST

/* ---- driver option values are checked at config time ------------------------------ */

START_TEST(test_option_values_checked)
{
	static const struct {
		const char *driver, *key, *value;
	} bad[] = {
		{ "rdrand", "tries", "abc" },   { "rdrand", "tries", "0" },
		{ "rdseed", "tries", "1000001" }, { "rdseed", "force", "maybe" },
		{ "rdrand", "force", "2" },     { "virtio", "select", "maybe" },
		{ "virtio", "sysfs", "relative/dir" },
		{ "hwrng", "sysfs", "sys" },    { "tpm", "timeout-ms", "0" },
		{ "tpm", "timeout-ms", "5s" },
	}, good[] = {
		{ "rdrand", "tries", "20" },    { "rdseed", "force", "yes" },
		{ "virtio", "select", "no" },   { "virtio", "sysfs", "/tmp" },
		{ "hwrng", "sysfs", "/sys/class/misc/hw_random" },
		{ "tpm", "timeout-ms", "600000" },
	};
	struct source_config c;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char culprit[64];

		config_for(&c, bad[i].driver, NULL, NULL);
		snprintf(culprit, sizeof(culprit), "'%s'", bad[i].value);
		expect_set_fails(&c, bad[i].key, bad[i].value, -EINVAL, culprit);
		expect_set_fails(&c, bad[i].key, bad[i].value, -EINVAL,
				 bad[i].key);
		expect_set_fails(&c, bad[i].key, bad[i].value, -EINVAL,
				 bad[i].driver);
		ck_assert_ptr_null(source_config_get(&c, bad[i].key));
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		config_for(&c, good[i].driver, good[i].key, good[i].value);
		ck_assert_str_eq(source_config_get(&c, good[i].key),
				 good[i].value);
	}
	/* No driver option goes unchecked. */
	for (size_t i = 0; source_drivers[i]; i++)
		if (source_drivers[i]->option_keys &&
		    source_drivers[i]->option_keys[0])
			ck_assert_msg(source_drivers[i]->check_option,
				      "%s has options but no check_option",
				      source_drivers[i]->name);
}
END_TEST

/* ---- one device, one credit ------------------------------------------------------- */

/* A TPM on a unix: socket is a software TPM: 0 by default; the chip 64. */
START_TEST(test_tpm_socket_credit)
{
	struct source_config c;

	config_for(&c, "tpm", NULL, NULL);
	ck_assert_uint_eq(source_config_credit(&c), 64);
	config_for(&c, "tpm", "device", "unix:/run/swtpm.sock");
	ck_assert_uint_eq(source_config_credit(&c), 0);
	ck_assert_int_eq(source_config_set(&c, "credit", "32", (char[64]){ 0 },
					   64), 0);
	ck_assert_uint_eq(source_config_credit(&c), 32);
}
END_TEST

/* hwrng on a character device that is not 10:183: the file source's
 * treatment, said in --list (the probe) and at start-up (the warning). */
START_TEST(test_hwrng_other_device_credit_0)
{
	static const char *const devs[] = { "/dev/zero", "/dev/null",
					    "/nonexistent/hwrng0" };
	struct source_config c;
	char why[SOURCE_WHY_LEN], warn[SOURCE_WHY_LEN];

	for (size_t i = 0; i < 3; i++) {
		config_for(&c, "hwrng", "device", devs[i]);
		ck_assert_uint_eq(source_config_credit(&c), 0);
		ck_assert_int_eq(source_config_warning(&c, warn, sizeof(warn)), 1);
		ck_assert_msg(strstr(warn, "not the kernel's hw_random device") &&
				      strstr(warn, "credit="),
			      "warning '%s'", warn);
	}
	config_for(&c, "hwrng", "device", "/dev/zero");
	ck_assert_int_eq(c.driver->probe(&c, why, sizeof(why)), 0);
	ck_assert_msg(strstr(why, "not the kernel's hw_random device") &&
			      strstr(why, "credited 0 unless credit="),
		      "probe why '%s'", why);
	/* An explicit credit is the user's call: honoured, no warning. */
	ck_assert_int_eq(source_config_set(&c, "credit", "100", why,
					   sizeof(why)), 0);
	ck_assert_uint_eq(source_config_credit(&c), 100);
	ck_assert_int_eq(source_config_warning(&c, warn, sizeof(warn)), 0);
	ck_assert_str_eq(warn, "");
}
END_TEST

/* A fixture hw_random sysfs directory with @current and its quality. */
static void fake_sysfs(const char *current, const char *quality)
{
	char p[128];

	write_file(tmp_path(p, sizeof(p), "rng_available"), current,
		   strlen(current));
	write_file(tmp_path(p, sizeof(p), "rng_current"), current,
		   strlen(current));
	if (quality)
		write_file(tmp_path(p, sizeof(p), "rng_quality"), quality,
			   strlen(quality));
}

static bool have_real_hwrng(void)
{
	struct stat st;

	if (stat("/dev/hwrng", &st) == 0 && S_ISCHR(st.st_mode) &&
	    major(st.st_rdev) == 10 && minor(st.st_rdev) == 183)
		return true;
	printf("SKIP: no /dev/hwrng (10:183) here: the credit of the real "
	       "device path is not tested\n");
	fflush(stdout);
	return false;
}

/* hwrng and virtio on the same device: the same credit, from the kernel's
 * rng_quality capped by H (it was 1024 through hwrng, 1000 through
 * virtio, for virtio_rng.0). */
START_TEST(test_one_device_one_credit)
{
	static const struct {
		const char *current, *quality;
		unsigned int credit;
	} cases[] = {
		{ "virtio_rng.0\n", "1024\n", 768 }, /* capped by H = 6 */
		{ "virtio_rng.0\n", "1000\n", 768 },
		{ "virtio_rng.0\n", "500\n", 500 },  /* the kernel knows less */
		{ "virtio_rng.0\n", "0\n", 768 },    /* gated, or not crediting */
		{ "virtio_rng.0\n", NULL, 768 },     /* before 5.18 */
		{ "tpm-rng-0\n", "1024\n", 64 },     /* a TPM: the tpm source's */
	};
	char err[256];

	if (!have_real_hwrng())
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct source_config hw, vi;

		fake_sysfs(cases[i].current, cases[i].quality);
		if (!cases[i].quality) {
			char p[128];

			unlink(tmp_path(p, sizeof(p), "rng_quality"));
		}
		config_for(&hw, "hwrng", "sysfs", tmpdir);
		ck_assert_uint_eq(source_config_credit(&hw), cases[i].credit);
		if (strncmp(cases[i].current, "virtio", 6) != 0)
			continue;
		config_for(&vi, "virtio", "sysfs", tmpdir);
		ck_assert_uint_eq(source_config_credit(&vi), cases[i].credit);
		/* Both follow a min-entropy the user raises. */
		ck_assert_int_eq(source_config_set(&hw, "min-entropy", "8", err,
						   sizeof(err)), 0);
		ck_assert_int_eq(source_config_set(&vi, "min-entropy", "8", err,
						   sizeof(err)), 0);
		ck_assert_uint_eq(source_config_credit(&hw),
				  source_config_credit(&vi));
	}
	/* The quality the gate found before it set rng_quality to 0. */
	{
		struct source_config hw;

		fake_sysfs("virtio_rng.0\n", "0\n");
		config_for(&hw, "hwrng", "sysfs", tmpdir);
		hw.hw_quality = 300;
		ck_assert_uint_eq(source_config_credit(&hw), 300);
		hw.hw_quality = 1024;
		ck_assert_uint_eq(source_config_credit(&hw), 768);
	}
}
END_TEST

static Suite *source_suite(void)
{
	Suite *s = suite_create("source");
	TCase *tc;

	tc = tcase_create("table");
	tcase_add_test(tc, test_table_shape);
	tcase_add_test(tc, test_table_find);
	suite_add_tcase(s, tc);

	tc = tcase_create("config");
	tcase_add_unchecked_fixture(tc, tmpdir_setup, tmpdir_teardown);
	tcase_add_test(tc, test_config_defaults);
	tcase_add_test(tc, test_config_credit);
	tcase_add_test(tc, test_config_min_entropy);
	tcase_add_test(tc, test_config_enable);
	tcase_add_test(tc, test_config_keys);
	tcase_add_test(tc, test_config_device);
	tcase_add_test(tc, test_config_options_fit);
	tcase_add_test(tc, test_config_device_loopback);
	suite_add_tcase(s, tc);

	tc = tcase_create("loopback");
	tcase_add_unchecked_fixture(tc, tmpdir_setup, tmpdir_teardown);
	tcase_add_test(tc, test_path_is_kernel_output);
	tcase_add_test(tc, test_fd_is_kernel_output);
	tcase_add_test(tc, test_open_refuses_kernel_output);
	suite_add_tcase(s, tc);

	tc = tcase_create("read");
	tcase_add_test(tc, test_read_short_reads);
	tcase_add_test(tc, test_read_eintr_storm);
	tcase_add_test(tc, test_read_eagain_then_data);
	tcase_add_test(tc, test_read_eof_mid_buffer);
	tcase_add_test(tc, test_read_eof_at_once);
	tcase_add_test(tc, test_read_eio_wipes);
	tcase_add_test(tc, test_read_enodev_wipes);
	tcase_add_test(tc, test_read_ebadmsg_wipes);
	tcase_add_test(tc, test_read_stop_before);
	tcase_add_test(tc, test_read_stop_set_later);
	suite_add_tcase(s, tc);

	tc = tcase_create("file");
	tcase_add_unchecked_fixture(tc, tmpdir_setup, tmpdir_teardown);
	tcase_add_test(tc, test_file_fifo_exact);
	tcase_add_test(tc, test_file_fifo_eof_short);
	tcase_add_test(tc, test_file_regular);
	tcase_add_test(tc, test_file_refuses_directory);
	tcase_add_test(tc, test_file_refuses_socket);
	tcase_add_test(tc, test_file_refuses_char_device);
	tcase_add_test(tc, test_file_missing_path);
	suite_add_tcase(s, tc);

	tc = tcase_create("hwrng");
	tcase_add_test(tc, test_hwrng_missing_device);
	tcase_add_test(tc, test_hwrng_other_device_credit_0);
	tcase_add_test(tc, test_tpm_socket_credit);
	suite_add_tcase(s, tc);

	tc = tcase_create("credit");
	tcase_add_unchecked_fixture(tc, tmpdir_setup, tmpdir_teardown);
	tcase_add_test(tc, test_credit_defaults_within_cap);
	tcase_add_test(tc, test_credit_cap_formula);
	tcase_add_test(tc, test_credit_above_cap_refused);
	tcase_add_test(tc, test_min_entropy_floor);
	tcase_add_test(tc, test_option_values_checked);
	tcase_add_test(tc, test_one_device_one_credit);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return td_run(source_suite()); }
