// SPDX-License-Identifier: GPL-2.0-or-later
/* SP 800-90B §6.3.5 t-tuple and §6.3.6 longest repeated substring (LRS),
 * both from one sort of the suffixes; this file tallies the sorted
 * suffixes and computes the two estimates.  The sorts: libdivsufsort's
 * suffix array (estimate_6_3_5_6_tuple_lrs.c, which also holds the entry
 * point) and, for binary samples, grouping words (estimate_6_3_5_6_bits.c).
 *
 * Adjacent suffixes in sorted order that share their first t samples are
 * the occurrences of one t-tuple.  The LCP array (longest common prefix of
 * neighbours) groups them: every "lcp-interval" of depth h whose enclosing
 * interval has depth p stands for one tuple of each length t in (p, h], with
 * as many occurrences c as the interval has suffixes.  One bottom-up pass
 * over the LCP array visits every interval once, so
 *   Q[t] (count of the most common t-tuple) = max c over intervals of depth
 *        >= t (a range maximum, kept per depth and swept from the top), and
 *   S[t] (sum over t-tuples of C(c, 2), LRS's collision count) = a range add
 *        over (p, h], kept as a difference array,
 * in O(n) after the O(n log n) sort (libdivsufsort, which NIST's tool also
 * uses).  Memory: the suffix array and one more int32 per sample (the LCP,
 * computed in place of a "previous suffix" array, Kärkkäinen et al.'s PLCP
 * method), plus 12 bytes per repeated length. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_tuple.h"




static long double upper_bound_l(long double p, size_t n)
{
	long double u = p + (long double)EST_ZALPHA *
			    sqrtl(p * (1.0L - p) / (long double)(n - 1));

	return u > 1.0L ? 1.0L : u;
}

/* The lcp-intervals deeper than base among m suffixes in sorted order that
 * all share their first base samples (lcp[r] >= base: the common prefix of
 * the suffixes ranked r - 1 and r; lcp[0] unused).  st: m + 1 frames. */
void lcp_intervals(const int32_t *lcp, size_t m, int32_t base,
			  struct frame *st, struct tallies *ts)
{
	size_t top = 0;

	st[0] = (struct frame){ base, 0 };
	for (size_t r = 1; r <= m; r++)
		interval_step(ts, st, &top, r, r < m ? lcp[r] : base);
}

/* The two estimates from the tallies of n samples (ts->v > 0). */
void tuple_finish(struct tallies *ts, size_t n,
			 struct est_result *tuple, struct est_result *lrs)
{
	uint32_t *maxc = ts->maxc;
	uint64_t *dsum = ts->dsum;
	const int32_t v = ts->v;
	size_t u;
	long double pmax;

	/* Q[t] = max over depths >= t (1 if nothing repeats at t). */
	for (int32_t t = v - 1; t >= 1; t--)
		if (maxc[t + 1] > maxc[t])
			maxc[t] = maxc[t + 1];
	for (int32_t t = 1; t <= v; t++) {
		dsum[t] += dsum[t - 1];
		if (maxc[t] == 0)
			maxc[t] = 1;
	}

	/* t-tuple: every t whose most common tuple occurs >= 35 times. */
	for (u = 1; u <= (size_t)v && maxc[u] >= TUPLE_MIN_COUNT; u++)
		;
	tuple->t = u - 1;
	lrs->u = u;
	lrs->v = (uint64_t)v;
	pmax = -1.0L;
	for (size_t t = 1; t < u; t++) {
		long double p = powl((long double)maxc[t] / (long double)(n - t + 1),
				     1.0L / (long double)t);

		if (p > pmax)
			pmax = p;
	}
	if (pmax > 0.0L) {
		long double pu = upper_bound_l(pmax, n);

		tuple->p_hat = (double)pmax;
		tuple->p_u = (double)pu;
		tuple->count = maxc[1];
		tuple->h = (double)-log2l(pu);
	}
	/* LRS: lengths u..v, collision probability per tuple length. */
	if ((size_t)v >= u) {
		long double pu;

		pmax = 0.0L;
		for (size_t t = u; t <= (size_t)v; t++) {
			long double pairs = (long double)(n - t + 1) * (long double)(n - t) / 2.0L;
			long double p = powl((long double)dsum[t] / pairs, 1.0L / (long double)t);

			if (p > pmax)
				pmax = p;
		}
		pu = upper_bound_l(pmax, n);
		lrs->p_hat = (double)pmax;
		lrs->p_u = (double)pu;
		lrs->h = (double)-log2l(pu);
	}
}

int tuple_from_lcp(const int32_t *lcp, size_t n, int32_t v,
		   struct est_result *tuple, struct est_result *lrs)
{
	struct tallies ts = { NULL, NULL, 0 };
	/* The stack never holds more than v + 1 frames (depths increase). */
	struct frame *st = malloc(((size_t)v + 2) * sizeof(*st));
	int rc = -ENOMEM;

	ts.maxc = calloc((size_t)v + 2, sizeof(*ts.maxc));
	ts.dsum = calloc((size_t)v + 2, sizeof(*ts.dsum));
	if (ts.maxc && ts.dsum && st) {
		lcp_intervals(lcp, n, 0, st, &ts);
		tuple_finish(&ts, n, tuple, lrs);
		rc = 0;
	}
	free(st);
	free(ts.maxc);
	free(ts.dsum);
	return rc;
}
