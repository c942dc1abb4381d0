// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * helper_estimate_gen SET SEED N: writes N samples of the synthetic data set SET,
 * generated from SEED, to stdout; "helper_estimate_gen list" prints the sets, one
 * per line: name, bits per sample, true min-entropy per sample, what it is.
 * The same SET/SEED/N always gives the same bytes (splitmix64 and
 * xoshiro256**, written out here, no libc randomness), so
 * tests/test_assess.sh regenerates the data sets NIST's ea_non_iid was run
 * on (tests/data/estimate/) instead of storing them.
 *
 * The true min-entropy per sample is exact for the generator:
 *   uniform       8      every byte 1/256
 *   bits-biased   0.5146 bits, P(1) = 0.3: -log2(0.7)
 *   half-alphabet 7      128 of the 256 values (the even ones), uniform
 *   repeated      4      each random byte written twice: 8 bits per pair
 *   markov        0.3219 bits, a chain that keeps its bit with p 0.8:
 *                        -log2(0.8) per bit in the long run
 *   fourth-repeat 6      every fourth byte repeats the one before: 24
 *                        bits per 4 bytes
 *   byte-biased   4      byte 0 with p 1/16, the others share the rest
 *   nibbles       4      4-bit samples, uniform
 *   two-bit       1      2-bit samples, P = 1/2, 1/4, 1/8, 1/8
 *   lag-13        0.9944 bytes, s[i] = s[i-13] with p 1/2, else uniform:
 *                        the best guess (s[i-13]) is right with p
 *                        1/2 + 1/512, though every byte is uniform
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t st[4];

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t next(void)
{
	uint64_t r = rotl(st[1] * 5, 7) * 9, t = st[1] << 17;

	st[2] ^= st[0];
	st[3] ^= st[1];
	st[1] ^= st[2];
	st[0] ^= st[3];
	st[2] ^= t;
	st[3] = rotl(st[3], 45);
	return r;
}

/* Uniform in [0, 1) with 53 bits. */
static double unit(void)
{
	return (double)(next() >> 11) * 0x1.0p-53;
}

struct set {
	const char *name;
	unsigned bits;
	double h;
	const char *what;
};

static const struct set sets[] = {
	{ "uniform", 8, 8.0, "uniform bytes" },
	{ "bits-biased", 1, 0.0, "bits, P(1) = 0.3" },
	{ "half-alphabet", 8, 7.0, "the 128 even byte values, uniform" },
	{ "repeated", 8, 4.0, "each random byte twice" },
	{ "markov", 1, 0.0, "bits, a chain that keeps its bit with p 0.8" },
	{ "fourth-repeat", 8, 6.0, "every fourth byte repeats the one before" },
	{ "byte-biased", 8, 4.0, "byte 0 with p 1/16, the rest uniform" },
	{ "nibbles", 4, 4.0, "4-bit samples, uniform" },
	{ "two-bit", 2, 1.0, "2-bit samples, P = 1/2 1/4 1/8 1/8" },
	{ "lag-13", 8, 0.0, "s[i] = s[i-13] with p 1/2, else uniform" },
};
#define NSETS (sizeof(sets) / sizeof(sets[0]))

static double true_h(const struct set *s)
{
	if (!strcmp(s->name, "bits-biased"))
		return -log2(0.7);
	if (!strcmp(s->name, "markov"))
		return -log2(0.8);
	if (!strcmp(s->name, "lag-13"))
		return -log2(0.5 + 0.5 / 256);
	return s->h;
}

static uint8_t sample(const char *name, uint8_t *out, size_t i)
{
	if (!strcmp(name, "uniform"))
		return (uint8_t)next();
	if (!strcmp(name, "bits-biased"))
		return unit() < 0.3;
	if (!strcmp(name, "half-alphabet"))
		return (uint8_t)(next() & 0xfe);
	if (!strcmp(name, "repeated"))
		return i % 2 ? out[i - 1] : (uint8_t)next();
	if (!strcmp(name, "markov"))
		return i == 0 ? (uint8_t)(next() & 1) : (uint8_t)(out[i - 1] ^ (unit() >= 0.8));
	if (!strcmp(name, "fourth-repeat"))
		return i % 4 == 3 ? out[i - 1] : (uint8_t)next();
	if (!strcmp(name, "byte-biased")) {
		if (unit() < 1.0 / 16)
			return 0;
		return (uint8_t)(1 + next() % 255);
	}
	if (!strcmp(name, "nibbles"))
		return (uint8_t)(next() & 15);
	if (!strcmp(name, "two-bit")) {
		double u = unit();

		return u < 0.5 ? 0 : u < 0.75 ? 1 : u < 0.875 ? 2 : 3;
	}
	/* lag-13 */
	if (i >= 13 && (next() & 1))
		return out[i - 13];
	return (uint8_t)next();
}

int main(int argc, char **argv)
{
	const struct set *s = NULL;
	uint64_t seed, x;
	size_t n;
	uint8_t *out;

	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (size_t i = 0; i < NSETS; i++)
			printf("%s %u %.4f %s\n", sets[i].name, sets[i].bits,
			       true_h(&sets[i]), sets[i].what);
		return 0;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: helper_estimate_gen list | SET SEED N\n");
		return 2;
	}
	for (size_t i = 0; i < NSETS; i++)
		if (!strcmp(argv[1], sets[i].name))
			s = &sets[i];
	seed = strtoull(argv[2], NULL, 0);
	n = strtoull(argv[3], NULL, 0);
	if (!s || n == 0 || n > (1u << 30)) {
		fprintf(stderr, "helper_estimate_gen: unknown set or bad N\n");
		return 2;
	}
	x = seed;
	for (int i = 0; i < 4; i++)
		st[i] = splitmix(&x);
	out = malloc(n);
	if (!out)
		return 1;
	for (size_t i = 0; i < n; i++)
		out[i] = sample(s->name, out, i);
	if (fwrite(out, 1, n, stdout) != n)
		return 1;
	free(out);
	return 0;
}
