// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A reseed in two halves (issue 20): drbg_df_derive() in one place (a
 * reader thread), drbg_reseed_derived() in another (the main loop) must
 * leave exactly the state drbg_reseed() with the same entropy input and
 * no additional input leaves (drbg_reseed() is the one the CAVP vectors
 * check).  Compared by the output of the two DRBGs afterwards.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/drbg.h"
#include "rngfeed/monitor.h"
#include "test_doubles.h"

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

/* Two DRBGs in the same state. */
static void twins(struct drbg **a, struct drbg **b)
{
	uint8_t ent[48], nonce[16], pers[20];

	fill(ent, sizeof(ent), 1);
	fill(nonce, sizeof(nonce), 2);
	fill(pers, sizeof(pers), 3);
	ck_assert_int_eq(drbg_new(a, NULL), 0);
	ck_assert_int_eq(drbg_new(b, NULL), 0);
	ck_assert_int_eq(drbg_instantiate(*a, ent, sizeof(ent), nonce,
					  sizeof(nonce), pers, sizeof(pers)), 0);
	ck_assert_int_eq(drbg_instantiate(*b, ent, sizeof(ent), nonce,
					  sizeof(nonce), pers, sizeof(pers)), 0);
}

static void same_output(struct drbg *a, struct drbg *b)
{
	static uint8_t x[4096], y[4096];
	const uint8_t add[7] = "abcdefg";

	ck_assert_int_eq(drbg_generate(a, x, sizeof(x), NULL, 0), 0);
	ck_assert_int_eq(drbg_generate(b, y, sizeof(y), NULL, 0), 0);
	ck_assert(memcmp(x, y, sizeof(x)) == 0);
	ck_assert_int_eq(drbg_generate(a, x, 100, add, sizeof(add)), 0);
	ck_assert_int_eq(drbg_generate(b, y, 100, add, sizeof(add)), 0);
	ck_assert(memcmp(x, y, 100) == 0);
}

START_TEST(test_same_state)
{
	/* The shortest input, one not a whole number of AES blocks, a
	 * monitor block, and one far longer. */
	static const size_t lens[] = { DRBG_MIN_ENTROPY_LEN, 61,
				       MONITOR_BLOCK_BYTES, 100000 };
	size_t n = lens[_i];
	uint8_t *ent = malloc(n), seed[DRBG_SEEDLEN];
	struct drbg *a, *b;
	struct drbg_df *df;

	ck_assert_ptr_nonnull(ent);
	fill(ent, n, (uint32_t)n);
	twins(&a, &b);
	ck_assert_int_eq(drbg_df_new(&df), 0);
	ck_assert_int_eq(drbg_reseed(a, ent, n, NULL, 0), 0);
	ck_assert_int_eq(drbg_df_derive(df, ent, n, seed), 0);
	ck_assert_int_eq(drbg_reseed_derived(b, seed), 0);
	same_output(a, b);
	/* The df context is reusable: a second reseed the same way. */
	fill(ent, n, (uint32_t)n + 7);
	ck_assert_int_eq(drbg_reseed(a, ent, n, NULL, 0), 0);
	ck_assert_int_eq(drbg_df_derive(df, ent, n, seed), 0);
	ck_assert_int_eq(drbg_reseed_derived(b, seed), 0);
	same_output(a, b);
	/* ...and it really is a reseed: the counter started again (two
	 * requests since). */
	ck_assert_uint_eq(drbg_requests_left(b),
			  DRBG_DEFAULT_RESEED_INTERVAL - 2);
	ck_assert_uint_eq(drbg_requests_left(a), drbg_requests_left(b));
	drbg_df_free(df);
	drbg_free(a);
	drbg_free(b);
	free(ent);
}
END_TEST

/* A different input gives a different state (the seed is not ignored). */
START_TEST(test_input_matters)
{
	uint8_t ent[64], seed[DRBG_SEEDLEN], x[64], y[64];
	struct drbg *a, *b;
	struct drbg_df *df;

	twins(&a, &b);
	ck_assert_int_eq(drbg_df_new(&df), 0);
	fill(ent, sizeof(ent), 9);
	ck_assert_int_eq(drbg_reseed(a, ent, sizeof(ent), NULL, 0), 0);
	ent[63] ^= 1;
	ck_assert_int_eq(drbg_df_derive(df, ent, sizeof(ent), seed), 0);
	ck_assert_int_eq(drbg_reseed_derived(b, seed), 0);
	ck_assert_int_eq(drbg_generate(a, x, sizeof(x), NULL, 0), 0);
	ck_assert_int_eq(drbg_generate(b, y, sizeof(y), NULL, 0), 0);
	ck_assert(memcmp(x, y, sizeof(x)) != 0);
	drbg_df_free(df);
	drbg_free(a);
	drbg_free(b);
}
END_TEST

/* The errors drbg_reseed() has for the same cases. */
START_TEST(test_errors)
{
	const struct drbg_params nodf = { .use_df = false };
	uint8_t ent[48] = { 1 }, seed[DRBG_SEEDLEN] = { 2 };
	struct drbg *d, *plain;
	struct drbg_df *df;

	ck_assert_int_eq(drbg_df_new(&df), 0);
	ck_assert_int_eq(drbg_df_derive(df, ent, DRBG_MIN_ENTROPY_LEN - 1,
					seed), -ERANGE);
	ck_assert_int_eq(drbg_reseed(NULL, ent, 31, NULL, 0), -EINVAL);
	ck_assert_int_eq(drbg_df_derive(df, NULL, 32, seed), -EINVAL);
	ck_assert_int_eq(drbg_df_derive(NULL, ent, 32, seed), -EINVAL);

	ck_assert_int_eq(drbg_new(&d, NULL), 0);
	ck_assert_int_eq(drbg_reseed_derived(d, seed), -ENOTCONN);
	ck_assert_int_eq(drbg_reseed_derived(NULL, seed), -EINVAL);
	/* Without the df there is no seed material to derive. */
	ck_assert_int_eq(drbg_new(&plain, &nodf), 0);
	ck_assert_int_eq(drbg_instantiate(plain, ent, sizeof(ent), NULL, 0,
					  NULL, 0), 0);
	ck_assert_int_eq(drbg_reseed_derived(plain, seed), -EINVAL);
	drbg_free(plain);
	drbg_free(d);
	drbg_df_free(df);
	drbg_df_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("drbg_derived");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_same_state, 0, 4);
	tcase_add_test(tc, test_input_matters);
	tcase_add_test(tc, test_errors);
	suite_add_tcase(s, tc);
	return td_run(s);
}
