/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reader for NIST CAVP DRBG response files (.rsp, CTR_DRBG layout): section
 * headers "[AES-256 use df]", "[Name = value]", then cases of "Name = hex"
 * lines starting at "COUNT = n".  It checks syntax only and hands out one
 * case at a time; running the case is the caller's business.  Bounded:
 * lines up to CAVP_MAX_LINE bytes, CAVP_MAX_CALLS repeated fields per case.
 */
#ifndef RNGFEED_TESTS_CAVP_H
#define RNGFEED_TESTS_CAVP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CAVP_MAX_LINE (1u << 20)
#define CAVP_MAX_CALLS 16u
#define CAVP_MAX_MECH 63u
#define CAVP_MAX_BITS (UINT64_C(1) << 35) /* SP 800-90A's largest length */

struct cavp_buf {
	uint8_t *p; /* NULL when empty */
	size_t len;
	bool present;
};

struct cavp_case {
	char mechanism[CAVP_MAX_MECH + 1]; /* e.g. "AES-256 use df" */
	int pred_resist;                   /* header: -1 absent, 0, 1 */
	/* Header lengths in bits, -1 when absent. */
	int64_t entropy_bits, nonce_bits, pers_bits, add_bits, returned_bits_hdr;
	unsigned long count;   /* COUNT = n */
	unsigned long line;    /* line of COUNT */
	struct cavp_buf entropy, nonce, pers, entropy_reseed, add_reseed;
	struct cavp_buf add[CAVP_MAX_CALLS];
	size_t n_add;
	struct cavp_buf entropy_pr[CAVP_MAX_CALLS];
	size_t n_entropy_pr;
	struct cavp_buf returned;
	uint64_t returned_bits; /* bits to generate and compare */
};

struct cavp_reader;

/* Read from f (not closed by the reader).  NULL on out of memory. */
struct cavp_reader *cavp_reader_new(FILE *f);
void cavp_reader_free(struct cavp_reader *r);

/* Next case: 1 and *c filled, 0 at end of file, -1 on a parse error (see
 * cavp_error / cavp_error_line).  *c is cleared first; cavp_case_clear
 * releases it.  Initialise *c with {0} before the first call. */
int cavp_next(struct cavp_reader *r, struct cavp_case *c);
void cavp_case_clear(struct cavp_case *c);

const char *cavp_error(const struct cavp_reader *r);
unsigned long cavp_error_line(const struct cavp_reader *r);
/* Lines read so far. */
unsigned long cavp_lines(const struct cavp_reader *r);

/* Decode hex (either case) of length n into out (n / 2 bytes).  0, or -1
 * on an odd length or a non-hex character. */
int cavp_hex_decode(uint8_t *out, const char *hex, size_t n);

#endif
