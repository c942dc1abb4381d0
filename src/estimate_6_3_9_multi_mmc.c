/* SP 800-90B §6.3.9 MultiMMC over wide samples (more than 1 bit).
 * Binary samples: estimate_6_3_9_10_binary.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"
#include "rngfeed/estimate_predict.h"
#include "estimate_6_3_9_10_strings.h"

/* ================= §6.3.9 MultiMMC ================= */

/* ---- MultiMMC over wide samples: the string tables of
 * estimate_6_3_9_10_strings.h, sized at once ---- */

static int mmc_wide(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	struct strs m;
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
		rc = strs_init(&m, s, cap);
	}
	if (rc < 0)
		return rc;
	/* The pairs whose context starts at s[0] (context length i for the
	 * sample at i) come first: they precede every prediction that can use
	 * them, and the main loop below starts its contexts at s[1]. */
	for (size_t i = 1; i <= CTX_MAX && i < n - 1; i++) {
		strs_at(&m, i);
		rc = strs_add(&m, (unsigned)i, 1, -1);
		if (rc < 0)
			goto out;
		entries[i - 1] = 1;
	}
	for (size_t i = 2; i < n; i++) {
		unsigned cur = winner, max = i - 1 < CTX_MAX ? (unsigned)(i - 1) : CTX_MAX;
		int found = 1;

		strs_at(&m, i);
		strs_prefetch(&m, n, m.hp_n + 1);
		for (unsigned j = 1; j <= max; j++) {
			uint8_t pred = 0;
			long at = -1;
			unsigned sb = j - 1;

			/* A context whose shorter suffix is unknown is unknown
			 * too (90B's dictionaries grow shortest first). */
			if (found)
				found = strs_find(&m, j, &pred, &at) != 0;
			if (found) {
				if (pred == s[i]) {
					if (++score[sb] >= score[winner])
						winner = sb;
					if (sb == cur)
						tally(&t, 1);
				} else if (sb == cur) {
					tally(&t, 0);
				}
				rc = strs_add(&m, j, entries[sb] < MMC_MAX_ENTRIES, at);
				if (rc < 0)
					goto out;
				entries[sb] += (uint32_t)rc;
			} else if (entries[sb] < MMC_MAX_ENTRIES) {
				rc = strs_add(&m, j, 1, at);
				if (rc < 0)
					goto out;
				entries[sb]++;
			}
		}
	}
	est_prediction_bound(t.c, n - 2, t.longest, k, r);
	rc = 0;
out:
	strs_free(&m);
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
