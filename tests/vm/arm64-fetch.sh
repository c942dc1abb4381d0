#!/bin/sh
# tests/vm/arm64-fetch.sh — fetch (once) what the arm64 whole-boot test needs, for
# tests/vm/arm64-boot.sh: Debian 12's current arm64 kernel (the package linux-image-arm64
# depends on), busybox-static for arm64, and an arm64 "library root" (the runtime and
# development packages of rngfeed's libraries) that rngfeed is cross-built against and
# whose shared libraries go into the initramfs.
#
# Nothing is installed and the host's apt configuration is not changed (no
# `dpkg --add-architecture`: foreign -dev packages on the host break the native build,
# see the README's architectures section): a temporary apt directory with
# APT::Architecture arm64 holds bookworm's package lists, `apt-get download` fetches the
# packages, `dpkg -x` unpacks them into the cache.
#
# Usage:   eval "$(tests/vm/arm64-fetch.sh)"
# Prints shell assignments (progress goes to stderr):
#   A64_CACHE    the cache directory, $VM_CACHE/arm64 (default tests/vm/cache/arm64, git-ignored)
#   A64_KVER     kernel release, e.g. 6.1.0-41-arm64
#   A64_VMLINUZ  the bootable image (gzip-compressed Image; QEMU's -kernel unpacks it)
#   A64_KCONFIG  its build configuration
#   A64_BUSYBOX  static arm64 busybox
#   A64_ROOT     dpkg -x of libc6, libgcrypt20(-dev), libgpg-error0(-dev), libsystemd0(-dev),
#                libcap2(-dev), libdivsufsort3(-dev) and libsystemd0's compression libraries
# VM_REFRESH=1 looks for newer packages; VM_MIRROR, VM_SECURITY_MIRROR: the Debian
# mirrors (default http://deb.debian.org/debian, …/debian-security); VM_SUITE (bookworm).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
VM_CACHE=${VM_CACHE:-$here/cache}
mirror=${VM_MIRROR:-http://deb.debian.org/debian}
secmirror=${VM_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
suite=${VM_SUITE:-bookworm}
dir=$VM_CACHE/arm64
say() { echo "arm64-fetch.sh: $*" >&2; }

# rngfeed's libraries (the Makefile's PKGS and LDLIBS: libgcrypt libsystemd libcap
# libdivsufsort) and what they link
LIBPKGS="libc6 libgcc-s1 libgcrypt20 libgcrypt20-dev libgpg-error0 libgpg-error-dev
	libsystemd0 libsystemd-dev libcap2 libcap-dev liblz4-1 liblzma5 libzstd1
	libdivsufsort3 libdivsufsort-dev"

# shellcheck disable=SC2086,SC2116  # the list's words, on one line
pkgs=$(echo $LIBPKGS)
# fetched before, with the same list of library packages: no apt look-ups, works offline
if [ -n "${VM_REFRESH:-}" ] || [ ! -s "$dir/stamp" ] || [ ! -s "$dir/vmlinuz" ] ||
   [ ! -x "$dir/busybox" ] || [ ! -d "$dir/root" ] || [ "$(cat "$dir/pkgs" 2>/dev/null)" != "$pkgs" ]; then
	mkdir -p "$VM_CACHE"
	apt=$(mktemp -d /tmp/rngfeed-apt-arm64.XXXXXX)
	trap '[ "$BASHPID" != $$ ] || rm -rf "$apt"' EXIT
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/sources.list.d" "$apt/prefs.d"
	# the suite, its updates and its security archive, as the host's apt sees bookworm
	key="[signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
	{
		echo "deb $key $mirror $suite main"
		echo "deb $key $mirror $suite-updates main"
		echo "deb $key $secmirror $suite-security main"
	} >"$apt/sources.list"
	cat >"$apt/apt.conf" <<EOF
Dir::State::Lists "$apt/lists";
Dir::Cache "$apt/cache";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Dir::Etc::SourceList "$apt/sources.list";
Dir::Etc::SourceParts "$apt/sources.list.d";
Dir::Etc::Preferences "$apt/prefs";
Dir::Etc::PreferencesParts "$apt/prefs.d";
Dir::State::status "/dev/null";
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
EOF
	export APT_CONFIG="$apt/apt.conf"
	say "apt-get update for $suite/arm64 (temporary lists in $apt)"
	apt-get -q update >&2
	img=$(apt-cache depends linux-image-arm64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-arm64\(-unsigned\)\?\)$/\1/p' | head -n 1)
	[ -n "$img" ] || { say "no linux-image-arm64 dependency in $suite"; exit 1; }
	# shellcheck disable=SC2086  # word lists
	want=$(for p in "$img" busybox-static $LIBPKGS; do
		echo "$p=$(apt-cache policy "$p" | sed -n 's/^ *Candidate: //p')"; done | tr '\n' ' ')
	if [ "$want" = "$(cat "$dir/stamp" 2>/dev/null)" ] && [ -s "$dir/vmlinuz" ]; then
		say "cached and current: $img"
		echo "$pkgs" >"$dir/pkgs"
	else
		say "downloading $want"
		rm -rf "$dir"
		mkdir -p "$dir/debs"
		# shellcheck disable=SC2086
		(cd "$dir/debs" && apt-get download -q $want >&2)
		dpkg -x "$(ls "$dir"/debs/linux-image-*.deb)" "$dir/kernel"
		dpkg -x "$(ls "$dir"/debs/busybox-static_*.deb)" "$dir/bb"
		for p in $LIBPKGS; do
			dpkg -x "$(ls "$dir/debs/${p}_"*.deb)" "$dir/root"
		done
		kver=$(find "$dir/kernel/lib/modules" -mindepth 1 -maxdepth 1 -printf "%f\n" | head -n 1)
		cp "$dir/kernel/boot/vmlinuz-$kver" "$dir/vmlinuz"
		cp "$dir/kernel/boot/config-$kver" "$dir/config"
		cp "$dir/bb/bin/busybox" "$dir/busybox"
		echo "$kver" >"$dir/kver"
		echo "$want" >"$dir/stamp"
		echo "$pkgs" >"$dir/pkgs"
	fi
else
	say "cached: $(cat "$dir/kver")"
fi

cat <<EOF
export A64_CACHE='$dir'
export A64_KVER='$(cat "$dir/kver")'
export A64_VMLINUZ='$dir/vmlinuz'
export A64_KCONFIG='$dir/config'
export A64_BUSYBOX='$dir/busybox'
export A64_ROOT='$dir/root'
EOF
