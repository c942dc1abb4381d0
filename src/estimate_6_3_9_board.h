/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SP 800-90B §6.3.9 MultiMMC's scoreboard over binary samples, for the
 * binary pass (estimate_6_3_9_10_binary.c), which steps it inside its own
 * loop: static inline.  Not a public header.
 *
 * The highest score is always the winner's: a length that reaches it takes
 * over.  So the lengths that take over at a step are those right at it
 * whose score is then the highest of all (the longest of them wins): 90B's
 * loop over the lengths in ascending order, >= taking over, gives the same.
 * It is kept a run of BOARD_RUN steps at a time: board_begin(), then per
 * step board_step() (played at once) or board_keep() (kept, and played by
 * board_end()), then board_end().
 */
#ifndef RNGFEED_ESTIMATE_6_3_9_BOARD_H
#define RNGFEED_ESTIMATE_6_3_9_BOARD_H

#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "rngfeed/estimate_predict.h"

#define BOARD_RUN 64

struct board {
	uint32_t score[CTX_MAX], high;	/* high: score[winner] */
	unsigned winner;
	struct tally t;			/* MultiMMC's: the winner's outcomes */
	int keep;			/* the next run's steps are to be kept */
	unsigned probe;			/* runs until one is kept again */
};

#ifdef __SSE2__
/* In SSE2 registers, at each step: each length's score a 16-bit lane
 * relative to the highest at the run's start.  A length further than
 * BOARD_FAR below it cannot reach it within a run and is held at
 * -BOARD_FAR (its gain in the run is still the lane's).  The highest of
 * the lanes is taken afresh at each step rather than carried from the
 * step before.  Where the run starts with no length but the winner within
 * BOARD_RUN of the highest ("solo"), nobody can take over in it and only
 * the lanes are kept.  Measured (10^6 biased / uniform bits, 8 * 10^6
 * uniform bits as an 8-bit file's bitstring): stepping, after every 64
 * steps, each length that might take over within them, one at a time (on
 * i.i.d. data every length is about as good, so most were such
 * candidates): 35.3 / 37.4 / 294 ms for the whole pass; these sets at
 * every step: 33.2 / 35.4 / 269 ms.
 *
 * Uniform steps: every length's context found, and every length right,
 * or every one wrong.  All scores move together there, so the lanes are
 * left alone (the steps right are added to every score at the run's end,
 * ups), the tally takes the step's outcome whoever wins, and a step right
 * hands the lead to the longest length at the highest score (top_len).
 * On first-order Markov bits 99 % of the steps are uniform (every length
 * predicts "the same again"), on an 8-bit file's bitstring 3 to 72 %.
 * Such steps are found only in a run's kept steps: a test and a branch at
 * each step cost more than they saved (8M Markov bits 118 -> 105 ms for
 * the whole pass, but an 8-bit file of 4-bit samples 122 -> 162, with the
 * fast path switched off even), and a run kept and played at its end on
 * data without them was 6 to 24 % slower than one played as it goes
 * (presumably as the board's work then no longer overlaps the counters'
 * loads; not measured apart).  So a run is kept
 * while the last one kept had 3/4 of its steps uniform, and after one
 * that had not, every 17th run is. */
#define BOARD_FAR 1024
#define BOARD_PROBE 16
struct board_run {
	__m128i lo, hi;		/* lengths 1..8, 9..16 */
	int solo;		/* no other length can take over in the run */
	unsigned top_len;	/* the longest length at the highest score */
	uint32_t ups;		/* uniform steps right, not in the lanes */
	int16_t d0[CTX_MAX];	/* the lanes at the start */
	uint32_t kept[BOARD_RUN];	/* the steps kept: ok | f << 16 */
};

static inline void board_begin(struct board_run *r, const struct board *b)
{
	unsigned near = 0;

	r->top_len = 0;
	for (unsigned sb = 0; sb < CTX_MAX; sb++) {
		const uint32_t gap = b->high - b->score[sb];

		r->d0[sb] = (int16_t)(gap > BOARD_FAR ? -BOARD_FAR : -(int)gap);
		near += gap <= BOARD_RUN;
		r->top_len = gap ? r->top_len : sb;
	}
	r->solo = near == 1;
	r->ups = 0;
	r->lo = _mm_loadu_si128((const __m128i *)(const void *)r->d0);
	r->hi = _mm_loadu_si128((const __m128i *)(const void *)(r->d0 + 8));
}

/* ok: the lengths right at this step (and whose context was found), f:
 * those whose context was found; track: keep top_len. */
static inline __attribute__((always_inline)) void
board_play(struct board_run *r, struct board *b, unsigned ok, unsigned f, const int track)
{
	const __m128i bit_lo = _mm_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128);
	const __m128i bit_hi = _mm_setr_epi16(256, 512, 1024, 2048, 4096, 8192, 16384, (short)0x8000);
	const __m128i x = _mm_set1_epi16((short)ok);
	const __m128i ol = _mm_cmpeq_epi16(_mm_and_si128(x, bit_lo), bit_lo);
	const __m128i oh = _mm_cmpeq_epi16(_mm_and_si128(x, bit_hi), bit_hi);
	__m128i top, at_lo, at_hi;
	unsigned takers;

	r->lo = _mm_sub_epi16(r->lo, ol);	/* a right lane is -1 */
	r->hi = _mm_sub_epi16(r->hi, oh);
	if ((f >> b->winner) & 1)
		tally(&b->t, (ok >> b->winner) & 1);
	if (r->solo)
		return;	/* top_len: the winner, all through the run */
	/* the highest, in every lane */
	top = _mm_max_epi16(r->lo, r->hi);
	top = _mm_max_epi16(top, _mm_shuffle_epi32(top, _MM_SHUFFLE(1, 0, 3, 2)));
	top = _mm_max_epi16(top, _mm_shuffle_epi32(top, _MM_SHUFFLE(2, 3, 0, 1)));
	top = _mm_max_epi16(top, _mm_shufflehi_epi16(_mm_shufflelo_epi16(top, _MM_SHUFFLE(2, 3, 0, 1)),
						     _MM_SHUFFLE(2, 3, 0, 1)));
	at_lo = _mm_cmpeq_epi16(r->lo, top);
	at_hi = _mm_cmpeq_epi16(r->hi, top);
	takers = (unsigned)_mm_movemask_epi8(_mm_packs_epi16(_mm_and_si128(ol, at_lo),
							    _mm_and_si128(oh, at_hi)));
	{
		/* The longest taker, or the winner as it was: without a branch,
		 * which on i.i.d. bits is a coin toss (written as a choice,
		 * GCC made one unless it had lzcnt; 10^6 biased bits 29.6 ->
		 * 26.6 ms, uniform 28.6 -> 26.8). */
		const unsigned keep = (unsigned)(takers != 0) - 1u;	/* all ones: none */

		b->winner = ((31u - (unsigned)__builtin_clz(takers | 1u)) & ~keep) | (b->winner & keep);
	}
	if (track)
		r->top_len = 31u - (unsigned)__builtin_clz((unsigned)_mm_movemask_epi8(_mm_packs_epi16(at_lo, at_hi)) | 1u);
}

/* Step st of the run, played at once. */
static inline __attribute__((always_inline)) void
board_step(struct board_run *r, struct board *b, unsigned st, unsigned ok, unsigned f)
{
	(void)st;
	board_play(r, b, ok, f, 0);
}

/* Step st of the run, kept for board_end(). */
static inline __attribute__((always_inline)) void
board_keep(struct board_run *r, unsigned st, unsigned ok, unsigned f)
{
	r->kept[st] = ok | f << 16;
}

/* The len steps kept, played: the uniform ones a stretch at a time, the
 * others one by one.  Whether most were uniform. */
static inline int board_replay(struct board_run *r, struct board *b, unsigned len)
{
	/* found everywhere, and ok 0 or 0xffff: four steps at a time (one by
	 * one, this was a third of the replay's time on Markov bits) */
	const __m128i all_wrong = _mm_set1_epi32((int)0xffff0000u), all_right = _mm_set1_epi32(-1);
	uint64_t uniform = 0, right = 0, odd;
	unsigned st = 0;

	for (unsigned k = 0; k < len; k += 4) {
		const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(r->kept + k));
		const __m128i w = _mm_cmpeq_epi32(x, all_wrong), g = _mm_cmpeq_epi32(x, all_right);

		uniform |= (uint64_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_or_si128(w, g))) << k;
		right |= (uint64_t)_mm_movemask_ps(_mm_castsi128_ps(g)) << k;
	}
	uniform &= ~0ull >> (64 - len);	/* kept[len..] are not this run's */
	right &= uniform;
	if (popcount64(uniform) < len * 3 / 4) {
		for (unsigned k = 0; k < len; k++)
			board_play(r, b, r->kept[k] & 0xffff, r->kept[k] >> 16, 0);
		return 0;
	}
	odd = ~uniform & (~0ull >> (64 - len));
	for (;;) {
		const unsigned end = odd ? (unsigned)__builtin_ctzll(odd) : len;

		if (end > st) {
			const unsigned k = end - st;
			const uint64_t seg = (right >> st) & (~0ull >> (64 - k));

			if (seg) {
				b->winner = r->top_len;
				r->ups += (uint32_t)popcount64(seg);
			}
			tally_lsb(&b->t, seg, k);
		}
		if (end >= len)
			return 1;
		board_play(r, b, r->kept[end] & 0xffff, r->kept[end] >> 16, !r->solo);
		odd &= odd - 1;
		st = end + 1;
	}
}

/* The run of len steps ends; kept: its steps were kept.  Never inlined:
 * in the pass's loop, its replay cost the steps their registers (8M
 * Markov bits 100 -> 121 ms). */
static __attribute__((noinline)) void board_end(struct board_run *r, struct board *b, unsigned len,
						int kept)
{
	int16_t d1[CTX_MAX];
	int top = -BOARD_FAR;

	if (kept) {
		b->keep = board_replay(r, b, len);
		b->probe = b->keep ? 0 : BOARD_PROBE;
	} else if (b->probe && --b->probe == 0) {
		b->keep = 1;
	}
	_mm_storeu_si128((__m128i *)(void *)d1, r->lo);
	_mm_storeu_si128((__m128i *)(void *)(d1 + 8), r->hi);
	for (unsigned sb = 0; sb < CTX_MAX; sb++) {
		b->score[sb] += (uint32_t)(d1[sb] - r->d0[sb]) + r->ups;
		top = d1[sb] > top ? d1[sb] : top;
	}
	b->high += (uint32_t)top + r->ups;
}
#else
/* Bits 0..7 of x as bytes 0..7, each 0 or 1. */
static inline uint64_t spread8(unsigned x)
{
	const uint64_t v = ((uint64_t)(x & 0xffu) * 0x0101010101010101ull) & 0x8040201008040201ull;

	return ((v + 0x7f7f7f7f7f7f7f7full) & 0x8080808080808080ull) >> 7;
}

/* Without SSE2: every run's steps are kept, then how often each length was
 * right in the run (in byte lanes: a run is 64 steps) tells which lengths
 * can reach the highest score within it; only those are stepped through
 * it, the others just gain their count. */
struct board_run {
	uint16_t okm[BOARD_RUN], fm[BOARD_RUN];
};

static inline void board_begin(struct board_run *r, const struct board *b)
{
	(void)r;
	(void)b;
}

static inline void board_keep(struct board_run *r, unsigned st, unsigned ok, unsigned f)
{
	r->okm[st] = (uint16_t)ok;
	r->fm[st] = (uint16_t)f;
}

static inline void board_step(struct board_run *r, struct board *b, unsigned st, unsigned ok,
			      unsigned f)
{
	(void)b;
	board_keep(r, st, ok, f);
}

static void board_end(struct board_run *r, struct board *b, unsigned len, int kept)
{
	uint64_t cnt_lo = 0, cnt_hi = 0;	/* byte sb: right in the run */
	uint8_t cand[CTX_MAX] = { 0 };
	unsigned nc = 0;

	(void)kept;
	for (unsigned st = 0; st < len; st++) {
		cnt_lo += spread8(r->okm[st]);
		cnt_hi += spread8((unsigned)r->okm[st] >> 8);
	}
	for (unsigned sb = 0; sb < CTX_MAX; sb++) {
		const uint32_t up = (uint32_t)((sb < 8 ? cnt_lo >> (8 * sb) : cnt_hi >> (8 * (sb - 8))) & 0xff);

		if (b->score[sb] + up >= b->high)
			cand[nc++] = (uint8_t)sb;
		else
			b->score[sb] += up;
	}
	for (unsigned st = 0; st < len; st++) {
		const unsigned cur = b->winner, ok = r->okm[st];

		if ((r->fm[st] >> cur) & 1)
			tally(&b->t, (ok >> cur) & 1);
		/* Ascending lengths, >= takes over, as 90B's loop. */
		for (unsigned c = 0; c < nc; c++) {
			const unsigned sb = cand[c];
			const uint32_t inc = (ok >> sb) & 1, v = b->score[sb] + inc;
			const int take = inc && v >= b->high;

			b->score[sb] = v;
			b->winner = take ? sb : b->winner;
			b->high = take ? v : b->high;
		}
	}
}
#endif

#endif
