/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Source readers: one thread per enabled source.  Each opens its source
 * (or takes one the caller opened: reader_params.opened), reads one
 * MONITOR_BLOCK_BYTES block at a time while the main loop wants data, runs
 * the integrity monitor on the raw block, and hands over only blocks that
 * passed (after the start-up test).  A slow or blocked source stalls only
 * its own thread.
 *
 * What happens when a source stops giving good data:
 * - health tests failed permanently (READER_DISABLED): the source stays
 *   open; after the back-off its start-up test runs again on the same open
 *   source (no reopen: after a privilege drop a device such as /dev/hwrng
 *   could not be reopened).
 * - a read error, a vanished device, end of input of a FIFO or device
 *   (READER_BACKOFF): closed, and reopened after the back-off.  A reopen
 *   that is refused after a privilege drop says so ("cannot reopen
 *   /dev/hwrng as user nobody: Permission denied").
 * - the back-off doubles from retry_initial_s up to retry_max_s, and is
 *   reset by a block that passed.
 * - a source that is not there yet (open fails with ENOENT, ENODEV or
 *   ENXIO) is
 *   looked at again every READER_ABSENT_RECHECK_S seconds (or
 *   retry_initial_s, when shorter), without doubling, and at once on a
 *   uevent (reader_device_changed()): a device that appears is used
 *   within about a second.  Said once, not every second.
 * - a plugged device (SOURCE_F_PLUGGED) whose read finds it gone
 *   (-ENODEV: unplugged) is closed and looked for the same way, not
 *   after the back-off; when it is back, its start-up test runs again.
 * - end of input of a source whose end is final (a regular file, see
 *   source_is_finite()): READER_FINISHED, logged once; the source is closed
 *   and never reopened, so nothing is read, or credited, twice.  A partial
 *   block at the end is never tested, so never used.
 */
#ifndef RNGFEED_READER_H
#define RNGFEED_READER_H

#include <stdbool.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "rngfeed/assessor.h"
#include "rngfeed/drbg.h"
#include "rngfeed/monitor.h"
#include "rngfeed/online_estimate.h"
#include "rngfeed/source.h"

/* Signal used to interrupt a reader blocked in read(2) or open(2). */
#define READER_WAKE_SIGNAL (SIGRTMIN + 1)

/* How often a source that is not there yet is looked for. */
#define READER_ABSENT_RECHECK_S 1.0

enum reader_state {
	READER_OPENING,  /* not open yet */
	READER_STARTUP,  /* open, start-up test not passed yet */
	READER_RUNNING,  /* open and healthy */
	READER_BACKOFF,  /* closed after an error; retried later */
	READER_DISABLED, /* failed health tests; start-up test again later */
	READER_STOPPED,
	READER_FINISHED, /* end of a finite input (a regular file): never
			  * read again; the thread has ended */
};

/*
 * What the full assessments of a source learned and what it was learned
 * of (source_identity() of what was open), handed from one reader of a
 * source to the next (a reload) by reader_memory() and
 * reader_params.recall.  A reader that opens something else than what its
 * memory was learned of forgets it.
 */
struct reader_memory {
	struct assessor_learned learned;  /* samples 0: nothing */
	char identity[160];
};

struct reader_params {
	unsigned int idx;            /* index in the ledger */
	struct source_config source;
	struct monitor_params monitor;
	double retry_initial_s;      /* first back-off */
	double retry_max_s;          /* cap of the doubling */
	/* How often a source that is not there is looked for; 0:
	 * READER_ABSENT_RECHECK_S (tests set it long, to see that a
	 * uevent, not the clock, found the device). */
	double absent_recheck_s;
	int notify_fd;               /* eventfd: a block or a state change */
	/*
	 * Optional: a source already opened from source.config (for example
	 * before a privilege drop), used first.  When reader_start() succeeds
	 * the reader owns it (closes it when it reopens, finishes or stops);
	 * when it fails the caller still does.  NULL: the reader opens it.
	 */
	struct source *opened;
	/*
	 * Blocks are taken back to back (--stdout, issue 20): the thread
	 * works out each passed block's DRBG seed material itself
	 * (drbg_df_derive(), the costly half of a reseed), hands it over
	 * with the block (reader_take_derived()), and a request fills the
	 * whole queue, so the main loop wakes it once per two blocks.  Off:
	 * one block per request, nothing derived.
	 */
	bool bulk;
	/* The full assessment (assessor.h): its window in samples and its
	 * CPU share of one core; 0: the defaults; a budget below 0: none
	 * (an uncredited source). */
	size_t assess_samples;
	double assess_budget;
	/* The credit is above the driver's own default (a user's claim):
	 * nothing is credited before its first full assessment, and the
	 * reader waits for that one before it hands over more
	 * (assessor_limit(); not in bulk mode, where nothing is credited). */
	bool claimed;
	/* What an earlier reader of the same source learned (a reload);
	 * zeroed: nothing. */
	struct reader_memory recall;
};

struct reader_stats {
	enum reader_state state;
	uint64_t raw_bytes;
	uint64_t blocks_passed;      /* handed over as usable */
	uint64_t blocks_failed;      /* failed any test; discarded */
	/* Failed blocks per test: row k of monitor_tests[] (rows without a
	 * key, the permanent bits, stay 0: their test counts them). */
	uint64_t test_failures[MONITOR_N_TESTS];
	/* The on-line min-entropy estimate over the blocks that passed
	 * (online_estimate.h); its credit caps the source's. */
	struct online_estimate_result estimate;
	/* The latest full SP 800-90B assessment (assessor.h), and the limit
	 * both set on the credit: assessor_limit(). */
	struct assessor_result full;
	unsigned int credit_limit;
	enum estimate_in_force in_force;
	uint64_t errors;             /* open/read errors */
	uint64_t disables;
	char reason[200];            /* why it is not running, when it is not */
	char description[160];       /* what is behind it, once opened */
};

struct reader;

/* Start the thread.  0 or -errno.  reader_params(r)->opened is NULL
 * afterwards: the source belongs to the thread. */
int reader_start(struct reader **out, const struct reader_params *p);
/* Ask for one more tested block, unless one is asked for or waiting
 * already; the request stands until the block is delivered. */
void reader_request_block(struct reader *r);
/* Take one tested block if one is ready: 1 (copied to @block), or 0. */
int reader_take(struct reader *r, uint8_t block[MONITOR_BLOCK_BYTES]);
/* reader_take(), and *@derived says whether the block came with its seed
 * material (bulk), copied to @seed; the caller wipes both. */
int reader_take_derived(struct reader *r, uint8_t block[MONITOR_BLOCK_BYTES],
			uint8_t seed[DRBG_SEEDLEN], bool *derived);
/* Drop (and wipe) the tested blocks waiting to be taken. */
void reader_discard(struct reader *r);
/* A uevent came: a reader waiting for its device to appear (or to come
 * back) looks at once instead of at its next second. */
void reader_device_changed(struct reader *r);
/* The credit (per 1024 raw bits) the estimates allow now: the on-line
 * estimate and the full assessment, assessor_limit() (0 before the first
 * block passed).  Cheaper than reader_get_stats(), for each take. */
unsigned int reader_estimate_credit(struct reader *r);
/* The credit what the reader has open now allows (issue 25: a device
 * default is re-derived on every open from what was opened, see
 * source_opened_credit()); SOURCE_CREDIT_MAX when it sets no limit. */
unsigned int reader_opened_credit(struct reader *r);
void reader_get_stats(struct reader *r, struct reader_stats *out);
/* What its full assessments learned, for the next reader of the same
 * source. */
void reader_memory(struct reader *r, struct reader_memory *out);
const struct reader_params *reader_params(const struct reader *r);
/* Stop the thread, wipe and free; NULL is ok.  A thread that has not
 * ended within a bound (a read that never returns) is left behind with
 * the struct, which it frees when it ends; nothing of it is used again. */
void reader_stop(struct reader *r);
/* reader_stop() for @n readers at once, within one bound for them all
 * (NULL entries are skipped). */
void reader_stop_all(struct reader *const *rs, size_t n);

/* Install the no-op READER_WAKE_SIGNAL handler (once, before threads). */
int reader_setup_signals(void);
const char *reader_state_name(enum reader_state s);
/* "FIPS monobit, 90B RCT" for a verdict's failure bits. */
void reader_failure_names(unsigned int failed, char *buf, size_t len);

#endif
