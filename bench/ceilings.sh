#!/bin/bash
# Section 1, ceilings: how fast each raw source and the kernel sink go on
# this machine with nothing of rngfeed's in the way (bench_ceilings.c).
# The reference column is the figure measured on this machine type before
# the project started (the team's notes, figures copied below); the ratio
# ours/that is only a plausibility check, not a target.
set -uo pipefail
BENCH_DIR=${BENCH_DIR:-$(cd "$(dirname "$0")" && pwd)}
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

CEIL=$BENCH_DIR/bench_ceilings
if [ ! -x "$CEIL" ]; then
	make -s -C "$BENCH_DIR/.." bench/bench_ceilings >&2 || {
		note "ceilings: $CEIL missing and make failed"
		exit 1
	}
fi

# Seconds per measurement: full runs are long enough to swamp start-up
# and timer granularity; smoke runs only prove that every path works.
if [ -n "${BENCH_SMOKE:-}" ]; then
	T_CPU=0.05 T_HWRNG=0.2 T_AES=0.05 T_RND=0.03
else
	T_CPU=1 T_HWRNG=2 T_AES=0.5 T_RND=0.5
fi

W=$(mktemp -d "$BENCH_WORK/ceilings.XXXXXX") || exit 1
trap '[ "$BASHPID" != $$ ] || rm -rf "$W"' EXIT
failed=0

# 3 significant figures: 47211.0 -> 47200, 0.000512 -> 0.000512.
sig3() { awk -v v="$1" 'BEGIN { printf "%.3g\n", v }'; }

# Nanoseconds per word, in ns or µs.
per_word() {
	awk -v v="$1" 'BEGIN { if (v >= 1000) printf "%.3g µs per word\n", v / 1000;
		else printf "%.3g ns per word\n", v }'
}

hwrng_name=$(cat /sys/class/misc/hw_random/rng_current 2>/dev/null || echo "?")
sizes=(64 512 4096)
for ((r = 1; r <= BENCH_RUNS; r++)); do
	note "ceilings: run $r of $BENCH_RUNS"
	# Interleaved, so a burst of load from elsewhere touches every figure
	# a little rather than one figure a lot.
	measure rdrand rdrand "$T_CPU"
	measure rdseed rdseed "$T_CPU"
	measure hwrng hwrng "$T_HWRNG"
	measure aes aes "$T_AES"
	for s in "${sizes[@]}"; do
		measure "rnd$s" rndaddentropy "$s" "$T_RND"
	done
done

# Reference figures from the team's notes (medians of 3-5 runs on this machine
# type before the project started), in bytes per second.
REF_RDRAND=394e6 REF_RDSEED=14.1e6 REF_HWRNG=$((93 * 1024 / 10)) REF_AES=13.7e9
declare -A REF_RND=([64]=$((64 * 100000000 / 78)) [512]=224e6 [4096]=307e6)
declare -A REF_RND_TEXT=([64]="0.78 µs per call (82 MB/s)" [512]="224 MB/s" [4096]="307 MB/s")
PLAUS="plausibility check, not a target"

if load rdrand; then
	v=${M[bytes_per_s]}
	ours="$(rate "$v"), $(per_word "${M[ns_per_word]}"), ${M[failures]} carry-clear failures"
	row 1 "RDRAND 64-bit, one thread, tight loop (retry on carry clear)" "$ours" \
		"before the project: 394 MB/s, 20 ns per word" "$(xratio "$v" "$REF_RDRAND")" "$PLAUS"
else
	row 1 "RDRAND 64-bit, one thread, tight loop" "$(why_not rdrand)" "before the project: 394 MB/s" "—" "$PLAUS"
fi

if load rdseed; then
	v=${M[bytes_per_s]}
	ours="$(rate "$v"), $(per_word "${M[ns_per_word]}"); $(sig3 "${M[failure_pct]}") % of attempts carry-clear (longest run ${M[longest_failure_run]})"
	row 1 "RDSEED 64-bit, one thread, tight loop (retry on carry clear)" "$ours" \
		"before the project: 14.1 MB/s, ~0.0005 % failures" "$(xratio "$v" "$REF_RDSEED")" "$PLAUS"
else
	row 1 "RDSEED 64-bit, one thread, tight loop" "$(why_not rdseed)" "before the project: 14.1 MB/s" "—" "$PLAUS"
fi

if load hwrng; then
	v=${M[bytes_per_s]}
	row 1 "/dev/hwrng ($hwrng_name), 64 KiB reads, $T_HWRNG s per run" "$(rate "$v")" \
		"before the project: 9.3 KiB/s" "$(xratio "$v" "$REF_HWRNG")" "$PLAUS"
else
	row 1 "/dev/hwrng, 64 KiB reads" "$(why_not hwrng)" "before the project: 9.3 KiB/s" "—" "$PLAUS"
fi

if load aes; then
	v=${M[bytes_per_s]}
	row 1 "libgcrypt AES-256-CTR, 1 MiB buffers, one core" "$(rate "$v")" \
		"before the project: 13.7 GB/s" "$(xratio "$v" "$REF_AES")" "$PLAUS"
else
	row 1 "libgcrypt AES-256-CTR, 1 MiB buffers" "$(why_not aes)" "before the project: 13.7 GB/s" "—" "$PLAUS"
fi

for s in "${sizes[@]}"; do
	label="RNDADDENTROPY on /dev/random, $s B per call, credit 0 bits"
	if load "rnd$s"; then
		v=${M[bytes_per_s]}
		ours="$(rate "$v"), $(rate "${M[calls_per_s]}" "calls/s") ($(sig3 "${M[us_per_call]}") µs per call)"
		row 1 "$label" "$ours" "before the project: ${REF_RND_TEXT[$s]}" \
			"$(xratio "$v" "${REF_RND[$s]}")" "$PLAUS"
	else
		row 1 "$label" "$(why_not "rnd$s")" "before the project: ${REF_RND_TEXT[$s]}" "—" "$PLAUS"
	fi
done

exit $failed
