// SPDX-License-Identifier: GPL-2.0-or-later
/* SP 800-90B §6.3.4 compression estimate (over the bitstring). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"

/* ================= §6.3.4 compression ================= */
#define CMP_B 6		/* bits per block */
#define CMP_D 1000	/* dictionary blocks */

/* Sum with a running compensation (Kahan): the compression statistic adds
 * a million logarithms, and G adds terms of very different sizes. */
struct ksum { double s, c; };
static inline void ksum_add(struct ksum *k, double x)
{
	double y = x - k->c, t = k->s + y;

	k->c = (t - k->s) - y;
	k->s = t;
}

/* G(z) of §6.3.4 step 9 for L = nb blocks, d dictionary blocks:
 *   G(z) = 1/v sum_{t=d+1}^{L} sum_{u=1}^{t} log2(u) F(z, t, u),
 *   F = z^2 (1-z)^(u-1) for u < t, z (1-z)^(t-1) for u = t.
 * With a_u = log2(u) (1-z)^(u-1) and A(t) = sum_{u<t} a_u the double sum is
 *   z^2 [ (L-d) A(d+1) + sum_{u=d+1}^{L-1} (L-u) a_u ] + z [ A(L+1) - A(d+1) ],
 * one pass over u; the tail stops where a_u underflows (it only shrinks). */
/* log2(u) for u < len (at most CMP_LOGS), computed once per estimate:
 * the bisection below evaluates G some 120 times, each over tens of
 * thousands of terms, and the distances between blocks are mostly short.
 * Up to 2^20 what the table would hold, log2() in double (the terms vanish,
 * underflow, long before 2^20 blocks for any p the search visits; beyond,
 * log2l() serves). */
#define CMP_LOGS (1L << 16)
#define CMP_NEGLIGIBLE (1e-20 / 3.0)
/* The table is filled as far as it is read, doubling: filling all of it
 * took a tenth of the estimate on 10^6 bits (65,536 log2() calls), and
 * random bits read a few thousand.  An entry holds what log2() gives, so
 * where the table stops changes no result. */
struct cmp_logs {
	double *v;
	long filled, len;	/* v[1 .. filled - 1] hold log2(u); v has len */
};

/* log2(u), u >= filled: the table grown to hold it, where it can. */
static __attribute__((noinline)) double cmp_logs_grow(struct cmp_logs *l, long u)
{
	long to = l->filled * 2 > u + 1 ? l->filled * 2 : u + 1;

	if (u >= l->len)
		return log2((double)u);
	if (to > l->len)
		to = l->len;
	for (long i = l->filled; i < to; i++)
		l->v[i] = log2((double)i);
	l->filled = to;
	return l->v[u];
}

/* log2(u) in double, 1 <= u. */
static inline double cmp_lg(struct cmp_logs *l, long u)
{
	return u < l->filled ? l->v[u] : cmp_logs_grow(l, u);
}

struct cmp_arg {
	long nb;
	struct cmp_logs *lg;
};

static inline long double cmp_log2(const struct cmp_arg *a, long u)
{
	if (u < a->lg->len)
		return (long double)cmp_lg(a->lg, u);
	return u < (1L << 20) ? (long double)log2((double)u) : log2l((long double)u);
}

/* One G(z) under way; cmp_g2() runs two side by side. */
struct cmp_g_run {
	struct ksum a, tail;
	long double b, bu;	/* 1 - z, (1 - z)^(u - 1) */
	double z, ad1, big, stop;
	int done;
};

#define CMP_INLINE static inline __attribute__((always_inline))

CMP_INLINE struct cmp_g_run cmp_g_start(double z)
{
	struct cmp_g_run g = { { 0, 0 }, { 0, 0 }, 1.0L - (long double)z, 1.0L - (long double)z,
			       z, 0, 0, 0, 0 };

	return g;	/* bu: u = 2 */
}

/* Term u <= d, log2(u) being lg. */
CMP_INLINE void cmp_g_head(struct cmp_g_run *g, long double lg)
{
	ksum_add(&g->a, (double)(lg * g->bu));
	g->bu *= g->b;
}

CMP_INLINE void cmp_g_mid(struct cmp_g_run *g, long nb, long d)
{
	g->ad1 = g->a.s;
	g->big = (double)(nb - d) * g->ad1;
	g->stop = CMP_NEGLIGIBLE * g->z;
}

/* Term u > d; sets done where the sums stop changing. */
CMP_INLINE void cmp_g_tail(struct cmp_g_run *g, long nb, long u, long double lg)
{
	long double au = lg * g->bu;
	double scaled = (double)((long double)(nb - u) * au);

	ksum_add(&g->a, (double)au);
	if (u < nb) {
		if (scaled <= 0.0) {
			g->done = 1;
			return;
		}
		ksum_add(&g->tail, scaled);
	}
	/* The terms shrink by 1 - z a step (their log2(u) factor barely
	 * grows), so those left sum to under 3 / z times this one: once
	 * that is below 1e-20 of both sums, below what a double resolves,
	 * the rest changes neither.  (Low-entropy input: the search visits
	 * z = 1/64 and less, where the terms underflow only after 50,000 of
	 * them and more.) */
	if ((double)au < g->stop * g->a.s && scaled < g->stop * (g->tail.s + g->big)) {
		g->done = 1;
		return;
	}
	g->bu *= g->b;
}

CMP_INLINE double cmp_g_end(struct cmp_g_run *g, long nb, long d)
{
	ksum_add(&g->tail, g->big);
	return g->z * (g->z * g->tail.s + (g->a.s - g->ad1)) / (double)(nb - d);
}

/* G(z1) and G(z2), each summed in the same order as alone, side by side:
 * each sum is a chain of dependent additions (Kahan's), and two chains
 * keep the FPU busy where one waited on itself (10^6 bits: compression
 * 2.05 -> 1.9 ms biased, 1.96 -> 1.63 ms uniform; 8-bit: 6.3 -> 6.0 ms). */
static void cmp_g2(double z1, double z2, long d, const struct cmp_arg *arg, double *g1, double *g2)
{
	struct cmp_g_run r1 = cmp_g_start(z1), r2 = cmp_g_start(z2);
	const long nb = arg->nb;
	long u;

	for (u = 2; u <= d; u++) {
		const long double lg = cmp_log2(arg, u);

		cmp_g_head(&r1, lg);
		cmp_g_head(&r2, lg);
	}
	cmp_g_mid(&r1, nb, d);
	cmp_g_mid(&r2, nb, d);
	for (u = d + 1; u <= nb && !(r1.done && r2.done); u++) {
		const long double lg = cmp_log2(arg, u);

		if (!r1.done)
			cmp_g_tail(&r1, nb, u, lg);
		if (!r2.done)
			cmp_g_tail(&r2, nb, u, lg);
	}
	*g1 = cmp_g_end(&r1, nb, d);
	*g2 = cmp_g_end(&r2, nb, d);
}

/* Expected statistic when one 6-bit block has probability p and the other
 * 63 share the rest (§6.3.4 step 9). */
static double cmp_expect(double p, const struct cmp_arg *arg)
{
	double q = (1.0 - p) / 63.0, gp, gq;

	cmp_g2(p, q, CMP_D, arg, &gp, &gq);
	return gp + 63.0 * gq;
}

static double cmp_f(double p, const void *arg)
{
	return cmp_expect(p, arg);
}

int est_compression(const uint8_t *s, size_t n, unsigned bits, struct est_result *r)
{
	uint64_t len = (uint64_t)n * bits;
	long nb = (long)(len / CMP_B), v, i;
	uint32_t dict[1 << CMP_B] = { 0 };
	struct ksum x = { 0, 0 }, x2 = { 0, 0 };
	struct cmp_arg ca;
	struct cmp_logs logs;
	double xb, sd, xp, p;
	uint64_t acc = 0;	/* the bitstring's next bits, the last nacc */
	unsigned nacc = 0;
	size_t next = 0;
	int rc = est_check_bits(s, n, bits);

	if (rc < 0)
		return rc;
	if (nb <= CMP_D)
		return -ENODATA;
	ca.nb = nb;
	logs.len = nb + 1 < CMP_LOGS ? nb + 1 : CMP_LOGS;
	logs.v = est_zalloc((size_t)logs.len * sizeof(*logs.v));
	if (!logs.v)
		return -ENOMEM;
	logs.filled = 1;
	(void)cmp_logs_grow(&logs, 1024);
	ca.lg = &logs;
	for (i = 0; i < nb; i++) {
		unsigned blk;

		/* whole samples in, a block out (6 bits, most significant
		 * first); one bit per sample: eight at a time, as in
		 * est_collision() */
		if (bits == 1 && nacc < CMP_B && n - next >= 8) {
			acc = acc << 8 | est_pack8(s + next);
			next += 8;
			nacc += 8;
		}
		while (nacc < CMP_B) {
			acc = acc << bits | (s[next++] & ((1u << bits) - 1));
			nacc += bits;
		}
		nacc -= CMP_B;
		blk = (unsigned)(acc >> nacc) & ((1u << CMP_B) - 1);
		if (i >= CMP_D) {
			/* Distance back to the block's last occurrence (i + 1
			 * when it never occurred), in 1-based block numbers. */
			const long dist = i + 1 - (long)dict[blk];
			double lg = cmp_lg(&logs, dist);

			ksum_add(&x, lg);
			ksum_add(&x2, lg * lg);
		}
		dict[blk] = (uint32_t)(i + 1);
	}
	v = nb - CMP_D;
	memset(r, 0, sizeof(*r));
	xb = x.s / (double)v;
	sd = 0.5907 * sqrt(x2.s / ((double)v - 1.0) - xb * xb);
	r->x_bar = xb;
	r->sigma = sd;
	xp = xb - EST_ZALPHA * sd / sqrt((double)v);
	p = -1.0;
	if (cmp_expect(1.0 / 64.0, &ca) > xp)
		p = est_bisect(cmp_f, &ca, 1.0 / 64.0, 1.0, xp);
	est_zfree(logs.v, (size_t)logs.len * sizeof(*logs.v));
	if (p > 1.0 / 64.0) {
		r->p_u = p;
		r->h = -log2(p) / CMP_B;
	} else {
		r->p_u = 1.0 / 64.0;
		r->h = 1.0;
	}
	return 0;
}
