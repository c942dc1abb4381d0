// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz the EGD request parser (egd_parse) and the listening-address rule
 * (egd_addr_parse).
 *
 * Input: a byte giving the piece size (1..16, or the whole input), then
 * the client's byte stream.  The stream is parsed once in pieces of that
 * size and once a byte at a time; both must find the same requests as a
 * straightforward model of the protocol, and stop at the same garbage.
 * The parser never consumes more than it was given, reports MORE only
 * after taking everything, and takes nothing after garbage.  The stream
 * as a string goes to egd_addr_parse: an accepted address formats to a
 * string that parses to the same address and is never a wildcard; a
 * refused one has a message.
 */
#include <stdbool.h>

#include "fuzz.h"
#include "rngfeed/egd_proto.h"

#define MAX_REQ 4096

struct result {
	size_t n;
	bool bad;
	struct egd_request r[MAX_REQ];
};

/* The protocol as its header states it, with no state machine. */
static void model(const uint8_t *b, size_t len, struct result *out)
{
	size_t i = 0;

	out->n = 0;
	out->bad = false;
	while (i < len && out->n < MAX_REQ) {
		struct egd_request *r = &out->r[out->n];

		switch (b[i]) {
		case 0x00:
		case 0x04:
			*r = (struct egd_request){ .cmd = b[i] };
			i += 1;
			break;
		case 0x01:
		case 0x02:
			if (len - i < 2)
				return;
			*r = (struct egd_request){ .cmd = b[i], .len = b[i + 1] };
			i += 2;
			break;
		case 0x03:
			if (len - i < 4 || len - i - 4 < b[i + 3])
				return;
			*r = (struct egd_request){
				.cmd = EGD_CMD_WRITE,
				.len = b[i + 3],
				.bits = (unsigned int)b[i + 1] << 8 | b[i + 2],
			};
			i += 4 + (size_t)b[i + 3];
			break;
		default:
			out->bad = true;
			return;
		}
		out->n++;
	}
}

static void parse_pieces(const uint8_t *b, size_t len, size_t piece,
			 struct result *out)
{
	struct egd_parser p;
	size_t off = 0;

	egd_parser_init(&p);
	out->n = 0;
	out->bad = false;
	while (off < len && out->n < MAX_REQ) {
		size_t end = off + piece < len ? off + piece : len;

		while (off < end && out->n < MAX_REQ) {
			enum egd_event ev;
			struct egd_request r;
			size_t used = egd_parse(&p, b + off, end - off, &ev, &r);

			FUZZ_ASSERT(used <= end - off);
			off += used;
			if (ev == EGD_EV_BAD) {
				enum egd_event again;

				FUZZ_ASSERT(used >= 1);
				FUZZ_ASSERT(egd_parse(&p, b, len, &again, &r) == 0);
				FUZZ_ASSERT(again == EGD_EV_BAD);
				out->bad = true;
				return;
			}
			if (ev == EGD_EV_MORE) {
				FUZZ_ASSERT(off == end);
				continue;
			}
			FUZZ_ASSERT(ev == EGD_EV_REQUEST);
			FUZZ_ASSERT(used >= 1);
			FUZZ_ASSERT(r.len <= EGD_MAX_READ);
			FUZZ_ASSERT(r.cmd <= EGD_CMD_PID);
			out->r[out->n++] = r;
		}
	}
}

static void same(const struct result *a, const struct result *b)
{
	FUZZ_ASSERT(a->n == b->n);
	FUZZ_ASSERT(a->bad == b->bad);
	for (size_t i = 0; i < a->n; i++) {
		FUZZ_ASSERT(a->r[i].cmd == b->r[i].cmd);
		FUZZ_ASSERT(a->r[i].len == b->r[i].len);
		FUZZ_ASSERT(a->r[i].bits == b->r[i].bits);
	}
}

static void addresses(const uint8_t *data, size_t size)
{
	char *s = fuzz_strndup(data, size);
	char err[256] = FUZZ_ERR_UNSET, text[200];
	struct egd_addr a, b;

	if (egd_addr_parse(s, &a, err, sizeof(err)) == 0) {
		static const uint8_t zero[16];

		if (a.kind == EGD_ADDR_UNIX) {
			FUZZ_ASSERT(a.path[0] == '/');
			FUZZ_ASSERT(memchr(a.path, '\0', sizeof(a.path)));
		} else {
			FUZZ_ASSERT(a.port >= 1);
			FUZZ_ASSERT(memcmp(a.ip, zero,
					   a.kind == EGD_ADDR_TCP4 ? 4 : 16) != 0);
		}
		egd_addr_format(&a, text, sizeof(text));
		FUZZ_ASSERT(egd_addr_parse(text, &b, err, sizeof(err)) == 0);
		FUZZ_ASSERT(a.kind == b.kind && a.port == b.port &&
			    a.loopback == b.loopback);
		FUZZ_ASSERT(strcmp(a.path, b.path) == 0);
		FUZZ_ASSERT(memcmp(a.ip, b.ip, sizeof(a.ip)) == 0);
	} else {
		fuzz_assert_message(err, sizeof(err));
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct result want, got, bytes;
	size_t piece;

	if (size < 1)
		return 0;
	piece = data[0] % 17;
	data++;
	size--;
	if (piece == 0)
		piece = size ? size : 1;
	model(data, size, &want);
	parse_pieces(data, size, piece, &got);
	parse_pieces(data, size, 1, &bytes);
	/* The model stops at MAX_REQ requests like the parsers. */
	same(&want, &got);
	same(&want, &bytes);
	addresses(data, size);
	return 0;
}
