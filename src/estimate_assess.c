/* The whole SP 800-90B §6.3 non-IID assessment (what `rngfeed --assess`
 * prints), in the order and with the rules of NIST's ea_non_iid -i -a:
 *  - samples are mapped to ranks; the alphabet size k is the number of
 *    distinct values;
 *  - k == 2: every estimator runs on the symbols, no bitstring pass;
 *  - k > 2: MCV, t-tuple, LRS and the predictors run on the symbols, every
 *    estimator runs on the bitstring of the raw samples (bits per sample,
 *    most significant first), collision/Markov/compression only there;
 *  - H_original = min(bits, literal estimates), H_bitstring = min(1, bitstring
 *    estimates), assessed = min(bits, H_original, bits x H_bitstring).
 * And §3.1.4.3's restart sanity check. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"

typedef int (*lit_fn)(const uint8_t *, size_t, unsigned, struct est_result *);

static const lit_fn lit_predictors[] = {
	[EST_MULTI_MCW] = est_multi_mcw,
	[EST_LAG] = est_lag,
	[EST_MULTI_MMC] = est_multi_mmc,
	[EST_LZ78Y] = est_lz78y,
};

/* Runs one estimator; ENODATA (too few samples for it) leaves it out. */
static int keep(int rc, int *have)
{
	*have = rc == 0;
	return rc == -ENODATA ? 0 : rc;
}

/* The literal (sym, k) or bitstring (bitstr, 2) pass of t-tuple, LRS and
 * the predictors. */
static int symbol_pass(const uint8_t *sym, size_t n, unsigned k,
		       int *have, struct est_result *res)
{
	int rc = est_tuple_lrs(sym, n, k, &res[EST_TTUPLE], &res[EST_LRS]);

	if (rc == 0) {
		have[EST_TTUPLE] = res[EST_TTUPLE].h >= 0;
		have[EST_LRS] = res[EST_LRS].h >= 0;
	} else if (rc != -ENODATA) {
		return rc;
	}
	for (int id = EST_MULTI_MCW; id <= EST_LZ78Y; id++) {
		rc = keep(lit_predictors[id](sym, n, k, &res[id]), &have[id]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int est_assess(const uint8_t *s, size_t n, unsigned bits, struct est_report *rep)
{
	uint8_t *sym = NULL, *bitstr = NULL;
	unsigned wide = 0;
	double hb = 1.0, ho;
	int rc;

	if (!s || !rep || bits < 1 || bits > 8 || n >= INT32_MAX / 8)
		return -EINVAL;
	memset(rep, 0, sizeof(*rep));
	for (size_t i = 0; i < n; i++)
		wide |= s[i];
	if (wide >> bits)
		return -EINVAL;	/* samples wider than declared */
	if (n < 2)
		return -ENODATA;
	rep->bits = bits;
	rep->n = n;
	sym = malloc(n);
	if (!sym)
		return -ENOMEM;
	rep->k = est_translate(s, n, bits, sym);
	if (rep->k < 2) {
		rc = -EDOM;
		goto out;
	}
	rep->binary = rep->k == 2;

	if (!rep->binary) {
		int *hv = rep->have_bit;
		struct est_result *b = rep->bit;

		if ((rc = keep(est_mcv_bits(s, n, bits, &b[EST_MCV]), &hv[EST_MCV])) < 0 ||
		    (rc = keep(est_collision(s, n, bits, &b[EST_COLLISION]), &hv[EST_COLLISION])) < 0 ||
		    (rc = keep(est_markov(s, n, bits, &b[EST_MARKOV]), &hv[EST_MARKOV])) < 0 ||
		    (rc = keep(est_compression(s, n, bits, &b[EST_COMPRESSION]), &hv[EST_COMPRESSION])) < 0)
			goto out;
		bitstr = malloc(n * bits);
		if (!bitstr) {
			rc = -ENOMEM;
			goto out;
		}
		est_bitstring(s, n, bits, bitstr);
		rc = symbol_pass(bitstr, n * bits, 2, hv, b);
		if (rc < 0)
			goto out;
	}
	{
		int *hv = rep->have_lit;
		struct est_result *l = rep->lit;

		if ((rc = keep(est_mcv(sym, n, rep->k, &l[EST_MCV]), &hv[EST_MCV])) < 0)
			goto out;
		if (rep->binary &&
		    ((rc = keep(est_collision(sym, n, 1, &l[EST_COLLISION]), &hv[EST_COLLISION])) < 0 ||
		     (rc = keep(est_markov(sym, n, 1, &l[EST_MARKOV]), &hv[EST_MARKOV])) < 0 ||
		     (rc = keep(est_compression(sym, n, 1, &l[EST_COMPRESSION]), &hv[EST_COMPRESSION])) < 0))
			goto out;
		rc = symbol_pass(sym, n, rep->k, hv, l);
		if (rc < 0)
			goto out;
	}
	ho = bits;
	for (int id = 0; id < EST_COUNT; id++) {
		if (rep->have_lit[id] && rep->lit[id].h < ho)
			ho = rep->lit[id].h;
		if (rep->have_bit[id] && rep->bit[id].h < hb)
			hb = rep->bit[id].h;
	}
	rep->h_original = ho;
	rep->h_bitstring = hb;
	rep->h_assessed = ho;
	if (!rep->binary && bits * hb < rep->h_assessed)
		rep->h_assessed = bits * hb;
	rc = 0;
out:
	if (bitstr) {
		explicit_bzero(bitstr, n * bits);
		free(bitstr);
	}
	explicit_bzero(sym, n);
	free(sym);
	return rc;
}

/* ================= §3.1.4.3 restart sanity check ================= */
/* log P(X = x) for X ~ Binomial(m, p). */
static double binom_logpmf(unsigned x, unsigned m, double p)
{
	return lgamma(m + 1.0) - lgamma(x + 1.0) - lgamma(m - x + 1.0) +
	       x * log(p) + (m - x) * log1p(-p);
}

/* The cutoff: the smallest u such that, in m draws from a source whose most
 * likely symbols have probability p each (ceil(1/p) of them at most), the
 * chance that any one occurs more than u times is at most alpha.  NIST's
 * ea_restart finds it by simulation (5 million rounds, random); this takes
 * the exact binomial tail with a union bound over the symbols instead, so
 * the cutoff is reproducible and never below the simulated one by more than
 * the simulation's own noise. */
static unsigned restart_cutoff(unsigned m, double p, double alpha)
{
	double symbols = ceil(1.0 / p - 1e-9), tail = 0.0;

	for (unsigned u = m; u > 0; u--) {
		/* tail = P(X > u - 1) = P(X >= u) */
		tail += exp(binom_logpmf(u, m, p));
		if (symbols * tail > alpha)
			return u;
	}
	return 0;
}

int est_restart_sanity(const uint8_t *matrix, unsigned rows, unsigned cols,
		       unsigned bits, double h_i, struct est_restart *r)
{
	uint32_t cnt[256];
	uint64_t mr = 0, mc = 0;
	double alpha, p;

	if (!matrix || !r || rows < 2 || cols < 2 || bits < 1 || bits > 8 ||
	    !(h_i > 0.0) || h_i > bits)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < rows; i++) {
		uint32_t best = 0;

		memset(cnt, 0, sizeof(cnt));
		for (unsigned j = 0; j < cols; j++) {
			uint8_t v = matrix[(size_t)i * cols + j];

			if (v >> bits)
				return -EINVAL;
			if (++cnt[v] > best)
				best = cnt[v];
		}
		if (best > mr)
			mr = best;
	}
	for (unsigned j = 0; j < cols; j++) {
		uint32_t best = 0;

		memset(cnt, 0, sizeof(cnt));
		for (unsigned i = 0; i < rows; i++) {
			uint8_t v = matrix[(size_t)i * cols + j];

			if (++cnt[v] > best)
				best = cnt[v];
		}
		if (best > mc)
			mc = best;
	}
	/* 90B: alpha = 0.01 over the rows + cols tests (Sidak). */
	alpha = 1.0 - exp(log(0.99) / (rows + cols));
	p = exp2(-h_i);
	r->rows = rows;
	r->cols = cols;
	r->h_i = h_i;
	r->max_row = mr;
	r->max_col = mc;
	/* Rows and columns have the same length in 90B (1000 x 1000). */
	r->cutoff = restart_cutoff(rows > cols ? rows : cols, p, alpha);
	r->pass = mr <= r->cutoff && mc <= r->cutoff;
	return 0;
}
