// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rngfeed --assess: reads raw samples, runs the SP 800-90B §6.3 non-IID
 * estimators (estimate.h) and prints them in the order and the words of
 * NIST's ea_non_iid -v (version 1.1.x), so that the two outputs can be
 * compared line by line; the final line is the assessed min-entropy.
 */
#include <errno.h>
#include <gcrypt.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rngfeed/assess.h"
#include "rngfeed/estimate.h"
#include "rngfeed/estimate_common.h"

/* The estimators index with 32-bit suffix arrays over the bitstring. */
#define ASSESS_MAX_BYTES (256u << 20)
#define NIST_MIN_SIZE 1000000

/* Samples read whole: est_zalloc()'s memory, huge pages where large (a
 * 4-KiB page fault a page cost more than reading 8 MB of samples did on a
 * virtual machine: 48 -> 5-16 ms), sized from the file where it is one.
 * Or a regular file's own pages, mapped: no copy, and none of the memory
 * touched for the first time that costs more here than the copy (1.5-3.5
 * ms a MiB once the host has taken freed memory back: 8M 1-bit samples,
 * each run right after one of ea_non_iid's, 12 of each in ABBA order,
 * median 388 -> 361 ms of CPU).  A mapped file cut short under the estimators makes them fault
 * (caught: one line, exit 2, see bus_fault()); one written meanwhile is
 * refused once they are done (samples_changed()): the estimates are of the
 * bytes whose hash was printed, or there are none. */
struct samples {
	uint8_t *b;
	size_t n, cap;		/* cap 0: b maps the file */
	struct stat st;		/* the file as it was mapped */
};

static void samples_free(struct samples *in)
{
	if (in->b && !in->cap) {
		(void)munmap(in->b, in->n);
	} else if (in->b) {
		explicit_bzero(in->b, in->n);
		est_zfree(in->b, in->cap);
	}
	*in = (struct samples){ .b = NULL };
}

/* Whether the mapped file fd was written or resized since it was mapped
 * (its times move with every write); samples read, not mapped, cannot. */
static int samples_changed(int fd, const struct samples *in)
{
	struct stat now;

	if (in->cap)
		return 0;
	return fstat(fd, &now) != 0 || now.st_size != in->st.st_size ||
	       now.st_mtim.tv_sec != in->st.st_mtim.tv_sec ||
	       now.st_mtim.tv_nsec != in->st.st_mtim.tv_nsec ||
	       now.st_ctim.tv_sec != in->st.st_ctim.tv_sec ||
	       now.st_ctim.tv_nsec != in->st.st_ctim.tv_nsec;
}

/* The mapped samples' fault handler: a read past the end of a file cut
 * short prints the line made beforehand and exits (a signal handler may
 * only write and exit, so its state is this one static); any other fault
 * takes the default action at once. */
static struct {
	const uint8_t *from, *to;
	int fd;
	size_t len;
	char line[320];
} bus;

static void bus_fault(int sig, siginfo_t *si, void *ctx)
{
	const uint8_t *at = si->si_addr;

	(void)ctx;
	if (at >= bus.from && at < bus.to) {
		ssize_t r = write(bus.fd, bus.line, bus.len);

		(void)r;
		_exit(2);
	}
	signal(sig, SIG_DFL);	/* the fault recurs, now with its default */
}

/* Reads fd to EOF into in, or maps it where it is a regular file and map
 * is set.  0 or -errno (-EFBIG: too big). */
static int read_all(int fd, struct samples *in, int map)
{
	struct stat st;
	size_t cap = 1 << 20;

	*in = (struct samples){ .b = NULL };
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size < ASSESS_MAX_BYTES) {
		void *p = map ? mmap(NULL, (size_t)st.st_size, PROT_READ,
				     MAP_PRIVATE | MAP_POPULATE, fd, 0) : MAP_FAILED;

		if (p != MAP_FAILED) {
			*in = (struct samples){ .b = p, .n = (size_t)st.st_size, .st = st };
			return 0;
		}
		/* else read: one byte more than the file, so that its EOF
		 * read needs no room made */
		cap = (size_t)st.st_size + 1;
	}
	in->b = est_zalloc(cap);
	if (!in->b)
		return -ENOMEM;
	in->cap = cap;
	for (;;) {
		ssize_t r;

		if (in->n == in->cap) {
			const size_t more = in->cap * 2;
			uint8_t *nb;

			if (in->cap >= ASSESS_MAX_BYTES) {
				samples_free(in);
				return -EFBIG;
			}
			nb = est_zalloc(more);
			if (!nb) {
				samples_free(in);
				return -ENOMEM;
			}
			memcpy(nb, in->b, in->n);
			explicit_bzero(in->b, in->n);
			est_zfree(in->b, in->cap);
			in->b = nb;
			in->cap = more;
		}
		r = read(fd, in->b + in->n, in->cap - in->n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			const int e = -errno;

			samples_free(in);
			return e;
		}
		if (r == 0)
			return 0;
		in->n += (size_t)r;
	}
}

static void print_sha256(FILE *out, const char *name, const uint8_t *b, size_t n)
{
	unsigned char d[32];

	/* libgcrypt is initialised once per process; the hash needs nothing
	 * else (no secure memory). */
	gcry_check_version(NULL);
	gcry_md_hash_buffer(GCRY_MD_SHA256, d, b, n);
	fprintf(out, "Opening file: '%s' (SHA-256 hash ", name);
	for (int i = 0; i < 32; i++)
		fprintf(out, "%02x", d[i]);
	fprintf(out, ")\n");
}

/* ea_non_iid's per-estimator detail line (its -v output). */
static void detail(FILE *out, const char *label, enum est_id id,
		   const struct est_result *r)
{
	static const char *const pname[EST_COUNT] = {
		[EST_MULTI_MCW] = "MultiMCW", [EST_LAG] = "Lag",
		[EST_MULTI_MMC] = "MultiMMC", [EST_LZ78Y] = "LZ78Y",
	};

	switch (id) {
	case EST_MCV:
		fprintf(out, "%s MCV Estimate: mode = %llu, p-hat = %.17g, p_u = %.17g\n",
			label, (unsigned long long)r->count, r->p_hat, r->p_u);
		break;
	case EST_COLLISION:
		fprintf(out, "%s Collision Estimate: X-bar = %.17g, sigma-hat = %.17g, p = %.17g\n",
			label, r->x_bar, r->sigma, r->p_u);
		break;
	case EST_MARKOV:
		fprintf(out, "%s Markov Estimate: P_0 = %.17g, P_1 = %.17g, P_0,0 = %.17g, "
			"P_0,1 = %.17g, P_1,0 = %.17g, P_1,1 = %.17g, p_max = %.17g\n",
			label, r->p_mk[0], r->p_mk[1], r->p_mk[2], r->p_mk[3],
			r->p_mk[4], r->p_mk[5], r->p_hat);
		break;
	case EST_COMPRESSION:
		fprintf(out, "%s Compression Estimate: X-bar = %.17g, sigma-hat = %.17g, p = %.17g\n",
			label, r->x_bar, r->sigma, r->p_u);
		break;
	case EST_TTUPLE:
		if (r->h < 0)
			fprintf(out, "t-Tuple Estimate: No strings are repeated 35 times. t-Tuple estimate failed.\n");
		else
			fprintf(out, "%s t-Tuple Estimate: t = %llu, p-hat_max = %.17g, p_u = %.17g\n",
				label, (unsigned long long)r->t, r->p_hat, r->p_u);
		break;
	case EST_LRS:
		if (r->h < 0)
			fprintf(out, "LRS Estimate: v<u. Can't Run LRS Test.\n");
		else
			fprintf(out, "%s LRS Estimate: u = %llu, v = %llu, p-hat = %.17g, p_u = %.17g\n",
				label, (unsigned long long)r->u, (unsigned long long)r->v,
				r->p_hat, r->p_u);
		break;
	default:
		fprintf(out, "%s %s Prediction Estimate: N = %llu, Pglobal' = %.17g (C = %llu) ",
			label, pname[id], (unsigned long long)r->n, r->p_global_prime,
			(unsigned long long)r->count);
		if (r->p_local > 0)
			fprintf(out, "Plocal = %.17g (r = %llu)\n", r->p_local,
				(unsigned long long)r->run);
		else
			fprintf(out, "Plocal can't affect result (r = %llu)\n",
				(unsigned long long)r->run);
		break;
	}
}

/* "Most Common Value", "Collision Test", ... as the summary lines say. */
static const char *test_name(enum est_id id)
{
	static const char *const n[EST_COUNT] = {
		[EST_MCV] = "Most Common Value",
		[EST_COLLISION] = "Collision Test",
		[EST_MARKOV] = "Markov Test",
		[EST_COMPRESSION] = "Compression Test",
		[EST_TTUPLE] = "T-Tuple Test",
		[EST_LRS] = "LRS Test",
		[EST_MULTI_MCW] = "Multi Most Common in Window (MultiMCW) Prediction Test",
		[EST_LAG] = "Lag Prediction Test",
		[EST_MULTI_MMC] = "Multi Markov Model with Counting (MultiMMC) Prediction Test",
		[EST_LZ78Y] = "LZ78Y Prediction Test",
	};
	return n[id];
}

static void summary(FILE *out, const struct est_report *rep, enum est_id id, int bit)
{
	const struct est_result *r = bit ? &rep->bit[id] : &rep->lit[id];

	if (!(bit ? rep->have_bit[id] : rep->have_lit[id]))
		return;
	if (bit)
		fprintf(out, "\t%s Estimate (bit string) = %f / 1 bit(s)\n", test_name(id), r->h);
	else
		fprintf(out, "\t%s Estimate = %f / %u bit(s)\n", test_name(id), r->h,
			id >= EST_COLLISION && id <= EST_COMPRESSION ? 1 : rep->bits);
}

/* Detail then summary, bitstring first, as ea_non_iid orders them. */
static void both(FILE *out, const struct est_report *rep, enum est_id id)
{
	if (rep->have_bit[id])
		detail(out, "Bitstring", id, &rep->bit[id]);
	summary(out, rep, id, 1);
	if (rep->have_lit[id])
		detail(out, "Literal", id, &rep->lit[id]);
	summary(out, rep, id, 0);
}

static void print_report(FILE *out, const struct est_report *rep)
{
	if (!rep->binary)
		fprintf(out, "Number of Binary Symbols: %zu\n", rep->n * rep->bits);
	if (rep->n < NIST_MIN_SIZE)
		fprintf(out, "\n*** Warning: data contains less than %d samples ***\n\n",
			NIST_MIN_SIZE);
	if (rep->k < (1u << rep->bits))
		fprintf(out, "\nSymbols have been translated.\n");
	fprintf(out, "\nRunning non-IID tests...\n\n");
	fprintf(out, "Running Most Common Value Estimate...\n");
	both(out, rep, EST_MCV);
	fprintf(out, "\nRunning Entropic Statistic Estimates (bit strings only)...\n");
	both(out, rep, EST_COLLISION);
	both(out, rep, EST_MARKOV);
	if (!rep->have_bit[EST_COMPRESSION] && !rep->have_lit[EST_COMPRESSION])
		fprintf(out, "\t*** Warning: not enough samples to run compression test (need more than 1000) ***\n");
	both(out, rep, EST_COMPRESSION);
	fprintf(out, "\nRunning Tuple Estimates...\n");
	/* ea_non_iid prints t-tuple's and LRS's details together. */
	if (!rep->binary) {
		detail(out, "Bitstring", EST_TTUPLE, &rep->bit[EST_TTUPLE]);
		detail(out, "Bitstring", EST_LRS, &rep->bit[EST_LRS]);
		summary(out, rep, EST_TTUPLE, 1);
	}
	detail(out, "Literal", EST_TTUPLE, &rep->lit[EST_TTUPLE]);
	detail(out, "Literal", EST_LRS, &rep->lit[EST_LRS]);
	summary(out, rep, EST_TTUPLE, 0);
	summary(out, rep, EST_LRS, 1);
	summary(out, rep, EST_LRS, 0);
	fprintf(out, "\nRunning Predictor Estimates...\n");
	if (!rep->have_lit[EST_MULTI_MCW])
		fprintf(out, "\t*** Warning: not enough samples to run multiMCW test (need more than 4096) ***\n");
	for (int id = EST_MULTI_MCW; id <= EST_LZ78Y; id++)
		both(out, rep, (enum est_id)id);
	fprintf(out, "\nH_original: %f\n", rep->h_original);
	if (!rep->binary) {
		fprintf(out, "H_bitstring: %f\n", rep->h_bitstring);
		fprintf(out, "min(H_original, %u X H_bitstring): %f\n", rep->bits,
			rep->h_assessed);
	}
	fprintf(out, "Assessed min entropy: %f bits per %u-bit sample\n",
		rep->h_assessed, rep->bits);
}

static int restart_check(int fd, unsigned bits, double h_i, FILE *out, FILE *err)
{
	struct samples in;
	struct est_restart r;
	int rc = read_all(fd, &in, 0);

	if (rc < 0) {
		fprintf(err, "rngfeed: reading the restart matrix: %s\n", strerror(-rc));
		return 2;
	}
	if (in.n != 1000u * 1000u) {
		fprintf(err, "rngfeed: a restart matrix is 1000 x 1000 samples, "
			"not %zu bytes\n", in.n);
		rc = 2;
		goto out;
	}
	if (est_restart_sanity(in.b, 1000, 1000, bits, h_i, &r) < 0) {
		fprintf(err, "rngfeed: the restart matrix has samples wider than "
			"%u bits, or there is no min-entropy (%f) to check\n", bits, h_i);
		rc = 2;
		goto out;
	}
	fprintf(out, "\nRestart tests (SP 800-90B 3.1.4.3), 1000 x 1000 samples\n");
	fprintf(out, "H_I: %f\n", h_i);
	fprintf(out, "X_cutoff: %llu (binomial, alpha = 0.01 over 2000 rows and columns)\n",
		(unsigned long long)r.cutoff);
	fprintf(out, "X_max: %llu (rows %llu, columns %llu)\n",
		(unsigned long long)(r.max_row > r.max_col ? r.max_row : r.max_col),
		(unsigned long long)r.max_row, (unsigned long long)r.max_col);
	if (r.pass) {
		fprintf(out, "\nRestart Sanity Check Passed...\n");
		rc = 0;
	} else {
		fprintf(out, "\n*** Restart Sanity Check Failed ***\n");
		rc = 1;
	}
out:
	samples_free(&in);
	return rc;
}

int assess_run(int in_fd, const char *name, unsigned bits, int restart_fd,
	       FILE *out, FILE *err)
{
	struct est_report *rep = NULL;
	struct samples in;
	struct sigaction fault = { .sa_flags = SA_SIGINFO }, was;
	unsigned wide;
	int rc = read_all(in_fd, &in, 1), ret = 2;
	const uint8_t *buf = in.b;
	const size_t n = in.n;

	if (rc < 0) {
		fprintf(err, "rngfeed: reading %s: %s\n", name,
			rc == -EFBIG ? "more than 256 MiB of samples" : strerror(-rc));
		return 2;
	}
	if (!in.cap) {
		fflush(err);
		bus.from = buf;
		bus.to = buf + n;
		bus.fd = fileno(err);
		snprintf(bus.line, sizeof(bus.line),
			 "rngfeed: %s was cut short while it was assessed\n", name);
		bus.len = strlen(bus.line);
		fault.sa_sigaction = bus_fault;
		sigemptyset(&fault.sa_mask);
		sigaction(SIGBUS, &fault, &was);
	}
	print_sha256(out, name, buf, n);
	wide = est_or_samples(buf, n);
	if (n < 2 || (wide >> bits)) {
		fprintf(err, n < 2 ? "rngfeed: %s: fewer than 2 samples\n"
				   : "rngfeed: %s: samples wider than --bits %u\n",
			name, bits);
		goto out;
	}
	rep = calloc(1, sizeof(*rep));
	if (!rep) {
		fprintf(err, "rngfeed: out of memory\n");
		goto out;
	}
	{
		/* The count of distinct symbols, for the "Loaded" line (the
		 * samples fit in `bits`: checked above). */
		const unsigned k = est_alphabet(buf, n, bits);

		fprintf(out, "Loaded %zu samples of %u distinct %u-bit-wide symbols\n",
			n, k, bits);
		if (k < 2) {
			fprintf(out, "Symbol alphabet consists of 1 symbol. No entropy awarded...\n");
			fprintf(out, "Assessed min entropy: 0 bits per %u-bit sample\n", bits);
			ret = 1;
			goto out;
		}
	}
	{
		/* One thread per CPU this process may run on. */
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		rc = est_assess_mt(buf, n, bits, cpus > 1 ? (unsigned)cpus : 1, rep);
	}
	if (rc < 0) {
		fprintf(err, "rngfeed: assessing %s: %s\n", name, strerror(-rc));
		goto out;
	}
	if (samples_changed(in_fd, &in)) {
		fprintf(err, "rngfeed: %s was written while it was assessed\n", name);
		goto out;
	}
	print_report(out, rep);
	ret = 0;
	if (restart_fd >= 0)
		ret = restart_check(restart_fd, bits, rep->h_assessed, out, err);
out:
	free(rep);
	if (!in.cap)
		sigaction(SIGBUS, &was, NULL);
	samples_free(&in);
	return ret;
}
