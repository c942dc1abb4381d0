// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Readers in bulk mode (--stdout, issue 20): one request fills the whole
 * two-block queue, and every block is handed over with its DRBG seed
 * material, worked out in the reader's thread, equal to what
 * drbg_df_derive() gives for that block.  Without bulk: one block per
 * request, nothing derived (what the kernel output gets, unchanged).
 * A test-double driver of getrandom() bytes, so the blocks pass.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "rngfeed/drbg.h"
#include "rngfeed/monitor.h"
#include "rngfeed/reader.h"
#include "rngfeed/source.h"
#include "test_doubles.h"

#define DEADLINE_S 60.0

static int r_open(const struct source_config *cfg, void **state, char *why,
		  size_t why_len)
{
	(void)cfg;
	(void)why;
	(void)why_len;
	*state = NULL;
	return 0;
}

static ssize_t r_read(void *state, void *buf, size_t len)
{
	(void)state;
	return getrandom(buf, len, 0);
}

static void r_close(void *state)
{
	(void)state;
}

static const struct source_driver random_double = {
	.name = "random", .description = "test double",
	.default_credit = 0, .sample_bits = 8, .min_entropy = 6.0,
	.open = r_open, .read = r_read, .close = r_close,
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap(void)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

static struct reader *start(bool bulk)
{
	struct reader_params p = {
		.retry_initial_s = 0.1,
		.retry_max_s = 0.2,
		.notify_fd = -1,
		.bulk = bulk,
	};
	struct reader *r = NULL;

	source_config_init(&p.source, &random_double);
	monitor_params_default(&p.monitor);
	p.monitor.min_entropy = random_double.min_entropy;
	p.monitor.sample_bits = random_double.sample_bits;
	ck_assert_int_eq(reader_start(&r, &p), 0);
	return r;
}

static uint64_t passed(struct reader *r)
{
	struct reader_stats st;

	reader_get_stats(r, &st);
	return st.blocks_passed;
}

/* Wait until @r has handed over @n blocks in all; false at the deadline. */
static bool wait_passed(struct reader *r, uint64_t n)
{
	double end = now_s() + DEADLINE_S;

	while (now_s() < end) {
		if (passed(r) >= n)
			return true;
		nap();
	}
	return false;
}

/* Nothing more arrives for a while (the reader waits for a request). */
static void settle_at(struct reader *r, uint64_t n)
{
	for (int i = 0; i < 20; i++)
		nap();
	ck_assert_uint_eq(passed(r), n);
}

START_TEST(test_bulk)
{
	uint8_t block[MONITOR_BLOCK_BYTES], seed[DRBG_SEEDLEN];
	uint8_t want[DRBG_SEEDLEN];
	struct reader *r = start(true);
	struct drbg_df *df;
	bool derived;

	ck_assert_int_eq(drbg_df_new(&df), 0);
	/* The start-up test's blocks are not handed over; one request
	 * brings two blocks, and no third. */
	reader_request_block(r);
	ck_assert(wait_passed(r, 2));
	settle_at(r, 2);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(reader_take_derived(r, block, seed, &derived),
				 1);
		ck_assert(derived);
		ck_assert_int_eq(drbg_df_derive(df, block, sizeof(block), want),
				 0);
		ck_assert(memcmp(seed, want, sizeof(seed)) == 0);
		if (i == 0) {
			/* One still queued: a request asks nothing more. */
			reader_request_block(r);
			settle_at(r, 2);
		}
	}
	ck_assert_int_eq(reader_take_derived(r, block, seed, &derived), 0);
	ck_assert(!derived);
	/* Empty again: the next request is two more. */
	reader_request_block(r);
	ck_assert(wait_passed(r, 4));
	settle_at(r, 4);
	/* A discard wipes blocks and their seeds alike. */
	reader_discard(r);
	ck_assert_int_eq(reader_take_derived(r, block, seed, &derived), 0);
	reader_stop(r);
	drbg_df_free(df);
}
END_TEST

START_TEST(test_not_bulk)
{
	uint8_t block[MONITOR_BLOCK_BYTES], seed[DRBG_SEEDLEN];
	struct reader *r = start(false);
	bool derived = true;

	reader_request_block(r);
	ck_assert(wait_passed(r, 1));
	settle_at(r, 1);
	ck_assert_int_eq(reader_take_derived(r, block, seed, &derived), 1);
	ck_assert(!derived);
	ck_assert_int_eq(reader_take(r, block), 0);
	reader_stop(r);
}
END_TEST

int main(void)
{
	/* reader_stop() interrupts reads with READER_WAKE_SIGNAL. */
	if (reader_setup_signals() < 0)
		return EXIT_FAILURE;

	return td_run(td_suite("reader_bulk", "core", NULL, NULL,
			       2 * DEADLINE_S + 30,
			       TD_TESTS(test_bulk, test_not_bulk)));
}
