/* SP 800-90B §6.3.10 LZ78Y over wide samples (more than 1 bit): its
 * dictionary in the string tables of estimate_6_3_9_10_strings.h (a
 * context is in the dictionary when it has a best follower, a pair when it
 * has a count).  Binary samples: estimate_6_3_9_10_binary.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"
#include "rngfeed/estimate_predict.h"
#include "estimate_6_3_9_10_strings.h"

/* ================= §6.3.10 LZ78Y ================= */

/* One LZ78Y step once the dictionary is full (no context enters it any
 * more, only followers are counted): the same result as trying all 16
 * lengths, with fewer lookups.  A context in the dictionary has its shorter
 * suffixes there too (each step adds the lengths it lacks, longest first),
 * except those the step that filled it added (at fill_i, lengths fill_j..16,
 * whose shorter suffixes may have found no room).  So the lengths present
 * are 1..J (J: the first absent, minus one) and any of the filling step's
 * contexts that the current one repeats. */
static int lz78y_full_step(struct strs *d, size_t fill_i, unsigned fill_j,
			   uint32_t *best, uint8_t *pred, int *have, unsigned *reach)
{
	uint8_t y[LZ_B + 1];
	uint32_t cnt[LZ_B + 1];
	long at[LZ_B + 1];
	unsigned present = 0, jj = 1;	/* bit j: length j present */

	for (; jj <= LZ_B && (cnt[jj] = strs_find(d, jj, &y[jj], &at[jj])) != 0; jj++)
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
			if ((cnt[j] = strs_find(d, j, &y[j], &at[j])) != 0)
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
		rc = strs_add(d, j, 1, j >= 3 ? at[j] : -1);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int est_lz78y(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	struct strs d;
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
	rc = strs_init(&d, s, 1024);
	if (rc < 0)
		return rc;
	/* Position 16: every context length enters the dictionary. */
	strs_at(&d, LZ_B);
	for (unsigned j = 1; j <= LZ_B; j++) {
		rc = strs_add(&d, j, 1, -1);
		if (rc < 0)
			goto out;
		dict_size++;
	}
	for (size_t i = LZ_B + 1; i < n; i++) {
		uint32_t best = 0;
		uint8_t pred = 0;
		int have = 0;

		strs_at(&d, i);
		strs_prefetch(&d, n, want + 1);
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
			long at = -1;
			const uint32_t cnt = strs_find(&d, j, &y, &at);

			if (cnt) {
				if (cnt > best) {
					best = cnt;
					pred = y;
					have = 1;
				}
				rc = strs_add(&d, j, 1, at);
			} else if (dict_size < LZ_MAX_DICT) {
				rc = strs_add(&d, j, 1, at);
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
	strs_free(&d);
	return rc;
}
