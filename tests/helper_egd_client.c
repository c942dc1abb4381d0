// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An EGD client for tests/test_egd_server.sh and bench/egd.sh: it speaks
 * the protocol as QEMU's rng-egd does (pipelined 0x02 requests of at most
 * 255 bytes) and as hostile clients do.
 *
 *   helper_egd_client ADDR avail             0x00: print the bits
 *   helper_egd_client ADDR pid               0x04: print the PID text
 *   helper_egd_client ADDR read N            blocking reads, N bytes to stdout
 *   helper_egd_client ADDR nbread N          one 0x01 N: print the count
 *   helper_egd_client ADDR write             0x03 with data, then 0x04: print
 *                                            the PID (still in step)
 *   helper_egd_client ADDR half              0x02 and its length 1 s apart
 *   helper_egd_client ADDR garbage           0x99: print "closed" at EOF
 *   helper_egd_client ADDR flood N           N connections at once: print
 *                                            "open X closed Y"
 *   helper_egd_client ADDR noread S          requests, never reads: print
 *                                            the seconds until dropped, or
 *                                            "kept" after S
 *   helper_egd_client ADDR many K S [W [cpu]] K clients for S seconds (or
 *                                            until SIGTERM), W requests in
 *                                            flight each (8): "clients K
 *                                            bytes B rate R min M max X";
 *                                            with "cpu", then " cpu_s C":
 *                                            this process's CPU seconds
 *                                            (user + system) over that time
 *   helper_egd_client ADDR hold K S          K idle connections for S seconds:
 *                                            print "held K" if none was closed
 *   helper_egd_client ADDR latency S [N [R]] one request of N bytes (64) at
 *                                            a time for S seconds, and on
 *                                            until R requests were made (0):
 *                                            "requests R max_ms M"
 *   helper_egd_client ADDR pipeline N [Q]    N 0x02 255 requests in one write,
 *                                            then reads until all came or
 *                                            nothing for Q s (10): "bytes B
 *                                            of W seconds S"
 *   helper_egd_client ADDR trailing          0x04 and a garbage byte in one
 *                                            write: "pid P closed", or what
 *                                            came ("none closed", "pid P open")
 *   helper_egd_client ADDR idle S [half]     connects (and with "half" sends
 *                                            0x02 without its length), then
 *                                            waits: print the seconds from
 *                                            just before connecting until
 *                                            closed, or "kept" after S
 *
 * ADDR: unix:PATH or tcp:HOST:PORT (numeric).  Exit 0, or 1 with a
 * message on stderr.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *addr;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "helper_egd_client: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int dial(void)
{
	int fd;

	if (strncmp(addr, "unix:", 5) == 0) {
		struct sockaddr_un un = { .sun_family = AF_UNIX };

		snprintf(un.sun_path, sizeof(un.sun_path), "%s", addr + 5);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&un, sizeof(un)) < 0)
			die("connect");
		return fd;
	}
	if (strncmp(addr, "tcp:", 4) == 0) {
		struct sockaddr_in in = { .sin_family = AF_INET };
		char host[64];
		const char *colon = strrchr(addr + 4, ':');

		if (!colon || (size_t)(colon - addr - 4) >= sizeof(host))
			die("address");
		memcpy(host, addr + 4, (size_t)(colon - addr - 4));
		host[colon - addr - 4] = '\0';
		in.sin_port = htons((uint16_t)atoi(colon + 1));
		if (inet_pton(AF_INET, host, &in.sin_addr) != 1)
			die("address");
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&in, sizeof(in)) < 0)
			die("connect");
		return fd;
	}
	errno = EINVAL;
	die("address");
	return -1;
}

static void send_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t w = send(fd, p, len, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("send");
		p += w;
		len -= (size_t)w;
	}
}

/* Read exactly @len bytes within 10 s; false at EOF. */
static bool recv_all(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;
	double end = now_s() + 10;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, (int)((end - now_s()) * 1000) + 1) == 0) {
			errno = ETIMEDOUT;
			die("recv");
		}
		r = recv(fd, p, len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("recv");
		if (r == 0)
			return false;
		p += r;
		len -= (size_t)r;
	}
	return true;
}

static void need(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "helper_egd_client: %s\n", what);
		exit(1);
	}
}

static int cmd_pid_text(int fd)
{
	uint8_t req = 0x04, len;
	char text[256];

	send_all(fd, &req, 1);
	need(recv_all(fd, &len, 1), "EOF before the PID");
	need(recv_all(fd, text, len), "EOF in the PID");
	text[len] = '\0';
	printf("%s\n", text);
	return 0;
}

static int cmd_read(int fd, long long n)
{
	uint8_t buf[255], req[2] = { 0x02, 0 };

	while (n > 0) {
		size_t k = n > 255 ? 255 : (size_t)n;

		req[1] = (uint8_t)k;
		send_all(fd, req, 2);
		need(recv_all(fd, buf, k), "EOF in a blocking read");
		if (fwrite(buf, 1, k, stdout) != k)
			die("stdout");
		n -= (long long)k;
	}
	return 0;
}

/* Is @fd closed by the peer within @s seconds (EOF or reset)? */
static bool closed_within(int fd, double s)
{
	double end = now_s() + s;
	uint8_t b[4096];

	while (now_s() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, (int)((end - now_s()) * 1000) + 1) <= 0)
			continue;
		r = recv(fd, b, sizeof(b), MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
			return true;
	}
	return false;
}

static int cmd_flood(int n)
{
	int *fds = calloc((size_t)n, sizeof(int));
	int open_n = 0, closed = 0;

	if (!fds)
		die("calloc");
	for (int i = 0; i < n; i++) {
		fds[i] = dial();
		open_n++;
	}
	/* Until the server has taken (or refused) them all: the count of
	 * closed ones unchanged for a second (a loaded machine), 10 s at
	 * most.  A closed connection stays closed. */
	for (int same = 0, tries = 0; same < 4 && tries < 40; tries++) {
		int now = 0;

		usleep(250000);
		for (int i = 0; i < n; i++) {
			uint8_t b;
			ssize_t r = recv(fds[i], &b, 1, MSG_DONTWAIT);

			if (r == 0 || (r < 0 && errno != EAGAIN))
				now++;
		}
		same = now == closed ? same + 1 : 0;
		closed = now;
	}
	printf("open %d closed %d\n", open_n, closed);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	return 0;
}

static int cmd_noread(int fd, double s)
{
	uint8_t req[2] = { 0x02, 255 };
	double t0 = now_s(), end = t0 + s;
	int small = 4096;

	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (now_s() < end) {
		ssize_t w = send(fd, req, 2, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && (errno == EPIPE || errno == ECONNRESET)) {
			printf("%.1f\n", now_s() - t0);
			return 0;
		}
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLRDHUP };

			/* Our requests wait unread too: look for the close
			 * without reading the replies. */
			if (poll(&pfd, 1, 200) > 0 &&
			    (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
				printf("%.1f\n", now_s() - t0);
				return 0;
			}
		}
	}
	printf("kept\n");
	return 0;
}

struct conn {
	int fd;
	long long outstanding; /* bytes asked, not yet received */
	long long got;
};

/* CPU seconds (user + system) this process has used so far. */
static double cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		die("getrusage");
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Keep @c's window full, as QEMU queues requests: half of it again
 * whenever half has come. */
static void top_up(struct conn *c, const uint8_t *req, int window)
{
	if (c->outstanding <= 255LL * (window - window / 2)) {
		size_t more = (size_t)(window / 2 ? window / 2 : 1);

		send_all(c->fd, req, 2 * more);
		c->outstanding += 255LL * (long long)more;
	}
}

/* SIGTERM ends "many" early, with its line: a test keeps greedy clients
 * going for as long as it needs them, however slowly a loaded machine
 * runs it. */
static volatile sig_atomic_t many_stop;

static void on_many_stop(int sig)
{
	(void)sig;
	many_stop = 1;
}

/*
 * One process for any K, so that 1, 8 and 64 clients are measured alike.
 * epoll, not poll: poll(2) over all K sockets every turn cost the
 * 64-client run 15 % more client CPU per byte than one client (sock_poll,
 * unix_poll and fdget in perf), and the bench's 64-client row measured
 * that, not the server.  One recv per ready socket per turn, into one
 * 256 KiB buffer (as cat reads a pipe).
 */
static int cmd_many(int k, double s, int window, bool cpu)
{
	struct conn *c = calloc((size_t)k, sizeof(*c));
	struct epoll_event *ev = calloc((size_t)k, sizeof(*ev));
	uint8_t req[2 * 512];
	static uint8_t buf[262144];
	double t0, end, cpu0;
	long long total = 0, min = -1, max = 0;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct sigaction sa = { .sa_handler = on_many_stop };

	/* No SA_RESTART: epoll_wait() returns at once. */
	sigaction(SIGTERM, &sa, NULL);
	if (!c || !ev)
		die("calloc");
	if (ep < 0)
		die("epoll_create1");
	if (window < 1 || window > 512)
		window = 8;
	for (int i = 0; i < window; i++) {
		req[2 * i] = 0x02;
		req[2 * i + 1] = 255;
	}
	for (int i = 0; i < k; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = (uint32_t)i };

		c[i].fd = dial();
		fcntl(c[i].fd, F_SETFL, O_NONBLOCK);
		if (epoll_ctl(ep, EPOLL_CTL_ADD, c[i].fd, &e) < 0)
			die("epoll_ctl");
	}
	t0 = now_s();
	cpu0 = cpu_s();
	end = t0 + s;
	for (int i = 0; i < k; i++)
		top_up(&c[i], req, window);
	while (now_s() < end && !many_stop) {
		int n = epoll_wait(ep, ev, k, 100);

		for (int j = 0; j < n; j++) {
			struct conn *ci = &c[ev[j].data.u32];
			ssize_t r = recv(ci->fd, buf, sizeof(buf), 0);

			if (r == 0) {
				errno = ECONNRESET;
				die("a client was closed");
			}
			if (r < 0)
				continue;
			ci->got += r;
			ci->outstanding -= r;
			top_up(ci, req, window);
		}
	}
	for (int i = 0; i < k; i++) {
		total += c[i].got;
		if (min < 0 || c[i].got < min)
			min = c[i].got;
		if (c[i].got > max)
			max = c[i].got;
		close(c[i].fd);
	}
	printf("clients %d bytes %lld rate %.0f min %lld max %lld", k, total,
	       (double)total / (now_s() - t0), min, max);
	if (cpu)
		printf(" cpu_s %.3f", cpu_s() - cpu0);
	printf("\n");
	close(ep);
	free(c);
	free(ev);
	return 0;
}

/* At least @min_count requests whatever the time they take: on a loaded
 * machine the client's own turns (and its 10-ms pauses) come late, which
 * says nothing about the server. */
static int cmd_latency(int fd, double s, int n, long min_count)
{
	uint8_t req[2] = { 0x02, (uint8_t)n }, buf[255];
	double end = now_s() + s, worst = 0;
	long count = 0;

	while (now_s() < end || count < min_count) {
		double t = now_s();

		send_all(fd, req, 2);
		need(recv_all(fd, buf, (size_t)n), "EOF in a blocking read");
		if (now_s() - t > worst)
			worst = now_s() - t;
		count++;
		usleep(10000);
	}
	printf("requests %ld max_ms %.1f\n", count, worst * 1000);
	return 0;
}

/* Read until @want bytes came, EOF, or @quiet seconds without a byte. */
static int cmd_pipeline(int fd, int n, double quiet)
{
	uint8_t *req = malloc(2 * (size_t)(n > 0 ? n : 1));
	static uint8_t buf[65536];
	long long want = 255LL * n, got = 0;
	double t0;

	if (!req)
		die("malloc");
	for (int i = 0; i < n; i++) {
		req[2 * i] = 0x02;
		req[2 * i + 1] = 255;
	}
	t0 = now_s();
	/* One send: the server sees the requests as one pipelined burst. */
	send_all(fd, req, 2 * (size_t)n);
	while (got < want) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, (int)(quiet * 1000)) == 0)
			break;
		r = recv(fd, buf, sizeof(buf), 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += r;
	}
	printf("bytes %lld of %lld seconds %.2f\n", got, want, now_s() - t0);
	free(req);
	return 0;
}

static int cmd_trailing(int fd)
{
	uint8_t req[2] = { 0x04, 0xFF }, len;
	char text[256];

	send_all(fd, req, sizeof(req));
	if (!recv_all(fd, &len, 1) || !recv_all(fd, text, len)) {
		printf("none closed\n");
		return 0;
	}
	text[len] = '\0';
	printf("pid %s %s\n", text, closed_within(fd, 10) ? "closed" : "open");
	return 0;
}

/* t0: taken before connecting, so that this process losing the CPU after
 * the connection (a loaded machine) cannot shorten the time the server
 * kept it (a drop at 2 s measured 1.8 in CI when t0 came after). */
static int cmd_idle(int fd, double t0, double s, bool half)
{
	uint8_t cmd = 0x02;

	if (half)
		send_all(fd, &cmd, 1);
	if (closed_within(fd, s))
		printf("%.1f\n", now_s() - t0);
	else
		printf("kept\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd;
	double dialled_at;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: helper_egd_client ADDR COMMAND [ARGS]\n");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	addr = argv[1];
	cmd = argv[2];
	if (strcmp(cmd, "flood") == 0)
		return cmd_flood(argc > 3 ? atoi(argv[3]) : 1000);
	if (strcmp(cmd, "hold") == 0) {
		int k = argc > 3 ? atoi(argv[3]) : 1, closed = 0;
		int *fds = calloc((size_t)(k > 0 ? k : 1), sizeof(int));

		if (!fds)
			die("calloc");
		for (int i = 0; i < k; i++)
			fds[i] = dial();
		usleep((useconds_t)((argc > 4 ? atof(argv[4]) : 1) * 1e6));
		for (int i = 0; i < k; i++) {
			uint8_t b;
			ssize_t r = recv(fds[i], &b, 1, MSG_DONTWAIT);

			closed += r == 0 || (r < 0 && errno != EAGAIN);
			close(fds[i]);
		}
		printf("held %d\n", k - closed);
		free(fds);
		return 0;
	}
	if (strcmp(cmd, "many") == 0)
		return cmd_many(argc > 3 ? atoi(argv[3]) : 1,
				argc > 4 ? atof(argv[4]) : 1,
				argc > 5 ? atoi(argv[5]) : 8,
				argc > 6 && strcmp(argv[6], "cpu") == 0);
	dialled_at = now_s();
	fd = dial();
	if (strcmp(cmd, "avail") == 0) {
		uint8_t req = 0x00, b[4];

		send_all(fd, &req, 1);
		need(recv_all(fd, b, 4), "EOF before the count");
		printf("%lu\n", (unsigned long)b[0] << 24 | (unsigned long)b[1] << 16 |
				       (unsigned long)b[2] << 8 | b[3]);
		return 0;
	}
	if (strcmp(cmd, "pid") == 0)
		return cmd_pid_text(fd);
	if (strcmp(cmd, "read") == 0)
		return cmd_read(fd, argc > 3 ? atoll(argv[3]) : 255);
	if (strcmp(cmd, "nbread") == 0) {
		uint8_t req[2] = { 0x01, (uint8_t)(argc > 3 ? atoi(argv[3]) : 255) };
		uint8_t len, buf[255];

		send_all(fd, req, 2);
		need(recv_all(fd, &len, 1), "EOF before the count");
		need(len <= req[1], "more than asked for");
		need(recv_all(fd, buf, len), "EOF in the data");
		printf("%u\n", len);
		return 0;
	}
	if (strcmp(cmd, "write") == 0) {
		/* 0x03, 512 bits, 64 bytes: sent in two pieces. */
		uint8_t req[4 + 64] = { 0x03, 0x02, 0x00, 64 };

		memset(req + 4, 0xAA, sizeof(req) - 4);
		send_all(fd, req, 4 + 32);
		usleep(100000);
		send_all(fd, req + 4 + 32, 32);
		return cmd_pid_text(fd);
	}
	if (strcmp(cmd, "half") == 0) {
		uint8_t a = 0x02, b = 255, buf[255];

		send_all(fd, &a, 1);
		sleep(1);
		send_all(fd, &b, 1);
		need(recv_all(fd, buf, sizeof(buf)), "EOF after a half request");
		printf("255\n");
		return 0;
	}
	if (strcmp(cmd, "garbage") == 0) {
		uint8_t g[3] = { 0x99, 0x42, 0x17 };

		send_all(fd, g, sizeof(g));
		printf("%s\n", closed_within(fd, 5) ? "closed" : "open");
		return 0;
	}
	if (strcmp(cmd, "pipeline") == 0)
		return cmd_pipeline(fd, argc > 3 ? atoi(argv[3]) : 2000,
				    argc > 4 ? atof(argv[4]) : 10);
	if (strcmp(cmd, "trailing") == 0)
		return cmd_trailing(fd);
	if (strcmp(cmd, "idle") == 0)
		return cmd_idle(fd, dialled_at, argc > 3 ? atof(argv[3]) : 10,
				argc > 4 && strcmp(argv[4], "half") == 0);
	if (strcmp(cmd, "noread") == 0)
		return cmd_noread(fd, argc > 3 ? atof(argv[3]) : 30);
	if (strcmp(cmd, "latency") == 0)
		return cmd_latency(fd, argc > 3 ? atof(argv[3]) : 1,
				   argc > 4 ? atoi(argv[4]) : 64,
				   argc > 5 ? atol(argv[5]) : 0);
	fprintf(stderr, "helper_egd_client: unknown command '%s'\n", cmd);
	return 1;
}
