// SPDX-License-Identifier: GPL-2.0-or-later
/* SP 800-90B §6.3.5 t-tuple and §6.3.6 LRS over binary samples: the
 * suffixes grouped by 64-bit words instead of a suffix array (see below);
 * the tallies and estimates are estimate_6_3_5_6_tally.c's, the words
 * that tie estimate_6_3_5_6_ties.c's, the words put in their buckets
 * estimate_6_3_5_6_scatter.c's, the runs of equal bits (which may send the
 * bits to the suffix array, and bound u from below) estimate_6_3_5_6_runs.c's,
 * the last positions' tuples estimate_6_3_5_6_shorts.c's. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"
#include "rngfeed/estimate_tuple.h"
#include "estimate_6_3_5_6_runs.h"
#include "estimate_6_3_5_6_scatter.h"
#include "estimate_6_3_5_6_shorts.h"
#include "estimate_6_3_5_6_ties.h"

/* ---- bits: grouping words instead of sorting whole suffixes ----
 * On a bitstring the suffix order down to depth 64 is the order of the 64
 * bits from each position on, an integer, where a suffix array of random
 * bits costs libdivsufsort most of the estimate's time.  Each position
 * i <= n - depth becomes one word: the top `depth` bits of its window
 * above the position itself (pbits = 64 - depth bits, enough for n).
 * Words that share their top t bits (t <= depth) are the occurrences of
 * one t-tuple, so the counting passes that group the words by their bits
 * hold every depth's groups themselves: Q[t] and S[t] are tallied from
 * their counts, and no LCP array or stack over all n is needed (those were
 * 10 of 26 ms on a million biased bits).  Below the last pass's depth only
 * small groups are left, whose pairs are counted one by one: S[t] is the
 * number of pairs with an LCP >= t.  The depth - 1 last positions (their
 * windows run past the end) are counted into the groups on their own
 * (estimate_6_3_5_6_shorts.c), their group sizes read off the passes.
 * Positions whose words tie (rare: v is about 2 log2 n for random bits,
 * depth is 41 for 8M bits) are compared on; when too many tie, the caller
 * falls back to the suffix array.  Groups of fewer than 35 below u0, a
 * lower bound on u from the runs of equal bits, are only searched for
 * pairs that reach u0 (deep_pairs()).
 *
 * The passes: one on the top 11 bits puts the words in 2,048 buckets
 * (random bits: n / 2,048 each, which stay in the caches), each split on
 * its own by counting passes on the next bits, down to groups of at most
 * GROUP_MAX.  (Sorting positions by windows read again at each pass, a
 * pass over 65,536 buckets and the 63 shortest suffixes merged in
 * afterwards took twice as long: each read of a window was a cache miss.
 * 10 to 16 top bits, groups of 4 to 16, or one bit more per pass were no
 * faster; one bit fewer pays only in skewed groups, see split_words().
 * Words of positions, 4 bytes each, made from the bits again in each
 * bucket: 1 ms slower.) */
#define NEXT_BITS 12	/* up to 4,096 groups in each */
#define GROUP_MAX 8	/* a group whose pairs are counted one by one */

/* ---- the tallies from the passes themselves ----
 * (See above.)  Ties of 35 or more, whose inner tuples Q needs, are sorted
 * and go through the stack from the depth their group was split to. */
struct bits_sort {
	const uint64_t *w;	/* the n bits */
	size_t n;
	uint64_t pmask;		/* a word's position bits */
	unsigned depth;		/* a word's window bits */
	size_t slab;		/* words a slab (0: as sort_and_tally() picks) */
	uint64_t *tmp;		/* room for the largest bucket */
	size_t tmp_bytes;
	size_t large;		/* twice a bucket's mean size */
	struct tallies ts;
	size_t tie_budget;	/* merge_words()'s comparisons of tied words left */
	unsigned u0;		/* u >= u0 (bits_runs()) */
	struct shorts last;	/* the positions left out of the sort */
	struct frame st[TIE_MAX + 1];
	int32_t lcp[TIE_MAX];
};

/* The groups at depths top + 1 .. top + levels, from the bounds at[0..2^g]
 * of the 2^g groups at depth top + g (group k: at[k] .. at[k + 1]). */
static void tally_levels(struct tallies *ts, const uint32_t *at, unsigned g,
			 unsigned top, unsigned levels)
{
	const size_t groups = (size_t)1 << g;
	const uint64_t words = at[groups] - at[0];

	for (unsigned j = 1; j <= levels; j++) {
		const size_t step = (size_t)1 << (g - j);
		uint64_t squares = 0, most = 0;

		/* the pairs are (sum c^2 - sum c) / 2: one step less a group */
		for (size_t k = 0; k < groups; k += step) {
			const uint64_t c = at[k + step] - at[k];

			squares += c * c;
			most = c > most ? c : most;
		}
		tally_depth(ts, (int32_t)(top + j), (squares - words) / 2, most);
	}
}

/* Insertion sort: the groups' words are out of order only inside them. */
static void sort_words(uint64_t *x, size_t m)
{
	for (size_t i = 1; i < m; i++) {
		const uint64_t v = x[i];
		size_t j = i;

		for (; j > 0 && x[j - 1] > v; j--)
			x[j] = x[j - 1];
		x[j] = v;
	}
}

/* Word a before word b in suffix order: by their bits, ties by comparing
 * on (*deep set past TIE_DEPTH). */
static inline int word_less(const struct bits_sort *bs, uint64_t a, uint64_t b, int *deep)
{
	if ((a ^ b) > bs->pmask)
		return a < b;
	return est_bits_suffix_less(bs->w, bs->n, a & bs->pmask, b & bs->pmask, deep);
}

/* x[0..m) in suffix order by a bottom-up merge sort through tmp (m
 * words), for a group too large for insertion sorts: many positions
 * whose words tie (long runs of equal bits: 8M first-order Markov bits
 * with P(stay) = 0.8 put a thousand in each of the all-zero and all-one
 * words).  0, or -EAGAIN when the ties are too deep or, all groups
 * together, too many: on repetitive bits (the low bytes of real clock
 * deltas repeat blocks of hundreds of bits) the suffix array is faster
 * than comparing on word by word. */
static int merge_words(struct bits_sort *bs, uint64_t *x, size_t m, uint64_t *tmp)
{
	uint64_t *from = x, *to = tmp;
	int deep = 0;
	/* the passes' comparisons, m per pass, at most */
	const size_t cost = m * (size_t)(64 - __builtin_clzll((uint64_t)m));

	if (cost > bs->tie_budget)
		return -EAGAIN;
	bs->tie_budget -= cost;

	for (size_t width = 1; width < m; width *= 2) {
		for (size_t lo = 0; lo < m; lo += 2 * width) {
			const size_t mid = lo + width < m ? lo + width : m;
			const size_t hi = lo + 2 * width < m ? lo + 2 * width : m;
			size_t i = lo, j = mid, k = lo;

			while (i < mid && j < hi)
				to[k++] = word_less(bs, from[j], from[i], &deep) ? from[j++] : from[i++];
			while (i < mid)
				to[k++] = from[i++];
			while (j < hi)
				to[k++] = from[j++];
		}
		if (deep)
			return -EAGAIN;
		from = from == x ? tmp : x;
		to = to == x ? tmp : x;
	}
	if (from != x)
		memcpy(x, from, m * sizeof(*x));
	return 0;
}

/* The LCP of the main-set words a and b: their xor's leading zeros, or
 * counted on past a tie (at most the shorter's length); -1 past
 * TIE_DEPTH.  A tie is most often decided by the two whole windows,
 * here (8M first-order Markov bits tie in 1.5M pairs of small groups: the
 * call for each was a fifth of the estimate). */
static inline int32_t word_lcp(const struct bits_sort *bs, uint64_t a, uint64_t b)
{
	const uint64_t d = a ^ b;
	const size_t p = a & bs->pmask, q = b & bs->pmask, lim = bs->n - (p > q ? p : q);
	uint64_t x;
	int deep = 0;
	size_t l;

	if (d > bs->pmask)
		return __builtin_clzll(d);
	x = est_window(bs->w, p) ^ est_window(bs->w, q);
	if (x)
		l = (size_t)__builtin_clzll(x);
	else
		l = est_bits_common_bits(bs->w, bs->n, p, q, &deep);
	return deep ? -1 : (int32_t)(l < lim ? l : lim);
}

/* The LCP of neighbours x[r - 1], x[r] in suffix order into lcp[1..m), and
 * the lcp-intervals below base through the stack st (m + 1 frames).  0 or
 * -EAGAIN. */
static int group_intervals(struct bits_sort *bs, const uint64_t *x, size_t m, unsigned base,
			   int32_t *lcp, struct frame *st)
{
	for (size_t r = 1; r < m; r++) {
		lcp[r] = word_lcp(bs, x[r - 1], x[r]);
		if (lcp[r] < 0)
			return -EAGAIN;
	}
	lcp_intervals(lcp, m, (int32_t)base, st, &bs->ts);
	return 0;
}

/* A group of m words sharing their top `base` bits, which no counting
 * pass splits further: sorted, ties put in suffix order, and the
 * lcp-intervals below base through the stack.  0, -EAGAIN or -ENOMEM. */
static int finish_group(struct bits_sort *bs, uint64_t *x, size_t m, unsigned base)
{
	uint64_t *tmp;
	int32_t *lcp;
	struct frame *st;
	int rc;

	if (m <= TIE_MAX) {
		sort_words(x, m);
		rc = est_bits_sort_ties(x, m, bs->pmask, bs->w, bs->n);
		return rc < 0 ? rc : group_intervals(bs, x, m, base, bs->lcp, bs->st);
	}
	tmp = malloc(m * sizeof(*tmp));
	lcp = malloc(m * sizeof(*lcp));
	st = malloc((m + 1) * sizeof(*st));
	rc = -ENOMEM;
	if (tmp && lcp && st) {
		rc = merge_words(bs, x, m, tmp);
		if (rc == 0)
			rc = group_intervals(bs, x, m, base, lcp, st);
	}
	free(tmp);
	free(lcp);
	free(st);
	return rc;
}

/* A group of m words sharing their top `base` bits, which no counting
 * pass splits further.  S[t] counts the pairs whose LCP is >= t, so each
 * pair adds one over (base, its LCP]: no order, no stack.  The group's
 * inner tuples are fewer than 35, so Q (which counts only from 35 on)
 * needs nothing from them beyond v.  Ties of 35 or more are sorted and
 * go through the stack.  0 or -EAGAIN. */
static int tally_group(struct bits_sort *bs, uint64_t *x, size_t m, unsigned base)
{
	uint64_t *dsum = bs->ts.dsum;

	if (m >= TUPLE_MIN_COUNT)
		return finish_group(bs, x, m, base);
	dsum[base + 1] += m * (m - 1) / 2;
	for (size_t i = 0; i + 1 < m; i++)
		for (size_t j = i + 1; j < m; j++) {
			const int32_t l = word_lcp(bs, x[i], x[j]);

			if (l < 0)
				return -EAGAIN;
			dsum[l + 1]--;
			if (l > bs->ts.v)
				bs->ts.v = l;
		}
	return 0;
}

/* Pair (i, j) of a group, j < i - 1, in order of i: a group of m words
 * has the first (m - 1)(m - 2) / 2 of them. */
static const uint8_t far_pair[][2] = {
	{ 2, 0 },
	{ 3, 0 }, { 3, 1 },
	{ 4, 0 }, { 4, 1 }, { 4, 2 },
	{ 5, 0 }, { 5, 1 }, { 5, 2 }, { 5, 3 },
	{ 6, 0 }, { 6, 1 }, { 6, 2 }, { 6, 3 }, { 6, 4 },
	{ 7, 0 }, { 7, 1 }, { 7, 2 }, { 7, 3 }, { 7, 4 }, { 7, 5 },
};
_Static_assert(sizeof(far_pair) / sizeof(far_pair[0]) == (GROUP_MAX - 1) * (GROUP_MAX - 2) / 2,
	       "far_pair[] holds the pairs of a group of GROUP_MAX");

/* The pairs among the groups of at most GROUP_MAX words x[0..len) holds,
 * at depth base (words in one group share their top base bits, words of
 * two differ there), of neighbours only: each word against the one
 * before, without a branch (a word starts a group about as often as not
 * on random bits).  The other pairs of a group of three or more are
 * far_pairs()'s, from the group's size (going on past the word before
 * while the group lasted missed a branch at every fourth word: 14.1 ->
 * 12.9 ms on a million random bits).  A pair counts from depth base on,
 * so the pass that made the groups sums only its larger groups there
 * (most of the others are empty or single words).  0 or -EAGAIN. */
static int flat_pairs(struct bits_sort *bs, const uint64_t *x, size_t len, unsigned base)
{
	uint64_t *dsum = bs->ts.dsum, pairs = 0;
	int32_t v = bs->ts.v;
	const int32_t b = (int32_t)base;

	for (size_t r = 1; r < len; r++) {
		const uint64_t d = x[r] ^ x[r - 1];
		int32_t l = __builtin_clzll(d | 1);
		int same;

		if (__builtin_expect(d <= bs->pmask, 0)) {	/* a tie */
			l = word_lcp(bs, x[r], x[r - 1]);
			if (l < 0)
				return -EAGAIN;
		}
		same = l >= b;
		pairs += (uint64_t)same;
		dsum[l + 1] -= (uint64_t)same;
		v = same && l > v ? l : v;
	}
	dsum[base] += pairs;
	bs->ts.v = v;
	return 0;
}

/* The pairs of a group of 3 <= m <= GROUP_MAX words that are not
 * neighbours.  0 or -EAGAIN. */
static int far_pairs(struct bits_sort *bs, const uint64_t *x, size_t m, unsigned base)
{
	const size_t count = (m - 1) * (m - 2) / 2;
	uint64_t *dsum = bs->ts.dsum;
	int32_t v = bs->ts.v;

	for (size_t p = 0; p < count; p++) {
		const int32_t l = word_lcp(bs, x[far_pair[p][0]], x[far_pair[p][1]]);

		if (l < 0)
			return -EAGAIN;
		dsum[l + 1]--;
		v = l > v ? l : v;
	}
	dsum[base] += count;
	bs->ts.v = v;
	return 0;
}

/* A group of m < TUPLE_MIN_COUNT words sharing their top base < u0 bits.
 * Q needs nothing from it (it counts from 35 on), and S[t] only t >= u >=
 * u0, so only its pairs that share their first u0 bits count: found by 6
 * bits of a multiplicative hash of their words' first min(u0, depth) bits
 * (chains of indices into x, 1-based); words that tie are read on from
 * their windows, each at most once, and pairs that differ there before u0
 * dropped.  (Splitting such a group as a larger one counted every pair at
 * every depth: 8M first-order Markov bits, u = u0 = 58 and words of 41
 * bits, put 3.7M words in 218,000 such groups, 1.4M pairs of them tied.
 * Keyed by the lowest 6 of those bits instead, the two runs of equal
 * bits, 000000 and 111111, took 17 % of such words each there, and the
 * ten patterns of one change 4 % each: the whole pass 184 against 166 ms;
 * uniform bits 95 both.)  0 or -EAGAIN. */
static int deep_pairs(struct bits_sort *bs, const uint64_t *x, size_t m, unsigned base)
{
	const unsigned kb = bs->u0 < bs->depth ? bs->u0 : bs->depth, sh = 64 - kb;
	/* a window's bits past those below u0 (0: no test on the windows) */
	const unsigned past = bs->u0 > bs->depth ? bs->u0 - bs->depth : 64;
	const unsigned wsh = past < 64 ? 64 - past : 0;
	uint8_t head[64], next[TUPLE_MIN_COUNT];
	uint64_t win[TUPLE_MIN_COUNT], have = 0, *dsum = bs->ts.dsum;

	memset(head, 0, sizeof(head));
	for (size_t i = 0; i < m; i++) {
		const unsigned h = (unsigned)(est_hash64(x[i] >> sh) >> 58);

		// cppcheck-suppress legacyUninitvar ; next[j - 1] was set when j - 1 entered the chain
		for (unsigned j = head[h]; j; j = next[j - 1]) {
			const size_t a = j - 1;
			const uint64_t d = x[a] ^ x[i];
			size_t l;

			if (d >> sh)
				continue;
			if (d > bs->pmask) {
				l = (size_t)__builtin_clzll(d);
			} else {
				/* tied words: their windows from bit depth on */
				const size_t p = x[a] & bs->pmask, q = x[i] & bs->pmask;
				const size_t lim = bs->n - (p > q ? p : q);
				uint64_t e;

				if (!(have >> a & 1)) {
					win[a] = est_window(bs->w, p + bs->depth);
					have |= 1ull << a;
				}
				if (!(have >> i & 1)) {
					win[i] = est_window(bs->w, q + bs->depth);
					have |= 1ull << i;
				}
				e = win[a] ^ win[i];
				if (wsh && e >> wsh)
					continue;	/* LCP below u0 */
				if (e) {
					l = bs->depth + (size_t)__builtin_clzll(e);
				} else {
					const int32_t deep = word_lcp(bs, x[a], x[i]);

					if (deep < 0)
						return -EAGAIN;
					l = (size_t)deep;
				}
				l = l < lim ? l : lim;
			}
			dsum[base + 1]++;
			dsum[l + 1]--;
			if ((int32_t)l > bs->ts.v)
				bs->ts.v = (int32_t)l;
		}
		next[i] = head[h];
		head[h] = (uint8_t)(i + 1);
	}
	return 0;
}

/* Whether a group of m words at depth base is split further (by
 * split_words()): the choice split_words() makes, and group_buckets() at
 * TOP_BITS, always below the words' depth. */
static inline int splits(const struct bits_sort *bs, size_t m, unsigned base)
{
	return m > GROUP_MAX && !(m < TUPLE_MIN_COUNT && base < bs->u0) && base < bs->depth;
}

/* Words x[0..len) that share their top `top` bits (top < depth), by the
 * next g bits (a counting pass into spare, len words): g grows with len,
 * one or two words a group on random bits, and stops at depth.  A group of
 * more than GROUP_MAX (skewed input) is split the same way on the bits
 * after, from spare back into x's place, which is free by then; the
 * others' pairs are counted where they lie.  0 or -EAGAIN. */
static int split_words(struct bits_sort *bs, uint64_t *x, uint64_t *spare,
		       size_t len, unsigned top, uint64_t shorts)
{
	/* Counts, then places, for the words at even and at odd indices
	 * apart in a large group (at1: the odd ones' places, then the
	 * groups' ends): a run of equal bits puts its positions in one group
	 * one after the other (skewed input, where groups grow large), and
	 * each count or place waited for the store of the one before (about
	 * 1 of 21 ms on biased bits; on random bits one set of counters is
	 * faster).  40 KiB of stack a level, at most (depth - 11) / 3 levels
	 * deep (a group split further has 9 words or more: 3 bits or more). */
	uint32_t at0[(1u << NEXT_BITS) + 1], at1[1u << NEXT_BITS], *end = at0;
	uint16_t list[1u << NEXT_BITS];	/* the groups of 3 or more */
	unsigned g = 1, sh, mask, base, nlist = 0;
	uint64_t *y = spare, *other = x, pairs = 0, most = 0;
	const int two = len > bs->large;
	size_t flat = 0, j = 0;
	int rc = 0;

	/* one bit less in a large group or below the first split (skewed
	 * input: uneven groups either way, and half the counters cost less
	 * than the larger groups' pairs: 20.2 -> 18.7 ms on biased bits) */
	while (g < NEXT_BITS && top + g < bs->depth &&
	       ((size_t)1 << g) <= (top > TOP_BITS || two ? len / 2 : len))
		g++;
	base = top + g;
	sh = 64 - base;
	mask = (1u << g) - 1;
	memset(at0, 0, (mask + 1) * sizeof(*at0));
	if (two) {
		memset(at1, 0, (mask + 1) * sizeof(*at1));
		for (; j + 1 < len; j += 2) {
			at0[(x[j] >> sh) & mask]++;
			at1[(x[j + 1] >> sh) & mask]++;
		}
		end = at1;
	}
	for (; j < len; j++)
		at0[(x[j] >> sh) & mask]++;
	/* the groups' places, and the list (stored every time, kept by the
	 * count: no branch; a loop over all groups after the scatter was 1 in
	 * 10 instructions on biased bits; two lists, of the groups split
	 * further and of the others, 0.8 ms slower) */
	for (unsigned k = 0, sum = 0; k <= mask; k++) {
		const uint32_t c0 = at0[k], c = two ? c0 + at1[k] : c0;

		list[nlist] = (uint16_t)k;
		nlist += c > 2;
		at0[k] = sum;
		if (two)
			at1[k] = sum + c0;
		sum += c;
	}
	at0[mask + 1] = (uint32_t)len;
	tally_levels(&bs->ts, at0, g, top, g - 1);
	j = 0;
	if (two)
		for (; j + 1 < len; j += 2) {
			spare[at0[(x[j] >> sh) & mask]++] = x[j];
			spare[at1[(x[j + 1] >> sh) & mask]++] = x[j + 1];
		}
	for (; j < len; j++)
		spare[at0[(x[j] >> sh) & mask]++] = x[j];
	/* end[k] is now where group k ends; the short positions whose windows
	 * fall in the group (shorts: their bits) */
	for (uint64_t m = shorts; m; m &= m - 1) {
		const unsigned i = (unsigned)__builtin_ctzll(m);
		const unsigned k = (unsigned)(bs->last.win[i] >> sh) & mask;
		const size_t from = k ? end[k - 1] : 0, size = end[k] - from;

		shorts_levels(&bs->last, i, end, k, g, top);
		if (!splits(bs, size, base))
			shorts_scan(&bs->last, i, y + from, size, base);
	}
	for (unsigned i = 0; i < nlist && rc == 0; i++) {
		const unsigned k = list[i];
		const size_t from = k ? end[k - 1] : 0, size = end[k] - from;

		if (size <= GROUP_MAX) {
			rc = far_pairs(bs, y + from, size, base);
			continue;
		}
		pairs += (uint64_t)size * (size - 1) / 2;
		most = size > most ? size : most;
		rc = flat_pairs(bs, y + flat, from - flat, base);
		if (rc == 0 && size < TUPLE_MIN_COUNT && base < bs->u0)
			rc = deep_pairs(bs, y + from, size, base);
		else if (rc == 0 && splits(bs, size, base))
			rc = split_words(bs, y + from, other + from, size, base,
					 shorts ? shorts_in(&bs->last, shorts, k, sh, mask) : 0);
		else if (rc == 0)
			rc = tally_group(bs, y + from, size, base);
		flat = end[k];
	}
	tally_depth(&bs->ts, (int32_t)base, pairs, most);
	return rc ? rc : flat_pairs(bs, y + flat, len - flat, base);
}

/* Buckets d0..d1 - 1 grouped and tallied, at depth TOP_BITS and below;
 * e: their words (start: their bounds, less start[d0]).  0 or -EAGAIN. */
static int group_buckets(struct bits_sort *bs, uint64_t *e, size_t d0, size_t d1,
			 const uint32_t *start)
{
	const size_t len = start[d1] - start[d0];
	uint64_t pairs = 0, most = 0;	/* the buckets split further */
	uint64_t shorts = 0;		/* the short positions followed down */
	size_t flat = 0;
	int rc = 0;

	/* The short positions whose windows fall in these buckets: followed
	 * down those split further, counted in the others. */
	for (size_t i = 0; i < bs->last.ns; i++) {
		const size_t b = bs->last.win[i] >> (64 - TOP_BITS);
		const size_t m = start[b + 1] - start[b];

		if (b < d0 || b >= d1)
			continue;
		if (splits(bs, m, TOP_BITS))
			shorts |= 1ull << i;
		else
			shorts_scan(&bs->last, (unsigned)i, e + start[b] - start[d0], m, TOP_BITS);
	}
	for (size_t d = d0; d < d1 && rc == 0; d++) {
		const size_t from = start[d] - start[d0], size = start[d + 1] - start[d];

		if (size <= GROUP_MAX) {
			if (size > 2)
				rc = far_pairs(bs, e + from, size, TOP_BITS);
			continue;
		}
		pairs += (uint64_t)size * (size - 1) / 2;
		most = size > most ? size : most;
		rc = flat_pairs(bs, e + flat, from - flat, TOP_BITS);
		if (rc == 0 && size < TUPLE_MIN_COUNT && TOP_BITS < bs->u0)
			rc = deep_pairs(bs, e + from, size, TOP_BITS);
		else if (rc == 0)
			rc = split_words(bs, e + from, bs->tmp, size, TOP_BITS,
					 shorts ? shorts_in(&bs->last, shorts, (unsigned)d, 64 - TOP_BITS,
							    (1u << TOP_BITS) - 1) : 0);
		flat = from + size;
	}
	tally_depth(&bs->ts, TOP_BITS, pairs, most);
	return rc ? rc : flat_pairs(bs, e + flat, len - flat, TOP_BITS);
}

/* The words in slabs, each slab's scattered from the bits and grouped
 * before the next one's: 8 bytes a word for all n were most of the
 * estimate's memory (64 MiB for 8M bits), and memory touched the first
 * time cost more here (about 1.5 ms a MiB) than finding a slab's
 * positions in the bits again.  A slab is one or more classes of buckets
 * that share their top PREFIX_BITS bits (SLAB_WORDS words at least,
 * about SLABS slabs); its positions are found 64 at a time by masks of
 * the classes' bits (every window scanned again was 13 ms a slab).
 * 10^6 bits took one slab of 8 MiB at 2^20 words at least; at 2^18, four
 * of 2 MiB: the whole --assess after a pause 54.5 -> 43.5 ms (medians of
 * 20 alternated), back to back the same. */
#define SLABS 4
#define SLAB_WORDS ((size_t)1 << 18)

/* The sort and the tallies; 0, -EAGAIN (too many or too deep ties) or
 * -ENOMEM.  start: 3 * 2^TOP_BITS + 1 zeros. */
static int sort_and_tally(struct bits_sort *bs, uint32_t *start)
{
	const size_t buckets = (size_t)1 << TOP_BITS, nm = bs->n - bs->depth + 1;
	const unsigned classes = 1u << PREFIX_BITS, cb = TOP_BITS - PREFIX_BITS;
	/* each bucket's counts, then next places, of the even and of the odd
	 * positions */
	uint32_t *next0 = start + buckets + 1, *next1 = next0 + buckets;
	size_t biggest = 0, cap, e_bytes;
	uint64_t *e;
	int rc = 0;

	bits_count_buckets(bs->w, nm, next0, next1);
	for (size_t d = 0, sum = 0; d < buckets; d++) {
		const uint32_t c0 = next0[d], c = c0 + next1[d];

		if (c > biggest)
			biggest = c;
		start[d] = next0[d] = (uint32_t)sum;
		next1[d] = (uint32_t)sum + c0;
		sum += c;
	}
	start[buckets] = (uint32_t)nm;
	tally_levels(&bs->ts, start, TOP_BITS, 0, TOP_BITS - 1);
	bs->large = 2 * (nm >> TOP_BITS);
	/* a slab: every class fits, SLAB_WORDS at least, all if they fit */
	cap = bs->slab ? bs->slab : nm / SLABS > SLAB_WORDS ? nm / SLABS : SLAB_WORDS;
	for (unsigned c = 0; c < classes; c++)
		if (start[(c + 1) << cb] - start[c << cb] > cap)
			cap = start[(c + 1) << cb] - start[c << cb];
	cap = cap < nm ? cap : nm;
	/* est_zalloc(): megabytes where the bits are skewed, each 4-KiB
	 * page fault costing more than the words that fill it */
	bs->tmp_bytes = biggest * sizeof(*bs->tmp) + 1;
	bs->tmp = est_zalloc(bs->tmp_bytes);
	e_bytes = cap * sizeof(*e) + 1;
	e = est_zalloc(e_bytes);
	if (!bs->tmp || !e) {
		est_zfree(e, e_bytes);
		return -ENOMEM;
	}
	bs->last.ns = bs->n - nm;
	for (size_t i = 0; i < bs->last.ns; i++)
		bs->last.win[i] = est_window(bs->w, nm + i);
	for (unsigned c0 = 0, c1; c0 < classes && rc == 0; c0 = c1) {
		const size_t d0 = (size_t)c0 << cb;
		size_t d1;

		for (c1 = c0 + 1; c1 < classes && start[(c1 + 1) << cb] - start[d0] <= cap; c1++)
			;
		d1 = (size_t)c1 << cb;
		if (d0 == 0 && d1 == buckets) {
			bits_scatter_buckets(bs->w, bs->pmask, nm, next0, next1, e);
		} else {
			for (size_t d = d0; d < d1; d++)
				next0[d] = start[d] - start[d0];
			bits_scatter_classes(bs->w, bs->pmask, nm, c0, c1, next0, e);
		}
		rc = group_buckets(bs, e, d0, d1, start);
	}
	if (rc == 0)
		shorts_tally(&bs->ts, &bs->last, bs->n, bs->depth, start);
	est_zfree(e, e_bytes);
	return rc;
}

int est_tuple_lrs_bits(const uint8_t *s, size_t n,
		       struct est_result *tuple, struct est_result *lrs)
{
	return est_tuple_lrs_bits_slabs(s, n, 0, tuple, lrs);
}

int est_tuple_lrs_bits_slabs(const uint8_t *s, size_t n, size_t slab,
			     struct est_result *tuple, struct est_result *lrs)
{
	return est_tuple_lrs_bits_tallies(s, n, slab, 0, NULL, NULL, 0, tuple, lrs);
}

int est_tuple_lrs_bits_tallies(const uint8_t *s, size_t n, size_t slab, int exact,
			       uint32_t *q, uint64_t *sum, size_t len,
			       struct est_result *tuple, struct est_result *lrs)
{
	const size_t words = n / 64 + 2, buckets = (size_t)1 << TOP_BITS;
	/* deepest interval: a tie counted on to TIE_DEPTH, plus a word */
	const size_t depths = TIE_DEPTH + 66;
	const unsigned pbits = 64 - (unsigned)__builtin_clzll((uint64_t)n - 1);
	struct bits_sort bs = {
		.n = n, .pmask = ((uint64_t)1 << pbits) - 1, .depth = 64 - pbits, .slab = slab,
		/* the clock-work kind of bench/assess.sh takes n / 12 */
		.tie_budget = n / 4,
	};
	uint64_t *w = est_zalloc(words * sizeof(*w));
	uint32_t *start = calloc(3 * buckets + 1, sizeof(*start));
	struct bits_runs runs;
	int rc = -ENOMEM;

	bs.w = w;
	bs.ts.maxc = calloc(depths, sizeof(*bs.ts.maxc));
	bs.ts.dsum = calloc(depths, sizeof(*bs.ts.dsum));
	if (!w || !start || !bs.ts.maxc || !bs.ts.dsum)
		goto out;
	est_pack_bits(s, n, w);
	bits_runs(w, n, &runs);
	/* A run of equal bits longer than depth - 1 + TIE_MAX: more than
	 * TIE_MAX positions tie (runs.longest stops at RUN_CAP, past it). */
	_Static_assert(RUN_CAP > 63 - 1 + TIE_MAX, "a run too long is seen as one");
	if (runs.longest > bs.depth - 1 + TIE_MAX) {
		rc = -EAGAIN;
		goto out;
	}
	bs.u0 = exact ? 1 : runs.u_bound;
	rc = bits_repetitive(w, n, bs.depth);
	if (rc != 0) {
		rc = rc < 0 ? rc : -EAGAIN;
		goto out;
	}
	rc = sort_and_tally(&bs, start);
	if (rc == 0 && bs.ts.v == 0)
		rc = -ENODATA;
	if (rc == 0) {
		tuple_finish(&bs.ts, n, tuple, lrs);
		for (size_t t = 0; t < len && t < depths; t++) {
			q[t] = bs.ts.maxc[t];
			sum[t] = bs.ts.dsum[t];
		}
	}
out:
	est_zfree(w, words * sizeof(*w));
	est_zfree(bs.tmp, bs.tmp_bytes);
	free(start);
	free(bs.ts.maxc);
	free(bs.ts.dsum);
	return rc;
}
