// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The driver table: every source rngfeed knows, in the order --list
 * shows them.  It lives alone in this file so that a test program can
 * link its own table (with fault-injecting drivers) in its place.
 */
#include <stddef.h>

#include "rngfeed/sources.h"

const struct source_driver *const source_drivers[] = {
	&source_hwrng,
	&source_rdseed,
	&source_rdrand,
	&source_rndrrs,
	&source_rndr,
	&source_darn,
	&source_s390_trng,
	&source_tpm,
	&source_virtio,
	&source_file,
	&source_egd,
	&source_serial,
	&source_pkcs11,
	NULL,
};
