#!/bin/sh
# /init of the EGD whole-boot tests (tests/vm/egd-boot.sh puts it over the
# initramfs of tests/vm/mkinitrd.sh). The guest's virtio-rng device is QEMU's
# rng-egd backend on the host's rngfeed --egd-server. Cases (vmtest.case=):
#   egd-kernel   load virtio_pci and virtio_rng under the waiter: the kernel's
#                hw_random thread takes virtio-rng data and credits it itself;
#                measures the CRNG's ready time from the driver load; then reads
#                /dev/hwrng for vmtest.observe seconds (the same demand in every
#                guest, for the fairness figure), one progress line a second
#   egd-rngfeed  the same device read by rngfeed inside the guest (virtio
#                source) for vmtest.observe seconds: its blocks must pass the
#                health tests; prints its metrics
#   egd-client   no virtio-rng: rngfeed in the guest with the egd source on
#                tcp:10.0.2.100:7000, which QEMU's user network forwards to the
#                host's EGD socket (guestfwd); credit=768 (a forwarded local
#                socket the test trusts): measures the CRNG's ready time from
#                rngfeed's start
# Prints "VMTEST ..." lines on the serial console, waits vmtest.hold seconds
# (still connected: the host reads the server's metrics) and powers off; the
# boot ends within timeout + observe + hold + 20 guest seconds whatever happens.
PATH=/bin
export PATH
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /run
exec </dev/console >/dev/console 2>&1

tc=none
timeout=20
obs=0
hold=0
for w in $(cat /proc/cmdline); do
	case $w in
	vmtest.case=*) tc=${w#*=} ;;
	vmtest.timeout=*) timeout=${w#*=} ;;
	vmtest.observe=*) obs=${w#*=} ;;
	vmtest.hold=*) hold=${w#*=} ;;
	esac
done
(sleep $((timeout + obs + hold + 20)); echo "VMTEST guest-watchdog fired"; poweroff -f) &

up() { cut -d' ' -f1 /proc/uptime; }
echo "VMTEST case=$tc kernel=$(uname -r) uptime=$(up)"
log=/tmp/daemon.log
load="modprobe virtio_pci; modprobe virtio_rng || echo 'modprobe virtio_rng failed'"

# read_hwrng SECONDS: read /dev/hwrng for SECONDS (dd in the background, so a
# read that never returns cannot stop the boot), one "VMTEST hwrng-read" line
# a second with the bytes so far: a stall (a lost request, a server away)
# shows as lines that stop growing
read_hwrng() {
	dd if=/dev/hwrng of=/tmp/hwrng.bin bs=256 2>/dev/null &
	reader=$!
	i=0
	while [ $i -lt "$1" ]; do
		sleep 1
		i=$((i + 1))
		echo "VMTEST hwrng-read uptime=$(up) bytes=$(wc -c </tmp/hwrng.bin)"
	done
	kill "$reader" 2>/dev/null
}

case $tc in
egd-kernel)
	# the kernel alone: loading the driver is the "start"
	waiter -t "$timeout" -o $log -- /bin/sh -c "$load"
	echo "VMTEST loaded uptime=$(up)"
	read_hwrng "$obs" ;;
egd-rngfeed)
	sh -c "$load"
	rngfeed -f -v -n virtio --metrics /tmp/metrics --stats-interval 1 \
		>/tmp/rngfeed.log 2>&1 &
	pid=$!
	sleep "$obs"
	echo "VMTEST rngfeed running=$(kill -0 $pid 2>/dev/null && echo yes || echo no)"
	kill -TERM $pid 2>/dev/null
	sleep 1
	sed 's/^/VMTEST rngfeed /' /tmp/rngfeed.log
	[ -f /tmp/metrics ] && grep -v '^#' /tmp/metrics | sed 's/^/VMTEST metric /' ;;
egd-client)
	modprobe virtio_pci
	modprobe virtio_net || echo "VMTEST error modprobe virtio_net failed"
	ip link set lo up
	ip link set eth0 up
	ip addr add 10.0.2.15/24 dev eth0
	waiter -e -t "$timeout" -o $log -- /bin/rngfeed -f -v -n egd \
		-O egd:device=tcp:10.0.2.100:7000 -O egd:credit=768 ;;
*)	echo "VMTEST error unknown case $tc" ;;
esac

dmesg | grep -E 'vmtest: |crng init done|random:|virtio_rng|hwrng' |
	sed 's/^/VMTEST kmsg /'
[ -f /sys/class/misc/hw_random/rng_current ] &&
	echo "VMTEST hwrng current=$(cat /sys/class/misc/hw_random/rng_current)" \
	     "quality=$(cat /sys/class/misc/hw_random/rng_quality 2>/dev/null)"
[ -f $log ] && sed 's/^/VMTEST log /' $log
echo "VMTEST done uptime=$(up)"
# the host reads the server's metrics while this guest is still connected
sleep "$hold"
poweroff -f
