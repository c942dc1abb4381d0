// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The pipeline, end to end:
 *
 *   reader threads ──tested raw blocks──▶ CTR_DRBG (re)seed + ledger deposit
 *        ▲ demand                                   │ generate
 *        └──────────── main loop ◀──────────────────┘
 *                         │ RNDADDENTROPY(bytes, credit ≤ ledger)  (daemon)
 *                         │ write(stdout)                           (--stdout)
 *                         │ nothing, rates every second             (--test)
 *
 * The main loop is one thread: it alone touches the DRBG, the ledger and
 * the kernel, so none of them needs a lock.  It sleeps in poll(2) on a
 * signalfd and an eventfd the readers poke.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/daemon.h"
#include "rngfeed/drbg.h"
#include "rngfeed/feeder.h"
#include "rngfeed/ledger.h"
#include "rngfeed/log.h"
#include "rngfeed/metrics.h"
#include "rngfeed/privs.h"
#include "rngfeed/reader.h"
#include "rngfeed/service.h"
#include "rngfeed/util.h"
#include "rngfeed/vmgenid.h"

#define ADDITIONAL_LEN 16      /* kernel bytes mixed into every generate */
#define STDOUT_CHUNK DRBG_MAX_REQUEST_LEN
#define METRICS_PERIOD_S 5.0
#define BENCH_BURST 32         /* --bench-fill steps between polls */
#define BLOCK_BITS (MONITOR_BLOCK_BYTES * 8u)

struct slot {
	struct source_config cfg;
	struct reader *reader;       /* NULL when not started */
	struct reader_stats base;    /* totals of earlier readers (SIGHUP) */
	struct reader_stats last;    /* for rate lines */
	uint64_t credit_units;       /* ledger deposits, 1/1024 bit */
	bool used;                   /* a reader was started at some point */
};

struct daemon {
	struct rngfeed_config *cfg;
	int argc;
	char **argv;

	struct slot slots[CONFIG_MAX_SOURCES];
	size_t n_slots;

	struct drbg *drbg;
	struct ledger ledger;
	uint64_t reseeds;
	uint64_t discards;      /* DRBG states thrown away (VM clone, USR2) */
	double last_reseed;
	uint64_t bytes_since_reseed;

	struct feeder feeder;
	struct kernel_linux kernel;
	struct kernel_ops kops;
	bool have_kernel;
	bool waiting_pollout;   /* old kernels, once ready: poll POLLOUT */

	/* The tested block being absorbed in parts (absorb_ready_blocks). */
	uint8_t part_block[MONITOR_BLOCK_BYTES];
	size_t part_slot, next_slot;
	unsigned int parts, parts_done; /* equal: no block held */

	uint8_t *out; /* --stdout, --bench-fill: STDOUT_CHUNK bytes, wiped after use */
	uint64_t generated;     /* bytes out of the DRBG (all modes) */
	uint64_t out_bytes;     /* --stdout */
	struct service service;
	int sigfd, evfd, genfd;
	double start, last_stats, last_metrics, last_status;
	uint64_t last_generated;
	bool stop;
	int exit_code;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- DRBG seeding ---------------------------------------------------------- */

/*
 * Nonce: unique per instantiation (time and PID).  Personalization: what
 * makes this machine and this start differ (machine-id, boot id, host
 * name, PID, clocks), so two machines or two starts with identical source
 * output still get different DRBG states (SP 800-90A 8.7.1).
 */
static void make_nonce(uint8_t nonce[16])
{
	struct timespec rt, mono;
	uint64_t a, b;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	a = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
	b = ((uint64_t)getpid() << 40) ^
	    ((uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec);
	memcpy(nonce, &a, 8);
	memcpy(nonce + 8, &b, 8);
}

static size_t make_personalization(char *buf, size_t len)
{
	char machine[64] = "", boot[64] = "", host[64] = "";
	struct timespec rt, mono;
	int n;

	read_text_file("/etc/machine-id", machine, sizeof(machine));
	read_text_file("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
	gethostname(host, sizeof(host) - 1);
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	n = snprintf(buf, len, "rngfeed %s|%s|%s|%s|%d|%lld.%09ld|%lld.%09ld",
		     RNGFEED_VERSION, machine, boot, host, (int)getpid(),
		     (long long)rt.tv_sec, rt.tv_nsec, (long long)mono.tv_sec,
		     mono.tv_nsec);
	return n < 0 ? 0 : ((size_t)n < len ? (size_t)n : len - 1);
}

/* The DRBG failed at @what: whatever it held is not trusted any more, so
 * nothing it held is credited. */
static void drop_drbg(struct daemon *d, const char *what, int r)
{
	log_err("CTR_DRBG %s failed: %s", what, strerror(-r));
	drbg_uninstantiate(d->drbg);
	ledger_discard(&d->ledger);
}

/* Tested raw input (a block or part of one) goes into the DRBG, and its
 * credit into the ledger. */
static void absorb(struct daemon *d, size_t i, const uint8_t *data,
		   size_t len)
{
	struct slot *s = &d->slots[i];
	unsigned int credit = source_config_credit(&s->cfg);
	int r;

	if (!drbg_is_instantiated(d->drbg)) {
		uint8_t nonce[16];
		char pers[512];
		size_t plen = make_personalization(pers, sizeof(pers));

		make_nonce(nonce);
		r = drbg_instantiate(d->drbg, data, len, nonce, sizeof(nonce),
				     (const uint8_t *)pers, plen);
		explicit_bzero(nonce, sizeof(nonce));
		if (r == 0)
			log_info("CTR_DRBG instantiated from a tested %s block",
				 s->cfg.driver->name);
	} else {
		r = drbg_reseed(d->drbg, data, len, NULL, 0);
	}
	if (r < 0) {
		drop_drbg(d, "(re)seed", r);
		return;
	}
	d->reseeds++;
	d->last_reseed = now_s();
	d->bytes_since_reseed = 0;
	ledger_deposit(&d->ledger, (unsigned int)i, (uint64_t)len * 8, credit);
	s->credit_units += (uint64_t)len * 8 * credit;
}

/* The next tested block from the readers, in turn, into d->part_block. */
static bool take_block(struct daemon *d)
{
	for (size_t k = 0; k < d->n_slots; k++) {
		size_t i = (d->next_slot + k) % d->n_slots;

		if (d->slots[i].reader &&
		    reader_take(d->slots[i].reader, d->part_block)) {
			d->part_slot = i;
			d->parts = ledger_block_parts(
				MONITOR_BLOCK_BYTES,
				source_config_credit(&d->slots[i].cfg));
			d->parts_done = 0;
			d->next_slot = (i + 1) % d->n_slots;
			return true;
		}
	}
	return false;
}

static void drop_block(struct daemon *d)
{
	explicit_bzero(d->part_block, sizeof(d->part_block));
	d->parts = d->parts_done = 0;
}

/*
 * Tested blocks into the DRBG.  A block from a source credited in full
 * carries 20,000 bits, but one reseed backs at most LEDGER_CAP_BITS of
 * credit: so while the kernel wants data (@feeding) a block goes in a part
 * at a time (ledger_block_parts()), with one credited step fed between
 * two parts.  Otherwise whatever is waiting goes in whole.
 */
static void absorb_ready_blocks(struct daemon *d, bool feeding)
{
	const size_t n = MONITOR_BLOCK_BYTES;

	for (;;) {
		size_t k = d->parts_done, from, to;

		if (d->parts_done == d->parts && !take_block(d))
			break;
		if (feeding && ledger_available(&d->ledger))
			break;
		from = k * n / d->parts;
		to = feeding ? (k + 1) * n / d->parts : n;
		absorb(d, d->part_slot, d->part_block + from, to - from);
		d->parts_done = feeding ? k + 1 : d->parts;
		if (d->parts_done == d->parts)
			drop_block(d);
	}
}

/* DRBG output with fresh kernel bytes as additional input, so that two
 * clones of one VM diverge as soon as their kernels do.  0 or -errno. */
static int generate(struct daemon *d, uint8_t *out, size_t len)
{
	uint8_t add[ADDITIONAL_LEN];
	ssize_t n = kernel_get_additional(add, sizeof(add));
	int r;

	r = drbg_generate(d->drbg, out, len, add, n > 0 ? (size_t)n : 0);
	explicit_bzero(add, sizeof(add));
	if (r < 0)
		return r;
	d->generated += len;
	d->bytes_since_reseed += len;
	return 0;
}

/* ---- the three ways out -------------------------------------------------- */

static bool kernel_wants_data(struct daemon *d, double now, double *wait)
{
	if (feeder_wants(&d->feeder, now, wait))
		return true;
	/* Kernels before 5.18, once ready: wait for /dev/random to say the
	 * pool fell below the watermark (POLLOUT). */
	if (*wait < 0)
		d->waiting_pollout = true;
	return false;
}

/*
 * One credited step: @step bytes of DRBG output into @buf and the credit
 * the ledger allows for them (spent).  0 when the ledger allows nothing
 * yet, 1 with a step, and on a DRBG failure the state is dropped (nothing
 * it held is credited) and 0 returned.
 */
static int credited_step(struct daemon *d, uint8_t *buf, size_t step,
			 unsigned int *credit)
{
	int r;

	if (ledger_available(&d->ledger) == 0)
		return 0;
	r = generate(d, buf, step);
	if (r < 0) {
		drop_drbg(d, "generate", r);
		return 0;
	}
	*credit = ledger_spend(&d->ledger, step);
	return 1;
}

/* Log the outcome @r of feeder_feed(); -errno on a kernel error. */
static int fed(struct daemon *d, int r, size_t step, unsigned int credit)
{
	if (r < 0) {
		log_err("RNDADDENTROPY on %s failed: %s%s", d->kernel.path,
			strerror(-r),
			r == -EPERM ? " (it needs CAP_SYS_ADMIN: run as root)"
				    : "");
		return r;
	}
	log_debug("fed %zu bytes crediting %u bits", step, credit);
	if (r == 1)
		log_notice("kernel CRNG is ready (%llu bits credited so far)",
			   (unsigned long long)d->feeder.credited_bits);
	return 0;
}

/* Feed one step if the ledger allows; -errno on a kernel error. */
static int feed_kernel(struct daemon *d, double now)
{
	uint8_t buf[4096];
	size_t step = (size_t)d->cfg->random_step;
	unsigned int credit;
	int r;

	if (!credited_step(d, buf, step, &credit))
		return 0;
	r = feeder_feed(&d->feeder, &d->kops, buf, step, credit, now);
	explicit_bzero(buf, sizeof(buf));
	return fed(d, r, step, credit);
}

/*
 * --bench-fill: one DRBG request cut into up to BENCH_BURST steps fed back
 * to back (one generate, so one getrandom() for its additional input, per
 * burst), each credited only with what the ledger allows (mostly nothing),
 * so that a benchmark sees how fast the pipeline could fill the kernel.
 * The shipped fill phase feeds credited steps only.  -errno on a kernel
 * error.
 */
static int bench_feed(struct daemon *d, double now)
{
	size_t step = (size_t)d->cfg->random_step;
	size_t n = STDOUT_CHUNK / step < BENCH_BURST ? STDOUT_CHUNK / step
						      : BENCH_BURST;
	int r;

	if (!drbg_is_instantiated(d->drbg))
		return 0;
	r = generate(d, d->out, n * step);
	if (r < 0) {
		drop_drbg(d, "generate", r);
		return 0;
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		/* The output came after every reseed the ledger counts. */
		unsigned int credit = ledger_spend(&d->ledger, step);

		r = fed(d,
			feeder_feed(&d->feeder, &d->kops, d->out + i * step,
				    step, credit, now),
			step, credit);
	}
	explicit_bzero(d->out, n * step);
	return r;
}

static bool stdout_may_write(const struct daemon *d, double now)
{
	return drbg_is_instantiated(d->drbg) &&
	       d->bytes_since_reseed < (uint64_t)d->cfg->reseed_bytes &&
	       now - d->last_reseed < d->cfg->reseed_seconds;
}

/* Ask for a reseed early, at half the limits, so output rarely waits. */
static bool stdout_wants_data(const struct daemon *d, double now)
{
	return !drbg_is_instantiated(d->drbg) ||
	       d->bytes_since_reseed >= (uint64_t)d->cfg->reseed_bytes / 2 ||
	       now - d->last_reseed >= d->cfg->reseed_seconds / 2;
}

/* Write one chunk to stdout; false when output is finished. */
static bool write_stdout(struct daemon *d)
{
	uint8_t *buf = d->out;
	uint64_t room = (uint64_t)d->cfg->reseed_bytes - d->bytes_since_reseed;
	size_t len = STDOUT_CHUNK;
	int r;

	if (d->cfg->bytes >= 0 &&
	    (uint64_t)d->cfg->bytes - d->out_bytes < len)
		len = (size_t)((uint64_t)d->cfg->bytes - d->out_bytes);
	if (room < len)
		len = (size_t)room;
	if (len == 0)
		return d->cfg->bytes < 0 ||
		       d->out_bytes < (uint64_t)d->cfg->bytes;
	r = generate(d, buf, len);
	if (r == 0)
		r = write_all(STDOUT_FILENO, buf, len);
	explicit_bzero(buf, len);
	if (r == -EPIPE)
		return false;
	if (r < 0) {
		log_err("--stdout: %s", strerror(-r));
		d->exit_code = EXIT_FAILURE;
		return false;
	}
	d->out_bytes += len;
	return d->cfg->bytes < 0 || d->out_bytes < (uint64_t)d->cfg->bytes;
}

/* --test: the DRBG runs as if feeding, nothing leaves the process. */
static void test_consume(struct daemon *d)
{
	uint8_t buf[4096];
	size_t step = (size_t)d->cfg->random_step;
	unsigned int credit;

	if (!credited_step(d, buf, step, &credit))
		return;
	explicit_bzero(buf, sizeof(buf));
	d->feeder.fed_bytes += step; /* "would have fed" */
	d->feeder.credited_bits += credit;
}

/* ---- statistics ---------------------------------------------------------- */

static void slot_stats(struct slot *s, struct reader_stats *out)
{
	struct reader_stats cur = { 0 };

	*out = s->base;
	if (!s->reader)
		return;
	reader_get_stats(s->reader, &cur);
	out->state = cur.state;
	out->raw_bytes += cur.raw_bytes;
	out->blocks_passed += cur.blocks_passed;
	out->blocks_failed += cur.blocks_failed;
	for (int i = 0; i < 5; i++)
		out->fips_failures[i] += cur.fips_failures[i];
	out->rct_failures += cur.rct_failures;
	out->apt_failures += cur.apt_failures;
	out->drct_failures += cur.drct_failures;
	out->errors += cur.errors;
	out->disables += cur.disables;
	memcpy(out->reason, cur.reason, sizeof(out->reason));
	memcpy(out->description, cur.description, sizeof(out->description));
}

static void log_rates(struct daemon *d, double now)
{
	double dt = now - d->last_stats;

	if (dt <= 0)
		return;
	for (size_t i = 0; i < d->n_slots; i++) {
		struct slot *s = &d->slots[i];
		struct reader_stats st;

		if (!s->reader)
			continue;
		slot_stats(s, &st);
		log_notice("%s: %.1f B/s raw, blocks %llu passed %llu failed, "
			   "%.1f credit bits/s [%s%s%s]",
			   s->cfg.driver->name,
			   (double)(st.raw_bytes - s->last.raw_bytes) / dt,
			   (unsigned long long)st.blocks_passed,
			   (unsigned long long)st.blocks_failed,
			   (double)((st.blocks_passed - s->last.blocks_passed) *
				    BLOCK_BITS * source_config_credit(&s->cfg)) /
				   1024.0 / dt,
			   reader_state_name(st.state),
			   st.reason[0] ? ": " : "", st.reason);
		s->last = st;
	}
	log_notice("DRBG: %.1f KiB/s out, %llu reseeds; %s %llu bytes, "
		   "%llu bits credited",
		   (double)(d->generated - d->last_generated) / 1024.0 / dt,
		   (unsigned long long)d->reseeds,
		   d->cfg->mode == MODE_TEST ? "would have fed" : "fed",
		   (unsigned long long)d->feeder.fed_bytes,
		   (unsigned long long)d->feeder.credited_bits);
	d->last_generated = d->generated;
	d->last_stats = now;
}

static void log_summary(struct daemon *d)
{
	log_notice("summary after %.1f s:", now_s() - d->start);
	for (size_t i = 0; i < d->n_slots; i++) {
		struct slot *s = &d->slots[i];
		struct reader_stats st;

		if (!s->used)
			continue;
		slot_stats(s, &st);
		log_notice("  %s: %llu raw bytes, %llu blocks passed, %llu "
			   "failed (monobit %llu, poker %llu, runs %llu, long "
			   "run %llu, continuous %llu, RCT %llu, APT %llu, "
			   "difference RCT %llu), %llu errors, %llu disables, "
			   "%llu credit bits",
			   s->cfg.driver->name,
			   (unsigned long long)st.raw_bytes,
			   (unsigned long long)st.blocks_passed,
			   (unsigned long long)st.blocks_failed,
			   (unsigned long long)st.fips_failures[0],
			   (unsigned long long)st.fips_failures[1],
			   (unsigned long long)st.fips_failures[2],
			   (unsigned long long)st.fips_failures[3],
			   (unsigned long long)st.fips_failures[4],
			   (unsigned long long)st.rct_failures,
			   (unsigned long long)st.apt_failures,
			   (unsigned long long)st.drct_failures,
			   (unsigned long long)st.errors,
			   (unsigned long long)st.disables,
			   (unsigned long long)(s->credit_units / 1024));
	}
	log_notice("  %s %llu bytes crediting %llu bits; DRBG %llu reseeds, "
		   "%llu bytes generated%s",
		   d->cfg->mode == MODE_TEST ? "would have fed" : "fed",
		   (unsigned long long)d->feeder.fed_bytes,
		   (unsigned long long)d->feeder.credited_bits,
		   (unsigned long long)d->reseeds,
		   (unsigned long long)d->generated,
		   d->cfg->mode != MODE_DAEMON ? ""
		   : d->feeder.crng_ready      ? "; kernel CRNG ready"
					       : "; kernel CRNG not ready");
}

static void write_metrics(struct daemon *d, double now)
{
	struct metrics_source ms[CONFIG_MAX_SOURCES];
	struct reader_stats st[CONFIG_MAX_SOURCES];
	struct metrics_snapshot m = {
		.fed_bytes = d->cfg->mode == MODE_DAEMON ? d->feeder.fed_bytes : 0,
		.credited_bits = d->cfg->mode == MODE_DAEMON
					 ? d->feeder.credited_bits
					 : 0,
		.drbg_reseeds = d->reseeds,
		.drbg_discards = d->discards,
		.crng_ready = d->feeder.crng_ready,
		.uptime_s = now - d->start,
		.sources = ms,
	};
	size_t n = 0;
	int r;

	if (!d->cfg->metrics_path[0])
		return;
	for (size_t i = 0; i < d->n_slots; i++) {
		struct slot *s = &d->slots[i];

		if (!s->used)
			continue;
		slot_stats(s, &st[n]);
		ms[n] = (struct metrics_source){
			.name = s->cfg.driver->name,
			.stats = &st[n],
			.credit_bits = s->credit_units / 1024,
			/* In use: open and past its start-up test. */
			.enabled = s->reader && st[n].state == READER_RUNNING,
		};
		n++;
	}
	m.n_sources = n;
	r = metrics_write(d->cfg->metrics_path, &m);
	if (r < 0)
		log_warn("cannot write metrics to %s: %s", d->cfg->metrics_path,
			 strerror(-r));
	d->last_metrics = now;
}

/*
 * One line for "systemctl status": what runs, what was done, what is off.
 * READY=1 with the first one worth reporting; after that a changed line
 * goes out at most every METRICS_PERIOD_S, and an unchanged one never, so
 * a daemon with nothing to do sleeps.  Returns seconds until a held-back
 * change may go (a large value when nothing waits).
 */
static double update_status(struct daemon *d, double now)
{
	char buf[512], off[256] = "";
	size_t used = 0, used_off = 0;
	const char *what = d->cfg->mode == MODE_DAEMON ? "Feeding"
			   : d->cfg->mode == MODE_TEST ? "Testing"
						       : "Writing stdout";

	used += (size_t)snprintf(buf, sizeof(buf), "%s from", what);
	for (size_t i = 0; i < d->n_slots; i++) {
		struct slot *s = &d->slots[i];
		struct reader_stats st;

		if (!s->reader)
			continue;
		slot_stats(s, &st);
		if (st.state == READER_RUNNING || st.state == READER_STARTUP) {
			if (used < sizeof(buf))
				used += (size_t)snprintf(buf + used, sizeof(buf) - used,
							 " %s", s->cfg.driver->name);
		} else if (used_off < sizeof(off)) {
			used_off += (size_t)snprintf(off + used_off,
						     sizeof(off) - used_off,
						     "; %s %s: %s", s->cfg.driver->name,
						     reader_state_name(st.state),
						     st.reason);
		}
	}
	if (used < sizeof(buf))
		snprintf(buf + used, sizeof(buf) - used,
			 "; %llu bits credited in %llu feeds; kernel CRNG %s%s",
			 (unsigned long long)d->feeder.credited_bits,
			 (unsigned long long)d->feeder.calls,
			 d->feeder.crng_ready ? "ready" : "not ready", off);
	if (!d->service.ready_sent) {
		if (d->cfg->mode != MODE_DAEMON || d->feeder.credited_bits > 0) {
			service_ready(&d->service, buf);
			d->last_status = now;
		}
		return 1e9;
	}
	if (!service_status_changed(&d->service, buf))
		return 1e9;
	if (now - d->last_status < METRICS_PERIOD_S)
		return d->last_status + METRICS_PERIOD_S - now;
	service_status(&d->service, buf);
	d->last_status = now;
	return 1e9;
}

/* ---- sources ------------------------------------------------------------- */

static int start_reader(struct daemon *d, size_t i)
{
	struct slot *s = &d->slots[i];
	int r;
	struct reader_params p = {
		.idx = (unsigned int)i,
		.source = s->cfg,
		.retry_initial_s = d->cfg->retry_delay,
		.retry_max_s = d->cfg->retry_max,
		.notify_fd = d->evfd,
	};

	monitor_params_default(&p.monitor);
	p.monitor.min_entropy = source_config_min_entropy(&s->cfg);
	p.monitor.sample_bits = s->cfg.driver->sample_bits;
	p.monitor.max_consecutive_failures = (unsigned int)d->cfg->max_failures;
	r = reader_start(&s->reader, &p);
	if (r == 0)
		s->used = true;
	return r;
}

/*
 * Two enabled sources reading one device (hwrng and virtio both on
 * /dev/hwrng) would split its output between two monitors and count it
 * twice over; keep the later, more specific driver of the table.
 */
static bool shares_device_with_later(struct daemon *d, size_t i)
{
	const struct source_config *a = &d->slots[i].cfg;
	struct stat sa, sb;

	if (!(a->driver->flags & SOURCE_F_DEVICE) ||
	    !source_config_device(a) || stat(source_config_device(a), &sa) < 0 ||
	    !S_ISCHR(sa.st_mode))
		return false;
	for (size_t j = i + 1; j < d->n_slots; j++) {
		const struct source_config *b = &d->slots[j].cfg;
		char why[SOURCE_WHY_LEN];

		if (!b->enabled || !(b->driver->flags & SOURCE_F_DEVICE) ||
		    !source_config_device(b) ||
		    stat(source_config_device(b), &sb) < 0 ||
		    sb.st_rdev != sa.st_rdev ||
		    b->driver->probe(b, why, sizeof(why)) < 0)
			continue;
		log_notice("%s: not used: %s is read by the %s source already",
			   a->driver->name, source_config_device(a),
			   b->driver->name);
		return true;
	}
	return false;
}

/*
 * Probe every enabled source and start a reader for each usable one (or
 * for every enabled one with --wait-for-source).  Returns the number
 * started.
 */
static size_t start_sources(struct daemon *d)
{
	size_t started = 0;

	for (size_t i = 0; i < d->n_slots; i++) {
		struct slot *s = &d->slots[i];
		char why[SOURCE_WHY_LEN] = "";
		int r;

		if (!s->cfg.enabled || shares_device_with_later(d, i))
			continue;
		r = s->cfg.driver->probe(&s->cfg, why, sizeof(why));
		if (r < 0) {
			log_msg(d->cfg->sources_named ? LOG_WARNING : LOG_INFO,
				"%s: unavailable: %s", s->cfg.driver->name, why);
			if (!d->cfg->wait_for_source)
				continue;
		}
		/* Fixed for this reader's life: a device's default is
		 * looked up once, not per block. */
		s->cfg.credit = (int)source_config_credit(&s->cfg);
		r = start_reader(d, i);
		if (r < 0) {
			log_err("%s: cannot start its reader: %s",
				s->cfg.driver->name, strerror(-r));
			continue;
		}
		log_info("%s: using it, credit %u/1024, health-test H %.2f",
			 s->cfg.driver->name, source_config_credit(&s->cfg),
			 source_config_min_entropy(&s->cfg));
		started++;
	}
	return started;
}

static void stop_sources(struct daemon *d)
{
	for (size_t i = 0; i < d->n_slots; i++) {
		struct slot *s = &d->slots[i];

		if (!s->reader)
			continue;
		slot_stats(s, &s->base);
		s->base.state = READER_STOPPED;
		reader_stop(s->reader);
		s->reader = NULL;
	}
}

/* SIGHUP: new configuration and sources; the DRBG, ledger and counters
 * stay. */
static void reload(struct daemon *d)
{
	struct rngfeed_config fresh;
	char err[512];

	if (config_parse_args(&fresh, d->argc, d->argv, err, sizeof(err)) < 0) {
		log_err("SIGHUP: keeping the old configuration: %s", err);
		return;
	}
	log_notice("SIGHUP: re-reading the configuration and sources");
	stop_sources(d);
	/* Settings that shape the running pipeline; the mode, devices and
	 * metrics path stay as started. */
	d->cfg->retry_delay = fresh.retry_delay;
	d->cfg->retry_max = fresh.retry_max;
	d->cfg->max_failures = fresh.max_failures;
	d->cfg->random_step = fresh.random_step;
	d->cfg->interval = fresh.interval;
	d->feeder.p.interval_s = (unsigned int)fresh.interval;
	for (size_t i = 0; i < d->n_slots && i < fresh.n_sources; i++)
		d->slots[i].cfg = fresh.sources[i];
	if (start_sources(d) == 0)
		log_err("no usable entropy source after SIGHUP; retrying "
			"on the next SIGHUP");
}

/* ---- signals and the loop ------------------------------------------------ */

static int setup_signals(struct daemon *d)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGUSR2);
	/* Readers unblock the wake signal for themselves. */
	sigaddset(&mask, READER_WAKE_SIGNAL);
	if (pthread_sigmask(SIG_BLOCK, &mask, NULL) != 0)
		return -EINVAL;
	sigdelset(&mask, READER_WAKE_SIGNAL);
	d->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->sigfd < 0)
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	return reader_setup_signals();
}

/*
 * Forget the DRBG state, what the ledger credited to it, and the tested
 * blocks waiting in the readers: a copy of this VM holds the same.  The
 * next tested block instantiates a fresh DRBG.
 */
static void discard_state(struct daemon *d, const char *why)
{
	log_notice("%s: discarding the DRBG state and waiting blocks", why);
	drbg_uninstantiate(d->drbg);
	ledger_discard(&d->ledger);
	drop_block(d);
	for (size_t i = 0; i < d->n_slots; i++)
		if (d->slots[i].reader)
			reader_discard(d->slots[i].reader);
	d->discards++;
}

static void handle_signals(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sigfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			log_info("%s: stopping", strsignal((int)si.ssi_signo));
			d->stop = true;
			break;
		case SIGUSR1:
			log_rates(d, now_s());
			log_summary(d);
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

static void drain_eventfd(struct daemon *d)
{
	uint64_t v;

	while (read(d->evfd, &v, sizeof(v)) == sizeof(v))
		;
}

static int next_timeout_ms(double wait_s)
{
	if (wait_s < 0)
		return -1;
	if (wait_s > 3600)
		wait_s = 3600;
	return (int)ceil(wait_s * 1000);
}

static void loop(struct daemon *d)
{
	const enum rngfeed_mode mode = d->cfg->mode;

	while (!d->stop) {
		double now = now_s(), wait = 3600;
		struct pollfd pfd[4];
		nfds_t nfds = 3;
		bool want = false;

		if (mode == MODE_DAEMON)
			want = d->cfg->bench_fill > 0 ||
			       kernel_wants_data(d, now, &wait);
		absorb_ready_blocks(d, mode == MODE_DAEMON && want);
		if (mode == MODE_DAEMON && d->cfg->bench_fill > 0) {
			if (now - d->start >= d->cfg->bench_fill)
				break;
			if (bench_feed(d, now) < 0) {
				d->exit_code = EXIT_FAILURE;
				break;
			}
			/* Until the first block seeds the DRBG, the reader's
			 * eventfd wakes the loop. */
			wait = drbg_is_instantiated(d->drbg)
				       ? 0
				       : d->start + d->cfg->bench_fill - now;
		} else if (mode == MODE_DAEMON) {
			if (want && ledger_available(&d->ledger)) {
				if (feed_kernel(d, now) < 0) {
					d->exit_code = EXIT_FAILURE;
					break;
				}
				continue;
			}
		} else if (mode == MODE_STDOUT) {
			want = stdout_wants_data(d, now);
			if (stdout_may_write(d, now)) {
				if (!write_stdout(d))
					break;
				wait = 0;
			}
		} else {
			want = true;
			test_consume(d);
		}
		for (size_t i = 0; want && i < d->n_slots; i++)
			if (d->slots[i].reader)
				reader_request_block(d->slots[i].reader);

		if (mode == MODE_TEST &&
		    now - d->last_stats >= d->cfg->stats_interval)
			log_rates(d, now);
		if (mode == MODE_TEST)
			wait = fmin(wait, d->last_stats + d->cfg->stats_interval - now);
		if (d->cfg->metrics_path[0]) {
			if (now - d->last_metrics >= METRICS_PERIOD_S)
				write_metrics(d, now);
			wait = fmin(wait, d->last_metrics + METRICS_PERIOD_S - now);
		}
		if (d->service.enabled) {
			wait = fmin(wait, update_status(d, now));
			wait = fmin(wait, service_watchdog(&d->service, now));
		}
		if (mode == MODE_STDOUT && !stdout_may_write(d, now) &&
		    drbg_is_instantiated(d->drbg))
			wait = fmin(wait, 0.05); /* re-check the time limit */

		pfd[0] = (struct pollfd){ .fd = d->sigfd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = d->evfd, .events = POLLIN };
		/* A negative fd is ignored by poll(2). */
		pfd[2] = (struct pollfd){ .fd = d->genfd, .events = POLLIN };
		if (d->waiting_pollout) {
			pfd[3] = (struct pollfd){ .fd = d->kernel.fd,
						  .events = POLLOUT };
			nfds = 4;
		}
		if (poll(pfd, nfds, next_timeout_ms(fmax(wait, 0))) < 0 &&
		    errno != EINTR) {
			log_err("poll: %s", strerror(errno));
			d->exit_code = EXIT_FAILURE;
			break;
		}
		if (pfd[0].revents)
			handle_signals(d);
		if (pfd[1].revents)
			drain_eventfd(d);
		if (pfd[2].revents && vmgenid_drain(d->genfd) > 0)
			discard_state(d, "VM generation changed (snapshot "
					 "restored or VM cloned)");
		if (nfds == 4 && (pfd[3].revents & POLLOUT)) {
			d->waiting_pollout = false;
			feeder_kernel_asks(&d->feeder);
		}
	}
}

/* ---- set-up and teardown ------------------------------------------------ */

static int open_kernel(struct daemon *d)
{
	struct feeder_params fp = {
		.interval_s = (unsigned int)d->cfg->interval,
		.step = (size_t)d->cfg->random_step,
	};
	struct utsname u;
	unsigned int major = 0, minor = 0;
	char why[300];
	int r;

	if (uname(&u) == 0 &&
	    kernel_release_parse(u.release, &major, &minor) == 0)
		fp.modern_kernel = kernel_release_is_modern(major, minor);
	else
		fp.modern_kernel = true; /* unknown: never wait on POLLOUT */
	feeder_init(&d->feeder, &fp);
	if (d->cfg->mode != MODE_DAEMON)
		return 0;
	r = kernel_linux_open(&d->kernel, &d->kops, d->cfg->random_device,
			      why, sizeof(why));
	if (r < 0) {
		log_err("%s", why);
		return r;
	}
	d->have_kernel = true;
	/* Already seeded (the usual case after early boot): say so at once,
	 * and still feed one step now, so READY=1 follows soon. */
	if (feeder_check_ready(&d->feeder, &d->kops, now_s()) == 1) {
		log_info("kernel CRNG is ready already; topping it up");
		d->feeder.next_topup = now_s();
		feeder_kernel_asks(&d->feeder);
	}
	if (!fp.modern_kernel) {
		r = kernel_set_watermark((unsigned int)d->cfg->fill_watermark);
		if (r < 0)
			log_warn("cannot set write_wakeup_threshold: %s",
				 strerror(-r));
	}
	log_info("feeding %s; kernel %u.%u: %s", d->cfg->random_device, major,
		 minor,
		 fp.modern_kernel ? "top up on a timer once the CRNG is ready"
				  : "feed when the kernel asks (POLLOUT)");
	return 0;
}

/* Detach before any thread exists (fork keeps only the calling thread). */
static int daemonize(struct daemon *d)
{
	(void)d;
	if (daemon(0, 0) < 0) {
		log_err("cannot detach: %s", strerror(errno));
		return -errno;
	}
	if (!getenv("JOURNAL_STREAM"))
		log_setup(log_max_priority(), LOG_TO_SYSLOG);
	return 0;
}

static int write_pid_file(const char *path)
{
	char buf[32];
	int fd, n, r = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0644);
	if (fd < 0) {
		r = -errno;
		log_err("cannot write the PID file %s: %s", path, strerror(-r));
		return r;
	}
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	r = write_all(fd, buf, (size_t)n);
	close(fd);
	if (r < 0)
		log_err("cannot write the PID file %s: %s", path, strerror(-r));
	return r;
}

static bool any_credit(const struct daemon *d)
{
	for (size_t i = 0; i < d->n_slots; i++)
		if (d->slots[i].reader &&
		    source_config_credit(&d->slots[i].cfg) > 0)
			return true;
	return false;
}

int daemon_run(struct rngfeed_config *cfg, int argc, char **argv)
{
	struct daemon *d;
	int r, ret = EXIT_FAILURE;

	d = calloc(1, sizeof(*d));
	if (!d)
		return EXIT_FAILURE;
	*d = (struct daemon){
		.cfg = cfg, .argc = argc, .argv = argv, .sigfd = -1,
		.evfd = -1, .genfd = -1, .kernel = { .fd = -1 },
	};
	d->start = d->last_stats = d->last_metrics = now_s();
	ledger_init(&d->ledger);
	for (size_t i = 0; i < cfg->n_sources && i < LEDGER_MAX_SOURCES; i++)
		d->slots[d->n_slots++].cfg = cfg->sources[i];

	if ((cfg->mode == MODE_STDOUT || cfg->bench_fill > 0) &&
	    !(d->out = malloc(STDOUT_CHUNK)))
		goto out;
	if (open_kernel(d) < 0)
		goto out;
	/* Detach first: memory locks (the DRBG's secure memory) are not
	 * inherited by a forked child. */
	if (cfg->mode == MODE_DAEMON && !cfg->foreground && daemonize(d) < 0)
		goto out;
	r = drbg_new(&d->drbg, NULL);
	if (r < 0) {
		log_err("cannot set up the CTR_DRBG: %s", strerror(-r));
		goto out;
	}
	/* Devices and locked memory are set up: from here on only
	 * RNDADDENTROPY needs a privilege.  Before any thread exists, as
	 * capabilities are per thread. */
	{
		char why[300];

		r = privs_drop(cfg->user, cfg->mode == MODE_DAEMON, why,
			       sizeof(why));
		if (r < 0) {
			log_err("cannot drop privileges: %s", why);
			goto out;
		}
		/* No core dumps and no ptrace by other processes of the
		 * same user: memory holds DRBG state and raw input.
		 * (Switching user already cleared the flag; this also
		 * covers staying root, and --dumpable sets it back.) */
		if (prctl(PR_SET_DUMPABLE, cfg->dumpable ? 1L : 0L, 0L, 0L,
			  0L) < 0)
			log_warn("cannot set the dumpable flag: %s",
				 strerror(errno));
	}
	if (cfg->pid_file[0] && write_pid_file(cfg->pid_file) < 0)
		goto out;
	d->genfd = vmgenid_open();
	if (d->genfd < 0)
		log_info("VM generation changes will go unnoticed (uevent "
			 "socket: %s); SIGUSR2 discards the DRBG state by hand",
			 strerror(-d->genfd));
	d->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->evfd < 0 || setup_signals(d) < 0) {
		log_err("cannot set up signals: %s", strerror(errno));
		goto out;
	}
	if (start_sources(d) == 0) {
		log_err("no usable entropy source (see rngfeed --list; "
			"--wait-for-source keeps trying)");
		goto out;
	}
	/* The power-on self-test runs while the readers fetch their first
	 * blocks (at early boot a slow device takes tens of ms for one);
	 * nothing they read is used before it has passed. */
	r = drbg_selftest();
	if (r < 0) {
		log_err("CTR_DRBG power-on self-test failed (%s); refusing to "
			"start",
			strerror(-r));
		goto out;
	}
	if (cfg->mode == MODE_DAEMON && !any_credit(d))
		log_warn("no source in use has a credit above 0: the kernel "
			 "will get data but no entropy credit");
	service_init(&d->service, now_s());
	ret = EXIT_SUCCESS;
	loop(d);
	service_stopping(&d->service);
	if (d->exit_code)
		ret = d->exit_code;
	/* Final metrics while the sources still show their state. */
	write_metrics(d, now_s());
	stop_sources(d);
	if (cfg->mode != MODE_STDOUT || cfg->verbosity > 1)
		log_summary(d);
	/* For the benchmark scripts, whatever the verbosity. */
	if (cfg->bench_fill > 0)
		fprintf(stderr,
			"bench-fill: seconds=%.3f calls=%llu bytes=%llu "
			"credited_bits=%llu\n",
			now_s() - d->start, (unsigned long long)d->feeder.calls,
			(unsigned long long)d->feeder.fed_bytes,
			(unsigned long long)d->feeder.credited_bits);
out:
	stop_sources(d);
	drbg_free(d->drbg);
	if (d->have_kernel)
		kernel_linux_close(&d->kernel);
	if (d->sigfd >= 0)
		close(d->sigfd);
	if (d->evfd >= 0)
		close(d->evfd);
	if (d->genfd >= 0)
		close(d->genfd);
	if (cfg->pid_file[0])
		unlink(cfg->pid_file);
	if (d->out)
		explicit_bzero(d->out, STDOUT_CHUNK);
	free(d->out);
	explicit_bzero(d, sizeof(*d));
	free(d);
	return ret;
}
