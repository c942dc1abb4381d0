/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's insides, shared by daemon.c (the set-up steps, their
 * tear-down and daemon_run()) and daemon_loop.c (the main loop, what it
 * dispatches, and the end of a run).  Not a public header.
 */
#ifndef RNGFEED_DAEMON_INTERNAL_H
#define RNGFEED_DAEMON_INTERNAL_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "rngfeed/confidential.h"
#include "rngfeed/daemon.h"
#include "rngfeed/egd_server.h"
#include "rngfeed/output.h"
#include "rngfeed/pidfile.h"
#include "rngfeed/report.h"
#include "rngfeed/service.h"
#include "rngfeed/sourceset.h"

struct daemon {
	struct rngfeed_config *cfg;
	int argc;
	char **argv;

	struct kernel_linux kernel;
	struct kernel_ops kops;
	struct feeder_params feeder_params;
	struct pidfile pidfile;        /* -p */
	int verdict_fd;                /* detached: to the waiting parent */
	struct conditioner *cond;
	struct source_set *set;
	int sigfd, evfd, genfd;
	const struct output_ops *ops;
	struct output out;
	struct report report;
	struct service service;
	struct egd_server *egd;        /* --egd-server; NULL = none */
	struct confidential_result found; /* what detection saw at start */
	struct pollfd *pfd;            /* with egd: 4 + its fds; else NULL */

	double start;
	uint8_t block[MONITOR_BLOCK_BYTES]; /* a block on its way in */
	unsigned int held_from;             /* the slot of the held block */
	bool stop;
	int exit_code;
};

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The main loop, until a stop (SIGTERM, an output that ended, a fatal
 * poll error): d->exit_code says how it ended. */
void daemon_loop(struct daemon *d);
/* The end of a run that started: its summary, with the sources still up. */
void daemon_finish(struct daemon *d);

#endif
