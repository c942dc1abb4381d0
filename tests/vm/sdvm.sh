# shellcheck shell=bash disable=SC2154  # vmdir and tmp come from the sourcing script
# tests/vm/sdvm.sh — the whole-VM library of the Debian 12 guests (sourced by
# tests/vm/systemd-boot.sh, bootcost.sh, systemd-cases.sh, initramfs-boot.sh and
# init-boot.sh): build a guest image from a cached debootstrap tree and the project's
# .deb, boot it many times, each boot from the same pristine image (QEMU snapshot=on:
# the guest's writes go to a temporary overlay), with a fresh swtpm, and pick the guest's
# report ("@@ SECTION: line", e.g. tests/vm/systemd-guest.sh) out of the serial console.
# Needs: $vmdir (tests/vm), $tmp (a private temporary directory).
#
# Building, step by step (each returns 1 with a message on stderr on failure):
#   sdvm_kernel                      tests/vm/fetch.sh (VM_KERNEL=SUITE: that suite's
#                                    kernel, tests/vm/fetch-kernel.sh): sets VM_CACHE,
#                                    VM_KVER, VM_VMLINUZ, VM_KCONFIG, VM_MODROOT, and
#                                    SD_VMLINUZ, SD_KVER for sdvm_boot
#   sdvm_rootfs NAME INCLUDE [PKGS]  a debootstrap --variant=minbase tree of bookworm with
#                                    the packages INCLUDE (comma-separated) and then PKGS
#                                    (apt-get install in the tree: packages that replace
#                                    part of the base, e.g. openrc), cached in
#                                    $VM_CACHE/NAME-rootfs, with the kernel's modules and
#                                    an initramfs made by the tree's own update-initramfs;
#                                    sets SD_ROOTFS
#   sdvm_deb OUTDIR                  dpkg-buildpackage -b of a copy of the working tree
#                                    (VM_REV=REV: of git archive REV); sets SD_DEB
#   sdvm_mkimage OUTDIR [HOOK...]    a copy of $SD_ROOTFS with $SD_DEB (if set) and
#                                    VM_EXTRA_DEBS installed (no service started in the
#                                    tree: policy-rc.d), VM_CONF as /etc/rngfeed.conf, then
#                                    each HOOK ROOT (a function or a program), then
#                                    VM_IMAGE_HOOK ROOT, then mkfs.ext4 -d; sets SD_IMAGE
#                                    (OUTDIR/disk.img) and SD_INITRD
# sdvm_image OUTDIR: the systemd image of tests/vm/systemd-boot.sh (its VM_* knobs passed
# on), copied into OUTDIR; sets SD_IMAGE, SD_INITRD, SD_VMLINUZ, SD_KVER.

# The bookworm mirror this machine's apt uses (one-line or deb822 format).
sdvm_find_mirror() {
	local f
	{
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -f "$f" ] || continue
			awk '$1 == "deb" { i = 2
				if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
				if ($(i + 1) == "bookworm") print $i }' "$f"
		done
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] || continue
			awk 'BEGIN { RS = "" }
				/(^|\n)Suites:[^\n]*[ \t]bookworm([ \t\n]|$)/ &&
				match($0, /(^|\n)URIs:[ \t]*[^ \t\n]+/) {
					u = substr($0, RSTART, RLENGTH); sub(/^\n?URIs:[ \t]*/, "", u); print u }' "$f"
		done
	} | head -n 1
}

sdvm_kernel() {
	local vars
	vars=$("$vmdir/fetch.sh") || { echo "tests/vm/fetch.sh failed" >&2; return 1; }
	eval "$vars"
	if [ -n "${VM_KERNEL:-}" ]; then
		vars=$("$vmdir/fetch-kernel.sh" "$VM_KERNEL") ||
			{ echo "tests/vm/fetch-kernel.sh $VM_KERNEL failed" >&2; return 1; }
		eval "$vars"
	fi
	: "${VM_CACHE:?}" "${VM_KVER:?}" "${VM_VMLINUZ:?}" "${VM_KCONFIG:?}" "${VM_MODROOT:?}"
	[ -d "$VM_MODROOT/lib/modules/$VM_KVER" ] ||
		{ echo "no $VM_MODROOT/lib/modules/$VM_KVER" >&2; return 1; }
	SD_VMLINUZ=$VM_VMLINUZ SD_KVER=$VM_KVER
}

sdvm_rootfs() {
	local name=$1 include=$2 pkgs=${3:-} base stamp mirror
	base=$VM_CACHE/$name-rootfs
	stamp="$include${pkgs:+ + $pkgs}"
	SD_ROOTFS=$base
	if [ ! -d "$base" ] || [ "$(cat "$base.stamp" 2>/dev/null)" != "$stamp" ]; then
		mirror=${VM_MIRROR:-$(sdvm_find_mirror)}
		[ -n "$mirror" ] || { echo "no bookworm mirror in /etc/apt/sources.list*; set VM_MIRROR" >&2; return 1; }
		echo "   debootstrap --variant=minbase --include=$include bookworm ($mirror)${pkgs:+, then apt-get install $pkgs}"
		rm -rf "$base" "$base.new" "$base.stamp" "$base.kver"
		debootstrap --variant=minbase --include="$include" bookworm "$base.new" "$mirror" \
			>"$tmp/debootstrap-$name.log" 2>&1 ||
			{ tail -n 30 "$tmp/debootstrap-$name.log" >&2; rm -rf "$base.new"; echo "debootstrap failed" >&2; return 1; }
		# bookworm is merged-/usr: /lib is a relative link to usr/lib.
		[ -d "$base.new/usr/lib" ] || { echo "debootstrap left no usr/lib" >&2; return 1; }
		if [ -n "$pkgs" ]; then
			cp /etc/resolv.conf "$base.new/etc/resolv.conf"
			# shellcheck disable=SC2086  # a list of packages
			DEBIAN_FRONTEND=noninteractive chroot "$base.new" sh -c \
				"apt-get -q update && apt-get install -y -q --no-install-recommends $pkgs && apt-get clean" \
				>"$tmp/apt-$name.log" 2>&1 ||
				{ tail -n 30 "$tmp/apt-$name.log" >&2; rm -rf "$base.new"; echo "apt-get install $pkgs in the tree failed" >&2; return 1; }
			rm -f "$base.new/etc/resolv.conf"
		fi
		echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' >"$base.new/etc/fstab"
		# The report goes to ttyS0; a login prompt there would only get in its way
		# (systemd; sysvinit's inittab has none there).
		mkdir -p "$base.new/etc/systemd/system"
		ln -sf /dev/null "$base.new/etc/systemd/system/serial-getty@ttyS0.service"
		# Debian's initramfs with just what mounts the root disk: small and quick
		# to unpack under emulation (zstd is not in the tree, hence gzip).
		printf 'MODULES=list\nCOMPRESS=gzip\n' \
			>"$base.new/etc/initramfs-tools/conf.d/rngfeed-vmtest.conf"
		printf 'virtio_pci\nvirtio_blk\next4\n' >>"$base.new/etc/initramfs-tools/modules"
		mv "$base.new" "$base"
		echo "$stamp" >"$base.stamp"
	fi
	# The kernel image in /boot and update-initramfs -c, as the kernel
	# package leaves them: update-initramfs -u (a package's initramfs trigger)
	# rebuilds the initrds of the kernels it finds there.
	if [ "$(cat "$base.kver" 2>/dev/null)" != "$VM_KVER with vmlinuz, update-initramfs -c" ]; then
		echo "   modules and initramfs for $VM_KVER in $base"
		rm -rf "${base:?}/usr/lib/modules" "${base:?}"/boot/*
		mkdir -p "$base/usr/lib/modules"
		cp -a "$VM_MODROOT/lib/modules/$VM_KVER" "$base/usr/lib/modules/" ||
			{ echo "copying the modules failed" >&2; return 1; }
		cp "$VM_KCONFIG" "$base/boot/config-$VM_KVER"
		cp "$VM_VMLINUZ" "$base/boot/vmlinuz-$VM_KVER"
		chroot "$base" depmod "$VM_KVER" || { echo "depmod in the tree failed" >&2; return 1; }
		rm -rf "$base/var/lib/initramfs-tools"
		chroot "$base" update-initramfs -c -k "$VM_KVER" >"$tmp/mkinitramfs-$name.log" 2>&1 ||
			{ cat "$tmp/mkinitramfs-$name.log" >&2; echo "update-initramfs -c in the tree failed" >&2; return 1; }
		echo "$VM_KVER with vmlinuz, update-initramfs -c" >"$base.kver"
	fi
}

sdvm_deb() {
	local out=$1 src f
	rm -rf "$out"
	mkdir -p "$out/rngfeed"
	src=$out/rngfeed
	if [ -n "${VM_REV:-}" ]; then
		git archive --format=tar "$VM_REV" | tar -x -C "$src" ||
			{ echo "git archive $VM_REV failed" >&2; return 1; }
		echo "   from git archive $VM_REV ($(git rev-parse --short "$VM_REV"))"
	elif [ -e .git ]; then
		git ls-files -z --cached --others --exclude-standard |
			while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
			tar -c --null -T - -f - | tar -x -C "$src" || { echo "copying the tree failed" >&2; return 1; }
	else
		cp -a . "$src" || { echo "copying the tree failed" >&2; return 1; }
	fi
	(cd "$src" && dpkg-checkbuilddeps) >"$out/bdeps" 2>&1 ||
		{ echo "$(cat "$out/bdeps") (apt-get build-dep ./ or make deps)" >&2; return 1; }
	# nocheck: the unit tests are make check's job; these tests are about the boot.
	(cd "$src" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -us -uc -b) \
		>"$out/build.log" 2>&1 ||
		{ tail -n 40 "$out/build.log" >&2; echo "dpkg-buildpackage failed (log: $out/build.log)" >&2; return 1; }
	SD_DEB=''
	for f in "$out"/rngfeed_*.deb; do [ -f "$f" ] && SD_DEB=$f; done
	[ -n "$SD_DEB" ] || { echo "no rngfeed_*.deb after the build" >&2; return 1; }
	echo "   $(basename "$SD_DEB")"
}

sdvm_mkimage() {
	local out=$1 root extra p hook size_mb
	shift
	root=$out/root
	mkdir -p "$out"
	rm -rf "$root" "$out/disk.img"
	cp -a "$SD_ROOTFS" "$root" || { echo "copying the cached tree failed" >&2; return 1; }
	# Installing a package in the tree must start nothing on this machine
	# (an init script's postinst: invoke-rc.d start).
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	if [ -n "${SD_DEB:-}" ]; then
		cp "$SD_DEB" "$root/tmp/rngfeed.deb"
		DEBIAN_FRONTEND=noninteractive chroot "$root" dpkg -i /tmp/rngfeed.deb >"$out/dpkg.log" 2>&1 ||
			{ cat "$out/dpkg.log" >&2; echo "dpkg -i in the image failed" >&2; return 1; }
		rm -f "$root/tmp/rngfeed.deb"
	fi
	# A host name that does not contain "rngfeed", so the guest's grep for
	# rngfeed's log lines picks only those.
	echo vmguest >"$root/etc/hostname"
	if [ -n "${VM_CONF:-}" ]; then
		install -m 0644 "$VM_CONF" "$root/etc/rngfeed.conf" ||
			{ echo "cannot install VM_CONF=$VM_CONF" >&2; return 1; }
		echo "   NOTE: /etc/rngfeed.conf from $VM_CONF:"
		grep -v '^[[:space:]]*\(#\|$\)' "$VM_CONF" | sed 's/^/     /'
	fi
	if [ -n "${VM_EXTRA_DEBS:-}" ]; then
		extra=$VM_CACHE/debs-extra
		mkdir -p "$extra"
		for p in $VM_EXTRA_DEBS; do
			ls "$extra/${p}"_*.deb >/dev/null 2>&1 ||
				(cd "$extra" && apt-get download -q "$p") >"$out/extra.log" 2>&1 ||
				{ cat "$out/extra.log" >&2; echo "apt-get download $p failed" >&2; return 1; }
			cp "$extra/${p}"_*.deb "$root/tmp/"
		done
		DEBIAN_FRONTEND=noninteractive chroot "$root" sh -c 'dpkg -i /tmp/*.deb' >"$out/dpkg-extra.log" 2>&1 ||
			{ cat "$out/dpkg-extra.log" >&2; echo "dpkg -i of $VM_EXTRA_DEBS in the image failed" >&2; return 1; }
		rm -f "$root"/tmp/*.deb
		echo "   installed: $VM_EXTRA_DEBS"
	fi
	for hook in "$@" ${VM_IMAGE_HOOK:+"$VM_IMAGE_HOOK"}; do
		"$hook" "$root" || { echo "image hook $hook failed" >&2; return 1; }
	done
	[ -z "${VM_IMAGE_HOOK:-}" ] || echo "   NOTE: VM_IMAGE_HOOK=$VM_IMAGE_HOOK ran on the image"
	rm -f "$root/usr/sbin/policy-rc.d"
	# A first boot: no saved seed that systemd-random-seed or urandom could load.
	rm -f "$root/var/lib/systemd/random-seed" "$root/var/lib/urandom/random-seed"
	SD_INITRD=$out/initrd.img SD_IMAGE=$out/disk.img
	cp "$root/boot/initrd.img-$VM_KVER" "$SD_INITRD" || return 1
	size_mb=$(($(du -sm "$root" | cut -f1) * 5 / 4 + 256))
	truncate -s "${size_mb}M" "$SD_IMAGE"
	mkfs.ext4 -q -F -L rngfeed-vm -d "$root" "$SD_IMAGE" >"$out/mkfs.log" 2>&1 ||
		{ cat "$out/mkfs.log" >&2; echo "mkfs.ext4 -d failed" >&2; return 1; }
	rm -rf "$root"
	echo "   $SD_IMAGE: ${size_mb} MiB (sparse)"
}

# sdvm_image OUTDIR: builds the systemd image (environment passed on: VM_REV, VM_CONF,
# VM_EXTRA_DEBS, VM_DROPIN), copies disk.img and initrd.img to OUTDIR and sets
# SD_IMAGE, SD_INITRD, SD_VMLINUZ, SD_KVER. Returns 1 on failure (log: OUTDIR/build.log).
sdvm_image() {
	local out=$1 vars
	mkdir -p "$out"
	VM_IMAGE_ONLY=1 "$vmdir/systemd-boot.sh" >"$out/build.log" 2>&1 || return 1
	vars=$(grep -E '^VM_(IMAGE|INITRD|KVER|VMLINUZ)=' "$out/build.log")
	SD_IMAGE=$out/disk.img SD_INITRD=$out/initrd.img
	SD_KVER=$(sed -n 's/^VM_KVER=//p' <<<"$vars")
	SD_VMLINUZ=$(sed -n 's/^VM_VMLINUZ=//p' <<<"$vars")
	# sparse copies: the build directory is reused by the next build
	cp --sparse=always "$(sed -n 's/^VM_IMAGE=//p' <<<"$vars")" "$SD_IMAGE" || return 1
	cp "$(sed -n 's/^VM_INITRD=//p' <<<"$vars")" "$SD_INITRD" || return 1
	[ -n "$SD_KVER" ] && [ -n "$SD_VMLINUZ" ]
}

# sdvm_boot CONSOLE_LOG "KERNEL OPTIONS" [QEMU ARGS...]: one boot of $SD_IMAGE, at most
# ${VM_TIMEOUT:-300} s; VM_CLOCK=icount counts guest time in instructions (-icount
# shift=0) instead of following the host's clock; SD_NO_TPM=1 boots without the swtpm TPM
# (so that a virtio-rng is the only hw_random device); SD_MONITOR=PATH puts QEMU's
# monitor on that unix socket (for device_add, device_del and the like). Writes
# CONSOLE_LOG and, beside it, the report (.report). Returns QEMU's exit status.
sdvm_boot() {
	local console=$1 append=$2 sock=$tmp/swtpm.sock rc swtpm_pid
	shift 2
	local -a clock=() tpm=() monitor=(-monitor none)
	[ "${VM_CLOCK:-tcg}" = icount ] && clock=(-icount shift=0)
	[ -z "${SD_MONITOR:-}" ] || monitor=(-monitor "unix:$SD_MONITOR,server=on,wait=off")
	swtpm_pid=''
	if [ "${SD_NO_TPM:-0}" != 1 ]; then
		rm -rf "$tmp/tpm" "$sock"
		mkdir -p "$tmp/tpm"
		swtpm socket --tpm2 --ctrl type=unixio,path="$sock" --tpmstate dir="$tmp/tpm" \
			--flags not-need-init,startup-clear --log file="$tmp/swtpm.log" &
		swtpm_pid=$!
		for _ in $(seq 50); do
			[ -S "$sock" ] && break
			sleep 0.1
		done
		# shellcheck disable=SC2054  # the commas are QEMU's
		tpm=(-chardev "socket,id=chrtpm,path=$sock" -tpmdev emulator,id=tpm0,chardev=chrtpm
		     -device tpm-tis,tpmdev=tpm0)
	fi
	timeout -k 10 "${VM_TIMEOUT:-300}" qemu-system-x86_64 -accel tcg -cpu max -m 1024 -smp 1 \
		"${clock[@]}" -display none "${monitor[@]}" -serial "file:$console" -no-reboot -nic none \
		-kernel "$SD_VMLINUZ" -initrd "$SD_INITRD" \
		-drive "file=$SD_IMAGE,if=virtio,format=raw,snapshot=on" \
		"${tpm[@]}" "$@" \
		-append "root=/dev/vda rw console=ttyS0 panic=1 random.trust_cpu=off random.trust_bootloader=off systemd.unit=multi-user.target $append" \
		</dev/null >"$console.qemu" 2>&1
	rc=$?
	if [ -n "$swtpm_pid" ]; then
		kill "$swtpm_pid" 2>/dev/null
		wait "$swtpm_pid" 2>/dev/null
	fi
	# (a line may start with a terminal escape, e.g. systemd's status line's erase, ESC [K)
	tr -d '\r' <"$console" | sed -n 's/^\(\x1b\[[0-9;?]*[A-Za-z]\)*@@ //p' >"${console%.log}.report"
	return $rc
}

# sdvm_sect REPORT SECTION / sdvm_prop REPORT SECTION PROPERTY
sdvm_sect() { sed -n "s/^$2: //p" "$1"; }
sdvm_prop() { sdvm_sect "$1" "$2" | sed -n "s/^$3=//p" | head -n 1; }
# "[    5.123456] ..." on stdin to microseconds (first line)
sdvm_usec() { sed -n 's/^\[ *\([0-9]*\)\.\([0-9]\{6\}\)\].*/\1\2/p' | head -n 1 | sed 's/^0*\(.\)/\1/'; }
# median of the numbers on stdin ("-" when none)
sdvm_median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit }
		print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
