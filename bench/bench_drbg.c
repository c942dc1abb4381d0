// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_drbg: libgcrypt's raw AES-256-CTR rate against drbg_generate(), so
 * the DRBG's overhead shows as one ratio.  Each figure runs about a second.
 *   raw AES-256-CTR, 1 MiB buffers        the ceiling
 *   raw AES-256-CTR, 64 KiB buffers       the same at the DRBG's request size
 *   drbg_generate, 64 KiB requests         bulk (--stdout)
 *   drbg_generate, 64 B + 64 B additional  what the feeder does per write
 */
#include "rngfeed/drbg.h"

#include <errno.h>
#include <gcrypt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUN_SECONDS 1.0

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Calls step(ctx, buf, len) in batches until RUN_SECONDS have passed;
 * returns bytes per second, or -1 if step failed. */
typedef int (*step_fn)(void *ctx, uint8_t *buf, size_t len);

static double measure(step_fn step, void *ctx, uint8_t *buf, size_t len)
{
	unsigned long long bytes = 0;
	double start, t;

	/* Warm up (key schedules, page faults on buf). */
	if (step(ctx, buf, len))
		return -1;
	start = now();
	do {
		for (int i = 0; i < 64; i++) {
			if (step(ctx, buf, len))
				return -1;
			bytes += len;
		}
		t = now() - start;
	} while (t < RUN_SECONDS);
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

static void report(const char *what, double bps, double raw)
{
	printf("%-42s %9.1f MB/s", what, bps / 1e6);
	if (raw > 0)
		printf("   %.3f x raw (1 MiB)", bps / raw);
	printf("\n");
}

int main(void)
{
	static uint8_t key[32], seed[48], add[64];
	const size_t big = 1u << 20;
	struct gen_ctx g = { .seed = seed };
	gcry_cipher_hd_t hd = NULL;
	uint8_t *buf = NULL;
	double raw, raw64, bulk, small;
	int r, status = 1;

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
	raw = measure(raw_ctr, hd, buf, big);
	raw64 = measure(raw_ctr, hd, buf, DRBG_MAX_REQUEST_LEN);

	r = drbg_new(&g.d, NULL);
	if (!r)
		r = drbg_instantiate(g.d, seed, 32, seed + 32, 16, NULL, 0);
	if (r) {
		fprintf(stderr, "bench_drbg: drbg: %s\n", strerror(-r));
		goto out;
	}
	bulk = measure(gen, &g, buf, DRBG_MAX_REQUEST_LEN);
	g.add = add;
	g.add_len = sizeof(add);
	small = measure(gen, &g, buf, 64);
	if (raw < 0 || raw64 < 0 || bulk < 0 || small < 0) {
		fprintf(stderr, "bench_drbg: an operation failed\n");
		goto out;
	}

	report("libgcrypt AES-256-CTR, 1 MiB buffers", raw, 0);
	report("libgcrypt AES-256-CTR, 64 KiB buffers", raw64, raw);
	report("drbg_generate, 64 KiB requests", bulk, raw);
	report("drbg_generate, 64 B + 64 B additional", small, raw);
	printf("%-42s %9.2f us per request\n", "", 64e6 / small);
	status = 0;
out:
	drbg_free(g.d);
	if (hd)
		gcry_cipher_close(hd);
	free(buf);
	return status;
}
