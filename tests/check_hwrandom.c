// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hw_random sysfs parsing and the virtio driver's decisions, against
 * fixture directories that stand in for /sys/class/misc/hw_random.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rngfeed/hwrandom.h"
#include "rngfeed/source.h"
#include "rngfeed/sources.h"
#include "test_doubles.h"

static char dir[64];

/* A fake sysfs attribute of this test's directory. */
static void put(const char *file, const char *text)
{
	td_put(dir, file, text);
}

static void get(const char *file, char *buf, size_t len)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, (int)len, f));
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

static void setup(void)
{
	td_tmpdir(dir, sizeof(dir), "hwrandom");
}

static void teardown(void)
{
	td_tree_remove(dir);
}

START_TEST(current_names_the_device)
{
	char name[HWRANDOM_NAME_LEN];

	put("rng_current", "virtio_rng.0\n");
	ck_assert_int_eq(hwrandom_current(dir, name, sizeof(name)), 12);
	ck_assert_str_eq(name, "virtio_rng.0");
}
END_TEST

START_TEST(current_none_is_enodev)
{
	char name[HWRANDOM_NAME_LEN];

	put("rng_current", "none\n");
	ck_assert_int_eq(hwrandom_current(dir, name, sizeof(name)), -ENODEV);
	put("rng_current", "\n");
	ck_assert_int_eq(hwrandom_current(dir, name, sizeof(name)), -ENODEV);
}
END_TEST

START_TEST(missing_files_are_errors)
{
	char name[HWRANDOM_NAME_LEN];

	ck_assert_int_eq(hwrandom_current(dir, name, sizeof(name)), -ENOENT);
	ck_assert_int_eq(hwrandom_find(dir, "virtio_rng.", name, sizeof(name)),
			 -ENOENT);
}
END_TEST

START_TEST(find_among_several)
{
	char name[HWRANDOM_NAME_LEN];

	put("rng_available", "tpm-rng-0 virtio_rng.1 virtio_rng.0 \n");
	ck_assert_int_eq(hwrandom_find(dir, "virtio_rng.", name, sizeof(name)),
			 12);
	ck_assert_str_eq(name, "virtio_rng.1");
	ck_assert_int_eq(hwrandom_find(dir, "tpm-rng", name, sizeof(name)), 9);
	ck_assert_str_eq(name, "tpm-rng-0");
	ck_assert_int_eq(hwrandom_find(dir, "amd", name, sizeof(name)),
			 -ENODEV);
}
END_TEST

START_TEST(find_none_available)
{
	char name[HWRANDOM_NAME_LEN];

	put("rng_available", "\n");
	ck_assert_int_eq(hwrandom_find(dir, "virtio_rng.", name, sizeof(name)),
			 -ENODEV);
}
END_TEST

START_TEST(find_name_too_long)
{
	char name[8];

	put("rng_available", "virtio_rng.12345\n");
	ck_assert_int_eq(hwrandom_find(dir, "virtio_rng.", name, sizeof(name)),
			 -ENAMETOOLONG);
}
END_TEST

START_TEST(select_writes_current)
{
	char buf[64];

	put("rng_current", "tpm-rng-0\n");
	ck_assert_int_eq(hwrandom_select(dir, "virtio_rng.0"), 0);
	get("rng_current", buf, sizeof(buf));
	ck_assert_str_eq(buf, "virtio_rng.0");
}
END_TEST

/* The devices the fixture's hw_random core lists, and its current one. */
static void devices(const char *available, const char *current)
{
	put("rng_available", available);
	put("rng_current", current);
}

/* A virtio source over the fixture directory, with select=@select and
 * device=@device unless they are NULL. */
static void virtio_config(struct source_config *cfg, const char *select,
			  const char *device)
{
	char err[256];

	source_config_init(cfg, &source_virtio);
	ck_assert_int_eq(source_config_set(cfg, "sysfs", dir, err, sizeof(err)), 0);
	if (select)
		ck_assert_int_eq(source_config_set(cfg, "select", select, err, sizeof(err)), 0);
	if (device)
		ck_assert_int_eq(source_config_set(cfg, "device", device, err, sizeof(err)), 0);
}

/* The virtio driver's probe over a fixture: its answer, and the phrases
 * its reason must hold. */
static const struct {
	const char *available, *current, *select;
	int rc;
	const char *why[2];
} probes[] = {
	{ "tpm-rng-0\n", "tpm-rng-0\n", NULL, -ENODEV, { "no virtio-rng device" } },
	{ "tpm-rng-0 virtio_rng.0\n", "tpm-rng-0\n", NULL, -EBUSY,
	  { "current hw_random device is tpm-rng-0", "select=yes" } },
	/* With select=yes it is usable (and would be selected). */
	{ "tpm-rng-0 virtio_rng.0\n", "tpm-rng-0\n", "yes", 0, { "will be selected" } },
	{ "virtio_rng.0\n", "none\n", NULL, -EBUSY, { "is none" } },
	{ "virtio_rng.0\n", "virtio_rng.0\n", NULL, 0, { "virtio_rng.0" } },
};

START_TEST(virtio_probe)
{
	struct source_config cfg;
	char why[SOURCE_WHY_LEN];

	devices(probes[_i].available, probes[_i].current);
	virtio_config(&cfg, probes[_i].select, NULL);
	ck_assert_int_eq(source_virtio.probe(&cfg, why, sizeof(why)), probes[_i].rc);
	for (size_t k = 0; k < 2 && probes[_i].why[k]; k++)
		ck_assert_msg(strstr(why, probes[_i].why[k]), "probe %d: '%s' without '%s'",
			      _i, why, probes[_i].why[k]);
}
END_TEST

/* Open refuses a virtio device that is not current without select=yes;
 * with it, selects the device and puts the old one back on close. */
START_TEST(virtio_open_selects_only_when_asked)
{
	struct source_config cfg;
	char why[SOURCE_WHY_LEN], buf[64];
	void *state = NULL;

	/* /dev/null stands in for /dev/hwrng: open must succeed. */
	devices("tpm-rng-0 virtio_rng.0\n", "tpm-rng-0\n");
	virtio_config(&cfg, NULL, "/dev/null");
	ck_assert_int_eq(source_virtio.open(&cfg, &state, why, sizeof(why)), -EBUSY);
	get("rng_current", buf, sizeof(buf));
	ck_assert_str_eq(buf, "tpm-rng-0"); /* untouched */
	virtio_config(&cfg, "yes", "/dev/null");
	ck_assert_int_eq(source_virtio.open(&cfg, &state, why, sizeof(why)), 0);
	get("rng_current", buf, sizeof(buf));
	ck_assert_str_eq(buf, "virtio_rng.0");
	source_virtio.close(state);
	get("rng_current", buf, sizeof(buf));
	ck_assert_str_eq(buf, "tpm-rng-0");
}
END_TEST

/* ---- rng_quality and the device credit ------------------------------------- */

START_TEST(quality_parsed)
{
	put("rng_quality", "1024\n");
	ck_assert_int_eq(hwrandom_quality(dir), 1024);
	put("rng_quality", "0\n");
	ck_assert_int_eq(hwrandom_quality(dir), 0);
	put("rng_quality", "1025\n");
	ck_assert_int_eq(hwrandom_quality(dir), -EINVAL);
	put("rng_quality", "-1\n");
	ck_assert_int_eq(hwrandom_quality(dir), -EINVAL);
	put("rng_quality", "high\n");
	ck_assert_int_eq(hwrandom_quality(dir), -EINVAL);
	put("rng_quality", "");
	ck_assert_int_eq(hwrandom_quality(dir), -EINVAL);
	/* Kernels before 5.18 have no rng_quality. */
	ck_assert_int_eq(hwrandom_quality("/nonexistent"), -ENOENT);
}
END_TEST

static const struct hwrandom_credit_rule rule = {
	.fallback = 768, .tpm = 64, .cap = 768,
};

/* The pure rule: what the kernel knows, capped by H. */
START_TEST(device_credit_rule)
{
	const struct hwrandom_credit_rule open_cap = { 700, 64, 1024 };

	ck_assert_uint_eq(hwrandom_device_credit("virtio_rng.0", 1024, &rule), 768);
	ck_assert_uint_eq(hwrandom_device_credit("virtio_rng.0", 1000, &rule), 768);
	ck_assert_uint_eq(hwrandom_device_credit("virtio_rng.0", 1000, &open_cap), 1000);
	ck_assert_uint_eq(hwrandom_device_credit("virtio_rng.0", 500, &rule), 500);
	/* 0: the kernel credits nothing itself (5.18-6.1 default,
	 * default_quality=0, or our gate): not a verdict on the device. */
	ck_assert_uint_eq(hwrandom_device_credit("virtio_rng.0", 0, &rule), 768);
	ck_assert_uint_eq(hwrandom_device_credit("virtio_rng.0", 0, &open_cap), 700);
	ck_assert_uint_eq(hwrandom_device_credit("virtio_rng.0", -1, &open_cap), 700);
	ck_assert_uint_eq(hwrandom_device_credit(NULL, -1, &open_cap), 700);
	/* A TPM is a DRBG whatever its quality. */
	ck_assert_uint_eq(hwrandom_device_credit("tpm-rng-0", 1024, &rule), 64);
	ck_assert_uint_eq(hwrandom_device_credit("tpm-rng-1", 0, &rule), 64);
	/* Never above the cap, even for the TPM rule. */
	{
		const struct hwrandom_credit_rule low = { 768, 64, 10 };

		ck_assert_uint_eq(hwrandom_device_credit("tpm-rng-0", -1, &low), 10);
		ck_assert_uint_eq(hwrandom_device_credit("x", 1024, &low), 10);
	}
}
END_TEST

/* The sysfs variant: rng_quality counts only for the current device. */
START_TEST(device_credit_sysfs)
{
	put("rng_available", "tpm-rng-0 virtio_rng.0\n");
	put("rng_current", "virtio_rng.0\n");
	put("rng_quality", "500\n");
	ck_assert_uint_eq(hwrandom_device_credit_sysfs(dir, NULL, &rule), 500);
	ck_assert_uint_eq(hwrandom_device_credit_sysfs(dir, "virtio_rng.0", &rule),
			  500);
	/* Not current: its quality is not what rng_quality says. */
	ck_assert_uint_eq(hwrandom_device_credit_sysfs(dir, "other.0", &rule),
			  768);
	ck_assert_uint_eq(hwrandom_device_credit_sysfs(dir, "tpm-rng-0", &rule),
			  64);
	put("rng_current", "tpm-rng-0\n");
	ck_assert_uint_eq(hwrandom_device_credit_sysfs(dir, NULL, &rule), 64);
	put("rng_current", "none\n");
	ck_assert_uint_eq(hwrandom_device_credit_sysfs(dir, NULL, &rule), 768);
	/* No sysfs at all: the driver's default. */
	ck_assert_uint_eq(hwrandom_device_credit_sysfs("/nonexistent", NULL, &rule),
			  768);
}
END_TEST

/* Exactly the name: virtio_rng.1 is not virtio_rng.10. */
START_TEST(listed_is_exact)
{
	put("rng_available", "tpm-rng-0 virtio_rng.10 none \n");
	ck_assert_int_eq(hwrandom_listed(dir, "virtio_rng.10"), 1);
	ck_assert_int_eq(hwrandom_listed(dir, "virtio_rng.1"), 0);
	ck_assert_int_eq(hwrandom_listed(dir, "tpm-rng-0"), 1);
}
END_TEST

/* The rule: a TPM's device gives way to any other registered device;
 * anything else current stays. */
START_TEST(best_prefers_another_device_over_a_tpm)
{
	char name[HWRANDOM_NAME_LEN];

	put("rng_available", "tpm-rng-0 virtio_rng.0 none \n");
	put("rng_current", "tpm-rng-0\n");
	ck_assert_int_eq(hwrandom_best(dir, name, sizeof(name)), 1);
	ck_assert_str_eq(name, "virtio_rng.0");
	put("rng_current", "virtio_rng.0\n");
	ck_assert_int_eq(hwrandom_best(dir, name, sizeof(name)), 0);
	ck_assert_str_eq(name, "virtio_rng.0");
	/* A TPM alone stays. */
	put("rng_available", "tpm-rng-0 none \n");
	put("rng_current", "tpm-rng-0\n");
	ck_assert_int_eq(hwrandom_best(dir, name, sizeof(name)), 0);
	ck_assert_str_eq(name, "tpm-rng-0");
	put("rng_current", "none\n");
	ck_assert_int_eq(hwrandom_best(dir, name, sizeof(name)), -ENODEV);
}
END_TEST

static Suite *hwrandom_suite(void)
{
	Suite *s = suite_create("hwrandom");
	TCase *tc = tcase_create("sysfs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, current_names_the_device);
	tcase_add_test(tc, current_none_is_enodev);
	tcase_add_test(tc, missing_files_are_errors);
	tcase_add_test(tc, find_among_several);
	tcase_add_test(tc, find_none_available);
	tcase_add_test(tc, find_name_too_long);
	tcase_add_test(tc, select_writes_current);
	tcase_add_loop_test(tc, virtio_probe, 0, (int)(sizeof(probes) / sizeof(probes[0])));
	tcase_add_test(tc, virtio_open_selects_only_when_asked);
	tcase_add_test(tc, quality_parsed);
	tcase_add_test(tc, device_credit_rule);
	tcase_add_test(tc, device_credit_sysfs);
	tcase_add_test(tc, listed_is_exact);
	tcase_add_test(tc, best_prefers_another_device_over_a_tpm);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return td_run(hwrandom_suite()); }
