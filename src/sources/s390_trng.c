// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * s390-trng: the s390x CPACF PRNO instruction's TRNG function (function
 * code 114, message-security-assist extension 7: z14 and later), the
 * instruction behind the kernel's own s390-trng hw_random driver.
 *
 * PRNO TRNG stores conditioned output of the CPU's true random number
 * generator (and, when asked, the raw output it was conditioned from; we
 * ask for none, as the kernel does).  IBM's own driver for this function
 * in Linux (s390-trng) registers the conditioned output as full entropy,
 * hw_random quality 1024; we credit it the same and no more.  Available when STFLE reports facility 57 (PRNO exists) and
 * PRNO's query function reports code 114.  The instruction does not fail;
 * it may stop early (partial completion), and such a word is read again,
 * within the retry budget.
 */
#include "cpu_common.h"
#include "rngfeed/sources.h"

static int s390_trng_probe(const struct source_config *cfg, char *why,
			   size_t why_len)
{
	return cpu_source_probe(CPU_S390_TRNG, cfg, why, why_len);
}

static int s390_trng_open(const struct source_config *cfg, void **state,
			  char *why, size_t why_len)
{
	return cpu_source_open(CPU_S390_TRNG, cfg, state, why, why_len);
}

const struct source_driver source_s390_trng = {
	.name = "s390-trng",
	.description = "s390x CPACF PRNO TRNG function (MSA 7)",
	.default_credit = 1024,
	.credit_reason = "full: IBM's Linux driver for the same function "
			 "(s390-trng) registers it as full entropy, quality "
			 "1024",
	.sample_bits = 8,
	.min_entropy = 8.0,
	.hw_random_twin = "s390-trng",
	.option_keys = cpu_source_tries_keys,
	.check_option = cpu_source_check_option,
	.probe = s390_trng_probe,
	.open = s390_trng_open,
	.read = cpu_source_read,
	.close = cpu_source_close,
};
