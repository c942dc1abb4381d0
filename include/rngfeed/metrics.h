/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Metrics in the Prometheus node_exporter textfile format, written
 * atomically (temporary file in the same directory, then rename) so a
 * collector never reads half a file.
 */
#ifndef RNGFEED_METRICS_H
#define RNGFEED_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rngfeed/reader.h"

struct egd_server;

struct metrics_source {
	const char *name;
	const struct reader_stats *stats;
	uint64_t credit_bits;    /* deposited in the ledger, whole bits */
	unsigned int credit;     /* bits per 1024 raw bits, as credited */
	double min_entropy_estimate; /* on-line, bits per sample; < 0: none yet */
	bool enabled;            /* configured on and not disabled */
};

struct metrics_snapshot {
	uint64_t fed_bytes;
	uint64_t credited_bits;
	uint64_t drbg_reseeds;
	uint64_t drbg_discards;
	bool crng_ready;
	double uptime_s;
	size_t n_sources;
	const struct metrics_source *sources;
	const struct egd_server *egd;   /* its totals and clients; NULL */
};

/* Write @m to @path atomically.  0 or -errno. */
int metrics_write(const char *path, const struct metrics_snapshot *m);

/* One source's gauge @name ("rngfeed_source_...") as a running rngfeed
 * last wrote it to @path (--list shows a running source's estimate):
 * 0 with *@value, -ENOENT if the file has no such line, or -errno. */
int metrics_read_source(const char *path, const char *name, const char *source,
			double *value);

#endif
