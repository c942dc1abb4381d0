#!/bin/bash
# tests/vm/usb-boot.sh — make vm-test-usb: a USB serial TRNG stick plugged
# into a running guest, unplugged and plugged back, then a stuck one. Ends
# with "N passed, N failed"; exit 1 if any failed. Not in CI (about 2-4
# minutes of host time here).
#
# The guest: Debian 12's 6.1 kernel (fetch.sh) with the busybox initramfs
# (mkinitrd.sh, VM_INIT=usb-init.sh, the xhci and ftdi_sio modules), QEMU
# TCG, -cpu qemu64 without RDRAND/RDSEED and random.trust_cpu=off: the
# stick is the guest's only source, so its CRNG is ready only once rngfeed
# credited it. An xHCI controller (-device qemu-xhci); the stick is plugged
# through QEMU's monitor: chardev-add of a socket to tests/helper_ttyrng,
# which speaks the OneRNG protocol, and device_add of a usb-serial device
# on that chardev; unplugged with device_del and chardev-remove. QEMU's
# usb-serial is an FTDI converter (0403:6001, /dev/ttyUSB0 in the guest),
# not a OneRNG's CDC-ACM (1d50:6086): the shipped udev rule cannot name it
# (and the initramfs has no udev), so the guest's rngfeed is given the
# path and the profile (-O serial:device=/dev/ttyUSB0 -O
# serial:profile=onerng: a named profile on an unknown USB id, credited the
# profile's ceiling). The OneRNG commands travel over the FTDI link.
#
# Judged from the guest's report (usb-init.sh):
#   - not plugged in at start: rngfeed waits (no --wait-for-source);
#   - plugged in after start-up: found, its start-up test passed, credited;
#     the guest's CRNG ready only then (the time from the plug is printed);
#   - unplugged: "went away"; nothing read or passed while it is away
#     (what is still taken from the reader's queue passed before);
#   - plugged back: the same daemon finds it, tells it again (the stick's
#     own log shows a second cmd1 ... cmdO), credits again;
#   - a stuck stick (constant 0xa5): disabled, never credited;
#   - SIGTERM ends rngfeed within 1 s (guest clock) while it waits for the
#     stick, while it runs, while the stick is away, while it is disabled.
#
# Environment: RNGFEED (default ./rngfeed), TTYRNG (default
# tests/helper_ttyrng), VM_TIMEOUT (guest seconds to wait for each event,
# default 60), VM_WORK (default tests/vm/work; this test uses VM_WORK/usb).
set -u

here=$(cd "$(dirname "$0")" && pwd)
RNGFEED=${RNGFEED:-./rngfeed}
TTYRNG=${TTYRNG:-$here/../helper_ttyrng}
WORK=${VM_WORK:-$here/work}/usb
TIMEOUT=${VM_TIMEOUT:-60}

skip() { echo "SKIP: usb-boot: $*"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (Debian: qemu-system-x86)"
command -v python3 >/dev/null || skip "python3 is not installed (it talks to QEMU's monitor)"
[ -x "$RNGFEED" ] || { echo "FAIL: $RNGFEED is not built (make rngfeed)"; exit 1; }
[ -x "$TTYRNG" ] || { echo "FAIL: $TTYRNG is not built (make tests/helper_ttyrng)"; exit 1; }
base=$("$here/fetch.sh") || skip "fetch.sh could not fetch the 6.1 kernel and busybox"
eval "$base"
mkdir -p "$WORK"
rm -f "$WORK"/*.log "$WORK"/*.sock "$WORK"/results.txt
started=$(date +%s)

pids=()
cleanup() {
	[ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null
	wait 2>/dev/null
	pids=()
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT
trap '[ "$BASHPID" != $$ ] || cleanup; exit 130' INT TERM

# One human monitor command to QEMU's monitor socket $1; its answer.
monitor() {
	python3 - "$1" "$2" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.settimeout(2.0)
time.sleep(0.3)
try:
    s.recv(65536)          # the banner and prompt
except socket.timeout:
    pass
s.sendall((sys.argv[2] + "\n").encode())
time.sleep(0.7)
try:
    print(s.recv(65536).decode(errors="replace").replace("\r", ""), end="")
except socket.timeout:
    pass
s.close()
EOF
}

initrd=$WORK/initrd.cpio
VM_INIT=$here/usb-init.sh VM_EXTRA_MODULES="xhci-pci ftdi_sio" RNGFEED=$RNGFEED \
	"$here/mkinitrd.sh" "$initrd" >"$WORK/mkinitrd.log" 2>&1 ||
	{ echo "FAIL: cannot build the initramfs:"; sed 's/^/    /' "$WORK/mkinitrd.log"; exit 1; }

# The two sticks on the host: a good OneRNG and a stuck one.
"$TTYRNG" "listen=$WORK/stick.sock" onerng log="$WORK/stick.log" >/dev/null 2>&1 &
pids+=($!)
"$TTYRNG" "listen=$WORK/stuck.sock" onerng stuck=a5 log="$WORK/stuck.log" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$WORK/stick.sock" ] && [ -S "$WORK/stuck.sock" ] && break; sleep 0.1; done

log=$WORK/guest.log
mon=$WORK/mon.sock
t0=$(date +%s)
nice -n 5 timeout -k 5 $((TIMEOUT * 12 + 300)) qemu-system-x86_64 -accel tcg \
	-cpu qemu64,-rdrand,-rdseed -m 512 -nographic -no-reboot -nic none \
	-monitor "unix:$mon,server,nowait" -device qemu-xhci,id=xhci \
	-kernel "$VM_VMLINUZ" -initrd "$initrd" \
	-append "console=ttyS0 random.trust_cpu=off random.trust_bootloader=off quiet vmtest.timeout=$TIMEOUT" \
	</dev/null >"$log" 2>&1 &
qemu=$!
pids+=($qemu)

# Plug and unplug as the guest asks.
plug() { # ID CHARDEV SOCKET
	monitor "$mon" "chardev-add socket,id=$2,path=$3" >>"$WORK/monitor.log"
	monitor "$mon" "device_add usb-serial,bus=xhci.0,chardev=$2,id=$1" >>"$WORK/monitor.log"
	echo "host: plugged $1 ($2) at $(date +%s.%N)" >>"$WORK/monitor.log"
}
unplug() { # ID CHARDEV
	monitor "$mon" "device_del $1" >>"$WORK/monitor.log"
	for _ in $(seq 20); do
		monitor "$mon" "chardev-remove $2" | tee -a "$WORK/monitor.log" | grep -q 'in use' || break
		sleep 0.5
	done
	echo "host: unplugged $1 at $(date +%s.%N)" >>"$WORK/monitor.log"
}
done_steps=0
while kill -0 "$qemu" 2>/dev/null; do
	n=$(grep -c '^VMTEST want ' "$log" 2>/dev/null)
	while [ "$done_steps" -lt "$n" ]; do
		done_steps=$((done_steps + 1))
		step=$(grep '^VMTEST want ' "$log" | sed -n "${done_steps}p" | awk '{ print $3 }')
		case $step in
		plug) plug stick0 stick "$WORK/stick.sock" ;;
		unplug)
			if grep -q 'host: plugged stick1' "$WORK/monitor.log"; then unplug stick1 stuck
			else unplug stick0 stick; fi ;;
		plug-stuck) plug stick1 stuck "$WORK/stuck.sock" ;;
		esac
	done
	sleep 0.3
done
wait "$qemu"
echo "VMHOST qemu-exit=$? host-seconds=$(($(date +%s) - t0))" >>"$log"

# ---- judging -------------------------------------------------------------------
tr -d '\r' <"$log" >"$WORK/guest.txt"
awk -v stickcmds="$(sed -n 's/^cmd \(.\)$/\1/p' "$WORK/stick.log" | tr -d '\n')" '
	function field(s, key,   m) { m = s; if (!sub(".* " key "=", "", m)) return ""; sub(/ .*/, "", m); return m }
	function verdict(ok, what) { printf "%s: usb: %s\n", ok ? "PASS" : "FAIL", what }
	function info(what) { printf "INFO: usb: %s\n", what }
	function stamp(s) { sub(/^[^[]*\[ */, "", s); sub(/\].*/, "", s); return s + 0 }
	/^VMTEST sample / { p = $3; raw[p] = field($0, "raw") + 0; passed[p] = field($0, "passed") + 0; failed[p] = field($0, "failed") + 0
		dep[p] = field($0, "deposited") + 0; kern[p] = field($0, "kernel") + 0; up[p] = field($0, "up") + 0; seen[p] = field($0, "raw") != "" }
	/^VMTEST kmsg .*now attached to ttyUSB0/ && attach1 == "" { attach1 = stamp($0) }
	/^VMTEST stop / { st = field($0, "state"); took[st] = field($0, "gone") - field($0, "sent"); still[st] = field($0, "still") }
	/^VMTEST error / { errors = errors " [" substr($0, 14) "]" }
	/^VMTEST done/ { done = 1 }
	/^VMTEST guest-watchdog/ { dog = 1 }
	/^VMTEST kmsg .*crng init done/ && ready == "" { ready = stamp($0) }
	/^VMTEST log n=1 .*serial: .*looking for it every/ { waited = 1 }
	/^VMTEST log n=2 .*serial: opened .*Version/ { opened2++ }
	/^VMTEST log n=2 .*serial: read failed: the device went away/ { gone2 = 1 }
	/^VMTEST log n=4 .*serial: disabled: failed health tests/ { disabled = 1 }
	/^VMHOST/ { host = $0 }
	END {
		if (!done) { verdict(0, "the guest did not finish" (dog ? " (its watchdog fired)" : "") errors); exit }
		if (errors != "") verdict(0, "guest errors:" errors)
		verdict(waited, "not plugged in at start: rngfeed waits for the stick")
		verdict(dep["credited"] > 0 && kern["credited"] > 0, sprintf("plugged in after start-up: %s blocks passed its start-up test and tests, %s bits of credit deposited, %s credited to the kernel", passed["credited"], dep["credited"], kern["credited"]))
		if (ready != "" && attach1 != "")
			verdict(ready >= attach1, sprintf("the CRNG ready %.2f s after the stick was attached (kernel log, guest time; the stick is its only source)", ready - attach1))
		else
			verdict(0, "the CRNG was never ready (or no stick attached)")
		verdict(gone2, "unplugged: rngfeed says it went away")
		# Away: nothing read, nothing passed; the credit deposited may
		# grow only by the blocks that passed before (at most the 2 a
		# reader queues, 2 x 20000 x 768/1024 bits).
		verdict(seen["away-start"] && seen["away-end"] && raw["away-start"] == raw["away-end"] && passed["away-start"] == passed["away-end"] && dep["away-end"] - dep["away-start"] <= 30720,
			sprintf("nothing read or passed while it is away (%.1f s): raw %s -> %s bytes, passed %s -> %s, deposited %s -> %s bits", up["away-end"] - up["away-start"], raw["away-start"], raw["away-end"], passed["away-start"], passed["away-end"], dep["away-start"], dep["away-end"]))
		verdict(passed["resumed"] > passed["away-end"] && dep["resumed"] > dep["away-end"] && opened2 >= 2,
			sprintf("plugged back: the same daemon opened it again (%d opens), tested and credited it again: passed %s -> %s, deposited %s -> %s bits", opened2, passed["away-end"], passed["resumed"], dep["away-end"], dep["resumed"]))
		# The stick was told twice: cmdo 1 w v O, at each plug.
		k = 0; s = stickcmds; while ((i = index(s, "o1wvO")) > 0) { k++; s = substr(s, i + 5) }
		verdict(k >= 2, sprintf("the stick was told its commands at each plug (%d times: %s)", k, stickcmds))
		verdict(disabled && seen["stuck-b"] && dep["stuck-b"] == 0 && passed["stuck-b"] == 0 && failed["stuck-b"] > 0,
			sprintf("a stuck stick: disabled, never credited (%s blocks failed, %s passed, %s bits deposited)", failed["stuck-b"], passed["stuck-b"], dep["stuck-b"]))
		n = split("waiting running away disabled", states, " ")
		for (i = 1; i <= n; i++) {
			s = states[i]
			if (!(s in took)) { verdict(0, "SIGTERM " s ": not done"); continue }
			verdict(took[s] <= 1.0 && still[s] == "no", sprintf("SIGTERM while %s: gone after %.2f s", s == "running" ? "it runs" : s == "away" ? "the stick is away" : s == "waiting" ? "waiting for the stick" : "disabled", took[s]))
		}
		info(host)
	}' "$WORK/guest.txt" | tee "$WORK/results.txt"

passed=$(grep -c '^PASS' "$WORK/results.txt")
failed=$(grep -c '^FAIL' "$WORK/results.txt")
echo "  (guest log: $WORK/guest.log; sticks: $WORK/stick.log, $WORK/stuck.log; monitor: $WORK/monitor.log)"
echo "usb-boot: $(($(date +%s) - started)) s of host time"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
