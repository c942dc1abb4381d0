// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stands in for systemd's side of sd_notify(3): binds a datagram socket,
 * runs a command with NOTIFY_SOCKET (and, with -w USEC, WATCHDOG_USEC and
 * WATCHDOG_PID) pointing at it, prints every message it receives as
 * "notify: LINE", sends SIGTERM once READY=1 and SECONDS have passed, and
 * exits with the command's status.
 *
 *   helper_notify [-w USEC] SECONDS CMD [ARG]...
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void print_message(char *msg)
{
	char *save;

	for (char *line = strtok_r(msg, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		printf("notify: %s\n", line);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	const char *watchdog = NULL;
	double run_for, deadline = 0, started;
	char dir[] = "/tmp/rngfeed-notify-XXXXXX";
	int fd, status = 0, argi = 1;
	bool ready = false, termed = false;
	pid_t pid;

	if (argc > 3 && strcmp(argv[1], "-w") == 0) {
		watchdog = argv[2];
		argi = 3;
	}
	if (argc - argi < 2) {
		fprintf(stderr, "usage: helper_notify [-w USEC] SECONDS CMD [ARG]...\n");
		return 2;
	}
	run_for = atof(argv[argi]);
	if (!mkdtemp(dir))
		return 2;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/notify", dir);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		perror("helper_notify: socket");
		return 2;
	}
	setenv("NOTIFY_SOCKET", addr.sun_path, 1);
	pid = fork();
	if (pid == 0) {
		char buf[32];

		if (watchdog) {
			snprintf(buf, sizeof(buf), "%d", (int)getpid());
			setenv("WATCHDOG_PID", buf, 1);
			setenv("WATCHDOG_USEC", watchdog, 1);
		}
		execv(argv[argi + 1], argv + argi + 1);
		perror("helper_notify: exec");
		_exit(127);
	}
	started = now();
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char msg[4096];
		ssize_t n;

		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		if (!termed && now() - started > run_for + 30) {
			printf("helper_notify: no READY=1 in time\n");
			kill(pid, SIGKILL);
		}
		if (!termed && ready && now() >= deadline) {
			kill(pid, SIGTERM);
			termed = true;
		}
		if (poll(&p, 1, 50) > 0) {
			n = recv(fd, msg, sizeof(msg) - 1, 0);
			if (n > 0) {
				msg[n] = '\0';
				if (!ready && strstr(msg, "READY=1")) {
					ready = true;
					deadline = now() + run_for;
				}
				print_message(msg);
			}
		}
	}
	/* Messages sent just before exit are still queued. */
	for (;;) {
		char msg[4096];
		ssize_t n = recv(fd, msg, sizeof(msg) - 1, MSG_DONTWAIT);

		if (n <= 0)
			break;
		msg[n] = '\0';
		print_message(msg);
	}
	close(fd);
	unlink(addr.sun_path);
	rmdir(dir);
	if (WIFEXITED(status)) {
		printf("helper_notify: exit %d\n", WEXITSTATUS(status));
		return WEXITSTATUS(status);
	}
	printf("helper_notify: killed by signal %d\n", WTERMSIG(status));
	return 128 + WTERMSIG(status);
}
