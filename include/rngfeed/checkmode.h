/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rngfeed --check: the integrity monitor over a file or stdin, reporting in
 * rngtest's words.  The first 4 bytes seed the FIPS continuous test, then
 * every whole 2,500-byte block is tested; a trailing partial block is counted
 * as received but not tested (all as rngtest does).  The SP 800-90B tests run
 * on exactly the bytes the FIPS tests see: the 4 seed bytes and a trailing
 * partial block are not 90B-tested.
 */
#ifndef RNGFEED_CHECKMODE_H
#define RNGFEED_CHECKMODE_H

#include <stdio.h>

/* Default claimed min-entropy per byte in --check: full entropy, the
 * hypothesis the FIPS 140-2 tests (and rngtest) assume. */
#define CHECKMODE_DEFAULT_MIN_ENTROPY 8.0

/*
 * Reads in_fd to EOF, prints the counters to out (prefix "rngfeed: ").
 * min_entropy <= 0 selects CHECKMODE_DEFAULT_MIN_ENTROPY.
 * Returns the exit code: 0 nothing failed, 1 any test failed or no whole
 * block was tested (like rngtest), 2 bad min_entropy or an I/O error (one
 * line on err).
 */
int checkmode_run(int in_fd, double min_entropy, FILE *out, FILE *err);

#endif
