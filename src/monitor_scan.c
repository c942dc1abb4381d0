/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fused fast scan: one pass over a block's words that takes what every
 * FIPS 140-2 test needs (the count of ones, the byte histogram for poker,
 * the run counts, the long run, the continuous test's words) and walks the
 * few bytes where the byte RCT and the difference RCT can advance.  The
 * tests themselves -- their cutoffs, verdicts and state -- are monitor.c's,
 * reached through monitor_internal.h; this file only decides the order in
 * which the words are read, so that the monitor is never the bottleneck,
 * and, for --check's rngtest-5 counting, files the runs its way.  Calls go
 * one way: monitor.c calls this file, never the reverse.
 */
#include <stddef.h>
#include <string.h>

#include "monitor_internal.h"

#ifdef HAVE_RUNS_AVX512
#include <immintrin.h>
#endif

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

bool monitor_cpu_has_avx512(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vpopcntdq");
}
#else
bool monitor_cpu_has_avx512(void)
{
	return false;
}
#endif

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
static unsigned fips_rngtest5_runs(fips_runs_t n, unsigned first,
				   unsigned prev_last, unsigned last,
				   unsigned last_bucket)
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

static void scan_bytes(struct scan *s, size_t from, size_t to)
{
	const uint8_t *b = s->b;
	struct monitor *m = s->m;
	const bool byte_rct = m->p.sample_bits == 8;

	/* Bytes skipped since the last walk; from >= 1 then, as byte 0 is
	 * always flagged unless the previous block's samples are known. */
	if (byte_rct && from != s->next)
		rct_drct_skipped(m, (uint8_t)(b[from - 1] -
					      (from >= 2 ? b[from - 2] : m->rct.last)));
	s->next = to;
	for (size_t j = from; j < to; j++) {
		bool equal;

		if (j == 0) {
			if (byte_rct) {
				s->failed |= rct_insert(m, m->rct.started && b[0] == m->rct.last);
				/* Blocks hold >= 2 samples: a started source has
				 * a previous difference. */
				if (m->rct.started)
					s->failed |= drct_insert(m, (uint8_t)(b[0] - m->rct.last), true);
			}
			continue;
		}
		equal = b[j] == b[j - 1];
		if (byte_rct) {
			s->failed |= rct_insert(m, equal);
			s->failed |= drct_insert(m, (uint8_t)(b[j] - b[j - 1]),
						  j >= 2 || m->rct.started);
		}
		if (equal && (b[j] == 0x00 || b[j] == 0xff) && j > s->run_end) {
			if (bit_run_through(b, j, &s->run_end) >= FIPS_LONGRUN_BITS)
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
			v16u8 a, p1, p2, f;
			uint64_t lo, hi;

			/* memcpy, not a helper returning a vector: where the
			 * ABI has no vector registers (i686) that is -Wpsabi. */
			memcpy(&a, x + k, sizeof(a));
			memcpy(&p1, x + k - 1, sizeof(p1));
			memcpy(&p2, x + k - 2, sizeof(p2));
			f = (v16u8)(a == p1) | (v16u8)((v16u8)(a - p1) == (v16u8)(p1 - p2));
			/* Byte 0 lowest (byte_mask8) on either byte order. */
			lo = load_le64((const uint8_t *)&f);
			hi = load_le64((const uint8_t *)&f + 8);
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

HOT unsigned monitor_scan_block(struct monitor *m, const uint8_t *b, struct fips_counts *fc)
{
	struct scan s = { .b = b, .m = m };
	struct runs_acc r;
	// cppcheck-suppress ctuuninitvar ; an address, not a read: zeroed below
	uint16_t (*h)[256] = fc->hist;
	uint32_t last32 = m->fips.last32, tail32, cont = 0;
	uint64_t cand[CAND_WORDS];
	uint8_t head[66];

#ifdef HAVE_RUNS_AVX512
	if (m->avx512)
		runs_pass_avx512(b, &r);
	else
#endif
		runs_pass(b, &r);
	memset(fc->hist, 0, sizeof(fc->hist));
	hist_pass(b, h);

	/* The two byte samples before the block, for the byte RCT and DRCT;
	 * without them (binary samples, or none yet) byte 0 is compared with
	 * itself, so that it is flagged and scan_bytes() decides. */
	if (m->p.sample_bits == 8 && m->rct.started) {
		head[1] = m->rct.last;
		head[0] = (uint8_t)(m->rct.last - m->drct.last);
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

	if (!m->fips.seeded) /* the block's first word only seeds the test */
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

	m->fips.last32 = last32;
	m->fips.seeded = true;
	if (m->p.sample_bits == 8) {
		m->rct.last = b[MONITOR_BLOCK_BYTES - 1];
		m->rct.started = true;
	}

	fc->ones = r.and_pop[1] + r.tail_ones[1];
	runs_count(&r, fc->runs);
	fc->extra15 = 0;
	if (m->p.fips_counting == MONITOR_FIPS_RNGTEST5)
		fc->extra15 = fips_rngtest5_runs(fc->runs, b[0] >> 7, m->fips.last_bit,
						 b[MONITOR_BLOCK_BYTES - 1] & 1u,
						 last_run_bucket(b + TAIL_OFFSET));
	m->fips.last_bit = b[MONITOR_BLOCK_BYTES - 1] & 1;
	fc->cont = cont != 0;
	return s.failed;
}
