/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How each kind of USB serial TRNG is spoken to, and what it is credited.
 *
 * A profile names a kind of stick: the USB ids it comes with (its models),
 * what it must be told so that its raw noise, not its whitened output,
 * comes down the line (start), how it is left for the next user (stop),
 * and how its raw bytes become samples (decode).  Each one carries the
 * min-entropy H per byte its health tests assume and a credit ceiling
 * with the reason for it; docs/plugged.md explains the figures.
 *
 *   onerng   OneRNG (1d50:6086, cdc_acm): "cmd1" (avalanche noise, its
 *            CRC whitener off), "cmdw" (its pool flushed), "cmdv" (the
 *            version, which proves it answers), "cmdO" (run); at stop
 *            "cmdo", "cmd0", "cmdw": paused, whitened again, pool empty.
 *   truerng  TrueRNG (04d8:f5fe: v1-v3, whitened, no modes) and the Pro
 *            models (16d0:0aa0, 04d8:ebb5): a baud-rate knock (110, 300,
 *            110) then 19200 selects their raw binary mode, 10-bit ADC
 *            samples of both generators in 4-byte packets whose sequence
 *            codes are checked (a stream in any other mode fails them),
 *            the low 4 bits of both samples a byte sample; data flows
 *            while DTR is set.
 *   generic  any tty that streams: no commands, credit 0 unless given.
 *
 * The session keeps what the start learned and the decoder's place.  No
 * logging, no globals but the constant tables.
 */
#ifndef RNGFEED_SERIAL_PROFILE_H
#define RNGFEED_SERIAL_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rngfeed/serial_tty.h"

struct serial_model {
	uint16_t vendor, product;
	const char *name;        /* "OneRNG", "TrueRNGpro V2" */
	bool raw_mode;           /* the profile puts it in a raw mode */
	unsigned int credit;     /* its ceiling, bits per 1024 raw bits */
};

struct serial_session;

struct serial_profile {
	const char *name;        /* as -O serial:profile=NAME takes it */
	const char *models_text; /* "OneRNG (1d50:6086)", for --list */
	/* H per byte sample the health tests assume. */
	double min_entropy;
	/* The ceiling when the USB id is not one of its models (a path the
	 * user named with profile=): bits per 1024 raw bits. */
	unsigned int credit;
	const char *credit_reason;
	const struct serial_model *models; /* ended by a zero vendor */
	/* Put the device where its raw noise streams; -errno with @why. */
	int (*start)(struct serial_session *s, char *why, size_t why_len);
	/* Leave it as found (best effort: it may be gone). */
	void (*stop)(struct serial_session *s);
	/* Bytes from the line into samples (@out has room for @n); the
	 * count, or -EBADMSG with @why when the line is not what the mode
	 * sends.  NULL: the bytes are the samples. */
	ssize_t (*decode)(struct serial_session *s, const uint8_t *in,
			  size_t n, uint8_t *out, char *why, size_t why_len);
};

/* The profiles, in the order the documentation lists them; NULL-ended. */
extern const struct serial_profile *const serial_profiles[];
/* The generic profile: an unknown tty. */
extern const struct serial_profile serial_profile_generic;

/* By name, or NULL. */
const struct serial_profile *serial_profile_find(const char *name);
/* The profile and model with this USB id, or NULL. */
const struct serial_profile *serial_profile_for_usb(uint16_t vendor,
						     uint16_t product,
						     const struct serial_model **model);
/* @p's model with this USB id, or NULL. */
const struct serial_model *serial_profile_model(const struct serial_profile *p,
						uint16_t vendor, uint16_t product);

/* A raw-binary packet's sequence errors tolerated per window of bytes
 * before the line is called out of step (decode's -EBADMSG). */
#define SERIAL_DECODE_WINDOW 4096u
#define SERIAL_DECODE_MAX_BAD 8u

struct serial_session {
	struct serial_port port;
	const struct serial_profile *profile;
	const struct serial_model *model; /* NULL: not one of its USB ids */
	bool raw;                  /* the start selected the raw mode */
	char detail[64];           /* what the start found ("Version 3") */
	/* Data that came with the start's answer, read first. */
	uint8_t pending[96];
	size_t pending_len;
	/* The raw-binary decoder: the sequence code expected next, the
	 * sample being put together, and the window's counts. */
	unsigned int next_seq;
	uint16_t sample;
	uint8_t nibble;            /* generator 1's, until generator 2's */
	bool synced;
	size_t window_bytes, window_bad;
	uint64_t out_of_step;      /* bytes dropped for a wrong code */
	uint64_t line_bytes;       /* read from the line, data or not */
};

/* A session on @port: zeroed, then profile and model set. */
void serial_session_init(struct serial_session *s, struct serial_port port,
			 const struct serial_profile *profile,
			 const struct serial_model *model);
int serial_session_start(struct serial_session *s, char *why, size_t why_len);
void serial_session_stop(struct serial_session *s);
/*
 * Up to @len samples into @buf, waiting at most @timeout_ms for the
 * line: > 0 samples, -EAGAIN when nothing came, -ENODEV when the device
 * went away, -EINTR, -EBADMSG (with @why) when the line is out of step.
 * The buffer that held line bytes is wiped.
 */
ssize_t serial_session_read(struct serial_session *s, uint8_t *buf, size_t len,
			    int timeout_ms, char *why, size_t why_len);

/* The OneRNG's answer to "cmdv": "Version N" found in @buf[0..@len)
 * followed by a line end; its offset past that line end, or -1 while it
 * is not complete.  @version gets "Version N". */
ssize_t serial_onerng_version(const uint8_t *buf, size_t len, char *version,
			      size_t version_len);

#endif
