// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The source set: slots, their readers, and the hand-over of the kernel's
 * own hw_random credit.  See include/rngfeed/sourceset.h.
 */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "rngfeed/hwrandom.h"
#include "rngfeed/hwrng_gate.h"
#include "rngfeed/hwrng_quality.h"
#include "rngfeed/ledger.h"
#include "rngfeed/log.h"
#include "rngfeed/sourceset.h"

struct slot {
	struct source_config cfg;
	struct source *opened;       /* opened, not yet handed to a reader */
	struct reader *reader;       /* NULL when not started */
	struct reader_stats base;    /* totals of earlier readers (SIGHUP) */
	int device_credit;           /* the device's default, looked up once
				      * before the gate zeroes rng_quality;
				      * -1 = not looked up */
	bool wanted;                 /* opened, or waiting (wait_for_source) */
	bool gated;                  /* reads the device the gate holds */
	bool credit_follows_device;  /* no credit configured: it is the
				      * device's, looked up again when the
				      * gate takes another device */
	int held_back_credit;        /* its credit while another instance
				      * owns the hand-over (it counts 0
				      * meanwhile); -1 = none held back */
	bool used;                   /* a reader was started at some point */
	char finished[256];          /* the input it read to its end: data
				      * read once is credited once, so a
				      * reload does not read it again */
};

struct source_set {
	struct sourceset_params p;
	size_t n_slots, next_take;
	struct hwrng_gate gate;
	char sysfs_dir[256], gate_state[256], gate_lock[256]; /* the
					      * params' strings, kept */
	double next_tick;            /* when sourceset_tick() looks again */
	char gate_seen[HWRANDOM_NAME_LEN]; /* rng_current at the last take */
	char gate_sysfs[256], gate_lock_here[300]; /* the gate's, for the
					      * slot it was taken for */
	char kernel_line[200];
	/* One per configured source (the driver table's size), not
	 * CONFIG_MAX_SOURCES: 1.9 KB each, for the daemon's whole life
	 * (issue 20). */
	struct slot slots[];
};

int sourceset_new(struct source_set **out, const struct rngfeed_config *cfg,
		  const struct sourceset_params *p)
{
	size_t n = cfg->n_sources;
	struct source_set *s;

	if (n > LEDGER_MAX_SOURCES)
		n = LEDGER_MAX_SOURCES;
	s = calloc(1, sizeof(*s) + n * sizeof(s->slots[0]));

	if (!s)
		return -ENOMEM;
	s->p = *p;
	/* The caller's strings may not outlive this call. */
	snprintf(s->sysfs_dir, sizeof(s->sysfs_dir), "%s",
		 p->sysfs_dir ? p->sysfs_dir : "");
	snprintf(s->gate_state, sizeof(s->gate_state), "%s",
		 p->gate_state ? p->gate_state : "");
	s->p.sysfs_dir = s->sysfs_dir;
	snprintf(s->gate_lock, sizeof(s->gate_lock), "%s",
		 p->gate_lock ? p->gate_lock : "");
	s->p.gate_state = s->gate_state;
	s->p.gate_lock = s->gate_lock;
	hwrng_gate_init(&s->gate);
	for (size_t i = 0; i < n; i++) {
		s->slots[s->n_slots].cfg = cfg->sources[i];
		s->slots[s->n_slots].held_back_credit = -1;
		s->slots[s->n_slots++].device_credit = -1;
	}
	*out = s;
	return 0;
}

/* Is @cfg's device the kernel's hw_random misc device (10:183)? */
static bool reads_hw_random(const struct source_config *cfg)
{
	const char *dev = source_config_device(cfg);
	struct stat st;

	return (cfg->driver->flags & SOURCE_F_DEVICE) && dev &&
	       stat(dev, &st) == 0 && S_ISCHR(st.st_mode) &&
	       major(st.st_rdev) == 10 && minor(st.st_rdev) == 183;
}

/*
 * The hwrng source on its default path before the kernel made it: with
 * rng_core a module, /dev/hwrng appears only when the first hw_random
 * driver loads, often after rngfeed started.  Only the hwrng source waits
 * for it by default (the virtio source is the same device's other door:
 * two readers would split it).
 */
static bool hw_random_later(const struct source_config *cfg)
{
	const char *dev = source_config_device(cfg);
	struct stat st;

	return strcmp(cfg->driver->name, "hwrng") == 0 && dev &&
	       cfg->driver->default_device &&
	       strcmp(dev, cfg->driver->default_device) == 0 &&
	       stat(dev, &st) < 0 && errno == ENOENT;
}

/*
 * The same through two doors: slot @i reads /dev/hwrng while its current
 * device is a kernel driver over a generator that a later source reads
 * directly (s390x's PRNO TRNG through "s390-trng"); the later source's
 * name, or NULL.
 */
static const char *later_twin_of_hw_random(const struct source_set *s,
					   size_t i)
{
	char cur[HWRANDOM_NAME_LEN];

	if (!reads_hw_random(&s->slots[i].cfg) ||
	    hwrandom_current(s->p.sysfs_dir, cur, sizeof(cur)) < 0)
		return NULL;
	for (size_t j = i + 1; j < s->n_slots; j++) {
		const struct source_config *b = &s->slots[j].cfg;
		const char *t = b->driver->hw_random_twin;
		char why[SOURCE_WHY_LEN];

		if (b->enabled && t && strncmp(cur, t, strlen(t)) == 0 &&
		    b->driver->probe(b, why, sizeof(why)) == 0)
			return b->driver->name;
	}
	return NULL;
}

/*
 * Two enabled sources reading one device (hwrng and virtio both on
 * /dev/hwrng) would split its output between two monitors and count it
 * twice over; keep the later, more specific driver of the table.  The
 * later source's name, or NULL.
 */
static const char *later_reader_of_device(const struct source_set *s,
					  size_t i, bool *twin)
{
	const struct source_config *a = &s->slots[i].cfg;
	struct stat sa, sb;
	const char *other = later_twin_of_hw_random(s, i);

	*twin = other != NULL;
	if (other)
		return other;
	if (!(a->driver->flags & SOURCE_F_DEVICE) ||
	    !source_config_device(a) || stat(source_config_device(a), &sa) < 0 ||
	    !S_ISCHR(sa.st_mode))
		return NULL;
	for (size_t j = i + 1; j < s->n_slots; j++) {
		const struct source_config *b = &s->slots[j].cfg;
		char why[SOURCE_WHY_LEN];

		if (!b->enabled || !(b->driver->flags & SOURCE_F_DEVICE) ||
		    !source_config_device(b) ||
		    stat(source_config_device(b), &sb) < 0 ||
		    sb.st_rdev != sa.st_rdev ||
		    b->driver->probe(b, why, sizeof(why)) < 0)
			continue;
		return b->driver->name;
	}
	return NULL;
}

static bool shares_device_with_later(const struct source_set *s, size_t i)
{
	bool twin;
	const char *other = later_reader_of_device(s, i, &twin);

	if (!other)
		return false;
	/* Worth a notice when feeding the kernel; in -t and --stdout runs
	 * (no gate) it is a detail that only clutters their stderr. */
	log_msg(s->p.gate_hwrng ? LOG_NOTICE : LOG_INFO,
		twin ? "%s: not used: %s is the kernel's driver for the "
		       "generator the %s source reads directly"
		     : "%s: not used: %s is read by the %s source already",
		s->slots[i].cfg.driver->name,
		source_config_device(&s->slots[i].cfg), other);
	return true;
}

static void describe_kernel(struct source_set *s)
{
	hwrng_gate_describe_kernel(s->p.sysfs_dir, s->kernel_line,
				   sizeof(s->kernel_line));
}

/*
 * The gate was taken (or taken over) while slot @sl reads its device:
 * the credit follows what the gate found, not the 0 that rng_quality
 * reads now (an earlier run's record adopted, or another instance's).
 */
static void credit_from_gate(struct source_set *s, struct slot *sl)
{
	size_t i = (size_t)(sl - s->slots);
	const char *twin = later_twin_of_hw_random(s, i);

	if (sl->held_back_credit >= 0) {
		sl->cfg.credit = sl->held_back_credit;
		sl->held_back_credit = -1;
	}
	if (sl->credit_follows_device && s->gate.device[0]) {
		sl->cfg.credit = -1;
		sl->cfg.hw_quality = (int)s->gate.original;
		sl->device_credit = (int)source_config_credit(&sl->cfg);
		sl->cfg.credit = sl->device_credit;
	}
	/* One physical source, one credit: a device that another source
	 * reads directly (a TPM's tpm-rng and the tpm source) counts 0
	 * here. */
	if (twin && sl->cfg.credit > 0) {
		log_notice("%s: %s is read directly by the %s source: "
			   "credited 0 here",
			   sl->cfg.driver->name, s->gate.device, twin);
		sl->cfg.credit = 0;
	}
}

/* The hw_random directory the gate uses for @sl: the source's sysfs key
 * (a test's fixture) or the set's; its lock beside a fixture, else the
 * machine's. */
static void gate_paths(struct source_set *s, const struct slot *sl)
{
	const char *dir = source_config_get(&sl->cfg, "sysfs");

	if (!dir || strcmp(dir, s->p.sysfs_dir) == 0) {
		snprintf(s->gate_sysfs, sizeof(s->gate_sysfs), "%s",
			 s->p.sysfs_dir);
		snprintf(s->gate_lock_here, sizeof(s->gate_lock_here), "%s",
			 s->p.gate_lock);
		return;
	}
	snprintf(s->gate_sysfs, sizeof(s->gate_sysfs), "%s", dir);
	snprintf(s->gate_lock_here, sizeof(s->gate_lock_here),
		 "%s/rngfeed-hwrng.lock", dir);
}

/*
 * The kernel credits the current hw_random device itself, untested; while
 * a slot reads that device, the kernel's credit is handed over to the
 * health tests (rng_quality 0) and given back at stop.  One instance per
 * machine owns the hand-over: while another does, this one credits the
 * device 0 (the kernel may credit it untested again the moment the other
 * hands it back) and takes over when the other stops (sourceset_tick()).
 */
static void take_gate(struct source_set *s, struct slot *sl)
{
	const char *name = sl->cfg.driver->name;
	char why[HWRNG_GATE_MSG_LEN] = "";
	int r;

	if (!s->p.gate_hwrng ||
	    !(reads_hw_random(&sl->cfg) || hw_random_later(&sl->cfg)))
		return;
	sl->gated = true;
	if (hwrng_gate_waiting(&s->gate)) {
		sl->held_back_credit = sl->cfg.credit;
		sl->cfg.credit = 0;
		return;
	}
	if (hwrng_gate_held(&s->gate))
		return;
	gate_paths(s, sl);
	if (hwrandom_current(s->gate_sysfs, s->gate_seen,
			     sizeof(s->gate_seen)) < 0)
		s->gate_seen[0] = '\0';
	r = hwrng_gate_take(&s->gate, s->gate_sysfs, s->p.gate_state,
			    s->gate_lock_here, why, sizeof(why));
	if (r < 0)
		log_warn("%s: the kernel keeps crediting %s itself: %s", name,
			 source_config_device(&sl->cfg), why);
	else if (r == HWRNG_GATE_FOUND_ZERO)
		log_warn("%s: %s", name, why);
	else if (r == HWRNG_GATE_WAITING) {
		log_notice("%s: %s", name, why);
		sl->held_back_credit = sl->cfg.credit;
		sl->cfg.credit = 0;
	} else if (r == HWRNG_GATE_TAKEN) {
		credit_from_gate(s, sl);
		log_info("%s: %s", name, why);
	} else if (why[0]) {
		log_info("%s: %s", name, why);
	}
}

/* A device became current while the gate held none: take it. */
static void tick_idle(struct source_set *s)
{
	char cur[HWRANDOM_NAME_LEN];

	if (hwrandom_current(s->gate_sysfs, cur, sizeof(cur)) < 0)
		cur[0] = '\0';
	if (strcmp(cur, s->gate_seen) == 0)
		return;
	log_notice("hw_random: %s%s", cur[0] ? cur : "no device",
		   cur[0] ? " is current now" : " is current any more");
	snprintf(s->gate_seen, sizeof(s->gate_seen), "%s", cur);
	for (size_t i = 0; cur[0] && i < s->n_slots; i++)
		if (s->slots[i].gated && s->slots[i].wanted)
			take_gate(s, &s->slots[i]);
}

/*
 * The housekeeping tick: the hand-over follows the machine within a
 * second (hwrng_gate_tick(): a waiter takes over from an owner that
 * stopped; a held gate follows rng_current; an idle one takes a device
 * that registers).
 *
 * When: a device registers or leaves with a driver's bind or unbind, and
 * the kernel says so on its uevent socket, which the daemon has open
 * anyway (vmgenid): any uevent makes the next tick look at once
 * (sourceset_devices_changed()), and otherwise the tick looks whenever
 * the loop wakes anyway, at most twice a second, so an idle daemon does
 * not wake more for it.  Without uevents (@told false), and while
 * another instance owns the hand-over (its stop sends none), it looks
 * every second by itself.  Not a udev rule: the unit starts before udev
 * has run its rules (an initramfs may have no udev at all), and a rule
 * would have to reach a sandboxed daemon.  Seconds until it wants to
 * look by itself.
 */
double sourceset_tick(struct source_set *s, double now, bool told)
{
	char msg[HWRNG_GATE_MSG_LEN] = "";
	bool any = false;
	double again;
	int r;

	for (size_t i = 0; i < s->n_slots; i++)
		any |= s->slots[i].gated;
	if (!any)
		return 3600;
	again = told && !hwrng_gate_waiting(&s->gate) ? 3600 : 1.0;
	if (now < s->next_tick)
		return fmin(again, s->next_tick - now);
	s->next_tick = now + 0.5;
	if (!hwrng_gate_held(&s->gate) && !hwrng_gate_waiting(&s->gate)) {
		tick_idle(s);
		describe_kernel(s);
		return again;
	}
	r = hwrng_gate_tick(&s->gate, msg, sizeof(msg));
	if (r == HWRNG_GATE_NONE)
		return again;
	snprintf(s->gate_seen, sizeof(s->gate_seen), "%s", s->gate.device);
	for (size_t i = 0; i < s->n_slots; i++) {
		struct slot *sl = &s->slots[i];

		if (!sl->gated)
			continue;
		if (r == HWRNG_GATE_TAKEN || r == HWRNG_GATE_CHANGED ||
		    r == HWRNG_GATE_RETAKEN) {
			credit_from_gate(s, sl);
		} else if (sl->held_back_credit >= 0) {
			/* Nothing to take over: the device is read as if
			 * no gate had been asked for. */
			sl->cfg.credit = sl->held_back_credit;
			sl->held_back_credit = -1;
		}
	}
	if (r == HWRNG_GATE_TAKEN)
		log_notice("hwrng: the other rngfeed stopped; %s", msg);
	else if (r == HWRNG_GATE_CHANGED || r == HWRNG_GATE_RETAKEN)
		log_notice("%s", msg);
	else if (r == HWRNG_GATE_FOUND_ZERO)
		log_warn("hwrng: the other rngfeed stopped; %s", msg);
	else
		log_warn("hw_random: following the current device: %s", msg);
	describe_kernel(s);
	return told && !hwrng_gate_waiting(&s->gate) ? 3600 : 1.0;
}

void sourceset_devices_changed(struct source_set *s)
{
	s->next_tick = 0;
}

static void release_gate(struct source_set *s)
{
	bool failed = false, any = false;
	char msg[300] = "";

	for (size_t i = 0; i < s->n_slots; i++) {
		struct slot *sl = &s->slots[i];

		if (!sl->gated)
			continue;
		any = true;
		failed |= sl->base.state == READER_DISABLED;
		sl->gated = false;
		sl->held_back_credit = -1;
	}
	if (!any || (!hwrng_gate_held(&s->gate) &&
		     !hwrng_gate_waiting(&s->gate)))
		return;
	hwrng_gate_release(&s->gate, failed, msg, sizeof(msg));
	if (msg[0])
		log_msg(failed ? LOG_WARNING : LOG_INFO, "%s", msg);
}

/*
 * Is an unusable source kept, its reader looking for it?  With
 * --wait-for-source, when it can appear: not a CPU instruction this CPU
 * lacks (-EINVAL, -ENOTSUP), not a source with nothing configured to read.
 * Without it, the kernel's hw_random device alone, when only its device
 * is missing: drivers load late at boot (virtio_rng, TPMs), and the gate
 * must be there to hand the kernel's credit over when one registers.
 */
static bool waits_for(const struct source_set *s, const struct slot *sl,
		      int err)
{
	const struct source_config *cfg = &sl->cfg;

	if (err == -EINVAL || err == -ENOTSUP || err == -EOPNOTSUPP ||
	    ((cfg->driver->flags & SOURCE_F_NEEDS_DEVICE) &&
	     !source_config_device(cfg)))
		return false;
	if (s->p.wait_for_source)
		return true;
	return s->p.gate_hwrng && (err == -ENODEV || err == -ENOENT) &&
	       strcmp(cfg->driver->name, "hwrng") == 0 &&
	       (reads_hw_random(cfg) || hw_random_later(cfg));
}

static void open_slot(struct source_set *s, struct slot *sl)
{
	const char *name = sl->cfg.driver->name;
	char why[SOURCE_WHY_LEN] = "";
	int r;

	r = sl->cfg.driver->probe(&sl->cfg, why, sizeof(why));
	if (r == 0 && source_config_warning(&sl->cfg, why, sizeof(why)) == 1)
		log_warn("%s: %s", name, why);
	sl->credit_follows_device = sl->cfg.credit < 0;
	if (r == 0) {
		/* The device's default is looked up once, before the gate
		 * zeroes what the kernel says of it. */
		if (sl->cfg.credit < 0 && sl->device_credit < 0)
			sl->device_credit = (int)source_config_credit(&sl->cfg);
		if (sl->cfg.credit < 0)
			sl->cfg.credit = sl->device_credit;
		r = source_open(&sl->opened, &sl->cfg, why, sizeof(why));
	}
	if (r < 0) {
		log_msg(s->p.sources_named ? LOG_WARNING : LOG_INFO,
			"%s: unavailable: %s", name, why);
		if (!waits_for(s, sl, r))
			return;
		if (sl->cfg.credit < 0) {
			sl->cfg.credit = (int)source_config_credit(&sl->cfg);
			sl->device_credit = sl->cfg.credit;
		}
	}
	sl->wanted = true;
	take_gate(s, sl);
}

/*
 * The best device current before the slots decide who reads /dev/hwrng
 * (hwrandom_best(): a virtio-rng over a TPM's tpm-rng), unless the
 * administrator chose one (rng_selected).  Only when rngfeed feeds the
 * kernel: --list, -t and --stdout change nothing.
 */
static void choose_best_device(struct source_set *s)
{
	char best[HWRANDOM_NAME_LEN], cur[HWRANDOM_NAME_LEN];
	const struct slot *reader = NULL;

	for (size_t i = 0; i < s->n_slots && !reader; i++)
		if (s->slots[i].cfg.enabled &&
		    reads_hw_random(&s->slots[i].cfg))
			reader = &s->slots[i];
	if (!reader || !s->p.gate_hwrng)
		return;
	gate_paths(s, reader);
	if (hwrng_selected(s->gate_sysfs) ||
	    hwrandom_current(s->gate_sysfs, cur, sizeof(cur)) < 0 ||
	    hwrandom_best(s->gate_sysfs, best, sizeof(best)) != 1)
		return;
	if (hwrandom_select(s->gate_sysfs, best) == 0)
		log_notice("hw_random: %s made current instead of %s: a "
			   "TPM's generator is slow and the tpm source reads "
			   "it directly",
			   best, cur);
}

size_t sourceset_open(struct source_set *s)
{
	size_t n = 0;

	choose_best_device(s);
	for (size_t i = 0; i < s->n_slots; i++) {
		struct slot *sl = &s->slots[i];

		if (!sl->cfg.enabled || shares_device_with_later(s, i))
			continue;
		if (sl->finished[0] &&
		    strcmp(sl->finished, source_config_device(&sl->cfg) ?: "") == 0) {
			log_notice("%s: %s was read to its end already; not "
				   "read again",
				   sl->cfg.driver->name, sl->finished);
			continue;
		}
		open_slot(s, sl);
		n += sl->wanted;
	}
	describe_kernel(s);
	return n;
}

size_t sourceset_start(struct source_set *s, int notify_fd)
{
	size_t started = 0;

	for (size_t i = 0; i < s->n_slots; i++) {
		struct slot *sl = &s->slots[i];
		struct reader_params p = {
			.idx = (unsigned int)i,
			.source = sl->cfg,
			.opened = sl->opened,
			.retry_initial_s = s->p.retry_delay,
			.retry_max_s = s->p.retry_max,
			.notify_fd = notify_fd,
			.bulk = s->p.bulk,
		};
		int r;

		if (!sl->wanted || sl->reader)
			continue;
		monitor_params_default(&p.monitor);
		p.monitor.min_entropy = source_config_min_entropy(&sl->cfg);
		p.monitor.sample_bits = sl->cfg.driver->sample_bits;
		p.monitor.max_consecutive_failures = s->p.max_failures;
		r = reader_start(&sl->reader, &p);
		if (r < 0) {
			log_err("%s: cannot start its reader: %s",
				sl->cfg.driver->name, strerror(-r));
			continue;
		}
		sl->opened = NULL; /* the reader's now */
		sl->used = true;
		log_info("%s: using it, credit %u/1024, health-test H %.2f",
			 sl->cfg.driver->name, sourceset_credit(s, i),
			 source_config_min_entropy(&sl->cfg));
		started++;
	}
	return started;
}

static void add_stats(struct reader_stats *to, const struct reader_stats *x)
{
	to->state = x->state;
	to->raw_bytes += x->raw_bytes;
	to->blocks_passed += x->blocks_passed;
	to->blocks_failed += x->blocks_failed;
	for (size_t k = 0; k < MONITOR_N_TESTS; k++)
		to->test_failures[k] += x->test_failures[k];
	to->errors += x->errors;
	to->disables += x->disables;
	memcpy(to->reason, x->reason, sizeof(to->reason));
	memcpy(to->description, x->description, sizeof(to->description));
	to->estimate = x->estimate; /* the latest, not a sum */
}

void sourceset_stats(const struct source_set *s, size_t i,
		     struct reader_stats *out)
{
	const struct slot *sl = &s->slots[i];
	struct reader_stats cur = { 0 };

	*out = sl->base;
	if (!sl->reader)
		return;
	reader_get_stats(sl->reader, &cur);
	add_stats(out, &cur);
}

void sourceset_stop(struct source_set *s)
{
	for (size_t i = 0; i < s->n_slots; i++) {
		struct slot *sl = &s->slots[i];

		if (sl->reader) {
			sourceset_stats(s, i, &sl->base);
			reader_stop(sl->reader);
			sl->reader = NULL;
			if (sl->base.state == READER_FINISHED)
				snprintf(sl->finished, sizeof(sl->finished),
					 "%s",
					 source_config_device(&sl->cfg) ?: "");
		}
		source_close(sl->opened);
		sl->opened = NULL;
		sl->wanted = false;
	}
	release_gate(s);
}

size_t sourceset_reload(struct source_set *s,
			const struct rngfeed_config *fresh, int notify_fd)
{
	sourceset_stop(s);
	s->p.retry_delay = fresh->retry_delay;
	s->p.retry_max = fresh->retry_max;
	s->p.max_failures = (unsigned int)fresh->max_failures;
	/* The gate was handed back by the stop: a device's default is
	 * looked up again, as the kernel sees the device now. */
	for (size_t i = 0; i < s->n_slots && i < fresh->n_sources; i++) {
		s->slots[i].cfg = fresh->sources[i];
		s->slots[i].device_credit = -1;
	}
	sourceset_open(s);
	return sourceset_start(s, notify_fd);
}

void sourceset_free(struct source_set *s)
{
	if (!s)
		return;
	sourceset_stop(s);
	free(s);
}

bool sourceset_take(struct source_set *s, uint8_t block[MONITOR_BLOCK_BYTES],
		    unsigned int *idx, unsigned int *credit)
{
	uint8_t seed[DRBG_SEEDLEN];
	bool derived;
	bool got = sourceset_take_derived(s, block, idx, credit, seed,
					  &derived);

	explicit_bzero(seed, sizeof(seed));
	return got;
}

bool sourceset_take_derived(struct source_set *s,
			    uint8_t block[MONITOR_BLOCK_BYTES],
			    unsigned int *idx, unsigned int *credit,
			    uint8_t seed[DRBG_SEEDLEN], bool *derived)
{
	*derived = false;
	for (size_t k = 0; k < s->n_slots; k++) {
		size_t i = (s->next_take + k) % s->n_slots;

		if (s->slots[i].reader &&
		    reader_take_derived(s->slots[i].reader, block, seed,
					derived)) {
			*idx = (unsigned int)i;
			*credit = sourceset_effective_credit(s, i);
			s->next_take = (i + 1) % s->n_slots;
			return true;
		}
	}
	return false;
}

void sourceset_request(struct source_set *s, bool credited_only)
{
	for (size_t i = 0; i < s->n_slots; i++)
		if (s->slots[i].reader &&
		    (!credited_only || sourceset_credit(s, i) > 0))
			reader_request_block(s->slots[i].reader);
}

void sourceset_discard(struct source_set *s)
{
	for (size_t i = 0; i < s->n_slots; i++)
		if (s->slots[i].reader)
			reader_discard(s->slots[i].reader);
}

bool sourceset_credit_coming(const struct source_set *s)
{
	for (size_t i = 0; i < s->n_slots; i++) {
		struct reader_stats st;

		if (!s->slots[i].reader || sourceset_credit(s, i) == 0)
			continue;
		sourceset_stats(s, i, &st);
		if (st.state == READER_RUNNING || st.state == READER_STARTUP ||
		    st.state == READER_OPENING)
			return true;
	}
	return false;
}

bool sourceset_any_credit(const struct source_set *s)
{
	for (size_t i = 0; i < s->n_slots; i++)
		if (s->slots[i].reader && sourceset_credit(s, i) > 0)
			return true;
	return false;
}

size_t sourceset_count(const struct source_set *s)
{
	return s->n_slots;
}

const struct source_config *sourceset_config(const struct source_set *s,
					     size_t i)
{
	return &s->slots[i].cfg;
}

unsigned int sourceset_credit(const struct source_set *s, size_t i)
{
	const struct source_config *cfg = &s->slots[i].cfg;

	/* Fixed when the slot was opened; a device default is not looked up
	 * per block (nor after the gate zeroed rng_quality). */
	return cfg->credit >= 0 ? (unsigned int)cfg->credit
				: source_config_credit(cfg);
}

unsigned int sourceset_effective_credit(const struct source_set *s, size_t i)
{
	unsigned int ceiling = sourceset_credit(s, i), est;

	/* The policy's ceiling, lowered to what the source's on-line
	 * estimate allows now: each block is credited at most both. */
	if (!s->slots[i].reader)
		return ceiling;
	est = reader_estimate_credit(s->slots[i].reader);
	return est < ceiling ? est : ceiling;
}

bool sourceset_used(const struct source_set *s, size_t i)
{
	return s->slots[i].used;
}

bool sourceset_running(const struct source_set *s, size_t i)
{
	return s->slots[i].reader != NULL;
}

const char *sourceset_kernel_credit(const struct source_set *s)
{
	return s->kernel_line;
}

/* Can this user open @cfg's device?  The open the driver would do, for an
 * instant: a device that probes fine can still be root's (--list run as
 * the user -D names). */
static int can_open_device(const struct source_config *cfg, char *why,
			   size_t why_len)
{
	const char *dev = source_config_device(cfg);
	int fd;

	if (!(cfg->driver->flags & SOURCE_F_DEVICE) || !dev || dev[0] != '/')
		return 0;
	fd = open(dev, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		snprintf(why, why_len, "cannot open %s: %s", dev, strerror(e));
		return -e;
	}
	close(fd);
	return 0;
}

void sourceset_plan(const struct source_set *s, size_t i,
		    struct sourceset_plan *out)
{
	const struct source_config *cfg = &s->slots[i].cfg;
	const char *other;
	bool twin;
	int r;

	memset(out, 0, sizeof(*out));
	out->credit = sourceset_credit(s, i);
	out->min_entropy = source_config_min_entropy(cfg);
	r = cfg->driver->probe(cfg, out->detail, sizeof(out->detail));
	if (r == 0)
		r = can_open_device(cfg, out->detail, sizeof(out->detail));
	out->available = r == 0;
	/* In sourceset_open()'s order: enabled, shared device, usable. */
	if (!cfg->enabled) {
		snprintf(out->why_not, sizeof(out->why_not), "%s",
			 s->p.sources_named
				 ? "not named with -n"
				 : "turned off (-x, or enable = no in the "
				   "config file)");
		return;
	}
	other = later_reader_of_device(s, i, &twin);
	if (other) {
		snprintf(out->why_not, sizeof(out->why_not),
			 twin ? "%s is the kernel's driver for the generator "
				"the %s source reads directly"
			      : "%s is read by the %s source already",
			 source_config_device(cfg), other);
		return;
	}
	if (!out->available && !waits_for(s, &s->slots[i], r)) {
		snprintf(out->why_not, sizeof(out->why_not), "%s",
			 s->p.wait_for_source ? "unavailable, and cannot "
						"appear here"
					      : "unavailable");
		return;
	}
	out->use = true;
	out->waits = !out->available;
}
