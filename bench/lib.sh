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

# stop_pid NAME: SIGTERM the process whose PID the variable NAME holds,
# reap it and empty NAME; nothing when NAME is empty.
stop_pid() {
	local -n stop_pid_ref=$1
	if [ -n "$stop_pid_ref" ]; then
		kill -TERM "$stop_pid_ref" 2>/dev/null
		wait "$stop_pid_ref" 2>/dev/null
		stop_pid_ref=
	fi
}

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

# ---- for the parts that read key=value lines into $W (a scratch directory
# of theirs): ceilings.sh, stages.sh, output.sh ----

# measure KEY bench_ceilings-arguments...: appends its output line to
# $W/KEY, or records why it could not run in $W/KEY.na (not tried again);
# a failed run sets failed=1.
measure() {
	local key=$1 out rc
	shift
	[ -e "$W/$key.na" ] && return 0
	out=$("$CEIL" "$@" 2>"$W/err")
	rc=$?
	case $rc in
	0) echo "$out" >>"$W/$key" ;;
	3) echo "${out#*reason=}" >"$W/$key.na" ;;
	*)
		note "$(basename "$0" .sh): bench_ceilings $* failed (exit $rc): $(cat "$W/err")"
		echo "failed: $(head -n 1 "$W/err")" >"$W/$key.na"
		# shellcheck disable=SC2034 # the sourcing part's exit status
		failed=1
		;;
	esac
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

# ratio, with two significant figures below 0.1 (0.0071×, not
# 0.01×): the slow sources sit far below their ceilings.
xratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 == a && b + 0 == b && b != 0) {
		r = a / b; printf (r < 0.1 ? "%.2g×\n" : "%.2f×\n"), r } else print "—" }'
}

# "why not" text for a key that has no figure.
why_not() {
	if [ -e "$W/$1.na" ]; then echo "not measured: $(cat "$W/$1.na")"; else echo "not measured"; fi
}

# rate 1234567 -> "1.23 MB/s"; rate 1234567 calls/s -> "1.23M calls/s"
# (decimal prefixes, three significant figures).
rate() {
	awk -v v="$1" -v u="${2:-B/s}" 'BEGIN {
		split("k M G T", p, " "); s = ""
		for (i = 1; v >= 1000 && i <= 4; i++) { v /= 1000; s = p[i] }
		f = v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f"
		if (u ~ /^B/) printf f " %s%s\n", v, s, u; else printf f "%s %s\n", v, s, u }'
}
