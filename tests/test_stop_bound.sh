#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A stop within its second however many things do not answer (issue 33,
# item 2).  SIGTERM to gone is timed by tests/helper_logpipe, which reaps
# the daemon at once; the limit is 1 s (STOP_LIMIT, times TEST_TIME_SCALE).
#   readers  three sources whose reads never return, whatever signal comes
#            (tests/rngfeed-faulty's hang1-3: 2 blocks, then a read that
#            sleeps for ever): their threads are left behind together,
#            within one bound, not one after another (3 x 400 ms before);
#            each is said once, the summary is written, exit 0;
#   keeper   -D nobody -p FILE in a root-owned directory, the PID file's
#            keeper (rngfeed-pidfile) stopped with SIGSTOP: the daemon
#            does not wait for it (1 s before); exit 0.  The file is its
#            keeper's to remove: it is there while the keeper is stopped,
#            and once the keeper runs again it is gone and the keeper has
#            ended.  A second instance that took the stale file over in
#            between keeps it: a keeper removes only the file it was
#            given, holding its own daemon's PID.
# Run from the top of the tree, as root:
#   RNGFEED=./rngfeed bash tests/test_stop_bound.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u
. tests/lib_measure.sh

RNGFEED=${RNGFEED:-./rngfeed}
FAULTY=${FAULTY:-tests/rngfeed-faulty}
HELPER=tests/helper_logpipe
SCALE=${TEST_TIME_SCALE:-1}
# A sanitized build (make sanitize) is slower by design: 3 s there.
[ -n "${RNGFEED_SANITIZED:-}" ] && [ "$SCALE" = 1 ] && SCALE=3
STOP_LIMIT=$(awk -v s="$SCALE" 'BEGIN { print 1.0 * s }')
BOUND=$((10 * SCALE)) # seconds: what is awaited comes within this

[ "$(id -u)" -eq 0 ] || skip "needs root (-D, a PID file in a root-owned directory)"
need_built "$RNGFEED" "$FAULTY" "$HELPER"
measure_temp test_stop_bound
chmod 755 "$tmp"
head -c 2000000 /dev/urandom >"$tmp/data"
chmod 644 "$tmp/data"

field() { awk -v k="$2" '$1 == k { print $2 }' "$1/status" 2>/dev/null; }
exited() { local e; e=$(field "$1" exited); [ -n "$e" ] && [ "$e" != - ]; }
logged() { [ "$(grep -c -- "$2" "$1/log" 2>/dev/null)" -ge "${3:-1}" ]; }
gone() { ! kill -0 "$1" 2>/dev/null; }

# run DIR CMD...: CMD under the helper, its stderr read all along; sets $hp.
run() {
	local d=$1
	shift
	mkdir -p "$d"
	"$HELPER" -r 65536 "$d/status" "$d/log" "$@" &
	hp=$!
	echo "$hp" >>"$tmp/pids"
	wait_for "$BOUND" test -s "$d/status"
}

# stop_timed WHAT DIR: SIGTERM (by the helper), gone within STOP_LIMIT, exit 0.
stop_timed() {
	local what=$1 d=$2 took
	kill -HUP "$hp"
	wait_for "$BOUND" exited "$d" || { fail "$what: still running $BOUND s after SIGTERM"; return 1; }
	# The helper itself ends with the pipe: a stopped keeper still
	# holds the daemon's stderr.
	took=$(field "$d" stop_s)
	say "$what: SIGTERM to gone in $took s (limit $STOP_LIMIT), exit $(field "$d" exited)"
	awk -v t="$took" -v l="$STOP_LIMIT" 'BEGIN { exit !(t <= l) }' ||
		fail "$what: gone $took s after SIGTERM (limit $STOP_LIMIT s)"
	[ "$(field "$d" exited)" = 0 ] || fail "$what: exit $(field "$d" exited) after SIGTERM (want 0)"
}

# ---- readers: three reads that never return -----------------------------------
d=$tmp/readers
run "$d" "$(realpath "$FAULTY")" -f -t -v -c /dev/null -n hang1 -n hang2 -n hang3 \
	-O hang1:after=5000 -O hang2:after=5000 -O hang3:after=5000 \
	-O "hang1:mark=$d/hang1" -O "hang2:mark=$d/hang2" -O "hang3:mark=$d/hang3"
# Each hangs in its third read (the driver marks it), its two blocks read.
if wait_for "$BOUND" test -e "$d/hang1" && wait_for "$BOUND" test -e "$d/hang2" &&
	wait_for "$BOUND" test -e "$d/hang3"; then
	stop_timed "3 stuck readers" "$d"
	wait "$hp" 2>/dev/null
	n=$(grep -c 'did not stop within .*left behind' "$d/log")
	[ "$n" = 3 ] || fail "3 stuck readers: $n 'left behind' lines (want 3)"
	grep -q 'summary after' "$d/log" || fail "3 stuck readers: no summary at exit"
else
	fail "the hang sources never began to hang: $(tail -n3 "$d/log")"
	kill -KILL "$(field "$d" pid)" 2>/dev/null
fi

# ---- keeper: the PID file's keeper stopped ------------------------------------
if id nobody >/dev/null 2>&1; then
	d=$tmp/keeper
	mkdir -m 755 "$tmp/rootdir"
	pidf=$tmp/rootdir/x.pid
	run "$d" "$(realpath "$RNGFEED")" -f -t -c /dev/null -n file -O "file:device=$tmp/data" \
		-D nobody -p "$pidf"
	dp=$(field "$d" pid)
	keeper=
	find_keeper() { keeper=$(pgrep -P "$dp" -x rngfeed-pidfile); [ -n "$keeper" ]; }
	dropped() { ps -o user= -p "$dp" | grep -q nobody; }
	if wait_for "$BOUND" test -s "$pidf" && wait_for "$BOUND" dropped &&
		wait_for "$BOUND" find_keeper; then
		kill -STOP "$keeper"
		stop_timed "-D nobody -p, the keeper stopped (SIGSTOP)" "$d"
		[ -e "$pidf" ] || fail "keeper: the PID file went while its keeper was stopped (who removed it?)"
		# A second instance takes the stale file over (its lock went
		# with the first); the first's keeper must leave it alone.
		hp1=$hp
		d2=$tmp/second
		run "$d2" "$(realpath "$RNGFEED")" -f -t -q -c /dev/null -n file \
			-O "file:device=$tmp/data" -p "$pidf"
		second=$(field "$d2" pid)
		hp2=$hp
		holds_second() { [ "$(cat "$pidf" 2>/dev/null)" = "$second" ]; }
		wait_for "$BOUND" holds_second || fail "keeper: a second instance did not take the stale PID file over: $(cat "$d2/log")"
		kill -CONT "$keeper"
		wait_for "$BOUND" gone "$keeper" || fail "keeper: still there $BOUND s after SIGCONT"
		holds_second || fail "keeper: the second instance's PID file was removed or changed by the first's keeper"
		wait "$hp1" 2>/dev/null
		hp=$hp2
		stop_timed "the second instance" "$d2"
		wait "$hp" 2>/dev/null
		[ -e "$pidf" ] && fail "keeper: the second instance left its PID file"
		ok "keeper: stopped keeper not waited for; the file left to the second instance, which removed it"
	else
		fail "keeper: no PID file, no drop to nobody or no keeper: $(tail -n3 "$d/log")"
	fi
else
	say "SKIP: keeper rows: no user nobody"
fi

[ "$failures" -eq 0 ] || { say "FAIL: $failures checks failed"; exit 1; }
say "PASS"
