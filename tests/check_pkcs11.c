// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The pkcs11 source's pure parts: a p11-kit module name resolved through
 * module files (an absolute and a relative "module:" line, a name not
 * there, a path that is neither), the pin file (its newline dropped, a
 * mode others may read refused, empty, too long, a FIFO refused without
 * waiting), and the driver's option checks and probe.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rngfeed/pkcs11_token.h"
#include "rngfeed/sources.h"
#include "test_doubles.h"

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/check_pkcs11.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void put(const char *name, const char *text, mode_t mode)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, mode), 0);
}

START_TEST(test_module_by_name)
{
	char path[256], why[256] = "";

	put("abs.module", "# comment\nmodule: /opt/x/libabs.so \n", 0644);
	put("rel.module", "  module:librel.so\n", 0644);
	put("none.module", "critical: yes\n", 0644);
	ck_assert_int_eq(pkcs11_module_path("abs", dir, path, sizeof(path), why,
					    sizeof(why)), 0);
	ck_assert_str_eq(path, "/opt/x/libabs.so");
	ck_assert_int_eq(pkcs11_module_path("rel", dir, path, sizeof(path), why,
					    sizeof(why)), 0);
	ck_assert_str_eq(path, RNGFEED_P11_MODULE_DIR "/librel.so");
	/* A later directory is searched too. */
	{
		char dirs[160];

		snprintf(dirs, sizeof(dirs), "/nonexistent:%s", dir);
		ck_assert_int_eq(pkcs11_module_path("abs", dirs, path,
						    sizeof(path), why,
						    sizeof(why)), 0);
	}
	ck_assert_int_eq(pkcs11_module_path("none", dir, path, sizeof(path), why,
					    sizeof(why)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(why, "no none.module"));
	ck_assert_int_eq(pkcs11_module_path("missing", dir, path, sizeof(path),
					    why, sizeof(why)), -ENOENT);
	ck_assert_int_eq(pkcs11_module_path("/usr/lib/x.so", dir, path,
					    sizeof(path), why, sizeof(why)), 0);
	ck_assert_str_eq(path, "/usr/lib/x.so");
	ck_assert_int_eq(pkcs11_module_path("lib/x.so", dir, path, sizeof(path),
					    why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(pkcs11_module_path("..", dir, path, sizeof(path), why,
					    sizeof(why)), -EINVAL);
	ck_assert_int_eq(pkcs11_module_path("", dir, path, sizeof(path), why,
					    sizeof(why)), -EINVAL);
}
END_TEST

static int read_pin(const char *name, char *pin, size_t *n, char *why)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return pkcs11_read_pin_file(path, pin, 256, n, why, 256);
}

START_TEST(test_pin_file)
{
	char pin[256], why[256], big[400];
	size_t n = 0;

	put("pin", "123456\n", 0600);
	ck_assert_int_eq(read_pin("pin", pin, &n, why), 0);
	ck_assert_str_eq(pin, "123456");
	ck_assert_uint_eq(n, 6);
	put("crlf", "12 34\r\n", 0640);
	ck_assert_int_eq(read_pin("crlf", pin, &n, why), 0);
	ck_assert_str_eq(pin, "12 34");
	/* Others may read it, or the group change it: refused, not read. */
	put("world", "123456\n", 0644);
	ck_assert_int_eq(read_pin("world", pin, &n, why), -EACCES);
	ck_assert_ptr_nonnull(strstr(why, "chmod 600"));
	put("groupw", "123456\n", 0660);
	ck_assert_int_eq(read_pin("groupw", pin, &n, why), -EACCES);
	put("empty", "\n", 0600);
	ck_assert_int_eq(read_pin("empty", pin, &n, why), -EINVAL);
	memset(big, '7', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	put("big", big, 0600);
	ck_assert_int_eq(read_pin("big", pin, &n, why), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "longer than 255"));
	ck_assert_int_eq(read_pin("absent", pin, &n, why), -ENOENT);
	{
		char fifo[160];

		snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
		ck_assert_int_eq(mkfifo(fifo, 0600), 0);
		/* No writer: refused at once, never waited on. */
		ck_assert_int_eq(read_pin("fifo", pin, &n, why), -EINVAL);
		ck_assert_ptr_nonnull(strstr(why, "not a regular file"));
	}
}
END_TEST

START_TEST(test_driver_options_and_probe)
{
	struct source_config cfg;
	char err[256], why[256], opt[300];

	source_config_init(&cfg, &source_pkcs11);
	ck_assert_uint_eq(source_config_credit(&cfg), 0);
	ck_assert_int_eq(source_config_set(&cfg, "token", "", err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(source_config_set(&cfg, "token",
					   "0123456789012345678901234567890123",
					   err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(source_config_set(&cfg, "pin-file", "rel", err,
					   sizeof(err)),
			 -EINVAL);
	/* Without module= the probe says what to give. */
	ck_assert_int_lt(source_pkcs11.probe(&cfg, why, sizeof(why)), 0);
	ck_assert_ptr_nonnull(strstr(why, "module=PATH"));
	put("lib.so", "", 0644);
	snprintf(opt, sizeof(opt), "%s/lib.so", dir);
	ck_assert_int_eq(source_config_set(&cfg, "module", opt, err, sizeof(err)), 0);
	ck_assert_int_eq(source_pkcs11.probe(&cfg, why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "token=LABEL"));
	ck_assert_int_eq(source_config_set(&cfg, "token", "T", err, sizeof(err)), 0);
	ck_assert_int_eq(source_pkcs11.probe(&cfg, why, sizeof(why)), 0);
	put("pin", "1\n", 0604);
	snprintf(opt, sizeof(opt), "%s/pin", dir);
	ck_assert_int_eq(source_config_set(&cfg, "pin-file", opt, err, sizeof(err)), 0);
	ck_assert_int_eq(source_pkcs11.probe(&cfg, why, sizeof(why)), -EACCES);
	snprintf(opt, sizeof(opt), "%s/pin", dir);
	ck_assert_int_eq(chmod(opt, 0600), 0);
	ck_assert_int_eq(source_pkcs11.probe(&cfg, why, sizeof(why)), 0);
}
END_TEST

/* A module that is not there: open() loads nothing, the read says why. */
START_TEST(test_read_of_a_missing_module)
{
	struct source_config cfg;
	char err[256], why[256], opt[200], buf[16];
	void *st = NULL;

	source_config_init(&cfg, &source_pkcs11);
	snprintf(opt, sizeof(opt), "%s/absent.so", dir);
	ck_assert_int_eq(source_config_set(&cfg, "module", opt, err, sizeof(err)), 0);
	ck_assert_int_eq(source_config_set(&cfg, "token", "T", err, sizeof(err)), 0);
	ck_assert_int_eq(source_pkcs11.open(&cfg, &st, why, sizeof(why)), 0);
	ck_assert_int_eq(source_pkcs11.read(st, buf, sizeof(buf)), -ENOENT);
	ck_assert_int_eq(source_pkcs11.why_failed(st, why, sizeof(why)), 0);
	ck_assert_ptr_nonnull(strstr(why, "cannot load module"));
	source_pkcs11.close(st);
}
END_TEST

int main(void)
{
	return td_run(td_suite(
		"pkcs11", "core", setup, teardown, 0,
		TD_TESTS(test_module_by_name, test_pin_file,
			 test_driver_options_and_probe,
			 test_read_of_a_missing_module)));
}
