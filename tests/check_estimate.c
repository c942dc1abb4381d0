// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the SP 800-90B §6.3 estimators (estimate.h): answers
 * worked out by hand (MCV proportions, Markov chains whose most likely
 * 128-bit sequence is known, a lag predictor on a periodic stream), the
 * prediction bound against figures NIST's ea_non_iid printed, the suffix
 * array's t-tuple and LRS counts against brute force, the lag predictor's
 * bit-sliced scoreboard against a plain one written from 90B's steps, the
 * bitstring forms against the literal ones on expanded bits, the restart
 * sanity check, and bad arguments.  The whole assessment against NIST's
 * own numbers is tests/test_assess.sh.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_tuple.h"
#include "test_doubles.h"

/* xorshift64*: fixed-seed test data. */
static uint64_t rng_state;
static uint64_t rnd(void)
{
	return td_xorshift64(&rng_state);
}

static double bound(double p, double n)
{
	double u = p + 2.5758293035489008 * sqrt(p * (1 - p) / (n - 1));

	return u > 1 ? 1 : u;
}

START_TEST(test_mcv_by_hand)
{
	uint8_t s[1000];
	struct est_result r;

	/* 300 sevens, the other 700 spread over 0..6 (100 each). */
	for (int i = 0; i < 1000; i++)
		s[i] = i % 10 < 3 ? 7 : (uint8_t)(i % 7);
	ck_assert_int_eq(est_mcv(s, 1000, 8, &r), 0);
	ck_assert_uint_eq(r.count, 300);
	ck_assert_double_eq_tol(r.p_hat, 0.3, 1e-15);
	ck_assert_double_eq_tol(r.p_u, bound(0.3, 1000), 1e-15);
	ck_assert_double_eq_tol(r.h, -log2(bound(0.3, 1000)), 1e-12);
	/* A symbol outside the alphabet is refused, not counted. */
	ck_assert_int_eq(est_mcv(s, 1000, 7, &r), -EINVAL);
}
END_TEST

START_TEST(test_mcv_bits_matches_literal_on_expanded)
{
	enum { N = 5000 };
	static uint8_t s[N], b[N * 8];
	struct est_result a, c;

	rng_state = 11;
	for (int i = 0; i < N; i++)
		s[i] = (uint8_t)(rnd() & (rnd() >> 8));	/* biased bits */
	est_bitstring(s, N, 8, b);
	ck_assert_int_eq(est_mcv_bits(s, N, 8, &a), 0);
	ck_assert_int_eq(est_mcv(b, N * 8, 2, &c), 0);
	ck_assert_uint_eq(a.count, c.count);
	ck_assert_double_eq(a.h, c.h);
	ck_assert_double_lt(a.h, 0.9);	/* 1 bit in 4 is set */
}
END_TEST

START_TEST(test_markov_known_chains)
{
	static uint8_t s[4096], packed[512];
	struct est_result r, r8;

	/* 0101...: the chain alternates surely, 0101... has probability
	 * P_0 = 1/2, so 128 bits carry 1 bit: 1/128 per bit. */
	for (int i = 0; i < 4096; i++)
		s[i] = i & 1;
	ck_assert_int_eq(est_markov(s, 4096, 1, &r), 0);
	ck_assert_double_eq_tol(r.h, 1.0 / 128, 1e-12);
	ck_assert_double_eq(r.p_mk[3], 1.0);	/* P_01 */
	/* 0011 repeated: every transition 1/2, every sequence 2^-128. */
	for (int i = 0; i < 4096; i++)
		s[i] = (i >> 1) & 1;
	ck_assert_int_eq(est_markov(s, 4096, 1, &r), 0);
	ck_assert_double_eq_tol(r.h, 1.0, 1e-3);
	/* The same bits packed 8 to a byte give the same answer. */
	for (int i = 0; i < 512; i++) {
		packed[i] = 0;
		for (int j = 0; j < 8; j++)
			packed[i] = (uint8_t)(packed[i] << 1 | s[i * 8 + j]);
	}
	ck_assert_int_eq(est_markov(packed, 512, 8, &r8), 0);
	ck_assert_double_eq(r.h, r8.h);
	/* Biased iid bits: P(1) = 1/4 gives 127 zeros after a zero as the
	 * likeliest sequence, near -log2(3/4) per bit. */
	rng_state = 5;
	{
		static uint8_t t[200000];

		for (int i = 0; i < 200000; i++)
			t[i] = (rnd() & 3) == 0;
		ck_assert_int_eq(est_markov(t, 200000, 1, &r), 0);
		ck_assert_double_eq_tol(r.h, -log2(0.75), 0.01);
	}
}
END_TEST

START_TEST(test_lag_periodic)
{
	enum { N = 10000 };
	static uint8_t s[N];
	struct est_result r;

	/* Period 3: lag 1 misses s[1], s[2], s[3]; lag 3 leads from then on
	 * and predicts every sample. */
	for (int i = 0; i < N; i++)
		s[i] = (uint8_t)(i % 3);
	ck_assert_int_eq(est_lag(s, N, 3, &r), 0);
	ck_assert_uint_eq(r.n, N - 1);
	ck_assert_uint_eq(r.count, N - 4);
	ck_assert_uint_eq(r.run, N - 4 + 1);
	ck_assert_double_lt(r.h, 0.01);
}
END_TEST

/* 90B §6.3.8 step by step: D = 128 lags, scoreboard, ">=" ties.  est_lag()
 * steps 64 samples a block: every input length from 3 to 139 too. */
static void lag_reference(const uint8_t *s, size_t n, uint64_t *c, uint64_t *longest)
{
	uint64_t score[128] = { 0 }, run = 0;
	unsigned winner = 0;

	*c = *longest = 0;
	for (size_t i = 1; i < n; i++) {
		if (s[i] == s[i - winner - 1]) {
			(*c)++;
			if (++run > *longest)
				*longest = run;
		} else {
			run = 0;
		}
		for (unsigned d = 0; d < 128 && d < i; d++) {
			if (s[i - d - 1] == s[i] && ++score[d] >= score[winner])
				winner = d;
		}
	}
}

START_TEST(test_lag_matches_reference)
{
	enum { N = 40000 };
	static uint8_t s[N];
	const unsigned ks[] = { 2, 2, 3, 16, 256 };
	unsigned k = ks[_i];
	struct est_result r;
	uint64_t c, longest;

	rng_state = 100 + (uint64_t)_i;
	for (int i = 0; i < N; i++) {
		/* Random, with stretches that repeat at lag 7 or 100 so the
		 * winner moves. */
		if (i > 200 && (i / 1000) % 3 == 1)
			s[i] = s[i - 7];
		else if (i > 200 && (i / 1000) % 3 == 2 && _i % 2)
			s[i] = s[i - 100];
		else
			s[i] = (uint8_t)(rnd() % k);
	}
	ck_assert_int_eq(est_lag(s, N, k, &r), 0);
	lag_reference(s, N, &c, &longest);
	ck_assert_uint_eq(r.count, c);
	ck_assert_uint_eq(r.run, longest + 1);
	/* shorter inputs: a last block of every kind, and inputs that end
	 * before the lags are all in play */
	for (size_t n = 3; n <= 400; n += n < 140 ? 1 : 37) {
		ck_assert_int_eq(est_lag(s + 5000, n, k, &r), 0);
		lag_reference(s + 5000, n, &c, &longest);
		ck_assert_uint_eq(r.count, c);
		ck_assert_uint_eq(r.run, longest + 1);
	}
}
END_TEST

/* MultiMCW as 90B §6.3.7 writes it: each window's most common value counted
 * afresh at every step (ties: the most recent), the scoreboard (>= takes
 * over), the correct predictions and their longest run. */
static void mcw_reference(const uint8_t *s, size_t n, uint64_t *correct, uint64_t *longest)
{
	static const size_t w[4] = { 63, 255, 1023, 4095 };
	uint64_t score[4] = { 0 }, run = 0;
	unsigned winner = 0;

	*correct = *longest = 0;
	for (size_t i = w[0]; i < n; i++) {
		int freq[4] = { -1, -1, -1, -1 };

		for (unsigned j = 0; j < 4; j++) {
			size_t cnt[256] = { 0 }, last[256] = { 0 };

			if (i < w[j])
				continue;
			for (size_t p = i - w[j]; p < i; p++) {
				cnt[s[p]]++;
				last[s[p]] = p;
			}
			for (unsigned v = 0; v < 256; v++)
				if (cnt[v] && (freq[j] < 0 || cnt[v] > cnt[freq[j]] ||
					       (cnt[v] == cnt[freq[j]] && last[v] > last[freq[j]])))
					freq[j] = (int)v;
		}
		if (freq[winner] == s[i]) {
			++*correct;
			if (++run > *longest)
				*longest = run;
		} else {
			run = 0;
		}
		for (unsigned j = 0; j < 4; j++)
			if (freq[j] == s[i] && ++score[j] >= score[winner])
				winner = j;
	}
}

/* MultiMCW against the reference, where the most common value changes
 * often and where one dominates (the steps where it leaves a window are
 * the ones est_multi_mcw() shortcuts): small alphabets with ties, one
 * value at 1/3 among 200, a few values at random. */
START_TEST(test_mcw_matches_reference)
{
	enum { N = 9000 };
	static uint8_t s[N];
	const unsigned ks[] = { 3, 200, 6, 256 };
	const unsigned k = ks[_i];
	struct est_result r;
	uint64_t c, longest;

	rng_state = 300 + (uint64_t)_i;
	for (int i = 0; i < N; i++) {
		if (_i == 1)
			s[i] = rnd() % 3 == 0 ? 42 : (uint8_t)(rnd() % k);
		else if (_i == 3)
			s[i] = rnd() % 4 == 0 ? 7 : rnd() % 2 ? 9 : (uint8_t)rnd();
		else
			s[i] = (uint8_t)(rnd() % k);
	}
	ck_assert_int_eq(est_multi_mcw(s, N, k, &r), 0);
	mcw_reference(s, N, &c, &longest);
	ck_assert_uint_eq(r.count, c);
	ck_assert_uint_eq(r.run, longest + 1);
}
END_TEST

START_TEST(test_prediction_bound_nist_figures)
{
	struct est_result r;

	/* ea_non_iid -v on 1,000,000 random bytes printed these. */
	est_prediction_bound(3935, 999999, 2, 256, &r);
	ck_assert_double_eq_tol(r.p_global_prime, 0.0040962666393325785, 1e-17);
	ck_assert_double_eq(r.p_local, -1.0);
	ck_assert_double_eq_tol(r.h, 7.931475, 5e-7);
	est_prediction_bound(3999480, 7999999, 21, 2, &r);
	ck_assert_double_eq_tol(r.p_global_prime, 0.50039040913689048, 1e-15);
	ck_assert_double_eq_tol(r.h, 0.998874, 5e-7);
	/* No correct prediction at all: P_global' = 1 - 0.01^(1/N). */
	est_prediction_bound(0, 1000, 0, 2, &r);
	ck_assert_double_eq_tol(r.p_global_prime, 1 - pow(0.01, 1.0 / 1000), 1e-15);
	ck_assert_double_eq(r.h, 1.0);	/* 1/k floor */
	/* A run of 60 corrects in 1000 at P_global 1/2 needs P_local. */
	est_prediction_bound(500, 1000, 59, 2, &r);
	ck_assert_double_gt(r.p_local, 0.8);
	ck_assert_double_eq(r.p_u, r.p_local);
}
END_TEST

/* Brute-force Q[t] (most common t-tuple count) and S[t] (sum of C(c,2)). */
static void tuples_reference(const uint8_t *s, size_t n, unsigned t,
			     uint64_t *q, uint64_t *sum)
{
	*q = 0;
	*sum = 0;
	for (size_t i = 0; i + t <= n; i++) {
		uint64_t c = 0, first = 1;

		for (size_t j = 0; j + t <= n; j++) {
			if (memcmp(s + i, s + j, t) == 0) {
				c++;
				if (j < i)
					first = 0;
			}
		}
		if (c > *q)
			*q = c;
		if (first)
			*sum += c * (c - 1) / 2;
	}
}

START_TEST(test_tuple_lrs_against_brute_force)
{
	enum { N = 1500 };
	static uint8_t s[N];
	const unsigned k = _i ? 3 : 2;
	struct est_result tu, lr;
	double pmax = 0;
	unsigned t, u, v = 0;

	rng_state = 7 + (uint64_t)_i;
	for (int i = 0; i < N; i++)
		s[i] = (i > 1000 && i < 1030) ? s[i - 700] : (uint8_t)(rnd() % k);
	ck_assert_int_eq(est_tuple_lrs(s, N, k, &tu, &lr), 0);
	/* t: the largest length whose most common tuple occurs 35 times. */
	for (t = 1;; t++) {
		uint64_t q, sum;

		tuples_reference(s, N, t, &q, &sum);
		if (q < 35)
			break;
		pmax = fmax(pmax, pow((double)q / (N - t + 1), 1.0 / t));
	}
	u = t;
	ck_assert_uint_eq(tu.t, u - 1);
	ck_assert_double_eq_tol(tu.p_hat, pmax, 1e-12);
	/* v: the longest repeated substring (>= 29 by construction). */
	for (t = u;; t++) {
		uint64_t q, sum;

		tuples_reference(s, N, t, &q, &sum);
		if (q < 2)
			break;
		v = t;
	}
	ck_assert_uint_ge(v, 29);
	ck_assert_uint_eq(lr.u, u);
	ck_assert_uint_eq(lr.v, v);
	pmax = 0;
	for (t = u; t <= v; t++) {
		uint64_t q, sum;

		tuples_reference(s, N, t, &q, &sum);
		pmax = fmax(pmax, pow((double)sum / ((N - t + 1.0) * (N - t) / 2), 1.0 / t));
	}
	ck_assert_double_eq_tol(lr.p_hat, pmax, 1e-12);
}
END_TEST

/* Binary input takes the 64-bit-window sort; it must give what the suffix
 * array gives, on random bits, on bits with long repeats (v >= 64), on
 * biased ones, on a 100-bit block repeated ten times (runs of ten positions
 * that share 64 bits, ordered past them) and on runs of 100 equal bits
 * (37 positions that share 64 bits) and one of 400 (the fallback), and on
 * 200 runs of 48 zeros (600 positions whose words tie: more than an
 * insertion sort takes, merged), and with its last 45 bits a copy of 45
 * inside (n - 45 is the first position left out of the sort: the longest
 * repeat is its, counted with its bucket's slab); and on first-order Markov
 * bits, whose runs bound u from below (groups of fewer than 35 searched
 * only for pairs that reach the bound): P(stay) = 0.85 (u > 46, the words'
 * depth: pairs found by their windows), 0.8 (u < 46) and both with a
 * block of 300 bits copied (pairs that reach u in small groups, some tied
 * past their windows); on biased bits with 30 copies of 33 bits; and with
 * 35 runs of 45 zeros, whose bound on u is the words' depth. */
START_TEST(test_tuple_bits_sort_matches_suffix_array)
{
	enum { N = 200000 };
	static uint8_t s[N];
	struct est_result t1, l1, t2, l2;

	rng_state = 21 + (uint64_t)_i;
	for (int i = 0; i < N; i++) {
		if (_i == 0)
			s[i] = rnd() & 1;
		else if (_i == 1)
			s[i] = i > 1000 && i < 1200 ? s[i - 900] : rnd() & 1;
		else if (_i == 2)
			s[i] = (rnd() & 7) == 0;
		else if (_i == 3)
			s[i] = i >= 20000 && i % 20000 < 100 ? s[i % 20000 + 100] : rnd() & 1;
		else if (_i == 6)
			s[i] = i % 1000 < 48 ? 0 : rnd() & 1;
		else if (_i == 7)	/* v: the first short window's repeat */
			s[i] = i >= N - 45 ? s[i - N + 100045] : rnd() & 1;
		else if (_i == 13)	/* 35 runs of 45 zeros: u's bound 46, the depth */
			s[i] = i >= 5000 && i < 180000 && i % 5000 <= 46 ? i % 5000 == 0 || i % 5000 == 46
			       : rnd() & 1;
		else if (_i == 12)	/* 1 at 1/4, 30 copies of 33 bits */
			s[i] = i % 5000 < 33 && i >= 5000 && i <= 150000 ? s[i % 5000 + 160000] : (rnd() & 3) == 0;
		else if (_i >= 8)	/* Markov: 8, 10 P(stay) 0.85; 9, 11 0.8 */
			s[i] = _i >= 10 && i >= 120000 && i < 120300 ? s[i - 70000]
			       : !i ? rnd() & 1
			       : s[i - 1] ^ (rnd() % 100 < (_i & 1 ? 20u : 15u));
		else
			s[i] = (i >= 50000 && i < 50100) || (_i == 5 && i > 150000 && i < 150400) ? 1 : rnd() & 1;
	}
	ck_assert_int_eq(est_tuple_lrs(s, N, 2, &t1, &l1), 0);
	ck_assert_int_eq(est_tuple_lrs_sa(s, N, &t2, &l2), 0);
	ck_assert_int_eq(memcmp(&t1, &t2, sizeof(t1)), 0);
	ck_assert_int_eq(memcmp(&l1, &l2, sizeof(l1)), 0);
	if (_i == 1)
		ck_assert_uint_ge(l1.v, 199);
	if (_i >= 8 && _i <= 11)	/* the bound's two ways, past the words' depth or not */
		ck_assert(_i & 1 ? l1.u < 46 : l1.u > 46);
	if (_i == 10 || _i == 11)
		ck_assert_uint_ge(l1.v, 299);
	if (_i == 13)	/* a run and the ones around it, 47 bits, 35 times */
		ck_assert_uint_eq(l1.u, 48);
	/* The words in slabs of a few buckets (8M bits take four): the
	 * same outcome as in one, the same answer where the words do not
	 * fall back (-EAGAIN: the same groups tie, whatever the slabs). */
	const int whole = est_tuple_lrs_bits(s, N, &t1, &l1);

	for (size_t slab = 1000; slab <= 25000; slab *= 5) {
		ck_assert_int_eq(est_tuple_lrs_bits_slabs(s, N, slab, &t1, &l1), whole);
		if (whole == -EAGAIN)
			continue;
		ck_assert_int_eq(memcmp(&t1, &t2, sizeof(t1)), 0);
		ck_assert_int_eq(memcmp(&l1, &l2, sizeof(l1)), 0);
	}
	ck_assert(whole == 0 || _i == 5);
	if (_i == 7)
		ck_assert_uint_eq(l2.v, 45);
	/* The lower bound on u from the runs (small groups searched only for
	 * pairs that reach it) leaves what the estimates take as it was with
	 * every pair counted: Q[t] below u, S[t] from u to v. */
	if (whole == 0) {
		enum { L = 512 };
		static uint32_t q0[L], q1[L];
		static uint64_t s0[L], s1[L];

		ck_assert_int_eq(est_tuple_lrs_bits_tallies(s, N, 0, 1, q0, s0, L, &t1, &l1), 0);
		ck_assert_int_eq(est_tuple_lrs_bits_tallies(s, N, 0, 0, q1, s1, L, &t1, &l1), 0);
		ck_assert_uint_lt(l1.v, L);
		for (size_t t = 1; t < l1.u; t++)
			ck_assert_uint_eq(q0[t], q1[t]);
		for (size_t t = l1.u; t <= l1.v; t++)
			ck_assert_uint_eq(s0[t], s1[t]);
	}
}
END_TEST

/* Q[t] and S[t] of the bits for every t < 64, from their 64-bit windows
 * (zeros past the end) sorted once: a t-tuple is a run of equal top t bits
 * among the positions i with n - i >= t. */
struct pos_window { uint64_t w; size_t i; };

static int cmp_window(const void *a, const void *b)
{
	const uint64_t x = ((const struct pos_window *)a)->w, y = ((const struct pos_window *)b)->w;

	return x < y ? -1 : x > y;
}

static void bit_tuples_reference(const uint8_t *s, size_t n, uint32_t *q, uint64_t *sum)
{
	struct pos_window *pw = malloc(n * sizeof(*pw));

	ck_assert_ptr_nonnull(pw);
	for (size_t i = 0; i < n; i++) {
		pw[i] = (struct pos_window){ 0, i };
		for (size_t j = 0; j < 64; j++)
			pw[i].w |= (uint64_t)(i + j < n ? s[i + j] : 0) << (63 - j);
	}
	qsort(pw, n, sizeof(*pw), cmp_window);
	for (unsigned t = 1; t < 64; t++) {
		uint64_t key = 0, c = 0;

		q[t] = 0;
		sum[t] = 0;
		for (size_t r = 0; r <= n; r++) {
			if (r < n && n - pw[r].i < t)
				continue;	/* not a t-tuple */
			if (r == n || (c && pw[r].w >> (64 - t) != key)) {
				sum[t] += c * (c - 1) / 2;
				q[t] = c > q[t] ? (uint32_t)c : q[t];
				c = 0;
			}
			if (r < n) {
				key = pw[r].w >> (64 - t);
				c++;
			}
		}
	}
	free(pw);
}

/* The binary grouping's tallies against the windows sorted whole, where
 * the positions left out of the sort (the last 45, whose windows run past
 * the end) fall in groups that the passes split further: random bits whose
 * last 45 are a copy of 45 found 40 times more inside (their groups hold
 * 41 words down to the words' depth); first-order Markov bits (P(stay) =
 * 0.8) that end in a run of 40 ones, in the bucket of eleven ones.  Every
 * pair counted (exact) and as the estimate counts them (S from u on). */
START_TEST(test_tuple_bits_tallies_against_reference)
{
	enum { N = 200000, L = 512 };
	static uint8_t s[N];
	static uint32_t q[L], qr[64];
	static uint64_t sum[L], sr[64];
	struct est_result t1, l1;

	rng_state = 41 + (uint64_t)_i;
	for (size_t i = 0; i < N; i++) {
		if (_i == 0)
			s[i] = i >= N - 45 ? s[1000 + i - (N - 45)]
			       : i >= 4000 && i < 164000 && i % 4000 >= 1000 && i % 4000 < 1045
			       ? s[i % 4000] : rnd() & 1;
		else
			s[i] = i >= N - 40 ? 1 : !i ? rnd() & 1 : s[i - 1] ^ (rnd() % 100 < 20);
	}
	bit_tuples_reference(s, N, qr, sr);
	for (int exact = 1; exact >= 0; exact--) {
		memset(q, 0, sizeof(q));
		memset(sum, 0, sizeof(sum));
		ck_assert_int_eq(est_tuple_lrs_bits_tallies(s, N, 0, exact, q, sum, L, &t1, &l1), 0);
		ck_assert_uint_lt(l1.v, 64);
		for (unsigned t = 1; t < l1.u; t++)
			ck_assert(q[t] == qr[t] || (qr[t] < TUPLE_MIN_COUNT && q[t] < TUPLE_MIN_COUNT));
		for (unsigned t = exact ? 1 : (unsigned)l1.u; t <= l1.v; t++)
			ck_assert_uint_eq(sum[t], sr[t]);
		ck_assert_uint_eq(sr[l1.v + 1], 0);
		ck_assert_uint_ne(sr[l1.v], 0);
	}
	if (_i == 0)	/* 41 words and the short position, at the words' depth */
		ck_assert_uint_eq(qr[45], 42);
}
END_TEST

/* The bits the samples use: each bit alone, in every place of every length
 * up to 23 (the words of eight and the tail after them). */
START_TEST(test_or_samples)
{
	uint8_t s[24];

	for (size_t n = 1; n < sizeof(s); n++)
		for (size_t i = 0; i < n; i++)
			for (unsigned b = 0; b < 8; b++) {
				memset(s, 0, sizeof(s));
				s[i] = (uint8_t)(1u << b);
				s[n] = 0xff;	/* past the end: not read */
				ck_assert_uint_eq(est_or_samples(s, n), 1u << b);
			}
	ck_assert_uint_eq(est_or_samples(s, 0), 0);
}
END_TEST

/* 1,000,000 bits: enough for the spot-check of repetitive bits, whose
 * 8,192 windows must all end inside the packed bits (its stride rounded
 * up read past them: caught by make sanitize and make valgrind here), and
 * the answer the suffix array's. */
START_TEST(test_tuple_bits_spot_check_in_bounds)
{
	enum { N = 1000000 };
	static uint8_t s[N];
	struct est_result t1, l1, t2, l2;

	rng_state = 31;
	for (int i = 0; i < N; i++)
		s[i] = (rnd() & 3) == 0;
	ck_assert_int_eq(est_tuple_lrs(s, N, 2, &t1, &l1), 0);
	ck_assert_int_eq(est_tuple_lrs_sa(s, N, &t2, &l2), 0);
	ck_assert_int_eq(memcmp(&t1, &t2, sizeof(t1)), 0);
	ck_assert_int_eq(memcmp(&l1, &l2, sizeof(l1)), 0);
}
END_TEST

/* Bits whose words tie too much are merged from their bytes' suffix array
 * (est_tuple_lrs_bits_merge()); it must give what the bits' own suffix
 * array gives: on random bytes (the classes of bit offsets interleave at
 * every suffix), on bytes like clock deltas (a walk over a few values,
 * with copied blocks: classes come out in long runs), on bytes of 0x00 and
 * 0xff only (classes tie on long runs of equal bits), on data whose end
 * repeats an earlier part (a suffix that is a prefix of another), on a
 * repeat of 13,000 bytes (LCPs past 16 bits), on the shortest input (128
 * bits), on 17 bytes, on a 1,000-byte block over and over (neighbours
 * share up to 24,000 bytes, all within a class), and on a repeat of
 * 65,534 bits, whose classes' LCPs reach 65,541 (16-bit class LCPs only
 * below: the merge's own check).  Where suffixes of different classes
 * share that much (160,000 zero bits), comparing them costs too much:
 * -EAGAIN, not a slow answer, and est_tuple_lrs() then gives the suffix
 * array's.  The bytes' own t-tuple and LRS, as ranks, made beside the
 * bits' from the suffix array they are merged from
 * (est_tuple_lrs_with_bits(), what --assess does with 8-bit samples), are
 * est_tuple_lrs()'s of those ranks, and the bits' the same as above. */
START_TEST(test_tuple_bits_merge_matches_suffix_array)
{
	enum { BYTES = 25000 };
	static uint8_t b[BYTES], s[8 * BYTES], ranks[BYTES];
	size_t m = BYTES;
	struct est_result t1, l1, t2, l2, t3, l3;
	unsigned k;
	int rc, brc;

	rng_state = 41 + (uint64_t)_i;
	for (size_t i = 0; i < BYTES; i++) {
		switch (_i) {
		case 0:
			b[i] = (uint8_t)rnd();
			break;
		case 1:	/* a walk over about 20 values, blocks copied */
			b[i] = i > 0 ? (uint8_t)(b[i - 1] + (rnd() % 5) - 2) : 100;
			if (b[i] < 90 || b[i] > 110)
				b[i] = 100;
			if (i >= 5000 && i % 5000 < 300)
				b[i] = b[i - 4000];
			break;
		case 2:
			b[i] = rnd() % 5 ? 0x00 : 0xff;
			break;
		case 3:	/* the last 60 bytes are bytes 1000..1059 */
			b[i] = i >= 24940 && i < 25000 ? b[i - 23940] : (uint8_t)(rnd() % 3);
			break;
		case 4:	/* bytes 11,000..23,999 repeat 0..12,999 */
			b[i] = i >= 11000 && i < 24000 ? b[i - 11000] : (uint8_t)(rnd() % 7);
			break;
		case 5:
			m = 16;
			b[i] = (uint8_t)rnd();
			break;
		case 6:
			m = 17;
			b[i] = (uint8_t)(rnd() & 0x81);
			break;
		case 7:	/* a block of 1,000 bytes, repeated */
			b[i] = i < 1000 ? (uint8_t)rnd() : b[i - 1000];
			break;
		case 9:	/* bytes 12,001.. repeat 1.. for 65,534 bits, after
			 * a byte that differs from byte 0 in its top bit */
			b[i] = (uint8_t)rnd();
			if (i == 12000)
				b[i] = b[0] ^ 0x80;
			else if (i > 12000 && i <= 12000 + 8191)
				b[i] = b[i - 12000];
			else if (i == 12000 + 8192)
				b[i] = b[8192] ^ 0x02;
			break;
		default:	/* 20,000 zero bytes, then random ones */
			b[i] = i < 20000 ? 0 : (uint8_t)rnd();
			break;
		}
	}
	for (size_t i = 0; i < 8 * m; i++)
		s[i] = b[i / 8] >> (7 - i % 8) & 1;
	ck_assert_int_eq(est_tuple_lrs_sa(s, 8 * m, &t2, &l2), 0);
	rc = est_tuple_lrs_bits_merge(s, 8 * m, &t1, &l1);
	if (_i == 8) {
		ck_assert_int_eq(rc, -EAGAIN);
		ck_assert_int_eq(est_tuple_lrs(s, 8 * m, 2, &t1, &l1), 0);
	} else {
		ck_assert_int_eq(rc, 0);
	}
	ck_assert_int_eq(memcmp(&t1, &t2, sizeof(t1)), 0);
	ck_assert_int_eq(memcmp(&l1, &l2, sizeof(l1)), 0);
	if (_i == 4)
		ck_assert_uint_ge(l1.v, 8 * 13000);
	if (_i == 9)
		ck_assert_uint_eq(l1.v, 65534 + 7);

	k = est_translate(b, m, 8, ranks);
	rc = est_tuple_lrs(ranks, m, k, &t2, &l2);
	ck_assert_int_eq(est_tuple_lrs_with_bits(ranks, m, k, s, &t3, &l3, &t1, &l1, &brc), rc);
	ck_assert_int_eq(brc, 0);
	ck_assert_int_eq(memcmp(&t3, &t2, sizeof(t3)), 0);
	ck_assert_int_eq(memcmp(&l3, &l2, sizeof(l3)), 0);
	ck_assert_int_eq(est_tuple_lrs_sa(s, 8 * m, &t2, &l2), 0);
	ck_assert_int_eq(memcmp(&t1, &t2, sizeof(t1)), 0);
	ck_assert_int_eq(memcmp(&l1, &l2, sizeof(l1)), 0);
}
END_TEST

START_TEST(test_predictors_on_patterns)
{
	enum { N = 20000 };
	static uint8_t s[N];
	struct est_result r;

	/* A sequence that repeats every 10 samples: every context predictor
	 * learns it, MCW (most common in a window) cannot. */
	rng_state = 3;
	for (int i = 0; i < N; i++)
		s[i] = i < 10 ? (uint8_t)(rnd() % 200) : s[i - 10];
	ck_assert_int_eq(est_multi_mmc(s, N, 256, &r), 0);
	ck_assert_double_lt(r.h, 0.01);
	ck_assert_int_eq(est_lz78y(s, N, 256, &r), 0);
	ck_assert_double_lt(r.h, 0.01);
	ck_assert_int_eq(est_lag(s, N, 256, &r), 0);
	ck_assert_double_lt(r.h, 0.01);
	ck_assert_int_eq(est_multi_mcw(s, N, 256, &r), 0);
	ck_assert_double_gt(r.h, 2.5);
	/* Uniform bytes: near 8 bits for every predictor. */
	for (int i = 0; i < N; i++)
		s[i] = (uint8_t)rnd();
	ck_assert_int_eq(est_multi_mmc(s, N, 256, &r), 0);
	ck_assert_double_gt(r.h, 6.5);
	ck_assert_int_eq(est_lz78y(s, N, 256, &r), 0);
	ck_assert_double_gt(r.h, 6.5);
	/* Too short for each. */
	ck_assert_int_eq(est_multi_mcw(s, 4095, 256, &r), -ENODATA);
	ck_assert_int_eq(est_lz78y(s, 17, 256, &r), -ENODATA);
	ck_assert_int_eq(est_compression(s, 1000, 6, &r), -ENODATA);
}
END_TEST

/* @est gives the same counts over the first @n binary samples of @s
 * whether it uses the binary dictionaries (flat arrays: k = 2) or the
 * hashed ones (k = 3, a third letter never used). */
#define ASSERT_BINARY_AGREES(est, s, n)                                      \
	do {                                                                 \
		struct est_result a_, b_;                                    \
		ck_assert_int_eq(est((s), (n), 2, &a_), 0);                  \
		ck_assert_int_eq(est((s), (n), 3, &b_), 0);                  \
		ck_assert_uint_eq(a_.count, b_.count);                       \
		ck_assert_uint_eq(a_.run, b_.run);                           \
	} while (0)

START_TEST(test_binary_and_wide_dictionaries_agree)
{
	/* The binary dictionaries (flat arrays) and the hashed ones must give
	 * the same counts: the same bits as symbols of a 3-letter alphabet
	 * that never uses the third letter. */
	enum { N = 30000 };
	static uint8_t s[N];

	rng_state = 9;
	for (int i = 0; i < N; i++)
		s[i] = i > 40 && (rnd() & 3) ? s[i - 37] : (uint8_t)(rnd() & 1);
	ASSERT_BINARY_AGREES(est_multi_mmc, s, N);
	ASSERT_BINARY_AGREES(est_lz78y, s, N);
	/* Long enough for LZ78Y's dictionary to fill (the binary pass shares
	 * MultiMMC's counts and reads LZ78Y's from the shortest context up,
	 * except where a context repeats the filling step's): random bits,
	 * biased ones, and a noisy period of 37. */
	for (int kind = 0; kind < 3; kind++) {
		enum { M = 200000 };
		static uint8_t l[M];

		for (int i = 0; i < M; i++)
			l[i] = kind == 0 ? (uint8_t)(rnd() & 1) :
			       kind == 1 ? (uint8_t)(rnd() % 10 < 3) :
			       (uint8_t)(i > 40 && (rnd() & 7) ? l[i - 37] : rnd() & 1);
		ASSERT_BINARY_AGREES(est_multi_mmc, l, M);
		ASSERT_BINARY_AGREES(est_lz78y, l, M);
	}
	/* A dictionary that never fills (a period of 37 bits), where the
	 * contexts of the first 16 bits, which MultiMMC counted before LZ78Y
	 * started, come back only at 20,000 and 27,000: the binary pass looks
	 * up only such "pending" contexts among those MultiMMC knows. */
	for (int i = 0; i < N; i++)
		s[i] = i < 16 ? (uint8_t)(rnd() & 1) :
		       (i >= 20000 && i < 20040) || (i >= 27000 && i < 27020) ? s[i % 1000] :
		       i < 53 ? (uint8_t)(rnd() & 1) : s[i - 37];
	ASSERT_BINARY_AGREES(est_multi_mmc, s, N);
	ASSERT_BINARY_AGREES(est_lz78y, s, N);
	/* MultiMCW's binary form (64 steps at a time) against its general
	 * one, over whole and partial blocks, on a noisy period of 6 (the
	 * windows' scores tie now and then, and >= must hand over). */
	for (int i = 0; i < N; i++)
		s[i] = (uint8_t)(((i % 6) < 3) ^ (rnd() % 20 == 0));
	for (size_t n = 4096; n <= N; n += n < 4300 ? 37 : 6173)
		ASSERT_BINARY_AGREES(est_multi_mcw, s, n);
}
END_TEST

START_TEST(test_binary_settled_and_uniform_steps)
{
	/* Once each length-2 context has seen both followers, LZ78Y predicts
	 * as its length 1 does (the binary pass then stops keeping LZ78Y's
	 * counts), and where most of a run's steps find every length right or
	 * every length wrong MultiMMC's scoreboard is played at the run's end.
	 * Against the hashed dictionaries, bits from a first-order Markov
	 * chain (P(stay) = 1 - 1/p: every length predicts "the same again")
	 * after r random ones, a random stretch of b after each a of them
	 * (runs played at their end come and go; lengths tie at the highest
	 * score where they start again); then bits that settle only late (a
	 * period of 4 for the first 100,000) and bits that never do (00 is
	 * always followed by 1: the dictionary fills, and LZ78Y's counts are
	 * kept to the end).  Between them the first three kinds fail where
	 * the scoreboard's fast path was broken on purpose in ways the tests
	 * before this one passed: the longest length at the highest score
	 * taken as the shortest (after a step, or at a run's start), or the
	 * lead not handed to it; so do the settling test loosened and the
	 * settled prediction's ties turned. */
	static const struct { int r, a, b, p; } kinds[] = {
		{ 0, 1000, 1000, 20 }, { 0, 1000, 1000, 100 }, { 20000, 1000, 30, 100 },
		{ 0, 1 << 30, 0, 5 }, { 1 << 30, 1, 0, 2 },
	};
	enum { M = 200000 };
	static uint8_t l[M];

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]) + 2; k++) {
		rng_state = 23;
		for (int i = 0; i < M; i++) {
			if (k == sizeof(kinds) / sizeof(kinds[0])) {
				l[i] = i < M / 2 ? (uint8_t)((i >> 1) & 1) : (uint8_t)(rnd() & 1);
			} else if (k > sizeof(kinds) / sizeof(kinds[0])) {
				l[i] = i > 1 && !l[i - 1] && !l[i - 2] ? 1 : (uint8_t)(rnd() & 1);
			} else {
				const int noisy = i < kinds[k].r ||
						  (i - kinds[k].r) % (kinds[k].a + kinds[k].b) >= kinds[k].a;
				const int stay = rnd() % (uint64_t)kinds[k].p != 0;

				l[i] = noisy || !i ? (uint8_t)(rnd() & 1) : (uint8_t)(stay ? l[i - 1] : !l[i - 1]);
			}
		}
		ASSERT_BINARY_AGREES(est_multi_mmc, l, M);
		ASSERT_BINARY_AGREES(est_lz78y, l, M);
	}
}
END_TEST

START_TEST(test_binary_fast_paths_short_inputs)
{
	/* The binary lag, MultiMMC and LZ78Y work 64 steps at a time: every
	 * length from 3 to 300 (partial blocks, lags longer than the input so
	 * far, contexts not yet 16 long) against the lag reference and the
	 * hashed dictionaries. */
	static uint8_t s[300];
	struct est_result a;
	uint64_t c, longest;

	rng_state = 17;
	for (int i = 0; i < 300; i++)
		s[i] = i > 9 && (rnd() & 1) ? s[i - 1 - (int)(rnd() % 9)] : (uint8_t)(rnd() & 1);
	for (size_t n = 3; n <= 300; n++) {
		ck_assert_int_eq(est_lag(s, n, 2, &a), 0);
		lag_reference(s, n, &c, &longest);
		ck_assert_uint_eq(a.count, c);
		ck_assert_uint_eq(a.run, longest + 1);
		ASSERT_BINARY_AGREES(est_multi_mmc, s, n);
		if (n < 18)
			continue;
		ASSERT_BINARY_AGREES(est_lz78y, s, n);
	}
}
END_TEST

START_TEST(test_assess_rules)
{
	enum { N = 20000 };
	static uint8_t s[N];
	struct est_report rep;

	/* Two values, 0x00 and 0xff: binary, no bitstring pass, H <= 1. */
	rng_state = 4;
	for (int i = 0; i < N; i++)
		s[i] = (rnd() & 1) ? 0xff : 0;
	ck_assert_int_eq(est_assess(s, N, 8, &rep), 0);
	ck_assert_uint_eq(rep.k, 2);
	ck_assert_int_eq(rep.binary, 1);
	ck_assert_int_eq(rep.have_bit[EST_MCV], 0);
	ck_assert_int_eq(rep.have_lit[EST_COLLISION], 1);
	ck_assert_double_le(rep.h_assessed, 1.0);
	/* Bytes: the final is min(H_original, 8 H_bitstring). */
	for (int i = 0; i < N; i++)
		s[i] = (uint8_t)rnd();
	ck_assert_int_eq(est_assess(s, N, 8, &rep), 0);
	ck_assert_uint_eq(rep.k, 256);
	ck_assert_double_eq(rep.h_assessed, fmin(rep.h_original, 8 * rep.h_bitstring));
	/* Shared among threads, the same figures. */
	{
		static struct est_report mt;

		ck_assert_int_eq(est_assess_mt(s, N, 8, 3, &mt), 0);
		ck_assert_int_eq(memcmp(&mt, &rep, sizeof(rep)), 0);
	}
	/* Samples wider than declared, one symbol only. */
	ck_assert_int_eq(est_assess(s, N, 4, &rep), -EINVAL);
	memset(s, 5, N);
	ck_assert_int_eq(est_assess(s, N, 8, &rep), -EDOM);
	ck_assert_int_eq(est_assess(s, N, 9, &rep), -EINVAL);
	ck_assert_int_eq(est_assess(NULL, N, 8, &rep), -EINVAL);
}
END_TEST

START_TEST(test_restart_sanity)
{
	enum { R = 1000 };
	static uint8_t m[R * R];
	struct est_restart r;

	rng_state = 77;
	for (int i = 0; i < R * R; i++)
		m[i] = (uint8_t)rnd();
	ck_assert_int_eq(est_restart_sanity(m, R, R, 8, 7.5, &r), 0);
	ck_assert_int_eq(r.pass, 1);
	ck_assert_uint_lt(r.max_row, r.cutoff);
	/* Every restart begins with the same 50 samples: the columns show it. */
	for (int i = 0; i < R; i++)
		for (int j = 0; j < 50; j++)
			m[i * R + j] = (uint8_t)j;
	ck_assert_int_eq(est_restart_sanity(m, R, R, 8, 7.5, &r), 0);
	ck_assert_int_eq(r.pass, 0);
	ck_assert_uint_eq(r.max_col, R);
	ck_assert_int_eq(est_restart_sanity(m, R, R, 4, 3.0, &r), -EINVAL);
}
END_TEST

static Suite *estimate_suite(void)
{
	Suite *s = suite_create("estimate");
	TCase *tc = tcase_create("estimators");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_mcv_by_hand);
	tcase_add_test(tc, test_mcv_bits_matches_literal_on_expanded);
	tcase_add_test(tc, test_markov_known_chains);
	tcase_add_test(tc, test_lag_periodic);
	tcase_add_loop_test(tc, test_lag_matches_reference, 0, 5);
	tcase_add_loop_test(tc, test_mcw_matches_reference, 0, 4);
	tcase_add_test(tc, test_prediction_bound_nist_figures);
	tcase_add_loop_test(tc, test_tuple_lrs_against_brute_force, 0, 2);
	tcase_add_loop_test(tc, test_tuple_bits_sort_matches_suffix_array, 0, 14);
	tcase_add_loop_test(tc, test_tuple_bits_tallies_against_reference, 0, 2);
	tcase_add_test(tc, test_or_samples);
	tcase_add_test(tc, test_tuple_bits_spot_check_in_bounds);
	tcase_add_loop_test(tc, test_tuple_bits_merge_matches_suffix_array, 0, 10);
	tcase_add_test(tc, test_predictors_on_patterns);
	tcase_add_test(tc, test_binary_and_wide_dictionaries_agree);
	tcase_add_test(tc, test_binary_settled_and_uniform_steps);
	tcase_add_test(tc, test_binary_fast_paths_short_inputs);
	tcase_add_test(tc, test_assess_rules);
	tcase_add_test(tc, test_restart_sanity);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return td_run(estimate_suite()); }
