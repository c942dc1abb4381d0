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

/* ---- bits: sorting words instead of whole suffixes ----
 * On a bitstring the suffix order down to depth 64 is the order of the 64
 * bits from each position on (zeros past the end: a shorter string sorts
 * before the longer ones it is a prefix of), an integer, where a suffix
 * array of random bits costs libdivsufsort most of the estimate's time.
 * Each position becomes one word: the top `depth` bits of its window above
 * the position itself (pbits = 64 - depth bits, enough for n).  Sorting the
 * words sorts the positions to that depth, and the LCP of two neighbours
 * below it is their xor's leading zeros: the bits are read once, in order.
 * Positions whose words tie (rare: v is about 2 log2 n for random bits,
 * depth is 41 for 8M bits) are put in order by comparing on
 * (sort_ties()); when too many tie, the caller falls back to the suffix
 * array.
 *
 * The sort: a counting pass on the top 11 bits puts the words in 2,048
 * buckets (random bits: n / 2,048 each, which stay in the caches), each
 * sorted on its own by counting passes on the next bits, down to groups
 * small enough for an insertion sort.  (Sorting positions by windows read again
 * at each pass, a pass over 65,536 buckets and the 63 shortest suffixes
 * merged in afterwards took twice as long: each read of a window was a
 * cache miss.) */
#define TOP_BITS 11	/* 2,048 buckets */
#define NEXT_BITS 12	/* up to 4,096 groups in each */
#define GROUP_MAX 8	/* a group an insertion sort takes as it is */

static inline uint64_t window(const uint64_t *w, size_t i)
{
	unsigned sh = i & 63;
	uint64_t x = w[i >> 6] << sh;

	return sh ? x | (w[(i >> 6) + 1] >> (64 - sh)) : x;
}

/* Words x[0..len) that share their top `top` bits, by the next g bits
 * (a counting pass through tmp, len words): g grows with len, one or two
 * words a group on random bits; a group of more than GROUP_MAX (skewed
 * input) is split the same way on the bits after.  The groups' own order
 * is left to an insertion sort of the whole (sort_bucket()). */
static void split_words(uint64_t *x, size_t len, uint64_t *tmp, unsigned top)
{
	uint32_t at[(1u << NEXT_BITS) + 1];
	unsigned g = 1, sh, mask;

	while (g < NEXT_BITS && top + g < 64 && ((size_t)1 << g) <= len)
		g++;
	sh = 64 - top - g;
	mask = (1u << g) - 1;
	memset(at, 0, (mask + 2) * sizeof(*at));
	for (size_t j = 0; j < len; j++)
		at[((x[j] >> sh) & mask) + 1]++;
	for (unsigned k = 1; k <= mask + 1; k++)
		at[k] += at[k - 1];
	for (size_t j = 0; j < len; j++)
		tmp[at[(x[j] >> sh) & mask]++] = x[j];
	memcpy(x, tmp, len * sizeof(*x));
	/* at[k] is now where group k ends */
	for (unsigned k = 0, from = 0; k <= mask; from = at[k++])
		if (at[k] - from > GROUP_MAX && sh > 0)
			split_words(x + from, at[k] - from, tmp, top + g);
}

/* One bucket's words (they share their top TOP_BITS bits) in order: split
 * into small groups, then one insertion sort over them all (nothing
 * crosses a group's bounds), which seldom moves a word: a sort per group
 * of 16 (a mispredicted branch at every other word) took twice as long. */
static void sort_bucket(uint64_t *x, size_t len, uint64_t *tmp)
{
	if (len > GROUP_MAX)
		split_words(x, len, tmp, TOP_BITS);
	for (size_t i = 1; i < len; i++) {
		const uint64_t v = x[i];
		size_t j = i;

		for (; j > 0 && x[j - 1] > v; j--)
			x[j] = x[j - 1];
		x[j] = v;
	}
}

/* A run of more than `limit` equal bits among the n bits packed in w.
 * Bit 63 - b of t marks where bit 64k + b differs from the next one; a run
 * of limit + 1 is limit unmarked in a row, counted across the words. */
static int long_run(const uint64_t *w, size_t n, size_t limit)
{
	const size_t words = (n + 63) / 64, last = n - 1;	/* no bit after last */
	size_t same = 0;	/* unmarked in a row, up to the current word */

	for (size_t k = 0; k < words; k++) {
		uint64_t t = w[k] ^ (w[k] << 1 | (k + 1 < words ? w[k + 1] >> 63 : 0));

		if (64 * k + 63 >= last)	/* past the last bit: marked */
			t |= ~0ull >> (last - 64 * k);
		if (!t) {
			same += 64;
			if (same >= limit)
				return 1;
			continue;
		}
		if (same + (size_t)__builtin_clzll(t) >= limit)
			return 1;
		same = (size_t)__builtin_ctzll(t);
	}
	return 0;
}

/* ---- positions whose words tie ----
 * (They share their first `depth` bits, or a short suffix is all of it.)
 * The sort leaves them in a run, by position; each run is put in suffix
 * order by comparing on, and their LCP is counted the same way.  Many or
 * deep ties (long runs of equal bits, a repeated block) go to the suffix
 * array instead: TIE_MAX positions per run, TIE_DEPTH bits deep. */
#define TIE_MAX 64
#define TIE_DEPTH 4096

/* Bits the suffixes at p and q have in common (p != q), at most the
 * shorter's length; *deep set (and the count cut short) past TIE_DEPTH. */
static size_t common_bits(const uint64_t *w, size_t n, size_t p, size_t q, int *deep)
{
	const size_t lim = n - (p > q ? p : q);
	size_t l = 0;

	while (l < lim) {
		const uint64_t x = window(w, p + l) ^ window(w, q + l);

		if (x) {
			l += (size_t)__builtin_clzll(x);
			break;
		}
		l += 64;
		if (l >= TIE_DEPTH) {
			*deep = 1;
			break;
		}
	}
	return l < lim ? l : lim;
}

/* Suffix p before suffix q: at the first bit that differs, or the shorter
 * (the later one) first when one is a prefix of the other. */
static int suffix_less(const uint64_t *w, size_t n, size_t p, size_t q, int *deep)
{
	const size_t l = common_bits(w, n, p, q, deep);

	if (l >= n - (p > q ? p : q))
		return p > q;
	return (window(w, p + l) >> 63) < (window(w, q + l) >> 63);
}

/* Puts every run of tied words in e[0..n) in suffix order (pmask: the
 * position's bits).  0, or -EAGAIN when the ties are too many or too deep. */
static int sort_ties(uint64_t *e, size_t n, uint64_t pmask, const uint64_t *w)
{
	int deep = 0;

	for (size_t r = 1; r < n; r++) {
		size_t end = r;

		if ((e[r] ^ e[r - 1]) > pmask)
			continue;
		while (end + 1 < n && (e[end + 1] ^ e[r]) <= pmask)
			end++;
		if (end - r + 2 > TIE_MAX)
			return -EAGAIN;
		/* insertion sort of e[r - 1 .. end] */
		for (size_t i = r; i <= end; i++) {
			const uint64_t x = e[i];
			size_t j = i;

			for (; j > r - 1 && suffix_less(w, n, x & pmask, e[j - 1] & pmask, &deep); j--)
				e[j] = e[j - 1];
			e[j] = x;
		}
		if (deep)
			return -EAGAIN;
		r = end;
	}
	return 0;
}

static int tuple_lrs_bits(const uint8_t *s, size_t n,
			  struct est_result *tuple, struct est_result *lrs)
{
	const size_t words = n / 64 + 2, buckets = (size_t)1 << TOP_BITS;
	const unsigned pbits = 64 - (unsigned)__builtin_clzll((uint64_t)n - 1);
	const unsigned depth = 64 - pbits;
	const uint64_t pmask = ((uint64_t)1 << pbits) - 1;
	uint64_t *w = est_zalloc(words * sizeof(*w)), *e = est_zalloc(n * sizeof(*e));
	uint64_t *tmp = NULL;
	uint32_t *start = calloc(2 * buckets + 1, sizeof(*start)), *next;
	int32_t *lcp, v = 0;
	size_t biggest = 0;
	int rc = -ENOMEM;

	if (!w || !e || !start)
		goto out;
	est_pack_bits(s, n, w);
	/* A run of equal bits longer than depth - 1 + TIE_MAX: more than
	 * TIE_MAX positions tie. */
	if (long_run(w, n, depth - 1 + TIE_MAX)) {
		rc = -EAGAIN;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		start[(window(w, i) >> (64 - TOP_BITS)) + 1]++;
	for (size_t d = 1; d <= buckets; d++) {
		if (start[d] > biggest)
			biggest = start[d];
		start[d] += start[d - 1];
	}
	tmp = malloc(biggest * sizeof(*tmp) + 1);
	if (!tmp)
		goto out;
	next = start + buckets + 1;	/* each bucket's next place */
	memcpy(next, start, buckets * sizeof(*next));
	for (size_t i = 0; i < n; i++) {
		const uint64_t x = window(w, i);

		e[next[x >> (64 - TOP_BITS)]++] = (x & ~pmask) | i;
	}
	for (size_t d = 0; d < buckets; d++)
		sort_bucket(e + start[d], start[d + 1] - start[d], tmp);
	rc = sort_ties(e, n, pmask, w);
	if (rc < 0)
		goto out;
	/* LCP of neighbours, in place of the words (lcp[r] is the first half
	 * of word r / 2, written after word r is read): their xor's leading
	 * zeros, or counted on past a tie; at most the shorter's length. */
	lcp = (int32_t *)e;
	{
		uint64_t prev = e[0];

		lcp[0] = 0;
		for (size_t r = 1; r < n; r++) {
			const uint64_t cur = e[r], x = prev ^ cur;
			const size_t p = prev & pmask, q = cur & pmask;
			const size_t lim = n - (p > q ? p : q);
			size_t l;

			if (x > pmask) {
				l = (size_t)__builtin_clzll(x);
			} else {
				int deep = 0;

				l = common_bits(w, n, p, q, &deep);
				if (deep) {
					rc = -EAGAIN;
					goto out;
				}
			}
			if (l > lim)
				l = lim;
			lcp[r] = (int32_t)l;
			if ((int32_t)l > v)
				v = (int32_t)l;
			prev = cur;
		}
	}
	rc = v ? from_lcp(lcp, n, v, tuple, lrs) : -ENODATA;
out:
	est_zfree(w, words * sizeof(*w));
	est_zfree(e, n * sizeof(*e));
	free(tmp);
	free(start);
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
	rc = from_lcp(sa, n, v, tuple, lrs);
out:
	est_zfree(sa, n * sizeof(*sa));
	est_zfree(plcp, n * sizeof(*plcp));
	return rc;
}
