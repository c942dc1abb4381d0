/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hand-over's insides, shared by hwrng_gate.c (take, follow, the
 * records) and hwrng_gate_release.c (release, put back, restore).  Not a
 * public header.
 */
#ifndef RNGFEED_HWRNG_GATE_INTERNAL_H
#define RNGFEED_HWRNG_GATE_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "rngfeed/hwrandom.h"
#include "rngfeed/hwrng_gate.h"
#include "rngfeed/hwrng_record.h"

static inline void say(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline void say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* Is @device held back as the host's (hwrng_gate_trust)? */
static inline bool host_held(const struct hwrng_gate *g, const char *device)
{
	return g->trust.confidential &&
	       hwrandom_host_backed(device, g->trust.tpm_own, g->trust.all_own);
}

/* Close the gate's fds and the lock (removing its file if @remove_lock). */
void hwrng_gate_close(struct hwrng_gate *g, bool remove_lock);
/* Write @rec to the runtime record (if kept) and the lock's; a note on
 * the runtime record's failure in @note.  0 or -errno. */
int hwrng_gate_records_write(struct hwrng_gate *g,
			     const struct hwrng_record *rec, char *note,
			     size_t note_len);
/* A record left for @device by an owner that is gone.  0 or -ENOENT. */
int hwrng_gate_find_record(const struct hwrng_gate *g, const char *device,
			   struct hwrng_record *rec);

#endif
