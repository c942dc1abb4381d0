// SPDX-License-Identifier: GPL-2.0-or-later
/* SP 800-90B §6.3.8 lag prediction estimate (the predictors' common rules:
 * estimate_6_3_7_multi_mcw.c's comment). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"
#include "rngfeed/estimate_predict.h"

/* ================= §6.3.8 lag ================= */
/* 128 lags.  The scoreboard moves a block of 64 steps at a time: each
 * lag's right predictions in the block are one 64-bit word (bit 63: the
 * block's first step), its score moves on by the word's popcount, and only
 * the lags that can reach the highest score within the block (can_take())
 * are stepped through it one sample at a time, as 90B says (ascending lags,
 * >= takes over). */
#define LAG_D 128

/* Binary samples, 64 steps at a time.  Only a lag that can reach the
 * highest score within the block can become the winner (can_take()); the
 * others' scores move on by the popcount of their match words.  The few
 * that can (on random bits, late in the input, one to three of the 128
 * lags) are stepped through the block one sample at a time as 90B says.
 * The samples are packed MSB first after LAG_D zero bits, so that a lag's
 * match word is one xor of two 64-bit windows (est_window()). */

/* Lag d's right predictions in the block at i0 whose samples are x. */
static inline uint64_t lag_word(const uint64_t *w, uint64_t x, uint64_t live, size_t i0, unsigned d)
{
	uint64_t mm = ~(x ^ est_window(w, i0 + LAG_D - d)) & live;

	if (d > i0)	/* no lag-d prediction before s[d] */
		mm &= d - i0 < 64 ? ~0ull >> (d - i0) : 0;
	return mm;
}

struct lag_board {
	uint64_t m[LAG_D];	/* m[d - 1]: lag d's matches, bit 63 = first step */
	uint64_t sc[LAG_D], high;	/* high: sc[winner]; 64 bits for lag_avx2() */
	uint8_t cand[LAG_D];	/* the lags that can take over, ascending */
	unsigned nc, winner;
};

/* Lag d's match word mm (the winner's: mw) into the board. */
static inline __attribute__((always_inline)) void
lag_sort(struct lag_board *b, unsigned d, uint64_t mm, uint64_t mw, int hw)
{
	b->m[d - 1] = mm;
	/* most lags are more than a block behind: no second popcount */
	if (b->sc[d - 1] + 65 >= b->high && can_take(b->sc[d - 1], popcount_hw(mm & ~mw, hw), b->high))
		b->cand[b->nc++] = (uint8_t)(d - 1);
	else
		b->sc[d - 1] += popcount_hw(mm, hw);
}

/* Lags d0..d1 whose windows start sh0, sh0 - 1, ... bits into word a (c
 * the word after it), in a whole block x: the two words stay in registers
 * and the shifts need no test for 0. */
static inline __attribute__((always_inline)) void
lag_run(struct lag_board *b, uint64_t a, uint64_t c, uint64_t x, uint64_t mw,
	unsigned d0, unsigned d1, unsigned sh0, int hw)
{
	const uint64_t c1 = c >> 1;

	for (unsigned d = d0; d <= d1; d++) {
		const unsigned sh = sh0 - (d - d0);

		lag_sort(b, d, ~(x ^ est_window_at(a, c1, sh)), mw, hw);
	}
}

#if defined(__x86_64__) && defined(__GNUC__)
#define LAG_AVX2
/* With AVX2, four lags an instruction: each lane its own shift (vpsllvq),
 * popcounts from a nibble table (vpshufb) summed by vpsadbw.  A group of
 * four with a lag that can take over goes through lag_sort() one by one,
 * in order.  10^6 bits: 3.4 -> 2.4 ms (biased), 3.7 -> 3.2 ms (uniform),
 * 8M bits 26 -> 19 ms. */
static inline __attribute__((target("avx2"), always_inline)) __m256i popcount4(__m256i v)
{
	const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
					     0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
	const __m256i nib = _mm256_set1_epi8(0x0f);
	const __m256i lo = _mm256_shuffle_epi8(lut, _mm256_and_si256(v, nib));
	const __m256i hi = _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi64(v, 4), nib));

	return _mm256_sad_epu8(_mm256_add_epi8(lo, hi), _mm256_setzero_si256());
}

/* lag_run() of lags d0 .. d0 + 4 nv - 1. */
static inline __attribute__((target("avx2,popcnt"), always_inline)) void
lag_run4(struct lag_board *b, uint64_t a, uint64_t c, uint64_t x, uint64_t mw,
	 unsigned d0, unsigned nv, unsigned sh0)
{
	const __m256i va = _mm256_set1_epi64x((long long)a);
	const __m256i vc = _mm256_set1_epi64x((long long)(c >> 1));
	const __m256i nx = _mm256_set1_epi64x((long long)~x);
	const __m256i vmw = _mm256_set1_epi64x((long long)mw);
	/* can_take(): sc + ahead + 1 >= high, sc + ahead > high - 1 */
	const __m256i below = _mm256_set1_epi64x((long long)b->high - 1);
	const __m256i k63 = _mm256_set1_epi64x(63), four = _mm256_set1_epi64x(4);
	const __m256i k65 = _mm256_set1_epi64x(65);
	__m256i sh = _mm256_setr_epi64x(sh0, sh0 - 1, sh0 - 2, sh0 - 3);

	for (unsigned v = 0; v < nv; v++) {
		const unsigned d = d0 + 4 * v;
		const __m256i win = _mm256_or_si256(_mm256_sllv_epi64(va, sh),
						    _mm256_srlv_epi64(vc, _mm256_sub_epi64(k63, sh)));
		const __m256i mm = _mm256_xor_si256(nx, win);
		const __m256i sc = _mm256_loadu_si256((const __m256i *)(const void *)&b->sc[d - 1]);
		/* as in lag_sort(): four lags more than a block behind need
		 * no second popcount */
		const __m256i near = _mm256_cmpgt_epi64(_mm256_add_epi64(sc, k65), below);
		__m256i can = near;

		if (!_mm256_testz_si256(near, near))
			can = _mm256_cmpgt_epi64(
				_mm256_add_epi64(sc, popcount4(_mm256_andnot_si256(vmw, mm))), below);
		_mm256_storeu_si256((__m256i *)(void *)&b->m[d - 1], mm);
		if (_mm256_testz_si256(can, can)) {
			_mm256_storeu_si256((__m256i *)(void *)&b->sc[d - 1],
					    _mm256_add_epi64(sc, popcount4(mm)));
		} else {
			for (unsigned j = 0; j < 4; j++)
				lag_sort(b, d + j, b->m[d - 1 + j], mw, 1);
		}
		sh = _mm256_sub_epi64(sh, four);
	}
}

/* Lags 2..128 of a whole block (see lag_block()). */
static __attribute__((target("avx2,popcnt"))) void
lag_avx2(struct lag_board *b, const uint64_t *q, uint64_t x, uint64_t mw)
{
	lag_run4(b, q[1], q[2], x, mw, 2, 16, 63);
	lag_run4(b, q[0], q[1], x, mw, 66, 15, 63);
	lag_run(b, q[0], q[1], x, mw, 126, LAG_D, 3, 1);
}
#endif

/* The block at i0 into the board.  i0 = 64 q + 1, so lag d's window
 * starts at bit 64 q + 129 - d of w: word q + 2 for lag 1, q + 1 from bit
 * 63 down to 0 for lags 2..65, q from 63 down to 1 for lags 66..128.
 * Written that way for the whole blocks past the first 128 samples
 * (10^6 bits: 5.3 -> 4.5 ms; 8M: 40 -> 34 ms); the others one lag_word()
 * each. */
static inline __attribute__((always_inline)) void
lag_block(struct lag_board *b, const uint64_t *w, size_t i0, unsigned len, int hw)
{
	/* the block's len steps: the top len bits (1 <= len <= 64) */
	const uint64_t x = est_window(w, i0 + LAG_D), live = ~(~0ull >> (len - 1) >> 1);
	const uint64_t mw = lag_word(w, x, live, i0, b->winner + 1);

	b->nc = 0;
	if (len == 64 && i0 > LAG_D) {
		const uint64_t *q = w + (i0 >> 6);

		lag_run(b, q[2], 0, x, mw, 1, 1, 0, hw);
#ifdef LAG_AVX2
		if (hw == 2) {
			lag_avx2(b, q, x, mw);
			return;
		}
#endif
		lag_run(b, q[1], q[2], x, mw, 2, 65, 63, hw);
		lag_run(b, q[0], q[1], x, mw, 66, LAG_D, 63, hw);
		return;
	}
	for (unsigned d = 1; d <= LAG_D; d++)
		lag_sort(b, d, lag_word(w, x, live, i0, d), mw, hw);
}

/* The block's len steps for the candidates, one at a time, their words
 * and scores copied next to each other and shifted a step at a time: read
 * through the board's index a step, this was 1.4 of binary lag's 3.2 ms on
 * 10^6 uniform bits (now 2.5 ms in all). */
static void lag_step(struct lag_board *b, unsigned len, struct tally *t)
{
	uint64_t cm[LAG_D], cs[LAG_D], high = b->high;
	unsigned wc = 0;	/* the winner among the candidates (always one) */
	const unsigned nc = b->nc;

	/* nc >= 1, the winner among them: scan-build cannot tell */
	cm[0] = 0;
	cs[0] = 0;
	for (unsigned c = 0; c < nc; c++) {
		cm[c] = b->m[b->cand[c]];
		cs[c] = b->sc[b->cand[c]];
		wc = b->cand[c] == b->winner ? c : wc;
	}
	for (unsigned st = 0; st < len; st++) {
		tally(t, (int)(cm[wc] >> 63));
		/* Ascending lags, >= takes over: 90B's loop over the lags
		 * that can win. */
		for (unsigned c = 0; c < nc; c++) {
			const uint64_t inc = cm[c] >> 63, v = cs[c] + inc;
			const int take = inc && v >= high;

			cm[c] <<= 1;
			cs[c] = v;
			wc = take ? c : wc;
			high = take ? v : high;
		}
	}
	for (unsigned c = 0; c < nc; c++)
		b->sc[b->cand[c]] = cs[c];
	b->winner = b->cand[wc];
	b->high = high;
}

/* The block's len steps, once every lag's word is on the board. */
static inline __attribute__((always_inline)) void
lag_moves(struct lag_board *b, unsigned len, struct tally *t, int hw)
{
	if (b->nc == 1) {
		/* Only the winner can reach the top score (it always can): it
		 * stays the winner through the block, its score the top one. */
		b->sc[b->winner] += popcount_hw(b->m[b->winner], hw);
		b->high = b->sc[b->winner];
		tally_msb(t, b->m[b->winner], len);
		return;
	}
	lag_step(b, len, t);
}

static inline __attribute__((always_inline)) int
lag_binary_body(const uint8_t *s, size_t n, struct est_result *r, int hw_popcount)
{
	const size_t words = (n + LAG_D) / 64 + 2;
	uint64_t *w = est_zalloc(words * sizeof(*w));
	struct lag_board b;
	struct tally t = { 0, 0, 0 };

	if (!w)
		return -ENOMEM;
	memset(&b, 0, sizeof(b));	/* winner: lag 1 */
	est_pack_bits(s, n, w + LAG_D / 64);
	for (size_t i0 = 1; i0 < n; i0 += 64) {
		const unsigned len = n - i0 < 64 ? (unsigned)(n - i0) : 64;

		lag_block(&b, w, i0, len, hw_popcount);
		lag_moves(&b, len, &t, hw_popcount);
	}
	est_zfree(w, words * sizeof(*w));
	est_prediction_bound(t.c, n - 1, t.longest, 2, r);
	return 0;
}

/* Wide samples the same way, 64 steps a block, each lag's match word from
 * byte compares (bit-sliced scores stepped one sample at a time were 68 of
 * 70 ms on 10^6 clock deltas).  The samples reversed, r[64 + j] =
 * s[n - 1 - j] with 64 zero bytes before and LAG_D + 64 after, so that a
 * compare's byte mask has the block's first step in bit 63 and lag d's
 * window is d bytes on: bit b of the block at i0 is step i0 + 63 - b, read
 * at r + n - i0 + b. */
static inline __attribute__((always_inline)) uint64_t match64(const uint8_t *a, const uint8_t *b)
{
	uint64_t m = 0;
#ifdef __SSE2__
	for (unsigned c = 0; c < 4; c++) {
		const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + 16 * c));
		const __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(b + 16 * c));

		m |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) << (16 * c);
	}
#else
	for (unsigned j = 0; j < 64; j++)
		m |= (uint64_t)(a[j] == b[j]) << j;
#endif
	return m;
}

static inline __attribute__((always_inline)) void
lag_block_wide(struct lag_board *b, const uint8_t *r, size_t n, size_t i0, unsigned len, int hw)
{
	const uint8_t *cur = r + (n - i0);
	const uint64_t live = ~(~0ull >> (len - 1) >> 1);
	uint64_t mm[LAG_D], mw;

	for (unsigned d = 1; d <= LAG_D; d++) {
		mm[d - 1] = match64(cur, cur + d) & live;
		if (d > i0)	/* no lag-d prediction before s[d] */
			mm[d - 1] &= d - i0 < 64 ? ~0ull >> (d - i0) : 0;
	}
	mw = mm[b->winner];
	b->nc = 0;
	for (unsigned d = 1; d <= LAG_D; d++)
		lag_sort(b, d, mm[d - 1], mw, hw);
}

static inline __attribute__((always_inline)) int
lag_wide_body(const uint8_t *s, size_t n, unsigned k, struct est_result *r, int hw_popcount)
{
	const size_t bytes = 64 + n + LAG_D + 64;
	uint8_t *rev = est_zalloc(bytes);
	struct lag_board b;
	struct tally t = { 0, 0, 0 };

	if (!rev)
		return -ENOMEM;
	for (size_t j = 0; j < n; j++)
		rev[64 + j] = s[n - 1 - j];
	memset(&b, 0, sizeof(b));	/* winner: lag 1 */
	for (size_t i0 = 1; i0 < n; i0 += 64) {
		const unsigned len = n - i0 < 64 ? (unsigned)(n - i0) : 64;

		lag_block_wide(&b, rev, n, i0, len, hw_popcount);
		lag_moves(&b, len, &t, hw_popcount);
	}
	est_zfree(rev, bytes);
	est_prediction_bound(t.c, n - 1, t.longest, k, r);
	return 0;
}

/* 128 popcounts a block: x86-64's baseline has no POPCNT instruction, and
 * the portable one took a third of the binary lag's time, so where the CPU
 * has it a copy built for it runs (8M bits: 0.081 -> 0.055 s). */
#ifdef LAG_AVX2
static __attribute__((target("avx2,popcnt"))) int
lag_binary_avx2(const uint8_t *s, size_t n, struct est_result *r)
{
	return lag_binary_body(s, n, r, 2);
}

static __attribute__((target("popcnt"))) int
lag_binary_popcnt(const uint8_t *s, size_t n, struct est_result *r)
{
	return lag_binary_body(s, n, r, 1);
}

static int lag_binary(const uint8_t *s, size_t n, struct est_result *r)
{
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt"))
		return lag_binary_avx2(s, n, r);
	if (__builtin_cpu_supports("popcnt"))
		return lag_binary_popcnt(s, n, r);
	return lag_binary_body(s, n, r, 0);
}

static __attribute__((target("popcnt"))) int
lag_wide_popcnt(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	return lag_wide_body(s, n, k, r, 1);
}

static int lag_wide(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	if (__builtin_cpu_supports("popcnt"))
		return lag_wide_popcnt(s, n, k, r);
	return lag_wide_body(s, n, k, r, 0);
}
#else
static int lag_binary(const uint8_t *s, size_t n, struct est_result *r)
{
	return lag_binary_body(s, n, r, 0);
}

static int lag_wide(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	return lag_wide_body(s, n, k, r, 0);
}
#endif

int est_lag(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	int rc = est_check_literal(s, n, k);

	if (rc < 0)
		return rc;
	if (n < 3)
		return -ENODATA;
	return k == 2 ? lag_binary(s, n, r) : lag_wide(s, n, k, r);
}
