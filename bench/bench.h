/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the bench_*.c programs share: a clock and a median. */
#ifndef RNGFEED_BENCH_H
#define RNGFEED_BENCH_H

#include <stdlib.h>
#include <time.h>

/* Seconds on CLOCK_MONOTONIC. */
static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of @v[0..n-1] (sorts @v). */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
