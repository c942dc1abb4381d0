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
vmdir=$(cd "$(dirname "$0")" && pwd)
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
{
	printf '#!/bin/sh\nPREREQ="rngfeed"\nprereqs() { echo "$PREREQ"; }\n'
	printf 'case "$1" in prereqs) prereqs; exit 0 ;; esac\n'
	sed 1d "$vmdir/initramfs-probe.sh"
} >"$probe"
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

# 4. dracut (INITRAMFS_DRACUT=1): installed into the same tree with apt-get
# (it replaces initramfs-tools; the real root boots the same either way),
# with the test's probe as a dracut module of its own: a unit ordered
# before rngfeed-initrd.service, so that at the switch to the real root it
# is stopped after it, and its ExecStop= reports.
if [ "${INITRAMFS_DRACUT:-0}" = 1 ]; then
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	mount -t proc proc "$root/proc" || die "cannot mount /proc in the tree"
	DEBIAN_FRONTEND=noninteractive chroot "$root" sh -c \
		'apt-get update -q && apt-get install -y -q --no-install-recommends dracut' \
		>"$out/dracut-install.log" 2>&1
	rc=$?
	umount "$root/proc"
	if [ $rc -ne 0 ] || [ ! -d "$root/usr/lib/dracut/modules.d/90rngfeed" ]; then
		echo "dracut=unavailable (apt-get install dracut in the tree: exit $rc, $out/dracut-install.log)" >>"$facts"
	else
		m=$root/usr/lib/dracut/modules.d/99rngfeed-vmtest
		mkdir -p "$m"
		install -m 0755 "$vmdir/initramfs-probe.sh" "$m/probe.sh"
		cat >"$m/rngfeed-vmtest.service" <<'UNIT'
[Unit]
Description=rngfeed vm-test probe (reports when stopped, after rngfeed-initrd)
DefaultDependencies=no
ConditionPathExists=/etc/initrd-release
Before=rngfeed-initrd.service initrd-switch-root.target
Conflicts=initrd-switch-root.target
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/true
ExecStop=/usr/local/sbin/rngfeed-vmtest-probe
[Install]
WantedBy=sysinit.target
UNIT
		cat >"$m/module-setup.sh" <<'MOD'
#!/bin/bash
check() { return 255; }
depends() { echo rngfeed; }
install() {
	inst_script "$moddir/probe.sh" /usr/local/sbin/rngfeed-vmtest-probe
	inst_simple "$moddir/rngfeed-vmtest.service" "$systemdsystemunitdir/rngfeed-vmtest.service"
	$SYSTEMCTL -q --root "$initdir" enable rngfeed-vmtest.service
}
MOD
		dr() { # NAME SWITCH
			sed -i "s/^RNGFEED_INITRAMFS=.*/RNGFEED_INITRAMFS=$2/" "$root/etc/default/rngfeed"
			local add=()
			[ "$2" = yes ] && add=(--add rngfeed-vmtest)
			chroot "$root" dracut -f --no-hostonly "${add[@]}" \
				--add-drivers "virtio_pci virtio_blk ext4" --kver "$kver" "/boot/initrd-$1.img" \
				>"$out/$1.log" 2>&1 || { cat "$out/$1.log"; die "dracut ($2) failed"; }
			mv "$root/boot/initrd-$1.img" "$out/initrd-$1.img"
			echo "size_$1=$(stat -c %s "$out/initrd-$1.img")" >>"$facts"
			cp "$out/initrd-$1.img" "$root/tmp/lsinitrd.img"
			lsinitrd_out=$(chroot "$root" lsinitrd /tmp/lsinitrd.img 2>/dev/null)
			rm -f "$root/tmp/lsinitrd.img"
			grep -q 'usr/sbin/rngfeed$' <<<"$lsinitrd_out" && echo "binary_$1=yes" >>"$facts" ||
				echo "binary_$1=no" >>"$facts"
		}
		dr dracut-off no
		dr dracut-on yes
		sed -i 's/^RNGFEED_INITRAMFS=.*/RNGFEED_INITRAMFS=no/' "$root/etc/default/rngfeed"
		echo "dracut=$(chroot "$root" dpkg-query -W -f '${Version}' dracut)" >>"$facts"
	fi
fi
cat "$facts"
