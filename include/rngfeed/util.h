/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small parsing and I/O helpers shared by several modules. */
#ifndef RNGFEED_UTIL_H
#define RNGFEED_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Parse a whole decimal integer in [min, max].  Leading/trailing spaces,
 * signs where min >= 0, empty strings and trailing junk are errors.
 * Returns 0, -EINVAL (not a number) or -ERANGE (out of range).
 */
int parse_ll(const char *s, long long min, long long max, long long *out);
/* A plain decimal "12", "0.5", "3." or ".25" (no sign, blank, exponent or
 * hex, as the manual documents seconds): 0, or -EINVAL. */
int parse_decimal(const char *s, double *out);
/* Like parse_ll but accepts k/M/G suffixes (powers of 1000 or, with "i",
 * 1024: 1k = 1000, 1Ki = 1024). */
int parse_size(const char *s, long long max, long long *out);
/* yes/no/true/false/on/off/1/0 → 1 or 0; anything else -EINVAL. */
int parse_bool(const char *s);

/* Write all of @len bytes, retrying on EINTR and short writes; -errno. */
int write_all(int fd, const void *buf, size_t len);
/* Read a small text file into @buf, NUL-terminated, trailing newline
 * stripped; returns the length or -errno (-EILSEQ for a NUL byte in the
 * text).  sysfs attributes: sysfs_read_text() (sysfs_io.h). */
ssize_t read_text_file(const char *path, char *buf, size_t len);
/* The same for the @n bytes read into @buf (at least @n + 1 long). */
ssize_t text_trim(char *buf, size_t n);

/* The first entry of systemd's directory variable @env (RUNTIME_DIRECTORY,
 * STATE_DIRECTORY: a colon-separated list of absolute paths), with "/@name"
 * after it when @name is given; @fallback where the variable is unset,
 * not absolute or too long for @buf.  Returns @buf. */
const char *unit_dir_path(char *buf, size_t len, const char *env,
			  const char *name, const char *fallback);

/* Write a one-line message into @err (printf-style) and return -EINVAL:
 * how parsers say what was wrong. */
int set_error(char *err, size_t err_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Exit status for bad input (options, configuration, a path that is not
 * what it must be): the user has something to fix. */
#define EXIT_USAGE 2

/* Read up to @len bytes of @fd at @at, retrying short reads and EINTR
 * until @len or the end of the file: the bytes read, or -errno. */
ssize_t util_pread_full(int fd, void *buf, size_t len, off_t at);

#endif
