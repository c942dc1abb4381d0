/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The conditioner: the CTR_DRBG, the credit ledger that says how much of
 * what went into it may be credited, and the tested block being absorbed.
 *
 * Tested raw blocks come in one at a time (conditioner_hold()); each is
 * absorbed whole or in parts (conditioner_absorb()), and every absorbed
 * piece is a DRBG (re)seed whose credit goes into the ledger.  Output
 * leaves through conditioner_generate() (never credited) or
 * conditioner_credited() (credited with what the ledger allows, spent).
 * A failed DRBG operation or conditioner_discard() (a VM clone) drops the
 * state, the held block and every credit backed by them.
 *
 * Single-threaded by design: only the daemon's main loop calls it.  No
 * globals; the one message it logs is a DRBG failure (an error a user must
 * see whatever the caller does next).
 */
#ifndef RNGFEED_CONDITIONER_H
#define RNGFEED_CONDITIONER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rngfeed/monitor.h"

struct conditioner;

/*
 * What the conditioner needs from outside, so tests can replace it:
 * fresh kernel bytes mixed into every generate as additional input (never
 * credited; two clones of one VM diverge as soon as their kernels do) and
 * a monotonic clock.  NULL members use the real ones.
 */
struct conditioner_env {
	ssize_t (*additional)(uint8_t *buf, size_t len);
	double (*now)(void);
};

struct conditioner_stats {
	uint64_t reseeds;          /* (re)seeds, instantiation included */
	uint64_t discards;         /* states thrown away (clone, request) */
	uint64_t failures;         /* DRBG operations that failed */
	uint64_t generated;        /* bytes of output, all kinds */
	uint64_t requests;         /* DRBG generate requests served */
	uint64_t since_reseed;     /* bytes of output since the last reseed */
	double last_reseed;        /* monotonic seconds; 0 = never */
	uint64_t credited_bits;    /* spent by conditioner_credited() */
};

/* 0 or -errno (-ENOMEM, or the DRBG's secure memory). */
int conditioner_new(struct conditioner **out,
		    const struct conditioner_env *env);
/* Wipes everything; NULL is ok. */
void conditioner_free(struct conditioner *c);

/* Is a tested block held, with parts not absorbed yet? */
bool conditioner_holding(const struct conditioner *c);
/*
 * Hold the tested block @block of source @idx, credited @credit bits per
 * 1024; @block is copied (the caller wipes its copy).  Only when nothing
 * is held.  The number of parts follows ledger_block_parts().
 */
void conditioner_hold(struct conditioner *c, unsigned int idx,
		      unsigned int credit,
		      const uint8_t block[MONITOR_BLOCK_BYTES]);
/*
 * conditioner_hold() with the block's seed material, drbg_df_derive()d by
 * its reader (@seed copied; NULL: none).  When the block is absorbed
 * whole into an instantiated DRBG, the reseed is drbg_reseed_derived():
 * the same state, the same credit in the ledger, without the df on this
 * thread.  Anything else (parts, the first instantiation, which mixes in
 * a nonce and personalization) derives from the block as before.
 */
void conditioner_hold_derived(struct conditioner *c, unsigned int idx,
			      unsigned int credit,
			      const uint8_t block[MONITOR_BLOCK_BYTES],
			      const uint8_t *seed);
/*
 * Absorb what is held: the next part (@in_parts, while the kernel wants
 * credited data: one reseed per part, so that each credited output is
 * backed by its own reseed), or all that is left.  The first piece after
 * a discard instantiates the DRBG.  1 absorbed, 0 nothing held, -errno
 * when the DRBG failed (the state was dropped).
 */
int conditioner_absorb(struct conditioner *c, bool in_parts);

bool conditioner_seeded(const struct conditioner *c);
/* Whole bits that may be credited now (ledger_available()). */
unsigned int conditioner_available(const struct conditioner *c);
/* 1/1024 bits deposited by source @idx since start. */
uint64_t conditioner_deposited(const struct conditioner *c, unsigned int idx);

/* @len bytes of output, credited to no one, as one DRBG request (at most
 * DRBG_MAX_REQUEST_LEN) with fresh kernel additional input.  0, -ENOKEY
 * when not seeded, or -errno from the DRBG (the state was dropped). */
int conditioner_generate(struct conditioner *c, uint8_t *out, size_t len);
/*
 * Bulk output (--stdout): @len bytes of any length, credited to no one,
 * as consecutive SP 800-90A requests of DRBG_MAX_REQUEST_LEN bytes (the
 * last shorter), each with its own Update of the state (backtracking
 * resistance per request, as before).  Only the first takes fresh kernel
 * additional input: one getrandom() per batch, not per 64 KiB (it was a
 * tenth of --stdout's time).  0, -ENOKEY, or -errno as above, with all
 * of @out wiped.
 */
int conditioner_generate_batch(struct conditioner *c, uint8_t *out,
			       size_t len);
/*
 * @len bytes of output and the bits the ledger allows for them, spent
 * (*@credit, at most 8 * @len).  0 with a credit, -EAGAIN when the ledger
 * allows nothing yet (no output), -errno as for conditioner_generate().
 */
int conditioner_credited(struct conditioner *c, uint8_t *out, size_t len,
			 unsigned int *credit);
/*
 * Spend for @len bytes already generated (a burst cut into steps): the
 * output came after every reseed the ledger counts.  The bits to credit.
 */
unsigned int conditioner_spend(struct conditioner *c, size_t len);

/* Forget the DRBG state, the held block and the ledger's balance. */
void conditioner_discard(struct conditioner *c);

void conditioner_get_stats(const struct conditioner *c,
			   struct conditioner_stats *out);

#endif
