/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hw_random hand-over's record: what rng_quality read before rngfeed
 * set it to 0, as a few "key=value" lines:
 *
 *   device=virtio_rng.0
 *   quality=1024
 *   selected=0
 *   state=held            (or "failed", or "host": not to be handed
 *                         back; "host": a confidential guest's
 *                         host-backed device, confidential.h)
 *
 * It is kept in two places: the instance's runtime directory (the unit's
 * ExecStopPost= reads it) and the machine-wide lock file (hwrng_lock.h),
 * where any other instance finds it.  No logging; -errno returns.
 */
#ifndef RNGFEED_HWRNG_RECORD_H
#define RNGFEED_HWRNG_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include "rngfeed/hwrandom.h"

struct hwrng_record {
	char device[HWRANDOM_NAME_LEN];
	unsigned int quality; /* 1..1024: 0 is never recorded */
	bool selected;        /* rng_selected read 1 */
	bool failed;
	bool host;            /* held as host-provided in a confidential
			       * guest: not handed back either */
};

/* The text of @rec in @buf: its length, or -ENAMETOOLONG. */
int hwrng_record_format(const struct hwrng_record *rec, char *buf,
			size_t len);
/* Replace the content of the open record @fd with @rec.  0 or -errno. */
int hwrng_record_write_fd(int fd, const struct hwrng_record *rec);
/* Parse @text (changed in place).  0, -ENODATA for an empty one (a
 * record released after a privilege drop kept it from being removed),
 * -EBADMSG for one that is not ours. */
int hwrng_record_parse(char *text, struct hwrng_record *rec);
/* Read the record at @path: 0, -ENOENT, -ENODATA, -EBADMSG, -errno. */
int hwrng_record_read(const char *path, struct hwrng_record *rec);
/* Open (creating it, and its directory outside systemd) the record at
 * @path read-write: the fd, or -errno. */
int hwrng_record_open(const char *path);
/* Empty @fd, then remove @path: 0 if either worked. */
int hwrng_record_clear(int fd, const char *path);

/*
 * Where this instance records what it found: hwrng-quality in
 * $RUNTIME_DIRECTORY when systemd (or a test) sets it, its first entry if
 * it lists several, else HWRNG_GATE_STATE_PATH.  Returns @buf.
 */
const char *hwrng_record_path(char *buf, size_t len);

#endif
