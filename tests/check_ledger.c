// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the credit ledger (ledger.h): deposits of n*c/1024 bits
 * kept exactly in 1/1024 bit, the 256-bit cap with the excess forfeited,
 * nothing available below 256 bits, spending at most 8 bits per byte and
 * at most the balance, closing the epoch so nothing is credited twice,
 * discards, bad arguments; and a randomized property test against a
 * reference model.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/ledger.h"
#include "test_doubles.h"

#define UNIT 1024u
#define CAP_UNITS ((uint64_t)LEDGER_CAP_BITS * UNIT)
#define BLOCK_BITS 20000u /* one FIPS block, what the daemon deposits */

/*
 * For hot loops: Check's ck_assert_*() writes a mark point to a pipe on
 * every call, which makes a million of them take seconds.  This one costs
 * nothing until it fails.
 */
#define REQUIRE(cond, ...)                          \
	do {                                        \
		if (!(cond))                        \
			require_failed(#cond, __VA_ARGS__); \
	} while (0)

static void require_failed(const char *cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

static void require_failed(const char *cond, const char *fmt, ...)
{
	char where[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(where, sizeof(where), fmt, ap);
	va_end(ap);
	ck_abort_msg("%s: failed: %s", where, cond);
	abort(); /* not reached */
}

static uint64_t sum_deposited(const struct ledger *l)
{
	uint64_t s = 0;

	for (unsigned int i = 0; i < LEDGER_MAX_SOURCES; i++)
		s += l->deposited[i];
	return s;
}

/* Every unit that went in is in the balance, was credited or was
 * forfeited: nothing appears from nowhere, nothing vanishes silently. */
static void check_conservation(const struct ledger *l)
{
	REQUIRE(sum_deposited(l) ==
			l->credited_bits * UNIT + l->forfeited + l->balance,
		"deposited %" PRIu64 " != credited %" PRIu64
		" * 1024 + forfeited %" PRIu64 " + balance %" PRIu64,
		sum_deposited(l), l->credited_bits, l->forfeited, l->balance);
	REQUIRE(l->balance <= CAP_UNITS, "balance %" PRIu64, l->balance);
}

START_TEST(test_init_empty)
{
	struct ledger l;

	memset(&l, 0xa5, sizeof(l));
	ledger_init(&l);
	ck_assert_uint_eq(l.balance, 0);
	ck_assert_uint_eq(l.credited_bits, 0);
	ck_assert_uint_eq(l.forfeited, 0);
	ck_assert_uint_eq(sum_deposited(&l), 0);
	ck_assert_uint_eq(ledger_available(&l), 0);
	ck_assert_uint_eq(ledger_spend(&l, 64), 0);
}
END_TEST

START_TEST(test_deposit_amount)
{
	struct ledger l;

	ledger_init(&l);
	/* 1000 bits at full credit: 1000 bits. */
	ck_assert_int_eq(ledger_deposit(&l, 0, 100, 1024), 100);
	ck_assert_uint_eq(l.balance, 100 * UNIT);
	/* 1000 bits at credit 512: 500 bits. */
	ck_assert_int_eq(ledger_deposit(&l, 1, 100, 512), 50);
	ck_assert_uint_eq(l.balance, 150 * UNIT);
	/* Credit 0 adds nothing, and says so. */
	ck_assert_int_eq(ledger_deposit(&l, 2, BLOCK_BITS, 0), 0);
	ck_assert_uint_eq(l.balance, 150 * UNIT);
	/* 3 bits at credit 1: 3/1024 bit, kept exactly, reported as 0. */
	ck_assert_int_eq(ledger_deposit(&l, 3, 3, 1), 0);
	ck_assert_uint_eq(l.balance, 150 * UNIT + 3);
	ck_assert_uint_eq(l.deposited[0], 100 * UNIT);
	ck_assert_uint_eq(l.deposited[1], 50 * UNIT);
	ck_assert_uint_eq(l.deposited[2], 0);
	ck_assert_uint_eq(l.deposited[3], 3);
	check_conservation(&l);
}
END_TEST

/*
 * rdrand's credit is 2 bits per 1024: a 20,000-bit block carries 39.0625
 * bits.  Six blocks (234.375 bits) are not enough to credit anything;
 * the seventh crosses 256.  Fractions must add up exactly, not be lost
 * to rounding per block.
 */
START_TEST(test_rdrand_credit_adds_up)
{
	struct ledger l;
	unsigned int added = 0;

	ledger_init(&l);
	for (int i = 1; i <= 6; i++) {
		int r = ledger_deposit(&l, 2, BLOCK_BITS, 2);

		ck_assert_int_ge(r, 39);
		ck_assert_int_le(r, 40);
		added += (unsigned int)r;
		ck_assert_uint_eq(l.balance, (uint64_t)i * BLOCK_BITS * 2);
		ck_assert_uint_eq(ledger_available(&l), 0);
	}
	/* Whole bits reported add up to the floor of the total or just
	 * below it (each call rounds its own increase down). */
	ck_assert_uint_le(added, 234);
	ck_assert_uint_ge(added, 234 - 6);
	/* 234.375 -> capped at 256: 21.625 bits added, reported as 21. */
	ck_assert_int_eq(ledger_deposit(&l, 2, BLOCK_BITS, 2), 21);
	ck_assert_uint_eq(ledger_available(&l), 256);
	ck_assert_uint_eq(l.deposited[2], 7ull * BLOCK_BITS * 2);
	ck_assert_uint_eq(l.forfeited, 7ull * BLOCK_BITS * 2 - CAP_UNITS);
	check_conservation(&l);
}
END_TEST

/* 1/1024 bit at a time: 262,144 deposits make exactly 256 bits. */
START_TEST(test_tiny_deposits_exact)
{
	struct ledger l;

	ledger_init(&l);
	for (uint64_t i = 0; i < CAP_UNITS - 1; i++) {
		int r = ledger_deposit(&l, 5, 1, 1);

		REQUIRE(r == 0, "deposit %" PRIu64 " returned %d", i, r);
	}
	ck_assert_uint_eq(l.balance, CAP_UNITS - 1);
	ck_assert_uint_eq(ledger_available(&l), 0);
	ck_assert_uint_eq(ledger_spend(&l, 4096), 0);
	/* Reported as 0 whole bits added, but it makes 256. */
	ck_assert_int_eq(ledger_deposit(&l, 5, 1, 1), 0);
	ck_assert_uint_eq(ledger_available(&l), 256);
	ck_assert_uint_eq(l.forfeited, 0);
	ck_assert_uint_eq(ledger_spend(&l, 4096), 256);
	check_conservation(&l);
}
END_TEST

START_TEST(test_cap_forfeits_excess)
{
	struct ledger l;

	ledger_init(&l);
	/* One full-credit block is 20,000 bits; the DRBG holds 256. */
	ck_assert_int_eq(ledger_deposit(&l, 0, BLOCK_BITS, 1024), 256);
	ck_assert_uint_eq(l.balance, CAP_UNITS);
	ck_assert_uint_eq(l.forfeited, (uint64_t)(BLOCK_BITS - 256) * UNIT);
	ck_assert_uint_eq(ledger_available(&l), 256);
	/* More while full adds nothing and is all forfeited. */
	ck_assert_int_eq(ledger_deposit(&l, 1, 1000, 1024), 0);
	ck_assert_uint_eq(l.balance, CAP_UNITS);
	ck_assert_uint_eq(l.forfeited,
			  (uint64_t)(BLOCK_BITS - 256 + 1000) * UNIT);
	ck_assert_uint_eq(ledger_available(&l), 256);
	/* Per-source totals are uncapped: they say what came in. */
	ck_assert_uint_eq(l.deposited[0], (uint64_t)BLOCK_BITS * UNIT);
	ck_assert_uint_eq(l.deposited[1], 1000ull * UNIT);
	check_conservation(&l);
}
END_TEST

START_TEST(test_cap_partial)
{
	struct ledger l;

	ledger_init(&l);
	ck_assert_int_eq(ledger_deposit(&l, 0, 200, 1024), 200);
	/* 100 more: 56 fit, 44 are forfeited. */
	ck_assert_int_eq(ledger_deposit(&l, 0, 100, 1024), 56);
	ck_assert_uint_eq(l.balance, CAP_UNITS);
	ck_assert_uint_eq(l.forfeited, 44ull * UNIT);
	check_conservation(&l);
}
END_TEST

START_TEST(test_nothing_below_min)
{
	struct ledger l;

	ledger_init(&l);
	ck_assert_int_eq(ledger_deposit(&l, 0, 255, 1024), 255);
	ck_assert_uint_eq(ledger_available(&l), 0);
	/* A spend with nothing available credits nothing and keeps the
	 * balance: the reseeds so far still count towards the next 256. */
	ck_assert_uint_eq(ledger_spend(&l, 64), 0);
	ck_assert_uint_eq(l.balance, 255ull * UNIT);
	ck_assert_uint_eq(l.credited_bits, 0);
	/* 255 bits and 1023/1024: still nothing. */
	ck_assert_int_eq(ledger_deposit(&l, 0, 1023, 1), 0);
	ck_assert_uint_eq(ledger_available(&l), 0);
	ck_assert_uint_eq(ledger_spend(&l, 64), 0);
	/* The last 1/1024 bit makes 256. */
	ck_assert_int_eq(ledger_deposit(&l, 0, 1, 1), 0);
	ck_assert_uint_eq(ledger_available(&l), 256);
	check_conservation(&l);
}
END_TEST

START_TEST(test_spend_whole_balance)
{
	struct ledger l;

	ledger_init(&l);
	ledger_deposit(&l, 0, BLOCK_BITS, 1024);
	/* 64 bytes (rngd's step) could carry 512 bits; the balance is 256. */
	ck_assert_uint_eq(ledger_spend(&l, 64), 256);
	ck_assert_uint_eq(l.balance, 0);
	ck_assert_uint_eq(l.credited_bits, 256);
	ck_assert_uint_eq(ledger_available(&l), 0);
	/* Right after: the same DRBG state, nothing new: nothing. */
	ck_assert_uint_eq(ledger_spend(&l, 64), 0);
	ck_assert_uint_eq(ledger_spend(&l, 4096), 0);
	ck_assert_uint_eq(l.credited_bits, 256);
	check_conservation(&l);
}
END_TEST

START_TEST(test_spend_limited_by_bytes)
{
	struct ledger l;
	static const struct {
		size_t bytes;
		unsigned int want;
	} cases[] = {
		{ 1, 8 }, { 2, 16 }, { 16, 128 }, { 31, 248 },
		{ 32, 256 }, { 33, 256 }, { 64, 256 }, { 100000, 256 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ledger_init(&l);
		ledger_deposit(&l, 0, BLOCK_BITS, 1024);
		ck_assert_msg(ledger_spend(&l, cases[i].bytes) == cases[i].want,
			      "spend(%zu bytes) should credit %u bits",
			      cases[i].bytes, cases[i].want);
		/* The epoch is closed: the rest of the balance is
		 * forfeited, not credited with the next output. */
		ck_assert_uint_eq(l.balance, 0);
		ck_assert_uint_eq(ledger_spend(&l, cases[i].bytes), 0);
		ck_assert_uint_eq(l.credited_bits, cases[i].want);
		check_conservation(&l);
	}
}
END_TEST

START_TEST(test_spend_zero_bytes)
{
	struct ledger l;

	ledger_init(&l);
	ledger_deposit(&l, 0, BLOCK_BITS, 1024);
	/* No output, no credit, and the epoch stays open. */
	ck_assert_uint_eq(ledger_spend(&l, 0), 0);
	ck_assert_uint_eq(ledger_available(&l), 256);
	ck_assert_uint_eq(ledger_spend(&l, 8), 64);
	check_conservation(&l);
}
END_TEST

/* A new epoch needs 256 new bits, not what was left of the old one. */
START_TEST(test_new_epoch_needs_new_deposits)
{
	struct ledger l;

	ledger_init(&l);
	ledger_deposit(&l, 0, BLOCK_BITS, 1024);
	ck_assert_uint_eq(ledger_spend(&l, 1), 8);
	ck_assert_int_eq(ledger_deposit(&l, 0, 255, 1024), 255);
	ck_assert_uint_eq(ledger_spend(&l, 64), 0);
	ck_assert_int_eq(ledger_deposit(&l, 1, 1, 1024), 1);
	ck_assert_uint_eq(ledger_spend(&l, 64), 256);
	ck_assert_uint_eq(l.credited_bits, 264);
	check_conservation(&l);
}
END_TEST

START_TEST(test_discard)
{
	struct ledger l;

	ledger_init(&l);
	ledger_deposit(&l, 0, BLOCK_BITS, 1024);
	ledger_discard(&l);
	ck_assert_uint_eq(l.balance, 0);
	ck_assert_uint_eq(ledger_available(&l), 0);
	ck_assert_uint_eq(ledger_spend(&l, 64), 0);
	ck_assert_uint_eq(l.credited_bits, 0);
	ck_assert_uint_eq(l.forfeited, (uint64_t)BLOCK_BITS * UNIT);
	check_conservation(&l);
	/* A partial balance is forgotten too: 200 + 100 after a discard
	 * is 100, not 300. */
	ledger_deposit(&l, 0, 200, 1024);
	ledger_discard(&l);
	ledger_deposit(&l, 0, 100, 1024);
	ck_assert_uint_eq(l.balance, 100ull * UNIT);
	ck_assert_uint_eq(ledger_available(&l), 0);
	/* Discarding an empty ledger is harmless. */
	ledger_init(&l);
	ledger_discard(&l);
	ck_assert_uint_eq(l.forfeited, 0);
	check_conservation(&l);
}
END_TEST

START_TEST(test_bad_arguments)
{
	struct ledger l, before;

	ledger_init(&l);
	ledger_deposit(&l, 0, 100, 1024);
	before = l;
	ck_assert_int_eq(ledger_deposit(&l, LEDGER_MAX_SOURCES, 100, 1024),
			 -EINVAL);
	ck_assert_int_eq(ledger_deposit(&l, UINT32_MAX, 100, 1024), -EINVAL);
	ck_assert_int_eq(ledger_deposit(&l, 0, 100, 1025), -EINVAL);
	ck_assert_int_eq(ledger_deposit(&l, 0, 100, UINT32_MAX), -EINVAL);
	ck_assert_int_eq(ledger_deposit(&l, 0, (1ull << 40) + 1, 1024),
			 -EINVAL);
	ck_assert_int_eq(ledger_deposit(&l, 0, UINT64_MAX, 1), -EINVAL);
	/* A rejected deposit leaves no trace. */
	ck_assert_mem_eq(&l, &before, sizeof(l));
	/* The limits themselves are accepted. */
	ck_assert_int_eq(ledger_deposit(&l, LEDGER_MAX_SOURCES - 1, 1, 1024),
			 1);
	ck_assert_int_eq(ledger_deposit(&l, 0, 1ull << 40, 1024), 256 - 101);
	ck_assert_uint_eq(l.deposited[0], 100ull * UNIT + (1ull << 50));
	check_conservation(&l);
}
END_TEST

/* ---- randomized property test ------------------------------------------ */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible from the seed printed on failure. */
	return td_xorshift64(&rng_state);
}

static uint64_t rnd_below(uint64_t n)
{
	return rnd() % n;
}

static unsigned int random_credit(void)
{
	static const unsigned int typical[] = { 0, 1, 2, 8, 100, 512, 1024 };

	switch (rnd_below(8)) {
	case 0:
		return 1025 + (unsigned int)rnd_below(2000); /* invalid */
	case 1:
		return (unsigned int)rnd_below(1025);
	default:
		return typical[rnd_below(sizeof(typical) / sizeof(typical[0]))];
	}
}

static uint64_t random_bits(void)
{
	switch (rnd_below(6)) {
	case 0:
		return rnd_below(64);
	case 1:
		return rnd_below(4096);
	case 2:
		return (1ull << 40) + 1 + rnd_below(1000); /* invalid */
	default:
		return BLOCK_BITS;
	}
}

/*
 * Over many random sequences of deposits, spends and discards, compare
 * the ledger with a reference model and check the rules that matter:
 * total credited <= total deposited; every credit > 0 came after at least
 * 256 bits deposited since the last credit or discard; a credit is at
 * most 8 bits per byte and at most 256; conservation.
 */
START_TEST(test_random_sequences)
{
	const uint64_t seed = 0x5eed0f1ed9e5ull + (uint64_t)_i;
	uint64_t ops = 0, credits = 0;

	rng_state = seed;
	for (int seq = 0; seq < 5000; seq++) {
		struct ledger l;
		uint64_t since = 0;     /* units deposited since the epoch began */
		uint64_t deposited = 0; /* units, all valid deposits */
		uint64_t credited = 0;  /* bits */
		int len = 1 + (int)rnd_below(80);

		ledger_init(&l);
		for (int op = 0; op < len; op++, ops++) {
			uint64_t what = rnd_below(100);

#define WHERE "seed %#" PRIx64 " sequence %d op %d", seed, seq, op
			if (what < 60) {
				unsigned int idx = (unsigned int)rnd_below(
					LEDGER_MAX_SOURCES + 2);
				uint64_t bits = random_bits();
				unsigned int c = random_credit();
				bool valid = idx < LEDGER_MAX_SOURCES &&
					     c <= 1024 && bits <= (1ull << 40);
				uint64_t bal = l.balance;
				int r = ledger_deposit(&l, idx, bits, c);

				if (!valid) {
					REQUIRE(r == -EINVAL && l.balance == bal,
						WHERE);
					continue;
				}
				REQUIRE(r >= 0 &&
						(uint64_t)r == (l.balance - bal) / UNIT,
					WHERE);
				since += bits * c;
				deposited += bits * c;
			} else if (what < 95) {
				size_t bytes = (size_t)rnd_below(80);
				unsigned int avail = ledger_available(&l);
				unsigned int got = ledger_spend(&l, bytes);
				unsigned int want = 0;

				if (since >= CAP_UNITS && bytes > 0)
					want = bytes * 8 < 256 ? (unsigned int)bytes * 8
							       : 256;
				REQUIRE(got == want, WHERE);
				REQUIRE(avail == (since >= CAP_UNITS ? 256u : 0u),
					WHERE);
				if (got > 0) {
					/* The rules, said directly. */
					REQUIRE(since >= (uint64_t)LEDGER_MIN_RESEED_BITS * UNIT,
						WHERE);
					REQUIRE(got <= 8 * bytes, WHERE);
					REQUIRE(got <= LEDGER_CAP_BITS, WHERE);
					REQUIRE(l.balance == 0, WHERE);
					REQUIRE(ledger_available(&l) == 0, WHERE);
					since = 0;
					credited += got;
					credits++;
				}
			} else {
				ledger_discard(&l);
				REQUIRE(l.balance == 0, WHERE);
				since = 0;
			}
			REQUIRE(l.balance == (since < CAP_UNITS ? since : CAP_UNITS),
				WHERE);
			REQUIRE(credited * UNIT <= deposited, WHERE);
			REQUIRE(l.credited_bits == credited, WHERE);
			REQUIRE(sum_deposited(&l) == deposited, WHERE);
			check_conservation(&l);
#undef WHERE
		}
	}
	/* The generator must have exercised crediting, or the test says
	 * nothing. */
	ck_assert_uint_gt(credits, 1000);
	ck_assert_uint_gt(ops, 100000);
}
END_TEST


/* Every part of a split block carries LEDGER_PART_BITS, and one more part
 * would leave some part short: the split is as fine as it may be. */
START_TEST(test_block_parts)
{
	static const size_t sizes[] = { 2500, 64, 65, 100, 4096, 65536 };

	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t bytes = sizes[si];

		for (unsigned int credit = 0; credit <= 1024; credit++) {
			unsigned int n = ledger_block_parts(bytes, credit);
			size_t shortest = bytes;

			ck_assert_uint_ge(n, 1);
			for (size_t k = 0; k < n; k++) {
				size_t len = (k + 1) * bytes / n - k * bytes / n;

				if (len < shortest)
					shortest = len;
			}
			if (n > 1) {
				ck_assert_msg((uint64_t)shortest * 8 * credit >=
						      (uint64_t)LEDGER_PART_BITS * 1024,
					      "%zu bytes, credit %u: %u parts, one of %zu bytes",
					      bytes, credit, n, shortest);
				/* And never below the DRBG's minimum input. */
				ck_assert_uint_ge(shortest, 32);
			}
			/* n + 1 even cuts: the shortest falls below the bar. */
			if (credit > 0)
				ck_assert_msg((uint64_t)(bytes / (n + 1)) * 8 * credit <
						      (uint64_t)LEDGER_PART_BITS * 1024,
					      "%zu bytes, credit %u: %u parts, could be more",
					      bytes, credit, n);
		}
	}
	/* The sources' defaults on one FIPS block. */
	ck_assert_uint_eq(ledger_block_parts(2500, 1024), 39);
	ck_assert_uint_eq(ledger_block_parts(2500, 64), 2);
	ck_assert_uint_eq(ledger_block_parts(2500, 2), 1);
	ck_assert_uint_eq(ledger_block_parts(2500, 0), 1);
}
END_TEST

static Suite *ledger_suite(void)
{
	Suite *s = suite_create("ledger");
	TCase *tc;

	tc = tcase_create("deposit");
	tcase_add_test(tc, test_init_empty);
	tcase_add_test(tc, test_deposit_amount);
	tcase_add_test(tc, test_rdrand_credit_adds_up);
	tcase_add_test(tc, test_tiny_deposits_exact);
	tcase_add_test(tc, test_cap_forfeits_excess);
	tcase_add_test(tc, test_cap_partial);
	tcase_add_test(tc, test_bad_arguments);
	suite_add_tcase(s, tc);

	tc = tcase_create("spend");
	tcase_add_test(tc, test_nothing_below_min);
	tcase_add_test(tc, test_spend_whole_balance);
	tcase_add_test(tc, test_spend_limited_by_bytes);
	tcase_add_test(tc, test_spend_zero_bytes);
	tcase_add_test(tc, test_new_epoch_needs_new_deposits);
	tcase_add_test(tc, test_discard);
	tcase_add_test(tc, test_block_parts);
	suite_add_tcase(s, tc);

	tc = tcase_create("random");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_random_sequences, 0, 3);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return td_run(ledger_suite()); }
