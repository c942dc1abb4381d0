/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A reader's insides, shared by reader.c (its thread, the queue and the
 * main loop's side) and reader_stop.c (the wake signal and the bounded
 * stop).  Not a public header.
 */
#ifndef RNGFEED_READER_INTERNAL_H
#define RNGFEED_READER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rngfeed/assessor.h"
#include "rngfeed/online_estimate.h"
#include "rngfeed/reader.h"

/* Tested blocks waiting for the main loop; two keep the pipe full. */
#define READER_QUEUE 2
/* How long reader_stop_all() waits for the threads, all of them together
 * (SIGTERM: within 1 s). */
#define READER_STOP_WAIT_MS 400
enum { READER_LIVE, READER_ENDED, READER_ABANDONED };


struct reader {
	struct reader_params p;     /* p.opened is always NULL: see first */
	struct source *first;       /* the caller's open source; the thread
				     * takes it (written before it starts) */
	pthread_t thread;
	bool thread_started;
	/* The thread's on-line estimate and the source's full assessment
	 * (its own thread); their results are published in stats. */
	struct online_estimate *est;
	struct assessor *full;
	/*
	 * Set once by reader_stop(), read by the thread.  Every access is
	 * relaxed: the flag publishes no other data (the queue and stats are
	 * under the lock, and "ended" below orders everything the thread
	 * did before reader_stop() frees it).  The store is made under the lock
	 * and followed by a broadcast, so a thread waiting on the condition
	 * sees it on wake-up (the mutex orders it); a thread in a blocking
	 * call sees it within the 20 ms at which reader_stop() keeps sending
	 * the wake signal, since an atomic store becomes visible to later
	 * loads in bounded time (C11 7.17.3 p16).
	 */
	atomic_bool stop;
	/* READER_LIVE until one side is done with the struct: the thread
	 * (READER_ENDED, its last access) or a reader_stop() that gave up
	 * waiting (READER_ABANDONED); whichever comes second frees it.  No
	 * join: the main loop waits on nothing unbounded. */
	atomic_int ended;

	pthread_mutex_t lock;     /* guards everything below */
	pthread_cond_t cond;      /* demand, stop */
	bool look_again;          /* a uevent: a device it waits for may
				   * be there now (reader_device_changed) */
	unsigned int requested;   /* blocks the main loop asked for */
	unsigned int generation;  /* bumped by reader_discard() */
	unsigned int queued;
	uint8_t queue[READER_QUEUE][MONITOR_BLOCK_BYTES];
	/* bulk: each queued block's seed material, when derived[] */
	uint8_t seed[READER_QUEUE][DRBG_SEEDLEN];
	bool derived[READER_QUEUE];
	/* What the full assessments learned is of this (opened()). */
	char identity[160];
	/* The credit what is open now allows (source_opened_credit()),
	 * SOURCE_CREDIT_MAX when the credit was the user's or the driver
	 * cannot say; 0 until something is open. */
	unsigned int opened_credit;
	struct reader_stats stats;
};

/* The struct, once its thread (if any) is done with it (reader_stop.c). */
void reader_free(struct reader *r);

#endif
