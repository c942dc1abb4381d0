#!/bin/bash
# run-tests: alone (its daemons read the machine's hw_random device)
# SPDX-License-Identifier: GPL-2.0-or-later
# Never block, never hang (issue 24, the cases that are not the EGD
# server's): each numbered case of the issue against the real daemon, each
# failing on the code before it.
#   1  a file source on a FIFO without a writer: SIGTERM stops it (daemon
#      and -t), and READY=1 comes within --ready-timeout + 1 s; the same
#      FIFO named as hwrng's device is refused, not waited on;
#   2  SIGHUP reopens that FIFO after its writer left: SIGTERM still works;
#   3  --stdout into a pipe nobody reads: SIGTERM still works;
#   6  without -f, a start that fails after detaching exits 1 with the
#      message on stderr (a missing FIFO path; a locked PID file);
#   7  SIGHUP, SIGUSR1, SIGUSR2 while a large config file is read: queued
#      for the loop, not fatal;
#   8  -p on a file that is not a PID file (plain text, a FIFO): exit 2,
#      left untouched;
#   9  --stdout with fd 1 closed: /dev/null takes its place, exit 0;
#  10  -D nobody -p in a root-owned directory: the PID file is removed;
#  11  the unit: RestartPreventExitStatus=2 and a start limit it can reach;
#  13  seconds options are plain decimals, no leading blanks, --egd-owner
#      checked at configuration time, "user =" errors name FILE:LINE, -D
#      names the capability it lacks.
# Every wait has a generous bound (times TEST_TIME_SCALE); "stopped" means
# gone before it.  Prints a table in the columns of the README's fault
# catalogue ("Never block:" rows).
# Run from the top of the tree, as root:
#   RNGFEED=./rngfeed bash tests/test_neverblock.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u
. tests/lib_measure.sh

RNGFEED=${RNGFEED:-./rngfeed}
SCALE=${TEST_TIME_SCALE:-1}
BOUND=$((5 * SCALE)) # seconds: "it stopped" / "it ended" within this
say() { printf '%s\n' "$*"; }
[ -x "$RNGFEED" ] || { say "FAIL: $RNGFEED is not built"; exit 1; }
[ "$(id -u)" -eq 0 ] || { say "SKIP: needs root (PID files, -D, feeding the kernel)"; exit 77; }
"$RNGFEED" -c /dev/null --list 2>/dev/null | grep -qE '^rdrand +available' ||
	{ say "SKIP: no RDRAND here (the healthy source of these cases)"; exit 77; }

tmp=$(mktemp -d /tmp/test_neverblock.XXXXXX) || exit 1
chmod 755 "$tmp"
bgpids=()
cleanup() {
	local p
	for p in "${bgpids[@]}"; do kill "$p" 2>/dev/null; done
	# A detached daemon (the code before case 6 ran one), or one
	# helper_notify left behind hanging with SIGTERM blocked: found by
	# this run's own temporary path, nothing else.
	for p in $(pgrep -f -- "$tmp/" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT
trap 'exit 1' INT TERM
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

failures=0
: >"$tmp/table"
# row WHAT DETECTED DAEMON-STATE PROBLEM ("" = pass)
row() {
	printf '%s|%s|%s|%s\n' "$1" "$2" "$3" "${4:-ok}" >>"$tmp/table"
	if [ -n "${4:-}" ]; then
		failures=$((failures + 1))
		say "FAIL: $1: $4"
	fi
}

# stop PID: SIGTERM, then wait for it to go (bound BOUND).  Sets $took and
# $rc (124: still alive, then killed).
stop() {
	local p=$1 t0 i
	kill -TERM "$p" 2>/dev/null
	t0=$(now)
	for i in $(seq $((BOUND * 20))); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.05
	done
	took=$(since "$t0")
	if kill -0 "$p" 2>/dev/null; then
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		rc=124
	else
		wait "$p" 2>/dev/null
		rc=$?
	fi
}

stopped_ok() { # the problem text for stop()'s outcome, "" if fine
	if [ "$rc" = 124 ]; then
		echo "still running ${BOUND} s after SIGTERM"
	elif [ "$rc" != 0 ]; then
		echo "exit $rc after SIGTERM (want 0)"
	fi
}

# ---- 1: a FIFO without a writer, daemon and -t --------------------------
mkfifo "$tmp/fifo1"
for mode in daemon test; do
	extra=; [ $mode = test ] && extra=-t
	# shellcheck disable=SC2086 # extra: one word or none
	"$RNGFEED" -f -v $extra -c /dev/null -n file -O "file:device=$tmp/fifo1" \
		</dev/null >/dev/null 2>"$tmp/fifo1.$mode.err" &
	p=$!
	bgpids+=($p)
	# Start-up has ended: the reader thread says it opened the source
	# (the code before this never got that far).
	wait_for "$BOUND" grep -q 'file: opened' "$tmp/fifo1.$mode.err"
	stop "$p"
	row "a FIFO without a writer (-n file, $mode mode), SIGTERM" \
		"opened O_NONBLOCK; its reader thread waits in poll for a writer" \
		"exit $rc $took s after SIGTERM" "$(stopped_ok)"
done

# READY=1 within --ready-timeout + 1 s, a credited FIFO source that has
# nothing: helper_notify stands in for systemd and sends SIGTERM at READY.
if [ -x tests/helper_notify ]; then
	t0=$(now)
	timeout -k 1 $((10 * SCALE)) tests/helper_notify 0 "$RNGFEED" -f -v -c /dev/null -n file \
		-O "file:device=$tmp/fifo1" -O file:credit=100 --ready-timeout 1 \
		>"$tmp/ready.notify" 2>"$tmp/ready.err"
	rc=$?
	took=$(since "$t0")
	at=$(sed -n 's/.*ready after \([0-9.]*\) s without a credit yet.*/\1/p' "$tmp/ready.err" | head -n1)
	problem=
	if ! grep -qx 'notify: READY=1' "$tmp/ready.notify"; then
		problem="no READY=1 (exit $rc after $took s)"
	elif [ -z "$at" ]; then
		problem="READY=1 without the 'ready after' notice: $(tail -n2 "$tmp/ready.err")"
	elif ! awk -v a="$at" -v s="$SCALE" 'BEGIN { exit !(a <= 1 + 1 * s) }'; then
		problem="READY=1 after $at s (want <= --ready-timeout 1 + 1 s)"
	elif [ "$rc" != 0 ]; then
		problem="exit $rc after READY and SIGTERM"
	fi
	row "a FIFO without a writer, credit 100, --ready-timeout 1: READY=1" \
		"the READY rule: nothing credited can come yet" \
		"READY=1 after ${at:-?} s, exit $rc" "$problem"
else
	say "SKIP: READY row: tests/helper_notify is not built"
fi

# A FIFO named as a device (hwrng -r): refused, not waited on.
timeout -k 1 "$BOUND" "$RNGFEED" -f -t -c /dev/null -n hwrng -r "$tmp/fifo1" \
	</dev/null >/dev/null 2>"$tmp/hwrng_fifo.err"
rc=$?
problem=
[ "$rc" = 1 ] || problem="exit $rc (want 1: no usable source)"
grep -q 'not a character device' "$tmp/hwrng_fifo.err" ||
	problem="${problem:+$problem; }the FIFO is not named as the wrong type"
row "hwrng -r FIFO (a FIFO named as the device)" \
	"opened O_NONBLOCK, then refused: not a character device" \
	"exit $rc" "$problem"

# ---- 2: SIGHUP reopens the FIFO after its writer left -------------------
mkfifo "$tmp/fifo2"
(exec 3>"$tmp/fifo2"; head -c 50000 /dev/urandom >&3; sleep "$SCALE") &
writer=$!
bgpids+=($writer)
"$RNGFEED" -f -t -v -c /dev/null -n file -O "file:device=$tmp/fifo2" \
	</dev/null >/dev/null 2>"$tmp/fifo2.err" &
p=$!
bgpids+=($p)
wait_for "$BOUND" grep -q 'file: opened' "$tmp/fifo2.err"
wait "$writer" 2>/dev/null
kill -HUP "$p"
wait_for "$BOUND" grep -q 'SIGHUP' "$tmp/fifo2.err"
stop "$p"
row "SIGHUP with a FIFO whose writer left, then SIGTERM" \
	"the reload opens it O_NONBLOCK (its reader waits in poll)" \
	"exit $rc $took s after SIGTERM" "$(stopped_ok)"

# ---- 3: --stdout into a pipe nobody reads -------------------------------
mkfifo "$tmp/pipe3"
sleep $((60 * SCALE)) <"$tmp/pipe3" &
reader=$!
bgpids+=($reader)
"$RNGFEED" -f -c /dev/null -n rdrand --stdout >"$tmp/pipe3" 2>"$tmp/stdout.err" &
p=$!
bgpids+=($p)
# Full once the daemon is blocked: the pipe holds what it holds.
sleep "$SCALE"
stop "$p"
kill "$reader" 2>/dev/null
row "--stdout into a pipe nobody reads, SIGTERM" \
	"stdout non-blocking, polled for POLLOUT" \
	"exit $rc $took s after SIGTERM" "$(stopped_ok)"

# ---- 6: detaching reports the start-up's verdict -------------------------
t0=$(now)
timeout -k 1 "$BOUND" "$RNGFEED" -c /dev/null -n file -O "file:device=$tmp/nope" \
	</dev/null >/dev/null 2>"$tmp/detach1.err"
rc=$?
problem=
[ "$rc" = 1 ] || problem="exit $rc (want 1)"
[ "$(grep -c '' "$tmp/detach1.err")" -ge 1 ] || problem="${problem:+$problem; }no message on stderr"
row "no -f, the only source missing (file:device=/nope)" \
	"the parent waits for the child's verdict (a pipe)" \
	"exit $rc, stderr: $(head -n1 "$tmp/detach1.err" | cut -c1-80)" "$problem"

"$RNGFEED" -f -t -q -c /dev/null -n rdrand -p "$tmp/held.pid" </dev/null >/dev/null 2>"$tmp/held.err" &
held=$!
bgpids+=($held)
wait_for "$BOUND" test -s "$tmp/held.pid"
timeout -k 1 "$BOUND" "$RNGFEED" -c /dev/null -n rdrand -p "$tmp/held.pid" \
	</dev/null >/dev/null 2>"$tmp/detach2.err"
rc=$?
problem=
[ "$rc" = 1 ] || problem="exit $rc (want 1)"
grep -q 'locked by a running process' "$tmp/detach2.err" ||
	problem="${problem:+$problem; }stderr does not say the PID file is locked: $(cat "$tmp/detach2.err")"
[ "$(cat "$tmp/held.pid" 2>/dev/null)" = "$held" ] ||
	problem="${problem:+$problem; }the running instance's PID file changed"
row "no -f, a second instance on a locked PID file" \
	"the parent waits for the child's verdict (a pipe)" \
	"exit $rc, stderr: $(head -n1 "$tmp/detach2.err" | cut -c1-80)" "$problem"
stop "$held"

# ---- 7: signals while a large config file is read -----------------------
# 30 MB of comment lines: read for a while before the signal set-up.
head -c 30000000 /dev/zero | tr '\0' '#' | fold -w 100 >"$tmp/big.conf"
for sig in HUP USR1 USR2; do
	"$RNGFEED" -f -t -q -c "$tmp/big.conf" -n rdrand </dev/null >/dev/null 2>"$tmp/sig.$sig.err" &
	p=$!
	bgpids+=($p)
	# The signal comes while the file is open, i.e. being read.
	seen=no
	wait_for "$BOUND" sh -c "ls -l /proc/$p/fd 2>/dev/null | grep -q big.conf" && seen=yes
	kill -"$sig" "$p" 2>/dev/null
	problem=
	if [ $seen = no ]; then
		say "note: SIG$sig: the config file was never seen open (read too fast?)"
	fi
	# Alive after it (a fatal signal ends it at once): it reaches the
	# loop, or it is gone.
	sleep 0.5
	stop "$p"
	if [ "$rc" -ge 128 ] && [ "$rc" != 124 ]; then
		problem="killed by signal $((rc - 128)) (SIG$sig before the signal set-up)"
	else
		problem=$(stopped_ok)
	fi
	row "SIG$sig while a 30 MB config file is read" \
		"signals blocked from main()'s first instructions" \
		"exit $rc $took s after SIGTERM" "$problem"
done

# ---- 8: -p on files that are not PID files ------------------------------
printf 'precious notes\n' >"$tmp/notes.pid"
mkfifo "$tmp/fifo.pid"
for f in notes.pid fifo.pid; do
	cp -a "$tmp/$f" "$tmp/$f.before" 2>/dev/null || : 
	timeout -k 1 "$BOUND" "$RNGFEED" -f -t -c /dev/null -n rdrand -p "$tmp/$f" \
		</dev/null >/dev/null 2>"$tmp/$f.err"
	rc=$?
	problem=
	[ "$rc" = 2 ] || problem="exit $rc (want 2)"
	if [ $f = notes.pid ]; then
		[ "$(cat "$tmp/$f" 2>/dev/null)" = 'precious notes' ] ||
			problem="${problem:+$problem; }the file was changed or removed"
	else
		[ -p "$tmp/$f" ] || problem="${problem:+$problem; }the FIFO was removed"
	fi
	row "-p on a $([ $f = notes.pid ] && echo 'text file' || echo FIFO)" \
		"lstat/fstat and the content checked before it is touched" \
		"exit $rc, stderr: $(head -n1 "$tmp/$f.err" | cut -c1-80)" "$problem"
done

# ---- 9: fd 1 closed -----------------------------------------------------
timeout -k 1 "$BOUND" "$RNGFEED" -c /dev/null -n rdrand --stdout --bytes 100 \
	</dev/null >&- 2>"$tmp/closed.err"
rc=$?
problem=
[ "$rc" = 0 ] || problem="exit $rc (want 0): $(head -n1 "$tmp/closed.err")"
row "--stdout with fd 1 closed" "/dev/null opened onto closed fds 0-2 at start" \
	"exit $rc" "$problem"

# ---- 10: -D nobody -p in a root-owned directory ---------------------------
if id nobody >/dev/null 2>&1; then
	mkdir -m 755 "$tmp/rootdir"
	"$RNGFEED" -f -t -q -c /dev/null -n rdrand -D nobody -p "$tmp/rootdir/x.pid" \
		</dev/null >/dev/null 2>"$tmp/dropped.err" &
	p=$!
	bgpids+=($p)
	wait_for "$BOUND" test -s "$tmp/rootdir/x.pid"
	# After the drop (the readers run as nobody): every uid is nobody's.
	dropped=no
	wait_for "$BOUND" awk -v u="$(id -u nobody)" '$1 == "Uid:" { exit !($2 == u && $3 == u && $4 == u && $5 == u) }' \
		"/proc/$p/status" && dropped=yes
	stop "$p"
	problem=$(stopped_ok)
	[ $dropped = yes ] || problem="${problem:+$problem; }never seen running as nobody (the drop was not checked)"
	[ -e "$tmp/rootdir/x.pid" ] && problem="${problem:+$problem; }the PID file is still there"
	row "-D nobody -p FILE in a root-owned directory" \
		"a root keeper (rngfeed-pidfile) removes it, same inode and PID only" \
		"exit $rc; PID file $([ -e "$tmp/rootdir/x.pid" ] && echo left || echo removed)" "$problem"
else
	say "SKIP: -D row: no user nobody"
fi

# ---- 11: the unit ---------------------------------------------------------
unit=systemd/rngfeed.service
problem=
if [ -f "$unit" ]; then
	grep -qx 'RestartPreventExitStatus=2' "$unit" || problem="no RestartPreventExitStatus=2"
	burst=$(sed -n '/^\[Unit\]/,/^\[/s/^StartLimitBurst=\([0-9]*\)$/\1/p' "$unit")
	ival=$(sed -n '/^\[Unit\]/,/^\[/s/^StartLimitIntervalSec=\([0-9]*\)min$/\1/p' "$unit")
	rsec=$(sed -n 's/^RestartSec=\([0-9]*\)s$/\1/p' "$unit")
	if [ -z "$burst" ] || [ -z "$ival" ] || [ -z "$rsec" ]; then
		problem="${problem:+$problem; }no StartLimitBurst= and StartLimitIntervalSec=Nmin in [Unit] (or no RestartSec=Ns)"
	elif [ $((burst * rsec)) -ge $((ival * 60)) ]; then
		problem="${problem:+$problem; }$burst starts $rsec s apart never fit in $ival min"
	fi
	row "the unit: exit 2, and a crash loop" \
		"RestartPreventExitStatus=2; StartLimitBurst=${burst:-?} in ${ival:-?} min" \
		"-" "$problem"
fi

# ---- 13: input checks ---------------------------------------------------
printf '# line 1\nuser = nosuchuser\n' >"$tmp/user.conf"
# NAME|what|want exit|grep for in stderr|arguments (word-split)
CASES=(
	"hex|--retry-delay 0x10|2|'0x10'|-f -c /dev/null -n rdrand --retry-delay 0x10"
	"hexexp|--ready-timeout 0x1p+9|2|'0x1p+9'|-f -c /dev/null -n rdrand --ready-timeout 0x1p+9"
	"exp|--stats-interval 1e3|2|'1e3'|-f -t -c /dev/null -n rdrand --stats-interval 1e3"
	"owner|--egd-owner nosuchuser (no --egd-server)|2|nosuchuser|-f -c /dev/null -n rdrand --egd-owner nosuchuser"
	"owner_srv|--egd-owner nosuchuser --egd-server|2|nosuchuser|-f -c /dev/null -n rdrand --egd-owner nosuchuser --egd-server unix:$tmp/egd.sock"
	"userconf|user = nosuchuser in a config file|2|user.conf:2:|-f -c $tmp/user.conf -n rdrand"
)
for c in "${CASES[@]}"; do
	IFS='|' read -r name what want grepfor args <<<"$c"
	# shellcheck disable=SC2086 # args is a word list on purpose
	timeout -k 1 "$BOUND" "$RNGFEED" $args </dev/null >/dev/null 2>"$tmp/$name.err"
	rc=$?
	problem=
	[ "$rc" = "$want" ] || problem="exit $rc (want $want)"
	grep -qF -- "$grepfor" "$tmp/$name.err" || problem="${problem:+$problem; }stderr does not name $grepfor"
	[ "$(grep -c '' "$tmp/$name.err")" = 1 ] || problem="${problem:+$problem; }not one line on stderr"
	row "$what" "$(head -n1 "$tmp/$name.err" | cut -c1-100)" "exit $rc" "$problem"
done
# A leading blank: refused where other numbers refuse it.
for a in "--check|--min-entropy| 7" "-O|rdrand:min-entropy= 7|" "--egd-socket-mode| 0660|"; do
	IFS='|' read -r o1 o2 o3 <<<"$a"
	if [ "$o1" = --check ]; then
		set -- --check "$o2" "$o3"
	else
		set -- "$o1" "$o2" --list
	fi
	timeout -k 1 "$BOUND" "$RNGFEED" -c /dev/null "$@" </dev/null >/dev/null 2>"$tmp/blank.err"
	rc=$?
	problem=
	[ "$rc" = 2 ] || problem="exit $rc (want 2)"
	row "a leading blank: $(printf "'%s' " "$@")" "$(head -n1 "$tmp/blank.err" | cut -c1-100)" "exit $rc" "$problem"
done
# -D as root without CAP_SETPCAP: the message names it.  Out of the
# bounding set and the inheritable set: root's inheritable set, full in a
# systemd-nspawn container, is in a root program's permitted set after
# exec whatever the bounding set says.
# Then again where root's inheritable set is full, as systemd-nspawn
# starts a container's programs (setpriv --inh-caps: every capability of
# the bounding set).
if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	bnd=$((16#$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status)))
	full=() i=0
	while read -r cap; do
		(( bnd >> i & 1 )) && full+=("+$cap")
		i=$((i + 1))
	done < <(setpriv --list-caps)
	for inh in "" "$(IFS=,; echo "${full[*]}")"; do
		pre=()
		[ -z "$inh" ] || pre=(setpriv --inh-caps="$inh")
		timeout -k 1 "$BOUND" "${pre[@]}" setpriv --inh-caps=-all --bounding-set -setpcap \
			"$RNGFEED" -f -t -c /dev/null -n rdrand -D nobody </dev/null >/dev/null 2>"$tmp/setpcap.err"
		rc=$?
		problem=
		[ "$rc" = 1 ] || problem="exit $rc (want 1)"
		grep -q 'CAP_SETPCAP' "$tmp/setpcap.err" || problem="${problem:+$problem; }the message does not name CAP_SETPCAP: $(head -n1 "$tmp/setpcap.err")"
		row "-D nobody as root without CAP_SETPCAP${inh:+, a full inheritable set (systemd-nspawn)}" \
			"$(head -n1 "$tmp/setpcap.err" | cut -c1-100)" "exit $rc" "$problem"
	done
else
	say "SKIP: CAP_SETPCAP row: no setpriv or no user nobody"
fi

echo
print_rows "Never block" "$tmp/table"
echo
[ $failures -eq 0 ] || { say "FAIL: $failures rows failed"; exit 1; }
exit 0
