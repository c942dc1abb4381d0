/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The little of the TPM 2.0 command protocol the tpm source needs: one
 * TPM2_GetRandom command, its response, and response codes by name.
 * Pure code, no I/O: the driver (src/sources/tpm.c) moves the bytes.
 *
 * References are to the TCG "Trusted Platform Module Library" 2.0
 * specification: Part 1 (Architecture), Part 2 (Structures) and Part 3
 * (Commands).  All integers on the wire are big-endian (Part 1, "Data
 * Alignment and Endianness").
 */
#ifndef RNGFEED_TPM2_H
#define RNGFEED_TPM2_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Part 2 §6.9 TPM_ST: a command or response without authorisation
 * sessions. */
#define TPM2_ST_NO_SESSIONS 0x8001u
/* Part 2 §6.9: the tag a TPM 1.2 (or a TPM 2.0 answering a 1.2-style
 * command) puts on its response; named in messages. */
#define TPM2_ST_RSP_COMMAND 0x00C4u
/* Part 2 §6.5.2 TPM_CC. */
#define TPM2_CC_GET_RANDOM 0x0000017Bu

/* Part 1 §18 (command/response structure): tag UINT16, size UINT32,
 * commandCode or responseCode UINT32. */
#define TPM2_HEADER_SIZE 10u
/* Part 3 §16.1 TPM2_GetRandom: the header and UINT16 bytesRequested. */
#define TPM2_GET_RANDOM_CMD_SIZE 12u
/* ...and its response: the header and a TPM2B_DIGEST (UINT16 size, then
 * the bytes), so a response carrying @n bytes is 12 + @n long. */
#define TPM2_GET_RANDOM_RSP_SIZE(n) (TPM2_HEADER_SIZE + 2u + (size_t)(n))

/* Part 2 §6.6.3 TPM_RC values: the codes the driver and its tests name. */
#define TPM2_RC_SUCCESS      0x000u
#define TPM2_RC_BAD_TAG      0x01Eu
#define TPM2_RC_VER1         0x100u
#define TPM2_RC_INITIALIZE   0x100u
#define TPM2_RC_FAILURE      0x101u
#define TPM2_RC_COMMAND_SIZE 0x142u
#define TPM2_RC_COMMAND_CODE 0x143u
#define TPM2_RC_FMT1         0x080u
#define TPM2_RC_VALUE        0x084u
#define TPM2_RC_SIZE         0x095u
#define TPM2_RC_WARN         0x900u
#define TPM2_RC_YIELDED      0x908u
#define TPM2_RC_CANCELED     0x909u
#define TPM2_RC_TESTING      0x90Au
#define TPM2_RC_NV_RATE      0x920u
#define TPM2_RC_LOCKOUT      0x921u
#define TPM2_RC_RETRY        0x922u
/* Format-1 modifiers (Part 2 §6.6.2): the code concerns a parameter
 * (TPM2_RC_P) or a session (TPM2_RC_S), numbered in bits 8..11. */
#define TPM2_RC_P            0x040u
#define TPM2_RC_S            0x800u
#define TPM2_RC_N_SHIFT      8
/* Resource managers put their layer in bits 16..23 (TCG TSS 2.0 Overview,
 * "TSS2_RC"); the kernel's /dev/tpmrm* answers with layer 11 for commands
 * it refuses itself. */
#define TPM2_RC_LAYER_SHIFT  16
#define TPM2_RC_LAYER_RESMGR_TPM 11u

struct tpm2_header {
	uint16_t tag;
	uint32_t size;
	uint32_t code;
};

/* A parsed TPM2_GetRandom response. */
struct tpm2_random {
	struct tpm2_header hdr;
	const uint8_t *bytes; /* points into the response buffer */
	size_t len;
};

/*
 * Write the TPM2_GetRandom command for @bytes bytes into @cmd; returns
 * its length, TPM2_GET_RANDOM_CMD_SIZE.
 */
size_t tpm2_get_random_command(uint8_t cmd[TPM2_GET_RANDOM_CMD_SIZE],
			       uint16_t bytes);

/*
 * Read the response header from the first @len bytes of @buf.  Returns 0,
 * or -EPROTO when fewer than 10 bytes are there, the tag is not
 * TPM_ST_NO_SESSIONS, or the size is below 10.  @hdr holds what could be
 * read either way (zeros beyond @len); @why (may be NULL) says what is
 * wrong.
 */
int tpm2_parse_header(const uint8_t *buf, size_t len,
		      struct tpm2_header *hdr, char *why, size_t why_len);

/*
 * Check a whole TPM2_GetRandom response of @len bytes to a command that
 * asked for @asked bytes, and point @out at the random bytes in @buf.
 * Returns the number of bytes (0..@asked; fewer than asked is allowed by
 * Part 3 §16.1), or:
 *   -EPROTO   bad header (see above), header size != @len, or a response
 *             too short for its code (truncated);
 *   -EBADMSG  the TPM2_DIGEST size is larger than asked or disagrees with
 *             the response size;
 *   -EAGAIN   a warning that means "not now, try again" (RETRY, YIELDED,
 *             CANCELED, TESTING, NV_RATE); out->hdr.code holds it;
 *   -EIO      any other response code; out->hdr.code holds it.
 * @out->bytes and len are set only on success.  @why (may be NULL) gets
 * one line naming the problem, with the code's name.
 */
ssize_t tpm2_get_random_parse(const uint8_t *buf, size_t len,
			      uint16_t asked, struct tpm2_random *out,
			      char *why, size_t why_len);

/*
 * The name of a response code, with the layer, parameter, handle and
 * session bits stripped (e.g. "TPM_RC_VALUE" for 0x1C4), or NULL when the
 * code is unknown.  tpm2_rc_format() writes a full description, e.g.
 * "TPM_RC_VALUE (0x1c4, parameter 1)", also for unknown codes, and
 * returns @buf.
 */
const char *tpm2_rc_name(uint32_t rc);
const char *tpm2_rc_format(uint32_t rc, char *buf, size_t len);
/* 0 for success, -EAGAIN for "try again" warnings, -EIO otherwise. */
int tpm2_rc_errno(uint32_t rc);

#endif
