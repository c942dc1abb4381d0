// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * assess_data KIND N > FILE: N samples shaped like what people assess with
 * `rngfeed --assess`, for bench/assess.sh (one byte per sample).
 *   clock        the low byte of CLOCK_MONOTONIC deltas from a tight loop
 *                on this machine, measured now: a few dominant values and
 *                a long tail of rare ones (about 180-190 distinct), each
 *                delta leaning on the one before
 *   clock-work   the same clock around a jitterentropy-like workload (64
 *                scattered read-modify-writes in a 4 MiB table): cache
 *                and TLB misses spread the deltas over hundreds of ns, so
 *                the low byte takes all or nearly all 256 values, far from
 *                uniformly (a real 8-bit source with a wide alphabet)
 *   markov-bits  1-bit samples, a first-order chain that keeps its bit
 *                with probability 0.8
 *   quarter      bytes: 0 with probability 1/4, the other 255 values
 *                uniform
 * The last two come from a fixed-seed xorshift64*; the first two are real
 * measurements, different at every run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WORK_BYTES ((size_t)4 << 20)
#define WORK_STEPS 64

static uint64_t state = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return state * 0x2545f4914f6cdd1dull;
}

/* Uniform in [0, m), m <= 2^32: the high bits, no modulo bias that matters
 * at these sizes (m * 2^-32 at most). */
static unsigned below(unsigned m)
{
	return (unsigned)(((next() >> 32) * m) >> 32);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The timing kinds: work != NULL adds the workload between two readings. */
static int timing(size_t n, volatile uint8_t *work)
{
	uint64_t prev = now_ns();
	uint32_t x = 1;

	for (size_t i = 0; i < n; i++) {
		uint64_t t;

		if (work)
			for (unsigned j = 0; j < WORK_STEPS; j++) {
				x = x * 1103515245u + 12345u;
				work[(x >> 8) & (WORK_BYTES - 1)]++;
			}
		t = now_ns();
		if (putchar((int)((t - prev) & 0xff)) == EOF)
			return 1;
		prev = t;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *kind;
	size_t n;
	unsigned bit = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: assess_data clock|clock-work|markov-bits|quarter N\n");
		return 2;
	}
	kind = argv[1];
	n = strtoull(argv[2], NULL, 10);
	if (strcmp(kind, "clock") == 0)
		return timing(n, NULL) || fflush(stdout) != 0;
	if (strcmp(kind, "clock-work") == 0) {
		volatile uint8_t *work = calloc(1, WORK_BYTES);
		int rc;

		if (!work) {
			fprintf(stderr, "assess_data: out of memory\n");
			return 1;
		}
		rc = timing(n, work) || fflush(stdout) != 0;
		free((void *)work);
		return rc;
	}
	if (strcmp(kind, "markov-bits") != 0 && strcmp(kind, "quarter") != 0) {
		fprintf(stderr, "assess_data: unknown kind %s\n", kind);
		return 2;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (kind[0] == 'm') {
			bit = i == 0 ? (unsigned)(next() >> 63) : below(10) < 8 ? bit : !bit;
			v = bit;
		} else {
			v = below(4) == 0 ? 0 : 1 + below(255);
		}
		if (putchar((int)v) == EOF)
			return 1;
	}
	return fflush(stdout) != 0;
}
