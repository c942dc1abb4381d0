/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Binary t-tuple/LRS (estimate_6_3_5_6_bits.c): each position's word (the
 * top `depth` bits of its 64-bit window, its position in the low pmask
 * bits) put in its bucket, the window's top TOP_BITS bits
 * (estimate_6_3_5_6_scatter.c).  Not a public header.
 */
#ifndef RNGFEED_ESTIMATE_6_3_5_6_SCATTER_H
#define RNGFEED_ESTIMATE_6_3_5_6_SCATTER_H

#include <stddef.h>
#include <stdint.h>

#define TOP_BITS 11	/* 2,048 buckets */
#define PREFIX_BITS 4	/* 16 classes of buckets, slabs made of them */

/* Each bucket's windows at positions i < nm of the bits packed in w (two
 * words past the last), the even positions' in c0, the odd ones' in c1
 * (both zeroed by the caller). */
void bits_count_buckets(const uint64_t *w, size_t nm, uint32_t *c0, uint32_t *c1);
/* The words of the positions i < nm at next0[bucket]++ (even positions),
 * next1[bucket]++ (odd ones) in e. */
void bits_scatter_buckets(const uint64_t *w, uint64_t pmask, size_t nm, uint32_t *next0,
			  uint32_t *next1, uint64_t *e);
/* The words of the positions i < nm whose buckets are in classes
 * c0..c1 - 1 at next[bucket]++ in e. */
void bits_scatter_classes(const uint64_t *w, uint64_t pmask, size_t nm, unsigned c0,
			  unsigned c1, uint32_t *next, uint64_t *e);

#endif
