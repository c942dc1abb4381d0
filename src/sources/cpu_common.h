/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared open/read/close for the rdrand and rdseed drivers. */
#ifndef RNGFEED_SOURCES_CPU_COMMON_H
#define RNGFEED_SOURCES_CPU_COMMON_H

#include "rngfeed/cpu_rng.h"
#include "rngfeed/source.h"

int cpu_source_open(enum cpu_insn insn, const struct source_config *cfg,
		    void **state, char *why, size_t why_len);
ssize_t cpu_source_read(void *state, void *buf, size_t len);
void cpu_source_close(void *state);

#endif
