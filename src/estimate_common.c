// SPDX-License-Identifier: GPL-2.0-or-later
/* Below every SP 800-90B §6.3 estimator file: work memory, packing bits,
 * checking arguments, the 99 % upper bound, the bisection every search
 * uses, the bound the four predictors share (§6.3.7-10 steps 4-6), mapping
 * samples to ranks and bits, and the estimators' names.  It needs none of
 * the estimator files (estimate_common.h). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"


/* Tables of 1 MiB and more get whole, aligned 2-MiB units (a huge page
 * must be aligned); smaller ones are plain calloc. */
#define EST_HUGE ((size_t)2 << 20)
#define EST_HUGE_MIN ((size_t)1 << 20)

static size_t huge_len(size_t bytes)
{
	return (bytes + EST_HUGE - 1) & ~(EST_HUGE - 1);
}

/* Huge pages for the whole 2-MiB units of a table; a last part of less
 * than half a unit gets 4-KiB pages: a huge page there would clear (and
 * on a virtual machine have the host back) up to a whole unit more than
 * is used.  The binary MultiMMC/LZ78Y table is 2 MiB and 2 KiB: its last
 * 2 KiB took a fresh 2-MiB page in every assessment, about 3 ms on a
 * virtual machine (see est_zreserve() in estimate_common.h). */
static void huge_advice(uint8_t *at, size_t bytes)
{
	const size_t whole = bytes & ~(EST_HUGE - 1), rest = bytes - whole;
	const int split = whole && rest && rest < EST_HUGE / 2;	/* the rest: 4 KiB */

#ifdef MADV_HUGEPAGE
	/* Advice only: without transparent huge pages it changes nothing. */
	(void)madvise(at, split ? whole : huge_len(bytes), MADV_HUGEPAGE);
#endif
#ifdef MADV_NOHUGEPAGE
	/* where transparent huge pages are always on */
	if (split)
		(void)madvise(at + whole, EST_HUGE, MADV_NOHUGEPAGE);
#endif
	(void)at;
	(void)split;
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
	huge_advice((void *)at, bytes);
	/* Only the unaligned ends before and after it were unmapped. */
	// cppcheck-suppress deallocret
	return (void *)at;
}

void est_pack_bits(const uint8_t *s, size_t n, uint64_t *w)
{
	size_t k = 0;

	for (; k < n / 64; k++)
		w[k] = est_pack64(s + 64 * k);
	if (n % 64) {
		uint64_t v = 0;

		for (size_t i = 64 * k; i < n; i++)
			v |= (uint64_t)(s[i] & 1) << (63 - (i & 63));
		w[k] = v;
	}
}

void *est_zreserve(size_t bytes)
{
	void *p;

	if (bytes < EST_HUGE_MIN)
		return calloc(1, bytes ? bytes : 1);
	// cppcheck-suppress invalidFunctionArg ; fd -1 is what MAP_ANONYMOUS takes
	p = mmap(NULL, huge_len(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_NOHUGEPAGE
	/* where transparent huge pages are always on */
	(void)madvise(p, huge_len(bytes), MADV_NOHUGEPAGE);
#endif
	return p;
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

/* min(1, p + Z sqrt(p (1 - p) / (n - 1))): the 99 % upper bound SP 800-90B
 * puts on every estimated proportion. */
double est_upper_bound(double p, double n)
{
	double u = p + EST_ZALPHA * sqrt(p * (1.0 - p) / (n - 1.0));

	return u > 1.0 ? 1.0 : u;
}

/* Eight samples a word (a byte at a time: 0.3 ms on 10^6 samples). */
unsigned est_or_samples(const uint8_t *s, size_t n)
{
	uint64_t acc = 0;
	unsigned wide = 0;
	size_t i = 0;

	for (; n - i >= 8; i += 8) {
		uint64_t x;

		memcpy(&x, s + i, sizeof(x));
		acc |= x;
	}
	for (; i < n; i++)
		wide |= s[i];
	for (unsigned b = 0; b < 8; b++)
		wide |= (unsigned)(acc >> (8 * b)) & 0xff;
	return wide;
}

/* The largest sample: 16 at a time where SSE2 has a byte maximum (a
 * compare and branch per sample was a tenth of binary MultiMCW's time,
 * 0.3 ms on 10^6 samples). */
static uint8_t max_sample(const uint8_t *s, size_t n)
{
	uint8_t mx = 0;
	size_t i = 0;

#ifdef __SSE2__
	if (n >= 16) {
		__m128i m = _mm_setzero_si128();
		uint8_t lanes[16];

		for (; n - i >= 16; i += 16)
			m = _mm_max_epu8(m, _mm_loadu_si128((const __m128i *)(const void *)(s + i)));
		_mm_storeu_si128((__m128i *)(void *)lanes, m);
		for (unsigned j = 0; j < 16; j++)
			mx = lanes[j] > mx ? lanes[j] : mx;
	}
#endif
	for (; i < n; i++)
		mx = s[i] > mx ? s[i] : mx;
	return mx;
}

int est_check_literal(const uint8_t *s, size_t n, unsigned k)
{
	if (!s || k < 2 || k > 256 || n >= UINT32_MAX)
		return -EINVAL;
	return max_sample(s, n) >= k ? -EINVAL : 0;
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

unsigned est_alphabet(const uint8_t *s, size_t n, unsigned bits)
{
	unsigned seen[256] = { 0 }, k = 0, mask = (1u << bits) - 1;

	if (bits == 1)
		seen_bits(s, n, seen);
	else
		for (size_t i = 0; i < n; i++)
			seen[s[i] & mask] = 1;
	for (unsigned v = 0; v <= mask; v++)
		k += seen[v];
	return k;
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
