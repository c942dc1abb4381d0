// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rdseed: the x86 RDSEED instruction, the output of the CPU's entropy
 * conditioner.  Intel and AMD specify it as seed-grade (SP 800-90B/C
 * full-entropy output), hence full credit.
 */
#include "cpu_common.h"
#include "rngfeed/sources.h"

static int rdseed_probe(const struct source_config *cfg, char *why,
			size_t why_len)
{
	return cpu_source_probe(CPU_RDSEED, cfg, why, why_len);
}

static int rdseed_config_warning(const struct source_config *cfg, char *buf,
				 size_t len)
{
	return cpu_source_config_warning(CPU_RDSEED, cfg, buf, len);
}

static int rdseed_open(const struct source_config *cfg, void **state,
		       char *why, size_t why_len)
{
	return cpu_source_open(CPU_RDSEED, cfg, state, why, why_len);
}

const struct source_driver source_rdseed = {
	.name = "rdseed",
	.description = "x86 RDSEED instruction (CPU entropy source)",
	.default_credit = 1024,
	.credit_reason = "full: RDSEED returns conditioned seed-grade entropy "
			 "(only where CPUID advertises it; force=yes overrides)",
	.sample_bits = 8,
	/* Conditioned (AES-CBC-MAC) output: full entropy per byte. */
	.min_entropy = 8.0,
	.option_keys = cpu_source_keys,
	.check_option = cpu_source_check_option,
	.config_warning = rdseed_config_warning,
	.probe = rdseed_probe,
	.open = rdseed_open,
	.read = cpu_source_read,
	.close = cpu_source_close,
};
