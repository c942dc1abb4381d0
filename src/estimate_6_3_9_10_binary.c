// SPDX-License-Identifier: GPL-2.0-or-later
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
 *     on), so each keeps its own counts there;
 *   - once LZ78Y has settled (see lz_settled()), only MultiMMC counts.
 * MultiMMC's scoreboard is estimate_6_3_9_board.h's. */
#include <errno.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"
#include "rngfeed/estimate_predict.h"
#include "estimate_6_3_9_board.h"

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

/* The counters that miss the L2 cache (lengths 12..16's words c and 16's
 * word b, 1.25 MiB of the 2) of the context PF_AHEAD steps on are fetched
 * now.  10^6 biased / uniform bits, the whole pass: 31.6 / 33.0 ms without;
 * these, 2 to 4 steps ahead: 28.8-30.3 / 28.4-29.4; without 16's word b:
 * 31.3-32.4 / 32.0-32.5; 8 steps ahead: 32.6 / 32.1; all of lengths 9..16's
 * words c a step ahead: 38 (against 34 then).  always_inline: in a
 * function of its own the prefetches were dropped (GCC took it for one
 * without effects), as they had been in this file until now. */
#define PF_AHEAD 3
static inline __attribute__((always_inline)) void bin_prefetch(struct bent *all, uint32_t ctx,
								 const int settled)
{
	UNROLL_CTX
	for (unsigned j = 12; j <= CTX_MAX; j++)
		__builtin_prefetch(bin_at(all, ctx, j), 1);
	if (!settled)
		__builtin_prefetch(&BB(bin_at(all, ctx, CTX_MAX)), 1);
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
static inline uint64_t lz_counts(struct bent *e, uint64_t less)
{
	return BB(e) ? BC(e) - less + BIN_BOTH - BB(e) : 0;
}

/* ---- LZ78Y's prediction ----
 * The most frequent follower of the longest context (in the dictionary)
 * whose most frequent follower is the most frequent of all: longest first,
 * a shorter one wins only with a higher count.  All 16 lengths, as 90B
 * says: */
static int lz_predict_all(struct bent *all, uint32_t hist, uint64_t less)
{
	uint32_t best = 0;
	int pred = -1;

	for (unsigned j = CTX_MAX; j >= 1; j--) {
		const uint64_t l = j == CTX_MAX ? BB(bin_at(all, hist, j)) : lz_counts(bin_at(all, hist, j), less);
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
static inline int lz_predict_up(struct bent *all, uint32_t hist, uint64_t less)
{
	uint64_t l = lz_counts(bin_at(all, hist, 1), less);
	uint32_t c0 = bin_count(l, 0), c1 = bin_count(l, 1);
	const uint32_t top = c0 > c1 ? c0 : c1;
	int pred = c0 > c1 ? 0 : 1;

	if (!l)
		return -1;	/* nothing in the dictionary */
	for (unsigned j = 2; j <= CTX_MAX; j++) {
		l = j == CTX_MAX ? BB(bin_at(all, hist, j)) : lz_counts(bin_at(all, hist, j), less);
		c0 = bin_count(l, 0);
		c1 = bin_count(l, 1);
		if ((c0 > c1 ? c0 : c1) != top || !l)
			break;
		pred = c0 > c1 ? 0 : 1;
	}
	return pred;
}

#ifdef __SSE2__
/* MultiMMC's view of the 16 lengths' words c: which are zero (bit j - 1:
 * length j, its context never seen) in the low 16 bits, and where the
 * count of 1 is below that of 0 (predicts 0) in the high 16.  In SSE2
 * registers, four lengths a register: the step is bound by its
 * instruction count more than by the table (with every table cut to L1's
 * size it still took 43 of its 49 ns), and per length the scalar test,
 * subtraction and shifts were a quarter of them.  The counts stay below
 * 2^31, so the difference of two 32-bit halves is exact, and saturating
 * packs keep its sign down to a byte: one pmovmskb reads all 16 (four
 * movmskps and the shifts to join them were 36 instructions more a step).
 * Loads through __m128i and __m64, which may alias the table's words (a
 * double may not). */
static inline __attribute__((always_inline)) __m128 bin_pair(struct bent *all, uint32_t hist,
							     unsigned j)
{
	return _mm_loadh_pi(_mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(void *)bin_at(all, hist, j))),
			    (const __m64 *)(void *)bin_at(all, hist, j + 1));
}

/* The words c of lengths j and j + 1 that bin_pair() read (v), plus one
 * (BIN_ONE() in each half), stored back; length 16's (j + 1 = CTX_MAX)
 * is left to the caller. */
static inline __attribute__((always_inline)) void bin_count_pair(struct bent *all, uint32_t hist,
								 unsigned j, __m128 v, __m128i one)
{
	const __m128 w = _mm_castsi128_ps(_mm_add_epi64(_mm_castps_si128(v), one));

	_mm_storel_pi((__m64 *)(void *)bin_at(all, hist, j), w);
	if (j + 1 < CTX_MAX)
		_mm_storeh_pi((__m64 *)(void *)bin_at(all, hist, j + 1), w);
}

/* count: lengths 1..15 are also counted (one) as they are read, each
 * address used once and at once (counted in a loop of its own after the
 * reads, 16 masks of hist held in registers spilled half of them to the
 * stack and loaded them back). */
static inline __attribute__((always_inline)) uint32_t mmc_bits16(struct bent *all, uint32_t hist,
								 const int count, uint64_t one, int32_t *diff1)
{
	const __m128i ones = _mm_set1_epi64x((long long)one);
	__m128i diff[4], zero[4];

	UNROLL_CTX
	for (unsigned q = 0; q < 4; q++) {
		const __m128 ab = bin_pair(all, hist, 4 * q + 1), cd = bin_pair(all, hist, 4 * q + 3);
		const __m128i l = _mm_castps_si128(_mm_shuffle_ps(ab, cd, _MM_SHUFFLE(2, 0, 2, 0)));
		const __m128i h = _mm_castps_si128(_mm_shuffle_ps(ab, cd, _MM_SHUFFLE(3, 1, 3, 1)));

		if (count) {
			bin_count_pair(all, hist, 4 * q + 1, ab, ones);
			bin_count_pair(all, hist, 4 * q + 3, cd, ones);
		}

		diff[q] = _mm_sub_epi32(h, l);
		zero[q] = _mm_cmpeq_epi32(_mm_or_si128(l, h), _mm_setzero_si128());
	}
	*diff1 = _mm_cvtsi128_si32(diff[0]);	/* length 1's count of 1 less 0 */
	return (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(_mm_packs_epi32(zero[0], zero[1]),
							  _mm_packs_epi32(zero[2], zero[3]))) |
	       (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(_mm_packs_epi32(diff[0], diff[1]),
							  _mm_packs_epi32(diff[2], diff[3]))) << 16;
}
#endif

/* ---- contexts seen only before LZ78Y starts ----
 * MultiMMC counts the contexts from position 1 on, LZ78Y from LZ_B, and a
 * context LZ78Y meets enters its dictionary at once while it has room.  So
 * a context MultiMMC has counted is in the dictionary, unless all of its
 * occurrences came before LZ_B: those "pending" ones (at most 120) are
 * listed, and by their last PEND_BITS bits a table says which lengths may
 * have one ending so (with SSE2: see both_step()). */
struct lz_pending;
#ifdef __SSE2__
#define PEND_BITS 10
#define PEND_MAX (LZ_B * (LZ_B - 1) / 2)
struct lz_pending {
	uint16_t may[1u << PEND_BITS];	/* bit j - 1: a pending context of j bits */
	uint16_t ctx[PEND_MAX];		/* the pending contexts */
	uint8_t len[PEND_MAX];		/* and their lengths */
	unsigned n;
};

static void pending_table(struct lz_pending *pd)
{
	memset(pd->may, 0, sizeof(pd->may));
	for (unsigned k = 0; k < pd->n; k++) {
		const unsigned j = pd->len[k], step = j < PEND_BITS ? 1u << j : 1u << PEND_BITS;

		for (unsigned x = pd->ctx[k] & ((1u << PEND_BITS) - 1); x < (1u << PEND_BITS); x += step)
			pd->may[x] |= (uint16_t)(1u << (j - 1));
	}
}

/* The contexts MultiMMC counts before LZ_B (of j <= i bits at position i,
 * 1 <= i < LZ_B; n > LZ_B), each once. */
static void pending_init(struct lz_pending *pd, const uint8_t *s)
{
	pd->n = 0;
	for (unsigned i = 1; i < LZ_B; i++) {
		uint32_t ctx = 0;

		for (unsigned j = 1; j <= i; j++) {
			unsigned k = 0;

			ctx |= (uint32_t)s[i - j] << (j - 1);	/* bit j - 1: j back */
			while (k < pd->n && (pd->len[k] != j || pd->ctx[k] != ctx))
				k++;
			if (k == pd->n) {
				pd->ctx[pd->n] = (uint16_t)ctx;
				pd->len[pd->n++] = (uint8_t)j;
			}
		}
	}
	pending_table(pd);
}

/* The pending context of j bits ending the history hist has entered. */
static void pending_gone(struct lz_pending *pd, uint32_t hist, unsigned j)
{
	const uint32_t ctx = hist & ((1u << j) - 1);

	for (unsigned k = 0; k < pd->n; k++)
		if (pd->len[k] == j && pd->ctx[k] == ctx) {
			pd->len[k] = pd->len[--pd->n];
			pd->ctx[k] = pd->ctx[pd->n];
			pending_table(pd);
			return;
		}
}
#endif

/* ---- LZ78Y settled ----
 * Once each of the four contexts of 2 bits has seen both followers in
 * LZ78Y's dictionary, its prediction is for good that of the context of
 * 1 bit, x: every context C ending in x that is in the dictionary entered
 * with or after x, and with or after its suffix of 2 bits zx if that
 * one is in (an entry that finds no room for its suffix is the last one),
 * so C's counts of a follower are at most zx's, which are at most x's
 * less the other context z'x's, at least 1: below x's highest.  Then the
 * prediction is x's most frequent follower since it entered, ties to 1:
 * 1 when MultiMMC's count of 1 after x less its count of 0 (which the
 * step reads anyway) is at least the same difference when x entered, a
 * constant.  So a settled pass keeps no more of LZ78Y's counts nor
 * dictionary: on 8M first-order Markov bits the whole pass 131 -> 118 ms
 * for the prediction (8-bit files' bitstrings 7 to 13 % faster), and 98
 * -> 91 for the counts (once the scoreboard's uniform steps were in).
 * Random or skewed bits settle within the first hundred steps; bits that
 * never settle (00 always followed by 1) keep the dictionary to the end.
 * Whether it has settled, and if so x's differences on entry in thr. */
static int lz_settled(struct bent *all, int32_t thr[2])
{
	for (unsigned x = 0; x < 2; x++) {
		const uint64_t b = BB(bin_at(all, x, 1));

		if (!b)
			return 0;
		thr[x] = (int32_t)(bin_count(b, 1) - bin_count(b, 0));
	}
	for (uint32_t zx = 0; zx < 4; zx++) {
		const uint64_t l = lz_counts(bin_at(all, zx, 2), 0);

		if (!bin_count(l, 0) || !bin_count(l, 1))
			return 0;
	}
	return 1;
}

/* Where LZ78Y's dictionary filled (the context then, and the shortest
 * length it added); fill_j = CTX_MAX + 1 while it has room. */
struct lz_fill { uint32_t hist; unsigned j; };

/* One step of both, once every length has a context: MultiMMC's as in
 * mmc_first_step(); LZ78Y's prediction (-1: none) in *lz, then its counts
 * of y after the contexts in its dictionary and new ones while it has
 * room.  room: 0, the dictionary is full; 1, it has room; 2, it has room
 * for every context of this step (with SSE2 the step then counts lengths
 * 1..15 as it reads them, and looks up only the contexts that may be
 * pending, pd).  settled: LZ78Y has settled (thr: see lz_settled()), and
 * only MultiMMC counts (room is then 0). */
static inline __attribute__((always_inline)) uint32_t
both_step(struct bent *all, uint32_t hist, unsigned y, uint32_t *entries16,
	  uint32_t *dict_size, struct lz_fill *fill, uint32_t *fm, int *lz, const int room,
	  struct lz_pending *pd, const int settled, const int32_t *thr)
{
	const uint64_t one = BIN_ONE(y);
	struct bent *const p16 = bin_at(all, hist, CTX_MAX);
	const uint64_t e16 = BC(p16), l16 = settled ? 0 : BB(p16);
	uint32_t known, okmask, fmask;
#ifdef __SSE2__
	/* before any length's count changes (early: lengths 1..15's are
	 * counted as they are read) */
	const int early = room != 1;	/* MultiMMC's view is read */
	int32_t diff1;
	const uint32_t q = mmc_bits16(all, hist, early, one, &diff1);

	known = ~q & 0xffffu;
	okmask = (q >> 16) ^ (y ? 0xffffu : 0);
#else
	const int early = 0;
	const uint64_t e1 = settled ? BC(bin_at(all, hist, 1)) : 0;
	const int32_t diff1 = (int32_t)(bin_count(e1, 1) - bin_count(e1, 0));

	known = (uint32_t)(e16 != 0) << (CTX_MAX - 1);
#endif
	/* Early, LZ78Y reads lengths 1..15 back one less: a step whose
	 * context repeats the one before waits for their counts. */
	/* the lengths the context shares with the filling step's */
	if (settled)
		*lz = diff1 >= thr[hist & 1];
	else if ((unsigned)__builtin_ctz((hist ^ fill->hist) | 1u << CTX_MAX) >= fill->j)
		*lz = lz_predict_all(all, hist, early ? one : 0);
	else
		*lz = lz_predict_up(all, hist, early ? one : 0);

	/* Right when the prediction is y: 1 unless the count of 1 is below
	 * that of 0 (ties predict the larger symbol, 1), so the sign of the
	 * difference, xor y (fewer instructions than a compare). */
#define MMC_OK(e) ((uint32_t)((uint64_t)((int64_t)((e) >> 32) - (int64_t)(uint32_t)(e)) >> 63) ^ y)
#ifndef __SSE2__
	okmask = MMC_OK(e16) << (CTX_MAX - 1);
#endif
	if (settled) {
		/* LZ78Y's counts are no longer read */
	} else if (!room) {
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
#ifdef __SSE2__
	if (room == 2) {
		/* Lengths 1..15: a context MultiMMC has not seen enters, one it
		 * has is looked up only where it may be pending.  (On
		 * repetitive bits the dictionary never fills: 8M bits of real
		 * clock deltas kept 21,720 contexts, and looking up every
		 * length at every step cost a quarter of the pass.) */
		uint32_t check = known & pd->may[hist & ((1u << PEND_BITS) - 1)] & 0x7fffu;
		uint32_t fresh = ~known & 0x7fffu;

		for (; check; check &= check - 1) {
			const unsigned j = (unsigned)__builtin_ctz(check) + 1;
			struct bent *const p = bin_at(all, hist, j);

			if (!BB(p)) {
				BB(p) = BC(p) - one + BIN_BOTH;	/* counted already */
				++*dict_size;
				pending_gone(pd, hist, j);
			}
		}
		*dict_size += (uint32_t)__builtin_popcount(fresh);
		for (; fresh; fresh &= fresh - 1)
			BB(bin_at(all, hist, (unsigned)__builtin_ctz(fresh) + 1)) = BIN_BOTH;
	}
#else
	(void)pd;
#endif
	if (!early)
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

/* The context of position i (the history one step on from hist), and the
 * one PF_AHEAD steps on fetched (*ahead, kept as hist is: one shift a
 * step). */
static inline __attribute__((always_inline)) uint32_t
next_context(struct bent *all, const uint8_t *s, size_t n, size_t i, uint32_t hist,
	     uint32_t *ahead, const int settled)
{
	if (i + PF_AHEAD < n) {
		*ahead = (*ahead << 1) | s[i + PF_AHEAD - 1];
		bin_prefetch(all, *ahead & 0xffffu, settled);
	}
	return ((hist << 1) | s[i - 1]) & 0xffffu;
}

/* The len steps of a run from i0 once the dictionary is full or LZ78Y has
 * settled (room 0): the loop of most steps, a copy for each pair of
 * constants (the full dictionary's step in a loop of its own: in one loop
 * with the other rooms' it was 5 to 10 % slower).  keep: the steps kept
 * for board_end() rather than played.  LZ78Y's outcomes, the first in bit
 * 0. */
static inline __attribute__((always_inline)) uint64_t
full_run(struct bent *all, const uint8_t *s, size_t n, size_t i0, unsigned len, uint32_t *hist,
	 uint32_t *ahead, uint32_t *entries16, uint32_t *dict_size, struct lz_fill *fill,
	 struct lz_pending *pd, const int32_t *thr, struct board_run *run, struct board *board,
	 const int settled, const int keep)
{
	uint64_t lzm = 0;

	for (unsigned st = 0; st < len; st++) {
		const size_t i = i0 + st;
		uint32_t okmask, fmask;
		int pred;

		*hist = next_context(all, s, n, i, *hist, ahead, settled);
		okmask = both_step(all, *hist, s[i], entries16, dict_size, fill, &fmask, &pred, 0, pd,
				   settled, thr);
		lzm |= (uint64_t)(pred == (int)s[i]) << st;
		if (keep)
			board_keep(run, st, okmask, fmask);
		else
			board_step(run, board, st, okmask, fmask);
	}
	return lzm;
}

/* MultiMMC and LZ78Y over the bits, with MultiMMC's scoreboard kept in
 * runs of BOARD_RUN steps.  LZ78Y (from position LZ_B, predicting from
 * LZ_B + 1) has no scoreboard: its outcomes are kept as bits and tallied
 * a run at a time. */
static inline __attribute__((always_inline)) int
mmc_lz78y_body(const uint8_t *s, size_t n, struct est_result *mmc, struct est_result *lz)
{
	struct bent *all = est_zalloc(BIN_TABLES_BYTES);
	uint32_t entries16 = 0, dict_size = 0;
	struct lz_fill fill = { 0, CTX_MAX + 1 };
	struct board board = { .high = 0, .keep = 1 };
	struct board_run run;
	struct tally tz = { 0, 0, 0 };
#ifdef __SSE2__
	struct lz_pending pending, *const pd = &pending;
#else
	struct lz_pending *const pd = NULL;
#endif
	uint32_t hist = 0, ahead = 0;
	int32_t thr[2];
	int settled = 0;

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
#ifdef __SSE2__
	if (n > LZ_B)
		pending_init(pd, s);
#endif
	/* the context PF_AHEAD steps on, kept as hist is: one shift a step */
	for (size_t k = 0; k <= PF_AHEAD && k < n; k++)
		ahead = (ahead << 1) | s[k];
	for (size_t i0 = 2; i0 < n; i0 += BOARD_RUN) {
		const unsigned len = n - i0 < BOARD_RUN ? (unsigned)(n - i0) : BOARD_RUN;
		/* LZ78Y's outcomes in the run, the first in bit 0, tallied at
		 * its end from the step after LZ_B on (the first `skip`) */
		const unsigned skip = i0 > LZ_B ? 0 : (unsigned)(LZ_B + 1 - i0);
		uint64_t lzm = 0;
		int kept;

		board_begin(&run, &board);
		if (!settled && i0 > LZ_B)
			settled = lz_settled(all, thr);
		/* (a run with LZ78Y not settled is played as it goes: the data
		 * that never settles were not seen to be uniform) */
		kept = settled && board.keep;
		if (kept)
			lzm = full_run(all, s, n, i0, len, &hist, &ahead, &entries16, &dict_size, &fill,
				       pd, thr, &run, &board, 1, 1);
		else if (settled)
			lzm = full_run(all, s, n, i0, len, &hist, &ahead, &entries16, &dict_size, &fill,
				       pd, thr, &run, &board, 1, 0);
		else if (dict_size == LZ_MAX_DICT)
			lzm = full_run(all, s, n, i0, len, &hist, &ahead, &entries16, &dict_size, &fill,
				       pd, thr, &run, &board, 0, 0);
		else {
			for (unsigned st = 0; st < len; st++) {
				const size_t i = i0 + st;
				uint32_t okmask, fmask;

				hist = next_context(all, s, n, i, hist, &ahead, 0);
				if (i >= LZ_B) {
					int pred;

					/* room: a constant in each copy, so that once
					 * the dictionary is full the step has no test
					 * per length for it */
					if (dict_size + CTX_MAX < LZ_MAX_DICT)
						okmask = both_step(all, hist, s[i], &entries16, &dict_size,
								   &fill, &fmask, &pred, 2, pd, 0, thr);
					else if (dict_size < LZ_MAX_DICT)
						okmask = both_step(all, hist, s[i], &entries16, &dict_size,
								   &fill, &fmask, &pred, 1, pd, 0, thr);
					else
						okmask = both_step(all, hist, s[i], &entries16, &dict_size,
								   &fill, &fmask, &pred, 0, pd, 0, thr);
					lzm |= (uint64_t)(pred == (int)s[i]) << st;
				} else {
					okmask = mmc_first_step(all, hist, s[i], (unsigned)(i - 1), &fmask);
				}
				board_step(&run, &board, st, okmask, fmask);
			}
		}
		board_end(&run, &board, len, kept);
		if (skip < len)
			tally_lsb(&tz, lzm >> skip, len - skip);
	}
	est_zfree(all, BIN_TABLES_BYTES);
	est_prediction_bound(board.t.c, n - 2, board.t.longest, 2, mmc);
	if (n < LZ_B + 2)
		return 0;	/* LZ78Y predicted nothing */
	est_prediction_bound(tz.c, n - LZ_B - 1, tz.longest, 2, lz);
	return 1;
}

/* A copy for CPUs with AVX2, BMI1 and BMI2, chosen at run time: the same
 * C, with VEX-encoded SSE (no register copies before two-operand
 * instructions), shifts and masks that need no CL or mov (10^6 biased
 * bits 26.0 -> 25.1 ms, uniform 26.6 -> 26.1). */
#if defined(__x86_64__) && defined(__GNUC__)
#define MMC_V3
static __attribute__((target("avx2,bmi,bmi2"))) int
mmc_lz78y_v3(const uint8_t *s, size_t n, struct est_result *mmc, struct est_result *lz)
{
	return mmc_lz78y_body(s, n, mmc, lz);
}
#endif

static int mmc_lz78y_plain(const uint8_t *s, size_t n, struct est_result *mmc,
			   struct est_result *lz)
{
	return mmc_lz78y_body(s, n, mmc, lz);
}

int est_mmc_lz78y_binary(const uint8_t *s, size_t n, struct est_result *mmc,
			 struct est_result *lz)
{
#ifdef MMC_V3
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
	    __builtin_cpu_supports("bmi2"))
		return mmc_lz78y_v3(s, n, mmc, lz);
#endif
	return mmc_lz78y_plain(s, n, mmc, lz);
}
