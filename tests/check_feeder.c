// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the feeder policy (feeder.h) with a fake kernel: when the
 * daemon feeds, when it asks for a CRNG reseed, how it paces itself once
 * the CRNG is ready on modern (>= 5.18) and old kernels, and what a failed
 * RNDADDENTROPY counts.  Also the kernel release parser.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rngfeed/feeder.h"
#include "test_doubles.h"

/* ---- a fake kernel -------------------------------------------------------- */

struct fake_kernel {
	/* Script: crng_ready answers 1 once this many add_entropy calls
	 * succeeded (0: ready from the start; -1: never). */
	int ready_after_adds;
	int ready_error;        /* when non-zero, crng_ready returns it */
	int add_error;          /* when non-zero, add_entropy returns it */
	int reseed_error;       /* when non-zero, reseed_crng returns it */

	/* What was asked. */
	int add_calls, add_ok, ready_calls, reseed_calls, wait_calls;
	int reseed_after_adds;  /* add_ok when reseed_crng was last called */
	const uint8_t *last_buf;
	size_t last_len;
	unsigned int last_credit;
	uint8_t last_byte0;
};

static int fake_add_entropy(void *ctx, const uint8_t *buf, size_t len,
			    unsigned int credit_bits)
{
	struct fake_kernel *k = ctx;

	k->add_calls++;
	if (k->add_error)
		return k->add_error;
	k->add_ok++;
	k->last_buf = buf;
	k->last_len = len;
	k->last_credit = credit_bits;
	k->last_byte0 = len ? buf[0] : 0;
	return 0;
}

static int fake_crng_ready(void *ctx)
{
	struct fake_kernel *k = ctx;

	k->ready_calls++;
	if (k->ready_error)
		return k->ready_error;
	return k->ready_after_adds >= 0 && k->add_ok >= k->ready_after_adds;
}

static int fake_reseed_crng(void *ctx)
{
	struct fake_kernel *k = ctx;

	k->reseed_calls++;
	k->reseed_after_adds = k->add_ok;
	return k->reseed_error;
}

static int fake_wait_writable(void *ctx, int timeout_ms)
{
	struct fake_kernel *k = ctx;

	(void)timeout_ms;
	k->wait_calls++;
	return 0;
}

static ssize_t fake_get_additional(void *ctx, uint8_t *buf, size_t len)
{
	(void)ctx;
	memset(buf, 0x5a, len);
	return (ssize_t)len;
}

static struct fake_kernel fk;
static struct kernel_ops kops;
static struct feeder f;
static uint8_t data[64];

static void setup_kernel(int ready_after_adds, bool modern,
			 unsigned int interval)
{
	struct feeder_params p = {
		.modern_kernel = modern,
		.interval_s = interval,
		.step = sizeof(data),
	};

	memset(&fk, 0, sizeof(fk));
	fk.ready_after_adds = ready_after_adds;
	kops = (struct kernel_ops){
		.ctx = &fk,
		.add_entropy = fake_add_entropy,
		.crng_ready = fake_crng_ready,
		.reseed_crng = fake_reseed_crng,
		.wait_writable = fake_wait_writable,
		.get_additional = fake_get_additional,
	};
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);
	feeder_init(&f, &p);
}

/* feeder_wants() at @now; *wait is set to a sentinel first so the test
 * sees whether it was written. */
static bool wants(double now, double *wait)
{
	*wait = -1234.5;
	return feeder_wants(&f, now, wait);
}

/* Nothing wanted at @now, and no timer: only the kernel's POLLOUT (an old
 * kernel's) wakes the feeder. */
#define ASSERT_WAITS_FOR_POLLOUT(now)                                        \
	do {                                                                 \
		double w_;                                                   \
		ck_assert(!wants((now), &w_));                               \
		ck_assert(w_ == -1);                                         \
	} while (0)

/* ---- readiness and the reseed -------------------------------------------- */

START_TEST(test_not_ready_wants)
{
	double w;

	setup_kernel(-1, true, 60);
	ck_assert(!f.crng_ready);
	/* Before the CRNG is ready: feed as fast as the sources allow, at
	 * any time. */
	ck_assert(wants(0, &w));
	ck_assert(wants(1e6, &w));
	/* Asking does not touch the kernel. */
	ck_assert_int_eq(fk.ready_calls + fk.add_calls + fk.reseed_calls, 0);
}
END_TEST

START_TEST(test_feed_until_ready_modern)
{
	double w;

	setup_kernel(3, true, 60);
	/* Two feeds: not ready yet, no reseed, still wants. */
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(feeder_feed(&f, &kops, data, 64, 256, 10.0 + i),
				 0);
		ck_assert(!f.crng_ready);
		ck_assert(wants(10.0 + i, &w));
	}
	ck_assert_int_eq(fk.reseed_calls, 0);
	ck_assert_int_ge(fk.ready_calls, 2); /* it looked after each feed */
	/* The third makes the kernel ready: 1, and one RNDRESEEDCRNG after
	 * the entropy went in. */
	ck_assert_int_eq(feeder_feed(&f, &kops, data, 64, 256, 20.0), 1);
	ck_assert(f.crng_ready);
	ck_assert_int_eq(fk.reseed_calls, 1);
	ck_assert_int_eq(fk.reseed_after_adds, 3);

	/* Modern kernel: the next top-up is interval seconds later. */
	ck_assert(!wants(20.0, &w));
	ck_assert(w > 59.999 && w < 60.001);
	ck_assert(!wants(50.0, &w));
	ck_assert(w > 29.999 && w < 30.001);
	ck_assert(!wants(79.75, &w));
	ck_assert(w > 0.249 && w < 0.251);
	ck_assert(wants(80.0, &w));
	ck_assert(wants(500.0, &w));

	/* A top-up: 0 (not "became ready"), no second reseed, no need to
	 * ask the kernel about readiness again, next top-up moved. */
	int ready_calls = fk.ready_calls;

	ck_assert_int_eq(feeder_feed(&f, &kops, data, 64, 0, 81.0), 0);
	ck_assert_int_eq(fk.reseed_calls, 1);
	ck_assert_int_eq(fk.ready_calls, ready_calls);
	ck_assert(!wants(81.0, &w));
	ck_assert(w > 59.999 && w < 60.001);
	ck_assert(wants(141.0, &w));
	ck_assert_int_eq(fk.wait_calls, 0);
}
END_TEST

START_TEST(test_interval_setting)
{
	double w;

	setup_kernel(1, true, 5);
	ck_assert_int_eq(feeder_feed(&f, &kops, data, 64, 256, 100.0), 1);
	ck_assert(!wants(100.0, &w));
	ck_assert(w > 4.999 && w < 5.001);
	ck_assert(!wants(104.5, &w));
	ck_assert(wants(105.0, &w));
}
END_TEST

START_TEST(test_feed_until_ready_old_kernel)
{
	double w;

	setup_kernel(2, false, 60);
	ck_assert_int_eq(feeder_feed(&f, &kops, data, 64, 256, 1.0), 0);
	ck_assert(wants(1.0, &w));
	ck_assert_int_eq(feeder_feed(&f, &kops, data, 64, 256, 2.0), 1);
	ck_assert_int_eq(fk.reseed_calls, 1);
	/* Old kernel: no timer; wait for POLLOUT (-1), however long. */
	ASSERT_WAITS_FOR_POLLOUT(2.0);
	ASSERT_WAITS_FOR_POLLOUT(2.0 + 60);
	ASSERT_WAITS_FOR_POLLOUT(1e7);
	/* Feeding when the kernel asked: still no reseed. */
	ck_assert_int_eq(feeder_feed(&f, &kops, data, 64, 256, 3.0), 0);
	ck_assert_int_eq(fk.reseed_calls, 1);
	ASSERT_WAITS_FOR_POLLOUT(1e7);
}
END_TEST

/* Old kernel, ready: each POLLOUT makes it want exactly one feed, and
 * nothing else does (no timer, no repeated feeding on one signal). */
START_TEST(test_old_kernel_pollout_one_feed_each)
{
	double w;

	setup_kernel(1, false, 60);
	ck_assert_int_eq(feeder_feed(&f, &kops, data, 64, 256, 1.0), 1);
	ASSERT_WAITS_FOR_POLLOUT(5.0);
	feeder_kernel_asks(&f);
	ck_assert(wants(5.0, &w));
	ck_assert(wants(6.0, &w)); /* until something is fed */
	ck_assert_int_eq(feeder_feed(&f, &kops, data, 64, 256, 6.0), 0);
	ASSERT_WAITS_FOR_POLLOUT(6.0);
	/* A failed feed does not count as answering the kernel. */
	feeder_kernel_asks(&f);
	fk.add_error = -EIO;
	ck_assert_int_eq(feeder_feed(&f, &kops, data, 64, 256, 7.0), -EIO);
	ck_assert(wants(7.0, &w));
	fk.add_error = 0;
	ck_assert_int_eq(feeder_feed(&f, &kops, data, 64, 256, 8.0), 0);
	ck_assert(!wants(8.0, &w));
	ck_assert_int_eq(fk.add_ok, 3);
}
END_TEST

START_TEST(test_check_ready_at_start)
{
	double w;

	setup_kernel(0, true, 60);
	/* Already ready at start: 1, one reseed (harmless), and no feeding
	 * until the first top-up. */
	ck_assert_int_eq(feeder_check_ready(&f, &kops, 7.0), 1);
	ck_assert(f.crng_ready);
	ck_assert_int_eq(fk.reseed_calls, 1);
	ck_assert_int_eq(fk.add_calls, 0);
	ck_assert(!wants(7.0, &w));
	ck_assert(w > 59.999 && w < 60.001);
	ck_assert(wants(67.0, &w));
	/* Asking again changes nothing and does not ask the kernel. */
	int ready_calls = fk.ready_calls;

	ck_assert_int_eq(feeder_check_ready(&f, &kops, 8.0), 0);
	ck_assert_int_eq(fk.reseed_calls, 1);
	ck_assert_int_eq(fk.ready_calls, ready_calls);
	ck_assert_uint_eq(f.fed_bytes, 0);
	ck_assert_uint_eq(f.calls, 0);
}
END_TEST

START_TEST(test_check_ready_old_kernel)
{
	setup_kernel(0, false, 60);
	ck_assert_int_eq(feeder_check_ready(&f, &kops, 0.0), 1);
	ASSERT_WAITS_FOR_POLLOUT(0.0);
}
END_TEST

START_TEST(test_check_not_ready)
{
	double w;

	setup_kernel(-1, true, 60);
	ck_assert_int_eq(feeder_check_ready(&f, &kops, 0.0), 0);
	ck_assert(!f.crng_ready);
	ck_assert_int_eq(fk.ready_calls, 1);
	ck_assert_int_eq(fk.reseed_calls, 0);
	ck_assert(wants(0.0, &w));
	/* An error from the kernel is passed on and changes nothing. */
	fk.ready_error = -ENOSYS;
	ck_assert_int_eq(feeder_check_ready(&f, &kops, 0.0), -ENOSYS);
	ck_assert(!f.crng_ready);
	ck_assert_int_eq(fk.reseed_calls, 0);
	ck_assert(wants(0.0, &w));
}
END_TEST

/* RNDRESEEDCRNG failing (before 4.17: ENOTTY) is not fatal. */
START_TEST(test_reseed_failure_not_fatal)
{
	double w;

	setup_kernel(1, true, 60);
	fk.reseed_error = -ENOTTY;
	ck_assert_int_eq(feeder_feed(&f, &kops, data, 64, 256, 0.0), 1);
	ck_assert(f.crng_ready);
	ck_assert_int_eq(fk.reseed_calls, 1);
	ck_assert(!wants(0.0, &w));
}
END_TEST

/* ---- failures and counters ------------------------------------------------ */

START_TEST(test_failed_add_counts_nothing)
{
	double w;

	setup_kernel(0, true, 60); /* would be ready after any feed */
	fk.add_error = -EPERM;
	ck_assert_int_eq(feeder_feed(&f, &kops, data, 64, 256, 1.0), -EPERM);
	ck_assert_int_eq(fk.add_calls, 1);
	ck_assert_uint_eq(f.fed_bytes, 0);
	ck_assert_uint_eq(f.credited_bits, 0);
	ck_assert_uint_eq(f.calls, 0);
	/* Nothing went in, so it did not make the CRNG ready. */
	ck_assert(!f.crng_ready);
	ck_assert_int_eq(fk.reseed_calls, 0);
	ck_assert(wants(1.0, &w));

	/* After readiness a failed top-up does not count, nor postpone
	 * the next attempt. */
	fk.add_error = 0;
	ck_assert_int_eq(feeder_feed(&f, &kops, data, 64, 256, 2.0), 1);
	fk.add_error = -EIO;
	ck_assert_int_eq(feeder_feed(&f, &kops, data, 64, 0, 62.0), -EIO);
	ck_assert_uint_eq(f.fed_bytes, 64);
	ck_assert_uint_eq(f.credited_bits, 256);
	ck_assert_uint_eq(f.calls, 1);
	ck_assert(wants(62.0, &w));
}
END_TEST

START_TEST(test_counters_and_arguments)
{
	static const struct {
		size_t len;
		unsigned int credit;
	} feeds[] = { { 64, 256 }, { 1, 8 }, { 4096, 0 }, { 33, 100 } };
	uint64_t bytes = 0, bits = 0;
	uint8_t big[4096];

	memset(big, 0xc3, sizeof(big));
	setup_kernel(-1, true, 60);
	for (size_t i = 0; i < sizeof(feeds) / sizeof(feeds[0]); i++) {
		const uint8_t *buf = feeds[i].len > sizeof(data) ? big : data;

		ck_assert_int_eq(feeder_feed(&f, &kops, buf, feeds[i].len,
					     feeds[i].credit, (double)i),
				 0);
		/* The bytes and the credit reach the kernel unchanged. */
		ck_assert_ptr_eq(fk.last_buf, buf);
		ck_assert_uint_eq(fk.last_len, feeds[i].len);
		ck_assert_uint_eq(fk.last_credit, feeds[i].credit);
		ck_assert_uint_eq(fk.last_byte0, buf[0]);
		bytes += feeds[i].len;
		bits += feeds[i].credit;
		ck_assert_uint_eq(f.fed_bytes, bytes);
		ck_assert_uint_eq(f.credited_bits, bits);
		ck_assert_uint_eq(f.calls, i + 1);
	}
	ck_assert_int_eq(fk.reseed_calls, 0);
}
END_TEST

/* ---- kernel releases ------------------------------------------------------ */

START_TEST(test_release_parse)
{
	static const struct {
		const char *release;
		unsigned int major, minor;
	} good[] = {
		{ "6.18.44-fc", 6, 18 },
		{ "5.17.0", 5, 17 },
		{ "5.18", 5, 18 },
		{ "4.19.0-25-amd64", 4, 19 },
		{ "6.1.0-13-cloud-amd64", 6, 1 },
		{ "3.10.0-1160.el7.x86_64", 3, 10 },
		{ "10.0", 10, 0 },
	};
	static const char *const junk[] = {
		"", "linux", "6", "6.", "6-18", ".18", "6..18", "x6.18",
		"6.x", "6 18", "-5.18", "5.-18", "5.+18", "99999999999.1",
		"5.99999999999",
	};
	unsigned int major, minor;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		major = minor = 999;
		ck_assert_msg(kernel_release_parse(good[i].release, &major,
						   &minor) == 0,
			      "'%s' refused", good[i].release);
		ck_assert_msg(major == good[i].major && minor == good[i].minor,
			      "'%s' parsed as %u.%u", good[i].release, major,
			      minor);
	}
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		major = minor = 999;
		ck_assert_msg(kernel_release_parse(junk[i], &major, &minor) ==
				      -EINVAL,
			      "'%s' accepted as %u.%u", junk[i], major, minor);
	}
}
END_TEST

START_TEST(test_release_is_modern)
{
	static const struct {
		unsigned int major, minor;
		bool modern;
	} cases[] = {
		{ 5, 17, false }, { 5, 18, true }, { 5, 19, true },
		{ 5, 0, false },  { 4, 99, false }, { 4, 19, false },
		{ 6, 0, true },   { 6, 18, true },  { 3, 18, false },
		{ 0, 0, false },  { 7, 0, true },   { 5, 100, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(kernel_release_is_modern(cases[i].major,
						       cases[i].minor) ==
				      cases[i].modern,
			      "%u.%u should %sbe modern", cases[i].major,
			      cases[i].minor, cases[i].modern ? "" : "not ");
}
END_TEST

static Suite *feeder_suite(void)
{
	Suite *s = suite_create("feeder");
	TCase *tc;

	tc = tcase_create("readiness");
	tcase_add_test(tc, test_not_ready_wants);
	tcase_add_test(tc, test_feed_until_ready_modern);
	tcase_add_test(tc, test_interval_setting);
	tcase_add_test(tc, test_feed_until_ready_old_kernel);
	tcase_add_test(tc, test_old_kernel_pollout_one_feed_each);
	tcase_add_test(tc, test_check_ready_at_start);
	tcase_add_test(tc, test_check_ready_old_kernel);
	tcase_add_test(tc, test_check_not_ready);
	tcase_add_test(tc, test_reseed_failure_not_fatal);
	suite_add_tcase(s, tc);

	tc = tcase_create("feeding");
	tcase_add_test(tc, test_failed_add_counts_nothing);
	tcase_add_test(tc, test_counters_and_arguments);
	suite_add_tcase(s, tc);

	tc = tcase_create("release");
	tcase_add_test(tc, test_release_parse);
	tcase_add_test(tc, test_release_is_modern);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return td_run(feeder_suite()); }
