/* SP 800-90B §6.3.10 LZ78Y over wide samples (more than 1 bit): its
 * dictionary in hash tables.  Binary samples: estimate_6_3_9_10_binary.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"
#include "rngfeed/estimate_predict.h"

/* ================= dictionaries for MultiMMC and LZ78Y ================= */
/* Both count, for every context x (the 1..16 samples before position i)
 * and follower y, how often y followed x, and predict x's most frequent
 * follower (ties: larger y).  Binary samples index flat arrays by the
 * context's bits (estimate_6_3_9_10_binary.c); wider ones use these
 * open-addressing hash tables keyed by positions in the sample buffer (a
 * key is the substring there, so nothing is copied).  Tables grow by
 * doubling; each holds at most the number of distinct keys seen. */

/* A slot is empty when its hash is 0 (hashes are made odd).  A slot's
 * fields sit together (16 bytes, four to a cache line): a lookup past the
 * caches costs one miss for the hash, the key's position and the counts,
 * where separate arrays cost one miss each. */
struct hslot {
	uint32_t hash, pos;	/* the key is the substring at pos */
	uint32_t count;		/* pair's count, context's best */
	uint8_t pred;		/* contexts only: the prediction */
};

struct htab {
	struct hslot *slot;
	size_t mask, used;
};


static void htab_free(struct htab *t)
{
	if (t->slot)
		est_zfree(t->slot, (t->mask + 1) * sizeof(*t->slot));
	memset(t, 0, sizeof(*t));
}

static int htab_init(struct htab *t, size_t cap)
{
	struct hslot *sl = est_zalloc(cap * sizeof(*sl));

	if (!sl)
		return -ENOMEM;
	*t = (struct htab){ .slot = sl, .mask = cap - 1, .used = 0 };
	return 0;
}

/* Where the key of hash h starts looking: from the high bits of a
 * multiplication (hmix's low bits depend on the low bits of the samples
 * only). */
static inline size_t htab_home(const struct htab *t, uint32_t h)
{
	return (size_t)(((uint64_t)h * 0x9E3779B97F4A7C15ull) >> 32) & t->mask;
}

/* The slot of the key at pos (its own, or the empty one it would take). */
static size_t htab_find(const struct htab *t, const uint8_t *s,
			uint32_t pos, unsigned len, uint32_t h)
{
	for (size_t at = htab_home(t, h);;
	     at = (at + 1) & t->mask) {
		const struct hslot *e = &t->slot[at];

		if (e->hash == 0)
			return at;
		if (e->hash == h && same_samples(s + e->pos, s + pos, len))
			return at;
	}
}

/* Room for one more key: grows (doubling) past 80 % full. */
static int htab_grow(struct htab *t, const uint8_t *s, unsigned len)
{
	struct htab nt;
	int rc;

	if ((t->used + 1) * 5 <= (t->mask + 1) * 4)
		return 0;
	rc = htab_init(&nt, (t->mask + 1) * 2);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i <= t->mask; i++) {
		if (t->slot[i].hash) {
			size_t at = htab_find(&nt, s, t->slot[i].pos, len, t->slot[i].hash);

			nt.slot[at] = t->slot[i];
		}
	}
	nt.used = t->used;
	htab_free(t);
	*t = nt;
	return 0;
}

/* Inserts the key at pos in the empty slot `at` (from htab_find()),
 * growing first if needed; returns its slot or -ENOMEM. */
static long htab_put(struct htab *t, const uint8_t *s, size_t at,
		     uint32_t pos, unsigned len, uint32_t h)
{
	if ((t->used + 1) * 5 > (t->mask + 1) * 4) {
		int rc = htab_grow(t, s, len);

		if (rc < 0)
			return rc;
		at = htab_find(t, s, pos, len, h);
	}
	t->slot[at] = (struct hslot){ .hash = h, .pos = pos, .count = 0, .pred = 0 };
	t->used++;
	return (long)at;
}

struct dict {
	const uint8_t *s;
	/* Length 1 is the busiest and has only 256 contexts: flat arrays,
	 * pairs[x << 8 | y], best[x] (0: x not there), pred[x]. */
	uint32_t *pairs1, best1[256];
	uint8_t pred1[256];
	/* Length 2's 65,536 contexts are direct-indexed too (x2 = the two
	 * samples): on wide random samples every one of them turns up, and
	 * looked up at every position they are a cache miss each in a hash
	 * table.  count 0: not there. */
	struct ctx2 *ctx2;
	struct htab ctx[CTX_MAX], pair[CTX_MAX]; /* lengths 3..16, 2..16 */
	/* Per position, from dict_at() on, as far as asked (dict_h()): */
	size_t i;
	uint32_t h[CTX_MAX + 1];	/* hash of the context of length j */
	unsigned hn;			/* h[0..hn] computed */
	/* The same for position next_i, computed by dict_prefetch(). */
	uint32_t next_h[CTX_MAX + 1];
	unsigned next_hn;
	size_t next_i;
	/* The slot dict_find() last found, for dict_add() at the same place. */
	size_t found_i, found_at;
	unsigned found_j;
};

static void dict_free(struct dict *d)
{
	free(d->pairs1);
	free(d->ctx2);
	for (unsigned j = 0; j < CTX_MAX; j++) {
		htab_free(&d->ctx[j]);
		htab_free(&d->pair[j]);
	}
}

/* cap: the tables' first size (a power of 2); they grow past 80 %. */
static int dict_init(struct dict *d, const uint8_t *s, size_t cap)
{
	memset(d, 0, sizeof(*d));
	d->s = s;
	d->pairs1 = calloc(256 * 256, sizeof(uint32_t));
	d->ctx2 = calloc(256 * 256, sizeof(*d->ctx2));
	if (!d->pairs1 || !d->ctx2) {
		dict_free(d);
		return -ENOMEM;
	}
	for (unsigned j = 1; j < CTX_MAX; j++) {
		int rc = j == 1 ? 0 : htab_init(&d->ctx[j], cap);

		if (rc == 0)
			rc = htab_init(&d->pair[j], cap);
		if (rc < 0) {
			dict_free(d);
			return rc;
		}
	}
	return 0;
}

/* Prepares the contexts ending just before position i (lengths 1..max). */
static inline void dict_at(struct dict *d, size_t i)
{
	d->i = i;
	if (d->next_i == i && d->next_hn) {
		memcpy(d->h, d->next_h, (d->next_hn + 1) * sizeof(d->h[0]));
		d->hn = d->next_hn;
		return;
	}
	d->h[0] = 0x12345678u;
	d->hn = 0;
}

/* The contexts at position i + 1 and their pairs miss the caches (a table
 * per length, 16-byte slots, looked up at random, each lookup waiting for
 * the one before): their slots are fetched one position ahead, for the
 * lengths 2..want, while position i is worked on.  Where every length is
 * in the dictionary (repetitive samples: the low bytes of real clock
 * deltas) that is 30 misses a sample, which otherwise come one after the
 * other. */
static inline void dict_prefetch(struct dict *d, size_t n, unsigned want)
{
	const size_t i = d->i + 1;
	uint32_t *h = d->next_h;

	if (i >= n)
		return;
	d->next_i = i;
	d->next_hn = want;
	h[0] = 0x12345678u;
	h[1] = hmix(h[0], d->s[i - 1]) | 1u;
	__builtin_prefetch(&d->ctx2[(unsigned)d->s[i - 2] << 8 | d->s[i - 1]], 1);
	for (unsigned j = 2; j <= want; j++) {
		const struct htab *pt = &d->pair[j - 1];

		h[j] = hmix(h[j - 1], d->s[i - j]) | 1u;
		if (j >= 3)
			__builtin_prefetch(&d->ctx[j - 1].slot[htab_home(&d->ctx[j - 1], h[j])], 1);
		__builtin_prefetch(&pt->slot[htab_home(pt, hmix(h[j] ^ 0xa5a5a5a5u, d->s[i]) | 1u)], 1);
	}
}

/* The hash of the context of length j at this position.  Computed when
 * first asked: once the dictionary is full a step looks up a few short
 * contexts, and the hashes of all 16 are a chain of dependent steps. */
static inline uint32_t dict_h(struct dict *d, unsigned j)
{
	while (d->hn < j) {
		d->hn++;
		d->h[d->hn] = hmix(d->h[d->hn - 1], d->s[d->i - d->hn]) | 1u;
	}
	return d->h[j];
}

/* Context of length j: does it exist, and what does it predict? */
static inline int dict_find(struct dict *d, unsigned j, uint8_t *pred, uint32_t *count)
{
	const struct htab *t = &d->ctx[j - 1];
	size_t at;

	if (j == 1) {
		const uint8_t x = d->s[d->i - 1];

		*pred = d->pred1[x];
		*count = d->best1[x];
		return *count != 0;
	}
	if (j == 2) {
		const struct ctx2 *e = &d->ctx2[(unsigned)d->s[d->i - 2] << 8 | d->s[d->i - 1]];

		*pred = e->pred;
		*count = e->count;
		return e->count != 0;
	}
	at = htab_find(t, d->s, (uint32_t)(d->i - j), j, dict_h(d, j));
	if (!t->slot[at].hash)
		return 0;
	d->found_i = d->i;
	d->found_j = j;
	d->found_at = at;
	*pred = t->slot[at].pred;
	*count = t->slot[at].count;
	return 1;
}

/* Counts follower y = s[i] after the context of length j.  An existing pair
 * is always counted; a new one only if allow_new.  Returns 1 if it made a
 * new pair, 0 if not, -ENOMEM. */
static int dict_add(struct dict *d, unsigned j, int allow_new)
{
	const uint8_t y = d->s[d->i];
	uint32_t pos = (uint32_t)(d->i - j), hp, c;
	struct htab *pt = &d->pair[j - 1], *ct = &d->ctx[j - 1];
	long pa, ca;
	int made = 0;

	if (j == 1)
		return len1_add(d->pairs1, d->best1, d->pred1, d->s[d->i - 1], y, allow_new);

	/* The pair's key is the context and y: the j + 1 samples at pos. */
	hp = hmix(dict_h(d, j) ^ 0xa5a5a5a5u, y) | 1u;
	pa = (long)htab_find(pt, d->s, pos, j + 1, hp);
	if (!pt->slot[pa].hash) {
		if (!allow_new)
			return 0;
		pa = htab_put(pt, d->s, (size_t)pa, pos, j + 1, hp);
		if (pa < 0)
			return (int)pa;
		made = 1;
	}
	c = ++pt->slot[pa].count;
	if (j == 2) {
		struct ctx2 *e = &d->ctx2[(unsigned)d->s[d->i - 2] << 8 | d->s[d->i - 1]];

		if (c > e->count || (c == e->count && y > e->pred)) {
			e->count = c;
			e->pred = y;
		}
		return made;
	}
	if (d->found_j == j && d->found_i == d->i)
		ca = (long)d->found_at;	/* found just now; nothing moved it */
	else
		ca = (long)htab_find(ct, d->s, pos, j, dict_h(d, j));
	if (!ct->slot[ca].hash) {
		ca = htab_put(ct, d->s, (size_t)ca, pos, j, dict_h(d, j));
		if (ca < 0)
			return (int)ca;
	}
	{
		struct hslot *e = &ct->slot[ca];

		if (c > e->count || (c == e->count && y > e->pred)) {
			e->count = c;
			e->pred = y;
		}
	}
	return made;
}

/* ================= §6.3.10 LZ78Y ================= */

/* One LZ78Y step once the dictionary is full (no context enters it any
 * more, only followers are counted): the same result as trying all 16
 * lengths, with fewer lookups.  A context in the dictionary has its shorter
 * suffixes there too (each step adds the lengths it lacks, longest first),
 * except those the step that filled it added (at fill_i, lengths fill_j..16,
 * whose shorter suffixes may have found no room).  So the lengths present
 * are 1..J (J: the first absent, minus one) and any of the filling step's
 * contexts that the current one repeats. */
static int lz78y_full_step(struct dict *d, size_t fill_i, unsigned fill_j,
			   uint32_t *best, uint8_t *pred, int *have, unsigned *reach)
{
	uint8_t y[LZ_B + 1];
	uint32_t cnt[LZ_B + 1];
	unsigned present = 0, jj = 1;	/* bit j: length j present */

	for (; jj <= LZ_B && dict_find(d, jj, &y[jj], &cnt[jj]); jj++)
		present |= 1u << jj;
	*reach = jj;	/* the lengths looked up */
	/* The filling step's contexts end where it was: the current one
	 * repeats those of the lengths up to where the two first differ
	 * (looking back from their ends), none longer. */
	{
		unsigned same = 0;	/* samples the two contexts share */

		while (same < LZ_B && d->s[fill_i - 1 - same] == d->s[d->i - 1 - same])
			same++;
		for (unsigned j = jj + 1 > fill_j ? jj + 1 : fill_j; j <= same; j++)
			if (dict_find(d, j, &y[j], &cnt[j]))
				present |= 1u << j;
	}
	for (unsigned j = LZ_B; j >= 1; j--) {
		int rc;

		if (!(present & (1u << j)))
			continue;
		if (cnt[j] > *best) {
			*best = cnt[j];
			*pred = y[j];
			*have = 1;
		}
		rc = dict_add(d, j, 1);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int est_lz78y(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	struct dict d;
	struct tally t = { 0, 0, 0 };
	uint32_t dict_size = 0;
	size_t fill_i = 0;
	unsigned fill_j = 1, want = LZ_B;	/* lengths to fetch ahead */
	int rc = est_check_literal(s, n, k);

	if (rc < 0)
		return rc;
	if (n < LZ_B + 2)
		return -ENODATA;
	if (k == 2) {
		struct est_result mmc;	/* computed alongside, not wanted here */

		rc = est_mmc_lz78y_binary(s, n, &mmc, r);
		return rc < 0 ? rc : 0;
	}
	rc = dict_init(&d, s, 1024);
	if (rc < 0)
		return rc;
	/* Position 16: every context length enters the dictionary. */
	dict_at(&d, LZ_B);
	for (unsigned j = 1; j <= LZ_B; j++) {
		rc = dict_add(&d, j, 1);
		if (rc < 0)
			goto out;
		dict_size++;
	}
	for (size_t i = LZ_B + 1; i < n; i++) {
		uint32_t best = 0;
		uint8_t pred = 0;
		int have = 0;

		dict_at(&d, i);
		dict_prefetch(&d, n, want);
		if (dict_size >= LZ_MAX_DICT) {
			unsigned reach;

			rc = lz78y_full_step(&d, fill_i, fill_j, &best, &pred, &have, &reach);
			if (rc < 0)
				goto out;
			/* the next position's contexts are one longer at most */
			want = reach + 1 < LZ_B ? reach + 1 : LZ_B;
			tally(&t, have && pred == s[i]);
			continue;
		}
		/* Longest context first; a shorter one wins only with a
		 * strictly higher count. */
		for (unsigned j = LZ_B; j >= 1; j--) {
			uint8_t y;
			uint32_t cnt;

			if (dict_find(&d, j, &y, &cnt)) {
				if (cnt > best) {
					best = cnt;
					pred = y;
					have = 1;
				}
				rc = dict_add(&d, j, 1);
			} else if (dict_size < LZ_MAX_DICT) {
				rc = dict_add(&d, j, 1);
				if (++dict_size == LZ_MAX_DICT) {
					fill_i = i;
					fill_j = j;
				}
			} else {
				rc = 0;
			}
			if (rc < 0)
				goto out;
		}
		tally(&t, have && pred == s[i]);
	}
	est_prediction_bound(t.c, n - LZ_B - 1, t.longest, k, r);
	rc = 0;
out:
	dict_free(&d);
	return rc;
}
