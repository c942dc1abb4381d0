/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Metrics in the Prometheus node_exporter textfile format, written
 * atomically (temporary file in the same directory, then rename) so a
 * collector never reads half a file.
 *
 * The writer knows no producer: each (the sources, the output, the EGD
 * server) fills its part of a plain snapshot.
 */
#ifndef RNGFEED_METRICS_H
#define RNGFEED_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Blocks that failed one health test (its metrics key). */
struct metrics_test_failures {
	const char *test;
	uint64_t blocks;
};

struct metrics_source {
	const char *name;
	uint64_t raw_bytes;
	uint64_t blocks_passed, blocks_failed;
	uint64_t errors, disables;
	size_t n_tests;
	const struct metrics_test_failures *tests;
	uint64_t credit_bits;    /* deposited in the ledger, whole bits */
	unsigned int credit;     /* bits per 1024 raw bits, as credited */
	double min_entropy_estimate; /* on-line, bits per sample; < 0: none yet */
	double full_assessment;  /* the latest full one; < 0: none yet */
	uint64_t full_samples;   /* ...over this many samples */
	double full_in_force;    /* what the full ones learned (the limit
				  * in force, assessor.h); < 0: nothing */
	int estimate_in_force;   /* 0 none, 1 quick/4, 2 quick, 3 full,
				  * 4 full pending (claimed, none yet) */
	double estimate_made_at; /* CLOCK_MONOTONIC s; < 0: none */
	bool enabled;            /* configured on and not disabled */
};

/* One EGD client: connected, or one of the last to leave. */
struct metrics_egd_client {
	unsigned long id;        /* connection number since start */
	char peer[48];           /* "pid 123 uid 0" or the address */
	uint64_t served, requests, refused;
};

/* The EGD server: totals since start, and its client lines. */
struct metrics_egd {
	uint64_t served, requests, refused;
	uint64_t accepted, rejected, disconnects, dropped;
	uint64_t reseeds, discards;
	uint64_t clients;        /* connected now */
	size_t n_lines;
	const struct metrics_egd_client *lines;
};

struct metrics_snapshot {
	uint64_t fed_bytes;
	uint64_t credited_bits;
	uint64_t drbg_reseeds;
	uint64_t drbg_discards;
	bool crng_ready;
	double uptime_s;
	uint64_t log_dropped;  /* log lines the log stream did not take */
	size_t n_sources;
	const struct metrics_source *sources;
	const struct metrics_egd *egd;  /* NULL: no EGD server */
};

/* Write @m to @path atomically.  0 or -errno; -EEXIST: @path is there
 * but not a regular file (a FIFO, a link...), and is left alone. */
int metrics_write(const char *path, const struct metrics_snapshot *m);

/* Can @path be the metrics file: a regular file, or nothing yet?  0, or
 * -EINVAL with a one-line reason in @why (a usage error).  Never waits. */
int metrics_check_path(const char *path, char *why, size_t why_len);

/* One source's gauge @name ("rngfeed_source_...") as a running rngfeed
 * last wrote it to @path (--list shows a running source's estimate):
 * 0 with *@value, -ENOENT if the file has no such line, -EINVAL if it is
 * not a regular file (never read, never waited on), or -errno. */
int metrics_read_source(const char *path, const char *name, const char *source,
			double *value);

#endif
