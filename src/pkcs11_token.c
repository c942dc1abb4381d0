// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A PKCS#11 token's RNG.  See include/rngfeed/pkcs11_token.h.
 *
 * The module is dlopen()ed directly, not through libp11-kit: rngfeed
 * talks to one module from one thread, so p11-kit's proxy and its
 * sharing between callers buy nothing, and a name is resolved the way
 * p11-kit's own module files say (one "module:" line).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <p11-kit/pkcs11.h>

#include "rngfeed/pkcs11_token.h"
#include "rngfeed/util.h"

#define PIN_MAX 255u
#define WHY_LEN 256
/* A label is 32 bytes, blank-padded, not NUL-ended. */
#define LABEL_LEN 32

struct pkcs11_token {
	char module[256];
	char label[LABEL_LEN + 1];
	char pin_file[256];
	char config_dirs[512];

	char path[512];            /* the module file loaded */
	void *dl;
	CK_FUNCTION_LIST_PTR fn;
	bool initialized;          /* C_Initialize is ours to finalize */
	bool have_session;
	CK_SESSION_HANDLE session;
	CK_SLOT_ID slot;
	char found[160];           /* "label" (model serial), once found */
	char why[WHY_LEN];
};

int pkcs11_token_new(struct pkcs11_token **out,
		     const struct pkcs11_token_params *p)
{
	struct pkcs11_token *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	snprintf(t->module, sizeof(t->module), "%s", p->module ? p->module : "");
	snprintf(t->label, sizeof(t->label), "%s", p->label ? p->label : "");
	snprintf(t->pin_file, sizeof(t->pin_file), "%s",
		 p->pin_file ? p->pin_file : "");
	snprintf(t->config_dirs, sizeof(t->config_dirs), "%s",
		 p->config_dirs ? p->config_dirs : PKCS11_P11KIT_CONFIG_DIRS);
	*out = t;
	return 0;
}

__attribute__((format(printf, 3, 4)))
static int fail(struct pkcs11_token *t, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
	return err;
}

static const char *rv_name(CK_RV rv, char *buf, size_t len)
{
	static const struct {
		CK_RV rv;
		const char *name;
	} names[] = {
		{ CKR_GENERAL_ERROR, "CKR_GENERAL_ERROR" },
		{ CKR_FUNCTION_FAILED, "CKR_FUNCTION_FAILED" },
		{ CKR_ARGUMENTS_BAD, "CKR_ARGUMENTS_BAD" },
		{ CKR_DEVICE_ERROR, "CKR_DEVICE_ERROR" },
		{ CKR_DEVICE_MEMORY, "CKR_DEVICE_MEMORY" },
		{ CKR_DEVICE_REMOVED, "CKR_DEVICE_REMOVED" },
		{ CKR_FUNCTION_NOT_SUPPORTED, "CKR_FUNCTION_NOT_SUPPORTED" },
		{ CKR_PIN_INCORRECT, "CKR_PIN_INCORRECT" },
		{ CKR_PIN_LOCKED, "CKR_PIN_LOCKED" },
		{ CKR_PIN_LEN_RANGE, "CKR_PIN_LEN_RANGE" },
		{ CKR_SESSION_CLOSED, "CKR_SESSION_CLOSED" },
		{ CKR_SESSION_HANDLE_INVALID, "CKR_SESSION_HANDLE_INVALID" },
		{ CKR_SLOT_ID_INVALID, "CKR_SLOT_ID_INVALID" },
		{ CKR_TOKEN_NOT_PRESENT, "CKR_TOKEN_NOT_PRESENT" },
		{ CKR_TOKEN_NOT_RECOGNIZED, "CKR_TOKEN_NOT_RECOGNIZED" },
		{ CKR_USER_NOT_LOGGED_IN, "CKR_USER_NOT_LOGGED_IN" },
		{ CKR_RANDOM_NO_RNG, "CKR_RANDOM_NO_RNG" },
		{ CKR_RANDOM_SEED_NOT_SUPPORTED, "CKR_RANDOM_SEED_NOT_SUPPORTED" },
		{ CKR_CRYPTOKI_NOT_INITIALIZED, "CKR_CRYPTOKI_NOT_INITIALIZED" },
		{ CKR_HOST_MEMORY, "CKR_HOST_MEMORY" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].rv == rv)
			return names[i].name;
	snprintf(buf, len, "CKR 0x%lx", (unsigned long)rv);
	return buf;
}

/* What a failed call means for the session: gone (reconnect), a refused
 * PIN, or another fault. */
static int rv_errno(CK_RV rv)
{
	switch (rv) {
	case CKR_SESSION_HANDLE_INVALID:
	case CKR_SESSION_CLOSED:
	case CKR_DEVICE_REMOVED:
	case CKR_TOKEN_NOT_PRESENT:
	case CKR_TOKEN_NOT_RECOGNIZED:
	case CKR_SLOT_ID_INVALID:
	case CKR_CRYPTOKI_NOT_INITIALIZED:
		return -ENODEV;
	case CKR_PIN_INCORRECT:
	case CKR_PIN_INVALID:
	case CKR_PIN_LEN_RANGE:
	case CKR_PIN_EXPIRED:
	case CKR_PIN_LOCKED:
		return -EACCES;
	case CKR_RANDOM_NO_RNG:
		return -ENOTSUP;
	default:
		return -EIO;
	}
}

static int rv_fail(struct pkcs11_token *t, const char *call, CK_RV rv)
{
	char buf[32];

	return fail(t, rv_errno(rv), "%s: %s", call, rv_name(rv, buf, sizeof(buf)));
}

/* ---- the module file -------------------------------------------------------- */

static void trim(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' ||
			 s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
}

/* The "module:" value of one p11-kit module file, or -ENOENT. */
static int module_line(const char *file, char *out, size_t out_len)
{
	FILE *f = fopen(file, "re");
	char line[512];
	int r = -ENOENT;

	if (!f)
		return -ENOENT; /* the next directory, whatever the reason */
	while (fgets(line, sizeof(line), f)) {
		char *v = line;

		v += strspn(v, " \t");
		if (strncmp(v, "module:", 7) != 0)
			continue;
		v += 7;
		v += strspn(v, " \t");
		trim(v);
		if (*v && snprintf(out, out_len, "%s", v) < (int)out_len)
			r = 0;
		break;
	}
	fclose(f);
	return r;
}

int pkcs11_module_path(const char *module, const char *config_dirs,
		       char *path, size_t path_len, char *why,
		       size_t why_len)
{
	char dirs[512], value[512];
	char *save = NULL;

	if (!module || !*module) {
		snprintf(why, why_len, "no module: give -O pkcs11:module=PATH "
			 "or a p11-kit module name");
		return -EINVAL;
	}
	if (module[0] == '/') {
		snprintf(path, path_len, "%s", module);
		return 0;
	}
	if (strchr(module, '/') || strcmp(module, ".") == 0 ||
	    strcmp(module, "..") == 0) {
		snprintf(why, why_len, "module %s: give an absolute path or a "
			 "p11-kit module name", module);
		return -EINVAL;
	}
	snprintf(dirs, sizeof(dirs), "%s",
		 config_dirs ? config_dirs : PKCS11_P11KIT_CONFIG_DIRS);
	for (char *d = strtok_r(dirs, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		char file[768];

		snprintf(file, sizeof(file), "%s/%s.module", d, module);
		if (module_line(file, value, sizeof(value)) < 0)
			continue;
		if (value[0] == '/')
			snprintf(path, path_len, "%s", value);
		else
			snprintf(path, path_len, "%s/%s",
				 RNGFEED_P11_MODULE_DIR, value);
		return 0;
	}
	snprintf(why, why_len, "module %s: no %s.module with a \"module:\" "
		 "line in %s", module, module,
		 config_dirs ? config_dirs : PKCS11_P11KIT_CONFIG_DIRS);
	return -ENOENT;
}

/* ---- the PIN ---------------------------------------------------------------- */

int pkcs11_read_pin_file(const char *path, char *pin, size_t pin_len,
			 size_t *n, char *why, size_t why_len)
{
	struct stat st;
	ssize_t got;
	int fd, e;

	if (pin_len < PIN_MAX + 1)
		return -EINVAL;
	/* O_NONBLOCK: a FIFO named by mistake is refused, not waited on.
	 * The messages go through set_error(): a path as long as why_len,
	 * cut in a snprintf() of its own, was an error at GCC -O3. */
	fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		set_error(why, why_len, "pin-file %s: %s", path, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return set_error(why, why_len, "pin-file %s: not a regular file",
				 path);
	}
	if (st.st_mode & 027) {
		close(fd);
		set_error(why, why_len, "pin-file %s: mode %04o lets others read "
			  "or change the PIN; chmod 600 it", path,
			  (unsigned int)(st.st_mode & 07777));
		return -EACCES;
	}
	got = read(fd, pin, PIN_MAX + 1);
	e = errno;
	close(fd);
	if (got < 0) {
		set_error(why, why_len, "pin-file %s: %s", path, strerror(e));
		return -e;
	}
	if ((size_t)got > PIN_MAX) {
		explicit_bzero(pin, pin_len);
		return set_error(why, why_len, "pin-file %s: longer than %u bytes",
				 path, PIN_MAX);
	}
	if (got > 0 && pin[got - 1] == '\n')
		got--;
	if (got > 0 && pin[got - 1] == '\r')
		got--;
	pin[got] = '\0';
	if (got == 0)
		return set_error(why, why_len, "pin-file %s: empty", path);
	*n = (size_t)got;
	return 0;
}

/* ---- connecting ------------------------------------------------------------- */

static int load(struct pkcs11_token *t)
{
	CK_C_INITIALIZE_ARGS args = { .flags = CKF_OS_LOCKING_OK };
	CK_RV (*get_list)(CK_FUNCTION_LIST_PTR_PTR);
	char why[WHY_LEN];
	CK_RV rv;
	int r;

	r = pkcs11_module_path(t->module, t->config_dirs, t->path,
			       sizeof(t->path), why, sizeof(why));
	if (r < 0)
		return fail(t, r, "%s", why);
	t->dl = dlopen(t->path, RTLD_NOW | RTLD_LOCAL);
	if (!t->dl) {
		const char *e = dlerror();

		return fail(t, access(t->path, F_OK) == 0 ? -EIO : -ENOENT,
			    "cannot load module: %s", e ? e : t->path);
	}
	*(void **)&get_list = dlsym(t->dl, "C_GetFunctionList");
	if (!get_list)
		return fail(t, -EIO, "%s is not a PKCS#11 module (no "
			    "C_GetFunctionList)", t->path);
	rv = get_list(&t->fn);
	if (rv != CKR_OK || !t->fn)
		return rv_fail(t, "C_GetFunctionList", rv);
	rv = t->fn->C_Initialize(&args);
	if (rv == CKR_CRYPTOKI_ALREADY_INITIALIZED)
		return 0;
	if (rv != CKR_OK)
		return rv_fail(t, "C_Initialize", rv);
	t->initialized = true;
	return 0;
}

/* A token label without its blank padding. */
static void label_text(const CK_UTF8CHAR *raw, char *out, size_t out_len,
		       size_t raw_len)
{
	size_t n = raw_len;

	while (n > 0 && (raw[n - 1] == ' ' || raw[n - 1] == '\0'))
		n--;
	snprintf(out, out_len, "%.*s", (int)n, (const char *)raw);
}

/* The slot of the token asked for, and its CKF_RNG. */
static int find_token(struct pkcs11_token *t)
{
	CK_SLOT_ID slots[64];
	CK_ULONG n = sizeof(slots) / sizeof(slots[0]);
	CK_RV rv;

	rv = t->fn->C_GetSlotList(CK_TRUE, slots, &n);
	if (rv == CKR_BUFFER_TOO_SMALL)
		n = sizeof(slots) / sizeof(slots[0]);
	else if (rv != CKR_OK)
		return rv_fail(t, "C_GetSlotList", rv);
	for (CK_ULONG i = 0; i < n; i++) {
		CK_TOKEN_INFO info;
		char label[LABEL_LEN + 1], model[17], serial[17];

		if (t->fn->C_GetTokenInfo(slots[i], &info) != CKR_OK)
			continue;
		label_text(info.label, label, sizeof(label), sizeof(info.label));
		if (strcmp(label, t->label) != 0)
			continue;
		label_text(info.model, model, sizeof(model), sizeof(info.model));
		label_text(info.serialNumber, serial, sizeof(serial),
			   sizeof(info.serialNumber));
		snprintf(t->found, sizeof(t->found), "token '%s' (%s, serial %s)",
			 label, model, serial);
		if (!(info.flags & CKF_RNG))
			return fail(t, -ENOTSUP, "%s has no random number "
				    "generator (its CKF_RNG flag is not set)",
				    t->found);
		t->slot = slots[i];
		return 0;
	}
	return fail(t, -ENOENT, "no token labelled '%s' in %s", t->label,
		    t->path);
}

static int login(struct pkcs11_token *t)
{
	char pin[PIN_MAX + 1], why[WHY_LEN];
	size_t n = 0;
	CK_RV rv;
	int r;

	r = pkcs11_read_pin_file(t->pin_file, pin, sizeof(pin), &n, why,
				 sizeof(why));
	if (r < 0)
		return fail(t, r, "%s", why);
	rv = t->fn->C_Login(t->session, CKU_USER, (CK_UTF8CHAR_PTR)pin, n);
	/* Not kept: read again at the next login. */
	explicit_bzero(pin, sizeof(pin));
	if (rv != CKR_OK && rv != CKR_USER_ALREADY_LOGGED_IN)
		return rv_fail(t, "C_Login", rv);
	return 0;
}

int pkcs11_token_connect(struct pkcs11_token *t)
{
	CK_RV rv;
	int r;

	if (t->have_session)
		return 0;
	t->why[0] = '\0';
	if (!t->fn) {
		r = load(t);
		if (r < 0)
			return r;
	}
	r = find_token(t);
	if (r < 0)
		return r;
	rv = t->fn->C_OpenSession(t->slot, CKF_SERIAL_SESSION, NULL, NULL,
				  &t->session);
	if (rv != CKR_OK)
		return rv_fail(t, "C_OpenSession", rv);
	t->have_session = true;
	if (t->pin_file[0]) {
		r = login(t);
		if (r < 0) {
			t->fn->C_CloseSession(t->session);
			t->have_session = false;
			return r;
		}
	}
	return 0;
}

bool pkcs11_token_connected(const struct pkcs11_token *t)
{
	return t->have_session;
}

int pkcs11_token_generate(struct pkcs11_token *t, void *buf, size_t len)
{
	CK_RV rv;
	int r;

	if (!t->have_session)
		return fail(t, -ENODEV, "no session");
	rv = t->fn->C_GenerateRandom(t->session, buf, len);
	if (rv == CKR_OK)
		return 0;
	r = rv_fail(t, "C_GenerateRandom", rv);
	if (r == -ENODEV) {
		/* Gone: a new session (a new C_Initialize) is needed. */
		(void)t->fn->C_CloseSession(t->session);
		t->have_session = false;
	}
	return r;
}

void pkcs11_token_free(struct pkcs11_token *t)
{
	if (!t)
		return;
	if (t->have_session)
		(void)t->fn->C_CloseSession(t->session);
	if (t->initialized)
		(void)t->fn->C_Finalize(NULL);
	if (t->dl)
		dlclose(t->dl);
	free(t);
}

const char *pkcs11_token_why(const struct pkcs11_token *t)
{
	return t->why;
}

void pkcs11_token_describe(const struct pkcs11_token *t, char *buf,
			   size_t len)
{
	if (t->have_session)
		snprintf(buf, len, "%s in %s", t->found, t->path);
	else
		snprintf(buf, len, "token '%s' of module %s", t->label,
			 t->module);
}
