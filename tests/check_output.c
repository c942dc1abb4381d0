// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The four outputs (output.h) driven the way the daemon's loop drives
 * them (wants → absorb → step), on a virtual clock, with a fake kernel
 * that records every RNDADDENTROPY, a real conditioner fed with blocks the
 * test makes, and a source set of test doubles whose readers are only
 * there to say whether credit is coming:
 *  - kernel, credited: every credited feed is at most what the ledger
 *    allowed and follows a reseed of its own; nothing uncredited goes in
 *    while credit is coming;
 *  - kernel, credit 0 only: one uncredited feed per --interval, never two
 *    without a reseed in between; readiness looked at again while not
 *    feeding;
 *  - bench-fill, stdout (at most reseed-bytes between reseeds, the time
 *    limit, --bytes), test; output_ops_for().
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rngfeed/conditioner.h"
#include "rngfeed/drbg.h"
#include "rngfeed/ledger.h"
#include "rngfeed/output.h"
#include "rngfeed/reader.h"
#include "rngfeed/sourceset.h"
#include "test_doubles.h"

#define T0 1000.0
#define MAX_FEEDS 4096

/* ---- a fake kernel --------------------------------------------------------- */

struct feed {
	double at;
	size_t len;
	unsigned int credit;
	uint64_t reseeds;   /* the conditioner's, when fed */
	unsigned int avail; /* conditioner_available() before the step */
};

static struct {
	int ready;            /* what crng_ready answers */
	int ready_calls, reseed_calls;
	unsigned int n;
	struct feed feeds[MAX_FEEDS];
} fk;

static struct conditioner *cond;
static double clock_now;          /* the virtual clock */
static unsigned int avail_before; /* set by each turn before step */

static uint64_t reseeds(void)
{
	struct conditioner_stats st;

	conditioner_get_stats(cond, &st);
	return st.reseeds;
}

static int fake_add_entropy(void *ctx, const uint8_t *buf, size_t len,
			    unsigned int credit)
{
	(void)ctx;
	(void)buf;
	ck_assert_uint_lt(fk.n, MAX_FEEDS);
	fk.feeds[fk.n++] = (struct feed){
		.at = clock_now, .len = len, .credit = credit,
		.reseeds = reseeds(), .avail = avail_before,
	};
	return 0;
}

static int fake_crng_ready(void *ctx)
{
	(void)ctx;
	fk.ready_calls++;
	return fk.ready;
}

static int fake_reseed_crng(void *ctx)
{
	(void)ctx;
	fk.reseed_calls++;
	return 0;
}

static int fake_wait_writable(void *ctx, int timeout_ms)
{
	(void)ctx;
	(void)timeout_ms;
	return 0;
}

static ssize_t fake_get_additional(void *ctx, uint8_t *buf, size_t len)
{
	(void)ctx;
	memset(buf, 0x5a, len);
	return (ssize_t)len;
}

static const struct kernel_ops kops = {
	.add_entropy = fake_add_entropy,
	.crng_ready = fake_crng_ready,
	.reseed_crng = fake_reseed_crng,
	.wait_writable = fake_wait_writable,
	.get_additional = fake_get_additional,
};

/* ---- test doubles for the source set (test_doubles.h) ------------------- */

TD_DRIVER(credited, 512, td_probe, td_open, td_read);

/* ---- the loop -------------------------------------------------------------- */

static char base[64]; /* the run's directory (main) */
static char dir[80];
static struct rngfeed_config cfg;
static struct source_set *set;
static struct output out;
static const struct output_ops *ops;
static const struct feeder_params fparams = {
	.modern_kernel = true, .interval_s = 60, .step = 64,
};

/* Blocks "read" for the next turn: the daemon asks the readers when the
 * output wants data, and a reader gives one block per request. */
static unsigned int blocks_ready, block_credit;
static bool supply;

static double fake_now(void)
{
	return clock_now;
}

static const struct conditioner_env env = { .now = fake_now };

static void setup(void)
{
	td_dir_make(dir, sizeof(dir), base);
	memset(&fk, 0, sizeof(fk));
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = MODE_DAEMON;
	cfg.random_step = 64;
	cfg.interval = 60;
	cfg.bytes = -1;
	cfg.reseed_bytes = 1 << 20;
	cfg.reseed_seconds = 600;
	strcpy(cfg.random_device, "/dev/random");
	clock_now = T0;
	blocks_ready = 0;
	block_credit = 0;
	supply = true;
	set = NULL;
	ck_assert_int_eq(conditioner_new(&cond, &env), 0);
}

static void teardown(void)
{
	output_fini(&out);
	sourceset_free(set);
	set = NULL;
	conditioner_free(cond);
	cond = NULL;
	td_tree_remove(dir);
}

/*
 * A source set: with @credit_coming, one credited reader started and
 * never asked for anything (it stays in its start-up test, so credit is
 * "coming"); otherwise no source at all.
 */
static void make_set(bool credit_coming)
{
	char sysfs[96];
	struct rngfeed_config c = { .mode = MODE_DAEMON };
	const struct sourceset_params p = {
		.retry_delay = 1, .retry_max = 2, .max_failures = 3,
		.sysfs_dir = sysfs, .gate_state = "",
	};

	snprintf(sysfs, sizeof(sysfs), "%s/no-sysfs", dir);
	if (credit_coming)
		source_config_init(&c.sources[c.n_sources++], &credited);
	ck_assert_int_eq(sourceset_new(&set, &c, &p), 0);
	ck_assert_uint_eq(sourceset_open(set), c.n_sources);
	ck_assert_uint_eq(sourceset_start(set, -1), c.n_sources);
	ck_assert(sourceset_credit_coming(set) == credit_coming);
}

static void start_output(void)
{
	ops = output_ops_for(&cfg);
	ck_assert_int_eq(output_init(&out, &cfg, cond, set,
				     cfg.mode == MODE_DAEMON ? &kops : NULL,
				     &fparams, clock_now),
			 0);
}

/* The daemon's absorb(): blocks into the conditioner, a part at a time
 * while the output wants credited data. */
static void absorb(bool in_parts)
{
	static uint8_t block[MONITOR_BLOCK_BYTES];

	for (;;) {
		if (!conditioner_holding(cond)) {
			if (blocks_ready == 0)
				break;
			blocks_ready--;
			ck_assert_int_eq(getrandom(block, sizeof(block), 0),
					 (ssize_t)sizeof(block));
			conditioner_hold(cond, 0, block_credit, block);
			explicit_bzero(block, sizeof(block));
		}
		if (in_parts && conditioner_available(cond))
			break;
		ck_assert_int_eq(conditioner_absorb(cond, in_parts), 1);
	}
}

struct turn {
	bool want;
	double wait;
	int step;
};

/* One turn of the daemon's loop at @now. */
static struct turn turn(double now)
{
	struct turn t = { .wait = 3600 };

	clock_now = now;
	t.want = ops->wants(&out, now, &t.wait);
	absorb(t.want && ops->in_parts);
	avail_before = conditioner_available(cond);
	t.step = ops->step(&out, t.want, now, &t.wait);
	if (t.want && supply && blocks_ready == 0)
		blocks_ready = 1;
	return t;
}

/* ---- kernel ---------------------------------------------------------------- */

START_TEST(test_kernel_credited)
{
	uint64_t last_reseeds = 0, credited_bits = 0;
	unsigned int credited_feeds = 0;

	block_credit = 1024;
	make_set(true);
	start_output();
	ck_assert_str_eq(ops->name, "kernel");
	for (int k = 0; k < 400; k++) {
		struct turn t = turn(T0 + k * 0.01);

		/* Not ready: it always wants, credited data only. */
		ck_assert(t.want);
		ck_assert(out.credited_only);
		ck_assert_int_ge(t.step, 0);
	}
	for (unsigned int i = 0; i < fk.n; i++) {
		const struct feed *f = &fk.feeds[i];

		/* Nothing uncredited while credit is coming. */
		ck_assert_uint_gt(f->credit, 0);
		ck_assert_uint_eq(f->len, 64);
		ck_assert_uint_le(f->credit, f->avail);
		ck_assert_uint_le(f->credit, LEDGER_CAP_BITS);
		ck_assert_uint_le(f->credit, 8 * f->len);
		/* Each credit from a reseed of its own. */
		ck_assert_uint_gt(f->reseeds, last_reseeds);
		last_reseeds = f->reseeds;
		credited_bits += f->credit;
		credited_feeds++;
	}
	/* It did feed (one block gives ledger_block_parts() feeds). */
	ck_assert_uint_ge(credited_feeds, 100);
	ck_assert_uint_eq(out.feeder.credited_bits, credited_bits);
	ck_assert_uint_eq(out.feeder.calls, fk.n);
	/* Never more than half of what went into the ledger. */
	ck_assert_uint_le(credited_bits,
			  conditioner_deposited(cond, 0) / 1024 / 2);
}
END_TEST

/* Credit is coming but the blocks carry none yet: nothing goes in. */
START_TEST(test_kernel_credit_coming_nothing_uncredited)
{
	block_credit = 0;
	make_set(true);
	start_output();
	for (int k = 0; k < 200; k++) {
		struct turn t = turn(T0 + k * 1.0);

		ck_assert(t.want);
		ck_assert_int_eq(t.step, 0);
	}
	ck_assert(conditioner_seeded(cond));
	ck_assert_uint_eq(fk.n, 0);
}
END_TEST

START_TEST(test_kernel_uncredited_per_interval)
{
	unsigned int uncredited = 0;
	double last_feed = -1;
	uint64_t last_reseeds = 0;

	block_credit = 0;
	make_set(false);
	start_output();
	for (int k = 0; k <= 2000; k++) {
		double now = T0 + k * 0.25;
		unsigned int before = fk.n;
		struct turn t = turn(now);

		ck_assert(!out.credited_only || !t.want);
		if (last_feed >= 0 && now < last_feed + (double)cfg.interval) {
			/* Resting until the next interval... */
			ck_assert_msg(!t.want, "wants at %.2f, fed at %.2f",
				      now, last_feed);
			/* ...and it says when to look again. */
			ck_assert(t.wait <= last_feed + cfg.interval - now +
						    1e-9);
		}
		ck_assert_uint_le(fk.n, before + 1);
		if (fk.n > before) {
			const struct feed *f = &fk.feeds[before];

			ck_assert_uint_eq(f->credit, 0);
			ck_assert_uint_eq(f->len, 64);
			ck_assert_uint_gt(f->reseeds, last_reseeds);
			if (last_feed >= 0)
				ck_assert(now - last_feed >=
					  (double)cfg.interval);
			last_reseeds = f->reseeds;
			last_feed = now;
			uncredited++;
		}
	}
	/* 500 s at one per 60 s (a turn late each time): 8 or 9. */
	ck_assert_uint_ge(uncredited, 8);
	ck_assert_uint_le(uncredited, 9);
	ck_assert_uint_eq(out.feeder.credited_bits, 0);
}
END_TEST

/* Without a reseed since the last feed, no second uncredited feed, however
 * long it waits; a fresh block makes the next one. */
START_TEST(test_kernel_no_uncredited_without_reseed)
{
	unsigned int fed;
	uint64_t at_feed;

	block_credit = 0;
	make_set(false);
	start_output();
	for (int k = 0; k < 10 && fk.n == 0; k++)
		turn(T0 + k * 0.5);
	ck_assert_uint_eq(fk.n, 1);
	at_feed = fk.feeds[0].reseeds;
	supply = false;
	blocks_ready = 0;
	for (int k = 0; k < 400; k++)
		turn(T0 + 10 + k * 1.0);
	ck_assert_uint_eq(fk.n, 1);
	ck_assert_uint_eq(reseeds(), at_feed);
	/* Wants it (the interval is over), will feed after a reseed. */
	supply = true;
	fed = fk.n;
	turn(T0 + 500);
	turn(T0 + 500.5);
	ck_assert_uint_eq(fk.n, fed + 1);
	ck_assert_uint_gt(fk.feeds[fed].reseeds, at_feed);
	ck_assert_uint_eq(fk.feeds[fed].credit, 0);
}
END_TEST

START_TEST(test_kernel_readiness_rechecked)
{
	struct turn t;
	int calls;

	block_credit = 0;
	make_set(false);
	start_output();
	t = turn(T0);
	ck_assert_int_eq(fk.ready_calls, 1);
	ck_assert(!out.feeder.crng_ready);
	/* Not ready: look again within a second or so. */
	ck_assert(t.wait <= 1.0 + 1e-9);
	turn(T0 + 0.5);
	ck_assert_uint_eq(fk.n, 1); /* the uncredited feed */
	/* The kernel got seeded by someone else while rngfeed rests. */
	fk.ready = 1;
	calls = fk.ready_calls;
	for (int k = 1; k <= 20 && !out.feeder.crng_ready; k++) {
		t = turn(T0 + 0.5 + k * 0.25);
		ck_assert(!t.want);
	}
	ck_assert(out.feeder.crng_ready);
	ck_assert_int_gt(fk.ready_calls, calls);
	/* Asked to reseed its CRNG when it was seen ready. */
	ck_assert_int_eq(fk.reseed_calls, 1);
	/* Looked at about once a second, not every turn. */
	ck_assert_int_le(fk.ready_calls - calls, 3);
	/* No feed for it: readiness came without one. */
	ck_assert_uint_eq(fk.n, 1);
	/* Ready: not looked at again. */
	calls = fk.ready_calls;
	for (int k = 0; k < 20; k++)
		turn(T0 + 10 + k);
	ck_assert_int_eq(fk.ready_calls, calls);
}
END_TEST

/* ---- bench-fill ------------------------------------------------------------ */

START_TEST(test_bench_fill)
{
	uint64_t last_credited_reseeds = 0;
	int k, r = 0;

	cfg.bench_fill = 5;
	block_credit = 1024;
	make_set(false);
	start_output();
	ck_assert_str_eq(ops->name, "bench-fill");
	for (k = 0; k < 1000 && r >= 0; k++)
		r = turn(T0 + k * 0.1).step;
	/* Ends after its 5 s, cleanly. */
	ck_assert_int_eq(r, -1);
	ck_assert(clock_now >= T0 + 5 - 1e-9 && clock_now < T0 + 5.2);
	ck_assert_int_eq(out.exit_code, 0);
	ck_assert_uint_gt(fk.n, 100);
	for (unsigned int i = 0; i < fk.n; i++) {
		const struct feed *f = &fk.feeds[i];

		ck_assert_uint_le(f->credit, LEDGER_CAP_BITS);
		ck_assert_uint_le(f->credit, 8 * f->len);
		if (f->credit) {
			ck_assert_uint_gt(f->reseeds, last_credited_reseeds);
			last_credited_reseeds = f->reseeds;
		}
	}
}
END_TEST

/* ---- stdout ---------------------------------------------------------------- */

static int saved_stdout = -1;

static void stdout_to(const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	fflush(stdout);
	saved_stdout = dup(STDOUT_FILENO);
	ck_assert_int_ge(saved_stdout, 0);
	ck_assert_int_ge(dup2(fd, STDOUT_FILENO), 0);
	close(fd);
}

static void stdout_back(void)
{
	dup2(saved_stdout, STDOUT_FILENO);
	close(saved_stdout);
	saved_stdout = -1;
}

static off_t file_size(const char *name)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_size;
}

START_TEST(test_stdout_reseed_bytes_and_total)
{
	uint64_t epoch = 0, last_reseeds = 0, written = 0;
	unsigned int epochs = 0;
	int k, r = 0;

	cfg.mode = MODE_STDOUT;
	cfg.reseed_bytes = 10000; /* not a multiple of a chunk */
	cfg.bytes = 50000;
	make_set(false);
	start_output();
	ck_assert_str_eq(ops->name, "stdout");
	stdout_to("out");
	for (k = 0; k < 1000 && r >= 0; k++) {
		struct turn t = { .wait = 3600 };

		/* turn(), split to see the reseeds between absorb and step. */
		clock_now = T0 + k * 0.01;
		t.want = ops->wants(&out, clock_now, &t.wait);
		absorb(t.want && ops->in_parts);
		if (reseeds() != last_reseeds) {
			last_reseeds = reseeds();
			epoch = 0;
			epochs++;
		}
		r = ops->step(&out, t.want, clock_now, &t.wait);
		epoch += out.out_bytes - written;
		written = out.out_bytes;
		if (epoch > (uint64_t)cfg.reseed_bytes)
			break;
		if (t.want && blocks_ready == 0)
			blocks_ready = 1;
	}
	stdout_back();
	ck_assert_msg(epoch <= (uint64_t)cfg.reseed_bytes,
		      "%llu bytes from one reseed",
		      (unsigned long long)epoch);
	ck_assert_int_eq(r, -1);
	ck_assert_int_eq(out.exit_code, 0);
	ck_assert_uint_eq(out.out_bytes, 50000);
	ck_assert_int_eq(file_size("out"), 50000);
	/* 50,000 bytes at most 10,000 per reseed: five reseeds or more. */
	ck_assert_uint_ge(epochs, 5);
}
END_TEST

/* No fresh input: output stops at reseed-bytes, and at reseed-seconds. */
START_TEST(test_stdout_stops_without_reseed)
{
	cfg.mode = MODE_STDOUT;
	cfg.reseed_bytes = 100000;
	cfg.reseed_seconds = 2;
	make_set(false);
	start_output();
	stdout_to("bytes");
	supply = false;
	blocks_ready = 1;
	for (int k = 0; k < 100; k++)
		turn(T0 + k * 0.001);
	stdout_back();
	ck_assert_uint_eq(reseeds(), 1);
	ck_assert_int_eq(file_size("bytes"), 100000);
	ck_assert_uint_eq(out.out_bytes, 100000);
	output_fini(&out);

	/* The time limit: a big byte limit, a slow clock. */
	conditioner_discard(cond);
	cfg.reseed_bytes = 1 << 30;
	start_output();
	stdout_to("seconds");
	blocks_ready = 1;
	turn(T0 + 10);
	ck_assert_uint_eq(reseeds(), 2);
	for (int k = 1; k <= 40; k++) {
		struct turn t = turn(T0 + 10 + k * 0.25);

		if (k * 0.25 >= cfg.reseed_seconds) {
			ck_assert_int_eq(t.step, 0);
			/* It says when to look again. */
			ck_assert(t.wait <= 1.0);
		}
	}
	stdout_back();
	/* Batches written in the first 2 s (turns at 0, 0.25 .. 1.75). */
	ck_assert_int_eq(file_size("seconds"), 8 * (off_t)OUTPUT_STDOUT_BATCH);
}
END_TEST

/* ---- test mode, ops ------------------------------------------------------- */

START_TEST(test_test_mode)
{
	cfg.mode = MODE_TEST;
	block_credit = 1024;
	make_set(false);
	start_output();
	ck_assert_str_eq(ops->name, "test");
	/* As the kernel output: -t shows what a run would credit. */
	ck_assert(ops->in_parts);
	for (int k = 0; k < 100; k++) {
		struct turn t = turn(T0 + k * 0.01);

		ck_assert(t.want);
	}
	/* A part per turn: one credited step per reseed, at the cap. */
	ck_assert_uint_gt(reseeds(), 10);
	ck_assert_uint_eq(out.feeder.credited_bits,
			  reseeds() * LEDGER_CAP_BITS);
	ck_assert_uint_eq(out.feeder.fed_bytes, reseeds() * 64);
	/* Nothing reached a kernel. */
	ck_assert_uint_eq(fk.n, 0);
}
END_TEST

START_TEST(test_ops_for)
{
	const struct output_ops *o;

	cfg.mode = MODE_DAEMON;
	o = output_ops_for(&cfg);
	ck_assert_str_eq(o->name, "kernel");
	ck_assert(o->in_parts);
	cfg.bench_fill = 3;
	o = output_ops_for(&cfg);
	ck_assert_str_eq(o->name, "bench-fill");
	ck_assert(o->in_parts);
	cfg.mode = MODE_STDOUT;
	o = output_ops_for(&cfg);
	ck_assert_str_eq(o->name, "stdout");
	ck_assert(!o->in_parts);
	cfg.mode = MODE_TEST;
	o = output_ops_for(&cfg);
	ck_assert_str_eq(o->name, "test");
	ck_assert(o->in_parts);
	/* The chunk buffer only where it is used; fini twice is harmless. */
	cfg.mode = MODE_DAEMON;
	cfg.bench_fill = 0;
	ck_assert_int_eq(output_init(&out, &cfg, cond, NULL, &kops, &fparams,
				     T0),
			 0);
	ck_assert_ptr_null(out.buf);
	output_fini(&out);
	cfg.mode = MODE_STDOUT;
	ck_assert_int_eq(output_init(&out, &cfg, cond, NULL, NULL, &fparams,
				     T0),
			 0);
	ck_assert_ptr_nonnull(out.buf);
	output_fini(&out);
	output_fini(&out);
	ck_assert_ptr_null(out.buf);
}
END_TEST

int main(void)
{
	if (reader_setup_signals() < 0 || drbg_library_init() < 0)
		return EXIT_FAILURE;

	return td_run_suite(
		td_suite("output", "output", setup, teardown, 120,
			 TD_TESTS(test_kernel_credited,
				  test_kernel_credit_coming_nothing_uncredited,
				  test_kernel_uncredited_per_interval,
				  test_kernel_no_uncredited_without_reseed,
				  test_kernel_readiness_rechecked,
				  test_bench_fill,
				  test_stdout_reseed_bytes_and_total,
				  test_stdout_stops_without_reseed,
				  test_test_mode, test_ops_for)),
		base, sizeof(base), "output");
}
