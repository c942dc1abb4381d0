// SPDX-License-Identifier: GPL-2.0-or-later
/* SP 800-90B §6.3.9 MultiMMC and §6.3.10 LZ78Y over wide samples (more
 * than 1 bit), in one pass: both count the same strings (a context and
 * its follower), in the tables of estimate_6_3_9_10_strings.h, where a
 * string's slot holds both estimators' counts, so that LZ78Y finds each
 * of its strings where MultiMMC just looked it up.  Binary samples:
 * estimate_6_3_9_10_binary.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"
#include "rngfeed/estimate_predict.h"
#include "estimate_6_3_9_10_strings.h"

/* The tables, sized for the strings each length will hold: at most
 * MMC_MAX_ENTRIES MultiMMC pairs and about as many contexts (on random
 * samples the same strings), and LZ78Y's dictionary (65,536 contexts) fits
 * beside them; a table that must hold more grows (doubling, its strings
 * moved by their tags).  Sized at once for that, rather than growing
 * through page faults and rehashes, on samples with many different
 * strings; but on repetitive ones (real clock deltas) the short strings
 * are few, and tables of 2^17 slots (4 MiB) were mostly empty yet all
 * touched, their pages cleared for them.  So the first size follows the
 * number of different strings of 3 samples (a bit per possible one),
 * doubled for each length more, up to that cap. */
static int strs_size(struct strs *m, const uint8_t *s, size_t n, unsigned k)
{
	const size_t bits = (size_t)k * k * k, words = (bits + 63) / 64;
	size_t cap3 = 1024, most = 1024, want = n < MMC_MAX_ENTRIES ? n : MMC_MAX_ENTRIES;
	uint64_t *seen = est_zalloc(words * sizeof(*seen)), d3 = 0;

	if (!seen)
		return -ENOMEM;
	for (size_t i = 0; i + 2 < n; i++) {
		const size_t x = ((size_t)s[i] * k + s[i + 1]) * k + s[i + 2];

		seen[x / 64] |= (uint64_t)1 << (x % 64);
	}
	for (size_t w = 0; w < words; w++)
		d3 += popcount64(seen[w]);
	est_zfree(seen, words * sizeof(*seen));
	while (most * 4 < want * 5)
		most *= 2;
	while (cap3 < most && cap3 * 4 < d3 * 5)
		cap3 *= 2;
	return strs_init(m, s, cap3, most);
}

/* ================= §6.3.9 MultiMMC ================= */

struct mmc_run {
	uint64_t score[CTX_MAX];
	uint32_t entries[CTX_MAX];	/* pairs made, by context length */
	struct tally t;
	unsigned winner;
};

/* One position i >= 2: predict s[i] from the contexts of lengths 1..16
 * before it, then count s[i] after each. */
static int mmc_step(struct strs *m, struct mmc_run *r, size_t i)
{
	const uint8_t *s = m->s;
	unsigned cur = r->winner, max = i - 1 < CTX_MAX ? (unsigned)(i - 1) : CTX_MAX;
	int found = 1, rc;

	for (unsigned j = 1; j <= max; j++) {
		uint8_t pred = 0;
		long at = -1;
		unsigned sb = j - 1;

		/* A context whose shorter suffix is unknown is unknown too
		 * (90B's dictionaries grow shortest first). */
		if (found)
			found = strs_find(m, j, 0, &pred, &at) != 0;
		if (found) {
			if (pred == s[i]) {
				if (++r->score[sb] >= r->score[r->winner])
					r->winner = sb;
				if (sb == cur)
					tally(&r->t, 1);
			} else if (sb == cur) {
				tally(&r->t, 0);
			}
			rc = strs_add(m, j, 0, r->entries[sb] < MMC_MAX_ENTRIES, at);
			if (rc < 0)
				return rc;
			r->entries[sb] += (uint32_t)rc;
		} else if (r->entries[sb] < MMC_MAX_ENTRIES) {
			rc = strs_add(m, j, 0, 1, at);
			if (rc < 0)
				return rc;
			r->entries[sb]++;
		}
	}
	return 0;
}

/* ================= §6.3.10 LZ78Y ================= */

struct lz_run {
	struct tally t;
	uint32_t dict_size;	/* contexts in the dictionary */
	size_t fill_i;		/* the step that filled it */
	unsigned fill_j;	/* and the shortest length it added */
	unsigned want;		/* lengths to fetch ahead */
};

/* One LZ78Y step once the dictionary is full (no context enters it any
 * more, only followers are counted): the same result as trying all 16
 * lengths, with fewer lookups.  A context in the dictionary has its shorter
 * suffixes there too (each step adds the lengths it lacks, longest first),
 * except those the step that filled it added (at fill_i, lengths fill_j..16,
 * whose shorter suffixes may have found no room).  So the lengths present
 * are 1..J (J: the first absent, minus one) and any of the filling step's
 * contexts that the current one repeats. */
static int lz_full_step(struct strs *d, const struct lz_run *z, uint32_t *best,
			uint8_t *pred, int *have, unsigned *reach)
{
	uint8_t y[LZ_B + 1];
	uint32_t cnt[LZ_B + 1];
	long at[LZ_B + 1];
	unsigned present = 0, jj = 1;	/* bit j: length j present */

	for (; jj <= LZ_B && (cnt[jj] = strs_find(d, jj, 1, &y[jj], &at[jj])) != 0; jj++)
		present |= 1u << jj;
	*reach = jj;	/* the lengths looked up */
	/* The filling step's contexts end where it was: the current one
	 * repeats those of the lengths up to where the two first differ
	 * (looking back from their ends), none longer. */
	{
		unsigned same = 0;	/* samples the two contexts share */

		while (same < LZ_B && d->s[z->fill_i - 1 - same] == d->s[d->i - 1 - same])
			same++;
		for (unsigned j = jj + 1 > z->fill_j ? jj + 1 : z->fill_j; j <= same; j++)
			if ((cnt[j] = strs_find(d, j, 1, &y[j], &at[j])) != 0)
				present |= 1u << j;
	}
	/* Longest first: adding length j puts strings in t[j] and t[j + 1]
	 * only, so the slots found for the shorter ones still hold. */
	for (unsigned j = LZ_B; j >= 1; j--) {
		int rc;

		if (!(present & (1u << j)))
			continue;
		if (cnt[j] > *best) {
			*best = cnt[j];
			*pred = y[j];
			*have = 1;
		}
		rc = strs_add(d, j, 1, 1, j >= 3 ? at[j] : -1);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* One position i > 16: predict s[i] (the longest context first; a
 * shorter one wins only with a strictly higher count), then count it. */
static int lz_step(struct strs *d, struct lz_run *z, size_t i)
{
	uint32_t best = 0;
	uint8_t pred = 0;
	int have = 0, rc = 0;

	if (z->dict_size >= LZ_MAX_DICT) {
		unsigned reach;

		rc = lz_full_step(d, z, &best, &pred, &have, &reach);
		if (rc < 0)
			return rc;
		/* the next position's contexts are one longer at most */
		z->want = reach + 1 < LZ_B ? reach + 1 : LZ_B;
		tally(&z->t, have && pred == d->s[i]);
		return 0;
	}
	for (unsigned j = LZ_B; j >= 1; j--) {
		uint8_t y;
		long at = -1;
		const uint32_t cnt = strs_find(d, j, 1, &y, &at);

		if (cnt) {
			if (cnt > best) {
				best = cnt;
				pred = y;
				have = 1;
			}
			rc = strs_add(d, j, 1, 1, at);
		} else if (z->dict_size < LZ_MAX_DICT) {
			rc = strs_add(d, j, 1, 1, at);
			if (++z->dict_size == LZ_MAX_DICT) {
				z->fill_i = i;
				z->fill_j = j;
			}
		}
		if (rc < 0)
			return rc;
	}
	tally(&z->t, have && pred == d->s[i]);
	return 0;
}

/* ================= both, one pass ================= */

int est_mmc_lz78y_wide(const uint8_t *s, size_t n, unsigned k, struct est_result *mmc,
		       struct est_result *lz)
{
	struct strs m;
	struct mmc_run r = { .winner = 0 };
	struct lz_run z = { .fill_j = 1, .want = LZ_B };
	const int with_lz = n >= LZ_B + 2;
	int rc;

	rc = strs_size(&m, s, n, k);
	if (rc < 0)
		return rc;
	/* MultiMMC: the pairs whose context starts at s[0] (context length i
	 * for the sample at i) come first: they precede every prediction that
	 * can use them, and the main loop starts its contexts at s[1]. */
	for (size_t i = 1; i <= CTX_MAX && i < n - 1; i++) {
		strs_at(&m, i);
		rc = strs_add(&m, (unsigned)i, 0, 1, -1);
		if (rc < 0)
			goto out;
		r.entries[i - 1] = 1;
	}
	/* LZ78Y: at position 16 every context length enters the dictionary. */
	if (with_lz) {
		strs_at(&m, LZ_B);
		for (unsigned j = 1; j <= LZ_B; j++) {
			rc = strs_add(&m, j, 1, 1, -1);
			if (rc < 0)
				goto out;
			z.dict_size++;
		}
	}
	for (size_t i = 2; i < n; i++) {
		unsigned mw;

		strs_at(&m, i);
		mw = m.hp_n + 1;	/* as far as the last pairs, and one */
		strs_prefetch(&m, n, i > LZ_B && z.want + 1 > mw ? z.want + 1 : mw);
		rc = mmc_step(&m, &r, i);
		if (rc == 0 && i > LZ_B)
			rc = lz_step(&m, &z, i);
		if (rc < 0)
			goto out;
	}
	est_prediction_bound(r.t.c, n - 2, r.t.longest, k, mmc);
	if (with_lz)
		est_prediction_bound(z.t.c, n - LZ_B - 1, z.t.longest, k, lz);
	rc = with_lz;
out:
	strs_free(&m);
	return rc;
}
