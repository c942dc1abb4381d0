// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Reporting: rate lines, the summary, metrics and STATUS=.  See
 * include/rngfeed/report.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rngfeed/log.h"
#include "rngfeed/metrics.h"
#include "rngfeed/output.h"
#include "rngfeed/egd_server.h"
#include "rngfeed/report.h"

#define BLOCK_BITS (MONITOR_BLOCK_BYTES * 8u)

void report_init(struct report *r, double now)
{
	*r = (struct report){ .start = now, .last_rates = now,
			      .last_metrics = now };
}

static const char *fed_word(const struct report_view *v)
{
	return v->mode == MODE_TEST ? "would have fed" : "fed";
}

/* "estimate H 7.54 bits/sample over 65000 samples (MCV 7.57, Markov 7.99,
 * lag 7.54)", or that there is none yet.  Estimates run at growth points
 * and then every quarter window, so between two the window holds more
 * than the last one covered: say so, or a slow source's figure looks
 * stuck beside a fast one's. */
static void estimate_words(const struct online_estimate_result *e, char *buf, size_t len)
{
	int n;

	if (e->h < 0.0) {
		snprintf(buf, len, "no min-entropy estimate yet");
		return;
	}
	n = snprintf(buf, len,
		     "estimate H %.2f bits/sample over %u samples (MCV %.2f, "
		     "Markov %.2f, lag %.2f)",
		     e->h, (unsigned int)e->samples, e->h_mcv, e->h_markov, e->h_lag);
	if (e->held > e->samples && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n,
			 "; the window holds %u samples now, re-estimated as it fills",
			 (unsigned int)e->held);
}

void report_rates(struct report *r, const struct report_view *v, double now)
{
	double dt = now - r->last_rates;
	struct conditioner_stats cs;

	if (dt <= 0)
		return;
	for (size_t i = 0; i < sourceset_count(v->set); i++) {
		struct reader_stats st;
		uint64_t raw, passed;
		double active = dt;
		char est[160];

		if (!sourceset_running(v->set, i))
			continue;
		sourceset_stats(v->set, i, &st);
		raw = st.raw_bytes - r->last[i].raw_bytes;
		passed = st.blocks_passed - r->last[i].blocks_passed;
		/* -t: over the windows the source was measured in, not
		 * the interval (its rate, not the duty cycle's). */
		if (v->sample && i < CONFIG_MAX_SOURCES) {
			active = v->sample->active[i] - r->last_active[i];
			r->last_active[i] = v->sample->active[i];
			raw = v->sample->raw[i] - r->last_sample_raw[i];
			passed = v->sample->passed[i] - r->last_sample_passed[i];
			r->last_sample_raw[i] = v->sample->raw[i];
			r->last_sample_passed[i] = v->sample->passed[i];
		}
		estimate_words(&st.estimate, est, sizeof(est));
		log_notice("%s: %.1f B/s raw, blocks %llu passed %llu failed, "
			   "%.1f credit bits/s [%s%s%s], credit %u/1024 (%s)",
			   sourceset_config(v->set, i)->driver->name,
			   active > 0 ? (double)raw / active : 0.0,
			   (unsigned long long)st.blocks_passed,
			   (unsigned long long)st.blocks_failed,
			   active > 0 ? (double)(passed * BLOCK_BITS *
						 sourceset_effective_credit(v->set, i)) /
						1024.0 / active
				      : 0.0,
			   reader_state_name(st.state),
			   st.reason[0] ? ": " : "", st.reason,
			   sourceset_effective_credit(v->set, i), est);
		r->last[i] = st;
	}
	conditioner_get_stats(v->cond, &cs);
	log_notice("DRBG: %.1f KiB/s out, %llu reseeds; %s %llu bytes, "
		   "%llu bits credited",
		   (double)(cs.generated - r->last_generated) / 1024.0 / dt,
		   (unsigned long long)cs.reseeds, fed_word(v),
		   (unsigned long long)v->feeder->fed_bytes,
		   (unsigned long long)v->feeder->credited_bits);
	r->last_generated = cs.generated;
	r->last_rates = now;
}

void report_summary(const struct report *r, const struct report_view *v,
		    double now)
{
	struct conditioner_stats cs;

	log_notice("summary after %.1f s:", now - r->start);
	for (size_t i = 0; i < sourceset_count(v->set); i++) {
		struct reader_stats st;
		char tests[300];
		size_t used = 0;

		if (!sourceset_used(v->set, i))
			continue;
		sourceset_stats(v->set, i, &st);
		/* "monobit 0, poker 1, ...": every counted test of the table. */
		tests[0] = '\0';
		for (size_t k = 0; k < MONITOR_N_TESTS; k++)
			if (monitor_tests[k].key)
				used += (size_t)snprintf(
					tests + used,
					used < sizeof(tests) ? sizeof(tests) - used : 0,
					"%s%s %llu", used ? ", " : "",
					monitor_tests[k].key,
					(unsigned long long)st.test_failures[k]);
		log_notice("  %s: %llu raw bytes, %llu block%s passed, %llu "
			   "failed (%s), %llu errors, %llu disables, "
			   "%llu bits of entropy deposited in the DRBG (its passed "
			   "blocks' credit, taken only as the kernel asked)",
			   sourceset_config(v->set, i)->driver->name,
			   (unsigned long long)st.raw_bytes,
			   (unsigned long long)st.blocks_passed,
			   st.blocks_passed == 1 ? "" : "s",
			   (unsigned long long)st.blocks_failed, tests,
			   (unsigned long long)st.errors,
			   (unsigned long long)st.disables,
			   (unsigned long long)(conditioner_deposited(
							v->cond, (unsigned int)i) /
						1024));
	}
	conditioner_get_stats(v->cond, &cs);
	/* --egd-only feeds no kernel: no kernel line (the EGD server's
	 * own line, with its DRBG, follows). */
	if (v->mode == MODE_EGD)
		return;
	/* The kernel's credit is spent from what the sources carried, at
	 * most 256 bits per reseed: say so beside the per-source figures. */
	log_notice("  %s %llu bytes crediting %llu bits (the kernel's credit: "
		   "all sources together, at most 256 bits per DRBG reseed); "
		   "DRBG %llu reseeds, "
		   "%llu bytes generated%s",
		   fed_word(v), (unsigned long long)v->feeder->fed_bytes,
		   (unsigned long long)v->feeder->credited_bits,
		   (unsigned long long)cs.reseeds,
		   (unsigned long long)cs.generated,
		   v->mode != MODE_DAEMON  ? ""
		   : v->feeder->crng_ready ? "; kernel CRNG ready"
					   : "; kernel CRNG not ready");
}

int report_metrics(const struct report *r, const struct report_view *v,
		   const char *path, double now)
{
	struct metrics_source ms[CONFIG_MAX_SOURCES];
	struct metrics_test_failures tf[CONFIG_MAX_SOURCES][MONITOR_N_TESTS];
	struct reader_stats st[CONFIG_MAX_SOURCES];
	struct metrics_egd egd;
	struct metrics_egd_client *lines = NULL;
	struct conditioner_stats cs;
	struct metrics_snapshot m;
	size_t n = 0;
	int written;

	conditioner_get_stats(v->cond, &cs);
	m = (struct metrics_snapshot){
		.fed_bytes = v->mode == MODE_DAEMON ? v->feeder->fed_bytes : 0,
		.credited_bits =
			v->mode == MODE_DAEMON ? v->feeder->credited_bits : 0,
		.drbg_reseeds = cs.reseeds,
		.drbg_discards = cs.discards,
		.crng_ready = v->feeder->crng_ready,
		.uptime_s = now - r->start,
		.log_dropped = log_dropped_lines(),
		.sources = ms,
	};
	if (v->egd) {
		size_t cap = EGD_MAX_CLIENTS + EGD_CLIENTS_KEPT;

		lines = calloc(cap, sizeof(*lines));
		egd_server_metrics(v->egd, &egd, lines, lines ? cap : 0);
		m.egd = &egd;
	}
	for (size_t i = 0; i < sourceset_count(v->set) && n < CONFIG_MAX_SOURCES;
	     i++) {
		if (!sourceset_used(v->set, i))
			continue;
		sourceset_stats(v->set, i, &st[n]);
		ms[n] = (struct metrics_source){
			.name = sourceset_config(v->set, i)->driver->name,
			.raw_bytes = st[n].raw_bytes,
			.blocks_passed = st[n].blocks_passed,
			.blocks_failed = st[n].blocks_failed,
			.errors = st[n].errors,
			.disables = st[n].disables,
			.tests = tf[n],
			.credit_bits =
				conditioner_deposited(v->cond, (unsigned int)i) /
				1024,
			.credit = sourceset_effective_credit(v->set, i),
			.min_entropy_estimate = st[n].estimate.h,
			.full_assessment = st[n].full.h,
			.full_samples = st[n].full.samples,
			.full_in_force = st[n].full.learned.h,
			.estimate_in_force = (int)st[n].in_force,
			.estimate_made_at =
				st[n].in_force == IN_FORCE_FULL ? st[n].full.learned.done_at
				: st[n].in_force == IN_FORCE_NONE ||
						st[n].in_force == IN_FORCE_FULL_PENDING
					? -1.0
					: st[n].estimate.done_at,
			/* In use: open and past its start-up test. */
			.enabled = sourceset_running(v->set, i) &&
				   st[n].state == READER_RUNNING,
		};
		/* One series per counted row of the monitor's table. */
		for (size_t k = 0; k < MONITOR_N_TESTS; k++)
			if (monitor_tests[k].key)
				tf[n][ms[n].n_tests++] =
					(struct metrics_test_failures){
						.test = monitor_tests[k].key,
						.blocks = st[n].test_failures[k],
					};
		n++;
	}
	m.n_sources = n;
	written = metrics_write(path, &m);
	free(lines);
	return written;
}

void report_why_no_credit(const struct report_view *v, char *buf, size_t len)
{
	size_t used = 0;
	bool any_credit = false, running = false;

	buf[0] = '\0';
	if (v->feeder->credited_bits > 0)
		return;
	for (size_t i = 0; i < sourceset_count(v->set); i++) {
		const char *name = sourceset_config(v->set, i)->driver->name;
		struct reader_stats st;
		int n;

		if (!sourceset_running(v->set, i))
			continue;
		if (sourceset_credit(v->set, i) == 0) {
			n = snprintf(buf + used, len - used, "%s%s has credit 0",
				     used ? ", " : "", name);
		} else {
			any_credit = true;
			sourceset_stats(v->set, i, &st);
			n = snprintf(buf + used, len - used, "%s%s %s%s%s",
				     used ? ", " : "", name,
				     st.state == READER_STARTUP
					     ? "in its start-up test"
					     : reader_state_name(st.state),
				     st.reason[0] ? ": " : "", st.reason);
		}
		running = true;
		if (n < 0 || (size_t)n >= len - used) {
			used = len - 1; /* cut short, not empty */
			break;
		}
		used += (size_t)n;
	}
	if (!running)
		snprintf(buf, len, "no source is running");
	else if (!any_credit && used + 40 < len)
		snprintf(buf + used, len - used, " (nothing to credit)");
}

size_t report_status(const struct report_view *v, char *buf, size_t len)
{
	char off[256] = "", why[256];
	size_t used, used_off = 0;
	const char *what = v->mode == MODE_DAEMON ? "Feeding"
			   : v->mode == MODE_TEST ? "Testing"
			   : v->mode == MODE_EGD  ? "Serving EGD clients"
						  : "Writing stdout";
	int n;

	size_t listed;

	n = snprintf(buf, len, "%s from", what);
	used = listed = n > 0 ? (size_t)n : 0;
	for (size_t i = 0; i < sourceset_count(v->set); i++) {
		const char *name = sourceset_config(v->set, i)->driver->name;
		struct reader_stats st;

		if (!sourceset_running(v->set, i))
			continue;
		sourceset_stats(v->set, i, &st);
		if (st.state == READER_RUNNING || st.state == READER_STARTUP ||
		    st.state == READER_OPENING) {
			unsigned int eff = sourceset_effective_credit(v->set, i),
				     ceiling = sourceset_credit(v->set, i);

			/* Said when the on-line estimate holds the credit
			 * below the source's ceiling. */
			if (used < len && st.estimate.h >= 0.0 && eff < ceiling)
				used += (size_t)snprintf(
					buf + used, len - used,
					" %s (credit %u/1024, not %u: min-entropy "
					"estimate %.2f bits/sample)",
					name, eff, ceiling, st.estimate.h);
			else if (used < len)
				used += (size_t)snprintf(buf + used, len - used,
							 " %s", name);
		} else if (used_off < sizeof(off)) {
			used_off += (size_t)snprintf(off + used_off,
						     sizeof(off) - used_off,
						     "; %s %s%s%s", name,
						     reader_state_name(st.state),
						     st.reason[0] ? ": " : "",
						     st.reason);
		}
	}
	if (used == listed && used < len)
		used += (size_t)snprintf(buf + used, len - used, " no source");
	/* The sources that are off say why themselves; the phrase is for
	 * the rest (credit 0, a start-up test), never the same twice. */
	if (off[0])
		snprintf(why, sizeof(why), "%s",
			 v->feeder->credited_bits ? "" : "see below");
	else
		report_why_no_credit(v, why, sizeof(why));
	/* --egd-only feeds no kernel: its credit would only confuse. */
	if (used < len && v->mode != MODE_EGD)
		used += (size_t)snprintf(
			buf + used, len - used,
			"; %llu bits credited in %llu feeds%s%s; kernel CRNG "
			"%s%s%s%s",
			(unsigned long long)v->feeder->credited_bits,
			(unsigned long long)v->feeder->calls,
			why[0] ? ", none yet: " : "", why,
			v->feeder->crng_ready ? "ready" : "not ready", off,
			sourceset_kernel_credit(v->set)[0] ? "; " : "",
			sourceset_kernel_credit(v->set));
	if (v->egd && used < len) {
		struct egd_server_stats es;

		egd_server_get_stats(v->egd, &es);
		used += (size_t)snprintf(buf + used, len - used,
					 "; EGD: %zu clients, %llu bytes served",
					 es.clients,
					 (unsigned long long)es.served);
	}
	return used < len ? used : len - 1;
}

static double update_status(const struct report *r, const struct report_view *v,
			    const struct report_params *p, struct service *svc,
			    double now)
{
	char buf[512];
	bool credited = v->mode != MODE_DAEMON || v->feeder->credited_bits > 0;
	double left = r->start + p->ready_timeout - now;

	if (!svc->ready_sent && !credited) {
		char why[256];

		/* Nothing credited is coming (credit 0 only, every credited
		 * source disabled or finished): no reason to hold the boot. */
		if (left > 0 && sourceset_credit_coming(v->set))
			return left;
		report_why_no_credit(v, why, sizeof(why));
		log_notice("ready after %.1f s without a credit yet: %s",
			   now - r->start, why);
	}
	report_status(v, buf, sizeof(buf));
	return service_update(svc, buf, now);
}

double report_tick(struct report *r, const struct report_view *v,
		   const struct report_params *p, struct service *svc,
		   double now)
{
	double wait = 1e9;

	if (p->rates_interval > 0) {
		if (now - r->last_rates >= p->rates_interval)
			report_rates(r, v, now);
		wait = r->last_rates + p->rates_interval - now;
	}
	if (p->metrics_path && p->metrics_path[0]) {
		if (now - r->last_metrics >= REPORT_METRICS_PERIOD_S) {
			int e = report_metrics(r, v, p->metrics_path, now);

			/* Once per error, not every period: a path that
			 * cannot be written stays so until someone acts. */
			if (e < 0 && e != r->metrics_error)
				log_warn("cannot write metrics to %s: %s "
					 "(said again only if the error "
					 "changes)",
					 p->metrics_path,
					 e == -EEXIST ? "it is not a regular "
							"file; left alone"
						      : strerror(-e));
			else if (e == 0 && r->metrics_error < 0)
				log_notice("metrics written to %s again",
					   p->metrics_path);
			r->metrics_error = e < 0 ? e : 0;
			r->last_metrics = now;
		}
		wait = fmin(wait, r->last_metrics + REPORT_METRICS_PERIOD_S - now);
	}
	if (svc->enabled) {
		wait = fmin(wait, update_status(r, v, p, svc, now));
		wait = fmin(wait, service_watchdog(svc, now));
	}
	return wait;
}
