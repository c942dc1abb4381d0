/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SP 800-90B §6.3 non-IID min-entropy estimators.
 *
 * Pure code: no I/O, no logging, no globals.  Every estimator reads a sample
 * buffer and fills a struct est_result; it returns 0, or -EINVAL for
 * arguments it cannot use, -ENODATA when there are too few samples for that
 * estimator (the caller skips it, as NIST's ea_non_iid does), -ENOMEM.
 *
 * Two kinds of input:
 *  - "literal" estimators (MCV, t-tuple, LRS, and the four predictors) take
 *    symbols and the alphabet size k: every sample must be < k (2 <= k <=
 *    256).  For raw samples of b bits pass k = 1 << b; to get exactly the
 *    numbers NIST's tool prints, first map the symbols to ranks with
 *    est_translate() (ea_non_iid does: the alphabet size k is then the
 *    number of distinct symbols, which moves the predictors' 1/k floor and
 *    picks their binary form when k == 2).
 *  - "bitstring" estimators (collision, Markov, compression: SP 800-90B
 *    defines them on bits only) take samples and bits_per_sample b (1..8):
 *    they read the bitstring formed by the low b bits of each sample, most
 *    significant first, without expanding it (b = 1: one bit per sample).
 *    est_bitstring() expands the same bitstring one bit per byte for the
 *    literal estimators run with k = 2.
 *
 * Cost and memory, n samples (work memory is allocated and freed inside the
 * call; nothing is kept between calls; tables of 1 MiB and more are
 * mappings advised to use huge pages):
 *   est_mcv, est_markov, est_collision     O(n), no allocation
 *   est_lag                                O(n): 64 samples at a time, 128
 *                                          popcounts a block and a step
 *                                          only for the lags that can
 *                                          reach the top score; n / 8
 *                                          bytes (k = 2: the bits packed),
 *                                          else n + 256 (the samples
 *                                          reversed, 128 64-byte compares
 *                                          a block)
 *   est_multi_mcw                          O(n * 4), 32 KiB on the stack
 *                                          (k = 2: its scoreboard 64 steps
 *                                          at a time, as est_lag's)
 *   est_compression                        O(n) + a bisection
 *   est_multi_mmc, est_lz78y               O(n * 16), each computing both
 *                                          in one pass; k = 2: 1 MiB of
 *                                          counters; k > 2: hash tables,
 *                                          up to 60 MiB (a table per
 *                                          string length holds the pairs
 *                                          of one length and the contexts
 *                                          of the next for both, sized by
 *                                          the different 3-sample strings
 *                                          up to 90B's cap of 100,000
 *                                          MultiMMC entries per length,
 *                                          4 MiB; it grows where there are
 *                                          more), k^3 bits while sizing
 *   est_tuple_lrs                          k = 2: O(n) bucket sort of 64-bit
 *                                          windows, 8n bytes heap plus the
 *                                          largest bucket's; else (or
 *                                          when 64 bits repeat) O(n log n)
 *                                          suffix array (libdivsufsort), 8n
 *                                          bytes, plus 12 bytes per length
 *                                          up to the longest repeat
 *   est_compression                        8 bytes per 6-bit block, at most
 *                                          8 MiB (a log2 table)
 *   est_assess                             all of them; n + n*b bytes plus
 *                                          the largest estimator's (_mt: the
 *                                          ones running at once)
 */
#ifndef RNGFEED_ESTIMATE_H
#define RNGFEED_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

/* What one estimator found.  h is the min-entropy per sample in bits (per
 * bit for the bitstring estimators).  The other fields are the intermediate
 * values ea_non_iid prints with -v; an estimator fills those it has and
 * leaves the rest 0. */
struct est_result {
	double h;		/* min-entropy per sample (or per bit) */
	double p_hat;		/* MCV p-hat, Markov p-hat_max, t-tuple/LRS p-hat,
				   predictors P_global */
	double p_u;		/* the bound h comes from: MCV/t-tuple/LRS p_u,
				   collision/compression p, predictors
				   max(P_global', P_local, 1/k) */
	double x_bar, sigma;	/* collision, compression: mean and std dev */
	double p_global_prime;	/* predictors */
	double p_local;		/* predictors; -1 when it cannot change h */
	uint64_t count;		/* MCV mode count; predictors C (correct) */
	uint64_t n;		/* predictors: N predictions */
	uint64_t run;		/* predictors: r = longest run of corrects + 1 */
	uint64_t t, u, v;	/* t-tuple t; LRS u and v */
	double p_mk[6];		/* Markov: P_0, P_1, P_00, P_01, P_10, P_11 */
};

/* Upper confidence bound on a proportion, 99 % (SP 800-90B's Z = 2.576). */
#define EST_ZALPHA 2.5758293035489008

/* ---- literal estimators (symbols < k) ---- */
/* §6.3.1 most common value: p_u = min(1, p + Z sqrt(p(1-p)/(n-1))). */
int est_mcv(const uint8_t *s, size_t n, unsigned k, struct est_result *r);
/* §6.3.5 t-tuple and §6.3.6 LRS, from one suffix array.  Either result may
 * be skipped: t-tuple when no symbol occurs 35 times (tuple->h = -1), LRS
 * when v < u (lrs->h = -1); the call still returns 0. */
int est_tuple_lrs(const uint8_t *s, size_t n, unsigned k,
		  struct est_result *tuple, struct est_result *lrs);
/* t-tuple and LRS of n 8-bit samples s (alphabet k: est_tuple_lrs())
 * and of their bitstring bits (8n bits, one a byte), the samples' from the
 * suffix array the bits' are merged from where they are (their ranks or
 * themselves: the same tuples, the same estimates).  Returns the samples'
 * result (est_tuple_lrs()'s), *brc the bits'. */
int est_tuple_lrs_with_bits(const uint8_t *s, size_t n, unsigned k, const uint8_t *bits,
			    struct est_result *tuple, struct est_result *lrs,
			    struct est_result *btuple, struct est_result *blrs, int *brc);
/* §6.3.7 MultiMCW, windows 63, 255, 1023, 4095 (n > 4095). */
int est_multi_mcw(const uint8_t *s, size_t n, unsigned k, struct est_result *r);
/* §6.3.8 lag predictor, lags 1..128 (n > 2). */
int est_lag(const uint8_t *s, size_t n, unsigned k, struct est_result *r);
/* §6.3.9 MultiMMC, contexts 1..16, 100,000 entries per length (n > 2). */
int est_multi_mmc(const uint8_t *s, size_t n, unsigned k, struct est_result *r);
/* §6.3.10 LZ78Y, contexts 1..16, 65,536 dictionary entries (n > 17). */
int est_lz78y(const uint8_t *s, size_t n, unsigned k, struct est_result *r);

/* ---- bitstring estimators (low `bits` bits of each sample, MSB first) ---- */
/* §6.3.1 over the bits (the H_bitstring MCV): k = 2 on the bitstring. */
int est_mcv_bits(const uint8_t *s, size_t n, unsigned bits, struct est_result *r);
/* §6.3.2 collision. */
int est_collision(const uint8_t *s, size_t n, unsigned bits, struct est_result *r);
/* §6.3.3 Markov (first-order, over 128-bit sequences). */
int est_markov(const uint8_t *s, size_t n, unsigned bits, struct est_result *r);
/* §6.3.4 compression (6-bit blocks, 1,000-block dictionary). */
int est_compression(const uint8_t *s, size_t n, unsigned bits, struct est_result *r);

/* ---- helpers ---- */
/* §6.3's prediction bound from a predictor's counts: C correct out of N,
 * longest run of corrects `longest`, alphabet k.  Fills h, p_hat, p_u,
 * p_global_prime, p_local, count, n, run.  Pure arithmetic. */
void est_prediction_bound(uint64_t correct, uint64_t n, uint64_t longest,
			  unsigned k, struct est_result *r);
/* Every sample's bits or-ed together (0..255): what --bits they need. */
unsigned est_or_samples(const uint8_t *s, size_t n);
/* How many distinct values the low `bits` bits of the samples take.  When
 * it is 1 << bits, est_translate() changes nothing in samples below
 * 1 << bits. */
unsigned est_alphabet(const uint8_t *s, size_t n, unsigned bits);
/* Maps the low `bits` bits of each sample to its rank among the distinct
 * values present (out may be s).  Returns the alphabet size (>= 1). */
unsigned est_translate(const uint8_t *s, size_t n, unsigned bits, uint8_t *out);
/* The bitstring, one bit per byte: out holds n * bits bytes. */
void est_bitstring(const uint8_t *s, size_t n, unsigned bits, uint8_t *out);

/* ---- the whole §6.3 assessment, as ea_non_iid -i -a computes it ---- */
enum est_id {
	EST_MCV, EST_COLLISION, EST_MARKOV, EST_COMPRESSION, EST_TTUPLE,
	EST_LRS, EST_MULTI_MCW, EST_LAG, EST_MULTI_MMC, EST_LZ78Y, EST_COUNT
};
/* Names as ea_non_iid prints them ("Most Common Value", ...). */
const char *est_name(enum est_id id);

struct est_report {
	unsigned bits;		/* bits per sample */
	unsigned k;		/* distinct symbols (alphabet after translation) */
	size_t n;		/* samples */
	int binary;		/* k == 2: no bitstring pass, as in ea_non_iid */
	/* For each estimator: did it run on the literal symbols / on the
	 * bitstring, and what it found.  The collision, Markov and compression
	 * estimators run on the literal symbols only when binary. */
	int have_lit[EST_COUNT], have_bit[EST_COUNT];
	struct est_result lit[EST_COUNT], bit[EST_COUNT];
	double h_original;	/* min over literal estimates, capped at bits */
	double h_bitstring;	/* min over bitstring estimates, capped at 1 */
	double h_assessed;	/* min(bits, H_original, bits x H_bitstring) */
};
/* Runs every estimator.  bits 1..8; samples wider than bits are -EINVAL;
 * fewer than 2 distinct symbols is -EDOM (no entropy to assess). */
int est_assess(const uint8_t *s, size_t n, unsigned bits, struct est_report *rep);
/* The same, the estimators shared among `threads` threads (the caller's
 * and up to 7 it starts and joins before returning; 1: none started).
 * Peak memory grows with the estimators that run at once. */
int est_assess_mt(const uint8_t *s, size_t n, unsigned bits, unsigned threads,
		  struct est_report *rep);

/* ---- §3.1.4 restart tests: the sanity check on a 1000 x 1000 matrix ---- */
struct est_restart {
	unsigned rows, cols;
	double h_i;		/* the entropy estimate being checked */
	uint64_t max_row, max_col;	/* highest MCV count in a row / column */
	uint64_t cutoff;	/* binomial cutoff at alpha = 0.01/2000 */
	int pass;		/* both maxima <= cutoff */
};
/* matrix: rows x cols samples, row-major, of `bits` bits each; h_i the
 * initial entropy estimate per sample.  Fills r; 0 or -EINVAL. */
int est_restart_sanity(const uint8_t *matrix, unsigned rows, unsigned cols,
		       unsigned bits, double h_i, struct est_restart *r);

#endif
