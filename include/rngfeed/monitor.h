/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Integrity monitor: FIPS 140-2 (change notice 2001-10-10) block tests and the
 * SP 800-90B §4.4 continuous health tests, run on a source's raw output before
 * anything is conditioned or credited.
 *
 * Pure code: no I/O, no logging, no globals; one struct monitor per source.
 * The caller feeds consecutive MONITOR_BLOCK_BYTES blocks of raw data and gets
 * one verdict per block.  Bits are taken most significant first within each
 * byte (the order rngtest uses); binary 90B samples follow the same order.
 */
#ifndef RNGFEED_MONITOR_H
#define RNGFEED_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One FIPS 140-2 block: 20,000 bits. */
#define MONITOR_BLOCK_BYTES 2500u
/* SP 800-90B §4.3: the start-up tests run on at least 1,024 samples. */
#define MONITOR_STARTUP_SAMPLES 1024u
/* SP 800-90B §4.4.2: the adaptive proportion window. */
#define MONITOR_APT_WINDOW_BINARY 1024u
#define MONITOR_APT_WINDOW 512u

/* Per-test failure bits of a verdict. */
enum {
	MONITOR_FIPS_MONOBIT = 1u << 0,
	MONITOR_FIPS_POKER = 1u << 1,
	MONITOR_FIPS_RUNS = 1u << 2,
	MONITOR_FIPS_LONGRUN = 1u << 3,
	MONITOR_FIPS_CONTINUOUS = 1u << 4,
	MONITOR_RCT = 1u << 5,           /* repetition count, cutoff at alpha */
	MONITOR_APT = 1u << 6,           /* adaptive proportion, cutoff at alpha */
	MONITOR_RCT_PERMANENT = 1u << 7, /* cutoff at permanent_alpha; implies RCT */
	MONITOR_APT_PERMANENT = 1u << 8, /* cutoff at permanent_alpha; implies APT */
	/* Developer-defined (SP 800-90B §4.5): repetition count test on the
	 * differences of consecutive samples, i.e. an arithmetic progression
	 * such as a counter (monitor.c); cutoff at alpha. */
	MONITOR_DRCT = 1u << 9,
	MONITOR_DRCT_PERMANENT = 1u << 10, /* cutoff at permanent_alpha; implies DRCT */
};
#define MONITOR_FIPS_MASK 0x1fu
/* The 90B tests, the developer-defined one included: a failure fails the
 * start-up test and makes its block unusable. */
#define MONITOR_90B_MASK 0x7e0u
#define MONITOR_PERMANENT_MASK \
	(MONITOR_RCT_PERMANENT | MONITOR_APT_PERMANENT | MONITOR_DRCT_PERMANENT)

/*
 * The table of tests: every failure bit once, in the order log lines name
 * them.  It drives the readers' failure counters (one per row with a key),
 * the names in the log, the summary and the metrics.
 */
struct monitor_test {
	unsigned bit;        /* MONITOR_* */
	const char *name;    /* in log lines: "FIPS monobit" */
	const char *key;     /* the counter's label in the summary and the
			      * metrics; NULL for a permanent bit, which comes
			      * with its test's bit and is counted by it */
	unsigned implied_by; /* a bit whose name makes this one redundant */
};
#define MONITOR_N_TESTS 11
extern const struct monitor_test monitor_tests[MONITOR_N_TESTS];

/* "FIPS monobit, SP 800-90B repetition count (permanent)": the names of
 * the failure bits in @failed, truncated to @len. */
void monitor_failure_names(unsigned failed, char *buf, size_t len);

enum monitor_class {
	MONITOR_OK = 0,           /* no test failed in this block */
	MONITOR_INTERMITTENT = 1, /* discard the block, keep the source */
	MONITOR_PERMANENT = 2,    /* disable the source; latched until monitor_reset() */
};

/* How the FIPS runs and poker tests count (see monitor.c). */
enum monitor_fips_counting {
	MONITOR_FIPS_STANDARD = 0, /* FIPS 140-2 as written; rng-tools >= 6.11 */
	MONITOR_FIPS_RNGTEST5 = 1, /* rng-tools <= 6.10 quirks, to agree with that rngtest */
};

struct monitor_params {
	/* Claimed min-entropy H per sample, 0 < H <= sample_bits. */
	double min_entropy;
	/* 8: each byte is a sample; 1: each bit is a sample (binary source). */
	unsigned sample_bits;
	/* log2 of the false-positive probability α of the intermittent cutoffs,
	 * in [-100, -8]; default -30 (SP 800-90B suggests 2^-20..2^-40). */
	double alpha_log2;
	/* log2 of α for the permanent cutoffs, <= alpha_log2 - 8; default -60. */
	double permanent_alpha_log2;
	/* K: this many failed blocks in a row make the failure permanent;
	 * 0 disables the rule. Default 5. */
	unsigned max_consecutive_failures;
	/* MONITOR_FIPS_STANDARD for the daemon; --check uses RNGTEST5. */
	enum monitor_fips_counting fips_counting;
	/* Tests only: use the portable code even where SIMD is available. */
	bool portable;
};

/* The cutoffs derived from the parameters, for status output and tests. */
struct monitor_cutoffs {
	unsigned rct, rct_permanent;
	unsigned apt, apt_permanent;
	unsigned apt_window;
	/* Difference RCT: this many equal consecutive non-zero differences
	 * (C + 1 samples in arithmetic progression) fail; same formula as rct. */
	unsigned drct, drct_permanent;
};

struct monitor_verdict {
	unsigned failed;          /* MONITOR_* bits of the tests that failed */
	enum monitor_class class; /* failure class of this block */
	bool startup_passed;      /* the start-up test has passed (as of this block's end) */
	bool startup_failed;      /* a 90B test failed while the start-up test ran */
	bool usable;              /* every test passed and the start-up test has passed */
	unsigned consecutive_failures; /* failed blocks in a row, this one included */
};

struct monitor;

/* Defaults: byte samples, H = 8, α = 2^-30, permanent α = 2^-60, K = 5,
 * standard FIPS counting. */
void monitor_params_default(struct monitor_params *p);

/* Cutoff C of the repetition count test (§4.4.1), or 0 if H or α is out of range. */
unsigned monitor_rct_cutoff(double min_entropy, double alpha_log2);
/* Cutoff C of the adaptive proportion test (§4.4.2) for window W, or 0 if out of range. */
unsigned monitor_apt_cutoff(double min_entropy, unsigned window, double alpha_log2);

/* 0, -EINVAL (bad parameters) or -ENOMEM. */
int monitor_new(const struct monitor_params *p, struct monitor **ret);
/* Wipes and frees; returns NULL. */
struct monitor *monitor_free(struct monitor *m);
void monitor_get_cutoffs(const struct monitor *m, struct monitor_cutoffs *c);

/*
 * On source (re)open: the start-up test runs again, the 90B (the difference
 * RCT included) and the FIPS continuous-test state restart, the failure
 * count and a latched permanent failure are cleared.  After a reset the
 * first 32-bit word of the next block only seeds the continuous test, unless
 * monitor_seed_continuous() gave one.
 */
void monitor_reset(struct monitor *m);

/* rngtest alignment: seed the continuous test with 4 bytes that are not tested. */
void monitor_seed_continuous(struct monitor *m, const uint8_t word[4]);

/*
 * Tests the next MONITOR_BLOCK_BYTES bytes of the source's raw output.
 * Returns 0 and fills *v; a block is to be used or credited only if v->usable.
 */
int monitor_test_block(struct monitor *m, const uint8_t block[MONITOR_BLOCK_BYTES],
		       struct monitor_verdict *v);

#endif
