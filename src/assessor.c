// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The full SP 800-90B assessment of one source in a low-priority thread,
 * within a CPU budget.  See include/rngfeed/assessor.h for the contract.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/assessor.h"
#include "rngfeed/estimate.h"
#include "rngfeed/online_estimate.h"

struct assessor {
	struct assessor_params p;
	/* Two holders, the owner and the thread: the last to let go frees. */
	atomic_uint refs;

	/* Set once by assessor_free(), without the lock (see there). */
	atomic_bool stop;
	/* A reset (the same source restarts) or a forget (another source)
	 * asked for while the lock was busy: applied by whoever takes the
	 * lock next; after a forget there is no result meanwhile. */
	atomic_bool reset_pending, forget_pending;

	pthread_mutex_t lock;   /* guards everything below */
	pthread_cond_t cond;    /* a block, a reset, the stop */
	bool waiting;           /* the thread waits for a block, untimed */
	uint8_t *ring;          /* ring_blocks whole blocks */
	unsigned ring_blocks, next, held;
	unsigned fresh;         /* blocks added since the last snapshot */
	unsigned last_held;     /* blocks the last assessment saw */
	uint64_t generation;    /* bumped by a forget */
	uint64_t restarts;      /* bumped by a reset */
	double not_before;      /* CLOCK_MONOTONIC: the budget's next one */
	struct assessor_result res;
};

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

unsigned assessor_credit(double h, unsigned sample_bits, uint64_t samples,
			 size_t window_samples)
{
	double c;

	if (!(h > 0.0) || sample_bits == 0)
		return 0;
	/* A window not full yet: the predictors may still be learning. */
	if (samples < window_samples)
		h *= 15.0 / 16.0;
	c = floor(1024.0 * h / sample_bits);
	return c >= ONLINE_NO_LIMIT ? ONLINE_NO_LIMIT : (unsigned)c;
}

unsigned assessor_limit(const struct online_estimate_result *quick,
			const struct assessor_result *full, bool claimed,
			enum estimate_in_force *which)
{
	if (quick->estimates == 0 && quick->credit == ONLINE_NO_LIMIT) {
		*which = IN_FORCE_NONE;
		return 0;
	}
	if (full->error != 0) {
		/* No assessment: no credit until one succeeds. */
		*which = IN_FORCE_FULL;
		return 0;
	}
	if (full->learned.samples == 0) {
		*which = claimed ? IN_FORCE_FULL_PENDING : IN_FORCE_QUICK_SHARE;
		return claimed ? 0 : quick->credit / ASSESSOR_QUICK_DIVISOR;
	}
	if (quick->credit < full->learned.credit) {
		*which = IN_FORCE_QUICK;
		return quick->credit;
	}
	*which = IN_FORCE_FULL;
	return full->learned.credit;
}

const char *estimate_in_force_name(enum estimate_in_force which)
{
	static const char *const names[] = {
		[IN_FORCE_NONE] = "none", [IN_FORCE_QUICK_SHARE] = "quick/4",
		[IN_FORCE_QUICK] = "quick", [IN_FORCE_FULL] = "full",
		[IN_FORCE_FULL_PENDING] = "full pending",
	};

	return (unsigned)which < sizeof(names) / sizeof(names[0]) ? names[which] : "?";
}

static void release(struct assessor *a)
{
	if (atomic_fetch_sub(&a->refs, 1) != 1)
		return;
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	explicit_bzero(a->ring, (size_t)a->ring_blocks * MONITOR_BLOCK_BYTES); /* raw input */
	free(a->ring);
	free(a);
}

static const struct assessor_learned nothing_learned = {
	.h = -1.0, .credit = ONLINE_NO_LIMIT,
};

static void clear_result(struct assessor *a)
{
	a->res = (struct assessor_result){ .h = -1.0, .credit = ONLINE_NO_LIMIT,
					   .learned = nothing_learned };
}

/* Under the lock: the same source restarts: an empty window; what was
 * learned stays, and so does the budget's next time. */
static void apply_reset(struct assessor *a)
{
	explicit_bzero(a->ring, (size_t)a->ring_blocks * MONITOR_BLOCK_BYTES);
	a->next = a->held = a->fresh = a->last_held = 0;
	a->restarts++;
	atomic_store(&a->reset_pending, false);
}

/* Under the lock: another source: nothing kept, a running one void. */
static void apply_forget(struct assessor *a)
{
	apply_reset(a);
	a->generation++;
	a->not_before = 0.0;
	clear_result(a);
	atomic_store(&a->forget_pending, false);
}

static void apply_pending(struct assessor *a)
{
	if (atomic_load(&a->forget_pending))
		apply_forget(a);
	else if (atomic_load(&a->reset_pending))
		apply_reset(a);
}

static uint64_t held_samples(const struct assessor *a)
{
	return (uint64_t)a->held * MONITOR_BLOCK_BYTES * (a->p.sample_bits == 1 ? 8 : 1);
}

/* Under the lock: with p.grow, the window holds four times the samples of
 * the largest assessment so far (or is full), and that one did not cover
 * a whole window. */
static bool growth_due(const struct assessor *a)
{
	const uint64_t largest = a->res.learned.samples;
	const uint64_t ring = (uint64_t)a->ring_blocks * MONITOR_BLOCK_BYTES *
			      (a->p.sample_bits == 1 ? 8 : 1);
	const uint64_t want = 4 * largest < ring ? 4 * largest : ring;

	return a->p.grow && largest > 0 && largest < a->p.window_samples && a->fresh > 0 &&
	       held_samples(a) >= want && held_samples(a) > largest;
}

/* Under the lock: is an assessment due now?  *wait_until > 0: not yet,
 * but it will be then without another block. */
static bool due(const struct assessor *a, double now, double *wait_until)
{
	*wait_until = 0.0;
	if (a->held < ASSESSOR_FIRST_BLOCKS)
		return false;
	if (a->res.learned.samples == 0 && a->res.error == 0)
		return true;	/* the first one: whatever the budget */
	if (growth_due(a))
		return true;	/* a claimed credit's next size: the same */
	if (a->fresh * 4 < a->last_held || a->fresh == 0)
		return false;
	if (now < a->not_before) {
		*wait_until = a->not_before;
		return false;
	}
	return true;
}

/* Under the lock: the window, oldest block first, into @buf. */
static size_t snapshot(struct assessor *a, uint8_t *buf)
{
	const unsigned first = (a->next + a->ring_blocks - a->held) % a->ring_blocks;

	for (unsigned k = 0; k < a->held; k++)
		memcpy(buf + (size_t)k * MONITOR_BLOCK_BYTES,
		       a->ring + (size_t)((first + k) % a->ring_blocks) * MONITOR_BLOCK_BYTES,
		       MONITOR_BLOCK_BYTES);
	a->last_held = a->held;
	a->fresh = 0;
	return (size_t)a->held * MONITOR_BLOCK_BYTES;
}

/* H of @n raw bytes: byte samples as they are, bit samples one a byte.
 * -EDOM (one symbol only) is H = 0, as --assess says "no entropy". */
static int assess(const uint8_t *raw, size_t n, unsigned sample_bits, uint8_t *bits,
		  double *h, uint64_t *samples)
{
	struct est_report *rep = malloc(sizeof(*rep));
	const uint8_t *s = raw;
	int rc;

	if (!rep)
		return -ENOMEM;
	*samples = n;
	if (sample_bits == 1) {
		est_bitstring(raw, n, 8, bits);
		s = bits;
		*samples = n * 8;
	}
	rc = est_assess(s, (size_t)*samples, sample_bits, rep);
	if (rc == 0)
		*h = rep->h_assessed;
	else if (rc == -EDOM)
		*h = 0.0, rc = 0;
	free(rep);
	return rc;
}

/* Nice ASSESSOR_NICE (5): a third of a normal thread's share of a busy
 * CPU.  Not 19, nor SCHED_IDLE: the process's exit waits for every thread
 * to run once more, and at nice 19 on a loaded machine (load 12 on 2
 * cores) that took up to 2.2 s after a SIGTERM (test_sigterm.sh; 10: 1.0 s;
 * 5: within the 1 s); SCHED_IDLE would also starve it.  The budget bounds
 * the cost.  The shipped unit allows setpriority (its filter denies the
 * rest of @resources); another seccomp filter may refuse it (EPERM): then
 * the budget alone does. */
static void lower_priority(void)
{
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), ASSESSOR_NICE);
	/* Named, so that top -H, ps -L and /proc/PID/task/TID/comm show
	 * which thread this is (and its nice value beside it). */
	(void)pthread_setname_np(pthread_self(), "rngfeed-assess");
}

void assessor_learn(struct assessor_learned *l, const struct assessor_learned *now,
		    bool only_lower)
{
	if (l->samples == 0 || (now->samples >= l->samples && !only_lower)) {
		*l = *now;
		return;
	}
	if (now->credit < l->credit) {
		l->h = now->h;
		l->credit = now->credit;
		l->done_at = now->done_at;
	}
	if (now->samples > l->samples)
		l->samples = now->samples;
}

/* Under the lock: the assessment just stored in res, into what was
 * learned: @only_lower when the source restarted while it ran. */
static void learn(struct assessor *a, bool only_lower)
{
	const struct assessor_learned now = {
		.h = a->res.h, .credit = a->res.credit, .samples = a->res.samples,
		.done_at = a->res.done_at,
	};

	assessor_learn(&a->res.learned, &now, only_lower);
}

static void *assessor_thread(void *arg)
{
	struct assessor *a = arg;
	const size_t window_bytes = (size_t)a->ring_blocks * MONITOR_BLOCK_BYTES;
	uint8_t *buf = malloc(window_bytes);
	uint8_t *bits = a->p.sample_bits == 1 ? malloc(window_bytes * 8) : NULL;

	lower_priority();
	pthread_mutex_lock(&a->lock);
	while (!atomic_load(&a->stop)) {
		double wait_until, h = 0.0, cpu0, cost;
		uint64_t generation, restarts, samples = 0;
		size_t n;
		int rc;

		apply_pending(a);
		if (!due(a, clock_s(CLOCK_MONOTONIC), &wait_until)) {
			/* At most a minute: assessor_free() wakes the thread
			 * without the lock, so a wake-up can come just before
			 * the wait; the stop is seen within a minute anyway
			 * (nobody waits for it; an idle daemon is not woken
			 * every second). */
			const double now = clock_s(CLOCK_MONOTONIC);
			const double until = wait_until > 0.0 && wait_until < now + 60.0
						     ? wait_until : now + 60.0;
			struct timespec ts = {
				.tv_sec = (time_t)until,
				.tv_nsec = (long)((until - floor(until)) * 1e9),
			};

			a->waiting = wait_until <= 0.0;
			pthread_cond_timedwait(&a->cond, &a->lock, &ts);
			a->waiting = false;
			continue;
		}
		if (!buf || (a->p.sample_bits == 1 && !bits)) {
			a->res.error = -ENOMEM;
			a->res.credit = 0;
			break;
		}
		n = snapshot(a, buf);
		generation = a->generation;
		restarts = a->restarts;
		pthread_mutex_unlock(&a->lock);

		cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
		rc = assess(buf, n, a->p.sample_bits, bits, &h, &samples);
		cost = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
		explicit_bzero(buf, n);
		if (bits)
			explicit_bzero(bits, n * 8);

		pthread_mutex_lock(&a->lock);
		/* cost / (cost + wait) = budget */
		a->not_before = clock_s(CLOCK_MONOTONIC) + cost * (1.0 / a->p.budget - 1.0);
		if (generation != a->generation || atomic_load(&a->forget_pending))
			continue;	/* forgotten meanwhile: another source */
		if (rc < 0) {
			/* No assessment: no credit until one succeeds. */
			a->res.error = rc;
			a->res.credit = 0;
			continue;
		}
		a->res.h = h;
		a->res.credit = assessor_credit(h, a->p.sample_bits, samples,
						a->p.window_samples);
		a->res.samples = samples;
		a->res.assessments++;
		a->res.done_at = clock_s(CLOCK_MONOTONIC);
		a->res.cpu_s = cost;
		a->res.error = 0;
		learn(a, restarts != a->restarts || atomic_load(&a->reset_pending));
	}
	pthread_mutex_unlock(&a->lock);
	free(buf);
	free(bits);
	release(a);
	return NULL;
}

int assessor_new(const struct assessor_params *p, struct assessor **out)
{
	size_t bytes;
	pthread_condattr_t ca;
	pthread_attr_t ta;
	pthread_t thread;
	struct assessor *a;
	int ret;

	if ((p->sample_bits != 8 && p->sample_bits != 1) ||
	    p->window_samples < ASSESSOR_MIN_SAMPLES || p->window_samples > (1u << 30) ||
	    !(p->budget > 0.0 && p->budget <= 1.0))
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->p = *p;
	bytes = (p->window_samples * p->sample_bits + 7) / 8;
	a->ring_blocks = (unsigned)((bytes + MONITOR_BLOCK_BYTES - 1) / MONITOR_BLOCK_BYTES);
	if (a->ring_blocks < ASSESSOR_FIRST_BLOCKS)
		a->ring_blocks = ASSESSOR_FIRST_BLOCKS;
	a->ring = malloc((size_t)a->ring_blocks * MONITOR_BLOCK_BYTES);
	if (!a->ring) {
		free(a);
		return -ENOMEM;
	}
	clear_result(a);
	if (p->recall.samples > 0 && p->recall.h >= 0.0)
		a->res.learned = p->recall;
	atomic_init(&a->refs, 2);
	atomic_init(&a->stop, false);
	atomic_init(&a->reset_pending, false);
	atomic_init(&a->forget_pending, false);
	pthread_mutex_init(&a->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* Detached: assessor_free() never waits for an assessment. */
	pthread_attr_init(&ta);
	pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&thread, &ta, assessor_thread, a);
	pthread_attr_destroy(&ta);
	if (ret != 0) {
		atomic_store(&a->refs, 1);
		release(a);
		return -ret;
	}
	*out = a;
	return 0;
}

/* Called by the main thread (a stop, a reload): it must not wait for the
 * lock, which a nice-5 thread may hold while it is preempted. */
struct assessor *assessor_free(struct assessor *a)
{
	if (a) {
		atomic_store(&a->stop, true);
		pthread_cond_broadcast(&a->cond);
		release(a);
	}
	return NULL;
}

/* The reader's thread calls reset and add: they never wait for the lock
 * either (a reader waiting for it could not be stopped in time). */
void assessor_reset(struct assessor *a)
{
	if (!a)
		return;
	atomic_store(&a->reset_pending, true);
	if (pthread_mutex_trylock(&a->lock) == 0) {
		apply_pending(a);
		pthread_mutex_unlock(&a->lock);
	}
}

void assessor_forget(struct assessor *a)
{
	if (!a)
		return;
	atomic_store(&a->forget_pending, true);
	if (pthread_mutex_trylock(&a->lock) == 0) {
		apply_pending(a);
		pthread_mutex_unlock(&a->lock);
	}
}

bool assessor_add(struct assessor *a, const uint8_t block[MONITOR_BLOCK_BYTES])
{
	double wait_until;
	bool wake;

	if (!a)
		return false;
	/* Busy: this block stays out of the window (as a discarded one). */
	if (pthread_mutex_trylock(&a->lock) != 0)
		return false;
	apply_pending(a);
	memcpy(a->ring + (size_t)a->next * MONITOR_BLOCK_BYTES, block, MONITOR_BLOCK_BYTES);
	a->next = (a->next + 1) % a->ring_blocks;
	if (a->held < a->ring_blocks)
		a->held++;
	a->fresh++;
	/* Due now, or due later by the budget while the thread waits for a
	 * block only: it sets its timer. */
	wake = due(a, clock_s(CLOCK_MONOTONIC), &wait_until) ||
	       (wait_until > 0.0 && a->waiting);
	pthread_mutex_unlock(&a->lock);
	if (wake)
		pthread_cond_signal(&a->cond);
	return true;
}

int assessor_get(struct assessor *a, struct assessor_result *r)
{
	if (!a) {
		*r = (struct assessor_result){ .h = -1.0, .credit = ONLINE_NO_LIMIT,
					       .learned = nothing_learned };
		return 0;
	}
	/* Never waits (see assessor_free()). */
	if (atomic_load(&a->forget_pending)) {
		*r = (struct assessor_result){ .h = -1.0, .credit = ONLINE_NO_LIMIT,
					       .learned = nothing_learned };
		return 0;
	}
	if (pthread_mutex_trylock(&a->lock) != 0)
		return -EBUSY;
	*r = a->res;
	r->first_due = a->held >= ASSESSOR_FIRST_BLOCKS && a->res.learned.samples == 0 &&
		       a->res.error == 0 && !atomic_load(&a->reset_pending);
	pthread_mutex_unlock(&a->lock);
	return 0;
}
