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
	MODE_TEST,   /* -t: the whole pipeline, nothing fed; rates */
	MODE_STDOUT, /* --stdout: conditioned output instead of the kernel */
	MODE_RESTORE_HWRNG, /* --restore-hwrng-quality: after a crash, put
			     * back the rng_quality the hand-over recorded */
	MODE_EGD,    /* --egd-only: serve EGD clients, feed no kernel */
	MODE_ASSESS, /* --assess: SP 800-90B min-entropy estimates of a file */
};

/* make install compiles config.c with the path under its SYSCONFDIR. */
#ifndef CONFIG_DEFAULT_PATH
#define CONFIG_DEFAULT_PATH "/etc/rngfeed.conf"
#endif
#define CONFIG_PATH_LEN 256

struct rngfeed_config {
	enum rngfeed_mode mode;
	bool foreground;
	int verbosity;          /* 0 quiet, 1 normal, 2 verbose, 3 debug */
	long long bytes;        /* --bytes; -1 = not given */
	const char *check_path; /* --check FILE; NULL = stdin */
	double min_entropy;     /* --min-entropy; 0 = default */
	const char *assess_path;  /* --assess FILE; NULL = stdin */
	const char *restart_path; /* --restart FILE: 1000x1000 restart matrix */
	long long assess_bits;    /* --bits: bits per sample; 0 = not given (8) */
	bool sources_named;     /* some -n was given: only those run */
	double bench_fill;      /* --bench-fill S: fill phase for S seconds
				 * whatever the CRNG state; 0 = off */

	/* Daemon settings: long options and config-file keys alike. */
	char config_path[CONFIG_PATH_LEN];  /* -c; default CONFIG_DEFAULT_PATH */
	char random_device[CONFIG_PATH_LEN]; /* -o; the kernel's device */
	char metrics_path[CONFIG_PATH_LEN]; /* --metrics; "" = none */
	char pid_file[CONFIG_PATH_LEN];     /* -p; "" = none */
	/* --state-dir: the file ledger's directory; default
	 * $STATE_DIRECTORY (systemd's StateDirectory=) or /var/lib/rngfeed */
	char state_dir[CONFIG_PATH_LEN];
	char user[64];                      /* -D USER[:GROUP]; "" = stay */
	long long random_step;      /* -s: bytes per RNDADDENTROPY */
	long long fill_watermark;   /* -W: bits, kernels before 5.18 */
	long long interval;         /* seconds between top-ups once ready */
	long long max_failures;     /* K failed blocks in a row disable */
	double retry_delay;         /* first back-off, seconds */
	double retry_max;           /* back-off cap, seconds */
	long long reseed_bytes;     /* --stdout: reseed at least this often */
	double reseed_seconds;      /* --stdout: ...and at least this often */
	double stats_interval;      /* -t: seconds between rate lines */
	bool wait_for_source;       /* no usable source at start: keep trying */
	bool dumpable;              /* allow core dumps and same-user ptrace */
	bool allow_unlocked_memory; /* DRBG state in swappable memory if
				     * it cannot be locked */
	double ready_timeout;       /* READY=1 at the latest this long after
				     * start, credited or not */
	/* --egd-server (issue 17): "" = no server */
	char egd_server[CONFIG_PATH_LEN];   /* unix:PATH or tcp:[HOST:]PORT */
	long long egd_socket_mode;  /* unix socket permissions, never o+w */
	char egd_owner[64];         /* USER[:GROUP] of the unix socket */
	long long egd_max_clients;
	long long egd_clients_per_peer; /* from one process or address */
	long long egd_rate;         /* bytes/s per client; 0 = no limit */
	long long egd_budget;       /* bytes/s for all clients; 0 = none */
	double egd_idle_timeout;    /* s a silent client keeps its slot;
				     * 0 = for ever */
	double assess_budget;       /* full assessments: % of one core */
	long long assess_samples;   /* ...on each source's last N samples */
	int confidential_guest;     /* -1 auto (detect), 1 yes, 0 no:
				     * confidential.h */
	/* Where user and egd-owner were set, for main.c's check of the
	 * names: "FILE:LINE", or "" for the command line. */
	char user_from[CONFIG_PATH_LEN + 16];
	char egd_owner_from[CONFIG_PATH_LEN + 16];
	size_t n_sources;       /* one entry per driver, table order */
	struct source_config sources[CONFIG_MAX_SOURCES];
};

/*
 * Parse argv into @cfg (which this initialises), after the config file
 * (-c FILE, or CONFIG_DEFAULT_PATH when it exists).  Returns 0 (and an
 * empty @err), or -EINVAL / -ELOOP (a source path that is the kernel's own
 * output) with a one-line message in @err naming what was wrong; the
 * caller exits with status 2.
 */
int config_parse_args(struct rngfeed_config *cfg, int argc, char **argv,
		      char *err, size_t err_len);

/*
 * Set a daemon setting by its long-option / config-file name (e.g.
 * "interval", "random-step").  Returns 0, -ENOENT for an unknown key, or
 * -EINVAL with a message in @err.
 */
int config_set(struct rngfeed_config *cfg, const char *key,
	       const char *value, char *err, size_t err_len);

/*
 * Read a config file: "key = value" lines for the settings above, and
 * "[source NAME]" sections holding that source's keys (as for -O).
 * '#' starts a comment.  A missing file is -ENOENT (the caller decides
 * whether that matters); every other error names the file and line.
 */
int config_load_file(struct rngfeed_config *cfg, const char *path,
		     char *err, size_t err_len);

/* The configuration of source @name, or NULL. */
struct source_config *config_source(struct rngfeed_config *cfg,
				    const char *name);

void config_usage(FILE *out);

#endif
