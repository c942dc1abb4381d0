#!/bin/bash
# tests/vm/hotplug-boot.sh — issue 26's whole-VM test (make vm-test-hotplug): hw_random
# devices that arrive after rngfeed, two devices, PCI hot-unplug and hot-plug, strict
# mode and the fill watermark, on Debian 11's 5.10, Debian 12's 6.1 and Debian 13's
# 6.12 (named linux-5.10, linux-6.1, linux-6.12 in the output). Ends with
# "N passed, N failed"; exit 1 if any failed. Not in CI (see docs/early-boot-hotplug.md
# for how long it takes); VM_SMOKE=1 (make vm-test-hotplug-smoke) boots only
# linux-6.12's reference and its stuck late device.
#
# Each boot: busybox initramfs (mkinitrd.sh with VM_INIT=hotplug-init.sh), QEMU TCG with
# the icount clock (guest time = 1 ns per instruction, so figures do not depend on the
# host's load), -cpu qemu64 (no RDRAND/RDSEED: hw_random devices are the only
# sources), random.trust_cpu=off, and a kprobe on add_hwgenerator_randomness from boot
# (every call the kernel's hw_random thread makes, with the bits it credits); the
# guest adds kprobes on hwrng_register/hwrng_unregister, rng_quality_store and
# param_attr_store (the writes to rng_quality and, before 5.18, current_quality) and
# random_ioctl. The host judges the trace:
#   a credit   = a call with bits > 0; the one the kernel makes at a device's
#                registration (within 50 ms of hwrng_register) is allowed, except in
#                strict mode (rng_core.default_quality=0); no other credit after
#                rngfeed has seen the device.
#   hand-over  = rngfeed writes 0 to rng_quality (current_quality on 5.10) within 1 s
#                of a device's registration.
#   at the end = after SIGTERM (gone within 1 s) the current device's quality is the
#                one it had without rngfeed (the "alone" boot of the same kernel, or
#                the value read in the same boot before rngfeed started).
#
# Environment: VM_KERNELS (default "5.10 6.1 6.12"), VM_TIMEOUT (guest seconds to wait
# for an event, default 15), VM_OBSERVE (seconds sampled after each step, default 4),
# RNGFEED (default ./rngfeed), VM_WORK (default tests/vm/work; this test uses
# VM_WORK/hotplug), VM_SMOKE.
set -u

here=$(cd "$(dirname "$0")" && pwd)
RNGFEED=${RNGFEED:-./rngfeed}
WORK=${VM_WORK:-$here/work}/hotplug
KERNELS=${VM_KERNELS:-"5.10 6.1 6.12"}
TIMEOUT=${VM_TIMEOUT:-15}
OBSERVE=${VM_OBSERVE:-4}
WATERMARK=3072
KPROBE='trace_clock=global kprobe_event=p:hwr,add_hwgenerator_randomness,len=%si:u32,ent=%dx:u32'
[ -n "${VM_SMOKE:-}" ] && KERNELS=${VM_KERNELS:-6.12}

skip() { echo "SKIP: hotplug-boot: $*"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed (Debian: qemu-system-x86)"
command -v swtpm >/dev/null || skip "swtpm is not installed (Debian: swtpm)"
command -v python3 >/dev/null || skip "python3 is not installed (it talks to QEMU's monitor)"
[ -x "$RNGFEED" ] || { echo "FAIL: $RNGFEED is not built (make rngfeed)"; exit 1; }
base=$("$here/fetch.sh") || skip "fetch.sh could not fetch the 6.1 kernel and busybox"
eval "$base"
mkdir -p "$WORK"
rm -f "$WORK"/*.log "$WORK"/results.txt
started=$(date +%s)
passed=0
failed=0
skipped=0

# ---- QEMU helpers ----------------------------------------------------------------------
tpm_pid=""
qemu_pid=""
tpm_dir=$WORK/tpm
cleanup() {
	[ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null
	[ -n "$tpm_pid" ] && kill "$tpm_pid" 2>/dev/null
	wait 2>/dev/null
	qemu_pid=""; tpm_pid=""
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT
trap '[ "$BASHPID" != $$ ] || cleanup; exit 130' INT TERM

start_swtpm() {
	rm -rf "$tpm_dir"
	mkdir -p "$tpm_dir/state"
	swtpm socket --tpm2 --ctrl type=unixio,path="$tpm_dir/sock" \
		--tpmstate dir="$tpm_dir/state" --flags not-need-init,startup-clear \
		>"$tpm_dir/swtpm.log" 2>&1 &
	tpm_pid=$!
	for _ in $(seq 50); do
		[ -S "$tpm_dir/sock" ] && return 0
		sleep 0.1
	done
	return 1
}

# one human monitor command to QEMU's monitor socket $1
monitor() {
	python3 - "$1" "$2" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
time.sleep(0.3)
s.sendall((sys.argv[2] + "\n").encode())
time.sleep(0.5)
s.close()
EOF
}

# boot KERNEL CASE BACKEND EXTRA-APPEND: writes $WORK/linux-KERNEL-CASE.log
boot() {
	local k=$1 c=$2 backend=$3 extra=$4 gcase=$2 log=$WORK/linux-$1-$2.log
	local mon=$WORK/mon.sock dev=()
	case $c in late-*) gcase=late ;; esac
	rm -f "$mon"
	# shellcheck disable=SC2054  # the commas are QEMU's
	dev=(-object "rng-random,id=rng0,filename=$backend" -device virtio-rng-pci,rng=rng0,id=vr0)
	if [ "$c" = two ]; then
		start_swtpm || { echo "swtpm did not start" >"$log"; return; }
		# shellcheck disable=SC2054
		dev+=(-chardev "socket,id=chrtpm,path=$tpm_dir/sock"
		      -tpmdev emulator,id=tpm0,chardev=chrtpm -device tpm-tis,tpmdev=tpm0)
	fi
	# shellcheck disable=SC2054
	[ "$c" = hotplug ] && dev+=(-object rng-random,id=rng1,filename=/dev/urandom)
	local t0; t0=$(date +%s)
	nice -n 5 timeout -k 5 $((TIMEOUT * 20 + 600)) qemu-system-x86_64 -accel tcg -icount shift=0 \
		-cpu qemu64 -m 512 -nographic -no-reboot -nic none \
		-monitor "unix:$mon,server,nowait" "${dev[@]}" \
		-kernel "$VM_VMLINUZ" -initrd "$initrd" \
		-append "console=ttyS0 random.trust_cpu=off random.trust_bootloader=off quiet $KPROBE $extra vmtest.case=$gcase vmtest.timeout=$TIMEOUT vmtest.observe=$OBSERVE vmtest.watermark=$WATERMARK" \
		</dev/null >"$log" 2>&1 &
	qemu_pid=$!
	if [ "$c" = hotplug ]; then
		local step=del
		while kill -0 "$qemu_pid" 2>/dev/null; do
			if [ $step = del ] && grep -q '^VMTEST want device_del' "$log"; then
				monitor "$mon" "device_del vr0"; step=add
			elif [ $step = add ] && grep -q '^VMTEST want device_add' "$log"; then
				monitor "$mon" "device_add virtio-rng-pci,rng=rng1,id=vr1"; step=done
			fi
			sleep 0.5
		done
	fi
	wait "$qemu_pid"
	echo "VMHOST qemu-exit=$? host-seconds=$(( $(date +%s) - t0 ))" >>"$log"
	qemu_pid=""
	if [ -n "$tpm_pid" ]; then kill "$tpm_pid" 2>/dev/null; wait "$tpm_pid" 2>/dev/null; tpm_pid=""; fi
}

# ---- judging one boot ------------------------------------------------------------------
# analyse KERNEL CASE REF-QUALITY: "PASS: ..." / "FAIL: ..." / "INFO: ..." lines
analyse() {
	awk -v k="linux-$1" -v c="$2" -v ref="$3" -v wm="$WATERMARK" '
	function stamp(s) { sub(/^[^[]*\[ */, "", s); sub(/\].*/, "", s); return s + 0 }
	function verdict(ok, what) { printf "%s: %s %s: %s\n", ok ? "PASS" : "FAIL", k, c, what }
	function info(what) { printf "INFO: %s %s: %s\n", k, c, what }
	function field(s, key,   m) { m = s; if (!sub(".* " key "=", "", m)) return ""; sub(/ .*/, "", m); return m }
	{ sub(/\r$/, "") }  # the serial console ends lines with CR LF
	/^VMTEST kmsg .*vmtest: load/ { kload = stamp($0) }
	/^VMTEST kmsg .*crng init done/ && kready == "" { kready = stamp($0) }
	/^VMTEST done/ { done = 1 }
	/^VMTEST guest-watchdog/ { watchdog = 1 }
	/^VMTEST error/ { errors = errors " [" substr($0, 14) "]" }
	/^VMTEST kprobe unavailable/ { noprobe = noprobe " " $5 }
	/^VMTEST sample / {
		n = $3; sq[n] = field($0, "quality"); scq[n] = field($0, "cq"); scur[n] = field($0, "current")
		sav[n] = field($0, "avail") + 0; pool = field($0, "pool") + 0; sfeed[n] = field($0, "rngfeed"); order[++ns] = n
	}
	/^VMTEST stop / { stopsent = field($0, "sent"); stopgone = field($0, "gone"); still = field($0, "still") }
	/^VMTEST drain / { drains = drains " " $3 "/" $4 }
	/^VMTEST blocking-read start/ { bstart = field($0, "up") }
	/^VMTEST blocking-read done/ { bdone = field($0, "up") }
	/^VMTEST notready/ { notready++ }
	/^VMTEST rngfeed .*: using it/ { u = $0; sub(/.*rngfeed: /, "", u); sub(/: using it.*/, "", u); using[u] = 1 }
	/^VMTEST rngfeed .*not handed back/ { notback = 1 }
	# the stop summary: a source whose passed blocks carried credit
	/^VMTEST rngfeed rngfeed: +[a-z0-9-]+: [0-9]+ raw bytes, [0-9]+ blocks? passed/ {
		u = $0; sub(/.*rngfeed: +/, "", u); pb = u; sub(/:.*/, "", u)
		sub(/.* raw bytes, /, "", pb); sub(/ .*/, "", pb); if (pb + 0 > 0) credited[u] = 1
	}
	/^VMTEST rngfeed / { if (tolower($0) ~ /fail|stuck/ && $0 ~ /hwrng|virtio|hw_random/) failmsg++ }
	/^VMTEST trace / {
		if (!match($0, /[0-9]+\.[0-9]+: /)) next
		t = substr($0, RSTART, RLENGTH - 2) + 0
		rest = substr($0, RSTART + RLENGTH); ev = rest; sub(/:.*/, "", ev)
		pre = substr($0, 14, RSTART - 14); comm = pre; sub(/^ +/, "", comm); sub(/-[0-9]+ .*/, "", comm)
		if (rest ~ /vmtest: /) { m = rest; sub(/.*vmtest: /, "", m); mark[m] = t; next }
		v = rest; sub(/.*(val|name|cmd|ent)=/, "", v); gsub(/"/, "", v); sub(/[ \\].*/, "", v)
		if (ev == "hwr") { if (v + 0 > 0) { nc++; ct[nc] = t; cb[nc] = v + 0 } else zeros++ }
		else if (ev == "hwreg") { nr++; rt[nr] = t; rn[nr] = v }
		else if (ev == "hwunreg") { nu++; ut[nu] = t; un[nu] = v }
		else if (ev == "rqs" || ev == "pas") { nw++; wt[nw] = t; wv[nw] = v; wc[nw] = comm }
		else if (ev == "rio" && comm ~ /rngfeed/) { nio++; it[nio] = t }
	}
	END {
		if (!done) { verdict(0, "the guest did not finish" (watchdog ? " (its watchdog fired)" : "") errors); exit }
		if (errors != "") verdict(0, "guest errors:" errors)
		if (noprobe != "") info("kprobes not set:" noprobe)
		strict = (c ~ /^strict/)
		feeding = (c != "alone" && c != "strict-alone")
		tfeed = ("rngfeed start" in mark) ? mark["rngfeed start"] : -1
		# credits: each allowed only as a registration credit (within 50 ms of a
		# hwrng_register, not in strict mode) or before rngfeed saw the devices
		# that were there when it started (two, watermark: its first hand-over)
		tgate = -1
		for (i = 1; i <= nw; i++) if (wv[i] == "0" && wc[i] ~ /rngfeed/ && wt[i] > tfeed) { tgate = wt[i]; break }
		bad = 0; regc = 0; list = ""
		for (i = 1; i <= nc; i++) {
			reg = 0
			for (j = 1; j <= nr; j++) if (ct[i] >= rt[j] && ct[i] - rt[j] < 0.05) reg = 1
			list = list sprintf(" %.3f/%d%s", ct[i], cb[i], reg ? "(reg)" : "")
			if (!feeding) continue
			if (reg && !strict) { regc++; continue }
			if (tfeed < 0 || ct[i] < tfeed) continue
			if ((c == "two" || c == "watermark") && (tgate < 0 || ct[i] < tgate) && ct[i] < tfeed + 1.0) continue
			bad++
		}
		info(sprintf("kernel credits (s/bits):%s; zero-bit calls %d; devices registered %d, left %d", list == "" ? " none" : list, zeros, nr, nu))
		if (feeding)
			verdict(bad == 0, sprintf("kernel credits outside registration after rngfeed saw the device: %d (registration credits %d%s)", bad, regc, strict ? ", none allowed in strict mode" : ""))
		# hand-over within 1 s of each device that registered after rngfeed started
		# /dev/hwrng reads the current device, which the virtio source also reads
		# through /dev/hwrng: both crediting is one device credited twice
		if (feeding)
			verdict(!(credited["hwrng"] && credited["virtio"]), sprintf("one device, one credit: hwrng and virtio %s", credited["hwrng"] && credited["virtio"] ? "both credited passed blocks (twins)" : "not both credited"))
		# strict mode: nothing to hand over, the kernel set 0 itself; it stays 0
		if (c == "strict") {
			z = 1; for (i = 1; i <= ns; i++) if (order[i] ~ /^o[0-9]/ && sq[order[i]] != "0") z = 0
			verdict(z, "rng_quality 0 (strict mode) while rngfeed runs")
		} else if (feeding && c != "two" && c != "watermark") {
			for (j = 1; j <= nr; j++) {
				if (rt[j] < tfeed) continue
				d = -1
				for (i = 1; i <= nw; i++) if (wv[i] == "0" && wc[i] ~ /rngfeed/ && wt[i] >= rt[j]) { d = wt[i] - rt[j]; break }
				verdict(d >= 0 && d <= 1.0, sprintf("%s (registered at %.3f s) handed over %s after it registered", rn[j], rt[j], d < 0 ? "never" : sprintf("%.2f ms", d * 1000)))
			}
		}
		if (c == "two" || c == "watermark")
			verdict(tgate >= 0, tgate < 0 ? "rngfeed never took the kernel credit over" : sprintf("hand-over %.3f s after rngfeed started", tgate - tfeed))
		wl = ""; for (i = 1; i <= nw; i++) wl = wl sprintf(" %.3f:%s=%s", wt[i], wc[i], wv[i])
		info("quality writes:" (wl == "" ? " none" : wl))
		# CRNG
		if (kready != "" && kload != "" && kready >= kload) info(sprintf("CRNG ready %.3f s after the device was loaded", kready - kload))
		else if (kready != "") info(sprintf("CRNG ready at %.3f s, before the device was loaded (a device present at boot)", kready))
		if (c == "strict-alone") {
			info(sprintf("not ready from interrupts within the wait: %s; blocking read %s -> %s", notready ? "yes" : "no", bstart, bdone))
			verdict(kready != "", "the CRNG becomes ready without rngfeed (kernel sources" (bstart != "" ? ", after a blocking read starts its jitter entropy)" : ")"))
		} else if (c == "late-stuck")
			# zeros are the only input: ready only if something credited them
			info(kready == "" ? "CRNG not ready: the only device gives zeros (nothing credited them)" : nc ? "CRNG ready (from the registration credit of zeros)" : "CRNG ready with no hw_random credit (the kernel'"'"'s own sources, e.g. interrupts)")
		else if (feeding) verdict(kready != "", "CRNG ready")
		if (!feeding) { info(sprintf("the kernel alone: current %s, rng_quality %s, current_quality %s", scur[order[ns]], sq[order[ns]], scq[order[ns]])); exit }
		# rngfeed kept running and stopped on SIGTERM within 1 s
		alive = 1
		for (i = 1; i <= ns; i++) { n = order[i]; if (n != "boot" && n != "pre1" && n != "pre2" && n != "loaded" && n != "end" && n !~ /^after-/ && sfeed[n] == "no" && alive) { alive = 0; died = n } }
		verdict(alive, alive ? "rngfeed ran to the stop" : "rngfeed was not running at sample " died)
		if (stopsent == "") verdict(0, "SIGTERM: rngfeed was not running at the stop")
		else verdict(still == "no" && stopgone - stopsent <= 1.0, sprintf("SIGTERM: gone after %.2f s", stopgone - stopsent))
		if (c == "late-stuck") info(sprintf("rngfeed log lines about a failed device: %d", failmsg))
		# twins and the current device (two devices)
		if (c == "two") {
			cur = scur["fed"]; same = 1
			for (i = 1; i <= ns; i++) { n = order[i]; if (n ~ /^o[0-9]/ && scur[n] != cur) same = 0 }
			verdict(same, "current device stays " cur " while rngfeed runs")
			u = ""; for (x in using) u = u " " x
			twin = (cur ~ /^tpm/ && using["tpm"] && using["hwrng"]) || (cur ~ /^virtio/ && using["virtio"] && using["hwrng"])
			verdict(!twin, "one physical source, one credit (sources in use:" u ")")
			if (scur["end"] == scur["pre1"]) ref = (k == "linux-5.10" ? scq["pre1"] : sq["pre1"])
			else if (scur["end"] == scur["pre2"]) ref = (k == "linux-5.10" ? scq["pre2"] : sq["pre2"])
			for (i = 1; i <= ns; i++) if (order[i] ~ /^after-/) info(sprintf("%s: quality %s current_quality %s", order[i], sq[order[i]], scq[order[i]]))
		}
		endq = (k == "linux-5.10") ? scq["end"] : sq["end"]
		# a device that failed its tests for good is not handed back (README,
		# Reliability): its quality stays 0 after the stop, and rngfeed says so
		if (c == "late-stuck")
			verdict(endq == "0" && notback, sprintf("%s at the end: %s on %s, %s (the failed device is not handed back; without rngfeed: %s)", k == "linux-5.10" ? "current_quality" : "rng_quality", endq, scur["end"], notback ? "and rngfeed says so" : "rngfeed did not say it leaves it at 0", ref))
		else verdict(ref != "" && endq == ref, sprintf("%s at the end: %s (without rngfeed: %s) on %s", k == "linux-5.10" ? "current_quality" : "rng_quality", endq, ref == "" ? "unknown" : ref, scur["end"]))
		# Debian 11 kernels from 5.10.119 on carry the 5.18 random.c (a 256-bit
		# pool that ignores write_wakeup_threshold): nothing to show there
		if (c == "watermark" && pool < 4096)
			printf "SKIP: %s %s: the fill watermark needs the pre-5.18 4096-bit pool; this kernel'"'"'s pool is %d bits (random.c of 5.18 backported to 5.10.119+), entropy_avail stays at most %d\n", k, c, pool, pool
		else if (c == "watermark") {
			info(sprintf("entropy_avail: filled %d, drains (before/after):%s, refilled %d and %d", sav["filled"], drains, sav["refilled1"], sav["refilled2"]))
			verdict(sav["filled"] >= wm, sprintf("fed up to -W %d: entropy_avail %d", wm, sav["filled"]))
			q = 0; for (i = 1; i <= nio; i++) if (it[i] > mark["quiet"] && it[i] < mark["quiet end"]) q++
			verdict(q <= 1, sprintf("stops above -W: %d feeds in the %.1f s above it", q, mark["quiet end"] - mark["quiet"]))
			for (r = 1; r <= 2; r++) {
				f = 0; for (i = 1; i <= nio; i++) if (it[i] > mark["drain " r] && it[i] <= mark["refilled " r]) f++
				verdict(f > 0 && sav["refilled" r] >= wm, sprintf("drain %d: resumed with %d feeds, entropy_avail %d after %.2f s", r, f, sav["refilled" r], mark["refilled " r] - mark["drain " r]))
			}
		}
	}' "$WORK/linux-$1-$2.log"
}

# reference quality for KERNEL CASE: the last sample of the boot without rngfeed
# (strict-alone for strict, alone for the others), as the kernel set it
refq() {
	local f=$WORK/linux-$1-alone.log
	[ "$2" = strict ] && f=$WORK/linux-$1-strict-alone.log
	awk -v k="$1" '{ sub(/\r$/, "") } /^VMTEST sample / && $3 != "boot" { for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
		END { print (k == "5.10" ? v["cq"] : v["quality"]) }' "$f" 2>/dev/null
}

run() {
	local k=$1 c=$2 backend=$3 extra=$4 out
	boot "$k" "$c" "$backend" "$extra"
	out=$(analyse "$k" "$c" "$(refq "$k" "$c")")
	echo "$out" | tee -a "$WORK/results.txt"
	echo "  (log: $WORK/linux-$k-$c.log; $(tail -n 1 "$WORK/linux-$k-$c.log"))"
	skipped=$((skipped + $(echo "$out" | grep -c '^SKIP')))
	passed=$((passed + $(echo "$out" | grep -c '^PASS')))
	failed=$((failed + $(echo "$out" | grep -c '^FAIL')))
}

for k in $KERNELS; do
	case $k in
	6.1) eval "$base"; extra_mods="" ;;
	6.12) kv=$("$here/fetch-kernel.sh" trixie) || { echo "FAIL: linux-6.12: no Debian 13 kernel"; failed=$((failed + 1)); continue; }
	      eval "$kv"; extra_mods="" ;;
	5.10) kv=$("$here/fetch-kernel.sh" bullseye) || { echo "FAIL: linux-5.10: no Debian 11 kernel"; failed=$((failed + 1)); continue; }
	      eval "$kv"; extra_mods="rng-core tpm_tis" ;;
	*) echo "FAIL: unknown kernel $k"; failed=$((failed + 1)); continue ;;
	esac
	initrd=$WORK/initrd-$k.cpio
	cc -static -O2 -Wall -Wextra -Werror -o "$WORK/hotplug-drain" "$here/hotplug-drain.c" ||
		{ echo "FAIL: cannot build hotplug-drain"; exit 1; }
	VM_INIT=$here/hotplug-init.sh VM_EXTRA_MODULES=$extra_mods VM_EXTRA_BINS=$WORK/hotplug-drain \
		RNGFEED=$RNGFEED "$here/mkinitrd.sh" "$initrd" >/dev/null 2>&1 ||
		{ echo "FAIL: linux-$k: cannot build the initramfs"; failed=$((failed + 1)); continue; }
	echo "== linux-$k ($VM_KVER)"
	run "$k" alone /dev/urandom ""
	run "$k" late-stuck /dev/zero ""
	[ -n "${VM_SMOKE:-}" ] && continue
	run "$k" late-healthy /dev/urandom ""
	run "$k" two /dev/urandom ""
	run "$k" hotplug /dev/urandom ""
	if [ "$k" = 6.12 ]; then
		run "$k" strict-alone /dev/urandom "rng_core.default_quality=0"
		run "$k" strict /dev/urandom "rng_core.default_quality=0"
	fi
	[ "$k" = 5.10 ] && run "$k" watermark /dev/urandom ""
done

echo "hotplug-boot: $(( $(date +%s) - started )) s of host time"
[ "$skipped" != 0 ] && echo "($skipped checks skipped, each with its reason above)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
