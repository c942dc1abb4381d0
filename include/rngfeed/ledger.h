/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The credit ledger: how much entropy the conditioner holds that has not
 * been credited to anyone yet.
 *
 * Rules (the README's "How credit is accounted" states them too):
 *  - a tested raw block of n bits from a source with credit c (bits per
 *    1024) deposits n * c / 1024 bits, once, when it is absorbed by the
 *    DRBG (reseed);
 *  - the DRBG state is 384 bits with 256-bit security strength, so it can
 *    never hold more than LEDGER_CAP_BITS of entropy, however much went in:
 *    the balance is capped there;
 *  - output may be credited only if a reseed since the last credited output
 *    brought at least LEDGER_MIN_RESEED_BITS; crediting spends the whole
 *    epoch: what follows comes from the same state, so the rest of the
 *    balance is forfeited, not credited later (nothing is credited twice);
 *  - discarding the DRBG state (VM clone, explicit request) empties it.
 * Amounts are kept in 1/1024 bit so small credits (rdrand: 2) add up
 * exactly.  Per-source totals are kept for status and metrics.
 */
#ifndef RNGFEED_LEDGER_H
#define RNGFEED_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#define LEDGER_CAP_BITS 256u
#define LEDGER_MIN_RESEED_BITS 256u
#define LEDGER_MAX_SOURCES 16u
/* A split block's parts each carry at least this much credit: twice what
 * a credited output needs, so each credit is backed twice over. */
#define LEDGER_PART_BITS (2u * LEDGER_MIN_RESEED_BITS)

struct ledger {
	uint64_t balance;          /* 1/1024 bit, <= LEDGER_CAP_BITS * 1024 */
	uint64_t deposited[LEDGER_MAX_SOURCES]; /* 1/1024 bit, all time */
	uint64_t credited_bits;    /* total credited to the kernel */
	uint64_t forfeited;        /* 1/1024 bit lost to the cap or epochs */
};

void ledger_init(struct ledger *l);

/* A tested block of @bits raw bits from source @idx with @credit bits per
 * 1024 was absorbed by the DRBG.  Returns the bits it added (whole bits,
 * rounded down), or -EINVAL. */
int ledger_deposit(struct ledger *l, unsigned int idx, uint64_t bits,
		   unsigned int credit);

/* Whole bits that may be credited now: 0 below LEDGER_MIN_RESEED_BITS. */
unsigned int ledger_available(const struct ledger *l);

/*
 * Credit output of @out_bytes bytes: returns the bits to credit, at most
 * 8 * @out_bytes and the balance, and closes the epoch (the balance goes
 * to zero).  0 when ledger_available() is 0.
 */
unsigned int ledger_spend(struct ledger *l, size_t out_bytes);

/* The DRBG state was discarded: nothing it held may be credited. */
void ledger_discard(struct ledger *l);

/*
 * Into how many reseeds a tested block of @bytes from a source with
 * @credit (bits per 1024) may be split so that every part, cut at
 * k * @bytes / n, carries at least LEDGER_PART_BITS: a block credited in
 * full carries 20,000 bits, a reseed can back only LEDGER_CAP_BITS of
 * credit.  1 when the block carries too little to split.
 */
unsigned int ledger_block_parts(size_t bytes, unsigned int credit);

#endif
