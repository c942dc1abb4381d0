/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xorshift64* (Vigna): the fixed-seed generator of the tests' synthetic
 * data, in one place (issue 28).  Fast, reproducible from the seed a test
 * prints, good enough to look random to FIPS 140-2; never a key.  Its own
 * header (no Check) so that the helper programs share it too.
 */
#ifndef RNGFEED_TD_XORSHIFT_H
#define RNGFEED_TD_XORSHIFT_H

#include <stdint.h>

/* The next value after @state (not 0), which it advances. */
static inline uint64_t td_xorshift64(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dull;
}

#endif
