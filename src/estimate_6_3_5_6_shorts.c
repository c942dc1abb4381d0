// SPDX-License-Identifier: GPL-2.0-or-later
/* SP 800-90B §6.3.5 t-tuple and §6.3.6 LRS over binary samples
 * (estimate_6_3_5_6_bits.c): the last depth - 1 positions.  Each is a
 * t-tuple for t <= n - i only, so the word sort leaves them out and they
 * are counted into its groups here.  Below TOP_BITS, a short position's
 * group sizes are read off the passes that split the groups its window
 * falls in (shorts_levels()), and counted by the LCP of each word with its
 * window only in the group where it ends, one not split further
 * (shorts_scan()).  Scanning each short position's whole bucket instead
 * was 6 % of the t-tuple/LRS on 8M first-order Markov bits, whose last 40
 * bits fell in the bucket of eleven ones, 430,000 words; sorting the
 * buckets to look the groups up, 3 % on biased bits. */
#include "rngfeed/estimate_tuple.h"
#include "estimate_6_3_5_6_scatter.h"
#include "estimate_6_3_5_6_shorts.h"

uint64_t shorts_in(const struct shorts *sh, uint64_t mask, unsigned k, unsigned shift,
		   unsigned bits)
{
	uint64_t in = 0;

	for (; mask; mask &= mask - 1) {
		const unsigned i = (unsigned)__builtin_ctzll(mask);

		in |= (uint64_t)(((unsigned)(sh->win[i] >> shift) & bits) == k) << i;
	}
	return in;
}

void shorts_levels(struct shorts *sh, unsigned i, const uint32_t *end, unsigned k, unsigned g,
		   unsigned top)
{
	for (unsigned m = 1; m <= g; m++) {
		/* the groups at top + g that share the window's top + m bits */
		const unsigned k0 = (k >> (g - m)) << (g - m), k1 = k0 + (1u << (g - m)) - 1;

		sh->ge[i][top + m] = end[k1] - (k0 ? end[k0 - 1] : 0);
	}
}

void shorts_scan(struct shorts *sh, unsigned i, const uint64_t *x, size_t m, unsigned base)
{
	const uint64_t wi = sh->win[i];
	uint32_t lcp[64] = { 0 }, ge = 0;

	/* past the words' depth, the position bits: counted, but no t that
	 * deep is read */
	for (size_t r = 0; r < m; r++)
		lcp[__builtin_clzll((x[r] ^ wi) | 1)]++;
	for (unsigned t = 63; t > base; t--) {
		ge += lcp[t];
		sh->ge[i][t] = ge;
	}
}

void shorts_tally(struct tallies *ts, const struct shorts *sh, size_t n, unsigned depth,
		  const uint32_t *start)
{
	const uint64_t *win = sh->win;
	const size_t nm = n - sh->ns;

	for (unsigned t = 1; t < depth; t++) {
		const size_t valid = n - t + 1 - nm;	/* i < valid: n - i >= t */

		for (size_t i = 0; i < valid; i++) {
			const uint64_t key = win[i] >> (64 - t);
			uint64_t c, k = 0;
			size_t j;

			for (j = 0; j < i && win[j] >> (64 - t) != key; j++)
				;
			if (j < i)	/* counted with j */
				continue;
			for (j = i; j < valid; j++)
				k += win[j] >> (64 - t) == key;
			if (t <= TOP_BITS)
				c = start[(key + 1) << (TOP_BITS - t)] - start[key << (TOP_BITS - t)];
			else
				c = sh->ge[i][t];
			c += k;
			tally_depth(ts, (int32_t)t, c * (c - 1) / 2 - (c - k) * (c - k - 1) / 2, c);
		}
	}
}
