// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The CPU random-number instructions of every architecture rngfeed knows.
 * Each architecture's code is compiled only for that architecture; what
 * decides (CPUID bits, auxiliary-vector bits, s390x facility and query
 * bits) and what each instruction's failure flag means are pure functions
 * compiled everywhere, so that every architecture's decisions are tested
 * on every build host.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#if defined(__aarch64__) || defined(__powerpc64__) || defined(__s390x__)
#include <sys/auxv.h>
#endif

#include "rngfeed/cpu_rng.h"

#if defined(__x86_64__) || defined(__i386__)
#define ON_X86 1
#else
#define ON_X86 0
#endif
#if defined(__aarch64__)
#define ON_ARM64 1
#else
#define ON_ARM64 0
#endif
#if defined(__powerpc64__)
#define ON_PPC64 1
#else
#define ON_PPC64 0
#endif
#if defined(__s390x__)
#define ON_S390X 1
#else
#define ON_S390X 0
#endif

/*
 * Retry budgets, attempts per 64-bit word before cpu_rng_fill() returns
 * -EAGAIN and the reader backs off with a sleep (never a spin):
 * - RDRAND: Intel's DRNG guide says 10 failures in a row mean the DRNG is
 *   broken.  RDSEED underflows are normal under load (here ~45 % of
 *   attempts with two threads): 1000.
 * - RNDR fails only when the DRBG could not be reseeded "in a reasonable
 *   time" (Arm ARM, RNDR): 10, as RDRAND.  RNDRRS waits for a reseed from
 *   the TRNG on every read and so fails under load as RDSEED does: 1000.
 * - DARN: the ISA says to repeat on the error value and to give up "after
 *   several attempts": 100.
 * - PRNO TRNG does not fail; it may stop early (condition code 3, partial
 *   completion), which is retried: 100.
 */
static const struct {
	const char *name;    /* the instruction, for messages */
	const char *a;       /* the article before... */
	const char *arch;    /* ...the architecture: "not an arm64 CPU" */
	const char *needs;   /* which CPUs of that architecture have it */
	bool native;         /* this build is for its architecture */
	unsigned int tries;
} insn_info[CPU_INSN_COUNT] = {
	[CPU_RDRAND] = { "RDRAND", "an", "x86", "", ON_X86, 10 },
	[CPU_RDSEED] = { "RDSEED", "an", "x86", "", ON_X86, 1000 },
	[CPU_RNDR] = { "RNDR", "an", "arm64", " (FEAT_RNG, optional from Armv8.5)",
		       ON_ARM64, 10 },
	[CPU_RNDRRS] = { "RNDRRS", "an", "arm64",
			 " (FEAT_RNG, optional from Armv8.5)", ON_ARM64, 1000 },
	[CPU_DARN] = { "DARN", "a", "64-bit POWER",
		       " (Power ISA 3.0: POWER9 and later)", ON_PPC64, 100 },
	[CPU_S390_TRNG] = { "PRNO TRNG", "an", "s390x",
			    " (CPACF message-security-assist extension 7: "
			    "z14 and later)",
			    ON_S390X, 100 },
};

static bool insn_valid(enum cpu_insn insn)
{
	return (unsigned int)insn < CPU_INSN_COUNT;
}

const char *cpu_insn_name(enum cpu_insn insn)
{
	return insn_valid(insn) ? insn_info[insn].name : "?";
}

unsigned int cpu_insn_default_tries(enum cpu_insn insn)
{
	return insn_valid(insn) ? insn_info[insn].tries : 1;
}

static bool insn_is_x86(enum cpu_insn insn)
{
	return insn == CPU_RDRAND || insn == CPU_RDSEED;
}

/* "not an arm64 CPU: RNDRRS exists only on arm64 CPUs (FEAT_RNG, ...)" */
static int wrong_arch(enum cpu_insn insn, char *why, size_t why_len)
{
	snprintf(why, why_len, "not %s %s CPU: %s exists only on %s CPUs%s",
		 insn_info[insn].a, insn_info[insn].arch, insn_info[insn].name,
		 insn_info[insn].arch, insn_info[insn].needs);
	return -ENOTSUP;
}

/* ---- x86: RDRAND, RDSEED ------------------------------------------------ */

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>

static inline void cpu_relax(void)
{
	_mm_pause();
}

#if defined(__x86_64__)
__attribute__((target("rdrnd"))) int cpu_rdrand64(uint64_t *v)
{
	unsigned long long x;

	if (!_rdrand64_step(&x))
		return 0;
	*v = x;
	return 1;
}

__attribute__((target("rdseed"))) int cpu_rdseed64(uint64_t *v)
{
	unsigned long long x;

	if (!_rdseed64_step(&x))
		return 0;
	*v = x;
	return 1;
}
#else
/* 32-bit x86 has only the 32-bit forms: a word is two successes. */
__attribute__((target("rdrnd"))) int cpu_rdrand64(uint64_t *v)
{
	unsigned int lo, hi;

	if (!_rdrand32_step(&lo) || !_rdrand32_step(&hi))
		return 0;
	*v = (uint64_t)hi << 32 | lo;
	return 1;
}

__attribute__((target("rdseed"))) int cpu_rdseed64(uint64_t *v)
{
	unsigned int lo, hi;

	if (!_rdseed32_step(&lo) || !_rdseed32_step(&hi))
		return 0;
	*v = (uint64_t)hi << 32 | lo;
	return 1;
}
#endif

/* This CPU's CPUID, through the pure cpu_id_has(). */
static bool cpuid_has(enum cpu_insn insn)
{
	unsigned int max_leaf = __get_cpuid_max(0, NULL);
	unsigned int a, b, c, d, leaf1_ecx = 0, leaf7_ebx = 0;

	if (max_leaf >= 1 && __get_cpuid(1, &a, &b, &c, &d))
		leaf1_ecx = c;
	if (max_leaf >= 7 && __get_cpuid_count(7, 0, &a, &b, &c, &d))
		leaf7_ebx = b;
	return cpu_id_has(insn, max_leaf, leaf1_ecx, leaf7_ebx);
}

/*
 * The trial swaps the process-wide SIGILL handler and needs a jump buffer
 * a signal handler can reach, so it runs once per instruction
 * (pthread_once) and its verdict is kept; the daemon's first probe comes
 * from the main thread before any reader thread exists.
 */
static sigjmp_buf trial_jmp;

static void trial_sigill(int sig)
{
	(void)sig;
	siglongjmp(trial_jmp, 1);
}

/* Execute the instruction a few times; 1 if it ran and once succeeded. */
static int trial_execute(cpu_insn_fn fn)
{
	struct sigaction sa = { .sa_handler = trial_sigill }, old;
	volatile int ok = 0;
	uint64_t v;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGILL, &sa, &old) < 0)
		return 0;
	if (sigsetjmp(trial_jmp, 1) == 0) {
		for (int i = 0; i < 100 && !ok; i++)
			ok = fn(&v);
	} else {
		ok = 0;
	}
	sigaction(SIGILL, &old, NULL);
	explicit_bzero(&v, sizeof(v));
	return ok;
}

static pthread_once_t trial_once[2] = { PTHREAD_ONCE_INIT,
					PTHREAD_ONCE_INIT };
static int trial_verdict[2];

static void trial_rdrand(void)
{
	trial_verdict[CPU_RDRAND] = trial_execute(cpu_rdrand64);
}

static void trial_rdseed(void)
{
	trial_verdict[CPU_RDSEED] = trial_execute(cpu_rdseed64);
}

static int trial_cached(enum cpu_insn insn)
{
	pthread_once(&trial_once[insn],
		     insn == CPU_RDRAND ? trial_rdrand : trial_rdseed);
	return trial_verdict[insn];
}

static int x86_probe(enum cpu_insn insn, bool force, char *why,
		     size_t why_len)
{
	return cpu_insn_decide(insn, cpuid_has(insn), force, trial_cached, why,
			       why_len);
}

#else /* not x86 */

int cpu_rdrand64(uint64_t *v)
{
	(void)v;
	return 0;
}

int cpu_rdseed64(uint64_t *v)
{
	(void)v;
	return 0;
}

static int x86_probe(enum cpu_insn insn, bool force, char *why,
		     size_t why_len)
{
	(void)force;
	return wrong_arch(insn, why, why_len);
}

#endif

/* ---- arm64: RNDR, RNDRRS ----------------------------------------------- */

int cpu_arm64_rng_word(uint64_t value, uint64_t nzcv, uint64_t *v)
{
	/* A read that found no number sets NZCV to 0b0100 (Z, bit 30) and
	 * returns 0; success clears NZCV. */
	if (nzcv & (UINT64_C(1) << 30))
		return 0;
	*v = value;
	return 1;
}

#if defined(__aarch64__)
/*
 * The registers by their encodings (RNDR is S3_3_C2_C4_0, RNDRRS
 * S3_3_C2_C4_1): assemblers from before FEAT_RNG accept those, and the
 * instruction is chosen at run time, never by -march.
 */
static int cpu_rndr64(uint64_t *v)
{
	uint64_t x, nzcv;

	__asm__ volatile("mrs %0, s3_3_c2_c4_0\n\tmrs %1, nzcv"
			 : "=r"(x), "=r"(nzcv)
			 :
			 : "cc");
	return cpu_arm64_rng_word(x, nzcv, v);
}

static int cpu_rndrrs64(uint64_t *v)
{
	uint64_t x, nzcv;

	__asm__ volatile("mrs %0, s3_3_c2_c4_1\n\tmrs %1, nzcv"
			 : "=r"(x), "=r"(nzcv)
			 :
			 : "cc");
	return cpu_arm64_rng_word(x, nzcv, v);
}

static inline void cpu_relax(void)
{
	__asm__ volatile("yield" ::: "memory");
}
#endif

/* ---- POWER: DARN --------------------------------------------------------- */

/* DARN's error value; with L=1 a number is 0 .. 0xFFFFFFFF_FFFFFFFE. */
#define DARN_ERROR UINT64_MAX

int cpu_darn_word(uint64_t value, uint64_t *v)
{
	if (value == DARN_ERROR)
		return 0;
	*v = value;
	return 1;
}

#if defined(__powerpc64__)
/*
 * L=1: the 64-bit conditioned random number, the form Linux takes for its
 * seed (L=2, raw noise-source output, has an implementation-specific bias
 * that the FIPS tests would refuse; L=0 is 32 bits).  .machine lets an
 * assembler that defaults to POWER8 take it; the kernel's HWCAP2 bit
 * decides whether it runs.
 */
static int cpu_darn64(uint64_t *v)
{
	uint64_t x;

	__asm__ volatile(".machine push\n\t"
			 ".machine power9\n\t"
			 "darn %0, 1\n\t"
			 ".machine pop"
			 : "=r"(x));
	return cpu_darn_word(x, v);
}

static inline void cpu_relax(void)
{
	__asm__ volatile("" ::: "memory");
}
#endif

/* ---- s390x: CPACF PRNO TRNG ----------------------------------------------- */

int cpu_s390_trng_word(unsigned int cc, unsigned long left, uint64_t value,
		       uint64_t *v)
{
	/* cc 3: partial completion, bytes still to store; cc 0: done. */
	if (cc != 0 || left != 0)
		return 0;
	*v = value;
	return 1;
}

#if defined(__s390x__)
#define PRNO_OPCODE "0xb93c0000"

/*
 * One PRNO TRNG call for 8 conditioned bytes (second operand, registers
 * 4/5) and no raw bytes (first operand, registers 2/3, length 0), as the
 * kernel's s390-trng driver reads it.  A partial completion is reported
 * as a failed attempt and the word is read again.
 */
static int cpu_s390_trng64(uint64_t *v)
{
	uint64_t x = 0;
	register unsigned long r0 __asm__("0") = CPU_S390_PRNO_TRNG;
	register unsigned long r2 __asm__("2") = 0;
	register unsigned long r3 __asm__("3") = 0;
	register unsigned long r4 __asm__("4") = (unsigned long)&x;
	register unsigned long r5 __asm__("5") = sizeof(x);
	int cc;

	__asm__ volatile(".insn rre," PRNO_OPCODE ",%%r2,%%r4\n\t"
			 "ipm %[cc]\n\t"
			 "srl %[cc],28"
			 : [cc] "=d"(cc), "+d"(r2), "+d"(r3), "+d"(r4), "+d"(r5)
			 : "d"(r0)
			 : "cc", "memory");
	return cpu_s390_trng_word((unsigned int)cc, r5, x, v);
}

/* STFLE into @list (@n doublewords, zeroed first). */
static void s390_stfle(uint64_t *list, unsigned int n)
{
	register unsigned long r0 __asm__("0") = n - 1;

	memset(list, 0, n * sizeof(*list));
	__asm__ volatile(".insn s,0xb2b00000,0(%[list])"
			 : "+d"(r0)
			 : [list] "a"(list)
			 : "cc", "memory");
}

/* PRNO's query function: the 16-byte mask of its function codes. */
static void s390_prno_query(uint8_t mask[16])
{
	register unsigned long r0 __asm__("0") = 0;
	register unsigned long r1 __asm__("1") = (unsigned long)mask;

	memset(mask, 0, 16);
	__asm__ volatile(".insn rre," PRNO_OPCODE ",%%r2,%%r4"
			 :
			 : "d"(r0), "a"(r1)
			 : "cc", "memory");
}

static inline void cpu_relax(void)
{
	__asm__ volatile("" ::: "memory");
}
#endif

#if !ON_X86 && !ON_ARM64 && !ON_PPC64 && !ON_S390X
static inline void cpu_relax(void)
{
}
#endif

/* ---- the decisions, pure -------------------------------------------------- */

bool cpu_bit_be(const uint8_t *bits, size_t len, unsigned int bit)
{
	return bits && bit / 8 < len && (bits[bit / 8] & (0x80u >> (bit % 8)));
}

int cpu_features_decide(enum cpu_insn insn, const struct cpu_features *f,
			char *why, size_t why_len)
{
	const char *name = cpu_insn_name(insn);

	switch (insn) {
	case CPU_RNDR:
	case CPU_RNDRRS:
		if (!(f->hwcap2 & CPU_ARM64_HWCAP2_RNG)) {
			snprintf(why, why_len,
				 "the CPU and kernel report no %s (HWCAP2_RNG "
				 "clear: FEAT_RNG is optional from Armv8.5, and "
				 "a hypervisor may hide it)",
				 name);
			return -ENOTSUP;
		}
		snprintf(why, why_len, "the kernel reports FEAT_RNG (HWCAP2_RNG)");
		return 0;
	case CPU_DARN:
		if (!(f->hwcap2 & CPU_PPC_FEATURE2_DARN)) {
			snprintf(why, why_len,
				 "the CPU and kernel report no DARN "
				 "(PPC_FEATURE2_DARN clear: DARN needs Power ISA "
				 "3.0, POWER9 or later)");
			return -ENOTSUP;
		}
		snprintf(why, why_len, "the kernel reports DARN (PPC_FEATURE2_DARN)");
		return 0;
	case CPU_S390_TRNG:
		if (!(f->hwcap & CPU_S390_HWCAP_STFLE)) {
			snprintf(why, why_len,
				 "the kernel reports no STFLE, so the CPU's "
				 "facilities, and PRNO TRNG, are unknown");
			return -ENOTSUP;
		}
		if (!cpu_bit_be(f->facilities, f->facilities_len,
				CPU_S390_FACILITY_MSA5)) {
			snprintf(why, why_len,
				 "the CPU reports no PRNO instruction (facility "
				 "57, message-security-assist extension 5, "
				 "clear)");
			return -ENOTSUP;
		}
		if (!cpu_bit_be(f->prno_query, 16, CPU_S390_PRNO_TRNG)) {
			snprintf(why, why_len,
				 "PRNO's query reports no TRNG function (code "
				 "114, message-security-assist extension 7: z14 "
				 "and later)");
			return -ENOTSUP;
		}
		snprintf(why, why_len,
			 "PRNO's query reports the TRNG function (message-"
			 "security-assist extension 7)");
		return 0;
	default:
		snprintf(why, why_len, "%s: CPUID decides, not the kernel's "
			 "feature bits", name);
		return -EINVAL;
	}
}

/* This CPU's features, for @insn, which is native. */
static int features_probe(enum cpu_insn insn, char *why, size_t why_len)
{
	struct cpu_features f = { 0 };
#if defined(__s390x__)
	uint64_t facilities[4];
	uint8_t query[16];
#endif

#if defined(__aarch64__) || defined(__powerpc64__) || defined(__s390x__)
	f.hwcap = getauxval(AT_HWCAP);
	f.hwcap2 = getauxval(AT_HWCAP2);
#endif
#if defined(__s390x__)
	/* Big-endian: the doublewords' bytes are the bit string's. */
	if (f.hwcap & CPU_S390_HWCAP_STFLE) {
		s390_stfle(facilities, 4);
		f.facilities = (const uint8_t *)facilities;
		f.facilities_len = sizeof(facilities);
		if (cpu_bit_be(f.facilities, f.facilities_len,
			       CPU_S390_FACILITY_MSA5)) {
			s390_prno_query(query);
			f.prno_query = query;
		}
	}
#endif
	return cpu_features_decide(insn, &f, why, why_len);
}

/* ---- probe and dispatch --------------------------------------------------- */

static int probe(enum cpu_insn insn, bool force, char *why, size_t why_len)
{
	if (!insn_valid(insn)) {
		snprintf(why, why_len, "no such CPU instruction");
		return -EINVAL;
	}
	if (insn_is_x86(insn))
		return x86_probe(insn, force, why, why_len);
	if (!insn_info[insn].native)
		return wrong_arch(insn, why, why_len);
	return features_probe(insn, why, why_len);
}

int cpu_insn_probe(enum cpu_insn insn, char *why, size_t why_len)
{
	return probe(insn, false, why, why_len);
}

/* force=yes is an x86 matter (CPUID hidden by an erratum); the kernel's
 * feature bits elsewhere are not second-guessed. */
int cpu_insn_probe_forced(enum cpu_insn insn, char *why, size_t why_len)
{
	return probe(insn, true, why, why_len);
}

cpu_insn_fn cpu_insn_function(enum cpu_insn insn)
{
	switch (insn) {
#if defined(__x86_64__) || defined(__i386__)
	case CPU_RDRAND:
		return cpu_rdrand64;
	case CPU_RDSEED:
		return cpu_rdseed64;
#endif
#if defined(__aarch64__)
	case CPU_RNDR:
		return cpu_rndr64;
	case CPU_RNDRRS:
		return cpu_rndrrs64;
#endif
#if defined(__powerpc64__)
	case CPU_DARN:
		return cpu_darn64;
#endif
#if defined(__s390x__)
	case CPU_S390_TRNG:
		return cpu_s390_trng64;
#endif
	default:
		return NULL;
	}
}

bool cpu_id_has(enum cpu_insn insn, unsigned int max_leaf,
		uint32_t leaf1_ecx, uint32_t leaf7_ebx)
{
	if (insn == CPU_RDRAND)
		return max_leaf >= 1 && (leaf1_ecx & (1u << 30));
	return max_leaf >= 7 && (leaf7_ebx & (1u << 18));
}

/* Why CPUID may hide an instruction, for the messages below. */
#define CPUID_HIDES_WHY \
	"the kernel clears it on CPUs with a known erratum, e.g. AMD's " \
	"RDSEED32 bug, see dmesg; a hypervisor may hide it too"

int cpu_insn_decide(enum cpu_insn insn, bool cpuid, bool force,
		    cpu_trial_fn trial, char *why, size_t why_len)
{
	const char *name = insn == CPU_RDRAND ? "RDRAND" : "RDSEED";
	const char *opt = insn == CPU_RDRAND ? "rdrand" : "rdseed";

	if (!insn_is_x86(insn)) {
		snprintf(why, why_len, "%s: the kernel's feature bits decide, "
			 "not CPUID", cpu_insn_name(insn));
		return -EINVAL;
	}

	if (cpuid) {
		snprintf(why, why_len, "CPUID advertises %s", name);
		return 0;
	}
	if (!force) {
		snprintf(why, why_len,
			 "the CPU and kernel report no %s (CPUID bit clear: "
			 CPUID_HIDES_WHY "); -O %s:force=yes uses it anyway "
			 "if it executes",
			 name, opt);
		return -ENOTSUP;
	}
	if (!trial || trial(insn) != 1) {
		snprintf(why, why_len,
			 "the CPU and kernel report no %s (CPUID bit clear) "
			 "and it does not execute here, even with force=yes",
			 name);
		return -ENOTSUP;
	}
	snprintf(why, why_len,
		 "%s used against CPUID because of force=yes: CPUID reports "
		 "none (" CPUID_HIDES_WHY "), but it executes",
		 name);
	return 1;
}

bool cpu_word_is_fault(const struct cpu_rng *c, uint64_t w)
{
	return w == 0 || w == UINT64_MAX || (c->have_prev && w == c->prev);
}

ssize_t cpu_rng_fill(struct cpu_rng *c, void *buf, size_t len)
{
	uint8_t *p = buf;
	size_t done = 0;
	uint64_t w = 0;

	while (done < len) {
		unsigned int tries = 0;
		size_t n;

		while (!c->insn(&w)) {
			c->underflows++;
			if (++tries >= c->max_tries)
				goto underflow;
			cpu_relax();
		}
		if (cpu_word_is_fault(c, w)) {
			c->faults++;
			explicit_bzero(&w, sizeof(w));
			explicit_bzero(buf, done);
			return -EBADMSG;
		}
		c->prev = w;
		c->have_prev = true;
		n = len - done < sizeof(w) ? len - done : sizeof(w);
		memcpy(p + done, &w, n);
		done += n;
	}
	explicit_bzero(&w, sizeof(w));
	return (ssize_t)done;

underflow:
	explicit_bzero(&w, sizeof(w));
	/* Return what we have; the caller comes back for the rest. */
	return done ? (ssize_t)done : -EAGAIN;
}
