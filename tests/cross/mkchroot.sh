#!/bin/bash
# Creates (or re-uses) a Debian 12 root of a foreign architecture for
# "make cross-check":
#
#   tests/cross/mkchroot.sh KIND ARCH DIR PACKAGE...
#
# KIND sysroot: the packages and the tools the test scripts use, unpacked
#   by mmdebstrap --variant=extract with the host's dpkg-deb.  Nothing runs
#   under emulation while it is made (about a minute on an idle machine,
#   against 10+ for a chroot whose maintainer scripts run under qemu-user),
#   so no maintainer script has run: the few things they would do that the
#   tests need are done here (/etc/passwd and /etc/group from base-passwd,
#   the awk link, ld.so.cache).  It is the --sysroot of the host's cross
#   compiler and the root the tests run in.  No dpkg database: apt and
#   dpkg do not work in it.
# KIND buildd: a real chroot (mmdebstrap --variant=buildd: Essential, apt,
#   build-essential, every maintainer script run under qemu-user) with
#   the packages, for building inside it (CROSS_BUILD=chroot) and for the
#   Debian package (make cross-deb).  Packages asked for later are added
#   with apt-get in the chroot.
#
# A stamp file (DIR/.rngfeed-chroot) records kind, architecture and
# packages: a root made from another list is made again (sysroot) or
# completed (buildd).  Needs root, qemu-user-static, binfmt-support,
# mmdebstrap and arch-test.
#
# From bookworm's main suite alone (MIRROR), not bookworm-updates nor
# bookworm-security: a root is a fixture to build and run the tests in,
# never a system anyone runs, and what it proves (the code builds, links
# and passes against the release's libraries) the security suite does not
# change (its updates keep the ABI).  One archive instead of two, and no
# index that changes between point releases: the security mirror in the
# middle of a sync stopped a CI run (SECURITY=URL adds it back, with
# bookworm-updates).  The archive in flux is tried again with back-off
# (tests/cross/archive-retry.sh); if it stays unreachable, one line says so.
# Exit 0 ready, 77 the archive stayed unreachable (that line printed), 1
# failed.
set -euo pipefail
usage="usage: $0 sysroot|buildd ARCH DIR PACKAGE..."
kind=${1:?$usage}
arch=${2:?$usage}
dir=${3:?$usage}
shift 3
here=$(cd "$(dirname "$0")" && pwd)
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SECURITY=${SECURITY:-}
sources=("deb $MIRROR bookworm main")
[ -z "$SECURITY" ] ||
	sources+=("deb $MIRROR bookworm-updates main" "deb $SECURITY bookworm-security main")
case $kind in
sysroot)
	# What the test scripts and tests/run-tests.sh call, beyond libc.
	pkgs=(base-files base-passwd bash coreutils dash diffutils findutils grep
		sed mawk gzip tar util-linux procps perl-base libc-bin libc6-dev
		rng-tools5 "$@") ;;
buildd) pkgs=(pkg-config rng-tools5 procps "$@") ;;
*) echo "$usage" >&2; exit 2 ;;
esac
# Each package once, in a stable order (the stamp compares lists).
mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sort -u)
want="$kind bookworm $arch ${pkgs[*]}"
stamp=$dir/.rngfeed-chroot

qemu_name() {
	case $1 in
	arm64) echo aarch64 ;; armhf | armel) echo arm ;; ppc64el) echo ppc64le ;;
	i386 | amd64) echo ;; *) echo "$1" ;;
	esac
}

binfmt_ready() {
	local q
	q=$(qemu_name "$arch")
	if ! mountpoint -q /proc/sys/fs/binfmt_misc; then
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
	fi
	if [ -z "$q" ]; then
		# i386 on amd64: native if the kernel runs 32-bit x86 programs.
		# Where it does not (IA32 emulation off, or a sandbox that refuses
		# it), Debian registers no qemu-i386 handler (it assumes native):
		# register one, F (the interpreter is opened now, so it works in a
		# chroot without a copy), for ELF32 i386 executables only.
		arch-test -n "$arch" >/dev/null 2>&1 && return 0
		[ -e /proc/sys/fs/binfmt_misc/qemu-i386 ] ||
			printf '%s' ':qemu-i386:M::\x7fELF\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x03\x00:\xff\xff\xff\xff\xff\xfe\xfe\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:/usr/bin/qemu-i386-static:F' \
				>/proc/sys/fs/binfmt_misc/register
		q=i386
	fi
	if [ ! -e "/proc/sys/fs/binfmt_misc/qemu-$q" ]; then
		# qemu-user-static imports its formats into binfmt-support's
		# database only if binfmt-support was configured first; installed
		# in one apt-get transaction, dpkg may order them the other way
		# (a fresh CI machine did): import it now, then enable it.
		update-binfmts --display "qemu-$q" >/dev/null 2>&1 ||
			update-binfmts --import "qemu-$q"
		update-binfmts --enable "qemu-$q"
	fi
	grep -q '^enabled' "/proc/sys/fs/binfmt_misc/qemu-$q"
}

if [ "$(id -u)" -ne 0 ]; then
	echo "mkchroot: needs root (mmdebstrap, chroot)" >&2
	exit 1
fi
for tool in mmdebstrap update-binfmts arch-test; do
	command -v $tool >/dev/null ||
		{ echo "mkchroot: $tool missing (apt-get install qemu-user-static binfmt-support mmdebstrap arch-test)" >&2; exit 1; }
done
binfmt_ready || { echo "mkchroot: no binfmt_misc handler for $arch" >&2; exit 1; }

have=$(cat "$stamp" 2>/dev/null || true)
if [ "$have" = "$want" ]; then
	echo "mkchroot: $dir is ready ($kind, $arch)"
	exit 0
fi
start=$(date +%s)
# A buildd chroot of the same architecture lacking packages: add them.
if [ "$kind" = buildd ] && [ "${have%% *}" = buildd ] &&
	[ "$(cut -d' ' -f3 <<<"$have")" = "$arch" ]; then
	echo "mkchroot: adding packages to $dir"
	"$here/archive-retry.sh" "mkchroot: $arch" "$here/in-chroot.sh" "$dir" /bin/sh -c \
		'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"' \
		apt "${pkgs[@]}" || exit $?
	echo "$want" >"$stamp"
	echo "mkchroot: $arch completed in $(($(date +%s) - start)) s"
	exit 0
fi
# Never remove a tree with something mounted in it (a run killed before its
# clean-up: the host's /proc or /dev would go with it).
remove_dir() {
	local real
	[ -d "$dir" ] || return 0
	real=$(realpath "$dir")
	if grep -q " $real/" /proc/mounts; then
		echo "mkchroot: something is mounted under $real; not removing it" >&2
		return 1
	fi
	rm -rf --one-file-system "$dir"
}
remove_dir || exit 1
mkdir -p "$(dirname "$dir")"
echo "mkchroot: creating $dir ($kind, $arch: ${pkgs[*]})"
variant=extract
[ "$kind" = buildd ] && variant=buildd
# No man pages, translations or documentation (but the copyright files).
# The system's tools only: mmdebstrap runs python3 (mmtarfilter) once per
# package, and a python3 shim in PATH (pyenv) costs seconds each.  Not
# --quiet: that hides apt's lines saying why the archive failed.  Each try
# starts from an empty DIR.
make_root() {
	local pkgs sources
	mapfile -t pkgs <<<"$PKGS_LINES"
	mapfile -t sources <<<"$SOURCES_LINES"
	remove_dir || return 1
	PATH=/usr/sbin:/usr/bin:/sbin:/bin mmdebstrap --variant="$variant" --architectures="$arch" \
		--include="$(IFS=,; echo "${pkgs[*]}")" \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-include=/usr/share/doc/*/copyright' \
		bookworm "$dir" "${sources[@]}"
}
# archive-retry.sh runs it in a bash of its own (lists as lines: bash
# exports no arrays).
PKGS_LINES=$(printf '%s\n' "${pkgs[@]}") SOURCES_LINES=$(printf '%s\n' "${sources[@]}")
export dir variant arch PKGS_LINES SOURCES_LINES
export -f remove_dir make_root
"$here/archive-retry.sh" "mkchroot: $arch" bash -c make_root || exit $?
if [ "$kind" = sysroot ]; then
	# What base-passwd's and mawk's maintainer scripts would have done,
	# and ldconfig (the root's own, under emulation: a second).
	cp "$dir/usr/share/base-passwd/passwd.master" "$dir/etc/passwd"
	cp "$dir/usr/share/base-passwd/group.master" "$dir/etc/group"
	ln -sfn mawk "$dir/usr/bin/awk"
	# Absolute links (/lib64/ld64.so.2 -> /lib/...) made relative: as a
	# --sysroot the root is not at /, and the linker follows them.
	find "$dir" -xdev -type l -lname '/*' -print0 |
		while IFS= read -r -d '' l; do
			ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" \
				"$dir$(readlink "$l")")" "$l"
		done
	rm -rf "$dir/var/cache/apt/archives"/*.deb
	echo "$want" >"$stamp"
	"$here/in-chroot.sh" "$dir" /sbin/ldconfig
else
	echo "$want" >"$stamp"
fi
echo "mkchroot: $arch ($kind) ready in $(($(date +%s) - start)) s"
