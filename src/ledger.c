// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <string.h>

#include "rngfeed/ledger.h"

#define UNIT 1024u /* ledger amounts are in 1/1024 bit */

void ledger_init(struct ledger *l)
{
	memset(l, 0, sizeof(*l));
}

int ledger_deposit(struct ledger *l, unsigned int idx, uint64_t bits,
		   unsigned int credit)
{
	const uint64_t cap = (uint64_t)LEDGER_CAP_BITS * UNIT;
	uint64_t add, before;

	/* bits <= 2^40 keeps bits * credit far from overflow. */
	if (idx >= LEDGER_MAX_SOURCES || credit > 1024 || bits > (1ULL << 40))
		return -EINVAL;
	add = bits * credit; /* (bits * credit / 1024) bits, in 1/1024 */
	l->deposited[idx] += add;
	before = l->balance;
	l->balance = before + add > cap ? cap : before + add;
	l->forfeited += before + add - l->balance;
	return (int)((l->balance - before) / UNIT);
}

unsigned int ledger_available(const struct ledger *l)
{
	unsigned int bits = (unsigned int)(l->balance / UNIT);

	return bits >= LEDGER_MIN_RESEED_BITS ? bits : 0;
}

unsigned int ledger_spend(struct ledger *l, size_t out_bytes)
{
	unsigned int avail = ledger_available(l);
	unsigned int credit;

	if (avail == 0 || out_bytes == 0)
		return 0;
	credit = out_bytes < avail / 8 ? (unsigned int)out_bytes * 8 : avail;
	l->credited_bits += credit;
	l->forfeited += l->balance - (uint64_t)credit * UNIT;
	l->balance = 0;
	return credit;
}

void ledger_discard(struct ledger *l)
{
	l->forfeited += l->balance;
	l->balance = 0;
}

unsigned int ledger_block_parts(size_t bytes, unsigned int credit)
{
	/* The fewest whole bytes that carry LEDGER_PART_BITS at @credit; no
	 * part cut at k * bytes / n is shorter than bytes / n >= that. */
	size_t min_part, n;

	if (credit == 0 || credit > 1024)
		return 1;
	min_part = ((size_t)LEDGER_PART_BITS * 1024 / 8 + credit - 1) / credit;
	n = bytes / min_part;
	return n < 1 ? 1 : (n > 4096 ? 4096 : (unsigned int)n);
}
