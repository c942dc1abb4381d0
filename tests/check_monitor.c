// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the integrity monitor (monitor.h): every FIPS 140-2 bound
 * just passed and just failed by blocks built deterministically here; a
 * bit-serial reference written from the FIPS text (and one of rngtest 5's
 * counting) checked against the word-at-a-time code on thousands of
 * perturbed blocks, on both code paths; 90B cutoffs pinned against values
 * computed independently; RCT/APT induced-failure streams; start-up test;
 * failure classes; reset; and the property tests of issue 3.
 *
 * All data is generated in this file from fixed seeds (no data files): the
 * xorshift64* generator below, bit planting and counted layouts.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/monitor.h"
#include "test_doubles.h"

#define B MONITOR_BLOCK_BYTES
#define NBITS (B * 8)

/* Check's ck_assert writes to a pipe per call; this costs nothing until it fails. */
#define REQUIRE(cond, fmt, ...)                                          \
	do {                                                             \
		if (!(cond))                                             \
			ck_abort_msg(fmt ": " #cond, ##__VA_ARGS__);     \
	} while (0)

/* ------------------------------------------------------------------------ */
/* Deterministic data                                                       */
/* ------------------------------------------------------------------------ */

/* xorshift64* (Vigna): fast, fixed-seed, good enough to look random to FIPS. */
struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	return td_xorshift64(&r->s);
}

static void rng_fill(struct rng *r, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i % 8 == 0) {
			uint64_t v = rng_next(r);

			for (size_t k = 0; k < 8 && i + k < n; k++)
				p[i + k] = (uint8_t)(v >> (8 * k));
		}
	}
}

static unsigned get_bit(const uint8_t *b, size_t i)
{
	return b[i / 8] >> (7 - i % 8) & 1;
}

static void set_bit(uint8_t *b, size_t i, unsigned v)
{
	if (v)
		b[i / 8] |= (uint8_t)(0x80 >> (i % 8));
	else
		b[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
}

static struct monitor *new_monitor(unsigned sample_bits, double h, bool portable,
				   enum monitor_fips_counting counting)
{
	struct monitor_params p;
	struct monitor *m = NULL;

	monitor_params_default(&p);
	p.sample_bits = sample_bits;
	p.min_entropy = h;
	p.portable = portable;
	p.fips_counting = counting;
	ck_assert_int_eq(monitor_new(&p, &m), 0);
	return m;
}

static unsigned test_block(struct monitor *m, const uint8_t *b)
{
	struct monitor_verdict v;

	ck_assert_int_eq(monitor_test_block(m, b, &v), 0);
	return v.failed;
}

/* FIPS bits of one block on a fresh monitor. */
static unsigned fips_of(const uint8_t *b)
{
	struct monitor *m = new_monitor(8, 8, false, MONITOR_FIPS_STANDARD);
	unsigned f = test_block(m, b) & MONITOR_FIPS_MASK;

	monitor_free(m);
	return f;
}

/* ------------------------------------------------------------------------ */
/* A bit-serial reference, written from the FIPS 140-2 text                 */
/* ------------------------------------------------------------------------ */

struct ref {
	uint32_t last32;
	bool seeded;
	unsigned last_bit; /* rngtest 5 only: carried between blocks */
};

static unsigned ref_fips(struct ref *st, const uint8_t *b, bool rngtest5)
{
	unsigned f = 0, ones = 0, runs[2][7] = { { 0 } }, poker[16] = { 0 }, maxrun = 0;
	unsigned run = 0, bit = 0, lb = st->last_bit;
	uint64_t sumsq = 0;
	static const unsigned lo[7] = { 0, 2315, 1114, 527, 240, 103, 103 };
	static const unsigned hi[7] = { 0, 2685, 1386, 723, 384, 209, 209 };

	for (size_t i = 0; i < B; i += 4) {
		uint32_t w = (uint32_t)b[i] | (uint32_t)b[i + 1] << 8 | (uint32_t)b[i + 2] << 16 |
			     (uint32_t)b[i + 3] << 24;

		if (st->seeded && w == st->last32)
			f |= MONITOR_FIPS_CONTINUOUS;
		st->last32 = w;
		st->seeded = true;
	}
	for (size_t i = 0; i < B; i++) {
		poker[b[i] >> 4]++;
		poker[b[i] & 15]++;
	}
	for (size_t i = 0; i < NBITS; i++) {
		unsigned c = get_bit(b, i);

		ones += c;
		if (i > 0 && c == bit) {
			run++;
		} else {
			if (i > 0) { /* a run of 'bit' ended */
				unsigned k = run > 6 ? 6 : run;

				if (rngtest5)
					runs[c][k]++; /* filed under the new bit */
				else
					runs[bit][k]++;
				maxrun = run > maxrun ? run : maxrun;
			} else if (rngtest5 && c != lb) {
				if (c)
					runs[0][6]++;
				else
					poker[15]++;
			}
			bit = c;
			run = 1;
		}
	}
	runs[bit][run > 6 ? 6 : run]++; /* the last run, filed correctly by both */
	maxrun = run > maxrun ? run : maxrun;
	st->last_bit = bit;

	if (ones <= 9725 || ones >= 10275)
		f |= MONITOR_FIPS_MONOBIT;
	for (unsigned v = 0; v < 16; v++)
		sumsq += (uint64_t)poker[v] * poker[v];
	/* X = 16/5000 Σf² - 5000 must lie in (2.16, 46.17); doubles are exact
	 * enough here: Σf² is an even integer, far from the bounds' rounding. */
	{
		double x = 16.0 / 5000.0 * (double)sumsq - 5000.0;

		if (!(x > 2.16 && x < 46.17))
			f |= MONITOR_FIPS_POKER;
	}
	for (unsigned k = 1; k <= 6; k++)
		for (unsigned c = 0; c < 2; c++)
			if (runs[c][k] < lo[k] || runs[c][k] > hi[k])
				f |= MONITOR_FIPS_RUNS;
	if (maxrun >= 26)
		f |= MONITOR_FIPS_LONGRUN;
	return f;
}

/* Perturbations that drive blocks towards every bound. */
static void perturbed_block(struct rng *r, uint8_t *b, unsigned mode)
{
	rng_fill(r, b, B);
	switch (mode % 7) {
	case 0: /* bias near the monobit bounds */
	{
		unsigned target = 9700 + (unsigned)(rng_next(r) % 600), ones = 0;

		for (size_t i = 0; i < NBITS; i++)
			ones += get_bit(b, i);
		while (ones != target) {
			size_t i = rng_next(r) % NBITS;
			unsigned want = ones < target;

			if (get_bit(b, i) != want) {
				set_bit(b, i, want);
				ones += want ? 1 : -1u;
			}
		}
		break;
	}
	case 1: /* Markov chain: run lengths drift */
	{
		uint64_t q = 0x70000000u + rng_next(r) % 0x20000000u; /* P(flip) in ~[0.44, 0.56] */
		unsigned v = rng_next(r) & 1;

		for (size_t i = 0; i < NBITS; i++) {
			if ((rng_next(r) >> 32) < q)
				v ^= 1;
			set_bit(b, i, v);
		}
		break;
	}
	case 2: /* a planted run of 22..30 bits anywhere, edges included */
	{
		unsigned len = 22 + (unsigned)(rng_next(r) % 9), v = rng_next(r) & 1;
		size_t pos = rng_next(r) % 4 == 0 ? (rng_next(r) & 1 ? 0 : NBITS - len)
						  : rng_next(r) % (NBITS - len);

		for (size_t i = pos; i < pos + len; i++)
			set_bit(b, i, v);
		if (pos > 0)
			set_bit(b, pos - 1, !v);
		if (pos + len < NBITS)
			set_bit(b, pos + len, !v);
		break;
	}
	case 3: /* one nibble value over-represented: poker near its bound */
	{
		unsigned nib = rng_next(r) % 16, n = 30 + (unsigned)(rng_next(r) % 40);

		for (unsigned k = 0; k < n; k++) {
			size_t i = rng_next(r) % B;

			b[i] = (uint8_t)(rng_next(r) & 1 ? (b[i] & 0x0f) | nib << 4 : (b[i] & 0xf0) | nib);
		}
		break;
	}
	case 4: /* a repeated word, inside or at the start */
	{
		size_t k = rng_next(r) % 625;

		if (k)
			memcpy(b + 4 * k, b + 4 * k - 4, 4);
		break;
	}
	case 5: /* runs of equal whole bytes 0x00/0xff, 2..5 long */
	{
		size_t i = rng_next(r) % (B - 5);
		unsigned n = 2 + (unsigned)(rng_next(r) % 4);

		memset(b + i, rng_next(r) & 1 ? 0xff : 0x00, n);
		break;
	}
	default:
		break;
	}
}

static void compare_with_reference(bool portable, enum monitor_fips_counting counting)
{
	struct monitor *m = new_monitor(8, 8, portable, counting);
	struct rng r = { 0x9e3779b97f4a7c15ull + portable * 7 + counting };
	struct ref st = { 0 };
	uint8_t b[B];
	unsigned seen = 0;

	for (unsigned n = 0; n < 3000; n++) {
		unsigned want, got;

		perturbed_block(&r, b, n);
		want = ref_fips(&st, b, counting == MONITOR_FIPS_RNGTEST5);
		got = test_block(m, b) & MONITOR_FIPS_MASK;
		REQUIRE(want == got, "block %u mode %u: reference %#x, monitor %#x", n, n % 7,
			want, got);
		seen |= got;
	}
	/* The perturbations reached every test, in both directions. */
	ck_assert_uint_eq(seen, MONITOR_FIPS_MASK);
	monitor_free(m);
}

START_TEST(test_reference_standard_simd)
{
	compare_with_reference(false, MONITOR_FIPS_STANDARD);
}
END_TEST

START_TEST(test_reference_standard_portable)
{
	compare_with_reference(true, MONITOR_FIPS_STANDARD);
}
END_TEST

START_TEST(test_reference_rngtest5)
{
	compare_with_reference(false, MONITOR_FIPS_RNGTEST5);
	compare_with_reference(true, MONITOR_FIPS_RNGTEST5);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* FIPS known answers: each bound just passed and just failed               */
/* ------------------------------------------------------------------------ */

/* Known answers at a test's bounds: a parameter of the block, and whether
 * the test fails it. */
struct bound {
	uint32_t param;
	bool fails;
};

/* The blocks @make makes from each case's parameter: FIPS test @flag fails
 * exactly those marked. */
static void check_bounds(void (*make)(uint8_t *, uint32_t), unsigned flag,
			 const struct bound *cases, size_t n)
{
	uint8_t b[B];

	for (size_t i = 0; i < n; i++) {
		make(b, cases[i].param);
		ck_assert_msg(!!(fips_of(b) & flag) == cases[i].fails,
			      "%u: %s", (unsigned)cases[i].param,
			      cases[i].fails ? "passed" : "failed");
	}
}

#define CHECK_BOUNDS(make, flag, cases)                                      \
	check_bounds((make), (flag), (cases), sizeof(cases) / sizeof((cases)[0]))

/* Fisher-Yates over @n values of @a, from @r. */
static void shuffle(unsigned *a, unsigned n, struct rng *r)
{
	for (unsigned i = n - 1; i > 0; i--) {
		unsigned j = (unsigned)(rng_next(r) % (i + 1)), t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

static void block_with_ones(uint8_t *b, uint32_t target)
{
	struct rng r = { 42 };
	unsigned ones = 0;

	rng_fill(&r, b, B);
	for (size_t i = 0; i < NBITS; i++)
		ones += get_bit(b, i);
	while (ones != target) {
		size_t i = rng_next(&r) % NBITS;
		unsigned want = ones < target;

		if (get_bit(b, i) != want) {
			set_bit(b, i, want);
			ones += want ? 1 : -1u;
		}
	}
}

/* Ones in the block. */
static const struct bound monobit[] = {
	{ 9725, true }, { 9726, false }, { 10274, false }, { 10275, true },
};

START_TEST(test_monobit_bounds)
{
	CHECK_BOUNDS(block_with_ones, MONITOR_FIPS_MONOBIT, monobit);
}
END_TEST

/*
 * A block whose 5,000 nibbles have the counts f[] with Σf² = sumsq exactly:
 * start from the flattest counts (Σf² = 1562504) and move single nibbles
 * from one value to another, each move adding 2(f_to - f_from) + 2.
 */
static void block_with_poker(uint8_t *b, uint32_t sumsq)
{
	unsigned f[16], nibs[5000], n = 0;
	uint32_t cur = 0;
	struct rng r = { 7 };

	for (unsigned v = 0; v < 16; v++) {
		f[v] = v < 8 ? 312 : 313;
		cur += f[v] * f[v];
	}
	while (cur != sumsq) {
		uint32_t best = 0;
		unsigned bf = 0, bt = 0;

		for (unsigned a = 0; a < 16; a++)
			for (unsigned t = 0; t < 16; t++) {
				uint32_t step = 2 * (f[t] - f[a]) + 2;

				if (a != t && f[t] >= f[a] && step <= sumsq - cur && step > best) {
					best = step;
					bf = a;
					bt = t;
				}
			}
		ck_assert_uint_gt(best, 0);
		f[bf]--;
		f[bt]++;
		cur += best;
	}
	for (unsigned v = 0; v < 16; v++)
		for (unsigned k = 0; k < f[v]; k++)
			nibs[n++] = v;
	shuffle(nibs, n, &r);
	for (unsigned i = 0; i < B; i++)
		b[i] = (uint8_t)(nibs[2 * i] << 4 | nibs[2 * i + 1]);
}

/* Σf²; X = 16/5000 Σf² - 5000: 1563174 → 2.1597 (fail), 1563176 → 2.1632
 * (pass), 1576928 → 46.1696 (pass), 1576930 → 46.1760 (fail). */
static const struct bound poker[] = {
	{ 1563174, true }, { 1563176, false }, { 1576928, false }, { 1576930, true },
};

START_TEST(test_poker_bounds)
{
	CHECK_BOUNDS(block_with_poker, MONITOR_FIPS_POKER, poker);
}
END_TEST

static const unsigned runs_lo[7] = { 0, 2315, 1114, 527, 240, 103, 103 };
static const unsigned runs_hi[7] = { 0, 2685, 1386, 723, 384, 209, 209 };

/*
 * A block made of exactly c[pol][k] runs of length k (k = 1..5) and c[pol][6]
 * runs of 6 or more, zeros and ones alternating (their totals differ by at
 * most one; the larger polarity goes first).  The bits left over lengthen the
 * 6+ runs evenly, never to 26.
 */
static void block_with_runs(uint8_t *b, const unsigned c[2][7])
{
	unsigned len[2][6000], n[2] = { 0, 0 }, total = 0, extra, longs = 0;
	size_t pos = 0;
	struct rng r = { 11 };

	for (unsigned pol = 0; pol < 2; pol++) {
		for (unsigned k = 1; k <= 6; k++)
			for (unsigned i = 0; i < c[pol][k]; i++) {
				len[pol][n[pol]++] = k;
				total += k;
			}
		longs += c[pol][6];
		shuffle(len[pol], n[pol], &r);
	}
	ck_assert_uint_le(total, NBITS);
	ck_assert_uint_le(n[0] > n[1] ? n[0] - n[1] : n[1] - n[0], 1);
	extra = NBITS - total;
	ck_assert_uint_le(6 + (extra + longs - 1) / longs, 25);
	{
		const unsigned per = (extra + longs - 1) / longs;

		for (unsigned pol = 0; pol < 2; pol++)
			for (unsigned i = 0; i < n[pol] && extra; i++)
				if (len[pol][i] == 6) {
					unsigned add = per > extra ? extra : per;

					len[pol][i] += add;
					extra -= add;
				}
	}
	ck_assert_uint_eq(extra, 0);
	memset(b, 0, B);
	for (unsigned i = 0, p = n[1] > n[0]; i < n[0] + n[1]; i++, p ^= 1) {
		unsigned l = len[p][i / 2];

		for (unsigned k = 0; k < l; k++)
			set_bit(b, pos++, p);
	}
	ck_assert_uint_eq(pos, NBITS);
}

START_TEST(test_runs_bounds)
{
	uint8_t b[B];

	for (unsigned k = 1; k <= 6; k++) {
		for (unsigned pol = 0; pol < 2; pol++) {
			unsigned c[2][7];

			/* At the lower bounds: pass; one run of length k fewer: fail. */
			for (unsigned q = 0; q < 2; q++)
				memcpy(c[q], runs_lo, sizeof(runs_lo));
			block_with_runs(b, (const unsigned(*)[7])c);
			REQUIRE(!(fips_of(b) & (MONITOR_FIPS_RUNS | MONITOR_FIPS_LONGRUN)),
				"k=%u at lower bounds", k);
			c[pol][k]--;
			block_with_runs(b, (const unsigned(*)[7])c);
			REQUIRE(fips_of(b) & MONITOR_FIPS_RUNS, "k=%u pol=%u below lower bound", k, pol);

			/* At the upper bound (both polarities): pass; one more: fail. */
			for (unsigned q = 0; q < 2; q++) {
				memcpy(c[q], runs_lo, sizeof(runs_lo));
				c[q][k] = runs_hi[k];
			}
			block_with_runs(b, (const unsigned(*)[7])c);
			REQUIRE(!(fips_of(b) & MONITOR_FIPS_RUNS), "k=%u at upper bound", k);
			c[pol][k]++;
			block_with_runs(b, (const unsigned(*)[7])c);
			REQUIRE(fips_of(b) & MONITOR_FIPS_RUNS, "k=%u pol=%u above upper bound", k, pol);
		}
	}
}
END_TEST

/* A random block whose longest run is short, with a run of len planted at pos. */
static void block_with_run(uint8_t *b, size_t pos, unsigned len, unsigned v)
{
	struct rng r = { 5 };
	struct ref st = { 0 };

	rng_fill(&r, b, B);
	/* This seed's block passes everything; its longest run is < 20. */
	ck_assert_uint_eq(ref_fips(&st, b, false), 0);
	for (size_t i = pos; i < pos + len; i++)
		set_bit(b, i, v);
	if (pos > 0)
		set_bit(b, pos - 1, !v);
	if (pos + len < NBITS)
		set_bit(b, pos + len, !v);
}

START_TEST(test_longrun_bounds)
{
	/* Start, end, byte-aligned and every offset within a byte. */
	static const size_t starts[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 1000, 9999, 19974, 19975 };
	uint8_t b[B];

	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++)
		for (unsigned v = 0; v < 2; v++) {
			size_t pos = starts[i];

			if (pos + 25 <= NBITS) {
				block_with_run(b, pos, 25, v);
				REQUIRE(!(fips_of(b) & MONITOR_FIPS_LONGRUN), "25 at %zu", pos);
			}
			if (pos + 26 <= NBITS) {
				block_with_run(b, pos, 26, v);
				REQUIRE(fips_of(b) & MONITOR_FIPS_LONGRUN, "26 at %zu v=%u", pos, v);
			}
		}
	/* Through the block's end: the last 26 bits. */
	block_with_run(b, NBITS - 26, 26, 1);
	ck_assert(fips_of(b) & MONITOR_FIPS_LONGRUN);
}
END_TEST

START_TEST(test_continuous)
{
	struct monitor *m = new_monitor(8, 8, false, MONITOR_FIPS_STANDARD);
	struct rng r = { 5 };
	uint8_t b1[B], b2[B];

	rng_fill(&r, b1, B);
	rng_fill(&r, b2, B);
	/* The first block after a reset only seeds: its first word is new. */
	ck_assert_uint_eq(test_block(m, b1) & MONITOR_FIPS_CONTINUOUS, 0);
	/* A block whose first word repeats the previous block's last word. */
	memcpy(b2, b1 + B - 4, 4);
	ck_assert_uint_ne(test_block(m, b2) & MONITOR_FIPS_CONTINUOUS, 0);
	/* After a reset the carried word is forgotten. */
	monitor_reset(m);
	memcpy(b1, b2 + B - 4, 4);
	ck_assert_uint_eq(test_block(m, b1) & MONITOR_FIPS_CONTINUOUS, 0);
	/* rngtest alignment: an explicit seed is compared with the first word. */
	monitor_reset(m);
	monitor_seed_continuous(m, b1);
	ck_assert_uint_ne(test_block(m, b1) & MONITOR_FIPS_CONTINUOUS, 0);
	/* Inside a block, in the 8-byte middle and across 8-byte words. */
	rng_fill(&r, b1, B);
	memcpy(b1 + 1004, b1 + 1000, 4);
	ck_assert_uint_ne(test_block(m, b1) & MONITOR_FIPS_CONTINUOUS, 0);
	rng_fill(&r, b1, B);
	memcpy(b1 + 1008, b1 + 1004, 4);
	ck_assert_uint_ne(test_block(m, b1) & MONITOR_FIPS_CONTINUOUS, 0);
	rng_fill(&r, b1, B);
	memcpy(b1 + 2496, b1 + 2492, 4); /* the 4-byte tail */
	ck_assert_uint_ne(test_block(m, b1) & MONITOR_FIPS_CONTINUOUS, 0);
	rng_fill(&r, b1, B);
	memcpy(b1 + 1002, b1 + 1000, 2); /* not word-aligned: no failure */
	memcpy(b1 + 1004, b1 + 1000, 2);
	ck_assert_uint_eq(test_block(m, b1) & MONITOR_FIPS_CONTINUOUS, 0);
	monitor_free(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* SP 800-90B cutoffs, pinned                                               */
/* ------------------------------------------------------------------------ */

/*
 * Computed independently with mpmath at 60 digits:
 *   rct(H, a) = 1 + ceil(-a / H)
 *   apt(H, W, a) = smallest c with sum_{i>=c} C(W,i) p^i (1-p)^(W-i) <= 2^a, p = 2^-H
 * import mpmath as mp; mp.mp.dps = 60
 * def apt(H, W, a):
 *     p = mp.mpf(2)**(-mp.mpf(H)); t = 0
 *     for i in range(W, -1, -1):
 *         t += mp.binomial(W, i) * p**i * (1-p)**(W-i)
 *         if t > mp.mpf(2)**a: return i + 1
 * The α = 2^-20 column reproduces SP 800-90B's own table of APT cutoffs
 * (H = 0.5, 1, 2, 4, 8: 410, 311, 177, 62, 13 for W = 512; H = 1: 589 for W = 1024).
 */
START_TEST(test_cutoffs_pinned)
{
	static const struct {
		double h;
		unsigned w, rct30, rct60, apt30, apt60, apt20;
	} t[] = {
		{ 8, 512, 5, 9, 16, 25, 13 },      { 7, 512, 6, 10, 22, 32, 18 },
		{ 6, 512, 6, 11, 31, 44, 25 },     { 4, 512, 9, 16, 71, 91, 62 },
		{ 3.5, 512, 10, 19, 89, 112, 80 }, { 2, 512, 16, 31, 190, 220, 177 },
		{ 1, 512, 31, 61, 325, 355, 311 }, { 0.5, 512, 61, 121, 422, 447, 410 },
		{ 1, 1024, 31, 61, 609, 652, 589 }, { 0.5, 1024, 61, 121, 810, 847, 793 },
		{ 0.1, 1024, 301, 601, 999, 1014, 991 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		REQUIRE(monitor_rct_cutoff(t[i].h, -30) == t[i].rct30, "H=%g", t[i].h);
		REQUIRE(monitor_rct_cutoff(t[i].h, -60) == t[i].rct60, "H=%g", t[i].h);
		REQUIRE(monitor_apt_cutoff(t[i].h, t[i].w, -30) == t[i].apt30, "H=%g W=%u: %u",
			t[i].h, t[i].w, monitor_apt_cutoff(t[i].h, t[i].w, -30));
		REQUIRE(monitor_apt_cutoff(t[i].h, t[i].w, -60) == t[i].apt60, "H=%g W=%u: %u",
			t[i].h, t[i].w, monitor_apt_cutoff(t[i].h, t[i].w, -60));
		REQUIRE(monitor_apt_cutoff(t[i].h, t[i].w, -20) == t[i].apt20, "H=%g W=%u: %u",
			t[i].h, t[i].w, monitor_apt_cutoff(t[i].h, t[i].w, -20));
	}
	/* Out of range. */
	ck_assert_uint_eq(monitor_rct_cutoff(0, -30), 0);
	ck_assert_uint_eq(monitor_rct_cutoff(8.5, -30), 0);
	ck_assert_uint_eq(monitor_rct_cutoff(8, -1), 0);
	ck_assert_uint_eq(monitor_apt_cutoff(-1, 512, -30), 0);
	ck_assert_uint_eq(monitor_apt_cutoff(8, 1, -30), 0);
}
END_TEST

START_TEST(test_params_rejected)
{
	struct monitor_params p;
	struct monitor *m = NULL;
	struct monitor_cutoffs c;

	monitor_params_default(&p);
	p.sample_bits = 4;
	ck_assert_int_eq(monitor_new(&p, &m), -EINVAL);
	monitor_params_default(&p);
	p.sample_bits = 1; /* H = 8 > 1 bit per binary sample */
	ck_assert_int_eq(monitor_new(&p, &m), -EINVAL);
	monitor_params_default(&p);
	p.permanent_alpha_log2 = -20; /* weaker than the intermittent α */
	ck_assert_int_eq(monitor_new(&p, &m), -EINVAL);
	monitor_params_default(&p);
	p.fips_counting = 7;
	ck_assert_int_eq(monitor_new(&p, &m), -EINVAL);
	ck_assert_ptr_null(m);

	monitor_params_default(&p);
	ck_assert_int_eq(monitor_new(&p, &m), 0);
	monitor_get_cutoffs(m, &c);
	ck_assert_uint_eq(c.rct, 5);
	ck_assert_uint_eq(c.rct_permanent, 9);
	ck_assert_uint_eq(c.apt, 16);
	ck_assert_uint_eq(c.apt_permanent, 25);
	ck_assert_uint_eq(c.apt_window, 512);
	m = monitor_free(m);
	ck_assert_ptr_null(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* SP 800-90B induced failures                                              */
/* ------------------------------------------------------------------------ */

/* Random bytes with no two neighbours equal, and none equal to avoid. */
static void clean_bytes(struct rng *r, uint8_t *b, size_t n, int avoid)
{
	rng_fill(r, b, n);
	for (size_t i = 0; i < n; i++)
		while ((i > 0 && b[i] == b[i - 1]) || b[i] == avoid ||
		       (i + 1 < n && b[i] == b[i + 1]))
			b[i] = (uint8_t)(b[i] + 37);
}

START_TEST(test_rct_bytes)
{
	struct monitor *m = new_monitor(8, 8, false, MONITOR_FIPS_STANDARD);
	struct rng r = { 99 };
	uint8_t b[B], b2[B];

	/* C = 5 (H = 8, α = 2^-30): four equal bytes pass, five fail. */
	clean_bytes(&r, b, B, -1);
	memset(b + 100, 0x5a, 4);
	b[99] = 0x11;
	b[104] = 0x22;
	ck_assert_uint_eq(test_block(m, b) & MONITOR_90B_MASK, 0);
	clean_bytes(&r, b, B, -1);
	memset(b + 101, 0x5a, 5);
	b[100] = 0x11;
	b[106] = 0x22;
	ck_assert_uint_eq(test_block(m, b) & MONITOR_90B_MASK, MONITOR_RCT);
	/* Permanent at 9 (α = 2^-60): 8 intermittent, 9 permanent. */
	clean_bytes(&r, b, B, 0x77);
	memset(b + 1001, 0x77, 8);
	ck_assert_uint_eq(test_block(m, b) & MONITOR_90B_MASK, MONITOR_RCT);
	clean_bytes(&r, b, B, 0x77);
	memset(b + 1003, 0x77, 9);
	ck_assert_uint_eq(test_block(m, b) & MONITOR_90B_MASK, MONITOR_RCT | MONITOR_RCT_PERMANENT);
	monitor_free(m);

	/* Across a block boundary, 3 + 2: the second block fails, the first not. */
	m = new_monitor(8, 8, true, MONITOR_FIPS_STANDARD);
	clean_bytes(&r, b, B, 0xc3);
	clean_bytes(&r, b2, B, 0xc3);
	memset(b + B - 3, 0xc3, 3);
	memset(b2, 0xc3, 2);
	ck_assert_uint_eq(test_block(m, b) & MONITOR_90B_MASK, 0);
	ck_assert_uint_eq(test_block(m, b2) & MONITOR_90B_MASK, MONITOR_RCT);
	/* A failing run that goes on into the next block fails that block too. */
	clean_bytes(&r, b, B, 0xc3);
	clean_bytes(&r, b2, B, 0xc3);
	memset(b + B - 6, 0xc3, 6);
	b2[0] = 0xc3;
	ck_assert_uint_eq(test_block(m, b) & MONITOR_90B_MASK, MONITOR_RCT);
	ck_assert_uint_eq(test_block(m, b2) & MONITOR_90B_MASK, MONITOR_RCT);
	monitor_free(m);
}
END_TEST

START_TEST(test_apt_bytes)
{
	/* C = 16 in windows of 512 (H = 8): the first sample of a window
	 * occurring 15 times passes, 16 times fails; 25 is permanent. */
	static const struct {
		unsigned count, want;
	} cases[] = {
		{ 15, 0 },
		{ 16, MONITOR_APT },
		{ 24, MONITOR_APT },
		{ 25, MONITOR_APT | MONITOR_APT_PERMANENT },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct monitor *m = new_monitor(8, 8, false, MONITOR_FIPS_STANDARD);
		struct rng r = { 1234 + i };
		uint8_t b[B];

		/* Window 0 is b[0..511]; b[0] = 0xe7 and 0xe7 nowhere else... */
		clean_bytes(&r, b, B, 0xe7);
		b[0] = 0xe7;
		/* ... but at count-1 more places, 9 apart (no repetitions). */
		for (unsigned k = 1; k < cases[i].count; k++)
			b[9 * k + 3] = 0xe7;
		REQUIRE((test_block(m, b) & MONITOR_90B_MASK) == cases[i].want, "count %u",
			cases[i].count);
		monitor_free(m);
	}
}
END_TEST

START_TEST(test_apt_window_across_blocks)
{
	/* Windows run on from the reset: the 5th window covers bytes
	 * 2048..2559, i.e. the last 452 bytes of block 1 and 60 of block 2.
	 * 15 hits in block 1 and one in block 2: only block 2 fails. */
	struct monitor *m = new_monitor(8, 8, false, MONITOR_FIPS_STANDARD);
	struct rng r = { 77 };
	uint8_t b[B], b2[B];

	clean_bytes(&r, b, B, 0x3c);
	clean_bytes(&r, b2, B, 0x3c);
	b[2048] = 0x3c;
	for (unsigned k = 1; k < 15; k++)
		b[2048 + 10 * k] = 0x3c;
	b2[30] = 0x3c;
	ck_assert_uint_eq(test_block(m, b) & MONITOR_90B_MASK, 0);
	ck_assert_uint_eq(test_block(m, b2) & MONITOR_90B_MASK, MONITOR_APT);
	monitor_free(m);
}
END_TEST

START_TEST(test_binary_samples)
{
	/* H = 1 per bit: RCT C = 31, APT C = 609 in windows of 1024 bits. */
	struct monitor *m = new_monitor(1, 1, false, MONITOR_FIPS_STANDARD);
	struct monitor_cutoffs c;
	struct rng r = { 5 };
	uint8_t b[B];

	monitor_get_cutoffs(m, &c);
	ck_assert_uint_eq(c.rct, 31);
	ck_assert_uint_eq(c.apt, 609);
	ck_assert_uint_eq(c.apt_window, 1024);
	block_with_run(b, 3001, 30, 1);
	ck_assert_uint_eq(test_block(m, b) & MONITOR_90B_MASK, 0);
	block_with_run(b, 3001, 31, 0);
	ck_assert_uint_eq(test_block(m, b) & MONITOR_90B_MASK, MONITOR_RCT);
	block_with_run(b, 5, 61, 1); /* permanent at 61 (α = 2^-60) */
	ck_assert_uint_eq(test_block(m, b) & MONITOR_90B_MASK, MONITOR_RCT | MONITOR_RCT_PERMANENT);
	monitor_free(m);

	/* APT: a window (bits 0..1023 = bytes 0..127) with 608 vs 609 ones,
	 * first bit 1, no run near 31. */
	for (unsigned ones = 608; ones <= 609; ones++) {
		unsigned placed = 0;

		m = new_monitor(1, 1, false, MONITOR_FIPS_STANDARD);
		rng_fill(&r, b, B);
		memset(b, 0, 128);
		/* ones spread evenly: bit i is 1 when floor((i+1)·n/1024) grows */
		for (unsigned i = 0; i < 1024; i++) {
			unsigned want = (unsigned)(((i + 1) * ones) / 1024);

			if (want > placed) {
				set_bit(b, i, 1);
				placed++;
			}
		}
		/* the window must start with a 1: rotate by the first one's index */
		ck_assert_uint_eq(placed, ones);
		if (!get_bit(b, 0)) {
			set_bit(b, 0, 1);
			for (unsigned i = 1; i < 1024; i++)
				if (get_bit(b, i)) {
					set_bit(b, i, 0);
					break;
				}
		}
		ck_assert_uint_eq(test_block(m, b) & MONITOR_APT, ones >= 609 ? MONITOR_APT : 0);
		monitor_free(m);
	}
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Difference RCT (developer-defined): arithmetic progressions              */
/* ------------------------------------------------------------------------ */

/*
 * A sample-serial reference of the RCT and the difference RCT, written from
 * their definitions: runs of equal samples fail at C; runs of equal non-zero
 * differences (mod 2^bits) fail at C equal differences, i.e. C + 1 samples
 * in progression.  Every sample at or past a cutoff fails its block.
 */
struct ref90 {
	bool started, have_d;
	unsigned last, d_last, run, d_run;
};

static void ref90_sample(struct ref90 *st, unsigned x, unsigned mod, const struct monitor_cutoffs *c,
			 unsigned *f)
{
	if (st->started) {
		unsigned d = (x + mod - st->last) % mod;

		st->run = x == st->last ? st->run + 1 : 1;
		st->d_run = st->have_d && d == st->d_last ? st->d_run + 1 : 1;
		st->d_last = d;
		st->have_d = true;
		if (d && st->d_run >= c->drct)
			*f |= MONITOR_DRCT;
		if (d && st->d_run >= c->drct_permanent)
			*f |= MONITOR_DRCT_PERMANENT;
	} else {
		st->run = 1;
	}
	if (st->run >= c->rct)
		*f |= MONITOR_RCT;
	if (st->run >= c->rct_permanent)
		*f |= MONITOR_RCT_PERMANENT;
	st->last = x;
	st->started = true;
}

static unsigned ref90_block(struct ref90 *st, const uint8_t *b, unsigned bits,
			    const struct monitor_cutoffs *c)
{
	unsigned f = 0;

	if (bits == 8)
		for (size_t i = 0; i < B; i++)
			ref90_sample(st, b[i], 256, c, &f);
	else
		for (size_t i = 0; i < NBITS; i++)
			ref90_sample(st, get_bit(b, i), 2, c, &f);
	return f;
}

#define RCT_DRCT_BITS (MONITOR_RCT | MONITOR_RCT_PERMANENT | MONITOR_DRCT | MONITOR_DRCT_PERMANENT)

/* Random bytes with planted progressions of random step (0 included) and
 * of lengths around the cutoffs, some across block boundaries. */
static void planted_stream(struct rng *r, uint8_t *s, size_t n, unsigned bits,
			   const struct monitor_cutoffs *c)
{
	rng_fill(r, s, n);
	for (unsigned k = 0; k < n / 700; k++) {
		unsigned len = c->drct - 1 + (unsigned)(rng_next(r) % (c->drct_permanent - c->drct + 4));
		size_t at = (size_t)(rng_next(r) % (n - 200));

		if (bits == 8) {
			uint8_t x = (uint8_t)rng_next(r), d = (uint8_t)rng_next(r);

			if (k % 5 == 0)
				d = 0;
			else if (k % 5 == 1)
				d = k % 2 ? 1 : 255;
			for (unsigned i = 0; i < len; i++)
				s[at + i] = (uint8_t)(x + i * d);
		} else {
			/* bit runs and alternations of len + 1 bits */
			unsigned x = rng_next(r) & 1, d = k % 2;
			size_t bit = 8 * at + rng_next(r) % 8;

			for (unsigned i = 0; i <= len; i++)
				set_bit(s, bit + i, (x + i * d) & 1);
		}
	}
}

static void check_against_reference(unsigned bits, double h, bool portable)
{
	struct rng r = { 4242 + bits };
	struct monitor_cutoffs c;
	unsigned hits = 0;

	for (unsigned seq = 0; seq < 40; seq++) {
		struct monitor *m = new_monitor(bits, h, portable, MONITOR_FIPS_STANDARD);
		struct ref90 st = { .started = false };
		const size_t nb = 12;
		uint8_t *s = malloc(nb * B);

		ck_assert_ptr_nonnull(s);
		monitor_get_cutoffs(m, &c);
		planted_stream(&r, s, nb * B, bits, &c);
		for (size_t k = 0; k < nb; k++) {
			unsigned want = ref90_block(&st, s + k * B, bits, &c);
			unsigned got = test_block(m, s + k * B) & RCT_DRCT_BITS;

			if (want & MONITOR_DRCT_PERMANENT)
				want |= MONITOR_DRCT;
			if (want & MONITOR_RCT_PERMANENT)
				want |= MONITOR_RCT;
			REQUIRE(got == want, "bits=%u portable=%d seq %u block %zu: got %#x want %#x",
				bits, portable, seq, k, got, want);
			hits += !!(want & MONITOR_DRCT);
		}
		free(s);
		monitor_free(m);
	}
	/* the planted data exercises both verdicts */
	ck_assert_uint_gt(hits, 40);
}

START_TEST(test_drct_reference_bytes_simd)
{
	check_against_reference(8, 8, false);
	check_against_reference(8, 4, false);
}
END_TEST

START_TEST(test_drct_reference_bytes_portable)
{
	check_against_reference(8, 8, true);
	check_against_reference(8, 4, true);
}
END_TEST

START_TEST(test_drct_reference_binary)
{
	check_against_reference(1, 1, false);
	check_against_reference(1, 0.5, true);
}
END_TEST

/* Same formula as the RCT; values from the mpmath table above (rct30, rct60). */
START_TEST(test_drct_cutoffs_pinned)
{
	static const struct {
		unsigned bits;
		double h;
		unsigned c30, c60;
	} t[] = {
		{ 8, 8, 5, 9 },  { 8, 7, 6, 10 },  { 8, 6, 6, 11 },    { 8, 4, 9, 16 },
		{ 8, 2, 16, 31 }, { 1, 1, 31, 61 }, { 1, 0.5, 61, 121 }, { 1, 0.1, 301, 601 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct monitor *m = new_monitor(t[i].bits, t[i].h, false, MONITOR_FIPS_STANDARD);
		struct monitor_cutoffs c;

		monitor_get_cutoffs(m, &c);
		REQUIRE(c.drct == t[i].c30 && c.drct_permanent == t[i].c60, "H=%g: %u %u", t[i].h,
			c.drct, c.drct_permanent);
		REQUIRE(c.drct == c.rct && c.drct_permanent == c.rct_permanent, "H=%g", t[i].h);
		monitor_free(m);
	}
}
END_TEST

/*
 * Random bytes without equal neighbours and without equal neighbouring
 * differences, so that planted progressions are the only ones.
 */
static bool clean_at(const uint8_t *b, size_t n, size_t i)
{
	for (size_t j = i; j <= i + 2 && j < n; j++) {
		if (j >= 1 && b[j] == b[j - 1])
			return false;
		if (j >= 2 && (uint8_t)(b[j] - b[j - 1]) == (uint8_t)(b[j - 1] - b[j - 2]))
			return false;
	}
	return true;
}

static void clean_fix(uint8_t *b, size_t n, size_t i)
{
	for (size_t lo = i >= 2 ? i - 2 : 0; lo <= i; lo++)
		if (!clean_at(b, n, lo))
			for (unsigned k = 0; k < 256 && !clean_at(b, n, lo); k++)
				b[lo] = (uint8_t)(b[lo] + 37); /* odd: visits all 256 values */
}

static void clean_diffs(struct rng *r, uint8_t *b, size_t n)
{
	rng_fill(r, b, n);
	for (size_t i = 1; i < n; i++) /* b[i] against the bytes before it */
		while (b[i] == b[i - 1] ||
		       (i >= 2 && (uint8_t)(b[i] - b[i - 1]) == (uint8_t)(b[i - 1] - b[i - 2])))
			b[i] = (uint8_t)(b[i] + 37);
}

/* len samples x, x+d, … at b[at], with the neighbours kept clean. */
static void plant_progression(uint8_t *b, size_t at, unsigned len, uint8_t x, uint8_t d)
{
	for (unsigned i = 0; i < len; i++)
		b[at + i] = (uint8_t)(x + i * d);
	/* b[at-1]: not continuing the progression, clean against the bytes before */
	for (unsigned k = 0; at > 0 && k < 256; k++) {
		if (clean_at(b, at, at >= 3 ? at - 3 : 0) && b[at - 1] != b[at] &&
		    (uint8_t)(b[at] - b[at - 1]) != d &&
		    (at < 2 || (uint8_t)(b[at] - b[at - 1]) != (uint8_t)(b[at - 1] - b[at - 2])))
			break;
		b[at - 1] = (uint8_t)(b[at - 1] + 37);
	}
	if (at + len < B) {
		for (unsigned k = 0; k < 256; k++) {
			if (b[at + len] != b[at + len - 1] &&
			    (uint8_t)(b[at + len] - b[at + len - 1]) != d &&
			    (at + len + 1 >= B || (b[at + len + 1] != b[at + len] &&
						   (uint8_t)(b[at + len + 1] - b[at + len]) !=
							   (uint8_t)(b[at + len] - b[at + len - 1]))) &&
			    (at + len + 2 >= B || (uint8_t)(b[at + len + 2] - b[at + len + 1]) !=
							  (uint8_t)(b[at + len + 1] - b[at + len])))
				break;
			b[at + len] = (uint8_t)(b[at + len] + 37);
		}
	}
}

START_TEST(test_drct_bytes)
{
	/* H = 8: C = 5 equal differences (6 samples) fail, permanent 9 (10). */
	static const struct {
		double h;
		unsigned samples, want;
	} cases[] = {
		{ 8, 5, 0 },
		{ 8, 6, MONITOR_DRCT },
		{ 8, 9, MONITOR_DRCT },
		{ 8, 10, MONITOR_DRCT | MONITOR_DRCT_PERMANENT },
		{ 4, 9, 0 }, /* H = 4: C = 9, permanent 16 */
		{ 4, 10, MONITOR_DRCT },
		{ 4, 16, MONITOR_DRCT },
		{ 4, 17, MONITOR_DRCT | MONITOR_DRCT_PERMANENT },
	};
	static const uint8_t steps[] = { 1, 3, 255, 128, 0x6d };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (size_t k = 0; k < sizeof(steps); k++)
			for (int portable = 0; portable < 2; portable++) {
				struct monitor *m = new_monitor(8, cases[i].h, portable,
								MONITOR_FIPS_STANDARD);
				struct rng r = { 17 + i };
				uint8_t b[B];

				clean_diffs(&r, b, B);
				plant_progression(b, 777 + 5 * k, cases[i].samples, 0xf0,
						  steps[k]);
				REQUIRE((test_block(m, b) & MONITOR_90B_MASK) == cases[i].want,
					"H=%g %u samples step %u", cases[i].h, cases[i].samples,
					steps[k]);
				monitor_free(m);
			}
}
END_TEST

START_TEST(test_drct_zero_step_is_rct)
{
	/* A constant run is a progression with d = 0: reported by the RCT only. */
	struct monitor *m = new_monitor(8, 8, false, MONITOR_FIPS_STANDARD);
	struct rng r = { 8 };
	uint8_t b[B];

	clean_diffs(&r, b, B);
	plant_progression(b, 1000, 12, 0x42, 0);
	ck_assert_uint_eq(test_block(m, b) & MONITOR_90B_MASK, MONITOR_RCT | MONITOR_RCT_PERMANENT);
	memset(b, 0x37, B);
	ck_assert_uint_eq(test_block(m, b) & (MONITOR_DRCT | MONITOR_DRCT_PERMANENT), 0);
	monitor_free(m);
}
END_TEST

START_TEST(test_drct_across_blocks_and_reset)
{
	struct monitor *m = new_monitor(8, 8, true, MONITOR_FIPS_STANDARD);
	struct monitor_verdict v;
	struct rng r = { 31 };
	uint8_t b[B], b2[B];

	/* 3 + 3 samples across a boundary (5 equal differences): the second
	 * block fails, the first not. */
	clean_diffs(&r, b, B);
	clean_diffs(&r, b2, B);
	plant_progression(b, B - 3, 3, 10, 7);
	plant_progression(b2, 0, 3, 31, 7);
	ck_assert_uint_eq(test_block(m, b) & MONITOR_90B_MASK, 0);
	ck_assert_uint_eq(test_block(m, b2) & MONITOR_90B_MASK, MONITOR_DRCT);

	/* Reset forgets the previous samples: the same pair after a reset
	 * passes (the start-up test then passes on the second block). */
	monitor_reset(m);
	ck_assert_uint_eq(test_block(m, b) & MONITOR_90B_MASK, 0);
	monitor_reset(m);
	monitor_test_block(m, b2, &v);
	ck_assert(v.usable && v.startup_passed && !(v.failed & MONITOR_90B_MASK));

	/* A failing progression that goes on into the next block fails it too;
	 * a permanent failure latches until monitor_reset(). */
	monitor_reset(m);
	clean_diffs(&r, b, B);
	clean_diffs(&r, b2, B);
	plant_progression(b, B - 10, 10, 0, 3);
	b2[0] = 30;
	b2[1] = 40; /* step 10 after 3: the progression ends at b2[0] */
	clean_fix(b2, B, 2);
	monitor_test_block(m, b, &v);
	ck_assert_uint_eq(v.failed & MONITOR_90B_MASK, MONITOR_DRCT | MONITOR_DRCT_PERMANENT);
	ck_assert(v.startup_failed && !v.usable);
	ck_assert_int_eq(v.class, MONITOR_PERMANENT);
	monitor_test_block(m, b2, &v);
	ck_assert_uint_eq(v.failed & MONITOR_90B_MASK, MONITOR_DRCT | MONITOR_DRCT_PERMANENT);
	ck_assert_int_eq(v.class, MONITOR_PERMANENT);
	monitor_reset(m);
	clean_diffs(&r, b, B);
	monitor_test_block(m, b, &v);
	ck_assert(v.usable && v.class == MONITOR_OK);
	monitor_free(m);
}
END_TEST

START_TEST(test_drct_binary)
{
	/* H = 1 per bit: C = 31 equal differences, i.e. 32 alternating bits
	 * fail, 31 pass; permanent at 62 bits (C = 61). */
	static const struct {
		unsigned bits, want;
	} cases[] = {
		{ 31, 0 },
		{ 32, MONITOR_DRCT },
		{ 61, MONITOR_DRCT },
		{ 62, MONITOR_DRCT | MONITOR_DRCT_PERMANENT },
	};
	struct rng r = { 6 };
	uint8_t b[B];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (unsigned at = 3001; at < 3009; at++) {
			struct monitor *m = new_monitor(1, 1, false, MONITOR_FIPS_STANDARD);

			/* random bits with no alternation of 8 or more near it */
			rng_fill(&r, b, B);
			for (unsigned k = at - 20; k < at + cases[i].bits + 20; k += 4) {
				set_bit(b, k, 0);
				set_bit(b, k + 1, 0);
				set_bit(b, k + 2, 1);
				set_bit(b, k + 3, 1);
			}
			for (unsigned k = 0; k < cases[i].bits; k++)
				set_bit(b, at + k, k & 1);
			/* the neighbours repeat their next bit: no longer alternation */
			set_bit(b, at - 1, get_bit(b, at));
			set_bit(b, at + cases[i].bits, get_bit(b, at + cases[i].bits - 1));
			REQUIRE((test_block(m, b) & MONITOR_90B_MASK) == cases[i].want,
				"%u alternating bits at %u", cases[i].bits, at);
			monitor_free(m);
		}
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Start-up test, failure classes, reset                                    */
/* ------------------------------------------------------------------------ */

START_TEST(test_startup_and_classes)
{
	struct monitor_params p;
	struct monitor *m;
	struct monitor_verdict v;
	struct rng r = { 5 };
	uint8_t good[B], rct[B], fips[B];

	monitor_params_default(&p);
	p.max_consecutive_failures = 3;
	ck_assert_int_eq(monitor_new(&p, &m), 0);
	rng_fill(&r, good, B);
	ck_assert_uint_eq(fips_of(good), 0);
	memcpy(rct, good, B);
	memset(rct + 500, rct[499], 6); /* a 90B (RCT) failure, 7 equal bytes */
	memcpy(fips, good, B);
	memcpy(fips + 8, fips + 4, 4); /* a FIPS-only failure */

	/* Start-up: a first block with a 90B failure fails the start-up test. */
	monitor_test_block(m, rct, &v);
	ck_assert(v.startup_failed && !v.startup_passed && !v.usable);
	ck_assert_int_eq(v.class, MONITOR_INTERMITTENT);
	monitor_test_block(m, good, &v);
	ck_assert(v.startup_passed && !v.startup_failed && v.usable);
	ck_assert_int_eq(v.class, MONITOR_OK);

	/* A FIPS failure is intermittent and not usable; the next block is. */
	monitor_test_block(m, fips, &v);
	ck_assert(!v.usable && v.failed == MONITOR_FIPS_CONTINUOUS && v.startup_passed);
	ck_assert_int_eq(v.class, MONITOR_INTERMITTENT);
	monitor_test_block(m, good, &v);
	ck_assert(v.usable);

	/* K = 3 failed blocks in a row: permanent, and latched. */
	monitor_test_block(m, fips, &v);
	ck_assert_uint_eq(v.consecutive_failures, 1);
	monitor_test_block(m, rct, &v);
	ck_assert_int_eq(v.class, MONITOR_INTERMITTENT);
	monitor_test_block(m, fips, &v);
	ck_assert_uint_eq(v.consecutive_failures, 3);
	ck_assert_int_eq(v.class, MONITOR_PERMANENT);
	monitor_test_block(m, good, &v);
	ck_assert(!v.usable && v.failed == 0);
	ck_assert_int_eq(v.class, MONITOR_PERMANENT);

	/* Reset: start-up again, nothing latched. */
	monitor_reset(m);
	monitor_test_block(m, good, &v);
	ck_assert(v.usable && v.startup_passed);
	ck_assert_int_eq(v.class, MONITOR_OK);

	/* A 90B permanent failure is permanent at once. */
	memcpy(rct, good, B);
	memset(rct + 500, 0x42, 12);
	monitor_test_block(m, rct, &v);
	ck_assert_int_eq(v.class, MONITOR_PERMANENT);
	ck_assert(v.failed & MONITOR_RCT_PERMANENT);
	monitor_free(m);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Properties                                                               */
/* ------------------------------------------------------------------------ */

/* A bad source is caught in its first block, by FIPS or by the start-up test. */
static void first_block_caught(const uint8_t *b, unsigned must)
{
	for (int portable = 0; portable < 2; portable++) {
		struct monitor *m = new_monitor(8, 8, portable, MONITOR_FIPS_STANDARD);
		struct monitor_verdict v;

		monitor_test_block(m, b, &v);
		ck_assert(!v.usable);
		ck_assert_uint_eq(v.failed & must, must);
		/* a 90B failure also fails the start-up test */
		if (must & MONITOR_90B_MASK)
			ck_assert(v.startup_failed && !v.startup_passed);
		monitor_free(m);
	}
}

START_TEST(test_bad_sources_caught)
{
	struct rng r = { 3 };
	uint8_t b[B];

	memset(b, 0x37, B); /* constant */
	first_block_caught(b, MONITOR_RCT_PERMANENT | MONITOR_FIPS_CONTINUOUS);
	for (size_t i = 0; i < B; i++) /* two values, random choice */
		b[i] = rng_next(&r) & 1 ? 0x5a : 0xa5;
	first_block_caught(b, MONITOR_APT_PERMANENT);
	/* 8-bit counters: FIPS passes most of their blocks and RCT/APT see no
	 * repetition at H = 8; the difference RCT fails them at once, and
	 * permanently (2,500 samples in progression).  Start 0 and random
	 * starts; steps 1, 3, 255 (counting down) and 128 (two values). */
	{
		static const uint8_t steps[] = { 1, 3, 255, 128, 2 };

		for (size_t k = 0; k < sizeof(steps); k++)
			for (unsigned t = 0; t < 4; t++) {
				uint8_t x = t ? (uint8_t)rng_next(&r) : 0;

				for (size_t i = 0; i < B; i++)
					b[i] = (uint8_t)(x + i * steps[k]);
				first_block_caught(b, MONITOR_DRCT | MONITOR_DRCT_PERMANENT);
			}
	}
	for (size_t i = 0; i < B; i += 2) { /* 16-bit counter, little-endian */
		uint16_t c = (uint16_t)(i / 2 + 12345);

		memcpy(b + i, &c, 2);
	}
	first_block_caught(b, MONITOR_FIPS_POKER | MONITOR_FIPS_RUNS);
	for (size_t i = 0; i < B; i += 4) { /* 32-bit counter, little-endian */
		uint32_t c = (uint32_t)(i / 4 + 1000000);

		memcpy(b + i, &c, 4);
	}
	first_block_caught(b, MONITOR_FIPS_MONOBIT);
}
END_TEST

/*
 * Random data from a good generator fails FIPS 140-2 about once per 1,000 to
 * 1,500 blocks (rngtest's documentation and our own runs, 0.07 %–0.1 %).
 * Over N = 20,000 blocks the count is about Poisson(λ) with λ between 13 and
 * 20; P(count > 45 | λ = 20) ≈ 1e-6 and P(count = 0 | λ = 13) ≈ 2e-6, so
 * [1, 45] holds with overwhelming probability for any healthy generator, and
 * this fixed seed makes the run repeatable.  The 90B tests at H = 8 fire on
 * random data with probability ~2^-32 per byte (RCT) and < 2^-30 per window
 * (APT): at most 2 in 50 MB.  The difference RCT likewise: four repeats of a
 * difference, each 2^-8 given the past, start at a byte with probability
 * 2^-32, so 5e7 bytes expect 0.012 failures; P(>= 2) ≈ 7e-5.
 */
START_TEST(test_random_failure_rate)
{
	struct monitor *m = new_monitor(8, 8, false, MONITOR_FIPS_STANDARD);
	struct rng r = { 0x0123456789abcdefull };
	unsigned fips = 0, sp90b = 0, drct = 0;
	uint8_t b[B];

	for (unsigned n = 0; n < 20000; n++) {
		unsigned f;

		rng_fill(&r, b, B);
		f = test_block(m, b);
		fips += !!(f & MONITOR_FIPS_MASK);
		sp90b += !!(f & MONITOR_90B_MASK);
		drct += !!(f & MONITOR_DRCT);
	}
	printf("random: %u of 20000 blocks failed FIPS, %u failed 90B (%u the difference RCT)\n",
	       fips, sp90b, drct);
	ck_assert_uint_ge(fips, 1);
	ck_assert_uint_le(fips, 45);
	ck_assert_uint_le(sp90b, 2);
	ck_assert_uint_le(drct, 1);
	monitor_free(m);
}
END_TEST

static Suite *monitor_suite(void)
{
	Suite *s = suite_create("monitor");
	TCase *fips = tcase_create("fips"), *sp = tcase_create("sp800-90b"),
	      *pol = tcase_create("policy"), *prop = tcase_create("properties");

	tcase_add_test(fips, test_reference_standard_simd);
	tcase_add_test(fips, test_reference_standard_portable);
	tcase_add_test(fips, test_reference_rngtest5);
	tcase_add_test(fips, test_monobit_bounds);
	tcase_add_test(fips, test_poker_bounds);
	tcase_add_test(fips, test_runs_bounds);
	tcase_add_test(fips, test_longrun_bounds);
	tcase_add_test(fips, test_continuous);
	tcase_set_timeout(fips, 60);
	suite_add_tcase(s, fips);

	tcase_add_test(sp, test_cutoffs_pinned);
	tcase_add_test(sp, test_params_rejected);
	tcase_add_test(sp, test_rct_bytes);
	tcase_add_test(sp, test_apt_bytes);
	tcase_add_test(sp, test_apt_window_across_blocks);
	tcase_add_test(sp, test_binary_samples);
	tcase_add_test(sp, test_drct_reference_bytes_simd);
	tcase_add_test(sp, test_drct_reference_bytes_portable);
	tcase_add_test(sp, test_drct_reference_binary);
	tcase_add_test(sp, test_drct_cutoffs_pinned);
	tcase_add_test(sp, test_drct_bytes);
	tcase_add_test(sp, test_drct_zero_step_is_rct);
	tcase_add_test(sp, test_drct_across_blocks_and_reset);
	tcase_add_test(sp, test_drct_binary);
	tcase_set_timeout(sp, 60);
	suite_add_tcase(s, sp);

	tcase_add_test(pol, test_startup_and_classes);
	suite_add_tcase(s, pol);

	tcase_add_test(prop, test_bad_sources_caught);
	tcase_add_test(prop, test_random_failure_rate);
	tcase_set_timeout(prop, 60);
	suite_add_tcase(s, prop);
	return s;
}

int main(void) { return td_run(monitor_suite()); }
