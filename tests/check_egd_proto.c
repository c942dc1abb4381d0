// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the EGD protocol module (egd_proto.h): every command
 * parsed whole and cut at every byte, requests back to back, 0x03's data
 * skipped (a command byte inside it is not a command), garbage sticks,
 * the reply encoders, and the listening-address rule (loopback by default,
 * a named address allowed, a wildcard refused).
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rngfeed/egd_proto.h"
#include "test_doubles.h"

/* Parse @len bytes fed @piece at a time; the requests found, in order. */
static size_t parse_all(const uint8_t *buf, size_t len, size_t piece,
			struct egd_request *out, size_t cap, bool *bad)
{
	struct egd_parser p;
	size_t n = 0, off = 0;

	egd_parser_init(&p);
	*bad = false;
	while (off < len) {
		size_t end = off + piece < len ? off + piece : len;

		while (off < end) {
			enum egd_event ev;
			struct egd_request r;
			size_t used = egd_parse(&p, buf + off, end - off, &ev, &r);

			ck_assert_uint_le(used, end - off);
			off += used;
			if (ev == EGD_EV_BAD) {
				*bad = true;
				return n;
			}
			if (ev == EGD_EV_REQUEST) {
				ck_assert_uint_lt(n, cap);
				out[n++] = r;
			} else {
				ck_assert_uint_eq(off, end); /* MORE: all used */
			}
		}
	}
	return n;
}

START_TEST(each_command)
{
	static const uint8_t in[] = {
		0x00,             /* available */
		0x01, 17,         /* non-blocking 17 */
		0x02, 255,        /* blocking 255 */
		0x03, 0x01, 0x00, 3, 0x02, 0x04, 0x99, /* write 3, 256 bits */
		0x04,             /* pid */
		0x02, 0,          /* blocking 0 */
		0x03, 0, 0, 0,    /* write nothing */
	};
	struct egd_request r[16];
	bool bad;

	for (size_t piece = 1; piece <= sizeof(in); piece++) {
		size_t n = parse_all(in, sizeof(in), piece, r, 16, &bad);

		ck_assert(!bad);
		ck_assert_uint_eq(n, 7);
		ck_assert_int_eq(r[0].cmd, EGD_CMD_AVAILABLE);
		ck_assert_int_eq(r[1].cmd, EGD_CMD_READ_NONBLOCK);
		ck_assert_uint_eq(r[1].len, 17);
		ck_assert_int_eq(r[2].cmd, EGD_CMD_READ_BLOCK);
		ck_assert_uint_eq(r[2].len, 255);
		/* The data held 0x02 and 0x04: skipped, not commands. */
		ck_assert_int_eq(r[3].cmd, EGD_CMD_WRITE);
		ck_assert_uint_eq(r[3].len, 3);
		ck_assert_uint_eq(r[3].bits, 256);
		ck_assert_int_eq(r[4].cmd, EGD_CMD_PID);
		ck_assert_int_eq(r[5].cmd, EGD_CMD_READ_BLOCK);
		ck_assert_uint_eq(r[5].len, 0);
		ck_assert_int_eq(r[6].cmd, EGD_CMD_WRITE);
		ck_assert_uint_eq(r[6].len, 0);
	}
}
END_TEST

START_TEST(stops_after_one_request)
{
	static const uint8_t in[] = { 0x02, 8, 0x00, 0x04 };
	struct egd_parser p;
	struct egd_request r;
	enum egd_event ev;

	egd_parser_init(&p);
	ck_assert_uint_eq(egd_parse(&p, in, sizeof(in), &ev, &r), 2);
	ck_assert_int_eq(ev, EGD_EV_REQUEST);
	ck_assert_uint_eq(egd_parse(&p, in + 2, 2, &ev, &r), 1);
	ck_assert_int_eq(r.cmd, EGD_CMD_AVAILABLE);
	ck_assert_uint_eq(egd_parse(&p, in + 3, 1, &ev, &r), 1);
	ck_assert_int_eq(r.cmd, EGD_CMD_PID);
	ck_assert_uint_eq(egd_parse(&p, in, 0, &ev, &r), 0);
	ck_assert_int_eq(ev, EGD_EV_MORE);
}
END_TEST

START_TEST(half_request_waits)
{
	struct egd_parser p;
	struct egd_request r;
	enum egd_event ev;
	uint8_t b = 0x02;

	egd_parser_init(&p);
	ck_assert(!egd_parser_midway(&p));
	ck_assert_uint_eq(egd_parse(&p, &b, 1, &ev, &r), 1);
	ck_assert_int_eq(ev, EGD_EV_MORE);
	ck_assert(egd_parser_midway(&p));
	b = 200;
	ck_assert_uint_eq(egd_parse(&p, &b, 1, &ev, &r), 1);
	ck_assert_int_eq(ev, EGD_EV_REQUEST);
	ck_assert_uint_eq(r.len, 200);
	ck_assert(!egd_parser_midway(&p));
}
END_TEST

START_TEST(garbage_sticks)
{
	for (unsigned int c = 5; c < 256; c++) {
		uint8_t in[2] = { (uint8_t)c, 0x00 };
		struct egd_parser p;
		struct egd_request r;
		enum egd_event ev;

		egd_parser_init(&p);
		ck_assert_uint_eq(egd_parse(&p, in, 2, &ev, &r), 1);
		ck_assert_int_eq(ev, EGD_EV_BAD);
		/* Nothing more is taken, whatever follows. */
		ck_assert_uint_eq(egd_parse(&p, in + 1, 1, &ev, &r), 0);
		ck_assert_int_eq(ev, EGD_EV_BAD);
	}
}
END_TEST

START_TEST(replies)
{
	uint8_t b[EGD_PID_REPLY_MAX];

	egd_reply_available(b, 0x01020304u);
	ck_assert_mem_eq(b, "\x01\x02\x03\x04", 4);
	ck_assert_uint_eq(egd_reply_pid(b, sizeof(b), 4242), 5);
	ck_assert_mem_eq(b, "\x04" "4242", 5);
	ck_assert_uint_eq(egd_reply_pid(b, 4, 4242), 0); /* too short */
	/* The longest pid: 20 digits with a 64-bit long, 10 with 32-bit. */
	ck_assert_uint_eq(egd_reply_pid(b, sizeof(b), ULONG_MAX),
			  sizeof(unsigned long) == 8 ? 21 : 11);
}
END_TEST

static int addr(const char *s, struct egd_addr *a, char *err)
{
	err[0] = '\0';
	return egd_addr_parse(s, a, err, 200);
}

START_TEST(addresses)
{
	struct egd_addr a;
	char err[200], buf[200];

	ck_assert_int_eq(addr("unix:/run/rngfeed/egd.sock", &a, err), 0);
	ck_assert_int_eq(a.kind, EGD_ADDR_UNIX);
	ck_assert_str_eq(a.path, "/run/rngfeed/egd.sock");
	ck_assert_str_eq(egd_addr_format(&a, buf, sizeof(buf)),
			 "unix:/run/rngfeed/egd.sock");
	/* TCP: the kind (-1: not checked), whether it is loopback, and how it
	 * is written back (NULL: not checked). */
	static const struct {
		const char *s;
		int kind;
		bool loopback;
		const char *formatted;
	} tcp[] = {
		/* tcp:PORT is the loopback address. */
		{ "tcp:7000", EGD_ADDR_TCP4, true, "tcp:127.0.0.1:7000" },
		{ "tcp:localhost:7000", -1, true, NULL },
		{ "tcp:127.3.4.5:1", -1, true, NULL },
		{ "tcp:[::1]:65535", EGD_ADDR_TCP6, true, "tcp:[::1]:65535" },
		/* Another address, named: allowed, not loopback. */
		{ "tcp:192.168.122.1:7000", -1, false, NULL },
		{ "tcp:[fe80::1]:7000", -1, false, NULL },
	};
	for (size_t i = 0; i < sizeof(tcp) / sizeof(tcp[0]); i++) {
		ck_assert_msg(addr(tcp[i].s, &a, err) == 0, "%s: %s", tcp[i].s, err);
		ck_assert_msg(tcp[i].kind < 0 || (int)a.kind == tcp[i].kind,
			      "%s: kind %d", tcp[i].s, (int)a.kind);
		ck_assert_msg(a.loopback == tcp[i].loopback, "%s: loopback %d",
			      tcp[i].s, (int)a.loopback);
		if (tcp[i].formatted)
			ck_assert_str_eq(egd_addr_format(&a, buf, sizeof(buf)),
					 tcp[i].formatted);
	}
	/* Refused, each with a message. */
	static const char *const bad[] = {
		"tcp:0.0.0.0:7000", "tcp:[::]:7000", "tcp::7000", "tcp:0",
		"tcp:65536", "tcp:host.example:7000", "tcp:1.2.3:7000",
		"tcp:[::1]7000", "tcp:[::1", "unix:relative", "unix:",
		"unix:@abstract", "udp:7000", "/run/x.sock", "",
		"tcp:127.0.0.1:", "tcp:127.0.0.1:-1", "tcp:127.0.0.1:80x",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(addr(bad[i], &a, err) == -EINVAL, "%s", bad[i]);
		ck_assert_msg(err[0] != '\0', "%s: no message", bad[i]);
	}
	ck_assert_int_eq(addr("tcp:0.0.0.0:7000", &a, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "every interface"));
	/* A path as long as sun_path allows, and one byte more. */
	{
		char s[5 + 110] = "unix:/";

		memset(s + 6, 'a', 106);
		s[6 + 106] = '\0'; /* 107 bytes of path */
		ck_assert_int_eq(addr(s, &a, err), 0);
		s[6 + 106] = 'a';
		s[6 + 107] = '\0';
		ck_assert_int_eq(addr(s, &a, err), -EINVAL);
	}
}
END_TEST

static Suite *egd_proto_suite(void)
{
	Suite *s = suite_create("egd_proto");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, each_command);
	tcase_add_test(tc, stops_after_one_request);
	tcase_add_test(tc, half_request_waits);
	tcase_add_test(tc, garbage_sticks);
	tcase_add_test(tc, replies);
	tcase_add_test(tc, addresses);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return td_run(egd_proto_suite()); }
