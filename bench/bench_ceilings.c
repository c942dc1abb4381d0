// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench_ceilings: the fastest each raw source or sink can go on this
 * machine, with nothing of rngfeed's in the way, so bench/ceilings.sh and
 * bench/stages.sh can put each of rngfeed's stages against its ceiling.
 * One measurement per call, bounded by time; the scripts repeat it and
 * take the median.
 *
 *   bench_ceilings rdrand SECONDS
 *   bench_ceilings rdseed SECONDS
 *   bench_ceilings hwrng SECONDS [DEVICE]           (default /dev/hwrng)
 *   bench_ceilings aes SECONDS                      (AES-256-CTR, 1 MiB)
 *   bench_ceilings rndaddentropy BYTES SECONDS [DEVICE] (credit 0 bits)
 *   bench_ceilings tpm SOCKET SECONDS               (TPM2_GetRandom, 64 B)
 *
 * Output, one line on stdout, for the scripts to parse:
 *   NAME key=value key=value ...
 * or, when the source is not there (exit status 3):
 *   NAME unavailable reason=free text to the end of the line
 * Exit status 1: something that should have worked failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <gcrypt.h>
#include <linux/random.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "rngfeed/cpu_rng.h"

#define EXIT_UNAVAILABLE 3

static int unavailable(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int unavailable(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%s unavailable reason=", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return EXIT_UNAVAILABLE;
}

static double parse_seconds(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v > 0) || v > 600) {
		fprintf(stderr, "bench_ceilings: bad duration '%s'\n", s);
		exit(2);
	}
	return v;
}

/* ---- RDRAND / RDSEED ------------------------------------------------------
 * Our own inline instruction (not the project's cpu_rng.c) so the ceiling
 * owes nothing to the code it bounds; the project's probe is used only to
 * learn, without dying of SIGILL, whether the instruction runs at all. */
#if defined(__x86_64__)
static inline int rdrand64(uint64_t *v)
{
	unsigned char ok;

	__asm__ volatile("rdrand %0; setc %1" : "=r"(*v), "=qm"(ok) : : "cc");
	return ok;
}

static inline int rdseed64(uint64_t *v)
{
	unsigned char ok;

	__asm__ volatile("rdseed %0; setc %1" : "=r"(*v), "=qm"(ok) : : "cc");
	return ok;
}

static int cpu_loop(const char *name, enum cpu_insn insn, double seconds)
{
	uint64_t words = 0, failures = 0, run = 0, longest = 0, v;
	char why[256] = "";
	double start, t;

	if (cpu_insn_probe(insn, why, sizeof(why)) < 0)
		return unavailable(name, "%s", why);
	start = bench_now();
	do {
		/* The clock is read once per 256 attempts: often enough for
		 * RDSEED (~1 us per attempt when it fails), rarely enough
		 * not to show in RDRAND's ~20 ns. */
		for (int i = 0; i < 256; i++) {
			int ok = insn == CPU_RDRAND ? rdrand64(&v) : rdseed64(&v);

			if (ok) {
				words++;
				run = 0;
			} else {
				failures++;
				if (++run > longest)
					longest = run;
			}
		}
		t = bench_now() - start;
	} while (t < seconds);
	printf("%s bytes_per_s=%.0f words=%llu failures=%llu failure_pct=%.4f "
	       "longest_failure_run=%llu ns_per_word=%.1f seconds=%.3f\n",
	       name, (double)words * 8 / t, (unsigned long long)words,
	       (unsigned long long)failures,
	       100.0 * (double)failures / (double)(words + failures),
	       (unsigned long long)longest, words ? t * 1e9 / (double)words : 0,
	       t);
	return words ? 0 : 1;
}
#else
static int cpu_loop(const char *name, enum cpu_insn insn, double seconds)
{
	(void)insn;
	(void)seconds;
	return unavailable(name, "not an x86-64 CPU");
}
#endif

/* ---- /dev/hwrng ------------------------------------------------------------
 * The device blocks until the host hands over more (~1 KB per 100 ms from
 * virtio-rng), so the time bound is a timer signal that interrupts read():
 * the kernel then returns what it had, or EINTR.  It repeats every 50 ms in
 * case it fires just before a read() starts. */
static volatile sig_atomic_t alarm_fired;

static void on_alarm(int sig)
{
	(void)sig;
	alarm_fired = 1;
}

static int hwrng(double seconds, const char *path)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct itimerval it = { .it_interval = { 0, 50000 } };
	static uint8_t buf[65536];
	unsigned long long bytes = 0, reads = 0;
	double start, t;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return unavailable("hwrng", "cannot open %s: %s", path, strerror(errno));
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	it.it_value.tv_sec = (time_t)seconds;
	it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
	if (!it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	start = bench_now();
	setitimer(ITIMER_REAL, &it, NULL);
	while (!alarm_fired) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n > 0) {
			bytes += (unsigned long long)n;
			reads++;
		} else if (n < 0 && errno == ENODEV) {
			close(fd);
			return unavailable("hwrng", "%s: no hw_random device selected "
					   "(rng_current is none)", path);
		} else if (n == 0 || errno != EINTR) {
			int e = n == 0 ? 0 : errno;

			fprintf(stderr, "bench_ceilings: %s: %s after %llu bytes\n", path,
				e ? strerror(e) : "end of file", bytes);
			close(fd);
			return 1;
		}
	}
	t = bench_now() - start;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	close(fd);
	printf("hwrng bytes_per_s=%.1f bytes=%llu reads=%llu seconds=%.3f\n",
	       (double)bytes / t, bytes, reads, t);
	return 0;
}

/* ---- libgcrypt AES-256-CTR ------------------------------------------------
 * The cipher the CTR_DRBG is built on, keyed once, in 1 MiB calls: what
 * libgcrypt can do at best, so what no DRBG on it can beat. */
static int aes(double seconds)
{
	const size_t len = 1u << 20;
	static uint8_t key[32];
	unsigned long long bytes = 0;
	gcry_cipher_hd_t hd;
	uint8_t *buf;
	double start, t;
	int ok = 0;

	if (!gcry_check_version(NULL)) {
		fprintf(stderr, "bench_ceilings: libgcrypt will not initialise\n");
		return 1;
	}
	gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
	gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
	buf = calloc(1, len);
	if (!buf || gcry_cipher_open(&hd, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_CTR, 0)) {
		free(buf);
		return 1;
	}
	memset(key, 0x5c, sizeof(key));
	if (gcry_cipher_setkey(hd, key, sizeof(key)) || gcry_cipher_setctr(hd, NULL, 0) ||
	    /* warm-up: page faults on buf, the key schedule in cache */
	    gcry_cipher_encrypt(hd, buf, len, NULL, 0))
		goto out;
	start = bench_now();
	do {
		for (int i = 0; i < 8; i++) {
			if (gcry_cipher_encrypt(hd, buf, len, NULL, 0))
				goto out;
			bytes += len;
		}
		t = bench_now() - start;
	} while (t < seconds);
	printf("aes bytes_per_s=%.0f bytes=%llu buffer=%zu seconds=%.3f\n",
	       (double)bytes / t, bytes, len, t);
	ok = 1;
out:
	gcry_cipher_close(hd);
	free(buf);
	return ok ? 0 : 1;
}

/* ---- RNDADDENTROPY ----------------------------------------------------------
 * Credit 0 bits: the ceiling is the kernel's mixing cost per call, and
 * crediting would change nothing in it but would claim entropy that this
 * constant buffer does not carry. */
static int rndaddentropy(size_t size, double seconds, const char *path)
{
	unsigned long long calls = 0;
	struct rand_pool_info *info;
	double start, t;
	int fd;

	if (size == 0 || size > (1u << 20) || size % 4) {
		fprintf(stderr, "bench_ceilings: size must be 4..1 MiB, a multiple of 4\n");
		return 2;
	}
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return unavailable("rndaddentropy", "cannot open %s: %s", path,
				   strerror(errno));
	info = calloc(1, sizeof(*info) + size);
	if (!info) {
		close(fd);
		return 1;
	}
	info->entropy_count = 0;
	info->buf_size = (int)size;
	for (size_t i = 0; i < size / 4; i++)
		info->buf[i] = (uint32_t)(i * 2654435761u);
	if (ioctl(fd, RNDADDENTROPY, info) < 0) {
		int e = errno;

		free(info);
		close(fd);
		if (e == EPERM)
			return unavailable("rndaddentropy",
					   "RNDADDENTROPY needs CAP_SYS_ADMIN (EPERM)");
		fprintf(stderr, "bench_ceilings: RNDADDENTROPY: %s\n", strerror(e));
		return 1;
	}
	start = bench_now();
	do {
		for (int i = 0; i < 64; i++) {
			if (ioctl(fd, RNDADDENTROPY, info) < 0) {
				fprintf(stderr, "bench_ceilings: RNDADDENTROPY: %s\n",
					strerror(errno));
				free(info);
				close(fd);
				return 1;
			}
			calls++;
		}
		t = bench_now() - start;
	} while (t < seconds);
	free(info);
	close(fd);
	printf("rndaddentropy bytes_per_s=%.0f calls_per_s=%.0f us_per_call=%.3f size=%zu "
	       "credit_bits=0 calls=%llu seconds=%.3f\n",
	       (double)(calls * size) / t, (double)calls / t, t * 1e6 / (double)calls, size,
	       calls, t);
	return 0;
}

/* ---- TPM2_GetRandom over a socket -------------------------------------------
 * The command written by hand, not by src/tpm2.c, and only what a loop
 * needs checked: the ceiling is the TPM and its socket, not our parser. */
static int read_full(int fd, uint8_t *buf, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t n = read(fd, buf + off, len - off);

		if (n > 0)
			off += (size_t)n;
		else if (n == 0)
			return -EPIPE;
		else if (errno != EINTR)
			return -errno;
	}
	return 0;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int tpm(const char *path, double seconds)
{
	/* TPM_ST_NO_SESSIONS, size 12, TPM_CC_GetRandom, bytesRequested 64 */
	static const uint8_t cmd[12] = { 0x80, 0x01, 0, 0, 0, 12, 0, 0, 0x01, 0x7b, 0, 64 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	unsigned long long calls = 0, bytes = 0;
	uint8_t rsp[4096];
	double start, t;
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return unavailable("tpm", "socket path too long");
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return unavailable("tpm", "cannot connect to %s: %s", path, strerror(e));
	}
	start = bench_now();
	do {
		uint32_t size, rc;
		size_t got;

		if (write(fd, cmd, sizeof(cmd)) != (ssize_t)sizeof(cmd)) {
			r = -EIO;
			goto fail;
		}
		r = read_full(fd, rsp, 10);
		if (r < 0)
			goto fail;
		size = be32(rsp + 2);
		rc = be32(rsp + 6);
		if (rsp[0] != 0x80 || rsp[1] != 0x01 || size < 12 || size > sizeof(rsp)) {
			r = -EPROTO;
			goto fail;
		}
		r = read_full(fd, rsp + 10, size - 10);
		if (r < 0)
			goto fail;
		got = (size_t)rsp[10] << 8 | rsp[11];
		if (rc != 0 || got > 64 || got + 12 != size) {
			fprintf(stderr, "bench_ceilings: TPM answered rc 0x%x, %zu bytes\n",
				rc, got);
			r = -EPROTO;
			goto fail;
		}
		bytes += got;
		calls++;
		t = bench_now() - start;
	} while (t < seconds);
	close(fd);
	printf("tpm bytes_per_s=%.0f calls_per_s=%.0f us_per_call=%.1f bytes_per_call=%.1f "
	       "calls=%llu seconds=%.3f\n",
	       (double)bytes / t, (double)calls / t, t * 1e6 / (double)calls,
	       (double)bytes / (double)calls, calls, t);
	return 0;
fail:
	fprintf(stderr, "bench_ceilings: TPM2_GetRandom on %s: %s\n", path, strerror(-r));
	close(fd);
	return 1;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: bench_ceilings rdrand|rdseed|aes SECONDS\n"
		"       bench_ceilings hwrng SECONDS [DEVICE]\n"
		"       bench_ceilings rndaddentropy BYTES SECONDS [DEVICE]\n"
		"       bench_ceilings tpm SOCKET SECONDS\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	int r;

	if (argc == 3 && !strcmp(what, "rdrand"))
		r = cpu_loop("rdrand", CPU_RDRAND, parse_seconds(argv[2]));
	else if (argc == 3 && !strcmp(what, "rdseed"))
		r = cpu_loop("rdseed", CPU_RDSEED, parse_seconds(argv[2]));
	else if ((argc == 3 || argc == 4) && !strcmp(what, "hwrng"))
		r = hwrng(parse_seconds(argv[2]), argc == 4 ? argv[3] : "/dev/hwrng");
	else if (argc == 3 && !strcmp(what, "aes"))
		r = aes(parse_seconds(argv[2]));
	else if ((argc == 4 || argc == 5) && !strcmp(what, "rndaddentropy"))
		r = rndaddentropy(strtoul(argv[2], NULL, 10), parse_seconds(argv[3]),
				  argc == 5 ? argv[4] : "/dev/random");
	else if (argc == 4 && !strcmp(what, "tpm"))
		r = tpm(argv[2], parse_seconds(argv[3]));
	else
		r = usage();
	fflush(stdout);
	return r;
}
