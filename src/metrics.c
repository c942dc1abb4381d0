// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/metrics.h"

static void metric_header(FILE *f, const char *name, const char *type,
			  const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One unlabelled sample with its HELP and TYPE lines. */
static void metric(FILE *f, const char *name, const char *type,
		   const char *help, uint64_t value)
{
	metric_header(f, name, type, help);
	fprintf(f, "%s %llu\n", name, (unsigned long long)value);
}

enum source_field { RAW_BYTES, PASSED, FAILED, CREDIT, EFFECTIVE_CREDIT,
		    ENABLED, DISABLES, ERRORS };

static const struct {
	const char *name, *type, *help;
	enum source_field field;
} source_metrics[] = {
	{ "rngfeed_source_raw_bytes_total", "counter",
	  "Raw bytes read from the source.", RAW_BYTES },
	{ "rngfeed_source_blocks_passed_total", "counter",
	  "20000-bit blocks that passed every health test.", PASSED },
	{ "rngfeed_source_blocks_failed_total", "counter",
	  "Blocks that failed a health test and were discarded.", FAILED },
	{ "rngfeed_source_credit_bits_total", "counter",
	  "Entropy bits this source's tested blocks carried.", CREDIT },
	{ "rngfeed_source_effective_credit", "gauge",
	  "Entropy bits credited per 1024 raw bits of this source: its "
	  "credit, lowered to what its on-line min-entropy estimate allows.",
	  EFFECTIVE_CREDIT },
	{ "rngfeed_source_enabled", "gauge", "1 while the source is in use.",
	  ENABLED },
	{ "rngfeed_source_disables_total", "counter",
	  "Times the source was disabled by its health tests.", DISABLES },
	{ "rngfeed_source_errors_total", "counter",
	  "Open or read errors of the source.", ERRORS },
};

static uint64_t source_value(const struct metrics_source *s,
			     enum source_field field)
{
	switch (field) {
	case RAW_BYTES:
		return s->raw_bytes;
	case PASSED:
		return s->blocks_passed;
	case FAILED:
		return s->blocks_failed;
	case CREDIT:
		return s->credit_bits;
	case EFFECTIVE_CREDIT:
		return s->credit;
	case ENABLED:
		return s->enabled;
	case DISABLES:
		return s->disables;
	case ERRORS:
		return s->errors;
	}
	return 0;
}

/*
 * The EGD server: totals since start, and per client (labelled by its
 * connection number and peer; the lines of the last clients to leave stay,
 * so what each was served is not lost when it goes).
 */
static void write_egd(FILE *f, const struct metrics_egd *egd)
{
	static const struct {
		const char *name, *type, *help;
		size_t off;
	} totals[] = {
#define EGD_TOTAL(n, t, h, field) \
	{ "rngfeed_egd_" n, t, h, offsetof(struct metrics_egd, field) }
		EGD_TOTAL("served_bytes_total", "counter",
			  "Bytes of DRBG output sent to EGD clients.", served),
		EGD_TOTAL("requests_total", "counter",
			  "EGD requests answered.", requests),
		EGD_TOTAL("refused_total", "counter",
			  "EGD writes (0x03) refused.", refused),
		EGD_TOTAL("accepted_total", "counter",
			  "EGD connections accepted.", accepted),
		EGD_TOTAL("rejected_total", "counter",
			  "EGD connections closed at once (client caps).",
			  rejected),
		EGD_TOTAL("disconnects_total", "counter",
			  "EGD clients that closed their connection.",
			  disconnects),
		EGD_TOTAL("dropped_total", "counter",
			  "EGD clients closed for garbage, not reading or "
			  "idling.",
			  dropped),
		EGD_TOTAL("drbg_reseeds_total", "counter",
			  "Reseeds of the EGD server's own CTR_DRBG.", reseeds),
		EGD_TOTAL("drbg_discards_total", "counter",
			  "EGD server DRBG states discarded (VM generation "
			  "change, SIGUSR2).",
			  discards),
		EGD_TOTAL("clients", "gauge", "EGD clients connected now.",
			  clients),
#undef EGD_TOTAL
	};
	static const struct {
		const char *name, *help;
		size_t off;
	} per[] = {
		{ "rngfeed_egd_client_served_bytes_total",
		  "Bytes sent to this EGD client.",
		  offsetof(struct metrics_egd_client, served) },
		{ "rngfeed_egd_client_requests_total",
		  "Requests from this EGD client.",
		  offsetof(struct metrics_egd_client, requests) },
		{ "rngfeed_egd_client_refused_total",
		  "Writes (0x03) refused from this EGD client.",
		  offsetof(struct metrics_egd_client, refused) },
	};

	for (size_t k = 0; k < sizeof(totals) / sizeof(totals[0]); k++)
		metric(f, totals[k].name, totals[k].type, totals[k].help,
		       *(const uint64_t *)(const void *)((const char *)egd +
							 totals[k].off));
	for (size_t k = 0; k < sizeof(per) / sizeof(per[0]); k++) {
		metric_header(f, per[k].name, "counter", per[k].help);
		for (size_t i = 0; i < egd->n_lines; i++) {
			const struct metrics_egd_client *c = &egd->lines[i];

			fprintf(f, "%s{client=\"%lu\",peer=\"%s\"} %llu\n",
				per[k].name, c->id, c->peer,
				(unsigned long long)*(const uint64_t *)(
					const void *)((const char *)c +
						      per[k].off));
		}
	}
}

static void write_body(FILE *f, const struct metrics_snapshot *m)
{
	struct timespec ts;
	double now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	metric(f, "rngfeed_fed_bytes_total", "counter",
	       "Bytes given to the kernel with RNDADDENTROPY.", m->fed_bytes);
	metric(f, "rngfeed_credited_bits_total", "counter",
	       "Entropy bits credited to the kernel.", m->credited_bits);
	metric(f, "rngfeed_kernel_crng_ready", "gauge",
	       "1 once the kernel's CRNG is seeded.", m->crng_ready);
	metric(f, "rngfeed_drbg_reseeds_total", "counter",
	       "CTR_DRBG (re)seeds from tested raw input.", m->drbg_reseeds);
	metric(f, "rngfeed_drbg_discards_total", "counter",
	       "DRBG states discarded (VM generation change, SIGUSR2).",
	       m->drbg_discards);
	metric(f, "rngfeed_log_lines_dropped_total", "counter",
	       "Log lines dropped: the log stream (stderr, the journal, "
	       "syslog) was not taking them.",
	       m->log_dropped);
	metric_header(f, "rngfeed_uptime_seconds", "gauge",
		      "Seconds since rngfeed started.");
	fprintf(f, "rngfeed_uptime_seconds %.3f\n", m->uptime_s);
	for (size_t k = 0; k < sizeof(source_metrics) / sizeof(source_metrics[0]);
	     k++) {
		metric_header(f, source_metrics[k].name, source_metrics[k].type,
			      source_metrics[k].help);
		for (size_t i = 0; i < m->n_sources; i++)
			fprintf(f, "%s{source=\"%s\"} %llu\n",
				source_metrics[k].name, m->sources[i].name,
				(unsigned long long)source_value(
					&m->sources[i], source_metrics[k].field));
	}
	/* Bits per sample; a source without an estimate yet has no sample. */
	metric_header(f, "rngfeed_source_min_entropy_estimate", "gauge",
		      "On-line SP 800-90B min-entropy estimate (most common "
		      "value, Markov, lag predictor) of the source's tested "
		      "samples, bits per sample.");
	for (size_t i = 0; i < m->n_sources; i++)
		if (m->sources[i].min_entropy_estimate >= 0.0)
			fprintf(f, "rngfeed_source_min_entropy_estimate{source=\"%s\"} %.4f\n",
				m->sources[i].name, m->sources[i].min_entropy_estimate);
	/* Issue 25: the full assessment and which estimate limits the
	 * credit, with its age (both clocks CLOCK_MONOTONIC). */
	metric_header(f, "rngfeed_source_full_assessment", "gauge",
		      "Latest full SP 800-90B non-IID assessment (every "
		      "estimator of --assess) of the source's recent tested "
		      "samples, bits per sample; -1 before the first.");
	for (size_t i = 0; i < m->n_sources; i++)
		fprintf(f, "rngfeed_source_full_assessment{source=\"%s\"} %.4f\n",
			m->sources[i].name, fmax(-1.0, m->sources[i].full_assessment));
	metric_header(f, "rngfeed_source_full_assessment_samples", "gauge",
		      "Samples the latest full assessment covered; 0 before the first.");
	for (size_t i = 0; i < m->n_sources; i++)
		fprintf(f, "rngfeed_source_full_assessment_samples{source=\"%s\"} %llu\n",
			m->sources[i].name,
			(unsigned long long)m->sources[i].full_samples);
	/* Issue 33: what the full assessments learned, the limit in force:
	 * a smaller assessment than the largest only lowers it. */
	metric_header(f, "rngfeed_source_full_assessment_in_force", "gauge",
		      "What the source's full assessments learned, the limit "
		      "in force: the largest one's, lowered by any smaller "
		      "one since, bits per sample; -1 before the first.");
	for (size_t i = 0; i < m->n_sources; i++)
		fprintf(f, "rngfeed_source_full_assessment_in_force{source=\"%s\"} %.4f\n",
			m->sources[i].name, fmax(-1.0, m->sources[i].full_in_force));
	metric_header(f, "rngfeed_source_estimate_in_force", "gauge",
		      "Which estimate limits the source's credit: 0 none yet "
		      "(nothing credited), 1 a quarter of the on-line estimate "
		      "(no full assessment yet), 2 the on-line estimate, 3 the "
		      "full assessment, 4 none until the first full assessment "
		      "(a claimed credit: nothing credited).");
	for (size_t i = 0; i < m->n_sources; i++)
		fprintf(f, "rngfeed_source_estimate_in_force{source=\"%s\"} %d\n",
			m->sources[i].name, m->sources[i].estimate_in_force);
	metric_header(f, "rngfeed_source_estimate_age_seconds", "gauge",
		      "Seconds since the estimate in force was made.");
	for (size_t i = 0; i < m->n_sources; i++) {
		double at = m->sources[i].estimate_made_at;

		if (at >= 0.0)
			fprintf(f, "rngfeed_source_estimate_age_seconds{source=\"%s\"} %.1f\n",
				m->sources[i].name, fmax(0.0, now - at));
	}
	/* One series per counted row of the monitor's table of tests. */
	metric_header(f, "rngfeed_source_test_failures_total", "counter",
		      "Blocks that failed this health test.");
	for (size_t i = 0; i < m->n_sources; i++)
		for (size_t k = 0; k < m->sources[i].n_tests; k++)
			fprintf(f, "rngfeed_source_test_failures_total{source=\"%s\",test=\"%s\"} %llu\n",
				m->sources[i].name, m->sources[i].tests[k].test,
				(unsigned long long)m->sources[i].tests[k].blocks);
	if (m->egd)
		write_egd(f, m->egd);
}

static const char *file_kind(mode_t mode)
{
	return S_ISLNK(mode)    ? "a symbolic link"
	       : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISDIR(mode)  ? "a directory"
	       : S_ISSOCK(mode) ? "a socket"
	       : S_ISCHR(mode) || S_ISBLK(mode) ? "a device"
					     : "not a regular file";
}

int metrics_check_path(const char *path, char *why, size_t why_len)
{
	struct stat st;

	/* Absent is fine (the first write makes it); what else keeps it
	 * from being written is said when a write fails. */
	if (lstat(path, &st) < 0 || S_ISREG(st.st_mode))
		return 0;
	snprintf(why, why_len,
		 "--metrics %s is %s: the metrics file is replaced whole on "
		 "every write, so it must be a regular file or not exist yet "
		 "(left untouched; name another)",
		 path, file_kind(st.st_mode));
	return -EINVAL;
}

int metrics_write(const char *path, const struct metrics_snapshot *m)
{
	size_t len = strlen(path);
	struct stat st;
	char *tmp;
	FILE *f = NULL;
	int fd, r = 0;

	/* The rename below would put a file where a FIFO, a link or a
	 * socket someone made after the start was. */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return -EEXIST;
	tmp = malloc(len + 16);
	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, len + 16, "%s.tmpXXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	/* Readable by a collector running as another user. */
	fchmod(fd, 0644);
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		unlink(tmp);
		goto out;
	}
	write_body(f, m);
	if (fflush(f) != 0 || ferror(f))
		r = errno ? -errno : -EIO;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
out:
	free(tmp);
	return r;
}

int metrics_read_source(const char *path, const char *name, const char *source,
			double *value)
{
	char want[160], line[512];
	struct stat st;
	size_t n;
	FILE *f;
	int fd, r = -ENOENT;

	if (snprintf(want, sizeof(want), "%s{source=\"%s\"} ", name, source) >=
	    (int)sizeof(want))
		return -EINVAL;
	n = strlen(want);
	/* Never waits: a FIFO opens at once with O_NONBLOCK, and only a
	 * regular file is read. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	f = fdopen(fd, "re");
	if (!f) {
		r = -errno;
		close(fd);
		return r;
	}
	while (fgets(line, sizeof(line), f)) {
		char *end;

		if (strncmp(line, want, n) != 0)
			continue;
		*value = strtod(line + n, &end);
		r = end == line + n ? -EINVAL : 0;
		break;
	}
	fclose(f);
	return r;
}
