// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <linux/netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rngfeed/vmgenid.h"

int vmgenid_open(void)
{
	struct sockaddr_nl addr = {
		.nl_family = AF_NETLINK,
		.nl_groups = 1, /* the kernel's own uevents, not udev's */
	};
	int fd;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    NETLINK_KOBJECT_UEVENT);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

bool vmgenid_is_change(const char *msg, size_t len)
{
	static const char key[] = "NEW_VMGENID=1";
	size_t i = 0;

	/* The header "ACTION@DEVPATH" is the first string; the variables
	 * follow, each NUL-terminated (the last one may not be). */
	while (i < len) {
		const char *s = msg + i;
		size_t n = strnlen(s, len - i);

		if (i > 0 && n == sizeof(key) - 1 &&
		    memcmp(s, key, sizeof(key) - 1) == 0)
			return true;
		i += n + 1;
	}
	return false;
}

int vmgenid_drain(int fd)
{
	char buf[8192];
	int found = 0;

	for (;;) {
		struct sockaddr_nl from;
		socklen_t from_len = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0,
				     (struct sockaddr *)&from, &from_len);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return found;
			if (errno == EINTR)
				continue;
			/* ENOBUFS: uevents were lost; one of them may have
			 * been the change, so act as if it was. */
			if (errno == ENOBUFS)
				found = 1;
			else
				return -errno;
			continue;
		}
		/* Only the kernel (port 0) speaks for the VM generation. */
		if (from_len == sizeof(from) && from.nl_pid == 0 &&
		    vmgenid_is_change(buf, (size_t)n))
			found = 1;
	}
}
