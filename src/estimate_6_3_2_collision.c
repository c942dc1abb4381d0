// SPDX-License-Identifier: GPL-2.0-or-later
/* SP 800-90B §6.3.2 collision estimate (over the bitstring). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"

/* ================= §6.3.2 collision ================= */
/* What est_collision()'s walk does from the top of 12 bits: its steps,
 * the sum of their squares and where it stops (11 to 13 bits on), as
 * steps | sumsq << 4 | advance << 12.  Each step reads two bits, all
 * inside the 12. */
static void coll_table(uint16_t tab[4096])
{
	for (unsigned w = 0; w < 4096; w++) {
		unsigned pos = 0, steps = 0, sq = 0;

		while (pos <= 10) {
			const unsigned t = ((w >> (11 - pos)) & 1) == ((w >> (10 - pos)) & 1) ? 2 : 3;

			steps++;
			sq += t * t;
			pos += t;
		}
		tab[w] = (uint16_t)(steps | sq << 4 | pos << 12);
	}
}

/* Walks the bitstring in steps of 2 (the first two bits equal) or 3 (they
 * differ: with bits the third must repeat one of them).  SP 800-90B's step 7
 * equation for a binary alphabet reduces to the quadratic
 * X' = 2 + 2p - 2p^2 ... solved here for its root p >= 1/2. */
int est_collision(const uint8_t *s, size_t n, unsigned bits, struct est_result *r)
{
	uint64_t len = (uint64_t)n * bits, i = 0, v = 0, sumsq = 0;
	uint64_t acc = 0;	/* the bits from i on: the low nacc */
	unsigned nacc = 0;
	size_t next = 0;
	uint16_t tab[4096];
	double x, sd, xb;
	int rc = est_check_bits(s, n, bits);

	if (rc < 0)
		return rc;
	/* 11 to 13 bits a look-up while 13 are left (a last step of 3 needs
	 * the bit after the two it reads), then a step at a time. */
	coll_table(tab);
	for (;;) {
		uint16_t e;

		/* one bit per sample: eight at a time, one at a time only
		 * for the last seven (10^6 bits: 1.4 -> 0.4 ms) */
		while (bits == 1 && nacc <= 56 && n - next >= 8) {
			acc = acc << 8 | est_pack8(s + next);
			next += 8;
			nacc += 8;
		}
		while (nacc + bits <= 64 && next < n && (bits > 1 || n - next < 8)) {
			acc = acc << bits | (s[next++] & ((1u << bits) - 1));
			nacc += bits;
		}
		/* every bit left is in acc (nacc < 13 only then: said for
		 * the analyzer) */
		if (len - i < 13 || nacc < 13)
			break;
		e = tab[(acc >> (nacc - 12)) & 4095];
		v += e & 15;
		sumsq += (e >> 4) & 255;
		i += e >> 12;
		nacc -= e >> 12;
	}
	while (i + 1 < len && nacc >= 2) {	/* nacc = len - i here */
		unsigned t;

		if (((acc >> (nacc - 1)) & 1) == ((acc >> (nacc - 2)) & 1))
			t = 2;
		else if (i + 2 < len)
			t = 3;
		else
			break;
		v++;
		sumsq += t * t;
		i += t;
		nacc -= t;
	}
	if (v < 2)
		return -ENODATA;
	memset(r, 0, sizeof(*r));
	x = (double)i / (double)v;
	sd = sqrt(((double)sumsq - (double)i * x) / (double)(v - 1));
	r->x_bar = x;
	r->sigma = sd;
	xb = x - EST_ZALPHA * sd / sqrt((double)v);
	if (xb < 2.0)
		xb = 2.0;
	if (xb < 2.5) {
		r->p_u = 0.5 + sqrt(1.25 - 0.5 * xb);
		r->h = -log2(r->p_u);
	} else {
		r->p_u = 0.5;
		r->h = 1.0;
	}
	return 0;
}

