#!/bin/bash
# A VM generation change (snapshot restored, VM cloned) makes the daemon
# discard its DRBG state and the tested blocks it holds, and start again
# from fresh tested input.  The change is the uevent the kernel's vmgenid
# driver sends, injected through the uevent socket.
#
# An injected uevent reaches every listener in the sender's network
# namespace, so a running rngfeed service would discard its state too
# (issue 15 defect 4).  The daemon and the injection run in a network
# namespace of their own (unshare -n), and a listener left outside, in the
# namespace the test started in, must hear nothing: the isolation is
# asserted, not assumed.  helper_uevent itself refuses to send from the
# outer namespace.
set -u
RNGFEED=${RNGFEED:-./rngfeed}
# Every wait is for an event, with a generous bound that TEST_TIME_SCALE
# stretches (make valgrind: 4); none asserts how fast the event comes.
SCALE=${TEST_TIME_SCALE:-1}
. tests/lib_pids.sh
fail() { echo "FAIL: $*"; exit 1; }

if [ -z "${RNGFEED_OUTER_NETNS:-}" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
	# Root in a container lacks CAP_SYS_ADMIN by default: RNDADDENTROPY would fail.
	(( 16#$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) >> 21 & 1 )) ||
		{ echo "SKIP: root without CAP_SYS_ADMIN (a container's default; --cap-add SYS_ADMIN grants it): RNDADDENTROPY would fail"; exit 77; }
	"$RNGFEED" --list | grep -q '^rdrand *available' || { echo "SKIP: needs rdrand"; exit 77; }
	command -v unshare >/dev/null || { echo "SKIP: needs unshare (util-linux)"; exit 77; }
	unshare -n true 2>/dev/null || { echo "SKIP: cannot make a network namespace (unshare -n)"; exit 77; }
	RNGFEED_OUTER_NETNS=$(stat -L -c %i /proc/self/ns/net) || exit 1
	export RNGFEED_OUTER_NETNS
	out=$(mktemp -d) || exit 1
	lpid=
	trap '[ "$BASHPID" != $$ ] || { kill_ours "$lpid"; rm -rf "$out"; }' EXIT
	# The outside listener runs for the whole inner test (its waits add
	# up to at most 95 s times SCALE).
	tests/helper_uevent listen $((100 * SCALE)) >"$out/heard" &
	lpid=$!
	for _ in $(seq 100); do
		grep -q listening "$out/heard" && break
		sleep 0.05
	done
	grep -q listening "$out/heard" || fail "the outside listener did not start"
	unshare -n bash "$0"
	rc=$?
	sleep 0.5 # anything that leaked has arrived by now
	kill "$lpid" 2>/dev/null
	wait "$lpid" 2>/dev/null
	lpid=
	[ $rc -eq 0 ] || exit $rc
	# It prints a line for each NEW_VMGENID=1 uevent as it hears it.
	! grep -q NEW_VMGENID "$out/heard" ||
		fail "the injected uevent leaked out of the test's network namespace"
	echo "outside the test's network namespace: no uevent heard"
	exit 0
fi

# ---- inside the test's own network namespace ----
tmp=$(mktemp -d) || exit 1
pid=
trap '[ "$BASHPID" != $$ ] || { kill_ours "$pid"; rm -rf "$tmp"; }' EXIT
metric() { awk -v m="$1" '$1 == m { print $2 }' "$tmp/m" 2>/dev/null; }
# Metrics are written every 5 s (SIGUSR1 does not write them): up to 30 s
# times SCALE for a value, and the daemon must still be running.
wait_for() { # METRIC MIN
	local v=
	for _ in $(seq $((600 * SCALE))); do
		v=$(metric "$1")
		[ -n "$v" ] && [ "$v" -ge "$2" ] && return 0
		kill -0 "$pid" 2>/dev/null || fail "the daemon exited while waiting for $1: $(cat "$tmp/log")"
		sleep 0.05
	done
	fail "$1 did not reach $2 in $((30 * SCALE)) s (is ${v:-unset})"
}
wait_log() { # PATTERN: up to 5 s times SCALE for a line of the daemon's log
	for _ in $(seq $((100 * SCALE))); do
		grep -q "$1" "$tmp/log" && return 0
		sleep 0.05
	done
	fail "no '$1' logged in $((5 * SCALE)) s: $(cat "$tmp/log")"
}

"$RNGFEED" -f -v -n rdrand --interval 1 --metrics "$tmp/m" 2>"$tmp/log" &
pid=$!
wait_for rngfeed_fed_bytes_total 1
[ "$(metric rngfeed_drbg_discards_total)" = 0 ] || fail "discards before any change"
fed=$(metric rngfeed_fed_bytes_total)

tests/helper_uevent
rc=$?
[ $rc -eq 77 ] && { echo "SKIP: the kernel refuses injected uevents"; exit 77; }
[ $rc -eq 0 ] || fail "helper_uevent failed"
wait_log 'VM generation changed (snapshot restored or VM cloned): discarding the DRBG state'
wait_for rngfeed_drbg_discards_total 1
# Fresh tested input instantiates a new DRBG, and feeding goes on.
wait_for rngfeed_fed_bytes_total $((fed + 64))
n=$(grep -c 'CTR_DRBG instantiated from a tested' "$tmp/log")
[ "$n" -ge 2 ] || fail "the DRBG was not instantiated again ($n)"
kill -TERM "$pid"; wait "$pid" || fail "exit status $?"
pid=
echo "vmgenid uevent: DRBG discarded and re-instantiated, feeding went on"
exit 0
