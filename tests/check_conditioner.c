// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the conditioner (conditioner.h) over the real CTR_DRBG:
 * nothing comes out before the first tested block; a block is absorbed
 * whole or in ledger_block_parts() parts, one reseed per part, each part
 * carrying at least LEDGER_PART_BITS; credited output spends the epoch;
 * credit-0 input never makes anything creditable; a discard forgets the
 * state, the held block and the balance; the additional-input and clock
 * hooks are the ones used; the counters add up.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "rngfeed/conditioner.h"
#include "rngfeed/drbg.h"
#include "rngfeed/ledger.h"
#include "test_doubles.h"

#define BLOCK_BITS ((uint64_t)MONITOR_BLOCK_BYTES * 8u)

/* ---- the environment the tests hand in ---------------------------------- */

static unsigned int additional_calls;
static ssize_t additional_result; /* > 0: bytes given; < 0: an error */
static double clock_now;

static ssize_t fake_additional(uint8_t *buf, size_t len)
{
	additional_calls++;
	if (additional_result < 0)
		return additional_result;
	memset(buf, 0xa5, len);
	return (ssize_t)len;
}

static double fake_now(void)
{
	return clock_now;
}

static const struct conditioner_env fake_env = {
	.additional = fake_additional,
	.now = fake_now,
};

static struct conditioner *c;
static uint8_t block[MONITOR_BLOCK_BYTES];

static void setup(void)
{
	additional_calls = 0;
	additional_result = 16;
	clock_now = 100.0;
	ck_assert_int_eq(conditioner_new(&c, &fake_env), 0);
	ck_assert_int_eq(getrandom(block, sizeof(block), 0),
			 (ssize_t)sizeof(block));
}

static void teardown(void)
{
	conditioner_free(c);
	c = NULL;
}

static struct conditioner_stats stats(void)
{
	struct conditioner_stats st;

	conditioner_get_stats(c, &st);
	return st;
}

/* Hold a block and absorb it whole. */
static void absorb_whole(unsigned int idx, unsigned int credit)
{
	conditioner_hold(c, idx, credit, block);
	ck_assert(conditioner_holding(c));
	ck_assert_int_eq(conditioner_absorb(c, false), 1);
	ck_assert(!conditioner_holding(c));
}

/* ---- before the first block ---------------------------------------------- */

START_TEST(test_not_seeded)
{
	uint8_t out[64];
	unsigned int credit = 12345;
	struct conditioner_stats st;

	ck_assert(!conditioner_seeded(c));
	ck_assert(!conditioner_holding(c));
	ck_assert_uint_eq(conditioner_available(c), 0);
	ck_assert_int_eq(conditioner_generate(c, out, sizeof(out)), -ENOKEY);
	int r = conditioner_credited(c, out, sizeof(out), &credit);
	ck_assert_msg(r == -EAGAIN || r == -ENOKEY, "credited: %d", r);
	ck_assert_uint_eq(credit, 12345); /* nothing credited */
	ck_assert_uint_eq(conditioner_spend(c, sizeof(out)), 0);
	/* Nothing held: nothing absorbed. */
	ck_assert_int_eq(conditioner_absorb(c, false), 0);
	ck_assert_int_eq(conditioner_absorb(c, true), 0);
	ck_assert(!conditioner_seeded(c));
	st = stats();
	ck_assert_uint_eq(st.reseeds, 0);
	ck_assert_uint_eq(st.generated, 0);
	ck_assert_uint_eq(st.credited_bits, 0);
	ck_assert(st.last_reseed == 0);
	/* The DRBG was never asked, so the hook was not either. */
	ck_assert_uint_eq(additional_calls, 0);
}
END_TEST

START_TEST(test_hold_absorb_instantiates)
{
	uint8_t out[64], zero[64] = { 0 };

	absorb_whole(0, 1024);
	ck_assert(conditioner_seeded(c));
	ck_assert_uint_eq(stats().reseeds, 1);
	/* 20,000 bits at full credit: capped at what the state holds. */
	ck_assert_uint_eq(conditioner_available(c), LEDGER_CAP_BITS);
	ck_assert_uint_eq(conditioner_deposited(c, 0), BLOCK_BITS * 1024);
	ck_assert_int_eq(conditioner_generate(c, out, sizeof(out)), 0);
	ck_assert(memcmp(out, zero, sizeof(out)) != 0);
	/* The held block was dropped: a second absorb has nothing. */
	ck_assert_int_eq(conditioner_absorb(c, false), 0);
	ck_assert_uint_eq(stats().reseeds, 1);
}
END_TEST

/* ---- block parts --------------------------------------------------------- */

START_TEST(test_parts_one_reseed_each)
{
	unsigned int parts = ledger_block_parts(MONITOR_BLOCK_BYTES, 1024);
	uint64_t before = 0;

	/* A block credited in full is worth splitting. */
	ck_assert_uint_gt(parts, 1);
	conditioner_hold(c, 2, 1024, block);
	for (unsigned int k = 0; k < parts; k++) {
		uint64_t now_dep;

		ck_assert_msg(conditioner_holding(c), "part %u of %u", k, parts);
		ck_assert_int_eq(conditioner_absorb(c, true), 1);
		ck_assert_uint_eq(stats().reseeds, k + 1);
		/* Every part carries at least LEDGER_PART_BITS. */
		now_dep = conditioner_deposited(c, 2);
		ck_assert_uint_ge(now_dep - before,
				  (uint64_t)LEDGER_PART_BITS * 1024);
		before = now_dep;
		ck_assert_uint_ge(conditioner_available(c),
				  LEDGER_MIN_RESEED_BITS);
	}
	ck_assert(!conditioner_holding(c));
	ck_assert_int_eq(conditioner_absorb(c, true), 0);
	ck_assert_uint_eq(stats().reseeds, parts);
	/* The parts together are the whole block, once. */
	ck_assert_uint_eq(conditioner_deposited(c, 2), BLOCK_BITS * 1024);
}
END_TEST

/* A block absorbed in parts while the kernel wanted credit, then whole
 * when it stopped wanting: the rest goes in as one reseed. */
START_TEST(test_parts_then_rest_whole)
{
	unsigned int parts = ledger_block_parts(MONITOR_BLOCK_BYTES, 1024);

	ck_assert_uint_gt(parts, 3);
	conditioner_hold(c, 1, 1024, block);
	ck_assert_int_eq(conditioner_absorb(c, true), 1);
	ck_assert_int_eq(conditioner_absorb(c, true), 1);
	ck_assert(conditioner_holding(c));
	ck_assert_int_eq(conditioner_absorb(c, false), 1);
	ck_assert(!conditioner_holding(c));
	ck_assert_uint_eq(stats().reseeds, 3);
	ck_assert_uint_eq(conditioner_deposited(c, 1), BLOCK_BITS * 1024);
}
END_TEST

/* A small credit: too little to split, absorbed as one part. */
START_TEST(test_small_credit_one_part)
{
	ck_assert_uint_eq(ledger_block_parts(MONITOR_BLOCK_BYTES, 2), 1);
	conditioner_hold(c, 0, 2, block);
	ck_assert_int_eq(conditioner_absorb(c, true), 1);
	ck_assert(!conditioner_holding(c));
	ck_assert_uint_eq(stats().reseeds, 1);
	ck_assert_uint_eq(conditioner_deposited(c, 0), BLOCK_BITS * 2);
	/* 39 bits: not enough to credit anything. */
	ck_assert_uint_eq(conditioner_available(c), 0);
}
END_TEST

/* ---- credited output ----------------------------------------------------- */

START_TEST(test_available_after_part)
{
	/* Credit 512: a part carries >= 512 bits, so a part alone makes
	 * the minimum a credited output needs available. */
	conditioner_hold(c, 0, 512, block);
	ck_assert_uint_gt(ledger_block_parts(MONITOR_BLOCK_BYTES, 512), 1);
	ck_assert_uint_eq(conditioner_available(c), 0);
	ck_assert_int_eq(conditioner_absorb(c, true), 1);
	ck_assert_uint_ge(conditioner_available(c), LEDGER_MIN_RESEED_BITS);
	ck_assert_uint_le(conditioner_available(c), LEDGER_CAP_BITS);
}
END_TEST

START_TEST(test_credited_spends_epoch)
{
	uint8_t out[64];
	unsigned int credit = 0;

	conditioner_hold(c, 0, 1024, block);
	ck_assert_int_eq(conditioner_absorb(c, true), 1);
	ck_assert_uint_eq(conditioner_available(c), LEDGER_CAP_BITS);
	ck_assert_int_eq(conditioner_credited(c, out, sizeof(out), &credit), 0);
	/* 64 bytes can carry 512 bits; the ledger allows 256. */
	ck_assert_uint_eq(credit, LEDGER_CAP_BITS);
	ck_assert_uint_eq(conditioner_available(c), 0);
	/* Spent: the same state gives nothing credited again... */
	credit = 777;
	ck_assert_int_eq(conditioner_credited(c, out, sizeof(out), &credit),
			 -EAGAIN);
	ck_assert_uint_eq(credit, 777);
	/* ...but still gives output. */
	ck_assert_int_eq(conditioner_generate(c, out, sizeof(out)), 0);
	/* The next part is a new epoch. */
	ck_assert_int_eq(conditioner_absorb(c, true), 1);
	ck_assert_int_eq(conditioner_credited(c, out, 16, &credit), 0);
	/* 16 bytes carry at most 128 bits; the rest is forfeited. */
	ck_assert_uint_eq(credit, 128);
	ck_assert_uint_eq(conditioner_available(c), 0);
	ck_assert_uint_eq(stats().credited_bits, LEDGER_CAP_BITS + 128);
}
END_TEST

/* conditioner_spend() for output already generated: once per epoch. */
START_TEST(test_spend_once)
{
	absorb_whole(0, 1024);
	ck_assert_uint_eq(conditioner_spend(c, 64), LEDGER_CAP_BITS);
	ck_assert_uint_eq(conditioner_spend(c, 64), 0);
	ck_assert_uint_eq(stats().credited_bits, LEDGER_CAP_BITS);
}
END_TEST

START_TEST(test_credit_zero_never_available)
{
	uint8_t out[64];
	unsigned int credit = 0;

	ck_assert_uint_eq(ledger_block_parts(MONITOR_BLOCK_BYTES, 0), 1);
	for (int i = 0; i < 20; i++) {
		conditioner_hold(c, 3, 0, block);
		ck_assert_int_eq(conditioner_absorb(c, i % 2 == 0), 1);
		ck_assert(!conditioner_holding(c));
		ck_assert_uint_eq(conditioner_available(c), 0);
		ck_assert_int_eq(conditioner_credited(c, out, sizeof(out),
						      &credit),
				 -EAGAIN);
		ck_assert_uint_eq(conditioner_spend(c, sizeof(out)), 0);
	}
	ck_assert(conditioner_seeded(c));
	ck_assert_uint_eq(stats().reseeds, 20);
	ck_assert_uint_eq(conditioner_deposited(c, 3), 0);
	ck_assert_uint_eq(stats().credited_bits, 0);
	/* Uncredited output is there. */
	ck_assert_int_eq(conditioner_generate(c, out, sizeof(out)), 0);
}
END_TEST

/* ---- discard ------------------------------------------------------------- */

START_TEST(test_discard)
{
	uint8_t out[64];
	unsigned int credit = 0;
	struct conditioner_stats st;

	conditioner_hold(c, 0, 1024, block);
	ck_assert_int_eq(conditioner_absorb(c, true), 1);
	ck_assert(conditioner_holding(c));
	ck_assert_uint_gt(conditioner_available(c), 0);
	conditioner_discard(c);
	ck_assert(!conditioner_seeded(c));
	ck_assert(!conditioner_holding(c));
	ck_assert_uint_eq(conditioner_available(c), 0);
	ck_assert_int_eq(conditioner_generate(c, out, sizeof(out)), -ENOKEY);
	ck_assert_int_ne(conditioner_credited(c, out, sizeof(out), &credit), 0);
	ck_assert_uint_eq(conditioner_spend(c, sizeof(out)), 0);
	/* The rest of the held block is gone, not absorbed later. */
	ck_assert_int_eq(conditioner_absorb(c, true), 0);
	st = stats();
	ck_assert_uint_eq(st.discards, 1);
	ck_assert_uint_eq(st.reseeds, 1);
	ck_assert_uint_eq(st.credited_bits, 0);
	/* What was deposited stays in the per-source totals. */
	ck_assert_uint_ge(conditioner_deposited(c, 0),
			  (uint64_t)LEDGER_PART_BITS * 1024);
	/* The next block instantiates a fresh state. */
	absorb_whole(0, 1024);
	ck_assert(conditioner_seeded(c));
	ck_assert_uint_eq(stats().reseeds, 2);
	ck_assert_int_eq(conditioner_credited(c, out, sizeof(out), &credit), 0);
	ck_assert_uint_eq(credit, LEDGER_CAP_BITS);
}
END_TEST

/* A DRBG failure (here a request over the DRBG's limit) drops the state
 * and everything credited to it. */
START_TEST(test_drbg_failure_drops_state)
{
	static uint8_t big[DRBG_MAX_REQUEST_LEN + 1];
	struct conditioner_stats st;

	absorb_whole(0, 1024);
	ck_assert_int_lt(conditioner_generate(c, big, sizeof(big)), 0);
	st = stats();
	ck_assert_uint_eq(st.failures, 1);
	ck_assert_uint_eq(st.generated, 0);
	ck_assert(!conditioner_seeded(c));
	ck_assert_uint_eq(conditioner_available(c), 0);
}
END_TEST

/* ---- the environment hooks and the counters ------------------------------ */

START_TEST(test_env_hooks_used)
{
	uint8_t out[32];
	unsigned int credit;

	clock_now = 1234.5;
	absorb_whole(0, 1024);
	ck_assert(stats().last_reseed == 1234.5);
	ck_assert_uint_eq(additional_calls, 0);
	ck_assert_int_eq(conditioner_generate(c, out, sizeof(out)), 0);
	ck_assert_uint_eq(additional_calls, 1);
	ck_assert_int_eq(conditioner_credited(c, out, sizeof(out), &credit), 0);
	ck_assert_uint_eq(additional_calls, 2);
	/* A credited request refused by the ledger asks nothing. */
	ck_assert_int_eq(conditioner_credited(c, out, sizeof(out), &credit),
			 -EAGAIN);
	ck_assert_uint_eq(additional_calls, 2);
	/* Without kernel bytes output still comes (no additional input). */
	additional_result = -EIO;
	ck_assert_int_eq(conditioner_generate(c, out, sizeof(out)), 0);
	ck_assert_uint_eq(additional_calls, 3);
	ck_assert(conditioner_seeded(c));
	clock_now = 2000.25;
	absorb_whole(0, 0);
	ck_assert(stats().last_reseed == 2000.25);
}
END_TEST

/* The real hooks (NULL env) work too. */
START_TEST(test_default_env)
{
	struct conditioner *d = NULL;
	uint8_t out[32];

	ck_assert_int_eq(conditioner_new(&d, NULL), 0);
	conditioner_hold(d, 0, 0, block);
	ck_assert_int_eq(conditioner_absorb(d, false), 1);
	ck_assert_int_eq(conditioner_generate(d, out, sizeof(out)), 0);
	struct conditioner_stats st;
	conditioner_get_stats(d, &st);
	ck_assert(st.last_reseed > 0);
	conditioner_free(d);
	conditioner_free(NULL);
}
END_TEST

START_TEST(test_stats_add_up)
{
	static uint8_t out[4096];
	unsigned int credit, parts = ledger_block_parts(MONITOR_BLOCK_BYTES, 1024);
	uint64_t generated = 0, credited = 0;
	struct conditioner_stats st;

	conditioner_hold(c, 0, 1024, block);
	for (unsigned int k = 0; k < parts; k++) {
		ck_assert_int_eq(conditioner_absorb(c, true), 1);
		ck_assert_uint_eq(stats().since_reseed, 0);
		ck_assert_int_eq(conditioner_credited(c, out, 64, &credit), 0);
		credited += credit;
		generated += 64;
		ck_assert_int_eq(conditioner_generate(c, out, 100 + k), 0);
		generated += 100 + k;
		ck_assert_uint_eq(stats().since_reseed, 64 + 100 + k);
	}
	st = stats();
	ck_assert_uint_eq(st.reseeds, parts);
	ck_assert_uint_eq(st.generated, generated);
	ck_assert_uint_eq(st.credited_bits, credited);
	/* One credited output per part, each at the cap. */
	ck_assert_uint_eq(credited, (uint64_t)parts * LEDGER_CAP_BITS);
	ck_assert_uint_eq(st.discards, 0);
	ck_assert_uint_eq(st.failures, 0);
	conditioner_discard(c);
	conditioner_discard(c);
	ck_assert_uint_eq(stats().discards, 2);
	ck_assert_uint_eq(stats().generated, generated);
}
END_TEST

START_TEST(test_deposited_per_source)
{
	absorb_whole(0, 1024);
	absorb_whole(4, 512);
	absorb_whole(4, 512);
	absorb_whole(7, 2);
	absorb_whole(9, 0);
	ck_assert_uint_eq(conditioner_deposited(c, 0), BLOCK_BITS * 1024);
	ck_assert_uint_eq(conditioner_deposited(c, 4), 2 * BLOCK_BITS * 512);
	ck_assert_uint_eq(conditioner_deposited(c, 7), BLOCK_BITS * 2);
	ck_assert_uint_eq(conditioner_deposited(c, 9), 0);
	ck_assert_uint_eq(conditioner_deposited(c, 1), 0);
	/* Out of range: 0, not a read past the table. */
	ck_assert_uint_eq(conditioner_deposited(c, LEDGER_MAX_SOURCES), 0);
	ck_assert_uint_eq(conditioner_deposited(c, 1000000), 0);
	ck_assert_uint_eq(stats().reseeds, 5);
}
END_TEST

static Suite *conditioner_suite(void)
{
	Suite *s = suite_create("conditioner");
	TCase *tc = tcase_create("conditioner");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_not_seeded);
	tcase_add_test(tc, test_hold_absorb_instantiates);
	tcase_add_test(tc, test_parts_one_reseed_each);
	tcase_add_test(tc, test_parts_then_rest_whole);
	tcase_add_test(tc, test_small_credit_one_part);
	tcase_add_test(tc, test_available_after_part);
	tcase_add_test(tc, test_credited_spends_epoch);
	tcase_add_test(tc, test_spend_once);
	tcase_add_test(tc, test_credit_zero_never_available);
	tcase_add_test(tc, test_discard);
	tcase_add_test(tc, test_drbg_failure_drops_state);
	tcase_add_test(tc, test_env_hooks_used);
	tcase_add_test(tc, test_default_env);
	tcase_add_test(tc, test_stats_add_up);
	tcase_add_test(tc, test_deposited_per_source);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (drbg_library_init() < 0)
		return EXIT_FAILURE;
	return td_run(conditioner_suite());
}
