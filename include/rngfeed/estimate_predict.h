/* Shared by the four predictors' files (estimate_predict.c: MultiMCW and
 * lag; estimate_mmc.c, estimate_lz78y.c: wide samples; estimate_bitboard.c:
 * MultiMMC and LZ78Y over binary samples).  Not part of the API. */
#ifndef RNGFEED_ESTIMATE_PREDICT_H
#define RNGFEED_ESTIMATE_PREDICT_H

#include <stddef.h>
#include <stdint.h>

struct est_result;

/* 0 or -EINVAL: s set, 2 <= k <= 256, n < 2^32, every sample below k. */
int est_check_literal(const uint8_t *s, size_t n, unsigned k);

/* Set bits of x.  Without the POPCNT instruction (x86-64's baseline lacks
 * it) __builtin_popcountll is a call into libgcc; this is a few
 * instructions inline. */
static inline uint32_t popcount64(uint64_t x)
{
#if defined(__POPCNT__) || !(defined(__x86_64__) || defined(__i386__))
	return (uint32_t)__builtin_popcountll(x);
#else
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (uint32_t)((x * 0x0101010101010101ull) >> 56);
#endif
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
