#!/bin/bash
# make vm-test-init: whole-VM boots of Debian 12 (TCG, -cpu max, random.trust_cpu=off, a
# swtpm TPM and a virtio-rng) with rngfeed started by each init the project ships for:
#   sysvinit          sysvinit-core as PID 1, the .deb's LSB script (init/sysvinit/rngfeed,
#                     installed by dpkg -i and update-rc.d into runlevel S)
#   openrc            Debian's openrc under sysvinit's init, the .deb installed, then the
#                     openrc-run script (init/openrc/rngfeed) put in its place by
#                     make install-init INITSCRIPTS=openrc, in the sysinit runlevel
#   systemd+apparmor  systemd, the .deb's unit, AppArmor on (apparmor=1 security=apparmor)
#                     with the package's profile (apparmor/usr.sbin.rngfeed) enforcing
# In each, the guest (tests/vm/init-guest.sh) checks through the init's own commands
# (service, rc-service, systemctl) that rngfeed started at boot and credited the kernel,
# runs the sources --list says it would, took the hw_random hand-over (rng_quality 0, its
# record), answers status and reload (a file source the configuration gained is read),
# stops (rng_quality as the kernel had it) and starts, and after kill -9 the init's restore
# puts rng_quality back (sysvinit: stop, then start; OpenRC: stop, then restart; systemd:
# ExecStopPost= and the restart); at shutdown a last check after the init stopped rngfeed
# prints rng_quality.  With AppArmor: the daemon is confined (enforce), no denial in
# normal operation, and a file source in /root is denied (one DENIED line) with
# rngfeed's message naming the policy.  Prints each check with its init's name, the
# figures (the kernel's clock: rngfeed's first exec, its first RNDADDENTROPY, crng init
# done; the stop's duration), and ends "N passed, N failed".  Not in CI.
#
#   make vm-test-init                        (= tests/vm/init-boot.sh)
#   VM_INITS="openrc" VM_KEEP_IMAGES=1 tests/vm/init-boot.sh
#
# Environment: VM_INITS (default "sysvinit openrc systemd+apparmor"), VM_REV (build the
# .deb from git archive REV), VM_TIMEOUT (host seconds per boot, default 1200), VM_WORK
# (default tests/vm/work; this test uses init/ there), VM_KERNEL, VM_MIRROR, VM_CLOCK
# (see tests/vm/sdvm.sh).  The debootstrap trees are cached in tests/vm/cache/
# (NAME-rootfs).  Exit 0 all passed, 1 a check failed, 77 skipped (not root, a tool missing).
# shellcheck disable=SC2015,SC2317  # ok and bad always succeed; the hooks are called through sdvm_mkimage
set -u
cd "$(dirname "$0")/../.." || exit 2
vmdir=$PWD/tests/vm
repo=$PWD
work=${VM_WORK:-$vmdir/work}/init
INITS=${VM_INITS:-sysvinit openrc systemd+apparmor}
VM_TIMEOUT=${VM_TIMEOUT:-1200}

[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (debootstrap, chroot, dpkg -i into the images)"; exit 77; }
for t in qemu-system-x86_64 swtpm debootstrap mkfs.ext4 dpkg-buildpackage dpkg-checkbuilddeps; do
	command -v "$t" >/dev/null 2>&1 ||
		{ echo "SKIP: $t not found (apt-get install qemu-system-x86 swtpm debootstrap e2fsprogs dpkg-dev debhelper dh-apparmor)"; exit 77; }
done
tmp=$(mktemp -d /tmp/rngfeed-vminit.XXXXXX) || exit 2
trap '[ "$BASHPID" != $$ ] || rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
# shellcheck source=tests/vm/sdvm.sh
. "$vmdir/sdvm.sh"

t0=$(date +%s)
passed=0 failed=0
ok() { echo "   ok: $who: $*"; passed=$((passed + 1)); }
bad() { echo "   FAIL: $who: $*"; failed=$((failed + 1)); }
finish() {
	echo "== figures (kernel clock, s after boot; stop: host-side seconds of the init's stop)"
	[ -s "$work/figures" ] && column -t -s '|' "$work/figures"
	echo "   total $(($(date +%s) - t0)) s"
	echo "vm-test-init: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit $?
}
mkdir -p "$work"
rm -f "$work"/*.log "$work"/*.report "$work/figures"
printf 'init|rngfeed first exec|first RNDADDENTROPY|crng init done|stop (s)|host s per boot\n' >"$work/figures"

who=build
echo "== kernel"
sdvm_kernel || { bad "no kernel"; finish; }
echo "   $VM_KVER"
echo "== the package (dpkg-buildpackage -b of the working tree${VM_REV:+, git archive $VM_REV})"
if ! sdvm_deb "$work/deb"; then
	bad "the .deb was not built"
	finish
fi
contents=$(dpkg-deb -c "$SD_DEB")
for f in ./etc/init.d/rngfeed ./etc/apparmor.d/usr.sbin.rngfeed; do
	grep -q " $f\$" <<<"$contents" && ok "the .deb carries $f" || bad "the .deb lacks $f"
done

base_include=udev,kmod,initramfs-tools,libdivsufsort3

# ---- what each image holds beside the package --------------------------------------
# All: the reporter, the metrics file it reads, an option the scripts must pass.
common_hook() {
	local root=$1
	install -m 0755 "$vmdir/init-guest.sh" "$root/usr/local/sbin/rngfeed-vmtest"
	printf '\n# tests/vm/init-boot.sh\nmetrics = /run/rngfeed/rngfeed.prom\n' >>"$root/etc/rngfeed.conf"
	mkdir -p "$root/var/lib/rngfeed"
}
# The reporter once runlevel 2 is up (sysvinit's inittab, which Debian's openrc keeps).
inittab_hook() {
	printf '# tests/vm/init-boot.sh: the report, once runlevel 2 is up\nvt:2:once:/usr/local/sbin/rngfeed-vmtest\n' \
		>>"$1/etc/inittab"
}
sysvinit_hook() {
	local root=$1
	common_hook "$root" && inittab_hook "$root" || return 1
	find "$root/etc/rcS.d" -name 'S*rngfeed' -printf '%f\n' >"$work/sysvinit.rc"
	printf 'RNGFEED_OPTIONS="--interval 30"\n' >>"$root/etc/default/rngfeed"
	cat >"$root/etc/init.d/rngfeed-vmcheck" <<'EOF'
#!/bin/sh
### BEGIN INIT INFO
# Provides:          rngfeed-vmcheck
# Required-Start:
# Required-Stop:     $local_fs
# X-Stop-After:      rngfeed sendsigs
# Default-Start:     S
# Default-Stop:      0 6
# Short-Description: tests/vm/init-boot.sh: the state after rngfeed's stop
### END INIT INFO
[ "$1" = stop ] && /usr/local/sbin/rngfeed-vmtest shutdown
exit 0
EOF
	# Started (a no-op) in runlevel S, as the scripts whose stop startpar
	# runs are; Required-Stop: $local_fs: before umountfs and halt, which
	# otherwise ran beside it (the report cut short by the power-off).
	chmod 755 "$root/etc/init.d/rngfeed-vmcheck"
	chroot "$root" update-rc.d rngfeed-vmcheck defaults >"$work/sysvinit.update-rc.d" 2>&1
}
openrc_hook() {
	local root=$1
	common_hook "$root" && inittab_hook "$root" || return 1
	find "$root/etc/runlevels" -name rngfeed -printf '%h\n' | sed 's|.*/etc/|/etc/|' >"$work/openrc.rc"
	make --no-print-directory -s -C "$repo" install-init INITSCRIPTS=openrc DESTDIR="$root" \
		>"$work/openrc.make" 2>&1 || { cat "$work/openrc.make"; return 1; }
	printf 'RNGFEED_OPTIONS="--interval 30"\n' >>"$root/etc/conf.d/rngfeed"
	ln -sf /etc/init.d/rngfeed "$root/etc/runlevels/sysinit/rngfeed"
	cat >"$root/etc/init.d/rngfeed-vmcheck" <<'EOF'
#!/sbin/openrc-run
# tests/vm/init-boot.sh: the state after rngfeed's stop, in the shutdown runlevel
description="rngfeed VM test: the state after rngfeed's stop"
start() { /usr/local/sbin/rngfeed-vmtest shutdown; }
EOF
	chmod 755 "$root/etc/init.d/rngfeed-vmcheck"
	mkdir -p "$root/etc/runlevels/shutdown"
	ln -sf /etc/init.d/rngfeed-vmcheck "$root/etc/runlevels/shutdown/rngfeed-vmcheck"
}
systemd_hook() {
	local root=$1 d=$1/etc/systemd/system
	common_hook "$root" || return 1
	printf 'RNGFEED_OPTIONS="--interval 30"\n' >>"$root/etc/default/rngfeed"
	cat >"$d/rngfeed-vmtest.service" <<'EOF'
# tests/vm/init-boot.sh: the report once the boot is over
[Unit]
After=multi-user.target
[Service]
Type=exec
ExecStart=/usr/local/sbin/rngfeed-vmtest
EOF
	ln -s /etc/systemd/system/rngfeed-vmtest.service "$d/multi-user.target.wants/rngfeed-vmtest.service"
	cat >"$d/rngfeed-vmcheck.service" <<'EOF'
# tests/vm/init-boot.sh: the state after rngfeed's stop (ordered before it, so
# stopped after it)
[Unit]
DefaultDependencies=no
Before=rngfeed.service shutdown.target
Conflicts=shutdown.target
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/true
ExecStop=/usr/local/sbin/rngfeed-vmtest shutdown
EOF
	mkdir -p "$d/sysinit.target.wants"
	ln -s /etc/systemd/system/rngfeed-vmcheck.service "$d/sysinit.target.wants/rngfeed-vmcheck.service"
}

# ---- the checks of one boot ----------------------------------------------------
check_boot() { # INIT REPORT CONSOLE
	local init=$1 rep=$2 console=$3 v pid orig q list src missing s
	sect() { sdvm_sect "$rep" "$1"; }
	prop() { sect "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1; }
	if ! grep -q '^end: ' "$rep"; then
		bad "no complete report from the guest (console: $console)"
		tr -d '\r' <"$console" | tail -n 40 | sed 's/^/     | /'
		return
	fi
	sect begin | sed 's/^/     /'
	v=$(prop begin init)
	[ "$v" = "${init%+*}" ] && ok "PID 1 is $(prop begin pid1) ($v)" || bad "the guest's init is '$v', not ${init%+*}"
	sect enabled | sed 's/^/     enabled: /'

	pid=$(prop daemon pid)
	if [ "$pid" != none ] && [ -n "$pid" ]; then
		ok "rngfeed started at boot: PID $pid at $(prop daemon started) s, $(sect daemon | sed -n 's/^cmdline=//p')"
	else
		bad "no rngfeed daemon after the boot (procs: $(sect procs | tr '\n' ';'))"
	fi
	case $init in
	sysvinit | openrc) v='/usr/sbin/rngfeed -p /run/rngfeed.pid --interval 30' ;;
	*) v='/usr/sbin/rngfeed -f --interval 30' ;;
	esac
	sect daemon | grep -qx "cmdline=$v *" &&
		ok "the init passed RNGFEED_OPTIONS from its options file: $v" ||
		bad "the daemon's command line is not '$v' (RNGFEED_OPTIONS from the options file): $(sect daemon | grep cmdline)"
	[ "$(sect procs | grep -c .)" = 1 ] || bad "$(sect procs | grep -c .) rngfeed processes: $(sect procs | tr '\n' ';')"
	v=$(sect metrics | sed -n 's/^rngfeed_credited_bits_total //p')
	[ -n "$v" ] && [ "$v" != 0 ] && ok "it credited the kernel: rngfeed_credited_bits_total $v" ||
		bad "no credit in the metrics: $(sect metrics | tr '\n' ';')"
	# The sources: those --list says a run would use (RUN yes), beside those in use.
	list=$(sect list | awk 'NR > 1 && $5 == "yes" { print $1 }' | sort | paste -sd' ')
	src=$(sect metrics | sed -n 's/^rngfeed_source_enabled{source="\(.*\)"} 1$/\1/p' | sort | paste -sd' ')
	missing=''
	for s in $list; do
		case " $src " in
		*" $s "*) ;;
		*) # the hw_random device is read by one of hwrng and virtio
			case $s in virtio | hwrng) [[ " $src " == *" hwrng "* || " $src " == *" virtio "* ]] && continue ;; esac
			missing="$missing $s" ;;
		esac
	done
	[ -n "$list" ] && [ -z "$missing" ] && ok "it runs the default sources: in use '$src'; --list: '$list'" ||
		bad "sources --list would use but the daemon does not:$missing (in use '$src', --list '$list')"
	orig=$(sect record | sed -n 's/^quality=//p')
	q=$(sect hwrng | sed -n 's/^rng_quality=//p')
	[ -n "$orig" ] && [ "$orig" -gt 0 ] && [ "$q" = 0 ] &&
		ok "the hand-over: $(sect hwrng | sed -n 's/^rng_current=//p') rng_quality 0 while it runs, $orig in its record" ||
		bad "no hand-over: rng_quality '$q', record '$(sect record | tr '\n' ' ')'"
	[ "$(prop status rc)" = 0 ] && ok "status: exit 0 ($(sect status | grep -v '^rc=' | head -n 2 | tr '\n' ' '))" ||
		bad "status while running: $(sect status | tr '\n' ';')"
	[ "$(prop reload rc)" = 0 ] && [ "$(prop reload file_read)" = yes ] && [ -z "$(prop reload file_before)" ] &&
		[ "$(prop reload pid_after)" = "$(prop reload pid_before)" ] &&
		ok "reload: exit 0, same PID, the daemon took the file source the configuration gained" ||
		bad "reload: $(sect reload | tr '\n' ';')"
	[ "$(prop stop rc)" = 0 ] && [ "$(prop stop gone)" = yes ] && [ "$(prop stop rng_quality)" = "$orig" ] &&
		[ "$(prop stop record)" = none ] &&
		ok "stop: exit 0 in $(prop stop seconds) s, the daemon gone, rng_quality $orig again, no record" ||
		bad "stop: $(sect stop | tr '\n' ';')"
	[ "$(prop status-stopped rc)" = 3 ] && ok "status when stopped: exit 3" ||
		bad "status when stopped: $(sect status-stopped | tr '\n' ';')"
	[ "$(prop start rc)" = 0 ] && [ "$(prop start pid)" != none ] && [ "$(prop start rng_quality)" = 0 ] &&
		ok "start: exit 0 in $(prop start seconds) s, PID $(prop start pid), rng_quality 0" ||
		bad "start: $(sect start | tr '\n' ';')"
	case $init in
	systemd*)
		[ "$(prop kill state)" = auto-restart ] && [ "$(prop kill rng_quality)" = "$orig" ] &&
			ok "after kill -9, ExecStopPost= put rng_quality $orig back before the restart" ||
			bad "after kill -9: $(sect kill | tr '\n' ';')"
		[ -n "$(prop kill restarted)" ] && ok "Restart=on-failure started it again: PID $(prop kill restarted)" ||
			bad "not restarted after kill -9: $(sect kill | head -n 2 | tr '\n' ';')" ;;
	*)
		[ "$(prop kill after)" = 0 ] && [ "$(prop kill record)" = left ] &&
			ok "after kill -9 rng_quality stays 0 with the record left; status exits $(prop kill-status rc): $(sect kill-status | grep -v '^rc=' | tail -n 1)" ||
			bad "after kill -9: $(sect kill | tr '\n' ';')"
		[ "$(prop kill-status rc)" != 0 ] || bad "status after kill -9 exits 0"
		[ "$(prop kill-stop rng_quality)" = "$orig" ] && [ "$(prop kill-stop record)" = none ] &&
			ok "the init's stop after kill -9 put rng_quality $orig back ($(sect kill-stop | grep -v '=' | grep -i 'put back' | head -n 1))" ||
			bad "stop after kill -9: $(sect kill-stop | tr '\n' ';')"
		[ "$(prop kill-again rc)" = 0 ] && sect kill-again | grep -q "put back to $orig" &&
			ok "after another kill -9, $([ "$init" = openrc ] && echo restart || echo start) put rng_quality $orig back first, then started PID $(prop kill-again pid)" ||
			bad "start after kill -9: $(sect kill-again | tr '\n' ';')" ;;
	esac
	[ "$(prop final pid)" != none ] && [ "$(prop final rng_quality)" = 0 ] &&
		sect final | grep -q "quality=$orig" && [ "$(prop final-status rc)" = 0 ] &&
		ok "in the end it runs (PID $(prop final pid)) with the hand-over's record at $orig, status 0" ||
		bad "in the end: $(sect final | tr '\n' ';') status $(prop final-status rc)"
	if [ "$init" = systemd+apparmor ]; then
		sect apparmor | sed 's/^/     apparmor: /'
		sect daemon | grep -qx 'label=rngfeed (enforce)' &&
			ok "the daemon started at boot is confined: $(sect daemon | grep label=)" ||
			bad "the daemon started at boot is not confined by the profile: $(sect daemon | grep label=)"
		v=$(sect aa-normal | head -n 1)
		[ "$v" = 0 ] && ok "no AppArmor denial in normal operation (boot, reload, stop, start, kill -9, restart)" ||
			bad "$v AppArmor denials in normal operation: $(sect aa-normal | tail -n +2 | tr '\n' ';')"
		v=$(sect aa-denied | grep -c 'name="/root/forbidden.bin"')
		[ "$v" -ge 1 ] && [ "$(sect aa-denied | grep -vc 'name="/root/forbidden.bin"')" = 0 ] &&
			ok "a file source in /root: $v DENIED line(s), for that file only: $(sect aa-denied | head -n 1 | grep -o 'apparmor="DENIED".*' | cut -c1-140)" ||
			bad "the forbidden file source: $v denials for it; all: $(sect aa-denied | tr '\n' ';')"
		sect aa-forbidden | grep -q 'not by its mode.*AppArmor or SELinux denies it' &&
			sect aa-forbidden | grep -q '^rc=[1-9]' &&
			ok "rngfeed says: $(sect aa-forbidden | grep -o 'file: .*AppArmor.*' | head -n 1)" ||
			bad "rngfeed's message on the forbidden file: $(sect aa-forbidden | tr '\n' ';')"
	fi
	# Shutdown: the init stopped it (its message on the console), rng_quality as the kernel had it.
	if sdvm_sect "$rep" shutdown-end | grep -q 'done'; then
		[ "$(prop shutdown procs)" = 0 ] && [ "$(prop shutdown rng_quality)" = "$orig" ] &&
			ok "at shutdown, after the init stopped it: no rngfeed process, rng_quality $orig (at $(prop shutdown at) s)" ||
			bad "at shutdown: $(sect shutdown | tr '\n' ';')"
	else
		bad "no shutdown check on the console (the guest did not run it, or not after rngfeed's stop)"
	fi
	case $init in
	sysvinit) v='Stopping entropy daemon: rngfeed' ;;
	openrc) v='Stopping rngfeed' ;;
	*) v='Stopped rngfeed.service' ;;
	esac
	s=$(tr -d '\r\0' <"$console" | sed -n '/^@@ end: /,$p' | sed 's/\x1b\[[0-9;]*[mK]//g' | grep -a -m1 "$v")
	[ -n "$s" ] && ok "the init's own stop ran at shutdown: '$(cut -c1-60 <<<"$s")'" ||
		bad "no '$v' on the console at shutdown"
	if [ "$init" = sysvinit ]; then
		# before sendsigs, which would race the stop with its own signals
		local n_stop n_kill
		n_stop=$(tr -d '\r\0' <"$console" | sed -n '/^@@ end: /,$p' | grep -a -n -m1 "$v" | cut -d: -f1)
		n_kill=$(tr -d '\r\0' <"$console" | sed -n '/^@@ end: /,$p' | grep -a -n -m1 'Asking all remaining processes' | cut -d: -f1)
		[ -n "$n_stop" ] && [ -n "$n_kill" ] && [ "$n_stop" -lt "$n_kill" ] &&
			ok "rngfeed stopped before sendsigs asked the remaining processes to end" ||
			bad "rngfeed's stop (console line ${n_stop:-none}) not before sendsigs' (line ${n_kill:-none})"
	fi
	# The figures: from the kernel's trace and log.
	local exec credit crng
	exec=$(sect trace | grep -m1 'filename=/usr/sbin/rngfeed' | sed -n 's/.* \([0-9]*\.[0-9]*\): .*/\1/p')
	credit=$(sect trace | grep -m1 'cmd=0x40085203' | sed -n 's/.* \([0-9]*\.[0-9]*\): .*/\1/p')
	crng=$(sect dmesg | grep -m1 'crng init done' | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p')
	printf '%s|%s|%s|%s|%s|%s\n' "$init" "${exec:--}" "${credit:--}" "${crng:--}" \
		"$(prop stop seconds)" "$boot_s" >>"$work/figures"
}

# ---- one image and one boot per init --------------------------------------------
for init in $INITS; do
	who=$init
	echo "== $init: image"
	case $init in
	sysvinit)
		sdvm_rootfs sysvinit "$base_include,sysvinit-core" && hook=sysvinit_hook ;;
	openrc)
		sdvm_rootfs openrc "$base_include,sysvinit-core" openrc && hook=openrc_hook ;;
	systemd+apparmor)
		sdvm_rootfs systemd-apparmor "$base_include,systemd-sysv,apparmor" && hook=systemd_hook ;;
	*) echo "unknown init '$init' (VM_INITS: sysvinit openrc systemd+apparmor)"; exit 2 ;;
	esac || { bad "the cached tree was not made"; continue; }
	sdvm_mkimage "$work/$init" "$hook" >"$work/$init.image.log" 2>&1 ||
		{ cat "$work/$init.image.log"; bad "the image was not made"; continue; }
	case $init in
	sysvinit)
		[ -s "$work/sysvinit.rc" ] && ok "dpkg -i put the script into runlevel S: /etc/rcS.d/$(head -n 1 "$work/sysvinit.rc")" ||
			bad "dpkg -i did not put rngfeed into /etc/rcS.d" ;;
	openrc)
		[ -s "$work/openrc.rc" ] && ok "dpkg -i registered the script with OpenRC: $(tr '\n' ' ' <"$work/openrc.rc")" ||
			bad "dpkg -i did not add rngfeed to an OpenRC runlevel" ;;
	esac
	append="trace_clock=global trace_event=sched:sched_process_exec kprobe_event=p:rndioctl,random_ioctl,cmd=%si:x32"
	[ "$init" = systemd+apparmor ] && append="$append apparmor=1 security=apparmor"
	echo "== $init: boot (at most $VM_TIMEOUT s)"
	b0=$(date +%s)
	# shellcheck disable=SC2054  # the commas are QEMU's
	# -nodefaults: no VGA, CD-ROM, floppy or parallel port to probe (minutes
	# of a loaded machine's TCG time) besides what is given.
	VM_TIMEOUT=$VM_TIMEOUT sdvm_boot "$work/$init.log" "$append" -nodefaults \
		-object rng-random,id=rng0,filename=/dev/urandom -device virtio-rng-pci,rng=rng0
	rc=$?
	boot_s=$(($(date +%s) - b0))
	echo "   QEMU exit $rc after $boot_s s; console $work/$init.log"
	check_boot "$init" "$work/$init.report" "$work/$init.log"
	[ "${VM_KEEP_IMAGES:-0}" = 1 ] || rm -f "$work/$init/disk.img"
done
finish
