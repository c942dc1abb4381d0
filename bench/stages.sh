#!/bin/bash
# Section 2, stages: each stage of the pipeline against its ceiling or its
# peer, both measured in this run.
#   - the integrity monitor (FIPS 140-2 + SP 800-90B, one core) against
#     rngtest on the same bytes (bench_monitor), default dispatch and the
#     portable code; target >= 1 GB/s and >= 30x rngtest;
#   - CTR_DRBG generate against libgcrypt AES-256-CTR (bench_drbg);
#     target >= 50 %;
#   - each source driver (rngfeed --raw -n NAME) against the raw source
#     in a tight loop (bench_ceilings): rdrand, rdseed, hwrng, and tpm on a
#     software TPM (swtpm) against a raw TPM2_GetRandom loop on its socket.
# BENCH_SMOKE=1: tiny sizes, one run, no peers (no rngtest, no swtpm).
set -uo pipefail
BENCH_DIR=${BENCH_DIR:-$(cd "$(dirname "$0")" && pwd)}
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

CEIL=$BENCH_DIR/bench_ceilings MON=$BENCH_DIR/bench_monitor DRBG=$BENCH_DIR/bench_drbg
for b in bench_ceilings bench_monitor bench_drbg; do
	[ -x "$BENCH_DIR/$b" ] || make -s -C "$BENCH_DIR/.." "bench/$b" >&2 || {
		note "stages: bench/$b missing and make failed"
		exit 1
	}
done
[ -x "$RNGFEED" ] || { note "stages: $RNGFEED missing (make rngfeed)"; exit 1; }

if [ -n "${BENCH_SMOKE:-}" ]; then
	MON_ARGS=(-r 1 -p 1) DRBG_ARGS=(-r 1 -t 0.05)
	N_RDRAND=$((4 << 20)) N_RDSEED=$((16 << 10)) T_CPU=0.05 T_HWRNG=0.2
else
	# 32 MiB: rngtest takes about a second over it, the monitor ~30 ms.
	MON_ARGS=(-r "$BENCH_RUNS" 32) DRBG_ARGS=(-r "$BENCH_RUNS" -t 0.3)
	# RDSEED gives ~0.3 MB/s here (95 % of attempts fail), so 256 KiB
	# is most of a second; RDRAND's 128 MiB about half a second.
	N_RDRAND=$((128 << 20)) N_RDSEED=$((256 << 10)) T_CPU=0.5 T_HWRNG=2
	T_TPM=0.5
fi

W=$(mktemp -d "$BENCH_WORK/stages.XXXXXX") || exit 1
swtpm_pid='' tpm_dir=''
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	stop_pid swtpm_pid
	[ -n "$tpm_dir" ] && rm -rf "$tpm_dir"
	rm -rf "$W"
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT
trap 'exit 130' INT TERM
failed=0

# ---- helpers (measure, load, med, rate, why_not: bench/lib.sh) ----

# driver KEY CEILING-KEY BYTES LIMIT rngfeed-arguments...: times "rngfeed
# ARGS --bytes BYTES >/dev/null" and appends its rate to $W/KEY; not run
# (with the ceiling's reason) when the source's ceiling could not be.  LIMIT "none": the run
# must write BYTES and exit 0.  LIMIT in seconds (the slow sources): it is
# stopped with SIGINT then, and the bytes it wrote, counted through wc,
# make the rate.
driver() {
	local key=$1 ceil=$2 n=$3 limit=$4 t0 t1 rc got=$3
	shift 4
	[ -e "$W/$key.na" ] && return 0
	if [ -e "$W/$ceil.na" ]; then
		cp "$W/$ceil.na" "$W/$key.na"
		return 0
	fi
	t0=$EPOCHREALTIME
	if [ "$limit" = none ]; then
		"$RNGFEED" "$@" --bytes "$n" >/dev/null 2>"$W/err"
		rc=$?
	else
		timeout -s INT "$limit" "$RNGFEED" "$@" --bytes "$n" 2>"$W/err" | wc -c >"$W/count"
		rc=${PIPESTATUS[0]}
		got=$(cat "$W/count")
	fi
	t1=$EPOCHREALTIME
	# 124: the time limit, which is how a slow source's run may end.
	if [ "$rc" != 0 ] && { [ "$rc" != 124 ] || [ "$got" = 0 ]; }; then
		note "stages: rngfeed $* --bytes $n failed (exit $rc): $(tail -n 3 "$W/err")"
		echo "failed: rngfeed exit $rc: $(tail -n 1 "$W/err")" >"$W/$key.na"
		failed=1
		return
	fi
	[ "$rc" = 124 ] && note "stages: rngfeed $* stopped after $limit s with $got of $n bytes"
	awk -v b="$got" -v a="$t0" -v z="$t1" \
		'BEGIN { printf "driver bytes_per_s=%.1f bytes=%d seconds=%.3f\n", b / (z - a), b, z - a }' \
		>>"$W/$key"
}

# A bench line's field: field LINE KEY.
field() { [[ " $1 " =~ \ $2=([^ ]*)\  ]] && echo "${BASH_REMATCH[1]}"; }

# ---- the integrity monitor against rngtest ----
note "stages: integrity monitor and rngtest (bench_monitor ${MON_ARGS[*]})"
if mon=$("$MON" "${MON_ARGS[@]}"); then
	peer=$(grep '^rngtest ' <<<"$mon")
	peer_bps=$(field "$peer" bytes_per_s)
	mib=$(awk -v b="$(field "$peer" bytes)" 'BEGIN { printf "%.0f", b / 1048576 }')
	if [ -n "$peer_bps" ]; then
		peer_text="rngtest: $(rate "$peer_bps") (same ${mib:-?} MiB, same run)"
	elif [ -n "${BENCH_SMOKE:-}" ]; then
		peer_text="skipped (smoke)"
	else
		peer_text="rngtest: not measured: ${peer#*reason=}"
	fi
	goal="≥ 1 GB/s and ≥ 30× rngtest"
	for which in default portable binary; do
		case $which in
		default) line=$(grep '^monitor dispatch=default .* samples=8 ' <<<"$mon") ;;
		portable) line=$(grep '^monitor dispatch=portable .* samples=8 ' <<<"$mon") ;;
		binary) line=$(grep '^monitor dispatch=default .* samples=1 ' <<<"$mon") ;;
		esac
		bps=$(field "$line" bytes_per_s)
		simd=$(field "$line" simd)
		[ "$simd" = avx512 ] && code=AVX-512 || code="portable code, no AVX-512 here"
		case $which in
		default) what="Integrity monitor (FIPS 140-2 + SP 800-90B), byte samples, one core: default dispatch ($code)" ;;
		portable) what="Integrity monitor, byte samples, one core: portable path (no SIMD)" ;;
		binary) what="Integrity monitor, binary samples (1 bit each; no driver uses them), one core, $code" ;;
		esac
		ours="$(rate "$bps") ($(field "$line" failed) of $(field "$line" blocks) random blocks failed a test)"
		if [ "$which" = binary ]; then
			target=""
		elif [ -n "${BENCH_SMOKE:-}" ]; then
			target="$goal: not judged (smoke)"
		elif [ -z "$peer_bps" ]; then
			target="$goal: not judged (no rngtest figure)"
		elif awk -v a="$bps" -v b="$peer_bps" 'BEGIN { exit !(a >= 1e9 && a >= 30 * b) }'; then
			target="$goal: met"
		else
			target="$goal: MISSED"
		fi
		row 2 "$what" "$ours" "$peer_text" "$(xratio "$bps" "$peer_bps")" "$target"
	done
	# Issue 19: the on-line estimate a reader runs on the blocks that
	# passed, per block, against the monitor's cost per block.
	free_line=$(grep '^estimate budget=0 ' <<<"$mon")
	kept_line=$(grep '^estimate budget=0.0' <<<"$mon")
	mon_bps=$(field "$(grep '^monitor dispatch=default .* samples=8 ' <<<"$mon")" bytes_per_s)
	if [ -n "$free_line" ] && [ -n "$kept_line" ] && [ -n "$mon_bps" ]; then
		read -r free_ns est_ms mon_ns kept_ns < <(awk -v f="$(field "$free_line" ns_per_block)" \
			-v b="$(field "$free_line" blocks)" -v e="$(field "$free_line" estimates)" \
			-v m="$mon_bps" -v k="$(field "$kept_line" ns_per_block)" \
			'BEGIN { printf "%.0f %.2f %.0f %.0f\n", f, f * b / e / 1e6, 2500e9 / m, k }')
		row 2 "On-line min-entropy estimate (MCV, Markov and lag over the last 26 blocks), byte samples, per block, one core" \
			"$((free_ns / 1000)) µs with no budget (one estimate, $est_ms ms, with each quarter window); with the daemon's budget $kept_ns ns over $(field "$kept_line" blocks) blocks ($(field "$kept_line" estimates) estimates: those while the window fills)" \
			"integrity monitor: $mon_ns ns per block (same run)" "$(xratio "$free_ns" "$mon_ns")" \
			"reported: the daemon spends at most 2 % of a reader's CPU on it once the window is full"
	fi
else
	note "stages: bench_monitor failed"
	failed=1
	row 2 "Integrity monitor (FIPS 140-2 + SP 800-90B), one core" "not measured: bench_monitor failed" "" "—" ""
fi

# ---- CTR_DRBG against AES-256-CTR ----
note "stages: CTR_DRBG and AES-256-CTR (bench_drbg ${DRBG_ARGS[*]})"
if drbg=$("$DRBG" "${DRBG_ARGS[@]}"); then
	aes=$(field "$(grep '^aes_ctr buffer=1048576 ' <<<"$drbg")" bytes_per_s)
	bulk=$(field "$(grep '^drbg request=65536 ' <<<"$drbg")" bytes_per_s)
	small_line=$(grep '^drbg request=64 ' <<<"$drbg")
	small=$(field "$small_line" bytes_per_s)
	calls=$(field "$small_line" calls_per_s)
	ref="AES-256-CTR, 1 MiB buffers: $(rate "$aes") (same run, interleaved)"
	goal="≥ 50 % of AES-256-CTR"
	# Smoke figures last 50 ms each: one preemption decides them.
	if [ -n "${BENCH_SMOKE:-}" ]; then
		target="$goal: not judged (smoke)"
	elif awk -v a="$bulk" -v b="$aes" 'BEGIN { exit !(a >= 0.5 * b) }'; then
		target="$goal: met"
	else
		target="$goal: MISSED"
	fi
	row 2 "CTR_DRBG generate (AES-256, df), 64 KiB requests, one core" "$(rate "$bulk")" \
		"$ref" "$(xratio "$bulk" "$aes")" "$target"
	us=$(awk -v c="$calls" 'BEGIN { printf "%.2f", 1e6 / c }')
	row 2 "CTR_DRBG generate, 64 B + 64 B additional input (one feeder write)" \
		"$(rate "$small"), $(rate "$calls" calls/s) ($us µs per call)" "$ref" "$(xratio "$small" "$aes")" ""
else
	note "stages: bench_drbg failed"
	failed=1
	row 2 "CTR_DRBG generate (AES-256, df), 64 KiB requests" "not measured: bench_drbg failed" "" "—" ""
fi

# ---- source drivers against their ceilings ----
# Byte count for a time-bound run of a source: its ceiling rate (first run)
# times T, at least one 2,500-byte block, in whole 64-byte words.
bytes_for() {
	awk -v r="$1" -v t="$2" 'BEGIN { n = r * t; if (n < 2560) n = 2560;
		printf "%d\n", int(n / 64) * 64 }'
}

n_hwrng=
for ((r = 1; r <= BENCH_RUNS; r++)); do
	note "stages: source drivers, run $r of $BENCH_RUNS"
	# Ceiling then driver, back to back, so both see the same load.
	measure rdrand rdrand "$T_CPU"
	driver rdrand_drv rdrand "$N_RDRAND" none --raw -n rdrand
	measure rdseed rdseed "$T_CPU"
	driver rdseed_drv rdseed "$N_RDSEED" none --raw -n rdseed
	measure hwrng hwrng "$T_HWRNG"
	if [ -z "$n_hwrng" ] && v=$(med hwrng bytes_per_s); then
		n_hwrng=$(bytes_for "$v" "$T_HWRNG")
	fi
	if [ -n "$n_hwrng" ]; then
		# A slow host could make N bytes take much longer than T:
		# the limit ends the run and the rate counts what came.
		driver hwrng_drv hwrng "$n_hwrng" "$(awk -v t="$T_HWRNG" 'BEGIN { print 3 * t + 1 }')" \
			--raw -n hwrng
	elif [ ! -e "$W/hwrng_drv.na" ]; then
		cp "$W/hwrng.na" "$W/hwrng_drv.na" 2>/dev/null || echo "no ceiling figure" >"$W/hwrng_drv.na"
	fi
done

# driver_row LABEL KEY CEILING-KEY CEILING-TEXT
driver_row() {
	local d c ref
	if c=$(med "$3" bytes_per_s); then
		ref="$4: $(rate "$c") (same run)"
	else
		ref="$4: $(why_not "$3")"
	fi
	if d=$(med "$2" bytes_per_s); then
		row 2 "$1" "$(rate "$d")" "$ref" "$(xratio "$d" "${c:-}")" ""
	else
		row 2 "$1" "$(why_not "$2")" "$ref" "—" ""
	fi
}
hwrng_name=$(cat /sys/class/misc/hw_random/rng_current 2>/dev/null || echo "?")
driver_row "rdrand driver: rngfeed --raw -n rdrand, $((N_RDRAND >> 20)) MiB to /dev/null" \
	rdrand_drv rdrand "RDRAND loop"
driver_row "rdseed driver: rngfeed --raw -n rdseed, $((N_RDSEED >> 10)) KiB to /dev/null" \
	rdseed_drv rdseed "RDSEED loop"
driver_row "hwrng driver: rngfeed --raw -n hwrng ($hwrng_name; the virtio source reads the same device), ~$T_HWRNG s per run" \
	hwrng_drv hwrng "/dev/hwrng read loop"

# ---- tpm on a software TPM ----
tpm_label="tpm driver: rngfeed --raw -n tpm -O tpm:device=unix:S on swtpm"
if [ -n "${BENCH_SMOKE:-}" ]; then
	row 2 "$tpm_label" "not measured: smoke (no swtpm)" "skipped (smoke)" "—" ""
elif ! command -v swtpm >/dev/null; then
	row 2 "$tpm_label" "not measured: swtpm not installed" "raw TPM2_GetRandom loop: not measured" "—" ""
else
	# A short path: unix socket paths are limited to 108 bytes.
	tpm_dir=$(mktemp -d /tmp/rngfeed-bench-tpm.XXXXXX) || exit 1
	swtpm socket --tpm2 --server "type=unixio,path=$tpm_dir/S" \
		--ctrl "type=unixio,path=$tpm_dir/C" --tpmstate "dir=$tpm_dir" \
		--flags not-need-init,startup-clear >"$tpm_dir/log" 2>&1 &
	swtpm_pid=$!
	for _ in $(seq 50); do
		[ -S "$tpm_dir/S" ] && break
		kill -0 "$swtpm_pid" 2>/dev/null || break
		sleep 0.1
	done
	if [ ! -S "$tpm_dir/S" ]; then
		note "stages: swtpm did not start: $(tail -n 3 "$tpm_dir/log")"
		failed=1
		echo "swtpm did not start" >"$W/tpm.na"
	fi
	n_tpm=
	for ((r = 1; r <= BENCH_RUNS; r++)); do
		note "stages: tpm on swtpm, run $r of $BENCH_RUNS"
		# swtpm serves one client at a time: the loop closes its
		# connection before rngfeed opens one.
		measure tpm tpm "$tpm_dir/S" "$T_TPM"
		if [ -z "$n_tpm" ] && v=$(med tpm bytes_per_s); then
			n_tpm=$(bytes_for "$v" "$T_TPM")
		fi
		[ -n "$n_tpm" ] || break
		driver tpm_drv tpm "$n_tpm" none --raw -n tpm -O "tpm:device=unix:$tpm_dir/S"
	done
	if c=$(med tpm bytes_per_s); then
		ref="raw TPM2_GetRandom loop, 64 B per call, same socket: $(rate "$c"), $(rate "$(med tpm calls_per_s)" calls/s) (same run)"
	else
		ref="raw TPM2_GetRandom loop: $(why_not tpm)"
	fi
	if d=$(med tpm_drv bytes_per_s); then
		row 2 "$tpm_label" "$(rate "$d")" "$ref" "$(xratio "$d" "${c:-}")" ""
	else
		row 2 "$tpm_label" "$(why_not tpm_drv)" "$ref" "—" ""
	fi
fi

exit $failed
