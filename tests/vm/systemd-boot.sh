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
trap cleanup EXIT
trap 'exit 130' INT TERM

# The bookworm mirror this machine's apt uses (one-line or deb822 format).
find_mirror() {
	local f
	{
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -f "$f" ] || continue
			awk '$1 == "deb" { i = 2
				if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
				if ($(i + 1) == "bookworm") print $i }' "$f"
		done
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] || continue
			awk 'BEGIN { RS = "" }
				/(^|\n)Suites:[^\n]*[ \t]bookworm([ \t\n]|$)/ &&
				match($0, /(^|\n)URIs:[ \t]*[^ \t\n]+/) {
					u = substr($0, RSTART, RLENGTH); sub(/^\n?URIs:[ \t]*/, "", u); print u }' "$f"
		done
	} | head -n 1
}

# --- 1. kernel ----------------------------------------------------------------
phase "kernel: tests/vm/fetch.sh"
[ -x "$vmdir/fetch.sh" ] || die "tests/vm/fetch.sh is missing"
vars=$("$vmdir/fetch.sh") || die "tests/vm/fetch.sh failed"
eval "$vars"
if [ -n "${VM_KERNEL:-}" ]; then
	vars=$("$vmdir/fetch-kernel.sh" "$VM_KERNEL") || die "tests/vm/fetch-kernel.sh $VM_KERNEL failed"
	eval "$vars"
fi
: "${VM_CACHE:?}" "${VM_KVER:?}" "${VM_VMLINUZ:?}" "${VM_KCONFIG:?}" "${VM_MODROOT:?}"
[ -d "$VM_MODROOT/lib/modules/$VM_KVER" ] || die "no $VM_MODROOT/lib/modules/$VM_KVER"
echo "   kernel $VM_KVER"

# --- 2. the cached root file system --------------------------------------------
base=$VM_CACHE/systemd-rootfs
if [ ! -d "$base" ] || [ "$(cat "$base.stamp" 2>/dev/null)" != "$include" ]; then
	mirror=${VM_MIRROR:-$(find_mirror)}
	[ -n "$mirror" ] || die "no bookworm mirror in /etc/apt/sources.list*; set VM_MIRROR"
	phase "debootstrap --variant=minbase --include=$include bookworm ($mirror)"
	rm -rf "$base" "$base.new" "$base.stamp" "$base.kver"
	debootstrap --variant=minbase --include="$include" bookworm "$base.new" "$mirror" \
		>"$tmp/debootstrap.log" 2>&1 ||
		{ tail -n 30 "$tmp/debootstrap.log"; rm -rf "$base.new"; die "debootstrap failed"; }
	# bookworm is merged-/usr: /lib is a relative link to usr/lib.
	[ -d "$base.new/usr/lib" ] || die "debootstrap left no usr/lib"
	echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' >"$base.new/etc/fstab"
	# The report goes to ttyS0; a login prompt there would only get in its way.
	ln -sf /dev/null "$base.new/etc/systemd/system/serial-getty@ttyS0.service"
	# Debian's initramfs with just what mounts the root disk: small and quick
	# to unpack under emulation (zstd is not in the tree, hence gzip).
	printf 'MODULES=list\nCOMPRESS=gzip\n' \
		>"$base.new/etc/initramfs-tools/conf.d/rngfeed-vmtest.conf"
	printf 'virtio_pci\nvirtio_blk\next4\n' >>"$base.new/etc/initramfs-tools/modules"
	mv "$base.new" "$base"
	echo "$include" >"$base.stamp"
fi
# The kernel image in /boot and update-initramfs -c, as the kernel
# package leaves them: update-initramfs -u (a package's initramfs trigger)
# rebuilds the initrds of the kernels it finds there.
if [ "$(cat "$base.kver" 2>/dev/null)" != "$VM_KVER with vmlinuz, update-initramfs -c" ]; then
	phase "modules and initramfs for $VM_KVER in the cached tree"
	rm -rf "${base:?}/usr/lib/modules" "${base:?}"/boot/*
	mkdir -p "$base/usr/lib/modules"
	cp -a "$VM_MODROOT/lib/modules/$VM_KVER" "$base/usr/lib/modules/" || die "copying the modules failed"
	cp "$VM_KCONFIG" "$base/boot/config-$VM_KVER"
	cp "$VM_VMLINUZ" "$base/boot/vmlinuz-$VM_KVER"
	chroot "$base" depmod "$VM_KVER" || die "depmod in the tree failed"
	rm -rf "$base/var/lib/initramfs-tools"
	chroot "$base" update-initramfs -c -k "$VM_KVER" \
		>"$tmp/mkinitramfs.log" 2>&1 ||
		{ cat "$tmp/mkinitramfs.log"; die "update-initramfs -c in the tree failed"; }
	echo "$VM_KVER with vmlinuz, update-initramfs -c" >"$base.kver"
fi

# --- 3. the package and the disk image ------------------------------------------
phase "dpkg-buildpackage -b in a copy of the working tree"
rm -rf "$work"
mkdir -p "$work/deb/rngfeed"
src=$work/deb/rngfeed
if [ -n "${VM_REV:-}" ]; then
	git archive --format=tar "$VM_REV" | tar -x -C "$src" || die "git archive $VM_REV failed"
	echo "   from git archive $VM_REV ($(git rev-parse --short "$VM_REV"))"
elif [ -e .git ]; then
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar -c --null -T - -f - | tar -x -C "$src" || die "copying the tree failed"
else
	cp -a . "$src" || die "copying the tree failed"
fi
(cd "$src" && dpkg-checkbuilddeps) >"$tmp/bdeps" 2>&1 ||
	die "$(cat "$tmp/bdeps") (apt-get build-dep ./ or make deps)"
# nocheck: the unit tests are make check's job; this test is about the boot.
(cd "$src" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b) \
	>"$work/build.log" 2>&1 ||
	{ tail -n 40 "$work/build.log"; die "dpkg-buildpackage failed (log: $work/build.log)"; }
deb=''
for f in "$work"/deb/rngfeed_*.deb; do [ -f "$f" ] && deb=$f; done
[ -n "$deb" ] || die "no rngfeed_*.deb after the build"
echo "   $(basename "$deb")"

phase "image: copy of the cached tree, dpkg -i, the test unit, mkfs.ext4 -d"
root=$work/root
cp -a "$base" "$root" || die "copying the cached tree failed"
cp "$deb" "$root/tmp/rngfeed.deb"
DEBIAN_FRONTEND=noninteractive chroot "$root" dpkg -i /tmp/rngfeed.deb >"$work/dpkg.log" 2>&1 ||
	{ cat "$work/dpkg.log"; die "dpkg -i in the image failed"; }
rm -f "$root/tmp/rngfeed.deb"
# The package's postinst (dh_installsystemd, deb-systemd-helper) should have
# enabled the unit; if not, that is a finding, and the test enables it.
wants=etc/systemd/system/sysinit.target.wants/rngfeed.service
if [ -L "$root/$wants" ]; then
	pkg_enabled=yes
	echo "   the package enabled it: /$wants -> $(readlink "$root/$wants")"
else
	pkg_enabled=no
	echo "   FINDING: dpkg -i did not enable rngfeed.service (no /$wants); enabling it for the test"
	ln -s /lib/systemd/system/rngfeed.service "$root/$wants"
fi
# A host name that does not contain "rngfeed", so the guest's grep for
# rngfeed's journal lines picks only those.
echo vmguest >"$root/etc/hostname"
if [ -n "${VM_DROPIN:-}" ]; then
	# For trying a unit change without touching systemd/: the result is then
	# not that of the packaged unit, and says so.
	mkdir -p "$root/etc/systemd/system/rngfeed.service.d"
	install -m 0644 "$VM_DROPIN" "$root/etc/systemd/system/rngfeed.service.d/vmtest.conf" ||
		die "cannot install VM_DROPIN=$VM_DROPIN"
	echo "   NOTE: drop-in $VM_DROPIN installed; this run does not test the unit as packaged"
	sed 's/^/     /' "$VM_DROPIN"
fi
if [ -n "${VM_CONF:-}" ]; then
	install -m 0644 "$VM_CONF" "$root/etc/rngfeed.conf" || die "cannot install VM_CONF=$VM_CONF"
	echo "   NOTE: /etc/rngfeed.conf from $VM_CONF:"
	grep -v '^[[:space:]]*\(#\|$\)' "$VM_CONF" | sed 's/^/     /'
fi
if [ -n "${VM_EXTRA_DEBS:-}" ]; then
	extra=$VM_CACHE/debs-extra
	mkdir -p "$extra"
	for p in $VM_EXTRA_DEBS; do
		ls "$extra/${p}"_*.deb >/dev/null 2>&1 ||
			(cd "$extra" && apt-get download -q "$p") >"$tmp/extra.log" 2>&1 ||
			{ cat "$tmp/extra.log"; die "apt-get download $p failed"; }
		cp "$extra/${p}"_*.deb "$root/tmp/"
	done
	DEBIAN_FRONTEND=noninteractive chroot "$root" sh -c 'dpkg -i /tmp/*.deb' >"$work/dpkg-extra.log" 2>&1 ||
		{ cat "$work/dpkg-extra.log"; die "dpkg -i of $VM_EXTRA_DEBS in the image failed"; }
	rm -f "$root"/tmp/*.deb
	echo "   installed: $VM_EXTRA_DEBS"
fi
if [ -n "${VM_IMAGE_HOOK:-}" ]; then
	"$VM_IMAGE_HOOK" "$root" || die "VM_IMAGE_HOOK=$VM_IMAGE_HOOK failed"
	echo "   NOTE: VM_IMAGE_HOOK=$VM_IMAGE_HOOK ran on the image"
fi
install -m 0755 "$vmdir/systemd-guest.sh" "$root/usr/local/sbin/rngfeed-vmtest"
install -m 0644 "$vmdir/systemd-vmtest.service" "$root/etc/systemd/system/rngfeed-vmtest.service"
ln -s /etc/systemd/system/rngfeed-vmtest.service \
	"$root/etc/systemd/system/multi-user.target.wants/rngfeed-vmtest.service"
# A first boot: no saved seed that systemd-random-seed could load.
rm -f "$root/var/lib/systemd/random-seed"
cp "$root/boot/initrd.img-$VM_KVER" "$work/initrd.img"
size_mb=$(($(du -sm "$root" | cut -f1) * 5 / 4 + 256))
truncate -s "${size_mb}M" "$work/disk.img"
mkfs.ext4 -q -F -L rngfeed-vm -d "$root" "$work/disk.img" >"$tmp/mkfs.log" 2>&1 ||
	{ cat "$tmp/mkfs.log"; die "mkfs.ext4 -d failed"; }
rm -rf "$root"
echo "   $work/disk.img: ${size_mb} MiB (sparse)"
if [ "${VM_IMAGE_ONLY:-0}" = 1 ]; then
	phase "done (image only)"
	echo "VM_IMAGE=$work/disk.img"
	echo "VM_INITRD=$work/initrd.img"
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
