// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * TEST HELPER for tests/test_faults.sh: write faulty (or good) data into
 * a FIFO for ever, following a schedule.
 *
 *   helper_pattern FIFO PATTERN[:SECONDS|@BYTES|#CLOSES]...
 *   helper_pattern pty:FILE PATTERN...
 *
 * Each PATTERN runs for SECONDS, or until BYTES were written, or until
 * the reader closed the FIFO CLOSES times; the last one for ever.  (The
 * daemon reads on demand, so a switch by bytes or by the reader's closes
 * lands where the test wants it; one by time lands wherever the reader
 * happens to be.)  Patterns:
 *   good     splitmix64 bytes (fixed seed)
 *   ones     0xff          zeros   0x00          aa      0xaa
 *   bit3     good bytes with bit 3 forced to 1
 *   bias25   each bit 1 with probability 1/4 (AND of two good bytes)
 *   rep64    one 64-byte good block, repeated
 *   counter  0, 1, 2, ... 255, 0, 1, ...
 *   alpha4   good choices among 0x00, 0x55, 0xaa, 0xff
 *   stop     close the FIFO and exit (the reader sees end of input)
 *
 * The pipe is shrunk to one page, so a switch of pattern reaches the
 * reader within a few KB instead of after 64 KB of stale data.  When the
 * reader closes (EPIPE), the rest of the chunk is dropped and the FIFO
 * opened again, which waits for the next reader; a FIFO that was removed
 * is waited for too.
 *
 * With pty:FILE it writes into a new pseudo-terminal instead (for
 * tests/test_credit_bound.sh: a character device that is not the kernel's
 * hw_random): the terminal is put in raw mode (no echo, no line editing,
 * every byte passed as written), the path of its slave side is written to
 * FILE, and the slave is kept open here so that a reader's close is no
 * hang-up.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 512

static uint64_t x = 0x5eed;

static uint8_t good(void)
{
	static uint64_t w;
	static unsigned int left;
	uint64_t z;

	if (left == 0) {
		z = (x += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		w = z ^ (z >> 31);
		left = 8;
	}
	left--;
	w = (w >> 8) | (w << 56);
	return (uint8_t)w;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fill(const char *pat, uint8_t *buf, size_t len)
{
	static const uint8_t alpha[4] = { 0x00, 0x55, 0xaa, 0xff };
	static uint8_t block[64], counter;
	static size_t pos;
	static int have_block;

	for (size_t i = 0; i < len; i++) {
		if (!strcmp(pat, "good"))
			buf[i] = good();
		else if (!strcmp(pat, "ones"))
			buf[i] = 0xff;
		else if (!strcmp(pat, "zeros"))
			buf[i] = 0x00;
		else if (!strcmp(pat, "aa"))
			buf[i] = 0xaa;
		else if (!strcmp(pat, "bit3"))
			buf[i] = good() | 0x08;
		else if (!strcmp(pat, "bias25"))
			buf[i] = good() & good();
		else if (!strcmp(pat, "rep64")) {
			if (!have_block) {
				for (int j = 0; j < 64; j++)
					block[j] = good();
				have_block = 1;
			}
			buf[i] = block[pos++ % 64];
		} else if (!strcmp(pat, "counter"))
			buf[i] = counter++;
		else if (!strcmp(pat, "alpha4"))
			buf[i] = alpha[good() & 3];
		else
			return -1;
	}
	return 0;
}

static int open_fifo(const char *path)
{
	int fd;

	/* Blocks until a reader opens it; retries while it is absent. */
	while ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0) {
		if (errno != ENOENT && errno != EINTR) {
			perror(path);
			exit(1);
		}
		usleep(50000);
	}
	fcntl(fd, F_SETPIPE_SZ, 4096);
	return fd;
}

static int open_pty(const char *file)
{
	char tmp[4096];
	struct termios t;
	const char *name;
	FILE *f;
	int m, s;

	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || !(name = ptsname(m))) {
		perror("pty");
		exit(1);
	}
	s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC); /* never closed */
	if (s < 0 || tcgetattr(s, &t) < 0) {
		perror(name);
		exit(1);
	}
	cfmakeraw(&t);
	if (tcsetattr(s, TCSANOW, &t) < 0) {
		perror(name);
		exit(1);
	}
	/* Written whole, then renamed: a reader never sees half a path. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%s\n", name) < 0 || fclose(f) != 0 ||
	    rename(tmp, file) < 0) {
		perror(file);
		exit(1);
	}
	/* s stays open for the helper's life: with no slave open, the
	 * master's writes fail with EIO before the daemon opens it. */
	// cppcheck-suppress resourceLeak
	return m;
}

/* When does phase @arg end?  Sets *kind to ':', '@', '#' or 0 (never). */
static double phase_limit(const char *arg, char *kind)
{
	const char *p = strpbrk(arg, ":@#");

	*kind = p ? *p : 0;
	return p ? atof(p + 1) : 0;
}

int main(int argc, char **argv)
{
	uint8_t buf[CHUNK];
	double t0 = 0, limit = 0;
	long long bytes = 0, closes = 0; /* in this phase */
	int fd, phase = 1;
	char pat[32] = "", kind = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s FIFO|pty:FILE "
			"PATTERN[:SECONDS|@BYTES|#CLOSES]...\n", argv[0]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	fd = strncmp(argv[1], "pty:", 4) ? open_fifo(argv[1])
					  : open_pty(argv[1] + 4);
	for (;;) {
		size_t done = 0, len = sizeof(buf);

		if (!pat[0] || (phase + 1 < argc &&
				((kind == ':' && now_s() - t0 >= limit) ||
				 (kind == '@' && bytes >= (long long)limit) ||
				 (kind == '#' && closes >= (long long)limit)))) {
			phase++;
			snprintf(pat, sizeof(pat), "%.*s",
				 (int)strcspn(argv[phase], ":@#"), argv[phase]);
			limit = phase_limit(argv[phase], &kind);
			t0 = now_s();
			bytes = closes = 0;
		}
		if (!strcmp(pat, "stop"))
			return 0;
		if (kind == '@' && phase + 1 < argc && (long long)limit - bytes < (long long)len)
			len = (size_t)((long long)limit - bytes);
		if (fill(pat, buf, len) < 0) {
			fprintf(stderr, "unknown pattern '%s'\n", pat);
			return 2;
		}
		while (done < len) {
			ssize_t n = write(fd, buf + done, len - done);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno == EPIPE) {
				/* The rest of this chunk is stale by the
				 * time a new reader comes: drop it. */
				close(fd);
				closes++;
				fd = open_fifo(argv[1]);
				break;
			}
			if (n < 0) {
				perror("write");
				return 1;
			}
			done += (size_t)n;
			bytes += n;
		}
	}
}
