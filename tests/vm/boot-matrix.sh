#!/bin/bash
# tests/vm/boot-matrix.sh — whole-boot tests (make vm-test, make vm-test-smoke).
#
# Boots Debian 12's kernel under QEMU (software emulation) with a busybox initramfs
# once per case and round, with random.trust_cpu=off so that nothing but the program
# under test can make the kernel's CRNG ready, and measures guest seconds from the
# program's start to the first non-blocking getrandom() success ("ready") and to the
# kernel's "crng init done" line. Writes tests/vm/work/results.md.
#
# Two guest clocks ("modes"):
#   tcg     the guest's clock follows the host's: what a user of an emulated VM sees.
#           It includes QEMU translating each piece of guest code the first time it
#           runs (a cost that grows with the code a program touches, so it weighs on a
#           dynamically linked daemon far more than on a tiny static program) and any
#           load on the host.
#   icount  -icount shift=0: guest time advances 1 ns per guest instruction while the
#           guest runs (a 1 GIPS CPU) and with the host's clock while it idles (waiting
#           for the TPM, say). Translation and host load cost no guest time, so this
#           compares programs by the work they do. Only the cases that measure a time.
#
# Environment: RNGFEED (default ./rngfeed); VM_SMOKE=1 (two boots, for CI);
# VM_ROUNDS (boots per case and mode, default 3); VM_MODES (default "tcg icount",
# smoke "tcg"); VM_CASES (a subset of the cases below); VM_TIMEOUT (guest seconds per
# case, default 20); VM_CACHE (see fetch.sh); VM_WORK (default tests/vm/work);
# VM_QEMU_ARGS (more QEMU options); VM_EXTRA_BINS (host programs to add to the
# initramfs, e.g. /usr/bin/strace for the diag cases: VM_CASES=diag-tpm).
# Exit status: 0 passed (or "SKIP: reason" printed), 1 an assertion failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
RNGFEED=${RNGFEED:-./rngfeed}
WORK=${VM_WORK:-$here/work}
TIMEOUT=${VM_TIMEOUT:-20}
if [ -n "${VM_SMOKE:-}" ]; then
	ROUNDS=${VM_ROUNDS:-1}
	MODES=${VM_MODES:-tcg}
	CASES=${VM_CASES:-"rngfeed-rdrand nosource"}
else
	ROUNDS=${VM_ROUNDS:-3}
	MODES=${VM_MODES:-"tcg icount"}
	CASES=${VM_CASES:-"none rngfeed-rdrand minfeed-rdrand rngd-rdrand
		rngfeed-tpm rngfeed-hwrng minfeed-hwrng rngd-hwrng rngd-tpm
		virtio-kernel nosource nosource-wait"}
fi
CASES=$(echo $CASES)
# cases whose point is a time (the others check behaviour, once per round is enough)
TIMED="rngfeed-rdrand minfeed-rdrand rngd-rdrand rngfeed-tpm rngfeed-hwrng
	minfeed-hwrng rngd-hwrng virtio-kernel"

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
trap '[ "$BASHPID" != $$ ] || stop_swtpm' EXIT
trap '[ "$BASHPID" != $$ ] || stop_swtpm; exit 130' INT TERM

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

# boot MODE CASE ROUND: writes $WORK/logs/MODE-CASE-ROUND.log
boot() {
	local m=$1 c=$2 r=$3 cpu=max log=$WORK/logs/$1-$2-$3.log
	local -a dev=() clock=()
	case $c in
	*tpm | *hwrng)
		start_swtpm || { echo "swtpm did not start" >"$log"; return; }
		# shellcheck disable=SC2054  # the commas are QEMU's
		dev=(-chardev "socket,id=chrtpm,path=$tpm_dir/sock"
		     -tpmdev emulator,id=tpm0,chardev=chrtpm -device tpm-tis,tpmdev=tpm0) ;;
	virtio-*) dev=(-device virtio-rng-pci) ;;
	nosource*) cpu=qemu64,-rdrand,-rdseed ;;
	esac
	[ "$m" = icount ] && clock=(-icount shift=0)
	# The host-side limit: the guest powers itself off within TIMEOUT+15 s of /init,
	# and /init starts 2-3 s into a boot that takes 6-9 s of host time.
	# shellcheck disable=SC2086  # VM_QEMU_ARGS is a list of words
	timeout -k 5 $((TIMEOUT + 90)) qemu-system-x86_64 -accel tcg -cpu "$cpu" -m 512 \
		-nographic -no-reboot -nic none "${dev[@]}" "${clock[@]}" ${VM_QEMU_ARGS:-} \
		-kernel "$VM_VMLINUZ" -initrd "$initrd" \
		-append "console=ttyS0 random.trust_cpu=off random.trust_bootloader=off quiet vmtest.case=$c vmtest.timeout=$TIMEOUT" \
		</dev/null >"$log" 2>&1
	echo "qemu-exit=$?" >>"$log"
	stop_swtpm
}

# One line per boot: mode case round done ready crng exit exit_after cpu cpu1 waited nomsg
# (times in seconds from the command's start; "none" never, "-" not reported).
parse() {
	awk -v m="$1" -v c="$2" -v r="$3" '
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
		printf "%s %s %s %d %s %s %s %s %s %s %s %d\n", m, c, r, done, ready, crng,
			("exit" in w) ? w["exit"] : "-", ("exit_after" in w) ? w["exit_after"] : "-",
			("cpu" in w) ? w["cpu"] : "-", ("cpu1" in w) ? w["cpu1"] : "-",
			("waited" in w) ? w["waited"] : "-", nomsg
	}' "$WORK/logs/$1-$2-$3.log"
}

# ---- the boots: rounds outside cases, so load on the host hits every case alike -------

runs=$WORK/runs.txt
: >"$runs"
t0=$(date +%s)
echo "vm-test: kernel $VM_KVER; modes: $MODES; $ROUNDS round(s) of: $CASES"
for m in $MODES; do
	for r in $(seq "$ROUNDS"); do
		for c in $CASES; do
			case $c in
			*tpm | *hwrng) [ $have_swtpm = 1 ] || continue ;;
			esac
			if [ "$m" != tcg ]; then
				case " $(echo $TIMED) " in *" $c "*) ;; *) continue ;; esac
			fi
			boot "$m" "$c" "$r"
			line=$(parse "$m" "$c" "$r")
			echo "  $line"
			echo "$line" >>"$runs"
		done
	done
done
t1=$(date +%s)
[ $have_swtpm = 1 ] || echo "SKIP: vm-test: TPM and hwrng cases: swtpm is not installed (Debian: swtpm)"

# ---- summary --------------------------------------------------------------------------

# field numbers in runs.txt
F_READY=5 F_CRNG=6

# stats MODE CASE FIELD: "median min max n_numeric n_boots", in ms
stats() {
	awk -v m="$1" -v c="$2" -v f="$3" '$1 == m && $2 == c {
			n++; if ($f != "none" && $f != "-") print $f * 1000 }
		END { print "#", n + 0 }' "$runs" |
	sort -g | awk '/^#/ { n = $2; next } { v[k++] = $1 }
		END {
			if (k == 0) { print "- - - 0", n; exit }
			m = k % 2 ? v[int(k / 2)] : (v[k / 2 - 1] + v[k / 2]) / 2
			printf "%.0f %.0f %.0f %d %d\n", m, v[0], v[k - 1], k, n
		}'
}
median_ms() { stats "$1" "$2" "$3" | awk '{ print $1 }'; }
has() { awk -v m="$1" -v c="$2" '$1 == m && $2 == c { f = 1 } END { exit !f }' "$runs"; }

# What a case showed besides its times.
notes() {
	awk -v m="$1" -v c="$2" '$1 == m && $2 == c {
		n++
		if ($4 != 1) hung++
		if (c == "nosource") {
			s = s sprintf("%sexit %s after %.0f ms%s", s == "" ? "" : "; ", $7,
				$8 * 1000, $12 ? ", message ok" : ", NO message")
		} else if (c == "nosource-wait") {
			s = s sprintf("%s%s; CPU %.2f s in 1st s, %.2f s in next %.1f s", s == "" ? "" : "; ",
				$7 == "running" ? "still waiting" : "exit " $7, $10, $9 - $10, $11 - 1)
		} else if ($7 != "-" && $7 != "running" && $5 == "none") {
			s = s sprintf("%sexited %s after %.0f ms", s == "" ? "" : "; ", $7, $8 * 1000)
		}
	}
	END { if (hung) s = s (s == "" ? "" : "; ") hung " boot(s) did not finish"; print s }' "$runs"
}

# target MODE NAME RNGFEED_CASE OTHER_CASE SLACK_MS: met when rngfeed's median is below
# the other's median plus SLACK (or the other was never ready)
target() {
	local a b
	has "$1" "$3" && has "$1" "$4" || return 0
	a=$(median_ms "$1" "$3" $F_READY); b=$(median_ms "$1" "$4" $F_READY)
	if [ "$a" = - ]; then
		echo "| $2 | $3 never ready | MISSED |"
	elif [ "$b" = - ]; then
		echo "| $2 | $3 $a ms; $4 never ready | met |"
	elif awk -v a="$a" -v b="$b" -v s="$5" 'BEGIN { exit !(a < b + s) }'; then
		echo "| $2 | $3 $a ms vs $4 $b ms | met |"
	else
		echo "| $2 | $3 $a ms vs $4 $b ms | MISSED |"
	fi
}

table=$WORK/results.md
{
	echo "## Whole-boot results ($(date -u +%Y-%m-%dT%H:%MZ))"
	echo
	echo "Kernel $VM_KVER, $(qemu-system-x86_64 --version | head -n 1 | sed 's/ (.*//'),"
	echo "\`-accel tcg\`, \`random.trust_cpu=off\`. Guest milliseconds from the program's start"
	echo "to the first non-blocking \`getrandom()\` success (ready) and to the kernel's"
	echo "\`crng init done\`; $ROUNDS boot(s) per case. Clock \`tcg\`: the guest's clock follows the"
	echo "host's (includes QEMU's code translation and host load); \`icount\`: 1 ns per guest"
	echo "instruction (\`-icount shift=0\`), host time only while the guest idles."
	for m in $MODES; do
		grep -q "^$m " "$runs" || continue
		echo
		echo "| case | clock | boots | ready: median | min–max | crng init done: median | min–max | notes |"
		echo "|---|---|---|---|---|---|---|---|"
		for c in $CASES; do
			has "$m" "$c" || continue
			read -r rm rlo rhi rk rn <<<"$(stats "$m" "$c" $F_READY)"
			read -r cm clo chi ck _ <<<"$(stats "$m" "$c" $F_CRNG)"
			rnote=""; [ "$rk" = "$rn" ] || rnote=" ($rk of $rn)"
			cnote=""; [ "$ck" = "$rn" ] || cnote=" ($ck of $rn)"
			if [ "$rk" = 0 ]; then rcol="never | –"; else rcol="$rm$rnote | $rlo–$rhi"; fi
			if [ "$ck" = 0 ]; then ccol="never | –"; else ccol="$cm$cnote | $clo–$chi"; fi
			echo "| $c | $m | $rn | $rcol | $ccol | $(notes "$m" "$c") |"
		done
		t=$(
			target "$m" "rdrand: within 30 ms of the minimal feeder" rngfeed-rdrand minfeed-rdrand 30
			target "$m" "hwrng: within 30 ms of the minimal feeder" rngfeed-hwrng minfeed-hwrng 30
			target "$m" "tpm: within 30 ms of the minimal feeder (on the TPM's /dev/hwrng)" rngfeed-tpm minfeed-hwrng 30
			target "$m" "rdrand: faster than rngd" rngfeed-rdrand rngd-rdrand 0
			target "$m" "hwrng: faster than rngd" rngfeed-hwrng rngd-hwrng 0
			target "$m" "tpm: faster than rngd (rngd's own TPM source)" rngfeed-tpm rngd-tpm 0
		)
		if [ -n "$t" ]; then
			echo
			echo "| target, clock $m (median ready times, reported, not asserted) | measured | |"
			echo "|---|---|---|"
			echo "$t"
		fi
	done
	echo
	echo "Boots took $((t1 - t0)) s of host time."
} >"$table"

# ---- assertions (generous bounds only) ------------------------------------------------

while read -r m c r fin ready crng ex exa cpu cpu1 waited nomsg; do
	id="$c ($m) boot $r"
	[ "$fin" = 1 ] || fail "$id did not finish (no 'VMTEST done'; see $WORK/logs/$m-$c-$r.log)"
	case $c in
	none)
		[ "$ready" = none ] || fail "$id: CRNG ready after $ready s with no daemon (trust_cpu=off ignored?)"
		[ "$crng" = none ] || fail "$id: 'crng init done' after $crng s with no daemon" ;;
	rngfeed-*)
		case $ready in none | -) fail "$id: CRNG not ready within $TIMEOUT s (exit=$ex)" ;; esac
		# The TPM behind /dev/hwrng is a DRBG: credited as the tpm source is.
		if [ "$c" = rngfeed-hwrng ] &&
		   ! grep -q 'hwrng: using it, credit 64/1024' "$WORK/logs/$m-$c-$r.log"; then
			fail "$id: hwrng on tpm-rng not credited 64/1024: $(grep -m1 'using it' "$WORK/logs/$m-$c-$r.log")"
		fi ;;
	nosource)
		[ "$ex" = 1 ] || fail "$id: rngfeed exit status $ex, want 1"
		[ "$nomsg" = 1 ] || fail "$id: no 'no usable entropy source' message"
		awk -v t="$exa" 'BEGIN { exit !(t != "-" && t + 0 < 5) }' ||
			fail "$id: rngfeed took $exa s to exit (want < 5 s)" ;;
	nosource-wait)
		[ "$ex" = running ] || fail "$id: rngfeed did not keep waiting (exit=$ex)"
		[ "$ready" = none ] || fail "$id: CRNG ready with no source ($ready s)"
		# CPU per second after the first second: a waiting daemon should be idle
		awk -v a="$cpu" -v b="$cpu1" -v w="$waited" \
			'BEGIN { exit !(b != "-" && w > 1 && (a - b) / (w - 1) < 0.05) }' ||
			fail "$id: rngfeed used $cpu s CPU ($cpu1 s in its first second) over $waited s while waiting: spinning?" ;;
	esac
done <"$runs"

for m in $MODES; do
	for c in rngfeed-rdrand rngfeed-tpm rngfeed-hwrng; do
		has "$m" "$c" || continue
		med=$(median_ms "$m" "$c" $F_READY)
		awk -v v="$med" 'BEGIN { exit !(v != "-" && v < 2000) }' ||
			fail "$c ($m): median time to ready $med ms, want < 2000 ms"
	done
done

cat "$table"
if has tcg rngd-tpm; then
	echo
	echo "rngd with only its TPM source (-d 1, no hwrng), first boot (repeated lines counted):"
	grep -a 'VMTEST log' "$WORK/logs/tcg-rngd-tpm-1.log" | sed 's/^VMTEST log \[[^]]*\] //' |
		uniq -c | sed 's/^/  /'
fi
echo "logs: $WORK/logs/; table: $table"
if [ "$failures" -gt 0 ]; then
	echo "vm-test: $failures assertion(s) failed"
	exit 1
fi
echo "vm-test: passed"
