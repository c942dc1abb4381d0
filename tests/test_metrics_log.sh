#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A metrics file that cannot be written is logged once, not every 5 s
# (issue 18 item 4: the shipped example's directory did not exist and the
# daemon logged an error every 5 s), and the shipped unit creates the
# directory the examples use.  Fails on the old code: 2 warnings in 11 s.
# Run from the top of the tree: RNGFEED=./rngfeed bash tests/test_metrics_log.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u
. tests/lib_measure.sh

RNGFEED=${RNGFEED:-./rngfeed}
SCALE=${TEST_TIME_SCALE:-1}
measure_temp test_metrics_log
pid=
need_built "$RNGFEED"

# The unit and the examples agree on the directory.
grep -qx 'RuntimeDirectory=rngfeed' systemd/rngfeed.service ||
	fail "systemd/rngfeed.service does not create /run/rngfeed (RuntimeDirectory=rngfeed)"
for f in man/rngfeed.8 man/rngfeed.conf.5 systemd/rngfeed.conf; do
	grep -o '/run/[^ ]*\.prom' "$f" | grep -v '^/run/rngfeed/' | while read -r p; do
		echo "FAIL: $f uses $p, outside the unit's /run/rngfeed"
	done
done | grep . && failures=$((failures + 1))

"$RNGFEED" -c /dev/null --list 2>/dev/null | grep -qE '^rdrand +available' ||
	{ echo "SKIP: no RDRAND here (the daemon needs one source)"; exit 77; }
need_feeder "needs root (the daemon feeds the kernel)"

# Three write attempts (5, 10, 15 s) into a directory that does not exist,
# then the directory appears: one warning, then one "again".
"$RNGFEED" -f -c /dev/null -n rdrand --metrics "$tmp/missing/m.prom" >"$tmp/log" 2>&1 &
pid=$!
sleep $((16 * SCALE))
n=$(grep -c 'cannot write metrics' "$tmp/log")
[ "$n" -eq 1 ] || fail "$n 'cannot write metrics' lines in 16 s (three failed writes), want 1: $(grep 'metrics' "$tmp/log" | head -3)"
mkdir "$tmp/missing"
sleep $((6 * SCALE))
[ -s "$tmp/missing/m.prom" ] || fail "no metrics file once its directory exists"
grep -q 'metrics written to .* again' "$tmp/log" || fail "no note that writing works again"
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc -eq 0 ] || fail "exit $rc after SIGTERM"
[ "$failures" -eq 0 ] && ok "a failing metrics path is logged once, and once when it works again"
[ "$failures" -eq 0 ] || { sed 's/^/    log| /' "$tmp/log" | head -20; exit 1; }
exit 0
