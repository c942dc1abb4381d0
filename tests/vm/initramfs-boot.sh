#!/bin/bash
# make vm-test-initramfs: rngfeed in a real initramfs made by Debian's own
# mkinitramfs (initramfs-tools) with the package's hook, booted under QEMU.
#
# 1. The Debian 12 guest of tests/vm/systemd-boot.sh (bookworm minbase,
#    systemd, initramfs-tools) with this tree's .deb installed by dpkg -i;
#    tests/vm/initramfs-image-hook.sh then checks that the package's trigger
#    rebuilt the initramfs (scripts in, binary out: the switch is off as
#    shipped) and makes two images with update-initramfs -u, the switch
#    RNGFEED_INITRAMFS in /etc/default/rngfeed off and on, with a probe
#    that reports from inside the initramfs just before switch_root.
# 2. Four boots (TCG, -cpu max, random.trust_cpu=off, no TPM): the switch
#    off and on, each with a virtio-rng (host /dev/urandom) and without one
#    (rngfeed then has RDRAND only, which the kernel does not trust).
# Checks for each boot with the switch on: rngfeed ran in the initramfs and
# credited, was stopped before switch_root (no rngfeed process at the
# probe), rng_quality was back at its value from before rngfeed started,
# and in the real root rngfeed.service is active with the only rngfeed
# process; reports when the kernel's CRNG became ready against the switch.
# 3. With INITRAMFS_DRACUT=1 (the default) the hook then installs dracut
#    into the tree (apt-get there; skipped with the reason if that fails)
#    and makes its images; two more boots with the switch on (a systemd
#    initramfs: rngfeed-initrd.service).
# Knobs: VM_CLOCK (default icount: guest time counts instructions, so
# times compare whatever loads the host; tcg follows the host's clock), VM_TIMEOUT, VM_KERNEL (see
# systemd-boot.sh).  Ends with "N passed, N failed"; 77 when QEMU or
# debootstrap are missing, or not root.
# shellcheck disable=SC2015,SC2054,SC2034  # ok() always succeeds; QEMU commas; SD_INITRD is sdvm.sh's
set -u
cd "$(dirname "$0")/../.." || exit 2
vmdir=$PWD/tests/vm
for t in qemu-system-x86_64 debootstrap dpkg-buildpackage; do
	command -v "$t" >/dev/null 2>&1 ||
		{ echo "SKIP: $t not found (apt-get install qemu-system-x86 debootstrap dpkg-dev debhelper)"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (debootstrap, chroot)"; exit 77; }
tmp=$(mktemp -d /tmp/rngfeed-initramfs.XXXXXX) || exit 2
trap '[ "$BASHPID" != $$ ] || rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
# shellcheck source=tests/vm/sdvm.sh
. "$vmdir/sdvm.sh"
work=$vmdir/work/initramfs
rm -rf "$work"
mkdir -p "$work"
passed=0 failed=0
ok() { echo "   ok: $*"; passed=$((passed + 1)); }
bad() { echo "   FAIL: $*"; failed=$((failed + 1)); }
finish() { echo "vm-test-initramfs: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }

echo "== image (tests/vm/systemd-boot.sh VM_IMAGE_ONLY=1 with the initramfs hook)"
export INITRAMFS_OUT=$work VM_IMAGE_HOOK=$vmdir/initramfs-image-hook.sh
export INITRAMFS_DRACUT=${INITRAMFS_DRACUT:-1}
if ! sdvm_image "$work/image"; then
	tail -n 40 "$work/image/build.log"
	bad "the guest image was not built (log: $work/image/build.log)"
	finish
fi
fact() { sed -n "s/^$1=//p" "$work/facts.txt" | head -n 1; }
[ "$(fact trigger_scripts)" = yes ] && [ "$(fact trigger_binary)" = no ] &&
	ok "dpkg -i ran the initramfs trigger: the boot scripts are in the initramfs, the binary not (switch off as shipped)" ||
	bad "after dpkg -i the initramfs has scripts=$(fact trigger_scripts) binary=$(fact trigger_binary) (want yes/no)"
[ "$(fact binary_on)" = yes ] && [ "$(fact binary_off)" = no ] &&
	ok "update-initramfs -u puts rngfeed in only with RNGFEED_INITRAMFS=yes" ||
	bad "binary in the initramfs: off=$(fact binary_off) on=$(fact binary_on)"
size_off=$(fact size_off) size_on=$(fact size_on)
echo "   initramfs size: off $size_off B, on $size_on B (+$(((size_on - size_off) / 1024)) KiB)"

results=$work/results.md
{
	echo "| initramfs | switch | virtio-rng | CRNG ready (guest s) | switch_root (guest s) | ready in the initramfs |"
	echo "|---|---|---|---|---|---|"
} >"$results"
# A loaded host stretches an icount boot's wall time (seen: over 300 s).
export SD_NO_TPM=1 VM_CLOCK=${VM_CLOCK:-icount} VM_TIMEOUT=${VM_TIMEOUT:-900}
# The boots: initramfs-tools' images with the switch off and on, then
# dracut's with it on (its image with the switch off is only checked
# for the binary: the real root's boot is the same).
boots="tools:off:virtio tools:off:none tools:on:virtio tools:on:none"
if [ "$(fact dracut)" = "" ] || [ "${INITRAMFS_DRACUT}" != 1 ]; then
	echo "SKIP: dracut: not tried (INITRAMFS_DRACUT=0)"
elif [[ "$(fact dracut)" == unavailable* ]]; then
	echo "SKIP: dracut: $(fact dracut)"
else
	[ "$(fact binary_dracut-on)" = yes ] && [ "$(fact binary_dracut-off)" = no ] &&
		ok "dracut $(fact dracut): rngfeed in the initramfs only with RNGFEED_INITRAMFS=yes" ||
		bad "dracut: binary in the initramfs: off=$(fact binary_dracut-off) on=$(fact binary_dracut-on)"
	echo "   dracut initramfs size: off $(fact size_dracut-off) B, on $(fact size_dracut-on) B (+$((($(fact size_dracut-on) - $(fact size_dracut-off)) / 1024)) KiB)"
	boots="$boots dracut:on:virtio dracut:on:none"
fi
for b in $boots; do
	IFS=: read -r kind sw rng <<<"$b"
	{
		name=$kind-$sw-$rng
		echo "== boot: $kind, switch $sw, ${rng/none/no virtio-rng}"
		args=()
		[ $rng = virtio ] && args=(-object rng-random,id=rng0,filename=/dev/urandom
			-device virtio-rng-pci,rng=rng0)
		SD_INITRD=$work/initrd-$sw.img
		[ "$kind" = dracut ] && SD_INITRD=$work/initrd-dracut-$sw.img
		sdvm_boot "$work/$name.log" "" "${args[@]}"
		rep=$work/$name.report
		if ! grep -q '^end: ' "$rep"; then
			tail -n 30 "$work/$name.log"
			bad "$name: no complete report from the guest"
			continue
		fi
		init() { sdvm_sect "$rep" initrd | sed -n "s/^$1=//p" | head -n 1; }
		crng=$(sdvm_sect "$rep" dmesg | grep 'crng init done' | sdvm_usec)
		up=$(init uptime)
		up_us=$(awk -v s="$up" 'BEGIN { printf "%d", s * 1e6 }')
		inside=no
		[ -n "$crng" ] && [ "$crng" -le "$up_us" ] && inside=yes
		crng_s=$(awk -v u="${crng:-0}" 'BEGIN { printf "%.3f", u / 1e6 }')
		[ -n "$crng" ] || crng_s=never
		echo "| $kind | $sw | $rng | $crng_s | ${up:-?} | $inside |" >>"$results"
		echo "   CRNG ready at $crng_s s; switch_root at ${up:-?} s; ready in the initramfs: $inside"
		state="$(sdvm_prop "$rep" show ActiveState)/$(sdvm_prop "$rep" show SubState)"
		[ "$state" = active/running ] && ok "$name: rngfeed.service active (running) in the real root" ||
			bad "$name: rngfeed.service is $state in the real root"
		procs=$(sdvm_sect "$rep" procs | grep -c .)
		[ "$procs" -eq 1 ] && ok "$name: one rngfeed process in the real root (the service's)" ||
			bad "$name: $procs rngfeed processes in the real root: $(sdvm_sect "$rep" procs | tr '\n' ' ')"
		if [ $sw = off ]; then
			[ "$(init binary)" = no ] && ok "$name: no rngfeed in the initramfs" ||
				bad "$name: the initramfs has rngfeed with the switch off"
			continue
		fi
		log=$(sdvm_sect "$rep" initrd-log)
		fed=$(grep -m1 -E 'fed [0-9]+ bytes crediting [1-9][0-9]* bits' <<<"$log" | sed 's/^rngfeed: *//')
		[ "$(init binary)" = yes ] && [ -n "$fed" ] &&
			ok "$name: rngfeed credited the kernel in the initramfs: ${fed%%(*}" ||
			{ bad "$name: rngfeed did not run a source in the initramfs"; sed 's/^/      /' <<<"$log"; }
		[ "$(init rngfeed_running)" = 0 ] && grep -q '^rngfeed-initramfs: stopped' <<<"$log" &&
			ok "$name: stopped before switch_root ($(grep '^rngfeed-initramfs: stopped' <<<"$log"))" ||
			bad "$name: rngfeed_running=$(init rngfeed_running) at switch_root; $(grep '^rngfeed-initramfs: ' <<<"$log" | tail -n 1)"
		q0=$(sed -n 's/^rngfeed-initramfs: starting; rng_quality=//p' <<<"$log")
		[ -n "$q0" ] && [ "$q0" = "$(init quality)" ] &&
			ok "$name: rng_quality back at $q0 before switch_root" ||
			bad "$name: rng_quality was '$q0' before rngfeed and '$(init quality)' after its stop"
		[ "$inside" = yes ] && ok "$name: the CRNG was ready inside the initramfs" ||
			bad "$name: the CRNG was not ready inside the initramfs"
	}
done
echo "== results ($results)"
cat "$results"
finish
