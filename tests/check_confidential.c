// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Trust in a confidential guest (confidential.h), against fixtures:
 *  - detection on each platform, from a fake CPUID table, a fake
 *    SEV_STATUS MSR and a fake root holding the kernel's files;
 *  - the credit rule: host-provided sources credit 0, the CPU's own keep
 *    theirs, guest-owned=yes and confidential-guest = no override;
 *  - the hand-over rule: a host-backed hw_random device is held at 0,
 *    not handed back at stop, by ExecStopPost= (the restore) or by a
 *    second instance, and a later run applies its own rule.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rngfeed/confidential.h"
#include "rngfeed/hwrandom.h"
#include "rngfeed/hwrng_gate.h"
#include "rngfeed/hwrng_record.h"
#include "rngfeed/source.h"
#include "rngfeed/sources.h"
#include "test_doubles.h"

/* ---- a fake machine ------------------------------------------------------ */

struct fake_leaf {
	uint32_t leaf;
	uint32_t regs[4]; /* EAX, EBX, ECX, EDX */
};

struct fake_cpu {
	bool has_cpuid;
	const struct fake_leaf *leaves; /* zero-terminated by leaf 0xffffffff */
	int msr_err;                    /* 0: readable */
	uint64_t msr;
};

static bool fake_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t regs[4],
		       void *ctx)
{
	const struct fake_cpu *c = ctx;

	(void)subleaf;
	if (!c->has_cpuid)
		return false;
	memset(regs, 0, 4 * sizeof(regs[0]));
	for (const struct fake_leaf *l = c->leaves; l && l->leaf != 0xffffffffu;
	     l++)
		if (l->leaf == leaf)
			memcpy(regs, l->regs, sizeof(l->regs));
	return true;
}

static int fake_msr(uint32_t index, uint64_t *value, void *ctx)
{
	const struct fake_cpu *c = ctx;

	ck_assert_uint_eq(index, 0xc0010131u); /* only SEV_STATUS */
	if (c->msr_err)
		return c->msr_err;
	*value = c->msr;
	return 0;
}

/* Three registers' worth of a 12-byte signature, in register order. */
#define SIG(s, i) ((uint32_t)(unsigned char)(s)[(i)] |                       \
		   (uint32_t)(unsigned char)(s)[(i) + 1] << 8 |              \
		   (uint32_t)(unsigned char)(s)[(i) + 2] << 16 |             \
		   (uint32_t)(unsigned char)(s)[(i) + 3] << 24)
/* Leaf 0: max leaf, vendor in EBX, EDX, ECX. */
#define VENDOR(max, v) { 0, { (max), SIG(v, 0), SIG(v, 8), SIG(v, 4) } }
#define HV_BIT (1u << 31)
#define END { 0xffffffffu, { 0, 0, 0, 0 } }

static char root[128];

static void setup(void)
{
	td_tmpdir(root, sizeof(root), "cvm");
}

static void teardown(void)
{
	td_tree_remove(root);
}

/* A file under the fake root, its directories made. */
static void root_put(const char *path, const char *text)
{
	char full[256], *slash;

	snprintf(full, sizeof(full), "%s%s", root, path);
	for (slash = strchr(full + strlen(root) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(full, 0755);
		*slash = '/';
	}
	td_put(root, path + 1, text);
}

static enum confidential_platform detect(struct fake_cpu *c,
					 struct confidential_result *r)
{
	const struct confidential_view v = {
		.cpuid = fake_cpuid, .msr = fake_msr, .root = root, .ctx = c,
	};

	confidential_detect(&v, r);
	return r->platform;
}

#define ASSERT_SEEN(r, text)                                                 \
	ck_assert_msg(strstr((r)->seen, (text)), "'%s' does not say '%s'",   \
		      (r)->seen, (text))

/* ---- detection ----------------------------------------------------------- */

static const struct fake_leaf amd_host[] = {
	/* An SEV-capable host CPU: the leaf says SEV, no hypervisor bit. */
	VENDOR(0xd, "AuthenticAMD"), { 1, { 0, 0, 0, 0 } },
	{ 0x80000000u, { 0x80000021u, 0, 0, 0 } },
	{ 0x8000001fu, { 0x1f, 0, 0, 0 } }, END,
};

START_TEST(bare_metal_is_not_a_guest)
{
	struct fake_cpu c = { true, amd_host, -ENOENT, 0 };
	struct confidential_result r;

	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_NONE);
	ASSERT_SEEN(&r, "no hypervisor");
	ck_assert(!confidential_resolve(CONFIDENTIAL_AUTO, &r));
}
END_TEST

static const struct fake_leaf amd_plain_vm[] = {
	VENDOR(0xd, "AuthenticAMD"), { 1, { 0, 0, HV_BIT, 0 } },
	{ 0x80000000u, { 0x80000021u, 0, 0, 0 } }, END,
};

START_TEST(plain_vm_is_not_a_confidential_guest)
{
	struct fake_cpu c = { true, amd_plain_vm, -ENOENT, 0 };
	struct confidential_result r;

	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_NONE);
	ASSERT_SEEN(&r, "no SEV in leaf 0x8000001f");
	ASSERT_SEEN(&r, "no confidential-guest device or file");
}
END_TEST

/* An SEV guest as QEMU describes it: leaf 0x8000001f EAX bit 1, and bit
 * 3 for SEV-ES, bit 4 for SEV-SNP. */
#define AMD_SEV_GUEST(name, eax)                                             \
	static const struct fake_leaf name[] = {                             \
		VENDOR(0xd, "AuthenticAMD"), { 1, { 0, 0, HV_BIT, 0 } },     \
		{ 0x80000000u, { 0x80000021u, 0, 0, 0 } },                   \
		{ 0x8000001fu, { (eax), 0x33, 0, 0 } }, END,                 \
	}
AMD_SEV_GUEST(amd_sev, 0x2);
AMD_SEV_GUEST(amd_sev_es, 0xa);
AMD_SEV_GUEST(amd_sev_snp, 0x1a);

START_TEST(sev_kinds_from_cpuid)
{
	struct fake_cpu c = { true, amd_sev, -ENOENT, 0 };
	struct confidential_result r;

	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_SEV);
	ASSERT_SEEN(&r, "CPUID 0x8000001f EAX bit 1 (SEV)");
	c.leaves = amd_sev_es;
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_SEV_ES);
	ASSERT_SEEN(&r, "EAX bit 3 (SEV-ES)");
	c.leaves = amd_sev_snp;
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_SEV_SNP);
	ASSERT_SEEN(&r, "EAX bit 4 (SEV-SNP)");
	ck_assert(confidential_resolve(CONFIDENTIAL_AUTO, &r));
}
END_TEST

START_TEST(sev_kinds_from_the_msr)
{
	/* The MSR says what is active, whatever the leaf's bits. */
	struct fake_cpu c = { true, amd_sev, 0, 0x7 };
	struct confidential_result r;

	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_SEV_SNP);
	ASSERT_SEEN(&r, "SEV_STATUS MSR bit 2 (SEV-SNP)");
	c.msr = 0x3;
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_SEV_ES);
	c.msr = 0x1;
	c.leaves = amd_sev_snp;
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_SEV);
	/* A capability the hypervisor passed on, not a guest's state. */
	c.msr = 0;
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_NONE);
	ASSERT_SEEN(&r, "SEV_STATUS MSR says none is active");
}
END_TEST

static const struct fake_leaf intel_tdx[] = {
	VENDOR(0x23, "GenuineIntel"), { 1, { 0, 0, HV_BIT, 0 } },
	/* "IntelTDX    " in EBX, EDX, ECX. */
	{ 0x21, { 0, SIG("IntelTDX    ", 0), SIG("IntelTDX    ", 8),
		  SIG("IntelTDX    ", 4) } }, END,
};
/* The same leaf, but the CPU's highest leaf is below it: not read. */
static const struct fake_leaf intel_low_max[] = {
	VENDOR(0x20, "GenuineIntel"), { 1, { 0, 0, HV_BIT, 0 } },
	{ 0x21, { 0, SIG("IntelTDX    ", 0), SIG("IntelTDX    ", 8),
		  SIG("IntelTDX    ", 4) } }, END,
};

START_TEST(tdx_from_cpuid)
{
	struct fake_cpu c = { true, intel_tdx, -ENOENT, 0 };
	struct confidential_result r;

	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_TDX);
	ASSERT_SEEN(&r, "CPUID 0x21 \"IntelTDX\"");
	c.leaves = intel_low_max;
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_NONE);
	ASSERT_SEEN(&r, "Intel under a hypervisor, no TDX leaf");
}
END_TEST

/* Hyper-V: "Microsoft Hv" (EBX, ECX, EDX), isolation bit 22 (and not
 * the root partition's bit 12), its type at 0x4000000c. */
#define HYPERV(name, vendor, features_ebx, type)                             \
	static const struct fake_leaf name[] = {                             \
		VENDOR(0xd, vendor), { 1, { 0, 0, HV_BIT, 0 } },             \
		{ 0x80000000u, { 0x80000008u, 0, 0, 0 } },                   \
		{ 0x40000000u, { 0x4000000cu, SIG("Microsoft Hv", 0),        \
				 SIG("Microsoft Hv", 4),                     \
				 SIG("Microsoft Hv", 8) } },                 \
		{ 0x40000003u, { 0, (features_ebx), 0, 0 } },                \
		{ 0x4000000cu, { 0, (type), 0, 0 } }, END,                   \
	}
HYPERV(azure_snp, "AuthenticAMD", 1u << 22, 2);
HYPERV(azure_tdx, "GenuineIntel", 1u << 22, 3);
HYPERV(azure_vbs, "AuthenticAMD", 1u << 22, 1);
HYPERV(hyperv_root, "AuthenticAMD", 1u << 22 | 1u << 12, 2);

START_TEST(hyperv_isolation_where_the_vendor_leaf_is_hidden)
{
	struct fake_cpu c = { true, azure_snp, -ENOENT, 0 };
	struct confidential_result r;

	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_SEV_SNP);
	ASSERT_SEEN(&r, "Hyper-V isolation type 2 (SEV-SNP)");
	c.leaves = azure_tdx;
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_TDX);
	ASSERT_SEEN(&r, "Hyper-V isolation type 3 (TDX)");
	/* VBS isolation is not a confidential guest's; the root partition
	 * is the host itself. */
	c.leaves = azure_vbs;
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_NONE);
	c.leaves = hyperv_root;
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_NONE);
}
END_TEST

START_TEST(s390_secure_execution)
{
	struct fake_cpu c = { false, NULL, -ENOENT, 0 };
	struct confidential_result r;

	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_NONE);
	root_put("/sys/firmware/uv/prot_virt_guest", "0\n");
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_NONE);
	root_put("/sys/firmware/uv/prot_virt_guest", "1\n");
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_S390_PV);
	ASSERT_SEEN(&r, "/sys/firmware/uv/prot_virt_guest reads 1");
	ck_assert_str_eq(confidential_platform_name(r.platform),
			 "IBM Secure Execution");
}
END_TEST

START_TEST(kernel_devices_without_cpuid)
{
	struct fake_cpu c = { false, NULL, -ENOENT, 0 };
	struct confidential_result r;

	root_put("/sys/kernel/config/tsm/report/.keep", "");
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_UNKNOWN);
	root_put("/sys/devices/platform/arm-cca-dev/.keep", "");
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_CCA);
	root_put("/dev/tdx_guest", "");
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_TDX);
	root_put("/dev/sev-guest", "");
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_SEV_SNP);
	ASSERT_SEEN(&r, "/dev/sev-guest");
	ASSERT_SEEN(&r, "/sys/kernel/config/tsm/report");
}
END_TEST

START_TEST(cpuid_names_the_kind_before_the_kernel)
{
	/* An SEV-SNP guest whose CPUID a plain VM's would be, but whose
	 * kernel bound the SNP guest driver: the kernel's word stands in. */
	struct fake_cpu c = { true, amd_plain_vm, -ENOENT, 0 };
	struct confidential_result r;

	root_put("/dev/sev-guest", "");
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_SEV_SNP);
	/* With both, CPUID names it. */
	c.leaves = amd_sev_es;
	ck_assert_int_eq(detect(&c, &r), CONFIDENTIAL_SEV_ES);
}
END_TEST

START_TEST(the_setting_overrides_detection)
{
	struct fake_cpu c = { true, amd_sev_snp, -ENOENT, 0 };
	struct confidential_result found, none;
	char line[CONFIDENTIAL_SEEN_LEN + 160];

	detect(&c, &found);
	c.leaves = amd_plain_vm;
	detect(&c, &none);
	ck_assert(confidential_resolve(CONFIDENTIAL_AUTO, &found));
	ck_assert(!confidential_resolve(CONFIDENTIAL_AUTO, &none));
	ck_assert(!confidential_resolve(CONFIDENTIAL_NO, &found));
	ck_assert(confidential_resolve(CONFIDENTIAL_YES, &none));
	confidential_describe(CONFIDENTIAL_AUTO, &found, line, sizeof(line));
	ck_assert_msg(strncmp(line, "yes: AMD SEV-SNP (CPUID", 23) == 0, "%s",
		      line);
	confidential_describe(CONFIDENTIAL_AUTO, &none, line, sizeof(line));
	ck_assert_msg(strncmp(line, "no (auto: CPUID", 15) == 0, "%s", line);
	confidential_describe(CONFIDENTIAL_NO, &found, line, sizeof(line));
	ck_assert_msg(strstr(line, "confidential-guest = no; detected: AMD "
				   "SEV-SNP") && strstr(line, "overridden"),
		      "%s", line);
	confidential_describe(CONFIDENTIAL_YES, &none, line, sizeof(line));
#define WANT "yes (confidential-guest = yes; detected: none, CPUID"
	ck_assert_msg(strncmp(line, WANT, strlen(WANT)) == 0, "%s", line);
#undef WANT
}
END_TEST

START_TEST(the_machine_view_runs)
{
	struct confidential_view v;
	struct confidential_result r;

	confidential_view_machine(&v);
	confidential_detect(&v, &r);
	/* Whatever this machine is, it says what it looked at. */
	ck_assert(r.seen[0] != '\0');
	printf("this machine: %s (%s)\n", confidential_platform_name(r.platform),
	       r.seen);
#if defined(__x86_64__) || defined(__i386__)
	{
		uint32_t regs[4];

		ck_assert(v.cpuid(0, 0, regs, v.ctx));
	}
#else
	ck_assert_ptr_null(v.cpuid);
#endif
}
END_TEST

/* ---- the credit rule ----------------------------------------------------- */

static char hw[160];

/* A fake hw_random directory: @current, with rng_quality @q. */
static void hw_fixture(const char *current, const char *q)
{
	char avail[128];

	snprintf(hw, sizeof(hw), "%s/hw", root);
	mkdir(hw, 0755);
	snprintf(avail, sizeof(avail), "%s none \n", current);
	td_put(hw, "rng_current", current);
	td_put(hw, "rng_available", avail);
	td_put(hw, "rng_quality", q);
	td_put(hw, "rng_selected", "0\n");
}

/* Every driver's config, trust applied as the daemon applies it. */
static struct source_config cfgs[16];
static size_t n_cfgs;

static struct source_config *cfg_of(const char *name)
{
	for (size_t i = 0; i < n_cfgs; i++)
		if (strcmp(cfgs[i].driver->name, name) == 0)
			return &cfgs[i];
	ck_abort_msg("no source %s", name);
	return NULL;
}

static void set(const char *name, const char *key, const char *value)
{
	char err[256];

	ck_assert_msg(source_config_set(cfg_of(name), key, value, err,
					sizeof(err)) == 0,
		      "%s", err);
}

static void configs(void)
{
	n_cfgs = 0;
	for (size_t i = 0; i < 16 && source_drivers[i]; i++)
		source_config_init(&cfgs[n_cfgs++], source_drivers[i]);
	/* hwrng and virtio read /dev/hwrng, named by a fixture: the
	 * machine's hw_random state is never read. */
	set("hwrng", "sysfs", hw);
	set("virtio", "sysfs", hw);
}

START_TEST(host_provided_sources_credit_zero)
{
	unsigned int before[16] = { 0 };

	hw_fixture("virtio_rng.0\n", "1024\n");
	configs();
	set("egd", "device", "unix:/nonexistent");
	set("egd", "credit", "500");
	source_configs_trust(cfgs, n_cfgs, false);
	for (size_t i = 0; i < n_cfgs; i++) {
		before[i] = source_config_credit(&cfgs[i]);
		ck_assert(!source_host_provided(&cfgs[i], NULL));
	}
	ck_assert_uint_eq(source_config_credit(cfg_of("virtio")), 768);
	ck_assert_uint_eq(source_config_credit(cfg_of("egd")), 500);
	ck_assert_uint_eq(source_config_credit(cfg_of("tpm")), 64);

	source_configs_trust(cfgs, n_cfgs, true);
	for (size_t i = 0; i < n_cfgs; i++) {
		const struct source_driver *d = cfgs[i].driver;
		bool host = d->host_provided != NULL;

		/* hwrng reads /dev/hwrng: 10:183 here, or absent (the
		 * default path, taken as the hw_random device). */
		ck_assert_msg(source_host_provided(&cfgs[i], NULL) == host,
			      "%s", d->name);
		ck_assert_uint_eq(source_config_credit(&cfgs[i]),
				  host ? 0 : before[i]);
	}
	/* What the host provides in a VM: a device it emulates or relays. */
	ck_assert_ptr_nonnull(cfg_of("virtio")->driver->host_provided);
	ck_assert_ptr_nonnull(cfg_of("hwrng")->driver->host_provided);
	ck_assert_ptr_nonnull(cfg_of("egd")->driver->host_provided);
	ck_assert_ptr_nonnull(cfg_of("tpm")->driver->host_provided);
	ck_assert_ptr_nonnull(cfg_of("serial")->driver->host_provided);
	/* The CPU's own instructions, unchanged. */
	ck_assert_ptr_null(cfg_of("rdrand")->driver->host_provided);
	ck_assert_ptr_null(cfg_of("rdseed")->driver->host_provided);
	ck_assert_ptr_null(cfg_of("rndrrs")->driver->host_provided);
	ck_assert_ptr_null(cfg_of("s390-trng")->driver->host_provided);
	/* The file source: a path of the guest's; its credit is the user's
	 * claim. */
	ck_assert_ptr_null(cfg_of("file")->driver->host_provided);
}
END_TEST

START_TEST(guest_owned_declares_the_guests_own)
{
	char err[256];

	hw_fixture("tpm-rng-0\n", "1024\n");
	configs();
	set("egd", "device", "unix:/nonexistent");
	set("egd", "credit", "500");
	set("egd", "guest-owned", "yes");
	set("tpm", "guest-owned", "yes");
	set("serial", "guest-owned", "yes");
	source_configs_trust(cfgs, n_cfgs, true);
	ck_assert(!source_host_provided(cfg_of("serial"), NULL));
	ck_assert_uint_eq(source_config_credit(cfg_of("egd")), 500);
	ck_assert_uint_eq(source_config_credit(cfg_of("tpm")), 64);
	/* The same TPM through hwrng: one device, one rule. */
	ck_assert(cfg_of("hwrng")->tpm_guest_owned);
	ck_assert(!source_host_provided(cfg_of("hwrng"), "tpm-rng-0"));
	ck_assert(source_host_provided(cfg_of("hwrng"), "virtio_rng.0"));
	/* virtio-rng is the host's by definition: no such option; nor for
	 * what is the guest's own anyway. */
	ck_assert_int_eq(source_config_set(cfg_of("virtio"), "guest-owned",
					   "yes", err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "the host's virtio-rng device"), "%s", err);
	ck_assert_int_eq(source_config_set(cfg_of("rdrand"), "guest-owned",
					   "yes", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(source_config_set(cfg_of("tpm"), "guest-owned",
					   "maybe", err, sizeof(err)), -EINVAL);
	/* guest-owned=no takes it back. */
	set("tpm", "guest-owned", "no");
	source_configs_trust(cfgs, n_cfgs, true);
	ck_assert_uint_eq(source_config_credit(cfg_of("tpm")), 0);
	ck_assert(source_host_provided(cfg_of("hwrng"), "tpm-rng-0"));
}
END_TEST

START_TEST(hw_random_devices_by_name)
{
	/* Only the CPU's own behind a driver is the guest's. */
	ck_assert(hwrandom_host_backed("virtio_rng.0", false, false));
	ck_assert(hwrandom_host_backed("virtio_rng.0", true, true));
	ck_assert(hwrandom_host_backed("tpm-rng-0", false, false));
	ck_assert(!hwrandom_host_backed("tpm-rng-0", true, false));
	ck_assert(!hwrandom_host_backed("s390-trng", false, false));
	ck_assert(hwrandom_host_backed("intel-rng", false, false));
	ck_assert(hwrandom_host_backed("pseries-rng", false, false));
	ck_assert(hwrandom_host_backed("arm_smccc_trng", false, false));
	ck_assert(!hwrandom_host_backed("arm_smccc_trng", false, true));
	ck_assert(hwrandom_host_backed("", false, true));
	ck_assert(hwrandom_host_backed(NULL, false, true));
}
END_TEST

START_TEST(hwrng_follows_the_current_device)
{
	hw_fixture("s390-trng\n", "1024\n");
	configs();
	source_configs_trust(cfgs, n_cfgs, true);
	/* The CPU's own generator: its usual credit (1024 capped by H). */
	ck_assert(!source_host_provided(cfg_of("hwrng"), NULL));
	ck_assert_uint_eq(source_config_credit(cfg_of("hwrng")), 768);
	/* The device changes to the host's: 0. */
	td_put(hw, "rng_current", "virtio_rng.0\n");
	ck_assert(source_host_provided(cfg_of("hwrng"), NULL));
	ck_assert_uint_eq(source_config_credit(cfg_of("hwrng")), 0);
	ck_assert_uint_eq(source_hwrandom_credit(cfg_of("hwrng"), hw,
						 "s390-trng"), 768);
	ck_assert_uint_eq(source_hwrandom_credit(cfg_of("hwrng"), hw,
						 "virtio_rng.0"), 0);
	/* A credit the user gave does not change that. */
	set("hwrng", "credit", "500");
	ck_assert_uint_eq(source_config_credit(cfg_of("hwrng")), 0);
	/* hwrng's guest-owned: every device but virtio_rng. */
	set("hwrng", "guest-owned", "yes");
	td_put(hw, "rng_current", "arm_smccc_trng\n");
	ck_assert_uint_eq(source_config_credit(cfg_of("hwrng")), 500);
	td_put(hw, "rng_current", "virtio_rng.0\n");
	ck_assert_uint_eq(source_config_credit(cfg_of("hwrng")), 0);
}
END_TEST

/* ---- the hand-over rule -------------------------------------------------- */

static char state[192], lock[192], why[HWRNG_GATE_MSG_LEN];
static const struct hwrng_gate_trust cvm = { .confidential = true };

static int take(struct hwrng_gate *g, const struct hwrng_gate_trust *t,
		const char *state_path)
{
	return hwrng_gate_take_with(g, hw, state_path, lock, t, why,
				    sizeof(why));
}

static const char *quality(void)
{
	static char q[32];

	return td_get(hw, "rng_quality", q, sizeof(q));
}

#define ASSERT_WHY_HAS(text)                                                 \
	ck_assert_msg(strstr(why, (text)), "'%s' does not say '%s'", why, (text))

static void gate_fixture(const char *current, const char *q)
{
	hw_fixture(current, q);
	snprintf(state, sizeof(state), "%s/run/hwrng-quality", root);
	snprintf(lock, sizeof(lock), "%s/lock/hwrng.lock", root);
}

START_TEST(host_device_held_and_not_handed_back)
{
	struct hwrng_gate g;
	struct hwrng_record rec;

	gate_fixture("virtio_rng.0\n", "1000\n");
	ck_assert_int_eq(take(&g, &cvm, state), HWRNG_GATE_TAKEN);
	ASSERT_WHY_HAS("held at 0: " CONFIDENTIAL_HOST_REASON);
	ck_assert_str_eq(quality(), "0\n");
	ck_assert_int_eq(hwrng_record_read(state, &rec), 0);
	ck_assert(rec.host);
	ck_assert_uint_eq(rec.quality, 1000);
	/* The kernel sets it again (a re-registration, a select on 6.2 to
	 * 6.10): 0 again, for the whole run. */
	td_put(hw, "rng_quality", "1000\n");
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_RETAKEN);
	ck_assert_str_eq(quality(), "0\n");
	/* The stop: not raised, and the log says how by hand. */
	ck_assert_int_eq(hwrng_gate_release(&g, false, why, sizeof(why)), 1);
	ck_assert_str_eq(quality(), "0\n");
	ASSERT_WHY_HAS("rng_quality stays 0 (it was 1000): "
		       CONFIDENTIAL_HOST_REASON);
	ASSERT_WHY_HAS("echo 1000 > ");
	ASSERT_WHY_HAS("/hw/rng_quality");
	/* The record stays, marked: ExecStopPost= leaves it too. */
	ck_assert_int_eq(hwrng_record_read(state, &rec), 0);
	ck_assert(rec.host);
	ck_assert_int_eq(hwrng_gate_restore(hw, state, lock, why, sizeof(why)),
			 0);
	ck_assert_str_eq(quality(), "0\n");
	ASSERT_WHY_HAS("not put back to 1000");
	ck_assert_int_eq(access(state, F_OK), 0);
}
END_TEST

START_TEST(restart_applies_its_own_rule)
{
	struct hwrng_gate g;
	struct hwrng_record rec;

	gate_fixture("virtio_rng.0\n", "1000\n");
	ck_assert_int_eq(take(&g, &cvm, state), HWRNG_GATE_TAKEN);
	hwrng_gate_release(&g, false, why, sizeof(why));
	/* A restart in the same guest adopts the record: held again. */
	ck_assert_int_eq(take(&g, &cvm, state), HWRNG_GATE_TAKEN);
	ASSERT_WHY_HAS("that held it as host-provided");
	ck_assert_uint_eq(g.original, 1000);
	ck_assert_int_eq(hwrng_gate_release(&g, false, why, sizeof(why)), 1);
	ck_assert_str_eq(quality(), "0\n");
	/* A run told confidential-guest = no: its stop hands it back. */
	ck_assert_int_eq(take(&g, NULL, state), HWRNG_GATE_TAKEN);
	ck_assert_int_eq(hwrng_record_read(state, &rec), 0);
	ck_assert(!rec.host);
	ck_assert_int_eq(hwrng_gate_release(&g, false, why, sizeof(why)), 0);
	ck_assert_str_eq(quality(), "1000\n");
	ASSERT_WHY_HAS("handed back");
}
END_TEST

START_TEST(crash_then_restore_leaves_it)
{
	struct hwrng_gate g;

	gate_fixture("virtio_rng.0\n", "1024\n");
	ck_assert_int_eq(take(&g, &cvm, state), HWRNG_GATE_TAKEN);
	/* A crash: the fds go, nothing is put back. */
	close(g.fd);
	close(g.state_fd);
	close(g.lock.fd);
	ck_assert_int_eq(hwrng_gate_restore(hw, state, lock, why, sizeof(why)),
			 0);
	ck_assert_str_eq(quality(), "0\n");
	ASSERT_WHY_HAS("held at 0 as " CONFIDENTIAL_HOST_REASON);
	ASSERT_WHY_HAS("echo 1024 > ");
}
END_TEST

START_TEST(second_instance_does_not_hand_it_back)
{
	struct hwrng_gate a, b;
	char state_b[200];

	gate_fixture("virtio_rng.0\n", "1000\n");
	snprintf(state_b, sizeof(state_b), "%s/run-b/hwrng-quality", root);
	ck_assert_int_eq(take(&a, &cvm, state), HWRNG_GATE_TAKEN);
	ck_assert_int_eq(take(&b, &cvm, state_b), HWRNG_GATE_WAITING);
	/* The owner stops with a waiter: it stays 0, the waiter takes it
	 * over, still held. */
	hwrng_gate_release(&a, false, why, sizeof(why));
	ck_assert_str_eq(quality(), "0\n");
	ck_assert_int_eq(hwrng_gate_tick(&b, why, sizeof(why)),
			 HWRNG_GATE_TAKEN);
	ASSERT_WHY_HAS("held at 0");
	ck_assert_int_eq(hwrng_gate_release(&b, false, why, sizeof(why)), 1);
	ck_assert_str_eq(quality(), "0\n");

	/* A waiter that stops after the owner left without waiting for it
	 * hands back only a plain record, not a host-held one. */
	ck_assert_int_eq(take(&a, &cvm, state), HWRNG_GATE_TAKEN);
	ck_assert_int_eq(take(&b, NULL, state_b), HWRNG_GATE_WAITING);
	close(a.fd);
	close(a.state_fd);
	close(a.lock.fd); /* the owner crashed */
	ck_assert_int_eq(hwrng_gate_release(&b, false, why, sizeof(why)), 0);
	ck_assert_str_eq(quality(), "0\n");
}
END_TEST

START_TEST(guest_own_device_is_handed_back)
{
	struct hwrng_gate g;
	const struct hwrng_gate_trust own_tpm = { .confidential = true,
						  .tpm_own = true };

	gate_fixture("s390-trng\n", "1024\n");
	ck_assert_int_eq(take(&g, &cvm, state), HWRNG_GATE_TAKEN);
	ASSERT_WHY_HAS("handed over: 0 while rngfeed tests it");
	ck_assert_int_eq(hwrng_gate_release(&g, false, why, sizeof(why)), 0);
	ck_assert_str_eq(quality(), "1024\n");
	gate_fixture("tpm-rng-0\n", "1024\n");
	ck_assert_int_eq(take(&g, &own_tpm, state), HWRNG_GATE_TAKEN);
	ck_assert_int_eq(hwrng_gate_release(&g, false, why, sizeof(why)), 0);
	ck_assert_str_eq(quality(), "1024\n");
	ck_assert_int_eq(take(&g, &cvm, state), HWRNG_GATE_TAKEN);
	ck_assert_int_eq(hwrng_gate_release(&g, false, why, sizeof(why)), 1);
	ck_assert_str_eq(quality(), "0\n");
}
END_TEST

START_TEST(a_device_no_longer_current_stays_held)
{
	struct hwrng_gate g;
	char buf[64];

	/* The host's device first (held), then the guest's own registers
	 * and becomes current: taken and handed over.  At the stop the
	 * guest's own is handed back, the host's (no longer current) is
	 * not: it is not even chosen again to reach its rng_quality. */
	gate_fixture("virtio_rng.0\n", "1000\n");
	ck_assert_int_eq(take(&g, &cvm, state), HWRNG_GATE_TAKEN);
	td_put(hw, "rng_available", "virtio_rng.0 s390-trng none \n");
	td_put(hw, "rng_current", "s390-trng\n");
	td_put(hw, "rng_quality", "1024\n");
	ck_assert_int_eq(hwrng_gate_tick(&g, why, sizeof(why)),
			 HWRNG_GATE_CHANGED);
	ck_assert_str_eq(quality(), "0\n");
	ck_assert_int_eq(hwrng_gate_release(&g, false, why, sizeof(why)), 1);
	ck_assert_str_eq(quality(), "1024\n");
	ck_assert_str_eq(td_get(hw, "rng_current", buf, sizeof(buf)),
			 "s390-trng\n");
	ASSERT_WHY_HAS("s390-trng handed back");
	ASSERT_WHY_HAS("virtio_rng.0 (was 1000) stays 0 too: "
		       CONFIDENTIAL_HOST_REASON);
}
END_TEST

START_TEST(a_host_device_that_comes_later_is_held_too)
{
	struct hwrng_gate g;

	/* No device at start; the host's registers later: taken, held. */
	gate_fixture("none\n", "0\n");
	td_put(hw, "rng_available", "none \n");
	ck_assert_int_eq(take(&g, &cvm, state), HWRNG_GATE_NONE);
	/* (the daemon keeps trying; here, the take again) */
	td_put(hw, "rng_available", "virtio_rng.1 none \n");
	td_put(hw, "rng_current", "virtio_rng.1\n");
	td_put(hw, "rng_quality", "1000\n");
	ck_assert_int_eq(take(&g, &cvm, state), HWRNG_GATE_TAKEN);
	ck_assert_str_eq(quality(), "0\n");
	ck_assert_int_eq(hwrng_gate_release(&g, false, why, sizeof(why)), 1);
	ck_assert_str_eq(quality(), "0\n");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("confidential");
	TCase *detect_tc = tcase_create("detect");
	TCase *credit_tc = tcase_create("credit");
	TCase *handover_tc = tcase_create("handover");

	tcase_add_checked_fixture(detect_tc, setup, teardown);
	tcase_add_test(detect_tc, bare_metal_is_not_a_guest);
	tcase_add_test(detect_tc, plain_vm_is_not_a_confidential_guest);
	tcase_add_test(detect_tc, sev_kinds_from_cpuid);
	tcase_add_test(detect_tc, sev_kinds_from_the_msr);
	tcase_add_test(detect_tc, tdx_from_cpuid);
	tcase_add_test(detect_tc, hyperv_isolation_where_the_vendor_leaf_is_hidden);
	tcase_add_test(detect_tc, s390_secure_execution);
	tcase_add_test(detect_tc, kernel_devices_without_cpuid);
	tcase_add_test(detect_tc, cpuid_names_the_kind_before_the_kernel);
	tcase_add_test(detect_tc, the_setting_overrides_detection);
	tcase_add_test(detect_tc, the_machine_view_runs);
	suite_add_tcase(s, detect_tc);
	tcase_add_checked_fixture(credit_tc, setup, teardown);
	tcase_add_test(credit_tc, host_provided_sources_credit_zero);
	tcase_add_test(credit_tc, guest_owned_declares_the_guests_own);
	tcase_add_test(credit_tc, hw_random_devices_by_name);
	tcase_add_test(credit_tc, hwrng_follows_the_current_device);
	suite_add_tcase(s, credit_tc);
	tcase_add_checked_fixture(handover_tc, setup, teardown);
	tcase_add_test(handover_tc, host_device_held_and_not_handed_back);
	tcase_add_test(handover_tc, restart_applies_its_own_rule);
	tcase_add_test(handover_tc, crash_then_restore_leaves_it);
	tcase_add_test(handover_tc, second_instance_does_not_hand_it_back);
	tcase_add_test(handover_tc, guest_own_device_is_handed_back);
	tcase_add_test(handover_tc, a_device_no_longer_current_stays_held);
	tcase_add_test(handover_tc, a_host_device_that_comes_later_is_held_too);
	suite_add_tcase(s, handover_tc);
	return td_run(s);
}
