// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Synthetic raw streams of known min-entropy, for the fault catalogue's
 * on-line estimate rows (tests/test_estimate_credit.sh).  The same
 * generators as check_online_estimate.c, from a fixed-seed xorshift64*.
 *   helper_streams KIND BYTES [SEED]  > FILE;   helper_streams -h KIND
 * prints the stream's true min-entropy per byte (bits) with -h.
 * KIND: biased (IID bits, P(1) = 0.55), half (128 of the 256 values),
 * pairs (every byte twice), fourth (every fourth byte repeats the third),
 * markov (the previous byte again with probability 1/16, else uniform).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state;

static uint64_t next64(void)
{
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return state * 0x2545f4914f6cdd1dull;
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
};

static double true_h(const char *kind)
{
	if (strcmp(kind, "biased") == 0)
		return -8.0 * log2(0.55);
	if (strcmp(kind, "markov") == 0)
		return -log2(1.0 / 16 + 15.0 / 16 / 256);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kind, kinds[i].kind) == 0)
			return kinds[i].h;
	return -1.0;
}

int main(int argc, char **argv)
{
	uint8_t alphabet[128];
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
	for (unsigned long long pos = 0; pos < bytes; pos++) {
		unsigned v = 0;

		if (strcmp(kind, "biased") == 0) {
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
