#!/bin/bash
# tests/vm/egd-boot.sh — whole-VM tests of the EGD server and client (issue 17);
# make vm-test-egd, make vm-test-egd-smoke (VM_SMOKE=1: the one-guest test only).
#
# The host runs `rngfeed --egd-only --egd-server unix:SOCK -n rdrand` (SOCK in a
# mktemp directory); QEMU boots Debian 12's kernel (software emulation, the
# busybox initramfs of mkinitrd.sh with tests/vm/egd-init.sh as /init) with
# random.trust_cpu=off and a virtio-rng device whose backend is QEMU's rng-egd on
# that socket. The QEMU options for the device are derived from
# tests/vm/egd-libvirt.xml, the libvirt <rng> example of the README and man page
# (its socket path replaced by SOCK), as libvirt derives them: so the example is
# what the test boots. (libvirt itself is not used: libvirtd would be a system
# daemon to install and start on the host, which a test must not leave changed.)
#
# Tests (VM_EGD_TESTS, default all, in this order):
#   one      one guest: its kernel takes virtio-rng data from the server and
#            credits it; CRNG ready time from loading virtio_rng; then it reads
#            /dev/hwrng for VM_OBSERVE s. Bytes served to it (server metrics).
#   eight    VM_EGD_GUESTS (8) guests at once, the same case with a longer read
#            (VM_EGD_EIGHT_OBSERVE, 45 s): every one ready; once all of them
#            read, the bytes served to each in a common window
#            (VM_EGD_EIGHT_WINDOW, 15 s, two copies of the server's metrics) are
#            fair within a factor of 2 (max/min).
#   restart  VM_EGD_RESTART_GUESTS (2) guests, and a host rngfeed with the egd
#            source reading the same socket: the server is killed (SIGKILL) as the
#            first guest's /init starts and restarted 3 s later, then stopped
#            (SIGTERM) while the guests read /dev/hwrng and restarted 2 s later:
#            every guest gets ready, its reads go on after the second restart, no
#            QEMU or server crashes, and the egd client reconnects and reads on.
#   virtio   one guest running rngfeed with its virtio source on that device: its
#            blocks pass the health tests.
#   guest    one guest without virtio-rng running rngfeed with the egd source on
#            tcp:10.0.2.100:7000, which QEMU's user network forwards to the host
#            socket (guestfwd), at credit 768: its CRNG gets ready from it.
#   client   a second rngfeed on the host with the egd source against the socket:
#            --raw gives the bytes asked for, tested.
#
# Environment: RNGFEED (./rngfeed), VM_SMOKE, VM_EGD_TESTS, VM_EGD_GUESTS,
# VM_EGD_RESTART_GUESTS, VM_TIMEOUT (guest seconds to wait for the CRNG, 30),
# VM_OBSERVE (guest seconds of /dev/hwrng reading, 8), VM_EGD_SOURCE (the
# server's source, rdrand), VM_EGD_SERVER_ARGS (more server options, e.g.
# --egd-budget 262144 to make the server the bottleneck), VM_EGD_XML (the libvirt example), VM_WORK
# (tests/vm/work; this script uses VM_WORK/egd), VM_QEMU_ARGS.
# Results: VM_WORK/egd/results.md; serial logs: VM_WORK/egd/logs/.
# Exit status: 0 passed (or "SKIP: reason" printed), 1 an assertion failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
RNGFEED=${RNGFEED:-./rngfeed}
case $RNGFEED in /*) ;; *) RNGFEED=$PWD/$RNGFEED ;; esac
WORK=${VM_WORK:-$here/work}/egd
TIMEOUT=${VM_TIMEOUT:-30}
OBSERVE=${VM_OBSERVE:-8}
# guest seconds between its last line and its power-off: the server rewrites
# its metrics every 5 s, and a client's series ends with its connection
HOLD=7
GUESTS=${VM_EGD_GUESTS:-8}
# eight: guest seconds each guest reads /dev/hwrng, and the host seconds of the
# common window inside that
EIGHT_OBSERVE=${VM_EGD_EIGHT_OBSERVE:-45}
EIGHT_WINDOW=${VM_EGD_EIGHT_WINDOW:-15}
RGUESTS=${VM_EGD_RESTART_GUESTS:-2}
SOURCE=${VM_EGD_SOURCE:-rdrand}
XML=${VM_EGD_XML:-$here/egd-libvirt.xml}
if [ -n "${VM_SMOKE:-}" ]; then
	TESTS=${VM_EGD_TESTS:-one}
else
	TESTS=${VM_EGD_TESTS:-"one eight restart virtio guest client"}
fi

skip() { echo "SKIP: vm-test-egd: $*"; exit 0; }
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
say() { echo "egd-boot: $*"; }

command -v qemu-system-x86_64 >/dev/null ||
	skip "qemu-system-x86_64 is not installed (Debian: qemu-system-x86)"
[ -x "$RNGFEED" ] || { echo "FAIL: $RNGFEED is not built (make rngfeed)"; exit 1; }
"$RNGFEED" --help 2>&1 | grep -q -- '--egd-server' ||
	{ echo "FAIL: $RNGFEED has no --egd-server"; exit 1; }
"$RNGFEED" -c /dev/null --list 2>/dev/null | grep -qE "^$SOURCE +available" ||
	skip "the server's source $SOURCE is not available here (VM_EGD_SOURCE=...)"
if command -v xmllint >/dev/null; then
	xml_get() { xmllint --xpath "string($1)" "$XML" 2>/dev/null; }
elif command -v python3 >/dev/null; then
	xml_get() {
		python3 - "$XML" "$1" <<-'EOF'
		import sys, xml.etree.ElementTree as ET
		root = ET.parse(sys.argv[1]).getroot()
		path = sys.argv[2].split("/")[2:]      # /rng/a/b/@c -> a, b, @c
		node = root
		for p in path:
		    if p.startswith("@"):
		        print(node.get(p[1:], "")); sys.exit(0)
		    node = node.find(p)
		    if node is None: sys.exit(0)
		EOF
	}
else
	skip "neither xmllint (libxml2-utils) nor python3 to read $XML"
fi
fetched=$("$here/fetch.sh") || skip "could not fetch a kernel and busybox (fetch.sh says why above)"
eval "$fetched"

mkdir -p "$WORK/logs"
rm -f "$WORK"/logs/* "$WORK"/served-* "$WORK"/window-* "$WORK/times"
initrd=$WORK/initrd.cpio
RNGFEED=$RNGFEED "$here/mkinitrd.sh" "$initrd" || { echo "FAIL: cannot build the initramfs"; exit 1; }
# /init replaced: a second cpio archive after the first; the kernel unpacks
# both in order, so the later /init wins.
over=$WORK/overlay.d
rm -rf "$over" && mkdir -p "$over"
cp "$here/egd-init.sh" "$over/init" && chmod 755 "$over/init"
# virtio_net and what it needs, for the guest-client test's user network: its
# modules, and a modules.dep of mkinitrd.sh's lines plus theirs (the later
# archive's file replaces the first's)
mdir=lib/modules/$VM_KVER
mkdir -p "$over/$mdir"
cp "$WORK/initrd.d/$mdir/modules.dep" "$over/$mdir/modules.dep"
for m in virtio_net net_failover failover; do
	line=$(grep -E "/$m\.ko:" "$VM_MODROOT/$mdir/modules.dep") ||
		{ echo "FAIL: no $m in $VM_MODROOT/$mdir/modules.dep"; exit 1; }
	mkdir -p "$over/$mdir/$(dirname "${line%%:*}")"
	cp "$VM_MODROOT/$mdir/${line%%:*}" "$over/$mdir/${line%%:*}"
	echo "$line" >>"$over/$mdir/modules.dep"
done
if command -v cpio >/dev/null; then
	(cd "$over" && find . | cpio -o -H newc --quiet) >>"$initrd"
else
	(cd "$over" && find . | "$VM_BUSYBOX" cpio -o -H newc) >>"$initrd"
fi

tmp=$(mktemp -d /tmp/rngfeed-egd-vm.XXXXXX) || exit 1
SOCK=$tmp/egd.sock
server_pid=""
sampler_pid=""
qemu_pids=""
client_pid=""
cleanup() {
	local p
	for p in $qemu_pids $client_pid $sampler_pid $server_pid; do
		kill "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT
trap 'exit 130' INT TERM

# ---- the QEMU options, from the libvirt example -------------------------------------

# rng_args: fills the array rng with what libvirt makes of $XML's <rng>, the
# socket path replaced by $SOCK; refuses anything but the virtio/egd/unix form.
rng=()
rng_args() {
	local model bmodel btype smode path rec_en rec_t bytes period dev chr
	model=$(xml_get /rng/@model); bmodel=$(xml_get /rng/backend/@model)
	btype=$(xml_get /rng/backend/@type); smode=$(xml_get /rng/backend/source/@mode)
	path=$(xml_get /rng/backend/source/@path)
	rec_en=$(xml_get /rng/backend/source/reconnect/@enabled)
	rec_t=$(xml_get /rng/backend/source/reconnect/@timeout)
	bytes=$(xml_get /rng/rate/@bytes); period=$(xml_get /rng/rate/@period)
	if [ "$model" != virtio ] || [ "$bmodel" != egd ] || [ "$btype" != unix ] ||
	   [ "$smode" != connect ] || [ -z "$path" ]; then
		echo "FAIL: $XML is not <rng model='virtio'><backend model='egd' type='unix'><source mode='connect' path=...>" \
			"(got model=$model backend=$bmodel type=$btype mode=$smode path=$path)"
		exit 1
	fi
	chr="socket,id=charrng0,path=$SOCK"
	[ "$rec_en" = yes ] && chr="$chr,reconnect=${rec_t:-1}"
	dev="virtio-rng-pci,rng=objrng0,id=rng0"
	[ -n "$bytes" ] && dev="$dev,max-bytes=$bytes"
	[ -n "$period" ] && dev="$dev,period=$period"
	# shellcheck disable=SC2054  # the commas are QEMU's
	rng=(-chardev "$chr" -object rng-egd,id=objrng0,chardev=charrng0 -device "$dev")
}
rng_args
say "QEMU options from $(basename "$XML"): ${rng[*]}"

# ---- the host's server --------------------------------------------------------------

# start_server: rngfeed --egd-only on $SOCK, appending to $tmp/server.log.
start_server() {
	echo "=== start $(date +%s.%N)" >>"$tmp/server.log"
	# connection numbers start again with every server: the sampler tags its
	# copies with the instance
	echo $(( $(cat "$tmp/instance" 2>/dev/null || echo 0) + 1 )) >"$tmp/instance"
	rm -f "$tmp/metrics"
	# shellcheck disable=SC2086  # VM_EGD_SERVER_ARGS is a list of words
	"$RNGFEED" -c /dev/null -f -v --egd-only --egd-server "unix:$SOCK" -n "$SOURCE" \
		--metrics "$tmp/metrics" ${VM_EGD_SERVER_ARGS:-} </dev/null >>"$tmp/server.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 100); do
		[ -S "$SOCK" ] && return 0
		sleep 0.05
	done
	fail "the EGD server did not create $SOCK in 5 s: $(tail -n 3 "$tmp/server.log")"
	return 1
}

# stop_server SIGNAL: the exit status into $tmp/server.exits.
stop_server() {
	kill "-$1" "$server_pid" 2>/dev/null
	{ wait "$server_pid"; } 2>/dev/null # no "Killed" line from the shell
	echo "$1 $?" >>"$tmp/server.exits"
	server_pid=""
}

# The metrics file is rewritten every 5 s and a client's series ends with its
# connection: a sampler keeps every copy, and served bytes per client are the
# largest value seen for each connection (server instance, connection number).
start_sampler() {
	: >"$tmp/samples"
	(while :; do
		[ -f "$tmp/metrics" ] && { echo "instance $(cat "$tmp/instance")"; cat "$tmp/metrics"; } >>"$tmp/samples"
		sleep 1
	done) &
	sampler_pid=$!
}
stop_sampler() {
	kill "$sampler_pid" 2>/dev/null
	wait "$sampler_pid" 2>/dev/null
	sampler_pid=""
	[ -f "$tmp/metrics" ] && { echo "instance $(cat "$tmp/instance")"; cat "$tmp/metrics"; } >>"$tmp/samples"
}

# served_by_pid: "PID BYTES" per peer process, summed over its connections.
served_by_pid() {
	awk '/^instance / { inst = $2 }
	/^rngfeed_egd_client_served_bytes_total\{/ {
		match($0, /client="[0-9]+"/); c = inst ":" substr($0, RSTART + 8, RLENGTH - 9)
		match($0, /peer="pid [0-9]+/); p = substr($0, RSTART + 10, RLENGTH - 10)
		if ($NF + 0 > max[c]) max[c] = $NF + 0
		pid[c] = p
	} END { for (c in max) s[pid[c]] += max[c]; for (p in s) print p, s[p] }' "$tmp/samples"
}

# ---- guests -------------------------------------------------------------------------

# boot NAME CASE: one guest in the background; its log $WORK/logs/NAME.log, its
# QEMU pid in $WORK/logs/NAME.pid.
# no_timer_check: on a loaded host the emulated guest is too slow for the
# kernel's IO-APIC timer check, which then panics ("IO-APIC + timer doesn't
# work", seen with eight guests on two busy cores); panic=-1 with -no-reboot
# ends QEMU at once if anything else panics.
# B_TIMEOUT and B_OBSERVE override TIMEOUT and OBSERVE for it. QEMU's human
# monitor is on the pipes $tmp/NAME.mon.in/.out (monitor NAME COMMAND).
# B_NET=1: no virtio-rng; a user network whose 10.0.2.100:7000 QEMU forwards
# to the server's socket (guestfwd), for rngfeed's egd source in the guest.
boot() {
	local name=$1 c=$2 log=$WORK/logs/$1.log
	local -a dev=("${rng[@]}" -nic none)
	[ -n "${B_NET:-}" ] &&
		dev=(-nic "user,model=virtio-net-pci,restrict=on,guestfwd=tcp:10.0.2.100:7000-unix:$SOCK")
	mkfifo "$tmp/$name.mon.in" "$tmp/$name.mon.out"
	# shellcheck disable=SC2086  # VM_QEMU_ARGS is a list of words
	qemu-system-x86_64 -accel tcg -cpu max -m 256 -nographic -no-reboot \
		-monitor "pipe:$tmp/$name.mon" \
		"${dev[@]}" ${VM_QEMU_ARGS:-} -kernel "$VM_VMLINUZ" -initrd "$initrd" \
		-append "console=ttyS0 random.trust_cpu=off random.trust_bootloader=off quiet no_timer_check panic=-1 vmtest.case=$c vmtest.timeout=${B_TIMEOUT:-$TIMEOUT} vmtest.observe=${B_OBSERVE:-$OBSERVE} vmtest.hold=$HOLD" \
		</dev/null >"$log" 2>&1 &
	echo $! >"$WORK/logs/$name.pid"
	qemu_pids="$qemu_pids $!"
}

monitor() { echo "$2" >"$tmp/$1.mon.in"; }

# wait_guests LIMIT NAME...: wait for their QEMUs to exit (LIMIT host seconds
# in all, then killed); each exit status in NAME.exit.
wait_guests() {
	local limit=$1 t0 n p rc
	shift
	t0=$(date +%s)
	for n in "$@"; do
		p=$(cat "$WORK/logs/$n.pid")
		while kill -0 "$p" 2>/dev/null && [ $(($(date +%s) - t0)) -lt "$limit" ]; do
			sleep 1
		done
		if kill -0 "$p" 2>/dev/null; then
			kill "$p"
			echo "killed" >"$WORK/logs/$n.exit"
		fi
		wait "$p" 2>/dev/null
		rc=$?
		# the serial console ends lines with CR LF
		sed -i 's/\r$//' "$WORK/logs/$n.log"
		[ -s "$WORK/logs/$n.exit" ] || echo "$rc" >"$WORK/logs/$n.exit"
	done
	qemu_pids=""
}

# Host seconds a guest may take: TCG boots take 6-9 s alone, far more with
# eight on two cores.
guest_limit() { echo $(( (TIMEOUT + OBSERVE + 40) * (1 + $1 / 2) )); }

# guest_line NAME: "done ready crng hwrng_bytes qemu_exit served" (times in
# guest seconds from loading virtio_rng; "none" never, "-" not reported).
guest_line() {
	local log=$WORK/logs/$1.log pid served
	pid=$(cat "$WORK/logs/$1.pid")
	served=$(served_by_pid | awk -v p="$pid" '$1 == p { print $2 }')
	awk -v ex="$(cat "$WORK/logs/$1.exit" 2>/dev/null)" -v served="${served:-0}" '
	function stamp(s) { sub(/^[^[]*\[ */, "", s); sub(/\].*/, "", s); return s + 0 }
	{ sub(/\r$/, "") }
	/VMTEST waiter / { for (i = 3; i <= NF; i++) { split($i, kv, "="); w[kv[1]] = kv[2] } }
	/VMTEST kmsg .*vmtest: start/ { ks = stamp($0) }
	/VMTEST kmsg .*crng init done/ { kc = stamp($0) }
	/VMTEST hwrng-read / { split($NF, kv, "="); hb = kv[2] }
	/^VMTEST done/ { done = 1 }
	END {
		ready = "-"
		if ("ready" in w) ready = w["ready"] == "none" ? "none" : sprintf("%.3f", w["ready"] - w["start"])
		crng = ks == "" ? "-" : kc == "" ? "none" : sprintf("%.3f", kc - ks)
		printf "%d %s %s %s %s %s\n", done, ready, crng, hb == "" ? 0 : hb, ex, served
	}' "$log"
}

results=$WORK/results.md
{
	echo "## EGD whole-VM results ($(date -u +%Y-%m-%dT%H:%MZ))"
	echo
	echo "Kernel $VM_KVER, $(qemu-system-x86_64 --version | head -n 1 | sed 's/ (.*//'), \`-accel tcg\`,"
	echo "\`random.trust_cpu=off\`; host: \`rngfeed --egd-only --egd-server unix:SOCK -n $SOURCE${VM_EGD_SERVER_ARGS:+ $VM_EGD_SERVER_ARGS}\`;"
	echo "QEMU: \`${rng[*]}\` (from $(basename "$XML")). Ready: guest seconds from loading"
	echo "virtio_rng to the first non-blocking getrandom() success; served: the server's"
	echo "rngfeed_egd_client_served_bytes_total for that QEMU; read: bytes the guest read from"
	echo "/dev/hwrng in $OBSERVE s after that."
} >"$results"

# check_guest NAME TEST: the assertions every egd-kernel guest must meet.
check_guest() {
	local n=$1 t=$2 d ready crng hb ex served
	read -r d ready crng hb ex served <<<"$(guest_line "$n")"
	[ "$d" = 1 ] || fail "$t: $n did not finish (no 'VMTEST done'; see $WORK/logs/$n.log)"
	[ "$ex" = 0 ] || fail "$t: $n: QEMU exit status $ex"
	case $ready in none | -) fail "$t: $n: CRNG not ready within $TIMEOUT s" ;; esac
	[ "${served:-0}" -gt 0 ] || fail "$t: $n: the server's metrics show no bytes served to it"
	[ "${hb:-0}" -gt 0 ] || fail "$t: $n: read nothing from /dev/hwrng in $OBSERVE s"
	echo "| $t | $n | $ready | $crng | $served | $hb | $ex |" >>"$results"
	echo "$served" >>"$WORK/served-$t"
}

table_head() {
	{
		echo
		echo "| test | guest | ready (s) | crng init done (s) | served (bytes) | read from /dev/hwrng (bytes) | QEMU exit |"
		echo "|---|---|---|---|---|---|---|"
	} >>"$results"
}

server_alive() {
	if [ -z "$server_pid" ] || ! kill -0 "$server_pid" 2>/dev/null; then
		fail "$1: the EGD server is not running: $(tail -n 3 "$tmp/server.log")"
	fi
}

t_all0=$(date +%s)

# ---- one ----------------------------------------------------------------------------

test_one() {
	local t0
	say "one: 1 guest"
	start_server || return
	start_sampler
	t0=$(date +%s)
	boot one-1 egd-kernel
	wait_guests "$(guest_limit 1)" one-1
	say "one: $(($(date +%s) - t0)) s of host time"
	stop_sampler
	server_alive one
	stop_server TERM
	table_head
	check_guest one-1 one
	echo "one-guest boot: $(($(date +%s) - t0)) s of host time" >>"$WORK/times"
}

# ---- eight --------------------------------------------------------------------------

# served_in FILE: "PID BYTES" per peer process in one copy of the metrics.
served_in() {
	awk '/^rngfeed_egd_client_served_bytes_total\{/ {
		match($0, /peer="pid [0-9]+/); p = substr($0, RSTART + 10, RLENGTH - 10)
		s[p] += $NF
	} END { for (p in s) print p, s[p] }' "$1"
}

test_eight() {
	local t0 names="" i lo hi a b pid d
	say "eight: $GUESTS guests at once"
	start_server || return
	start_sampler
	t0=$(date +%s)
	: >"$WORK/served-eight"
	# Long reading windows, so that every guest reads at the same time for a
	# while: fairness is judged on what each got in a window when all of them
	# were asking (the server's turn-taking, not which guest booted first).
	for i in $(seq "$GUESTS"); do
		B_OBSERVE=$EIGHT_OBSERVE boot "eight-$i" egd-kernel
		names="$names eight-$i"
	done
	for i in $names; do
		wait_for_line 'VMTEST hwrng-read .*bytes=[1-9]' "$(guest_limit "$GUESTS")" "$WORK/logs/$i.log" ||
			fail "eight: $i never read /dev/hwrng"
	done
	# the window: two copies of the metrics file (one write serves all clients)
	cp "$tmp/metrics" "$tmp/window-a" 2>/dev/null
	sleep "$EIGHT_WINDOW"
	cp "$tmp/metrics" "$tmp/window-b" 2>/dev/null
	for i in $names; do
		grep -qa '^VMTEST done' "$WORK/logs/$i.log" &&
			fail "eight: $i had stopped reading before the window ended (raise VM_EGD_EIGHT_OBSERVE)"
	done
	# shellcheck disable=SC2086
	wait_guests "$(( (TIMEOUT + EIGHT_OBSERVE + 40) * (1 + GUESTS / 2) ))" $names
	say "eight: $(($(date +%s) - t0)) s of host time"
	stop_sampler
	server_alive eight
	stop_server TERM
	table_head
	for i in $names; do
		check_guest "$i" eight
		pid=$(cat "$WORK/logs/$i.pid")
		a=$(served_in "$tmp/window-a" | awk -v p="$pid" '$1 == p { print $2 }')
		b=$(served_in "$tmp/window-b" | awk -v p="$pid" '$1 == p { print $2 }')
		d=$(( ${b:-0} - ${a:-0} ))
		echo "$d" >>"$WORK/window-eight"
		echo "$i: $d bytes served in the common window" >>"$tmp/window-lines"
	done
	read -r lo hi <<<"$(sort -n "$WORK/window-eight" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo + 0, hi + 0 }')"
	if [ "$lo" -gt 0 ] && awk -v a="$hi" -v b="$lo" 'BEGIN { exit !(a <= 2 * b) }'; then
		echo "eight: served per guest while all $GUESTS were reading (about ${EIGHT_WINDOW} s, between two writes of the metrics): $lo..$hi bytes, max/min $(awk -v a="$hi" -v b="$lo" 'BEGIN { printf "%.2f", a / b }') (within 2)" | tee -a "$results"
	else
		fail "eight: served per guest while all were reading $lo..$hi bytes: not within a factor of 2 ($(tr '\n' ';' <"$tmp/window-lines"))"
	fi
	read -r lo hi <<<"$(sort -n "$WORK/served-eight" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo + 0, hi + 0 }')"
	echo "eight: served per guest over its whole boot $lo..$hi bytes (each read as fast as its emulated CPU allowed for ${EIGHT_OBSERVE} s; not a fairness figure)" | tee -a "$results"
	echo "$GUESTS guests at once: $(($(date +%s) - t0)) s of host time" >>"$WORK/times"
}

# ---- restart ------------------------------------------------------------------------

# wait_for_line PATTERN LIMIT FILE...: until one of the files has a line
# matching PATTERN (0) or LIMIT host seconds passed (1).
wait_for_line() {
	local pat=$1 limit=$2 t0
	shift 2
	t0=$(date +%s)
	while [ $(($(date +%s) - t0)) -lt "$limit" ]; do
		grep -qa -- "$pat" "$@" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# hwrng_bytes NAME: the guest's latest count of bytes read from /dev/hwrng.
hwrng_bytes() {
	grep -a 'VMTEST hwrng-read' "$WORK/logs/$1.log" | tail -n 1 | tr -d '\r' |
		sed -n 's/.*bytes=\([0-9]*\).*/\1/p'
}

test_restart() {
	local t0 names="" logs=() i b0 b1 period rt ro stuck="" m0 m1
	# virtio-rng asks again for a request QEMU lost only when its rate period
	# ends: the boots wait that long, plus the usual time
	period=$(xml_get /rng/rate/@period); period=$(( (${period:-65536} + 999) / 1000 ))
	rt=$((TIMEOUT + period)); ro=$((period + 20))
	say "restart: $RGUESTS guests and an egd client; the server killed and restarted twice (virtio-rng period ${period} s)"
	start_server || return
	start_sampler
	# the client: a host rngfeed with the egd source in test mode (-t: reads,
	# tests, feeds nothing), its raw bytes in its metrics
	"$RNGFEED" -c /dev/null -f -v -n egd -O "egd:device=unix:$SOCK" --retry-delay 1 -t \
		--metrics "$tmp/client.metrics" --stats-interval 1 >/dev/null 2>"$tmp/client.log" </dev/null &
	client_pid=$!
	t0=$(date +%s)
	: >"$tmp/events"
	for i in $(seq "$RGUESTS"); do
		B_TIMEOUT=$rt B_OBSERVE=$ro boot "restart-$i" egd-kernel
		names="$names restart-$i"
		logs+=("$WORK/logs/restart-$i.log")
	done
	# 1: SIGKILL as the first /init starts (mid-boot, before virtio_rng loads):
	# the guests' first requests go nowhere
	if wait_for_line 'VMTEST case=' 120 "${logs[@]}"; then
		stop_server KILL
		echo "- SIGKILL at host +$(($(date +%s) - t0)) s (first /init started), restarted 3 s later" >>"$tmp/events"
		sleep 3
		start_server
	else
		fail "restart: no guest reached /init in 120 s"
	fi
	# 2: SIGTERM while every guest reads /dev/hwrng, restarted 2 s later
	for i in $names; do
		wait_for_line 'VMTEST hwrng-read .*bytes=[1-9]' "$(guest_limit "$RGUESTS")" "$WORK/logs/$i.log" ||
			fail "restart: $i never read /dev/hwrng after the first restart"
	done
	m0=$(client_raw)
	stop_server TERM
	echo "- SIGTERM at host +$(($(date +%s) - t0)) s (every guest reading /dev/hwrng), restarted 2 s later" >>"$tmp/events"
	sleep 2
	start_server
	for i in $names; do hwrng_bytes "$i" >"$tmp/$i.b0"; done
	# a guest whose request was lost reads on when virtio-rng's period ends
	# (or not: the timer runs once per stall, see egd-libvirt.xml); past that,
	# QEMU's monitor "stop" and "cont" make virtio-rng ask again
	sleep $((period + 5))
	for i in $names; do
		b0=$(cat "$tmp/$i.b0"); b1=$(hwrng_bytes "$i")
		if [ "${b1:-0}" -gt "${b0:-0}" ]; then
			echo "- $i: reading again after the second restart ($b0 -> $b1 bytes within $((period + 5)) s)" >>"$tmp/events"
		else
			echo "- $i: STALLED after the second restart ($b0 -> $b1 bytes in $((period + 5)) s); QEMU monitor stop + cont" >>"$tmp/events"
			stuck="$stuck $i"
			echo "$b1" >"$tmp/$i.b0"
			monitor "$i" stop
			sleep 1
			monitor "$i" cont
		fi
	done
	if [ -n "$stuck" ]; then
		sleep 4
		for i in $stuck; do
			b0=$(cat "$tmp/$i.b0"); b1=$(hwrng_bytes "$i")
			if [ "${b1:-0}" -gt "${b0:-0}" ]; then
				echo "- $i: reading again 4 s after stop + cont ($b0 -> $b1 bytes)" >>"$tmp/events"
			else
				fail "restart: $i still stalled after QEMU's stop + cont ($b0 -> $b1 bytes)"
			fi
		done
	fi
	m1=$(client_raw)
	# shellcheck disable=SC2086
	wait_guests "$(( (rt + ro + 40) * (1 + RGUESTS / 2) ))" $names
	say "restart: $(($(date +%s) - t0)) s of host time"
	kill -TERM "$client_pid"
	wait "$client_pid"
	echo "$?" >"$tmp/client.exit"
	client_pid=""
	stop_sampler
	server_alive restart
	stop_server TERM
	table_head
	for i in $names; do check_guest "$i" restart; done
	echo >>"$results"
	cat "$tmp/events" >>"$results"
	# the server's exits: SIGKILL 137, SIGTERM 0
	while read -r sig rc; do
		case $sig:$rc in KILL:137 | TERM:0) ;; *) fail "restart: the server stopped with SIG$sig exited $rc" ;; esac
	done <"$tmp/server.exits"
	grep -qiE 'segmentation|assert|abort|sanitizer' "$tmp/server.log" &&
		fail "restart: the server's log shows a crash: $(grep -iE 'segmentation|assert|abort|sanitizer' "$tmp/server.log" | head -n 2)"
	# the egd client: exit 0, reconnected, read after the second restart
	[ "$(cat "$tmp/client.exit")" = 0 ] || fail "restart: the egd client exited $(cat "$tmp/client.exit")"
	[ "$(grep -ac 'egd: opened' "$tmp/client.log")" -ge 3 ] ||
		fail "restart: the egd client did not reconnect after both restarts: $(grep -a 'egd:' "$tmp/client.log" | grep -v B/s | tail -n 3)"
	[ "${m1:-0}" -gt "${m0:-0}" ] ||
		fail "restart: the egd client read nothing after the second restart ($m0 -> $m1 raw bytes; $(grep -a 'egd:' "$tmp/client.log" | grep -v B/s | tail -n 2))"
	echo "- egd client (host rngfeed -t -n egd): $m0 raw bytes before the second stop, $m1 about $((period + 5)) s after the restart; $(grep -ac 'egd: opened' "$tmp/client.log") connections" >>"$results"
	cp "$tmp/client.log" "$WORK/logs/restart-client.log"
	cp "$tmp/server.log" "$WORK/logs/restart-server.log"
	echo "restart ($RGUESTS guests): $(($(date +%s) - t0)) s of host time" >>"$WORK/times"
}

# client_raw: raw bytes the restart test's egd client has read (its metrics).
client_raw() {
	sleep 1.5
	awk '/^rngfeed_source_raw_bytes_total\{source="egd"\}/ { print $NF }' "$tmp/client.metrics" 2>/dev/null
}

# ---- virtio: rngfeed in the guest ----------------------------------------------------

test_virtio() {
	local log=$WORK/logs/virtio-1.log passed failed
	say "virtio: rngfeed with the virtio source in the guest"
	start_server || return
	start_sampler
	boot virtio-1 egd-rngfeed
	wait_guests "$(guest_limit 1)" virtio-1
	stop_sampler
	server_alive virtio
	stop_server TERM
	grep -qa '^VMTEST done' "$log" || fail "virtio: the guest did not finish (see $log)"
	grep -qa 'VMTEST rngfeed running=yes' "$log" || fail "virtio: rngfeed was not running at the end: $(grep -a 'VMTEST rngfeed' "$log" | tail -n 3)"
	passed=$(grep -a 'VMTEST metric rngfeed_source_blocks_passed_total{source="virtio"}' "$log" | awk '{ print $NF }')
	failed=$(grep -a 'VMTEST metric rngfeed_source_blocks_failed_total{source="virtio"}' "$log" | awk '{ print $NF }')
	[ "${passed:-0}" -gt 0 ] || fail "virtio: no virtio block passed the health tests in the guest ($(grep -a 'VMTEST rngfeed' "$log" | tail -n 3))"
	[ "${failed:-1}" = 0 ] || fail "virtio: $failed virtio block(s) failed the health tests"
	echo "virtio: rngfeed -n virtio in the guest: ${passed:-0} blocks passed, ${failed:-?} failed in $OBSERVE s; served to that QEMU: $(served_by_pid | awk -v p="$(cat "$WORK/logs/virtio-1.pid")" '$1 == p { print $2 }') bytes" | tee -a "$results"
}

# ---- guest: the egd source in a guest ------------------------------------------------

test_guest() {
	local log=$WORK/logs/guest-1.log ready served
	say "guest: rngfeed in a guest with the egd source on the host socket, forwarded into it"
	start_server || return
	start_sampler
	B_NET=1 boot guest-1 egd-client
	wait_guests "$(guest_limit 1)" guest-1
	stop_sampler
	server_alive guest
	stop_server TERM
	ready=$(awk '/VMTEST waiter / { for (i = 3; i <= NF; i++) { split($i, kv, "="); w[kv[1]] = kv[2] } }
		END { if (w["ready"] == "" || w["ready"] == "none") print "none"; else printf "%.3f\n", w["ready"] - w["start"] }' "$log")
	served=$(served_by_pid | awk -v p="$(cat "$WORK/logs/guest-1.pid")" '$1 == p { print $2 }')
	grep -qa '^VMTEST done' "$log" || fail "guest: the guest did not finish (see $log)"
	grep -qa 'VMTEST log .*egd: opened EGD server at tcp:10.0.2.100:7000' "$log" ||
		fail "guest: rngfeed in the guest did not open the egd source: $(grep -a 'VMTEST log' "$log" | head -n 3)"
	case $ready in none | "") fail "guest: CRNG not ready within $TIMEOUT s of rngfeed's start" ;; esac
	[ "${served:-0}" -gt 0 ] || fail "guest: the server's metrics show nothing served to that QEMU"
	echo "guest: rngfeed -n egd (tcp:10.0.2.100:7000, QEMU guestfwd to the host socket, credit 768) in a guest without virtio-rng: CRNG ready ${ready} s after rngfeed's start; served to that QEMU: ${served:-0} bytes" | tee -a "$results"
}

# ---- client: a second host rngfeed ------------------------------------------------------

test_client() {
	local n
	say "client: a host rngfeed with the egd source"
	start_server || return
	n=$("$RNGFEED" -c /dev/null -n egd -O "egd:device=unix:$SOCK" --raw --bytes 100000 2>"$tmp/client1.log" | wc -c)
	[ "$n" = 100000 ] || fail "client: --raw --bytes 100000 from the egd source gave $n bytes: $(tail -n 2 "$tmp/client1.log")"
	server_alive client
	stop_server TERM
	echo "client: rngfeed -n egd --raw --bytes 100000 against the server: $n bytes" | tee -a "$results"
}

for t in $TESTS; do
	case $t in
	one | eight | restart | virtio | guest | client) "test_$t" ;;
	*) fail "unknown test $t" ;;
	esac
done

{
	echo
	echo "Host time: $(($(date +%s) - t_all0)) s in all."
	[ -f "$WORK/times" ] && sed 's/^/- /' "$WORK/times"
} >>"$results"
rm -f "$WORK/times"
cat "$results"
echo "logs: $WORK/logs/; table: $results"
if [ "$failures" -gt 0 ]; then
	echo "vm-test-egd: $failures assertion(s) failed"
	exit 1
fi
echo "vm-test-egd: passed"
