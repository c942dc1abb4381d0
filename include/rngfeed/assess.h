/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rngfeed --assess: SP 800-90B §6.3 non-IID min-entropy estimates of raw
 * samples (estimate.h), printed line for line as NIST's ea_non_iid -v prints
 * them, so a user can set one beside the other; and, given a restart
 * matrix, §3.1.4.3's restart sanity check.
 */
#ifndef RNGFEED_ASSESS_H
#define RNGFEED_ASSESS_H

#include <stdio.h>

/*
 * Reads in_fd to EOF (samples, one per byte, the low `bits` bits), prints
 * every estimate, H_original, H_bitstring and the assessed min-entropy to
 * out.  restart_fd >= 0: also reads a 1000 x 1000 restart matrix (row-major,
 * one restart per row) from it and prints the sanity check against the
 * assessed min-entropy.  name labels the input ("-" for stdin).
 * Returns the exit code: 0 done (and the sanity check passed), 1 the
 * sanity check failed or the data has one symbol only (no entropy), 2 bad
 * input or an I/O error (one line on err).
 */
int assess_run(int in_fd, const char *name, unsigned bits, int restart_fd,
	       FILE *out, FILE *err);

#endif
