/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared open/read/close for the CPU instruction drivers (rdrand, rdseed,
 * rndr, rndrrs, darn, s390-trng). */
#ifndef RNGFEED_SOURCES_CPU_COMMON_H
#define RNGFEED_SOURCES_CPU_COMMON_H

#include "rngfeed/cpu_rng.h"
#include "rngfeed/source.h"

/* Options of rdrand and rdseed: tries=N, force=yes|no (force is about
 * CPUID, which only x86 has). */
extern const char *const cpu_source_keys[];
/* Options of the others: tries=N. */
extern const char *const cpu_source_tries_keys[];

/* The probe with the force option honoured: 0 usable (@why may hold a
 * warning, see cpu_insn_probe_forced()), or -errno. */
int cpu_source_probe(enum cpu_insn insn, const struct source_config *cfg,
		     char *why, size_t why_len);
int cpu_source_open(enum cpu_insn insn, const struct source_config *cfg,
		    void **state, char *why, size_t why_len);
int cpu_source_check_option(const char *key, const char *value, char *err,
			    size_t err_len);
/* The warning for a forced instruction that CPUID hides: 1 or 0. */
int cpu_source_config_warning(enum cpu_insn insn,
			      const struct source_config *cfg, char *buf,
			      size_t len);
ssize_t cpu_source_read(void *state, void *buf, size_t len);
void cpu_source_close(void *state);

#endif
