/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The string tables MultiMMC (§6.3.9) and LZ78Y (§6.3.10) over wide
 * samples count in, both in one pass (estimate_6_3_9_10_wide.c).  Not
 * part of the API.
 *
 * Both count, for every context x (the 1..16 samples before position i)
 * and follower y = s[i], how often y followed x, and predict x's most
 * frequent follower (ties: larger y).  A pair (a context of j samples and
 * its follower) is a string of j + 1 samples, and so is the context of
 * length j + 1 one position later.  So one table per string length L
 * (3..17) holds both: a string's slot counts it as a pair (count: how often
 * its last sample followed the others; 0: not a pair) and as a context
 * (best: its most frequent follower's count, 0: not a context; pred: that
 * follower), once for MultiMMC and once for LZ78Y (lz: 1), whose counts
 * differ (each has its own caps on new entries, LZ78Y starts later).  Half
 * the tables of a context table beside a pair table, a quarter of two
 * estimators' tables; a context's lookup is the slot its string's pair
 * lookup took one position earlier, and LZ78Y's pair the slot MultiMMC's
 * took at the same position: kept (pslot, cslot), they are read without
 * hashing, probing or comparing samples again.  And a pair's string, one
 * position on, becomes the string that drops its first sample and adds
 * the next one: each slot keeps the slot that string was in the last time
 * (and which sample it added), so that on samples that repeat (blocks of
 * real clock deltas come back hundreds of samples long) the next pair is
 * found without hashing or comparing samples either (the wide pass on a
 * capture of 10^6 clock deltas 0.33-0.37 -> 0.32 s, on uniform bytes
 * 0.39-0.41 -> 0.32-0.34 s; kept in a table of their own, in the order
 * the strings came, they were 1.8 times slower on less repetitive data:
 * an index, then the entry, then the samples).  Contexts of 1 and 2
 * samples are direct-indexed (pairs1, best1, pred1; ctx2). */
#ifndef RNGFEED_ESTIMATE_STRINGS_H
#define RNGFEED_ESTIMATE_STRINGS_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate_common.h"
#include "rngfeed/estimate_predict.h"

struct sslot {
	uint32_t tag;	/* 0: empty; else STR_KEY(hash) | MultiMMC's pred */
	uint32_t pos;	/* the string is s[pos .. pos + L - 1] */
	uint32_t count, best;	/* MultiMMC's */
	uint32_t lcount, lbest;	/* LZ78Y's */
	uint8_t lpred;
	uint8_t ny;	/* the sample that followed last time */
	uint8_t pad[2];
	uint32_t next;	/* and the slot (+ 1) of the string it made (shifted) */
};
_Static_assert(sizeof(struct sslot) == 32, "a slot is half a cache line");

/* The hash's top 24 bits, never all 0: a slot's tag, less its pred. */
#define STR_KEY(h) (((h) & 0xffffff00u) | 0x100u)
#define STR_SEED 0x12345678u
#define STR_MAX (CTX_MAX + 1)

struct stab {
	struct sslot *slot;
	size_t mask, used;
};

struct strs {
	const uint8_t *s;
	/* [lz]: MultiMMC's (0) and LZ78Y's (1) */
	uint32_t *pairs1[2], best1[2][256];
	uint8_t pred1[2][256];
	struct ctx2 *ctx2[2];
	struct stab t[STR_MAX + 1];	/* t[L]: strings of L samples, L >= 3 */
	/* Hashes by length of the strings that end at i - 1 (hp: contexts),
	 * at i (hc: pairs) and at i + 1 (hn: the next pairs, to prefetch
	 * their slots), computed as far as asked (hp_n, hc_n, hn_n); the next
	 * position's hp and hc are this one's hc and hn. */
	uint32_t ha[STR_MAX + 1], hb[STR_MAX + 1], hx[STR_MAX + 1], *hp, *hc, *hn;
	unsigned hp_n, hc_n, hn_n;
	/* By length L, the slot in t[L] of the string that ends at i - 1
	 * (cslot: this position's contexts) and at i (pslot: its pairs, the
	 * next position's contexts); -1: not known.  A slot once taken holds
	 * its string until its table grows (strs_put() forgets that length). */
	long sa[STR_MAX + 1], sb[STR_MAX + 1], *cslot, *pslot;
	size_t i;
	int started;
};

/* h[L] of the chain for the strings that end at s[end], extending it. */
static inline uint32_t strs_hash(const uint8_t *s, uint32_t *h, unsigned *done,
				 size_t end, unsigned len)
{
	while (*done < len) {
		++*done;
		h[*done] = hmix(h[*done - 1], s[end + 1 - *done]);
	}
	return h[len];
}

/* Where the string of hash h (or of tag h) starts looking: from its
 * STR_KEY() alone, so that a table that grows moves its strings by their
 * tags, without hashing them again. */
static inline size_t stab_home(const struct stab *t, uint32_t h)
{
	const uint64_t key = STR_KEY(h) >> 8;

	return (size_t)(est_hash64(key) >> 32) & t->mask;
}

/* The slot of the string at pos (its own, or the empty one it would take). */
static inline size_t stab_find(const struct stab *t, const uint8_t *s, uint32_t pos,
			       unsigned len, uint32_t h)
{
	const uint32_t key = STR_KEY(h);

	for (size_t at = stab_home(t, h);; at = (at + 1) & t->mask) {
		const struct sslot *e = &t->slot[at];

		if (e->tag == 0)
			return at;
		if ((e->tag & ~0xffu) == key && same_samples(s + e->pos, s + pos, len))
			return at;
	}
}

/* Puts the string at pos in the empty slot `at` (from stab_find()), first
 * doubling the table past 80 % full; returns its slot, or -ENOMEM. */
static inline long stab_put(struct stab *t, const uint8_t *s, size_t at, uint32_t pos,
			    unsigned len, uint32_t h)
{
	if ((t->used + 1) * 5 > (t->mask + 1) * 4) {
		const size_t cap = (t->mask + 1) * 2;
		struct stab nt = { .slot = est_zalloc(cap * sizeof(struct sslot)),
				   .mask = cap - 1, .used = t->used };

		if (!nt.slot)
			return -ENOMEM;
		for (size_t k = 0; k <= t->mask; k++) {
			const struct sslot *e = &t->slot[k];
			size_t to;

			if (!e->tag)
				continue;
			/* the strings are all different: the first empty slot */
			for (to = stab_home(&nt, e->tag); nt.slot[to].tag; to = (to + 1) & nt.mask)
				;
			nt.slot[to] = *e;
			nt.slot[to].next = 0;
		}
		est_zfree(t->slot, (t->mask + 1) * sizeof(*t->slot));
		*t = nt;
		at = stab_find(t, s, pos, len, h);
	}
	t->slot[at] = (struct sslot){ .tag = STR_KEY(h), .pos = pos };
	t->used++;
	return (long)at;
}

/* stab_put() into t[len]; a table that grew moved its strings, so the
 * slots kept for that length are forgotten. */
static inline long strs_put(struct strs *m, unsigned len, size_t at, uint32_t pos, uint32_t h)
{
	struct stab *t = &m->t[len];
	const size_t mask = t->mask;
	const long r = stab_put(t, m->s, at, pos, len, h);

	if (t->mask != mask)
		m->cslot[len] = m->pslot[len] = -1;
	return r;
}

static inline void strs_free(struct strs *m)
{
	for (unsigned lz = 0; lz < 2; lz++) {
		free(m->pairs1[lz]);
		free(m->ctx2[lz]);
	}
	for (unsigned l = 3; l <= STR_MAX; l++)
		if (m->t[l].slot)
			est_zfree(m->t[l].slot, (m->t[l].mask + 1) * sizeof(struct sslot));
	memset(m, 0, sizeof(*m));
}

/* The tables' first sizes (powers of 2): cap3 for length 3, twice as many
 * for each length more, at most most; they grow past 80 %. */
static inline int strs_init(struct strs *m, const uint8_t *s, size_t cap3, size_t most)
{
	memset(m, 0, sizeof(*m));
	m->s = s;
	m->hp = m->ha;
	m->hc = m->hb;
	m->hn = m->hx;
	m->cslot = m->sa;
	m->pslot = m->sb;
	for (unsigned lz = 0; lz < 2; lz++) {
		m->pairs1[lz] = calloc(256 * 256, sizeof(uint32_t));
		m->ctx2[lz] = calloc(256 * 256, sizeof(*m->ctx2[lz]));
		if (!m->pairs1[lz] || !m->ctx2[lz]) {
			strs_free(m);
			return -ENOMEM;
		}
	}
	for (unsigned l = 3; l <= STR_MAX; l++) {
		const size_t cap = cap3 << (l - 3) < most ? cap3 << (l - 3) : most;

		m->t[l] = (struct stab){ .slot = est_zalloc(cap * sizeof(struct sslot)),
					 .mask = cap - 1 };
		if (!m->t[l].slot) {
			strs_free(m);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Moves to position i: the contexts end at i - 1, the pairs at i. */
static inline void strs_at(struct strs *m, size_t i)
{
	uint32_t *h = m->hp;
	long *c = m->cslot;

	m->hp = m->hc;		/* what ended at i - 1 */
	m->hc = m->hn;		/* what ends at i */
	m->hn = h;
	m->cslot = m->pslot;
	m->pslot = c;
	if (m->started && i == m->i + 1) {
		m->hp_n = m->hc_n;
		m->hc_n = m->hn_n;
	} else {
		m->hp[0] = m->hc[0] = STR_SEED;
		m->hp_n = m->hc_n = 0;
		for (unsigned l = 0; l <= STR_MAX; l++)
			m->cslot[l] = -1;
	}
	for (unsigned l = 0; l <= STR_MAX; l++)
		m->pslot[l] = -1;
	m->hn[0] = STR_SEED;
	m->hn_n = 0;
	m->i = i;
	m->started = 1;
}

/* The pairs at i + 1 miss the caches (tables of MiBs, looked up at random):
 * their slots are fetched one position ahead, for the lengths 3..want. */
static inline void strs_prefetch(struct strs *m, size_t n, unsigned want)
{
	const size_t i = m->i;

	if (want > STR_MAX)
		want = STR_MAX;
	if (i + 1 >= n || want > i + 2)
		return;
	for (unsigned l = 3; l <= want; l++) {
		const uint32_t h = strs_hash(m->s, m->hn, &m->hn_n, i + 1, l);
		const struct stab *t = &m->t[l];

		__builtin_prefetch(&t->slot[stab_home(t, h)], 1);
	}
}

/* The context of length j (j <= i) to MultiMMC (lz 0) or LZ78Y (lz 1): its
 * most frequent follower's count (0: not a context) and that follower.
 * For j >= 3 *at is its slot in t[j] (or the empty one it would take). */
static inline __attribute__((always_inline)) uint32_t
strs_find(struct strs *m, unsigned j, int lz, uint8_t *pred, long *at)
{
	const uint8_t *s = m->s;
	const size_t i = m->i;
	const struct sslot *e;

	if (j == 1) {
		*pred = m->pred1[lz][s[i - 1]];
		return m->best1[lz][s[i - 1]];
	}
	if (j == 2) {
		const struct ctx2 *c = &m->ctx2[lz][(unsigned)s[i - 2] << 8 | s[i - 1]];

		*pred = c->pred;
		return c->count;
	}
	*at = m->cslot[j];
	if (*at < 0)
		*at = (long)stab_find(&m->t[j], s, (uint32_t)(i - j), j,
				      strs_hash(s, m->hp, &m->hp_n, i - 1, j));
	e = &m->t[j].slot[*at];
	if (!e->tag)
		return 0;
	*pred = lz ? e->lpred : (uint8_t)e->tag;
	return lz ? e->lbest : e->best;
}

/* The string of len samples that ended at i - 1, followed by y, made the
 * one in slot pa (their shift): kept in the former's slot, the next time
 * it is followed by y the latter is found without hashing or comparing. */
static inline void strs_link(struct strs *m, unsigned len, uint8_t y, long pa)
{
	const long from = m->cslot[len];

	if (from >= 0) {
		struct sslot *f = &m->t[len].slot[from];

		f->next = (uint32_t)pa + 1;
		f->ny = y;
	}
}

/* Counts follower y = s[i] after the context of length j, for MultiMMC
 * (lz 0) or LZ78Y (lz 1) (ctx_at: its slot from strs_find(), or -1; a
 * context not there is put in).  An existing pair is always counted; a
 * new one only if allow_new.  Returns 1 if it made a new pair, 0 if not,
 * -ENOMEM. */
static inline __attribute__((always_inline)) int
strs_add(struct strs *m, unsigned j, int lz, int allow_new, long ctx_at)
{
	const uint8_t *s = m->s;
	const size_t i = m->i;
	const uint8_t y = s[i];
	const uint32_t pos = (uint32_t)(i - j);
	struct stab *pt = &m->t[j + 1], *ct = &m->t[j];
	struct sslot *e;
	uint32_t c, h = 0;
	long pa = m->pslot[j + 1];
	int made = 0;

	if (j == 1)
		return len1_add(m->pairs1[lz], m->best1[lz], m->pred1[lz], s[i - 1], y, allow_new);
	/* The pair: the j + 1 samples at pos, in the table of that length
	 * (a slot kept is taken: no new string goes in, h is not needed). */
	if (pa < 0 && m->cslot[j + 1] >= 0) {
		const struct sslot *f = &pt->slot[m->cslot[j + 1]];

		if (f->next && f->ny == y)
			pa = (long)f->next - 1;
	}
	if (pa < 0) {
		h = strs_hash(s, m->hc, &m->hc_n, i, j + 1);
		pa = (long)stab_find(pt, s, pos, j + 1, h);
	}
	if (!pt->slot[pa].tag || !(lz ? pt->slot[pa].lcount : pt->slot[pa].count)) {
		if (!allow_new) {
			if (pt->slot[pa].tag) {
				m->pslot[j + 1] = pa;
				strs_link(m, j + 1, y, pa);
			}
			return 0;
		}
		if (!pt->slot[pa].tag) {
			pa = strs_put(m, j + 1, (size_t)pa, pos, h);
			if (pa < 0)
				return (int)pa;
		}
		made = 1;
	}
	m->pslot[j + 1] = pa;
	strs_link(m, j + 1, y, pa);
	c = lz ? ++pt->slot[pa].lcount : ++pt->slot[pa].count;
	if (j == 2) {
		struct ctx2 *x2 = &m->ctx2[lz][(unsigned)s[i - 2] << 8 | s[i - 1]];

		if (c > x2->count || (c == x2->count && y > x2->pred)) {
			x2->count = c;
			x2->pred = y;
		}
		return made;
	}
	/* The context: t[j] has not changed since strs_find() (only t[j + 1]
	 * took a string), so its slot still holds. */
	if (ctx_at < 0)
		ctx_at = m->cslot[j];
	if (ctx_at < 0)
		ctx_at = (long)stab_find(ct, s, pos, j, strs_hash(s, m->hp, &m->hp_n, i - 1, j));
	if (!ct->slot[ctx_at].tag) {
		ctx_at = strs_put(m, j, (size_t)ctx_at, pos, strs_hash(s, m->hp, &m->hp_n, i - 1, j));
		if (ctx_at < 0)
			return (int)ctx_at;
	}
	m->cslot[j] = ctx_at;
	e = &ct->slot[ctx_at];
	if (lz) {
		if (c > e->lbest || (c == e->lbest && y > e->lpred)) {
			e->lbest = c;
			e->lpred = y;
		}
	} else if (c > e->best || (c == e->best && y > (uint8_t)e->tag)) {
		e->best = c;
		e->tag = (e->tag & ~0xffu) | y;
	}
	return made;
}

#endif
