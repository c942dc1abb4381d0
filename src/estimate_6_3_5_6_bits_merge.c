// SPDX-License-Identifier: GPL-2.0-or-later
/* SP 800-90B §6.3.5 t-tuple and §6.3.6 LRS over binary samples whose
 * 64-bit words tie too much for the grouping (estimate_6_3_5_6_bits.c):
 * the low bytes of real clock deltas, whose bits repeat in long blocks.
 * The suffix array of the n bits came from libdivsufsort, a third of the
 * whole assessment's time on them; here it comes from the suffix array of
 * the n / 8 bytes the bits make, eight times shorter:
 *
 * The suffixes starting at bit 8i + c (one "class" c, 0 <= c < 8) are the
 * low 8 - c bits of byte i followed by the byte suffix i + 1, so their
 * order is those bits' value first, then the byte suffix's rank (the empty
 * one, after the last byte, first): one counting pass over the bytes'
 * suffix array puts all eight classes in order.  A tournament over the
 * eight merges them by comparing 64-bit windows, which decide at once but
 * where two suffixes share a block; on clock deltas almost all suffixes
 * that share 64 bits start at the same class, so few comparisons go deep.
 * Each suffix's common prefix with the one before it is counted as it
 * comes out, into the lcp-interval pass (estimate_6_3_5_6_tally.c) one
 * step at a time: neither the bits' suffix array nor their LCP array is
 * ever stored.  Where the two come from one class, as almost all do, that
 * prefix is the class's own, found in the counting pass: the bits the two
 * keys share, and where they are the same, the least bit LCP of the byte
 * suffixes ranked between theirs (those suffixes are in the bits' order
 * too).  Comparing windows instead cost 11 windows a bit on clock deltas,
 * whose neighbours share hundreds of bits; reading the keys' bytes there,
 * a cache miss a bit.
 *
 * Comparing on is what suffixes of different classes that share long
 * stretches make expensive (a long run of equal bits, where every class
 * looks alike: the length of the run in windows, per suffix in it): past a
 * budget of windows read, -EAGAIN, and the caller sorts the bits' suffixes
 * instead (a block repeated over and over costs nothing more: its
 * neighbours share their class). */
#include <divsufsort.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"
#include "rngfeed/estimate_tuple.h"
#include "estimate_6_3_5_6_ties.h"

#define CLASSES 8
/* Windows read per bit before giving up: most comparisons end on the
 * heads' first windows, kept, and a class's entries mostly come out a run
 * at a time (random bytes read 0.9 more a bit, clock deltas none); bits
 * that repeat without end cost thousands a bit where classes meet. */
#define WINDOWS_PER_BIT 16

struct merge {
	const uint64_t *w;	/* the n bits, packed (2 words spare) */
	const uint8_t *b;	/* the same as m bytes */
	size_t n, m;
	int64_t budget;		/* windows left to read */
	uint32_t *cls[CLASSES];	/* class c in order: byte indices i (bit 8i + c) */
	/* Class c's entries r - 1 and r: bits in common.  Class 0's are the
	 * bytes' own (lcp0); classes 1..7 share at most 7 bits more than two
	 * of those, so where lcp0 stays below 2^16 - 8 (any but long
	 * repeats) they keep theirs in 16 bits (lcp16; else lcp32): 14 of 64
	 * MiB less on 10^6 bytes, where fresh memory is most of the system
	 * time (see estimate_assess.c). */
	int32_t *lcp0;
	uint16_t *lcp16[CLASSES];
	int32_t *lcp32[CLASSES];
	size_t at[CLASSES];	/* the next of each class */
	/* The first 64 bits of each class's next suffix (past its end: 0s,
	 * which keep a suffix before any it is a prefix of), all 1s for a
	 * class used up: most comparisons end on them. */
	uint64_t hw[CLASSES];
};

/* Class c's entry `at` shares lcp bits with the one before it. */
static inline void set_class_lcp(struct merge *g, unsigned c, size_t at, int32_t lcp)
{
	if (g->lcp16[c])
		g->lcp16[c][at] = (uint16_t)lcp;
	else
		g->lcp32[c][at] = lcp;
}

static inline int32_t class_lcp(const struct merge *g, unsigned c, size_t at)
{
	if (c == 0)
		return g->lcp0[at];
	return g->lcp16[c] ? g->lcp16[c][at] : g->lcp32[c][at];
}

/* Bits the suffixes at p != q have in common, and which comes first, to
 * any depth (estimate_6_3_5_6_ties.h; the windows read counted in the
 * budget). */
static inline size_t common_bits(struct merge *g, size_t p, size_t q)
{
	int deep = 0;

	return bits_common(g->w, g->n, p, q, SIZE_MAX, &deep, &g->budget);
}

static inline int suffix_less(struct merge *g, size_t p, size_t q)
{
	int deep = 0;

	return bits_suffix_less(g->w, g->n, p, q, SIZE_MAX, &deep, &g->budget);
}

/* The next bit position of class c, or SIZE_MAX when it is used up. */
static inline size_t head(const struct merge *g, unsigned c)
{
	return g->at[c] < g->m ? (size_t)8 * g->cls[c][g->at[c]] + c : SIZE_MAX;
}

/* Class c's next entry (or none) as its head. */
static inline void advance(struct merge *g, unsigned c)
{
	const size_t p = head(g, c);

	g->hw[c] = p != SIZE_MAX ? est_window(g->w, p) : UINT64_MAX;
}

/* Class a's next suffix before class b's (a used-up class last). */
static inline int class_less(struct merge *g, unsigned a, unsigned b)
{
	size_t p, q;

	if (g->hw[a] != g->hw[b])
		return g->hw[a] < g->hw[b];
	p = head(g, a);
	q = head(g, b);
	if (p == SIZE_MAX || q == SIZE_MAX)
		return q == SIZE_MAX && p != SIZE_MAX;
	return suffix_less(g, p, q);
}

/* The bits' LCP array over the byte-aligned suffixes, in the bytes' order
 * (lcp[r]: bits in common of the suffixes at bytes sa[r - 1] and sa[r];
 * lcp[0] = 0): Kasai et al.'s pass in text order, each byte LCP at most one
 * less than the one before, and the first bytes that differ give the bits
 * past it.  rank: m entries of work.  Returns the largest. */
static int32_t byte_lcp(const uint8_t *b, size_t m, const int32_t *sa, int32_t *rank,
			int32_t *lcp)
{
	size_t h = 0;
	int32_t most = 0;

	for (size_t r = 0; r < m; r++)
		rank[sa[r]] = (int32_t)r;
	lcp[0] = 0;
	for (size_t i = 0; i < m; i++) {
		const size_t r = (size_t)rank[i];
		size_t j;

		if (r == 0) {
			h = 0;
			continue;
		}
		j = (size_t)sa[r - 1];
		while (i + h < m && j + h < m && b[i + h] == b[j + h])
			h++;
		lcp[r] = (int32_t)(8 * h);
		if (i + h < m && j + h < m)
			lcp[r] += __builtin_clz((unsigned)(b[i + h] ^ b[j + h])) - 24;
		most = lcp[r] > most ? lcp[r] : most;
		if (h > 0)
			h--;
	}
	return most;
}

/* Classes 1..7 in order from the bytes' suffix array sa (class 0 is sa,
 * its LCPs lcp0: byte_lcp()): counting sort on the low 8 - c bits of byte
 * i, in the order of the byte suffix i + 1, the empty one (i = m - 1)
 * first.  An entry placed after one of the same key shares the key's
 * 8 - c bits and then the least of lcp0 since that one's rank (a stack of
 * the ranks where lcp0 fell, lowest at the bottom, walked down from the
 * top: coarse classes' last ranks are recent, and the finer classes go on
 * from where the coarser stopped); the first of a key shares with the
 * entry before it the bits its key and the key before have in common. */
static void order_classes(struct merge *g, const int32_t *sa, const int32_t *lcp0,
			  int32_t *stack_rank, int32_t *stack_lcp)
{
	const uint8_t *b = g->b;
	const size_t m = g->m;
	uint32_t hist[256] = { 0 }, next[CLASSES][128];
	int32_t last[CLASSES][128];	/* the rank of the key's last entry */
	size_t top = 0;

	for (size_t i = 0; i < m; i++)
		hist[b[i]]++;
	for (unsigned c = 1; c < CLASSES; c++) {
		const unsigned keys = 1u << (8 - c), k = b[m - 1] & (keys - 1);
		uint32_t sum = 0;
		int before = -1;	/* the last key with entries */

		memset(next[c], 0, sizeof(next[c]));
		for (unsigned v = 0; v < 256; v++)
			next[c][v & (keys - 1)] += hist[v];
		for (unsigned key = 0; key < keys; key++) {
			const uint32_t cnt = next[c][key];

			next[c][key] = sum;
			if (cnt && before >= 0)
				set_class_lcp(g, c, sum,
					      __builtin_clz(key ^ (unsigned)before) - (int)(24 + c));
			if (cnt)
				before = (int)key;
			sum += cnt;
			last[c][key] = INT32_MIN;	/* none yet */
		}
		/* the empty suffix, ranked before all (rank -1) */
		last[c][k] = -1;
		g->cls[c][next[c][k]++] = (uint32_t)(m - 1);
	}
	for (size_t r = 0; r < m; r++) {
		const size_t j = (size_t)sa[r];
		const int32_t here = lcp0[r];
		size_t pos;

		/* the stack: ranks with LCPs increasing bottom to top, each the
		 * least from its rank to r */
		while (top > 0 && stack_lcp[top - 1] >= here)
			top--;
		stack_rank[top] = (int32_t)r;
		stack_lcp[top++] = here;
		if (j == 0)
			continue;
		pos = top - 1;	/* rank r: after any since */
		for (unsigned c = CLASSES - 1; c >= 1; c--) {
			const unsigned k = b[j - 1] & ((1u << (8 - c)) - 1);
			const int32_t since = last[c][k];
			const uint32_t at = next[c][k]++;

			g->cls[c][at] = (uint32_t)(j - 1);
			last[c][k] = (int32_t)r;
			if (since == INT32_MIN)	/* the key's first: set above */
				continue;
			/* least LCP over ranks since + 1 .. r: the deepest
			 * stack entry ranked after since (none after the
			 * empty suffix) */
			while (pos > 0 && stack_rank[pos - 1] > since)
				pos--;
			set_class_lcp(g, c, at, (int32_t)(8 - c) + (since < 0 ? 0 : stack_lcp[pos]));
		}
	}
}

/* How many of class c's entries from at[c] on come before the suffix at q
 * (at least the first, which is known to): a gallop, then halving. */
static size_t run_before(struct merge *g, unsigned c, size_t q)
{
	const size_t base = g->at[c], left = g->m - base;
	size_t lo = 1, hi = left, step = 1;

	while (lo + step - 1 < left) {
		const size_t probe = lo + step - 1;

		if (!suffix_less(g, (size_t)8 * g->cls[c][base + probe] + c, q)) {
			hi = probe;
			break;
		}
		lo = probe + 1;
		step *= 2;
	}
	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;

		if (suffix_less(g, (size_t)8 * g->cls[c][base + mid] + c, q))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A class that wins this many times in a row is taken a run at a time:
 * on clock deltas the classes come out in a few thousand runs. */
#define RUN_MIN 4

/* The tournament: loser[1..7] hold the losers of the matches on the way up
 * from the eight classes (leaf c is node 8 + c), loser[0] the winner.  Each
 * suffix out is tallied with its common prefix with the one before.  A
 * class on a streak gives all its entries before the runner-up's (the best
 * of the losers on its way up) at once.  0, or -EAGAIN past the budget. */
static int merge_and_tally(struct merge *g, struct tallies *ts, struct frame *st)
{
	unsigned loser[CLASSES], win[2 * CLASSES], last_class = CLASSES, streak = 0;
	size_t top = 0, prev = 0, r = 0;

	for (unsigned c = 0; c < CLASSES; c++) {
		win[CLASSES + c] = c;
		advance(g, c);
	}
	for (unsigned node = CLASSES - 1; node >= 1; node--) {
		const unsigned a = win[2 * node], b = win[2 * node + 1];

		if (class_less(g, a, b)) {
			win[node] = a;
			loser[node] = b;
		} else {
			win[node] = b;
			loser[node] = a;
		}
	}
	loser[0] = win[1];
	st[0] = (struct frame){ 0, 0 };
	while (r < g->n) {
		unsigned cur = loser[0];
		size_t run = 1;

		streak = cur == last_class ? streak + 1 : 0;
		if (streak >= RUN_MIN) {
			unsigned second = loser[(CLASSES + cur) / 2];

			for (unsigned node = (CLASSES + cur) / 4; node >= 1; node /= 2)
				if (class_less(g, loser[node], second))
					second = loser[node];
			run = head(g, second) == SIZE_MAX ? g->m - g->at[cur]
							  : run_before(g, cur, head(g, second));
			streak = 0;
		}
		/* one class's entries come out in its order: the one before
		 * from the same class is its entry before */
		for (size_t k = 0; k < run; k++, r++) {
			const size_t p = head(g, cur);

			if (r > 0)
				interval_step(ts, st, &top, r,
					      cur == last_class ? class_lcp(g, cur, g->at[cur])
								: (int32_t)common_bits(g, prev, p));
			prev = p;
			last_class = cur;
			g->at[cur]++;
		}
		advance(g, cur);
		for (unsigned node = (CLASSES + cur) / 2; node >= 1; node /= 2)
			if (class_less(g, loser[node], cur)) {
				const unsigned t = loser[node];

				loser[node] = cur;
				cur = t;
			}
		loser[0] = cur;
		if (g->budget < 0)
			return -EAGAIN;
	}
	interval_step(ts, st, &top, g->n, 0);
	return 0;
}

/* t-tuple and LRS of the m bytes as samples, from their bit LCPs lcp0
 * (lcp: m entries of work). */
static int byte_estimates(const int32_t *lcp0, size_t m, int32_t *lcp,
			  struct est_result *tuple, struct est_result *lrs)
{
	int32_t v = 0;

	memset(tuple, 0, sizeof(*tuple));
	memset(lrs, 0, sizeof(*lrs));
	tuple->h = lrs->h = -1.0;
	lcp[0] = 0;
	for (size_t r = 1; r < m; r++) {
		lcp[r] = lcp0[r] / 8;
		v = lcp[r] > v ? lcp[r] : v;
	}
	return v ? tuple_from_lcp(lcp, m, v, tuple, lrs) : -ENODATA;
}

/* Classes 1..7's LCP arrays, 16 bits an entry where lcp0's largest,
 * most, allows. */
static int class_lcps(struct merge *g, int32_t most, void **lcps, size_t *bytes)
{
	const size_t m = g->m;
	const int narrow = most < UINT16_MAX - 8;

	*bytes = (CLASSES - 1) * m * (narrow ? sizeof(uint16_t) : sizeof(int32_t));
	*lcps = est_zalloc(*bytes);
	if (!*lcps)
		return -ENOMEM;
	for (unsigned c = 1; c < CLASSES; c++) {
		if (narrow)
			g->lcp16[c] = (uint16_t *)*lcps + (c - 1) * m;
		else
			g->lcp32[c] = (int32_t *)*lcps + (c - 1) * m;
	}
	return 0;
}

/* The work on input est_tuple_lrs_bits_merge() took: its memory, then
 * the estimate. */
static int merge_bits(const uint8_t *s, size_t n, struct est_result *tuple,
		      struct est_result *lrs, struct est_result *btuple,
		      struct est_result *blrs, int *byte_rc)
{
	const size_t m = n / 8, words = n / 64 + 2;
	struct merge g = { .n = n, .m = m, .budget = (int64_t)(WINDOWS_PER_BIT * n) };
	/* Frames and tallies as deep as the longest repeat, which is not
	 * known before the end: mappings as long as n, touched only that
	 * deep. */
	struct tallies ts = { est_zreserve((n + 2) * sizeof(uint32_t)),
			      est_zreserve((n + 2) * sizeof(uint64_t)), 0 };
	struct frame *st = est_zreserve((n + 1) * sizeof(*st));
	uint64_t *w = est_zalloc(words * sizeof(*w));
	uint8_t *b = malloc(m);
	uint32_t *cls = est_zalloc(n * sizeof(*cls));
	int32_t *lcp0 = est_zalloc(m * sizeof(*lcp0));
	void *lcps = NULL;	/* classes 1..7's (lcp16 or lcp32) */
	size_t lcps_bytes = 0;
	/* order_classes()'s stack, m entries at most but as deep as the
	 * LCPs rise (a few hundred on clock deltas): mappings touched only
	 * that deep, not 8 MiB of fresh pages on 10^6 samples */
	int32_t *stack_rank = est_zreserve(m * sizeof(*stack_rank));
	int32_t *stack_lcp = est_zreserve(m * sizeof(*stack_lcp));
	int rc = -ENOMEM;

	if (ts.maxc && ts.dsum && st && w && b && cls && lcp0 && stack_rank && stack_lcp) {
		est_pack_bits(s, n, w);
		for (size_t i = 0; i < m; i++)
			b[i] = (uint8_t)(w[i / 8] >> (56 - 8 * (i % 8)));
		g.w = w;
		g.b = b;
		g.lcp0 = lcp0;
		for (unsigned c = 0; c < CLASSES; c++)
			g.cls[c] = cls + c * m;
		rc = divsufsort(b, (int32_t *)g.cls[0], (saidx_t)m) ? -EINVAL : 0;
	}
	if (rc == 0) {
		const int32_t *sa = (const int32_t *)g.cls[0];

		/* class 1's entries, made later, hold the bytes' rank first,
		 * then their LCPs in samples */
		const int32_t most = byte_lcp(b, m, sa, (int32_t *)g.cls[1], g.lcp0);

		if (btuple && blrs && byte_rc)
			*byte_rc = byte_estimates(g.lcp0, m, (int32_t *)g.cls[1], btuple, blrs);
		rc = class_lcps(&g, most, &lcps, &lcps_bytes);
		if (rc == 0) {
			order_classes(&g, sa, g.lcp0, stack_rank, stack_lcp);
			rc = merge_and_tally(&g, &ts, st);
		}
	}
	if (rc == 0 && ts.v == 0)
		rc = -ENODATA;
	if (rc == 0)
		tuple_finish(&ts, n, tuple, lrs);
	est_zfree(ts.maxc, (n + 2) * sizeof(uint32_t));
	est_zfree(ts.dsum, (n + 2) * sizeof(uint64_t));
	est_zfree(st, (n + 1) * sizeof(*st));
	est_zfree(w, words * sizeof(*w));
	est_zfree(cls, n * sizeof(*cls));
	est_zfree(lcp0, m * sizeof(*lcp0));
	est_zfree(lcps, lcps_bytes);
	est_zfree(stack_rank, m * sizeof(*stack_rank));
	est_zfree(stack_lcp, m * sizeof(*stack_lcp));
	free(b);
	return rc;
}

int est_tuple_lrs_bits_merge(const uint8_t *s, size_t n,
			     struct est_result *tuple, struct est_result *lrs)
{
	memset(tuple, 0, sizeof(*tuple));
	memset(lrs, 0, sizeof(*lrs));
	tuple->h = lrs->h = -1.0;
	if (n % 8 || n < 128 || n >= INT32_MAX)
		return -EINVAL;
	return merge_bits(s, n, tuple, lrs, NULL, NULL, NULL);
}

int est_tuple_lrs_bits_merge_bytes(const uint8_t *s, size_t n,
				   struct est_result *tuple, struct est_result *lrs,
				   struct est_result *btuple, struct est_result *blrs,
				   int *byte_rc)
{
	memset(tuple, 0, sizeof(*tuple));
	memset(lrs, 0, sizeof(*lrs));
	tuple->h = lrs->h = -1.0;
	if (n % 8 || n < 128 || n >= INT32_MAX || !btuple || !blrs || !byte_rc)
		return -EINVAL;
	return merge_bits(s, n, tuple, lrs, btuple, blrs, byte_rc);
}
