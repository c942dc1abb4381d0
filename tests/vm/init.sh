#!/bin/sh
# /init of the whole-boot test initramfs (tests/vm/mkinitrd.sh puts it there).
# Runs the one case named by vmtest.case= on the kernel command line, prints
# "VMTEST ..." lines on the serial console for tests/vm/boot-matrix.sh to parse,
# and powers off. Every case ends within vmtest.timeout guest seconds.
PATH=/bin
export PATH
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /run
# kprobe_event= on the command line records into the trace buffer from boot on
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
exec </dev/console >/dev/console 2>&1

tc=none
timeout=20
obs=0
for w in $(cat /proc/cmdline); do
	case $w in
	vmtest.case=*) tc=${w#*=} ;;
	vmtest.timeout=*) timeout=${w#*=} ;;
	vmtest.observe=*) obs=${w#*=} ;;
	esac
done

# A watchdog in case anything below hangs: the boot must end, whatever happens.
(sleep $((timeout + obs + 15)); echo "VMTEST guest-watchdog fired"; poweroff -f) &

echo "VMTEST case=$tc kernel=$(uname -r) uptime=$(cut -d' ' -f1 /proc/uptime)"

rngd_cmd="/bin/rngd -f -p /tmp/rngd.pid"
log=/tmp/daemon.log
# -o: the command's output goes to a file, printed after the measurement, so
# writing to the slow emulated serial port costs the command nothing.
# -e: a daemon that exits before the CRNG is ready has failed; stop there.
w="waiter -t $timeout -o $log"
case $tc in
none)		$w ;;
rngfeed-rdrand)	$w -e -- /bin/rngfeed -f -v -n rdrand ;;
rngfeed-tpm)	$w -e -- /bin/rngfeed -f -v -n tpm -O tpm:device=/dev/tpmrm0 ;;
rngfeed-hwrng)	$w -e -- /bin/rngfeed -f -v -n hwrng -O hwrng:device=/dev/hwrng ;;
# rngd: -n 1 no TPM, -d 1 no RDRAND/RDSEED ("drng"); -r the hw_random device
rngd-rdrand)	$w -e -- $rngd_cmd -n 1 -r /dev/nonexistent ;;
rngd-hwrng)	$w -e -- $rngd_cmd -n 1 -d 1 -r /dev/hwrng ;;
rngd-tpm)	$w -e -- $rngd_cmd -v -d 1 -r /dev/nonexistent ;;
minfeed-rdrand)	$w -- /bin/minfeed rdrand ;;
# arm64 (tests/vm/arm64-boot.sh): the CPU's RNDRRS/RNDR
rngfeed-rndrrs | rngfeed-rndr) $w -e -- /bin/rngfeed -f -v -n "${tc#rngfeed-}" ;;
minfeed-rndrrs)	$w -- /bin/minfeed rndrrs ;;
minfeed-hwrng)	$w -- /bin/minfeed /dev/hwrng ;;
# the kernel alone: loading the driver is the "daemon start"
virtio-kernel)	$w -- /bin/sh -c "modprobe virtio_pci && modprobe virtio_rng" ;;
# a virtio-rng device that only gives zeros (QEMU rng-random on /dev/zero), the
# kernel alone or with rngfeed started right after the driver (tests/vm/stuck-virtio.sh):
# the waiter measures the CRNG, then vmtest.observe more seconds show whether the
# kernel keeps crediting (kprobe_event= on add_hwgenerator_randomness, see there)
virtio-stuck | virtio-stuck-rngfeed)
	load="modprobe virtio_pci; modprobe virtio_rng || echo 'modprobe virtio_rng failed'"
	if [ "$tc" = virtio-stuck-rngfeed ]; then
		# in the background with its own log (not the waiter's pipe, which
		# closes at ready): it must keep running through the observation
		$w -- /bin/sh -c "$load; /bin/rngfeed -f -v -n hwrng --wait-for-source >/tmp/rngfeed.log 2>&1 &"
	else
		$w -- /bin/sh -c "$load"
	fi
	sleep "$obs"
	echo "VMTEST observed=$obs uptime=$(cut -d' ' -f1 /proc/uptime)"
	for f in rng_current rng_quality rng_available; do
		[ -f /sys/class/misc/hw_random/$f ] &&
			echo "VMTEST sysfs $f=$(cat /sys/class/misc/hw_random/$f)"
	done
	for f in /sys/module/rng_core/parameters/*; do
		echo "VMTEST param ${f##*/}=$(cat "$f")"
	done
	echo "VMTEST entropy_avail=$(cat /proc/sys/kernel/random/entropy_avail)"
	if [ -f /tmp/rngfeed.log ]; then
		echo "VMTEST rngfeed running=$(pidof rngfeed || echo no)"
		sed 's/^/VMTEST rngfeed /' /tmp/rngfeed.log
	fi
	if [ -f /sys/kernel/tracing/trace ]; then
		grep 'hwr:' /sys/kernel/tracing/trace | sed 's/^/VMTEST trace /'
	else
		echo "VMTEST trace unavailable"
	fi ;;
# no source: must exit non-zero soon; -e stops when it exits.  hwrng is
# left out: by default it waits for a hw_random device that may load later
# (the nosource-wait case below shows the waiting).
nosource)	$w -e -t 10 -- /bin/rngfeed -f -v -x hwrng ;;
# no source but --wait-for-source: must keep running without spinning
nosource-wait)	$w -t 5 -- /bin/rngfeed -f -v --wait-for-source ;;
# where rngfeed's time goes: each step timed on its own, then the daemon with
# debug messages (not in the matrix; VM_CASES=diag tests/vm/boot-matrix.sh)
diag | diag-tpm | diag-hwrng)
	src=rdrand
	case $tc in diag-*) src=${tc#diag-} ;; esac
	step() {
		echo "VMTEST diag step: $*"
		waiter -e -t 10 -o $log -- "$@"
	}
	step /bin/true
	step /bin/sh -c true
	step /bin/rngd --version
	step /bin/rngfeed --version
	step /bin/minfeed
	step /bin/sh -c "LD_DEBUG=statistics /bin/rngfeed --version"
	step /bin/sh -c "LD_BIND_NOW= /bin/rngfeed --version"
	step /bin/rngfeed --list
	step /bin/sh -c "/bin/rngfeed -n rdrand --raw --bytes 2500 >/dev/null"
	step /bin/sh -c "/bin/rngfeed -n rdrand --stdout --bytes 64 >/dev/null"
	if [ -x /bin/strace ]; then
		# which calls the start-up spends its guest time in (-r: relative stamps)
		step /bin/strace -f -tt -o /tmp/strace.log /bin/rngfeed -f -vv -n $src
		sed 's/^/VMTEST strace /' /tmp/strace.log
	else
		step /bin/rngfeed -f -vv -n $src
	fi ;;
*)		echo "VMTEST error unknown case $tc" ;;
esac

# What the kernel saw, on the printk clock (the waiter's markers and the CRNG)
dmesg | grep -E 'vmtest: |crng init done|random:|tpm|TPM|virtio_rng|hwrng' |
	sed 's/^/VMTEST kmsg /'
# kprobes named crngw_* on the command line (arm64-boot.sh): which process
# credited and which one the CRNG became ready in
[ -f /sys/kernel/tracing/trace ] &&
	grep ' crngw_' /sys/kernel/tracing/trace | sed 's/^/VMTEST ktrace /'
[ -f /sys/class/misc/hw_random/rng_current ] &&
	echo "VMTEST hwrng current=$(cat /sys/class/misc/hw_random/rng_current)" \
	     "quality=$(cat /sys/class/misc/hw_random/rng_quality 2>/dev/null)"
[ -f $log ] && sed 's/^/VMTEST log /' $log
echo "VMTEST done"
poweroff -f
