/* SP 800-90B §6.3.7-6.3.10: the four predictors (MultiMCW, lag, MultiMMC,
 * LZ78Y).  Each walks the samples once, predicting each from those before
 * it, counts the correct predictions C of N and the longest run of correct
 * ones, and hands them to est_prediction_bound().  Tie rules are 90B's and
 * those of NIST's reference tool, so that the counts agree exactly:
 *   - a sub-predictor's score that reaches the winner's (>=) takes over;
 *   - MCW: most common in the window, ties to the most recent symbol;
 *   - MMC/LZ78Y: most frequent follower, ties to the larger symbol. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_internal.h"

static int check_literal(const uint8_t *s, size_t n, unsigned k)
{
	if (!s || k < 2 || k > 256 || n >= UINT32_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (s[i] >= k)
			return -EINVAL;
	return 0;
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

/* Counts of correct predictions and their longest run. */
struct tally { uint64_t c, run, longest; };
/* Without branches: on random bits a prediction is right one time in two,
 * and a mispredicted branch per bit cost more than the predictor's own
 * work in the binary predictors. */
static inline void tally(struct tally *t, int ok)
{
	const uint64_t keep = -(uint64_t)(ok != 0);	/* all ones if right */

	t->c += keep & 1;
	t->run = (t->run + 1) & keep;
	t->longest = t->run > t->longest ? t->run : t->longest;
}

/* ================= §6.3.7 MultiMCW ================= */
#define MCW_N 4
static const uint32_t mcw_w[MCW_N] = { 63, 255, 1023, 4095 };

/* Binary samples: every window is odd, so its most common value is the one
 * with more than half of it (no ties to break), a running count of ones.
 * 64 steps at a time: first each window's right predictions in the block
 * (a bit per step), then the scoreboard as in lag_binary(), stepping only
 * the windows that can reach the top score within the block. */
static void mcw_binary(const uint8_t *s, size_t n, struct est_result *r)
{
	uint32_t ones[MCW_N] = { 0 }, score[MCW_N] = { 0 }, high = 0;	/* high: score[winner] */
	struct tally t = { 0, 0, 0 };
	unsigned winner = 0;

	for (unsigned j = 0; j < MCW_N; j++)
		for (uint32_t i = 0; i < mcw_w[j]; i++)
			ones[j] += s[i];
	for (size_t i0 = mcw_w[0]; i0 < n; i0 += 64) {
		const unsigned len = n - i0 < 64 ? (unsigned)(n - i0) : 64;
		uint64_t okw[MCW_N];	/* bit st: window j right at step st */
		unsigned cand[MCW_N] = { 0 }, nc = 0;

		for (unsigned j = 0; j < MCW_N; j++) {
			const uint32_t w = mcw_w[j];
			/* no prediction before the window is full */
			const unsigned st0 = i0 >= w ? 0 : (w - i0 < len ? (unsigned)(w - i0) : len);
			uint32_t o = ones[j];
			uint64_t m = 0;

			for (unsigned st = st0; st < len; st++) {
				const size_t i = i0 + st;

				m |= (uint64_t)((2 * o > w) == s[i]) << st;
				o += (uint32_t)s[i] - s[i - w];
			}
			ones[j] = o;
			okw[j] = m;
		}
		for (unsigned j = 0; j < MCW_N; j++) {
			const uint32_t up = popcount64(okw[j]);

			if (score[j] + up >= high)
				cand[nc++] = j;
			else
				score[j] += up;
		}
		for (unsigned st = 0; st < len; st++) {
			tally(&t, (int)((okw[winner] >> st) & 1));
			for (unsigned c = 0; c < nc; c++) {
				const unsigned j = cand[c];
				const uint32_t inc = (uint32_t)(okw[j] >> st) & 1, v = score[j] + inc;
				const int take = inc && v >= high;

				score[j] = v;
				winner = take ? j : winner;
				high = take ? v : high;
			}
		}
	}
	est_prediction_bound(t.c, n - mcw_w[0], t.longest, 2, r);
}

int est_multi_mcw(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	uint32_t cnt[MCW_N][256], last[MCW_N][256], best[MCW_N];
	uint8_t freq[MCW_N] = { 0 };
	uint64_t score[MCW_N] = { 0 };
	struct tally t = { 0, 0, 0 };
	unsigned winner = 0;
	int rc = check_literal(s, n, k);

	if (rc < 0)
		return rc;
	if (n <= mcw_w[MCW_N - 1])
		return -ENODATA;
	if (k == 2) {
		mcw_binary(s, n, r);
		return 0;
	}
	memset(cnt, 0, sizeof(cnt));
	memset(last, 0, sizeof(last));
	memset(best, 0, sizeof(best));
	/* Window j holds s[i - w_j .. i - 1]; fill each with its first w_j. */
	for (unsigned j = 0; j < MCW_N; j++) {
		for (uint32_t i = 0; i < mcw_w[j]; i++) {
			uint8_t v = s[i];

			last[j][v] = i;
			if (++cnt[j][v] >= best[j]) {
				best[j] = cnt[j][v];
				freq[j] = v;
			}
		}
	}
	for (size_t i = mcw_w[0]; i < n; i++) {
		uint8_t v = s[i];

		tally(&t, freq[winner] == v);
		for (unsigned j = 0; j < MCW_N; j++)
			if (i >= mcw_w[j] && freq[j] == v && ++score[j] >= score[winner])
				winner = j;
		for (unsigned j = 0; j < MCW_N; j++) {
			uint8_t old;

			if (i < mcw_w[j])
				continue;
			old = s[i - mcw_w[j]];
			cnt[j][old]--;
			cnt[j][v]++;
			last[j][v] = (uint32_t)i;
			if (old != freq[j]) {
				if (cnt[j][v] >= best[j]) {
					best[j] = cnt[j][v];
					freq[j] = v;
				}
			} else {
				/* The most common value lost one: find the new
				 * one (highest count, then most recent). */
				uint32_t bc = 0, bp = 0;

				unsigned f = freq[j];

				/* Without branches: which symbol takes over is
				 * a coin toss, and how GCC laid the branches out
				 * once made this loop twice as slow. */
				for (unsigned x = 0; x < k; x++) {
					const uint32_t c = cnt[j][x], l = last[j][x];
					const int take = c > bc || (c == bc && c && l >= bp);

					bc = take ? c : bc;
					bp = take ? l : bp;
					f = take ? x : f;
				}
				freq[j] = (uint8_t)f;
				best[j] = bc;
			}
		}
	}
	est_prediction_bound(t.c, n - mcw_w[0], t.longest, k, r);
	return 0;
}

/* ================= §6.3.8 lag ================= */
/* 128 lags.  The scoreboard is kept bit-sliced: plane b holds bit b of all
 * 128 counters, so "add one to every lag whose sample matched" is a ripple
 * carry over two words, and "the highest score among the matching lags" is a
 * walk down the planes.  Lag d is bit 128 - d of the 128-bit masks (bit 127
 * is lag 1), so 90B's tie rule (ascending d, >= wins: the largest d among
 * equal scores) is the lowest set bit. */
#define LAG_D 128
#define LAG_PLANES 40
#define LAG_REBASE 1024	/* steps between two slices_rebase() */

struct u128 { uint64_t lo, hi; };	/* bit j: lo for j < 64, hi above */

struct slices {
	struct u128 pl[LAG_PLANES];
	unsigned np;
};

static inline void slices_inc(struct slices *c, struct u128 m)
{
	/* Over every plane in use, without stopping when the carry dies out:
	 * where it dies is a coin toss, and the early exit mispredicted. */
	for (unsigned b = 0; b < c->np; b++) {
		struct u128 carry = { c->pl[b].lo & m.lo, c->pl[b].hi & m.hi };

		c->pl[b].lo ^= m.lo;
		c->pl[b].hi ^= m.hi;
		m = carry;
	}
	if ((m.lo | m.hi) && c->np < LAG_PLANES)	/* a new top plane */
		c->pl[c->np++] = m;
}

/* Among the lags in m (non-empty): the highest score, the lowest bit. */
static inline unsigned slices_max(const struct slices *c, struct u128 m, uint64_t *val)
{
	uint64_t v = 0;
	unsigned j;

	/* Without branches: which way each plane goes is a coin toss on
	 * random data, and a mispredicted branch per plane cost more than the
	 * walk itself. */
	for (unsigned b = c->np; b-- > 0;) {
		uint64_t tl = m.lo & c->pl[b].lo, th = m.hi & c->pl[b].hi;
		uint64_t keep = -(uint64_t)((tl | th) != 0);

		m.lo = (tl & keep) | (m.lo & ~keep);
		m.hi = (th & keep) | (m.hi & ~keep);
		v |= (keep & 1) << b;
	}
	j = m.lo ? (unsigned)__builtin_ctzll(m.lo) : 64 + (unsigned)__builtin_ctzll(m.hi);
	*val = v;
	return j;
}

/* Subtracts the lowest score from every score, so that the planes hold
 * only the spread between lags: on random data the scores climb together
 * (about i/2 each) and differ by a few thousand, 13 planes instead of 23
 * for slices_max() to walk.  Returns what was subtracted. */
static uint64_t slices_rebase(struct slices *c)
{
	struct u128 cand = { ~0ull, ~0ull }, borrow = { 0, 0 };
	uint64_t low = 0;

	/* The minimum: walking down, keep the lags with a 0 where any has. */
	for (unsigned b = c->np; b-- > 0;) {
		struct u128 z = { cand.lo & ~c->pl[b].lo, cand.hi & ~c->pl[b].hi };

		if (z.lo | z.hi)
			cand = z;
		else
			low |= 1ull << b;
	}
	if (!low)
		return 0;
	/* Every counter minus low, plane by plane with a borrow word. */
	for (unsigned b = 0; b < c->np; b++) {
		const uint64_t k = -((low >> b) & 1);	/* bit b of low, all lanes */
		struct u128 a = c->pl[b];

		c->pl[b].lo = a.lo ^ k ^ borrow.lo;
		c->pl[b].hi = a.hi ^ k ^ borrow.hi;
		borrow.lo = (~a.lo & (k | borrow.lo)) | (k & borrow.lo);
		borrow.hi = (~a.hi & (k | borrow.hi)) | (k & borrow.hi);
	}
	while (c->np > 0 && !(c->pl[c->np - 1].lo | c->pl[c->np - 1].hi))
		c->np--;
	return low;
}

/* Bit j of the mask: s[i - 128 + j] == s[i] (the lags that would have
 * predicted s[i]), only for positions >= 0. */
static struct u128 lag_match(const uint8_t *s, size_t i)
{
	struct u128 m = { 0, 0 };
	const uint8_t v = s[i];

	if (i >= LAG_D) {
		const uint8_t *w = s + i - LAG_D;
#ifdef __SSE2__
		/* 16 compares at once (x86-64 always has SSE2). */
		const __m128i vv = _mm_set1_epi8((char)v);

		for (unsigned c = 0; c < 8; c++) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(w + 16 * c));
			uint64_t bits = (uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, vv));

			if (c < 4)
				m.lo |= bits << (16 * c);
			else
				m.hi |= bits << (16 * (c - 4));
		}
#else
		for (unsigned j = 0; j < 64; j++)
			m.lo |= (uint64_t)(w[j] == v) << j;
		for (unsigned j = 0; j < 64; j++)
			m.hi |= (uint64_t)(w[64 + j] == v) << j;
#endif
	} else {
		for (size_t d = 1; d <= i; d++) {
			unsigned j = LAG_D - (unsigned)d;

			if (s[i - d] == v) {
				if (j < 64)
					m.lo |= 1ull << j;
				else
					m.hi |= 1ull << (j - 64);
			}
		}
	}
	return m;
}

/* Binary samples, 64 steps at a time.  A lag's score rises by at most
 * the matches it has in the next 64 steps (a popcount of its match word),
 * and only a lag whose score reaches the highest can become the winner: a
 * lag that cannot reach the highest score at the block's start within the
 * block cannot win in it, and only its score needs updating, by its
 * popcount.  The others (on random bits, late in the input, one to three of
 * the 128 lags) are stepped through the block one sample at a time as 90B
 * says.  The samples are packed MSB first after LAG_D zero bits, so that a
 * lag's match word is one xor of two 64-bit windows. */
static inline uint64_t bits_at(const uint64_t *w, size_t q)
{
	const unsigned sh = q & 63;
	const uint64_t x = w[q >> 6] << sh;

	return sh ? x | (w[(q >> 6) + 1] >> (64 - sh)) : x;
}

static int lag_binary(const uint8_t *s, size_t n, struct est_result *r)
{
	const size_t words = (n + LAG_D) / 64 + 2;
	uint64_t *w = est_zalloc(words * sizeof(*w));
	uint64_t m[LAG_D];	/* m[d - 1]: lag d's matches, bit 63 = first step */
	uint32_t sc[LAG_D] = { 0 }, high = 0;	/* high: sc[winner] */
	uint8_t cand[LAG_D];
	struct tally t = { 0, 0, 0 };
	unsigned winner = 0;	/* lag 1 */

	if (!w)
		return -ENOMEM;
	est_pack_bits(s, n, w + LAG_D / 64);
	for (size_t i0 = 1; i0 < n; i0 += 64) {
		const unsigned len = n - i0 < 64 ? (unsigned)(n - i0) : 64;
		/* the block's len steps: the top len bits (1 <= len <= 64) */
		const uint64_t x = bits_at(w, i0 + LAG_D), live = ~(~0ull >> (len - 1) >> 1);
		unsigned nc = 0;

		for (unsigned d = 1; d <= LAG_D; d++) {
			uint64_t mm = ~(x ^ bits_at(w, i0 + LAG_D - d)) & live;
			uint32_t up;

			if (d > i0)	/* no lag-d prediction before s[d] */
				mm &= d - i0 < 64 ? ~0ull >> (d - i0) : 0;
			m[d - 1] = mm;
			up = popcount64(mm);
			if (sc[d - 1] + up >= high)
				cand[nc++] = (uint8_t)(d - 1);
			else
				sc[d - 1] += up;
		}
		for (unsigned st = 0; st < len; st++) {
			const unsigned b = 63 - st;

			tally(&t, (int)((m[winner] >> b) & 1));
			/* Ascending lags, >= takes over: 90B's loop over the
			 * lags that can win. */
			for (unsigned c = 0; c < nc; c++) {
				const unsigned d = cand[c];
				const uint32_t inc = (uint32_t)(m[d] >> b) & 1, v = sc[d] + inc;
				const int take = inc && v >= high;

				sc[d] = v;
				winner = take ? d : winner;
				high = take ? v : high;
			}
		}
	}
	est_zfree(w, words * sizeof(*w));
	est_prediction_bound(t.c, n - 1, t.longest, 2, r);
	return 0;
}

int est_lag(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	struct slices sc;
	struct tally t = { 0, 0, 0 };
	unsigned winner = LAG_D - 1;	/* bit of lag 1 */
	uint64_t high = 0;
	struct u128 hist = { 0, 0 };	/* binary: bit j = s[i - 128 + j] */
	int rc = check_literal(s, n, k);

	if (rc < 0)
		return rc;
	if (n < 3)
		return -ENODATA;
	if (k == 2)
		return lag_binary(s, n, r);
	memset(&sc, 0, sizeof(sc));
	hist.hi = (uint64_t)s[0] << 63;
	for (size_t i = 1; i < n; i++) {
		struct u128 m;
		uint64_t val;
		unsigned j;

		tally(&t, s[i] == s[i - (LAG_D - winner)]);
		if (k == 2) {
			/* One bit per sample: the history word is the mask. */
			m = s[i] ? hist : (struct u128){ ~hist.lo, ~hist.hi };
			if (i < LAG_D) {
				unsigned lo_valid = LAG_D - (unsigned)i;	/* bits below are before s[0] */

				if (lo_valid >= 64) {
					m.lo = 0;
					m.hi &= ~0ull << (lo_valid - 64);
				} else {
					m.lo &= ~0ull << lo_valid;
				}
			}
			hist.lo = (hist.lo >> 1) | (hist.hi << 63);
			hist.hi = (hist.hi >> 1) | ((uint64_t)s[i] << 63);
		} else {
			m = lag_match(s, i);
		}
		if (!(m.lo | m.hi))
			continue;
		slices_inc(&sc, m);
		j = slices_max(&sc, m, &val);
		if (val >= high) {
			winner = j;
			high = val;
		}
		/* high is the winner's score, the highest: it stays above the
		 * lowest one subtracted. */
		if ((i & (LAG_REBASE - 1)) == 0)
			high -= slices_rebase(&sc);
	}
	est_prediction_bound(t.c, n - 1, t.longest, k, r);
	return 0;
}

/* ================= dictionaries for MultiMMC and LZ78Y ================= */
/* Both count, for every context x (the 1..16 samples before position i)
 * and follower y, how often y followed x, and predict x's most frequent
 * follower (ties: larger y).  Binary samples index flat arrays by the
 * context's bits (mmc_binary(), lz78y_binary() below); wider ones use these
 * open-addressing hash tables keyed by positions in the sample buffer (a
 * key is the substring there, so nothing is copied).  Tables grow by
 * doubling; each holds at most the number of distinct keys seen. */
#define CTX_MAX 16

/* A slot is empty when its hash is 0 (hashes are made odd).  A slot's
 * fields sit together (16 bytes, four to a cache line): a lookup past the
 * caches costs one miss for the hash, the key's position and the counts,
 * where separate arrays cost one miss each. */
struct hslot {
	uint32_t hash, pos;	/* the key is the substring at pos */
	uint32_t count;		/* pair's count, context's best */
	uint8_t pred;		/* contexts only: the prediction */
};

struct htab {
	struct hslot *slot;
	size_t mask, used;
};

static inline uint32_t hmix(uint32_t h, uint8_t v)
{
	h ^= v + 0x9e3779b9u + (h << 6) + (h >> 2);
	return h * 0x85ebca6bu;
}

static void htab_free(struct htab *t)
{
	if (t->slot)
		est_zfree(t->slot, (t->mask + 1) * sizeof(*t->slot));
	memset(t, 0, sizeof(*t));
}

static int htab_init(struct htab *t, size_t cap)
{
	struct hslot *sl = est_zalloc(cap * sizeof(*sl));

	if (!sl)
		return -ENOMEM;
	*t = (struct htab){ .slot = sl, .mask = cap - 1, .used = 0 };
	return 0;
}

/* The slot of the key at pos (its own, or the empty one it would take). */
static size_t htab_find(const struct htab *t, const uint8_t *s,
			uint32_t pos, unsigned len, uint32_t h)
{
	/* The slot from the high bits of a multiplication: hmix's low bits
	 * depend on the low bits of the samples only. */
	for (size_t at = (size_t)(((uint64_t)h * 0x9E3779B97F4A7C15ull) >> 32) & t->mask;;
	     at = (at + 1) & t->mask) {
		const struct hslot *e = &t->slot[at];

		if (e->hash == 0)
			return at;
		if (e->hash == h && memcmp(s + e->pos, s + pos, len) == 0)
			return at;
	}
}

/* Room for one more key: grows (doubling) past 80 % full. */
static int htab_grow(struct htab *t, const uint8_t *s, unsigned len)
{
	struct htab nt;
	int rc;

	if ((t->used + 1) * 5 <= (t->mask + 1) * 4)
		return 0;
	rc = htab_init(&nt, (t->mask + 1) * 2);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i <= t->mask; i++) {
		if (t->slot[i].hash) {
			size_t at = htab_find(&nt, s, t->slot[i].pos, len, t->slot[i].hash);

			nt.slot[at] = t->slot[i];
		}
	}
	nt.used = t->used;
	htab_free(t);
	*t = nt;
	return 0;
}

/* Inserts the key at pos in the empty slot `at` (from htab_find()),
 * growing first if needed; returns its slot or -ENOMEM. */
static long htab_put(struct htab *t, const uint8_t *s, size_t at,
		     uint32_t pos, unsigned len, uint32_t h)
{
	if ((t->used + 1) * 5 > (t->mask + 1) * 4) {
		int rc = htab_grow(t, s, len);

		if (rc < 0)
			return rc;
		at = htab_find(t, s, pos, len, h);
	}
	t->slot[at] = (struct hslot){ .hash = h, .pos = pos, .count = 0, .pred = 0 };
	t->used++;
	return (long)at;
}

/* Length 1's step, in LZ78Y's dictionary and MultiMMC's tables alike:
 * count follower @y after @x (a new pair only if @allow_new) and keep x's
 * most frequent follower, the larger value on a tie.  1 if it made a new
 * pair, else 0. */
static inline int len1_add(uint32_t *pairs1, uint32_t *best1, uint8_t *pred1, uint8_t x,
			   uint8_t y, int allow_new)
{
	uint32_t *e = &pairs1[(unsigned)x << 8 | y];
	const int made = *e == 0;
	uint32_t c;

	if (made && !allow_new)
		return 0;
	c = ++*e;
	if (c > best1[x] || (c == best1[x] && y > pred1[x])) {
		best1[x] = c;
		pred1[x] = y;
	}
	return made;
}

struct dict {
	const uint8_t *s;
	/* Length 1 is the busiest and has only 256 contexts: flat arrays,
	 * pairs[x << 8 | y], best[x] (0: x not there), pred[x]. */
	uint32_t *pairs1, best1[256];
	uint8_t pred1[256];
	/* Length 2's 65,536 contexts are direct-indexed too (x2 = the two
	 * samples): on wide random samples every one of them turns up, and
	 * looked up at every position they are a cache miss each in a hash
	 * table.  count 0: not there. */
	struct ctx2 { uint32_t count; uint8_t pred; } *ctx2;
	struct htab ctx[CTX_MAX], pair[CTX_MAX]; /* lengths 3..16, 2..16 */
	/* Per position, filled by dict_at(): */
	size_t i;
	uint32_t h[CTX_MAX + 1];	/* hash of the context of length j */
	/* The slot dict_find() last found, for dict_add() at the same place. */
	size_t found_i, found_at;
	unsigned found_j;
};

static void dict_free(struct dict *d)
{
	free(d->pairs1);
	free(d->ctx2);
	for (unsigned j = 0; j < CTX_MAX; j++) {
		htab_free(&d->ctx[j]);
		htab_free(&d->pair[j]);
	}
}

/* cap: the tables' first size (a power of 2); they grow past 80 %. */
static int dict_init(struct dict *d, const uint8_t *s, size_t cap)
{
	memset(d, 0, sizeof(*d));
	d->s = s;
	d->pairs1 = calloc(256 * 256, sizeof(uint32_t));
	d->ctx2 = calloc(256 * 256, sizeof(*d->ctx2));
	if (!d->pairs1 || !d->ctx2) {
		dict_free(d);
		return -ENOMEM;
	}
	for (unsigned j = 1; j < CTX_MAX; j++) {
		int rc = j == 1 ? 0 : htab_init(&d->ctx[j], cap);

		if (rc == 0)
			rc = htab_init(&d->pair[j], cap);
		if (rc < 0) {
			dict_free(d);
			return rc;
		}
	}
	return 0;
}

/* Prepares the contexts ending just before position i (lengths 1..max). */
static inline void dict_at(struct dict *d, size_t i, unsigned max)
{
	d->i = i;
	d->h[0] = 0x12345678u;
	for (unsigned j = 1; j <= max; j++)
		d->h[j] = hmix(d->h[j - 1], d->s[i - j]) | 1u;
}

/* Context of length j: does it exist, and what does it predict? */
static inline int dict_find(struct dict *d, unsigned j, uint8_t *pred, uint32_t *count)
{
	const struct htab *t = &d->ctx[j - 1];
	size_t at;

	if (j == 1) {
		const uint8_t x = d->s[d->i - 1];

		*pred = d->pred1[x];
		*count = d->best1[x];
		return *count != 0;
	}
	if (j == 2) {
		const struct ctx2 *e = &d->ctx2[(unsigned)d->s[d->i - 2] << 8 | d->s[d->i - 1]];

		*pred = e->pred;
		*count = e->count;
		return e->count != 0;
	}
	at = htab_find(t, d->s, (uint32_t)(d->i - j), j, d->h[j]);
	if (!t->slot[at].hash)
		return 0;
	d->found_i = d->i;
	d->found_j = j;
	d->found_at = at;
	*pred = t->slot[at].pred;
	*count = t->slot[at].count;
	return 1;
}

/* Counts follower y = s[i] after the context of length j.  An existing pair
 * is always counted; a new one only if allow_new.  Returns 1 if it made a
 * new pair, 0 if not, -ENOMEM. */
static int dict_add(struct dict *d, unsigned j, int allow_new)
{
	const uint8_t y = d->s[d->i];
	uint32_t pos = (uint32_t)(d->i - j), hp, c;
	struct htab *pt = &d->pair[j - 1], *ct = &d->ctx[j - 1];
	long pa, ca;
	int made = 0;

	if (j == 1)
		return len1_add(d->pairs1, d->best1, d->pred1, d->s[d->i - 1], y, allow_new);

	/* The pair's key is the context and y: the j + 1 samples at pos. */
	hp = hmix(d->h[j] ^ 0xa5a5a5a5u, y) | 1u;
	pa = (long)htab_find(pt, d->s, pos, j + 1, hp);
	if (!pt->slot[pa].hash) {
		if (!allow_new)
			return 0;
		pa = htab_put(pt, d->s, (size_t)pa, pos, j + 1, hp);
		if (pa < 0)
			return (int)pa;
		made = 1;
	}
	c = ++pt->slot[pa].count;
	if (j == 2) {
		struct ctx2 *e = &d->ctx2[(unsigned)d->s[d->i - 2] << 8 | d->s[d->i - 1]];

		if (c > e->count || (c == e->count && y > e->pred)) {
			e->count = c;
			e->pred = y;
		}
		return made;
	}
	if (d->found_j == j && d->found_i == d->i)
		ca = (long)d->found_at;	/* found just now; nothing moved it */
	else
		ca = (long)htab_find(ct, d->s, pos, j, d->h[j]);
	if (!ct->slot[ca].hash) {
		ca = htab_put(ct, d->s, (size_t)ca, pos, j, d->h[j]);
		if (ca < 0)
			return (int)ca;
	}
	{
		struct hslot *e = &ct->slot[ca];

		if (c > e->count || (c == e->count && y > e->pred)) {
			e->count = c;
			e->pred = y;
		}
	}
	return made;
}

/* ---- binary samples: flat arrays ----
 * bin_at(all, ctx, j) is the word of the context ctx of j bits (bit j - 1 =
 * the sample j back): the counts of its two followers, follower 0 in the low
 * 32 bits, 1 in the high 32 (counts stay below 2^31: at most n).  One load
 * and one store per length and sample.  2^j words per length, 1 MiB for
 * all 16.  Each length's table starts one cache line further from a 4-KiB
 * boundary than the one before: the longer tables' sizes are multiples of
 * 4 KiB, so a step's words (the same low bits of the context) shared
 * their address bits below 4 KiB, which a CPU may take for a possible
 * store-to-load dependency (measured, 5 rounds on 8M random bits: LZ78Y
 * 0.23 -> 0.21 s, MultiMMC about the same). */
#define BIN_SKEW 8	/* words: a cache line */
#define BIN_OFF(j) (((size_t)1 << (j)) - 2 + BIN_SKEW * (size_t)(j))
#define BIN_TABLES_BYTES ((((size_t)1 << (CTX_MAX + 1)) + BIN_SKEW * (CTX_MAX + 1)) * sizeof(uint64_t))

static inline uint64_t *bin_at(uint64_t *all, uint32_t ctx, unsigned j)
{
	return all + BIN_OFF(j) + (ctx & ((1u << j) - 1));
}

/* The pair of counts as the word holds them. */
#define BIN_ONE(y) ((uint64_t)1 << (32 * (y)))
static inline uint32_t bin_count(uint64_t e, unsigned y)
{
	return (uint32_t)(e >> (32 * y));
}

/* Fully unrolled where the compiler is GCC 8 or later: the lengths'
 * offsets and masks become constants.  (Clang's pragma warns where the
 * count is not a constant, the first steps' call; its own heuristics
 * decide there.) */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define UNROLL_CTX _Pragma("GCC unroll 16")
#else
#define UNROLL_CTX
#endif

static int mmc_binary(const uint8_t *s, size_t n, struct est_result *r);
static int lz78y_binary(const uint8_t *s, size_t n, struct est_result *r);

/* ================= §6.3.9 MultiMMC ================= */
#define MMC_MAX_ENTRIES 100000

/* ---- MultiMMC over wide samples: one table per string length ----
 * A pair (a context of j samples and the one that followed it) is a string
 * of j + 1 samples, and so is the context of length j + 1 one position
 * later.  So one table per string length L (3..17) holds both: a string's
 * slot counts it as a pair (count: how often its last sample followed the
 * others; 0: not a pair) and as a context (best: its most frequent
 * follower's count, 0: not a context; pred: that follower).  That is half
 * the tables of a context table beside a pair table per length (30 MiB at
 * most instead of 58, every page of which a random input touches), and a
 * context's lookup finds the cache line its string's pair lookup brought
 * in one position earlier.  Contexts of 1 and 2 samples stay direct-indexed
 * as in struct dict. */
struct sslot {
	uint32_t tag;	/* 0: empty; else STR_KEY(hash) | pred */
	uint32_t pos;	/* the string is s[pos .. pos + L - 1] */
	uint32_t count, best;
};

/* The hash's top 24 bits, never all 0: a slot's tag, less its pred. */
#define STR_KEY(h) (((h) & 0xffffff00u) | 0x100u)
#define STR_SEED 0x12345678u
#define STR_MAX (CTX_MAX + 1)

struct stab {
	struct sslot *slot;
	size_t mask, used;
};

struct mmc {
	const uint8_t *s;
	uint32_t *pairs1, best1[256];
	uint8_t pred1[256];
	struct ctx2 *ctx2;
	struct stab t[STR_MAX + 1];	/* t[L]: strings of L samples, L >= 3 */
	/* Hashes by length of the strings that end at i - 1 (hp: contexts),
	 * at i (hc: pairs) and at i + 1 (hn: the next pairs, to prefetch
	 * their slots), computed as far as asked (hp_n, hc_n, hn_n); the next
	 * position's hp and hc are this one's hc and hn. */
	uint32_t ha[STR_MAX + 1], hb[STR_MAX + 1], hx[STR_MAX + 1], *hp, *hc, *hn;
	unsigned hp_n, hc_n, hn_n;
	size_t i;
	int started;
};

/* The hash of the string of L samples that ends at s[end]: the last sample
 * first, as the chains of mmc_hash() build it. */
static uint32_t str_hash(const uint8_t *s, size_t end, unsigned len)
{
	uint32_t h = STR_SEED;

	for (unsigned l = 1; l <= len; l++)
		h = hmix(h, s[end + 1 - l]);
	return h;
}

/* h[L] of the chain for the strings that end at s[end], extending it. */
static inline uint32_t mmc_hash(const uint8_t *s, uint32_t *h, unsigned *done,
				size_t end, unsigned len)
{
	while (*done < len) {
		++*done;
		h[*done] = hmix(h[*done - 1], s[end + 1 - *done]);
	}
	return h[len];
}

/* The slot of the string at pos (its own, or the empty one it would take). */
static size_t stab_find(const struct stab *t, const uint8_t *s, uint32_t pos,
			unsigned len, uint32_t h)
{
	const uint32_t key = STR_KEY(h);

	for (size_t at = (size_t)(((uint64_t)h * 0x9E3779B97F4A7C15ull) >> 32) & t->mask;;
	     at = (at + 1) & t->mask) {
		const struct sslot *e = &t->slot[at];

		if (e->tag == 0)
			return at;
		if ((e->tag & ~0xffu) == key && memcmp(s + e->pos, s + pos, len) == 0)
			return at;
	}
}

/* Puts the string at pos in the empty slot `at` (from stab_find()), first
 * doubling the table past 80 % full; returns its slot, or -ENOMEM. */
static long stab_put(struct stab *t, const uint8_t *s, size_t at, uint32_t pos,
		     unsigned len, uint32_t h)
{
	if ((t->used + 1) * 5 > (t->mask + 1) * 4) {
		const size_t cap = (t->mask + 1) * 2;
		struct stab nt = { .slot = est_zalloc(cap * sizeof(struct sslot)),
				   .mask = cap - 1, .used = t->used };

		if (!nt.slot)
			return -ENOMEM;
		for (size_t k = 0; k <= t->mask; k++) {
			const struct sslot *e = &t->slot[k];

			if (e->tag)
				nt.slot[stab_find(&nt, s, e->pos, len,
						  str_hash(s, e->pos + len - 1, len))] = *e;
		}
		est_zfree(t->slot, (t->mask + 1) * sizeof(*t->slot));
		*t = nt;
		at = stab_find(t, s, pos, len, h);
	}
	t->slot[at] = (struct sslot){ .tag = STR_KEY(h), .pos = pos };
	t->used++;
	return (long)at;
}

static void mmc_free(struct mmc *m)
{
	free(m->pairs1);
	free(m->ctx2);
	for (unsigned l = 3; l <= STR_MAX; l++)
		if (m->t[l].slot)
			est_zfree(m->t[l].slot, (m->t[l].mask + 1) * sizeof(struct sslot));
	memset(m, 0, sizeof(*m));
}

static int mmc_init(struct mmc *m, const uint8_t *s, size_t cap)
{
	memset(m, 0, sizeof(*m));
	m->s = s;
	m->hp = m->ha;
	m->hc = m->hb;
	m->hn = m->hx;
	m->pairs1 = calloc(256 * 256, sizeof(uint32_t));
	m->ctx2 = calloc(256 * 256, sizeof(*m->ctx2));
	if (!m->pairs1 || !m->ctx2) {
		mmc_free(m);
		return -ENOMEM;
	}
	for (unsigned l = 3; l <= STR_MAX; l++) {
		m->t[l] = (struct stab){ .slot = est_zalloc(cap * sizeof(struct sslot)),
					 .mask = cap - 1 };
		if (!m->t[l].slot) {
			mmc_free(m);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Moves to position i: the contexts end at i - 1, the pairs at i. */
static inline void mmc_at(struct mmc *m, size_t i)
{
	uint32_t *h = m->hp;

	m->hp = m->hc;		/* what ended at i - 1 */
	m->hc = m->hn;		/* what ends at i */
	m->hn = h;
	if (m->started && i == m->i + 1) {
		m->hp_n = m->hc_n;
		m->hc_n = m->hn_n;
	} else {
		m->hp[0] = m->hc[0] = STR_SEED;
		m->hp_n = m->hc_n = 0;
	}
	m->hn[0] = STR_SEED;
	m->hn_n = 0;
	m->i = i;
	m->started = 1;
}

/* The pairs at i + 1 miss the caches (2 MiB tables, looked up at random):
 * their slots are fetched one position ahead, for as many lengths as
 * position i - 1 looked up (and one more). */
static inline void mmc_prefetch(struct mmc *m, size_t n)
{
	const size_t i = m->i;
	unsigned want = m->hp_n + 1;

	if (want > STR_MAX)
		want = STR_MAX;
	if (i + 1 >= n || want > i + 2)
		return;
	for (unsigned l = 3; l <= want; l++) {
		const uint32_t h = mmc_hash(m->s, m->hn, &m->hn_n, i + 1, l);
		const struct stab *t = &m->t[l];

		__builtin_prefetch(&t->slot[(size_t)(((uint64_t)h * 0x9E3779B97F4A7C15ull) >> 32) & t->mask], 1);
	}
}

/* Is the context of length j known, and what does it predict?  For j >= 3
 * *at is its slot in t[j] (or the empty one it would take). */
static inline int mmc_find(struct mmc *m, unsigned j, uint8_t *pred, long *at)
{
	const uint8_t *s = m->s;
	const size_t i = m->i;
	const struct sslot *e;

	if (j == 1) {
		*pred = m->pred1[s[i - 1]];
		return m->best1[s[i - 1]] != 0;
	}
	if (j == 2) {
		const struct ctx2 *c = &m->ctx2[(unsigned)s[i - 2] << 8 | s[i - 1]];

		*pred = c->pred;
		return c->count != 0;
	}
	*at = (long)stab_find(&m->t[j], s, (uint32_t)(i - j), j,
			      mmc_hash(s, m->hp, &m->hp_n, i - 1, j));
	e = &m->t[j].slot[*at];
	*pred = (uint8_t)e->tag;
	return e->tag && e->best;
}

/* Counts follower y = s[i] after the context of length j (ctx_at: its slot
 * from mmc_find(), or -1).  An existing pair is always counted; a new one
 * only if allow_new.  Returns 1 if it made a new pair, 0 if not, -ENOMEM. */
static int mmc_add(struct mmc *m, unsigned j, int allow_new, long ctx_at)
{
	const uint8_t *s = m->s;
	const size_t i = m->i;
	const uint8_t y = s[i];
	const uint32_t pos = (uint32_t)(i - j);
	struct stab *pt = &m->t[j + 1], *ct = &m->t[j];
	struct sslot *e;
	uint32_t c, h;
	long pa;
	int made = 0;

	if (j == 1)
		return len1_add(m->pairs1, m->best1, m->pred1, s[i - 1], y, allow_new);
	/* The pair: the j + 1 samples at pos, in the table of that length. */
	h = mmc_hash(s, m->hc, &m->hc_n, i, j + 1);
	pa = (long)stab_find(pt, s, pos, j + 1, h);
	if (!pt->slot[pa].tag || !pt->slot[pa].count) {
		if (!allow_new)
			return 0;
		if (!pt->slot[pa].tag) {
			pa = stab_put(pt, s, (size_t)pa, pos, j + 1, h);
			if (pa < 0)
				return (int)pa;
		}
		made = 1;
	}
	c = ++pt->slot[pa].count;
	if (j == 2) {
		struct ctx2 *x2 = &m->ctx2[(unsigned)s[i - 2] << 8 | s[i - 1]];

		if (c > x2->count || (c == x2->count && y > x2->pred)) {
			x2->count = c;
			x2->pred = y;
		}
		return made;
	}
	/* The context: t[j] has not changed since mmc_find() (only t[j + 1]
	 * took a string), so its slot still holds. */
	h = mmc_hash(s, m->hp, &m->hp_n, i - 1, j);
	if (ctx_at < 0)
		ctx_at = (long)stab_find(ct, s, pos, j, h);
	if (!ct->slot[ctx_at].tag) {
		ctx_at = stab_put(ct, s, (size_t)ctx_at, pos, j, h);
		if (ctx_at < 0)
			return (int)ctx_at;
	}
	e = &ct->slot[ctx_at];
	if (c > e->best || (c == e->best && y > (uint8_t)e->tag)) {
		e->best = c;
		e->tag = (e->tag & ~0xffu) | y;
	}
	return made;
}

static int mmc_wide(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	struct mmc m;
	uint64_t score[CTX_MAX] = { 0 };
	uint32_t entries[CTX_MAX] = { 0 };
	struct tally t = { 0, 0, 0 };
	unsigned winner = 0;
	int rc;

	/* At most MMC_MAX_ENTRIES pairs and as many contexts per length: sized
	 * at once for the pairs (16 bytes a slot, 2^17 slots, 15 lengths: 30
	 * MiB) rather than growing through page faults and rehashes; on a
	 * random input the contexts are the same strings.  A table that must
	 * hold more grows. */
	{
		size_t cap = 1024, want = n < MMC_MAX_ENTRIES ? n : MMC_MAX_ENTRIES;

		while (cap * 4 < want * 5)
			cap *= 2;
		rc = mmc_init(&m, s, cap);
	}
	if (rc < 0)
		return rc;
	/* The pairs whose context starts at s[0] (context length i for the
	 * sample at i) come first: they precede every prediction that can use
	 * them, and the main loop below starts its contexts at s[1]. */
	for (size_t i = 1; i <= CTX_MAX && i < n - 1; i++) {
		mmc_at(&m, i);
		rc = mmc_add(&m, (unsigned)i, 1, -1);
		if (rc < 0)
			goto out;
		entries[i - 1] = 1;
	}
	for (size_t i = 2; i < n; i++) {
		unsigned cur = winner, max = i - 1 < CTX_MAX ? (unsigned)(i - 1) : CTX_MAX;
		int found = 1;

		mmc_at(&m, i);
		mmc_prefetch(&m, n);
		for (unsigned j = 1; j <= max; j++) {
			uint8_t pred = 0;
			long at = -1;
			unsigned sb = j - 1;

			/* A context whose shorter suffix is unknown is unknown
			 * too (90B's dictionaries grow shortest first). */
			if (found)
				found = mmc_find(&m, j, &pred, &at);
			if (found) {
				if (pred == s[i]) {
					if (++score[sb] >= score[winner])
						winner = sb;
					if (sb == cur)
						tally(&t, 1);
				} else if (sb == cur) {
					tally(&t, 0);
				}
				rc = mmc_add(&m, j, entries[sb] < MMC_MAX_ENTRIES, at);
				if (rc < 0)
					goto out;
				entries[sb] += (uint32_t)rc;
			} else if (entries[sb] < MMC_MAX_ENTRIES) {
				rc = mmc_add(&m, j, 1, at);
				if (rc < 0)
					goto out;
				entries[sb]++;
			}
		}
	}
	est_prediction_bound(t.c, n - 2, t.longest, k, r);
	rc = 0;
out:
	mmc_free(&m);
	return rc;
}

int est_multi_mmc(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	int rc = check_literal(s, n, k);

	if (rc < 0)
		return rc;
	if (n < 3)
		return -ENODATA;
	return k == 2 ? mmc_binary(s, n, r) : mmc_wide(s, n, k, r);
}

/* ================= §6.3.10 LZ78Y ================= */
#define LZ_B 16
#define LZ_MAX_DICT 65536

/* One LZ78Y step once the dictionary is full (no context enters it any
 * more, only followers are counted): the same result as trying all 16
 * lengths, with fewer lookups.  A context in the dictionary has its shorter
 * suffixes there too (each step adds the lengths it lacks, longest first),
 * except those the step that filled it added (at fill_i, lengths fill_j..16,
 * whose shorter suffixes may have found no room).  So the lengths present
 * are 1..J (J: the first absent, minus one) and any of the filling step's
 * contexts that the current one repeats. */
static int lz78y_full_step(struct dict *d, size_t fill_i, unsigned fill_j,
			   uint32_t *best, uint8_t *pred, int *have)
{
	uint8_t y[LZ_B + 1];
	uint32_t cnt[LZ_B + 1];
	unsigned present = 0, jj = 1;	/* bit j: length j present */

	for (; jj <= LZ_B && dict_find(d, jj, &y[jj], &cnt[jj]); jj++)
		present |= 1u << jj;
	/* The filling step's contexts end where it was: the current one
	 * repeats those of the lengths up to where the two first differ
	 * (looking back from their ends), none longer. */
	for (unsigned j = jj + 1 > fill_j ? jj + 1 : fill_j; j <= LZ_B; j++) {
		if (memcmp(d->s + fill_i - j, d->s + d->i - j, j) != 0)
			break;
		if (dict_find(d, j, &y[j], &cnt[j]))
			present |= 1u << j;
	}
	for (unsigned j = LZ_B; j >= 1; j--) {
		int rc;

		if (!(present & (1u << j)))
			continue;
		if (cnt[j] > *best) {
			*best = cnt[j];
			*pred = y[j];
			*have = 1;
		}
		rc = dict_add(d, j, 1);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int est_lz78y(const uint8_t *s, size_t n, unsigned k, struct est_result *r)
{
	struct dict d;
	struct tally t = { 0, 0, 0 };
	uint32_t dict_size = 0;
	size_t fill_i = 0;
	unsigned fill_j = 1;
	int rc = check_literal(s, n, k);

	if (rc < 0)
		return rc;
	if (n < LZ_B + 2)
		return -ENODATA;
	if (k == 2)
		return lz78y_binary(s, n, r);
	rc = dict_init(&d, s, 1024);
	if (rc < 0)
		return rc;
	/* Position 16: every context length enters the dictionary. */
	dict_at(&d, LZ_B, LZ_B);
	for (unsigned j = 1; j <= LZ_B; j++) {
		rc = dict_add(&d, j, 1);
		if (rc < 0)
			goto out;
		dict_size++;
	}
	for (size_t i = LZ_B + 1; i < n; i++) {
		uint32_t best = 0;
		uint8_t pred = 0;
		int have = 0;

		dict_at(&d, i, LZ_B);
		if (dict_size >= LZ_MAX_DICT) {
			rc = lz78y_full_step(&d, fill_i, fill_j, &best, &pred, &have);
			if (rc < 0)
				goto out;
			tally(&t, have && pred == s[i]);
			continue;
		}
		/* Longest context first; a shorter one wins only with a
		 * strictly higher count. */
		for (unsigned j = LZ_B; j >= 1; j--) {
			uint8_t y;
			uint32_t cnt;

			if (dict_find(&d, j, &y, &cnt)) {
				if (cnt > best) {
					best = cnt;
					pred = y;
					have = 1;
				}
				rc = dict_add(&d, j, 1);
			} else if (dict_size < LZ_MAX_DICT) {
				rc = dict_add(&d, j, 1);
				if (++dict_size == LZ_MAX_DICT) {
					fill_i = i;
					fill_j = j;
				}
			} else {
				rc = 0;
			}
			if (rc < 0)
				goto out;
		}
		tally(&t, have && pred == s[i]);
	}
	est_prediction_bound(t.c, n - LZ_B - 1, t.longest, k, r);
	rc = 0;
out:
	dict_free(&d);
	return rc;
}

/* The same two predictors over flat arrays, for binary samples: the same
 * steps as above with a context's bits as its index. */

/* Bits 0..7 of x as bytes 0..7, each 0 or 1. */
static inline uint64_t spread8(unsigned x)
{
	const uint64_t v = ((uint64_t)(x & 0xffu) * 0x0101010101010101ull) & 0x8040201008040201ull;

	return ((v + 0x7f7f7f7f7f7f7f7full) & 0x8080808080808080ull) >> 7;
}

/* The long contexts' counters miss the caches (1 MiB of them): those of
 * the position after next (context h2) are fetched a step ahead. */
static inline void bin_prefetch(uint64_t *all, uint32_t h2)
{
	for (unsigned j = 9; j <= CTX_MAX; j++)
		__builtin_prefetch(bin_at(all, h2, j), 1);
}

/* One MultiMMC step over lengths 1..max: counts follower y after each
 * context of hist and returns which lengths knew their context (*fm) and
 * which of those predicted y (the result).  Called with max = CTX_MAX
 * once every length has a context, so that the loop unrolls. */
static inline __attribute__((always_inline)) uint32_t
mmc_bin_step(uint64_t *all, uint32_t hist, unsigned y, unsigned max,
	     uint32_t *entries16, uint32_t *fm)
{
	const uint64_t one = BIN_ONE(y);
	uint32_t known = 0, okmask = 0, fmask;
	uint64_t e16 = 0;

	UNROLL_CTX
	for (unsigned j = 1; j <= max; j++) {
		uint64_t *const p = bin_at(all, hist, j);
		const uint64_t e = *p;
		const unsigned sb = j - 1;

		known |= (uint32_t)(e != 0) << sb;
		/* Right when the prediction is y: 1 unless the count of 1
		 * is below that of 0 (ties predict the larger symbol, 1), so
		 * the sign of the difference, xor y (fewer instructions than
		 * a compare, measured 0.32 -> 0.285 s on 8M bits). */
		okmask |= ((uint32_t)((uint64_t)((int64_t)(e >> 32) - (int64_t)(uint32_t)e) >> 63) ^ y) << sb;
		/* Up to 15 bits of context there are at most 2^16 pairs,
		 * fewer than 90B's cap: every pair is counted. */
		if (j < CTX_MAX)
			*p = e + one;
		else
			e16 = e;
	}
	/* A context counts as found when it and every shorter one are
	 * known (90B's dictionaries grow shortest first): the run of ones
	 * from bit 0. */
	fmask = ((known + 1) & ~known) - 1;
	if (max == CTX_MAX) {
		uint64_t *const p = bin_at(all, hist, CTX_MAX);

		if (((fmask >> (CTX_MAX - 1)) & 1) && bin_count(e16, y)) {
			*p = e16 + one;
		} else if (*entries16 < MMC_MAX_ENTRIES) {
			*p = e16 + one;
			++*entries16;
		}
	}
	*fm = fmask;
	return okmask & fmask;
}

/* The counters do not depend on the scoreboard, so it is kept 64 steps at
 * a time as in lag_binary(): first the block's counters, with which
 * lengths knew their context and which predicted right at each step (and
 * how often each was right, in byte lanes); then only the lengths that can
 * reach the highest score within the block are stepped through it, the
 * others just gain their count. */
#define MMC_BLOCK 64
static int mmc_binary(const uint8_t *s, size_t n, struct est_result *r)
{
	uint64_t *all = est_zalloc(BIN_TABLES_BYTES);
	uint32_t entries16 = 0, score[CTX_MAX] = { 0 }, high = 0;	/* high: score[winner] */
	uint16_t okm[MMC_BLOCK], fm[MMC_BLOCK];
	struct tally t = { 0, 0, 0 };
	unsigned winner = 0;
	uint32_t hist = 0;

	if (!all)
		return -ENOMEM;
	for (size_t i = 1; i <= CTX_MAX && i < n - 1; i++) {
		hist = (hist << 1) | s[i - 1];
		*bin_at(all, hist, (unsigned)i) = BIN_ONE(s[i]);
	}
	entries16 = n - 1 > CTX_MAX;	/* the pair above at length 16 */
	hist = s[0];
	for (size_t i0 = 2; i0 < n; i0 += MMC_BLOCK) {
		const unsigned len = n - i0 < MMC_BLOCK ? (unsigned)(n - i0) : MMC_BLOCK;
		uint64_t cnt_lo = 0, cnt_hi = 0;	/* byte sb: right in the block */
		uint8_t cand[CTX_MAX] = { 0 };
		unsigned nc = 0;

		for (unsigned st = 0; st < len; st++) {
			const size_t i = i0 + st;
			uint32_t okmask, fmask;

			hist = ((hist << 1) | s[i - 1]) & 0xffffu;
			if (i + 1 < n)
				bin_prefetch(all, ((hist << 2) | (uint32_t)s[i] << 1 | s[i + 1]) & 0xffffu);
			if (i > CTX_MAX)
				okmask = mmc_bin_step(all, hist, s[i], CTX_MAX, &entries16, &fmask);
			else
				okmask = mmc_bin_step(all, hist, s[i], (unsigned)(i - 1), &entries16, &fmask);
			okm[st] = (uint16_t)okmask;
			fm[st] = (uint16_t)fmask;
			cnt_lo += spread8(okmask);
			cnt_hi += spread8(okmask >> 8);
		}
		for (unsigned sb = 0; sb < CTX_MAX; sb++) {
			const uint32_t up = (uint32_t)((sb < 8 ? cnt_lo >> (8 * sb) : cnt_hi >> (8 * (sb - 8))) & 0xff);

			if (score[sb] + up >= high)
				cand[nc++] = (uint8_t)sb;
			else
				score[sb] += up;
		}
		for (unsigned st = 0; st < len; st++) {
			const unsigned cur = winner, ok = okm[st];

			if ((fm[st] >> cur) & 1)
				tally(&t, (ok >> cur) & 1);
			/* Ascending lengths, >= takes over, as 90B's loop. */
			for (unsigned c = 0; c < nc; c++) {
				const unsigned sb = cand[c];
				const uint32_t inc = (ok >> sb) & 1, v = score[sb] + inc;
				const int take = inc && v >= high;

				score[sb] = v;
				winner = take ? sb : winner;
				high = take ? v : high;
			}
		}
	}
	est_zfree(all, BIN_TABLES_BYTES);
	est_prediction_bound(t.c, n - 2, t.longest, 2, r);
	return 0;
}

/* One LZ78Y step, longest context first: the prediction (-1: none) from
 * the contexts known, counting follower y after each of them, and after
 * the new ones while the dictionary has room. */
static inline __attribute__((always_inline)) int
lz_bin_step(uint64_t *all, uint32_t hist, unsigned y, uint32_t *dict_size)
{
	const uint64_t one = BIN_ONE(y);
	uint32_t best = 0;
	int pred = -1;

	UNROLL_CTX
	for (unsigned j = LZ_B; j >= 1; j--) {
		uint64_t *const p = bin_at(all, hist, j);
		const uint64_t e = *p;

		if (e) {
			const uint32_t c0 = bin_count(e, 0), c1 = bin_count(e, 1);
			const uint32_t cnt = c0 > c1 ? c0 : c1;
			const int better = cnt > best;

			/* ties predict the larger symbol, 1 */
			pred = better ? (c0 > c1 ? 0 : 1) : pred;
			best = better ? cnt : best;
			*p = e + one;
		} else if (*dict_size < LZ_MAX_DICT) {
			*p = one;
			++*dict_size;
		}
	}
	return pred;
}

static int lz78y_binary(const uint8_t *s, size_t n, struct est_result *r)
{
	uint64_t *all = est_zalloc(BIN_TABLES_BYTES);
	uint32_t dict_size = 0, hist = 0;
	struct tally t = { 0, 0, 0 };

	if (!all)
		return -ENOMEM;
	for (unsigned j = 1; j <= LZ_B; j++)
		hist |= (uint32_t)s[LZ_B - j] << (j - 1);
	for (unsigned j = 1; j <= LZ_B; j++) {
		*bin_at(all, hist, j) += BIN_ONE(s[LZ_B]);
		dict_size++;
	}
	for (size_t i = LZ_B + 1; i < n; i++) {
		const unsigned y = s[i];

		hist = ((hist << 1) | s[i - 1]) & 0xffffu;
		if (i + 1 < n)	/* as in mmc_binary() */
			bin_prefetch(all, ((hist << 2) | (uint32_t)s[i] << 1 | s[i + 1]) & 0xffffu);
		tally(&t, lz_bin_step(all, hist, y, &dict_size) == (int)y);
	}
	est_zfree(all, BIN_TABLES_BYTES);
	est_prediction_bound(t.c, n - LZ_B - 1, t.longest, 2, r);
	return 0;
}
