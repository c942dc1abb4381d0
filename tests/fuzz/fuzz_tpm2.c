// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz the TPM2_GetRandom response parser and the response-code names.
 * Input: two bytes (big-endian) of "bytes asked", one byte for the size of
 * the buffer tpm2_rc_format() writes into, then the response as received.
 *
 * Invariants: a response that parses has the right tag, a size field
 * equal to its length, TPM_RC_SUCCESS, and 0..asked bytes that sit right
 * after the digest size inside the buffer; one that does not gives one of
 * the documented errors with a message, no bytes, and for -EAGAIN/-EIO a
 * header-only response whose code tpm2_rc_errno() maps the same way; the
 * answer does not depend on whether a message is wanted.  Names and
 * formatted codes stay within their buffers, names ignore the layer bits
 * and (for format-1 codes) the parameter/handle/session number, and a
 * response built from the input's bytes parses back to them.
 */
#include "fuzz.h"
#include "rngfeed/tpm2.h"

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void check_rc(uint32_t rc, size_t fmt_len)
{
	const char *name = tpm2_rc_name(rc);
	char *buf;
	int e = tpm2_rc_errno(rc);

	if (name) {
		FUZZ_ASSERT(strncmp(name, "TPM_RC_", 7) == 0);
		FUZZ_ASSERT(!(rc & 0xF000u));
		/* Layer bits (16..31) do not change the name... */
		FUZZ_ASSERT(tpm2_rc_name(rc & 0xFFFu) == name);
		/* ...nor, in format 1, the P/N bits. */
		if (rc & TPM2_RC_FMT1)
			FUZZ_ASSERT(tpm2_rc_name(rc & 0xBFu) == name);
	}
	if (rc & 0xF000u)
		FUZZ_ASSERT(name == NULL);
	FUZZ_ASSERT(tpm2_rc_name(0) != NULL &&
		    strcmp(tpm2_rc_name(0), "TPM_RC_SUCCESS") == 0);
	FUZZ_ASSERT(e == 0 || e == -EAGAIN || e == -EIO);
	FUZZ_ASSERT((e == 0) == (rc == TPM2_RC_SUCCESS));

	/* An exactly sized heap buffer: ASan sees any write past it. */
	buf = malloc(fmt_len ? fmt_len : 1);
	FUZZ_ASSERT(buf != NULL);
	memset(buf, 'x', fmt_len ? fmt_len : 1);
	FUZZ_ASSERT(tpm2_rc_format(rc, buf, fmt_len) == buf);
	if (fmt_len)
		FUZZ_ASSERT(memchr(buf, '\0', fmt_len) != NULL);
	if (fmt_len > 1)
		FUZZ_ASSERT(buf[0] != '\0');
	free(buf);

	char full[160];

	tpm2_rc_format(rc, full, sizeof(full));
	FUZZ_ASSERT(strlen(full) < sizeof(full) - 1); /* not truncated */
	if (name)
		FUZZ_ASSERT(strncmp(full, name, strlen(name)) == 0);
}

static void check_response(const uint8_t *buf, size_t len, uint16_t asked)
{
	struct tpm2_random out, out2;
	struct tpm2_header hdr;
	char why[160], hwhy[160];
	ssize_t r, r2;
	int hr;

	strcpy(why, FUZZ_ERR_UNSET);
	memset(&out, 0xA5, sizeof(out));
	r = tpm2_get_random_parse(buf, len, asked, &out, why, sizeof(why));
	memset(&out2, 0x5A, sizeof(out2));
	r2 = tpm2_get_random_parse(buf, len, asked, &out2, NULL, 0);
	FUZZ_ASSERT(r == r2);
	strcpy(hwhy, FUZZ_ERR_UNSET);
	hr = tpm2_parse_header(buf, len, &hdr, hwhy, sizeof(hwhy));
	FUZZ_ASSERT(hr == 0 || hr == -EPROTO);
	if (hr < 0) {
		fuzz_assert_message(hwhy, sizeof(hwhy));
		FUZZ_ASSERT(r == -EPROTO);
	} else {
		FUZZ_ASSERT(hdr.tag == TPM2_ST_NO_SESSIONS);
		FUZZ_ASSERT(hdr.size >= TPM2_HEADER_SIZE);
		FUZZ_ASSERT(len >= TPM2_HEADER_SIZE);
	}
	if (r >= 0) {
		FUZZ_ASSERT(r <= asked);
		FUZZ_ASSERT(out.len == (size_t)r && out2.len == (size_t)r);
		FUZZ_ASSERT(out.bytes == buf + TPM2_GET_RANDOM_RSP_SIZE(0));
		FUZZ_ASSERT(len == TPM2_GET_RANDOM_RSP_SIZE(r));
		FUZZ_ASSERT(out.hdr.tag == TPM2_ST_NO_SESSIONS);
		FUZZ_ASSERT(out.hdr.size == len);
		FUZZ_ASSERT(out.hdr.code == TPM2_RC_SUCCESS);
		FUZZ_ASSERT(((size_t)buf[10] << 8 | buf[11]) == (size_t)r);
		/* Every byte handed out is inside the response. */
		volatile uint8_t sink = 0;

		for (size_t i = 0; i < out.len; i++)
			sink ^= out.bytes[i];
		(void)sink;
		return;
	}
	FUZZ_ASSERT(r == -EPROTO || r == -EBADMSG || r == -EAGAIN ||
		    r == -EIO);
	fuzz_assert_message(why, sizeof(why));
	FUZZ_ASSERT(out.bytes == NULL && out.len == 0);
	FUZZ_ASSERT(out2.bytes == NULL && out2.len == 0);
	if (r == -EAGAIN || r == -EIO) {
		FUZZ_ASSERT(hr == 0);
		FUZZ_ASSERT(len == TPM2_HEADER_SIZE);
		FUZZ_ASSERT(out.hdr.size == TPM2_HEADER_SIZE);
		FUZZ_ASSERT(out.hdr.code != TPM2_RC_SUCCESS);
		FUZZ_ASSERT(tpm2_rc_errno(out.hdr.code) == r);
	}
	if (r == -EBADMSG)
		FUZZ_ASSERT(hr == 0 && out.hdr.code == TPM2_RC_SUCCESS &&
			    len >= TPM2_GET_RANDOM_RSP_SIZE(0));
}

/* A well-formed response carrying @n of the input's bytes parses back. */
static void check_roundtrip(const uint8_t *bytes, size_t n, uint16_t asked)
{
	size_t len = TPM2_GET_RANDOM_RSP_SIZE(n);
	uint8_t *rsp = malloc(len), cmd[TPM2_GET_RANDOM_CMD_SIZE];
	struct tpm2_random out;
	struct tpm2_header hdr;
	ssize_t r;

	FUZZ_ASSERT(rsp != NULL);
	rsp[0] = 0x80;
	rsp[1] = 0x01;
	rsp[2] = (uint8_t)(len >> 24);
	rsp[3] = (uint8_t)(len >> 16);
	rsp[4] = (uint8_t)(len >> 8);
	rsp[5] = (uint8_t)len;
	memset(rsp + 6, 0, 4);
	rsp[10] = (uint8_t)(n >> 8);
	rsp[11] = (uint8_t)n;
	if (n)
		memcpy(rsp + 12, bytes, n);
	r = tpm2_get_random_parse(rsp, len, asked, &out, NULL, 0);
	if (n <= asked) {
		FUZZ_ASSERT(r == (ssize_t)n);
		FUZZ_ASSERT(n == 0 || memcmp(out.bytes, bytes, n) == 0);
	} else {
		FUZZ_ASSERT(r == -EBADMSG);
	}
	free(rsp);

	/* The command we send is itself a well-formed header. */
	FUZZ_ASSERT(tpm2_get_random_command(cmd, asked) ==
		    TPM2_GET_RANDOM_CMD_SIZE);
	FUZZ_ASSERT(tpm2_parse_header(cmd, sizeof(cmd), &hdr, NULL, 0) == 0);
	FUZZ_ASSERT(hdr.size == TPM2_GET_RANDOM_CMD_SIZE &&
		    hdr.code == TPM2_CC_GET_RANDOM);
	FUZZ_ASSERT(((unsigned int)cmd[10] << 8 | cmd[11]) == asked);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint16_t asked;
	size_t fmt_len, len;
	uint8_t *rsp;

	if (size < 3)
		return 0;
	asked = (uint16_t)(data[0] << 8 | data[1]);
	fmt_len = data[2];
	data += 3;
	size -= 3;

	/* An exact copy, so a read past the response is an ASan error. */
	len = size;
	rsp = calloc(1, len ? len : 1);
	FUZZ_ASSERT(rsp != NULL);
	if (len)
		memcpy(rsp, data, len);
	check_response(rsp, len, asked);
	free(rsp);

	if (size >= TPM2_HEADER_SIZE)
		check_rc(be32(data + 6), fmt_len);
	if (size >= 4)
		check_rc(be32(data), fmt_len);
	check_roundtrip(data, size > 0xFFFF ? 0xFFFF : size, asked);
	return 0;
}
