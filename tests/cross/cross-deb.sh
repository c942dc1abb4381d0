#!/bin/bash
# make cross-deb ARCH=arm64: the Debian package built for ARCH in a full
# chroot (tests/cross/mkchroot.sh buildd, under qemu-user) with
# dpkg-buildpackage -b -us -uc (its build runs the unit tests under
# emulation, as a Debian buildd of that architecture would), then lintian
# on the host over the .deb (errors fail; warnings and info shown).  The
# .deb is left in build/cross/ARCH/.  Exit 0 pass, 1 fail.
set -euo pipefail
arch=${1:?usage: $0 ARCH}
cd "$(dirname "$0")/../.."
repo=$PWD
cache=${CROSS_CACHE:-$repo/.cache/cross}
dir=$cache/$arch-buildd
start=$(date +%s)
# The build dependencies of debian/control (systemd-dev does not exist in
# Debian 12: systemd gives the unit directory).
# shellcheck disable=SC2086 # a list of package names
tests/cross/mkchroot.sh buildd "$arch" "$dir" ${CROSS_DEPS:-} debhelper systemd
echo "cross-deb $arch: chroot ready after $(($(date +%s) - start)) s"
work=$dir/build/deb
rm -rf --one-file-system "$work"
mkdir -p "$work/rngfeed"
if [ "${CROSS_FROM:-worktree}" = head ]; then
	git archive HEAD | tar -x -C "$work/rngfeed"
else
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar -c --null -T - -f - | tar -x -C "$work/rngfeed"
fi
t=$(date +%s)
rc=0
tests/cross/in-chroot.sh "$dir" /bin/sh -c \
	'cd /build/deb/rngfeed && dpkg-buildpackage -b -us -uc -j2' >"$work/build.log" 2>&1 || rc=$?
echo "cross-deb $arch: dpkg-buildpackage took $(($(date +%s) - t)) s (exit $rc)"
grep -E '^(tests:|dpkg-deb: building)' "$work/build.log" || true
if [ $rc -ne 0 ]; then
	tail -n 60 "$work/build.log"
	echo "cross-deb $arch: FAILED (log: $work/build.log)"
	exit 1
fi
mkdir -p "build/cross/$arch"
rm -f "build/cross/$arch"/*.deb
cp "$work"/*.deb "build/cross/$arch/"
deb=$(ls "build/cross/$arch"/rngfeed_*_"$arch".deb)
dpkg-deb -I "$deb" | grep -E '^ (Architecture|Depends):'
lrc=0
lintian --fail-on error --display-info --pedantic "$deb" >"$work/lintian.log" 2>&1 || lrc=$?
grep -v 'running with root privileges' "$work/lintian.log" | sed 's/^/    /'
[ -s "$work/lintian.log" ] || echo "    (no lintian tags)"
if [ $lrc -ne 0 ] || grep -q '^E: ' "$work/lintian.log"; then
	echo "cross-deb $arch: lintian reports errors"
	exit 1
fi
echo "cross-deb $arch: PASS: $deb, lintian clean; $(($(date +%s) - start)) s in all"
