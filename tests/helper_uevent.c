// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * helper_uevent [send]: injects the uevent the kernel's vmgenid driver sends
 * when a VM is restored from a snapshot or cloned (NEW_VMGENID=1), through
 * the uevent netlink socket (Linux 4.18+, needs CAP_SYS_ADMIN).  The kernel
 * rebroadcasts an injected uevent to the listeners of the sender's network
 * namespace only, so it must be sent from a network namespace of its own:
 * in the machine's, every rngfeed would hear it and discard its state.  It
 * refuses to send unless RNGFEED_OUTER_NETNS names the network namespace
 * the test started in (`stat -L -c %i /proc/self/ns/net` there) and its own
 * is another one, and from PID 1's (when it can see it).  Run it under
 * "unshare -n".  Exit 0 sent, 77 when the kernel refuses (the test skips),
 * 2 refused here, 1 on other errors.
 *
 * helper_uevent listen SECONDS: listens to the kernel's uevents for
 * SECONDS, prints "listening" once bound, "NEW_VMGENID=1" at once for each
 * such uevent it receives (so a caller may stop it early), and at the end
 * "heard N".  Exit 0, or 1 on errors.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/vmgenid.h"

/* Is this process in a network namespace of its own (see above)? */
static bool in_own_netns(void)
{
	const char *outer = getenv("RNGFEED_OUTER_NETNS");
	struct stat self, init;

	if (stat("/proc/self/ns/net", &self) < 0 || !outer ||
	    strtoull(outer, NULL, 10) == (unsigned long long)self.st_ino)
		return false;
	/* PID 1's may be out of sight (a container): then the test's. */
	return stat("/proc/1/ns/net", &init) < 0 ||
	       self.st_dev != init.st_dev || self.st_ino != init.st_ino;
}

static int do_send(void)
{
	static const char payload[] =
		"change@/devices/platform/VMGENCTR:00\0ACTION=change\0"
		"DEVPATH=/devices/platform/VMGENCTR:00\0SUBSYSTEM=platform\0"
		"NEW_VMGENID=1";
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	char buf[512] = { 0 };
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	int fd;

	if (!in_own_netns()) {
		fprintf(stderr, "helper_uevent: refusing to send outside a "
				"network namespace of its own (every rngfeed "
				"would hear it); run it under unshare -n with "
				"RNGFEED_OUTER_NETNS set\n");
		return 2;
	}
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
		    NETLINK_KOBJECT_UEVENT);
	if (fd < 0) {
		perror("helper_uevent: socket");
		return errno == EPERM || errno == EACCES ? 77 : 1;
	}
	h->nlmsg_len = NLMSG_LENGTH(sizeof(payload));
	h->nlmsg_type = NLMSG_MIN_TYPE;
	h->nlmsg_flags = NLM_F_REQUEST;
	memcpy(NLMSG_DATA(h), payload, sizeof(payload));
	if (sendto(fd, buf, h->nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0) {
		perror("helper_uevent: sendto");
		close(fd);
		return errno == EPERM || errno == ECONNREFUSED ? 77 : 1;
	}
	close(fd);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int do_listen(double seconds)
{
	struct sockaddr_nl addr = {
		.nl_family = AF_NETLINK,
		.nl_groups = 1, /* the kernel's uevents, as vmgenid.c binds */
	};
	static char buf[16384];
	double end = now_s() + seconds;
	unsigned int heard = 0;
	int fd;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
		    NETLINK_KOBJECT_UEVENT);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		perror("helper_uevent: listen");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	for (double left; (left = end - now_s()) > 0;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0 && vmgenid_is_change(buf, (size_t)n)) {
			heard++;
			printf("NEW_VMGENID=1\n");
			fflush(stdout);
		}
	}
	printf("heard %u\n", heard);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 1 || (argc == 2 && strcmp(argv[1], "send") == 0))
		return do_send();
	if (argc == 3 && strcmp(argv[1], "listen") == 0)
		return do_listen(atof(argv[2]));
	fprintf(stderr, "usage: helper_uevent [send | listen SECONDS]\n");
	return 1;
}
