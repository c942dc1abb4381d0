/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Entropy source drivers and source instances.
 *
 * A driver is data (name, description, default credit, sample size, the
 * options it accepts) plus four operations, the way the kernel's struct
 * hwrng or chrony's refclock drivers are described.  Every driver lives in
 * its own file under src/sources/ and is listed once in source_drivers[].
 *
 * Credit is counted like the kernel's hw_random "quality": entropy bits per
 * 1024 raw bits.  1024 means every raw bit is a full bit of entropy.
 */
#ifndef RNGFEED_SOURCE_H
#define RNGFEED_SOURCE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SOURCE_CREDIT_MAX 1024u
#define SOURCE_MAX_OPTIONS 8
#define SOURCE_WHY_LEN 256

/* Driver flags. */
#define SOURCE_F_DEVICE    0x1u /* reads a path given by the "device" option */
#define SOURCE_F_NEEDS_DEVICE 0x2u /* ...and has no default path */
/*
 * A plugged device that comes and goes (a USB serial TRNG).  Its open
 * talks to the device (commands, mode changes, answers that take time),
 * so the source set never opens it in the main thread: its reader does,
 * in its own thread.  While it is away (open: ENOENT, ENODEV, ENXIO) the
 * reader looks for it every second and at each uevent, without
 * --wait-for-source; a read that finds it gone (-ENODEV) looks for it
 * again the same way, not after the doubling back-off.
 */
#define SOURCE_F_PLUGGED   0x4u

/* Limits of one "key=value" option (-O name:key=value), NUL included. */
#define SOURCE_OPTION_KEY_LEN 32
#define SOURCE_OPTION_VALUE_LEN 256
/*
 * Room for a source's option text: three options with values of the
 * longest length (virtio's device, select and sysfs), which
 * check_source holds every driver in the table to.  The text is packed
 * because a configuration is copied per slot and per reader, and the
 * fixed array of SOURCE_MAX_OPTIONS full-size entries it replaced was
 * 2.3 KB of mostly zeros per source (16 of them on the main stack, 16
 * more in the source set: issue 20's private memory).
 */
#define SOURCE_OPTIONS_LEN 1024

/*
 * What the user configured for one source.  credit < 0 means the driver's
 * default.  "device" and the driver-specific options are kept as text for
 * source_config_get(); credit, enable and guest-owned are parsed.
 */
struct source_config {
	const struct source_driver *driver;
	bool enabled;
	int credit;
	double min_entropy; /* health-test H per sample; 0 = driver's */
	/* guest-owned=yes: what it reads is the guest's own hardware,
	 * not the host's (drivers with a guest_owned op: hwrng, tpm,
	 * egd); see source_host_provided(). */
	bool guest_owned;
	/*
	 * Not an option: the kernel's rng_quality (0..1024) of the current
	 * hw_random device as it was before rngfeed gated it (set it to 0 to
	 * stop the kernel crediting the device itself), or -1 (the default):
	 * read sysfs when the credit is asked.  The hwrng and virtio drivers
	 * derive their default credit from it (hwrandom.h), so whoever gates
	 * the device sets this first, or asks source_config_credit() before
	 * gating and keeps the answer.
	 */
	int hw_quality;
	/*
	 * Not an option either: the directory of the file ledger
	 * (file_ledger.h) that a credited regular file is read through, so
	 * that its bytes are read once per machine; NULL = none (nothing is
	 * credited in that run, or the caller keeps no ledger).  Set by the
	 * source set; the string outlives every copy of this config.
	 */
	const char *ledger_dir;
	/*
	 * Not an option: credit holds the device's default (the caller
	 * filled it in from source_config_credit()), not the user's credit=.
	 * Such a credit was decided for the device found then; each open
	 * re-derives it from what was actually opened (opened_credit).
	 */
	bool credit_from_device;
	/*
	 * Not options: this runs in a confidential guest (confidential.h),
	 * where what the host provides earns 0 (source_host_provided()),
	 * and whether the tpm source is configured as the guest's own
	 * (guest-owned=yes), which holds for its tpm-rng-N through hwrng
	 * too: one device, one rule.  Set with source_configs_trust().
	 */
	bool confidential;
	bool tpm_guest_owned;
	unsigned int n_options;
	/* n_options entries "key\0value\0", back to back, in the order
	 * first set; read them with source_config_get(). */
	char options[SOURCE_OPTIONS_LEN];
};

/*
 * Driver operations.  All return 0 or a count on success, -errno on failure.
 *
 * probe: is the source usable here?  On -errno, @why holds one sentence a
 *        user can act on (e.g. "CPU does not support RDSEED").  On success
 *        @why may hold a detail worth showing (e.g. the hw_random device).
 * open:  allocate per-instance state (opaque to the rest of the program).
 * read:  read at most @len bytes, unbuffered, no more than asked.  Returns
 *        bytes read (> 0; may be fewer than @len), 0 at end of input,
 *        -EAGAIN when nothing is available right now, -EINTR when a signal
 *        interrupted it, or another -errno for a fault (-EIO, -ENODEV for a
 *        vanished device, -EBADMSG for a source-level fault such as a CPU
 *        instruction returning a constant).
 * close: release the state; wipes any buffer that held raw data.
 * describe (optional): one line naming what is behind an open instance.
 * identity (optional): what describe says, without what changes between
 *        two opens of the same input (the file source's count of blocks
 *        read before):
 *        two opens with the same identity read the same generator, and
 *        what its full assessment learned carries over (reader.h).
 * why_failed (optional): the driver's own words for the fault its last
 *        read returned ("the server closed the connection"), said instead
 *        of the errno's text; 0, or -ENOENT when it has none.
 * finite (optional): true when this open instance's end of input is final:
 *        reopening it would only give the same bytes again (a regular
 *        file).  Such a source is read once and never reopened.
 * device_credit (optional): see below; source_config_credit() asks it.
 * opened_credit (optional): the default credit for what this open
 *        instance actually opened (hwrng: 0 unless it is the character
 *        device 10:183, then the rule for the hw_random device current
 *        when it was opened), checked on every open and reopen.
 */
struct source_driver {
	const char *name;
	const char *description;
	unsigned int default_credit;   /* entropy bits per 1024 raw bits */
	unsigned int sample_bits;      /* SP 800-90B sample size */
	/* Min-entropy per sample the health tests assume of the raw output
	 * (SP 800-90B H): the cutoffs follow from it. */
	double min_entropy;
	unsigned int flags;
	const char *default_device;    /* for SOURCE_F_DEVICE drivers */
	const char *const *option_keys; /* driver-specific keys, NULL-ended */
	const char *credit_reason;     /* why default_credit is what it is */
	/* The kernel hw_random device (name prefix) that reads the same
	 * generator as this driver (s390x: "s390-trng"), or NULL: while that
	 * device is /dev/hwrng's current one, a source reading /dev/hwrng
	 * and this one would split one generator between two monitors. */
	const char *hw_random_twin;

	int (*probe)(const struct source_config *cfg, char *why, size_t why_len);
	int (*open)(const struct source_config *cfg, void **state, char *why,
		    size_t why_len);
	ssize_t (*read)(void *state, void *buf, size_t len);
	void (*close)(void *state);
	int (*describe)(void *state, char *buf, size_t len);
	int (*identity)(void *state, char *buf, size_t len);
	int (*why_failed)(void *state, char *buf, size_t len);
	bool (*finite)(void *state);
	/* optional: the default credit for the device behind @cfg now, when
	 * it depends on the device (hwrng: a TPM is a DRBG, not noise). */
	unsigned int (*device_credit)(const struct source_config *cfg);
	/* optional: the health tests' H per sample for @cfg, when it
	 * depends on the device or an option (serial: the profile's);
	 * min_entropy above otherwise. */
	double (*device_min_entropy)(const struct source_config *cfg);
	unsigned int (*opened_credit)(void *state,
				      const struct source_config *cfg);
	int (*check_option)(const char *key, const char *value, char *err,
			    size_t err_len);
	int (*config_warning)(const struct source_config *cfg, char *buf,
			      size_t len);
	/*
	 * Trust (confidential.h): what the host may provide in a VM, said
	 * as data like credit_reason ("the host's virtio-rng device"), or
	 * NULL for what only the guest's own hardware gives (a CPU
	 * instruction).  In a confidential guest such a source is credited
	 * 0, unless guest_owned (optional) says that what @cfg reads (the
	 * hw_random device @hw_device; NULL = the current one) is the
	 * guest's own after all.
	 */
	const char *host_provided;
	bool (*guest_owned)(const struct source_config *cfg,
			    const char *hw_device);
};

/* The driver table, in the order --list shows them; NULL-terminated. */
extern const struct source_driver *const source_drivers[];

const struct source_driver *source_driver_find(const char *name);
size_t source_driver_count(void);
/* Index of @drv in source_drivers[], or -ENOENT. */
int source_driver_index(const struct source_driver *drv);

/* Initialise @cfg to the driver's defaults (enabled, default credit). */
void source_config_init(struct source_config *cfg,
			const struct source_driver *drv);
/*
 * Set one option from "key=value" text, as given to -O.  Common keys are
 * credit (0..1024; checked against the cap by source_config_validate()),
 * device (path), enable (yes/no) and min-entropy (the health tests' H per
 * sample, from source_min_entropy_floor() to sample_bits); others must be
 * in the driver's option_keys and pass its check_option.  Returns -EINVAL
 * with a message in @err, or -ELOOP for a device path that is the
 * kernel's own output.
 */
int source_config_set(struct source_config *cfg, const char *key,
		      const char *value, char *err, size_t err_len);
/* Value of a driver-specific option, or NULL when not given. */
const char *source_config_get(const struct source_config *cfg,
			      const char *key);
/* The key of option @i (0 .. n_options - 1) and its value in *@value, or
 * NULL past the last. */
const char *source_config_option(const struct source_config *cfg,
				 unsigned int i, const char **value);
/*
 * The effective credit, health-test min-entropy and device path.  The
 * credit is the user's, or the driver's default (device_credit when the
 * driver has it), and never above source_credit_cap().
 */
unsigned int source_config_credit(const struct source_config *cfg);
double source_config_min_entropy(const struct source_config *cfg);
const char *source_config_device(const struct source_config *cfg);

/*
 * The credit rule: a source is never credited more than the min-entropy
 * its health tests assume, floor(1024 * H / sample_bits) with H =
 * source_config_min_entropy().  A device at exactly the tested H must not
 * be over-credited.
 */
unsigned int source_credit_cap(const struct source_config *cfg);

/*
 * The smallest H per sample the health tests work with: below it the
 * adaptive proportion test's permanent cutoff (alpha 2^-60) exceeds its
 * window (512 samples, 1024 for binary samples) and the test can never
 * fail, and the repetition count cutoff grows past any block.  It is
 * 60 / window: 0.1171875 bits per byte, 0.05859375 per bit.
 */
double source_min_entropy_floor(unsigned int sample_bits);

/*
 * Checks that need the whole configuration of one source, run once every
 * option is parsed (so the order of credit= and min-entropy= does not
 * matter): a credit above source_credit_cap() is refused with one line
 * that says the cap and how to raise it.  0 or -EINVAL with @err set.
 */
int source_config_validate(const struct source_config *cfg, char *err,
			   size_t err_len);

/*
 * Trust: in a confidential guest (@cfg->confidential), is what @cfg
 * reads provided by the host (the driver's host_provided, not taken back
 * by its guest_owned for @hw_device: NULL = the current hw_random
 * device)?  Such a source is credited 0 whatever its credit=
 * (source_config_credit(), source_opened_credit()); its tested data may
 * still go in uncredited.  Always false outside a confidential guest.
 */
bool source_host_provided(const struct source_config *cfg,
			  const char *hw_device);
/* Set the trust of every source in @cfgs (n of them): @confidential, and
 * the tpm source's guest-owned for all. */
void source_configs_trust(struct source_config *cfgs, size_t n,
			  bool confidential);

/* The driver's start-up warning for @cfg, if any: 1 with @buf set, or 0. */
int source_config_warning(const struct source_config *cfg, char *buf,
			  size_t len);

/*
 * Helpers for check_option: yes/no, and an integer in [min, max].  0 or
 * -EINVAL with a message naming @key and @value.
 */
int source_check_bool(const char *key, const char *value, char *err,
		      size_t err_len);
int source_check_uint(const char *key, const char *value, long long min,
		      long long max, char *err, size_t err_len);
/* An absolute path (for sysfs= options). */
int source_check_abs_path(const char *key, const char *value, char *err,
			  size_t err_len);

/*
 * Is @path, after following links, the kernel's own random output
 * (/dev/random 1:8, /dev/urandom 1:9)?  1 yes, 0 no, -errno if it cannot
 * be checked.  source_fd_is_kernel_output() does the same on an open fd.
 */
int source_path_is_kernel_output(const char *path);
int source_fd_is_kernel_output(int fd);
/* The message every caller prints when refusing such a path. */
#define SOURCE_LOOPBACK_REASON \
	"it is the kernel's own random output; feeding it back would credit " \
	"entropy that is not there"

/*
 * An open source instance.  source_read() fills the whole buffer, looping
 * over short reads, EINTR and EAGAIN (with a short back-off), unless
 * *@stop becomes true; it returns @len, or fewer bytes at end of input or
 * on stop, or -errno on a fault.  Bytes read before a fault are not
 * returned: data from a failing read is never used.
 */
struct source;

int source_open(struct source **out, const struct source_config *cfg,
		char *why, size_t why_len);
ssize_t source_read(struct source *src, void *buf, size_t len,
		    const atomic_bool *stop);
void source_close(struct source *src);
const struct source_config *source_get_config(const struct source *src);
int source_describe(struct source *src, char *buf, size_t len);
/* What is behind @src for the assessor's memory: the driver's identity
 * op, else source_describe(). */
int source_identity(struct source *src, char *buf, size_t len);
/* Why the last read failed with @err: the driver's words (in @buf), else
 * the errno's text. */
const char *source_why_failed(struct source *src, int err, char *buf,
			      size_t len);
/* Is end of input final for @src (driver's finite op)?  false if unknown. */
bool source_is_finite(struct source *src);
/* The driver's default credit for what @src actually opened (its
 * opened_credit op; 0 for a host-provided source in a confidential
 * guest), or -1 when the driver has none. */
int source_opened_credit(struct source *src);

/*
 * Helpers shared by fd-based drivers: open a path for unbuffered reading
 * (refusing the kernel's own output) and one read(2) mapped to the
 * driver read contract.
 */
int source_fd_open(const char *path, int extra_flags, char *why,
		   size_t why_len);
/*
 * "cannot open PATH: ERROR" into @why; for EACCES it adds who may have
 * said no: a security policy (AppArmor, SELinux) when the file's mode lets
 * this process read it or the process could override the mode
 * (CAP_DAC_OVERRIDE), else the mode or the policy.
 */
void source_say_open_error(char *why, size_t why_len, const char *path,
			   int err);
/*
 * source_fd_open() for a device, whoever calls it: the open itself never
 * waits (O_NONBLOCK: a FIFO or a slow device named by mistake), then the
 * fd blocks as reads expect.
 */
int source_dev_open(const char *path, int extra_flags, char *why,
		    size_t why_len);
ssize_t source_fd_read(int fd, void *buf, size_t len);

/* ENOENT, ENODEV, ENXIO: the device (or file) is not there (yet). */
bool source_open_error_is_absent(int err);
/* The reason an open of @cfg failed with @err (@why, the driver's
 * words): refused after a privilege drop, it says as whom. */
void source_open_failure_reason(const struct source_config *cfg, int err,
				const char *why, bool reopen, char *reason,
				size_t len);

#endif
