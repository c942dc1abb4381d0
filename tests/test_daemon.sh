#!/bin/bash
# run-tests: alone (its daemons read the machine's hw_random device)
# Integration tests of the daemon, end to end, on this machine (issue 5):
#   1. feeding the kernel from hwrng: metrics, RNDADDENTROPY seen by strace,
#      SIGTERM within 2 s with exit 0 and a summary;
#   2. --stdout --bytes 1000000 | rngtest;
#   3. -t on rdrand prints rate lines and a summary, feeds nothing;
#   4. a FIFO "file" source fed all-ones, 0xAA, 25 %-ones: never credited,
#      failures counted, disabled, the daemon keeps feeding from hwrng;
#   5. no usable source / a wrong output device: non-zero exit, clear line;
#   6. SIGHUP keeps the daemon and its counters; SIGUSR1 logs statistics.
# Beside another rngfeed that owns the machine's hw_random hand-over (a
# running service), its daemons credit hwrng 0: parts 1 and 4 then check
# that nothing is credited and the log says why, and skip the credit the
# device would give ("SKIP: ..." lines, tests/lib_handover.sh).
# Run from the top of the tree as root; exit 0 pass, 1 fail, 77 skip.
set -u
. tests/lib_handover.sh

RNGFEED=${RNGFEED:-./rngfeed}
SCALE=${TEST_TIME_SCALE:-1}
failures=0
skipped_parts=()
pids=()      # background processes to clean up
pidfiles=()  # daemons started under strace write their PID here

say() { printf '%s\n' "$*"; }
skip() { say "SKIP: $*"; exit 77; }
fail() { say "FAIL: $*"; failures=$((failures + 1)); }
ok() { say "ok: $*"; }

# credit_bound LABEL SOURCE (metrics file in $m): the credited bits are at
# most 256 per DRBG reseed and at most half of what SOURCE's tested blocks
# carried (a block credited in full goes in as parts of >= 512 bits).
credit_bound() {
	local credited reseeds carried
	credited=$(metric "$m" rngfeed_credited_bits_total)
	reseeds=$(metric "$m" rngfeed_drbg_reseeds_total)
	carried=$(metric "$m" "rngfeed_source_credit_bits_total{source=\"$2\"}")
	if ! [ "$credited" -le $((256 * reseeds)) ] 2>/dev/null ||
	   ! [ $((2 * credited)) -le "$carried" ] 2>/dev/null; then
		fail "$1: $credited bits credited, $reseeds reseeds, $2 blocks carried $carried bits"
	fi
}

[ "$(id -u)" -eq 0 ] || skip "needs root (RNDADDENTROPY needs CAP_SYS_ADMIN)"
# Root in a container lacks CAP_SYS_ADMIN by default: RNDADDENTROPY would fail.
(( 16#$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status) >> 21 & 1 )) ||
	{ echo "SKIP: root without CAP_SYS_ADMIN (a container's default; --cap-add SYS_ADMIN grants it): RNDADDENTROPY would fail"; exit 77; }
[ -x "$RNGFEED" ] || { say "FAIL: $RNGFEED is not built"; exit 1; }
[ -c /dev/hwrng ] || skip "no /dev/hwrng on this machine"
[ -c /dev/random ] || skip "no /dev/random"
command -v perl >/dev/null || skip "perl is needed to feed the FIFO"
command -v rngtest >/dev/null || skip "rngtest (rng-tools5) is not installed"
have_strace=false
command -v strace >/dev/null && have_strace=true
# For strace -E: LeakSanitizer stops the process with ptrace at exit, which
# a process strace already traces refuses.  So in a sanitized build (make
# sanitize) the traced runs check all but leaks; the other runs check leaks.
no_lsan="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

tmp=$(mktemp -d /tmp/test_daemon.XXXXXX) || exit 1
. tests/lib_pids.sh
# Credited regular files are read through the file ledger: a private one.
export STATE_DIRECTORY="$tmp/state"

# A process is alive if it exists and is not a zombie (kill -0 succeeds on
# a zombie that has not been waited for).
alive() {
	local s
	s=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$s" ] && [ "${s%% *}" != Z ]
}

# Wait up to $2 seconds (tenths allowed) for process $1 to end.
wait_gone() {
	local pid=$1 tenths
	tenths=$(awk -v s="$2" 'BEGIN { printf "%d", s * 10 }')
	while [ "$tenths" -gt 0 ]; do
		alive "$pid" || return 0
		sleep 0.1
		tenths=$((tenths - 1))
	done
	! alive "$pid"
}

cleanup() {
	local p f
	for f in "${pidfiles[@]}"; do
		[ -s "$f" ] && pids+=("$(cat "$f")")
	done
	# (detached daemons: $tmp is in their environment, STATE_DIRECTORY)
	for p in "${pids[@]}"; do
		alive "$p" && kill_ours -TERM "$p"
	done
	for p in "${pids[@]}"; do
		wait_gone "$p" 2 || kill_ours -KILL "$p"
	done
	rm -rf "$tmp"
}
trap '[ "$BASHPID" != $$ ] || cleanup' EXIT
trap 'exit 1' INT TERM HUP

# The value of metric $2 (with its labels, e.g. 'x{source="file"}') in
# file $1, or "missing".
metric() {
	awk -v n="$2" '$1 == n { v = $2 } END { print (v == "" ? "missing" : v) }' "$1"
}

# cmp_int A OP B with OP one of -gt -ge -eq -le; false if not integers.
cmp_int() {
	case $2 in
	-gt) [ "$1" -gt "$3" ] ;;
	-ge) [ "$1" -ge "$3" ] ;;
	-eq) [ "$1" -eq "$3" ] ;;
	-le) [ "$1" -le "$3" ] ;;
	*) return 2 ;;
	esac 2>/dev/null
}

# expect_metric FILE NAME OP VALUE WHAT: compare as integers.
expect_metric() {
	local v
	v=$(metric "$1" "$2")
	if ! cmp_int "$v" "$3" "$4"; then
		fail "$5: $2 is $v, want $3 $4"
		return 1
	fi
	return 0
}

# Start "$@" in the background with stderr to $err; sets $bg.
start_bg() {
	"$@" 2>"$err" &
	bg=$!
	pids+=("$bg")
}

# Send signal $1 to $2, expect it gone within $3 s with exit 0.
stop_expect_0() {
	local sig=$1 pid=$2 limit=$3 what=$4 rc
	kill -"$sig" "$pid"
	if ! wait_gone "$pid" "$limit"; then
		fail "$what: still running ${limit} s after SIG$sig"
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$bg_wait" 2>/dev/null
	rc=$?
	[ "$rc" -eq 0 ] || fail "$what: exit status $rc after SIG$sig, want 0"
}

# hwrng_beside PART LOG (metrics in $m): another rngfeed owned the
# hand-over when PART started: its daemon must say so and credit nothing
# (unless the log says the other one stopped and this one took over).
hwrng_beside() {
	if ! handover_waited "$2"; then
		fail "$1: another rngfeed owns the hand-over, but the daemon did not say it waits for it: $(head -3 "$2")"
	elif ! grep -q 'the other rngfeed stopped' "$2"; then
		expect_metric "$m" rngfeed_credited_bits_total -eq 0 "$1 (beside another owner)"
	fi
	say "SKIP: $1: hwrng's credit to the kernel not checked: $HANDOVER_WHY"
}

# Which sources this machine can use.
usable() { "$RNGFEED" -l 2>/dev/null | awk -v s="$1" '$1 == s { print $2 }' | grep -qx available; }
usable hwrng || skip "the hwrng source is not usable here: $("$RNGFEED" -l 2>&1 | grep '^hwrng')"

# ---- 1. feeding the kernel from hwrng --------------------------------------------
part1() {
	local m=$tmp/p1.prom log=$tmp/p1.strace err=$tmp/p1.err pidf=$tmp/p1.pid
	local dpid calls fed credited passed sum_bytes sum_credit over bad beside=false

	handover_elsewhere && beside=true
	if $have_strace; then
		start_bg strace -f -qq -e trace=ioctl -E "$no_lsan" -o "$log" \
			"$RNGFEED" -f -n hwrng --metrics "$m" --interval 2 -p "$pidf"
	else
		start_bg "$RNGFEED" -f -n hwrng --metrics "$m" --interval 2 -p "$pidf"
	fi
	pidfiles+=("$pidf")
	sleep 5
	for _ in $(seq $((50 * (SCALE - 1)))); do
		[ -s "$pidf" ] && break
		sleep 0.1
	done
	if ! [ -s "$pidf" ]; then
		fail "1: no PID file after $((5 * SCALE)) s; stderr: $(cat "$err")"
		return
	fi
	dpid=$(cat "$pidf")
	alive "$dpid" || { fail "1: the daemon died: $(cat "$err")"; return; }
	# strace exits with the status of the program it runs.
	bg_wait=$bg
	stop_expect_0 TERM "$dpid" 2 "1 (daemon on hwrng)"
	wait_gone "$bg" 2
	grep -q 'summary after' "$err" || fail "1: no summary on stderr after SIGTERM"
	[ -s "$m" ] || { fail "1: no metrics file"; return; }

	expect_metric "$m" rngfeed_fed_bytes_total -gt 0 1
	if $beside; then
		hwrng_beside 1 "$err"
	else
		expect_metric "$m" rngfeed_credited_bits_total -gt 0 1
	fi
	expect_metric "$m" rngfeed_kernel_crng_ready -eq 1 1
	expect_metric "$m" 'rngfeed_source_raw_bytes_total{source="hwrng"}' -gt 0 1
	expect_metric "$m" 'rngfeed_source_blocks_passed_total{source="hwrng"}' -gt 0 1
	expect_metric "$m" 'rngfeed_source_enabled{source="hwrng"}' -eq 1 1
	# Every credited bit came from tested hwrng input: at most 256 bits
	# (the ledger's cap) per reseed, and (blocks go in as parts of at
	# least 512 bits) at most half of what the blocks carried.
	credit_bound 1 hwrng
	credited=$(metric "$m" rngfeed_credited_bits_total)

	if ! $have_strace; then
		skipped_parts+=("1: strace is missing, RNDADDENTROPY not checked")
		return
	fi
	# What the kernel really got: each successful RNDADDENTROPY, its bytes
	# and credit, must add up to the metrics; none may fail; the credit of
	# a call never exceeds 8 bits per byte.
	calls=$(grep -cE 'ioctl\([0-9]+, RNDADDENTROPY, .*\) = 0$' "$log")
	[ "$calls" -ge 1 ] || fail "1: strace saw no successful RNDADDENTROPY: $(head -5 "$log")"
	# Once the CRNG is ready, --interval 2 tops up every 2 s: in ~5 s the
	# first feed and at least one top-up.
	[ "$calls" -ge 2 ] || fail "1: only $calls RNDADDENTROPY in 5 s with --interval 2"
	bad=$(grep -E 'RNDADDENTROPY' "$log" | grep -vE '\) = 0$' | head -3)
	[ -z "$bad" ] || fail "1: RNDADDENTROPY calls that failed: $bad"
	read -r sum_bytes sum_credit over < <(grep -E 'RNDADDENTROPY, .*\) = 0$' "$log" |
		sed -E 's/.*entropy_count=([0-9]+), buf_size=([0-9]+).*/\1 \2/' |
		awk '{ c += $1; b += $2; if ($1 > 8 * $2 || $1 > 256) o++ }
		     END { print b + 0, c + 0, o + 0 }')
	fed=$(metric "$m" rngfeed_fed_bytes_total)
	[ "$sum_bytes" = "$fed" ] || fail "1: strace saw $sum_bytes bytes fed, metrics say $fed"
	[ "$sum_credit" = "$credited" ] ||
		fail "1: strace saw $sum_credit bits credited, metrics say $credited"
	[ "$over" -eq 0 ] || fail "1: $over RNDADDENTROPY calls credit more than 8 bits/byte or 256 bits"
	# Before the CRNG is ready the daemon asks for a reseed; on a machine
	# where it is ready already, at most once.
	[ "$(grep -c RNDRESEEDCRNG "$log")" -le 1 ] || fail "1: RNDRESEEDCRNG more than once"
	ok "1: fed $fed bytes crediting $credited bits in $calls RNDADDENTROPY calls"
}

# ---- 2. --stdout | rngtest --------------------------------------------------------
part2() {
	local out=$tmp/p2.bin err=$tmp/p2.err rt=$tmp/p2.rngtest size succ fails rc

	timeout 60 "$RNGFEED" --stdout --bytes 1000000 2>"$err" | tee "$out" | rngtest 2>"$rt"
	rc=${PIPESTATUS[0]}
	[ "$rc" -eq 0 ] || fail "2: --stdout exited $rc: $(cat "$err")"
	size=$(stat -c %s "$out")
	[ "$size" -eq 1000000 ] || fail "2: --stdout --bytes 1000000 wrote $size bytes"
	succ=$(sed -n 's/.*FIPS 140-2 successes: \([0-9]*\).*/\1/p' "$rt")
	fails=$(sed -n 's/.*FIPS 140-2 failures: \([0-9]*\).*/\1/p' "$rt")
	# rngtest takes 4 bytes to seed its continuous test, then 2,500-byte
	# blocks: (1000000 - 4) / 2500 = 399 whole blocks.
	[ "$((succ + fails))" -eq 399 ] 2>/dev/null ||
		fail "2: rngtest tested ${succ:-?} + ${fails:-?} blocks, want 399: $(cat "$rt")"
	# Random data fails a FIPS 140-2 block about once in 1,250 (the four
	# tests' false-alarm rates together, ~0.08 %).  Over 399 blocks the
	# failures are Poisson with mean 399/1250 = 0.32: P(>= 4) = 1 -
	# e^-0.32 (1 + 0.32 + 0.32^2/2 + 0.32^3/6) = 0.0004, so more than 3
	# means the output is bad, and a good stream fails this 1 run in 2,500.
	[ "${fails:-99}" -le 3 ] || fail "2: rngtest: $fails of 399 blocks failed (allowed 3)"
	ok "2: 1000000 bytes, rngtest ${fails:-?} of 399 blocks failed"
}

# ---- 3. -t on rdrand ----------------------------------------------------------------
part3() {
	local err=$tmp/p3.err log=$tmp/p3.strace pidf=$tmp/p3.pid lines dpid re

	if ! usable rdrand; then
		skipped_parts+=("3: rdrand is not usable here")
		return
	fi
	if $have_strace; then
		start_bg strace -f -qq -e trace=ioctl -E "$no_lsan" -o "$log" \
			"$RNGFEED" -t -n rdrand -p "$pidf"
	else
		start_bg "$RNGFEED" -t -n rdrand -p "$pidf"
	fi
	pidfiles+=("$pidf")
	# Rate lines come every second, after the start-up (seconds under
	# valgrind): wait for two, 20 s at most (times the scale).
	re='^rngfeed: rdrand: [0-9.]+ B/s raw, blocks [0-9]+ passed [0-9]+ failed, [0-9.]+ credit bits/s'
	for _ in $(seq $((200 * SCALE))); do
		[ "$(grep -cE "$re" "$err")" -ge 2 ] && break
		sleep 0.1
	done
	dpid=$(cat "$pidf" 2>/dev/null)
	[ -n "$dpid" ] && alive "$dpid" || { fail "3: -t is not running: $(cat "$err")"; return; }
	bg_wait=$bg
	stop_expect_0 INT "$dpid" 2 "3 (-t)"
	wait_gone "$bg" 2
	lines=$(grep -cE "$re" "$err")
	[ "$lines" -ge 2 ] || fail "3: $lines rate lines in $((20 * SCALE)) s, want >= 2: $(head -5 "$err")"
	# The rates are real: bytes read and credit gathered, per second.
	grep -E "$re" "$err" | tail -1 |
		awk '{ if (!($3 > 0) || !($11 > 0)) exit 1 }' ||
		fail "3: last rate line shows no raw bytes or no credit: $(grep -E "$re" "$err" | tail -1)"
	grep -q 'summary after' "$err" || fail "3: no summary after SIGINT"
	grep -qE '^rngfeed:   rdrand: [1-9][0-9]* raw bytes, [1-9][0-9]* blocks? passed' "$err" ||
		fail "3: the summary has no rdrand totals"
	# --test feeds nothing.
	if $have_strace && grep -q RNDADDENTROPY "$log"; then
		fail "3: -t called RNDADDENTROPY"
	fi
	ok "3: $lines rate lines and a summary"
}

# ---- 4. a bad FIFO source next to hwrng -------------------------------------------
cat >"$tmp/writer.pl" <<'EOF'
# writer.pl FIFO MODE: keep FIFO full of ones / 0xaa / bits that are 1 with
# probability 1/4, reopening it whenever the reader closes it.
use strict;
use warnings;
my ($fifo, $mode) = @ARGV;
$SIG{PIPE} = 'IGNORE';
my $n = 65536;
open(my $rnd, '<', '/dev/urandom') or die "/dev/urandom: $!";
binmode $rnd;
sub chunk {
	return "\xff" x $n if $mode eq 'ones';
	return "\xaa" x $n if $mode eq 'aa';
	my ($a, $b);
	read($rnd, $a, $n) == $n or die;
	read($rnd, $b, $n) == $n or die;
	return $a & $b; # each bit 1 with probability 1/4
}
while (1) {
	open(my $f, '>', $fifo) or die "$fifo: $!";
	binmode $f;
	while (defined syswrite($f, chunk())) { }
	close $f;
}
EOF

part4() {
	local mode=$1 test_name=$2 fifo=$tmp/fifo-$1 m=$tmp/p4-$1.prom err=$tmp/p4-$1.err
	local wp dpid credited passed beside=false

	handover_elsewhere && beside=true
	mkfifo "$fifo" || { fail "4: mkfifo"; return; }
	perl "$tmp/writer.pl" "$fifo" "$mode" &
	wp=$!
	pids+=("$wp")
	start_bg "$RNGFEED" -f -n hwrng -n file -O file:credit=1024 -O file:min-entropy=8 \
		-O "file:device=$fifo" --metrics "$m" --retry-delay 1 \
		--max-failures 2 --interval 1
	dpid=$bg
	sleep 5
	alive "$dpid" || { fail "4 ($mode): the daemon died: $(cat "$err")"; kill "$wp"; return; }
	bg_wait=$bg
	stop_expect_0 TERM "$dpid" 2 "4 ($mode)"
	kill "$wp" 2>/dev/null
	wait "$wp" 2>/dev/null
	[ -s "$m" ] || { fail "4 ($mode): no metrics file"; return; }

	expect_metric "$m" 'rngfeed_source_blocks_failed_total{source="file"}' -gt 0 "4 ($mode)"
	expect_metric "$m" 'rngfeed_source_blocks_passed_total{source="file"}' -eq 0 "4 ($mode)"
	expect_metric "$m" 'rngfeed_source_credit_bits_total{source="file"}' -eq 0 "4 ($mode)"
	expect_metric "$m" 'rngfeed_source_disables_total{source="file"}' -ge 1 "4 ($mode)"
	expect_metric "$m" 'rngfeed_source_blocks_passed_total{source="hwrng"}' -gt 0 "4 ($mode)"
	expect_metric "$m" rngfeed_fed_bytes_total -gt 0 "4 ($mode)"
	if $beside; then
		hwrng_beside "4 ($mode)" "$err"
	else
		expect_metric "$m" rngfeed_credited_bits_total -gt 0 "4 ($mode)"
	fi
	# Credit came from hwrng alone.
	credit_bound "4 ($mode)" hwrng
	# The log names the test that failed and says the source was disabled.
	grep -qE "^rngfeed: file: block failed .*$test_name" "$err" ||
		fail "4 ($mode): no log line naming the failed $test_name test: $(head -3 "$err")"
	grep -qE "^rngfeed: file: disabled: failed health tests: .*$test_name" "$err" ||
		fail "4 ($mode): the log does not say the file source was disabled ($test_name)"
	grep -q 'summary after' "$err" || fail "4 ($mode): no summary after SIGTERM"
	ok "4 ($mode): $(metric "$m" 'rngfeed_source_blocks_failed_total{source="file"}') file blocks failed, fed $(metric "$m" rngfeed_fed_bytes_total) bytes from hwrng"
	rm -f "$fifo"
}

# ---- 5. nothing to use, or nowhere to feed -----------------------------------------
part5() {
	local err=$tmp/p5.err rc

	timeout 20 "$RNGFEED" -f -n file -O file:device=/nonexistent 2>"$err" </dev/null
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "5: no usable source: exit $rc, want non-zero (not a hang)"
	grep -q 'no usable entropy source' "$err" || fail "5: no 'no usable entropy source' line: $(cat "$err")"
	grep -q '/nonexistent' "$err" || fail "5: the message does not name /nonexistent: $(cat "$err")"
	[ "$(wc -l <"$err")" -le 2 ] || fail "5: more than two lines for one problem: $(cat "$err")"

	timeout 20 "$RNGFEED" -f -n hwrng -o /dev/null 2>"$err" </dev/null
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "5: -o /dev/null: exit $rc, want non-zero"
	grep -q "/dev/null is not the kernel's random device" "$err" ||
		fail "5: -o /dev/null: no clear message: $(cat "$err")"
	[ "$(wc -l <"$err")" -eq 1 ] || fail "5: -o /dev/null: want one line: $(cat "$err")"
	ok "5: refuses to run without a source or a kernel device"
}

# ---- 6. SIGHUP and SIGUSR1 ----------------------------------------------------------
part6() {
	local m=$tmp/p6.prom err=$tmp/p6.err dpid i name
	local -A before

	start_bg "$RNGFEED" -f -n hwrng --metrics "$m" --interval 1
	dpid=$bg
	# Metrics are written every 5 s.
	for ((i = 0; i < 80 * SCALE; i++)); do
		[ -s "$m" ] && break
		sleep 0.1
	done
	[ -s "$m" ] || { fail "6: no metrics after $((8 * SCALE)) s: $(cat "$err")"; return; }
	for name in rngfeed_fed_bytes_total rngfeed_credited_bits_total \
		'rngfeed_source_raw_bytes_total{source="hwrng"}' \
		'rngfeed_source_blocks_passed_total{source="hwrng"}'; do
		before[$name]=$(metric "$m" "$name")
	done
	[ "${before[rngfeed_fed_bytes_total]}" -gt 0 ] 2>/dev/null ||
		fail "6: nothing fed before SIGHUP"

	kill -HUP "$dpid"
	sleep 2
	for _ in $(seq $((20 * (SCALE - 1)))); do
		grep -q 'SIGHUP' "$err" && break
		sleep 0.1
	done
	alive "$dpid" || { fail "6: the daemon died on SIGHUP: $(cat "$err")"; return; }
	grep -q 'SIGHUP' "$err" || fail "6: SIGHUP left no trace in the log"
	kill -USR1 "$dpid"
	sleep 0.5
	for _ in $(seq $((20 * SCALE))); do
		grep -q 'summary after' "$err" && break
		sleep 0.1
	done
	alive "$dpid" || { fail "6: the daemon died on SIGUSR1"; return; }
	[ "$(grep -c 'summary after' "$err")" -eq 1 ] ||
		fail "6: SIGUSR1 did not log the statistics: $(tail -3 "$err")"
	grep -qE '^rngfeed:   hwrng: [0-9]+ raw bytes' "$err" ||
		fail "6: SIGUSR1 statistics have no hwrng line"
	bg_wait=$bg
	stop_expect_0 TERM "$dpid" 2 "6"
	for name in "${!before[@]}"; do
		expect_metric "$m" "$name" -ge "${before[$name]}" "6 (after SIGHUP)"
	done
	# It kept feeding after SIGHUP (--interval 1, two seconds).
	expect_metric "$m" rngfeed_fed_bytes_total -gt "${before[rngfeed_fed_bytes_total]}" \
		"6 (fed after SIGHUP)"
	expect_metric "$m" 'rngfeed_source_enabled{source="hwrng"}' -eq 1 "6 (after SIGHUP)"
	ok "6: SIGHUP kept the counters (fed ${before[rngfeed_fed_bytes_total]} -> $(metric "$m" rngfeed_fed_bytes_total)), SIGUSR1 logged"
}

part1
part2
part3
part4 ones 'FIPS monobit'
part4 aa 'FIPS poker'
part4 bias25 'FIPS monobit'
part5
part6

if [ "$failures" -gt 0 ]; then
	say "$failures failure(s)"
	exit 1
fi
if [ "${#skipped_parts[@]}" -gt 0 ]; then
	say "SKIP: everything else passed, but: ${skipped_parts[*]}"
	exit 77
fi
exit 0
