/* SP 800-90B §6.3.9 MultiMMC and §6.3.10 LZ78Y over binary samples: one
 * layout of follower counts per context (the "bit scoreboard"), indexed
 * by the context's bits.  Each predictor fills its own copy: their caps
 * on new entries differ (MultiMMC: 100,000 per length; LZ78Y: 65,536 in
 * all, longest first), so from 2^15 contexts on they count different
 * pairs and one shared table would change their answers. */
#include <errno.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_internal.h"
#include "rngfeed/estimate_predict.h"

/* ---- binary samples: flat arrays ----
 * bin_at(all, ctx, j) is the word of the context ctx of j bits (bit j - 1 =
 * the sample j back): the counts of its two followers, follower 0 in the low
 * 32 bits, 1 in the high 32 (counts stay below 2^31: at most n).  One load
 * and one store per length and sample.  2^j words per length, 1 MiB for
 * all 16.  Each length's table starts one cache line further from a 4-KiB
 * boundary than the one before: the longer tables' sizes are multiples of
 * 4 KiB, so a step's words (the same low bits of the context) shared
 * their address bits below 4 KiB, which a CPU may take for a possible
 * store-to-load dependency (measured, 5 rounds on 8M random bits: LZ78Y
 * 0.23 -> 0.21 s, MultiMMC about the same). */
#define BIN_SKEW 8	/* words: a cache line */
#define BIN_OFF(j) (((size_t)1 << (j)) - 2 + BIN_SKEW * (size_t)(j))
#define BIN_TABLES_BYTES ((((size_t)1 << (CTX_MAX + 1)) + BIN_SKEW * (CTX_MAX + 1)) * sizeof(uint64_t))

static inline uint64_t *bin_at(uint64_t *all, uint32_t ctx, unsigned j)
{
	return all + BIN_OFF(j) + (ctx & ((1u << j) - 1));
}

/* The pair of counts as the word holds them. */
#define BIN_ONE(y) ((uint64_t)1 << (32 * (y)))
static inline uint32_t bin_count(uint64_t e, unsigned y)
{
	return (uint32_t)(e >> (32 * y));
}

/* Fully unrolled where the compiler is GCC 8 or later: the lengths'
 * offsets and masks become constants.  (Clang's pragma warns where the
 * count is not a constant, the first steps' call; its own heuristics
 * decide there.) */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define UNROLL_CTX _Pragma("GCC unroll 16")
#else
#define UNROLL_CTX
#endif


/* MultiMMC and LZ78Y over flat arrays, for binary samples: the same
 * steps as estimate_mmc.c and estimate_lz78y.c with a context's bits as
 * its index. */

/* Bits 0..7 of x as bytes 0..7, each 0 or 1. */
static inline uint64_t spread8(unsigned x)
{
	const uint64_t v = ((uint64_t)(x & 0xffu) * 0x0101010101010101ull) & 0x8040201008040201ull;

	return ((v + 0x7f7f7f7f7f7f7f7full) & 0x8080808080808080ull) >> 7;
}

/* The long contexts' counters miss the caches (1 MiB of them): those of
 * the position after next (context h2) are fetched a step ahead. */
static inline void bin_prefetch(uint64_t *all, uint32_t h2)
{
	for (unsigned j = 9; j <= CTX_MAX; j++)
		__builtin_prefetch(bin_at(all, h2, j), 1);
}

/* One MultiMMC step over lengths 1..max: counts follower y after each
 * context of hist and returns which lengths knew their context (*fm) and
 * which of those predicted y (the result).  Called with max = CTX_MAX
 * once every length has a context, so that the loop unrolls. */
static inline __attribute__((always_inline)) uint32_t
mmc_bin_step(uint64_t *all, uint32_t hist, unsigned y, unsigned max,
	     uint32_t *entries16, uint32_t *fm)
{
	const uint64_t one = BIN_ONE(y);
	uint32_t known = 0, okmask = 0, fmask;
	uint64_t e16 = 0;

	UNROLL_CTX
	for (unsigned j = 1; j <= max; j++) {
		uint64_t *const p = bin_at(all, hist, j);
		const uint64_t e = *p;
		const unsigned sb = j - 1;

		known |= (uint32_t)(e != 0) << sb;
		/* Right when the prediction is y: 1 unless the count of 1
		 * is below that of 0 (ties predict the larger symbol, 1), so
		 * the sign of the difference, xor y (fewer instructions than
		 * a compare, measured 0.32 -> 0.285 s on 8M bits). */
		okmask |= ((uint32_t)((uint64_t)((int64_t)(e >> 32) - (int64_t)(uint32_t)e) >> 63) ^ y) << sb;
		/* Up to 15 bits of context there are at most 2^16 pairs,
		 * fewer than 90B's cap: every pair is counted. */
		if (j < CTX_MAX)
			*p = e + one;
		else
			e16 = e;
	}
	/* A context counts as found when it and every shorter one are
	 * known (90B's dictionaries grow shortest first): the run of ones
	 * from bit 0. */
	fmask = ((known + 1) & ~known) - 1;
	if (max == CTX_MAX) {
		uint64_t *const p = bin_at(all, hist, CTX_MAX);

		if (((fmask >> (CTX_MAX - 1)) & 1) && bin_count(e16, y)) {
			*p = e16 + one;
		} else if (*entries16 < MMC_MAX_ENTRIES) {
			*p = e16 + one;
			++*entries16;
		}
	}
	*fm = fmask;
	return okmask & fmask;
}

/* The counters do not depend on the scoreboard, so it is kept 64 steps at
 * a time as in lag_binary(): first the block's counters, with which
 * lengths knew their context and which predicted right at each step (and
 * how often each was right, in byte lanes); then only the lengths that can
 * reach the highest score within the block are stepped through it, the
 * others just gain their count. */
#define MMC_BLOCK 64
int est_mmc_binary(const uint8_t *s, size_t n, struct est_result *r)
{
	uint64_t *all = est_zalloc(BIN_TABLES_BYTES);
	uint32_t entries16 = 0, score[CTX_MAX] = { 0 }, high = 0;	/* high: score[winner] */
	uint16_t okm[MMC_BLOCK], fm[MMC_BLOCK];
	struct tally t = { 0, 0, 0 };
	unsigned winner = 0;
	uint32_t hist = 0;

	if (!all)
		return -ENOMEM;
	for (size_t i = 1; i <= CTX_MAX && i < n - 1; i++) {
		hist = (hist << 1) | s[i - 1];
		*bin_at(all, hist, (unsigned)i) = BIN_ONE(s[i]);
	}
	entries16 = n - 1 > CTX_MAX;	/* the pair above at length 16 */
	hist = s[0];
	for (size_t i0 = 2; i0 < n; i0 += MMC_BLOCK) {
		const unsigned len = n - i0 < MMC_BLOCK ? (unsigned)(n - i0) : MMC_BLOCK;
		uint64_t cnt_lo = 0, cnt_hi = 0;	/* byte sb: right in the block */
		uint8_t cand[CTX_MAX] = { 0 };
		unsigned nc = 0;

		for (unsigned st = 0; st < len; st++) {
			const size_t i = i0 + st;
			uint32_t okmask, fmask;

			hist = ((hist << 1) | s[i - 1]) & 0xffffu;
			if (i + 1 < n)
				bin_prefetch(all, ((hist << 2) | (uint32_t)s[i] << 1 | s[i + 1]) & 0xffffu);
			if (i > CTX_MAX)
				okmask = mmc_bin_step(all, hist, s[i], CTX_MAX, &entries16, &fmask);
			else
				okmask = mmc_bin_step(all, hist, s[i], (unsigned)(i - 1), &entries16, &fmask);
			okm[st] = (uint16_t)okmask;
			fm[st] = (uint16_t)fmask;
			cnt_lo += spread8(okmask);
			cnt_hi += spread8(okmask >> 8);
		}
		for (unsigned sb = 0; sb < CTX_MAX; sb++) {
			const uint32_t up = (uint32_t)((sb < 8 ? cnt_lo >> (8 * sb) : cnt_hi >> (8 * (sb - 8))) & 0xff);

			if (score[sb] + up >= high)
				cand[nc++] = (uint8_t)sb;
			else
				score[sb] += up;
		}
		for (unsigned st = 0; st < len; st++) {
			const unsigned cur = winner, ok = okm[st];

			if ((fm[st] >> cur) & 1)
				tally(&t, (ok >> cur) & 1);
			/* Ascending lengths, >= takes over, as 90B's loop. */
			for (unsigned c = 0; c < nc; c++) {
				const unsigned sb = cand[c];
				const uint32_t inc = (ok >> sb) & 1, v = score[sb] + inc;
				const int take = inc && v >= high;

				score[sb] = v;
				winner = take ? sb : winner;
				high = take ? v : high;
			}
		}
	}
	est_zfree(all, BIN_TABLES_BYTES);
	est_prediction_bound(t.c, n - 2, t.longest, 2, r);
	return 0;
}

/* One LZ78Y step, longest context first: the prediction (-1: none) from
 * the contexts known, counting follower y after each of them, and after
 * the new ones while the dictionary has room. */
static inline __attribute__((always_inline)) int
lz_bin_step(uint64_t *all, uint32_t hist, unsigned y, uint32_t *dict_size)
{
	const uint64_t one = BIN_ONE(y);
	uint32_t best = 0;
	int pred = -1;

	UNROLL_CTX
	for (unsigned j = LZ_B; j >= 1; j--) {
		uint64_t *const p = bin_at(all, hist, j);
		const uint64_t e = *p;

		if (e) {
			const uint32_t c0 = bin_count(e, 0), c1 = bin_count(e, 1);
			const uint32_t cnt = c0 > c1 ? c0 : c1;
			const int better = cnt > best;

			/* ties predict the larger symbol, 1 */
			pred = better ? (c0 > c1 ? 0 : 1) : pred;
			best = better ? cnt : best;
			*p = e + one;
		} else if (*dict_size < LZ_MAX_DICT) {
			*p = one;
			++*dict_size;
		}
	}
	return pred;
}

int est_lz78y_binary(const uint8_t *s, size_t n, struct est_result *r)
{
	uint64_t *all = est_zalloc(BIN_TABLES_BYTES);
	uint32_t dict_size = 0, hist = 0;
	struct tally t = { 0, 0, 0 };

	if (!all)
		return -ENOMEM;
	for (unsigned j = 1; j <= LZ_B; j++)
		hist |= (uint32_t)s[LZ_B - j] << (j - 1);
	for (unsigned j = 1; j <= LZ_B; j++) {
		*bin_at(all, hist, j) += BIN_ONE(s[LZ_B]);
		dict_size++;
	}
	for (size_t i = LZ_B + 1; i < n; i++) {
		const unsigned y = s[i];

		hist = ((hist << 1) | s[i - 1]) & 0xffffu;
		if (i + 1 < n)	/* as in mmc_binary() */
			bin_prefetch(all, ((hist << 2) | (uint32_t)s[i] << 1 | s[i + 1]) & 0xffffu);
		tally(&t, lz_bin_step(all, hist, y, &dict_size) == (int)y);
	}
	est_zfree(all, BIN_TABLES_BYTES);
	est_prediction_bound(t.c, n - LZ_B - 1, t.longest, 2, r);
	return 0;
}
