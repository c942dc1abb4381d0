// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rdrand: the x86 RDRAND instruction.
 *
 * RDRAND is the output of an AES-CTR DRBG that the CPU reseeds from its
 * entropy source.  Intel's DRNG Software Implementation Guide (§4.2.5)
 * bounds the DRBG to 511 128-bit outputs per reseed and says that to get
 * seed-grade data from RDRAND one must take 512 128-bit samples per 128
 * bits of seed.  So at most 1 bit in 512 is credited: 1024 / 512 = 2 bits
 * per 1024.
 */
#include "cpu_common.h"
#include "rngfeed/sources.h"

static int rdrand_probe(const struct source_config *cfg, char *why,
			size_t why_len)
{
	return cpu_source_probe(CPU_RDRAND, cfg, why, why_len);
}

static int rdrand_config_warning(const struct source_config *cfg, char *buf,
				 size_t len)
{
	return cpu_source_config_warning(CPU_RDRAND, cfg, buf, len);
}

static int rdrand_open(const struct source_config *cfg, void **state,
		       char *why, size_t why_len)
{
	return cpu_source_open(CPU_RDRAND, cfg, state, why, why_len);
}

const struct source_driver source_rdrand = {
	.name = "rdrand",
	.description = "x86 RDRAND instruction (CPU DRBG output)",
	.default_credit = 2,
	.credit_reason = "2/1024: a DRBG output, 1 seed-grade bit in 512 "
			 "(Intel DRNG guide 4.2.5)",
	.sample_bits = 8,
	/* DRBG output looks like full entropy; the tests catch stuck and
	 * patterned output, which is what fails in the field. */
	.min_entropy = 8.0,
	.option_keys = cpu_source_keys,
	.check_option = cpu_source_check_option,
	.config_warning = rdrand_config_warning,
	.probe = rdrand_probe,
	.open = rdrand_open,
	.read = cpu_source_read,
	.close = cpu_source_close,
};
