// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * conditioner_generate_batch() (issue 20): bulk output as consecutive
 * SP 800-90A requests of at most DRBG_MAX_REQUEST_LEN bytes, with the
 * kernel's additional input fetched once per batch, not once per request.
 * The additional-input hook is a counter here.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "rngfeed/conditioner.h"
#include "rngfeed/drbg.h"
#include "test_doubles.h"

static struct conditioner *c;
static unsigned int add_calls;

static ssize_t counting_additional(uint8_t *buf, size_t len)
{
	add_calls++;
	memset(buf, 0xa5, len);
	return (ssize_t)len;
}

static const struct conditioner_env env = { .additional = counting_additional };

static void setup(void)
{
	add_calls = 0;
	ck_assert_int_eq(conditioner_new(&c, &env), 0);
}

static void teardown(void)
{
	conditioner_free(c);
	c = NULL;
}

static void seed(void)
{
	uint8_t block[MONITOR_BLOCK_BYTES];

	ck_assert_int_eq(getrandom(block, sizeof(block), 0),
			 (ssize_t)sizeof(block));
	conditioner_hold(c, 0, 0, block);
	ck_assert_int_eq(conditioner_absorb(c, false), 1);
	ck_assert(conditioner_seeded(c));
}

static struct conditioner_stats stats(void)
{
	struct conditioner_stats st;

	conditioner_get_stats(c, &st);
	return st;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* 3.5 requests' worth: four requests, one additional input, and every
 * request's output is its own (none left zero, none repeated). */
START_TEST(test_batch_requests_and_additional)
{
	const size_t len = 3 * DRBG_MAX_REQUEST_LEN + DRBG_MAX_REQUEST_LEN / 2;
	uint8_t *out = calloc(1, len);
	struct conditioner_stats before;

	ck_assert_ptr_nonnull(out);
	seed();
	before = stats();
	ck_assert_int_eq(conditioner_generate_batch(c, out, len), 0);
	ck_assert_uint_eq(add_calls, 1);
	ck_assert_uint_eq(stats().requests - before.requests, 4);
	ck_assert_uint_eq(stats().generated - before.generated, len);
	ck_assert_uint_eq(stats().since_reseed, len);
	for (size_t k = 0; k < 4; k++) {
		const uint8_t *p = out + k * DRBG_MAX_REQUEST_LEN;
		size_t n = k < 3 ? DRBG_MAX_REQUEST_LEN : len - 3 * DRBG_MAX_REQUEST_LEN;

		ck_assert(!all_zero(p + n - 16, 16));
		if (k > 0)
			ck_assert(memcmp(p, out, 32) != 0);
	}
	/* A second batch: one more additional input, not four. */
	ck_assert_int_eq(conditioner_generate_batch(c, out, len), 0);
	ck_assert_uint_eq(add_calls, 2);
	explicit_bzero(out, len);
	free(out);
}
END_TEST

/* One request is still at most DRBG_MAX_REQUEST_LEN through
 * conditioner_generate(); a batch takes any length. */
START_TEST(test_batch_vs_single_request)
{
	static uint8_t out[DRBG_MAX_REQUEST_LEN + 1];

	seed();
	ck_assert_int_eq(conditioner_generate_batch(c, out, sizeof(out)), 0);
	ck_assert_uint_eq(stats().requests, 2);
	ck_assert(conditioner_seeded(c));
	ck_assert_int_lt(conditioner_generate(c, out, sizeof(out)), 0);
	/* That failure dropped the state, and wiped what it had written. */
	ck_assert(!conditioner_seeded(c));
	ck_assert(all_zero(out, sizeof(out)));
	ck_assert_int_eq(conditioner_generate_batch(c, out, 16), -ENOKEY);
}
END_TEST

START_TEST(test_batch_not_seeded)
{
	uint8_t out[64];

	memset(out, 0x33, sizeof(out));
	ck_assert_int_eq(conditioner_generate_batch(c, out, sizeof(out)),
			 -ENOKEY);
	ck_assert_uint_eq(add_calls, 0);
	ck_assert_uint_eq(stats().requests, 0);
	ck_assert_uint_eq(out[0], 0x33);
}
END_TEST

int main(void)
{
	if (drbg_library_init() < 0)
		return EXIT_FAILURE;

	return td_run(td_suite("conditioner_batch", "batch", setup, teardown, 0,
			       TD_TESTS(test_batch_requests_and_additional,
					test_batch_vs_single_request,
					test_batch_not_seeded)));
}
