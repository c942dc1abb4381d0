/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the check programs (through test_doubles.h) and the helper programs
 * share (issue 28): no Check here.
 *  - xorshift64* (Vigna): the fixed-seed generator of the tests' synthetic
 *    data.  Fast, reproducible from the seed a test prints, good enough to
 *    look random to FIPS 140-2; never a key.
 *  - a Fisher-Yates shuffle of the 256 byte values driven by it;
 *  - splitmix64's finaliser: a counter mixed into words that look random
 *    and never repeat;
 *  - reading exactly so many bytes from a socket or pipe.
 */
#ifndef RNGFEED_TD_UTIL_H
#define RNGFEED_TD_UTIL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

/* The next value after @state (not 0), which it advances. */
static inline uint64_t td_xorshift64(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dull;
}

/* The 256 byte values in @perm, shuffled (Fisher-Yates) from @state. */
static inline void td_shuffle256(uint8_t perm[256], uint64_t *state)
{
	for (unsigned i = 0; i < 256; i++)
		perm[i] = (uint8_t)i;
	for (unsigned i = 255; i > 0; i--) {
		unsigned j = (unsigned)(td_xorshift64(state) % (i + 1));
		uint8_t t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* splitmix64 (Steele, Lea, Flood) of the counter value @x. */
static inline uint64_t td_splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Read exactly @len bytes into @buf (retrying after EINTR): 0, or -1 on an
 * error or an early end of input. */
static inline int td_read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

#endif
