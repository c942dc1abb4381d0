// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_drbg: libgcrypt's raw AES-256-CTR rate against drbg_generate(), so
 * the DRBG's overhead shows as one ratio.
 *   aes_ctr buffer=1048576      raw AES-256-CTR, 1 MiB buffers: the ceiling
 *   aes_ctr buffer=65536        the same at the DRBG's request size
 *   drbg request=65536 add=0    drbg_generate, bulk (--stdout)
 *   drbg request=64 add=64      what the feeder does per write
 * Usage: bench_drbg [-r RUNS] [-t SECONDS]   (default 5 runs of 0.3 s each)
 * Prints one line per figure, the median of RUNS, for bench/stages.sh:
 *   NAME key=value ... bytes_per_s=N calls_per_s=N
 */
#include "bench.h"
#include "rngfeed/drbg.h"

#include <errno.h>
#include <gcrypt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNS 99

static double run_seconds = 0.3;

/* Calls step(ctx, buf, len) in batches until run_seconds have passed;
 * returns bytes per second, or -1 if step failed. */
typedef int (*step_fn)(void *ctx, uint8_t *buf, size_t len);

static double measure(step_fn step, void *ctx, uint8_t *buf, size_t len)
{
	unsigned long long bytes = 0;
	double start, t;

	/* Warm up (key schedules, page faults on buf). */
	if (step(ctx, buf, len))
		return -1;
	start = bench_now();
	do {
		for (int i = 0; i < 64; i++) {
			if (step(ctx, buf, len))
				return -1;
			bytes += len;
		}
		t = bench_now() - start;
	} while (t < run_seconds);
	return (double)bytes / t;
}

static int raw_ctr(void *ctx, uint8_t *buf, size_t len)
{
	return gcry_cipher_encrypt(ctx, buf, len, NULL, 0) ? -EIO : 0;
}

struct gen_ctx {
	struct drbg *d;
	const uint8_t *add;
	size_t add_len;
	const uint8_t *seed;
};

static int gen(void *ctx, uint8_t *buf, size_t len)
{
	struct gen_ctx *g = ctx;
	int r = drbg_generate(g->d, buf, len, g->add, g->add_len);

	/* Reseed when due, as the daemon would (counted in the time). */
	if (r == -ESTALE) {
		r = drbg_reseed(g->d, g->seed, 32, NULL, 0);
		if (!r)
			r = drbg_generate(g->d, buf, len, g->add, g->add_len);
	}
	return r;
}

static void report(const char *what, double *bps, int runs, size_t len)
{
	double m = bench_median(bps, runs);

	printf("%s bytes_per_s=%.0f calls_per_s=%.0f\n", what, m, m / (double)len);
}

int main(int argc, char **argv)
{
	static uint8_t key[32], seed[48], add[64];
	const size_t big = 1u << 20;
	struct gen_ctx g = { .seed = seed };
	gcry_cipher_hd_t hd = NULL;
	uint8_t *buf = NULL;
	double raw[MAX_RUNS], raw64[MAX_RUNS], bulk[MAX_RUNS], small[MAX_RUNS];
	int r, status = 1, runs = 5, opt;

	while ((opt = getopt(argc, argv, "r:t:")) != -1) {
		if (opt == 'r')
			runs = atoi(optarg);
		else if (opt == 't')
			run_seconds = atof(optarg);
		else
			runs = 0;
	}
	if (runs < 1 || runs > MAX_RUNS || !(run_seconds > 0) || optind != argc) {
		fprintf(stderr, "usage: bench_drbg [-r RUNS] [-t SECONDS]\n");
		return 2;
	}
	r = drbg_library_init();
	if (r) {
		fprintf(stderr, "bench_drbg: libgcrypt: %s\n", strerror(-r));
		return 1;
	}
	buf = malloc(big);
	if (!buf)
		goto out;
	memset(buf, 0, big);
	for (size_t i = 0; i < sizeof(seed); i++)
		seed[i] = (uint8_t)(i * 13 + 1);
	for (size_t i = 0; i < sizeof(add); i++)
		add[i] = (uint8_t)(i * 5 + 7);

	if (gcry_cipher_open(&hd, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_CTR, 0) ||
	    gcry_cipher_setkey(hd, key, sizeof(key)) ||
	    gcry_cipher_setctr(hd, NULL, 0))
		goto out;
	r = drbg_new(&g.d, NULL);
	if (!r)
		r = drbg_instantiate(g.d, seed, 32, seed + 32, 16, NULL, 0);
	if (r) {
		fprintf(stderr, "bench_drbg: drbg: %s\n", strerror(-r));
		goto out;
	}
	/* Interleaved, so noise from elsewhere on the machine falls on the
	 * ceiling and the DRBG alike and their ratio stays meaningful. */
	for (int i = 0; i < runs; i++) {
		raw[i] = measure(raw_ctr, hd, buf, big);
		raw64[i] = measure(raw_ctr, hd, buf, DRBG_MAX_REQUEST_LEN);
		g.add = NULL;
		g.add_len = 0;
		bulk[i] = measure(gen, &g, buf, DRBG_MAX_REQUEST_LEN);
		g.add = add;
		g.add_len = sizeof(add);
		small[i] = measure(gen, &g, buf, 64);
		if (raw[i] < 0 || raw64[i] < 0 || bulk[i] < 0 || small[i] < 0) {
			fprintf(stderr, "bench_drbg: an operation failed\n");
			goto out;
		}
	}
	report("aes_ctr buffer=1048576", raw, runs, big);
	report("aes_ctr buffer=65536", raw64, runs, DRBG_MAX_REQUEST_LEN);
	report("drbg request=65536 add=0", bulk, runs, DRBG_MAX_REQUEST_LEN);
	report("drbg request=64 add=64", small, runs, 64);
	status = 0;
out:
	drbg_free(g.d);
	if (hd)
		gcry_cipher_close(hd);
	free(buf);
	return status;
}
