#!/bin/bash
# make cross-check ARCH=...: build rngfeed and its tests for a Debian
# architecture and run them under qemu-user in a Debian 12 chroot of it.
#
#   tests/cross/cross-check.sh ARCH
#
# Environment (the Makefile sets these): CROSS_CACHE (where the chroots
# live), CROSS_BUILD (host: the host's cross compiler against a sysroot
# made without emulation, DIR = CROSS_CACHE/ARCH; chroot: the chroot's own
# gcc under emulation in a full chroot, DIR = CROSS_CACHE/ARCH-buildd; see
# tests/cross/mkchroot.sh), CROSS_DEPS (the packages), CROSS_UNITS and
# CROSS_SCRIPTS (what tests/run-tests.sh runs), CROSS_PROGRAMS (the make
# targets to build).
#
# 1. tests/cross/mkchroot.sh makes DIR unless it is ready.
# 2. The files of the working tree that git tracks or does not ignore (with
#    CROSS_FROM=head: the committed tree) are copied to DIR/build/rngfeed (a fresh copy each run: nothing is built in
#    the repository, and objects of two architectures never meet).
# 3. Build: see CROSS_BUILD.
# 3b. Every ELF program of the build is replaced by a script that runs it
#    through qemu-ARCH-static named explicitly (the same on a host that runs
#    ARCH's programs natively: i386 on a kernel with IA32 emulation).
# 4. tests/run-tests.sh in the chroot with the first CPU model of the
#    architecture (CROSS_CPUS_<arch> overrides the list), and the CPU
#    tests again with each other model; then
#    tests/cross/proofs.sh (the issue 16 proofs: --list per CPU model,
#    --raw output through rngtest).
# 5. The daemon is copied to build/cross/ARCH/rngfeed in the repository
#    (git-ignored) for whoever needs a binary of that architecture.
# Prints the time of each step.  Exit 0 all passed, 77 skipped (the Debian
# archive stayed unreachable: one line "cross-check ARCH: SKIP: ..."), 1 a
# failure.
set -euo pipefail
arch=${1:?usage: $0 ARCH}
cd "$(dirname "$0")/../.."
repo=$PWD
cache=${CROSS_CACHE:-$repo/.cache/cross}
mode=${CROSS_BUILD:-host}
if [ "$mode" = host ]; then
	kind=sysroot dir=$cache/$arch
else
	kind=buildd dir=$cache/$arch-buildd
fi
tree=$dir/build/rngfeed

case $arch in
arm64) triplet=aarch64-linux-gnu cc=aarch64-linux-gnu-gcc cpus="max cortex-a57" ;;
s390x) triplet=s390x-linux-gnu cc=s390x-linux-gnu-gcc cpus="max max,prno-trng=off" ;;
i386) triplet=i386-linux-gnu cc=i686-linux-gnu-gcc cpus="max max,rdrand=off" ;;
armhf) triplet=arm-linux-gnueabihf cc=arm-linux-gnueabihf-gcc cpus="max" ;;
ppc64el) triplet=powerpc64le-linux-gnu cc=powerpc64le-linux-gnu-gcc cpus="power9 power8" ;;
*) echo "cross-check: unknown ARCH '$arch' (arm64 s390x i386 armhf ppc64el)" >&2; exit 2 ;;
esac
var=CROSS_CPUS_$arch
cpus=${!var:-$cpus}

t0=$(date +%s)
lap=$t0
timing=()
took() { # WHAT
	local now
	now=$(date +%s)
	timing+=("$1 $((now - lap)) s")
	echo "cross-check $arch: $1 took $((now - lap)) s"
	lap=$now
}

# The archive unreachable for the whole of mkchroot.sh's retries (exit
# 77): this architecture is skipped, in one line that says why (exit 77;
# make cross-check passes with it, .ci/run repeats it at its end).
mk_log=$(mktemp)
rc=0
# shellcheck disable=SC2086 # a list of package names
tests/cross/mkchroot.sh "$kind" "$arch" "$dir" ${CROSS_DEPS:-} 2>&1 | tee "$mk_log" || rc=${PIPESTATUS[0]}
if [ "$rc" -eq 77 ]; then
	echo "cross-check $arch: SKIP: no root of $arch: $(sed -n 's/^mkchroot: [^:]*: SKIP: //p' "$mk_log" | tail -n1)"
	rm -f "$mk_log"
	exit 77
fi
rm -f "$mk_log"
[ "$rc" -eq 0 ] || exit "$rc"
took chroot

# 2. a fresh copy of the tree
rm -rf --one-file-system "$tree"
mkdir -p "$tree"
if [ "${CROSS_FROM:-worktree}" = head ]; then
	# The committed tree (others' edits in progress left out).
	git archive HEAD | tar -x -C "$tree"
elif [ -e .git ]; then
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar -c --null -T - -f - | tar -x -C "$tree"
else
	tar -c --exclude=./build --exclude=./.git --exclude=./.cache . | tar -x -C "$tree"
fi

# 3. build
programs=${CROSS_PROGRAMS:-cross-programs}
if [ "$mode" = host ]; then
	command -v "$cc" >/dev/null ||
		{ echo "cross-check: $cc missing (apt-get install gcc-${cc%-gcc})" >&2; exit 1; }
	# The chroot is the sysroot: its headers, libraries and .pc files.
	PKG_CONFIG_SYSROOT_DIR=$dir \
	PKG_CONFIG_LIBDIR=$dir/usr/lib/$triplet/pkgconfig:$dir/usr/share/pkgconfig \
		make -s -j"$(nproc)" -C "$tree" $programs \
		CC="$cc --sysroot=$dir" AR="${cc%gcc}ar"
else
	tests/cross/in-chroot.sh "$dir" \
		make -s -j"$(nproc)" -C /build/rngfeed $programs
fi
took build
cp "$tree/rngfeed" "$(mkdir -p build/cross/"$arch" && echo build/cross/"$arch")/rngfeed"
file -b build/cross/"$arch"/rngfeed | cut -d, -f1-2

# 3b. Every program built for ARCH runs through qemu-user named explicitly
# (issue 28): a kernel that runs 32-bit x86 programs itself (IA32
# emulation) would otherwise run i386's natively, where QEMU_CPU changes
# nothing (the proofs' "rdrand unavailable" fails) and no emulation is
# tested.  Each ELF program of the tree moves to build/cross-elf/ and a
# script in its place execs it under qemu-ARCH-static (same PID, same
# argv[0]): the verdict is the same on every host.  The chroot's own tools
# (bash, coreutils, rngtest) run as the host runs them, which is printed.
case $arch in
arm64) qarch=aarch64 ;; armhf) qarch=arm ;; ppc64el) qarch=ppc64le ;; *) qarch=$arch ;;
esac
qemu=$(command -v "qemu-$qarch-static" || true)
[ -n "$qemu" ] || { echo "cross-check: qemu-$qarch-static missing (apt-get install qemu-user-static)" >&2; exit 1; }
elf_dir=build/cross-elf
mkdir -p "$tree/$elf_dir"
cp "$qemu" "$tree/$elf_dir/qemu-user"
wrapped=0
while IFS= read -r -d '' f; do
	rel=${f#"$tree"/}
	[ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
	mkdir -p "$tree/$elf_dir/$(dirname "$rel")"
	mv "$f" "$tree/$elf_dir/$rel"
	printf '#!/bin/sh\n# %s under qemu-user, named explicitly (tests/cross/cross-check.sh)\nexec /build/rngfeed/%s/qemu-user -0 "$0" /build/rngfeed/%s/%s "$@"\n' \
		"$rel" "$elf_dir" "$elf_dir" "$rel" >"$f"
	chmod 0755 "$f"
	wrapped=$((wrapped + 1))
done < <(find "$tree" -path "$tree/$elf_dir" -prune -o -path "$tree/build/src" -prune \
	-o -type f -perm -u+x -print0)
if [ -e "/proc/sys/fs/binfmt_misc/qemu-$qarch" ] &&
	grep -q '^enabled' "/proc/sys/fs/binfmt_misc/qemu-$qarch"; then
	tools="through binfmt_misc's qemu-$qarch handler"
else
	tools="natively (this kernel runs $arch programs itself)"
fi
echo "cross-check $arch: $wrapped programs under test run through $qemu, named explicitly; the chroot's tools run $tools"

# 4. the tests, per CPU model: those of the copied tree (CROSS_FROM=head
# may lack a test the working tree has).
units=() scripts=()
for t in ${CROSS_UNITS:-}; do [ -f "$tree/$t.c" ] && units+=("$t"); done
for t in ${CROSS_SCRIPTS:-}; do [ -f "$tree/$t" ] && scripts+=("$t"); done
# The other CPU models (the absent paths) run the tests whose outcome
# depends on the CPU: CROSS_CPU_UNITS.
cpu_units=()
for t in ${CROSS_CPU_UNITS:-tests/check_cpu_rng tests/check_cpu_sources}; do
	[ -f "$tree/$t.c" ] && cpu_units+=("$t")
done
rc=0
first=1
for cpu in $cpus; do
	if [ $first -eq 1 ]; then
		run=("${units[@]}" "${scripts[@]}")
	else
		run=("${cpu_units[@]}")
	fi
	echo "== $arch, QEMU_CPU=$cpu: tests/run-tests.sh ${#run[@]} programs and scripts"
	tests/cross/in-chroot.sh "$dir" --cpu "$cpu" /bin/bash -c \
		'cd /build/rngfeed && RNGFEED=./rngfeed tests/run-tests.sh "$@"' run-tests \
		"${run[@]}" || rc=1
	took "tests ($cpu)"
	first=0
done
echo "== $arch: proofs (tests/cross/proofs.sh)"
tests/cross/in-chroot.sh "$dir" /bin/bash -c \
	'cd /build/rngfeed && tests/cross/proofs.sh "$@"' proofs "$arch" $cpus || rc=1
took proofs

echo "cross-check $arch: ${timing[*]}; total $(($(date +%s) - t0)) s"
[ $rc -eq 0 ] && echo "cross-check $arch: PASS" || echo "cross-check $arch: FAILED"
exit $rc
