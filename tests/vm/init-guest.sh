#!/bin/bash
# tests/vm/init-guest.sh — runs inside the guests of tests/vm/init-boot.sh (installed as
# /usr/local/sbin/rngfeed-vmtest): under sysvinit and OpenRC from /etc/inittab once
# runlevel 2 is up, under systemd from rngfeed-vmtest.service.  Drives rngfeed through its
# init's own commands and prints every fact the host checks as "@@ SECTION: line" on
# ttyS0, then powers off.  "rngfeed-vmtest shutdown" is the check the init runs at
# shutdown after stopping rngfeed (a K script, an OpenRC service of the shutdown
# runlevel, a systemd unit ordered before rngfeed.service).
exec >/dev/ttyS0 2>&1
# ttyS0 may become this process's controlling terminal (a K script runs as
# a session leader): a hangup on it must not end the report.
trap '' HUP
export LC_ALL=C SYSTEMD_PAGER='' SYSTEMD_COLORS=0 PATH=/usr/sbin:/usr/bin:/sbin:/bin
mode=${1:-report}
hw=/sys/class/misc/hw_random
rec=/run/rngfeed/hwrng-quality
metrics=/run/rngfeed/rngfeed.prom
keep=/run/rngfeed-vmtest

say() { echo "@@ $1: $2"; }
out() { # SECTION COMMAND...: its output as the section's lines; its exit status
	local section=$1
	shift
	"$@" 2>&1 | sed "s/^/@@ $section: /"
	return "${PIPESTATUS[0]}"
}
uptime_s() { cut -d' ' -f1 /proc/uptime; }

if [ "$(readlink /proc/1/exe)" = /usr/lib/systemd/systemd ] || [ -d /run/systemd/system ]; then
	init=systemd
elif [ -d /run/openrc ]; then
	init=openrc
else
	init=sysvinit
fi
svc() { # ACTION: the init's own command for the service
	case $init in
	sysvinit) service rngfeed "$1" ;;
	openrc) rc-service rngfeed "$1" ;;
	systemd) systemctl "$1" rngfeed.service ;;
	esac
}
daemon_pid() {
	local p
	if [ $init = systemd ]; then
		p=$(systemctl show -p MainPID --value rngfeed.service)
	else
		p=$(cat /run/rngfeed.pid 2>/dev/null)
	fi
	[ -n "$p" ] && [ "$p" != 0 ] && [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = /usr/sbin/rngfeed ] && echo "$p"
}
procs() { # every rngfeed process: PID and command line
	local d
	for d in /proc/[0-9]*; do
		[ "$(readlink "$d/exe" 2>/dev/null)" = /usr/sbin/rngfeed ] &&
			echo "${d#/proc/} $(tr '\0' ' ' <"$d/cmdline")"
	done
}
quality() { cat $hw/rng_quality 2>/dev/null; }
wait_for() { # SECONDS COMMAND...: until COMMAND succeeds, polling every 0.2 s
	local n=$(($1 * 5))
	shift
	while [ $n -gt 0 ]; do
		"$@" && return 0
		sleep 0.2
		n=$((n - 1))
	done
	return 1
}
quality_is() { [ "$(quality)" = "$1" ]; }
metric() { awk -v k="$1" '$1 == k { print $2 }' $metrics 2>/dev/null; }
metric_positive() { local v; v=$(metric "$1"); [ -n "$v" ] && [ "$v" != 0 ]; }
gone() { ! kill -0 "$1" 2>/dev/null; }
running_again() { local p; p=$(daemon_pid) && [ "$p" != "$1" ]; }
state_is() { [ "$(systemctl show -p SubState --value rngfeed.service)" = "$1" ]; }
denials() { dmesg | grep 'apparmor="DENIED"'; }

# ---- at shutdown --------------------------------------------------------------------
if [ "$mode" = shutdown ]; then
	# The facts first, each as soon as it is known.
	say shutdown "rng_quality=$(quality)"
	say shutdown "orig=$(cat $keep/orig 2>/dev/null) init=$init at=$(uptime_s)"
	say shutdown "record=$([ -s $rec ] && tr '\n' ' ' <$rec || echo none)"
	say shutdown "procs=$(procs | wc -l)"
	say shutdown-end "done"
	exit 0
fi

# ---- the report -------------------------------------------------------------------
if [ $init = systemd ]; then
	state=$(timeout 200 systemctl is-system-running --wait 2>&1)
else
	state=$(runlevel 2>&1)
fi
mkdir -p $keep
say begin "init=$init state=$state uptime=$(uptime_s) kernel=$(uname -r)"
say begin "pid1=$(readlink /proc/1/exe) openrc=$(openrc --version 2>/dev/null | head -n 1)"
out cmdline cat /proc/cmdline
case $init in
sysvinit) out enabled sh -c 'ls /etc/rcS.d /etc/rc0.d /etc/rc6.d | grep -E "rngfeed|sendsigs"' ;;
openrc) out enabled sh -c 'rc-update show -v 2>/dev/null | grep -E "rngfeed|mountall"; head -n 3 /etc/init.d/rngfeed' ;;
systemd) out enabled systemctl is-enabled rngfeed.service ;;
esac

# The daemon as the boot left it.
pid=$(daemon_pid)
say daemon "pid=${pid:-none}"
if [ -n "$pid" ]; then
	say daemon "cmdline=$(tr '\0' ' ' </proc/$pid/cmdline)"
	# field 22: the start time, in clock ticks after boot
	say daemon "started=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", $22 / hz }' /proc/$pid/stat)"
	say daemon "label=$(cat /proc/$pid/attr/current 2>/dev/null)"
fi
out procs procs
out status svc status
say status "rc=$?"
wait_for 60 metric_positive rngfeed_credited_bits_total
out metrics grep -E '^rngfeed_(credited_bits_total|fed_bytes_total|kernel_crng_ready|source_enabled)' $metrics
out list /usr/sbin/rngfeed --list
out hwrng sh -c "for f in rng_current rng_quality rng_available; do echo \$f=\$(cat $hw/\$f); done"
out record cat $rec
orig=$(sed -n 's/^quality=//p' $rec 2>/dev/null)
echo "$orig" >$keep/orig
# The kernel's own times: rngfeed's first exec, its first RNDADDENTROPY
# (0x40085203), the CRNG (kprobe_event= and trace_event= on the command line).
tr=/sys/kernel/tracing
[ -r $tr/trace ] || mount -t tracefs nodev $tr 2>/dev/null
out trace sh -c "grep -E 'filename=/usr/sbin/rngfeed|rngfeed-[0-9]+ .*cmd=0x40085203' $tr/trace | head -n 4"
out dmesg sh -c "dmesg | grep -E 'crng init done|apparmor=\"(STATUS|DENIED)\"' | head -n 8"
if [ -x /usr/sbin/aa-status ]; then
	out apparmor sh -c 'aa-enabled; aa-status 2>&1 | grep -E "profiles are in enforce mode|rngfeed|processes are in enforce mode"'
fi

# reload: the configuration gains a file source, the daemon takes it (its
# row appears in the metrics).
head -c 100000 /dev/urandom >/var/lib/rngfeed/reload.bin
printf '[source file]\ndevice = /var/lib/rngfeed/reload.bin\n' >>/etc/rngfeed.conf
file_row() { grep -q '^rngfeed_source_enabled{source="file"}' $metrics; }
file_row && say reload "file_before=yes"
out reload svc reload
say reload "rc=$? pid_before=$pid"
if wait_for 60 file_row; then say reload "file_read=yes"; else say reload "file_read=no"; fi
say reload "pid_after=$(daemon_pid)"

# stop and start, timed
q_before=$(quality)
t0=$(date +%s.%N)
out stop svc stop
rc=$?
t1=$(date +%s.%N)
say stop "rc=$rc seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') gone=$(gone "$pid" && echo yes || echo no)"
say stop "rng_quality_before=$q_before rng_quality=$(quality) record=$([ -s $rec ] && echo left || echo none)"
out status-stopped svc status
say status-stopped "rc=$?"
t0=$(date +%s.%N)
out start svc start
rc=$?
t1=$(date +%s.%N)
pid=$(daemon_pid)
say start "rc=$rc seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') pid=${pid:-none}"
wait_for 30 quality_is 0
say start "rng_quality=$(quality)"

# kill -9, then the init's restore
kill -KILL "$pid"
wait_for 10 gone "$pid"
case $init in
systemd)
	# ExecStopPost= runs, then Restart=on-failure, 5 s later
	wait_for 20 state_is auto-restart
	say kill "state=$(systemctl show -p SubState --value rngfeed.service) rng_quality=$(quality)"
	wait_for 30 running_again "$pid"
	say kill "restarted=$(daemon_pid) NRestarts=$(systemctl show -p NRestarts --value rngfeed.service)"
	out kill sh -c "journalctl -b -u rngfeed.service --no-pager -o cat | grep -E 'put back|hand-over|SIGHUP|CRNG' | tail -n 8"
	;;
*)
	say kill "after=$(quality) record=$([ -s $rec ] && echo left || echo none)"
	out kill-status svc status
	say kill-status "rc=$?"
	out kill-stop svc stop
	say kill-stop "rc=$? rng_quality=$(quality) record=$([ -s $rec ] && echo left || echo none)"
	out kill-start svc start
	pid=$(daemon_pid)
	wait_for 30 quality_is 0
	kill -KILL "$pid"
	wait_for 10 gone "$pid"
	if [ $init = openrc ]; then
		out kill-again svc restart
	else
		out kill-again svc start
	fi
	say kill-again "rc=$? pid=$(daemon_pid)"
	;;
esac
wait_for 30 quality_is 0
pid=$(daemon_pid)
say final "pid=${pid:-none} rng_quality=$(quality) record=$(tr '\n' ' ' <$rec 2>/dev/null)"
out final-status svc status
say final-status "rc=$?"

# AppArmor: no denial so far; then a file source where the profile forbids it.
if aa-enabled --quiet 2>/dev/null; then
	out aa-normal sh -c "dmesg | grep -c 'apparmor=\"DENIED\"'"
	out aa-normal sh -c "dmesg | grep 'apparmor=\"DENIED\"' | head -n 5"
	head -c 100000 /dev/urandom >/root/forbidden.bin
	# (without the reporter unit's JOURNAL_STREAM, which would send its
	# messages to the journal, stderr being the console here)
	out aa-forbidden sh -c 'timeout 30 env -u JOURNAL_STREAM /usr/sbin/rngfeed -f -t -n file -O file:device=/root/forbidden.bin; echo "rc=$?"'
	out aa-denied sh -c "dmesg | grep 'apparmor=\"DENIED\"'"
fi
say end "report complete at $(uptime_s)"
case $init in
systemd) systemctl poweroff --no-block ;;
*) poweroff ;;
esac
