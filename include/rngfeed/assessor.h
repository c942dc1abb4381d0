/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The full SP 800-90B non-IID assessment of one source, kept up to date
 * (issue 25): every estimator of --assess (est_assess(), estimate.h), run
 * in a thread of its own at a low priority (nice 5) on a
 * recent window of the source's tested samples, within a CPU budget.
 *
 * The window: the last window_samples samples (default 1,000,000; the
 * configuration's assess-samples), whole blocks in a ring.  The first assessment runs as soon as
 * ASSESSOR_FIRST_BLOCKS blocks are in (65,000 byte samples: the on-line
 * estimate's window; about 0.1 s of CPU), whatever the budget; each later
 * one when its predecessor's CPU time is at most `budget` of the wall time
 * since it ended and a quarter of the samples it saw (at least that many
 * blocks) are new.  So a slow source is assessed on what it gave within
 * its budget, a fast one on the full window.
 *
 * Its limit on the credit, floor(1024 x H / sample_bits): over a window
 * that is not full yet, 15/16 of H (the predictors' bounds on short input
 * can lie just above the truth while they still learn: measured on issue
 * 25's first-order stream, 1.2 % above over 65,000 samples, 0.03 % over
 * 1,000,000).  Before the first assessment there is no limit from it
 * (ONLINE_NO_LIMIT): the caller caps the claim otherwise (reader.c).
 *
 * An assessment cannot be interrupted (a second or more of CPU): stopping
 * never waits for it.  assessor_free() tells the thread to end and returns
 * at once, without the lock (the thread runs at nice 5 and may be
 * preempted holding it; the main thread must never wait for that); the thread frees the shared state when it ends (the last of the
 * two to let go frees it).  A reset while an assessment runs makes its
 * result void.  No I/O, no logging, no globals.
 */
#ifndef RNGFEED_ASSESSOR_H
#define RNGFEED_ASSESSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rngfeed/monitor.h"
#include "rngfeed/online_estimate.h"

#define ASSESSOR_DEFAULT_SAMPLES 1000000u
#define ASSESSOR_DEFAULT_BUDGET 0.02	/* of one core */
#define ASSESSOR_FIRST_BLOCKS 26u
/* The thread's nice value (see assessor.c). */
#define ASSESSOR_NICE 5
/* The smallest window: the first assessment's. */
#define ASSESSOR_MIN_SAMPLES (ASSESSOR_FIRST_BLOCKS * MONITOR_BLOCK_BYTES)

struct assessor;

struct assessor_params {
	unsigned sample_bits;   /* 8 or 1 */
	size_t window_samples;  /* >= ASSESSOR_MIN_SAMPLES */
	double budget;          /* CPU share of one core, (0, 1] */
};

struct assessor_result {
	double h;               /* bits per sample; < 0: none yet */
	unsigned credit;        /* its limit (see above); ONLINE_NO_LIMIT
				 * when none yet; 0 after a failure */
	uint64_t samples;       /* samples it covered */
	uint64_t assessments;   /* done since the last reset */
	double done_at;         /* CLOCK_MONOTONIC seconds it ended at */
	double cpu_s;           /* its CPU time */
	int error;              /* the last failure, -errno; 0 */
};

/* Starts the thread.  0, -EINVAL or -errno. */
int assessor_new(const struct assessor_params *p, struct assessor **out);
/* Ends it without waiting (see above); NULL is fine; returns NULL. */
struct assessor *assessor_free(struct assessor *a);
/* reset, add and get take NULL too (no assessor: never a result), and
 * never wait for the lock: a reset asked for while the thread holds it
 * takes effect at once for get and is applied by the next to take it. */
/* A (re)opened source: an empty window and no result. */
void assessor_reset(struct assessor *a);
/* A block that passed the health tests: into the window (left out while
 * the thread holds the lock: a gap, as a discarded block leaves); wakes
 * the thread when an assessment is due.  false when left out. */
bool assessor_add(struct assessor *a, const uint8_t block[MONITOR_BLOCK_BYTES]);
/* The latest result; never waits: -EBUSY (and @r untouched) when the
 * thread holds the lock just then, 0 otherwise. */
int assessor_get(struct assessor *a, struct assessor_result *r);

/*
 * The limit a source's blocks are credited under (issue 25): the lower of
 * the on-line estimate and the latest full assessment; until the first
 * full assessment exists, the on-line estimate's credit divided by
 * ASSESSOR_QUICK_DIVISOR.  Why 4: the quick estimators (MCV, Markov, lag)
 * miss dependence only the predictors see; on issue 25's streams they
 * said 5.65 bits for a true 1.72 (3.3x) and 3.06x the truth for a
 * Fibonacci-like stream; a quarter keeps both below the truth, and costs a
 * healthy source three quarters of its credit for its first 65,000 samples
 * (until the first assessment, about 0.1 s of CPU after them).  No
 * on-line estimate yet: 0 (no block has passed).  *@which says which
 * limit is in force.
 */
#define ASSESSOR_QUICK_DIVISOR 4u
enum estimate_in_force {
	IN_FORCE_NONE,        /* no estimate yet: nothing credited */
	IN_FORCE_QUICK_SHARE, /* the on-line estimate / 4, no full one yet */
	IN_FORCE_QUICK,       /* the on-line estimate, below the full one */
	IN_FORCE_FULL,        /* the full assessment */
};
unsigned assessor_limit(const struct online_estimate_result *quick,
			const struct assessor_result *full,
			enum estimate_in_force *which);
/* "none", "quick/4", "quick", "full": the metrics' and --list's words. */
const char *estimate_in_force_name(enum estimate_in_force which);

/* The limit of an assessment of H bits per sample over @samples samples,
 * window @window_samples: see above.  Pure. */
unsigned assessor_credit(double h, unsigned sample_bits, uint64_t samples,
			 size_t window_samples);

#endif
