// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Confidential-guest detection (see confidential.h for the signals).
 * CPUID and the MSR are read only on x86; the kernel's files everywhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "rngfeed/confidential.h"
#include "rngfeed/util.h"

/* CPUID leaves and bits (AMD APM vol. 3 E.4.17, 15.34.10; Intel TDX
 * module base spec 11.2; Hyper-V TLFS). */
#define LEAF_FEATURES      0x1u
#define ECX_HYPERVISOR     (1u << 31)
#define LEAF_EXT_MAX       0x80000000u
#define LEAF_AMD_MEM_ENC   0x8000001fu
#define EAX_SEV            (1u << 1)
#define EAX_SEV_ES         (1u << 3)
#define EAX_SEV_SNP        (1u << 4)
#define MSR_SEV_STATUS     0xc0010131u
#define MSR_SEV            (1u << 0)
#define MSR_SEV_ES         (1u << 1)
#define MSR_SEV_SNP        (1u << 2)
#define LEAF_TDX           0x21u
#define LEAF_HV_VENDOR     0x40000000u
#define LEAF_HV_FEATURES   0x40000003u
#define LEAF_HV_ISOLATION  0x4000000cu
#define HV_LEAF_MIN        0x40000005u
#define HV_LEAF_MAX        0x4000ffffu
#define HV_EBX_CPU_MANAGEMENT (1u << 12) /* the root partition */
#define HV_EBX_ISOLATION   (1u << 22)
#define HV_ISOLATION_SNP   2u
#define HV_ISOLATION_TDX   3u

enum { EAX, EBX, ECX, EDX };

/* Append to what was seen, ", "-separated. */
static void seen(struct confidential_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void seen(struct confidential_result *r, const char *fmt, ...)
{
	size_t n = strlen(r->seen);
	va_list ap;

	if (n && n + 2 < sizeof(r->seen)) {
		strcpy(r->seen + n, ", ");
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(r->seen + n, sizeof(r->seen) - n, fmt, ap);
	va_end(ap);
}

static bool leaf(const struct confidential_view *v, uint32_t l,
		 uint32_t regs[4])
{
	memset(regs, 0, 4 * sizeof(regs[0]));
	return v->cpuid && v->cpuid(l, 0, regs, v->ctx);
}

/* Twelve signature bytes from three registers, in the order given; each
 * register holds its four bytes lowest first, as x86 stores them (spelt
 * out, so that a fake CPUID gives the same answer on any host). */
static void signature(char out[13], uint32_t a, uint32_t b, uint32_t c)
{
	const uint32_t regs[3] = { a, b, c };

	for (int i = 0; i < 12; i++)
		out[i] = (char)(regs[i / 4] >> (8 * (i % 4)) & 0xffu);
	out[12] = '\0';
}

/* Hyper-V's isolation type (2 SEV-SNP, 3 TDX), 0 when not isolated or
 * not Hyper-V: a cloud that hides the vendor's own leaf shows this. */
static unsigned int hyperv_isolation(const struct confidential_view *v)
{
	uint32_t r[4];
	char sig[13];

	if (!leaf(v, LEAF_HV_VENDOR, r) || r[EAX] < HV_LEAF_MIN ||
	    r[EAX] > HV_LEAF_MAX)
		return 0;
	signature(sig, r[EBX], r[ECX], r[EDX]);
	if (strcmp(sig, "Microsoft Hv") != 0)
		return 0;
	leaf(v, LEAF_HV_FEATURES, r);
	if (!(r[EBX] & HV_EBX_ISOLATION) || (r[EBX] & HV_EBX_CPU_MANAGEMENT))
		return 0;
	leaf(v, LEAF_HV_ISOLATION, r);
	return r[EBX] & 0xfu;
}

static enum confidential_platform amd(const struct confidential_view *v,
				      struct confidential_result *res)
{
	uint32_t r[4];
	uint64_t msr = 0;

	leaf(v, LEAF_EXT_MAX, r);
	if (r[EAX] >= LEAF_AMD_MEM_ENC) {
		leaf(v, LEAF_AMD_MEM_ENC, r);
		if (r[EAX] & EAX_SEV) {
			seen(res, "CPUID 0x8000001f EAX bit 1 (SEV)");
			if (v->msr && v->msr(MSR_SEV_STATUS, &msr, v->ctx) == 0) {
				if (msr & MSR_SEV_SNP) {
					seen(res, "SEV_STATUS MSR bit 2 (SEV-SNP)");
					return CONFIDENTIAL_SEV_SNP;
				}
				if (msr & MSR_SEV_ES) {
					seen(res, "SEV_STATUS MSR bit 1 (SEV-ES)");
					return CONFIDENTIAL_SEV_ES;
				}
				if (msr & MSR_SEV) {
					seen(res, "SEV_STATUS MSR bit 0 (SEV)");
					return CONFIDENTIAL_SEV;
				}
				seen(res, "but the SEV_STATUS MSR says none is "
					  "active");
				return CONFIDENTIAL_NONE;
			}
			if (r[EAX] & EAX_SEV_SNP) {
				seen(res, "EAX bit 4 (SEV-SNP)");
				return CONFIDENTIAL_SEV_SNP;
			}
			if (r[EAX] & EAX_SEV_ES) {
				seen(res, "EAX bit 3 (SEV-ES)");
				return CONFIDENTIAL_SEV_ES;
			}
			return CONFIDENTIAL_SEV;
		}
	}
	if (hyperv_isolation(v) == HV_ISOLATION_SNP) {
		seen(res, "CPUID 0x4000000c: Hyper-V isolation type 2 (SEV-SNP)");
		return CONFIDENTIAL_SEV_SNP;
	}
	seen(res, "CPUID: AMD under a hypervisor, no SEV in leaf 0x8000001f");
	return CONFIDENTIAL_NONE;
}

static enum confidential_platform intel(const struct confidential_view *v,
					uint32_t max_leaf,
					struct confidential_result *res)
{
	if (max_leaf >= LEAF_TDX) {
		uint32_t r[4];
		char sig[13];

		leaf(v, LEAF_TDX, r);
		signature(sig, r[EBX], r[EDX], r[ECX]);
		if (strcmp(sig, "IntelTDX    ") == 0) {
			seen(res, "CPUID 0x21 \"IntelTDX\"");
			return CONFIDENTIAL_TDX;
		}
	}
	if (hyperv_isolation(v) == HV_ISOLATION_TDX) {
		seen(res, "CPUID 0x4000000c: Hyper-V isolation type 3 (TDX)");
		return CONFIDENTIAL_TDX;
	}
	seen(res, "CPUID: Intel under a hypervisor, no TDX leaf");
	return CONFIDENTIAL_NONE;
}

/* What CPUID says; nothing without CPUID or a hypervisor. */
static enum confidential_platform from_cpuid(const struct confidential_view *v,
					     struct confidential_result *res)
{
	uint32_t r[4], max_leaf;
	char vendor[13];

	if (!leaf(v, 0, r))
		return CONFIDENTIAL_NONE;
	max_leaf = r[EAX];
	signature(vendor, r[EBX], r[EDX], r[ECX]);
	leaf(v, LEAF_FEATURES, r);
	/* A host CPU advertises SEV too: only a guest's leaves count. */
	if (!(r[ECX] & ECX_HYPERVISOR)) {
		seen(res, "CPUID: no hypervisor");
		return CONFIDENTIAL_NONE;
	}
	if (strcmp(vendor, "AuthenticAMD") == 0)
		return amd(v, res);
	if (strcmp(vendor, "GenuineIntel") == 0)
		return intel(v, max_leaf, res);
	seen(res, "CPUID: %s under a hypervisor", vendor);
	return CONFIDENTIAL_NONE;
}

static bool file_exists(const struct confidential_view *v, const char *path)
{
	char p[512];

	snprintf(p, sizeof(p), "%s%s", v->root ? v->root : "", path);
	return access(p, F_OK) == 0;
}

static bool file_says_one(const struct confidential_view *v,
			  const char *path)
{
	char p[512], text[8];

	snprintf(p, sizeof(p), "%s%s", v->root ? v->root : "", path);
	return read_text_file(p, text, sizeof(text)) > 0 && text[0] == '1';
}

/* What the kernel shows: each file, in the order of the table. */
static const struct {
	const char *path;
	bool says_one; /* the file must read "1", not merely exist */
	enum confidential_platform platform;
} kernel_signals[] = {
	{ "/dev/sev-guest", false, CONFIDENTIAL_SEV_SNP },
	{ "/dev/tdx_guest", false, CONFIDENTIAL_TDX },
	{ "/sys/firmware/uv/prot_virt_guest", true, CONFIDENTIAL_S390_PV },
	{ "/sys/devices/platform/arm-cca-dev", false, CONFIDENTIAL_CCA },
	{ "/sys/kernel/config/tsm/report", false, CONFIDENTIAL_UNKNOWN },
};

void confidential_detect(const struct confidential_view *v,
			 struct confidential_result *out)
{
	enum confidential_platform cpu, kernel = CONFIDENTIAL_NONE;

	memset(out, 0, sizeof(*out));
	cpu = from_cpuid(v, out);
	for (size_t i = 0; i < sizeof(kernel_signals) / sizeof(kernel_signals[0]);
	     i++) {
		bool yes = kernel_signals[i].says_one
				   ? file_says_one(v, kernel_signals[i].path)
				   : file_exists(v, kernel_signals[i].path);

		if (!yes)
			continue;
		seen(out, "%s%s", kernel_signals[i].path,
		     kernel_signals[i].says_one ? " reads 1" : "");
		if (kernel == CONFIDENTIAL_NONE)
			kernel = kernel_signals[i].platform;
	}
	if (cpu == CONFIDENTIAL_NONE && kernel == CONFIDENTIAL_NONE)
		seen(out, "no confidential-guest device or file (/dev/sev-guest, "
			  "/dev/tdx_guest, /sys/firmware/uv, arm-cca-dev, "
			  "configfs tsm)");
	/* The CPU's word names the kind; the kernel's stands in without
	 * it (another architecture, or leaves a hypervisor hides). */
	out->platform = cpu != CONFIDENTIAL_NONE ? cpu : kernel;
}

const char *confidential_platform_name(enum confidential_platform p)
{
	switch (p) {
	case CONFIDENTIAL_SEV: return "AMD SEV";
	case CONFIDENTIAL_SEV_ES: return "AMD SEV-ES";
	case CONFIDENTIAL_SEV_SNP: return "AMD SEV-SNP";
	case CONFIDENTIAL_TDX: return "Intel TDX";
	case CONFIDENTIAL_S390_PV: return "IBM Secure Execution";
	case CONFIDENTIAL_CCA: return "an Arm CCA realm";
	case CONFIDENTIAL_UNKNOWN: return "a confidential guest of unknown kind";
	case CONFIDENTIAL_NONE: break;
	}
	return "none";
}

bool confidential_resolve(int setting, const struct confidential_result *r)
{
	if (setting == CONFIDENTIAL_YES || setting == CONFIDENTIAL_NO)
		return setting == CONFIDENTIAL_YES;
	return r->platform != CONFIDENTIAL_NONE;
}

void confidential_describe(int setting, const struct confidential_result *r,
			   char *buf, size_t len)
{
	bool found = r->platform != CONFIDENTIAL_NONE;

	if (setting == CONFIDENTIAL_AUTO)
		snprintf(buf, len, found ? "yes: %s (%s)" : "no (auto: %s%s)",
			 found ? confidential_platform_name(r->platform) : "",
			 r->seen);
	else
		snprintf(buf, len,
			 "%s (confidential-guest = %s; detected: %s%s%s%s)",
			 setting == CONFIDENTIAL_YES ? "yes" : "no",
			 setting == CONFIDENTIAL_YES ? "yes" : "no",
			 confidential_platform_name(r->platform),
			 r->seen[0] ? ", " : "", r->seen,
			 setting == CONFIDENTIAL_NO && found ? "; overridden"
							      : "");
}

/* ---- the machine ---------------------------------------------------------- */

#if defined(__x86_64__) || defined(__i386__)
static bool machine_cpuid(uint32_t l, uint32_t subleaf, uint32_t regs[4],
			  void *ctx)
{
	unsigned int a, b, c, d;

	(void)ctx;
	/* 0 also on an i386 without CPUID. */
	if (__get_cpuid_max(0, NULL) == 0)
		return false;
	__cpuid_count(l, subleaf, a, b, c, d);
	regs[EAX] = a;
	regs[EBX] = b;
	regs[ECX] = c;
	regs[EDX] = d;
	return true;
}

/* The msr module's device: root with CAP_SYS_RAWIO, else -EACCES or
 * -ENOENT (the module is not loaded); CPUID's bits then decide. */
static int machine_msr(uint32_t index, uint64_t *value, void *ctx)
{
	int fd, r = 0;

	(void)ctx;
	fd = open("/dev/cpu/0/msr", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, value, sizeof(*value), (off_t)index) !=
	    (ssize_t)sizeof(*value))
		r = errno ? -errno : -EIO;
	close(fd);
	return r;
}
#endif

void confidential_view_machine(struct confidential_view *v)
{
	*v = (struct confidential_view){ .root = "" };
#if defined(__x86_64__) || defined(__i386__)
	v->cpuid = machine_cpuid;
	v->msr = machine_msr;
#endif
}
