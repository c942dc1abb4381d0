// SPDX-License-Identifier: GPL-2.0-or-later
/* SP 800-90B §6.3.10 LZ78Y: the entry point.  The estimator runs beside
 * MultiMMC in one pass over the samples: estimate_6_3_9_10_wide.c over
 * wide samples (more than 1 bit), estimate_6_3_9_10_binary.c over binary
 * ones. */
#include <errno.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"
#include "rngfeed/estimate_predict.h"

int est_lz78y(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	struct est_result mmc;	/* computed alongside, not wanted here */
	int rc = est_check_literal(s, n, k);

	if (rc < 0)
		return rc;
	if (n < LZ_B + 2)
		return -ENODATA;
	rc = k == 2 ? est_mmc_lz78y_binary(s, n, &mmc, r) : est_mmc_lz78y_wide(s, n, k, &mmc, r);
	return rc < 0 ? rc : 0;
}
