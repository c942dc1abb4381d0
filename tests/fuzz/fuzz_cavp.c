// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz the CAVP .rsp reader (tests/cavp.c) used by tests/cavp-ctr-drbg:
 * the input is the file.  Every case is read until the end or an error;
 * cavp_hex_decode is also run on the whole input.
 *
 * Invariants: a case has EntropyInput and ReturnedBits; buffers are
 * present with their bytes (NULL only when empty) or absent and empty; at
 * most CAVP_MAX_CALLS repeated fields, consistent with the prediction-
 * resistance header; header lengths are -1 or at most 2^35 bits; the bits
 * to compare fit the ReturnedBits hex; line numbers grow.  An error leaves
 * a message, a line number no further than one past the lines read, and a
 * cleared case.  Hex decoding accepts exactly even-length hex and
 * round-trips.
 */
#include <ctype.h>

#include "fuzz.h"
#include "../cavp.h"

#define MAX_CASES 4096

#ifdef FUZZ_WRAP_MALLOC
/*
 * The fuzz build links with -Wl,--wrap=malloc,--wrap=free: every reader
 * allocates a CAVP_MAX_LINE line buffer, which under ASan is an mmap and
 * munmap per run and held this harness to ~200 runs/s.  Reuse one buffer
 * of exactly that size instead; everything else goes to the real
 * (sanitized) allocator.
 */
void *__real_malloc(size_t size);
void __real_free(void *p);
void *__wrap_malloc(size_t size);
void __wrap_free(void *p);

static void *line_buf;
static bool line_buf_used;

void *__wrap_malloc(size_t size)
{
	if (size != CAVP_MAX_LINE + 1 || line_buf_used)
		return __real_malloc(size);
	if (!line_buf)
		line_buf = __real_malloc(size);
	line_buf_used = line_buf != NULL;
	return line_buf;
}

void __wrap_free(void *p)
{
	if (p && p == line_buf) {
		FUZZ_ASSERT(line_buf_used); /* a double free */
		line_buf_used = false;
		return;
	}
	__real_free(p);
}
#endif

static void touch(const struct cavp_buf *b)
{
	volatile uint8_t sink = 0;

	if (!b->present) {
		FUZZ_ASSERT(b->p == NULL && b->len == 0);
		return;
	}
	FUZZ_ASSERT((b->p == NULL) == (b->len == 0));
	for (size_t i = 0; i < b->len; i++)
		sink ^= b->p[i]; /* ASan: all of it is ours */
	(void)sink;
}

static bool bits_ok(int64_t bits)
{
	return bits == -1 || (bits >= 0 && (uint64_t)bits <= CAVP_MAX_BITS);
}

static void check_case(const struct cavp_case *c, unsigned long lines,
		       unsigned long prev_line)
{
	FUZZ_ASSERT(memchr(c->mechanism, '\0', sizeof(c->mechanism)) != NULL);
	FUZZ_ASSERT(c->pred_resist >= -1 && c->pred_resist <= 1);
	FUZZ_ASSERT(bits_ok(c->entropy_bits) && bits_ok(c->nonce_bits) &&
		    bits_ok(c->pers_bits) && bits_ok(c->add_bits) &&
		    bits_ok(c->returned_bits_hdr));
	FUZZ_ASSERT(c->count <= UINT32_MAX);
	FUZZ_ASSERT(c->line >= 1 && c->line <= lines && c->line > prev_line);
	FUZZ_ASSERT(c->entropy.present && c->returned.present);
	FUZZ_ASSERT(!c->add_reseed.present || c->entropy_reseed.present);
	FUZZ_ASSERT(c->n_add <= CAVP_MAX_CALLS &&
		    c->n_entropy_pr <= CAVP_MAX_CALLS);
	FUZZ_ASSERT(!c->n_add || !c->n_entropy_pr ||
		    c->n_add == c->n_entropy_pr);
	if (c->pred_resist == 1)
		FUZZ_ASSERT(c->n_entropy_pr > 0);
	if (c->pred_resist == 0)
		FUZZ_ASSERT(c->n_entropy_pr == 0);
	FUZZ_ASSERT(c->returned_bits <= (uint64_t)c->returned.len * 8 &&
		    c->returned_bits + 8 > (uint64_t)c->returned.len * 8);
	touch(&c->entropy);
	touch(&c->nonce);
	touch(&c->pers);
	touch(&c->entropy_reseed);
	touch(&c->add_reseed);
	touch(&c->returned);
	for (size_t i = 0; i < CAVP_MAX_CALLS; i++) {
		touch(&c->add[i]);
		touch(&c->entropy_pr[i]);
		FUZZ_ASSERT(i < c->n_add ? c->add[i].present
					 : !c->add[i].present);
		FUZZ_ASSERT(i < c->n_entropy_pr ? c->entropy_pr[i].present
						: !c->entropy_pr[i].present);
	}
}

static bool is_cleared(const struct cavp_case *c)
{
	static const struct cavp_case zero;

	return memcmp(c, &zero, sizeof(zero)) == 0;
}

static void check_hex(const uint8_t *data, size_t size)
{
	uint8_t *out = malloc(size / 2 + 1);
	bool want = size % 2 == 0;
	int r;

	FUZZ_ASSERT(out != NULL);
	for (size_t i = 0; i < size; i++)
		if (!isxdigit(data[i]))
			want = false;
	r = cavp_hex_decode(out, (const char *)data, size);
	FUZZ_ASSERT(r == (want ? 0 : -1));
	if (r == 0)
		for (size_t i = 0; i < size / 2; i++) {
			char hex[3];

			snprintf(hex, sizeof(hex), "%02x", out[i]);
			FUZZ_ASSERT(tolower(data[2 * i]) == hex[0] &&
				    tolower(data[2 * i + 1]) == hex[1]);
		}
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cavp_case c = { 0 };
	struct cavp_reader *r;
	unsigned long prev_line = 0;
	FILE *f;
	int rc = 1;

	f = size ? fmemopen((void *)data, size, "r") : fopen("/dev/null", "r");
	FUZZ_ASSERT(f != NULL);
	r = cavp_reader_new(f);
	FUZZ_ASSERT(r != NULL);
	for (int n = 0; n < MAX_CASES; n++) {
		rc = cavp_next(r, &c);
		if (rc != 1)
			break;
		check_case(&c, cavp_lines(r), prev_line);
		prev_line = c.line;
	}
	FUZZ_ASSERT(rc >= -1 && rc <= 1);
	if (rc == -1) {
		fuzz_assert_message(cavp_error(r), 160);
		FUZZ_ASSERT(cavp_error_line(r) >= 1 &&
			    cavp_error_line(r) <= cavp_lines(r) + 1);
		FUZZ_ASSERT(is_cleared(&c));
	} else if (rc == 0) {
		FUZZ_ASSERT(is_cleared(&c));
		/* At the end it stays at the end. */
		FUZZ_ASSERT(cavp_next(r, &c) == 0);
	}
	cavp_case_clear(&c);
	cavp_reader_free(r);
	fclose(f);
	check_hex(data, size);
	return 0;
}
