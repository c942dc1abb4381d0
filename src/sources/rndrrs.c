// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rndrrs: the arm64 RNDRRS register (FEAT_RNG), the seed-grade read.
 *
 * The Arm ARM defines RNDRRS as RNDR's random number, but with the
 * generator reseeded from the true random number source immediately
 * before the read: each 64-bit value is backed by fresh entropy, as each
 * RDSEED value is on x86, hence full credit.  Reseeding costs time, so it
 * fails (NZCV.Z set) more often than RNDR; the reader backs off.
 * Available where the kernel sets HWCAP2_RNG (Armv8.5 FEAT_RNG, optional).
 */
#include "cpu_common.h"
#include "rngfeed/sources.h"

static int rndrrs_probe(const struct source_config *cfg, char *why,
			size_t why_len)
{
	return cpu_source_probe(CPU_RNDRRS, cfg, why, why_len);
}

static int rndrrs_open(const struct source_config *cfg, void **state,
		       char *why, size_t why_len)
{
	return cpu_source_open(CPU_RNDRRS, cfg, state, why, why_len);
}

const struct source_driver source_rndrrs = {
	.name = "rndrrs",
	.description = "arm64 RNDRRS register (reseeded before every read)",
	.default_credit = 1024,
	.credit_reason = "full: every value follows a reseed from the TRNG "
			 "(Arm ARM, RNDRRS), seed grade like RDSEED",
	.sample_bits = 8,
	/* Conditioned seed-grade output: full entropy per byte. */
	.min_entropy = 8.0,
	.option_keys = cpu_source_tries_keys,
	.check_option = cpu_source_check_option,
	.probe = rndrrs_probe,
	.open = rndrrs_open,
	.read = cpu_source_read,
	.close = cpu_source_close,
};
