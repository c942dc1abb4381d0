#!/bin/bash
# VM_IMAGE_HOOK of tests/vm/initramfs-boot.sh: run by systemd-boot.sh on the
# guest's tree ($1) after `dpkg -i rngfeed.deb`.  Checks that the package's
# initramfs trigger rebuilt the initramfs (the boot scripts are in it, the
# binary not: RNGFEED_INITRAMFS=no as shipped), adds the test's probe
# (init-bottom, after rngfeed's stop), then makes the two initramfs images
# the test boots with the tree's own update-initramfs: switch off and on.
# Writes initrd-off.img, initrd-on.img and facts.txt into $INITRAMFS_OUT.
set -u
root=$1
out=${INITRAMFS_OUT:?}
die() { echo "initramfs-image-hook: $*" >&2; exit 1; }
kver=''
for f in "$root"/boot/initrd.img-*; do [ -f "$f" ] && kver=${f##*/initrd.img-}; done
[ -n "$kver" ] || die "no /boot/initrd.img-* in the tree"
facts=$out/facts.txt
: >"$facts"
listing() { chroot "$root" lsinitramfs "/boot/initrd.img-$kver"; }

# 1. What the package's trigger made during dpkg -i.
l=$(listing) || die "lsinitramfs failed"
grep -q 'scripts/init-top/rngfeed$' <<<"$l" && echo "trigger_scripts=yes" >>"$facts" ||
	echo "trigger_scripts=no" >>"$facts"
grep -q 'usr/sbin/rngfeed$' <<<"$l" && echo "trigger_binary=yes" >>"$facts" ||
	echo "trigger_binary=no" >>"$facts"

# 2. The probe: facts from inside the initramfs, just before switch_root.
probe=$root/etc/initramfs-tools/scripts/init-bottom/zz-rngfeed-vmtest
mkdir -p "${probe%/*}"
cat >"$probe" <<'PROBE'
#!/bin/sh
PREREQ="rngfeed"
prereqs() { echo "$PREREQ"; }
case "$1" in prereqs) prereqs; exit 0 ;; esac
{
	echo
	read -r up _ </proc/uptime
	echo "@@ initrd: uptime=$up"
	echo "@@ initrd: quality=$(cat /sys/class/misc/hw_random/rng_quality 2>/dev/null || echo none)"
	echo "@@ initrd: current=$(cat /sys/class/misc/hw_random/rng_current 2>/dev/null || echo none)"
	n=0
	for d in /proc/[0-9]*; do
		[ "$(cat "$d/comm" 2>/dev/null)" = rngfeed ] || continue
		case "$(cat "$d/stat" 2>/dev/null)" in *") Z "*) continue ;; esac
		n=$((n + 1))
	done
	echo "@@ initrd: rngfeed_running=$n"
	[ -x /usr/sbin/rngfeed ] && echo "@@ initrd: binary=yes" || echo "@@ initrd: binary=no"
	if [ -r /run/initramfs/rngfeed.log ]; then
		while IFS= read -r line; do echo "@@ initrd-log: $line"; done </run/initramfs/rngfeed.log
	fi
} >/dev/console 2>&1
exit 0
PROBE
chmod 0755 "$probe"

# 3. The two images, as the administrator makes them.
mk() { # NAME SWITCH
	sed -i "s/^RNGFEED_INITRAMFS=.*/RNGFEED_INITRAMFS=$2/" "$root/etc/default/rngfeed" ||
		die "no /etc/default/rngfeed in the tree"
	chroot "$root" update-initramfs -u -k "$kver" >"$out/update-$1.log" 2>&1 ||
		{ cat "$out/update-$1.log"; die "update-initramfs -u ($2) failed"; }
	cp "$root/boot/initrd.img-$kver" "$out/initrd-$1.img"
	echo "size_$1=$(stat -c %s "$out/initrd-$1.img")" >>"$facts"
	listing | grep -q 'usr/sbin/rngfeed$' && echo "binary_$1=yes" >>"$facts" ||
		echo "binary_$1=no" >>"$facts"
}
mk off no
mk on yes
# The disk's own copy: back to as shipped.
sed -i 's/^RNGFEED_INITRAMFS=.*/RNGFEED_INITRAMFS=no/' "$root/etc/default/rngfeed"
chroot "$root" update-initramfs -u -k "$kver" >/dev/null 2>&1
cat "$facts"
