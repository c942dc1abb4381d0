// SPDX-License-Identifier: GPL-2.0-or-later
/* SP 800-90B §6.3.1 most common value estimate. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"

static int check_literal(const uint8_t *s, size_t n, unsigned k)
{
	if (!s || k < 2 || k > 256)
		return -EINVAL;
	if (n < 2)
		return -ENODATA;
	return 0;
}

/* ================= §6.3.1 most common value ================= */
static void mcv_finish(uint64_t mode, uint64_t n, struct est_result *r)
{
	memset(r, 0, sizeof(*r));
	r->count = mode;
	r->p_hat = (double)mode / (double)n;
	r->p_u = est_upper_bound(r->p_hat, (double)n);
	r->h = -log2(r->p_u);
}

/* The ones among binary samples, eight bytes a word: each byte adds 0 or 1
 * to its lane, so 255 words go into the lanes before they are folded, and
 * a byte above 1 is -EINVAL.  Byte order does not matter to a sum
 * (10^6 bits: 1.4 -> 0.1 ms against a count per sample). */
/* The sum of a word's eight byte lanes. */
static inline uint64_t lanes_sum(uint64_t lanes)
{
	const uint64_t lo = 0x00ff00ff00ff00ffull;

	/* 16-bit lanes of at most 510, their sum at most 2,040 */
	lanes = (lanes & lo) + ((lanes >> 8) & lo);
	return (lanes * 0x0001000100010001ull) >> 48;
}

static int mcv_ones(const uint8_t *s, size_t n, uint64_t *ones)
{
	uint64_t total = 0, bad = 0;
	size_t i = 0;

	while (n - i >= 8) {
		/* up to 255 words, then their lanes folded */
		const size_t end = i + 8 * ((n - i) / 8 > 255 ? 255 : (n - i) / 8);
		uint64_t lanes = 0;

		for (; i < end; i += 8) {
			uint64_t x;

			memcpy(&x, s + i, sizeof(x));
			bad |= x;
			lanes += x;
		}
		total += lanes_sum(lanes);
	}
	for (; i < n; i++) {
		bad |= s[i];
		total += s[i];
	}
	*ones = total;
	return (bad & 0xfefefefefefefefeull) ? -EINVAL : 0;
}

int est_mcv(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	uint64_t counts[256] = { 0 }, mode = 0;
	int rc = check_literal(s, n, k);

	if (rc < 0)
		return rc;
	if (k == 2) {
		uint64_t ones;

		rc = mcv_ones(s, n, &ones);
		if (rc < 0)
			return rc;
		mcv_finish(ones > n - ones ? ones : n - ones, n, r);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		counts[s[i]]++;
	for (unsigned v = 0; v < 256; v++) {
		if (v >= k && counts[v])
			return -EINVAL;
		if (counts[v] > mode)
			mode = counts[v];
	}
	mcv_finish(mode, n, r);
	return 0;
}

int est_mcv_bits(const uint8_t *s, size_t n, unsigned bits, struct est_result *r)
{
	uint64_t ones = 0, len = (uint64_t)n * bits;
	int rc = est_check_bits(s, n, bits);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n; i++)
		ones += (unsigned)__builtin_popcount(s[i] & ((1u << bits) - 1));
	mcv_finish(ones > len - ones ? ones : len - ones, len, r);
	return 0;
}

