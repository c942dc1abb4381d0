// SPDX-License-Identifier: GPL-2.0-or-later
/* SP 800-90B §6.3.5 t-tuple and §6.3.6 LRS: the entry point, and the
 * general case over libdivsufsort's suffix array and its LCP array (the
 * method: estimate_6_3_5_6_tally.c's comment).  Binary samples are
 * grouped by words first (estimate_6_3_5_6_bits.c), or where those tie
 * too much, merged from their bytes' suffix array
 * (estimate_6_3_5_6_bits_merge.c). */
#include <divsufsort.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"
#include "rngfeed/estimate_tuple.h"

int est_tuple_lrs(const uint8_t *s, size_t n, unsigned k,
		  struct est_result *tuple, struct est_result *lrs)
{
	if (!s || !tuple || !lrs || k < 2 || k > 256 || n >= INT32_MAX)
		return -EINVAL;
	if (n < 2)
		return -ENODATA;
	memset(tuple, 0, sizeof(*tuple));
	memset(lrs, 0, sizeof(*lrs));
	tuple->h = lrs->h = -1.0;
	if (k == 2 && n >= 128) {
		int rc = est_tuple_lrs_bits(s, n, tuple, lrs);

		if (rc == -EAGAIN && n % 8 == 0)
			rc = est_tuple_lrs_bits_merge(s, n, tuple, lrs);
		if (rc != -EAGAIN)
			return rc;
	}
	return est_tuple_lrs_sa(s, n, tuple, lrs);
}

int est_tuple_lrs_with_bits(const uint8_t *s, size_t n, unsigned k, const uint8_t *bits,
			    struct est_result *tuple, struct est_result *lrs,
			    struct est_result *btuple, struct est_result *blrs, int *brc)
{
	int rc = 1;	/* the samples' estimates: not made yet */

	if (!bits || !btuple || !blrs || !brc || n >= INT32_MAX / 8)
		return -EINVAL;
	if (8 * n >= 128) {
		memset(btuple, 0, sizeof(*btuple));
		memset(blrs, 0, sizeof(*blrs));
		btuple->h = blrs->h = -1.0;
		*brc = est_tuple_lrs_bits(bits, 8 * n, btuple, blrs);
		if (*brc == -EAGAIN)
			*brc = est_tuple_lrs_bits_merge_bytes(bits, 8 * n, btuple, blrs,
							      tuple, lrs, &rc);
		if (*brc == -EAGAIN)
			*brc = est_tuple_lrs_sa(bits, 8 * n, btuple, blrs);
	} else {
		*brc = est_tuple_lrs(bits, 8 * n, 2, btuple, blrs);
	}
	return rc == 1 ? est_tuple_lrs(s, n, k, tuple, lrs) : rc;
}

/* The general case: libdivsufsort's suffix array, then the LCP array. */
int est_tuple_lrs_sa(const uint8_t *s, size_t n,
		     struct est_result *tuple, struct est_result *lrs)
{
	int32_t *sa = NULL, *plcp = NULL, v = 0;
	int rc = -ENOMEM;

	memset(tuple, 0, sizeof(*tuple));
	memset(lrs, 0, sizeof(*lrs));
	tuple->h = lrs->h = -1.0;
	sa = est_zalloc(n * sizeof(*sa));
	plcp = est_zalloc(n * sizeof(*plcp));
	if (!sa || !plcp)
		goto out;
	if (divsufsort(s, sa, (saidx_t)n) != 0) {
		rc = -EINVAL;
		goto out;
	}
	/* Each of these loops reads or writes one random place per sample
	 * (8 million for a megabyte's bits): prefetched a few ahead. */
	plcp[sa[0]] = -1;
	for (size_t r = 1; r < n; r++) {
		if (r + 16 < n)
			__builtin_prefetch(&plcp[sa[r + 16]], 1);
		plcp[sa[r]] = sa[r - 1];
	}
	/* plcp[i]: first the suffix sorted just before suffix i (-1: none),
	 * then the LCP of the two; h drops by at most one from i to i + 1. */
	for (int32_t i = 0, h = 0; i < (int32_t)n; i++) {
		int32_t j = plcp[i];

		if (i + 16 < (int32_t)n && plcp[i + 16] >= 0)
			__builtin_prefetch(s + plcp[i + 16]);
		if (j < 0) {
			h = 0;
			plcp[i] = 0;
			continue;
		}
		while (i + h < (int32_t)n && j + h < (int32_t)n && s[i + h] == s[j + h])
			h++;
		plcp[i] = h;
		if (h > v)
			v = h;
		if (h > 0)
			h--;
	}
	if (v == 0) {	/* no sample repeats: nothing to estimate */
		rc = -ENODATA;
		goto out;
	}
	/* In rank order, over the suffix array (each rank read once). */
	for (size_t r = 0; r < n; r++) {
		if (r + 16 < n)
			__builtin_prefetch(&plcp[sa[r + 16]]);
		sa[r] = plcp[sa[r]];
	}
	rc = tuple_from_lcp(sa, n, v, tuple, lrs);
out:
	est_zfree(sa, n * sizeof(*sa));
	est_zfree(plcp, n * sizeof(*plcp));
	return rc;
}
