/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rngfeed --check: feeds a byte stream through the integrity monitor and
 * prints rngtest-compatible counters followed by the SP 800-90B results.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rngfeed/checkmode.h"
#include "rngfeed/monitor.h"

#define SEED_BYTES 4u
#define CHUNK_BLOCKS 26u /* read about 64 KB at a time */
#define BUF_BYTES (CHUNK_BLOCKS * MONITOR_BLOCK_BYTES)

/* rngtest's names, in rngtest's order, for the FIPS counter lines. */
static const struct {
	unsigned bit;
	const char *name;
} fips_lines[] = {
	{ MONITOR_FIPS_MONOBIT, "FIPS 140-2(2001-10-10) Monobit" },
	{ MONITOR_FIPS_POKER, "FIPS 140-2(2001-10-10) Poker" },
	{ MONITOR_FIPS_RUNS, "FIPS 140-2(2001-10-10) Runs" },
	{ MONITOR_FIPS_LONGRUN, "FIPS 140-2(2001-10-10) Long run" },
	{ MONITOR_FIPS_CONTINUOUS, "FIPS 140-2(2001-10-10) Continuous run" },
};

struct tally {
	uint64_t bytes, blocks, fips_good, fips_bad, fips[5];
	uint64_t rct, apt, drct, permanent_90b, usable, startup_failures;
	bool startup_passed;
};

/* Fills up to len bytes; returns the count (short only at EOF) or -errno. */
static ssize_t read_some(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n > 0) {
			got += (size_t)n;
		} else if (n == 0) {
			break;
		} else if (errno == EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };

			if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
				return -errno;
		} else if (errno != EINTR) {
			return -errno;
		}
	}
	return (ssize_t)got;
}

static void count_block(struct tally *t, const struct monitor_verdict *v)
{
	t->blocks++;
	if (v->failed & MONITOR_FIPS_MASK)
		t->fips_bad++;
	else
		t->fips_good++;
	for (size_t i = 0; i < sizeof(fips_lines) / sizeof(fips_lines[0]); i++)
		if (v->failed & fips_lines[i].bit)
			t->fips[i]++;
	t->rct += !!(v->failed & MONITOR_RCT);
	t->apt += !!(v->failed & MONITOR_APT);
	t->drct += !!(v->failed & MONITOR_DRCT);
	t->permanent_90b += !!(v->failed & MONITOR_PERMANENT_MASK);
	t->usable += v->usable;
	t->startup_failures += v->startup_failed;
	t->startup_passed = v->startup_passed;
}

static void report(FILE *out, const struct tally *t, const struct monitor_params *p,
		   const struct monitor_cutoffs *c)
{
	fprintf(out, "rngfeed: bits received from input: %llu\n", (unsigned long long)t->bytes * 8);
	fprintf(out, "rngfeed: FIPS 140-2 successes: %llu\n", (unsigned long long)t->fips_good);
	fprintf(out, "rngfeed: FIPS 140-2 failures: %llu\n", (unsigned long long)t->fips_bad);
	for (size_t i = 0; i < sizeof(fips_lines) / sizeof(fips_lines[0]); i++)
		fprintf(out, "rngfeed: %s: %llu\n", fips_lines[i].name,
			(unsigned long long)t->fips[i]);

	fprintf(out, "rngfeed: SP 800-90B min-entropy: %g bits per %u-bit sample, alpha: 2^%g, "
		     "permanent alpha: 2^%g\n",
		p->min_entropy, p->sample_bits, p->alpha_log2, p->permanent_alpha_log2);
	fprintf(out, "rngfeed: SP 800-90B cutoffs: repetition count %u (permanent %u), "
		     "adaptive proportion %u (permanent %u) per %u samples\n",
		c->rct, c->rct_permanent, c->apt, c->apt_permanent, c->apt_window);
	if (!t->blocks)
		fprintf(out, "rngfeed: SP 800-90B start-up test: not run (no whole block)\n");
	else if (t->startup_passed && !t->startup_failures)
		fprintf(out, "rngfeed: SP 800-90B start-up test: passed\n");
	else if (t->startup_passed)
		fprintf(out, "rngfeed: SP 800-90B start-up test: failed, passed after %llu blocks\n",
			(unsigned long long)t->startup_failures);
	else
		fprintf(out, "rngfeed: SP 800-90B start-up test: failed\n");
	fprintf(out, "rngfeed: SP 800-90B repetition count failures: %llu\n",
		(unsigned long long)t->rct);
	fprintf(out, "rngfeed: SP 800-90B adaptive proportion failures: %llu\n",
		(unsigned long long)t->apt);
	/* Developer-defined (§4.5): C equal non-zero differences in a row. */
	fprintf(out, "rngfeed: SP 800-90B difference repetition count (developer-defined, "
		     "cutoff %u, permanent %u) failures: %llu\n",
		c->drct, c->drct_permanent, (unsigned long long)t->drct);
	fprintf(out, "rngfeed: SP 800-90B permanent failures: %llu\n",
		(unsigned long long)t->permanent_90b);
	fprintf(out, "rngfeed: blocks usable (all tests passed, after start-up): %llu\n",
		(unsigned long long)t->usable);
}

/* Seeds, then tests every whole block; returns 0 or -errno. */
static int check_stream(int fd, struct monitor *m, struct tally *t, uint8_t *buf)
{
	bool seeded = false;
	size_t have = 0;

	for (;;) {
		size_t off = 0, want = BUF_BYTES - have;
		ssize_t n = read_some(fd, buf + have, want);

		if (n < 0)
			return (int)n;
		t->bytes += (uint64_t)n;
		have += (size_t)n;
		if (!seeded && have >= SEED_BYTES) {
			monitor_seed_continuous(m, buf);
			seeded = true;
			off = SEED_BYTES;
		}
		for (; seeded && have - off >= MONITOR_BLOCK_BYTES; off += MONITOR_BLOCK_BYTES) {
			struct monitor_verdict v;

			monitor_test_block(m, buf + off, &v);
			count_block(t, &v);
		}
		memmove(buf, buf + off, have - off);
		have -= off;
		if ((size_t)n < want) /* read_some() is short only at EOF */
			return 0;
	}
}

int checkmode_run(int in_fd, double min_entropy, FILE *out, FILE *err)
{
	struct monitor_params p;
	struct monitor_cutoffs c;
	struct tally t = { .bytes = 0 };
	struct monitor *m = NULL;
	uint8_t *buf;
	int r;

	monitor_params_default(&p);
	p.min_entropy = min_entropy > 0 ? min_entropy : CHECKMODE_DEFAULT_MIN_ENTROPY;
	/* Debian's rngtest (rng-tools5) counts runs with the rng-tools <= 6.10
	 * quirks; agree with it counter for counter. */
	p.fips_counting = MONITOR_FIPS_RNGTEST5;
	r = monitor_new(&p, &m);
	if (r < 0) {
		fprintf(err, "rngfeed: --check: min-entropy %g is outside (0, 8] bits per byte\n",
			p.min_entropy);
		return 2;
	}
	buf = malloc(BUF_BYTES);
	if (!buf) {
		monitor_free(m);
		fprintf(err, "rngfeed: --check: %s\n", strerror(ENOMEM));
		return 2;
	}
	r = check_stream(in_fd, m, &t, buf);
	explicit_bzero(buf, BUF_BYTES); /* raw input */
	free(buf);
	monitor_get_cutoffs(m, &c);
	monitor_free(m);
	if (r < 0) {
		fprintf(err, "rngfeed: --check: error reading input: %s\n", strerror(-r));
		return 2;
	}

	report(out, &t, &p, &c);
	if (fflush(out) != 0 || ferror(out)) {
		fprintf(err, "rngfeed: --check: error writing output: %s\n", strerror(errno));
		return 2;
	}
	/* Like rngtest, a run that tested no whole block has not passed. */
	return t.fips_bad || t.rct || t.apt || t.drct || !t.blocks || !t.startup_passed ? 1 : 0;
}
