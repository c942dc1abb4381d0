// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The CTR_DRBG's power-on self-test (SP 800-90A 11.3), apart from the
 * DRBG itself: it uses only the public interface of drbg.h, as any caller
 * would, so it tests what the daemon uses.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rngfeed/drbg.h"

/* ------------------------------------------------------------------------
 * 11.3 Power-on known-answer self-test, on NIST CAVP vectors (CAVS 14.3,
 * CTR_DRBG AES-256): instantiate, optional reseed, two generates of 64
 * bytes, the second compared.
 */
struct kat {
	bool use_df;
	const char *entropy, *nonce, *pers;
	const char *entropy_reseed, *add_reseed; /* NULL: no reseed */
	const char *add1, *add2;
	const char *returned;
};

static const struct kat kats[] = {
	{ /* no_reseed, use df, pers 256, additional 256, COUNT 0 */
	  .use_df = true,
	  .entropy = "87b56e964eba227154724bb9484b812d3e2c0c43b3d17f6098d9526e16e6d0ef",
	  .nonce = "9bea6a7ff2358df142e6c23e2157fb83",
	  .pers = "9860b432edd58d1ccbfeecbce99ffaee7d935a614860d4e965bd67041403096b",
	  .add1 = "99a5cc87924e8ea65a596f81fd17d63f5b4542fe6e8e1511b5d35c835dfadb0b",
	  .add2 = "9a8dec54734a34582a2332f3452e82313524c3e0dfb485faeac6ca5fc0ff504d",
	  .returned = "dbc6a2330b19b5cddd8cd6392ec1fb508678c805e87d1aca07ac265007632503"
		      "044a00610c79d98375afa7ab4cca1a90989cbfe7c674af5d823ced11c47e9af6" },
	{ /* pr_false, use df, no pers, no additional, COUNT 0 */
	  .use_df = true,
	  .entropy = "2d4c9f46b981c6a0b2b5d8c69391e569ff13851437ebc0fc00d616340252fed5",
	  .nonce = "0bf814b411f65ec4866be1abb59d3c32",
	  .pers = "",
	  .entropy_reseed = "93500fae4fa32b86033b7a7bac9d37e710dcc67ca266bc8607d665937766d207",
	  .add_reseed = "",
	  .add1 = "",
	  .add2 = "",
	  .returned = "322dd28670e75c0ea638f3cb68d6a9d6e50ddfd052b772a7b1d78263a7b8978b"
		      "6740c2b65a9550c3a76325866fa97e16d74006bc96f26249b9f0a90d076f08e5" },
	{ /* pr_false, no df, pers 384, additional 384, COUNT 0 */
	  .use_df = false,
	  .entropy = "ae7ebe062971f5eb32e5b21444750785de816595ad2cbe80a209c8f8ab04b546"
		     "8166de8c6ae522d8f10b56386a3b424f",
	  .nonce = "",
	  .pers = "55860dae57fcac297087c137efb796878a75868f6e7681114e9b73ed0c67e3c6"
		  "2bfc9f5d77e8caa59bcdb223f4ffd247",
	  .entropy_reseed = "a42407931bfeca70e6ee5dd197021a129525051c07468e8b25587c5ad50abe92"
			    "04e882fe847b8fd47cf7b4360e5aa034",
	  .add_reseed = "ee4c88d1eb05f4853663eada501d2fc4b4984b283a88db579af2113031e03d9b"
			"c570de943dd168918f3ba8065581fea7",
	  .add1 = "4b4b03ef19b0f259dca2b3ee3ae4cd86c3895a784b3d8eee043a2003c08289f8"
		  "fffdad141e6b1ab2174d8d5d79c1e581",
	  .add2 = "3062b33f116b46e20fe3c354726ae9b2a3a4c51922c8107863cb86f1f0bdad75"
		  "54075659d91c371e2b11b1e8106a1ed5",
	  .returned = "0d270518baeafac160ff1cb28c11ef68712c764c0c01674e6c9ca2cc9c7e0e8a"
		      "ccfd3c753635ee070081eee7628af6187fbc2854b3c204461a796cf3f3fcb092" },
	{ /* no_reseed, no df, no pers, no additional, COUNT 0 */
	  .use_df = false,
	  .entropy = "df5d73faa468649edda33b5cca79b0b05600419ccb7a879ddfec9db32ee494e5"
		     "531b51de16a30f769262474c73bec010",
	  .nonce = "",
	  .pers = "",
	  .add1 = "",
	  .add2 = "",
	  .returned = "d1c07cd95af8a7f11012c84ce48bb8cb87189e99d40fccb1771c619bdf82ab22"
		      "80b1dc2f2581f39164f7ac0c510494b3a43c41b7db17514c87b107ae793e01c5" },
};

/* Decode a constant hex string of at most 64 bytes; returns its length. */
static size_t kat_hex(uint8_t *out, const char *hex)
{
	size_t n = 0;

	for (; hex[0] && hex[1] && n < 64; hex += 2) {
		unsigned int hi = (unsigned int)(hex[0] <= '9' ? hex[0] - '0' : hex[0] - 'a' + 10);
		unsigned int lo = (unsigned int)(hex[1] <= '9' ? hex[1] - '0' : hex[1] - 'a' + 10);

		out[n++] = (uint8_t)(hi << 4 | lo);
	}
	return n;
}

static int run_kat(const struct kat *k)
{
	const struct drbg_params p = { .use_df = k->use_df,
				       .reseed_interval = 2 };
	uint8_t a[64], b[64], c[64], got[64], want[64];
	size_t na, nb, nc;
	struct drbg *d = NULL;
	int r;

	r = drbg_new(&d, &p);
	if (r)
		return r;
	na = kat_hex(a, k->entropy);
	nb = kat_hex(b, k->nonce);
	nc = kat_hex(c, k->pers);
	r = drbg_instantiate(d, a, na, b, nb, c, nc);
	if (!r && k->entropy_reseed) {
		na = kat_hex(a, k->entropy_reseed);
		nb = kat_hex(b, k->add_reseed);
		r = drbg_reseed(d, a, na, b, nb);
	}
	if (!r) {
		na = kat_hex(a, k->add1);
		r = drbg_generate(d, got, sizeof(got), a, na);
	}
	if (!r) {
		na = kat_hex(a, k->add2);
		r = drbg_generate(d, got, sizeof(got), a, na);
	}
	if (r)
		goto out;
	kat_hex(want, k->returned);
	r = memcmp(got, want, sizeof(want)) ? -EBADMSG : 0;
	/* 11.3.4: the error paths work too.  Interval 2 is now used up. */
	if (!r && drbg_generate(d, got, sizeof(got), NULL, 0) != -ESTALE)
		r = -EBADMSG;
	drbg_uninstantiate(d);
	if (!r && drbg_generate(d, got, sizeof(got), NULL, 0) != -ENOTCONN)
		r = -EBADMSG;
out:
	/* Any other error on a valid vector is a wrong answer too. */
	if (r && r != -EIO && r != -ENOMEM && r != -ENOTSUP)
		r = -EBADMSG;
	drbg_free(d);
	explicit_bzero(a, sizeof(a));
	explicit_bzero(b, sizeof(b));
	explicit_bzero(c, sizeof(c));
	explicit_bzero(got, sizeof(got));
	return r;
}

int drbg_selftest(void)
{
	for (size_t i = 0; i < sizeof(kats) / sizeof(kats[0]); i++) {
		int r = run_kat(&kats[i]);

		if (r)
			return r;
	}
	return 0;
}
