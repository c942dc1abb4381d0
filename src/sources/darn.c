// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * darn: the POWER DARN instruction (Power ISA 3.0, POWER9 and later).
 *
 * Read with L=1, the 64-bit "conditioned" random number: the hardware has
 * processed the noise source's output to reduce bias (L=2 gives the raw,
 * unconditioned output, whose bias the hardware has not reduced and which
 * the FIPS tests could refuse on a healthy CPU; L=0 is 32 bits).  It is what Linux takes as its
 * seed on POWER9.  The error value 0xFFFFFFFF_FFFFFFFF is never a number
 * with L=1; the ISA says to repeat and give up after several attempts,
 * which cpu_rng_fill() does with a bounded budget.
 *
 * Credit: the ISA promises "a minimum of 0.5 bits of entropy per bit" and
 * nothing more, so 512 per 1024, with the health tests assuming the same
 * H (4 bits per byte: the credit rule's cap is then exactly 512).
 */
#include "cpu_common.h"
#include "rngfeed/sources.h"

static int darn_probe(const struct source_config *cfg, char *why,
		      size_t why_len)
{
	return cpu_source_probe(CPU_DARN, cfg, why, why_len);
}

static int darn_open(const struct source_config *cfg, void **state, char *why,
		     size_t why_len)
{
	return cpu_source_open(CPU_DARN, cfg, state, why, why_len);
}

const struct source_driver source_darn = {
	.name = "darn",
	.description = "POWER DARN instruction (L=1, conditioned)",
	.default_credit = 512,
	.credit_reason = "512/1024: the Power ISA promises at least 0.5 bits "
			 "of entropy per bit",
	.sample_bits = 8,
	.min_entropy = 4.0,
	.option_keys = cpu_source_tries_keys,
	.check_option = cpu_source_check_option,
	.probe = darn_probe,
	.open = darn_open,
	.read = cpu_source_read,
	.close = cpu_source_close,
};
