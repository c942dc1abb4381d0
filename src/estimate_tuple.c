/* SP 800-90B §6.3.5 t-tuple and §6.3.6 longest repeated substring (LRS),
 * both from one suffix array.
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
#include <divsufsort.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_internal.h"

#define TUPLE_MIN_COUNT 35	/* 90B: t-tuple uses tuples seen >= 35 times */

struct frame { int32_t h, lb; };

static long double upper_bound_l(long double p, size_t n)
{
	long double u = p + (long double)EST_ZALPHA *
			    sqrtl(p * (1.0L - p) / (long double)(n - 1));

	return u > 1.0L ? 1.0L : u;
}

int est_tuple_lrs(const uint8_t *s, size_t n, unsigned k,
		  struct est_result *tuple, struct est_result *lrs)
{
	int32_t *sa = NULL, *plcp = NULL, v = 0;
	struct frame *st = NULL;
	uint32_t *maxc = NULL;
	uint64_t *dsum = NULL;
	size_t top = 0, u;
	long double pmax;
	int rc = -ENOMEM;

	if (!s || !tuple || !lrs || k < 2 || k > 256 || n >= INT32_MAX)
		return -EINVAL;
	if (n < 2)
		return -ENODATA;
	memset(tuple, 0, sizeof(*tuple));
	memset(lrs, 0, sizeof(*lrs));
	tuple->h = lrs->h = -1.0;
	sa = malloc(n * sizeof(*sa));
	plcp = malloc(n * sizeof(*plcp));
	if (!sa || !plcp)
		goto out;
	if (divsufsort(s, sa, (saidx_t)n) != 0) {
		rc = -EINVAL;
		goto out;
	}
	/* plcp[i]: first the suffix sorted just before suffix i (-1: none),
	 * then the LCP of the two; h drops by at most one from i to i + 1. */
	/* Each of these loops reads or writes one random place per sample
	 * (8 million for a megabyte's bits): prefetched a few ahead. */
	plcp[sa[0]] = -1;
	for (size_t r = 1; r < n; r++) {
		if (r + 16 < n)
			__builtin_prefetch(&plcp[sa[r + 16]], 1);
		plcp[sa[r]] = sa[r - 1];
	}
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
	maxc = calloc((size_t)v + 2, sizeof(*maxc));
	dsum = calloc((size_t)v + 2, sizeof(*dsum));
	/* The stack never holds more than v + 1 frames (depths increase). */
	st = malloc(((size_t)v + 2) * sizeof(*st));
	if (!maxc || !dsum || !st)
		goto out;
	st[0] = (struct frame){ 0, 0 };
	for (size_t r = 1; r <= n; r++) {
		int32_t cur = r < n ? plcp[sa[r]] : 0, lb = (int32_t)r - 1;

		if (r + 16 < n)
			__builtin_prefetch(&plcp[sa[r + 16]]);

		while (cur < st[top].h) {
			struct frame f = st[top--];
			int32_t parent = cur > st[top].h ? cur : st[top].h;
			uint64_t c = (uint64_t)r - (uint64_t)f.lb;

			if (c > maxc[f.h])
				maxc[f.h] = (uint32_t)c;
			dsum[parent + 1] += c * (c - 1) / 2;
			dsum[f.h + 1] -= c * (c - 1) / 2;
			lb = f.lb;
		}
		if (cur > st[top].h)
			st[++top] = (struct frame){ cur, lb };
	}
	/* Q[t] = max over depths >= t (1 if nothing repeats at t). */
	for (int32_t t = v - 1; t >= 1; t--)
		if (maxc[t + 1] > maxc[t])
			maxc[t] = maxc[t + 1];
	for (int32_t t = 1; t <= v; t++) {
		dsum[t] += dsum[t - 1];
		if (maxc[t] == 0)
			maxc[t] = 1;
	}
	dsum[0] = 0;

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
	rc = 0;
out:
	free(sa);
	free(plcp);
	free(st);
	free(maxc);
	free(dsum);
	return rc;
}
