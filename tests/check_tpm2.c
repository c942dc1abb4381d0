// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for src/tpm2.c (TPM2_GetRandom command and response, response
 * code names) and for the tpm driver's read path, driven through a unix
 * socket by a thread in this program that plays a TPM from a script:
 * whole, split, short, silent, malformed and error answers.  Every bad
 * answer must give a clean error and no bytes.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/source.h"
#include "rngfeed/sources.h"
#include "rngfeed/tpm2.h"
#include "test_doubles.h"

/* ---- building responses ------------------------------------------------- */

static size_t put_header(uint8_t *buf, uint16_t tag, uint32_t size,
			 uint32_t rc)
{
	buf[0] = (uint8_t)(tag >> 8);
	buf[1] = (uint8_t)tag;
	for (int i = 0; i < 4; i++) {
		buf[2 + i] = (uint8_t)(size >> (24 - 8 * i));
		buf[6 + i] = (uint8_t)(rc >> (24 - 8 * i));
	}
	return TPM2_HEADER_SIZE;
}

/* Byte @i of the stream the scripted TPM hands out. */
static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 151u + 7u + (i >> 8));
}

/* A well-formed success response carrying @n pattern bytes from @from. */
static size_t build_ok(uint8_t *buf, uint16_t n, size_t from)
{
	size_t len = TPM2_GET_RANDOM_RSP_SIZE(n);

	put_header(buf, TPM2_ST_NO_SESSIONS, (uint32_t)len, 0);
	buf[10] = (uint8_t)(n >> 8);
	buf[11] = (uint8_t)n;
	for (size_t i = 0; i < n; i++)
		buf[12 + i] = pattern(from + i);
	return len;
}

static size_t build_error(uint8_t *buf, uint32_t rc)
{
	return put_header(buf, TPM2_ST_NO_SESSIONS, TPM2_HEADER_SIZE, rc);
}

/* Parse that must fail with @want and leave no bytes, naming @word. */
static void expect_parse_fails(const uint8_t *buf, size_t len,
			       uint16_t asked, ssize_t want, const char *word)
{
	struct tpm2_random out;
	char why[256] = "";
	ssize_t r = tpm2_get_random_parse(buf, len, asked, &out, why,
					  sizeof(why));

	ck_assert_msg(r == want, "got %zd (%s), want %zd", r, why, want);
	ck_assert_ptr_null(out.bytes);
	ck_assert_uint_eq(out.len, 0);
	ck_assert_msg(strstr(why, word), "why '%s' lacks '%s'", why, word);
	ck_assert_msg(!strchr(why, '\n'), "why is not one line: '%s'", why);
}

/* ---- the command -------------------------------------------------------- */

START_TEST(test_command_bytes)
{
	static const uint8_t want64[] = { 0x80, 0x01, 0x00, 0x00, 0x00, 0x0C,
					  0x00, 0x00, 0x01, 0x7B, 0x00, 0x40 };
	static const uint8_t want_big[] = { 0x80, 0x01, 0x00, 0x00,
					    0x00, 0x0C, 0x00, 0x00,
					    0x01, 0x7B, 0x12, 0x34 };
	uint8_t cmd[TPM2_GET_RANDOM_CMD_SIZE + 1];

	memset(cmd, 0xAA, sizeof(cmd));
	ck_assert_uint_eq(tpm2_get_random_command(cmd, 64), 12);
	ck_assert_mem_eq(cmd, want64, sizeof(want64));
	ck_assert_uint_eq(cmd[12], 0xAA); /* nothing written past it */
	tpm2_get_random_command(cmd, 0x1234);
	ck_assert_mem_eq(cmd, want_big, sizeof(want_big));
}
END_TEST

/* ---- good responses ----------------------------------------------------- */

START_TEST(test_parse_good_sizes)
{
	static const uint16_t sizes[] = { 1, 2, 16, 32, 48, 63, 64 };
	uint8_t buf[128];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct tpm2_random out;
		size_t len = build_ok(buf, sizes[i], 100);
		ssize_t r;

		/* Asked exactly that many, and more (fewer is normal). */
		for (uint16_t asked = sizes[i]; asked <= 64; asked += 63) {
			r = tpm2_get_random_parse(buf, len, asked, &out, NULL,
						  0);
			ck_assert_int_eq(r, sizes[i]);
			ck_assert_uint_eq(out.len, sizes[i]);
			ck_assert_ptr_eq(out.bytes, buf + 12);
			ck_assert_uint_eq(out.hdr.code, 0);
			ck_assert_uint_eq(out.hdr.size, len);
			for (size_t k = 0; k < sizes[i]; k++)
				ck_assert_uint_eq(out.bytes[k],
						  pattern(100 + k));
		}
	}
}
END_TEST

START_TEST(test_parse_zero_bytes)
{
	struct tpm2_random out;
	uint8_t buf[16];
	size_t len = build_ok(buf, 0, 0);

	/* Allowed by Part 3 §16.1; the driver treats it as "not now". */
	ck_assert_uint_eq(len, 12);
	ck_assert_int_eq(tpm2_get_random_parse(buf, len, 64, &out, NULL, 0),
			 0);
	ck_assert_uint_eq(out.len, 0);
}
END_TEST

/* What swtpm 0.7.1 sent for GetRandom(8), captured over its socket. */
START_TEST(test_parse_swtpm_capture)
{
	static const uint8_t rsp[] = { 0x80, 0x01, 0x00, 0x00, 0x00, 0x14,
				       0x00, 0x00, 0x00, 0x00, 0x00, 0x08,
				       0x0a, 0xf7, 0xd0, 0x2a, 0x66, 0x92,
				       0x15, 0xb0 };
	struct tpm2_random out;

	ck_assert_int_eq(tpm2_get_random_parse(rsp, sizeof(rsp), 8, &out,
					       NULL, 0),
			 8);
	ck_assert_mem_eq(out.bytes, rsp + 12, 8);
}
END_TEST

/* ---- malformed responses ------------------------------------------------ */

START_TEST(test_parse_wrong_tag)
{
	uint8_t buf[128];
	size_t len = build_ok(buf, 16, 0);

	buf[1] = 0x02; /* TPM_ST_SESSIONS */
	expect_parse_fails(buf, len, 16, -EPROTO, "tag 0x8002");
	put_header(buf, TPM2_ST_RSP_COMMAND, 10, TPM2_RC_BAD_TAG);
	expect_parse_fails(buf, 10, 16, -EPROTO, "TPM 1.2");
	put_header(buf, 0, 10, 0);
	expect_parse_fails(buf, 10, 16, -EPROTO, "tag 0x0000");
}
END_TEST

START_TEST(test_parse_size_mismatch)
{
	uint8_t buf[128];
	size_t len = build_ok(buf, 32, 0);

	/* Header says more than arrived (the rest never came)... */
	expect_parse_fails(buf, len - 1, 64, -EPROTO, "received");
	/* ...or less than arrived (trailing bytes). */
	buf[len] = 0x55;
	expect_parse_fails(buf, len + 1, 64, -EPROTO, "received");
	/* A size field that does not even cover the header. */
	for (uint32_t size = 0; size < TPM2_HEADER_SIZE; size++) {
		put_header(buf, TPM2_ST_NO_SESSIONS, size, 0);
		expect_parse_fails(buf, 10, 64, -EPROTO, "header");
	}
	/* A size field near UINT32_MAX does not wrap anything. */
	put_header(buf, TPM2_ST_NO_SESSIONS, 0xFFFFFFFFu, 0);
	expect_parse_fails(buf, 10, 64, -EPROTO, "received");
}
END_TEST

START_TEST(test_parse_truncated)
{
	uint8_t buf[128];
	size_t len = build_ok(buf, 64, 0);
	struct tpm2_header hdr;

	/* Every prefix of a good response is refused: the header's size
	 * says more, or there is no header at all. */
	for (size_t cut = 0; cut < len; cut++)
		expect_parse_fails(buf, cut, 64, -EPROTO,
				   cut < 10 ? "truncated" : "received");
	ck_assert_int_eq(tpm2_parse_header(buf, 9, &hdr, NULL, 0), -EPROTO);
	ck_assert_uint_eq(hdr.tag, TPM2_ST_NO_SESSIONS);
	ck_assert_uint_eq(hdr.size, len);
	ck_assert_uint_eq(hdr.code, 0);
	/* A success response must hold at least the digest size. */
	for (uint32_t size = 10; size < 12; size++) {
		put_header(buf, TPM2_ST_NO_SESSIONS, size, 0);
		expect_parse_fails(buf, size, 64, -EPROTO, "digest size");
	}
}
END_TEST

START_TEST(test_parse_digest_too_big)
{
	uint8_t buf[128];
	size_t len = build_ok(buf, 65, 0);

	/* Consistent with its own size, but more than asked. */
	expect_parse_fails(buf, len, 64, -EBADMSG, "65 bytes when 64");
	len = build_ok(buf, 9, 0);
	expect_parse_fails(buf, len, 8, -EBADMSG, "9 bytes when 8");
	expect_parse_fails(buf, len, 0, -EBADMSG, "when 0");
}
END_TEST

START_TEST(test_parse_digest_inconsistent)
{
	uint8_t buf[128];
	size_t len = build_ok(buf, 32, 0);

	/* The digest claims more than the response holds... */
	buf[11] = 40;
	expect_parse_fails(buf, len, 64, -EBADMSG, "disagrees");
	/* ...or less (bytes left over after it). */
	buf[11] = 20;
	expect_parse_fails(buf, len, 64, -EBADMSG, "disagrees");
	/* A digest size whose high byte is set. */
	buf[10] = 0x01;
	buf[11] = 0x00;
	expect_parse_fails(buf, len, 64, -EBADMSG, "256 bytes");
}
END_TEST

/* ---- response codes ----------------------------------------------------- */

static const struct {
	uint32_t rc;
	const char *name;
	int err;
} rc_cases[] = {
	/* format 0: errors, warnings */
	{ 0x100, "TPM_RC_INITIALIZE", -EIO },
	{ 0x101, "TPM_RC_FAILURE", -EIO },
	{ 0x143, "TPM_RC_COMMAND_CODE", -EIO },
	{ 0x01E, "TPM_RC_BAD_TAG", -EIO },
	{ 0x922, "TPM_RC_RETRY", -EAGAIN },
	{ 0x908, "TPM_RC_YIELDED", -EAGAIN },
	{ 0x909, "TPM_RC_CANCELED", -EAGAIN },
	{ 0x90A, "TPM_RC_TESTING", -EAGAIN },
	{ 0x920, "TPM_RC_NV_RATE", -EAGAIN },
	{ 0x921, "TPM_RC_LOCKOUT", -EIO },
	{ 0x923, "TPM_RC_NV_UNAVAILABLE", -EIO },
	/* format 1, bare and with parameter / handle / session numbers */
	{ 0x084, "TPM_RC_VALUE", -EIO },
	{ 0x1C4, "TPM_RC_VALUE", -EIO },   /* + TPM_RC_P + TPM_RC_1 */
	{ 0x1D5, "TPM_RC_SIZE", -EIO },    /* swtpm's answer to size 13 */
	{ 0xFD5, "TPM_RC_SIZE", -EIO },    /* parameter 15 */
	{ 0x095, "TPM_RC_SIZE", -EIO },
	{ 0x18B, "TPM_RC_HANDLE", -EIO },  /* handle 1 */
	{ 0x9A2, "TPM_RC_BAD_AUTH", -EIO }, /* session 1: not a warning */
	{ 0x0A7, "TPM_RC_ECC_POINT", -EIO },
	/* a layer from a resource manager is stripped for the name */
	{ 0x000B0143, "TPM_RC_COMMAND_CODE", -EIO },
	{ 0x000B0922, "TPM_RC_RETRY", -EAGAIN },
};

START_TEST(test_rc_names)
{
	for (size_t i = 0; i < sizeof(rc_cases) / sizeof(rc_cases[0]); i++) {
		const char *name = tpm2_rc_name(rc_cases[i].rc);
		char buf[96];

		ck_assert_msg(name && strcmp(name, rc_cases[i].name) == 0,
			      "0x%x: name %s, want %s", rc_cases[i].rc,
			      name ? name : "(null)", rc_cases[i].name);
		ck_assert_int_eq(tpm2_rc_errno(rc_cases[i].rc),
				 rc_cases[i].err);
		tpm2_rc_format(rc_cases[i].rc, buf, sizeof(buf));
		ck_assert_msg(strstr(buf, rc_cases[i].name), "'%s'", buf);
	}
	ck_assert_str_eq(tpm2_rc_name(0), "TPM_RC_SUCCESS");
	ck_assert_int_eq(tpm2_rc_errno(0), 0);
}
END_TEST

START_TEST(test_rc_format_details)
{
	static const struct {
		uint32_t rc;
		const char *text;
	} cases[] = {
		{ 0x1C4, "TPM_RC_VALUE (0x1c4, parameter 1)" },
		{ 0xFD5, "TPM_RC_SIZE (0xfd5, parameter 15)" },
		{ 0x28B, "TPM_RC_HANDLE (0x28b, handle 2)" },
		{ 0x9A2, "TPM_RC_BAD_AUTH (0x9a2, session 1)" },
		{ 0x084, "TPM_RC_VALUE (0x84)" },
		{ 0x922, "TPM_RC_RETRY (0x922)" },
		{ 0x000B0143,
		  "TPM_RC_COMMAND_CODE (0x143, from the resource manager)" },
		{ 0x00080101, "TPM_RC_FAILURE (0x101, layer 8)" },
		/* codes no table knows still get a kind */
		{ 0x930, "unknown TPM warning 0x930" },
		{ 0x17F, "unknown TPM error 0x17f" },
		{ 0x0BF, "unknown TPM error 0xbf" },
		{ 0x500, "vendor-defined TPM response code 0x500" },
		{ 0x003, "TPM 1.2 response code 0x3" },
		{ 0x1000, "malformed response code 0x1000" },
	};
	char buf[96];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tpm2_rc_format(cases[i].rc, buf, sizeof(buf));
		ck_assert_str_eq(buf, cases[i].text);
	}
	ck_assert_ptr_null(tpm2_rc_name(0x930));
	ck_assert_ptr_null(tpm2_rc_name(0x500));
	ck_assert_ptr_null(tpm2_rc_name(0x1000));
	ck_assert_int_eq(tpm2_rc_errno(0x1000 | TPM2_RC_RETRY), -EIO);
	/* A tiny buffer is cut, never overrun. */
	memset(buf, 'x', sizeof(buf));
	tpm2_rc_format(0x1C4, buf, 8);
	ck_assert_str_eq(buf, "TPM_RC_");
	ck_assert_int_eq(buf[8], 'x');
}
END_TEST

START_TEST(test_parse_error_codes)
{
	for (size_t i = 0; i < sizeof(rc_cases) / sizeof(rc_cases[0]); i++) {
		uint8_t buf[16];
		size_t len = build_error(buf, rc_cases[i].rc);
		struct tpm2_random out;
		char why[256] = "";
		ssize_t r;

		r = tpm2_get_random_parse(buf, len, 64, &out, why,
					  sizeof(why));
		ck_assert_int_eq(r, rc_cases[i].err);
		ck_assert_uint_eq(out.hdr.code, rc_cases[i].rc);
		ck_assert_ptr_null(out.bytes);
		ck_assert_msg(strstr(why, rc_cases[i].name), "'%s'", why);
	}
}
END_TEST

START_TEST(test_parse_error_with_body)
{
	uint8_t buf[32];

	/* An error response is the header alone (Part 1 §18). */
	put_header(buf, TPM2_ST_NO_SESSIONS, 12, TPM2_RC_RETRY);
	buf[10] = 0;
	buf[11] = 0;
	expect_parse_fails(buf, 12, 64, -EPROTO, "TPM_RC_RETRY");
}
END_TEST

/* Random corruption of good responses: never a crash, and bytes only
 * from a response that is exactly right. */
START_TEST(test_parse_corrupted)
{
	uint8_t good[128], buf[128];
	unsigned int seed = 12345;

	for (int iter = 0; iter < 20000; iter++) {
		uint16_t n = (uint16_t)(rand_r(&seed) % 65);
		size_t len = build_ok(good, n, 0), cut;
		struct tpm2_random out;
		ssize_t r;

		memcpy(buf, good, len);
		for (int k = rand_r(&seed) % 3; k >= 0; k--)
			buf[rand_r(&seed) % len] ^=
				(uint8_t)(1u << (rand_r(&seed) % 8));
		cut = (size_t)rand_r(&seed) % (len + 1);
		if (rand_r(&seed) % 2)
			cut = len;
		r = tpm2_get_random_parse(buf, cut, n, &out, NULL, 0);
		if (r >= 0) {
			/* Accepted: then header, tag, size and digest
			 * size must all be intact. */
			ck_assert_uint_eq(cut, len);
			ck_assert_mem_eq(buf, good, 12);
			ck_assert_uint_eq(out.len, (size_t)r);
			ck_assert_ptr_eq(out.bytes, buf + 12);
		} else {
			ck_assert_ptr_null(out.bytes);
		}
	}
}
END_TEST

/* ---- a scripted TPM on a unix socket ------------------------------------ */

enum step_kind {
	STEP_GIVE,   /* a success response with min(give, asked) bytes */
	STEP_RAW,    /* exactly these bytes */
	STEP_CLOSE,  /* close without answering */
	STEP_SILENT, /* never answer */
};

struct step {
	enum step_kind kind;
	uint16_t give;
	const uint8_t *raw;
	size_t raw_len;
	unsigned int pieces; /* split the answer into this many writes */
	size_t split_at;     /* or into two, the first this long */
	unsigned int gap_ms; /* pause between the pieces */
	bool close_after;    /* then close the connection */
};

#define MAX_CMDS 64

struct tpm_server {
	char dir[64];
	char path[96];
	int lfd;
	pthread_t thread;
	const struct step *steps;
	size_t n_steps;
	/* Results, read after the thread is joined. */
	uint16_t asked[MAX_CMDS];
	size_t n_cmds;
	size_t n_conns;
	size_t next; /* pattern bytes handed out so far */
	bool bad_command;
};

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void send_pieces(int fd, const uint8_t *buf, size_t len,
			const struct step *s)
{
	unsigned int pieces = s->split_at ? 2 : s->pieces ? s->pieces : 1;
	size_t done = 0;

	for (unsigned int p = 0; p < pieces; p++) {
		size_t chunk = p + 1 == pieces ? len - done
			       : s->split_at ? s->split_at
					     : len / pieces;

		if (chunk && write(fd, buf + done, chunk) != (ssize_t)chunk)
			return;
		done += chunk;
		if (p + 1 < pieces)
			sleep_ms(s->gap_ms);
	}
}

/* Check a command is GetRandom and return bytesRequested, or -1. */
static int command_asked(const uint8_t cmd[12])
{
	uint8_t want[12];

	tpm2_get_random_command(want, 0);
	if (memcmp(cmd, want, 10) != 0)
		return -1;
	return cmd[10] << 8 | cmd[11];
}

/* Serve one connection; returns when the client goes or the script
 * closes. */
static void serve(struct tpm_server *srv, int fd)
{
	uint8_t cmd[12], rsp[256];

	for (size_t i = 0;; i++) {
		const struct step *s = i < srv->n_steps ? &srv->steps[i]
							: NULL;
		int asked;

		if (td_read_full(fd, cmd, sizeof(cmd)) < 0)
			return;
		asked = command_asked(cmd);
		if (asked < 0 || srv->n_cmds == MAX_CMDS) {
			srv->bad_command = true;
			return;
		}
		srv->asked[srv->n_cmds++] = (uint16_t)asked;
		if (!s || s->kind == STEP_CLOSE)
			return;
		if (s->kind == STEP_SILENT) {
			/* Wait for the client to give up and close. */
			while (read(fd, cmd, 1) > 0)
				;
			return;
		}
		if (s->kind == STEP_GIVE) {
			uint16_t n = s->give < asked ? s->give
						     : (uint16_t)asked;
			size_t len = build_ok(rsp, n, srv->next);

			srv->next += n;
			send_pieces(fd, rsp, len, s);
		} else {
			send_pieces(fd, s->raw, s->raw_len, s);
		}
		if (s->close_after)
			return;
	}
}

static void *server_thread(void *arg)
{
	struct tpm_server *srv = arg;

	/* One connection after another until the listener is shut. */
	for (;;) {
		int fd = accept(srv->lfd, NULL, NULL);

		if (fd < 0)
			return NULL;
		srv->n_conns++;
		serve(srv, fd);
		close(fd);
	}
}

static void server_start(struct tpm_server *srv, const struct step *steps,
			 size_t n_steps)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memset(srv, 0, sizeof(*srv));
	snprintf(srv->dir, sizeof(srv->dir), "/tmp/check_tpm2.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(srv->dir));
	snprintf(srv->path, sizeof(srv->path), "%s/sock", srv->dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", srv->path);
	srv->steps = steps;
	srv->n_steps = n_steps;
	srv->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(srv->lfd, 0);
	ck_assert_int_eq(bind(srv->lfd, (struct sockaddr *)&sa, sizeof(sa)),
			 0);
	ck_assert_int_eq(listen(srv->lfd, 4), 0);
	ck_assert_int_eq(pthread_create(&srv->thread, NULL, server_thread,
					srv),
			 0);
}

/* Stop accepting, wait for the thread, remove the socket. */
static void server_stop(struct tpm_server *srv)
{
	shutdown(srv->lfd, SHUT_RDWR);
	pthread_join(srv->thread, NULL);
	close(srv->lfd);
	unlink(srv->path);
	rmdir(srv->dir);
}

static void tpm_config(struct source_config *cfg, const char *device,
		       const char *timeout_ms)
{
	char err[256] = "";

	source_config_init(cfg, &source_tpm);
	ck_assert_msg(source_config_set(cfg, "device", device, err,
					sizeof(err)) == 0,
		      "%s", err);
	if (timeout_ms)
		ck_assert_msg(source_config_set(cfg, "timeout-ms", timeout_ms,
						err, sizeof(err)) == 0,
			      "%s", err);
}

/* Open the driver on the scripted TPM, bypassing source.c. */
#define DEVICE_LEN 160

/* A tpm source over @srv's socket, its device name in @device. */
static void srv_config(struct source_config *cfg, const struct tpm_server *srv,
		       const char *timeout_ms, char device[DEVICE_LEN])
{
	snprintf(device, DEVICE_LEN, "unix:%s", srv->path);
	tpm_config(cfg, device, timeout_ms);
}

static void *drv_open(struct tpm_server *srv, const char *timeout_ms)
{
	struct source_config cfg;
	char device[DEVICE_LEN], why[SOURCE_WHY_LEN] = "";
	void *st = NULL;

	srv_config(&cfg, srv, timeout_ms, device);
	ck_assert_msg(source_tpm.open(&cfg, &st, why, sizeof(why)) == 0,
		      "open: %s", why);
	return st;
}

static void describe(void *st, char *buf, size_t len)
{
	ck_assert_int_eq(source_tpm.describe(st, buf, len), 0);
}

/* A driver read that must fail with @want, leave @buf alone, and say
 * @word in describe(). */
static void expect_read_fails(void *st, size_t len, ssize_t want,
			      const char *word)
{
	uint8_t buf[256];
	char desc[512];
	ssize_t r;

	memset(buf, 0xEE, sizeof(buf));
	r = source_tpm.read(st, buf, len);
	describe(st, desc, sizeof(desc));
	ck_assert_msg(r == want, "read: got %zd, want %zd (%s)", r, want,
		      desc);
	for (size_t i = 0; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], 0xEE);
	ck_assert_msg(strstr(desc, word), "describe '%s' lacks '%s'", desc,
		      word);
}

static void expect_pattern(const uint8_t *buf, size_t len, size_t from)
{
	for (size_t i = 0; i < len; i++)
		ck_assert_msg(buf[i] == pattern(from + i),
			      "byte %zu: 0x%02x, want 0x%02x", from + i,
			      buf[i], pattern(from + i));
}

/* source_read() of @len bytes from a fresh server playing the @n @steps:
 * all of them, the server's pattern from its start.  The server is
 * stopped on return, its counts in @srv. */
static void source_reads_all(struct tpm_server *srv, const struct step *steps,
			     size_t n, uint8_t *buf, size_t len)
{
	struct source_config cfg;
	char device[DEVICE_LEN];
	struct source *src;

	server_start(srv, steps, n);
	srv_config(&cfg, srv, NULL, device);
	src = td_source_open(&cfg);
	ck_assert_int_eq(source_read(src, buf, len, NULL), (ssize_t)len);
	expect_pattern(buf, len, 0);
	source_close(src);
	server_stop(srv);
}

/* ---- the driver through a socket ---------------------------------------- */

START_TEST(test_driver_full_reads)
{
	static const struct step steps[] = {
		{ .kind = STEP_GIVE, .give = 64 },
		{ .kind = STEP_GIVE, .give = 64 },
		{ .kind = STEP_GIVE, .give = 64 },
	};
	struct tpm_server srv;
	struct source *src;
	struct source_config cfg;
	char device[DEVICE_LEN], desc[256];
	uint8_t buf[150];

	server_start(&srv, steps, 3);
	srv_config(&cfg, &srv, NULL, device);
	src = td_source_open(&cfg);
	ck_assert_int_eq(source_read(src, buf, sizeof(buf), NULL),
			 sizeof(buf));
	expect_pattern(buf, sizeof(buf), 0);
	source_describe(src, desc, sizeof(desc));
	ck_assert_str_eq(desc, device);
	source_close(src);
	server_stop(&srv);
	/* At most 64 per command, and never more than was still wanted. */
	ck_assert_uint_eq(srv.n_cmds, 3);
	ck_assert_uint_eq(srv.asked[0], 64);
	ck_assert_uint_eq(srv.asked[1], 64);
	ck_assert_uint_eq(srv.asked[2], 150 - 128);
	ck_assert(!srv.bad_command);
}
END_TEST

START_TEST(test_driver_fewer_than_asked)
{
	static const struct step steps[] = {
		{ .kind = STEP_GIVE, .give = 32 },
		{ .kind = STEP_GIVE, .give = 32 },
		{ .kind = STEP_GIVE, .give = 32 },
		{ .kind = STEP_GIVE, .give = 32 },
	};
	struct tpm_server srv;
	uint8_t buf[100];
	void *st;

	/* One driver read returns what one answer gave... */
	server_start(&srv, steps, 4);
	st = drv_open(&srv, NULL);
	ck_assert_int_eq(source_tpm.read(st, buf, sizeof(buf)), 32);
	expect_pattern(buf, 32, 0);
	source_tpm.close(st);
	server_stop(&srv);

	/* ...and source_read() loops until it has all it wanted. */
	source_reads_all(&srv, steps, 4, buf, sizeof(buf));
	ck_assert_uint_eq(srv.n_cmds, 4);
	ck_assert_uint_eq(srv.asked[3], 100 - 96);
}
END_TEST

START_TEST(test_driver_split_response)
{
	/* Cut into 7 writes 30 ms apart: the header itself arrives in
	 * pieces, and the digest size in a piece of its own. */
	static const struct step steps[] = {
		{ .kind = STEP_GIVE, .give = 64, .pieces = 7, .gap_ms = 30 },
		{ .kind = STEP_GIVE, .give = 64, .pieces = 76, .gap_ms = 1 },
	};
	struct tpm_server srv;
	uint8_t buf[64];
	void *st;

	server_start(&srv, steps, 2);
	st = drv_open(&srv, NULL);
	ck_assert_int_eq(source_tpm.read(st, buf, sizeof(buf)), 64);
	expect_pattern(buf, 64, 0);
	ck_assert_int_eq(source_tpm.read(st, buf, sizeof(buf)), 64);
	expect_pattern(buf, 64, 64);
	source_tpm.close(st);
	server_stop(&srv);
	ck_assert_uint_eq(srv.n_cmds, 2);
}
END_TEST

static uint8_t short_rsp[40];

START_TEST(test_driver_short_then_eof)
{
	/* 40 bytes of a 76-byte answer, then the peer closes. */
	static const struct step steps[] = {
		{ .kind = STEP_RAW, .raw = short_rsp, .raw_len = 40,
		  .pieces = 2, .gap_ms = 20, .close_after = true },
	};
	struct tpm_server srv;
	uint8_t full[128];
	void *st;

	build_ok(full, 64, 0);
	memcpy(short_rsp, full, sizeof(short_rsp));
	server_start(&srv, steps, 1);
	st = drv_open(&srv, NULL);
	expect_read_fails(st, 64, -EPROTO, "truncated response: 40 bytes");
	/* Broken from now on: no second command is sent. */
	expect_read_fails(st, 64, -EPROTO, "truncated");
	source_tpm.close(st);
	server_stop(&srv);
	ck_assert_uint_eq(srv.n_cmds, 1);
}
END_TEST

START_TEST(test_driver_eof_without_answer)
{
	static const struct step steps[] = { { .kind = STEP_CLOSE } };
	struct tpm_server srv;
	void *st;

	server_start(&srv, steps, 1);
	st = drv_open(&srv, NULL);
	expect_read_fails(st, 64, -ECONNRESET, "closed the connection");
	source_tpm.close(st);
	server_stop(&srv);
}
END_TEST

static uint8_t rsp_lockout[10], rsp_retry[10], rsp_init[10];

START_TEST(test_driver_error_codes)
{
	/* A well-formed error keeps the stream in step: the next command
	 * is answered normally. */
	static const struct step steps[] = {
		{ .kind = STEP_RAW, .raw = rsp_lockout, .raw_len = 10 },
		{ .kind = STEP_GIVE, .give = 64 },
		{ .kind = STEP_RAW, .raw = rsp_init, .raw_len = 10 },
	};
	struct tpm_server srv;
	uint8_t buf[64];
	void *st;

	build_error(rsp_lockout, TPM2_RC_LOCKOUT);
	build_error(rsp_init, TPM2_RC_INITIALIZE);
	server_start(&srv, steps, 3);
	st = drv_open(&srv, NULL);
	expect_read_fails(st, 64, -EIO, "TPM_RC_LOCKOUT");
	ck_assert_int_eq(source_tpm.read(st, buf, sizeof(buf)), 64);
	expect_pattern(buf, 64, 0);
	expect_read_fails(st, 64, -EIO, "TPM2_Startup has not been run");
	source_tpm.close(st);
	server_stop(&srv);
	ck_assert_uint_eq(srv.n_cmds, 3);
}
END_TEST

START_TEST(test_driver_retry_then_bytes)
{
	static const struct step steps[] = {
		{ .kind = STEP_RAW, .raw = rsp_retry, .raw_len = 10 },
		{ .kind = STEP_RAW, .raw = rsp_retry, .raw_len = 10 },
		{ .kind = STEP_GIVE, .give = 0 },
		{ .kind = STEP_GIVE, .give = 64 },
	};
	struct tpm_server srv;
	uint8_t buf[64];
	void *st;

	build_error(rsp_retry, TPM2_RC_RETRY);
	server_start(&srv, steps, 4);
	st = drv_open(&srv, NULL);
	expect_read_fails(st, 64, -EAGAIN, "TPM_RC_RETRY");
	expect_read_fails(st, 64, -EAGAIN, "TPM_RC_RETRY");
	expect_read_fails(st, 64, -EAGAIN, "no bytes");
	ck_assert_int_eq(source_tpm.read(st, buf, sizeof(buf)), 64);
	source_tpm.close(st);
	server_stop(&srv);

	/* source_read() rides over them. */
	source_reads_all(&srv, steps, 4, buf, sizeof(buf));
	ck_assert_uint_eq(srv.n_cmds, 4);
}
END_TEST

static uint8_t rsp_bad[160];

/* One malformed answer, served and then checked through the driver. */
static void check_malformed(size_t len, ssize_t want, const char *word)
{
	const struct step steps[] = {
		{ .kind = STEP_RAW, .raw = rsp_bad, .raw_len = len },
		{ .kind = STEP_GIVE, .give = 64 },
	};
	struct tpm_server srv;
	void *st;

	server_start(&srv, steps, 2);
	st = drv_open(&srv, "300");
	expect_read_fails(st, 64, want, word);
	/* Never trusted again: the good answer behind it is not asked. */
	expect_read_fails(st, 64, want, word);
	source_tpm.close(st);
	server_stop(&srv);
	ck_assert_uint_eq(srv.n_cmds, 1);
}

START_TEST(test_driver_malformed)
{
	size_t len;

	len = build_ok(rsp_bad, 64, 0);
	rsp_bad[0] = 0x00; /* tag 0x0001 */
	check_malformed(len, -EPROTO, "tag 0x0001");

	/* More bytes than asked: its size field gives it away first. */
	len = build_ok(rsp_bad, 65, 0);
	check_malformed(len, -EPROTO, "77 bytes, more than a GetRandom of 64");

	len = build_ok(rsp_bad, 32, 0);
	rsp_bad[11] = 33; /* digest size disagrees */
	check_malformed(len, -EBADMSG, "disagrees");

	/* A size field larger than any GetRandom answer: refused at the
	 * header, without waiting for the bytes it announces. */
	put_header(rsp_bad, TPM2_ST_NO_SESSIONS, 4096, 0);
	check_malformed(10, -EPROTO, "more than a GetRandom");

	put_header(rsp_bad, TPM2_ST_NO_SESSIONS, 4, 0);
	check_malformed(10, -EPROTO, "header");

	/* A good answer with junk behind it in the same write. */
	len = build_ok(rsp_bad, 64, 0);
	memset(rsp_bad + len, 0x5A, 8);
	check_malformed(len + 8, -EPROTO, "received");

	/* An error code with a body. */
	put_header(rsp_bad, TPM2_ST_NO_SESSIONS, 14, TPM2_RC_FAILURE);
	check_malformed(14, -EPROTO, "TPM_RC_FAILURE");
}
END_TEST

START_TEST(test_driver_unsolicited_bytes)
{
	/* A good answer, then 50 ms later 4 bytes nobody asked for: they
	 * are caught before the next command, which is never sent. */
	static uint8_t rsp[80];
	static const struct step steps[] = {
		{ .kind = STEP_RAW, .raw = rsp, .raw_len = 80, .split_at = 76,
		  .gap_ms = 50 },
		{ .kind = STEP_GIVE, .give = 64 },
	};
	struct tpm_server srv;
	uint8_t buf[64];
	void *st;

	build_ok(rsp, 64, 0);
	memset(rsp + 76, 0x11, 4);
	server_start(&srv, steps, 2);
	st = drv_open(&srv, NULL);
	ck_assert_int_eq(source_tpm.read(st, buf, sizeof(buf)), 64);
	expect_pattern(buf, 64, 0);
	sleep_ms(150);
	expect_read_fails(st, 64, -EPROTO, "no command asked for");
	source_tpm.close(st);
	server_stop(&srv);
	ck_assert_uint_eq(srv.n_cmds, 1);
}
END_TEST

START_TEST(test_driver_timeout)
{
	static const struct step steps[] = { { .kind = STEP_SILENT } };
	struct tpm_server srv;
	struct timespec t0, t1;
	long ms;
	void *st;

	server_start(&srv, steps, 1);
	st = drv_open(&srv, "200");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	expect_read_fails(st, 64, -ETIMEDOUT, "no response from the TPM");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 +
	     (t1.tv_nsec - t0.tv_nsec) / 1000000;
	ck_assert_msg(ms >= 190 && ms < 2000, "timed out after %ld ms", ms);
	source_tpm.close(st);
	server_stop(&srv);
}
END_TEST

static void on_signal(int sig)
{
	(void)sig;
}

struct kicker {
	pthread_t target;
	unsigned int after_ms;
};

static void *kick(void *arg)
{
	struct kicker *k = arg;

	sleep_ms(k->after_ms);
	pthread_kill(k->target, SIGUSR1);
	return NULL;
}

START_TEST(test_driver_eintr_resumes)
{
	/* The answer comes in two halves 400 ms apart; a signal at 100 ms
	 * interrupts the read.  The next read carries on with the same
	 * answer: one command, the right bytes. */
	static const struct step steps[] = {
		{ .kind = STEP_GIVE, .give = 64, .pieces = 2, .gap_ms = 400 },
	};
	struct sigaction sa = { .sa_handler = on_signal };
	struct kicker k = { .target = pthread_self(), .after_ms = 100 };
	struct tpm_server srv;
	pthread_t kt;
	uint8_t buf[64];
	ssize_t r;
	void *st;

	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0); /* no restart */
	server_start(&srv, steps, 1);
	st = drv_open(&srv, NULL);
	pthread_create(&kt, NULL, kick, &k);
	r = source_tpm.read(st, buf, sizeof(buf));
	pthread_join(kt, NULL);
	ck_assert_int_eq(r, -EINTR);
	ck_assert_int_eq(source_tpm.read(st, buf, sizeof(buf)), 64);
	expect_pattern(buf, 64, 0);
	source_tpm.close(st);
	server_stop(&srv);
	ck_assert_uint_eq(srv.n_cmds, 1);
}
END_TEST

/* ---- probe, open, registration ------------------------------------------ */

START_TEST(test_probe_sends_nothing)
{
	struct tpm_server srv;
	struct source_config cfg;
	char device[DEVICE_LEN], why[SOURCE_WHY_LEN] = "";

	server_start(&srv, NULL, 0);
	srv_config(&cfg, &srv, NULL, device);
	ck_assert_int_eq(source_tpm.probe(&cfg, why, sizeof(why)), 0);
	ck_assert_str_eq(why, device);
	sleep_ms(50);
	server_stop(&srv);
	ck_assert_uint_eq(srv.n_cmds, 0);
}
END_TEST

static void expect_open_fails(const char *device, const char *timeout,
			      int want, const char *word)
{
	struct source_config cfg;
	char why[SOURCE_WHY_LEN] = "";
	void *st = NULL;
	int r;

	tpm_config(&cfg, device, timeout);
	r = source_tpm.open(&cfg, &st, why, sizeof(why));
	ck_assert_msg(r == want, "%s: got %d (%s), want %d", device, r, why,
		      want);
	ck_assert_ptr_null(st);
	ck_assert_msg(strstr(why, word), "%s: why '%s' lacks '%s'", device,
		      why, word);
	ck_assert_msg(!strchr(why, '\n'), "why not one line: %s", why);
	why[0] = '\0';
	if (!timeout) {
		r = source_tpm.probe(&cfg, why, sizeof(why));
		ck_assert_int_eq(r, want);
		ck_assert_msg(strstr(why, word), "probe why '%s'", why);
	}
}

START_TEST(test_open_refusals)
{
	char dir[] = "/tmp/check_tpm2.XXXXXX", path[96], dev[160];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct source_config cfg;
	char err[256];
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* Not TPMs: the null device, a regular file, the kernel's own
	 * output (refused at config time already, and at open). */
	expect_open_fails("/dev/null", NULL, -ENOTTY, "not a TPM");
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	expect_open_fails(path, NULL, -ENOTTY, "not a TPM character device");
	source_config_init(&cfg, &source_tpm);
	ck_assert_int_eq(source_config_set(&cfg, "device", "/dev/urandom",
					   err, sizeof(err)),
			 -ELOOP);
	/* Absent devices and sockets. */
	expect_open_fails("/dev/tpm-nonexistent", NULL, -ENOENT,
			  "does not exist");
	snprintf(dev, sizeof(dev), "unix:%s/nosock", dir);
	expect_open_fails(dev, NULL, -ENOENT, "no socket at");
	/* A socket file nobody listens on. */
	snprintf(path, sizeof(path), "%s/dead", dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	snprintf(dev, sizeof(dev), "unix:%s", path);
	expect_open_fails(dev, NULL, -ECONNREFUSED, "nothing listens");
	expect_open_fails("unix:", NULL, -ENAMETOOLONG, "empty");
	/* Bad timeouts are refused when the option is read (issue 15:
	 * option values are checked at config time), before any open. */
	{
		static const char *const bad[] = { "0", "10s" };

		for (size_t k = 0; k < 2; k++) {
			struct source_config bcfg;
			char berr[256] = "";

			source_config_init(&bcfg, &source_tpm);
			ck_assert_int_eq(source_config_set(&bcfg, "timeout-ms",
							   bad[k], berr,
							   sizeof(berr)),
					 -EINVAL);
			ck_assert_msg(strstr(berr, "timeout-ms") != NULL, "%s",
				      berr);
		}
	}
	unlink(path);
	snprintf(path, sizeof(path), "%s/file", dir);
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(test_registered)
{
	const struct source_driver *d = source_driver_find("tpm");
	struct source_config cfg;
	char err[256];

	ck_assert_ptr_eq(d, &source_tpm);
	ck_assert_str_eq(d->default_device, "/dev/tpmrm0");
	ck_assert(d->flags & SOURCE_F_DEVICE);
	ck_assert_uint_le(d->default_credit, 256);
	ck_assert_ptr_nonnull(d->credit_reason);
	source_config_init(&cfg, d);
	ck_assert_int_eq(source_config_set(&cfg, "timeout-ms", "250", err,
					   sizeof(err)),
			 0);
	ck_assert_int_eq(source_config_set(&cfg, "device", "/dev/tpm0", err,
					   sizeof(err)),
			 0);
	ck_assert_str_eq(source_config_device(&cfg), "/dev/tpm0");
}
END_TEST

static Suite *tpm2_suite(void)
{
	Suite *s = suite_create("tpm2");
	TCase *tc;

	tc = tcase_create("protocol");
	tcase_add_test(tc, test_command_bytes);
	tcase_add_test(tc, test_parse_good_sizes);
	tcase_add_test(tc, test_parse_zero_bytes);
	tcase_add_test(tc, test_parse_swtpm_capture);
	tcase_add_test(tc, test_parse_wrong_tag);
	tcase_add_test(tc, test_parse_size_mismatch);
	tcase_add_test(tc, test_parse_truncated);
	tcase_add_test(tc, test_parse_digest_too_big);
	tcase_add_test(tc, test_parse_digest_inconsistent);
	tcase_add_test(tc, test_rc_names);
	tcase_add_test(tc, test_rc_format_details);
	tcase_add_test(tc, test_parse_error_codes);
	tcase_add_test(tc, test_parse_error_with_body);
	tcase_add_test(tc, test_parse_corrupted);
	suite_add_tcase(s, tc);

	tc = tcase_create("driver");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_driver_full_reads);
	tcase_add_test(tc, test_driver_fewer_than_asked);
	tcase_add_test(tc, test_driver_split_response);
	tcase_add_test(tc, test_driver_short_then_eof);
	tcase_add_test(tc, test_driver_eof_without_answer);
	tcase_add_test(tc, test_driver_error_codes);
	tcase_add_test(tc, test_driver_retry_then_bytes);
	tcase_add_test(tc, test_driver_malformed);
	tcase_add_test(tc, test_driver_unsolicited_bytes);
	tcase_add_test(tc, test_driver_timeout);
	tcase_add_test(tc, test_driver_eintr_resumes);
	tcase_add_test(tc, test_probe_sends_nothing);
	tcase_add_test(tc, test_open_refusals);
	tcase_add_test(tc, test_registered);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return td_run(tpm2_suite()); }
