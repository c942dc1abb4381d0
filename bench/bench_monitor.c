/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Throughput of monitor_test_block() (FIPS 140-2 + SP 800-90B, the
 * developer-defined difference RCT included) on random
 * data, and of the peer, rngtest, over the same bytes in the same run.
 * Usage: bench_monitor [MiB]   (default 64)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/monitor.h"

#define RUNS 5

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

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

/* Median MB/s of monitor_test_block() over all blocks, and the failures seen. */
static double bench_monitor(const uint8_t *data, size_t blocks, unsigned sample_bits,
			    bool portable, unsigned long *failures)
{
	struct monitor_params p;
	struct monitor *m;
	double mbs[RUNS];

	monitor_params_default(&p);
	p.sample_bits = sample_bits;
	p.min_entropy = sample_bits;
	p.portable = portable;
	if (monitor_new(&p, &m) < 0)
		return 0;
	for (int r = 0; r < RUNS; r++) {
		double t0 = now_s();

		*failures = 0;
		monitor_reset(m);
		for (size_t i = 0; i < blocks; i++) {
			struct monitor_verdict v;

			monitor_test_block(m, data + i * MONITOR_BLOCK_BYTES, &v);
			*failures += v.failed != 0;
		}
		mbs[r] = (double)blocks * MONITOR_BLOCK_BYTES / (now_s() - t0) / 1e6;
	}
	monitor_free(m);
	qsort(mbs, RUNS, sizeof(mbs[0]), cmp_double);
	return mbs[RUNS / 2];
}

/* Median MB/s of "rngtest < file"; 0 when rngtest is missing or fails oddly. */
static double bench_rngtest(const uint8_t *data, size_t len)
{
	char path[] = "/tmp/bench_monitor.XXXXXX", cmd[256];
	double mbs[3];
	int fd;

	if (system("command -v rngtest >/dev/null 2>&1") != 0)
		return 0;
	fd = mkstemp(path);
	if (fd < 0)
		return 0;
	if (write(fd, data, len) != (ssize_t)len) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "rngtest < %s 2>/dev/null", path);
	for (int r = 0; r < 3; r++) {
		double t0 = now_s();
		FILE *f = popen(cmd, "r");
		int st;

		if (!f)
			break;
		st = pclose(f);
		mbs[r] = st == -1 ? 0 : (double)len / (now_s() - t0) / 1e6;
	}
	unlink(path);
	qsort(mbs, 3, sizeof(mbs[0]), cmp_double);
	return mbs[1];
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	size_t blocks = mib * 1024 * 1024 / MONITOR_BLOCK_BYTES;
	size_t len = 4 + blocks * MONITOR_BLOCK_BYTES;
	unsigned long fails8, fails1, failsp;
	double ours, ours_port, ours_bin, peer;
	uint8_t *data;

	if (!blocks)
		return 2;
	data = malloc(len);
	if (!data || fill_random(data, len) < 0) {
		fprintf(stderr, "bench_monitor: cannot prepare %zu bytes\n", len);
		return 1;
	}
	ours = bench_monitor(data + 4, blocks, 8, false, &fails8);
	ours_port = bench_monitor(data + 4, blocks, 8, true, &failsp);
	ours_bin = bench_monitor(data + 4, blocks, 1, false, &fails1);
	printf("monitor FIPS+90B, byte samples:   %8.1f MB/s (%zu blocks, %lu failed)\n",
	       ours, blocks, fails8);
	printf("  same, portable code (no AVX-512): %8.1f MB/s (%lu failed)\n", ours_port, failsp);
	printf("monitor FIPS+90B, binary samples: %8.1f MB/s (%lu failed)\n", ours_bin, fails1);
	peer = bench_rngtest(data, len);
	if (peer > 0)
		printf("rngtest (peer, FIPS only):        %8.1f MB/s, ours/peer = %.1fx\n", peer,
		       ours / peer);
	else
		printf("rngtest (peer): skipped, rngtest not found or failed\n");
	free(data);
	return 0;
}
