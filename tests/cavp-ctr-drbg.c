// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cavp-ctr-drbg FILE.rsp: run every AES-256 case of a NIST CAVP CTR_DRBG
 * response file through rngfeed's DRBG.  The variant comes from the fields
 * of each case (README in tests/data/ctr_drbg): EntropyInputReseed means
 * one explicit reseed, EntropyInputPR means prediction resistance (reseed
 * before each generate).  Other mechanisms are counted as skipped.
 *
 * Prints failures on stderr and one last line "N passed, M failed[, K
 * skipped]" on stdout.  Exit 0 all passed, 1 some failed, 2 unusable file
 * ("FILE:LINE: what was wrong" on stderr).
 */
#include "cavp.h"
#include "rngfeed/drbg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum verdict { PASS, FAIL, SKIP };

struct run {
	const char *file;
	const struct cavp_case *c;
	const char *what; /* step that failed */
	int err;
};

/* Which mechanisms we run: returns 1 use df, 0 no df, -1 not ours. */
static int mechanism_df(const char *m)
{
	if (!strcasecmp(m, "AES-256 use df"))
		return 1;
	if (!strcasecmp(m, "AES-256 no df"))
		return 0;
	return -1;
}

static const uint8_t *bp(const struct cavp_buf *b)
{
	return b->present ? b->p : NULL;
}

static size_t bl(const struct cavp_buf *b)
{
	return b->present ? b->len : 0;
}

/* Instantiate, maybe reseed, generate n times; out holds the last output. */
static int run_steps(struct run *run, struct drbg *d, uint8_t *out, size_t len)
{
	const struct cavp_case *c = run->c;
	size_t calls = c->n_add > c->n_entropy_pr ? c->n_add : c->n_entropy_pr;
	int r;

	if (!calls)
		calls = 2; /* the CAVP procedure: two generates */
	run->what = "instantiate";
	r = drbg_instantiate(d, bp(&c->entropy), bl(&c->entropy),
			     bp(&c->nonce), bl(&c->nonce), bp(&c->pers),
			     bl(&c->pers));
	if (!r && c->entropy_reseed.present) {
		run->what = "reseed";
		r = drbg_reseed(d, bp(&c->entropy_reseed),
				bl(&c->entropy_reseed), bp(&c->add_reseed),
				bl(&c->add_reseed));
	}
	for (size_t i = 0; !r && i < calls; i++) {
		const struct cavp_buf *add = i < c->n_add ? &c->add[i] : NULL;
		const uint8_t *ap = add ? bp(add) : NULL;
		size_t al = add ? bl(add) : 0;

		if (c->n_entropy_pr) {
			/* 9.3.1: the additional input goes into the reseed. */
			run->what = "prediction-resistance reseed";
			r = drbg_reseed(d, bp(&c->entropy_pr[i]),
					bl(&c->entropy_pr[i]), ap, al);
			ap = NULL;
			al = 0;
		}
		if (!r) {
			run->what = "generate";
			r = drbg_generate(d, out, len, ap, al);
		}
	}
	run->err = r;
	return r;
}

static enum verdict run_case(struct run *run)
{
	const struct cavp_case *c = run->c;
	struct drbg_params p = DRBG_PARAMS_DEFAULT;
	size_t len = (size_t)((c->returned_bits + 7) / 8);
	unsigned int tail = (unsigned int)(c->returned_bits % 8);
	struct drbg *d = NULL;
	uint8_t *out = NULL;
	enum verdict v = FAIL;
	int df = mechanism_df(c->mechanism);

	if (df < 0)
		return SKIP;
	p.use_df = df;
	run->what = "setup";
	run->err = drbg_new(&d, &p);
	if (run->err)
		goto out;
	out = malloc(len ? len : 1);
	if (!out) {
		run->what = "malloc";
		goto out;
	}
	if (run_steps(run, d, out, len))
		goto out;
	/* Only the leftmost returned_bits count (10.2.1.5 step 4). */
	if (tail)
		out[len - 1] &= (uint8_t)(0xff << (8 - tail));
	run->what = "compare";
	if (len && tail) {
		uint8_t want = c->returned.p[len - 1] & (uint8_t)(0xff << (8 - tail));

		if (memcmp(out, c->returned.p, len - 1) || out[len - 1] != want)
			goto out;
	} else if (len && memcmp(out, c->returned.p, len)) {
		goto out;
	}
	v = PASS;
out:
	drbg_free(d);
	free(out);
	return v;
}

static void report_failure(const struct run *run)
{
	const struct cavp_case *c = run->c;

	if (run->err)
		fprintf(stderr, "%s:%lu: COUNT = %lu [%s] failed: %s: %s\n",
			run->file, c->line, c->count, c->mechanism, run->what,
			strerror(-run->err));
	else
		fprintf(stderr, "%s:%lu: COUNT = %lu [%s] failed: %s\n",
			run->file, c->line, c->count, c->mechanism,
			strcmp(run->what, "compare") ? run->what
						     : "ReturnedBits differ");
}

int main(int argc, char **argv)
{
	unsigned long passed = 0, failed = 0, skipped = 0;
	struct cavp_case c = { 0 };
	struct cavp_reader *rd = NULL;
	FILE *f = NULL;
	int rc, status = 2;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE.rsp\n", argv[0]);
		return 2;
	}
	rc = drbg_library_init();
	if (rc) {
		fprintf(stderr, "%s: libgcrypt: %s\n", argv[0], strerror(-rc));
		return 2;
	}
	f = fopen(argv[1], "r");
	if (!f) {
		fprintf(stderr, "%s: %m\n", argv[1]);
		return 2;
	}
	rd = cavp_reader_new(f);
	if (!rd) {
		fprintf(stderr, "%s: out of memory\n", argv[1]);
		goto out;
	}
	while ((rc = cavp_next(rd, &c)) > 0) {
		struct run run = { .file = argv[1], .c = &c };

		switch (run_case(&run)) {
		case PASS:
			passed++;
			break;
		case SKIP:
			skipped++;
			break;
		case FAIL:
			failed++;
			report_failure(&run);
			break;
		}
	}
	if (rc < 0) {
		fprintf(stderr, "%s:%lu: %s\n", argv[1], cavp_error_line(rd),
			cavp_error(rd));
		goto out;
	}
	if (!passed && !failed && !skipped) {
		/* An empty or truncated file must not pass silently. */
		fprintf(stderr, "%s:%lu: no test cases\n", argv[1],
			cavp_lines(rd) ? cavp_lines(rd) : 1);
		goto out;
	}
	if (skipped)
		printf("%lu passed, %lu failed, %lu skipped\n", passed, failed,
		       skipped);
	else
		printf("%lu passed, %lu failed\n", passed, failed);
	status = failed ? 1 : 0;
out:
	cavp_case_clear(&c);
	cavp_reader_free(rd);
	fclose(f);
	return status;
}
