// SPDX-License-Identifier: GPL-2.0-or-later
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "rngfeed/hwrandom.h"
#include "rngfeed/sysfs_io.h"
#include "rngfeed/util.h"

static int sysfs_path(char *path, size_t len, const char *dir,
		      const char *file)
{
	if ((size_t)snprintf(path, len, "%s/%s", dir, file) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int hwrandom_current(const char *sysfs_dir, char *name, size_t len)
{
	char path[512];
	ssize_t n;
	int r;

	r = sysfs_path(path, sizeof(path), sysfs_dir, "rng_current");
	if (r < 0)
		return r;
	n = sysfs_read_text(path, name, len);
	if (n < 0)
		return (int)n;
	if (n == 0 || strcmp(name, "none") == 0)
		return -ENODEV;
	return (int)n;
}

/* rng_available into @list: 0 or -errno.  Space-separated names, as
 * the kernel prints them. */
static int read_available(const char *sysfs_dir, char *list, size_t len)
{
	char path[512];
	ssize_t n;
	int r;

	r = sysfs_path(path, sizeof(path), sysfs_dir, "rng_available");
	if (r < 0)
		return r;
	n = sysfs_read_text(path, list, len);
	return n < 0 ? (int)n : 0;
}

int hwrandom_find(const char *sysfs_dir, const char *prefix, char *name,
		  size_t len)
{
	char list[1024], *save = NULL, *tok;
	int r = read_available(sysfs_dir, list, sizeof(list));

	if (r < 0)
		return r;
	for (tok = strtok_r(list, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (strncmp(tok, prefix, strlen(prefix)) != 0)
			continue;
		if (strlen(tok) >= len)
			return -ENAMETOOLONG;
		strcpy(name, tok);
		return (int)strlen(tok);
	}
	return -ENODEV;
}

int hwrandom_listed(const char *sysfs_dir, const char *name)
{
	char list[1024], *save = NULL, *tok;
	int r = read_available(sysfs_dir, list, sizeof(list));

	if (r < 0)
		return r;
	for (tok = strtok_r(list, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save))
		if (strcmp(tok, name) == 0)
			return 1;
	return 0;
}

static bool is_tpm(const char *name)
{
	return strncmp(name, "tpm-rng", 7) == 0;
}

/*
 * The guest's own hw_random devices: a CPU instruction behind a kernel
 * driver, which the CPU executes for the guest without asking the host
 * (s390x's PRNO TRNG, also in a Secure Execution guest).  Every other
 * driver reads a device: virtio_rng is the host's by definition, a
 * chipset's or a board's (intel-rng, amd-rng, timeriomem...) is emulated
 * or passed through by the host, and pseries-rng (the H_RANDOM
 * hypercall) and arm_smccc_trng (a firmware call a hypervisor may
 * answer) ask someone else.
 */
static const char *const guest_own[] = { "s390-trng", NULL };

bool hwrandom_host_backed(const char *name, bool tpm_own, bool all_own)
{
	if (!name || !*name || strncmp(name, "virtio_rng.", 11) == 0)
		return true;
	if (all_own)
		return false;
	if (is_tpm(name))
		return !tpm_own;
	for (size_t i = 0; guest_own[i]; i++)
		if (strncmp(name, guest_own[i], strlen(guest_own[i])) == 0)
			return false;
	return true;
}

int hwrandom_best(const char *sysfs_dir, char *name, size_t len)
{
	char list[1024], *save = NULL, *tok;
	int cur, r;

	cur = hwrandom_current(sysfs_dir, name, len);
	if (cur < 0)
		return cur;
	if (!is_tpm(name))
		return 0;
	/* No list to choose from: the current device stays. */
	r = read_available(sysfs_dir, list, sizeof(list));
	if (r == -ENAMETOOLONG)
		return r;
	if (r < 0)
		return 0;
	for (tok = strtok_r(list, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (is_tpm(tok) || strcmp(tok, "none") == 0 ||
		    strlen(tok) >= len)
			continue;
		strcpy(name, tok);
		return 1;
	}
	return 0;
}

int hwrandom_select(const char *sysfs_dir, const char *name)
{
	char path[512];
	int r;

	r = sysfs_path(path, sizeof(path), sysfs_dir, "rng_current");
	if (r < 0)
		return r;
	return sysfs_write_text(path, name);
}

int hwrandom_quality(const char *sysfs_dir)
{
	char path[512], text[32];
	long long q;
	ssize_t n;
	int r;

	r = sysfs_path(path, sizeof(path), sysfs_dir, "rng_quality");
	if (r < 0)
		return r;
	n = sysfs_read_text(path, text, sizeof(text));
	if (n < 0)
		return (int)n;
	if (parse_ll(text, 0, HWRANDOM_QUALITY_MAX, &q) < 0)
		return -EINVAL;
	return (int)q;
}

unsigned int hwrandom_device_credit(const char *name, int quality,
				    const struct hwrandom_credit_rule *rule)
{
	unsigned int credit = rule->fallback;

	/* The kernel's TPM hw_random device answers with TPM2_GetRandom:
	 * whatever quality the kernel gives it, it is a DRBG's output. */
	if (name && strncmp(name, "tpm-rng", 7) == 0)
		credit = rule->tpm;
	else if (quality > 0 && quality <= (int)HWRANDOM_QUALITY_MAX)
		credit = (unsigned int)quality;
	return credit < rule->cap ? credit : rule->cap;
}

unsigned int hwrandom_device_credit_sysfs(const char *sysfs_dir,
					  const char *name,
					  const struct hwrandom_credit_rule *rule)
{
	char current[HWRANDOM_NAME_LEN];
	int quality = -1;

	if (hwrandom_current(sysfs_dir, current, sizeof(current)) < 0)
		current[0] = '\0';
	if (!name)
		name = current[0] ? current : NULL;
	if (name && strcmp(name, current) == 0) {
		quality = hwrandom_quality(sysfs_dir);
		if (quality < 0)
			quality = -1;
	}
	return hwrandom_device_credit(name, quality, rule);
}

bool hwrandom_is_misc_device(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISCHR(st.st_mode) &&
	       major(st.st_rdev) == 10 && minor(st.st_rdev) == 183;
}
