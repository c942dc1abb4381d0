#!/bin/bash
# Runs every unit test program (Check) and integration script given as
# arguments and prints one closing line "tests: N passed, N failed, N skipped".
# A Check program counts as many tests as it has checks; a script is one test,
# exit 0 = pass, 77 = skip (it prints the reason), anything else = fail.
# A part that a passing script or a check skipped ("SKIP: reason" on its
# own line) is counted as skipped too: a run that skipped something never
# reads "0 skipped".
#
# RUN_TESTS_JOBS (default 1): how many tests run at once.  The suite mostly
# waits (daemons started, signalled, timed out: about a quarter of one
# core), so make check runs several.  A script that takes the machine's
# hw_random hand-over (a line "# run-tests: alone" among its first five)
# never runs beside another such script: two daemons on the device would
# see each other as the other owner.  RUN_TESTS_ALONE_LOCK=FILE (unset by
# default) extends that across runs: each such script runs under flock(1) on
# FILE, so several checkouts tested at once on one machine take turns; the
# lock is flock's own (-o), never inherited by the script's processes, so
# a daemon a script leaves behind does not hold every run's turn forever.
# RUN_TESTS_TIMES=FILE: each test's wall time appended to FILE ("SECONDS
# NAME [alone]"), for trimming the suite's time.
# Every test has a RUNTIME_DIRECTORY and STATE_DIRECTORY
# of its own.  Each test's report is printed when it ends, whole.
set -u
passed=0 failed=0 skipped=0 failed_names=()
jobs_max=${RUN_TESTS_JOBS:-1}
[[ "$jobs_max" =~ ^[1-9][0-9]?$ ]] || { echo "RUN_TESTS_JOBS: '$jobs_max' is not 1-99" >&2; exit 2; }
work=$(mktemp -d) || exit 2
trap '[ "$BASHPID" != $$ ] || rm -rf "$work"' EXIT
# The kernel's hw_random credit is the machine's: a rngfeed service may
# hand it over (0) or back at any time while the tests run.  The harness
# never writes it; a change it sees between two tests is said once, as the
# machine's, and fails no test.  The tests that start a daemon on the
# device check and restore their own daemon's hand-over themselves; it is
# looked at when such a test ends (no other one runs then).
# (HWRNG_QUALITY_FILE: tests/test_run_tests.sh's stand-in.)
quality=${HWRNG_QUALITY_FILE:-/sys/class/misc/hw_random/rng_quality}
quality_seen=$(cat "$quality" 2>/dev/null)
quality_changes=0
note_quality_change() { # TEST
	local q
	q=$(cat "$quality" 2>/dev/null)
	[ "$q" = "$quality_seen" ] && return
	quality_changes=$((quality_changes + 1))
	[ $quality_changes -eq 1 ] &&
		echo "    note: $quality changed from '$quality_seen' to '$q' while $1 ran: the machine's (a rngfeed service?), not a test's failure; not written back, said once"
	quality_seen=$q
}

# run_test N TEST: runs it (in the background when several run) with its
# own directories; its log is $work/N.log, its exit status $work/N.rc.
# Daemons the tests start record the hw_random hand-over in their
# RUNTIME_DIRECTORY, never in /run/rngfeed, where a running rngfeed service
# keeps its own; and keep their file ledger in their STATE_DIRECTORY, never
# in /var/lib/rngfeed.
run_test() {
	local n=$1 t=$2 rc
	local -a lock=()
	mkdir -p "$work/$n.run" "$work/$n.state"
	[ -z "${RUN_TESTS_ALONE_LOCK:-}" ] || ! alone "$t" ||
		lock=(flock -o "$RUN_TESTS_ALONE_LOCK")
	if [ "${t%.sh}" != "$t" ]; then
		RUNTIME_DIRECTORY=$work/$n.run STATE_DIRECTORY=$work/$n.state \
			"${lock[@]}" bash "$t" >"$work/$n.log" 2>&1
	else
		RUNTIME_DIRECTORY=$work/$n.run STATE_DIRECTORY=$work/$n.state \
			"./$t" >"$work/$n.log" 2>&1
	fi
	rc=$?
	echo "$rc" >"$work/$n.rc.new" && mv "$work/$n.rc.new" "$work/$n.rc"
}

# show_failed LOG REGEX: a failed test's report: every line of LOG that
# says what failed (REGEX: a script's "FAIL: ...", a check's
# "file:line:F:..."), wherever it is, then LOG's last 40 lines; a failure
# line among those is not shown twice.
show_failed() {
	local log=$1 n
	n=$(grep -c '' "$log")
	if [ "$n" -gt 40 ]; then
		grep -nE -- "$2" "$log" | awk -F: -v last=$((n - 40)) \
			'$1 <= last { sub(/^[0-9]+:/, ""); print "    | " $0; k++ }
			 END { if (k) print "    | ... (" k " failure line(s) above, from its first " last " lines; its last 40:)" }'
	fi
	sed 's/^/    | /' "$log" | tail -n 40
}

# report N TEST SECONDS: its lines and its counts.
report() {
	local n=$1 t=$2 log=$work/$1.log rc k sum c f e
	rc=$(cat "$work/$n.rc")
	case "$t" in
	*.sh)
		printf '%-44s ' "$t"
		if [ "$rc" -eq 0 ]; then
			k=$(grep -c '^SKIP: ' "$log")
			if [ "$k" -gt 0 ]; then
				echo "PASS ($k part(s) skipped)"
			else
				echo PASS
			fi
			passed=$((passed + 1)); skipped=$((skipped + k))
			# Parts a passing script skipped, with their reasons.
			grep -h '^SKIP: ' "$log" | sed 's/^/    /'
		elif [ "$rc" -eq 77 ]; then
			echo "SKIP ($(grep -m1 -i 'skip' "$log" || tail -n1 "$log"))"
			skipped=$((skipped + 1))
		else
			echo "FAIL (exit $rc)"; show_failed "$log" '^[[:space:]]*FAIL'
			failed=$((failed + 1)); failed_names+=("$t")
		fi
		;;
	*)
		sum=$(grep -E '^[0-9]+%: Checks: ' "$log" | tail -n1)
		printf '%-44s %s\n' "$t" "${sum:-no Check summary (exit $rc)}"
		n=$(sed -nE 's/.*Checks: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+).*/\1 \2 \3/p' <<<"$sum")
		if [ -n "$n" ]; then
			read -r c f e <<<"$n"
			# Checks that skipped passed as far as Check knows.
			k=$(grep -c '^SKIP: ' "$log")
			[ "$k" -le $((c - f - e)) ] || k=$((c - f - e))
			passed=$((passed + c - f - e - k)); failed=$((failed + f + e))
			skipped=$((skipped + k))
		fi
		if [ "$rc" -ne 0 ] || [ -z "$n" ]; then
			grep -vE '^[0-9]+%: Checks|^Running suite' "$log" >"$log.shown"
			show_failed "$log.shown" ':[FE]:'
			[ -z "$n" ] || [ "$f" -gt 0 ] || [ "$e" -gt 0 ] || failed=$((failed + 1))
			[ -n "$n" ] || failed=$((failed + 1))
			failed_names+=("$t")
		fi
		# Checks that skipped print "SKIP: reason" themselves.
		grep -h '^SKIP: ' "$log" | sed 's/^/    /'
		;;
	esac
}

# alone TEST: it takes the hw_random hand-over.
alone() { [ "${1%.sh}" != "$1" ] && head -n 5 "$1" | grep -q '^# run-tests: alone'; }

# The tests in the order given; those that must run alone start as soon
# as none of them runs (they are the longest chain), the others fill the
# remaining jobs.  Each test's wall time, for the closing line of the
# slowest (CI's time budget is spent here: issue 28).
tests=("$@")
declare -A in_flight=() start_of=() is_alone=()
times=()
alone_s=0 # the chain of alone tests, one after the other: the suite's floor
running=0 alone_running=0
pick() { # sets picked to the index of the next test of KIND (alone|other), or -1
	local i=$2
	picked=-1
	while [ "$i" -lt ${#tests[@]} ]; do
		if [ "$1" = alone ] && [ -n "${is_alone[$i]}" ]; then picked=$i; return; fi
		if [ "$1" = other ] && [ -z "${is_alone[$i]}" ]; then picked=$i; return; fi
		i=$((i + 1))
	done
}
for i in "${!tests[@]}"; do
	is_alone[$i]=
	alone "${tests[$i]}" && is_alone[$i]=1
done
start() { # INDEX
	start_of[$1]=$SECONDS
	if [ "$jobs_max" -eq 1 ]; then
		run_test "$1" "${tests[$1]}"
		finish "$1"
		return
	fi
	run_test "$1" "${tests[$1]}" &
	in_flight[$1]=1
	running=$((running + 1))
	[ -z "${is_alone[$1]}" ] || alone_running=1
}
finish() { # INDEX
	report "$1" "${tests[$1]}"
	# Side by side, only an alone test's end is a moment no daemon of the
	# suite holds the hand-over.
	if [ -n "${is_alone[$1]}" ] || [ "$jobs_max" -eq 1 ]; then
		note_quality_change "${tests[$1]}"
	fi
	times+=("$((SECONDS - start_of[$1])) ${tests[$1]}")
	[ -z "${is_alone[$1]}" ] || alone_s=$((alone_s + SECONDS - start_of[$1]))
	[ -z "${RUN_TESTS_TIMES:-}" ] ||
		echo "$((SECONDS - start_of[$1])) ${tests[$1]}${is_alone[$1]:+ alone}" >>"$RUN_TESTS_TIMES"
	rm -rf "$work/$1".*
}
# try_start KIND: start the next test of KIND (alone|other); false when
# none is left.
declare -A next_of=([alone]=0 [other]=0)
try_start() {
	pick "$1" "${next_of[$1]}"
	if [ "$picked" -lt 0 ]; then
		next_of[$1]=${#tests[@]}
		return 1
	fi
	next_of[$1]=$((picked + 1))
	start "$picked"
	return 0
}
if [ "$jobs_max" -eq 1 ]; then
	for i in "${!tests[@]}"; do start "$i"; done
else
	while :; do
		[ "$running" -lt "$jobs_max" ] && [ "$alone_running" -eq 0 ] &&
			try_start alone && continue
		[ "$running" -lt "$jobs_max" ] && try_start other && continue
		[ "$running" -gt 0 ] || break
		# A test has ended when its status file is there (wait -n -p
		# does not name a job that ended before the call).
		wait -n 2>/dev/null || sleep 0.1
		for i in "${!in_flight[@]}"; do
			[ -e "$work/$i.rc" ] || continue
			unset "in_flight[$i]"
			running=$((running - 1))
			[ -z "${is_alone[$i]}" ] || alone_running=0
			finish "$i"
		done
	done
	wait
fi
[ $quality_changes -le 1 ] ||
	echo "note: $quality changed $quality_changes times during the run (not written back)"
[ ${#times[@]} -lt 2 ] ||
	echo "slowest: $(printf '%s\n' "${times[@]}" | sort -rn | head -n 6 |
		awk '{printf "%s%s %d s", (NR > 1 ? ", " : ""), $2, $1}'); the alone tests, one after the other, $alone_s s"

[ ${#failed_names[@]} -eq 0 ] || echo "failed: ${failed_names[*]}"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
