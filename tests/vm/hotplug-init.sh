#!/bin/sh
# /init of the hot-plug test initramfs (tests/vm/hotplug-boot.sh builds it with
# mkinitrd.sh, VM_INIT=this file). Runs the case named by vmtest.case=, prints
# "VMTEST ..." lines on the serial console for hotplug-boot.sh to parse, powers off.
# It records facts only (samples of the hw_random sysfs files, the kprobe trace,
# the kernel log, rngfeed's log); the host side judges them.
#
# Cases: alone (a late virtio-rng, no rngfeed), late (rngfeed -f -v first, then
# virtio_rng loaded), two (TPM + virtio-rng present, then rngfeed), hotplug (rngfeed
# reading a virtio-rng; the host removes it and adds another through the monitor when
# asked), strict-alone (no rngfeed, then a blocking read: the kernel's own sources),
# watermark (5.10: rngfeed -W, then readers drain the pool, twice).
PATH=/bin
export PATH
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /run
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
exec </dev/console >/dev/console 2>&1

tc=none
timeout=20
obs=5
wm=3072
for w in $(cat /proc/cmdline); do
	case $w in
	vmtest.case=*) tc=${w#*=} ;;
	vmtest.timeout=*) timeout=${w#*=} ;;
	vmtest.observe=*) obs=${w#*=} ;;
	vmtest.watermark=*) wm=${w#*=} ;;
	esac
done
(sleep $((timeout * 4 + obs * 3 + 60)); echo "VMTEST guest-watchdog fired"; poweroff -f) &

hr=/sys/class/misc/hw_random
tr=/sys/kernel/tracing
echo "VMTEST case=$tc kernel=$(uname -r) uptime=$(cut -d' ' -f1 /proc/uptime)"

up() { cut -d' ' -f1 /proc/uptime; }
# a point in time on both clocks: the kernel log's and the trace's
mark() {
	echo "vmtest: $1" >/dev/kmsg
	[ -w $tr/trace_marker ] && echo "vmtest: $1" >$tr/trace_marker
}
rd() { cat "$1" 2>/dev/null || echo -; }
sample() {
	echo "VMTEST sample $1 up=$(up) current=$(rd $hr/rng_current)" \
		"quality=$(rd $hr/rng_quality) selected=$(rd $hr/rng_selected)" \
		"cq=$(rd /sys/module/rng_core/parameters/current_quality)" \
		"avail=$(rd /proc/sys/kernel/random/entropy_avail)" \
		"pool=$(rd /proc/sys/kernel/random/poolsize)" \
		"devices=$(rd $hr/rng_available | tr ' ' ,)" \
		"rngfeed=$(pidof rngfeed || echo no)"
}
ready() { dmesg | grep -q 'crng init done'; }
# wait (guest seconds, 0.2 s steps) until "$@" succeeds; 1 if it never did
wait_for() {
	n=$(($1 * 5)); shift
	while [ $n -gt 0 ]; do
		"$@" && return 0
		sleep 0.2
		n=$((n - 1))
	done
	return 1
}
has_dev() { grep -q "$1" $hr/rng_available 2>/dev/null; }
no_dev() { ! has_dev "$1"; }

# rng_core is a module on 5.10: load it so its functions can be probed
modprobe rng-core 2>/dev/null
# kprobes (the crediting one, hwr, comes from the kernel command line): devices
# that register and leave, writes to rng_quality and to module parameters
# (current_quality before 5.18), ioctls on the random device (the feeder)
for p in 'p:hwreg hwrng_register name=+0(+0(%di)):string' \
	 'p:hwunreg hwrng_unregister name=+0(+0(%di)):string' \
	 'p:rqs rng_quality_store val=+0(%dx):string' \
	 'p:pas param_attr_store val=+0(%dx):string' \
	 'p:rio random_ioctl cmd=%si:x32'; do
	echo "$p" >>$tr/kprobe_events 2>/dev/null || echo "VMTEST kprobe unavailable: $p"
done
echo 1 >$tr/events/kprobes/enable 2>/dev/null

loadvirtio() {
	modprobe virtio_pci 2>/dev/null
	modprobe virtio_rng || echo "VMTEST error modprobe virtio_rng failed"
}
loadtpm() { modprobe tpm_tis 2>/dev/null; }
startfeed() {
	mark "rngfeed start"
	/bin/rngfeed -f -v "$@" >/tmp/rngfeed.log 2>&1 &
	echo "VMTEST rngfeed started pid=$! args=-f -v $*"
}
# SIGTERM, then how long it took to exit (must be < 1 s)
stopfeed() {
	p=$(pidof rngfeed) || { echo "VMTEST stop rngfeed not running"; return; }
	t0=$(up)
	mark "rngfeed stop"
	kill -TERM $p
	wait_for 5 sh -c "! kill -0 $p 2>/dev/null"
	echo "VMTEST stop sent=$t0 gone=$(up) still=$(pidof rngfeed || echo no)"
}
observe() {
	i=0
	while [ $i -lt "$obs" ]; do
		sleep 1; i=$((i + 1)); sample "$1$i"
	done
}
readywait() {
	if wait_for "$timeout" ready; then echo "VMTEST ready up=$(up)"; else echo "VMTEST notready up=$(up)"; fi
}

sample boot
case $tc in
alone)
	mark load; loadvirtio; sample loaded
	readywait; observe o ;;
late | strict)
	startfeed
	sleep 2; sample fed
	mark load; loadvirtio; sample loaded
	readywait; observe o; stopfeed; sample end ;;
two)
	loadtpm; sample pre1
	mark load; loadvirtio; sample pre2
	startfeed; sleep 2; sample fed
	readywait; observe o; stopfeed; sample end
	# informational: each device's quality once made current (this sets rng_selected,
	# and re-initialising a device resets a 0 quality to the default)
	for d in $(cat $hr/rng_available 2>/dev/null); do
		echo "$d" >$hr/rng_current 2>/dev/null && sample "after-$d"
	done ;;
hotplug)
	mark load; loadvirtio; sample loaded
	startfeed; sleep 2; sample fed
	readywait; observe a
	old=$(rd $hr/rng_current)
	mark "unplug $old"
	echo "VMTEST want device_del"
	wait_for "$timeout" no_dev "$old" && mark "left $old" || echo "VMTEST error $old did not leave"
	sample left; observe b
	mark plug
	echo "VMTEST want device_add"
	wait_for "$timeout" has_dev virtio && mark "arrived" || echo "VMTEST error no device arrived"
	sample arrived; observe c; stopfeed; sample end ;;
strict-alone)
	mark load; loadvirtio; sample loaded
	readywait
	if ! ready; then
		mark "blocking read"
		echo "VMTEST blocking-read start up=$(up)"
		head -c 1 /dev/random >/dev/null
		echo "VMTEST blocking-read done up=$(up)"
	fi
	readywait ;;
watermark)
	mark load; loadvirtio; sample loaded
	startfeed -W "$wm"; sleep 1
	readywait
	above() { [ "$(cat /proc/sys/kernel/random/entropy_avail)" -ge "$wm" ]; }
	# a 256-bit pool (5.18's random.c, backported to 5.10.119+) has no watermark
	rounds="1 2"
	[ "$(cat /proc/sys/kernel/random/poolsize)" -lt 4096 ] && rounds=""
	[ -n "$rounds" ] && wait_for "$timeout" above
	sample filled
	mark quiet; observe q; mark "quiet end"
	for round in $rounds; do
		mark "drain $round"
		/bin/hotplug-drain "$wm"
		sample "drained$round"
		wait_for "$timeout" above; sample "refilled$round"
		mark "refilled $round"
	done
	stopfeed; sample end ;;
*)	echo "VMTEST error unknown case $tc" ;;
esac

dmesg | grep -E 'vmtest: |crng init done|random:|tpm|TPM|virtio|hwrng|hw_random' |
	sed 's/^/VMTEST kmsg /'
grep -E ' (hwr|hwreg|hwunreg|rqs|pas|rio): |vmtest: ' $tr/trace 2>/dev/null | sed 's/^/VMTEST trace /'
[ -f /tmp/rngfeed.log ] && sed 's/^/VMTEST rngfeed /' /tmp/rngfeed.log
echo "VMTEST done"
poweroff -f
