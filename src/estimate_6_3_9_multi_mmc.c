/* SP 800-90B §6.3.9 MultiMMC over wide samples (more than 1 bit).
 * Binary samples: estimate_6_3_9_10_binary.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"
#include "rngfeed/estimate_predict.h"

/* ================= §6.3.9 MultiMMC ================= */

/* ---- MultiMMC over wide samples: one table per string length ----
 * A pair (a context of j samples and the one that followed it) is a string
 * of j + 1 samples, and so is the context of length j + 1 one position
 * later.  So one table per string length L (3..17) holds both: a string's
 * slot counts it as a pair (count: how often its last sample followed the
 * others; 0: not a pair) and as a context (best: its most frequent
 * follower's count, 0: not a context; pred: that follower).  That is half
 * the tables of a context table beside a pair table per length (30 MiB at
 * most instead of 58, every page of which a random input touches), and a
 * context's lookup finds the cache line its string's pair lookup brought
 * in one position earlier.  Contexts of 1 and 2 samples stay direct-indexed
 * as in struct dict. */
struct sslot {
	uint32_t tag;	/* 0: empty; else STR_KEY(hash) | pred */
	uint32_t pos;	/* the string is s[pos .. pos + L - 1] */
	uint32_t count, best;
};

/* The hash's top 24 bits, never all 0: a slot's tag, less its pred. */
#define STR_KEY(h) (((h) & 0xffffff00u) | 0x100u)
#define STR_SEED 0x12345678u
#define STR_MAX (CTX_MAX + 1)

struct stab {
	struct sslot *slot;
	size_t mask, used;
};

struct mmc {
	const uint8_t *s;
	uint32_t *pairs1, best1[256];
	uint8_t pred1[256];
	struct ctx2 *ctx2;
	struct stab t[STR_MAX + 1];	/* t[L]: strings of L samples, L >= 3 */
	/* Hashes by length of the strings that end at i - 1 (hp: contexts),
	 * at i (hc: pairs) and at i + 1 (hn: the next pairs, to prefetch
	 * their slots), computed as far as asked (hp_n, hc_n, hn_n); the next
	 * position's hp and hc are this one's hc and hn. */
	uint32_t ha[STR_MAX + 1], hb[STR_MAX + 1], hx[STR_MAX + 1], *hp, *hc, *hn;
	unsigned hp_n, hc_n, hn_n;
	size_t i;
	int started;
};

/* The hash of the string of L samples that ends at s[end]: the last sample
 * first, as the chains of mmc_hash() build it. */
static uint32_t str_hash(const uint8_t *s, size_t end, unsigned len)
{
	uint32_t h = STR_SEED;

	for (unsigned l = 1; l <= len; l++)
		h = hmix(h, s[end + 1 - l]);
	return h;
}

/* h[L] of the chain for the strings that end at s[end], extending it. */
static inline uint32_t mmc_hash(const uint8_t *s, uint32_t *h, unsigned *done,
				size_t end, unsigned len)
{
	while (*done < len) {
		++*done;
		h[*done] = hmix(h[*done - 1], s[end + 1 - *done]);
	}
	return h[len];
}

/* The slot of the string at pos (its own, or the empty one it would take). */
static size_t stab_find(const struct stab *t, const uint8_t *s, uint32_t pos,
			unsigned len, uint32_t h)
{
	const uint32_t key = STR_KEY(h);

	for (size_t at = (size_t)(((uint64_t)h * 0x9E3779B97F4A7C15ull) >> 32) & t->mask;;
	     at = (at + 1) & t->mask) {
		const struct sslot *e = &t->slot[at];

		if (e->tag == 0)
			return at;
		if ((e->tag & ~0xffu) == key && same_samples(s + e->pos, s + pos, len))
			return at;
	}
}

/* Puts the string at pos in the empty slot `at` (from stab_find()), first
 * doubling the table past 80 % full; returns its slot, or -ENOMEM. */
static long stab_put(struct stab *t, const uint8_t *s, size_t at, uint32_t pos,
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

			if (e->tag)
				nt.slot[stab_find(&nt, s, e->pos, len,
						  str_hash(s, e->pos + len - 1, len))] = *e;
		}
		est_zfree(t->slot, (t->mask + 1) * sizeof(*t->slot));
		*t = nt;
		at = stab_find(t, s, pos, len, h);
	}
	t->slot[at] = (struct sslot){ .tag = STR_KEY(h), .pos = pos };
	t->used++;
	return (long)at;
}

static void mmc_free(struct mmc *m)
{
	free(m->pairs1);
	free(m->ctx2);
	for (unsigned l = 3; l <= STR_MAX; l++)
		if (m->t[l].slot)
			est_zfree(m->t[l].slot, (m->t[l].mask + 1) * sizeof(struct sslot));
	memset(m, 0, sizeof(*m));
}

static int mmc_init(struct mmc *m, const uint8_t *s, size_t cap)
{
	memset(m, 0, sizeof(*m));
	m->s = s;
	m->hp = m->ha;
	m->hc = m->hb;
	m->hn = m->hx;
	m->pairs1 = calloc(256 * 256, sizeof(uint32_t));
	m->ctx2 = calloc(256 * 256, sizeof(*m->ctx2));
	if (!m->pairs1 || !m->ctx2) {
		mmc_free(m);
		return -ENOMEM;
	}
	for (unsigned l = 3; l <= STR_MAX; l++) {
		m->t[l] = (struct stab){ .slot = est_zalloc(cap * sizeof(struct sslot)),
					 .mask = cap - 1 };
		if (!m->t[l].slot) {
			mmc_free(m);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Moves to position i: the contexts end at i - 1, the pairs at i. */
static inline void mmc_at(struct mmc *m, size_t i)
{
	uint32_t *h = m->hp;

	m->hp = m->hc;		/* what ended at i - 1 */
	m->hc = m->hn;		/* what ends at i */
	m->hn = h;
	if (m->started && i == m->i + 1) {
		m->hp_n = m->hc_n;
		m->hc_n = m->hn_n;
	} else {
		m->hp[0] = m->hc[0] = STR_SEED;
		m->hp_n = m->hc_n = 0;
	}
	m->hn[0] = STR_SEED;
	m->hn_n = 0;
	m->i = i;
	m->started = 1;
}

/* The pairs at i + 1 miss the caches (2 MiB tables, looked up at random):
 * their slots are fetched one position ahead, for as many lengths as
 * position i - 1 looked up (and one more). */
static inline void mmc_prefetch(struct mmc *m, size_t n)
{
	const size_t i = m->i;
	unsigned want = m->hp_n + 1;

	if (want > STR_MAX)
		want = STR_MAX;
	if (i + 1 >= n || want > i + 2)
		return;
	for (unsigned l = 3; l <= want; l++) {
		const uint32_t h = mmc_hash(m->s, m->hn, &m->hn_n, i + 1, l);
		const struct stab *t = &m->t[l];

		__builtin_prefetch(&t->slot[(size_t)(((uint64_t)h * 0x9E3779B97F4A7C15ull) >> 32) & t->mask], 1);
	}
}

/* Is the context of length j known, and what does it predict?  For j >= 3
 * *at is its slot in t[j] (or the empty one it would take). */
static inline int mmc_find(struct mmc *m, unsigned j, uint8_t *pred, long *at)
{
	const uint8_t *s = m->s;
	const size_t i = m->i;
	const struct sslot *e;

	if (j == 1) {
		*pred = m->pred1[s[i - 1]];
		return m->best1[s[i - 1]] != 0;
	}
	if (j == 2) {
		const struct ctx2 *c = &m->ctx2[(unsigned)s[i - 2] << 8 | s[i - 1]];

		*pred = c->pred;
		return c->count != 0;
	}
	*at = (long)stab_find(&m->t[j], s, (uint32_t)(i - j), j,
			      mmc_hash(s, m->hp, &m->hp_n, i - 1, j));
	e = &m->t[j].slot[*at];
	*pred = (uint8_t)e->tag;
	return e->tag && e->best;
}

/* Counts follower y = s[i] after the context of length j (ctx_at: its slot
 * from mmc_find(), or -1).  An existing pair is always counted; a new one
 * only if allow_new.  Returns 1 if it made a new pair, 0 if not, -ENOMEM. */
static int mmc_add(struct mmc *m, unsigned j, int allow_new, long ctx_at)
{
	const uint8_t *s = m->s;
	const size_t i = m->i;
	const uint8_t y = s[i];
	const uint32_t pos = (uint32_t)(i - j);
	struct stab *pt = &m->t[j + 1], *ct = &m->t[j];
	struct sslot *e;
	uint32_t c, h;
	long pa;
	int made = 0;

	if (j == 1)
		return len1_add(m->pairs1, m->best1, m->pred1, s[i - 1], y, allow_new);
	/* The pair: the j + 1 samples at pos, in the table of that length. */
	h = mmc_hash(s, m->hc, &m->hc_n, i, j + 1);
	pa = (long)stab_find(pt, s, pos, j + 1, h);
	if (!pt->slot[pa].tag || !pt->slot[pa].count) {
		if (!allow_new)
			return 0;
		if (!pt->slot[pa].tag) {
			pa = stab_put(pt, s, (size_t)pa, pos, j + 1, h);
			if (pa < 0)
				return (int)pa;
		}
		made = 1;
	}
	c = ++pt->slot[pa].count;
	if (j == 2) {
		struct ctx2 *x2 = &m->ctx2[(unsigned)s[i - 2] << 8 | s[i - 1]];

		if (c > x2->count || (c == x2->count && y > x2->pred)) {
			x2->count = c;
			x2->pred = y;
		}
		return made;
	}
	/* The context: t[j] has not changed since mmc_find() (only t[j + 1]
	 * took a string), so its slot still holds. */
	h = mmc_hash(s, m->hp, &m->hp_n, i - 1, j);
	if (ctx_at < 0)
		ctx_at = (long)stab_find(ct, s, pos, j, h);
	if (!ct->slot[ctx_at].tag) {
		ctx_at = stab_put(ct, s, (size_t)ctx_at, pos, j, h);
		if (ctx_at < 0)
			return (int)ctx_at;
	}
	e = &ct->slot[ctx_at];
	if (c > e->best || (c == e->best && y > (uint8_t)e->tag)) {
		e->best = c;
		e->tag = (e->tag & ~0xffu) | y;
	}
	return made;
}

static int mmc_wide(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	struct mmc m;
	uint64_t score[CTX_MAX] = { 0 };
	uint32_t entries[CTX_MAX] = { 0 };
	struct tally t = { 0, 0, 0 };
	unsigned winner = 0;
	int rc;

	/* At most MMC_MAX_ENTRIES pairs and as many contexts per length: sized
	 * at once for the pairs (16 bytes a slot, 2^17 slots, 15 lengths: 30
	 * MiB) rather than growing through page faults and rehashes; on a
	 * random input the contexts are the same strings.  A table that must
	 * hold more grows. */
	{
		size_t cap = 1024, want = n < MMC_MAX_ENTRIES ? n : MMC_MAX_ENTRIES;

		while (cap * 4 < want * 5)
			cap *= 2;
		rc = mmc_init(&m, s, cap);
	}
	if (rc < 0)
		return rc;
	/* The pairs whose context starts at s[0] (context length i for the
	 * sample at i) come first: they precede every prediction that can use
	 * them, and the main loop below starts its contexts at s[1]. */
	for (size_t i = 1; i <= CTX_MAX && i < n - 1; i++) {
		mmc_at(&m, i);
		rc = mmc_add(&m, (unsigned)i, 1, -1);
		if (rc < 0)
			goto out;
		entries[i - 1] = 1;
	}
	for (size_t i = 2; i < n; i++) {
		unsigned cur = winner, max = i - 1 < CTX_MAX ? (unsigned)(i - 1) : CTX_MAX;
		int found = 1;

		mmc_at(&m, i);
		mmc_prefetch(&m, n);
		for (unsigned j = 1; j <= max; j++) {
			uint8_t pred = 0;
			long at = -1;
			unsigned sb = j - 1;

			/* A context whose shorter suffix is unknown is unknown
			 * too (90B's dictionaries grow shortest first). */
			if (found)
				found = mmc_find(&m, j, &pred, &at);
			if (found) {
				if (pred == s[i]) {
					if (++score[sb] >= score[winner])
						winner = sb;
					if (sb == cur)
						tally(&t, 1);
				} else if (sb == cur) {
					tally(&t, 0);
				}
				rc = mmc_add(&m, j, entries[sb] < MMC_MAX_ENTRIES, at);
				if (rc < 0)
					goto out;
				entries[sb] += (uint32_t)rc;
			} else if (entries[sb] < MMC_MAX_ENTRIES) {
				rc = mmc_add(&m, j, 1, at);
				if (rc < 0)
					goto out;
				entries[sb]++;
			}
		}
	}
	est_prediction_bound(t.c, n - 2, t.longest, k, r);
	rc = 0;
out:
	mmc_free(&m);
	return rc;
}

int est_multi_mmc(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	int rc = est_check_literal(s, n, k);

	if (rc < 0)
		return rc;
	if (n < 3)
		return -ENODATA;
	if (k == 2) {
		struct est_result lz;	/* computed alongside, not wanted here */

		rc = est_mmc_lz78y_binary(s, n, r, &lz);
		return rc < 0 ? rc : 0;
	}
	return mmc_wide(s, n, k, r);
}
