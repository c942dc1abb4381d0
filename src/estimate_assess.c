// SPDX-License-Identifier: GPL-2.0-or-later
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
#include <pthread.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"
#include "rngfeed/estimate_predict.h"

/* One estimator on one input: the unit of work the threads share. */
struct task {
	enum est_id id;
	int bitwise;		/* collision/Markov/compression/MCV over bits */
	const uint8_t *in;
	size_t n;
	unsigned k;		/* alphabet (literal), or bits per sample */
	struct est_result *res, *res2;	/* res2: LRS beside t-tuple, LZ78Y
					 * beside MultiMMC */
	int *have, *have2;
	/* t-tuple over a bitstring of 8-bit samples: the samples' too (one
	 * suffix array for both where it can), which is then not run alone */
	struct task *samples;
	int by_other;
	int heavy;		/* tens of MiB of work memory: one at a time */
	int rc;
};

/* A t-tuple/LRS task's outcome. */
static void tuple_done(struct task *t, int rc)
{
	if (rc == 0) {
		*t->have = t->res->h >= 0;
		*t->have2 = t->res2->h >= 0;
	}
	t->rc = rc == -ENODATA ? 0 : rc;
}

static void run_task(struct task *t)
{
	int rc;

	switch (t->id) {
	case EST_MCV:
		rc = t->bitwise ? est_mcv_bits(t->in, t->n, t->k, t->res)
				: est_mcv(t->in, t->n, t->k, t->res);
		break;
	case EST_COLLISION:
		rc = est_collision(t->in, t->n, t->k, t->res);
		break;
	case EST_MARKOV:
		rc = est_markov(t->in, t->n, t->k, t->res);
		break;
	case EST_COMPRESSION:
		rc = est_compression(t->in, t->n, t->k, t->res);
		break;
	case EST_TTUPLE:
		if (t->by_other)
			return;
		if (t->samples) {
			struct task *o = t->samples;
			int brc;

			rc = est_tuple_lrs_with_bits(o->in, o->n, o->k, t->in, o->res, o->res2,
						     t->res, t->res2, &brc);
			tuple_done(o, rc);
			tuple_done(t, brc);
			return;
		}
		tuple_done(t, est_tuple_lrs(t->in, t->n, t->k, t->res, t->res2));
		return;
	case EST_MULTI_MCW:
		rc = est_multi_mcw(t->in, t->n, t->k, t->res);
		break;
	case EST_LAG:
		rc = est_lag(t->in, t->n, t->k, t->res);
		break;
	case EST_MULTI_MMC:
		/* LZ78Y too, in one pass (they count the same pairs); under 3
		 * samples neither predicts. */
		if (t->n < 3)
			rc = -ENODATA;
		else if (t->k == 2)
			rc = est_mmc_lz78y_binary(t->in, t->n, t->res, t->res2);
		else
			rc = est_mmc_lz78y_wide(t->in, t->n, t->k, t->res, t->res2);
		*t->have = rc >= 0;
		*t->have2 = rc == 1;
		t->rc = rc < 0 && rc != -ENODATA ? rc : 0;
		return;
	default:
		rc = -EINVAL;
		break;
	}
	/* Too few samples for this one (-ENODATA): left out, as
	 * ea_non_iid leaves it out. */
	*t->have = rc == 0;
	t->rc = rc == -ENODATA ? 0 : rc;
}

/* The tasks with tens of MiB of work memory (the t-tuple/LRS suffix
 * orders, the wide MultiMMC/LZ78Y string tables) run one at a time: memory
 * one of them frees, another takes again at the cost of clearing it, where
 * fresh memory cost about 1.5 ms a MiB on a virtual machine (page faults
 * and the host backing the pages), 0.1-0.3 s of system time on 10^6 real
 * clock deltas with the two side by side.  The light ones run beside. */
struct pool {
	struct task *tasks;
	unsigned n;
	unsigned next;	/* the next task to take (atomic) */
	pthread_mutex_t heavy;
};

static void *worker(void *arg)
{
	struct pool *p = arg;
	unsigned i;

	while ((i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->n) {
		struct task *t = &p->tasks[i];

		if (t->heavy && !t->by_other) {
			pthread_mutex_lock(&p->heavy);
			run_task(t);
			pthread_mutex_unlock(&p->heavy);
		} else {
			run_task(t);
		}
	}
	return NULL;
}

static void add(struct task *list, unsigned *n, enum est_id id, int bitwise,
		const uint8_t *in, size_t len, unsigned k, struct est_report *rep, int bit)
{
	struct task *t = &list[(*n)++];

	*t = (struct task){ .id = id, .bitwise = bitwise, .in = in, .n = len, .k = k,
			    .heavy = id == EST_TTUPLE || (id == EST_MULTI_MMC && k > 2),
			    .res = bit ? &rep->bit[id] : &rep->lit[id],
			    .have = bit ? &rep->have_bit[id] : &rep->have_lit[id] };
	if (id == EST_TTUPLE || id == EST_MULTI_MMC) {
		const enum est_id id2 = id == EST_TTUPLE ? EST_LRS : EST_LZ78Y;

		t->res2 = bit ? &rep->bit[id2] : &rep->lit[id2];
		t->have2 = bit ? &rep->have_bit[id2] : &rep->have_lit[id2];
	}
}

int est_assess(const uint8_t *s, size_t n, unsigned bits, struct est_report *rep)
{
	return est_assess_mt(s, n, bits, 1, rep);
}

int est_assess_mt(const uint8_t *s, size_t n, unsigned bits, unsigned threads,
		  struct est_report *rep)
{
	uint8_t *copy = NULL, *bitstr = NULL;
	const uint8_t *sym = s;
	struct task tasks[2 * EST_COUNT];
	struct pool pool = { .tasks = tasks, .heavy = PTHREAD_MUTEX_INITIALIZER };
	pthread_t tid[8];
	unsigned started = 0, nt = 0, bits_tuple = 0;
	double hb = 1.0, ho;
	int rc;

	if (!s || !rep || bits < 1 || bits > 8 || n >= INT32_MAX / 8)
		return -EINVAL;
	memset(rep, 0, sizeof(*rep));
	if (est_or_samples(s, n) >> bits)
		return -EINVAL;	/* samples wider than declared */
	if (n < 2)
		return -ENODATA;
	rep->bits = bits;
	rep->n = n;
	/* Every value present (uniform bytes, 1-bit samples): the ranks are
	 * the samples themselves, no copy (8 MiB of page faults and writes
	 * for 8M bits).  est_zalloc: huge pages, where a 4-KiB page fault per
	 * 4 KiB of buffer cost more than the bitstring's estimators read it. */
	rep->k = est_alphabet(s, n, bits);
	if (rep->k != 1u << bits) {
		copy = est_zalloc(n);
		if (!copy)
			return -ENOMEM;
		rep->k = est_translate(s, n, bits, copy);
		sym = copy;
	}
	if (rep->k < 2) {
		rc = -EDOM;
		goto out;
	}
	rep->binary = rep->k == 2;
	if (!rep->binary) {
		bitstr = est_zalloc(n * bits);
		if (!bitstr) {
			rc = -ENOMEM;
			goto out;
		}
		est_bitstring(s, n, bits, bitstr);
		/* The heavy tasks (see struct pool) first and last, the light
		 * ones between, on the other thread meanwhile; the longest
		 * first among them, so that the threads finish together. */
		bits_tuple = nt;
		add(tasks, &nt, EST_TTUPLE, 0, bitstr, n * bits, 2, rep, 1);
		add(tasks, &nt, EST_MULTI_MMC, 0, bitstr, n * bits, 2, rep, 1);
		add(tasks, &nt, EST_LAG, 0, bitstr, n * bits, 2, rep, 1);
		add(tasks, &nt, EST_MULTI_MCW, 0, bitstr, n * bits, 2, rep, 1);
		add(tasks, &nt, EST_COMPRESSION, 1, s, n, bits, rep, 1);
		add(tasks, &nt, EST_COLLISION, 1, s, n, bits, rep, 1);
		add(tasks, &nt, EST_MARKOV, 1, s, n, bits, rep, 1);
		add(tasks, &nt, EST_MCV, 1, s, n, bits, rep, 1);
	} else {
		add(tasks, &nt, EST_TTUPLE, 0, sym, n, rep->k, rep, 0);
		add(tasks, &nt, EST_MULTI_MMC, 0, sym, n, rep->k, rep, 0);
		add(tasks, &nt, EST_COMPRESSION, 1, sym, n, 1, rep, 0);
		add(tasks, &nt, EST_COLLISION, 1, sym, n, 1, rep, 0);
		add(tasks, &nt, EST_MARKOV, 1, sym, n, 1, rep, 0);
	}
	add(tasks, &nt, EST_LAG, 0, sym, n, rep->k, rep, 0);
	add(tasks, &nt, EST_MULTI_MCW, 0, sym, n, rep->k, rep, 0);
	add(tasks, &nt, EST_MCV, 0, sym, n, rep->k, rep, 0);
	if (!rep->binary) {
		add(tasks, &nt, EST_MULTI_MMC, 0, sym, n, rep->k, rep, 0);
		add(tasks, &nt, EST_TTUPLE, 0, sym, n, rep->k, rep, 0);
		if (bits == 8) {
			tasks[bits_tuple].samples = &tasks[nt - 1];
			tasks[nt - 1].by_other = 1;
		}
	}
	pool.n = nt;

	if (threads > 8)
		threads = 8;
	/* This thread works too; a thread that cannot start leaves its share
	 * to the others. */
	for (unsigned i = 1; i < threads; i++) {
		if (pthread_create(&tid[started], NULL, worker, &pool) != 0)
			break;
		started++;
	}
	worker(&pool);
	for (unsigned i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	rc = 0;
	for (unsigned i = 0; i < nt && rc == 0; i++)
		rc = tasks[i].rc;
	if (rc < 0)
		goto out;

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
out:
	if (bitstr) {
		explicit_bzero(bitstr, n * bits);
		est_zfree(bitstr, n * bits);
	}
	if (copy) {
		explicit_bzero(copy, n);
		est_zfree(copy, n);
	}
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
 * the cutoff is reproducible.  The union bound makes the chance of a false
 * failure at most alpha; it can land one below the simulated quantile (on
 * 1000 x 1000 random bytes with H_I = 6.947: 27 here, 28 from ea_restart
 * 1.1.7), which is the stricter side. */
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
