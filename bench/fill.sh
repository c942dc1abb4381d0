#!/bin/bash
# Section 3, fill phase: how fast each daemon feeds the kernel when the
# kernel wants data (early boot, and every kernel before 5.18), measured
# for rngfeed and rngd on the same source through the same instrument,
# bench/shim.so (see its header): it counts every RNDADDENTROPY the kernel
# accepted and lets rngd's poll(POLLOUT) on /dev/random return at once, as
# it did on old kernels while the pool was low.
#
# rngfeed runs with --bench-fill S (stays in the fill phase for S seconds
# whatever the CRNG state, then exits 0); rngd runs S seconds and is
# stopped with SIGTERM by PID.  Figures come from the shim's last record:
# bytes, credited bits, the CLOCK_MONOTONIC time and the process's CPU time
# (all threads) at the moment the record was taken, so both daemons are
# timed and charged the same way, from the shim's constructor (just after
# exec) to the record: start-up included for both.
#
# The kernel's ceiling is bench/bench_ceilings rndaddentropy (back-to-back
# RNDADDENTROPY calls crediting 0 bits, one thread) at the same step size.
#
# Environment: FILL_SECONDS (default 5; smoke 1), BENCH_RUNS, BENCH_SMOKE.
set -uo pipefail
BENCH_DIR=${BENCH_DIR:-$(cd "$(dirname "$0")" && pwd)}
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

SHIM=$BENCH_DIR/shim.so
CEILINGS=$BENCH_DIR/bench_ceilings
W=$BENCH_WORK/fill
SMOKE=${BENCH_SMOKE:-}
if [ -n "$SMOKE" ]; then FILL_SECONDS=${FILL_SECONDS:-1}; else FILL_SECONDS=${FILL_SECONDS:-5}; fi

if [ "$(id -u)" != 0 ]; then note "fill: needs root (RNDADDENTROPY)"; exit 1; fi
if [ ! -r "$SHIM" ]; then note "fill: $SHIM missing (make bench/shim.so)"; exit 1; fi
# --help read whole first: with pipefail, grep -q quitting at its match
# while rngfeed still writes (the text is over 4 KiB) fails the pipe.
if ! grep -q -- --bench-fill <<<"$("$RNGFEED" --help 2>&1)"; then
	note "fill: $RNGFEED has no --bench-fill option"
	exit 1
fi
rm -rf "$W"
mkdir -p "$W"

child=
trap '[ "$BASHPID" != $$ ] || stop_pid child' EXIT
trap '[ "$BASHPID" != $$ ] || stop_pid child; exit 1' INT TERM

# The value of KEY in the shim record FILE.
field() {
	awk -v k="$2" '{ for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) {
		print substr($i, length(k) + 2); exit } }' "$1"
}

# From a shim record: bytes/s, bytes per CPU-second, credited bits/s,
# credited bits per byte, and the seconds and CPU seconds they cover.
rates() {
	awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		wall = (v["snap_mono_ns"] - v["ctor_mono_ns"]) / 1e9
		cpu = v["cpu_ns"] / 1e9
		if (wall <= 0 || cpu <= 0) exit 1
		printf "%.6g %.6g %.6g %.6g %.3f %.3f\n", v["bytes"] / wall,
			v["bytes"] / cpu, v["credited_bits"] / wall,
			v["bytes"] ? v["credited_bits"] / v["bytes"] : 0, wall, cpu }' "$1"
}

# One measured run of CONFIG (name:daemon:source:step); appends its rates
# to $W/NAME.rates.
run_one() {
	local name daemon src step out rc cpu_stat
	IFS=: read -r name daemon src step <<<"$1"
	out=$W/$name.shim
	rm -f "$out" "$out.tmp"
	if [ "$daemon" = rngfeed ]; then
		LD_PRELOAD=$SHIM RNGFEED_SHIM_OUT=$out "$RNGFEED" -f -q -c /dev/null \
			-n "$src" -s "$step" --bench-fill "$FILL_SECONDS" 2>"$W/$name.err" &
		child=$!
		wait "$child"
		rc=$?
		child=
		if [ $rc != 0 ] || [ "$(field "$out" final)" != 1 ]; then
			note "fill: $name: rngfeed exited $rc: $(tail -3 "$W/$name.err")"
			return 1
		fi
		# The daemon's own count must agree with the shim's.
		local own
		own=$(sed -n 's/^bench-fill: .* calls=\([0-9]*\) bytes=\([0-9]*\) credited_bits=\([0-9]*\).*/\1 \2 \3/p' "$W/$name.err")
		if [ "$own" != "$(field "$out" calls) $(field "$out" bytes) $(field "$out" credited_bits)" ]; then
			note "fill: $name: rngfeed says '$own', the shim counted '$(cat "$out")'"
			return 1
		fi
	else
		local args=(-f -p "$W/rngd.pid" -s "$step")
		case $src in
		rdrand) args+=(-n 1 -r "$W/no-hwrng") ;; # DRNG only: no TPM, no hwrng
		hwrng) args+=(-d 1 -n 1 -r /dev/hwrng) ;;
		esac
		LD_PRELOAD=$SHIM RNGFEED_SHIM_OUT=$out rngd "${args[@]}" 2>"$W/$name.err" &
		child=$!
		sleep "$FILL_SECONDS"
		# rngd dies by SIGTERM (no handler, so no destructor): the
		# shim's last periodic record is what is left.  /proc's figure
		# is only a cross-check of the record's CPU time.
		cpu_stat=$(pid_cpu_seconds "$child" 2>/dev/null)
		stop_pid child
		if [ ! -s "$out" ] || [ "$(field "$out" calls)" = 0 ]; then
			note "fill: $name: rngd fed nothing: $(tail -3 "$W/$name.err")"
			return 1
		fi
		note "fill: $name: CPU ${cpu_stat:-?} s from /proc at the stop, $(awk -v c="$(field "$out" cpu_ns)" 'BEGIN { printf "%.3f", c / 1e9 }') s in the last record"
	fi
	rates "$out" >>"$W/$name.rates" || { note "fill: $name: bad record $(cat "$out")"; return 1; }
	note "fill: $name: $(tail -1 "$W/$name.rates") (B/s B/CPU-s bit/s bit/B wall-s CPU-s)"
}

# Median of column COL of $W/NAME.rates.
med() { awk -v c="$2" '{ print $c }' "$W/$1.rates" | median; }

# One run of the kernel's RNDADDENTROPY ceiling at STEP bytes per call:
# appends bytes/s to $W/ceiling-STEP.rates.
ceiling_one() {
	local step=$1 secs=0.5 out
	[ -n "$SMOKE" ] && secs=0.1
	out=$("$CEILINGS" rndaddentropy "$step" "$secs") || {
		note "fill: bench_ceilings rndaddentropy $step $secs failed: $out"
		return 1
	}
	sed -n 's/.*bytes_per_s=\([0-9.]*\).*/\1/p' <<<"$out" >>"$W/ceiling-$step.rates"
}

# 12.3 MB/s style: NUMBER UNIT-SUFFIX (e.g. "B/s", "bit/s").
human() {
	awk -v x="$1" -v u="$2" 'BEGIN { s = ""; if (x >= 1e9) { x /= 1e9; s = "G" }
		else if (x >= 1e6) { x /= 1e6; s = "M" } else if (x >= 1e3) { x /= 1e3; s = "k" }
		printf (x >= 100 ? "%.0f %s%s\n" : "%.3g %s%s\n"), x, s, u }'
}

# shellcheck disable=SC2317 # called through verdict
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }
verdict() { if "$@"; then echo met; else echo MISSED; fi; }

# ---- the runs ----------------------------------------------------------------
if [ -n "$SMOKE" ]; then
	CONFIGS=(rf-rdrand-4096:rngfeed:rdrand:4096)
else
	# rngd's default step is 64, as is ours.  rngd 5 feeds nothing at all
	# with -s 4096 (a step larger than its 2,500-byte block), so 2500 is
	# its largest step and the reference for our 4096.
	CONFIGS=(rf-rdrand-64:rngfeed:rdrand:64 rngd-rdrand-64:rngd:rdrand:64
		 rf-rdrand-4096:rngfeed:rdrand:4096 rngd-rdrand-2500:rngd:rdrand:2500
		 rf-hwrng-64:rngfeed:hwrng:64 rngd-hwrng-64:rngd:hwrng:64
		 rf-hwrng-4096:rngfeed:hwrng:4096 rngd-hwrng-2500:rngd:hwrng:2500)
	command -v rngd >/dev/null || { note "fill: rngd (rng-tools5) missing"; exit 1; }
fi
if [ -n "$SMOKE" ]; then STEPS=(4096); else STEPS=(64 4096); fi
if [ ! -x "$CEILINGS" ]; then
	make -s -C "$BENCH_DIR/.." bench/bench_ceilings >&2 ||
		note "fill: $CEILINGS missing and make failed: no ceiling rows"
fi
note "fill: ${#CONFIGS[@]} configurations x $BENCH_RUNS runs x $FILL_SECONDS s"
failed=0
for ((run = 0; run < BENCH_RUNS; run++)); do
	# Round robin, the ceilings too, so drift in the machine's load hits
	# every one alike.
	for c in "${CONFIGS[@]}"; do
		run_one "$c" || failed=1
	done
	if [ -x "$CEILINGS" ]; then
		for s in "${STEPS[@]}"; do ceiling_one "$s" || failed=1; done
	fi
done
[ $failed = 0 ] || exit 1

# ---- the rows ----------------------------------------------------------------
declare -A CEIL
for s in "${STEPS[@]}"; do
	[ -s "$W/ceiling-$s.rates" ] && CEIL[$s]=$(median <"$W/ceiling-$s.rates")
done

# rows SOURCE OURS-NAME STEP REF-NAME REF-LABEL
rows() {
	local src=$1 ours=$2 step=$3 ref=${4:-} label=${5:-}
	local o_b o_cpu o_bits o_bpb r_b r_cpu r_bits r_bpb what="$src, -s $step"
	o_b=$(med "$ours" 1) o_cpu=$(med "$ours" 2) o_bits=$(med "$ours" 3) o_bpb=$(med "$ours" 4)
	if [ -n "$SMOKE" ]; then
		row 3 "$what: bytes fed per second" "$(human "$o_b" B/s)" "skipped (smoke)"
		row 3 "$what: bytes fed per CPU-second" "$(human "$o_cpu" B/CPU-s)" "skipped (smoke)" "" \
			"≥ 20× rngd's on the same source: not measured (smoke)"
		row 3 "$what: credited bits per second" "$(human "$o_bits" bit/s)" "skipped (smoke)"
		row 3 "$what: credited bits per byte fed" "$(printf '%.4g' "$o_bpb")" "skipped (smoke)"
	else
		r_b=$(med "$ref" 1) r_cpu=$(med "$ref" 2) r_bits=$(med "$ref" 3) r_bpb=$(med "$ref" 4)
		row 3 "$what: bytes fed per second" "$(human "$o_b" B/s)" \
			"$(human "$r_b" B/s) ($label)" "$(ratio "$o_b" "$r_b")"
		row 3 "$what: bytes fed per CPU-second" "$(human "$o_cpu" B/CPU-s)" \
			"$(human "$r_cpu" B/CPU-s) ($label)" "$(ratio "$o_cpu" "$r_cpu")" \
			"≥ 20× rngd's on the same source: $(verdict ge "$o_cpu" "$(awk -v r="$r_cpu" 'BEGIN { print 20 * r }')")"
		row 3 "$what: credited bits per second (ours: at most 256 per reseed, the DRBG's state)" "$(human "$o_bits" bit/s)" \
			"$(human "$r_bits" bit/s) ($label)" "$(xratio "$o_bits" "$r_bits")"
		row 3 "$what: credited bits per byte fed" "$(printf '%.4g' "$o_bpb")" \
			"$(printf '%.4g' "$r_bpb") ($label)" "$(xratio "$o_bpb" "$r_bpb")" \
			"$([ "$src" = rdrand ] && echo "< 8 (RDRAND output is not full entropy): $(verdict ge 8 "$o_bpb")")"
	fi
	# Against the kernel's own ceiling at this step (rdrand rows only:
	# the DRBG output rate does not depend on the source).
	if [ "$src" = rdrand ]; then
		local c=${CEIL[$step]:-}
		if [ -z "$c" ]; then
			row 3 "$what: bytes fed per second vs the kernel's RNDADDENTROPY ceiling" \
				"$(human "$o_b" B/s)" "not measured ($CEILINGS missing)" "" \
				"within 2× of the ceiling: not measured"
		else
			row 3 "$what: bytes fed per second vs the kernel's RNDADDENTROPY ceiling" \
				"$(human "$o_b" B/s)" "$(human "$c" B/s) ($step-byte calls, credit 0, one thread)" \
				"$(ratio "$o_b" "$c")" \
				"within 2× of the ceiling: $(verdict ge "$o_b" "$(awk -v c="$c" 'BEGIN { print c / 2 }')")"
		fi
	fi
}

if [ -n "$SMOKE" ]; then
	rows rdrand rf-rdrand-4096 4096
else
	rows rdrand rf-rdrand-64 64 rngd-rdrand-64 "rngd, -s 64"
	rows rdrand rf-rdrand-4096 4096 rngd-rdrand-2500 "rngd, -s 2500, its largest"
	rows hwrng rf-hwrng-64 64 rngd-hwrng-64 "rngd, -s 64"
	rows hwrng rf-hwrng-4096 4096 rngd-hwrng-2500 "rngd, -s 2500, its largest"
fi
exit 0
