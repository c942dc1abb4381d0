// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * waiter — runs inside the test VM: optionally starts a command, then polls
 * getrandom(GRND_NONBLOCK) every millisecond until the kernel's CRNG is ready.
 *
 *   waiter [-t SECONDS] [-e] [-o FILE] [-- COMMAND [ARG]...]
 *
 * It never calls a blocking getrandom(): on 6.1 a blocking call starts the
 * kernel's own jitter entropy collection, which seeds the CRNG in about a
 * second by itself and would hide what the command under test did.
 *
 * Times are CLOCK_BOOTTIME seconds. It also writes "vmtest: start" and
 * "vmtest: ready" to /dev/kmsg, so the start can be compared with the
 * kernel's own "crng init done" line on the printk clock.
 *
 * -t  give up after SECONDS (default 20)
 * -e  also stop when COMMAND exits before the CRNG is ready (default: only
 *     when ready, for commands that hand the work to the kernel and exit)
 * -o  COMMAND's stdout and stderr go to FILE (appended), each line prefixed
 *     with "[+S.SSSS]", seconds since the start: a pipe the waiter reads
 *     between polls, so the command never waits on the slow serial console
 *     and its log shows where its time went (the pipe closes when the waiter
 *     exits; a command still writing then gets EPIPE or SIGPIPE)
 *
 * Prints one line, "VMTEST waiter key=value ...":
 *   start=T            when COMMAND was started (or the waiter began)
 *   ready=T|none       first non-blocking getrandom() success, none on timeout
 *   exit=N|running, signal=N   what became of COMMAND
 *   exit_after=S       seconds from start to COMMAND's exit
 *   cpu=S              COMMAND's user+system CPU seconds (still running: from
 *                      /proc/PID/stat; exited: from its rusage)
 *   cpu1=S             the same, one second after the start (if it still ran)
 *   waited=S           seconds from start to this line
 * Exit status 0 when ready, 1 on timeout, 2 on a usage or system error.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void kmsg(const char *text)
{
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, text, strlen(text)) < 0) {
		/* the marker is a convenience; the waiter's own times stand */
	}
	close(fd);
}

/* utime + stime of a running process, from field 14 and 15 of its stat. */
static double proc_cpu(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long ut, st;
	char *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1.0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* comm may hold spaces; the fields after it start past the last ')' */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			 &ut, &st) != 2)
		return -1.0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Copy what the command wrote to @out, stamping each line with its arrival.
 * Returns -1 once the pipe is at its end. */
static int copy_lines(int fd, FILE *out, double start, int *at_line_start)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		return -1;
	for (ssize_t i = 0; i < n; i++) {
		if (*at_line_start)
			fprintf(out, "[+%.4f] ", now() - start);
		fputc(buf[i], out);
		*at_line_start = buf[i] == '\n';
	}
	fflush(out);
	return 0;
}

int main(int argc, char **argv)
{
	double timeout = 20.0, start, ready = -1.0, exited = -1.0, cpu = -1.0, cpu1 = -1.0;
	int stop_on_exit = 0, status = 0, opt, pipefd[2] = { -1, -1 }, bol = 1;
	const char *out = NULL;
	FILE *outf = NULL;
	pid_t child = -1;
	unsigned char b;

	while ((opt = getopt(argc, argv, "+t:eo:")) != -1) {
		switch (opt) {
		case 't':
			timeout = atof(optarg);
			break;
		case 'e':
			stop_on_exit = 1;
			break;
		case 'o':
			out = optarg;
			break;
		default:
			fprintf(stderr, "usage: waiter [-t SECONDS] [-e] [-o FILE] [-- COMMAND...]\n");
			return 2;
		}
	}

	if (out && optind < argc) {
		outf = fopen(out, "ae");
		if (!outf || pipe2(pipefd, O_CLOEXEC) < 0) {
			perror(out);
			return 2;
		}
	}
	start = now();
	kmsg("<6>vmtest: start\n");
	if (optind < argc) {
		child = fork();
		if (child < 0) {
			perror("waiter: fork");
			return 2;
		}
		if (child == 0) {
			if (outf && (dup2(pipefd[1], 1) < 0 || dup2(pipefd[1], 2) < 0))
				_exit(127);
			execv(argv[optind], &argv[optind]);
			perror("waiter: exec");
			_exit(127);
		}
		if (outf) {
			close(pipefd[1]);
			fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
		}
	}

	for (;;) {
		struct pollfd pfd = { pipefd[0], POLLIN, 0 };
		double t;

		if (ready < 0 && getrandom(&b, 1, GRND_NONBLOCK) == 1) {
			ready = now();
			kmsg("<6>vmtest: ready\n");
		}
		if (child > 0 && exited < 0) {
			struct rusage ru;

			if (wait4(child, &status, WNOHANG, &ru) == child) {
				exited = now();
				cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
				      (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
				/* what it did just before exiting counts */
				if (ready < 0 && getrandom(&b, 1, GRND_NONBLOCK) == 1) {
					ready = now();
					kmsg("<6>vmtest: ready\n");
				}
			}
		}
		if (ready >= 0 || (stop_on_exit && exited >= 0))
			break;
		t = now();
		/* a second sample lets the host see the CPU rate once start-up is over */
		if (child > 0 && exited < 0 && cpu1 < 0 && t - start >= 1.0)
			cpu1 = proc_cpu(child);
		if (t - start >= timeout)
			break;
		/* one millisecond between polls, copying output meanwhile */
		if (pipefd[0] >= 0 && poll(&pfd, 1, 1) > 0 &&
		    copy_lines(pipefd[0], outf, start, &bol) < 0) {
			close(pipefd[0]);
			pipefd[0] = -1;
		} else if (pipefd[0] < 0) {
			poll(NULL, 0, 1);
		}
	}
	/* what is already in the pipe; a command still running may write on */
	if (pipefd[0] >= 0) {
		struct pollfd pfd = { pipefd[0], POLLIN, 0 };

		while (poll(&pfd, 1, 0) > 0 &&
		       copy_lines(pipefd[0], outf, start, &bol) == 0)
			;
	}

	printf("VMTEST waiter start=%.6f", start);
	if (ready >= 0)
		printf(" ready=%.6f", ready);
	else
		printf(" ready=none");
	if (child > 0) {
		if (exited >= 0) {
			if (WIFEXITED(status))
				printf(" exit=%d", WEXITSTATUS(status));
			else
				printf(" signal=%d", WTERMSIG(status));
			printf(" exit_after=%.6f", exited - start);
		} else {
			cpu = proc_cpu(child);
			printf(" exit=running");
		}
		printf(" cpu=%.3f", cpu);
		if (cpu1 >= 0)
			printf(" cpu1=%.3f", cpu1);
	}
	printf(" waited=%.6f\n", now() - start);
	fflush(stdout);
	return ready >= 0 ? 0 : 1;
}
