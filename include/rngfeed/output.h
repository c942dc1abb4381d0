/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where conditioned output goes: one small ops table per mode, the way
 * random.c gives /dev/random and /dev/urandom their own file_operations,
 * so that the daemon's loop reads the same for all of them:
 *
 *   wants (tested blocks?) → absorb → request → step (output) → poll
 *
 *   kernel      RNDADDENTROPY, credited at most what the ledger allows;
 *               uncredited data only at the top-up cadence
 *   bench-fill  the fill phase for --bench-fill seconds, back to back
 *   stdout      --stdout: DRBG output, credited to no one
 *   test        -t: the whole pipeline, nothing leaves the process
 */
#ifndef RNGFEED_OUTPUT_H
#define RNGFEED_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rngfeed/conditioner.h"
#include "rngfeed/config.h"
#include "rngfeed/feeder.h"
#include "rngfeed/sourceset.h"

#define OUTPUT_CHUNK 65536u /* one DRBG request */
/* --stdout: what one turn of the loop generates and writes at most, as
 * OUTPUT_CHUNK requests (one write(2), one additional input, one poll
 * per batch: system calls are expensive on this hypervisor) */
#define OUTPUT_STDOUT_BATCH (16u * OUTPUT_CHUNK)

/*
 * -t reads its sources in a burst per --stats-interval, not flat out:
 * per source, what it delivered in its measuring windows and their total
 * length, which the rate lines divide.
 */
struct output_sample {
	double active[CONFIG_MAX_SOURCES];
	uint64_t raw[CONFIG_MAX_SOURCES];
	uint64_t passed[CONFIG_MAX_SOURCES];
};

struct output {
	const struct rngfeed_config *cfg;
	struct conditioner *cond;
	const struct source_set *set;
	struct feeder feeder;          /* counts "would have fed" in -t */
	const struct kernel_ops *kops; /* the kernel; NULL in other modes */
	uint8_t *buf;                  /* buf_len bytes, or NULL */
	size_t buf_len;                /* OUTPUT_CHUNK, or
					* OUTPUT_STDOUT_BATCH for --stdout */
	bool buf_dirty;                /* stdout: buf holds output */
	double paused_since;           /* stdout: not writing since; 0 */
	uint64_t out_bytes;            /* --stdout: written */
	size_t pending_off, pending_len; /* stdout: buf's part not written
					  * yet (it took only some) */
	bool stdout_blocked;           /* stdout full: poll for POLLOUT */
	int stdout_flags;              /* its flags before; -1 untouched */
	double start;
	/* -t: when the current burst began, the sources whose measuring
	 * window is open (a bit each), their counters at its start, and
	 * the totals so far */
	double burst_start;
	uint32_t burst_open;
	uint64_t burst_raw0[CONFIG_MAX_SOURCES];
	uint64_t burst_passed0[CONFIG_MAX_SOURCES];
	uint64_t burst_blocks0[CONFIG_MAX_SOURCES];
	struct output_sample sample;
	double next_uncredited;        /* kernel: the next uncredited feed */
	double next_ready_check;       /* kernel: while the CRNG is not ready */
	uint64_t reseeds_at_feed;      /* kernel: DRBG reseeds at the last feed */
	bool credited_only;            /* set by wants(): ask only sources
					* with a credit above 0 */
	bool waiting_pollout;          /* kernels before 5.18, once ready */
	int exit_code;
};

struct output_ops {
	const char *name;
	/*
	 * Does the output want tested blocks now (sets o->credited_only)?
	 * If not, *@wait (seconds) may be lowered to when it will.
	 */
	bool (*wants)(struct output *o, double now, double *wait);
	/* Absorb blocks a part at a time while it wants them. */
	bool in_parts;
	/*
	 * Optional: may tested blocks be absorbed now?  NULL: whenever one
	 * is waiting.  --stdout asks for the next block right after a
	 * reseed but reseeds only at a limit, so it reseeds every
	 * --reseed-bytes (absorbed on arrival, it was every ~0.7 MiB).
	 */
	bool (*absorb_due)(struct output *o, double now);
	/*
	 * Produce output (@want: what wants() said this turn): 1 did something (loop again at once), 0 nothing to
	 * do now (*@wait may be lowered), -1 finished (o->exit_code says
	 * how).
	 */
	int (*step)(struct output *o, bool want, double now, double *wait);
};

/* The ops for @cfg's mode. */
const struct output_ops *output_ops_for(const struct rngfeed_config *cfg);

/* Set up @o (allocating the chunk buffer where the mode needs one); 0 or
 * -ENOMEM.  @kops is the kernel in daemon mode, else NULL. */
int output_init(struct output *o, const struct rngfeed_config *cfg,
		struct conditioner *cond, const struct source_set *set,
		const struct kernel_ops *kops, const struct feeder_params *fp,
		double now);
void output_fini(struct output *o);

#endif
