/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Throughput of monitor_test_block() (FIPS 140-2 + SP 800-90B, the
 * developer-defined difference RCT included) on random data, one core, and
 * of the peer, rngtest, over the same bytes in the same run.
 * Usage: bench_monitor [-r RUNS] [-p] [MiB]   (default 5 runs, 64 MiB;
 *        -p: no peer)
 * Output, one line per figure (medians of RUNS), for bench/stages.sh:
 *   monitor dispatch=default|portable simd=avx512|none samples=8|1
 *           bytes_per_s=N blocks=N failed=N
 *   rngtest bytes_per_s=N bytes=N        or  rngtest unavailable reason=...
 *   estimate budget=B ns_per_block=N estimates=N blocks=N
 * The last: the on-line min-entropy estimate (issue 19) a reader runs on
 * the blocks that passed, per block: with no budget (an estimate with each
 * quarter window, over the first ESTIMATE_FREE_BLOCKS blocks) and with the
 * daemon's budget (ONLINE_BUDGET of the thread's CPU), beside the monitor's
 * cost per block.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "rngfeed/monitor.h"
#include "rngfeed/online_estimate.h"

#define MAX_RUNS 99
#define ESTIMATE_FREE_BLOCKS 2000

static int fill_random(uint8_t *buf, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t n = getrandom(buf + off, len - off, 0);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			off += (size_t)n;
	}
	return 0;
}

/* The condition monitor.c dispatches on, repeated here only to label the
 * default row; the monitor itself does not say which code it chose. */
static bool have_avx512(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vpopcntdq");
#else
	return false;
#endif
}

struct config {
	unsigned sample_bits;
	bool portable;
	struct monitor *m;
	double bps[MAX_RUNS];
	unsigned long failures;
};

/* One pass of monitor_test_block() over every block; bytes per second. */
static double pass(struct config *c, const uint8_t *data, size_t blocks)
{
	double t0 = bench_now();

	c->failures = 0;
	monitor_reset(c->m);
	for (size_t i = 0; i < blocks; i++) {
		struct monitor_verdict v;

		monitor_test_block(c->m, data + i * MONITOR_BLOCK_BYTES, &v);
		c->failures += v.failed != 0;
	}
	return (double)blocks * MONITOR_BLOCK_BYTES / (bench_now() - t0);
}

/* What the on-line estimate costs a reader per block (byte samples) as
 * the reader calls it: add before the hand-over, update after. */
static int estimate_cost(const uint8_t *data, size_t blocks, double budget)
{
	struct online_estimate *e;
	struct online_estimate_result res;
	double t0;
	int r;

	r = online_estimate_new(8, budget, &e);
	if (r < 0)
		return r;
	t0 = bench_now();
	for (size_t i = 0; i < blocks && r >= 0; i++) {
		r = online_estimate_add(e, data + i * MONITOR_BLOCK_BYTES);
		if (r >= 0)
			r = online_estimate_update(e);
	}
	if (r >= 0) {
		double ns = (bench_now() - t0) * 1e9 / (double)blocks;

		online_estimate_get(e, &res);
		printf("estimate budget=%g ns_per_block=%.0f estimates=%llu blocks=%zu\n",
		       budget, ns, (unsigned long long)res.estimates, blocks);
	}
	online_estimate_free(e);
	return r < 0 ? r : 0;
}

/* Bytes per second of "rngtest < FILE", or 0 with @why set. */
static double rngtest_once(const char *path, size_t len, char *why, size_t why_len)
{
	char cmd[256];
	double t0;
	int st;

	snprintf(cmd, sizeof(cmd), "exec rngtest < %s 2>/dev/null", path);
	t0 = bench_now();
	st = system(cmd);
	/* rngtest exits 1 when a block failed, as random data does now and
	 * then; only "could not run" (127, a signal) disqualifies the run. */
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) > 1) {
		snprintf(why, why_len, "rngtest did not run (status %d)", st);
		return 0;
	}
	return (double)len / (bench_now() - t0);
}

static int usage(void)
{
	fprintf(stderr, "usage: bench_monitor [-r RUNS] [-p] [MiB]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct config cfg[3] = {
		{ .sample_bits = 8, .portable = false },
		{ .sample_bits = 8, .portable = true },
		{ .sample_bits = 1, .portable = false },
	};
	const char *simd = have_avx512() ? "avx512" : "none";
	char path[] = "/tmp/bench_monitor.XXXXXX", why[128] = "";
	size_t mib = 64, blocks, len;
	double peer[MAX_RUNS];
	bool no_peer = false;
	int runs = 5, opt, status = 1, fd = -1;
	uint8_t *data;

	while ((opt = getopt(argc, argv, "r:p")) != -1) {
		if (opt == 'r')
			runs = atoi(optarg);
		else if (opt == 'p')
			no_peer = true;
		else
			return usage();
	}
	if (optind < argc)
		mib = strtoul(argv[optind], NULL, 10);
	if (runs < 1 || runs > MAX_RUNS)
		return usage();
	blocks = mib * 1024 * 1024 / MONITOR_BLOCK_BYTES;
	/* rngtest takes its first 4 bytes to seed the continuous test. */
	len = 4 + blocks * MONITOR_BLOCK_BYTES;
	if (!blocks)
		return usage();
	data = malloc(len);
	if (!data || fill_random(data, len) < 0) {
		fprintf(stderr, "bench_monitor: cannot prepare %zu bytes\n", len);
		return 1;
	}
	for (int i = 0; i < 3; i++) {
		struct monitor_params p;

		monitor_params_default(&p);
		p.sample_bits = cfg[i].sample_bits;
		p.min_entropy = cfg[i].sample_bits;
		p.portable = cfg[i].portable;
		if (monitor_new(&p, &cfg[i].m) < 0) {
			fprintf(stderr, "bench_monitor: monitor_new failed\n");
			goto out;
		}
	}
	/* One untimed pass each first: page faults, caches, branch history. */
	for (int i = 0; i < 3; i++)
		pass(&cfg[i], data + 4, blocks);
	/* Round-robin, so a burst of load from elsewhere on the machine hits
	 * every configuration alike rather than one. */
	for (int r = 0; r < runs; r++)
		for (int i = 0; i < 3; i++)
			cfg[i].bps[r] = pass(&cfg[i], data + 4, blocks);
	for (int i = 0; i < 3; i++)
		printf("monitor dispatch=%s simd=%s samples=%u bytes_per_s=%.0f blocks=%zu "
		       "failed=%lu\n",
		       cfg[i].portable ? "portable" : "default",
		       cfg[i].portable ? "none" : simd, cfg[i].sample_bits,
		       bench_median(cfg[i].bps, runs), blocks, cfg[i].failures);
	if (estimate_cost(data + 4, blocks < ESTIMATE_FREE_BLOCKS ? blocks : ESTIMATE_FREE_BLOCKS,
			  0) < 0 ||
	    estimate_cost(data + 4, blocks, ONLINE_BUDGET) < 0) {
		fprintf(stderr, "bench_monitor: the on-line estimate failed\n");
		goto out;
	}
	fflush(stdout);

	if (no_peer) {
		printf("rngtest unavailable reason=not run (-p)\n");
	} else if (system("command -v rngtest >/dev/null 2>&1") != 0) {
		printf("rngtest unavailable reason=rngtest not installed\n");
	} else {
		fd = mkstemp(path);
		if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
			fprintf(stderr, "bench_monitor: cannot write %s\n", path);
			goto out;
		}
		for (int r = 0; r < runs; r++) {
			peer[r] = rngtest_once(path, len, why, sizeof(why));
			if (peer[r] == 0)
				break;
		}
		if (why[0])
			printf("rngtest unavailable reason=%s\n", why);
		else
			printf("rngtest bytes_per_s=%.0f bytes=%zu\n", bench_median(peer, runs), len);
	}
	status = 0;
out:
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	for (int i = 0; i < 3; i++)
		monitor_free(cfg[i].m);
	free(data);
	return status;
}
