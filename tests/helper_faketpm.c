// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * TEST HELPER for tests/test_faults.sh: a scripted TPM 2.0 on a unix
 * stream socket, speaking the raw command protocol as swtpm does, so the
 * real tpm driver (-O tpm:device=unix:PATH) can be shown faulty answers.
 *
 *   helper_faketpm PATH MODE
 *
 * It serves one connection at a time and answers every TPM2_GetRandom:
 *   good       the bytes asked for (at most 64), from splitmix64
 *   failure    TPM_RC_FAILURE (the TPM is in failure mode)
 *   lockout    TPM_RC_LOCKOUT
 *   retry      TPM_RC_RETRY, for ever
 *   short      a header that promises the bytes, half of them, then close
 *   bigdigest  digest size field larger than asked (header size as for
 *              the bytes asked)
 *   bigheader  header size field far larger than any GetRandom response
 *   badtag     tag TPM_ST_RSP_COMMAND (a TPM 1.2-style answer)
 *   long       a good answer with 8 bytes more than its header says
 *   stray      good answers; 0.1 s after one for fewer than 64 bytes (the
 *              end of the driver's block), 8 bytes nobody asked for
 *   hang       a header that promises the bytes, half of them, then
 *              silence with the connection open
 * Anything that is not a 12-byte GetRandom gets the connection closed.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rngfeed/tpm2.h"
#include "td_util.h"

static uint64_t x = 0x7b3;

static uint8_t rnd(void)
{
	uint64_t z = (x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint8_t)(z ^ (z >> 31));
}

static void put16(uint8_t *p, unsigned int v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static size_t header(uint8_t *p, unsigned int tag, uint32_t size, uint32_t rc)
{
	put16(p, tag);
	put32(p + 2, size);
	put32(p + 6, rc);
	return TPM2_HEADER_SIZE;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One answer; 1 to keep the connection, 0 to close it. */
static int answer(int fd, const char *mode, unsigned int asked)
{
	uint8_t r[4096];
	unsigned int n = asked < 64 ? asked : 64;
	size_t len;

	if (!strcmp(mode, "failure") || !strcmp(mode, "lockout") ||
	    !strcmp(mode, "retry")) {
		uint32_t rc = mode[0] == 'f' ? TPM2_RC_FAILURE
			      : mode[0] == 'l' ? TPM2_RC_LOCKOUT
					       : TPM2_RC_RETRY;

		len = header(r, TPM2_ST_NO_SESSIONS, TPM2_HEADER_SIZE, rc);
		return write_all(fd, r, len) == 0;
	}
	if (!strcmp(mode, "badtag")) {
		len = header(r, TPM2_ST_RSP_COMMAND, TPM2_HEADER_SIZE,
			     TPM2_RC_BAD_TAG);
		return write_all(fd, r, len) == 0;
	}
	len = header(r, TPM2_ST_NO_SESSIONS,
		     (uint32_t)TPM2_GET_RANDOM_RSP_SIZE(n), TPM2_RC_SUCCESS);
	put16(r + len, n);
	len += 2;
	for (unsigned int i = 0; i < n; i++)
		r[len++] = rnd();
	if (!strcmp(mode, "short") || !strcmp(mode, "hang")) {
		write_all(fd, r, len - n / 2);
		return mode[0] == 'h';
	}
	if (!strcmp(mode, "bigdigest"))
		put16(r + TPM2_HEADER_SIZE, n + 16);
	if (!strcmp(mode, "bigheader"))
		put32(r + 2, 4000);
	if (!strcmp(mode, "long")) {
		memset(r + len, 0x5a, 8);
		len += 8;
	}
	if (write_all(fd, r, len) < 0)
		return 0;
	if (!strcmp(mode, "stray") && asked < 64) {
		usleep(100000);
		memset(r, 0x5a, 8);
		return write_all(fd, r, 8) == 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static const char *const modes[] = { "good", "failure", "lockout",
		"retry", "short", "bigdigest", "bigheader", "badtag", "long",
		"stray", "hang", NULL };
	int lfd, i;

	if (argc != 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: %s PATH MODE\n", argv[0]);
		return 2;
	}
	for (i = 0; modes[i] && strcmp(modes[i], argv[2]); i++)
		;
	if (!modes[i]) {
		fprintf(stderr, "unknown mode '%s'\n", argv[2]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	strcpy(sa.sun_path, argv[1]);
	unlink(argv[1]);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(lfd, 4) < 0) {
		perror(argv[1]);
		return 1;
	}
	for (;;) {
		uint8_t cmd[TPM2_GET_RANDOM_CMD_SIZE];
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0) {
			if (errno == EINTR)
				continue;
			perror("accept");
			return 1;
		}
		while (td_read_full(fd, cmd, sizeof(cmd)) == 0 &&
		       cmd[0] == 0x80 && cmd[1] == 0x01 &&
		       ((uint32_t)cmd[6] << 24 | (uint32_t)cmd[7] << 16 |
			(uint32_t)cmd[8] << 8 | cmd[9]) == TPM2_CC_GET_RANDOM &&
		       answer(fd, argv[2], (unsigned int)cmd[10] << 8 | cmd[11]))
			;
		close(fd);
	}
}
