// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The source set: slots and their readers.  The hand-over of the kernel's
 * own hw_random credit is in sourceset_hwrng.c.  See
 * include/rngfeed/sourceset.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "rngfeed/hwrandom.h"
#include "rngfeed/hwrng_gate.h"
#include "rngfeed/ledger.h"
#include "rngfeed/log.h"
#include "rngfeed/sourceset.h"
#include "sourceset_internal.h"

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
	snprintf(s->ledger_dir, sizeof(s->ledger_dir), "%s",
		 p->ledger_dir ? p->ledger_dir : "");
	s->p.sysfs_dir = s->sysfs_dir;
	snprintf(s->gate_lock, sizeof(s->gate_lock), "%s",
		 p->gate_lock ? p->gate_lock : "");
	s->p.gate_state = s->gate_state;
	s->p.ledger_dir = s->ledger_dir[0] ? s->ledger_dir : NULL;
	s->p.gate_lock = s->gate_lock;
	hwrng_gate_init(&s->gate);
	for (size_t i = 0; i < n; i++) {
		s->slots[s->n_slots].cfg = cfg->sources[i];
		s->slots[s->n_slots].cfg.ledger_dir = s->p.ledger_dir;
		s->slots[s->n_slots].held_back_credit = -1;
		s->slots[s->n_slots].host_provided =
			source_host_provided(&cfg->sources[i], NULL);
		s->slots[s->n_slots++].device_credit = -1;
	}
	*out = s;
	return 0;
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
	const char *other = sourceset_hw_twin(s, i);

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

/* Said of an unopenable hw_random device by the run and by --list alike. */
#define NO_NODE_HERE                                                        \
	"; the kernel has a hw_random device, but this /dev has no node for " \
	"it (a container? give it /dev/hwrng, e.g. --device /dev/hwrng)"

static void open_slot(struct source_set *s, struct slot *sl)
{
	const char *name = sl->cfg.driver->name;
	char why[SOURCE_WHY_LEN] = "";
	int r;

	r = sl->cfg.driver->probe(&sl->cfg, why, sizeof(why));
	if (r == 0 && source_config_warning(&sl->cfg, why, sizeof(why)) == 1)
		log_warn("%s: %s", name, why);
	sl->credit_follows_device = sl->cfg.credit < 0;
	sl->claimed = false;
	if (sl->cfg.credit > 0) {
		/* Above what the driver itself would give this device: a
		 * claim, which nothing but the full assessment backs. */
		struct source_config dflt = sl->cfg;

		dflt.credit = -1;
		sl->claimed = (unsigned int)sl->cfg.credit > source_config_credit(&dflt);
	}
	sourceset_trust_slot(s, sl, NULL);
	if (r == 0) {
		/* The device's default is looked up once, before the gate
		 * zeroes what the kernel says of it. */
		if (sl->cfg.credit < 0 && sl->device_credit < 0)
			sl->device_credit = (int)source_config_credit(&sl->cfg);
		sl->cfg.credit_from_device = sl->cfg.credit < 0;
		if (sl->cfg.credit < 0)
			sl->cfg.credit = sl->device_credit;
		/* A plugged device's open talks to it: its reader opens it,
		 * in its own thread. */
		if (!(sl->cfg.driver->flags & SOURCE_F_PLUGGED))
			r = source_open(&sl->opened, &sl->cfg, why,
					sizeof(why));
	}
	const char *elsewhere =
		r < 0 && sourceset_hw_random_elsewhere(s, &sl->cfg)
			? NO_NODE_HERE : "";

	if (r < 0 && !sourceset_waits_for(s, sl, r)) {
		log_msg(s->p.sources_named ? LOG_WARNING : LOG_INFO,
			"%s: unavailable: %s%s", name, why, elsewhere);
		return;
	}
	if (r < 0) {
		/* Its reader looks for it; sourceset_start() says on what
		 * terms it is used once there. */
		log_info("%s: waiting for it: %s%s", name, why, elsewhere);
		if (sl->cfg.credit < 0) {
			sl->cfg.credit_from_device = true;
			sl->cfg.credit = (int)source_config_credit(&sl->cfg);
			sl->device_credit = sl->cfg.credit;
		}
	}
	sl->wanted = true;
	sourceset_take_gate(s, sl);
}

size_t sourceset_open(struct source_set *s)
{
	size_t n = 0;

	sourceset_choose_best_device(s);
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
	sourceset_describe_kernel(s);
	sourceset_trust_kernel(s);
	return n;
}

size_t sourceset_start(struct source_set *s, int notify_fd)
{
	size_t started = 0, credited = 0;

	/* The full assessments' budget is shared by the credited sources. */
	for (size_t i = 0; i < s->n_slots; i++)
		if (s->slots[i].wanted && sourceset_credit(s, i) > 0)
			credited++;

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
			.assess_samples = s->p.assess_samples,
			/* An uncredited source needs none (-1). */
			.assess_budget = sourceset_credit(s, i) == 0 ? -1.0
					 : (s->p.assess_budget > 0.0 ? s->p.assess_budget
								     : ASSESSOR_DEFAULT_BUDGET) /
						   (double)credited,
			.claimed = sl->claimed,
			.recall = sl->memory,
		};
		bool absent = sl->opened == NULL; /* its reader opens it */
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
		log_info("%s: using it, credit %u/1024, health-test H %.2f%s",
			 sl->cfg.driver->name, sourceset_credit(s, i),
			 source_config_min_entropy(&sl->cfg),
			 absent ? ", once it opens" : "");
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
	to->full = x->full;
	to->credit_limit = x->credit_limit;
	to->in_force = x->in_force;
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
	struct reader *readers[LEDGER_MAX_SOURCES];

	/* All at once: one bound for all of them, not one each. */
	for (size_t i = 0; i < s->n_slots; i++) {
		readers[i] = s->slots[i].reader;
		if (readers[i]) {
			sourceset_stats(s, i, &s->slots[i].base);
			reader_memory(readers[i], &s->slots[i].memory);
		}
	}
	reader_stop_all(readers, s->n_slots);
	for (size_t i = 0; i < s->n_slots; i++) {
		struct slot *sl = &s->slots[i];

		if (readers[i]) {
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
	sourceset_release_gate(s);
}

/* Do @a and @b name the same source (driver and options: the device, and
 * what selects it; not the credit, the health tests' H or enable)? */
static bool same_source(const struct source_config *a, const struct source_config *b)
{
	return a->driver == b->driver && a->n_options == b->n_options &&
	       memcmp(a->options, b->options, sizeof(a->options)) == 0;
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
		/* What was learned of a source holds for the same one. */
		if (!same_source(&s->slots[i].cfg, &fresh->sources[i]))
			s->slots[i].memory = (struct reader_memory){ 0 };
		s->slots[i].cfg = fresh->sources[i];
		s->slots[i].cfg.ledger_dir = s->p.ledger_dir;
		s->slots[i].device_credit = -1;
		s->slots[i].host_provided =
			source_host_provided(&fresh->sources[i], NULL);
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

void sourceset_devices_changed(struct source_set *s)
{
	/* The hand-over's tick looks at once (sourceset_hwrng.c). */
	s->next_tick = 0;
	/* A plugged device (a USB stick's tty) may have come: its reader
	 * looks at once. */
	for (size_t i = 0; i < s->n_slots; i++)
		if (s->slots[i].reader &&
		    (s->slots[i].cfg.driver->flags & SOURCE_F_PLUGGED))
			reader_device_changed(s->slots[i].reader);
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

	if (s->slots[i].host_provided)
		return 0;
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
	if (est > reader_opened_credit(s->slots[i].reader))
		est = reader_opened_credit(s->slots[i].reader);
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
	/* A plugged stick is not opened: an open would raise its DTR,
	 * and its reader may hold it; its permissions say enough. */
	if (cfg->driver->flags & SOURCE_F_PLUGGED) {
		int e;

		if (access(dev, R_OK | W_OK) == 0)
			return 0;
		e = errno;
		snprintf(why, why_len, "cannot open %s: %s", dev, strerror(e));
		return -e;
	}
	fd = open(dev, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		source_say_open_error(why, why_len, dev, e);
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
	out->host_provided = s->slots[i].host_provided;
	out->min_entropy = source_config_min_entropy(cfg);
	r = cfg->driver->probe(cfg, out->detail, sizeof(out->detail));
	if (r == 0)
		r = can_open_device(cfg, out->detail, sizeof(out->detail));
	out->available = r == 0;
	if (r < 0 && sourceset_hw_random_elsewhere(s, cfg))
		snprintf(out->detail + strlen(out->detail),
			 sizeof(out->detail) - strlen(out->detail), "%s",
			 NO_NODE_HERE);
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
	if (!out->available && !sourceset_waits_for(s, &s->slots[i], r)) {
		snprintf(out->why_not, sizeof(out->why_not), "%s",
			 s->p.wait_for_source ? "unavailable, and cannot "
						"appear here"
					      : "unavailable");
		return;
	}
	out->use = true;
	out->waits = !out->available;
	if (out->credit > 0 &&
	    sourceset_handover_elsewhere(s, &s->slots[i], out->held,
					 sizeof(out->held)))
		out->credit = 0;
}
