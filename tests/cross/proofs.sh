#!/bin/bash
# Issue 16's proofs under qemu-user, run by "make cross-check" inside the
# chroot of ARCH (tests/cross/cross-check.sh), from the top of the tree:
#
#   tests/cross/proofs.sh ARCH CPU_MODEL...
#
# For every CPU random-number source of the architecture:
#   - with a CPU model that has the instruction, "rngfeed --list" says the
#     source is available, and its --raw output (2,500,000 bytes, 999 FIPS
#     blocks) passes rngtest;
#   - with a CPU model that lacks it, --list says unavailable with a
#     reason (a non-empty description after the STATE column);
# plus, on every architecture, --list runs and --raw of a FIFO (the
# portable path: file reader, monitor, raw output) passes rngtest.
# QEMU_CPU picks the CPU model: qemu-user reads it at each exec.
# Exit 0 pass, 1 fail.
set -u
arch=${1:?usage: $0 ARCH CPU_MODEL...}
shift
RNGFEED=${RNGFEED:-./rngfeed}
RAW_BYTES=${RAW_BYTES:-2500000}
# 2,500,000 bytes are 999 blocks of 20,000 bits after rngtest's first 32
# bits.  Perfect random data fails a block about 1 time in 1,250: the
# count of failures is ~Poisson(0.8); P(>= 7) ~ 2e-5.  A dead, stuck or
# biased source fails all of them.
RNGTEST_MAX_FAILED=6
failures=0
tmp=$(mktemp -d /tmp/proofs.XXXXXX) || exit 1
trap '[ "$BASHPID" != $$ ] || rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

# Per architecture: the CPU models with and without each source.  A model
# the emulator does not know is a failure, not a skip: the proof depends
# on it.  Sources: names of the drivers in src/sources/.
case $arch in
arm64) has=max lacks=cortex-a57 sources="rndrrs rndr" ;;
ppc64el) has=power9 lacks=power8 sources="darn" ;;
# QEMU's s390x TCG refuses the named models (z13, z14: features it does
# not emulate); "max,prno-trng=off" is max without the TRNG function.
s390x) has=max lacks=max,prno-trng=off sources="s390-trng" ;;
i386) has=max lacks=max,rdrand=off sources="rdrand" ;;
*) has='' lacks='' sources='' ;;
esac

list() { # CPU: --list with no config file under that CPU model
	QEMU_CPU=$1 "$RNGFEED" -c /dev/null --list 2>&1
}
state() { awk -v n="$1" '$1 == n { print $2 }'; }

fips_failures() {
	rngtest <"$1" 2>&1 | sed -n 's/^rngtest: FIPS 140-2 failures: //p'
}
raw_passes() { # NAME CPU ARGS...: --raw of a source through rngtest
	local name=$1 cpu=$2 out=$tmp/raw f rc start
	shift 2
	start=$(date +%s)
	QEMU_CPU=$cpu timeout 600 "$RNGFEED" -c /dev/null "$@" --raw \
		--bytes "$RAW_BYTES" 2>"$tmp/raw.err" | head -c $((RAW_BYTES + 1)) >"$out"
	rc=${PIPESTATUS[0]}
	[ "$rc" -eq 0 ] || { fail "$name --raw ($cpu) exited $rc: $(head -c 300 "$tmp/raw.err")"; return; }
	[ "$(stat -c %s "$out")" -eq "$RAW_BYTES" ] ||
		{ fail "$name --raw ($cpu) gave $(stat -c %s "$out") bytes, not $RAW_BYTES"; return; }
	f=$(fips_failures "$out")
	if [ -z "$f" ]; then
		fail "$name ($cpu): no rngtest verdict"
	elif [ "$f" -gt $RNGTEST_MAX_FAILED ]; then
		fail "$name ($cpu): $f of 999 FIPS blocks failed (at most $RNGTEST_MAX_FAILED expected)"
	else
		ok "$name ($cpu): --raw $RAW_BYTES bytes in $(($(date +%s) - start)) s, rngtest: $f of 999 FIPS blocks failed"
	fi
}

command -v rngtest >/dev/null || { echo "FAIL: rngtest (rng-tools5) is not in the chroot"; exit 1; }
# The oracle catches a broken source, or the checks below prove nothing.
head -c 100000 /dev/zero >"$tmp/zeros"
f=$(fips_failures "$tmp/zeros")
[ "${f:-0}" -gt 2 ] || fail "rngtest passed all-zero input (${f:-no} failures)"

echo "== $arch: rngfeed --list (QEMU_CPU=${has:-default})"
out=$(list "${has:-max}") || fail "--list exited non-zero: $out"
printf '%s\n' "$out" | sed 's/^/    /'

for src in $sources; do
	out=$(list "$has")
	st=$(state "$src" <<<"$out")
	if [ "$st" = available ]; then
		ok "$src available with QEMU_CPU=$has"
		raw_passes "$src" "$has" -n "$src"
	else
		fail "$src with QEMU_CPU=$has: '$(grep -E "^$src " <<<"$out" || echo 'no such line')'"
	fi
	out=$(list "$lacks")
	line=$(grep -E "^$src " <<<"$out")
	st=$(state "$src" <<<"$out")
	# STATE unavailable and a reason: something after the description's colon.
	if [ "$st" = unavailable ] && grep -qE ': .+' <<<"$line"; then
		ok "$src unavailable with QEMU_CPU=$lacks: ${line#* unavailable }"
	else
		fail "$src with QEMU_CPU=$lacks: want unavailable with a reason: '${line:-no such line}'"
	fi
done

# Every architecture: the portable path (a FIFO source; the monitor, the
# byte order of its word paths, raw output) on data from the kernel.
mkfifo "$tmp/fifo"
head -c $((RAW_BYTES + 65536)) /dev/urandom >"$tmp/fifo" &
feeder=$!
raw_passes fifo "${has:-max}" -n file -O "file:device=$tmp/fifo"
kill "$feeder" 2>/dev/null
wait "$feeder" 2>/dev/null

[ $failures -eq 0 ] && { echo "proofs $arch: PASS"; exit 0; }
echo "proofs $arch: $failures failure(s)"
exit 1
