/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hand-over of the kernel's own hw_random credit.
 *
 * The kernel's hw_random core (drivers/char/hw_random/core.c) reads the
 * current hw_random device in its own kthread ("hwrng") and credits what
 * it reads at that device's quality, in bits per 1024 bits, untested.
 * rng_quality in sysfs (Linux 5.18 and later) reads and sets the quality
 * of the *current* device only; it is a field of that device, so it
 * stays with the device while the device stays registered (since 6.11 and
 * the stable kernels that took 95c0f5c3b8bb; on 6.2 to 6.10 selecting the
 * device again through rng_current resets a 0 to the default) and starts
 * again from the driver's value (capped by rng_core.default_quality) when
 * the device registers again.  Writing 0 does not stop the kthread on
 * 6.1 and later: it still reads a few bytes per reseed interval and mixes
 * them in, crediting nothing.  Writing any value also makes the kernel
 * re-elect the best device (the highest quality, first registered on a
 * tie) and forget an explicit rng_current choice (rng_selected).
 *
 * While rngfeed tests and credits the current device, the gate sets its
 * rng_quality to 0 so that only health-tested data earns credit, and puts
 * back what it found when rngfeed stops.  What it found is also written to
 * a small record file, so that the service's ExecStopPost= can put it back
 * after a crash (rngfeed --restore-hwrng-quality).
 *
 * One instance per machine owns the hand-over (hwrng_lock.h); another
 * waits and takes it over.  After start-up the gate follows the machine
 * (hwrng_gate_tick()): devices register, leave and become current, and
 * the kernel sets a quality again when it initialises a device.  Before
 * 5.18 the same is done with rng_core's current_quality parameter
 * (hwrng_quality.h).
 *
 * Functions take the sysfs directory (HWRANDOM_SYSFS_DIR) so tests can use
 * a fixture.  No logging: messages come back to the caller.
 */
#ifndef RNGFEED_HWRNG_GATE_H
#define RNGFEED_HWRNG_GATE_H

#include <stdbool.h>
#include <stddef.h>

#include "rngfeed/hwrng_lock.h"

/* /run/rngfeed is the unit's RuntimeDirectory= (kept with
 * RuntimeDirectoryPreserve=yes, and still there while ExecStopPost=
 * runs); outside systemd the gate creates it. */
#define HWRNG_GATE_STATE_PATH "/run/rngfeed/hwrng-quality"
#define HWRNG_GATE_MSG_LEN 384


/* A device the gate set to 0 that is registered but no longer current:
 * the kernel reads only the current device, so it credits nothing from
 * it; its value is put back at release. */
struct hwrng_gate_parked {
	char device[64];
	unsigned int original;
	bool selected;
};
#define HWRNG_GATE_MAX_PARKED 4

/*
 * Trust (confidential.h).  In a confidential guest the host is the
 * adversary, and the kernel's own credit for a device the host backs
 * (hwrandom_host_backed(): virtio_rng.N, a TPM it emulates) is credit
 * for what the adversary may know: such a device is held at 0 for the
 * whole run, also when it becomes current again or registers again, and
 * is not handed back when rngfeed stops.  Its record says state=host, so
 * that neither ExecStopPost= (hwrng_gate_restore()) nor another instance
 * that stops hands it back; a later run adopts the record and applies
 * its own rule (held again in a confidential guest, handed back at its
 * stop if it is not one).
 */
struct hwrng_gate_trust {
	bool confidential;
	bool tpm_own;   /* a TPM's tpm-rng-N is the guest's own */
	bool all_own;   /* every device but virtio_rng.N is (hwrng's
			 * guest-owned=yes) */
};

/* Public so it can live inside another struct; touch it only through
 * the functions below. */
struct hwrng_gate {
	int fd;                /* rng_quality opened O_RDWR, kept open (-1 = not held) */
	char device[64];       /* the hw_random device it was taken for */
	unsigned int original; /* what rng_quality read before */
	char state_path[256];  /* where the original was recorded ("" = nowhere) */
	int state_fd;          /* the record, kept open: emptied at release
				* even after the privilege drop (-1 = none) */
	bool selected;         /* rng_selected read 1 before: the device was
				* chosen explicitly, chosen again on release */
	char sysfs_dir[128];   /* where rng_current and rng_selected are */
	struct hwrng_lock lock; /* one owner per machine (hwrng_lock.h) */
	bool param;            /* fd is rng_core's current_quality (before
				* 5.18), not rng_quality */
	bool waiting;          /* another instance owns the hand-over: fd
				* is kept for the take-over, nothing taken */
	struct hwrng_gate_parked parked[HWRNG_GATE_MAX_PARKED];
	size_t n_parked;
	bool admin_choice;     /* rng_selected read 1 at the take: the
				* administrator chose; no device is chosen
				* for them */
	char overruled[64];    /* the TPM made not current once */
	char declined[64];     /* current device found at 0 with no record:
				* not taken, not asked again until a change */
	struct hwrng_gate_trust trust; /* what it holds back (above) */
};

/* hwrng_gate_take()'s and hwrng_gate_tick()'s answers (or -errno). */
enum {
	HWRNG_GATE_NONE = 0,       /* nothing to take (@why says why) */
	HWRNG_GATE_TAKEN = 1,      /* taken (or taken over) */
	HWRNG_GATE_WAITING = 2,    /* another instance owns it: not taken;
				    * credit the device 0 meanwhile */
	HWRNG_GATE_FOUND_ZERO = 3, /* rng_quality already 0 and no record
				    * says why: a warning for the user */
	HWRNG_GATE_CHANGED = 4,    /* the current device changed (tick):
				    * the gate follows it; device "" = none
				    * now */
	HWRNG_GATE_RETAKEN = 5,    /* the kernel set the quality again (it
				    * initialised the device): 0 again */
};

void hwrng_gate_init(struct hwrng_gate *g);

/*
 * Take the kernel's own credit for the current hw_random device: remember
 * rng_quality (and rng_selected), record them with the device name in
 * @state_path (NULL or "" = no record; failure to write it is a warning in
 * @why, not an error), write 0, and check that the kernel kept the device
 * current (with several devices it moves to the best one: the gate then
 * selects the device again through rng_current).
 *
 * A record of an earlier run for this device, found while rng_quality
 * reads 0 (a crash without ExecStopPost=, or a device that failed in an
 * earlier run), is adopted: its value is what release puts back.
 *
 * One owner per machine: the lock file at @lock_path (HWRNG_LOCK_PATH;
 * NULL or "" = no lock, for a fixture that wants none).  When another
 * instance owns it, nothing is taken: the gate waits (hwrng_gate_tick()
 * takes it over when the owner stops, without a hand-back in between).
 * A record is adopted only while the lock is ours: its owner is gone.
 *
 * Returns HWRNG_GATE_TAKEN (with a note in @why when something is worth
 * saying), HWRNG_GATE_WAITING, HWRNG_GATE_NONE (@why says why: no
 * rng_quality file, kernel before 5.18; no current device),
 * HWRNG_GATE_FOUND_ZERO (already 0 and no record: @why names the two
 * possible causes), or -errno with @why.
 * Keeps rng_quality (and the record) open so that release works after
 * the daemon dropped root: call it before the privilege drop.
 */
int hwrng_gate_take(struct hwrng_gate *g, const char *sysfs_dir,
		    const char *state_path, const char *lock_path, char *why,
		    size_t why_len);
/* The same with @trust (NULL: not a confidential guest), which the gate
 * keeps for every device it takes after (hwrng_gate_tick()). */
int hwrng_gate_take_with(struct hwrng_gate *g, const char *sysfs_dir,
			 const char *state_path, const char *lock_path,
			 const struct hwrng_gate_trust *trust, char *why,
			 size_t why_len);

/* Is the gate held (owned, rng_quality 0 by this instance)? */
bool hwrng_gate_held(const struct hwrng_gate *g);
/* Does it wait for another instance to stop? */
bool hwrng_gate_waiting(const struct hwrng_gate *g);

/*
 * Put back what was found, if the current device is still the one it was
 * taken for and rng_quality still reads 0 (otherwise someone else changed
 * it: left as it is), empty and remove the record, close.  When another
 * instance waits for the hand-over, nothing is put back: the lock's
 * record stays for it to take over.  A waiting gate only closes (and
 * puts back what an owner left it, if that owner is gone and nobody
 * else waits).
 *
 * @failed: the device failed its health tests permanently in this run.
 * Policy: it is not handed back.  rng_quality stays 0 (the kernel credits
 * nothing from it either), the record stays, marked failed, so that
 * ExecStopPost= does not hand it back either, and @msg says so and how
 * to hand it back by hand.  A later run that takes the gate adopts the
 * record, tests the device again and hands it back only if it passes.
 * A reboot or a new registration of the device starts from the
 * kernel's default again.
 *
 * In a confidential guest a host-backed device is not handed back either
 * (hwrng_gate_trust above): @msg says why and how to hand it back by
 * hand; the record stays, marked host.
 *
 * @msg (for the caller to log) is always set when the gate was held.
 * Safe to call when not held (then @msg is empty).  Returns 1 when a
 * device was kept at 0 (failed, or host-backed), else 0.
 */
int hwrng_gate_release(struct hwrng_gate *g, bool failed, char *msg,
		       size_t msg_len);

/*
 * The daemon's housekeeping tick (on uevents, at most twice a second):
 * the gate follows the machine.  A waiting gate tries the lock; when the owner has stopped it
 * takes the hand-over over (adopting the owner's record: rng_quality
 * stays 0 throughout).  A held gate looks at rng_current: a device that
 * left is forgotten (its quality goes with it), one that is registered
 * but no longer current is parked at 0 and put back at release, and the
 * new current device is taken (identity and quality read again); a
 * quality the kernel set again (a device initialised again: before 5.18
 * on every device change, on 6.2 to 6.10 on a select) is set to 0 again.
 * Returns HWRNG_GATE_TAKEN, _CHANGED or _RETAKEN (@msg says what, once),
 * HWRNG_GATE_NONE (nothing changed), HWRNG_GATE_FOUND_ZERO (nothing to
 * take: @msg says why), or -errno.
 */
int hwrng_gate_tick(struct hwrng_gate *g, char *msg, size_t msg_len);

/*
 * After a crash (the unit's ExecStopPost=): put back what the record in
 * @state_path (or else the lock's, @lock_path) says, if it is there, not
 * marked failed, the device is still current and its rng_quality reads 0;
 * then remove the record.  Nothing is done while another instance owns or
 * waits for the lock at @lock_path (the record is theirs).  A failed
 * record, or one of a confidential guest's host-backed device, is left
 * in place (with a message).  Returns 0 (@msg says what
 * was done, or is empty when there was no record), or -errno with @msg.
 */
int hwrng_gate_restore(const char *sysfs_dir, const char *state_path,
		       const char *lock_path, char *msg, size_t msg_len);

/*
 * One line saying what the kernel credits by itself now, e.g. "the kernel
 * credits virtio_rng.0 itself at 1024/1024", "the kernel credits nothing
 * itself from virtio_rng.0 (rng_quality 0)", "no hw_random device"; for
 * --list and STATUS=.
 */
void hwrng_gate_describe_kernel(const char *sysfs_dir, char *buf, size_t len);

#endif
