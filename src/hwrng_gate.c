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

#include "rngfeed/hwrandom.h"
#include "rngfeed/hwrng_gate.h"
#include "rngfeed/hwrng_lock.h"
#include "rngfeed/hwrng_record.h"
#include "rngfeed/util.h"

static void say(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static int sysfs_path(char *path, size_t len, const char *dir,
		      const char *file)
{
	if ((size_t)snprintf(path, len, "%s/%s", dir, file) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* ---- rng_quality through a kept fd ------------------------------------ */

/* A sysfs attribute is read from offset 0 each time. */
static int fd_read_quality(int fd, unsigned int *q)
{
	char buf[16];
	long long v = 0;
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (parse_ll(buf, 0, 1024, &v) < 0)
		return -EBADMSG;
	*q = (unsigned int)v;
	return 0;
}

/* ftruncate() is a no-op on sysfs and keeps a test fixture exact. */
static int fd_write_quality(int fd, unsigned int q)
{
	char buf[16];
	int n = snprintf(buf, sizeof(buf), "%u\n", q);

	if (ftruncate(fd, 0) < 0 && errno != EINVAL && errno != EPERM)
		return -errno;
	if (pwrite(fd, buf, (size_t)n, 0) != n)
		return errno ? -errno : -EIO;
	return 0;
}

static int open_quality(const char *sysfs_dir, int flags)
{
	char path[512];
	int fd, r;

	r = sysfs_path(path, sizeof(path), sysfs_dir, "rng_quality");
	if (r < 0)
		return r;
	fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	return fd;
}

/* rng_selected, 0 when the kernel has none (it came with 5.5). */
static bool read_selected(const char *sysfs_dir)
{
	char path[512], buf[8];

	if (sysfs_path(path, sizeof(path), sysfs_dir, "rng_selected") < 0 ||
	    read_text_file(path, buf, sizeof(buf)) < 0)
		return false;
	return strcmp(buf, "1") == 0;
}

/* Is @device the current hw_random device?  0 no, 1 yes, -errno. */
static int is_current(const char *sysfs_dir, const char *device, char *cur,
		      size_t cur_len)
{
	int r = hwrandom_current(sysfs_dir, cur, cur_len);

	if (r == -ENODEV) {
		snprintf(cur, cur_len, "none");
		return 0;
	}
	if (r < 0)
		return r;
	return strcmp(cur, device) == 0;
}

/* ---- the machine-wide record and lock (hwrng_lock.h) ------------------ */

/* Write @rec to the runtime record (if kept) and the lock's.  The runtime
 * record failing is a note in @note; the lock's is the one other
 * instances read, and failing it is an error. */
static int records_write(struct hwrng_gate *g, const struct hwrng_record *rec,
			 char *note, size_t note_len)
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
static int find_record(const struct hwrng_gate *g, const char *device,
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

/* ---- take / release / restore ----------------------------------------- */

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

static void gate_close(struct hwrng_gate *g, bool remove_lock)
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

	r = is_current(g->sysfs_dir, g->device, cur, sizeof(cur));
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
	r = is_current(g->sysfs_dir, g->device, cur, sizeof(cur));
	if (r < 0)
		return r;
	if (r == 1) {
		r = fd_read_quality(g->fd, &q);
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

	r = fd_read_quality(g->fd, &q);
	if (r < 0) {
		say(why, why_len, "%s/rng_quality: %s", g->sysfs_dir,
		    strerror(-r));
		return r;
	}
	if (q == 0) {
		/* The lock is ours: a record is its gone owner's. */
		if (find_record(g, cur, &old) < 0) {
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
					    : "",
				 old.quality);
	} else {
		snprintf(rec.device, sizeof(rec.device), "%s", cur);
		rec.quality = q;
		rec.selected = read_selected(g->sysfs_dir);
	}
	rec.failed = false;
	strcpy(g->device, rec.device);
	g->original = rec.quality;
	g->selected = rec.selected;

	/* Recorded before the 0 is written: a crash at any point leaves the
	 * original or a record that puts it back. */
	r = records_write(g, &rec, note + strlen(note),
			  sizeof(note) - strlen(note));
	if (r < 0) {
		say(why, why_len, "recording rng_quality %u of %s in %s: %s",
		    rec.quality, cur, g->lock.path, strerror(-r));
		return r;
	}
	if (!adopted) {
		r = fd_write_quality(g->fd, 0);
		if (r < 0) {
			say(why, why_len, "setting %s/rng_quality to 0: %s",
			    g->sysfs_dir, strerror(-r));
			goto fail_record;
		}
	}
	r = keep_current(g, why, why_len);
	if (r < 0)
		goto fail_restore;
	say(why, why_len, "the kernel's own credit for %s (rng_quality %u) is "
	    "handed over: 0 while rngfeed tests it%s",
	    g->device, g->original, note);
	return HWRNG_GATE_TAKEN;

fail_restore:
	/* Put back what was there; the kernel re-elects as before. */
	if (fd_write_quality(g->fd, g->original) == 0 && g->selected)
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
	char cur[HWRANDOM_NAME_LEN];
	unsigned int q = 0;
	int r;

	hwrng_gate_init(g);
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
	r = open_quality(sysfs_dir, O_RDWR);
	if (r == -ENOENT) {
		say(why, why_len,
		    "no rng_quality (kernel before 5.18): the kernel's own "
		    "credit for %s cannot be handed over",
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
			fd_read_quality(g->fd, &q);
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
		gate_close(g, true);
		return r;
	}
fail:
	gate_close(g, true);
	return r;
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

	r = is_current(sysfs_dir, device, cur, sizeof(cur));
	if (r == 0) {
		say(msg, msg_len,
		    "the current hw_random device is now %s, not %s: %s's "
		    "rng_quality not put back to %u (it keeps 0 until it "
		    "registers again)",
		    cur, device, device, original);
		return 1;
	}
	if (r > 0)
		r = fd_read_quality(fd, &q);
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
	r = fd_write_quality(fd, original);
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
	    find_record(g, cur, &rec) == 0 && !rec.failed &&
	    put_back(g->sysfs_dir, g->fd, rec.device, rec.quality,
		     rec.selected, msg, msg_len) >= 0) {
		hwrng_lock_clear(&g->lock);
		gate_close(g, true);
		return;
	}
	gate_close(g, false);
}

void hwrng_gate_release(struct hwrng_gate *g, bool failed, char *msg,
			size_t msg_len)
{
	say(msg, msg_len, "%s", "");
	if (g->fd < 0)
		return;
	if (g->waiting) {
		waiter_release(g, msg, msg_len);
		return;
	}
	if (failed) {
		struct hwrng_record rec = { .quality = g->original,
				      .selected = g->selected,
				      .failed = true };
		char note[8] = "";
		int r;

		strcpy(rec.device, g->device);
		r = records_write(g, &rec, note, sizeof(note));
		say(msg, msg_len,
		    "%s failed its health tests: not handed back to the "
		    "kernel's own crediting, its rng_quality stays 0 (it was "
		    "%u)%s; to hand it back: echo %u > %s/rng_quality",
		    g->device, g->original,
		    r < 0 || note[0] ? " (marking the record failed did not "
				       "work: ExecStopPost= will hand it back)"
				     : "",
		    g->original, g->sysfs_dir);
		gate_close(g, false);
		return;
	}
	if (hwrng_lock_others_wait(&g->lock) == 1) {
		/* The lock's record stays for the waiter, which adopts it:
		 * no hand-back in between. */
		say(msg, msg_len,
		    "%s: rng_quality stays 0, handed over to another rngfeed "
		    "that waits for it (it was %u)",
		    g->device, g->original);
		hwrng_record_clear(g->state_fd, g->state_path);
		gate_close(g, false);
		return;
	}
	put_back(g->sysfs_dir, g->fd, g->device, g->original, g->selected,
		 msg, msg_len);
	hwrng_record_clear(g->state_fd, g->state_path);
	if (g->lock.owner)
		hwrng_lock_clear(&g->lock);
	gate_close(g, true);
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
		r = find_record(&g, cur, &rec);
	if (r == -ENOENT || r == -ENODATA) {
		r = 0;
		goto out_remove;
	}
	if (r < 0) {
		say(msg, msg_len, "%s: %s", state_path,
		    r == -EBADMSG ? "not a record of rngfeed's" : strerror(-r));
		goto out;
	}
	if (rec.failed) {
		say(msg, msg_len,
		    "%s failed its health tests: rng_quality not put back to "
		    "%u; to hand it back: echo %u > %s/rng_quality",
		    rec.device, rec.quality, rec.quality, sysfs_dir);
		goto out;
	}
	g.fd = open_quality(sysfs_dir, O_RDWR);
	if (g.fd < 0 && is_current(sysfs_dir, rec.device, cur,
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
	gate_close(&g, true);
	return r;
out:
	gate_close(&g, false);
	return r;
}

void hwrng_gate_describe_kernel(const char *sysfs_dir, char *buf, size_t len)
{
	char cur[HWRANDOM_NAME_LEN];
	unsigned int q = 0;
	int fd, r;

	r = hwrandom_current(sysfs_dir, cur, sizeof(cur));
	if (r == -ENODEV || r == -ENOENT) {
		say(buf, len, "no hw_random device");
		return;
	}
	if (r < 0) {
		say(buf, len, "hw_random: %s/rng_current: %s", sysfs_dir,
		    strerror(-r));
		return;
	}
	fd = open_quality(sysfs_dir, O_RDONLY);
	r = fd < 0 ? fd : fd_read_quality(fd, &q);
	if (fd >= 0)
		close(fd);
	if (r == -ENOENT)
		say(buf, len,
		    "the kernel may credit %s itself (no rng_quality: kernel "
		    "before 5.18)",
		    cur);
	else if (r < 0)
		say(buf, len, "%s: rng_quality: %s", cur, strerror(-r));
	else if (q == 0)
		say(buf, len,
		    "the kernel credits nothing itself from %s (rng_quality 0)",
		    cur);
	else
		say(buf, len, "the kernel credits %s itself at %u/1024", cur, q);
}

const char *hwrng_gate_state_path(char *buf, size_t len)
{
	const char *dir = getenv("RUNTIME_DIRECTORY");
	size_t n = dir ? strcspn(dir, ":") : 0;

	if (n == 0 || dir[0] != '/' ||
	    (size_t)snprintf(buf, len, "%.*s/hwrng-quality", (int)n, dir) >= len)
		snprintf(buf, len, "%s", HWRNG_GATE_STATE_PATH);
	return buf;
}

int hwrng_gate_tick(struct hwrng_gate *g, char *msg, size_t msg_len)
{
	char cur[HWRANDOM_NAME_LEN];
	int r;

	say(msg, msg_len, "%s", "");
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
		gate_close(g, true);
	return r < 0 || r == HWRNG_GATE_TAKEN ? r : HWRNG_GATE_FOUND_ZERO;
}
