/* SP 800-90B §6.3.9 MultiMMC and §6.3.10 LZ78Y over binary samples, in
 * one pass over one table (the "bit scoreboard"): per context length j and
 * context (indexed by its bits) the counts of its two followers.  Both
 * predictors count the same pairs, and reading and writing these counters
 * (16 per sample, the long contexts past the L1 cache) is most of their
 * work, so they share it:
 *   - MultiMMC, lengths 1..15, counts every pair (at most 2^16 per length,
 *     under its cap of 100,000): the shared counts are its own;
 *   - LZ78Y counts a context's followers from the step it entered the
 *     dictionary (at most 65,536 contexts, longest first), so it keeps the
 *     shared counts as they were then (its base) and subtracts;
 *   - at length 16 the two caps count different pairs (from 2^15 contexts
 *     on), so each keeps its own counts there. */
#include <errno.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_internal.h"
#include "rngfeed/estimate_predict.h"

/* ---- the table ----
 * bin_at(all, ctx, j) is the entry of the context ctx of j bits (bit j - 1 =
 * the sample j back).  Its word c holds the counts of the two followers,
 * follower 0 in the low 32 bits, 1 in the high 32 (counts stay below 2^31:
 * at most n); so one load and one store count a pair.  Word b: below
 * length 16, 0 while the context is not in LZ78Y's dictionary, else c as
 * it was on entry plus 1 in each half (so that c + 1 - b is LZ78Y's count,
 * and zeroed memory is an empty dictionary); at length 16, LZ78Y's own
 * counts.  2^j entries per length, 2 MiB for all 16.  The words c are one
 * array and the words b another (b BIN_ENTRIES words after its c), not
 * pairs: once the dictionary is full only length 16's b and the few short
 * lengths' that LZ78Y's prediction reads are still used, so every cache
 * line of the 1 MiB of c that a step reads holds only counts it may use
 * (interleaved, half of each line was b: 2 MiB to keep in cache; 55 -> 49
 * ms on 10^6 biased bits).  Each length's table starts one cache line
 * further from a 4-KiB boundary than the one before: the longer tables'
 * sizes are multiples of 4 KiB, so a step's entries (the same low bits of
 * the context) shared their address bits below 4 KiB, which a CPU may take
 * for a possible store-to-load dependency. */
struct bent;	/* an entry: only ever a pointer to its word c */

#define BIN_SKEW 8	/* words: a cache line */
#define BIN_OFF(j) (((size_t)1 << (j)) - 2 + BIN_SKEW * (size_t)(j))
#define BIN_ENTRIES (((size_t)1 << (CTX_MAX + 1)) + BIN_SKEW * (CTX_MAX + 1))
#define BIN_TABLES_BYTES (2 * BIN_ENTRIES * sizeof(uint64_t))
#define BC(p) (((uint64_t *)(p))[0])		/* the entry's word c */
#define BB(p) (((uint64_t *)(p))[BIN_ENTRIES])	/* and its word b */

static inline struct bent *bin_at(struct bent *all, uint32_t ctx, unsigned j)
{
	return (struct bent *)((uint64_t *)all + BIN_OFF(j) + (ctx & ((1u << j) - 1)));
}

/* The pair of counts as the word holds them. */
#define BIN_ONE(y) ((uint64_t)1 << (32 * (y)))
#define BIN_BOTH ((uint64_t)1 << 32 | 1)	/* 1 in each half */
static inline uint32_t bin_count(uint64_t e, unsigned y)
{
	return (uint32_t)(e >> (32 * y));
}

/* Fully unrolled where the compiler is GCC 8 or later: the lengths'
 * offsets and masks become constants.  (Clang: its own heuristics.) */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define UNROLL_CTX _Pragma("GCC unroll 16")
#else
#define UNROLL_CTX
#endif

/* Bits 0..7 of x as bytes 0..7, each 0 or 1. */
static inline uint64_t spread8(unsigned x)
{
	const uint64_t v = ((uint64_t)(x & 0xffu) * 0x0101010101010101ull) & 0x8040201008040201ull;

	return ((v + 0x7f7f7f7f7f7f7f7full) & 0x8080808080808080ull) >> 7;
}

/* The long contexts' counters miss the caches (2 MiB of them): those of
 * the position after next (context h2) are fetched a step ahead. */
static inline void bin_prefetch(struct bent *all, uint32_t h2)
{
	for (unsigned j = 9; j <= CTX_MAX; j++)
		__builtin_prefetch(bin_at(all, h2, j), 1);
}

/* A MultiMMC step alone, for the first positions (lengths 1..max, max <
 * 15, before LZ78Y starts): counts follower y after each context of hist
 * and returns which lengths knew their context (*fm) and which of those
 * predicted y (the result). */
static uint32_t mmc_first_step(struct bent *all, uint32_t hist, unsigned y, unsigned max,
			       uint32_t *fm)
{
	uint32_t known = 0, okmask = 0;

	for (unsigned j = 1; j <= max; j++) {
		struct bent *const p = bin_at(all, hist, j);
		const uint64_t e = BC(p);

		known |= (uint32_t)(e != 0) << (j - 1);
		/* ties predict the larger symbol, 1 */
		okmask |= (uint32_t)((bin_count(e, 1) >= bin_count(e, 0)) == y) << (j - 1);
		// cppcheck-suppress unreadVariable ; a store through the table, read later
		BC(p) = e + BIN_ONE(y);
	}
	*fm = ((known + 1) & ~known) - 1;
	return okmask & *fm;
}

/* LZ78Y's counts of the context of length j (below 16) in entry e: zero
 * while it is not in the dictionary, else those since it entered. */
static inline uint64_t lz_counts(struct bent *e)
{
	return BB(e) ? BC(e) + BIN_BOTH - BB(e) : 0;
}

/* ---- LZ78Y's prediction ----
 * The most frequent follower of the longest context (in the dictionary)
 * whose most frequent follower is the most frequent of all: longest first,
 * a shorter one wins only with a higher count.  All 16 lengths, as 90B
 * says: */
static int lz_predict_all(struct bent *all, uint32_t hist)
{
	uint32_t best = 0;
	int pred = -1;

	for (unsigned j = CTX_MAX; j >= 1; j--) {
		const uint64_t l = j == CTX_MAX ? BB(bin_at(all, hist, j)) : lz_counts(bin_at(all, hist, j));
		const uint32_t c0 = bin_count(l, 0), c1 = bin_count(l, 1);
		const uint32_t cnt = c0 > c1 ? c0 : c1;

		if (cnt > best) {
			best = cnt;
			pred = c0 > c1 ? 0 : 1;	/* ties: the larger symbol */
		}
	}
	return pred;
}

/* And from the shortest contexts up, stopping at the first that falls
 * short: every context in the dictionary entered with its suffix one
 * shorter already there or entering just after it (longest first), so its
 * suffix has seen every follower it has, and as often or more.  So the
 * lengths in the dictionary are 1..J, each count is at most the one of the
 * length below, and the most frequent of all is that of length 1: the
 * answer is the last length of 1..J whose count still equals it.  (On
 * random data the scan stops at length 2, where 90B's loop reads 16.)
 * The exception: the step that filled the dictionary added its long
 * contexts but may have had no room left for their suffixes; the caller
 * takes lz_predict_all() where the context repeats one of those. */
static inline int lz_predict_up(struct bent *all, uint32_t hist)
{
	uint64_t l = lz_counts(bin_at(all, hist, 1));
	uint32_t c0 = bin_count(l, 0), c1 = bin_count(l, 1);
	const uint32_t top = c0 > c1 ? c0 : c1;
	int pred = c0 > c1 ? 0 : 1;

	if (!l)
		return -1;	/* nothing in the dictionary */
	for (unsigned j = 2; j <= CTX_MAX; j++) {
		l = j == CTX_MAX ? BB(bin_at(all, hist, j)) : lz_counts(bin_at(all, hist, j));
		c0 = bin_count(l, 0);
		c1 = bin_count(l, 1);
		if ((c0 > c1 ? c0 : c1) != top || !l)
			break;
		pred = c0 > c1 ? 0 : 1;
	}
	return pred;
}

#ifdef __SSE2__
/* MultiMMC's view of the words c of lengths j..j + 3: which are not zero
 * (bit 0: length j) in the low nibble, and where the count of 1 is below
 * that of 0 (predicts 0) in the next.  Four at a time in SSE2 registers:
 * the step is bound by its instruction count more than by the table (with
 * every table cut to L1's size it still took 43 of its 49 ns), and per
 * length the scalar test, subtraction and shifts were a quarter of them
 * (10^6 biased bits: 49 -> 40.5 ms).  The counts stay below 2^31, so the
 * difference of two 32-bit halves is exact. */
static inline unsigned mmc_bits4(struct bent *all, uint32_t hist, unsigned j)
{
	const double *a = (const double *)bin_at(all, hist, j), *b = (const double *)bin_at(all, hist, j + 1);
	const double *c = (const double *)bin_at(all, hist, j + 2), *d = (const double *)bin_at(all, hist, j + 3);
	const __m128d ab = _mm_loadh_pd(_mm_load_sd(a), b), cd = _mm_loadh_pd(_mm_load_sd(c), d);
	const __m128i l = _mm_castps_si128(_mm_shuffle_ps(_mm_castpd_ps(ab), _mm_castpd_ps(cd), _MM_SHUFFLE(2, 0, 2, 0)));
	const __m128i h = _mm_castps_si128(_mm_shuffle_ps(_mm_castpd_ps(ab), _mm_castpd_ps(cd), _MM_SHUFFLE(3, 1, 3, 1)));
	const __m128i zero = _mm_cmpeq_epi32(_mm_or_si128(l, h), _mm_setzero_si128());

	return (~(unsigned)_mm_movemask_ps(_mm_castsi128_ps(zero)) & 15u) |
	       (unsigned)_mm_movemask_ps(_mm_castsi128_ps(_mm_sub_epi32(h, l))) << 4;
}
#endif

/* Where LZ78Y's dictionary filled (the context then, and the shortest
 * length it added); fill_j = CTX_MAX + 1 while it has room. */
struct lz_fill { uint32_t hist; unsigned j; };

/* One step of both, once every length has a context: MultiMMC's as in
 * mmc_first_step(); LZ78Y's prediction (-1: none) in *lz, then its counts
 * of y after the contexts in its dictionary and new ones while it has
 * room. */
static inline __attribute__((always_inline)) uint32_t
both_step(struct bent *all, uint32_t hist, unsigned y, uint32_t *entries16,
	  uint32_t *dict_size, struct lz_fill *fill, uint32_t *fm, int *lz, const int room)
{
	const uint64_t one = BIN_ONE(y);
	struct bent *const p16 = bin_at(all, hist, CTX_MAX);
	const uint64_t e16 = BC(p16), l16 = BB(p16);
	uint32_t known, okmask, fmask;
#ifdef __SSE2__
	/* before any length's count changes */
	const unsigned q0 = mmc_bits4(all, hist, 1), q1 = mmc_bits4(all, hist, 5);
	const unsigned q2 = mmc_bits4(all, hist, 9), q3 = mmc_bits4(all, hist, 13);

	known = (q0 & 15) | (q1 & 15) << 4 | (q2 & 15) << 8 | (q3 & 15) << 12;
	okmask = (q0 >> 4 | (q1 >> 4) << 4 | (q2 >> 4) << 8 | (q3 >> 4) << 12) ^ (y ? 0xffffu : 0);
#else
	known = (uint32_t)(e16 != 0) << (CTX_MAX - 1);
#endif

	/* the lengths the context shares with the filling step's */
	if ((unsigned)__builtin_ctz((hist ^ fill->hist) | 1u << CTX_MAX) >= fill->j)
		*lz = lz_predict_all(all, hist);
	else
		*lz = lz_predict_up(all, hist);

	/* Right when the prediction is y: 1 unless the count of 1 is below
	 * that of 0 (ties predict the larger symbol, 1), so the sign of the
	 * difference, xor y (fewer instructions than a compare). */
#define MMC_OK(e) ((uint32_t)((uint64_t)((int64_t)((e) >> 32) - (int64_t)(uint32_t)(e)) >> 63) ^ y)
#ifndef __SSE2__
	okmask = MMC_OK(e16) << (CTX_MAX - 1);
#endif
	if (!room) {
		/* Without a branch: whether a context of 16 is in the
		 * dictionary is a coin toss on skewed data. */
		BB(p16) = l16 + (l16 ? one : 0);
	} else if (l16) {
		BB(p16) = l16 + one;
	} else if (*dict_size < LZ_MAX_DICT) {
		BB(p16) = one;
		if (++*dict_size == LZ_MAX_DICT)
			*fill = (struct lz_fill){ hist, CTX_MAX };
	}
	UNROLL_CTX
	for (unsigned j = CTX_MAX - 1; j >= 1; j--) {
		struct bent *const p = bin_at(all, hist, j);
		const uint64_t c = BC(p);
#ifndef __SSE2__
		const unsigned sb = j - 1;

		known |= (uint32_t)(c != 0) << sb;
		okmask |= MMC_OK(c) << sb;
#endif
		/* LZ78Y: a new context enters with its counts so far */
		if (room && *dict_size < LZ_MAX_DICT && !BB(p)) {
			BB(p) = c + BIN_BOTH;
			if (++*dict_size == LZ_MAX_DICT)
				*fill = (struct lz_fill){ hist, j };
		}
		// cppcheck-suppress unreadVariable ; a store through the table, read later
		BC(p) = c + one;
	}
#undef MMC_OK
	/* A context counts as found when it and every shorter one are
	 * known (90B's dictionaries grow shortest first): the run of ones
	 * from bit 0.  Up to 15 bits of context there are at most 2^16
	 * pairs, fewer than MultiMMC's cap: every pair was counted. */
	fmask = ((known + 1) & ~known) - 1;
	{
		/* A pair already counted, or a new one while there is room:
		 * without branches, the first is a coin toss on skewed data. */
		const int seen = ((fmask >> (CTX_MAX - 1)) & 1) && bin_count(e16, y);
		const int add = seen || *entries16 < MMC_MAX_ENTRIES;

		// cppcheck-suppress unreadVariable ; a store through the table, read later
		BC(p16) = e16 + (add ? one : 0);
		*entries16 += (uint32_t)(add && !seen);
	}
	*fm = fmask;
	return okmask & fmask;
}

/* MultiMMC's scoreboard does not depend on its counters, so it is kept 64
 * steps at a time as in lag_binary(): first the block's steps, with which
 * lengths knew their context and which predicted right at each step (and
 * how often each was right, in byte lanes); then only the lengths that can
 * reach the highest score within the block are stepped through it, the
 * others just gain their count.  LZ78Y (from position LZ_B, predicting
 * from LZ_B + 1) has no scoreboard: its tally is kept at each step. */
#define MMC_BLOCK 64
int est_mmc_lz78y_binary(const uint8_t *s, size_t n, struct est_result *mmc,
			 struct est_result *lz)
{
	struct bent *all = est_zalloc(BIN_TABLES_BYTES);
	uint32_t entries16 = 0, dict_size = 0, score[CTX_MAX] = { 0 }, high = 0;	/* high: score[winner] */
	struct lz_fill fill = { 0, CTX_MAX + 1 };
	uint16_t okm[MMC_BLOCK], fm[MMC_BLOCK];
	struct tally t = { 0, 0, 0 }, tz = { 0, 0, 0 };
	unsigned winner = 0;
	uint32_t hist = 0;

	if (!all)
		return -ENOMEM;
	/* MultiMMC's pairs whose context starts at s[0] (context length i for
	 * the sample at i) come first: they precede every prediction that can
	 * use them, and the steps below start their contexts at s[1].  Length
	 * 16's is the first step of both's. */
	for (size_t i = 1; i < CTX_MAX && i < n - 1; i++) {
		hist = (hist << 1) | s[i - 1];
		BC(bin_at(all, hist, (unsigned)i)) = BIN_ONE(s[i]);
	}
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
			if (i >= LZ_B) {
				int pred;

				/* room: a constant in each copy, so that once the
				 * dictionary is full the step has no test per
				 * length for it */
				if (dict_size < LZ_MAX_DICT)
					okmask = both_step(all, hist, s[i], &entries16, &dict_size,
							   &fill, &fmask, &pred, 1);
				else
					okmask = both_step(all, hist, s[i], &entries16, &dict_size,
							   &fill, &fmask, &pred, 0);
				if (i > LZ_B)
					tally(&tz, pred == (int)s[i]);
			} else {
				okmask = mmc_first_step(all, hist, s[i], (unsigned)(i - 1), &fmask);
			}
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
	est_prediction_bound(t.c, n - 2, t.longest, 2, mmc);
	if (n < LZ_B + 2)
		return 0;	/* LZ78Y predicted nothing */
	est_prediction_bound(tz.c, n - LZ_B - 1, tz.longest, 2, lz);
	return 1;
}
