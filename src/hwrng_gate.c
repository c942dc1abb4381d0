// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The hand-over of the kernel's own hw_random credit (see hwrng_gate.h for
 * what the kernel does with rng_quality).
 *
 * The record is a few "key=value" lines:
 *
 *   device=virtio_rng.0
 *   quality=1024
 *   selected=0
 *   state=held            (or "failed": not to be handed back)
 *
 * It is written before rng_quality is set to 0, so a crash at any point
 * leaves either the original value or a record that puts it back.
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
#include "rngfeed/util.h"

struct record {
	char device[HWRANDOM_NAME_LEN];
	unsigned int quality;
	bool selected;
	bool failed;
};

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

/* ---- the record ------------------------------------------------------- */

static int record_format(const struct record *rec, char *buf, size_t len)
{
	int n = snprintf(buf, len, "device=%s\nquality=%u\nselected=%d\nstate=%s\n",
			 rec->device, rec->quality, rec->selected,
			 rec->failed ? "failed" : "held");

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : n;
}

static int record_write_fd(int fd, const struct record *rec)
{
	char buf[256];
	int n = record_format(rec, buf, sizeof(buf));

	if (n < 0)
		return n;
	if (ftruncate(fd, 0) < 0)
		return -errno;
	if (pwrite(fd, buf, (size_t)n, 0) != n)
		return errno ? -errno : -EIO;
	return 0;
}

/* Parse a record.  -ENODATA for an empty one (a record released after a
 * privilege drop that kept it from being removed), -EBADMSG for one that
 * is not ours. */
static int record_parse(char *text, struct record *rec)
{
	char *save = NULL, *line;
	unsigned int seen = 0;
	long long v = 0;

	*rec = (struct record){ 0 };
	if (!*text)
		return -ENODATA;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');

		if (!eq)
			return -EBADMSG;
		*eq++ = '\0';
		if (strcmp(line, "device") == 0) {
			if (!*eq || strlen(eq) >= sizeof(rec->device) ||
			    strchr(eq, ' ') || strcmp(eq, "none") == 0)
				return -EBADMSG;
			strcpy(rec->device, eq);
			seen |= 1;
		} else if (strcmp(line, "quality") == 0) {
			/* 0 is never recorded: there was nothing to take. */
			if (parse_ll(eq, 1, 1024, &v) < 0)
				return -EBADMSG;
			rec->quality = (unsigned int)v;
			seen |= 2;
		} else if (strcmp(line, "selected") == 0) {
			if (strcmp(eq, "0") && strcmp(eq, "1"))
				return -EBADMSG;
			rec->selected = eq[0] == '1';
			seen |= 4;
		} else if (strcmp(line, "state") == 0) {
			if (strcmp(eq, "held") && strcmp(eq, "failed"))
				return -EBADMSG;
			rec->failed = strcmp(eq, "failed") == 0;
			seen |= 8;
		} else {
			return -EBADMSG;
		}
	}
	return seen == 15 ? 0 : -EBADMSG;
}

/* Read the record at @path.  0, -ENOENT (none), -ENODATA (empty),
 * -EBADMSG, or -errno. */
static int record_read(const char *path, struct record *rec)
{
	char buf[256];
	ssize_t n;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r;
	if ((size_t)n == sizeof(buf) - 1)
		return -EBADMSG;
	buf[n] = '\0';
	return record_parse(buf, rec);
}

/* Open (creating it, and its directory outside systemd) the record. */
static int record_open(const char *path)
{
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 && errno == ENOENT) {
		char dir[256], *slash;

		if (strlen(path) >= sizeof(dir))
			return -ENAMETOOLONG;
		strcpy(dir, path);
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return -ENOENT;
		*slash = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return -errno;
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			  0600);
	}
	if (fd < 0)
		return -errno;
	return fd;
}

/* Empty, then remove, the record.  Emptying works through the kept fd
 * after the privilege drop; removing may not, and need not: an empty
 * record is no record.  0 if either worked. */
static int record_clear(int fd, const char *path)
{
	int r = fd >= 0 ? ftruncate(fd, 0) : -1;

	if (path && *path && unlink(path) == 0)
		r = 0;
	return r < 0 ? -errno : 0;
}

/* ---- take / release / restore ----------------------------------------- */

void hwrng_gate_init(struct hwrng_gate *g)
{
	*g = (struct hwrng_gate){ .fd = -1, .state_fd = -1 };
}

bool hwrng_gate_held(const struct hwrng_gate *g)
{
	return g->fd >= 0;
}

static void gate_close(struct hwrng_gate *g)
{
	if (g->fd >= 0)
		close(g->fd);
	if (g->state_fd >= 0)
		close(g->state_fd);
	g->fd = -1;
	g->state_fd = -1;
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

int hwrng_gate_take(struct hwrng_gate *g, const char *sysfs_dir,
		    const char *state_path, char *why, size_t why_len)
{
	struct record rec = { 0 }, old = { 0 };
	char cur[HWRANDOM_NAME_LEN], note[160] = "";
	bool adopted = false;
	unsigned int q = 0;
	int r;

	hwrng_gate_init(g);
	say(why, why_len, "%s", "");
	if (strlen(sysfs_dir) >= sizeof(g->sysfs_dir))
		return -ENAMETOOLONG;
	strcpy(g->sysfs_dir, sysfs_dir);
	if (state_path && strlen(state_path) >= sizeof(g->state_path))
		return -ENAMETOOLONG;

	r = hwrandom_current(sysfs_dir, cur, sizeof(cur));
	if (r == -ENODEV || r == -ENOENT) {
		say(why, why_len, "no hw_random device");
		return 0;
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
		return 0;
	}
	if (r < 0) {
		say(why, why_len, "%s/rng_quality: %s", sysfs_dir, strerror(-r));
		return r;
	}
	g->fd = r;
	r = fd_read_quality(g->fd, &q);
	if (r < 0) {
		say(why, why_len, "%s/rng_quality: %s", sysfs_dir, strerror(-r));
		goto fail;
	}
	if (q == 0) {
		/* Ours from an earlier run, or someone else's 0? */
		if (state_path && *state_path &&
		    record_read(state_path, &old) == 0 &&
		    strcmp(old.device, cur) == 0) {
			rec = old;
			adopted = true;
			snprintf(note, sizeof(note),
				 "; kept from an earlier run%s, which set it "
				 "to 0 (was %u)",
				 old.failed ? " in which it failed its tests" : "",
				 old.quality);
		} else {
			say(why, why_len,
			    "rng_quality of %s is already 0: the kernel "
			    "credits nothing from it itself",
			    cur);
			gate_close(g);
			return 0;
		}
	} else {
		snprintf(rec.device, sizeof(rec.device), "%s", cur);
		rec.quality = q;
		rec.selected = read_selected(sysfs_dir);
	}
	rec.failed = false;
	strcpy(g->device, rec.device);
	g->original = rec.quality;
	g->selected = rec.selected;

	if (state_path && *state_path) {
		strcpy(g->state_path, state_path);
		r = record_open(state_path);
		if (r >= 0) {
			g->state_fd = r;
			r = record_write_fd(g->state_fd, &rec);
		}
		if (r < 0) {
			snprintf(note, sizeof(note),
				 "; warning: could not record it in %s (%s): "
				 "after a crash it stays 0",
				 state_path, strerror(-r));
			if (g->state_fd >= 0) {
				close(g->state_fd);
				g->state_fd = -1;
			}
			g->state_path[0] = '\0';
		}
	}
	if (!adopted) {
		r = fd_write_quality(g->fd, 0);
		if (r < 0) {
			say(why, why_len, "setting %s/rng_quality to 0: %s",
			    sysfs_dir, strerror(-r));
			goto fail_record;
		}
	}
	r = keep_current(g, why, why_len);
	if (r < 0)
		goto fail_restore;
	say(why, why_len, "the kernel's own credit for %s (rng_quality %u) is "
	    "handed over: 0 while rngfeed tests it%s",
	    g->device, g->original, note);
	return 1;

fail_restore:
	/* Put back what was there; the kernel re-elects as before. */
	if (fd_write_quality(g->fd, g->original) == 0 && g->selected)
		hwrandom_select(sysfs_dir, g->device);
fail_record:
	if (g->state_fd >= 0)
		record_clear(g->state_fd, g->state_path);
fail:
	gate_close(g);
	return r;
}

void hwrng_gate_release(struct hwrng_gate *g, bool failed, char *msg,
			size_t msg_len)
{
	char cur[HWRANDOM_NAME_LEN];
	unsigned int q = 0;
	int r;

	say(msg, msg_len, "%s", "");
	if (g->fd < 0)
		return;
	if (failed) {
		struct record rec = { .quality = g->original,
				      .selected = g->selected,
				      .failed = true };

		strcpy(rec.device, g->device);
		r = g->state_fd >= 0 ? record_write_fd(g->state_fd, &rec) : 0;
		say(msg, msg_len,
		    "%s failed its health tests: not handed back to the "
		    "kernel's own crediting, its rng_quality stays 0 (it was "
		    "%u)%s; to hand it back: echo %u > %s/rng_quality",
		    g->device, g->original,
		    r < 0 ? " (marking the record failed did not work: "
			    "ExecStopPost= will hand it back)" : "",
		    g->original, g->sysfs_dir);
		goto out;
	}
	r = is_current(g->sysfs_dir, g->device, cur, sizeof(cur));
	if (r == 0) {
		say(msg, msg_len,
		    "the current hw_random device is now %s, not %s: %s's "
		    "rng_quality not put back to %u (it keeps 0 until it "
		    "registers again)",
		    cur, g->device, g->device, g->original);
		goto clear;
	}
	if (r > 0)
		r = fd_read_quality(g->fd, &q);
	if (r < 0) {
		say(msg, msg_len, "reading the hw_random state: %s; %s's "
		    "rng_quality not put back to %u", strerror(-r), g->device,
		    g->original);
		goto clear;
	}
	if (q != 0) {
		say(msg, msg_len,
		    "rng_quality of %s is %u, not 0: changed by someone else "
		    "(or the device registered again), left as it is",
		    g->device, q);
		goto clear;
	}
	r = fd_write_quality(g->fd, g->original);
	if (r < 0) {
		say(msg, msg_len, "putting back rng_quality %u of %s: %s",
		    g->original, g->device, strerror(-r));
		goto clear;
	}
	/* Writing rng_quality forgets an explicit choice of device. */
	if (g->selected)
		hwrandom_select(g->sysfs_dir, g->device);
	say(msg, msg_len,
	    "%s handed back to the kernel's own crediting at rng_quality %u",
	    g->device, g->original);
clear:
	record_clear(g->state_fd, g->state_path);
out:
	gate_close(g);
}

int hwrng_gate_restore(const char *sysfs_dir, const char *state_path,
		       char *msg, size_t msg_len)
{
	char cur[HWRANDOM_NAME_LEN];
	struct record rec = { 0 };
	unsigned int q = 0;
	int fd = -1, r;

	say(msg, msg_len, "%s", "");
	r = record_read(state_path, &rec);
	if (r == -ENOENT || r == -ENODATA) {
		if (r == -ENODATA)
			unlink(state_path);
		say(msg, msg_len,
		    "no hand-over record in %s: nothing to put back (a clean "
		    "stop leaves none)",
		    state_path);
		return 0;
	}
	if (r < 0) {
		say(msg, msg_len, "%s: %s", state_path,
		    r == -EBADMSG ? "not a record of rngfeed's" : strerror(-r));
		return r;
	}
	if (rec.failed) {
		say(msg, msg_len,
		    "%s failed its health tests: rng_quality not put back to "
		    "%u; to hand it back: echo %u > %s/rng_quality",
		    rec.device, rec.quality, rec.quality, sysfs_dir);
		return 0;
	}
	r = is_current(sysfs_dir, rec.device, cur, sizeof(cur));
	if (r == 0) {
		say(msg, msg_len,
		    "the current hw_random device is %s, not %s: nothing put "
		    "back", cur, rec.device);
		goto clear;
	}
	if (r > 0) {
		fd = open_quality(sysfs_dir, O_RDWR);
		r = fd;
	}
	if (r >= 0)
		r = fd_read_quality(fd, &q);
	if (r < 0) {
		say(msg, msg_len, "%s/rng_quality: %s", sysfs_dir, strerror(-r));
		goto out;
	}
	if (q != 0) {
		say(msg, msg_len,
		    "rng_quality of %s is %u, not 0: nothing to put back",
		    rec.device, q);
		goto clear;
	}
	r = fd_write_quality(fd, rec.quality);
	if (r < 0) {
		say(msg, msg_len, "putting back rng_quality %u of %s: %s",
		    rec.quality, rec.device, strerror(-r));
		goto out;
	}
	if (rec.selected)
		hwrandom_select(sysfs_dir, rec.device);
	say(msg, msg_len, "%s: rng_quality put back to %u", rec.device,
	    rec.quality);
clear:
	r = 0;
	if (unlink(state_path) < 0 && errno != ENOENT)
		r = -errno;
out:
	if (fd >= 0)
		close(fd);
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
