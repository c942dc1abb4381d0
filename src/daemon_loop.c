// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon's main loop (see daemon.c for the picture): one thread that
 * alone touches the conditioner, the output and the kernel, asleep in
 * poll(2) between turns; the signals, reader pokes and uevents it
 * dispatches; and the end of a run.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/conditioner.h"
#include "rngfeed/confidential.h"
#include "rngfeed/daemon.h"
#include "rngfeed/drbg.h"
#include "rngfeed/egd_server.h"
#include "rngfeed/log.h"
#include "rngfeed/output.h"
#include "rngfeed/report.h"
#include "rngfeed/service.h"
#include "rngfeed/sourceset.h"
#include "rngfeed/vmgenid.h"
#include "daemon_internal.h"

static struct report_view view(const struct daemon *d)
{
	return (struct report_view){
		.mode = d->cfg->mode,
		.sample = d->cfg->mode == MODE_TEST ? &d->out.sample : NULL,
		.set = d->set,
		.cond = d->cond,
		.feeder = &d->out.feeder,
		.egd = d->egd,
	};
}

/* ---- the loop --------------------------------------------------------------- */

/* Tested blocks into the conditioner: a part at a time while the output
 * wants credited data (each credit backed by its own reseed), otherwise
 * whatever is waiting, whole, for as long as the output says a reseed is
 * due (--stdout: one block per limit, the next stays with its reader). */
static void absorb(struct daemon *d, bool in_parts, double now)
{
	uint8_t seed[DRBG_SEEDLEN];
	unsigned int credit;
	bool derived;

	for (;;) {
		if (d->ops->absorb_due && !d->ops->absorb_due(&d->out, now))
			break;
		if (!conditioner_holding(d->cond)) {
			if (!sourceset_take_derived(d->set, d->block,
						    &d->held_from, &credit,
						    seed, &derived))
				break;
			conditioner_hold_derived(d->cond, d->held_from, credit,
						 d->block,
						 derived ? seed : NULL);
			explicit_bzero(d->block, sizeof(d->block));
			explicit_bzero(seed, sizeof(seed));
		}
		if (in_parts && conditioner_available(d->cond))
			break;
		bool was_seeded = conditioner_seeded(d->cond);

		if (conditioner_absorb(d->cond, in_parts) == 1 && !was_seeded)
			log_info("CTR_DRBG instantiated from a tested %s block",
				 sourceset_config(d->set, d->held_from)->driver->name);
	}
}

/*
 * Forget the DRBG state, what the ledger credited to it, and the tested
 * blocks waiting in the readers: a copy of this VM holds the same.  The
 * next tested block instantiates a fresh DRBG.
 */
static void discard_state(struct daemon *d, const char *why)
{
	log_notice("%s: discarding the DRBG state and waiting blocks", why);
	conditioner_discard(d->cond);
	if (d->egd)
		egd_server_discard(d->egd);
	sourceset_discard(d->set);
}

/* SIGHUP: new configuration and sources; the conditioner and counters
 * stay.  Not inlined: its 18 KB configuration would sit in the frame of
 * every loop turn and push the steady state's calls that much deeper
 * into the stack (issue 20: private memory). */
static __attribute__((noinline)) void reload(struct daemon *d)
{
	struct rngfeed_config fresh;
	char err[512];

	if (config_parse_args(&fresh, d->argc, d->argv, err, sizeof(err)) < 0) {
		log_err("SIGHUP: keeping the old configuration: %s", err);
		return;
	}
	log_notice("SIGHUP: re-reading the configuration and sources%s",
		   d->cfg->user[0] ? " (opened again as the unprivileged "
				     "user: a root-only device needs a restart)"
				   : "");
	/* Settings that shape the running pipeline; the mode, devices and
	 * metrics path stay as started. */
	d->cfg->retry_delay = fresh.retry_delay;
	d->cfg->retry_max = fresh.retry_max;
	d->cfg->max_failures = fresh.max_failures;
	d->cfg->random_step = fresh.random_step;
	d->cfg->interval = fresh.interval;
	d->out.feeder.p.interval_s = (unsigned int)fresh.interval;
	/* confidential-guest may have changed; detection stands. */
	source_configs_trust(fresh.sources, fresh.n_sources,
			     confidential_resolve(fresh.confidential_guest,
						  &d->found));
	if (sourceset_reload(d->set, &fresh, d->evfd) == 0)
		log_err("no usable entropy source after SIGHUP; retrying "
			"on the next SIGHUP");
}

static void handle_signals(struct daemon *d)
{
	struct report_view v = view(d);
	struct signalfd_siginfo si;

	for (;;) {
		ssize_t n = read(d->sigfd, &si, sizeof(si));

		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			/* Deaf to SIGTERM from here on, and poll would say
			 * "readable" for ever: stop now instead. */
			log_err("reading signals: %s; stopping", strerror(errno));
			d->exit_code = EXIT_FAILURE;
			d->stop = true;
		}
		if (n != sizeof(si))
			break;
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			log_info("%s: stopping", strsignal((int)si.ssi_signo));
			d->stop = true;
			break;
		case SIGUSR1:
			report_rates(&d->report, &v, now_s());
			report_summary(&d->report, &v, now_s());
			if (d->egd)
				egd_server_log_summary(d->egd);
			break;
		case SIGUSR2:
			/* An explicit request (e.g. after restoring a VM
			 * snapshot without vmgenid). */
			discard_state(d, "SIGUSR2");
			break;
		case SIGHUP:
			reload(d);
			break;
		}
	}
}

/* Rates (-t), metrics, READY/STATUS and the watchdog; seconds until the
 * next is due. */
static double housekeeping(struct daemon *d, double now)
{
	struct report_view v = view(d);
	struct report_params p = {
		.metrics_path = d->cfg->metrics_path,
		.rates_interval = d->cfg->mode == MODE_TEST
					  ? d->cfg->stats_interval
					  : 0,
		.ready_timeout = d->cfg->ready_timeout,
	};

	double hw = sourceset_tick(d->set, now, d->genfd >= 0);

	return fmin(hw, report_tick(&d->report, &v, &p, &d->service, now));
}

static int timeout_ms(double wait_s)
{
	if (wait_s <= 0)
		return 0;
	return (int)ceil(fmin(wait_s, 3600) * 1000);
}

/* Sleep until something happens or @wait_s, and dispatch it.  false on a
 * fatal poll error. */
static bool poll_dispatch(struct daemon *d, double wait_s)
{
	struct pollfd own[4] = {
		{ .fd = d->sigfd, .events = POLLIN },
		{ .fd = d->evfd, .events = POLLIN },
		/* A negative fd is ignored by poll(2). */
		{ .fd = d->genfd, .events = POLLIN },
		{ .fd = d->out.waiting_pollout  ? d->kernel.fd
			: d->out.stdout_blocked ? STDOUT_FILENO
						: -1,
		  .events = POLLOUT },
	};
	/* The EGD server's fds follow, in an array of their own size. */
	struct pollfd *pfd = d->egd ? d->pfd : own;
	size_t n = 4;
	uint64_t v;

	if (d->egd) {
		memcpy(pfd, own, sizeof(own));
		n += egd_server_pollfds(d->egd, pfd + 4, EGD_POLL_MAX);
	}
	if (poll(pfd, n, timeout_ms(wait_s)) < 0 && errno != EINTR) {
		log_err("poll: %s", strerror(errno));
		return false;
	}
	if (pfd[0].revents)
		handle_signals(d);
	/* Not a semaphore: one read takes the whole count. */
	if (pfd[1].revents)
		(void)!read(d->evfd, &v, sizeof(v));
	if (pfd[2].revents && vmgenid_drain(d->genfd) > 0)
		discard_state(d, "VM generation changed (snapshot restored "
				 "or VM cloned)");
	/* Any uevent may be a hw_random driver that bound or unbound. */
	if (pfd[2].revents)
		sourceset_devices_changed(d->set);
	if (pfd[3].revents && d->out.stdout_blocked) {
		d->out.stdout_blocked = false; /* room, or an error to see */
	} else if (pfd[3].revents & POLLOUT) {
		d->out.waiting_pollout = false;
		feeder_kernel_asks(&d->out.feeder);
	}
	if (d->egd)
		egd_server_events(d->egd, pfd + 4, n - 4, now_s());
	return true;
}

/* wants → absorb → request → step → poll → dispatch.  Every turn polls,
 * so a signal is seen within one step however busy the output is.  The
 * readers are asked before the step, so they read while it works (a
 * --stdout batch is one reseed's worth: asked after it, the next
 * reseed's block came late). */
void daemon_loop(struct daemon *d)
{
	while (!d->stop) {
		double now = now_s(), wait = 3600;
		bool want = d->ops->wants(&d->out, now, &wait);
		int r;

		/* The EGD server takes blocks only in turns where the kernel
		 * output wants none (the kernel comes first); what it asked
		 * for is its own. */
		bool egd_claims = d->egd && egd_server_turn(d->egd, d->set,
							    want, now);

		if (!egd_claims)
			absorb(d, want && d->ops->in_parts, now);
		if (want)
			sourceset_request(d->set, d->out.credited_only);
		r = d->ops->step(&d->out, want, now, &wait);
		if (r < 0)
			break;
		if (d->egd && egd_server_step(d->egd, now, &wait) > 0)
			r = 1;
		if (r > 0)
			wait = 0;
		wait = fmin(wait, housekeeping(d, now));
		if (!poll_dispatch(d, wait)) {
			d->exit_code = EXIT_FAILURE;
			break;
		}
	}
	if (d->out.exit_code)
		d->exit_code = d->out.exit_code;
}

/* The end of a run: what it did, while the sources still show it. */
void daemon_finish(struct daemon *d)
{
	struct report_view v = view(d);
	double now = now_s();

	service_stopping(&d->service);
	if (d->cfg->mode == MODE_DAEMON)
		feeder_check_ready(&d->out.feeder, &d->kops, now);
	if (d->cfg->metrics_path[0])
		(void)report_metrics(&d->report, &v, d->cfg->metrics_path, now);
	sourceset_stop(d->set);
	if (d->cfg->mode != MODE_STDOUT || d->cfg->verbosity > 1)
		report_summary(&d->report, &v, now);
	if (d->egd)
		egd_server_log_summary(d->egd);
	/* For the benchmark scripts, whatever the verbosity. */
	if (d->cfg->bench_fill > 0)
		log_plain("bench-fill: seconds=%.3f calls=%llu bytes=%llu "
			  "credited_bits=%llu",
			  now - d->start,
			  (unsigned long long)d->out.feeder.calls,
			  (unsigned long long)d->out.feeder.fed_bytes,
			  (unsigned long long)d->out.feeder.credited_bits);
}
