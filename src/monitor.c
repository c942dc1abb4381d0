/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Integrity monitor: FIPS 140-2 block tests and SP 800-90B §4.4 health tests.
 *
 * Pure code: no I/O and no logging; the caller owns policy.  Everything is
 * computed word-at-a-time so that the monitor is never the bottleneck.
 */
#include <errno.h>
#include <endian.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/monitor.h"

#define BLOCK_WORDS (MONITOR_BLOCK_BYTES / 8)     /* 312 full 64-bit words ... */
#define TAIL_OFFSET (BLOCK_WORDS * 8)             /* ... and a 4-byte tail */
#define BLOCK_BITS (MONITOR_BLOCK_BYTES * 8)

_Static_assert(MONITOR_BLOCK_BYTES - TAIL_OFFSET == 4, "block is 312 words + 4 bytes");
/* A block holds at least the 1,024 start-up samples, whether a sample is a
 * byte or a bit: the start-up test always completes within one clean block. */
_Static_assert(MONITOR_BLOCK_BYTES >= MONITOR_STARTUP_SAMPLES, "start-up fits a block");
/* APT windows start at multiples of W samples from the reset; block starts
 * lie at multiples of 2,500 bytes.  gcd(2500, 512) = 4 bytes and
 * gcd(20000, 1024) = 32 bits, so every window segment is whole bytes. */
_Static_assert(BLOCK_BITS % 32 == 0 && MONITOR_APT_WINDOW_BINARY % 32 == 0, "byte segments");

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
#define LONGRUN_BITS 26u

static const struct {
	uint16_t lo, hi;
} runs_interval[6] = {
	{ 2315, 2685 }, { 1114, 1386 }, { 527, 723 },
	{ 240, 384 },   { 103, 209 },   { 103, 209 },
};

/* Hot loops need the popcnt instruction; the default -O2 build targets plain
 * x86-64, so pick a popcnt clone at load time where the CPU has one. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define HOT __attribute__((target_clones("popcnt", "default")))
#else
#define HOT
#endif

/* Where the CPU may count bits in 512-bit vectors, checked at run time. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_RUNS_AVX512 1
static bool cpu_has_avx512_popcnt(void);
#endif

struct monitor {
	struct monitor_params p;
	struct monitor_cutoffs c;

	/* FIPS continuous test: the previous 32-bit word. */
	uint32_t last32;
	bool seeded;

	/* 90B repetition count test: the current run of equal samples. */
	uint32_t rct_run;
	uint8_t rct_last; /* last sample: a byte, or a bit in binary mode */
	bool rct_started;

	/* Difference RCT (developer-defined, see "Arithmetic progressions"):
	 * the current run of equal differences, and the last difference (byte
	 * samples) or the last bit of the alternation stream (binary). */
	uint32_t drct_run;
	uint8_t drct_last;

	/* 90B adaptive proportion test: position in the window, its first
	 * sample and how often that sample has occurred so far. */
	uint32_t apt_pos, apt_count;
	uint8_t apt_first;

	bool startup_passed;
	bool permanent;
	unsigned consecutive;

	/* Only for MONITOR_FIPS_RNGTEST5: the previous block's last bit. */
	uint8_t fips_last_bit;

	bool avx512; /* the CPU counts bits in 512-bit vectors */
};

/* ------------------------------------------------------------------------ */
/* Cutoffs                                                                  */
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

static long double log_add(long double a, long double b)
{
	long double hi = a > b ? a : b, lo = a > b ? b : a;

	if (isinf(lo))
		return hi;
	return hi + log1pl(expl(lo - hi));
}

/*
 * SP 800-90B §4.4.2: C = 1 + CRITBINOM(W, 2^-H, 1 - α), the smallest C with
 * P(B >= C) <= α for B ~ Binomial(W, p = 2^-H): the count of the window's
 * first sample value cannot reach C more often than α for a source with
 * min-entropy H.  The tail P(B >= c) is summed from c = W downwards (small
 * terms first) in log space, with lgamma for the binomial coefficient, so
 * that p^W = 2^-4096 (H = 8, W = 512) neither underflows nor loses the sum.
 * A result above W means the test cannot fire at that H and α.
 */
static unsigned apt_cutoff_compute(double min_entropy, unsigned window,
				   double alpha_log2)
{
	long double lp, lq, la, lw, tail = -INFINITY;
	int sign;

	lp = -(long double)min_entropy * logl(2.0L); /* log p */
	lq = logl(-expm1l(lp));                      /* log(1 - p) */
	la = (long double)alpha_log2 * logl(2.0L);   /* log α */
	lw = lgammal_r(window + 1.0L, &sign);
	for (unsigned i = window + 1; i-- > 0;) {
		long double term = lw - lgammal_r(i + 1.0L, &sign) -
				   lgammal_r(window - i + 1.0L, &sign) + i * lp +
				   (window - i) * lq;

		tail = log_add(tail, term); /* tail = log P(B >= i) */
		if (tail > la)
			return i + 1;
	}
	return 0; /* not reached: P(B >= 0) = 1 > α */
}

/*
 * The cutoffs every start needs, worked out once by apt_cutoff_compute()
 * (check_monitor_apt_table compares each entry with it): the drivers'
 * default min-entropies (8 and 6 bits per byte) at the default α's.  A
 * start then spends no lgammal on them: two cutoffs per source, 0.1 to
 * 0.2 ms each, on each reader's way to its first tested block.
 */
static const struct {
	double min_entropy, alpha_log2;
	unsigned window, cutoff;
} apt_known[] = {
	{ 8.0, -30.0, MONITOR_APT_WINDOW, 16 },
	{ 8.0, -60.0, MONITOR_APT_WINDOW, 25 },
	{ 6.0, -30.0, MONITOR_APT_WINDOW, 31 },
	{ 6.0, -60.0, MONITOR_APT_WINDOW, 44 },
};

unsigned monitor_apt_cutoff(double min_entropy, unsigned window, double alpha_log2)
{
	if (!(min_entropy > 0.0 && min_entropy <= 8.0) || !alpha_ok(alpha_log2) ||
	    window < 2 || window > 65536)
		return 0;
	for (size_t i = 0; i < sizeof(apt_known) / sizeof(apt_known[0]); i++)
		if (apt_known[i].min_entropy == min_entropy &&
		    apt_known[i].alpha_log2 == alpha_log2 &&
		    apt_known[i].window == window)
			return apt_known[i].cutoff;
	return apt_cutoff_compute(min_entropy, window, alpha_log2);
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
#ifdef HAVE_RUNS_AVX512
	m->avx512 = !p->portable && cpu_has_avx512_popcnt();
#endif
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
	m->last32 = 0;
	m->seeded = false;
	m->rct_run = 0;
	m->rct_last = 0;
	m->rct_started = false;
	m->drct_run = 0;
	m->drct_last = 0;
	m->apt_pos = 0;
	m->apt_count = 0;
	m->apt_first = 0;
	m->startup_passed = false;
	m->permanent = false;
	m->consecutive = 0;
	m->fips_last_bit = 0;
}

/* ------------------------------------------------------------------------ */
/* Word helpers                                                             */
/* ------------------------------------------------------------------------ */

static inline uint64_t load_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

/* Bit stream order: the first bit of the stream is bit 63. */
static inline uint64_t load_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be64toh(v);
}

static inline uint32_t load_le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static inline uint32_t load_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return be32toh(v);
}

#define ONES8 0x0101010101010101ull
#define HIGH8 0x8080808080808080ull
#define LOW7 0x7f7f7f7f7f7f7f7full

/* One bit (bit 7) per zero byte of v, exact. */
static inline uint64_t zero_bytes(uint64_t v)
{
	return ~(((v & LOW7) + LOW7) | v) & HIGH8;
}

static inline unsigned pop64(uint64_t v)
{
	return (unsigned)__builtin_popcountll(v);
}

/* ------------------------------------------------------------------------ */
/* FIPS runs, by counting windows                                           */
/* ------------------------------------------------------------------------ */

/*
 * Let P(k) be the number of positions where k consecutive ones (or zeros)
 * start within the block.  A run of length L contributes L-k+1 windows of
 * length k, so P(k) - P(k+1) counts the runs of length >= k, and runs of
 * exactly k number P(k) - 2P(k+1) + P(k+2).  P(1..7) of both polarities
 * give all twelve FIPS run counts with AND/OR chains and popcounts, 64 bits
 * at a time; windows are truncated at the block end like rngtest's runs.
 */
struct runs_acc {
	uint32_t and_pop[8];   /* full words: Σ popcount of k-fold ANDs (one windows) */
	uint32_t or_pop[8];    /* full words: Σ popcount of k-fold ORs (not zero windows) */
	uint32_t tail_ones[8]; /* the 32-bit tail: one windows */
	uint32_t tail_zeros[8]; /* the 32-bit tail: zero windows */
};

/* One 64-bit word x of stream bits followed by nx (only its top 6 bits
 * matter): s holds stream bit i+j at bit i, and the AND/OR chains grow. */
#define RUNS_STEP(j)                                   \
	do {                                           \
		uint64_t s_ = x << (j) | nx >> (64 - (j)); \
		a &= s_;                               \
		o |= s_;                               \
		and##j += pop64(a);                    \
		or##j += pop64(o);                     \
	} while (0)
#define RUNS_WORD()                                    \
	do {                                           \
		uint64_t a = x, o = x;                 \
		ones += pop64(x);                      \
		RUNS_STEP(1);                          \
		RUNS_STEP(2);                          \
		RUNS_STEP(3);                          \
		RUNS_STEP(4);                          \
		RUNS_STEP(5);                          \
		RUNS_STEP(6);                          \
	} while (0)

/* Windows of ones in x followed by nx (for the tail, padded with zeros). */
static inline void windows_word(uint32_t acc[8], uint64_t x, uint64_t nx)
{
	uint64_t a = x;

	acc[1] += pop64(x);
	for (unsigned j = 1; j < 7; j++) {
		a &= x << j | nx >> (64 - j);
		acc[j + 1] += pop64(a);
	}
}

/* The window counts of one block; accumulators stay in registers. */
HOT static void runs_pass(const uint8_t *b, struct runs_acc *r)
{
	uint32_t ones = 0, and1 = 0, and2 = 0, and3 = 0, and4 = 0, and5 = 0, and6 = 0;
	uint32_t or1 = 0, or2 = 0, or3 = 0, or4 = 0, or5 = 0, or6 = 0;
	uint64_t x = load_be64(b), nx;

	for (size_t i = 1; i < BLOCK_WORDS; i++) {
		nx = load_be64(b + 8 * i);
		RUNS_WORD();
		x = nx;
	}
	nx = (uint64_t)load_be32(b + TAIL_OFFSET) << 32;
	RUNS_WORD();

	*r = (struct runs_acc){
		.and_pop = { 0, ones, and1, and2, and3, and4, and5, and6 },
		.or_pop = { 0, ones, or1, or2, or3, or4, or5, or6 },
	};
	windows_word(r->tail_ones, nx, 0);
	windows_word(r->tail_zeros, ~nx & 0xffffffff00000000ull, 0);
}

#ifdef HAVE_RUNS_AVX512
#define RUNS_STEP512(j)                                                              \
	do {                                                                         \
		__m512i s_ = _mm512_or_si512(_mm512_slli_epi64(x, j),                 \
					     _mm512_srli_epi64(nx, 64 - (j)));        \
		a = _mm512_and_si512(a, s_);                                         \
		o = _mm512_or_si512(o, s_);                                          \
		and##j = _mm512_add_epi64(and##j, _mm512_popcnt_epi64(a));           \
		or##j = _mm512_add_epi64(or##j, _mm512_popcnt_epi64(o));             \
	} while (0)

/* runs_pass() eight words at a time, where the CPU counts bits in vectors. */
__attribute__((target("avx512f,avx512bw,avx512vpopcntdq"))) static void
runs_pass_avx512(const uint8_t *b, struct runs_acc *r)
{
	/* Reverses the bytes of each 64-bit lane: stream order, first bit on top. */
	const __m512i bswap = _mm512_broadcast_i32x4(
		_mm_set_epi8(8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
	__m512i ones = _mm512_setzero_si512(), and1 = ones, and2 = ones, and3 = ones,
		and4 = ones, and5 = ones, and6 = ones, or1 = ones, or2 = ones, or3 = ones,
		or4 = ones, or5 = ones, or6 = ones;
	uint64_t tail = (uint64_t)load_be32(b + TAIL_OFFSET) << 32;

	_Static_assert(BLOCK_WORDS % 8 == 0, "whole vectors");
	for (size_t i = 0; i < BLOCK_WORDS; i += 8) {
		const uint8_t *p = b + 8 * i;
		__m512i x = _mm512_shuffle_epi8(_mm512_loadu_si512(p), bswap), nx, a = x, o = x;

		/* The next words; past the last, the 4-byte tail (never read beyond). */
		if (i + 8 < BLOCK_WORDS)
			nx = _mm512_loadu_si512(p + 8);
		else
			nx = _mm512_maskz_loadu_epi8((1ull << 60) - 1, p + 8);
		nx = _mm512_shuffle_epi8(nx, bswap);
		ones = _mm512_add_epi64(ones, _mm512_popcnt_epi64(x));
		RUNS_STEP512(1);
		RUNS_STEP512(2);
		RUNS_STEP512(3);
		RUNS_STEP512(4);
		RUNS_STEP512(5);
		RUNS_STEP512(6);
	}
	*r = (struct runs_acc){
		.and_pop = { 0, (uint32_t)_mm512_reduce_add_epi64(ones),
			     (uint32_t)_mm512_reduce_add_epi64(and1), (uint32_t)_mm512_reduce_add_epi64(and2),
			     (uint32_t)_mm512_reduce_add_epi64(and3), (uint32_t)_mm512_reduce_add_epi64(and4),
			     (uint32_t)_mm512_reduce_add_epi64(and5), (uint32_t)_mm512_reduce_add_epi64(and6) },
		.or_pop = { 0, (uint32_t)_mm512_reduce_add_epi64(ones),
			    (uint32_t)_mm512_reduce_add_epi64(or1), (uint32_t)_mm512_reduce_add_epi64(or2),
			    (uint32_t)_mm512_reduce_add_epi64(or3), (uint32_t)_mm512_reduce_add_epi64(or4),
			    (uint32_t)_mm512_reduce_add_epi64(or5), (uint32_t)_mm512_reduce_add_epi64(or6) },
	};
	windows_word(r->tail_ones, tail, 0);
	windows_word(r->tail_zeros, ~tail & 0xffffffff00000000ull, 0);
}

static bool cpu_has_avx512_popcnt(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vpopcntdq");
}
#endif

/* Run counts per polarity (0: zeros, 1: ones) and bucket 1..5, 6 (6+). */
static void runs_count(const struct runs_acc *r, uint32_t n[2][7])
{
	uint32_t p[2][9];

	/* In full words, the zero windows are the positions the OR chain left 0;
	 * every window starting in a full word ends inside the block. */
	for (unsigned k = 1; k <= 7; k++) {
		p[1][k] = r->and_pop[k] + r->tail_ones[k];
		p[0][k] = BLOCK_WORDS * 64u - r->or_pop[k] + r->tail_zeros[k];
	}
	for (unsigned c = 0; c < 2; c++) {
		for (unsigned k = 1; k <= 5; k++)
			n[c][k] = p[c][k] - 2 * p[c][k + 1] + p[c][k + 2];
		n[c][6] = p[c][6] - p[c][7];
	}
}

/*
 * rng-tools up to 6.10 (rngtest in Debian's rng-tools5) count runs
 * differently, fixed upstream in 2020 ("Fix the broken FIPS 140-2 runs
 * test"): every run that a bit change ends is filed under the new bit, i.e.
 * under the other polarity, while the block's last run is filed correctly;
 * and when a block's first bit differs from the previous block's last bit
 * (0 before the first block) one more count lands in the zeros' 6+ bucket if
 * that bit is 1, or, through an index of -1, in poker nibble 15 if it is 0.
 * Reproduced only on request, for --check to agree with that rngtest.
 */
static unsigned rngtest5_runs(uint32_t n[2][7], unsigned first, unsigned prev_last,
			      unsigned last, unsigned last_bucket)
{
	uint32_t t[2][7];

	for (unsigned k = 1; k <= 6; k++) {
		t[0][k] = n[1][k];
		t[1][k] = n[0][k];
	}
	t[!last][last_bucket]--;
	t[last][last_bucket]++;
	memcpy(n, t, sizeof(t));
	if (first != prev_last) {
		if (first)
			n[0][6]++;
		else
			return 1; /* the extra poker count for nibble 15 */
	}
	return 0;
}

static unsigned runs_verdict(uint32_t n[2][7])
{
	for (unsigned k = 1; k <= 6; k++)
		for (unsigned c = 0; c < 2; c++)
			if (n[c][k] < runs_interval[k - 1].lo || n[c][k] > runs_interval[k - 1].hi)
				return MONITOR_FIPS_RUNS;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Arithmetic progressions: the difference RCT (developer-defined)         */
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

/* ------------------------------------------------------------------------ */
/* Equal neighbouring bytes or differences: FIPS long run, byte RCT, DRCT   */
/* ------------------------------------------------------------------------ */

/*
 * A run of >= 26 equal bits always covers two whole neighbouring bytes
 * 0x00 0x00 or 0xff 0xff (at worst 7 + 8 + 8 + 3 bits), a repetition of
 * byte samples is a pair of equal neighbouring bytes, and a repeated
 * difference is a pair of equal neighbouring differences.  Random data has
 * about ten of each per block: a vector pass flags those bytes (candidates()
 * below), and only they (and the 4-byte tail) are walked.  After a byte that
 * is not flagged both runs are 1, as it differs from its predecessor and so
 * does its difference; scan_bytes() restores that when it skips bytes.
 */
struct scan {
	const uint8_t *b;
	struct monitor *m;
	unsigned failed;
	size_t run_end; /* last byte of the bit run measured most recently */
	size_t next;    /* the byte after the last one walked */
};

/* Length of the bit run through the equal whole bytes b[j-1], b[j]. */
static unsigned bit_run_through(const uint8_t *b, size_t j, size_t *end)
{
	const uint8_t v = b[j];
	size_t lo = j - 1, hi = j;
	unsigned len;

	while (lo > 0 && b[lo - 1] == v)
		lo--;
	while (hi + 1 < MONITOR_BLOCK_BYTES && b[hi + 1] == v)
		hi++;
	len = 8u * (unsigned)(hi - lo + 1);
	/* Neighbours differ from v, so the counts below see a set bit. */
	if (lo > 0)
		len += (unsigned)__builtin_ctz((unsigned)(uint8_t)(b[lo - 1] ^ v));
	if (hi + 1 < MONITOR_BLOCK_BYTES)
		len += (unsigned)__builtin_clz((unsigned)(uint8_t)(b[hi + 1] ^ v)) - 24;
	*end = hi;
	return len;
}

static inline void rct_step(struct scan *s, bool equal)
{
	struct monitor *m = s->m;

	if (!equal) {
		m->rct_run = 1;
		return;
	}
	m->rct_run++;
	/* Every sample at or past the cutoff fails its block, so that the tail
	 * of a failing run is never used. */
	if (m->rct_run >= m->c.rct)
		s->failed |= MONITOR_RCT;
	if (m->rct_run >= m->c.rct_permanent)
		s->failed |= MONITOR_RCT | MONITOR_RCT_PERMANENT;
}

/* The next difference d; prev: a previous difference exists. */
static inline void drct_step(struct scan *s, uint8_t d, bool prev)
{
	struct monitor *m = s->m;

	if (prev && d == m->drct_last) {
		m->drct_run++;
	} else {
		m->drct_run = 1;
		m->drct_last = d;
	}
	/* A run of d = 0 is the RCT's to report; otherwise as rct_step(). */
	if (d == 0)
		return;
	if (m->drct_run >= m->c.drct)
		s->failed |= MONITOR_DRCT;
	if (m->drct_run >= m->c.drct_permanent)
		s->failed |= MONITOR_DRCT | MONITOR_DRCT_PERMANENT;
}

static void scan_bytes(struct scan *s, size_t from, size_t to)
{
	const uint8_t *b = s->b;
	struct monitor *m = s->m;
	const bool byte_rct = m->p.sample_bits == 8;

	/* Bytes skipped since the last walk; from >= 1 then, as byte 0 is
	 * always flagged unless the previous block's samples are known. */
	if (byte_rct && from != s->next) {
		m->rct_run = 1;
		m->drct_run = 1;
		m->drct_last = (uint8_t)(b[from - 1] - (from >= 2 ? b[from - 2] : m->rct_last));
	}
	s->next = to;
	for (size_t j = from; j < to; j++) {
		bool equal;

		if (j == 0) {
			if (byte_rct) {
				rct_step(s, m->rct_started && b[0] == m->rct_last);
				/* Blocks hold >= 2 samples: a started source has
				 * a previous difference. */
				if (m->rct_started)
					drct_step(s, (uint8_t)(b[0] - m->rct_last), true);
			}
			continue;
		}
		equal = b[j] == b[j - 1];
		if (byte_rct) {
			rct_step(s, equal);
			drct_step(s, (uint8_t)(b[j] - b[j - 1]), j >= 2 || m->rct_started);
		}
		if (equal && (b[j] == 0x00 || b[j] == 0xff) && j > s->run_end) {
			if (bit_run_through(b, j, &s->run_end) >= LONGRUN_BITS)
				s->failed |= MONITOR_FIPS_LONGRUN;
		}
	}
}

/*
 * Bit j % 64 of cand[j / 64] is set when byte j equals byte j - 1, or its
 * difference equals the previous difference, for j < TAIL_OFFSET.  head
 * holds the two samples before the block, then the block's first 64 bytes.
 * Generic vectors here (SSE2 on x86-64, NEON on arm64, scalar elsewhere);
 * AVX-512 below.
 */
#define CAND_WORDS (TAIL_OFFSET / 64)
_Static_assert(TAIL_OFFSET % 64 == 0, "whole 64-byte chunks");

typedef uint8_t v16u8 __attribute__((vector_size(16)));

static inline v16u8 load_v16(const uint8_t *p)
{
	v16u8 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The 0x00/0xff bytes of a lane as bits 0..7, byte 0 lowest. */
static inline uint64_t byte_mask8(uint64_t w)
{
	return ((w & HIGH8) * 0x0002040810204081ull) >> 56;
}

static void candidates(const uint8_t *b, const uint8_t head[66], uint64_t cand[CAND_WORDS])
{
	for (size_t q = 0; q < CAND_WORDS; q++) {
		const uint8_t *x = q ? b + 64 * q : head + 2;
		uint64_t bits = 0;

		for (unsigned k = 0; k < 64; k += 16) {
			v16u8 a = load_v16(x + k), p1 = load_v16(x + k - 1), p2 = load_v16(x + k - 2);
			v16u8 f = (v16u8)(a == p1) | (v16u8)((v16u8)(a - p1) == (v16u8)(p1 - p2));
			uint64_t lo, hi;

			memcpy(&lo, &f, 8);
			memcpy(&hi, (const uint8_t *)&f + 8, 8);
			bits |= (byte_mask8(lo) | byte_mask8(hi) << 8) << k;
		}
		cand[q] = bits;
	}
}

#ifdef HAVE_RUNS_AVX512
__attribute__((target("avx512f,avx512bw"))) static void
candidates_avx512(const uint8_t *b, const uint8_t head[66], uint64_t cand[CAND_WORDS])
{
	for (size_t q = 0; q < CAND_WORDS; q++) {
		const uint8_t *x = q ? b + 64 * q : head + 2;
		__m512i a = _mm512_loadu_si512(x), p1 = _mm512_loadu_si512(x - 1),
			p2 = _mm512_loadu_si512(x - 2);

		cand[q] = _mm512_cmpeq_epi8_mask(a, p1) |
			  _mm512_cmpeq_epi8_mask(_mm512_sub_epi8(a, p1), _mm512_sub_epi8(p1, p2));
	}
}
#endif

/* ------------------------------------------------------------------------ */
/* The FIPS block, the byte RCT and the byte DRCT in one pass              */
/* ------------------------------------------------------------------------ */

/* Nibble counts from the byte histogram: row sums give the high nibbles,
 * column sums the low ones (written so the compiler can vectorise it). */
static unsigned poker_verdict(uint16_t h[2][256], unsigned extra15)
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

/* Byte histogram for the poker test, two tables to halve dependency chains. */
HOT static void hist_pass(const uint8_t *b, uint16_t h[2][256])
{
	for (size_t i = 0; i < TAIL_OFFSET; i += 8) {
		uint64_t le = load_le64(b + i);

		h[0][le & 0xff]++;
		h[1][le >> 8 & 0xff]++;
		h[0][le >> 16 & 0xff]++;
		h[1][le >> 24 & 0xff]++;
		h[0][le >> 32 & 0xff]++;
		h[1][le >> 40 & 0xff]++;
		h[0][le >> 48 & 0xff]++;
		h[1][le >> 56]++;
	}
	for (size_t j = TAIL_OFFSET; j < MONITOR_BLOCK_BYTES; j++)
		h[0][b[j]]++;
}

/* Bucket (1..6) of the block's last run; the 32-bit tail holds >= 6 bits. */
static unsigned last_run_bucket(const uint8_t *tail)
{
	uint32_t w = load_be32(tail), same = (w & 1) ? w : ~w;
	unsigned len = same == UINT32_MAX ? 32 : (unsigned)__builtin_ctz(~same);

	return len >= 6 ? 6 : len;
}

HOT static unsigned fips_and_rct(struct monitor *m, const uint8_t *b)
{
	struct scan s = { .b = b, .m = m };
	struct runs_acc r;
	uint16_t h[2][256] = { { 0 } };
	uint32_t last32 = m->last32, tail32, cont = 0, ones, n[2][7];
	unsigned extra15 = 0, failed = 0;
	uint64_t cand[CAND_WORDS];
	uint8_t head[66];

#ifdef HAVE_RUNS_AVX512
	if (m->avx512)
		runs_pass_avx512(b, &r);
	else
#endif
		runs_pass(b, &r);
	hist_pass(b, h);

	/* The two byte samples before the block, for the byte RCT and DRCT;
	 * without them (binary samples, or none yet) byte 0 is compared with
	 * itself, so that it is flagged and scan_bytes() decides. */
	if (m->p.sample_bits == 8 && m->rct_started) {
		head[1] = m->rct_last;
		head[0] = (uint8_t)(m->rct_last - m->drct_last);
	} else {
		head[1] = b[0];
		head[0] = 0;
	}
	memcpy(head + 2, b, 64);
#ifdef HAVE_RUNS_AVX512
	if (m->avx512)
		candidates_avx512(b, head, cand);
	else
#endif
		candidates(b, head, cand);
	explicit_bzero(head, sizeof(head)); /* raw input */

	if (!m->seeded) /* the block's first word only seeds the test */
		last32 = ~load_le32(b);
	for (size_t i = 0; i < TAIL_OFFSET; i += 8) {
		uint64_t le = load_le64(b + i);
		uint32_t lo = (uint32_t)le, hi = (uint32_t)(le >> 32);

		cont |= (lo == last32) | (hi == lo);
		last32 = hi;
	}
	/* The flagged bytes, in order. */
	for (size_t q = 0; q < CAND_WORDS; q++)
		for (uint64_t w = cand[q]; w; w &= w - 1) {
			size_t j = 64 * q + (size_t)__builtin_ctzll(w);

			scan_bytes(&s, j, j + 1);
		}

	/* The 4-byte tail. */
	tail32 = load_le32(b + TAIL_OFFSET);
	cont |= tail32 == last32;
	last32 = tail32;
	scan_bytes(&s, TAIL_OFFSET, MONITOR_BLOCK_BYTES);

	m->last32 = last32;
	m->seeded = true;
	if (m->p.sample_bits == 8) {
		m->rct_last = b[MONITOR_BLOCK_BYTES - 1];
		m->rct_started = true;
	}

	ones = r.and_pop[1] + r.tail_ones[1];
	if (ones <= MONOBIT_LOW || ones >= MONOBIT_HIGH)
		failed |= MONITOR_FIPS_MONOBIT;
	runs_count(&r, n);
	if (m->p.fips_counting == MONITOR_FIPS_RNGTEST5)
		extra15 = rngtest5_runs(n, b[0] >> 7, m->fips_last_bit,
					b[MONITOR_BLOCK_BYTES - 1] & 1u,
					last_run_bucket(b + TAIL_OFFSET));
	m->fips_last_bit = b[MONITOR_BLOCK_BYTES - 1] & 1;
	failed |= poker_verdict(h, extra15);
	failed |= runs_verdict(n);
	if (cont)
		failed |= MONITOR_FIPS_CONTINUOUS;
	failed |= s.failed;

	explicit_bzero(h, sizeof(h)); /* a histogram of raw input */
	return failed;
}

void monitor_seed_continuous(struct monitor *m, const uint8_t word[4])
{
	m->last32 = load_le32(word);
	m->seeded = true;
}

/* ------------------------------------------------------------------------ */
/* SP 800-90B on binary samples: the RCT and the DRCT                       */
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
	struct bit_runs eq = { .run = m->rct_run, .bit = m->rct_last },
			alt = { .run = m->drct_run, .bit = m->drct_last };
	unsigned failed = 0;

	bit_runs_start(&eq, m->rct_started, b[0] >> 7);
	bit_runs_start(&alt, m->rct_started, (b[0] ^ 0x55u) >> 7);
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
	m->rct_run = eq.run;
	m->rct_last = (uint8_t)eq.bit;
	m->drct_run = alt.run;
	m->drct_last = (uint8_t)alt.bit;
	m->rct_started = true;
	return failed;
}

/* ------------------------------------------------------------------------ */
/* SP 800-90B: the APT                                                      */
/* ------------------------------------------------------------------------ */

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
HOT static unsigned apt_block(struct monitor *m, const uint8_t *b)
{
	const bool binary = m->p.sample_bits == 1;
	const uint32_t window = m->c.apt_window;
	const size_t n = binary ? BLOCK_BITS : MONITOR_BLOCK_BYTES;
	unsigned failed = 0;

	for (size_t o = 0; o < n;) {
		size_t seg = window - m->apt_pos;

		if (seg > n - o)
			seg = n - o;
		if (m->apt_pos == 0) {
			m->apt_first = binary ? b[o / 8] >> 7 : b[o];
			m->apt_count = 0;
		}
		m->apt_count += binary ? count_bits(b + o / 8, seg / 8, m->apt_first)
				       : count_bytes(b + o, seg, m->apt_first);
		if (m->apt_count >= m->c.apt)
			failed |= MONITOR_APT;
		if (m->apt_count >= m->c.apt_permanent)
			failed |= MONITOR_APT | MONITOR_APT_PERMANENT;
		m->apt_pos += (uint32_t)seg;
		if (m->apt_pos == window)
			m->apt_pos = 0;
		o += seg;
	}
	return failed;
}

/* ------------------------------------------------------------------------ */
/* One block                                                                */
/* ------------------------------------------------------------------------ */

int monitor_test_block(struct monitor *m, const uint8_t block[MONITOR_BLOCK_BYTES],
		       struct monitor_verdict *v)
{
	unsigned failed;

	if (!m || !block || !v)
		return -EINVAL;
	failed = fips_and_rct(m, block);
	if (m->p.sample_bits == 1)
		failed |= runs_binary(m, block);
	failed |= apt_block(m, block);

	*v = (struct monitor_verdict){ .failed = failed };
	/* A block holds more than the 1,024 start-up samples (asserted above),
	 * so the start-up test passes with the first block free of 90B failures. */
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
	return 0;
}
