#!/bin/bash
# dracut module: rngfeed in the initramfs when RNGFEED_INITRAMFS=yes in
# the options file (/etc/default/rngfeed; /etc/sysconfig/rngfeed in the
# RPM: make install's ENVFILE).  In a systemd initramfs it runs as
# rngfeed-initrd.service, which initrd-switch-root.target stops; otherwise
# a pre-trigger hook starts it and a cleanup hook stops it before
# switch_root (initramfs-tools' boot scripts, installed into this module's
# directory as initramfs-start and initramfs-stop).

check() {
	local RNGFEED_INITRAMFS=no
	[ -r @ENVFILE@ ] && . @ENVFILE@
	[ "$RNGFEED_INITRAMFS" = yes ] || return 255
	require_binaries @SBINDIR@/rngfeed || return 1
	return 0
}

depends() {
	return 0
}

installkernel() {
	hostonly='' instmods virtio_rng tpm_tis tpm_crb
}

install() {
	inst_binary @SBINDIR@/rngfeed
	[ -r @SYSCONFDIR@/rngfeed.conf ] && inst_simple @SYSCONFDIR@/rngfeed.conf
	local user
	user=$(sed -n 's/^[[:space:]]*user[[:space:]]*=[[:space:]]*\([^[:space:]#]*\).*/\1/p' \
		@SYSCONFDIR@/rngfeed.conf 2>/dev/null | tail -n 1)
	if [ -n "$user" ] && getent passwd "$user" >/dev/null; then
		getent passwd "$user" >>"$initdir/etc/passwd"
		getent group "$(id -gn "$user")" >>"$initdir/etc/group"
	fi
	if dracut_module_included systemd; then
		inst_simple "$moddir/rngfeed-initrd.service" \
			"$systemdsystemunitdir/rngfeed-initrd.service"
		$SYSTEMCTL -q --root "$initdir" enable rngfeed-initrd.service
	else
		inst_script "$moddir/initramfs-start" /usr/lib/rngfeed/initramfs-start
		inst_script "$moddir/initramfs-stop" /usr/lib/rngfeed/initramfs-stop
		inst_hook pre-trigger 10 "$moddir/rngfeed-start.sh"
		inst_hook cleanup 90 "$moddir/rngfeed-stop.sh"
	fi
}
