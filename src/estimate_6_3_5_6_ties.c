// SPDX-License-Identifier: GPL-2.0-or-later
/* SP 800-90B §6.3.5/§6.3.6 over binary samples: the positions whose
 * 64-bit words tie (estimate_6_3_5_6_ties.h), compared on past the word
 * until their suffixes differ.  Apart from the word sort, as ties are
 * rare: these calls are off its hot path. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "estimate_6_3_5_6_ties.h"

size_t est_bits_common_bits(const uint64_t *w, size_t n, size_t p, size_t q, int *deep)
{
	int64_t windows = 0;

	return bits_common(w, n, p, q, TIE_DEPTH, deep, &windows);
}

int est_bits_suffix_less(const uint64_t *w, size_t n, size_t p, size_t q, int *deep)
{
	int64_t windows = 0;

	return bits_suffix_less(w, n, p, q, TIE_DEPTH, deep, &windows);
}

/* Puts every run of tied words in e[0..m) in suffix order (pmask: the
 * position's bits; w: the n bits).  0, or -EAGAIN when the ties are too
 * many or too deep. */
int est_bits_sort_ties(uint64_t *e, size_t m, uint64_t pmask, const uint64_t *w, size_t n)
{
	int deep = 0;

	for (size_t r = 1; r < m; r++) {
		size_t end = r;

		if ((e[r] ^ e[r - 1]) > pmask)
			continue;
		while (end + 1 < m && (e[end + 1] ^ e[r]) <= pmask)
			end++;
		if (end - r + 2 > TIE_MAX)
			return -EAGAIN;
		/* insertion sort of e[r - 1 .. end] */
		for (size_t i = r; i <= end; i++) {
			const uint64_t x = e[i];
			size_t j = i;

			for (; j > r - 1 && est_bits_suffix_less(w, n, x & pmask, e[j - 1] & pmask, &deep); j--)
				e[j] = e[j - 1];
			e[j] = x;
		}
		if (deep)
			return -EAGAIN;
		r = end;
	}
	return 0;
}
