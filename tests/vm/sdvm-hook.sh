#!/bin/sh
# tests/vm/sdvm-hook.sh ROOT — VM_IMAGE_HOOK of tests/vm/sdvm.sh: puts into the guest
# image the rngfeed configurations the systemd VM checks boot with (one image for all:
# the kernel option rngfeed_vmtest.conf=NAME makes rngfeed-vmconf.service copy
# /etc/rngfeed-vmtest/NAME.conf to /etc/rngfeed.conf before rngfeed starts; without that
# option the unit is skipped and the packaged /etc/rngfeed.conf is used), and a file of
# zeros for the source that only fails.
set -eu
root=$1
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$root/etc/rngfeed-vmtest"
cp "$here"/sdvm-conf/*.conf "$root/etc/rngfeed-vmtest/"
head -c 65536 /dev/zero >"$root/var/lib/rngfeed-zeros"
cat >"$root/usr/local/sbin/rngfeed-vmconf" <<'EOS'
#!/bin/sh
for w in $(cat /proc/cmdline); do
	case $w in
	rngfeed_vmtest.conf=*) cp "/etc/rngfeed-vmtest/${w#*=}.conf" /etc/rngfeed.conf ;;
	esac
done
EOS
chmod 755 "$root/usr/local/sbin/rngfeed-vmconf"
cat >"$root/etc/systemd/system/rngfeed-vmconf.service" <<'EOS'
# tests/vm/sdvm-hook.sh: the configuration a test boot asked for
[Unit]
DefaultDependencies=no
Before=rngfeed.service
ConditionKernelCommandLine=rngfeed_vmtest.conf
[Service]
Type=oneshot
ExecStart=/usr/local/sbin/rngfeed-vmconf
EOS
mkdir -p "$root/etc/systemd/system/rngfeed.service.wants"
ln -sf /etc/systemd/system/rngfeed-vmconf.service \
	"$root/etc/systemd/system/rngfeed.service.wants/rngfeed-vmconf.service"
