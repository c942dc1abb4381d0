#!/bin/bash
# Runs every unit test program (Check) and integration script given as
# arguments and prints one closing line "tests: N passed, N failed, N skipped".
# A Check program counts as many tests as it has checks; a script is one test,
# exit 0 = pass, 77 = skip (it prints the reason), anything else = fail.
# A part that a passing script or a check skipped ("SKIP: reason" on its
# own line) is counted as skipped too: a run that skipped something never
# reads "0 skipped".
set -u
passed=0 failed=0 skipped=0 failed_names=()
log=$(mktemp) || exit 2
# Daemons the tests start record the hw_random hand-over here, never in
# /run/rngfeed, where a running rngfeed service keeps its own; and keep
# their file ledger here, never in /var/lib/rngfeed.
RUNTIME_DIRECTORY=$(mktemp -d) || exit 2
STATE_DIRECTORY=$(mktemp -d) || exit 2
export RUNTIME_DIRECTORY STATE_DIRECTORY
trap 'rm -f "$log"; rm -rf "$RUNTIME_DIRECTORY" "$STATE_DIRECTORY"' EXIT
# The kernel's hw_random credit is the machine's: a rngfeed service may
# hand it over (0) or back at any time while the tests run.  The harness
# never writes it; a change it sees between two tests is said once, as the
# machine's, and fails no test.  The tests that start a daemon on the
# device check and restore their own daemon's hand-over themselves.
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

# Each test's wall time, for the closing line of the slowest (CI's time
# budget is spent here: issue 28).
times=()
for t in "$@"; do
	t_start=$SECONDS
	case "$t" in
	*.sh)
		printf '%-44s ' "$t"
		bash "$t" >"$log" 2>&1
		rc=$?
		if [ $rc -eq 0 ]; then
			k=$(grep -c '^SKIP: ' "$log")
			if [ "$k" -gt 0 ]; then
				echo "PASS ($k part(s) skipped)"
			else
				echo PASS
			fi
			passed=$((passed + 1)); skipped=$((skipped + k))
			# Parts a passing script skipped, with their reasons.
			grep -h '^SKIP: ' "$log" | sed 's/^/    /'
		elif [ $rc -eq 77 ]; then
			echo "SKIP ($(grep -m1 -i 'skip' "$log" || tail -n1 "$log"))"
			skipped=$((skipped + 1))
		else
			echo "FAIL (exit $rc)"; sed 's/^/    | /' "$log" | tail -n 40
			failed=$((failed + 1)); failed_names+=("$t")
		fi
		;;
	*)
		"./$t" >"$log" 2>&1
		rc=$?
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
		if [ $rc -ne 0 ] || [ -z "$n" ]; then
			grep -vE '^[0-9]+%: Checks|^Running suite' "$log" | sed 's/^/    | /' | tail -n 40
			[ -z "$n" ] || [ "$f" -gt 0 ] || [ "$e" -gt 0 ] || failed=$((failed + 1))
			[ -n "$n" ] || failed=$((failed + 1))
			failed_names+=("$t")
		fi
		# Checks that skipped print "SKIP: reason" themselves.
		grep -h '^SKIP: ' "$log" | sed 's/^/    /'
		;;
	esac
	note_quality_change "$t"
	times+=("$((SECONDS - t_start)) $t")
done
[ ${#times[@]} -lt 2 ] ||
	echo "slowest: $(printf '%s\n' "${times[@]}" | sort -rn | head -n 6 |
		awk '{printf "%s%s %d s", (NR > 1 ? ", " : ""), $2, $1}')"
[ $quality_changes -le 1 ] ||
	echo "note: $quality changed $quality_changes times during the run (not written back)"

[ ${#failed_names[@]} -eq 0 ] || echo "failed: ${failed_names[*]}"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
