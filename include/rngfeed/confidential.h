/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Is this machine a confidential guest (AMD SEV, SEV-ES, SEV-SNP, Intel
 * TDX, IBM Secure Execution, Arm CCA)?  There the host is, by the threat
 * model, the adversary: the kernel's own threat-model document
 * (Documentation/security/snp-tdx-threat-model.rst) names "the entropy to
 * the guest random number generator" among a misbehaving host's inputs.
 * What the host provides (a virtio-rng device, an EGD server, a TPM it
 * emulates) is then credited 0 (source.h: source_host_provided()).
 *
 * Decided from what the CPU says (CPUID, on x86) and what the kernel
 * shows (its guest devices and firmware files), the signals systemd's
 * confidential-virt detection reads:
 *
 *   x86, only with CPUID's hypervisor bit (leaf 1 ECX bit 31) set:
 *     AMD ("AuthenticAMD"): leaf 0x8000001f EAX bit 1 (SEV).  Which kind
 *       from the SEV_STATUS MSR (0xc0010131: bit 0 SEV, 1 SEV-ES, 2
 *       SEV-SNP) when /dev/cpu/0/msr can be read (root, the msr module),
 *       else from the same leaf's EAX bits 3 (SEV-ES) and 4 (SEV-SNP).
 *       An MSR that reads no SEV overrules the leaf (a capability the
 *       hypervisor passed on is not a guest's state).
 *     Intel ("GenuineIntel"): leaf 0x21 with the signature "IntelTDX    "
 *       (EBX, EDX, ECX).
 *     Either, when the leaf is hidden (Azure hides AMD's): Hyper-V's
 *       leaves, "Microsoft Hv" at 0x40000000, isolation (0x40000003 EBX
 *       bit 22, not the root partition's bit 12) and its type at
 *       0x4000000c EBX bits 0-3: 2 SEV-SNP, 3 TDX.
 *   any architecture, what the kernel shows:
 *     /dev/sev-guest (the SEV-SNP guest driver), /dev/tdx_guest (TDX),
 *     /sys/firmware/uv/prot_virt_guest reading 1 (s390x Secure
 *     Execution), /sys/devices/platform/arm-cca-dev (an Arm CCA realm),
 *     /sys/kernel/config/tsm/report (configfs-tsm: the attestation
 *     interface of a confidential guest, of whatever kind).
 *
 * Pure over an injectable view (struct confidential_view) so that tests
 * fake each platform.  No logging, no globals.
 */
#ifndef RNGFEED_CONFIDENTIAL_H
#define RNGFEED_CONFIDENTIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum confidential_platform {
	CONFIDENTIAL_NONE,
	CONFIDENTIAL_SEV,
	CONFIDENTIAL_SEV_ES,
	CONFIDENTIAL_SEV_SNP,
	CONFIDENTIAL_TDX,
	CONFIDENTIAL_S390_PV,   /* IBM Secure Execution (protected virt.) */
	CONFIDENTIAL_CCA,       /* an Arm CCA realm */
	CONFIDENTIAL_UNKNOWN,   /* only configfs-tsm says so */
};

/*
 * Where the signals come from.  cpuid: false when there is no CPUID (not
 * x86); else @regs holds EAX, EBX, ECX, EDX of leaf @leaf, subleaf
 * @subleaf.  msr: 0 with the MSR's value, or -errno when it cannot be
 * read.  root: prefixed to every /dev and /sys path ("" = the
 * machine's).  ctx: passed to both.
 */
struct confidential_view {
	bool (*cpuid)(uint32_t leaf, uint32_t subleaf, uint32_t regs[4],
		      void *ctx);
	int (*msr)(uint32_t index, uint64_t *value, void *ctx);
	const char *root;
	void *ctx;
};

/* The machine's view: CPUID on x86, /dev/cpu/0/msr, root "". */
void confidential_view_machine(struct confidential_view *v);

#define CONFIDENTIAL_SEEN_LEN 256

struct confidential_result {
	enum confidential_platform platform;
	/* The signals seen, for a user ("CPUID 0x8000001f EAX bit 1
	 * (SEV), SEV_STATUS MSR bit 2 (SEV-SNP), /dev/sev-guest"), or what
	 * was looked at when none was. */
	char seen[CONFIDENTIAL_SEEN_LEN];
};

void confidential_detect(const struct confidential_view *v,
			 struct confidential_result *out);

/* "AMD SEV-SNP", "Intel TDX", ...; "none". */
const char *confidential_platform_name(enum confidential_platform p);

/* The confidential-guest setting: auto (the default), yes, no. */
enum { CONFIDENTIAL_AUTO = -1, CONFIDENTIAL_NO = 0, CONFIDENTIAL_YES = 1 };

/* Does this run treat the host as the adversary? */
bool confidential_resolve(int setting, const struct confidential_result *r);

/*
 * One line for --list and the log, e.g. "yes: AMD SEV-SNP (CPUID
 * 0x8000001f EAX bit 1 (SEV), /dev/sev-guest)", "no (auto: ...)", "yes
 * (confidential-guest = yes; detected: none, ...)".
 */
void confidential_describe(int setting, const struct confidential_result *r,
			   char *buf, size_t len);

/* The reason --list and the log give for a host-provided source. */
#define CONFIDENTIAL_HOST_REASON \
	"host-provided, not trusted in a confidential guest"

#endif
