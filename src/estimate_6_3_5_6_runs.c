// SPDX-License-Identifier: GPL-2.0-or-later
/* SP 800-90B §6.3.5 t-tuple and §6.3.6 LRS over binary samples
 * (estimate_6_3_5_6_bits.c): what the bits say before the word sort. */
#include <errno.h>
#include <stdlib.h>

#include "rngfeed/estimate_tuple.h"
#include "estimate_6_3_5_6_runs.h"
#include "estimate_6_3_5_6_ties.h"

/* Every run of equal bits by its length and bit, in one pass over the
 * places where a bit differs from the next (bit 63 - b of t: bit 64k + b
 * does).  The all-zero t-tuple occurs sum over runs of zeros of length
 * L >= t of (L - t + 1) times (the all-one one likewise); where one of
 * them occurs TUPLE_MIN_COUNT times or more, Q[t] >= TUPLE_MIN_COUNT and
 * u > t.  (8M first-order Markov bits with P(stay) = 0.8: u >= 58, which
 * is u; the words hold 41 bits.) */
void bits_runs(const uint64_t *w, size_t n, struct bits_runs *r)
{
	uint32_t runs[2][RUN_CAP + 1] = { { 0 } };
	const size_t words = (n + 63) / 64;
	uint64_t longer[2] = { 0, 0 }, count[2] = { 0, 0 };
	size_t from = 0;	/* where the current run started */

	for (size_t k = 0; k < words; k++) {
		uint64_t t = w[k] ^ (w[k] << 1 | (k + 1 < words ? w[k + 1] >> 63 : 0));
		const size_t marks = n - 1 - 64 * k;	/* bit n - 1 has no next */

		if (marks < 64)
			t &= marks ? ~(~0ull >> marks) : 0;
		for (; t; t &= ~0ull >> 1 >> __builtin_clzll(t)) {
			const size_t end = 64 * k + (size_t)__builtin_clzll(t), l = end - from + 1;

			runs[(w[k] >> (63 - (end & 63))) & 1][l < RUN_CAP ? l : RUN_CAP]++;
			from = end + 1;
		}
	}
	runs[(w[(n - 1) >> 6] >> (63 - ((n - 1) & 63))) & 1][n - from < RUN_CAP ? n - from : RUN_CAP]++;
	r->longest = 0;
	r->u_bound = 1;
	for (unsigned t = RUN_CAP; t >= 1; t--)
		for (unsigned b = 0; b < 2; b++) {
			longer[b] += runs[b][t];	/* runs of t or more */
			count[b] += longer[b];		/* all-b t-tuples */
			if (longer[b] && !r->longest)
				r->longest = t;
			if (count[b] >= TUPLE_MIN_COUNT && r->u_bound == 1)
				r->u_bound = t + 1;
		}
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Whether the bits repeat so much that words tie everywhere: 8,192
 * windows spread over them (an odd distance apart), and more than one in
 * eight the same as another.  The low bytes of real clock deltas, 8M bits
 * of them, have 7,700 such, a word-by-word sort of them takes 5 times as
 * long as the suffix array, and found out only after most of it; random,
 * biased and first-order Markov bits have a handful, a jitterentropy-like
 * clock source's a few hundred (where the words are twice as fast as the
 * suffix array). */
#define SPOT_CHECKS 8192
int bits_repetitive(const uint64_t *w, size_t n, unsigned depth)
{
	uint64_t *x;
	size_t step, same = 0;

	if (n < (size_t)64 * SPOT_CHECKS)
		return 0;
	x = malloc(SPOT_CHECKS * sizeof(*x));
	if (!x)
		return -ENOMEM;
	/* odd, and rounded down: the last window ends inside the n bits */
	step = (n - 64) / SPOT_CHECKS;
	step -= !(step & 1);
	for (size_t k = 0; k < SPOT_CHECKS; k++)
		x[k] = est_window(w, k * step) >> (64 - depth);
	qsort(x, SPOT_CHECKS, sizeof(*x), cmp_u64);
	for (size_t k = 1; k < SPOT_CHECKS; k++)
		same += x[k] == x[k - 1];
	free(x);
	return same > SPOT_CHECKS / 8;
}
