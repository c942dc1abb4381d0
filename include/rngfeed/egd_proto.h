/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The EGD protocol, as QEMU's rng-egd backend, libvirt's egd backend and
 * other EGD clients speak it: pure code (no I/O, no logging, no globals).
 *
 * A client sends requests; every reply is in request order:
 *
 *   0x00            entropy available: reply 4 bytes, bits, big-endian
 *   0x01 N          non-blocking read: reply 1 byte M (M <= N), M bytes
 *   0x02 N          blocking read: reply exactly N bytes (QEMU's request)
 *   0x03 B1 B0 N D  write N bytes D said to hold B bits: no reply; rngfeed
 *                   refuses it (the data is skipped, never mixed in)
 *   0x04            PID: reply 1 byte L, then L bytes of decimal text
 *
 * N is one byte, so at most 255 per request.  Anything else is garbage:
 * the parser stops for good and the caller closes the client.
 *
 * The parser is a state machine over bytes: a request may arrive cut at
 * any byte, in any number of pieces; its state is a few bytes, whatever
 * the client sends.
 */
#ifndef RNGFEED_EGD_PROTO_H
#define RNGFEED_EGD_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EGD_MAX_READ 255u       /* N is one byte */
#define EGD_PID_REPLY_MAX 21u   /* length byte + up to 20 digits */

enum egd_cmd {
	EGD_CMD_AVAILABLE = 0x00,
	EGD_CMD_READ_NONBLOCK = 0x01,
	EGD_CMD_READ_BLOCK = 0x02,
	EGD_CMD_WRITE = 0x03,
	EGD_CMD_PID = 0x04,
};

/* What egd_parse() found. */
enum egd_event {
	EGD_EV_MORE,    /* all input consumed, no complete request yet */
	EGD_EV_REQUEST, /* one complete request in *req */
	EGD_EV_BAD,     /* garbage: the client must be closed */
};

struct egd_request {
	enum egd_cmd cmd;
	unsigned int len;  /* READ_*: bytes asked for (0..255); WRITE: bytes
			    * of data the client sent (skipped) */
	unsigned int bits; /* WRITE: the entropy the client claimed */
};

/* Opaque in spirit: only egd_proto.c looks inside. */
struct egd_parser {
	uint8_t state;
	uint8_t cmd;
	uint8_t hdr[3];     /* WRITE: bits (2 bytes) and count so far */
	uint8_t have;       /* header bytes seen */
	unsigned int skip;  /* WRITE: data bytes still to skip */
};

void egd_parser_init(struct egd_parser *p);

/*
 * Consume bytes of @buf (@len of them) up to the end of the first
 * complete request, or all of them.  Returns the number consumed and sets
 * *@ev; *@req is set only for EGD_EV_REQUEST.  After EGD_EV_BAD every call
 * consumes nothing and says EGD_EV_BAD again.
 */
size_t egd_parse(struct egd_parser *p, const uint8_t *buf, size_t len,
		 enum egd_event *ev, struct egd_request *req);

/* Is a request begun and not finished (bytes of it seen)? */
bool egd_parser_midway(const struct egd_parser *p);

/* The 0x00 reply: @bits, big-endian. */
void egd_reply_available(uint8_t out[4], uint32_t bits);

/*
 * The 0x04 reply for @pid into @out (@cap bytes): a length byte and the
 * decimal digits.  The number of bytes written, or 0 if @cap is short.
 */
size_t egd_reply_pid(uint8_t *out, size_t cap, unsigned long pid);

/* ---- listening addresses ---------------------------------------------- */

enum egd_addr_kind { EGD_ADDR_UNIX, EGD_ADDR_TCP4, EGD_ADDR_TCP6 };

struct egd_addr {
	enum egd_addr_kind kind;
	char path[108];     /* UNIX: absolute path (sun_path's size) */
	uint8_t ip[16];     /* TCP4: 4 bytes, TCP6: 16, network order */
	uint16_t port;      /* TCP: host order */
	bool loopback;      /* TCP: 127.0.0.0/8 or ::1 */
};

/*
 * Parse "unix:/PATH", "tcp:PORT" (127.0.0.1), "tcp:HOST:PORT" or
 * "tcp:[IPV6]:PORT".  HOST is a numeric address or "localhost"; no name
 * is looked up.  The rule: loopback unless the user names another
 * address, and never a wildcard (0.0.0.0, ::): rngfeed serves one named
 * address, never every interface.  0, or -EINVAL with a one-line message
 * in @err.
 */
int egd_addr_parse(const char *s, struct egd_addr *a, char *err,
		   size_t err_len);

/* "unix:/run/x" or "tcp:127.0.0.1:7000", for messages.  @buf is
 * returned. */
const char *egd_addr_format(const struct egd_addr *a, char *buf, size_t len);

#endif
