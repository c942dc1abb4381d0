// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the CTR_DRBG.  White-box: this file compiles src/drbg.c
 * into itself so it can look at Key and V (wiping, intermediate values);
 * the linker then takes no drbg.o from librngfeed.a, every symbol being
 * defined here already.  The public API is all that is called otherwise.
 */
#include "../src/drbg.c"
#include "test_doubles.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

static uint8_t E48[48], N16[16], A48[48];

/* Hex into a fixed buffer; returns the length. */
static size_t hex(uint8_t *out, size_t cap, const char *s)
{
	size_t n = strlen(s) / 2;

	ck_assert_uint_le(n, cap);
	for (size_t i = 0; i < n; i++) {
		unsigned int b;

		ck_assert_int_eq(sscanf(s + 2 * i, "%2x", &b), 1);
		out[i] = (uint8_t)b;
	}
	return n;
}

static void fill_inputs(void)
{
	for (size_t i = 0; i < sizeof(E48); i++)
		E48[i] = (uint8_t)(0x40 + i);
	for (size_t i = 0; i < sizeof(N16); i++)
		N16[i] = (uint8_t)(0x20 + i);
	for (size_t i = 0; i < sizeof(A48); i++)
		A48[i] = (uint8_t)(0xa0 + i);
}

static struct drbg *new_drbg(bool use_df, uint64_t interval)
{
	struct drbg_params p = { .use_df = use_df, .reseed_interval = interval };
	struct drbg *d = NULL;

	ck_assert_int_eq(drbg_new(&d, &p), 0);
	ck_assert_ptr_nonnull(d);
	return d;
}

/* An instantiated DRBG of either kind, from fixed inputs. */
static struct drbg *ready_drbg(bool use_df, uint64_t interval)
{
	struct drbg *d = new_drbg(use_df, interval);

	fill_inputs();
	if (use_df)
		ck_assert_int_eq(drbg_instantiate(d, E48, 32, N16, 16, NULL, 0), 0);
	else
		ck_assert_int_eq(drbg_instantiate(d, E48, 48, NULL, 0, NULL, 0), 0);
	return d;
}

static bool all_equal(const uint8_t *p, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* ---------------------------------------------------------------- setup */

START_TEST(test_selftest)
{
	ck_assert_int_eq(drbg_selftest(), 0);
}
END_TEST

START_TEST(test_library_init_idempotent)
{
	ck_assert_int_eq(drbg_library_init(), 0);
	ck_assert_int_eq(drbg_library_init(), 0);
	ck_assert(gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P));
}
END_TEST

START_TEST(test_new_params)
{
	struct drbg_params p = { .use_df = true,
				 .reseed_interval = DRBG_MAX_RESEED_INTERVAL + 1 };
	struct drbg *d = (struct drbg *)1;

	ck_assert_int_eq(drbg_new(NULL, NULL), -EINVAL);
	ck_assert_int_eq(drbg_new(&d, &p), -EINVAL);
	ck_assert_ptr_null(d);

	/* Defaults: df on, 2^20 requests. */
	ck_assert_int_eq(drbg_new(&d, NULL), 0);
	ck_assert(d->use_df);
	ck_assert_uint_eq(d->reseed_interval, DRBG_DEFAULT_RESEED_INTERVAL);
	ck_assert(!drbg_is_instantiated(d));
	ck_assert_uint_eq(drbg_requests_left(d), 0);
	/* State and handles sit in secure memory. */
	ck_assert(gcry_is_secure(d));
	drbg_free(d);

	p.reseed_interval = 0; /* means the default */
	ck_assert_int_eq(drbg_new(&d, &p), 0);
	ck_assert_uint_eq(d->reseed_interval, DRBG_DEFAULT_RESEED_INTERVAL);
	drbg_free(d);
	drbg_free(NULL);
	drbg_uninstantiate(NULL);
	ck_assert(!drbg_is_instantiated(NULL));
}
END_TEST

/* Secure memory runs out: -ENOMEM, never a half-made DRBG; freeing the
 * others makes room again. */
START_TEST(test_secmem_exhausted)
{
	struct drbg *d[64] = { 0 };
	int n, r = 0;

	fill_inputs();
	for (n = 0; n < 64; n++) {
		r = drbg_new(&d[n], NULL);
		if (r) {
			ck_assert_ptr_null(d[n]);
			break;
		}
		r = drbg_instantiate(d[n], E48, 32, N16, 16, NULL, 0);
		if (r) {
			ck_assert(!drbg_is_instantiated(d[n]));
			n++;
			break;
		}
	}
	ck_assert_int_eq(r, -ENOMEM);
	ck_assert_int_gt(n, 1);
	for (int i = 0; i < n; i++)
		drbg_free(d[i]);
	d[0] = ready_drbg(true, 0);
	drbg_free(d[0]);
}
END_TEST

/* ---------------------------------------------------------- instantiate */

START_TEST(test_instantiate_errors_df)
{
	struct drbg *d = new_drbg(true, 0);
	static uint8_t big[8];

	fill_inputs();
	ck_assert_int_eq(drbg_instantiate(NULL, E48, 32, N16, 16, NULL, 0), -EINVAL);
	ck_assert_int_eq(drbg_instantiate(d, NULL, 32, N16, 16, NULL, 0), -EINVAL);
	ck_assert_int_eq(drbg_instantiate(d, E48, 32, NULL, 16, NULL, 0), -EINVAL);
	ck_assert_int_eq(drbg_instantiate(d, E48, 32, N16, 16, NULL, 1), -EINVAL);
	/* Too short: entropy under 256 bits, or no 128 extra bits. */
	ck_assert_int_eq(drbg_instantiate(d, E48, 31, N16, 16, NULL, 0), -ERANGE);
	ck_assert_int_eq(drbg_instantiate(d, E48, 0, NULL, 0, NULL, 0), -ERANGE);
	ck_assert_int_eq(drbg_instantiate(d, E48, 32, N16, 15, NULL, 0), -ERANGE);
	/* Too long (the length is checked before anything is read). */
	ck_assert_int_eq(drbg_instantiate(d, big, DRBG_MAX_INPUT_LEN + 1, N16, 16, NULL, 0), -E2BIG);
	ck_assert_int_eq(drbg_instantiate(d, E48, 32, big, DRBG_MAX_INPUT_LEN + 1, NULL, 0), -E2BIG);
	ck_assert_int_eq(drbg_instantiate(d, E48, 32, N16, 16, big, DRBG_MAX_INPUT_LEN + 1), -E2BIG);
	ck_assert(!drbg_is_instantiated(d));

	/* 48 bytes of entropy and no nonce is enough (8.6.7). */
	ck_assert_int_eq(drbg_instantiate(d, E48, 48, NULL, 0, NULL, 0), 0);
	ck_assert(drbg_is_instantiated(d));
	ck_assert_int_eq(drbg_instantiate(d, E48, 32, N16, 16, NULL, 0), -EISCONN);
	drbg_uninstantiate(d);
	ck_assert_int_eq(drbg_instantiate(d, E48, 32, N16, 16, A48, 48), 0);
	drbg_free(d);
}
END_TEST

START_TEST(test_instantiate_errors_nodf)
{
	struct drbg *d = new_drbg(false, 0);

	fill_inputs();
	ck_assert_int_eq(drbg_instantiate(d, E48, 47, NULL, 0, NULL, 0), -ERANGE);
	ck_assert_int_eq(drbg_instantiate(d, E48, 49, NULL, 0, NULL, 0), -E2BIG);
	ck_assert_int_eq(drbg_instantiate(d, E48, 48, NULL, 0, A48, 49), -E2BIG);
	/* No df has no nonce (10.2.1.3.1); do not ignore one silently. */
	ck_assert_int_eq(drbg_instantiate(d, E48, 48, N16, 16, NULL, 0), -EINVAL);
	ck_assert(!drbg_is_instantiated(d));
	ck_assert_int_eq(drbg_instantiate(d, E48, 48, N16, 0, A48, 48), 0);
	ck_assert_int_eq(drbg_instantiate(d, E48, 48, NULL, 0, NULL, 0), -EISCONN);
	drbg_free(d);
}
END_TEST

/* --------------------------------------------------------------- reseed */

START_TEST(test_reseed_errors)
{
	struct drbg *d = new_drbg(true, 0);
	struct drbg *n = new_drbg(false, 0);
	static uint8_t big[8];

	fill_inputs();
	ck_assert_int_eq(drbg_reseed(d, E48, 32, NULL, 0), -ENOTCONN);
	ck_assert_int_eq(drbg_reseed(NULL, E48, 32, NULL, 0), -EINVAL);
	ck_assert_int_eq(drbg_instantiate(d, E48, 32, N16, 16, NULL, 0), 0);
	ck_assert_int_eq(drbg_reseed(d, NULL, 32, NULL, 0), -EINVAL);
	ck_assert_int_eq(drbg_reseed(d, E48, 32, NULL, 5), -EINVAL);
	ck_assert_int_eq(drbg_reseed(d, E48, 31, NULL, 0), -ERANGE);
	ck_assert_int_eq(drbg_reseed(d, big, DRBG_MAX_INPUT_LEN + 1, NULL, 0), -E2BIG);
	ck_assert_int_eq(drbg_reseed(d, E48, 32, big, DRBG_MAX_INPUT_LEN + 1), -E2BIG);
	ck_assert_int_eq(drbg_reseed(d, E48, 32, A48, 48), 0);

	ck_assert_int_eq(drbg_instantiate(n, E48, 48, NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(drbg_reseed(n, E48, 32, NULL, 0), -ERANGE);
	ck_assert_int_eq(drbg_reseed(n, E48, 49, NULL, 0), -E2BIG);
	ck_assert_int_eq(drbg_reseed(n, E48, 48, A48, 49), -E2BIG);
	ck_assert_int_eq(drbg_reseed(n, E48, 48, A48, 48), 0);
	drbg_free(d);
	drbg_free(n);
}
END_TEST

/* ------------------------------------------------------------- generate */

START_TEST(test_generate_errors_leave_output)
{
	struct drbg *d = new_drbg(_i, 2);
	static uint8_t out[DRBG_MAX_REQUEST_LEN + 1];

	fill_inputs();
	memset(out, 0xa5, sizeof(out));
	ck_assert_int_eq(drbg_generate(d, out, 64, NULL, 0), -ENOTCONN);
	ck_assert(all_equal(out, sizeof(out), 0xa5));
	ck_assert_int_eq(drbg_generate(NULL, out, 64, NULL, 0), -EINVAL);
	drbg_free(d);

	d = ready_drbg(_i, 2);
	ck_assert_int_eq(drbg_generate(d, NULL, 64, NULL, 0), -EINVAL);
	ck_assert_int_eq(drbg_generate(d, out, 64, NULL, 3), -EINVAL);
	ck_assert_int_eq(drbg_generate(d, out, sizeof(out), NULL, 0), -E2BIG);
	ck_assert(all_equal(out, sizeof(out), 0xa5));
	if (!_i) {
		ck_assert_int_eq(drbg_generate(d, out, 64, A48, 49), -E2BIG);
		ck_assert(all_equal(out, sizeof(out), 0xa5));
	}
	/* None of those counted as a request. */
	ck_assert_uint_eq(drbg_requests_left(d), 2);
	/* Largest request, then a zero-length one (state still steps). */
	ck_assert_int_eq(drbg_generate(d, out, DRBG_MAX_REQUEST_LEN, NULL, 0), 0);
	ck_assert_uint_eq(out[DRBG_MAX_REQUEST_LEN], 0xa5);
	ck_assert(!all_equal(out + DRBG_MAX_REQUEST_LEN - 64, 64, 0));
	ck_assert_int_eq(drbg_generate(d, NULL, 0, A48, 16), 0);
	/* Exhausted. */
	memset(out, 0xa5, sizeof(out));
	ck_assert_int_eq(drbg_generate(d, out, 64, NULL, 0), -ESTALE);
	ck_assert_int_eq(drbg_generate(d, out, 64, A48, 16), -ESTALE);
	ck_assert(all_equal(out, sizeof(out), 0xa5));
	drbg_free(d);
}
END_TEST

START_TEST(test_reseed_counter)
{
	struct drbg *d = new_drbg(_i, 3);
	uint8_t out[32];

	ck_assert_int_eq(drbg_needs_reseed(NULL), -EINVAL);
	ck_assert_int_eq(drbg_needs_reseed(d), -ENOTCONN);
	drbg_free(d);
	d = ready_drbg(_i, 3);
	for (uint64_t left = 3; left > 0; left--) {
		ck_assert_uint_eq(drbg_requests_left(d), left);
		ck_assert_int_eq(drbg_needs_reseed(d), 0);
		ck_assert_int_eq(drbg_generate(d, out, sizeof(out), NULL, 0), 0);
	}
	ck_assert_uint_eq(drbg_requests_left(d), 0);
	ck_assert_int_eq(drbg_needs_reseed(d), 1);
	ck_assert_int_eq(drbg_generate(d, out, sizeof(out), NULL, 0), -ESTALE);
	/* Still instantiated: a reseed brings it back. */
	ck_assert(drbg_is_instantiated(d));
	ck_assert_int_eq(drbg_reseed(d, E48, 48, NULL, 0), 0);
	ck_assert_uint_eq(drbg_requests_left(d), 3);
	ck_assert_int_eq(drbg_needs_reseed(d), 0);
	ck_assert_int_eq(drbg_generate(d, out, sizeof(out), NULL, 0), 0);
	ck_assert_uint_eq(drbg_requests_left(d), 2);
	drbg_free(d);
}
END_TEST

START_TEST(test_reseed_changes_output)
{
	struct drbg *a = ready_drbg(_i, 0), *b = ready_drbg(_i, 0);
	uint8_t x[64], y[64];

	ck_assert_int_eq(drbg_generate(a, x, sizeof(x), NULL, 0), 0);
	ck_assert_int_eq(drbg_generate(b, y, sizeof(y), NULL, 0), 0);
	ck_assert_mem_eq(x, y, sizeof(x)); /* deterministic */
	ck_assert_int_eq(drbg_reseed(b, E48, 48, NULL, 0), 0);
	ck_assert_int_eq(drbg_generate(a, x, sizeof(x), NULL, 0), 0);
	ck_assert_int_eq(drbg_generate(b, y, sizeof(y), NULL, 0), 0);
	ck_assert_mem_ne(x, y, sizeof(x));
	/* Additional input changes the output too. */
	ck_assert_int_eq(drbg_generate(a, x, sizeof(x), NULL, 0), 0);
	ck_assert_int_eq(drbg_generate(b, y, sizeof(y), A48, 1), 0);
	ck_assert_mem_ne(x, y, sizeof(x));
	drbg_free(a);
	drbg_free(b);
}
END_TEST

/* ------------------------------------------------------------- wiping */

START_TEST(test_uninstantiate_wipes)
{
	struct drbg *d = ready_drbg(_i, 0), *fresh = ready_drbg(_i, 0);
	uint8_t x[100], y[100];

	ck_assert_int_eq(drbg_generate(d, x, sizeof(x), A48, 20), 0);
	ck_assert(!all_equal(d->key, sizeof(d->key), 0));
	ck_assert(!all_equal(d->v, sizeof(d->v), 0));
	drbg_uninstantiate(d);
	ck_assert(all_equal(d->key, sizeof(d->key), 0));
	ck_assert(all_equal(d->v, sizeof(d->v), 0));
	ck_assert_ptr_null(d->ctr);
	ck_assert_uint_eq(d->reseed_counter, 0);
	ck_assert(!drbg_is_instantiated(d));
	ck_assert_int_eq(drbg_generate(d, x, sizeof(x), NULL, 0), -ENOTCONN);
	ck_assert_int_eq(drbg_reseed(d, E48, 48, NULL, 0), -ENOTCONN);
	drbg_uninstantiate(d); /* twice is fine */

	/* Nothing of the old state survives: same as a fresh instance. */
	if (_i)
		ck_assert_int_eq(drbg_instantiate(d, E48, 32, N16, 16, NULL, 0), 0);
	else
		ck_assert_int_eq(drbg_instantiate(d, E48, 48, NULL, 0, NULL, 0), 0);
	ck_assert_int_eq(drbg_generate(d, x, sizeof(x), NULL, 0), 0);
	ck_assert_int_eq(drbg_generate(fresh, y, sizeof(y), NULL, 0), 0);
	ck_assert_mem_eq(x, y, sizeof(x));
	drbg_free(d);
	drbg_free(fresh);
}
END_TEST

/* ---------------------------------------------------- counter and df */

START_TEST(test_be128_add)
{
	uint8_t v[16];

	memset(v, 0xff, sizeof(v));
	be128_add(v, 1);
	ck_assert(all_equal(v, 16, 0));
	memset(v, 0, sizeof(v));
	v[15] = 0xff;
	be128_add(v, 1);
	ck_assert_uint_eq(v[14], 1);
	ck_assert_uint_eq(v[15], 0);
	memset(v, 0, sizeof(v));
	v[8] = 0xff;
	memset(v + 8, 0xff, 8);
	be128_add(v, UINT64_MAX); /* 2^64-1 + 2^64-1 = 2^65 - 2 */
	ck_assert_uint_eq(v[7], 1);
	ck_assert_uint_eq(v[15], 0xfe);
	ck_assert(all_equal(v + 8, 7, 0xff));
}
END_TEST

/* Generate with V = 2^128 - 1: the blocks are E(K, 0), E(K, 1), ...
 * (mod 2^ctr_len, 10.2.1.5.1 step 4.1); check against single-block ECB. */
START_TEST(test_counter_wraps)
{
	struct drbg *d = ready_drbg(true, 0);
	uint8_t out[40], want[48], blk[16] = { 0 };
	gcry_cipher_hd_t ecb;

	memset(d->v, 0xff, sizeof(d->v));
	ck_assert_int_eq(gcry_cipher_open(&ecb, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_ECB, 0), 0);
	ck_assert_int_eq(gcry_cipher_setkey(ecb, d->key, 32), 0);
	for (int i = 0; i < 3; i++) {
		blk[15] = (uint8_t)i;
		ck_assert_int_eq(gcry_cipher_encrypt(ecb, want + 16 * i, 16, blk, 16), 0);
	}
	gcry_cipher_close(ecb);
	ck_assert_int_eq(drbg_generate(d, out, sizeof(out), NULL, 0), 0);
	ck_assert_mem_eq(out, want, sizeof(out));
	drbg_free(d);
}
END_TEST

/* The df hashes entropy ‖ nonce ‖ personalization: where the pieces are
 * cut must not matter, including across the 512-byte streaming chunks. */
START_TEST(test_df_segments)
{
	static uint8_t big[5000];
	struct drbg *a = new_drbg(true, 0), *b = new_drbg(true, 0);
	uint8_t x[64], y[64];

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + 3);
	ck_assert_int_eq(drbg_instantiate(a, big, 1000, big + 1000, 3001, big + 4001, 999), 0);
	ck_assert_int_eq(drbg_instantiate(b, big, 33, big + 33, 15, big + 48, 4952), 0);
	ck_assert_int_eq(drbg_generate(a, x, sizeof(x), big, 777), 0);
	ck_assert_int_eq(drbg_generate(b, y, sizeof(y), big, 777), 0);
	ck_assert_mem_eq(x, y, sizeof(x));
	ck_assert_int_eq(drbg_reseed(a, big, 4000, big + 4000, 1000), 0);
	ck_assert_int_eq(drbg_reseed(b, big, 32, big + 32, 4968), 0);
	ck_assert_int_eq(drbg_generate(a, x, sizeof(x), NULL, 0), 0);
	ck_assert_int_eq(drbg_generate(b, y, sizeof(y), NULL, 0), 0);
	ck_assert_mem_eq(x, y, sizeof(x));
	drbg_free(a);
	drbg_free(b);
}
END_TEST

/* ------------------------------------------------------ known answers */

/* NIST CAVP CTR_DRBG (CAVS 14.3) drbgvectors_pr_true, COUNT 0 of two groups,
 * with Key and V after each step from CTR_DRBG.txt. */
struct kat_pr {
	bool use_df;
	const char *entropy, *nonce, *add[2], *entropy_pr[2], *returned;
	const char *key[3], *v[3]; /* after instantiate, generate 1, 2 */
};

static const struct kat_pr kat_pr[] = {
	{ .use_df = true,
	  .entropy = "a31337e0cbf2ee3e8d1d39324c978e714b5acc678920d5839fe95477ca3b8741",
	  .nonce = "a7f8b770a506acfc79b2c431660d310f",
	  .add = { "5494597f0e8644d6028495c6599911cf30fc96a1b92a3a5dc862fecfc353c43d",
		   "e7635b6f9e63c08942c4b5c86b5e60bbe3e89ea3809fb3939985c93eedd17f8d" },
	  .entropy_pr = { "c2e44d8b2c97f4c14e39c8137cc62818f1a223dde1dfe9def8672c2a6fab8c04",
			  "923405e7878b3e203cb531f688c10725d7a55edacc2b9f195f7137080b278ea1" },
	  .returned = "5dbd55ed2f6d6c1749096b40f6a97d9cf42c0841b27ce0efd7433110d8118955"
		      "c8cefeb9db8e1c7961eb3f517f2047d27281261760a5e2b24535bb6f565bb971",
	  .key = { "40f162b20a193800bd4a3d7c353596d165fbd50dbcc5d6e724ec2a55af44cecf",
		   "4df75bbeb04e14cf4f847b740b4c702d85644fe208987f35efe68e245347b9fb",
		   "f674d25a13acdc4db0261376c856222d04371a06bfccf579c4d386e4b0a5dd7f" },
	  .v = { "c7ef0238e5b390b1e1513ff6ddc7a1da", "33b67bf30f192aae40095ec18f307fae",
		 "36c9ab96cf42f4b594d847fa1096b21f" } },
	{ .use_df = false,
	  .entropy = "faf346c9c8afbc5ab6e33ce492247fac6db9a7ba4297557f587a42563ddf56c9"
		     "0e41c6afb56233815b74e091bac7d8e5",
	  .nonce = "",
	  .add = { "", "" },
	  .entropy_pr = { "dfc111252d7146922713720ae1e348a07ae403b5238fefb4e8592f6f6cc4a61c"
			  "94828db84c6faecd1502261008011f2c",
			  "4528bac5b99c772347d44f4ece79bc811ca8ebea9483fa5f5040c02f77069dad"
			  "1aec7adaa8a9a6a9ddabab045d328a90" },
	  .returned = "bc013dc891db12c34ad11944805bf13dfd67ff2c23176d83f5b396b69e400042"
		      "252e11816c3095421137181a5d0ee37c83a339c58d080946ca90aa437d50d9cf",
	  .key = { "a9fccc320fea8ae31f80881556ef0c27a31ee7870ff73e115f348785872ccbd1",
		   "59ab2aa229c17b2ccf5b633ad905aa4396d717cd7109c4396176b445e23b54b0",
		   "48f4632bbc79c4bde48a8588a5395afcdccc84f2a3b25b8be2715cd8f9dd8a6b" },
	  .v = { "7c21c56582c419f58ad6151fcfc1ed6b", "9ac50e38805dab58baf6429436e00b39",
		 "24f485205e3baf899b8c226c2ffc73ce" } },
};

static void assert_state(const struct drbg *d, const char *key, const char *v)
{
	uint8_t k[32], vv[16];

	hex(k, sizeof(k), key);
	hex(vv, sizeof(vv), v);
	ck_assert_mem_eq(d->key, k, 32);
	ck_assert_mem_eq(d->v, vv, 16);
}

START_TEST(test_kat_prediction_resistance)
{
	const struct kat_pr *k = &kat_pr[_i];
	struct drbg *d = new_drbg(k->use_df, 0);
	uint8_t e[64], n[64], a[64], out[64], want[64];
	size_t el, nl, al;

	el = hex(e, sizeof(e), k->entropy);
	nl = hex(n, sizeof(n), k->nonce);
	ck_assert_int_eq(drbg_instantiate(d, e, el, n, nl, NULL, 0), 0);
	assert_state(d, k->key[0], k->v[0]);
	for (int i = 0; i < 2; i++) {
		/* 9.3.1: reseed with the additional input, generate without. */
		el = hex(e, sizeof(e), k->entropy_pr[i]);
		al = hex(a, sizeof(a), k->add[i]);
		ck_assert_int_eq(drbg_reseed(d, e, el, a, al), 0);
		ck_assert_int_eq(drbg_generate(d, out, sizeof(out), NULL, 0), 0);
		assert_state(d, k->key[i + 1], k->v[i + 1]);
	}
	hex(want, sizeof(want), k->returned);
	ck_assert_mem_eq(out, want, sizeof(out));
	drbg_free(d);
}
END_TEST

/* Fresh vectors from an independent Python reference: odd output lengths
 * (partial last block), long inputs and a 3-byte additional input. */
START_TEST(test_kat_odd_lengths)
{
	struct drbg *d = new_drbg(true, 0);
	uint8_t in[300], out[100], want[100];

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)i;
	ck_assert_int_eq(drbg_instantiate(d, in, 40, in + 40, 20, in + 60, 240), 0);
	ck_assert_int_eq(drbg_generate(d, out, 17, in, 3), 0);
	hex(want, sizeof(want), "e4724bf6ba19c143aa2f9a0af8008e245f");
	ck_assert_mem_eq(out, want, 17);
	ck_assert_int_eq(drbg_generate(d, out, 100, NULL, 0), 0);
	hex(want, sizeof(want),
	    "f6f5ee76e5e95542f90c8df6ae7a6e22c3be2994edad81cd8946946b7c929c21"
	    "259f0f0a5e66104613ec34291c7831448bf022518efaa83d6ef0248f0feaa90a"
	    "086336ed3a8217a7bc3b12a8934abd34034633ea07e32c61dd1567a8f0f7a1f7"
	    "6678137e");
	ck_assert_mem_eq(out, want, 100);
	drbg_free(d);
}
END_TEST

static Suite *drbg_suite(void)
{
	Suite *s = suite_create("drbg");
	TCase *tc;

	tc = tcase_create("setup");
	tcase_add_test(tc, test_selftest);
	tcase_add_test(tc, test_library_init_idempotent);
	tcase_add_test(tc, test_new_params);
	tcase_add_test(tc, test_secmem_exhausted);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, test_instantiate_errors_df);
	tcase_add_test(tc, test_instantiate_errors_nodf);
	tcase_add_test(tc, test_reseed_errors);
	/* _i: 0 no df, 1 df */
	tcase_add_loop_test(tc, test_generate_errors_leave_output, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("state");
	tcase_add_loop_test(tc, test_reseed_counter, 0, 2);
	tcase_add_loop_test(tc, test_reseed_changes_output, 0, 2);
	tcase_add_loop_test(tc, test_uninstantiate_wipes, 0, 2);
	tcase_add_test(tc, test_be128_add);
	tcase_add_test(tc, test_counter_wraps);
	tcase_add_test(tc, test_df_segments);
	suite_add_tcase(s, tc);

	tc = tcase_create("known answers");
	tcase_add_loop_test(tc, test_kat_prediction_resistance, 0, 2);
	tcase_add_test(tc, test_kat_odd_lengths);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return td_run(drbg_suite()); }
