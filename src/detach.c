// SPDX-License-Identifier: GPL-2.0-or-later
/* Detaching with a start-up verdict.  See include/rngfeed/detach.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rngfeed/detach.h"
#include "rngfeed/log.h"

struct verdict {
	int32_t exit_code;
	char msg[LOG_LINE_MAX];
};

/* The parent: wait for the verdict (the child's start-up has bounded
 * steps; a signal is passed on, so it stops it), then exit with it. */
static void __attribute__((noreturn)) wait_verdict(int fd, int sigfd,
						   pid_t child)
{
	struct verdict v = { .exit_code = EXIT_FAILURE };
	int timeout_ms = -1; /* until a SIGTERM or SIGINT is passed on */
	size_t got = 0;

	while (got < sizeof(v)) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
				       { .fd = sigfd, .events = POLLIN } };
		struct signalfd_siginfo si;
		int ready = poll(p, 2, timeout_ms);
		ssize_t n;

		if (ready < 0 && errno != EINTR)
			break;
		if (ready == 0) { /* stopped, and still no verdict */
			snprintf(v.msg, sizeof(v.msg),
				 "no start-up verdict from the daemon (PID %d) "
				 "within 2 s of the stop signal",
				 (int)child);
			break;
		}
		while (p[1].revents && read(sigfd, &si, sizeof(si)) == sizeof(si)) {
			kill(child, (int)si.ssi_signo);
			/* The daemon stops within a second: a bound. */
			if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
				timeout_ms = 2000;
		}
		if (!p[0].revents)
			continue;
		n = read(fd, (char *)&v + got, sizeof(v) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got < sizeof(v))
		v.exit_code = EXIT_FAILURE;
	if (got < sizeof(v) && !v.msg[0]) {
		int status;

		/* No verdict: it died in start-up (see syslog). */
		if (waitpid(child, &status, WNOHANG) == child &&
		    WIFSIGNALED(status))
			snprintf(v.msg, sizeof(v.msg),
				 "the daemon was killed by %s during start-up",
				 strsignal(WTERMSIG(status)));
		else
			snprintf(v.msg, sizeof(v.msg),
				 "the daemon ended during start-up (see the "
				 "system log)");
	}
	v.msg[sizeof(v.msg) - 1] = '\0';
	if (v.exit_code != 0)
		fprintf(stderr, "rngfeed: %s\n",
			v.msg[0] ? v.msg : "start-up failed (see the system log)");
	/* As daemon(3): nothing of the daemon's to run or flush here. */
	_exit(v.exit_code);
}

int detach_start(int sigfd)
{
	int p[2], nul;
	pid_t child;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	child = fork();
	if (child < 0) {
		int r = -errno;

		close(p[0]);
		close(p[1]);
		return r;
	}
	if (child > 0) {
		close(p[1]);
		wait_verdict(p[0], sigfd, child);
	}
	close(p[0]);
	if (setsid() < 0 || chdir("/") < 0) {
		int r = -errno;

		close(p[1]); /* no verdict: the parent exits 1 */
		return r;
	}
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul >= 0) {
		for (int fd = 0; fd <= 2; fd++)
			(void)dup2(nul, fd);
		if (nul > 2)
			close(nul);
	}
	/* stderr is gone: syslog (or the journal, under systemd, when built
	 * with libsystemd: without it the journal target is stderr), and
	 * the verdict carries the last error. */
	log_keep_last_error(true);
	if (!RNGFEED_SYSTEMD || !getenv("JOURNAL_STREAM"))
		log_setup(log_max_priority(), LOG_TO_SYSLOG);
	return p[1];
}

void detach_verdict(int *fd, int exit_code)
{
	struct verdict v = { .exit_code = exit_code };
	const char *p = (const char *)&v;
	size_t left = sizeof(v);

	if (*fd < 0)
		return;
	log_last_error(v.msg, sizeof(v.msg));
	log_keep_last_error(false);
	/* A pipe takes this at once (it is smaller than a pipe's buffer);
	 * a parent gone makes it EPIPE (SIGPIPE is ignored by then). */
	while (left > 0) {
		ssize_t n = write(*fd, p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		p += n;
		left -= (size_t)n;
	}
	close(*fd);
	*fd = -1;
}
