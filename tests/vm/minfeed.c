// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * minfeed — the floor for the whole-boot tests: the least a feeder can do.
 *
 *   minfeed rdrand | minfeed rndrrs | minfeed DEVICE
 *
 * Reads 64 bytes from RDRAND (x86), RNDRRS (arm64, tests/vm/arm64-boot.sh) or
 * from DEVICE (e.g. /dev/hwrng), hands them to
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

#if defined(__x86_64__) || defined(__i386__)
/* One RDRAND of the register's width (unsigned long: 64 bits on x86-64,
 * 32 on i386, where a 64-bit operand does not exist); Intel's DRNG guide:
 * retry up to 10 times on a transient underflow. */
static int rdrand_long(unsigned long *w)
{
	unsigned char ok;

	for (int i = 0; i < 10; i++) {
		__asm__ volatile("rdrand %0; setc %1" : "=r"(*w), "=qm"(ok) : : "cc");
		if (ok)
			return 0;
	}
	return -1;
}
#endif

/* One 64-bit word from the CPU's instruction; -1 when it keeps failing or
 * this build's architecture has none the test uses. */
static int cpu64(const char *name, uint64_t *v)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned long w;

	if (strcmp(name, "rdrand") != 0)
		return -1;
	*v = 0;
	for (unsigned int have = 0; have < 64; have += 8 * sizeof(w)) {
		if (rdrand_long(&w) < 0)
			return -1;
		*v |= (uint64_t)w << have;
	}
	return 0;
#elif defined(__aarch64__)
	uint64_t ok;
	int i;

	if (strcmp(name, "rndrrs") != 0)
		return -1;
	/* RNDRRS by its system-register name (assemblers without +rng take it);
	 * NZCV.Z set means no number this time: retry a few times */
	for (i = 0; i < 10; i++) {
		__asm__ volatile("mrs %0, s3_3_c2_c4_1; cset %1, ne"
				 : "=r"(*v), "=r"(ok) : : "cc");
		if (ok)
			return 0;
	}
#else
	(void)name;
	(void)v;
#endif
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
		fprintf(stderr, "usage: minfeed rdrand|rndrrs|DEVICE\n");
		return 2;
	}
	if (argv[1][0] != '/') {
		for (got = 0; got < NBYTES; got += 8) {
			uint64_t v;

			if (cpu64(argv[1], &v) < 0) {
				fprintf(stderr, "minfeed: %s failed or not in this build\n", argv[1]);
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
