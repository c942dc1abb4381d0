#!/bin/sh
# The probe of tests/vm/initramfs-boot.sh, run inside the initramfs just
# before switch_root and after rngfeed's stop (initramfs-tools: an
# init-bottom script whose PREREQ is rngfeed; dracut: the ExecStop= of a
# unit stopped after rngfeed-initrd.service).  "@@ initrd: KEY=VALUE"
# lines on the console; POSIX sh with klibc's or busybox's tools.
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
