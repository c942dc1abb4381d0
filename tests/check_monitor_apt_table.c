// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * monitor_apt_cutoff() answers the drivers' default min-entropies at the
 * default α's from a table (issue 20: the lgammal sums cost 0.1-0.2 ms
 * each at every start).  Each entry must be what the computation gives:
 * it is compared with the cutoff for a min-entropy one ulp lower, which
 * misses the table and is computed (a cutoff is a step function of H, and
 * none of these sits on a step).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "rngfeed/monitor.h"
#include "test_doubles.h"

static const struct {
	double h, alpha;
	unsigned cutoff;
} known[] = {
	{ 8.0, -30.0, 16 }, { 8.0, -60.0, 25 },
	{ 6.0, -30.0, 31 }, { 6.0, -60.0, 44 },
};

START_TEST(test_table_matches_computation)
{
	double h = known[_i].h, a = known[_i].alpha;
	unsigned table = monitor_apt_cutoff(h, MONITOR_APT_WINDOW, a);
	unsigned computed = monitor_apt_cutoff(nextafter(h, 0.0),
					       MONITOR_APT_WINDOW, a);

	ck_assert_uint_eq(table, known[_i].cutoff);
	ck_assert_uint_eq(computed, known[_i].cutoff);
}
END_TEST

/* The defaults the table is for: a driver at H 8 or 6 with the default
 * α's hits it. */
START_TEST(test_defaults_in_table)
{
	struct monitor_params p;

	monitor_params_default(&p);
	ck_assert(p.alpha_log2 == -30.0);
	ck_assert(p.permanent_alpha_log2 == -60.0);
	ck_assert(p.min_entropy == 8.0);
	/* Out of range is still refused before any lookup. */
	ck_assert_uint_eq(monitor_apt_cutoff(8.0, 1, -30.0), 0);
	ck_assert_uint_eq(monitor_apt_cutoff(8.5, MONITOR_APT_WINDOW, -30.0), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("monitor_apt_table");
	TCase *tc = tcase_create("apt");

	tcase_add_loop_test(tc, test_table_matches_computation, 0,
			    (int)(sizeof(known) / sizeof(known[0])));
	tcase_add_test(tc, test_defaults_in_table);
	suite_add_tcase(s, tc);
	return td_run(s);
}
