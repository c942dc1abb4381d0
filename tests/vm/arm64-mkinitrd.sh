#!/bin/sh
# tests/vm/arm64-mkinitrd.sh OUT.cpio — the arm64 twin of mkinitrd.sh, for
# tests/vm/arm64-boot.sh: the same /init (init.sh) and programs, built for arm64.
#   busybox        $A64_BUSYBOX (arm64-fetch.sh: Debian's busybox-static for arm64)
#   waiter, minfeed  cross-built here, static ($A64_CC, default aarch64-linux-gnu-gcc)
#   rngfeed        $RNGFEED_ARM64 (an arm64 build), with the shared libraries it needs
#                  (DT_NEEDED, followed recursively) taken from $A64_ROOT at the same paths,
#                  and the loader its PT_INTERP names
# No kernel modules: the arm64 cases feed from the CPU (RNDRRS/RNDR), not from a device.
# Needs the A64_* variables: eval "$(tests/vm/arm64-fetch.sh)".
set -eu

out=$1
here=$(cd "$(dirname "$0")" && pwd)
A64_CC=${A64_CC:-aarch64-linux-gnu-gcc}
: "${A64_ROOT:?run eval \"\$(tests/vm/arm64-fetch.sh)\" first}"
: "${RNGFEED_ARM64:?RNGFEED_ARM64: the arm64 rngfeed binary}"
READELF=${READELF:-readelf}

stage=$(dirname "$out")/initrd.d
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/proc" "$stage/sys" "$stage/dev" "$stage/tmp"

cp "$A64_BUSYBOX" "$stage/bin/busybox"
# The applet links: this arm64 busybox cannot run on the host to list them, so /init
# lets it make them itself (it finds its own path through /proc/self/exe), then runs
# init.sh as PID 1.
cat >"$stage/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s /bin
/bin/busybox umount /proc
exec /bin/sh /init.sh
EOF
chmod 755 "$stage/init"

for p in waiter minfeed; do
	$A64_CC -static -O2 -Wall -Wextra -Werror -o "$stage/bin/$p" "$here/$p.c"
done
cp "$RNGFEED_ARM64" "$stage/bin/rngfeed"
cp "$here/init.sh" "$stage/init.sh"

# find_lib NAME: the path (inside the root) of a library the loader would find
find_lib() {
	for d in /lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu /lib /usr/lib; do
		if [ -e "$A64_ROOT$d/$1" ]; then echo "$d/$1"; return 0; fi
	done
	echo "arm64-mkinitrd: $1 is not in $A64_ROOT (add its package to arm64-fetch.sh)" >&2
	return 1
}
needed() { "$READELF" -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

interp=$("$READELF" -l "$RNGFEED_ARM64" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
[ -n "$interp" ] || { echo "arm64-mkinitrd: $RNGFEED_ARM64 names no loader (static?)" >&2; }
todo=$(needed "$RNGFEED_ARM64")
# the loader is in place already (rngfeed also names it in DT_NEEDED)
done_libs=${interp##*/}
if [ -n "$interp" ]; then
	mkdir -p "$stage$(dirname "$interp")"
	cp -L "$A64_ROOT$interp" "$stage$interp"
fi
while [ -n "$todo" ]; do
	# shellcheck disable=SC2086  # a list of library names
	set -- $todo
	lib=$1; shift; todo="$*"
	case " $done_libs " in *" $lib "*) continue ;; esac
	done_libs="$done_libs $lib"
	path=$(find_lib "$lib")
	mkdir -p "$stage$(dirname "$path")"
	cp -L "$A64_ROOT$path" "$stage$path"
	todo="$todo $(needed "$A64_ROOT$path" | tr '\n' ' ')"
done

[ "$(id -u)" = 0 ] && mknod -m 600 "$stage/dev/console" c 5 1

(cd "$stage" && find . | cpio -o -H newc --quiet) >"$out"
