#!/bin/bash
# make bench / make bench-smoke: runs every bench/*.sh part below, collects
# their ROW lines (protocol in bench/lib.sh) into one Markdown table, prints
# it and writes it with the CPU model, kernel and date to bench/results.md
# (bench-smoke writes bench/work/results-smoke.md instead, leaving the
# committed results alone).  A part that fails fails the run.
set -uo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
export BENCH_DIR
export RNGFEED=${RNGFEED:-$BENCH_DIR/../rngfeed}
case $RNGFEED in /*) ;; *) RNGFEED=$PWD/$RNGFEED ;; esac
# shellcheck source=bench/lib.sh
. "$BENCH_DIR/lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "bench: needs root (RNDADDENTROPY, /dev/hwrng, starting peers)" >&2
	exit 2
fi
if [ -z "${BENCH_SMOKE:-}" ]; then
	# The peers, measured in the same run.
	missing=()
	for p in rngd:rng-tools5 rngtest:rng-tools5 jitterentropy-rngd:jitterentropy-rngd \
		 haveged:haveged swtpm:swtpm; do
		command -v "${p%%:*}" >/dev/null || missing+=("${p#*:}")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		note "installing the peers: ${missing[*]}"
		apt-get update -q >&2 &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			"${missing[@]}" >&2 || { note "apt-get failed"; exit 1; }
		# Debian starts some of them as services: the benchmark starts
		# and stops its own, so stop those by name.
		pkill -x haveged; pkill -x jitterentropy-rngd; pkill -x rngd
	fi
fi

PARTS=(ceilings stages fill output steady startup assess egd)
rows=$BENCH_WORK/rows.tsv
: >"$rows"
failed=0
start=$(date +%s)
for part in "${PARTS[@]}"; do
	script=$BENCH_DIR/$part.sh
	if [ ! -x "$script" ]; then
		note "part $part: $script missing"
		failed=1
		continue
	fi
	note "part $part"
	"$script" >"$BENCH_WORK/$part.out"
	rc=$?
	grep '^ROW' "$BENCH_WORK/$part.out" >>"$rows"
	grep -v '^ROW' "$BENCH_WORK/$part.out" >&2
	if [ $rc != 0 ]; then
		note "part $part FAILED (exit $rc)"
		failed=1
	fi
done

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
names=(x "Ceilings" "Stages" "Fill phase" "Conditioned output" "Steady state (60 s after the CRNG is ready)" "Start-up" "Min-entropy assessment (--assess against NIST's ea_non_iid)" "EGD server: output served to local clients")
{
	echo "# rngfeed benchmark results"
	echo
	echo "$( [ -n "${BENCH_SMOKE:-}" ] && echo "Smoke run (short, no peers) — " )$(date -u '+%Y-%m-%d %H:%M UTC'); CPU: $cpu ($(nproc) CPUs); kernel $(uname -r); medians of $BENCH_RUNS runs; $(($(date +%s) - start)) s in all."
	echo
	echo "| what | ours | reference (same run) | ratio | target |"
	echo "|---|---|---|---|---|"
	for s in 1 2 3 4 5 6 7 8; do
		if grep -q "^ROW	$s	" "$rows"; then
			echo "| **${names[$s]}** | | | | |"
			awk -F'\t' -v s="$s" '$1 == "ROW" && $2 == s {
				printf "| %s | %s | %s | %s | %s |\n", $3, $4, $5, $6, $7 }' "$rows"
		fi
	done
} >"$BENCH_WORK/table.md"
cat "$BENCH_WORK/table.md"
if [ -n "${BENCH_SMOKE:-}" ]; then
	cp "$BENCH_WORK/table.md" "$BENCH_WORK/results-smoke.md"
else
	cp "$BENCH_WORK/table.md" "$BENCH_DIR/results.md"
	note "written to bench/results.md"
fi
n=$(grep -c '^ROW' "$rows")
[ "$n" -gt 0 ] || { note "no rows measured"; failed=1; }
exit $failed
