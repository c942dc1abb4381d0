/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The drivers, one per file under src/sources/, listed in source.c. */
#ifndef RNGFEED_SOURCES_H
#define RNGFEED_SOURCES_H

#include "rngfeed/source.h"

extern const struct source_driver source_hwrng;
extern const struct source_driver source_rdseed;
extern const struct source_driver source_rdrand;
extern const struct source_driver source_rndrrs;
extern const struct source_driver source_rndr;
extern const struct source_driver source_darn;
extern const struct source_driver source_s390_trng;
extern const struct source_driver source_tpm;
extern const struct source_driver source_virtio;
extern const struct source_driver source_file;
extern const struct source_driver source_egd;
extern const struct source_driver source_serial;
extern const struct source_driver source_pkcs11;

/*
 * The default credit of the hw_random device @name (NULL: the current
 * one) that @cfg reads through its device path, for the hwrng and virtio
 * drivers alike (one device, one credit): 0 when that path exists and is
 * not the kernel's hw_random device (char 10:183), as the file source;
 * else hwrandom_device_credit() with the driver's default, the tpm
 * source's credit and source_credit_cap(@cfg), from @cfg->hw_quality when
 * the gate set it, or from @sysfs_dir.
 */
unsigned int source_hwrandom_credit(const struct source_config *cfg,
				    const char *sysfs_dir, const char *name);

#endif
