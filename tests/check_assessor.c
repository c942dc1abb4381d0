// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The full assessment in its own thread (assessor.h) and the limit it and
 * the on-line estimate set together (assessor_limit()):
 *  - issue 25's stream (with probability 0.3 the next byte is a fixed
 *    permutation of the previous one, else uniform: true min-entropy
 *    -log2(0.3 + 0.7/256) = 1.724 bits a byte), which the on-line
 *    estimators put at about 5.6: the first assessment comes after 26
 *    blocks, over exactly those 65,000 samples, and its credit is at most
 *    the truth's;
 *  - bit samples (IID, P(1) = 0.6: 0.737 bits a bit) over 520,000 bits;
 *  - a later assessment needs a quarter of the window new; a reset (the
 *    same source restarts) keeps what was learned, a forget (another
 *    source) drops it; freeing while one runs neither waits nor crashes;
 *  - issue 33's rule (assessor_learn()): an assessment over at least as
 *    many samples replaces what was learned, a smaller one (or one that
 *    ran across a restart) only lowers it; with grow (a claimed credit)
 *    the second assessment comes when the window holds four times the
 *    first's samples, whatever the budget; a reload's recall is taken;
 *  - assessor_limit(): nothing before an estimate, before the first full
 *    assessment the on-line estimate's quarter, or nothing for a claimed
 *    credit; the lower of the on-line estimate and what was learned
 *    after.
 * Waits for the thread with generous bounds (TEST_TIME_SCALE), never times
 * an assertion.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rngfeed/assessor.h"
#include "test_doubles.h"

#define B MONITOR_BLOCK_BYTES

static uint64_t state;

static uint64_t next64(void)
{
	return td_xorshift64(&state);
}

/* The follow stream: a permutation without a fixed point. */
static uint8_t perm[256], prev;

static void follow_init(uint64_t seed)
{
	state = seed;
	/* Shuffle, then map each value to the next in the shuffled order:
	 * one cycle through all 256, so no fixed point. */
	{
		uint8_t order[256];

		td_shuffle256(order, &state);
		for (unsigned i = 0; i < 256; i++)
			perm[order[i]] = order[(i + 1) & 255];
	}
	prev = 0;
}

static void follow_block(uint8_t *b)
{
	for (unsigned j = 0; j < B; j++) {
		prev = (next64() >> 11) % 10 < 3 ? perm[prev] : (uint8_t)(next64() >> 56);
		b[j] = prev;
	}
}

static void bits_block(uint8_t *b)
{
	for (unsigned j = 0; j < B; j++) {
		unsigned v = 0;

		for (int k = 0; k < 8; k++)
			v = v << 1 | ((next64() >> 11) % 10 < 6);
		b[j] = (uint8_t)v;
	}
}

static double scale(void)
{
	const char *s = getenv("TEST_TIME_SCALE");
	double v = s ? atof(s) : 1.0;

	return v > 0 ? v : 1.0;
}

/* assessor_get() until the lock was free (it never waits). */
static void get(struct assessor *a, struct assessor_result *r)
{
	const struct timespec tick = { .tv_sec = 0, .tv_nsec = 1000000 };

	while (assessor_get(a, r) != 0)
		nanosleep(&tick, NULL);
}

/* assessor_add() until the block went in (it never waits). */
static void add(struct assessor *a, const uint8_t *block)
{
	const struct timespec tick = { .tv_sec = 0, .tv_nsec = 1000000 };

	while (!assessor_add(a, block))
		nanosleep(&tick, NULL);
}

/* Wait until the assessor has made @count assessments (generous bound). */
static void wait_for(struct assessor *a, uint64_t count, struct assessor_result *r)
{
	const struct timespec tick = { .tv_sec = 0, .tv_nsec = 20000000 };
	const double limit_s = 120.0 * scale();

	for (double waited = 0; waited < limit_s; waited += 0.02) {
		get(a, r);
		if (r->assessments >= count || r->error)
			return;
		nanosleep(&tick, NULL);
	}
	get(a, r);
}

START_TEST(test_follow_first_assessment)
{
	const double h_true = -log2(0.3 + 0.7 / 256);
	const unsigned true_credit = (unsigned)floor(1024 * h_true / 8);
	const struct assessor_params p = { .sample_bits = 8,
					   .window_samples = ASSESSOR_DEFAULT_SAMPLES,
					   .budget = ASSESSOR_DEFAULT_BUDGET };
	struct assessor *a;
	struct assessor_result r;
	uint8_t block[B];

	follow_init(0x9e3779b97f4a7c15ull);
	ck_assert_int_eq(assessor_new(&p, &a), 0);
	for (unsigned k = 0; k + 1 < ASSESSOR_FIRST_BLOCKS; k++) {
		follow_block(block);
		add(a, block);
	}
	get(a, &r);
	ck_assert_uint_eq(r.assessments, 0);
	ck_assert(r.h < 0.0);
	ck_assert_uint_eq(r.credit, ONLINE_NO_LIMIT);
	follow_block(block);
	add(a, block);
	wait_for(a, 1, &r);
	ck_assert_int_eq(r.error, 0);
	ck_assert_uint_eq(r.assessments, 1);
	ck_assert_uint_eq(r.samples, ASSESSOR_FIRST_BLOCKS * B);
	ck_assert_uint_eq(r.credit, assessor_credit(r.h, 8, r.samples, p.window_samples));
	ck_assert_msg(r.credit <= true_credit, "credit %u above the true %u (H %.4f, true %.4f)",
		      r.credit, true_credit, r.h, h_true);
	/* Not vacuous: the predictors see the dependence nearly whole. */
	ck_assert_msg(r.h > h_true - 0.25 && r.h < h_true + 0.1, "H %.4f, true %.4f", r.h, h_true);
	printf("follow, 65,000 samples: H %.4f (true %.4f), credit %u <= %u, %.3f s CPU\n", r.h,
	       h_true, r.credit, true_credit, r.cpu_s);
	ck_assert_ptr_null(assessor_free(a));
}
END_TEST

START_TEST(test_bits_and_reset)
{
	const double h_true = -log2(0.6);
	const struct assessor_params p = { .sample_bits = 1, .window_samples = 520000,
					   .budget = 1.0 };
	struct assessor *a;
	struct assessor_result r;
	uint8_t block[B];

	state = 12345;
	ck_assert_int_eq(assessor_new(&p, &a), 0);
	for (unsigned k = 0; k < ASSESSOR_FIRST_BLOCKS; k++) {
		bits_block(block);
		add(a, block);
	}
	wait_for(a, 1, &r);
	ck_assert_uint_eq(r.assessments, 1);
	ck_assert_uint_eq(r.samples, ASSESSOR_FIRST_BLOCKS * B * 8);
	/* A full window: no 15/16. */
	ck_assert_uint_eq(r.credit, (unsigned)floor(1024 * r.h));
	ck_assert_msg(r.h <= h_true && r.h > h_true / 2, "H %.4f, true %.4f", r.h, h_true);
	/* Fewer than a quarter new: no second one, whatever the budget. */
	for (unsigned k = 0; k < ASSESSOR_FIRST_BLOCKS / 4 - 1; k++) {
		bits_block(block);
		add(a, block);
	}
	/* A quarter new (7 blocks of 26): the second. */
	bits_block(block);
	bits_block(block);
	add(a, block);
	add(a, block);
	wait_for(a, 2, &r);
	ck_assert_uint_eq(r.assessments, 2);
	ck_assert_uint_gt(r.learned.samples, 0);
	/* The same source restarts: what was learned stays. */
	{
		const struct assessor_learned before = r.learned;

		assessor_reset(a);
		get(a, &r);
		ck_assert_uint_eq(r.assessments, 2);
		ck_assert_uint_eq(r.learned.samples, before.samples);
		ck_assert_uint_eq(r.learned.credit, before.credit);
		ck_assert(!r.first_due);
	}
	/* Another source: nothing. */
	assessor_forget(a);
	get(a, &r);
	ck_assert(r.h < 0.0);
	ck_assert_uint_eq(r.assessments, 0);
	ck_assert_uint_eq(r.credit, ONLINE_NO_LIMIT);
	ck_assert_uint_eq(r.learned.samples, 0);
	ck_assert_uint_eq(r.learned.credit, ONLINE_NO_LIMIT);
	/* Freed while an assessment runs: returns at once, the thread ends
	 * on its own (ASan and valgrind runs see no error). */
	for (unsigned k = 0; k < ASSESSOR_FIRST_BLOCKS; k++) {
		bits_block(block);
		add(a, block);
	}
	ck_assert_ptr_null(assessor_free(a));
}
END_TEST

START_TEST(test_args)
{
	struct assessor_params p = { .sample_bits = 8, .window_samples = ASSESSOR_MIN_SAMPLES,
				     .budget = 0.02 };
	struct assessor *a;
	struct assessor_result r;

	p.sample_bits = 4;
	ck_assert_int_eq(assessor_new(&p, &a), -EINVAL);
	p.sample_bits = 8;
	p.window_samples = ASSESSOR_MIN_SAMPLES - 1;
	ck_assert_int_eq(assessor_new(&p, &a), -EINVAL);
	p.window_samples = ASSESSOR_MIN_SAMPLES;
	p.budget = 0.0;
	ck_assert_int_eq(assessor_new(&p, &a), -EINVAL);
	p.budget = 1.5;
	ck_assert_int_eq(assessor_new(&p, &a), -EINVAL);
	ck_assert_ptr_null(assessor_free(NULL));
	ck_assert_int_eq(assessor_get(NULL, &r), 0);
	ck_assert(r.h < 0.0);
	/* Credit: floor(1024 H / bits), 15/16 of H below a full window. */
	ck_assert_uint_eq(assessor_credit(4.0, 8, 1000, 1000), 512);
	ck_assert_uint_eq(assessor_credit(4.0, 8, 999, 1000), 480);
	ck_assert_uint_eq(assessor_credit(8.0, 8, 1000, 1000), 1024);
	ck_assert_uint_eq(assessor_credit(0.0, 8, 1000, 1000), 0);
	ck_assert_uint_eq(assessor_credit(0.5, 1, 1000, 1000), 512);
}
END_TEST

START_TEST(test_limit)
{
	const struct assessor_learned none = { .h = -1.0, .credit = ONLINE_NO_LIMIT };
	struct online_estimate_result q = { .h = -1.0, .credit = ONLINE_NO_LIMIT };
	struct assessor_result f = { .h = -1.0, .credit = ONLINE_NO_LIMIT, .learned = none };
	enum estimate_in_force which;

	ck_assert_uint_eq(assessor_limit(&q, &f, false, &which), 0);
	ck_assert_int_eq(which, IN_FORCE_NONE);
	ck_assert_uint_eq(assessor_limit(&q, &f, true, &which), 0);
	ck_assert_int_eq(which, IN_FORCE_NONE);
	q = (struct online_estimate_result){ .h = 5.65, .credit = 723, .estimates = 1 };
	ck_assert_uint_eq(assessor_limit(&q, &f, false, &which), 723 / 4);
	ck_assert_int_eq(which, IN_FORCE_QUICK_SHARE);
	ck_assert_str_eq(estimate_in_force_name(which), "quick/4");
	/* A claimed credit: nothing before the first full assessment. */
	ck_assert_uint_eq(assessor_limit(&q, &f, true, &which), 0);
	ck_assert_int_eq(which, IN_FORCE_FULL_PENDING);
	ck_assert_str_eq(estimate_in_force_name(which), "full pending");
	/* The limit is what was learned, not the latest assessment. */
	f = (struct assessor_result){ .h = 2.5, .credit = 300, .assessments = 2,
				      .learned = { .h = 1.72, .credit = 206, .samples = 1000000 } };
	ck_assert_uint_eq(assessor_limit(&q, &f, false, &which), 206);
	ck_assert_int_eq(which, IN_FORCE_FULL);
	ck_assert_uint_eq(assessor_limit(&q, &f, true, &which), 206);
	q.credit = 100;
	ck_assert_uint_eq(assessor_limit(&q, &f, true, &which), 100);
	ck_assert_int_eq(which, IN_FORCE_QUICK);
	/* A failed assessment: nothing. */
	f = (struct assessor_result){ .h = -1.0, .credit = 0, .error = -ENOMEM,
				      .learned = { .h = 1.72, .credit = 206, .samples = 1000000 } };
	ck_assert_uint_eq(assessor_limit(&q, &f, false, &which), 0);
}
END_TEST

/* Issue 33's rule, on numbers. */
START_TEST(test_learn)
{
	struct assessor_learned l = { .h = -1.0, .credit = ONLINE_NO_LIMIT };
	const struct assessor_learned small_high = { .h = 2.4, .credit = 290, .samples = 65000 },
				      big = { .h = 1.6, .credit = 204, .samples = 1000000 },
				      big_higher = { .h = 1.7, .credit = 217, .samples = 1000000 },
				      small_low = { .h = 0.5, .credit = 60, .samples = 65000 };

	/* The first is taken, whatever its size, and also when it ran
	 * across a restart (all there is). */
	assessor_learn(&l, &small_high, true);
	ck_assert_uint_eq(l.credit, 290);
	ck_assert_uint_eq(l.samples, 65000);
	/* A larger one replaces it: lower here. */
	assessor_learn(&l, &big, false);
	ck_assert_uint_eq(l.credit, 204);
	ck_assert_uint_eq(l.samples, 1000000);
	/* A smaller one never raises (the 65,000-sample assessment after a
	 * disable)... */
	assessor_learn(&l, &small_high, false);
	ck_assert_uint_eq(l.credit, 204);
	ck_assert_uint_eq(l.samples, 1000000);
	/* ...nor does a large one that ran across a restart. */
	assessor_learn(&l, &big_higher, true);
	ck_assert_uint_eq(l.credit, 204);
	/* One as large may raise. */
	assessor_learn(&l, &big_higher, false);
	ck_assert_uint_eq(l.credit, 217);
	ck_assert(fabs(l.h - 1.7) < 1e-9);
	/* A smaller one may lower, and what it set holds until one as large
	 * as the largest says otherwise. */
	assessor_learn(&l, &small_low, false);
	ck_assert_uint_eq(l.credit, 60);
	ck_assert(fabs(l.h - 0.5) < 1e-9);
	ck_assert_uint_eq(l.samples, 1000000);
	assessor_learn(&l, &small_high, false);
	ck_assert_uint_eq(l.credit, 60);
	assessor_learn(&l, &big, false);
	ck_assert_uint_eq(l.credit, 204);
}
END_TEST

/* grow: the second assessment when the window holds four times the
 * first's samples, whatever the budget; a recall is taken as learned. */
START_TEST(test_growth_and_recall)
{
	const struct assessor_params p = { .sample_bits = 8,
					   .window_samples = 4 * ASSESSOR_MIN_SAMPLES,
					   .budget = 0.0001, .grow = true };
	struct assessor_params q = p;
	struct online_estimate_result quick = { .h = 5.6, .credit = 716, .estimates = 1 };
	enum estimate_in_force which;
	struct assessor *a;
	struct assessor_result r;
	uint8_t block[B];

	follow_init(7);
	ck_assert_int_eq(assessor_new(&p, &a), 0);
	for (unsigned k = 0; k < ASSESSOR_FIRST_BLOCKS; k++) {
		follow_block(block);
		add(a, block);
	}
	wait_for(a, 1, &r);
	ck_assert_int_eq(r.error, 0);
	ck_assert_uint_eq(r.learned.samples, ASSESSOR_MIN_SAMPLES);
	/* The budget (0.01 % of a core) would wait 10,000 times the first's
	 * CPU time: only the growth rule can make the second one. */
	for (unsigned k = ASSESSOR_FIRST_BLOCKS; k < 4 * ASSESSOR_FIRST_BLOCKS; k++) {
		follow_block(block);
		add(a, block);
	}
	wait_for(a, 2, &r);
	ck_assert_uint_eq(r.assessments, 2);
	ck_assert_uint_eq(r.samples, 4 * ASSESSOR_MIN_SAMPLES);
	ck_assert_uint_eq(r.learned.samples, 4 * ASSESSOR_MIN_SAMPLES);
	/* A whole window: its credit without the 15/16. */
	ck_assert_uint_eq(r.learned.credit, (unsigned)floor(1024 * r.learned.h / 8));
	ck_assert_uint_eq(assessor_limit(&quick, &r, true, &which), r.learned.credit);
	ck_assert_int_eq(which, IN_FORCE_FULL);
	ck_assert_ptr_null(assessor_free(a));

	/* The next reader of the same source (a reload). */
	q.recall = r.learned;
	ck_assert_int_eq(assessor_new(&q, &a), 0);
	get(a, &r);
	ck_assert_uint_eq(r.assessments, 0);
	ck_assert_uint_eq(r.learned.samples, 4 * ASSESSOR_MIN_SAMPLES);
	ck_assert_uint_eq(r.learned.credit, q.recall.credit);
	ck_assert_uint_eq(assessor_limit(&quick, &r, true, &which), q.recall.credit);
	ck_assert(!r.first_due);
	ck_assert_ptr_null(assessor_free(a));
}
END_TEST

int main(void)
{
	return td_run(td_suite("assessor", "assessor", NULL, NULL, 600,
			       TD_TESTS(test_args, test_limit, test_learn,
					test_follow_first_assessment,
					test_bits_and_reset, test_growth_and_recall)));
}
