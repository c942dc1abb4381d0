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

/* From the LCP array in sorted order (lcp[r]: the common prefix of the
 * suffixes ranked r - 1 and r; lcp[0] unused) and its maximum v > 0, the
 * two estimates.  Frees nothing it did not allocate. */
static int from_lcp(const int32_t *lcp, size_t n, int32_t v,
		    struct est_result *tuple, struct est_result *lrs)
{
	struct frame *st = NULL;
	uint32_t *maxc = NULL;
	uint64_t *dsum = NULL;
	size_t top = 0, u;
	long double pmax;
	int rc = -ENOMEM;

	maxc = calloc((size_t)v + 2, sizeof(*maxc));
	dsum = calloc((size_t)v + 2, sizeof(*dsum));
	/* The stack never holds more than v + 1 frames (depths increase). */
	st = malloc(((size_t)v + 2) * sizeof(*st));
	if (!maxc || !dsum || !st)
		goto out;
	st[0] = (struct frame){ 0, 0 };
	for (size_t r = 1; r <= n; r++) {
		int32_t cur = r < n ? lcp[r] : 0, lb = (int32_t)r - 1;

		/* The root frame (depth 0) never leaves: cur >= 0. */
		while (top > 0 && cur < st[top].h) {
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
	free(st);
	free(maxc);
	free(dsum);
	return rc;
}

/* ---- bits: sorting 64-bit windows instead of whole suffixes ----
 * On a bitstring the suffix order up to depth 64 is the order of the 64
 * bits that start at each position, an integer: a radix sort (6 passes of
 * 11 bits) puts the n positions in that order in O(n), where a suffix array
 * of random bits costs libdivsufsort most of the estimate's time.  It is
 * exact as long as no two positions share 64 bits (v < 64, the usual case:
 * v is about 2 log2 n for random bits); otherwise the caller falls back to
 * the suffix array.  The last 63 positions have fewer than 64 bits: each
 * goes before the first full window not below its bits padded with zeros
 * (a shorter string sorts before the longer ones it is a prefix of). */
#define RADIX_BITS 11	/* 6 passes; 2,048 counters stay in L1 */
#define RADIX_PASSES 6

static inline uint64_t window(const uint64_t *w, size_t i)
{
	unsigned sh = i & 63;
	uint64_t x = w[i >> 6] << sh;

	return sh ? x | (w[(i >> 6) + 1] >> (64 - sh)) : x;
}

static int tuple_lrs_bits(const uint8_t *s, size_t n,
			  struct est_result *tuple, struct est_result *lrs)
{
	const size_t words = n / 64 + 2, full = n - 63;
	uint64_t *w = calloc(words, sizeof(*w));
	uint32_t *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	int32_t *lcp, v = 0;
	size_t cnt[1u << RADIX_BITS], run = 0;
	int rc = -ENOMEM;

	if (!w || !a || !b)
		goto out;
	for (size_t i = 0; i < n; i++) {
		w[i >> 6] |= (uint64_t)(s[i] & 1) << (63 - (i & 63));
		/* 65 equal bits in a row: two positions share 64 bits. */
		run = i && s[i] == s[i - 1] ? run + 1 : 1;
		if (run > 64) {
			rc = -EAGAIN;
			goto out;
		}
	}
	/* LSD radix sort of the full windows, least significant byte first. */
	for (size_t i = 0; i < full; i++)
		a[i] = (uint32_t)i;
	for (unsigned pass = 0; pass < RADIX_PASSES; pass++) {
		const unsigned sh = pass * RADIX_BITS;
		const uint64_t mask = (1u << RADIX_BITS) - 1;
		size_t sum = 0;

		memset(cnt, 0, sizeof(cnt));
		for (size_t i = 0; i < full; i++)
			cnt[(window(w, a[i]) >> sh) & mask]++;
		for (unsigned d = 0; d <= mask; d++) {
			size_t c = cnt[d];

			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < full; i++)
			b[cnt[(window(w, a[i]) >> sh) & mask]++] = a[i];
		{
			uint32_t *t = a;

			a = b;
			b = t;
		}
	}
	/* Merge the 63 short ones (sorted by padded bits, then length) into
	 * b: n positions in suffix order. */
	{
		uint32_t sh[63];
		size_t ns = 0, fi = 0, o = 0;

		for (size_t p = full; p < n; p++) {
			size_t j = ns++;

			/* insertion sort by (padded window, length) */
			while (j > 0 && (window(w, sh[j - 1]) > window(w, p) ||
					 (window(w, sh[j - 1]) == window(w, p) && sh[j - 1] < p))) {
				sh[j] = sh[j - 1];
				j--;
			}
			sh[j] = (uint32_t)p;
		}
		for (size_t j = 0; j < ns; j++) {
			uint64_t key = window(w, sh[j]);

			while (fi < full && window(w, a[fi]) < key)
				b[o++] = a[fi++];
			b[o++] = sh[j];
		}
		while (fi < full)
			b[o++] = a[fi++];
	}
	/* LCP of neighbours, into a: bits in common, at most the shorter's. */
	lcp = (int32_t *)a;
	lcp[0] = 0;
	for (size_t r = 1; r < n; r++) {
		uint64_t x = window(w, b[r - 1]) ^ window(w, b[r]);
		size_t la = n - b[r - 1], lb = n - b[r];
		int32_t l = x ? __builtin_clzll(x) : 64;

		if ((size_t)l > la)
			l = (int32_t)la;
		if ((size_t)l > lb)
			l = (int32_t)lb;
		if (l >= 64) {		/* 64 bits or more in common */
			rc = -EAGAIN;
			goto out;
		}
		lcp[r] = l;
		if (l > v)
			v = l;
	}
	rc = v ? from_lcp(lcp, n, v, tuple, lrs) : -ENODATA;
out:
	free(w);
	free(a);
	free(b);
	return rc;
}

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
		int rc = tuple_lrs_bits(s, n, tuple, lrs);

		if (rc != -EAGAIN)
			return rc;
	}
	return est_tuple_lrs_sa(s, n, tuple, lrs);
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
	sa = malloc(n * sizeof(*sa));
	plcp = malloc(n * sizeof(*plcp));
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
	rc = from_lcp(sa, n, v, tuple, lrs);
out:
	free(sa);
	free(plcp);
	return rc;
}
