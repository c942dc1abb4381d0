#!/bin/bash
# run-tests: alone (its daemons read the machine's hw_random device)
# SPDX-License-Identifier: GPL-2.0-or-later
# Integration tests of the real binary on this machine's real sources:
# --raw from hwrng, rdseed and rdrand gives exactly the bytes asked for and
# passes rngtest; --list; refusal of the kernel's own output; one-line usage
# errors; --raw from a FIFO, into a closed pipe, and from a short file.
# Run from the top of the tree: RNGFEED=./rngfeed bash tests/test_sources.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u

RNGFEED=${RNGFEED:-./rngfeed}
failures=0
. tests/lib_measure.sh
. tests/lib_handover.sh
measure_temp test_sources
# Credited regular files are read through the file ledger: a private one.
export STATE_DIRECTORY="$tmp/state"
pids=()

skip() { echo "SKIP: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

if ! command -v rngtest >/dev/null; then
	echo "SKIP: rngtest not installed (Debian package rng-tools5)"
	exit 77
fi
if [ ! -x "$RNGFEED" ]; then
	echo "FAIL: $RNGFEED is not built"
	exit 1
fi

# ---- --list -----------------------------------------------------------------

list=$(timeout 10 "$RNGFEED" --list 2>"$tmp/list.err")
rc=$?
[ $rc -eq 0 ] || fail "--list exited $rc: $(cat "$tmp/list.err")"
for name in hwrng rdseed rdrand file; do
	state=$(awk -v n="$name" '$1 == n { print $2 }' <<<"$list")
	case "$state" in
	available | unavailable) ;;
	*) fail "--list: no availability for $name: '$state'" ;;
	esac
done
[ "$(grep -cE '^(hwrng|rdseed|rdrand|file) ' <<<"$list")" -eq 4 ] ||
	fail "--list does not show each of the four drivers once"
# With no path, the file source is unavailable and says how to fix it.
grep -E '^file +unavailable .*device=PATH' <<<"$list" >/dev/null ||
	fail "--list: file without a path should be unavailable with a hint"
echo abc >"$tmp/small"
timeout 10 "$RNGFEED" --list -O file:device="$tmp/small" | grep -E '^file +available' >/dev/null ||
	fail "--list: file with a regular file should be available"

list_state() { awk -v n="$1" '$1 == n { print $2 }' <<<"$list"; }
list_line() { grep -E "^$1 " <<<"$list"; }

# ---- --raw from the real sources ---------------------------------------------

# rngtest on 100,000 bytes: after its first 4 bytes (which seed the
# continuous test) it checks 39 blocks of 20,000 bits.  Perfect random data
# fails a FIPS 140-2 block about 1 time in 1,250 (p ~ 8e-4, rngtest's own
# long-run figure), so the number of failed blocks is ~Poisson(39/1250 =
# 0.031): P(>= 1) ~ 3 %, too often to demand zero; P(>= 3) ~ 0.031^3/6 ~
# 5e-6.  So allow at most 2 failed blocks: a false alarm about once in
# 200,000 runs, while a broken source (stuck, biased, repeating) fails all
# 39.
RNGTEST_MAX_FAILED=2
RAW_BYTES=100000

fips_failures() {
	rngtest <"$1" 2>&1 | sed -n 's/^rngtest: FIPS 140-2 failures: //p'
}

raw_source() {
	local name=$1 state out="$tmp/$1.raw" f
	state=$(list_state "$name")
	if [ "$state" != available ]; then
		skip "$name: $(list_line "$name")"
		return
	fi
	if [ "$name" = hwrng ] && [ "$(id -u)" -ne 0 ]; then
		skip "$name: /dev/hwrng needs root"
		return
	fi
	# head caps the output, so a --bytes that is not honoured shows up as
	# one byte too many rather than filling the disk; hwrng gives ~10 KB/s.
	timeout 60 "$RNGFEED" -n "$name" --raw --bytes $RAW_BYTES 2>"$tmp/raw.err" |
		head -c $((RAW_BYTES + 1)) >"$out"
	rc=${PIPESTATUS[0]}
	[ $rc -eq 0 ] || { fail "$name --raw exited $rc: $(cat "$tmp/raw.err")"; return; }
	[ ! -s "$tmp/raw.err" ] || fail "$name --raw wrote to stderr: $(cat "$tmp/raw.err")"
	[ "$(stat -c %s "$out")" -eq $RAW_BYTES ] ||
		{ fail "$name --raw gave $(stat -c %s "$out") bytes, not $RAW_BYTES"; return; }
	f=$(fips_failures "$out")
	if [ -z "$f" ]; then
		fail "$name: no rngtest verdict"
	elif [ "$f" -gt $RNGTEST_MAX_FAILED ]; then
		fail "$name: $f of 39 FIPS blocks failed (at most $RNGTEST_MAX_FAILED expected)"
	else
		ok "$name: $RAW_BYTES bytes, $f FIPS blocks failed"
	fi
	# A second read differs from the first (1000 bytes: hwrng is slow).
	timeout 10 "$RNGFEED" -n "$name" --raw --bytes 1000 2>/dev/null |
		head -c 1001 >"$tmp/$name.2"
	[ "$(stat -c %s "$tmp/$name.2")" -eq 1000 ] || fail "$name: second read short"
	head -c 1000 "$out" | cmp -s - "$tmp/$name.2" && fail "$name: two reads gave the same bytes"
}

for name in hwrng rdseed rdrand; do
	raw_source "$name"
done

# The test oracle itself must catch a broken source, or the above proves
# nothing.
head -c $RAW_BYTES /dev/zero >"$tmp/zeros"
f=$(fips_failures "$tmp/zeros")
[ "${f:-0}" -gt $RNGTEST_MAX_FAILED ] || fail "rngtest passed all-zero input ($f failures)"

# ---- refusing the kernel's own output ------------------------------------------

# Exit 2, nothing on stdout, exactly one line on stderr, saying why.  Under
# a timeout and with stdout capped: a refusal that regressed would otherwise
# run a daemon or stream forever.
expect_usage_error() {
	local what=$1 want=$2
	shift 2
	timeout 10 "$@" 2>"$tmp/u.err" </dev/null | head -c 100 >"$tmp/u.out"
	rc=${PIPESTATUS[0]}
	if [ $rc -ne 2 ]; then
		fail "$what: exit $rc, not 2"
	elif [ "$(wc -l <"$tmp/u.err")" -ne 1 ]; then
		fail "$what: $(wc -l <"$tmp/u.err") lines on stderr, not 1: $(cat "$tmp/u.err")"
	elif ! grep -qF -- "$want" "$tmp/u.err"; then
		fail "$what: message lacks '$want': $(cat "$tmp/u.err")"
	elif [ -s "$tmp/u.out" ]; then
		fail "$what: wrote to stdout"
	fi
}

ln -s /dev/urandom "$tmp/urandom-link"
loop="kernel's own random output"
# -f: should the refusal ever regress, a foreground daemon dies with the
# timeout instead of forking away.
expect_usage_error "-r /dev/urandom" "$loop" "$RNGFEED" -f -r /dev/urandom
expect_usage_error "-r /dev/random" "$loop" "$RNGFEED" -f -r /dev/random
expect_usage_error "-O file:device=link" "$loop" \
	"$RNGFEED" -f -O file:device="$tmp/urandom-link"
expect_usage_error "--raw from a link to urandom" "$loop" \
	"$RNGFEED" -n file --raw --bytes 10 -O file:device="$tmp/urandom-link"
expect_usage_error "-r link" "$loop" "$RNGFEED" -n hwrng --raw -r "$tmp/urandom-link"

# ---- bad options: exit 2, exactly one line ---------------------------------------
# (-f where no mode is given: see above.)

expect_usage_error "--bogus" "--bogus" "$RNGFEED" -f --bogus
expect_usage_error "-Z" "-Z" "$RNGFEED" -f -Z
expect_usage_error "unknown source" "nosuch" "$RNGFEED" -n nosuch --raw
expect_usage_error "malformed -O" "hwrng:credit" "$RNGFEED" -f -O hwrng:credit
expect_usage_error "bad credit" "1025" "$RNGFEED" -f -O rdrand:credit=1025
expect_usage_error "bad --bytes" "10Q" "$RNGFEED" -n rdrand --raw --bytes 10Q
expect_usage_error "--raw without -n" "--raw" "$RNGFEED" --raw
expect_usage_error "two modes" "exclude each other" "$RNGFEED" --list --raw -n rdrand
expect_usage_error "stray argument" "stray" "$RNGFEED" --list stray
expect_usage_error "missing value" "--bytes" "$RNGFEED" --raw -n rdrand --bytes

# Driver option values and min-entropy are checked at config time
# (issue 15, 3: "-O rdrand:tries=abc --list" exited 0, virtio:select=maybe
# and min-entropy=0.001 were accepted and the reader never started).
expect_usage_error "rdrand:tries=abc" "tries" "$RNGFEED" -c /dev/null -O rdrand:tries=abc --list
expect_usage_error "virtio:select=maybe" "'maybe'" "$RNGFEED" -c /dev/null -f -O virtio:select=maybe
expect_usage_error "rdseed:force=perhaps" "force" "$RNGFEED" -c /dev/null -O rdseed:force=perhaps --list
expect_usage_error "tpm:timeout-ms=0" "timeout-ms" "$RNGFEED" -c /dev/null -O tpm:timeout-ms=0 --list
expect_usage_error "min-entropy=0.001" "0.1171875" "$RNGFEED" -c /dev/null -f -O rdrand:min-entropy=0.001
expect_usage_error "min-entropy=1e-300" "'1e-300'" "$RNGFEED" -c /dev/null -f -O hwrng:min-entropy=1e-300
expect_usage_error "--check --min-entropy 0.001" "0.001" "$RNGFEED" -c /dev/null --check --min-entropy 0.001

# ---- the credit rule: credit <= 1024 x H / sample bits (issue 14, 3) ------------

# hwrng's tests assume H = 6 bits per byte: 768 at most, whatever the order.
expect_usage_error "hwrng:credit=1024" "raise min-entropy to at least 8," \
	"$RNGFEED" -c /dev/null -O hwrng:credit=1024 --list
expect_usage_error "hwrng:credit=1024 then H=6" "768" \
	"$RNGFEED" -c /dev/null -O hwrng:credit=1024 -O hwrng:min-entropy=6 --list
for order in "credit first" "min-entropy first"; do
	if [ "$order" = "credit first" ]; then
		set -- -O hwrng:credit=1024 -O hwrng:min-entropy=8
	else
		set -- -O hwrng:min-entropy=8 -O hwrng:credit=1024
	fi
	line=$(timeout 10 "$RNGFEED" -c /dev/null "$@" --list 2>&1 | grep -E '^hwrng ')
	[ "$(awk '{ print $3 }' <<<"$line")" = 1024 ] ||
		fail "hwrng credit 1024 with min-entropy 8 ($order): '$line'"
done
set --
list=$(timeout 10 "$RNGFEED" -c /dev/null --list 2>/dev/null)
for name in hwrng virtio; do
	credit=$(awk -v n="$name" '$1 == n { print $3 }' <<<"$list")
	[ "${credit:-0}" -le 768 ] || fail "$name: default credit $credit is above 768 (H = 6)"
done
# One device, one credit: virtio_rng.0 through hwrng and through virtio.
# Beside another owner of the hand-over the virtio source, the one that
# would read it, shows credit 0 and why (hwrng, not used, its own).
if [ "$(cat /sys/class/misc/hw_random/rng_current 2>/dev/null)" = virtio_rng.0 ]; then
	a=$(awk '$1 == "hwrng" { print $3 }' <<<"$list")
	b=$(awk '$1 == "virtio" { print $3 }' <<<"$list")
	if handover_elsewhere; then
		grep -E '^virtio ' <<<"$list" | grep -q 'credit 0 here: another rngfeed owns the hand-over' ||
			fail "virtio_rng.0 beside another owner: the virtio row does not say credit 0 and why: $(grep -E '^virtio ' <<<"$list")"
		skip "virtio_rng.0: one credit through hwrng and virtio not compared: $HANDOVER_WHY"
	else
		[ "$a" = "$b" ] || fail "virtio_rng.0: credit $a through hwrng, $b through virtio"
	fi
else
	skip "one device, one credit: the current hw_random device is not virtio_rng.0"
fi

# hwrng on a character device that is not the kernel's hw_random device
# (10:183) is credited as the file source: 0 unless credit= is given, and
# --list says so (/dev/zero showed "available 1024").
line=$(timeout 10 "$RNGFEED" -c /dev/null -O hwrng:device=/dev/zero --list 2>&1 | grep -E '^hwrng ')
case "$line" in
*" 0 "*"not the kernel's hw_random device"*"credit="*) ok "hwrng on /dev/zero: credit 0, said" ;;
*) fail "hwrng on /dev/zero: '$line'" ;;
esac
line=$(timeout 10 "$RNGFEED" -c /dev/null -O hwrng:device=/dev/zero -O hwrng:credit=100 --list 2>&1 | grep -E '^hwrng ')
[ "$(awk '{ print $3 }' <<<"$line")" = 100 ] || fail "hwrng on /dev/zero with credit=100: '$line'"

# A TPM on a unix: socket (swtpm: its host kernel's randomness): credit 0.
line=$(timeout 10 "$RNGFEED" -c /dev/null -O tpm:device=unix:"$tmp/no.sock" --list 2>&1 | grep -E '^tpm ')
[ "$(awk '{ print $3 }' <<<"$line")" = 0 ] || fail "tpm on a unix: socket: '$line'"

# ---- RDSEED follows CPUID (issue 14, 3) -------------------------------------------

if grep -qw rdseed /proc/cpuinfo; then
	skip "RDSEED hidden by CPUID: this CPU advertises it"
else
	line=$(timeout 10 "$RNGFEED" -c /dev/null --list 2>&1 | grep -E '^rdseed ')
	case "$line" in
	"rdseed "*unavailable*"report no RDSEED"*"force=yes"*) ok "rdseed unavailable: CPUID hides it" ;;
	*) fail "rdseed with CPUID hiding it: '$line'" ;;
	esac
	line=$(timeout 10 "$RNGFEED" -c /dev/null -O rdseed:force=yes --list 2>&1 | grep -E '^rdseed ')
	case "$line" in
	"rdseed "*available*"force=yes"*erratum*) ok "rdseed:force=yes: used, with the reason" ;;
	"rdseed "*unavailable*"does not execute"*) ok "rdseed:force=yes: does not execute here" ;;
	*) fail "rdseed:force=yes: '$line'" ;;
	esac
	# --raw refuses it without force, as the daemon does.
	timeout 10 "$RNGFEED" -c /dev/null -n rdseed --raw --bytes 8 >/dev/null 2>"$tmp/rdseed.err" &&
		fail "rdseed --raw succeeded although CPUID hides RDSEED"
fi

timeout 10 "$RNGFEED" --help >"$tmp/help.out" 2>"$tmp/help.err"
rc=$?
[ $rc -eq 0 ] || fail "--help exited $rc"
grep -q -- "--raw" "$tmp/help.out" || fail "--help does not describe --raw"
[ ! -s "$tmp/help.err" ] || fail "--help wrote to stderr"
timeout 10 "$RNGFEED" --version | grep -qE '^rngfeed [0-9]' || fail "--version"

# ---- --raw from the file driver ---------------------------------------------------

# A FIFO fed by a writer that pauses between pieces: exactly what was written,
# in order, ending at the writer's close.
head -c 30000 /dev/urandom >"$tmp/feed"
mkfifo "$tmp/fifo1"
(
	for i in 0 1 2 3 4 5; do
		dd if="$tmp/feed" bs=5000 skip=$i count=1 status=none
		sleep 0.02
	done
) >"$tmp/fifo1" &
pids+=($!)
timeout 20 "$RNGFEED" -n file -O file:device="$tmp/fifo1" --raw >"$tmp/fifo.out" 2>"$tmp/fifo.err"
rc=$?
[ $rc -eq 0 ] || fail "--raw from a FIFO exited $rc: $(cat "$tmp/fifo.err")"
cmp -s "$tmp/feed" "$tmp/fifo.out" ||
	fail "--raw from a FIFO: $(stat -c %s "$tmp/fifo.out") bytes, not the 30000 written"

# --bytes: exactly that many of what a FIFO writer gives.  (One FIFO per
# test, so a writer left blocked by a failed test cannot feed the next.)
mkfifo "$tmp/fifo2"
(cat "$tmp/feed" >"$tmp/fifo2") 2>/dev/null &
pids+=($!)
timeout 20 "$RNGFEED" -n file -O file:device="$tmp/fifo2" --raw --bytes 12345 >"$tmp/fifo2.out" 2>"$tmp/fifo2.err"
rc=$?
[ $rc -eq 0 ] || fail "--raw --bytes 12345 from a FIFO exited $rc: $(cat "$tmp/fifo2.err")"
head -c 12345 "$tmp/feed" | cmp -s - "$tmp/fifo2.out" || fail "--raw --bytes 12345 from a FIFO: wrong bytes"

# A reader that goes away is the normal end of a pipe: exit 0, no message.
# pipefail only in this subshell (its status is the pipeline's), so that
# rngfeed's status counts and not only head's.  SIGPIPE is set to its
# default for rngfeed, so an ignored SIGPIPE inherited from whatever runs
# the tests cannot hide a missing SIG_IGN in rngfeed (it would die of it,
# status 141).
raw_into_head() {
	local what=$1
	shift
	(
		set -o pipefail
		timeout 20 env --default-signal=PIPE "$@" 2>"$tmp/pipe.err" |
			head -c 10 >"$tmp/pipe.out"
	)
	rc=$?
	[ $rc -eq 0 ] || fail "$what | head -c 10: exit status $rc"
	[ ! -s "$tmp/pipe.err" ] || fail "$what | head -c 10: message: $(cat "$tmp/pipe.err")"
	[ "$(stat -c %s "$tmp/pipe.out")" -eq 10 ] || fail "$what | head -c 10: not 10 bytes"
}

if [ "$(list_state rdrand)" = available ]; then
	raw_into_head "rdrand --raw" "$RNGFEED" -n rdrand --raw
else
	skip "rdrand into a closed pipe: $(list_line rdrand)"
fi
# The same from an endless FIFO, on any machine.
mkfifo "$tmp/fifo3"
(yes >"$tmp/fifo3") 2>/dev/null &
pids+=($!)
raw_into_head "file --raw" "$RNGFEED" -n file -O file:device="$tmp/fifo3" --raw

# Fewer bytes in the file than asked: an error that says so, not success.
head -c 500 /dev/urandom >"$tmp/short"
timeout 10 "$RNGFEED" -n file -O file:device="$tmp/short" --raw --bytes 1000 >"$tmp/short.out" 2>"$tmp/short.err"
rc=$?
[ $rc -ne 0 ] || fail "--raw --bytes 1000 from a 500-byte file exited 0"
[ -s "$tmp/short.err" ] || fail "--raw --bytes 1000 from a 500-byte file: no message"
grep -q 500 "$tmp/short.err" || fail "short file: message does not say how much was read: $(cat "$tmp/short.err")"

# The exact size of a regular file succeeds.
timeout 10 "$RNGFEED" -n file -O file:device="$tmp/short" --raw --bytes 500 2>/dev/null | cmp -s - "$tmp/short" ||
	fail "--raw --bytes 500 from a 500-byte file: wrong bytes"

# ---- -t reads in bursts, not flat out (issue 18 item 7) ---------------------------
# RDRAND read flat out kept a core busy for a whole -t run (76 MB/s); now a
# burst per --stats-interval: under half a core over 6 s, and the rate
# lines still show RDRAND's rate in its bursts, not the duty cycle's
# (issue 28: compared with what the run read, not with a fixed figure,
# which valgrind or a loaded machine cannot meet).  A burst is a tenth of
# the 1-s interval: the rate line is about 10 times the bytes of the
# interval (its blocks' growth, 2,500 bytes each) per second; the duty
# cycle's rate would be 1 times.
if [ "$(list_state rdrand)" = available ] && [ "$(id -u)" -eq 0 ]; then
	"$RNGFEED" -c /dev/null -t -n rdrand --stats-interval 1 >/dev/null 2>"$tmp/t.err" &
	tpid=$!
	sleep 6
	ticks=$(awk '{ print $14 + $15 }' "/proc/$tpid/stat" 2>/dev/null)
	# Two rate lines: by now, or up to 30 s times TEST_TIME_SCALE more
	# where the start is slow (valgrind, a loaded machine).
	for _ in $(seq $((300 * ${TEST_TIME_SCALE:-1}))); do
		[ "$(grep -c '^rngfeed: rdrand: .* B/s raw' "$tmp/t.err")" -ge 2 ] && break
		kill -0 "$tpid" 2>/dev/null || break
		sleep 0.1
	done
	kill -TERM "$tpid"
	wait "$tpid"
	hz=$(getconf CLK_TCK)
	# Flat out is a whole core (6 s of CPU in 6 s); a burst per interval
	# reads a fixed number of blocks, so its share follows how fast the
	# machine's shared RDRAND answers: 10-20 % quiet, 27 % seen with other
	# jobs running.  The line between the two: half a core, more under
	# valgrind (TEST_TIME_SCALE).
	limit=$((6 * hz / 2 * ${TEST_TIME_SCALE:-1}))
	# Every rate line: RATE BLOCKS_PASSED BLOCKS_FAILED each.  The burst
	# rate is the highest a line says; what an interval read on average
	# is the blocks from the first line to the last over the intervals
	# between them (under valgrind a 1-s interval may read no block).
	mapfile -t last < <(sed -nE 's/^rngfeed: rdrand: ([0-9]+)\.[0-9] B\/s raw, blocks ([0-9]+) passed ([0-9]+) failed.*/\1 \2 \3/p' \
		"$tmp/t.err")
	rate= per_s=
	if [ ${#last[@]} -ge 2 ]; then
		read -r rate p1 f1 <<<"${last[0]}"
		for l in "${last[@]}"; do
			read -r r2 p2 f2 <<<"$l"
			[ "$r2" -gt "$rate" ] && rate=$r2
		done
		per_s=$(((p2 + f2 - p1 - f1) * 2500 / (${#last[@]} - 1)))
	fi
	if [ -z "$ticks" ] || [ "$ticks" -gt "$limit" ]; then
		fail "-t -n rdrand used ${ticks:-?} ticks of CPU in 6 s (limit $limit at $hz/s): not a burst per interval"
	elif [ -z "$rate" ]; then
		fail "-t -n rdrand: fewer than two rate lines: $(head -c 600 "$tmp/t.err")"
	elif [ "$per_s" -le 0 ] || [ "$rate" -lt $((3 * per_s)) ]; then
		fail "-t -n rdrand: the rate lines say at most $rate B/s, an interval read $per_s B in 1 s on average (the rate in its bursts should be several times that)"
	else
		ok "-t -n rdrand: $ticks CPU ticks in 6 s, rate line $rate B/s against $per_s B read in its 1-s interval"
	fi
else
	skip "-t CPU: no RDRAND, or not root"
fi

if [ $failures -ne 0 ]; then
	echo "$failures failure(s)"
	exit 1
fi
exit 0
