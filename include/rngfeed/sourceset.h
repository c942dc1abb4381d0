/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The source set: one slot per configured source, each with its reader
 * thread once started.
 *
 * Its life has two steps because of the privilege drop: sourceset_open()
 * probes and opens every enabled source (devices such as /dev/hwrng are
 * root's) and takes the kernel's own credit for the hw_random device it
 * gates; then, after the drop, sourceset_start() starts one reader per
 * opened source, which owns the open source from then on.  The main loop
 * takes tested blocks round robin and asks for more.
 *
 * Only the main thread calls it.  Messages go to the log (start-up and
 * reload are rare and a user must hear about them).
 */
#ifndef RNGFEED_SOURCESET_H
#define RNGFEED_SOURCESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rngfeed/config.h"
#include "rngfeed/monitor.h"
#include "rngfeed/reader.h"

struct source_set;

struct sourceset_params {
	double retry_delay;      /* readers' first back-off */
	double retry_max;        /* ...and its cap */
	unsigned int max_failures;
	bool wait_for_source;    /* start a reader even for a source that
				  * is not usable yet */
	bool sources_named;      /* -n given: an unusable one is a warning */
	bool gate_hwrng;         /* take the kernel's own hw_random credit */
	const char *sysfs_dir;   /* hw_random's, for the gate */
	const char *gate_state;  /* where the gate records what it found */
	const char *ledger_dir;  /* the file ledger's directory (credited
				  * regular files are read through it), or
				  * NULL: none (nothing is credited) */
	const char *gate_lock;   /* the machine's one-owner lock (and the
				  * record other instances read) */
	bool bulk;               /* blocks absorbed whole, back to back
				  * (--stdout): reader_params.bulk */
	size_t assess_samples;   /* full assessments' window; 0: default */
	double assess_budget;    /* their CPU share of one core, all
				  * credited sources together; 0: default */
};

int sourceset_new(struct source_set **out, const struct rngfeed_config *cfg,
		  const struct sourceset_params *p);
/* Stops what runs, hands back the kernel's credit, frees; NULL is ok. */
void sourceset_free(struct source_set *s);

/* Probe and open every enabled source; the number opened (or waiting,
 * with wait_for_source). */
size_t sourceset_open(struct source_set *s);
/* One reader per opened source, telling @notify_fd of blocks and state
 * changes.  The number started. */
size_t sourceset_start(struct source_set *s, int notify_fd);
/* Stop every reader (their stats are kept); give the kernel its credit
 * back. */
void sourceset_stop(struct source_set *s);
/* SIGHUP: stop, take @fresh's sources and reader settings, open and
 * start again.  The number started. */
size_t sourceset_reload(struct source_set *s,
			const struct rngfeed_config *fresh, int notify_fd);

/* The housekeeping tick (main thread, never blocks): the hand-over of
 * hw_random follows the machine (devices that register, leave or become
 * current; a gate that waits for another instance takes over when it
 * stops).  @told: the caller hears the kernel's uevents and calls
 * sourceset_devices_changed() on each.  Seconds until it wants to look
 * again by itself. */
double sourceset_tick(struct source_set *s, double now, bool told);
/* A uevent arrived (a driver bound or unbound, perhaps a hw_random one,
 * or a USB stick's tty): the next tick looks at once, and so do the
 * readers of plugged devices that wait for theirs. */
void sourceset_devices_changed(struct source_set *s);

/* A tested block from the next reader that has one, round robin: true
 * with @block, the slot and its credit. */
bool sourceset_take(struct source_set *s, uint8_t block[MONITOR_BLOCK_BYTES],
		    unsigned int *idx, unsigned int *credit);
/* ...with the block's seed material when its reader derived it (bulk):
 * *@derived says whether @seed holds it. */
bool sourceset_take_derived(struct source_set *s,
			    uint8_t block[MONITOR_BLOCK_BYTES],
			    unsigned int *idx, unsigned int *credit,
			    uint8_t seed[DRBG_SEEDLEN], bool *derived);
/* Ask the readers for one more block each: only those with a credit
 * above 0 when @credited_only. */
void sourceset_request(struct source_set *s, bool credited_only);
/* Wipe the blocks waiting in every reader (a VM clone holds the same). */
void sourceset_discard(struct source_set *s);

/* Is any reader with a credit above 0 running or about to (open, in its
 * start-up test)?  If not, nothing credited is coming soon. */
bool sourceset_credit_coming(const struct source_set *s);
/* Does any started reader have a credit above 0? */
bool sourceset_any_credit(const struct source_set *s);

/* Per slot, for reports. */
size_t sourceset_count(const struct source_set *s);
const struct source_config *sourceset_config(const struct source_set *s,
					     size_t i);
unsigned int sourceset_credit(const struct source_set *s, size_t i);
/* The credit a block of slot i gets now: sourceset_credit(), lowered to
 * what its reader's on-line min-entropy estimate allows (issue 19). */
unsigned int sourceset_effective_credit(const struct source_set *s, size_t i);
bool sourceset_used(const struct source_set *s, size_t i);    /* ever started */
bool sourceset_running(const struct source_set *s, size_t i); /* started now */
/* Totals over every reader the slot had (SIGHUP restarts them). */
void sourceset_stats(const struct source_set *s, size_t i,
		     struct reader_stats *out);
/* One line on the kernel's own crediting of hw_random (for STATUS). */
const char *sourceset_kernel_credit(const struct source_set *s);

/*
 * What sourceset_open() would do with slot @i, without opening anything
 * for long or starting a reader (--list): the same decisions (enabled,
 * a device read by a later source already, probe, whether this user can
 * open the device), the credit and H the reader would get.
 */
struct sourceset_plan {
	bool available;       /* probed usable and openable by this user */
	bool use;             /* this run would start a reader for it */
	bool waits;           /* not available, but --wait-for-source keeps
			       * trying it */
	unsigned int credit;  /* effective, bits per 1024 */
	bool host_provided;   /* credit 0: what it reads is the host's, in
			       * a confidential guest (source.h) */
	double min_entropy;   /* its health tests' H per sample */
	char detail[SOURCE_WHY_LEN];  /* the probe's sentence */
	char why_not[SOURCE_WHY_LEN]; /* "" when used */
	char held[SOURCE_WHY_LEN];    /* used, but credited 0 while another
				       * instance owns the hw_random
				       * hand-over ("" otherwise) */
};
void sourceset_plan(const struct source_set *s, size_t i,
		    struct sourceset_plan *out);

#endif
