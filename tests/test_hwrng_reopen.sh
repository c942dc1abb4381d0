#!/bin/bash
# run-tests: alone (its daemons read the machine's hw_random device)
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 25 item 8: the hwrng source's default credit is decided for the
# device found when its slot opens; every open and reopen must check what
# was actually opened (the character device 10:183, and the hw_random
# device current then) and credit that.  The old code decided once, by
# stat() of the path, and kept the credit whatever a later open found.
#
# The case: the path is a symbolic link to a node 10:183 on a private
# tmpfs mounted nodev, so stat() says "the kernel's hw_random" (credit
# 768 decided) but the open is refused; --wait-for-source keeps trying.
# The link is then pointed at a pseudo-terminal fed good data
# (tests/helper_pattern), which the next try opens.  A pty is not
# hw_random: credited 0, measured from outside by bench/shim.so.  The old
# code credited it at 768/1024.
#
# It runs a daemon on the machine's hwrng settings: while it runs, the
# daemon hands rng_quality over (0) and puts it back at exit; it skips when
# another rngfeed holds the hand-over, keeps its record in a private
# RUNTIME_DIRECTORY, and its trap restores only what its own daemon left.
# Exit 0 pass, 1 fail, 77 skip.
set -u

RNGFEED=${RNGFEED:-./rngfeed}
SHIM=${SHIM:-bench/shim.so}
PATTERN=${PATTERN:-tests/helper_pattern}
SCALE=${TEST_TIME_SCALE:-1}
QUALITY=/sys/class/misc/hw_random/rng_quality
say() { printf '%s\n' "$*"; }
skip() { say "SKIP: $*"; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "needs root (mount, mknod, feeding the kernel)"
[ -x "$RNGFEED" ] && [ -r "$SHIM" ] && [ -x "$PATTERN" ] ||
	{ say "FAIL: $RNGFEED, $SHIM or $PATTERN is not built"; exit 1; }
if ldd "$RNGFEED" 2>/dev/null | grep -q libasan; then
	skip "$RNGFEED is built with ASan, which hides RNDADDENTROPY from the LD_PRELOAD shim"
fi
[ -r "$QUALITY" ] || skip "no $QUALITY (no hw_random device)"
[ "$(cat "$QUALITY")" -gt 0 ] 2>/dev/null ||
	skip "rng_quality is $(cat "$QUALITY"): another feeder or the administrator holds it"
[ ! -s /run/rngfeed/hwrng-quality ] ||
	skip "/run/rngfeed/hwrng-quality is there: another rngfeed holds the hand-over"
SHIM=$(realpath "$SHIM")
tmp=$(mktemp -d /tmp/test_hwrng_reopen.XXXXXX) || exit 1
. tests/lib_pids.sh
export RUNTIME_DIRECTORY=$tmp/run STATE_DIRECTORY=$tmp/state
mkdir -p "$RUNTIME_DIRECTORY"
pid= w=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	[ -n "$pid" ] && kill_ours -KILL "$pid" && wait "$pid" 2>/dev/null
	[ -n "$w" ] && kill_ours "$w" && wait "$w" 2>/dev/null
	# Our daemon's record is left only when it was killed: restore what
	# it changed, unless another rngfeed holds the hand-over now.
	if [ -s "$RUNTIME_DIRECTORY/hwrng-quality" ] && [ ! -s /run/rngfeed/hwrng-quality ]; then
		"$RNGFEED" -c /dev/null --restore-hwrng-quality >/dev/null 2>&1
	fi
	mountpoint -q "$tmp/nodev" && umount "$tmp/nodev"
	rm -rf "$tmp"
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT

mkdir "$tmp/nodev"
mount -t tmpfs -o nodev,size=64k,mode=0700 tmpfs "$tmp/nodev" ||
	skip "cannot mount a private tmpfs (nodev) here"
mknod "$tmp/nodev/hwrng" c 10 183 || skip "cannot make a device node"
ln -s "$tmp/nodev/hwrng" "$tmp/link"
"$PATTERN" "pty:$tmp/pty" good &
w=$!
for _ in $(seq $((100 * SCALE))); do [ -s "$tmp/pty" ] && break; sleep 0.05; done
[ -s "$tmp/pty" ] || { say "FAIL: helper_pattern made no pty"; exit 1; }

env LD_PRELOAD="$SHIM" RNGFEED_SHIM_OUT="$tmp/shim" "$RNGFEED" -f -v -c /dev/null \
	-n hwrng -O "hwrng:device=$tmp/link" --wait-for-source \
	--retry-delay 0.2 --retry-max 0.2 --bench-fill $((8 * SCALE)) \
	>"$tmp/out" 2>"$tmp/log" </dev/null &
pid=$!
for _ in $(seq $((100 * SCALE))); do
	grep -q "hwrng: using it, credit" "$tmp/log" &&
		grep -q "cannot open $tmp/link" "$tmp/log" && break
	sleep 0.1
done
decided=$(sed -n 's/.*hwrng: using it, credit \([0-9]*\)\/1024.*/\1/p' "$tmp/log" | head -n1)
ln -sfn "$(cat "$tmp/pty")" "$tmp/link"
for _ in $(seq $((600 * SCALE))); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$pid" 2>/dev/null && { say "FAIL: still running after $((60 * SCALE)) s"; exit 1; }
wait "$pid"
rc=$?
pid=
credited=$(sed -n 's/.* credited_bits=\([0-9]*\).*final=1.*/\1/p' "$tmp/shim")
fails=0
if [ "${decided:-0}" -eq 0 ]; then
	say "FAIL: the credit decided at start was '${decided}', not the hw_random default: the case did not set up ($(head -n 5 "$tmp/log"))"
	fails=1
elif ! grep -q "hwrng: opened $tmp/link; start-up test" "$tmp/log"; then
	say "FAIL: the pty was never opened: $(grep hwrng "$tmp/log" | tail -n 5)"
	fails=1
elif [ $rc -ne 0 ] || [ "${credited:-x}" != 0 ]; then
	say "FAIL: exit $rc; the pty opened in place of 10:183 was credited '${credited}' bits at the credit decided for 10:183 ($decided/1024)"
	fails=1
elif ! grep -q "hwrng: $tmp/link is not what its credit $decided/1024 was decided for: credited at most 0/1024" "$tmp/log"; then
	say "FAIL: no warning that what was opened is not what the credit was decided for"
	fails=1
fi
[ $fails -eq 0 ] || { grep -E "hwrng|bench-fill" "$tmp/log" | tail -n 8; exit 1; }
say "ok: credit $decided/1024 decided for 10:183; the reopen found a pty and it was credited 0 bits (shim), with a warning"
exit 0
