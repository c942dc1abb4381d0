/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by the SP 800-90B §6.3.5 t-tuple and §6.3.6 LRS files: the
 * tallies both ways of sorting the suffixes feed (estimate_6_3_5_6_tally.c),
 * the binary grouping (estimate_6_3_5_6_bits.c) and the suffix array
 * (estimate_6_3_5_6_tuple_lrs.c).  Not part of the API. */
#ifndef RNGFEED_ESTIMATE_TUPLE_H
#define RNGFEED_ESTIMATE_TUPLE_H

#include <stddef.h>
#include <stdint.h>

struct est_result;

#define TUPLE_MIN_COUNT 35	/* 90B: t-tuple uses tuples seen >= 35 times */

struct frame { int32_t h, lb; };

/* Per-depth tallies: maxc[t], the largest lcp-interval of depth t (swept
 * into Q[t] by tuple_finish()); dsum, S[t] as a difference array; v, the
 * deepest interval.  Both arrays hold v + 2 entries. */
struct tallies {
	uint32_t *maxc;
	uint64_t *dsum;
	int32_t v;
};

/* An lcp-interval of depth h, c suffixes, inside one of depth parent. */
static inline void tally(struct tallies *ts, int32_t parent, int32_t h, uint64_t c)
{
	const uint64_t pairs = c * (c - 1) / 2;

	if (c > ts->maxc[h])
		ts->maxc[h] = (uint32_t)c;
	ts->dsum[parent + 1] += pairs;
	ts->dsum[h + 1] -= pairs;
	if (h > ts->v)
		ts->v = h;
}

/* All groups of t-tuples at one depth t: their pairs, and the largest
 * (the binary grouping's passes, which see the groups themselves). */
static inline void tally_depth(struct tallies *ts, int32_t t, uint64_t pairs, uint64_t most)
{
	if (most < 2)
		return;
	if (most > ts->maxc[t])
		ts->maxc[t] = (uint32_t)most;
	ts->dsum[t] += pairs;
	ts->dsum[t + 1] -= pairs;
	if (t > ts->v)
		ts->v = t;
}

/* One step of lcp_intervals(): the suffix ranked r >= 1 has cur samples in
 * common with the one before (base for r = m, past the last), which closes
 * the intervals deeper than cur (their frames popped from st[0..*top]). */
static inline void interval_step(struct tallies *ts, struct frame *st, size_t *top,
				 size_t r, int32_t cur)
{
	int32_t lb = (int32_t)r - 1;

	/* The root frame (depth base) never leaves: cur >= base. */
	while (*top > 0 && cur < st[*top].h) {
		struct frame f = st[(*top)--];
		int32_t parent = cur > st[*top].h ? cur : st[*top].h;

		tally(ts, parent, f.h, (uint64_t)r - (uint64_t)f.lb);
		lb = f.lb;
	}
	if (cur > st[*top].h)
		st[++*top] = (struct frame){ cur, lb };
}

/* The lcp-intervals deeper than base among m suffixes in sorted order that
 * all share their first base samples (lcp[r] >= base: the common prefix of
 * the suffixes ranked r - 1 and r; lcp[0] unused).  st: m + 1 frames. */
void lcp_intervals(const int32_t *lcp, size_t m, int32_t base,
		   struct frame *st, struct tallies *ts);
/* The two estimates from the tallies of n samples (ts->v > 0). */
void tuple_finish(struct tallies *ts, size_t n,
		  struct est_result *tuple, struct est_result *lrs);

/* From the LCP array in sorted order (lcp[r]: the common prefix of the
 * suffixes ranked r - 1 and r; lcp[0] unused) and its maximum v > 0, the
 * two estimates.  Frees nothing it did not allocate. */
int tuple_from_lcp(const int32_t *lcp, size_t n, int32_t v,
		   struct est_result *tuple, struct est_result *lrs);

/* t-tuple and LRS of binary samples (n >= 128) by grouping 64-bit words;
 * -EAGAIN when too many positions tie (the caller then sorts suffixes). */
int est_tuple_lrs_bits(const uint8_t *s, size_t n,
		       struct est_result *tuple, struct est_result *lrs);
/* The same with the words grouped in slabs of at least `slab` words
 * (0: the default, about a quarter of n; tests take small ones). */
int est_tuple_lrs_bits_slabs(const uint8_t *s, size_t n, size_t slab,
			     struct est_result *tuple, struct est_result *lrs);
/* The same (exact: every pair counted, without the lower bound on u the
 * runs of equal bits give), and for t < len, Q[t] in q[t] and S[t] in
 * sum[t] as the estimates took them: S[t] exact for u <= t <= v, Q[t] for
 * t < u (where it is 35 or more); for tests. */
int est_tuple_lrs_bits_tallies(const uint8_t *s, size_t n, size_t slab, int exact,
			       uint32_t *q, uint64_t *sum, size_t len,
			       struct est_result *tuple, struct est_result *lrs);
/* t-tuple and LRS of n bits (a multiple of 8, n >= 128; else -EINVAL)
 * from the suffix array of their bytes (estimate_6_3_5_6_bits_merge.c):
 * for bits that repeat too much for the grouping; -EAGAIN where suffixes
 * at different bit offsets share so much (long runs of equal bits) that
 * comparing them would cost more than the suffix array of the bits. */
int est_tuple_lrs_bits_merge(const uint8_t *s, size_t n,
			     struct est_result *tuple, struct est_result *lrs);
/* The same, and where the bits' suffixes are merged, t-tuple and LRS of
 * their n / 8 bytes as samples from the same suffix array (*byte_rc: 0,
 * -ENODATA or -ENOMEM; left alone where the bytes' estimates were not
 * made). */
int est_tuple_lrs_bits_merge_bytes(const uint8_t *s, size_t n,
				   struct est_result *tuple, struct est_result *lrs,
				   struct est_result *btuple, struct est_result *blrs,
				   int *byte_rc);
/* t-tuple and LRS over libdivsufsort's suffix array, whatever the
 * alphabet (est_tuple_lrs() sorts binary input its own way first). */
int est_tuple_lrs_sa(const uint8_t *s, size_t n,
		     struct est_result *tuple, struct est_result *lrs);

#endif
