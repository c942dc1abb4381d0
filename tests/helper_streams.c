// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Synthetic raw streams of known min-entropy, for the fault catalogue's
 * on-line estimate rows (tests/test_estimate_credit.sh).  The same
 * generators as check_online_estimate.c, from a fixed-seed xorshift64*.
 *   helper_streams KIND BYTES [SEED]  > FILE;   helper_streams -h KIND
 * prints the stream's true min-entropy per byte (bits) with -h.
 * KIND: biased (IID bits, P(1) = 0.55), half (128 of the 256 values),
 * pairs (every byte twice), fourth (every fourth byte repeats the third),
 * markov (the previous byte again with probability 1/16, else uniform),
 * parity (7 uniform bits and their parity bit: 7 bits a byte),
 * jitter (timing-jitter-like low bytes: 100 plus the sum of 4 uniform
 * values 0..15, about normal around 130 with sd 9.2; its true min-entropy
 * per byte from the exact distribution, computed here: 4.58 bits).
 * Issue 25's dependence that only the predictors see: each byte is, with
 * probability p, a fixed function of earlier ones, else uniform, so its
 * true min-entropy given the past is -log2(p + (1 - p) / 256):
 * follow (p = 0.3: a fixed permutation of the previous byte, without a
 * fixed point), follow50 (p = 0.5: the next value in one fixed cycle
 * through all 256, so no lag sees it: issue 33's first-order stream, on
 * which the quick estimators say over 7 bits), fib (p = 0.5:
 * b[i-1] + b[i-2]), sums (p = 0.5: b[i-1] + b[i-3] + b[i-7]), period16
 * (p = 0.5: a fixed 16-byte pattern's byte at i mod 16), period1000
 * (p = 0.5: b[i-1000], beyond every predictor's reach); and prng (a seeded
 * xorshift64*: true min-entropy 0 given the seed, which no statistical
 * estimator can see).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_util.h"

static uint64_t state;

static uint64_t next64(void)
{
	return td_xorshift64(&state);
}

static unsigned byte(void)
{
	return (unsigned)(next64() >> 56);
}

static unsigned bit(unsigned num, unsigned den)
{
	return (unsigned)((next64() >> 11) % den) < num;
}

static const struct {
	const char *kind;
	double h; /* per byte */
} kinds[] = {
	{ "biased", 0 }, { "half", 7.0 }, { "pairs", 4.0 }, { "fourth", 6.0 }, { "markov", 0 },
	{ "prng", 0.0 }, { "parity", 7.0 }, { "jitter", 0 },
};

/* jitter: 100 + the sum of 4 uniform values 0..15.  Its most likely
 * value's probability, from the exact distribution of the sum (a
 * convolution). */
static double jitter_h(void)
{
	double dist[61] = { 0 }, next[61], best = 0;
	size_t len = 16;

	for (size_t i = 0; i < 16; i++)
		dist[i] = 1.0 / 16;
	for (int k = 1; k < 4; k++) {
		memset(next, 0, sizeof(next));
		for (size_t i = 0; i < len; i++)
			for (size_t j = 0; j < 16; j++)
				next[i + j] += dist[i] / 16;
		len += 15;
		memcpy(dist, next, sizeof(dist));
	}
	for (size_t i = 0; i < len; i++)
		best = dist[i] > best ? dist[i] : best;
	return best > 0 ? -log2(best) : 0.0; /* best > 0: the loops above fill dist */
}

/* The dependent kinds: their probability of the fixed function. */
static const struct {
	const char *kind;
	double p;
} dependent[] = {
	{ "follow", 0.3 }, { "follow50", 0.5 }, { "fib", 0.5 }, { "sums", 0.5 }, { "period16", 0.5 },
	{ "period1000", 0.5 },
};

static double dependent_p(const char *kind)
{
	for (size_t i = 0; i < sizeof(dependent) / sizeof(dependent[0]); i++)
		if (strcmp(kind, dependent[i].kind) == 0)
			return dependent[i].p;
	return -1.0;
}

/* The dependent byte at pos of kind, from the bytes before it (hist[j]:
 * the byte j + 1 back, 0 before the start) and the fixed tables. */
static unsigned dependent_byte(const char *kind, unsigned long long pos, const uint8_t *hist,
			       const uint8_t perm[256], const uint8_t cycle[256],
			       const uint8_t pattern[16])
{
	if (strcmp(kind, "follow") == 0)
		return perm[hist[0]];
	if (strcmp(kind, "follow50") == 0)
		return cycle[hist[0]];
	if (strcmp(kind, "fib") == 0)
		return (hist[0] + hist[1]) & 0xffu;
	if (strcmp(kind, "sums") == 0)
		return (hist[0] + hist[2] + hist[6]) & 0xffu;
	if (strcmp(kind, "period16") == 0)
		return pattern[pos % 16];
	return hist[999];	/* period1000 */
}

static double true_h(const char *kind)
{
	if (dependent_p(kind) >= 0)
		return -log2(dependent_p(kind) + (1.0 - dependent_p(kind)) / 256);
	if (strcmp(kind, "biased") == 0)
		return -8.0 * log2(0.55);
	if (strcmp(kind, "markov") == 0)
		return -log2(1.0 / 16 + 15.0 / 16 / 256);
	if (strcmp(kind, "jitter") == 0)
		return jitter_h();
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kind, kinds[i].kind) == 0)
			return kinds[i].h;
	return -1.0;
}

int main(int argc, char **argv)
{
	uint8_t alphabet[128], perm[256], cycle[256], pattern[16];
	static uint8_t hist[1000];	/* hist[j]: the byte j + 1 back */
	bool used[256] = { false };
	unsigned prev = 0, n = 0;
	unsigned long long bytes;
	const char *kind;

	if (argc == 3 && strcmp(argv[1], "-h") == 0) {
		if (true_h(argv[2]) < 0)
			return 2;
		printf("%.6f\n", true_h(argv[2]));
		return 0;
	}
	if (argc < 3 || argc > 4 || true_h(argv[1]) < 0) {
		fprintf(stderr, "usage: helper_streams KIND BYTES [SEED] | -h KIND\n");
		return 2;
	}
	kind = argv[1];
	bytes = strtoull(argv[2], NULL, 10);
	state = argc == 4 ? strtoull(argv[3], NULL, 0) : 0x9e3779b97f4a7c15ull;
	if (!state)
		state = 1;
	while (n < 128) {
		unsigned v = byte();

		if (!used[v]) {
			used[v] = true;
			alphabet[n++] = (uint8_t)v;
		}
	}
	/* A fixed permutation (Fisher-Yates) and pattern, from the seed. */
	td_shuffle256(perm, &state);
	/* No fixed point: "follow" never repeats a byte by itself (the health
	 * tests' RCT would see that, not only the predictors). */
	for (bool moved = true; moved;) {
		moved = false;
		for (unsigned i = 0; i < 256; i++) {
			if (perm[i] == i) {
				uint8_t t = perm[i];

				perm[i] = perm[(i + 1) & 255];
				perm[(i + 1) & 255] = t;
				moved = true;
			}
		}
	}
	for (unsigned i = 0; i < 16; i++)
		pattern[i] = (uint8_t)byte();
	/* One cycle through all 256 values: each maps to the next in a
	 * shuffled order (no short cycle for a lag predictor to find).
	 * From a copy of the state: the other kinds' bytes stay as they
	 * were. */
	{
		uint64_t copy = state;
		uint8_t order[256];

		td_shuffle256(order, &copy);
		for (unsigned i = 0; i < 256; i++)
			cycle[order[i]] = order[(i + 1) & 255];
	}
	for (unsigned long long pos = 0; pos < bytes; pos++) {
		unsigned v = 0;

		if (dependent_p(kind) >= 0) {
			const unsigned p100 = (unsigned)(dependent_p(kind) * 100 + 0.5);

			v = bit(p100, 100) ? dependent_byte(kind, pos, hist, perm, cycle, pattern) : byte();
			memmove(hist + 1, hist, sizeof(hist) - 1);
			hist[0] = (uint8_t)v;
		} else if (strcmp(kind, "prng") == 0) {
			v = byte();
		} else if (strcmp(kind, "jitter") == 0) {
			v = 100;
			for (int i = 0; i < 4; i++)
				v += byte() & 15u;
		} else if (strcmp(kind, "parity") == 0) {
			v = byte() & 0xfeu;
			v |= (unsigned)__builtin_parity(v);
		} else if (strcmp(kind, "biased") == 0) {
			for (int i = 0; i < 8; i++)
				v = v << 1 | bit(55, 100);
		} else if (strcmp(kind, "half") == 0) {
			v = alphabet[byte() & 127];
		} else if (strcmp(kind, "pairs") == 0) {
			v = pos % 2 ? prev : byte();
		} else if (strcmp(kind, "fourth") == 0) {
			v = pos % 4 == 3 ? prev : byte();
		} else {
			v = pos && bit(1, 16) ? prev : byte();
		}
		prev = v;
		if (putchar((int)v) == EOF)
			return 1;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
