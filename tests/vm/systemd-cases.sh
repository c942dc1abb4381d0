#!/bin/bash
# tests/vm/systemd-cases.sh — the systemd VM boot (rngfeed from its .deb, the packaged
# unit and its sandbox) with the configurations issues 14 and 15 name; one image, one boot
# per case, each from the pristine image. Not in CI.
#
#   make vm-test-systemd-cases                  (= tests/vm/systemd-cases.sh)
#   VM_CASES="stuck" VM_KERNEL=trixie tests/vm/systemd-cases.sh
#
# Cases (VM_CASES, default "user failing stuck"):
#   user     /etc/rngfeed.conf says `user = nobody` (issue 15 item 1): the unit starts
#            (no restart loop), READY=1 comes, the daemon runs as nobody (Uid: line of
#            /proc/PID/status) and still credits (the journal's "kernel CRNG is ready").
#   failing  the only source is a regular file of zeros at an explicit credit: it fails
#            its start-up test (issue 15 item 2): READY=1 within VM_READY_MAX seconds
#            of the start (default 10), and STATUS= says why nothing was credited.
#   stuck    QEMU's virtio-rng gives only zeros (rng-random on /dev/zero) and the
#            configuration keeps the hw_random source only, no TPM in this boot, so the
#            virtio-rng is the only hw_random device (issue 14 item 4): READY=1
#            within VM_READY_MAX; rng_quality reads 0 while rngfeed runs (the hand-over);
#            the kernel credits nothing from the device after the hand-over (kprobes on
#            add_hwgenerator_randomness, as tests/vm/stuck-virtio.sh, and on
#            rng_quality_store: the hand-over's time). Credits before the hand-over are
#            reported, not failed: between rngfeed's exec and its hand-over (its set-up)
#            the kernel's thread may still credit once; on 6.1 the kernel credits the device when
#            the driver loads (see tests/vm/README.md); VM_APPEND=rng_core.default_quality=0
#            with VM_KERNEL=trixie (6.12) stops that first credit too.
# Environment: VM_CASES, VM_READY_MAX, VM_REV (build from `git archive REV`), VM_KERNEL
# (Debian suite of the kernel, default bookworm's 6.1), VM_APPEND (more kernel options for
# every boot), VM_CLOCK, VM_TIMEOUT, VM_WORK. Exit 0 all passed, 1 a check failed, 77 skip.
set -u
cd "$(dirname "$0")/../.." || exit 2
vmdir=$PWD/tests/vm
out=${VM_WORK:-$vmdir/work}/cases
CASES=${VM_CASES:-user failing stuck}
READY_MAX=${VM_READY_MAX:-10}
# hwr: each call of the hw_random thread into random.c with the bits it credits;
# hwq: each write of rng_quality (the hand-over's time, seen from the kernel)
KPROBE='trace_clock=global kprobe_event=p:hwr,add_hwgenerator_randomness,len=%si:u32,ent=%dx:u32;p:hwq,rng_quality_store'

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (as tests/vm/systemd-boot.sh)"
	exit 77
fi
for t in qemu-system-x86_64 swtpm debootstrap; do
	command -v $t >/dev/null || { echo "SKIP: $t not found"; exit 77; }
done
tmp=$(mktemp -d /tmp/rngfeed-sdcases.XXXXXX) || exit 2
trap '[ "$BASHPID" != $$ ] || rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
# shellcheck source=tests/vm/sdvm.sh
. "$vmdir/sdvm.sh"

rm -rf "$out"
mkdir -p "$out"
echo "== image (tests/vm/systemd-boot.sh VM_IMAGE_ONLY=1 with tests/vm/sdvm-hook.sh${VM_REV:+, VM_REV=$VM_REV}${VM_KERNEL:+, VM_KERNEL=$VM_KERNEL})"
VM_IMAGE_HOOK=$vmdir/sdvm-hook.sh VM_EXTRA_DEBS=jitterentropy-rngd sdvm_image "$out" ||
	{ tail -n 30 "$out/build.log"; echo "FAIL: image build (log: $out/build.log)"; exit 1; }
grep -E '^ +(rngfeed_|from git)' "$out/build.log"
echo "   kernel $SD_KVER"

fail=0
ok() { echo "   ok: $*"; }
bad() {
	echo "   FAIL: $*"
	fail=1
}
secs() { awk -v u="$1" 'BEGIN { printf "%.3f s", u / 1e6 }'; }

for c in $CASES; do
	qemu=() conf='' SD_NO_TPM=0
	case $c in
	user) conf=user ;;
	failing) conf=failing ;;
	stuck)
		conf=hwrng-only
		# no TPM: the virtio-rng is the only hw_random device, so it is the one
		# rngfeed's hwrng source reads (with a TPM and default_quality=0 on 6.12,
		# tpm-rng-0 registers first and stays current)
		SD_NO_TPM=1
		# shellcheck disable=SC2054  # the commas are QEMU's
		qemu=(-object rng-random,id=rng0,filename=/dev/zero -device virtio-rng-pci,rng=rng0) ;;
	*) echo "unknown case $c"; exit 2 ;;
	esac
	echo "== $c"
	log=$out/$c.log
	sdvm_boot "$log" "systemd.mask=jitterentropy.service rngfeed_vmtest.conf=$conf $KPROBE ${VM_APPEND:-}" "${qemu[@]}"
	rep=${log%.log}.report
	if ! grep -q '^end: ' "$rep"; then
		bad "$c: no report from the guest (console $log)"
		tail -n 20 "$log"
		continue
	fi
	state="$(sdvm_prop "$rep" show ActiveState)/$(sdvm_prop "$rep" show SubState)"
	nrestarts=$(sdvm_prop "$rep" show NRestarts)
	start=$(sdvm_prop "$rep" show ExecMainStartTimestampMonotonic)
	ready=$(sdvm_prop "$rep" show ActiveEnterTimestampMonotonic)
	sysinit=$(sdvm_prop "$rep" sysinit ActiveEnterTimestampMonotonic)
	status=$(sdvm_prop "$rep" show StatusText)
	if [ "$state" = active/running ] && [ "${nrestarts:-0}" = 0 ]; then
		ok "rngfeed.service active (running), no restart"
	else
		bad "rngfeed.service is $state, NRestarts=$nrestarts (Result=$(sdvm_prop "$rep" show Result))"
	fi
	if [ "${ready:-0}" -gt 0 ] && [ "${start:-0}" -gt 0 ]; then
		wait_us=$((ready - start))
		msg="READY=1 $(secs "$wait_us") after the start (at $(secs "$ready")); sysinit.target at $(secs "${sysinit:-0}")"
		if [ "$c" = user ] || [ "$wait_us" -le $((READY_MAX * 1000000)) ]; then
			ok "$msg"
		else
			bad "$msg: more than VM_READY_MAX=$READY_MAX s"
		fi
	else
		bad "no READY=1: ActiveEnter=${ready:-?} start=${start:-?}"
	fi
	echo "   STATUS: \"$status\""
	sdvm_sect "$rep" journal | sed 's/^/     journal: /' | head -n 15
	case $c in
	user)
		uid=$(sdvm_sect "$rep" proc | sed -n 's/^Uid:[[:space:]]*//p')
		nobody=$(awk '$1 == 65534 && $2 == 65534 && $3 == 65534 && $4 == 65534 { print "yes" }' <<<"$uid")
		if [ "$nobody" = yes ]; then
			ok "the daemon runs as nobody (Uid: $uid)"
		else
			bad "the daemon's Uid: line is '${uid:-none}' (want 65534 x4)"
		fi
		sdvm_sect "$rep" proc | grep -E '^Cap' | sed 's/^/     /'
		if sdvm_sect "$rep" journal | grep -q 'kernel CRNG is ready ('; then
			ok "it credits: $(sdvm_sect "$rep" journal | grep 'kernel CRNG is ready (' | head -n 1)"
		else
			bad "no 'kernel CRNG is ready (N bits credited so far)' line in the journal"
		fi ;;
	failing | stuck)
		if [ -n "$status" ]; then
			ok "STATUS= is set (does it say why nothing was credited? read it above)"
		else
			bad "no STATUS= text"
		fi ;;
	esac
	if [ "$c" = stuck ]; then
		sdvm_sect "$rep" hwrng | sed 's/^/     hw_random: /'
		q=$(sdvm_sect "$rep" hwrng | sed -n 's/^rng_quality=//p')
		if [ "$q" = 0 ]; then
			ok "rng_quality reads 0 while rngfeed runs"
		else
			bad "rng_quality reads '${q:-?}' while rngfeed runs (want 0: the hand-over)"
		fi
		# trace lines: "... 12.345678: hwr: (add_hwgenerator_randomness+0x0/...) len=64 ent=500"
		# and "... 12.345678: hwq: (rng_quality_store+0x0/...)"
		sdvm_sect "$rep" trace >"$out/$c.trace"
		read -r before window after gate first <<<"$(awk -v s="${start:-0}" '
			{ t = $0; sub(/: hw[rq]: .*/, "", t); n = split(t, a, " "); t = a[n] * 1e6 }
			/ hwq: / { if (g == "" && t >= s) g = t; next }
			/ hwr: / { e = $0; sub(/.* ent=/, "", e); e += 0
			  if (e > 0) { if (t < s) b++; else if (g == "") w++; else { f = f == "" ? t : f; af++ } } }
			END { printf "%d %d %d %s %s\n", b, w, af, g == "" ? "-" : sprintf("%.0f", g),
				f == "" ? "-" : sprintf("%.0f", f) }' "$out/$c.trace")"
		crng=$(sdvm_sect "$rep" dmesg | grep 'crng init done' | sdvm_usec)
		when=never
		[ "$gate" = - ] || when="$(secs $((gate - start))) after the start"
		echo "     kernel credits from the device: $before before rngfeed's start, $window between its start and its hand-over (rng_quality written $when), $after after; crng init done at $(secs "${crng:-0}")"
		if ! [ -s "$out/$c.trace" ] && ! sdvm_sect "$rep" cmdline | grep -q kprobe_event; then
			bad "no trace of the kernel's credits (kprobe_event= not taken?)"
		elif [ "$after" = 0 ]; then
			ok "the kernel credits nothing from the stuck device after rngfeed's hand-over"
		else
			bad "the kernel credited the stuck device $after time(s) after rngfeed's hand-over (first at $(secs "$first"))"
		fi
		[ "$window" = 0 ] || echo "   NOTE: $window kernel credit(s) from the device after rngfeed's exec, before its hand-over"
	fi
done
echo "   logs and reports: $out"
exit $fail
