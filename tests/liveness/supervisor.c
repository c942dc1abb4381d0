// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * supervisor: what a service manager gives the daemon in make liveness
 * (tests/liveness/run.sh), one per run, in C so that a case costs one
 * small process instead of a Perl listener and two shell pipes.
 *
 *   supervisor -d DIR [-o RATE] [-e] [-O] [-E] -- COMMAND [ARG]...
 *
 * It is a child subreaper (PR_SET_CHILD_SUBREAPER), so a daemon that
 * detaches comes back to it, and then:
 *   DIR/notify       a datagram socket, systemd's side of sd_notify: each
 *                    datagram is appended to DIR/notify.log;
 *   -o RATE          COMMAND's stdout is a pipe read here at RATE bytes a
 *                    second (a consumer, not a sink: --stdout waits for it)
 *                    and thrown away; SIGUSR1 stalls it;
 *   -e               COMMAND's stderr is a pipe copied to DIR/log (a
 *                    journal stream); SIGUSR2 stalls it;
 *   -O, -E           stdout, stderr stalled from the start.
 * A stalled pipe is never read again, and is filled first (through a new
 * open file description of its write end, non-blocking, so the daemon's
 * own keeps its flags): the daemon's next write to it waits, or says
 * EAGAIN if the daemon made its end non-blocking, as a reader that stopped
 * would make it.  Without -o or -e the stream is inherited.
 *
 * Files, for a driver that looks with shell built-ins only: DIR/started
 * holds COMMAND's PID; DIR/exit.PID "exit N EPOCH" or "signal N EPOCH"
 * for every process reaped (COMMAND and whatever it left behind), EPOCH
 * the wall clock at the reaping; DIR/ready appears with the first
 * READY=1.  It ends when no child is left, with status 0 (COMMAND's is in
 * its file), or 1 if it cannot start COMMAND.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TICK_MS 50

struct stream {
	int rfd;      /* our read end (-1: not ours) */
	int wfd;      /* a write end kept to fill it when it stalls */
	int out;      /* where what is read goes (-1: nowhere) */
	int stalled;
	long rate;    /* bytes a second; 0: as fast as it comes */
	long allowed; /* left in this tick */
};

static char dir[PATH_MAX - 32];

static void die(const char *what)
{
	fprintf(stderr, "supervisor: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double epoch(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* DIR/NAME holds one line, whole when the file appears (a rename). */
static void put_file(const char *name, const char *fmt, ...)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], line[128];
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, (size_t)n) != n || close(fd) < 0 ||
	    rename(tmp, path) < 0)
		die(path);
}

static void stream_pipe(struct stream *s, long rate, int out)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		die("pipe2");
	*s = (struct stream){ .rfd = p[0], .wfd = p[1], .out = out,
			      .rate = rate, .allowed = rate / (1000 / TICK_MS) };
	if (fcntl(s->rfd, F_SETFL, O_NONBLOCK) < 0)
		die("fcntl");
}

/* Stop reading @s for good and fill it, through a description of our own. */
static void stall(struct stream *s)
{
	char path[64], buf[4096];
	int fd;

	if (s->rfd < 0 || s->stalled)
		return;
	s->stalled = 1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", s->wfd);
	fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		die("reopening a pipe's write end");
	memset(buf, '#', sizeof(buf));
	while (write(fd, buf, sizeof(buf)) > 0)
		;
	/* Less than a page may still fit. */
	while (write(fd, buf, 1) > 0)
		;
	close(fd);
}

static void drain(struct stream *s)
{
	char buf[65536];

	while (s->rfd >= 0 && !s->stalled && (s->rate == 0 || s->allowed > 0)) {
		size_t want = sizeof(buf);
		ssize_t n;

		if (s->rate && (size_t)s->allowed < want)
			want = (size_t)s->allowed;
		n = read(s->rfd, buf, want);
		if (n <= 0)
			return;
		if (s->rate)
			s->allowed -= n;
		if (s->out >= 0 && write(s->out, buf, (size_t)n) != n)
			die("copying a stream");
	}
}

static void notify_read(int sock, int log)
{
	char buf[4096];
	ssize_t n;

	while ((n = recv(sock, buf, sizeof(buf) - 1, MSG_DONTWAIT)) >= 0) {
		buf[n] = '\0';
		if (strncmp(buf, "READY=1", 7) == 0 || strstr(buf, "\nREADY=1"))
			put_file("ready", "%.6f\n", epoch());
		buf[n++] = '\n';
		if (write(log, buf, (size_t)n) != n)
			die("notify.log");
	}
}

int main(int argc, char **argv)
{
	struct stream sout = { .rfd = -1, .wfd = -1 }, serr = { .rfd = -1, .wfd = -1 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int opt, sock, nlog, sigfd, children = 1, stall_out = 0, stall_err = 0;
	long out_rate = -1;
	int want_err = 0;
	char path[PATH_MAX];
	double refill;
	sigset_t mask;
	pid_t child;

	while ((opt = getopt(argc, argv, "+d:o:eOE")) != -1) {
		switch (opt) {
		case 'd':
			snprintf(dir, sizeof(dir), "%s", optarg);
			break;
		case 'o':
			out_rate = atol(optarg);
			break;
		case 'e':
			want_err = 1;
			break;
		case 'O':
			stall_out = 1;
			break;
		case 'E':
			stall_err = 1;
			break;
		default:
			return 2;
		}
	}
	if (!dir[0] || optind >= argc) {
		fprintf(stderr, "usage: supervisor -d DIR [-o RATE] [-e] [-O] [-E] -- COMMAND [ARG]...\n");
		return 2;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L) < 0)
		die("PR_SET_CHILD_SUBREAPER");

	if (strlen(dir) + sizeof("/notify") > sizeof(sa.sun_path)) {
		fprintf(stderr, "supervisor: %s: too long for a socket path\n", dir);
		return 2;
	}
	memcpy(sa.sun_path, dir, strlen(dir));
	memcpy(sa.sun_path + strlen(dir), "/notify", sizeof("/notify"));
	sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	/* Anyone may send: a daemon that switched user (-D) too. */
	if (sock < 0 || bind(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(sa.sun_path, 0666) < 0)
		die(sa.sun_path);
	snprintf(path, sizeof(path), "%s/notify.log", dir);
	nlog = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (nlog < 0)
		die(path);
	if (out_rate >= 0)
		stream_pipe(&sout, out_rate, -1);
	if (want_err) {
		int log;

		snprintf(path, sizeof(path), "%s/log", dir);
		log = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
		/* The daemon's syslog lines go here too (interpose.c), after
		 * -D's switch to another user. */
		if (log < 0 || fchmod(log, 0666) < 0)
			die(path);
		stream_pipe(&serr, 0, log);
	}
	if (stall_out)
		stall(&sout);
	if (stall_err)
		stall(&serr);

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	refill = mono() + TICK_MS / 1000.0;
	if (sigfd < 0)
		die("signalfd");

	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if ((sout.wfd >= 0 && dup2(sout.wfd, 1) < 0) ||
		    (serr.wfd >= 0 && dup2(serr.wfd, 2) < 0))
			_exit(127);
		execvp(argv[optind], argv + optind);
		_exit(127);
	}
	put_file("started", "%d\n", (int)child);

	while (children) {
		struct pollfd p[4] = {
			{ .fd = sigfd, .events = POLLIN },
			{ .fd = sock, .events = POLLIN },
			{ .fd = sout.stalled || sout.allowed <= 0 ? -1 : sout.rfd,
			  .events = POLLIN },
			{ .fd = serr.stalled ? -1 : serr.rfd, .events = POLLIN },
		};
		struct signalfd_siginfo si;
		int status;
		pid_t pid;

		(void)poll(p, 4, TICK_MS);
		/* The stdout consumer's pace: RATE/20 bytes each 50 ms. */
		if (mono() >= refill) {
			sout.allowed = sout.rate / (1000 / TICK_MS);
			refill = mono() + TICK_MS / 1000.0;
		}
		while (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGUSR1)
				stall(&sout);
			if (si.ssi_signo == SIGUSR2)
				stall(&serr);
		}
		notify_read(sock, nlog);
		drain(&sout);
		drain(&serr);
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			char name[32];

			snprintf(name, sizeof(name), "exit.%d", (int)pid);
			if (WIFSIGNALED(status))
				put_file(name, "signal %d %.6f\n", WTERMSIG(status),
					 epoch());
			else
				put_file(name, "exit %d %.6f\n", WEXITSTATUS(status),
					 epoch());
		}
		if (pid < 0 && errno == ECHILD)
			children = 0;
	}
	notify_read(sock, nlog);
	drain(&serr);
	return 0;
}
