/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Binary t-tuple/LRS (estimate_6_3_5_6_bits.c): the positions whose words
 * tie, compared on bit by bit (estimate_6_3_5_6_ties.c).  Not a public
 * header.
 */
#ifndef RNGFEED_ESTIMATE_6_3_5_6_TIES_H
#define RNGFEED_ESTIMATE_6_3_5_6_TIES_H

#include <stddef.h>
#include <stdint.h>

#include "rngfeed/estimate_common.h"

/* ---- positions whose words tie ----
 * (They share their first `depth` bits.)  The sort leaves them in a run,
 * by position; each run is put in suffix order by comparing on, and their
 * LCP is counted the same way (a group of more than TIE_MAX by a merge
 * sort, merge_words()).  Deep ties (a run of equal bits longer than
 * depth - 1 + TIE_MAX, a repeated block) go to the suffix array instead:
 * TIE_DEPTH bits deep. */
#define TIE_MAX 64
#define TIE_DEPTH 4096

/* Bits the suffixes at p and q have in common (p != q), at most the
 * shorter's length, a window at a time (each taken from *budget); past cap
 * bits (a multiple of 64) the count stops there and *capped is set. */
static inline size_t bits_common(const uint64_t *w, size_t n, size_t p, size_t q,
				 size_t cap, int *capped, int64_t *budget)
{
	const size_t lim = n - (p > q ? p : q);
	size_t l = 0;

	while (l < lim) {
		const uint64_t x = est_window(w, p + l) ^ est_window(w, q + l);

		--*budget;
		if (x) {
			l += (size_t)__builtin_clzll(x);
			break;
		}
		l += 64;
		if (l >= cap) {
			*capped = 1;
			break;
		}
	}
	return l < lim ? l : lim;
}

/* Suffix p before suffix q: at the first bit that differs, or the shorter
 * (the later one) first when one is a prefix of the other (cap, capped,
 * budget: bits_common()'s). */
static inline int bits_suffix_less(const uint64_t *w, size_t n, size_t p, size_t q,
				   size_t cap, int *capped, int64_t *budget)
{
	const size_t l = bits_common(w, n, p, q, cap, capped, budget);

	if (l >= n - (p > q ? p : q))
		return p > q;
	return (est_window(w, p + l) >> 63) < (est_window(w, q + l) >> 63);
}

/* bits_common() and bits_suffix_less() to TIE_DEPTH, past which *deep is
 * set. */
size_t est_bits_common_bits(const uint64_t *w, size_t n, size_t p, size_t q,
			    int *deep);
int est_bits_suffix_less(const uint64_t *w, size_t n, size_t p, size_t q,
			 int *deep);
/* Every run of tied words in e[0..m) put in suffix order (pmask: the
 * position's bits; w: the n bits).  0 or -EAGAIN. */
int est_bits_sort_ties(uint64_t *e, size_t m, uint64_t pmask,
		       const uint64_t *w, size_t n);

#endif
