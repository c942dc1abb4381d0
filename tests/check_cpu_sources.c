// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the CPU sources outside x86 (issue 16): rndrrs, rndr
 * (arm64 FEAT_RNG), darn (POWER ISA 3.0) and s390-trng (CPACF PRNO TRNG).
 * They run on every architecture:
 * - every architecture's decision (auxiliary-vector bits, s390x facility
 *   and PRNO query bits) with injected values, and each instruction's
 *   failure flag, decoded by the same functions the instructions use;
 * - the transient-failure path, which no emulator can force: stub
 *   instructions that fail through those decoders, under each source's
 *   own retry budget, through cpu_rng_fill();
 * - this machine: on another architecture each source is unavailable and
 *   says which CPU it needs; on its own, the probe agrees with what the
 *   kernel reports (getauxval), and a usable source's output is read
 *   through the driver and passes the FIPS 140-2 and SP 800-90B tests
 *   (under qemu-aarch64 -cpu max, qemu-ppc64le -cpu power9, qemu-s390x
 *   -cpu max; -cpu cortex-a57 is the absent path).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__aarch64__) || defined(__powerpc64__) || defined(__s390x__)
#include <sys/auxv.h>
#endif

#include "rngfeed/cpu_rng.h"
#include "rngfeed/monitor.h"
#include "rngfeed/source.h"
#include "test_doubles.h"

static const char *const new_drivers[] = { "rndrrs", "rndr", "darn",
					   "s390-trng" };
#define N_NEW (sizeof(new_drivers) / sizeof(new_drivers[0]))

static enum cpu_insn driver_insn(const char *name)
{
	if (strcmp(name, "rndrrs") == 0)
		return CPU_RNDRRS;
	if (strcmp(name, "rndr") == 0)
		return CPU_RNDR;
	if (strcmp(name, "darn") == 0)
		return CPU_DARN;
	return CPU_S390_TRNG;
}

/* ---- big-endian bit strings (STFLE, PRNO query) ------------------------- */

START_TEST(test_bit_be)
{
	uint8_t b[16] = { 0 };

	ck_assert(!cpu_bit_be(b, sizeof(b), 0));
	b[0] = 0x80; /* bit 0 is the first byte's most significant bit */
	ck_assert(cpu_bit_be(b, sizeof(b), 0));
	ck_assert(!cpu_bit_be(b, sizeof(b), 7));
	b[7] = 0x40; /* facility 57 */
	ck_assert(cpu_bit_be(b, sizeof(b), 57));
	ck_assert(!cpu_bit_be(b, sizeof(b), 56));
	ck_assert(!cpu_bit_be(b, sizeof(b), 58));
	b[14] = 0x20; /* PRNO function 114 */
	ck_assert(cpu_bit_be(b, sizeof(b), 114));
	ck_assert(!cpu_bit_be(b, sizeof(b), 113));
	/* Past the string, or no string at all: not set. */
	memset(b, 0xff, sizeof(b));
	ck_assert(!cpu_bit_be(b, sizeof(b), 128));
	ck_assert(!cpu_bit_be(b, 7, 57));
	ck_assert(!cpu_bit_be(NULL, 16, 0));
}
END_TEST

/* An STFLE list as a big-endian s390x stores it, built byte by byte so
 * that the test means the same on either byte order. */
static void set_bit_be(uint8_t *b, unsigned int bit)
{
	b[bit / 8] |= (uint8_t)(0x80u >> (bit % 8));
}

/* ---- the decisions ------------------------------------------------------- */

START_TEST(test_decide_arm64)
{
	struct cpu_features f = { 0 };
	char why[SOURCE_WHY_LEN];

	for (int rs = 0; rs < 2; rs++) {
		enum cpu_insn insn = rs ? CPU_RNDRRS : CPU_RNDR;

		f.hwcap2 = ~CPU_ARM64_HWCAP2_RNG; /* every other bit */
		f.hwcap = ~0ul;
		ck_assert_int_eq(cpu_features_decide(insn, &f, why, sizeof(why)),
				 -ENOTSUP);
		ck_assert_msg(strstr(why, rs ? "no RNDRRS" : "no RNDR") &&
				      strstr(why, "HWCAP2_RNG"),
			      "why: %s", why);
		f.hwcap2 = CPU_ARM64_HWCAP2_RNG;
		f.hwcap = 0;
		ck_assert_int_eq(cpu_features_decide(insn, &f, why, sizeof(why)),
				 0);
		ck_assert_msg(strstr(why, "FEAT_RNG"), "why: %s", why);
	}
	/* Linux's value: bit 16 of AT_HWCAP2. */
	ck_assert_uint_eq(CPU_ARM64_HWCAP2_RNG, 0x10000ul);
}
END_TEST

START_TEST(test_decide_darn)
{
	struct cpu_features f = { .hwcap = ~0ul,
				  .hwcap2 = ~CPU_PPC_FEATURE2_DARN };
	char why[SOURCE_WHY_LEN];

	ck_assert_int_eq(cpu_features_decide(CPU_DARN, &f, why, sizeof(why)),
			 -ENOTSUP);
	ck_assert_msg(strstr(why, "no DARN") && strstr(why, "POWER9"),
		      "why: %s", why);
	f.hwcap2 = CPU_PPC_FEATURE2_DARN;
	ck_assert_int_eq(cpu_features_decide(CPU_DARN, &f, why, sizeof(why)),
			 0);
	ck_assert_uint_eq(CPU_PPC_FEATURE2_DARN, 0x00200000ul);
}
END_TEST

START_TEST(test_decide_s390)
{
	uint8_t fac[32] = { 0 }, query[16] = { 0 };
	struct cpu_features f = { .hwcap = ~CPU_S390_HWCAP_STFLE,
				  .facilities = fac,
				  .facilities_len = sizeof(fac),
				  .prno_query = query };
	char why[SOURCE_WHY_LEN];

	/* Without STFLE nothing is known. */
	set_bit_be(fac, CPU_S390_FACILITY_MSA5);
	set_bit_be(query, CPU_S390_PRNO_TRNG);
	ck_assert_int_eq(cpu_features_decide(CPU_S390_TRNG, &f, why,
					     sizeof(why)),
			 -ENOTSUP);
	ck_assert_msg(strstr(why, "STFLE"), "why: %s", why);
	/* No MSA 5: no PRNO at all (the query is never trusted then). */
	f.hwcap = CPU_S390_HWCAP_STFLE;
	memset(fac, 0xff, sizeof(fac));
	fac[7] = (uint8_t)~0x40u;
	ck_assert_int_eq(cpu_features_decide(CPU_S390_TRNG, &f, why,
					     sizeof(why)),
			 -ENOTSUP);
	ck_assert_msg(strstr(why, "facility 57"), "why: %s", why);
	/* PRNO without the TRNG function (a z13: MSA 5, not 7). */
	memset(fac, 0, sizeof(fac));
	set_bit_be(fac, CPU_S390_FACILITY_MSA5);
	memset(query, 0xff, sizeof(query));
	query[14] = (uint8_t)~0x20u;
	ck_assert_int_eq(cpu_features_decide(CPU_S390_TRNG, &f, why,
					     sizeof(why)),
			 -ENOTSUP);
	ck_assert_msg(strstr(why, "no TRNG") && strstr(why, "114"),
		      "why: %s", why);
	f.prno_query = NULL; /* not queried */
	ck_assert_int_eq(cpu_features_decide(CPU_S390_TRNG, &f, why,
					     sizeof(why)),
			 -ENOTSUP);
	/* Both bits: usable. */
	memset(query, 0, sizeof(query));
	set_bit_be(query, CPU_S390_PRNO_TRNG);
	f.prno_query = query;
	ck_assert_int_eq(cpu_features_decide(CPU_S390_TRNG, &f, why,
					     sizeof(why)),
			 0);
	ck_assert_msg(strstr(why, "TRNG"), "why: %s", why);
}
END_TEST

START_TEST(test_decide_not_for_x86)
{
	struct cpu_features f = { .hwcap = ~0ul, .hwcap2 = ~0ul };
	char why[SOURCE_WHY_LEN];

	/* CPUID decides RDRAND and RDSEED, never the auxiliary vector. */
	ck_assert_int_eq(cpu_features_decide(CPU_RDSEED, &f, why, sizeof(why)),
			 -EINVAL);
	ck_assert_int_eq(cpu_insn_decide(CPU_DARN, true, false, NULL, why,
					 sizeof(why)),
			 -EINVAL);
}
END_TEST

/* ---- the failure flags ---------------------------------------------------- */

START_TEST(test_flag_arm64)
{
	uint64_t v = 7;

	/* A failed read: value 0 and NZCV = 0b0100 (Z). */
	ck_assert_int_eq(cpu_arm64_rng_word(0, UINT64_C(0x40000000), &v), 0);
	ck_assert_uint_eq(v, 7);
	/* Only Z means failure; success clears NZCV. */
	ck_assert_int_eq(cpu_arm64_rng_word(0x1234, 0, &v), 1);
	ck_assert_uint_eq(v, 0x1234);
	ck_assert_int_eq(cpu_arm64_rng_word(0x5678, UINT64_C(0xb0000000), &v),
			 1);
	ck_assert_uint_eq(v, 0x5678);
}
END_TEST

START_TEST(test_flag_darn)
{
	uint64_t v = 7;

	ck_assert_int_eq(cpu_darn_word(UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, 7);
	/* The largest number L=1 gives, and zero, are numbers. */
	ck_assert_int_eq(cpu_darn_word(UINT64_MAX - 1, &v), 1);
	ck_assert_uint_eq(v, UINT64_MAX - 1);
	ck_assert_int_eq(cpu_darn_word(0, &v), 1);
	ck_assert_uint_eq(v, 0);
}
END_TEST

START_TEST(test_flag_s390)
{
	uint64_t v = 7;

	/* Partial completion (cc 3) with bytes left: read again. */
	ck_assert_int_eq(cpu_s390_trng_word(3, 5, 0x11, &v), 0);
	ck_assert_int_eq(cpu_s390_trng_word(0, 2, 0x11, &v), 0);
	ck_assert_int_eq(cpu_s390_trng_word(3, 0, 0x11, &v), 0);
	ck_assert_uint_eq(v, 7);
	ck_assert_int_eq(cpu_s390_trng_word(0, 0, 0x11, &v), 1);
	ck_assert_uint_eq(v, 0x11);
}
END_TEST

/* ---- the transient-failure path ------------------------------------------- */

/*
 * A stub instruction: @fails failed reads, then good words, each through
 * the instruction's own decoder (what the real read leaves in its
 * registers), so the budget, the decoder and cpu_rng_fill() are tested
 * together.
 */
static struct {
	enum cpu_insn insn;
	unsigned int fails;
	unsigned int calls;
	uint64_t n;
} stub;

static uint64_t stub_word(uint64_t i)
{
	return td_splitmix64(i);
}

static int stub_insn(uint64_t *v)
{
	bool fail = stub.fails > 0;
	uint64_t w = fail ? 0 : stub_word(++stub.n);

	stub.calls++;
	if (fail)
		stub.fails--;
	switch (stub.insn) {
	case CPU_RNDR:
	case CPU_RNDRRS:
		return cpu_arm64_rng_word(w, fail ? UINT64_C(0x40000000) : 0, v);
	case CPU_DARN:
		return cpu_darn_word(fail ? UINT64_MAX : w, v);
	default:
		return cpu_s390_trng_word(fail ? 3 : 0, fail ? 4 : 0, w, v);
	}
}

START_TEST(test_retry_budget)
{
	for (size_t i = 0; i < N_NEW; i++) {
		enum cpu_insn insn = driver_insn(new_drivers[i]);
		unsigned int tries = cpu_insn_default_tries(insn);
		struct cpu_rng c = { .insn = stub_insn, .max_tries = tries };
		uint64_t want = 0;
		uint8_t buf[16];

		ck_assert_uint_ge(tries, 10);
		ck_assert_uint_le(tries, 1000);
		/* tries - 1 failures: the word still comes, and the next. */
		stub = (typeof(stub)){ .insn = insn, .fails = tries - 1 };
		ck_assert_int_eq(cpu_rng_fill(&c, buf, sizeof(buf)),
				 (ssize_t)sizeof(buf));
		ck_assert_uint_eq(stub.calls, tries + 1);
		ck_assert_uint_eq(c.underflows, tries - 1);
		want = stub_word(1);
		ck_assert_mem_eq(buf, &want, 8);
		/* tries failures: -EAGAIN after exactly the budget (the
		 * reader backs off), nothing written; then data again. */
		stub = (typeof(stub)){ .insn = insn, .fails = tries };
		c.underflows = 0;
		c.have_prev = false;
		memset(buf, 0xAA, sizeof(buf));
		ck_assert_int_eq(cpu_rng_fill(&c, buf, sizeof(buf)), -EAGAIN);
		ck_assert_uint_eq(stub.calls, tries);
		ck_assert_uint_eq(c.underflows, tries);
		for (size_t k = 0; k < sizeof(buf); k++)
			ck_assert_uint_eq(buf[k], 0xAA);
		ck_assert_int_eq(cpu_rng_fill(&c, buf, 8), 8);
		/* A failing instruction never spins: a budget of 1 means
		 * one attempt per call. */
		stub = (typeof(stub)){ .insn = insn, .fails = 1000000 };
		c.max_tries = 1;
		ck_assert_int_eq(cpu_rng_fill(&c, buf, 8), -EAGAIN);
		ck_assert_uint_eq(stub.calls, 1);
	}
}
END_TEST

/* A value the instruction reports as good but cannot be random: DARN's
 * all-ones never reaches the fault check (it is the error value); a stuck
 * word from any of them is a source fault. */
static int stuck_insn(uint64_t *v)
{
	return cpu_arm64_rng_word(0x0123456789abcdefULL, 0, v);
}

START_TEST(test_stuck_is_fault)
{
	struct cpu_rng c = { .insn = stuck_insn, .max_tries = 10 };
	uint8_t buf[16];

	ck_assert_int_eq(cpu_rng_fill(&c, buf, sizeof(buf)), -EBADMSG);
	ck_assert_uint_eq(c.faults, 1);
}
END_TEST

/* ---- the drivers ----------------------------------------------------------- */

START_TEST(test_driver_table)
{
	static const unsigned int credit[] = { 1024, 0, 512, 1024 };

	for (size_t i = 0; i < N_NEW; i++) {
		const struct source_driver *drv =
			source_driver_find(new_drivers[i]);
		struct source_config cfg;
		char err[256] = "";

		ck_assert_msg(drv, "%s is not in the driver table",
			      new_drivers[i]);
		ck_assert_uint_eq(drv->default_credit, credit[i]);
		ck_assert(drv->credit_reason && drv->credit_reason[0]);
		source_config_init(&cfg, drv);
		/* The credit rule holds for the default. */
		ck_assert_uint_le(source_config_credit(&cfg),
				  source_credit_cap(&cfg));
		ck_assert_uint_eq(source_config_credit(&cfg), credit[i]);
		/* tries=N is theirs; force=yes is x86's (CPUID) only. */
		ck_assert_int_eq(source_config_set(&cfg, "tries", "5", err,
						   sizeof(err)),
				 0);
		ck_assert_int_eq(source_config_set(&cfg, "tries", "0", err,
						   sizeof(err)),
				 -EINVAL);
		ck_assert_int_eq(source_config_set(&cfg, "force", "yes", err,
						   sizeof(err)),
				 -EINVAL);
		ck_assert_msg(strstr(err, "force"), "err: %s", err);
	}
	/* DARN's credit needs its H: 1024 would break the credit rule. */
	{
		struct source_config cfg;
		char err[256] = "";

		source_config_init(&cfg, source_driver_find("darn"));
		ck_assert_uint_eq(source_credit_cap(&cfg), 512);
		ck_assert_int_eq(source_config_set(&cfg, "credit", "1024", err,
						   sizeof(err)),
				 0);
		ck_assert_int_lt(source_config_validate(&cfg, err, sizeof(err)),
				 0);
	}
}
END_TEST

/* What the kernel of this machine says about @insn, for the native case:
 * 1 present, 0 absent, -1 not checkable from here. */
static int kernel_reports(enum cpu_insn insn)
{
#if defined(__aarch64__)
	if (insn == CPU_RNDR || insn == CPU_RNDRRS)
		return (getauxval(AT_HWCAP2) & CPU_ARM64_HWCAP2_RNG) != 0;
#elif defined(__powerpc64__)
	if (insn == CPU_DARN)
		return (getauxval(AT_HWCAP2) & CPU_PPC_FEATURE2_DARN) != 0;
#elif defined(__s390x__)
	if (insn == CPU_S390_TRNG && !(getauxval(AT_HWCAP) & CPU_S390_HWCAP_STFLE))
		return 0;
#endif
	(void)insn;
	return -1;
}

static bool native(enum cpu_insn insn)
{
	return cpu_insn_function(insn) != NULL;
}

/* The --list wording on a CPU of another architecture. */
static const char *other_arch_reason(enum cpu_insn insn)
{
	switch (insn) {
	case CPU_RNDR:
	case CPU_RNDRRS:
		return "not an arm64 CPU";
	case CPU_DARN:
		return "not a 64-bit POWER CPU";
	default:
		return "not an s390x CPU";
	}
}

START_TEST(test_probe_here)
{
	for (size_t i = 0; i < N_NEW; i++) {
		const struct source_driver *drv =
			source_driver_find(new_drivers[i]);
		enum cpu_insn insn = driver_insn(new_drivers[i]);
		struct source_config cfg;
		struct source *s = NULL;
		char why[SOURCE_WHY_LEN] = "";
		int r, k = kernel_reports(insn);

		source_config_init(&cfg, drv);
		r = drv->probe(&cfg, why, sizeof(why));
		printf("%s: probe %d: %s\n", new_drivers[i], r, why);
		fflush(stdout);
		ck_assert_msg(why[0], "%s: no reason given", new_drivers[i]);
		if (!native(insn)) {
			ck_assert_int_eq(r, -ENOTSUP);
			ck_assert_msg(strstr(why, other_arch_reason(insn)),
				      "%s: why: %s", new_drivers[i], why);
			/* Opening it (--raw -n NAME) is refused alike. */
			ck_assert_int_eq(source_open(&s, &cfg, why, sizeof(why)),
					 -ENOTSUP);
			ck_assert_ptr_null(s);
			continue;
		}
		if (k >= 0)
			ck_assert_msg((r == 0) == (k == 1),
				      "%s: probe %d but the kernel says %d",
				      new_drivers[i], r, k);
		if (r < 0)
			ck_assert_msg(strstr(why, "report no") ||
					      strstr(why, "reports no"),
				      "%s: why: %s", new_drivers[i], why);
	}
}
END_TEST

/*
 * A usable source's output, read through the driver as the daemon and
 * --raw read it, passes the health tests: 16 FIPS blocks (at most one
 * false alarm, p < 2e-4 for a good source) after the 90B start-up.
 */
START_TEST(test_read_here)
{
	static uint8_t block[MONITOR_BLOCK_BYTES];
	int tested = 0;

	for (size_t i = 0; i < N_NEW; i++) {
		const struct source_driver *drv =
			source_driver_find(new_drivers[i]);
		struct source_config cfg;
		struct monitor_params p;
		struct monitor *m = NULL;
		struct source *s = NULL;
		char why[SOURCE_WHY_LEN] = "";
		int fips_failed = 0;
		bool usable = false;

		source_config_init(&cfg, drv);
		if (drv->probe(&cfg, why, sizeof(why)) < 0)
			continue;
		tested++;
		ck_assert_msg(source_open(&s, &cfg, why, sizeof(why)) == 0,
			      "%s: open: %s", new_drivers[i], why);
		monitor_params_default(&p);
		p.min_entropy = source_config_min_entropy(&cfg);
		ck_assert_int_eq(monitor_new(&p, &m), 0);
		for (int b = 0; b < 16; b++) {
			struct monitor_verdict v;
			size_t got = 0;

			while (got < sizeof(block)) {
				ssize_t n = source_read(s, block + got,
							sizeof(block) - got, NULL);

				ck_assert_msg(n > 0 || n == -EAGAIN,
					      "%s: read %zd", new_drivers[i], n);
				if (n > 0)
					got += (size_t)n;
			}
			ck_assert_int_eq(monitor_test_block(m, block, &v), 0);
			if (v.failed & MONITOR_FIPS_MASK)
				fips_failed++;
			ck_assert_msg(!(v.failed & MONITOR_90B_MASK),
				      "%s: block %d failed 90B tests (0x%x)",
				      new_drivers[i], b, v.failed);
			usable |= v.usable;
		}
		printf("%s: 16 blocks read, %d FIPS failure(s)\n",
		       new_drivers[i], fips_failed);
		fflush(stdout);
		ck_assert_int_le(fips_failed, 1);
		ck_assert(usable);
		monitor_free(m);
		source_close(s);
	}
	if (!tested) {
		printf("SKIP: none of rndrrs, rndr, darn, s390-trng is usable "
		       "on this CPU (see the probe lines)\n");
		fflush(stdout);
	}
}
END_TEST

static Suite *cpu_sources_suite(void)
{
	Suite *s = suite_create("cpu_sources");
	TCase *tc;

	tc = tcase_create("decide");
	tcase_add_test(tc, test_bit_be);
	tcase_add_test(tc, test_decide_arm64);
	tcase_add_test(tc, test_decide_darn);
	tcase_add_test(tc, test_decide_s390);
	tcase_add_test(tc, test_decide_not_for_x86);
	suite_add_tcase(s, tc);

	tc = tcase_create("flags");
	tcase_add_test(tc, test_flag_arm64);
	tcase_add_test(tc, test_flag_darn);
	tcase_add_test(tc, test_flag_s390);
	tcase_add_test(tc, test_retry_budget);
	tcase_add_test(tc, test_stuck_is_fault);
	suite_add_tcase(s, tc);

	tc = tcase_create("here");
	/* Emulated CPUs are slow: 16 blocks per source under TCG. */
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_driver_table);
	tcase_add_test(tc, test_probe_here);
	tcase_add_test(tc, test_read_here);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return td_run(cpu_sources_suite()); }
