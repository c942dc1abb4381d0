// SPDX-License-Identifier: GPL-2.0-or-later
/* SP 800-90B §6.3.7 MultiMCW prediction estimate.  The four predictors
 * (this, §6.3.8 lag, §6.3.9 MultiMMC, §6.3.10 LZ78Y) each walk the samples
 * once, predicting each from those before it, count the correct predictions
 * C of N and the longest run of correct ones, and hand them to
 * est_prediction_bound() (estimate_common.c).  Tie rules are 90B's and
 * those of NIST's reference tool, so that the counts agree exactly:
 *   - a sub-predictor's score that reaches the winner's (>=) takes over;
 *   - MCW: most common in the window, ties to the most recent symbol;
 *   - MMC/LZ78Y: most frequent follower, ties to the larger symbol. */
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

/* ================= §6.3.7 MultiMCW ================= */
#define MCW_N 4
static const uint32_t mcw_w[MCW_N] = { 63, 255, 1023, 4095 };

/* Binary samples: every window is odd, so its most common value is the one
 * with more than half of it (no ties to break), a running count of ones.
 * 64 steps at a time: first each window's right predictions in the block
 * (a bit per step), then the scoreboard as in lag_binary(), stepping only
 * the windows that can reach the top score within the block. */
#ifdef __SSE2__
/* One window's right predictions at the 64 steps from i0 (i0 >= w): 16
 * steps at a time, the count of ones before each step a prefix sum of
 * s[i] - s[i - w] in byte lanes, less the count o before the 16 (it moves
 * by at most 16 in them), against ones > w / 2, that is a change above
 * w / 2 - o, clamped to what 16 steps can reach.  Bytes, not 16-bit lanes
 * holding the whole count: twice the steps an instruction (10^6 bits:
 * MultiMCW 2.2 -> 1.7 ms; 8M bits: 17 -> 12 ms).  *ones: the count before
 * step i0, then before i0 + 64. */
static uint64_t mcw_block64(const uint8_t *s, size_t i0, uint32_t w, uint32_t *ones)
{
	const __m128i one = _mm_set1_epi8(1);
	uint64_t m = 0;
	int o = (int)*ones;

	for (unsigned k = 0; k < 4; k++) {
		const __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i0 + 16 * k));
		const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + i0 + 16 * k - w));
		const __m128i d = _mm_sub_epi8(a, b);
		__m128i p = _mm_add_epi8(d, _mm_slli_si128(d, 1)), ok;
		int t = (int)(w >> 1) - o;

		p = _mm_add_epi8(p, _mm_slli_si128(p, 2));
		p = _mm_add_epi8(p, _mm_slli_si128(p, 4));
		p = _mm_add_epi8(p, _mm_slli_si128(p, 8));
		/* the changes before each step lie in -15..15 */
		t = t < -16 ? -16 : t > 16 ? 16 : t;
		ok = _mm_cmpgt_epi8(_mm_sub_epi8(p, d), _mm_set1_epi8((char)t));
		/* right when the prediction is s[i] */
		ok = _mm_cmpeq_epi8(_mm_and_si128(ok, one), a);
		m |= (uint64_t)(uint16_t)_mm_movemask_epi8(ok) << (16 * k);
		o += (int8_t)(_mm_extract_epi16(p, 7) >> 8);
	}
	*ones = (uint32_t)o;
	return m;
}
#endif

#if defined(__x86_64__) && defined(__GNUC__) && defined(__SSE2__)
#define MCW_AVX2
/* mcw_block64() 32 steps at a time: AVX2's byte shifts stay within each
 * 16-byte half, so the upper half's prefix sums get the lower half's
 * total added (10^6 bits: MultiMCW 1.55 -> 1.2 ms; 8M: 11.3 -> 8.6 ms). */
static __attribute__((target("avx2"))) uint64_t
mcw_block64_avx2(const uint8_t *s, size_t i0, uint32_t w, uint32_t *ones)
{
	const __m256i one = _mm256_set1_epi8(1), last = _mm256_set1_epi8(15);
	uint64_t m = 0;
	int o = (int)*ones;

	for (unsigned k = 0; k < 2; k++) {
		const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(s + i0 + 32 * k));
		const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + i0 + 32 * k - w));
		const __m256i d = _mm256_sub_epi8(a, b);
		__m256i p = _mm256_add_epi8(d, _mm256_slli_si256(d, 1)), lo, ok;
		int t = (int)(w >> 1) - o;

		p = _mm256_add_epi8(p, _mm256_slli_si256(p, 2));
		p = _mm256_add_epi8(p, _mm256_slli_si256(p, 4));
		p = _mm256_add_epi8(p, _mm256_slli_si256(p, 8));
		/* the lower half's last sum into every byte of the upper */
		lo = _mm256_shuffle_epi8(p, last);
		p = _mm256_add_epi8(p, _mm256_permute2x128_si256(lo, lo, 0x08));
		/* the changes before each step lie in -31..31 */
		t = t < -32 ? -32 : t > 32 ? 32 : t;
		ok = _mm256_cmpgt_epi8(_mm256_sub_epi8(p, d), _mm256_set1_epi8((char)t));
		ok = _mm256_cmpeq_epi8(_mm256_and_si256(ok, one), a);
		m |= (uint64_t)(uint32_t)_mm256_movemask_epi8(ok) << (32 * k);
		o += (int8_t)_mm256_extract_epi8(p, 31);
	}
	*ones = (uint32_t)o;
	return m;
}
#endif

/* The block's len steps, one at a time, for the nc windows in cand.
 * All four are stepped, the others' words cleared (never right, they
 * neither score nor take over): a loop of fixed length over scores kept in
 * registers, not through cand[] (10^6 bits: MultiMCW 1.65 -> 1.55 ms). */
static void mcw_step(const uint64_t okw[MCW_N], const unsigned cand[MCW_N], unsigned nc,
		     unsigned len, uint32_t score[MCW_N], unsigned *winner, uint32_t *high,
		     struct tally *t)
{
	uint64_t mk[MCW_N] = { 0 };
	uint32_t sc[MCW_N], hi = *high;
	unsigned win = *winner;

	for (unsigned c = 0; c < nc; c++)
		mk[cand[c]] = okw[cand[c]];
	for (unsigned j = 0; j < MCW_N; j++)
		sc[j] = score[j];
	for (unsigned st = 0; st < len; st++) {
		tally(t, (int)((okw[win] >> st) & 1));
		for (unsigned j = 0; j < MCW_N; j++) {
			const uint32_t inc = (uint32_t)(mk[j] >> st) & 1, v = sc[j] + inc;
			const int take = inc && v >= hi;

			sc[j] = v;
			win = take ? j : win;
			hi = take ? v : hi;
		}
	}
	for (unsigned j = 0; j < MCW_N; j++)
		score[j] = sc[j];
	*winner = win;
	*high = hi;
}

static inline __attribute__((always_inline)) void
mcw_binary_body(const uint8_t *s, size_t n, struct est_result *r, int hw)
{
	uint32_t ones[MCW_N] = { 0 }, score[MCW_N] = { 0 }, high = 0;	/* high: score[winner] */
	struct tally t = { 0, 0, 0 };
	unsigned winner = 0;

	for (unsigned j = 0; j < MCW_N; j++)
		for (uint32_t i = 0; i < mcw_w[j]; i++)
			ones[j] += s[i];
	for (size_t i0 = mcw_w[0]; i0 < n; i0 += 64) {
		const unsigned len = n - i0 < 64 ? (unsigned)(n - i0) : 64;
		uint64_t okw[MCW_N];	/* bit st: window j right at step st */
		unsigned cand[MCW_N] = { 0 }, nc = 0;

		for (unsigned j = 0; j < MCW_N; j++) {
			const uint32_t w = mcw_w[j];
			/* no prediction before the window is full */
			const unsigned st0 = i0 >= w ? 0 : (w - i0 < len ? (unsigned)(w - i0) : len);
			uint32_t o = ones[j];
			uint64_t m = 0;

#ifdef __SSE2__
			if (len == 64 && i0 >= w) {
#ifdef MCW_AVX2
				if (hw == 2) {
					okw[j] = mcw_block64_avx2(s, i0, w, &ones[j]);
					continue;
				}
#endif
				okw[j] = mcw_block64(s, i0, w, &ones[j]);
				continue;
			}
#endif
			for (unsigned st = st0; st < len; st++) {
				const size_t i = i0 + st;

				m |= (uint64_t)((2 * o > w) == s[i]) << st;
				o += (uint32_t)s[i] - s[i - w];
			}
			ones[j] = o;
			okw[j] = m;
		}
		for (unsigned j = 0; j < MCW_N; j++) {
			/* can_take() on the steps it is right and the winner
			 * is not */
			if (can_take(score[j], popcount_hw(okw[j] & ~okw[winner], hw), high))
				cand[nc++] = j;
			else
				score[j] += popcount_hw(okw[j], hw);
		}
		if (nc == 1) {
			/* as in lag_binary_body() */
			score[winner] += popcount_hw(okw[winner], hw);
			high = score[winner];
			tally_lsb(&t, okw[winner], len);
			continue;
		}
		mcw_step(okw, cand, nc, len, score, &winner, &high, &t);
	}
	est_prediction_bound(t.c, n - mcw_w[0], t.longest, 2, r);
}

/* Nine popcounts a block: with the POPCNT instruction where the CPU has
 * it, as in lag_binary() (10^6 bits: 1.8 -> 1.6 ms; 8M: 12.4 -> 11.2 ms). */
#ifdef MCW_AVX2
static __attribute__((target("avx2,popcnt"))) void
mcw_binary_avx2(const uint8_t *s, size_t n, struct est_result *r)
{
	mcw_binary_body(s, n, r, 2);
}

static __attribute__((target("popcnt"))) void
mcw_binary_popcnt(const uint8_t *s, size_t n, struct est_result *r)
{
	mcw_binary_body(s, n, r, 1);
}

static void mcw_binary(const uint8_t *s, size_t n, struct est_result *r)
{
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt"))
		mcw_binary_avx2(s, n, r);
	else if (__builtin_cpu_supports("popcnt"))
		mcw_binary_popcnt(s, n, r);
	else
		mcw_binary_body(s, n, r, 0);
}
#else
static void mcw_binary(const uint8_t *s, size_t n, struct est_result *r)
{
	mcw_binary_body(s, n, r, 0);
}
#endif

int est_multi_mcw(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	uint32_t cnt[MCW_N][256], last[MCW_N][256], best[MCW_N];
	/* how many symbols have each count (a count is at most the window) */
	_Static_assert(4095 <= UINT16_MAX, "window counts");
	uint16_t have[MCW_N][4096];
	uint8_t freq[MCW_N] = { 0 };
	uint64_t score[MCW_N] = { 0 };
	struct tally t = { 0, 0, 0 };
	unsigned winner = 0;
	int rc = est_check_literal(s, n, k);

	if (rc < 0)
		return rc;
	if (n <= mcw_w[MCW_N - 1])
		return -ENODATA;
	if (k == 2) {
		mcw_binary(s, n, r);
		return 0;
	}
	memset(cnt, 0, sizeof(cnt));
	memset(last, 0, sizeof(last));
	memset(best, 0, sizeof(best));
	memset(have, 0, sizeof(have));
	for (unsigned j = 0; j < MCW_N; j++)
		have[j][0] = 256;
	/* Window j holds s[i - w_j .. i - 1]; fill each with its first w_j. */
	for (unsigned j = 0; j < MCW_N; j++) {
		for (uint32_t i = 0; i < mcw_w[j]; i++) {
			uint8_t v = s[i];

			last[j][v] = i;
			have[j][cnt[j][v]]--;
			have[j][cnt[j][v] + 1]++;
			if (++cnt[j][v] >= best[j]) {
				best[j] = cnt[j][v];
				freq[j] = v;
			}
		}
	}
	for (size_t i = mcw_w[0]; i < n; i++) {
		uint8_t v = s[i];

		tally(&t, freq[winner] == v);
		for (unsigned j = 0; j < MCW_N; j++)
			if (i >= mcw_w[j] && freq[j] == v && ++score[j] >= score[winner])
				winner = j;
		for (unsigned j = 0; j < MCW_N; j++) {
			uint8_t old;

			if (i < mcw_w[j])
				continue;
			old = s[i - mcw_w[j]];
			have[j][cnt[j][old]]--;
			have[j][--cnt[j][old]]++;
			have[j][cnt[j][v]]--;
			have[j][++cnt[j][v]]++;
			last[j][v] = (uint32_t)i;
			if (old != freq[j] || cnt[j][v] >= best[j]) {
				/* v, the most recent, reached the top */
				if (cnt[j][v] >= best[j]) {
					best[j] = cnt[j][v];
					freq[j] = v;
				}
			} else if (cnt[j][v] == best[j] - 1 && !have[j][best[j]]) {
				/* the most common value lost one and no other
				 * has its count: v, the most recent, ties it */
				best[j]--;
				freq[j] = v;
			} else if (have[j][best[j] - 1] == 1 && !have[j][best[j]]) {
				/* it lost one and is still alone on top (the
				 * common case where one value dominates: no
				 * scan) */
				best[j]--;
			} else {
				/* The most common value lost one: find the new
				 * one (highest count, then most recent). */
				uint32_t bc = 0, bp = 0;

				unsigned f = freq[j];

				/* Without branches: which symbol takes over is
				 * a coin toss, and how GCC laid the branches out
				 * once made this loop twice as slow. */
				for (unsigned x = 0; x < k; x++) {
					const uint32_t c = cnt[j][x], l = last[j][x];
					const int take = c > bc || (c == bc && c && l >= bp);

					bc = take ? c : bc;
					bp = take ? l : bp;
					f = take ? x : f;
				}
				freq[j] = (uint8_t)f;
				best[j] = bc;
			}
		}
	}
	est_prediction_bound(t.c, n - mcw_w[0], t.longest, k, r);
	return 0;
}
