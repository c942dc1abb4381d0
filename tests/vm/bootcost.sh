#!/bin/bash
# tests/vm/bootcost.sh — what an entropy daemon's unit costs the boot (issue 15, item 2):
# time to sysinit.target in the systemd VM boot with rngfeed's unit, with Debian's
# jitterentropy-rngd unit, and with neither; same image (one build, every boot from the
# pristine image with QEMU snapshot=on), same kernel, same clock, several boots each.
# The units are switched per boot on the kernel command line (systemd.mask=), so the
# image is byte for byte the same for every configuration. Not in CI.
#
#   make vm-test-bootcost                       (= tests/vm/bootcost.sh)
#   VM_ROUNDS=7 VM_CLOCK=icount VM_REV=HEAD tests/vm/bootcost.sh
#
# Environment: VM_ROUNDS (boots per configuration, default 5; the configurations take
# turns within a round, so host load hits each alike), VM_CLOCK (tcg, default: the guest
# clock follows the host's; icount: -icount shift=0, guest time counts instructions),
# VM_REV (build the .deb from `git archive REV`; default the working tree), VM_CONF
# (/etc/rngfeed.conf for the guest), VM_TIMEOUT (host seconds per boot, default 300),
# VM_WORK, VM_CONFIGS (default "neither rngfeed jitterentropy"; also rngfeed-failing:
# rngfeed whose only source fails its tests, tests/vm/sdvm-conf/failing.conf, so READY
# comes from the bounded wait). Prints the table and writes it to $VM_WORK/bootcost/results.md.
#
# Figures per configuration (medians): sysinit = sysinit.target's
# ActiveEnterTimestampMonotonic (guest seconds since the kernel started); from PID 1 =
# the same minus UserspaceTimestampMonotonic (systemd's start in the root file system:
# the kernel's and the initramfs's share taken out); cost = median(from PID 1) minus that
# of "neither"; unit start -> active = the daemon's ExecMainStart to ActiveEnter (for
# Type=notify: READY=1); crng = the kernel's "crng init done" (s since kernel start).
# Exit: 0 done, 1 a build or boot failed, 77 skipped (not root, or a tool missing).
# shellcheck disable=SC2016  # the $N in the awk expressions are awk's
set -u
cd "$(dirname "$0")/../.." || exit 2
vmdir=$PWD/tests/vm
out=${VM_WORK:-$vmdir/work}/bootcost
ROUNDS=${VM_ROUNDS:-5}
CONFIGS=${VM_CONFIGS:-neither rngfeed jitterentropy}

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (as tests/vm/systemd-boot.sh)"
	exit 77
fi
for t in qemu-system-x86_64 swtpm debootstrap; do
	command -v $t >/dev/null || { echo "SKIP: $t not found"; exit 77; }
done
tmp=$(mktemp -d /tmp/rngfeed-bootcost.XXXXXX) || exit 2
trap '[ "$BASHPID" != $$ ] || rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
# shellcheck source=tests/vm/sdvm.sh
. "$vmdir/sdvm.sh"

rm -rf "$out"
mkdir -p "$out"
echo "== image (tests/vm/systemd-boot.sh VM_IMAGE_ONLY=1 VM_EXTRA_DEBS=jitterentropy-rngd${VM_REV:+ VM_REV=$VM_REV})"
VM_IMAGE_HOOK=$vmdir/sdvm-hook.sh VM_EXTRA_DEBS=jitterentropy-rngd sdvm_image "$out" ||
	{ tail -n 30 "$out/build.log"; echo "FAIL: image build (log: $out/build.log)"; exit 1; }
grep -E '^ +(rngfeed_|from git|NOTE)' "$out/build.log"
rev=$(sed -n 's/^   from git archive .*(\(.*\))$/\1/p' "$out/build.log")
[ -n "$rev" ] || rev="working tree at $(git rev-parse --short HEAD)"
echo "   kernel $SD_KVER; $ROUNDS round(s) of: $CONFIGS; clock ${VM_CLOCK:-tcg}"

runs=$out/runs.txt
: >"$runs"
failed=0
for r in $(seq "$ROUNDS"); do
	for c in $CONFIGS; do
		case $c in
		neither) masks="systemd.mask=rngfeed.service systemd.mask=jitterentropy.service" ;;
		rngfeed) masks="systemd.mask=jitterentropy.service" ;;
		jitterentropy) masks="systemd.mask=rngfeed.service" ;;
		rngfeed-failing) masks="systemd.mask=jitterentropy.service rngfeed_vmtest.conf=failing" ;;
		*) echo "unknown configuration $c"; exit 2 ;;
		esac
		log=$out/$c-$r.log
		t0=$(date +%s)
		sdvm_boot "$log" "$masks"
		rep=${log%.log}.report
		if ! grep -q '^end: ' "$rep"; then
			echo "   $c #$r: no report (QEMU: $(cat "$log.qemu"); console $log)"
			failed=1
			continue
		fi
		us=$(sdvm_prop "$rep" manager UserspaceTimestampMonotonic)
		si=$(sdvm_prop "$rep" sysinit ActiveEnterTimestampMonotonic)
		crng=$(sdvm_sect "$rep" dmesg | grep 'crng init done' | sdvm_usec)
		case $c in
		rngfeed*) unit=show ;;
		jitterentropy) unit=jitter ;;
		*) unit='' ;;
		esac
		ust=- uact=- state=-
		if [ -n "$unit" ]; then
			ust=$(sdvm_prop "$rep" $unit ExecMainStartTimestampMonotonic)
			uact=$(sdvm_prop "$rep" $unit ActiveEnterTimestampMonotonic)
			state="$(sdvm_prop "$rep" $unit ActiveState)/$(sdvm_prop "$rep" $unit SubState)"
		fi
		# config round userspace sysinit crng unit_start unit_active state host_s
		echo "$c $r ${us:--} ${si:--} ${crng:--} ${ust:--} ${uact:--} $state $(($(date +%s) - t0))" >>"$runs"
		awk '{ printf "   %-13s #%s sysinit %.3f s (from PID 1 %.3f s), crng %s, unit %s, %s; %s s host\n",
			$1, $2, $4 / 1e6, ($4 - $3) / 1e6, $5 == "-" ? "none" : sprintf("%.3f s", $5 / 1e6),
			$6 == "-" || $7 == "-" || $7 == 0 ? "-" : sprintf("start %.3f -> active %.3f s", $6 / 1e6, $7 / 1e6),
			$8, $9 }' <<<"$(tail -n 1 "$runs")"
	done
done

med() { # med CONFIG AWK-EXPR: median over that configuration's boots, in seconds
	awk -v c="$1" '$1 == c && $4 != "-" && $3 != "-" { print '"$2"' }' "$runs" | sdvm_median
}
base=$(med neither '($4 - $3) / 1e6')
{
	echo "# boot cost of an entropy daemon's unit, $(date -u +%Y-%m-%d)"
	echo
	echo "Kernel $SD_KVER, QEMU TCG -cpu max, clock ${VM_CLOCK:-tcg}, random.trust_cpu=off, swtpm TPM; rngfeed $rev; medians of the boots counted."
	echo
	echo "| unit | boots | sysinit.target (s) | from PID 1 to sysinit (s) | cost vs neither (s) | unit start -> active (s) | crng init done (s) |"
	echo "|---|---|---|---|---|---|---|"
	for c in $CONFIGS; do
		n=$(awk -v c="$c" '$1 == c && $4 != "-"' "$runs" | wc -l)
		from=$(med "$c" '($4 - $3) / 1e6')
		cost=$(awk -v a="$from" -v b="$base" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%+.3f", a - b }')
		act=-
		[ "$c" = neither ] || act=$(awk -v c="$c" '$1 == c && $6 != "-" && $7 != "-" && $7 > 0 { print ($7 - $6) / 1e6 }' "$runs" | sdvm_median)
		crng=$(awk -v c="$c" '$1 == c && $5 != "-" { print $5 / 1e6 }' "$runs" | sdvm_median)
		printf '| %s | %s | %.3f | %.3f | %s | %s | %s |\n' "$c" "$n" "$(med "$c" '$4 / 1e6')" "$from" \
			"$([ "$c" = neither ] && echo 0 || echo "$cost")" "$act" "$crng"
	done
	echo
	echo "Per boot: $runs (config round userspace sysinit crng unit-start unit-active state host-s; µs)."
} >"$out/results.md"
cat "$out/results.md"
exit $failed
