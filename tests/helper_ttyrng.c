// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * helper_ttyrng LINK PROFILE [KEY=VALUE|FLAG ...]: a USB serial TRNG stick
 * on a pseudo-terminal, for the serial source's tests.  LINK becomes a
 * symbolic link to the pty's slave (the device path the source is given);
 * "ready /dev/pts/N" is printed once it is there.  SIGTERM or SIGINT end
 * it (LINK removed).
 *
 * helper_ttyrng listen=SOCKET PROFILE [...]: the same device on a unix
 * socket, one client at a time (QEMU's "-chardev socket" behind a
 * usb-serial device in tests/vm/usb-boot.sh); a client that leaves is a
 * device unplugged: the next one finds it as plugged in (paused, cmd0).
 *
 * Profiles, as the real sticks behave (src/serial_profile.c):
 *   onerng   paused until "cmdO"; "cmdo" pauses, "cmd<hex>" sets the mode
 *            (bit 0: whitener off), "cmdw" flushes, "cmdv" queues
 *            "\r\nVersion 3\r\n" ahead of the next data; starts paused in
 *            cmd0 after each plug.
 *   truerng  model=pro (default): the line speeds the slave is set to are
 *            watched (tcgetattr on the master shows the slave's termios);
 *            110, 300, 110 then 19200 selects raw binary: 4-byte packets
 *            of two 10-bit Gaussian ADC samples (sigma=N codes, default
 *            60), sequence codes in the top bits; otherwise whitened
 *            bytes.  model=v3: whitened bytes only.  A pty has no modem
 *            lines: DTR cannot be seen (the source's TIOCMBIS gets
 *            ENOTTY), so it streams while the slave is open.
 *   generic  streams while the slave is open.
 * The noise is the kernel's getrandom() (the test for raw data is the
 * daemon's; here only its shape matters).
 *
 * Faults and knobs:
 *   rate=N        at most N bytes a second (default: as fast as it goes)
 *   stuck=HEX     every data byte is HEX (a stuck noise source)
 *   stall=N       after N data bytes nothing more (stall_for=S seconds,
 *                 default for ever), the line stays up
 *   vanish=N      after N data bytes the pty is closed (the slave hangs
 *                 up) and LINK removed; back=S: a new pty at LINK S
 *                 seconds later (the same device plugged in again)
 *   noversion     onerng: no answer to cmdv
 *   deaf          onerng: no answer to anything (it stays paused)
 *   whiten        onerng: cmd1 ignored, the whitener stays on (a device
 *                 that lies; its output looks the same here)
 *   log=FILE      one line per event: open, close, cmd C, speed N, mode
 *                 raw|normal, sent N (every 64 KiB), stall, vanish, back
 *                 PATH, client, gone
 * Exit 0 when stopped, 1 on errors.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

enum profile { ONERNG, TRUERNG, GENERIC };

struct emu {
	enum profile profile;
	const char *link, *listen_path;
	FILE *log;
	double rate;
	int stuck;                 /* -1: noise */
	long long stall_at, vanish_at;
	double stall_for, back;
	bool noversion, whiten, v3, deaf;
	double sigma;

	int fd;                    /* the pty master, or the client socket */
	int lfd;                   /* the listening socket */
	bool pty;
	bool open;                 /* the slave is open / a client is there */
	/* the device's state, as after a plug */
	bool paused, version_due, raw;
	unsigned int mode;         /* onerng's cmd mask */
	unsigned int cmd_state;    /* onerng's parser: "cmd" matched so far */
	speed_t speed;
	unsigned int history[4];   /* the last distinct speeds, in baud */
	/* counters */
	long long sent;
	long long sent_logged;
	double budget, last;
	double stalled_since;
	bool stalled, vanished;
	uint64_t prng[2];
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void say(struct emu *e, const char *fmt, ...)
{
	va_list ap;

	if (!e->log)
		return;
	va_start(ap, fmt);
	vfprintf(e->log, fmt, ap);
	va_end(ap);
	fputc('\n', e->log);
	fflush(e->log);
}

/* xorshift128+: the Gaussian's uniform draws (fast; not the noise). */
static uint64_t next64(struct emu *e)
{
	uint64_t a = e->prng[0], b = e->prng[1];

	e->prng[0] = b;
	a ^= a << 23;
	e->prng[1] = a ^ b ^ (a >> 17) ^ (b >> 26);
	return e->prng[1] + b;
}

static double gauss(struct emu *e)
{
	double u1 = ((double)(next64(e) >> 11) + 1.0) / 9007199254740993.0;
	double u2 = (double)(next64(e) >> 11) / 9007199254740992.0;

	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static unsigned int baud_of(speed_t s)
{
	static const struct { speed_t s; unsigned int b; } t[] = {
		{ B110, 110 },     { B300, 300 },     { B600, 600 },
		{ B1200, 1200 },   { B2400, 2400 },   { B4800, 4800 },
		{ B9600, 9600 },   { B19200, 19200 }, { B38400, 38400 },
		{ B57600, 57600 }, { B115200, 115200 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].s == s)
			return t[i].b;
	return 0;
}

/* A stick as it is when plugged in. */
static void plugged(struct emu *e)
{
	e->paused = e->profile == ONERNG;
	e->version_due = false;
	e->mode = 0;
	e->cmd_state = 0;
	e->raw = false;
	memset(e->history, 0, sizeof(e->history));
	e->speed = 0;
}

/* ---- the transports ------------------------------------------------------------ */

/* A new pty at e->link; its slave raw (no echo before the source sets
 * it), opened once so that the master sees a hang-up until someone opens
 * it. */
static int new_pty(struct emu *e)
{
	char tmp[4200];
	struct termios t;
	const char *name;
	int s;

	e->fd = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (e->fd < 0 || grantpt(e->fd) < 0 || unlockpt(e->fd) < 0 ||
	    !(name = ptsname(e->fd)))
		return -1;
	s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0)
		return -1;
	if (tcgetattr(s, &t) == 0) {
		cfmakeraw(&t);
		tcsetattr(s, TCSANOW, &t);
	}
	close(s);
	snprintf(tmp, sizeof(tmp), "%s.new", e->link);
	unlink(tmp);
	if (symlink(name, tmp) < 0 || rename(tmp, e->link) < 0)
		return -1;
	e->pty = true;
	e->open = false;
	plugged(e);
	return 0;
}

static int listen_on(struct emu *e)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	if (strlen(e->listen_path) >= sizeof(a.sun_path))
		return -1;
	strcpy(a.sun_path, e->listen_path);
	unlink(e->listen_path);
	e->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (e->lfd < 0 || bind(e->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(e->lfd, 1) < 0)
		return -1;
	e->fd = -1;
	return 0;
}

/* ---- the profiles ------------------------------------------------------------------ */

static void onerng_byte(struct emu *e, uint8_t c)
{
	static const char cmd[] = "cmd";

	if (e->cmd_state < 3) {
		e->cmd_state = c == (uint8_t)cmd[e->cmd_state] ? e->cmd_state + 1
			       : c == 'c' ? 1 : 0;
		return;
	}
	e->cmd_state = 0;
	say(e, "cmd %c%s", c, e->deaf ? " (deaf)" : "");
	if (e->deaf)
		return;
	if (c >= '0' && c <= '9')
		e->mode = c - '0';
	else if (c >= 'a' && c <= 'f')
		e->mode = c - 'a' + 10;
	else if (c >= 'A' && c <= 'F')
		e->mode = c - 'A' + 10;
	else if (c == 'O')
		e->paused = false;
	else if (c == 'o')
		e->paused = true;
	else if (c == 'v' && !e->noversion)
		e->version_due = true;
	if (isxdigit(c) && e->whiten && (e->mode & 1)) {
		say(e, "cmd %c ignored: whitener kept on", c);
		e->mode &= ~1u;
	}
}

/* The slave's speed now; a knock selects a mode (model=pro). */
static void watch_speed(struct emu *e)
{
	struct termios t;
	unsigned int b;

	if (!e->pty || tcgetattr(e->fd, &t) < 0 || cfgetospeed(&t) == e->speed)
		return;
	e->speed = cfgetospeed(&t);
	b = baud_of(e->speed);
	say(e, "speed %u", b);
	memmove(e->history, e->history + 1, 3 * sizeof(e->history[0]));
	e->history[3] = b;
	if (e->profile == TRUERNG && !e->v3 && e->history[0] == 110 &&
	    e->history[1] == 300 && e->history[2] == 110) {
		e->raw = b == 19200;
		say(e, "mode %s", e->raw ? "raw" : "normal");
	}
}

/* Up to @len bytes of what the device sends now. */
static size_t produce(struct emu *e, uint8_t *buf, size_t len)
{
	size_t n = 0;

	if (e->profile == ONERNG && e->version_due) {
		static const char v[] = "\r\nVersion 3\r\n";

		e->version_due = false;
		memcpy(buf, v, sizeof(v) - 1);
		return sizeof(v) - 1;
	}
	if (e->profile == TRUERNG && e->raw) {
		len &= ~(size_t)3;
		for (n = 0; n < len; n += 4) {
			for (int g = 0; g < 2; g++) {
				double x = 512.0 + e->sigma * gauss(e);
				unsigned int v = x < 0 ? 0 : x > 1023 ? 1023 : (unsigned int)x;

				if (e->stuck >= 0)
					v = (unsigned int)e->stuck << 2;
				buf[n + 2 * g] = (uint8_t)((g << 7) | ((v >> 6) & 0x0f));
				buf[n + 2 * g + 1] = (uint8_t)((g << 7) | 0x40 | (v & 0x3f));
			}
		}
		return n;
	}
	if (e->stuck >= 0) {
		memset(buf, e->stuck, len);
		return len;
	}
	if (getrandom(buf, len, 0) != (ssize_t)len)
		return 0;
	return len;
}

/* The line went (a hang-up, a client that left, our own vanish). */
static void line_gone(struct emu *e)
{
	if (e->pty) {
		close(e->fd);
		unlink(e->link);
	} else {
		close(e->fd);
		e->fd = -1;
		say(e, "gone");
	}
	e->open = false;
	plugged(e);
}

/* Wait @s seconds unless stopped. */
static void nap(double s)
{
	double until = now_s() + s;

	while (!stop && now_s() < until) {
		struct timespec ts = { 0, 20000000L };

		nanosleep(&ts, NULL);
	}
}

static int serve(struct emu *e)
{
	uint8_t buf[4096];

	e->last = now_s();
	while (!stop) {
		struct pollfd p[2];
		int n = 0, r;
		bool out;
		double t;

		if (!e->pty && e->fd < 0) {
			p[0] = (struct pollfd){ .fd = e->lfd, .events = POLLIN };
			r = poll(p, 1, 100);
			if (r > 0) {
				e->fd = accept4(e->lfd, NULL, NULL,
						SOCK_CLOEXEC | SOCK_NONBLOCK);
				if (e->fd >= 0) {
					/* A stick holds a few USB packets, not
					 * a socket's worth, when nobody reads. */
					int small = 4096;

					setsockopt(e->fd, SOL_SOCKET, SO_SNDBUF,
						   &small, sizeof(small));
					e->open = true;
					plugged(e);
					say(e, "client");
				}
			}
			continue;
		}
		out = e->open && !e->stalled &&
		      (e->profile != ONERNG || !e->paused || e->version_due);
		p[n++] = (struct pollfd){ .fd = e->fd,
					  .events = POLLIN | (out ? POLLOUT : 0) };
		r = poll(p, (nfds_t)n, 2);
		if (r < 0 && errno != EINTR)
			return 1;
		t = now_s();
		if (e->rate > 0) {
			e->budget += e->rate * (t - e->last);
			if (e->budget > e->rate * 0.1 + sizeof(buf))
				e->budget = e->rate * 0.1 + sizeof(buf);
		}
		e->last = t;
		if (e->pty) {
			bool open = !(p[0].revents & POLLHUP);

			if (open != e->open)
				say(e, open ? "open" : "close");
			e->open = open;
			watch_speed(e);
		}
		if (p[0].revents & POLLIN) {
			ssize_t k = read(e->fd, buf, sizeof(buf));

			if (k > 0 && e->profile == ONERNG)
				for (ssize_t i = 0; i < k; i++)
					onerng_byte(e, buf[i]);
			if (k == 0 && !e->pty) {
				line_gone(e);
				continue;
			}
			explicit_bzero(buf, sizeof(buf));
		}
		if (e->stalled && e->stall_for > 0 &&
		    t - e->stalled_since >= e->stall_for) {
			e->stalled = false;
			say(e, "stall over");
		}
		if (out && (p[0].revents & POLLOUT)) {
			size_t want = sizeof(buf);
			ssize_t w;

			if (e->rate > 0) {
				if (e->budget < 64)
					continue;
				if (want > (size_t)e->budget)
					want = (size_t)e->budget;
			}
			if (e->stall_at >= 0 && e->sent + (long long)want > e->stall_at)
				want = (size_t)(e->stall_at - e->sent);
			if (e->vanish_at >= 0 && !e->vanished &&
			    e->sent + (long long)want > e->vanish_at)
				want = (size_t)(e->vanish_at - e->sent);
			want = produce(e, buf, want);
			w = want ? write(e->fd, buf, want) : 0;
			explicit_bzero(buf, sizeof(buf));
			if (w > 0) {
				e->sent += w;
				e->budget -= (double)w;
				if (e->sent - e->sent_logged >= 65536) {
					say(e, "sent %lld", e->sent);
					e->sent_logged = e->sent;
				}
			} else if (w < 0 && !e->pty && errno != EAGAIN) {
				line_gone(e);
				continue;
			}
		}
		if (e->stall_at >= 0 && e->sent >= e->stall_at && !e->stalled) {
			e->stalled = true;
			e->stalled_since = t;
			e->stall_at = -1;
			say(e, "stall after %lld", e->sent);
		}
		if (e->vanish_at >= 0 && !e->vanished && e->sent >= e->vanish_at) {
			e->vanished = true;
			say(e, "vanish after %lld", e->sent);
			line_gone(e);
			if (e->back < 0 || !e->pty)
				return 0;
			nap(e->back);
			if (stop)
				break;
			if (new_pty(e) < 0)
				return 1;
			say(e, "back %s", ptsname(e->fd));
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct emu e = {
		.stuck = -1, .stall_at = -1, .vanish_at = -1, .back = -1,
		.sigma = 60, .fd = -1, .lfd = -1,
	};
	struct sigaction sa = { .sa_handler = on_signal };
	int ret = 1;

	if (argc < 3) {
		fprintf(stderr, "usage: helper_ttyrng LINK|listen=SOCKET "
				"onerng|truerng|generic [KEY=VALUE...]\n");
		return 1;
	}
	if (strncmp(argv[1], "listen=", 7) == 0)
		e.listen_path = argv[1] + 7;
	else
		e.link = argv[1];
	if (strcmp(argv[2], "onerng") == 0)
		e.profile = ONERNG;
	else if (strcmp(argv[2], "truerng") == 0)
		e.profile = TRUERNG;
	else if (strcmp(argv[2], "generic") == 0)
		e.profile = GENERIC;
	else {
		fprintf(stderr, "helper_ttyrng: unknown profile %s\n", argv[2]);
		return 1;
	}
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i], *v = strchr(a, '=');

		v = v ? v + 1 : "";
		if (strncmp(a, "rate=", 5) == 0)
			e.rate = atof(v);
		else if (strncmp(a, "stuck=", 6) == 0)
			e.stuck = (int)strtol(v, NULL, 16) & 0xff;
		else if (strncmp(a, "stall=", 6) == 0)
			e.stall_at = atoll(v);
		else if (strncmp(a, "stall_for=", 10) == 0)
			e.stall_for = atof(v);
		else if (strncmp(a, "vanish=", 7) == 0)
			e.vanish_at = atoll(v);
		else if (strncmp(a, "back=", 5) == 0)
			e.back = atof(v);
		else if (strcmp(a, "noversion") == 0)
			e.noversion = true;
		else if (strcmp(a, "whiten") == 0)
			e.whiten = true;
		else if (strcmp(a, "deaf") == 0)
			e.deaf = true;
		else if (strcmp(a, "model=v3") == 0)
			e.v3 = true;
		else if (strcmp(a, "model=pro") == 0)
			e.v3 = false;
		else if (strncmp(a, "sigma=", 6) == 0)
			e.sigma = atof(v);
		else if (strncmp(a, "log=", 4) == 0) {
			if (e.log)
				fclose(e.log);
			e.log = fopen(v, "a");
			if (!e.log) {
				perror(v);
				goto out;
			}
		} else {
			fprintf(stderr, "helper_ttyrng: unknown argument %s\n", a);
			goto out;
		}
	}
	if (getrandom(e.prng, sizeof(e.prng), 0) != sizeof(e.prng))
		goto out;
	e.prng[0] |= 1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (e.link ? new_pty(&e) < 0 : listen_on(&e) < 0) {
		perror("helper_ttyrng");
		goto out;
	}
	plugged(&e);
	printf("ready %s\n", e.link ? ptsname(e.fd) : e.listen_path);
	fflush(stdout);
	ret = serve(&e);
	if (e.link)
		unlink(e.link);
	if (e.listen_path)
		unlink(e.listen_path);
out:
	if (e.log)
		fclose(e.log);
	return ret;
}
