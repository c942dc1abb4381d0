// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Injects the uevent the kernel's vmgenid driver sends when a VM is
 * restored from a snapshot or cloned (NEW_VMGENID=1), through the uevent
 * netlink socket (Linux 4.18+, needs CAP_SYS_ADMIN): the kernel
 * rebroadcasts it to every listener as its own.  Exit 0 sent, 77 when the
 * kernel refuses (the test skips), 1 on other errors.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	static const char payload[] =
		"change@/devices/platform/VMGENCTR:00\0ACTION=change\0"
		"DEVPATH=/devices/platform/VMGENCTR:00\0SUBSYSTEM=platform\0"
		"NEW_VMGENID=1";
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	char buf[512] = { 0 };
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	int fd;

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
		return errno == EPERM || errno == ECONNREFUSED ? 77 : 1;
	}
	close(fd);
	return 0;
}
