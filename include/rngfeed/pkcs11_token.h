/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A PKCS#11 token's random number generator: the module loaded with
 * dlopen(3) (a path, or a p11-kit module name looked up in p11-kit's
 * module files), the token found by its label, its CKF_RNG flag checked,
 * a session opened (and logged in as the user with the PIN of a pin file,
 * read at each login and wiped at once), and C_GenerateRandom.
 *
 * Every call here can wait on the module (C_Initialize talks to a reader
 * or a daemon, C_GenerateRandom to the device): only a source's reader
 * thread calls pkcs11_token_connect() and pkcs11_token_generate().  The
 * module's functions are called from that one thread only.
 */
#ifndef RNGFEED_PKCS11_TOKEN_H
#define RNGFEED_PKCS11_TOKEN_H

#include <stdbool.h>
#include <stddef.h>

/* Where p11-kit keeps module files ("NAME.module", a line "module: PATH")
 * and the modules named by a relative path. */
#define PKCS11_P11KIT_CONFIG_DIRS "/etc/pkcs11/modules:/usr/share/p11-kit/modules"
/* p11-kit's module directory (pkg-config p11-kit-1's p11_module_path, set
 * by the Makefile). */
#ifndef RNGFEED_P11_MODULE_DIR
#define RNGFEED_P11_MODULE_DIR "/usr/lib/pkcs11"
#endif

struct pkcs11_token;

struct pkcs11_token_params {
	const char *module;    /* an absolute path, or a p11-kit module name */
	const char *label;     /* the token's label */
	const char *pin_file;  /* NULL: no login */
	/* Module files are looked for in these directories (':'-separated);
	 * NULL means PKCS11_P11KIT_CONFIG_DIRS. */
	const char *config_dirs;
};

/* Allocate (nothing is loaded yet).  0 or -ENOMEM. */
int pkcs11_token_new(struct pkcs11_token **out,
		     const struct pkcs11_token_params *p);
/* Close the session, finalize and unload the module, free. */
void pkcs11_token_free(struct pkcs11_token *t);

/*
 * Load the module if needed and open a session on the token.  0, or
 * -errno with the reason in pkcs11_token_why(): -ENOENT (no such module
 * file, no such p11-kit name, no token with that label), -ENOTSUP (the
 * token has no CKF_RNG), -EACCES (bad PIN, pin file refused), -ENODEV
 * (the token is not present), -EIO (another failure of the module).
 */
int pkcs11_token_connect(struct pkcs11_token *t);
bool pkcs11_token_connected(const struct pkcs11_token *t);
/*
 * Fill @buf with @len bytes of C_GenerateRandom.  0, or -errno: -ENODEV
 * when the session or the token is gone (the session is dropped; connect
 * again), -EIO otherwise; the reason in pkcs11_token_why().
 */
int pkcs11_token_generate(struct pkcs11_token *t, void *buf, size_t len);

/* The last failure in words; "" if none. */
const char *pkcs11_token_why(const struct pkcs11_token *t);
/* One line naming the token (label, model, serial, slot) and the module,
 * or the module and label asked for while not connected. */
void pkcs11_token_describe(const struct pkcs11_token *t, char *buf,
			   size_t len);

/*
 * The module file for @module: itself when it is an absolute path, else
 * the "module:" line of NAME.module in @config_dirs (NULL: the default),
 * a relative path there taken from p11-kit's module directory.  0, or
 * -ENOENT / -EINVAL with a reason in @why.
 */
int pkcs11_module_path(const char *module, const char *config_dirs,
		       char *path, size_t path_len, char *why,
		       size_t why_len);

/*
 * Read a PIN from @path: a regular file that neither its group may write
 * nor others may use (mode & 027 == 0), at most 255 bytes, one trailing
 * newline dropped.  0 with the PIN in @pin (NUL-ended, @pin_len >= 256),
 * or -errno with a reason in @why.  The caller wipes @pin.
 */
int pkcs11_read_pin_file(const char *path, char *pin, size_t pin_len,
			 size_t *n, char *why, size_t why_len);

#endif
