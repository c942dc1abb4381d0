#!/bin/sh
# /init of the USB stick test initramfs (tests/vm/usb-boot.sh builds it with
# mkinitrd.sh, VM_INIT=this file). The host plugs a QEMU usb-serial device
# (an FTDI port, /dev/ttyUSB0 here) whose other end is tests/helper_ttyrng
# speaking the OneRNG protocol, unplugs it and plugs it back, then plugs a
# stuck one, each when this script asks ("VMTEST want ..."). It records
# facts only: when the tty comes and goes, rngfeed's counters (its
# metrics file) and log, the kernel log, how long each SIGTERM took; the
# host judges them.
PATH=/bin
export PATH
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /run
exec </dev/console >/dev/console 2>&1

timeout=60
for w in $(cat /proc/cmdline); do
	case $w in
	vmtest.timeout=*) timeout=${w#*=} ;;
	esac
done
(sleep $((timeout * 10 + 120)); echo "VMTEST guest-watchdog fired"; poweroff -f) &

TTY=/dev/ttyUSB0
n=0
pid=
m=
up() { cut -d' ' -f1 /proc/uptime; }
metric() { awk -v k="$1{source=\"serial\"}" '$1 == k { print $2 }' "$m" 2>/dev/null; }
# rngfeed's counters now: SIGUSR1 makes it log its summary (the metrics
# file is written only every 5 s).
summaries() { grep -c 'serial: [0-9]* raw bytes' /tmp/rngfeed$n.log; }
sample() {
	k=$(summaries)
	kill -USR1 $pid
	wait_for 5 sh -c "[ \$(grep -c 'serial: [0-9]* raw bytes' /tmp/rngfeed$n.log) -gt $k ]"
	line=$(grep 'serial: [0-9]* raw bytes' /tmp/rngfeed$n.log | tail -n 1)
	fed=$(grep ' fed [0-9]* bytes crediting' /tmp/rngfeed$n.log | tail -n 1)
	echo "VMTEST sample $1 n=$n up=$(up)" \
		"raw=$(echo "$line" | sed -n 's/.*serial: \([0-9]*\) raw bytes.*/\1/p')" \
		"passed=$(echo "$line" | sed -n 's/.* \([0-9]*\) blocks* passed.*/\1/p')" \
		"failed=$(echo "$line" | sed -n 's/.* passed, \([0-9]*\) failed.*/\1/p')" \
		"deposited=$(echo "$line" | sed -n 's/.* \([0-9]*\) bits of entropy deposited.*/\1/p')" \
		"kernel=$(echo "$fed" | sed -n 's/.* crediting \([0-9]*\) bits.*/\1/p')" \
		"tty=$([ -c $TTY ] && echo yes || echo no)"
}
# wait (guest seconds, 0.1 s steps) until "$@" succeeds; 1 if it never did
wait_for() {
	k=$(($1 * 10)); shift
	while [ $k -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		k=$((k - 1))
	done
	return 1
}
present() { [ -c $TTY ]; }
absent() { [ ! -e $TTY ]; }
# Blocks passed (the metrics file, every 5 s) beyond $1.
passed_over() { c=$(metric rngfeed_source_blocks_passed_total); [ -n "$c" ] && [ "$c" -gt "$1" ]; }
logged() { grep -q "$1" /tmp/rngfeed$n.log; }

start() {
	n=$((n + 1))
	m=/tmp/m$n.prom
	/bin/rngfeed -f -v -c /dev/null -n serial -O serial:device=$TTY \
		-O serial:profile=onerng --metrics $m --interval 1 --retry-delay 1 \
		>/tmp/rngfeed$n.log 2>&1 &
	pid=$!
	echo "VMTEST start n=$n pid=$pid up=$(up)"
}
# SIGTERM; how long until it was gone (must be < 1 s), with the shell's
# builtins only (a program started to look would be counted); its log.
stop() {
	(sleep 5; kill -KILL $pid 2>/dev/null) &
	dog=$!
	read -r t0 _ </proc/uptime
	kill -TERM $pid
	wait $pid
	read -r t1 _ </proc/uptime
	kill $dog 2>/dev/null
	echo "VMTEST stop state=$1 n=$n sent=$t0 gone=$t1 still=$(kill -0 $pid 2>/dev/null && echo yes || echo no)"
	sed "s/^/VMTEST log n=$n /" /tmp/rngfeed$n.log
}
want() {
	echo "VMTEST want $1 up=$(up)"
	case $1 in
	unplug) wait_for "$timeout" absent || echo "VMTEST error $TTY still there" ;;
	*) wait_for "$timeout" present || echo "VMTEST error no $TTY" ;;
	esac
	echo "VMTEST got $1 up=$(up)"
}

modprobe xhci-pci || echo "VMTEST error modprobe xhci-pci failed"
modprobe ftdi_sio || echo "VMTEST error modprobe ftdi_sio failed"
echo "VMTEST case=usb kernel=$(uname -r) up=$(up)"

# 1. No stick yet: rngfeed waits for it (no --wait-for-source); SIGTERM.
start
wait_for 10 logged 'looking for it' || echo "VMTEST error rngfeed does not wait for the stick"
sample waiting
stop waiting

# 2. Plugged in after start-up: found, tested, credited.
start
wait_for 10 logged 'looking for it'
want plug
wait_for "$timeout" passed_over 1 || echo "VMTEST error no block passed after the plug"
sample credited
# 3. Unplugged: nothing read, tested or passed while it is away (what the
# main loop still takes are blocks that passed before).
want unplug
wait_for 10 logged 'went away'
sample away-start
sleep 8
sample away-end
# 4. The same stick back: found again, tested again, credited again.
c=$(metric rngfeed_source_blocks_passed_total)
want plug
wait_for "$timeout" passed_over "${c:-0}" || echo "VMTEST error no block passed after the replug"
sample resumed
stop running

# 5. Away again, with a fresh rngfeed that had it: SIGTERM while away.
start
wait_for "$timeout" logged 'start-up test'
want unplug
wait_for 10 logged 'went away'
sleep 1
sample away-again
stop away

# 6. A stuck stick (constant bytes): never credited; SIGTERM while it is
# disabled.
start
want plug-stuck
wait_for "$timeout" logged 'serial: disabled' || echo "VMTEST error the stuck stick was not disabled"
sample stuck-a
sleep 6
sample stuck-b
stop disabled

dmesg | grep -E 'crng init done|ttyUSB|usb-serial|ftdi' | sed 's/^/VMTEST kmsg /'
echo "VMTEST done up=$(up)"
poweroff -f
