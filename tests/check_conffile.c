// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the config file (config_load_file), config_set, and how
 * the file and the command line combine (config_parse_args with -c): a
 * good file sets what it says, whatever its line endings and whitespace;
 * every error is one line naming the file and the line; the command line
 * overrides the file; a missing named file is an error, a missing default
 * is not.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rngfeed/config.h"
#include "rngfeed/source.h"
#include "test_doubles.h"

static char tmpdir[] = "/tmp/check_conffile.XXXXXX";
static struct rngfeed_config cfg;
static char err[1024];
static char path[512];

/* ---- helpers ------------------------------------------------------------- */

/* Write @len bytes to @name in the test directory; sets path. */
static const char *write_file_len(const char *name, const char *text,
				  size_t len)
{
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot create %s", path);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

static const char *write_file(const char *name, const char *text)
{
	return write_file_len(name, text, strlen(text));
}

/* A configuration with the built-in defaults (no config file read). */
static void fresh_config(void)
{
	char *argv[] = { (char *)"rngfeed", (char *)"-c",
			 (char *)"/dev/null", NULL };

	ck_assert_int_eq(config_parse_args(&cfg, 3, argv, err, sizeof(err)), 0);
}

/* Load @len bytes of config text from a fresh file into a fresh config. */
static int load_len(const char *text, size_t len)
{
	fresh_config();
	write_file_len("rngfeed.conf", text, len);
	memset(err, 0, sizeof(err));
	return config_load_file(&cfg, path, err, sizeof(err));
}

static int load(const char *text)
{
	return load_len(text, strlen(text));
}

/*
 * Loading @text must fail with -EINVAL and one line "PATH:LINE: ..."
 * that contains @culprit (when not NULL).
 */
static void load_bad_len(const char *text, size_t len, unsigned int line,
			 const char *culprit)
{
	char prefix[600];
	int r = load_len(text, len);

	snprintf(prefix, sizeof(prefix), "%s:%u: ", path, line);
	ck_assert_msg(r == -EINVAL, "%s: got %d, want -EINVAL (message: %s)",
		      text, r, err);
	ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0,
		      "%s: message \"%s\" does not start with \"%s\"", text,
		      err, prefix);
	ck_assert_msg(!culprit || strstr(err, culprit),
		      "%s: message \"%s\" does not name \"%s\"", text, err,
		      culprit);
	ck_assert_msg(!strchr(err, '\n'), "%s: message is not one line: %s",
		      text, err);
}

static void load_bad(const char *text, unsigned int line, const char *culprit)
{
	load_bad_len(text, strlen(text), line, culprit);
}

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

/* ---- a good file ---------------------------------------------------------- */

START_TEST(test_good_file)
{
	char text[2048], device[300];
	struct source_config *hw, *rr, *fl;

	snprintf(device, sizeof(device), "%s/fifo", tmpdir);
	/* Every global key; comments, blank lines, tabs; CRLF and LF line
	 * endings mixed; a last line without a newline. */
	snprintf(text, sizeof(text),
		 "# rngfeed test configuration\r\n"
		 "\r\n"
		 "   # an indented comment\n"
		 "random-device = /dev/urandom\r\n"
		 "metrics=/var/lib/node_exporter/rngfeed.prom\r\n"
		 "\tinterval\t=\t30\t# top up every 30 s\r\n"
		 "random-step = 128   \r\n"
		 "fill-watermark = 1024\n"
		 "max-failures = 7\n"
		 "retry-delay = 2.5\n"
		 "retry-max = 600\n"
		 "reseed-bytes = 2Mi\n"
		 "reseed-seconds = 0.5\n"
		 "stats-interval = 2\n"
		 "wait-for-source = yes\n"
		 "pid-file = /run/rngfeed.pid\n"
		 "user = rngfeed:rngfeed\n"
		 "\n"
		 "[source hwrng]\r\n"
		 "credit = 512\r\n"
		 "device = /dev/hwrng\r\n"
		 "enable = no\r\n"
		 "min-entropy = 6.5\r\n"
		 "\n"
		 "[source rdrand]\n"
		 "\tcredit\t= 0 # do not trust it\n"
		 "[source file]\n"
		 "device = %s\n"
		 "min-entropy = 8\n"
		 "credit=1024",
		 device);
	ck_assert_msg(load(text) == 0, "refused: %s", err);
	ck_assert_str_eq(cfg.random_device, "/dev/urandom");
	ck_assert_str_eq(cfg.metrics_path, "/var/lib/node_exporter/rngfeed.prom");
	ck_assert_int_eq(cfg.interval, 30);
	ck_assert_int_eq(cfg.random_step, 128);
	ck_assert_int_eq(cfg.fill_watermark, 1024);
	ck_assert_int_eq(cfg.max_failures, 7);
	ck_assert(near(cfg.retry_delay, 2.5));
	ck_assert(near(cfg.retry_max, 600));
	ck_assert_int_eq(cfg.reseed_bytes, 2 << 20);
	ck_assert(near(cfg.reseed_seconds, 0.5));
	ck_assert(near(cfg.stats_interval, 2));
	ck_assert(cfg.wait_for_source);
	ck_assert_str_eq(cfg.pid_file, "/run/rngfeed.pid");
	ck_assert_str_eq(cfg.user, "rngfeed:rngfeed");

	hw = config_source(&cfg, "hwrng");
	rr = config_source(&cfg, "rdrand");
	fl = config_source(&cfg, "file");
	ck_assert_ptr_nonnull(hw);
	ck_assert_ptr_nonnull(rr);
	ck_assert_ptr_nonnull(fl);
	ck_assert_int_eq(hw->credit, 512);
	ck_assert_uint_eq(source_config_credit(hw), 512);
	ck_assert_str_eq(source_config_device(hw), "/dev/hwrng");
	ck_assert(!hw->enabled);
	ck_assert(near(source_config_min_entropy(hw), 6.5));
	ck_assert_uint_eq(source_config_credit(rr), 0);
	ck_assert(rr->enabled);
	ck_assert_str_eq(source_config_device(fl), device);
	ck_assert_uint_eq(source_config_credit(fl), 1024);
	/* Keys of one section do not leak into another. */
	ck_assert_ptr_null(source_config_get(rr, "device"));
}
END_TEST

START_TEST(test_empty_files)
{
	ck_assert_int_eq(load(""), 0);
	ck_assert_int_eq(cfg.interval, 60);
	ck_assert_int_eq(load("\n\n# nothing\n   \n\t\n\r\n"), 0);
	ck_assert_int_eq(cfg.random_step, 64);
	/* A section with nothing in it is fine. */
	ck_assert_int_eq(load("[source hwrng]\n"), 0);
}
END_TEST

/* A file is read top to bottom: the last value of a key wins. */
START_TEST(test_last_value_wins)
{
	ck_assert_int_eq(load("interval = 10\ninterval = 20\n"), 0);
	ck_assert_int_eq(cfg.interval, 20);
	ck_assert_int_eq(load("[source hwrng]\ncredit = 1\n"
			      "[source rdrand]\ncredit = 3\n"
			      "[source hwrng]\ncredit = 2\n"),
			 0);
	ck_assert_uint_eq(source_config_credit(config_source(&cfg, "hwrng")), 2);
	ck_assert_uint_eq(source_config_credit(config_source(&cfg, "rdrand")), 3);
}
END_TEST

/* A comment after a section header, and trailing blanks, like after any
 * other line. */
START_TEST(test_section_header_comment)
{
	ck_assert_msg(load("[source hwrng]   # the virtio device\ncredit = 10\n") == 0,
		      "refused: %s", err);
	ck_assert_uint_eq(source_config_credit(config_source(&cfg, "hwrng")), 10);
	ck_assert_msg(load("[source hwrng]\t\r\ncredit = 11\n") == 0,
		      "refused: %s", err);
	ck_assert_uint_eq(source_config_credit(config_source(&cfg, "hwrng")), 11);
}
END_TEST

/* ---- errors: each names the file and the line ------------------------------ */

START_TEST(test_unknown_key)
{
	load_bad("interval = 5\nfrobnicate = 1\n", 2, "frobnicate");
	/* Keys are case-sensitive, like the long options. */
	load_bad("Interval = 5\n", 1, "Interval");
	/* A global key inside a section is a key that section lacks. */
	load_bad("[source hwrng]\ncredit = 5\n\ninterval = 5\n", 4, "interval");
	/* A driver key that the driver does not have. */
	load_bad("# c\n[source hwrng]\nfrobnicate = 1\n", 3, "frobnicate");
	load_bad("[source rdrand]\ndevice = /dev/hwrng\n", 2, "device");
	/* Command-line-only options are not file keys. */
	load_bad("foreground = yes\n", 1, "foreground");
	load_bad("include = hwrng\n", 1, "include");
}
END_TEST

START_TEST(test_unknown_section)
{
	load_bad("interval = 5\n[source nosuch]\ncredit = 1\n", 2, "nosuch");
	load_bad("[source tpm_missing]\n", 1, "tpm_missing");
}
END_TEST

START_TEST(test_malformed_section)
{
	static const char *const bad[] = {
		"[source hwrng",   "[hwrng]",          "[source]",
		"[source ]",       "[ source hwrng]",  "[source hwrng] x",
		"[source hwrng]]", "[source HWRNG]",   "[source hw rng]",
		"[",               "[]",               "[source hwrng][x]",
		"[sources hwrng]", "[source\thwrng]x",
	};
	char text[128];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "interval = 5\n%s\n", bad[i]);
		load_bad(text, 2, "section");
	}
}
END_TEST

START_TEST(test_missing_equals)
{
	load_bad("interval 5\n", 1, "key = value");
	load_bad("# x\n\ninterval\n", 3, "key = value");
	load_bad("[source hwrng]\ncredit 5\n", 2, "key = value");
	/* An '=' without a key. */
	load_bad("= 5\n", 1, NULL);
	load_bad("  \t= 5\n", 1, NULL);
}
END_TEST

START_TEST(test_empty_value)
{
	load_bad("interval =\n", 1, "interval");
	load_bad("interval =   \t\n", 1, "interval");
	load_bad("interval = # later\n", 1, "interval");
	load_bad("metrics =\r\n", 1, "metrics");
	load_bad("[source hwrng]\ncredit =\n", 2, "credit");
	load_bad("[source hwrng]\ndevice = \n", 2, "device");
}
END_TEST

/* Every numeric key, out of range or not a number, on line 3. */
START_TEST(test_bad_numbers)
{
	static const struct {
		const char *key, *value;
	} bad[] = {
		{ "random-step", "0" },        { "random-step", "4097" },
		{ "random-step", "-1" },       { "random-step", "1.5" },
		{ "random-step", "abc" },      { "random-step", "64 bytes" },
		{ "random-step", "5k" },       { "random-step", "99999999999999999999" },
		{ "fill-watermark", "-1" },    { "fill-watermark", "4097" },
		{ "fill-watermark", "x" },
		{ "interval", "0" },           { "interval", "86401" },
		{ "interval", "-5" },          { "interval", "1e3" },
		{ "interval", "0x10" },
		{ "max-failures", "0" },       { "max-failures", "1001" },
		{ "max-failures", "three" },
		{ "reseed-bytes", "4095" },    { "reseed-bytes", "2Gi" },
		{ "reseed-bytes", "1Ti" },
		{ "retry-delay", "0" },        { "retry-delay", "0.001" },
		{ "retry-delay", "86401" },    { "retry-delay", "-1" },
		{ "retry-delay", "nan" },      { "retry-delay", "inf" },
		{ "retry-delay", "1s" },
		{ "retry-max", "0.009" },      { "retry-max", "86400.5" },
		{ "retry-max", "soon" },
		{ "reseed-seconds", "0.001" }, { "reseed-seconds", "3601" },
		{ "reseed-seconds", "+1" },
		{ "stats-interval", "0.05" },  { "stats-interval", "3601" },
		{ "stats-interval", "1e9" },
		{ "wait-for-source", "maybe" }, { "wait-for-source", "2" },
	};
	char text[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "# numbers\ninterval = 9\n%s = %s\n",
			 bad[i].key, bad[i].value);
		load_bad(text, 3, bad[i].key);
		/* ...and the value that was wrong. */
		ck_assert_msg(strstr(err, bad[i].value), "%s: %s", text, err);
	}
}
END_TEST

/* The limits themselves are accepted. */
START_TEST(test_number_limits)
{
	ck_assert_msg(load("random-step = 1\nfill-watermark = 0\ninterval = 1\n"
			   "max-failures = 1\nreseed-bytes = 4096\n"
			   "retry-delay = 0.01\nretry-max = 0.01\n"
			   "reseed-seconds = 0.01\nstats-interval = 0.1\n") == 0,
		      "%s", err);
	ck_assert_int_eq(cfg.random_step, 1);
	ck_assert_int_eq(cfg.fill_watermark, 0);
	ck_assert_int_eq(cfg.interval, 1);
	ck_assert_int_eq(cfg.max_failures, 1);
	ck_assert_int_eq(cfg.reseed_bytes, 4096);
	ck_assert(near(cfg.retry_delay, 0.01));
	ck_assert(near(cfg.stats_interval, 0.1));
	ck_assert_msg(load("random-step = 4096\nfill-watermark = 4096\n"
			   "interval = 86400\nmax-failures = 1000\n"
			   "reseed-bytes = 1Gi\nretry-delay = 86400\n"
			   "retry-max = 86400\nreseed-seconds = 3600\n"
			   "stats-interval = 3600\nwait-for-source = off\n") == 0,
		      "%s", err);
	ck_assert_int_eq(cfg.random_step, 4096);
	ck_assert_int_eq(cfg.interval, 86400);
	ck_assert_int_eq(cfg.reseed_bytes, 1 << 30);
	ck_assert(near(cfg.retry_max, 86400));
	ck_assert(!cfg.wait_for_source);
	ck_assert_msg(load("random-step = 1Ki\n") == 0, "%s", err);
	ck_assert_int_eq(cfg.random_step, 1024);
}
END_TEST

START_TEST(test_bad_source_values)
{
	static const struct {
		const char *key, *value;
	} bad[] = {
		{ "credit", "1025" }, { "credit", "-1" },  { "credit", "x" },
		{ "credit", "1.5" },  { "credit", "+5" },
		{ "enable", "maybe" },
		{ "min-entropy", "0" }, { "min-entropy", "8.5" },
		{ "min-entropy", "-1" }, { "min-entropy", "high" },
	};
	char text[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "[source hwrng]\ncredit = 3\n%s = %s\n",
			 bad[i].key, bad[i].value);
		load_bad(text, 3, bad[i].key);
		ck_assert_msg(strstr(err, bad[i].value), "%s: %s", text, err);
		ck_assert_msg(strstr(err, "hwrng"), "%s: %s", text, err);
	}
}
END_TEST

START_TEST(test_bad_paths)
{
	char text[600];
	char longpath[300];

	/* The kernel's device must be an absolute path. */
	load_bad("random-device = dev/random\n", 1, "random-device");
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	snprintf(text, sizeof(text), "metrics = %s\n", longpath);
	load_bad(text, 1, "metrics");
	snprintf(text, sizeof(text), "[source hwrng]\ndevice = %s\n", longpath);
	load_bad(text, 2, "device");
}
END_TEST

START_TEST(test_config_key_in_file)
{
	load_bad("interval = 5\nconfig = /etc/other.conf\n", 2, "config");
}
END_TEST

START_TEST(test_long_line)
{
	char text[2200];
	size_t n;

	/* 1,100 bytes of comment on line 2. */
	n = (size_t)snprintf(text, sizeof(text), "interval = 5\n#");
	memset(text + n, 'x', 1100);
	n += 1100;
	memcpy(text + n, "\ninterval = 6\n", 15);
	load_bad(text, 2, "1024");
	/* A long key = value line too, and one without a final newline. */
	n = (size_t)snprintf(text, sizeof(text), "metrics = /");
	memset(text + n, 'm', 1500);
	text[n + 1500] = '\0';
	load_bad(text, 1, "1024");
	/* 1,000 bytes is fine. */
	n = (size_t)snprintf(text, sizeof(text), "#");
	memset(text + n, 'y', 999);
	memcpy(text + n + 999, "\ninterval = 7\n", 15);
	ck_assert_msg(load(text) == 0, "%s", err);
	ck_assert_int_eq(cfg.interval, 7);
}
END_TEST

/* Files that are not regular: a device could feed an endless line, a
 * FIFO could block.  Both are refused before anything is read; /dev/null
 * stays the way to say "no config". */
START_TEST(test_not_a_regular_file)
{
	char fifo[] = "/tmp/rngfeed-conf-fifo-XXXXXX";
	int fd = mkstemp(fifo);

	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(fifo);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	fresh_config();
	ck_assert_int_eq(config_load_file(&cfg, "/dev/zero", err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "/dev/zero: not a regular file"));
	ck_assert_int_eq(config_load_file(&cfg, fifo, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
	unlink(fifo);
	ck_assert_int_eq(config_load_file(&cfg, "/dev/null", err, sizeof(err)),
			 0);
}
END_TEST

/* Text only: malformed UTF-8 anywhere (comment or value) is refused with
 * the line; well-formed non-ASCII passes. */
START_TEST(test_utf8)
{
	static const char *const bad[] = {
		"# caf\xe9 (Latin-1)\n",          /* lone continuation-less byte */
		"metrics = /run/\xc3\n",          /* truncated 2-byte form */
		"metrics = /run/\xc0\xaf\n",      /* overlong '/' */
		"# \xed\xa0\x80 surrogate\n",    /* U+D800 */
		"# \xf4\x90\x80\x80 too high\n", /* U+110000 */
		"# \x80 stray continuation\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[128];

		snprintf(text, sizeof(text), "interval = 5\n%s", bad[i]);
		load_bad(text, 2, "not valid UTF-8");
	}
	ck_assert_msg(load("# caf\xc3\xa9, \xe2\x82\xac, \xf0\x9f\x94\x91\n"
			   "interval = 9\n") == 0, "%s", err);
	ck_assert_int_eq(cfg.interval, 9);
}
END_TEST

START_TEST(test_nul_byte)
{
	static const char text[] = "interval = 5\ninterval = 6\0 7\nmax-failures = 2\n";

	load_bad_len(text, sizeof(text) - 1, 2, "NUL");
	/* A NUL in a comment is still a NUL in the file. */
	static const char text2[] = "# a\0b\n";

	load_bad_len(text2, sizeof(text2) - 1, 1, "NUL");
}
END_TEST

START_TEST(test_control_characters)
{
	load_bad("interval = 5\x01\n", 1, "control");
	load_bad("interval = 5\nmetrics = /tmp/a\x1b[31m\n", 2, "control");
	/* A CR inside a line is not a line ending. */
	load_bad("interval\r= 5\n", 1, "control");
	load_bad("# x\x7f\n", 1, "control");
}
END_TEST

START_TEST(test_device_link_to_urandom)
{
	char link[600], text[700];

	snprintf(link, sizeof(link), "%s/not-a-hwrng", tmpdir);
	unlink(link);
	ck_assert_int_eq(symlink("/dev/urandom", link), 0);
	snprintf(text, sizeof(text), "[source hwrng]\ncredit = 5\ndevice = %s\n",
		 link);
	load_bad(text, 3, link);
	ck_assert_msg(strstr(err, "kernel"), "%s", err);
	/* And the device itself. */
	load_bad("[source file]\ndevice = /dev/random\n", 2, "/dev/random");
	unlink(link);
}
END_TEST

START_TEST(test_missing_file)
{
	char missing[600];

	fresh_config();
	snprintf(missing, sizeof(missing), "%s/no-such.conf", tmpdir);
	ck_assert_int_eq(config_load_file(&cfg, missing, err, sizeof(err)),
			 -ENOENT);
	ck_assert_msg(strstr(err, missing), "%s", err);
	/* Nothing was changed. */
	ck_assert_int_eq(cfg.interval, 60);
}
END_TEST

/* The first error stops the load; the error is the first bad line's. */
START_TEST(test_first_error_reported)
{
	load_bad("interval = 5\nbogus1 = 1\nbogus2 = 2\n", 2, "bogus1");
}
END_TEST

/* ---- config_set ------------------------------------------------------------ */

START_TEST(test_config_set)
{
	fresh_config();
	ck_assert_int_eq(config_set(&cfg, "nosuch", "1", err, sizeof(err)),
			 -ENOENT);
	ck_assert_int_eq(config_set(&cfg, "interval", "5", err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.interval, 5);
	memset(err, 0, sizeof(err));
	ck_assert_int_eq(config_set(&cfg, "interval", "0", err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "interval") && strstr(err, "'0'"), "%s", err);
	ck_assert_int_eq(cfg.interval, 5); /* unchanged */
	ck_assert_int_eq(config_set(&cfg, "random-device", "/dev/random", err,
				    sizeof(err)),
			 0);
	ck_assert_int_eq(config_set(&cfg, "random-device", "random", err,
				    sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(cfg.random_device, "/dev/random");
	/* Relative paths are fine for files rngfeed writes. */
	ck_assert_int_eq(config_set(&cfg, "metrics", "m.prom", err, sizeof(err)),
			 0);
	ck_assert_str_eq(cfg.metrics_path, "m.prom");
	ck_assert_int_eq(config_set(&cfg, "metrics", "", err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "wait-for-source", "on", err,
				    sizeof(err)),
			 0);
	ck_assert(cfg.wait_for_source);
	ck_assert_int_eq(config_set(&cfg, "wait-for-source", "No", err,
				    sizeof(err)),
			 0);
	ck_assert(!cfg.wait_for_source);
	ck_assert_int_eq(config_set(&cfg, "retry-delay", "0.25", err,
				    sizeof(err)),
			 0);
	ck_assert(near(cfg.retry_delay, 0.25));
	ck_assert_int_eq(config_set(&cfg, "retry-delay", " 1", err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(config_set(&cfg, "random-step", "64 ", err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(cfg.random_step, 64);
}
END_TEST

/* ---- with the command line -------------------------------------------------- */

static int parse(int argc, const char **args)
{
	char *argv[32];

	ck_assert_int_lt(argc, 32);
	for (int i = 0; i < argc; i++)
		argv[i] = (char *)args[i];
	argv[argc] = NULL;
	memset(err, 0, sizeof(err));
	return config_parse_args(&cfg, argc, argv, err, sizeof(err));
}

/* A credit in the file above the cap its H allows is refused once the
 * command line is parsed too, and a min-entropy given on either side
 * settles it: the order of the two does not matter. */
START_TEST(test_credit_cap_across_file_and_options)
{
	char f[600], f8[600];

	/* write_file() returns its own buffer: copy each path at once. */
	snprintf(f, sizeof(f), "%s",
		 write_file("cap.conf", "[source hwrng]\ncredit = 1024\n"));
	snprintf(f8, sizeof(f8), "%s",
		 write_file("cap8.conf", "[source hwrng]\ncredit = 1024\n"
					 "min-entropy = 8\n"));
	{
		const char *a[] = { "rngfeed", "-c", f };

		ck_assert_int_eq(parse(3, a), -EINVAL);
		ck_assert_msg(strstr(err, "768") && strstr(err, "at least 8,"),
			      "err: %s", err);
	}
	{
		const char *a[] = { "rngfeed", "-O", "hwrng:min-entropy=8", "-c",
				    f };

		ck_assert_msg(parse(5, a) == 0, "%s", err);
		ck_assert_uint_eq(source_config_credit(config_source(&cfg, "hwrng")),
				  1024);
	}
	{
		const char *a[] = { "rngfeed", "-c", f8 };

		ck_assert_msg(parse(3, a) == 0, "%s", err);
	}
	{
		/* The command line lowers H again: refused. */
		const char *a[] = { "rngfeed", "-c", f8, "-O",
				    "hwrng:min-entropy=7" };

		ck_assert_int_eq(parse(5, a), -EINVAL);
		ck_assert_msg(strstr(err, "896"), "err: %s", err);
	}
}
END_TEST

START_TEST(test_command_line_overrides)
{
	const char *file = write_file("override.conf",
				      "interval = 30\n"
				      "random-step = 128\n"
				      "max-failures = 4\n"
				      "[source hwrng]\n"
				      "credit = 512\n"
				      "[source rdrand]\n"
				      "enable = no\n");
	char f[600];

	snprintf(f, sizeof(f), "%s", file);
	/* The file alone. */
	{
		const char *a[] = { "rngfeed", "-c", f };

		ck_assert_msg(parse(3, a) == 0, "%s", err);
		ck_assert_str_eq(cfg.config_path, f);
		ck_assert_int_eq(cfg.interval, 30);
		ck_assert_int_eq(cfg.random_step, 128);
		ck_assert_uint_eq(source_config_credit(config_source(&cfg, "hwrng")),
				  512);
		ck_assert(!config_source(&cfg, "rdrand")->enabled);
	}
	/* Options win, whether they come before or after -c. */
	{
		const char *a[] = { "rngfeed", "--interval", "10", "-c", f,
				    "-s", "256", "-O", "hwrng:credit=100",
				    "--config", f, "-n", "rdrand" };

		ck_assert_msg(parse(13, a) == 0, "%s", err);
		ck_assert_int_eq(cfg.interval, 10);
		ck_assert_int_eq(cfg.random_step, 256);
		ck_assert_int_eq(cfg.max_failures, 4); /* from the file */
		ck_assert_uint_eq(source_config_credit(config_source(&cfg, "hwrng")),
				  100);
		ck_assert(config_source(&cfg, "rdrand")->enabled);
		ck_assert(!config_source(&cfg, "hwrng")->enabled);
	}
	/* A bad file named with -c: the parse fails naming file:line. */
	{
		const char *bad = write_file("bad.conf", "interval = 5\nnope = 1\n");
		char b[600], prefix[620];
		const char *a[] = { "rngfeed", "-c", b, "--interval", "7" };

		snprintf(b, sizeof(b), "%s", bad);
		snprintf(prefix, sizeof(prefix), "%s:2:", b);
		ck_assert_int_eq(parse(5, a), -EINVAL);
		ck_assert_msg(strstr(err, prefix) && strstr(err, "nope"), "%s",
			      err);
	}
}
END_TEST

START_TEST(test_missing_named_file)
{
	char missing[600];
	const char *a[] = { "rngfeed", "-c", missing, "-f" };

	snprintf(missing, sizeof(missing), "%s/absent.conf", tmpdir);
	ck_assert_int_eq(parse(4, a), -EINVAL);
	ck_assert_msg(strstr(err, missing), "message does not name the file: %s",
		      err);
	ck_assert_msg(!strchr(err, '\n'), "%s", err);
}
END_TEST

START_TEST(test_missing_default_file)
{
	const char *a[] = { "rngfeed", "-f", "--interval", "9" };
	struct stat st;

	if (stat(CONFIG_DEFAULT_PATH, &st) == 0) {
		printf("SKIP: %s exists, so a missing default file cannot be "
		       "tested\n",
		       CONFIG_DEFAULT_PATH);
		return;
	}
	ck_assert_msg(parse(4, a) == 0, "a missing default file is fine: %s",
		      err);
	ck_assert_str_eq(cfg.config_path, CONFIG_DEFAULT_PATH);
	ck_assert_int_eq(cfg.interval, 9);
}
END_TEST

static Suite *conffile_suite(void)
{
	Suite *s = suite_create("conffile");
	TCase *tc;

	tc = tcase_create("good");
	tcase_add_test(tc, test_good_file);
	tcase_add_test(tc, test_empty_files);
	tcase_add_test(tc, test_last_value_wins);
	tcase_add_test(tc, test_section_header_comment);
	tcase_add_test(tc, test_number_limits);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, test_unknown_key);
	tcase_add_test(tc, test_unknown_section);
	tcase_add_test(tc, test_malformed_section);
	tcase_add_test(tc, test_missing_equals);
	tcase_add_test(tc, test_empty_value);
	tcase_add_test(tc, test_bad_numbers);
	tcase_add_test(tc, test_bad_source_values);
	tcase_add_test(tc, test_bad_paths);
	tcase_add_test(tc, test_config_key_in_file);
	tcase_add_test(tc, test_long_line);
	tcase_add_test(tc, test_not_a_regular_file);
	tcase_add_test(tc, test_utf8);
	tcase_add_test(tc, test_nul_byte);
	tcase_add_test(tc, test_control_characters);
	tcase_add_test(tc, test_device_link_to_urandom);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_first_error_reported);
	suite_add_tcase(s, tc);

	tc = tcase_create("config_set and the command line");
	tcase_add_test(tc, test_config_set);
	tcase_add_test(tc, test_command_line_overrides);
	tcase_add_test(tc, test_credit_cap_across_file_and_options);
	tcase_add_test(tc, test_missing_named_file);
	tcase_add_test(tc, test_missing_default_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int status;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	status = td_run(conffile_suite());
	td_tree_remove(tmpdir);
	return status;
}
