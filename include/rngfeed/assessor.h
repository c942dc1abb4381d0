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
 * 1,000,000).
 *
 * What the assessments of a source learned (struct assessor_learned) is
 * the limit in force, and it is kept (issue 33):
 *  - an assessment over at least as many samples as the one the limit
 *    came from replaces it (it may raise or lower the credit);
 *  - one over fewer samples may only lower it, and so may one that ran
 *    while the source restarted (its window held what came before a
 *    health-test failure);
 *  - a restart of the same source (assessor_reset(): a disable, a retry,
 *    a reopen) empties the window and keeps the limit; a reload of the
 *    same source hands it to the next assessor (assessor_params.recall);
 *    another source starts from nothing (assessor_forget()).
 * So the 65,000-sample assessment that follows a restart cannot undo what
 * the assessment of a whole window found.  Before the first assessment
 * there is no limit from it (learned.samples 0): the caller caps the claim
 * otherwise (assessor_limit()).
 *
 * With @grow (a credit the user claimed, see assessor_limit()), until an
 * assessment covered the whole window, the next is due whatever the
 * budget as soon as the window holds four times the samples of the
 * largest so far (65,000, 260,000, 1,000,000 by default: about 0.1, 0.5
 * and 2 s of CPU, once in the source's life): such a credit rests on the
 * assessment alone, and a small one says least.
 *
 * An assessment cannot be interrupted (a second or more of CPU): stopping
 * never waits for it.  assessor_free() tells the thread to end and returns
 * at once, without the lock (the thread runs at nice 5 and may be
 * preempted holding it; the main thread must never wait for that); the thread frees the shared state when it ends (the last of the
 * two to let go frees it).  A forget while an assessment runs makes its
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

/* The limit in force and the assessment it came from (see above). */
struct assessor_learned {
	double h;               /* bits per sample; < 0: nothing learned */
	unsigned credit;        /* ONLINE_NO_LIMIT when nothing learned */
	uint64_t samples;       /* of the largest assessment since it was
				 * last replaced; 0: nothing learned */
	double done_at;         /* CLOCK_MONOTONIC: when it was set */
};

struct assessor_params {
	unsigned sample_bits;   /* 8 or 1 */
	size_t window_samples;  /* >= ASSESSOR_MIN_SAMPLES */
	double budget;          /* CPU share of one core, (0, 1] */
	bool grow;              /* growth assessments (see above) */
	/* What an earlier assessor of the same source learned (a reload),
	 * taken as if assessed here; samples 0: nothing. */
	struct assessor_learned recall;
};

struct assessor_result {
	double h;               /* the latest, bits per sample; < 0: none yet */
	unsigned credit;        /* its limit (see above); ONLINE_NO_LIMIT
				 * when none yet; 0 after a failure */
	uint64_t samples;       /* samples it covered */
	uint64_t assessments;   /* done since the source was forgotten */
	double done_at;         /* CLOCK_MONOTONIC seconds it ended at */
	double cpu_s;           /* its CPU time */
	int error;              /* the last failure, -errno; 0 */
	bool first_due;         /* the window holds enough for the first
				 * assessment, which has not ended yet */
	struct assessor_learned learned;
};

/* Starts the thread.  0, -EINVAL or -errno. */
int assessor_new(const struct assessor_params *p, struct assessor **out);
/* Ends it without waiting (see above); NULL is fine; returns NULL. */
struct assessor *assessor_free(struct assessor *a);
/* reset, forget, add and get take NULL too (no assessor: never a
 * result), and never wait for the lock: a reset or forget asked for while
 * the thread holds it takes effect at once for get and is applied by the
 * next to take it. */
/* The same source again (a disable, a retry, a reopen): an empty window;
 * what was learned stays (see above). */
void assessor_reset(struct assessor *a);
/* Another source: an empty window, nothing learned, no result. */
void assessor_forget(struct assessor *a);
/* A block that passed the health tests: into the window (left out while
 * the thread holds the lock: a gap, as a discarded block leaves); wakes
 * the thread when an assessment is due.  false when left out. */
bool assessor_add(struct assessor *a, const uint8_t block[MONITOR_BLOCK_BYTES]);
/* The latest result; never waits: -EBUSY (and @r untouched) when the
 * thread holds the lock just then, 0 otherwise. */
int assessor_get(struct assessor *a, struct assessor_result *r);

/*
 * The limit a source's blocks are credited under (issues 25 and 33): the
 * lower of the on-line estimate and what the full assessments learned.
 * Before they learned anything (the first assessment comes after 26
 * blocks and about 0.1 s of CPU), it depends on who vouches for the
 * credit:
 *  - @claimed, a credit above the driver's own default (any credit of a
 *    file, FIFO or EGD source): 0.  Nothing but the assessment backs such
 *    a claim, and the quick estimators miss dependence the predictors see
 *    (issue 33: a quarter of their estimate was 1.7-1.8x the truth on
 *    first- and second-order streams);
 *  - otherwise (the driver's ceiling, for hardware whose design it
 *    trusts): the on-line estimate's credit divided by
 *    ASSESSOR_QUICK_DIVISOR, so that the kernel is seeded at once at
 *    boot.  Why 4: on issue 25's streams the quick estimators said 5.65
 *    bits for a true 1.72 (3.3x); a quarter keeps that below the truth.
 * No on-line estimate yet: 0 (no block has passed).  *@which says which
 * limit is in force.
 */
#define ASSESSOR_QUICK_DIVISOR 4u
enum estimate_in_force {
	IN_FORCE_NONE,        /* no estimate yet: nothing credited */
	IN_FORCE_QUICK_SHARE, /* the on-line estimate / 4, no full one yet */
	IN_FORCE_QUICK,       /* the on-line estimate, below the full one */
	IN_FORCE_FULL,        /* the full assessment */
	IN_FORCE_FULL_PENDING, /* a claimed credit before the first full
				* assessment: nothing credited */
};
unsigned assessor_limit(const struct online_estimate_result *quick,
			const struct assessor_result *full, bool claimed,
			enum estimate_in_force *which);
/* "none", "quick/4", "quick", "full", "full pending": the metrics' and
 * --list's words. */
const char *estimate_in_force_name(enum estimate_in_force which);

/* What was learned, @l, after an assessment @now (its h, credit, samples,
 * done_at) ended; @only_lower: it ran while the source restarted.  The
 * rule above.  Pure. */
void assessor_learn(struct assessor_learned *l, const struct assessor_learned *now,
		    bool only_lower);

/* The limit of an assessment of H bits per sample over @samples samples,
 * window @window_samples: see above.  Pure. */
unsigned assessor_credit(double h, unsigned sample_bits, uint64_t samples,
			 size_t window_samples);

#endif
