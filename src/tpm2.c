// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * TPM 2.0 protocol for the tpm source: building TPM2_GetRandom, checking
 * its response, naming response codes.  Pure code; see tpm2.h.
 *
 * Everything in a response comes from outside the process (a chip, a
 * kernel driver, or a program on a socket), so every length is checked
 * against the bytes actually received before it is used.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "rngfeed/tpm2.h"

/* ---- big-endian fields -------------------------------------------------- */

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* ---- response codes ----------------------------------------------------- */

struct rc_name {
	uint16_t code;
	const char *name;
};

/*
 * Part 2 §6.6.3.  Format-0 codes (bit 7 clear) are compared whole: the
 * TPM 2.0 errors (RC_VER1, 0x100 + n) and warnings (RC_WARN, 0x900 + n),
 * plus TPM_RC_BAD_TAG, the one 1.2-layout code a TPM 2.0 returns.
 */
static const struct rc_name rc_fmt0[] = {
	{ 0x01E, "TPM_RC_BAD_TAG" },
	{ 0x100, "TPM_RC_INITIALIZE" },
	{ 0x101, "TPM_RC_FAILURE" },
	{ 0x103, "TPM_RC_SEQUENCE" },
	{ 0x10B, "TPM_RC_PRIVATE" },
	{ 0x119, "TPM_RC_HMAC" },
	{ 0x120, "TPM_RC_DISABLED" },
	{ 0x121, "TPM_RC_EXCLUSIVE" },
	{ 0x124, "TPM_RC_AUTH_TYPE" },
	{ 0x125, "TPM_RC_AUTH_MISSING" },
	{ 0x126, "TPM_RC_POLICY" },
	{ 0x127, "TPM_RC_PCR" },
	{ 0x128, "TPM_RC_PCR_CHANGED" },
	{ 0x12D, "TPM_RC_UPGRADE" },
	{ 0x12E, "TPM_RC_TOO_MANY_CONTEXTS" },
	{ 0x12F, "TPM_RC_AUTH_UNAVAILABLE" },
	{ 0x130, "TPM_RC_REBOOT" },
	{ 0x131, "TPM_RC_UNBALANCED" },
	{ 0x142, "TPM_RC_COMMAND_SIZE" },
	{ 0x143, "TPM_RC_COMMAND_CODE" },
	{ 0x144, "TPM_RC_AUTHSIZE" },
	{ 0x145, "TPM_RC_AUTH_CONTEXT" },
	{ 0x146, "TPM_RC_NV_RANGE" },
	{ 0x147, "TPM_RC_NV_SIZE" },
	{ 0x148, "TPM_RC_NV_LOCKED" },
	{ 0x149, "TPM_RC_NV_AUTHORIZATION" },
	{ 0x14A, "TPM_RC_NV_UNINITIALIZED" },
	{ 0x14B, "TPM_RC_NV_SPACE" },
	{ 0x14C, "TPM_RC_NV_DEFINED" },
	{ 0x150, "TPM_RC_BAD_CONTEXT" },
	{ 0x151, "TPM_RC_CPHASH" },
	{ 0x152, "TPM_RC_PARENT" },
	{ 0x153, "TPM_RC_NEEDS_TEST" },
	{ 0x154, "TPM_RC_NO_RESULT" },
	{ 0x155, "TPM_RC_SENSITIVE" },
	{ 0x901, "TPM_RC_CONTEXT_GAP" },
	{ 0x902, "TPM_RC_OBJECT_MEMORY" },
	{ 0x903, "TPM_RC_SESSION_MEMORY" },
	{ 0x904, "TPM_RC_MEMORY" },
	{ 0x905, "TPM_RC_SESSION_HANDLES" },
	{ 0x906, "TPM_RC_OBJECT_HANDLES" },
	{ 0x907, "TPM_RC_LOCALITY" },
	{ 0x908, "TPM_RC_YIELDED" },
	{ 0x909, "TPM_RC_CANCELED" },
	{ 0x90A, "TPM_RC_TESTING" },
	{ 0x910, "TPM_RC_REFERENCE_H0" },
	{ 0x911, "TPM_RC_REFERENCE_H1" },
	{ 0x912, "TPM_RC_REFERENCE_H2" },
	{ 0x913, "TPM_RC_REFERENCE_H3" },
	{ 0x914, "TPM_RC_REFERENCE_H4" },
	{ 0x915, "TPM_RC_REFERENCE_H5" },
	{ 0x916, "TPM_RC_REFERENCE_H6" },
	{ 0x918, "TPM_RC_REFERENCE_S0" },
	{ 0x919, "TPM_RC_REFERENCE_S1" },
	{ 0x91A, "TPM_RC_REFERENCE_S2" },
	{ 0x91B, "TPM_RC_REFERENCE_S3" },
	{ 0x91C, "TPM_RC_REFERENCE_S4" },
	{ 0x91D, "TPM_RC_REFERENCE_S5" },
	{ 0x91E, "TPM_RC_REFERENCE_S6" },
	{ 0x920, "TPM_RC_NV_RATE" },
	{ 0x921, "TPM_RC_LOCKOUT" },
	{ 0x922, "TPM_RC_RETRY" },
	{ 0x923, "TPM_RC_NV_UNAVAILABLE" },
	{ 0x97F, "TPM_RC_NOT_USED" },
};

/* Format-1 codes (bit 7 set), compared on bit 7 and the error number in
 * bits 0..5 once the parameter/handle/session bits are stripped. */
static const struct rc_name rc_fmt1[] = {
	{ 0x081, "TPM_RC_ASYMMETRIC" },
	{ 0x082, "TPM_RC_ATTRIBUTES" },
	{ 0x083, "TPM_RC_HASH" },
	{ 0x084, "TPM_RC_VALUE" },
	{ 0x085, "TPM_RC_HIERARCHY" },
	{ 0x087, "TPM_RC_KEY_SIZE" },
	{ 0x088, "TPM_RC_MGF" },
	{ 0x089, "TPM_RC_MODE" },
	{ 0x08A, "TPM_RC_TYPE" },
	{ 0x08B, "TPM_RC_HANDLE" },
	{ 0x08C, "TPM_RC_KDF" },
	{ 0x08D, "TPM_RC_RANGE" },
	{ 0x08E, "TPM_RC_AUTH_FAIL" },
	{ 0x08F, "TPM_RC_NONCE" },
	{ 0x090, "TPM_RC_PP" },
	{ 0x092, "TPM_RC_SCHEME" },
	{ 0x095, "TPM_RC_SIZE" },
	{ 0x096, "TPM_RC_SYMMETRIC" },
	{ 0x097, "TPM_RC_TAG" },
	{ 0x098, "TPM_RC_SELECTOR" },
	{ 0x09A, "TPM_RC_INSUFFICIENT" },
	{ 0x09B, "TPM_RC_SIGNATURE" },
	{ 0x09C, "TPM_RC_KEY" },
	{ 0x09D, "TPM_RC_POLICY_FAIL" },
	{ 0x09F, "TPM_RC_INTEGRITY" },
	{ 0x0A0, "TPM_RC_TICKET" },
	{ 0x0A1, "TPM_RC_RESERVED_BITS" },
	{ 0x0A2, "TPM_RC_BAD_AUTH" },
	{ 0x0A3, "TPM_RC_EXPIRED" },
	{ 0x0A4, "TPM_RC_POLICY_CC" },
	{ 0x0A5, "TPM_RC_BINDING" },
	{ 0x0A6, "TPM_RC_CURVE" },
	{ 0x0A7, "TPM_RC_ECC_POINT" },
};

/*
 * Layout of the low 12 bits (Part 2 §6.6.2).  Format 0: error number in
 * bits 0..6, V (a TPM 2.0 code) bit 8, T (vendor-defined) bit 10, S
 * (warning) bit 11.  Format 1 (F, bit 7): error number in bits 0..5, P
 * bit 6, N in bits 8..11 — a parameter number when P is set, otherwise a
 * session number (N's top bit set) or a handle number (0 = unspecified).
 * The TPM leaves bits 12..31 zero; software layers use bits 16..23.
 */
#define RC_CODE_MASK   0xFFFu
#define RC_FMT1_MASK   0x0BFu /* F and the format-1 error number */
#define RC_VENDOR      0x400u
#define RC_N_MASK      0xFu
#define RC_RESERVED    0xF000u

static bool rc_is_fmt1(uint32_t rc)
{
	return (rc & TPM2_RC_FMT1) != 0;
}

static const char *rc_lookup(const struct rc_name *t, size_t n,
			     uint32_t code)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].code == code)
			return t[i].name;
	return NULL;
}

const char *tpm2_rc_name(uint32_t rc)
{
	if (rc & RC_RESERVED)
		return NULL;
	rc &= RC_CODE_MASK;
	if (rc == TPM2_RC_SUCCESS)
		return "TPM_RC_SUCCESS";
	if (rc_is_fmt1(rc))
		return rc_lookup(rc_fmt1, sizeof(rc_fmt1) / sizeof(rc_fmt1[0]),
				 rc & RC_FMT1_MASK);
	if (rc & RC_VENDOR)
		return NULL;
	return rc_lookup(rc_fmt0, sizeof(rc_fmt0) / sizeof(rc_fmt0[0]), rc);
}

/* ", parameter 1" and the like, for a format-1 code; "" otherwise. */
static void rc_where(uint32_t rc, char *buf, size_t len)
{
	unsigned int n = (rc >> TPM2_RC_N_SHIFT) & RC_N_MASK;

	buf[0] = '\0';
	if (!rc_is_fmt1(rc))
		return;
	if (rc & TPM2_RC_P)
		snprintf(buf, len, ", parameter %u", n);
	else if (n & 0x8u)
		snprintf(buf, len, ", session %u", n & 0x7u);
	else if (n)
		snprintf(buf, len, ", handle %u", n);
}

/* What to call a code the tables do not know. */
static const char *rc_kind(uint32_t code)
{
	if (rc_is_fmt1(code))
		return "unknown TPM error";
	if (code & RC_VENDOR)
		return "vendor-defined TPM response code";
	if (!(code & TPM2_RC_VER1))
		return "TPM 1.2 response code";
	if (code & TPM2_RC_S)
		return "unknown TPM warning";
	return "unknown TPM error";
}

const char *tpm2_rc_format(uint32_t rc, char *buf, size_t len)
{
	uint32_t layer = rc >> TPM2_RC_LAYER_SHIFT;
	const char *name = tpm2_rc_name(rc);
	char where[24], from[48] = "";

	if (len == 0)
		return buf;
	if (rc & RC_RESERVED) {
		snprintf(buf, len, "malformed response code 0x%x", rc);
		return buf;
	}
	if (layer == TPM2_RC_LAYER_RESMGR_TPM)
		snprintf(from, sizeof(from), ", from the resource manager");
	else if (layer)
		snprintf(from, sizeof(from), ", layer %u", layer);
	rc_where(rc, where, sizeof(where));
	if (name)
		snprintf(buf, len, "%s (0x%x%s%s)", name, rc & RC_CODE_MASK,
			 where, from);
	else
		snprintf(buf, len, "%s 0x%x%s%s", rc_kind(rc & RC_CODE_MASK),
			 rc & RC_CODE_MASK, where, from);
	return buf;
}

int tpm2_rc_errno(uint32_t rc)
{
	if (rc == TPM2_RC_SUCCESS)
		return 0;
	if (rc & RC_RESERVED)
		return -EIO;
	/* Warnings that mean "the TPM could not do it now" (Part 2 §6.6.3;
	 * Part 1, "Response Code Details"): the same command may succeed
	 * later. */
	switch (rc & RC_CODE_MASK) {
	case TPM2_RC_RETRY:
	case TPM2_RC_YIELDED:
	case TPM2_RC_CANCELED:
	case TPM2_RC_TESTING:
	case TPM2_RC_NV_RATE:
		return -EAGAIN;
	default:
		return -EIO;
	}
}

/* ---- command and response ----------------------------------------------- */

size_t tpm2_get_random_command(uint8_t cmd[TPM2_GET_RANDOM_CMD_SIZE],
			       uint16_t bytes)
{
	put_be16(cmd, TPM2_ST_NO_SESSIONS);
	put_be32(cmd + 2, TPM2_GET_RANDOM_CMD_SIZE);
	put_be32(cmd + 6, TPM2_CC_GET_RANDOM);
	put_be16(cmd + 10, bytes);
	return TPM2_GET_RANDOM_CMD_SIZE;
}

__attribute__((format(printf, 4, 5)))
static int fail(int err, char *why, size_t why_len, const char *fmt, ...)
{
	if (why && why_len) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return err;
}

int tpm2_parse_header(const uint8_t *buf, size_t len,
		      struct tpm2_header *hdr, char *why, size_t why_len)
{
	*hdr = (struct tpm2_header){ 0 };
	if (len >= 2)
		hdr->tag = get_be16(buf);
	if (len >= 6)
		hdr->size = get_be32(buf + 2);
	if (len < TPM2_HEADER_SIZE)
		return fail(-EPROTO, why, why_len,
			    "truncated response: %zu bytes, the header alone "
			    "is %u",
			    len, TPM2_HEADER_SIZE);
	hdr->code = get_be32(buf + 6);
	/* Part 1 §18: a response to a TPM_ST_NO_SESSIONS command carries
	 * that tag, errors included. */
	if (hdr->tag != TPM2_ST_NO_SESSIONS)
		return fail(-EPROTO, why, why_len,
			    "response tag 0x%04x, not TPM_ST_NO_SESSIONS "
			    "(0x%04x)%s",
			    hdr->tag, TPM2_ST_NO_SESSIONS,
			    hdr->tag == TPM2_ST_RSP_COMMAND
				    ? ": a TPM 1.2 answer, not a TPM 2.0"
				    : "");
	if (hdr->size < TPM2_HEADER_SIZE)
		return fail(-EPROTO, why, why_len,
			    "response size field %u is less than its own "
			    "%u-byte header",
			    hdr->size, TPM2_HEADER_SIZE);
	return 0;
}

/* A response whose code is not success: the header and nothing else
 * (Part 1 §18). */
static ssize_t parse_error(size_t len, const struct tpm2_header *hdr,
			   char *why, size_t why_len)
{
	char name[96];

	tpm2_rc_format(hdr->code, name, sizeof(name));
	if (len != TPM2_HEADER_SIZE)
		return fail(-EPROTO, why, why_len,
			    "error response %s carries %zu bytes after its "
			    "header",
			    name, len - TPM2_HEADER_SIZE);
	return fail(tpm2_rc_errno(hdr->code), why, why_len,
		    "TPM answered %s", name);
}

ssize_t tpm2_get_random_parse(const uint8_t *buf, size_t len,
			      uint16_t asked, struct tpm2_random *out,
			      char *why, size_t why_len)
{
	size_t n;
	int r;

	out->bytes = NULL;
	out->len = 0;
	r = tpm2_parse_header(buf, len, &out->hdr, why, why_len);
	if (r < 0)
		return r;
	if (out->hdr.size != len)
		return fail(-EPROTO, why, why_len,
			    "response size field says %u bytes, %zu received",
			    out->hdr.size, len);
	if (out->hdr.code != TPM2_RC_SUCCESS)
		return parse_error(len, &out->hdr, why, why_len);
	/* Part 3 §16.1: randomBytes is a TPM2B_DIGEST (Part 2 §10.4.2),
	 * a UINT16 size and that many bytes, at most as many as asked. */
	if (len < TPM2_GET_RANDOM_RSP_SIZE(0))
		return fail(-EPROTO, why, why_len,
			    "truncated response: %zu bytes, no room for the "
			    "digest size",
			    len);
	n = get_be16(buf + TPM2_HEADER_SIZE);
	if (n > asked)
		return fail(-EBADMSG, why, why_len,
			    "TPM returned %zu bytes when %u were asked", n,
			    asked);
	if (TPM2_GET_RANDOM_RSP_SIZE(n) != len)
		return fail(-EBADMSG, why, why_len,
			    "digest size %zu disagrees with the response "
			    "size %zu (%zu expected)",
			    n, len, TPM2_GET_RANDOM_RSP_SIZE(n));
	out->bytes = buf + TPM2_GET_RANDOM_RSP_SIZE(0);
	out->len = n;
	return (ssize_t)n;
}
