/* Shared between the estimate*.c files only: not part of the API. */
#ifndef RNGFEED_ESTIMATE_INTERNAL_H
#define RNGFEED_ESTIMATE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* 0, -EINVAL (bad pointer or bits), -ENODATA (fewer than 2 bits). */
int est_check_bits(const uint8_t *s, size_t n, unsigned bits);
/* min(1, p + Z sqrt(p (1 - p) / (n - 1))). */
double est_upper_bound(double p, double n);
/* Bisection for f(p) = target on [lo, hi], f decreasing. */
double est_bisect(double (*f)(double, const void *), const void *arg,
		  double lo, double hi, double target);

/* Zeroed work memory for the big tables (megabytes, looked up at random):
 * an anonymous mapping the kernel may back with 2-MiB pages (madvise), so
 * the tables cost a few page faults and TLB entries instead of one per
 * 4 KiB.  NULL when out of memory; est_zfree(NULL, ...) does nothing. */
void *est_zalloc(size_t bytes);
void est_zfree(void *p, size_t bytes);

/* The low bit of each of the n samples, packed most significant first:
 * w[k] holds samples 64k..64k+63; the bits after the last are 0 (w holds
 * at least (n + 63) / 64 words). */
void est_pack_bits(const uint8_t *s, size_t n, uint64_t *w);

/* t-tuple and LRS over libdivsufsort's suffix array, whatever the
 * alphabet (est_tuple_lrs() sorts binary input its own way first). */
struct est_result;
int est_tuple_lrs_sa(const uint8_t *s, size_t n,
		     struct est_result *tuple, struct est_result *lrs);

/* MultiMMC (into mmc) and LZ78Y (into lz, when n >= 18) over binary
 * samples (k = 2, n >= 3, checked by the caller), in one pass: the two
 * count the same pairs.  1 (both), 0 (MultiMMC only: n < 18), -ENOMEM. */
int est_mmc_lz78y_binary(const uint8_t *s, size_t n, struct est_result *mmc,
			 struct est_result *lz);

#endif
