/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the integrity monitor: the state of each test, the word helpers,
 * and the per-sample steps of the tests that the fused scan
 * (monitor_scan.c) runs inside its one pass over a block.  monitor.c owns
 * the tests (their cutoffs, reset and verdicts); monitor_scan.c owns only
 * the order in which a block's words are looked at.  Not a public header.
 */
#ifndef RNGFEED_MONITOR_INTERNAL_H
#define RNGFEED_MONITOR_INTERNAL_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rngfeed/monitor.h"

#define BLOCK_WORDS (MONITOR_BLOCK_BYTES / 8) /* 312 full 64-bit words ... */
#define TAIL_OFFSET (BLOCK_WORDS * 8)         /* ... and a 4-byte tail */
#define BLOCK_BITS (MONITOR_BLOCK_BYTES * 8)

/* Hot loops need the popcnt instruction; the default -O2 build targets plain
 * x86-64, so pick a popcnt clone at load time where the CPU has one. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define HOT __attribute__((target_clones("popcnt", "default")))
#else
#define HOT
#endif

/* Where the CPU may count bits in 512-bit vectors, checked at run time. */
#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_RUNS_AVX512 1
#endif

/* ---- the state of each test ------------------------------------------------ */

/* FIPS 140-2 continuous test, and rngtest-5's carried bit. */
struct fips_state {
	uint32_t last32;     /* the previous 32-bit word */
	bool seeded;         /* last32 holds a word of this source */
	uint8_t last_bit;    /* MONITOR_FIPS_RNGTEST5 only: previous block's last bit */
};

/* SP 800-90B §4.4.1 repetition count test: the current run. */
struct rct_state {
	uint32_t run;
	uint8_t last;        /* last sample: a byte, or a bit in binary mode */
	bool started;        /* a sample of this source has been seen */
};

/* Difference RCT (§4.5, developer-defined): the current run of equal
 * differences, and the last difference (byte samples) or the last bit of
 * the alternation stream (binary). */
struct drct_state {
	uint32_t run;
	uint8_t last;
};

/* SP 800-90B §4.4.2 adaptive proportion test: position in the window, its
 * first sample and how often that sample has occurred so far. */
struct apt_state {
	uint32_t pos, count;
	uint8_t first;
};

struct monitor {
	struct monitor_params p;
	struct monitor_cutoffs c;

	struct fips_state fips;
	struct rct_state rct;
	struct drct_state drct;
	struct apt_state apt;

	/* Start-up (§4.3) and the failure policy. */
	bool startup_passed;
	bool permanent;
	unsigned consecutive;

	bool avx512; /* the CPU counts bits in 512-bit vectors */
};

/* ---- word helpers ------------------------------------------------------------ */

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

/* ---- per-sample steps the fused scan calls (monitor.c explains each) ------ */

/* RCT, one byte sample: equal to the previous one or not.  Every sample at
 * or past the cutoff fails its block, so that the tail of a failing run is
 * never used. */
static inline unsigned rct_insert(struct monitor *m, bool equal)
{
	if (!equal) {
		m->rct.run = 1;
		return 0;
	}
	m->rct.run++;
	if (m->rct.run >= m->c.rct_permanent)
		return MONITOR_RCT | MONITOR_RCT_PERMANENT;
	return m->rct.run >= m->c.rct ? MONITOR_RCT : 0;
}

/* Difference RCT, the next difference d; prev: a previous difference exists.
 * A run of d = 0 is the RCT's to report; otherwise as rct_insert(). */
static inline unsigned drct_insert(struct monitor *m, uint8_t d, bool prev)
{
	if (prev && d == m->drct.last) {
		m->drct.run++;
	} else {
		m->drct.run = 1;
		m->drct.last = d;
	}
	if (d == 0)
		return 0;
	if (m->drct.run >= m->c.drct_permanent)
		return MONITOR_DRCT | MONITOR_DRCT_PERMANENT;
	return m->drct.run >= m->c.drct ? MONITOR_DRCT : 0;
}

/* Bytes the fused scan skipped: each differs from its predecessor, and so
 * does its difference, so both runs are 1; @d is the last difference. */
static inline void rct_drct_skipped(struct monitor *m, uint8_t d)
{
	m->rct.run = 1;
	m->drct.run = 1;
	m->drct.last = d;
}

/* ---- what the scan counts for the FIPS 140-2 verdicts (monitor.c) -------- */

#define FIPS_LONGRUN_BITS 26u

/* Run counts per polarity (0: zeros, 1: ones) and bucket 1..5, 6 (6+). */
typedef uint32_t fips_runs_t[2][7];

struct fips_counts {
	uint16_t hist[2][256]; /* byte histogram, in two halves, for poker */
	fips_runs_t runs;
	uint32_t ones;
	unsigned extra15;      /* rngtest-5's extra poker count for nibble 15 */
	bool cont;             /* a 32-bit word equal to the one before */
};

/*
 * The fused scan of one block (monitor_scan.c): fills @fc with what the
 * FIPS 140-2 verdicts need, and returns the failure bits it finds sample
 * by sample: the long run and, for byte samples, the RCT and the
 * difference RCT.  Updates the continuous test's and the byte RCT/DRCT's
 * state.  The verdicts stay in monitor.c, in the dispatcher's file, so
 * that they inline there (as calls from the scan's file they cost the
 * portable path ~3 %).
 */
unsigned monitor_scan_block(struct monitor *m, const uint8_t *b, struct fips_counts *fc);
/* The CPU counts bits in 512-bit vectors (monitor_scan.c). */
bool monitor_cpu_has_avx512(void);

#endif
