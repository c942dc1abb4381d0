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

/* The 64 bits from bit i on of the bits packed in w, the first the top
 * bit. */
static inline uint64_t window(const uint64_t *w, size_t i)
{
	unsigned sh = i & 63;
	uint64_t x = w[i >> 6] << sh;

	return sh ? x | (w[(i >> 6) + 1] >> (64 - sh)) : x;
}

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
 * shorter's length; *deep set (and the count cut short) past TIE_DEPTH. */
size_t est_bits_common_bits(const uint64_t *w, size_t n, size_t p, size_t q,
			    int *deep);
/* Suffix p before suffix q (see est_bits_common_bits() for *deep). */
int est_bits_suffix_less(const uint64_t *w, size_t n, size_t p, size_t q,
			 int *deep);
/* Every run of tied words in e[0..m) put in suffix order (pmask: the
 * position's bits; w: the n bits).  0 or -EAGAIN. */
int est_bits_sort_ties(uint64_t *e, size_t m, uint64_t pmask,
		       const uint64_t *w, size_t n);

#endif
