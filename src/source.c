// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Source driver table, per-source configuration, and the read loop every
 * instance goes through.
 */
#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "rngfeed/monitor.h"
#include "rngfeed/privs.h"
#include "rngfeed/source.h"
#include "rngfeed/util.h"

/*
 * log2 of the alpha of the health tests' permanent cutoffs, as
 * monitor_params_default() sets it (a check_source test keeps the two
 * equal; source.c stays free of the monitor's code).
 */
#define PERMANENT_ALPHA_LOG2 (-60.0)

size_t source_driver_count(void)
{
	size_t n = 0;

	while (source_drivers[n])
		n++;
	return n;
}

const struct source_driver *source_driver_find(const char *name)
{
	for (size_t i = 0; source_drivers[i]; i++)
		if (strcmp(source_drivers[i]->name, name) == 0)
			return source_drivers[i];
	return NULL;
}

int source_driver_index(const struct source_driver *drv)
{
	for (size_t i = 0; source_drivers[i]; i++)
		if (source_drivers[i] == drv)
			return (int)i;
	return -ENOENT;
}

/* ---- configuration ---------------------------------------------------- */

void source_config_init(struct source_config *cfg,
			const struct source_driver *drv)
{
	*cfg = (struct source_config){
		.driver = drv,
		.enabled = true,
		.credit = -1,
		.hw_quality = -1,
	};
}

double source_min_entropy_floor(unsigned int sample_bits)
{
	unsigned int window = sample_bits == 1 ? MONITOR_APT_WINDOW_BINARY
					       : MONITOR_APT_WINDOW;

	/* The APT fails at cutoff C <= W only if a window of W equal
	 * samples, probability 2^(-H*W), is at most alpha: H*W >= 60. */
	return -PERMANENT_ALPHA_LOG2 / window;
}

int source_check_bool(const char *key, const char *value, char *err,
		      size_t err_len)
{
	if (parse_bool(value) >= 0)
		return 0;
	snprintf(err, err_len, "%s must be yes or no, not '%s'", key, value);
	return -EINVAL;
}

int source_check_uint(const char *key, const char *value, long long min,
		      long long max, char *err, size_t err_len)
{
	long long n;

	if (parse_ll(value, min, max, &n) == 0)
		return 0;
	snprintf(err, err_len, "%s must be an integer from %lld to %lld, not '%s'",
		 key, min, max, value);
	return -EINVAL;
}

int source_check_abs_path(const char *key, const char *value, char *err,
			  size_t err_len)
{
	if (value[0] == '/')
		return 0;
	snprintf(err, err_len, "%s must be an absolute path, not '%s'", key,
		 value);
	return -EINVAL;
}

static bool driver_has_key(const struct source_driver *drv, const char *key)
{
	for (const char *const *k = drv->option_keys; k && *k; k++)
		if (strcmp(*k, key) == 0)
			return true;
	return false;
}

/*
 * The entry "key\0value\0" of @key in @cfg's packed options, or NULL;
 * *@used is the length of all the entries.
 */
static char *find_option(const struct source_config *cfg, const char *key,
			 size_t *used)
{
	const char *p = cfg->options, *found = NULL;

	for (unsigned int i = 0; i < cfg->n_options; i++) {
		const char *v = p + strlen(p) + 1;

		if (!found && strcmp(p, key) == 0)
			found = p;
		p = v + strlen(v) + 1;
	}
	*used = (size_t)(p - cfg->options);
	return (char *)found;
}

int source_config_set(struct source_config *cfg, const char *key,
		      const char *value, char *err, size_t err_len)
{
	const struct source_driver *drv = cfg->driver;
	size_t used, old_len = 0, klen = strlen(key), vlen = strlen(value);
	char *old;
	long long n;
	int r;

	if (strcmp(key, "credit") == 0) {
		r = parse_ll(value, 0, SOURCE_CREDIT_MAX, &n);
		if (r < 0) {
			snprintf(err, err_len,
				 "%s: credit must be an integer from 0 to %u "
				 "(entropy bits per 1024 raw bits), not '%s'",
				 drv->name, SOURCE_CREDIT_MAX, value);
			return -EINVAL;
		}
		cfg->credit = (int)n;
		return 0;
	}
	if (strcmp(key, "min-entropy") == 0) {
		char *end;
		double h;
		double floor_h = source_min_entropy_floor(drv->sample_bits);

		errno = 0;
		h = strtod(value, &end);
		/* No leading blank (strtod() would skip it). */
		if (!*value || isspace((unsigned char)*value) || *end || errno ||
		    !(h >= floor_h) ||
		    h > drv->sample_bits) {
			snprintf(err, err_len,
				 "%s: min-entropy must be from %.10g to %u "
				 "(bits per sample; below %.10g the adaptive "
				 "proportion test cannot fail within its "
				 "%u-sample window), not '%s'",
				 drv->name, floor_h, drv->sample_bits, floor_h,
				 drv->sample_bits == 1 ? MONITOR_APT_WINDOW_BINARY
						       : MONITOR_APT_WINDOW,
				 value);
			return -EINVAL;
		}
		cfg->min_entropy = h;
		return 0;
	}
	if (strcmp(key, "guest-owned") == 0) {
		/* Only where it can be true: a driver that may read the
		 * guest's own hardware (not virtio's host device, not a
		 * CPU instruction, which is the guest's anyway). */
		if (!drv->guest_owned) {
			snprintf(err, err_len,
				 drv->host_provided
					 ? "%s: guest-owned: it reads %s, never "
					   "the guest's own"
					 : "%s: guest-owned: it is the guest's "
					   "own already%s",
				 drv->name,
				 drv->host_provided ? drv->host_provided : "");
			return -EINVAL;
		}
		r = parse_bool(value);
		if (r < 0) {
			snprintf(err, err_len,
				 "%s: guest-owned must be yes or no, not '%s'",
				 drv->name, value);
			return -EINVAL;
		}
		cfg->guest_owned = r;
		return 0;
	}
	if (strcmp(key, "enable") == 0) {
		r = parse_bool(value);
		if (r < 0) {
			snprintf(err, err_len,
				 "%s: enable must be yes or no, not '%s'",
				 drv->name, value);
			return -EINVAL;
		}
		cfg->enabled = r;
		return 0;
	}
	if (strcmp(key, "device") != 0 && !driver_has_key(drv, key)) {
		snprintf(err, err_len, "%s: unknown option '%s'", drv->name,
			 key);
		return -EINVAL;
	}
	if (strcmp(key, "device") == 0 && !(drv->flags & SOURCE_F_DEVICE)) {
		snprintf(err, err_len, "%s: this source has no device option",
			 drv->name);
		return -EINVAL;
	}
	if (klen >= SOURCE_OPTION_KEY_LEN || vlen >= SOURCE_OPTION_VALUE_LEN ||
	    value[0] == '\0') {
		snprintf(err, err_len, "%s: value for '%s' is %s", drv->name,
			 key, value[0] ? "too long" : "empty");
		return -EINVAL;
	}
	if (strcmp(key, "device") != 0 && drv->check_option) {
		char msg[SOURCE_WHY_LEN] = "";

		r = drv->check_option(key, value, msg, sizeof(msg));
		if (r < 0) {
			snprintf(err, err_len, "%s: %s", drv->name,
				 msg[0] ? msg : "bad value");
			return -EINVAL;
		}
	}
	if (strcmp(key, "device") == 0 &&
	    source_path_is_kernel_output(value) == 1) {
		snprintf(err, err_len, "%s: refusing %s: %s", drv->name, value,
			 SOURCE_LOOPBACK_REASON);
		return -ELOOP;
	}
	/* Setting a key again replaces it: its old entry goes, the new
	 * one is appended. */
	old = find_option(cfg, key, &used);
	if (old) {
		const char *v = old + klen + 1;

		old_len = (size_t)(v + strlen(v) + 1 - old);
	}
	if (!old && cfg->n_options == SOURCE_MAX_OPTIONS) {
		snprintf(err, err_len, "%s: too many options", drv->name);
		return -EINVAL;
	}
	if (used - old_len + klen + vlen + 2 > sizeof(cfg->options)) {
		snprintf(err, err_len, "%s: options too long (%zu bytes at most)",
			 drv->name, sizeof(cfg->options));
		return -EINVAL;
	}
	if (old) {
		memmove(old, old + old_len,
			used - (size_t)(old - cfg->options) - old_len);
		used -= old_len;
		cfg->n_options--;
	}
	memcpy(cfg->options + used, key, klen + 1);
	memcpy(cfg->options + used + klen + 1, value, vlen + 1);
	used += klen + vlen + 2;
	/* What a longer replaced entry left behind. */
	memset(cfg->options + used, 0, sizeof(cfg->options) - used);
	cfg->n_options++;
	return 0;
}

const char *source_config_get(const struct source_config *cfg,
			      const char *key)
{
	size_t used;
	const char *e = find_option(cfg, key, &used);

	return e ? e + strlen(e) + 1 : NULL;
}

const char *source_config_option(const struct source_config *cfg,
				 unsigned int i, const char **value)
{
	const char *p = cfg->options;

	if (i >= cfg->n_options)
		return NULL;
	while (i--) {
		p += strlen(p) + 1;
		p += strlen(p) + 1;
	}
	*value = p + strlen(p) + 1;
	return p;
}

unsigned int source_credit_cap(const struct source_config *cfg)
{
	double h = source_config_min_entropy(cfg);
	unsigned int bits = cfg->driver->sample_bits ? cfg->driver->sample_bits
						     : 8;
	/* H typed in decimal is inexact in binary: a product within 1e-9
	 * below an integer is that integer (6.25 * 128 is 800, not 799). */
	double cap = floor(SOURCE_CREDIT_MAX * h / bits + 1e-9);

	if (!(cap > 0))
		return 0;
	return cap >= SOURCE_CREDIT_MAX ? SOURCE_CREDIT_MAX : (unsigned int)cap;
}

bool source_host_provided(const struct source_config *cfg,
			  const char *hw_device)
{
	const struct source_driver *drv = cfg->driver;

	if (!cfg->confidential || !drv->host_provided)
		return false;
	return !(drv->guest_owned && drv->guest_owned(cfg, hw_device));
}

void source_configs_trust(struct source_config *cfgs, size_t n,
			  bool confidential)
{
	const struct source_driver *tpm = source_driver_find("tpm");
	bool tpm_own = false;

	for (size_t i = 0; i < n; i++)
		if (tpm && cfgs[i].driver == tpm)
			tpm_own = cfgs[i].guest_owned;
	for (size_t i = 0; i < n; i++) {
		cfgs[i].confidential = confidential;
		cfgs[i].tpm_guest_owned = tpm_own;
	}
}

unsigned int source_config_credit(const struct source_config *cfg)
{
	unsigned int credit, cap = source_credit_cap(cfg);

	/* The host is the adversary: what it provides earns nothing, also
	 * with a credit= the user gave (guest-owned=yes says otherwise). */
	if (source_host_provided(cfg, NULL))
		return 0;
	if (cfg->credit >= 0)
		credit = (unsigned int)cfg->credit;
	else if (cfg->driver->device_credit)
		credit = cfg->driver->device_credit(cfg);
	else
		credit = cfg->driver->default_credit;
	/* Defence in depth: source_config_validate() refuses a user credit
	 * above the cap, and no default may exceed it either. */
	return credit < cap ? credit : cap;
}

int source_config_validate(const struct source_config *cfg, char *err,
			   size_t err_len)
{
	const struct source_driver *drv = cfg->driver;
	unsigned int cap = source_credit_cap(cfg);

	if (cfg->credit < 0 || (unsigned int)cfg->credit <= cap)
		return 0;
	/* The smallest H whose cap reaches the credit: credit * bits / 1024
	 * has at most 10 binary places, so %.10g prints it exactly. */
	snprintf(err, err_len,
		 "%s: credit %d is above %u, the most its health tests' "
		 "min-entropy %g (bits per %u-bit sample) allows; lower the "
		 "credit, or raise min-entropy to at least %.10g, which makes "
		 "the health tests stricter",
		 drv->name, cfg->credit, cap, source_config_min_entropy(cfg),
		 drv->sample_bits,
		 (double)cfg->credit * drv->sample_bits / SOURCE_CREDIT_MAX);
	return -EINVAL;
}

int source_config_warning(const struct source_config *cfg, char *buf,
			  size_t len)
{
	if (len)
		buf[0] = '\0';
	if (!cfg->driver->config_warning)
		return 0;
	return cfg->driver->config_warning(cfg, buf, len) > 0 ? 1 : 0;
}

double source_config_min_entropy(const struct source_config *cfg)
{
	if (cfg->min_entropy > 0)
		return cfg->min_entropy;
	return cfg->driver->device_min_entropy
		       ? cfg->driver->device_min_entropy(cfg)
		       : cfg->driver->min_entropy;
}

const char *source_config_device(const struct source_config *cfg)
{
	const char *dev = source_config_get(cfg, "device");

	return dev ? dev : cfg->driver->default_device;
}

/* ---- refusing the kernel's own output ---------------------------------- */

/* /dev/random is char 1:8, /dev/urandom char 1:9 (devices.txt). */
static bool stat_is_kernel_output(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 &&
	       (minor(st->st_rdev) == 8 || minor(st->st_rdev) == 9);
}

int source_path_is_kernel_output(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	return stat_is_kernel_output(&st);
}

int source_fd_is_kernel_output(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	return stat_is_kernel_output(&st);
}

/* ---- fd helpers for device and file drivers ---------------------------- */

/* May this process read @path by its mode alone (owner, group or other
 * bits for the effective ids)?  False when that cannot be told. */
static bool mode_lets_us_read(const char *path)
{
	gid_t groups[64];
	struct stat st;
	int n;

	if (stat(path, &st) < 0)
		return false;
	if (st.st_uid == geteuid())
		return st.st_mode & S_IRUSR;
	if (st.st_gid == getegid())
		return st.st_mode & S_IRGRP;
	n = getgroups((int)(sizeof(groups) / sizeof(groups[0])), groups);
	for (int i = 0; i < n; i++)
		if (groups[i] == st.st_gid)
			return st.st_mode & S_IRGRP;
	return st.st_mode & S_IROTH;
}

/* An open its file's mode allows (or this process could override) fails
 * with EACCES only by a MAC policy: say so, since the policy's own log is
 * elsewhere.  (AppArmor hides the capabilities its profile denies from
 * capget(), so a confined root may not seem able to override the mode.) */
void source_say_open_error(char *why, size_t why_len, const char *path,
			   int err)
{
	const char *hint = "";

	if (err == EACCES)
		hint = mode_lets_us_read(path) || privs_have_cap(CAP_DAC_OVERRIDE)
			? " (not by its mode, which lets this process read it: "
			  "a security policy such as AppArmor or SELinux denies "
			  "it; see the kernel's audit log)"
			: " (by its mode or owner, or by a security policy such "
			  "as AppArmor or SELinux; see the kernel's audit log)";
	snprintf(why, why_len, "cannot open %s: %s%s", path, strerror(err),
		 hint);
}

int source_fd_open(const char *path, int extra_flags, char *why,
		   size_t why_len)
{
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | extra_flags);
	if (fd < 0) {
		r = -errno;
		source_say_open_error(why, why_len, path, -r);
		return r;
	}
	/* Checked on the open fd, so a link swapped after a path check
	 * cannot slip the kernel's own output in. */
	r = source_fd_is_kernel_output(fd);
	if (r != 0) {
		if (r > 0) {
			snprintf(why, why_len, "refusing %s: %s", path,
				 SOURCE_LOOPBACK_REASON);
			r = -ELOOP;
		} else {
			snprintf(why, why_len, "cannot stat %s: %s", path,
				 strerror(-r));
		}
		close(fd);
		return r;
	}
	return fd;
}

int source_dev_open(const char *path, int extra_flags, char *why,
		    size_t why_len)
{
	int fd = source_fd_open(path, extra_flags | O_NONBLOCK, why, why_len);

	if (fd >= 0 && !(extra_flags & O_NONBLOCK))
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

ssize_t source_fd_read(int fd, void *buf, size_t len)
{
	ssize_t n = read(fd, buf, len);

	if (n >= 0)
		return n;
	if (errno == EWOULDBLOCK)
		return -EAGAIN;
	return -errno;
}

/* ---- instances ---------------------------------------------------------- */

struct source {
	struct source_config cfg;
	void *state;
};

int source_open(struct source **out, const struct source_config *cfg,
		char *why, size_t why_len)
{
	struct source *src;
	int r;

	src = calloc(1, sizeof(*src));
	if (!src) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	src->cfg = *cfg;
	why[0] = '\0';
	r = cfg->driver->open(&src->cfg, &src->state, why, why_len);
	if (r < 0) {
		if (!why[0])
			snprintf(why, why_len, "%s", strerror(-r));
		free(src);
		return r;
	}
	*out = src;
	return 0;
}

ssize_t source_read(struct source *src, void *buf, size_t len,
		    const atomic_bool *stop)
{
	uint8_t *p = buf;
	size_t got = 0;
	long backoff_ns = 1000000; /* 1 ms, doubled up to 100 ms */

	while (got < len) {
		ssize_t n;

		/* Relaxed: the flag carries no data, and whoever sets it
		 * wakes this thread again until it has gone (reader_stop). */
		if (stop && atomic_load_explicit(stop, memory_order_relaxed))
			break;
		n = src->cfg.driver->read(src->state, p + got, len - got);
		if (n > (ssize_t)(len - got)) {
			/* A driver bug: never let it run past the buffer. */
			explicit_bzero(buf, len);
			return -EPROTO;
		}
		if (n > 0) {
			got += (size_t)n;
			backoff_ns = 1000000;
		} else if (n == 0) {
			break;
		} else if (n == -EINTR) {
			continue;
		} else if (n == -EAGAIN) {
			struct timespec ts = { 0, backoff_ns };

			nanosleep(&ts, NULL);
			if (backoff_ns < 100000000)
				backoff_ns *= 2;
		} else {
			explicit_bzero(buf, got);
			return n;
		}
	}
	return (ssize_t)got;
}

void source_close(struct source *src)
{
	if (!src)
		return;
	src->cfg.driver->close(src->state);
	free(src);
}

const struct source_config *source_get_config(const struct source *src)
{
	return &src->cfg;
}

bool source_is_finite(struct source *src)
{
	return src->cfg.driver->finite && src->cfg.driver->finite(src->state);
}

const char *source_why_failed(struct source *src, int err, char *buf,
			      size_t len)
{
	if (src->cfg.driver->why_failed &&
	    src->cfg.driver->why_failed(src->state, buf, len) == 0)
		return buf;
	return strerror(err < 0 ? -err : err);
}

int source_opened_credit(struct source *src)
{
	/* hwrng and virtio decide by the device they opened (their op);
	 * the others by what they are. */
	if (!src->cfg.driver->opened_credit)
		return source_host_provided(&src->cfg, NULL) ? 0 : -1;
	return (int)src->cfg.driver->opened_credit(src->state, &src->cfg);
}

int source_describe(struct source *src, char *buf, size_t len)
{
	if (!src->cfg.driver->describe) {
		snprintf(buf, len, "%s", src->cfg.driver->name);
		return 0;
	}
	return src->cfg.driver->describe(src->state, buf, len);
}

int source_identity(struct source *src, char *buf, size_t len)
{
	if (src->cfg.driver->identity)
		return src->cfg.driver->identity(src->state, buf, len);
	return source_describe(src, buf, len);
}

/* ENOENT, ENODEV, ENXIO: the device (or file) is not there (yet). */
bool source_open_error_is_absent(int err)
{
	return err == -ENOENT || err == -ENODEV || err == -ENXIO;
}

/*
 * The reason an open failed.  Refused after a privilege drop (the device
 * was opened as root before it), say as whom: the fix is the device's
 * permissions or the configured user, not the device.
 */
void source_open_failure_reason(const struct source_config *cfg, int err,
				const char *why, bool reopen, char *reason,
				size_t len)
{
	const char *dev = source_config_device(cfg);
	uid_t uid = geteuid();

	if ((err == -EACCES || err == -EPERM) && dev && uid != 0) {
		struct passwd pw, *res = NULL;
		char pwbuf[1024], user[64];

		if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &res) == 0 &&
		    res)
			snprintf(user, sizeof(user), "%s", res->pw_name);
		else
			snprintf(user, sizeof(user), "uid %u",
				 (unsigned int)uid);
		snprintf(reason, len, "cannot %s %s as user %s: %s",
			 reopen ? "reopen" : "open", dev, user,
			 strerror(-err));
		return;
	}
	snprintf(reason, len, "%s", why);
}
