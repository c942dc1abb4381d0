// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * --stdout in batches (issue 20), driven as the daemon's loop drives it
 * (wants → absorb when absorb_due() → request → step), on a virtual
 * clock, with a real conditioner whose additional-input hook counts calls
 * and a "reader" that delivers one block per request at the next turn:
 *  - a reseed every --reseed-bytes exactly (it was every ~0.7 MiB: a
 *    block asked for at half the limit was absorbed on arrival), one
 *    write, one additional input and 16 DRBG requests per MiB;
 *  - a batch never crosses the byte limit, at an odd limit too;
 *  - the time limit still reseeds, and a waiting block is not absorbed
 *    before a limit;
 *  - the batch buffer is wiped once output has paused, not per write.
 */
#include <check.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "rngfeed/conditioner.h"
#include "rngfeed/drbg.h"
#include "rngfeed/output.h"
#include "test_doubles.h"

#define T0 1000.0
#define MIB (1u << 20)

static struct conditioner *cond;
static struct rngfeed_config cfg;
static struct output out;
static const struct output_ops *ops;
static const struct feeder_params fparams = {
	.modern_kernel = true, .interval_s = 60, .step = 64,
};
static double clock_now;
static unsigned int add_calls;
static unsigned int blocks_ready; /* delivered, not taken yet */
static bool requested, supply;
static int saved_stdout = -1;

static double fake_now(void)
{
	return clock_now;
}

static ssize_t counting_additional(uint8_t *buf, size_t len)
{
	add_calls++;
	memset(buf, 0x5a, len);
	return (ssize_t)len;
}

static const struct conditioner_env env = {
	.additional = counting_additional, .now = fake_now,
};

static void setup(void)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = MODE_STDOUT;
	cfg.bytes = -1;
	cfg.reseed_bytes = MIB; /* the defaults */
	cfg.reseed_seconds = 1;
	clock_now = T0;
	add_calls = 0;
	blocks_ready = 0;
	requested = false;
	supply = true;
	ck_assert_int_eq(conditioner_new(&cond, &env), 0);
	ops = output_ops_for(&cfg);
	ck_assert_str_eq(ops->name, "stdout");
	ck_assert_ptr_nonnull(ops->absorb_due);
	ck_assert_int_eq(output_init(&out, &cfg, cond, NULL, NULL, &fparams,
				     clock_now),
			 0);
	ck_assert_uint_eq(out.buf_len, OUTPUT_STDOUT_BATCH);
	ck_assert_int_ge(fd, 0);
	fflush(stdout);
	saved_stdout = dup(STDOUT_FILENO);
	ck_assert_int_ge(dup2(fd, STDOUT_FILENO), 0);
	close(fd);
}

static void teardown(void)
{
	dup2(saved_stdout, STDOUT_FILENO);
	close(saved_stdout);
	output_fini(&out);
	conditioner_free(cond);
	cond = NULL;
}

static uint64_t reseeds(void)
{
	struct conditioner_stats st;

	conditioner_get_stats(cond, &st);
	return st.reseeds;
}

static struct conditioner_stats stats(void)
{
	struct conditioner_stats st;

	conditioner_get_stats(cond, &st);
	return st;
}

struct turn {
	bool want, absorbed;
	int step;
	double wait;
	uint64_t wrote;
};

/* One turn of the daemon's loop at @now. */
static struct turn turn(double now)
{
	struct turn t = { .wait = 3600 };
	uint64_t before = out.out_bytes, r0 = reseeds();
	uint8_t block[MONITOR_BLOCK_BYTES];

	clock_now = now;
	t.want = ops->wants(&out, now, &t.wait);
	if (ops->absorb_due(&out, now) && blocks_ready > 0) {
		blocks_ready--;
		ck_assert_int_eq(getrandom(block, sizeof(block), 0),
				 (ssize_t)sizeof(block));
		conditioner_hold(cond, 0, 2, block);
		explicit_bzero(block, sizeof(block));
		ck_assert_int_eq(conditioner_absorb(cond, false), 1);
	}
	t.absorbed = reseeds() != r0;
	/* A reader holds one block at most, asked for once. */
	if (t.want && supply && blocks_ready == 0)
		requested = true;
	t.step = ops->step(&out, t.want, now, &t.wait);
	t.wrote = out.out_bytes - before;
	/* What was asked for is there by the next turn. */
	if (requested) {
		blocks_ready = 1;
		requested = false;
	}
	return t;
}

START_TEST(test_reseed_every_limit_and_batches)
{
	uint64_t epoch = 0;
	unsigned int batches = 0;
	int k;

	cfg.bytes = 8 * MIB;
	for (k = 0; k < 100; k++) {
		struct turn t = turn(T0 + k * 1e-4);

		if (t.absorbed) {
			/* Only at the limit: a whole --reseed-bytes. */
			if (reseeds() > 1)
				ck_assert_uint_eq(epoch, MIB);
			epoch = 0;
		}
		/* One write per turn, never more than a batch. */
		ck_assert_uint_le(t.wrote, OUTPUT_STDOUT_BATCH);
		epoch += t.wrote;
		batches += t.wrote > 0;
		ck_assert_uint_le(epoch, MIB);
		if (t.step < 0)
			break;
	}
	ck_assert_int_eq(out.exit_code, 0);
	ck_assert_uint_eq(out.out_bytes, 8 * MIB);
	/* 8 MiB: the instantiation and 7 reseeds, 8 batches, 8 additional
	 * inputs, 128 requests of 64 KiB. */
	ck_assert_uint_eq(reseeds(), 8);
	ck_assert_uint_eq(batches, 8);
	ck_assert_uint_eq(add_calls, 8);
	ck_assert_uint_eq(stats().requests, 8 * MIB / DRBG_MAX_REQUEST_LEN);
}
END_TEST

/* A limit that is not a multiple of a request: no batch crosses it. */
START_TEST(test_odd_limit)
{
	uint64_t epoch = 0;
	int k, r = 0;

	cfg.reseed_bytes = 100000;
	cfg.bytes = 300001;
	for (k = 0; k < 100 && r >= 0; k++) {
		struct turn t = turn(T0 + k * 1e-4);

		if (t.absorbed)
			epoch = 0;
		epoch += t.wrote;
		ck_assert_uint_le(epoch, 100000);
		r = t.step;
	}
	ck_assert_int_eq(r, -1);
	ck_assert_uint_eq(out.out_bytes, 300001);
	ck_assert_uint_eq(reseeds(), 4);
	/* 100,000 bytes: two requests each; the last byte one more. */
	ck_assert_uint_eq(stats().requests, 3 * 2 + 1);
	ck_assert_uint_eq(add_calls, 4);
}
END_TEST

/* The next block is asked for at once, but a waiting block is absorbed
 * only at a limit; the time limit is one. */
START_TEST(test_time_limit_and_early_request)
{
	struct turn t;

	cfg.reseed_bytes = 1 << 30;
	turn(T0);
	t = turn(T0 + 0.001); /* instantiates, writes */
	ck_assert(t.absorbed);
	ck_assert_uint_gt(t.wrote, 0);
	/* Right after a reseed the next block is wanted already... */
	ck_assert(ops->wants(&out, T0 + 0.002, &t.wait));
	for (int k = 1; k < 9; k++) {
		t = turn(T0 + 0.001 + k * 0.1);
		/* ...and waits while the limits are not reached. */
		ck_assert(!t.absorbed);
		ck_assert_uint_eq(blocks_ready, 1);
		ck_assert_uint_gt(t.wrote, 0);
	}
	t = turn(T0 + 1.002);
	ck_assert(t.absorbed);
	ck_assert_uint_eq(reseeds(), 2);
	ck_assert_uint_gt(t.wrote, 0);
}
END_TEST

/* The batch buffer holds output until the next batch overwrites it, and
 * is wiped once output has paused for a moment. */
START_TEST(test_wipe_after_pause)
{
	struct turn t;
	double now = T0;

	cfg.reseed_bytes = 3 * 65536;
	turn(now);
	t = turn(now += 1e-4);
	ck_assert_uint_eq(t.wrote, 3 * 65536);
	ck_assert(out.buf_dirty);
	/* The source goes quiet: no block for the next reseed. */
	supply = false;
	blocks_ready = 0;
	t = turn(now += 1e-4);
	ck_assert_int_eq(t.step, 0);
	ck_assert(t.wait <= 0.05 + 1e-9);
	t = turn(now + 0.06);
	ck_assert_int_eq(t.step, 0);
	ck_assert(!out.buf_dirty);
	/* One assertion, not one per byte: each ck_assert is a message to
	 * Check's parent, 196,608 of them a minute under qemu-user. */
	size_t left = 0;
	while (left < out.buf_len && out.buf[left] == 0)
		left++;
	ck_assert_msg(left == out.buf_len, "byte %zu of %zu not wiped", left,
		      out.buf_len);
}
END_TEST

int main(void)
{
	if (drbg_library_init() < 0)
		return EXIT_FAILURE;

	return td_run(td_suite("output_stdout", "stdout", setup, teardown, 60,
			       TD_TESTS(test_reseed_every_limit_and_batches,
					test_odd_limit,
					test_time_limit_and_early_request,
					test_wipe_after_pause)));
}
