// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * egd: random bytes from a server that speaks the EGD protocol (egd.pl,
 * ekeyd, another rngfeed with --egd-server), as a client: device=unix:PATH
 * or device=tcp:HOST:PORT.
 *
 * One request is in flight at a time, for no more than the caller asked
 * (and at most 255 bytes, the protocol's limit):
 *   mode=blocking (default, what QEMU's rng-egd sends): 0x02 N, answered
 *     by exactly N bytes, with no length in front;
 *   mode=nonblocking: 0x01 N, answered by one length byte L <= N and L
 *     bytes; L = 0 means "nothing now" (-EAGAIN, and the caller backs off).
 * Each read() hands over what has arrived of the answer, straight into the
 * caller's buffer: nothing is buffered here, nothing read ahead.  The
 * request survives -EINTR: the next read() carries on with its answer, so
 * the stream never gets out of step.
 *
 * What the server does wrong breaks the instance (every later read fails
 * the same way until the reader closes it, backs off and reconnects):
 * bytes no request asked for, a length byte above what was asked, an
 * answer not complete within timeout-ms.  A server that goes away (end of
 * stream, a reset, nobody listening any more) is -ENODEV, "not there": the
 * reader drops the block it was reading, and looks for the server again
 * after its back-off.  Drivers do not log; the last error is kept for
 * describe().
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/sources.h"
#include "rngfeed/util.h"

#define EGD_CMD_READ_NONBLOCK 0x01
#define EGD_CMD_READ_BLOCK    0x02
/* The protocol's count is one byte. */
#define EGD_ASK_MAX 255u
/*
 * How long a whole answer (and a TCP connect) may take.  A server with
 * entropy to give answers at once; a blocking read from one that has run
 * dry may wait for its pool, so the default is generous, and a server
 * silent for this long is treated as gone.
 */
#define EGD_TIMEOUT_MS_DEFAULT 10000
#define EGD_TIMEOUT_MS_MAX 600000

static const char *const egd_keys[] = { "timeout-ms", "mode", NULL };

struct egd_addr {
	bool tcp;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char host[256];
	char port[8];
};

struct egd_state {
	int fd;           /* -1: tcp, not connected yet (its reader connects) */
	struct egd_addr addr;
	bool nonblocking; /* mode=nonblocking: 0x01 requests */
	int timeout_ms;
	char device[256];
	/* The request in flight, kept across -EINTR. */
	bool pending;
	bool have_len;    /* the answer's length is known (0x02: at once) */
	uint8_t asked;
	uint8_t want;     /* bytes of data the answer carries */
	uint8_t got;      /* of which handed over */
	long long deadline_ms;
	/* Non-zero (-errno): the stream is out of step; every read fails. */
	int broken;
	char last_error[160];
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the device text: unix:PATH or tcp:HOST:PORT ----------------------- */

/*
 * Parse @device into @a.  A TCP host may be a name, an IPv4 address or an
 * IPv6 address in brackets ([::1]); the port is 1..65535.
 */
static int parse_device(const char *device, struct egd_addr *a, char *why,
			size_t why_len)
{
	const char *hint = "use device=unix:PATH or device=tcp:HOST:PORT";

	memset(a, 0, sizeof(*a));
	if (!device) {
		snprintf(why, why_len, "no server given (use -O egd:device=unix:PATH or "
			 "-O egd:device=tcp:HOST:PORT)");
		return -ENOENT;
	}
	if (strncmp(device, "unix:", 5) == 0) {
		const char *p = device + 5;

		if (!p[0] || strlen(p) >= sizeof(a->path)) {
			snprintf(why, why_len, "socket path in '%s' is %s",
				 device, p[0] ? "too long" : "empty");
			return -EINVAL;
		}
		strcpy(a->path, p);
		return 0;
	}
	if (strncmp(device, "tcp:", 4) == 0) {
		const char *h = device + 4, *colon = strrchr(h, ':');
		size_t hlen = colon ? (size_t)(colon - h) : 0;
		long long port;

		if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
			h++;
			hlen -= 2;
		}
		/* An IPv6 address has colons: it needs its brackets. */
		bool bare_v6 = device[4] != '[' && memchr(h, ':', hlen);

		if (!colon || hlen == 0 || hlen >= sizeof(a->host) || bare_v6 ||
		    parse_ll(colon + 1, 1, 65535, &port) < 0) {
			snprintf(why, why_len,
				 "'%s' is not tcp:HOST:PORT (a port from 1 to "
				 "65535; an IPv6 address in brackets)",
				 device);
			return -EINVAL;
		}
		a->tcp = true;
		memcpy(a->host, h, hlen);
		a->host[hlen] = '\0';
		snprintf(a->port, sizeof(a->port), "%lld", port);
		return 0;
	}
	snprintf(why, why_len, "'%s' is not an EGD server address (%s)", device,
		 hint);
	return -EINVAL;
}

/* ---- connecting ---------------------------------------------------------- */

/* The server is not there (now): the reader looks again, soon. */
static int gone(int err)
{
	return err == -ENOENT || err == -ECONNREFUSED || err == -ECONNRESET ||
	       err == -ENOTCONN || err == -EPIPE || err == -ECONNABORTED;
}

/* Wait for a non-blocking connect to finish, within @timeout_ms. */
static int connect_wait(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	long long deadline = now_ms() + timeout_ms;
	socklen_t len = sizeof(int);
	int err = 0;

	for (;;) {
		long long left = deadline - now_ms();
		int r = poll(&p, 1, left > 0 ? (int)left : 0);

		if (r > 0)
			break;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return -errno;
	return -err;
}

/* A connected, non-blocking socket to @a, or -errno with @why set. */
static int egd_connect(const struct egd_addr *a, const char *device,
		       int timeout_ms, char *why, size_t why_len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	int fd = -1, r;

	if (!a->tcp) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		memcpy(sa.sun_path, a->path, strlen(a->path) + 1);
		/* Non-blocking: a full listen queue fails with EAGAIN
		 * instead of blocking the reader. */
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    0);
		if (fd < 0) {
			r = -errno;
			goto fail;
		}
		r = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno
									: 0;
		if (r == -EINPROGRESS)
			r = connect_wait(fd, timeout_ms);
		if (r < 0)
			goto fail;
		return fd;
	}
	/* Numeric hosts resolve without a lookup; a name goes through the
	 * resolver, which has timeouts of its own. */
	r = getaddrinfo(a->host, a->port, &hints, &res);
	if (r != 0) {
		snprintf(why, why_len, "cannot resolve %s: %s", a->host,
			 gai_strerror(r));
		return r == EAI_SYSTEM ? -errno : -EHOSTUNREACH;
	}
	r = -EHOSTUNREACH;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		int one = 1;

		fd = socket(ai->ai_family,
			    ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    ai->ai_protocol);
		if (fd < 0) {
			r = -errno;
			continue;
		}
		r = connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 ? -errno : 0;
		if (r == -EINPROGRESS)
			r = connect_wait(fd, timeout_ms);
		if (r == 0) {
			/* Requests are two bytes: send each at once. */
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
			freeaddrinfo(res);
			return fd;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
fail:
	if (fd >= 0)
		close(fd);
	if (r == -ENOENT || r == -ECONNREFUSED)
		snprintf(why, why_len,
			 "%s %s (is the EGD server running?)",
			 r == -ENOENT ? "no socket at" : "nothing listens on",
			 device);
	else if (r == -EAGAIN)
		snprintf(why, why_len,
			 "%s does not accept connections (queue full)", device);
	else if (r == -ETIMEDOUT)
		snprintf(why, why_len, "connecting to %s: no answer in %d ms",
			 device, timeout_ms);
	else
		snprintf(why, why_len, "cannot connect to %s: %s", device,
			 strerror(-r));
	/* Not there: the reader looks for it again soon and says so once
	 * (ENODEV is the contract's "vanished device"). */
	return gone(r) ? -ENODEV : r;
}

/* ---- options -------------------------------------------------------------- */

static int parse_options(const struct source_config *cfg, int *timeout_ms,
			 bool *nonblocking, char *why, size_t why_len)
{
	const char *t = source_config_get(cfg, "timeout-ms");
	const char *m = source_config_get(cfg, "mode");
	long long n = EGD_TIMEOUT_MS_DEFAULT;

	/* check_option refused bad values when they were read; this is
	 * for a configuration built without it. */
	if (t && parse_ll(t, 1, EGD_TIMEOUT_MS_MAX, &n) < 0) {
		snprintf(why, why_len,
			 "timeout-ms must be an integer from 1 to %d, not '%s'",
			 EGD_TIMEOUT_MS_MAX, t);
		return -EINVAL;
	}
	if (m && strcmp(m, "blocking") != 0 && strcmp(m, "nonblocking") != 0) {
		snprintf(why, why_len,
			 "mode must be blocking or nonblocking, not '%s'", m);
		return -EINVAL;
	}
	*timeout_ms = (int)n;
	*nonblocking = m && strcmp(m, "nonblocking") == 0;
	return 0;
}

static int egd_check_option(const char *key, const char *value, char *err,
			    size_t err_len)
{
	if (strcmp(key, "timeout-ms") == 0)
		return source_check_uint(key, value, 1, EGD_TIMEOUT_MS_MAX, err,
					 err_len);
	if (strcmp(value, "blocking") == 0 || strcmp(value, "nonblocking") == 0)
		return 0;
	snprintf(err, err_len, "mode must be blocking or nonblocking, not '%s'",
		 value);
	return -EINVAL;
}

/* ---- probe, open, close ---------------------------------------------------- */

static int egd_probe(const struct source_config *cfg, char *why,
		     size_t why_len)
{
	const char *device = source_config_device(cfg);
	struct egd_addr a;
	bool nonblocking;
	int timeout_ms, fd, r;

	r = parse_options(cfg, &timeout_ms, &nonblocking, why, why_len);
	if (r == 0)
		r = parse_device(device, &a, why, why_len);
	if (r < 0)
		return r;
	/* A TCP server is looked up and connected to by the source's reader
	 * thread, never here: the main thread waits on no resolver or
	 * network (a unix socket's non-blocking connect never waits). */
	if (a.tcp) {
		snprintf(why, why_len, "EGD server at %s (connected by its reader)",
			 device);
		return 0;
	}
	/* Connecting is enough: nothing is asked, nothing consumed. */
	fd = egd_connect(&a, device, timeout_ms, why, why_len);
	if (fd < 0)
		return fd;
	close(fd);
	snprintf(why, why_len, "EGD server at %s", device);
	return 0;
}

static int egd_open(const struct source_config *cfg, void **state, char *why,
		    size_t why_len)
{
	const char *device = source_config_device(cfg);
	struct egd_state *st;
	struct egd_addr a;
	bool nonblocking;
	int timeout_ms, r;

	r = parse_options(cfg, &timeout_ms, &nonblocking, why, why_len);
	if (r == 0)
		r = parse_device(device, &a, why, why_len);
	if (r < 0)
		return r;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->addr = a;
	st->fd = a.tcp ? -1 : egd_connect(&a, device, timeout_ms, why, why_len);
	if (st->fd < 0 && !a.tcp) {
		r = st->fd;
		free(st);
		return r;
	}
	st->timeout_ms = timeout_ms;
	st->nonblocking = nonblocking;
	snprintf(st->device, sizeof(st->device), "%s", device);
	*state = st;
	return 0;
}

static void egd_close(void *state)
{
	struct egd_state *st = state;

	if (!st)
		return;
	if (st->fd >= 0)
		close(st->fd);
	explicit_bzero(st, sizeof(*st));
	free(st);
}

/* ---- one request ------------------------------------------------------------- */

static int fail(struct egd_state *st, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Record why the stream is broken; every later read returns @err. */
static int fail(struct egd_state *st, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->last_error, sizeof(st->last_error), fmt, ap);
	va_end(ap);
	st->pending = false;
	st->broken = gone(err) ? -ENODEV : err;
	return st->broken;
}

/*
 * Before a request the stream must be quiet: anything readable now is the
 * server closing, or bytes no request asked for (a server out of step,
 * or one that pushes data unasked: neither can be trusted to frame the
 * next answer).
 */
static int check_idle(struct egd_state *st)
{
	uint8_t junk[64];
	ssize_t n = recv(st->fd, junk, sizeof(junk), MSG_DONTWAIT);

	if (n < 0 && errno != ECONNRESET) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		return fail(st, -errno, "%s", strerror(errno));
	}
	explicit_bzero(junk, sizeof(junk));
	if (n <= 0)	/* EOF, or a reset (see receive()) */
		return fail(st, -ECONNRESET,
			    "the server closed the connection");
	return fail(st, -EPROTO, "%zd byte(s) arrived that no request asked for",
		    n);
}

/* Send one request for @ask bytes; the fd is non-blocking. */
static int send_request(struct egd_state *st, uint8_t ask)
{
	uint8_t req[2] = { st->nonblocking ? EGD_CMD_READ_NONBLOCK
					   : EGD_CMD_READ_BLOCK,
			   ask };
	ssize_t n;
	int r;

	r = check_idle(st);
	if (r < 0)
		return r;
	/* Two bytes into an empty send buffer (one request at a time): it
	 * takes both or fails. */
	do
		n = send(st->fd, req, sizeof(req), MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return fail(st, -errno, "sending a request: %s", strerror(errno));
	if (n != (ssize_t)sizeof(req))
		return fail(st, -EIO, "the server took %zd of 2 request bytes",
			    n);
	st->pending = true;
	st->have_len = !st->nonblocking;
	st->asked = ask;
	st->want = st->nonblocking ? 0 : ask;
	st->got = 0;
	st->deadline_ms = now_ms() + st->timeout_ms;
	return 0;
}

/* Wait until the socket is readable or the request's deadline passes. */
static int wait_readable(struct egd_state *st)
{
	struct pollfd p = { .fd = st->fd, .events = POLLIN };
	long long left = st->deadline_ms - now_ms();
	int r;

	r = poll(&p, 1, left > 0 ? (int)left : 0);
	if (r < 0)
		return -errno; /* -EINTR: the caller resumes later */
	if (r == 0)
		return fail(st, -ETIMEDOUT,
			    "no answer to a request for %u bytes within %d ms "
			    "(%u received)",
			    st->asked, st->timeout_ms, st->got);
	return 0;
}

/*
 * Receive at most @len bytes of the pending answer into @buf (@len > 0
 * and no more than the answer still owes).  Returns the count, or -errno.
 */
static ssize_t receive(struct egd_state *st, uint8_t *buf, size_t len)
{
	for (;;) {
		ssize_t n = recv(st->fd, buf, len, MSG_DONTWAIT);
		int r;

		if (n > 0)
			return n;
		/* A server that closes with our request still unread in its
		 * socket resets the connection: the same event as an EOF. */
		if (n == 0 || errno == ECONNRESET)
			return fail(st, -ECONNRESET,
				    "the server closed the connection after "
				    "%u of %u answer bytes",
				    st->got, st->have_len ? st->want : st->asked);
		if (errno == EINTR)
			return -EINTR;
		if (errno != EAGAIN)
			return fail(st, -errno, "reading the answer: %s",
				    strerror(errno));
		r = wait_readable(st);
		if (r < 0)
			return r;
	}
}

static ssize_t egd_read(void *state, void *buf, size_t len)
{
	struct egd_state *st = state;
	size_t take;
	ssize_t n;

	if (st->broken)
		return st->broken;
	if (len == 0)
		return 0;
	if (st->fd < 0) {
		/* tcp: the lookup and the connect, in the reader's thread. */
		char why[160];
		int fd = egd_connect(&st->addr, st->device, st->timeout_ms, why,
				     sizeof(why));

		if (fd < 0)
			return fail(st, fd, "%s", why);
		st->fd = fd;
	}
	if (!st->pending) {
		int r = send_request(st, len < EGD_ASK_MAX ? (uint8_t)len
							   : EGD_ASK_MAX);

		if (r < 0)
			return r;
	}
	if (!st->have_len) {
		uint8_t l;

		n = receive(st, &l, 1);
		if (n < 0)
			return n;
		if (l > st->asked)
			return fail(st, -EPROTO,
				    "the answer's length byte says %u, more "
				    "than the %u asked",
				    l, st->asked);
		st->have_len = true;
		st->want = l;
		if (l == 0) {
			/* Nothing now: the caller backs off and asks again. */
			st->pending = false;
			snprintf(st->last_error, sizeof(st->last_error),
				 "the server had nothing to give");
			return -EAGAIN;
		}
	}
	take = st->want - st->got;
	if (take > len)
		take = len;
	n = receive(st, buf, take);
	if (n < 0)
		return n;
	st->got += (uint8_t)n;
	if (st->got == st->want) {
		st->pending = false;
		st->last_error[0] = '\0';
	}
	return n;
}

/* ---- description, warnings ---------------------------------------------------- */

static int egd_describe(void *state, char *buf, size_t len)
{
	struct egd_state *st = state;
	/* A broken stream's error is said by egd_why_failed(). */
	bool note = st->last_error[0] && !st->broken;

	snprintf(buf, len, "EGD server at %s (%s reads)%s%s%s", st->device,
		 st->nonblocking ? "non-blocking" : "blocking",
		 note ? " (last error: " : "", note ? st->last_error : "",
		 note ? ")" : "");
	return 0;
}

/* "the server closed the connection", not the ENODEV that tells the
 * reader the server is gone. */
static int egd_why_failed(void *state, char *buf, size_t len)
{
	struct egd_state *st = state;

	if (!st->broken || !st->last_error[0])
		return -ENOENT;
	snprintf(buf, len, "%s", st->last_error);
	return 0;
}

/*
 * A credit over TCP is whatever the network path says it is: worth a
 * warning at start-up (a local socket the user trusts is their call).
 */
static int egd_config_warning(const struct source_config *cfg, char *buf,
			      size_t len)
{
	const char *device = source_config_device(cfg);

	if (cfg->credit <= 0 || !device || strncmp(device, "tcp:", 4) != 0)
		return 0;
	snprintf(buf, len,
		 "credit %d/1024 for %s: whoever controls that address or the "
		 "path to it decides what is credited; raise an egd credit "
		 "only for a local socket you trust",
		 cfg->credit, device);
	return 1;
}

static bool egd_guest_owned(const struct source_config *cfg,
			    const char *hw_device)
{
	(void)hw_device;
	return cfg->guest_owned;
}

const struct source_driver source_egd = {
	.name = "egd",
	.description = "EGD protocol server (device=unix:PATH or tcp:HOST:PORT)",
	/*
	 * The client sees bytes, not where they came from: another rngfeed,
	 * a hardware key's daemon, or anything that can open the socket or
	 * sit on the path.  The health tests catch a stuck or patterned
	 * stream, not a replayed or predictable one.  0 by default; a user
	 * may raise it for a local socket whose server they trust, up to the
	 * credit rule's 1024 x H / 8.
	 */
	.default_credit = 0,
	.credit_reason = "none: the network cannot prove what it carries; "
			 "raise it only for a local socket you trust",
	.sample_bits = 8,
	/* Unknown data: the same middle ground as file and hwrng. */
	.min_entropy = 6.0,
	.flags = SOURCE_F_DEVICE | SOURCE_F_NEEDS_DEVICE,
	.default_device = NULL,
	.option_keys = egd_keys,
	.probe = egd_probe,
	.open = egd_open,
	.read = egd_read,
	.close = egd_close,
	.describe = egd_describe,
	.why_failed = egd_why_failed,
	.check_option = egd_check_option,
	.config_warning = egd_config_warning,
	/* QEMU's rng-egd backend speaks EGD on the host; a guest cannot
	 * tell who serves a socket's bytes. */
	.host_provided = "an EGD server: the client cannot tell who serves "
			 "it (QEMU's rng-egd is the host's); guest-owned=yes "
			 "for a server inside the guest that reads the "
			 "guest's own hardware",
	.guest_owned = egd_guest_owned,
};
