// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * conditioner_hold_derived() (issue 20): a block that comes with its seed
 * material (worked out by its reader) is absorbed with the same reseeds,
 * the same ledger deposit and the same credit as one that does not, whole
 * or in parts; the first instantiation takes the block itself.  (That the
 * derived reseed leaves the DRBG state drbg_reseed() leaves is
 * check_drbg_derived's.)
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "rngfeed/conditioner.h"
#include "rngfeed/drbg.h"
#include "test_doubles.h"

static struct conditioner *plain, *fast;
static struct drbg_df *df;

static void setup(void)
{
	ck_assert_int_eq(conditioner_new(&plain, NULL), 0);
	ck_assert_int_eq(conditioner_new(&fast, NULL), 0);
	ck_assert_int_eq(drbg_df_new(&df), 0);
}

static void teardown(void)
{
	conditioner_free(plain);
	conditioner_free(fast);
	drbg_df_free(df);
}

/* The same block into both: @fast with its seed material. */
static void hold_both(unsigned int credit)
{
	uint8_t block[MONITOR_BLOCK_BYTES], seed[DRBG_SEEDLEN];

	ck_assert_int_eq(getrandom(block, sizeof(block), 0),
			 (ssize_t)sizeof(block));
	ck_assert_int_eq(drbg_df_derive(df, block, sizeof(block), seed), 0);
	conditioner_hold(plain, 1, credit, block);
	conditioner_hold_derived(fast, 1, credit, block, seed);
}

static void same_books(void)
{
	struct conditioner_stats a, b;

	conditioner_get_stats(plain, &a);
	conditioner_get_stats(fast, &b);
	ck_assert_uint_eq(a.reseeds, b.reseeds);
	ck_assert_uint_eq(a.failures, 0);
	ck_assert_uint_eq(b.failures, 0);
	ck_assert_uint_eq(conditioner_deposited(plain, 1),
			  conditioner_deposited(fast, 1));
	ck_assert_uint_eq(conditioner_available(plain),
			  conditioner_available(fast));
	ck_assert_int_eq(conditioner_holding(plain), conditioner_holding(fast));
}

START_TEST(test_whole)
{
	uint8_t out[4096];

	/* The first block instantiates (the seed material is not used:
	 * instantiation mixes in a nonce and personalization). */
	hold_both(1024);
	ck_assert_int_eq(conditioner_absorb(plain, false), 1);
	ck_assert_int_eq(conditioner_absorb(fast, false), 1);
	same_books();
	ck_assert(conditioner_seeded(fast));
	/* Then whole-block reseeds from the derived seed. */
	for (int i = 0; i < 3; i++) {
		hold_both(512);
		ck_assert_int_eq(conditioner_absorb(plain, false), 1);
		ck_assert_int_eq(conditioner_absorb(fast, false), 1);
		same_books();
		ck_assert_int_eq(conditioner_generate_batch(fast, out,
							    sizeof(out)), 0);
		ck_assert_int_eq(conditioner_generate_batch(plain, out,
							    sizeof(out)), 0);
	}
	ck_assert_uint_eq(conditioner_deposited(fast, 1),
			  (uint64_t)MONITOR_BLOCK_BYTES * 8 * (1024 + 3 * 512));
}
END_TEST

START_TEST(test_parts)
{
	hold_both(1024);
	ck_assert_int_eq(conditioner_absorb(plain, false), 1);
	ck_assert_int_eq(conditioner_absorb(fast, false), 1);
	/* In parts (the kernel output), each part is its own reseed from
	 * its bytes; the whole block's seed material is not for them. */
	hold_both(1024);
	while (conditioner_holding(plain)) {
		ck_assert_int_eq(conditioner_absorb(plain, true), 1);
		ck_assert_int_eq(conditioner_absorb(fast, true), 1);
		same_books();
	}
	ck_assert(!conditioner_holding(fast));
}
END_TEST

int main(void)
{
	return td_run(td_suite("conditioner_derived", "core", setup, teardown,
			       0, TD_TESTS(test_whole, test_parts)));
}
