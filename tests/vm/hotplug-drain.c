// SPDX-License-Identifier: GPL-2.0-or-later
/* hotplug-drain WATERMARK — in a 5.10 guest (tests/vm/hotplug-init.sh, case
 * watermark), take entropy out of the kernel's input pool until entropy_avail is
 * 512 bits below WATERMARK, the way the kernel's own CRNG reseed does (every 300 s on
 * those kernels): RNDRESEEDCRNG, then a read of /dev/urandom.  Plain reads alone do
 * not drain the pool on 5.6+ kernels within a test's minutes, hence the ioctl.
 * Prints one "VMTEST drain" line: entropy_avail before and after, reseeds made. */
#include <fcntl.h>
#include <linux/random.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int entropy_avail(void)
{
	FILE *f = fopen("/proc/sys/kernel/random/entropy_avail", "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

int main(int argc, char **argv)
{
	int target = (argc > 1 ? atoi(argv[1]) : 2048) - 512;
	int fd = open("/dev/urandom", O_RDONLY);
	int before = entropy_avail(), n = 0;
	unsigned char buf[32];

	if (fd < 0) {
		perror("hotplug-drain: /dev/urandom");
		return 1;
	}
	while (entropy_avail() > target && n < 64) {
		if (ioctl(fd, RNDRESEEDCRNG) < 0) {
			perror("hotplug-drain: RNDRESEEDCRNG");
			break;
		}
		if (read(fd, buf, sizeof(buf)) < 0)
			perror("hotplug-drain: read");
		n++;
	}
	printf("VMTEST drain before=%d after=%d reseeds=%d\n", before,
	       entropy_avail(), n);
	close(fd);
	return 0;
}
