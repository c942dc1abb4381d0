/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Below every SP 800-90B §6.3 estimator file (estimate_6_3_*.c): what
 * estimate_common.c provides them and the small inline pieces several use.
 * It needs none of them.  Not part of the API. */
#ifndef RNGFEED_ESTIMATE_COMMON_H
#define RNGFEED_ESTIMATE_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* 0, -EINVAL (bad pointer or bits), -ENODATA (fewer than 2 bits). */
int est_check_bits(const uint8_t *s, size_t n, unsigned bits);
/* 0 or -EINVAL: s set, 2 <= k <= 256, n < 2^32, every sample below k. */
int est_check_literal(const uint8_t *s, size_t n, unsigned k);
/* min(1, p + Z sqrt(p (1 - p) / (n - 1))). */
double est_upper_bound(double p, double n);
/* Bisection for f(p) = target on [lo, hi], f decreasing. */
double est_bisect(double (*f)(double, const void *), const void *arg,
		  double lo, double hi, double target);

/* Zeroed work memory for the big tables (megabytes, looked up at random):
 * an anonymous mapping the kernel may back with 2-MiB pages (madvise), so
 * the tables cost a few page faults and TLB entries instead of one per
 * 4 KiB (a last part of less than 1 MiB past the whole 2-MiB units: 4-KiB
 * pages).  NULL when out of memory; est_zfree(NULL, ...) does nothing. */
void *est_zalloc(size_t bytes);
/* Zeroed memory reserved as long as it might need to be, of which little
 * is used (tallies as deep as the longest repeat): 4-KiB pages, each paid
 * for where it is first touched (a fresh 2-MiB page costs about 3 ms on a
 * virtual machine).  Freed by est_zfree() too. */
void *est_zreserve(size_t bytes);
void est_zfree(void *p, size_t bytes);

/* The low bit of each of the n samples, packed most significant first:
 * w[k] holds samples 64k..64k+63; the bits after the last are 0 (w holds
 * at least (n + 63) / 64 words). */
void est_pack_bits(const uint8_t *s, size_t n, uint64_t *w);


/* Eight samples' low bits, the first as the most significant: with each
 * sample's bit at the bottom of its byte, one multiplication moves bit k of
 * byte k to bit 63 - k of the product (the shifted copies neither overlap
 * nor carry into the top byte). */
static inline uint64_t est_pack8(const uint8_t *p)
{
	const uint64_t x = ((uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
			    (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
			    (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56) & 0x0101010101010101ull;

	return (x * 0x8040201008040201ull) >> 56;
}

/* 64 samples' low bits, the first in bit 63. */
static inline uint64_t est_pack64(const uint8_t *p)
{
	uint64_t v = 0;

	for (unsigned b = 0; b < 8; b++)
		v = v << 8 | est_pack8(p + 8 * b);
	return v;
}

/* The 64 bits from bit i on of the bits packed in w most significant first
 * (as est_pack_bits() packs them); w holds a word past the one of bit i. */
static inline uint64_t est_window(const uint64_t *w, size_t i)
{
	unsigned sh = i & 63;
	uint64_t x = w[i >> 6] << sh;

	return sh ? x | (w[(i >> 6) + 1] >> (64 - sh)) : x;
}

/* The same from bit sh (0..63) of the packed word a on: half is the
 * word after a shifted right by one, so that sh = 0 needs no shift by 64
 * (callers keep it for every sh of a word). */
static inline uint64_t est_window_at(uint64_t a, uint64_t half, unsigned sh)
{
	return a << sh | half >> (63 - sh);
}

/* Fibonacci hashing: key times 2^64 over the golden ratio, whose top
 * bits (or any run of its upper half) spread keys that differ only in
 * their low bits. */
static inline uint64_t est_hash64(uint64_t key)
{
	return key * 0x9e3779b97f4a7c15ull;
}

/* Set bits of x.  Without the POPCNT instruction (x86-64's baseline lacks
 * it) __builtin_popcountll is a call into libgcc; this is a few
 * instructions inline. */
static inline uint32_t popcount64(uint64_t x)
{
#if defined(__POPCNT__) || !(defined(__x86_64__) || defined(__i386__))
	return (uint32_t)__builtin_popcountll(x);
#else
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (uint32_t)((x * 0x0101010101010101ull) >> 56);
#endif
}

#endif
