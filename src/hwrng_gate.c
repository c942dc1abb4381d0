// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The hand-over of the kernel's own hw_random credit (see hwrng_gate.h for
 * what the kernel does with rng_quality).
 *
 * The record (hwrng_record.h) is written before rng_quality is set to 0,
 * so a crash at any point leaves either the original value or a record
 * that puts it back; the lock (hwrng_lock.h) makes one instance the owner.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rngfeed/confidential.h"
#include "rngfeed/hwrandom.h"
#include "rngfeed/hwrng_gate.h"
#include "rngfeed/hwrng_lock.h"
#include "rngfeed/hwrng_quality.h"
#include "rngfeed/hwrng_record.h"
#include "rngfeed/util.h"
#include "hwrng_gate_internal.h"

/* ---- the machine-wide record and lock (hwrng_lock.h) ------------------ */

/* Write @rec to the runtime record (if kept) and the lock's.  The runtime
 * record failing is a note in @note; the lock's is the one other
 * instances read, and failing it is an error. */
int hwrng_gate_records_write(struct hwrng_gate *g,
			     const struct hwrng_record *rec, char *note,
			     size_t note_len)
{
	char text[256];
	int r = hwrng_record_format(rec, text, sizeof(text));

	if (r < 0)
		return r;
	if (g->lock.fd >= 0) {
		r = hwrng_lock_write(&g->lock, text);
		if (r < 0)
			return r;
	}
	if (g->state_path[0] && g->state_fd < 0) {
		r = hwrng_record_open(g->state_path);
		if (r >= 0)
			g->state_fd = r;
	}
	r = g->state_fd >= 0 ? hwrng_record_write_fd(g->state_fd, rec) : r;
	if (r < 0 && g->state_path[0]) {
		say(note, note_len,
		    "; warning: could not record it in %s (%s): after a crash "
		    "only the next rngfeed puts it back",
		    g->state_path, strerror(-r));
		if (g->state_fd >= 0)
			close(g->state_fd);
		g->state_fd = -1;
		g->state_path[0] = '\0';
	}
	return 0;
}

/* A record left for @device by an owner that is gone: the lock's first
 * (any runtime directory), then this instance's own.  0 or -ENOENT. */
int hwrng_gate_find_record(const struct hwrng_gate *g, const char *device,
			   struct hwrng_record *rec)
{
	char text[256];

	if (g->lock.fd >= 0 && hwrng_lock_read(&g->lock, text,
					       sizeof(text)) > 0 &&
	    hwrng_record_parse(text, rec) == 0 && strcmp(rec->device, device) == 0)
		return 0;
	if (g->state_path[0] && hwrng_record_read(g->state_path, rec) == 0 &&
	    strcmp(rec->device, device) == 0)
		return 0;
	return -ENOENT;
}

/* ---- take (release and restore: hwrng_gate_release.c) ---------------- */

void hwrng_gate_init(struct hwrng_gate *g)
{
	*g = (struct hwrng_gate){ .fd = -1, .state_fd = -1 };
	hwrng_lock_init(&g->lock);
}

bool hwrng_gate_held(const struct hwrng_gate *g)
{
	return g->fd >= 0 && !g->waiting;
}

bool hwrng_gate_waiting(const struct hwrng_gate *g)
{
	return g->waiting;
}

void hwrng_gate_close(struct hwrng_gate *g, bool remove_lock)
{
	if (g->fd >= 0)
		close(g->fd);
	if (g->state_fd >= 0)
		close(g->state_fd);
	hwrng_lock_close(&g->lock, remove_lock);
	g->fd = -1;
	g->state_fd = -1;
	g->waiting = false;
}

/*
 * Writing rng_quality made the kernel elect another device (it had a
 * higher quality, or the same and registered first): choose ours again,
 * which keeps its 0 on 6.11 and later.  0, or -EBUSY when the kernel will
 * not keep it at 0 as the current device.
 */
static int keep_current(struct hwrng_gate *g, char *why, size_t why_len)
{
	char cur[HWRANDOM_NAME_LEN];
	unsigned int q = 0;
	int r;

	r = hwrng_is_current(g->sysfs_dir, g->device, cur, sizeof(cur));
	if (r != 0)
		return r < 0 ? r : 0;
	r = hwrandom_select(g->sysfs_dir, g->device);
	if (r < 0) {
		say(why, why_len,
		    "with %s at rng_quality 0 the kernel made %s current, and "
		    "choosing %s again failed: %s",
		    g->device, cur, g->device, strerror(-r));
		return r;
	}
	r = hwrng_is_current(g->sysfs_dir, g->device, cur, sizeof(cur));
	if (r < 0)
		return r;
	if (r == 1) {
		r = hwrng_quality_read(g->fd, &q);
		if (r < 0)
			return r;
		if (q == 0)
			return 0;
	}
	say(why, why_len,
	    "with %s at rng_quality 0 the kernel makes another device "
	    "current or resets the quality (kernels 6.2 to 6.10 reset it when "
	    "a device is chosen)",
	    g->device);
	return -EBUSY;
}

/* ---- devices that are no longer current ------------------------------- */

static void park(struct hwrng_gate *g)
{
	struct hwrng_gate_parked *p;

	if (g->n_parked == HWRNG_GATE_MAX_PARKED)
		return; /* more than four devices: the oldest keeps 0 */
	p = &g->parked[g->n_parked++];
	snprintf(p->device, sizeof(p->device), "%s", g->device);
	p->original = g->original;
	p->selected = g->selected;
}

/* @device was parked: take it out, as a record.  0 or -ENOENT. */
static int unpark(struct hwrng_gate *g, const char *device,
		  struct hwrng_record *rec)
{
	for (size_t i = 0; i < g->n_parked; i++) {
		struct hwrng_gate_parked *p = &g->parked[i];

		if (strcmp(p->device, device) != 0)
			continue;
		*rec = (struct hwrng_record){ .quality = p->original,
					      .selected = p->selected };
		snprintf(rec->device, sizeof(rec->device), "%s", p->device);
		g->parked[i] = g->parked[--g->n_parked];
		return 0;
	}
	return -ENOENT;
}

/*
 * The owner's part of the take, for the current device @cur with
 * rng_quality open in g->fd and the lock (if any) owned.
 */
static int own_take(struct hwrng_gate *g, const char *cur, bool take_over,
		    char *why, size_t why_len)
{
	struct hwrng_record rec = { 0 }, old = { 0 };
	char note[200] = "";
	bool adopted = false;
	unsigned int q = 0;
	int r;

	r = hwrng_quality_read(g->fd, &q);
	if (r < 0) {
		say(why, why_len, "%s/rng_quality: %s", g->sysfs_dir,
		    strerror(-r));
		return r;
	}
	if (q == 0 && unpark(g, cur, &old) == 0) {
		rec = old;
		adopted = true;
		snprintf(note, sizeof(note),
			 "; it was set to 0 when current before (was %u)",
			 old.quality);
	} else if (q == 0) {
		/* The lock is ours: a record is its gone owner's. */
		if (hwrng_gate_find_record(g, cur, &old) < 0 &&
		    hwrng_strict_mode(g->sysfs_dir)) {
			say(why, why_len,
			    "rng_quality of %s is 0 from "
			    "rng_core.default_quality=0 (strict mode): the "
			    "kernel credits nothing from it itself",
			    cur);
			return HWRNG_GATE_NONE;
		}
		if (hwrng_gate_find_record(g, cur, &old) < 0) {
			say(why, why_len,
			    "rng_quality of %s is already 0 and no rngfeed "
			    "record says why: another feeder (rngd, or an "
			    "rngfeed that does not share %s) or the "
			    "administrator (echo 0 > rng_quality, or "
			    "rng_core.default_quality=0) set it; the kernel "
			    "credits nothing from it itself",
			    cur, g->lock.fd >= 0 ? g->lock.path : "the lock");
			return HWRNG_GATE_FOUND_ZERO;
		}
		rec = old;
		adopted = true;
		if (take_over)
			snprintf(note, sizeof(note),
				 "; taken over from the rngfeed that owned it, "
				 "with no hand-back in between (was %u)",
				 old.quality);
		else
			snprintf(note, sizeof(note),
				 "; kept from an earlier run%s, which set it "
				 "to 0 (was %u)",
				 old.failed ? " in which it failed its tests"
				 : old.host ? " that held it as host-provided"
					    : "",
				 old.quality);
	} else {
		snprintf(rec.device, sizeof(rec.device), "%s", cur);
		rec.quality = q;
		rec.selected = hwrng_selected(g->sysfs_dir);
	}
	rec.failed = false;
	/* This run's rule, whatever an earlier run's record said. */
	rec.host = host_held(g, rec.device);
	strcpy(g->device, rec.device);
	g->original = rec.quality;
	g->selected = rec.selected;

	/* Recorded before the 0 is written: a crash at any point leaves the
	 * original or a record that puts it back. */
	r = hwrng_gate_records_write(g, &rec, note + strlen(note),
				     sizeof(note) - strlen(note));
	if (r < 0) {
		say(why, why_len, "recording rng_quality %u of %s in %s: %s",
		    rec.quality, cur, g->lock.path, strerror(-r));
		return r;
	}
	if (!adopted) {
		r = hwrng_quality_write(g->fd, 0);
		if (r < 0) {
			say(why, why_len, "setting %s/rng_quality to 0: %s",
			    g->sysfs_dir, strerror(-r));
			goto fail_record;
		}
	}
	r = keep_current(g, why, why_len);
	if (r < 0)
		goto fail_restore;
	if (rec.host)
		say(why, why_len, "the kernel's own credit for %s (%s %u) is "
		    "held at 0: " CONFIDENTIAL_HOST_REASON ", so not handed "
		    "back when rngfeed stops%s",
		    g->device,
		    g->param ? "rng_core current_quality" : "rng_quality",
		    g->original, note);
	else
		say(why, why_len, "the kernel's own credit for %s (%s %u) is "
		    "handed over: 0 while rngfeed tests it%s",
		    g->device,
		    g->param ? "rng_core current_quality" : "rng_quality",
		    g->original, note);
	return HWRNG_GATE_TAKEN;

fail_restore:
	/* Put back what was there; the kernel re-elects as before. */
	if (hwrng_quality_write(g->fd, g->original) == 0 && g->selected)
		hwrandom_select(g->sysfs_dir, g->device);
fail_record:
	hwrng_record_clear(g->state_fd, g->state_path);
	if (g->lock.owner)
		hwrng_lock_clear(&g->lock);
	return r;
}

int hwrng_gate_take(struct hwrng_gate *g, const char *sysfs_dir,
		    const char *state_path, const char *lock_path, char *why,
		    size_t why_len)
{
	return hwrng_gate_take_with(g, sysfs_dir, state_path, lock_path, NULL,
				    why, why_len);
}

int hwrng_gate_take_with(struct hwrng_gate *g, const char *sysfs_dir,
			 const char *state_path, const char *lock_path,
			 const struct hwrng_gate_trust *trust, char *why,
			 size_t why_len)
{
	char cur[HWRANDOM_NAME_LEN];
	unsigned int q = 0;
	int r;

	hwrng_gate_init(g);
	if (trust)
		g->trust = *trust;
	say(why, why_len, "%s", "");
	if (strlen(sysfs_dir) >= sizeof(g->sysfs_dir) ||
	    (state_path && strlen(state_path) >= sizeof(g->state_path)))
		return -ENAMETOOLONG;
	strcpy(g->sysfs_dir, sysfs_dir);
	if (state_path)
		strcpy(g->state_path, state_path);

	r = hwrandom_current(sysfs_dir, cur, sizeof(cur));
	if (r == -ENODEV || r == -ENOENT) {
		say(why, why_len, "no hw_random device");
		return HWRNG_GATE_NONE;
	}
	if (r < 0) {
		say(why, why_len, "%s/rng_current: %s", sysfs_dir, strerror(-r));
		return r;
	}
	g->admin_choice = hwrng_selected(sysfs_dir);
	r = hwrng_quality_open(sysfs_dir, O_RDWR, &g->param);
	if (r == -ENOENT) {
		say(why, why_len,
		    "no rng_quality (kernel before 5.18) and no rng_core "
		    "current_quality: the kernel's own credit for %s cannot "
		    "be handed over",
		    cur);
		return HWRNG_GATE_NONE;
	}
	if (r < 0) {
		say(why, why_len, "%s/rng_quality: %s", sysfs_dir, strerror(-r));
		return r;
	}
	g->fd = r;
	if (lock_path && *lock_path) {
		r = hwrng_lock_open(&g->lock, lock_path);
		if (r >= 0)
			r = hwrng_lock_try_own(&g->lock);
		if (r == 0)
			r = hwrng_lock_wait(&g->lock);
		if (r < 0) {
			say(why, why_len, "the hand-over's lock %s: %s",
			    lock_path, strerror(-r));
			goto fail;
		}
		if (!g->lock.owner) {
			/* Kept open: rng_quality for the take-over, which may
			 * come after the privilege drop. */
			g->waiting = true;
			strcpy(g->device, cur);
			hwrng_quality_read(g->fd, &q);
			say(why, why_len,
			    "another rngfeed owns the hand-over of %s "
			    "(rng_quality reads %u; lock %s): not taken, and "
			    "its credit here is 0 until that instance stops, "
			    "then this one takes the hand-over over",
			    cur, q, lock_path);
			return HWRNG_GATE_WAITING;
		}
	}
	r = own_take(g, cur, false, why, why_len);
	if (r == HWRNG_GATE_TAKEN)
		return r;
	if (r == HWRNG_GATE_FOUND_ZERO) {
		hwrng_gate_close(g, true);
		return r;
	}
fail:
	hwrng_gate_close(g, true);
	return r;
}

/* The kernel set the held device's quality again: 0 again, and what it
 * set is what release puts back. */
static int retake(struct hwrng_gate *g, unsigned int q, char *msg,
		  size_t msg_len)
{
	struct hwrng_record rec = { .quality = q, .selected = g->selected };
	char note[160] = "";
	int r;

	snprintf(rec.device, sizeof(rec.device), "%s", g->device);
	g->original = q;
	r = hwrng_gate_records_write(g, &rec, note, sizeof(note));
	if (r >= 0)
		r = hwrng_quality_write(g->fd, 0);
	if (r < 0) {
		say(msg, msg_len, "%s: setting %s to 0 again: %s", g->device,
		    g->param ? "current_quality" : "rng_quality", strerror(-r));
		return r;
	}
	say(msg, msg_len,
	    "the kernel set the quality of %s to %u again (it initialised "
	    "the device again): set to 0 again%s",
	    g->device, q, note);
	return HWRNG_GATE_RETAKEN;
}

/* A held gate: has the current device or its quality changed? */
static int follow(struct hwrng_gate *g, char *msg, size_t msg_len)
{
	char cur[HWRANDOM_NAME_LEN], was[HWRANDOM_NAME_LEN], why[300] = "";
	unsigned int q = 0;
	bool left;
	int r;

	r = hwrandom_current(g->sysfs_dir, cur, sizeof(cur));
	if (r == -ENODEV)
		cur[0] = '\0';
	else if (r < 0)
		return r;
	/* A TPM that registered later and won the election (6.12 gives it
	 * 1024): the device read before stays current (hwrandom_best()),
	 * unless the administrator chose one; once per TPM (on 6.2-6.10 a
	 * choice resets the quality, and the 0 again re-elects the TPM). */
	if (cur[0] && !g->admin_choice && strcmp(cur, g->overruled) != 0 &&
	    hwrandom_best(g->sysfs_dir, was, sizeof(was)) == 1 &&
	    strcmp(was, g->device) == 0 &&
	    /* Not the host's device over the guest's own TPM. */
	    !(host_held(g, was) && !host_held(g, cur)) &&
	    hwrandom_select(g->sysfs_dir, was) == 0) {
		snprintf(g->overruled, sizeof(g->overruled), "%s", cur);
		say(msg, msg_len,
		    "hw_random: %s became current; %s made current again (a "
		    "TPM's generator is slow and the tpm source reads it "
		    "directly)",
		    cur, was);
		return HWRNG_GATE_CHANGED;
	}
	/* A device it declined (found at 0 with no record) is not asked
	 * again every tick: only a change is news. */
	if (!g->device[0] && cur[0] && strcmp(cur, g->declined) == 0)
		return HWRNG_GATE_NONE;
	g->declined[0] = '\0';
	if (strcmp(cur, g->device) == 0) {
		if (!cur[0])
			return HWRNG_GATE_NONE;
		r = hwrng_quality_read(g->fd, &q);
		if (r < 0 || q == 0)
			return r < 0 ? r : HWRNG_GATE_NONE;
		return retake(g, q, msg, msg_len);
	}
	snprintf(was, sizeof(was), "%s", g->device);
	/* Before 5.18 the one parameter is set again by the kernel for
	 * the new device: nothing of the old one to put back. */
	left = !was[0] || g->param || hwrandom_listed(g->sysfs_dir, was) != 1;
	if (!left)
		park(g);
	g->device[0] = '\0';
	/* Emptied, not removed: the kept fd writes the next device's. */
	hwrng_record_clear(g->state_fd, NULL);
	if (g->lock.owner)
		hwrng_lock_clear(&g->lock);
	r = HWRNG_GATE_NONE;
	if (cur[0]) {
		r = own_take(g, cur, false, why, sizeof(why));
		if (r != HWRNG_GATE_TAKEN) {
			g->device[0] = '\0';
			snprintf(g->declined, sizeof(g->declined), "%s", cur);
		}
	}
	say(msg, msg_len, "hw_random: %s %s; %s%s%s%s",
	    was[0] ? was : "no device",
	    !was[0] ? "was current" : left ? "left or is not read any more"
		    : "is no longer current (kept at 0 until rngfeed stops)",
	    cur[0] ? "now " : "no device is current", cur, why[0] ? ": " : "",
	    why);
	return r < 0 ? r : HWRNG_GATE_CHANGED;
}

int hwrng_gate_tick(struct hwrng_gate *g, char *msg, size_t msg_len)
{
	char cur[HWRANDOM_NAME_LEN];
	int r;

	say(msg, msg_len, "%s", "");
	if (g->fd >= 0 && !g->waiting)
		return follow(g, msg, msg_len);
	if (!g->waiting)
		return HWRNG_GATE_NONE;
	r = hwrng_lock_try_own(&g->lock);
	if (r <= 0)
		return r;
	/* The owner stopped (or died) and left its record to the waiters:
	 * adopting it takes the hand-over over with no hand-back. */
	g->waiting = false;
	r = hwrandom_current(g->sysfs_dir, cur, sizeof(cur));
	if (r >= 0)
		r = own_take(g, cur, true, msg, msg_len);
	else
		say(msg, msg_len, "taking the hand-over over: %s/rng_current: "
		    "%s", g->sysfs_dir, strerror(-r));
	if (r != HWRNG_GATE_TAKEN)
		hwrng_gate_close(g, true);
	return r < 0 || r == HWRNG_GATE_TAKEN ? r : HWRNG_GATE_FOUND_ZERO;
}
