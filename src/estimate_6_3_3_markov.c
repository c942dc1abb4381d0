// SPDX-License-Identifier: GPL-2.0-or-later
/* SP 800-90B §6.3.3 Markov estimate (over the bitstring). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"

/* ================= §6.3.3 Markov ================= */
/* Markov's counts over one bit per sample, 64 samples a word: within the
 * word, sample j's transition is bit 63 - j of x against the same bit of
 * x << 1 (63 of them, bit 0 is the next word's), and the one across words
 * from *prev (2: none yet).  Leaves the samples after the last whole 64 to
 * the caller (10^6 bits: 1.2 -> 0.1 ms against a table look-up each). */
static size_t markov_words(const uint8_t *s, size_t n, uint64_t c[3], unsigned *prev)
{
	const uint64_t inner = ~1ull;
	size_t i = 0;

	for (; n - i >= 64; i += 64) {
		const uint64_t x = est_pack64(s + i), y = x << 1;

		if (*prev == 0) {
			c[0]++;
			c[1] += !(x >> 63);
		} else if (*prev == 1) {
			c[2] += !(x >> 63);
		}
		c[0] += popcount64(~x & inner);
		c[1] += popcount64(~x & ~y & inner);
		c[2] += popcount64(x & ~y & inner);
		*prev = (unsigned)(x & 1);
	}
	return i;
}

int est_markov(const uint8_t *s, size_t n, unsigned bits, struct est_result *r)
{
	uint64_t len = (uint64_t)n * bits, c0 = 0, c00 = 0, c10 = 0, c1;
	unsigned prev = 2;
	size_t i0 = 0;
	double p0, p1, p00, p01, p10, p11, hmin = 128.0;
	uint32_t tab[3][256];	/* c0 | c00 << 8 | c10 << 16 */
	int rc = est_check_bits(s, n, bits);

	if (rc < 0)
		return rc;
	/* Transitions prev -> cur over the whole string; c0 counts zeros in
	 * all but the last bit.  What one sample adds depends on it and the
	 * bit before it (2: none), so that is a table: one look-up per
	 * sample instead of a few branches per bit. */
	for (unsigned pv = 0; pv < 3; pv++) {
		for (unsigned v = 0; v < (1u << bits); v++) {
			uint32_t a0 = 0, a00 = 0, a10 = 0;
			unsigned pb = pv;

			for (int j = (int)bits - 1; j >= 0; j--) {
				const unsigned cur = (v >> j) & 1u;

				a0 += pb == 0;
				a00 += pb == 0 && cur == 0;
				a10 += pb == 1 && cur == 0;
				pb = cur;
			}
			tab[pv][v] = a0 | a00 << 8 | a10 << 16;
		}
	}
	if (bits == 1) {
		uint64_t c[3] = { 0, 0, 0 };

		i0 = markov_words(s, n, c, &prev);
		c0 = c[0];
		c00 = c[1];
		c10 = c[2];
	}
	for (size_t i = i0; i < n; i++) {
		const uint32_t t = tab[prev][s[i] & ((1u << bits) - 1)];

		c0 += t & 0xff;
		c00 += (t >> 8) & 0xff;
		c10 += t >> 16;
		prev = s[i] & 1u;
	}
	c1 = len - 1 - c0;
	p00 = c0 ? (double)c00 / (double)c0 : 0.0;
	p01 = c0 ? 1.0 - p00 : 0.0;
	p10 = c1 ? (double)c10 / (double)c1 : 0.0;
	p11 = c1 ? 1.0 - p10 : 0.0;
	p0 = (double)(c0 + (prev == 0)) / (double)len;
	p1 = 1.0 - p0;

	/* The most likely 128-bit sequence is one of six shapes (90B §6.3.3
	 * step 3); a shape with a zero-probability transition is impossible. */
#define MK_TRY(cond, val) do { if (cond) { double t_ = (val); if (t_ < hmin) hmin = t_; } } while (0)
	MK_TRY(p00 > 0, -log2(p0) - 127.0 * log2(p00));			 /* 00..0 */
	MK_TRY(p01 > 0 && p10 > 0, -log2(p0) - 64.0 * log2(p01) - 63.0 * log2(p10)); /* 0101.. */
	MK_TRY(p01 > 0 && p11 > 0, -log2(p0) - log2(p01) - 126.0 * log2(p11));	 /* 011..1 */
	MK_TRY(p10 > 0 && p00 > 0, -log2(p1) - log2(p10) - 126.0 * log2(p00));	 /* 100..0 */
	MK_TRY(p10 > 0 && p01 > 0, -log2(p1) - 64.0 * log2(p10) - 63.0 * log2(p01)); /* 1010.. */
	MK_TRY(p11 > 0, -log2(p1) - 127.0 * log2(p11));			 /* 11..1 */
#undef MK_TRY
	memset(r, 0, sizeof(*r));
	r->p_mk[0] = p0;
	r->p_mk[1] = p1;
	r->p_mk[2] = p00;
	r->p_mk[3] = p01;
	r->p_mk[4] = p10;
	r->p_mk[5] = p11;
	r->p_hat = exp2(-hmin);
	r->p_u = r->p_hat;
	r->h = fmin(hmin / 128.0, 1.0);
	return 0;
}

