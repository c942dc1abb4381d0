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
 * Is the instruction usable?  CPUID decides, as it does for the kernel
 * and rngd: the kernel clears the CPUID bit (through an MSR, so user space
 * sees it too) on CPUs with a known erratum, e.g. AMD's "RDSEED32 is
 * broken" (dmesg), and a hypervisor clears it for a reason too.  So an
 * instruction CPUID does not advertise is unavailable, even when it
 * executes.  0 yes (@why says so), -ENOTSUP with the reason in @why.
 */
int cpu_insn_probe(enum cpu_insn insn, char *why, size_t why_len);

/*
 * The same with force=yes: an instruction CPUID does not advertise is
 * tried (guarded against SIGILL, once per process) and used if it
 * executes and succeeds; then it returns 1 and @why is the warning to
 * show, naming why CPUID hides it.  0 when CPUID advertises it, -ENOTSUP
 * when it does not execute.
 */
int cpu_insn_probe_forced(enum cpu_insn insn, char *why, size_t why_len);

/*
 * The decision itself, with what the CPU says injected (tests):
 * @cpuid_has: CPUID advertises the instruction; @force: force=yes;
 * @trial: runs the instruction, 1 if it executed and succeeded (called
 * only when CPUID hides it and @force is set).  Returns as
 * cpu_insn_probe_forced() (or cpu_insn_probe() when !@force).
 */
typedef int (*cpu_trial_fn)(enum cpu_insn insn);
int cpu_insn_decide(enum cpu_insn insn, bool cpuid_has, bool force,
		    cpu_trial_fn trial, char *why, size_t why_len);

/*
 * The CPUID bits, from the registers of leaf 1 (ECX) and leaf 7 subleaf 0
 * (EBX); @max_leaf is leaf 0's EAX.  Pure, for tests with injected
 * registers: RDRAND is leaf 1 ECX bit 30, RDSEED leaf 7 EBX bit 18 (only
 * when max_leaf >= 7).
 */
bool cpu_id_has(enum cpu_insn insn, unsigned int max_leaf,
		uint32_t leaf1_ecx, uint32_t leaf7_ebx);

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
