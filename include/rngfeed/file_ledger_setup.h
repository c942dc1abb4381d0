/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Before a daemon's sources open: the file ledger tied to this machine
 * (a ledger copied with an image is adopted, file_ledger_adopt()) and
 * given to the user the readers will run as.  Only when a credited file
 * source is configured, in daemon mode; otherwise it does nothing.
 * Problems are logged (a credited regular file is then not read).
 */
#ifndef RNGFEED_FILE_LEDGER_SETUP_H
#define RNGFEED_FILE_LEDGER_SETUP_H

struct rngfeed_config;

void file_ledger_setup(const struct rngfeed_config *cfg);

#endif
