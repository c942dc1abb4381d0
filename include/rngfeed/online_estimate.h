/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * On-line min-entropy estimate of one source (issue 19): SP 800-90B §6.3's
 * most-common-value (with its upper confidence bound), Markov and lag
 * predictor estimates, from estimate.h (the same code as --assess), over a
 * sliding window of the last ONLINE_WINDOW_BLOCKS blocks that passed the
 * health tests.  The estimate's credit, 1024 x H / sample_bits, caps the
 * source's credit: effective credit = min(policy ceiling, estimate).
 *
 * The window: 26 blocks, 65,000 byte samples (520,000 bit samples).  The
 * MCV bound of a uniform byte source there is about 7.6 bits, within
 * 0.4 bit of 8, the estimators are meaningful (lag predictions over 65,000
 * samples, Markov over 520,000 bits), and an estimate costs about 7 ms
 * here (most of it the lag predictor's 128 guesses a sample); a larger
 * window gives a tighter bound at a proportional cost.
 *
 * Before the window is full (after each reset: an open, a start-up test
 * again) the estimate runs as the window fills, at 1, 2, 4, 8, 16 and 26
 * blocks, whatever the budget (each before the block is handed over), and
 * its credit counts from the first one (issue 25: before, a source was
 * credited at the policy's ceiling for its first 65,000 samples).  A short
 * window's bound is wide, so a uniform byte source starts lower (about 6
 * bits over one block) and rises as the window fills.  Each block's credit
 * is the estimate's as of when the main loop takes the block (the block
 * is in the window by then).  The reader caps this estimate further until
 * the source's first full assessment exists (assessor.h, reader.h).
 *
 * Once the window is full, the estimate is recomputed when a quarter of
 * the window is new, within a CPU budget: the next estimate waits until its
 * predecessor's CPU time is ONLINE_BUDGET of the wall time since, so the
 * estimators take at most that share of a core however fast the source is.
 * The reader runs it after it handed its block over, so the main loop works
 * meanwhile.  In between, the last estimate holds.
 *
 * A block goes in only after it passed the health tests; the window holds
 * whole blocks in a ring (the blocks around a discarded one, and the ring's
 * seam, are neighbours to the estimators: one discontinuity among 65,000
 * samples).  It reads CLOCK_MONOTONIC and the thread's CPU clock for the
 * budget; no other I/O, no logging, no globals.
 */
#ifndef RNGFEED_ONLINE_ESTIMATE_H
#define RNGFEED_ONLINE_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>

#include "rngfeed/monitor.h"

#define ONLINE_WINDOW_BLOCKS 26u
/* The estimators' share of one core, once the window is full. */
#define ONLINE_BUDGET 0.02
/* The credit of "no limit from the estimate" (the ceiling stands). */
#define ONLINE_NO_LIMIT 1024u

struct online_estimate;

struct online_estimate_result {
	double h;            /* bits per sample, min of the three; < 0: none yet */
	double h_mcv, h_markov, h_lag;
	unsigned credit;     /* the limit: floor(1024 x h / sample_bits), or
			      * ONLINE_NO_LIMIT before the first estimate;
			      * 0 after an estimator failed */
	uint32_t samples;    /* samples the estimate covered */
	uint32_t held;       /* samples in the window now: more than
			      * samples between two estimates */
	uint64_t estimates;  /* estimates made since the reset */
	double done_at;      /* CLOCK_MONOTONIC seconds of the last one */
	bool full;           /* the window was full */
};

/* sample_bits 8 or 1; budget: the CPU share, 0 = no limit (tests).
 * 0, -EINVAL or -ENOMEM. */
int online_estimate_new(unsigned sample_bits, double budget, struct online_estimate **out);
/* Wipes the window, frees; NULL is fine; returns NULL. */
struct online_estimate *online_estimate_free(struct online_estimate *e);
/* A (re)opened source: an empty window, no estimate, no limit yet. */
void online_estimate_reset(struct online_estimate *e);
/* A block that passed the health tests, before it is handed over; while
 * the window fills, estimates when due (see above): 1 if it did, 0 if
 * not, or -errno from an estimator. */
int online_estimate_add(struct online_estimate *e, const uint8_t block[MONITOR_BLOCK_BYTES]);
/* Once the window is full, the budgeted estimate, if due: to be called
 * after the block was handed over, so that the consumer does not wait for
 * it.  1, 0 or -errno as above. */
int online_estimate_update(struct online_estimate *e);
void online_estimate_get(const struct online_estimate *e, struct online_estimate_result *r);

#endif
