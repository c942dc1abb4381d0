// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The USB serial TRNG profiles: OneRNG, TrueRNG, generic.  See
 * include/rngfeed/serial_profile.h, and docs/plugged.md for the figures.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rngfeed/serial_profile.h"

/* How long a command may take to go out, and the answers to come. */
#define CMD_TIMEOUT_MS 500
#define STOP_CMD_TIMEOUT_MS 100
#define VERSION_TIMEOUT_MS 2000
/* Data without the version's line among it: not a OneRNG that listens
 * (a stream that never stops would keep the wait from ever ending, and
 * from seeing a stop between reads that never block). */
#define VERSION_MAX_BYTES 4096
/* What may still be on its way after a pause, before the flush. */
#define SETTLE_MS 100
/* After "cmdo": the line is drained until it is quiet this long (a stick
 * has a few USB packets under way; a line with a buffer, more), for at
 * most DRAIN_MAX_MS. */
#define QUIET_MS 100
#define DRAIN_MAX_MS 5000
/* Between the steps of the TrueRNGpro's knock. */
#define KNOCK_STEP_MS 100

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void serial_session_init(struct serial_session *s, struct serial_port port,
			 const struct serial_profile *profile,
			 const struct serial_model *model)
{
	memset(s, 0, sizeof(*s));
	s->port = port;
	s->profile = profile;
	s->model = model;
}

/* ---- OneRNG -------------------------------------------------------------------- */

/*
 * Its firmware reads "cmd" and one character: a hex digit is a mask (bit
 * 0 turns the CRC whitener off, bit 1 adds the RF source, bit 2 turns the
 * avalanche source off), O runs, o pauses, w flushes its pool, v sends
 * its version.  Anything else resets its parser, so the newline after
 * each command is harmless.
 */
static int onerng_cmd(struct serial_session *s, char c, int timeout_ms)
{
	char cmd[5] = { 'c', 'm', 'd', c, '\n' };

	return s->port.ops->write(s->port.ctx, cmd, sizeof(cmd), timeout_ms);
}

ssize_t serial_onerng_version(const uint8_t *buf, size_t len, char *version,
			      size_t version_len)
{
	static const char key[] = "Version";
	size_t k = sizeof(key) - 1;

	for (size_t i = 0; i + k <= len; i++) {
		size_t end;

		if (memcmp(buf + i, key, k) != 0)
			continue;
		for (end = i + k; end < len && buf[end] != '\n'; end++)
			;
		if (end == len)
			return -1;
		/* "Version 3\r": keep the printable part. */
		size_t n = 0;

		for (size_t j = i; j < end && n + 1 < version_len; j++)
			if (buf[j] >= 0x20 && buf[j] < 0x7f)
				version[n++] = (char)buf[j];
		version[n] = '\0';
		return (ssize_t)(end + 1);
	}
	return -1;
}

/*
 * Read and drop until nothing comes for QUIET_MS: what the stick sent
 * before it paused is not ours to test, and would push its answer out of
 * reach.  0, -EBUSY when it never goes quiet, or the line's error.  A 1 ms
 * pause between reads gives a stop's wake signal a wait to end (reads of
 * a line that is never quiet never block).
 */
static int drain_until_quiet(struct serial_session *s)
{
	const struct serial_port_ops *ops = s->port.ops;
	long long deadline = now_ms() + DRAIN_MAX_MS;
	uint8_t junk[1024];
	int r = 0;

	for (;;) {
		ssize_t n = ops->read(s->port.ctx, junk, sizeof(junk), QUIET_MS);

		if (n == -EAGAIN)
			break;
		if (n < 0) {
			r = (int)n;
			break;
		}
		if (now_ms() >= deadline) {
			r = -EBUSY;
			break;
		}
		r = ops->pause(s->port.ctx, 1);
		if (r < 0)
			break;
	}
	explicit_bzero(junk, sizeof(junk));
	return r;
}

static int onerng_start(struct serial_session *s, char *why, size_t why_len)
{
	const struct serial_port_ops *ops = s->port.ops;
	uint8_t got[sizeof(s->pending)];
	size_t have = 0, seen = 0;
	long long deadline;
	int r;

	/* Paused, and what was under way dropped: it was whitened. */
	r = onerng_cmd(s, 'o', CMD_TIMEOUT_MS);
	if (r == 0) {
		r = drain_until_quiet(s);
		if (r == -EBUSY) {
			snprintf(why, why_len,
				 "it kept sending for %d s after cmdo (not a "
				 "OneRNG?)",
				 DRAIN_MAX_MS / 1000);
			return r;
		}
	}
	if (r == 0)
		r = ops->flush_input(s->port.ctx);
	/* Avalanche noise only, its whitener off; its pool emptied of
	 * whitened bytes; the version (it answers only if it is a OneRNG);
	 * then run. */
	if (r == 0)
		r = onerng_cmd(s, '1', CMD_TIMEOUT_MS);
	if (r == 0)
		r = onerng_cmd(s, 'w', CMD_TIMEOUT_MS);
	if (r == 0)
		r = onerng_cmd(s, 'v', CMD_TIMEOUT_MS);
	if (r == 0)
		r = onerng_cmd(s, 'O', CMD_TIMEOUT_MS);
	if (r < 0) {
		snprintf(why, why_len, "cannot send its commands: %s",
			 strerror(-r));
		return r;
	}
	s->raw = true;
	/* Its answer comes first.  Stray bytes before it are dropped; the
	 * bytes after its line end are the first raw data. */
	deadline = now_ms() + VERSION_TIMEOUT_MS;
	while (now_ms() < deadline && seen < VERSION_MAX_BYTES) {
		ssize_t n, at;

		if (have == sizeof(got)) {
			/* No version in a whole buffer: keep the tail,
			 * which may hold the start of it. */
			memmove(got, got + sizeof(got) / 2, sizeof(got) / 2);
			have = sizeof(got) / 2;
		}
		n = ops->read(s->port.ctx, got + have, sizeof(got) - have, 100);
		if (n == -EAGAIN)
			continue;
		if (n < 0) {
			explicit_bzero(got, sizeof(got));
			snprintf(why, why_len, "waiting for its version: %s",
				 strerror((int)-n));
			return (int)n;
		}
		have += (size_t)n;
		seen += (size_t)n;
		at = serial_onerng_version(got, have, s->detail,
					   sizeof(s->detail));
		if (at >= 0) {
			s->pending_len = have - (size_t)at;
			memcpy(s->pending, got + at, s->pending_len);
			explicit_bzero(got, sizeof(got));
			return 0;
		}
	}
	explicit_bzero(got, sizeof(got));
	if (seen >= VERSION_MAX_BYTES) {
		snprintf(why, why_len,
			 "no answer to cmdv in the first %d bytes it sent (not "
			 "a OneRNG, or a firmware without it)",
			 VERSION_MAX_BYTES);
		return -EPROTO;
	}
	snprintf(why, why_len,
		 "no answer to cmdv within %d s (not a OneRNG, or a firmware "
		 "without it)",
		 VERSION_TIMEOUT_MS / 1000);
	return -ETIMEDOUT;
}

/* Paused, its whitener on (the default, "cmd0"), its pool of raw bytes
 * flushed: the next user gets what a OneRNG gives when plugged in. */
static void onerng_stop(struct serial_session *s)
{
	if (onerng_cmd(s, 'o', STOP_CMD_TIMEOUT_MS) == 0 &&
	    onerng_cmd(s, '0', STOP_CMD_TIMEOUT_MS) == 0)
		(void)onerng_cmd(s, 'w', STOP_CMD_TIMEOUT_MS);
}

static const struct serial_model onerng_models[] = {
	{ 0x1d50, 0x6086, "OneRNG", true, 768 },
	{ 0 },
};

static const struct serial_profile serial_profile_onerng = {
	.name = "onerng",
	.models_text = "OneRNG (1d50:6086)",
	/* Its makers: the avalanche circuit samples about 5 % more ones
	 * than zeros, about 7 bits per byte; H = 6 leaves a margin. */
	.min_entropy = 6.0,
	.credit = 768,
	.credit_reason = "768: avalanche noise with its whitener off (cmd1); "
			 "its makers measure about 7 bits per byte, the "
			 "health tests assume H = 6 (1024 x 6 / 8)",
	.models = onerng_models,
	.start = onerng_start,
	.stop = onerng_stop,
};

/* ---- TrueRNG ------------------------------------------------------------------- */

/* The Pro models' modes are chosen by line speeds: 110, 300, 110, then
 * the mode's (19200: raw binary ADC samples). */
static const unsigned int truerng_knock[] = { 110, 300, 110, 19200 };

static int truerng_start(struct serial_session *s, char *why, size_t why_len)
{
	const struct serial_port_ops *ops = s->port.ops;
	int r;

	/* A model without modes (v1-v3) streams its whitened output; a
	 * Pro, or a tty whose id is not known, is knocked into raw binary
	 * (its packets' sequence codes then prove the mode took). */
	s->raw = !s->model || s->model->raw_mode;
	/* Quiet while its mode changes: it sends only while DTR is set. */
	r = ops->set_dtr(s->port.ctx, false);
	if (r < 0 && r != -ENOTTY) {
		snprintf(why, why_len, "cannot clear DTR: %s", strerror(-r));
		return r;
	}
	if (s->raw) {
		/* First a speed that is not part of the knock, so that
		 * each of its steps is a change the device hears. */
		r = ops->set_speed(s->port.ctx, 9600);
		for (size_t i = 0; r == 0 && i < sizeof(truerng_knock) /
						    sizeof(truerng_knock[0]);
		     i++) {
			r = ops->set_speed(s->port.ctx, truerng_knock[i]);
			if (r == 0)
				r = ops->pause(s->port.ctx, KNOCK_STEP_MS);
		}
		if (r < 0) {
			snprintf(why, why_len,
				 "cannot select the raw mode (speeds 110, "
				 "300, 110, 19200): %s",
				 strerror(-r));
			return r;
		}
	}
	/* Data flows while DTR is set.  A pseudo-terminal has no modem
	 * lines (-ENOTTY): nothing to set. */
	r = ops->set_dtr(s->port.ctx, true);
	if (r < 0 && r != -ENOTTY) {
		snprintf(why, why_len, "cannot set DTR: %s", strerror(-r));
		return r;
	}
	/* Whatever came before the mode took is not raw. */
	r = ops->pause(s->port.ctx, SETTLE_MS);
	if (r == 0)
		r = ops->flush_input(s->port.ctx);
	if (r < 0) {
		snprintf(why, why_len, "cannot flush its input: %s",
			 strerror(-r));
		return r;
	}
	snprintf(s->detail, sizeof(s->detail), "%s",
		 s->raw ? "raw binary mode" : "its whitened output (no raw mode)");
	return 0;
}

/* DTR off: it stops sending. */
static void truerng_stop(struct serial_session *s)
{
	(void)s->port.ops->set_dtr(s->port.ctx, false);
}

/*
 * Raw binary: 4-byte packets, each byte's top two bits its sequence code
 * (00 generator 1 high, 01 generator 1 low, 10 generator 2 high, 11
 * generator 2 low); a high byte carries bits 9-6 of a 10-bit ADC sample
 * in its low nibble, a low byte bits 5-0.  A packet becomes one byte
 * sample: the low 4 bits of generator 1's sample, then of generator 2's.
 * Why only those: the samples are Gaussian around an offset, with a
 * spread nobody published; the bits above the lowest few follow the
 * offset more than the noise, and whether whole low bytes come near
 * uniform (as the FIPS tests want of every block) depends on that
 * spread, while the low 4 bits do for any spread above a few codes.
 * A byte with the wrong code is dropped with the packet it was part of;
 * the first ones, before the decoder found its place, are free (the line
 * may start mid-packet); more than SERIAL_DECODE_MAX_BAD in a window of
 * SERIAL_DECODE_WINDOW bytes is a line that is not in this mode.
 */
static ssize_t truerng_decode(struct serial_session *s, const uint8_t *in,
			      size_t n, uint8_t *out, char *why,
			      size_t why_len)
{
	size_t k = 0;

	if (!s->raw) {
		memcpy(out, in, n);
		return (ssize_t)n;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned int seq = in[i] >> 6;

		if (s->window_bytes++ == SERIAL_DECODE_WINDOW) {
			s->window_bytes = 1;
			s->window_bad = 0;
		}
		if (seq != s->next_seq) {
			if (s->synced) {
				s->out_of_step++;
				if (++s->window_bad > SERIAL_DECODE_MAX_BAD) {
					snprintf(why, why_len,
						 "%zu of %zu bytes out of "
						 "sequence: not the raw "
						 "binary mode (did the "
						 "mode change take?)",
						 s->window_bad,
						 s->window_bytes);
					return -EBADMSG;
				}
			}
			/* The packet is lost; the next one begins at a
			 * generator 1 high byte. */
			s->next_seq = 0;
			if (seq != 0)
				continue;
		}
		switch (seq) {
		case 0:
		case 2:
			s->sample = (uint16_t)((in[i] & 0x0f) << 6);
			break;
		case 1:
			s->sample |= in[i] & 0x3f;
			s->nibble = (uint8_t)(s->sample & 0x0f);
			break;
		case 3:
			s->sample |= in[i] & 0x3f;
			out[k++] = (uint8_t)(s->nibble << 4 | (s->sample & 0x0f));
			s->synced = true;
			break;
		}
		s->next_seq = (seq + 1) & 3;
	}
	return (ssize_t)k;
}

static const struct serial_model truerng_models[] = {
	{ 0x04d8, 0xf5fe, "TrueRNG", false, 64 },
	{ 0x16d0, 0x0aa0, "TrueRNGpro", true, 512 },
	{ 0x04d8, 0xebb5, "TrueRNGpro V2", true, 512 },
	{ 0 },
};

static const struct serial_profile serial_profile_truerng = {
	.name = "truerng",
	.models_text = "TrueRNG (04d8:f5fe), TrueRNGpro (16d0:0aa0), "
		       "TrueRNGpro V2 (04d8:ebb5)",
	/* Two ADC samples' low 4 bits a byte: H = 4 assumes 2 bits of
	 * each nibble (bias in the ADC's lowest bit, a narrow spread). */
	.min_entropy = 4.0,
	.credit = 512,
	.credit_reason = "512: the Pro models' raw ADC samples (raw binary "
			 "mode), H = 4 bits per byte (1024 x 4 / 8); a "
			 "TrueRNG v1-v3 has no raw mode, so the tests see "
			 "whitened output: 64, as a TPM",
	.models = truerng_models,
	.start = truerng_start,
	.stop = truerng_stop,
	.decode = truerng_decode,
};

/* ---- generic -------------------------------------------------------------------- */

static int generic_start(struct serial_session *s, char *why, size_t why_len)
{
	(void)s;
	(void)why;
	(void)why_len;
	return 0;
}

static void generic_stop(struct serial_session *s)
{
	(void)s;
}

const struct serial_profile serial_profile_generic = {
	.name = "generic",
	.models_text = "any tty that streams",
	.min_entropy = 6.0,
	.credit = 0,
	.credit_reason = "0: nothing is known of what an unknown tty sends "
			 "(credit= is the user's claim)",
	.models = (const struct serial_model[]){ { 0 } },
	.start = generic_start,
	.stop = generic_stop,
};

/* ---- the table --------------------------------------------------------------------- */

const struct serial_profile *const serial_profiles[] = {
	&serial_profile_onerng,
	&serial_profile_truerng,
	&serial_profile_generic,
	NULL,
};

const struct serial_profile *serial_profile_find(const char *name)
{
	for (size_t i = 0; serial_profiles[i]; i++)
		if (strcmp(serial_profiles[i]->name, name) == 0)
			return serial_profiles[i];
	return NULL;
}

const struct serial_model *serial_profile_model(const struct serial_profile *p,
						uint16_t vendor, uint16_t product)
{
	for (const struct serial_model *m = p->models; m->vendor; m++)
		if (m->vendor == vendor && m->product == product)
			return m;
	return NULL;
}

const struct serial_profile *serial_profile_for_usb(uint16_t vendor,
						     uint16_t product,
						     const struct serial_model **model)
{
	for (size_t i = 0; serial_profiles[i]; i++) {
		const struct serial_model *m =
			serial_profile_model(serial_profiles[i], vendor, product);

		if (m) {
			if (model)
				*model = m;
			return serial_profiles[i];
		}
	}
	if (model)
		*model = NULL;
	return NULL;
}

/* ---- a session ------------------------------------------------------------------- */

int serial_session_start(struct serial_session *s, char *why, size_t why_len)
{
	return s->profile->start(s, why, why_len);
}

void serial_session_stop(struct serial_session *s)
{
	s->profile->stop(s);
	explicit_bzero(s->pending, sizeof(s->pending));
	s->pending_len = 0;
}

ssize_t serial_session_read(struct serial_session *s, uint8_t *buf, size_t len,
			    int timeout_ms, char *why, size_t why_len)
{
	/* Line bytes: in raw binary 4 per sample (a packet), never more
	 * than this buffer. */
	uint8_t line[1024];
	size_t want = s->profile->decode && s->raw ? 4 * len : len;
	ssize_t n, k;

	if (want > sizeof(line))
		want = sizeof(line);
	if (want == 0)
		return 0;
	if (s->pending_len > 0) {
		n = (ssize_t)(s->pending_len < want ? s->pending_len : want);
		memcpy(line, s->pending, (size_t)n);
		memmove(s->pending, s->pending + n, s->pending_len - (size_t)n);
		s->pending_len -= (size_t)n;
		explicit_bzero(s->pending + s->pending_len, (size_t)n);
	} else {
		n = s->port.ops->read(s->port.ctx, line, want, timeout_ms);
		if (n <= 0)
			return n < 0 ? n : -EAGAIN;
		s->line_bytes += (uint64_t)n;
	}
	if (!s->profile->decode) {
		memcpy(buf, line, (size_t)n);
		k = n;
	} else {
		/* Raw binary gives at most one sample per 4 line bytes
		 * (want <= 4 * len); passed through, n <= want = len. */
		uint8_t out[sizeof(line)];

		k = s->profile->decode(s, line, (size_t)n, out, why, why_len);
		if (k > 0) {
			memcpy(buf, out, (size_t)k);
		}
		explicit_bzero(out, sizeof(out));
		if (k == 0)
			k = -EAGAIN;
	}
	explicit_bzero(line, sizeof(line));
	return k;
}
