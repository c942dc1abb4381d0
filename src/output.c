// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The four outputs: kernel, bench-fill, stdout, test.  See
 * include/rngfeed/output.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rngfeed/log.h"
#include "rngfeed/output.h"
#include "rngfeed/util.h"

#define READY_CHECK_S 1.0 /* while the CRNG is not ready: look this often */
#define BENCH_BURST 32    /* --bench-fill steps per DRBG request */
#define STDOUT_RECHECK_S 0.05

/* Log the outcome @r of feeder_feed(); -errno on a kernel error. */
static int fed(struct output *o, int r, size_t step, unsigned int credit)
{
	if (r < 0) {
		/* Root without the capability is a container's default.  A
		 * -D user was root at the start too: the switch needs it. */
		log_err("RNDADDENTROPY on %s failed: %s%s", o->cfg->random_device,
			strerror(-r),
			r != -EPERM ? ""
			: geteuid() == 0 || o->cfg->user[0]
				? " (CAP_SYS_ADMIN is missing: rngfeed was started as root "
				  "without it, as in a container by default; docker/podman "
				  "run --cap-add SYS_ADMIN grants it, and the container then "
				  "feeds the host's kernel)"
				: " (it needs CAP_SYS_ADMIN: run as root)");
		return r;
	}
	log_debug("fed %zu bytes crediting %u bits", step, credit);
	if (r == 1)
		log_notice("kernel CRNG is ready (%llu bits credited so far)",
			   (unsigned long long)o->feeder.credited_bits);
	return 0;
}

static uint64_t reseeds(const struct output *o)
{
	struct conditioner_stats cs;

	conditioner_get_stats(o->cond, &cs);
	return cs.reseeds;
}

/* ---- kernel ---------------------------------------------------------------- */

/*
 * Credited data while the kernel wants it (until the CRNG is ready, then
 * on the top-up timer).  When no source that could be credited is running
 * or about to, blocks would never add up to a credit: then one uncredited
 * step goes in per --interval, from a fresh reseed, and the readers rest
 * in between (reading for a credit that cannot come spun a core before).
 */
static bool kernel_wants(struct output *o, double now, double *wait)
{
	double w = 3600;

	/* Whoever seeds it (the kernel's own jitter, another feeder),
	 * readiness is looked at again, not remembered from the start. */
	if (!o->feeder.crng_ready) {
		if (now >= o->next_ready_check) {
			feeder_check_ready(&o->feeder, o->kops, now);
			o->next_ready_check = now + READY_CHECK_S;
		}
		if (!o->feeder.crng_ready)
			*wait = fmin(*wait, o->next_ready_check - now);
	}
	if (!feeder_wants(&o->feeder, now, &w)) {
		if (w < 0)
			o->waiting_pollout = true;
		else
			*wait = fmin(*wait, w);
		return false;
	}
	o->credited_only = sourceset_credit_coming(o->set);
	if (o->credited_only || now >= o->next_uncredited)
		return true;
	*wait = fmin(*wait, o->next_uncredited - now);
	return false;
}

static int kernel_step(struct output *o, bool want, double now, double *wait)
{
	uint8_t buf[4096];
	size_t step = (size_t)o->cfg->random_step;
	unsigned int credit = 0;
	int r;

	(void)wait;
	if (!want)
		return 0;
	r = conditioner_credited(o->cond, buf, step, &credit);
	if (r == -EAGAIN) {
		/* Uncredited: only from input read since the last feed. */
		if (o->credited_only || !conditioner_seeded(o->cond) ||
		    reseeds(o) == o->reseeds_at_feed)
			return 0;
		r = conditioner_generate(o->cond, buf, step);
		o->next_uncredited = now + (double)o->cfg->interval;
	}
	if (r < 0)
		return 0; /* the DRBG state was dropped; said already */
	r = fed(o, feeder_feed(&o->feeder, o->kops, buf, step, credit, now),
		step, credit);
	explicit_bzero(buf, sizeof(buf));
	if (r < 0) {
		o->exit_code = EXIT_FAILURE;
		return -1;
	}
	o->reseeds_at_feed = reseeds(o);
	o->waiting_pollout = false;
	return 1;
}

/* ---- bench-fill -------------------------------------------------------------- */

static bool bench_wants(struct output *o, double now, double *wait)
{
	(void)now;
	(void)wait;
	o->credited_only = false;
	return true;
}

/*
 * One DRBG request cut into up to BENCH_BURST steps fed back to back,
 * each credited only with what the ledger allows (mostly nothing), so a
 * benchmark sees how fast the pipeline could fill the kernel.  The
 * shipped fill phase feeds credited steps only.
 */
static int bench_step(struct output *o, bool want, double now, double *wait)
{
	size_t step = (size_t)o->cfg->random_step;
	size_t n = OUTPUT_CHUNK / step < BENCH_BURST ? OUTPUT_CHUNK / step
						     : BENCH_BURST;
	int r = 0;

	(void)want;
	if (now - o->start >= o->cfg->bench_fill)
		return -1;
	if (!conditioner_seeded(o->cond)) {
		/* Until the first block seeds the DRBG, the readers'
		 * eventfd wakes the loop. */
		*wait = fmin(*wait, o->start + o->cfg->bench_fill - now);
		return 0;
	}
	if (conditioner_generate(o->cond, o->buf, n * step) < 0)
		return 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		/* The output came after every reseed the ledger counts. */
		unsigned int credit = conditioner_spend(o->cond, step);

		r = fed(o,
			feeder_feed(&o->feeder, o->kops, o->buf + i * step,
				    step, credit, now),
			step, credit);
	}
	explicit_bzero(o->buf, n * step);
	if (r < 0) {
		o->exit_code = EXIT_FAILURE;
		return -1;
	}
	return 1;
}

/* ---- stdout ------------------------------------------------------------------ */

static bool stdout_may_write(const struct output *o, double now)
{
	struct conditioner_stats cs;

	conditioner_get_stats(o->cond, &cs);
	return conditioner_seeded(o->cond) &&
	       cs.since_reseed < (uint64_t)o->cfg->reseed_bytes &&
	       now - cs.last_reseed < o->cfg->reseed_seconds;
}

/*
 * Always: the next reseed's block is asked for as soon as the last one
 * was taken (a reader holds one block at most and is asked once), so it
 * is ready when the limit comes.  At full speed a reseed is due every
 * ~0.1 ms, less than a busy machine takes to schedule the reader; asked
 * for at half the limit (as before), output stalled at a third of them.
 */
static bool stdout_wants(struct output *o, double now, double *wait)
{
	(void)now;
	(void)wait;
	o->credited_only = false;
	return true;
}

/* ...but reseed only once a limit is reached (before, a block was
 * absorbed as soon as it came: a reseed every ~0.7 MiB, not 1 MiB). */
static bool stdout_absorb_due(struct output *o, double now)
{
	return !stdout_may_write(o, now);
}

/*
 * The output leaves buf as soon as it is written, and the next batch
 * overwrites it, so buf is wiped once output has paused for
 * STDOUT_RECHECK_S (no block for a reseed yet: a dead source, the time
 * limit) and when it ends, not after every write (a pass over every
 * byte, as long as the write itself).
 */
static void stdout_wipe(struct output *o)
{
	if (o->buf_dirty)
		explicit_bzero(o->buf, o->buf_len);
	o->buf_dirty = false;
}

/*
 * Write what is pending without waiting: 1 all of it written, 0 stdout is
 * full (o->stdout_blocked: the loop polls it for POLLOUT), or -errno.
 * stdout is non-blocking, so a reader that stops reading never keeps the
 * loop (and SIGTERM) waiting in write().
 */
static int flush_pending(struct output *o)
{
	while (o->pending_off < o->pending_len) {
		ssize_t n = write(STDOUT_FILENO, o->buf + o->pending_off,
				  o->pending_len - o->pending_off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			o->stdout_blocked = true;
			return 0;
		}
		if (n < 0)
			return -errno;
		o->pending_off += (size_t)n;
		o->out_bytes += (uint64_t)n;
	}
	o->pending_off = o->pending_len = 0;
	return 1;
}

/*
 * Write one batch: up to OUTPUT_STDOUT_BATCH bytes, never past the
 * reseed limit or --bytes; or the rest of the last one, if stdout took
 * only part of it.  1 (loop again), 0 (wait for stdout), or -1 when
 * output is finished.
 */
static int write_batch(struct output *o)
{
	const long long want = o->cfg->bytes;
	struct conditioner_stats cs;
	size_t len = o->buf_len;
	uint64_t room;
	int r;

	if (o->pending_len > 0) {
		r = flush_pending(o);
		goto out;
	}
	conditioner_get_stats(o->cond, &cs);
	room = (uint64_t)o->cfg->reseed_bytes - cs.since_reseed;
	if (want >= 0 && (uint64_t)want - o->out_bytes < len)
		len = (size_t)((uint64_t)want - o->out_bytes);
	if (room < len)
		len = (size_t)room;
	if (len == 0)
		return want < 0 || o->out_bytes < (uint64_t)want ? 1 : -1;
	o->buf_dirty = true;
	r = conditioner_generate_batch(o->cond, o->buf, len);
	if (r == 0) {
		o->pending_len = len;
		r = flush_pending(o);
	}
out:
	if (r == -EPIPE)
		return -1;
	if (r < 0 && r != -ENOKEY) {
		log_err("--stdout: %s", strerror(-r));
		o->exit_code = EXIT_FAILURE;
		return -1;
	}
	if (want >= 0 && o->out_bytes >= (uint64_t)want)
		return -1;
	return r == 0 && o->stdout_blocked ? 0 : 1;
}

static int stdout_step(struct output *o, bool want, double now, double *wait)
{
	(void)want;
	/* What stdout took only part of goes first, whatever the limits
	 * say: it was generated before they were reached. */
	if (o->pending_len > 0 || stdout_may_write(o, now)) {
		int r;

		o->paused_since = 0;
		r = write_batch(o);
		if (r < 0)
			stdout_wipe(o);
		return r;
	}
	if (o->paused_since == 0)
		o->paused_since = now;
	if (now - o->paused_since >= STDOUT_RECHECK_S)
		stdout_wipe(o);
	/* Look again for the time limit, and to wipe. */
	*wait = fmin(*wait, STDOUT_RECHECK_S);
	return 0;
}

/* ---- test -------------------------------------------------------------------- */

/*
 * -t measures each source without reading it flat out for the whole run
 * (RDRAND alone kept a core busy): at the start of every --stats-interval
 * a burst asks every source for blocks for a tenth of the interval, then
 * nothing is asked for and the loop sleeps.  Each source is timed from the
 * burst's start to its end, or, for a source that delivered nothing by
 * then (slower than a block per burst), to the block it was asked for
 * arriving.  The rate lines divide what arrived in that window by its
 * length: the source's rate, not the duty cycle's.
 */
#define TEST_BURST_FRACTION 0.1

static void test_counts(const struct output *o, size_t i, uint64_t *raw,
			uint64_t *passed, uint64_t *blocks)
{
	struct reader_stats st;

	sourceset_stats(o->set, i, &st);
	*raw = st.raw_bytes;
	*passed = st.blocks_passed;
	*blocks = st.blocks_passed + st.blocks_failed;
}

/* Close source @i's window at @now if it is open and may close. */
static void test_close(struct output *o, size_t i, double now, bool burst_over)
{
	uint64_t raw, passed, blocks;

	if (!(o->burst_open & (1u << i)) || !burst_over)
		return;
	test_counts(o, i, &raw, &passed, &blocks);
	/* A source that delivered nothing in the burst: its window closes
	 * with its first block; one that is not reading: with the burst. */
	if (blocks == o->burst_blocks0[i] && sourceset_running(o->set, i)) {
		struct reader_stats st;

		sourceset_stats(o->set, i, &st);
		if (st.state == READER_RUNNING || st.state == READER_STARTUP)
			return;
	}
	o->sample.active[i] += now - o->burst_start;
	o->sample.raw[i] += raw - o->burst_raw0[i];
	o->sample.passed[i] += passed - o->burst_passed0[i];
	o->burst_open &= ~(1u << i);
}

static bool test_wants(struct output *o, double now, double *wait)
{
	double iv = o->cfg->stats_interval;
	double begin = o->start + floor((now - o->start) / iv) * iv;
	size_t n = sourceset_count(o->set);
	bool over;

	if (n > CONFIG_MAX_SOURCES)
		n = CONFIG_MAX_SOURCES;
	o->credited_only = false;
	if (!(iv > 0)) /* no interval (a unit test's zeroed config) */
		return true;
	over = now - o->burst_start >= TEST_BURST_FRACTION * iv;
	for (size_t i = 0; i < n; i++)
		test_close(o, i, now, over);
	if (o->burst_start > 0 && o->burst_start >= begin) {
		if (!over) {
			/* Woken by each block; look at the clock too. */
			*wait = fmin(*wait, 0.01);
			return true;
		}
		/* Sleep until the next interval (a slow source's block
		 * wakes the loop on its own). */
		*wait = fmin(*wait, begin + iv - now);
		return false;
	}
	/* A new interval: windows still open (a source that never
	 * delivered) close here; then the next burst. */
	for (size_t i = 0; i < n; i++)
		test_close(o, i, now, true);
	o->burst_open = 0;
	o->burst_start = now;
	for (size_t i = 0; i < n; i++) {
		test_counts(o, i, &o->burst_raw0[i], &o->burst_passed0[i],
			    &o->burst_blocks0[i]);
		o->burst_open |= 1u << i;
	}
	*wait = fmin(*wait, 0.01);
	return true;
}

static int test_step(struct output *o, bool want, double now, double *wait)
{
	uint8_t buf[4096];
	size_t step = (size_t)o->cfg->random_step;
	unsigned int credit;

	(void)now;
	(void)wait;
	/* Between bursts: nothing asked for, nothing to do. */
	if (!want)
		return 0;
	if (conditioner_credited(o->cond, buf, step, &credit) < 0)
		return 0;
	explicit_bzero(buf, sizeof(buf));
	o->feeder.fed_bytes += step; /* "would have fed" */
	o->feeder.credited_bits += credit;
	/* One step per turn; a turn comes with each block (no spinning
	 * while the burst lasts). */
	return 0;
}

static const struct output_ops output_kernel = {
	.name = "kernel",
	.wants = kernel_wants,
	.in_parts = true,
	.step = kernel_step,
};

static const struct output_ops output_bench_fill = {
	.name = "bench-fill",
	.wants = bench_wants,
	.in_parts = true,
	.step = bench_step,
};

static const struct output_ops output_stdout = {
	.name = "stdout",
	.wants = stdout_wants,
	.in_parts = false,
	.absorb_due = stdout_absorb_due,
	.step = stdout_step,
};

static const struct output_ops output_test = {
	.name = "test",
	.wants = test_wants, /* in a burst per --stats-interval */
	.in_parts = true,     /* as the kernel output: what it would credit */
	.step = test_step,
};

const struct output_ops *output_ops_for(const struct rngfeed_config *cfg)
{
	switch (cfg->mode) {
	case MODE_STDOUT:
		return &output_stdout;
	case MODE_TEST:
		return &output_test;
	default:
		return cfg->bench_fill > 0 ? &output_bench_fill : &output_kernel;
	}
}

int output_init(struct output *o, const struct rngfeed_config *cfg,
		struct conditioner *cond, const struct source_set *set,
		const struct kernel_ops *kops, const struct feeder_params *fp,
		double now)
{
	*o = (struct output){
		.cfg = cfg,
		.cond = cond,
		.set = set,
		.kops = kops,
		.start = now,
		.next_uncredited = now,
		.next_ready_check = now,
		.stdout_flags = -1,
	};
	feeder_init(&o->feeder, fp);
	if (cfg->mode == MODE_STDOUT) {
		/* Non-blocking (see flush_pending()); put back at the end,
		 * as the file description may be a shell's terminal. */
		int fl = fcntl(STDOUT_FILENO, F_GETFL);

		if (fl >= 0 && !(fl & O_NONBLOCK) &&
		    fcntl(STDOUT_FILENO, F_SETFL, fl | O_NONBLOCK) == 0)
			o->stdout_flags = fl;
	}
	if (cfg->mode == MODE_STDOUT || cfg->bench_fill > 0) {
		o->buf_len = cfg->mode == MODE_STDOUT ? OUTPUT_STDOUT_BATCH
						      : OUTPUT_CHUNK;
		o->buf = malloc(o->buf_len);
		if (!o->buf)
			return -ENOMEM;
	}
	return 0;
}

void output_fini(struct output *o)
{
	if (o->buf)
		explicit_bzero(o->buf, o->buf_len);
	free(o->buf);
	o->buf = NULL;
	o->buf_dirty = false;
	o->pending_off = o->pending_len = 0;
	if (o->stdout_flags >= 0)
		(void)fcntl(STDOUT_FILENO, F_SETFL, o->stdout_flags);
	o->stdout_flags = -1;
}
