#!/bin/sh
# tests/vm/fetch-kernel.sh SUITE — fetch (once) Debian's current linux-image-amd64 kernel of
# another suite (e.g. trixie: 6.12, bookworm-backports), for the whole-boot tests that
# compare kernels (tests/vm/stuck-virtio.sh). Nothing is installed and the host's apt
# configuration is not changed: a temporary apt directory holds that suite's source and
# package lists, `apt-get download` fetches the image package, `dpkg -x` unpacks it.
#
# Usage:   eval "$(tests/vm/fetch-kernel.sh trixie)"
# Prints, like fetch.sh, shell assignments: VM_KVER, VM_VMLINUZ, VM_KCONFIG, VM_MODROOT
# (modules.dep made with the cached busybox's depmod). Cache: $VM_CACHE/kernel-SUITE/
# (default tests/vm/cache, git-ignored). VM_REFRESH=1 looks for a newer one.
# VM_MIRROR: the Debian mirror (default http://deb.debian.org/debian).
set -eu

suite=${1:?usage: fetch-kernel.sh SUITE}
here=$(cd "$(dirname "$0")" && pwd)
VM_CACHE=${VM_CACHE:-$here/cache}
mirror=${VM_MIRROR:-http://deb.debian.org/debian}
dir=$VM_CACHE/kernel-$suite
say() { echo "fetch-kernel.sh: $*" >&2; }

# busybox (for depmod) comes from fetch.sh's cache
if [ ! -x "$VM_CACHE/busybox" ]; then
	"$here/fetch.sh" >/dev/null
fi

if [ -n "${VM_REFRESH:-}" ] || [ ! -s "$dir/kver" ] || [ ! -s "$dir/vmlinuz" ]; then
	apt=$(mktemp -d /tmp/rngfeed-apt.XXXXXX)
	trap '[ "$BASHPID" != $$ ] || rm -rf "$apt"' EXIT
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/sources.list.d" "$apt/prefs.d"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" \
		>"$apt/sources.list"
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
APT::Architecture "amd64";
EOF
	export APT_CONFIG="$apt/apt.conf"
	say "apt-get update for $suite (temporary lists in $apt)"
	apt-get -q update >&2
	# the image package linux-image-amd64 depends on: linux-image-X.Y.Z-N-amd64
	# (or its -unsigned twin)
	img=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\(-unsigned\)\?\)$/\1/p' | head -n 1)
	[ -n "$img" ] || { say "no linux-image-amd64 dependency in $suite"; exit 1; }
	say "downloading $img from $suite"
	rm -rf "$dir"
	mkdir -p "$dir/debs"
	(cd "$dir/debs" && apt-get download -q "$img" >&2)
	dpkg -x "$dir"/debs/linux-image-*.deb "$dir/x"
	# Debian 13 is merged-/usr (modules in usr/lib/modules) and ships the modules
	# xz-compressed: made plain here so busybox's modprobe and mkinitrd.sh take them
	# as they take 6.1's.
	if [ -d "$dir/x/usr/lib/modules" ]; then mv "$dir/x/usr" "$dir/modules"; else mv "$dir/x" "$dir/modules"; fi
	find "$dir/modules/lib/modules" -name '*.ko.xz' -exec xz -d {} +
	kver=$(find "$dir/modules/lib/modules" -mindepth 1 -maxdepth 1 -printf "%f\n" | head -n 1)
	cp "$dir/x/boot/vmlinuz-$kver" "$dir/vmlinuz" 2>/dev/null || cp "$dir/modules/boot/vmlinuz-$kver" "$dir/vmlinuz"
	cp "$dir/x/boot/config-$kver" "$dir/config" 2>/dev/null || cp "$dir/modules/boot/config-$kver" "$dir/config"
	rm -rf "${dir:?}/x"
	"$VM_CACHE/busybox" depmod -b "$dir/modules" "$kver" >&2
	echo "$kver" >"$dir/kver"
else
	say "cached: $(cat "$dir/kver")"
fi

kver=$(cat "$dir/kver")
cat <<EOF
export VM_KVER='$kver'
export VM_VMLINUZ='$dir/vmlinuz'
export VM_KCONFIG='$dir/config'
export VM_MODROOT='$dir/modules'
EOF
