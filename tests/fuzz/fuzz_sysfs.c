// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fuzz the hw_random sysfs readers (hwrandom_current, hwrandom_find,
 * hwrandom_select) over a fixture directory holding the input, and the
 * text helpers read_text_file, parse_ll, parse_size and parse_bool.
 *
 * Input: a flags byte (bit 0: no rng_current, bit 1: no rng_available,
 * bits 2..4: the parse_ll/parse_size limits), the buffer size for names,
 * where to split the rest, the prefix length (0..15); then the prefix and
 * the rest, split into rng_current | rng_available.  The text of
 * rng_current is also the string given to the parse_* functions.
 *
 * Invariants: each function's documented result, checked against a
 * straightforward model of it: names are their returned length, inside
 * their buffer, never "none" or empty; hwrandom_find returns the first
 * whitespace-separated token with the prefix, or -ENAMETOOLONG/-ENODEV;
 * a selected name reads back; read_text_file returns a prefix of the file
 * without trailing newlines and spaces; parse_ll/parse_size accept exactly
 * the whole decimal numbers (with suffixes) in range and never return a
 * value outside [min, max]; parse_bool knows its eight words.
 */
#include <ctype.h>
#include <stdbool.h>
#include <strings.h>

#include "fuzz.h"
#include "rngfeed/hwrandom.h"
#include "rngfeed/util.h"

/* ---- models of the number parsers ------------------------------------- */

/* Whole optionally signed decimal, exactly; -EINVAL or -ERANGE. */
static int model_ll(const char *s, long long min, long long max,
		    long long *out)
{
	const char *p = s;
	bool neg = false, huge = false;
	unsigned long long mag = 0; /* no __int128 on 32-bit targets */
	long long v;

	if (*p == '+' || *p == '-') {
		if (min >= 0)
			return -EINVAL;
		neg = *p++ == '-';
	}
	if (!*p)
		return -EINVAL;
	for (const char *q = p; *q; q++)
		if (*q < '0' || *q > '9')
			return -EINVAL;
	for (; *p && !huge; p++) /* past 2^64: out of range whatever follows */
		huge = __builtin_mul_overflow(mag, 10ULL, &mag) ||
		       __builtin_add_overflow(mag, (unsigned long long)(*p - '0'), &mag);
	if (huge || mag > (unsigned long long)LLONG_MAX + (neg ? 1 : 0))
		return -ERANGE;
	if (neg)
		v = mag == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)mag;
	else
		v = (long long)mag;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static int model_size(const char *s, long long max, long long *out)
{
	static const struct {
		const char *suffix;
		long long mult;
	} units[] = {
		{ "Ki", 1LL << 10 }, { "Mi", 1LL << 20 }, { "Gi", 1LL << 30 },
		{ "k", 1000LL },     { "K", 1000LL },     { "M", 1000000LL },
		{ "G", 1000000000LL },
	};
	char num[32];
	size_t len = strlen(s);
	long long v, mult = 1;
	int r;

	if (len == 0 || len >= sizeof(num))
		return -EINVAL; /* the parser's own limit */
	memcpy(num, s, len + 1);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t sl = strlen(units[i].suffix);

		if (len > sl && strcmp(num + len - sl, units[i].suffix) == 0) {
			num[len - sl] = '\0';
			mult = units[i].mult;
			break;
		}
	}
	r = model_ll(num, 0, LLONG_MAX, &v);
	if (r < 0)
		return r;
	if (__builtin_mul_overflow(v, mult, &v) || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static void check_parsers(const char *s, unsigned int sel)
{
	static const long long lim[8][2] = {
		{ 0, 1024 },	     { 1, 1000000 },
		{ 0, LLONG_MAX },    { LLONG_MIN, LLONG_MAX },
		{ -5, 5 },	     { 1, 86400 },
		{ 0, 0 },	     { 4096, 1LL << 30 },
	};
	static const long long size_max[8] = {
		4096, 1LL << 30, 1LL << 62, LLONG_MAX, 0, 1000, 1023, 1024,
	};
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	long long min = lim[sel][0], max = lim[sel][1], v = 0x5A5A, w = 0x5A5A;
	int r, m, b, want_b = -EINVAL;

	r = parse_ll(s, min, max, &v);
	m = model_ll(s, min, max, &w);
	FUZZ_ASSERT(r == m);
	if (r == 0)
		FUZZ_ASSERT(v == w && v >= min && v <= max);
	else
		FUZZ_ASSERT(v == 0x5A5A); /* untouched on error */

	max = size_max[sel];
	v = w = 0x5A5A;
	r = parse_size(s, max, &v);
	m = model_size(s, max, &w);
	FUZZ_ASSERT(r == m);
	if (r == 0)
		FUZZ_ASSERT(v == w && v >= 0 && v <= max);
	else
		FUZZ_ASSERT(v == 0x5A5A);

	b = parse_bool(s);
	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0)
			want_b = 1;
		if (strcasecmp(s, no[i]) == 0)
			want_b = 0;
	}
	FUZZ_ASSERT(b == want_b);
}

/* ---- files ------------------------------------------------------------ */

static void check_read_text(const char *path, const uint8_t *content,
			    size_t size, size_t len)
{
	char *buf = malloc(len ? len : 1);
	ssize_t n;
	size_t got;

	FUZZ_ASSERT(buf != NULL);
	n = read_text_file(path, buf, len);
	if (len == 0) {
		FUZZ_ASSERT(n == -EINVAL);
		goto out;
	}
	got = size < len - 1 ? size : len - 1; /* what one read() gets */
	if (memchr(content, '\0', got)) {
		FUZZ_ASSERT(n == -EILSEQ); /* not text */
		goto out;
	}
	FUZZ_ASSERT(n >= 0);
	FUZZ_ASSERT((size_t)n <= got);
	FUZZ_ASSERT(buf[n] == '\0');
	FUZZ_ASSERT(memcmp(buf, content, (size_t)n) == 0);
	FUZZ_ASSERT(n == 0 || (buf[n - 1] != '\n' && buf[n - 1] != ' '));
	for (size_t i = (size_t)n; i < got; i++)
		FUZZ_ASSERT(content[i] == '\n' || content[i] == ' ');
out:
	free(buf);
}

static void check_current(const char *dir, bool present,
			  const uint8_t *content, size_t size, size_t len)
{
	char *name = malloc(len ? len : 1);
	int r;

	FUZZ_ASSERT(name != NULL);
	r = hwrandom_current(dir, name, len);
	if (len == 0) {
		FUZZ_ASSERT(r == -EINVAL); /* before looking at the file */
	} else if (!present) {
		FUZZ_ASSERT(r == -ENOENT);
	} else if (memchr(content, '\0', size < len - 1 ? size : len - 1)) {
		FUZZ_ASSERT(r == -EILSEQ);
	} else if (r == -ENODEV) {
		FUZZ_ASSERT(name[0] == '\0' || strcmp(name, "none") == 0);
	} else {
		FUZZ_ASSERT(r > 0 && (size_t)r < len);
		/* "Returns its length": the name is that long. */
		FUZZ_ASSERT(strlen(name) == (size_t)r);
		FUZZ_ASSERT(strcmp(name, "none") != 0);
	}
	free(name);
}

/* The first token of @list (as read_text_file gives it) with @prefix. */
static int model_find(const uint8_t *content, size_t size,
		      const char *prefix, size_t len, char *want)
{
	char list[1024], *save = NULL;
	size_t n = size < sizeof(list) - 1 ? size : sizeof(list) - 1;

	if (memchr(content, '\0', n))
		return -EILSEQ;
	memcpy(list, content, n);
	list[n] = '\0';
	for (char *t = strtok_r(list, " \t\n", &save); t;
	     t = strtok_r(NULL, " \t\n", &save)) {
		if (strncmp(t, prefix, strlen(prefix)) != 0)
			continue;
		if (strlen(t) >= len)
			return -ENAMETOOLONG;
		strcpy(want, t);
		return (int)strlen(t);
	}
	return -ENODEV;
}

static void check_find(const char *dir, bool present, bool can_select,
		       const char *prefix, const uint8_t *content, size_t size,
		       size_t len)
{
	char *name = malloc(len ? len : 1), want[1024], back[HWRANDOM_NAME_LEN];
	int r, m;

	FUZZ_ASSERT(name != NULL);
	r = hwrandom_find(dir, prefix, name, len);
	if (!present) {
		FUZZ_ASSERT(r == -ENOENT);
		goto out;
	}
	m = model_find(content, size, prefix, len, want);
	FUZZ_ASSERT(r == m);
	if (r < 0)
		goto out;
	FUZZ_ASSERT((size_t)r < len && strlen(name) == (size_t)r);
	FUZZ_ASSERT(strcmp(name, want) == 0);
	FUZZ_ASSERT(strncmp(name, prefix, strlen(prefix)) == 0);

	/* Selecting it writes rng_current; it then reads back. */
	if (can_select && (size_t)r < sizeof(back)) {
		FUZZ_ASSERT(hwrandom_select(dir, name) == 0);
		r = hwrandom_current(dir, back, sizeof(back));
		if (strcmp(name, "none") == 0)
			FUZZ_ASSERT(r == -ENODEV);
		else
			FUZZ_ASSERT(r == (int)strlen(name) &&
				    strcmp(back, name) == 0);
	}
out:
	free(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int flags, split, plen;
	size_t len, cur_len;
	const uint8_t *cur, *avail;
	char *prefix, *text;
	const char *dir, *cur_path;

	if (size < 4)
		return 0;
	flags = data[0];
	len = data[1] & 0x7F;
	split = data[2];
	plen = data[3] & 0x0F;
	data += 4;
	size -= 4;
	if (plen > size)
		plen = (unsigned int)size;
	prefix = fuzz_strndup(data, plen);
	data += plen;
	size -= plen;
	cur_len = size * split / 255;
	cur = data;
	avail = data + cur_len;

	dir = fuzz_dir();
	cur_path = fuzz_file("rng_current", cur, cur_len);
	fuzz_file("rng_available", avail, size - cur_len);

	text = fuzz_strndup(cur, cur_len);
	check_parsers(text, (flags >> 2) & 7);
	free(text);
	check_read_text(cur_path, cur, cur_len, len);

	if (flags & 1)
		fuzz_unlink("rng_current");
	if (flags & 2)
		fuzz_unlink("rng_available");
	check_current(dir, !(flags & 1), cur, cur_len, len);
	check_find(dir, !(flags & 2), !(flags & 1), prefix, avail,
		   size - cur_len, len);
	free(prefix);
	return 0;
}
