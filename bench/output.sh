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
# 1 MiB of output by default), and RDSEED is slow here.
if [ -n "${BENCH_SMOKE:-}" ]; then
	N_RDRAND=$((64 << 20)) N_RDSEED=$((2 << 20)) T_AES=0.05
else
	N_RDRAND=$((2 << 30)) N_RDSEED=$((64 << 20)) T_AES=0.3
fi

W=$(mktemp -d "$BENCH_WORK/output.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
failed=0

# stdout_rate KEY BYTES SOURCE: times one --stdout run, appends its rate.
stdout_rate() {
	local key=$1 n=$2 src=$3 t0 t1 rc
	[ -e "$W/$key.na" ] && return 0
	t0=$EPOCHREALTIME
	"$RNGFEED" --stdout -n "$src" --bytes "$n" >/dev/null 2>"$W/err"
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

# load KEY: M[field] = the median of each numeric field over KEY's runs,
# in one awk (each fork costs ~10 ms on this loaded 2-CPU machine, and
# smoke runs have a budget of seconds).  False when KEY has no run.
declare -A M
load() {
	local k v
	M=()
	[ -s "$W/$1" ] || return 1
	while read -r k v; do M[$k]=$v; done < <(awk '
		{ for (i = 2; i <= NF; i++) {
			e = index($i, "="); k = substr($i, 1, e - 1); x = substr($i, e + 1)
			if (e && x ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) v[k, ++n[k]] = x + 0 } }
		END { for (k in n) { c = n[k]
			for (i = 1; i <= c; i++) a[i] = v[k, i]
			for (i = 2; i <= c; i++) { t = a[i]
				for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
				a[j + 1] = t }
			printf "%s %.17g\n", k, c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2 } }' "$W/$1")
}

# med KEY FIELD: one median, for a single use.
med() { load "$1" && [ -n "${M[$2]:-}" ] && echo "${M[$2]}"; }

# ratio from lib.sh, with two significant figures below 0.1 (0.0071×, not
# 0.01×): the slow sources sit far below their ceilings.
xratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 == a && b + 0 == b && b != 0) {
		r = a / b; printf (r < 0.1 ? "%.2g×\n" : "%.2f×\n"), r } else print "—" }'
}

why_not() {
	if [ -e "$W/$1.na" ]; then echo "not measured: $(cat "$W/$1.na")"; else echo "not measured"; fi
}

rate() {
	awk -v v="$1" 'BEGIN { split("k M G T", p, " "); s = ""
		for (i = 1; v >= 1000 && i <= 4; i++) { v /= 1000; s = p[i] }
		printf (v >= 100 ? "%.0f %sB/s\n" : v >= 10 ? "%.1f %sB/s\n" : "%.2f %sB/s\n"), v, s }'
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
	stdout_rate rdseed "$N_RDSEED" rdseed
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
	what="rngfeed --stdout -n $src, $((n >> 20)) MiB to /dev/null (CTR_DRBG output, reseeded from tested $src blocks)"
	if v=$(med "$src" bytes_per_s); then
		row 4 "$what" "$(rate "$v")" "$ref" "$(xratio "$v" "$aes")" ""
	else
		row 4 "$what" "$(why_not "$src")" "$ref" "—" ""
	fi
done
exit $failed
