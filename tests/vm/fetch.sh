#!/bin/sh
# tests/vm/fetch.sh — fetch (once) what the whole-boot tests boot: a Debian 6.1 kernel,
# a static busybox and Debian's rngd. Nothing is installed on the host: the packages are
# fetched with `apt-get download` and unpacked with `dpkg -x` into the cache.
#
# Usage:   eval "$(tests/vm/fetch.sh)"     # sets and exports the VM_* variables below
#          VM_CACHE=/some/dir tests/vm/fetch.sh
#          VM_REFRESH=1 tests/vm/fetch.sh  # look for a newer kernel even if one is cached
#
# Cache directory: $VM_CACHE (default tests/vm/cache next to this script). What it leaves
# there, and prints as shell assignments on stdout (progress goes to stderr):
#   VM_CACHE     the cache directory itself (absolute)
#   VM_KVER      kernel release, e.g. 6.1.0-57-amd64           (also in $VM_CACHE/kver)
#   VM_VMLINUZ   $VM_CACHE/vmlinuz                             the bootable kernel image
#   VM_KCONFIG   $VM_CACHE/config                              its build configuration
#   VM_MODROOT   $VM_CACHE/modules                             dpkg -x of the kernel package;
#                modules are in $VM_MODROOT/lib/modules/$VM_KVER/ (kernel/..., modules.order,
#                modules.builtin); modules.dep there is made by busybox depmod, so that
#                `modprobe -d` works on a copy of that tree
#   VM_BUSYBOX   $VM_CACHE/busybox                             static busybox (busybox-static)
#   VM_RNGD      $VM_CACHE/rngd                                Debian's rngd (rng-tools5); it
#                links libc and libgcrypt dynamically, the host's copies are the ones to use
# $VM_CACHE/debs/ holds the downloaded .deb files; $VM_CACHE/stamp names their versions.
#
# Which kernel: the newest linux-image-6.1.0-NN-amd64 apt offers (the signed image; not -rt,
# -cloud, -dbg), or the newest -unsigned one if no signed one exists. Exits 1 with a message
# on stderr when apt offers none and nothing is cached.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
VM_CACHE=${VM_CACHE:-$here/cache}
mkdir -p "$VM_CACHE"
VM_CACHE=$(cd "$VM_CACHE" && pwd)
say() { echo "fetch.sh: $*" >&2; }

# The newest package whose name matches $1 (an ERE) and that has an installation candidate.
newest() {
	apt-cache pkgnames linux-image-6.1.0- 2>/dev/null | grep -E "$1" | sort -V -r |
	while read -r p; do
		v=$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: //p')
		if [ -n "$v" ] && [ "$v" != "(none)" ]; then echo "$p"; break; fi
	done
}

candidate() { apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p'; }

want=""
if [ -z "${VM_REFRESH:-}" ] && [ -s "$VM_CACHE/stamp" ] && [ -s "$VM_CACHE/vmlinuz" ] &&
   [ -x "$VM_CACHE/busybox" ] && [ -x "$VM_CACHE/rngd" ]; then
	: # cached and no refresh asked for: no apt look-ups, works offline
else
	kpkg=$(newest '^linux-image-6\.1\.0-[0-9]+-amd64$')
	[ -n "$kpkg" ] || kpkg=$(newest '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$')
	if [ -z "$kpkg" ]; then
		if [ -s "$VM_CACHE/stamp" ]; then
			say "apt offers no linux-image-6.1.0-*-amd64; using the cached one"
		else
			say "apt offers no linux-image-6.1.0-*-amd64 (Debian 12 with apt-get update done?)"
			exit 1
		fi
	else
		want="$kpkg=$(candidate "$kpkg") busybox-static=$(candidate busybox-static) rng-tools5=$(candidate rng-tools5)"
	fi
fi

if [ -n "$want" ] && [ "$want" != "$(cat "$VM_CACHE/stamp" 2>/dev/null)" ]; then
	say "downloading $want"
	rm -rf "$VM_CACHE/debs" "$VM_CACHE/modules" "$VM_CACHE/bb" "$VM_CACHE/rt5" "$VM_CACHE/stamp"
	mkdir -p "$VM_CACHE/debs"
	# apt-get download writes to the current directory; as root it warns that _apt cannot
	# write there (it then downloads unsandboxed), which is harmless.
	# shellcheck disable=SC2086  # $want is a list of pkg=version words
	(cd "$VM_CACHE/debs" && apt-get download -q $want >&2)
	kdeb=$(ls "$VM_CACHE"/debs/linux-image-6.1.0-*.deb)
	dpkg -x "$kdeb" "$VM_CACHE/modules"
	dpkg -x "$(ls "$VM_CACHE"/debs/busybox-static_*.deb)" "$VM_CACHE/bb"
	dpkg -x "$(ls "$VM_CACHE"/debs/rng-tools5_*.deb)" "$VM_CACHE/rt5"
	kver=$(ls "$VM_CACHE/modules/lib/modules" | head -n 1)
	cp "$VM_CACHE/modules/boot/vmlinuz-$kver" "$VM_CACHE/vmlinuz"
	cp "$VM_CACHE/modules/boot/config-$kver" "$VM_CACHE/config"
	cp "$VM_CACHE/bb/bin/busybox" "$VM_CACHE/busybox"
	cp "$VM_CACHE/rt5/usr/sbin/rngd" "$VM_CACHE/rngd"
	# The .deb carries no modules.dep (its postinst runs depmod on install); make one so
	# modprobe can resolve dependencies inside a guest.
	"$VM_CACHE/busybox" depmod -b "$VM_CACHE/modules" "$kver" >&2
	echo "$kver" >"$VM_CACHE/kver"
	echo "$want" >"$VM_CACHE/stamp"
else
	say "cached: $(cat "$VM_CACHE/stamp")"
fi

kver=$(cat "$VM_CACHE/kver")
cat <<EOF
export VM_CACHE='$VM_CACHE'
export VM_KVER='$kver'
export VM_VMLINUZ='$VM_CACHE/vmlinuz'
export VM_KCONFIG='$VM_CACHE/config'
export VM_MODROOT='$VM_CACHE/modules'
export VM_BUSYBOX='$VM_CACHE/busybox'
export VM_RNGD='$VM_CACHE/rngd'
EOF
