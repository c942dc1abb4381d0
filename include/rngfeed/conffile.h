/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The configuration file's reader: lines read with limits (length,
 * control characters, UTF-8, a regular file only), comments, "key =
 * value" and "[source NAME]" sections, every error naming the file and
 * line.  It knows no setting: each key goes to the target its caller
 * passes (config.c's config_load_file() passes config_set() and
 * config_source()), so calls run one way, config.c to conffile.c.
 */
#ifndef RNGFEED_CONFFILE_H
#define RNGFEED_CONFFILE_H

#include <stddef.h>

#include "rngfeed/source.h"

struct conffile_target {
	void *ctx;
	/* The configuration of source @name, or NULL (unknown source):
	 * a section's keys go to source_config_set() on it. */
	struct source_config *(*source)(void *ctx, const char *name);
	/* A daemon setting outside any section: 0, -ENOENT for an unknown
	 * key, or -EINVAL with a message in @err. */
	int (*set)(void *ctx, const char *key, const char *value, char *err,
		   size_t err_len);
	/* If not NULL: "FILE:LINE" of the line being read, written before
	 * each line is handed over (for the setters to keep). */
	char *where;
	size_t where_len;
};

/*
 * Read the file at @path into @target.  Returns 0, -ENOENT for a missing
 * file (the caller decides whether that matters), or another -errno /
 * -EINVAL with a one-line message in @err naming the file (and line).
 */
int conffile_load(const char *path, const struct conffile_target *target,
		  char *err, size_t err_len);

#endif
