// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rngfeed/metrics.h"

static void metric_header(FILE *f, const char *name, const char *type,
			  const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void per_source(FILE *f, const struct metrics_snapshot *m,
		       const char *name, const char *type, const char *help,
		       uint64_t (*value)(const struct metrics_source *))
{
	metric_header(f, name, type, help);
	for (size_t i = 0; i < m->n_sources; i++)
		fprintf(f, "%s{source=\"%s\"} %llu\n", name,
			m->sources[i].name,
			(unsigned long long)value(&m->sources[i]));
}

static uint64_t raw_bytes(const struct metrics_source *s)
{
	return s->stats->raw_bytes;
}

static uint64_t passed(const struct metrics_source *s)
{
	return s->stats->blocks_passed;
}

static uint64_t failed(const struct metrics_source *s)
{
	return s->stats->blocks_failed;
}

static uint64_t enabled(const struct metrics_source *s)
{
	return s->enabled;
}

static uint64_t credit(const struct metrics_source *s)
{
	return s->credit_bits;
}

static uint64_t disables(const struct metrics_source *s)
{
	return s->stats->disables;
}

static uint64_t errors(const struct metrics_source *s)
{
	return s->stats->errors;
}

static void write_body(FILE *f, const struct metrics_snapshot *m)
{
	metric_header(f, "rngfeed_fed_bytes_total", "counter",
		      "Bytes given to the kernel with RNDADDENTROPY.");
	fprintf(f, "rngfeed_fed_bytes_total %llu\n",
		(unsigned long long)m->fed_bytes);
	metric_header(f, "rngfeed_credited_bits_total", "counter",
		      "Entropy bits credited to the kernel.");
	fprintf(f, "rngfeed_credited_bits_total %llu\n",
		(unsigned long long)m->credited_bits);
	metric_header(f, "rngfeed_kernel_crng_ready", "gauge",
		      "1 once the kernel's CRNG is seeded.");
	fprintf(f, "rngfeed_kernel_crng_ready %d\n", m->crng_ready);
	metric_header(f, "rngfeed_drbg_reseeds_total", "counter",
		      "CTR_DRBG (re)seeds from tested raw input.");
	fprintf(f, "rngfeed_drbg_reseeds_total %llu\n",
		(unsigned long long)m->drbg_reseeds);
	metric_header(f, "rngfeed_drbg_discards_total", "counter",
		      "DRBG states discarded (VM generation change, SIGUSR2).");
	fprintf(f, "rngfeed_drbg_discards_total %llu\n",
		(unsigned long long)m->drbg_discards);
	metric_header(f, "rngfeed_uptime_seconds", "gauge",
		      "Seconds since rngfeed started.");
	fprintf(f, "rngfeed_uptime_seconds %.3f\n", m->uptime_s);
	per_source(f, m, "rngfeed_source_raw_bytes_total", "counter",
		   "Raw bytes read from the source.", raw_bytes);
	per_source(f, m, "rngfeed_source_blocks_passed_total", "counter",
		   "20000-bit blocks that passed every health test.", passed);
	per_source(f, m, "rngfeed_source_blocks_failed_total", "counter",
		   "Blocks that failed a health test and were discarded.",
		   failed);
	per_source(f, m, "rngfeed_source_credit_bits_total", "counter",
		   "Entropy bits this source's tested blocks carried.", credit);
	per_source(f, m, "rngfeed_source_enabled", "gauge",
		   "1 while the source is in use.", enabled);
	per_source(f, m, "rngfeed_source_disables_total", "counter",
		   "Times the source was disabled by its health tests.",
		   disables);
	per_source(f, m, "rngfeed_source_errors_total", "counter",
		   "Open or read errors of the source.", errors);
}

int metrics_write(const char *path, const struct metrics_snapshot *m)
{
	size_t len = strlen(path);
	char *tmp;
	FILE *f = NULL;
	int fd, r = 0;

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
