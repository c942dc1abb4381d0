// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "rngfeed/cpu_rng.h"

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

int cpu_insn_probe(enum cpu_insn insn, char *why, size_t why_len)
{
	return cpu_insn_decide(insn, cpuid_has(insn), false, trial_cached, why,
			       why_len);
}

int cpu_insn_probe_forced(enum cpu_insn insn, char *why, size_t why_len)
{
	return cpu_insn_decide(insn, cpuid_has(insn), true, trial_cached, why,
			       why_len);
}

#else

static inline void cpu_relax(void)
{
}

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

int cpu_insn_probe(enum cpu_insn insn, char *why, size_t why_len)
{
	snprintf(why, why_len, "%s exists only on x86 CPUs",
		 insn == CPU_RDRAND ? "RDRAND" : "RDSEED");
	return -ENOTSUP;
}

int cpu_insn_probe_forced(enum cpu_insn insn, char *why, size_t why_len)
{
	return cpu_insn_probe(insn, why, why_len);
}

#endif

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
