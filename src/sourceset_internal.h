/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The source set's insides, shared by sourceset.c (slots and readers) and
 * sourceset_hwrng.c (the hand-over of the kernel's hw_random credit).
 * Not a public header.
 */
#ifndef RNGFEED_SOURCESET_INTERNAL_H
#define RNGFEED_SOURCESET_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "rngfeed/hwrandom.h"
#include "rngfeed/hwrng_gate.h"
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
	bool host_provided;          /* a confidential guest's host provides
				      * what it reads now: credited 0, its
				      * configured credit kept for when that
				      * changes (source_host_provided()) */
	bool claimed;                /* its credit is above the driver's own
				      * default: a user's claim */
	struct reader_memory memory; /* what its last reader's full
				      * assessments learned (a reload hands it
				      * to the next one of the same source) */
	char finished[256];          /* the input it read to its end: data
				      * read once is credited once, so a
				      * reload does not read it again */
};

/* A hw_random directory, or the hand-over lock beside it. */
#define GATE_PATH_LEN 300

struct source_set {
	struct sourceset_params p;
	size_t n_slots, next_take;
	struct hwrng_gate gate;
	char sysfs_dir[256], gate_state[256], gate_lock[256]; /* the
					      * params' strings, kept */
	double next_tick;            /* when sourceset_tick() looks again */
	char gate_seen[HWRANDOM_NAME_LEN]; /* rng_current at the last take */
	char gate_sysfs[GATE_PATH_LEN], gate_lock_here[GATE_PATH_LEN]; /* the gate's, for the
					      * slot it was taken for */
	char ledger_dir[256];
	char kernel_line[200];
	/* One per configured source (the driver table's size), not
	 * CONFIG_MAX_SOURCES: 1.9 KB each, for the daemon's whole life
	 * (issue 20). */
	struct slot slots[];
};

/* Is @cfg's device the kernel's hw_random misc device (10:183)?  Here,
 * not in sourceset_hwrng.c: sourceset_trust.c asks too, and the two call
 * each other no more than any two modules do (tests/test_layering.sh). */
static inline bool sourceset_reads_hw_random(const struct source_config *cfg)
{
	const char *dev = source_config_device(cfg);

	return (cfg->driver->flags & SOURCE_F_DEVICE) && dev &&
	       hwrandom_is_misc_device(dev);
}
/* The later source that reads directly what slot @i reads through
 * /dev/hwrng (s390-trng, tpm), or NULL. */
const char *sourceset_hw_twin(const struct source_set *s, size_t i);
/* Refresh the one line on the kernel's own crediting. */
void sourceset_describe_kernel(struct source_set *s);
/* Slot @sl is opened (or waits): take the hand-over for its device. */
void sourceset_take_gate(struct source_set *s, struct slot *sl);

/* For --list: the sentence saying another instance owns the hand-over
 * @sl would take (its run credits the device 0 until that one stops), or
 * false when none does. */
bool sourceset_handover_elsewhere(const struct source_set *s,
				  const struct slot *sl, char *why,
				  size_t why_len);
/* The readers stopped: give the hand-over back. */
void sourceset_release_gate(struct source_set *s);
/* The hwrng source's /dev/hwrng is missing from this /dev while the
 * kernel has its hw_random class: a container's /dev, where it will not
 * appear (so nothing waits for it). */
bool sourceset_hw_random_elsewhere(const struct source_set *s,
				   const struct source_config *cfg);
/* Is an unusable source kept, its reader looking for it? */
bool sourceset_waits_for(const struct source_set *s, const struct slot *sl,
			 int err);
/* Slot @sl reads the hw_random device @hw_device now (NULL: whatever it
 * reads): is it the host's, in a confidential guest?  Sets
 * sl->host_provided and says so when that changed. */
void sourceset_trust_slot(struct source_set *s, struct slot *sl,
			  const char *hw_device);
/* In a confidential guest, the kernel crediting a host-backed device
 * that no source reads (so no hand-over): said at start. */
void sourceset_trust_kernel(const struct source_set *s);
/* Before the slots open: the best hw_random device current. */
void sourceset_choose_best_device(struct source_set *s);

#endif
