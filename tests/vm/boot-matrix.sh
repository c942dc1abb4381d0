#!/bin/bash
# tests/vm/boot-matrix.sh — whole-boot tests (make vm-test, make vm-test-smoke).
#
# Boots Debian 12's kernel under QEMU (software emulation) with a busybox initramfs
# once per case and round, with random.trust_cpu=off so that nothing but the program
# under test can make the kernel's CRNG ready, and measures guest seconds from the
# program's start to the first non-blocking getrandom() success ("ready") and to the
# kernel's "crng init done" line. Writes tests/vm/work/results.md.
#
# Environment: RNGFEED (default ./rngfeed), VM_SMOKE=1 (two boots, for CI),
# VM_ROUNDS (boots per case, default 3), VM_TIMEOUT (guest seconds per case, 20),
# VM_CASES (space-separated subset of the cases below), VM_CACHE (see fetch.sh),
# VM_WORK (default tests/vm/work).
# Exit status: 0 passed (or "SKIP: reason" printed), 1 an assertion failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
RNGFEED=${RNGFEED:-./rngfeed}
WORK=${VM_WORK:-$here/work}
TIMEOUT=${VM_TIMEOUT:-20}
if [ -n "${VM_SMOKE:-}" ]; then
	ROUNDS=${VM_ROUNDS:-1}
	CASES=${VM_CASES:-"rngfeed-rdrand nosource"}
else
	ROUNDS=${VM_ROUNDS:-3}
	CASES=${VM_CASES:-"none rngfeed-rdrand minfeed-rdrand rngd-rdrand
		rngfeed-tpm rngfeed-hwrng minfeed-hwrng rngd-hwrng rngd-tpm
		virtio-kernel nosource nosource-wait"}
fi
CASES=$(echo $CASES)

skip() { echo "SKIP: vm-test: $*"; exit 0; }
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

command -v qemu-system-x86_64 >/dev/null ||
	skip "qemu-system-x86_64 is not installed (Debian: qemu-system-x86)"
[ -x "$RNGFEED" ] || { echo "FAIL: $RNGFEED is not built (make rngfeed)"; exit 1; }
fetched=$("$here/fetch.sh") || skip "could not fetch a kernel and busybox (fetch.sh says why above)"
eval "$fetched"
have_swtpm=1
command -v swtpm >/dev/null || have_swtpm=0

mkdir -p "$WORK/logs"
rm -f "$WORK"/logs/*.log
initrd=$WORK/initrd.cpio
RNGFEED=$RNGFEED "$here/mkinitrd.sh" "$initrd" || { echo "FAIL: cannot build the initramfs"; exit 1; }

# ---- one boot ------------------------------------------------------------------------

tpm_pid=""
tpm_dir=$WORK/tpm
stop_swtpm() {
	if [ -n "$tpm_pid" ]; then
		kill "$tpm_pid" 2>/dev/null
		wait "$tpm_pid" 2>/dev/null
		tpm_pid=""
	fi
}
trap 'stop_swtpm' EXIT
trap 'stop_swtpm; exit 130' INT TERM

# A fresh software TPM for one boot; QEMU talks to it over $tpm_dir/sock.
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

# boot CASE ROUND: writes $WORK/logs/CASE-ROUND.log
boot() {
	local c=$1 r=$2 cpu=max
	local -a dev=()
	case $c in
	*tpm | *hwrng)
		start_swtpm || { echo "swtpm did not start" >"$WORK/logs/$c-$r.log"; return; }
		dev=(-chardev "socket,id=chrtpm,path=$tpm_dir/sock"
		     -tpmdev emulator,id=tpm0,chardev=chrtpm -device tpm-tis,tpmdev=tpm0) ;;
	virtio-*) dev=(-device virtio-rng-pci) ;;
	nosource*) cpu=qemu64,-rdrand,-rdseed ;;
	esac
	# The host-side limit: the guest powers itself off within TIMEOUT+15 s of /init,
	# and /init starts 2-3 s into a boot that takes 6-9 s of host time.
	timeout -k 5 $((TIMEOUT + 90)) qemu-system-x86_64 -accel tcg -cpu "$cpu" -m 512 \
		-nographic -no-reboot -nic none "${dev[@]}" \
		-kernel "$VM_VMLINUZ" -initrd "$initrd" \
		-append "console=ttyS0 random.trust_cpu=off random.trust_bootloader=off quiet vmtest.case=$c vmtest.timeout=$TIMEOUT" \
		</dev/null >"$WORK/logs/$c-$r.log" 2>&1
	echo "qemu-exit=$?" >>"$WORK/logs/$c-$r.log"
	stop_swtpm
}

# One line per boot: case round done ready crng exit exit_after cpu cpu1 waited nomsg
# (times in seconds from the command's start; "none" never, "-" not reported).
parse() {
	awk -v c="$1" -v r="$2" '
	function stamp(s) { sub(/^[^[]*\[ */, "", s); sub(/\].*/, "", s); return s + 0 }
	/VMTEST waiter / { for (i = 3; i <= NF; i++) { split($i, kv, "="); w[kv[1]] = kv[2] } }
	/VMTEST kmsg .*vmtest: start/ { ks = stamp($0) }
	/VMTEST kmsg .*crng init done/ { kc = stamp($0) }
	/^VMTEST done/ { done = 1 }
	/VMTEST log .*no usable entropy source/ { nomsg = 1 }
	END {
		ready = "-"
		if ("ready" in w) ready = w["ready"] == "none" ? "none" : sprintf("%.4f", w["ready"] - w["start"])
		crng = ks == "" ? "-" : kc == "" ? "none" : sprintf("%.4f", kc - ks)
		printf "%s %s %d %s %s %s %s %s %s %s %d\n", c, r, done, ready, crng,
			("exit" in w) ? w["exit"] : "-", ("exit_after" in w) ? w["exit_after"] : "-",
			("cpu" in w) ? w["cpu"] : "-", ("cpu1" in w) ? w["cpu1"] : "-",
			("waited" in w) ? w["waited"] : "-", nomsg
	}' "$WORK/logs/$1-$2.log"
}

# ---- the boots: rounds outermost, so load on the host hits every case alike ----------

runs=$WORK/runs.txt
: >"$runs"
t0=$(date +%s)
echo "vm-test: kernel $VM_KVER, $ROUNDS round(s) of: $CASES"
for r in $(seq "$ROUNDS"); do
	for c in $CASES; do
		case $c in
		*tpm | *hwrng) if [ $have_swtpm = 0 ]; then continue; fi ;;
		esac
		boot "$c" "$r"
		line=$(parse "$c" "$r")
		echo "  $line"
		echo "$line" >>"$runs"
	done
done
t1=$(date +%s)
[ $have_swtpm = 1 ] || echo "SKIP: vm-test: TPM and hwrng cases: swtpm is not installed (Debian: swtpm)"

# ---- summary --------------------------------------------------------------------------

# stats CASE FIELD: "median min max n_ready n_boots" in ms over the boots' numeric values
stats() {
	awk -v c="$1" -v f="$2" '$1 == c { n++; if ($f != "none" && $f != "-") print $f * 1000 }
		END { print "#", n + 0 }' "$runs" |
	sort -g | awk '/^#/ { n = $2; next } { v[k++] = $1 }
		END {
			if (k == 0) { print "- - - 0", n; exit }
			m = k % 2 ? v[int(k / 2)] : (v[k / 2 - 1] + v[k / 2]) / 2
			printf "%.0f %.0f %.0f %d %d\n", m, v[0], v[k - 1], k, n
		}'
}
median_ms() { stats "$1" "$2" | awk '{ print $1 }'; }

# field numbers in runs.txt
F_DONE=3 F_READY=4 F_CRNG=5

table=$WORK/results.md
{
	echo "## Whole-boot results ($(date -u +%Y-%m-%dT%H:%MZ))"
	echo
	echo "Kernel $VM_KVER under $(qemu-system-x86_64 --version | head -n 1 | sed 's/ (.*//'), \`-accel tcg\`,"
	echo "\`random.trust_cpu=off\`; guest milliseconds from the program's start to the first non-blocking"
	echo "\`getrandom()\` success (ready) and to the kernel's \`crng init done\`; rounds: $ROUNDS."
	echo
	echo "| case | boots | ready: median | ready: min–max | crng init done: median | crng: min–max |"
	echo "|---|---|---|---|---|---|"
	for c in $CASES; do
		grep -q "^$c " "$runs" || continue
		read -r rm rlo rhi rk rn <<<"$(stats "$c" $F_READY)"
		read -r cm clo chi ck _ <<<"$(stats "$c" $F_CRNG)"
		rk_note=""; [ "$rk" = "$rn" ] || rk_note=" ($rk of $rn ready)"
		ck_note=""; [ "$ck" = "$rn" ] || ck_note=" ($ck of $rn)"
		if [ "$rk" = 0 ]; then rcol="never | –"; else rcol="$rm$rk_note | $rlo–$rhi"; fi
		if [ "$ck" = 0 ]; then ccol="never | –"; else ccol="$cm$ck_note | $clo–$chi"; fi
		echo "| $c | $rn | $rcol | $ccol |"
	done
} >"$table"

# ---- assertions (generous bounds only) ------------------------------------------------

while read -r c r done ready crng ex exa cpu cpu1 waited nomsg; do
	[ "$done" = 1 ] || fail "$c boot $r did not finish (no 'VMTEST done'; see $WORK/logs/$c-$r.log)"
	case $c in
	none)
		[ "$ready" = none ] || fail "none boot $r: CRNG ready after $ready s with no daemon (trust_cpu=off ignored?)"
		[ "$crng" = none ] || fail "none boot $r: 'crng init done' after $crng s with no daemon" ;;
	rngfeed-*)
		case $ready in none | -) fail "$c boot $r: CRNG not ready within $TIMEOUT s (exit=$ex)" ;; esac ;;
	nosource)
		[ "$ex" = 1 ] || fail "nosource boot $r: rngfeed exit status $ex, want 1"
		[ "$nomsg" = 1 ] || fail "nosource boot $r: no 'no usable entropy source' message"
		awk -v t="$exa" 'BEGIN { exit !(t != "-" && t + 0 < 5) }' ||
			fail "nosource boot $r: rngfeed took $exa s to exit (want < 5 s)" ;;
	nosource-wait)
		[ "$ex" = running ] || fail "nosource-wait boot $r: rngfeed did not keep waiting (exit=$ex)"
		# CPU after the first second, per second: a waiting daemon should be idle
		awk -v a="$cpu" -v b="$cpu1" -v w="$waited" \
			'BEGIN { exit !(b != "-" && w > 1 && (a - b) / (w - 1) < 0.05) }' ||
			fail "nosource-wait boot $r: rngfeed used $cpu s CPU ($cpu1 s in its first second) over $waited s while waiting: spinning?" ;;
	esac
done <"$runs"

for c in rngfeed-rdrand rngfeed-tpm rngfeed-hwrng; do
	grep -q "^$c " "$runs" || continue
	m=$(median_ms "$c" $F_READY)
	awk -v m="$m" 'BEGIN { exit !(m != "-" && m < 2000) }' ||
		fail "$c: median time to ready $m ms, want < 2000 ms"
done

# ---- targets: reported, not asserted ---------------------------------------------------

# target NAME RNGFEED_CASE OTHER_CASE SLACK_MS: met when rngfeed's median is below
# the other's median plus SLACK (and the other was ever ready at all)
target() {
	local a b
	grep -q "^$2 " "$runs" && grep -q "^$3 " "$runs" || return 0
	a=$(median_ms "$2" $F_READY); b=$(median_ms "$3" $F_READY)
	if [ "$a" = - ]; then
		echo "| $1 | $2 never ready | MISSED |"
	elif [ "$b" = - ]; then
		echo "| $1 | $2 $a ms; $3 never ready | met |"
	elif awk -v a="$a" -v b="$b" -v s="$4" 'BEGIN { exit !(a < b + s) }'; then
		echo "| $1 | $2 $a ms vs $3 $b ms | met |"
	else
		echo "| $1 | $2 $a ms vs $3 $b ms | MISSED |"
	fi
}
{
	echo
	echo "| target (median ready times) | measured | |"
	echo "|---|---|---|"
	target "rdrand: within 30 ms of the minimal feeder" rngfeed-rdrand minfeed-rdrand 30
	target "hwrng: within 30 ms of the minimal feeder" rngfeed-hwrng minfeed-hwrng 30
	target "tpm: within 30 ms of the minimal feeder (on the TPM's /dev/hwrng)" rngfeed-tpm minfeed-hwrng 30
	target "rdrand: faster than rngd" rngfeed-rdrand rngd-rdrand 0
	target "hwrng: faster than rngd" rngfeed-hwrng rngd-hwrng 0
	target "tpm: faster than rngd" rngfeed-tpm rngd-tpm 0
	echo
	echo "Boots took $((t1 - t0)) s of host time."
} >>"$table"

cat "$table"
if grep -q "^rngd-tpm " "$runs"; then
	echo
	echo "rngd with only its TPM source (-d 1, no hwrng), first boot:"
	grep -E 'VMTEST (waiter|log)' "$WORK/logs/rngd-tpm-1.log" | sed 's/^/  /'
fi
echo "logs: $WORK/logs/; table: $table"
if [ "$failures" -gt 0 ]; then
	echo "vm-test: $failures assertion(s) failed"
	exit 1
fi
echo "vm-test: passed"
