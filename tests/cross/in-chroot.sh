#!/bin/bash
# Runs a command in a chroot made by tests/cross/mkchroot.sh, under
# qemu-user for a foreign architecture:
#
#   tests/cross/in-chroot.sh DIR [--cpu MODEL] COMMAND [ARG...]
#
# The chroot gets its own /proc, a tmpfs /tmp and a /dev with only the
# common character devices (null, zero, full, random, urandom, tty) and a
# private devpts, and a read-only /sys.  No /dev/hwrng, /dev/tpm*,
# /dev/vmgenid: the tests that need the machine's devices skip there with
# their reason, and nothing run in the chroot can change the host
# (rng_quality, a hw_random device shared with the native tests).
# RNGFEED_EMULATED=1 tells the tests that they run under qemu-user (a
# check that times code skips, with the reason), and TEST_TIME_SCALE=4
# stretches the scripts' waits and Check's timeouts (CK_TIMEOUT_MULTIPLIER:
# a test case's bound against hangs, not a measure: check_sysfs_io's case
# of about 2.2 s had Check's 4-s default under qemu, at nice 19).  --cpu sets QEMU_CPU
# (qemu-user's CPU model: the instructions the program sees).  Everything
# mounted is unmounted when the command ends, whatever its status.  Needs
# root.  Exit status: the command's.
set -euo pipefail
dir=$(realpath "${1:?usage: $0 DIR [--cpu MODEL] COMMAND [ARG...]}")
shift
cpu=
if [ "${1:-}" = --cpu ]; then
	cpu=$2
	shift 2
fi
[ $# -gt 0 ] || { echo "usage: $0 DIR [--cpu MODEL] COMMAND [ARG...]" >&2; exit 2; }
[ -f "$dir/.rngfeed-chroot" ] || { echo "in-chroot: $dir is not a chroot from mkchroot.sh" >&2; exit 2; }

# Debian registers qemu-user handlers with flag P but not F: the kernel
# looks for the interpreter (/usr/libexec/qemu-binfmt/ARCH-binfmt-P, a
# link to /usr/bin/qemu-ARCH-static) inside the chroot.  Put the host's
# there (and refresh it: a chroot outlives qemu upgrades).
for h in /proc/sys/fs/binfmt_misc/qemu-*; do
	[ -f "$h" ] || continue
	interp=$(sed -n 's/^interpreter //p' "$h")
	grep -q '^flags:.*F' "$h" && continue
	case $interp in /usr/libexec/qemu-binfmt/*) ;; *) continue ;; esac
	target=$(readlink -f "$interp")
	[ -x "$target" ] || continue
	mkdir -p "$dir/usr/libexec/qemu-binfmt" "$dir$(dirname "$target")"
	cmp -s "$target" "$dir$target" || cp "$target" "$dir$target"
	ln -sfn "$target" "$dir$interp"
done

mounted=()
cleanup() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" || true
	done
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT
# Stopped (a CI run that failed stops its background lane's process
# group): unmounted all the same, by the EXIT trap.
trap 'exit 143' TERM INT HUP
mnt() { # TARGET MOUNT-ARGS...
	local t=$1
	shift
	mkdir -p "$t"
	mount "$@" "$t"
	mounted+=("$t")
}
mnt "$dir/proc" -t proc proc
# sysfs read-only: what the code reads from it is there (device classes,
# hw_random's files), and nothing run here can write to it.
mnt "$dir/sys" -t sysfs -o ro,nosuid,nodev,noexec sysfs
# Without the kernel's hw_random files: the chroot has no /dev/hwrng, and
# rng_quality is the host's, which native tests and daemons change at any
# moment (tests/run-tests.sh would blame the test it was running).
hw=$dir/sys/devices/virtual/misc/hw_random
[ -d "$hw" ] && mnt "$hw" -t tmpfs -o ro,size=4k,mode=0555 tmpfs
mnt "$dir/tmp" -t tmpfs -o mode=1777,size=2g tmpfs
mnt "$dir/dev" -t tmpfs -o mode=0755,size=1m tmpfs
for d in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
	IFS=: read -r name maj min <<<"$d"
	mknod -m 0666 "$dir/dev/$name" c "$maj" "$min"
done
ln -s /proc/self/fd "$dir/dev/fd"
ln -s /proc/self/fd/0 "$dir/dev/stdin"
ln -s /proc/self/fd/1 "$dir/dev/stdout"
ln -s /proc/self/fd/2 "$dir/dev/stderr"
mkdir -p "$dir/dev/shm"
mnt "$dir/dev/pts" -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts
ln -s pts/ptmx "$dir/dev/ptmx"
mnt "$dir/dev/shm" -t tmpfs -o mode=1777,size=64m tmpfs

rc=0
env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb \
	${cpu:+QEMU_CPU=$cpu} RNGFEED_EMULATED=1 TEST_TIME_SCALE="${TEST_TIME_SCALE:-4}" \
	CK_TIMEOUT_MULTIPLIER="${TEST_TIME_SCALE:-4}" \
	${CROSS_ENV:-} chroot "$dir" "$@" || rc=$?
exit $rc
