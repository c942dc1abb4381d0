#!/bin/bash
# tests/vm/arm64-boot.sh — the whole-VM boot on arm64 (make vm-test-arm64; issue 16).
#
# Boots Debian 12's arm64 kernel under qemu-system-aarch64 (-M virt, -cpu max, software
# emulation) with the busybox initramfs of tests/vm/ (the same init.sh and waiter, built
# for arm64), once per case and round, and measures guest time from a feeder's start to
# the first non-blocking getrandom() success ("ready") and to the kernel's "crng init done":
#   none            nothing feeds: must never be ready within VM_TIMEOUT guest seconds
#   minfeed-rndrrs  the floor: 64 bytes of RNDRRS, one RNDADDENTROPY of 512 bits, exit
#   rngfeed-rndrrs  rngfeed -f -v -n rndrrs
#   rngfeed-rndr    rngfeed -f -v -n rndr (not in the default cases; while rngfeed credits
#                   RNDR 0, as by default, the CRNG must stay not ready)
# Fails when rngfeed does not make the CRNG ready, or when something else did: the
# kernel's first reseed (the one that prints "crng init done") must run in rngfeed's
# own RNDADDENTROPY call. Two boot-time kprobes show it (kprobe_event= on the command
# line, printed by init.sh as "VMTEST ktrace"): crngw_ioctl on random_ioctl (with the
# command) and crngw_reseed on crng_reseed, each with the process it ran in.
#
# What the kernel would credit by itself, and what stops it (6.1.0 arm64, QEMU 7.2):
#   - RNDR/RNDRRS: with -cpu max the kernel seeds from RNDRRS at boot and, unless
#     random.trust_cpu=off, credits it: "crng init done" at 0.000000.
#   - QEMU's virt machine puts an rng-seed (and kaslr-seed) into the device tree; the
#     kernel reads it in setup_arch() before it parses early parameters, so
#     random.trust_bootloader=off comes too late and the seed is credited with the
#     build's default (CONFIG_RANDOM_TRUST_BOOTLOADER=y): "crng init done" at 0.000000
#     again. -M virt,dtb-randomness=off stops QEMU passing it.
#   - With both, nothing but interrupts is left, and "none" is not ready in 30 s.
#
# Environment: RNGFEED_ARM64 (an arm64 rngfeed; default: cross-built here from VM_REV,
# default HEAD, with git archive into the work directory and the arm64 libraries that
# arm64-fetch.sh unpacks: never the shared work tree's build/); VM_ROUNDS (boots per case
# and mode, default 3); VM_MODES (default "tcg icount", see boot-matrix.sh);
# VM_CASES; VM_TIMEOUT (guest seconds per case, default 20); VM_WORK (default
# tests/vm/work/arm64); A64_CPU (default max,pauth-impdef=on: -cpu max with QEMU's
# cheap pointer-authentication algorithm instead of QARMA5, which halves boot time
# under TCG and changes nothing the test uses); VM_QEMU_ARGS; A64_CC (default
# aarch64-linux-gnu-gcc). Needs qemu-system-arm and gcc-aarch64-linux-gnu (Debian);
# without them it prints "SKIP: ..." and exits 0. Not in CI (a few minutes).
# Results: $VM_WORK/results.md; serial logs: $VM_WORK/logs/.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
WORK=${VM_WORK:-$here/work/arm64}
TIMEOUT=${VM_TIMEOUT:-20}
ROUNDS=${VM_ROUNDS:-3}
MODES=${VM_MODES:-"tcg icount"}
# shellcheck disable=SC2086,SC2116  # the list's words, on one line
CASES=$(echo ${VM_CASES:-none minfeed-rndrrs rngfeed-rndrrs})
CPU=${A64_CPU:-max,pauth-impdef=on}
export A64_CC=${A64_CC:-aarch64-linux-gnu-gcc}
# the kernel's CRNG reseed (the first one is "crng init done") and the ioctls on the
# random devices, each with the process they ran in (0x40085203 is RNDADDENTROPY)
KPROBES='kprobe_event=p:crngw_reseed,crng_reseed;p:crngw_ioctl,random_ioctl,cmd=%x1:x32'
RNDADDENTROPY=0x40085203

skip() { echo "SKIP: vm-test-arm64: $*"; exit 0; }
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

command -v qemu-system-aarch64 >/dev/null ||
	skip "qemu-system-aarch64 is not installed (Debian: qemu-system-arm)"
command -v "$A64_CC" >/dev/null ||
	skip "$A64_CC is not installed (Debian: gcc-aarch64-linux-gnu)"
fetched=$("$here/arm64-fetch.sh") || skip "could not fetch the arm64 kernel and libraries (arm64-fetch.sh says why above)"
eval "$fetched"

mkdir -p "$WORK/logs"
rm -f "$WORK"/logs/*.log

# ---- the arm64 rngfeed ----------------------------------------------------------------

if [ -z "${RNGFEED_ARM64:-}" ]; then
	rev=${VM_REV:-HEAD}
	src=$WORK/src
	echo "vm-test-arm64: cross-building rngfeed $(git -C "$top" rev-parse --short "$rev") for arm64 in $src"
	rm -rf "$src"
	mkdir -p "$src"
	git -C "$top" archive "$rev" | tar -x -C "$src" ||
		{ echo "FAIL: git archive $rev"; exit 1; }
	# The libraries' .pc files and headers from the unpacked arm64 packages; -rpath-link
	# lets the linker follow libsystemd's and libgcrypt's own dependencies there.
	lib="$A64_ROOT/lib/aarch64-linux-gnu:$A64_ROOT/usr/lib/aarch64-linux-gnu"
	if ! PKG_CONFIG_LIBDIR=$A64_ROOT/usr/lib/aarch64-linux-gnu/pkgconfig \
	     PKG_CONFIG_SYSROOT_DIR=$A64_ROOT \
	     nice make -C "$src" -j2 CC="$A64_CC" \
		CPPFLAGS="-I$A64_ROOT/usr/include/aarch64-linux-gnu" \
		LDFLAGS="-Wl,-rpath-link,$lib" rngfeed >"$WORK/build.log" 2>&1; then
		tail -n 20 "$WORK/build.log"
		echo "FAIL: the arm64 build of rngfeed failed (log: $WORK/build.log)"
		exit 1
	fi
	RNGFEED_ARM64=$src/rngfeed
fi
readelf -h "$RNGFEED_ARM64" 2>/dev/null | grep -q 'Machine:.*AArch64' ||
	{ echo "FAIL: $RNGFEED_ARM64 is not an arm64 program"; exit 1; }

initrd=$WORK/initrd.cpio
RNGFEED_ARM64=$RNGFEED_ARM64 "$here/arm64-mkinitrd.sh" "$initrd" ||
	{ echo "FAIL: cannot build the arm64 initramfs"; exit 1; }

# ---- one boot ------------------------------------------------------------------------

# boot MODE CASE ROUND: writes $WORK/logs/MODE-CASE-ROUND.log
boot() {
	local m=$1 c=$2 r=$3 log=$WORK/logs/$1-$2-$3.log
	local -a clock=()
	[ "$m" = icount ] && clock=(-icount shift=0)
	# The guest powers itself off within TIMEOUT+15 s of /init; /init comes 3-6 s
	# (guest) into the boot, 10-20 s of host time under load.
	# shellcheck disable=SC2086  # VM_QEMU_ARGS is a list of words
	timeout -k 5 $((TIMEOUT + 180)) nice qemu-system-aarch64 -M virt,dtb-randomness=off \
		-cpu "$CPU" -m 512 -nographic -no-reboot -nic none "${clock[@]}" ${VM_QEMU_ARGS:-} \
		-kernel "$A64_VMLINUZ" -initrd "$initrd" \
		-append "console=ttyAMA0 random.trust_cpu=off random.trust_bootloader=off quiet $KPROBES vmtest.case=$c vmtest.timeout=$TIMEOUT" \
		</dev/null >"$log" 2>&1
	echo "qemu-exit=$?" >>"$log"
}

# One line per boot: mode case round done ready crng early reseed_by ioctls_before exit
#   ready, crng  seconds from the command's start ("none" never, "-" not reported)
#   early        1 if "crng init done" came before the command started (then the
#                kernel had credited something else: a broken setup)
#   reseed_by    the process the kernel's first CRNG reseed ran in ("-": none)
#   ioctls_before  RNDADDENTROPY calls by rngfeed/minfeed before that reseed
parse() {
	awk -v m="$1" -v c="$2" -v r="$3" -v add="$RNDADDENTROPY" '
	function stamp(s) { sub(/^[^[]*\[ */, "", s); sub(/\].*/, "", s); return s + 0 }
	/VMTEST waiter / { for (i = 3; i <= NF; i++) { split($i, kv, "="); w[kv[1]] = kv[2] } }
	/VMTEST kmsg .*vmtest: start/ { ks = stamp($0) }
	/VMTEST kmsg .*crng init done/ { kc = stamp($0) }
	/^VMTEST done/ { done = 1 }
	/VMTEST ktrace .* crngw_/ {
		who = $3; sub(/-[0-9]+$/, "", who)
		if ($0 ~ /crngw_reseed:/ && by == "") by = who
		if ($0 ~ /crngw_ioctl:/ && $0 ~ "cmd=" add && by == "" && who ~ /^(rngfeed|minfeed)$/) n++
	}
	END {
		ready = "-"
		if ("ready" in w) ready = w["ready"] == "none" ? "none" : sprintf("%.4f", w["ready"] - w["start"])
		crng = ks == "" ? "-" : kc == "" ? "none" : sprintf("%.4f", kc - ks)
		early = kc != "" && ks != "" && kc < ks
		printf "%s %s %s %d %s %s %d %s %d %s\n", m, c, r, done, ready, crng, early,
			by == "" ? "-" : by, n + 0, ("exit" in w) ? w["exit"] : "-"
	}' "$WORK/logs/$1-$2-$3.log"
}

# ---- the boots: rounds outside cases, so load on the host hits every case alike -------

runs=$WORK/runs.txt
: >"$runs"
t0=$(date +%s)
echo "vm-test-arm64: kernel $A64_KVER, -cpu $CPU; modes: $MODES; $ROUNDS round(s) of: $CASES"
for m in $MODES; do
	for r in $(seq "$ROUNDS"); do
		for c in $CASES; do
			# the clock changes nothing for "none": once, with the tcg clock
			[ "$c" = none ] && [ "$m" != tcg ] && continue
			boot "$m" "$c" "$r"
			line=$(parse "$m" "$c" "$r")
			echo "  $line"
			echo "$line" >>"$runs"
		done
	done
done
t1=$(date +%s)

# ---- summary --------------------------------------------------------------------------

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
has() { awk -v m="$1" -v c="$2" '$1 == m && $2 == c { f = 1 } END { exit !f }' "$runs"; }
# who made the CRNG ready, over a case's boots: "rngfeed ×3"
by() {
	awk -v m="$1" -v c="$2" '$1 == m && $2 == c { n[$8]++ }
		END { for (k in n) s = s (s == "" ? "" : ", ") (k == "-" ? "nobody" : k) " ×" n[k]; print s }' "$runs"
}

table=$WORK/results.md
{
	echo "## arm64 whole-boot results ($(date -u +%Y-%m-%dT%H:%MZ))"
	echo
	echo "Kernel $A64_KVER, $(qemu-system-aarch64 --version | head -n 1 | sed 's/ (.*//'),"
	echo "\`-M virt,dtb-randomness=off -cpu $CPU\` (TCG), \`random.trust_cpu=off random.trust_bootloader=off\`."
	echo "Guest milliseconds from the program's start to the first non-blocking \`getrandom()\`"
	echo "success (ready) and to \`crng init done\`; $ROUNDS boot(s) per case and clock (\`none\`: tcg only,"
	echo "$TIMEOUT s each). \"CRNG ready in\": the process the kernel's first reseed ran in (kprobe)."
	echo
	echo "| case | clock | boots | ready: median | min–max | crng init done: median | min–max | CRNG ready in |"
	echo "|---|---|---|---|---|---|---|---|"
	for m in $MODES; do
		for c in $CASES; do
			has "$m" "$c" || continue
			read -r rm rlo rhi rk rn <<<"$(stats "$m" "$c" $F_READY)"
			read -r cm clo chi ck _ <<<"$(stats "$m" "$c" $F_CRNG)"
			rnote=""; [ "$rk" = "$rn" ] || rnote=" ($rk of $rn)"
			cnote=""; [ "$ck" = "$rn" ] || cnote=" ($ck of $rn)"
			if [ "$rk" = 0 ]; then rcol="never | –"; else rcol="$rm$rnote | $rlo–$rhi"; fi
			if [ "$ck" = 0 ]; then ccol="never | –"; else ccol="$cm$cnote | $clo–$chi"; fi
			echo "| $c | $m | $rn | $rcol | $ccol | $(by "$m" "$c") |"
		done
	done
	echo
	echo "Boots took $((t1 - t0)) s of host time."
} >"$table"

# ---- assertions ---------------------------------------------------------------------

while read -r m c r fin ready _crng early rby nadd ex; do
	id="$c ($m) boot $r"
	log=$WORK/logs/$m-$c-$r.log
	[ "$fin" = 1 ] || fail "$id did not finish (no 'VMTEST done'; see $log)"
	[ "$early" = 0 ] || fail "$id: 'crng init done' before the test started: the kernel credited something else (see the header)"
	case $c in
	none)
		[ "$ready" = none ] || fail "$id: CRNG ready after $ready s with nothing feeding"
		[ "$rby" = - ] || fail "$id: the kernel reseeded its CRNG (in $rby) with nothing feeding" ;;
	minfeed-*)
		case $ready in none | -) fail "$id: the minimal feeder did not make the CRNG ready (RNDRRS missing? see $log)" ;; esac ;;
	rngfeed-*)
		case $ready in
		none | -)
			# a source rngfeed credits 0 (rndr, a DRBG's output, by default) is
			# expected to leave the CRNG as it found it
			if grep -q "${c#rngfeed-}: using it, credit 0/" "$log"; then
				[ "$rby" = - ] || fail "$id: the kernel reseeded in '$rby' although rngfeed credits nothing"
			else
				fail "$id: CRNG not ready within $TIMEOUT s (rngfeed exit=$ex; see $log)"
			fi ;;
		*)
			[ "$rby" = rngfeed ] ||
				fail "$id: the CRNG became ready in '$rby', not in rngfeed's RNDADDENTROPY"
			[ "$nadd" -ge 1 ] ||
				fail "$id: no RNDADDENTROPY from rngfeed before the CRNG was ready" ;;
		esac ;;
	esac
done <"$runs"

cat "$table"
echo "logs: $WORK/logs/; table: $table"
if [ "$failures" -gt 0 ]; then
	echo "vm-test-arm64: $failures assertion(s) failed"
	exit 1
fi
echo "vm-test-arm64: passed"
