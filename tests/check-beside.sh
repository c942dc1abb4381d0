#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make check-beside: the tests that take the machine's hw_random hand-over
# run beside another rngfeed that owns it, as on any machine where the
# package is installed and its service runs:
#
#   RNGFEED=./rngfeed tests/check-beside.sh TEST...
#
# 1. An instance is started as the service would be (-f -n hwrng) but in
#    directories of its own (RUNTIME_DIRECTORY, STATE_DIRECTORY: never
#    /run/rngfeed's record or /var/lib/rngfeed); the one-owner lock is
#    the machine's (/run/rngfeed/hwrng.lock), so the tests' daemons see it
#    as the other owner.  It must own the hand-over (rng_quality 0) within
#    30 s.  (Where another rngfeed owns it already, a running service,
#    the tests run beside that one, and this script starts none.)
# 2. tests/run-tests.sh runs TEST... (one at a time: they all take the
#    hand-over).  Each passes, or skips the part that needs the device's
#    credit with "SKIP: reason".
# 3. The instance must still own the hand-over and be running; SIGTERM
#    stops it (exit 0 within 5 s), and rng_quality must read what it read
#    before it started: the instance put it back, and no test wrote it.
# RUN_TESTS_ALONE_LOCK=FILE (tests/run-tests.sh): held for the whole run,
# so that no other checkout's hand-over test meets this instance.
# Ends with one line "check-beside: ..."; exit 0 pass (or nothing to do
# here, with a "SKIP:" line), 1 fail.
set -u
. tests/lib_handover.sh
RNGFEED=${RNGFEED:-./rngfeed}
QUALITY=/sys/class/misc/hw_random/rng_quality
SCALE=${TEST_TIME_SCALE:-1}
skip() { echo "check-beside: SKIP: $*"; exit 0; }
die() { echo "check-beside: FAIL: $*"; exit 1; }

[ $# -gt 0 ] || die "no tests named"
[ -x "$RNGFEED" ] || die "$RNGFEED is not built"
[ "$(id -u)" -eq 0 ] || skip "needs root (the instance takes the machine's hw_random hand-over)"
(( 16#$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) >> 21 & 1 )) ||
	skip "root without CAP_SYS_ADMIN: no instance can feed the kernel here"
[ -c /dev/hwrng ] && [ -r "$QUALITY" ] || skip "no /dev/hwrng or no $QUALITY: no hand-over to own"
"$RNGFEED" -c /dev/null --list 2>/dev/null | grep -qE '^hwrng +available' ||
	skip "the hwrng source is not usable here: $("$RNGFEED" -c /dev/null --list 2>&1 | grep '^hwrng')"

if [ -n "${RUN_TESTS_ALONE_LOCK:-}" ]; then
	exec 9>>"$RUN_TESTS_ALONE_LOCK" || die "cannot open $RUN_TESTS_ALONE_LOCK"
	echo "check-beside: waiting for $RUN_TESTS_ALONE_LOCK"
	flock 9 || die "flock $RUN_TESTS_ALONE_LOCK"
fi

tmp=$(mktemp -d /tmp/check-beside.XXXXXX) || exit 1
pid=
cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null
	[ -z "$pid" ] || wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT
trap 'exit 1' INT TERM

problems=()
quality0=$(cat "$QUALITY")
ours=
if handover_elsewhere; then
	echo "check-beside: another rngfeed owns the hand-over already (rng_quality $quality0): the tests run beside it"
	echo "SKIP: check-beside: rng_quality put back not checked: the owner is not this script's"
else
	mkdir "$tmp/run" "$tmp/state" "$tmp/bin"
	# A copy: a rebuild while the tests run does not pull it away.
	cp "$RNGFEED" "$tmp/bin/rngfeed" || die "cannot copy $RNGFEED"
	RUNTIME_DIRECTORY=$tmp/run STATE_DIRECTORY=$tmp/state \
		"$tmp/bin/rngfeed" -f -c /dev/null -n hwrng </dev/null >"$tmp/instance.log" 2>&1 9>&- &
	pid=$!
	for _ in $(seq $((300 * SCALE))); do
		handover_elsewhere && [ "$(cat "$QUALITY")" = 0 ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if ! handover_elsewhere || [ "$(cat "$QUALITY")" != 0 ]; then
		die "the instance did not take the hand-over in $((30 * SCALE)) s (rng_quality $(cat "$QUALITY")): $(tail -n 5 "$tmp/instance.log")"
	fi
	ours=$pid
	echo "check-beside: instance $pid owns the hand-over (rng_quality $quality0 -> 0), its directories $tmp/run, $tmp/state"
fi

# fd 9 (the lock) is not the tests': a daemon one leaves behind must not
# hold it.
RUN_TESTS_ALONE_LOCK='' RUN_TESTS_JOBS=1 RNGFEED=$RNGFEED tests/run-tests.sh "$@" 9>&-
rc=$?

if [ -n "$pid" ]; then
	kill -0 "$pid" 2>/dev/null || problems+=("the instance died during the tests: $(tail -n 5 "$tmp/instance.log")")
	handover_elsewhere && [ "$(cat "$QUALITY")" = 0 ] ||
		problems+=("the instance's hand-over was undone during the tests (rng_quality $(cat "$QUALITY"))")
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then
		problems+=("the instance still ran 5 s after SIGTERM")
		kill -KILL "$pid"
	fi
	wait "$pid"
	src=$?
	pid=
	[ $src -eq 0 ] || problems+=("the instance exited $src after SIGTERM: $(tail -n 5 "$tmp/instance.log")")
	q=
	for _ in $(seq 30); do
		q=$(cat "$QUALITY")
		[ "$q" = "$quality0" ] && break
		sleep 0.1
	done
	[ "$q" = "$quality0" ] || problems+=("rng_quality is $q after the instance stopped, was $quality0")
fi
for p in "${problems[@]}"; do echo "check-beside: FAIL: $p"; done
if [ $rc -ne 0 ] || [ ${#problems[@]} -gt 0 ]; then
	echo "check-beside: FAILED ($# tests beside an instance that owned the hand-over)"
	exit 1
fi
echo "check-beside: $# tests passed beside an instance that owned the hand-over${ours:+; it put rng_quality back to $quality0}"
exit 0
