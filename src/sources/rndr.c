// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rndr: the arm64 RNDR register (FEAT_RNG), a DRBG's output.
 *
 * The Arm ARM says RNDR's generator is reseeded from the true random
 * number source "at an IMPLEMENTATION DEFINED rate", and no bound on that
 * rate is published: SP 800-90A lets a DRBG give up to 2^48 requests per
 * reseed, so no number of entropy bits per RNDR bit can be argued from the
 * architecture.  RDRAND's 2/1024 rests on Intel's documented bound (511
 * outputs per reseed); Arm gives none, so RNDR is credited nothing by
 * default.  It still feeds the kernel and the DRBG (credit 0 mixes in
 * without claiming entropy), and every CPU with RNDR has RNDRRS, the
 * seed-grade read, which is credited.  A user whose CPU documents its
 * reseed interval may set credit=N.
 */
#include "cpu_common.h"
#include "rngfeed/sources.h"

static int rndr_probe(const struct source_config *cfg, char *why,
		      size_t why_len)
{
	return cpu_source_probe(CPU_RNDR, cfg, why, why_len);
}

static int rndr_open(const struct source_config *cfg, void **state, char *why,
		     size_t why_len)
{
	return cpu_source_open(CPU_RNDR, cfg, state, why, why_len);
}

const struct source_driver source_rndr = {
	.name = "rndr",
	.description = "arm64 RNDR register (CPU DRBG output)",
	.default_credit = 0,
	.credit_reason = "0: a DRBG output whose reseed interval Arm leaves "
			 "implementation defined, with no published bound "
			 "(rndrrs is the seed-grade read)",
	.sample_bits = 8,
	/* DRBG output looks like full entropy; the tests catch stuck and
	 * patterned output, which is what fails in the field. */
	.min_entropy = 8.0,
	.option_keys = cpu_source_tries_keys,
	.check_option = cpu_source_check_option,
	.probe = rndr_probe,
	.open = rndr_open,
	.read = cpu_source_read,
	.close = cpu_source_close,
};
