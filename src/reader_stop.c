// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stopping readers within a bound: the wake signal that interrupts a
 * blocked read, the stop of all readers together, and the free of a
 * reader once its thread is done with it.  A thread that does not stop
 * in time is left behind (see reader_stop_all()).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rngfeed/assessor.h"
#include "rngfeed/log.h"
#include "rngfeed/online_estimate.h"
#include "rngfeed/reader.h"
#include "reader_internal.h"

static void wake_signal_handler(int sig)
{
	(void)sig; /* only there to make read(2) return EINTR */
}

int reader_setup_signals(void)
{
	struct sigaction sa = { .sa_handler = wake_signal_handler };

	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocked read must return so the thread can
	 * see its stop flag. */
	if (sigaction(READER_WAKE_SIGNAL, &sa, NULL) < 0)
		return -errno;
	return 0;
}

/* Ask its thread to stop: the flag, then a broadcast for a thread that
 * waits on the condition. */
static void ask_to_stop(struct reader *r)
{
	pthread_mutex_lock(&r->lock);
	/* Relaxed: see struct reader. */
	atomic_store_explicit(&r->stop, true, memory_order_relaxed);
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

static bool has_ended(struct reader *r)
{
	return atomic_load_explicit(&r->ended, memory_order_acquire) !=
	       READER_LIVE;
}

/* After the wait: free @r, or leave it to a thread that has not ended. */
static void let_go(struct reader *r)
{
	/* Once abandoned, the thread may free r at once. */
	const char *name = r->p.source.driver->name;
	pthread_t thread = r->thread;
	int live = READER_LIVE;

	if (atomic_compare_exchange_strong_explicit(&r->ended, &live,
						    READER_ABANDONED,
						    memory_order_acq_rel,
						    memory_order_acquire)) {
		pthread_detach(thread);
		log_warn("%s: its reader thread did not stop within %d ms (a "
			 "read that never returns?); left behind",
			 name, READER_STOP_WAIT_MS);
		return;
	}
	/* It has ended, or only returns now: detach, not join. */
	pthread_detach(thread);
	reader_free(r);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void reader_stop_all(struct reader *const *rs, size_t n)
{
	const struct timespec step = { 0, 20000000L };
	/* By the clock: on a loaded machine a 20-ms sleep takes longer. */
	const double until = mono_s() + READER_STOP_WAIT_MS / 1000.0;

	for (size_t i = 0; i < n; i++)
		if (rs[i] && rs[i]->thread_started)
			ask_to_stop(rs[i]);
	/*
	 * Interrupt blocking reads or opens until every thread has ended,
	 * for READER_STOP_WAIT_MS at most in all, whatever their number: a
	 * read that no signal interrupts (a hung device) must not hold up a
	 * stop or a reload.  Such a thread is left behind, detached, with
	 * its struct (it frees it when it ends); nobody takes what it
	 * queues, and nothing else it uses is freed under it.
	 */
	for (;;) {
		bool live = false, late = mono_s() >= until;

		for (size_t i = 0; i < n; i++) {
			if (!rs[i] || !rs[i]->thread_started ||
			    has_ended(rs[i]))
				continue;
			live = true;
			if (!late)
				pthread_kill(rs[i]->thread, READER_WAKE_SIGNAL);
		}
		if (!live || late)
			break;
		nanosleep(&step, NULL);
	}
	for (size_t i = 0; i < n; i++) {
		if (!rs[i])
			continue;
		if (rs[i]->thread_started)
			let_go(rs[i]);
		else
			reader_free(rs[i]);
	}
}

void reader_stop(struct reader *r)
{
	reader_stop_all(&r, 1);
}

/* The struct, once its thread (if any) is done with it. */
void reader_free(struct reader *r)
{
	explicit_bzero(r->queue, sizeof(r->queue));
	explicit_bzero(r->seed, sizeof(r->seed));
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	online_estimate_free(r->est);
	assessor_free(r->full);
	free(r);
}
