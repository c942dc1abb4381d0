#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/run-tests.sh counts what was skipped (issue 18 item 6): a script
# that exits 77 is skipped, and a part that a passing script skipped
# ("SKIP: reason") is counted as skipped too, as under "make valgrind",
# where test_sources.sh skipped RDSEED and the summary said "0 skipped".
# Fails on the old run-tests.sh: "tests: 2 passed, 0 failed, 1 skipped".
# Exit 0 pass, 1 fail.
set -u
# The stand-in "alone" scripts here take no device: never the machine's
# lock (make check run with RUN_TESTS_ALONE_LOCK set waited on other
# checkouts' hand-over tests for minutes).
unset RUN_TESTS_ALONE_LOCK RUN_TESTS_TIMES
tmp=$(mktemp -d /tmp/test_run_tests.XXXXXX) || exit 1
trap '[ "$BASHPID" != $$ ] || rm -rf "$tmp"' EXIT
printf 'echo ok: fine\nexit 0\n' >"$tmp/a_pass.sh"
printf 'echo "SKIP: no such device here"\nexit 77\n' >"$tmp/b_skip.sh"
printf 'echo ok: one part\necho "SKIP: part two: no RDSEED"\necho "SKIP: part three"\nexit 0\n' >"$tmp/c_part.sh"
out=$(RUN_TESTS_JOBS=1 bash tests/run-tests.sh "$tmp/a_pass.sh" "$tmp/b_skip.sh" "$tmp/c_part.sh" 2>&1)
rc=$?
want="tests: 2 passed, 0 failed, 3 skipped"
if [ $rc -ne 0 ] || [ "$(tail -n1 <<<"$out")" != "$want" ]; then
	echo "FAIL: run-tests.sh exited $rc; want '$want' as the last line:"
	sed 's/^/    | /' <<<"$out"
	exit 1
fi
grep -q 'c_part.sh *PASS (2 part(s) skipped)' <<<"$out" ||
	{ echo "FAIL: the partly skipped script's line does not say so:"; sed 's/^/    | /' <<<"$out"; exit 1; }
echo "ok: $want"

# Issue 25 item 5: the harness never writes the machine's rng_quality.  A
# stand-in file (HWRNG_QUALITY_FILE) plays the machine's: a service hands
# it over (0) while the second test runs and keeps it.  The harness must
# say so once, as the machine's, fail no test, and leave the 0 alone (the
# old harness wrote the value it found back after every test, undoing the
# service's hand-over, and failed whichever test ran then).
q=$tmp/rng_quality
echo 1024 >"$q"
printf 'echo ok: first\nexit 0\n' >"$tmp/q1.sh"
printf 'echo 0 >"%s"\necho ok: the service took the gate meanwhile\nexit 0\n' "$q" >"$tmp/q2.sh"
printf 'echo ok: third\nexit 0\n' >"$tmp/q3.sh"
out=$(RUN_TESTS_JOBS=1 HWRNG_QUALITY_FILE=$q bash tests/run-tests.sh "$tmp/q1.sh" "$tmp/q2.sh" "$tmp/q3.sh" 2>&1)
rc=$?
want="tests: 3 passed, 0 failed, 0 skipped"
fails=0
if [ $rc -ne 0 ] || [ "$(tail -n1 <<<"$out")" != "$want" ]; then
	echo "FAIL: an outside change of rng_quality failed a test: exit $rc, want '$want':"
	fails=1
fi
if [ "$(cat "$q")" != 0 ]; then
	echo "FAIL: the harness wrote rng_quality back to '$(cat "$q")' (the service had set 0)"
	fails=1
fi
if [ "$(grep -c "note: $q changed from '1024' to '0' while $tmp/q2.sh ran: the machine's" <<<"$out")" -ne 1 ]; then
	echo "FAIL: the change is not said once, as the machine's:"
	fails=1
fi
if [ $fails -ne 0 ]; then
	sed 's/^/    | /' <<<"$out"
	exit 1
fi
echo "ok: an outside change of rng_quality is said once, fails no test, and is not written back"

# Issue 28: RUN_TESTS_JOBS runs tests side by side, but never two that
# take the hw_random hand-over ("# run-tests: alone"): each alone script
# holds a directory while it runs and fails if another holds it; the
# others record that they overlapped.  Every test has directories of its
# own; a failure and a skip are counted as in a serial run.
mkdir -p "$tmp/par"
for i in 1 2 3; do
	cat >"$tmp/par/alone$i.sh" <<EOS
# run-tests: alone (a stand-in for the machine's hw_random device)
mkdir "$tmp/par/held" 2>/dev/null || { echo "two alone tests at once"; exit 1; }
echo "\$RUNTIME_DIRECTORY" >>"$tmp/par/dirs"
sleep 0.6
rmdir "$tmp/par/held"
exit 0
EOS
done
for i in 1 2 3 4; do
	cat >"$tmp/par/other$i.sh" <<EOS
touch "$tmp/par/running.$i"
sleep 0.6
ls "$tmp/par" | grep -c '^running\.' >>"$tmp/par/seen"
echo "\$STATE_DIRECTORY" >>"$tmp/par/dirs"
exit 0
EOS
done
printf 'echo "SKIP: not here"\nexit 77\n' >"$tmp/par/skip.sh"
printf 'echo "broken on purpose"\nexit 3\n' >"$tmp/par/fail.sh"
out=$(RUN_TESTS_JOBS=3 bash tests/run-tests.sh "$tmp"/par/alone*.sh "$tmp"/par/other*.sh \
	"$tmp/par/skip.sh" "$tmp/par/fail.sh" 2>&1)
rc=$?
want="tests: 7 passed, 1 failed, 1 skipped"
fails=0
if [ $rc -eq 0 ] || [ "$(tail -n1 <<<"$out")" != "$want" ]; then
	echo "FAIL: RUN_TESTS_JOBS=3: exit $rc, want a failure and '$want' last"
	fails=1
fi
grep -q 'fail.sh *FAIL (exit 3)' <<<"$out" && grep -q '| broken on purpose' <<<"$out" ||
	{ echo "FAIL: RUN_TESTS_JOBS=3: the failing script's report is not whole"; fails=1; }
if [ "$(sort -rn "$tmp/par/seen" | head -n1)" -lt 2 ]; then
	echo "FAIL: RUN_TESTS_JOBS=3: the other tests never ran side by side"
	fails=1
fi
if [ "$(sort -u "$tmp/par/dirs" | grep -c .)" -ne 7 ]; then
	echo "FAIL: RUN_TESTS_JOBS=3: tests shared a RUNTIME_DIRECTORY or STATE_DIRECTORY:"
	sed 's/^/    | /' "$tmp/par/dirs"
	fails=1
fi
if [ $fails -ne 0 ]; then
	sed 's/^/    | /' <<<"$out"
	exit 1
fi
echo "ok: RUN_TESTS_JOBS=3 runs tests side by side, never two alone ones, each with its own directories"

# tests/lib_measure.sh's clean-up stops the processes a test listed that
# are still its own (a child; a detached one given the test's directory),
# never a listed PID that now belongs to another process (the suite wraps
# a pid_max of 32768 within minutes: a stale PID may be anyone's by then).
setsid sleep 60 </dev/null >/dev/null 2>&1 &
foreign=$!
cat >"$tmp/cleanup.sh" <<EOS
. tests/lib_measure.sh
measure_temp test_run_tests_cleanup
sleep 60 &
echo "\$!" >>"\$tmp/pids"
echo "\$!" >"$tmp/cleanup.child"
MARK=\$tmp setsid sleep 60 </dev/null >/dev/null 2>&1 &
echo "\$!" >>"\$tmp/pids"
echo "\$!" >"$tmp/cleanup.detached"
echo $foreign >>"\$tmp/pids"
exit 0
EOS
bash "$tmp/cleanup.sh"
sleep 0.2
child=$(cat "$tmp/cleanup.child") detached=$(cat "$tmp/cleanup.detached")
fails=0
kill -0 "$foreign" 2>/dev/null ||
	{ echo "FAIL: lib_measure's clean-up killed a listed PID that was not the test's"; fails=1; }
for p in "$child" "$detached"; do
	if kill -0 "$p" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; then
		echo "FAIL: lib_measure's clean-up left the test's own process $p running"
		kill "$p" 2>/dev/null
		fails=1
	fi
done
kill "$foreign" 2>/dev/null
wait "$foreign" 2>/dev/null
[ $fails -eq 0 ] || exit 1
echo "ok: lib_measure's clean-up stops the test's own processes (a child, a detached one), not a listed PID that is another's"

# Issue 33: a failing script's report shows every "FAIL:" line, wherever it
# is, and its last lines (the old report showed the last 40 lines only: a
# test that failed early and went on logging read "1 failure(s)" alone).
{
	echo 'echo "ok: first part"'
	echo 'echo "FAIL: early: the row that failed, with a reason this long: $(printf "x%.0s" $(seq 300))"'
	echo 'for i in $(seq 100); do echo "a table line $i"; done'
	echo 'echo "    FAIL: late, indented"'
	echo 'echo "1 failure(s)"'
	echo 'exit 1'
} >"$tmp/long_fail.sh"
out=$(RUN_TESTS_JOBS=1 bash tests/run-tests.sh "$tmp/long_fail.sh" 2>&1)
fails=0
grep -qE '^    \| FAIL: early: the row that failed, with a reason this long: x{300}$' <<<"$out" ||
	{ echo "FAIL: the early FAIL: line of a failing script is not in its report, whole"; fails=1; }
[ "$(grep -c 'FAIL: early' <<<"$out")" -eq 1 ] ||
	{ echo "FAIL: the early FAIL: line is shown more than once"; fails=1; }
[ "$(grep -c 'FAIL: late, indented' <<<"$out")" -eq 1 ] ||
	{ echo "FAIL: the late FAIL: line is not shown once"; fails=1; }
grep -q '| 1 failure(s)$' <<<"$out" && grep -q '| a table line 100$' <<<"$out" ||
	{ echo "FAIL: the report lacks the script's last lines"; fails=1; }
if [ $fails -ne 0 ]; then
	sed 's/^/    | /' <<<"$out"
	exit 1
fi
echo "ok: a failing script's report shows its FAIL: line from 100 lines before its end, whole, and its last lines"

# Issue 33: RUN_TESTS_ALONE_LOCK is held by flock(1) alone: a process an
# alone script leaves running (a daemon it failed to stop) does not hold
# it after the script ends (it did: the lock file's descriptor went to
# every child, and one stray daemon held up every checkout's alone tests).
lock=$tmp/alone.lock
cat >"$tmp/leaves.sh" <<EOS
# run-tests: alone (leaves a process running)
sleep 60 >/dev/null 2>&1 &
echo \$! >"$tmp/leaked.pid"
exit 0
EOS
out=$(RUN_TESTS_JOBS=1 RUN_TESTS_ALONE_LOCK=$lock bash tests/run-tests.sh "$tmp/leaves.sh" 2>&1)
leaked=$(cat "$tmp/leaked.pid" 2>/dev/null)
fails=0
if [ -z "$leaked" ] || ! kill -0 "$leaked" 2>/dev/null; then
	echo "FAIL: the alone script did not leave its process running"; fails=1
elif ! flock -n "$lock" true; then
	echo "FAIL: a process left by an alone script holds RUN_TESTS_ALONE_LOCK after the script ended"; fails=1
fi
[ -z "$leaked" ] || kill "$leaked" 2>/dev/null
if [ $fails -ne 0 ]; then
	sed 's/^/    | /' <<<"$out"
	exit 1
fi
echo "ok: RUN_TESTS_ALONE_LOCK: a process an alone script leaves behind does not hold the lock"
