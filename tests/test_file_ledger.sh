#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The file ledger (issue 25, items 1-3; issue 33 keys it by content): a
# credited regular file is read through a ledger kept in the state
# directory, block by block, so time does not credit the same bytes twice.
# Credit is measured from outside the process: bench/shim.so (LD_PRELOAD)
# counts the bits of every RNDADDENTROPY the kernel accepted.  Each case
# bounds the credit by the file's own bits (whole blocks x 20,000 x
# credit / 1024); a claimed credit is 0 until the file's first full
# assessment (26 blocks in), so the files that must be credited have 40:
#   storm    a 500,000-byte file at min-entropy=8, credit=1024, SIGHUP
#            every 0.25 s for 6 s (--bench-fill 7): the old code reopened
#            it at byte 0 on every reload; also at most the file's size
#            read (the summary's raw bytes);
#   paths    a 25,000-byte file read to its end, then named by a symlink,
#            its real path and a hard link, a SIGHUP (config file reload)
#            each: the same content, not read again;
#   restart  the same 25,000-byte file over three runs sharing the state
#            directory: credited once in all (the old code: every run);
#   changed  a 100,000-byte file read, then rewritten in place (same
#            inode, other bytes): new input, credited again;
#   appended bytes appended to a file read to its end: only they are read;
#   two      two instances at once on one file and state directory: they
#            share it (at most its bytes read, its bits credited in all);
#   user     -D nobody: the readers run as nobody and write the ledger
#            (given to that user at start), credit a 100,000-byte file,
#            and a later run finds the file read.
# Each run uses a private state directory (STATE_DIRECTORY, as systemd's
# StateDirectory= sets it; the old code ignores it, so the same commands
# show its behaviour).  Exit 0 pass, 1 fail, 77 skip.
set -u
. tests/lib_measure.sh

RNGFEED=${RNGFEED:-./rngfeed}
SCALE=${TEST_TIME_SCALE:-1}

[ "$(id -u)" -eq 0 ] || skip "needs root (--bench-fill feeds the kernel)"
need_built "$RNGFEED"
measure_need_shim "$RNGFEED"
measure_temp test_file_ledger
pid=
export STATE_DIRECTORY="$tmp/state"

BLOCK=2500 # MONITOR_BLOCK_BYTES: 20,000 bits
shimdir=$tmp # where the shim writes its counts (writable by the daemon's user)

# Start rngfeed under the shim in the background: $pid.  NAME ARGS...
start() {
	local name=$1
	shift
	env LD_PRELOAD="$SHIM" RNGFEED_SHIM_OUT="$shimdir/$name.shim" \
		"$RNGFEED" -f -v "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null &
	pid=$!
}

# Wait for the run to end (bounded) and print the bits the shim counted.
credited() { # NAME
	local i
	for i in $(seq $((600 * SCALE))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		fail "$1: still running after $((60 * SCALE)) s"
		kill -KILL "$pid"
	fi
	wait "$pid"
	pid=
	sed -n 's/.* credited_bits=\([0-9]*\).*final=1.*/\1/p' "$shimdir/$1.shim" 2>/dev/null
}

# Wait until FILE has COUNT lines matching RE (bounded): 0 yes.
wait_lines() { # FILE RE COUNT
	local i
	for i in $(seq $((300 * SCALE))); do
		[ "$(grep -c -- "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.1
	done
	return 1
}

bound() { # BYTES CREDIT
	echo $(($1 / BLOCK * 20000 * $2 / 1024))
}

# Until NAME's log says its file was read to its end (its first full
# assessment came after 26 blocks: credit after), then SIGTERM; prints the
# bits the shim counted.
until_finished() { # NAME
	wait_lines "$tmp/$1.err" "file: finished: " 1 || fail "$1: never finished"
	kill -TERM "$pid" 2>/dev/null
	credited "$1"
}

# ---- storm ---------------------------------------------------------------
head -c 500000 /dev/urandom >"$tmp/storm"
start storm -c /dev/null -n file -O "file:device=$tmp/storm" \
	-O file:min-entropy=8 -O file:credit=1024 --bench-fill 7
wait_lines "$tmp/storm.err" "file: opened " 1 || fail "storm: never opened"
for _ in $(seq 24); do
	kill -HUP "$pid" 2>/dev/null
	sleep 0.25
done
hups=$(grep -c "SIGHUP: re-reading" "$tmp/storm.err")
c=$(credited storm)
raw=$(sed -n 's/^rngfeed:   file: \([0-9]*\) raw bytes.*/\1/p' "$tmp/storm.err")
b=$(bound 500000 1024)
if [ -n "$c" ] && [ "$c" -le "$b" ] && [ "$hups" -ge 10 ] &&
	[ -n "$raw" ] && [ "$raw" -le 500000 ]; then
	ok "storm: $hups reloads, $raw bytes read, credited $c bits <= $b (the file's bits)"
else
	fail "storm: $hups reloads, '$raw' bytes read of 500000, credited '$c' bits (bound $b): $(grep -E 'finished|opened' "$tmp/storm.err" | tail -n 3)"
fi

# ---- paths ---------------------------------------------------------------
CREDIT=768
head -c 25000 /dev/urandom >"$tmp/real"
ln -s "$tmp/real" "$tmp/symlink"
ln "$tmp/real" "$tmp/hardlink"
conf() { printf '[source file]\ndevice = %s\ncredit = %s\n' "$1" "$CREDIT" >"$tmp/paths.conf"; }
conf "$tmp/real"
start paths -c "$tmp/paths.conf" -n file --bench-fill $((12 * SCALE))
n=1
wait_lines "$tmp/paths.err" "file: finished: " $n || fail "paths: the first read never finished"
for p in "$tmp/symlink" "$tmp/real" "$tmp/hardlink"; do
	conf "$p"
	kill -HUP "$pid"
	n=$((n + 1))
	# The old code reads it again to its end; the new one finds its end
	# in the ledger at once.  Either way one more "finished" line.
	wait_lines "$tmp/paths.err" "file: finished: " $n || fail "paths: $p: no finished line after the SIGHUP"
done
c=$(credited paths)
b=$(bound 25000 $CREDIT)
if [ -n "$c" ] && [ "$c" -le "$b" ]; then
	ok "paths: real, symlink, real, hard link: credited $c bits <= $b"
else
	fail "paths: credited '$c' bits > $b: $(grep 'finished' "$tmp/paths.err")"
fi

# ---- restart -------------------------------------------------------------
head -c 25000 /dev/urandom >"$tmp/seed"
total=0
for run in 1 2 3; do
	start "restart$run" -c /dev/null -n file -O "file:device=$tmp/seed" \
		-O "file:credit=$CREDIT" --bench-fill 2
	c=$(credited "restart$run")
	[ -n "$c" ] || { fail "restart: run $run: no shim record"; c=0; }
	total=$((total + c))
done
if [ "$total" -le "$b" ] &&
	grep -q "finished: end of $tmp/seed (10 blocks read before skipped: the file ledger) after 0 bytes" "$tmp/restart3.err"; then
	ok "restart: three runs credited $total bits in all <= $b; the third began at its end"
else
	fail "restart: three runs credited $total bits > $b (or no ledger line): $(grep finished "$tmp"/restart*.err)"
fi

# ---- changed -------------------------------------------------------------
# Same inode, other bytes: new input.
head -c 100000 /dev/urandom >"$tmp/big"
start changed1 -c /dev/null -n file -O "file:device=$tmp/big" \
	-O "file:credit=$CREDIT" --bench-fill $((600 * SCALE))
c1=$(until_finished changed1)
head -c 100000 /dev/urandom | dd of="$tmp/big" conv=notrunc status=none
start changed -c /dev/null -n file -O "file:device=$tmp/big" \
	-O "file:credit=$CREDIT" --bench-fill $((600 * SCALE))
c=$(until_finished changed)
b3=$(bound 100000 $CREDIT)
if [ -n "$c1" ] && [ -n "$c" ] && [ "$c" -gt 0 ] && [ "$c" -le "$b3" ] &&
	grep -q "finished: end of $tmp/big after 100000 bytes" "$tmp/changed.err"; then
	ok "changed: rewritten in place, read as new input: credited $c bits (<= $b3; first $c1)"
else
	fail "changed: credited '$c' bits (first '$c1'): $(grep finished "$tmp/changed.err")"
fi

# ---- appended ------------------------------------------------------------
head -c 5000 /dev/urandom >>"$tmp/seed"
start appended -c /dev/null -n file -O "file:device=$tmp/seed" \
	-O "file:credit=$CREDIT" --bench-fill 2
c=$(credited appended)
b2=$(bound 5000 $CREDIT)
if [ -n "$c" ] && [ "$c" -le "$b2" ] &&
	grep -q "finished: end of $tmp/seed (10 blocks read before skipped: the file ledger) after 5000 bytes" "$tmp/appended.err"; then
	ok "appended: only the 5,000 new bytes read: credited $c bits <= $b2"
else
	fail "appended: credited '$c' bits (bound $b2): $(grep finished "$tmp/appended.err")"
fi

# ---- two -----------------------------------------------------------------
# Two instances on one file and one state directory at once: each claims
# what it reads in the ledger first, so they share the file, never both
# read a byte.
head -c 500000 /dev/urandom >"$tmp/two"
start two_a -c /dev/null -n file -O "file:device=$tmp/two" \
	-O file:min-entropy=8 -O file:credit=1024 --bench-fill 4
pid_a=$pid
start two_b -c /dev/null -n file -O "file:device=$tmp/two" \
	-O file:min-entropy=8 -O file:credit=1024 --bench-fill 4
c_b=$(credited two_b)
pid=$pid_a
c_a=$(credited two_a)
raw=0
for x in two_a two_b; do
	r=$(sed -n 's/^rngfeed:   file: \([0-9]*\) raw bytes.*/\1/p' "$tmp/$x.err")
	raw=$((raw + ${r:-999999999}))
done
b4=$(bound 500000 1024)
if [ -n "$c_a" ] && [ -n "$c_b" ] && [ $((c_a + c_b)) -le "$b4" ] && [ "$raw" -le 500000 ]; then
	ok "two: two instances at once read $raw bytes of 500000 in all, credited $c_a + $c_b <= $b4"
else
	fail "two: two instances read $raw bytes of 500000, credited '$c_a' + '$c_b' (bound $b4)"
fi

# ---- user ----------------------------------------------------------------
# -D nobody: the ledger is given to the user the readers run as, who
# writes it; a later run (as root) finds the file read.
if id nobody >/dev/null 2>&1; then
	chmod 755 "$tmp"
	mkdir "$tmp/shim" && chmod 777 "$tmp/shim" # not sticky: the shim renames over its own first record, made as root
	shimdir=$tmp/shim
	head -c 100000 /dev/urandom >"$tmp/user"
	chmod 644 "$tmp/user"
	start user -c /dev/null -n file -O "file:device=$tmp/user" \
		-O "file:credit=$CREDIT" -D nobody --bench-fill $((600 * SCALE))
	c=$(until_finished user)
	start user2 -c /dev/null -n file -O "file:device=$tmp/user" \
		-O "file:credit=$CREDIT" --bench-fill 2
	c2=$(credited user2)
	b3=$(bound 100000 $CREDIT)
	if [ -n "$c" ] && [ "$c" -gt 0 ] && [ "$c" -le "$b3" ] && [ "${c2:-x}" = 0 ] &&
		grep -q "finished: end of $tmp/user after 100000 bytes" "$tmp/user.err" &&
		grep -q "finished: end of $tmp/user (40 blocks read before skipped: the file ledger) after 0 bytes" "$tmp/user2.err"; then
		ok "user: read as nobody (-D), credited $c bits <= $b3; the next run found it read (0 bits)"
	else
		fail "user: credited '$c' as nobody, then '$c2': $(grep -hE 'finished|ledger|failed' "$tmp/user.err" "$tmp/user2.err")"
	fi
else
	say "SKIP: user: no user nobody here"
fi

if [ $failures -ne 0 ]; then
	say "$failures failure(s)"
	exit 1
fi
exit 0
