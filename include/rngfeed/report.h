/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reporting: what the pipeline did, for people and collectors.  Rate lines
 * (-t), the summary (exit, SIGUSR1), the metrics file and the one-line
 * STATUS= for "systemctl status".  It only reads the pipeline's state.
 */
#ifndef RNGFEED_REPORT_H
#define RNGFEED_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rngfeed/conditioner.h"
#include "rngfeed/config.h"
#include "rngfeed/feeder.h"
#include "rngfeed/service.h"
#include "rngfeed/sourceset.h"

#define REPORT_METRICS_PERIOD_S 5.0

struct output_sample;
struct egd_server;

/* What a report reads. */
struct report_view {
	enum rngfeed_mode mode;
	/* -t: the sources are read in bursts; rates are what arrived during
	 * them over their length (NULL: read whenever asked, rates per
	 * second of the interval) */
	const struct output_sample *sample;
	const struct source_set *set;
	const struct conditioner *cond;
	const struct feeder *feeder;   /* fed/credited (or "would have") */
	const struct egd_server *egd;  /* --egd-server; NULL = none */
};

struct report {
	double start;                  /* monotonic seconds */
	double last_rates;
	double last_metrics;
	int metrics_error;             /* the last write's -errno, 0 = ok:
					* a failure is logged when it changes */
	double last_active[CONFIG_MAX_SOURCES]; /* -t: measured seconds at
						 * the last rates */
	uint64_t last_sample_raw[CONFIG_MAX_SOURCES];
	uint64_t last_sample_passed[CONFIG_MAX_SOURCES];
	uint64_t last_generated;
	struct reader_stats last[CONFIG_MAX_SOURCES];
};

void report_init(struct report *r, double now);
/* -t and SIGUSR1: one line per running source and one for the DRBG, rates
 * since the last call. */
void report_rates(struct report *r, const struct report_view *v, double now);
/* Totals since start, per source and overall. */
void report_summary(const struct report *r, const struct report_view *v,
		    double now);
/* The metrics file at @path, atomically.  0 or -errno. */
int report_metrics(const struct report *r, const struct report_view *v,
		   const char *path, double now);
/*
 * The STATUS= line: what feeds, what was credited, what is off and, while
 * nothing is credited yet, why.  The number of characters written.
 */
size_t report_status(const struct report_view *v, char *buf, size_t len);
/* What is reported when, for report_tick(). */
struct report_params {
	const char *metrics_path;      /* "" = no metrics file */
	double rates_interval;         /* rate lines every so often; 0 = none */
	double ready_timeout;          /* READY=1 at the first credit or then */
};

/*
 * What is due now: rate lines, the metrics file (every
 * REPORT_METRICS_PERIOD_S), READY=1 (at the first credit, or
 * ready_timeout after the start without one: boot must not wait on a
 * source that cannot be credited; STATUS= then says why), STATUS= and the
 * watchdog.  Seconds until something is due again.
 */
double report_tick(struct report *r, const struct report_view *v,
		   const struct report_params *p, struct service *svc,
		   double now);
/* Why nothing has been credited yet ("" once something has), in a phrase. */
void report_why_no_credit(const struct report_view *v, char *buf, size_t len);

#endif
