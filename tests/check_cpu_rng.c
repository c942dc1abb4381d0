// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for src/cpu_rng.c: cpu_rng_fill() driven by fake instruction
 * functions (healthy, all-ones, all-zeros, stuck, underflowing), the probe
 * on this machine's CPU, and the real rdrand/rdseed drivers when the probe
 * says they work.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "rngfeed/cpu_rng.h"
#include "rngfeed/source.h"
#include "test_doubles.h"

/* ---- a scripted fake instruction ------------------------------------------- */

/* What the fake does after its first @underflows_first failed attempts
 * and @good_words healthy words. */
enum tail { TAIL_HEALTHY, TAIL_ONES, TAIL_ZEROS, TAIL_STUCK, TAIL_UNDERFLOW };

static struct {
	unsigned int underflows_first;
	unsigned int good_words;
	enum tail tail;
	unsigned int calls;
	uint64_t counter; /* healthy words given so far */
} plan;

/* The i-th healthy word (from 1), as the fake gives it: splitmix64 words
 * look random and never repeat, so the healthy fake never trips the
 * stuck-value check. */
static uint64_t healthy_word(uint64_t i)
{
	return td_splitmix64(i);
}

static int fake_insn(uint64_t *v)
{
	plan.calls++;
	if (plan.underflows_first) {
		plan.underflows_first--;
		return 0;
	}
	if (plan.counter < plan.good_words || plan.tail == TAIL_HEALTHY) {
		*v = healthy_word(++plan.counter);
		return 1;
	}
	switch (plan.tail) {
	case TAIL_ONES:
		*v = UINT64_MAX; /* the AMD firmware bug after suspend */
		return 1;
	case TAIL_ZEROS:
		*v = 0;
		return 1;
	case TAIL_STUCK:
		*v = 0x0123456789abcdefULL;
		return 1;
	case TAIL_UNDERFLOW:
	default:
		return 0;
	}
}

/* A fresh cpu_rng over the fake, with @tries attempts per word. */
static struct cpu_rng fake_rng(unsigned int underflows_first,
			       unsigned int good_words, enum tail tail,
			       unsigned int tries)
{
	plan.underflows_first = underflows_first;
	plan.good_words = good_words;
	plan.tail = tail;
	plan.calls = 0;
	plan.counter = 0;
	return (struct cpu_rng){ .insn = fake_insn, .max_tries = tries };
}

/* What @len bytes from a healthy fake starting at word @first look like. */
static void expected_bytes(unsigned char *out, size_t len, uint64_t first)
{
	for (size_t off = 0; off < len; off += 8) {
		uint64_t w = healthy_word(first + off / 8);

		memcpy(out + off, &w, len - off < 8 ? len - off : 8);
	}
}

static bool all_bytes(const unsigned char *buf, size_t len, unsigned char b)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != b)
			return false;
	return true;
}

#define GUARD 16

/* ---- cpu_rng_fill ---------------------------------------------------------- */

START_TEST(test_fill_healthy)
{
	struct cpu_rng c = fake_rng(0, 0, TAIL_HEALTHY, 10);
	unsigned char buf[64 + GUARD], want[64];

	memset(buf, 0xAA, sizeof(buf));
	ck_assert_int_eq(cpu_rng_fill(&c, buf, 64), 64);
	expected_bytes(want, 64, 1);
	ck_assert_mem_eq(buf, want, 64);
	ck_assert(all_bytes(buf + 64, GUARD, 0xAA));
	ck_assert_uint_eq(plan.calls, 8);
	ck_assert_uint_eq(c.underflows, 0);
	ck_assert_uint_eq(c.faults, 0);
	/* A second fill continues the stream. */
	ck_assert_int_eq(cpu_rng_fill(&c, buf, 16), 16);
	expected_bytes(want, 16, 9);
	ck_assert_mem_eq(buf, want, 16);
}
END_TEST

START_TEST(test_fill_partial_word)
{
	static const size_t lens[] = { 1, 7, 9, 13, 23 };

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t len = lens[i];
		struct cpu_rng c = fake_rng(0, 0, TAIL_HEALTHY, 10);
		unsigned char buf[32 + GUARD], want[32];

		memset(buf, 0xAA, sizeof(buf));
		ck_assert_int_eq(cpu_rng_fill(&c, buf, len), (ssize_t)len);
		expected_bytes(want, len, 1);
		ck_assert_mem_eq(buf, want, len);
		ck_assert_msg(all_bytes(buf + len, sizeof(buf) - len, 0xAA),
			      "len %zu: wrote past the end", len);
		ck_assert_uint_eq(plan.calls, (len + 7) / 8);
	}
}
END_TEST

/*
 * A word that "succeeds" but cannot be random after @good healthy words:
 * -EBADMSG, one fault counted, and the healthy bytes already in the
 * buffer wiped (they came from a source now known to be broken).
 */
static void check_fault(enum tail tail, unsigned int good)
{
	struct cpu_rng c = fake_rng(0, good, tail, 10);
	unsigned char buf[64 + GUARD];

	memset(buf, 0xAA, sizeof(buf));
	ck_assert_int_eq(cpu_rng_fill(&c, buf, 64), -EBADMSG);
	ck_assert_uint_eq(c.faults, 1);
	ck_assert_msg(all_bytes(buf, good * 8, 0),
		      "the %u good words before the fault were not wiped",
		      good);
	ck_assert(all_bytes(buf + good * 8, 64 + GUARD - good * 8, 0xAA));
	/* Still broken on the next call: another fault, no data. */
	memset(buf, 0xAA, sizeof(buf));
	ck_assert_int_eq(cpu_rng_fill(&c, buf, 8), -EBADMSG);
	ck_assert_uint_eq(c.faults, 2);
	ck_assert(all_bytes(buf, 8, 0xAA));
}

START_TEST(test_fill_all_ones)
{
	check_fault(TAIL_ONES, 0);
	check_fault(TAIL_ONES, 3);
}
END_TEST

START_TEST(test_fill_all_zeros)
{
	check_fault(TAIL_ZEROS, 0);
	check_fault(TAIL_ZEROS, 2);
}
END_TEST

START_TEST(test_fill_stuck)
{
	/* The first constant word is indistinguishable from a random one;
	 * its repetition is the fault. */
	struct cpu_rng c = fake_rng(0, 2, TAIL_STUCK, 10);
	unsigned char buf[64];

	memset(buf, 0xAA, sizeof(buf));
	ck_assert_int_eq(cpu_rng_fill(&c, buf, 64), -EBADMSG);
	ck_assert_uint_eq(c.faults, 1);
	ck_assert(all_bytes(buf, 24, 0));
	ck_assert_uint_eq(plan.calls, 4);
}
END_TEST

START_TEST(test_fill_stuck_across_calls)
{
	/* The repeat check spans calls: one word per call is no escape. */
	struct cpu_rng c = fake_rng(0, 0, TAIL_STUCK, 10);
	unsigned char buf[8];

	ck_assert_int_eq(cpu_rng_fill(&c, buf, 8), 8);
	ck_assert_int_eq(cpu_rng_fill(&c, buf, 8), -EBADMSG);
	ck_assert_uint_eq(c.faults, 1);
}
END_TEST

START_TEST(test_word_is_fault)
{
	struct cpu_rng c = { .insn = fake_insn, .max_tries = 1 };

	ck_assert(cpu_word_is_fault(&c, 0));
	ck_assert(cpu_word_is_fault(&c, UINT64_MAX));
	ck_assert(!cpu_word_is_fault(&c, 0x0123456789abcdefULL));
	ck_assert(!cpu_word_is_fault(&c, 1));
	ck_assert(!cpu_word_is_fault(&c, UINT64_MAX - 1));
	c.have_prev = true;
	c.prev = 42;
	ck_assert(cpu_word_is_fault(&c, 42));
	ck_assert(!cpu_word_is_fault(&c, 43));
}
END_TEST

/* Underflows within one call: what it returns is the healthy words in
 * order, every failed attempt counted, no fault. */
static const struct {
	unsigned int underflows_first, good_words;
	enum tail tail;
	unsigned int tries;
	size_t ask;
	int got;
	unsigned int underflows, calls;
} underflows[] = {
	/* RDSEED's carry-clear under load: retried within the budget, no
	 * data lost. */
	{ 5, 0, TAIL_HEALTHY, 10, 32, 32, 5, 5 + 4 },
	/* Words already read are returned; the caller asks again for the
	 * rest (source_read() loops). */
	{ 0, 2, TAIL_UNDERFLOW, 5, 64, 16, 5, 2 + 5 },
};

START_TEST(test_fill_underflows)
{
	struct cpu_rng c = fake_rng(underflows[_i].underflows_first,
				    underflows[_i].good_words,
				    underflows[_i].tail, underflows[_i].tries);
	unsigned char buf[64], want[64];

	ck_assert_int_eq(cpu_rng_fill(&c, buf, underflows[_i].ask),
			 underflows[_i].got);
	expected_bytes(want, (size_t)underflows[_i].got, 1);
	ck_assert_mem_eq(buf, want, (size_t)underflows[_i].got);
	ck_assert_uint_eq(c.underflows, underflows[_i].underflows);
	ck_assert_uint_eq(plan.calls, underflows[_i].calls);
	ck_assert_uint_eq(c.faults, 0);
}
END_TEST

START_TEST(test_fill_underflow_budget)
{
	/* More failures in a row than the budget: -EAGAIN for the caller to
	 * back off, then the next call goes on where the stream is. */
	struct cpu_rng c = fake_rng(12, 0, TAIL_HEALTHY, 10);
	unsigned char buf[16 + GUARD], want[16];

	memset(buf, 0xAA, sizeof(buf));
	ck_assert_int_eq(cpu_rng_fill(&c, buf, 16), -EAGAIN);
	ck_assert_uint_eq(c.underflows, 10);
	ck_assert_uint_eq(plan.calls, 10);
	ck_assert(all_bytes(buf, sizeof(buf), 0xAA));
	ck_assert_int_eq(cpu_rng_fill(&c, buf, 16), 16);
	ck_assert_uint_eq(c.underflows, 12);
	expected_bytes(want, 16, 1);
	ck_assert_mem_eq(buf, want, 16);
}
END_TEST

START_TEST(test_fill_always_underflows)
{
	struct cpu_rng c = fake_rng(0, 0, TAIL_UNDERFLOW, 7);
	unsigned char buf[16 + GUARD];

	memset(buf, 0xAA, sizeof(buf));
	for (int i = 1; i <= 3; i++) {
		ck_assert_int_eq(cpu_rng_fill(&c, buf, 16), -EAGAIN);
		/* Bounded: exactly the budget per call, never a spin. */
		ck_assert_uint_eq(plan.calls, 7u * (unsigned int)i);
		ck_assert_uint_eq(c.underflows, 7u * (unsigned int)i);
	}
	ck_assert(all_bytes(buf, sizeof(buf), 0xAA));
	ck_assert_uint_eq(c.faults, 0);
}
END_TEST

/* ---- this machine's CPU ---------------------------------------------------- */

#if defined(__x86_64__) || defined(__i386__)
static bool cpuid_advertises(enum cpu_insn insn)
{
	unsigned int a, b, c, d;

	if (insn == CPU_RDRAND)
		return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_RDRND);
	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_RDSEED);
}
#else
static bool cpuid_advertises(enum cpu_insn insn)
{
	(void)insn;
	return false;
}
#endif

static void sigill_marker(int sig)
{
	(void)sig;
}

/*
 * The probe's verdict must match CPUID: an instruction CPUID hides is
 * unavailable, even when it would execute (the kernel hides RDSEED on
 * CPUs with an erratum).  The probe must leave the SIGILL handler as it
 * found it.
 */
static int probe_checked(enum cpu_insn insn, char *why, size_t why_len)
{
	struct sigaction mine = { .sa_handler = sigill_marker }, now;
	int r;

	sigemptyset(&mine.sa_mask);
	ck_assert_int_eq(sigaction(SIGILL, &mine, NULL), 0);
	r = cpu_insn_probe(insn, why, why_len);
	ck_assert_int_eq(sigaction(SIGILL, NULL, &now), 0);
	ck_assert_msg(now.sa_handler == sigill_marker,
		      "the probe did not restore the SIGILL handler");
	signal(SIGILL, SIG_DFL);
	ck_assert_msg(why[0], "probe gave no reason");
	if (cpuid_advertises(insn)) {
		ck_assert_int_eq(r, 0);
		ck_assert_msg(strstr(why, "CPUID advertises"), "why: %s", why);
	} else {
		ck_assert_int_eq(r, -ENOTSUP);
		ck_assert_msg(strstr(why, "report no") ||
				      strstr(why, "only on x86"),
			      "why: %s", why);
	}
	return r;
}

START_TEST(test_probe_rdrand)
{
	char why[256] = "";
	int r = probe_checked(CPU_RDRAND, why, sizeof(why));

	/* This project's machines advertise RDRAND in CPUID, so there
	 * probe_checked() requires it to be found; elsewhere, say so. */
	if (r < 0)
		printf("SKIP: no RDRAND on this CPU: %s\n", why);
	else
		printf("rdrand probe: %s\n", why);
	fflush(stdout);
}
END_TEST

/*
 * Here the kernel hid RDSEED ("RDSEED32 is broken. Disabling the
 * corresponding CPUID bit."): the probe must follow CPUID and name the
 * likely reason (it used to run RDSEED anyway, at full credit, and blame
 * a hypervisor).
 */
START_TEST(test_probe_rdseed)
{
	char why[512] = "";
	int r = probe_checked(CPU_RDSEED, why, sizeof(why));

	printf("rdseed probe (%d): %s\n", r, why);
	fflush(stdout);
#if defined(__x86_64__) || defined(__i386__)
	if (!cpuid_advertises(CPU_RDSEED)) {
		ck_assert_int_eq(r, -ENOTSUP);
		ck_assert_msg(strstr(why, "erratum") && strstr(why, "dmesg") &&
				      strstr(why, "force=yes"),
			      "why: %s", why);
	}
#else
	/* Another architecture: no CPUID to blame, just the CPU. */
	ck_assert_int_eq(r, -ENOTSUP);
	ck_assert_msg(strstr(why, "not an x86 CPU"), "why: %s", why);
#endif
}
END_TEST

START_TEST(test_probe_repeatable)
{
	char a[512] = "", b[512] = "";

	/* Probing twice gives the same verdict and reason. */
	ck_assert_int_eq(cpu_insn_probe(CPU_RDSEED, a, sizeof(a)),
			 cpu_insn_probe(CPU_RDSEED, b, sizeof(b)));
	ck_assert_str_eq(a, b);
}
END_TEST

/* ---- the decision, with injected CPUID bits and trials ------------------------- */

/* The CPUID bit positions (Intel SDM vol. 2A, CPUID): RDRAND leaf 1 ECX
 * bit 30, RDSEED leaf 7.0 EBX bit 18, the latter only if leaf 7 exists. */
START_TEST(test_cpu_id_bits)
{
	ck_assert(cpu_id_has(CPU_RDRAND, 1, 1u << 30, 0));
	ck_assert(!cpu_id_has(CPU_RDRAND, 1, ~(1u << 30), ~0u));
	ck_assert(!cpu_id_has(CPU_RDRAND, 0, 1u << 30, 0));
	ck_assert(cpu_id_has(CPU_RDSEED, 7, 0, 1u << 18));
	ck_assert(!cpu_id_has(CPU_RDSEED, 7, ~0u, ~(1u << 18)));
	ck_assert(!cpu_id_has(CPU_RDSEED, 6, 0, 1u << 18));
	ck_assert(cpu_id_has(CPU_RDSEED, 0x20, 0, 1u << 18));
}
END_TEST

static int trials;
static int trial_executes(enum cpu_insn insn)
{
	(void)insn;
	trials++;
	return 1;
}
static int trial_sigill(enum cpu_insn insn)
{
	(void)insn;
	trials++;
	return 0;
}

START_TEST(test_decide)
{
	char why[512];

	/* CPUID advertises it: used, never tried, force or not. */
	for (int force = 0; force < 2; force++) {
		trials = 0;
		ck_assert_int_eq(cpu_insn_decide(CPU_RDSEED, true, force,
						 trial_executes, why,
						 sizeof(why)), 0);
		ck_assert_int_eq(trials, 0);
		ck_assert_ptr_nonnull(strstr(why, "CPUID advertises RDSEED"));
	}
	/* CPUID hides it: unavailable, even though it would execute; the
	 * instruction is not even tried. */
	trials = 0;
	ck_assert_int_eq(cpu_insn_decide(CPU_RDSEED, false, false,
					 trial_executes, why, sizeof(why)),
			 -ENOTSUP);
	ck_assert_int_eq(trials, 0);
	ck_assert_msg(strstr(why, "report no RDSEED") &&
			      strstr(why, "erratum") &&
			      strstr(why, "rdseed:force=yes") &&
			      !strstr(why, "masked"),
		      "why: %s", why);
	/* force=yes: used if it executes, with a warning naming why CPUID
	 * hides it. */
	ck_assert_int_eq(cpu_insn_decide(CPU_RDSEED, false, true,
					 trial_executes, why, sizeof(why)),
			 1);
	ck_assert_int_eq(trials, 1);
	ck_assert_msg(strstr(why, "force=yes") && strstr(why, "erratum") &&
			      strstr(why, "executes"),
		      "why: %s", why);
	/* force=yes on a CPU where it does not execute: unavailable. */
	ck_assert_int_eq(cpu_insn_decide(CPU_RDRAND, false, true,
					 trial_sigill, why, sizeof(why)),
			 -ENOTSUP);
	ck_assert_int_eq(trials, 2);
	ck_assert_msg(strstr(why, "RDRAND") && strstr(why, "does not execute"),
		      "why: %s", why);
}
END_TEST

/* The rdseed driver: force=yes warns at start-up only when the
 * instruction runs against CPUID. */
START_TEST(test_rdseed_force_option)
{
	struct source_config cfg;
	char why[SOURCE_WHY_LEN] = "", err[256] = "", warn[SOURCE_WHY_LEN];
	int r, r_forced;

	source_config_init(&cfg, source_driver_find("rdseed"));
	r = cfg.driver->probe(&cfg, why, sizeof(why));
	ck_assert_int_eq(source_config_warning(&cfg, warn, sizeof(warn)), 0);
	ck_assert_int_eq(source_config_set(&cfg, "force", "yes", err,
					   sizeof(err)), 0);
	r_forced = cfg.driver->probe(&cfg, why, sizeof(why));
	printf("rdseed force=yes probe (%d): %s\n", r_forced, why);
	fflush(stdout);
	if (cpuid_advertises(CPU_RDSEED)) {
		ck_assert_int_eq(r, 0);
		ck_assert_int_eq(r_forced, 0);
		ck_assert_int_eq(source_config_warning(&cfg, warn, sizeof(warn)),
				 0);
		return;
	}
	ck_assert_int_eq(r, -ENOTSUP);
	if (r_forced == 0) {
		ck_assert_int_eq(source_config_warning(&cfg, warn, sizeof(warn)),
				 1);
		ck_assert_msg(strstr(warn, "force=yes") &&
				      strstr(warn, "erratum"),
			      "warning: %s", warn);
	} else {
		ck_assert_int_eq(r_forced, -ENOTSUP);
		ck_assert_int_eq(source_config_warning(&cfg, warn, sizeof(warn)),
				 0);
	}
}
END_TEST

/* ---- the real drivers --------------------------------------------------------- */

/* Prints the reason and returns true when @driver cannot be tested. */
static bool skip_unless_available(const char *driver)
{
	const struct source_driver *drv = source_driver_find(driver);
	struct source_config cfg;
	char why[SOURCE_WHY_LEN] = "";

	ck_assert_ptr_nonnull(drv);
	source_config_init(&cfg, drv);
	if (drv->probe(&cfg, why, sizeof(why)) == 0)
		return false;
	printf("SKIP: %s: %s\n", driver, why);
	fflush(stdout);
	return true;
}

static struct source *open_driver(const char *driver)
{
	struct source_config cfg;

	source_config_init(&cfg, source_driver_find(driver));
	return td_source_open(&cfg);
}

/* 4 KiB twice: both full, different, and not a constant. */
static void check_real_driver(const char *driver)
{
	static unsigned char a[4096], b[4096];
	struct source *s;

	if (skip_unless_available(driver))
		return;
	s = open_driver(driver);
	ck_assert_int_eq(source_read(s, a, sizeof(a), NULL), sizeof(a));
	ck_assert_int_eq(source_read(s, b, sizeof(b), NULL), sizeof(b));
	ck_assert_msg(memcmp(a, b, sizeof(a)) != 0, "%s repeated 4 KiB",
		      driver);
	ck_assert(!all_bytes(a, sizeof(a), 0x00));
	ck_assert(!all_bytes(a, sizeof(a), 0xFF));
	/* An odd length is filled exactly too. */
	memset(a, 0xAA, 32);
	ck_assert_int_eq(source_read(s, a, 13, NULL), 13);
	ck_assert(all_bytes(a + 13, 32 - 13, 0xAA));
	source_close(s);
}

START_TEST(test_real_rdrand)
{
	check_real_driver("rdrand");
}
END_TEST

START_TEST(test_real_rdseed)
{
	check_real_driver("rdseed");
}
END_TEST

/* A bad "tries" option is refused when it is set (it used to pass until
 * open: "-O rdrand:tries=abc --list" exited 0), and at open too, should
 * one get past the config. */
START_TEST(test_bad_tries)
{
	static const char *const bad[] = { "0", "-1", "abc", "1000001" };
	static const char *const drivers[] = { "rdrand", "rdseed" };

	for (size_t d = 0; d < 2; d++) {
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct source_config cfg;
			struct source *s = NULL;
			char why[SOURCE_WHY_LEN] = "", err[256] = "";

			source_config_init(&cfg, source_driver_find(drivers[d]));
			ck_assert_int_eq(source_config_set(&cfg, "tries", bad[i],
							   err, sizeof(err)),
					 -EINVAL);
			ck_assert_msg(strstr(err, "tries") && strstr(err, bad[i]),
				      "err: %s", err);
			/* Past the config check (a test's own write). */
			memcpy(cfg.options, "tries", sizeof("tries"));
			strcpy(cfg.options + sizeof("tries"), bad[i]);
			cfg.n_options = 1;
			ck_assert_int_eq(source_open(&s, &cfg, why, sizeof(why)),
					 -EINVAL);
			ck_assert_ptr_null(s);
			ck_assert_msg(strstr(why, "tries"), "why: %s", why);
		}
	}
}
END_TEST

static Suite *cpu_rng_suite(void)
{
	Suite *s = suite_create("cpu_rng");
	TCase *tc;

	tc = tcase_create("fill");
	tcase_add_test(tc, test_fill_healthy);
	tcase_add_test(tc, test_fill_partial_word);
	tcase_add_test(tc, test_fill_all_ones);
	tcase_add_test(tc, test_fill_all_zeros);
	tcase_add_test(tc, test_fill_stuck);
	tcase_add_test(tc, test_fill_stuck_across_calls);
	tcase_add_test(tc, test_word_is_fault);
	tcase_add_loop_test(tc, test_fill_underflows, 0,
			    (int)(sizeof(underflows) / sizeof(underflows[0])));
	tcase_add_test(tc, test_fill_underflow_budget);
	tcase_add_test(tc, test_fill_always_underflows);
	suite_add_tcase(s, tc);

	tc = tcase_create("probe");
	tcase_add_test(tc, test_probe_rdrand);
	tcase_add_test(tc, test_probe_rdseed);
	tcase_add_test(tc, test_probe_repeatable);
	tcase_add_test(tc, test_cpu_id_bits);
	tcase_add_test(tc, test_decide);
	tcase_add_test(tc, test_rdseed_force_option);
	suite_add_tcase(s, tc);

	tc = tcase_create("drivers");
	tcase_add_test(tc, test_real_rdrand);
	tcase_add_test(tc, test_real_rdseed);
	tcase_add_test(tc, test_bad_tries);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return td_run(cpu_rng_suite()); }
