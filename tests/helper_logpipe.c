// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A log stream whose reader stops and starts on demand: runs a command
 * with its stderr a pipe of SIZE bytes (F_SETPIPE_SZ), which this program
 * reads (appending to OUT) only while told to, and times the command's
 * stop from outside.
 *
 *   helper_logpipe [-r] [-d PATH] SIZE STATUS OUT CMD [ARG]...
 *
 * -r: read from the start (otherwise the pipe is not read until SIGUSR1).
 * -d PATH: not a pipe but a datagram socket bound at PATH (the native
 * journal's, in a mount namespace of the caller's) with a receive buffer
 * of SIZE; the command's stderr is left as it is, and each datagram is
 * appended to OUT with a newline.  (A datagram socket's queue is also
 * bounded in datagrams: net.unix.max_dgram_qlen, 10 by default.)
 * SIGUSR1: read (drain the pipe, and go on reading);  SIGUSR2: stop
 * reading;  SIGHUP: send SIGTERM to the command and time it until it is
 * gone (reaped at once, so "gone" is not a zombie's kill -0).
 * STATUS is rewritten (atomically) every 20 ms and on each event:
 *   pid P            the command's PID
 *   size S           the pipe's size
 *   queued Q         bytes in the pipe now, not read (FIONREAD; -d: the
 *                    next datagram's)
 *   reading 0|1
 *   exited -|CODE    its exit status (128 + signal when killed)
 *   stop_s -|SECS    seconds from the SIGTERM of SIGHUP until it was gone
 * Ends once the command has ended and the pipe is read to its end (every
 * writer gone), with the command's status.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct state {
	pid_t pid;
	int size, exit_code; /* -1: running */
	bool reading;
	double term_at, stop_s; /* 0, -1: none yet */
};

static void write_status(const char *path, const struct state *s, int rd)
{
	char tmp[4096], code[16] = "-", stop[32] = "-";
	int queued = 0;
	FILE *f;

	if (ioctl(rd, FIONREAD, &queued) < 0)
		queued = -1;
	if (s->exit_code >= 0)
		snprintf(code, sizeof(code), "%d", s->exit_code);
	if (s->stop_s >= 0)
		snprintf(stop, sizeof(stop), "%.3f", s->stop_s);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "pid %d\nsize %d\nqueued %d\nreading %d\nexited %s\nstop_s %s\n",
		(int)s->pid, s->size, queued, s->reading, code, stop);
	if (fclose(f) == 0)
		rename(tmp, path);
}

int main(int argc, char **argv)
{
	struct state s = { .exit_code = -1, .stop_s = -1 };
	const char *status_path, *out_path, *dgram = NULL;
	int p[2], sfd, out, argi = 1;
	bool eof = false;
	sigset_t mask;

	for (; argi < argc && argv[argi][0] == '-'; argi++) {
		if (strcmp(argv[argi], "-r") == 0)
			s.reading = true;
		else if (strcmp(argv[argi], "-d") == 0 && argi + 1 < argc)
			dgram = argv[++argi];
		else
			break;
	}
	if (argc - argi < 4) {
		fprintf(stderr, "usage: helper_logpipe [-r] [-d PATH] SIZE STATUS OUT CMD [ARG]...\n");
		return 2;
	}
	s.size = atoi(argv[argi]);
	status_path = argv[argi + 1];
	out_path = argv[argi + 2];
	out = open(out_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (out < 0) {
		perror("helper_logpipe");
		return 2;
	}
	if (dgram) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };

		/* p[1] -1: nothing to hand the command; p[0] the socket. */
		p[1] = -1;
		p[0] = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		snprintf(a.sun_path, sizeof(a.sun_path), "%s", dgram);
		if (p[0] < 0 || bind(p[0], (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    setsockopt(p[0], SOL_SOCKET, SO_RCVBUF, &s.size,
			       sizeof(s.size)) < 0) {
			perror("helper_logpipe: socket");
			return 2;
		}
	} else if (pipe2(p, O_CLOEXEC) < 0 ||
		   fcntl(p[1], F_SETPIPE_SZ, s.size) < 0 ||
		   (s.size = fcntl(p[1], F_GETPIPE_SZ)) < 0) {
		perror("helper_logpipe: a pipe of that size");
		return 2;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGUSR2);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		perror("helper_logpipe: signalfd");
		return 2;
	}
	s.pid = fork();
	if (s.pid == 0) {
		sigprocmask(SIG_UNBLOCK, &mask, NULL);
		if (p[1] >= 0 && dup2(p[1], 2) < 0)
			_exit(127);
		execv(argv[argi + 3], argv + argi + 3);
		_exit(127);
	}
	if (p[1] >= 0)
		close(p[1]);
	if (s.pid < 0) {
		perror("helper_logpipe: fork");
		return 2;
	}
	write_status(status_path, &s, p[0]);
	while (!(eof && s.exit_code >= 0)) {
		struct pollfd pf[2] = { { .fd = sfd, .events = POLLIN },
					{ .fd = s.reading && !eof ? p[0] : -1,
					  .events = POLLIN } };
		struct signalfd_siginfo si;
		int st;

		(void)poll(pf, 2, 20);
		while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGUSR1)
				s.reading = true;
			else if (si.ssi_signo == SIGUSR2)
				s.reading = false;
			else if (si.ssi_signo == SIGHUP && s.exit_code < 0 &&
				 s.term_at == 0) {
				s.term_at = now();
				kill(s.pid, SIGTERM);
			}
		}
		if (s.exit_code < 0 && waitpid(s.pid, &st, WNOHANG) == s.pid) {
			if (s.term_at > 0)
				s.stop_s = now() - s.term_at;
			s.exit_code = WIFEXITED(st) ? WEXITSTATUS(st)
						    : 128 + WTERMSIG(st);
		}
		if (pf[1].revents) {
			char buf[65536];
			ssize_t n = read(p[0], buf, sizeof(buf) - 1);

			if (n > 0 && dgram)
				buf[n++] = '\n';
			if (n > 0 && write(out, buf, (size_t)n) != n)
				perror("helper_logpipe: write");
			eof = n == 0 && !dgram;
		}
		/* A socket has no end: the command's is enough. */
		if (dgram && s.exit_code >= 0 && s.reading) {
			char buf[65536];
			ssize_t n;

			while ((n = recv(p[0], buf, sizeof(buf) - 1,
					 MSG_DONTWAIT)) > 0) {
				buf[n++] = '\n';
				if (write(out, buf, (size_t)n) != n)
					perror("helper_logpipe: write");
			}
			eof = true;
		}
		write_status(status_path, &s, p[0]);
	}
	return s.exit_code;
}
