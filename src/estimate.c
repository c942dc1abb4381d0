/* SP 800-90B §6.3 estimators that count (most common value, collision,
 * Markov, compression), the prediction bound the four predictors share, and
 * the helpers.  See estimate.h for the contract; the predictors are in
 * estimate_predict.c, t-tuple and LRS in estimate_tuple.c, the whole
 * assessment in estimate_assess.c. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_internal.h"
#include "rngfeed/estimate_predict.h"

/* Tables of 1 MiB and more get whole, aligned 2-MiB units (a huge page
 * must be aligned); smaller ones are plain calloc. */
#define EST_HUGE ((size_t)2 << 20)
#define EST_HUGE_MIN ((size_t)1 << 20)

static size_t huge_len(size_t bytes)
{
	return (bytes + EST_HUGE - 1) & ~(EST_HUGE - 1);
}

void *est_zalloc(size_t bytes)
{
	size_t len = huge_len(bytes);
	uintptr_t at, start;
	uint8_t *p;

	if (bytes < EST_HUGE_MIN)
		return calloc(1, bytes ? bytes : 1);
	/* One unit more than needed, then the unaligned ends unmapped. */
	// cppcheck-suppress invalidFunctionArg ; fd -1 is what MAP_ANONYMOUS takes
	p = mmap(NULL, len + EST_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	start = (uintptr_t)p;
	at = (start + EST_HUGE - 1) & ~(uintptr_t)(EST_HUGE - 1);
	if (at > start)
		(void)munmap(p, at - start);
	if (at + len < start + len + EST_HUGE)
		(void)munmap((void *)(at + len), start + EST_HUGE - at);
#ifdef MADV_HUGEPAGE
	/* Advice only: without transparent huge pages it changes nothing. */
	(void)madvise((void *)at, len, MADV_HUGEPAGE);
#endif
	/* Only the unaligned ends before and after it were unmapped. */
	// cppcheck-suppress deallocret
	return (void *)at;
}

/* Eight samples' low bits, the first as the most significant: with each
 * sample's bit at the bottom of its byte, one multiplication moves bit k of
 * byte k to bit 63 - k of the product (the shifted copies neither overlap
 * nor carry into the top byte). */
static inline uint64_t pack8(const uint8_t *p)
{
	const uint64_t x = ((uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
			    (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
			    (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56) & 0x0101010101010101ull;

	return (x * 0x8040201008040201ull) >> 56;
}

/* 64 samples' low bits, the first in bit 63. */
static inline uint64_t pack64(const uint8_t *p)
{
	uint64_t v = 0;

	for (unsigned b = 0; b < 8; b++)
		v = v << 8 | pack8(p + 8 * b);
	return v;
}

void est_pack_bits(const uint8_t *s, size_t n, uint64_t *w)
{
	size_t k = 0;

	for (; k < n / 64; k++)
		w[k] = pack64(s + 64 * k);
	if (n % 64) {
		uint64_t v = 0;

		for (size_t i = 64 * k; i < n; i++)
			v |= (uint64_t)(s[i] & 1) << (63 - (i & 63));
		w[k] = v;
	}
}

void est_zfree(void *p, size_t bytes)
{
	if (!p)
		return;
	if (bytes < EST_HUGE_MIN)
		free(p);
	else
		(void)munmap(p, huge_len(bytes));
}

int est_check_bits(const uint8_t *s, size_t n, unsigned bits)
{
	if (!s || bits < 1 || bits > 8)
		return -EINVAL;
	if ((uint64_t)n * bits < 2)
		return -ENODATA;
	return 0;
}

static int check_literal(const uint8_t *s, size_t n, unsigned k)
{
	if (!s || k < 2 || k > 256)
		return -EINVAL;
	if (n < 2)
		return -ENODATA;
	return 0;
}

/* min(1, p + Z sqrt(p (1 - p) / (n - 1))): the 99 % upper bound SP 800-90B
 * puts on every estimated proportion. */
double est_upper_bound(double p, double n)
{
	double u = p + EST_ZALPHA * sqrt(p * (1.0 - p) / (n - 1.0));

	return u > 1.0 ? 1.0 : u;
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
			acc = acc << 8 | pack8(s + next);
			next += 8;
			nacc += 8;
		}
		while (nacc + bits <= 64 && next < n && (bits > 1 || n - next < 8)) {
			acc = acc << bits | (s[next++] & ((1u << bits) - 1));
			nacc += bits;
		}
		if (len - i < 13)
			break;	/* every bit left is in acc */
		e = tab[(acc >> (nacc - 12)) & 4095];
		v += e & 15;
		sumsq += (e >> 4) & 255;
		i += e >> 12;
		nacc -= e >> 12;
	}
	while (i + 1 < len) {
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
		const uint64_t x = pack64(s + i), y = x << 1;

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

/* Bisection for p in [lo, hi] with f(p) = target, f decreasing in p (all of
 * §6.3's searches are of this kind); stops when the interval cannot shrink
 * or f hits the target to a few ulps.  Returns -1 if f(lo) <= target is
 * violated on the way (no root inside). */
double est_bisect(double (*f)(double, const void *), const void *arg,
		  double lo, double hi, double target)
{
	double p = (lo + hi) / 2.0;

	for (int it = 0; it < 1100; it++) {
		double v = f(p, arg), mid;

		if (fabs(v - target) <= 4 * DBL_EPSILON * fmax(fabs(v), fabs(target)))
			break;
		if (v > target)
			lo = p;
		else
			hi = p;
		mid = (lo + hi) / 2.0;
		if (!(mid > lo && mid < hi)) {
			p = hi;
			break;
		}
		p = mid;
	}
	return p;
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
			acc = acc << 8 | pack8(s + next);
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

/* ================= the predictors' bound (§6.3.7-10 steps 4-6) ================= */
/* log of the probability that N trials with success probability p have no
 * run of r successes (90B's P_local equation, x from its fixed point). */
static double run_log_prob(double pd, uint64_t r, uint64_t n)
{
	long double p = pd, q = 1.0L - p, x = 1.0L, last = 0.0L;
	long double rr = (long double)r;

	for (int i = 0; i <= 65 && x - last > LDBL_EPSILON * x; i++) {
		last = x;
		x = 1.0L + q * powl(p, rr) * powl(x, rr + 1.0L);
	}
	return (double)(logl(1.0L - p * x) - logl((rr + 1.0L - rr * x) * q) -
			((long double)n + 1.0L) * logl(x));
}

struct runarg { uint64_t r, n; };
static double run_f(double p, const void *arg)
{
	const struct runarg *a = arg;

	return run_log_prob(p, a->r, a->n);
}

void est_prediction_bound(uint64_t correct, uint64_t n, uint64_t longest,
			  unsigned k, struct est_result *r)
{
	double pg = (double)correct / (double)n, pgp, cur = 1.0 / k;
	struct runarg ra = { .r = longest + 1, .n = n };

	memset(r, 0, sizeof(*r));
	if (correct > 0)
		pgp = est_upper_bound(pg, (double)n);
	else
		pgp = 1.0 - pow(0.01, 1.0 / (double)n);
	r->p_local = -1.0;
	cur = fmax(cur, pgp);
	/* P_local only matters when a run that long is unlikely at cur. */
	if (cur < 1.0 && run_log_prob(cur, ra.r, ra.n) > log(0.99)) {
		r->p_local = est_bisect(run_f, &ra, cur, 1.0, log(0.99));
		cur = fmax(cur, r->p_local);
	}
	r->count = correct;
	r->n = n;
	r->run = longest + 1;
	r->p_hat = pg;
	r->p_global_prime = pgp;
	r->p_u = cur;
	r->h = -log2(cur);
}

/* ================= helpers ================= */
/* Which of 0 and 1 the low bits of the samples hold, eight samples a
 * word (a store per sample into seen[] took 0.3 ms on 10^6 bits). */
static void seen_bits(const uint8_t *s, size_t n, unsigned seen[2])
{
	const uint64_t low = 0x0101010101010101ull;
	uint64_t ones = 0, zeros = 0;
	size_t i = 0;

	for (; n - i >= 8; i += 8) {
		uint64_t x;

		memcpy(&x, s + i, sizeof(x));
		ones |= x;
		zeros |= ~x;
	}
	for (; i < n; i++) {
		ones |= s[i];
		zeros |= (uint8_t)~s[i];
	}
	seen[0] = (zeros & low) != 0;
	seen[1] = (ones & low) != 0;
}

/* out = s & mask, eight samples a word: the ranks when every value of
 * the mask occurs (a look-up per sample: 0.6 ms on 10^6 samples). */
static void mask_samples(const uint8_t *s, size_t n, unsigned mask, uint8_t *out)
{
	const uint64_t m = mask * 0x0101010101010101ull;
	size_t i = 0;

	for (; n - i >= 8; i += 8) {
		uint64_t x;

		memcpy(&x, s + i, sizeof(x));
		x &= m;
		memcpy(out + i, &x, sizeof(x));
	}
	for (; i < n; i++)
		out[i] = s[i] & mask;
}

unsigned est_translate(const uint8_t *s, size_t n, unsigned bits, uint8_t *out)
{
	uint8_t rank[256];
	unsigned seen[256] = { 0 }, k = 0, mask = (1u << bits) - 1;

	if (bits == 1)
		seen_bits(s, n, seen);
	else
		for (size_t i = 0; i < n; i++)
			seen[s[i] & mask] = 1;
	for (unsigned v = 0; v < 256; v++)
		rank[v] = seen[v] ? (uint8_t)k++ : 0;
	if (k == mask + 1) {
		mask_samples(s, n, mask, out);
		return k;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = rank[s[i] & mask];
	return k ? k : 1;
}

void est_bitstring(const uint8_t *s, size_t n, unsigned bits, uint8_t *out)
{
	for (size_t i = 0; i < n; i++)
		for (unsigned j = 0; j < bits; j++)
			*out++ = (s[i] >> (bits - 1 - j)) & 1u;
}

static const char *const est_names[EST_COUNT] = {
	[EST_MCV] = "Most Common Value",
	[EST_COLLISION] = "Collision",
	[EST_MARKOV] = "Markov",
	[EST_COMPRESSION] = "Compression",
	[EST_TTUPLE] = "T-Tuple",
	[EST_LRS] = "LRS",
	[EST_MULTI_MCW] = "Multi Most Common in Window (MultiMCW) Prediction",
	[EST_LAG] = "Lag Prediction",
	[EST_MULTI_MMC] = "Multi Markov Model with Counting (MultiMMC) Prediction",
	[EST_LZ78Y] = "LZ78Y Prediction",
};

const char *est_name(enum est_id id)
{
	return (unsigned)id < EST_COUNT ? est_names[id] : "?";
}
