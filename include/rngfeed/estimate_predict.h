/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by the four predictors' files (§6.3.7-10: estimate_6_3_7_multi_mcw.c,
 * estimate_6_3_8_lag.c, estimate_6_3_9_multi_mmc.c and estimate_6_3_10_lz78y.c,
 * the entry points of MultiMMC and LZ78Y, which run in one pass over wide
 * samples in estimate_6_3_9_10_wide.c and over binary ones in
 * estimate_6_3_9_10_binary.c): inline pieces, and the two passes.  Not part
 * of the API. */
#ifndef RNGFEED_ESTIMATE_PREDICT_H
#define RNGFEED_ESTIMATE_PREDICT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rngfeed/estimate_common.h"

struct est_result;

/* MultiMMC (into mmc) and LZ78Y (into lz, when n >= 18) over binary
 * samples (k = 2, n >= 3, checked by the caller), in one pass: the two
 * count the same pairs (estimate_6_3_9_10_binary.c).  1 (both), 0
 * (MultiMMC only: n < 18), -ENOMEM. */
int est_mmc_lz78y_binary(const uint8_t *s, size_t n, struct est_result *mmc,
			 struct est_result *lz);

/* The same over wide samples (2 < k <= 256 ranks, every sample < k, n >= 3,
 * checked by the caller; estimate_6_3_9_10_wide.c).  1 (both), 0 (MultiMMC
 * only: n < 18), -ENOMEM. */
int est_mmc_lz78y_wide(const uint8_t *s, size_t n, unsigned k, struct est_result *mmc,
		       struct est_result *lz);

/* Whether a sub-predictor whose score is sc at a block's start can take
 * over from the winner (score high, the highest) within the block, where
 * it is right at `ahead` steps at which the winner is not.  The highest
 * score never falls below the winner's, so before one of its steps the
 * sub-predictor has gained at most ahead - 1 on it (ahead when the winner
 * is right at that step too), and the step itself adds 1: it needs
 * sc + ahead + 1 >= high.  The winner itself always passes.  Tighter than
 * sc + (its right predictions) >= high, which let a third of the blocks
 * on biased bits be stepped through one sample at a time. */
static inline int can_take(uint64_t sc, uint32_t ahead, uint64_t high)
{
	return sc + ahead + 1 >= high;
}

/* Set bits of x; hw: in a copy built for the POPCNT instruction (see
 * lag_binary()). */
static inline __attribute__((always_inline)) uint32_t popcount_hw(uint64_t x, int hw)
{
	return hw ? (uint32_t)__builtin_popcountll(x) : popcount64(x);
}

/* Counts of correct predictions and their longest run. */
struct tally { uint64_t c, run, longest; };
/* Without branches: on random bits a prediction is right one time in two,
 * and a mispredicted branch per bit cost more than the predictor's own
 * work in the binary predictors. */
static inline void tally(struct tally *t, int ok)
{
	const uint64_t keep = -(uint64_t)(ok != 0);	/* all ones if right */

	t->c += keep & 1;
	t->run = (t->run + 1) & keep;
	t->longest = t->run > t->longest ? t->run : t->longest;
}

/* tally() of len outcomes at once (1 <= len <= 64), for a block where the
 * winner cannot change: the first in bit 63 of m and the bits below the
 * last zero (msb_first), or the first in bit 0 and the bits above the last
 * zero.  The longest run inside m: shifting m onto itself until nothing
 * is left takes as many rounds as that run is long, either way. */
static inline void tally_bits(struct tally *t, uint64_t m, unsigned len, int msb_first)
{
	const uint64_t live = msb_first ? ~(~0ull >> (len - 1) >> 1) : ~0ull >> (64 - len);
	uint64_t x = m;
	unsigned k = 0;

	t->c += popcount64(m);
	if (m == live) {
		t->run += len;
		t->longest = t->run > t->longest ? t->run : t->longest;
		return;
	}
	/* a live bit is clear: ~m has a set bit among the len */
	t->run += (unsigned)(msb_first ? __builtin_clzll(~m) : __builtin_ctzll(~m));
	t->longest = t->run > t->longest ? t->run : t->longest;
	while (x) {
		x &= x << 1;
		k++;
	}
	t->longest = k > t->longest ? k : t->longest;
	t->run = (unsigned)(msb_first ? __builtin_ctzll(~(m >> (64 - len)))
				      : __builtin_clzll(~(m << (64 - len))));
}

static inline void tally_msb(struct tally *t, uint64_t m, unsigned len)
{
	tally_bits(t, m, len, 1);
}

static inline void tally_lsb(struct tally *t, uint64_t m, unsigned len)
{
	tally_bits(t, m, len, 0);
}

/* Whether the len samples at a and b are the same: the hash tables' keys
 * in MultiMMC and LZ78Y over wide samples, 1 to 17 samples, compared here
 * rather than by a call to memcmp() (16 % of MultiMMC's time on real
 * clock deltas), eight at a time from 8 on (the last eight overlapping the
 * others). */
static inline int same_samples(const uint8_t *a, const uint8_t *b, unsigned len)
{
	uint64_t x, y, diff = 0;

	if (len < 8) {
		for (unsigned k = 0; k < len; k++)
			diff |= (uint64_t)(a[k] ^ b[k]);
		return diff == 0;
	}
	for (unsigned k = 0; k + 8 <= len; k += 8) {
		memcpy(&x, a + k, 8);
		memcpy(&y, b + k, 8);
		diff |= x ^ y;
	}
	memcpy(&x, a + len - 8, 8);
	memcpy(&y, b + len - 8, 8);
	return (diff | (x ^ y)) == 0;
}

/* MultiMMC's and LZ78Y's context lengths, caps and shared pieces. */
#define CTX_MAX 16
#define MMC_MAX_ENTRIES 100000
#define LZ_B 16
#define LZ_MAX_DICT 65536

/* A context of two samples, direct-indexed: count 0, not there. */
struct ctx2 { uint32_t count; uint8_t pred; };

static inline uint32_t hmix(uint32_t h, uint8_t v)
{
	h ^= v + 0x9e3779b9u + (h << 6) + (h >> 2);
	return h * 0x85ebca6bu;
}

/* Length 1's step, in LZ78Y's dictionary and MultiMMC's tables alike:
 * count follower @y after @x (a new pair only if @allow_new) and keep x's
 * most frequent follower, the larger value on a tie.  1 if it made a new
 * pair, else 0. */
static inline int len1_add(uint32_t *pairs1, uint32_t *best1, uint8_t *pred1, uint8_t x,
			   uint8_t y, int allow_new)
{
	uint32_t *e = &pairs1[(unsigned)x << 8 | y];
	const int made = *e == 0;
	uint32_t c;

	if (made && !allow_new)
		return 0;
	c = ++*e;
	if (c > best1[x] || (c == best1[x] && y > pred1[x])) {
		best1[x] = c;
		pred1[x] = y;
	}
	return made;
}
#endif
