#!/bin/bash
# run-tests: alone (its daemons read the machine's hw_random device)
# Issue 14 item 4: the kernel credits /dev/hwrng by itself, untested.  On
# this machine's real hw_random device:
#   1. while rngfeed reads it, rng_quality reads 0 (the kernel credits
#      nothing from it itself) and --list says so;
#   2. after SIGTERM, rng_quality reads what it read before and the record
#      in /run/rngfeed is gone;
#   3. after SIGKILL it still reads 0 and the record is there, and
#      rngfeed --restore-hwrng-quality (the unit's ExecStopPost=) puts the
#      value back and removes the record; run again, it has nothing to do.
# Fails on the code before the hand-over (rng_quality stays 1024).
# Whatever happens, the EXIT trap kills only the daemon it started and,
# if that daemon left its record, restores from it what that daemon
# changed (rngfeed --restore-hwrng-quality), unless another rngfeed holds
# the hand-over then: it never writes the value it found (issue 25).
set -u
RNGFEED=${RNGFEED:-./rngfeed}
SYSFS=/sys/class/misc/hw_random
QUALITY=$SYSFS/rng_quality

skip() {
	echo "SKIP: $*"
	exit 77
}
fail() {
	echo "FAIL: $*"
	[ -n "${log:-}" ] && [ -s "$log" ] && sed 's/^/    /' "$log"
	exit 1
}

[ "$(id -u)" -eq 0 ] || skip "writing rng_quality needs root"
# Root in a container lacks CAP_SYS_ADMIN by default: RNDADDENTROPY would fail.
(( 16#$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) >> 21 & 1 )) ||
	{ echo "SKIP: root without CAP_SYS_ADMIN (a container's default; --cap-add SYS_ADMIN grants it): RNDADDENTROPY would fail"; exit 77; }
[ -c /dev/hwrng ] && [ "$(stat -c '%t:%T' /dev/hwrng)" = "a:b7" ] ||
	skip "no /dev/hwrng that is the hw_random device (char 10:183) here (a container's own /dev?)"
[ -r "$QUALITY" ] || skip "no $QUALITY (no hw_random device, or a kernel before 5.18)"
cur=$(cat $SYSFS/rng_current 2>/dev/null)
case "$cur" in "" | none) skip "no current hw_random device" ;; esac
orig=$(cat "$QUALITY") || skip "cannot read $QUALITY"
[ "$orig" -gt 0 ] 2>/dev/null ||
	skip "rng_quality of $cur is already '$orig': the kernel credits nothing from it; nothing to hand over"
# Another rngfeed holds the gate (a service): its record must not be
# disturbed, and its 0 would look like ours.  (An empty record is none: a
# daemon that ran as another user empties it and cannot remove it.)
[ ! -s /run/rngfeed/hwrng-quality ] ||
	skip "/run/rngfeed/hwrng-quality is there: another rngfeed holds the hand-over"
[ ! -s /run/rngfeed/hwrng.lock ] ||
	skip "/run/rngfeed/hwrng.lock holds a record: another rngfeed owns the hand-over"
"$RNGFEED" --list 2>/dev/null | grep -qE '^hwrng +available' ||
	skip "the hwrng source is not usable here: $("$RNGFEED" --list 2>&1 | grep '^hwrng')"

tmp=$(mktemp -d) || exit 1
. tests/lib_pids.sh
# The record goes where systemd's RuntimeDirectory= says; here the test's
# own directory, so nothing is left in /run whatever happens.
export RUNTIME_DIRECTORY=$tmp/run
RECORD=$RUNTIME_DIRECTORY/hwrng-quality
pid=''
# The one-owner lock is machine-wide (/run/rngfeed/hwrng.lock, shared
# with a service); its directory goes again if this test made it.
had_run_dir=0
[ -d /run/rngfeed ] && had_run_dir=1
cleanup() {
	if [ -n "$pid" ]; then
		kill_ours -KILL "$pid"
		{ wait "$pid"; } 2>/dev/null
	fi
	# Undo only what our own daemon did, from its own record (it is left
	# only when the daemon was killed before it could), and only while no
	# other rngfeed holds the hand-over: never a blind write of what the
	# test found, which would undo a service's 0 taken meanwhile.
	if [ -s "$RECORD" ]; then
		if [ -s /run/rngfeed/hwrng-quality ]; then
			echo "WARNING: another rngfeed holds the hand-over now; our daemon's record ($(tr '\n' ' ' <"$RECORD")) is left unrestored"
		else
			"$RNGFEED" -c /dev/null --restore-hwrng-quality >/dev/null 2>&1 ||
				echo "WARNING: could not restore rng_quality from $RECORD"
		fi
	fi
	[ "$had_run_dir" = 1 ] || rmdir /run/rngfeed 2>/dev/null
	rm -rf "$tmp"
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT

quality() { cat "$QUALITY"; }

# Start the daemon on the hwrng source alone; return once it said it uses
# the source (up to 20 s: the start-up test reads 1024 samples first).
start() {
	log=$tmp/log.$1
	"$RNGFEED" -f -v -n hwrng --interval 1 2>"$log" &
	pid=$!
	for _ in $(seq 200); do
		grep -q 'hwrng: using it' "$log" && return 0
		kill -0 "$pid" 2>/dev/null || fail "$1: the daemon exited early"
		sleep 0.1
	done
	fail "$1: the daemon did not say it uses the hwrng source within 20 s"
}

# Poll (5 s) until rng_quality reads $1.
wait_quality() {
	for _ in $(seq 50); do
		[ "$(quality)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

stop() { # SIGNAL
	kill -"$1" "$pid"
	# (braces: bash's "Killed" job note goes to /dev/null too)
	{ wait "$pid"; } 2>/dev/null
	rc=$?
	pid=''
}

# ---- 1 and 2: SIGTERM hands it back ------------------------------------
start term
wait_quality 0 || fail "1: rng_quality of $cur reads $(quality), not 0, while rngfeed reads it (it read $orig before)"
[ -s "$RECORD" ] || fail "1: no record in $RECORD while the daemon runs"
[ "$(grep -cxE "device=$cur|quality=$orig" "$RECORD")" -eq 2 ] ||
	fail "1: the record does not say $cur at $orig: $(cat "$RECORD")"
"$RNGFEED" --list 2>/dev/null | grep -qx "hw_random: the kernel credits nothing itself from $cur (rng_quality 0)" ||
	fail "1: --list does not say the kernel credits nothing: $("$RNGFEED" --list 2>&1 | tail -1)"
echo "ok: rng_quality of $cur reads 0 while rngfeed reads it (was $orig)"
stop TERM
[ "$rc" -eq 0 ] || fail "2: the daemon exited $rc after SIGTERM"
[ "$(quality)" = "$orig" ] || fail "2: after SIGTERM rng_quality reads $(quality), not $orig"
[ ! -s "$RECORD" ] || fail "2: the record is still there after a clean stop: $(cat "$RECORD")"
grep -q "handed back" "$log" || fail "2: the daemon did not say it handed $cur back"
"$RNGFEED" --list 2>/dev/null | grep -qx "hw_random: the kernel credits $cur itself at $orig/1024" ||
	fail "2: --list after the stop: $("$RNGFEED" --list 2>&1 | tail -1)"
echo "ok: after SIGTERM rng_quality reads $orig again, the record is gone"

# ---- 3: SIGKILL, then the unit's ExecStopPost= -------------------------
start kill
wait_quality 0 || fail "3: rng_quality reads $(quality), not 0, in the second run"
stop KILL
[ "$(quality)" = 0 ] || fail "3: after SIGKILL rng_quality reads $(quality): who put it back?"
[ -s "$RECORD" ] || fail "3: no record left after SIGKILL"
out=$("$RNGFEED" --restore-hwrng-quality 2>&1) ||
	fail "3: rngfeed --restore-hwrng-quality failed: $out"
[ "$(quality)" = "$orig" ] || fail "3: after --restore-hwrng-quality rng_quality reads $(quality), not $orig ($out)"
[ ! -e "$RECORD" ] || fail "3: the record is still there after the restore"
grep -q "put back to $orig" <<<"$out" || fail "3: the restore did not say what it did: '$out'"
out=$("$RNGFEED" --restore-hwrng-quality 2>&1) ||
	fail "3: a second --restore-hwrng-quality failed: $out"
[[ "$out" == *"no hand-over record in $RECORD: nothing to put back"* ]] ||
	fail "3: with no record the restore should say so: '$out'"
[ "$(quality)" = "$orig" ] || fail "3: a restore without a record changed rng_quality to $(quality)"
echo "ok: after SIGKILL rng_quality stays 0; --restore-hwrng-quality puts $orig back"

echo "PASS: the kernel's own credit for $cur is handed over while rngfeed runs and put back after SIGTERM and after SIGKILL + restore"
