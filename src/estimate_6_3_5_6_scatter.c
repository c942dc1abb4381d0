// SPDX-License-Identifier: GPL-2.0-or-later
/* SP 800-90B §6.3.5 t-tuple and §6.3.6 LRS over binary samples
 * (estimate_6_3_5_6_bits.c): the positions' words put in their buckets,
 * all at once or a slab of classes at a time. */
#include "rngfeed/estimate_common.h"
#include "estimate_6_3_5_6_scatter.h"

/* The top TOP_BITS bits of the windows at i < nm, counted for the even
 * and the odd positions apart in c0 and c1 (see split_words()); windows
 * 64 at a time from two words (est_window() for each was 1 in 6 instructions
 * of the whole estimate). */
void bits_count_buckets(const uint64_t *w, size_t nm, uint32_t *c0, uint32_t *c1)
{
	for (size_t k = 0; 64 * k < nm; k++) {
		const uint64_t a = w[k], b = w[k + 1] >> 1;
		const unsigned end = nm - 64 * k < 64 ? (unsigned)(nm - 64 * k) : 64;
		unsigned sh = 0;

		for (; sh + 1 < end; sh += 2) {
			c0[est_window_at(a, b, sh) >> (64 - TOP_BITS)]++;
			c1[est_window_at(a, b, sh + 1) >> (64 - TOP_BITS)]++;
		}
		if (sh < end)
			c0[est_window_at(a, b, sh) >> (64 - TOP_BITS)]++;
	}
}

/* The words of the positions i < nm into their buckets' next places in e
 * (next0 for the even positions, next1 for the odd ones). */
void bits_scatter_buckets(const uint64_t *w, uint64_t pmask, size_t nm, uint32_t *next0,
			  uint32_t *next1, uint64_t *e)
{
	const uint64_t high = ~pmask;

	for (size_t k = 0; 64 * k < nm; k++) {
		const uint64_t a = w[k], b = w[k + 1] >> 1;
		const unsigned end = nm - 64 * k < 64 ? (unsigned)(nm - 64 * k) : 64;
		unsigned sh = 0;

		for (; sh + 1 < end; sh += 2) {
			const uint64_t x0 = est_window_at(a, b, sh);
			const uint64_t x1 = est_window_at(a, b, sh + 1);

			e[next0[x0 >> (64 - TOP_BITS)]++] = (x0 & high) | (64 * k + sh);
			e[next1[x1 >> (64 - TOP_BITS)]++] = (x1 & high) | (64 * k + sh + 1);
		}
		if (sh < end) {
			const uint64_t x0 = est_window_at(a, b, sh);

			e[next0[x0 >> (64 - TOP_BITS)]++] = (x0 & high) | (64 * k + sh);
		}
	}
}

/* The words of the positions i < nm of classes c0..c1 - 1 into their
 * buckets' next places in e. */
void bits_scatter_classes(const uint64_t *w, uint64_t pmask, size_t nm, unsigned c0,
			  unsigned c1, uint32_t *next, uint64_t *e)
{
	const uint64_t high = ~pmask;

	for (size_t k = 0; 64 * k < nm; k++) {
		const uint64_t a = w[k], b = w[k + 1] >> 1;
		uint64_t bit[PREFIX_BITS], m = 0;

		for (unsigned j = 0; j < PREFIX_BITS; j++)	/* bit j of each window */
			bit[j] = est_window_at(a, b, j);
		for (unsigned c = c0; c < c1; c++) {
			uint64_t mc = ~0ull;

			for (unsigned j = 0; j < PREFIX_BITS; j++)
				mc &= c >> (PREFIX_BITS - 1 - j) & 1 ? bit[j] : ~bit[j];
			m |= mc;
		}
		if (nm - 64 * k < 64)	/* the windows at nm and on are not sorted */
			m &= ~(~0ull >> (nm - 64 * k));
		for (; m; m &= m - 1) {
			const unsigned j = 63 - (unsigned)__builtin_ctzll(m);
			const uint64_t x = est_window_at(a, b, j);

			e[next[x >> (64 - TOP_BITS)]++] = (x & high) | (64 * k + j);
		}
	}
}
