// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pkcs11: random bytes from an HSM or smart card by C_GenerateRandom,
 * through its PKCS#11 module: module=PATH (or a p11-kit module name),
 * token=LABEL, pin-file=PATH (optional: a login when the token wants one
 * for its RNG).  pkcs11_token.c does the talking.
 *
 * Nothing here loads the module before the first read: C_Initialize may
 * wait on a card reader or a daemon, so open() only allocates, and the
 * first read(), in the source's reader thread, loads the module, finds
 * the token, checks that it has an RNG (CKF_RNG) and opens the session.
 * A failure there (a token without an RNG, a label not found, a refused
 * PIN, the token removed: CKR_DEVICE_REMOVED, CKR_SESSION_HANDLE_INVALID,
 * ...) is the read's error with the reason in why_failed(); the reader
 * closes the instance (the module is finalized and unloaded) and opens
 * it again after its doubling back-off, so a token that comes back is
 * used again after a new start-up test.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rngfeed/pkcs11_token.h"
#include "rngfeed/sources.h"

/* Bytes asked per C_GenerateRandom: a smart card answers a few hundred
 * at a time anyway; one call per monitor block of a fast HSM. */
#define PKCS11_ASK_MAX 4096u
/* PKCS#11's label field. */
#define PKCS11_LABEL_MAX 32u

static const char *const pkcs11_keys[] = { "module", "token", "pin-file",
					   NULL };

static int pkcs11_check_option(const char *key, const char *value, char *err,
			       size_t err_len)
{
	if (strcmp(key, "token") == 0) {
		if (!*value || strlen(value) > PKCS11_LABEL_MAX) {
			snprintf(err, err_len, "token must be a label of 1 to "
				 "%u bytes, not '%s'", PKCS11_LABEL_MAX, value);
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(key, "pin-file") == 0)
		return source_check_abs_path(key, value, err, err_len);
	/* module: an absolute path or a p11-kit name, checked by probe. */
	if (!*value) {
		snprintf(err, err_len, "module must be a path or a p11-kit "
			 "module name");
		return -EINVAL;
	}
	return 0;
}

/*
 * Only what can be told without the module (the main thread calls this):
 * the options, the module file, the pin file's existence and mode.  The
 * token itself is looked at by the reader.
 */
static int pkcs11_probe(const struct source_config *cfg, char *why,
			size_t why_len)
{
	const char *label = source_config_get(cfg, "token");
	const char *pin_file = source_config_get(cfg, "pin-file");
	char path[512];
	struct stat st;
	int r;

	r = pkcs11_module_path(source_config_get(cfg, "module"), NULL, path,
			       sizeof(path), why, why_len);
	if (r < 0)
		return r;
	if (stat(path, &st) < 0) {
		r = -errno;
		snprintf(why, why_len, "module %s: %s", path, strerror(-r));
		return r;
	}
	if (!label) {
		snprintf(why, why_len, "no token: give -O pkcs11:token=LABEL");
		return -EINVAL;
	}
	if (pin_file) {
		if (stat(pin_file, &st) < 0) {
			r = -errno;
			snprintf(why, why_len, "pin-file %s: %s", pin_file,
				 strerror(-r));
			return r;
		}
		if (!S_ISREG(st.st_mode) || (st.st_mode & 027)) {
			snprintf(why, why_len, "pin-file %s: %s", pin_file,
				 S_ISREG(st.st_mode)
					 ? "others may read or change it; "
					   "chmod 600 it"
					 : "not a regular file");
			return -EACCES;
		}
	}
	snprintf(why, why_len, "token '%s' of %s (checked by its reader)",
		 label, path);
	return 0;
}

static int pkcs11_open(const struct source_config *cfg, void **state,
		       char *why, size_t why_len)
{
	struct pkcs11_token_params p = {
		.module = source_config_get(cfg, "module"),
		.label = source_config_get(cfg, "token"),
		.pin_file = source_config_get(cfg, "pin-file"),
	};
	struct pkcs11_token *t;
	int r;

	if (!p.module || !p.label) {
		snprintf(why, why_len, "needs -O pkcs11:module=PATH and "
			 "-O pkcs11:token=LABEL");
		return -EINVAL;
	}
	r = pkcs11_token_new(&t, &p);
	if (r < 0) {
		snprintf(why, why_len, "%s", strerror(-r));
		return r;
	}
	*state = t;
	return 0;
}

static ssize_t pkcs11_read(void *state, void *buf, size_t len)
{
	struct pkcs11_token *t = state;
	int r;

	if (len > PKCS11_ASK_MAX)
		len = PKCS11_ASK_MAX;
	r = pkcs11_token_connect(t);
	if (r == 0)
		r = pkcs11_token_generate(t, buf, len);
	return r < 0 ? r : (ssize_t)len;
}

static void pkcs11_close(void *state)
{
	pkcs11_token_free(state);
}

static int pkcs11_describe(void *state, char *buf, size_t len)
{
	pkcs11_token_describe(state, buf, len);
	return 0;
}

static int pkcs11_why_failed(void *state, char *buf, size_t len)
{
	const char *why = pkcs11_token_why(state);

	if (!*why)
		return -ENOENT;
	snprintf(buf, len, "%s", why);
	return 0;
}

const struct source_driver source_pkcs11 = {
	.name = "pkcs11",
	.description = "PKCS#11 token's RNG (C_GenerateRandom; module=, token=)",
	/*
	 * What a token returns is a DRBG's output (PKCS#11 says nothing of
	 * how it is made, and tokens seed their DRBG from a noise source at
	 * a rate only their maker knows).  The health tests see only that
	 * it looks random.  0 by default; a user whose token's maker states
	 * an entropy rate may configure it, up to the credit rule's cap.
	 */
	.default_credit = 0,
	.credit_reason = "none: a token's output is a DRBG's; only its maker "
			 "can say how much entropy is behind it",
	.sample_bits = 8,
	/* DRBG output: the tight cutoffs of full entropy, as for tpm. */
	.min_entropy = 8.0,
	.flags = 0,
	.option_keys = pkcs11_keys,
	.probe = pkcs11_probe,
	.open = pkcs11_open,
	.read = pkcs11_read,
	.close = pkcs11_close,
	.describe = pkcs11_describe,
	.why_failed = pkcs11_why_failed,
	.check_option = pkcs11_check_option,
};
