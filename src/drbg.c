// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CTR_DRBG, NIST SP 800-90A Rev. 1 section 10.2.1, AES-256, over libgcrypt.
 *
 * Section numbers in comments are those of SP 800-90A Rev. 1.  AES is used
 * through libgcrypt handles in three modes, each chosen so that one library
 * call does the work of a whole loop of the standard:
 *   - CTR keyed with Key: Update's keystream and Generate's output are both
 *     "V = V + 1; block = Encrypt(Key, V)" repeated, i.e. CTR mode with the
 *     counter V + 1 (libgcrypt's 128-bit big-endian increment equals the
 *     standard's with ctr_len = blocklen = 128);
 *   - CBC keyed with 00 01 .. 1F: BCC (10.3.3) is a CBC-MAC;
 *   - CBC keyed with the df's K: step 13 of 10.3.2 is CBC over zero blocks.
 * Handles, Key and V are all in libgcrypt secure memory.
 */
#include "rngfeed/drbg.h"

#include <errno.h>
#include <gcrypt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define KEYLEN 32u
#define BLOCKLEN 16u
#define SEEDLEN DRBG_SEEDLEN
#define MIN_GCRYPT_VERSION "1.8.0"
/* The DRBG (three AES handles) and the power-on self-test's, which runs
 * beside it, use about 10 KiB at most; the pool is locked and dirty for
 * the daemon's whole life, so no more than that plus room (was 64 KiB:
 * 48 KiB of it never touched but locked). */
#define SECMEM_SIZE DRBG_SECMEM_BYTES

struct drbg {
	gcry_cipher_hd_t ctr; /* CTR, keyed with key; NULL when uninstantiated */
	gcry_cipher_hd_t bcc; /* CBC, keyed with the fixed df key (10.3.2 step 8) */
	gcry_cipher_hd_t dfk; /* CBC, keyed with the df's derived K, then zeros */
	uint8_t key[KEYLEN];
	uint8_t v[BLOCKLEN];
	uint64_t reseed_counter; /* 10.2.1.3: 1 after (re)seed */
	uint64_t reseed_interval;
	bool use_df;
	bool instantiated;
};

/* A piece of an input string: the df hashes a concatenation it never
 * builds, so long entropy inputs are not copied. */
struct seg {
	const uint8_t *p;
	size_t len;
};

/* ------------------------------------------------------------------------
 * libgcrypt initialisation
 */
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static int lib_status;              /* 0 or -ENOTSUP */
static bool lib_unlocked;           /* the secure pool is not in locked RAM */
/* Once set, for good: the caller accepted a pool that is not locked.
 * libgcrypt's set-up is one per process, so this is too. */
static atomic_bool unlocked_accepted;

static void lib_init_once(void)
{
	if (!gcry_check_version(MIN_GCRYPT_VERSION)) {
		lib_status = -ENOTSUP;
		return;
	}
	/* The application may have set libgcrypt up itself: leave it so. */
	if (gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P))
		goto check_aes;
	/* What failed is the caller's to say (-ENOLCK), once, in its
	 * words; libgcrypt's own warning would go to stderr unasked. */
	gcry_control(GCRYCTL_DISABLE_SECMEM_WARN);
	/* Non-zero only when mlock(2) refused the pool: it is there all
	 * the same, in memory that can be swapped out. */
	lib_unlocked = gcry_control(GCRYCTL_INIT_SECMEM, SECMEM_SIZE, 0) != 0;
	gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
check_aes:
	if (gcry_cipher_test_algo(GCRY_CIPHER_AES256))
		lib_status = -ENOTSUP;
}

int drbg_library_init_memory(bool accept_unlocked)
{
	if (accept_unlocked)
		atomic_store(&unlocked_accepted, true);
	pthread_once(&lib_once, lib_init_once);
	if (lib_status < 0)
		return lib_status;
	if (!lib_unlocked)
		return 0;
	return atomic_load(&unlocked_accepted) ? 1 : -ENOLCK;
}

int drbg_library_init(void)
{
	int r = drbg_library_init_memory(false);

	return r > 0 ? 0 : r;
}

/* ------------------------------------------------------------------------
 * Small helpers
 */

/* V + n mod 2^128, V big-endian (10.2.1.2 step 2.1 with ctr_len = 128). */
static void be128_add(uint8_t v[BLOCKLEN], uint64_t n)
{
	for (int i = BLOCKLEN - 1; i >= 0 && n; i--) {
		uint64_t s = (uint64_t)v[i] + (n & 0xff);

		v[i] = (uint8_t)s;
		n = (n >> 8) + (s >> 8);
	}
}

static void put_be32(uint8_t *p, uint32_t x)
{
	p[0] = (uint8_t)(x >> 24);
	p[1] = (uint8_t)(x >> 16);
	p[2] = (uint8_t)(x >> 8);
	p[3] = (uint8_t)x;
}

static bool bad_buf(const void *p, size_t len)
{
	return !p && len;
}

static int open_aes(gcry_cipher_hd_t *hd, int mode)
{
	if (gcry_cipher_open(hd, GCRY_CIPHER_AES256, mode, GCRY_CIPHER_SECURE)) {
		*hd = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* A failure midway leaves Key/V unknown: wipe everything (9.4) and make
 * the caller start again from fresh entropy.  Returns err. */
static int fail(struct drbg *d, int err)
{
	drbg_uninstantiate(d);
	return err;
}

/* ------------------------------------------------------------------------
 * 10.3.3 BCC and 10.3.2 Block_Cipher_df, streamed over segments
 */
struct bcc_stream {
	gcry_cipher_hd_t hd;
	uint8_t buf[BLOCKLEN];
	size_t fill;
	uint8_t last[BLOCKLEN]; /* chaining value */
	uint8_t scratch[512];
};

static int bcc_feed(struct bcc_stream *b, const uint8_t *p, size_t n)
{
	while (n) {
		if (b->fill || n < BLOCKLEN) {
			size_t take = BLOCKLEN - b->fill;

			if (take > n)
				take = n;
			memcpy(b->buf + b->fill, p, take);
			b->fill += take;
			p += take;
			n -= take;
			if (b->fill == BLOCKLEN) {
				if (gcry_cipher_encrypt(b->hd, b->last, BLOCKLEN,
							b->buf, BLOCKLEN))
					return -EIO;
				b->fill = 0;
			}
			continue;
		}
		size_t chunk = n & ~(size_t)(BLOCKLEN - 1);

		if (chunk > sizeof(b->scratch))
			chunk = sizeof(b->scratch);
		if (gcry_cipher_encrypt(b->hd, b->scratch, chunk, p, chunk))
			return -EIO;
		memcpy(b->last, b->scratch + chunk - BLOCKLEN, BLOCKLEN);
		p += chunk;
		n -= chunk;
	}
	return 0;
}

/*
 * BCC(K, IV ‖ S) where S = L ‖ N ‖ input ‖ 0x80 ‖ 0^pad (10.3.2 steps 4-5,
 * 9.2): CBC-MAC with a zero IV, ending in chaining_value (10.3.3).
 */
static int bcc_chain(struct bcc_stream *b, uint32_t i, const uint8_t ln[8],
		     const struct seg *segs, size_t nsegs, size_t total,
		     uint8_t out[BLOCKLEN])
{
	static const uint8_t pad[BLOCKLEN] = { 0x80 };
	uint8_t iv[BLOCKLEN] = { 0 };
	size_t padlen;
	int r;

	put_be32(iv, i);
	b->fill = 0;
	if (gcry_cipher_setiv(b->hd, NULL, 0))
		return -EIO;
	r = bcc_feed(b, iv, sizeof(iv));
	if (!r)
		r = bcc_feed(b, ln, 8);
	for (size_t k = 0; !r && k < nsegs; k++)
		r = bcc_feed(b, segs[k].p, segs[k].len);
	/* 0x80 then zeros up to a whole block: |S| = 8 + total + 1 + pad. */
	padlen = BLOCKLEN - (8 + total) % BLOCKLEN;
	if (!r)
		r = bcc_feed(b, pad, padlen);
	if (!r)
		memcpy(out, b->last, BLOCKLEN);
	return r;
}

/* The df's two AES handles: BCC's, keyed with the fixed key, and the
 * one keyed with the derived K (a DRBG's own, or a struct drbg_df's). */
struct df_handles {
	gcry_cipher_hd_t bcc, dfk;
};

/* Block_Cipher_df(input_string, 384) (10.3.2), into out[SEEDLEN]. */
static int block_cipher_df(const struct df_handles *d, const struct seg *segs,
			   size_t nsegs, uint8_t out[SEEDLEN])
{
	struct bcc_stream b = { .hd = d->bcc };
	static const uint8_t zero[SEEDLEN];
	uint8_t temp[KEYLEN + BLOCKLEN]; /* K ‖ X, steps 9-11 */
	uint8_t ln[8];
	size_t total = 0;
	int r = -EIO;

	for (size_t k = 0; k < nsegs; k++)
		total += segs[k].len; /* callers cap each at 2^24 */
	put_be32(ln, (uint32_t)total);   /* step 2: L in bytes */
	put_be32(ln + 4, SEEDLEN);      /* step 3: N in bytes */

	/* Step 9: three blocks of temp, one BCC chain each (i = 0, 1, 2). */
	for (uint32_t i = 0; i < sizeof(temp) / BLOCKLEN; i++)
		if (bcc_chain(&b, i, ln, segs, nsegs, total,
			      temp + i * BLOCKLEN))
			goto out;

	/* Steps 10-13: X = Encrypt(K, X) three times is CBC over zero blocks
	 * with IV X. */
	if (gcry_cipher_setkey(d->dfk, temp, KEYLEN) ||
	    gcry_cipher_setiv(d->dfk, temp + KEYLEN, BLOCKLEN) ||
	    gcry_cipher_encrypt(d->dfk, out, SEEDLEN, zero, SEEDLEN))
		goto out;
	/* Leave no derived key in the handle. */
	if (gcry_cipher_setkey(d->dfk, zero, KEYLEN) ||
	    gcry_cipher_setiv(d->dfk, NULL, 0) ||
	    gcry_cipher_setiv(d->bcc, NULL, 0))
		goto out;
	r = 0;
out:
	explicit_bzero(&b, sizeof(b));
	explicit_bzero(temp, sizeof(temp));
	if (r)
		explicit_bzero(out, SEEDLEN);
	return r;
}

/* ------------------------------------------------------------------------
 * 10.2.1.2 CTR_DRBG_Update
 */
static int drbg_update(struct drbg *d, const uint8_t provided[SEEDLEN])
{
	uint8_t ctr[BLOCKLEN];
	uint8_t temp[SEEDLEN];
	int r = -EIO;

	/* Steps 1-4: temp = E(Key, V+1) ‖ E(Key, V+2) ‖ E(Key, V+3), XORed
	 * with provided_data: CTR-encrypting provided_data from V + 1. */
	memcpy(ctr, d->v, BLOCKLEN);
	be128_add(ctr, 1);
	if (gcry_cipher_setctr(d->ctr, ctr, BLOCKLEN) ||
	    gcry_cipher_encrypt(d->ctr, temp, SEEDLEN, provided, SEEDLEN))
		goto out;
	/* Steps 5-6. */
	memcpy(d->key, temp, KEYLEN);
	memcpy(d->v, temp + KEYLEN, BLOCKLEN);
	if (gcry_cipher_setkey(d->ctr, d->key, KEYLEN))
		goto out;
	r = 0;
out:
	explicit_bzero(ctr, sizeof(ctr));
	explicit_bzero(temp, sizeof(temp));
	return r;
}

/* No df: seed = a XOR (b padded with zeros to seedlen) (10.2.1.3.1 steps
 * 1-3, 10.2.1.4.1 steps 1-3, 10.2.1.5.1 step 2). */
static void xor_padded(uint8_t out[SEEDLEN], const uint8_t *a, size_t alen,
		       const uint8_t *b, size_t blen)
{
	memset(out, 0, SEEDLEN);
	if (alen)
		memcpy(out, a, alen);
	for (size_t i = 0; i < blen; i++)
		out[i] ^= b[i];
}

/* ------------------------------------------------------------------------
 * Public API
 */
/* 10.3.2 step 8: K = leftmost_bits(0x00010203...1D1E1F, keylen). */
static const uint8_t df_key[KEYLEN] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
};

int drbg_new(struct drbg **out, const struct drbg_params *p)
{
	static const uint8_t zero[KEYLEN];
	struct drbg_params prm = p ? *p : DRBG_PARAMS_DEFAULT;
	struct drbg *d = NULL;
	int r;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!prm.reseed_interval)
		prm.reseed_interval = DRBG_DEFAULT_RESEED_INTERVAL;
	if (prm.reseed_interval > DRBG_MAX_RESEED_INTERVAL)
		return -EINVAL;
	r = drbg_library_init();
	if (r)
		return r;

	d = gcry_calloc_secure(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->use_df = prm.use_df;
	d->reseed_interval = prm.reseed_interval;
	r = open_aes(&d->bcc, GCRY_CIPHER_MODE_CBC);
	if (!r)
		r = open_aes(&d->dfk, GCRY_CIPHER_MODE_CBC);
	if (r)
		goto out;
	if (gcry_cipher_setkey(d->bcc, df_key, KEYLEN) ||
	    gcry_cipher_setkey(d->dfk, zero, KEYLEN)) {
		r = -EIO;
		goto out;
	}
	*out = d;
	d = NULL;
out:
	drbg_free(d);
	return r;
}

/* Common start of instantiate: Key = 0, V = 0 (10.2.1.3.x steps 4-5). */
static int start_state(struct drbg *d)
{
	int r = open_aes(&d->ctr, GCRY_CIPHER_MODE_CTR);

	if (r)
		return r;
	memset(d->key, 0, KEYLEN);
	memset(d->v, 0, BLOCKLEN);
	if (gcry_cipher_setkey(d->ctr, d->key, KEYLEN))
		return -EIO;
	return 0;
}

/* Length checks shared by instantiate and reseed. */
static int check_seed_lengths(const struct drbg *d, size_t entropy_len,
			      size_t extra_len, size_t other_len)
{
	if (d->use_df) {
		if (entropy_len > DRBG_MAX_INPUT_LEN ||
		    extra_len > DRBG_MAX_INPUT_LEN ||
		    other_len > DRBG_MAX_INPUT_LEN)
			return -E2BIG;
		if (entropy_len < DRBG_MIN_ENTROPY_LEN)
			return -ERANGE;
		return 0;
	}
	/* No df: entropy is exactly seedlen, the other input at most. */
	if (entropy_len > SEEDLEN || other_len > SEEDLEN)
		return -E2BIG;
	if (entropy_len < SEEDLEN)
		return -ERANGE;
	return 0;
}

int drbg_instantiate(struct drbg *d, const uint8_t *entropy,
		     size_t entropy_len, const uint8_t *nonce, size_t nonce_len,
		     const uint8_t *pers, size_t pers_len)
{
	uint8_t seed[SEEDLEN];
	int r;

	if (!d || bad_buf(entropy, entropy_len) || bad_buf(nonce, nonce_len) ||
	    bad_buf(pers, pers_len))
		return -EINVAL;
	if (!d->use_df && nonce_len)
		return -EINVAL;
	r = check_seed_lengths(d, entropy_len, nonce_len, pers_len);
	if (r)
		return r;
	/* 8.6.7: security_strength/2 more bits from the nonce or entropy. */
	if (d->use_df && entropy_len + nonce_len < DRBG_SECURITY_STRENGTH * 3 / 2)
		return -ERANGE;
	if (d->instantiated)
		return -EISCONN;

	if (d->use_df) {
		/* 10.2.1.3.2 step 1-2: df(entropy ‖ nonce ‖ pers). */
		const struct seg segs[] = {
			{ entropy, entropy_len },
			{ nonce, nonce_len },
			{ pers, pers_len },
		};
		r = block_cipher_df(&(struct df_handles){ d->bcc, d->dfk },
				    segs, 3, seed);
	} else {
		/* 10.2.1.3.1 steps 1-3. */
		xor_padded(seed, entropy, entropy_len, pers, pers_len);
		r = 0;
	}
	if (!r)
		r = start_state(d);
	if (!r)
		r = drbg_update(d, seed);
	explicit_bzero(seed, sizeof(seed));
	if (r)
		return fail(d, r);
	d->reseed_counter = 1;
	d->instantiated = true;
	return 0;
}

int drbg_reseed(struct drbg *d, const uint8_t *entropy, size_t entropy_len,
		const uint8_t *additional, size_t additional_len)
{
	uint8_t seed[SEEDLEN];
	int r;

	if (!d || bad_buf(entropy, entropy_len) ||
	    bad_buf(additional, additional_len))
		return -EINVAL;
	r = check_seed_lengths(d, entropy_len, 0, additional_len);
	if (r)
		return r;
	if (!d->instantiated)
		return -ENOTCONN;

	if (d->use_df) {
		/* 10.2.1.4.2 steps 1-2: df(entropy ‖ additional). */
		const struct seg segs[] = {
			{ entropy, entropy_len },
			{ additional, additional_len },
		};
		r = block_cipher_df(&(struct df_handles){ d->bcc, d->dfk },
				    segs, 2, seed);
	} else {
		/* 10.2.1.4.1 steps 1-3. */
		xor_padded(seed, entropy, entropy_len, additional,
			   additional_len);
		r = 0;
	}
	if (!r)
		r = drbg_update(d, seed);
	explicit_bzero(seed, sizeof(seed));
	if (r)
		return fail(d, r);
	d->reseed_counter = 1;
	return 0;
}

int drbg_reseed_derived(struct drbg *d, const uint8_t seed[DRBG_SEEDLEN])
{
	int r;

	if (!d || !seed || !d->use_df)
		return -EINVAL;
	if (!d->instantiated)
		return -ENOTCONN;
	/* 10.2.1.4.2 steps 1-2 were drbg_df_derive(); step 3. */
	r = drbg_update(d, seed);
	if (r)
		return fail(d, r);
	d->reseed_counter = 1;
	return 0;
}

/* ------------------------------------------------------------------------
 * The derivation function alone (drbg_df_*)
 */
struct drbg_df {
	struct df_handles h;
};

int drbg_df_new(struct drbg_df **out)
{
	static const uint8_t zero[KEYLEN];
	struct drbg_df *df;
	int r;

	if (!out)
		return -EINVAL;
	*out = NULL;
	r = drbg_library_init();
	if (r)
		return r;
	df = calloc(1, sizeof(*df));
	if (!df)
		return -ENOMEM;
	/* Ordinary memory, not the secure pool: see drbg.h. */
	if (gcry_cipher_open(&df->h.bcc, GCRY_CIPHER_AES256,
			     GCRY_CIPHER_MODE_CBC, 0) ||
	    gcry_cipher_open(&df->h.dfk, GCRY_CIPHER_AES256,
			     GCRY_CIPHER_MODE_CBC, 0)) {
		r = -ENOMEM;
		goto fail;
	}
	if (gcry_cipher_setkey(df->h.bcc, df_key, KEYLEN) ||
	    gcry_cipher_setkey(df->h.dfk, zero, KEYLEN)) {
		r = -EIO;
		goto fail;
	}
	*out = df;
	return 0;
fail:
	drbg_df_free(df);
	return r;
}

void drbg_df_free(struct drbg_df *df)
{
	if (!df)
		return;
	if (df->h.bcc)
		gcry_cipher_close(df->h.bcc);
	if (df->h.dfk)
		gcry_cipher_close(df->h.dfk);
	free(df);
}

int drbg_df_derive(struct drbg_df *df, const uint8_t *entropy,
		   size_t entropy_len, uint8_t seed[DRBG_SEEDLEN])
{
	const struct seg seg = { entropy, entropy_len };

	if (!df || !seed || bad_buf(entropy, entropy_len))
		return -EINVAL;
	if (entropy_len > DRBG_MAX_INPUT_LEN)
		return -E2BIG;
	if (entropy_len < DRBG_MIN_ENTROPY_LEN)
		return -ERANGE;
	/* 10.2.1.4.2 step 1 with no additional input, step 2. */
	return block_cipher_df(&df->h, &seg, 1, seed);
}

/*
 * DRBG_MAX_REQUEST_LEN zero bytes, the plaintext of the keystream.  Not
 * const on purpose: in .bss, never written, its pages are the kernel's
 * shared zero page (const would put 64 KiB into the file and, once read,
 * into the page cache).  Read only, so not state.
 */
static uint8_t zero_src[DRBG_MAX_REQUEST_LEN];

int drbg_generate(struct drbg *d, uint8_t *out, size_t len,
		  const uint8_t *additional, size_t additional_len)
{
	uint8_t add[SEEDLEN];
	uint8_t ctr[BLOCKLEN];
	int r = 0;

	if (!d || bad_buf(out, len) || bad_buf(additional, additional_len))
		return -EINVAL;
	if (len > DRBG_MAX_REQUEST_LEN ||
	    additional_len > (d->use_df ? DRBG_MAX_INPUT_LEN : SEEDLEN))
		return -E2BIG;
	if (!d->instantiated)
		return -ENOTCONN;
	/* 10.2.1.5.x step 1. */
	if (d->reseed_counter > d->reseed_interval)
		return -ESTALE;

	/* Step 2: an empty additional input is 0^seedlen and skips Update. */
	memset(add, 0, sizeof(add));
	if (additional_len) {
		if (d->use_df) {
			const struct seg seg = { additional, additional_len };

			r = block_cipher_df(&(struct df_handles){ d->bcc,
								   d->dfk },
					    &seg, 1, add);
		} else {
			memcpy(add, additional, additional_len);
		}
		if (!r)
			r = drbg_update(d, add);
		if (r)
			goto out;
	}

	/* Steps 3-5: the blocks E(Key, V+1), E(Key, V+2), ... are the CTR
	 * keystream from V + 1: CTR-encrypt zeros into out.  The zeros are
	 * read from zero_src (never written) rather than memset into out
	 * first, which cost a pass over every 64 KiB of output. */
	if (len) {
		memcpy(ctr, d->v, BLOCKLEN);
		be128_add(ctr, 1);
		if (gcry_cipher_setctr(d->ctr, ctr, BLOCKLEN) ||
		    gcry_cipher_encrypt(d->ctr, out, len, zero_src, len)) {
			r = -EIO;
			goto out;
		}
		/* V is now the last counter used. */
		be128_add(d->v, (len + BLOCKLEN - 1) / BLOCKLEN);
	}
	/* Step 6: Update with the same (derived) additional input. */
	r = drbg_update(d, add);
	if (r)
		goto out;
	d->reseed_counter++; /* step 7 */
out:
	explicit_bzero(add, sizeof(add));
	explicit_bzero(ctr, sizeof(ctr));
	if (r) {
		if (len)
			explicit_bzero(out, len);
		return fail(d, r);
	}
	return 0;
}

void drbg_uninstantiate(struct drbg *d)
{
	if (!d)
		return;
	/* Closing the handle makes libgcrypt wipe its key schedule and any
	 * unused CTR keystream. */
	if (d->ctr)
		gcry_cipher_close(d->ctr);
	d->ctr = NULL;
	explicit_bzero(d->key, sizeof(d->key));
	explicit_bzero(d->v, sizeof(d->v));
	d->reseed_counter = 0;
	d->instantiated = false;
}

void drbg_free(struct drbg *d)
{
	if (!d)
		return;
	drbg_uninstantiate(d);
	if (d->bcc)
		gcry_cipher_close(d->bcc);
	if (d->dfk)
		gcry_cipher_close(d->dfk);
	explicit_bzero(d, sizeof(*d));
	gcry_free(d);
}

bool drbg_is_instantiated(const struct drbg *d)
{
	return d && d->instantiated;
}

int drbg_needs_reseed(const struct drbg *d)
{
	if (!d)
		return -EINVAL;
	if (!d->instantiated)
		return -ENOTCONN;
	return d->reseed_counter > d->reseed_interval;
}

uint64_t drbg_requests_left(const struct drbg *d)
{
	if (!d || !d->instantiated || d->reseed_counter > d->reseed_interval)
		return 0;
	return d->reseed_interval - d->reseed_counter + 1;
}
