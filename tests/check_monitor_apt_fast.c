// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * monitor_apt_cutoff() sums the binomial tail by a term-to-term recurrence
 * (issue 20: the lgammal sum it replaced cost 0.1-0.2 ms per cutoff at
 * every start).  Here the cutoff is compared, over a grid of min-entropies,
 * both α's, both windows, and a few odd windows, with a direct reference
 * written from SP 800-90B §4.4.2: each term from lgammal, summed in log
 * space.  And it must be cheap: 64 cutoffs in well under a millisecond.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rngfeed/monitor.h"
#include "test_doubles.h"

static long double log_add(long double a, long double b)
{
	long double hi = a > b ? a : b, lo = a > b ? b : a;

	if (isinf(lo))
		return hi;
	return hi + log1pl(expl(lo - hi));
}

/* The smallest C with P(B >= C) <= α, B ~ Binomial(W, 2^-H). */
static unsigned reference(double h, unsigned w, double alpha_log2)
{
	long double lp = -(long double)h * logl(2.0L), lq = logl(-expm1l(lp));
	long double la = (long double)alpha_log2 * logl(2.0L), tail = -INFINITY;
	int sign;

	for (unsigned i = w + 1; i-- > 0;) {
		long double term = lgammal_r(w + 1.0L, &sign) - lgammal_r(i + 1.0L, &sign) -
				   lgammal_r(w - i + 1.0L, &sign) + i * lp + (w - i) * lq;

		tail = log_add(tail, term);
		if (tail > la)
			return i + 1;
	}
	return 0;
}

START_TEST(test_grid_matches_reference)
{
	static const double alphas[] = { -30.0, -60.0, -8.0, -100.0 };
	unsigned checked = 0;

	for (unsigned a = 0; a < sizeof(alphas) / sizeof(alphas[0]); a++)
		for (double h = 0.05; h <= 8.0; h += 0.05) {
			unsigned w = h <= 1.0 ? MONITOR_APT_WINDOW_BINARY : MONITOR_APT_WINDOW;
			unsigned got = monitor_apt_cutoff(h, w, alphas[a]);
			unsigned want = reference(h, w, alphas[a]);

			ck_assert_msg(got == want, "H %.2f W %u alpha 2^%g: %u, reference %u", h,
				      w, alphas[a], got, want);
			checked++;
		}
	/* Odd windows, large and small. */
	ck_assert_uint_eq(monitor_apt_cutoff(8.0, 4096, -30.0), reference(8.0, 4096, -30.0));
	ck_assert_uint_eq(monitor_apt_cutoff(8.0, 65536, -60.0), reference(8.0, 65536, -60.0));
	ck_assert_uint_eq(monitor_apt_cutoff(0.5, 2, -8.0), reference(0.5, 2, -8.0));
	ck_assert_uint_ge(checked, 600);
}
END_TEST

/* The values the manual and check_monitor pin, through the new sum. */
START_TEST(test_known_values)
{
	ck_assert_uint_eq(monitor_apt_cutoff(8.0, MONITOR_APT_WINDOW, -30.0), 16);
	ck_assert_uint_eq(monitor_apt_cutoff(8.0, MONITOR_APT_WINDOW, -60.0), 25);
	ck_assert_uint_eq(monitor_apt_cutoff(6.0, MONITOR_APT_WINDOW, -30.0), 31);
	ck_assert_uint_eq(monitor_apt_cutoff(6.0, MONITOR_APT_WINDOW, -60.0), 44);
	/* Cannot fire: a cutoff above the window. */
	ck_assert_uint_eq(monitor_apt_cutoff(0.01, MONITOR_APT_WINDOW_BINARY, -30.0),
			  MONITOR_APT_WINDOW_BINARY + 1);
}
END_TEST

/* A start computes four cutoffs per source: they must cost next to
 * nothing (the bound is loose for a loaded 2-core machine). */
START_TEST(test_cheap)
{
	struct timespec t0, t1;
	unsigned sink = 0;
	double ms;

	/* Under qemu-user (make cross-check) a time says nothing about the
	 * target: ppc64el's long double alone is software there.  Nor under
	 * valgrind (make valgrind: 20-50x; 20.0 ms measured here). */
	if (getenv("RNGFEED_EMULATED") || getenv("RNGFEED_VALGRIND")) {
		printf("SKIP: test_cheap: a timing, and this runs under %s\n",
		       getenv("RNGFEED_EMULATED") ? "emulation" : "valgrind");
		fflush(stdout);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < 64; i++)
		sink += monitor_apt_cutoff(7.0 + i / 64.0, MONITOR_APT_WINDOW, -30.0 - i);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	ck_assert_uint_gt(sink, 0);
	ck_assert_msg(ms < 20.0, "64 cutoffs took %.3f ms", ms);
}
END_TEST

int main(void)
{
	return td_run(td_suite("monitor_apt_fast", "apt", NULL, NULL, 120,
			       TD_TESTS(test_grid_matches_reference,
					test_known_values, test_cheap)));
}
