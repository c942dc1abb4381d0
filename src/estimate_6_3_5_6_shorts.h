/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Binary t-tuple/LRS (estimate_6_3_5_6_bits.c): the last depth - 1
 * positions, whose windows run past the end and which the word sort leaves
 * out, counted into the groups of the others (estimate_6_3_5_6_shorts.c).
 * Not a public header.
 */
#ifndef RNGFEED_ESTIMATE_6_3_5_6_SHORTS_H
#define RNGFEED_ESTIMATE_6_3_5_6_SHORTS_H

#include <stddef.h>
#include <stdint.h>

struct tallies;

/* The short positions nm .. nm + ns - 1 (ns < 64: one bit each in a
 * mask), their windows and, for t past TOP_BITS, the words of the sort in
 * the group of each one's top t bits. */
struct shorts {
	size_t ns;
	uint64_t win[64];
	uint32_t ge[64][64];	/* ge[i][t]: words in short position i's group at t */
};

/* Of the short positions in mask, those whose windows' bits at shift
 * (masked by bits) are k. */
uint64_t shorts_in(const struct shorts *sh, uint64_t mask, unsigned k, unsigned shift,
		   unsigned bits);
/* Short position i's group sizes at depths top + 1 .. top + g, where a
 * group at depth top is split into 2^g at top + g that end at end[]
 * (end[k] - end[k - 1] words in group k; k: the one its window falls in). */
void shorts_levels(struct shorts *sh, unsigned i, const uint32_t *end, unsigned k, unsigned g,
		   unsigned top);
/* Short position i, whose window falls in the group x[0..m) at depth
 * base, not split further: its group sizes past base, from the LCPs of its
 * window with those words. */
void shorts_scan(struct shorts *sh, unsigned i, const uint64_t *x, size_t m, unsigned base);
/* Their tuples, once every ge[] is in: for t < depth, into ts from the
 * groups' sizes (start: the 2^TOP_BITS buckets' bounds, for t <= TOP_BITS)
 * and the short positions that share the tuple; n bits in all. */
void shorts_tally(struct tallies *ts, const struct shorts *sh, size_t n, unsigned depth,
		  const uint32_t *start);

#endif
