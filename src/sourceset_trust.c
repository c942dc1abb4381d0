// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The source set's part in trust (confidential.h): in a confidential
 * guest what the host provides is credited 0, and the set says so, per
 * source, at start and when the hw_random device a slot reads changes.
 * The credit rule itself is the sources' (source_host_provided()); the
 * hand-over's part is the gate's (hwrng_gate.h: a host-backed device is
 * held at 0 and not handed back).
 */
#include <stdio.h>
#include <string.h>

#include "rngfeed/confidential.h"
#include "rngfeed/hwrandom.h"
#include "rngfeed/log.h"
#include "sourceset_internal.h"

void sourceset_trust_slot(struct source_set *s, struct slot *sl,
			  const char *hw_device)
{
	const struct source_config *cfg = &sl->cfg;
	bool host = source_host_provided(cfg, hw_device);
	char cur[HWRANDOM_NAME_LEN];
	const char *what = hw_device ? hw_device : cfg->driver->host_provided;
	const char *dir = source_config_get(cfg, "sysfs");

	/* Through /dev/hwrng: the device is the news, not the driver. */
	if (!hw_device && sourceset_reads_hw_random(cfg) &&
	    hwrandom_current(dir ? dir : s->p.sysfs_dir, cur, sizeof(cur)) > 0)
		what = cur;
	if (!host && sl->host_provided && hw_device)
		log_notice("%s: %s is the guest's own: credited again",
			   cfg->driver->name, hw_device);
	/* Said at every open (NULL), and when a device makes it so. */
	if (host && (!hw_device || !sl->host_provided)) {
		char user[120] = "";

		if (cfg->credit > 0 && !cfg->credit_from_device)
			snprintf(user, sizeof(user),
				 "; its credit=%d is not used%s", cfg->credit,
				 cfg->driver->guest_owned
					 ? " (guest-owned=yes if it is the "
					   "guest's own)"
					 : "");
		log_notice("%s: credit 0: " CONFIDENTIAL_HOST_REASON " (%s)%s",
			   cfg->driver->name, what, user);
	}
	sl->host_provided = host;
}

/*
 * In a confidential guest where no source reads the current hw_random
 * device (-n rdrand, -x hwrng -x virtio), the kernel keeps crediting it
 * itself, untested, even when the host backs it.  The hand-over is
 * rngfeed's only for a device it reads and tests (one owner, and a
 * record of what it found); so it is left alone, and said.
 */
void sourceset_trust_kernel(const struct source_set *s)
{
	char cur[HWRANDOM_NAME_LEN];
	bool confidential = false, tpm_own = false, all_own = false;
	int q;

	if (!s->p.gate_hwrng)
		return;
	for (size_t i = 0; i < s->n_slots; i++) {
		confidential |= s->slots[i].cfg.confidential;
		tpm_own |= s->slots[i].cfg.tpm_guest_owned;
		all_own |= s->slots[i].cfg.guest_owned &&
			   sourceset_reads_hw_random(&s->slots[i].cfg);
		if (s->slots[i].gated)
			return;
	}
	if (!confidential ||
	    hwrandom_current(s->p.sysfs_dir, cur, sizeof(cur)) < 0 ||
	    !hwrandom_host_backed(cur, tpm_own, all_own))
		return;
	q = hwrandom_quality(s->p.sysfs_dir);
	if (q <= 0)
		return;
	log_warn("hw_random: the kernel credits %s itself at %d/1024, "
		 "untested: " CONFIDENTIAL_HOST_REASON "; no source here reads "
		 "it (hwrng, virtio), so rngfeed leaves its rng_quality alone: "
		 "echo 0 > %s/rng_quality stops that until it registers again, "
		 "rng_core.default_quality=0 on the kernel command line for "
		 "every boot",
		 cur, q, s->p.sysfs_dir);
}
