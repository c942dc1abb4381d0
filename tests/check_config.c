// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for config_parse_args(): every bad input is refused with a
 * one-line message that names the culprit (the caller exits 2), and every
 * good form sets what it says.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rngfeed/config.h"
#include "rngfeed/source.h"
#include "test_doubles.h"

#define MAX_ARGS 16

static struct rngfeed_config cfg;
static char err[512];
static char argtext[512]; /* the arguments, for failure messages */

/*
 * Parses "rngfeed -c /dev/null" @first and the rest of @ap, up to a
 * NULL.  getopt may
 * permute the pointer array, never the strings, so the casts are safe.
 */
static int parse_list(const char *first, va_list ap)
{
	/* An empty config file, so that an /etc/rngfeed.conf on the test
	 * machine cannot change what the command line means. */
	char *argv[MAX_ARGS + 4] = { (char *)"rngfeed", (char *)"-c",
				     (char *)"/dev/null" };
	int argc = 3;

	argtext[0] = '\0';
	for (const char *a = first; a; a = va_arg(ap, const char *)) {
		ck_assert_int_le(argc, MAX_ARGS);
		argv[argc++] = (char *)a;
		snprintf(argtext + strlen(argtext),
			 sizeof(argtext) - strlen(argtext), "%s'%s'",
			 argc > 4 ? " " : "", a);
	}
	memset(err, 0, sizeof(err));
	return config_parse_args(&cfg, argc, argv, err, sizeof(err));
}

/* Must parse; the arguments are NULL-terminated. */
static void parse_ok(const char *first, ...)
{
	va_list ap;
	int r;

	va_start(ap, first);
	r = parse_list(first, ap);
	va_end(ap);
	ck_assert_msg(r == 0, "%s: refused (%d): %s", argtext, r, err);
}

/*
 * Must be refused with @want and a one-line message containing @culprit.
 * The arguments follow @culprit, NULL-terminated.
 */
static void parse_bad(int want, const char *culprit, ...)
{
	va_list ap;
	const char *first;
	int r;

	va_start(ap, culprit);
	/* Not parse_list(va_arg(ap, ...), ap): the order in which arguments
	 * are evaluated is unspecified, and where va_list is a plain pointer
	 * (i686) ap was copied before va_arg moved it, so the first
	 * argument came twice. */
	first = va_arg(ap, const char *);
	r = parse_list(first, ap);
	va_end(ap);
	ck_assert_msg(r == want, "%s: got %d, want %d (message: %s)", argtext,
		      r, want, err);
	ck_assert_msg(err[0] != '\0', "%s: no message", argtext);
	ck_assert_msg(strstr(err, culprit),
		      "%s: message \"%s\" does not name \"%s\"", argtext, err,
		      culprit);
	ck_assert_msg(!strchr(err, '\n'), "%s: message is not one line: %s",
		      argtext, err);
}

#define BAD(culprit, ...) parse_bad(-EINVAL, culprit, __VA_ARGS__, NULL)

static const struct source_config *src(const char *name)
{
	const struct source_config *sc = config_source(&cfg, name);

	ck_assert_msg(sc != NULL, "no source '%s' in the config", name);
	return sc;
}

/* Is @name one of the space-separated @names? */
static bool name_in(const char *name, const char *names)
{
	size_t len = strlen(name);

	for (const char *p = names; (p = strstr(p, name)); p += len)
		if ((p == names || p[-1] == ' ') && (p[len] == ' ' || !p[len]))
			return true;
	return false;
}

/*
 * Exactly the sources in @names are enabled (@only) or exactly those are
 * disabled (!@only).  By name, so that drivers added later do not matter.
 */
static void check_enabled(bool only, const char *names)
{
	for (size_t i = 0; i < cfg.n_sources; i++) {
		const char *name = cfg.sources[i].driver->name;
		bool want = name_in(name, names) == only;

		ck_assert_msg(cfg.sources[i].enabled == want,
			      "%s: source %s is %s", argtext, name,
			      want ? "disabled" : "enabled");
	}
}

#define ONLY_ENABLED(names) check_enabled(true, names)
#define ALL_BUT(names) check_enabled(false, names)

/* ---- bad input -------------------------------------------------------------- */

START_TEST(test_unknown_options)
{
	BAD("--bogus", "--bogus");
	BAD("--bogus", "-l", "--bogus=1");
	BAD("-Z", "-Z");
	BAD("-Z", "-fZ");
}
END_TEST

START_TEST(test_value_on_flag)
{
	/* A long flag given a value: the message must name the option the
	 * user wrote, not a short letter or a truncated string. */
	BAD("--list", "--list=1");
	BAD("--raw", "-n", "rdrand", "--raw=yes");
	BAD("--help", "--help=x");
}
END_TEST

START_TEST(test_missing_value)
{
	BAD("-n", "-n");
	BAD("-x", "-x");
	BAD("-O", "-O");
	BAD("-r", "-r");
	BAD("--include", "--include");
	BAD("--bytes", "--raw", "-n", "rdrand", "--bytes");
	BAD("--min-entropy", "--check", "--min-entropy");
}
END_TEST

START_TEST(test_unknown_source)
{
	BAD("nosuch", "-n", "nosuch");
	BAD("nosuch", "-x", "nosuch");
	BAD("nosuch", "-O", "nosuch:credit=1");
	BAD("HWRNG", "-n", "HWRNG");
	BAD("''", "-n", "");
}
END_TEST

START_TEST(test_malformed_O)
{
	static const char *const bad[] = { "hwrng", "hwrng:", ":credit=1",
					   "hwrng:credit", "hwrng:=1", ":",
					   "=", "hwrng=1" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		BAD(bad[i], "-O", bad[i]);
	BAD("colour", "-O", "hwrng:colour=red");
	BAD("device", "-O", "rdrand:device=/dev/hwrng");
	BAD("x", "--check", "-O", "check:x=4");
}
END_TEST

START_TEST(test_bad_credit)
{
	static const char *const bad[] = { "-1", "1025", "abc", "1e3", " 5",
					   "", "5x", "0x10" };
	char opt[64], culprit[64];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(opt, sizeof(opt), "rdrand:credit=%s", bad[i]);
		snprintf(culprit, sizeof(culprit), "'%s'", bad[i]);
		BAD(culprit, "-O", opt);
	}
}
END_TEST

START_TEST(test_bad_bytes)
{
	static const char *const bad[] = { "-5", "x", "10Q", "", " 5", "1.5",
					   "k", "1e3", "99999999999999999999" };
	char culprit[64];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(culprit, sizeof(culprit), "'%s'", bad[i]);
		BAD(culprit, "--raw", "-n", "rdrand", "--bytes", bad[i]);
	}
	/* The cap is 2^62 = 2^32 Gi: one more overflows only after the
	 * suffix is applied. */
	BAD("'4294967297Gi'", "--raw", "-n", "rdrand", "--bytes",
	    "4294967297Gi");
}
END_TEST

START_TEST(test_raw_needs_one_source)
{
	BAD("--raw", "--raw");
	BAD("--raw", "--raw", "-n", "rdrand", "-n", "rdseed");
	BAD("--raw", "--raw", "-x", "hwrng");
	BAD("--raw", "--raw", "-n", "rdrand", "-x", "rdrand");
	BAD("--bytes", "--bytes", "10");
	BAD("--bytes", "--list", "--bytes", "10");
}
END_TEST

START_TEST(test_min_entropy)
{
	/* 0.001 and 1e-300 were accepted, and the reader never started:
	 * below 60/512 the health tests cannot fail (source.h). */
	static const char *const bad[] = { "0", "9", "nan", "inf", "-1",
					   "abc", "", "8.5", "4x", "0.001",
					   "1e-300", "0.117" };
	char culprit[64], opt[64];

	BAD("--min-entropy", "--min-entropy", "4");
	parse_ok("--check", "--min-entropy", "0.1171875", NULL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(culprit, sizeof(culprit), "'%s'", bad[i]);
		BAD(culprit, "--check", "--min-entropy", bad[i]);
		snprintf(opt, sizeof(opt), "check:h=%s", bad[i]);
		BAD(culprit, "--check", "-O", opt);
	}
}
END_TEST

/* Issue 24 (13): every seconds option is a plain decimal (no hex,
 * exponent, sign or blank) and no number takes a leading blank. */
START_TEST(test_seconds_decimal_only)
{
	static const char *const opts[] = { "--retry-delay", "--retry-max",
					     "--ready-timeout",
					     "--stats-interval",
					     "--reseed-seconds", "--interval" };
	static const char *const bad[] = { "0x10", "1e3", "0x1p+9", " 10",
					   "+10", "10 ", "1,5", ".", "" };
	char culprit[64];

	for (size_t o = 0; o < sizeof(opts) / sizeof(opts[0]); o++) {
		parse_ok("--retry-max", "600", opts[o], "60", NULL);
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(culprit, sizeof(culprit), "'%s'", bad[i]);
			BAD(culprit, opts[o], bad[i]);
		}
	}
	parse_ok("--retry-delay", "2.5", "--ready-timeout", ".5", NULL);
	parse_ok("--interval", "60.0", NULL);
	BAD("'0.5'", "--interval", "0.5");
	BAD("' 7'", "--check", "--min-entropy", " 7");
	BAD("' 7'", "-O", "rdrand:min-entropy= 7");
	BAD("' 0660'", "--egd-socket-mode", " 0660");
}
END_TEST

/* Driver option values are checked when parsed: one line, and the
 * caller exits 2 ("-O rdrand:tries=abc --list" exited 0). */
START_TEST(test_bad_driver_option_values)
{
	BAD("'abc'", "-O", "rdrand:tries=abc", "--list");
	BAD("tries", "-O", "rdseed:tries=0", "--list");
	BAD("'maybe'", "-O", "virtio:select=maybe");
	BAD("select", "-O", "virtio:select=2");
	BAD("'sometimes'", "-O", "rdseed:force=sometimes");
	BAD("timeout-ms", "-O", "tpm:timeout-ms=-5");
	BAD("sysfs", "-O", "virtio:sysfs=relative");
	BAD("from 0.1171875", "-O", "hwrng:min-entropy=0.001");
	BAD("'1e-300'", "-O", "rdrand:min-entropy=1e-300");
	parse_ok("-O", "rdrand:tries=5", "-O", "virtio:select=yes", "-O",
		 "rdseed:force=no", "-O", "tpm:timeout-ms=100", NULL);
}
END_TEST

/* A credit above what the source's H allows is refused once every option
 * is parsed, whichever comes first; hwrng's H of 6 allows 768. */
START_TEST(test_credit_cap)
{
	BAD("at least 8,", "-O", "hwrng:credit=1024");
	BAD("768", "-O", "hwrng:credit=769", "--list");
	BAD("at least 8,", "-O", "hwrng:min-entropy=6", "-O",
	    "hwrng:credit=1024");
	BAD("at least 6.25,", "-O", "rdseed:min-entropy=4", "-O",
	    "rdseed:credit=800");
	parse_ok("-O", "hwrng:credit=1024", "-O", "hwrng:min-entropy=8", NULL);
	ck_assert_uint_eq(source_config_credit(src("hwrng")), 1024);
	parse_ok("-O", "hwrng:min-entropy=8", "-O", "hwrng:credit=1024", NULL);
	ck_assert_uint_eq(source_config_credit(src("hwrng")), 1024);
	parse_ok("-O", "hwrng:credit=768", NULL);
	/* A disabled source is checked too: its config is still wrong. */
	BAD("file", "-n", "rdrand", "-O", "file:credit=1024");
	/* The default follows a lower H without complaint. */
	parse_ok("-O", "rdseed:min-entropy=4", NULL);
	ck_assert_uint_eq(source_config_credit(src("rdseed")), 512);
}
END_TEST

START_TEST(test_loopback_refused)
{
	parse_bad(-ELOOP, "/dev/urandom", "-r", "/dev/urandom", NULL);
	ck_assert_msg(strstr(err, "kernel's own random output"), "%s", err);
	parse_bad(-ELOOP, "/dev/random", "-r", "/dev/random", NULL);
	parse_bad(-ELOOP, "/dev/random", "--rng-device=/dev/random", NULL);
	parse_bad(-ELOOP, "/dev/urandom", "-O", "hwrng:device=/dev/urandom",
		  NULL);
	parse_bad(-ELOOP, "kernel's own random output", "-O",
		  "file:device=/dev/random", NULL);
}
END_TEST

START_TEST(test_mode_conflicts)
{
	BAD("exclude each other", "--list", "--raw", "-n", "rdrand");
	BAD("exclude each other", "--raw", "-n", "rdrand", "--list");
	BAD("exclude each other", "--check", "--list");
	BAD("exclude each other", "--raw", "-n", "rdrand", "--check");
}
END_TEST

START_TEST(test_stray_arguments)
{
	BAD("foo", "foo");
	BAD("foo", "--list", "foo");
	BAD("b", "--check", "a", "b");
	BAD("hwrng", "-n", "rdrand", "--raw", "hwrng");
}
END_TEST

/* ---- good input -------------------------------------------------------------- */

START_TEST(test_defaults)
{
	parse_ok(NULL);
	ck_assert_int_eq(cfg.mode, MODE_DAEMON);
	ck_assert(!cfg.foreground);
	ck_assert_int_eq(cfg.verbosity, 1);
	ck_assert_int_eq(cfg.bytes, -1);
	ck_assert_ptr_null(cfg.check_path);
	ck_assert(!cfg.sources_named);
	ck_assert_uint_eq(cfg.n_sources, source_driver_count());
	for (size_t i = 0; i < cfg.n_sources; i++) {
		ck_assert_ptr_eq(cfg.sources[i].driver, source_drivers[i]);
		ck_assert(cfg.sources[i].enabled);
		ck_assert_uint_eq(source_config_credit(&cfg.sources[i]),
				  source_drivers[i]->default_credit);
	}
	ck_assert_ptr_null(config_source(&cfg, "nosuch"));
}
END_TEST

START_TEST(test_include_exclude)
{
	parse_ok("-n", "rdrand", NULL);
	ck_assert(cfg.sources_named);
	ONLY_ENABLED("rdrand");
	parse_ok("--include", "file", "-n", "hwrng", NULL);
	ONLY_ENABLED("hwrng file");
	parse_ok("-x", "rdrand", NULL);
	ck_assert(!cfg.sources_named);
	ALL_BUT("rdrand");
	parse_ok("-x", "rdrand", "--exclude=hwrng", NULL);
	ALL_BUT("rdrand hwrng");
	parse_ok("-n", "rdrand", "-n", "rdseed", "-x", "rdrand", NULL);
	ONLY_ENABLED("rdseed");
}
END_TEST

START_TEST(test_source_options)
{
	parse_ok("-O", "rdrand:credit=2", NULL);
	ck_assert_uint_eq(source_config_credit(src("rdrand")), 2);
	ck_assert_uint_eq(source_config_credit(src("rdseed")),
			  src("rdseed")->driver->default_credit);
	parse_ok("-O", "hwrng:credit=0", "--option=rdseed:credit=1024", NULL);
	ck_assert_uint_eq(source_config_credit(src("hwrng")), 0);
	ck_assert_uint_eq(source_config_credit(src("rdseed")), 1024);
	parse_ok("-O", "rdseed:enable=no", "-O", "rdrand:tries=20", NULL);
	ck_assert(!src("rdseed")->enabled);
	ck_assert_str_eq(source_config_get(src("rdrand"), "tries"), "20");
	/* The value may itself hold ':' and '='. */
	parse_ok("-O", "file:device=/tmp/a:b=c", NULL);
	ck_assert_str_eq(source_config_device(src("file")), "/tmp/a:b=c");
}
END_TEST

START_TEST(test_rng_device)
{
	parse_ok("-r", "/tmp/not-a-kernel-device", NULL);
	ck_assert_str_eq(source_config_device(src("hwrng")),
			 "/tmp/not-a-kernel-device");
	parse_ok("--rng-device=/dev/hwrng", NULL);
	ck_assert_str_eq(source_config_device(src("hwrng")), "/dev/hwrng");
	/* -r is the same as -O hwrng:device=; the last one wins. */
	parse_ok("-r", "/a", "-O", "hwrng:device=/b", NULL);
	ck_assert_str_eq(source_config_device(src("hwrng")), "/b");
}
END_TEST

/* --raw -n rdrand --bytes @arg must give @want. */
static void check_bytes(const char *arg, long long want)
{
	parse_ok("--raw", "-n", "rdrand", "--bytes", arg, NULL);
	ck_assert_int_eq(cfg.mode, MODE_RAW);
	ck_assert_msg(cfg.bytes == want, "--bytes %s: got %lld, want %lld", arg,
		      cfg.bytes, want);
}

START_TEST(test_bytes_suffixes)
{
	check_bytes("0", 0);
	check_bytes("100000", 100000);
	check_bytes("10k", 10000);
	check_bytes("10K", 10000);
	check_bytes("2M", 2000000);
	check_bytes("3G", 3000000000LL);
	check_bytes("1Ki", 1024);
	check_bytes("4Mi", 4LL << 20);
	check_bytes("1Gi", 1LL << 30);
	check_bytes("4294967296Gi", 1LL << 62);
	parse_ok("-n", "rdseed", "--bytes=5", "--raw", NULL);
	ck_assert_int_eq(cfg.bytes, 5);
	ONLY_ENABLED("rdseed");
	/* --raw without --bytes: unlimited, -1. */
	parse_ok("-n", "rdseed", "--raw", NULL);
	ck_assert_int_eq(cfg.bytes, -1);
}
END_TEST

START_TEST(test_check_mode)
{
	parse_ok("--check", NULL);
	ck_assert_int_eq(cfg.mode, MODE_CHECK);
	ck_assert_ptr_null(cfg.check_path);
	parse_ok("--check", "/tmp/data.bin", NULL);
	ck_assert_str_eq(cfg.check_path, "/tmp/data.bin");
	/* getopt permutes: the file may come first. */
	parse_ok("/tmp/data.bin", "--check", NULL);
	ck_assert_str_eq(cfg.check_path, "/tmp/data.bin");
	parse_ok("--check", "-O", "check:h=4", NULL);
	ck_assert(fabs(cfg.min_entropy - 4.0) < 1e-12);
	parse_ok("--check", "--min-entropy", "7.5", NULL);
	ck_assert(fabs(cfg.min_entropy - 7.5) < 1e-12);
	parse_ok("--check", "--min-entropy=8", NULL);
	ck_assert(fabs(cfg.min_entropy - 8.0) < 1e-12);
}
END_TEST

START_TEST(test_bench_fill)
{
	static const char *const bad[] = { "0", "-1", "abc", "", "3601",
					   "nan", "5x" };
	char culprit[64];

	parse_ok(NULL);
	ck_assert(cfg.bench_fill == 0);
	parse_ok("-f", "--bench-fill", "2.5", NULL);
	ck_assert(fabs(cfg.bench_fill - 2.5) < 1e-12);
	ck_assert_int_eq(cfg.mode, MODE_DAEMON);
	/* Only a foreground daemon: never a detached one or another mode. */
	BAD("--bench-fill", "--bench-fill", "1");
	BAD("--bench-fill", "-f", "-t", "--bench-fill", "1");
	BAD("--bench-fill", "-f", "--stdout", "--bench-fill", "1");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(culprit, sizeof(culprit), "'%s'", bad[i]);
		BAD(culprit, "-f", "--bench-fill", bad[i]);
	}
}
END_TEST

START_TEST(test_verbosity)
{
	parse_ok("-v", NULL);
	ck_assert_int_eq(cfg.verbosity, 2);
	parse_ok("-vv", NULL);
	ck_assert_int_eq(cfg.verbosity, 3);
	parse_ok("--verbose", "-v", NULL);
	ck_assert_int_eq(cfg.verbosity, 3);
	parse_ok("-q", NULL);
	ck_assert_int_eq(cfg.verbosity, 0);
	parse_ok("--quiet", NULL);
	ck_assert_int_eq(cfg.verbosity, 0);
	parse_ok("-f", NULL);
	ck_assert(cfg.foreground);
	parse_ok("--foreground", "-l", NULL);
	ck_assert(cfg.foreground);
	ck_assert_int_eq(cfg.mode, MODE_LIST);
}
END_TEST

START_TEST(test_help_version)
{
	parse_ok("-h", NULL);
	ck_assert_int_eq(cfg.mode, MODE_HELP);
	parse_ok("--help", NULL);
	ck_assert_int_eq(cfg.mode, MODE_HELP);
	parse_ok("-V", NULL);
	ck_assert_int_eq(cfg.mode, MODE_VERSION);
	parse_ok("--version", NULL);
	ck_assert_int_eq(cfg.mode, MODE_VERSION);
	parse_ok("--list", NULL);
	ck_assert_int_eq(cfg.mode, MODE_LIST);
	parse_ok("-l", "-l", NULL);
	ck_assert_int_eq(cfg.mode, MODE_LIST);
}
END_TEST

START_TEST(test_usage_text)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	static const char *const must[] = { "--list", "--include", "--exclude",
					    "--option", "--rng-device", "--raw",
					    "--bytes", "--check", "--verbose",
					    "--quiet", "--version", "--help" };

	ck_assert_ptr_nonnull(f);
	config_usage(f);
	fclose(f);
	for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++)
		ck_assert_msg(strstr(text, must[i]), "usage lacks %s", must[i]);
	free(text);
}
END_TEST

/* ---- parsing again in the same process --------------------------------------- */

START_TEST(test_reparse)
{
	/* Everything from the first parse must be gone in the second. */
	parse_ok("-n", "rdrand", "-v", "-f", "--raw", "--bytes", "5", "-O",
		 "rdrand:credit=7", "-r", "/tmp/x", NULL);
	parse_ok("--list", NULL);
	ck_assert_int_eq(cfg.mode, MODE_LIST);
	ck_assert_int_eq(cfg.verbosity, 1);
	ck_assert(!cfg.foreground);
	ck_assert_int_eq(cfg.bytes, -1);
	ck_assert(!cfg.sources_named);
	ALL_BUT("");
	ck_assert_uint_eq(source_config_credit(src("rdrand")),
			  src("rdrand")->driver->default_credit);
	ck_assert_str_eq(source_config_device(src("hwrng")), "/dev/hwrng");
	ck_assert_uint_eq(cfg.n_sources, source_driver_count());
}
END_TEST

START_TEST(test_reparse_after_error)
{
	/* An error in the middle of a short-option group leaves getopt
	 * half-way through an argument; the next parse must start afresh. */
	BAD("-Z", "-fZv", "-n", "rdrand");
	parse_ok("-n", "hwrng", "--raw", NULL);
	ONLY_ENABLED("hwrng");
	ck_assert(!cfg.foreground);
	ck_assert_int_eq(cfg.verbosity, 1);
	BAD("--bogus", "-v", "--bogus", "x");
	parse_ok("--check", "f", NULL);
	ck_assert_str_eq(cfg.check_path, "f");
	ck_assert_int_eq(cfg.verbosity, 1);
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc;

	tc = tcase_create("bad");
	tcase_add_test(tc, test_unknown_options);
	tcase_add_test(tc, test_value_on_flag);
	tcase_add_test(tc, test_missing_value);
	tcase_add_test(tc, test_unknown_source);
	tcase_add_test(tc, test_malformed_O);
	tcase_add_test(tc, test_bad_credit);
	tcase_add_test(tc, test_bad_bytes);
	tcase_add_test(tc, test_raw_needs_one_source);
	tcase_add_test(tc, test_min_entropy);
	tcase_add_test(tc, test_seconds_decimal_only);
	tcase_add_test(tc, test_bad_driver_option_values);
	tcase_add_test(tc, test_credit_cap);
	tcase_add_test(tc, test_loopback_refused);
	tcase_add_test(tc, test_mode_conflicts);
	tcase_add_test(tc, test_stray_arguments);
	suite_add_tcase(s, tc);

	tc = tcase_create("good");
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_include_exclude);
	tcase_add_test(tc, test_source_options);
	tcase_add_test(tc, test_rng_device);
	tcase_add_test(tc, test_bytes_suffixes);
	tcase_add_test(tc, test_check_mode);
	tcase_add_test(tc, test_verbosity);
	tcase_add_test(tc, test_help_version);
	tcase_add_test(tc, test_usage_text);
	tcase_add_test(tc, test_bench_fill);
	suite_add_tcase(s, tc);

	tc = tcase_create("reparse");
	tcase_add_test(tc, test_reparse);
	tcase_add_test(tc, test_reparse_after_error);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return td_run(config_suite()); }
