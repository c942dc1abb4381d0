#!/bin/bash
# Section 4, conditioned output: "rngfeed --stdout -n SOURCE --bytes N
# >/dev/null" (tested raw input reseeding the CTR_DRBG, its output on
# stdout) for rdrand and rdseed, against libgcrypt's AES-256-CTR, the
# DRBG's own ceiling, measured in the same run (bench_ceilings aes),
# interleaved with them.
set -uo pipefail
BENCH_DIR=${BENCH_DIR:-$(cd "$(dirname "$0")" && pwd)}
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

CEIL=$BENCH_DIR/bench_ceilings
[ -x "$CEIL" ] || make -s -C "$BENCH_DIR/.." bench/bench_ceilings >&2 || {
	note "output: bench/bench_ceilings missing and make failed"
	exit 1
}
[ -x "$RNGFEED" ] || { note "output: $RNGFEED missing (make rngfeed)"; exit 1; }

# Sizes for about half a second a run: RDRAND-fed output runs at GB/s;
# RDSEED-fed output waits for the RDSEED blocks each reseed needs (one per
# 1 MiB of output by default), and RDSEED is slow here.  RDRAND: 8 GiB,
# not 2: at ~10 GB/s 2 GiB lasted 0.2 s, of which the process's start
# (exec, libraries, self-test, the first tested block: 6 to 20 ms here,
# reported in section 6) was up to a tenth, while the AES reference is a
# loop timed after its warm-up.
if [ -n "${BENCH_SMOKE:-}" ]; then
	N_RDRAND=$((64 << 20)) N_RDSEED=$((2 << 20)) T_AES=0.05
else
	N_RDRAND=$((8 << 30)) N_RDSEED=$((64 << 20)) T_AES=0.3
fi

W=$(mktemp -d "$BENCH_WORK/output.XXXXXX") || exit 1
trap '[ "$BASHPID" != $$ ] || rm -rf "$W"' EXIT
failed=0

# stdout_rate KEY BYTES SOURCE [OPTION...]: times one --stdout run with
# the default reseed policy (--reseed-bytes 1 MiB, --reseed-seconds 1),
# appends its rate.
stdout_rate() {
	local key=$1 n=$2 src=$3 t0 t1 rc
	shift 3
	[ -e "$W/$key.na" ] && return 0
	t0=$EPOCHREALTIME
	"$RNGFEED" --stdout -n "$src" "$@" --bytes "$n" >/dev/null 2>"$W/err"
	rc=$?
	t1=$EPOCHREALTIME
	if [ $rc != 0 ]; then
		# A source this machine lacks is a reason, not a failure.
		if "$RNGFEED" --list 2>/dev/null | grep -q "^$src  *unavailable"; then
			"$RNGFEED" --list | awk -v s="$src" '$1 == s { sub(/^.*: /, ""); print }' >"$W/$key.na"
		else
			note "output: rngfeed --stdout -n $src failed (exit $rc): $(tail -n 3 "$W/err")"
			echo "failed: rngfeed exit $rc" >"$W/$key.na"
			failed=1
		fi
		return
	fi
	awk -v b="$n" -v a="$t0" -v z="$t1" 'BEGIN { printf "x bytes_per_s=%.0f\n", b / (z - a) }' >>"$W/$key"
}

for ((r = 1; r <= BENCH_RUNS; r++)); do
	note "output: run $r of $BENCH_RUNS"
	if out=$("$CEIL" aes "$T_AES" 2>"$W/err"); then
		echo "$out" >>"$W/aes"
	else
		note "output: bench_ceilings aes failed: $(cat "$W/err")"
		failed=1
	fi
	stdout_rate rdrand "$N_RDRAND" rdrand
	# force=yes: rngfeed follows CPUID, and this VM's kernel hides
	# RDSEED (AMD's RDSEED32 erratum); it executes all the same.
	stdout_rate rdseed "$N_RDSEED" rdseed -O rdseed:force=yes
done

if aes=$(med aes bytes_per_s); then
	ref="AES-256-CTR ceiling, 1 MiB buffers: $(rate "$aes") (same run)"
else
	ref="AES-256-CTR ceiling: not measured"
	aes=
fi
for src in rdrand rdseed; do
	case $src in
	rdrand) n=$N_RDRAND ;;
	rdseed) n=$N_RDSEED ;;
	esac
	# The table says what ran: rdseed is forced (above).
	opt=
	[ "$src" = rdseed ] && opt=" -O rdseed:force=yes"
	what="rngfeed --stdout -n $src$opt, $((n >> 20)) MiB to /dev/null (CTR_DRBG output, reseeded from a tested $src block every 1 MiB and every 1 s, the defaults)"
	target=""
	if v=$(med "$src" bytes_per_s); then
		# RDSEED-fed output is bound by RDSEED (a block per MiB).
		[ "$src" = rdrand ] && [ -n "$aes" ] &&
			target="≥ 0.8× AES-256-CTR: $(awk -v a="$v" -v b="$aes" 'BEGIN { print (a >= 0.8 * b ? "met" : "MISSED") }')"
		row 4 "$what" "$(rate "$v")" "$ref" "$(xratio "$v" "$aes")" "$target"
	else
		row 4 "$what" "$(why_not "$src")" "$ref" "—" ""
	fi
done
exit $failed
