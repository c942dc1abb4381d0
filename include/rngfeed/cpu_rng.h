/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86 RDRAND / RDSEED: detection, the retry loop, and the checks for
 * instructions that report success but return garbage.
 */
#ifndef RNGFEED_CPU_RNG_H
#define RNGFEED_CPU_RNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum cpu_insn { CPU_RDRAND, CPU_RDSEED };

/*
 * Is the instruction usable?  0 yes (@why may say how it was found),
 * -ENOTSUP with a reason in @why.  CPUID decides when it advertises the
 * instruction; when it does not (hypervisors may mask the bit while the
 * instruction still works), one trial execution guarded against SIGILL
 * decides, so an absent instruction never kills the process.
 */
int cpu_insn_probe(enum cpu_insn insn, char *why, size_t why_len);

/* One attempt: 1 and *v set when the CPU reported success (CF=1), else 0. */
typedef int (*cpu_insn_fn)(uint64_t *v);
int cpu_rdrand64(uint64_t *v);
int cpu_rdseed64(uint64_t *v);

/*
 * State of one CPU source: the instruction, its retry budget, and the last
 * word it gave (to catch a stuck value).
 */
struct cpu_rng {
	cpu_insn_fn insn;
	unsigned int max_tries;  /* attempts per word before giving up */
	bool have_prev;
	uint64_t prev;
	uint64_t underflows;     /* attempts that came back with CF=0 */
	uint64_t faults;         /* words refused as stuck/all-ones/zero */
};

/*
 * A word that reported success but cannot be random: all ones (the AMD
 * firmware bug after suspend), all zeros, or the same as the previous
 * word.  Each happens by chance with probability 2^-64 per word.
 */
bool cpu_word_is_fault(const struct cpu_rng *c, uint64_t w);

/*
 * Fill @buf with up to @len bytes, whole words unless @len is not a
 * multiple of 8.  Returns bytes written (> 0), -EAGAIN when the
 * instruction kept failing (RDSEED underflow: the caller backs off), or
 * -EBADMSG when it returned a faulty word.
 */
ssize_t cpu_rng_fill(struct cpu_rng *c, void *buf, size_t len);

#endif
