/*
 * minfeed — the floor for the whole-boot tests: the least a feeder can do.
 *
 *   minfeed rdrand | minfeed DEVICE
 *
 * Reads 64 bytes from RDRAND or from DEVICE (e.g. /dev/hwrng), hands them to
 * the kernel with one RNDADDENTROPY crediting 512 bits, and exits. No tests,
 * no conditioning: the time it takes is what the boot itself costs, so a real
 * daemon's time is judged against it.
 */
#include <fcntl.h>
#include <linux/random.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define NBYTES 64

static int rdrand64(uint64_t *v)
{
	unsigned char ok;
	int i;

	/* Intel's DRNG guide: retry up to 10 times on a transient underflow */
	for (i = 0; i < 10; i++) {
		__asm__ volatile("rdrand %0; setc %1" : "=r"(*v), "=qm"(ok) : : "cc");
		if (ok)
			return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct {
		struct rand_pool_info info;
		unsigned char buf[NBYTES];
	} req;
	size_t got = 0;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: minfeed rdrand|DEVICE\n");
		return 2;
	}
	if (strcmp(argv[1], "rdrand") == 0) {
		for (got = 0; got < NBYTES; got += 8) {
			uint64_t v;

			if (rdrand64(&v) < 0) {
				fprintf(stderr, "minfeed: RDRAND failed\n");
				return 1;
			}
			memcpy(req.buf + got, &v, 8);
		}
	} else {
		fd = open(argv[1], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			perror(argv[1]);
			return 1;
		}
		while (got < NBYTES) {
			ssize_t n = read(fd, req.buf + got, NBYTES - got);

			if (n <= 0) {
				perror(argv[1]);
				return 1;
			}
			got += (size_t)n;
		}
		close(fd);
	}

	req.info.entropy_count = NBYTES * 8;
	req.info.buf_size = NBYTES;
	fd = open("/dev/random", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, RNDADDENTROPY, &req.info) < 0) {
		perror("minfeed: RNDADDENTROPY");
		return 1;
	}
	close(fd);
	return 0;
}
