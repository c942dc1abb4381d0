#!/bin/bash
# make vm-test-systemd (issue 10, part 2; not in CI): boot a minimal Debian 12
# with systemd under QEMU, with rngfeed installed from the .deb built from this
# tree, and check from the serial console that the packaged unit does at boot
# what it promises:
#   - rngfeed.service is enabled by the package and active (running);
#   - READY=1 (Type=notify) arrived before sysinit.target became active;
#   - systemctl status shows its STATUS= text, the journal its first credit;
#   - with random.trust_cpu=off and no other credited source, the kernel's
#     "crng init done" comes after rngfeed started, no later than rngfeed's
#     "kernel CRNG is ready" line, and no process was blocked waiting for
#     the CRNG before then (the kernel then runs its own jitter entropy
#     collection, and the credit could be its).
# Times compare the kernel's printk clock with CLOCK_MONOTONIC; under TCG
# they were seen to differ by ~10 ms, far less than the gaps compared.
#
#   tests/vm/systemd-boot.sh        (as root; RNGFEED from the Makefile is not
#                                    used: the guest runs the packaged build)
#
# Environment: VM_TIMEOUT (seconds for the whole QEMU run, default 300),
# VM_MIRROR (Debian mirror for debootstrap; default: the bookworm one in
# /etc/apt/sources.list*), VM_KEEP=1 (keep the disk image in
# tests/vm/work/systemd/), VM_DROPIN=FILE (install FILE as a drop-in for
# rngfeed.service in the guest, to try a unit change; the run says so),
# VM_REV=REV (build the .deb from `git archive REV`, e.g. HEAD, instead of the
# working tree: a baseline while others have uncommitted work), VM_CONF=FILE
# (install FILE as the guest's /etc/rngfeed.conf), VM_EXTRA_DEBS="pkg ..."
# (bookworm packages fetched with apt-get download into tests/vm/cache/debs-extra/
# and installed with dpkg -i into the image, e.g. jitterentropy-rngd),
# VM_IMAGE_ONLY=1 (stop once tests/vm/work/systemd/disk.img and initrd.img are
# made and print VM_IMAGE=, VM_INITRD=, VM_KVER=, VM_VMLINUZ= lines: what
# tests/vm/bootcost.sh and tests/vm/systemd-cases.sh boot), VM_APPEND (more
# kernel options), VM_QEMU_ARGS (more QEMU options), VM_IMAGE_HOOK=SCRIPT (run
# as SCRIPT ROOT on the image's tree before mkfs, e.g. to add a data file),
# VM_KERNEL=SUITE (boot Debian SUITE's kernel, from tests/vm/fetch-kernel.sh,
# e.g. trixie for 6.12, instead of bookworm's 6.1).
#
# What it does:
# 1. tests/vm/fetch.sh: Debian's 6.1 kernel and modules, in tests/vm/cache/.
# 2. Once, cached in tests/vm/cache/systemd-rootfs/: debootstrap --variant=
#    minbase of bookworm with systemd-sysv, udev, kmod and initramfs-tools.
#    Then, once per kernel release, its modules go into that tree and the
#    tree's own mkinitramfs makes an initrd that loads virtio_pci, virtio_blk
#    and ext4 (modules in Debian's 6.1) to mount the root disk.
# 3. Every run: the .deb from a copy of the working tree (dpkg-buildpackage
#    -b, as tests/deb-check.sh), installed with dpkg -i into a copy of the
#    cached tree together with rngfeed-vmtest.service (systemd-vmtest.service
#    and systemd-guest.sh here), then mkfs.ext4 -d makes the disk image.
# 4. QEMU (TCG, -cpu max, a swtpm TPM), bounded by timeout; the guest
#    reports on ttyS0 and powers off; the console log is checked here.
#
# Host packages: debootstrap qemu-system-x86 swtpm e2fsprogs dpkg-dev
# debhelper git, and the build dependencies (apt-get build-dep .).
# Exit 0 pass, 1 fail, 77 skip (not root, or a tool is missing).
set -u
cd "$(dirname "$0")/../.." || exit 2
repo=$PWD
vmdir=$repo/tests/vm
work=$vmdir/work/systemd
timeout_s=${VM_TIMEOUT:-300}
# libdivsufsort3: the package's one dependency outside minbase and systemd's.
include=systemd-sysv,udev,kmod,initramfs-tools,libdivsufsort3

t0=$(date +%s)
phase_start=$t0
phase() {
	local now
	now=$(date +%s)
	[ -z "${phase_name:-}" ] || echo "   ($phase_name: $((now - phase_start)) s)"
	phase_name=$1 phase_start=$now
	echo "== $1"
}
die() {
	echo "FAIL: $*"
	exit 1
}

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (debootstrap, chroot, dpkg -i into the image)"
	exit 77
fi
for tool in debootstrap qemu-system-x86_64 swtpm mkfs.ext4 dpkg-buildpackage \
	dpkg-checkbuilddeps chroot timeout; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool not found (apt-get install debootstrap qemu-system-x86 swtpm e2fsprogs dpkg-dev debhelper)"
		exit 77
	fi
done

tmp=$(mktemp -d /tmp/rngfeed-vm.XXXXXX) || exit 2
swtpm_pid='' qemu_pid=''
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
	# Only what this script started, by PID.
	[ -z "$qemu_pid" ] || kill "$qemu_pid" 2>/dev/null
	[ -z "$swtpm_pid" ] || kill "$swtpm_pid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
	[ "${VM_KEEP:-0}" = 1 ] || [ "${VM_IMAGE_ONLY:-0}" = 1 ] || rm -rf "$work/root" "$work/disk.img"
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT
trap 'exit 130' INT TERM

# shellcheck source=tests/vm/sdvm.sh
. "$vmdir/sdvm.sh"

# --- 1. kernel ----------------------------------------------------------------
phase "kernel: tests/vm/fetch.sh"
sdvm_kernel || die "no kernel"
echo "   kernel $VM_KVER"

# --- 2. the cached root file system --------------------------------------------
phase "the cached tree: $VM_CACHE/systemd-rootfs"
sdvm_rootfs systemd "$include" || die "the cached tree failed"

# --- 3. the package and the disk image ------------------------------------------
phase "dpkg-buildpackage -b in a copy of the working tree"
sdvm_deb "$work/deb" || die "the package was not built"

# What only this test's image holds: the reporter and its unit, and the
# check that the package enabled the unit.
systemd_image() {
	local root=$1 wants=etc/systemd/system/sysinit.target.wants/rngfeed.service
	# The package's postinst (dh_installsystemd, deb-systemd-helper) should have
	# enabled the unit; if not, that is a finding, and the test enables it.
	if [ -L "$root/$wants" ]; then
		pkg_enabled=yes
		echo "   the package enabled it: /$wants -> $(readlink "$root/$wants")"
	else
		pkg_enabled=no
		echo "   FINDING: dpkg -i did not enable rngfeed.service (no /$wants); enabling it for the test"
		ln -s /lib/systemd/system/rngfeed.service "$root/$wants"
	fi
	if [ -n "${VM_DROPIN:-}" ]; then
		# For trying a unit change without touching systemd/: the result is then
		# not that of the packaged unit, and says so.
		mkdir -p "$root/etc/systemd/system/rngfeed.service.d"
		install -m 0644 "$VM_DROPIN" "$root/etc/systemd/system/rngfeed.service.d/vmtest.conf" ||
			{ echo "cannot install VM_DROPIN=$VM_DROPIN" >&2; return 1; }
		echo "   NOTE: drop-in $VM_DROPIN installed; this run does not test the unit as packaged"
		sed 's/^/     /' "$VM_DROPIN"
	fi
	install -m 0755 "$vmdir/systemd-guest.sh" "$root/usr/local/sbin/rngfeed-vmtest"
	install -m 0644 "$vmdir/systemd-vmtest.service" "$root/etc/systemd/system/rngfeed-vmtest.service"
	ln -s /etc/systemd/system/rngfeed-vmtest.service \
		"$root/etc/systemd/system/multi-user.target.wants/rngfeed-vmtest.service"
}
phase "image: copy of the cached tree, dpkg -i, the test unit, mkfs.ext4 -d"
sdvm_mkimage "$work" systemd_image || die "the image was not made"
if [ "${VM_IMAGE_ONLY:-0}" = 1 ]; then
	phase "done (image only)"
	echo "VM_IMAGE=$SD_IMAGE"
	echo "VM_INITRD=$SD_INITRD"
	echo "VM_KVER=$VM_KVER"
	echo "VM_VMLINUZ=$VM_VMLINUZ"
	exit 0
fi

# --- 4. boot ----------------------------------------------------------------------
phase "boot: qemu-system-x86_64 -accel tcg -cpu max, swtpm TPM (at most $timeout_s s)"
mkdir "$tmp/tpm"
sock=$tmp/swtpm.sock
# not-need-init,startup-clear: swtpm runs TPM2_Startup itself.
swtpm socket --tpm2 --ctrl type=unixio,path="$sock" --tpmstate dir="$tmp/tpm" \
	--flags not-need-init,startup-clear --log file="$work/swtpm.log" &
swtpm_pid=$!
for _ in $(seq 50); do
	[ -S "$sock" ] && break
	kill -0 "$swtpm_pid" 2>/dev/null || break
	sleep 0.1
done
[ -S "$sock" ] || die "swtpm did not create its socket: $(cat "$work/swtpm.log" 2>/dev/null)"

console=$work/console.log
cmdline="root=/dev/vda rw console=ttyS0 panic=1 random.trust_cpu=off random.trust_bootloader=off systemd.unit=multi-user.target ${VM_APPEND:-}"
boot_start=$(date +%s)
# shellcheck disable=SC2086  # VM_QEMU_ARGS is a list of words
timeout -k 10 "$timeout_s" qemu-system-x86_64 -accel tcg -cpu max -m 1024 -smp 1 \
	-display none -monitor none -serial "file:$console" -no-reboot -nic none \
	-kernel "$VM_VMLINUZ" -initrd "$work/initrd.img" \
	-drive "file=$work/disk.img,if=virtio,format=raw" \
	-chardev "socket,id=chrtpm,path=$sock" -tpmdev emulator,id=tpm0,chardev=chrtpm \
	-device tpm-tis,tpmdev=tpm0 ${VM_QEMU_ARGS:-} \
	-append "$cmdline" </dev/null >"$work/qemu.log" 2>&1 &
qemu_pid=$!
wait "$qemu_pid"
qemu_rc=$?
qemu_pid=''
boot_s=$(($(date +%s) - boot_start))
kill "$swtpm_pid" 2>/dev/null
wait "$swtpm_pid" 2>/dev/null
swtpm_pid=''
phase "checks (console log: $console)"
[ $qemu_rc -ne 124 ] || echo "   QEMU was stopped after $timeout_s s"

# The report's lines, without the serial line's carriage returns.
tr -d '\r' <"$console" | sed -n 's/^@@ //p' >"$work/report.txt"
if ! grep -q '^end: ' "$work/report.txt"; then
	echo "--- last 40 console lines:"
	tr -d '\r' <"$console" | tail -n 40
	cat "$work/qemu.log"
	die "no complete report from the guest (QEMU exit $qemu_rc after $boot_s s)"
fi
sect() { sed -n "s/^$1: //p" "$work/report.txt"; }
prop() { sect "$1" | sed -n "s/^$2=//p" | head -n 1; }
# "[    5.123456] ..." to microseconds.
usec() { sed -n 's/^\[ *\([0-9]*\)\.\([0-9]\{6\}\)\].*/\1\2/p' | head -n 1 | sed 's/^0*\(.\)/\1/'; }
secs() { awk -v u="$1" 'BEGIN { printf "%.3f s", u / 1e6 }'; }

fail=0
ok() { echo "   ok: $*"; }
bad() {
	echo "   FAIL: $*"
	fail=1
}

echo "   guest: $(sect begin)"
enabled=$(sect enabled)
if [ "$enabled" = enabled ]; then
	ok "systemctl is-enabled rngfeed: enabled (by the package: $pkg_enabled)"
else
	bad "systemctl is-enabled rngfeed says '$enabled'"
fi
[ $pkg_enabled = yes ] || bad "the package did not enable rngfeed.service"

state="$(prop show ActiveState)/$(prop show SubState)"
if [ "$state" = active/running ]; then
	ok "rngfeed.service is active (running)"
else
	bad "rngfeed.service is $state (Result=$(prop show Result), NRestarts=$(prop show NRestarts))"
fi

# The assessment thread asks for nice ASSESSOR_NICE (src/assessor.c); the
# unit's SystemCallFilter= must let setpriority through, or it stays at 0.
nice_want=$(sed -n 's/^#define ASSESSOR_NICE \([0-9]*\).*/\1/p' include/rngfeed/assessor.h)
assess=$(sect threads | awk '$2 == "rngfeed-assess"')
if [ -z "$assess" ]; then
	bad "no rngfeed-assess thread in the daemon; its threads: $(sect threads | tr '\n' ';')"
elif grep -qv " nice=$nice_want\$" <<<"$assess"; then
	bad "the assessment thread is not at nice $nice_want (the filter refused setpriority?): $(tr '\n' ';' <<<"$assess")"
else
	ok "$(grep -c . <<<"$assess") assessment thread(s) at nice $nice_want: $(tr '\n' ';' <<<"$assess")"
fi
refused=$(sect seccomp)
[ -z "$refused" ] || bad "the kernel logged system calls the filter refused: $refused"
echo "   guest's systemd-analyze security: $(sect security)"

start=$(prop show ExecMainStartTimestampMonotonic)
ready=$(prop show ActiveEnterTimestampMonotonic)
sysinit=$(prop sysinit ActiveEnterTimestampMonotonic)
# For Type=notify, systemd enters "active" when READY=1 arrives.
if [ "${ready:-0}" -gt 0 ] && [ "${sysinit:-0}" -gt 0 ] && [ "$ready" -lt "$sysinit" ]; then
	ok "READY=1 at $(secs "$ready"), before sysinit.target at $(secs "$sysinit") (started at $(secs "$start"))"
else
	bad "READY=1 not before sysinit.target: ActiveEnter=${ready:-?} sysinit.target=${sysinit:-?} (µs)"
fi

status_text=$(prop show StatusText)
if [ -n "$status_text" ] && sect status | grep -q 'Status: "'; then
	ok "systemctl status shows the STATUS= text: \"$status_text\""
else
	bad "no STATUS= text in systemctl status (StatusText='$status_text')"
fi

credit_line=$(sect journal | grep 'kernel CRNG is ready (' | head -n 1)
if [ -n "$credit_line" ]; then
	ok "journal: $credit_line"
else
	bad "the journal has no 'kernel CRNG is ready (N bits credited so far)' line (rngfeed logs it when its feed finds the CRNG newly ready; one ready at its start gets an info line, not shown by default)"
fi

crng_line=$(sect dmesg | grep 'crng init done' | head -n 1)
crng=$(usec <<<"$crng_line")
credit=$(usec <<<"$credit_line")
# Before the CRNG is ready, a blocking getrandom() or a /dev/urandom read
# makes the kernel run its own jitter entropy collection until it is ready;
# systemd-random-seed does the former when it finds the pool not ready.  Had
# one run, the CRNG may have been seeded by it, not (only) by rngfeed.
blockers=$( (sect timeline | grep 'not initialized yet, waiting'
	sect dmesg | grep 'uninitialized urandom read') | head -n 3)
if [ -z "$crng" ]; then
	bad "the kernel never printed 'crng init done'"
elif [ -z "$start" ] || [ "$crng" -lt "$start" ]; then
	bad "crng init done at $(secs "$crng"), before rngfeed started at $(secs "${start:-0}")"
elif [ -z "$credit" ] || [ "$crng" -gt "$credit" ]; then
	bad "crng init done at $(secs "$crng"), not before rngfeed's 'kernel CRNG is ready' line (${credit:-none})"
elif [ -n "$blockers" ]; then
	bad "crng init done at $(secs "$crng") after rngfeed started, but the kernel's jitter entropy was running too: not shown that rngfeed seeded it"
else
	ok "crng init done at $(secs "$crng"): $(secs $((crng - start))) after rngfeed started, $(secs $((credit - crng))) before its first-credit line; no blocking reader before it"
fi
[ -z "$blockers" ] || sed 's/^/         waiting for the CRNG before it was ready: /' <<<"$blockers"

echo "   systemd-analyze: $(sect analyze | head -n 1)"
echo "   systemd-analyze blame:"
sect blame | sed 's/^/     /'
echo "   critical chain:"
sect chain | sed 's/^/     /'
failed=$(sect failed)
[ -z "$failed" ] || echo "   failed units: $failed"
echo "   rngfeed journal:"
sect journal | sed 's/^/     /'
echo "   the guest journal's lines about rngfeed and the kernel's random pool:"
sect timeline | sed 's/^/     /'

phase "done"
echo "   total $(($(date +%s) - t0)) s, of which QEMU $boot_s s"
if [ $fail -eq 0 ]; then
	echo "PASS: rngfeed from its .deb starts at boot under systemd, READY before sysinit.target, and seeds the CRNG"
else
	echo "FAIL: see above (report: $work/report.txt, console: $console)"
fi
exit $fail
