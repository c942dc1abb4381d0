/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The drivers, one per file under src/sources/, listed in source.c. */
#ifndef RNGFEED_SOURCES_H
#define RNGFEED_SOURCES_H

#include "rngfeed/source.h"

extern const struct source_driver source_hwrng;
extern const struct source_driver source_rdseed;
extern const struct source_driver source_rdrand;
extern const struct source_driver source_tpm;
extern const struct source_driver source_virtio;
extern const struct source_driver source_file;

#endif
