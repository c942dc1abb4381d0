// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The hand-over's end: the device given back to the kernel's own
 * crediting at its original rng_quality (or held at 0, and said why), the
 * devices parked on the way put back too, and the restore a later
 * process (ExecStopPost=, the next rngfeed) makes from a record.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rngfeed/confidential.h"
#include "rngfeed/hwrandom.h"
#include "rngfeed/hwrng_gate.h"
#include "rngfeed/hwrng_lock.h"
#include "rngfeed/hwrng_quality.h"
#include "rngfeed/hwrng_record.h"
#include "hwrng_gate_internal.h"

/*
 * Put back the parked devices that are still registered: each is chosen
 * for a moment to reach its rng_quality (it belongs to the current
 * device only); writing it makes the kernel elect the best device again,
 * and @keep (the device that was current, chosen explicitly) is chosen
 * again after.  Called after the readers stopped.  A host-backed one in
 * a confidential guest stays 0: named in @held (which may be NULL).
 */
static void put_back_parked(struct hwrng_gate *g, const char *keep,
			    char *held, size_t held_len)
{
	char cur[HWRANDOM_NAME_LEN];
	unsigned int q = 0;

	for (size_t i = 0; i < g->n_parked; i++) {
		const struct hwrng_gate_parked *p = &g->parked[i];

		if (host_held(g, p->device)) {
			size_t n = held ? strlen(held) : 0;

			if (held && n < held_len)
				snprintf(held + n, held_len - n,
					 "; %s (was %u) stays 0 too",
					 p->device, p->original);
			continue;
		}
		if (hwrandom_listed(g->sysfs_dir, p->device) != 1 ||
		    hwrandom_select(g->sysfs_dir, p->device) < 0 ||
		    hwrng_is_current(g->sysfs_dir, p->device, cur, sizeof(cur)) != 1 ||
		    hwrng_quality_read(g->fd, &q) < 0 || q != 0)
			continue;
		hwrng_quality_write(g->fd, p->original);
	}
	if (g->n_parked && keep && *keep)
		hwrandom_select(g->sysfs_dir, keep);
	g->n_parked = 0;
}

/* Put @original back for @device through @fd if it is still current and
 * reads 0.  @msg says what was done.  0 done, 1 left as it is, -errno. */
static int put_back(const char *sysfs_dir, int fd, const char *device,
		    unsigned int original, bool selected, char *msg,
		    size_t msg_len)
{
	char cur[HWRANDOM_NAME_LEN];
	unsigned int q = 0;
	int r;

	r = hwrng_is_current(sysfs_dir, device, cur, sizeof(cur));
	if (r == 0) {
		say(msg, msg_len,
		    "the current hw_random device is now %s, not %s: %s's "
		    "rng_quality not put back to %u (it keeps 0 until it "
		    "registers again)",
		    cur, device, device, original);
		return 1;
	}
	if (r > 0)
		r = hwrng_quality_read(fd, &q);
	if (r < 0) {
		say(msg, msg_len, "reading the hw_random state: %s; %s's "
		    "rng_quality not put back to %u", strerror(-r), device,
		    original);
		return r;
	}
	if (q != 0) {
		say(msg, msg_len,
		    "rng_quality of %s is %u, not 0: changed by someone else "
		    "(or the device registered again), left as it is",
		    device, q);
		return 1;
	}
	r = hwrng_quality_write(fd, original);
	if (r < 0) {
		say(msg, msg_len, "putting back rng_quality %u of %s: %s",
		    original, device, strerror(-r));
		return r;
	}
	/* Writing rng_quality forgets an explicit choice of device. */
	if (selected)
		hwrandom_select(sysfs_dir, device);
	say(msg, msg_len,
	    "%s handed back to the kernel's own crediting at rng_quality %u",
	    device, original);
	return 0;
}

/*
 * A waiter stops: if the owner has gone meanwhile and nobody else waits,
 * what the owner left at 0 for this waiter is put back now (it would
 * otherwise stay 0 with no rngfeed reading it).
 */
static void waiter_release(struct hwrng_gate *g, char *msg, size_t msg_len)
{
	struct hwrng_record rec;
	char cur[HWRANDOM_NAME_LEN];

	if (hwrng_lock_try_own(&g->lock) == 1 &&
	    hwrng_lock_others_wait(&g->lock) == 0 &&
	    hwrandom_current(g->sysfs_dir, cur, sizeof(cur)) > 0 &&
	    hwrng_gate_find_record(g, cur, &rec) == 0 && !rec.failed &&
	    !rec.host &&
	    put_back(g->sysfs_dir, g->fd, rec.device, rec.quality,
		     rec.selected, msg, msg_len) >= 0) {
		hwrng_lock_clear(&g->lock);
		hwrng_gate_close(g, true);
		return;
	}
	hwrng_gate_close(g, false);
}

/*
 * A confidential guest's host-backed device at the stop: it stays 0,
 * its record marked host (ExecStopPost= and other instances leave it),
 * and the message says how to hand it back by hand.
 */
static void keep_host(struct hwrng_gate *g, char *msg, size_t msg_len)
{
	struct hwrng_record rec = { .quality = g->original,
				    .selected = g->selected,
				    .host = true };
	char note[8] = "", held[160] = "";
	int r;

	strcpy(rec.device, g->device);
	r = hwrng_gate_records_write(g, &rec, note, sizeof(note));
	put_back_parked(g, g->device, held, sizeof(held));
	say(msg, msg_len,
	    "%s: rng_quality stays 0 (it was %u): " CONFIDENTIAL_HOST_REASON
	    ", so not handed back to the kernel's own crediting%s%s; to hand "
	    "it back by hand: echo %u > %s/rng_quality",
	    g->device, g->original, held,
	    r < 0 || note[0] ? " (marking the record did not work: "
			       "ExecStopPost= will hand it back)"
			     : "",
	    g->original, g->sysfs_dir);
	hwrng_gate_close(g, false);
}

/* Append to @msg the parked host-backed devices put_back_parked() held. */
static void say_held(char *msg, size_t msg_len, const char *held)
{
	size_t n;

	if (!msg || !held[0])
		return;
	n = strlen(msg);
	if (n < msg_len)
		snprintf(msg + n, msg_len - n, "%s%s: " CONFIDENTIAL_HOST_REASON,
			 n ? "" : "hw_random", held);
}

int hwrng_gate_release(struct hwrng_gate *g, bool failed, char *msg,
		       size_t msg_len)
{
	char held[160] = "";

	say(msg, msg_len, "%s", "");
	if (g->fd < 0)
		return 0;
	if (g->waiting) {
		waiter_release(g, msg, msg_len);
		return 0;
	}
	if (failed) {
		struct hwrng_record rec = { .quality = g->original,
				      .selected = g->selected,
				      .failed = true };
		char note[8] = "";
		int r;

		strcpy(rec.device, g->device);
		r = hwrng_gate_records_write(g, &rec, note, sizeof(note));
		put_back_parked(g, g->device, NULL, 0);
		say(msg, msg_len,
		    "%s failed its health tests: not handed back to the "
		    "kernel's own crediting, its rng_quality stays 0 (it was "
		    "%u)%s; to hand it back: echo %u > %s/rng_quality",
		    g->device, g->original,
		    r < 0 || note[0] ? " (marking the record failed did not "
				       "work: ExecStopPost= will hand it back)"
				     : "",
		    g->original, g->sysfs_dir);
		hwrng_gate_close(g, false);
		return 1;
	}
	if (hwrng_lock_others_wait(&g->lock) == 1) {
		/* The lock's record stays for the waiter, which adopts it:
		 * no hand-back in between. */
		say(msg, msg_len,
		    "%s: rng_quality stays 0, handed over to another rngfeed "
		    "that waits for it (it was %u)",
		    g->device, g->original);
		hwrng_record_clear(g->state_fd, g->state_path);
		hwrng_gate_close(g, false);
		return 0;
	}
	if (g->device[0] && host_held(g, g->device)) {
		keep_host(g, msg, msg_len);
		return 1;
	}
	if (g->device[0] &&
	    put_back(g->sysfs_dir, g->fd, g->device, g->original, g->selected,
		     msg, msg_len) < 0) {
		size_t used = msg ? strlen(msg) : 0;

		/* Not handed back (an attribute that failed, or did not
		 * answer within its bound: sysfs_io.h): the records stay for
		 * ExecStopPost='s --restore-hwrng-quality or the next rngfeed,
		 * as after a crash. */
		say(msg ? msg + used : NULL, msg_len - used,
		    "; its record stays for --restore-hwrng-quality");
		put_back_parked(g, NULL, held, sizeof(held));
		say_held(msg, msg_len, held);
		hwrng_gate_close(g, false);
		return 1;
	}
	put_back_parked(g, g->selected ? g->device : NULL, held, sizeof(held));
	say_held(msg, msg_len, held);
	hwrng_record_clear(g->state_fd, g->state_path);
	if (g->lock.owner)
		hwrng_lock_clear(&g->lock);
	hwrng_gate_close(g, true);
	return held[0] ? 1 : 0;
}

int hwrng_gate_restore(const char *sysfs_dir, const char *state_path,
		       const char *lock_path, char *msg, size_t msg_len)
{
	struct hwrng_gate g;
	struct hwrng_record rec = { 0 };
	char cur[HWRANDOM_NAME_LEN];
	int r = 0;

	say(msg, msg_len, "%s", "");
	hwrng_gate_init(&g);
	if (strlen(sysfs_dir) >= sizeof(g.sysfs_dir))
		return -ENAMETOOLONG;
	strcpy(g.sysfs_dir, sysfs_dir);
	if (lock_path && *lock_path) {
		r = hwrng_lock_open(&g.lock, lock_path);
		if (r >= 0)
			r = hwrng_lock_try_own(&g.lock);
		if (r < 0) {
			say(msg, msg_len, "the hand-over's lock %s: %s",
			    lock_path, strerror(-r));
			goto out;
		}
		if (r == 0 || hwrng_lock_others_wait(&g.lock) == 1) {
			/* Its record, if any, is theirs now. */
			say(msg, msg_len,
			    "another rngfeed %s the hand-over of hw_random "
			    "(lock %s): nothing put back",
			    r == 0 ? "owns" : "waits to take over", lock_path);
			r = 0;
			goto out;
		}
	}
	r = hwrng_record_read(state_path, &rec);
	if (r == -ENODATA)
		unlink(state_path);
	if ((r == -ENOENT || r == -ENODATA) &&
	    hwrandom_current(sysfs_dir, cur, sizeof(cur)) > 0)
		r = hwrng_gate_find_record(&g, cur, &rec);
	if (r == -ENOENT || r == -ENODATA) {
		say(msg, msg_len,
		    "no hand-over record in %s: nothing to put back (a clean "
		    "stop leaves none)",
		    state_path);
		r = 0;
		goto out_remove;
	}
	if (r < 0) {
		say(msg, msg_len, "%s: %s", state_path,
		    r == -EBADMSG ? "not a record of rngfeed's" : strerror(-r));
		goto out;
	}
	if (rec.failed || rec.host) {
		say(msg, msg_len,
		    "%s %s: rng_quality not put back to %u; to hand it back: "
		    "echo %u > %s/rng_quality",
		    rec.device,
		    rec.failed ? "failed its health tests"
			       : "was held at 0 as " CONFIDENTIAL_HOST_REASON,
		    rec.quality, rec.quality, sysfs_dir);
		goto out;
	}
	g.fd = hwrng_quality_open(sysfs_dir, O_RDWR, &g.param);
	if (g.fd < 0 && hwrng_is_current(sysfs_dir, rec.device, cur,
				   sizeof(cur)) == 1) {
		r = g.fd;
		say(msg, msg_len, "%s/rng_quality: %s", sysfs_dir, strerror(-r));
		goto out;
	}
	r = put_back(sysfs_dir, g.fd, rec.device, rec.quality, rec.selected,
		     msg, msg_len);
	if (r < 0)
		goto out;
	if (r == 0)
		say(msg, msg_len, "%s: rng_quality put back to %u", rec.device,
		    rec.quality);
	r = 0;
	if (unlink(state_path) < 0 && errno != ENOENT)
		r = -errno;
	if (g.lock.owner)
		hwrng_lock_clear(&g.lock);
out_remove:
	hwrng_gate_close(&g, true);
	return r;
out:
	hwrng_gate_close(&g, false);
	return r;
}
