// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reporting (report.h) over a real source set with test-double drivers, a
 * real conditioner and a feeder filled in by hand: the STATUS= line and
 * "why nothing is credited yet" for a credit-0-only set, a credited
 * source in its start-up test, a source in error, nothing running, and
 * once something was credited; the metrics file; the rate and summary
 * lines.  The hw_random sysfs is a fixture in a temporary directory.
 */
#include <check.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rngfeed/conditioner.h"
#include "rngfeed/drbg.h"
#include "rngfeed/feeder.h"
#include "rngfeed/reader.h"
#include "rngfeed/report.h"
#include "rngfeed/sourceset.h"
#include "test_doubles.h"

#define KERNEL_LINE "the kernel credits virtio_rng.0 itself at 1024/1024"

/* ---- the test doubles (test_doubles.h) ------------------------------------ */

TD_DRIVER(credited, 512, td_probe, td_open, td_read);
TD_DRIVER(zero, 0, td_probe, td_open, td_read);
TD_DRIVER(failing, 512, td_probe, td_open, td_read_fails);
TD_DRIVER(idle, 768, td_probe, td_open, td_read); /* configured, never started */

/* ---- fixture ------------------------------------------------------------- */

static char base[64]; /* the run's directory (main) */
static char dir[80], sysfs[96];
static struct rngfeed_config cfg;
static struct source_set *set;
static struct conditioner *cond;
static struct feeder feeder;
static struct report rep;

static void setup(void)
{
	static const struct feeder_params fp = {
		.modern_kernel = true, .interval_s = 60, .step = 64,
	};

	td_dir_make(dir, sizeof(dir), base);
	snprintf(sysfs, sizeof(sysfs), "%s/sysfs", dir);
	ck_assert_int_eq(mkdir(sysfs, 0700), 0);
	td_put(sysfs, "rng_current", "virtio_rng.0\n");
	td_put(sysfs, "rng_quality", "1024\n");
	memset(&cfg, 0, sizeof(cfg));
	cfg.mode = MODE_DAEMON;
	set = NULL;
	ck_assert_int_eq(conditioner_new(&cond, NULL), 0);
	feeder_init(&feeder, &fp);
	report_init(&rep, 100.0);
}

static void teardown(void)
{
	sourceset_free(set);
	set = NULL;
	conditioner_free(cond);
	cond = NULL;
	td_tree_remove(dir);
}

static void add(const struct source_driver *d)
{
	source_config_init(&cfg.sources[cfg.n_sources++], d);
}

static enum reader_state state_of(size_t i)
{
	struct reader_stats st;

	sourceset_stats(set, i, &st);
	return st.state;
}

#define ASSERT_STATE(i, s)                                                 \
	ck_assert_msg(TD_WAIT_UNTIL(state_of(i) == (s)), "slot %d: %s, never %s", (int)(i), \
		      reader_state_name(state_of(i)), reader_state_name(s))

/* Open every configured source, start @n_start of them (the first ones:
 * the rest stay configured, never used). */
static void start_set(size_t n_start)
{
	const struct sourceset_params p = {
		.retry_delay = 0.05, .retry_max = 0.2, .max_failures = 3,
		.sysfs_dir = sysfs, .gate_state = "",
	};
	struct rngfeed_config c = cfg;

	for (size_t i = n_start; i < c.n_sources; i++)
		c.sources[i].enabled = false;
	ck_assert_int_eq(sourceset_new(&set, &c, &p), 0);
	ck_assert_uint_eq(sourceset_open(set), n_start);
	ck_assert_uint_eq(sourceset_start(set, -1), n_start);
	/* Past opening (the set opened them; the reader only takes over). */
	for (size_t i = 0; i < n_start; i++)
		ASSERT_STATE(i, READER_STARTUP);
}

static struct report_view view(enum rngfeed_mode mode)
{
	return (struct report_view){
		.mode = mode, .set = set, .cond = cond, .feeder = &feeder,
	};
}

/* A block from slot @want, taken and absorbed whole. */
static void take_from(unsigned int want)
{
	static uint8_t block[MONITOR_BLOCK_BYTES];
	unsigned int idx = 99, credit;
	double end = td_now() + TD_DEADLINE_S;

	/* Only credited sources are asked when the wanted one has a
	 * credit: the others stay in their start-up test. */
	while (td_now() < end) {
		sourceset_request(set, sourceset_credit(set, want) > 0);
		if (sourceset_take(set, block, &idx, &credit)) {
			conditioner_hold(cond, idx, credit, block);
			ck_assert_int_eq(conditioner_absorb(cond, false), 1);
			if (idx == want)
				return;
		}
		td_nap();
	}
	ck_abort_msg("no block from slot %u", want);
}

/* A credit-0 source and a credited one, both started and in their
 * start-up test. */
static void start_zero_and_credited(void)
{
	add(&zero);
	add(&credited);
	start_set(2);
	ASSERT_STATE(0, READER_STARTUP);
	ASSERT_STATE(1, READER_STARTUP);
}

/* ---- why nothing is credited, STATUS= ------------------------------------ */

START_TEST(test_credit_zero_only)
{
	struct report_view v;
	char why[256], status[512];
	size_t n;

	add(&zero);
	start_set(1);
	ASSERT_STATE(0, READER_STARTUP);
	v = view(MODE_DAEMON);
	report_why_no_credit(&v, why, sizeof(why));
	ck_assert_str_eq(why, "zero has credit 0 (nothing to credit)");
	n = report_status(&v, status, sizeof(status));
	ck_assert_uint_eq(n, strlen(status));
	ck_assert_str_eq(status,
			 "Feeding from zero; 0 bits credited in 0 feeds, none "
			 "yet: zero has credit 0 (nothing to credit); kernel "
			 "CRNG not ready; " KERNEL_LINE);
}
END_TEST

START_TEST(test_credited_in_startup)
{
	struct report_view v;
	char why[256], status[512];

	add(&credited);
	start_set(1);
	/* Nothing asked of it: open, its start-up test not run yet. */
	ASSERT_STATE(0, READER_STARTUP);
	v = view(MODE_DAEMON);
	report_why_no_credit(&v, why, sizeof(why));
	ck_assert_str_eq(why, "credited in its start-up test");
	report_status(&v, status, sizeof(status));
	ck_assert_msg(strstr(status, "Feeding from credited;"), "%s", status);
	ck_assert_msg(strstr(status, ", none yet: credited in its start-up "
				     "test;"),
		      "%s", status);
}
END_TEST

START_TEST(test_mixed_and_running)
{
	struct report_view v;
	char why[256];

	start_zero_and_credited();
	v = view(MODE_DAEMON);
	report_why_no_credit(&v, why, sizeof(why));
	ck_assert_str_eq(why,
			 "zero has credit 0, credited in its start-up test");
	/* Running, not yet enough for a credit. */
	take_from(1);
	ASSERT_STATE(1, READER_RUNNING);
	report_why_no_credit(&v, why, sizeof(why));
	ck_assert_str_eq(why, "zero has credit 0, credited running");
}
END_TEST

START_TEST(test_something_credited)
{
	struct report_view v;
	char why[256] = "x", status[512];

	start_zero_and_credited();
	feeder.credited_bits = 512;
	feeder.calls = 3;
	feeder.fed_bytes = 192;
	feeder.crng_ready = true;
	v = view(MODE_DAEMON);
	report_why_no_credit(&v, why, sizeof(why));
	ck_assert_str_eq(why, "");
	report_status(&v, status, sizeof(status));
	ck_assert_str_eq(status, "Feeding from zero credited; 512 bits "
				 "credited in 3 feeds; kernel CRNG ready; "
				 KERNEL_LINE);
}
END_TEST

START_TEST(test_source_in_error)
{
	struct report_view v;
	char why[256], status[512];

	add(&failing);
	add(&zero);
	start_set(2);
	ASSERT_STATE(1, READER_STARTUP);
	sourceset_request(set, true);
	ASSERT_STATE(0, READER_BACKOFF);
	v = view(MODE_DAEMON);
	report_why_no_credit(&v, why, sizeof(why));
	ck_assert_msg(strncmp(why, "failing error: read failed: ", 28) == 0,
		      "%s", why);
	report_status(&v, status, sizeof(status));
	/* Not among what feeds, but said with its reason. */
	ck_assert_msg(strncmp(status, "Feeding from zero;", 18) == 0, "%s",
		      status);
	ck_assert_msg(strstr(status, "; failing error: read failed: "), "%s",
		      status);
}
END_TEST

START_TEST(test_nothing_running)
{
	struct report_view v;
	char why[256], status[512];

	add(&credited);
	start_set(0);
	v = view(MODE_TEST);
	report_why_no_credit(&v, why, sizeof(why));
	ck_assert_str_eq(why, "no source is running");
	report_status(&v, status, sizeof(status));
	/* Not "Testing from;" with nothing after "from" (seen in a VM). */
	ck_assert_msg(strncmp(status, "Testing from no source; 0 bits", 30) == 0,
		      "%s", status);
	v = view(MODE_STDOUT);
	report_status(&v, status, sizeof(status));
	ck_assert_msg(strncmp(status, "Writing stdout from no source;", 30) == 0,
		      "%s", status);
}
END_TEST

/* A STATUS= line cut to any buffer: a prefix of the whole, terminated,
 * and the count says what is there. */
START_TEST(test_status_truncated)
{
	struct report_view v;
	char full[512], buf[512];

	start_zero_and_credited();
	v = view(MODE_DAEMON);
	report_status(&v, full, sizeof(full));
	ck_assert_uint_lt(strlen(full), sizeof(full) - 1);
	for (size_t len = 1; len <= strlen(full) + 1; len++) {
		size_t n;

		memset(buf, 'X', sizeof(buf));
		n = report_status(&v, buf, len);
		ck_assert_uint_lt(n, len);
		ck_assert_uint_eq(n, strlen(buf));
		ck_assert_msg(strncmp(buf, full, n) == 0, "len %zu: '%s'", len,
			      buf);
		ck_assert_int_eq(buf[len], 'X');
	}
}
END_TEST

/*
 * FAILS ON THE CURRENT CODE (bug, src/report.c report_why_no_credit):
 * when the first source's phrase does not fit @len, the loop breaks with
 * nothing counted as used and the function then writes "no source is
 * running" although a source is running.  Cut to any buffer the phrase
 * should be a prefix of the whole one.
 */
START_TEST(test_why_truncated_not_wrong)
{
	struct report_view v;
	char full[256], buf[256];

	start_zero_and_credited();
	v = view(MODE_DAEMON);
	report_why_no_credit(&v, full, sizeof(full));
	for (size_t len = 1; len <= strlen(full) + 1; len++) {
		report_why_no_credit(&v, buf, len);
		ck_assert_uint_lt(strlen(buf), len);
		ck_assert_msg(strncmp(buf, full, strlen(buf)) == 0,
			      "len %zu: '%s' is not a prefix of '%s'", len,
			      buf, full);
	}
}
END_TEST

/* ---- metrics ------------------------------------------------------------- */

static char *slurp(const char *path)
{
	static char buf[16384];
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Is @line one whole line of @text? */
static bool has_line(const char *text, const char *line)
{
	size_t len = strlen(line);

	for (const char *p = strstr(text, line); p; p = strstr(p + 1, line))
		if ((p == text || p[-1] == '\n') && p[len] == '\n')
			return true;
	return false;
}

#define ASSERT_LINE(text, line) \
	ck_assert_msg(has_line(text, line), "no line '%s' in:\n%s", line, text)

START_TEST(test_metrics_file)
{
	struct report_view v;
	char path[128], line[160];
	struct reader_stats rs;
	struct stat st;
	unsigned int eff;
	const char *m;

	add(&zero);
	add(&credited);
	add(&idle);
	start_set(2);
	take_from(1); /* 20,000 bits at the limit in force deposited */
	ASSERT_STATE(1, READER_RUNNING);
	feeder.fed_bytes = 4096;
	feeder.credited_bits = 256;
	feeder.calls = 64;
	v = view(MODE_DAEMON);
	snprintf(path, sizeof(path), "%s/rngfeed.prom", dir);
	ck_assert_int_eq(report_metrics(&rep, &v, path, 112.5), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0644);
	m = slurp(path);
	ASSERT_LINE(m, "rngfeed_fed_bytes_total 4096");
	ASSERT_LINE(m, "rngfeed_credited_bits_total 256");
	ASSERT_LINE(m, "rngfeed_kernel_crng_ready 0");
	ASSERT_LINE(m, "rngfeed_uptime_seconds 12.500");
	ASSERT_LINE(m, "# TYPE rngfeed_source_effective_credit gauge");
	ASSERT_LINE(m, "rngfeed_source_effective_credit{source=\"zero\"} 0");
	/* The block was credited at the limit its estimates set (issue 25:
	 * a quarter of the on-line estimate before a full assessment),
	 * at most the ceiling; the reader has waited since, so it holds. */
	eff = sourceset_effective_credit(set, 1);
	ck_assert_uint_gt(eff, 0);
	ck_assert_uint_le(eff, ONLINE_NO_LIMIT / ASSESSOR_QUICK_DIVISOR);
	snprintf(line, sizeof(line),
		 "rngfeed_source_effective_credit{source=\"credited\"} %u", eff);
	ASSERT_LINE(m, line);
	snprintf(line, sizeof(line),
		 "rngfeed_source_credit_bits_total{source=\"credited\"} %u",
		 20000 * eff / 1024);
	ASSERT_LINE(m, line);
	ASSERT_LINE(m, "rngfeed_source_estimate_in_force{source=\"credited\"} 1");
	ASSERT_LINE(m, "rngfeed_source_estimate_in_force{source=\"zero\"} 0");
	ASSERT_LINE(m, "rngfeed_source_credit_bits_total{source=\"zero\"} 0");
	ASSERT_LINE(m, "rngfeed_source_enabled{source=\"credited\"} 1");
	ASSERT_LINE(m, "rngfeed_source_enabled{source=\"zero\"} 0");
	ASSERT_LINE(m, "rngfeed_source_blocks_passed_total{source=\"credited\"}"
		       " 1");
	/* (A block of random data may fail a test: rarely, not never.) */
	sourceset_stats(set, 1, &rs);
	snprintf(line, sizeof(line),
		 "rngfeed_source_raw_bytes_total{source=\"credited\"} %llu",
		 (unsigned long long)rs.raw_bytes);
	ck_assert_uint_ge(rs.raw_bytes, MONITOR_BLOCK_BYTES);
	ASSERT_LINE(m, line);
	ASSERT_LINE(m, "rngfeed_drbg_discards_total 0");
	ASSERT_LINE(m, "rngfeed_drbg_reseeds_total 1");
	/* A configured source never used is not reported. */
	ck_assert_ptr_null(strstr(m, "source=\"idle\""));
	/* No temporary file left behind. */
	ck_assert_int_eq(access(path, F_OK), 0);

	/* -t: nothing was fed to the kernel. */
	conditioner_discard(cond);
	v = view(MODE_TEST);
	ck_assert_int_eq(report_metrics(&rep, &v, path, 113.0), 0);
	m = slurp(path);
	ASSERT_LINE(m, "rngfeed_fed_bytes_total 0");
	ASSERT_LINE(m, "rngfeed_credited_bits_total 0");
	ASSERT_LINE(m, "rngfeed_drbg_discards_total 1");

	/* A directory that is not there: an error, not a crash. */
	snprintf(path, sizeof(path), "%s/nodir/rngfeed.prom", dir);
	ck_assert_int_lt(report_metrics(&rep, &v, path, 113.0), 0);
}
END_TEST

/* ---- rate and summary lines ---------------------------------------------- */

/* Run @fn with stderr going to a file; its text. */
static const char *capture_stderr(void (*fn)(void))
{
	char path[128];
	int fd, saved;
	const char *text;

	snprintf(path, sizeof(path), "%s/stderr", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(fd, STDERR_FILENO), 0);
	close(fd);
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	text = slurp(path);
	return text;
}

static void rates_and_summary(void)
{
	struct report_view v = view(MODE_DAEMON);

	report_rates(&rep, &v, 110.0);
	report_summary(&rep, &v, 110.0);
}

START_TEST(test_rates_and_summary)
{
	struct reader_stats rs;
	unsigned int eff;
	char want[200];
	const char *out;

	add(&credited);
	start_set(1);
	take_from(0);
	ASSERT_STATE(0, READER_RUNNING);
	sourceset_stats(set, 0, &rs);
	feeder.fed_bytes = 64;
	feeder.credited_bits = 256;
	out = capture_stderr(rates_and_summary);
	/* One block passed (2500 raw bytes, more if a block of random data
	 * failed a test) in the 10 s since report_init(). */
	ck_assert_uint_eq(rs.blocks_passed, 1);
	/* At the limit in force (see test_metrics_file). */
	eff = sourceset_effective_credit(set, 0);
	ck_assert_uint_gt(eff, 0);
	ck_assert_uint_le(eff, ONLINE_NO_LIMIT / ASSESSOR_QUICK_DIVISOR);
	snprintf(want, sizeof(want),
		 "rngfeed: credited: %.1f B/s raw, blocks 1 passed %llu "
		 "failed, %.1f credit bits/s [running]",
		 (double)rs.raw_bytes / 10.0,
		 (unsigned long long)rs.blocks_failed, 20000.0 * eff / 1024.0 / 10.0);
	ck_assert_msg(strstr(out, want), "no '%s' in:\n%s", want, out);
	ck_assert_msg(strstr(out, "1 reseeds; fed 64 bytes, 256 bits "
				  "credited"),
		      "%s", out);
	ck_assert_msg(strstr(out, "summary after 10.0 s:"), "%s", out);
	snprintf(want, sizeof(want), "credited: %llu raw bytes, 1 block passed",
		 (unsigned long long)rs.raw_bytes);
	ck_assert_msg(strstr(out, want), "%s", out);
	snprintf(want, sizeof(want), "%u bits of entropy deposited in the DRBG",
		 20000 * eff / 1024);
	ck_assert_msg(strstr(out, want), "%s", out);
	ck_assert_msg(strstr(out, "kernel CRNG not ready"), "%s", out);
}
END_TEST

int main(void)
{
	if (reader_setup_signals() < 0 || drbg_library_init() < 0)
		return EXIT_FAILURE;

	return td_run_suite(
		td_suite("report", "report", setup, teardown, 180,
			 TD_TESTS(test_credit_zero_only,
				  test_credited_in_startup,
				  test_mixed_and_running,
				  test_something_credited, test_source_in_error,
				  test_nothing_running, test_status_truncated,
				  test_why_truncated_not_wrong,
				  test_metrics_file, test_rates_and_summary)),
		base, sizeof(base), "report");
}
