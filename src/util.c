// SPDX-License-Identifier: GPL-2.0-or-later
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "rngfeed/util.h"

int parse_ll(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -EINVAL;
	if (min >= 0 && (*s == '-' || *s == '+'))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_decimal(const char *s, double *out)
{
	size_t whole, frac = 0;
	double v;

	if (!s)
		return -EINVAL;
	whole = strspn(s, "0123456789");
	if (s[whole] == '.')
		frac = strspn(s + whole + 1, "0123456789");
	/* Digits on one side of the point at least, nothing after them. */
	if (whole + frac == 0 ||
	    s[whole + (s[whole] == '.' ? 1 + frac : 0)] != '\0')
		return -EINVAL;
	errno = 0;
	v = strtod(s, NULL);
	if (errno || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_size(const char *s, long long max, long long *out)
{
	static const struct {
		const char *suffix;
		long long mult;
	} units[] = {
		{ "Ki", 1LL << 10 }, { "Mi", 1LL << 20 }, { "Gi", 1LL << 30 },
		{ "k", 1000LL }, { "K", 1000LL }, { "M", 1000000LL },
		{ "G", 1000000000LL },
	};
	char num[32];
	size_t len;
	long long v, mult = 1;
	int r;

	if (!s)
		return -EINVAL;
	len = strlen(s);
	if (len == 0 || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, len + 1);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t sl = strlen(units[i].suffix);

		if (len > sl && strcmp(num + len - sl, units[i].suffix) == 0) {
			num[len - sl] = '\0';
			mult = units[i].mult;
			break;
		}
	}
	r = parse_ll(num, 0, max, &v);
	if (r < 0)
		return r;
	if (v > max / mult)
		return -ERANGE;
	*out = v * mult;
	return 0;
}

int parse_bool(const char *s)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0)
			return 1;
		if (strcasecmp(s, no[i]) == 0)
			return 0;
	}
	return -EINVAL;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

ssize_t text_trim(char *buf, size_t n)
{
	buf[n] = '\0';
	/* Text has no NUL bytes; one would make the string shorter than
	 * the length returned (an empty name of length 5, say). */
	if (memchr(buf, '\0', n))
		return -EILSEQ;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return (ssize_t)n;
}

ssize_t read_text_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd, r;

	if (len == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do
		n = read(fd, buf, len - 1);
	while (n < 0 && errno == EINTR);
	r = -errno;
	close(fd);
	if (n < 0)
		return r;
	return text_trim(buf, (size_t)n);
}

const char *unit_dir_path(char *buf, size_t len, const char *env,
			  const char *name, const char *fallback)
{
	const char *dir = getenv(env);
	size_t n = dir ? strcspn(dir, ":") : 0;

	if (n == 0 || dir[0] != '/' ||
	    (size_t)snprintf(buf, len, "%.*s%s%s", (int)n, dir, name ? "/" : "",
			     name ? name : "") >= len)
		snprintf(buf, len, "%s", fallback);
	return buf;
}

int set_error(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

ssize_t util_pread_full(int fd, void *buf, size_t len, off_t at)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got,
				  at + (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}
