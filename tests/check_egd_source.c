// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the egd source (src/sources/egd.c), the EGD protocol
 * client, against a scripted EGD server: a thread in this program on a
 * unix socket in a mktemp directory (or on 127.0.0.1 for tcp:).  Whole,
 * split and short answers; a server that closes mid-answer, sends bytes
 * nobody asked for, a length byte above what was asked, "nothing now", or
 * never answers (bounded by timeout-ms, no hang); a signal while an answer
 * is held back; the option checks and the credit rule.  Every bad answer
 * must give a clean error and no bytes.
 */
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/source.h"
#include "rngfeed/sources.h"
#include "test_doubles.h"

/* ---- a scripted EGD server ------------------------------------------------- */

enum script {
	SRV_GOOD,      /* every request answered whole, at once */
	SRV_SPLIT,     /* answers in pieces of 1-7 bytes, a little apart */
	SRV_CLOSE_MID, /* half of the first answer, then close */
	SRV_CLOSE_NOW, /* close at the first request, answering nothing */
	SRV_RESET,     /* close with the first request half read: a reset */
	SRV_BAD_LEN,   /* 0x01 N answered with a length byte N + 1 */
	SRV_ZERO_ONCE, /* 0x01: the first answer is "nothing now" (0) */
	SRV_SILENT,    /* reads requests, never answers */
	SRV_EXTRA,     /* the first answer 3 bytes longer than asked */
	SRV_HOLD,      /* each answer waits until the test sets release */
};

#define MAX_REQ 64

/*
 * Every socket of this program is made in one mktemp directory, which
 * main() removes after the run: a test that fails in its forked child
 * leaves its socket behind, never the directory.
 */
static char sock_dir[64];
static unsigned int sock_seq;

struct server {
	int lfd;
	bool tcp;
	char path[108], device[160];
	enum script script;
	pthread_t thread;
	atomic_bool quit, release;
	pthread_mutex_t lock;
	unsigned int conns, requests, asked_total;
	uint8_t cmd[MAX_REQ], n[MAX_REQ];
};

/* Byte @i of the stream a connection hands out. */
static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 151u + 7u + (i >> 8));
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for @fd to be readable, checking the quit flag every 20 ms. */
static bool wait_in(struct server *srv, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (!atomic_load(&srv->quit)) {
		if (poll(&p, 1, 20) > 0)
			return true;
	}
	return false;
}

static bool send_all(int fd, const uint8_t *b, size_t len)
{
	while (len) {
		ssize_t n = send(fd, b, len, MSG_NOSIGNAL);

		if (n <= 0)
			return false;
		b += n;
		len -= (size_t)n;
	}
	return true;
}

/* One connection, by the script; returns when the client or the script
 * ends it. */
static void serve(struct server *srv, int fd)
{
	size_t sent = 0;
	unsigned int k = 0;

	for (;; k++) {
		uint8_t req[2], out[300];
		size_t len = 0, data;
		ssize_t n;

		if (!wait_in(srv, fd))
			return;
		n = recv(fd, req, 1, 0);
		if (n <= 0 || srv->script == SRV_RESET)
			return;
		if (!wait_in(srv, fd))
			return;
		n = recv(fd, req + 1, 1, 0);
		if (n <= 0)
			return;
		pthread_mutex_lock(&srv->lock);
		if (srv->requests < MAX_REQ) {
			srv->cmd[srv->requests] = req[0];
			srv->n[srv->requests] = req[1];
		}
		srv->requests++;
		srv->asked_total += req[1];
		pthread_mutex_unlock(&srv->lock);

		data = req[1];
		if (srv->script == SRV_SILENT)
			continue;
		if (srv->script == SRV_CLOSE_NOW)
			return;
		if (srv->script == SRV_EXTRA && k == 0)
			data += 3;
		if (req[0] == 0x01) {
			uint8_t l = (uint8_t)data;

			if (srv->script == SRV_BAD_LEN)
				l = (uint8_t)(req[1] + 1);
			if (srv->script == SRV_ZERO_ONCE && k == 0)
				l = 0, data = 0;
			out[len++] = l;
		}
		for (size_t i = 0; i < data; i++)
			out[len++] = pattern(sent++);
		while (srv->script == SRV_HOLD && !atomic_load(&srv->release) &&
		       !atomic_load(&srv->quit))
			sleep_ms(5);
		if (srv->script == SRV_CLOSE_MID) {
			send_all(fd, out, len / 2);
			return;
		}
		if (srv->script == SRV_SPLIT) {
			for (size_t off = 0, step = 1; off < len;
			     off += step, step = step % 7 + 1) {
				if (step > len - off)
					step = len - off;
				if (!send_all(fd, out + off, step))
					return;
				sleep_ms(1);
			}
			continue;
		}
		if (!send_all(fd, out, len))
			return;
	}
}

static void *server_thread(void *arg)
{
	struct server *srv = arg;
	sigset_t alrm;

	/* test_eintr_resumes's SIGALRM is for the client: a process-directed
	 * signal may go to any thread that does not block it, and here it
	 * went to the server's nanosleep (i386: the read finished, 30). */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	while (wait_in(srv, srv->lfd)) {
		int fd = accept4(srv->lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			continue;
		pthread_mutex_lock(&srv->lock);
		srv->conns++;
		pthread_mutex_unlock(&srv->lock);
		serve(srv, fd);
		close(fd);
	}
	return NULL;
}

static void server_start(struct server *srv, enum script script, bool tcp)
{
	memset(srv, 0, sizeof(*srv));
	srv->script = script;
	srv->tcp = tcp;
	pthread_mutex_init(&srv->lock, NULL);
	if (tcp) {
		struct sockaddr_in sa = { .sin_family = AF_INET };
		socklen_t sl = sizeof(sa);

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		srv->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		ck_assert_int_ge(srv->lfd, 0);
		ck_assert_int_eq(bind(srv->lfd, (struct sockaddr *)&sa,
				      sizeof(sa)), 0);
		ck_assert_int_eq(getsockname(srv->lfd, (struct sockaddr *)&sa,
					     &sl), 0);
		snprintf(srv->device, sizeof(srv->device), "tcp:127.0.0.1:%u",
			 ntohs(sa.sin_port));
	} else {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		snprintf(srv->path, sizeof(srv->path), "%s/egd-%ld-%u.sock",
			 sock_dir, (long)getpid(), sock_seq++);
		strcpy(sa.sun_path, srv->path);
		srv->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		ck_assert_int_ge(srv->lfd, 0);
		ck_assert_int_eq(bind(srv->lfd, (struct sockaddr *)&sa,
				      sizeof(sa)), 0);
		snprintf(srv->device, sizeof(srv->device), "unix:%s",
			 srv->path);
	}
	ck_assert_int_eq(listen(srv->lfd, 8), 0);
	ck_assert_int_eq(pthread_create(&srv->thread, NULL, server_thread, srv),
			 0);
}

static unsigned int server_conns(struct server *srv)
{
	unsigned int n;

	pthread_mutex_lock(&srv->lock);
	n = srv->conns;
	pthread_mutex_unlock(&srv->lock);
	return n;
}

static void server_stop(struct server *srv)
{
	atomic_store(&srv->quit, true);
	pthread_join(srv->thread, NULL);
	close(srv->lfd);
	if (srv->path[0])
		unlink(srv->path);
	pthread_mutex_destroy(&srv->lock);
}

/* ---- the driver ---------------------------------------------------------- */

static void config(struct source_config *cfg, const char *device,
		   const char *k1, const char *v1)
{
	char err[SOURCE_WHY_LEN];

	source_config_init(cfg, &source_egd);
	if (device)
		ck_assert_msg(source_config_set(cfg, "device", device, err,
						sizeof(err)) == 0,
			      "%s", err);
	if (k1)
		ck_assert_msg(source_config_set(cfg, k1, v1, err,
						sizeof(err)) == 0,
			      "%s", err);
}

static struct source *open_egd(struct server *srv, const char *k1,
			       const char *v1)
{
	struct source_config cfg;

	config(&cfg, srv->device, k1, v1);
	return td_source_open(&cfg);
}

static void check_pattern(const uint8_t *b, size_t len, size_t from)
{
	for (size_t i = 0; i < len; i++)
		ck_assert_msg(b[i] == pattern(from + i), "byte %zu", from + i);
}

/* The driver's own state, for tests that watch each read call. */
static void *open_state(struct server *srv, const char *k1, const char *v1)
{
	struct source_config cfg;
	char why[SOURCE_WHY_LEN];
	void *st = NULL;
	int r;

	config(&cfg, srv->device, k1, v1);
	r = source_egd.open(&cfg, &st, why, sizeof(why));
	ck_assert_msg(r == 0, "open: %d %s", r, why);
	return st;
}

static ssize_t raw_read(void *st, void *buf, size_t len)
{
	return source_egd.read(st, buf, len);
}

/* Read @len bytes through the driver as source_read() would, or the first
 * error other than EINTR/EAGAIN. */
static ssize_t raw_fill(void *st, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = raw_read(st, buf + got, len - got);

		if (n == -EINTR || n == -EAGAIN)
			continue;
		if (n <= 0)
			return n;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* What the reader says of a failed read: the driver's words for the
 * failure (why_failed), then what is behind it (describe). */
static void describe(void *st, char *buf, size_t len)
{
	size_t used;

	if (source_egd.why_failed(st, buf, len) < 0)
		buf[0] = '\0';
	used = strlen(buf);
	source_egd.describe(st, buf + used, len - used);
}

/* source_read() of @len bytes from a fresh server in @mode (@tcp: over
 * TCP): all of them, the server's pattern from its start.  The server is
 * stopped on return, its counts in @srv. */
static void source_reads_all(struct server *srv, enum script mode, bool tcp,
			     uint8_t *buf, size_t len)
{
	struct source *src;

	server_start(srv, mode, tcp);
	src = open_egd(srv, NULL, NULL);
	ck_assert_int_eq(source_read(src, buf, len, NULL), (ssize_t)len);
	check_pattern(buf, len, 0);
	source_close(src);
	server_stop(srv);
}

START_TEST(test_full_block_asks_only_what_is_needed)
{
	struct server srv;
	static uint8_t buf[2500];

	source_reads_all(&srv, SRV_GOOD, false, buf, sizeof(buf));
	/* 2500 bytes: nine requests of 255 and one of 205, all 0x02, and
	 * nothing asked beyond the block. */
	ck_assert_uint_eq(srv.requests, 10);
	ck_assert_uint_eq(srv.asked_total, 2500);
	for (unsigned int i = 0; i < 10; i++) {
		ck_assert_uint_eq(srv.cmd[i], 0x02);
		ck_assert_uint_eq(srv.n[i], i < 9 ? 255 : 205);
	}
	ck_assert_uint_eq(srv.conns, 1);
}
END_TEST

START_TEST(test_small_read_small_request)
{
	struct server srv;
	uint8_t buf[16];

	source_reads_all(&srv, SRV_GOOD, false, buf, 10);
	ck_assert_uint_eq(srv.requests, 1);
	ck_assert_uint_eq(srv.n[0], 10);
}
END_TEST

START_TEST(test_split_answers)
{
	struct server srv;
	static uint8_t buf[600];

	source_reads_all(&srv, SRV_SPLIT, false, buf, sizeof(buf));
	ck_assert_uint_eq(srv.asked_total, 600);
}
END_TEST

/* Short reads straight from the driver: each call returns what has come of
 * the answer, never more than the answer owes, and a caller asking for
 * less than the rest of an answer gets only that. */
START_TEST(test_driver_short_reads)
{
	struct server srv;
	void *st;
	uint8_t buf[300];
	size_t got = 0;
	int calls = 0;

	server_start(&srv, SRV_SPLIT, false);
	st = open_state(&srv, NULL, NULL);
	while (got < 100) {
		ssize_t n = raw_read(st, buf + got, 100 - got);

		ck_assert_int_gt(n, 0);
		ck_assert_int_le(n, 100 - (ssize_t)got);
		got += (size_t)n;
		calls++;
	}
	check_pattern(buf, 100, 0);
	ck_assert_int_ge(calls, 1);
	/* Asked 100 at once; now read the next answer 5 bytes at a time. */
	for (int i = 0; i < 4; i++) {
		ssize_t n = raw_read(st, buf + got, 5);

		ck_assert_int_gt(n, 0);
		ck_assert_int_le(n, 5);
		got += (size_t)n;
	}
	check_pattern(buf, got, 0);
	source_egd.close(st);
	server_stop(&srv);
	ck_assert_uint_eq(srv.n[0], 100);
	ck_assert_uint_eq(srv.n[1], 5);
}
END_TEST

START_TEST(test_close_mid_answer)
{
	struct server srv;
	struct source *src;
	void *st;
	uint8_t buf[200];
	char desc[300];
	ssize_t n;

	server_start(&srv, SRV_CLOSE_MID, false);
	src = open_egd(&srv, NULL, NULL);
	memset(buf, 0xAA, sizeof(buf));
	n = source_read(src, buf, sizeof(buf), NULL);
	ck_assert_int_eq(n, -ENODEV);
	/* source_read wipes what came before the fault. */
	for (size_t i = 0; i < 100; i++)
		ck_assert_uint_eq(buf[i], 0);
	source_close(src);
	/* The driver itself: the bytes that came, then the error, then
	 * broken for good (the same error, no new request). */
	st = open_state(&srv, NULL, NULL);
	ck_assert_int_eq(raw_fill(st, buf, sizeof(buf)), -ENODEV);
	ck_assert_int_eq(raw_read(st, buf, 10), -ENODEV);
	describe(st, desc, sizeof(desc));
	ck_assert_msg(strstr(desc, "closed the connection after 100 of 200"),
		      "%s", desc);
	source_egd.close(st);
	server_stop(&srv);
	ck_assert_uint_eq(srv.requests, 2);
	ck_assert_uint_eq(srv.conns, 2);
}
END_TEST

START_TEST(test_close_without_answer)
{
	struct server srv;
	struct source *src;
	uint8_t buf[64];

	server_start(&srv, SRV_CLOSE_NOW, false);
	src = open_egd(&srv, NULL, NULL);
	ck_assert_int_eq(source_read(src, buf, sizeof(buf), NULL), -ENODEV);
	source_close(src);
	server_stop(&srv);
}
END_TEST

START_TEST(test_reset_says_closed)
{
	/* A server that goes away with our request unread in its socket
	 * resets the connection (ECONNRESET, not EOF): the same "closed the
	 * connection" as an orderly close, as it is the same event. */
	struct server srv;
	void *st;
	uint8_t buf[64];
	char desc[300];

	server_start(&srv, SRV_RESET, false);
	st = open_state(&srv, NULL, NULL);
	ck_assert_int_eq(raw_fill(st, buf, sizeof(buf)), -ENODEV);
	describe(st, desc, sizeof(desc));
	ck_assert_msg(strstr(desc, "the server closed the connection after 0 of 64"),
		      "%s", desc);
	source_egd.close(st);
	server_stop(&srv);
}
END_TEST

START_TEST(test_garbage_length)
{
	struct server srv;
	void *st;
	uint8_t buf[64];
	char desc[300];

	server_start(&srv, SRV_BAD_LEN, false);
	st = open_state(&srv, "mode", "nonblocking");
	memset(buf, 0xAA, sizeof(buf));
	ck_assert_int_eq(raw_read(st, buf, 40), -EPROTO);
	/* Nothing handed over. */
	for (size_t i = 0; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], 0xAA);
	ck_assert_int_eq(raw_read(st, buf, 10), -EPROTO);
	describe(st, desc, sizeof(desc));
	ck_assert_msg(strstr(desc, "length byte says 41, more than the 40"),
		      "%s", desc);
	source_egd.close(st);
	server_stop(&srv);
	ck_assert_uint_eq(srv.cmd[0], 0x01);
	ck_assert_uint_eq(srv.requests, 1);
}
END_TEST

START_TEST(test_nonblocking_nothing_now)
{
	struct server srv;
	void *st;
	uint8_t buf[64];

	server_start(&srv, SRV_ZERO_ONCE, false);
	st = open_state(&srv, "mode", "nonblocking");
	ck_assert_int_eq(raw_read(st, buf, 50), -EAGAIN);
	/* Not broken: the next call asks again and gets bytes. */
	ck_assert_int_eq(raw_fill(st, buf, 50), 50);
	check_pattern(buf, 50, 0);
	source_egd.close(st);
	server_stop(&srv);
	ck_assert_uint_eq(srv.requests, 2);
	ck_assert_uint_eq(srv.cmd[1], 0x01);
	ck_assert_uint_eq(srv.n[1], 50);
}
END_TEST

START_TEST(test_unasked_bytes)
{
	struct server srv;
	struct source *src;
	uint8_t buf[64];

	server_start(&srv, SRV_EXTRA, false);
	src = open_egd(&srv, NULL, NULL);
	ck_assert_int_eq(source_read(src, buf, 20, NULL), 20);
	/* Give the 3 extra bytes time to arrive, then ask again. */
	sleep_ms(50);
	ck_assert_int_eq(source_read(src, buf, 20, NULL), -EPROTO);
	source_close(src);
	server_stop(&srv);
	ck_assert_uint_eq(srv.requests, 1);
}
END_TEST

/* A server that never answers: the read ends after timeout-ms, with an
 * error, not a hang, and the instance stays broken. */
START_TEST(test_silent_server_times_out)
{
	struct server srv;
	struct source *src;
	void *st;
	uint8_t buf[64];
	long long t0, dt;

	server_start(&srv, SRV_SILENT, false);
	src = open_egd(&srv, "timeout-ms", "300");
	t0 = now_ms();
	ck_assert_int_eq(source_read(src, buf, sizeof(buf), NULL), -ETIMEDOUT);
	dt = now_ms() - t0;
	/* Bounded: the timeout, plus whatever a loaded machine adds. */
	ck_assert_msg(dt >= 290 && dt < 10000, "took %lld ms", dt);
	source_close(src);
	st = open_state(&srv, "timeout-ms", "200");
	ck_assert_int_eq(raw_fill(st, buf, 10), -ETIMEDOUT);
	ck_assert_int_eq(raw_read(st, buf, 10), -ETIMEDOUT);
	source_egd.close(st);
	server_stop(&srv);
	ck_assert_uint_eq(srv.requests, 2);
}
END_TEST

static void on_alarm(int sig)
{
	(void)sig;
}

/* A signal while an answer is on its way: -EINTR, and the next call takes
 * that answer instead of sending a second request. */
START_TEST(test_eintr_resumes)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	struct itimerval it = { .it_value = { 0, 100000 } };
	struct server srv;
	void *st;
	uint8_t buf[64];
	ssize_t n;

#if defined(__i386__)
	/* qemu-i386 7.2 (make cross-check) returns -1 from a poll() that a
	 * handled signal interrupts but leaves errno as it was (seen with
	 * errno set to 0 before the call): the test would measure QEMU. */
	if (getenv("RNGFEED_EMULATED")) {
		printf("SKIP: test_eintr_resumes: qemu-i386 loses the errno of "
		       "an interrupted poll()\n");
		fflush(stdout);
		return;
	}
#endif
	server_start(&srv, SRV_HOLD, false);
	st = open_state(&srv, NULL, NULL);
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGALRM, &sa, &old), 0); /* no SA_RESTART */
	ck_assert_int_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
	/* The answer is held back until the signal has come. */
	n = raw_read(st, buf, 30);
	ck_assert_int_eq(n, -EINTR);
	atomic_store(&srv.release, true);
	n = raw_fill(st, buf, 30);
	sigaction(SIGALRM, &old, NULL);
	ck_assert_int_eq(n, 30);
	check_pattern(buf, 30, 0);
	source_egd.close(st);
	server_stop(&srv);
	ck_assert_uint_eq(srv.requests, 1);
}
END_TEST

START_TEST(test_tcp)
{
	struct server srv;
	static uint8_t buf[1000];

	source_reads_all(&srv, SRV_GOOD, true, buf, sizeof(buf));
	ck_assert_uint_eq(srv.asked_total, 1000);
}
END_TEST

/* Connecting sends nothing: probe and open ask for no bytes. */
START_TEST(test_probe_sends_nothing)
{
	struct server srv;
	struct source_config cfg;
	char why[SOURCE_WHY_LEN];

	server_start(&srv, SRV_GOOD, false);
	config(&cfg, srv.device, NULL, NULL);
	ck_assert_int_eq(source_egd.probe(&cfg, why, sizeof(why)), 0);
	ck_assert_msg(strstr(why, srv.device), "%s", why);
	/* Wait for the server to have taken the connection (a loaded machine
	 * may be slow to run its thread), then for anything that came. */
	for (int i = 0; i < 500 && server_conns(&srv) == 0; i++)
		sleep_ms(10);
	sleep_ms(100);
	server_stop(&srv);
	ck_assert_uint_eq(srv.conns, 1);
	ck_assert_uint_eq(srv.requests, 0);
}
END_TEST

static void expect_open_fails(const char *device, int err, const char *msg)
{
	struct source_config cfg;
	struct source *src = NULL;
	char why[SOURCE_WHY_LEN];
	int r;

	config(&cfg, device, NULL, NULL);
	r = source_open(&src, &cfg, why, sizeof(why));
	ck_assert_msg(r == err && strstr(why, msg), "%s: %d (want %d) '%s'",
		      device ? device : "(none)", r, err, why);
	r = source_egd.probe(&cfg, why, sizeof(why));
	ck_assert_msg(r == err && strstr(why, msg), "probe %s: %d '%s'",
		      device ? device : "(none)", r, why);
}

/* A server that is not there is "not there" (-ENODEV: the reader looks
 * again soon); a bad address is a configuration error. */
START_TEST(test_open_refusals)
{
	char path[128], dev[160];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	snprintf(path, sizeof(path), "%s/refuse-%ld.sock", sock_dir,
		 (long)getpid());
	snprintf(dev, sizeof(dev), "unix:%s", path);
	expect_open_fails(dev, -ENODEV, "no socket at");
	/* A socket file nobody listens on (a server that died). */
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	expect_open_fails(dev, -ENODEV, "nothing listens on");
	unlink(path);

	expect_open_fails(NULL, -ENOENT, "no server given");
	expect_open_fails("/run/egd.sock", -EINVAL, "not an EGD server address");
	expect_open_fails("unix:", -EINVAL, "empty");
	expect_open_fails("tcp:127.0.0.1", -EINVAL, "not tcp:HOST:PORT");
	expect_open_fails("tcp:127.0.0.1:0", -EINVAL, "not tcp:HOST:PORT");
	expect_open_fails("tcp:127.0.0.1:65536", -EINVAL, "not tcp:HOST:PORT");
	expect_open_fails("tcp::::1:7", -EINVAL, "in brackets");
	expect_open_fails("tcp::7", -EINVAL, "not tcp:HOST:PORT");
}
END_TEST

START_TEST(test_tcp_refused_is_absent)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	char dev[64];
	int fd;

	/* A port that was just free: bound, then closed without listening. */
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	close(fd);
	snprintf(dev, sizeof(dev), "tcp:127.0.0.1:%u", ntohs(sa.sin_port));
	/* Probe and open only check the address: the lookup and the connect
	 * are the reader's (its thread's) first read, never the main
	 * thread's; that read says the server is not there. */
	{
		struct source_config cfg;
		struct source *src = NULL;
		char why[SOURCE_WHY_LEN];
		uint8_t buf[16];
		ssize_t n;

		config(&cfg, dev, NULL, NULL);
		ck_assert_int_eq(source_egd.probe(&cfg, why, sizeof(why)), 0);
		ck_assert_msg(strstr(why, "connected by its reader"), "%s", why);
		ck_assert_int_eq(source_open(&src, &cfg, why, sizeof(why)), 0);
		n = source_read(src, buf, sizeof(buf), NULL);
		ck_assert_int_eq(n, -ENODEV);
		ck_assert_ptr_nonnull(
			strstr(source_why_failed(src, (int)n, why, sizeof(why)),
			       "nothing listens on"));
		source_close(src);
	}
}
END_TEST

static int set_opt(struct source_config *cfg, const char *k, const char *v,
		   char *err, size_t len)
{
	return source_config_set(cfg, k, v, err, len);
}

START_TEST(test_options_and_credit)
{
	struct source_config cfg;
	char err[SOURCE_WHY_LEN], warn[SOURCE_WHY_LEN];

	config(&cfg, "unix:/nonexistent/egd", NULL, NULL);
	/* Credit 0 by default: the network cannot prove what it carries. */
	ck_assert_uint_eq(source_egd.default_credit, 0);
	ck_assert_uint_eq(source_config_credit(&cfg), 0);
	ck_assert_ptr_nonnull(strstr(source_egd.credit_reason, "network"));
	ck_assert_int_eq(set_opt(&cfg, "timeout-ms", "0", err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "timeout-ms"), "%s", err);
	ck_assert_int_eq(set_opt(&cfg, "timeout-ms", "600001", err,
				 sizeof(err)), -EINVAL);
	ck_assert_int_eq(set_opt(&cfg, "timeout-ms", "1500", err, sizeof(err)),
			 0);
	ck_assert_int_eq(set_opt(&cfg, "mode", "maybe", err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "blocking or nonblocking"), "%s", err);
	ck_assert_int_eq(set_opt(&cfg, "mode", "nonblocking", err,
				 sizeof(err)), 0);
	ck_assert_int_eq(set_opt(&cfg, "select", "yes", err, sizeof(err)),
			 -EINVAL);
	/* The credit rule: at most 1024 x 6 / 8 = 768 at the default H. */
	ck_assert_uint_eq(source_credit_cap(&cfg), 768);
	ck_assert_int_eq(set_opt(&cfg, "credit", "800", err, sizeof(err)), 0);
	ck_assert_int_eq(source_config_validate(&cfg, err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(set_opt(&cfg, "credit", "768", err, sizeof(err)), 0);
	ck_assert_int_eq(source_config_validate(&cfg, err, sizeof(err)), 0);
	ck_assert_uint_eq(source_config_credit(&cfg), 768);
	/* A raised credit on a local socket is the user's call; on TCP it
	 * earns a warning. */
	ck_assert_int_eq(source_config_warning(&cfg, warn, sizeof(warn)), 0);
	ck_assert_int_eq(set_opt(&cfg, "device", "tcp:192.0.2.1:7000", err,
				 sizeof(err)), 0);
	ck_assert_int_eq(source_config_warning(&cfg, warn, sizeof(warn)), 1);
	ck_assert_msg(strstr(warn, "tcp:192.0.2.1:7000"), "%s", warn);
}
END_TEST

START_TEST(test_registered)
{
	ck_assert_ptr_eq(source_driver_find("egd"), &source_egd);
	ck_assert(source_egd.flags & SOURCE_F_DEVICE);
	ck_assert_uint_eq(source_egd.sample_bits, 8);
}
END_TEST

static Suite *egd_suite(void)
{
	Suite *s = suite_create("egd");
	TCase *tc = tcase_create("client");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_full_block_asks_only_what_is_needed);
	tcase_add_test(tc, test_small_read_small_request);
	tcase_add_test(tc, test_split_answers);
	tcase_add_test(tc, test_driver_short_reads);
	tcase_add_test(tc, test_close_mid_answer);
	tcase_add_test(tc, test_close_without_answer);
	tcase_add_test(tc, test_reset_says_closed);
	tcase_add_test(tc, test_garbage_length);
	tcase_add_test(tc, test_nonblocking_nothing_now);
	tcase_add_test(tc, test_unasked_bytes);
	tcase_add_test(tc, test_silent_server_times_out);
	tcase_add_test(tc, test_eintr_resumes);
	tcase_add_test(tc, test_tcp);
	tcase_add_test(tc, test_probe_sends_nothing);
	tcase_add_test(tc, test_open_refusals);
	tcase_add_test(tc, test_tcp_refused_is_absent);
	tcase_add_test(tc, test_options_and_credit);
	tcase_add_test(tc, test_registered);
	suite_add_tcase(s, tc);
	return s;
}

/* Remove the socket directory and whatever failed tests left in it. */
static void remove_sock_dir(void)
{
	DIR *d = opendir(sock_dir);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d)))
			if (e->d_name[0] != '.')
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(sock_dir);
}

int main(void)
{
	int status;

	snprintf(sock_dir, sizeof(sock_dir), "/tmp/check_egd.XXXXXX");
	if (!mkdtemp(sock_dir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	status = td_run(egd_suite());
	remove_sock_dir();
	return status;
}
