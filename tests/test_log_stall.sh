#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A log stream that stops taking lines (issue 33, item 1): the daemon's
# stderr a pipe of 4 KiB, then of 64 KiB, whose reader has stopped
# (tests/helper_logpipe holds it and reads only when told), and the native
# journal's datagram socket read by nobody (in a mount namespace of the
# test's own, a tmpfs on /run/systemd holds one at
# /run/systemd/journal/socket).  The daemon feeds the kernel from a file
# source with a fake systemd watching it (NOTIFY_SOCKET, WATCHDOG_USEC),
# and is made to log (SIGUSR1: rates and a summary) until the stream is
# full and more.  Then, for each stream:
#   stalled   it goes on: WATCHDOG=1 keeps coming, and the metrics file is
#             rewritten with rngfeed_log_lines_dropped_total > 0 and the
#             kernel fed more than before;
#   drained   the reader reads again: one line says how many lines were
#             dropped there; SIGTERM: its summary and "dropped in all"
#             (the same count as the metric at exit) are written, exit 0;
#   stop      a second daemon, stalled the same way, gets SIGTERM: gone
#             within 1 s (STOP_LIMIT, times TEST_TIME_SCALE), exit 0,
#             timed by the helper, which reaps it at once.
# Before this, its main thread waited in write(2) on the full pipe (in
# sendmsg(2) on the journal's socket): no watchdog, no metrics, no feeding,
# and SIGTERM unseen until the stream drained.
# Every other wait has a bound that holds on a loaded machine (BOUND).
# Run from the top of the tree, as root:
#   RNGFEED=./rngfeed bash tests/test_log_stall.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u
. tests/lib_measure.sh

RNGFEED=${RNGFEED:-./rngfeed}
HELPER=tests/helper_logpipe
SCALE=${TEST_TIME_SCALE:-1}
# A sanitized build (make sanitize) is slower by design: 3 s there.
[ -n "${RNGFEED_SANITIZED:-}" ] && [ "$SCALE" = 1 ] && SCALE=3
STOP_LIMIT=$(awk -v s="$SCALE" 'BEGIN { print 1.0 * s }')
BOUND=$((15 * SCALE)) # seconds: what is awaited comes within this
USR1_GAP=0.02         # seconds between two SIGUSR1 while filling

need_feeder "needs root (feeding the kernel needs CAP_SYS_ADMIN)"
need_built "$RNGFEED" "$HELPER"
command -v perl >/dev/null || skip "needs perl (the notify socket)"
RNGFEED=$(realpath "$RNGFEED") HELPER=$(realpath "$HELPER")
measure_temp test_log_stall
head -c 4000000 /dev/urandom >"$tmp/data"

# listen DIR: systemd's side of sd_notify, DIR/notify -> DIR/notify.log.
listen() {
	perl -MSocket -e '
		my ($path, $out) = @ARGV;
		socket(my $s, PF_UNIX, SOCK_DGRAM, 0) or die "socket: $!";
		bind($s, pack_sockaddr_un($path)) or die "bind: $!";
		open(my $o, ">", $out) or die; select($o); $| = 1;
		print "listening\n";
		while (defined recv($s, my $buf, 65536, 0)) { print "$buf\n"; }
	' "$1/notify" "$1/notify.log" >/dev/null 2>&1 &
	echo $! >>"$tmp/pids"
}

field() { awk -v k="$2" '$1 == k { print $2 }' "$1/status" 2>/dev/null; }
watchdogs() { grep -c '^WATCHDOG=1' "$1/notify.log" 2>/dev/null; }
more_watchdogs() { [ "$(watchdogs "$1")" -ge "$2" ]; }
metric_above() { # DIR NAME VALUE
	awk -v k="$2" -v v="$3" '$1 == k && $2 + 0 > v + 0 { f = 1 } END { exit !f }' \
		"$1/metrics" 2>/dev/null
}
exited() { [ "$(field "$1" exited)" != - ] && [ -n "$(field "$1" exited)" ]; }
logged() { grep -q "$2" "$1/log" 2>/dev/null; }

# start KIND DIR: the daemon under the helper, stalled from the start;
# KIND is a pipe size, or "journal".  Sets $hp (the helper) and $dp.
start() {
	local kind=$1 d=$2 run=() envs=(NOTIFY_SOCKET="$2/notify" WATCHDOG_USEC=500000)
	mkdir -p "$d"
	listen "$d"
	wait_for "$BOUND" grep -qs listening "$d/notify.log" || { fail "$d: no notify socket"; return 1; }
	local daemon=("$RNGFEED" -f -v -c /dev/null -n file -O "file:device=$tmp/data"
		--interval 1 --ready-timeout 1 --metrics "$d/metrics")
	if [ "$kind" = journal ]; then
		# Only in the namespace: the tmpfs, and the socket on it.
		run=(unshare -m sh -c 'mount -t tmpfs -o mode=755 tmpfs /run/systemd &&
			mkdir /run/systemd/journal && exec "$@"' sh
			"$HELPER" -d /run/systemd/journal/socket 212992)
		envs+=(JOURNAL_STREAM=0:0) # the native journal, as under systemd
	else
		run=("$HELPER" "$kind")
	fi
	# env execs the helper: $! is its PID.
	env -u JOURNAL_STREAM "${envs[@]}" "${run[@]}" "$d/status" "$d/log" \
		"${daemon[@]}" 2>"$d/stderr" &
	hp=$!
	echo "$hp" >>"$tmp/pids"
	wait_for "$BOUND" grep -qs '^READY=1' "$d/notify.log" ||
		{ fail "$kind: no READY=1 within $BOUND s: $(tail -n3 "$d/stderr")"; return 1; }
	dp=$(field "$d" pid)
	echo "$dp" >>"$tmp/pids"
}

# fill KIND DIR: SIGUSR1 until the stream takes no more (a pipe: what it
# holds has not grown over 5 of them, about 4 KB of lines; a pipe's pages
# do not fill to the last byte), then 60 more: 48 KB of lines, more than
# the daemon keeps waiting (16 KiB).
fill() {
	local kind=$1 d=$2 size n same=0 last=-1 q
	if [ "$kind" != journal ]; then
		size=$(field "$d" size)
		n=$((BOUND * 20))
		while [ $same -lt 5 ] && [ $n -gt 0 ]; do
			kill -USR1 "$dp" 2>/dev/null
			sleep "$USR1_GAP"
			q=$(field "$d" queued)
			if [ "$q" = "$last" ] && [ "$q" -gt $((size / 2)) ]; then
				same=$((same + 1))
			else
				same=0
			fi
			last=$q
			n=$((n - 1))
		done
		[ $n -gt 0 ] || { fail "$kind: the pipe never filled ($(field "$d" queued) of $size bytes)"; return 1; }
	fi
	for n in $(seq 60); do
		kill -USR1 "$dp" 2>/dev/null
		sleep "$USR1_GAP"
	done
}

# stalled KIND DIR: with the stream stalled, the daemon goes on.
stalled() {
	local kind=$1 d=$2 w fed
	w=$(watchdogs "$d")
	wait_for "$BOUND" more_watchdogs "$d" $((w + 3)) ||
		fail "$kind stalled: WATCHDOG=1 stopped ($(watchdogs "$d") after $w in $BOUND s)"
	if wait_for "$BOUND" metric_above "$d" rngfeed_log_lines_dropped_total 0; then
		ok "$kind stalled: $(metric "$d/metrics" rngfeed_log_lines_dropped_total) lines dropped, WATCHDOG=1 still coming"
	else
		fail "$kind stalled: the metrics never counted a dropped line in $BOUND s (uptime $(metric "$d/metrics" rngfeed_uptime_seconds))"
		return 1
	fi
	fed=$(metric "$d/metrics" rngfeed_fed_bytes_total)
	wait_for "$BOUND" metric_above "$d" rngfeed_fed_bytes_total "${fed:-0}" ||
		fail "$kind stalled: the kernel was fed no more in $BOUND s (fed $fed bytes)"
}

# drained KIND DIR: the reader reads again; then a stop with the stream
# flowing.
drained() {
	local kind=$1 d=$2 total metric_total
	kill -USR1 "$hp"
	if wait_for "$BOUND" logged "$d" 'lines* dropped here'; then
		ok "$kind drained: $(grep -o 'log: [0-9]* lines* dropped here' "$d/log" | head -n1)"
	else
		fail "$kind drained: no line says how many lines were dropped"
	fi
	kill -HUP "$hp" # SIGTERM to the daemon, timed
	wait_for "$BOUND" exited "$d" || { fail "$kind drained: still running $BOUND s after SIGTERM"; return 1; }
	wait "$hp" 2>/dev/null
	[ "$(field "$d" exited)" = 0 ] || fail "$kind drained: exit $(field "$d" exited) after SIGTERM (want 0)"
	grep -q 'summary after' "$d/log" || fail "$kind drained: no summary at exit"
	total=$(sed -n 's/.*log: \([0-9]*\) lines* dropped in all.*/\1/p' "$d/log" | tail -n1)
	metric_total=$(metric "$d/metrics" rngfeed_log_lines_dropped_total)
	if [ -z "$total" ]; then
		fail "$kind drained: no 'dropped in all' line at exit"
	elif [ "$total" != "$metric_total" ]; then
		fail "$kind drained: $total lines dropped in all, the metric at exit says $metric_total"
	else
		ok "$kind drained: exit 0 in $(field "$d" stop_s) s, summary and 'log: $total lines dropped in all' written"
	fi
}

# stop KIND DIR: SIGTERM with the stream stalled.
stop() {
	local kind=$1 d=$2 took
	kill -HUP "$hp"
	wait_for "$BOUND" exited "$d"
	kill -USR1 "$hp" # drain: the helper ends once all is read
	wait_for "$BOUND" exited "$d" || { fail "$kind stop: still running $BOUND s after SIGTERM and the drain"; return 1; }
	wait "$hp" 2>/dev/null
	took=$(field "$d" stop_s)
	say "$kind: SIGTERM with the stream stalled: gone in $took s (limit $STOP_LIMIT), exit $(field "$d" exited)"
	awk -v t="$took" -v l="$STOP_LIMIT" 'BEGIN { exit !(t <= l) }' ||
		fail "$kind stop: gone $took s after SIGTERM (limit $STOP_LIMIT s)"
	[ "$(field "$d" exited)" = 0 ] || fail "$kind stop: exit $(field "$d" exited) after SIGTERM (want 0)"
}

kinds="4096 65536"
if ! ldd "$RNGFEED" 2>/dev/null | grep -q libsystemd; then
	say "SKIP: journal rows: $RNGFEED is built without libsystemd (no native journal)"
elif [ -d /run/systemd ] && command -v unshare >/dev/null &&
	unshare -m sh -c 'mount -t tmpfs tmpfs /run/systemd' 2>/dev/null; then
	kinds="$kinds journal"
else
	say "SKIP: journal rows: no /run/systemd to put a journal socket on, or no mount namespace (unshare -m)"
fi
# The kinds are independent (each its own directories, helper, daemons and
# notify sockets; the journal's in a mount namespace of its own): they run
# side by side (CI's time: one after the other, about 50 s, mostly waiting
# for metrics writes): parts beside each other (tests/lib_measure.sh),
# each kind's report printed whole, in order.  One kind's two daemons: one
# after the other.
kind_rows() { # KIND
	start "$1" "$tmp/$1.a" && fill "$1" "$tmp/$1.a" &&
		stalled "$1" "$tmp/$1.a" && drained "$1" "$tmp/$1.a"
	start "$1" "$tmp/$1.b" && fill "$1" "$tmp/$1.b" &&
		stop "$1" "$tmp/$1.b"
}
for kind in $kinds; do
	beside "$kind" kind_rows "$kind"
done
beside_wait
[ "$failures" -eq 0 ] || { say "FAIL: $failures checks failed"; exit 1; }
say "PASS"
