#!/bin/sh
# tests/vm/mkinitrd.sh OUT.cpio — build the whole-boot test initramfs (cpio newc,
# uncompressed) from what tests/vm/fetch.sh cached (the VM_* variables must be set:
# eval "$(tests/vm/fetch.sh)") and from the host: $RNGFEED (default ./rngfeed), the
# host's shared libraries that rngfeed and rngd link, and the waiter and minfeed
# programs (built here, static). /init is tests/vm/init.sh. VM_EXTRA_BINS: more host
# programs to put in /bin with their libraries (for debugging, e.g. /usr/bin/strace).
# VM_INIT: another /init (tests/vm/hotplug-boot.sh); VM_EXTRA_MODULES: more kernel
# modules to copy with their dependencies (e.g. "rng-core tpm_tis" for 5.10).
set -eu

out=$1
here=$(cd "$(dirname "$0")" && pwd)
RNGFEED=${RNGFEED:-./rngfeed}
CC=${CC:-cc}
: "${VM_KVER:?run eval \"\$(tests/vm/fetch.sh)\" first}"

stage=$(dirname "$out")/initrd.d
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/proc" "$stage/sys" "$stage/dev" "$stage/tmp" \
	"$stage/lib/modules/$VM_KVER"

# busybox and one link per applet it has
cp "$VM_BUSYBOX" "$stage/bin/busybox"
for a in $("$VM_BUSYBOX" --list); do
	[ -e "$stage/bin/$a" ] || ln -s busybox "$stage/bin/$a"
done

for p in waiter minfeed; do
	$CC -static -O2 -Wall -Wextra -Werror -o "$stage/bin/$p" "$here/$p.c"
done
cp "$RNGFEED" "$stage/bin/rngfeed"
for p in ${VM_EXTRA_BINS:-}; do
	cp "$p" "$stage/bin/"
done
cp "$VM_RNGD" "$stage/bin/rngd"
cp "${VM_INIT:-$here/init.sh}" "$stage/init"
chmod 755 "$stage/init"

# The host's libraries, at the paths the loader looks for them (ldd prints
# "name => /path (addr)" for libraries and "/path (addr)" for the loader).
for lib in $(ldd "$RNGFEED" "$VM_RNGD" ${VM_EXTRA_BINS:-} | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
                                            $1 ~ /^\// && NF == 2 { print $1 }' | sort -u); do
	mkdir -p "$stage$(dirname "$lib")"
	cp -L "$lib" "$stage$lib"
done

# virtio-rng and what it needs (modules in this kernel; the TPM drivers are built in),
# with a modules.dep of just those so busybox modprobe resolves the order.
mods=$VM_MODROOT/lib/modules/$VM_KVER
want="virtio-rng virtio_pci ${VM_EXTRA_MODULES:-}"
have=""
while [ -n "$want" ]; do
	set -- $want
	m=$1; shift; want="$*"
	line=$(grep -E "/$m\.ko(\.[a-z]+)?:" "$mods/modules.dep" || true)
	# built into this kernel (virtio_pci in Debian 13's 6.12): nothing to copy
	if [ -z "$line" ] && grep -qE "/$m\.ko$" "$mods/modules.builtin" 2>/dev/null; then
		continue
	fi
	[ -n "$line" ] || { echo "mkinitrd: module $m not in $mods/modules.dep" >&2; exit 1; }
	file=${line%%:*}
	case " $have " in *" $file "*) continue ;; esac
	have="$have $file"
	mkdir -p "$stage/lib/modules/$VM_KVER/$(dirname "$file")"
	cp "$mods/$file" "$stage/lib/modules/$VM_KVER/$file"
	echo "$line" >>"$stage/lib/modules/$VM_KVER/modules.dep"
	for dep in ${line#*:}; do
		d=$(basename "$dep"); want="$want ${d%%.ko*}"
	done
done

# /dev/console for the kernel's first open, before /init mounts devtmpfs
[ "$(id -u)" = 0 ] && mknod -m 600 "$stage/dev/console" c 5 1

if command -v cpio >/dev/null; then
	(cd "$stage" && find . | cpio -o -H newc --quiet) >"$out"
else
	(cd "$stage" && find . | "$VM_BUSYBOX" cpio -o -H newc) >"$out"
fi
