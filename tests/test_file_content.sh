#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The content of a regular file is credited once, whatever path, mount or
# device shows it, and an edit re-reads only the blocks that changed
# (issue 33, item 6).  Measured from outside the process: bench/shim.so
# (LD_PRELOAD) counts what the kernel was credited, the summary what was
# read.  Every daemon shares one state directory (the file ledger); the
# files hold whole blocks of /dev/urandom (8 bits a byte, true), credited
# 768/1024.  The old ledger was keyed by (device, inode): an overlayfs
# lower path and its merged path are two devices, a copy another inode.
#   sighup    one file through an overlayfs merged path, the lower path, a
#             bind mount and a copy, the configuration switched among them
#             by SIGHUP every 0.5 s, then read to its end: at most once in
#             all, credited at most its bits (the old code: 19.6 MB read
#             for 12.8 MB);
#   restarts  the same, a run per path (each stopped after 2 s), then one
#             to the file's end: at most once in all (the old code: 8.84 MB
#             for 5.40 MB);
#   five      five instances at once over four overlay mounts of one lower
#             directory, each to the file's end: at most once in all (the
#             old code: 4.5 times);
#   edits     nine runs, a byte changed between two: each edit reads one
#             block; credited at most the file's true entropy in all (the
#             old code read the whole file again after each: 1.19x);
#   tail      cut in the middle, a new tail appended: the block at the cut
#             and the tail read, nothing else;
#   damaged   the ledger overwritten with junk: nothing credited, the
#             reason said, no crash.
# The overlay cases need root and a kernel with overlayfs (else SKIP with
# the reason); their mounts are in the test's own directory.
# Run from the top of the tree as root:
#   RNGFEED=./rngfeed bash tests/test_file_content.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u
. tests/lib_measure.sh

RNGFEED=${RNGFEED:-./rngfeed}
SCALE=${TEST_TIME_SCALE:-1}
BLOCK=2500
CREDIT=768

need_feeder "needs root (--bench-fill feeds the kernel)"
need_built "$RNGFEED"
measure_need_shim "$RNGFEED"
measure_temp test_file_content
export STATE_DIRECTORY="$tmp/state"
mounts=()
pid=
# Unmount before measure_cleanup removes the directory.
trap '[ "$BASHPID" != $$ ] || { for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done; measure_cleanup; }' EXIT

start() { # NAME ARGS...
	local name=$1
	shift
	env LD_PRELOAD="$SHIM" RNGFEED_SHIM_OUT="$tmp/$name.shim" \
		"$RNGFEED" -f -v "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null &
	pid=$!
}
# Wait for the run $pid to end (bounded); the bits the shim counted.
credited() { # NAME [PID]
	local p=${2:-$pid} i
	for i in $(seq $((1200 * SCALE))); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$p" 2>/dev/null; then
		fail "$1: still running after $((120 * SCALE)) s"
		kill -KILL "$p"
	fi
	wait "$p"
	sed -n 's/.* credited_bits=\([0-9]*\).*final=1.*/\1/p' "$tmp/$1.shim" 2>/dev/null
}
# The bytes a run's summary says it read.
read_of() { sed -n 's/^rngfeed:   file: \([0-9]*\) raw bytes.*/\1/p' "$tmp/$1.err"; }
wait_lines() { # FILE RE COUNT
	local i
	for i in $(seq $((600 * SCALE))); do
		[ "$(grep -c -- "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.1
	done
	return 1
}
bits() { echo $(($1 / BLOCK * 20000 * CREDIT / 1024)); } # BYTES: their credit
conf() { printf '[source file]\ndevice = %s\ncredit = %s\n' "$1" "$CREDIT" >"$tmp/$2.conf"; }

# ---- overlayfs: the lower directory, its mounts, a bind mount, a copy ----
overlay=
if ! grep -qw overlay /proc/filesystems && ! modprobe overlay 2>/dev/null; then
	overlay="the kernel has no overlayfs"
fi
mount_overlay() { # N
	mkdir -p "$tmp/upper$1" "$tmp/work$1" "$tmp/merged$1"
	mount -t overlay "overlay$1" \
		-o "lowerdir=$tmp/lower,upperdir=$tmp/upper$1,workdir=$tmp/work$1" \
		"$tmp/merged$1" 2>"$tmp/mount.err" || return 1
	mounts+=("$tmp/merged$1")
}
mkdir -p "$tmp/lower" "$tmp/bind" "$tmp/copy"
# 7.5 MB: more than a 2-s run reads.
head -c $((3000 * BLOCK)) /dev/urandom >"$tmp/lower/seed"
cp "$tmp/lower/seed" "$tmp/copy/seed"
if [ -z "$overlay" ]; then
	for n in 1 2 3 4; do
		mount_overlay $n || { overlay="mount -t overlay failed: $(cat "$tmp/mount.err")"; break; }
	done
fi
if [ -z "$overlay" ]; then
	if mount --bind "$tmp/lower" "$tmp/bind" 2>"$tmp/mount.err"; then
		mounts+=("$tmp/bind")
	else
		overlay="mount --bind failed: $(cat "$tmp/mount.err")"
	fi
fi
[ -z "$overlay" ] && [ "$(stat -c %d "$tmp/lower/seed")" = "$(stat -c %d "$tmp/merged1/seed")" ] &&
	overlay="the merged path shows the lower file's own device"
PATHS=("$tmp/merged1/seed" "$tmp/lower/seed" "$tmp/bind/seed" "$tmp/copy/seed")
SIZE=$((3000 * BLOCK))

# ---- sighup ----------------------------------------------------------------
if [ -n "$overlay" ]; then
	say "SKIP: sighup, restarts, five: $overlay"
else
	export STATE_DIRECTORY="$tmp/state.sighup"
	conf "${PATHS[0]}" sighup
	start sighup -c "$tmp/sighup.conf" -n file --bench-fill $((600 * SCALE))
	wait_lines "$tmp/sighup.err" "file: opened " 1 || fail "sighup: never opened"
	for i in $(seq 1 25); do
		sleep 0.5
		conf "${PATHS[$((i % 4))]}" sighup
		kill -HUP "$pid" 2>/dev/null || break
	done
	# The last reload named the lower path: to its end.
	wait_lines "$tmp/sighup.err" "file: finished: end of ${PATHS[1]}" 1 ||
		fail "sighup: never read to its end"
	kill -TERM "$pid" 2>/dev/null
	hups=$(grep -c "SIGHUP: re-reading" "$tmp/sighup.err")
	c=$(credited sighup)
	r=$(read_of sighup)
	if [ -n "$c" ] && [ "$c" -le "$(bits $SIZE)" ] && [ "$hups" -ge 12 ] &&
		[ -n "$r" ] && [ "$r" -le "$SIZE" ]; then
		ok "sighup: $hups reloads over 4 paths (overlay merged, lower, bind, copy): $r bytes read of $SIZE, credited $c bits <= $(bits $SIZE)"
	else
		fail "sighup: $hups reloads: '$r' bytes read of $SIZE, credited '$c' bits (bound $(bits $SIZE))"
	fi

	# ---- restarts ------------------------------------------------------
	export STATE_DIRECTORY="$tmp/state.restarts"
	total_r=0 total_c=0
	for i in 0 1 2 3 4 5 6 7 8; do
		if [ "$i" -lt 8 ]; then
			start "restart$i" -c /dev/null -n file -O "file:device=${PATHS[$((i % 4))]}" \
				-O "file:credit=$CREDIT" --bench-fill 2
		else
			# The last one to the end.
			start "restart$i" -c /dev/null -n file -O "file:device=${PATHS[0]}" \
				-O "file:credit=$CREDIT" --bench-fill $((600 * SCALE))
			wait_lines "$tmp/restart$i.err" "file: finished: " 1 || fail "restarts: the last run never finished"
			kill -TERM "$pid" 2>/dev/null
		fi
		c=$(credited "restart$i")
		r=$(read_of "restart$i")
		total_c=$((total_c + ${c:-999999999})) total_r=$((total_r + ${r:-999999999}))
	done
	if [ "$total_c" -le "$(bits $SIZE)" ] && [ "$total_r" -le "$SIZE" ]; then
		ok "restarts: 8 runs over the 4 paths and one to the end read $total_r bytes of $SIZE, credited $total_c bits <= $(bits $SIZE)"
	else
		fail "restarts: 9 runs read $total_r bytes of $SIZE, credited $total_c bits (bound $(bits $SIZE))"
	fi

	# ---- five ----------------------------------------------------------
	# A 2.5 MB file in the lower directory, each instance to its end.
	export STATE_DIRECTORY="$tmp/state.five"
	FIVE_SIZE=$((1000 * BLOCK))
	head -c $FIVE_SIZE /dev/urandom >"$tmp/lower/five"
	fpids=()
	for i in 0 1 2 3 4; do
		start "five$i" -c /dev/null -n file -O "file:device=$tmp/merged$((i % 4 + 1))/five" \
			-O "file:credit=$CREDIT" --bench-fill $((600 * SCALE))
		fpids+=("$pid")
		echo "$pid" >>"$tmp/pids"
	done
	total_r=0 total_c=0
	for i in 0 1 2 3 4; do
		wait_lines "$tmp/five$i.err" "file: finished: " 1 || fail "five: instance $i never finished"
		kill -TERM "${fpids[$i]}" 2>/dev/null
	done
	for i in 0 1 2 3 4; do
		c=$(credited "five$i" "${fpids[$i]}")
		r=$(read_of "five$i")
		total_c=$((total_c + ${c:-999999999})) total_r=$((total_r + ${r:-999999999}))
	done
	pid=
	if [ "$total_c" -le "$(bits $FIVE_SIZE)" ] && [ "$total_r" -le "$FIVE_SIZE" ]; then
		ok "five: 5 instances over 4 overlay mounts read $total_r bytes of $FIVE_SIZE in all, credited $total_c bits <= $(bits $FIVE_SIZE)"
	else
		fail "five: 5 instances read $total_r bytes of $FIVE_SIZE in all, credited $total_c bits (bound $(bits $FIVE_SIZE))"
	fi
fi

# ---- edits -----------------------------------------------------------------
# Each run to the file's end, then stopped; a byte changed in place between
# two runs.
export STATE_DIRECTORY="$tmp/state.edits"
EDIT_SIZE=$((100 * BLOCK))
head -c $EDIT_SIZE /dev/urandom >"$tmp/edited"
total_c=0 reads=
for i in 0 1 2 3 4 5 6 7 8; do
	if [ "$i" -gt 0 ]; then
		at=$(( (i * 7919 * 31) % EDIT_SIZE ))
		old=$(od -An -tu1 -j "$at" -N1 "$tmp/edited")
		# shellcheck disable=SC2059 # the byte's escape, made here
		printf "\\x$(printf %02x $((old ^ 0xff)))" |
			dd of="$tmp/edited" bs=1 seek="$at" conv=notrunc status=none
	fi
	start "edit$i" -c /dev/null -n file -O "file:device=$tmp/edited" \
		-O "file:credit=$CREDIT" --bench-fill $((600 * SCALE))
	wait_lines "$tmp/edit$i.err" "file: finished: " 1 || fail "edit$i: never finished"
	kill -TERM "$pid" 2>/dev/null
	c=$(credited "edit$i")
	total_c=$((total_c + ${c:-999999999}))
	reads+="${reads:+ }$(read_of "edit$i")"
done
true_bits=$((EDIT_SIZE * 8))
if [ "$total_c" -le "$true_bits" ] && [ "$reads" = "$EDIT_SIZE 2500 2500 2500 2500 2500 2500 2500 2500" ]; then
	ok "edits: 9 runs, 8 one-byte edits: read $reads bytes, credited $total_c bits <= $true_bits (the file's entropy)"
else
	fail "edits: 9 runs read '$reads' bytes (each edit: one block, 2500), credited $total_c bits (entropy $true_bits)"
fi

# ---- tail ------------------------------------------------------------------
# Cut in block 60, then 20 new blocks: 60 (the cut one, whole again) to 79.
export STATE_DIRECTORY="$tmp/state.tail"
head -c $((100 * BLOCK)) /dev/urandom >"$tmp/cut"
start tail1 -c /dev/null -n file -O "file:device=$tmp/cut" -O "file:credit=$CREDIT" --bench-fill $((600 * SCALE))
wait_lines "$tmp/tail1.err" "file: finished: " 1 || fail "tail: the first run never finished"
kill -TERM "$pid" 2>/dev/null
c1=$(credited tail1)
truncate -s $((60 * BLOCK + 1000)) "$tmp/cut"
head -c $((20 * BLOCK - 1000)) /dev/urandom >>"$tmp/cut"
start tail2 -c /dev/null -n file -O "file:device=$tmp/cut" -O "file:credit=$CREDIT" --bench-fill $((600 * SCALE))
wait_lines "$tmp/tail2.err" "file: finished: " 1 || fail "tail: the second run never finished"
kill -TERM "$pid" 2>/dev/null
c2=$(credited tail2)
r2=$(read_of tail2)
if [ "$r2" = $((20 * BLOCK)) ] && [ -n "$c1" ] && [ -n "$c2" ] &&
	[ $((c1 + c2)) -le "$(bits $((120 * BLOCK)))" ]; then
	ok "tail: cut and given a new tail: read the 20 blocks from the cut on ($r2 bytes), credited $c1 + $c2 bits"
else
	fail "tail: read '$r2' bytes after the cut (20 blocks: $((20 * BLOCK))), credited '$c1' + '$c2'"
fi

# ---- damaged ---------------------------------------------------------------
export STATE_DIRECTORY="$tmp/state.damaged"
head -c $((40 * BLOCK)) /dev/urandom >"$tmp/victim"
mkdir -p "$STATE_DIRECTORY"
head -c 100000 /dev/urandom >"$STATE_DIRECTORY/file-blocks"
start damaged -c /dev/null -n file -O "file:device=$tmp/victim" -O "file:credit=$CREDIT" --bench-fill 3
c=$(credited damaged)
if [ "${c:-x}" = 0 ] && grep -q "is not a file ledger this version reads" "$tmp/damaged.err" &&
	[ "$(stat -c %s "$STATE_DIRECTORY/file-blocks")" = 100000 ]; then
	ok "damaged: a ledger of junk: nothing credited, it is said, the file left as it was"
else
	fail "damaged: credited '$c': $(grep -E 'ledger|failed' "$tmp/damaged.err" | head -n 3)"
fi

if [ $failures -ne 0 ]; then
	say "$failures failure(s)"
	exit 1
fi
exit 0
