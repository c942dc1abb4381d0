// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/assessor.h"
#include "rngfeed/log.h"
#include "rngfeed/online_estimate.h"
#include "rngfeed/reader.h"
#include "reader_internal.h"

const char *reader_state_name(enum reader_state s)
{
	static const char *const names[] = {
		[READER_OPENING] = "opening",   [READER_STARTUP] = "start-up",
		[READER_RUNNING] = "running",   [READER_BACKOFF] = "error",
		[READER_DISABLED] = "disabled", [READER_STOPPED] = "stopped",
		[READER_FINISHED] = "finished",
	};

	return (unsigned int)s < sizeof(names) / sizeof(names[0]) ? names[s]
								   : "?";
}

void reader_failure_names(unsigned int failed, char *buf, size_t len)
{
	monitor_failure_names(failed, buf, len);
}

static bool stopping(struct reader *r);

static void notify(struct reader *r)
{
	uint64_t one = 1;

	/* Once stopped nobody listens, and a thread left behind may run on
	 * after the daemon closed the fd (its number used again). */
	if (r->p.notify_fd >= 0 && !stopping(r) &&
	    write(r->p.notify_fd, &one, sizeof(one)) < 0) {
		/* The counter cannot overflow in practice; a full eventfd
		 * already wakes the main loop. */
	}
}

static bool stopping(struct reader *r)
{
	/* Relaxed: see struct reader. */
	return atomic_load_explicit(&r->stop, memory_order_relaxed);
}

static void set_state(struct reader *r, enum reader_state s,
		      const char *reason)
{
	/* A reason longer than the field (a source's sentence may be) is
	 * cut, as one in a status line would be. */
	const size_t len = reason ? strnlen(reason, sizeof(r->stats.reason) - 1) : 0;

	pthread_mutex_lock(&r->lock);
	r->stats.state = s;
	if (len)
		memcpy(r->stats.reason, reason, len);
	r->stats.reason[len] = '\0';
	pthread_mutex_unlock(&r->lock);
	notify(r);
}

/* Sleep up to @seconds, or until stopped (false), or, when @device,
 * until a uevent says a device it waits for may be there. */
static bool rest(struct reader *r, double seconds, bool device)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)seconds;
	until.tv_nsec += (long)((seconds - floor(seconds)) * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&r->lock);
	while (!stopping(r) && !(device && r->look_again) &&
	       pthread_cond_timedwait(&r->cond, &r->lock, &until) != ETIMEDOUT)
		;
	if (device)
		r->look_again = false;
	pthread_mutex_unlock(&r->lock);
	return !stopping(r);
}

/* Wait until the main loop wants a block and has room for it. */
static bool wait_demand(struct reader *r)
{
	pthread_mutex_lock(&r->lock);
	while (!stopping(r) &&
	       (r->requested == 0 || r->queued == READER_QUEUE))
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
	return !stopping(r);
}

static double next_backoff(const struct reader *r, double backoff)
{
	double next = backoff * 2;

	return next > r->p.retry_max_s ? r->p.retry_max_s : next;
}

static void count_failures(struct reader_stats *s, unsigned int failed)
{
	for (size_t k = 0; k < MONITOR_N_TESTS; k++)
		if (monitor_tests[k].key && (failed & monitor_tests[k].bit))
			s->test_failures[k]++;
}

/* Under the lock: the latest full assessment, the on-line estimate too
 * when @quick (only the reader thread may read it), and the limit they
 * set on the credit. */
static void publish_estimates(struct reader *r, bool quick)
{
	if (quick)
		online_estimate_get(r->est, &r->stats.estimate);
	/* Busy (never waited for): the last result stands. */
	(void)assessor_get(r->full, &r->stats.full);
	r->stats.credit_limit = assessor_limit(&r->stats.estimate, &r->stats.full,
					       r->p.claimed, &r->stats.in_force);
}

/*
 * A claimed credit is 0 until the source's first full assessment: rather
 * than hand over blocks nobody may credit (a regular file's are spent),
 * wait for it once the window holds enough (about 0.1 s of CPU at nice
 * 5), in slices, so that a stop is seen at once.  false when stopped.
 */
static bool wait_first_assessment(struct reader *r)
{
	struct assessor_result res;

	if (!r->p.claimed || r->p.bulk)
		return true;
	for (;;) {
		if (assessor_get(r->full, &res) == 0 && !res.first_due)
			return true;
		if (!rest(r, 0.02, false))
			return false;
	}
}

/*
 * Read, test and hand over blocks until the source errors, ends, fails
 * permanently, or the reader is stopped.  Returns the state to go to
 * (READER_BACKOFF, READER_DISABLED or READER_FINISHED) with a reason, or
 * READER_STOPPED.  @read_total counts the bytes read from this open
 * source, for the finished line.
 */
static enum reader_state run_source(struct reader *r, struct source *src,
				    struct monitor *mon, uint8_t *block,
				    struct drbg_df *df, char *reason,
				    size_t reason_len, double *backoff,
				    uint64_t *read_total, int *read_err)
{
	const char *name = r->p.source.driver->name;

	for (;;) {
		struct monitor_verdict v;
		unsigned int generation;
		uint8_t seed[DRBG_SEEDLEN];
		bool derived = false;
		ssize_t n;

		if (!wait_demand(r))
			return READER_STOPPED;
		pthread_mutex_lock(&r->lock);
		generation = r->generation;
		pthread_mutex_unlock(&r->lock);
		n = source_read(src, block, MONITOR_BLOCK_BYTES, &r->stop);
		if (stopping(r)) {
			explicit_bzero(block, MONITOR_BLOCK_BYTES);
			return READER_STOPPED;
		}
		if (n < 0) {
			char desc[SOURCE_WHY_LEN], why[160];

			*read_err = (int)n;
			source_describe(src, desc, sizeof(desc));
			snprintf(reason, reason_len, "read failed: %s (%s)",
				 source_why_failed(src, (int)n, why,
						   sizeof(why)),
				 desc);
			return READER_BACKOFF;
		}
		pthread_mutex_lock(&r->lock);
		r->stats.raw_bytes += (uint64_t)n;
		pthread_mutex_unlock(&r->lock);
		*read_total += (uint64_t)n;
		if ((size_t)n < MONITOR_BLOCK_BYTES) {
			char desc[160];

			/* A partial block is never tested, so never used. */
			explicit_bzero(block, MONITOR_BLOCK_BYTES);
			if (!source_is_finite(src)) {
				snprintf(reason, reason_len,
					 "end of input after %zd bytes of a "
					 "block", n);
				return READER_BACKOFF;
			}
			source_describe(src, desc, sizeof(desc));
			snprintf(reason, reason_len,
				 "finished: end of %s after %llu bytes%s; not "
				 "read again", desc,
				 (unsigned long long)*read_total,
				 n > 0 ? " (the last part-block unused)" : "");
			return READER_FINISHED;
		}
		monitor_test_block(mon, block, &v);
		/* Into the estimate's window before it is queued (while the
		 * window fills, its estimate runs now: the block's credit
		 * then comes from one that saw it).  An estimator error
		 * leaves the source at credit 0 (online_estimate.c). */
		if (v.usable) {
			online_estimate_add(r->est, block);
			(void)assessor_add(r->full, block);
		}
		/* Outside the lock: the main loop takes blocks meanwhile. */
		if (v.usable && df)
			derived = drbg_df_derive(df, block, MONITOR_BLOCK_BYTES,
						 seed) == 0;

		pthread_mutex_lock(&r->lock);
		if (v.usable)
			publish_estimates(r, true);
		if (v.usable && generation != r->generation) {
			/* Read before a discard (a VM clone may hold the
			 * same block): never used. */
			v.usable = false;
		} else if (v.usable) {
			if (derived)
				memcpy(r->seed[r->queued], seed, sizeof(seed));
			r->derived[r->queued] = derived;
			memcpy(r->queue[r->queued++], block,
			       MONITOR_BLOCK_BYTES);
			if (r->requested > 0)
				r->requested--;
			r->stats.blocks_passed++;
			if (r->stats.state != READER_RUNNING) {
				r->stats.state = READER_RUNNING;
				r->stats.reason[0] = '\0';
			}
		} else if (v.failed) {
			r->stats.blocks_failed++;
			count_failures(&r->stats, v.failed);
		}
		pthread_mutex_unlock(&r->lock);
		explicit_bzero(block, MONITOR_BLOCK_BYTES);
		explicit_bzero(seed, sizeof(seed));
		if (v.usable) {
			*backoff = r->p.retry_initial_s;
			notify(r);
			/* The window's budgeted estimate, while the main
			 * loop works on the block. */
			if (online_estimate_update(r->est) != 0) {
				pthread_mutex_lock(&r->lock);
				publish_estimates(r, true);
				pthread_mutex_unlock(&r->lock);
			}
			if (!wait_first_assessment(r))
				return READER_STOPPED;
			continue;
		}
		if (v.failed) {
			char tests[200];

			reader_failure_names(v.failed, tests, sizeof(tests));
			log_msg(v.class == MONITOR_PERMANENT ? LOG_WARNING
							     : LOG_INFO,
				"%s: block failed %s%s; discarded", name, tests,
				v.startup_failed ? " during the start-up test"
						 : "");
			if (v.class == MONITOR_PERMANENT) {
				snprintf(reason, reason_len,
					 "failed health tests: %s%s", tests,
					 v.consecutive_failures > 1
						 ? " (consecutive failures)"
						 : "");
				return READER_DISABLED;
			}
		}
		notify(r);
	}
}

/*
 * Record what is behind a newly opened source and log it.  A credit that
 * was the device's default was decided for the device found when the
 * slot opened; the first open and every reopen check what was actually
 * opened, and its blocks are credited at most what that allows.
 */
static void opened(struct reader *r, struct source *src)
{
	const struct source_config *cfg = &r->p.source;
	unsigned int cap = SOURCE_CREDIT_MAX;
	char desc[160], identity[sizeof(r->identity)];
	bool other;

	source_describe(src, desc, sizeof(desc));
	source_identity(src, identity, sizeof(identity));
	/* What was learned of one device says nothing of another (the
	 * hw_random device current now may not be the one it was). */
	other = r->identity[0] && strcmp(identity, r->identity) != 0;
	if (other)
		assessor_forget(r->full);
	if (cfg->credit_from_device) {
		int c = source_opened_credit(src);

		if (c >= 0)
			cap = (unsigned int)c;
	}
	pthread_mutex_lock(&r->lock);
	snprintf(r->stats.description, sizeof(r->stats.description), "%s",
		 desc);
	memcpy(r->identity, identity, sizeof(identity));
	r->opened_credit = cap;
	pthread_mutex_unlock(&r->lock);
	log_info("%s: opened %s; start-up test", cfg->driver->name, desc);
	if (other)
		log_info("%s: its full assessment was of another device: "
			 "assessed afresh", cfg->driver->name);
	if (cfg->credit >= 0 && cap < (unsigned int)cfg->credit)
		log_warn("%s: %s is not what its credit %d/1024 was decided "
			 "for: credited at most %u/1024 while it is open",
			 cfg->driver->name, desc, cfg->credit, cap);
}

static double absent_recheck(const struct reader *r)
{
	return r->p.absent_recheck_s > 0 ? r->p.absent_recheck_s
					 : READER_ABSENT_RECHECK_S;
}

/* A plugged device (SOURCE_F_PLUGGED) whose read found it gone. */
static bool gone_away(const struct reader *r, enum reader_state next,
		      int read_err)
{
	return next == READER_BACKOFF && read_err == -ENODEV &&
	       (r->p.source.driver->flags & SOURCE_F_PLUGGED);
}

static void *reader_thread(void *arg)
{
	struct reader *r = arg;
	const char *name = r->p.source.driver->name;
	struct monitor *mon = NULL;
	struct drbg_df *df = NULL;
	uint8_t *block = NULL;
	double backoff = r->p.retry_initial_s;
	/* Owned by this thread from here on. */
	struct source *src = r->first;
	bool reopen = false;         /* the source was open before */
	bool absent = false;         /* "not there" already said */
	enum reader_state end = READER_STOPPED;
	sigset_t wake;
	int ret;

	r->first = NULL;
	/* Only this thread's blocking calls should see the wake signal. */
	sigemptyset(&wake);
	sigaddset(&wake, READER_WAKE_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);

	block = malloc(MONITOR_BLOCK_BYTES);
	ret = monitor_new(&r->p.monitor, &mon);
	if (!block || ret < 0) {
		set_state(r, READER_STOPPED, "cannot set up the monitor");
		goto out;
	}
	/* Without it the main loop derives the seed itself, as before. */
	if (r->p.bulk && drbg_df_new(&df) < 0)
		df = NULL;
	if (src)
		opened(r, src);
	while (!stopping(r)) {
		char why[SOURCE_WHY_LEN], reason[300];
		enum reader_state next;
		uint64_t read_total = 0;
		int read_err = 0;

		if (!src) {
			/* While it is missing the state stays as it was
			 * said: no wake-up of the main loop every second. */
			if (!absent)
				set_state(r, READER_OPENING, NULL);
			ret = source_open(&src, &r->p.source, why,
					  sizeof(why));
			if (stopping(r))
				break;
			if (ret < 0 && source_open_error_is_absent(ret)) {
				double wait = fmin(r->p.retry_initial_s,
						   absent_recheck(r));

				/* Not there yet: look again soon, without
				 * doubling, and say so once. */
				if (!absent) {
					pthread_mutex_lock(&r->lock);
					r->stats.errors++;
					pthread_mutex_unlock(&r->lock);
					log_warn("%s: %s; looking for it "
						 "every %g s", name, why, wait);
					set_state(r, READER_BACKOFF, why);
					absent = true;
				}
				if (!rest(r, wait, true))
					break;
				continue;
			}
			absent = false;
			if (ret < 0) {
				source_open_failure_reason(&r->p.source, ret, why, reopen,
						    reason, sizeof(reason));
				next = READER_BACKOFF;
				goto back_off;
			}
			opened(r, src);
		} else if (reopen) {
			log_info("%s: start-up test again", name);
		}
		reopen = true;
		monitor_reset(mon);
		/* Another start: the windows fill again; the on-line
		 * estimate starts over, the full assessment keeps what it
		 * learned of this source (assessor.h). */
		assessor_reset(r->full);
		pthread_mutex_lock(&r->lock);
		online_estimate_reset(r->est);
		publish_estimates(r, true);
		pthread_mutex_unlock(&r->lock);
		set_state(r, READER_STARTUP, NULL);
		next = run_source(r, src, mon, block, df, reason,
				  sizeof(reason), &backoff, &read_total,
				  &read_err);
		if (next == READER_STOPPED)
			break;
		if (next == READER_FINISHED) {
			log_notice("%s: %s", name, reason);
			set_state(r, READER_FINISHED, reason);
			end = READER_FINISHED;
			break;
		}
		/* After a health-test failure the same open source is tested
		 * again; after an error or an end of input it is reopened. */
		if (next != READER_DISABLED) {
			source_close(src);
			src = NULL;
		}
back_off:
		pthread_mutex_lock(&r->lock);
		if (next == READER_DISABLED)
			r->stats.disables++;
		else
			r->stats.errors++;
		pthread_mutex_unlock(&r->lock);
		if (gone_away(r, next, read_err)) {
			/* Unplugged: looked for as one not there yet (within
			 * a second, at each uevent), not after a back-off
			 * that would keep a stick plugged back in idle. */
			double wait = fmin(backoff, absent_recheck(r));

			log_warn("%s: %s; looking for it again every %g s",
				 name, reason, wait);
			set_state(r, next, reason);
			if (!rest(r, wait, true))
				break;
			continue;
		}
		log_msg(next == READER_DISABLED ? LOG_ERR : LOG_WARNING,
			"%s: %s%s; retrying in %g s", name,
			next == READER_DISABLED ? "disabled: " : "", reason,
			backoff);
		set_state(r, next, reason);
		if (!rest(r, backoff, false))
			break;
		backoff = next_backoff(r, backoff);
	}
out:
	source_close(src);
	if (block)
		explicit_bzero(block, MONITOR_BLOCK_BYTES);
	free(block);
	drbg_df_free(df);
	monitor_free(mon);
	pthread_mutex_lock(&r->lock);
	r->stats.state = end;
	pthread_mutex_unlock(&r->lock);
	notify(r);
	/* A reader_stop() that gave up on this thread left it the struct. */
	if (atomic_exchange_explicit(&r->ended, READER_ENDED,
				     memory_order_acq_rel) == READER_ABANDONED)
		reader_free(r);
	return NULL;
}

int reader_start(struct reader **out, const struct reader_params *p)
{
	pthread_condattr_t ca;
	struct reader *r;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	ret = online_estimate_new(p->monitor.sample_bits, ONLINE_BUDGET, &r->est);
	if (ret < 0) {
		free(r);
		return ret;
	}
	{
		const struct assessor_params ap = {
			.sample_bits = p->monitor.sample_bits,
			.window_samples = p->assess_samples ? p->assess_samples
							    : ASSESSOR_DEFAULT_SAMPLES,
			.budget = p->assess_budget > 0.0 ? p->assess_budget
							 : ASSESSOR_DEFAULT_BUDGET,
			.grow = p->claimed,
			.recall = p->recall.learned,
		};

		ret = p->assess_budget < 0.0 ? 0 : assessor_new(&ap, &r->full);
	}
	if (ret < 0) {
		online_estimate_free(r->est);
		free(r);
		return ret;
	}
	r->p = *p;
	if (p->recall.learned.samples > 0)
		snprintf(r->identity, sizeof(r->identity), "%s", p->recall.identity);
	r->first = p->opened;
	r->p.opened = NULL;
	atomic_init(&r->stop, false);
	atomic_init(&r->ended, READER_LIVE);
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cond, &ca);
	pthread_condattr_destroy(&ca);
	r->stats.state = READER_OPENING;
	publish_estimates(r, true);
	/* pthread_create() orders everything above before the thread. */
	ret = pthread_create(&r->thread, NULL, reader_thread, r);
	if (ret != 0) {
		/* The caller keeps p->opened. */
		pthread_cond_destroy(&r->cond);
		pthread_mutex_destroy(&r->lock);
		online_estimate_free(r->est);
		assessor_free(r->full);
		free(r);
		return -ret;
	}
	r->thread_started = true;
	*out = r;
	return 0;
}
void reader_request_block(struct reader *r)
{
	bool wake;

	pthread_mutex_lock(&r->lock);
	/* One block at a time, and a request stands until it is met: a
	 * fast source is never read ahead of need, and a slow one is not
	 * starved by a fast one answering first (its block is absorbed when
	 * it comes). */
	wake = r->requested == 0 && r->queued == 0;
	if (wake)
		r->requested = r->p.bulk ? READER_QUEUE : 1;
	pthread_mutex_unlock(&r->lock);
	/* After the unlock: woken under it, the reader only blocked on the
	 * mutex again (two more futex calls per block). */
	if (wake)
		pthread_cond_broadcast(&r->cond);
}

int reader_take(struct reader *r, uint8_t block[MONITOR_BLOCK_BYTES])
{
	uint8_t seed[DRBG_SEEDLEN];
	bool derived;
	int got = reader_take_derived(r, block, seed, &derived);

	explicit_bzero(seed, sizeof(seed));
	return got;
}

int reader_take_derived(struct reader *r, uint8_t block[MONITOR_BLOCK_BYTES],
			uint8_t seed[DRBG_SEEDLEN], bool *derived)
{
	bool full = false;
	int got = 0;

	*derived = false;
	pthread_mutex_lock(&r->lock);
	if (r->queued > 0) {
		memcpy(block, r->queue[0], MONITOR_BLOCK_BYTES);
		*derived = r->derived[0];
		if (*derived)
			memcpy(seed, r->seed[0], DRBG_SEEDLEN);
		r->queued--;
		memmove(r->queue[0], r->queue[1],
			(size_t)r->queued * MONITOR_BLOCK_BYTES);
		memmove(r->seed[0], r->seed[1], (size_t)r->queued * DRBG_SEEDLEN);
		memmove(r->derived, r->derived + 1,
			(size_t)r->queued * sizeof(r->derived[0]));
		explicit_bzero(r->queue[r->queued], MONITOR_BLOCK_BYTES);
		explicit_bzero(r->seed[r->queued], DRBG_SEEDLEN);
		/* Room for a block matters to wait_demand() only when the
		 * queue was full; otherwise a wake-up finds no request and
		 * sleeps again. */
		full = r->queued + 1 == READER_QUEUE && r->requested > 0;
		got = 1;
	}
	pthread_mutex_unlock(&r->lock);
	if (full)
		pthread_cond_broadcast(&r->cond);
	return got;
}

void reader_discard(struct reader *r)
{
	pthread_mutex_lock(&r->lock);
	explicit_bzero(r->queue, sizeof(r->queue));
	explicit_bzero(r->seed, sizeof(r->seed));
	r->queued = 0;
	r->generation++;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

void reader_device_changed(struct reader *r)
{
	pthread_mutex_lock(&r->lock);
	r->look_again = true;
	pthread_mutex_unlock(&r->lock);
	pthread_cond_broadcast(&r->cond);
}

unsigned int reader_estimate_credit(struct reader *r)
{
	unsigned int credit;

	pthread_mutex_lock(&r->lock);
	credit = r->stats.credit_limit;
	pthread_mutex_unlock(&r->lock);
	return credit;
}

unsigned int reader_opened_credit(struct reader *r)
{
	unsigned int credit;

	pthread_mutex_lock(&r->lock);
	credit = r->opened_credit;
	pthread_mutex_unlock(&r->lock);
	return credit;
}

void reader_get_stats(struct reader *r, struct reader_stats *out)
{
	pthread_mutex_lock(&r->lock);
	/* A full assessment may have ended since the last block. */
	publish_estimates(r, false);
	*out = r->stats;
	pthread_mutex_unlock(&r->lock);
}

void reader_memory(struct reader *r, struct reader_memory *out)
{
	pthread_mutex_lock(&r->lock);
	/* An assessment may have ended since the last block. */
	publish_estimates(r, false);
	*out = (struct reader_memory){ .learned = r->stats.full.learned };
	memcpy(out->identity, r->identity, sizeof(out->identity));
	pthread_mutex_unlock(&r->lock);
}

const struct reader_params *reader_params(const struct reader *r)
{
	return &r->p;
}
