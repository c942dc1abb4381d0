/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Binary t-tuple/LRS (estimate_6_3_5_6_bits.c): what the bits say before
 * the word sort, from their runs of equal bits and a spot check
 * (estimate_6_3_5_6_runs.c).  Not a public header.
 */
#ifndef RNGFEED_ESTIMATE_6_3_5_6_RUNS_H
#define RNGFEED_ESTIMATE_6_3_5_6_RUNS_H

#include <stddef.h>
#include <stdint.h>

/* Runs longer than this count as this long. */
#define RUN_CAP 255

struct bits_runs {
	unsigned longest;	/* the longest run of equal bits, at most RUN_CAP */
	unsigned u_bound;	/* LRS's u (the first t with Q[t] < 35) is >= this */
};

/* The runs of the n >= 1 bits packed in w (zeros past them). */
void bits_runs(const uint64_t *w, size_t n, struct bits_runs *r);
/* Whether the bits repeat so much that words of `depth` bits tie
 * everywhere (see the file).  -ENOMEM, 0 or 1. */
int bits_repetitive(const uint64_t *w, size_t n, unsigned depth);

#endif
