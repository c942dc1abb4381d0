// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The configuration file: "key = value" lines for the daemon's settings
 * and "[source NAME]" sections for a source's keys, read with limits
 * (line length, control characters, UTF-8, a regular file only) and with
 * every error naming the file and line.  Each key goes through the same
 * setter as its command-line option: a section's to source_config_set(),
 * the others to the target's set() (config.c passes config_set()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "rngfeed/conffile.h"
#include "rngfeed/util.h"

/* Longest config line, newline excluded. */
#define CONFIG_LINE_MAX 1024

static bool split_key_value(char *line, char **key, char **value)
{
	char *eq = strchr(line, '='), *end;

	if (!eq)
		return false;
	*eq = '\0';
	*key = line;
	*value = eq + 1;
	for (end = eq; end > *key && (end[-1] == ' ' || end[-1] == '\t');)
		*--end = '\0';
	while (**value == ' ' || **value == '\t')
		(*value)++;
	return true;
}

static int load_line(const struct conffile_target *t, char *line,
		     struct source_config **section, char *msg, size_t len)
{
	char *key, *value, *end;
	int r;

	line[strcspn(line, "#")] = '\0';
	while (*line == ' ' || *line == '\t')
		line++;
	/* Trailing blanks (before a comment, too) are not part of a
	 * section header: "[source hwrng]  # note" is fine. */
	for (end = line + strlen(line);
	     end > line && (end[-1] == ' ' || end[-1] == '\t');)
		*--end = '\0';
	if (!*line)
		return 0;
	if (*line == '[') {
		char name[64], close_br;

		if (sscanf(line, "[source %63[a-z0-9_-]%c", name, &close_br) != 2 ||
		    close_br != ']' || line[strlen(line) - 1] != ']' ||
		    line[strcspn(line, "]") + 1] != '\0')
			return set_error(msg, len,
				    "malformed section (expected [source NAME])");
		*section = t->source(t->ctx, name);
		if (!*section)
			return set_error(msg, len, "unknown source '%s'", name);
		return 0;
	}
	if (!split_key_value(line, &key, &value) || !*key)
		return set_error(msg, len, "expected key = value");
	if (!*value)
		return set_error(msg, len, "%s has no value", key);
	if (*section)
		return source_config_set(*section, key, value, msg, len) < 0
			       ? -EINVAL
			       : 0;
	if (strcmp(key, "config") == 0)
		return set_error(msg, len, "config cannot be set in a config file");
	r = t->set(t->ctx, key, value, msg, len);
	if (r == -ENOENT)
		return set_error(msg, len, "unknown key '%s'", key);
	return r;
}

/*
 * Read one line of at most @max bytes (the newline excluded) into @buf
 * (@max + 2 bytes).  Returns its length, -1 at end of file, or -E2BIG for
 * a longer line (the rest of it is not read: a file without newlines
 * cannot make us allocate).
 */
static ssize_t read_line(FILE *f, char *buf, size_t max)
{
	size_t n = 0;
	int c;

	while ((c = getc(f)) != EOF) {
		if (c == '\n') {
			buf[n] = '\0';
			return (ssize_t)n;
		}
		if (n == max)
			return -E2BIG;
		buf[n++] = (char)c;
	}
	buf[n] = '\0';
	return n ? (ssize_t)n : -1;
}

/*
 * Is @s (@len bytes) well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF)?  A config file is text; bytes that
 * are not would end up in paths and messages unseen.
 */
static bool valid_utf8(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		size_t n;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (len - i <= n)
			return false;
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n + 1;
	}
	return true;
}

int conffile_load(const char *path, const struct conffile_target *target,
		  char *err, size_t err_len)
{
	struct source_config *section = NULL;
	char line[CONFIG_LINE_MAX + 2], msg[400];
	unsigned int lineno = 0;
	struct stat st;
	ssize_t n;
	FILE *f;
	int fd, r = 0;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		set_error(err, err_len, "%s: %s", path, strerror(-r));
		return r;
	}
	/* A device or FIFO could feed us forever, or block; /dev/null (1:3)
	 * is the usual way to say "no config file". */
	if (fstat(fd, &st) < 0 ||
	    !(S_ISREG(st.st_mode) ||
	      (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)))) {
		close(fd);
		return set_error(err, err_len, "%s: not a regular file", path);
	}
	f = fdopen(fd, "r");
	if (!f) {
		r = -errno;
		close(fd);
		set_error(err, err_len, "%s: %s", path, strerror(-r));
		return r;
	}
	while ((n = read_line(f, line, CONFIG_LINE_MAX + 1)) != -1) {
		lineno++;
		if (n > 0 && line[n - 1] == '\r')
			line[--n] = '\0';
		if (n == -E2BIG || n > CONFIG_LINE_MAX) {
			r = set_error(err, err_len, "%s:%u: line longer than %d bytes",
				 path, lineno, CONFIG_LINE_MAX);
			break;
		}
		for (ssize_t i = 0; i < n && r == 0; i++)
			if (((unsigned char)line[i] < 0x20 && line[i] != '\t') ||
			    line[i] == 0x7f)
				r = set_error(err, err_len,
					 "%s:%u: %s byte in line", path, lineno,
					 line[i] ? "control" : "NUL");
		if (r < 0)
			break;
		if (!valid_utf8((const unsigned char *)line, (size_t)n)) {
			r = set_error(err, err_len, "%s:%u: not valid UTF-8", path,
				 lineno);
			break;
		}
		/* Where each setting came from, for errors found later
		 * (main.c looks user names up after the whole parse). */
		if (target->where)
			snprintf(target->where, target->where_len, "%s:%u", path,
				 lineno);
		if (load_line(target, line, &section, msg, sizeof(msg)) < 0) {
			r = set_error(err, err_len, "%s:%u: %s", path, lineno, msg);
			break;
		}
	}
	if (r == 0 && ferror(f))
		r = set_error(err, err_len, "%s: read error", path);
	explicit_bzero(line, sizeof(line));
	fclose(f);
	return r;
}

