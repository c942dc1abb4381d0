#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Credit = min(ceiling, on-line estimate, full SP 800-90B assessment)
# (issue 25 items 6 and 7), measured from outside the process as
# test_estimate_credit.sh does: streams of known min-entropy
# (tests/helper_streams, fixed seed) go through the file source at the
# highest claim (min-entropy=8, credit=1024), the daemon runs --bench-fill
# under bench/shim.so, which counts what the kernel was credited.
#
# Each stream is written into a FIFO: its first 65,000 bytes (26 blocks,
# what the first full assessment needs), then, once the metrics show a
# full assessment in force (waited for, with a generous bound), the rest;
# so the rows see both the time before the first assessment (the on-line
# estimate's quarter) and after it.
# Asserted (fails on the code before issue 25, which credited these at
# 1.56x and 1.14x their truth):
#   - follow (with probability 0.3 the next byte is a fixed function of
#     the previous one: true 1.72 bits a byte; the on-line estimators say
#     5.6): the kernel's credit (shim) and the source's own counter are at
#     most blocks passed x 2,500 x H_true;
#   - every stream: a full assessment arrived, and the credit in force at
#     the end is at most what it allows;
#   - parity (7 uniform bits and their parity bit: true 7), 20 blocks from
#     a regular file, all read before any window is full: the source's
#     counter at most its truth (item 7: it was 8/7 of it, the claim).
# With FULL_ASSESS_ALL=1 also, shown and not asserted (what no cap over
# 1,000,000 samples can promise, see the README): fib (b[i-1] + b[i-2]
# with probability 0.5), sums (b[i-1] + b[i-3] + b[i-7]), period16 (a
# 16-byte pattern's byte), prng (a seeded generator: true min-entropy 0
# given its seed).  One stream at a time: each daemon's --bench-fill keeps
# a core busy, and the assessment runs at nice 5.
# Run from the top of the tree as root:
#   RNGFEED=./rngfeed bash tests/test_full_assess_credit.sh
# Exit 0 pass, 1 fail, 77 skip (with a printed reason).
set -u
. tests/lib_measure.sh

RNGFEED=${RNGFEED:-./rngfeed}
STREAMS=${STREAMS:-tests/helper_streams}
SCALE=${TEST_TIME_SCALE:-1}
BLOCK=2500
BLOCKS=200
FIRST=65000
# How long a full assessment of 65,000 samples may take at nice 5 on a
# loaded machine (0.1-0.3 s of CPU), and the rest of the run.
WAIT_S=$(awk -v s="$SCALE" 'BEGIN { printf "%d", 300 * s }')

[ "$(id -u)" -eq 0 ] || skip "needs root (--bench-fill feeds the kernel)"
measure_need_shim "$RNGFEED"
need_built "$RNGFEED" "$STREAMS"
measure_temp test_full_assess_credit
pids=()
# wait_metric FILE NAME AWK-TEST: until the value passes the test (while
# the daemon, $daemon, runs).
wait_metric() {
	local end=$((SECONDS + WAIT_S)) v
	while [ $SECONDS -lt $end ] && kill -0 "$daemon" 2>/dev/null; do
		v=$(metric "$1" "$2" file)
		[ -n "$v" ] && awk -v v="$v" "BEGIN { exit !($3) }" && return 0
		sleep 0.2
	done
	return 1
}

# feed KIND: the stream into its FIFO, pausing after $FIRST bytes until a
# full assessment is in force.
feed() {
	local k=$1
	# Read-write: the open does not wait for the daemon's; nor does a
	# write once it is gone (the bounds below).
	exec 3<>"$tmp/$k.fifo"
	kill -0 "$daemon" 2>/dev/null && timeout "$WAIT_S" head -c $FIRST "$tmp/$k.raw" >&3
	wait_metric "$tmp/$k.prom" rngfeed_source_full_assessment_samples "v >= $FIRST" ||
		echo timeout >"$tmp/$k.nofull"
	kill -0 "$daemon" 2>/dev/null && timeout "$WAIT_S" tail -c +$((FIRST + 1)) "$tmp/$k.raw" >&3
	exec 3>&-
}

label() {
	case $1 in
	follow) echo "w.p. 0.3 a fixed function of the previous byte" ;;
	parity) echo "7 bits and their parity, 20 blocks (windows filling)" ;;
	fib) echo "w.p. 0.5 b[i-1] + b[i-2]" ;;
	sums) echo "w.p. 0.5 b[i-1] + b[i-3] + b[i-7]" ;;
	period16) echo "w.p. 0.5 a 16-byte pattern's byte" ;;
	prng) echo "a seeded PRNG (xorshift64*)" ;;
	esac
}
asserted() { [ "$1" = follow ] || [ "$1" = parity ]; }

row() { # KIND RC BLOCKS
	local k=$1 rc=$2 blocks=$3 h problems passed eff quick full fulln force ledger shim bound allowed ratio res
	h=$("$STREAMS" -h "$k")
	problems=$(cat "$tmp/$k.problems" 2>/dev/null)
	problem() { problems+="${problems:+; }$*"; }
	[ $rc -eq 0 ] || problem "exit $rc: $(tail -n 3 "$tmp/$k.err")"
	[ -e "$tmp/$k.nofull" ] && problem "no full assessment within $WAIT_S s"
	[ "$k" = parity ] || awk -v f="$(metric "$tmp/$k.prom" rngfeed_source_full_assessment file)" \
		'BEGIN { exit !(f != "" && f >= 0) }' || problem "no full assessment in the metrics"
	passed=$(metric "$tmp/$k.prom" rngfeed_source_blocks_passed_total file)
	eff=$(metric "$tmp/$k.prom" rngfeed_source_effective_credit file)
	quick=$(metric "$tmp/$k.prom" rngfeed_source_min_entropy_estimate file)
	full=$(metric "$tmp/$k.prom" rngfeed_source_full_assessment file)
	fulln=$(metric "$tmp/$k.prom" rngfeed_source_full_assessment_samples file)
	force=$(metric "$tmp/$k.prom" rngfeed_source_estimate_in_force file)
	ledger=$(metric "$tmp/$k.prom" rngfeed_source_credit_bits_total file)
	shim=$(sed -n 's/.* credited_bits=\([0-9]*\).*/\1/p' "$tmp/$k.shim" 2>/dev/null | tail -n 1)
	[ -n "$passed" ] && [ -n "$eff" ] && [ -n "$ledger" ] || problem "no metrics"
	[ -n "$shim" ] || problem "no shim record"
	passed=${passed:-0} eff=${eff:-9999} shim=${shim:-999999999} ledger=${ledger:-999999999}
	full=${full:--1} quick=${quick:--1}
	[ "$(awk -v f="$full" 'BEGIN { print (f < 0) }')" = 1 ] && full=-1
	bound=$(awk -v p="$passed" -v h="$h" -v b=$BLOCK 'BEGIN { printf "%d", p * b * h }')
	# The credit in force: at most what the full assessment allows
	# (floor(1024 H / 8), 15/16 of it below a full window).
	allowed=$(awk -v f="$full" 'BEGIN { printf "%d", f < 0 ? -1 : 1024 * f / 8 }')
	[ "$full" = -1 ] || [ "$eff" -le "$allowed" ] ||
		problem "credit $eff/1024 above the full assessment's $allowed"
	if asserted "$k"; then
		[ "$shim" -le "$bound" ] || problem "kernel credited $shim > $bound (true)"
		[ "$ledger" -le "$bound" ] || problem "source counter $ledger > $bound (true)"
	fi
	ratio=$(awk -v l="$ledger" -v b="$bound" 'BEGIN { if (b > 0) printf "%.2fx", l / b; else print "-" }')
	if [ -z "$problems" ]; then res=PASS; else res="FAIL: $problems"; failures=$((failures + 1)); fi
	say "| Assessment: $(label "$k"), true H $(printf '%.2f' "$h") | on-line $(printf '%.2f' "$quick"), full $(printf '%.2f' "$full") over ${fulln:-0}; in force: $force, credit $eff/1024 | $ledger ($ratio of true) | $shim$(asserted "$k" && echo " <= $bound") | $passed of $blocks blocks passed | exit $rc | $res |"
}

# The window-fill row: a regular file of 20 blocks, read at once.
k=parity
"$STREAMS" $k $((20 * BLOCK)) >"$tmp/$k.raw" || { say "FAIL: helper_streams $k"; exit 1; }
LD_PRELOAD=$SHIM RNGFEED_SHIM_OUT="$tmp/$k.shim" "$RNGFEED" -f -v -c /dev/null -n file \
	-O "file:device=$tmp/$k.raw" -O file:min-entropy=8 -O file:credit=1024 \
	--metrics "$tmp/$k.prom" --bench-fill 2 >"$tmp/$k.out" 2>"$tmp/$k.err" </dev/null
fill_rc=$?

KINDS=(follow)
[ -n "${FULL_ASSESS_ALL:-}" ] && KINDS+=(fib sums period16 prng)
failures=0
for k in "${KINDS[@]}"; do
	"$STREAMS" "$k" $((BLOCKS * BLOCK)) >"$tmp/$k.raw" || { say "FAIL: helper_streams $k"; exit 1; }
	mkfifo "$tmp/$k.fifo" || exit 1
	# --assess-budget 100: each later assessment as soon as a quarter of
	# the window is new (the default 2 % only spaces them out).
	LD_PRELOAD=$SHIM RNGFEED_SHIM_OUT="$tmp/$k.shim" "$RNGFEED" -f -v -c /dev/null -n file \
		-O "file:device=$tmp/$k.fifo" -O file:min-entropy=8 -O file:credit=1024 \
		--assess-budget 100 --metrics "$tmp/$k.prom" --bench-fill $((WAIT_S * 3)) \
		>"$tmp/$k.out" 2>"$tmp/$k.err" </dev/null &
	daemon=$!
	pids=("$daemon")
	start=$SECONDS
	feed "$k"
	# Every byte read (the FIFO's end: the reader waits for a writer
	# again), then stop it.
	wait_metric "$tmp/$k.prom" rngfeed_source_raw_bytes_total "v >= $((BLOCKS * BLOCK))" ||
		echo "not all read" >"$tmp/$k.problems"
	kill -TERM "$daemon" 2>/dev/null
	wait "$daemon"
	rc=$?
	say "$k: done in $((SECONDS - start)) s"
	row "$k" $rc $BLOCKS
done
row parity $fill_rc 20
[ $failures -eq 0 ] || exit 1
exit 0
