/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The pipeline: sources → monitor → ledger → CTR_DRBG → kernel/stdout. */
#ifndef RNGFEED_DAEMON_H
#define RNGFEED_DAEMON_H

#include "rngfeed/config.h"

/*
 * Run the daemon, --test or --stdout mode until SIGTERM/SIGINT (or the
 * end of --stdout --bytes).  @argc/@argv are kept to re-read the
 * configuration on SIGHUP.  Returns the process exit code.
 */
int daemon_run(struct rngfeed_config *cfg, int argc, char **argv);

#endif
