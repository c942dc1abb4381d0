// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * On-line min-entropy estimate of one source: a window of tested blocks and
 * when to run estimate.h's MCV, Markov and lag estimators on it.  See
 * include/rngfeed/online_estimate.h for the contract and the choices.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rngfeed/estimate.h"
#include "rngfeed/online_estimate.h"

#define WINDOW_BYTES (ONLINE_WINDOW_BLOCKS * MONITOR_BLOCK_BYTES)

struct online_estimate {
	unsigned sample_bits;
	double budget;
	uint8_t *ring;          /* ONLINE_WINDOW_BLOCKS whole blocks */
	unsigned next;          /* the ring slot the next block goes to */
	unsigned held;          /* blocks in the ring, up to the window */
	unsigned fresh;         /* blocks added since the last estimate */
	double not_before;      /* CLOCK_MONOTONIC: the budget's next estimate */
	struct online_estimate_result res;
};

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int online_estimate_new(unsigned sample_bits, double budget, struct online_estimate **out)
{
	struct online_estimate *e;

	if ((sample_bits != 8 && sample_bits != 1) || !(budget >= 0.0 && budget <= 1.0))
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->ring = malloc(WINDOW_BYTES);
	if (!e->ring) {
		free(e);
		return -ENOMEM;
	}
	e->sample_bits = sample_bits;
	e->budget = budget;
	online_estimate_reset(e);
	*out = e;
	return 0;
}

struct online_estimate *online_estimate_free(struct online_estimate *e)
{
	if (e) {
		explicit_bzero(e->ring, WINDOW_BYTES); /* raw input */
		free(e->ring);
		free(e);
	}
	return NULL;
}

void online_estimate_reset(struct online_estimate *e)
{
	explicit_bzero(e->ring, WINDOW_BYTES);
	e->next = e->held = e->fresh = 0;
	e->not_before = 0.0;
	e->res = (struct online_estimate_result){ .h = -1.0, .h_mcv = -1.0,
						   .h_markov = -1.0, .h_lag = -1.0,
						   .credit = ONLINE_NO_LIMIT };
}

/* While the window fills: at 1, 2, 4, 8 and 16 blocks, and when full
 * (about twice a full window's cost in all, once per start). */
static bool growth_point(unsigned held)
{
	return (held & (held - 1)) == 0 || held == ONLINE_WINDOW_BLOCKS;
}

/* The lag predictor on bit samples: one symbol per byte (k = 2). */
static int lag_bits(const uint8_t *s, size_t n, struct est_result *r)
{
	uint8_t *bits = malloc(n * 8);
	int rc;

	if (!bits)
		return -ENOMEM;
	est_bitstring(s, n, 8, bits);
	rc = est_lag(bits, n * 8, 2, r);
	explicit_bzero(bits, n * 8);
	free(bits);
	return rc;
}

/*
 * The three estimates over the window, in bits per sample.  Markov is
 * defined on bits: per byte sample it is 8 x its per-bit figure.  An
 * estimator short of samples (-ENODATA) is left out.
 */
static int estimate(struct online_estimate *e)
{
	const size_t n = (size_t)e->held * MONITOR_BLOCK_BYTES;
	const bool bytes = e->sample_bits == 8;
	const double width = e->sample_bits;
	struct est_result r;
	double h = width;
	int rc;

	rc = bytes ? est_mcv(e->ring, n, 256, &r) : est_mcv_bits(e->ring, n, 8, &r);
	if (rc < 0 && rc != -ENODATA)
		return rc;
	e->res.h_mcv = rc < 0 ? -1.0 : r.h;
	rc = est_markov(e->ring, n, 8, &r);
	if (rc < 0 && rc != -ENODATA)
		return rc;
	e->res.h_markov = rc < 0 ? -1.0 : fmin(width, r.h * (bytes ? 8.0 : 1.0));
	rc = bytes ? est_lag(e->ring, n, 256, &r) : lag_bits(e->ring, n, &r);
	if (rc < 0 && rc != -ENODATA)
		return rc;
	e->res.h_lag = rc < 0 ? -1.0 : r.h;

	if (e->res.h_mcv >= 0.0)
		h = fmin(h, e->res.h_mcv);
	if (e->res.h_markov >= 0.0)
		h = fmin(h, e->res.h_markov);
	if (e->res.h_lag >= 0.0)
		h = fmin(h, e->res.h_lag);
	/* Nothing ran: no estimate, no credit. */
	if (e->res.h_mcv < 0.0 && e->res.h_markov < 0.0 && e->res.h_lag < 0.0)
		h = 0.0;
	e->res.h = h > 0.0 ? h : 0.0;
	e->res.samples = (uint32_t)(n * (bytes ? 1 : 8));
	e->res.full = e->held == ONLINE_WINDOW_BLOCKS;
	/* Counts from the first block on (issue 25): a short window's bound
	 * is wide and low, which only lowers the credit (see the header). */
	e->res.credit = (unsigned)floor(1024.0 * e->res.h / width);
	e->res.done_at = clock_s(CLOCK_MONOTONIC);
	if (e->res.credit > ONLINE_NO_LIMIT)
		e->res.credit = ONLINE_NO_LIMIT;
	e->res.estimates++;
	return 0;
}

/* One estimate now; the budget's next slot from its CPU time. */
static int run_estimate(struct online_estimate *e)
{
	double cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	int rc = estimate(e);

	if (rc < 0) {
		/* No estimate: no credit until one succeeds. */
		e->res.credit = 0;
		return rc;
	}
	e->fresh = 0;
	if (e->budget > 0.0) {
		double now = clock_s(CLOCK_MONOTONIC);

		/* cost / (cost + wait) = budget */
		e->not_before =
			now + (clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0) * (1.0 / e->budget - 1.0);
	}
	return 1;
}

int online_estimate_add(struct online_estimate *e, const uint8_t block[MONITOR_BLOCK_BYTES])
{
	memcpy(e->ring + (size_t)e->next * MONITOR_BLOCK_BYTES, block, MONITOR_BLOCK_BYTES);
	e->next = (e->next + 1) % ONLINE_WINDOW_BLOCKS;
	if (e->held < ONLINE_WINDOW_BLOCKS)
		e->held++;
	e->fresh++;
	/* While the window fills, before the block is handed over. */
	if (!e->res.full && growth_point(e->held))
		return run_estimate(e);
	return 0;
}

int online_estimate_update(struct online_estimate *e)
{
	if (!e->res.full || e->fresh < ONLINE_WINDOW_BLOCKS / 4)
		return 0;
	if (e->budget > 0.0 && clock_s(CLOCK_MONOTONIC) < e->not_before)
		return 0;
	return run_estimate(e);
}

void online_estimate_get(const struct online_estimate *e, struct online_estimate_result *r)
{
	*r = e->res;
	r->held = (uint32_t)((size_t)e->held * MONITOR_BLOCK_BYTES *
			     (e->sample_bits == 8 ? 1 : 8));
}
