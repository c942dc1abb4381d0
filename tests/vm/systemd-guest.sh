#!/bin/bash
# Runs inside the guest of tests/vm/systemd-boot.sh, started by
# rngfeed-vmtest.service (installed as /usr/local/sbin/rngfeed-vmtest).
# Waits for the boot to finish, prints every fact the host checks as
# "@@ SECTION: line" (a prefix the host can pick out of the kernel's and
# systemd's own console output), then powers off.
export SYSTEMD_PAGER='' SYSTEMD_COLORS=0 LC_ALL=C

out() {
	local section=$1
	shift
	"$@" 2>&1 | sed "s/^/@@ $section: /"
}

# The boot is finished once systemd's job queue is empty; bounded so that a
# job stuck for ever still gives the host a report.
state=$(timeout 200 systemctl is-system-running --wait 2>&1)
echo "@@ begin: system state: $state"
out enabled systemctl is-enabled rngfeed.service
out show systemctl show rngfeed.service -p ActiveState,SubState,Result,NRestarts,StatusText,ExecMainStartTimestampMonotonic,ActiveEnterTimestampMonotonic
out sysinit systemctl show sysinit.target -p ActiveEnterTimestampMonotonic
out deps systemctl show rngfeed.service -p After,Before,RequiresMountsFor
out status systemctl status --no-pager -l -n 0 rngfeed.service
out journal journalctl -b -u rngfeed.service --no-pager -o short-monotonic
out dmesg bash -c "dmesg | grep -E 'random: |crng'"
# One clock for both: the journal's monotonic time of rngfeed's, systemd's
# and the kernel's random lines.
out timeline bash -c "journalctl -b --no-pager -o short-monotonic | grep -E 'rngfeed|random: |random-seed'"
out analyze systemd-analyze
out blame bash -c 'systemd-analyze blame --no-pager | head -n 12'
out chain systemd-analyze critical-chain --no-pager rngfeed.service
out failed systemctl --failed --no-legend --no-pager
out version rngfeed --version
# For tests/vm/bootcost.sh and tests/vm/systemd-cases.sh: the manager's own
# times, the peer daemon, the daemon's credentials, the hw_random device and
# (with kprobe_event= on the kernel command line) the kernel's own hwrng credits.
out manager systemctl show -p UserspaceTimestampMonotonic,FinishTimestampMonotonic,InitRDTimestampMonotonic
out jitter systemctl show jitterentropy.service -p LoadState,ActiveState,SubState,ExecMainStartTimestampMonotonic,ActiveEnterTimestampMonotonic
out randomseed systemctl show systemd-random-seed.service -p ActiveState,ExecMainStartTimestampMonotonic,ActiveEnterTimestampMonotonic
out cmdline cat /proc/cmdline
pid=$(systemctl show -p MainPID --value rngfeed.service)
if [ -n "$pid" ] && [ "$pid" != 0 ] && [ -r "/proc/$pid/status" ]; then
	out proc grep -E '^(Name|Uid|Gid|CapEff|CapPrm):' "/proc/$pid/status"
	# Each thread's name and nice value (stat's 19th field; the names
	# hold no blanks): the assessment thread lowers its own priority,
	# which the unit's system call filter must allow.
	out threads bash -c "for t in /proc/$pid/task/*; do echo \"\${t##*/} \$(cat \$t/comm) nice=\$(cut -d' ' -f19 \$t/stat)\"; done"
fi
# System calls the unit's filter refused with SystemCallErrorNumber= unset
# (kill): the kernel's audit record (type=1326) names each.
out seccomp bash -c "dmesg | grep -E 'type=1326|seccomp' || true"
out security bash -c 'systemd-analyze security --no-pager rngfeed.service | tail -n 1' 
hw=/sys/class/misc/hw_random
if [ -r $hw/rng_current ]; then
	out hwrng bash -c "for f in rng_current rng_quality rng_available rng_selected; do [ -r $hw/\$f ] && echo \$f=\$(cat $hw/\$f); done"
fi
[ -r /sys/kernel/tracing/trace ] && out trace grep -E ' hw[rq]: ' /sys/kernel/tracing/trace
out metrics bash -c 'ls /run/rngfeed 2>/dev/null; journalctl -b -u rngfeed.service --no-pager -o short-monotonic | grep -iE "user|nobody|privil|ready|credit" | tail -n 20'
# For tests/vm/initramfs-boot.sh: every rngfeed process left (the
# service's alone, if the initramfs's was stopped), and the initramfs's log.
out procs bash -c 'for d in /proc/[0-9]*; do [ "$(cat $d/comm 2>/dev/null)" = rngfeed ] && echo "${d#/proc/} $(tr "\\0" " " <$d/cmdline)"; done'
[ -r /run/initramfs/rngfeed.log ] && out initlog cat /run/initramfs/rngfeed.log
echo "@@ end: report complete"
systemctl poweroff --no-block
