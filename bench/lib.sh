# shellcheck shell=bash
# Shared by the bench/*.sh scripts: the row protocol and /proc readers.
#
# Row protocol: every measured figure is one line on stdout
#   ROW<TAB>section<TAB>what<TAB>ours<TAB>reference<TAB>ratio<TAB>target
# section is 1..6 (issue 9's numbering); ours and reference carry their
# units; ratio is "12.3×" or "—"; target is "" or e.g. "≥ 30× rngtest: met"
# / "... : MISSED".  Progress and diagnostics go to stderr.  bench/run.sh
# collects the rows into one Markdown table.
#
# Environment: RNGFEED (the daemon binary), BENCH_SMOKE=1 (seconds, not
# minutes; no peers), BENCH_RUNS (repetitions for medians), BENCH_WORK
# (scratch directory, git-ignored).

BENCH_DIR=${BENCH_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
RNGFEED=${RNGFEED:-$BENCH_DIR/../rngfeed}
BENCH_WORK=${BENCH_WORK:-$BENCH_DIR/work}
if [ -n "${BENCH_SMOKE:-}" ]; then BENCH_RUNS=${BENCH_RUNS:-1}; else BENCH_RUNS=${BENCH_RUNS:-5}; fi
mkdir -p "$BENCH_WORK"

row() { # section what ours reference ratio target
	printf 'ROW\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "${5:-—}" "${6:-}"
}

note() { echo "bench: $*" >&2; }

# Median of the numbers on stdin, one per line.
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1;
		if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# "12.3×" for a/b, "—" when b is 0 or either is not a number.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 == a && b + 0 == b && b != 0)
		printf "%.2f×\n", a / b; else print "—" }'
}

# CPU seconds (user + system, all threads, reaped children excluded) of PID.
pid_cpu_seconds() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}

# Voluntary context switches summed over every thread of PID.
pid_voluntary_switches() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
		awk '/^voluntary_ctxt_switches:/ { s += $2 } END { print s + 0 }'
}

# Peak resident set of PID in KiB (VmHWM).
pid_peak_rss_kib() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"
}
