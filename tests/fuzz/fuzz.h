/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the libFuzzer harnesses in tests/fuzz/.  Each harness defines
 * LLVMFuzzerTestOneInput(); "make fuzz" links it with libFuzzer, and
 * tests/fuzz/replay.c runs the same function over saved inputs in an
 * ordinary build, so the invariants below also run in "make check".
 *
 * FUZZ_ASSERT aborts (a crash to libFuzzer) with the failed condition:
 * the harnesses check what the parsers promise, not only that they do not
 * crash.
 */
#ifndef RNGFEED_TESTS_FUZZ_H
#define RNGFEED_TESTS_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond)                                                   \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "%s:%d: invariant failed: %s\n",    \
				__FILE__, __LINE__, #cond);                 \
			abort();                                            \
		}                                                           \
	} while (0)

/* ---- a per-process scratch directory for inputs that must be files ---- */

static char fuzz_dir_path[64];

static void fuzz_dir_cleanup(void)
{
	static const char *const names[] = { "input", "rng_current",
					     "rng_available" };
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", fuzz_dir_path, names[i]);
		unlink(path);
	}
	rmdir(fuzz_dir_path);
}

/* The directory, made on first use under $TMPDIR, else /dev/shm (a
 * tmpfs: writing the input every run costs no disk I/O), else /tmp, and
 * removed at exit. */
static __attribute__((unused)) const char *fuzz_dir(void)
{
	const char *tmp;

	if (fuzz_dir_path[0])
		return fuzz_dir_path;
	tmp = getenv("TMPDIR");
	if (!tmp || !*tmp || strlen(tmp) > 32)
		tmp = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(fuzz_dir_path, sizeof(fuzz_dir_path),
		 "%s/rngfeed-fuzz.XXXXXX", tmp);
	FUZZ_ASSERT(mkdtemp(fuzz_dir_path) != NULL);
	atexit(fuzz_dir_cleanup);
	return fuzz_dir_path;
}

/* Write @size bytes to fuzz_dir()/@name (one of the names cleaned up
 * above) and return its path, in a static buffer per name slot. */
static __attribute__((unused)) const char *
fuzz_file(const char *name, const void *data, size_t size)
{
	static char path[3][128];
	static const char *const slots[] = { "input", "rng_current",
					     "rng_available" };
	size_t slot = 0;
	ssize_t n;
	int fd;

	while (slot < 2 && strcmp(slots[slot], name) != 0)
		slot++;
	FUZZ_ASSERT(strcmp(slots[slot], name) == 0);
	snprintf(path[slot], sizeof(path[slot]), "%s/%s", fuzz_dir(), name);
	fd = open(path[slot], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FUZZ_ASSERT(fd >= 0);
	for (const char *p = data; size > 0; p += n, size -= (size_t)n) {
		n = write(fd, p, size);
		FUZZ_ASSERT(n > 0);
	}
	close(fd);
	return path[slot];
}

static __attribute__((unused)) void fuzz_unlink(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", fuzz_dir(), name);
	unlink(path);
}

/* A NUL-terminated heap copy of @size bytes (the fuzzer's data is not a
 * string); free() it. */
static __attribute__((unused)) char *fuzz_strndup(const uint8_t *data,
						  size_t size)
{
	char *s = malloc(size + 1);

	FUZZ_ASSERT(s != NULL);
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* The message buffers the parsers fill are pre-set to this so that an
 * error path that forgets its message shows. */
#define FUZZ_ERR_UNSET "\x01unset"

static __attribute__((unused)) void fuzz_assert_message(const char *err,
							 size_t len)
{
	FUZZ_ASSERT(memchr(err, '\0', len) != NULL);
	FUZZ_ASSERT(err[0] != '\0');
	FUZZ_ASSERT(strcmp(err, FUZZ_ERR_UNSET) != 0);
}

#endif
