#!/bin/bash
# run-tests: alone (its daemons read the machine's hw_random device)
# Issue 25 item 4: one owner of the hw_random hand-over.  Two rngfeed
# instances on this machine's real hw_random device, with the same or
# different RUNTIME_DIRECTORY, stopped in either order (and the owner
# SIGKILLed, with the unit's ExecStopPost= run after it):
#   - rng_quality reads 0 from the first instance's start until both
#     stopped, sampled every 20 ms around each stop (no hand-back in
#     between: the second takes the hand-over over);
#   - the second says at the default verbosity that another owns it;
#   - after both, rng_quality reads what it read before.
# --list says the credit is 0, and why, while another instance owns it.
# Fails on the code before the lock: B adopts A's live record or credits
# the device, and A's stop writes the original back under a running B.
# Runs twice: on a fixture hw_random directory (-O hwrng:sysfs=DIR, the
# lock beside it; the real /dev/hwrng is read), so that it runs while a
# service holds the machine's hand-over, and on the machine's own
# rng_quality, which it skips (a "SKIP:" line) while another rngfeed holds
# the hand-over or rng_quality is 0: that lock must not be disturbed.
# The two halves run side by side (CI's time: this test is in the chain of
# alone tests): the fixture's instances own the fixture's lock and
# rng_quality, never the machine's, as beside a service; each half has its
# own directory and its own report, printed whole.
set -u
RNGFEED=${RNGFEED:-./rngfeed}
SCALE=${TEST_TIME_SCALE:-1}
SYSFS=/sys/class/misc/hw_random

skip() {
	echo "SKIP: $*"
	exit 77
}
fail() {
	echo "FAIL: $*"
	for f in "$tmp"/log.*; do
		[ -s "$f" ] && { echo "  $f:"; sed 's/^/    /' "$f"; }
	done
	exit 1
}

[ "$(id -u)" -eq 0 ] || skip "reading /dev/hwrng and writing rng_quality need root"
[ -c /dev/hwrng ] && head -c 16 /dev/hwrng >/dev/null 2>&1 ||
	skip "/dev/hwrng cannot be read (no hw_random device)"

tmp=$(mktemp -d) || exit 1
. tests/lib_pids.sh
# The machine's lock lives in the machine's place (it must be the
# service's too); its directory is removed again if this test made it.
had_run_dir=0
[ -d /run/rngfeed ] && had_run_dir=1
declare -A pids=()
QUALITY='' orig='' cur='' machine=0 fixture=
cleanup() {
	# The fixture's half, if the machine's ended first: it stops its own;
	# what it said so far is shown.
	if [ -n "$fixture" ]; then
		kill_ours -TERM "$fixture"
		wait "$fixture"
		echo "the fixture half, stopped:"
		sed 's/^/  /' "$tmp/fixture.out"
	fi
	for p in "${pids[@]}"; do
		kill_ours -KILL "$p"
		{ wait "$p"; } 2>/dev/null
	done
	if [ "$machine" = 1 ] && [ "$(cat "$QUALITY" 2>/dev/null)" != "$orig" ] &&
		[ "$(cat $SYSFS/rng_current 2>/dev/null)" = "$cur" ]; then
		echo "$orig" >"$QUALITY" 2>/dev/null ||
			echo "WARNING: could not write $orig back to $QUALITY"
	fi
	[ "$had_run_dir" = 1 ] || rmdir /run/rngfeed 2>/dev/null
	rm -rf "$tmp"
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT

quality() { cat "$QUALITY"; }

# start NAME RUNTIME_DIR [-v]: wait (20 s) until it says it uses hwrng.
start() {
	local name=$1 dir=$2
	shift 2
	RUNTIME_DIRECTORY=$dir "$RNGFEED" -f "$@" -n hwrng "${sysargs[@]}" \
		--interval 1 2>"$tmp/log.$name" &
	pids[$name]=$!
	for _ in $(seq $((200 * SCALE))); do
		grep -qE 'hwrng: (using it|.*another rngfeed owns)' "$tmp/log.$name" &&
			return 0
		kill -0 "${pids[$name]}" 2>/dev/null || fail "$name exited early"
		sleep 0.1
	done
	fail "$name did not start on hwrng within $((20 * SCALE)) s"
}

# A FIFO this shell holds open for both ends: read -t on it is a sleep
# without a fork.
mkfifo "$tmp/nap" && exec {nap}<>"$tmp/nap" || exit 1
usec() { local t=${EPOCHREALTIME//[.,]/}; echo "${t#0}"; }

# stop NAME SIGNAL, sampling rng_quality every 20 ms for 2 s after (by the
# clock: a count of samples stretched to 7 s on a loaded machine, each a
# cat and a sleep forked): every sample must read $3.
stop_watching() {
	local name=$1 sig=$2 want=$3 seen end samples=0
	kill -"$sig" "${pids[$name]}"
	{ wait "${pids[$name]}"; } 2>/dev/null
	unset "pids[$name]"
	end=$(($(usec) + 2000000 * SCALE))
	while [ "$(usec)" -lt "$end" ] || [ "$samples" -lt 10 ]; do
		read -r seen <"$QUALITY"
		[ "$seen" = "$want" ] ||
			fail "$case: after $name's SIG$sig rng_quality read $seen (want $want throughout)"
		samples=$((samples + 1))
		read -r -t 0.02 -u "$nap"
	done
}

wait_log() { # NAME REGEX WHAT
	for _ in $(seq $((100 * SCALE))); do
		grep -qE "$2" "$tmp/log.$1" && return 0
		sleep 0.1
	done
	fail "$case: $1 did not say $3 within $((10 * SCALE)) s"
}

# After a SIGKILL with nobody waiting: the unit's ExecStopPost= on the
# machine; on the fixture (which --restore-hwrng-quality cannot name) a
# third instance, which adopts the crash record (its owner's lock is free)
# and hands it back at its stop.
after_crash() { # RUNTIME_DIR
	if [ "$machine" = 1 ]; then
		RUNTIME_DIRECTORY=$1 "$RNGFEED" -c /dev/null \
			--restore-hwrng-quality >"$tmp/log.restore" 2>&1 ||
			fail "$case: --restore-hwrng-quality failed"
	else
		start c "$tmp/c" -v
		grep -q "earlier run, which set it to 0 (was $orig)" "$tmp/log.c" ||
			fail "$case: a later instance did not adopt the crash record"
		stop_watching c TERM "$orig"
	fi
}

# one_case SAME_DIR(0/1) FIRST_TO_STOP(a/b) OWNER_SIGNAL
one_case() {
	local same=$1 first=$2 sig=$3 dir_b
	case="$label: runtime dir $([ "$same" = 1 ] && echo same || echo different), $first stops first (SIG$sig)"
	rm -rf "$tmp/a" "$tmp/b" "$tmp/c" "$tmp"/log.*
	dir_b=$tmp/b
	[ "$same" = 1 ] && dir_b=$tmp/a
	start a "$tmp/a" -v
	[ "$(quality)" = 0 ] || fail "$case: A runs, rng_quality reads $(quality)"
	# B at the default verbosity: it must say so without -v.
	start b "$dir_b"
	grep -q "another rngfeed owns the hand-over of $cur" "$tmp/log.b" ||
		fail "$case: B did not say another instance owns the hand-over"
	grep -q 'earlier run' "$tmp/log.b" && fail "$case: B adopted A's live record"
	# --list agrees with B's run: credit 0 while A owns it, and why.
	list=$("$RNGFEED" -c /dev/null --list -n hwrng "${sysargs[@]}" 2>&1 | grep '^hwrng ')
	[ "$(awk '{print $3}' <<<"$list")" = 0 ] &&
		grep -q "credit 0 here: another rngfeed owns the hand-over of $cur" <<<"$list" ||
		fail "$case: with A running, --list says: $list"
	[ "$(quality)" = 0 ] || fail "$case: with both running rng_quality reads $(quality)"
	if [ "$first" = a ]; then
		stop_watching a "$sig" 0
		if [ "$sig" = KILL ] && [ "$machine" = 1 ]; then
			# The unit's ExecStopPost= for A: B's to keep.
			RUNTIME_DIRECTORY=$tmp/a "$RNGFEED" -c /dev/null \
				--restore-hwrng-quality >"$tmp/log.restore" 2>&1 ||
				fail "$case: --restore-hwrng-quality failed"
			[ "$(quality)" = 0 ] || fail "$case: A's ExecStopPost= put $(quality) back under B"
		fi
		wait_log b 'the other rngfeed stopped.*handed over' "it took the hand-over over"
		[ "$(quality)" = 0 ] || fail "$case: B took over, rng_quality reads $(quality)"
		stop_watching b TERM "$orig"
	else
		stop_watching b TERM 0
		if [ "$sig" = KILL ]; then
			stop_watching a KILL 0
			after_crash "$tmp/a"
		else
			stop_watching a TERM "$orig"
		fi
	fi
	[ "$(quality)" = "$orig" ] || fail "$case: after both rng_quality reads $(quality), not $orig"
	list=$("$RNGFEED" -c /dev/null --list -n hwrng "${sysargs[@]}" 2>&1 | grep '^hwrng ')
	[ "$(awk '{print $3}' <<<"$list")" -gt 0 ] && ! grep -q 'another rngfeed' <<<"$list" ||
		fail "$case: with none running, --list says: $list"
	[ ! -s "$LOCK" ] || fail "$case: the lock still holds a record: $(cat "$LOCK")"
	echo "ok: $case: 0 while either ran, $orig after both"
}

all_cases() {
	one_case 0 a TERM
	one_case 0 b TERM
	one_case 1 a TERM
	one_case 1 b TERM
	one_case 0 a KILL
	one_case 1 b KILL
}

# ---- on a fixture: what the kernel shows, as files --------------------
# In the background, in a directory of its own; its instances are stopped
# by its own clean-up however it ends; its report and status are read
# after the machine's half.
fixture_half() {
	tmp=$tmp/fixture machine=0 fixture=
	pids=()
	mkdir "$tmp" || exit 1
	half=$BASHPID
	trap '[ "$BASHPID" != "$half" ] || for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; { wait "$p"; } 2>/dev/null; done' EXIT
	trap 'exit 1' TERM
	fx=$tmp/sysfs
	mkdir "$fx"
	echo virtio_rng.0 >"$fx/rng_current"
	echo "virtio_rng.0 none " >"$fx/rng_available"
	echo 1000 >"$fx/rng_quality"
	echo 0 >"$fx/rng_selected"
	label=fixture QUALITY=$fx/rng_quality LOCK=$fx/rngfeed-hwrng.lock
	cur=virtio_rng.0 orig=1000 sysargs=(-O "hwrng:sysfs=$fx")
	all_cases
}
fixture_half >"$tmp/fixture.out" 2>&1 &
fixture=$!
# fixture_done: its report, and its failure is the test's.
fixture_done() {
	wait "$fixture"
	local rc=$?
	fixture=
	cat "$tmp/fixture.out"
	[ $rc -eq 0 ] || { echo "FAIL: the fixture half (exit $rc)"; exit 1; }
}

# ---- on the machine's own device --------------------------------------
machine_skip() {
	fixture_done
	echo "SKIP: machine: $*"
	echo "PASS: two instances in either order and either runtime directory leave rng_quality at 0 while either runs and at its value after both (fixture)"
	exit 0
}
# Under make sanitize the fixture half ran the same code under ASan; the
# machine's half is make check's (CI's time: it is a chain of alone tests).
[ -z "${RNGFEED_SANITIZED:-}" ] || machine_skip "make sanitize: the fixture half ran this code under ASan (make check runs this half)"
[ -r "$SYSFS/rng_quality" ] || machine_skip "no $SYSFS/rng_quality (no hw_random device, or a kernel before 5.18)"
cur=$(cat $SYSFS/rng_current 2>/dev/null)
case "$cur" in "" | none) machine_skip "no current hw_random device" ;; esac
orig=$(cat "$SYSFS/rng_quality") || machine_skip "cannot read rng_quality"
[ "$orig" -gt 0 ] 2>/dev/null ||
	machine_skip "rng_quality of $cur is already '$orig': nothing to hand over"
[ ! -s /run/rngfeed/hwrng.lock ] || machine_skip "/run/rngfeed/hwrng.lock holds a record: another rngfeed owns the hand-over"
[ ! -s /run/rngfeed/hwrng-quality ] ||
	machine_skip "/run/rngfeed/hwrng-quality is there: another rngfeed holds the hand-over"
label=machine QUALITY=$SYSFS/rng_quality LOCK=/run/rngfeed/hwrng.lock machine=1 sysargs=()
all_cases
fixture_done
echo "PASS: two instances in either order and either runtime directory leave rng_quality of $cur at 0 while either runs and at $orig after both (fixture and machine)"
