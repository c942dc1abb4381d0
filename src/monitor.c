/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Integrity monitor: FIPS 140-2 block tests and SP 800-90B §4.4 health tests.
 *
 * Pure code: no I/O and no logging; the caller owns policy.  Organised by
 * test, each section opened by a banner citing its source:
 *   cutoffs (§4.4.1, §4.4.2);  the table of tests;  FIPS 140-2 (§4.9.1 and
 *   the continuous test of §4.9.2);  SP 800-90B repetition count (§4.4.1),
 *   the difference RCT (§4.5), adaptive proportion (§4.4.2);  start-up (§4.3)
 *   and the failure policy;  life cycle;  the dispatcher.
 * Each test has its own reset (and init: its cutoffs) here; what runs per
 * sample inside the fused word-at-a-time pass over a block (monitor_scan.c)
 * is reached through monitor_internal.h, so that the monitor is never the
 * bottleneck.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor_internal.h"

_Static_assert(MONITOR_BLOCK_BYTES - TAIL_OFFSET == 4, "block is 312 words + 4 bytes");
/* A block holds at least the 1,024 start-up samples, whether a sample is a
 * byte or a bit: the start-up test always completes within one clean block. */
_Static_assert(MONITOR_BLOCK_BYTES >= MONITOR_STARTUP_SAMPLES, "start-up fits a block");
/* APT windows start at multiples of W samples from the reset; block starts
 * lie at multiples of 2,500 bytes.  gcd(2500, 512) = 4 bytes and
 * gcd(20000, 1024) = 32 bits, so every window segment is whole bytes. */
_Static_assert(BLOCK_BITS % 32 == 0 && MONITOR_APT_WINDOW_BINARY % 32 == 0, "byte segments");

/* ------------------------------------------------------------------------ */
/* Cutoffs (SP 800-90B §4.4.1 and §4.4.2)                                   */
/* ------------------------------------------------------------------------ */

static bool alpha_ok(double alpha_log2)
{
	return alpha_log2 >= -256.0 && alpha_log2 <= -8.0;
}

/*
 * SP 800-90B §4.4.1: C = 1 + ceil(-log2(α) / H).  A run of C identical
 * samples has probability at most 2^(-H·(C-1)) <= α for a source with
 * min-entropy H.  E.g. H = 8, α = 2^-30: C = 1 + ceil(3.75) = 5.
 * H typed in decimal is inexact in binary: a quotient within 1e-9 above an
 * integer is taken as that integer, so that 30 / 0.1 gives 300, not 301.
 */
unsigned monitor_rct_cutoff(double min_entropy, double alpha_log2)
{
	double q, c;

	if (!(min_entropy > 0.0 && min_entropy <= 8.0) || !alpha_ok(alpha_log2))
		return 0;
	q = -alpha_log2 / min_entropy;
	if (q > 1e6)
		return 0;
	c = ceil(q);
	if (c - q > 1.0 - 1e-9)
		c -= 1.0;
	return 1u + (unsigned)c;
}

/*
 * SP 800-90B §4.4.2: C = 1 + CRITBINOM(W, 2^-H, 1 - α), the smallest C with
 * P(B >= C) <= α for B ~ Binomial(W, p = 2^-H): the count of the window's
 * first sample value cannot reach C more often than α for a source with
 * min-entropy H.  A result above W means the test cannot fire at that H and α.
 *
 * The tail P(B >= c) is summed from c = W downwards (small terms first),
 * as a multiple of α, each term from the one before by
 *     P(B = i - 1) / P(B = i) = i / (W - i + 1) · (1 - p) / p,
 * a division and two multiplications per term: a few microseconds for any
 * (H, α), so every start computes its cutoffs (the lgammal sum this replaces
 * took 0.1-0.2 ms per cutoff, issue 20).  P(B = W) = p^W reaches 2^-4096
 * (H = 8, W = 512): the terms start in long double, and any that lie below
 * double's range are stepped over in log space; they add less than
 * W · 2^-900 of α, far below what could move C.
 * check_monitor_apt_fast compares the result with a direct lgamma sum.
 */
static unsigned apt_cutoff_compute(double min_entropy, unsigned window, double alpha_log2)
{
	const long double ln2 = 0.693147180559945309417232121458176568L;
	const long double lp = -(long double)min_entropy * ln2; /* log p */
	const long double lq = logl(-expm1l(lp));              /* log(1 - p) */
	const long double q_over_p = expl(lq - lp);
	/* Below this, e^x is not a normal double (with margin).  Double's
	 * range, not long double's: where long double is double at run time
	 * (valgrind runs x87 arithmetic in 64 bits) a start at long double's
	 * floor underflows to 0 and no cutoff is ever found. */
	const long double floor_log = (long double)(DBL_MIN_EXP + 64) * ln2;
	long double lt = window * lp - (long double)alpha_log2 * ln2; /* log(P(B = W) / α) */
	long double term, tail = 0.0L;
	unsigned i = window;

	while (lt < floor_log && i > 0) {
		lt += logl((long double)i / (window - i + 1)) + lq - lp;
		i--;
	}
	term = expl(lt);
	for (;;) {
		tail += term; /* P(B >= i) / α */
		if (tail > 1.0L)
			return i + 1;
		if (i == 0)
			return 0; /* not reached: P(B >= 0) = 1 > α */
		term *= (long double)i / (window - i + 1) * q_over_p;
		i--;
	}
}

unsigned monitor_apt_cutoff(double min_entropy, unsigned window, double alpha_log2)
{
	if (!(min_entropy > 0.0 && min_entropy <= 8.0) || !alpha_ok(alpha_log2) ||
	    window < 2 || window > 65536)
		return 0;
	return apt_cutoff_compute(min_entropy, window, alpha_log2);
}

/* ------------------------------------------------------------------------ */
/* The table of tests                                                       */
/* ------------------------------------------------------------------------ */

/*
 * Every failure bit once, in the order the log names them.  A row with a
 * key is a counted test (the readers' counters, the summary, the metrics);
 * a permanent bit has none: it always comes with its test's bit, which
 * counts it, and its name replaces that test's (implied_by).  Adding a test
 * is a row here and its bit in monitor.h.
 */
const struct monitor_test monitor_tests[MONITOR_N_TESTS] = {
	{ MONITOR_FIPS_MONOBIT, "FIPS monobit", "monobit", 0 },
	{ MONITOR_FIPS_POKER, "FIPS poker", "poker", 0 },
	{ MONITOR_FIPS_RUNS, "FIPS runs", "runs", 0 },
	{ MONITOR_FIPS_LONGRUN, "FIPS long run", "long run", 0 },
	{ MONITOR_FIPS_CONTINUOUS, "FIPS continuous", "continuous", 0 },
	{ MONITOR_RCT_PERMANENT, "SP 800-90B repetition count (permanent)", NULL, 0 },
	{ MONITOR_APT_PERMANENT, "SP 800-90B adaptive proportion (permanent)", NULL, 0 },
	{ MONITOR_RCT, "SP 800-90B repetition count", "RCT", MONITOR_RCT_PERMANENT },
	{ MONITOR_APT, "SP 800-90B adaptive proportion", "APT", MONITOR_APT_PERMANENT },
	{ MONITOR_DRCT_PERMANENT, "repetition count of differences (permanent)", NULL, 0 },
	{ MONITOR_DRCT, "repetition count of differences", "difference RCT",
	  MONITOR_DRCT_PERMANENT },
};

void monitor_failure_names(unsigned failed, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < MONITOR_N_TESTS; i++) {
		const struct monitor_test *t = &monitor_tests[i];

		if (!(failed & t->bit) || (failed & t->implied_by))
			continue;
		used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
					 used ? ", " : "", t->name);
	}
}

/* ------------------------------------------------------------------------ */
/* FIPS 140-2: monobit, poker, runs, long run (§4.9.1), continuous (§4.9.2) */
/* ------------------------------------------------------------------------ */

/*
 * FIPS 140-2 change notice (2001-10-10), §4.9.1, for one 20,000-bit block.
 * Monobit: pass iff 9725 < ones < 10275.
 * Poker: X = 16/5000 · Σ f(i)² − 5000 over the 5,000 4-bit nibbles; pass iff
 * 2.16 < X < 46.17.  In integers: Σ f² = (X + 5000) · 312.5, so pass iff
 * 1563175 < Σ f² < 1576928.125, i.e. 1563176 <= Σ f² <= 1576928 (Σ f² is
 * always even: it has the parity of Σ f = 5000).
 * Runs: runs of length 1..5 and 6+, of zeros and of ones separately, each
 * count within the table's closed interval.  Long run: any run >= 26 fails.
 */
#define MONOBIT_LOW 9725u
#define MONOBIT_HIGH 10275u
#define POKER_SUMSQ_MIN 1563176u
#define POKER_SUMSQ_MAX 1576928u

static const struct {
	uint16_t lo, hi;
} runs_interval[6] = {
	{ 2315, 2685 }, { 1114, 1386 }, { 527, 723 },
	{ 240, 384 },   { 103, 209 },   { 103, 209 },
};

static unsigned fips_monobit_verdict(uint32_t ones)
{
	return ones <= MONOBIT_LOW || ones >= MONOBIT_HIGH ? MONITOR_FIPS_MONOBIT : 0;
}


/* Nibble counts from the byte histogram: row sums give the high nibbles,
 * column sums the low ones (written so the compiler can vectorise it). */
static unsigned fips_poker_verdict(const uint16_t h[2][256], unsigned extra15)
{
	uint16_t row[16], col[16] = { 0 };
	uint32_t sumsq = 0;

	for (unsigned hi = 0; hi < 16; hi++) {
		row[hi] = 0;
		for (unsigned lo = 0; lo < 16; lo++) {
			uint16_t n = h[0][16 * hi + lo] + h[1][16 * hi + lo];

			row[hi] += n;
			col[lo] += n;
		}
	}
	col[15] += extra15;
	for (unsigned v = 0; v < 16; v++) {
		uint32_t f = (uint32_t)row[v] + col[v]; /* nibble v, high or low */

		sumsq += f * f;
	}
	return sumsq < POKER_SUMSQ_MIN || sumsq > POKER_SUMSQ_MAX ? MONITOR_FIPS_POKER : 0;
}

static unsigned fips_runs_verdict(const uint32_t n[2][7])
{
	for (unsigned k = 1; k <= 6; k++)
		for (unsigned c = 0; c < 2; c++)
			if (n[c][k] < runs_interval[k - 1].lo || n[c][k] > runs_interval[k - 1].hi)
				return MONITOR_FIPS_RUNS;
	return 0;
}

/* Every FIPS 140-2 verdict from the block's counts; wipes them. */
static unsigned fips_verdict(struct fips_counts *fc)
{
	unsigned failed = fips_monobit_verdict(fc->ones) |
			  fips_poker_verdict(fc->hist, fc->extra15) |
			  fips_runs_verdict(fc->runs);

	if (fc->cont)
		failed |= MONITOR_FIPS_CONTINUOUS;
	explicit_bzero(fc, sizeof(*fc)); /* a histogram of raw input */
	return failed;
}

/*
 * Long run (any run of FIPS_LONGRUN_BITS or more) and the continuous test
 * (a 32-bit word equal to the one before fails; the first word after a
 * reset only seeds it, unless monitor_seed_continuous() gave one) are
 * taken by the fused scan: both look at neighbouring words or bytes.
 */
static void fips_reset(struct monitor *m)
{
	m->fips = (struct fips_state){ 0 };
}

void monitor_seed_continuous(struct monitor *m, const uint8_t word[4])
{
	m->fips.last32 = load_le32(word);
	m->fips.seeded = true;
}

/* ------------------------------------------------------------------------ */
/* SP 800-90B §4.4.1: the repetition count test                             */
/* ------------------------------------------------------------------------ */

/*
 * A run of C = monitor_rct_cutoff(H, α) identical samples fails.  Byte
 * samples: rct_insert() (monitor_internal.h), called by the fused scan for
 * the bytes equal to their predecessor; binary samples: runs_binary()
 * below, with the difference RCT.  Runs carry across blocks.
 */
static void rct_reset(struct monitor *m)
{
	m->rct = (struct rct_state){ 0 };
}

/* ------------------------------------------------------------------------ */
/* SP 800-90B §4.5: the difference RCT (developer-defined)                 */
/* ------------------------------------------------------------------------ */

/*
 * A counter (0, 1, 2, …, 255, 0, …) passes FIPS in most blocks and never
 * repeats a byte, so neither the RCT nor the APT sees it.  SP 800-90B §4.5
 * allows developer-defined continuous tests; this one is the RCT applied to
 * the differences D_i = x_i - x_(i-1) mod 2^sample_bits of consecutive
 * samples: C equal differences in a row, i.e. C + 1 samples in arithmetic
 * progression, fail, with the RCT's cutoff C = 1 + ceil(-log2(α) / H).
 *
 * Why the same C keeps the false-positive rate at α: for an IID source with
 * min-entropy H per sample, given x_i (and everything before it)
 *     P(D_(i+1) = d | x_i) = P(x_(i+1) = x_i + d) <= max_v P(x = v) = 2^-H,
 * so each difference after the first of a run repeats the previous one with
 * probability at most 2^-H whatever came before, and a run of C equal
 * differences has probability at most 2^(-H·(C-1)) <= α, exactly the RCT's
 * bound (the differences are not independent of each other, but this chain
 * of conditional bounds does not need them to be).
 *
 * d = 0 is left out: a run of zero differences is a run of equal samples,
 * which the standard RCT already fails one sample earlier (C samples, not
 * C + 1).  A constant source is thus reported once, as MONITOR_RCT, and
 * MONITOR_DRCT always means a progression with a non-zero step.
 *
 * Binary samples: differences mod 2 are XORs, and the only non-zero step is
 * d = 1, an alternation 0101….  The test applies there too: the same bound
 * holds (P(x_(i+1) = x_i XOR 1 | x_i) <= 2^-H), and an oscillator locked to
 * its sampling clock is a classic failure of binary sources.  FIPS catches a
 * block that alternates throughout (runs and poker), but not a stretch of,
 * say, 40 alternating bits inside a random block (some 20 extra runs of
 * length 1 each way, well inside 2315..2685); at H = 1 this test fails 32.
 */

static void drct_reset(struct monitor *m)
{
	m->drct = (struct drct_state){ 0 };
}

/* ------------------------------------------------------------------------ */
/* SP 800-90B §4.4.1 and §4.5 on binary samples: the RCT and the DRCT       */
/* ------------------------------------------------------------------------ */

/* Leading ones of an 8-bit value, 0..8. */
static inline unsigned lead_ones8(uint8_t v)
{
	return (unsigned)__builtin_clz(~(unsigned)v << 24 | 0x800000u);
}

/* Trailing ones of an 8-bit value, 0..8. */
static inline unsigned trail_ones8(uint8_t v)
{
	return (unsigned)__builtin_ctz(~(unsigned)v | 0x100u);
}

/*
 * Runs of equal bits, carried across blocks.  Per byte, the run grows by the
 * leading bits equal to it; a byte that ends it starts the next run with its
 * trailing bits.  Runs wholly inside a byte (<= 6) never reach the cutoff.
 * Branch-free: random bits make any branch on the run length a coin toss.
 * The longest run that reached into the block is kept in *max.
 */
struct bit_runs {
	uint32_t run, max;
	unsigned bit; /* the bit of the current run */
};

static inline void bit_runs_byte(struct bit_runs *r, uint8_t v)
{
	/* v with the run's bit as ones: bit ? v : ~v */
	const uint8_t y = v ^ (uint8_t)(r->bit - 1u), t = v ^ (uint8_t)((v & 1u) - 1u);
	const uint32_t through = r->run + lead_ones8(y);

	r->max = through > r->max ? through : r->max;
	r->run = y == 0xff ? through : trail_ones8(t);
	r->bit = v & 1u;
}

/* A carried run that the block's first bit does not continue is over: it
 * belongs to the previous block's verdict. */
static inline void bit_runs_start(struct bit_runs *r, bool started, unsigned first)
{
	if (!started || r->bit != first) {
		r->run = 0;
		r->bit = first;
	}
	r->max = 0;
}

/*
 * The RCT on the bits, and the difference RCT on them: a run of L bits
 * alternating 0101… is a run of L equal bits in the stream XORed with
 * 0101… (bit 8j+k of the stream flips when k is odd, i.e. byte ^ 0x55), and
 * L - 1 equal differences; so it fails at L >= C + 1.
 */
static unsigned runs_binary(struct monitor *m, const uint8_t *b)
{
	struct bit_runs eq = { .run = m->rct.run, .bit = m->rct.last },
			alt = { .run = m->drct.run, .bit = m->drct.last };
	unsigned failed = 0;

	bit_runs_start(&eq, m->rct.started, b[0] >> 7);
	bit_runs_start(&alt, m->rct.started, (b[0] ^ 0x55u) >> 7);
	for (size_t j = 0; j < MONITOR_BLOCK_BYTES; j++) {
		bit_runs_byte(&eq, b[j]);
		bit_runs_byte(&alt, b[j] ^ 0x55u);
	}
	/* Every sample at or past a cutoff fails its block, as for bytes. */
	if (eq.max >= m->c.rct)
		failed |= MONITOR_RCT;
	if (eq.max >= m->c.rct_permanent)
		failed |= MONITOR_RCT | MONITOR_RCT_PERMANENT;
	if (alt.max >= m->c.drct + 1)
		failed |= MONITOR_DRCT;
	if (alt.max >= m->c.drct_permanent + 1)
		failed |= MONITOR_DRCT | MONITOR_DRCT_PERMANENT;
	m->rct.run = eq.run;
	m->rct.last = (uint8_t)eq.bit;
	m->drct.run = alt.run;
	m->drct.last = (uint8_t)alt.bit;
	m->rct.started = true;
	return failed;
}


/* ------------------------------------------------------------------------ */
/* SP 800-90B §4.4.2: the adaptive proportion test                          */
/* ------------------------------------------------------------------------ */

static void apt_reset(struct monitor *m)
{
	m->apt = (struct apt_state){ 0 };
}

static inline uint32_t count_bytes(const uint8_t *p, size_t n, uint8_t value)
{
	const uint64_t pattern = value * ONES8;
	uint32_t count = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		count += pop64(zero_bytes(load_le64(p + i) ^ pattern));
	for (; i < n; i++)
		count += p[i] == value;
	return count;
}

static inline uint32_t count_bits(const uint8_t *p, size_t nbytes, unsigned bit)
{
	uint32_t ones = 0;
	size_t i = 0;

	for (; i + 8 <= nbytes; i += 8)
		ones += pop64(load_le64(p + i));
	for (; i < nbytes; i++)
		ones += pop64(p[i]);
	return bit ? ones : 8u * (uint32_t)nbytes - ones;
}

/*
 * Windows of W samples follow each other from the reset, across blocks.
 * The count includes the window's first sample (§4.4.2: B = 1 at the start).
 * Every segment of a window at or past the point where the count reached C
 * fails its block: the rest of a failing window is never used.
 */
HOT static unsigned apt_insert(struct monitor *m, const uint8_t *b)
{
	const bool binary = m->p.sample_bits == 1;
	const uint32_t window = m->c.apt_window;
	const size_t n = binary ? BLOCK_BITS : MONITOR_BLOCK_BYTES;
	unsigned failed = 0;

	for (size_t o = 0; o < n;) {
		size_t seg = window - m->apt.pos;

		if (seg > n - o)
			seg = n - o;
		if (m->apt.pos == 0) {
			m->apt.first = binary ? b[o / 8] >> 7 : b[o];
			m->apt.count = 0;
		}
		m->apt.count += binary ? count_bits(b + o / 8, seg / 8, m->apt.first)
				       : count_bytes(b + o, seg, m->apt.first);
		if (m->apt.count >= m->c.apt)
			failed |= MONITOR_APT;
		if (m->apt.count >= m->c.apt_permanent)
			failed |= MONITOR_APT | MONITOR_APT_PERMANENT;
		m->apt.pos += (uint32_t)seg;
		if (m->apt.pos == window)
			m->apt.pos = 0;
		o += seg;
	}
	return failed;
}

/* ------------------------------------------------------------------------ */
/* SP 800-90B §4.3: the start-up test, and the failure policy               */
/* ------------------------------------------------------------------------ */

/*
 * A block holds more than the 1,024 start-up samples (asserted above), so
 * the start-up test passes with the first block free of 90B failures.  K
 * failed blocks in a row, or one permanent 90B failure, make the failure
 * permanent until the next reset.
 */
static void startup_reset(struct monitor *m)
{
	m->startup_passed = false;
	m->permanent = false;
	m->consecutive = 0;
}

static void startup_insert(struct monitor *m, unsigned failed, struct monitor_verdict *v)
{
	*v = (struct monitor_verdict){ .failed = failed };
	if (!m->startup_passed) {
		if (failed & MONITOR_90B_MASK)
			v->startup_failed = true;
		else
			m->startup_passed = true;
	}
	if (failed) {
		if (m->consecutive < UINT32_MAX)
			m->consecutive++;
	} else {
		m->consecutive = 0;
	}
	if ((failed & MONITOR_PERMANENT_MASK) ||
	    (m->p.max_consecutive_failures && m->consecutive >= m->p.max_consecutive_failures))
		m->permanent = true;

	v->class = m->permanent ? MONITOR_PERMANENT : failed ? MONITOR_INTERMITTENT : MONITOR_OK;
	v->startup_passed = m->startup_passed;
	v->usable = !failed && m->startup_passed && !m->permanent;
	v->consecutive_failures = m->consecutive;
}

/* ------------------------------------------------------------------------ */
/* Life cycle                                                               */
/* ------------------------------------------------------------------------ */

void monitor_params_default(struct monitor_params *p)
{
	*p = (struct monitor_params){
		.min_entropy = 8.0,
		.sample_bits = 8,
		/* 2^-30 like jitterentropy: at H = 8 a healthy byte source trips
		 * the RCT about once per 4 GiB and the block is just discarded. */
		.alpha_log2 = -30.0,
		/* 2^-60: a healthy source at 1 GB/s (2^30 samples/s) would see a
		 * false permanent failure about once in 2^30 s, i.e. 34 years. */
		.permanent_alpha_log2 = -60.0,
		/* A healthy source fails FIPS about once per 1,250 blocks; five in
		 * a row happen by chance with p ≈ (8e-4)^5 ≈ 3e-16 per block. */
		.max_consecutive_failures = 5,
		.fips_counting = MONITOR_FIPS_STANDARD,
	};
}

static int compute_cutoffs(const struct monitor_params *p, struct monitor_cutoffs *c)
{
	if (p->sample_bits != 1 && p->sample_bits != 8)
		return -EINVAL;
	if (p->fips_counting != MONITOR_FIPS_STANDARD && p->fips_counting != MONITOR_FIPS_RNGTEST5)
		return -EINVAL;
	if (!(p->min_entropy > 0.0 && p->min_entropy <= p->sample_bits))
		return -EINVAL;
	if (!alpha_ok(p->alpha_log2) || !alpha_ok(p->permanent_alpha_log2) ||
	    p->permanent_alpha_log2 > p->alpha_log2)
		return -EINVAL;
	c->apt_window = p->sample_bits == 1 ? MONITOR_APT_WINDOW_BINARY : MONITOR_APT_WINDOW;
	c->rct = monitor_rct_cutoff(p->min_entropy, p->alpha_log2);
	c->rct_permanent = monitor_rct_cutoff(p->min_entropy, p->permanent_alpha_log2);
	c->apt = monitor_apt_cutoff(p->min_entropy, c->apt_window, p->alpha_log2);
	c->apt_permanent = monitor_apt_cutoff(p->min_entropy, c->apt_window,
					      p->permanent_alpha_log2);
	/* The difference RCT has the RCT's bound (see its banner below). */
	c->drct = c->rct;
	c->drct_permanent = c->rct_permanent;
	if (!c->rct || !c->rct_permanent || !c->apt || !c->apt_permanent)
		return -EINVAL;
	/* The binary RCT below sees runs inside a byte only at its edges; runs
	 * wholly inside a byte are at most 6 long, below any cutoff here
	 * (H <= 1 and α <= 2^-8 give C >= 9); the same holds for the runs of
	 * the alternation stream, whose cutoff is C + 1 bits. */
	if (p->sample_bits == 1 && c->rct < 8)
		return -EINVAL;
	return 0;
}

int monitor_new(const struct monitor_params *p, struct monitor **ret)
{
	struct monitor_cutoffs c;
	struct monitor *m;
	int r;

	r = compute_cutoffs(p, &c);
	if (r < 0)
		return r;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->p = *p;
	m->c = c;
	m->avx512 = !p->portable && monitor_cpu_has_avx512();
	monitor_reset(m);
	*ret = m;
	return 0;
}

struct monitor *monitor_free(struct monitor *m)
{
	if (m) {
		explicit_bzero(m, sizeof(*m)); /* holds the last raw word and samples */
		free(m);
	}
	return NULL;
}

void monitor_get_cutoffs(const struct monitor *m, struct monitor_cutoffs *c)
{
	*c = m->c;
}

void monitor_reset(struct monitor *m)
{
	fips_reset(m);
	rct_reset(m);
	drct_reset(m);
	apt_reset(m);
	startup_reset(m);
}

/* ------------------------------------------------------------------------ */
/* The dispatcher: one block through every test                             */
/* ------------------------------------------------------------------------ */

int monitor_test_block(struct monitor *m, const uint8_t block[MONITOR_BLOCK_BYTES],
		       struct monitor_verdict *v)
{
	struct fips_counts fc; /* filled by the scan */
	unsigned failed;

	if (!m || !block || !v)
		return -EINVAL;
	/* FIPS 140-2 (long run at once, the rest from the counts), and for
	 * byte samples the RCT and the DRCT. */
	failed = monitor_scan_block(m, block, &fc);
	failed |= fips_verdict(&fc);
	if (m->p.sample_bits == 1)
		failed |= runs_binary(m, block);
	failed |= apt_insert(m, block);
	startup_insert(m, failed, v);
	return 0;
}
