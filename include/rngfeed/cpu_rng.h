/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CPU random-number instructions: x86 RDRAND / RDSEED, arm64 RNDR /
 * RNDRRS, POWER DARN and the s390x CPACF PRNO TRNG function.  Detection
 * (at run time, from CPUID or what the kernel reports), the bounded retry
 * loop, and the checks for instructions that report success but return
 * garbage.  An instruction of another architecture is never compiled in:
 * its probe says which CPU it needs.
 */
#ifndef RNGFEED_CPU_RNG_H
#define RNGFEED_CPU_RNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum cpu_insn {
	CPU_RDRAND,    /* x86 */
	CPU_RDSEED,    /* x86 */
	CPU_RNDR,      /* arm64 FEAT_RNG: DRBG output */
	CPU_RNDRRS,    /* arm64 FEAT_RNG: reseeded before every read */
	CPU_DARN,      /* POWER ISA 3.0, L=1 (conditioned) */
	CPU_S390_TRNG, /* s390x CPACF PRNO TRNG function (MSA 7) */
	CPU_INSN_COUNT
};

/* "RDSEED", "RNDRRS", "DARN", "PRNO TRNG": for messages. */
const char *cpu_insn_name(enum cpu_insn insn);

/* Attempts per 64-bit word before cpu_rng_fill() gives up with -EAGAIN
 * (a source's tries=N overrides it). */
unsigned int cpu_insn_default_tries(enum cpu_insn insn);

/*
 * Is the instruction usable?  For RDRAND and RDSEED CPUID decides, as it
 * does for the kernel
 * and rngd: the kernel clears the CPUID bit (through an MSR, so user space
 * sees it too) on CPUs with a known erratum, e.g. AMD's "RDSEED32 is
 * broken" (dmesg), and a hypervisor clears it for a reason too.  So an
 * instruction CPUID does not advertise is unavailable, even when it
 * executes.  For the others, what the kernel reports (cpu_features_decide()
 * below), and on another architecture "not an arm64 CPU" and the like.
 * 0 yes (@why says so), -ENOTSUP with the reason in @why.
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

/* The one-attempt function of @insn, or NULL when this build is for
 * another architecture (or @insn is out of range). */
cpu_insn_fn cpu_insn_function(enum cpu_insn insn);

/*
 * What the kernel and the CPU report, for the instructions outside x86,
 * injected so that every architecture's decision is tested everywhere:
 * @hwcap, @hwcap2: getauxval(AT_HWCAP), getauxval(AT_HWCAP2);
 * @facilities: the s390x STFLE list (facility n is bit 0x80 >> n % 8 of
 * byte n / 8), NULL when not stored; @prno_query: the 16-byte mask PRNO's
 * query function stores (function code n: same bit order), NULL when not
 * queried.
 */
struct cpu_features {
	unsigned long hwcap;
	unsigned long hwcap2;
	const uint8_t *facilities;
	size_t facilities_len;
	const uint8_t *prno_query;
};

/* The bits the decision reads (Linux's uapi values, for every build). */
#define CPU_ARM64_HWCAP2_RNG (1ul << 16)       /* FEAT_RNG: RNDR, RNDRRS */
#define CPU_PPC_FEATURE2_DARN 0x00200000ul     /* POWER9 and later */
#define CPU_S390_HWCAP_STFLE (1ul << 2)        /* STFLE may be executed */
#define CPU_S390_FACILITY_MSA5 57u             /* PRNO exists */
#define CPU_S390_PRNO_TRNG 114u                /* PRNO's TRNG function */

/* Bit @bit of a big-endian bit string (STFLE, PRNO query); false past
 * @len bytes or for a NULL string. */
bool cpu_bit_be(const uint8_t *bits, size_t len, unsigned int bit);

/*
 * The decision for RNDR, RNDRRS, DARN or the PRNO TRNG on a CPU of its
 * architecture: 0 usable, -ENOTSUP with what is missing in @why
 * (-EINVAL for RDRAND/RDSEED, which CPUID decides).
 */
int cpu_features_decide(enum cpu_insn insn, const struct cpu_features *f,
			char *why, size_t why_len);

/*
 * Each instruction's failure flag, decoded from what it left (pure, so
 * the retry path is tested on every architecture with stubs):
 * RNDR/RNDRRS: the NZCV register after the read (Z set: no number, the
 * value is 0); DARN: the value itself (0xFFFFFFFFFFFFFFFF is the error
 * value, never a number with L=1); PRNO TRNG: the condition code and the
 * bytes still to store (cc 3 is partial completion).  1 and *v set, or 0.
 */
int cpu_arm64_rng_word(uint64_t value, uint64_t nzcv, uint64_t *v);
int cpu_darn_word(uint64_t value, uint64_t *v);
int cpu_s390_trng_word(unsigned int cc, unsigned long left, uint64_t value,
		       uint64_t *v);

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
