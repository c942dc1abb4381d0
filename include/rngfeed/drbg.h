/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CTR_DRBG per NIST SP 800-90A Rev. 1, section 10.2.1, with AES-256
 * (security strength 256, seedlen 384 bits, ctr_len 128), with or without
 * the derivation function (10.3.2).  libgcrypt supplies only the AES block
 * cipher; the state (Key, V) and every cipher handle keyed from it live in
 * libgcrypt secure memory (locked in RAM: never swapped; libgcrypt does
 * not keep it out of core dumps, the process's not-dumpable flag does).
 *
 * Errors are negative errno values; each means one thing, for every call:
 *   -EINVAL   NULL handle, NULL buffer with a non-zero length, bad params,
 *             or a nonce given to a no-df DRBG (it has none, 10.2.1.3.1)
 *   -ERANGE   entropy input too short: with df fewer than 32 bytes, or
 *             entropy + nonce fewer than 48 bytes (8.6.7: the nonce or extra
 *             entropy must bring security_strength/2 more); without df not
 *             exactly 48 bytes (shorter)
 *   -E2BIG    an input longer than allowed (with df DRBG_MAX_INPUT_LEN each;
 *             without df entropy longer than 48, personalization or
 *             additional input longer than 48), or a request longer than
 *             DRBG_MAX_REQUEST_LEN
 *   -EISCONN  instantiate on a DRBG that is already instantiated
 *   -ENOTCONN reseed or generate on a DRBG that is not instantiated
 *   -ESTALE   generate needs a reseed first: reseed_interval generate
 *             requests have been served since the last (re)seed (10.2.1.5)
 *   -ENOMEM   out of (secure) memory (16 KiB pool; a DRBG takes ~5.5 KiB)
 *   -ENOLCK   drbg_new(): the secure pool is not locked in RAM (see
 *             drbg_library_init())
 *   -ENOTSUP  libgcrypt too old or AES-256 unavailable
 *   -EIO      libgcrypt failed inside an operation; the state has been
 *             wiped and the DRBG is uninstantiated (catastrophic error)
 *   -EBADMSG  drbg_selftest(): a known answer did not match
 * No call writes to an output buffer when it fails, except on -EIO, where
 * the output buffer is zeroed.
 *
 * Prediction resistance (9.3.1) is obtained by the caller: drbg_reseed()
 * with fresh entropy and the additional input, then drbg_generate() with no
 * additional input.  A struct drbg is not thread-safe; one user at a time.
 * After fork(), never generate from the same state in both processes.
 */
#ifndef RNGFEED_DRBG_H
#define RNGFEED_DRBG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DRBG_SECURITY_STRENGTH 32u /* bytes */
#define DRBG_SEEDLEN 48u           /* bytes: keylen 32 + blocklen 16 */
#define DRBG_MIN_ENTROPY_LEN 32u   /* with df; without df exactly SEEDLEN */
/* Our cap on each of entropy, nonce, personalization, additional input
 * with df (the standard allows 2^35 bits; far more than any caller needs). */
#define DRBG_MAX_INPUT_LEN (1u << 24)
/* Table 3 of 10.2.1: max_number_of_bits_per_request = 2^19 bits. */
#define DRBG_MAX_REQUEST_LEN 65536u
#define DRBG_DEFAULT_RESEED_INTERVAL (UINT64_C(1) << 20) /* requests */
#define DRBG_MAX_RESEED_INTERVAL (UINT64_C(1) << 48)     /* Table 3 */

struct drbg;

struct drbg_params {
	bool use_df;              /* derivation function; default true */
	uint64_t reseed_interval; /* 1..2^48 generate requests; 0 = default */
};

#define DRBG_PARAMS_DEFAULT \
	((struct drbg_params){ .use_df = true, \
			       .reseed_interval = DRBG_DEFAULT_RESEED_INTERVAL })

/* Initialise libgcrypt with 16 KiB of secure memory, once; later calls
 * return the first result.  Call it before dropping privileges (mlock).
 * If the application finished libgcrypt's initialisation itself, this
 * only checks the version.  0, -ENOTSUP, or -ENOLCK: the pool could not
 * be locked in RAM (mlock(2): no CAP_IPC_LOCK, and RLIMIT_MEMLOCK below
 * DRBG_SECMEM_BYTES), and nobody accepted that (below). */
int drbg_library_init(void);

/* The pool's size: what mlock(2) must be allowed to lock. */
#define DRBG_SECMEM_BYTES (16u * 1024u)

/* drbg_library_init(), and with @accept_unlocked a pool that could not
 * be locked is accepted from now on, by every later call too (the DRBG
 * state can then be written to swap).  0 (locked), 1 (not locked,
 * accepted), -ENOLCK (not locked, not accepted), -ENOTSUP. */
int drbg_library_init_memory(bool accept_unlocked);

/* Allocate an uninstantiated DRBG; p NULL means DRBG_PARAMS_DEFAULT.
 * Calls drbg_library_init().  0, -EINVAL, -ENOMEM, -ENOLCK, -ENOTSUP,
 * -EIO. */
int drbg_new(struct drbg **out, const struct drbg_params *p);

/* 10.2.1.3: instantiate from entropy ‖ nonce ‖ personalization (df) or
 * entropy XOR personalization (no df; nonce must be empty).
 * 0, -EINVAL, -ERANGE, -E2BIG, -EISCONN, -ENOMEM, -EIO. */
int drbg_instantiate(struct drbg *d, const uint8_t *entropy,
		     size_t entropy_len, const uint8_t *nonce, size_t nonce_len,
		     const uint8_t *pers, size_t pers_len);

/* 10.2.1.4: reseed; resets the reseed counter.
 * 0, -EINVAL, -ERANGE, -E2BIG, -ENOTCONN, -EIO. */
int drbg_reseed(struct drbg *d, const uint8_t *entropy, size_t entropy_len,
		const uint8_t *additional, size_t additional_len);

/*
 * Reseeding in two halves, so that the costly half can run elsewhere:
 * drbg_df_derive() computes, from the entropy input alone, the seed
 * material of a reseed without additional input (10.2.1.4.2 steps 1-2:
 * Block_Cipher_df over the input, three serial CBC-MAC chains, ~7 us for
 * a 2,500-byte block), and drbg_reseed_derived() is the rest (step 3,
 * one Update).  drbg_reseed_derived(d, S) with S from
 * drbg_df_derive(df, E, n) leaves exactly the state of
 * drbg_reseed(d, E, n, NULL, 0), and fails the same ways; only a DRBG
 * with the derivation function takes it (-EINVAL otherwise).
 *
 * A struct drbg_df belongs to one thread at a time.  Its AES handles hold
 * the df's public key and, between calls, nothing derived from an input
 * (the df wipes them before it returns); they live in ordinary memory, as
 * the entropy input handed to it does, not in the 16 KiB secure pool.
 * The caller wipes @seed after use.
 */
struct drbg_df;

/* 0, -EINVAL, -ENOMEM, -ENOTSUP, -EIO. */
int drbg_df_new(struct drbg_df **out);
/* NULL is ok. */
void drbg_df_free(struct drbg_df *df);
/* 0, -EINVAL, -ERANGE (fewer than DRBG_MIN_ENTROPY_LEN bytes), -E2BIG,
 * -EIO (seed zeroed). */
int drbg_df_derive(struct drbg_df *df, const uint8_t *entropy,
		   size_t entropy_len, uint8_t seed[DRBG_SEEDLEN]);
/* 0, -EINVAL, -ENOTCONN, -EIO (uninstantiated, as drbg_reseed()). */
int drbg_reseed_derived(struct drbg *d, const uint8_t seed[DRBG_SEEDLEN]);

/* 10.2.1.5: write len bytes (0..DRBG_MAX_REQUEST_LEN; out may be NULL when
 * len is 0) and step the state; loop for more.
 * 0, -EINVAL, -E2BIG, -ENOTCONN, -ESTALE, -EIO. */
int drbg_generate(struct drbg *d, uint8_t *out, size_t len,
		  const uint8_t *additional, size_t additional_len);

/* 9.4: wipe the state; the DRBG can be instantiated again.  NULL is ok. */
void drbg_uninstantiate(struct drbg *d);

/* Uninstantiate and release everything.  NULL is ok. */
void drbg_free(struct drbg *d);

/* True if instantiated (false for NULL). */
bool drbg_is_instantiated(const struct drbg *d);

/* 1 if the next generate would fail with -ESTALE, 0 if not;
 * -EINVAL for NULL, -ENOTCONN if not instantiated. */
int drbg_needs_reseed(const struct drbg *d);

/* Generate requests left before a reseed is required; 0 if not
 * instantiated (or exhausted). */
uint64_t drbg_requests_left(const struct drbg *d);

/* Power-on known-answer test (11.3): instantiate, reseed, generate with and
 * without additional input, with and without df, plus the reseed-required
 * and uninstantiated error paths.  0, -EBADMSG, -ENOMEM, -ENOTSUP, -EIO. */
int drbg_selftest(void);

#endif /* RNGFEED_DRBG_H */
