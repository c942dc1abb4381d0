// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The log queue (issue 33, item 1): with stderr a pipe nobody reads,
 * log_msg() returns however many lines come, the lines that did not fit
 * are counted, the stream gets them in order once it is read, with one
 * line where the dropped ones were, and log_finish() returns while the
 * stream is stalled, its total written once it drains.  (Before, the
 * first line that found the pipe full never returned.)
 *
 * The log module's state is the process's: one test, in steps.
 */
#include <check.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rngfeed/log.h"
#include "test_doubles.h"

#define LINES 2000 /* 100-byte lines: far more than the pipe and the queue */

static char got[1 << 20];
static size_t got_len;

/* What the stream said so far: lines "rngfeed: line N ..." in order, with
 * "rngfeed: log: K lines dropped here" where K of them went. */
struct tally {
	int expect;                  /* the next line's number */
	unsigned long long dropped;  /* the gaps' sum */
	unsigned long long in_all;   /* the last "dropped in all" */
};

/* Take the whole lines in got[], keep a part-line. */
static void parse(struct tally *t)
{
	char *start = got, *nl;

	while ((nl = memchr(start, '\n', got_len - (size_t)(start - got)))) {
		unsigned long long k;
		int i;

		*nl = '\0';
		if (sscanf(start, "rngfeed: line %d", &i) == 1) {
			ck_assert_int_eq(i, t->expect);
			t->expect = i + 1;
		} else if (sscanf(start, "rngfeed: log: %llu line", &k) == 1 &&
			   strstr(start, "dropped here")) {
			t->expect += (int)k;
			t->dropped += k;
		} else if (sscanf(start, "rngfeed: log: %llu line", &k) == 1 &&
			   strstr(start, "dropped in all")) {
			t->in_all = k;
		} else {
			ck_abort_msg("unexpected line '%s'", start);
		}
		start = nl + 1;
	}
	got_len -= (size_t)(start - got);
	memmove(got, start, got_len);
}

/* Read and tally until @done(t) (or the test's timeout ends it). */
static void read_until(int fd, struct tally *t, bool (*done)(const struct tally *))
{
	while (!done(t)) {
		ssize_t n = read(fd, got + got_len, sizeof(got) - got_len);

		ck_assert_int_gt(n, 0);
		got_len += (size_t)n;
		parse(t);
	}
}

static int until_line; /* read_until()'s goal: every line up to it */
static bool all_lines(const struct tally *t) { return t->expect >= until_line; }
static bool total_seen(const struct tally *t) { return t->in_all > 0; }

/* @n lines "rngfeed: line NNNN xxx...", numbered from @first. */
static void log_lines(int first, int n)
{
	char pad[81];

	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	for (int i = first; i < first + n; i++)
		log_notice("line %04d %s", i, pad);
}

START_TEST(test_stalled_stream)
{
	int p[2], saved = dup(STDERR_FILENO);
	struct tally t = { 0 };
	unsigned long long first;

	ck_assert_int_ge(saved, 0);
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_ge(fcntl(p[1], F_SETPIPE_SZ, 4096), 4096);
	ck_assert_int_eq(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
	close(p[1]);
	log_setup(LOG_NOTICE, LOG_TO_STDERR);
	log_queue_begin();
	ck_assert_int_eq(log_writer_start(), 0);

	/* Nobody reads: every call returns, and what did not fit counts. */
	log_lines(0, LINES);
	ck_assert_uint_gt(log_dropped_lines(), 0);
	ck_assert_uint_lt(log_dropped_lines(), LINES);

	/* Read: every line in order, or a line that says how many went
	 * there; the gaps add up to the count. */
	until_line = LINES;
	read_until(p[0], &t, all_lines);
	ck_assert_uint_gt(t.dropped, 0);
	ck_assert_uint_eq(t.dropped, log_dropped_lines());

	/* Stalled again: log_finish() returns all the same, and its total
	 * comes once the stream is read, after the lines and gaps it
	 * adds up. */
	first = t.dropped;
	log_lines(LINES, LINES);
	log_finish(td_now() + 0.25);
	read_until(p[0], &t, total_seen);
	ck_assert_int_eq(t.expect, 2 * LINES);
	ck_assert_uint_gt(t.in_all, first);
	ck_assert_uint_eq(t.in_all, t.dropped);
	ck_assert_uint_eq(t.in_all, log_dropped_lines());

	dup2(saved, STDERR_FILENO);
	close(saved);
	close(p[0]);
}
END_TEST

int main(void)
{
	return td_run(td_suite("log", "queue", NULL, NULL, 60,
			       TD_TESTS(test_stalled_stream)));
}
