// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * serial: a USB serial TRNG stick (OneRNG, TrueRNG, or any tty that
 * streams), spoken to by its profile (serial_profile.h) over a raw,
 * exclusive, non-blocking tty (serial_tty.h).
 *
 * A plugged device (SOURCE_F_PLUGGED): it is opened in its reader's
 * thread, since the open talks to the stick (commands, a mode change by
 * line speeds, an answer awaited); while it is away the reader looks for
 * it every second and at each uevent; a hang-up or EIO mid-read says it
 * went away (-ENODEV), and it is looked for again, then tested from the
 * start when it returns.  A stream that stops for SERIAL_STALL_S is an
 * error (the stick is reopened and told again what to send).
 *
 * Which profile: profile=NAME, or "auto" (the default): the one whose
 * USB id the device shows, else generic.  The default credit is the
 * model's ceiling; a named profile on a tty whose USB id is not known
 * (a QEMU usb-serial, an adapter) gets the profile's ceiling, the user
 * having named it; a device whose id is another profile's gets 0; an
 * unknown tty 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "rngfeed/serial_profile.h"
#include "rngfeed/serial_tty.h"
#include "rngfeed/sources.h"

/* No byte for this long: the stream stalled. */
#define SERIAL_STALL_S 10
/* One read's wait for the line, so that a stall is noticed in time. */
#define SERIAL_POLL_MS 100
/* What the last commands get to go out at close. */
#define SERIAL_DRAIN_MS 150

static const char *const serial_keys[] = { "profile", "sysfs", NULL };

/* The profile and model for a configuration and the device behind it. */
struct serial_choice {
	const struct serial_profile *profile;
	const struct serial_model *model; /* NULL: not one of its ids */
	bool named;     /* profile= names it (not auto) */
	bool present;   /* the path is there */
	bool usb;       /* a USB id was found */
	bool foreign;   /* ...and it is another profile's model */
	struct serial_usb_id id;
};

struct serial_state {
	struct serial_tty tty;
	struct serial_session session;
	struct serial_choice choice;
	char path[256];
	long long quiet_since_ms; /* 0: the line is not silent */
	uint64_t line_seen;       /* the session's line bytes then */
	char why[SOURCE_WHY_LEN]; /* the last fault's words, "" none */
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *serial_sysfs(const struct source_config *cfg)
{
	const char *dir = source_config_get(cfg, "sysfs");

	return dir ? dir : "/sys";
}

static bool profile_named(const struct source_config *cfg)
{
	const char *p = source_config_get(cfg, "profile");

	return p && strcmp(p, "auto") != 0;
}

/* What profile and model @cfg comes to with the device @st (NULL: the
 * path is not there). */
static void choose(const struct source_config *cfg, const struct stat *st,
		   struct serial_choice *c)
{
	memset(c, 0, sizeof(*c));
	c->named = profile_named(cfg);
	c->present = st != NULL;
	if (st)
		c->usb = serial_usb_id(serial_sysfs(cfg), st->st_rdev,
				       &c->id) == 1;
	if (c->named) {
		/* check_option took only known names. */
		c->profile = serial_profile_find(source_config_get(cfg, "profile"));
		if (!c->profile)
			c->profile = &serial_profile_generic;
		if (c->usb) {
			const struct serial_profile *other =
				serial_profile_for_usb(c->id.vendor,
						       c->id.product, NULL);

			c->model = serial_profile_model(c->profile,
							c->id.vendor,
							c->id.product);
			c->foreign = !c->model && other && other != c->profile;
		}
		return;
	}
	c->profile = c->usb ? serial_profile_for_usb(c->id.vendor,
						     c->id.product, &c->model)
			    : NULL;
	if (!c->profile)
		c->profile = &serial_profile_generic;
}

/* The ceiling the choice allows, before the health tests' cap. */
static unsigned int choice_credit(const struct serial_choice *c)
{
	if (c->foreign)
		return 0;
	if (c->model)
		return c->model->credit;
	/* A named profile on a tty with no known id: the user named it.
	 * Auto found nothing it knows: generic, 0. */
	return c->named ? c->profile->credit : 0;
}

/* Choose for @cfg's device as it is now. */
static void choose_now(const struct source_config *cfg, struct serial_choice *c)
{
	const char *path = source_config_device(cfg);
	struct stat st;

	choose(cfg, path && stat(path, &st) == 0 && S_ISCHR(st.st_mode) ? &st
									 : NULL,
	       c);
}

/* "ttyACM0, OneRNG 1d50:6086" or "ttyUSB0, USB 0403:6001" or "pts/3". */
static void describe_device(const struct serial_choice *c, char *buf,
			    size_t len)
{
	if (c->usb)
		snprintf(buf, len, "%s, %s %04x:%04x", c->id.tty,
			 c->model ? c->model->name : "USB", c->id.vendor,
			 c->id.product);
	else if (c->id.tty[0])
		snprintf(buf, len, "%s, not a USB device", c->id.tty);
	else
		snprintf(buf, len, "not a USB device");
}

/* Why the choice is credited what it is, in a few words. */
static const char *choice_reason(const struct serial_choice *c)
{
	if (c->foreign)
		return "its USB id is another profile's: credited 0";
	if (c->model)
		return c->model->raw_mode ? "raw mode" : "no raw mode: whitened output";
	if (c->named)
		return "USB id not one of its models: the profile's ceiling, "
		       "as named";
	return "an unknown tty: credited 0 unless credit= is given";
}

static int serial_check_path(const char *path, struct stat *st, char *why,
			     size_t why_len)
{
	if (!path) {
		snprintf(why, why_len,
			 "no device given (-O serial:device=PATH, e.g. a "
			 "/dev/serial/by-id/ path)");
		return -ENOENT;
	}
	if (stat(path, st) < 0) {
		int r = -errno;

		snprintf(why, why_len, "%s: %s (not plugged in?)", path,
			 strerror(-r));
		return r;
	}
	if (!S_ISCHR(st->st_mode)) {
		snprintf(why, why_len, "%s is not a character device", path);
		return -ENOTTY;
	}
	if (source_path_is_kernel_output(path) == 1) {
		snprintf(why, why_len, "refusing %s: %s", path,
			 SOURCE_LOOPBACK_REASON);
		return -ELOOP;
	}
	return 0;
}

static int serial_probe(const struct source_config *cfg, char *why,
			size_t why_len)
{
	const char *path = source_config_device(cfg);
	struct serial_choice c;
	char dev[128];
	struct stat st;
	int r;

	r = serial_check_path(path, &st, why, why_len);
	if (r < 0)
		return r;
	choose(cfg, &st, &c);
	describe_device(&c, dev, sizeof(dev));
	snprintf(why, why_len, "%s (%s): profile %s%s, %s", path, dev,
		 c.profile->name, c.named ? "" : " (auto)", choice_reason(&c));
	return 0;
}

static int serial_open(const struct source_config *cfg, void **state,
		       char *why, size_t why_len)
{
	const char *path = source_config_device(cfg);
	struct serial_state *st;
	struct stat sb;
	int r;

	r = serial_check_path(path, &sb, why, why_len);
	if (r < 0)
		return r;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	snprintf(st->path, sizeof(st->path), "%s", path);
	r = serial_tty_open(&st->tty, path, why, why_len);
	if (r < 0)
		goto fail;
	/* The device actually opened: its id, from the open fd's node. */
	if (fstat(st->tty.fd, &sb) < 0) {
		r = -errno;
		snprintf(why, why_len, "cannot stat %s: %s", path,
			 strerror(-r));
		goto fail_tty;
	}
	choose(cfg, &sb, &st->choice);
	serial_session_init(&st->session, serial_tty_port(&st->tty),
			    st->choice.profile, st->choice.model);
	r = serial_session_start(&st->session, why, why_len);
	if (r < 0) {
		char dev[128];
		char what[SOURCE_WHY_LEN];

		describe_device(&st->choice, dev, sizeof(dev));
		snprintf(what, sizeof(what), "%s", why);
		snprintf(why, why_len, "%s (%s, profile %s): %s", path, dev,
			 st->choice.profile->name, what);
		/* Told half of it (or stopped meanwhile): left as found,
		 * as far as it still listens. */
		serial_session_stop(&st->session);
		goto fail_tty;
	}
	*state = st;
	return 0;
fail_tty:
	serial_tty_close(&st->tty, 0);
fail:
	explicit_bzero(st, sizeof(*st));
	free(st);
	return r;
}

static ssize_t serial_read(void *state, void *buf, size_t len)
{
	struct serial_state *st = state;
	ssize_t n;

	st->why[0] = '\0';
	n = serial_session_read(&st->session, buf, len, SERIAL_POLL_MS,
				st->why, sizeof(st->why));
	if (st->session.line_bytes != st->line_seen) {
		st->line_seen = st->session.line_bytes;
		st->quiet_since_ms = 0;
	}
	if (n > 0)
		return n;
	if (n == -EAGAIN) {
		long long now = now_ms();

		if (!st->quiet_since_ms)
			st->quiet_since_ms = now;
		if (now - st->quiet_since_ms < SERIAL_STALL_S * 1000LL)
			return -EAGAIN;
		snprintf(st->why, sizeof(st->why),
			 "no data for %d s: the stream stalled",
			 SERIAL_STALL_S);
		return -ETIMEDOUT;
	}
	if (n == -ENODEV)
		snprintf(st->why, sizeof(st->why),
			 "the device went away (hang-up)");
	return n;
}

static void serial_close(void *state)
{
	struct serial_state *st = state;

	if (!st)
		return;
	/* Left as it was found, as far as it can be told. */
	serial_session_stop(&st->session);
	serial_tty_close(&st->tty, SERIAL_DRAIN_MS);
	explicit_bzero(st, sizeof(*st));
	free(st);
}

static int serial_describe(void *state, char *buf, size_t len)
{
	struct serial_state *st = state;
	char dev[128];

	describe_device(&st->choice, dev, sizeof(dev));
	snprintf(buf, len, "%s (%s, profile %s%s%s)", st->path, dev,
		 st->choice.profile->name,
		 st->session.detail[0] ? ", " : "", st->session.detail);
	return 0;
}

static int serial_why_failed(void *state, char *buf, size_t len)
{
	struct serial_state *st = state;

	if (!st->why[0])
		return -ENOENT;
	snprintf(buf, len, "%s", st->why);
	return 0;
}

static unsigned int serial_device_credit(const struct source_config *cfg)
{
	struct serial_choice c;

	choose_now(cfg, &c);
	return choice_credit(&c);
}

static double serial_device_min_entropy(const struct source_config *cfg)
{
	struct serial_choice c;

	/* A named profile's H holds whatever is plugged in; auto's follows
	 * the device there now (generic's while there is none). */
	if (profile_named(cfg)) {
		const struct serial_profile *p =
			serial_profile_find(source_config_get(cfg, "profile"));

		return p ? p->min_entropy : serial_profile_generic.min_entropy;
	}
	choose_now(cfg, &c);
	return c.profile->min_entropy;
}

/* What was opened decides: its own id, at open. */
static unsigned int serial_opened_credit(void *state,
					 const struct source_config *cfg)
{
	struct serial_state *st = state;
	unsigned int credit = choice_credit(&st->choice);
	unsigned int cap = source_credit_cap(cfg);

	if (source_host_provided(cfg, NULL))
		return 0;
	return credit < cap ? credit : cap;
}

static bool serial_guest_owned(const struct source_config *cfg,
			       const char *hw_device)
{
	(void)hw_device;
	return cfg->guest_owned;
}

static int serial_check_option(const char *key, const char *value, char *err,
			       size_t err_len)
{
	if (strcmp(key, "sysfs") == 0)
		return source_check_abs_path(key, value, err, err_len);
	if (strcmp(value, "auto") == 0 || serial_profile_find(value))
		return 0;
	snprintf(err, err_len,
		 "profile must be auto, onerng, truerng or generic, not '%s'",
		 value);
	return -EINVAL;
}

static int serial_config_warning(const struct source_config *cfg, char *buf,
				 size_t len)
{
	struct serial_choice c;

	if (cfg->credit >= 0 || !source_config_device(cfg))
		return 0;
	choose_now(cfg, &c);
	if (c.foreign) {
		snprintf(buf, len,
			 "%s is a %s, not a %s stick: credited 0 (profile=%s "
			 "or auto)",
			 source_config_device(cfg), c.id.product_name[0]
							    ? c.id.product_name
							    : "device of another profile",
			 c.profile->name,
			 serial_profile_for_usb(c.id.vendor, c.id.product, NULL)
				 ->name);
		return 1;
	}
	if (!c.named && !c.present) {
		snprintf(buf, len,
			 "%s is not there and profile is auto: it is credited "
			 "0 when it comes (name its profile to credit a stick "
			 "plugged in later)",
			 source_config_device(cfg));
		return 1;
	}
	return 0;
}

const struct source_driver source_serial = {
	.name = "serial",
	.description = "USB serial TRNG (OneRNG, TrueRNG, a tty)",
	/*
	 * An unknown tty earns 0.  A known stick gets its profile's ceiling
	 * (serial_profile.c, docs/plugged.md): OneRNG 768 (avalanche noise,
	 * its whitener off, H = 6), TrueRNGpro 512 (raw ADC samples, H = 4),
	 * TrueRNG v1-v3 64 (whitened only).  The on-line estimate and the
	 * full assessment cap each, as for every source.
	 */
	.default_credit = 0,
	.credit_reason = "0 for an unknown tty; a known stick its profile's "
			 "ceiling: OneRNG 768 (raw avalanche, H = 6), "
			 "TrueRNGpro 512 (raw ADC, H = 4), TrueRNG v1-v3 64 "
			 "(whitened only)",
	.sample_bits = 8,
	.min_entropy = 6.0,
	.flags = SOURCE_F_DEVICE | SOURCE_F_NEEDS_DEVICE | SOURCE_F_PLUGGED,
	.option_keys = serial_keys,
	.probe = serial_probe,
	.open = serial_open,
	.read = serial_read,
	.close = serial_close,
	.describe = serial_describe,
	.why_failed = serial_why_failed,
	.device_credit = serial_device_credit,
	.device_min_entropy = serial_device_min_entropy,
	.opened_credit = serial_opened_credit,
	.check_option = serial_check_option,
	.config_warning = serial_config_warning,
	/* In a VM a stick's bytes reach the guest through the host's USB
	 * or serial emulation, or its passthrough: the host sees them. */
	.host_provided = "a USB or serial device: in a VM its bytes pass "
			 "through the host; guest-owned=yes for a device the "
			 "host cannot reach",
	.guest_owned = serial_guest_owned,
};
