// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The source set's part in the hand-over of the kernel's own hw_random
 * credit: which slot reads the hw_random device, taking and giving back
 * the gate (hwrng_gate.h), following the machine after start-up, and the
 * credit of a slot as the device it reads changes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "rngfeed/hwrandom.h"
#include "rngfeed/hwrng_gate.h"
#include "rngfeed/hwrng_lock.h"
#include "rngfeed/hwrng_quality.h"
#include "rngfeed/log.h"
#include "rngfeed/sourceset.h"
#include "sourceset_internal.h"

/*
 * The hwrng source on its default path before the kernel made it: with
 * rng_core a module, /dev/hwrng appears only when the first hw_random
 * driver loads, often after rngfeed started.  Only the hwrng source waits
 * for it by default (the virtio source is the same device's other door:
 * two readers would split it).
 */
static bool default_node_missing(const struct source_config *cfg)
{
	const char *dev = source_config_device(cfg);
	struct stat st;

	return strcmp(cfg->driver->name, "hwrng") == 0 && dev &&
	       cfg->driver->default_device &&
	       strcmp(dev, cfg->driver->default_device) == 0 &&
	       stat(dev, &st) < 0 && errno == ENOENT;
}

/*
 * The node is missing, yet the kernel's hw_random class is there: rng_core
 * made /dev/hwrng in the kernel's devtmpfs as it loaded, so this /dev is
 * another one (a container's), where the node will not appear.
 */
bool sourceset_hw_random_elsewhere(const struct source_set *s,
				   const struct source_config *cfg)
{
	struct stat st;

	return default_node_missing(cfg) && s->p.sysfs_dir &&
	       s->p.sysfs_dir[0] && stat(s->p.sysfs_dir, &st) == 0;
}

static bool hw_random_later(const struct source_set *s,
			    const struct source_config *cfg)
{
	return default_node_missing(cfg) &&
	       !sourceset_hw_random_elsewhere(s, cfg);
}

/*
 * The same through two doors: slot @i reads /dev/hwrng while its current
 * device is a kernel driver over a generator that a later source reads
 * directly (s390x's PRNO TRNG through "s390-trng"); the later source's
 * name, or NULL.
 */
const char *sourceset_hw_twin(const struct source_set *s,
					   size_t i)
{
	char cur[HWRANDOM_NAME_LEN];

	if (!sourceset_reads_hw_random(&s->slots[i].cfg) ||
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

void sourceset_describe_kernel(struct source_set *s)
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
	const char *twin = sourceset_hw_twin(s, i);

	if (sl->held_back_credit >= 0) {
		sl->cfg.credit = sl->held_back_credit;
		sl->held_back_credit = -1;
	}
	if (s->gate.device[0])
		sourceset_trust_slot(s, sl, s->gate.device);
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
static void paths_of(const struct source_set *s, const struct slot *sl,
		     char sysfs[GATE_PATH_LEN], char lock[GATE_PATH_LEN])
{
	const char *dir = source_config_get(&sl->cfg, "sysfs");

	if (!dir || strcmp(dir, s->p.sysfs_dir) == 0) {
		snprintf(sysfs, GATE_PATH_LEN, "%s", s->p.sysfs_dir);
		snprintf(lock, GATE_PATH_LEN, "%s", s->p.gate_lock);
		return;
	}
	snprintf(sysfs, GATE_PATH_LEN, "%s", dir);
	snprintf(lock, GATE_PATH_LEN, "%s/rngfeed-hwrng.lock", dir);
}

static void gate_paths(struct source_set *s, const struct slot *sl)
{
	paths_of(s, sl, s->gate_sysfs, s->gate_lock_here);
}

/*
 * The kernel credits the current hw_random device itself, untested; while
 * a slot reads that device, the kernel's credit is handed over to the
 * health tests (rng_quality 0) and given back at stop.  One instance per
 * machine owns the hand-over: while another does, this one credits the
 * device 0 (the kernel may credit it untested again the moment the other
 * hands it back) and takes over when the other stops (sourceset_tick()).
 */
void sourceset_take_gate(struct source_set *s, struct slot *sl)
{
	const char *name = sl->cfg.driver->name;
	/* In a confidential guest a host-backed device is held at 0 and
	 * not handed back (hwrng_gate.h). */
	const struct hwrng_gate_trust trust = {
		.confidential = sl->cfg.confidential,
		.tpm_own = sl->cfg.tpm_guest_owned,
		.all_own = sl->cfg.guest_owned,
	};
	char why[HWRNG_GATE_MSG_LEN] = "";
	int r;

	if (!s->p.gate_hwrng ||
	    !(sourceset_reads_hw_random(&sl->cfg) || hw_random_later(s, &sl->cfg)))
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
	r = hwrng_gate_take_with(&s->gate, s->gate_sysfs, s->p.gate_state,
				 s->gate_lock_here, &trust, why, sizeof(why));
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
		log_msg(trust.confidential ? LOG_NOTICE : LOG_INFO, "%s: %s",
			name, why);
	} else if (why[0]) {
		log_info("%s: %s", name, why);
	}
}

bool sourceset_handover_elsewhere(const struct source_set *s,
				  const struct slot *sl, char *why,
				  size_t why_len)
{
	char sysfs[GATE_PATH_LEN], lock[GATE_PATH_LEN];
	char cur[HWRANDOM_NAME_LEN];

	if (!s->p.gate_hwrng || !s->p.gate_lock ||
	    !sourceset_reads_hw_random(&sl->cfg))
		return false;
	paths_of(s, sl, sysfs, lock);
	if (hwrng_lock_owned_at(lock) <= 0)
		return false;
	if (hwrandom_current(sysfs, cur, sizeof(cur)) < 0)
		snprintf(cur, sizeof(cur), "hw_random");
	snprintf(why, why_len,
		 "credit 0 here: another rngfeed owns the hand-over of %s "
		 "(lock %s); a run takes it over when that one stops",
		 cur, lock);
	return true;
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
			sourceset_take_gate(s, &s->slots[i]);
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
		sourceset_describe_kernel(s);
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
	sourceset_describe_kernel(s);
	return told && !hwrng_gate_waiting(&s->gate) ? 3600 : 1.0;
}

void sourceset_release_gate(struct source_set *s)
{
	bool failed = false, any = false;
	char msg[HWRNG_GATE_MSG_LEN + 200] = "";
	int kept;

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
	kept = hwrng_gate_release(&s->gate, failed, msg, sizeof(msg));
	/* Kept at 0 (failed, or a confidential guest's host-backed
	 * device): the user must hear how to undo it. */
	if (msg[0])
		log_msg(failed ? LOG_WARNING : kept ? LOG_NOTICE : LOG_INFO,
			"%s", msg);
}

/*
 * Is an unusable source kept, its reader looking for it?  With
 * --wait-for-source, when it can appear: not a CPU instruction this CPU
 * lacks (-EINVAL, -ENOTSUP), not a source with nothing configured to read.
 * Without it, the kernel's hw_random device alone, when only its device
 * is missing: drivers load late at boot (virtio_rng, TPMs), and the gate
 * must be there to hand the kernel's credit over when one registers.
 */
bool sourceset_waits_for(const struct source_set *s, const struct slot *sl,
		      int err)
{
	const struct source_config *cfg = &sl->cfg;

	if (err == -EINVAL || err == -ENOTSUP || err == -EOPNOTSUPP ||
	    ((cfg->driver->flags & SOURCE_F_NEEDS_DEVICE) &&
	     !source_config_device(cfg)))
		return false;
	if (s->p.wait_for_source)
		return true;
	/* A plugged device is followed: found when it is plugged in. */
	if ((cfg->driver->flags & SOURCE_F_PLUGGED) &&
	    source_open_error_is_absent(err))
		return true;
	return s->p.gate_hwrng && (err == -ENODEV || err == -ENOENT) &&
	       strcmp(cfg->driver->name, "hwrng") == 0 &&
	       (sourceset_reads_hw_random(cfg) || hw_random_later(s, cfg));
}

/*
 * The best device current before the slots decide who reads /dev/hwrng
 * (hwrandom_best(): a virtio-rng over a TPM's tpm-rng), unless the
 * administrator chose one (rng_selected).  Only when rngfeed feeds the
 * kernel: --list, -t and --stdout change nothing.
 */
void sourceset_choose_best_device(struct source_set *s)
{
	char best[HWRANDOM_NAME_LEN], cur[HWRANDOM_NAME_LEN];
	const struct slot *reader = NULL;

	for (size_t i = 0; i < s->n_slots && !reader; i++)
		if (s->slots[i].cfg.enabled &&
		    sourceset_reads_hw_random(&s->slots[i].cfg))
			reader = &s->slots[i];
	if (!reader || !s->p.gate_hwrng)
		return;
	gate_paths(s, reader);
	if (hwrng_selected(s->gate_sysfs) ||
	    hwrandom_current(s->gate_sysfs, cur, sizeof(cur)) < 0 ||
	    hwrandom_best(s->gate_sysfs, best, sizeof(best)) != 1)
		return;
	/* In a confidential guest, never the host's device in place of a
	 * TPM that is the guest's own. */
	if (reader->cfg.confidential &&
	    hwrandom_host_backed(best, reader->cfg.tpm_guest_owned,
				 reader->cfg.guest_owned) &&
	    !hwrandom_host_backed(cur, reader->cfg.tpm_guest_owned,
				  reader->cfg.guest_owned))
		return;
	if (hwrandom_select(s->gate_sysfs, best) == 0)
		log_notice("hw_random: %s made current instead of %s: a "
			   "TPM's generator is slow and the tpm source reads "
			   "it directly",
			   best, cur);
}
