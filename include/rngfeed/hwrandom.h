/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel's hw_random state in sysfs (/sys/class/misc/hw_random):
 * rng_available lists the registered devices, rng_current names the one
 * /dev/hwrng reads from, and writing a name to rng_current selects it.
 * Every function takes the directory so tests can use fixtures.
 */
#ifndef RNGFEED_HWRANDOM_H
#define RNGFEED_HWRANDOM_H

#include <stdbool.h>
#include <stddef.h>

#define HWRANDOM_SYSFS_DIR "/sys/class/misc/hw_random"
#define HWRANDOM_NAME_LEN 64

/*
 * Name of the current hw_random device (rng_current) under @sysfs_dir.
 * Returns its length, -ENODEV when the kernel reports "none" or an empty
 * name, or -errno when the file cannot be read.
 */
int hwrandom_current(const char *sysfs_dir, char *name, size_t len);

/*
 * The first device in rng_available whose name starts with @prefix
 * (e.g. "virtio_rng."), copied to @name.  Returns its length, -ENODEV
 * when there is none, -ENAMETOOLONG for a name that does not fit, or
 * -errno when the file cannot be read.
 */
int hwrandom_find(const char *sysfs_dir, const char *prefix, char *name,
		  size_t len);

/* Is @name (exactly) in rng_available?  1 yes, 0 no, -errno. */
int hwrandom_listed(const char *sysfs_dir, const char *name);

/*
 * The device rngfeed prefers to read through /dev/hwrng: the current one,
 * unless it is a TPM's (tpm-rng-N: a slow DRBG's output, which the tpm
 * source reads directly) and another device is registered (a host-backed
 * virtio-rng, a CPU's or a board's TRNG): then the first such in
 * rng_available.  The kernel prefers the higher quality, and 6.12 gives a
 * TPM 1024 against virtio-rng's 1000.  Its name in @name; 1 when it is
 * not the current one, 0 when it is, -ENODEV (no device) or -errno.
 */
int hwrandom_best(const char *sysfs_dir, char *name, size_t len);

/*
 * In a confidential guest (confidential.h), is the hw_random device @name
 * the host's?  Yes for every device but the CPU's own generator behind a
 * kernel driver (s390-trng) and, when @tpm_own (the tpm source's
 * guest-owned=yes: an SVSM vTPM in an SEV-SNP guest), a TPM's tpm-rng-N;
 * with @all_own (the hwrng source's guest-owned=yes) every device but
 * virtio_rng.N, which always is the host's.  So is no name.
 */
bool hwrandom_host_backed(const char *name, bool tpm_own, bool all_own);

/* Is @path the kernel's hw_random misc device (a character device 10:183)? */
bool hwrandom_is_misc_device(const char *path);

/* Make @name the current device (write rng_current).  0 or -errno. */
int hwrandom_select(const char *sysfs_dir, const char *name);

#define HWRANDOM_QUALITY_MAX 1024u

/*
 * rng_quality under @sysfs_dir: the current device's quality, entropy
 * bits per 1024 bits, which the kernel's hw_random core credits by itself
 * (0 = the kernel credits nothing itself).  Returns 0..1024, -ENOENT on
 * kernels without the file (before 5.18), -EINVAL for text that is not a
 * number in range, or -errno.
 */
int hwrandom_quality(const char *sysfs_dir);

/*
 * One device, one credit: the default credit of a hw_random device, the
 * same whichever driver reads it (hwrng, virtio).  What the kernel knows
 * of the device decides, capped by what the health tests assume:
 *
 *   a TPM (tpm-rng-N)       rule->tpm: its output is a DRBG's, credited
 *                           as the tpm source credits the same TPM;
 *   rng_quality 1..1024     that quality: the driver's declaration, or the
 *                           admin's (rng_core.default_quality caps it);
 *   0, or unknown (-1)      rule->fallback, the driver's default: 0 means
 *                           only that the kernel credits nothing itself
 *                           (kernels 5.18-6.1 give 0 to devices that
 *                           declare nothing; rng_core.default_quality=0;
 *                           or rngfeed's own gate), not that the device
 *                           is bad;
 *
 * and never more than rule->cap (source_credit_cap(): 1024 * H / sample
 * bits).
 *
 * @quality is rng_quality as found BEFORE rngfeed gated the device (the
 * gate sets it to 0 so that the kernel stops crediting the device
 * itself): the caller that holds the gate passes what it found; anyone
 * else asks before the gate is taken and keeps the answer, or passes -1.
 */
struct hwrandom_credit_rule {
	unsigned int fallback; /* the driver's default credit */
	unsigned int tpm;      /* credit of a TPM's hw_random device */
	unsigned int cap;      /* what the health tests' H allows */
};

unsigned int hwrandom_device_credit(const char *name, int quality,
				    const struct hwrandom_credit_rule *rule);

/*
 * The same, reading what it needs under @sysfs_dir: the current device's
 * name (when @name is NULL, or to check that @name is current) and its
 * rng_quality.  rng_quality belongs to the current device only, so for a
 * @name that is not current the quality counts as unknown.  Mind the gate
 * (above): once rngfeed set rng_quality to 0 this reads 0.
 */
unsigned int hwrandom_device_credit_sysfs(const char *sysfs_dir,
					  const char *name,
					  const struct hwrandom_credit_rule *rule);

#endif
