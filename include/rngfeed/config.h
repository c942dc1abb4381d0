/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Command-line options: what the user asked for, validated. */
#ifndef RNGFEED_CONFIG_H
#define RNGFEED_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "rngfeed/source.h"

#define CONFIG_MAX_SOURCES 16

enum rngfeed_mode {
	MODE_DAEMON,
	MODE_LIST,
	MODE_RAW,
	MODE_CHECK,
	MODE_HELP,
	MODE_VERSION,
};

struct rngfeed_config {
	enum rngfeed_mode mode;
	bool foreground;
	int verbosity;          /* 0 quiet, 1 normal, 2 verbose, 3 debug */
	long long bytes;        /* --bytes; -1 = not given */
	const char *check_path; /* --check FILE; NULL = stdin */
	double min_entropy;     /* --min-entropy; 0 = default */
	bool sources_named;     /* some -n was given: only those run */
	size_t n_sources;       /* one entry per driver, table order */
	struct source_config sources[CONFIG_MAX_SOURCES];
};

/*
 * Parse argv into @cfg (which this initialises).  Returns 0, or -EINVAL
 * with a one-line message in @err naming what was wrong (exit code 2).
 */
int config_parse_args(struct rngfeed_config *cfg, int argc, char **argv,
		      char *err, size_t err_len);

/* The configuration of source @name, or NULL. */
struct source_config *config_source(struct rngfeed_config *cfg,
				    const char *name);

void config_usage(FILE *out);

#endif
